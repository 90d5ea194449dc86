/* INT8 quantization shared by the backends' INT8 engines (private): the
 * calibration table, which nodes an engine runs in int8, and how their
 * weights are quantized. The CPU backend's engine (runtime/cpu/int8.h) is
 * the reference; the CUDA backend's makes the same choices and quantizes
 * the weights with the same code, so the two agree but for the float
 * kernels around the int8 ones.
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
 * Conv2D, DepthwiseConv2dNative, MatMul, _FusedConv2D and _FusedMatMul
 * whose weights are constant run in int8: the activation input is quantized
 * per tensor to [-127, 127] with its range (round half to even), the
 * weights per output channel with their own max |w|, products are summed in
 * int32 and the sum is dequantized as (float)sum * sx * sw[channel], then
 * the fused bias and activation are applied in float. */
#ifndef GN_RUNTIME_QUANT_H
#define GN_RUNTIME_QUANT_H

#include <math.h>

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

enum { GN__Q8_CONV = 1, GN__Q8_DW, GN__Q8_MM };
enum { GN__Q8_ACT_NONE = 0, GN__Q8_ACT_RELU, GN__Q8_ACT_RELU6, GN__Q8_ACT_ELU, GN__Q8_ACT_LEAKY };
enum { GN__Q8_VALID = 0, GN__Q8_SAME, GN__Q8_EXPLICIT };

/* A node run in int8, as its attrs say. */
typedef struct gn__q8_node {
    int kind;                 /* GN__Q8_* */
    bool bias;                /* a fused BiasAdd (input 2) */
    int act;                  /* GN__Q8_ACT_* after it */
    float alpha;              /* LeakyRelu */
    bool ta, tb;              /* MatMul */
    int64_t stride[2];        /* convolutions: H, W */
    int pad;                  /* GN__Q8_VALID, _SAME, _EXPLICIT */
    int64_t ep[4];            /* EXPLICIT: top, bottom, left, right */
} gn__q8_node;

/* Is a QuantizeAndDequantize / FakeQuant node (an engine passes its input through)? */
bool gn__int8_is_qdq(const gn_graph *g, gn_id id);

/* Does node id of a segment body run in int8 (given a range for its input
 * 0)? One of the ops above, float32, NHWC for convolutions, unit
 * dilations, weights computable at build time, a fused epilogue the engine
 * applies. When it does and out is not NULL, *out gets its attrs. */
bool gn__int8_node_info(const gn_graph *body, gn_id id, gn__q8_node *out);
static inline bool gn__int8_node_quantizable(const gn_graph *body, gn_id id)
{
    return gn__int8_node_info(body, id, NULL);
}

/* The scale of range amax (1 for an empty range). */
float gn__q8_scale(float amax);

/* x quantized with 1 / scale: round half to even, clamped to [-127, 127]. */
static inline int8_t gn__q8(float x, float inv)
{
    float q = nearbyintf(x * inv);
    return (int8_t)(q > 127.0f ? 127 : q < -127.0f ? -127 : q);
}

/* Weights w (float32, constant) of node q quantized per output channel;
 * *k_out gets the values per channel (MatMul K, convolution KH*KW*C,
 * depthwise KH*KW) and *n_out the channels (N, OC, C*multiplier). With wq
 * NULL only those are set. Else wq gets
 *   MatMul       wq[n * pitch + k]               (pitch >= K; the rest is 0)
 *   convolution  wq[oc * pitch + (kh*KW + kw)*C + c]
 *   depthwise    wq[(kh*KW + kw) * C*M + j]       (pitch unused)
 * and sw[channel] the channel's scale. Errors name the node. */
gn_status gn__q8_weights(const gn_graph *g, gn_id id, const gn__q8_node *q, const gn__tensor *w, int64_t pitch,
                         int8_t *wq, float *sw, int64_t *k_out, int64_t *n_out, gn__err *err);

#endif
