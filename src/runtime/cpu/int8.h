/* INT8 engines of the CPU backend, the reference (private).
 *
 * An engine is built from an INT8 engine op's native segment and its
 * calibration table (runtime/quant.h: the table's format, which nodes run
 * in int8 and how their weights are quantized). Every other node runs its
 * float kernel (between a dequantize and a quantize, in TensorRT's terms);
 * quantization nodes pass their input through (their ranges are in the
 * table). */
#ifndef GN_RUNTIME_CPU_INT8_H
#define GN_RUNTIME_CPU_INT8_H

#include "graph/ir.h"
#include "ops/kernel.h"
#include "runtime/quant.h"

typedef struct gn__int8_engine gn__int8_engine;

/* Builds an engine from a native segment body (its _Arg / _Retval nodes are
 * the engine's inputs and outputs) and a table. A tensor the engine
 * quantizes without a range in the table is GN_ERR_GRAPH naming it. */
gn_status gn__int8_engine_build(const gn_graph *body, const char *table, size_t len, gn__int8_engine **out,
                                gn__err *err);
/* in: n_in borrowed tensors; out: n_out zeroed tensors, filled with owned references. */
gn_status gn__int8_engine_run(gn__int8_engine *e, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                              uint32_t n_out, gn__err *err);
/* Nodes run in int8 by the engine (tests, reports). */
uint32_t gn__int8_engine_int8_nodes(const gn__int8_engine *e);
void gn__int8_engine_free(gn__int8_engine *e);

#endif
