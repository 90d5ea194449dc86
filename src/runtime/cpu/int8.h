/* INT8 engines of the CPU backend (reference), and the calibration table
 * they are built from (private).
 *
 * The table is the text an INT8 Grapnel>EngineOp carries in its
 * `calibration_data` attr:
 *
 *   grapnel-int8-calibration v1
 *   # any comment line
 *   GrapnelInputPH_0:0 2.75
 *   conv1/Conv2D:0 11.0312
 *   ...
 *
 * one line per float tensor of the engine's native segment ("node:output" in
 * the segment function's names; the engine inputs are GrapnelInputPH_<k>:0),
 * with amax, the symmetric range [-amax, amax] (scale amax / 127). The
 * calibration run (gn_calibrate) records max |x| over the caller's batches;
 * without calibration the ranges come from the graph's FakeQuant /
 * QuantizeAndDequantize nodes, max(|min|, |max|).
 *
 * An engine is built from the segment and the table: Conv2D,
 * DepthwiseConv2dNative, MatMul, _FusedConv2D and _FusedMatMul whose weights
 * are constant run in int8: the activation input is quantized per tensor to
 * [-127, 127] with its range, the weights per output channel with their own
 * max |w|, products are summed in int32 and the sum is dequantized, then the
 * fused bias and activation are applied in float. Every other node runs its
 * float kernel (between a dequantize and a quantize, in TensorRT's terms);
 * quantization nodes pass their input through (their ranges are in the
 * table). */
#ifndef GN_RUNTIME_CPU_INT8_H
#define GN_RUNTIME_CPU_INT8_H

#include "graph/ir.h"
#include "ops/kernel.h"

#define GN__CALIB_MAGIC "grapnel-int8-calibration v1"

typedef struct gn__calib_table {
    uint32_t n;
    char **name;      /* "node:k" */
    float *amax;
} gn__calib_table;

/* Parses the text (len bytes); errors name the line. */
gn_status gn__calib_parse(const char *text, size_t len, gn__calib_table *out, gn__err *err);
void gn__calib_free(gn__calib_table *t);
/* amax of tensor "node:k", or a negative value when the table has none. */
float gn__calib_find(const gn__calib_table *t, const char *node, uint32_t index);

/* Node id of a segment body runs in int8 (given a range for its input 0):
 * one of the ops above, float32, NHWC for convolutions, unit dilations,
 * weights computable at build time, a fused epilogue the engine applies. */
bool gn__int8_node_quantizable(const gn_graph *body, gn_id id);

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
