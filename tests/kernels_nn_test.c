/* CPU kernels of src/ops/kernels/nn*.c: convolutions, products, einsum, bias,
 * batch norm, pooling, LRN and the _Fused* ops.
 *
 * Each test builds a one-node graph from pbtxt (for the attrs), calls the
 * kernel through gn__kernel_for with hand-made input tensors and checks the
 * outputs against a naive implementation written here, or against the
 * unfused sequence of kernels. Tolerances (stated per check):
 *   float32 vs a double-precision naive loop: max |err| <= 1e-5 * (1 + |ref|)
 *   float64 vs naive: 1e-12 * (1 + |ref|)
 *   float16 vs float32 naive: relative L2 <= 1e-2
 *   reference path vs BLAS path (float32): relative L2 < 1e-6
 *   reference path vs a float loop with the same summation order: exact bits
 *   _Fused* vs the unfused kernels (BiasAdd / FusedBatchNormV3, AddV2, the
 *     activation kernel): exact bits for everything but Elu, Tanh, Sigmoid and
 *     Gelu, which are within 1e-6 * (1 + |ref|) of the activation kernel and
 *     of the formula computed here
 *   NCHW vs the transposed NHWC result: exact bits */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/kernel.h"
#include "testutil.h"
#include "passtest.h"

#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I8 TENSORFLOW__DATA_TYPE__DT_INT8


static gn_graph *graph1v(const char *op, int n_in, const char *const *dts, const char *attrs, int validate)
{
    return gn_pt_kgraph(op, n_in, dts, attrs, validate);
}

static gn_graph *graph1(const char *op, int n_in, const char *const *dts, const char *attrs)
{
    return graph1v(op, n_in, dts, attrs, 1);
}

static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    return gn_pt_ktensor(dt, rank, dims, data);
}

static gn_status run_k(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out,
                       uint32_t flags, gn__err *err)
{
    return gn_pt_krun(g, in, n_in, out, n_out, flags, err);
}

static void run_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out, uint32_t flags)
{
    gn_pt_krun_ok(g, in, n_in, out, n_out, flags);
}


static void expect_error(gn_graph *g, const gn__tensor *in, uint32_t n_in, uint32_t n_out, gn_status code,
                         const char *msg)
{
    gn__tensor out[6];
    gn__err err;
    gn_status s = run_k(g, in, n_in, out, n_out, 0, &err);
    gn_pt_krelease(out, n_out);
    if (s != code || strcmp(err.msg, msg)) fail_msg("got (%d) '%s'\nwant (%d) '%s'", s, err.msg, code, msg);
}

/* ---- data and comparisons ---------------------------------------------------------- */
static uint64_t g_rng = 88172645463325252ull;
static float frand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)((double)(g_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static float *rnd(int64_t n)
{
    float *p = malloc((size_t)(n ? n : 1) * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++) p[i] = frand();
    return p;
}

static void expect_close(const float *got, const double *want, int64_t n, double tol, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        if (!(e <= tol * (1.0 + fabs(want[i]))))
            fail_msg("%s: element %lld is %.9g, want %.9g", what, (long long)i, got[i], want[i]);
    }
}

static void expect_same(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)))
            fail_msg("%s: element %lld is %.9g, want exactly %.9g", what, (long long)i, got[i], want[i]);
}

static double rel_l2_f(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void to_nchw(const float *src, float *dst, int64_t n, int64_t h, int64_t w, int64_t c)
{
    for (int64_t b = 0; b < n; b++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++)
                for (int64_t k = 0; k < c; k++) dst[((b * c + k) * h + y) * w + x] = src[((b * h + y) * w + x) * c + k];
}

/* ---- naive convolution ------------------------------------------------------------- */
typedef struct cfg {
    int64_t n, h, w, c, kh, kw, kc, o;
    int64_t sh, sw, dh, dw;
    const char *pad;
    int64_t ep[4];   /* EXPLICIT: top, bottom, left, right */
    int64_t oh, ow, pt, pl;
} cfg;

static void out_dim(const char *pad, int64_t in, int64_t k, int64_t d, int64_t s, int64_t eb, int64_t ea, int64_t *out,
                    int64_t *pb)
{
    int64_t eff = (k - 1) * d + 1;
    if (!strcmp(pad, "VALID")) {
        *out = (in - eff) / s + 1;
        *pb = 0;
    } else if (!strcmp(pad, "SAME")) {
        *out = (in + s - 1) / s;
        int64_t need = (*out - 1) * s + eff - in;
        *pb = need > 0 ? need / 2 : 0;
    } else {
        *out = (in + eb + ea - eff) / s + 1;
        *pb = eb;
    }
}

static void cfg_finish(cfg *p)
{
    out_dim(p->pad, p->h, p->kh, p->dh, p->sh, p->ep[0], p->ep[1], &p->oh, &p->pt);
    out_dim(p->pad, p->w, p->kw, p->dw, p->sw, p->ep[2], p->ep[3], &p->ow, &p->pl);
}

/* NHWC conv in double; depthwise: o is the multiplier. */
static double *naive_conv(const cfg *p, const float *x, const float *f, bool depthwise)
{
    int64_t oc = depthwise ? p->c * p->o : p->o, groups = depthwise ? 1 : p->c / p->kc, og = p->o / groups;
    double *y = calloc((size_t)(p->n * p->oh * p->ow * oc + 1), sizeof *y);
    assert_non_null(y);
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < p->oh; oy++)
            for (int64_t ox = 0; ox < p->ow; ox++)
                for (int64_t k = 0; k < oc; k++) {
                    double acc = 0;
                    for (int64_t ky = 0; ky < p->kh; ky++)
                        for (int64_t kx = 0; kx < p->kw; kx++) {
                            int64_t iy = oy * p->sh - p->pt + ky * p->dh, ix = ox * p->sw - p->pl + kx * p->dw;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                            const float *in = x + ((b * p->h + iy) * p->w + ix) * p->c;
                            if (depthwise) {
                                int64_t ci = k / p->o, m = k % p->o;
                                acc += (double)in[ci] * f[((ky * p->kw + kx) * p->c + ci) * p->o + m];
                            } else {
                                int64_t g = k / og;
                                for (int64_t ci = 0; ci < p->kc; ci++)
                                    acc += (double)in[g * p->kc + ci] * f[((ky * p->kw + kx) * p->kc + ci) * p->o + k];
                            }
                        }
                    y[((b * p->oh + oy) * p->ow + ox) * oc + k] = acc;
                }
    return y;
}

static const char *conv_attrs(const cfg *p, const char *fmt, const char *t, char *buf, size_t n)
{
    bool nchw = !strcmp(fmt, "NCHW");
    size_t pos = (size_t)snprintf(buf, n, "attr { key: 'T' value { type: %s } } attr { key: 'data_format' value { s: '%s' } } ",
                                  t, fmt);
    if (nchw)
        pos += (size_t)snprintf(buf + pos, n - pos,
                                "attr { key: 'strides' value { list { i: 1 i: 1 i: %lld i: %lld } } } "
                                "attr { key: 'dilations' value { list { i: 1 i: 1 i: %lld i: %lld } } } ",
                                (long long)p->sh, (long long)p->sw, (long long)p->dh, (long long)p->dw);
    else
        pos += (size_t)snprintf(buf + pos, n - pos,
                                "attr { key: 'strides' value { list { i: 1 i: %lld i: %lld i: 1 } } } "
                                "attr { key: 'dilations' value { list { i: 1 i: %lld i: %lld i: 1 } } } ",
                                (long long)p->sh, (long long)p->sw, (long long)p->dh, (long long)p->dw);
    pos += (size_t)snprintf(buf + pos, n - pos, "attr { key: 'padding' value { s: '%s' } } ", p->pad);
    if (!strcmp(p->pad, "EXPLICIT")) {
        if (nchw)
            snprintf(buf + pos, n - pos,
                     "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 0 i: 0 i: %lld i: %lld i: %lld i: %lld } } }",
                     (long long)p->ep[0], (long long)p->ep[1], (long long)p->ep[2], (long long)p->ep[3]);
        else
            snprintf(buf + pos, n - pos,
                     "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: %lld i: %lld i: %lld i: %lld i: 0 i: 0 } } }",
                     (long long)p->ep[0], (long long)p->ep[1], (long long)p->ep[2], (long long)p->ep[3]);
    }
    return buf;
}

/* Runs op (Conv2D / DepthwiseConv2dNative) in NHWC and NCHW, checks NHWC
 * against the naive loop and NCHW against the transposed NHWC result. */
static void check_conv(const char *op, const cfg *p, bool depthwise, uint32_t flags)
{
    char at[2048];
    int64_t oc = depthwise ? p->c * p->o : p->o;
    int64_t nx = p->n * p->h * p->w * p->c, nf = p->kh * p->kw * p->kc * p->o, ny = p->n * p->oh * p->ow * oc;
    float *x = rnd(nx), *f = rnd(nf);
    double *want = naive_conv(p, x, f, depthwise);
    int64_t xd[4] = {p->n, p->h, p->w, p->c}, fd[4] = {p->kh, p->kw, p->kc, p->o};
    gn__tensor in[2] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 4, fd, f)}, out[1];
    gn_graph *g = graph1(op, 2, NULL, conv_attrs(p, "NHWC", "DT_FLOAT", at, sizeof at));
    run_ok(g, in, 2, out, 1, flags);
    assert_int_equal(out[0].rank, 4);
    assert_int_equal(out[0].dims[0], p->n);
    assert_int_equal(out[0].dims[1], p->oh);
    assert_int_equal(out[0].dims[2], p->ow);
    assert_int_equal(out[0].dims[3], oc);
    char what[256];
    snprintf(what, sizeof what, "%s %s s%lld d%lld k%lldx%lld NHWC", op, p->pad, (long long)p->sh, (long long)p->dh,
             (long long)p->kh, (long long)p->kw);
    expect_close(out[0].data, want, ny, 1e-5, what);
    gn_graph_free(g);
    /* NCHW */
    float *xc = malloc((size_t)nx * sizeof *xc), *yt = malloc((size_t)ny * sizeof *yt);
    assert_true(xc && yt);
    to_nchw(x, xc, p->n, p->h, p->w, p->c);
    to_nchw(out[0].data, yt, p->n, p->oh, p->ow, oc);
    int64_t xcd[4] = {p->n, p->c, p->h, p->w};
    gn__tensor in2[2] = {tens(DT_F32, 4, xcd, xc), tens(DT_F32, 4, fd, f)}, out2[1];
    g = graph1(op, 2, NULL, conv_attrs(p, "NCHW", "DT_FLOAT", at, sizeof at));
    run_ok(g, in2, 2, out2, 1, flags);
    assert_int_equal(out2[0].dims[1], oc);
    assert_int_equal(out2[0].dims[2], p->oh);
    snprintf(what + strlen(what) - 4, 8, "NCHW");
    expect_same(out2[0].data, yt, ny, what);
    gn_graph_free(g);
    gn_pt_krelease(out, 1);
    gn_pt_krelease(out2, 1);
    free(x);
    free(f);
    free(xc);
    free(yt);
    free(want);
}

static void test_conv2d_variants(void **state)
{
    (void)state;
    const char *pads[3] = {"SAME", "VALID", "EXPLICIT"};
    for (int pi = 0; pi < 3; pi++)
        for (int s = 1; s <= 2; s++)
            for (int d = 1; d <= 2; d++) {
                cfg p = {.n = 2, .h = 9, .w = 8, .c = 3, .kh = 3, .kw = 2, .kc = 3, .o = 5,
                         .sh = s, .sw = s, .dh = d, .dw = d, .pad = pads[pi], .ep = {1, 2, 0, 1}};
                cfg_finish(&p);
                check_conv("Conv2D", &p, false, 0);
                check_conv("Conv2D", &p, false, GN__K_REFERENCE);
            }
    /* 1x1 as a plain gemm, 1x1 strided, grouped, stride 1 vs 3 mixed */
    cfg a = {.n = 2, .h = 5, .w = 7, .c = 6, .kh = 1, .kw = 1, .kc = 6, .o = 4, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "SAME"};
    cfg_finish(&a);
    check_conv("Conv2D", &a, false, 0);
    cfg b = a;
    b.sh = 2;
    b.sw = 3;
    b.pad = "VALID";
    cfg_finish(&b);
    check_conv("Conv2D", &b, false, 0);
    cfg gr = {.n = 1, .h = 6, .w = 6, .c = 8, .kh = 3, .kw = 3, .kc = 4, .o = 6, .sh = 1, .sw = 2, .dh = 1, .dw = 1, .pad = "SAME"};
    cfg_finish(&gr);
    check_conv("Conv2D", &gr, false, 0);
    check_conv("Conv2D", &gr, false, GN__K_REFERENCE);
    /* large enough for several im2col blocks */
    cfg big = {.n = 1, .h = 70, .w = 90, .c = 16, .kh = 3, .kw = 3, .kc = 16, .o = 8, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
               .pad = "SAME"};
    cfg_finish(&big);
    check_conv("Conv2D", &big, false, 0);
}

static void test_depthwise(void **state)
{
    (void)state;
    const char *pads[3] = {"SAME", "VALID", "EXPLICIT"};
    for (int pi = 0; pi < 3; pi++)
        for (int s = 1; s <= 2; s++)
            for (int d = 1; d <= 2; d++)
                for (int m = 1; m <= 2; m++) {
                    cfg p = {.n = 2, .h = 7, .w = 8, .c = 3, .kh = 3, .kw = 3, .kc = 3, .o = m,
                             .sh = s, .sw = s, .dh = d, .dw = d, .pad = pads[pi], .ep = {2, 0, 1, 1}};
                    cfg_finish(&p);
                    check_conv("DepthwiseConv2dNative", &p, true, 0);
                }
}

/* The reference path sums in (ky, kx, ci) order from 0 in float: the same
 * bits as this loop. BLAS agrees within relative L2 1e-6. */
static void test_conv2d_reference_path(void **state)
{
    (void)state;
    cfg p = {.n = 2, .h = 23, .w = 19, .c = 24, .kh = 3, .kw = 3, .kc = 24, .o = 40, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
             .pad = "SAME"};
    cfg_finish(&p);
    int64_t nx = p.n * p.h * p.w * p.c, nf = p.kh * p.kw * p.c * p.o, ny = p.n * p.oh * p.ow * p.o;
    float *x = rnd(nx), *f = rnd(nf), *want = malloc((size_t)ny * sizeof *want);
    assert_non_null(want);
    for (int64_t b = 0; b < p.n; b++)
        for (int64_t oy = 0; oy < p.oh; oy++)
            for (int64_t ox = 0; ox < p.ow; ox++)
                for (int64_t k = 0; k < p.o; k++) {
                    float acc = 0;
                    for (int64_t ky = 0; ky < p.kh; ky++)
                        for (int64_t kx = 0; kx < p.kw; kx++) {
                            int64_t iy = oy - p.pt + ky, ix = ox - p.pl + kx;
                            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                            for (int64_t ci = 0; ci < p.c; ci++)
                                acc += x[((b * p.h + iy) * p.w + ix) * p.c + ci] * f[((ky * p.kw + kx) * p.c + ci) * p.o + k];
                        }
                    want[((b * p.oh + oy) * p.ow + ox) * p.o + k] = acc;
                }
    char at[2048];
    int64_t xd[4] = {p.n, p.h, p.w, p.c}, fd[4] = {p.kh, p.kw, p.c, p.o};
    gn__tensor in[2] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 4, fd, f)}, ref[1], blas[1];
    gn_graph *g = graph1("Conv2D", 2, NULL, conv_attrs(&p, "NHWC", "DT_FLOAT", at, sizeof at));
    run_ok(g, in, 2, ref, 1, GN__K_REFERENCE);
    run_ok(g, in, 2, blas, 1, 0);
    for (int64_t i = 0; i < ny; i++)
        if (((float *)ref[0].data)[i] != want[i]) fail_msg("reference conv element %lld differs", (long long)i);
    double e = rel_l2_f(blas[0].data, ref[0].data, ny);
    if (!(e < 1e-6)) fail_msg("BLAS vs reference conv: relative L2 %g", e);
    gn_graph_free(g);
    gn_pt_krelease(ref, 1);
    gn_pt_krelease(blas, 1);
    free(x);
    free(f);
    free(want);
}

static void test_conv2d_f16_f64(void **state)
{
    (void)state;
    cfg p = {.n = 1, .h = 10, .w = 9, .c = 4, .kh = 3, .kw = 3, .kc = 4, .o = 6, .sh = 2, .sw = 1, .dh = 1, .dw = 2,
             .pad = "SAME"};
    cfg_finish(&p);
    int64_t nx = p.n * p.h * p.w * p.c, nf = p.kh * p.kw * p.c * p.o, ny = p.n * p.oh * p.ow * p.o;
    float *x = rnd(nx), *f = rnd(nf);
    gn__f16 *xh = malloc((size_t)nx * 2), *fh = malloc((size_t)nf * 2);
    double *xd64 = malloc((size_t)nx * 8), *fd64 = malloc((size_t)nf * 8);
    assert_true(xh && fh && xd64 && fd64);
    for (int64_t i = 0; i < nx; i++) {
        xh[i] = (gn__f16)x[i];
        x[i] = (float)xh[i];
        xd64[i] = x[i];
    }
    for (int64_t i = 0; i < nf; i++) {
        fh[i] = (gn__f16)f[i];
        f[i] = (float)fh[i];
        fd64[i] = f[i];
    }
    double *want = naive_conv(&p, x, f, false);
    char at[2048];
    int64_t xd[4] = {p.n, p.h, p.w, p.c}, fdim[4] = {p.kh, p.kw, p.c, p.o};
    /* float16: relative L2 <= 1e-2 */
    gn__tensor in[2] = {tens(DT_F16, 4, xd, xh), tens(DT_F16, 4, fdim, fh)}, out[1];
    gn_graph *g = graph1("Conv2D", 2, (const char *[]){"DT_HALF", "DT_HALF"}, conv_attrs(&p, "NHWC", "DT_HALF", at, sizeof at));
    run_ok(g, in, 2, out, 1, 0);
    assert_int_equal(out[0].dtype, DT_F16);
    double num = 0, den = 0;
    for (int64_t i = 0; i < ny; i++) {
        double d = (double)((gn__f16 *)out[0].data)[i] - want[i];
        num += d * d;
        den += want[i] * want[i];
    }
    if (!(sqrt(num / den) <= 1e-2)) fail_msg("f16 conv relative L2 %g", sqrt(num / den));
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* float64: 1e-12 */
    gn__tensor in64[2] = {tens(DT_F64, 4, xd, xd64), tens(DT_F64, 4, fdim, fd64)};
    g = graph1("Conv2D", 2, (const char *[]){"DT_DOUBLE", "DT_DOUBLE"}, conv_attrs(&p, "NHWC", "DT_DOUBLE", at, sizeof at));
    run_ok(g, in64, 2, out, 1, 0);
    assert_int_equal(out[0].dtype, DT_F64);
    for (int64_t i = 0; i < ny; i++) {
        double v = ((double *)out[0].data)[i];
        if (!(fabs(v - want[i]) <= 1e-12 * (1 + fabs(want[i])))) fail_msg("f64 conv element %lld: %.17g vs %.17g", (long long)i, v, want[i]);
    }
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    free(x);
    free(f);
    free(xh);
    free(fh);
    free(xd64);
    free(fd64);
    free(want);
}

/* ---- MatMul / BatchMatMul ----------------------------------------------------------- */
static double *naive_mm(const float *a, const float *b, int64_t m, int64_t n, int64_t k, bool ta, bool tb)
{
    double *c = calloc((size_t)(m * n + 1), sizeof *c);
    assert_non_null(c);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t p = 0; p < k; p++)
                acc += (double)(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            c[i * n + j] = acc;
        }
    return c;
}

static void test_matmul(void **state)
{
    (void)state;
    const int64_t m = 7, n = 5, k = 9;
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t & 2;
        float *a = rnd(m * k), *b = rnd(k * n);
        double *want = naive_mm(a, b, m, n, k, ta, tb);
        char at[256];
        snprintf(at, sizeof at,
                 "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'transpose_a' value { b: %s } } "
                 "attr { key: 'transpose_b' value { b: %s } }",
                 ta ? "true" : "false", tb ? "true" : "false");
        gn_graph *g = graph1("MatMul", 2, NULL, at);
        int64_t ad[2] = {ta ? k : m, ta ? m : k}, bd[2] = {tb ? n : k, tb ? k : n};
        gn__tensor in[2] = {tens(DT_F32, 2, ad, a), tens(DT_F32, 2, bd, b)}, out[1], ref[1];
        run_ok(g, in, 2, out, 1, 0);
        assert_int_equal(out[0].dims[0], m);
        assert_int_equal(out[0].dims[1], n);
        expect_close(out[0].data, want, m * n, 1e-5, "MatMul");
        /* reference: k-ascending float sums, exactly */
        run_ok(g, in, 2, ref, 1, GN__K_REFERENCE);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float acc = 0;
                for (int64_t p = 0; p < k; p++) acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
                if (((float *)ref[0].data)[i * n + j] != acc) fail_msg("reference MatMul (%lld,%lld) differs", (long long)i, (long long)j);
            }
        gn_pt_krelease(out, 1);
        gn_pt_krelease(ref, 1);
        gn_graph_free(g);
        free(a);
        free(b);
        free(want);
    }
    /* reference vs BLAS on a larger product: relative L2 < 1e-6 */
    {
        const int64_t M = 64, N = 96, K = 80;
        float *a = rnd(M * K), *b = rnd(K * N);
        gn_graph *g = graph1("MatMul", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        int64_t ad[2] = {M, K}, bd[2] = {K, N};
        gn__tensor in[2] = {tens(DT_F32, 2, ad, a), tens(DT_F32, 2, bd, b)}, o1[1], o2[1];
        run_ok(g, in, 2, o1, 1, 0);
        run_ok(g, in, 2, o2, 1, GN__K_REFERENCE);
        double e = rel_l2_f(o1[0].data, o2[0].data, M * N);
        if (!(e < 1e-6)) fail_msg("BLAS vs reference MatMul: relative L2 %g", e);
        gn_pt_krelease(o1, 1);
        gn_pt_krelease(o2, 1);
        gn_graph_free(g);
        free(a);
        free(b);
    }
    /* float16 within 1e-2 relative L2, float64 within 1e-12 */
    {
        float *a = rnd(m * k), *b = rnd(k * n);
        gn__f16 ah[63], bh[45];
        double a64[63], b64[45];
        for (int i = 0; i < m * k; i++) ah[i] = (gn__f16)a[i], a[i] = (float)ah[i], a64[i] = a[i];
        for (int i = 0; i < k * n; i++) bh[i] = (gn__f16)b[i], b[i] = (float)bh[i], b64[i] = b[i];
        double *want = naive_mm(a, b, m, n, k, false, false);
        int64_t ad[2] = {m, k}, bd[2] = {k, n};
        gn_graph *g = graph1("MatMul", 2, (const char *[]){"DT_HALF", "DT_HALF"}, "attr { key: 'T' value { type: DT_HALF } }");
        gn__tensor in[2] = {tens(DT_F16, 2, ad, ah), tens(DT_F16, 2, bd, bh)}, out[1];
        run_ok(g, in, 2, out, 1, 0);
        double num = 0, den = 0;
        for (int64_t i = 0; i < m * n; i++) {
            double d = (double)((gn__f16 *)out[0].data)[i] - want[i];
            num += d * d;
            den += want[i] * want[i];
        }
        if (!(sqrt(num / den) <= 1e-2)) fail_msg("f16 MatMul relative L2 %g", sqrt(num / den));
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        g = graph1("MatMul", 2, (const char *[]){"DT_DOUBLE", "DT_DOUBLE"}, "attr { key: 'T' value { type: DT_DOUBLE } }");
        gn__tensor in64[2] = {tens(DT_F64, 2, ad, a64), tens(DT_F64, 2, bd, b64)};
        run_ok(g, in64, 2, out, 1, 0);
        for (int64_t i = 0; i < m * n; i++)
            if (!(fabs(((double *)out[0].data)[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])))) fail_msg("f64 MatMul %lld", (long long)i);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        free(a);
        free(b);
        free(want);
    }
}

/* x [2,1,3,4] (adj: [2,1,4,3]) times y [3,4,5] broadcast to [2,3,3,5]. */
static void test_batch_matmul(void **state)
{
    (void)state;
    for (int t = 0; t < 4; t++) {
        bool ax = t & 1, ay = t & 2;
        const int64_t m = 3, k = 4, n = 5;
        float *x = rnd(2 * m * k), *y = rnd(3 * k * n);
        int64_t xd[4] = {2, 1, ax ? k : m, ax ? m : k}, yd[3] = {3, ay ? n : k, ay ? k : n};
        char at[256];
        snprintf(at, sizeof at,
                 "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'adj_x' value { b: %s } } "
                 "attr { key: 'adj_y' value { b: %s } }",
                 ax ? "true" : "false", ay ? "true" : "false");
        gn_graph *g = graph1("BatchMatMulV2", 2, NULL, at);
        gn__tensor in[2] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 3, yd, y)}, out[1], ref[1];
        run_ok(g, in, 2, out, 1, 0);
        run_ok(g, in, 2, ref, 1, GN__K_REFERENCE);
        assert_int_equal(out[0].rank, 4);
        int64_t want_dims[4] = {2, 3, m, n};
        for (int i = 0; i < 4; i++) assert_int_equal(out[0].dims[i], want_dims[i]);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                double *w = naive_mm(x + i * m * k, y + j * k * n, m, n, k, ax, ay);
                expect_close((float *)out[0].data + (i * 3 + j) * m * n, w, m * n, 1e-5, "BatchMatMulV2");
                expect_close((float *)ref[0].data + (i * 3 + j) * m * n, w, m * n, 1e-5, "BatchMatMulV2 reference");
                free(w);
            }
        gn_pt_krelease(out, 1);
        gn_pt_krelease(ref, 1);
        gn_graph_free(g);
        free(x);
        free(y);
    }
    /* shared right operand folds into one gemm: [4,3,2] x [2,6] */
    {
        float *x = rnd(24), *y = rnd(12);
        int64_t xd[3] = {4, 3, 2}, yd[2] = {2, 6};
        gn_graph *g = graph1("BatchMatMulV2", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        gn__tensor in[2] = {tens(DT_F32, 3, xd, x), tens(DT_F32, 2, yd, y)}, out[1];
        run_ok(g, in, 2, out, 1, 0);
        double *w = naive_mm(x, y, 12, 6, 2, false, false);
        expect_close(out[0].data, w, 72, 1e-5, "BatchMatMulV2 shared rhs");
        free(w);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        free(x);
        free(y);
    }
    /* BatchMatMul (v1): equal batch dims; V3 with half inputs and float output */
    {
        float *x = rnd(2 * 3 * 4), *y = rnd(2 * 4 * 2);
        int64_t xd[3] = {2, 3, 4}, yd[3] = {2, 4, 2};
        gn_graph *g = graph1("BatchMatMul", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        gn__tensor in[2] = {tens(DT_F32, 3, xd, x), tens(DT_F32, 3, yd, y)}, out[1];
        run_ok(g, in, 2, out, 1, 0);
        for (int b = 0; b < 2; b++) {
            double *w = naive_mm(x + b * 12, y + b * 8, 3, 2, 4, false, false);
            expect_close((float *)out[0].data + b * 6, w, 6, 1e-5, "BatchMatMul");
            free(w);
        }
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        gn__f16 xh[24], yh[16];
        for (int i = 0; i < 24; i++) xh[i] = (gn__f16)x[i], x[i] = (float)xh[i];
        for (int i = 0; i < 16; i++) yh[i] = (gn__f16)y[i], y[i] = (float)yh[i];
        g = graph1("BatchMatMulV3", 2, (const char *[]){"DT_HALF", "DT_HALF"},
                   "attr { key: 'Ta' value { type: DT_HALF } } attr { key: 'Tb' value { type: DT_HALF } } "
                   "attr { key: 'Tout' value { type: DT_FLOAT } }");
        gn__tensor inh[2] = {tens(DT_F16, 3, xd, xh), tens(DT_F16, 3, yd, yh)};
        run_ok(g, inh, 2, out, 1, 0);
        assert_int_equal(out[0].dtype, DT_F32);
        for (int b = 0; b < 2; b++) {
            double *w = naive_mm(x + b * 12, y + b * 8, 3, 2, 4, false, false);
            expect_close((float *)out[0].data + b * 6, w, 6, 1e-5, "BatchMatMulV3 half->float");
            free(w);
        }
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        free(x);
        free(y);
    }
}

/* ---- Einsum ---------------------------------------------------------------------------- */
/* Naive einsum over explicit letter equations: every label assignment adds
 * the product of the inputs to the output. */
static double *naive_einsum(const char *eq, int n_in, const float *const *xs, const gn__tensor *ins, int64_t *odims,
                            int *orank)
{
    int64_t size[128];
    for (int i = 0; i < 128; i++) size[i] = -1;
    const char *terms[3];
    int tl[3], nt = 0;
    const char *p = eq;
    while (1) {
        terms[nt] = p;
        while (*p && *p != ',' && *p != '-') p++;
        tl[nt] = (int)(p - terms[nt]);
        nt++;
        if (*p == ',') p++;
        else break;
    }
    assert_int_equal(nt, n_in);
    assert_true(p[0] == '-' && p[1] == '>');
    const char *outt = p + 2;
    int ol = (int)strlen(outt);
    for (int t = 0; t < n_in; t++)
        for (int i = 0; i < tl[t]; i++) size[(int)terms[t][i]] = ins[t].dims[i];
    char labels[64];
    int nl = 0;
    for (int ch = 0; ch < 128; ch++)
        if (size[ch] >= 0) labels[nl++] = (char)ch;
    *orank = ol;
    int64_t ototal = 1;
    for (int i = 0; i < ol; i++) ototal *= (odims[i] = size[(int)outt[i]]);
    double *out = calloc((size_t)(ototal + 1), sizeof *out);
    assert_non_null(out);
    int64_t idx[128] = {0};
    while (1) {
        double prod = 1;
        for (int t = 0; t < n_in; t++) {
            int64_t off = 0;
            for (int i = 0; i < tl[t]; i++) off = off * ins[t].dims[i] + idx[(int)terms[t][i]];
            prod *= xs[t][off];
        }
        int64_t oo = 0;
        for (int i = 0; i < ol; i++) oo = oo * odims[i] + idx[(int)outt[i]];
        out[oo] += prod;
        int k = nl - 1;
        for (; k >= 0; k--) {
            if (++idx[(int)labels[k]] < size[(int)labels[k]]) break;
            idx[(int)labels[k]] = 0;
        }
        if (k < 0) break;
    }
    return out;
}

/* Runs Einsum with equation eq and checks it against the naive einsum of
 * naive_eq (letters only; NULL: eq itself). */
static void check_einsum_as(const char *eq, const char *naive_eq, int n_in, int r0, const int64_t *d0, int r1,
                            const int64_t *d1)
{
    int64_t n0 = 1, n1 = 1;
    for (int i = 0; i < r0; i++) n0 *= d0[i];
    for (int i = 0; i < r1; i++) n1 *= d1[i];
    float *a = rnd(n0), *b = rnd(n1);
    gn__tensor in[2] = {tens(DT_F32, r0, d0, a), tens(DT_F32, r1, d1, b)}, out[1], ref[1];
    char at[512];
    snprintf(at, sizeof at,
             "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: %d } } "
             "attr { key: 'equation' value { s: '%s' } }",
             n_in, eq);
    gn_graph *g = graph1("Einsum", n_in, NULL, at);
    run_ok(g, in, (uint32_t)n_in, out, 1, 0);
    run_ok(g, in, (uint32_t)n_in, ref, 1, GN__K_REFERENCE);
    int64_t od[8];
    int orank;
    const float *xs[2] = {a, b};
    double *want = naive_einsum(naive_eq ? naive_eq : eq, n_in, xs, in, od, &orank);
    if (out[0].rank != orank) fail_msg("%s: rank %d, want %d", eq, out[0].rank, orank);
    int64_t tot = 1;
    for (int i = 0; i < orank; i++) {
        if (out[0].dims[i] != od[i]) fail_msg("%s: dim %d is %lld, want %lld", eq, i, (long long)out[0].dims[i], (long long)od[i]);
        tot *= od[i];
    }
    expect_close(out[0].data, want, tot, 1e-5, eq);
    expect_close(ref[0].data, want, tot, 1e-5, eq);
    gn_pt_krelease(out, 1);
    gn_pt_krelease(ref, 1);
    gn_graph_free(g);
    free(a);
    free(b);
    free(want);
}

static void check_einsum(const char *eq, int n_in, int r0, const int64_t *d0, int r1, const int64_t *d1)
{
    check_einsum_as(eq, NULL, n_in, r0, d0, r1, d1);
}

static void test_einsum(void **state)
{
    (void)state;
    /* the equations Keras' EinsumDense and MultiHeadAttention emit */
    check_einsum("abc,cd->abd", 2, 3, (int64_t[]){2, 3, 4}, 2, (int64_t[]){4, 5});
    check_einsum("abcd,cde->abe", 2, 4, (int64_t[]){2, 3, 4, 5}, 3, (int64_t[]){4, 5, 6});
    check_einsum("abc,cde->abde", 2, 3, (int64_t[]){2, 3, 4}, 3, (int64_t[]){4, 5, 6});
    check_einsum("aecd,abcd->acbe", 2, 4, (int64_t[]){2, 5, 3, 4}, 4, (int64_t[]){2, 6, 3, 4});
    check_einsum("acbe,aecd->abcd", 2, 4, (int64_t[]){2, 3, 6, 5}, 4, (int64_t[]){2, 5, 3, 4});
    check_einsum("abde,deg->abg", 2, 4, (int64_t[]){2, 3, 4, 5}, 3, (int64_t[]){4, 5, 6});
    check_einsum("BTNH,BFNH->BNFT", 2, 4, (int64_t[]){2, 5, 3, 4}, 4, (int64_t[]){2, 6, 3, 4});
    check_einsum("BNFT,BTNH->BFNH", 2, 4, (int64_t[]){2, 3, 6, 5}, 4, (int64_t[]){2, 5, 3, 4});
    /* plain products, transposed layouts, outer product, elementwise, broadcast contraction */
    check_einsum("ij,jk->ik", 2, 2, (int64_t[]){3, 4}, 2, (int64_t[]){4, 5});
    check_einsum("ji,kj->ik", 2, 2, (int64_t[]){4, 3}, 2, (int64_t[]){5, 4});
    check_einsum("i,j->ij", 2, 1, (int64_t[]){3}, 1, (int64_t[]){4});
    check_einsum("ij,ij->ij", 2, 2, (int64_t[]){3, 4}, 2, (int64_t[]){3, 4});
    check_einsum("bij,bjk->bki", 2, 3, (int64_t[]){2, 3, 4}, 3, (int64_t[]){2, 4, 5});
    check_einsum("ij,k->i", 2, 2, (int64_t[]){3, 4}, 1, (int64_t[]){5});
    /* one operand: transpose, diagonal, reduction */
    check_einsum("ij->ji", 1, 2, (int64_t[]){3, 4}, 0, NULL);
    check_einsum("ii->i", 1, 2, (int64_t[]){4, 4}, 0, NULL);
    check_einsum("ijk->ki", 1, 3, (int64_t[]){2, 3, 4}, 0, NULL);
    check_einsum("ij->", 1, 2, (int64_t[]){3, 4}, 0, NULL);
    check_einsum("iij->j", 1, 3, (int64_t[]){3, 3, 2}, 0, NULL);
    /* ellipsis forms of EinsumDense */
    check_einsum_as("...b,bc->...c", "xyb,bc->xyc", 2, 3, (int64_t[]){2, 3, 4}, 2, (int64_t[]){4, 5});
    check_einsum_as("a...,...->a...", "abc,bc->abc", 2, 3, (int64_t[]){2, 3, 4}, 2, (int64_t[]){3, 4});
    /* ellipsis broadcasting equals BatchMatMulV2 */
    {
        int64_t xd[4] = {2, 3, 4, 5}, yd[3] = {3, 5, 6};
        float *x = rnd(120), *y = rnd(90);
        gn__tensor in[2] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 3, yd, y)}, e[1], b[1];
        gn_graph *g = graph1("Einsum", 2, NULL,
                             "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 2 } } "
                             "attr { key: 'equation' value { s: '...ij,...jk->...ik' } }");
        run_ok(g, in, 2, e, 1, 0);
        gn_graph_free(g);
        g = graph1("BatchMatMulV2", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        run_ok(g, in, 2, b, 1, 0);
        assert_int_equal(e[0].rank, 4);
        for (int i = 0; i < 4; i++) assert_int_equal(e[0].dims[i], b[0].dims[i]);
        double *bw = malloc(2 * 3 * 4 * 6 * sizeof *bw);
        assert_non_null(bw);
        for (int i = 0; i < 144; i++) bw[i] = ((float *)b[0].data)[i];
        expect_close(e[0].data, bw, 144, 1e-6, "...ij,...jk->...ik");
        free(bw);
        gn_pt_krelease(e, 1);
        gn_pt_krelease(b, 1);
        gn_graph_free(g);
        /* implicit output: "ij,jk" is "ij,jk->ik" */
        int64_t ad[2] = {3, 4}, bd[2] = {4, 5};
        gn__tensor in2[2] = {tens(DT_F32, 2, ad, x), tens(DT_F32, 2, bd, y)};
        g = graph1("Einsum", 2, NULL,
                   "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 2 } } "
                   "attr { key: 'equation' value { s: 'ij,jk' } }");
        run_ok(g, in2, 2, e, 1, 0);
        double *w = naive_mm(x, y, 3, 5, 4, false, false);
        assert_int_equal(e[0].rank, 2);
        expect_close(e[0].data, w, 15, 1e-5, "ij,jk");
        free(w);
        gn_pt_krelease(e, 1);
        gn_graph_free(g);
        free(x);
        free(y);
    }
}

/* ---- BiasAdd ------------------------------------------------------------------------------ */
static void test_bias_add(void **state)
{
    (void)state;
    /* NHWC rank 2, 3, 5 and NCHW rank 4 */
    struct {
        const char *fmt;
        int rank;
        int64_t dims[5];
        int cd;
    } cases[] = {
        {"NHWC", 2, {3, 4}, 1}, {"NHWC", 3, {2, 3, 5}, 2}, {"NHWC", 5, {1, 2, 2, 3, 4}, 4},
        {"NCHW", 4, {2, 3, 2, 2}, 1}, {"NCHW", 3, {2, 4, 3}, 1},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int64_t n = 1, inner = 1;
        for (int i = 0; i < cases[ci].rank; i++) n *= cases[ci].dims[i];
        for (int i = cases[ci].cd + 1; i < cases[ci].rank; i++) inner *= cases[ci].dims[i];
        int64_t nb = cases[ci].dims[cases[ci].cd];
        float *x = rnd(n), *b = rnd(nb);
        char at[256];
        snprintf(at, sizeof at, "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'data_format' value { s: '%s' } }",
                 cases[ci].fmt);
        gn_graph *g = graph1("BiasAdd", 2, NULL, at);
        gn__tensor in[2] = {tens(DT_F32, cases[ci].rank, cases[ci].dims, x), tens(DT_F32, 1, &nb, b)}, out[1];
        run_ok(g, in, 2, out, 1, 0);
        for (int64_t i = 0; i < n; i++) {
            float want = x[i] + b[(i / inner) % nb];
            if (((float *)out[0].data)[i] != want) fail_msg("BiasAdd case %zu element %lld", ci, (long long)i);
        }
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        free(x);
        free(b);
    }
    /* float16 and the message on a mismatch */
    gn__f16 xh[6] = {1, 2, 3, 4, 5, 6}, bh[3] = {(gn__f16)0.5f, -1, 2};
    int64_t xd[2] = {2, 3}, bd[1] = {3}, bd2[1] = {4};
    gn_graph *g = graph1("BiasAdd", 2, (const char *[]){"DT_HALF", "DT_HALF"}, "attr { key: 'T' value { type: DT_HALF } }");
    gn__tensor in[2] = {tens(DT_F16, 2, xd, xh), tens(DT_F16, 1, bd, bh)}, out[1];
    run_ok(g, in, 2, out, 1, 0);
    const float want[6] = {1.5f, 1, 5, 4.5f, 4, 8};
    for (int i = 0; i < 6; i++) assert_true((float)((gn__f16 *)out[0].data)[i] == want[i]);
    gn_pt_krelease(out, 1);
    gn__f16 b4[4] = {0};
    gn__tensor bad[2] = {tens(DT_F16, 2, xd, xh), tens(DT_F16, 1, bd2, b4)};
    expect_error(g, bad, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (BiasAdd): Must provide as many biases as the channel dimension of the input tensor: [4] vs. [2,3]");
    gn_graph_free(g);
}

/* ---- FusedBatchNorm ----------------------------------------------------------------------- */
static const char *fbn_attrs(const char *fmt, bool training, float factor, char *buf, size_t n)
{
    snprintf(buf, n,
             "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } "
             "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'data_format' value { s: '%s' } } "
             "attr { key: 'is_training' value { b: %s } } attr { key: 'exponential_avg_factor' value { f: %g } }",
             fmt, training ? "true" : "false", factor);
    return buf;
}

static void test_fused_batch_norm(void **state)
{
    (void)state;
    const int64_t N = 2, H = 3, W = 2, C = 4, n = N * H * W * C;
    float *x = rnd(n), scale[4], offset[4], mean[4], var[4];
    for (int k = 0; k < C; k++) {
        scale[k] = 1.0f + 0.25f * (float)k;
        offset[k] = 0.1f * (float)k - 0.2f;
        mean[k] = 0.05f * (float)k;
        var[k] = 0.5f + (float)k;
    }
    int64_t xd[4] = {N, H, W, C}, cd[1] = {C};
    char at[512];
    /* inference, NHWC and NCHW */
    for (int f = 0; f < 2; f++) {
        bool nchw = f == 1;
        float *xin = x;
        float *xt = malloc((size_t)n * sizeof *xt);
        assert_non_null(xt);
        int64_t xdn[4] = {N, C, H, W};
        if (nchw) {
            to_nchw(x, xt, N, H, W, C);
            xin = xt;
        }
        gn_graph *g = graph1("FusedBatchNormV3", 5, NULL, fbn_attrs(nchw ? "NCHW" : "NHWC", false, 1.0f, at, sizeof at));
        gn__tensor in[5] = {tens(DT_F32, 4, nchw ? xdn : xd, xin), tens(DT_F32, 1, cd, scale), tens(DT_F32, 1, cd, offset),
                            tens(DT_F32, 1, cd, mean), tens(DT_F32, 1, cd, var)},
                   out[6];
        run_ok(g, in, 5, out, 6, 0);
        double *want = malloc((size_t)n * sizeof *want);
        assert_non_null(want);
        for (int64_t i = 0; i < n; i++) {
            int64_t k = nchw ? (i / (H * W)) % C : i % C;
            want[i] = ((double)xin[i] - mean[k]) * scale[k] / sqrt((double)var[k] + 0.001) + offset[k];
        }
        expect_close(out[0].data, want, n, 1e-6, "FusedBatchNormV3 inference y");
        for (int k = 0; k < C; k++) {
            assert_true(((float *)out[1].data)[k] == mean[k]);
            assert_true(((float *)out[2].data)[k] == var[k]);
            assert_true(((float *)out[3].data)[k] == mean[k]);
            assert_true(((float *)out[4].data)[k] == var[k]);
        }
        assert_int_equal(out[5].rank, 0);
        assert_true(((float *)out[5].data)[0] == 0.0f);
        gn_pt_krelease(out, 6);
        gn_graph_free(g);
        free(want);
        free(xt);
    }
    /* training: batch statistics; factor 1 and 0.5 */
    for (int fi = 0; fi < 2; fi++) {
        float factor = fi ? 0.5f : 1.0f;
        gn_graph *g = graph1("FusedBatchNormV3", 5, NULL, fbn_attrs("NHWC", true, factor, at, sizeof at));
        gn__tensor in[5] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 1, cd, scale), tens(DT_F32, 1, cd, offset),
                            tens(DT_F32, 1, cd, mean), tens(DT_F32, 1, cd, var)},
                   out[6];
        run_ok(g, in, 5, out, 6, 0);
        double bm[4] = {0}, bv[4] = {0};
        int64_t rest = n / C;
        for (int64_t i = 0; i < n; i++) bm[i % C] += x[i];
        for (int k = 0; k < C; k++) bm[k] /= (double)rest;
        for (int64_t i = 0; i < n; i++) bv[i % C] += (x[i] - bm[i % C]) * (x[i] - bm[i % C]);
        for (int k = 0; k < C; k++) bv[k] /= (double)rest;
        double *want = malloc((size_t)n * sizeof *want);
        assert_non_null(want);
        for (int64_t i = 0; i < n; i++) {
            int k = (int)(i % C);
            want[i] = (x[i] - bm[k]) * scale[k] / sqrt(bv[k] + 0.001) + offset[k];
        }
        expect_close(out[0].data, want, n, 1e-5, "FusedBatchNormV3 training y");
        double wm[4], wv[4], r1[4], r2[4];
        for (int k = 0; k < C; k++) {
            double corr = bv[k] * (double)rest / (double)(rest - 1);
            wm[k] = fi ? 0.5 * mean[k] + 0.5 * bm[k] : bm[k];
            wv[k] = fi ? 0.5 * var[k] + 0.5 * corr : corr;
            r1[k] = bm[k];
            r2[k] = bv[k];
        }
        expect_close(out[1].data, wm, C, 1e-5, "batch_mean");
        expect_close(out[2].data, wv, C, 1e-5, "batch_variance");
        expect_close(out[3].data, r1, C, 1e-5, "reserve_space_1");
        expect_close(out[4].data, r2, C, 1e-5, "reserve_space_2");
        gn_pt_krelease(out, 6);
        gn_graph_free(g);
        free(want);
    }
    /* FusedBatchNorm (v1) has 5 outputs; message for a wrong scale size */
    {
        gn_graph *g = graph1("FusedBatchNorm", 5, NULL,
                             "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'is_training' value { b: false } }");
        int64_t c3[1] = {3};
        gn__tensor in[5] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 1, c3, scale), tens(DT_F32, 1, cd, offset),
                            tens(DT_F32, 1, cd, mean), tens(DT_F32, 1, cd, var)};
        expect_error(g, in, 5, 5, GN_ERR_GRAPH,
                     "node 'n' (FusedBatchNorm): scale must have the same number of elements as the channels of x, got 3 and 4");
        in[1] = tens(DT_F32, 1, cd, scale);
        gn__tensor out[5];
        run_ok(g, in, 5, out, 5, 0);
        double w0 = ((double)x[0] - mean[0]) * scale[0] / sqrt((double)var[0] + 0.0001) + offset[0];
        expect_close(out[0].data, &w0, 1, 1e-6, "FusedBatchNorm default epsilon");
        gn_pt_krelease(out, 5);
        gn_graph_free(g);
    }
    free(x);
}

/* ---- pooling ------------------------------------------------------------------------------ */
static const char *pool_attrs(const char *t, const char *fmt, int k, int s, const char *pad, char *buf, size_t n)
{
    if (!strcmp(fmt, "NCHW"))
        snprintf(buf, n,
                 "attr { key: 'T' value { type: %s } } attr { key: 'data_format' value { s: 'NCHW' } } "
                 "attr { key: 'ksize' value { list { i: 1 i: 1 i: %d i: %d } } } "
                 "attr { key: 'strides' value { list { i: 1 i: 1 i: %d i: %d } } } attr { key: 'padding' value { s: '%s' } }",
                 t, k, k, s, s, pad);
    else
        snprintf(buf, n,
                 "attr { key: 'T' value { type: %s } } attr { key: 'data_format' value { s: '%s' } } "
                 "attr { key: 'ksize' value { list { i: 1 i: %d i: %d i: 1 } } } "
                 "attr { key: 'strides' value { list { i: 1 i: %d i: %d i: 1 } } } attr { key: 'padding' value { s: '%s' } }",
                 t, fmt, k, k, s, s, pad);
    return buf;
}

static void test_pool_same_edges(void **state)
{
    (void)state;
    /* 1x4x4x1 of 1..16, 3x3 stride 2 SAME: pad top/left 0, bottom/right 1 */
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
    int64_t xd[4] = {1, 4, 4, 1};
    char at[512];
    gn__tensor in[1] = {tens(DT_F32, 4, xd, x)}, out[1];
    gn_graph *g = graph1("AvgPool", 1, NULL, pool_attrs("DT_FLOAT", "NHWC", 3, 2, "SAME", at, sizeof at));
    run_ok(g, in, 1, out, 1, 0);
    assert_int_equal(out[0].dims[1], 2);
    assert_int_equal(out[0].dims[2], 2);
    /* windows: rows 0-2 x cols 0-2 (9), rows 0-2 x cols 2-3 (6), rows 2-3 x cols 0-2 (6), rows 2-3 x cols 2-3 (4) */
    const float avg[4] = {(1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11) / 9.0f, (3 + 4 + 7 + 8 + 11 + 12) / 6.0f,
                          (9 + 10 + 11 + 13 + 14 + 15) / 6.0f, (11 + 12 + 15 + 16) / 4.0f};
    for (int i = 0; i < 4; i++)
        if (fabsf(((float *)out[0].data)[i] - avg[i]) > 1e-6f) fail_msg("AvgPool SAME %d: %g vs %g", i, ((float *)out[0].data)[i], avg[i]);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1("MaxPool", 1, NULL, pool_attrs("DT_FLOAT", "NHWC", 3, 2, "SAME", at, sizeof at));
    run_ok(g, in, 1, out, 1, 0);
    const float mx[4] = {11, 12, 15, 16};
    for (int i = 0; i < 4; i++) assert_true(((float *)out[0].data)[i] == mx[i]);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* negative values: padding never wins a max */
    float neg[16];
    for (int i = 0; i < 16; i++) neg[i] = -x[i];
    in[0] = tens(DT_F32, 4, xd, neg);
    g = graph1("MaxPool", 1, NULL, pool_attrs("DT_FLOAT", "NHWC", 3, 2, "SAME", at, sizeof at));
    run_ok(g, in, 1, out, 1, 0);
    const float mxn[4] = {-1, -3, -9, -11};
    for (int i = 0; i < 4; i++) assert_true(((float *)out[0].data)[i] == mxn[i]);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* MaxPoolV2 (ksize/strides as inputs) agrees, VALID */
    {
        int32_t ks[4] = {1, 2, 2, 1}, st[4] = {1, 2, 2, 1};
        int64_t d4[1] = {4};
        gn__tensor in3[3] = {tens(DT_F32, 4, xd, x), tens(DT_I32, 1, d4, ks), tens(DT_I32, 1, d4, st)};
        g = graph1("MaxPoolV2", 3, (const char *[]){"DT_FLOAT", "DT_INT32", "DT_INT32"},
                   "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'padding' value { s: 'VALID' } }");
        run_ok(g, in3, 3, out, 1, 0);
        const float v2[4] = {6, 8, 14, 16};
        for (int i = 0; i < 4; i++) assert_true(((float *)out[0].data)[i] == v2[i]);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    /* random NHWC vs NCHW, 3 channels, 5x6, k3 s2 SAME, both pools; f16 and f64 */
    {
        const int64_t H = 5, W = 6, C = 3;
        float *r = rnd(H * W * C), *rt = malloc((size_t)(H * W * C) * sizeof *rt);
        assert_non_null(rt);
        to_nchw(r, rt, 1, H, W, C);
        int64_t dn[4] = {1, H, W, C}, dc[4] = {1, C, H, W};
        for (int avgp = 0; avgp < 2; avgp++) {
            const char *op = avgp ? "AvgPool" : "MaxPool";
            gn__tensor o1[1], o2[1];
            gn__tensor i1[1] = {tens(DT_F32, 4, dn, r)}, i2[1] = {tens(DT_F32, 4, dc, rt)};
            g = graph1(op, 1, NULL, pool_attrs("DT_FLOAT", "NHWC", 3, 2, "SAME", at, sizeof at));
            run_ok(g, i1, 1, o1, 1, 0);
            gn_graph_free(g);
            g = graph1(op, 1, NULL, pool_attrs("DT_FLOAT", "NCHW", 3, 2, "SAME", at, sizeof at));
            run_ok(g, i2, 1, o2, 1, 0);
            gn_graph_free(g);
            /* naive */
            double want[3 * 3 * 3];
            for (int oy = 0; oy < 3; oy++)
                for (int ox = 0; ox < 3; ox++)
                    for (int k = 0; k < C; k++) {
                        double s = 0, m = -INFINITY;
                        int cnt = 0;
                        for (int iy = oy * 2 - 1; iy < oy * 2 + 2; iy++)
                            for (int ix = ox * 2; ix < ox * 2 + 3; ix++) {
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                double v = r[(iy * W + ix) * C + k];
                                s += v;
                                m = v > m ? v : m;
                                cnt++;
                            }
                        want[(oy * 3 + ox) * C + k] = avgp ? s / cnt : m;
                    }
            expect_close(o1[0].data, want, 27, 1e-6, op);
            float t[27];
            to_nchw(o1[0].data, t, 1, 3, 3, C);
            expect_same(o2[0].data, t, 27, op);
            gn_pt_krelease(o1, 1);
            gn_pt_krelease(o2, 1);
            /* float16 and float64 */
            gn__f16 rh[90];
            double rd[90];
            for (int i = 0; i < 90; i++) rh[i] = (gn__f16)r[i], rd[i] = r[i];
            gn__tensor ih[1] = {tens(DT_F16, 4, dn, rh)}, id[1] = {tens(DT_F64, 4, dn, rd)};
            g = graph1(op, 1, (const char *[]){"DT_HALF"}, pool_attrs("DT_HALF", "NHWC", 3, 2, "SAME", at, sizeof at));
            run_ok(g, ih, 1, o1, 1, 0);
            for (int i = 0; i < 27; i++)
                if (fabs((double)((gn__f16 *)o1[0].data)[i] - want[i]) > 2e-3) fail_msg("%s f16 %d", op, i);
            gn_pt_krelease(o1, 1);
            gn_graph_free(g);
            g = graph1(op, 1, (const char *[]){"DT_DOUBLE"}, pool_attrs("DT_DOUBLE", "NHWC", 3, 2, "SAME", at, sizeof at));
            run_ok(g, id, 1, o1, 1, 0);
            for (int i = 0; i < 27; i++)
                if (fabs(((double *)o1[0].data)[i] - want[i]) > 1e-12) fail_msg("%s f64 %d", op, i);
            gn_pt_krelease(o1, 1);
            gn_graph_free(g);
        }
        free(r);
        free(rt);
    }
    /* MaxPool EXPLICIT: pad top 1, left 1; 2x2 stride 2 */
    {
        in[0] = tens(DT_F32, 4, xd, x);
        g = graph1("MaxPool", 1, NULL,
                   "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'ksize' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
                   "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: 'padding' value { s: 'EXPLICIT' } } "
                   "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 1 i: 0 i: 1 i: 0 i: 0 i: 0 } } }");
        run_ok(g, in, 1, out, 1, 0);
        assert_int_equal(out[0].dims[1], 2);
        assert_int_equal(out[0].dims[2], 2);
        const float w[4] = {1, 3, 9, 11};
        for (int i = 0; i < 4; i++) assert_true(((float *)out[0].data)[i] == w[i]);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    /* max pooling across depth: window 2 over 4 channels */
    {
        float d[8] = {1, 5, -2, -3, 0, 4, 9, 8};
        int64_t dd[4] = {1, 1, 2, 4};
        gn__tensor i1[1] = {tens(DT_F32, 4, dd, d)};
        g = graph1("MaxPool", 1, NULL,
                   "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'ksize' value { list { i: 1 i: 1 i: 1 i: 2 } } } "
                   "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 2 } } } attr { key: 'padding' value { s: 'VALID' } }");
        run_ok(g, i1, 1, out, 1, 0);
        assert_int_equal(out[0].dims[3], 2);
        const float w[4] = {5, -2, 4, 9};
        for (int i = 0; i < 4; i++) assert_true(((float *)out[0].data)[i] == w[i]);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
}

/* ---- ExtractImagePatches, MaxPoolWithArgmax, SpaceToBatch, BatchToSpace ----------------------
 * Expected values: TensorFlow 2.21, printed by tools/make_inference_op_values.py. */
static void expect_f32_exact(const gn__tensor *t, int rank, const int64_t *dims, const float *want)
{
    assert_int_equal(t->dtype, DT_F32);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
    int64_t n = gn__tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (((const float *)t->data)[i] != want[i])
            fail_msg("element %lld: %g, want %g", (long long)i, ((const float *)t->data)[i], want[i]);
}

static void test_extract_image_patches(void **state)
{
    (void)state;
    float x[40];
    for (int i = 0; i < 40; i++) x[i] = (float)(i + 1);
    const int64_t xd[4] = {1, 4, 5, 2};
    gn__tensor in[1] = {tens(DT_F32, 4, xd, x)}, out[1];
    static const char *at = "attr { key: 'T' value { type: DT_FLOAT } } "
                            "attr { key: 'ksizes' value { list { i: 1 i: 2 i: 3 i: 1 } } } "
                            "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
                            "attr { key: 'rates' value { list { i: 1 i: 1 i: 2 i: 1 } } } ";
    char a[512];
    /* SAME: zeros where the dilated window leaves the image */
    snprintf(a, sizeof a, "%sattr { key: 'padding' value { s: 'SAME' } }", at);
    gn_graph *g = graph1("ExtractImagePatches", 1, NULL, a);
    run_ok(g, in, 1, out, 1, 0);
    static const float same[72] = {
        0,  0,  1,  2,  5,  6,  0,  0,  11, 12, 15, 16, 1,  2,  5,  6,  9,  10, 11, 12, 15, 16, 19, 20,
        5,  6,  9,  10, 0,  0,  15, 16, 19, 20, 0,  0,  0,  0,  21, 22, 25, 26, 0,  0,  31, 32, 35, 36,
        21, 22, 25, 26, 29, 30, 31, 32, 35, 36, 39, 40, 25, 26, 29, 30, 0,  0,  35, 36, 39, 40, 0,  0};
    expect_f32_exact(&out[0], 4, (const int64_t[]){1, 2, 3, 12}, same);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    snprintf(a, sizeof a, "%sattr { key: 'padding' value { s: 'VALID' } }", at);
    g = graph1("ExtractImagePatches", 1, NULL, a);
    run_ok(g, in, 1, out, 1, 0);
    static const float valid[24] = {1,  2,  5,  6,  9,  10, 11, 12, 15, 16, 19, 20,
                                    21, 22, 25, 26, 29, 30, 31, 32, 35, 36, 39, 40};
    expect_f32_exact(&out[0], 4, (const int64_t[]){1, 2, 1, 12}, valid);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1v("ExtractImagePatches", 1, NULL,
                "attr { key: 'ksizes' value { list { i: 2 i: 2 i: 3 i: 1 } } } "
                "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
                "attr { key: 'rates' value { list { i: 1 i: 1 i: 2 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } }",
                0);
    expect_error(g, in, 1, 1, GN_ERR_UNSUPPORTED, "node 'n' (ExtractImagePatches): Only support ksizes across space.");
    gn_graph_free(g);
}

static const char *argmax_attrs(const char *pad, int s, bool incl, const char *targmax, char *buf, size_t n)
{
    snprintf(buf, n,
             "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Targmax' value { type: %s } } "
             "attr { key: 'ksize' value { list { i: 1 i: 2 i: 2 i: 1 } } } "
             "attr { key: 'strides' value { list { i: 1 i: %d i: %d i: 1 } } } attr { key: 'padding' value { s: '%s' } } "
             "attr { key: 'include_batch_in_index' value { b: %s } }",
             targmax, s, s, pad, incl ? "true" : "false");
    return buf;
}

static void test_max_pool_with_argmax(void **state)
{
    (void)state;
    /* [2, 3, 3, 2] with ties: the first in window order wins */
    static const float x[36] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
                                8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8, 8};
    const int64_t xd[4] = {2, 3, 3, 2}, od[4] = {2, 2, 2, 2};
    gn__tensor in[1] = {tens(DT_F32, 4, xd, x)}, out[2];
    char a[640];
    static const float same[16] = {5, 6, 5, 9, 9, 7, 2, 3, 8, 4, 6, 7, 9, 5, 8, 8};
    static const int64_t same_idx[2][16] = {{8, 7, 4, 5, 12, 13, 16, 17, 0, 1, 4, 11, 12, 13, 16, 17},
                                            {8, 7, 4, 5, 12, 13, 16, 17, 18, 19, 22, 29, 30, 31, 34, 35}};
    for (int incl = 0; incl < 2; incl++)
        for (int i32 = 0; i32 < 2; i32++) {
            gn_graph *g = graph1("MaxPoolWithArgmax", 1, NULL,
                                 argmax_attrs("SAME", 2, incl, i32 ? "DT_INT32" : "DT_INT64", a, sizeof a));
            run_ok(g, in, 1, out, 2, 0);
            expect_f32_exact(&out[0], 4, od, same);
            assert_int_equal(out[1].dtype, i32 ? DT_I32 : TENSORFLOW__DATA_TYPE__DT_INT64);
            for (int k = 0; k < 16; k++) {
                int64_t v = i32 ? ((const int32_t *)out[1].data)[k] : ((const int64_t *)out[1].data)[k];
                if (v != same_idx[incl][k]) fail_msg("argmax %d (incl %d): %lld, want %lld", k, incl, (long long)v,
                                                     (long long)same_idx[incl][k]);
            }
            gn_pt_krelease(out, 2);
            gn_graph_free(g);
        }
    gn_graph *g = graph1("MaxPoolWithArgmax", 1, NULL, argmax_attrs("VALID", 1, true, "DT_INT64", a, sizeof a));
    run_ok(g, in, 1, out, 2, 0);
    static const float valid[16] = {5, 6, 5, 9, 9, 7, 9, 8, 8, 4, 8, 7, 9, 5, 8, 8};
    static const int64_t valid_idx[16] = {8, 7, 4, 5, 12, 13, 14, 11, 18, 19, 26, 29, 30, 31, 26, 35};
    expect_f32_exact(&out[0], 4, od, valid);
    for (int k = 0; k < 16; k++) assert_int_equal(((const int64_t *)out[1].data)[k], valid_idx[k]);
    gn_pt_krelease(out, 2);
    gn_graph_free(g);
}

static void test_space_batch_v1(void **state)
{
    (void)state;
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
    const int32_t pads[4] = {1, 1, 2, 0};
    const int64_t crops[4] = {0, 1, 1, 0};
    gn__tensor in[2] = {tens(DT_F32, 4, (const int64_t[]){1, 4, 4, 1}, x), tens(DT_I32, 2, (const int64_t[]){2, 2}, pads)},
               out[1];
    gn_graph *g = graph1v("SpaceToBatch", 2, NULL, "attr { key: 'block_size' value { i: 2 } }", 0);
    run_ok(g, in, 2, out, 1, 0);
    static const float s2b[36] = {0, 0, 0, 0, 5, 7, 0, 13, 15, 0, 0, 0, 0, 6, 8, 0, 14, 16,
                                  0, 1, 3, 0, 9, 11, 0, 0, 0, 0, 2, 4, 0, 10, 12, 0, 0, 0};
    expect_f32_exact(&out[0], 4, (const int64_t[]){4, 3, 3, 1}, s2b);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    in[0] = tens(DT_F32, 4, (const int64_t[]){4, 2, 2, 1}, x);
    in[1] = tens(TENSORFLOW__DATA_TYPE__DT_INT64, 2, (const int64_t[]){2, 2}, crops);
    g = graph1v("BatchToSpace", 2, NULL, "attr { key: 'block_size' value { i: 2 } }", 0);
    run_ok(g, in, 2, out, 1, 0);
    expect_f32_exact(&out[0], 4, (const int64_t[]){1, 3, 3, 1}, (const float[]){5, 2, 6, 13, 10, 14, 7, 4, 8});
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1v("BatchToSpace", 2, NULL, "attr { key: 'block_size' value { i: 1 } }", 0);
    expect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (BatchToSpace): Block size should be > 1: 1");
    gn_graph_free(g);
    in[0] = tens(DT_F32, 3, (const int64_t[]){4, 2, 2}, x);
    g = graph1v("BatchToSpace", 2, NULL, "attr { key: 'block_size' value { i: 2 } }", 0);
    expect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (BatchToSpace): input rank should be 4 instead of 3");
    gn_graph_free(g);
}

static void test_lrn(void **state)
{
    (void)state;
    const int64_t n = 2 * 3 * 7;
    float *x = rnd(n);
    int64_t xd[4] = {1, 2, 3, 7};
    gn__tensor in[1] = {tens(DT_F32, 4, xd, x)}, out[1];
    gn_graph *g = graph1("LRN", 1, NULL,
                         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'depth_radius' value { i: 2 } } "
                         "attr { key: 'bias' value { f: 1.5 } } attr { key: 'alpha' value { f: 0.3 } } "
                         "attr { key: 'beta' value { f: 0.75 } }");
    run_ok(g, in, 1, out, 1, 0);
    double want[42];
    for (int64_t i = 0; i < n; i++) {
        int64_t row = i / 7, d = i % 7;
        double s = 0;
        for (int64_t j = d - 2; j <= d + 2; j++)
            if (j >= 0 && j < 7) s += (double)x[row * 7 + j] * x[row * 7 + j];
        want[i] = x[i] / pow(1.5 + 0.3 * s, 0.75);
    }
    expect_close(out[0].data, want, n, 1e-6, "LRN");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    free(x);
}

/* ---- _Fused* == the unfused kernels ----------------------------------------------------- */
static double act_ref(const char *act, double v, double alpha)
{
    if (!act) return v;
    if (!strcmp(act, "Relu")) return v < 0 ? 0 : v;
    if (!strcmp(act, "Relu6")) return v < 0 ? 0 : v > 6 ? 6 : v;
    if (!strcmp(act, "Elu")) return v < 0 ? exp(v) - 1 : v;
    if (!strcmp(act, "LeakyRelu")) return v > 0 ? v : v * alpha;
    if (!strcmp(act, "Tanh")) return tanh(v);
    if (!strcmp(act, "Sigmoid")) return 1 / (1 + exp(-v));
    if (!strcmp(act, "GeluApproximate")) return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    if (!strcmp(act, "GeluExact")) return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    fail_msg("unknown activation %s", act);
    return 0;
}

typedef struct fused_case {
    bool bn, add;
    const char *act;
} fused_case;

static const fused_case k_fused_cases[] = {
    {false, false, NULL},        {false, false, "Relu"},    {false, false, "Relu6"},
    {false, false, "Elu"},       {false, false, "LeakyRelu"}, {false, false, "Tanh"},
    {false, false, "Sigmoid"},   {false, false, "GeluApproximate"}, {false, false, "GeluExact"},
    {true, false, NULL},         {true, false, "Relu"},     {true, false, "Relu6"},
    {true, false, "Elu"},        {true, false, "LeakyRelu"},
    {false, true, NULL},         {false, true, "Relu"},     {true, true, "Relu"},
};

static const char *fused_ops_attr(const fused_case *fc, char *buf, size_t n)
{
    snprintf(buf, n, "attr { key: 'fused_ops' value { list { s: '%s'%s%s%s%s } } }", fc->bn ? "FusedBatchNorm" : "BiasAdd",
             fc->add ? " s: 'Add'" : "", fc->act ? " s: '" : "", fc->act ? fc->act : "", fc->act ? "'" : "");
    return buf;
}

/* The unfused sequence through the separate kernels: BiasAdd or
 * FusedBatchNormV3 (inference), AddV2 with the addend, then the activation
 * kernel. pre gets the value before the activation, post after it. */
static void unfused_tail(const fused_case *fc, const char *fmt, gn__tensor *y, const gn__tensor *args, float *pre,
                         float *post)
{
    int64_t n = gn__tensor_numel(y);
    gn__tensor o[6], cur;
    char at[512];
    if (fc->bn) {
        gn_graph *g = graph1("FusedBatchNormV3", 5, NULL, fbn_attrs(fmt, false, 1.0f, at, sizeof at));
        gn__tensor in[5] = {*y, args[0], args[1], args[2], args[3]};
        run_ok(g, in, 5, o, 6, 0);
        cur = o[0];
        gn_pt_krelease(o + 1, 5);
        gn_graph_free(g);
    } else {
        snprintf(at, sizeof at, "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'data_format' value { s: '%s' } }", fmt);
        gn_graph *g = graph1("BiasAdd", 2, NULL, at);
        gn__tensor in[2] = {*y, args[0]};
        run_ok(g, in, 2, o, 1, 0);
        cur = o[0];
        gn_graph_free(g);
    }
    if (fc->add) {
        gn_graph *g = graph1("AddV2", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        gn__tensor in[2] = {cur, args[fc->bn ? 4 : 1]};
        run_ok(g, in, 2, o, 1, 0);
        gn__tensor_release(&cur);
        cur = o[0];
        gn_graph_free(g);
    }
    memcpy(pre, cur.data, (size_t)n * sizeof(float));
    if (fc->act) {
        const char *op = fc->act, *extra = "";
        if (!strcmp(op, "GeluApproximate") || !strcmp(op, "GeluExact")) {
            extra = !strcmp(op, "GeluExact") ? "attr { key: 'approximate' value { b: false } }"
                                              : "attr { key: 'approximate' value { b: true } }";
            op = "Gelu";
        } else if (!strcmp(op, "LeakyRelu")) {
            extra = "attr { key: 'alpha' value { f: 0.3 } }";
        }
        snprintf(at, sizeof at, "attr { key: 'T' value { type: DT_FLOAT } } %s", extra);
        gn_graph *g = graph1(op, 1, NULL, at);
        run_ok(g, &cur, 1, o, 1, 0);
        gn__tensor_release(&cur);
        cur = o[0];
        gn_graph_free(g);
    }
    memcpy(post, cur.data, (size_t)n * sizeof(float));
    gn__tensor_release(&cur);
}

/* got == the activation kernels' post (exactly for the piecewise-linear ones,
 * else within 1e-6 * (1 + |v|)), and == the activation computed here from pre. */
static void check_fused_tail(const fused_case *fc, const float *got, const float *pre, const float *post, int64_t n,
                             const char *what)
{
    bool exact = !fc->act || !strcmp(fc->act, "Relu") || !strcmp(fc->act, "Relu6") || !strcmp(fc->act, "LeakyRelu");
    for (int64_t i = 0; i < n; i++) {
        double w = act_ref(fc->act, pre[i], 0.3);
        if (exact) {
            float wf = fc->act && !strcmp(fc->act, "LeakyRelu") ? (pre[i] > 0 ? pre[i] : pre[i] * 0.3f) : (float)w;
            if (got[i] != wf) fail_msg("%s: element %lld is %.9g, want exactly %.9g", what, (long long)i, got[i], wf);
            if (got[i] != post[i])
                fail_msg("%s: element %lld is %.9g, the unfused kernels give %.9g", what, (long long)i, got[i], post[i]);
        } else {
            if (!(fabs(got[i] - w) <= 1e-6 * (1 + fabs(w))))
                fail_msg("%s: element %lld is %.9g, want %.9g", what, (long long)i, got[i], w);
            if (!(fabs(got[i] - post[i]) <= 1e-6 * (1 + fabs(post[i]))))
                fail_msg("%s: element %lld is %.9g, the unfused kernels give %.9g", what, (long long)i, got[i], post[i]);
        }
    }
}

static void make_args(const fused_case *fc, int64_t ch, int64_t nout, float **bufs, gn__tensor *args, uint32_t *nargs,
                      int orank, const int64_t *odims)
{
    int64_t cd[1] = {ch};
    uint32_t k = 0;
    int npar = fc->bn ? 4 : 1;
    for (int i = 0; i < npar; i++) {
        bufs[k] = rnd(ch);
        if (fc->bn && i == 3)
            for (int64_t j = 0; j < ch; j++) bufs[k][j] = 0.5f + fabsf(bufs[k][j]);
        args[k] = tens(DT_F32, 1, cd, bufs[k]);
        k++;
    }
    if (fc->add) {
        bufs[k] = rnd(nout);
        args[k] = tens(DT_F32, orank, odims, bufs[k]);
        k++;
    }
    *nargs = k;
}

static void test_fused_conv2d(void **state)
{
    (void)state;
    cfg p = {.n = 2, .h = 6, .w = 5, .c = 3, .kh = 3, .kw = 3, .kc = 3, .o = 4, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "SAME"};
    cfg_finish(&p);
    int64_t nx = p.n * p.h * p.w * p.c, nf = p.kh * p.kw * p.c * p.o, ny = p.n * p.oh * p.ow * p.o;
    float *x = rnd(nx), *f = rnd(nf), *xt = malloc((size_t)nx * sizeof(float));
    assert_non_null(xt);
    to_nchw(x, xt, p.n, p.h, p.w, p.c);
    for (size_t ci = 0; ci < sizeof k_fused_cases / sizeof k_fused_cases[0]; ci++) {
        const fused_case *fc = &k_fused_cases[ci];
        for (int fi = 0; fi < 2; fi++) {
            const char *fmt = fi ? "NCHW" : "NHWC";
            int64_t xd[4] = {p.n, p.h, p.w, p.c}, xdc[4] = {p.n, p.c, p.h, p.w}, fd[4] = {p.kh, p.kw, p.c, p.o};
            int64_t od[4] = {p.n, p.oh, p.ow, p.o}, odc[4] = {p.n, p.o, p.oh, p.ow};
            float *bufs[6];
            gn__tensor args[6];
            uint32_t nargs;
            make_args(fc, p.o, ny, bufs, args, &nargs, 4, fi ? odc : od);
            /* unfused: Conv2D -> BiasAdd / FusedBatchNormV3 -> + addend -> activation */
            char at[2048], fo[256], full[3072];
            gn__tensor cin[2] = {tens(DT_F32, 4, fi ? xdc : xd, fi ? xt : x), tens(DT_F32, 4, fd, f)}, cout[1];
            gn_graph *g = graph1("Conv2D", 2, NULL, conv_attrs(&p, fmt, "DT_FLOAT", at, sizeof at));
            run_ok(g, cin, 2, cout, 1, 0);
            gn_graph_free(g);
            float *pre = malloc((size_t)ny * sizeof *pre), *post = malloc((size_t)ny * sizeof *post);
            assert_true(pre && post);
            unfused_tail(fc, fmt, &cout[0], args, pre, post);
            /* fused */
            char targs[256] = "";
            size_t tp = 0;
            for (uint32_t i = 0; i < nargs; i++) tp += (size_t)snprintf(targs + tp, sizeof targs - tp, " type: DT_FLOAT");
            snprintf(full, sizeof full,
                     "%s %s attr { key: 'num_args' value { i: %u } } attr { key: 'TArgs' value { list {%s } } } "
                     "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'leakyrelu_alpha' value { f: 0.3 } }",
                     conv_attrs(&p, fmt, "DT_FLOAT", at, sizeof at), fused_ops_attr(fc, fo, sizeof fo), nargs, targs);
            gn__tensor fin[8] = {cin[0], cin[1]}, fout[1];
            for (uint32_t i = 0; i < nargs; i++) fin[2 + i] = args[i];
            g = graph1("_FusedConv2D", 2 + (int)nargs, NULL, full);
            run_ok(g, fin, 2 + nargs, fout, 1, 0);
            char what[512];
            snprintf(what, sizeof what, "_FusedConv2D %s %s", fo, fmt);
            check_fused_tail(fc, fout[0].data, pre, post, ny, what);
            gn_graph_free(g);
            gn_pt_krelease(fout, 1);
            gn_pt_krelease(cout, 1);
            free(pre);
            free(post);
            for (uint32_t i = 0; i < nargs; i++) free(bufs[i]);
        }
    }
    free(x);
    free(f);
    free(xt);
}

static void test_fused_matmul_depthwise(void **state)
{
    (void)state;
    const int64_t m = 5, k = 7, n = 6;
    float *a = rnd(m * k), *b = rnd(k * n);
    int64_t ad[2] = {m, k}, bd[2] = {k, n}, od2[2] = {m, n};
    for (size_t ci = 0; ci < sizeof k_fused_cases / sizeof k_fused_cases[0]; ci++) {
        const fused_case *fc = &k_fused_cases[ci];
        if (fc->bn) continue;
        float *bufs[6];
        gn__tensor args[6];
        uint32_t nargs;
        make_args(fc, n, m * n, bufs, args, &nargs, 2, od2);
        gn__tensor in[2] = {tens(DT_F32, 2, ad, a), tens(DT_F32, 2, bd, b)}, mo[1];
        gn_graph *g = graph1("MatMul", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
        run_ok(g, in, 2, mo, 1, 0);
        gn_graph_free(g);
        float *pre = malloc((size_t)(m * n) * sizeof *pre), *post = malloc((size_t)(m * n) * sizeof *post);
        assert_true(pre && post);
        unfused_tail(fc, "NHWC", &mo[0], args, pre, post);
        char fo[256], full[1024];
        snprintf(full, sizeof full,
                 "attr { key: 'T' value { type: DT_FLOAT } } %s attr { key: 'num_args' value { i: %u } } "
                 "attr { key: 'leakyrelu_alpha' value { f: 0.3 } }",
                 fused_ops_attr(fc, fo, sizeof fo), nargs);
        gn__tensor fin[4] = {in[0], in[1]}, fout[1];
        for (uint32_t i = 0; i < nargs; i++) fin[2 + i] = args[i];
        g = graph1v("_FusedMatMul", 2 + (int)nargs, NULL, full, 0);
        run_ok(g, fin, 2 + nargs, fout, 1, 0);
        char what[512];
        snprintf(what, sizeof what, "_FusedMatMul %s", fo);
        check_fused_tail(fc, fout[0].data, pre, post, m * n, what);
        gn_graph_free(g);
        gn_pt_krelease(fout, 1);
        gn_pt_krelease(mo, 1);
        free(pre);
        free(post);
        for (uint32_t i = 0; i < nargs; i++) free(bufs[i]);
    }
    free(a);
    free(b);
    /* _FusedDepthwiseConv2dNative BiasAdd + Relu6, multiplier 2 */
    cfg p = {.n = 1, .h = 6, .w = 6, .c = 3, .kh = 3, .kw = 3, .kc = 3, .o = 2, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .pad = "SAME"};
    cfg_finish(&p);
    int64_t nx = p.h * p.w * p.c, nf = 9 * 3 * 2, ny = p.oh * p.ow * 6;
    float *x = rnd(nx), *f = rnd(nf), *bias = rnd(6);
    int64_t xd[4] = {1, p.h, p.w, p.c}, fd[4] = {3, 3, 3, 2}, cd[1] = {6};
    char at[2048], full[3072];
    gn__tensor in[3] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 4, fd, f), tens(DT_F32, 1, cd, bias)}, dout[1], fout[1];
    gn_graph *g = graph1("DepthwiseConv2dNative", 2, NULL, conv_attrs(&p, "NHWC", "DT_FLOAT", at, sizeof at));
    run_ok(g, in, 2, dout, 1, 0);
    gn_graph_free(g);
    fused_case fc = {false, false, "Relu6"};
    float *pre = malloc((size_t)ny * sizeof *pre), *post = malloc((size_t)ny * sizeof *post);
    assert_true(pre && post);
    unfused_tail(&fc, "NHWC", &dout[0], &in[2], pre, post);
    snprintf(full, sizeof full,
             "%s attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Relu6' } } }",
             conv_attrs(&p, "NHWC", "DT_FLOAT", at, sizeof at));
    g = graph1v("_FusedDepthwiseConv2dNative", 3, NULL, full, 0);
    run_ok(g, in, 3, fout, 1, 0);
    check_fused_tail(&fc, fout[0].data, pre, post, ny, "_FusedDepthwiseConv2dNative BiasAdd,Relu6");
    gn_graph_free(g);
    gn_pt_krelease(dout, 1);
    gn_pt_krelease(fout, 1);
    free(pre);
    free(post);
    free(x);
    free(f);
    free(bias);
}

/* float16 and float64 fused conv give the bits of the unfused kernels. */
static void test_fused_conv2d_f16_f64(void **state)
{
    (void)state;
    cfg p = {.n = 1, .h = 5, .w = 5, .c = 2, .kh = 3, .kw = 3, .kc = 2, .o = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "SAME"};
    cfg_finish(&p);
    int64_t nx = 50, nf = 54, ny = 75;
    float *x = rnd(nx), *f = rnd(nf), *bb = rnd(3), *ad = rnd(ny);
    gn__f16 xh[50], fh[54], bh[3], ah[75];
    double x64[50], f64v[54], b64[3], a64[75];
    for (int i = 0; i < 50; i++) xh[i] = (gn__f16)x[i], x64[i] = x[i];
    for (int i = 0; i < 54; i++) fh[i] = (gn__f16)f[i], f64v[i] = f[i];
    for (int i = 0; i < 3; i++) bh[i] = (gn__f16)bb[i], b64[i] = bb[i];
    for (int i = 0; i < 75; i++) ah[i] = (gn__f16)ad[i], a64[i] = ad[i];
    int64_t xd[4] = {1, 5, 5, 2}, fd[4] = {3, 3, 2, 3}, cd[1] = {3}, od[4] = {1, 5, 5, 3};
    for (int t = 0; t < 2; t++) {
        bool half = t == 0;
        int32_t dt = half ? DT_F16 : DT_F64;
        const char *tn = half ? "DT_HALF" : "DT_DOUBLE";
        const char *dts[5] = {tn, tn, tn, tn, tn};
        char at[2048], full[3072], ba[256];
        gn__tensor in[4] = {tens(dt, 4, xd, half ? (void *)xh : (void *)x64), tens(dt, 4, fd, half ? (void *)fh : (void *)f64v),
                            tens(dt, 1, cd, half ? (void *)bh : (void *)b64), tens(dt, 4, od, half ? (void *)ah : (void *)a64)};
        gn__tensor co[1], bo[1], fo[1];
        gn_graph *g = graph1("Conv2D", 2, dts, conv_attrs(&p, "NHWC", tn, at, sizeof at));
        run_ok(g, in, 2, co, 1, 0);
        gn_graph_free(g);
        snprintf(ba, sizeof ba, "attr { key: 'T' value { type: %s } }", tn);
        g = graph1("BiasAdd", 2, dts, ba);
        gn__tensor bin[2] = {co[0], in[2]};
        run_ok(g, bin, 2, bo, 1, 0);
        gn_graph_free(g);
        snprintf(full, sizeof full,
                 "%s attr { key: 'num_args' value { i: 2 } } attr { key: 'TArgs' value { list { type: %s type: %s } } } "
                 "attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Add' s: 'Relu' } } }",
                 conv_attrs(&p, "NHWC", tn, at, sizeof at), tn, tn);
        g = graph1("_FusedConv2D", 4, dts, full);
        run_ok(g, in, 4, fo, 1, 0);
        gn_graph_free(g);
        for (int i = 0; i < ny; i++) {
            if (half) {
                gn__f16 s = (gn__f16)((float)((gn__f16 *)bo[0].data)[i] + (float)ah[i]);
                gn__f16 w = (float)s < 0 ? (gn__f16)0 : s;
                if ((float)((gn__f16 *)fo[0].data)[i] != (float)w) fail_msg("f16 fused %d: %g vs %g", i, (float)((gn__f16 *)fo[0].data)[i], (float)w);
            } else {
                double s = ((double *)bo[0].data)[i] + a64[i];
                double w = s < 0 ? 0 : s;
                if (((double *)fo[0].data)[i] != w) fail_msg("f64 fused %d", i);
            }
        }
        gn_pt_krelease(co, 1);
        gn_pt_krelease(bo, 1);
        gn_pt_krelease(fo, 1);
    }
    free(x);
    free(f);
    free(bb);
    free(ad);
}

static void test_fused_batch_norm_ex(void **state)
{
    (void)state;
    const int64_t n = 2 * 2 * 3 * 4, C = 4;
    float *x = rnd(n), *side = rnd(n), scale[4] = {1, 2, 0.5f, -1}, off[4] = {0, 0.1f, -0.2f, 0.3f}, mean[4] = {0.1f, 0, -0.1f, 0.2f},
          var[4] = {1, 2, 0.5f, 0.25f};
    int64_t xd[4] = {2, 2, 3, 4}, cd[1] = {C};
    gn__tensor in[6] = {tens(DT_F32, 4, xd, x), tens(DT_F32, 1, cd, scale), tens(DT_F32, 1, cd, off),
                        tens(DT_F32, 1, cd, mean), tens(DT_F32, 1, cd, var), tens(DT_F32, 4, xd, side)},
               a[6], b[6];
    char at[512];
    gn_graph *g = graph1("FusedBatchNormV3", 5, NULL, fbn_attrs("NHWC", false, 1.0f, at, sizeof at));
    run_ok(g, in, 5, a, 6, 0);
    gn_graph_free(g);
    g = graph1v("_FusedBatchNormEx", 6, NULL,
                "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } "
                "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'is_training' value { b: false } } "
                "attr { key: 'num_side_inputs' value { i: 1 } } attr { key: 'activation_mode' value { s: 'Relu' } }",
                0);
    run_ok(g, in, 6, b, 6, 0);
    for (int64_t i = 0; i < n; i++) {
        float s = ((float *)a[0].data)[i] + side[i];
        float w = s < 0 ? 0 : s;
        if (((float *)b[0].data)[i] != w) fail_msg("_FusedBatchNormEx %lld", (long long)i);
    }
    gn_pt_krelease(a, 6);
    gn_pt_krelease(b, 6);
    gn_graph_free(g);
    free(x);
    free(side);
}

/* ---- messages ---------------------------------------------------------------------------- */
static void test_errors(void **state)
{
    (void)state;
    float buf[64] = {0};
    char at[2048];
    cfg p = {.sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "SAME"};
    gn_graph *g = graph1("Conv2D", 2, NULL, conv_attrs(&p, "NHWC", "DT_FLOAT", at, sizeof at));
    int64_t xd[4] = {1, 2, 2, 3}, fd[4] = {1, 1, 4, 2};
    gn__tensor in[2] = {tens(DT_F32, 4, xd, buf), tens(DT_F32, 4, fd, buf)};
    expect_error(g, in, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (Conv2D): input depth must be evenly divisible by filter depth: 3 vs 4");
    int64_t fd3[3] = {1, 1, 3};
    in[1] = tens(DT_F32, 3, fd3, buf);
    expect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (Conv2D): filter must be 4-dimensional: [1,1,3]");
    int8_t i8[16] = {0};
    in[0] = tens(DT_I8, 4, xd, i8);
    in[1] = tens(DT_I8, 4, fd, i8);
    expect_error(g, in, 2, 1, GN_ERR_UNSUPPORTED, "node 'n' (Conv2D): dtype int8 is not supported");
    gn_graph_free(g);
    /* a filter larger than the input, VALID */
    cfg pv = {.sh = 1, .sw = 1, .dh = 1, .dw = 1, .pad = "VALID"};
    g = graph1("Conv2D", 2, NULL, conv_attrs(&pv, "NHWC", "DT_FLOAT", at, sizeof at));
    int64_t fbig[4] = {4, 1, 3, 1};
    gn__tensor in2[2] = {tens(DT_F32, 4, xd, buf), tens(DT_F32, 4, fbig, buf)};
    expect_error(g, in2, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (Conv2D): Computed output size would be negative: -1 [input_size: 2, "
                 "effective_filter_size: 4, stride: 1]");
    gn_graph_free(g);
    /* MatMul 2x3 x 4x5 */
    g = graph1("MatMul", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
    int64_t a23[2] = {2, 3}, b45[2] = {4, 5}, v3[1] = {3};
    gn__tensor mm[2] = {tens(DT_F32, 2, a23, buf), tens(DT_F32, 2, b45, buf)};
    expect_error(g, mm, 2, 1, GN_ERR_GRAPH, "node 'n' (MatMul): Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
    mm[0] = tens(DT_F32, 1, v3, buf);
    expect_error(g, mm, 2, 1, GN_ERR_GRAPH, "node 'n' (MatMul): In[0] is not a matrix. Instead it has shape [3]");
    gn_graph_free(g);
    /* BatchMatMulV2 batch dims */
    g = graph1("BatchMatMulV2", 2, NULL, "attr { key: 'T' value { type: DT_FLOAT } }");
    int64_t x3[3] = {2, 2, 2}, y3[3] = {3, 2, 2};
    gn__tensor bm[2] = {tens(DT_F32, 3, x3, buf), tens(DT_F32, 3, y3, buf)};
    expect_error(g, bm, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (BatchMatMulV2): In[0] and In[1] must have compatible batch dimensions: [2,2,2] vs. [3,2,2]");
    gn_graph_free(g);
    /* data_format NCHW_VECT_C and an unknown padding */
    g = graph1("MaxPool", 1, NULL, pool_attrs("DT_FLOAT", "NCHW_VECT_C", 2, 2, "VALID", at, sizeof at));
    int64_t pd[4] = {1, 2, 2, 1};
    gn__tensor pin[1] = {tens(DT_F32, 4, pd, buf)};
    expect_error(g, pin, 1, 1, GN_ERR_UNSUPPORTED, "node 'n' (MaxPool): data_format 'NCHW_VECT_C' is not supported");
    gn_graph_free(g);
    g = graph1v("Conv2D", 2, NULL,
                "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
                "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'data_format' value { s: 'NCHW_VECT_C' } }",
                0);
    expect_error(g, in2, 2, 1, GN_ERR_UNSUPPORTED, "node 'n' (Conv2D): data_format 'NCHW_VECT_C' is not supported");
    gn_graph_free(g);
    /* Einsum dimension mismatch */
    g = graph1("Einsum", 2, NULL,
               "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 2 } } "
               "attr { key: 'equation' value { s: 'ij,jk->ik' } }");
    gn__tensor ein[2] = {tens(DT_F32, 2, a23, buf), tens(DT_F32, 2, b45, buf)};
    expect_error(g, ein, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (Einsum): Expected dimension 3 at axis 0 of the input shaped [4,5] but got dimension 4");
    gn_graph_free(g);
    /* unsupported fused_ops */
    g = graph1v("_FusedMatMul", 3, NULL,
                "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'num_args' value { i: 1 } } "
                "attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Softplus' } } }",
                0);
    int64_t a22[2] = {2, 2}, v2[1] = {2};
    gn__tensor fm[3] = {tens(DT_F32, 2, a22, buf), tens(DT_F32, 2, a22, buf), tens(DT_F32, 1, v2, buf)};
    expect_error(g, fm, 3, 1, GN_ERR_UNSUPPORTED, "node 'n' (_FusedMatMul): fused_ops [BiasAdd,Softplus] is not supported");
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_variants),
        cmocka_unit_test(test_depthwise),
        cmocka_unit_test(test_conv2d_reference_path),
        cmocka_unit_test(test_conv2d_f16_f64),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_batch_matmul),
        cmocka_unit_test(test_einsum),
        cmocka_unit_test(test_bias_add),
        cmocka_unit_test(test_fused_batch_norm),
        cmocka_unit_test(test_pool_same_edges),
        cmocka_unit_test(test_lrn),
        cmocka_unit_test(test_fused_conv2d),
        cmocka_unit_test(test_fused_matmul_depthwise),
        cmocka_unit_test(test_fused_conv2d_f16_f64),
        cmocka_unit_test(test_fused_batch_norm_ex),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_extract_image_patches),
        cmocka_unit_test(test_max_pool_with_argmax),
        cmocka_unit_test(test_space_batch_v1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
