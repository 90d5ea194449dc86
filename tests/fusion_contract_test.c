/* The output's contract (src/optimizer/passes/fusion_contract.c): the table of
 * fused ops TensorFlow's kernels run, and every fusion the remapper can write
 * checked against it, without TensorFlow.
 *
 *  - the table: each row names its TensorFlow source; no row twice; the
 *    reasons of the issue's failure kinds, word for word;
 *  - every pattern the remapper knows (Conv2D / DepthwiseConv2dNative / MatMul
 *    + BiasAdd or FusedBatchNormV3, no activation or each of the six, with and
 *    without an Add side input, float32 / float16 / float64, NHWC / NCHW;
 *    FusedBatchNormV3 + Relu on 1 and 8 channels with and without a side
 *    input; MatMul + BiasAdd + GELU erf form; Conv2D + Squeeze + BiasAdd),
 *    for targets cpu and gpu:sm_90, through the remap pass:
 *      policy tensorflow: every fused node written is one the table holds;
 *      policy grapnel: every fused node the table does not hold is reported
 *      "[grapnel-only: <the table's reason>]";
 *    and the policies differ (grapnel writes fusions the contract refuses),
 *    so neither check is empty. tools/tf_oracle.py checks the table itself
 *    against TensorFlow (bench/TF_ORACLE.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/options.h"
#include "graph/ir.h"
#include "ops/shape.h"
#include "optimizer/pass.h"
#include "optimizer/passes/fusion_contract.h"
#include "testutil.h"
#include "passtest.h"

/* ---- the table ------------------------------------------------------------------------------ */
static void test_table(void **state)
{
    (void)state;
    size_t n = 0;
    const gn__fusion_row *r = gn__fusion_contract_rows(&n);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        assert_true(gn__fusion_contract_governs(r[i].op));
        assert_non_null(strstr(r[i].source, "tensorflow/core/"));
        assert_true(r[i].dtypes != 0 && r[i].devices != 0);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(r[i].op, r[j].op) && (r[i].devices & r[j].devices) && !strcmp(r[i].fused_ops, r[j].fused_ops))
                fail_msg("row %zu repeats row %zu (%s [%s])", i, j, r[i].op, r[i].fused_ops);
    }
}

static const char *check(const char *op, bool gpu, int32_t dt, bool nchw, uint32_t nargs, const char *a, const char *b,
                         const char *c, char *buf, size_t n)
{
    const char *ops[3] = {a, b, c};
    gn__fusion_desc d = {.op = op, .fused_ops = ops, .n_ops = c ? 3 : b ? 2 : 1, .num_args = nargs, .dtype = dt,
                         .gpu = gpu, .nchw = nchw, .channels = -1};
    return gn__fusion_contract_check(&d, buf, n);
}

#define CONV_SRC "tensorflow/core/kernels/conv_ops_fused_impl.h, tensorflow/core/common_runtime/mkl_layout_pass.cc"
#define MM_SRC "tensorflow/core/kernels/matmul_op_fused.cc, tensorflow/core/common_runtime/mkl_layout_pass.cc"

/* The kinds of failure the issue lists, each refused with its reason; what TensorFlow runs, accepted. */
static void test_issue_rows(void **state)
{
    (void)state;
    char b[768];
    /* runs */
    assert_null(check("_FusedConv2D", false, 1, false, 1, "BiasAdd", "Relu", NULL, b, sizeof b));
    assert_null(check("_FusedConv2D", false, 2, false, 4, "FusedBatchNorm", "LeakyRelu", NULL, b, sizeof b));
    assert_null(check("_FusedMatMul", false, 1, false, 1, "BiasAdd", "Elu", NULL, b, sizeof b));
    assert_null(check("_FusedConv2D", true, 19, true, 1, "BiasAdd", "Relu", NULL, b, sizeof b));
    assert_null(check("_FusedMatMul", true, 19, false, 1, "BiasAdd", "GeluExact", NULL, b, sizeof b));
    /* MatMul + BiasAdd + Gelu */
    assert_string_equal(check("_FusedMatMul", false, 1, false, 1, "BiasAdd", "GeluExact", NULL, b, sizeof b),
                         "TensorFlow's CPU _FusedMatMul has no GeluExact epilogue (fused_ops [BiasAdd, GeluExact]) "
                         "(" MM_SRC ")");
    assert_string_equal(check("_FusedMatMul", true, 1, false, 1, "BiasAdd", "GeluExact", NULL, b, sizeof b),
                         "TensorFlow's GPU _FusedMatMul [BiasAdd,GeluExact] does not run float32 "
                         "(tensorflow/core/kernels/matmul_op_fused.cc (GPU: cuDNN, DT_HALF only))");
    /* FusedBatchNorm + Relu on CPU (1 or 8 channels), and on GPU on 1 channel */
    const char *relu[1] = {"Relu"};
    gn__fusion_desc bn = {.op = "_FusedBatchNormEx", .fused_ops = relu, .n_ops = 1, .dtype = 1, .channels = 8};
    assert_string_equal(gn__fusion_contract_check(&bn, b, sizeof b),
                        "TensorFlow's CPU _FusedBatchNormEx is a oneDNN placeholder: with TF_ENABLE_ONEDNN_OPTS=0 it "
                        "is a NoOp that writes no output (tensorflow/core/kernels/mkl/mkl_fused_batch_norm_op.cc)");
    bn.gpu = true;
    assert_null(gn__fusion_contract_check(&bn, b, sizeof b));
    bn.channels = 1;
    assert_string_equal(gn__fusion_contract_check(&bn, b, sizeof b),
                        "_FusedBatchNormEx needs the channel dim divisible by 4, it is 1 "
                        "(tensorflow/core/kernels/fused_batch_norm_op.cc, tensorflow/core/ops/nn_ops.cc)");
    /* DepthwiseConv2dNative + BiasAdd (+ anything) */
    assert_string_equal(check("_FusedDepthwiseConv2dNative", false, 1, false, 1, "BiasAdd", "Relu6", NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedDepthwiseConv2dNative is a oneDNN placeholder: with "
                        "TF_ENABLE_ONEDNN_OPTS=0 it is a NoOp that writes no output "
                        "(tensorflow/core/kernels/mkl/mkl_conv_ops.cc)");
    /* Conv2D + BiasAdd / batch norm + Tanh or Sigmoid */
    assert_string_equal(check("_FusedConv2D", false, 1, false, 1, "BiasAdd", "Sigmoid", NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D has no Sigmoid epilogue (fused_ops [BiasAdd, Sigmoid]) "
                        "(" CONV_SRC ")");
    assert_string_equal(check("_FusedConv2D", false, 1, false, 4, "FusedBatchNorm", "Tanh", NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D has no Tanh epilogue (fused_ops [FusedBatchNorm, Tanh]) "
                        "(" CONV_SRC ")");
    /* Conv2D + BiasAdd + AddV2 */
    assert_string_equal(check("_FusedConv2D", false, 1, false, 2, "BiasAdd", "Add", NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D takes no Add side input (fused_ops [BiasAdd, Add]) "
                        "(" CONV_SRC ")");
    /* formats and dtypes */
    assert_string_equal(check("_FusedConv2D", false, 1, true, 1, "BiasAdd", NULL, NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D runs only NHWC (" CONV_SRC ")");
    assert_string_equal(check("_FusedConv2D", false, 19, false, 1, "BiasAdd", NULL, NULL, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D [BiasAdd] does not run float16 (" CONV_SRC ")");
    gn__fusion_desc gr = {.op = "_FusedConv2D", .fused_ops = relu, .n_ops = 0, .num_args = 1, .dtype = 1};
    const char *bias[1] = {"BiasAdd"};
    gr.fused_ops = bias;
    gr.n_ops = 1;
    gr.grouped = true;
    assert_string_equal(gn__fusion_contract_check(&gr, b, sizeof b),
                        "TensorFlow's CPU _FusedConv2D does not take a grouped convolution (" CONV_SRC ")");
    /* ops the table does not govern */
    assert_null(check("Conv2D", false, 1, false, 0, "BiasAdd", "Sigmoid", NULL, b, sizeof b));
}

/* ---- every fusion the remapper can write ------------------------------------------------------ */
typedef struct tally {
    uint32_t written[2];      /* fused nodes written, per policy (0 tensorflow, 1 grapnel) */
    uint32_t grapnel_only;    /* of those under grapnel, the ones the table refuses */
    uint32_t graphs;
} tally;

static const char *dtname(int dt) { return dt == 19 ? "DT_HALF" : dt == 2 ? "DT_DOUBLE" : "DT_FLOAT"; }

static void ph(gn_pt_text *t, const char *name, int dt, const int64_t *d, int r)
{
    gn_pt_text_ph_dims(t, name, dtname(dt), r, d);
}

static void node2(gn_pt_text *t, const char *name, const char *op, const char *a, const char *b, int dt,
                  const char *extra)
{
    char in[256];
    snprintf(in, sizeof in, "%s%s%s", a, b ? "," : "", b ? b : "");
    gn_pt_text_op(t, name, op, in, dtname(dt), extra);
}

/* Runs the remap pass over text for (gpu, policy) and checks every fused node against the table. */
static void run_and_check(const char *text, const char *root, bool gpu, int policy, tally *ty)
{
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, root);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "remap");
    if (gpu) {
        f.target.kind = GN_TARGET_GPU;
        f.target.compute_capability = 90;
        f.target.num_gpus = 1;
    }
    f.o.remap_policy = policy;
    gn_pt_fx_run(&f, gn__pass_remap, g);
    gn__err saved = g->err;
    if (gn__graph_infer_shapes(g) != GN_OK) g->err = saved;
    char *rep = gn_pt_fx_report_text(&f);
    int pi = policy == GN_REMAP_POLICY_GRAPNEL;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id) || !gn__fusion_contract_governs(gn__node_op(g, id))) continue;
        ty->written[pi]++;
        char why[768];
        const char *bad = gn__fusion_contract_node(g, id, gpu, why, sizeof why);
        if (!pi) {
            if (bad)
                fail_msg("policy tensorflow (%s) wrote %s '%s' that TensorFlow does not run: %s\ngraph:\n%s",
                         gpu ? "gpu" : "cpu", gn__node_op(g, id), gn__node_name(g, id), bad, text);
            continue;
        }
        if (!bad) continue;
        ty->grapnel_only++;
        char want[1024];
        snprintf(want, sizeof want, "[grapnel-only: %s]", bad);
        if (!strstr(rep, want))
            fail_msg("policy grapnel (%s): %s '%s' is not reported grapnel-only (%s)\nreport:\n%s", gpu ? "gpu" : "cpu",
                     gn__node_op(g, id), gn__node_name(g, id), want, rep);
    }
    ty->graphs++;
    free(rep);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

static void both(const char *text, const char *root, tally *ty)
{
    for (int gpu = 0; gpu < 2; gpu++) {
        run_and_check(text, root, gpu, GN_REMAP_POLICY_TENSORFLOW, ty);
        run_and_check(text, root, gpu, GN_REMAP_POLICY_GRAPNEL, ty);
    }
}

static const char *const k_acts[] = {NULL, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};

static void test_contractions(void **state)
{
    (void)state;
    static const char *const kinds[] = {"Conv2D", "DepthwiseConv2dNative", "MatMul"};
    static const int dts[] = {1, 19, 2};
    tally ty = {0};
    for (int k = 0; k < 3; k++)
        for (int bnm = 0; bnm < 2; bnm++)
            for (size_t a = 0; a < sizeof k_acts / sizeof *k_acts; a++)
                for (int side = 0; side < 2; side++)
                    for (int di = 0; di < 3; di++)
                        for (int cf = 0; cf < 2; cf++) {
                            bool mm = k == 2;
                            if ((mm && (bnm || cf)) || (bnm && side) || (bnm && dts[di] == 2)) continue;
                            int dt = dts[di];
                            gn_pt_text t = {0};
                            const char *fmt = cf ? "NCHW" : "NHWC";
                            int64_t dx[4] = {1, 6, 6, 4}, dxc[4] = {1, 4, 6, 6}, dwc[4] = {3, 3, 4, 8},
                                    dwd[4] = {3, 3, 4, 2}, dmx[2] = {3, 4}, dmw[2] = {4, 8}, d8[1] = {8},
                                    dout[4] = {1, 6, 6, 8}, doutc[4] = {1, 8, 6, 6}, dmo[2] = {3, 8};
                            if (mm) {
                                ph(&t, "x", dt, dmx, 2);
                                ph(&t, "w", dt, dmw, 2);
                            } else {
                                ph(&t, "x", dt, cf ? dxc : dx, 4);
                                ph(&t, "w", dt, k == 1 ? dwd : dwc, 4);
                            }
                            char attrs[512];
                            if (mm)
                                snprintf(attrs, sizeof attrs, "attr { key: 'transpose_a' value { b: false } } attr { "
                                                              "key: 'transpose_b' value { b: false } }");
                            else
                                snprintf(attrs, sizeof attrs,
                                         "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: "
                                         "'padding' value { s: 'SAME' } } attr { key: 'data_format' value { s: '%s' } }",
                                         fmt);
                            node2(&t, "conv", kinds[k], "x", "w", dt, attrs);
                            char fa[128];
                            snprintf(fa, sizeof fa, "attr { key: 'data_format' value { s: '%s' } }", mm ? "NHWC" : fmt);
                            if (bnm) {
                                static const char *const pn[4] = {"s", "o", "m", "v"};
                                for (int p = 0; p < 4; p++) ph(&t, pn[p], 1, d8, 1);
                                gn_pt_text_add(&t, "node { name: 'mid' op: 'FusedBatchNormV3' input: 'conv' input: 's' "
                                                   "input: 'o' input: 'm' input: 'v' attr { key: 'T' value { type: %s } "
                                                   "} attr { key: 'U' value { type: DT_FLOAT } } attr { key: "
                                                   "'is_training' value { b: false } } attr { key: 'epsilon' value { "
                                                   "f: 0.001 } } %s }\n",
                                               dtname(dt), fa);
                            } else {
                                ph(&t, "b", dt, d8, 1);
                                node2(&t, "mid", "BiasAdd", "conv", "b", dt, fa);
                            }
                            const char *last = "mid";
                            if (side) {
                                ph(&t, "side", dt, mm ? dmo : cf ? doutc : dout, mm ? 2 : 4);
                                node2(&t, "add", "AddV2", "mid", "side", dt, NULL);
                                last = "add";
                            }
                            if (k_acts[a]) {
                                node2(&t, "act", k_acts[a], last, NULL, dt,
                                      !strcmp(k_acts[a], "LeakyRelu") ? "attr { key: 'alpha' value { f: 0.2 } }" : NULL);
                                last = "act";
                            }
                            both(t.s, last, &ty);
                            gn_pt_text_free(&t);
                        }
    print_message("    %u graphs: policy tensorflow wrote %u fused nodes; policy grapnel %u, %u of them grapnel-only\n",
                  ty.graphs, ty.written[0], ty.written[1], ty.grapnel_only);
    assert_true(ty.written[0] >= 40);
    assert_true(ty.written[1] > ty.written[0]);
    assert_true(ty.grapnel_only >= 100);
}

static void test_batchnorm_gelu_squeeze(void **state)
{
    (void)state;
    tally ty = {0};
    /* FusedBatchNormV3 (+ side Add) + Relu on 1 and 8 channels, float32 / float16, NHWC / NCHW */
    static const int64_t chans[2] = {1, 8};
    static const int dts[2] = {1, 19};
    for (int c = 0; c < 2; c++)
        for (int di = 0; di < 2; di++)
            for (int cf = 0; cf < 2; cf++)
                for (int side = 0; side < 2; side++) {
                    gn_pt_text t = {0};
                    int64_t ch = chans[c], dx[4] = {1, 5, 5, ch}, dxc[4] = {1, ch, 5, 5}, dp[1] = {ch};
                    ph(&t, "x", dts[di], cf ? dxc : dx, 4);
                    static const char *const pn[4] = {"s", "o", "m", "v"};
                    for (int p = 0; p < 4; p++) ph(&t, pn[p], 1, dp, 1);
                    gn_pt_text_add(&t, "node { name: 'bn' op: 'FusedBatchNormV3' input: 'x' input: 's' input: 'o' "
                                       "input: 'm' input: 'v' attr { key: 'T' value { type: %s } } attr { key: 'U' "
                                       "value { type: DT_FLOAT } } attr { key: 'is_training' value { b: false } } attr { "
                                       "key: 'epsilon' value { f: 0.001 } } attr { key: 'data_format' value { s: '%s' } "
                                       "} }\n",
                                   dtname(dts[di]), cf ? "NCHW" : "NHWC");
                    const char *in = "bn";
                    if (side) {
                        ph(&t, "sd", dts[di], cf ? dxc : dx, 4);
                        node2(&t, "add", "AddV2", "bn", "sd", dts[di], NULL);
                        in = "add";
                    }
                    node2(&t, "act", "Relu", in, NULL, dts[di], NULL);
                    both(t.s, "act", &ty);
                    gn_pt_text_free(&t);
                }
    /* MatMul + BiasAdd + GELU, erf form: 0.5 x (1 + Erf(x * 1/sqrt 2)) */
    {
        gn_pt_text t = {0};
        int64_t dx[2] = {3, 4}, dw[2] = {4, 8}, db[1] = {8};
        ph(&t, "x", 1, dx, 2);
        ph(&t, "w", 1, dw, 2);
        ph(&t, "b", 1, db, 1);
        node2(&t, "mm", "MatMul", "x", "w", 1, NULL);
        node2(&t, "ba", "BiasAdd", "mm", "b", 1, NULL);
        static const struct {
            const char *name;
            double v;
        } sc[3] = {{"half", 0.5}, {"one", 1.0}, {"rs2", 0.7071067811865476}};
        for (int i = 0; i < 3; i++)
            gn_pt_text_add(&t, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { "
                               "key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %.17g } } } }\n",
                           sc[i].name, sc[i].v);
        node2(&t, "u", "Mul", "ba", "rs2", 1, NULL);
        node2(&t, "e", "Erf", "u", NULL, 1, NULL);
        node2(&t, "p", "AddV2", "one", "e", 1, NULL);
        node2(&t, "h", "Mul", "ba", "half", 1, NULL);
        node2(&t, "gelu", "Mul", "h", "p", 1, NULL);
        both(t.s, "gelu", &ty);
        gn_pt_text_free(&t);
    }
    /* Conv2D + Squeeze + BiasAdd (+ Relu, + Sigmoid): Keras' Conv1D */
    for (int a = 0; a < 3; a++) {
        gn_pt_text t = {0};
        int64_t dx[4] = {1, 1, 6, 4}, dw[4] = {1, 3, 4, 8}, db[1] = {8};
        ph(&t, "x", 1, dx, 4);
        ph(&t, "w", 1, dw, 4);
        ph(&t, "b", 1, db, 1);
        node2(&t, "conv", "Conv2D", "x", "w", 1,
              "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: "
              "'SAME' } }");
        node2(&t, "sq", "Squeeze", "conv", NULL, 1, "attr { key: 'squeeze_dims' value { list { i: 1 } } }");
        node2(&t, "ba", "BiasAdd", "sq", "b", 1, NULL);
        const char *root = "ba";
        if (a) {
            node2(&t, "act", a == 1 ? "Relu" : "Sigmoid", "ba", NULL, 1, NULL);
            root = "act";
        }
        both(t.s, root, &ty);
        gn_pt_text_free(&t);
    }
    print_message("    %u graphs: policy tensorflow wrote %u fused nodes; policy grapnel %u, %u of them grapnel-only\n",
                  ty.graphs, ty.written[0], ty.written[1], ty.grapnel_only);
    assert_true(ty.written[0] >= 5);
    assert_true(ty.grapnel_only >= 10);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table),
    cmocka_unit_test(test_issue_rows),
    cmocka_unit_test(test_contractions),
    cmocka_unit_test(test_batchnorm_gelu_squeeze),
};

int main(void) { return cmocka_run_group_tests(tests, NULL, NULL); }
