/* The remapper (src/optimizer/passes/remap.c), one pattern at a time: a small
 * graph before, the exact graph after, the fused node's attributes, the
 * refusals with their reasons, both policies on the same graph, and the
 * original and the rewritten graph run on the CPU backend on the same feeds
 * (relative L2 <= 1e-5 for fusions, which compute the same arithmetic in the
 * same order; <= 1e-4 where a batch norm is folded into weights or into
 * scale-and-offset, which rounds differently). Then the golden models and the
 * corpus CNNs through gn_optimize with the default options for targets cpu
 * and gpu:sm_90: the result validates, the number of fused nodes per model
 * is exact, and the outputs agree with the original within 1e-4. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "ops/kernel.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_DOUBLE 2

/* ---- graph text ------------------------------------------------------------------------------- */
typedef struct gb {
    gn_pt_text t;     /* the text (passtest.h) */
    uint64_t seed;    /* the values of its constants */
} gb;

static void gb_init(gb *b)
{
    memset(b, 0, sizeof *b);
    b->seed = 0x2545F4914F6CDD1Dull;
}

static float rnd(gb *b, float lo, float hi)
{
    b->seed = b->seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((double)(b->seed >> 40) / (double)(1ull << 24));
}

typedef struct cst_range {
    gb *b;
    float lo, hi;
} cst_range;

static double cst_value(void *ctx)
{
    cst_range *r = ctx;
    return rnd(r->b, r->lo, r->hi);
}

/* A float (or double) constant with values in [lo, hi). */
static void cst(gb *b, const char *name, const char *dt, const int64_t *d, int r, float lo, float hi)
{
    cst_range c = {b, lo, hi};
    gn_pt_text_const_gen(&b->t, name, dt, r, d, "%.6g", cst_value, &c);
}

static void conv(gb *b, const char *name, const char *op, const char *x, const char *w, const char *dt, const char *fmt,
                 const char *pad)
{
    char in[256], attrs[512];
    snprintf(in, sizeof in, "%s,%s", x, w);
    snprintf(attrs, sizeof attrs,
             "attr { key: 'data_format' value { s: '%s' } } attr { key: 'padding' value { s: '%s' } } "
             "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
             "attr { key: 'dilations' value { list { i: 1 i: 1 i: 1 i: 1 } } }%s",
             fmt, pad, !strcmp(op, "Conv2D") ? " attr { key: 'use_cudnn_on_gpu' value { b: true } }" : "");
    gn_pt_text_op(&b->t, name, op, in, dt, attrs);
}

static void bias(gb *b, const char *name, const char *x, const char *bb, const char *dt, const char *fmt)
{
    char in[256], attrs[128];
    snprintf(in, sizeof in, "%s,%s", x, bb);
    snprintf(attrs, sizeof attrs, "attr { key: 'data_format' value { s: '%s' } }", fmt);
    gn_pt_text_op(&b->t, name, "BiasAdd", in, dt, attrs);
}

static void matmul(gb *b, const char *name, const char *x, const char *w, bool tb)
{
    char in[256];
    snprintf(in, sizeof in, "%s,%s", x, w);
    gn_pt_text_op(&b->t, name, "MatMul", in, "f", tb ? AB("transpose_a", "false") AB("transpose_b", "true")
                                                       : AB("transpose_a", "false") AB("transpose_b", "false"));
}

/* FusedBatchNormV3 with parameters p/scale, p/offset, p/mean, p/var (constants made here when mk). */
static void fbn(gb *b, const char *name, const char *x, const char *p, int64_t ch, const char *fmt, bool training,
                bool mk)
{
    if (mk) {
        char n[128];
        int64_t d[1] = {ch};
        snprintf(n, sizeof n, "%s/scale", p);
        cst(b, n, "DT_FLOAT", d, 1, 0.5f, 1.5f);
        snprintf(n, sizeof n, "%s/offset", p);
        cst(b, n, "DT_FLOAT", d, 1, -0.5f, 0.5f);
        snprintf(n, sizeof n, "%s/mean", p);
        cst(b, n, "DT_FLOAT", d, 1, -0.3f, 0.3f);
        snprintf(n, sizeof n, "%s/var", p);
        cst(b, n, "DT_FLOAT", d, 1, 0.2f, 2.0f);
    }
    char in[512], attrs[256];
    snprintf(in, sizeof in, "%s,%s/scale,%s/offset,%s/mean,%s/var", x, p, p, p, p);
    snprintf(attrs, sizeof attrs,
             AT("U", "DT_FLOAT") "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'data_format' value { s: '%s' } } "
             "attr { key: 'is_training' value { b: %s } }",
             fmt, training ? "true" : "false");
    gn_pt_text_op(&b->t, name, "FusedBatchNormV3", in, "f", attrs);
}

/* ---- running -------------------------------------------------------------------------------- */
typedef struct feed {
    const char *name;
    int32_t dtype;
    int rank;
    int64_t dims[4];
} feed;

static void fill(gn_tensor *t, uint64_t seed)
{
    int64_t n = gn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(seed >> 40) / (double)(1ull << 24) * 4.0 - 2.0;
        if (t->dtype == DT_DOUBLE) ((double *)t->data)[i] = v;
        else ((float *)t->data)[i] = (float)v;
    }
}

/* Runs before and after on random feeds; every fetch agrees within tol (rel L2). */
static void expect_same(const gn_graph *before, const gn_graph *after, const feed *fd, size_t nf,
                        const char *const *xn, size_t nx, double tol)
{
    gn_tensor ft[4];
    const char *fn[4];
    assert_true(nf <= 4 && nx <= 4);
    for (size_t i = 0; i < nf; i++) {
        assert_int_equal(gn_tensor_alloc(fd[i].dtype, fd[i].rank, fd[i].dims, &ft[i]), GN_OK);
        fill(&ft[i], 77 + i);
        fn[i] = fd[i].name;
    }
    gn_pt_expect_close(before, after, fn, ft, nf, xn, nx, tol, NULL);
    for (size_t i = 0; i < nf; i++) gn_tensor_free(&ft[i]);
}

typedef struct rx {
    gn_pt_fx f;
    gn_graph *g, *before;
} rx;

/* Loads text, preserves `keep`, runs the pass for target (cpu / gpu:sm_90) and policy. */
static bool rx_run(rx *x, const char *text, const char *keep, bool gpu, int policy)
{
    x->g = gn_pt_load_text(text);
    gn_pt_preserve_list(x->g, keep);
    x->before = gn_pt_clone(x->g);
    gn_pt_fx_init(&x->f, NULL);
    gn_pt_fx_pass(&x->f, "remap");
    if (gpu) gn_pt_fx_gpu(&x->f, 90);
    x->f.o.remap_policy = policy;
    return gn_pt_fx_run(&x->f, gn__pass_remap, x->g);
}

static void rx_free(rx *x)
{
    gn_pt_fx_free(&x->f);
    gn_graph_free(x->g);
    gn_graph_free(x->before);
}

static const int64_t d_x[4] = {2, 6, 6, 3}, d_w33[4] = {3, 3, 3, 4}, d_b4[1] = {4};
static const feed f_x = {"x", DT_FLOAT, 4, {2, 6, 6, 3}};

/* ---- remap.contraction_bias_act ------------------------------------------------------------- */
static void conv_bias_act_text(gb *b, const char *act, const char *dt, const char *op, const int64_t *wd)
{
    gn_pt_text_ph_dims(&b->t, "x", dt, 4, d_x);
    int64_t bd[1] = {!strcmp(op, "DepthwiseConv2dNative") ? wd[2] * wd[3] : wd[3]};
    cst(b, "w", dt, wd, 4, -1, 1);
    cst(b, "b", dt, bd, 1, -1, 1);
    conv(b, "conv", op, "x", "w", dt, "NHWC", "SAME");
    bias(b, "bias", "conv", "b", dt, "NHWC");
    if (act) {
        if (!strcmp(act, "LeakyRelu"))
            gn_pt_text_add(&b->t, "node { name: 'act' op: 'LeakyRelu' input: 'bias' attr { key: 'T' value { type: %s } } attr { key: "
                   "'alpha' value { f: 0.3 } } }\n",
                dt);
        else gn_pt_text_op(&b->t, "act", act, "bias", dt, NULL);
    }
}

static void test_conv_bias_relu(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_FLOAT", "Conv2D", d_w33);
    rx x;
    assert_true(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)");
    gn_pt_expect_attr_strs(x.g, "act", "fused_ops", "BiasAdd,Relu");
    gn_pt_expect_attr_i(x.g, "act", "num_args", 1);
    gn_pt_expect_attr_f(x.g, "act", "epsilon", 0.0f);
    gn_pt_expect_attr_s(x.g, "act", "padding", "SAME");
    gn_pt_expect_attr_s(x.g, "act", "data_format", "NHWC");
    assert_non_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "strides"));
    assert_non_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "dilations"));
    assert_non_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "use_cudnn_on_gpu"));
    assert_non_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "TArgs"));
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: act: fused Conv2D 'conv' + BiasAdd 'bias' + Relu 'act' into "
                                "_FusedConv2D");
    const char *xn[1] = {"act"};
    expect_same(x.before, x.g, &f_x, 1, xn, 1, 1e-5);
    /* a second run finds nothing */
    assert_false(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* Every activation the fused kernels take, into Conv2D, DepthwiseConv2dNative (1x1 too). */
static void test_activations(void **state)
{
    (void)state;
    static const char *const acts[] = {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
    static const int64_t d_dw[4] = {3, 3, 3, 2}, d_w11[4] = {1, 1, 3, 5};
    const struct {
        const char *op, *fused;
        const int64_t *wd;
    } convs[] = {{"Conv2D", "_FusedConv2D", d_w33}, {"Conv2D", "_FusedConv2D", d_w11},
                 {"DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative", d_dw}};
    for (size_t c = 0; c < 3; c++)
        for (size_t a = 0; a < 6; a++) {
            gb b;
            gb_init(&b);
            conv_bias_act_text(&b, acts[a], "DT_FLOAT", convs[c].op, convs[c].wd);
            rx x;
            for (int gpu = 0; gpu < 2; gpu++) {
                assert_true(rx_run(&x, b.t.s, "act", gpu, GN_REMAP_POLICY_GRAPNEL));
                char want[256], ops[64];
                snprintf(want, sizeof want, "x=Placeholder(); w=Const(); b=Const(); act=%s(x, w, b)", convs[c].fused);
                gn_pt_expect_dump(x.g, want);
                snprintf(ops, sizeof ops, "BiasAdd,%s", acts[a]);
                gn_pt_expect_attr_strs(x.g, "act", "fused_ops", ops);
                if (a == 3) gn_pt_expect_attr_f(x.g, "act", "leakyrelu_alpha", 0.3f);
                else assert_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "leakyrelu_alpha"));
                const char *xn[1] = {"act"};
                expect_same(x.before, x.g, &f_x, 1, xn, 1, 1e-5);
                rx_free(&x);
            }
            gn_pt_text_free(&b.t);
        }
}

/* Conv2D + BiasAdd alone, NCHW. */
static void test_conv_bias_nchw(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t xd[4] = {2, 3, 6, 6};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, xd);
    cst(&b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    cst(&b, "b", "DT_FLOAT", d_b4, 1, -1, 1);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NCHW", "VALID");
    bias(&b, "bias", "conv", "b", "DT_FLOAT", "NCHW");
    gn_pt_text_op(&b.t, "y", "Neg", "bias", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "y", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); bias=_FusedConv2D(x, w, b); y=Neg(bias)");
    gn_pt_expect_attr_strs(x.g, "bias", "fused_ops", "BiasAdd");
    gn_pt_expect_attr_s(x.g, "bias", "data_format", "NCHW");
    const feed f = {"x", DT_FLOAT, 4, {2, 3, 6, 6}};
    const char *xn[1] = {"y"};
    expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* NCHW Conv2D + AddV2 of a [C, 1, 1] constant (what the layout optimizer makes of a bias): the
 * constant becomes a vector "<add>/bias". */
static void test_conv_add_nchw(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t xd[4] = {2, 3, 6, 6}, bd[3] = {4, 1, 1};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, xd);
    cst(&b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    cst(&b, "b", "DT_FLOAT", bd, 3, -1, 1);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NCHW", "SAME");
    gn_pt_text_op(&b.t, "add", "AddV2", "conv,b", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "r", "Elu", "add", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "r", true, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); r=_FusedConv2D(x, w, add/bias); add/bias=Const()");
    gn_pt_expect_attr_strs(x.g, "r", "fused_ops", "BiasAdd,Elu");
    const feed f = {"x", DT_FLOAT, 4, {2, 3, 6, 6}};
    const char *xn[1] = {"r"};
    expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
    /* a [C, 1, 1] constant with an NHWC convolution is no bias: nothing */
    gb_init(&b);
    int64_t xh[4] = {2, 4, 4, 3}, bh[3] = {4, 1, 1};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, xh);
    cst(&b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    cst(&b, "b", "DT_FLOAT", bh, 3, -1, 1);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "SAME");
    gn_pt_text_op(&b.t, "add", "AddV2", "conv,b", "DT_FLOAT", NULL);
    assert_false(rx_run(&x, b.t.s, "add", false, GN_REMAP_POLICY_GRAPNEL));
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* MatMul + AddV2 of a 1-D constant (a bias by TensorFlow's rule) + Tanh; MatMul + BiasAdd + Sigmoid. */
static void test_matmul(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t xd[2] = {3, 5}, wd[2] = {5, 4}, wtd[2] = {4, 5}, bd[1] = {4};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 2, xd);
    cst(&b, "w", "DT_FLOAT", wd, 2, -1, 1);
    cst(&b, "wt", "DT_FLOAT", wtd, 2, -1, 1);
    cst(&b, "b", "DT_FLOAT", bd, 1, -1, 1);
    matmul(&b, "mm", "x", "w", false);
    gn_pt_text_op(&b.t, "add", "AddV2", "b,mm", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "t", "Tanh", "add", "DT_FLOAT", NULL);
    matmul(&b, "mm2", "x", "wt", true);
    bias(&b, "bias2", "mm2", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b.t, "s", "Sigmoid", "bias2", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "t,s", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); wt=Const(); b=Const(); t=_FusedMatMul(x, w, b); "
                           "s=_FusedMatMul(x, wt, b)");
    gn_pt_expect_attr_strs(x.g, "t", "fused_ops", "BiasAdd,Tanh");
    gn_pt_expect_attr_strs(x.g, "s", "fused_ops", "BiasAdd,Sigmoid");
    bool tb = false;
    assert_true(gn__attr_get_bool(x.g, gn__graph_find(x.g, "s"), "transpose_b", &tb));
    assert_true(tb);
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: t: fused MatMul 'mm' + AddV2 'add' + Tanh 't' into _FusedMatMul");
    const feed f = {"x", DT_FLOAT, 2, {3, 5}};
    const char *xn[2] = {"t", "s"};
    expect_same(x.before, x.g, &f, 1, xn, 2, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* MatMul + BiasAdd + Gelu written out: the tanh form grouped as Keras writes it, the erf form
 * grouped as TensorFlow's pattern, and a Gelu whose input has a consumer outside it. */
static void scalar(gb *b, const char *name, double v)
{
    char val[32];
    snprintf(val, sizeof val, "%.9g", v);
    gn_pt_text_cst(&b->t, name, "f", "", val);
}

static void test_matmul_gelu(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t xd[2] = {3, 5}, wd[2] = {5, 4}, bd[1] = {4};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 2, xd);
    cst(&b, "w", "DT_FLOAT", wd, 2, -1, 1);
    cst(&b, "b", "DT_FLOAT", bd, 1, -1, 1);
    scalar(&b, "half", 0.5);
    scalar(&b, "one", 1.0);
    scalar(&b, "three", 3.0);
    scalar(&b, "k", 0.044715);
    scalar(&b, "c", 0.7978845608);
    scalar(&b, "sqrt2", 1.4142135624);
    /* tanh form */
    matmul(&b, "mm", "x", "w", false);
    bias(&b, "ba", "mm", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b.t, "pow", "Pow", "ba,three", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "kx3", "Mul", "k,pow", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "inner", "AddV2", "ba,kx3", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "scaled", "Mul", "c,inner", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "tanh", "Tanh", "scaled", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "onep", "AddV2", "one,tanh", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "hx", "Mul", "half,ba", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "gelu", "Mul", "hx,onep", "DT_FLOAT", NULL);
    /* erf form */
    matmul(&b, "mm2", "x", "w", false);
    bias(&b, "ba2", "mm2", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b.t, "div", "RealDiv", "ba2,sqrt2", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "erf", "Erf", "div", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "onep2", "AddV2", "erf,one", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "h2", "Mul", "onep2,half", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "gelu2", "Mul", "ba2,h2", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "gelu,gelu2", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); gelu=_FusedMatMul(x, w, b); gelu2=_FusedMatMul(x, w, b)");
    gn_pt_expect_attr_strs(x.g, "gelu", "fused_ops", "BiasAdd,GeluApproximate");
    gn_pt_expect_attr_strs(x.g, "gelu2", "fused_ops", "BiasAdd,GeluExact");
    gn_pt_fx_expect_event(&x.f, "remap.matmul_gelu: gelu: fused MatMul 'mm' + BiasAdd 'ba' + Gelu (tanh) 'gelu' into "
                                "_FusedMatMul");
    gn_pt_fx_expect_event(&x.f, "remap.matmul_gelu: gelu2: fused MatMul 'mm2' + BiasAdd 'ba2' + Gelu (erf) 'gelu2' into "
                                "_FusedMatMul");
    const feed f = {"x", DT_FLOAT, 2, {3, 5}};
    const char *xn[2] = {"gelu", "gelu2"};
    expect_same(x.before, x.g, &f, 1, xn, 2, 1e-5);
    rx_free(&x);
    /* TensorFlow on a GPU: not fused (cuBLASLt); MatMul + BiasAdd is not fused either */
    assert_false(rx_run(&x, b.t.s, "gelu,gelu2", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.matmul_gelu: gelu: MatMul 'mm' + BiasAdd 'ba' + Gelu (tanh) 'gelu' not fused: "
                                "TensorFlow fuses MatMul on GPU only with cuBLASLt (TF_USE_CUBLASLT)");
    rx_free(&x);
    /* the erf's input fetched: the erf form is not matched, MatMul + BiasAdd alone is fused */
    assert_true(rx_run(&x, b.t.s, "gelu,gelu2,div", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); half=Const(); one=Const(); sqrt2=Const(); "
                           "gelu=_FusedMatMul(x, w, b); ba2=_FusedMatMul(x, w, b); div=RealDiv(ba2, sqrt2); "
                           "erf=Erf(div); onep2=AddV2(erf, one); h2=Mul(onep2, half); gelu2=Mul(ba2, h2)");
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- refusals --------------------------------------------------------------------------------- */
static void test_refusals(void **state)
{
    (void)state;
    /* the BiasAdd has a second consumer: Conv2D + BiasAdd alone is fused, the Relu stays */
    gb b;
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_FLOAT", "Conv2D", d_w33);
    gn_pt_text_op(&b.t, "other", "Neg", "bias", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "act,other", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); bias=_FusedConv2D(x, w, b); act=Relu(bias); "
                           "other=Neg(bias)");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: act: Conv2D 'conv' + BiasAdd 'bias' + Relu 'act' not "
                                "fused: BiasAdd has a second consumer");
    const char *xn[2] = {"act", "other"};
    expect_same(x.before, x.g, &f_x, 1, xn, 2, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);

    /* the BiasAdd is fetched: same */
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_FLOAT", "Conv2D", d_w33);
    assert_true(rx_run(&x, b.t.s, "act,bias", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); bias=_FusedConv2D(x, w, b); act=Relu(bias)");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: act: Conv2D 'conv' + BiasAdd 'bias' + Relu 'act' not "
                                "fused: BiasAdd 'bias' is preserved (fetch)");
    rx_free(&x);
    gn_pt_text_free(&b.t);

    /* the convolution is fetched: nothing */
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_FLOAT", "Conv2D", d_w33);
    assert_false(rx_run(&x, b.t.s, "act,conv", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: bias: Conv2D 'conv' + BiasAdd 'bias' not fused: Conv2D "
                                "'conv' is preserved (fetch)");
    rx_free(&x);
    gn_pt_text_free(&b.t);

    /* float64 on a GPU target */
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_DOUBLE", "Conv2D", d_w33);
    assert_false(rx_run(&x, b.t.s, "act", true, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: act: Conv2D 'conv' + BiasAdd 'bias' + Relu 'act' not "
                                "fused: dtype not supported on this target (float64 on GPU)");
    rx_free(&x);
    /* ... but on the CPU our kernel takes it */
    assert_true(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)");
    const feed fd = {"x", DT_DOUBLE, 4, {2, 6, 6, 3}};
    const char *xa[1] = {"act"};
    expect_same(x.before, x.g, &fd, 1, xa, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);

    /* the pattern disabled by id */
    gb_init(&b);
    conv_bias_act_text(&b, "Relu", "DT_FLOAT", "Conv2D", d_w33);
    x.g = gn_pt_load_text(b.t.s);
    gn_pt_preserve_list(x.g, "act");
    x.before = gn_pt_clone(x.g);
    gn_pt_fx_init(&x.f, "remap.contraction_bias_act");
    gn_pt_fx_pass(&x.f, "remap");
    assert_false(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- remap.contraction_bias_add ------------------------------------------------------------- */
/* Conv2D (SAME, 3 -> 4 channels) + BiasAdd + AddV2 of side input s (+ act), NHWC or NCHW. */
static void conv_side_text(gb *b, const char *act, const char *fmt, bool side_first)
{
    bool cf = !strcmp(fmt, "NCHW");
    int64_t xd[4] = {2, 6, 6, 3}, sd[4] = {2, 6, 6, 4};
    if (cf) {
        int64_t xc[4] = {2, 3, 6, 6}, sc[4] = {2, 4, 6, 6};
        memcpy(xd, xc, sizeof xd);
        memcpy(sd, sc, sizeof sd);
    }
    gn_pt_text_ph_dims(&b->t, "x", "DT_FLOAT", 4, xd);
    gn_pt_text_ph_dims(&b->t, "s", "DT_FLOAT", 4, sd);
    cst(b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    cst(b, "b", "DT_FLOAT", d_b4, 1, -1, 1);
    conv(b, "conv", "Conv2D", "x", "w", "DT_FLOAT", fmt, "SAME");
    bias(b, "bias", "conv", "b", "DT_FLOAT", fmt);
    if (side_first) gn_pt_text_op(&b->t, "add", "AddV2", "s,bias", "DT_FLOAT", NULL);
    else gn_pt_text_op(&b->t, "add", "AddV2", "bias,s", "DT_FLOAT", NULL);
    if (act) gn_pt_text_op(&b->t, "act", act, "add", "DT_FLOAT", NULL);
}

static void test_conv_side_input(void **state)
{
    (void)state;
    const feed fx[2] = {{"x", DT_FLOAT, 4, {2, 6, 6, 3}}, {"s", DT_FLOAT, 4, {2, 6, 6, 4}}};
    const feed fc[2] = {{"x", DT_FLOAT, 4, {2, 3, 6, 6}}, {"s", DT_FLOAT, 4, {2, 4, 6, 6}}};
    /* residual block ending: Conv2D + BiasAdd + AddV2(side) + Relu, CPU and GPU, either Add order */
    for (int gpu = 0; gpu < 2; gpu++)
        for (int sf = 0; sf < 2; sf++) {
            gb b;
            gb_init(&b);
            conv_side_text(&b, "Relu", "NHWC", sf);
            rx x;
            assert_true(rx_run(&x, b.t.s, "act", gpu, GN_REMAP_POLICY_GRAPNEL));
            gn_pt_expect_dump(x.g, "x=Placeholder(); s=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b, s)");
            gn_pt_expect_attr_strs(x.g, "act", "fused_ops", "BiasAdd,Add,Relu");
            gn_pt_expect_attr_i(x.g, "act", "num_args", 2);
            const Tensorflow__AttrValue *ta = gn__node_attr(x.g, gn__graph_find(x.g, "act"), "TArgs");
            assert_non_null(ta);
            assert_int_equal(ta->list->n_type, 2);
            gn_pt_fx_expect_event(&x.f, sf ? "remap.contraction_bias_add: act: fused Conv2D 'conv' + BiasAdd 'bias' + "
                                             "AddV2 'add' + Relu 'act' into _FusedConv2D"
                                           : "remap.contraction_bias_add: act: fused Conv2D 'conv' + BiasAdd 'bias' + "
                                             "AddV2 'add' + Relu 'act' into _FusedConv2D");
            const char *xn[1] = {"act"};
            expect_same(x.before, x.g, fx, 2, xn, 1, 1e-5);
            assert_false(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
            rx_free(&x);
            gn_pt_text_free(&b.t);
        }
    /* no activation, NCHW on GPU: the Add is the root */
    gb b;
    gb_init(&b);
    conv_side_text(&b, NULL, "NCHW", false);
    rx x;
    assert_true(rx_run(&x, b.t.s, "add", true, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); s=Placeholder(); w=Const(); b=Const(); add=_FusedConv2D(x, w, b, s)");
    gn_pt_expect_attr_strs(x.g, "add", "fused_ops", "BiasAdd,Add");
    gn_pt_expect_attr_s(x.g, "add", "data_format", "NCHW");
    const char *xa[1] = {"add"};
    expect_same(x.before, x.g, fc, 2, xa, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
    /* the side input broadcasts (a [4] vector after the BiasAdd): not a side input; Conv2D +
       BiasAdd alone is fused, the AddV2 and the Relu stay */
    gb_init(&b);
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d_x);
    cst(&b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    cst(&b, "b", "DT_FLOAT", d_b4, 1, -1, 1);
    gn_pt_text_ph_dims(&b.t, "s", "DT_FLOAT", 1, d_b4);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "SAME");
    bias(&b, "bias", "conv", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b.t, "add", "AddV2", "bias,s", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "act", "Relu", "add", "DT_FLOAT", NULL);
    assert_true(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); s=Placeholder(); bias=_FusedConv2D(x, w, b); "
                           "add=AddV2(bias, s); act=Relu(add)");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_add: act: Conv2D 'conv' + BiasAdd 'bias' + AddV2 'add' + Relu "
                                "'act' not fused: side input shape is not the contraction's output shape (or unknown)");
    const feed fb[2] = {{"x", DT_FLOAT, 4, {2, 6, 6, 3}}, {"s", DT_FLOAT, 1, {4}}};
    const char *xr[1] = {"act"};
    expect_same(x.before, x.g, fb, 2, xr, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
    /* policy tensorflow: on GPU nothing (TensorFlow's GPU kernel takes no side input and
       no Conv2D + BiasAdd without Relu); on CPU Conv2D + BiasAdd only (the Eigen kernel that runs
       with oneDNN off has no Add side input): _FusedConv2D ["BiasAdd"] + AddV2 + Relu */
    gb_init(&b);
    conv_side_text(&b, "Relu", "NHWC", false);
    assert_false(rx_run(&x, b.t.s, "act", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_add: act: Conv2D 'conv' + BiasAdd 'bias' + AddV2 'add' + Relu "
                                "'act' not fused: TensorFlow's GPU _FusedConv2D takes no Add side input (fused_ops "
                                "[BiasAdd, Add, Relu]) (tensorflow/core/kernels/conv_ops_fused_impl.h");
    rx_free(&x);
    assert_true(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_expect_dump(x.g, "x=Placeholder(); s=Placeholder(); w=Const(); b=Const(); bias=_FusedConv2D(x, w, b); "
                           "add=AddV2(bias, s); act=Relu(add)");
    gn_pt_expect_attr_strs(x.g, "bias", "fused_ops", "BiasAdd");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_add: act: Conv2D 'conv' + BiasAdd 'bias' + AddV2 'add' + Relu "
                                "'act' not fused: TensorFlow's CPU _FusedConv2D takes no Add side input (fused_ops "
                                "[BiasAdd, Add, Relu]) (tensorflow/core/kernels/conv_ops_fused_impl.h, "
                                "tensorflow/core/common_runtime/mkl_layout_pass.cc)");
    rx_free(&x);
    /* the AddV2 has a second consumer: Conv2D + BiasAdd + AddV2 is fused under the AddV2's name */
    gn_pt_text_add(&b.t, "node { name: 'y2' op: 'Neg' input: 'add' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    assert_true(rx_run(&x, b.t.s, "act,y2", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); s=Placeholder(); w=Const(); b=Const(); add=_FusedConv2D(x, w, b, s); "
                           "act=Relu(add); y2=Neg(add)");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_add: act: Conv2D 'conv' + BiasAdd 'bias' + AddV2 'add' + Relu "
                                "'act' not fused: AddV2 has a second consumer");
    const char *x2[2] = {"act", "y2"};
    expect_same(x.before, x.g, fx, 2, x2, 2, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
    /* the pattern disabled: Conv2D + BiasAdd only */
    gb_init(&b);
    conv_side_text(&b, "Relu", "NHWC", false);
    x.g = gn_pt_load_text(b.t.s);
    gn_pt_preserve_list(x.g, "act");
    x.before = gn_pt_clone(x.g);
    gn_pt_fx_init(&x.f, "remap.contraction_bias_add");
    gn_pt_fx_pass(&x.f, "remap");
    assert_true(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
    gn_pt_expect_dump(x.g, "x=Placeholder(); s=Placeholder(); w=Const(); b=Const(); bias=_FusedConv2D(x, w, b); "
                           "add=AddV2(bias, s); act=Relu(add)");
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* MatMul + BiasAdd + Add of the input (a residual dense layer) + Tanh -> _FusedMatMul. */
static void test_matmul_side_input(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t xd[2] = {4, 8}, wd[2] = {8, 8}, bd[1] = {8};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 2, xd);
    cst(&b, "w", "DT_FLOAT", wd, 2, -1, 1);
    cst(&b, "b", "DT_FLOAT", bd, 1, -1, 1);
    matmul(&b, "mm", "x", "w", false);
    bias(&b, "bias", "mm", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b.t, "add", "Add", "x,bias", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "act", "Tanh", "add", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "act", true, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); act=_FusedMatMul(x, w, b, x)");
    gn_pt_expect_attr_strs(x.g, "act", "fused_ops", "BiasAdd,Add,Tanh");
    gn_pt_expect_attr_i(x.g, "act", "num_args", 2);
    assert_null(gn__node_attr(x.g, gn__graph_find(x.g, "act"), "TArgs"));
    const feed f = {"x", DT_FLOAT, 2, {4, 8}};
    const char *xn[1] = {"act"};
    expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- remap.conv_squeeze_bias ---------------------------------------------------------------- */
/* Keras' Conv1D: x [2, 1, 7, 3] -> Conv2D (1x3 filter, VALID) -> Squeeze -> BiasAdd (+ act). */
static void conv1d_text(gb *b, const char *act, const char *squeeze_dims, int64_t cout)
{
    int64_t xd[4] = {2, 1, 7, 3}, wd[4] = {1, 3, 3, cout}, bd[1] = {cout};
    gn_pt_text_ph_dims(&b->t, "x", "DT_FLOAT", 4, xd);
    cst(b, "w", "DT_FLOAT", wd, 4, -1, 1);
    cst(b, "b", "DT_FLOAT", bd, 1, -1, 1);
    conv(b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "VALID");
    gn_pt_text_add(&b->t, "node { name: 'sq' op: 'Squeeze' input: 'conv' attr { key: 'T' value { type: DT_FLOAT } }%s }\n",
        squeeze_dims);
    bias(b, "bias", "sq", "b", "DT_FLOAT", "NHWC");
    if (act) gn_pt_text_op(&b->t, "act", act, "bias", "DT_FLOAT", NULL);
}

static void test_conv_squeeze_bias(void **state)
{
    (void)state;
    static const char *const dims1 = " attr { key: 'squeeze_dims' value { list { i: 1 } } }";
    const feed f = {"x", DT_FLOAT, 4, {2, 1, 7, 3}};
    gb b;
    rx x;
    /* with an activation, CPU and GPU; squeeze_dims [1] and [] (every size-1 dim) */
    for (int k = 0; k < 4; k++) {
        gb_init(&b);
        conv1d_text(&b, "Relu", k & 1 ? "" : dims1, 4);
        assert_true(rx_run(&x, b.t.s, "act", k >= 2, GN_REMAP_POLICY_GRAPNEL));
        gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); conv=_FusedConv2D(x, w, b); act=Squeeze(conv)");
        gn_pt_expect_attr_strs(x.g, "conv", "fused_ops", "BiasAdd,Relu");
        gn_pt_expect_attr_i(x.g, "conv", "num_args", 1);
        gn_pt_expect_attr_s(x.g, "conv", "padding", "VALID");
        gn_pt_fx_expect_event(&x.f, "remap.conv_squeeze_bias: act: fused Conv2D 'conv' + Squeeze 'sq' + BiasAdd 'bias' + "
                                    "Relu 'act' into _FusedConv2D 'conv' + Squeeze");
        const char *xn[1] = {"act"};
        expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
        assert_false(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
        rx_free(&x);
        gn_pt_text_free(&b.t);
    }
    /* policy tensorflow on CPU: no activation taken (TensorFlow's form: _FusedConv2D under the
       Conv2D's name, the Squeeze under the BiasAdd's); on GPU nothing */
    gb_init(&b);
    conv1d_text(&b, "Relu", dims1, 4);
    assert_true(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); conv=_FusedConv2D(x, w, b); bias=Squeeze(conv); "
                           "act=Relu(bias)");
    gn_pt_expect_attr_strs(x.g, "conv", "fused_ops", "BiasAdd");
    gn_pt_fx_expect_event(&x.f, "remap.conv_squeeze_bias: act: Conv2D 'conv' + Squeeze 'sq' + BiasAdd 'bias' + Relu "
                                "'act' not fused: TensorFlow fuses Conv2D + Squeeze + BiasAdd without an activation");
    const char *xn[1] = {"act"};
    expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
    rx_free(&x);
    assert_false(rx_run(&x, b.t.s, "act", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.conv_squeeze_bias: bias: Conv2D 'conv' + Squeeze 'sq' + BiasAdd 'bias' not "
                                "fused: TensorFlow fuses Conv2D + Squeeze + BiasAdd on CPU only");
    rx_free(&x);
    gn_pt_text_free(&b.t);
    /* a Squeeze that removes the channel dim (one output channel) is refused */
    gb_init(&b);
    conv1d_text(&b, NULL, " attr { key: 'squeeze_dims' value { list { i: 1 i: -1 } } }", 1);
    assert_false(rx_run(&x, b.t.s, "bias", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.conv_squeeze_bias: bias: Conv2D 'conv' + Squeeze 'sq' + BiasAdd 'bias' not "
                                "fused: the Squeeze removes the channel dim");
    rx_free(&x);
    gn_pt_text_free(&b.t);
    gb_init(&b);
    conv1d_text(&b, NULL, "", 1);
    assert_false(rx_run(&x, b.t.s, "bias", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.conv_squeeze_bias: bias: Conv2D 'conv' + Squeeze 'sq' + BiasAdd 'bias' not "
                                "fused: the Squeeze removes the channel dim");
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- remap.dilated_conv ---------------------------------------------------------------------- */
/* x [1, h, h, 3] -> SpaceToBatchND(block [2, 2], paddings) -> op (VALID) -> BatchToSpaceND(crops)
 * -> BiasAdd -> Relu; the block/paddings/crops int32 constants. */
static void atrous_text(gb *b, const char *op, int64_t h, const int *pads, const int *crops)
{
    int64_t xd[4] = {1, h, h, 3}, wd[4] = {3, 3, 3, !strcmp(op, "Conv2D") ? 4 : 1}, bd[1] = {4};
    if (strcmp(op, "Conv2D")) bd[0] = 3;
    gn_pt_text_ph_dims(&b->t, "x", "DT_FLOAT", 4, xd);
    cst(b, "w", "DT_FLOAT", wd, 4, -1, 1);
    cst(b, "b", "DT_FLOAT", bd, 1, -1, 1);
    gn_pt_text_add(&b->t, "node { name: 'blk' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 2 } } } }\n");
    gn_pt_text_add(&b->t, "node { name: 'pads' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } int_val: %d int_val: %d int_val: %d "
           "int_val: %d } } } }\n",
        pads[0], pads[1], pads[2], pads[3]);
    gn_pt_text_add(&b->t, "node { name: 'crops' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } int_val: %d int_val: %d int_val: %d "
           "int_val: %d } } } }\n",
        crops[0], crops[1], crops[2], crops[3]);
    gn_pt_text_add(&b->t, "node { name: 's2b' op: 'SpaceToBatchND' input: 'x' input: 'blk' input: 'pads' attr { key: 'T' value { type: "
           "DT_FLOAT } } attr { key: 'Tblock_shape' value { type: DT_INT32 } } attr { key: 'Tpaddings' value { type: "
           "DT_INT32 } } }\n");
    conv(b, "conv", op, "s2b", "w", "DT_FLOAT", "NHWC", "VALID");
    gn_pt_text_add(&b->t, "node { name: 'b2s' op: 'BatchToSpaceND' input: 'conv' input: 'blk' input: 'crops' attr { key: 'T' value { "
           "type: DT_FLOAT } } attr { key: 'Tblock_shape' value { type: DT_INT32 } } attr { key: 'Tcrops' value { type: "
           "DT_INT32 } } }\n");
    bias(b, "bias", "b2s", "b", "DT_FLOAT", "NHWC");
    gn_pt_text_op(&b->t, "act", "Relu", "bias", "DT_FLOAT", NULL);
}

static void test_dilated_conv(void **state)
{
    (void)state;
    static const int64_t dil[4] = {1, 2, 2, 1};
    /* what tf.nn.atrous_conv2d(rate=2) builds: SAME on 9x9 pads [2, 3] and crops [0, 1]; VALID
       pads [0, 1] and crops [0, 1]; other paddings give EXPLICIT */
    const struct {
        const char *op;
        int64_t h;
        int pads[4], crops[4];
        const char *padding;
    } cases[] = {
        {"Conv2D", 9, {2, 3, 2, 3}, {0, 1, 0, 1}, "SAME"},
        {"Conv2D", 9, {0, 1, 0, 1}, {0, 1, 0, 1}, "VALID"},
        {"Conv2D", 10, {1, 1, 3, 1}, {0, 0, 0, 0}, "EXPLICIT"},
        {"DepthwiseConv2dNative", 9, {2, 3, 2, 3}, {0, 1, 0, 1}, "SAME"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool dw = strcmp(cases[i].op, "Conv2D") != 0;
        gb b;
        gb_init(&b);
        atrous_text(&b, cases[i].op, cases[i].h, cases[i].pads, cases[i].crops);
        rx x;
        /* the dilated convolution alone (fusions off), then with the BiasAdd + Relu fused */
        x.g = gn_pt_load_text(b.t.s);
        gn_pt_preserve_list(x.g, "act");
        x.before = gn_pt_clone(x.g);
        gn_pt_fx_init(&x.f, "remap.contraction_bias_act");
        gn_pt_fx_pass(&x.f, "remap");
        x.f.o.remap_policy = GN_REMAP_POLICY_GRAPNEL;
        assert_true(gn_pt_fx_run(&x.f, gn__pass_remap, x.g));
        char want[256];
        snprintf(want, sizeof want, "x=Placeholder(); w=Const(); b=Const(); b2s=%s(x, w); bias=BiasAdd(b2s, b); "
                                    "act=Relu(bias)", cases[i].op);
        gn_pt_expect_dump(x.g, want);
        gn_pt_expect_attr_ints(x.g, "b2s", "dilations", dil, 4);
        gn_pt_expect_attr_s(x.g, "b2s", "padding", cases[i].padding);
        if (!strcmp(cases[i].padding, "EXPLICIT")) {
            static const int64_t ep[8] = {0, 0, 1, 1, 3, 1, 0, 0};
            gn_pt_expect_attr_ints(x.g, "b2s", "explicit_paddings", ep, 8);
        }
        char ev[512];
        snprintf(ev, sizeof ev, "remap.dilated_conv: b2s: rewrote SpaceToBatchND 's2b' + %s 'conv' + BatchToSpaceND 'b2s' "
                                "as %s with dilations [1, 2, 2, 1], padding %s", cases[i].op, cases[i].op,
                 cases[i].padding);
        gn_pt_fx_expect_event(&x.f, ev);
        const feed f = {"x", DT_FLOAT, 4, {1, cases[i].h, cases[i].h, 3}};
        const char *xn[1] = {"act"};
        expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
        rx_free(&x);
        if (!(dw && !strcmp(cases[i].padding, "EXPLICIT"))) {
            assert_true(rx_run(&x, b.t.s, "act", i & 1, GN_REMAP_POLICY_GRAPNEL));
            snprintf(want, sizeof want, "x=Placeholder(); w=Const(); b=Const(); act=%s(x, w, b)",
                     dw ? "_FusedDepthwiseConv2dNative" : "_FusedConv2D");
            gn_pt_expect_dump(x.g, want);
            gn_pt_expect_attr_ints(x.g, "act", "dilations", dil, 4);
            expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
            rx_free(&x);
        }
        /* policy tensorflow: TensorFlow's remapper keeps the SpaceToBatchND form (and then has no
           Conv2D + BiasAdd to fuse) */
        assert_false(rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_TENSORFLOW));
        gn_pt_fx_expect_event(&x.f, "not rewritten: TensorFlow's remapper makes no dilated-convolution rewrite");
        assert_true(gn__graph_find(x.g, "s2b") != GN_NONE);
        rx_free(&x);
        gn_pt_text_free(&b.t);
    }
    /* crops larger than the paddings: refused */
    gb b;
    gb_init(&b);
    static const int pads[4] = {0, 0, 0, 0}, crops[4] = {1, 0, 0, 1};
    atrous_text(&b, "Conv2D", 10, pads, crops);
    rx x;
    rx_run(&x, b.t.s, "act", false, GN_REMAP_POLICY_GRAPNEL);
    gn_pt_fx_expect_event(&x.f, "remap.dilated_conv: b2s: SpaceToBatchND 's2b' + Conv2D 'conv' + BatchToSpaceND 'b2s' not "
                                "rewritten: crops exceed the paddings");
    assert_true(gn__graph_find(x.g, "s2b") != GN_NONE);
    const feed f = {"x", DT_FLOAT, 4, {1, 10, 10, 3}};
    const char *xn[1] = {"act"};
    expect_same(x.before, x.g, &f, 1, xn, 1, 1e-5);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- policies --------------------------------------------------------------------------------- */
static void test_policy_gpu(void **state)
{
    (void)state;
    static const int64_t d_dw[4] = {3, 3, 3, 2}, d_w11[4] = {1, 1, 3, 5};
    const struct {
        const char *act, *op;
        const int64_t *wd;
        const char *tf_dump, *tf_event;
    } cases[] = {
        /* TensorFlow fuses Conv2D + BiasAdd + Relu on GPU (spatial filter) */
        {"Relu", "Conv2D", d_w33, "x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)", NULL},
        {"Relu6", "Conv2D", d_w33, "x=Placeholder(); w=Const(); b=Const(); conv=Conv2D(x, w); bias=BiasAdd(conv, b); act=Relu6(bias)",
         "remap.contraction_bias_act: act: Conv2D 'conv' + BiasAdd 'bias' + Relu6 'act' not fused: activation not "
         "supported by the fused kernel (TensorFlow's GPU kernel takes Relu only)"},
        {"Relu", "Conv2D", d_w11, "x=Placeholder(); w=Const(); b=Const(); conv=Conv2D(x, w); bias=BiasAdd(conv, b); act=Relu(bias)",
         "remap.contraction_bias_act: act: Conv2D 'conv' + BiasAdd 'bias' + Relu 'act' not fused: 1x1 filter: "
         "TensorFlow fuses only spatial convolutions on GPU"},
        {"Relu", "DepthwiseConv2dNative", d_dw,
         "x=Placeholder(); w=Const(); b=Const(); conv=DepthwiseConv2dNative(x, w); bias=BiasAdd(conv, b); act=Relu(bias)",
         "remap.contraction_bias_act: act: DepthwiseConv2dNative 'conv' + BiasAdd 'bias' + Relu 'act' not fused: "
         "TensorFlow has no GPU kernel for _FusedDepthwiseConv2dNative"},
        {NULL, "Conv2D", d_w33, "x=Placeholder(); w=Const(); b=Const(); conv=Conv2D(x, w); bias=BiasAdd(conv, b)",
         "remap.contraction_bias_act: bias: Conv2D 'conv' + BiasAdd 'bias' not fused: TensorFlow's GPU kernel fuses a "
         "convolution only with an activation"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb b;
        gb_init(&b);
        conv_bias_act_text(&b, cases[i].act, "DT_FLOAT", cases[i].op, cases[i].wd);
        const char *root = cases[i].act ? "act" : "bias";
        rx x;
        /* grapnel: fused */
        assert_true(rx_run(&x, b.t.s, root, true, GN_REMAP_POLICY_GRAPNEL));
        char want[256];
        snprintf(want, sizeof want, "x=Placeholder(); w=Const(); b=Const(); %s=%s(x, w, b)", root,
                 strcmp(cases[i].op, "Conv2D") ? "_FusedDepthwiseConv2dNative" : "_FusedConv2D");
        gn_pt_expect_dump(x.g, want);
        const char *xn[1] = {root};
        expect_same(x.before, x.g, &f_x, 1, xn, 1, 1e-5);
        rx_free(&x);
        /* tensorflow: TensorFlow's GPU rulebook */
        bool ch = rx_run(&x, b.t.s, root, true, GN_REMAP_POLICY_TENSORFLOW);
        assert_int_equal(ch, cases[i].tf_event == NULL);
        gn_pt_expect_dump(x.g, cases[i].tf_dump);
        if (cases[i].tf_event) gn_pt_fx_expect_event(&x.f, cases[i].tf_event);
        expect_same(x.before, x.g, &f_x, 1, xn, 1, 1e-5);
        rx_free(&x);
        /* tensorflow on a CPU target: TensorFlow's CPU kernels run all of these but the depthwise
           one (a oneDNN placeholder that writes nothing with oneDNN off) */
        bool dwc = strcmp(cases[i].op, "Conv2D") != 0;
        assert_int_equal(rx_run(&x, b.t.s, root, false, GN_REMAP_POLICY_TENSORFLOW), !dwc);
        if (dwc)
            gn_pt_fx_expect_event(&x.f, "not fused: TensorFlow's CPU _FusedDepthwiseConv2dNative is a oneDNN "
                                        "placeholder: with TF_ENABLE_ONEDNN_OPTS=0 it is a NoOp that writes no output "
                                        "(tensorflow/core/kernels/mkl/mkl_conv_ops.cc)");
        else
            gn_pt_expect_dump(x.g, want);
        rx_free(&x);
        gn_pt_text_free(&b.t);
    }
}

/* The option key end to end: gn_optimize with the remapper alone and "remap.policy". */
static void test_policy_option(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    conv_bias_act_text(&b, "Relu6", "DT_FLOAT", "Conv2D", d_w33);
    const char *fetch[1] = {"act"};
    const char *policies[2] = {"grapnel", "tensorflow"};
    const char *want[2] = {"x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)",
                           "x=Placeholder(); w=Const(); b=Const(); conv=Conv2D(x, w); bias=BiasAdd(conv, b); act=Relu6(bias)"};
    for (int k = 0; k < 2; k++) {
        gn_graph *g = gn_pt_load_text(b.t.s);
        gn_options o;
        gn_options_init(&o);
        char text[1024], err[256];
        snprintf(text, sizeof text,
                 "{'layout_optimizer': False, 'constant_folding': False, 'arithmetic_optimization': False, "
                 "'dependency_optimization': False, 'common_subgraph_elimination': False, 'remap.policy': '%s'}",
                 policies[k]);
        if (gn_options_parse(&o, text, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
        gn_optimize_params p;
        gn_optimize_params_init(&p);
        p.fetches = fetch;
        p.n_fetches = 1;
        assert_int_equal(gn_target_parse("gpu:sm_90", &p.target, err, sizeof err), GN_OK);
        gn_report *r = NULL;
        assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
        gn_pt_expect_dump(g, want[k]);
        /* policy grapnel: the report names the output grapnel-only, and why */
        if (k == 0) {
            gn_pt_expect_report(r, "[grapnel-only: TensorFlow's GPU _FusedConv2D has no Relu6 epilogue (fused_ops "
                                   "[BiasAdd, Relu6]) (tensorflow/core/kernels/conv_ops_fused_impl.h (GPU: cuDNN "
                                   "conv-bias-activation))]");
            gn_pt_expect_report(r, "note: the output is grapnel-only: 1 fusion(s) TensorFlow cannot run");
        } else {
            gn_pt_expect_no_report(r, "grapnel-only");
        }
        gn_report_free(r);
        gn_graph_free(g);
    }
    gn_pt_text_free(&b.t);
}

/* gn_optimize_params.no_report_events: the same graph and the same per-pass
 * records, no event, and still the note that the output is grapnel-only. */
static void test_policy_note_without_events(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    conv_bias_act_text(&b, "Relu6", "DT_FLOAT", "Conv2D", d_w33);
    const char *fetch[1] = {"act"};
    gn_report *r[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        gn_graph *g = gn_pt_load_text(b.t.s);
        gn_options o;
        gn_options_init(&o);
        char err[256];
        if (gn_options_parse(&o,
                             "{'layout_optimizer': False, 'constant_folding': False, 'arithmetic_optimization': False, "
                             "'dependency_optimization': False, 'common_subgraph_elimination': False, "
                             "'remap.policy': 'grapnel'}",
                             err, sizeof err) != GN_OK)
            fail_msg("options: %s", err);
        gn_optimize_params p;
        gn_optimize_params_init(&p);
        p.fetches = fetch;
        p.n_fetches = 1;
        p.no_report_events = k == 1;
        assert_int_equal(gn_target_parse("gpu:sm_90", &p.target, err, sizeof err), GN_OK);
        assert_int_equal(gn_optimize(g, &o, &p, &r[k]), GN_OK);
        gn_pt_expect_dump(g, "x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)");
        gn_pt_expect_report(r[k], "note: the output is grapnel-only: 1 fusion(s) TensorFlow cannot run");
        gn_graph_free(g);
    }
    gn_pt_expect_report(r[0], "remap.contraction_bias_act: act: fused Conv2D 'conv' + BiasAdd 'bias' + Relu6 "
                              "'act' into _FusedConv2D [grapnel-only: ");
    gn_pt_expect_no_report(r[1], "into _FusedConv2D");
    assert_true(gn_report_pass_count(r[0]) > 0);
    assert_int_equal(gn_report_pass_count(r[1]), gn_report_pass_count(r[0]));
    for (size_t i = 0; i < gn_report_pass_count(r[0]); i++) {
        assert_string_equal(gn_report_pass_name(r[1], i), gn_report_pass_name(r[0], i));
        assert_int_equal(gn_report_pass_changed(r[1], i), gn_report_pass_changed(r[0], i));
    }
    gn_report_free(r[0]);
    gn_report_free(r[1]);
    gn_pt_text_free(&b.t);
}

/* A node placed on /device:CPU:0 follows the CPU rules on a GPU target. */
static void test_policy_placement(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    conv_bias_act_text(&b, "Relu6", "DT_FLOAT", "Conv2D", d_w33);
    char *t = strdup(b.t.s);
    /* place the three pattern nodes on the CPU */
    gb c;
    gb_init(&c);
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "name: 'conv'") || strstr(line, "name: 'bias'") || strstr(line, "name: 'act'")) {
            size_t n = strlen(line);
            gn_pt_text_add(&c.t, "%.*s device: '/device:CPU:0' }\n", (int)(n - 1), line);
        } else {
            gn_pt_text_add(&c.t, "%s\n", line);
        }
    }
    rx x;
    assert_true(rx_run(&x, c.t.s, "act", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Const(); b=Const(); act=_FusedConv2D(x, w, b)@/device:CPU:0");
    rx_free(&x);
    free(t);
    gn_pt_text_free(&b.t);
    gn_pt_text_free(&c.t);
}

/* ---- batch norm --------------------------------------------------------------------------------- */
static void test_fold_batchnorm(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d_x);
    cst(&b, "w", "DT_FLOAT", d_w33, 4, -1, 1);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "SAME");
    fbn(&b, "bn", "conv", "p", 4, "NHWC", false, true);
    gn_pt_text_op(&b.t, "r", "Relu", "bn", "DT_FLOAT", NULL);
    /* with a BiasAdd between, into a depthwise convolution */
    static const int64_t d_dw[4] = {3, 3, 3, 2}, d6[1] = {6};
    cst(&b, "w2", "DT_FLOAT", d_dw, 4, -1, 1);
    cst(&b, "b2", "DT_FLOAT", d6, 1, -1, 1);
    conv(&b, "dw", "DepthwiseConv2dNative", "x", "w2", "DT_FLOAT", "NHWC", "VALID");
    bias(&b, "dwb", "dw", "b2", "DT_FLOAT", "NHWC");
    fbn(&b, "bn2", "dwb", "q", 6, "NHWC", false, true);
    gn_pt_text_op(&b.t, "y2", "Neg", "bn2", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "r,y2", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); r=_FusedConv2D(x, bn/folded_filter, bn/folded_bias); "
                           "bn2=_FusedDepthwiseConv2dNative(x, bn2/folded_filter, bn2/folded_bias); y2=Neg(bn2); "
                           "bn/folded_filter=Const(); bn/folded_bias=Const(); bn2/folded_filter=Const(); "
                           "bn2/folded_bias=Const()");
    gn_pt_fx_expect_event(&x.f, "remap.fold_batchnorm: bn: folded Conv2D 'conv' + FusedBatchNormV3 'bn' into the filter "
                                "and a bias (4 channels)");
    gn_pt_fx_expect_event(&x.f, "remap.fold_batchnorm: bn2: folded DepthwiseConv2dNative 'dw' + BiasAdd 'dwb' + "
                                "FusedBatchNormV3 'bn2' into the filter and a bias (6 channels)");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: r: fused Conv2D 'conv' + BiasAdd 'bn' + Relu 'r' into "
                                "_FusedConv2D");
    gn_pt_expect_attr_strs(x.g, "r", "fused_ops", "BiasAdd,Relu");
    const char *xn[2] = {"r", "y2"};
    expect_same(x.before, x.g, &f_x, 1, xn, 2, 1e-4);
    rx_free(&x);

    /* the batch norm fetched: not folded (nor rewritten); Conv2D + BiasAdd still fused */
    assert_true(rx_run(&x, b.t.s, "r,bn2", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.fold_batchnorm: bn2: DepthwiseConv2dNative 'dw' + BiasAdd 'dwb' + "
                                "FusedBatchNormV3 'bn2' not folded: FusedBatchNormV3 'bn2' is preserved (fetch)");
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_scale_offset: bn2: FusedBatchNormV3 'bn2' not rewritten: "
                                "FusedBatchNormV3 'bn2' is preserved (fetch)");
    gn_pt_expect_dump(x.g, "x=Placeholder(); r=_FusedConv2D(x, bn/folded_filter, bn/folded_bias); w2=Const(); "
                           "b2=Const(); dwb=_FusedDepthwiseConv2dNative(x, w2, b2); q/scale=Const(); q/offset=Const(); "
                           "q/mean=Const(); q/var=Const(); bn2=FusedBatchNormV3(dwb, q/scale, q/offset, q/mean, "
                           "q/var); y2=Neg(bn2); bn/folded_filter=Const(); bn/folded_bias=Const()");
    const char *xb[2] = {"r", "bn2"};
    expect_same(x.before, x.g, &f_x, 1, xb, 2, 1e-4);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* Keras' inference batch norm after a depthwise convolution: Mul and AddV2 of per-channel constants. */
static void test_fold_scale(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    static const int64_t d_dw[4] = {3, 3, 3, 2}, d6[1] = {6};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d_x);
    cst(&b, "w", "DT_FLOAT", d_dw, 4, -1, 1);
    cst(&b, "s", "DT_FLOAT", d6, 1, 0.5f, 2);
    cst(&b, "o", "DT_FLOAT", d6, 1, -1, 1);
    conv(&b, "dw", "DepthwiseConv2dNative", "x", "w", "DT_FLOAT", "NHWC", "SAME");
    gn_pt_text_op(&b.t, "mul", "Mul", "dw,s", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "add", "AddV2", "mul,o", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "r", "Relu6", "add", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "r", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); o=Const(); r=_FusedDepthwiseConv2dNative(x, mul/folded_filter, o); "
                           "mul/folded_filter=Const()");
    gn_pt_fx_expect_event(&x.f, "remap.fold_scale: mul: folded DepthwiseConv2dNative 'dw' + Mul 'mul' into the filter");
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: r: fused DepthwiseConv2dNative 'mul' + AddV2 'add' + Relu6 "
                                "'r' into _FusedDepthwiseConv2dNative");
    const char *xn[1] = {"r"};
    expect_same(x.before, x.g, &f_x, 1, xn, 1, 1e-4);
    rx_free(&x);
    /* the convolution has another consumer: refused */
    gn_pt_text_op(&b.t, "z", "Neg", "dw", "DT_FLOAT", NULL);
    assert_false(rx_run(&x, b.t.s, "r,z", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_fx_expect_event(&x.f, "remap.fold_scale: mul: DepthwiseConv2dNative 'dw' + Mul 'mul' not folded: "
                                "DepthwiseConv2dNative has a second consumer");
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* Conv2D + FusedBatchNorm (+ Relu) with a filter that is not a constant. */
static void test_conv_batchnorm(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d_x);
    gn_pt_text_ph_dims(&b.t, "w", "DT_FLOAT", 4, d_w33);
    conv(&b, "conv", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "SAME");
    fbn(&b, "bn", "conv", "p", 4, "NHWC", false, true);
    gn_pt_text_op(&b.t, "r", "Relu", "bn", "DT_FLOAT", NULL);
    conv(&b, "conv2", "Conv2D", "x", "w", "DT_FLOAT", "NHWC", "VALID");
    fbn(&b, "bn2", "conv2", "p", 4, "NHWC", false, false);
    gn_pt_text_op(&b.t, "y2", "Neg", "bn2", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "r,y2", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Placeholder(); p/scale=Const(); p/offset=Const(); p/mean=Const(); "
                           "p/var=Const(); r=_FusedConv2D(x, w, p/scale, p/offset, p/mean, p/var); "
                           "bn2=_FusedConv2D(x, w, p/scale, p/offset, p/mean, p/var); y2=Neg(bn2)");
    gn_pt_expect_attr_strs(x.g, "r", "fused_ops", "FusedBatchNorm,Relu");
    gn_pt_expect_attr_strs(x.g, "bn2", "fused_ops", "FusedBatchNorm");
    gn_pt_expect_attr_i(x.g, "r", "num_args", 4);
    gn_pt_expect_attr_f(x.g, "r", "epsilon", 0.001f);
    gn_pt_fx_expect_event(&x.f, "remap.fold_batchnorm: bn: Conv2D 'conv' + FusedBatchNormV3 'bn' not folded: filter is "
                                "not a constant");
    gn_pt_fx_expect_event(&x.f, "remap.conv_batchnorm_act: r: fused Conv2D 'conv' + FusedBatchNormV3 'bn' + Relu 'r' "
                                "into _FusedConv2D");
    feed f[2] = {f_x, {"w", DT_FLOAT, 4, {3, 3, 3, 4}}};
    const char *xn[2] = {"r", "y2"};
    expect_same(x.before, x.g, f, 2, xn, 2, 1e-5);
    rx_free(&x);

    /* TensorFlow on a GPU: not fused into the convolution; FusedBatchNorm + Relu -> _FusedBatchNormEx */
    assert_true(rx_run(&x, b.t.s, "r,y2", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.conv_batchnorm_act: r: Conv2D 'conv' + FusedBatchNormV3 'bn' + Relu 'r' not "
                                "fused: TensorFlow fuses Conv2D + FusedBatchNorm on CPU only");
    gn_pt_expect_dump(x.g, "x=Placeholder(); w=Placeholder(); conv=Conv2D(x, w); p/scale=Const(); p/offset=Const(); "
                           "p/mean=Const(); p/var=Const(); bn=_FusedBatchNormEx(conv, p/scale, p/offset, p/mean, "
                           "p/var); r=Identity(bn); conv2=Conv2D(x, w); bn2=Add(bn2/Mul, bn2/offset); y2=Neg(bn2); "
                           "bn2/scale=Const(); bn2/offset=Const(); bn2/Mul=Mul(conv2, bn2/scale)");
    expect_same(x.before, x.g, f, 2, xn, 2, 1e-4);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* FusedBatchNorm + AddV2(side) + Relu -> _FusedBatchNormEx; the Relu becomes an Identity. */
static void test_batchnorm_ex(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t d4[4] = {2, 5, 5, 4}, d4c[4] = {2, 4, 5, 5};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d4);
    gn_pt_text_ph_dims(&b.t, "side", "DT_FLOAT", 4, d4);
    gn_pt_text_ph_dims(&b.t, "xc", "DT_FLOAT", 4, d4c);
    fbn(&b, "bn", "x", "p", 4, "NHWC", false, true);
    gn_pt_text_op(&b.t, "add", "AddV2", "bn,side", "DT_FLOAT", NULL);
    gn_pt_text_op(&b.t, "r", "Relu", "add", "DT_FLOAT", NULL);
    fbn(&b, "bnc", "xc", "p", 4, "NCHW", false, false);
    gn_pt_text_op(&b.t, "rc", "Relu", "bnc", "DT_FLOAT", NULL);
    const char *after_grapnel =
        "x=Placeholder(); side=Placeholder(); xc=Placeholder(); p/scale=Const(); p/offset=Const(); p/mean=Const(); "
        "p/var=Const(); bn=_FusedBatchNormEx(x, p/scale, p/offset, p/mean, p/var, side); r=Identity(bn); "
        "bnc=_FusedBatchNormEx(xc, p/scale, p/offset, p/mean, p/var); rc=Identity(bnc)";
    rx x;
    assert_true(rx_run(&x, b.t.s, "r,rc", true, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, after_grapnel);
    gn_pt_expect_attr_s(x.g, "bn", "activation_mode", "Relu");
    gn_pt_expect_attr_i(x.g, "bn", "num_side_inputs", 1);
    gn_pt_expect_attr_i(x.g, "bnc", "num_side_inputs", 0);
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_ex: bn: fused FusedBatchNormV3 'bn' + AddV2 'add' + Relu 'r' into "
                                "_FusedBatchNormEx");
    feed f[3] = {{"x", DT_FLOAT, 4, {2, 5, 5, 4}}, {"side", DT_FLOAT, 4, {2, 5, 5, 4}}, {"xc", DT_FLOAT, 4, {2, 4, 5, 5}}};
    const char *xn[2] = {"r", "rc"};
    expect_same(x.before, x.g, f, 3, xn, 2, 1e-5);
    rx_free(&x);
    /* TensorFlow on a GPU: NHWC only; the NCHW one becomes scale-and-offset */
    assert_true(rx_run(&x, b.t.s, "r,rc", true, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_ex: rc: FusedBatchNormV3 'bnc' + Relu 'rc' not fused: TensorFlow fuses "
                                "FusedBatchNorm + Relu on GPU only in NHWC");
    gn_pt_expect_dump(x.g, "x=Placeholder(); side=Placeholder(); xc=Placeholder(); p/scale=Const(); p/offset=Const(); "
                           "p/mean=Const(); p/var=Const(); bn=_FusedBatchNormEx(x, p/scale, p/offset, p/mean, p/var, "
                           "side); r=Identity(bn); bnc=Add(bnc/Mul, bnc/offset); rc=Relu(bnc); bnc/scale=Const(); "
                           "bnc/offset=Const(); bnc/Mul=Mul(xc, bnc/scale)");
    expect_same(x.before, x.g, f, 3, xn, 2, 1e-4);
    rx_free(&x);
    /* TensorFlow on a CPU: no side input */
    assert_true(rx_run(&x, b.t.s, "r,rc", false, GN_REMAP_POLICY_TENSORFLOW));
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_ex: r: FusedBatchNormV3 'bn' + AddV2 'add' + Relu 'r' not fused: "
                                "TensorFlow's CPU kernel takes no side input");
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* A standalone inference FusedBatchNorm with constant parameters -> Mul + Add, NHWC and NCHW. */
static void test_batchnorm_scale_offset(void **state)
{
    (void)state;
    gb b;
    gb_init(&b);
    int64_t d4[4] = {2, 5, 5, 4}, d4c[4] = {2, 4, 5, 5};
    gn_pt_text_ph_dims(&b.t, "x", "DT_FLOAT", 4, d4);
    gn_pt_text_ph_dims(&b.t, "xc", "DT_FLOAT", 4, d4c);
    fbn(&b, "bn", "x", "p", 4, "NHWC", false, true);
    gn_pt_text_op(&b.t, "y", "Neg", "bn", "DT_FLOAT", NULL);
    fbn(&b, "bnc", "xc", "p", 4, "NCHW", false, false);
    gn_pt_text_op(&b.t, "yc", "Neg", "bnc", "DT_FLOAT", NULL);
    fbn(&b, "bnp", "x", "p", 4, "NHWC", false, false);
    fbn(&b, "bnt", "x", "p", 4, "NHWC", true, false);
    gn_pt_text_op(&b.t, "yt", "Neg", "bnt", "DT_FLOAT", NULL);
    rx x;
    assert_true(rx_run(&x, b.t.s, "y,yc,bnp,yt", false, GN_REMAP_POLICY_GRAPNEL));
    gn_pt_expect_dump(x.g, "x=Placeholder(); xc=Placeholder(); p/scale=Const(); p/offset=Const(); p/mean=Const(); "
                           "p/var=Const(); bn=Add(bn/Mul, bn/offset); y=Neg(bn); bnc=Add(bnc/Mul, bnc/offset); "
                           "yc=Neg(bnc); bnp=FusedBatchNormV3(x, p/scale, p/offset, p/mean, p/var); "
                           "bnt=FusedBatchNormV3(x, p/scale, p/offset, p/mean, p/var); yt=Neg(bnt); bnc/scale=Const(); "
                           "bnc/offset=Const(); bnc/Mul=Mul(xc, bnc/scale); bn/scale=Const(); bn/offset=Const(); "
                           "bn/Mul=Mul(x, bn/scale)");
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_scale_offset: bn: FusedBatchNormV3 'bn' (4 channels) rewritten as Mul "
                                "+ Add");
    gn_pt_fx_expect_event(&x.f, "remap.batchnorm_scale_offset: bnp: FusedBatchNormV3 'bnp' not rewritten: "
                                "FusedBatchNormV3 'bnp' is preserved (fetch)");
    /* NCHW: the constants are [C, 1, 1] */
    gn__tensor t;
    const Tensorflow__AttrValue *v = gn__node_attr(x.g, gn__graph_find(x.g, "bnc/scale"), "value");
    assert_non_null(v);
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__tensor_from_proto(v->tensor, &t, &e), GN_OK);
    assert_int_equal(t.rank, 3);
    assert_int_equal(t.dims[0], 4);
    gn__tensor_release(&t);
    feed f[2] = {{"x", DT_FLOAT, 4, {2, 5, 5, 4}}, {"xc", DT_FLOAT, 4, {2, 4, 5, 5}}};
    const char *xn[4] = {"y", "yc", "bnp", "yt"};
    expect_same(x.before, x.g, f, 2, xn, 4, 1e-4);
    rx_free(&x);
    gn_pt_text_free(&b.t);
}

/* ---- golden models and corpus CNNs through gn_optimize ------------------------------------------ */
static uint32_t count_fused_in(const gn_graph *g)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i) && !strncmp(gn__node_op(g, i), "_Fused", 6)) n++;
    return n;
}

static uint32_t count_fused(const gn_graph *g)
{
    uint32_t n = count_fused_in(g);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) n += count_fused_in(g->fns[f].body);
    return n;
}

/* The four runs per model: the remapper alone and the default pipeline, for cpu and gpu:sm_90. */
static const char *const k_run_name[4] = {"alone/cpu", "alone/gpu:sm_90", "default/cpu", "default/gpu:sm_90"};

/* Optimizes g for run k (k_run_name); returns the fused-node count. */
static uint32_t optimize_for(gn_graph *g, int k, const char *const *fn, size_t nf, const char *const *xn, size_t nx,
                             const char *what)
{
    const char *target = k & 1 ? "gpu:sm_90" : "cpu";
    gn_options o;
    if (k < 2) {
        gn_pt_options_alone(&o);
        o.remapping = GN_TOGGLE_ON;
    } else {
        gn_options_init(&o);
    }
    o.checked = 1;
    o.fail_on_optimizer_errors = 1;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = xn;
    p.n_fetches = nx;
    p.feeds = fn;
    p.n_feeds = nf;
    char err[256];
    assert_int_equal(gn_target_parse(target, &p.target, err, sizeof err), GN_OK);
    gn_report *r = NULL;
    gn_status s = gn_optimize(g, &o, &p, &r);
    if (s != GN_OK) fail_msg("%s (%s): gn_optimize: %s", what, target, gn_graph_errmsg(g));
    gn_report_free(r);
    gn_pt_check_valid(g, what);
    return count_fused(g);
}

typedef struct model_case {
    const char *name;      /* golden model name, or a corpus path */
    uint32_t fused[4];     /* per run, k_run_name */
} model_case;

/* _Fused* nodes per golden model after each run (k_run_name). The remapper alone sees the frozen
 * graphs as they are (Identity between a weight and its convolution: no batch-norm folding); the
 * default pipeline's counts also depend on what the other passes leave (constant folding pushes
 * Keras' batch-norm Mul into Conv2D filters; the layout optimizer's NCHW biases on GPU; function
 * inlining of SavedModel layers) and were recorded with the passes of 2026-12-06, under the
 * default remap.policy 'tensorflow' (the output's contract: no depthwise fusion on CPU, on GPU
 * Conv2D + BiasAdd + Relu only and no MatMul fusion). */
static const model_case k_golden[] = {
    {"cnn_bn_residual", {1, 0, 5, 3}},   {"mobilenet_v2", {0, 0, 4, 0}},  {"lstm", {1, 0, 1, 0}},
    {"lstm_v1", {1, 0, 1, 0}},           {"transformer", {0, 0, 0, 0}},   {"ds_cnn_s", {6, 0, 6, 1}},
    {"tfonnx_fc_layers", {3, 0, 3, 0}},  {"tfonnx_lstm", {28, 0, 29, 0}}, {"tfonnx_gru", {57, 0, 57, 0}},
};

static void run_golden(const gn_pt_golden *m, const model_case *mc)
{
    gn_graph *orig = NULL;
    gn_tensor ft[4];
    const char *fn[4], *xn[4];
    if (!gn_pt_golden_open(m, &orig, ft, fn, xn, false)) {
        print_message("    %s: corpus absent: skipped\n", m->name);
        return;
    }
    for (int t = 0; t < 4; t++) {
        gn_graph *g = gn_pt_clone(orig);
        uint32_t nfused = optimize_for(g, t, fn, m->nf, xn, m->nx, m->name);
        double rel[4], worst = 0;
        gn_pt_expect_close(orig, g, fn, ft, m->nf, xn, m->nx, 1e-4, rel);
        for (size_t i = 0; i < m->nx; i++)
            if (rel[i] > worst) worst = rel[i];
        print_message("    %-18s %-17s %3u fused nodes, rel L2 %.2e\n", m->name, k_run_name[t], nfused, worst);
        if (nfused != mc->fused[t])
            fail_msg("%s (%s): %u fused nodes, expected %u", m->name, k_run_name[t], nfused, mc->fused[t]);
        gn_graph_free(g);
    }
    for (size_t i = 0; i < m->nf; i++) gn_tensor_free(&ft[i]);
    gn_graph_free(orig);
}

/* Inside a TF1 while loop, where every constant is anchored to the loop's
 * frame by a control input (TensorFlow puts a node without inputs in the root
 * frame and refuses a node with inputs from two frames): the constants the
 * pass makes (the [1, 1, 1, C] bias made 1-D, a folded filter and bias, a
 * batch norm's scale and offset) take the control inputs of those they are
 * made from, so the loop still runs (the CPU backend checks frames as
 * TensorFlow's executor does). */
static const char *const k_loop_text =
    PH_SHAPE("x", "dim { size: 2 } dim { size: 6 } dim { size: 6 } dim { size: 3 }")
    "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
    "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: 'ei' op: 'Enter' input: 'i0' " TI AS("frame_name", "L") AB("is_constant", "false")
    AINT("parallel_iterations", "1") "}\n"
    "node { name: 'eh' op: 'Enter' input: 'x' " TF AS("frame_name", "L") AB("is_constant", "false")
    AINT("parallel_iterations", "1") "}\n"
    "node { name: 'mi' op: 'Merge' input: 'ei' input: 'ni' " TI AINT("N", "2") "}\n"
    "node { name: 'mh' op: 'Merge' input: 'eh' input: 'nh' " TF AINT("N", "2") "}\n"
    "node { name: 'lim' op: 'Const' input: '^mi' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }\n"
    "node { name: 'less' op: 'Less' input: 'mi' input: 'lim' " TI "}\n"
    "node { name: 'cond' op: 'LoopCond' input: 'less' }\n"
    "node { name: 'si' op: 'Switch' input: 'mi' input: 'cond' " TI "}\n"
    "node { name: 'sh' op: 'Switch' input: 'mh' input: 'cond' " TF "}\n"
    "node { name: 'xi' op: 'Exit' input: 'si' " TI "}\n"
    "node { name: 'y' op: 'Exit' input: 'sh' " TF "}\n"
    "node { name: 'ii' op: 'Identity' input: 'si:1' " TI "}\n"
    "node { name: 'ih' op: 'Identity' input: 'sh:1' " TF "}\n"
    "node { name: 'one' op: 'Const' input: '^ii' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "node { name: 'inc' op: 'AddV2' input: 'ii' input: 'one' " TI "}\n"
    "node { name: 'ni' op: 'NextIteration' input: 'inc' " TI "}\n"
#define LOOP_CONST(n, shape, vals)                                                                                  \
    "node { name: '" n "' op: 'Const' input: '^ih' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' " \
    "value { tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"
    LOOP_CONST("w", "dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 3 }",
               "float_val: 0.1 float_val: -0.2 float_val: 0.05 float_val: 0.15 float_val: -0.1 float_val: 0.02")
    LOOP_CONST("b4", "dim { size: 1 } dim { size: 1 } dim { size: 1 } dim { size: 3 }",
               "float_val: 0.5 float_val: -0.25 float_val: 0.125")
    "node { name: 'conv' op: 'Conv2D' input: 'ih' input: 'w' " TF AL("strides", "i: 1 i: 1 i: 1 i: 1")
    AS("padding", "SAME") AS("data_format", "NHWC") "}\n"
    "node { name: 'a' op: 'AddV2' input: 'conv' input: 'b4' " TF "}\n"
/* an inference FusedBatchNormV3 bn of x with anchored parameters p/scale, p/offset, p/mean, p/var */
#define LOOP_BN(bn, x, p, scale, offset, mean, var)                                                                   \
    LOOP_CONST(p "/scale", "dim { size: 3 }", scale) LOOP_CONST(p "/offset", "dim { size: 3 }", offset)              \
    LOOP_CONST(p "/mean", "dim { size: 3 }", mean) LOOP_CONST(p "/var", "dim { size: 3 }", var)                      \
    "node { name: '" bn "' op: 'FusedBatchNormV3' input: '" x "' input: '" p "/scale' input: '" p "/offset' "       \
    "input: '" p "/mean' input: '" p "/var' " TF AT("U", "DT_FLOAT") "attr { key: 'epsilon' value { f: 0.001 } } "  \
    AS("data_format", "NHWC") AB("is_training", "false") "}\n"
    LOOP_BN("bn", "a", "p", "float_val: 1.5 float_val: 0.5 float_val: 1", "float_val: 0.1 float_val: -0.1 float_val: 0",
            "float_val: 0.2 float_val: 0 float_val: -0.2", "float_val: 1 float_val: 2 float_val: 0.5")
    LOOP_CONST("w2", "dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 1 }",
               "float_val: 0.3 float_val: -0.1 float_val: 0.2")
    "node { name: 'dw' op: 'DepthwiseConv2dNative' input: 'bn:0' input: 'w2' " TF AL("strides", "i: 1 i: 1 i: 1 i: 1")
    AS("padding", "SAME") AS("data_format", "NHWC") "}\n"
    LOOP_BN("bn2", "dw", "bn2", "float_val: 0.8 float_val: 1.2 float_val: 1", "float_val: 0 float_val: 0.3 float_val: -0.3",
            "float_val: 0.1 float_val: 0.1 float_val: 0", "float_val: 0.7 float_val: 1 float_val: 1.3")
    "node { name: 'r' op: 'Relu' input: 'bn2' " TF "}\n"
    "node { name: 'nh' op: 'NextIteration' input: 'r' " TF "}\n";

static void test_constants_in_a_loop(void **state)
{
    (void)state;
    rx x;
    assert_true(rx_run(&x, k_loop_text, "y,xi", false, GN_REMAP_POLICY_GRAPNEL));
    /* every Const the pass made hangs on the loop's Identity, as those it replaced */
    uint32_t made = 0;
    for (gn_id id = 0; id < x.g->n_nodes; id++) {
        if (!gn__node_live(x.g, id) || strcmp(gn__node_op(x.g, id), "Const") != 0) continue;
        if (gn__graph_find(x.before, gn__node_name(x.g, id)) != GN_NONE) continue;
        made++;
        const gn__node *n = gn__node_at(x.g, id);
        if (n->n_ctrl != 1 || strcmp(gn__node_name(x.g, n->ctrl[0]), "ih") != 0)
            fail_msg("new constant '%s' has %u control inputs, not ^ih", gn__node_name(x.g, id), n->n_ctrl);
    }
    assert_true(made >= 3);
    gn_pt_fx_expect_event(&x.f, "remap.contraction_bias_act: a: fused Conv2D 'conv' + AddV2 'a' into _FusedConv2D");
    gn_pt_fx_expect_event(&x.f, "remap.fold_batchnorm: bn2: folded DepthwiseConv2dNative 'dw' + FusedBatchNormV3 'bn2' "
                                "into the filter and a bias (3 channels)");
    const char *xn[2] = {"y", "xi"};
    expect_same(x.before, x.g, &f_x, 1, xn, 2, 1e-4);
    rx_free(&x);
}

static void test_golden_models(void **state)
{
    (void)state;
    static gn_pt_golden m[32];
    size_t n = gn_pt_read_manifest(m, 32);
    assert_true(n >= sizeof k_golden / sizeof k_golden[0]);
    for (size_t k = 0; k < sizeof k_golden / sizeof k_golden[0]; k++) {
        size_t i = 0;
        while (i < n && strcmp(m[i].name, k_golden[k].name)) i++;
        if (i == n) fail_msg("golden model %s not in the manifest", k_golden[k].name);
        run_golden(&m[i], &k_golden[k]);
    }
}

/* CRNN_S fed at Mfcc with a fixed pseudo-random input. */
static void test_kws_crnn(void **state)
{
    (void)state;
    char path[4096];
    const char *rel = "ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb";
    if (!gn_test_corpus(rel, path, sizeof path)) skip();
    gn_graph *orig = NULL;
    if (gn_graph_load(path, NULL, &orig) != GN_OK) fail_msg("load %s: %s", path, gn_graph_errmsg(orig));
    feed f = {"Mfcc:0", DT_FLOAT, 3, {1, 49, 10, 0}};
    const char *fn[1] = {"Mfcc:0"}, *xn[1] = {"labels_softmax:0"};
    const uint32_t want[4] = {4, 0, 7, 1};
    for (int t = 0; t < 4; t++) {
        gn_graph *g = gn_pt_clone(orig);
        uint32_t nfused = optimize_for(g, t, fn, 1, xn, 1, "CRNN_S");
        print_message("    %-18s %-17s %3u fused nodes\n", "CRNN_S", k_run_name[t], nfused);
        expect_same(orig, g, &f, 1, xn, 1, 1e-4);
        if (nfused != want[t]) fail_msg("CRNN_S (%s): %u fused nodes, expected %u", k_run_name[t], nfused, want[t]);
        gn_graph_free(g);
    }
    gn_graph_free(orig);
}

/* Models the CPU runtime does not run end to end here (training steps, a
 * SavedModel whose layers live in functions): the default pipeline for both
 * targets, validity and the fused-node count. */
static const model_case k_count_only[] = {
    /* default pipeline: the function optimizer inlines the serving call and drops the
     * layer functions the graph no longer calls, so only the serving path's fusions are
     * left (the variables are not constants here: no batch-norm folding). The Keras ImageNet
     * graphs are placed on GPU:0 in NCHW: TensorFlow's GPU kernels take none of their
     * fusions (batch norm + Relu only in NHWC, MatMul only with cuBLASLt) */
    {"mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model", {30, 18, 6, 0}},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main.pbtxt", {0, 0, 0, 0}},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main_graph_mode.pbtxt", {0, 0, 0, 0}},
};

static void test_corpus_counts(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof k_count_only / sizeof k_count_only[0]; k++) {
        char path[4096];
        if (!gn_test_corpus(k_count_only[k].name, path, sizeof path)) {
            print_message("    %s: corpus absent: skipped\n", k_count_only[k].name);
            continue;
        }
        gn_graph *orig = NULL;
        if (gn_graph_load(path, NULL, &orig) != GN_OK) fail_msg("load %s: %s", path, gn_graph_errmsg(orig));
        for (int t = 0; t < 4; t++) {
            gn_graph *g = gn_pt_clone(orig);
            uint32_t nfused = optimize_for(g, t, NULL, 0, NULL, 0, k_count_only[k].name);
            print_message("    %-40.40s %-17s %3u fused nodes\n", strrchr(k_count_only[k].name, '/') + 1, k_run_name[t],
                          nfused);
            if (nfused != k_count_only[k].fused[t])
                fail_msg("%s (%s): %u fused nodes, expected %u", k_count_only[k].name, k_run_name[t], nfused,
                         k_count_only[k].fused[t]);
            gn_graph_free(g);
        }
        gn_graph_free(orig);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_conv_bias_relu),
    cmocka_unit_test(test_activations),
    cmocka_unit_test(test_conv_bias_nchw),
    cmocka_unit_test(test_conv_add_nchw),
    cmocka_unit_test(test_matmul),
    cmocka_unit_test(test_matmul_gelu),
    cmocka_unit_test(test_conv_side_input),
    cmocka_unit_test(test_matmul_side_input),
    cmocka_unit_test(test_conv_squeeze_bias),
    cmocka_unit_test(test_dilated_conv),
    cmocka_unit_test(test_refusals),
    cmocka_unit_test(test_policy_gpu),
    cmocka_unit_test(test_policy_option),
        cmocka_unit_test(test_policy_note_without_events),
    cmocka_unit_test(test_policy_placement),
    cmocka_unit_test(test_fold_batchnorm),
    cmocka_unit_test(test_fold_scale),
    cmocka_unit_test(test_conv_batchnorm),
    cmocka_unit_test(test_batchnorm_ex),
    cmocka_unit_test(test_batchnorm_scale_offset),
    cmocka_unit_test(test_constants_in_a_loop),
    cmocka_unit_test(test_golden_models),
    cmocka_unit_test(test_kws_crnn),
    cmocka_unit_test(test_corpus_counts),
};

int main(void) { return cmocka_run_group_tests(tests, NULL, NULL); }
