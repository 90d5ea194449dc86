/* The gradient kernels (src/ops/kernels/nn_grad.c), run on the CPU backend.
 * Each is checked against its forward op by the adjoint identity that
 * defines it: for y = f(x) linear in x (Conv2D in its input and in its
 * filter, MaxPool and BiasAdd piecewise), <f(x), dy> = <x, grad(dy)>, in
 * both data formats, with strides, dilations and SAME / VALID / EXPLICIT
 * padding (relative error 1e-5); BiasAddGrad and ReluGrad exactly; the
 * batch-norm gradient by its closed form (offset = sum dy, scale = sum
 * dy * xhat, inference dx = dy * scale / sqrt(var + eps)) and by the two
 * constraints the training-mode dx satisfies (each channel sums to zero;
 * its product with x - mean is what epsilon leaves). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3

static float *pseudo(int64_t n, uint32_t seed)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    for (int64_t k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return x;
}

static double dot(const float *a, const float *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

static void expect_close(double a, double b, double tol, const char *what)
{
    double d = fabs(a - b), m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (d > tol * (m > 1 ? m : 1)) fail_msg("%s: %.9g vs %.9g", what, a, b);
}

typedef struct conv_case {
    const char *fmt, *pad;
    int64_t x[4], f[4], s, d;      /* x in fmt order, filter HWIO, stride and dilation on H and W */
    const char *explicit_pads;     /* attr text or "" */
} conv_case;

static void list4(char *buf, size_t n, const char *key, const char *fmt, int64_t v)
{
    if (!strcmp(fmt, "NHWC")) snprintf(buf, n, "attr { key: '%s' value { list { i: 1 i: %lld i: %lld i: 1 } } } ", key, (long long)v, (long long)v);
    else snprintf(buf, n, "attr { key: '%s' value { list { i: 1 i: 1 i: %lld i: %lld } } } ", key, (long long)v, (long long)v);
}

static void run_conv_case(const conv_case *k)
{
    char st[160], dl[160], text[8192];
    list4(st, sizeof st, "strides", k->fmt, k->s);
    list4(dl, sizeof dl, "dilations", k->fmt, k->d);
    char common[1024];
    snprintf(common, sizeof common, "%s attr { key: 'data_format' value { s: '%s' } } attr { key: 'padding' value { s: '%s' } } %s%s%s",
             TF, k->fmt, k->pad, st, dl, k->explicit_pads);
    snprintf(text, sizeof text,
             PH("x") PH("w") PH("dy")
             "node { name: 'y' op: 'Conv2D' input: 'x' input: 'w' %s }\n"
             "node { name: 'xs' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
             "node { name: 'ws' op: 'Shape' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
             "node { name: 'dx' op: 'Conv2DBackpropInput' input: 'xs' input: 'w' input: 'dy' %s }\n"
             "node { name: 'dw' op: 'Conv2DBackpropFilter' input: 'x' input: 'ws' input: 'dy' %s }\n",
             common, common, common);
    gn_graph *g = gn_pt_load_text(text);
    int64_t nx = k->x[0] * k->x[1] * k->x[2] * k->x[3], nf = k->f[0] * k->f[1] * k->f[2] * k->f[3];
    float *x = pseudo(nx, 3), *w = pseudo(nf, 5);
    gn_tensor ft[3];
    ft[0] = gn_pt_view(DT_FLOAT, x, (size_t)nx * 4, 4, k->x);
    ft[1] = gn_pt_view(DT_FLOAT, w, (size_t)nf * 4, 4, k->f);
    /* the forward output's shape first, then dy of that shape */
    const char *fn[3] = {"x", "w", "dy"}, *yn[1] = {"y"};
    gn_tensor y;
    gn_pt_run_graph(g, fn, ft, 2, yn, &y, 1);
    int64_t ny = gn_tensor_numel(&y);
    float *dy = pseudo(ny, 11);
    ft[2] = gn_pt_view(DT_FLOAT, dy, (size_t)ny * 4, 4, y.dims);
    const char *xn[2] = {"dx", "dw"};
    gn_tensor out[2];
    gn_pt_run_graph(g, fn, ft, 3, xn, out, 2);
    assert_int_equal(gn_tensor_numel(&out[0]), nx);
    assert_int_equal(gn_tensor_numel(&out[1]), nf);
    for (int i = 0; i < 4; i++) assert_int_equal(out[0].dims[i], k->x[i]);
    for (int i = 0; i < 4; i++) assert_int_equal(out[1].dims[i], k->f[i]);
    double lhs = dot(y.data, dy, ny);
    char what[128];
    snprintf(what, sizeof what, "%s %s s%lld d%lld: <conv(x), dy> vs <x, dx>", k->fmt, k->pad, (long long)k->s, (long long)k->d);
    expect_close(lhs, dot(x, out[0].data, nx), 1e-5, what);
    snprintf(what, sizeof what, "%s %s s%lld d%lld: <conv(x), dy> vs <w, dw>", k->fmt, k->pad, (long long)k->s, (long long)k->d);
    expect_close(lhs, dot(w, out[1].data, nf), 1e-5, what);
    gn_tensor_free(&y);
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    free(x);
    free(w);
    free(dy);
    gn_graph_free(g);
}

static void test_conv_grads(void **state)
{
    (void)state;
    const conv_case cases[] = {
        {"NHWC", "SAME", {2, 6, 5, 3}, {3, 3, 3, 4}, 1, 1, ""},
        {"NCHW", "SAME", {2, 3, 6, 5}, {3, 3, 3, 4}, 1, 1, ""},
        {"NHWC", "VALID", {1, 7, 8, 2}, {3, 2, 2, 3}, 2, 1, ""},
        {"NCHW", "VALID", {1, 2, 7, 8}, {3, 2, 2, 3}, 2, 1, ""},
        {"NHWC", "SAME", {1, 7, 7, 2}, {3, 3, 2, 2}, 1, 2, ""},
        {"NCHW", "SAME", {1, 2, 8, 7}, {2, 3, 2, 2}, 2, 1, ""},
        {"NHWC", "EXPLICIT", {1, 5, 6, 2}, {3, 3, 2, 2}, 1, 1,
         "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 1 i: 2 i: 0 i: 1 i: 0 i: 0 } } } "},
        {"NCHW", "EXPLICIT", {1, 2, 5, 6}, {3, 3, 2, 2}, 1, 1,
         "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 0 i: 0 i: 1 i: 2 i: 0 i: 1 } } } "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_conv_case(&cases[i]);
}

static void run_pool_case(const char *fmt, const char *pad, const int64_t *xd, int64_t k, int64_t s)
{
    char ks[160], st[160], text[4096];
    list4(ks, sizeof ks, "ksize", fmt, k);
    list4(st, sizeof st, "strides", fmt, s);
    snprintf(text, sizeof text,
             PH("x") PH("g")
             "node { name: 'y' op: 'MaxPool' input: 'x' " TF "attr { key: 'data_format' value { s: '%s' } } attr { key: "
             "'padding' value { s: '%s' } } %s%s }\n"
             "node { name: 'dx' op: 'MaxPoolGrad' input: 'x' input: 'y' input: 'g' " TF "attr { key: 'data_format' value { "
             "s: '%s' } } attr { key: 'padding' value { s: '%s' } } %s%s }\n",
             fmt, pad, ks, st, fmt, pad, ks, st);
    gn_graph *g = gn_pt_load_text(text);
    int64_t nx = xd[0] * xd[1] * xd[2] * xd[3];
    float *x = pseudo(nx, 21);
    gn_tensor ft[2];
    ft[0] = gn_pt_view(DT_FLOAT, x, (size_t)nx * 4, 4, xd);
    const char *fn[2] = {"x", "g"}, *yn[1] = {"y"}, *xn[1] = {"dx"};
    gn_tensor y, dx;
    gn_pt_run_graph(g, fn, ft, 1, yn, &y, 1);
    int64_t ny = gn_tensor_numel(&y);
    float *gv = pseudo(ny, 23);
    ft[1] = gn_pt_view(DT_FLOAT, gv, (size_t)ny * 4, 4, y.dims);
    gn_pt_run_graph(g, fn, ft, 2, xn, &dx, 1);
    assert_int_equal(gn_tensor_numel(&dx), nx);
    char what[96];
    snprintf(what, sizeof what, "MaxPool %s %s k%lld s%lld", fmt, pad, (long long)k, (long long)s);
    expect_close(dot(y.data, gv, ny), dot(x, dx.data, nx), 1e-5, what);
    /* every gradient lands on one input: the totals agree */
    double a = 0, b = 0;
    for (int64_t i = 0; i < ny; i++) a += gv[i];
    for (int64_t i = 0; i < nx; i++) b += ((const float *)dx.data)[i];
    expect_close(a, b, 1e-5, what);
    gn_tensor_free(&y);
    gn_tensor_free(&dx);
    free(x);
    free(gv);
    gn_graph_free(g);
}

static void test_max_pool_grad(void **state)
{
    (void)state;
    run_pool_case("NHWC", "VALID", (const int64_t[]){2, 6, 6, 3}, 2, 2);
    run_pool_case("NCHW", "VALID", (const int64_t[]){2, 3, 6, 6}, 2, 2);
    run_pool_case("NHWC", "SAME", (const int64_t[]){1, 5, 7, 2}, 3, 2);
    run_pool_case("NCHW", "SAME", (const int64_t[]){1, 2, 5, 7}, 3, 1);
}

static void test_bias_relu_grads(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("d") PH("f")
                                  "node { name: 'b1' op: 'BiasAddGrad' input: 'd' " TF "attr { key: 'data_format' value { s: 'NHWC' } } }\n"
                                  "node { name: 'b2' op: 'BiasAddGrad' input: 'd' " TF "attr { key: 'data_format' value { s: 'NCHW' } } }\n"
                                  "node { name: 'r' op: 'ReluGrad' input: 'd' input: 'f' " TF "}\n"
                                  "node { name: 'r6' op: 'Relu6Grad' input: 'd' input: 'f' " TF "}\n");
    float d[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, f[12] = {-1, 0, 0.5f, 6, 7, 2, -3, 1, 5.5f, 6.5f, 0, 3};
    int64_t dims[4] = {1, 2, 2, 3};
    gn_tensor ft[2] = {gn_pt_view(DT_FLOAT, d, sizeof d, 4, dims), gn_pt_view(DT_FLOAT, f, sizeof f, 4, dims)};
    const char *fn[2] = {"d", "f"}, *xn[4] = {"b1", "b2", "r", "r6"};
    gn_tensor out[4];
    gn_pt_run_graph(g, fn, ft, 2, xn, out, 4);
    /* NHWC: the last dimension (3 channels); NCHW: dimension 1 (2 channels) */
    assert_int_equal(out[0].dims[0], 3);
    const float *b1 = out[0].data, *b2 = out[1].data, *r = out[2].data, *r6 = out[3].data;
    assert_true(b1[0] == 22 && b1[1] == 26 && b1[2] == 30);
    assert_int_equal(out[1].dims[0], 2);
    assert_true(b2[0] == 21 && b2[1] == 57);
    const float wr[12] = {0, 0, 3, 4, 5, 6, 0, 8, 9, 10, 0, 12}, wr6[12] = {0, 0, 3, 0, 0, 6, 0, 8, 9, 0, 0, 12};
    assert_memory_equal(r, wr, sizeof wr);
    assert_memory_equal(r6, wr6, sizeof wr6);
    for (int i = 0; i < 4; i++) gn_tensor_free(&out[i]);
    gn_graph_free(g);
}

static void run_bn_grad(const char *fmt, const int64_t *xd, int ci)
{
    char text[4096];
    snprintf(text, sizeof text,
             PH("dy") PH("x") PH("sc") PH("mu") PH("var")
             "node { name: 'g' op: 'FusedBatchNormGradV3' input: 'dy' input: 'x' input: 'sc' input: 'mu' input: 'var' "
             "input: 'mu' " TF "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'epsilon' value { f: 0.001 } } "
             "attr { key: 'data_format' value { s: '%s' } } attr { key: 'is_training' value { b: true } } }\n"
             "node { name: 'gi' op: 'FusedBatchNormGradV3' input: 'dy' input: 'x' input: 'sc' input: 'mu' input: 'var' "
             "input: 'mu' " TF "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'epsilon' value { f: 0.001 } } "
             "attr { key: 'data_format' value { s: '%s' } } attr { key: 'is_training' value { b: false } } }\n",
             fmt, fmt);
    gn_graph *g = gn_pt_load_text(text);
    int64_t n = xd[0] * xd[1] * xd[2] * xd[3], ch = xd[ci], per = n / ch;
    float *dy = pseudo(n, 31), *x = pseudo(n, 37), sc[8], mu[8], var[8];
    /* batch statistics of x */
    int64_t inner = 1;
    for (int i = ci + 1; i < 4; i++) inner *= xd[i];
    for (int64_t k = 0; k < ch; k++) {
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < n; i++)
            if ((i / inner) % ch == k) s += x[i];
        mu[k] = (float)(s / (double)per);
        for (int64_t i = 0; i < n; i++)
            if ((i / inner) % ch == k) s2 += ((double)x[i] - mu[k]) * ((double)x[i] - mu[k]);
        var[k] = (float)(s2 / (double)per);
        sc[k] = 0.5f + 0.25f * (float)k;
    }
    int64_t vd[1] = {ch};
    gn_tensor ft[5] = {gn_pt_view(DT_FLOAT, dy, (size_t)n * 4, 4, xd), gn_pt_view(DT_FLOAT, x, (size_t)n * 4, 4, xd),
                       gn_pt_view(DT_FLOAT, sc, (size_t)ch * 4, 1, vd), gn_pt_view(DT_FLOAT, mu, (size_t)ch * 4, 1, vd),
                       gn_pt_view(DT_FLOAT, var, (size_t)ch * 4, 1, vd)};
    const char *fn[5] = {"dy", "x", "sc", "mu", "var"}, *xn[4] = {"g", "g:1", "g:2", "gi"};
    gn_tensor out[4];
    gn_pt_run_graph(g, fn, ft, 5, xn, out, 4);
    const float *dx = out[0].data, *dsc = out[1].data, *dof = out[2].data, *dxi = out[3].data;
    for (int64_t k = 0; k < ch; k++) {
        double inv = 1.0 / sqrt((double)var[k] + 0.001), sdy = 0, sxh = 0, sdx = 0, sdxc = 0, absdx = 0, absxc = 0;
        for (int64_t i = 0; i < n; i++) {
            if ((i / inner) % ch != k) continue;
            double xc = (double)x[i] - mu[k], xh = xc * inv;
            sdy += dy[i];
            sxh += dy[i] * xh;
            sdx += dx[i];
            sdxc += dx[i] * xc;
            absdx += fabs(dx[i]);
            absxc += fabs(xc);
            expect_close(dxi[i], (double)dy[i] * sc[k] * inv, 1e-5, "inference dx");
        }
        expect_close(dof[k], sdy, 1e-5, "offset_backprop");
        expect_close(dsc[k], sxh, 1e-5, "scale_backprop");
        assert_true(fabs(sdx) <= 1e-5 * absdx);
        /* <dx, x - mean> = scale * inv * <dy, xhat> * eps / (var + eps): zero but for epsilon */
        double want = sc[k] * sxh * 0.001 * inv * inv;
        assert_true(fabs(sdxc - want) <= 1e-5 * (absdx * absxc / (double)per + fabs(want)));
    }
    for (int i = 0; i < 4; i++) gn_tensor_free(&out[i]);
    free(dy);
    free(x);
    gn_graph_free(g);
}

static void test_batch_norm_grad(void **state)
{
    (void)state;
    run_bn_grad("NHWC", (const int64_t[]){2, 3, 4, 3}, 3);
    run_bn_grad("NCHW", (const int64_t[]){2, 3, 4, 5}, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_grads),
        cmocka_unit_test(test_max_pool_grad),
        cmocka_unit_test(test_bias_relu_grads),
        cmocka_unit_test(test_batch_norm_grad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
