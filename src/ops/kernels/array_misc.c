/* Array kernels that compute values: Range, LinSpace, ResizeBilinear,
 * ResizeNearestNeighbor, StringJoin, CheckNumerics.
 *
 * After tensorflow/core/kernels/{sequence_ops, resize_bilinear_op,
 * resize_nearest_neighbor_op, image_resizer_state.h, string_join_op,
 * check_numerics_op}.cc: the same arithmetic in the same order (Range
 * accumulates, LinSpace multiplies and ends exactly on stop, resizing scales
 * in float). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/kernels/array_impl.h"
#include "ops/kernels/image.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_BFLOAT16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

static gn_status need_inputs(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static bool scalar_like(const gn__tensor *t)
{
    return t->rank == 0 || (t->rank == 1 && t->dims[0] == 1);
}

/* ---- Range ------------------------------------------------------------------------------ */
gn_status gn__ak_range(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    static const char *const names[3] = {"start", "limit", "delta"};
    char sb[GN__AK_SHAPE_STR];
    int32_t dt = c->in[0].dtype;
    for (int i = 0; i < 3; i++) {
        if (!scalar_like(&c->in[i]))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar, not shape %s", names[i],
                                 gn__ak_tshape(sb, &c->in[i]));
        if (c->in[i].dtype != dt)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s is %s, start is %s", names[i], gn__dtype_name(c->in[i].dtype),
                                 gn__dtype_name(dt));
    }
    int64_t one = 0;
    gn__tensor *t;
    if (dt == DT_INT32 || dt == DT_INT64) {
        int64_t s = gn__ak_int_at(&c->in[0], 0), l = gn__ak_int_at(&c->in[1], 0), d = gn__ak_int_at(&c->in[2], 0);
        if (d == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires delta != 0: %lld", (long long)d);
        if (d > 0 && s > l)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires start <= limit when delta > 0: %lld/%lld", (long long)s,
                                 (long long)l);
        if (d < 0 && s < l)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires start >= limit when delta < 0: %lld/%lld", (long long)s,
                                 (long long)l);
        /* in the tensor's own width, as TensorFlow computes it */
        uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t ad = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
        int64_t size = (int64_t)((span + ad - 1) / ad);
        if (span == 0) size = 0;
        one = size;
        GN_TRY(gn__kctx_output(c, 0, dt, 1, &one, &t));
        if (dt == DT_INT32) {
            int32_t *o = t->data, v = (int32_t)s;
            for (int64_t i = 0; i < size; i++) {
                o[i] = v;
                v = (int32_t)((uint32_t)v + (uint32_t)d);
            }
        } else {
            int64_t *o = t->data, v = s;
            for (int64_t i = 0; i < size; i++) {
                o[i] = v;
                v = (int64_t)((uint64_t)v + (uint64_t)d);
            }
        }
        return GN_OK;
    }
    if (dt != DT_FLOAT && dt != DT_DOUBLE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Range of %s is not supported", gn__dtype_name(dt));
    double s, l, d;
    if (dt == DT_FLOAT) {
        s = ((const float *)c->in[0].data)[0];
        l = ((const float *)c->in[1].data)[0];
        d = ((const float *)c->in[2].data)[0];
    } else {
        s = ((const double *)c->in[0].data)[0];
        l = ((const double *)c->in[1].data)[0];
        d = ((const double *)c->in[2].data)[0];
    }
    if (d == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires delta != 0: %g", d);
    if (d > 0 && !(s <= l))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires start <= limit when delta > 0: %g/%g", s, l);
    if (d < 0 && !(s >= l))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires start >= limit when delta < 0: %g/%g", s, l);
    double sz;
    if (dt == DT_FLOAT) sz = ceilf(fabsf(((float)l - (float)s) / (float)d));
    else sz = ceil(fabs((l - s) / d));
    if (!(sz <= 9.2233720368547758e18))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires ((limit - start) / delta) <= %lld", (long long)INT64_MAX);
    one = (int64_t)sz;
    GN_TRY(gn__kctx_output(c, 0, dt, 1, &one, &t));
    if (dt == DT_FLOAT) {
        float *o = t->data, v = (float)s, fd = (float)d;
        for (int64_t i = 0; i < one; i++) {
            o[i] = v;
            v += fd;
        }
    } else {
        double *o = t->data, v = s;
        for (int64_t i = 0; i < one; i++) {
            o[i] = v;
            v += d;
        }
    }
    return GN_OK;
}

/* ---- LinSpace ------------------------------------------------------------------------------ */
gn_status gn__ak_lin_space(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    char sb[GN__AK_SHAPE_STR];
    static const char *const names[3] = {"start", "stop", "num"};
    for (int i = 0; i < 3; i++)
        if (c->in[i].rank != 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar, not shape %s", names[i],
                                 gn__ak_tshape(sb, &c->in[i]));
    int64_t num;
    GN_TRY(gn__ak_read_scalar_int(c, 2, "num", &num));
    if (num <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires num > 0: %lld", (long long)num);
    int32_t dt = c->in[0].dtype;
    if ((dt != DT_FLOAT && dt != DT_DOUBLE) || c->in[1].dtype != dt)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "LinSpace of %s is not supported", gn__dtype_name(dt));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, dt, 1, &num, &t));
    if (dt == DT_FLOAT) {
        float s = ((const float *)c->in[0].data)[0], e = ((const float *)c->in[1].data)[0], *o = t->data;
        o[0] = s;
        if (num > 1) {
            float step = (e - s) / (float)(num - 1);
            for (int64_t i = 1; i < num - 1; i++) o[i] = s + step * (float)i;
            o[num - 1] = e;
        }
    } else {
        double s = ((const double *)c->in[0].data)[0], e = ((const double *)c->in[1].data)[0], *o = t->data;
        o[0] = s;
        if (num > 1) {
            double step = (e - s) / (double)(num - 1);
            for (int64_t i = 1; i < num - 1; i++) o[i] = s + step * (double)i;
            o[num - 1] = e;
        }
    }
    return GN_OK;
}

/* ---- resizing ------------------------------------------------------------------------------- */
/* Element i of a real tensor as float (Eigen's conversions). */
static bool to_float(const gn__tensor *t, float *dst, int64_t n)
{
    switch (t->dtype) {
#define GN__CV(T)                                                                                                      \
    for (int64_t i = 0; i < n; i++) dst[i] = (float)((const T *)t->data)[i];                                           \
    return true;
    case DT_FLOAT: memcpy(dst, t->data, (size_t)n * sizeof(float)); return true;
    case DT_DOUBLE: GN__CV(double)
    case DT_HALF: GN__CV(gn__f16)
    case DT_INT32: GN__CV(int32_t)
    case DT_INT64: GN__CV(int64_t)
    case TENSORFLOW__DATA_TYPE__DT_INT16: GN__CV(int16_t)
    case TENSORFLOW__DATA_TYPE__DT_INT8: GN__CV(int8_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT8: GN__CV(uint8_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT16: GN__CV(uint16_t)
#undef GN__CV
    case DT_BFLOAT16:
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)((const uint16_t *)t->data)[i] << 16;
            memcpy(&dst[i], &u, 4);
        }
        return true;
    default: return false;
    }
}

typedef struct {
    int64_t lower, upper;
    float lerp;
} interp;

static void interp_weights(int64_t out_size, int64_t in_size, float scale, bool half, interp *w)
{
    w[out_size].lower = w[out_size].upper = 0;
    for (int64_t i = out_size - 1; i >= 0; --i) {
        float in = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
        float in_f = floorf(in);
        w[i].lower = (int64_t)in_f > 0 ? (int64_t)in_f : 0;
        w[i].upper = (int64_t)ceilf(in) < in_size - 1 ? (int64_t)ceilf(in) : in_size - 1;
        w[i].lerp = in - in_f;
    }
}

gn_status gn__ak_resize_bilinear(gn__kctx *c)
{
    gn__resize_state st;
    GN_TRY(gn__resize_validate(c, true, &st));
    const gn__tensor *x = &c->in[0];
    int64_t dims[4] = {st.batch, st.out_h, st.out_w, st.ch};
    int64_t n_in = gn__tensor_numel(x);
    const float *img = x->data;
    float *conv = NULL;
    if (x->dtype != DT_FLOAT) {
        conv = malloc((size_t)(n_in ? n_in : 1) * sizeof *conv);
        if (!conv) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        if (!to_float(x, conv, n_in)) {
            free(conv);
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
        }
        img = conv;
    }
    gn__tensor *t;
    gn_status s = gn__kctx_output(c, 0, DT_FLOAT, 4, dims, &t);
    interp *ys = NULL, *xs = NULL;
    if (s == GN_OK) {
        ys = malloc((size_t)(st.out_h + 1) * sizeof *ys);
        xs = malloc((size_t)(st.out_w + 1) * sizeof *xs);
        if (!ys || !xs) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    if (s == GN_OK && gn__tensor_numel(t)) {
        interp_weights(st.out_h, st.in_h, st.hscale, st.half, ys);
        interp_weights(st.out_w, st.in_w, st.wscale, st.half, xs);
        float *o = t->data;
        int64_t C = st.ch, in_row = st.in_w * C, in_img = st.in_h * in_row;
        for (int64_t b = 0; b < st.batch; b++) {
            const float *im = img + b * in_img;
            for (int64_t y = 0; y < st.out_h; y++) {
                const float *top = im + ys[y].lower * in_row, *bot = im + ys[y].upper * in_row;
                float yl = ys[y].lerp;
                for (int64_t xx = 0; xx < st.out_w; xx++) {
                    int64_t xl = xs[xx].lower * C, xu = xs[xx].upper * C;
                    float xlr = xs[xx].lerp;
                    for (int64_t ch = 0; ch < C; ch++) {
                        float tl = top[xl + ch], tr = top[xu + ch], bl = bot[xl + ch], br = bot[xu + ch];
                        float tv = tl + (tr - tl) * xlr;
                        float bv = bl + (br - bl) * xlr;
                        *o++ = tv + (bv - tv) * yl;
                    }
                }
            }
        }
    }
    free(ys);
    free(xs);
    free(conv);
    return s;
}

static int64_t nn_index(int64_t i, float scale, int64_t in_size, bool align, bool half)
{
    float v = half ? ((float)i + 0.5f) * scale : (float)i * scale;
    int64_t r = align ? (int64_t)roundf(v) : (int64_t)floorf(v);
    if (r > in_size - 1) r = in_size - 1;
    if (half && r < 0) r = 0;
    return r;
}

gn_status gn__ak_resize_nearest_neighbor(gn__kctx *c)
{
    gn__resize_state st;
    GN_TRY(gn__resize_validate(c, true, &st));
    const gn__tensor *x = &c->in[0];
    if (st.in_h >= (1 << 24) || st.in_w >= (1 << 24))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "nearest neighbor requires max height & width of 2^24");
    int64_t dims[4] = {st.batch, st.out_h, st.out_w, st.ch};
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, 4, dims, &o));
    if (o.n) {
        size_t esz = gn__ak_esize(x->dtype), pix = (size_t)st.ch * esz;
        char *dst = o.data;
        const char *src = x->data;
        for (int64_t b = 0; b < st.batch; b++)
            for (int64_t y = 0; y < st.out_h; y++) {
                int64_t iy = nn_index(y, st.hscale, st.in_h, st.align, st.half);
                for (int64_t xx = 0; xx < st.out_w; xx++) {
                    int64_t ix = nn_index(xx, st.wscale, st.in_w, st.align, st.half);
                    memcpy(dst, src + (size_t)((b * st.in_h + iy) * st.in_w + ix) * pix, pix);
                    dst += pix;
                }
            }
    }
    return gn__ak_out_end(c, &o);
}

/* ---- StringJoin --------------------------------------------------------------------------- */
gn_status gn__ak_string_join(gn__kctx *c)
{
    const char *sep = "";
    size_t seplen = 0;
    (void)gn__attr_get_string(c->g, c->node, "separator", &sep, &seplen);
    const gn__tensor *shape = NULL;
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    for (uint32_t i = 0; i < c->n_in; i++) {
        const gn__tensor *x = &c->in[i];
        if (x->dtype != DT_STRING)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s, not string", i, gn__dtype_name(x->dtype));
        if (x->rank == 0) continue;
        if (!shape) {
            shape = x;
            continue;
        }
        bool same = x->rank == shape->rank;
        for (int32_t d = 0; same && d < x->rank; d++) same = x->dims[d] == shape->dims[d];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input shapes do not match: %s vs. %s", gn__ak_tshape(sa, shape),
                                 gn__ak_tshape(sb, x));
    }
    int32_t r = shape ? shape->rank : 0;
    const int64_t *dims = shape ? shape->dims : NULL;
    int64_t n = shape ? gn__tensor_numel(shape) : 1;
    size_t bytes = 0;
    for (int64_t e = 0; e < n; e++)
        for (uint32_t i = 0; i < c->n_in; i++) {
            const gn__tstring *s = c->in[i].data;
            bytes += s[c->in[i].rank ? e : 0].len + (i ? seplen : 0);
        }
    gn__tensor *t;
    char *storage;
    GN_TRY(gn__kctx_output_strings(c, 0, r, dims, bytes, &t, &storage));
    gn__tstring *o = t->data;
    for (int64_t e = 0; e < n; e++) {
        o[e].ptr = storage;
        size_t len = 0;
        for (uint32_t i = 0; i < c->n_in; i++) {
            const gn__tstring *s = &((const gn__tstring *)c->in[i].data)[c->in[i].rank ? e : 0];
            if (i && seplen) {
                memcpy(storage + len, sep, seplen);
                len += seplen;
            }
            if (s->len) memcpy(storage + len, s->ptr, s->len);
            len += s->len;
        }
        o[e].len = len;
        storage += len;
    }
    return GN_OK;
}

/* ---- CheckNumerics, CheckNumericsV2 ------------------------------------------------------------- */
enum { CN_NAN = 1, CN_PINF = 2, CN_NINF = 4 };

/* Ors into `found` the CN_* kinds of the non-finite values of x, an IEEE
 * float stored as T with exponent mask emask, mantissa mask mmask and sign bit sign. */
#define GN__CN_SCAN(T, emask, mmask, sign)                                                                             \
    {                                                                                                                  \
        const T *u = x->data;                                                                                          \
        for (int64_t i = 0; i < n; i++)                                                                                \
            if ((u[i] & (emask)) == (emask)) found |= (u[i] & (mmask)) ? CN_NAN : (u[i] & (sign)) ? CN_NINF : CN_PINF; \
        break;                                                                                                         \
    }

/* TensorFlow's check_numerics_op.cc: v1 reports "Inf", "NaN" or "Inf and
 * NaN"; v2 tells -Inf from +Inf: "-Inf", "+Inf", "NaN" joined as a list
 * ("-Inf and NaN", "-Inf, +Inf, and NaN"). */
static gn_status check_numerics(gn__kctx *c, bool v2)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    int64_t n = gn__tensor_numel(x);
    unsigned found = 0;
    switch (x->dtype) {
    case DT_FLOAT: GN__CN_SCAN(uint32_t, 0x7f800000u, 0x007fffffu, 0x80000000u)
    case DT_DOUBLE: GN__CN_SCAN(uint64_t, 0x7ff0000000000000ull, 0x000fffffffffffffull, 0x8000000000000000ull)
    case DT_HALF: GN__CN_SCAN(uint16_t, 0x7c00u, 0x03ffu, 0x8000u)
    case DT_BFLOAT16: GN__CN_SCAN(uint16_t, 0x7f80u, 0x007fu, 0x8000u)
    default: return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
    }
    if (!found) return gn__kctx_forward(c, 0, 0);
    const char *msg = "";
    size_t mlen = 0;
    (void)gn__attr_get_string(c->g, c->node, "message", &msg, &mlen);
    if (!v2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%.*s : Tensor had %s values", (int)mlen, msg,
                             (found & (CN_PINF | CN_NINF)) ? ((found & CN_NAN) ? "Inf and NaN" : "Inf") : "NaN");
    const char *names[3] = {"", "", ""};
    int k = 0;
    if (found & CN_NINF) names[k++] = "-Inf";
    if (found & CN_PINF) names[k++] = "+Inf";
    if (found & CN_NAN) names[k++] = "NaN";
    if (k == 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "%.*s : Tensor had %s values", (int)mlen, msg, names[0]);
    if (k == 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%.*s : Tensor had %s and %s values", (int)mlen, msg, names[0], names[1]);
    return gn__kctx_fail(c, GN_ERR_GRAPH, "%.*s : Tensor had %s, %s, and %s values", (int)mlen, msg, names[0], names[1],
                         names[2]);
}
#undef GN__CN_SCAN

gn_status gn__ak_check_numerics(gn__kctx *c) { return check_numerics(c, false); }
gn_status gn__ak_check_numerics_v2(gn__kctx *c) { return check_numerics(c, true); }
