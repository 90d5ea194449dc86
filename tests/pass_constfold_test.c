/* Constant folding (src/optimizer/passes/constfold*.c): per pattern a graph
 * before, the exact graph after (names, ops, devices, data inputs in order,
 * control inputs in order, attrs byte for byte), the refusals with their
 * reasons, and a numerical check on the CPU backend (the original graph and
 * the rewritten one on the same feeds); then every corpus model (top level and
 * function bodies, with the meta-optimizer's default preservation), which must
 * stay valid with exact fanouts and not change on a second run; the corpus and
 * golden models the CPU runtime can run, before and after; a function body;
 * and a 10^5-node synthetic graph for time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "opdef/registry.h"
#include "ops/kernel.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_BOOL 10

/* Runs the pass over g (a body when fn is set) and compacts, as the meta-optimizer does. */
static bool run_pass_on(gn_graph *g, const gn_graph *lib, const char *fn, gn_report *r, int toggle)
{
    return gn_pt_run_pass_on(gn__pass_constfold, "constfold", g, lib, fn, r, NULL, toggle);
}

/* ---- helpers -------------------------------------------------------------------------------- */
static bool run_pass(gn_graph *g, gn_report *r) { return run_pass_on(g, g, NULL, r, GN_TOGGLE_DEFAULT); }

/* The common shape of a test: load, preserve the fetches, run with a report,
 * compare with the expected graph, run again (nothing changes), check numbers. */
typedef struct cf_case {
    const char *before, *after;
    const char *fetch[16];
    const char *feed[4];
    gn_tensor feeds[4];
    size_t nx, nf;
    bool no_numbers;     /* the CPU runtime cannot run the original */
} cf_case;

static gn_report *check_case(const cf_case *k)
{
    gn_graph *g = gn_pt_load_text(k->before);
    for (size_t i = 0; i < k->nx; i++) {
        char node[128];
        snprintf(node, sizeof node, "%s", k->fetch[i]);
        node[strcspn(node, ":")] = 0;
        gn_pt_preserve(g, node);
    }
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r));
    gn_pt_expect_graph_strict(g, k->after);
    if (run_pass(g, NULL)) {
        static char d[16384];
        gn_pt_describe(g, d, sizeof d);
        fail_msg("a second run changed the graph:\n%s", d);
    }
    if (!k->no_numbers) gn_pt_expect_same_results(orig, g, k->feed, k->feeds, k->nf, k->fetch, k->nx, 16);
    gn_graph_free(orig);
    gn_graph_free(g);
    return r;
}

/* ---- graph text ----------------------------------------------------------------------------------- */
#define TB "attr { key: 'T' value { type: DT_BOOL } } "
#define PHT(name, dt, shape) \
    "node { name: '" name "' op: 'Placeholder' attr { key: 'dtype' value { type: " dt " } } " \
    "attr { key: 'shape' value { shape { " shape " } } } }\n"
#define NODE(name, op, inputs, attrs) "node { name: '" name "' op: '" op "' " inputs " " attrs "}\n"
#define IN(x) "input: '" x "' "
#define UNARY(name, op, in) NODE(name, op, IN(in), TF)
#define BINARY(name, op, a, b) NODE(name, op, IN(a) IN(b), TF)
/* Const nodes: typed values, or raw tensor_content, with optional inputs (control) */
#define CONSTV(name, dt, shape, vals, inputs) \
    "node { name: '" name "' op: 'Const' " inputs " attr { key: 'dtype' value { type: " dt " } } " \
    "attr { key: 'value' value { tensor { dtype: " dt " tensor_shape { " shape " } " vals " } } } }\n"
#define CF(name, shape, vals) CONSTV(name, "DT_FLOAT", shape, vals, "")
#define CI(name, shape, vals) CONSTV(name, "DT_INT32", shape, vals, "")
#define CONTENT(c) "tensor_content: '" c "'"
#define D1(a) "dim { size: " #a " }"
#define D2(a, b) "dim { size: " #a " } dim { size: " #b " }"
#define D3(a, b, c) "dim { size: " #a " } dim { size: " #b " } dim { size: " #c " }"
#define D4(a, b, c, d) "dim { size: " #a " } dim { size: " #b " } dim { size: " #c " } dim { size: " #d " }"
#define DIM23 D2(2, 3)
/* little-endian float32 bytes */
#define F_1 "\\000\\000\\200?"
#define F_2 "\\000\\000\\000@"
#define F_3 "\\000\\000@@"
#define F_4 "\\000\\000\\200@"
#define F_5 "\\000\\000\\240@"
#define F_6 "\\000\\000\\300@"
#define F_M1 "\\000\\000\\200\\277"

static float X6[6] = {1.5f, -2, 3.25f, 4, -5.5f, 6};
static int64_t DIMS23[2] = {2, 3};

/* ---- constfold.fold ---------------------------------------------------------------------------------- */
/* docs/reference_grappler.md §3.6.4's example: c = Add(2, 3) becomes Const(5)
 * in place; the control inputs of the constant inputs and of the node are kept (Grappler's order). */
static void test_fold(void **state)
{
    (void)state;
    float x = 1.5f;
    cf_case k = {
        .before = NODE("k", "NoOp", "", "") NODE("z", "NoOp", "", "")
            CONSTV("a", "DT_FLOAT", "", "float_val: 2", IN("^k")) CF("b", "", "float_val: 3") PH_SHAPE("x", "")
            NODE("c", "AddV2", IN("a") IN("b") IN("^z"), TF) BINARY("d", "Mul", "x", "c"),
        .after = NODE("k", "NoOp", "", "") NODE("z", "NoOp", "", "") PH_SHAPE("x", "")
            CONSTV("c", "DT_FLOAT", "", CONTENT(F_5), IN("^k") IN("^z")) BINARY("d", "Mul", "x", "c"),
        .fetch = {"d"}, .nx = 1,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, &x, sizeof x, 0, NULL);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.fold: c: folded into a Const");
    gn_pt_expect_report(r, "constfold.drop_unused: removed 2 nodes left without consumers");
    gn_pt_expect_no_report(r, "constfold.fold: d");   /* not a candidate: x is not a constant */
    gn_report_free(r);
}

/* Grappler's IsReallyConstant: a fetched Const is still a constant (its consumers
 * fold; the node itself stays), a fed one is not (a feed replaces its value). */
static void test_fold_fetched_not_fed(void **state)
{
    (void)state;
    const char *before = CF("c", "", "float_val: 2") CF("b", "", "float_val: 3") CF("e", "", "float_val: 2")
        BINARY("d", "AddV2", "c", "b") BINARY("f", "AddV2", "e", "b");
    gn_graph *g = gn_pt_load_text(before);
    const char *keep[] = {"c", "d", "e", "f"};
    for (size_t i = 0; i < 4; i++) gn_pt_preserve(g, keep[i]);
    gn_id e = gn__graph_find(g, "e");
    assert_int_not_equal(e, GN_NONE);
    g->nodes[e].flags |= GN__NODE_FED;
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r));
    gn_pt_expect_graph_strict(g, CF("c", "", "float_val: 2") CF("b", "", "float_val: 3") CF("e", "", "float_val: 2")
                        CONSTV("d", "DT_FLOAT", "", CONTENT(F_5), "") BINARY("f", "AddV2", "e", "b"));
    gn_pt_expect_report(r, "constfold.fold: d: folded into a Const");
    gn_pt_expect_no_report(r, "constfold.fold: f");
    assert_false(run_pass(g, NULL));
    /* e fed with 7: both graphs give f = 10 */
    float seven = 7;
    gn_tensor ft = gn_pt_view(DT_FLOAT, &seven, sizeof seven, 0, NULL);
    const char *fn[1] = {"e"}, *xn[2] = {"d", "f"};
    gn_pt_expect_same_results(orig, g, fn, &ft, 1, xn, 2, 8);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* A node with several outputs: one "ConstantFolding/<node>-folded-<i>" per
 * output, consumers rewired port by port; the original goes when unused. */
static void test_fold_multi_output(void **state)
{
    (void)state;
    float x[2] = {1, -2};
    int64_t d2[1] = {2};
    cf_case k = {
        .before = CI("axis", "", "int_val: 0") CF("v", D1(4), "float_val: 1 float_val: 2 float_val: 3 float_val: 4")
            NODE("s", "Split", IN("axis") IN("v"), TF "attr { key: 'num_split' value { i: 2 } }") PH_SHAPE("x", D1(2))
            BINARY("o1", "AddV2", "x", "s") BINARY("o2", "Mul", "x", "s:1"),
        .after = PH_SHAPE("x", D1(2)) BINARY("o1", "AddV2", "x", "ConstantFolding/s-folded-0")
            BINARY("o2", "Mul", "x", "ConstantFolding/s-folded-1")
            CF("ConstantFolding/s-folded-0", D1(2), CONTENT(F_1 F_2))
            CF("ConstantFolding/s-folded-1", D1(2), CONTENT(F_3 F_4)),
        .fetch = {"o1", "o2"}, .nx = 2,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 1, d2);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.fold: s: folded into 2 Const(s)");
    gn_report_free(r);
}

/* Candidates whose inputs are all constant but that cannot be folded say why;
 * structural exclusions met all over real graphs (stateful ops, control flow)
 * are not reported. */
static void test_fold_refusals(void **state)
{
    (void)state;
    const char *text = CF("c", D1(2), "float_val: 2 float_val: 3") UNARY("l", "BesselI0e", "c")
        CI("shape", D1(1), "int_val: 2")
        NODE("r", "RandomUniform", IN("shape"),
             "attr { key: 'T' value { type: DT_INT32 } } attr { key: 'dtype' value { type: DT_FLOAT } }")
        CF("one", D1(1), "float_val: 1") CI("mult", D1(1), "int_val: 4000000")
        NODE("big", "Tile", IN("one") IN("mult"), TF "attr { key: 'Tmultiples' value { type: DT_INT32 } }")
        CI("axis", "", "int_val: 0")
        NODE("s", "Split", IN("axis") IN("c"), TF "attr { key: 'num_split' value { i: 2 } }")
        BINARY("o", "AddV2", "s", "s:1");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "l");
    gn_pt_preserve(g, "r");
    gn_pt_preserve(g, "big");
    gn_pt_preserve(g, "s");
    gn_pt_preserve(g, "o");
    gn_report *r = gn_pt_new_report();
    run_pass(g, r);
    gn_pt_expect_report(r, "constfold.fold: l: no kernel for BesselI0e");
    gn_pt_expect_no_report(r, "constfold.fold: r:");
    gn_pt_expect_report(r, "constfold.fold: big: output 0 would be 16000000 bytes, larger than its inputs and over 10485760");
    gn_pt_expect_report(r, "constfold.fold: s: preserved node with several outputs");
    /* BesselI0e, RandomUniform, Tile and Split are still there; o was not folded (its inputs are not constants) */
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "l")), "BesselI0e");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "r")), "RandomUniform");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "big")), "Tile");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "s")), "Split");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "o")), "AddV2");
    /* refusals are recorded once, and a second run changes nothing */
    assert_false(run_pass(g, NULL));
    gn_report_free(r);
    gn_graph_free(g);
}

/* Merge with a constant input: constants for its value and its index. */
static void test_fold_merge(void **state)
{
    (void)state;
    float x = 4;
    cf_case k = {
        .before = CF("c", "", "float_val: 2") PH_SHAPE("x", "") PHT("p", "DT_BOOL", "") BINARY("sw", "Switch", "x", "p")
            NODE("m", "Merge", IN("c") IN("sw:1"), TF "attr { key: 'N' value { i: 2 } }")
            UNARY("o1", "Identity", "m") NODE("o2", "Identity", IN("m:1"), TI),
        .after = CF("c", "", "float_val: 2") PH_SHAPE("x", "") PHT("p", "DT_BOOL", "") BINARY("sw", "Switch", "x", "p")
            NODE("m", "Merge", IN("c") IN("sw:1"), TF "attr { key: 'N' value { i: 2 } }")
            CONSTV("o1", "DT_FLOAT", "", CONTENT(F_2), IN("^m"))
            CONSTV("o2", "DT_INT32", "", CONTENT("\\000\\000\\000\\000"), IN("^m")),
        .fetch = {"o1", "o2"}, .nx = 2,
        .feed = {"x", "p"}, .nf = 2,
    };
    /* p false: the other input is dead, so the original Merge forwards c too
     * (with two live inputs TensorFlow takes whichever comes first) */
    bool p = false;
    k.feeds[0] = gn_pt_view(DT_FLOAT, &x, sizeof x, 0, NULL);
    k.feeds[1] = gn_pt_view(DT_BOOL, &p, sizeof p, 0, NULL);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.fold_merge: m: input 0 is a constant: value and index became Consts");
    gn_report_free(r);
}

/* ---- materialization ------------------------------------------------------------------------------------ */
#define SHAPE_ATTRS "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'out_type' value { type: DT_INT32 } }"
/* Shape/Size/Rank of a known shape become Consts in place; the data input becomes
 * a control input. */
static void test_materialize_shape(void **state)
{
    (void)state;
    float x[128] = {0};
    int64_t dx[2] = {8, 16};
    cf_case k = {
        .before = PH_SHAPE("x", D2(8, 16)) NODE("s", "Shape", IN("x"), SHAPE_ATTRS) NODE("n", "Size", IN("x"), SHAPE_ATTRS)
            NODE("r", "Rank", IN("x"), TF),
        .after = PH_SHAPE("x", D2(8, 16)) CONSTV("s", "DT_INT32", D1(2), CONTENT("\\010\\000\\000\\000\\020\\000\\000\\000"), IN("^x"))
            CONSTV("n", "DT_INT32", "", CONTENT("\\200\\000\\000\\000"), IN("^x"))
            CONSTV("r", "DT_INT32", "", CONTENT("\\002\\000\\000\\000"), IN("^x")),
        .fetch = {"s", "n", "r"}, .nx = 3,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 2, dx);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.materialize_shape: s: Shape of a known shape became a Const");
    gn_pt_expect_report(r, "constfold.materialize_shape: n: Size of a known shape became a Const");
    gn_pt_expect_report(r, "constfold.materialize_shape: r: Rank of a known shape became a Const");
    gn_report_free(r);
}

/* ShapeN: a "-matshapes-<port>" Const per known port (here folded on into the
 * consumer, which is an Identity); the unknown port stays. */
static void test_materialize_shape_n(void **state)
{
    (void)state;
    float x[6] = {0}, y[20] = {0};
    int64_t dy[2] = {5, 4};
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) PH_SHAPE("y", D2(-1, 4))
            NODE("sn", "ShapeN", IN("x") IN("y"),
                 TF "attr { key: 'N' value { i: 2 } } attr { key: 'out_type' value { type: DT_INT32 } }")
            NODE("a", "Identity", IN("sn"), TI) NODE("b", "Identity", IN("sn:1"), TI),
        .after = PH_SHAPE("x", DIM23) PH_SHAPE("y", D2(-1, 4))
            NODE("sn", "ShapeN", IN("x") IN("y"),
                 TF "attr { key: 'N' value { i: 2 } } attr { key: 'out_type' value { type: DT_INT32 } }")
            CONSTV("a", "DT_INT32", D1(2), CONTENT("\\002\\000\\000\\000\\003\\000\\000\\000"), IN("^sn"))
            NODE("b", "Identity", IN("sn:1"), TI),
        .fetch = {"a", "b"}, .nx = 2,
        .feed = {"x", "y"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_FLOAT, y, sizeof y, 2, dy);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.materialize_shape_n: sn: 1 output(s) of a known shape became Consts");
    gn_report_free(r);
}

/* BroadcastGradientArgs of [2,3] and [3]: x reduces nothing, y reduces dim 0.
 * (The CPU runtime has no BroadcastGradientArgs kernel: no numerical check; the
 * values are TensorFlow's BCast.) */
static void test_materialize_bcast(void **state)
{
    (void)state;
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) PH_SHAPE("y", D1(3)) NODE("sx", "Shape", IN("x"), SHAPE_ATTRS)
            NODE("sy", "Shape", IN("y"), SHAPE_ATTRS) NODE("bga", "BroadcastGradientArgs", IN("sx") IN("sy"), TI)
            NODE("r0", "Identity", IN("bga"), TI) NODE("r1", "Identity", IN("bga:1"), TI),
        .after = PH_SHAPE("x", DIM23) PH_SHAPE("y", D1(3))
            CONSTV("sx", "DT_INT32", D1(2), CONTENT("\\002\\000\\000\\000\\003\\000\\000\\000"), IN("^x"))
            CONSTV("sy", "DT_INT32", D1(1), CONTENT("\\003\\000\\000\\000"), IN("^y"))
            NODE("bga", "BroadcastGradientArgs", IN("sx") IN("sy"), TI)
            CONSTV("r0", "DT_INT32", D1(0), "", IN("^bga"))
            CONSTV("r1", "DT_INT32", D1(1), CONTENT("\\000\\000\\000\\000"), IN("^bga")),
        .fetch = {"r0", "r1"}, .nx = 2,
        .no_numbers = true,
    };
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.materialize_broadcast_grad_args: bga: reduction indices of known shapes became Consts");
    gn_pt_expect_report(r, "constfold.fold: bga: no kernel for BroadcastGradientArgs");
    gn_report_free(r);
}

/* A full reduction with indices fed at run time gets constant indices. */
static void test_materialize_reduction_indices(void **state)
{
    (void)state;
    int32_t idx[2] = {1, 0};
    int64_t d2[1] = {2};
#define SUM_ATTRS TF "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: false } }"
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) PHT("idx", "DT_INT32", D1(2)) NODE("s", "Sum", IN("x") IN("idx"), SUM_ATTRS),
        .after = PH_SHAPE("x", DIM23) PHT("idx", "DT_INT32", D1(2))
            NODE("s", "Sum", IN("x") IN("ConstantFolding/s-reduction_indices"), SUM_ATTRS)
            CONSTV("ConstantFolding/s-reduction_indices", "DT_INT32", D1(2),
                   CONTENT("\\000\\000\\000\\000\\001\\000\\000\\000"), IN("^idx")),
        .fetch = {"s"}, .nx = 1,
        .feed = {"x", "idx"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_INT32, idx, sizeof idx, 1, d2);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.materialize_reduction_indices: s: full reduction over a rank-2 input: constant indices");
    gn_report_free(r);
}

/* Fill of constants and ZerosLike of a known shape: compressed Consts (one value
 * and the shape); then Mul by the zeros folds to zeros. */
static void test_materialize_fill(void **state)
{
    (void)state;
    cf_case k = {
        .before = CI("d", D1(2), "int_val: 2 int_val: 3") CF("v", "", "float_val: 1.5")
            NODE("f", "Fill", IN("d") IN("v"), TF "attr { key: 'index_type' value { type: DT_INT32 } }")
            PH_SHAPE("x", DIM23) UNARY("z", "ZerosLike", "x") BINARY("o", "AddV2", "f", "x"),
        .after = CI("d", D1(2), "int_val: 2 int_val: 3") CF("v", "", "float_val: 1.5")
            CONSTV("f", "DT_FLOAT", DIM23, "float_val: 1.5", IN("^d") IN("^v")) PH_SHAPE("x", DIM23)
            CONSTV("z", "DT_FLOAT", DIM23, "float_val: 0", IN("^x")) BINARY("o", "AddV2", "f", "x"),
        .fetch = {"o", "z"}, .nx = 2,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.materialize_fill: f: Fill of a known shape became a compressed Const");
    gn_pt_expect_report(r, "constfold.materialize_fill: z: ZerosLike of a known shape became a Const");
    gn_report_free(r);
}

/* ---- no-op shape ops -> Identity ---------------------------------------------------------------------------- */
/* Split(1), Transpose, ReverseV2, Slice, StridedSlice, Tile, Pad, Squeeze that
 * do nothing become Identity of their data input; the other inputs become
 * control inputs; attrs reduced to T. */
static void test_remove_noops(void **state)
{
    (void)state;
#define SS_MASKS "attr { key: 'begin_mask' value { i: 0 } } attr { key: 'end_mask' value { i: 0 } } " \
    "attr { key: 'ellipsis_mask' value { i: 0 } } attr { key: 'new_axis_mask' value { i: 0 } } " \
    "attr { key: 'shrink_axis_mask' value { i: 0 } }"
    float a[6], b[6];
    for (int i = 0; i < 6; i++) a[i] = (float)i - 2.5f, b[i] = (float)(i * i) * 0.5f;
    int64_t da[4] = {2, 1, 1, 3}, db[2] = {1, 6};
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) PH_SHAPE("a", D4(2, 1, 1, 3)) PH_SHAPE("b", D2(1, 6)) CI("axis", "", "int_val: 0")
            NODE("split", "Split", IN("axis") IN("x"), TF "attr { key: 'num_split' value { i: 1 } }")
            CI("perm", D1(4), "int_val: 0 int_val: 2 int_val: 1 int_val: 3")
            NODE("tr", "Transpose", IN("a") IN("perm"), TF "attr { key: 'Tperm' value { type: DT_INT32 } }")
            CI("raxis", D1(1), "int_val: 0")
            NODE("rev", "ReverseV2", IN("b") IN("raxis"), TF "attr { key: 'Tidx' value { type: DT_INT32 } }")
            CI("begin", D1(2), "int_val: 0 int_val: 0") CI("size", D1(2), "int_val: -1 int_val: 3")
            NODE("sl", "Slice", IN("x") IN("begin") IN("size"), TF "attr { key: 'Index' value { type: DT_INT32 } }")
            CI("end", D1(2), "int_val: 2 int_val: 3") CI("strides", D1(2), "int_val: 1 int_val: 1")
            NODE("ss", "StridedSlice", IN("x") IN("begin") IN("end") IN("strides"),
                 TF "attr { key: 'Index' value { type: DT_INT32 } } " SS_MASKS)
            CI("mult", D1(2), "int_val: 1 int_val: 1")
            NODE("tile", "Tile", IN("x") IN("mult"), TF "attr { key: 'Tmultiples' value { type: DT_INT32 } }")
            CI("pads", D2(2, 2), "int_val: 0")
            NODE("pad", "Pad", IN("x") IN("pads"), TF "attr { key: 'Tpaddings' value { type: DT_INT32 } }")
            UNARY("sq", "Squeeze", "x"),
        .after = PH_SHAPE("x", DIM23) PH_SHAPE("a", D4(2, 1, 1, 3)) PH_SHAPE("b", D2(1, 6)) CI("axis", "", "int_val: 0")
            NODE("split", "Identity", IN("x") IN("^axis"), TF)
            CI("perm", D1(4), "int_val: 0 int_val: 2 int_val: 1 int_val: 3")
            NODE("tr", "Identity", IN("a") IN("^perm"), TF)
            CI("raxis", D1(1), "int_val: 0")
            NODE("rev", "Identity", IN("b") IN("^raxis"), TF)
            CI("begin", D1(2), "int_val: 0 int_val: 0") CI("size", D1(2), "int_val: -1 int_val: 3")
            NODE("sl", "Identity", IN("x") IN("^begin") IN("^size"), TF)
            CI("end", D1(2), "int_val: 2 int_val: 3") CI("strides", D1(2), "int_val: 1 int_val: 1")
            NODE("ss", "Identity", IN("x") IN("^begin") IN("^end") IN("^strides"), TF)
            CI("mult", D1(2), "int_val: 1 int_val: 1")
            NODE("tile", "Identity", IN("x") IN("^mult"), TF)
            CI("pads", D2(2, 2), "int_val: 0")
            NODE("pad", "Identity", IN("x") IN("^pads"), TF)
            UNARY("sq", "Identity", "x"),
        .fetch = {"split", "tr", "rev", "sl", "ss", "tile", "pad", "sq"}, .nx = 8,
        .feed = {"x", "a", "b"}, .nf = 3,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_FLOAT, a, sizeof a, 4, da);
    k.feeds[2] = gn_pt_view(DT_FLOAT, b, sizeof b, 2, db);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.remove_split: split: split into one piece");
    gn_pt_expect_report(r, "constfold.remove_transpose: tr: permutation moves no dimension larger than 1");
    gn_pt_expect_report(r, "constfold.remove_reverse: rev: reversed dimensions all have size 1");
    gn_pt_expect_report(r, "constfold.remove_slice: sl: slice of the whole input");
    gn_pt_expect_report(r, "constfold.remove_strided_slice: ss: strided slice of the whole input");
    gn_pt_expect_report(r, "constfold.remove_tile: tile: all multiples are 1");
    gn_pt_expect_report(r, "constfold.remove_pad: pad: all paddings are 0");
    gn_pt_expect_report(r, "constfold.remove_squeeze: sq: no dimension of size 1");
    gn_report_free(r);
}

/* ... and the same ops that do something stay. */
static void test_remove_noops_negative(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM23) CI("perm", D1(2), "int_val: 1 int_val: 0")
        NODE("tr", "Transpose", IN("x") IN("perm"), TF "attr { key: 'Tperm' value { type: DT_INT32 } }")
        CI("begin", D1(2), "int_val: 0 int_val: 1") CI("size", D1(2), "int_val: -1 int_val: 2")
        NODE("sl", "Slice", IN("x") IN("begin") IN("size"), TF "attr { key: 'Index' value { type: DT_INT32 } }")
        CI("mult", D1(2), "int_val: 1 int_val: 2")
        NODE("tile", "Tile", IN("x") IN("mult"), TF "attr { key: 'Tmultiples' value { type: DT_INT32 } }")
        PH_SHAPE("y", D3(2, 1, 3)) UNARY("sq", "Squeeze", "y") PH_SHAPE("u", "dim { size: -1 } dim { size: 3 }")
        UNARY("squ", "Squeeze", "u");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "tr");
    gn_pt_preserve(g, "sl");
    gn_pt_preserve(g, "tile");
    gn_pt_preserve(g, "sq");
    gn_pt_preserve(g, "squ");
    assert_false(run_pass(g, NULL));
    gn_pt_expect_graph_strict(g, text);
    gn_graph_free(g);
}

/* ---- Pack of one input -> ExpandDims ---------------------------------------------------------------------- */
static void test_pack(void **state)
{
    (void)state;
    cf_case k = {
        .before = PH_SHAPE("x", DIM23)
            NODE("p", "Pack", IN("x"), TF "attr { key: 'N' value { i: 1 } } attr { key: 'axis' value { i: 1 } }"),
        .after = PH_SHAPE("x", DIM23)
            NODE("p", "ExpandDims", IN("x") IN("ConstantFolding/p_const_axis"),
                 TF "attr { key: 'Tdim' value { type: DT_INT32 } }")
            CONSTV("ConstantFolding/p_const_axis", "DT_INT32", "", CONTENT("\\001\\000\\000\\000"), IN("^x")),
        .fetch = {"p"}, .nx = 1,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.pack_to_expand_dims: p: Pack of one input became ExpandDims (axis 1)");
    gn_report_free(r);
    /* a fed input (preserved) is left alone, and says so */
    gn_graph *g = gn_pt_load_text(k.before);
    gn_pt_preserve(g, "p");
    gn_pt_preserve(g, "x");
    r = gn_pt_new_report();
    assert_false(run_pass(g, r));
    gn_pt_expect_report(r, "constfold.pack_to_expand_dims: p: the input may be fed");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- constants into a loop frame ---------------------------------------------------------------------------- */
static void test_enter(void **state)
{
    (void)state;
#define ENTER_ATTRS(c) TF "attr { key: 'frame_name' value { s: 'loop' } } attr { key: 'is_constant' value { b: " c " } }"
    cf_case k = {
        .before = CF("c", "", "float_val: 1") PH_SHAPE("x", "") NODE("e", "Enter", IN("c"), ENTER_ATTRS("true"))
            NODE("e2", "Enter", IN("x"), ENTER_ATTRS("false")) BINARY("o", "AddV2", "e", "e2"),
        .after = CF("c", "", "float_val: 1") PH_SHAPE("x", "") NODE("e", "Enter", IN("c"), ENTER_ATTRS("true"))
            NODE("e2", "Enter", IN("x"), ENTER_ATTRS("false")) BINARY("o", "AddV2", "ConstantFolding/c_enter", "e2")
            CONSTV("ConstantFolding/c_enter", "DT_FLOAT", "", "float_val: 1", IN("^e")),
        .fetch = {"o"}, .nx = 1,
        .no_numbers = true, /* a frame without a loop around it */
    };
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.move_constants_past_enter: e: consumers read a copy of constant 'c' in the frame");
    gn_report_free(r);
}

/* ---- Switch(p, p) ---------------------------------------------------------------------------------------------- */
static void test_switch(void **state)
{
    (void)state;
    bool p = true;
    cf_case k = {
        .before = PHT("p", "DT_BOOL", "") NODE("sw", "Switch", IN("p") IN("p"), TB)
            NODE("f", "Identity", IN("sw"), TB) NODE("t", "Identity", IN("sw:1"), TB)
            NODE("m", "Merge", IN("f") IN("t"), TB "attr { key: 'N' value { i: 2 } }"),
        .after = PHT("p", "DT_BOOL", "") NODE("sw", "Switch", IN("p") IN("p"), TB)
            CONSTV("f", "DT_BOOL", "", CONTENT("\\000"), IN("^ConstantFoldingCtrl/sw_0"))
            CONSTV("t", "DT_BOOL", "", CONTENT("\\001"), IN("^ConstantFoldingCtrl/sw_1"))
            NODE("m", "Merge", IN("f") IN("t"), TB "attr { key: 'N' value { i: 2 } }")
            NODE("ConstantFoldingCtrl/sw_0", "Identity", IN("sw"), TB)
            NODE("ConstantFoldingCtrl/sw_1", "Identity", IN("sw:1"), TB),
        .fetch = {"m"}, .nx = 1,
        .feed = {"p"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_BOOL, &p, sizeof p, 0, NULL);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.switch_same_predicate: sw: Switch on its own data: consumers read false/true constants");
    gn_report_free(r);
}

/* ---- reductions and Reshape ----------------------------------------------------------------------------------- */
static void test_reduction_reshape(void **state)
{
    (void)state;
#define RED(keep) TF "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: " keep " } }"
    float y = 7;
    int64_t dx[3] = {2, 1, 3}, dy[2] = {1, 1};
    cf_case k = {
        .before = PH_SHAPE("x", D3(2, 1, 3)) CI("ax1", D1(1), "int_val: 1") NODE("r1", "Sum", IN("x") IN("ax1"), RED("true"))
            PH_SHAPE("y", D2(1, 1)) CI("ax2", D1(2), "int_val: 0 int_val: 1") NODE("r2", "Mean", IN("y") IN("ax2"), RED("false"))
            CI("none", D1(0), "") NODE("r3", "Max", IN("x") IN("none"), RED("false"))
            CI("shape", D1(3), "int_val: 2 int_val: -1 int_val: 3")
            NODE("rs", "Reshape", IN("x") IN("shape"), TF "attr { key: 'Tshape' value { type: DT_INT32 } }"),
        .after = PH_SHAPE("x", D3(2, 1, 3)) CI("ax1", D1(1), "int_val: 1") NODE("r1", "Identity", IN("x") IN("^ax1"), TF)
            PH_SHAPE("y", D2(1, 1)) CI("ax2", D1(2), "int_val: 0 int_val: 1")
            NODE("r2", "Squeeze", IN("y") IN("^ax2"), TF "attr { key: 'squeeze_dims' value { list { i: 0 i: 1 } } }")
            CI("none", D1(0), "") NODE("r3", "Identity", IN("x") IN("^none"), TF)
            CI("shape", D1(3), "int_val: 2 int_val: -1 int_val: 3")
            NODE("rs", "Identity", IN("x") IN("^shape"), TF),
        .fetch = {"r1", "r2", "r3", "rs"}, .nx = 4,
        .feed = {"x", "y"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 3, dx);
    k.feeds[1] = gn_pt_view(DT_FLOAT, &y, sizeof y, 2, dy);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.simplify_reduction: r1: reduced dimensions all have size 1 (keep_dims)");
    gn_pt_expect_report(r, "constfold.simplify_reduction: r2: reduction of one element became Squeeze");
    gn_pt_expect_report(r, "constfold.simplify_reduction: r3: reduction over no dimension");
    gn_pt_expect_report(r, "constfold.remove_reshape: rs: reshape to the input's own shape");
    gn_report_free(r);
}

/* ---- arithmetic with zeros and ones ----------------------------------------------------------------------------- */
static void test_arithmetic(void **state)
{
    (void)state;
    float x3[3] = {0.5f, -4, 2}, q[2] = {3, -7};
    int64_t dq[2] = {2, 1};
    bool pb[6] = {true, false, false, true, false, false};
    int64_t d3[1] = {3};
#define ONES3 CF("ones", D1(3), "float_val: 1")
#define ZEROS3 CF("zeros", D1(3), "float_val: 0")
#define ZEROS23 CF("zeros23", DIM23, "float_val: 0")
#define ONES23 CF("ones23", DIM23, "float_val: 1")
#define HEAD PH_SHAPE("x", DIM23) PH_SHAPE("x3", D1(3)) PH_SHAPE("xq", "dim { size: -1 } dim { size: 1 }") PHT("pb", "DT_BOOL", DIM23) \
    ONES3 ZEROS3 ZEROS23 ONES23 CONSTV("true23", "DT_BOOL", DIM23, "bool_val: true", "") CF("ones13", D2(1, 3), "float_val: 1")
    cf_case k = {
        .before = HEAD BINARY("m1", "Mul", "x", "ones") BINARY("m2", "Mul", "ones", "x")
            BINARY("a1", "AddV2", "x", "zeros") BINARY("a2", "AddV2", "zeros", "x") BINARY("s1", "Sub", "x", "zeros")
            BINARY("s2", "Sub", "zeros", "x") BINARY("d1", "RealDiv", "x", "ones") BINARY("d2", "RealDiv", "ones", "x")
            BINARY("z1", "Mul", "x", "zeros23") BINARY("b1", "Mul", "x3", "ones23") BINARY("mq", "Mul", "xq", "ones13")
            NODE("lor", "LogicalOr", IN("pb") IN("true23"), ""),
        .after = HEAD NODE("m1", "Identity", IN("x") IN("^ones"), TF) NODE("m2", "Identity", IN("x") IN("^ones"), TF)
            NODE("a1", "Identity", IN("x") IN("^zeros"), TF) NODE("a2", "Identity", IN("x") IN("^zeros"), TF)
            NODE("s1", "Identity", IN("x") IN("^zeros"), TF) NODE("s2", "Neg", IN("x") IN("^zeros"), TF)
            NODE("d1", "Identity", IN("x") IN("^ones"), TF) NODE("d2", "Reciprocal", IN("x") IN("^ones"), TF)
            CONSTV("z1", "DT_FLOAT", DIM23, "float_val: 0", IN("^x") IN("^zeros23"))
            NODE("b1", "BroadcastTo", IN("x3") IN("ConstantFolding/b1-broadcastto_shape-0") IN("^ones23"),
                 TF "attr { key: 'Tidx' value { type: DT_INT32 } }")
            BINARY("mq", "Mul", "xq", "ones13")
            CONSTV("lor", "DT_BOOL", DIM23, "bool_val: true", IN("^pb") IN("^true23"))
            CONSTV("ConstantFolding/b1-broadcastto_shape-0", "DT_INT32", D1(2),
                   CONTENT("\\002\\000\\000\\000\\003\\000\\000\\000"), IN("^ones23")),
        .fetch = {"m1", "m2", "a1", "a2", "s1", "s2", "d1", "d2", "z1", "b1", "mq", "lor"}, .nx = 12,
        .feed = {"x", "x3", "xq", "pb"}, .nf = 4,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_FLOAT, x3, sizeof x3, 1, d3);
    k.feeds[2] = gn_pt_view(DT_FLOAT, q, sizeof q, 2, dq);
    k.feeds[3] = gn_pt_view(DT_BOOL, pb, sizeof pb, 2, DIMS23);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.mul_by_one: m1: x*1 is x");
    gn_pt_expect_report(r, "constfold.mul_by_one: m2: 1*y is y");
    gn_pt_expect_report(r, "constfold.add_zero: a1: x+0 is x");
    gn_pt_expect_report(r, "constfold.add_zero: a2: 0+y is y");
    gn_pt_expect_report(r, "constfold.add_zero: s1: x-0 is x");
    gn_pt_expect_report(r, "constfold.sub_from_zero: s2: 0-y became Neg(y)");
    gn_pt_expect_report(r, "constfold.div_by_one: d1: x/1 is x");
    gn_pt_expect_report(r, "constfold.one_div: d2: 1/y became Reciprocal(y)");
    gn_pt_expect_report(r, "constfold.mul_by_zero: z1: a product with zeros is zeros");
    gn_pt_expect_report(r, "constfold.mul_by_one: b1: x*1 is x (BroadcastTo)");
    gn_pt_expect_report(r, "constfold.mul_by_one: mq: x [?,1] is not known to have the output shape [?,3]");
    gn_pt_expect_report(r, "constfold.logical_or_true: lor: x OR true is true");
    gn_report_free(r);
}

/* Division by a constant becomes multiplication by its (folded) reciprocal. */
static void test_div_to_reciprocal(void **state)
{
    (void)state;
    float x[3] = {1, -3, 9};
    int64_t d3[1] = {3};
    cf_case k = {
        .before = PH_SHAPE("x", D1(3)) CF("c", D1(3), "float_val: 2 float_val: 4 float_val: 8") BINARY("d", "RealDiv", "x", "c"),
        .after = PH_SHAPE("x", D1(3)) BINARY("d", "Mul", "x", "ConstantFolding/d_recip")
            CF("ConstantFolding/d_recip", D1(3), CONTENT("\\000\\000\\000?\\000\\000\\200>\\000\\000\\000>")),
        .fetch = {"d"}, .nx = 1,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 1, d3);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.div_to_reciprocal_mul: d: x/c became x*Reciprocal(c)");
    gn_pt_expect_report(r, "constfold.fold: ConstantFolding/d_recip: folded into a Const");
    gn_report_free(r);
}

/* ---- constant push-down ------------------------------------------------------------------------------------------- */
/* Add(2, Add(x, 3)) -> Add(x, Add(2, 3)) -> Add(x, 5); Sub(2, Add(x, 3)) -> Sub(Sub(2, 3), x). */
static void test_push_down(void **state)
{
    (void)state;
    float x = 1.5f;
    cf_case k = {
        .before = PH_SHAPE("x", "") CF("c1", "", "float_val: 2") CF("c2", "", "float_val: 3") BINARY("q", "AddV2", "x", "c2")
            BINARY("p", "AddV2", "c1", "q") CF("c1b", "", "float_val: 2") CF("c2b", "", "float_val: 3")
            BINARY("q2", "AddV2", "x", "c2b") BINARY("p2", "Sub", "c1b", "q2"),
        .after = PH_SHAPE("x", "") CF("q", "", CONTENT(F_5)) BINARY("p", "AddV2", "x", "q")
            CF("q2", "", CONTENT(F_M1)) BINARY("p2", "Sub", "q2", "x"),
        .fetch = {"p", "p2"}, .nx = 2,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, &x, sizeof x, 0, NULL);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.constant_push_down: p: constant 'c1' moved down into 'q'");
    gn_pt_expect_report(r, "constfold.constant_push_down: p2: constant 'c1b' moved down into 'q2'");
    gn_report_free(r);
}

/* Mul(Conv2D(x, w), c) -> Conv2D(x, Mul(w, c)) with the multiplication's name. */
static void test_mul_conv(void **state)
{
    (void)state;
#define CONV_ATTRS TF "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } " \
    "attr { key: 'padding' value { s: 'VALID' } } attr { key: 'data_format' value { s: 'NHWC' } }"
    float x[32];
    for (int i = 0; i < 32; i++) x[i] = (float)(i % 7) - 3;
    int64_t dx[4] = {1, 4, 4, 2};
    cf_case k = {
        .before = PH_SHAPE("x", D4(1, 4, 4, 2))
            CF("w", D4(1, 1, 2, 3), "float_val: 1 float_val: 2 float_val: 3 float_val: 4 float_val: 5 float_val: 6")
            NODE("conv", "Conv2D", IN("x") IN("w"), CONV_ATTRS) CF("c", D1(3), "float_val: 2 float_val: 3 float_val: 4")
            BINARY("m", "Mul", "conv", "c"),
        .after = PH_SHAPE("x", D4(1, 4, 4, 2)) NODE("m", "Conv2D", IN("x") IN("conv/merged_input"), CONV_ATTRS)
            CF("conv/merged_input", D4(1, 1, 2, 3),
               "float_val: 2 float_val: 6 float_val: 12 float_val: 8 float_val: 15 float_val: 24"),
        .fetch = {"m"}, .nx = 1,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 4, dx);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.mul_conv_push_down: m: the constant factor moved onto the filter ('conv/merged_input')");
    gn_report_free(r);
}

/* Consumers of IdentityN outputs that are constants read the constants. */
static void test_identity_n(void **state)
{
    (void)state;
#define IDN_T "attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT } } }"
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) CF("c", "", "float_val: 2") NODE("idn", "IdentityN", IN("x") IN("c"), IDN_T)
            BINARY("o", "AddV2", "idn", "idn:1"),
        .after = PH_SHAPE("x", DIM23) CF("c", "", "float_val: 2") NODE("idn", "IdentityN", IN("x") IN("c"), IDN_T)
            NODE("o", "AddV2", IN("idn") IN("c") IN("^idn"), TF),
        .fetch = {"o"}, .nx = 1,
        .feed = {"x"}, .nf = 1,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.identity_n_constants: idn: 1 consumer input(s) read the constants directly");
    gn_report_free(r);
}

/* AddN(c1, x, c2, y) -> AddN(c1+c2, x, y) */
static void test_partial_addn(void **state)
{
    (void)state;
    float x[2] = {1, 2}, y[2] = {-5, 0.5f};
    int64_t d2[1] = {2};
    cf_case k = {
        .before = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2)) CF("c1", D1(2), "float_val: 1 float_val: 2")
            CF("c2", D1(2), "float_val: 3 float_val: 4")
            NODE("s", "AddN", IN("c1") IN("x") IN("c2") IN("y"), TF "attr { key: 'N' value { i: 4 } }"),
        .after = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2))
            NODE("s", "AddN", IN("ConstantFolding/s_partial_split_2") IN("x") IN("y"), TF "attr { key: 'N' value { i: 3 } }")
            CF("ConstantFolding/s_partial_split_2", D1(2), CONTENT(F_4 F_6)),
        .fetch = {"s"}, .nx = 1,
        .feed = {"x", "y"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 1, d2);
    k.feeds[1] = gn_pt_view(DT_FLOAT, y, sizeof y, 1, d2);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.partial_addn: s: 2 constant inputs summed in 'ConstantFolding/s_partial_split_2'");
    gn_report_free(r);
}

/* ConcatV2(x, c1, c2, y, axis): the run c1, c2 is concatenated apart (and folds). */
static void test_partial_concat(void **state)
{
    (void)state;
    float x[2] = {1, 2}, y[2] = {-5, 0.5f};
    int64_t d2[1] = {2};
#define CAT(n) TF "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'N' value { i: " #n " } }"
    cf_case k = {
        .before = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2)) CF("c1", D1(2), "float_val: 1 float_val: 2")
            CF("c2", D1(2), "float_val: 3 float_val: 4") CI("axis", "", "int_val: 0")
            NODE("cc", "ConcatV2", IN("x") IN("c1") IN("c2") IN("y") IN("axis"), CAT(4)),
        .after = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2)) CI("axis", "", "int_val: 0")
            NODE("cc", "ConcatV2", IN("x") IN("ConstantFolding/cc_partial_split_1") IN("y") IN("axis"), CAT(3))
            CF("ConstantFolding/cc_partial_split_1", D1(4), CONTENT(F_1 F_2 F_3 F_4)),
        .fetch = {"cc"}, .nx = 1,
        .feed = {"x", "y"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 1, d2);
    k.feeds[1] = gn_pt_view(DT_FLOAT, y, sizeof y, 1, d2);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.partial_concat: cc: 1 run(s) of constant inputs concatenated apart");
    gn_report_free(r);
}

/* ConcatV2(ConcatV2(x, y, 0), z, 0) -> ConcatV2(x, y, z, 0) */
static void test_merge_concat(void **state)
{
    (void)state;
    float x[2] = {1, 2}, y[2] = {-5, 0.5f}, z[2] = {7, 8};
    int64_t d2[1] = {2};
    cf_case k = {
        .before = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2)) PH_SHAPE("z", D1(2)) CI("axis", "", "int_val: 0")
            NODE("inner", "ConcatV2", IN("x") IN("y") IN("axis"), CAT(2))
            NODE("outer", "ConcatV2", IN("inner") IN("z") IN("axis"), CAT(2)),
        .after = PH_SHAPE("x", D1(2)) PH_SHAPE("y", D1(2)) PH_SHAPE("z", D1(2)) CI("axis", "", "int_val: 0")
            NODE("outer", "ConcatV2", IN("x") IN("y") IN("z") IN("axis"), CAT(3)),
        .fetch = {"outer"}, .nx = 1,
        .feed = {"x", "y", "z"}, .nf = 3,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, x, sizeof x, 1, d2);
    k.feeds[1] = gn_pt_view(DT_FLOAT, y, sizeof y, 1, d2);
    k.feeds[2] = gn_pt_view(DT_FLOAT, z, sizeof z, 1, d2);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.merge_concat: inner: inlined into 'outer'");
    gn_report_free(r);
}

/* Add(c, BiasAdd(x, b)) -> Add(b, BiasAdd(x, c)): the constant vector goes down. */
static void test_bias_add_push_down(void **state)
{
    (void)state;
    float b[3] = {10, 20, 30};
    int64_t d3[1] = {3};
#define BIAS TF "attr { key: 'data_format' value { s: 'NHWC' } }"
    cf_case k = {
        .before = PH_SHAPE("x", DIM23) PH_SHAPE("bv", D1(3)) CF("c", D1(3), "float_val: 1 float_val: 2 float_val: 3")
            NODE("child", "BiasAdd", IN("x") IN("bv"), BIAS) BINARY("p", "AddV2", "c", "child"),
        .after = PH_SHAPE("x", DIM23) PH_SHAPE("bv", D1(3)) CF("c", D1(3), "float_val: 1 float_val: 2 float_val: 3")
            NODE("child", "BiasAdd", IN("x") IN("c"), BIAS) BINARY("p", "AddV2", "bv", "child"),
        .fetch = {"p"}, .nx = 1,
        .feed = {"x", "bv"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_FLOAT, b, sizeof b, 1, d3);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.bias_add_push_down: p: constant 'c' moved down into 'child'");
    gn_report_free(r);
}

/* Select with an all-true / all-false constant predicate forwards a branch. */
static void test_select(void **state)
{
    (void)state;
    float b[6] = {9, 8, 7, 6, 5, 4};
    cf_case k = {
        .before = PH_SHAPE("a", DIM23) PH_SHAPE("b", DIM23) CONSTV("pt", "DT_BOOL", DIM23, "bool_val: true", "")
            CONSTV("pf", "DT_BOOL", DIM23, "bool_val: false", "") NODE("s", "SelectV2", IN("pt") IN("a") IN("b"), TF)
            NODE("s2", "Select", IN("pf") IN("a") IN("b"), TF),
        .after = PH_SHAPE("a", DIM23) PH_SHAPE("b", DIM23) CONSTV("pt", "DT_BOOL", DIM23, "bool_val: true", "")
            CONSTV("pf", "DT_BOOL", DIM23, "bool_val: false", "") NODE("s", "Identity", IN("a") IN("^pt") IN("^b"), TF)
            NODE("s2", "Identity", IN("b") IN("^a") IN("^pf"), TF),
        .fetch = {"s", "s2"}, .nx = 2,
        .feed = {"a", "b"}, .nf = 2,
    };
    k.feeds[0] = gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23);
    k.feeds[1] = gn_pt_view(DT_FLOAT, b, sizeof b, 2, DIMS23);
    gn_report *r = check_case(&k);
    gn_pt_expect_report(r, "constfold.select_constant_predicate: s: predicate is all true");
    gn_pt_expect_report(r, "constfold.select_constant_predicate: s2: predicate is all false");
    gn_report_free(r);
}

/* ---- results that are an input's bytes, or written where the Const keeps them ------------------------------ */
/* Identity of a constant folds into a Const whose typed field points at the
 * input's own values (no copy); Mul of two constants is written once, where
 * the new Const holds it. Both hold exactly the values, and the graph computes
 * what it did. */
static void test_shared_results(void **state)
{
    (void)state;
    gn_pt_text t = {0};
    uint64_t rng = 42;
    int64_t wd[2] = {32, 64}, sd[1] = {64};
    gn_pt_text_const(&t, "w", 2, wd, &rng);
    gn_pt_text_const(&t, "s", 1, sd, &rng);
    gn_pt_text_add(&t, "%s",
                   PH_SHAPE("x", D2(32, 64)) UNARY("id", "Identity", "w") BINARY("m", "Mul", "w", "s")
                       BINARY("o1", "AddV2", "x", "id") BINARY("o2", "AddV2", "x", "m"));
    gn_graph *g = gn_pt_load_text(t.s);
    gn_pt_text_free(&t);
    gn_pt_preserve(g, "o1");
    gn_pt_preserve(g, "o2");
    gn_graph *orig = gn_pt_clone(g);
    const Tensorflow__TensorProto *wp = gn__node_attr(g, gn__graph_find(g, "w"), "value")->tensor;
    const Tensorflow__TensorProto *sp = gn__node_attr(g, gn__graph_find(g, "s"), "value")->tensor;
    assert_int_equal(wp->n_float_val, 2048);
    assert_int_equal(sp->n_float_val, 64);
    assert_true(run_pass(g, NULL));

    gn_id id = gn__graph_find(g, "id"), m = gn__graph_find(g, "m");
    assert_string_equal(gn__node_op(g, id), "Const");
    assert_string_equal(gn__node_op(g, m), "Const");
    const Tensorflow__TensorProto *ip = gn__node_attr(g, id, "value")->tensor;
    const Tensorflow__TensorProto *mp = gn__node_attr(g, m, "value")->tensor;
    assert_ptr_equal(ip->float_val, wp->float_val);
    assert_int_equal(ip->n_float_val, 2048);
    assert_int_equal(mp->n_float_val, 2048);
    assert_ptr_not_equal(mp->float_val, wp->float_val);
    for (size_t i = 0; i < 2048; i++) {
        float want = wp->float_val[i] * sp->float_val[i % 64];
        assert_memory_equal(&mp->float_val[i], &want, sizeof want);
    }
    float x[32 * 64];
    for (size_t i = 0; i < 32 * 64; i++) x[i] = (float)i / 64.0f - 16.0f;
    int64_t dims[2] = {32, 64};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[2] = {"o1", "o2"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 2, 8);
    gn_graph_free(orig);
    gn_graph_free(g);

    /* float16 (tensor_content): the folded Identity's tensor_content is the input's bytes */
    g = gn_pt_load_text(
        CONSTV("h", "DT_HALF", D1(8), CONTENT("\\000<\\000@\\000B\\000D\\000E\\000F\\000G\\000H"), "")
            NODE("hid", "Identity", IN("h"), "attr { key: 'T' value { type: DT_HALF } } ")
            PHT("hx", "DT_HALF", D1(8))
            NODE("ho", "AddV2", IN("hx") IN("hid"), "attr { key: 'T' value { type: DT_HALF } } "));
    gn_pt_preserve(g, "ho");
    Tensorflow__AttrValue *hv = (Tensorflow__AttrValue *)gn__node_attr(g, gn__graph_find(g, "h"), "value");
    assert_int_equal(hv->tensor->tensor_content.len, 16);
    uint8_t *aligned = gn__graph_value_alloc(g, 16); /* the loader keeps no alignment for a text graph */
    assert_non_null(aligned);
    memcpy(aligned, hv->tensor->tensor_content.data, 16);
    hv->tensor->tensor_content.data = aligned;
    assert_true(run_pass(g, NULL));
    const Tensorflow__TensorProto *hp = gn__node_attr(g, gn__graph_find(g, "hid"), "value")->tensor;
    assert_int_equal(hp->dtype, 19);
    assert_ptr_equal(hp->tensor_content.data, aligned);
    assert_int_equal(hp->tensor_content.len, 16);
    assert_int_equal(hp->tensor_shape->n_dim, 1);
    assert_int_equal(hp->tensor_shape->dim[0]->size, 8);
    gn_graph_free(g);
}

/* A value whose bytes are not aligned for its type (a tensor_content at an odd
 * offset of the file) is decoded once for an op that forwards it: the copy is
 * made by the allocator the caller gives (where constant folding's result keeps
 * it), an aligned value is not copied at all. */
typedef struct count_alloc {
    uint32_t calls;
    size_t bytes;
    gn__buffer *last;
} count_alloc;

static gn__buffer *counting_alloc(void *user, uint32_t output, size_t bytes)
{
    count_alloc *c = user;
    assert_int_equal(output, 0);
    c->calls++;
    c->bytes = bytes;
    c->last = gn__buffer_new(bytes);
    return c->last;
}

static void test_misaligned_value_decoded_once(void **state)
{
    (void)state;
    gn_pt_text t = {0};
    uint64_t rng = 7;
    int64_t wd[2] = {32, 64};
    gn_pt_text_const(&t, "w", 2, wd, &rng);
    gn_pt_text_add(&t, "%s",
                   PH_SHAPE("x", D2(32, 64)) UNARY("id", "Identity", "w") BINARY("o", "AddV2", "x", "id"));
    gn_graph *g = gn_pt_load_text(t.s);
    gn_pt_text_free(&t);
    gn_pt_preserve(g, "o");
    gn_graph *orig = gn_pt_clone(g);
    Tensorflow__AttrValue *wv = (Tensorflow__AttrValue *)gn__node_attr(g, gn__graph_find(g, "w"), "value");
    float want[2048];
    assert_int_equal(wv->tensor->n_float_val, 2048);
    memcpy(want, wv->tensor->float_val, sizeof want);

    /* the aligned typed field is borrowed: no allocation */
    count_alloc ca = {0};
    gn__tensor v;
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__tensor_view_proto_alloc(wv->tensor, counting_alloc, &ca, &v, &e), GN_OK);
    assert_int_equal(ca.calls, 0);
    assert_ptr_equal(v.data, wv->tensor->float_val);
    gn__tensor_release(&v);

    /* the same values as tensor_content one byte past an aligned address */
    uint8_t *raw = gn__graph_value_alloc(g, sizeof want + 1);
    assert_non_null(raw);
    memcpy(raw + 1, want, sizeof want);
    wv->tensor->tensor_content.data = raw + 1;
    wv->tensor->tensor_content.len = sizeof want;
    wv->tensor->n_float_val = 0;
    wv->tensor->float_val = NULL;
    assert_int_equal(gn__tensor_view_proto_alloc(wv->tensor, counting_alloc, &ca, &v, &e), GN_OK);
    assert_int_equal(ca.calls, 1);
    assert_int_equal(ca.bytes, sizeof want);
    assert_ptr_equal(v.buf, ca.last);
    assert_ptr_equal(v.data, ca.last->data);
    assert_int_equal(v.nbytes, sizeof want);
    assert_memory_equal(v.data, want, sizeof want);
    gn__tensor_release(&v);

    /* folded: a Const holding exactly the values, in its own aligned memory */
    assert_true(run_pass(g, NULL));
    gn_id id = gn__graph_find(g, "id");
    assert_string_equal(gn__node_op(g, id), "Const");
    const Tensorflow__TensorProto *ip = gn__node_attr(g, id, "value")->tensor;
    assert_int_equal(ip->n_float_val, 2048);
    assert_int_equal((uintptr_t)ip->float_val % _Alignof(float), 0);
    assert_true((const uint8_t *)ip->float_val + sizeof want <= raw || (const uint8_t *)ip->float_val > raw + sizeof want);
    assert_memory_equal(ip->float_val, want, sizeof want);
    float x[32 * 64];
    for (size_t i = 0; i < 32 * 64; i++) x[i] = (float)i / 32.0f - 8.0f;
    int64_t dims[2] = {32, 64};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"o"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 8);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Every pattern can be disabled by id, and the whole pass by "constfold". */
static void test_disable(void **state)
{
    (void)state;
    const char *text = CF("a", "", "float_val: 2") CF("b", "", "float_val: 3") BINARY("c", "AddV2", "a", "b")
        PH_SHAPE("x", DIM23) CF("ones", D1(3), "float_val: 1") BINARY("m", "Mul", "x", "ones");
    const char *ids[3] = {"constfold.fold", "constfold.mul_by_one", "constfold"};
    for (int i = 0; i < 3; i++) {
        gn_graph *g = gn_pt_load_text(text);
        gn_pt_preserve(g, "c");
        gn_pt_preserve(g, "m");
        gn_options o;
        gn_options_init(&o);
        o.disabled_patterns = ids[i];
        gn__err err;
        gn__err_clear(&err);
        gn__pass_ctx c;
        memset(&c, 0, sizeof c);
        c.opts = &o;
        c.pass_id = "constfold";
        c.lib = g;
        c.err = &err;
        assert_int_equal(gn__pass_constfold(&c, g), GN_OK);
        assert_int_equal(gn__graph_compact(g), GN_OK);
        const char *cop = gn__node_op(g, gn__graph_find(g, "c")), *mop = gn__node_op(g, gn__graph_find(g, "m"));
        assert_string_equal(cop, i == 1 ? "Const" : "AddV2");
        assert_string_equal(mop, i == 0 ? "Identity" : "Mul");
        gn_graph_free(g);
    }
}

/* ---- a function body ---------------------------------------------------------------------------------------- */
/* Bodies come one at a time with fn_name set; _Arg and _Retval are never folded. */
static void test_function_body(void **state)
{
    (void)state;
    const char *text =
        "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT } "
        "output_arg { name: 'y' type: DT_FLOAT } output_arg { name: 'k' type: DT_FLOAT } }\n"
        "  node_def { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n"
        "  node_def { name: 'a' op: 'AddV2' input: 'c:output:0' input: 'c:output:0' " TF "}\n"
        "  node_def { name: 'm' op: 'Mul' input: 'x' input: 'a:z:0' " TF "}\n"
        "  ret { key: 'y' value: 'm:z:0' } ret { key: 'k' value: 'a:z:0' } } }\n"
        PH_SHAPE("in", DIM23)
        "node { name: 'call' op: 'PartitionedCall' input: 'in' attr { key: 'f' value { func { name: 'f' } } } "
        "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT "
        "type: DT_FLOAT } } } }\n"
        UNARY("out", "Identity", "call") UNARY("out2", "Identity", "call:1");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "out");
    gn_pt_preserve(g, "out2");
    gn_graph *orig = gn_pt_clone(g);
    gn__function *fn = gn__graph_find_function(g, "f");
    assert_non_null(fn);
    gn_graph *body = fn->body;
    for (gn_id i = 0; i < body->n_nodes; i++)
        if (body->nodes[i].flags & GN__NODE_FN_RET) body->nodes[i].flags |= GN__NODE_PRESERVE;
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass_on(body, g, "f", r, GN_TOGGLE_DEFAULT));
    gn_pt_expect_report(r, "[f it1] constfold.fold: a: folded into a Const");
    gn_id a = gn__graph_find(body, "a");
    assert_true(a != GN_NONE);
    assert_string_equal(gn__node_op(body, a), "Const");
    assert_true(gn__graph_find(body, "c") == GN_NONE);
    assert_string_equal(gn__node_op(body, gn__graph_find(body, "x")), "_Arg");
    assert_string_equal(gn__node_op(body, gn__graph_find(body, "_retval:y")), "_Retval");
    assert_string_equal(gn__node_op(body, gn__graph_find(body, "_retval:k")), "_Retval");
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(body), GN_OK);
    assert_false(run_pass_on(body, g, "f", NULL, GN_TOGGLE_DEFAULT));
    const char *fn_[1] = {"in"}, *xn[2] = {"out", "out2"};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, X6, sizeof X6, 2, DIMS23)};
    gn_pt_expect_same_results(orig, g, fn_, ft, 1, xn, 2, 16);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* ---- the meta-optimizer runs the pass ----------------------------------------------------------------------------- */
static void test_through_meta(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(CF("a", "", "float_val: 2") CF("b", "", "float_val: 3") BINARY("c", "AddV2", "a", "b")
                                PH_SHAPE("x", "") BINARY("d", "Mul", "x", "c"));
    gn_options o;
    gn_options_init(&o);
    char err[256];
    assert_int_equal(gn_options_parse(&o,
                                      "{'constant_folding': True, 'arithmetic_optimization': False, "
                                      "'dependency_optimization': False, 'shape_optimization': False, "
                                      "'common_subgraph_elimination': False, 'disable_model_pruning': True, "
                                      "'layout_optimizer': False, 'remapping': False, 'loop_optimization': False, "
                                      "'function_optimization': False, 'implementation_selector': False, "
                                      "'min_graph_nodes': -1}",
                                      err, sizeof err),
                     GN_OK);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *fetch[1] = {"d"};
    p.fetches = fetch;
    p.n_fetches = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    gn_pt_expect_report(r, "constfold.fold: c: folded into a Const");
    gn_pt_expect_graph_strict(g, PH_SHAPE("x", "") CF("c", "", CONTENT(F_5)) BINARY("d", "Mul", "x", "c"));
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- corpus, golden models, scale -------------------------------------------------------------- */
/* The pass over the top level and every body, as the meta-optimizer runs it. */
static bool run_all(gn_graph *g, gn_report *r)
{
    bool ch = run_pass_on(g, g, NULL, r, GN_TOGGLE_DEFAULT);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (fn->body) ch |= run_pass_on(fn->body, g, gn__str(g, fn->name), r, GN_TOGGLE_DEFAULT);
    }
    return ch;
}

static double secs(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void visit_corpus(const char *dir)
{
    char cmd[8192];
    char *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && { find . -name saved_model.pb -o -name saved_model.pbtxt | xargs -r -n1 dirname; "
             "find . \\( -name '*.pb' -o -name '*.pbtxt' -o -name '*.pbtxt.gz' \\) ! -name saved_model.pb "
             "! -name saved_model.pbtxt ! -name fingerprint.pb ! -name keras_metadata.pb ! -name tfhub_module.pb "
             "! -path '*/variables/*' ! -path '*/assets/*'; } | sort",
             dir);
    assert_int_equal(gn_test_sh(&out, "%s", cmd), 0);
    char *save = NULL;
    size_t models = 0;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char path[12288];
        snprintf(path, sizeof path, "%s/%s", dir, line + 2);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            gn_graph_free(g);
            continue;
        }
        models++;
        gn_pt_mark_default_preserved(g);
        gn_pt_prepare_bodies(g);
        uint32_t before = gn_pt_live_total(g), top_before = g->n_live;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ch = run_all(g, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gn_pt_check_valid(g, line);
        uint32_t after = gn_pt_live_total(g);
        gn_report *r2 = gn_pt_new_report();
        if (run_all(g, r2)) {
            char *t = gn_pt_report_text(r2);
            fail_msg("%s: a second run changed the graph:\n%.6000s", line, t);
        }
        gn_report_free(r2);
        print_message("  %-100s top %5u -> %5u, all %6u -> %6u nodes%s (%.2f ms)\n", line + 2, top_before, g->n_live,
                      before, after, ch ? "" : " (unchanged)", secs(&t0, &t1) * 1e3);
        gn_graph_free(g);
    }
    free(out);
    assert_true(models > 30);
}

static void test_corpus(void **state)
{
    (void)state;
    char dir[4096];
    if (!gn_test_corpus("", dir, sizeof dir)) skip();
    visit_corpus(dir);
}

static void test_golden(void **state)
{
    (void)state;
    gn_pt_golden m[16];
    size_t n = gn_pt_read_manifest(m, 16);
    if (!n) skip();
    for (size_t i = 0; i < n; i++) {
        gn_graph *g = NULL;
        gn_tensor feeds[4];
        const char *fn[4], *xn[4];
        if (!gn_pt_golden_open(&m[i], &g, feeds, fn, xn, true)) continue;
        gn_pt_prepare_bodies(g);
        gn_graph *orig = gn_pt_clone(g);
        uint32_t before = gn_pt_live_total(g);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        run_all(g, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gn_pt_check_valid(g, m[i].name);
        print_message("  %-20s %6u -> %6u nodes (%.2f ms)\n", m[i].name, before, gn_pt_live_total(g), secs(&t0, &t1) * 1e3);
        gn_pt_expect_same_results(orig, g, fn, feeds, m[i].nf, xn, m[i].nx, 16);
        assert_false(run_all(g, NULL));
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
        gn_graph_free(orig);
        gn_graph_free(g);
    }
}

/* ML-KWS models fed at Mfcc (their RNNs are TensorArray loops). */
static void test_kws(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        int64_t frames;
    } kws[] = {{"DS_CNN__DS_CNN_S", 49}, {"CRNN__CRNN_S", 49}, {"LSTM__LSTM_S", 25}, {"GRU__GRU_S", 25}};
    for (size_t i = 0; i < GN__ARRAY_LEN(kws); i++) {
        char rel[512], path[4096];
        snprintf(rel, sizeof rel, "ARM-software__ML-KWS-for-MCU/Pretrained_models__%s.pb", kws[i].model);
        if (!gn_test_corpus(rel, path, sizeof path)) skip();
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", path, gn_graph_errmsg(g));
        int64_t frames = kws[i].frames;
        float *m = malloc((size_t)frames * 10 * sizeof *m);
        uint32_t seed = 11;
        for (int64_t j = 0; j < frames * 10; j++) {
            seed = seed * 1664525u + 1013904223u;
            m[j] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * 20;
        }
        int64_t dims[3] = {1, frames, 10};
        gn_tensor f = gn_pt_view(DT_FLOAT, m, (size_t)frames * 10 * sizeof *m, 3, dims);
        const char *fn[1] = {"Mfcc"}, *xn[1] = {"labels_softmax"};
        gn_pt_preserve(g, "Mfcc");
        gn_pt_preserve(g, "labels_softmax");
        gn_graph *orig = gn_pt_clone(g);
        uint32_t before = g->n_live;
        assert_true(run_pass(g, NULL));
        gn_pt_check_valid(g, kws[i].model);
        print_message("  %-20s %6u -> %6u nodes\n", kws[i].model, before, g->n_live);
        gn_pt_expect_same_results(orig, g, fn, &f, 1, xn, 1, 16);
        assert_false(run_pass(g, NULL));
        free(m);
        gn_graph_free(orig);
        gn_graph_free(g);
    }
}

/* A synthetic graph: a chain h_i = Mul or AddV2(h_{i-1}, AddV2(c_i, c_i)) where
 * every AddV2(c_i, c_i) folds, every fourth link is x*1, and every fifth link
 * goes through a no-op Reshape; time per node must stay flat and 10^5 nodes
 * well under 1 s. */
static double scale_run(uint32_t blocks, uint32_t *nodes)
{
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_puts(&b, PH_SHAPE("h0", DIM23) CI("shape", D1(2), "int_val: 2 int_val: 3") CF("one", "", "float_val: 1"));
    for (uint32_t i = 1; i <= blocks; i++) {
        gn__buf_printf(&b,
                       "node { name: 'c%u' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                       "'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: %u } } } }\n"
                       "node { name: 'd%u' op: 'AddV2' input: 'c%u' input: 'c%u' " TF "}\n",
                       i, i % 7 + 1, i, i, i);
        const char *prev = "h";
        if (i % 5 == 0) {
            gn__buf_printf(&b, "node { name: 'r%u' op: 'Reshape' input: 'h%u' input: 'shape' " TF
                               "attr { key: 'Tshape' value { type: DT_INT32 } } }\n", i, i - 1);
            prev = "r";
        }
        /* Mul and AddV2 alternate so that constant push-down does not chain */
        if (i % 4 == 0)
            gn__buf_printf(&b, "node { name: 'h%u' op: 'Mul' input: '%s%u' input: 'one' " TF "}\n", i, prev,
                           prev[0] == 'r' ? i : i - 1);
        else
            gn__buf_printf(&b, "node { name: 'h%u' op: '%s' input: '%s%u' input: 'd%u' " TF "}\n", i,
                           i % 2 ? "Mul" : "AddV2", prev, prev[0] == 'r' ? i : i - 1, i);
    }
    char *text = gn__buf_take(&b);
    gn_graph *g = gn_pt_load_text(text);
    free(text);
    char last[32];
    snprintf(last, sizeof last, "h%u", blocks);
    gn_pt_preserve(g, last);
    *nodes = g->n_live;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_true(run_pass(g, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    /* every d folded, every c gone, every x*1 and Reshape an Identity */
    assert_true(gn__graph_find(g, "c1") == GN_NONE);
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "d1")), "Const");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "h4")), "Identity");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "r5")), "Identity");
    gn_graph_free(g);
    return secs(&t0, &t1);
}

static void test_scale(void **state)
{
    (void)state;
    uint32_t n4, n5;
    double t4 = scale_run(3000, &n4), t5 = scale_run(30000, &n5);
    print_message("  %u nodes: %.1f ms (%.2f us/node); %u nodes: %.1f ms (%.2f us/node)\n", n4, t4 * 1e3,
                  t4 * 1e6 / n4, n5, t5 * 1e3, t5 * 1e6 / n5);
    /* timings are printed, never asserted (machines are noisy): bench/ measures them */
}

int main(int argc, char **argv)
{
    if (argc > 1) cmocka_set_test_filter(argv[1]); /* e.g. "test_corpus" */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold),
        cmocka_unit_test(test_fold_multi_output),
        cmocka_unit_test(test_fold_refusals),
        cmocka_unit_test(test_fold_merge),
        cmocka_unit_test(test_materialize_shape),
        cmocka_unit_test(test_materialize_shape_n),
        cmocka_unit_test(test_materialize_bcast),
        cmocka_unit_test(test_materialize_reduction_indices),
        cmocka_unit_test(test_materialize_fill),
        cmocka_unit_test(test_remove_noops),
        cmocka_unit_test(test_remove_noops_negative),
        cmocka_unit_test(test_pack),
        cmocka_unit_test(test_enter),
        cmocka_unit_test(test_switch),
        cmocka_unit_test(test_reduction_reshape),
        cmocka_unit_test(test_fold_fetched_not_fed),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_div_to_reciprocal),
        cmocka_unit_test(test_push_down),
        cmocka_unit_test(test_mul_conv),
        cmocka_unit_test(test_identity_n),
        cmocka_unit_test(test_partial_addn),
        cmocka_unit_test(test_partial_concat),
        cmocka_unit_test(test_merge_concat),
        cmocka_unit_test(test_bias_add_push_down),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_shared_results),
        cmocka_unit_test(test_misaligned_value_decoded_once),
        cmocka_unit_test(test_disable),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_through_meta),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_kws),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
