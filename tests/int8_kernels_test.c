/* The CUDA backend's INT8 kernels without a GPU: the per-element functions
 * its kernels launch (src/runtime/cuda/int8_math.h: quantized GEMM rows,
 * im2col, the depthwise sum, dequantize with bias and activation) run here
 * on the host over the weights quantized as the backend quantizes them
 * (gn__q8_weights, into rows padded to 16 bytes), and must give exactly
 * the CPU reference's INT8 engine output (runtime/cpu/int8.c), bit for bit:
 * convolutions SAME / VALID / EXPLICIT with strides, depthwise with
 * multipliers, MatMul with either operand transposed, every epilogue.
 * What this cannot check (the launches, cuBLASLt's int8 GEMM, the plans)
 * tests/cuda_test.c checks on a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "passtest.h"
#include "runtime/cuda/int8_math.h"
#include "runtime/quant.h"
#include "testutil.h"

#define DT_FLOAT 1

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static float urand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)((g_rng >> 11) * (1.0 / 9007199254740992.0));
}

enum { CONV, DW, MM };

typedef struct kcase {
    const char *what;
    int kind;
    int64_t x[4];               /* input dims (rank 4, or 2 for MatMul) */
    int64_t w[4];               /* weight dims */
    int64_t stride[2];
    const char *padding;        /* SAME, VALID, EXPLICIT */
    int64_t ep[4];              /* EXPLICIT: top, bottom, left, right */
    bool ta, tb;
    const char *fused;          /* NULL: the plain op; else fused_ops after BiasAdd ("" none) */
    float alpha;
} kcase;

static const kcase k_cases[] = {
    {"conv 3x3/2 SAME bias Relu (27 per channel)", CONV, {2, 9, 9, 3}, {3, 3, 3, 8}, {2, 2}, "SAME", {0}, 0, 0, "s: 'Relu'", 0},
    {"conv 2x3/(1,2) VALID", CONV, {1, 7, 8, 5}, {2, 3, 5, 4}, {1, 2}, "VALID", {0}, 0, 0, NULL, 0},
    {"conv 3x3 EXPLICIT (1,2,0,1) bias LeakyRelu", CONV, {1, 6, 6, 4}, {3, 3, 4, 6}, {1, 1}, "EXPLICIT", {1, 2, 0, 1},
     0, 0, "s: 'LeakyRelu'", 0.3f},
    {"conv 1x1 bias Elu", CONV, {2, 4, 5, 16}, {1, 1, 16, 5}, {1, 1}, "SAME", {0}, 0, 0, "s: 'Elu'", 0},
    {"depthwise 3x3/2 SAME x3", DW, {2, 7, 7, 4}, {3, 3, 4, 3}, {2, 2}, "SAME", {0}, 0, 0, NULL, 0},
    {"depthwise 2x2 VALID x1", DW, {1, 5, 6, 3}, {2, 2, 3, 1}, {1, 1}, "VALID", {0}, 0, 0, NULL, 0},
    {"matmul", MM, {5, 7}, {7, 3}, {0}, NULL, {0}, 0, 0, NULL, 0},
    {"matmul transpose_a", MM, {7, 5}, {7, 3}, {0}, NULL, {0}, 1, 0, NULL, 0},
    {"matmul transpose_b bias Relu6", MM, {5, 19}, {4, 19}, {0}, NULL, {0}, 0, 1, "s: 'Relu6'", 0},
    {"matmul both transposed bias", MM, {19, 6}, {9, 19}, {0}, NULL, {0}, 1, 1, "", 0},
};

static gn_graph *case_graph(const kcase *c)
{
    gn_pt_text t = {0}, *b = &t;
    int xr = c->kind == MM ? 2 : 4;
    gn_pt_text_add(b, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
    gn_pt_text_const(b, "w", xr, c->w, &g_rng);
    int64_t nch = c->kind == MM ? (c->tb ? c->w[0] : c->w[1]) : c->kind == CONV ? c->w[3] : c->w[2] * c->w[3];
    if (c->fused) gn_pt_text_const(b, "bias", 1, &nch, &g_rng);
    const char *op = c->kind == MM ? (c->fused ? "_FusedMatMul" : "MatMul")
                                   : c->kind == DW ? "DepthwiseConv2dNative" : c->fused ? "_FusedConv2D" : "Conv2D";
    gn_pt_text_add(b, "node { name: 'y' op: '%s' input: 'x' input: 'w'%s attr { key: 'T' value { type: DT_FLOAT } }", op,
        c->fused ? " input: 'bias'" : "");
    if (c->kind == MM) {
        gn_pt_text_add(b, " attr { key: 'transpose_a' value { b: %s } } attr { key: 'transpose_b' value { b: %s } }",
            c->ta ? "true" : "false", c->tb ? "true" : "false");
    } else {
        gn_pt_text_add(b, " attr { key: 'padding' value { s: '%s' } } attr { key: 'data_format' value { s: 'NHWC' } } attr { key: "
               "'strides' value { list { i: 1 i: %lld i: %lld i: 1 } } }",
            c->padding, (long long)c->stride[0], (long long)c->stride[1]);
        if (!strcmp(c->padding, "EXPLICIT"))
            gn_pt_text_add(b, " attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: %lld i: %lld i: %lld i: %lld i: 0 i: 0 "
                   "} } }",
                (long long)c->ep[0], (long long)c->ep[1], (long long)c->ep[2], (long long)c->ep[3]);
    }
    if (c->fused)
        gn_pt_text_add(b, " attr { key: 'num_args' value { i: 1 } } attr { key: 'TArgs' value { list { type: DT_FLOAT } } } attr "
               "{ key: 'fused_ops' value { list { s: 'BiasAdd' %s } } } attr { key: 'leakyrelu_alpha' value { f: %g } }",
            c->fused, (double)c->alpha);
    gn_pt_text_add(b, " }\n");
    gn_pt_text_add(b, "node { name: 'out' op: 'Identity' input: 'y' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_graph *g = gn_pt_load_text(b->s);
    gn_pt_text_free(b);
    return g;
}

static void random_tensor(gn_tensor *t, int32_t rank, const int64_t *dims)
{
    assert_int_equal(gn_tensor_alloc(DT_FLOAT, rank, dims, t), GN_OK);
    float *v = t->data;
    for (int64_t i = 0; i < gn_tensor_numel(t); i++) v[i] = 3.0f * (2.0f * urand() - 1.0f);
}

/* padding before, as the CUDA backend's plan computes it */
static int64_t pad_before(const kcase *c, int d, int64_t in, int64_t k, int64_t out)
{
    if (!strcmp(c->padding, "VALID")) return 0;
    if (!strcmp(c->padding, "EXPLICIT")) return c->ep[2 * d];
    int64_t total = (out - 1) * c->stride[d] + k - in;
    return total > 0 ? total / 2 : 0;
}

/* The CUDA kernels' arithmetic on the host, for node y of the original graph g. */
static float *emulate(const gn_graph *g, const kcase *c, const gn_tensor *x, float amax, const gn_tensor *want)
{
    gn_id id = gn__graph_find(g, "y");
    gn__q8_node q;
    assert_true(gn__int8_node_info(g, id, &q));
    gn__tensor w;
    memset(&w, 0, sizeof w);
    gn__err err;
    memset(&err, 0, sizeof err);
    assert_int_equal(gn__tensor_from_proto(gn__node_attr(g, gn__graph_find(g, "w"), "value")->tensor, &w, &err), GN_OK);
    const float *bias = NULL;
    gn__tensor bt;
    memset(&bt, 0, sizeof bt);
    if (q.bias) {
        assert_int_equal(gn__tensor_from_proto(gn__node_attr(g, gn__graph_find(g, "bias"), "value")->tensor, &bt, &err),
                         GN_OK);
        bias = bt.data;
    }
    int64_t K = 0, N = 0;
    assert_int_equal(gn__q8_weights(g, id, &q, &w, 0, NULL, NULL, &K, &N, &err), GN_OK);
    int64_t kp = (K + 15) / 16 * 16;
    int8_t *wq = calloc((size_t)(N * kp + K * N + 1), 1);
    float *sw = calloc((size_t)N + 1, sizeof *sw);
    assert_int_equal(gn__q8_weights(g, id, &q, &w, kp, wq, sw, &K, &N, &err), GN_OK);
    float sx = gn__q8_scale(amax), inv = 1.0f / sx;
    int64_t total = gn_tensor_numel(want);
    float *y = calloc((size_t)total + 1, sizeof *y);
    gn__cu_conv8 geo;
    memset(&geo, 0, sizeof geo);
    if (c->kind != MM) {
        geo = (gn__cu_conv8){.n = x->dims[0], .h = x->dims[1], .w = x->dims[2], .c = x->dims[3], .oh = want->dims[1],
                             .ow = want->dims[2], .kh = w.dims[0], .kw = w.dims[1], .sh = q.stride[0], .sw = q.stride[1]};
        geo.pad_top = pad_before(c, 0, geo.h, geo.kh, geo.oh);
        geo.pad_left = pad_before(c, 1, geo.w, geo.kw, geo.ow);
    }
    if (c->kind == DW) {
        for (int64_t i = 0; i < total; i++) {
            int64_t j = i % N;
            y[i] = gn__i8_dequant(gn__i8_dw_at(i, &geo, w.dims[3], x->data, inv, wq), sx, sw[j], bias, j, q.act, q.alpha);
        }
    } else {
        int64_t m = total / N;
        int8_t *rows = calloc((size_t)(m * kp + 1), 1);
        for (int64_t i = 0; i < m * kp; i++)
            rows[i] = c->kind == MM ? gn__i8_row_at(i, m, K, kp, q.ta, x->data, inv) : gn__i8_im2col_at(i, &geo, kp, x->data, inv);
        for (int64_t i = 0; i < total; i++) {
            int64_t r = i / N, j = i % N;
            int32_t sum = 0;
            for (int64_t k = 0; k < kp; k++) sum += (int32_t)rows[r * kp + k] * (int32_t)wq[j * kp + k];
            y[i] = gn__i8_dequant(sum, sx, sw[j], bias, j, q.act, q.alpha);
        }
        free(rows);
    }
    gn__tensor_release(&w);
    gn__tensor_release(&bt);
    free(wq);
    free(sw);
    return y;
}

static void test_kernels_match_reference(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < GN__ARRAY_LEN(k_cases); ci++) {
        const kcase *c = &k_cases[ci];
        gn_graph *orig = case_graph(c), *g = gn_pt_clone(orig);
        int xr = c->kind == MM ? 2 : 4;
        /* one INT8 engine op over the node, calibrated on three batches */
        gn_conversion_params p;
        gn_conversion_params_init(&p);
        char perr[256];
        assert_int_equal(gn_conversion_params_parse(&p, "{'precision_mode': 'INT8', 'minimum_segment_size': 1}", perr,
                                                    sizeof perr),
                         GN_OK);
        gn_segment_params sp;
        gn_segment_params_init(&sp);
        const char *keep[2] = {"x", "out"}, *fn[1] = {"x"}, *xn[1] = {"out"};
        sp.preserve = keep;
        sp.n_preserve = 2;
        size_t n_eng = 0;
        if (gn_segment(g, &p, &sp, NULL, &n_eng) != GN_OK) fail_msg("%s: segment: %s", c->what, gn_graph_errmsg(g));
        assert_int_equal(n_eng, 1);
        gn_tensor cal[3], x, want;
        for (int i = 0; i < 3; i++) random_tensor(&cal[i], xr, c->x);
        char *rep = NULL;
        if (gn_calibrate(g, fn, 1, cal, 3, &rep) != GN_OK) fail_msg("%s: calibrate: %s", c->what, gn_graph_errmsg(g));
        gn_free(rep);
        for (int i = 0; i < 3; i++) gn_tensor_free(&cal[i]);
        random_tensor(&x, xr, c->x);
        gn_session *s = NULL;
        assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
        if (gn_session_run(s, fn, &x, 1, xn, &want, 1) != GN_OK) fail_msg("%s: %s", c->what, gn_session_errmsg(s));
        /* the engine input's range, from the op's table */
        gn_id eng = GN_NONE;
        for (gn_id i = 0; i < g->n_nodes; i++)
            if (gn__node_live(g, i) && !strcmp(gn__node_op(g, i), "Grapnel>EngineOp")) eng = i;
        assert_true(eng != GN_NONE);
        const char *tab = NULL;
        size_t tl = 0;
        assert_true(gn__attr_get_string(g, eng, "calibration_data", &tab, &tl));
        gn__calib_table t;
        gn__err err;
        memset(&err, 0, sizeof err);
        assert_int_equal(gn__calib_parse(tab, tl, &t, &err), GN_OK);
        float amax = gn__calib_find(&t, "GrapnelInputPH_0", 0);
        gn__calib_free(&t);
        assert_true(amax > 0);
        float *y = emulate(orig, c, &x, amax, &want);
        int64_t n = gn_tensor_numel(&want), diff = 0;
        const float *wv = want.data;
        for (int64_t i = 0; i < n; i++) diff += memcmp(&y[i], &wv[i], sizeof(float)) != 0;
        /* and it is int8 arithmetic, not float32 */
        gn_tensor flt;
        gn_pt_run_graph(orig, fn, &x, 1, xn, &flt, 1);
        gn_compare_result r;
        memset(&r, 0, sizeof r);
        gn_tensor_compare(&want, &flt, 1.0, &r);
        print_message("%-44s %5lld values, %lld differ; int8 vs float32 rel L2 %.3g\n", c->what, (long long)n,
                      (long long)diff, r.rel_l2_err);
        if (diff) fail_msg("%s: %lld of %lld values differ from the CPU reference", c->what, (long long)diff, (long long)n);
        if (!(r.rel_l2_err > 1e-6)) fail_msg("%s: the engine agrees with float32 (%g): no int8 ran", c->what, r.rel_l2_err);
        free(y);
        gn_tensor_free(&flt);
        gn_tensor_free(&want);
        gn_tensor_free(&x);
        gn_session_free(s);
        gn_graph_free(g);
        gn_graph_free(orig);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
