/* Pooling and LRN: MaxPool, MaxPoolV2 (ksize/strides as inputs),
 * MaxPoolWithArgmax, AvgPool (tensorflow/core/kernels/maxpooling_op.cc,
 * avgpooling_op.cc, pooling_ops_common.cc), LRN (lrn_op.cc) and the windowed
 * copy ExtractImagePatches (extract_image_patches_op.cc).
 *
 * Windows are clipped to the input: MaxPool takes the maximum over the
 * elements inside (padding never wins), AvgPool divides by the number of
 * elements inside, as TensorFlow's Eigen SpatialAvgPooling does for SAME.
 * MaxPool also pools across depth (ksize on C only, window == stride). float16
 * runs in float; float64 in double. */
#include <limits.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

typedef struct pool_params {
    int fmt, pad;
    bool avg;
    int64_t n, h, w, ch;
    int64_t kh, kw, kd, sh, sw, sd;
    int64_t pt, pb, pl, pr;
    int64_t oh, ow, oc;
} pool_params;

static gn_status pool_setup(gn__kctx *c, bool avg, const int64_t *ksize, size_t nk, const int64_t *strides, size_t ns,
                            pool_params *p)
{
    char s1[128];
    const gn__tensor *x = &c->in[0];
    memset(p, 0, sizeof *p);
    p->avg = avg;
    GN_TRY(gn__nn_attr_format(c, false, &p->fmt));
    GN_TRY(gn__nn_attr_padding(c, !avg, &p->pad));
    if (nk != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window ksize field must specify 4 dimensions");
    if (ns != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window stride field must specify 4 dimensions");
    for (int i = 0; i < 4; i++) {
        if (ksize[i] <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window ksize for dimension %d was zero.", i);
        if (strides[i] <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window stride for dimension %d was zero.", i);
    }
    int hi = p->fmt == GN__NN_NHWC ? 1 : 2, wi = hi + 1, ci = p->fmt == GN__NN_NHWC ? 3 : 1;
    if (ksize[0] != 1 || strides[0] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Pooling is not yet supported on the batch dimension.");
    if (x->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "tensor_in must be 4-dimensional: %s", gn__nn_shape_str(x, s1, sizeof s1));
    p->n = x->dims[0];
    p->h = x->dims[hi];
    p->w = x->dims[wi];
    p->ch = x->dims[ci];
    p->kh = ksize[hi];
    p->kw = ksize[wi];
    p->kd = ksize[ci];
    p->sh = strides[hi];
    p->sw = strides[wi];
    p->sd = strides[ci];
    if (p->kd != 1 || p->sd != 1) {
        if (avg) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Pooling is not yet supported on the depth dimension.");
        if (p->kh != 1 || p->kw != 1 || p->sh != 1 || p->sw != 1)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "MaxPooling supports exactly one of pooling across depth or pooling across "
                                 "width/height.");
        if (p->kd != p->sd)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "Depthwise max pooling requires the depth window to equal the depth stride.");
        if (p->ch % p->kd)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "Depthwise max pooling requires the depth window to evenly divide the input depth.");
        p->oh = p->h;
        p->ow = p->w;
        p->oc = p->ch / p->kd;
        return GN_OK;
    }
    if (p->pad == GN__NN_PAD_EXPLICIT) {
        const Tensorflow__AttrValue__ListValue *ep = gn__nn_attr_list(c, "explicit_paddings");
        if (!ep || ep->n_i != 8)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "explicit_paddings attribute must contain 8 values, but got: %zu",
                                 ep ? ep->n_i : (size_t)0);
        for (size_t i = 0; i < 8; i++)
            if (ep->i[i] < 0)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "All explicit padding values must be nonnegative, got %lld",
                                     (long long)ep->i[i]);
        if (ep->i[0] || ep->i[1] || ep->i[2 * ci] || ep->i[2 * ci + 1])
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "Nonzero explicit padding in the batch or depth dimensions is not supported");
        p->pt = ep->i[2 * hi];
        p->pb = ep->i[2 * hi + 1];
        p->pl = ep->i[2 * wi];
        p->pr = ep->i[2 * wi + 1];
    }
    GN_TRY(gn__nn_window(c, p->h, p->kh, 1, p->sh, p->pad, &p->pt, &p->pb, &p->oh));
    GN_TRY(gn__nn_window(c, p->w, p->kw, 1, p->sw, p->pad, &p->pl, &p->pr, &p->ow));
    p->oc = p->ch;
    return GN_OK;
}

/* Spatial pooling of image b in the compute type T (float / double). */
#define GN__NN_POOL(NAME, T, NEG_INF)                                                                   \
    static void NAME(const pool_params *p, const T *x, T *y, T *acc)                                   \
    {                                                                                                  \
        const int64_t h = p->h, w = p->w, ch = p->ch;                                                  \
        for (int64_t b = 0; b < p->n; b++) {                                                           \
            for (int64_t oy = 0; oy < p->oh; oy++) {                                                   \
                int64_t y0 = oy * p->sh - p->pt, y1 = y0 + p->kh;                                      \
                if (y0 < 0) y0 = 0;                                                                    \
                if (y1 > h) y1 = h;                                                                    \
                for (int64_t ox = 0; ox < p->ow; ox++) {                                               \
                    int64_t x0 = ox * p->sw - p->pl, x1 = x0 + p->kw;                                  \
                    if (x0 < 0) x0 = 0;                                                                \
                    if (x1 > w) x1 = w;                                                                \
                    int64_t cnt = (y1 > y0 && x1 > x0) ? (y1 - y0) * (x1 - x0) : 0;                    \
                    if (p->fmt == GN__NN_NHWC) {                                                       \
                        T *out = y + ((b * p->oh + oy) * p->ow + ox) * ch;                             \
                        T *a = p->avg ? acc : out;                                                     \
                        for (int64_t k = 0; k < ch; k++) a[k] = p->avg ? (T)0 : NEG_INF;               \
                        for (int64_t iy = y0; iy < y1; iy++)                                           \
                            for (int64_t ix = x0; ix < x1; ix++) {                                     \
                                const T *in = x + ((b * h + iy) * w + ix) * ch;                        \
                                if (p->avg)                                                            \
                                    for (int64_t k = 0; k < ch; k++) a[k] += in[k];                    \
                                else                                                                   \
                                    for (int64_t k = 0; k < ch; k++) a[k] = in[k] > a[k] ? in[k] : a[k]; \
                            }                                                                          \
                        if (p->avg)                                                                    \
                            for (int64_t k = 0; k < ch; k++) out[k] = a[k] / (T)cnt;                   \
                    } else {                                                                           \
                        for (int64_t k = 0; k < ch; k++) {                                             \
                            const T *plane = x + (b * ch + k) * h * w;                                 \
                            T v = p->avg ? (T)0 : NEG_INF;                                             \
                            for (int64_t iy = y0; iy < y1; iy++)                                       \
                                for (int64_t ix = x0; ix < x1; ix++) {                                 \
                                    T e = plane[iy * w + ix];                                          \
                                    if (p->avg) v += e;                                                \
                                    else v = e > v ? e : v;                                            \
                                }                                                                      \
                            y[((b * ch + k) * p->oh + oy) * p->ow + ox] = p->avg ? v / (T)cnt : v;     \
                        }                                                                              \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }

GN__NN_POOL(pool_f, float, -INFINITY)
GN__NN_POOL(pool_d, double, -(double)INFINITY)

#define GN__NN_DEPTH_POOL(NAME, T, NEG_INF)                                                            \
    static void NAME(const pool_params *p, const T *x, T *y)                                          \
    {                                                                                                 \
        const int64_t hw = p->h * p->w, kd = p->kd, oc = p->oc;                                       \
        for (int64_t b = 0; b < p->n; b++) {                                                          \
            if (p->fmt == GN__NN_NHWC) {                                                              \
                for (int64_t i = 0; i < hw; i++) {                                                    \
                    const T *in = x + (b * hw + i) * p->ch;                                           \
                    T *out = y + (b * hw + i) * oc;                                                   \
                    for (int64_t d = 0; d < oc; d++) {                                                \
                        T v = NEG_INF;                                                                \
                        for (int64_t j = 0; j < kd; j++) v = in[d * kd + j] > v ? in[d * kd + j] : v; \
                        out[d] = v;                                                                   \
                    }                                                                                 \
                }                                                                                     \
            } else {                                                                                  \
                for (int64_t d = 0; d < oc; d++) {                                                    \
                    T *out = y + (b * oc + d) * hw;                                                   \
                    for (int64_t i = 0; i < hw; i++) out[i] = NEG_INF;                                \
                    for (int64_t j = 0; j < kd; j++) {                                                \
                        const T *in = x + (b * p->ch + d * kd + j) * hw;                              \
                        for (int64_t i = 0; i < hw; i++) out[i] = in[i] > out[i] ? in[i] : out[i];    \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }

GN__NN_DEPTH_POOL(depth_pool_f, float, -INFINITY)
GN__NN_DEPTH_POOL(depth_pool_d, double, -(double)INFINITY)

static gn_status pool_run(gn__kctx *c, bool avg, const int64_t *ksize, size_t nk, const int64_t *strides, size_t ns)
{
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects an input");
    const gn__tensor *x = &c->in[0];
    int32_t dt = x->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32 && dt != GN__DT_F64) return gn__nn_bad_dtype(c, dt);
    pool_params p;
    GN_TRY(pool_setup(c, avg, ksize, nk, strides, ns, &p));
    int64_t od[4];
    if (p.fmt == GN__NN_NHWC) od[0] = p.n, od[1] = p.oh, od[2] = p.ow, od[3] = p.oc;
    else od[0] = p.n, od[1] = p.oc, od[2] = p.oh, od[3] = p.ow;
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 4, od, &o));
    bool f64 = dt == GN__DT_F64;
    size_t esz = f64 ? sizeof(double) : sizeof(float);
    int64_t nin = gn__tensor_numel(x), nout = gn__tensor_numel(o);
    void *xbuf = NULL, *ybuf = NULL, *acc = NULL;
    const void *xp = x->data;
    void *yp = o->data;
    gn_status st = GN_OK;
    if (dt == GN__DT_F16) {
        xbuf = malloc((size_t)(nin + 1) * sizeof(float));
        ybuf = malloc((size_t)(nout + 1) * sizeof(float));
        if (!xbuf || !ybuf) goto nomem;
        gn__nn_f16_to_f32(x->data, xbuf, nin);
        xp = xbuf;
        yp = ybuf;
    }
    acc = malloc((size_t)(p.ch + 1) * esz);
    if (!acc) goto nomem;
    if (nout > 0) {
        if (p.kd != 1) {
            if (f64) depth_pool_d(&p, xp, yp);
            else depth_pool_f(&p, xp, yp);
        } else {
            if (f64) pool_d(&p, xp, yp, acc);
            else pool_f(&p, xp, yp, acc);
        }
    }
    if (dt == GN__DT_F16) gn__nn_f32_to_f16(ybuf, o->data, nout);
    goto done;
nomem:
    st = gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
done:
    free(xbuf);
    free(ybuf);
    free(acc);
    return st;
}

static gn_status pool_attrs(gn__kctx *c, bool avg)
{
    const Tensorflow__AttrValue__ListValue *k = gn__nn_attr_list(c, "ksize"), *s = gn__nn_attr_list(c, "strides");
    return pool_run(c, avg, k ? k->i : NULL, k ? k->n_i : 0, s ? s->i : NULL, s ? s->n_i : 0);
}

gn_status gn__nn_k_max_pool(gn__kctx *c)
{
    return pool_attrs(c, false);
}

gn_status gn__nn_k_avg_pool(gn__kctx *c)
{
    return pool_attrs(c, true);
}

static gn_status int_vec(gn__kctx *c, int idx, const char *what, int64_t *out, size_t *n)
{
    if (c->n_in <= (uint32_t)idx) return gn__kctx_fail(c, GN_ERR_GRAPH, "missing input %s", what);
    const gn__tensor *t = &c->in[idx];
    int64_t cnt = gn__tensor_numel(t);
    if (t->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 || t->rank != 1 || cnt > 8)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a vector of 4 int32", what);
    for (int64_t i = 0; i < cnt; i++) out[i] = ((const int32_t *)t->data)[i];
    *n = (size_t)cnt;
    return GN_OK;
}

gn_status gn__nn_k_max_pool_v2(gn__kctx *c)
{
    int64_t k[8], s[8];
    size_t nk = 0, ns = 0;
    GN_TRY(int_vec(c, 1, "ksize", k, &nk));
    GN_TRY(int_vec(c, 2, "strides", s, &ns));
    return pool_run(c, false, k, nk, s, ns);
}

/* ---- MaxPoolWithArgmax ---------------------------------------------------------------- */
/* maxpooling_op.cc SpatialMaxPoolWithArgMaxHelper: NHWC only; each output
 * takes the first element of its window in row-major order, replaced by a
 * later one only when strictly greater (so ties keep the first, and padding
 * never wins). argmax is the flat NHWC index ((b * h + y) * w + x) * c + ch,
 * without the b term unless include_batch_in_index. Values are compared in
 * double (exact for float16/32/64) and copied from the input bit for bit. */
gn_status gn__nn_k_max_pool_with_argmax(gn__kctx *c)
{
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects an input");
    if (c->n_out < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 outputs, got %u", c->n_out);
    const gn__tensor *x = &c->in[0];
    int32_t dt = x->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32 && dt != GN__DT_F64) return gn__nn_bad_dtype(c, dt);
    int am_dt = TENSORFLOW__DATA_TYPE__DT_INT64;
    (void)gn__attr_get_type(c->g, c->node, "Targmax", &am_dt);
    if (am_dt != TENSORFLOW__DATA_TYPE__DT_INT64 && am_dt != TENSORFLOW__DATA_TYPE__DT_INT32)
        return gn__nn_bad_dtype(c, am_dt);
    bool with_batch = gn__nn_attr_bool(c, "include_batch_in_index", false);
    const Tensorflow__AttrValue__ListValue *k = gn__nn_attr_list(c, "ksize"), *st = gn__nn_attr_list(c, "strides");
    pool_params p;
    GN_TRY(pool_setup(c, false, k ? k->i : NULL, k ? k->n_i : 0, st ? st->i : NULL, st ? st->n_i : 0, &p));
    if (p.kd != 1 || p.sd != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "MaxPoolWithArgmax does not pool across depth");
    int64_t od[4] = {p.n, p.oh, p.ow, p.ch};
    gn__tensor *o, *am;
    GN_TRY(gn__kctx_output(c, 0, dt, 4, od, &o));
    GN_TRY(gn__kctx_output(c, 1, am_dt, 4, od, &am));
    int64_t nin = gn__tensor_numel(x);
    if (gn__tensor_numel(o) == 0) return GN_OK;
    double *v = malloc((size_t)(nin + 1) * sizeof *v);
    if (!v) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
    gn__nn_to_f64(dt, x->data, v, nin);
    size_t esz = gn__dtype_size(dt);
    int64_t plane = p.h * p.w * p.ch;
    for (int64_t b = 0; b < p.n; b++)
        for (int64_t oy = 0; oy < p.oh; oy++) {
            int64_t y0 = oy * p.sh - p.pt, y1 = y0 + p.kh;
            if (y0 < 0) y0 = 0;
            if (y1 > p.h) y1 = p.h;
            for (int64_t ox = 0; ox < p.ow; ox++) {
                int64_t x0 = ox * p.sw - p.pl, x1 = x0 + p.kw;
                if (x0 < 0) x0 = 0;
                if (x1 > p.w) x1 = p.w;
                int64_t out = ((b * p.oh + oy) * p.ow + ox) * p.ch;
                for (int64_t ch = 0; ch < p.ch; ch++) {
                    int64_t best = -1;
                    for (int64_t iy = y0; iy < y1; iy++)
                        for (int64_t ix = x0; ix < x1; ix++) {
                            int64_t at = ((b * p.h + iy) * p.w + ix) * p.ch + ch;
                            if (best < 0 || v[best] < v[at]) best = at;
                        }
                    int64_t idx = best < 0 ? -1 : with_batch ? best : best - b * plane;
                    if (best >= 0) memcpy((char *)o->data + (size_t)(out + ch) * esz, (const char *)x->data + (size_t)best * esz, esz);
                    else memset((char *)o->data + (size_t)(out + ch) * esz, 0, esz);
                    if (am_dt == TENSORFLOW__DATA_TYPE__DT_INT64) ((int64_t *)am->data)[out + ch] = idx;
                    else ((int32_t *)am->data)[out + ch] = (int32_t)idx;
                }
            }
        }
    free(v);
    return GN_OK;
}

/* ---- ExtractImagePatches ------------------------------------------------------------- */
/* extract_image_patches_op.cc: output [b, out_rows, out_cols, kr * kc * d],
 * the patch at (r, c) holding input (r * stride - pad_top + i * rate,
 * c * stride - pad_left + j * rate) at depth offset (i * kc + j) * d, zero
 * where that falls outside the image (SAME). Any fixed-size dtype. */
gn_status gn__nn_k_extract_image_patches(gn__kctx *c)
{
    char s1[128];
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects an input");
    const gn__tensor *x = &c->in[0];
    size_t esz = gn__dtype_size(x->dtype);
    if (esz == 0 || x->dtype == TENSORFLOW__DATA_TYPE__DT_STRING) return gn__nn_bad_dtype(c, x->dtype);
    const char *names[3] = {"ksizes", "strides", "rates"};
    int64_t v[3][4];
    for (int i = 0; i < 3; i++) {
        const Tensorflow__AttrValue__ListValue *l = gn__nn_attr_list(c, names[i]);
        if (!l || l->n_i != 4)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window %s field must specify 4 dimensions", names[i]);
        memcpy(v[i], l->i, sizeof v[i]);
        if (v[i][0] != 1 || v[i][3] != 1)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Only support %s across space.", names[i]);
        if (v[i][1] < 1 || v[i][2] < 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be positive, got [%lld,%lld,%lld,%lld]", names[i],
                                 (long long)v[i][0], (long long)v[i][1], (long long)v[i][2], (long long)v[i][3]);
    }
    int pad;
    GN_TRY(gn__nn_attr_padding(c, false, &pad));
    if (x->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 4-dimensional: %s", gn__nn_shape_str(x, s1, sizeof s1));
    int64_t n = x->dims[0], h = x->dims[1], w = x->dims[2], d = x->dims[3];
    int64_t kr = v[0][1], kc = v[0][2], sr = v[1][1], sc = v[1][2], rr = v[2][1], rc = v[2][2];
    int64_t pt = 0, pb = 0, pl = 0, pr = 0, oh, ow;
    GN_TRY(gn__nn_window(c, h, kr, rr, sr, pad, &pt, &pb, &oh));
    GN_TRY(gn__nn_window(c, w, kc, rc, sc, pad, &pl, &pr, &ow));
    int64_t od[4] = {n, oh, ow, kr * kc * d};
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, 4, od, &o));
    if (gn__tensor_numel(o) == 0) return GN_OK;
    size_t row = (size_t)d * esz;
    char *dst = o->data;
    const char *src = x->data;
    for (int64_t b = 0; b < n; b++)
        for (int64_t r = 0; r < oh; r++)
            for (int64_t q = 0; q < ow; q++)
                for (int64_t i = 0; i < kr; i++) {
                    int64_t iy = r * sr - pt + i * rr;
                    for (int64_t j = 0; j < kc; j++, dst += row) {
                        int64_t ix = q * sc - pl + j * rc;
                        if (iy < 0 || iy >= h || ix < 0 || ix >= w) memset(dst, 0, row);
                        else memcpy(dst, src + (size_t)(((b * h + iy) * w + ix) * d) * esz, row);
                    }
                }
    return GN_OK;
}

/* ---- LRN ---------------------------------------------------------------------------- */
gn_status gn__nn_k_lrn(gn__kctx *c)
{
    char s1[128];
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects an input");
    const gn__tensor *x = &c->in[0];
    int32_t dt = x->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32) return gn__nn_bad_dtype(c, dt);
    if (x->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 4-dimensional: %s", gn__nn_shape_str(x, s1, sizeof s1));
    int64_t r = gn__nn_attr_int(c, "depth_radius", 5);
    float bias = gn__nn_attr_float(c, "bias", 1.0f), alpha = gn__nn_attr_float(c, "alpha", 1.0f);
    float beta = gn__nn_attr_float(c, "beta", 0.5f);
    if (r < 0 || r > INT_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "depth_radius = %lld is out of range", (long long)r);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 4, x->dims, &o));
    int64_t n = gn__tensor_numel(x), d = x->dims[3];
    float *buf = NULL;
    const float *xp = x->data;
    float *yp = o->data;
    if (dt == GN__DT_F16) {
        buf = malloc((size_t)(2 * n + 1) * sizeof(float));
        if (!buf) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
        gn__nn_f16_to_f32(x->data, buf, n);
        xp = buf;
        yp = buf + n;
    }
    for (int64_t row = 0; d > 0 && row < n / d; row++) {
        const float *in = xp + row * d;
        float *out = yp + row * d;
        for (int64_t k = 0; k < d; k++) {
            int64_t lo = k - r < 0 ? 0 : k - r, hi = k + r + 1 > d ? d : k + r + 1;
            float s = 0;
            for (int64_t j = lo; j < hi; j++) s += in[j] * in[j];
            float m = bias + alpha * s;
            float f = beta == 1.0f ? 1.0f / m : beta == 0.5f ? 1.0f / sqrtf(m) : powf(m, -beta);
            out[k] = in[k] * f;
        }
    }
    if (buf) gn__nn_f32_to_f16(yp, o->data, n);
    free(buf);
    return GN_OK;
}
