/* The loop optimizer (src/optimizer/passes/loop.c), one pattern at a time: a
 * small graph before, the exact graph after, refusals with their reasons, and
 * the original and rewritten graphs run on the CPU backend on the same feeds.
 * Then every corpus model through the pass (default and AGGRESSIVE): the
 * graph stays valid. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "graph/ir.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define BOOLC(n, v)                                                                                              \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' value { " \
    "tensor { dtype: DT_BOOL tensor_shape { } bool_val: " v " } } } }\n"
#define INTC(n, v, extra)                                                                                        \
    "node { name: '" n "' op: 'Const' " extra " attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' " \
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " v " } } } }\n"
#define FLTC(n, v)                                                                                                \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"
#define SWITCH(n, x, p) "node { name: '" n "' op: 'Switch' input: '" x "' input: '" p "' " TF "}\n"
#define MERGE(n, a, b) \
    "node { name: '" n "' op: 'Merge' input: '" a "' input: '" b "' " TF "attr { key: 'N' value { i: 2 } } }\n"

static float xs[6] = {-1.5f, 2.0f, 0.25f, -3.0f, 4.0f, 0.5f};
static const int64_t d6[1] = {6};

static void run_loop(gn_pt_fx *f, gn_graph *g, bool expect_change)
{
    gn_pt_fx_pass(f, "loop");
    assert_int_equal(gn_pt_fx_run(f, gn__pass_loop, g), expect_change);
}

/* ---- loop.dead_branch -------------------------------------------------------------------- */
static const char *k_cond_graph(void)
{
    return PH("x") BOOLC("p", "true") SWITCH("sw", "x", "p") UN("f", "Neg", "sw") UN("f2", "Square", "f")
        UN("t", "Exp", "sw:1") MERGE("m", "f2", "t") UN("y", "Relu", "m")
        "node { name: 'idx' op: 'Identity' input: 'm:1' attr { key: 'T' value { type: DT_INT32 } } }\n";
}

static void test_dead_branch_true(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(k_cond_graph());
    gn_pt_preserve_list(g, "y,idx");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, true);
    gn_pt_expect_dump(g, "x=Placeholder(); p=Const(); sw=Identity(x); t=Exp(sw); m=Identity(t); y=Relu(m); idx=Identity(m/value_index); "
                         "m/value_index=Const(^t)");
    gn_pt_fx_expect_event(&f, "loop.dead_branch: sw: predicate is constant true: 2 node(s) of the untaken branch deleted");
    gn_pt_fx_expect_event(&f, "loop.dead_branch: m: Merge keeps one live input: became an Identity");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "idx"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 2);
    assert_false(gn_pt_fx_run(&f, gn__pass_loop, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_dead_branch_false(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s", k_cond_graph());
    char *p = strstr(text, "bool_val: true");
    assert_non_null(p);
    memcpy(p, "bool_val: 0   ", 14);
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "y,idx");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, true);
    gn_pt_expect_dump(g, "x=Placeholder(); p=Const(); sw=Identity(x); f=Neg(sw); f2=Square(f); m=Identity(f2); y=Relu(m); "
                         "idx=Identity(m/value_index); m/value_index=Const(^f2)");
    gn_pt_fx_expect_event(&f, "loop.dead_branch: sw: predicate is constant false: 1 node(s) of the untaken branch deleted");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "idx"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 2);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A dead control input kills the node it gates (but not a Merge). */
static void test_dead_branch_control(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") BOOLC("p", "true") SWITCH("sw", "x", "p") UN("f", "Neg", "sw")
                                      "node { name: 'g' op: 'Exp' input: 'x' input: '^f' " TF "}\n"
                                      UN("t", "Exp", "sw:1") MERGE("m", "g", "t") UN("y", "Relu", "m"));
    gn_pt_preserve_list(g, "y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, true);
    gn_pt_expect_dump(g, "x=Placeholder(); p=Const(); sw=Identity(x); t=Exp(sw); m=Identity(t); y=Relu(m)");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_dead_branch_refusals(void **state)
{
    (void)state;
    /* a fetched node in the dead branch */
    gn_graph *g = gn_pt_load_text(k_cond_graph());
    gn_pt_preserve_list(g, "y,f");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, false);
    gn_pt_fx_expect_event(&f, "loop.dead_branch: sw: not rewritten: a node of the dead branch is preserved (fetch or feed)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    /* the dead branch reaches an Exit */
    g = gn_pt_load_text(PH("x") BOOLC("p", "false") SWITCH("sw", "x", "p")
                        "node { name: 'e' op: 'Exit' input: 'sw:1' " TF "}\n" UN("y", "Relu", "sw"));
    gn_pt_preserve_list(g, "y");
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, false);
    gn_pt_fx_expect_event(&f, "loop.dead_branch: sw: not rewritten: the dead branch reaches a loop boundary (Enter, "
                              "Exit, NextIteration)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    /* disabled by id */
    g = gn_pt_load_text(k_cond_graph());
    gn_pt_preserve_list(g, "y,idx");
    gn_pt_fx_init(&f, "loop.dead_branch");
    run_loop(&f, g, false);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- loop.stack_push_removal ------------------------------------------------------------------ */
#define STACK                                                                                                     \
    INTC("n", "10", "")                                                                                           \
    "node { name: 'st' op: 'StackV2' input: 'n' attr { key: 'elem_type' value { type: DT_FLOAT } } "               \
    "attr { key: 'stack_name' value { s: 's' } } }\n"                                                             \
    "node { name: 'h' op: 'Identity' input: 'st' attr { key: 'T' value { type: DT_RESOURCE } } }\n"              \
    "node { name: 'push' op: 'StackPushV2' input: 'h' input: 'x' " TF                                              \
    "attr { key: 'swap_memory' value { b: false } } }\n" UN("y", "Relu", "push")

static void test_stack_push_removal(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") STACK);
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, true);
    gn_pt_expect_dump(g, "x=Placeholder(); n=Const(); st=StackV2(n); h=Identity(st); push=Identity(x, ^h); y=Relu(push)");
    gn_pt_fx_expect_event(&f, "loop.stack_push_removal: push: stack 'st' is never popped: push became an Identity");
    assert_null(gn__node_attr(g, gn__graph_find(g, "push"), "swap_memory"));
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    /* popped: nothing changes */
    g = gn_pt_load_text(PH("x") STACK
                        "node { name: 'pop' op: 'StackPopV2' input: 'h' attr { key: 'elem_type' value { type: DT_FLOAT } } "
                        "input: '^push' }\n");
    gn_pt_preserve_list(g, "y,pop");
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, false);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- loop.dead_branch_functional ---------------------------------------------------------------- */
#define FN(name, op)                                                                                            \
    "function { signature { name: '" name "' input_arg { name: 'a' type: DT_FLOAT } "                           \
    "output_arg { name: 'out' type: DT_FLOAT } } node_def { name: 'n' op: '" op "' input: 'a' " TF "} "        \
    "ret { key: 'out' value: 'n:y:0' } }\n"
#define LIB "library { " FN("neg_fn", "Neg") FN("exp_fn", "Exp") FN("sq_fn", "Square") "}\n"
#define FLIST "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } "

static void test_functional_if(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") BOOLC("c", "false")
                                  "node { name: 'if' op: 'StatelessIf' input: 'c' input: 'x' " FLIST
                                  "attr { key: 'Tcond' value { type: DT_BOOL } } "
                                  "attr { key: 'then_branch' value { func { name: 'neg_fn' } } } "
                                  "attr { key: 'else_branch' value { func { name: 'exp_fn' } } } }\n"
                                  UN("y", "Relu", "if") LIB);
    gn_pt_preserve_list(g, "y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, true);
    gn_pt_expect_dump(g, "x=Placeholder(); c=Const(); if=PartitionedCall(x); y=Relu(if)");
    const Tensorflow__AttrValue *fa = gn__node_attr(g, gn__graph_find(g, "if"), "f");
    assert_non_null(fa);
    assert_string_equal(fa->func->name, "exp_fn");
    assert_null(gn__node_attr(g, gn__graph_find(g, "if"), "then_branch"));
    gn_pt_fx_expect_event(&f, "loop.dead_branch_functional: if: If on constant 0: now a call of 'exp_fn'");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_functional_case(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        gn_graph *g = gn_pt_load_text(v == 0 ? PH("x") INTC("k", "1", "") "node { name: 'case' op: 'Case' input: 'k' input: 'x' " FLIST
                                          "attr { key: 'branches' value { list { func { name: 'neg_fn' } func { name: 'exp_fn' } "
                                          "func { name: 'sq_fn' } } } } }\n" UN("y", "Relu", "case") LIB
                                             : PH("x") INTC("k", "7", "") "node { name: 'case' op: 'Case' input: 'k' input: 'x' " FLIST
                                          "attr { key: 'branches' value { list { func { name: 'neg_fn' } func { name: 'exp_fn' } "
                                          "func { name: 'sq_fn' } } } } }\n" UN("y", "Relu", "case") LIB);
        gn_pt_preserve_list(g, "y");
        gn_graph *before = gn_pt_clone(g);
        gn_pt_fx f;
        gn_pt_fx_init(&f, NULL);
        run_loop(&f, g, true);
        gn_pt_expect_dump(g, "x=Placeholder(); k=Const(); case=StatefulPartitionedCall(x); y=Relu(case)");
        const Tensorflow__AttrValue *fa = gn__node_attr(g, gn__graph_find(g, "case"), "f");
        assert_string_equal(fa->func->name, v == 0 ? "exp_fn" : "sq_fn"); /* out of range: the last branch */
        gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
        const char *fn[1] = {"x"}, *xn[1] = {"y"};
        gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
        gn_pt_fx_free(&f);
        gn_graph_free(before);
        gn_graph_free(g);
    }
}

/* ---- loop.invariant_motion ----------------------------------------------------------------------- */
#define ENTER(n, in, t, c)                                                                                   \
    "node { name: '" n "' op: 'Enter' input: '" in "' attr { key: 'T' value { type: " t " } } "             \
    "attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: " c " } } "            \
    "attr { key: 'parallel_iterations' value { i: 10 } } }\n"
static const char *k_loop =
    PH("x") INTC("i0", "0", "") INTC("lim", "3", "") FLTC("w", "2.0")
    ENTER("ei", "i0", "DT_INT32", "false") ENTER("ex", "x", "DT_FLOAT", "false")
    ENTER("ew", "w", "DT_FLOAT", "true") ENTER("en", "lim", "DT_INT32", "true")
    "node { name: 'mi' op: 'Merge' input: 'ei' input: 'ni' " TI "attr { key: 'N' value { i: 2 } } }\n"
    "node { name: 'mx' op: 'Merge' input: 'ex' input: 'nx' " TF "attr { key: 'N' value { i: 2 } } }\n"
    "node { name: 'less' op: 'Less' input: 'mi' input: 'en' " TI "}\n"
    "node { name: 'cond' op: 'LoopCond' input: 'less' }\n"
    "node { name: 'si' op: 'Switch' input: 'mi' input: 'cond' " TI "}\n"
    "node { name: 'sx' op: 'Switch' input: 'mx' input: 'cond' " TF "}\n"
    "node { name: 'out' op: 'Exit' input: 'sx' " TF "}\n"
    "node { name: 'ii' op: 'Identity' input: 'si:1' " TI "}\n"
    "node { name: 'ix' op: 'Identity' input: 'sx:1' " TF "}\n"
    INTC("one", "1", "input: '^ii'")
    "node { name: 'inc' op: 'AddV2' input: 'ii' input: 'one' " TI "}\n"
    UN("sq", "Square", "ew") UN("sq2", "Neg", "sq")
    "node { name: 'mul' op: 'Mul' input: 'ix' input: 'sq2' " TF "}\n"
    "node { name: 'ni' op: 'NextIteration' input: 'inc' " TI "}\n"
    "node { name: 'nx' op: 'NextIteration' input: 'mul' " TF "}\n";

static void test_invariant_motion(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(k_loop);
    gn_pt_preserve_list(g, "out");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    /* off unless AGGRESSIVE, as Grappler */
    run_loop(&f, g, false);
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    run_loop(&f, g, true);
    gn_pt_fx_expect_event(&f, "loop.invariant_motion: sq: moved out of frame 'L'");
    gn_pt_fx_expect_event(&f, "loop.invariant_motion: sq2: moved out of frame 'L'");
    char *d = gn_pt_dump(g);
    assert_non_null(strstr(d, "sq=Square(w)"));
    assert_non_null(strstr(d, "sq2=Neg(sq)"));
    assert_non_null(strstr(d, "mul=Mul(ix, LoopOptimizer/L_enter_1)"));
    assert_non_null(strstr(d, "LoopOptimizer/L_enter_1=Enter(sq2)"));
    free(d);
    gn_pt_check_valid(g, "invariant motion");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"out"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- loop.invariant_motion_functional ------------------------------------------------------------ */
#define FCONST(n, v)                                                                                              \
    "node_def { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' "    \
    "value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"
#define ICONST(n, v)                                                                                              \
    "node_def { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "    \
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " v " } } } }\n"
#define LOOP_SIG(name, outs)                                                                                      \
    "signature { name: '" name "' input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'v' type: DT_FLOAT } " \
    "input_arg { name: 'sc' type: DT_FLOAT } " outs "}\n"
/* cond(i, v, sc) = i < 3; body(i, v, sc) = (i + 1, v * exp(-sc) + sc * 2, sc) */
#define LICM_FNS                                                                                                  \
    "function { " LOOP_SIG("lcond", "output_arg { name: 'r' type: DT_BOOL } ") ICONST("three", "3")    \
    "node_def { name: 'lt' op: 'Less' input: 'i' input: 'three:output:0' " TI "}\n"                               \
    "ret { key: 'r' value: 'lt:z:0' } }\n"                                                                        \
    "function { " LOOP_SIG("lbody", "output_arg { name: 'i2' type: DT_INT32 } output_arg { name: 'v2' type: "     \
                                    "DT_FLOAT } output_arg { name: 's2' type: DT_FLOAT } ")                       \
    ICONST("one", "1") FCONST("two", "2")                                                                         \
    "node_def { name: 'inc' op: 'AddV2' input: 'i' input: 'one:output:0' " TI "}\n"                               \
    "node_def { name: 'neg' op: 'Neg' input: 'sc' " TF "}\n"                                                      \
    "node_def { name: 'e' op: 'Exp' input: 'neg:y:0' " TF "}\n"                                                   \
    "node_def { name: 'k' op: 'Mul' input: 'sc' input: 'two:output:0' " TF "}\n"                                  \
    "node_def { name: 'mul' op: 'Mul' input: 'v' input: 'e:y:0' " TF "}\n"                                        \
    "node_def { name: 'add' op: 'AddV2' input: 'mul:z:0' input: 'k:z:0' " TF "}\n"                                \
    "node_def { name: 'sid' op: 'Identity' input: 'sc' " TF "}\n"                                                 \
    "ret { key: 'i2' value: 'inc:z:0' } ret { key: 'v2' value: 'add:z:0' } ret { key: 's2' value: 'sid:output:0' } " \
    "}\n"
#define LICM_LIB "library { " LICM_FNS "}\n"
#define LICM_GRAPH(extra)                                                                                         \
    PH("x") PH("s") INTC("i0", "0", "")                                                                           \
    "node { name: 'w' op: 'StatelessWhile' input: 'i0' input: 'x' input: 's' "                                    \
    "attr { key: 'T' value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } } "                          \
    "attr { key: 'cond' value { func { name: 'lcond' } } } attr { key: 'body' value { func { name: 'lbody' } } } " \
    "attr { key: 'output_shapes' value { list { shape { } shape { dim { size: 6 } } shape { } } } } "             \
    "attr { key: 'parallel_iterations' value { i: 10 } } }\n"                                                     \
    "node { name: 'y' op: 'Neg' input: 'w:1' " TF "}\n" extra LICM_LIB

static void run_licm(const gn_graph *g, const char *const *xn, size_t nx, float *out)
{
    float sv = 0.75f;
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, &sv, sizeof sv, 0, NULL)};
    const char *fn[2] = {"x", "s"};
    gn_tensor o[2];
    gn_pt_run_graph(g, fn, t, 2, xn, o, nx);
    for (size_t k = 0; k < nx; k++) {
        assert_int_equal(o[k].dtype, DT_FLOAT);
        memcpy(out + 6 * k, o[k].data, sizeof xs);
        gn_tensor_free(&o[k]);
    }
}

static void test_invariant_motion_functional(void **state)
{
    (void)state;
    /* a second user of the body (a direct call) must keep seeing the original */
    gn_graph *g = gn_pt_load_text(LICM_GRAPH(
        "node { name: 'direct' op: 'PartitionedCall' input: 'i0' input: 'x' input: 's' "
        "attr { key: 'Tin' value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } } "
        "attr { key: 'Tout' value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } } "
        "attr { key: 'f' value { func { name: 'lbody' } } } }\n"
        "node { name: 'z' op: 'Neg' input: 'direct:1' " TF "}\n"));
    gn_pt_preserve_list(g, "x,s,y,z");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, false); /* off unless AGGRESSIVE */
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    run_loop(&f, g, true);
    gn_pt_fx_expect_event(&f, "loop.invariant_motion_functional: w: 3 loop-invariant node(s) of body 'lbody' computed "
                              "once before the loop, 2 new loop variable(s); body 'lbody_licm_for_w', cond "
                              "'lcond_licm_for_w'");
    gn_pt_expect_dump(g, "x=Placeholder(); s=Placeholder(); i0=Const(); "
                         "w=StatelessWhile(i0, x, s, w/LoopOptimizer/k, w/LoopOptimizer/e); y=Neg(w:1); "
                         "direct=PartitionedCall(i0, x, s); z=Neg(direct:1); w/LoopOptimizer/two=Const(); "
                         "w/LoopOptimizer/neg=Neg(s); w/LoopOptimizer/k=Mul(s, w/LoopOptimizer/two); "
                         "w/LoopOptimizer/e=Exp(w/LoopOptimizer/neg)");
    gn__function *nb = gn__graph_find_function(g, "lbody_licm_for_w");
    gn__function *nc = gn__graph_find_function(g, "lcond_licm_for_w");
    assert_non_null(nb);
    assert_non_null(nc);
    gn_pt_expect_dump(nb->body, "i=_Arg(); v=_Arg(); sc=_Arg(); one=Const(); inc=AddV2(i, one); "
                                 "mul=Mul(v, loop_invariant_1); add=AddV2(mul, loop_invariant_0); sid=Identity(sc); "
                                 "_retval:i2=_Retval(inc); _retval:v2=_Retval(add); _retval:s2=_Retval(sid); "
                                 "loop_invariant_0=_Arg(); _retval:loop_invariant_0_out=_Retval(loop_invariant_0); "
                                 "loop_invariant_1=_Arg(); _retval:loop_invariant_1_out=_Retval(loop_invariant_1)");
    gn_pt_expect_dump(nc->body, "i=_Arg(); v=_Arg(); sc=_Arg(); three=Const(); lt=Less(i, three); "
                                 "_retval:r=_Retval(lt); loop_invariant_0=_Arg(); loop_invariant_1=_Arg()");
    /* the original body is untouched for the direct call */
    gn__function *ob = gn__graph_find_function(g, "lbody");
    assert_non_null(ob);
    assert_int_not_equal(gn__graph_find(ob->body, "neg"), GN_NONE);
    assert_int_equal(ob->def->signature->n_input_arg, 3);
    /* T, output_shapes: two more entries */
    gn_id w = gn__graph_find(g, "w");
    const Tensorflow__AttrValue *t = gn__node_attr(g, w, "T");
    assert_int_equal(t->list->n_type, 5);
    assert_int_equal(t->list->type[3], DT_FLOAT);
    assert_int_equal(t->list->type[4], DT_FLOAT);
    const Tensorflow__AttrValue *os = gn__node_attr(g, w, "output_shapes");
    assert_int_equal(os->list->n_shape, 5);
    assert_true(os->list->shape[3]->unknown_rank);
    assert_int_equal(os->list->shape[1]->n_dim, 1);
    gn_pt_check_valid(g, "functional invariant motion");
    /* the same values: y = -(((x e^-s + 2s) e^-s + 2s) e^-s + 2s) */
    const char *xn[2] = {"y", "z"};
    float a[12], b[12];
    run_licm(before, xn, 2, a);
    run_licm(g, xn, 2, b);
    double es = exp(-0.75), ks = 1.5;
    for (int k = 0; k < 12; k++) assert_float_equal(a[k], b[k], 1e-6f);
    for (int k = 0; k < 6; k++) {
        double v = xs[k];
        for (int it = 0; it < 3; it++) v = v * es + ks;
        assert_float_equal(b[k], (float)-v, 1e-5f);
        assert_float_equal(b[6 + k], (float)-(xs[k] * es + ks), 1e-5f);
    }
    /* nothing left to move: a second run changes nothing */
    run_loop(&f, g, false);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Through the whole pipeline (loop_optimization AGGRESSIVE): the same values,
 * the While calls the copies, and the originals, referenced by nothing any
 * more, are dropped by the function optimizer's next iteration. */
static void test_invariant_motion_functional_pipeline(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(LICM_GRAPH(""));
    gn_graph *before = gn_pt_clone(g);
    gn_options o;
    gn_options_init(&o);
    char err[256];
    assert_int_equal(gn_options_parse(&o, "{'loop_optimization': 'AGGRESSIVE', 'min_graph_nodes': -1}", err, sizeof err),
                     GN_OK);
    const char *xn[1] = {"y"}, *feeds[2] = {"x", "s"};
    gn_optimize_params pr;
    gn_optimize_params_init(&pr);
    pr.fetches = xn;
    pr.n_fetches = 1;
    pr.feeds = feeds;
    pr.n_feeds = 2;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &pr, &r), GN_OK);
    gn_report_free(r);
    gn_pt_check_valid(g, "functional invariant motion (pipeline)");
    gn_id w = gn__graph_find(g, "w");
    assert_int_not_equal(w, GN_NONE);
    assert_string_equal(gn__node_attr(g, w, "body")->func->name, "lbody_licm_for_w");
    assert_int_equal(g->nodes[w].n_in, 5);
    assert_null(gn__graph_find_function(g, "lbody"));
    assert_null(gn__graph_find_function(g, "lcond"));
    float a[6], b[6];
    run_licm(before, xn, 1, a);
    run_licm(g, xn, 1, b);
    for (int k = 0; k < 6; k++) assert_float_equal(a[k], b[k], 1e-6f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Inside a function body the While is refused (the rewrite adds functions
 * to the library, which a body's optimization cannot do). */
static void test_invariant_motion_functional_in_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") PH("s") "node { name: 'call' op: 'PartitionedCall' input: 'x' input: 's' "
        "attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT } } } "
        "attr { key: 'Tout' value { list { type: DT_FLOAT } } } attr { key: 'f' value { func { name: 'outer' } } } }\n"
        "library { function { signature { name: 'outer' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'b' "
        "type: DT_FLOAT } output_arg { name: 'o' type: DT_FLOAT } }\n" ICONST("z", "0")
        "node_def { name: 'w' op: 'StatelessWhile' input: 'z:output:0' input: 'a' input: 'b' "
        "attr { key: 'T' value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } } "
        "attr { key: 'cond' value { func { name: 'lcond' } } } attr { key: 'body' value { func { name: 'lbody' } } } }\n"
        "ret { key: 'o' value: 'w:output:1' } }\n" LICM_FNS "}\n");
    gn__function *outer = gn__graph_find_function(g, "outer");
    assert_non_null(outer);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "loop");
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    assert_false(gn_pt_fx_run_on(&f, gn__pass_loop, outer->body, "outer"));
    gn_pt_fx_expect_event(&f, "loop.invariant_motion_functional: w: not moved: the While is inside a function body "
                              "(a body cannot add the functions the rewrite needs)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- loop.const_var_functional --------------------------------------------------------------------- */
/* The LICM loop with its scale a Const: cond and body get it as a Const, the
 * loop variable goes (inputs, T, output_shapes, the While's output 2 read as
 * the Const), and the body's work on it is left for constant folding. */
#define CONST_GRAPH                                                                                              \
    PH("x") FLTC("s", "0.75") INTC("i0", "0", "")                                                                 \
    "node { name: 'w' op: 'StatelessWhile' input: 'i0' input: 'x' input: 's' "                                    \
    "attr { key: 'T' value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } } "                          \
    "attr { key: 'cond' value { func { name: 'lcond' } } } attr { key: 'body' value { func { name: 'lbody' } } } " \
    "attr { key: 'output_shapes' value { list { shape { } shape { dim { size: 6 } } shape { } } } } "             \
    "attr { key: '_num_original_outputs' value { i: 3 } } "                                                       \
    "attr { key: 'parallel_iterations' value { i: 10 } } }\n"                                                     \
    "node { name: 'y' op: 'Neg' input: 'w:1' " TF "}\n"                                                           \
    "node { name: 'q' op: 'Neg' input: 'w:2' " TF "}\n" LICM_LIB

static void run_const(const gn_graph *g, float *out)
{
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "q"};
    gn_tensor o[2];
    gn_pt_run_graph(g, fn, &t, 1, xn, o, 2);
    memcpy(out, o[0].data, sizeof xs);
    memcpy(out + 6, o[1].data, sizeof(float));
    gn_tensor_free(&o[0]);
    gn_tensor_free(&o[1]);
}

static void test_const_var_functional(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(CONST_GRAPH);
    gn_pt_preserve_list(g, "x,y,q");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    run_loop(&f, g, false); /* off unless AGGRESSIVE */
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    run_loop(&f, g, true);
    gn_pt_fx_expect_event(&f, "loop.const_var_functional: w: 1 of 3 loop variable(s) constant and returned unchanged: "
                              "Consts in body 'lbody_const_for_w' and cond 'lcond_const_for_w' (copies of 'lbody' and "
                              "its cond without them)");
    gn_pt_expect_dump(g, "x=Placeholder(); s=Const(); i0=Const(); w=StatelessWhile(i0, x); y=Neg(w:1); q=Neg(s)");
    gn__function *nb = gn__graph_find_function(g, "lbody_const_for_w");
    gn__function *nc = gn__graph_find_function(g, "lcond_const_for_w");
    assert_non_null(nb);
    assert_non_null(nc);
    gn_pt_expect_dump(nb->body, "i=_Arg(); v=_Arg(); sc=Const(); one=Const(); two=Const(); inc=AddV2(i, one); "
                                 "neg=Neg(sc); e=Exp(neg); k=Mul(sc, two); mul=Mul(v, e); add=AddV2(mul, k); "
                                 "sid=Identity(sc); _retval:i2=_Retval(inc); _retval:v2=_Retval(add)");
    gn_pt_expect_dump(nc->body, "i=_Arg(); v=_Arg(); three=Const(); lt=Less(i, three); _retval:r=_Retval(lt)");
    assert_int_equal(nb->def->signature->n_input_arg, 2);
    assert_int_equal(nb->def->signature->n_output_arg, 2);
    assert_int_equal(nc->def->signature->n_input_arg, 2);
    gn_id w = gn__graph_find(g, "w");
    const Tensorflow__AttrValue *t = gn__node_attr(g, w, "T");
    assert_int_equal(t->list->n_type, 2);
    assert_int_equal(t->list->type[1], DT_FLOAT);
    const Tensorflow__AttrValue *os = gn__node_attr(g, w, "output_shapes");
    assert_int_equal(os->list->n_shape, 2);
    assert_int_equal(os->list->shape[1]->n_dim, 1);
    assert_int_equal(gn__node_attr(g, w, "_num_original_outputs")->i, 2);
    gn_pt_check_valid(g, "constant loop variables");
    float a[7], b[7];
    run_const(before, a);
    run_const(g, b);
    for (int k = 0; k < 7; k++) assert_float_equal(a[k], b[k], 1e-6f);
    assert_float_equal(b[6], -0.75f, 0.0f);
    /* nothing left: a second run changes nothing */
    run_loop(&f, g, false);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Refused: a fetched While (its outputs keep their indices); a constant the body changes. */
static void test_const_var_functional_refusals(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(CONST_GRAPH);
    gn_pt_preserve_list(g, "x,y,q,w");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "loop");
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    gn_pt_fx_run(&f, gn__pass_loop, g);
    gn_pt_fx_expect_event(&f, "loop.const_var_functional: w: not pushed in: the While is preserved (its outputs keep "
                              "their indices)");
    /* s stays a loop variable (the invariant motion then moves the body's work on it out) */
    gn_id w = gn__graph_find(g, "w");
    assert_true(g->nodes[w].n_in >= 3);
    assert_int_equal(g->nodes[w].in[2].node, gn__graph_find(g, "s"));
    assert_string_equal(gn__node_attr(g, w, "body")->func->name, "lbody_licm_for_w");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    /* i0 is a Const too, but the body increments it */
    g = gn_pt_load_text(LICM_GRAPH(""));
    gn_pt_preserve_list(g, "x,s,y");
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "loop");
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    gn_pt_fx_run(&f, gn__pass_loop, g);
    gn_pt_fx_expect_event(&f, "loop.const_var_functional: w: not pushed in: no constant input is returned unchanged by "
                              "the body");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- corpus ---------------------------------------------------------------------------------------- */
static void test_corpus(void **state)
{
    (void)state;
    size_t done = 0, changed = 0;
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        char path[1024];
        if (!gn_test_corpus(gn_pt_corpus_models[i], path, sizeof path)) continue;
        for (int aggressive = 0; aggressive < 2; aggressive++) {
            gn_graph *g = NULL;
            if (gn_graph_load(path, NULL, &g) != GN_OK) {
                gn_graph_free(g);
                continue;
            }
            gn_pt_prepare(g);
            gn_pt_fx f;
            gn_pt_fx_init(&f, NULL);
            gn_pt_fx_pass(&f, "loop");
            f.c.toggle = aggressive ? GN_TOGGLE_AGGRESSIVE : GN_TOGGLE_DEFAULT;
            bool ch = gn_pt_fx_run(&f, gn__pass_loop, g);
            for (uint32_t k = 0; k < g->n_fns; k++)
                if (g->fns[k].body) ch |= gn_pt_fx_run_on(&f, gn__pass_loop, g->fns[k].body, gn__str(g, g->fns[k].name));
            gn_pt_check_valid(g, gn_pt_corpus_models[i]);
            changed += ch;
            done++;
            gn_pt_fx_free(&f);
            gn_graph_free(g);
        }
    }
    if (done) print_message("loop: %zu corpus runs, %zu changed something\n", done, changed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dead_branch_true),     cmocka_unit_test(test_dead_branch_false),
        cmocka_unit_test(test_dead_branch_control),  cmocka_unit_test(test_dead_branch_refusals),
        cmocka_unit_test(test_stack_push_removal),   cmocka_unit_test(test_functional_if),
        cmocka_unit_test(test_functional_case),      cmocka_unit_test(test_invariant_motion),
        cmocka_unit_test(test_invariant_motion_functional),
        cmocka_unit_test(test_invariant_motion_functional_pipeline),
        cmocka_unit_test(test_invariant_motion_functional_in_body),
        cmocka_unit_test(test_const_var_functional),
        cmocka_unit_test(test_const_var_functional_refusals),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
