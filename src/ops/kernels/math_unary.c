/* Unary math and activations, Cast, ClipByValue, Select/SelectV2, AddN and
 * _UnaryOpsComposition (TensorFlow's cwise_op_*.cc, relu_op_functor.h,
 * softplus_op.h, cast_op.h, cwise_op_clip.cc, cwise_op_select.cc,
 * aggregate_ops.cc, unary_ops_composition.cc).
 *
 * Like math_binary.c: one expression per op in x (compute type tc), typed
 * loops per dtype, float16 computed in float, transcendental ops ("R") with a
 * reference variant evaluated in double. */
#include "ops/kernels/math_internal.h"

#include <stdlib.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

typedef struct un_args {
    double alpha;   /* LeakyRelu alpha; Softplus threshold */
} un_args;

typedef void (*un_fn)(const void *x, void *o, int64_t n, const un_args *p);

typedef struct un_impl {
    int32_t dtype;
    un_fn fn;
    un_fn ref;   /* GN__K_EXACT_MATH variant; NULL: fn */
} un_impl;

#define UN_LOOP_X(NAME, TI, TC, UT, TO, LD, ST, EXPR)                         \
    static void NAME(const void *px, void *po, int64_t n, const un_args *p)   \
    {                                                                        \
        typedef TC tc;                                                       \
        typedef UT ut;                                                       \
        typedef TO to;                                                       \
        (void)sizeof(tc);                                                    \
        (void)sizeof(ut);                                                    \
        (void)sizeof(to);                                                    \
        const TI *restrict xs = px;                                          \
        TO *restrict o = po;                                                 \
        const tc alpha = (tc)p->alpha;                                       \
        (void)alpha;                                                         \
        for (int64_t i = 0; i < n; i++) {                                    \
            tc x = LD(xs[i]);                                                \
            o[i] = ST(EXPR);                                                 \
        }                                                                    \
    }
#define LD_ID(v) ((tc)(v))
#define ST_ID(v) ((to)(v))
#define LD_H(v) ((tc)gn__km_h2f(v))
#define ST_H(v) gn__km_f2h((float)(v))
#define UN_LOOP(NAME, TI, TC, UT, TO, EXPR) UN_LOOP_X(NAME, TI, TC, UT, TO, LD_ID, ST_ID, EXPR)

#define DEF_F(OP, E)                                          \
    UN_LOOP(OP##_f32, float, float, float, float, E)          \
    UN_LOOP(OP##_f64, double, double, double, double, E)      \
    UN_LOOP_X(OP##_f16, uint16_t, float, float, uint16_t, LD_H, ST_H, E)
#define DEF_FR(OP, E)                                         \
    DEF_F(OP, E)                                              \
    UN_LOOP(OP##_f32r, float, double, double, float, E)       \
    UN_LOOP(OP##_f16r, gn__f16, double, double, gn__f16, E)
#define DEF_SI(OP, E)                                           \
    UN_LOOP(OP##_i8, int8_t, int64_t, uint64_t, int8_t, E)      \
    UN_LOOP(OP##_i16, int16_t, int64_t, uint64_t, int16_t, E)   \
    UN_LOOP(OP##_i32, int32_t, int64_t, uint64_t, int32_t, E)   \
    UN_LOOP(OP##_i64, int64_t, int64_t, uint64_t, int64_t, E)
#define DEF_UI(OP, E)                                             \
    UN_LOOP(OP##_u8, uint8_t, uint64_t, uint64_t, uint8_t, E)     \
    UN_LOOP(OP##_u16, uint16_t, uint64_t, uint64_t, uint16_t, E)  \
    UN_LOOP(OP##_u32, uint32_t, uint64_t, uint64_t, uint32_t, E)  \
    UN_LOOP(OP##_u64, uint64_t, uint64_t, uint64_t, uint64_t, E)
#define DEF_F_C(OP, E)                                        \
    UN_LOOP(OP##_f32, float, float, float, uint8_t, E)        \
    UN_LOOP(OP##_f64, double, double, double, uint8_t, E)     \
    UN_LOOP_X(OP##_f16, uint16_t, float, float, uint8_t, LD_H, ST_ID, E)

#define IMPL_F(OP) {GN_DT_F32, OP##_f32, NULL}, {GN_DT_F64, OP##_f64, NULL}, {GN_DT_F16, OP##_f16, NULL},
#define IMPL_FR(OP) {GN_DT_F32, OP##_f32, OP##_f32r}, {GN_DT_F64, OP##_f64, NULL}, {GN_DT_F16, OP##_f16, OP##_f16r},
#define IMPL_SI(OP) \
    {GN_DT_I8, OP##_i8, NULL}, {GN_DT_I16, OP##_i16, NULL}, {GN_DT_I32, OP##_i32, NULL}, {GN_DT_I64, OP##_i64, NULL},
#define IMPL_UI(OP) \
    {GN_DT_U8, OP##_u8, NULL}, {GN_DT_U16, OP##_u16, NULL}, {GN_DT_U32, OP##_u32, NULL}, {GN_DT_U64, OP##_u64, NULL},

#define C(v) ((tc)(v))

/* SELU constants (TensorFlow's relu_op_functor.h) */
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_SCALE_ALPHA (1.0507009873554804934193349852946 * 1.6732632423543772848170429916717)

DEF_F(abs, GN_KM_F1(fabs, x)) DEF_SI(abs, x < 0 ? 0 - (ut)x : (ut)x)
static const un_impl abs_impl[] = {IMPL_F(abs) IMPL_SI(abs)};
DEF_F(neg, -x) DEF_SI(neg, 0 - (ut)x)
static const un_impl neg_impl[] = {IMPL_F(neg) IMPL_SI(neg)};
DEF_F(sign, x > 0 ? C(1) : x < 0 ? C(-1) : x) DEF_SI(sign, (x > 0) - (x < 0))
static const un_impl sign_impl[] = {IMPL_F(sign) IMPL_SI(sign)};
DEF_F(square, x * x) DEF_SI(square, (ut)x * (ut)x) DEF_UI(square, x * x)
static const un_impl square_impl[] = {IMPL_F(square) IMPL_SI(square) IMPL_UI(square)};
DEF_F(sqrt, GN_KM_F1(sqrt, x))
static const un_impl sqrt_impl[] = {IMPL_F(sqrt)};
DEF_F(rsqrt, C(1) / GN_KM_F1(sqrt, x))
static const un_impl rsqrt_impl[] = {IMPL_F(rsqrt)};
DEF_F(recip, C(1) / x)
static const un_impl recip_impl[] = {IMPL_F(recip)};
DEF_FR(exp, GN_KM_EXP(x))
static const un_impl exp_impl[] = {IMPL_FR(exp)};
DEF_FR(expm1, GN_KM_F1(expm1, x))
static const un_impl expm1_impl[] = {IMPL_FR(expm1)};
DEF_FR(log, GN_KM_F1(log, x))
static const un_impl log_impl[] = {IMPL_FR(log)};
DEF_FR(log1p, GN_KM_F1(log1p, x))
static const un_impl log1p_impl[] = {IMPL_FR(log1p)};
DEF_FR(sin, GN_KM_F1(sin, x))
static const un_impl sin_impl[] = {IMPL_FR(sin)};
DEF_FR(cos, GN_KM_F1(cos, x))
static const un_impl cos_impl[] = {IMPL_FR(cos)};
DEF_FR(tan, GN_KM_F1(tan, x))
static const un_impl tan_impl[] = {IMPL_FR(tan)};
DEF_FR(asin, GN_KM_F1(asin, x))
static const un_impl asin_impl[] = {IMPL_FR(asin)};
DEF_FR(acos, GN_KM_F1(acos, x))
static const un_impl acos_impl[] = {IMPL_FR(acos)};
DEF_FR(atan, GN_KM_F1(atan, x))
static const un_impl atan_impl[] = {IMPL_FR(atan)};
DEF_FR(sinh, GN_KM_F1(sinh, x))
static const un_impl sinh_impl[] = {IMPL_FR(sinh)};
DEF_FR(cosh, GN_KM_F1(cosh, x))
static const un_impl cosh_impl[] = {IMPL_FR(cosh)};
DEF_FR(tanh, GN_KM_TANH(x))
static const un_impl tanh_impl[] = {IMPL_FR(tanh)};
DEF_FR(asinh, GN_KM_F1(asinh, x))
static const un_impl asinh_impl[] = {IMPL_FR(asinh)};
DEF_FR(acosh, GN_KM_F1(acosh, x))
static const un_impl acosh_impl[] = {IMPL_FR(acosh)};
DEF_FR(atanh, GN_KM_F1(atanh, x))
static const un_impl atanh_impl[] = {IMPL_FR(atanh)};
DEF_FR(erf, GN_KM_ERF(x))
static const un_impl erf_impl[] = {IMPL_FR(erf)};
DEF_FR(erfc, GN_KM_ERFC(x))
static const un_impl erfc_impl[] = {IMPL_FR(erfc)};
DEF_F(floor, GN_KM_F1(floor, x))
static const un_impl floor_impl[] = {IMPL_F(floor)};
DEF_F(ceil, GN_KM_F1(ceil, x))
static const un_impl ceil_impl[] = {IMPL_F(ceil)};
/* rint rounds half to even in the default rounding mode, as TensorFlow's Round */
DEF_F(rint, GN_KM_F1(rint, x)) DEF_SI(ident, x)
static const un_impl round_impl[] = {IMPL_F(rint) IMPL_SI(ident)};
static const un_impl rint_impl[] = {IMPL_F(rint)};
DEF_FR(sigmoid, C(1) / (C(1) + GN_KM_EXP(-x)))
static const un_impl sigmoid_impl[] = {IMPL_FR(sigmoid)};
DEF_F_C(isnan, x != x)
static const un_impl isnan_impl[] = {IMPL_F(isnan)};
DEF_F_C(isinf, isinf(x) != 0)
static const un_impl isinf_impl[] = {IMPL_F(isinf)};
DEF_F_C(isfinite, isfinite(x) != 0)
static const un_impl isfinite_impl[] = {IMPL_F(isfinite)};
UN_LOOP(lnot_b, uint8_t, uint32_t, uint32_t, uint8_t, x == 0)
static const un_impl lnot_impl[] = {{GN_DT_BOOL, lnot_b, NULL}};
DEF_SI(invert, ~x) DEF_UI(invert, ~x)
static const un_impl invert_impl[] = {IMPL_SI(invert) IMPL_UI(invert)};
/* softplus: alpha carries log(epsilon) + 2 of the dtype */
DEF_FR(softplus, GN_KM_SEL(x > -alpha, x, GN_KM_SEL(x < alpha, GN_KM_EXP(x), GN_KM_F1(log, GN_KM_EXP(x) + C(1)))))
static const un_impl softplus_impl[] = {IMPL_FR(softplus)};
DEF_F(softsign, x / (C(1) + GN_KM_F1(fabs, x)))
static const un_impl softsign_impl[] = {IMPL_F(softsign)};
DEF_F(relu, x < 0 ? C(0) : x) DEF_SI(relu, x < 0 ? 0 : x) DEF_UI(ident, x)
static const un_impl relu_impl[] = {IMPL_F(relu) IMPL_SI(relu) IMPL_UI(ident)};
DEF_F(relu6, GN_KM_SEL(x < 0, C(0), GN_KM_SEL(x > 6, C(6), x))) DEF_SI(relu6, x < 0 ? 0 : x > 6 ? 6 : x)
DEF_UI(relu6, x > 6 ? 6 : x)
static const un_impl relu6_impl[] = {IMPL_F(relu6) IMPL_SI(relu6) IMPL_UI(relu6)};
DEF_FR(elu, GN_KM_SEL(x < 0, GN_KM_EXP(x) - C(1), x))
static const un_impl elu_impl[] = {IMPL_FR(elu)};
DEF_FR(selu, GN_KM_SEL(x < 0, C(SELU_SCALE_ALPHA) * (GN_KM_EXP(x) - C(1)), C(SELU_SCALE) * x))
static const un_impl selu_impl[] = {IMPL_FR(selu)};
DEF_F(leaky, GN_KM_SEL(x > 0, x, x * alpha))
static const un_impl leaky_impl[] = {IMPL_F(leaky)};
/* Gelu: x * Phi(x). 1 + erf(x / sqrt 2) is evaluated as erfc(-x / sqrt 2) and
 * 1 + tanh(u) as 2 / (1 + exp(-2u)), the same functions without the
 * cancellation for negative x */
DEF_FR(gelu, C(0.5) * x * GN_KM_ERFC(-x * C(0.70710678118654752440)))
static const un_impl gelu_impl[] = {IMPL_FR(gelu)};
DEF_FR(gelut, x / (C(1) + GN_KM_EXP(C(-1.59576912160573071176) * (x + C(0.044715) * x * x * x))))
static const un_impl gelut_impl[] = {IMPL_FR(gelut)};

/* Dawson's integral F(x) = exp(-x^2) * integral_0^x exp(t^2) dt, TensorFlow's
 * Dawsn (kernels/special_math/special_math_op_dawsn.cc: float and double on the
 * CPU; F(+-0) = F(+-inf) = +0, NaN stays NaN). Evaluated in double for both
 * dtypes and rounded once. For |x| < 10 the series
 * exp(-x^2) * sum_k x^(2k+1) / (k! (2k+1)), whose terms are all positive (no
 * cancellation; the largest, near k = x^2, stays under 1e43); beyond, the
 * asymptotic series 1/(2x) * sum_k (2k-1)!! / (2x^2)^k, cut where a term no
 * longer changes the sum (its smallest term is below exp(-x^2) < 1e-43). */
static double dawsn(double x)
{
    double a = fabs(x);
    if (a != a) return x;
    if (isinf(a) || a == 0) return 0.0;
    double r;
    if (a < 10.0) {
        double x2 = a * a, term = a, sum = a;
        for (int k = 1; k < 400; k++) {
            term *= x2 / k;
            double t = term / (2 * k + 1);
            sum += t;
            if (t <= sum * 1e-17) break;
        }
        r = exp(-x2) * sum;
    } else {
        double inv = 0.5 / a / a, term = 1.0, sum = 1.0;
        for (int k = 1; k < 60; k++) {
            term *= (2 * k - 1) * inv;
            sum += term;
            if (term <= sum * 1e-17) break;
        }
        r = 0.5 / a * sum;
    }
    return x < 0 ? -r : r;
}
UN_LOOP(dawsn_f32, float, double, double, float, dawsn(x))
UN_LOOP(dawsn_f64, double, double, double, double, dawsn(x))
static const un_impl dawsn_impl[] = {{GN_DT_F32, dawsn_f32, NULL}, {GN_DT_F64, dawsn_f64, NULL}};

/* ---- special functions: Lgamma, Digamma, Erfinv, Ndtri ------------------------------------- */
/* Evaluated in double for every dtype and rounded once, as Dawsn. TensorFlow
 * (Eigen) gives: Lgamma +inf at the poles (0 and the negative integers) and at
 * +-inf; Digamma NaN at the poles and at -inf, +inf at +inf; Erfinv +-inf at
 * +-1 and NaN outside [-1, 1]; Ndtri -inf at 0, +inf at 1, NaN outside.
 * TensorFlow's CPU threads flush subnormal floats to zero (float32 Ndtri of
 * 1e-40 is -inf there); these kernels read subnormals as they are. */

/* lgamma_r: libm's lgamma without its global signgam */
static double lgamma_k(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

/* psi(x): psi(x + 1) = psi(x) + 1/x up to 10, then the asymptotic series
 * log s - 1/(2s) - sum B_2k / (2k s^2k) (7 terms: under 1e-17 at s >= 10).
 * Below 0, the reflection psi(x) = psi(1 - x) - pi / tan(pi x), with tan's
 * argument reduced to the distance to the nearest integer (exact). */
static double digamma_k(double x)
{
    if (x != x) return x;
    double refl = 0;
    if (x <= 0) {
        double r = x - nearbyint(x);   /* exact; NaN for -inf */
        if (r == 0 || r != r) return NAN;
        refl = 3.14159265358979323846 / tan(3.14159265358979323846 * r);
        x = 1 - x;
    }
    if (isinf(x)) return x;
    double w = 0;
    while (x < 10) {
        w += 1 / x;
        x += 1;
    }
    double z = 1 / (x * x);
    double y = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 -
                                                                                 z * (691.0 / 32760 - z / 12))))));
    return log(x) - 0.5 / x - y - w - refl;
}

/* Abramowitz & Stegun 26.2.23: the upper-tail quantile for p in (0, 0.5],
 * within 4.5e-4; the start of the Halley iterations below. */
static double as_quantile(double p)
{
    double t = sqrt(-2 * log(p));
    return t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
}

/* Ndtri: the x with Phi(x) = p. Halley's method (cubic) on
 * f = Phi(x) - p, f' = phi(x), f'' = -x phi(x): x -= u / (1 + x u / 2),
 * u = f / f'. Phi is written so that neither side cancels: p - 1/2 (exact
 * for p >= 1/4) against erf(x / sqrt 2) / 2 in the middle, erfc in the
 * lower tail; the upper half is -ndtri(1 - p) (1 - p exact). */
static double ndtri_k(double p)
{
    if (p != p || p < 0 || p > 1) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p > 0.75) return -ndtri_k(1 - p);
    bool mid = p >= 0.25;
    double x = p == 0.5 ? 0 : -as_quantile(p < 0.5 ? p : 1 - p);
    if (p > 0.5) x = -x;
    for (int it = 0; it < 8 && x != 0; it++) {
        double f = mid ? 0.5 * erf(x * 0.70710678118654752440) - (p - 0.5) : 0.5 * erfc(-x * 0.70710678118654752440) - p;
        double d = exp(-0.5 * x * x) * 0.39894228040143267794;
        if (d == 0) break;
        double u = f / d, dx = u / (1 + 0.5 * x * u);
        x -= dx;
        if (fabs(dx) <= 1e-17 * fabs(x)) break;
    }
    return x;
}

#define DEF_SPECIAL(OP, FN)                                                        \
    UN_LOOP(OP##_f32, float, double, double, float, FN(x))                         \
    UN_LOOP(OP##_f64, double, double, double, double, FN(x))
DEF_SPECIAL(lgamma, lgamma_k)
DEF_SPECIAL(digamma, digamma_k)
/* Erfinv as TensorFlow (Eigen) computes it: ndtri((x + 1) / 2) / sqrt 2 with
 * (x + 1) / 2 rounded to the dtype, so that (as in TensorFlow) float32
 * erfinv(1e-10) is 0 and erfinv(0.99999994) is +inf */
UN_LOOP(erfinv_f32, float, float, float, float, ndtri_k((double)((x + 1.0f) / 2.0f)) * 0.70710678118654752440)
UN_LOOP(erfinv_f64, double, double, double, double, ndtri_k((x + 1.0) / 2.0) * 0.70710678118654752440)
DEF_SPECIAL(ndtri, ndtri_k)
UN_LOOP_X(lgamma_f16, uint16_t, double, double, uint16_t, LD_H, ST_H, lgamma_k(x))
UN_LOOP_X(digamma_f16, uint16_t, double, double, uint16_t, LD_H, ST_H, digamma_k(x))
/* TensorFlow's CPU kernels: Lgamma and Digamma for half, float, double;
 * Erfinv and Ndtri for float and double */
static const un_impl lgamma_impl[] = {{GN_DT_F32, lgamma_f32, NULL}, {GN_DT_F64, lgamma_f64, NULL},
                                      {GN_DT_F16, lgamma_f16, NULL}};
static const un_impl digamma_impl[] = {{GN_DT_F32, digamma_f32, NULL}, {GN_DT_F64, digamma_f64, NULL},
                                       {GN_DT_F16, digamma_f16, NULL}};
static const un_impl erfinv_impl[] = {{GN_DT_F32, erfinv_f32, NULL}, {GN_DT_F64, erfinv_f64, NULL}};
static const un_impl ndtri_impl[] = {{GN_DT_F32, ndtri_f32, NULL}, {GN_DT_F64, ndtri_f64, NULL}};

/* ---- driver ----------------------------------------------------------------------------- */
static const un_impl *find_impl(const un_impl *impl, size_t n, int32_t dtype)
{
    for (size_t i = 0; i < n; i++)
        if (impl[i].dtype == dtype) return &impl[i];
    return NULL;
}

static un_fn pick(const gn__kctx *c, const un_impl *im)
{
    return (c->flags & GN__K_EXACT_MATH) && im->ref ? im->ref : im->fn;
}

static gn_status run_unary(gn__kctx *c, const un_impl *impl, size_t n_impl, bool to_bool, const un_args *args)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    const un_impl *im = find_impl(impl, n_impl, x->dtype);
    if (!im) return gn__km_bad_dtype(c, x->dtype);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, to_bool ? GN_DT_BOOL : x->dtype, x->rank, x->dims, &o));
    un_args none = {0};
    int64_t n = gn__tensor_numel(x);
    if (n) pick(c, im)(x->data, o->data, n, args ? args : &none);
    return GN_OK;
}

#define UN_KERNEL(OP, IMPL, TO_BOOL) \
    gn_status gn__km_##OP(gn__kctx *c) { return run_unary(c, IMPL, GN__ARRAY_LEN(IMPL), TO_BOOL, NULL); }

UN_KERNEL(Abs, abs_impl, false)
UN_KERNEL(Neg, neg_impl, false)
UN_KERNEL(Sign, sign_impl, false)
UN_KERNEL(Square, square_impl, false)
UN_KERNEL(Sqrt, sqrt_impl, false)
UN_KERNEL(Rsqrt, rsqrt_impl, false)
UN_KERNEL(Reciprocal, recip_impl, false)
UN_KERNEL(Inv, recip_impl, false)
UN_KERNEL(Exp, exp_impl, false)
UN_KERNEL(Expm1, expm1_impl, false)
UN_KERNEL(Log, log_impl, false)
UN_KERNEL(Log1p, log1p_impl, false)
UN_KERNEL(Sin, sin_impl, false)
UN_KERNEL(Cos, cos_impl, false)
UN_KERNEL(Tan, tan_impl, false)
UN_KERNEL(Asin, asin_impl, false)
UN_KERNEL(Acos, acos_impl, false)
UN_KERNEL(Atan, atan_impl, false)
UN_KERNEL(Sinh, sinh_impl, false)
UN_KERNEL(Cosh, cosh_impl, false)
UN_KERNEL(Tanh, tanh_impl, false)
UN_KERNEL(Asinh, asinh_impl, false)
UN_KERNEL(Acosh, acosh_impl, false)
UN_KERNEL(Atanh, atanh_impl, false)
UN_KERNEL(Erf, erf_impl, false)
UN_KERNEL(Erfc, erfc_impl, false)
UN_KERNEL(Floor, floor_impl, false)
UN_KERNEL(Ceil, ceil_impl, false)
UN_KERNEL(Round, round_impl, false)
UN_KERNEL(Rint, rint_impl, false)
UN_KERNEL(Sigmoid, sigmoid_impl, false)
UN_KERNEL(IsNan, isnan_impl, true)
UN_KERNEL(IsInf, isinf_impl, true)
UN_KERNEL(IsFinite, isfinite_impl, true)
UN_KERNEL(LogicalNot, lnot_impl, true)
UN_KERNEL(Invert, invert_impl, false)
UN_KERNEL(Softsign, softsign_impl, false)
UN_KERNEL(Relu, relu_impl, false)
UN_KERNEL(Relu6, relu6_impl, false)
UN_KERNEL(Elu, elu_impl, false)
UN_KERNEL(Selu, selu_impl, false)
UN_KERNEL(Dawsn, dawsn_impl, false)
UN_KERNEL(Lgamma, lgamma_impl, false)
UN_KERNEL(Digamma, digamma_impl, false)
UN_KERNEL(Erfinv, erfinv_impl, false)
UN_KERNEL(Ndtri, ndtri_impl, false)

/* log(epsilon) + 2 of the dtype (TensorFlow's softplus_op.h threshold) */
static double softplus_threshold(int32_t dtype)
{
    if (dtype == GN_DT_F64) return log(2.220446049250313080847e-16) + 2.0;
    if (dtype == GN_DT_F16) return (double)(gn__f16)(float)((float)log(0.0009765625) + 2.0f);
    return (double)(logf(1.1920928955078125e-07f) + 2.0f);
}

gn_status gn__km_Softplus(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    un_args a = {softplus_threshold(c->in[0].dtype)};
    return run_unary(c, softplus_impl, GN__ARRAY_LEN(softplus_impl), false, &a);
}

gn_status gn__km_LeakyRelu(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    float alpha = gn__km_attr_float(c, "alpha", 0.2f);
    /* TensorFlow converts alpha to T first */
    un_args a = {c->in[0].dtype == GN_DT_F16 ? (double)(float)(gn__f16)alpha : (double)alpha};
    return run_unary(c, leaky_impl, GN__ARRAY_LEN(leaky_impl), false, &a);
}

gn_status gn__km_Gelu(gn__kctx *c)
{
    if (gn__km_attr_bool(c, "approximate", false))
        return run_unary(c, gelut_impl, GN__ARRAY_LEN(gelut_impl), false, NULL);
    return run_unary(c, gelu_impl, GN__ARRAY_LEN(gelu_impl), false, NULL);
}

/* ---- _UnaryOpsComposition -------------------------------------------------------------------- */
typedef struct un_named {
    const char *op;
    const un_impl *impl;
    size_t n;
} un_named;

#define NAMED(OP, IMPL) {OP, IMPL, GN__ARRAY_LEN(IMPL)},
static const un_named composable[] = {
    NAMED("Abs", abs_impl) NAMED("Acos", acos_impl) NAMED("Acosh", acosh_impl) NAMED("Asin", asin_impl)
    NAMED("Asinh", asinh_impl) NAMED("Atan", atan_impl) NAMED("Atanh", atanh_impl) NAMED("Ceil", ceil_impl)
    NAMED("Cos", cos_impl) NAMED("Cosh", cosh_impl) NAMED("Elu", elu_impl) NAMED("Erf", erf_impl)
    NAMED("Exp", exp_impl) NAMED("Expm1", expm1_impl) NAMED("Floor", floor_impl) NAMED("Inv", recip_impl)
    NAMED("Log", log_impl) NAMED("Log1p", log1p_impl) NAMED("Neg", neg_impl) NAMED("Reciprocal", recip_impl)
    NAMED("Relu", relu_impl) NAMED("Relu6", relu6_impl) NAMED("Rint", rint_impl) NAMED("Round", round_impl)
    NAMED("Rsqrt", rsqrt_impl) NAMED("Selu", selu_impl) NAMED("Sigmoid", sigmoid_impl) NAMED("Sign", sign_impl)
    NAMED("Sin", sin_impl) NAMED("Sinh", sinh_impl) NAMED("Softplus", softplus_impl)
    NAMED("Softsign", softsign_impl) NAMED("Sqrt", sqrt_impl) NAMED("Square", square_impl)
    NAMED("Tan", tan_impl) NAMED("Tanh", tanh_impl)
};

gn_status gn__km__UnaryOpsComposition(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "op_names");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "missing attr 'op_names'");
    size_t nops = v->list->n_s;
    if (nops == 0) return gn__kctx_forward(c, 0, 0);
    un_fn fns[64];
    if (nops > GN__ARRAY_LEN(fns)) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%zu ops composed, over 64", nops);
    un_args args[64];
    for (size_t k = 0; k < nops; k++) {
        const ProtobufCBinaryData *s = &v->list->s[k];
        const un_named *u = NULL;
        for (size_t j = 0; j < GN__ARRAY_LEN(composable); j++)
            if (strlen(composable[j].op) == s->len && memcmp(composable[j].op, s->data, s->len) == 0)
                u = &composable[j];
        if (!u)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "op '%.*s' cannot be composed", (int)s->len,
                                 (const char *)s->data);
        const un_impl *im = find_impl(u->impl, u->n, x->dtype);
        if (!im) return gn__km_bad_dtype(c, x->dtype);
        fns[k] = pick(c, im);
        args[k].alpha = strcmp(u->op, "Softplus") == 0 ? softplus_threshold(x->dtype) : 0.0;
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    if (n == 0) return GN_OK;
    void *tmp = NULL;
    if (nops > 1) {
        tmp = malloc(o->nbytes);
        if (!tmp) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", o->nbytes);
    }
    /* ping-pong so that the last op writes the output */
    const void *src = x->data;
    for (size_t k = 0; k < nops; k++) {
        void *dst = ((nops - 1 - k) % 2 == 0) ? o->data : tmp;
        fns[k](src, dst, n, &args[k]);
        src = dst;
    }
    free(tmp);
    return GN_OK;
}

/* ---- Cast ------------------------------------------------------------------------------------- */
/* Two stages through a wide chunk: load to int64 / uint64 / double, store to
 * the destination type. Conversions follow C (TensorFlow's static_cast):
 * ints wrap, float -> int truncates (x86-64 results for NaN and out of range),
 * float16 and bfloat16 round to nearest even (from float). */
#define CAST_CHUNK 512
enum { W_I, W_U, W_D };

typedef struct wide {
    int kind;
    union {
        int64_t i[CAST_CHUNK];
        uint64_t u[CAST_CHUNK];
        double d[CAST_CHUNK];
    } v;
} wide;

static float bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if (f != f) return (bits >> 31) ? 0xFFC0 : 0x7FC0;
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

static bool cast_load(int32_t dt, const void *src, int64_t n, unsigned trunc_bits, wide *w)
{
    int64_t i;
    switch (dt) {
#define LOAD(DT, T, KIND, FIELD)                                                  \
    case DT:                                                                      \
        w->kind = KIND;                                                           \
        for (i = 0; i < n; i++) w->v.FIELD[i] = ((const T *)src)[i];              \
        return true;
        LOAD(GN_DT_I8, int8_t, W_I, i)
        LOAD(GN_DT_I16, int16_t, W_I, i)
        LOAD(GN_DT_I32, int32_t, W_I, i)
        LOAD(GN_DT_I64, int64_t, W_I, i)
        LOAD(GN_DT_U8, uint8_t, W_U, u)
        LOAD(GN_DT_U16, uint16_t, W_U, u)
        LOAD(GN_DT_U32, uint32_t, W_U, u)
        LOAD(GN_DT_U64, uint64_t, W_U, u)
        LOAD(GN_DT_F64, double, W_D, d)
#undef LOAD
    case GN_DT_BOOL:
        w->kind = W_I;
        for (i = 0; i < n; i++) w->v.i[i] = ((const uint8_t *)src)[i] != 0;
        return true;
    case GN_DT_F16:
        w->kind = W_D;
        for (i = 0; i < n; i++) w->v.d[i] = (double)gn__km_h2f(((const uint16_t *)src)[i]);
        return true;
    case GN_DT_BF16:
        w->kind = W_D;
        for (i = 0; i < n; i++) w->v.d[i] = (double)bf16_to_f32(((const uint16_t *)src)[i]);
        return true;
    case GN_DT_F32:
        w->kind = W_D;
        if (trunc_bits) {
            /* TensorFlow's LSBZeroSetter: clear the low mantissa bits of non-NaNs */
            uint32_t mask = ~((1u << trunc_bits) - 1u);
            for (i = 0; i < n; i++) {
                float f = ((const float *)src)[i];
                if (f == f) {
                    uint32_t b;
                    memcpy(&b, &f, 4);
                    b &= mask;
                    memcpy(&f, &b, 4);
                }
                w->v.d[i] = f;
            }
        } else {
            for (i = 0; i < n; i++) w->v.d[i] = ((const float *)src)[i];
        }
        return true;
    default:
        return false;
    }
}

static void trunc_f64(wide *w, int64_t n, unsigned bits)
{
    uint64_t mask = ~((1ull << bits) - 1ull);
    for (int64_t i = 0; i < n; i++) {
        double d = w->v.d[i];
        if (d != d) continue;
        uint64_t b;
        memcpy(&b, &d, 8);
        b &= mask;
        memcpy(&d, &b, 8);
        w->v.d[i] = d;
    }
}

static bool cast_store(int32_t dt, const wide *w, int64_t n, void *dst)
{
    int64_t i;
    switch (dt) {
#define STORE_INT(DT, T, FROM_D)                                                                 \
    case DT:                                                                                     \
        if (w->kind == W_I)                                                                      \
            for (i = 0; i < n; i++) ((T *)dst)[i] = (T)(uint64_t)w->v.i[i];                      \
        else if (w->kind == W_U)                                                                 \
            for (i = 0; i < n; i++) ((T *)dst)[i] = (T)w->v.u[i];                                \
        else                                                                                     \
            for (i = 0; i < n; i++) ((T *)dst)[i] = (T)FROM_D(w->v.d[i]);                        \
        return true;
        STORE_INT(GN_DT_I8, int8_t, (uint32_t)gn__km_f2i32)
        STORE_INT(GN_DT_I16, int16_t, (uint32_t)gn__km_f2i32)
        STORE_INT(GN_DT_I32, int32_t, gn__km_f2i32)
        STORE_INT(GN_DT_I64, int64_t, gn__km_f2i64)
        STORE_INT(GN_DT_U8, uint8_t, (uint32_t)gn__km_f2i32)
        STORE_INT(GN_DT_U16, uint16_t, (uint32_t)gn__km_f2i32)
        STORE_INT(GN_DT_U32, uint32_t, (uint64_t)gn__km_f2i64)
        STORE_INT(GN_DT_U64, uint64_t, gn__km_f2u64)
#undef STORE_INT
#define STORE_FLOAT(DT, T, CONV)                                                                 \
    case DT:                                                                                     \
        if (w->kind == W_I)                                                                      \
            for (i = 0; i < n; i++) ((T *)dst)[i] = CONV((float)w->v.i[i]);                      \
        else if (w->kind == W_U)                                                                 \
            for (i = 0; i < n; i++) ((T *)dst)[i] = CONV((float)w->v.u[i]);                      \
        else                                                                                     \
            for (i = 0; i < n; i++) ((T *)dst)[i] = CONV((float)w->v.d[i]);                      \
        return true;
#define AS_F16(f) gn__km_f2h(f)
#define AS_F32(f) (f)
        STORE_FLOAT(GN_DT_F16, uint16_t, AS_F16)
        STORE_FLOAT(GN_DT_BF16, uint16_t, f32_to_bf16)
        STORE_FLOAT(GN_DT_F32, float, AS_F32)
#undef STORE_FLOAT
#undef AS_F16
#undef AS_F32
    case GN_DT_F64:
        if (w->kind == W_I)
            for (i = 0; i < n; i++) ((double *)dst)[i] = (double)w->v.i[i];
        else if (w->kind == W_U)
            for (i = 0; i < n; i++) ((double *)dst)[i] = (double)w->v.u[i];
        else
            for (i = 0; i < n; i++) ((double *)dst)[i] = w->v.d[i];
        return true;
    case GN_DT_BOOL:
        if (w->kind == W_I)
            for (i = 0; i < n; i++) ((uint8_t *)dst)[i] = w->v.i[i] != 0;
        else if (w->kind == W_U)
            for (i = 0; i < n; i++) ((uint8_t *)dst)[i] = w->v.u[i] != 0;
        else
            for (i = 0; i < n; i++) ((uint8_t *)dst)[i] = w->v.d[i] != 0;
        return true;
    default:
        return false;
    }
}

static bool cast_supported(int32_t dt)
{
    switch (dt) {
    case GN_DT_I8: case GN_DT_I16: case GN_DT_I32: case GN_DT_I64:
    case GN_DT_U8: case GN_DT_U16: case GN_DT_U32: case GN_DT_U64:
    case GN_DT_F16: case GN_DT_BF16: case GN_DT_F32: case GN_DT_F64: case GN_DT_BOOL:
        return true;
    default:
        return false;
    }
}

/* Mantissa bits TensorFlow's Truncate clears for src -> dst (0: none). */
static unsigned trunc_bits_for(int32_t src, int32_t dst)
{
    if (src == GN_DT_F32 && dst == GN_DT_F16) return 24 - 11;
    if (src == GN_DT_F32 && dst == GN_DT_BF16) return 24 - 8;
    if (src == GN_DT_F64 && dst == GN_DT_F32) return 53 - 24;
    if (src == GN_DT_F64 && dst == GN_DT_F16) return 53 - 11;
    return 0;
}

gn_status gn__km_Cast(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    int32_t dst = gn__km_attr_type(c, "DstT", 0);
    if (dst == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "missing attr 'DstT'");
    if (dst > 100) dst -= 100;
    if (dst == x->dtype) return gn__kctx_forward(c, 0, 0);
    if (!cast_supported(x->dtype) || !cast_supported(dst))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "cast from %s to %s is not supported", gn__dtype_name(x->dtype),
                             gn__dtype_name(dst));
    unsigned tb = gn__km_attr_bool(c, "Truncate", false) ? trunc_bits_for(x->dtype, dst) : 0;
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dst, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    size_t isz = gn__dtype_size(x->dtype), osz = gn__dtype_size(dst);
    wide *w = malloc(sizeof *w);
    if (!w) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate cast buffer");
    for (int64_t at = 0; at < n; at += CAST_CHUNK) {
        int64_t len = n - at < CAST_CHUNK ? n - at : CAST_CHUNK;
        cast_load(x->dtype, (const char *)x->data + (size_t)at * isz, len, x->dtype == GN_DT_F32 ? tb : 0, w);
        if (tb && x->dtype == GN_DT_F64) trunc_f64(w, len, tb);
        cast_store(dst, w, len, (char *)o->data + (size_t)at * osz);
    }
    free(w);
    return GN_OK;
}

static bool same_shape(const gn__tensor *a, const gn__tensor *b)
{
    return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* ---- ClipByValue --------------------------------------------------------------------------------- */
typedef void (*clip_fn)(const void *x, const void *lo, const void *hi, void *o, int64_t n, int64_t slo, int64_t shi);

#define CLIP_LOOP(NAME, T, TC)                                                                         \
    static void NAME(const void *px, const void *plo, const void *phi, void *po, int64_t n, int64_t slo, \
                     int64_t shi)                                                                      \
    {                                                                                                  \
        const T *x = px, *lo = plo, *hi = phi;                                                         \
        T *o = po;                                                                                     \
        for (int64_t i = 0; i < n; i++) {                                                              \
            TC v = (TC)x[i], l = (TC)lo[i * slo], h = (TC)hi[i * shi];                                 \
            if (h < v) v = h;                                                                          \
            if (v < l) v = l;                                                                          \
            o[i] = (T)v;                                                                               \
        }                                                                                              \
    }
CLIP_LOOP(clip_f32, float, float)
CLIP_LOOP(clip_f64, double, double)
CLIP_LOOP(clip_f16, gn__f16, float)
CLIP_LOOP(clip_i8, int8_t, int8_t)
CLIP_LOOP(clip_i16, int16_t, int16_t)
CLIP_LOOP(clip_i32, int32_t, int32_t)
CLIP_LOOP(clip_i64, int64_t, int64_t)
CLIP_LOOP(clip_u8, uint8_t, uint8_t)
CLIP_LOOP(clip_u16, uint16_t, uint16_t)
CLIP_LOOP(clip_u32, uint32_t, uint32_t)
CLIP_LOOP(clip_u64, uint64_t, uint64_t)

gn_status gn__km_ClipByValue(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 3));
    const gn__tensor *x = &c->in[0], *lo = &c->in[1], *hi = &c->in[2];
    if (lo->dtype != x->dtype || hi->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "clip values must be %s like the input", gn__dtype_name(x->dtype));
    int64_t n = gn__tensor_numel(x);
    bool lo_ok = lo->rank == 0 || same_shape(lo, x);
    bool hi_ok = hi->rank == 0 || same_shape(hi, x);
    if (!lo_ok || !hi_ok) {
        char s0[160], s1[160], s2[160];
        gn__km_shape_str(x->dims, x->rank, s0, sizeof s0);
        gn__km_shape_str(lo->dims, lo->rank, s1, sizeof s1);
        gn__km_shape_str(hi->dims, hi->rank, s2, sizeof s2);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "clip values %s and %s must be scalars or of the input's shape %s", s1,
                             s2, s0);
    }
    clip_fn fn;
    switch (x->dtype) {
    case GN_DT_F32: fn = clip_f32; break;
    case GN_DT_F64: fn = clip_f64; break;
    case GN_DT_F16: fn = clip_f16; break;
    case GN_DT_I8: fn = clip_i8; break;
    case GN_DT_I16: fn = clip_i16; break;
    case GN_DT_I32: fn = clip_i32; break;
    case GN_DT_I64: fn = clip_i64; break;
    case GN_DT_U8: fn = clip_u8; break;
    case GN_DT_U16: fn = clip_u16; break;
    case GN_DT_U32: fn = clip_u32; break;
    case GN_DT_U64: fn = clip_u64; break;
    default: return gn__km_bad_dtype(c, x->dtype);
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    if (n) fn(x->data, lo->data, hi->data, o->data, n, lo->rank == 0 ? 0 : 1, hi->rank == 0 ? 0 : 1);
    return GN_OK;
}

/* ---- Select / SelectV2 ------------------------------------------------------------------------------ */
#define SEL_LOOP(NAME, T)                                                                               \
    static void NAME(const uint8_t *cond, const void *pt, const void *pe, void *po, int64_t n, int64_t sc, \
                     int64_t st, int64_t se)                                                            \
    {                                                                                                   \
        const T *t = pt, *e = pe;                                                                       \
        T *o = po;                                                                                      \
        if (sc == 1 && st == 1 && se == 1) {                                                            \
            for (int64_t i = 0; i < n; i++) o[i] = cond[i] ? t[i] : e[i];                               \
            return;                                                                                     \
        }                                                                                               \
        for (int64_t i = 0; i < n; i++) o[i] = cond[i * sc] ? t[i * st] : e[i * se];                    \
    }
SEL_LOOP(sel8, uint8_t)
SEL_LOOP(sel16, uint16_t)
SEL_LOOP(sel32, uint32_t)
SEL_LOOP(sel64, uint64_t)

typedef void (*sel_fn)(const uint8_t *cond, const void *t, const void *e, void *o, int64_t n, int64_t sc,
                       int64_t st, int64_t se);

static sel_fn sel_for(size_t esz)
{
    switch (esz) {
    case 1: return sel8;
    case 2: return sel16;
    case 4: return sel32;
    case 8: return sel64;
    default: return NULL;
    }
}

static gn_status select_check(gn__kctx *c, sel_fn *fn, size_t *esz)
{
    GN_TRY(gn__km_need_inputs(c, 3));
    const gn__tensor *cond = &c->in[0], *t = &c->in[1], *e = &c->in[2];
    if (cond->dtype != GN_DT_BOOL)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "condition must be bool, not %s", gn__dtype_name(cond->dtype));
    if (t->dtype != e->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'then' and 'else' dtypes %s and %s differ", gn__dtype_name(t->dtype),
                             gn__dtype_name(e->dtype));
    *esz = gn__dtype_size(t->dtype);
    *fn = sel_for(*esz);
    return GN_OK;
}

gn_status gn__km_Select(gn__kctx *c)
{
    sel_fn fn;
    size_t esz;
    GN_TRY(select_check(c, &fn, &esz));
    const gn__tensor *cond = &c->in[0], *t = &c->in[1], *e = &c->in[2];
    char s0[160], s1[160], s2[160];
    if (!same_shape(t, e)) {
        gn__km_shape_str(t->dims, t->rank, s1, sizeof s1);
        gn__km_shape_str(e->dims, e->rank, s2, sizeof s2);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'then' %s and 'else' %s must have the same shape", s1, s2);
    }
    if (cond->rank == 0) return gn__kctx_forward(c, 0, *(const uint8_t *)cond->data ? 1 : 2);
    bool elementwise = same_shape(cond, t);
    bool rows = !elementwise && cond->rank == 1 && t->rank >= 1 && cond->dims[0] == t->dims[0];
    if (!elementwise && !rows) {
        gn__km_shape_str(cond->dims, cond->rank, s0, sizeof s0);
        gn__km_shape_str(t->dims, t->rank, s1, sizeof s1);
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "condition %s must be a scalar, of the shape %s of 'then', or a vector of its first "
                             "dimension",
                             s0, s1);
    }
    if (!fn) return gn__km_bad_dtype(c, t->dtype);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, t->dtype, t->rank, t->dims, &o));
    int64_t n = gn__tensor_numel(t);
    if (n == 0) return GN_OK;
    const uint8_t *cd = cond->data;
    if (elementwise) {
        fn(cd, t->data, e->data, o->data, n, 1, 1, 1);
        return GN_OK;
    }
    size_t row = (size_t)(n / t->dims[0]) * esz;
    for (int64_t r = 0; r < t->dims[0]; r++)
        memcpy((char *)o->data + (size_t)r * row, (const char *)(cd[r] ? t->data : e->data) + (size_t)r * row, row);
    return GN_OK;
}

typedef struct sel_row {
    sel_fn fn;
    const uint8_t *cond;
    const char *t, *e;
    char *o;
    size_t esz;
    int64_t done, sc, st, se;
} sel_row;

static void select_row(void *user, const int64_t *off, int64_t n)
{
    sel_row *r = user;
    r->fn(r->cond + off[0], r->t + (size_t)off[1] * r->esz, r->e + (size_t)off[2] * r->esz,
          r->o + (size_t)r->done * r->esz, n, r->sc, r->st, r->se);
    r->done += n;
}

gn_status gn__km_SelectV2(gn__kctx *c)
{
    sel_fn fn;
    size_t esz;
    GN_TRY(select_check(c, &fn, &esz));
    const gn__tensor *cond = &c->in[0], *t = &c->in[1], *e = &c->in[2];
    const gn__tensor *ops[3] = {cond, t, e};
    gn__km_bcast b;
    GN_TRY(gn__km_broadcast(c, 3, ops, &b, true));
    if (cond->rank == 0 && same_shape(t, e)) return gn__kctx_forward(c, 0, *(const uint8_t *)cond->data ? 1 : 2);
    if (!fn) return gn__km_bad_dtype(c, t->dtype);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, t->dtype, b.out_rank, b.out_dims, &o));
    if (b.numel == 0) return GN_OK;
    int32_t in = b.rank - 1;
    sel_row r = {fn, cond->data, t->data, e->data, o->data, esz, 0, b.stride[0][in], b.stride[1][in], b.stride[2][in]};
    gn__km_bcast_rows(&b, 3, select_row, &r);
    return GN_OK;
}

/* ---- AddN ---------------------------------------------------------------------------------------------- */
/* Sums in input order; float16 accumulates in float and rounds once. */
#define ADDN_CHUNK 1024
#define ADDN_LOOP(NAME, T, TA)                                                                     \
    static void NAME(const gn__tensor *in, uint32_t k, void *po, int64_t n)                        \
    {                                                                                              \
        T *o = po;                                                                                 \
        TA acc[ADDN_CHUNK];                                                                        \
        for (int64_t at = 0; at < n; at += ADDN_CHUNK) {                                           \
            int64_t len = n - at < ADDN_CHUNK ? n - at : ADDN_CHUNK;                               \
            const T *x0 = (const T *)in[0].data + at;                                              \
            for (int64_t i = 0; i < len; i++) acc[i] = (TA)x0[i];                                  \
            for (uint32_t j = 1; j < k; j++) {                                                     \
                const T *xj = (const T *)in[j].data + at;                                          \
                for (int64_t i = 0; i < len; i++) acc[i] = (TA)(acc[i] + (TA)xj[i]);               \
            }                                                                                      \
            for (int64_t i = 0; i < len; i++) o[at + i] = (T)acc[i];                               \
        }                                                                                          \
    }
ADDN_LOOP(addn_f32, float, float)
ADDN_LOOP(addn_f64, double, double)
ADDN_LOOP(addn_f16, gn__f16, float)
ADDN_LOOP(addn_i8, int8_t, uint64_t)
ADDN_LOOP(addn_i16, int16_t, uint64_t)
ADDN_LOOP(addn_i32, int32_t, uint64_t)
ADDN_LOOP(addn_i64, int64_t, uint64_t)
ADDN_LOOP(addn_u8, uint8_t, uint64_t)
ADDN_LOOP(addn_u16, uint16_t, uint64_t)
ADDN_LOOP(addn_u32, uint32_t, uint64_t)
ADDN_LOOP(addn_u64, uint64_t, uint64_t)

gn_status gn__km_AddN(gn__kctx *c)
{
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects at least 1 input");
    GN_TRY(gn__km_need_inputs(c, c->n_in));
    const gn__tensor *x = &c->in[0];
    for (uint32_t j = 1; j < c->n_in; j++) {
        if (c->in[j].dtype != x->dtype)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s, input 0 is %s", j, gn__dtype_name(c->in[j].dtype),
                                 gn__dtype_name(x->dtype));
        if (!same_shape(&c->in[j], x)) {
            char s0[160], s1[160];
            gn__km_shape_str(x->dims, x->rank, s0, sizeof s0);
            gn__km_shape_str(c->in[j].dims, c->in[j].rank, s1, sizeof s1);
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u has shape %s, input 0 has %s", j, s1, s0);
        }
    }
    void (*fn)(const gn__tensor *, uint32_t, void *, int64_t);
    switch (x->dtype) {
    case GN_DT_F32: fn = addn_f32; break;
    case GN_DT_F64: fn = addn_f64; break;
    case GN_DT_F16: fn = addn_f16; break;
    case GN_DT_I8: fn = addn_i8; break;
    case GN_DT_I16: fn = addn_i16; break;
    case GN_DT_I32: fn = addn_i32; break;
    case GN_DT_I64: fn = addn_i64; break;
    case GN_DT_U8: fn = addn_u8; break;
    case GN_DT_U16: fn = addn_u16; break;
    case GN_DT_U32: fn = addn_u32; break;
    case GN_DT_U64: fn = addn_u64; break;
    default: return gn__km_bad_dtype(c, x->dtype);
    }
    if (c->n_in == 1) return gn__kctx_forward(c, 0, 0);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    if (n) fn(c->in, c->n_in, o->data, n);
    return GN_OK;
}
