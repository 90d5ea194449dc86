/* Hardening regressions (issue 22): cases found by random graphs against the
 * optimizer, each kept with its exact expected graph or error, and the
 * optimizer's guard on a pass that grows the graph without bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "passtest.h"

static const char *const k_only_dependency =
    "{'min_graph_nodes': -1, 'disable_model_pruning': True, 'constant_folding': False, 'arithmetic_optimization': "
    "False, 'layout_optimizer': False, 'remapping': False, 'shape_optimization': False, 'loop_optimization': False, "
    "'function_optimization': False, 'common_subgraph_elimination': False, 'implementation_selector': False}";
static const char *const k_only_constfold =
    "{'min_graph_nodes': -1, 'disable_model_pruning': True, 'dependency_optimization': False, "
    "'arithmetic_optimization': False, 'layout_optimizer': False, 'remapping': False, 'shape_optimization': False, "
    "'loop_optimization': False, 'function_optimization': False, 'common_subgraph_elimination': False, "
    "'implementation_selector': False}";
static const char *const k_only_arithmetic =
    "{'min_graph_nodes': -1, 'disable_model_pruning': True, 'dependency_optimization': False, 'constant_folding': "
    "False, 'layout_optimizer': False, 'remapping': False, 'shape_optimization': False, 'loop_optimization': False, "
    "'function_optimization': False, 'common_subgraph_elimination': False, 'implementation_selector': False}";

static gn_status optimize(gn_graph *g, const char *options, const char *const *fetch, size_t nx,
                          const char *const *feed, size_t nf, const gn_custom_pass *cp, gn_report **r)
{
    gn_options o;
    char err[512];
    gn_options_init(&o);
    if (gn_options_parse(&o, options, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    o.checked = 1; /* the structure check between passes, as in every test */
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fetch;
    p.n_fetches = nx;
    p.feeds = feed;
    p.n_feeds = nf;
    p.custom_passes = cp;
    p.n_custom_passes = cp ? 1 : 0;
    return gn_optimize(g, &o, &p, r);
}

/* dependency_optimization on a TF1 cond with a dead branch: turning the
 * Identity that carries the branch's control dependency into a NoOp needed a
 * new Identity of the same Switch output, and so on without end (the graph
 * grew until memory ran out). */
static void test_dependency_dead_cond_branch_terminates(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH_SHAPE("in0", "dim { size: 14 }") PH_SHAPE("cond/sub", "dim { size: 14 }")
        "node { name: 'cond/pred' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' "
        "value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: false } } } }\n"
        "node { name: 'cond/pred_id' op: 'Identity' input: 'cond/pred' attr { key: 'T' value { type: DT_BOOL } } }\n"
        "node { name: 'cond/Relu/Switch' op: 'Switch' input: 'in0' input: 'cond/pred_id' " TF "}\n"
        "node { name: 'cond/Relu' op: 'Relu' input: 'cond/Relu/Switch:1' " TF "}\n"
        "node { name: 'cond/Merge' op: 'Identity' input: 'cond/sub' " TF "}\n");
    const char *fetch[] = {"cond/Merge"}, *feed[] = {"in0", "cond/sub"};
    gn_report *r = NULL;
    assert_int_equal(optimize(g, k_only_dependency, fetch, 1, feed, 2, NULL, &r), GN_OK);
    gn_pt_expect_dump(g, "in0=Placeholder(); cond/sub=Placeholder(); cond/pred=Const(); "
                         "cond/Relu/Switch=Switch(in0, cond/pred); cond/Merge=Identity(cond/sub)");
    gn_pt_expect_report(r, "[main it1] dependency.remove_noop: cond/Relu: bypassed NoOp 'cond/Relu' (1 inputs, 0 consumers)");
    gn_report_free(r);
    gn_graph_free(g);
}

/* constant_folding: pushing the constant Fill (which waits on the
 * materialized Shape of 'add', which waits on 'add') down into 'add' closed
 * a cycle: add -> Fill -> Shape -> add. */
static void test_constfold_push_down_makes_no_cycle(void **state)
{
    (void)state;
    const char *text =
        PH_SHAPE("x", "dim { size: 5 } dim { size: 10 } dim { size: 8 } dim { size: 5 }")
        "node { name: 'Const' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1.5 } } } }\n"
        "node { name: 'add' op: 'AddV2' input: 'x' input: 'Const' " TF "}\n"
        "node { name: 'Shape' op: 'Shape' input: 'add' " TF "attr { key: 'out_type' value { type: DT_INT32 } } }\n"
        "node { name: 'Const_1' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2.0 } } } }\n"
        "node { name: 'Fill' op: 'Fill' input: 'Shape' input: 'Const_1' " TF
        "attr { key: 'index_type' value { type: DT_INT32 } } }\n"
        "node { name: 'add_1' op: 'AddV2' input: 'add' input: 'Fill' " TF "}\n";
    for (int with_fetch = 0; with_fetch < 2; with_fetch++) {
        gn_graph *g = gn_pt_load_text(text), *orig = gn_pt_load_text(text);
        const char *fetch[] = {"add_1"};
        gn_report *r = NULL;
        assert_int_equal(optimize(g, k_only_constfold, fetch, (size_t)with_fetch, NULL, 0, NULL, &r), GN_OK);
        gn_pt_expect_dump(g, "x=Placeholder(); Const=Const(); add=AddV2(x, Const); Shape=Const(^add); "
                             "Const_1=Const(); Fill=Const(^Shape, ^Const_1); add_1=AddV2(add, Fill)");
        gn_pt_expect_no_report(r, "constfold.constant_push_down");
        assert_int_equal(gn_graph_validate(g), GN_OK);
        float xv[5 * 10 * 8 * 5];
        for (size_t i = 0; i < sizeof xv / sizeof *xv; i++) xv[i] = (float)((int)(i * 7919 % 201) - 100) / 37.0f;
        int64_t dims[] = {5, 10, 8, 5};
        gn_tensor ft = gn_pt_view(1, xv, sizeof xv, 4, dims);
        const char *fn[] = {"x"};
        gn_pt_expect_same_results(orig, g, fn, &ft, 1, fetch, 1, 1);
        gn_report_free(r);
        gn_graph_free(g);
        gn_graph_free(orig);
    }
}

/* ArgMax/ArgMin of f(x): only a float Neg may be dropped; any f that maps
 * two values to one changes which index wins a tie. */
static void test_argmin_of_non_strict_monotonic_refused(void **state)
{
    (void)state;
    static const struct {
        const char *red, *f, *reason;
    } cases[] = {
        {"ArgMin", "Sign", "ArgMin(Sign(x)) kept: Sign is not strictly monotonic, and the ties it makes decide which index ArgMin returns"},
        {"ArgMax", "Relu", "ArgMax(Relu(x)) kept: Relu is not strictly monotonic, and the ties it makes decide which index ArgMax returns"},
        {"ArgMax", "Relu6", "ArgMax(Relu6(x)) kept: Relu6 is not strictly monotonic, and the ties it makes decide which index ArgMax returns"},
        {"ArgMin", "Floor", "ArgMin(Floor(x)) kept: Floor is not strictly monotonic, and the ties it makes decide which index ArgMin returns"},
        {"ArgMax", "Ceil", "ArgMax(Ceil(x)) kept: Ceil is not strictly monotonic, and the ties it makes decide which index ArgMax returns"},
        {"ArgMax", "Tanh", "ArgMax(Tanh(x)) kept: Tanh maps neighbouring values of x to the same value in floating point (it is not strictly monotonic there), and the ties it makes decide which index ArgMax returns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 PH_SHAPE("x", "dim { size: 2 } dim { size: 4 }")
                 "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
                 "value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }\n"
                 "node { name: 'f' op: '%s' input: 'x' " TF "}\n"
                 "node { name: 'am' op: '%s' input: 'f' input: 'ax' " TF
                 "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'output_type' value { type: DT_INT64 } } }\n"
                 "node { name: 'out' op: 'Identity' input: 'am' attr { key: 'T' value { type: DT_INT64 } } }\n",
                 cases[i].f, cases[i].red);
        gn_graph *g = gn_pt_load_text(text), *orig = gn_pt_load_text(text);
        const char *fetch[] = {"out"};
        gn_report *r = NULL;
        assert_int_equal(optimize(g, k_only_arithmetic, fetch, 1, NULL, 0, NULL, &r), GN_OK);
        char want[512];
        snprintf(want, sizeof want, "x=Placeholder(); ax=Const(); f=%s(x); am=%s(f, ax); out=Identity(am)", cases[i].f,
                 cases[i].red);
        gn_pt_expect_dump(g, want);
        char line[512];
        snprintf(line, sizeof line, "[main it1] arithmetic.optimize_max_or_min_of_monotonic: am: %s", cases[i].reason);
        gn_pt_expect_report(r, line);
        /* ties made by f: x's own extremes are elsewhere */
        float xv[8] = {-3.0f, -1.0f, 12.0f, 11.0f, 0.2f, 0.7f, -0.5f, 9.5f};
        int64_t dims[] = {2, 4};
        gn_tensor ft = gn_pt_view(1, xv, sizeof xv, 2, dims);
        const char *fn[] = {"x"};
        gn_pt_expect_same_results(orig, g, fn, &ft, 1, fetch, 1, 1);
        gn_report_free(r);
        gn_graph_free(g);
        gn_graph_free(orig);
    }
}

/* constant_folding's ConstantPushDownBiasAdd swapped on ranks alone, as
 * Grappler does: Add(BiasAdd(x[1,5], b[5]), c[4,1]) became
 * Add(x, BiasAdd(c, b)), a bias of 5 on a channel of 1 (the optimized graph
 * failed to run). Found by random graphs (tests/randgraph_test.c). */
static void test_bias_add_push_down_keeps_shapes(void **state)
{
    (void)state;
    const char *text =
        PH_SHAPE("x", "dim { size: 1 } dim { size: 5 }")
        "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 5 } } float_val: [0.5, -1, 2, 0.25, -3] } } } }\n"
        "node { name: 'ba' op: 'BiasAdd' input: 'x' input: 'b' " TF "}\n"
        "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } dim { size: 1 } } float_val: [1, -2, 3, 0.5] } } } }\n"
        "node { name: 'out' op: 'Add' input: 'ba' input: 'c' " TF "}\n";
    gn_graph *g = gn_pt_load_text(text), *orig = gn_pt_load_text(text);
    const char *fetch[] = {"out"}, *feed[] = {"x"};
    gn_report *r = NULL;
    assert_int_equal(optimize(g, k_only_constfold, fetch, 1, feed, 1, NULL, &r), GN_OK);
    gn_pt_expect_dump(g, "x=Placeholder(); b=Const(); ba=BiasAdd(x, b); c=Const(); out=Add(ba, c)");
    gn_pt_expect_no_report(r, "constfold.bias_add_push_down");
    float xv[5] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f};
    int64_t dims[] = {1, 5};
    gn_tensor ft = gn_pt_view(1, xv, sizeof xv, 2, dims);
    gn_pt_expect_same_results(orig, g, feed, &ft, 1, fetch, 1, 1);
    gn_report_free(r);
    gn_graph_free(g);
    gn_graph_free(orig);
}

/* optimize_max_or_min_of_monotonic swapped Min(Relu(x)) into Relu(Min(x))
 * although the Min also had a control input from the Relu: the Relu then
 * consumed the Min that waited for it, a cycle (the checked mode rolled the
 * pass back). Found by a long random-graph run (seeds 7083159, 7087832). */
static void test_monotonic_swap_keeps_control_edges_acyclic(void **state)
{
    (void)state;
    static const char *const fs[] = {"Relu", "Neg"};
    for (size_t i = 0; i < 2; i++) {
        char text[2048];
        snprintf(text, sizeof text,
                 PH_SHAPE("x", "dim { size: 3 } dim { size: 2 }")
                 "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
                 "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n"
                 "node { name: 'f' op: '%s' input: 'x' " TF "}\n"
                 "node { name: 'm' op: 'Min' input: 'f' input: 'ax' input: '^f' " TF
                 "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: false } } }\n"
                 "node { name: 'out' op: 'Identity' input: 'm' " TF "}\n",
                 fs[i]);
        gn_graph *g = gn_pt_load_text(text), *orig = gn_pt_load_text(text);
        const char *fetch[] = {"out"}, *feed[] = {"x"};
        gn_report *r = NULL;
        assert_int_equal(optimize(g, k_only_arithmetic, fetch, 1, NULL, 0, NULL, &r), GN_OK);
        char want[256];
        snprintf(want, sizeof want, "x=Placeholder(); ax=Const(); f=%s(x); m=Min(f, ax, ^f); out=Identity(m)", fs[i]);
        gn_pt_expect_dump(g, want);
        gn_pt_expect_report(r, "[main it1] arithmetic.optimize_max_or_min_of_monotonic: m: 'f' has control consumers");
        float xv[6] = {-3.0f, 1.0f, 12.0f, -11.0f, 0.2f, 0.7f};
        int64_t dims[] = {3, 2};
        gn_tensor ft = gn_pt_view(1, xv, sizeof xv, 2, dims);
        gn_pt_expect_same_results(orig, g, feed, &ft, 1, fetch, 1, 1);
        gn_report_free(r);
        gn_graph_free(g);
        gn_graph_free(orig);
    }
}

/* Random graph seed 7101995, reduced: a TF1 cond whose predicate is
 * Less(Sum(Softmax(c)), 1) on constants. The sum is 1 within one ulp, so the
 * branch taken depends on the last bit of the softmax: constant folding must
 * compute it as the CPU backend does (the same exp), or the folded graph takes
 * the other branch (rel L2 1.02 before the fix). */
static void test_folded_predicate_takes_the_runtime_branch(void **state)
{
    (void)state;
    const char *text =
        PH_SHAPE("x", "dim { size: 3 }")
        "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 0.575221598 float_val: 0.531909883 "
        "float_val: 0.667390704 } } } }\n"
        "node { name: 'sm' op: 'Softmax' input: 'c' " TF "}\n"
        "node { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }\n"
        "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
        "tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n"
        "node { name: 'sum' op: 'Sum' input: 'sm' input: 'ax' " TF
        "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: false } } }\n"
        "node { name: 'pred' op: 'Less' input: 'sum' input: 'one' " TF "}\n"
        "node { name: 'sw' op: 'Switch' input: 'sm' input: 'pred' " TF "}\n"
        "node { name: 'f' op: 'Neg' input: 'sw' " TF "}\n"
        "node { name: 't' op: 'Relu' input: 'sw:1' " TF "}\n"
        "node { name: 'mg' op: 'Merge' input: 'f' input: 't' " TF "attr { key: 'N' value { i: 2 } } }\n"
        "node { name: 'out' op: 'AddV2' input: 'x' input: 'mg' " TF "}\n";
    gn_graph *g = gn_pt_load_text(text), *orig = gn_pt_load_text(text);
    const char *fetch[] = {"out"}, *feed[] = {"x"};
    gn_report *r = NULL;
    assert_int_equal(optimize(g, k_only_constfold, fetch, 1, feed, 1, NULL, &r), GN_OK);
    /* the whole cond folded away: the branch is decided at optimization time */
    gn_pt_expect_report(r, "[main it1] constfold.fold: pred: folded into a Const");
    float xv[3] = {0.0f, 0.0f, 0.0f};
    int64_t dims[] = {3};
    gn_tensor ft = gn_pt_view(1, xv, sizeof xv, 1, dims);
    float a[3], b[3];
    gn_tensor oa = {0}, ob = {0};
    gn_pt_run_graph(orig, feed, &ft, 1, fetch, &oa, 1);
    gn_pt_run_graph(g, feed, &ft, 1, fetch, &ob, 1);
    assert_int_equal(oa.rank, 1);
    assert_int_equal(ob.rank, 1);
    assert_int_equal(oa.dims[0], 3);
    assert_int_equal(ob.dims[0], 3);
    memcpy(a, oa.data, sizeof a);
    memcpy(b, ob.data, sizeof b);
    /* bit for bit: the same branch (Relu of the softmax, all positive) on both */
    assert_memory_equal(a, b, sizeof a);
    assert_true(a[0] > 0 && a[1] > 0 && a[2] > 0);
    gn_tensor_free(&oa);
    gn_tensor_free(&ob);
    gn_report_free(r);
    gn_graph_free(g);
    gn_graph_free(orig);
}

/* A pass that grows the graph without bound is stopped by the guard with an
 * error naming it; the graph is as before the pass and the report has it. */
static gn_status grow_forever(void *user, gn_graph *g, int32_t *changed, char *err, size_t errlen)
{
    (void)user;
    *changed = 1;
    for (uint32_t k = 0; k < 100000000u; k++) {
        char name[32];
        snprintf(name, sizeof name, "grown/%u", k);
        gn_id id;
        gn_status s = gn__node_add(g, name, "NoOp", &id);
        if (s != GN_OK) {
            snprintf(err, errlen, "%s", g->err.msg);
            return s;
        }
    }
    return GN_OK;
}

static void test_guard_stops_unbounded_growth(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", "dim { size: 3 }") "node { name: 'n' op: 'Neg' input: 'x' " TF "}\n"
                                                  "node { name: 'out' op: 'Identity' input: 'n' " TF "}\n";
    gn_graph *g = gn_pt_load_text(text);
    const char *fetch[] = {"out"};
    gn_custom_pass cp = {"grower", grow_forever, NULL};
    gn_report *r = NULL;
    assert_int_equal(optimize(g, k_only_arithmetic, fetch, 1, NULL, 0, &cp, &r), GN_ERR_LIMIT);
    assert_string_equal(gn_graph_errmsg(g),
                        "pass 'grower' failed on main: stopped by the optimizer's guard: the pass grew the graph from 3 "
                        "to 100024 nodes, the limit (8 x 3 + 100000)");
    gn_pt_expect_dump(g, "x=Placeholder(); n=Neg(x); out=Identity(n)");
    char *txt = gn_pt_report_text(r);
    assert_non_null(strstr(txt, "  grower: stopped by the optimizer's guard"));
    free(txt);
    gn_report_free(r);
    gn_graph_free(g);
}

/* The step budget: gn__pass_deadline_passed answers true once the polls
 * pass the limit, and stays so. */
static void test_guard_step_budget(void **state)
{
    (void)state;
    gn__pass_guard gd = {0, 5, false};
    gn__pass_ctx c;
    memset(&c, 0, sizeof c);
    c.guard = &gd;
    for (int i = 0; i < 5; i++) assert_false(gn__pass_deadline_passed(&c));
    assert_true(gn__pass_deadline_passed(&c));
    assert_true(gd.tripped);
    assert_true(gn__pass_deadline_passed(&c));
}

/* Checked mode checks TF1 loop frames after every pass, on a graph whose
 * frames held before it: a pass that leaves a constant of the loop body
 * without the control input anchoring it to the loop's frame (the remapper
 * once did) fails, naming the node and the two frames, and the graph is as
 * before the pass. gn__graph_check_frames itself: an Exit outside a loop, a
 * NextIteration fed from another frame. */
#define LOOP_I32 "attr { key: 'T' value { type: DT_INT32 } } "
#define LOOP_TEXT(body_const_inputs, next_input)                                                                       \
    "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "   \
    "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"                                                               \
    "node { name: 'enter' op: 'Enter' input: 'i0' " LOOP_I32 "attr { key: 'frame_name' value { s: 'L' } } "              \
    "attr { key: 'is_constant' value { b: false } } attr { key: 'parallel_iterations' value { i: 1 } } }\n"              \
    "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " LOOP_I32 "attr { key: 'N' value { i: 2 } } }\n"      \
    "node { name: 'lim' op: 'Const' input: '^merge' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "  \
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }\n"                                               \
    "node { name: 'less' op: 'Less' input: 'merge' input: 'lim' " LOOP_I32 "}\n"                                          \
    "node { name: 'cond' op: 'LoopCond' input: 'less' }\n"                                                                \
    "node { name: 'switch' op: 'Switch' input: 'merge' input: 'cond' " LOOP_I32 "}\n"                                     \
    "node { name: 'out' op: 'Exit' input: 'switch' " LOOP_I32 "}\n"                                                       \
    "node { name: 'id' op: 'Identity' input: 'switch:1' " LOOP_I32 "}\n"                                                  \
    "node { name: 'one' op: 'Const' " body_const_inputs " attr { key: 'dtype' value { type: DT_INT32 } } "                \
    "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"                          \
    "node { name: 'body' op: 'AddV2' input: 'id' input: 'one' " LOOP_I32 "}\n"                                            \
    "node { name: 'next' op: 'NextIteration' input: '" next_input "' " LOOP_I32 "}\n"

static gn_status unanchor(void *user, gn_graph *g, int32_t *changed, char *err, size_t errlen)
{
    (void)user, (void)err, (void)errlen;
    gn_id one = gn__graph_find(g, "one"), id = gn__graph_find(g, "id");
    *changed = 1;
    return gn__node_remove_control(g, one, id);
}

static void test_checked_mode_checks_frames(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(LOOP_TEXT("input: '^id'", "body"));
    assert_int_equal(gn__graph_check_frames(g), GN_OK);
    const char *fetch[] = {"out"};
    gn_custom_pass cp = {"unanchor", unanchor, NULL};
    gn_report *r = NULL;
    /* by default a failed pass is undone and reported, as Grappler logs it */
    assert_int_equal(optimize(g, k_only_arithmetic, fetch, 1, NULL, 0, &cp, &r), GN_OK);
    char *txt = gn_pt_report_text(r);
    if (!strstr(txt, "unanchor") || !strstr(txt, "node 'body' (AddV2) has inputs from different frames: 'id' in frame "
                                                  "'L' and 'one' in the root frame"))
        fail_msg("report:\n%s", txt);
    free(txt);
    gn_report_free(r);
    gn_id one = gn__graph_find(g, "one");
    assert_int_equal(gn__node_at(g, one)->n_ctrl, 1);   /* the constant still hangs on the loop */
    assert_int_equal(gn__graph_check_frames(g), GN_OK);
    /* with fail_on_optimizer_errors the optimization fails, naming the pass */
    char opts[1024];
    snprintf(opts, sizeof opts, "%.*s, 'fail_on_optimizer_errors': True}", (int)strlen(k_only_arithmetic) - 1,
             k_only_arithmetic);
    assert_int_equal(optimize(g, opts, fetch, 1, NULL, 0, &cp, NULL), GN_ERR_GRAPH);
    assert_string_equal(gn_graph_errmsg(g),
                        "pass 'unanchor' failed on main: graph invalid after the pass: node 'body' (AddV2) has inputs "
                        "from different frames: 'id' in frame 'L' and 'one' in the root frame");
    gn_graph_free(g);

    /* the check on its own */
    g = gn_pt_load_text(LOOP_TEXT("input: '^id'", "body")
                        "node { name: 'late' op: 'Exit' input: 'out' " LOOP_I32 "}\n");
    assert_int_equal(gn__graph_check_frames(g), GN_ERR_GRAPH);
    assert_string_equal(g->err.msg, "node 'late' (Exit) is not inside a while loop");
    gn_graph_free(g);
    g = gn_pt_load_text(LOOP_TEXT("input: '^id'", "i0"));
    assert_int_equal(gn__graph_check_frames(g), GN_ERR_GRAPH);
    assert_string_equal(g->err.msg, "node 'merge' (Merge) takes 'next' from the root frame, but is in frame 'L'");
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dependency_dead_cond_branch_terminates),
        cmocka_unit_test(test_constfold_push_down_makes_no_cycle),
        cmocka_unit_test(test_argmin_of_non_strict_monotonic_refused),
        cmocka_unit_test(test_bias_add_push_down_keeps_shapes),
        cmocka_unit_test(test_monotonic_swap_keeps_control_edges_acyclic),
        cmocka_unit_test(test_folded_predicate_takes_the_runtime_branch),
        cmocka_unit_test(test_guard_stops_unbounded_growth),
        cmocka_unit_test(test_checked_mode_checks_frames),
        cmocka_unit_test(test_guard_step_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
