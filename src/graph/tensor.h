/* TensorProto / TensorShapeProto checks and helpers (private). */
#ifndef GN_GRAPH_TENSOR_H
#define GN_GRAPH_TENSOR_H

#include "common/common.h"
#include "opdef/dtype.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"

/* gn__dtype_size, gn__dtype_valid: opdef/dtype.h (the list src/opdef/dtypes.def) */

/* Checks a shape: every dim >= 0 (or -1 when allow_unknown), and the element
 * count fits in int64. *numel gets the count, or -1 when some dim or the rank
 * is unknown. Errors: "dim 2 is -5", "element count overflows int64". */
gn_status gn__shape_check(const Tensorflow__TensorShapeProto *s, bool allow_unknown, int64_t *numel, gn__err *err);
/* The number of values in the typed field that holds dtype dt's elements
 * (float_val, int_val, ..., float8_val: one byte each; complex: pairs), and
 * that field's name in *field; 0 and "?" for a dtype without one. The one
 * switch the checks (here) and the decoder (ops/tensor_proto.c) share. */
size_t gn__tensor_typed_count(const Tensorflow__TensorProto *p, int32_t dt, const char **field);
/* Checks a tensor: dtype, shape, tensor_content length against dtype and
 * shape, typed values no more than the element count. */
gn_status gn__tensor_check(const Tensorflow__TensorProto *t, gn__err *err);

#endif
