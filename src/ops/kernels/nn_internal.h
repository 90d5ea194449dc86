/* Shared helpers of the neural-network kernels (nn*.c; private to them).
 *
 * Compute types: float32 and float16 tensors compute in float (float16 is
 * converted on the way in and rounded on the way out), float64 in double.
 * Every helper here is deterministic (fixed loop order) except the BLAS
 * branch of the gemm wrappers, which the reference flag turns off. */
#ifndef GN_OPS_KERNELS_NN_INTERNAL_H
#define GN_OPS_KERNELS_NN_INTERNAL_H

#include <math.h>

#include "ops/blas.h"
#include "ops/op_fns.h"

#define GN__DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define GN__DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define GN__DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE

/* ---- attrs ------------------------------------------------------------------ */
/* The list value of attr key, NULL when absent or not a list. */
const Tensorflow__AttrValue__ListValue *gn__nn_attr_list(const gn__kctx *c, const char *key);
bool gn__nn_attr_bool(const gn__kctx *c, const char *key, bool dflt);
float gn__nn_attr_float(const gn__kctx *c, const char *key, float dflt);
int64_t gn__nn_attr_int(const gn__kctx *c, const char *key, int64_t dflt);
/* String attr copied NUL-terminated into buf (truncated); dflt when absent. */
void gn__nn_attr_str(const gn__kctx *c, const char *key, const char *dflt, char *buf, size_t n);

enum { GN__NN_NHWC = 0, GN__NN_NCHW = 1 };
/* data_format: "NHWC"/"NCHW" (and with allow_5d "NDHWC"/"NCDHW", reported as
 * channels-last / channels-first); anything else is GN_ERR_UNSUPPORTED. */
gn_status gn__nn_attr_format(gn__kctx *c, bool allow_5d, int *fmt);

enum { GN__NN_PAD_VALID = 0, GN__NN_PAD_SAME = 1, GN__NN_PAD_EXPLICIT = 2 };
gn_status gn__nn_attr_padding(gn__kctx *c, bool allow_explicit, int *pad);

/* TensorFlow's GetWindowedOutputSizeVerbose: output size and padding before /
 * after for one spatial dim (pad_before/pad_after are inputs for EXPLICIT). */
gn_status gn__nn_window(gn__kctx *c, int64_t in, int64_t k, int64_t dil, int64_t stride, int pad,
                        int64_t *pad_before, int64_t *pad_after, int64_t *out);

/* "[2,3,4]" as TensorFlow's TensorShape::DebugString writes it. */
const char *gn__nn_shape_str(const gn__tensor *t, char *buf, size_t n);
gn_status gn__nn_bad_dtype(gn__kctx *c, int32_t dtype);

/* ---- conversions, copies ---------------------------------------------------- */
void gn__nn_f16_to_f32(const gn__f16 *s, float *d, int64_t n);
void gn__nn_f32_to_f16(const float *s, gn__f16 *d, int64_t n);
/* Converts a float16/float32/float64 buffer to float (f32: copy). */
void gn__nn_to_f32(int32_t dtype, const void *s, float *d, int64_t n);
void gn__nn_to_f64(int32_t dtype, const void *s, double *d, int64_t n);
void gn__nn_from_f32(const float *s, int32_t dtype, void *d, int64_t n);
void gn__nn_from_f64(const double *s, int32_t dtype, void *d, int64_t n);

/* dst (contiguous, row-major over dims) = src read with element strides
 * (any, 0 for broadcast); esz 1, 2, 4 or 8. */
void gn__nn_strided_copy(void *dst, const void *src, int rank, const int64_t *dims, const int64_t *strides,
                         size_t esz);
/* [a, b, c, d] -> [a, d, b, c] (NHWC -> NCHW) and [a, b, c, d] -> [a, c, d, b]. */
void gn__nn_nhwc_to_nchw(const void *src, void *dst, size_t esz, int64_t n, int64_t h, int64_t w, int64_t c);
void gn__nn_nchw_to_nhwc(const void *src, void *dst, size_t esz, int64_t n, int64_t c, int64_t h, int64_t w);

/* ---- gemm: C[M,N] = op(A)[M,K] * op(B)[K,N], row-major ------------------------
 * blas NULL: fixed summation order (k ascending, no BLAS); else that library. */
void gn__nn_sgemm(const gn__blas *blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float *cc, int64_t ldc);
void gn__nn_dgemm(const gn__blas *blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                  const double *b, int64_t ldb, double *cc, int64_t ldc);

/* ---- activations and fused epilogues ------------------------------------------ */
typedef enum gn__nn_act {
    GN__NN_ACT_NONE = 0,
    GN__NN_ACT_RELU,
    GN__NN_ACT_RELU6,
    GN__NN_ACT_ELU,
    GN__NN_ACT_LEAKY_RELU,
    GN__NN_ACT_TANH,
    GN__NN_ACT_SIGMOID,
    GN__NN_ACT_GELU_APPROX,
    GN__NN_ACT_GELU_EXACT,
} gn__nn_act;

static inline float gn__nn_act_f(int act, float x, float alpha)
{
    switch (act) {
    case GN__NN_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case GN__NN_ACT_RELU6: return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
    case GN__NN_ACT_ELU: return x < 0.0f ? expf(x) - 1.0f : x;
    case GN__NN_ACT_LEAKY_RELU: return x > 0.0f ? x : x * alpha;
    case GN__NN_ACT_TANH: return tanhf(x);
    case GN__NN_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case GN__NN_ACT_GELU_APPROX: {
        float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(inner));
    }
    case GN__NN_ACT_GELU_EXACT: return 0.5f * x * erfcf(-x * 0.7071067811865476f);
    default: return x;
    }
}

static inline double gn__nn_act_d(int act, double x, double alpha)
{
    switch (act) {
    case GN__NN_ACT_RELU: return x < 0.0 ? 0.0 : x;
    case GN__NN_ACT_RELU6: return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x);
    case GN__NN_ACT_ELU: return x < 0.0 ? exp(x) - 1.0 : x;
    case GN__NN_ACT_LEAKY_RELU: return x > 0.0 ? x : x * alpha;
    case GN__NN_ACT_TANH: return tanh(x);
    case GN__NN_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case GN__NN_ACT_GELU_APPROX: {
        double inner = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(inner));
    }
    case GN__NN_ACT_GELU_EXACT: return 0.5 * x * erfc(-x * 0.7071067811865476);
    default: return x;
    }
}

/* What follows a contraction: per-channel bias or batch norm, an optional
 * residual addend (same shape and layout as the output), an activation. The
 * tensor it runs over is viewed as [outer, C, inner] (NHWC: inner = 1; NCHW:
 * outer = N, inner = H*W). Every step rounds to the tensor's dtype, so the
 * fused result has the bits of the unfused sequence of kernels. */
enum { GN__NN_EPI_NONE = 0, GN__NN_EPI_BIAS = 1, GN__NN_EPI_BN = 2 };
typedef struct gn__nn_epi {
    int kind;                /* GN__NN_EPI_* */
    bool f64;                /* compute type double (else float) */
    bool r16;                /* round to float16 after each step */
    const void *bias;        /* [C] compute type */
    const void *bn_mean;     /* [C] compute type */
    const void *bn_scale;    /* [C] scale / sqrt(var + eps), compute type */
    const void *bn_offset;   /* [C] compute type */
    const void *addend;      /* same shape as the output, dtype addend_dtype */
    int32_t addend_dtype;
    int act;                 /* gn__nn_act */
    float alpha;             /* LeakyRelu */
    void *owned;             /* scratch holding the parameter arrays (free) */
} gn__nn_epi;

/* Applies e on y (compute type) for outer rows [o0, o1). */
void gn__nn_epi_apply(const gn__nn_epi *e, void *y, int64_t o0, int64_t o1, int64_t ch, int64_t inner);
void gn__nn_epi_free(gn__nn_epi *e);

/* The batch-norm factor scale / sqrt(variance + epsilon) as FusedBatchNorm
 * computes it (compute type). */
static inline float gn__nn_bn_factor_f(float scale, float var, float eps)
{
    return scale * (1.0f / sqrtf(var + eps));
}
static inline double gn__nn_bn_factor_d(double scale, double var, double eps)
{
    return scale * (1.0 / sqrt(var + eps));
}

/* Parses fused_ops of a _Fused* node and builds the epilogue from its args
 * (args[0..n_args)), for an output of `ch` channels whose shape is out_shape.
 * op_name names the contraction in messages. */
gn_status gn__nn_epi_from_fused(gn__kctx *c, const gn__tensor *args, uint32_t n_args, int64_t ch,
                                const gn__tensor *out_shape, int32_t dtype, gn__nn_epi *e);

#endif
