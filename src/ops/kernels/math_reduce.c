/* Reductions (Sum, Mean, Prod, Max, Min, All, Any, EuclideanNorm), ArgMax /
 * ArgMin, Softmax / LogSoftmax and Cumsum / Cumprod (TensorFlow's
 * reduction_ops*.cc, argmax_op.cc, softmax_op_functor.h, scan_ops.h).
 *
 * A reduction collapses the input into alternating kept / reduced segments
 * and removes the reduced ones one at a time, innermost first; each step sees
 * the data as [O, R, I] and reduces R. Float sums are pairwise in a fixed
 * order (blocks of rows combined through a binary counter), so the bits do not
 * depend on the machine; other reductions run in index order. float16 and the
 * integer types accumulate in float / int64 / uint64 (integer sums wrap like
 * TensorFlow's). */
#include "ops/kernels/math_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

typedef enum { RK_SUM, RK_MEAN, RK_PROD, RK_MAX, RK_MIN, RK_ALL, RK_ANY, RK_EUCLID } rkind;

/* ---- axes -------------------------------------------------------------------------------- */
/* Reads an axis tensor (scalar or vector, int32/int64) into mask[rank]. */
static gn_status read_axes(gn__kctx *c, const gn__tensor *ax, int32_t rank, bool *mask)
{
    if (ax->dtype != GN_DT_I32 && ax->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "reduction indices must be int32 or int64, not %s",
                             gn__dtype_name(ax->dtype));
    if (ax->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "reduction indices must be a scalar or vector, not rank %d", ax->rank);
    for (int32_t i = 0; i < rank; i++) mask[i] = false;
    int64_t n = gn__tensor_numel(ax);
    for (int64_t k = 0; k < n; k++) {
        int64_t a = gn__km_int_at(ax, k);
        if (a < -rank || a >= rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "invalid reduction dimension %lld for input with %d dimensions",
                                 (long long)a, rank);
        if (a < 0) a += rank;
        if (mask[a]) return gn__kctx_fail(c, GN_ERR_GRAPH, "axes contain duplicate dimension %lld", (long long)a);
        mask[a] = true;
    }
    return GN_OK;
}

/* Reads a scalar axis for ArgMax / Cumsum, normalized to [0, rank). */
static gn_status read_axis(gn__kctx *c, const gn__tensor *ax, int32_t rank, int32_t *axis)
{
    if (ax->dtype != GN_DT_I32 && ax->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be int32 or int64, not %s", gn__dtype_name(ax->dtype));
    if (gn__tensor_numel(ax) != 1 || ax->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be a scalar");
    int64_t a = gn__km_int_at(ax, 0);
    if (a < -rank || a >= rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis %lld is out of range for rank %d", (long long)a, rank);
    *axis = (int32_t)(a < 0 ? a + rank : a);
    return GN_OK;
}

/* [O, R, I] around axis */
static void split3(const gn__tensor *x, int32_t axis, int64_t *o, int64_t *r, int64_t *in)
{
    *o = 1;
    *in = 1;
    for (int32_t i = 0; i < axis; i++) *o *= x->dims[i];
    for (int32_t i = axis + 1; i < x->rank; i++) *in *= x->dims[i];
    *r = x->dims[axis];
}

/* ---- reduction engine ---------------------------------------------------------------------- */
typedef struct rplan {
    int32_t nseg;
    int64_t size[GN__MAX_DIMS];
    bool red[GN__MAX_DIMS];
    int64_t count;     /* input elements per output element */
    int64_t in_numel, out_numel;
} rplan;

static void make_plan(const gn__tensor *x, const bool *mask, rplan *p)
{
    p->nseg = 0;
    p->count = 1;
    p->in_numel = gn__tensor_numel(x);
    p->out_numel = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        if (mask[i]) p->count *= x->dims[i];
        else p->out_numel *= x->dims[i];
        if (x->dims[i] == 1) continue;
        if (p->nseg > 0 && p->red[p->nseg - 1] == mask[i]) {
            p->size[p->nseg - 1] *= x->dims[i];
        } else {
            p->size[p->nseg] = x->dims[i];
            p->red[p->nseg] = mask[i];
            p->nseg++;
        }
    }
}

#define RED_ROWS_BLOCK 8

/* Steps for accumulator type TA: x is [O, R, I] (R >= 1), out is [O, I]. */
#define DEF_STEPS(SFX, TA, ADD, MUL, MAX, MIN)                                                          \
    static void SFX##_fold(int kind, const TA *x, int64_t O, int64_t R, int64_t I, TA *out)            \
    {                                                                                                   \
        for (int64_t o = 0; o < O; o++) {                                                               \
            const TA *xo = x + o * R * I;                                                               \
            TA *oo = out + o * I;                                                                       \
            for (int64_t i = 0; i < I; i++) oo[i] = xo[i];                                              \
            for (int64_t r = 1; r < R; r++) {                                                           \
                const TA *xr = xo + r * I;                                                              \
                switch (kind) {                                                                         \
                case RK_PROD:                                                                           \
                    for (int64_t i = 0; i < I; i++) oo[i] = MUL(oo[i], xr[i]);                          \
                    break;                                                                              \
                case RK_MAX:                                                                            \
                    for (int64_t i = 0; i < I; i++) oo[i] = MAX(oo[i], xr[i]);                          \
                    break;                                                                              \
                case RK_MIN:                                                                            \
                    for (int64_t i = 0; i < I; i++) oo[i] = MIN(oo[i], xr[i]);                          \
                    break;                                                                              \
                default:                                                                                \
                    for (int64_t i = 0; i < I; i++) oo[i] = ADD(oo[i], xr[i]);                          \
                    break;                                                                              \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }

#define IADD(a, b) ((TA_)((uint64_t)(a) + (uint64_t)(b)))
#define IMUL(a, b) ((TA_)((uint64_t)(a) * (uint64_t)(b)))
#define PADD(a, b) ((a) + (b))
#define PMUL(a, b) ((a) * (b))
#define FMAX_(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (b) : (a))
#define FMIN_(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define IMAX_(a, b) ((a) < (b) ? (b) : (a))
#define IMIN_(a, b) ((b) < (a) ? (b) : (a))

#define TA_ float
DEF_STEPS(f32, float, PADD, PMUL, FMAX_, FMIN_)
#undef TA_
#define TA_ double
DEF_STEPS(f64, double, PADD, PMUL, FMAX_, FMIN_)
#undef TA_
#define TA_ int64_t
DEF_STEPS(i64, int64_t, IADD, IMUL, IMAX_, IMIN_)
#undef TA_
#define TA_ uint64_t
DEF_STEPS(u64, uint64_t, IADD, IMUL, IMAX_, IMIN_)
#undef TA_
#define TA_ uint8_t
DEF_STEPS(u8, uint8_t, IADD, IMUL, IMAX_, IMIN_)
#undef TA_

/* Pairwise sums over R for floats: I == 1 rows use the blocked pairwise sum;
 * I > 1 sums blocks of RED_ROWS_BLOCK rows in order and combines block sums
 * through a binary counter (rows[0] is the output row). */
#define DEF_PSUM(SFX, TA, SUMFN)                                                                       \
    static bool SFX##_psum(const TA *x, int64_t O, int64_t R, int64_t I, TA *out)                     \
    {                                                                                                 \
        if (I == 1) {                                                                                 \
            for (int64_t o = 0; o < O; o++) out[o] = SUMFN(x + o * R, R);                             \
            return true;                                                                              \
        }                                                                                             \
        int64_t nb = (R + RED_ROWS_BLOCK - 1) / RED_ROWS_BLOCK;                                       \
        int levels = 1;                                                                               \
        while (((int64_t)1 << (levels - 1)) < nb) levels++;                                           \
        TA *scratch = levels > 1 ? malloc(sizeof(TA) * (size_t)(levels - 1) * (size_t)I) : NULL;      \
        if (levels > 1 && !scratch) return false;                                                     \
        TA *rows[66];                                                                                 \
        for (int64_t o = 0; o < O; o++) {                                                             \
            const TA *xo = x + o * R * I;                                                             \
            rows[0] = out + o * I;                                                                    \
            for (int l = 1; l < levels; l++) rows[l] = scratch + (size_t)(l - 1) * (size_t)I;         \
            int depth = 0;                                                                            \
            int64_t count = 0;                                                                        \
            for (int64_t b = 0; b < nb; b++) {                                                        \
                int64_t r0 = b * RED_ROWS_BLOCK;                                                      \
                int64_t r1 = r0 + RED_ROWS_BLOCK < R ? r0 + RED_ROWS_BLOCK : R;                       \
                TA *s = rows[depth];                                                                  \
                for (int64_t i = 0; i < I; i++) s[i] = xo[r0 * I + i];                                \
                for (int64_t r = r0 + 1; r < r1; r++)                                                 \
                    for (int64_t i = 0; i < I; i++) s[i] += xo[r * I + i];                            \
                for (int64_t cnt = count; cnt & 1; cnt >>= 1) {                                       \
                    TA *p = rows[depth - 1];                                                          \
                    for (int64_t i = 0; i < I; i++) p[i] = p[i] + s[i];                               \
                    s = p;                                                                            \
                    depth--;                                                                          \
                }                                                                                     \
                depth++;                                                                              \
                count++;                                                                              \
            }                                                                                         \
            while (depth > 1) {                                                                       \
                TA *p = rows[depth - 2], *s = rows[depth - 1];                                        \
                for (int64_t i = 0; i < I; i++) p[i] = p[i] + s[i];                                   \
                depth--;                                                                              \
            }                                                                                         \
        }                                                                                             \
        free(scratch);                                                                                \
        return true;                                                                                  \
    }
DEF_PSUM(f32, float, gn__km_sum_f32)
DEF_PSUM(f64, double, gn__km_sum_f64)

/* Runs the plan on src (TA), writing out_numel values to dst. */
#define DEF_RUN(SFX, TA, PSUM)                                                                         \
    static bool SFX##_run(int kind, const TA *src, const rplan *p, TA *dst)                           \
    {                                                                                                 \
        int64_t size[GN__MAX_DIMS];                                                                   \
        bool red[GN__MAX_DIMS];                                                                       \
        int32_t n = p->nseg;                                                                          \
        for (int32_t i = 0; i < n; i++) {                                                             \
            size[i] = p->size[i];                                                                     \
            red[i] = p->red[i];                                                                       \
        }                                                                                             \
        const TA *cur = src;                                                                          \
        TA *owned = NULL;                                                                             \
        bool any = false;                                                                             \
        for (;;) {                                                                                    \
            int32_t j = -1, nred = 0;                                                                 \
            for (int32_t i = 0; i < n; i++)                                                           \
                if (red[i]) {                                                                         \
                    j = i;                                                                            \
                    nred++;                                                                           \
                }                                                                                     \
            if (j < 0) break;                                                                         \
            int64_t O = 1, R = size[j], I = 1;                                                        \
            for (int32_t i = 0; i < j; i++) O *= size[i];                                             \
            for (int32_t i = j + 1; i < n; i++) I *= size[i];                                         \
            TA *out = nred == 1 ? dst : malloc(sizeof(TA) * (size_t)(O * I));                         \
            if (!out) {                                                                               \
                free(owned);                                                                          \
                return false;                                                                         \
            }                                                                                         \
            bool ok = true;                                                                           \
            if (kind == RK_SUM || kind == RK_MEAN || kind == RK_EUCLID) ok = PSUM(cur, O, R, I, out); \
            else SFX##_fold(kind, cur, O, R, I, out);                                                 \
            free(owned);                                                                              \
            owned = out == dst ? NULL : out;                                                          \
            if (!ok) {                                                                                \
                free(owned);                                                                          \
                return false;                                                                         \
            }                                                                                         \
            cur = out;                                                                                \
            size[j] = 1;                                                                              \
            red[j] = false;                                                                           \
            any = true;                                                                               \
        }                                                                                             \
        if (!any) memcpy(dst, src, sizeof(TA) * (size_t)p->out_numel);                                \
        return true;                                                                                  \
    }

static bool ipsum_i64(const int64_t *x, int64_t O, int64_t R, int64_t I, int64_t *out)
{
    i64_fold(RK_SUM, x, O, R, I, out);
    return true;
}
static bool ipsum_u64(const uint64_t *x, int64_t O, int64_t R, int64_t I, uint64_t *out)
{
    u64_fold(RK_SUM, x, O, R, I, out);
    return true;
}
static bool ipsum_u8(const uint8_t *x, int64_t O, int64_t R, int64_t I, uint8_t *out)
{
    u8_fold(RK_SUM, x, O, R, I, out);
    return true;
}
DEF_RUN(f32, float, f32_psum)
DEF_RUN(f64, double, f64_psum)
DEF_RUN(i64, int64_t, ipsum_i64)
DEF_RUN(u64, uint64_t, ipsum_u64)
DEF_RUN(u8, uint8_t, ipsum_u8)

/* ---- reduction kernels ---------------------------------------------------------------------- */
typedef enum { CLS_F32, CLS_F64, CLS_F16, CLS_SI, CLS_UI, CLS_BOOL, CLS_NONE } dclass;

static dclass class_of(int32_t dt)
{
    switch (dt) {
    case GN_DT_F32: return CLS_F32;
    case GN_DT_F64: return CLS_F64;
    case GN_DT_F16: return CLS_F16;
    case GN_DT_I8: case GN_DT_I16: case GN_DT_I32: case GN_DT_I64: return CLS_SI;
    case GN_DT_U8: case GN_DT_U16: case GN_DT_U32: case GN_DT_U64: return CLS_UI;
    case GN_DT_BOOL: return CLS_BOOL;
    default: return CLS_NONE;
    }
}

/* Widens element i of an integer tensor. */
static int64_t si_at(const void *p, int32_t dt, int64_t i)
{
    switch (dt) {
    case GN_DT_I8: return ((const int8_t *)p)[i];
    case GN_DT_I16: return ((const int16_t *)p)[i];
    case GN_DT_I32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

static uint64_t ui_at(const void *p, int32_t dt, int64_t i)
{
    switch (dt) {
    case GN_DT_U8: return ((const uint8_t *)p)[i];
    case GN_DT_U16: return ((const uint16_t *)p)[i];
    case GN_DT_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}

static void si_store(void *p, int32_t dt, int64_t i, int64_t v)
{
    switch (dt) {
    case GN_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case GN_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case GN_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
    }
}

static void ui_store(void *p, int32_t dt, int64_t i, uint64_t v)
{
    switch (dt) {
    case GN_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case GN_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case GN_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}

/* Identity element written into every output when the input is empty. */
static void fill_identity(rkind kind, int32_t dt, void *o, int64_t n)
{
    dclass cl = class_of(dt);
    for (int64_t i = 0; i < n; i++) {
        if (cl == CLS_F32 || cl == CLS_F64 || cl == CLS_F16) {
            double v = kind == RK_PROD ? 1.0 : kind == RK_MAX ? -INFINITY : kind == RK_MIN ? INFINITY
                     : kind == RK_MEAN ? NAN : 0.0;
            if (dt == GN_DT_F32) ((float *)o)[i] = (float)v;
            else if (dt == GN_DT_F64) ((double *)o)[i] = v;
            else ((gn__f16 *)o)[i] = (gn__f16)(float)v;
        } else if (cl == CLS_SI) {
            size_t bits = 8 * gn__dtype_size(dt);
            int64_t lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
            int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
            si_store(o, dt, i, kind == RK_PROD ? 1 : kind == RK_MAX ? lo : kind == RK_MIN ? hi : 0);
        } else if (cl == CLS_UI) {
            ui_store(o, dt, i, kind == RK_PROD ? 1 : kind == RK_MIN ? UINT64_MAX : 0);
        } else {
            ((uint8_t *)o)[i] = kind == RK_ALL;
        }
    }
}

static gn_status reduce(gn__kctx *c, rkind kind)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    dclass cl = class_of(x->dtype);
    bool ok_type = (kind == RK_ALL || kind == RK_ANY) ? cl == CLS_BOOL
                 : kind == RK_EUCLID ? (cl == CLS_F32 || cl == CLS_F64 || cl == CLS_F16)
                 : (cl != CLS_BOOL && cl != CLS_NONE);
    if (!ok_type) return gn__km_bad_dtype(c, x->dtype);
    bool mask[GN__MAX_DIMS];
    GN_TRY(read_axes(c, &c->in[1], x->rank, mask));
    bool keep = gn__km_attr_bool(c, "keep_dims", false);
    int64_t od[GN__MAX_DIMS];
    int32_t orank = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (!mask[i]) od[orank++] = x->dims[i];
        else if (keep) od[orank++] = 1;
    }
    rplan p;
    make_plan(x, mask, &p);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, orank, od, &o));
    if (p.out_numel == 0) return GN_OK;
    if (p.in_numel == 0) {
        fill_identity(kind, x->dtype, o->data, p.out_numel);
        return GN_OK;
    }
    int64_t n = p.in_numel, m = p.out_numel;
    bool ok = true;
    switch (cl) {
    case CLS_F32:
    case CLS_F16: {
        /* float accumulation; squares for EuclideanNorm */
        const float *src = x->data;
        float *tmp_in = NULL, *tmp_out = NULL;
        if (cl == CLS_F16 || kind == RK_EUCLID) {
            tmp_in = malloc(sizeof(float) * (size_t)n);
            if (!tmp_in) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate reduction buffer");
            for (int64_t i = 0; i < n; i++) {
                float v = cl == CLS_F16 ? gn__km_h2f(((const uint16_t *)x->data)[i]) : ((const float *)x->data)[i];
                tmp_in[i] = kind == RK_EUCLID ? v * v : v;
            }
            src = tmp_in;
        }
        bool direct = cl == CLS_F32 && kind != RK_MEAN && kind != RK_EUCLID;
        float *dst = direct ? o->data : (tmp_out = malloc(sizeof(float) * (size_t)m));
        if (!dst) ok = false;
        else ok = f32_run(kind, src, &p, dst);
        if (ok && !direct) {
            for (int64_t i = 0; i < m; i++) {
                float v = dst[i];
                if (kind == RK_MEAN) v = v / (float)p.count;
                else if (kind == RK_EUCLID) v = sqrtf(v);
                if (cl == CLS_F16) ((uint16_t *)o->data)[i] = gn__km_f2h(v);
                else ((float *)o->data)[i] = v;
            }
        }
        free(tmp_in);
        free(tmp_out);
        break;
    }
    case CLS_F64: {
        const double *src = x->data;
        double *tmp_in = NULL;
        if (kind == RK_EUCLID) {
            tmp_in = malloc(sizeof(double) * (size_t)n);
            if (!tmp_in) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate reduction buffer");
            for (int64_t i = 0; i < n; i++) tmp_in[i] = src[i] * src[i];
            src = tmp_in;
        }
        double *dst = o->data;
        ok = f64_run(kind, src, &p, dst);
        if (ok && kind == RK_MEAN)
            for (int64_t i = 0; i < m; i++) dst[i] = dst[i] / (double)p.count;
        if (ok && kind == RK_EUCLID)
            for (int64_t i = 0; i < m; i++) dst[i] = sqrt(dst[i]);
        free(tmp_in);
        break;
    }
    case CLS_SI:
    case CLS_UI: {
        bool sgn = cl == CLS_SI;
        void *src = malloc(8 * (size_t)n), *dst = malloc(8 * (size_t)m);
        if (src && dst) {
            for (int64_t i = 0; i < n; i++) {
                if (sgn) ((int64_t *)src)[i] = si_at(x->data, x->dtype, i);
                else ((uint64_t *)src)[i] = ui_at(x->data, x->dtype, i);
            }
            ok = sgn ? i64_run(kind, src, &p, dst) : u64_run(kind, src, &p, dst);
            for (int64_t i = 0; ok && i < m; i++) {
                if (sgn) {
                    int64_t v = ((int64_t *)dst)[i];
                    si_store(o->data, x->dtype, i, v);
                    /* TensorFlow's integer mean: the wrapped sum divided by the count */
                    if (kind == RK_MEAN) si_store(o->data, x->dtype, i, si_at(o->data, x->dtype, i) / p.count);
                } else {
                    uint64_t v = ((uint64_t *)dst)[i];
                    ui_store(o->data, x->dtype, i, v);
                    if (kind == RK_MEAN)
                        ui_store(o->data, x->dtype, i, ui_at(o->data, x->dtype, i) / (uint64_t)p.count);
                }
            }
        } else {
            ok = false;
        }
        free(src);
        free(dst);
        break;
    }
    case CLS_BOOL:
        ok = u8_run(kind == RK_ALL ? RK_MIN : RK_MAX, x->data, &p, o->data);
        for (int64_t i = 0; ok && i < m; i++) ((uint8_t *)o->data)[i] = ((uint8_t *)o->data)[i] != 0;
        break;
    default:
        break;
    }
    if (!ok) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate reduction buffer");
    return GN_OK;
}

gn_status gn__km_Sum(gn__kctx *c) { return reduce(c, RK_SUM); }
gn_status gn__km_Mean(gn__kctx *c) { return reduce(c, RK_MEAN); }
gn_status gn__km_Prod(gn__kctx *c) { return reduce(c, RK_PROD); }
gn_status gn__km_Max(gn__kctx *c) { return reduce(c, RK_MAX); }
gn_status gn__km_Min(gn__kctx *c) { return reduce(c, RK_MIN); }
gn_status gn__km_All(gn__kctx *c) { return reduce(c, RK_ALL); }
gn_status gn__km_Any(gn__kctx *c) { return reduce(c, RK_ANY); }
gn_status gn__km_EuclideanNorm(gn__kctx *c) { return reduce(c, RK_EUCLID); }

/* ---- ArgMax / ArgMin ------------------------------------------------------------------------------ */
/* First index of the max (min); a NaN beats everything (first NaN wins). */
#define ARG_LOOP(NAME, T, TC, BETTER)                                                                 \
    static void NAME(const void *px, int64_t O, int64_t R, int64_t I, int64_t *idx, TC *best)         \
    {                                                                                                 \
        const T *x = px;                                                                              \
        for (int64_t o = 0; o < O; o++) {                                                             \
            const T *xo = x + o * R * I;                                                              \
            int64_t *io = idx + o * I;                                                                \
            for (int64_t i = 0; i < I; i++) {                                                         \
                best[i] = (TC)xo[i];                                                                  \
                io[i] = 0;                                                                            \
            }                                                                                         \
            for (int64_t r = 1; r < R; r++)                                                           \
                for (int64_t i = 0; i < I; i++) {                                                     \
                    TC v = (TC)xo[r * I + i], b = best[i];                                            \
                    if (BETTER(v, b)) {                                                               \
                        best[i] = v;                                                                  \
                        io[i] = r;                                                                    \
                    }                                                                                 \
                }                                                                                     \
        }                                                                                             \
    }
#define F_GT(v, b) ((v) > (b) || ((v) != (v) && (b) == (b)))
#define F_LT(v, b) ((v) < (b) || ((v) != (v) && (b) == (b)))
#define I_GT(v, b) ((v) > (b))
#define I_LT(v, b) ((v) < (b))

#define DEF_ARG(SFX, CMPF, CMPI)                              \
    ARG_LOOP(SFX##_f32, float, float, CMPF)                   \
    ARG_LOOP(SFX##_f64, double, double, CMPF)                 \
    ARG_LOOP(SFX##_f16, gn__f16, float, CMPF)                 \
    ARG_LOOP(SFX##_i8, int8_t, int64_t, CMPI)                 \
    ARG_LOOP(SFX##_i16, int16_t, int64_t, CMPI)               \
    ARG_LOOP(SFX##_i32, int32_t, int64_t, CMPI)               \
    ARG_LOOP(SFX##_i64, int64_t, int64_t, CMPI)               \
    ARG_LOOP(SFX##_u8, uint8_t, uint64_t, CMPI)               \
    ARG_LOOP(SFX##_u16, uint16_t, uint64_t, CMPI)             \
    ARG_LOOP(SFX##_u32, uint32_t, uint64_t, CMPI)             \
    ARG_LOOP(SFX##_u64, uint64_t, uint64_t, CMPI)
DEF_ARG(amax, F_GT, I_GT)
DEF_ARG(amin, F_LT, I_LT)

static gn_status arg_reduce(gn__kctx *c, bool is_max)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    int32_t odt = gn__km_attr_type(c, "output_type", GN_DT_I64);
    if (odt != GN_DT_I32 && odt != GN_DT_I64 && odt != GN_DT_I16 && odt != GN_DT_U16)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output_type %s is not supported", gn__dtype_name(odt));
    if (x->rank == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least rank 1");
    int32_t axis;
    GN_TRY(read_axis(c, &c->in[1], x->rank, &axis));
    int64_t O, R, I;
    split3(x, axis, &O, &R, &I);
    int64_t od[GN__MAX_DIMS];
    int32_t orank = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (i != axis) od[orank++] = x->dims[i];
    if (R == 0 && O * I > 0) {
        char s[160];
        gn__km_shape_str(x->dims, x->rank, s, sizeof s);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "reduction axis %d is empty in shape %s", axis, s);
    }
    int cls = class_of(x->dtype);
    if (cls == CLS_BOOL || cls == CLS_NONE) return gn__km_bad_dtype(c, x->dtype);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, orank, od, &o));
    int64_t m = O * I;
    if (m == 0) return GN_OK;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)m);
    void *best = malloc(8 * (size_t)I);
    if (!idx || !best) {
        free(idx);
        free(best);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate argmax buffer");
    }
#define ARG_CASE(DT, SFX)                                                                  \
    case DT:                                                                               \
        if (is_max) amax_##SFX(x->data, O, R, I, idx, best);                               \
        else amin_##SFX(x->data, O, R, I, idx, best);                                      \
        break;
    switch (x->dtype) {
        ARG_CASE(GN_DT_F32, f32)
        ARG_CASE(GN_DT_F64, f64)
        ARG_CASE(GN_DT_F16, f16)
        ARG_CASE(GN_DT_I8, i8)
        ARG_CASE(GN_DT_I16, i16)
        ARG_CASE(GN_DT_I32, i32)
        ARG_CASE(GN_DT_I64, i64)
        ARG_CASE(GN_DT_U8, u8)
        ARG_CASE(GN_DT_U16, u16)
        ARG_CASE(GN_DT_U32, u32)
        ARG_CASE(GN_DT_U64, u64)
    default:
        break;
    }
#undef ARG_CASE
    for (int64_t i = 0; i < m; i++) {
        if (odt == GN_DT_I64) ((int64_t *)o->data)[i] = idx[i];
        else if (odt == GN_DT_I32) ((int32_t *)o->data)[i] = (int32_t)idx[i];
        else if (odt == GN_DT_I16) ((int16_t *)o->data)[i] = (int16_t)idx[i];
        else ((uint16_t *)o->data)[i] = (uint16_t)idx[i];
    }
    free(idx);
    free(best);
    return GN_OK;
}

gn_status gn__km_ArgMax(gn__kctx *c) { return arg_reduce(c, true); }
gn_status gn__km_ArgMin(gn__kctx *c) { return arg_reduce(c, false); }

/* ---- Softmax / LogSoftmax -------------------------------------------------------------------------------- */
/* Per row of the last axis: m = max, e = exp(x - m), s = pairwise sum(e);
 * softmax e / s, log-softmax (x - m) - log(s). The reference variant runs in
 * double. */
#define SOFTMAX_ROW(NAME, T, TC, SUM)                                                                   \
    static void NAME(const T *x, T *o, int64_t n, TC *e, bool logsm)                                   \
    {                                                                                                  \
        /* max in 8 lanes (selects only, so it vectorizes); any NaN makes it NaN */                   \
        TC lanes[8];                                                                                   \
        for (int j = 0; j < 8; j++) lanes[j] = (TC)x[0];                                               \
        int nan = 0;                                                                                   \
        int64_t i0 = 0;                                                                                \
        for (; i0 + 8 <= n; i0 += 8)                                                                   \
            for (int j = 0; j < 8; j++) {                                                              \
                TC v = (TC)x[i0 + j];                                                                  \
                lanes[j] = v > lanes[j] ? v : lanes[j];                                                \
                nan |= v != v;                                                                         \
            }                                                                                          \
        for (; i0 < n; i0++) {                                                                         \
            TC v = (TC)x[i0];                                                                          \
            lanes[0] = v > lanes[0] ? v : lanes[0];                                                    \
            nan |= v != v;                                                                             \
        }                                                                                              \
        TC m = lanes[0];                                                                               \
        for (int j = 1; j < 8; j++) m = lanes[j] > m ? lanes[j] : m;                                   \
        if (nan) m = (TC)NAN;                                                                          \
        for (int64_t i = 0; i < n; i++) e[i] = GN_KM_EXP((TC)x[i] - m);                            \
        TC s = SUM(e, n);                                                                              \
        if (logsm) {                                                                                   \
            TC ls = GN_KM_F1(log, s);                                                                  \
            for (int64_t i = 0; i < n; i++) o[i] = (T)(((TC)x[i] - m) - ls);                           \
        } else {                                                                                       \
            for (int64_t i = 0; i < n; i++) o[i] = (T)(e[i] / s);                                      \
        }                                                                                              \
    }
SOFTMAX_ROW(sm_f32, float, float, gn__km_sum_f32)
SOFTMAX_ROW(sm_f32r, float, double, gn__km_sum_f64)
SOFTMAX_ROW(sm_f64, double, double, gn__km_sum_f64)
SOFTMAX_ROW(sm_f16, gn__f16, float, gn__km_sum_f32)
SOFTMAX_ROW(sm_f16r, gn__f16, double, gn__km_sum_f64)

static gn_status softmax(gn__kctx *c, bool logsm)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "logits must have rank >= 1");
    int32_t dt = x->dtype;
    if (dt != GN_DT_F32 && dt != GN_DT_F64 && dt != GN_DT_F16) return gn__km_bad_dtype(c, dt);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, x->rank, x->dims, &o));
    int64_t n = x->dims[x->rank - 1], total = gn__tensor_numel(x);
    if (total == 0) return GN_OK;
    int64_t rows = total / n;
    bool ref = (c->flags & GN__K_EXACT_MATH) != 0;
    void *e = malloc(8 * (size_t)n);
    if (!e) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate softmax buffer");
    for (int64_t r = 0; r < rows; r++) {
        if (dt == GN_DT_F32 && !ref) sm_f32((const float *)x->data + r * n, (float *)o->data + r * n, n, e, logsm);
        else if (dt == GN_DT_F32) sm_f32r((const float *)x->data + r * n, (float *)o->data + r * n, n, e, logsm);
        else if (dt == GN_DT_F64) sm_f64((const double *)x->data + r * n, (double *)o->data + r * n, n, e, logsm);
        else if (!ref) sm_f16((const gn__f16 *)x->data + r * n, (gn__f16 *)o->data + r * n, n, e, logsm);
        else sm_f16r((const gn__f16 *)x->data + r * n, (gn__f16 *)o->data + r * n, n, e, logsm);
    }
    free(e);
    return GN_OK;
}

gn_status gn__km_Softmax(gn__kctx *c) { return softmax(c, false); }
gn_status gn__km_LogSoftmax(gn__kctx *c) { return softmax(c, true); }

/* ---- SoftmaxCrossEntropyWithLogits / SparseSoftmaxCrossEntropyWithLogits -------------------------------------- */
/* xent_op.cc / sparse_xent_op.cc: per row b of logits [B, C], ls = log-softmax
 * (the row function above), loss[b] = -sum_j labels[b, j] ls[j] and
 * backprop[b, j] = softmax[j] - labels[b, j]; the sparse op's labels are one
 * class per row. The dense op broadcasts logits and labels (numpy rules) to
 * a matrix. */
typedef struct xent_in {
    const gn__tensor *lg;
    int64_t B, C, xs0, xs1;   /* logits strides in the [B, C] frame (0: broadcast) */
    const gn__tensor *lb;
    int64_t ls0, ls1;         /* dense labels strides */
    bool sparse;
} xent_in;

#define XENT_ROWS(NAME, T, TC, ROWFN)                                                                        \
    static void NAME(const xent_in *a, T *loss, T *bp, T *row, TC *e)                                       \
    {                                                                                                        \
        const T *x = a->lg->data, *lab = a->sparse ? NULL : (const T *)a->lb->data;                          \
        for (int64_t b = 0; b < a->B; b++) {                                                                 \
            T *o = bp + b * a->C;                                                                            \
            if (a->C == 0) {                                                                                 \
                loss[b] = 0;                                                                                 \
                continue;                                                                                    \
            }                                                                                                \
            const T *xr = x + b * a->xs0;                                                                    \
            if (a->xs1 != 1) {                                                                               \
                for (int64_t j = 0; j < a->C; j++) row[j] = xr[j * a->xs1];                                  \
                xr = row;                                                                                    \
            }                                                                                                \
            ROWFN(xr, o, a->C, e, true);                                                                     \
            if (a->sparse) {                                                                                 \
                int64_t k = gn__km_int_at(a->lb, b);                                                         \
                loss[b] = (T)(-(TC)o[k]);                                                                    \
                for (int64_t j = 0; j < a->C; j++) o[j] = (T)(GN_KM_EXP((TC)o[j]) - (TC)(j == k));           \
            } else {                                                                                         \
                TC l = 0;                                                                                    \
                for (int64_t j = 0; j < a->C; j++) {                                                         \
                    TC y = (TC)lab[b * a->ls0 + j * a->ls1];                                                 \
                    l -= y * (TC)o[j];                                                                       \
                    o[j] = (T)(GN_KM_EXP((TC)o[j]) - y);                                                     \
                }                                                                                            \
                loss[b] = (T)l;                                                                              \
            }                                                                                                \
        }                                                                                                    \
    }
static const char *tshape(char *buf, size_t n, const gn__tensor *t)
{
    gn__km_shape_str(t->dims, t->rank, buf, n);
    return buf;
}

XENT_ROWS(xent_f32, float, float, sm_f32)
XENT_ROWS(xent_f32r, float, double, sm_f32r)
XENT_ROWS(xent_f64, double, double, sm_f64)

static gn_status xent_run(gn__kctx *c, xent_in *a)
{
    int32_t dt = a->lg->dtype;
    gn__tensor *o0, *o1;
    const int64_t dims[2] = {a->B, a->C};
    GN_TRY(gn__kctx_output(c, 0, dt, 1, dims, &o0));
    GN_TRY(gn__kctx_output(c, 1, dt, 2, dims, &o1));
    if (a->B == 0 || a->C == 0) {
        if (a->B) memset(o0->data, 0, (size_t)a->B * gn__dtype_size(dt));
        return GN_OK;
    }
    void *row = malloc(8 * (size_t)a->C), *e = malloc(8 * (size_t)a->C);
    if (!row || !e) {
        free(row);
        free(e);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate softmax buffers");
    }
    if (dt == GN_DT_F64) xent_f64(a, o0->data, o1->data, row, e);
    else if (c->flags & GN__K_EXACT_MATH) xent_f32r(a, o0->data, o1->data, row, e);
    else xent_f32(a, o0->data, o1->data, row, e);
    free(row);
    free(e);
    return GN_OK;
}

gn_status gn__km_SoftmaxCrossEntropyWithLogits(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *lg = &c->in[0], *lb = &c->in[1];
    if (lg->dtype != GN_DT_F32 && lg->dtype != GN_DT_F64) return gn__km_bad_dtype(c, lg->dtype);
    if (lb->dtype != lg->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "labels are %s, logits %s", gn__dtype_name(lb->dtype),
                             gn__dtype_name(lg->dtype));
    int32_t r = lg->rank > lb->rank ? lg->rank : lb->rank;
    int64_t out[GN__MAX_DIMS];
    for (int32_t d = 0; d < r; d++) {
        int32_t i = d - (r - lg->rank), j = d - (r - lb->rank);
        int64_t x = i >= 0 ? lg->dims[i] : 1, y = j >= 0 ? lb->dims[j] : 1;
        if (x != y && x != 1 && y != 1) {
            char s1[64], s2[64];
            return gn__kctx_fail(c, GN_ERR_GRAPH, "logits and labels must be broadcastable: logits_size=%s labels_size=%s",
                                 tshape(s1, sizeof s1, lg), tshape(s2, sizeof s2, lb));
        }
        out[d] = x == 1 ? y : x;
    }
    if (r != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional");
    xent_in a = {.lg = lg, .lb = lb, .B = out[0], .C = out[1]};
    /* strides of a rank <= 2 input in the [B, C] frame: 0 along a missing or size-1 dim */
    int64_t *st[2][2] = {{&a.xs0, &a.xs1}, {&a.ls0, &a.ls1}};
    const gn__tensor *t2[2] = {lg, lb};
    for (int k = 0; k < 2; k++) {
        const gn__tensor *t = t2[k];
        int64_t d0 = t->rank == 2 ? t->dims[0] : 1, d1 = t->rank >= 1 ? t->dims[t->rank - 1] : 1;
        *st[k][0] = d0 == 1 ? 0 : d1;
        *st[k][1] = d1 == 1 ? 0 : 1;
    }
    return xent_run(c, &a);
}

gn_status gn__km_SparseSoftmaxCrossEntropyWithLogits(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *lg = &c->in[0], *lb = &c->in[1];
    char s1[64], s2[64];
    if (lg->dtype != GN_DT_F32 && lg->dtype != GN_DT_F64) return gn__km_bad_dtype(c, lg->dtype);
    if (lb->dtype != GN_DT_I32 && lb->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "labels must be int32 or int64, not %s", gn__dtype_name(lb->dtype));
    if (lg->rank != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "logits must be 2-D, but got shape %s", tshape(s1, sizeof s1, lg));
    if (lb->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "labels must be 1-D, but got shape %s", tshape(s1, sizeof s1, lb));
    if (lg->dims[0] != lb->dims[0])
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "logits and labels must have the same first dimension, got logits shape %s and labels shape %s",
                             tshape(s1, sizeof s1, lg), tshape(s2, sizeof s2, lb));
    if (lg->dims[1] <= 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Must have at least one class, but got logits shape %s",
                             tshape(s1, sizeof s1, lg));
    /* CheckInvalidLabelIndex: the smallest label if it is negative, else the largest */
    int64_t n = lb->dims[0], lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = gn__km_int_at(lb, i);
        if (i == 0 || v < lo) lo = v;
        if (i == 0 || v > hi) hi = v;
    }
    if (n && (lo < 0 || hi >= lg->dims[1])) {
        char vals[512];
        size_t at = 0;
        for (int64_t i = 0; i < n && at < sizeof vals; i++)
            at += (size_t)snprintf(vals + at, sizeof vals - at, "%s%lld", i ? " " : "", (long long)gn__km_int_at(lb, i));
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Received a label value of %lld which is outside the valid range of [0, %lld).  Label values: %s",
                             (long long)(lo < 0 ? lo : hi), (long long)lg->dims[1], vals);
    }
    xent_in a = {.lg = lg, .lb = lb, .B = lg->dims[0], .C = lg->dims[1], .xs0 = lg->dims[1], .xs1 = 1, .sparse = true};
    return xent_run(c, &a);
}

/* ---- Cumsum / Cumprod ------------------------------------------------------------------------------------- */
#define SCAN_LOOP(NAME, T, TA, OPADD, OPMUL)                                                            \
    static void NAME(const void *px, void *po, int64_t O, int64_t R, int64_t I, bool prod, bool excl,   \
                     bool rev, TA *acc)                                                                 \
    {                                                                                                   \
        const T *x = px;                                                                                \
        T *o = po;                                                                                      \
        for (int64_t ob = 0; ob < O; ob++) {                                                            \
            for (int64_t i = 0; i < I; i++) acc[i] = prod ? (TA)1 : (TA)0;                             \
            for (int64_t k = 0; k < R; k++) {                                                           \
                int64_t r = rev ? R - 1 - k : k;                                                        \
                const T *xr = x + (ob * R + r) * I;                                                     \
                T *orow = o + (ob * R + r) * I;                                                         \
                for (int64_t i = 0; i < I; i++) {                                                       \
                    TA v = (TA)xr[i];                                                                   \
                    if (excl) orow[i] = (T)acc[i];                                                      \
                    acc[i] = prod ? OPMUL(acc[i], v) : OPADD(acc[i], v);                                \
                    if (!excl) orow[i] = (T)acc[i];                                                     \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }
#define UADD(a, b) ((a) + (b))
#define UMUL(a, b) ((a) * (b))
SCAN_LOOP(scan_f32, float, float, PADD, PMUL)
SCAN_LOOP(scan_f64, double, double, PADD, PMUL)
SCAN_LOOP(scan_f16, gn__f16, float, PADD, PMUL)
SCAN_LOOP(scan_i8, int8_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_i16, int16_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_i32, int32_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_i64, int64_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_u8, uint8_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_u16, uint16_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_u32, uint32_t, uint64_t, UADD, UMUL)
SCAN_LOOP(scan_u64, uint64_t, uint64_t, UADD, UMUL)

static gn_status scan(gn__kctx *c, bool prod)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    if (x->rank == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least rank 1");
    int32_t axis;
    GN_TRY(read_axis(c, &c->in[1], x->rank, &axis));
    bool excl = gn__km_attr_bool(c, "exclusive", false), rev = gn__km_attr_bool(c, "reverse", false);
    int cls = class_of(x->dtype);
    if (cls == CLS_BOOL || cls == CLS_NONE) return gn__km_bad_dtype(c, x->dtype);
    int64_t O, R, I;
    split3(x, axis, &O, &R, &I);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    if (O * R * I == 0) return GN_OK;
    void *acc = malloc(8 * (size_t)I);
    if (!acc) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scan buffer");
#define SCAN_CASE(DT, SFX) \
    case DT: scan_##SFX(x->data, o->data, O, R, I, prod, excl, rev, acc); break;
    switch (x->dtype) {
        SCAN_CASE(GN_DT_F32, f32)
        SCAN_CASE(GN_DT_F64, f64)
        SCAN_CASE(GN_DT_F16, f16)
        SCAN_CASE(GN_DT_I8, i8)
        SCAN_CASE(GN_DT_I16, i16)
        SCAN_CASE(GN_DT_I32, i32)
        SCAN_CASE(GN_DT_I64, i64)
        SCAN_CASE(GN_DT_U8, u8)
        SCAN_CASE(GN_DT_U16, u16)
        SCAN_CASE(GN_DT_U32, u32)
        SCAN_CASE(GN_DT_U64, u64)
    default:
        break;
    }
#undef SCAN_CASE
    free(acc);
    return GN_OK;
}

gn_status gn__km_Cumsum(gn__kctx *c) { return scan(c, false); }
gn_status gn__km_Cumprod(gn__kctx *c) { return scan(c, true); }
