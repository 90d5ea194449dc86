/* Elementwise binary ops with numpy broadcasting (TensorFlow's
 * cwise_op_*.cc, cwise_ops.h and bcast.h).
 *
 * Each op is a table of typed loops, one per dtype, generated from one
 * expression in x and y (the operands in the compute type tc). A loop runs
 * over one contiguous row with each operand either a vector or a broadcast
 * scalar, so the compiler vectorizes it; gn__km_bcast_rows walks the outer
 * dims. float16 computes in float and rounds once on store; signed integers
 * compute in int64 (wrapping arithmetic through uint64, as TensorFlow's
 * two's-complement results) and unsigned in uint64, truncated on store.
 * Loops marked "R" have a reference variant for float32/float16 evaluated in
 * double (see math.c). */
#include "ops/kernels/math_internal.h"

#include <stdlib.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

typedef void (*bin_fn)(const void *a, const void *b, void *o, int64_t n, int mode, int *err);

typedef struct bin_impl {
    int32_t dtype;
    bin_fn fn;
    bin_fn ref;   /* GN__K_EXACT_MATH variant; NULL: fn */
} bin_impl;

enum { ERR_DIV_ZERO = 1, ERR_NEG_POW = 2 };

/* mode: 0 both vectors, 1 a is a scalar, 2 b is a scalar, 3 both scalars */
/* o may be a or b (constant folding writes a result over an input of its size,
 * constfold_fold.c): element i is read before it is written, and no pointer
 * is restrict. */
#define BIN_LOOP_X(NAME, TI, TC, UT, TO, LD, ST, EXPR)                                          \
    static void NAME(const void *pa, const void *pb, void *po, int64_t n, int mode, int *err)  \
    {                                                                                          \
        typedef TC tc;                                                                         \
        typedef TO to;                                                                         \
        (void)sizeof(to);                                                                      \
        typedef UT ut;                                                                         \
        typedef TI ti;                                                                         \
        (void)sizeof(tc);                                                                      \
        (void)sizeof(ut);                                                                      \
        (void)sizeof(ti);                                                                      \
        const TI *a = pa;                                                                      \
        const TI *b = pb;                                                                      \
        TO *o = po;                                                                            \
        (void)err;                                                                             \
        switch (mode) {                                                                        \
        case 0:                                                                                \
            for (int64_t i = 0; i < n; i++) {                                                  \
                tc x = LD(a[i]), y = LD(b[i]);                                                 \
                o[i] = ST(EXPR);                                                             \
            }                                                                                  \
            break;                                                                             \
        case 1: {                                                                              \
            const tc x = LD(a[0]);                                                             \
            for (int64_t i = 0; i < n; i++) {                                                  \
                tc y = LD(b[i]);                                                               \
                o[i] = ST(EXPR);                                                             \
            }                                                                                  \
        } break;                                                                               \
        case 2: {                                                                              \
            const tc y = LD(b[0]);                                                             \
            for (int64_t i = 0; i < n; i++) {                                                  \
                tc x = LD(a[i]);                                                               \
                o[i] = ST(EXPR);                                                             \
            }                                                                                  \
        } break;                                                                               \
        default: {                                                                             \
            const tc x = LD(a[0]), y = LD(b[0]);                                               \
            const TO r = ST(EXPR);                                                           \
            for (int64_t i = 0; i < n; i++) o[i] = r;                                          \
        } break;                                                                               \
        }                                                                                      \
    }

#define LD_ID(v) ((tc)(v))
#define ST_ID(v) ((to)(v))
#define LD_H(v) ((tc)gn__km_h2f(v))
#define ST_H(v) gn__km_f2h((float)(v))
#define BIN_LOOP(NAME, TI, TC, UT, TO, EXPR) BIN_LOOP_X(NAME, TI, TC, UT, TO, LD_ID, ST_ID, EXPR)

/* Families of instantiations: float (f32 f64 f16), float with reference
 * variants, signed ints, unsigned ints, bool; _C variants output bool.
 * float16 loads and stores go through the bit conversions of
 * math_internal.h (the reference variants, computed in double, convert
 * natively so the double result is rounded to half once). */
#define DEF_F(OP, E)                                          \
    BIN_LOOP(OP##_f32, float, float, float, float, E)         \
    BIN_LOOP(OP##_f64, double, double, double, double, E)     \
    BIN_LOOP_X(OP##_f16, uint16_t, float, float, uint16_t, LD_H, ST_H, E)
#define DEF_FR(OP, E)                                         \
    DEF_F(OP, E)                                              \
    BIN_LOOP(OP##_f32r, float, double, double, float, E)      \
    BIN_LOOP(OP##_f16r, gn__f16, double, double, gn__f16, E)
#define DEF_SI(OP, E)                                         \
    BIN_LOOP(OP##_i8, int8_t, int64_t, uint64_t, int8_t, E)   \
    BIN_LOOP(OP##_i16, int16_t, int64_t, uint64_t, int16_t, E) \
    BIN_LOOP(OP##_i32, int32_t, int64_t, uint64_t, int32_t, E) \
    BIN_LOOP(OP##_i64, int64_t, int64_t, uint64_t, int64_t, E)
#define DEF_UI(OP, E)                                           \
    BIN_LOOP(OP##_u8, uint8_t, uint64_t, uint64_t, uint8_t, E)    \
    BIN_LOOP(OP##_u16, uint16_t, uint64_t, uint64_t, uint16_t, E) \
    BIN_LOOP(OP##_u32, uint32_t, uint64_t, uint64_t, uint32_t, E) \
    BIN_LOOP(OP##_u64, uint64_t, uint64_t, uint64_t, uint64_t, E)
#define DEF_F_C(OP, E)                                        \
    BIN_LOOP(OP##_f32, float, float, float, uint8_t, E)       \
    BIN_LOOP(OP##_f64, double, double, double, uint8_t, E)    \
    BIN_LOOP_X(OP##_f16, uint16_t, float, float, uint8_t, LD_H, ST_ID, E)
#define DEF_SI_C(OP, E)                                       \
    BIN_LOOP(OP##_i8, int8_t, int64_t, uint64_t, uint8_t, E)  \
    BIN_LOOP(OP##_i16, int16_t, int64_t, uint64_t, uint8_t, E) \
    BIN_LOOP(OP##_i32, int32_t, int64_t, uint64_t, uint8_t, E) \
    BIN_LOOP(OP##_i64, int64_t, int64_t, uint64_t, uint8_t, E)
#define DEF_UI_C(OP, E)                                          \
    BIN_LOOP(OP##_u8, uint8_t, uint64_t, uint64_t, uint8_t, E)   \
    BIN_LOOP(OP##_u16, uint16_t, uint64_t, uint64_t, uint8_t, E) \
    BIN_LOOP(OP##_u32, uint32_t, uint64_t, uint64_t, uint8_t, E) \
    BIN_LOOP(OP##_u64, uint64_t, uint64_t, uint64_t, uint8_t, E)
#define DEF_B(OP, E) BIN_LOOP(OP##_b, uint8_t, uint32_t, uint32_t, uint8_t, E)

#define IMPL_F(OP) {GN_DT_F32, OP##_f32, NULL}, {GN_DT_F64, OP##_f64, NULL}, {GN_DT_F16, OP##_f16, NULL},
#define IMPL_FR(OP) {GN_DT_F32, OP##_f32, OP##_f32r}, {GN_DT_F64, OP##_f64, NULL}, {GN_DT_F16, OP##_f16, OP##_f16r},
#define IMPL_SI(OP) \
    {GN_DT_I8, OP##_i8, NULL}, {GN_DT_I16, OP##_i16, NULL}, {GN_DT_I32, OP##_i32, NULL}, {GN_DT_I64, OP##_i64, NULL},
#define IMPL_UI(OP) \
    {GN_DT_U8, OP##_u8, NULL}, {GN_DT_U16, OP##_u16, NULL}, {GN_DT_U32, OP##_u32, NULL}, {GN_DT_U64, OP##_u64, NULL},
#define IMPL_B(OP) {GN_DT_BOOL, OP##_b, NULL},

/* ---- scalar helpers ----------------------------------------------------------------- */
static inline int64_t s_div(int64_t x, int64_t y, int *err)
{
    if (y == 0) {
        *err = ERR_DIV_ZERO;
        return 0;
    }
    if (y == -1) return (int64_t)(0 - (uint64_t)x);   /* INT_MIN / -1 wraps, as TensorFlow */
    return x / y;
}

static inline int64_t s_floordiv(int64_t x, int64_t y, int *err)
{
    if (y == 0 || y == -1) return s_div(x, y, err);
    int64_t z = x / y;
    return z * y != x && ((x < 0) != (y < 0)) ? z - 1 : z;
}

static inline int64_t s_mod(int64_t x, int64_t y, int *err)
{
    if (y == 0) {
        *err = ERR_DIV_ZERO;
        return 0;
    }
    if (y == -1) return 0;
    return x % y;
}

static inline int64_t s_floormod(int64_t x, int64_t y, int *err)
{
    int64_t m = s_mod(x, y, err);
    return m != 0 && ((y < 0) != (m < 0)) ? m + y : m;
}

static inline uint64_t u_div(uint64_t x, uint64_t y, int *err)
{
    if (y == 0) {
        *err = ERR_DIV_ZERO;
        return 0;
    }
    return x / y;
}

static inline uint64_t u_mod(uint64_t x, uint64_t y, int *err)
{
    if (y == 0) {
        *err = ERR_DIV_ZERO;
        return 0;
    }
    return x % y;
}

static inline uint64_t u_pow(uint64_t x, uint64_t y)
{
    uint64_t r = 1;
    while (y) {
        if (y & 1) r *= x;
        x *= x;
        y >>= 1;
    }
    return r;
}

static inline int64_t s_pow(int64_t x, int64_t y, int *err)
{
    if (y < 0) {
        *err = ERR_NEG_POW;
        return 0;
    }
    return (int64_t)u_pow((uint64_t)x, (uint64_t)y);
}

static inline int64_t clamp_shift(int64_t y, int64_t bits)
{
    return y < 0 ? 0 : y > bits - 1 ? bits - 1 : y;
}

static inline uint64_t clamp_ushift(uint64_t y, uint64_t bits)
{
    return y > bits - 1 ? bits - 1 : y;
}

static inline float f_floormod_f(float x, float y)
{
    float m = fmodf(x, y);
    return m != 0 && ((y < 0) != (m < 0)) ? m + y : m;
}

static inline double f_floormod_d(double x, double y)
{
    double m = fmod(x, y);
    return m != 0 && ((y < 0) != (m < 0)) ? m + y : m;
}
#define F_FLOORMOD(x, y) _Generic((x), float: f_floormod_f, default: f_floormod_d)((x), (y))

/* NaN-propagating max/min (TensorFlow uses Eigen::PropagateNaN). */
#define F_MAX(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (y) : (x))
#define F_MIN(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (y) < (x) ? (y) : (x))

/* ---- the ops ------------------------------------------------------------------------ */
DEF_F(add, x + y) DEF_SI(add, (ut)x + (ut)y) DEF_UI(add, x + y)
static const bin_impl add_impl[] = {IMPL_F(add) IMPL_SI(add) IMPL_UI(add)};

DEF_F(sub, x - y) DEF_SI(sub, (ut)x - (ut)y) DEF_UI(sub, x - y)
static const bin_impl sub_impl[] = {IMPL_F(sub) IMPL_SI(sub) IMPL_UI(sub)};

DEF_F(mul, x * y) DEF_SI(mul, (ut)x * (ut)y) DEF_UI(mul, x * y)
static const bin_impl mul_impl[] = {IMPL_F(mul) IMPL_SI(mul) IMPL_UI(mul)};

DEF_F(div, x / y) DEF_SI(div, s_div(x, y, err)) DEF_UI(div, u_div(x, y, err))
static const bin_impl div_impl[] = {IMPL_F(div) IMPL_SI(div) IMPL_UI(div)};
static const bin_impl realdiv_impl[] = {IMPL_F(div)};

DEF_F(tdiv, GN_KM_F1(trunc, x / y))
static const bin_impl truncdiv_impl[] = {IMPL_F(tdiv) IMPL_SI(div) IMPL_UI(div)};

DEF_F(fdiv, GN_KM_F1(floor, x / y)) DEF_SI(fdiv, s_floordiv(x, y, err))
static const bin_impl floordiv_impl[] = {IMPL_F(fdiv) IMPL_SI(fdiv) IMPL_UI(div)};

DEF_F(fmod, F_FLOORMOD(x, y)) DEF_SI(fmod, s_floormod(x, y, err)) DEF_UI(mod, u_mod(x, y, err))
static const bin_impl floormod_impl[] = {IMPL_F(fmod) IMPL_SI(fmod) IMPL_UI(mod)};

DEF_F(tmod, GN_KM_F2(fmod, x, y)) DEF_SI(tmod, s_mod(x, y, err))
static const bin_impl truncmod_impl[] = {IMPL_F(tmod) IMPL_SI(tmod) IMPL_UI(mod)};

DEF_F(divnonan, GN_KM_SEL(y == 0, (tc)0, x / y))
static const bin_impl divnonan_impl[] = {IMPL_F(divnonan)};

DEF_F(mulnonan, GN_KM_SEL(y == 0, (tc)0, x * y))
static const bin_impl mulnonan_impl[] = {IMPL_F(mulnonan)};

DEF_F(max, F_MAX(x, y)) DEF_SI(max, x < y ? y : x) DEF_UI(max, x < y ? y : x)
static const bin_impl max_impl[] = {IMPL_F(max) IMPL_SI(max) IMPL_UI(max)};

DEF_F(min, F_MIN(x, y)) DEF_SI(min, y < x ? y : x) DEF_UI(min, y < x ? y : x)
static const bin_impl min_impl[] = {IMPL_F(min) IMPL_SI(min) IMPL_UI(min)};

DEF_FR(pow, GN_KM_F2(pow, x, y)) DEF_SI(pow, s_pow(x, y, err)) DEF_UI(pow, u_pow(x, y))
static const bin_impl pow_impl[] = {IMPL_FR(pow) IMPL_SI(pow) IMPL_UI(pow)};

DEF_F(sqdiff, (x - y) * (x - y)) DEF_SI(sqdiff, ((ut)x - (ut)y) * ((ut)x - (ut)y))
DEF_UI(sqdiff, (x - y) * (x - y))
static const bin_impl sqdiff_impl[] = {IMPL_F(sqdiff) IMPL_SI(sqdiff) IMPL_UI(sqdiff)};

DEF_FR(atan2, GN_KM_F2(atan2, x, y))
static const bin_impl atan2_impl[] = {IMPL_FR(atan2)};

DEF_F(xdivy, GN_KM_SEL(x == 0, (tc)0, x / y))
static const bin_impl xdivy_impl[] = {IMPL_F(xdivy)};

DEF_FR(xlogy, x == 0 ? (tc)0 : x * GN_KM_F1(log, y))
static const bin_impl xlogy_impl[] = {IMPL_FR(xlogy)};

DEF_FR(xlog1py, x == 0 ? (tc)0 : x * GN_KM_F1(log1p, y))
static const bin_impl xlog1py_impl[] = {IMPL_FR(xlog1py)};

DEF_SI(band, x & y) DEF_UI(band, x & y)
static const bin_impl band_impl[] = {IMPL_SI(band) IMPL_UI(band)};
DEF_SI(bor, x | y) DEF_UI(bor, x | y)
static const bin_impl bor_impl[] = {IMPL_SI(bor) IMPL_UI(bor)};
DEF_SI(bxor, x ^ y) DEF_UI(bxor, x ^ y)
static const bin_impl bxor_impl[] = {IMPL_SI(bxor) IMPL_UI(bxor)};

/* Shifts clamp the count to [0, bits-1]; left shifts are done unsigned. */
DEF_SI(shl, (ut)x << clamp_shift(y, 8 * (int64_t)sizeof(ti)))
DEF_UI(shl, x << clamp_ushift(y, 8 * sizeof(ti)))
static const bin_impl shl_impl[] = {IMPL_SI(shl) IMPL_UI(shl)};
DEF_SI(shr, x >> clamp_shift(y, 8 * (int64_t)sizeof(ti)))
DEF_UI(shr, x >> clamp_ushift(y, 8 * sizeof(ti)))
static const bin_impl shr_impl[] = {IMPL_SI(shr) IMPL_UI(shr)};

/* comparisons: bool output */
#define DEF_CMP(OP, E) DEF_F_C(OP, E) DEF_SI_C(OP, E) DEF_UI_C(OP, E)
#define IMPL_CMP(OP) IMPL_F(OP) IMPL_SI(OP) IMPL_UI(OP)
DEF_CMP(lt, x < y)
static const bin_impl lt_impl[] = {IMPL_CMP(lt)};
DEF_CMP(le, x <= y)
static const bin_impl le_impl[] = {IMPL_CMP(le)};
DEF_CMP(gt, x > y)
static const bin_impl gt_impl[] = {IMPL_CMP(gt)};
DEF_CMP(ge, x >= y)
static const bin_impl ge_impl[] = {IMPL_CMP(ge)};
/* Equal / NotEqual on strings (TensorFlow's tstring ==): the same length
 * and bytes. */
static void str_eq_loop(const void *pa, const void *pb, void *po, int64_t n, int mode, bool want)
{
    const gn__tstring *a = pa, *b = pb;
    uint8_t *o = po;
    for (int64_t i = 0; i < n; i++) {
        const gn__tstring *x = (mode & 1) ? &a[0] : &a[i], *y = (mode & 2) ? &b[0] : &b[i];
        bool eq = x->len == y->len && (x->len == 0 || memcmp(x->ptr, y->ptr, x->len) == 0);
        o[i] = eq == want;
    }
}
static void eq_str(const void *a, const void *b, void *o, int64_t n, int mode, int *err)
{
    (void)err;
    str_eq_loop(a, b, o, n, mode, true);
}
static void ne_str(const void *a, const void *b, void *o, int64_t n, int mode, int *err)
{
    (void)err;
    str_eq_loop(a, b, o, n, mode, false);
}

DEF_CMP(eq, x == y) DEF_B(eq, (x != 0) == (y != 0))
static const bin_impl eq_impl[] = {IMPL_CMP(eq) IMPL_B(eq){GN_DT_STRING, eq_str, NULL}};
DEF_CMP(ne, x != y) DEF_B(ne, (x != 0) != (y != 0))
static const bin_impl ne_impl[] = {IMPL_CMP(ne) IMPL_B(ne){GN_DT_STRING, ne_str, NULL}};
DEF_B(land, (x != 0) & (y != 0))
static const bin_impl land_impl[] = {IMPL_B(land)};
DEF_B(lor, (x != 0) | (y != 0))
static const bin_impl lor_impl[] = {IMPL_B(lor)};

/* ---- driver --------------------------------------------------------------------------- */
typedef struct row_ctx {
    bin_fn fn;
    const char *a, *b;
    char *o;
    size_t esz, osz;
    int64_t done;        /* output elements written */
    int mode;
    int err;
} row_ctx;

static void bin_row(void *user, const int64_t *off, int64_t n)
{
    row_ctx *r = user;
    r->fn(r->a + (size_t)off[0] * r->esz, r->b + (size_t)off[1] * r->esz, r->o + (size_t)r->done * r->osz, n,
          r->mode, &r->err);
    r->done += n;
}

/* [M, C] op [C] (or [C] op [M, C]) with a short C: one call per row would
 * cost more than the row, so the [C] operand is repeated into a block of whole
 * rows and the rows are processed a block at a time as plain vectors. Same
 * elements, same operations: the results do not change. */
#define SHORT_ROW 64
#define SHORT_BLOCK 1024

static bool short_rows(const gn__km_bcast *bc, row_ctx *r)
{
    if (bc->rank != 2 || bc->dims[1] >= SHORT_ROW || r->mode != 0) return false;
    int k;   /* the operand repeated over rows */
    if (bc->stride[0][0] == 0 && bc->stride[1][0] == bc->dims[1]) k = 0;
    else if (bc->stride[1][0] == 0 && bc->stride[0][0] == bc->dims[1]) k = 1;
    else return false;
    int64_t c = bc->dims[1], m = bc->dims[0];
    int64_t per = SHORT_BLOCK / c;   /* rows per block */
    if (per < 2 || m < 2) return false;
    char *rep = malloc((size_t)(per * c) * r->esz);
    if (!rep) return false;   /* fall back to rows */
    const char *src = k == 0 ? r->a : r->b;
    for (int64_t i = 0; i < per; i++) memcpy(rep + (size_t)(i * c) * r->esz, src, (size_t)c * r->esz);
    const char *full = k == 0 ? r->b : r->a;
    for (int64_t row = 0; row < m; row += per) {
        int64_t rows = m - row < per ? m - row : per;
        const char *f = full + (size_t)(row * c) * r->esz;
        r->fn(k == 0 ? rep : f, k == 0 ? f : rep, r->o + (size_t)(row * c) * r->osz, rows * c, 0, &r->err);
    }
    free(rep);
    return true;
}

static gn_status run_binary(gn__kctx *c, const bin_impl *impl, size_t n_impl, bool to_bool, int equality)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *a = &c->in[0], *b = &c->in[1];
    if (a->dtype != b->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input dtypes %s and %s differ", gn__dtype_name(a->dtype),
                             gn__dtype_name(b->dtype));
    const bin_impl *im = NULL;
    for (size_t i = 0; i < n_impl; i++)
        if (impl[i].dtype == a->dtype) im = &impl[i];
    if (!im) return gn__km_bad_dtype(c, a->dtype);

    gn__km_bcast bc;
    const gn__tensor *ops[2] = {a, b};
    bool report = !(equality && !gn__km_attr_bool(c, "incompatible_shape_error", true));
    gn_status s = gn__km_broadcast(c, 2, ops, &bc, report);
    gn__tensor *o;
    if (s != GN_OK) {
        if (report) return s;
        /* Equal / NotEqual with incompatible_shape_error=false: a scalar */
        GN_TRY(gn__kctx_output(c, 0, GN_DT_BOOL, 0, NULL, &o));
        *(uint8_t *)o->data = equality == 2;
        return GN_OK;
    }
    int32_t odt = to_bool ? GN_DT_BOOL : a->dtype;
    GN_TRY(gn__kctx_output(c, 0, odt, bc.out_rank, bc.out_dims, &o));
    if (bc.numel == 0) return GN_OK;

    row_ctx r;
    r.fn = (c->flags & GN__K_EXACT_MATH) && im->ref ? im->ref : im->fn;
    r.a = a->data;
    r.b = b->data;
    r.o = o->data;
    r.esz = a->dtype == GN_DT_STRING ? sizeof(gn__tstring) : gn__dtype_size(a->dtype);
    r.osz = to_bool ? 1 : r.esz;
    r.done = 0;
    r.err = 0;
    int32_t in = bc.rank - 1;
    r.mode = (bc.stride[0][in] == 0 ? 1 : 0) | (bc.stride[1][in] == 0 ? 2 : 0);
    if (!short_rows(&bc, &r)) gn__km_bcast_rows(&bc, 2, bin_row, &r);
    if (r.err) {
        gn__tensor_release(o);
        if (r.err == ERR_NEG_POW)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "integers to negative integer powers are not allowed");
        return gn__kctx_fail(c, GN_ERR_GRAPH, "integer division by zero");
    }
    return GN_OK;
}

#define BIN_KERNEL(OP, IMPL, TO_BOOL, EQ) \
    gn_status gn__km_##OP(gn__kctx *c) { return run_binary(c, IMPL, GN__ARRAY_LEN(IMPL), TO_BOOL, EQ); }

BIN_KERNEL(Add, add_impl, false, 0)
BIN_KERNEL(AddV2, add_impl, false, 0)
BIN_KERNEL(Sub, sub_impl, false, 0)
BIN_KERNEL(Mul, mul_impl, false, 0)
BIN_KERNEL(Div, div_impl, false, 0)
BIN_KERNEL(RealDiv, realdiv_impl, false, 0)
BIN_KERNEL(TruncateDiv, truncdiv_impl, false, 0)
BIN_KERNEL(FloorDiv, floordiv_impl, false, 0)
BIN_KERNEL(FloorMod, floormod_impl, false, 0)
BIN_KERNEL(TruncateMod, truncmod_impl, false, 0)
BIN_KERNEL(Mod, truncmod_impl, false, 0)
BIN_KERNEL(DivNoNan, divnonan_impl, false, 0)
BIN_KERNEL(MulNoNan, mulnonan_impl, false, 0)
BIN_KERNEL(Maximum, max_impl, false, 0)
BIN_KERNEL(Minimum, min_impl, false, 0)
BIN_KERNEL(Pow, pow_impl, false, 0)
BIN_KERNEL(SquaredDifference, sqdiff_impl, false, 0)
BIN_KERNEL(Atan2, atan2_impl, false, 0)
BIN_KERNEL(Xdivy, xdivy_impl, false, 0)
BIN_KERNEL(Xlogy, xlogy_impl, false, 0)
BIN_KERNEL(Xlog1py, xlog1py_impl, false, 0)
BIN_KERNEL(BitwiseAnd, band_impl, false, 0)
BIN_KERNEL(BitwiseOr, bor_impl, false, 0)
BIN_KERNEL(BitwiseXor, bxor_impl, false, 0)
BIN_KERNEL(LeftShift, shl_impl, false, 0)
BIN_KERNEL(RightShift, shr_impl, false, 0)
BIN_KERNEL(Less, lt_impl, true, 0)
BIN_KERNEL(LessEqual, le_impl, true, 0)
BIN_KERNEL(Greater, gt_impl, true, 0)
BIN_KERNEL(GreaterEqual, ge_impl, true, 0)
BIN_KERNEL(Equal, eq_impl, true, 1)
BIN_KERNEL(NotEqual, ne_impl, true, 2)
BIN_KERNEL(LogicalAnd, land_impl, true, 0)
BIN_KERNEL(LogicalOr, lor_impl, true, 0)

/* ApproximateEqual (approximate_equal_op.cc): |x - y| <= tolerance in T (the
 * kernel's <=, where the op's doc says <), with the float tolerance attr cast
 * to T; no broadcasting (x and y have one shape). TensorFlow's CPU kernel
 * takes float and double. */
gn_status gn__km_ApproximateEqual(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *a = &c->in[0], *b = &c->in[1];
    if (a->dtype != b->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input dtypes %s and %s differ", gn__dtype_name(a->dtype),
                             gn__dtype_name(b->dtype));
    if (a->dtype != GN_DT_F32 && a->dtype != GN_DT_F64) return gn__km_bad_dtype(c, a->dtype);
    bool same = a->rank == b->rank;
    for (int32_t d = 0; same && d < a->rank; d++) same = a->dims[d] == b->dims[d];
    if (!same) {
        char sa[256], sb[256];
        gn__km_shape_str(a->dims, a->rank, sa, sizeof sa);
        gn__km_shape_str(b->dims, b->rank, sb, sizeof sb);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "x and y must be of the same shape. x shape: %s. y shape: %s", sa, sb);
    }
    float tol = gn__km_attr_float(c, "tolerance", 1e-5f);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, GN_DT_BOOL, a->rank, a->dims, &o));
    int64_t n = gn__tensor_numel(a);
    uint8_t *z = o->data;
    if (a->dtype == GN_DT_F32) {
        const float *x = a->data, *y = b->data;
        for (int64_t i = 0; i < n; i++) z[i] = fabsf(x[i] - y[i]) <= tol;
    } else {
        const double *x = a->data, *y = b->data;
        for (int64_t i = 0; i < n; i++) z[i] = fabs(x[i] - y[i]) <= (double)tol;
    }
    return GN_OK;
}
