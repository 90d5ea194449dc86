/* Auto mixed precision (src/optimizer/passes/amp.c): small graphs before, the
 * exact graph after (nodes, inputs, which nodes hold float16 type attrs), the
 * report line that says which list decided each node, and the original against
 * the rewritten graph on the CPU backend (float16 kernels) on random inputs,
 * relative L2 below 1e-2. Option edits of the lists, amp.keep_float32, the
 * target gate (cpu, sm_60), AGGRESSIVE, TensorList clusters in a v1 loop. Then the golden models optimized with
 * --target gpu:sm_90 and auto_mixed_precision ON: valid, within 1e-2 of the
 * float32 original, with the exact Cast and float16-node counts recorded. */
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
#include "opdef/registry.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_HALF 19

/* ---- graph text --------------------------------------------------------------------------- */
static uint32_t rng_state = 12345;
static float frand(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
}

static double frand_gen(void *ctx)
{
    (void)ctx;
    return frand();
}

/* A float Const [r, c] (c == 0: a vector [r]) of pseudo-random values. */
static void cst(gn_pt_text *b, const char *name, int r, int c)
{
    const int64_t d[2] = {r, c};
    gn_pt_text_const_gen(b, name, "f", c ? 2 : 1, d, "%.4f", frand_gen, NULL);
}

/* Nodes holding a DT_HALF type attr (T, dtype, SrcT, DstT, U), comma separated, in id order. */
static void half_nodes(const gn_graph *g, char *buf, size_t len)
{
    static const char *const keys[] = {"T", "dtype", "DstT", "U"};
    size_t o = 0;
    buf[0] = 0;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            int dt;
            if (gn__attr_get_type(g, id, keys[k], &dt) && dt == DT_HALF) {
                o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", gn__node_name(g, id));
                break;
            }
        }
    }
}

static void expect_half(const gn_graph *g, const char *want)
{
    char buf[4096];
    half_nodes(g, buf, sizeof buf);
    if (strcmp(buf, want) != 0) fail_msg("float16 nodes:\n  got  %s\n  want %s", buf, want);
}

/* Runs both graphs on random feeds (each [4, 8]) and compares the fetches: rel
 * L2 <= 1e-2, the fetches stay float32 (as the original's), float16 did run. */
static void expect_close(const gn_graph *before, const gn_graph *after, const char *const *fn, size_t nf,
                         const char *const *xn, size_t nx)
{
    float data[4][32];
    gn_tensor ft[4];
    const int64_t dims[2] = {4, 8};
    for (size_t i = 0; i < nf; i++) {
        for (int k = 0; k < 32; k++) data[i][k] = frand() * 2.0f;
        ft[i] = gn_pt_view(DT_FLOAT, data[i], sizeof data[i], 2, dims);
    }
    double rel[4];
    assert_true(nx <= 4);
    gn_pt_expect_close(before, after, fn, ft, nf, xn, nx, 1e-2, rel);
    for (size_t i = 0; i < nx; i++)
        if (!(rel[i] > 0)) fail_msg("fetch '%s' is exact: float16 did not run", xn[i]);
}

static void fx_gpu(gn_pt_fx *f, int cc)
{
    gn_pt_fx_init(f, NULL);
    gn_pt_fx_pass(f, "auto_mixed_precision");
    gn_pt_fx_gpu(f, cc);
    f->c.toggle = GN_TOGGLE_ON;
}

/* x -> MatMul(w) -> BiasAdd(b) -> Relu -> MatMul(w2) -> Softmax -> y */
static gn_graph *mlp(void)
{
    gn_pt_text b = {0};
    rng_state = 7;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
    cst(&b, "b", 8, 0);
    cst(&b, "w2", 8, 8);
    gn_pt_text_op(&b, "mm", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "ba", "BiasAdd", "mm,b", "f", NULL);
    gn_pt_text_op(&b, "r", "Relu", "ba", "f", NULL);
    gn_pt_text_op(&b, "mm2", "MatMul", "r,w2", "f", NULL);
    gn_pt_text_op(&b, "s", "Softmax", "mm2", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "s", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b);
    gn_pt_preserve_list(g, "x,y");
    return g;
}

#define MLP_AFTER                                                                                                    \
    "x=Placeholder(); mm=MatMul(x-0-CastToFp16-AutoMixedPrecision, w-0-CastToFp16-AutoMixedPrecision); "            \
    "ba=BiasAdd(mm, b-0-CastToFp16-AutoMixedPrecision); r=Relu(ba); "                                                \
    "mm2=MatMul(r, w2-0-CastToFp16-AutoMixedPrecision); s=Softmax(mm2); y=Identity(s-0-CastToFp32-AutoMixedPrecision); " \
    "x-0-CastToFp16-AutoMixedPrecision=Cast(x); w-0-CastToFp16-AutoMixedPrecision=Const(); "                         \
    "b-0-CastToFp16-AutoMixedPrecision=Const(); w2-0-CastToFp16-AutoMixedPrecision=Const(); "                        \
    "s-0-CastToFp32-AutoMixedPrecision=Cast(s)"
#define MLP_HALF                                                                                                     \
    "mm,ba,r,mm2,s,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"                             \
    "b-0-CastToFp16-AutoMixedPrecision,w2-0-CastToFp16-AutoMixedPrecision"

/* ---- the lists ------------------------------------------------------------------------------- */
static void test_allow_infer_clear(void **state)
{
    (void)state;
    gn_graph *g = mlp(), *before = gn_pt_clone(g);
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, MLP_AFTER);
    expect_half(g, MLP_HALF);
    gn_pt_fx_expect_event(&f, "amp.allow: mm: MatMul 'mm' runs in float16 (allow list)");
    gn_pt_fx_expect_event(&f, "amp.infer: ba: BiasAdd 'ba' runs in float16 (infer list)");
    gn_pt_fx_expect_event(&f, "amp.clear: r: Relu 'r' runs in float16 (clear list)");
    /* Softmax (infer) directly after a float16 MatMul goes float16 too (TensorFlow 2.21's
       AddInferToAllowIfFollowAllow; its fetch 'y' reads a CastToFp32) */
    gn_pt_fx_expect_event(&f, "amp.infer: s: Softmax 's' runs in float16 (infer list, fed by a float16 op)");
    gn_pt_fx_expect_event(&f, "amp.const: w-0-CastToFp16-AutoMixedPrecision: float32 Const 'w' converted to float16");
    gn_pt_fx_expect_event(&f, "amp.cast: converted 5/10 nodes to float16 using 1 cast(s) to float16 (excluding Const and Variable casts); "
                              "2 Cast node(s) in all, 3 constant(s) converted");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_check_valid(g, "mlp");
    /* a second run changes nothing */
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Infer ops directly after an allow op (TensorFlow 2.21's AddInferToAllowIfFollowAllow,
 * which it runs in CUDA mode too): checked against TensorFlow with the same graphs
 * (tools/grappler_gpu_counts.py's virtual GPU). A chain of infer ops after a MatMul goes
 * float16 whole; an infer op behind a clear op does not (clear ops are painted after
 * this step); an infer op with a deny-list input does not. */
static void test_infer_after_allow(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 21;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
    cst(&b, "b", 8, 0);
    /* MatMul -> BiasAdd -> Tanh -> y: all float16, the fetch reads a CastToFp32 */
    gn_pt_text_op(&b, "mm", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "ba", "BiasAdd", "mm,b", "f", NULL);
    gn_pt_text_op(&b, "t", "Tanh", "ba", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "t", "f", NULL);
    /* MatMul -> Relu -> BiasAdd -> y2: the BiasAdd stays float32 */
    gn_pt_text_op(&b, "mm2", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "r2", "Relu", "mm2", "f", NULL);
    gn_pt_text_op(&b, "ba2", "BiasAdd", "r2,b", "f", NULL);
    gn_pt_text_op(&b, "y2", "Identity", "ba2", "f", NULL);
    /* AddV2(MatMul, Exp(x)) -> y3: a deny input keeps the AddV2 float32 */
    gn_pt_text_op(&b, "mm3", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "e3", "Exp", "x", "f", NULL);
    gn_pt_text_op(&b, "a3", "AddV2", "mm3,e3", "f", NULL);
    gn_pt_text_op(&b, "y3", "Identity", "a3", "f", NULL);
    /* AddV2(MatMul, x): float16 (the Placeholder is no deny input) */
    gn_pt_text_op(&b, "mm4", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "a4", "AddV2", "mm4,x", "f", NULL);
    gn_pt_text_op(&b, "y4", "Identity", "a4", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,y,y2,y3,y4");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    expect_half(g, "mm,ba,t,mm2,r2,mm3,mm4,a4,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "b-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.infer: ba: BiasAdd 'ba' runs in float16 (infer list, fed by a float16 op)");
    gn_pt_fx_expect_event(&f, "amp.infer: t: Tanh 't' runs in float16 (infer list, fed by a float16 op)");
    gn_pt_fx_expect_event(&f, "amp.infer: ba2: BiasAdd 'ba2' kept float32: not between float16 ops");
    gn_pt_fx_expect_event(&f, "amp.deny: a3: AddV2 'a3' kept float32: fed by a deny-list op through infer-list ops");
    gn_pt_fx_expect_event(&f, "amp.infer: a4: AddV2 'a4' runs in float16 (infer list, fed by a float16 op)");
    const char *fn[1] = {"x"}, *xn[4] = {"y", "y2", "y3", "y4"};
    expect_close(before, g, fn, 1, xn, 4);
    gn_pt_check_valid(g, "infer after allow");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* AGGRESSIVE gives the same graph (TensorFlow uses the toggle only to enable the pass). */
static void test_aggressive_same(void **state)
{
    (void)state;
    gn_graph *g = mlp();
    gn_pt_fx f;
    fx_gpu(&f, 80);
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, MLP_AFTER);
    expect_half(g, MLP_HALF);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* A deny op poisons the infer/clear ops it feeds (up to the next allow op); the
 * clear op before it, fed by an allow op, still goes float16. */
static void test_deny_propagation(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 11;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
    gn_pt_text_op(&b, "mm", "MatMul", "x,w", "f", NULL);
    gn_pt_text_op(&b, "r", "Relu", "mm", "f", NULL);
    gn_pt_text_op(&b, "e", "Exp", "r", "f", NULL);
    gn_pt_text_op(&b, "t", "Tanh", "e", "f", NULL);
    gn_pt_text_op(&b, "mm2", "MatMul", "t,w", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "mm2", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); "
                         "mm=MatMul(x-0-CastToFp16-AutoMixedPrecision, w-0-CastToFp16-AutoMixedPrecision); r=Relu(mm); "
                         "e=Exp(r-0-CastToFp32-AutoMixedPrecision); t=Tanh(e); "
                         "mm2=MatMul(t-0-CastToFp16-AutoMixedPrecision, w-0-CastToFp16-AutoMixedPrecision); "
                         "y=Identity(mm2-0-CastToFp32-AutoMixedPrecision); x-0-CastToFp16-AutoMixedPrecision=Cast(x); "
                         "w-0-CastToFp16-AutoMixedPrecision=Const(); r-0-CastToFp32-AutoMixedPrecision=Cast(r); "
                         "t-0-CastToFp16-AutoMixedPrecision=Cast(t); mm2-0-CastToFp32-AutoMixedPrecision=Cast(mm2)");
    expect_half(g, "mm,r,mm2,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "t-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.deny: e: Exp 'e' kept float32: deny list");
    gn_pt_fx_expect_event(&f, "amp.deny: t: Tanh 't' kept float32: fed by a deny-list op through infer-list ops");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A node placed on the CPU stays float32 whatever the target: casts around it. */
static void test_cpu_placed_node(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 5;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
    gn_pt_text_op(&b, "mm", "MatMul", "x,w", "f", NULL);
    gn_pt_text_add(&b, "node { name: 'r' op: 'Relu' input: 'mm' device: '/device:CPU:0' attr { key: 'T' value { type: "
               "DT_FLOAT } } }\n");
    gn_pt_text_op(&b, "mm2", "MatMul", "r,w", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "mm2", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    expect_half(g, "mm,mm2,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "r-0-CastToFp16-AutoMixedPrecision");
    gn_pt_expect_dump(g, "x=Placeholder(); "
                         "mm=MatMul(x-0-CastToFp16-AutoMixedPrecision, w-0-CastToFp16-AutoMixedPrecision); "
                         "r=Relu(mm-0-CastToFp32-AutoMixedPrecision)@/device:CPU:0; "
                         "mm2=MatMul(r-0-CastToFp16-AutoMixedPrecision, w-0-CastToFp16-AutoMixedPrecision); "
                         "y=Identity(mm2-0-CastToFp32-AutoMixedPrecision); x-0-CastToFp16-AutoMixedPrecision=Cast(x); "
                         "w-0-CastToFp16-AutoMixedPrecision=Const(); mm-0-CastToFp32-AutoMixedPrecision=Cast(mm); "
                         "r-0-CastToFp16-AutoMixedPrecision=Cast(r)@/device:CPU:0; "
                         "mm2-0-CastToFp32-AutoMixedPrecision=Cast(mm2)");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* An existing Cast to float32 feeding only float16 ops becomes a Cast to float16. */
static void test_existing_cast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 9;
    gn_pt_text_add(&b, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_DOUBLE } } }\n");
    gn_pt_text_add(&b, "node { name: 'c' op: 'Cast' input: 'x' attr { key: 'SrcT' value { type: DT_DOUBLE } } "
               "attr { key: 'DstT' value { type: DT_FLOAT } } }\n");
    cst(&b, "w", 8, 8);
    gn_pt_text_op(&b, "mm", "MatMul", "c,w", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "mm", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b);
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); c=Cast(x); mm=MatMul(c, w-0-CastToFp16-AutoMixedPrecision); "
                         "y=Identity(mm-0-CastToFp32-AutoMixedPrecision); w-0-CastToFp16-AutoMixedPrecision=Const(); "
                         "mm-0-CastToFp32-AutoMixedPrecision=Cast(mm)");
    expect_half(g, "c,mm,w-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* FusedBatchNorm becomes FusedBatchNormV2 (U = float) on the GPU; its x goes float16
 * between two convolutions-to-be (here MatMul feeding a reshaped batch norm is
 * avoided: the conversion alone is checked). */
static void test_batch_norm_v2(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_add(&b, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
               "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
               "node { name: 'bn' op: 'FusedBatchNorm' input: 'x' input: 'p' input: 'p' input: 'p' input: 'p' "
               "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'is_training' value { b: false } } }\n"
               "node { name: 'y' op: 'Identity' input: 'bn' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_graph *g = gn_pt_text_load(&b);
    gn_pt_preserve_list(g, "x,p,y");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); bn=FusedBatchNormV2(x, p, p, p, p); y=Identity(bn)");
    int u = 0;
    assert_true(gn__attr_get_type(g, gn__graph_find(g, "bn"), "U", &u));
    assert_int_equal(u, DT_FLOAT);
    gn_pt_fx_expect_event(&f, "amp.allow: no allow-list ops on the GPU: nothing to do");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* A v1 while loop: x <- tanh(x @ w) three times. The loop state (Enter, Merge,
 * Switch, Identity, NextIteration, Exit: clear list) goes float16 with the
 * MatMul and Tanh between it, NextIteration and Merge agree, the loop counter
 * (int32) is untouched. */
static void test_while_loop(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 3;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
    gn_pt_text_add(&b,
           "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
           "node { name: 'n3' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }\n");
#define ENTER(n, in, T, c)                                                                                           \
    gn_pt_text_add(&b, "node { name: '" n "' op: 'Enter' input: '" in "' attr { key: 'T' value { type: " T " } } "          \
               "attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: " c " } } }\n")
    ENTER("ex", "x", "DT_FLOAT", "false");
    ENTER("ei", "i0", "DT_INT32", "false");
    ENTER("ew", "w", "DT_FLOAT", "true");
    ENTER("elim", "n3", "DT_INT32", "true");
    gn_pt_text_add(&b, "node { name: 'mx' op: 'Merge' input: 'ex' input: 'nx' attr { key: 'T' value { type: DT_FLOAT } } "
               "attr { key: 'N' value { i: 2 } } }\n"
               "node { name: 'mi' op: 'Merge' input: 'ei' input: 'ni' attr { key: 'T' value { type: DT_INT32 } } "
               "attr { key: 'N' value { i: 2 } } }\n"
               "node { name: 'less' op: 'Less' input: 'mi' input: 'elim' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'lc' op: 'LoopCond' input: 'less' }\n"
               "node { name: 'swx' op: 'Switch' input: 'mx' input: 'lc' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'swi' op: 'Switch' input: 'mi' input: 'lc' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'idx' op: 'Identity' input: 'swx:1' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'idi' op: 'Identity' input: 'swi:1' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'mm' op: 'MatMul' input: 'idx' input: 'ew' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 't' op: 'Tanh' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'one' op: 'Const' input: '^idi' attr { key: 'dtype' value { type: DT_INT32 } } "
               "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
               "node { name: 'inc' op: 'AddV2' input: 'idi' input: 'one' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'nx' op: 'NextIteration' input: 't' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'ni' op: 'NextIteration' input: 'inc' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'exx' op: 'Exit' input: 'swx' attr { key: 'T' value { type: DT_FLOAT } } }\n");
#undef ENTER
    gn_pt_text_op(&b, "y", "Identity", "exx", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); i0=Const(); n3=Const(); ex=Enter(x-0-CastToFp16-AutoMixedPrecision); "
                         "ei=Enter(i0); ew=Enter(w-0-CastToFp16-AutoMixedPrecision); elim=Enter(n3); mx=Merge(ex, nx); "
                         "mi=Merge(ei, ni); less=Less(mi, elim); lc=LoopCond(less); swx=Switch(mx, lc); swi=Switch(mi, lc); "
                         "idx=Identity(swx:1); idi=Identity(swi:1); mm=MatMul(idx, ew); t=Tanh(mm); one=Const(^idi); "
                         "inc=AddV2(idi, one); nx=NextIteration(t); ni=NextIteration(inc); exx=Exit(swx); "
                         "y=Identity(exx-0-CastToFp32-AutoMixedPrecision); x-0-CastToFp16-AutoMixedPrecision=Cast(x); "
                         "w-0-CastToFp16-AutoMixedPrecision=Const(); exx-0-CastToFp32-AutoMixedPrecision=Cast(exx)");
    expect_half(g, "ex,ew,mx,swx,idx,mm,t,nx,exx,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.infer: t: Tanh 't' runs in float16 (infer list)");
    gn_pt_fx_expect_event(&f, "amp.clear: nx: NextIteration 'nx' runs in float16 (clear list)");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* TensorList ops in a v1 loop: x is unstacked into a list (TensorListFromTensor)
 * read in the loop (TensorListGetItem through a constant Enter), each row goes
 * through Relu and is written (TensorListSetItem) into a reserved list carried
 * as a loop variable (Enter/Merge/Switch/Identity/NextIteration/Exit), stacked
 * after the loop and fed to a MatMul. The MatMul paints the TensorListStack
 * float16; the writer -> reader links (SetItem -> Stack, FromTensor ->
 * GetItem) carry the colour back through the Relu to the list made from x,
 * and the Reserve takes its cluster's colour: one CastToFp16 (x) and one
 * CastToFp32 (the fetch), every element_dtype half. */
static gn_graph *tensor_list_loop(void)
{
    gn_pt_text b = {0};
    rng_state = 5;
    gn_pt_text_ph(&b, "x", "f", "4,8");
    cst(&b, "w", 8, 8);
#define I32(n, v)                                                                                                    \
    gn_pt_text_add(&b, "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' " \
               "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " v " } } } }\n")
#define TL_ATTRS "attr { key: 'element_dtype' value { type: DT_FLOAT } } "
#define ENTER(n, in, T, c)                                                                                           \
    gn_pt_text_add(&b, "node { name: '" n "' op: 'Enter' input: '" in "' attr { key: 'T' value { type: " T " } } "          \
               "attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: " c " } } }\n")
    gn_pt_text_add(&b, "node { name: 'es' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
               "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 8 } } } }\n");
    I32("n4", "4");
    I32("i0", "0");
    gn_pt_text_add(&b, "node { name: 'fl' op: 'TensorListFromTensor' input: 'x' input: 'es' " TL_ATTRS
               "attr { key: 'shape_type' value { type: DT_INT32 } } }\n"
               "node { name: 'res' op: 'TensorListReserve' input: 'es' input: 'n4' " TL_ATTRS
               "attr { key: 'shape_type' value { type: DT_INT32 } } }\n");
    ENTER("efl", "fl", "DT_VARIANT", "true");
    ENTER("ees", "es", "DT_INT32", "true");
    ENTER("elim", "n4", "DT_INT32", "true");
    ENTER("eres", "res", "DT_VARIANT", "false");
    ENTER("ei", "i0", "DT_INT32", "false");
    gn_pt_text_add(&b, "node { name: 'mres' op: 'Merge' input: 'eres' input: 'nres' attr { key: 'T' value { type: DT_VARIANT } } "
               "attr { key: 'N' value { i: 2 } } }\n"
               "node { name: 'mi' op: 'Merge' input: 'ei' input: 'ni' attr { key: 'T' value { type: DT_INT32 } } "
               "attr { key: 'N' value { i: 2 } } }\n"
               "node { name: 'less' op: 'Less' input: 'mi' input: 'elim' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'lc' op: 'LoopCond' input: 'less' }\n"
               "node { name: 'swres' op: 'Switch' input: 'mres' input: 'lc' attr { key: 'T' value { type: DT_VARIANT } } }\n"
               "node { name: 'swi' op: 'Switch' input: 'mi' input: 'lc' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'idres' op: 'Identity' input: 'swres:1' attr { key: 'T' value { type: DT_VARIANT } } }\n"
               "node { name: 'idi' op: 'Identity' input: 'swi:1' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'get' op: 'TensorListGetItem' input: 'efl' input: 'idi' input: 'ees' " TL_ATTRS "}\n"
               "node { name: 'r' op: 'Relu' input: 'get' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'set' op: 'TensorListSetItem' input: 'idres' input: 'idi' input: 'r' " TL_ATTRS "}\n"
               "node { name: 'one' op: 'Const' input: '^idi' attr { key: 'dtype' value { type: DT_INT32 } } "
               "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
               "node { name: 'inc' op: 'AddV2' input: 'idi' input: 'one' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'nres' op: 'NextIteration' input: 'set' attr { key: 'T' value { type: DT_VARIANT } } }\n"
               "node { name: 'ni' op: 'NextIteration' input: 'inc' attr { key: 'T' value { type: DT_INT32 } } }\n"
               "node { name: 'exres' op: 'Exit' input: 'swres' attr { key: 'T' value { type: DT_VARIANT } } }\n"
               "node { name: 'st' op: 'TensorListStack' input: 'exres' input: 'es' " TL_ATTRS
               "attr { key: 'num_elements' value { i: -1 } } }\n");
#undef ENTER
#undef TL_ATTRS
#undef I32
    gn_pt_text_op(&b, "mm", "MatMul", "st,w", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "mm", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b);
    gn_pt_preserve_list(g, "x,y");
    return g;
}

/* The element_dtype attrs of the TensorList ops, comma separated, in id order. */
static void element_dtypes(const gn_graph *g, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        int dt;
        if (!gn__node_live(g, id) || !gn__attr_get_type(g, id, "element_dtype", &dt)) continue;
        o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", o ? "," : "", gn__node_name(g, id),
                              dt == DT_HALF ? "half" : dt == DT_FLOAT ? "float" : "other");
    }
}

#define TL_DUMP                                                                                                      \
    "x=Placeholder(); es=Const(); n4=Const(); i0=Const(); fl=TensorListFromTensor(x-0-CastToFp16-AutoMixedPrecision, es); " \
    "res=TensorListReserve(es, n4); efl=Enter(fl); ees=Enter(es); elim=Enter(n4); eres=Enter(res); ei=Enter(i0); "  \
    "mres=Merge(eres, nres); mi=Merge(ei, ni); less=Less(mi, elim); lc=LoopCond(less); swres=Switch(mres, lc); "      \
    "swi=Switch(mi, lc); idres=Identity(swres:1); idi=Identity(swi:1); get=TensorListGetItem(efl, idi, ees); "       \
    "r=Relu(get); set=TensorListSetItem(idres, idi, r); one=Const(^idi); inc=AddV2(idi, one); nres=NextIteration(set); " \
    "ni=NextIteration(inc); exres=Exit(swres); st=TensorListStack(exres, es); "                                     \
    "mm=MatMul(st, w-0-CastToFp16-AutoMixedPrecision); y=Identity(mm-0-CastToFp32-AutoMixedPrecision); "             \
    "x-0-CastToFp16-AutoMixedPrecision=Cast(x); w-0-CastToFp16-AutoMixedPrecision=Const(); "                         \
    "mm-0-CastToFp32-AutoMixedPrecision=Cast(mm)"

static void test_tensor_list_loop(void **state)
{
    (void)state;
    gn_graph *g = tensor_list_loop(), *before = gn_pt_clone(g);
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, TL_DUMP);
    expect_half(g, "r,mm,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision");
    char buf[1024];
    element_dtypes(g, buf, sizeof buf);
    assert_string_equal(buf, "fl=half,res=half,get=half,set=half,st=half");
    gn_pt_fx_expect_event(&f, "amp.clear: r: Relu 'r' runs in float16 (clear list)");
    gn_pt_fx_expect_event(&f, "amp.tensor_list: res: TensorListReserve 'res' runs in float16 (its list's cluster)");
    gn_pt_fx_expect_event(&f, "amp.tensor_list: get: TensorListGetItem 'get' runs in float16 (its list's cluster)");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_check_valid(g, "tensor_list_loop");
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* One TensorList op of the cluster kept float32 (amp.keep_float32): the whole
 * cluster stays float32, and so does the Relu between its reader and writer;
 * the Stack's consumer MatMul reads a CastToFp16. */
static void test_tensor_list_unsafe(void **state)
{
    (void)state;
    gn_graph *g = tensor_list_loop(), *before = gn_pt_clone(g);
    gn_pt_fx f;
    fx_gpu(&f, 90);
    snprintf(f.o.amp_keep_float32, sizeof f.o.amp_keep_float32, "set");
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    expect_half(g, "mm,w-0-CastToFp16-AutoMixedPrecision,st-0-CastToFp16-AutoMixedPrecision");
    char buf[1024];
    element_dtypes(g, buf, sizeof buf);
    assert_string_equal(buf, "fl=float,res=float,get=float,set=float,st=float");
    gn_pt_fx_expect_event(&f, "amp.tensor_list: st: TensorListStack 'st' kept float32: its list reaches "
                              "TensorListSetItem 'set'");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A user Cast(half -> float) feeding a float16 op and a float32 one: the
 * float16 op reads the half tensor (no CastToFp16 after the Cast). */
static void test_cast_round_trip(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    rng_state = 21;
    gn_pt_text_add(&b, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_HALF } } }\n"
               "node { name: 'c' op: 'Cast' input: 'x' attr { key: 'SrcT' value { type: DT_HALF } } "
               "attr { key: 'DstT' value { type: DT_FLOAT } } }\n");
    cst(&b, "w", 8, 8);
    gn_pt_text_op(&b, "mm", "MatMul", "c,w", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "mm", "f", NULL);
    gn_pt_text_op(&b, "y2", "Identity", "c", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,y,y2");
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); c=Cast(x); mm=MatMul(x, w-0-CastToFp16-AutoMixedPrecision); "
                         "y=Identity(mm-0-CastToFp32-AutoMixedPrecision); y2=Identity(c); "
                         "w-0-CastToFp16-AutoMixedPrecision=Const(); mm-0-CastToFp32-AutoMixedPrecision=Cast(mm)");
    expect_half(g, "x,mm,w-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.cast: c: 1 consumer(s) of Cast 'c' read its float16 input 'x' instead of a cast back");
    _Float16 xh[32];
    for (int i = 0; i < 32; i++) xh[i] = (_Float16)frand();
    const int64_t dims[2] = {4, 8};
    gn_tensor t = gn_pt_view(DT_HALF, xh, sizeof xh, 2, dims);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "y2"};
    gn_pt_expect_close(before, g, fn, &t, 1, xn, 2, 1e-2, NULL);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- option edits ----------------------------------------------------------------------------- */
static gn_graph *square_graph(void)
{
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "4,8");
    gn_pt_text_op(&b, "sq", "Square", "x", "f", NULL);
    gn_pt_text_op(&b, "y", "Identity", "sq", "f", NULL);
    gn_graph *g = gn_pt_text_load(&b);
    gn_pt_preserve_list(g, "x,y");
    return g;
}

static void test_allowlist_add(void **state)
{
    (void)state;
    gn_graph *g = square_graph(), *before = gn_pt_clone(g);
    gn_pt_fx f;
    fx_gpu(&f, 90);
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_expect_event(&f, "amp.allow: no allow-list ops on the GPU: nothing to do");
    gn_pt_fx_free(&f);
    fx_gpu(&f, 90);
    snprintf(f.o.amp_allowlist_add, sizeof f.o.amp_allowlist_add, "Foo,Square");
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); sq=Square(x-0-CastToFp16-AutoMixedPrecision); "
                         "y=Identity(sq-0-CastToFp32-AutoMixedPrecision); x-0-CastToFp16-AutoMixedPrecision=Cast(x); "
                         "sq-0-CastToFp32-AutoMixedPrecision=Cast(sq)");
    expect_half(g, "sq,x-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.allow: sq: Square 'sq' runs in float16 (allow list)");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_denylist_add_and_keep(void **state)
{
    (void)state;
    /* denylist_add: Relu (clear) stays float32 between the two MatMul */
    gn_graph *g = mlp();
    gn_pt_fx f;
    fx_gpu(&f, 90);
    snprintf(f.o.amp_denylist_add, sizeof f.o.amp_denylist_add, "Relu");
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    /* BiasAdd (infer) is no longer between two float16 ops, but it directly follows one */
    expect_half(g, "mm,ba,mm2,s,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "b-0-CastToFp16-AutoMixedPrecision,w2-0-CastToFp16-AutoMixedPrecision,"
                   "r-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.infer: ba: BiasAdd 'ba' runs in float16 (infer list, fed by a float16 op)");
    gn_pt_fx_expect_event(&f, "amp.deny: r: Relu 'r' kept float32: deny list");
    gn_pt_fx_free(&f);
    gn_graph_free(g);

    /* keep_float32 names the node */
    g = mlp();
    gn_graph *before = gn_pt_clone(g);
    fx_gpu(&f, 90);
    snprintf(f.o.amp_keep_float32, sizeof f.o.amp_keep_float32, "zz,ba");
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    expect_half(g, "mm,r,mm2,s,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "w2-0-CastToFp16-AutoMixedPrecision,ba-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_expect_event(&f, "amp.keep_float32: ba: 'ba' kept float32: named in amp.keep_float32");
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    expect_close(before, g, fn, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);

    /* allowlist_remove: nothing left to paint */
    g = mlp();
    fx_gpu(&f, 90);
    snprintf(f.o.amp_allowlist_remove, sizeof f.o.amp_allowlist_remove, "MatMul");
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_expect_event(&f, "amp.allow: no allow-list ops on the GPU: nothing to do");
    gn_pt_fx_free(&f);

    /* inferlist_remove: BiasAdd is on no list, so it stays float32 */
    fx_gpu(&f, 90);
    snprintf(f.o.amp_inferlist_remove, sizeof f.o.amp_inferlist_remove, "BiasAdd");
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    expect_half(g, "mm,r,mm2,s,x-0-CastToFp16-AutoMixedPrecision,w-0-CastToFp16-AutoMixedPrecision,"
                   "w2-0-CastToFp16-AutoMixedPrecision,ba-0-CastToFp16-AutoMixedPrecision");
    gn_pt_fx_free(&f);
    gn_graph_free(g);

    /* the same op added to two lists is refused */
    g = mlp();
    fx_gpu(&f, 90);
    snprintf(f.o.amp_allowlist_add, sizeof f.o.amp_allowlist_add, "Relu");
    snprintf(f.o.amp_denylist_add, sizeof f.o.amp_denylist_add, "Exp,Relu");
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_expect_event(&f, "amp.target: op 'Relu' is added to both the allow and the deny list");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- the target --------------------------------------------------------------------------------- */
static void test_target_gate(void **state)
{
    (void)state;
    gn_graph *g = mlp();
    char *d0 = gn_pt_dump(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "auto_mixed_precision");
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_expect_event(&f, "amp.target: no GPU in the target (cpu): float16 is only used on GPUs");
    gn_pt_fx_free(&f);
    fx_gpu(&f, 60);
    assert_false(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_fx_expect_event(&f, "amp.target: GPU compute capability 6.0 is below 7.0: no fast float16 (Tensor Cores)");
    gn_pt_fx_free(&f);
    gn_pt_expect_dump(g, d0);
    expect_half(g, "");
    free(d0);
    gn_graph_free(g);
}

/* Through gn_optimize: the meta-optimizer runs the pass only when it is ON or AGGRESSIVE. */
static void test_meta_toggle(void **state)
{
    (void)state;
    static const int32_t toggles[3] = {GN_TOGGLE_DEFAULT, GN_TOGGLE_ON, GN_TOGGLE_AGGRESSIVE};
    for (int i = 0; i < 3; i++) {
        gn_graph *g = mlp();
        gn_options o;
        gn_options_init(&o);
        o.auto_mixed_precision = toggles[i];
        gn_optimize_params p;
        gn_optimize_params_init(&p);
        const char *fetch[1] = {"y"}, *feed[1] = {"x"};
        p.fetches = fetch;
        p.n_fetches = 1;
        p.feeds = feed;
        p.n_feeds = 1;
        gn_pt_target_gpu(&p.target, 90);
        gn_report *r = NULL;
        assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
        char buf[4096];
        half_nodes(g, buf, sizeof buf);
        if (i == 0)
            assert_string_equal(buf, "");
        else if (!strstr(buf, "mm2"))
            fail_msg("toggle %d: float16 nodes %s", toggles[i], buf);
        gn_report_free(r);
        gn_graph_free(g);
    }
}

/* ---- golden models ------------------------------------------------------------------------------ */
typedef struct golden_counts {
    const char *name;
    int casts, half;
} golden_counts;

/* Casts and float16 nodes after auto_mixed_precision alone (ON, gpu:sm_90): exact, as measured. */
static const golden_counts k_counts[] = {
    {"cnn_bn_residual", 12, 43},
    {"mobilenet_v2", 14, 48},
    {"lstm", 2, 8},
    {"lstm_v1", 2, 55},
    {"transformer", 6, 65},
};

static void count_casts(const gn_graph *g, int *casts, int *half, int *allow_f32)
{
    *casts = *half = *allow_f32 = 0;
    static const char *const keys[] = {"T", "dtype", "DstT"};
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        if (strcmp(gn__node_op(g, id), "Cast") == 0) (*casts)++;
        const gn__opdef *d = gn__node_opdef(g, id);
        int t;
        if (d && d->amp == GN__AMP_ALLOW && gn__attr_get_type(g, id, "T", &t) && t == DT_FLOAT) (*allow_f32)++;
        for (size_t k = 0; k < 3; k++) {
            int dt;
            if (gn__attr_get_type(g, id, keys[k], &dt) && dt == DT_HALF) {
                (*half)++;
                break;
            }
        }
    }
}

/* Optimizes golden model m with auto_mixed_precision ON on gpu:sm_90: alone
 * (every other pass off, pruning off) or in the default pipeline; checks
 * validity, that no allow-list op is left in float32, and the outputs on the
 * recorded feeds against the float32 original (rel L2 <= 1e-2). */
static void golden_one(const gn_pt_golden *m, bool alone, int *casts, int *half, double *worst)
{
    gn_graph *orig = NULL;
    gn_tensor ft[4];
    const char *fn[4], *xn[4];
    if (!gn_pt_golden_open(m, &orig, ft, fn, xn, false)) fail_msg("%s: not found", m->name);
    gn_graph *g = gn_pt_clone(orig);
    gn_options opt;
    if (alone) gn_pt_options_alone(&opt);
    else gn_options_init(&opt);
    opt.auto_mixed_precision = GN_TOGGLE_ON;
    opt.fail_on_optimizer_errors = 1;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = xn;
    p.n_fetches = m->nx;
    p.feeds = fn;
    p.n_feeds = m->nf;
    gn_pt_target_gpu(&p.target, 90);
    gn_report *r = NULL;
    if (gn_optimize(g, &opt, &p, &r) != GN_OK) fail_msg("%s: optimize failed", m->name);
    gn_report_free(r);
    gn_pt_check_valid(g, m->name);
    double rel[4];
    gn_pt_expect_close(orig, g, fn, ft, m->nf, xn, m->nx, 1e-2, rel);
    *worst = 0;
    for (size_t k = 0; k < m->nx; k++)
        if (rel[k] > *worst) *worst = rel[k];
    for (size_t k = 0; k < m->nf; k++) gn_tensor_free(&ft[k]);
    int allow_f32;
    count_casts(g, casts, half, &allow_f32);
    if (allow_f32) fail_msg("%s: %d allow-list op(s) left in float32", m->name, allow_f32);
    gn_graph_free(g);
    gn_graph_free(orig);
}

static void test_golden(void **state)
{
    (void)state;
    static gn_pt_golden m[32];
    size_t nm = gn_pt_read_manifest(m, 32);
    assert_true(nm > 0);
    char out[8192];
    size_t o = 0;
    int checked = 0, missing = 0;
    for (size_t i = 0; i < nm; i++) {
        if (strncmp(m[i].graph, "golden/", 7) != 0) continue;
        int casts, half, casts2, half2;
        double worst, worst2;
        golden_one(&m[i], true, &casts, &half, &worst);
        golden_one(&m[i], false, &casts2, &half2, &worst2);
        o += (size_t)snprintf(out + o, sizeof out - o,
                              "    {\"%s\", %d, %d}, /* rel L2 %.2e; default pipeline: %d casts, %d float16, %.2e */\n",
                              m[i].name, casts, half, worst, casts2, half2, worst2);
        bool found = false;
        for (size_t k = 0; k < sizeof k_counts / sizeof k_counts[0]; k++)
            if (strcmp(k_counts[k].name, m[i].name) == 0) {
                found = true;
                if (k_counts[k].casts != casts || k_counts[k].half != half) {
                    printf("%s: %d casts, %d float16 nodes; recorded %d, %d\n", m[i].name, casts, half,
                           k_counts[k].casts, k_counts[k].half);
                    missing++;
                }
            }
        if (!found) missing++;
        checked++;
    }
    printf("auto_mixed_precision on golden models (gpu:sm_90), alone:\n%s", out);
    if (missing) fail_msg("%d model(s) without the recorded counts", missing);
    assert_true(checked > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allow_infer_clear),
        cmocka_unit_test(test_infer_after_allow),
        cmocka_unit_test(test_aggressive_same),
        cmocka_unit_test(test_deny_propagation),
        cmocka_unit_test(test_cpu_placed_node),
        cmocka_unit_test(test_existing_cast),
        cmocka_unit_test(test_batch_norm_v2),
        cmocka_unit_test(test_while_loop),
        cmocka_unit_test(test_tensor_list_loop),
        cmocka_unit_test(test_tensor_list_unsafe),
        cmocka_unit_test(test_cast_round_trip),
        cmocka_unit_test(test_allowlist_add),
        cmocka_unit_test(test_denylist_add_and_keep),
        cmocka_unit_test(test_target_gate),
        cmocka_unit_test(test_meta_toggle),
        cmocka_unit_test(test_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
