/* The CUDA backend's INT8 kernels, one output element at a time (private).
 *
 * kernels.cu launches these per element; they are plain C as well, so that
 * tests/int8_kernels_test.c runs the very same index arithmetic on the host
 * against the CPU reference (runtime/cpu/int8.c) where no GPU is present.
 * Rounding and order of operations are the reference's: x * inv rounded
 * half to even and clamped to [-127, 127]; act((float)sum * sx * sw + bias)
 * multiplied and added in that order, each rounded (no FMA contraction). */
#ifndef GN_RUNTIME_CUDA_INT8_MATH_H
#define GN_RUNTIME_CUDA_INT8_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GN__HD __host__ __device__ __forceinline__
#else
#define GN__HD static inline
#endif

/* An NHWC convolution's geometry (padding before: pad_top, pad_left). */
typedef struct gn__cu_conv8 {
    int64_t n, h, w, c, oh, ow, kh, kw, sh, sw, pad_top, pad_left;
} gn__cu_conv8;

/* activations of the int8 epilogue (the GN__CU_* values of cuda.h) */
enum { GN__I8_ID = 0, GN__I8_RELU = 1, GN__I8_RELU6 = 2, GN__I8_ELU = 3, GN__I8_LEAKY = 4 };

GN__HD float gn__i8_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

GN__HD float gn__i8_add(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

/* x quantized with inv = 1 / scale (NaN gives 0). */
GN__HD int gn__i8_quant(float x, float inv)
{
    float q = rintf(gn__i8_mul(x, inv));
    return q > 127.f ? 127 : q < -127.f ? -127 : q == q ? (int)q : 0;
}

GN__HD float gn__i8_dequant(int32_t sum, float sx, float sw, const float *bias, int64_t c, int act, float alpha)
{
    float v = gn__i8_mul(gn__i8_mul((float)sum, sx), sw);
    if (bias) v = gn__i8_add(v, bias[c]);
    switch (act) {
    case GN__I8_RELU: return v < 0.f ? 0.f : v;
    case GN__I8_RELU6: return v < 0.f ? 0.f : v > 6.f ? 6.f : v;
    case GN__I8_ELU: return v < 0.f ? expm1f(v) : v;
    case GN__I8_LEAKY: return v > 0.f ? v : v * alpha;
    default: return v;
    }
}

/* Element i of a GEMM's quantized left operand, rows of kp: op(x)[r][k] for
 * k < kk, else 0; x is [m, kk] row-major, or [kk, m] when ta. */
GN__HD int8_t gn__i8_row_at(int64_t i, int64_t m, int64_t kk, int64_t kp, int ta, const float *x, float inv)
{
    int64_t r = i / kp, k = i % kp;
    return (int8_t)(k < kk ? gn__i8_quant(x[ta ? k * m + r : r * kk + k], inv) : 0);
}

/* Element i of the quantized im2col rows of an NHWC convolution's input:
 * row (n, oh, ow), column (kh, kw, c) of kp; 0 outside the input and past
 * kh * kw * c. */
GN__HD int8_t gn__i8_im2col_at(int64_t i, const gn__cu_conv8 *g, int64_t kp, const float *x, float inv)
{
    int64_t r = i / kp, col = i % kp;
    if (col >= g->kh * g->kw * g->c) return 0;
    int64_t c = col % g->c, kw = (col / g->c) % g->kw, kh = col / (g->c * g->kw);
    int64_t ow = r % g->ow, oh = (r / g->ow) % g->oh, b = r / (g->ow * g->oh);
    int64_t ih = oh * g->sh - g->pad_top + kh, iw = ow * g->sw - g->pad_left + kw;
    if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) return 0;
    return (int8_t)gn__i8_quant(x[((b * g->h + ih) * g->w + iw) * g->c + c], inv);
}

/* The int32 sum of the depthwise convolution's output element i (NHWC,
 * channel multiplier mult; wq [kh][kw][c * mult]), x quantized on the fly. */
GN__HD int32_t gn__i8_dw_at(int64_t i, const gn__cu_conv8 *g, int64_t mult, const float *x, float inv,
                            const int8_t *wq)
{
    int64_t cm = g->c * mult;
    int64_t j = i % cm, ow = (i / cm) % g->ow, oh = (i / (cm * g->ow)) % g->oh, b = i / (cm * g->ow * g->oh);
    int64_t c = j / mult;
    int32_t sum = 0;
    for (int64_t kh = 0; kh < g->kh; kh++) {
        int64_t ih = oh * g->sh - g->pad_top + kh;
        if (ih < 0 || ih >= g->h) continue;
        for (int64_t kw = 0; kw < g->kw; kw++) {
            int64_t iw = ow * g->sw - g->pad_left + kw;
            if (iw < 0 || iw >= g->w) continue;
            sum += gn__i8_quant(x[((b * g->h + ih) * g->w + iw) * g->c + c], inv) * (int32_t)wq[(kh * g->kw + kw) * cm + j];
        }
    }
    return sum;
}

#endif
