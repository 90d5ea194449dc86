/* Gradient kernels of the training graphs the layout optimizer rewrites:
 * Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad, BiasAddGrad,
 * FusedBatchNormGrad/V2/V3, ReluGrad and Relu6Grad, in both data formats
 * (tensorflow/core/kernels/conv_grad_input_ops.cc, conv_grad_filter_ops.cc,
 * maxpooling_op.cc, bias_op.cc, fused_batch_norm_op.cc, relu_op_functor.h).
 *
 * Reference loops, not fast ones: every kernel reads its inputs as double,
 * accumulates in a fixed order and rounds once to the output dtype (float16,
 * float32 or float64). Convolution geometry (SAME / VALID / EXPLICIT padding,
 * strides, dilations) is the forward op's, from gn__nn_window. MaxPoolGrad
 * routes each output gradient to the first maximum of its window in row-major
 * order, as TensorFlow's CPU kernel does. FusedBatchNormGrad takes
 * reserve_space_1 / reserve_space_2 as the batch mean and variance (what the
 * CPU forward op saves) in training mode, the population mean and variance
 * otherwise; its reserve_space outputs are empty. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

static bool float_dt(int32_t dt) { return dt == GN__DT_F16 || dt == GN__DT_F32 || dt == GN__DT_F64; }

/* The input as a fresh double array (caller frees); NULL on a bad dtype or no memory. */
static gn_status read_f64(gn__kctx *c, uint32_t i, double **out)
{
    const gn__tensor *t = &c->in[i];
    if (!float_dt(t->dtype)) return gn__nn_bad_dtype(c, t->dtype);
    int64_t n = gn__tensor_numel(t);
    *out = malloc((size_t)(n > 0 ? n : 1) * sizeof **out);
    if (!*out) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn__nn_to_f64(t->dtype, t->data, *out, n);
    return GN_OK;
}

/* Output k of dtype dt and the given dims from the double array v. */
static gn_status write_f64(gn__kctx *c, uint32_t k, int32_t dt, int32_t rank, const int64_t *dims, const double *v)
{
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, k, dt, rank, dims, &t));
    gn__nn_from_f64(v, dt, t->data, gn__tensor_numel(t));
    return GN_OK;
}

/* 4-D geometry in one data format: element (n, h, w, c) of dims [N, H, W, C]. */
typedef struct geo4 {
    int fmt;
    int64_t n, h, w, c;
} geo4;

static int64_t at4(const geo4 *g, int64_t n, int64_t h, int64_t w, int64_t c)
{
    return g->fmt == GN__NN_NHWC ? ((n * g->h + h) * g->w + w) * g->c + c : ((n * g->c + c) * g->h + h) * g->w + w;
}

static void dims4(const geo4 *g, int64_t *d)
{
    if (g->fmt == GN__NN_NHWC) d[0] = g->n, d[1] = g->h, d[2] = g->w, d[3] = g->c;
    else d[0] = g->n, d[1] = g->c, d[2] = g->h, d[3] = g->w;
}

static gn_status geo_of(gn__kctx *c, int fmt, const gn__tensor *t, const char *what, geo4 *g)
{
    char s[128];
    if (t->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be 4-dimensional: %s", what, gn__nn_shape_str(t, s, sizeof s));
    g->fmt = fmt;
    g->n = t->dims[0];
    g->h = t->dims[fmt == GN__NN_NHWC ? 1 : 2];
    g->w = t->dims[fmt == GN__NN_NHWC ? 2 : 3];
    g->c = t->dims[fmt == GN__NN_NHWC ? 3 : 1];
    return GN_OK;
}

/* ---- convolution gradients ------------------------------------------------------------ */
typedef struct conv_geo {
    geo4 in, out;                 /* input and out_backprop */
    int64_t kh, kw, ci, co;       /* filter [kh, kw, ci, co] */
    int64_t sh, sw, dh, dw, pt, pl;
} conv_geo;

/* Reads strides / dilations / padding for input geometry in (from the sizes
 * or the input tensor) and filter dims f, and checks out_backprop. */
static gn_status conv_setup(gn__kctx *c, geo4 in, const int64_t *f, const gn__tensor *dy, conv_geo *cg)
{
    int pad = 0;
    GN_TRY(gn__nn_attr_padding(c, true, &pad));
    const Tensorflow__AttrValue__ListValue *st = gn__nn_attr_list(c, "strides"), *dl = gn__nn_attr_list(c, "dilations");
    if (!st || st->n_i != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window strides field must specify 4 dimensions");
    if (dl && dl->n_i != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window dilations field must specify 4 dimensions");
    int hi = in.fmt == GN__NN_NHWC ? 1 : 2, wi = hi + 1, ci = in.fmt == GN__NN_NHWC ? 3 : 1;
    if (st->i[0] != 1 || st->i[ci] != 1 || (dl && (dl->i[0] != 1 || dl->i[ci] != 1)))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                             "Current implementation does not yet support strides or dilations in the batch and depth "
                             "dimensions.");
    memset(cg, 0, sizeof *cg);
    cg->in = in;
    cg->kh = f[0], cg->kw = f[1], cg->ci = f[2], cg->co = f[3];
    cg->sh = st->i[hi], cg->sw = st->i[wi];
    cg->dh = dl ? dl->i[hi] : 1, cg->dw = dl ? dl->i[wi] : 1;
    if (cg->ci != in.c)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input depth %lld does not match filter in_depth %lld", (long long)in.c,
                             (long long)cg->ci);
    int64_t pb = 0, pr = 0, oh = 0, ow = 0;
    if (pad == GN__NN_PAD_EXPLICIT) {
        const Tensorflow__AttrValue__ListValue *ep = gn__nn_attr_list(c, "explicit_paddings");
        if (!ep || ep->n_i != 8)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "explicit_paddings attribute must contain 8 values");
        cg->pt = ep->i[2 * hi], pb = ep->i[2 * hi + 1], cg->pl = ep->i[2 * wi], pr = ep->i[2 * wi + 1];
    }
    GN_TRY(gn__nn_window(c, in.h, cg->kh, cg->dh, cg->sh, pad, &cg->pt, &pb, &oh));
    GN_TRY(gn__nn_window(c, in.w, cg->kw, cg->dw, cg->sw, pad, &cg->pl, &pr, &ow));
    GN_TRY(geo_of(c, in.fmt, dy, "out_backprop", &cg->out));
    if (cg->out.n != in.n || cg->out.h != oh || cg->out.w != ow || cg->out.c != cg->co) {
        char s[128];
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "out_backprop %s does not match the forward output (batch %lld, %lldx%lld, depth %lld)",
                             gn__nn_shape_str(dy, s, sizeof s), (long long)in.n, (long long)oh, (long long)ow,
                             (long long)cg->co);
    }
    return GN_OK;
}

/* Visits every (input, filter, output) triple of the convolution. */
#define CONV_LOOP(cg, BODY)                                                                                    \
    for (int64_t b = 0; b < (cg)->in.n; b++)                                                                   \
        for (int64_t oy = 0; oy < (cg)->out.h; oy++)                                                           \
            for (int64_t ox = 0; ox < (cg)->out.w; ox++)                                                       \
                for (int64_t ky = 0; ky < (cg)->kh; ky++) {                                                    \
                    int64_t iy = oy * (cg)->sh - (cg)->pt + ky * (cg)->dh;                                     \
                    if (iy < 0 || iy >= (cg)->in.h) continue;                                                  \
                    for (int64_t kx = 0; kx < (cg)->kw; kx++) {                                                \
                        int64_t ix = ox * (cg)->sw - (cg)->pl + kx * (cg)->dw;                                 \
                        if (ix < 0 || ix >= (cg)->in.w) continue;                                              \
                        for (int64_t i = 0; i < (cg)->ci; i++)                                                 \
                            for (int64_t o = 0; o < (cg)->co; o++) {                                           \
                                int64_t xi = at4(&(cg)->in, b, iy, ix, i), yi = at4(&(cg)->out, b, oy, ox, o); \
                                int64_t wi = ((ky * (cg)->kw + kx) * (cg)->ci + i) * (cg)->co + o;             \
                                BODY;                                                                          \
                            }                                                                                  \
                    }                                                                                          \
                }

static gn_status read_sizes(gn__kctx *c, uint32_t i, const char *what, int64_t *v)
{
    const gn__tensor *t = &c->in[i];
    if ((t->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 && t->dtype != TENSORFLOW__DATA_TYPE__DT_INT64) || t->rank != 1 ||
        t->dims[0] != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a 4-vector of int32 or int64", what);
    for (int k = 0; k < 4; k++)
        v[k] = t->dtype == TENSORFLOW__DATA_TYPE__DT_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
    for (int k = 0; k < 4; k++)
        if (v[k] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s has a negative dimension", what);
    return GN_OK;
}

gn_status gn__nn_k_conv2d_backprop_input(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    int fmt = 0;
    GN_TRY(gn__nn_attr_format(c, false, &fmt));
    int64_t sz[4];
    GN_TRY(read_sizes(c, 0, "input_sizes", sz));
    const gn__tensor *f = &c->in[1], *dy = &c->in[2];
    if (f->rank != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "filter must be 4-dimensional");
    gn__tensor shape = {0};
    shape.rank = 4;
    memcpy(shape.dims, sz, sizeof sz);
    geo4 in = {0};
    GN_TRY(geo_of(c, fmt, &shape, "input_sizes", &in));
    conv_geo cg = {0};
    GN_TRY(conv_setup(c, in, f->dims, dy, &cg));
    double *w = NULL, *g = NULL, *dx = NULL;
    gn_status s = read_f64(c, 1, &w);
    if (s == GN_OK) s = read_f64(c, 2, &g);
    int64_t nx = in.n * in.h * in.w * in.c;
    if (s == GN_OK && !(dx = calloc((size_t)(nx > 0 ? nx : 1), sizeof *dx))) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        CONV_LOOP(&cg, dx[xi] += g[yi] * w[wi]);
        int64_t d[4];
        dims4(&in, d);
        s = write_f64(c, 0, dy->dtype, 4, d, dx);
    }
    free(w);
    free(g);
    free(dx);
    return s;
}

gn_status gn__nn_k_conv2d_backprop_filter(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    int fmt = 0;
    GN_TRY(gn__nn_attr_format(c, false, &fmt));
    int64_t fs[4];
    GN_TRY(read_sizes(c, 1, "filter_sizes", fs));
    geo4 in = {0};
    GN_TRY(geo_of(c, fmt, &c->in[0], "input", &in));
    conv_geo cg = {0};
    GN_TRY(conv_setup(c, in, fs, &c->in[2], &cg));
    double *x = NULL, *g = NULL, *dw = NULL;
    gn_status s = read_f64(c, 0, &x);
    if (s == GN_OK) s = read_f64(c, 2, &g);
    int64_t nw = fs[0] * fs[1] * fs[2] * fs[3];
    if (s == GN_OK && !(dw = calloc((size_t)(nw > 0 ? nw : 1), sizeof *dw))) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        CONV_LOOP(&cg, dw[wi] += x[xi] * g[yi]);
        s = write_f64(c, 0, c->in[2].dtype, 4, fs, dw);
    }
    free(x);
    free(g);
    free(dw);
    return s;
}

/* ---- MaxPoolGrad ------------------------------------------------------------------------ */
gn_status gn__nn_k_max_pool_grad(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    int fmt = 0, pad = 0;
    GN_TRY(gn__nn_attr_format(c, false, &fmt));
    GN_TRY(gn__nn_attr_padding(c, true, &pad));
    const Tensorflow__AttrValue__ListValue *ks = gn__nn_attr_list(c, "ksize"), *st = gn__nn_attr_list(c, "strides");
    if (!ks || ks->n_i != 4 || !st || st->n_i != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window ksize and strides fields must specify 4 dimensions");
    int hi = fmt == GN__NN_NHWC ? 1 : 2, wi = hi + 1, ci = fmt == GN__NN_NHWC ? 3 : 1;
    if (ks->i[0] != 1 || st->i[0] != 1 || ks->i[ci] != 1 || st->i[ci] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "MaxPoolGrad pools only over height and width here");
    geo4 in = {0}, out = {0};
    GN_TRY(geo_of(c, fmt, &c->in[0], "orig_input", &in));
    GN_TRY(geo_of(c, fmt, &c->in[2], "grad", &out));
    int64_t pt = 0, pb = 0, pl = 0, pr = 0, oh = 0, ow = 0;
    if (pad == GN__NN_PAD_EXPLICIT) {
        const Tensorflow__AttrValue__ListValue *ep = gn__nn_attr_list(c, "explicit_paddings");
        if (!ep || ep->n_i != 8)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "explicit_paddings attribute must contain 8 values");
        pt = ep->i[2 * hi], pb = ep->i[2 * hi + 1], pl = ep->i[2 * wi], pr = ep->i[2 * wi + 1];
    }
    GN_TRY(gn__nn_window(c, in.h, ks->i[hi], 1, st->i[hi], pad, &pt, &pb, &oh));
    GN_TRY(gn__nn_window(c, in.w, ks->i[wi], 1, st->i[wi], pad, &pl, &pr, &ow));
    if (out.n != in.n || out.c != in.c || out.h != oh || out.w != ow)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "grad does not have the pooled output's shape");
    double *x = NULL, *g = NULL, *dx = NULL;
    gn_status s = read_f64(c, 0, &x);
    if (s == GN_OK) s = read_f64(c, 2, &g);
    int64_t nx = in.n * in.h * in.w * in.c;
    if (s == GN_OK && !(dx = calloc((size_t)(nx > 0 ? nx : 1), sizeof *dx))) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; s == GN_OK && b < in.n; b++)
        for (int64_t k = 0; k < in.c; k++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    int64_t y0 = oy * st->i[hi] - pt, x0 = ox * st->i[wi] - pl, best = -1;
                    for (int64_t iy = y0 < 0 ? 0 : y0; iy < y0 + ks->i[hi] && iy < in.h; iy++)
                        for (int64_t ix = x0 < 0 ? 0 : x0; ix < x0 + ks->i[wi] && ix < in.w; ix++) {
                            int64_t j = at4(&in, b, iy, ix, k);
                            if (best < 0 || x[j] > x[best]) best = j;
                        }
                    if (best >= 0) dx[best] += g[at4(&out, b, oy, ox, k)];
                }
    if (s == GN_OK) s = write_f64(c, 0, c->in[0].dtype, 4, c->in[0].dims, dx);
    free(x);
    free(g);
    free(dx);
    return s;
}

/* ---- BiasAddGrad ------------------------------------------------------------------------ */
gn_status gn__nn_k_bias_add_grad(gn__kctx *c)
{
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 1 input, got %u", c->n_in);
    const gn__tensor *t = &c->in[0];
    char fs[8];
    gn__nn_attr_str(c, "data_format", "NHWC", fs, sizeof fs);
    if (strcmp(fs, "NHWC") != 0 && strcmp(fs, "NCHW") != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Invalid data format %s", fs);
    if (t->rank < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input tensor must be at least 2D");
    int cd = (!strcmp(fs, "NCHW") && t->rank >= 3) ? 1 : t->rank - 1;
    int64_t outer = 1, inner = 1, ch = t->dims[cd];
    for (int i = 0; i < cd; i++) outer *= t->dims[i];
    for (int i = cd + 1; i < t->rank; i++) inner *= t->dims[i];
    double *x = NULL, *sum = calloc((size_t)(ch > 0 ? ch : 1), sizeof *sum);
    if (!sum) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn_status s = read_f64(c, 0, &x);
    for (int64_t o = 0; s == GN_OK && o < outer; o++)
        for (int64_t k = 0; k < ch; k++)
            for (int64_t i = 0; i < inner; i++) sum[k] += x[(o * ch + k) * inner + i];
    if (s == GN_OK) s = write_f64(c, 0, t->dtype, 1, &ch, sum);
    free(x);
    free(sum);
    return s;
}

/* ---- FusedBatchNormGrad ------------------------------------------------------------------- */
gn_status gn__nn_k_fused_batch_norm_grad(gn__kctx *c)
{
    if (c->n_in < 5) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects at least 5 inputs, got %u", c->n_in);
    int fmt = 0;
    GN_TRY(gn__nn_attr_format(c, false, &fmt));
    geo4 gx = {0}, gy = {0};
    GN_TRY(geo_of(c, fmt, &c->in[0], "y_backprop", &gy));
    GN_TRY(geo_of(c, fmt, &c->in[1], "x", &gx));
    if (gx.n != gy.n || gx.h != gy.h || gx.w != gy.w || gx.c != gy.c)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "x and y_backprop must have the same shape");
    const int64_t ch = gx.c;
    for (uint32_t i = 2; i < 5; i++)
        if (c->in[i].rank != 1 || c->in[i].dims[0] != ch)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "scale, reserve_space_1 and reserve_space_2 must be vectors of %lld",
                                 (long long)ch);
    const bool training = gn__nn_attr_bool(c, "is_training", true);
    const double eps = gn__nn_attr_float(c, "epsilon", 0.0001f);
    double *dy = NULL, *x = NULL, *sc = NULL, *mu = NULL, *var = NULL;
    double *dx = NULL, *acc = calloc((size_t)(4 * ch > 0 ? 4 * ch : 1), sizeof *acc);
    gn_status s = acc ? GN_OK : gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) s = read_f64(c, 0, &dy);
    if (s == GN_OK) s = read_f64(c, 1, &x);
    if (s == GN_OK) s = read_f64(c, 2, &sc);
    if (s == GN_OK) s = read_f64(c, 3, &mu);
    if (s == GN_OK) s = read_f64(c, 4, &var);
    const int64_t nx = gx.n * gx.h * gx.w * ch, per = gx.n * gx.h * gx.w;
    if (s == GN_OK && !(dx = malloc((size_t)(nx > 0 ? nx : 1) * sizeof *dx))) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        double *sum_dy = acc, *sum_dyxc = acc + ch, *dscale = acc + 2 * ch, *doff = acc + 3 * ch;
        for (int64_t b = 0; b < gx.n; b++)
            for (int64_t y = 0; y < gx.h; y++)
                for (int64_t w = 0; w < gx.w; w++)
                    for (int64_t k = 0; k < ch; k++) {
                        int64_t j = at4(&gx, b, y, w, k);
                        sum_dy[k] += dy[j];
                        sum_dyxc[k] += dy[j] * (x[j] - mu[k]);
                    }
        for (int64_t k = 0; k < ch; k++) {
            double inv = 1.0 / sqrt(var[k] + eps);
            dscale[k] = sum_dyxc[k] * inv;
            doff[k] = sum_dy[k];
        }
        for (int64_t b = 0; b < gx.n; b++)
            for (int64_t y = 0; y < gx.h; y++)
                for (int64_t w = 0; w < gx.w; w++)
                    for (int64_t k = 0; k < ch; k++) {
                        int64_t j = at4(&gx, b, y, w, k);
                        double inv = 1.0 / sqrt(var[k] + eps);
                        if (!training || per == 0) dx[j] = dy[j] * sc[k] * inv;
                        else
                            dx[j] = sc[k] * inv *
                                    (dy[j] - sum_dy[k] / (double)per -
                                     (x[j] - mu[k]) * inv * inv * sum_dyxc[k] / (double)per);
                    }
        int64_t zero = 0;
        s = write_f64(c, 0, c->in[0].dtype, 4, c->in[0].dims, dx);
        if (s == GN_OK && c->n_out > 1) s = write_f64(c, 1, c->in[2].dtype, 1, &ch, dscale);
        if (s == GN_OK && c->n_out > 2) s = write_f64(c, 2, c->in[2].dtype, 1, &ch, doff);
        for (uint32_t k = 3; s == GN_OK && k < c->n_out && k < 5; k++) s = write_f64(c, k, c->in[2].dtype, 1, &zero, acc);
    }
    free(dy);
    free(x);
    free(sc);
    free(mu);
    free(var);
    free(dx);
    free(acc);
    return s;
}

/* ---- ReluGrad, Relu6Grad ------------------------------------------------------------------ */
static gn_status relu_grad(gn__kctx *c, double hi)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *g = &c->in[0], *f = &c->in[1];
    int64_t n = gn__tensor_numel(g);
    if (g->rank != f->rank || n != gn__tensor_numel(f) || memcmp(g->dims, f->dims, (size_t)g->rank * sizeof g->dims[0]))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "gradients and features must have the same shape");
    double *gv = NULL, *fv = NULL;
    gn_status s = read_f64(c, 0, &gv);
    if (s == GN_OK) s = read_f64(c, 1, &fv);
    if (s == GN_OK) {
        for (int64_t i = 0; i < n; i++) gv[i] = (fv[i] > 0.0 && fv[i] < hi) ? gv[i] : 0.0;
        s = write_f64(c, 0, g->dtype, g->rank, g->dims, gv);
    }
    free(gv);
    free(fv);
    return s;
}

gn_status gn__nn_k_relu_grad(gn__kctx *c) { return relu_grad(c, INFINITY); }
gn_status gn__nn_k_relu6_grad(gn__kctx *c) { return relu_grad(c, 6.0); }
