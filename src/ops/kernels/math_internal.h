/* Shared pieces of the math kernels (private to src/ops/kernels/math*.c).
 *
 * The math kernels are split by family: math_binary.c (elementwise binary ops
 * with numpy broadcasting), math_unary.c (unary math, activations, Cast,
 * ClipByValue, Select, AddN), math_reduce.c (reductions, ArgMax/ArgMin,
 * Softmax, Cumsum) and math_random.c (random ops). math.c holds the helpers
 * declared here; the kernels are declared from the op list (ops/op_fns.h). */
#ifndef GN_OPS_KERNELS_MATH_INTERNAL_H
#define GN_OPS_KERNELS_MATH_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ops/op_fns.h"

/* Short names for the TensorFlow DataType numbers. */
#define GN_DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define GN_DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define GN_DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define GN_DT_BF16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define GN_DT_I8 TENSORFLOW__DATA_TYPE__DT_INT8
#define GN_DT_I16 TENSORFLOW__DATA_TYPE__DT_INT16
#define GN_DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define GN_DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64
#define GN_DT_U8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define GN_DT_U16 TENSORFLOW__DATA_TYPE__DT_UINT16
#define GN_DT_U32 TENSORFLOW__DATA_TYPE__DT_UINT32
#define GN_DT_U64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define GN_DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define GN_DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* ---- failures ----------------------------------------------------------------- */
/* "dtype int32 is not supported" (GN_ERR_UNSUPPORTED). */
gn_status gn__km_bad_dtype(gn__kctx *c, int32_t dtype);
/* Checks that the kernel got at least n data inputs, each set. */
gn_status gn__km_need_inputs(gn__kctx *c, uint32_t n);
/* "[2,3]" into buf. */
void gn__km_shape_str(const int64_t *dims, int32_t rank, char *buf, size_t len);

/* ---- attrs with TensorFlow's defaults ------------------------------------------- */
bool gn__km_attr_bool(const gn__kctx *c, const char *key, bool dflt);
float gn__km_attr_float(const gn__kctx *c, const char *key, float dflt);
int64_t gn__km_attr_int(const gn__kctx *c, const char *key, int64_t dflt);
int32_t gn__km_attr_type(const gn__kctx *c, const char *key, int32_t dflt);

/* ---- small tensor readers ------------------------------------------------------- */
/* Element i of an int32/int64 tensor (the caller checked the dtype). */
int64_t gn__km_int_at(const gn__tensor *t, int64_t i);
/* Reads a 1-D (or scalar) int32/int64 tensor of at most GN__MAX_DIMS values
 * describing a shape; checks non-negative dims. what names the input. */
gn_status gn__km_read_shape(gn__kctx *c, const gn__tensor *t, const char *what, int32_t *rank, int64_t *dims);
/* Allocates output 0 as a copy of input i (same dtype and shape), for ops that
 * are the identity on some dtype. */
gn_status gn__km_copy_input(gn__kctx *c, uint32_t i);

/* ---- broadcasting --------------------------------------------------------------- */
/* numpy broadcasting of up to 3 operands. The output shape is out_rank /
 * out_dims; the iteration space is collapsed: size-1 output dims dropped and
 * adjacent dims merged where every operand broadcasts the same way, so the
 * common [N,C]+[C] case becomes 2 dims and same-shape operands 1. stride[k][d]
 * is operand k's element stride along collapsed dim d (0 where broadcast). */
typedef struct gn__km_bcast {
    int32_t out_rank;
    int64_t out_dims[GN__MAX_DIMS];
    int64_t numel;
    int32_t rank;                          /* collapsed; >= 1 */
    int64_t dims[GN__MAX_DIMS];
    int64_t stride[3][GN__MAX_DIMS];
} gn__km_bcast;

/* Fails with "shapes [2,3] and [4] cannot be broadcast" (GN_ERR_GRAPH) when
 * incompatible; with report false it returns GN_ERR_GRAPH without a message. */
gn_status gn__km_broadcast(gn__kctx *c, uint32_t nops, const gn__tensor *const *ops, gn__km_bcast *b, bool report);

/* Walks the outer (all but the last collapsed) dims of b, calling
 * row(user, offsets[k], n) with each operand's element offset of the row and
 * the inner length n = dims[rank-1]. */
typedef void (*gn__km_row_fn)(void *user, const int64_t *off, int64_t n);
void gn__km_bcast_rows(const gn__km_bcast *b, uint32_t nops, gn__km_row_fn row, void *user);

/* ---- math helpers ---------------------------------------------------------------- */
/* Float math by type: calls the float or double libm function. */
#define GN_KM_F1(fn, v) _Generic((v), float: fn##f, default: fn)(v)
#define GN_KM_F2(fn, a, b) _Generic((a), float: fn##f, default: fn)((a), (b))

/* float -> int with the x86-64 conversion results TensorFlow gets from a plain
 * static_cast (NaN and out-of-range give the "integer indefinite" value). */
int64_t gn__km_f2i64(double v);
int32_t gn__km_f2i32(double v);
uint64_t gn__km_f2u64(double v);

/* Pairwise (blocked, fixed order) sums; the same bits on every machine. */
float gn__km_sum_f32(const float *x, int64_t n);
double gn__km_sum_f64(const double *x, int64_t n);

/* ---- float16 <-> float32 ------------------------------------------------------------ */
/* Exact conversions on the bits (round to nearest even; NaN stays NaN, quiet),
 * branch-free so loops over them vectorize: the compiler's own _Float16
 * conversions are library calls on x86-64 without F16C. */
static inline uint32_t gn__km_usel(uint32_t c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    return (a & m) | (b & ~m);
}

static inline uint32_t gn__km_fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float gn__km_bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float gn__km_h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t norm = (em << 13) + ((127u - 15u) << 23);
    norm = gn__km_usel(em >= 0x7c00u, norm + ((128u - 16u) << 23), norm);   /* inf / NaN */
    float sub = (float)(int32_t)em * 5.9604644775390625e-8f;                /* em * 2^-24 */
    uint32_t r = gn__km_usel(em < 0x400u, gn__km_fbits(sub), norm);
    return gn__km_bitsf(r | sign);
}

static inline uint16_t gn__km_f2h(float f)
{
    const uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t x = gn__km_fbits(f), sign = x & 0x80000000u;
    x ^= sign;
    uint32_t infnan = gn__km_usel(x > (255u << 23), 0x7e00u, 0x7c00u);
    /* subnormal results: the float add aligns and rounds the mantissa */
    uint32_t sub = gn__km_fbits(gn__km_bitsf(x) + gn__km_bitsf(magic)) - magic;
    /* normal results: rebias, round to nearest even on the dropped 13 bits */
    uint32_t norm = (x + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u)) >> 13;
    uint32_t o = gn__km_usel(x >= ((127u + 16u) << 23), infnan, gn__km_usel(x < (113u << 23), sub, norm));
    return (uint16_t)(o | (sign >> 16));
}

/* bfloat16: the top 16 bits of a float32; to it rounded to nearest even, a NaN
 * kept a quiet NaN with its sign and top payload bits (Eigen's conversion). */
static inline float gn__km_bf2f(uint16_t h) { return gn__km_bitsf((uint32_t)h << 16); }
static inline uint16_t gn__km_f2bf(float f)
{
    uint32_t u = gn__km_fbits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* ---- fast float32 transcendentals ------------------------------------------------ */
/* Branch-free, vectorizable float versions used by the non-reference path for
 * float32 / float16 (the reference path evaluates libm in double). Max errors
 * measured against double libm over [-110, 100]: exp 1.2 ulp (flushes below
 * about 1e-45 like expf), tanh 1.9 ulp, erf 2.8 ulp, erfc 4e-7 relative,
 * 1 / (1 + exp(-x)) 2.3 ulp. exp: Cody-Waite reduction by ln2, degree-7
 * Taylor polynomial, 2^n applied in two halves so gradual underflow and
 * overflow to inf come out of the multiply; tanh: odd Taylor polynomial below
 * 0.4, 1 - 2 / (exp(2|x|) + 1) above; erf: Taylor series below 0.5, 1 - erfc
 * above, erfc from Numerical Recipes' erfcc (relative error 1.2e-7) with
 * exp(-z*z) split exactly. */

/* c ? a : b on the bits: both sides are computed unconditionally, so the
 * compiler can vectorize (a float ?: lets it sink trapping arithmetic into a
 * branch, which -ftrapping-math then forbids if-converting). */
static inline float gn__km_fsel(int c, float a, float b)
{
    uint32_t ua, ub, m = (uint32_t)0 - (uint32_t)(c != 0);
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    uint32_t r = (ua & m) | (ub & ~m);
    float f;
    memcpy(&f, &r, 4);
    return f;
}

static inline double gn__km_dsel(int c, double a, double b)
{
    uint64_t ua, ub, m = (uint64_t)0 - (uint64_t)(c != 0);
    memcpy(&ua, &a, 8);
    memcpy(&ub, &b, 8);
    uint64_t r = (ua & m) | (ub & ~m);
    double f;
    memcpy(&f, &r, 8);
    return f;
}

/* 2^n for n in [-126, 127] */
static inline float gn__km_pow2i(int32_t n)
{
    uint32_t b = (uint32_t)(n + 127) << 23;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline float gn__km_fexp(float x)
{
    float xc = gn__km_fsel(x < -104.0f, -104.0f, x);   /* NaN stays NaN */
    xc = gn__km_fsel(xc > 89.0f, 89.0f, xc);
    float t = xc * 1.44269504088896341f;
    float n = (t + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440054690583e-4f;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    float ns = gn__km_fsel(n != n, 0.0f, n);
    int32_t ni = (int32_t)ns, n1 = ni / 2, n2 = ni - n1;
    return p * gn__km_pow2i(n1) * gn__km_pow2i(n2);
}

static inline float gn__km_ftanh(float x)
{
    float a = fabsf(x), z = x * x;
    float p = -929569.0f / 638512875.0f;
    p = p * z + 21844.0f / 6081075.0f;
    p = p * z + -1382.0f / 155925.0f;
    p = p * z + 62.0f / 2835.0f;
    p = p * z + -17.0f / 315.0f;
    p = p * z + 2.0f / 15.0f;
    p = p * z + -1.0f / 3.0f;
    float small = copysignf(x + x * z * p, x);
    float e = gn__km_fexp(2.0f * a);
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = copysignf(big, x);
    return gn__km_fsel((a < 0.4f) | (x != x), small, big);
}

/* erfc for z >= 0 */
static inline float gn__km_ferfc_pos(float z)
{
    z = gn__km_fsel(z > 11.0f, 11.0f, z);   /* erfc(11) is 0 in float; keeps inf out of the split */
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = p * t + -0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t + -1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t + -0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t + -1.26551223f;
    uint32_t b;
    memcpy(&b, &z, 4);
    b &= 0xfffff000u;
    float zh;
    memcpy(&zh, &b, 4);
    float zl = z - zh;
    return t * gn__km_fexp(-zh * zh) * gn__km_fexp(p - zl * (z + zh));
}

static inline float gn__km_ferf(float x)
{
    float a = fabsf(x), z = x * x;
    float p = -1.0f / 75600.0f;
    p = p * z + 1.0f / 9360.0f;
    p = p * z + -1.0f / 1320.0f;
    p = p * z + 1.0f / 216.0f;
    p = p * z + -1.0f / 42.0f;
    p = p * z + 1.0f / 10.0f;
    p = p * z + -1.0f / 3.0f;
    p = p * z + 1.0f;
    float small = 1.12837916709551257f * x * p;
    float big = copysignf(1.0f - gn__km_ferfc_pos(a), x);
    return gn__km_fsel((a < 0.5f) | (x != x), small, big);
}

static inline float gn__km_ferfc(float x)
{
    float c = gn__km_ferfc_pos(fabsf(x));
    return gn__km_fsel(x < 0, 2.0f - c, c);
}

/* Type-generic: the fast float version for float, libm for double. */
#define GN_KM_SEL(c, a, b) _Generic((a), float: gn__km_fsel, default: gn__km_dsel)((c), (a), (b))
#define GN_KM_EXP(v) _Generic((v), float: gn__km_fexp, default: exp)(v)
#define GN_KM_TANH(v) _Generic((v), float: gn__km_ftanh, default: tanh)(v)
#define GN_KM_ERF(v) _Generic((v), float: gn__km_ferf, default: erf)(v)
#define GN_KM_ERFC(v) _Generic((v), float: gn__km_ferfc, default: erfc)(v)

#endif
