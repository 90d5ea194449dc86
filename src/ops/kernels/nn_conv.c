/* Convolutions: Conv2D (grouped too), DepthwiseConv2dNative, _FusedConv2D and
 * _FusedDepthwiseConv2dNative (tensorflow/core/kernels/conv_ops.cc,
 * conv_ops_fused_impl.h, depthwise_conv_op.cc).
 *
 * Conv2D runs in NHWC in the compute type (NCHW inputs are transposed in and
 * out): a 1x1 stride-1 unpadded convolution is one gemm over the input as a
 * [N*H*W, C] matrix; anything else is im2col over blocks of output pixels
 * (a scratch sized per BLAS thread, reused across blocks) and
 * one gemm per block and group against the HWIO filter seen as a
 * [KH*KW*Cin/G, Cout] matrix. A fused epilogue runs on each block while it is
 * in cache. Depthwise convolution is a direct loop over taps, vectorised over
 * channels, with a fixed order (so it is its own reference path). */
#include <stdlib.h>

#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

/* im2col block: about 512 KB of patches per BLAS thread, so that each
 * thread's share of a block stays in its L2 while the gemm reads it, and
 * blocks large enough that the per-call cost of waking BLAS threads is small. */
#define GN__NN_COL_ELEMS_PER_THREAD ((int64_t)1 << 17)
#define GN__NN_COL_ELEMS_MIN ((int64_t)1 << 18)
#define GN__NN_COL_ELEMS_MAX ((int64_t)1 << 21)

typedef struct conv_params {
    int fmt, pad;
    int64_t n, h, w, cin;        /* input */
    int64_t kh, kw, kc, cout;    /* filter: [kh, kw, kc, cout]; depthwise: cout = multiplier */
    int64_t groups, og;          /* Conv2D groups, output channels per group */
    int64_t sh, sw, dh, dw;
    int64_t pt, pb, pl, pr;
    int64_t oh, ow, oc;          /* output; oc = channels of the output */
} conv_params;

static gn_status conv_attrs(gn__kctx *c, const gn__tensor *in, const gn__tensor *f, bool depthwise, conv_params *p)
{
    char s1[128];
    memset(p, 0, sizeof *p);
    GN_TRY(gn__nn_attr_format(c, false, &p->fmt));
    GN_TRY(gn__nn_attr_padding(c, true, &p->pad));
    const Tensorflow__AttrValue__ListValue *st = gn__nn_attr_list(c, "strides");
    if (!st || st->n_i != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window strides field must specify 4 dimensions");
    int hi = p->fmt == GN__NN_NHWC ? 1 : 2, wi = hi + 1, ci = p->fmt == GN__NN_NHWC ? 3 : 1;
    if (st->i[0] != 1 || st->i[ci] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                             "Current implementation does not yet support strides in the batch and depth dimensions.");
    p->sh = st->i[hi];
    p->sw = st->i[wi];
    const Tensorflow__AttrValue__ListValue *dl = gn__nn_attr_list(c, "dilations");
    p->dh = p->dw = 1;
    if (dl && dl->n_i != 0) {
        if (dl->n_i != 4)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window dilations field must specify 4 dimensions");
        if (dl->i[0] != 1 || dl->i[ci] != 1)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "Current implementation does not yet support dilations in the batch and depth "
                                 "dimensions.");
        p->dh = dl->i[hi];
        p->dw = dl->i[wi];
        if (p->dh <= 0 || p->dw <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dilated rates should be larger than 0.");
    }
    const Tensorflow__AttrValue__ListValue *ep = gn__nn_attr_list(c, "explicit_paddings");
    size_t nep = ep ? ep->n_i : 0;
    if (p->pad == GN__NN_PAD_EXPLICIT) {
        if (nep != 8)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "explicit_paddings attribute must contain 8 values, but got: %zu", nep);
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
    } else if (nep != 0) {
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    if (in->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 4-dimensional: %s", gn__nn_shape_str(in, s1, sizeof s1));
    if (f->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "filter must be 4-dimensional: %s", gn__nn_shape_str(f, s1, sizeof s1));
    p->n = in->dims[0];
    p->h = in->dims[hi];
    p->w = in->dims[wi];
    p->cin = in->dims[ci];
    p->kh = f->dims[0];
    p->kw = f->dims[1];
    p->kc = f->dims[2];
    p->cout = f->dims[3];
    if (depthwise) {
        if (p->cin != p->kc)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input and filter must have the same depth: %lld vs %lld",
                                 (long long)p->cin, (long long)p->kc);
        p->groups = 1;
        p->oc = p->cin * p->cout;
    } else {
        if (p->kc <= 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "filter depth must be stricly positive, got %lld", (long long)p->kc);
        if (p->cin % p->kc)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input depth must be evenly divisible by filter depth: %lld vs %lld",
                                 (long long)p->cin, (long long)p->kc);
        p->groups = p->cin / p->kc;
        if (p->groups == 0 || p->cout % p->groups || p->cout < p->groups)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "output depth must be evenly divisible by number of groups: %lld vs %lld",
                                 (long long)p->cout, (long long)p->groups);
        p->og = p->cout / p->groups;
        p->oc = p->cout;
    }
    GN_TRY(gn__nn_window(c, p->h, p->kh, p->dh, p->sh, p->pad, &p->pt, &p->pb, &p->oh));
    GN_TRY(gn__nn_window(c, p->w, p->kw, p->dw, p->sw, p->pad, &p->pl, &p->pr, &p->ow));
    return GN_OK;
}

/* ---- im2col ------------------------------------------------------------------------ */
/* Rows [p0, p1) of the patch matrix of image x (NHWC, compute type T) for
 * group g: row = output pixel, columns (ky, kx, ci) of K = kh*kw*kc. */
#define GN__NN_IM2COL(NAME, T)                                                                      \
    static void NAME(const conv_params *p, const T *x, int64_t g, int64_t p0, int64_t p1, T *col)     \
    {                                                                                               \
        const int64_t kc = p->kc, kw = p->kw, kh = p->kh, k = kh * kw * kc;                          \
        const int64_t w = p->w, h = p->h, cin = p->cin;                                              \
        const bool whole = p->dw == 1 && p->groups == 1;                                             \
        int64_t oy = p0 / p->ow, ox = p0 % p->ow;                                                    \
        for (int64_t pp = p0; pp < p1; pp++) {                                                       \
            T *row = col + (pp - p0) * k;                                                            \
            const int64_t iy0 = oy * p->sh - p->pt, ix0 = ox * p->sw - p->pl;                        \
            for (int64_t ky = 0; ky < kh; ky++) {                                                    \
                const int64_t iy = iy0 + ky * p->dh;                                                 \
                T *dst = row + ky * kw * kc;                                                         \
                if (iy < 0 || iy >= h) {                                                             \
                    memset(dst, 0, (size_t)(kw * kc) * sizeof(T));                                   \
                    continue;                                                                        \
                }                                                                                    \
                const T *src = x + iy * w * cin + g * kc;                                            \
                if (whole && ix0 >= 0 && ix0 + kw <= w) {                                            \
                    memcpy(dst, src + ix0 * cin, (size_t)(kw * kc) * sizeof(T));                     \
                    continue;                                                                        \
                }                                                                                    \
                for (int64_t kx = 0; kx < kw; kx++) {                                                \
                    const int64_t ix = ix0 + kx * p->dw;                                             \
                    if (ix < 0 || ix >= w) memset(dst + kx * kc, 0, (size_t)kc * sizeof(T));         \
                    else memcpy(dst + kx * kc, src + ix * cin, (size_t)kc * sizeof(T));              \
                }                                                                                    \
            }                                                                                        \
            if (++ox == p->ow) {                                                                     \
                ox = 0;                                                                              \
                oy++;                                                                                \
            }                                                                                        \
        }                                                                                            \
    }

GN__NN_IM2COL(im2col_f, float)
GN__NN_IM2COL(im2col_d, double)

static void gemm_ct(bool f64, const gn__blas *blas, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *b,
                    int64_t ldb, void *cc, int64_t ldc)
{
    if (f64) gn__nn_dgemm(blas, false, false, m, n, k, a, lda, b, ldb, cc, ldc);
    else gn__nn_sgemm(blas, false, false, m, n, k, a, lda, b, ldb, cc, ldc);
}

/* y[N, OH, OW, O] = conv(x[N, H, W, C], w[KH, KW, C/G, O]) in the compute
 * type; epi (may be NULL) runs on each finished block of output pixels. */
static gn_status conv_nhwc(gn__kctx *c, const conv_params *p, bool f64, const void *x, const void *w, void *y,
                           const gn__nn_epi *epi)
{
    const gn__blas *blas = gn__kctx_blas(c);
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t o = p->cout, npix = p->oh * p->ow;
    if (p->n == 0 || npix == 0 || o == 0) return GN_OK;
    if (p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->groups == 1 && p->oh == p->h && p->ow == p->w &&
        p->pt == 0 && p->pl == 0) {
        int64_t rows = p->n * npix;
        int64_t blk = (GN__NN_COL_ELEMS_MAX * 2) / (o > 0 ? o : 1);
        if (blk < 256) blk = 256;
        for (int64_t r0 = 0; r0 < rows; r0 += blk) {
            int64_t r1 = r0 + blk < rows ? r0 + blk : rows;
            gemm_ct(f64, blas, r1 - r0, o, p->cin, (const char *)x + (size_t)(r0 * p->cin) * esz, p->cin, w, o,
                    (char *)y + (size_t)(r0 * o) * esz, o);
            if (epi) gn__nn_epi_apply(epi, y, r0, r1, o, 1);
        }
        return GN_OK;
    }
    const int64_t k = p->kh * p->kw * p->kc;
    if (k == 0) {
        memset(y, 0, (size_t)(p->n * npix * o) * esz);
        if (epi) gn__nn_epi_apply(epi, y, 0, p->n * npix, o, 1);
        return GN_OK;
    }
    int64_t threads = gn__blas_threads(blas);
    if (threads < 1) threads = 1;
    int64_t col_elems = GN__NN_COL_ELEMS_PER_THREAD * threads;
    if (col_elems < GN__NN_COL_ELEMS_MIN) col_elems = GN__NN_COL_ELEMS_MIN;
    if (col_elems > GN__NN_COL_ELEMS_MAX) col_elems = GN__NN_COL_ELEMS_MAX;
    int64_t blk = col_elems / k;
    if (blk < 16) blk = 16;
    if (blk > npix) blk = npix;
    void *col = malloc((size_t)(blk * k) * esz);
    if (!col) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)(blk * k) * esz);
    const int64_t img = p->h * p->w * p->cin;
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t p0 = 0; p0 < npix; p0 += blk) {
            int64_t p1 = p0 + blk < npix ? p0 + blk : npix;
            for (int64_t g = 0; g < p->groups; g++) {
                if (f64) im2col_d(p, (const double *)x + b * img, g, p0, p1, col);
                else im2col_f(p, (const float *)x + b * img, g, p0, p1, col);
                gemm_ct(f64, blas, p1 - p0, p->og, k, col, k, (const char *)w + (size_t)(g * p->og) * esz, o,
                        (char *)y + (size_t)((b * npix + p0) * o + g * p->og) * esz, o);
            }
            if (epi) gn__nn_epi_apply(epi, y, b * npix + p0, b * npix + p1, o, 1);
        }
    }
    free(col);
    return GN_OK;
}

/* ---- depthwise ------------------------------------------------------------------------ */
#define GN__NN_DEPTHWISE(NAME, T)                                                                     \
    static void NAME(const conv_params *p, const T *x, const T *wt, T *y, int64_t b)                    \
    {                                                                                                 \
        const int64_t cin = p->cin, mult = p->cout, oc = p->oc;                                       \
        for (int64_t oy = 0; oy < p->oh; oy++) {                                                      \
            for (int64_t ox = 0; ox < p->ow; ox++) {                                                  \
                T *out = y + ((b * p->oh + oy) * p->ow + ox) * oc;                                    \
                for (int64_t j = 0; j < oc; j++) out[j] = 0;                                          \
                for (int64_t ky = 0; ky < p->kh; ky++) {                                              \
                    const int64_t iy = oy * p->sh - p->pt + ky * p->dh;                               \
                    if (iy < 0 || iy >= p->h) continue;                                               \
                    for (int64_t kx = 0; kx < p->kw; kx++) {                                          \
                        const int64_t ix = ox * p->sw - p->pl + kx * p->dw;                           \
                        if (ix < 0 || ix >= p->w) continue;                                           \
                        const T *in = x + ((b * p->h + iy) * p->w + ix) * cin;                        \
                        const T *f = wt + (ky * p->kw + kx) * oc;                                     \
                        if (mult == 1) {                                                              \
                            for (int64_t ch = 0; ch < cin; ch++) out[ch] += in[ch] * f[ch];           \
                        } else {                                                                      \
                            for (int64_t ch = 0; ch < cin; ch++)                                      \
                                for (int64_t m = 0; m < mult; m++)                                    \
                                    out[ch * mult + m] += in[ch] * f[ch * mult + m];                  \
                        }                                                                             \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }

GN__NN_DEPTHWISE(depthwise_f, float)
GN__NN_DEPTHWISE(depthwise_d, double)

static gn_status depthwise_nhwc(gn__kctx *c, const conv_params *p, bool f64, const void *x, const void *w, void *y,
                                const gn__nn_epi *epi)
{
    (void)c;
    const int64_t npix = p->oh * p->ow;
    for (int64_t b = 0; b < p->n; b++) {
        if (f64) depthwise_d(p, x, w, y, b);
        else depthwise_f(p, x, w, y, b);
        if (epi) gn__nn_epi_apply(epi, y, b * npix, (b + 1) * npix, p->oc, 1);
    }
    return GN_OK;
}

/* ---- driver: layouts, dtypes, epilogue --------------------------------------------------- */
static gn_status conv_run(gn__kctx *c, bool depthwise, bool fused)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects at least 2 inputs, got %u", c->n_in);
    const gn__tensor *in = &c->in[0], *f = &c->in[1];
    int32_t dt = in->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32 && dt != GN__DT_F64) return gn__nn_bad_dtype(c, dt);
    if (f->dtype != dt)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input is %s but filter is %s", gn__dtype_name(dt), gn__dtype_name(f->dtype));
    if (fused) {
        char ff[32];
        gn__nn_attr_str(c, "filter_format", "HWIO", ff, sizeof ff);
        if (strcmp(ff, "HWIO")) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "filter_format '%s' is not supported", ff);
    }
    conv_params p;
    GN_TRY(conv_attrs(c, in, f, depthwise, &p));
    const bool nchw = p.fmt == GN__NN_NCHW, f64 = dt == GN__DT_F64;
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    int64_t od[4];
    if (nchw) {
        od[0] = p.n, od[1] = p.oc, od[2] = p.oh, od[3] = p.ow;
    } else {
        od[0] = p.n, od[1] = p.oh, od[2] = p.ow, od[3] = p.oc;
    }
    gn__tensor oshape = {.rank = 4, .dims = {od[0], od[1], od[2], od[3]}};
    gn__nn_epi epi;
    memset(&epi, 0, sizeof epi);
    if (fused) {
        int64_t nargs = gn__nn_attr_int(c, "num_args", (int64_t)c->n_in - 2);
        if (nargs < 0 || nargs > (int64_t)c->n_in - 2)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "num_args %lld but %u inputs", (long long)nargs, c->n_in);
        GN_TRY(gn__nn_epi_from_fused(c, c->in + 2, (uint32_t)nargs, p.oc, &oshape, dt, &epi));
    }
    gn__tensor *o;
    gn_status st = gn__kctx_output(c, 0, dt, 4, od, &o);
    if (st != GN_OK) {
        gn__nn_epi_free(&epi);
        return st;
    }
    int64_t nin = gn__tensor_numel(in), nf = gn__tensor_numel(f), nout = gn__tensor_numel(o);
    const bool native = dt != GN__DT_F16;   /* the tensors already hold the compute type */
    void *xbuf = NULL, *xtmp = NULL, *wbuf = NULL, *ybuf = NULL, *ytmp = NULL;
    const void *x = in->data, *w = f->data;
    void *y = o->data;
    /* input: compute type, NHWC */
    if (!native) {
        xbuf = malloc((size_t)(nin ? nin : 1) * esz);
        if (!xbuf) goto nomem;
        gn__nn_to_f32(dt, in->data, xbuf, nin);
        x = xbuf;
    }
    if (nchw) {
        xtmp = malloc((size_t)(nin ? nin : 1) * esz);
        if (!xtmp) goto nomem;
        gn__nn_nchw_to_nhwc(x, xtmp, esz, p.n, p.cin, p.h, p.w);
        x = xtmp;
    }
    if (!native) {
        wbuf = malloc((size_t)(nf ? nf : 1) * esz);
        if (!wbuf) goto nomem;
        gn__nn_to_f32(dt, f->data, wbuf, nf);
        w = wbuf;
    }
    /* output: compute type NHWC (the tensor itself when possible) */
    if (nchw || !native) {
        ybuf = malloc((size_t)(nout ? nout : 1) * esz);
        if (!ybuf) goto nomem;
        y = ybuf;
    }
    /* NHWC: the epilogue runs blockwise inside; NCHW: after the transpose */
    const gn__nn_epi *inner_epi = fused && !nchw ? &epi : NULL;
    if (depthwise) st = depthwise_nhwc(c, &p, f64, x, w, y, inner_epi);
    else st = conv_nhwc(c, &p, f64, x, w, y, inner_epi);
    if (st != GN_OK) goto done;
    if (nchw) {
        void *dst = o->data;
        if (!native) {
            ytmp = malloc((size_t)(nout ? nout : 1) * esz);
            if (!ytmp) goto nomem;
            dst = ytmp;
        }
        gn__nn_nhwc_to_nchw(y, dst, esz, p.n, p.oh, p.ow, p.oc);
        if (fused) gn__nn_epi_apply(&epi, dst, 0, p.n, p.oc, p.oh * p.ow);
        if (!native) gn__nn_from_f32(dst, dt, o->data, nout);
    } else if (!native) {
        gn__nn_from_f32(y, dt, o->data, nout);
    }
    goto done;
nomem:
    st = gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
done:
    free(xbuf);
    free(xtmp);
    free(wbuf);
    free(ybuf);
    free(ytmp);
    gn__nn_epi_free(&epi);
    return st;
}

gn_status gn__nn_k_conv2d(gn__kctx *c)
{
    return conv_run(c, false, false);
}

gn_status gn__nn_k_fused_conv2d(gn__kctx *c)
{
    return conv_run(c, false, true);
}

gn_status gn__nn_k_depthwise(gn__kctx *c)
{
    return conv_run(c, true, false);
}

gn_status gn__nn_k_fused_depthwise(gn__kctx *c)
{
    return conv_run(c, true, true);
}
