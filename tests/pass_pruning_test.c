/* The model pruning pass (src/optimizer/passes/pruning.c), one pattern at a
 * time: a small graph before, the exact graph after, the refusals with their
 * reasons, and the original and the pruned graph run on the CPU backend on
 * the same feeds. Then every corpus model: pruned with what the
 * meta-optimizer preserves (outputs and stateful nodes) and, where the CPU
 * runtime runs it, with fetches given, checked numerically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "opdef/registry.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_BOOL 10
#define PHB(n) "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
#define CONST(n, v)                                                                                                  \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"

static float xs[6] = {-1.5f, 2.0f, 0.25f, -3.0f, 4.0f, 0.5f};
static const int64_t d6[1] = {6};

/* ---- pruning.unreachable, pruning.identity, pruning.stop_gradient ------------------------ */
static void test_grappler_example(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("a", "Identity", "x") UN("s", "StopGradient", "a") UN("y", "Relu", "s")
                                UN("z", "Exp", "x"));
    gn_pt_preserve_list(g, "y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Relu(x)");
    gn_pt_fx_expect_event(&f, "pruning.unreachable: z: deleted Exp 'z': no preserved node needs it");
    gn_pt_fx_expect_event(&f, "pruning.identity: a: bypassed Identity 'a': its consumers now read 'x'");
    gn_pt_fx_expect_event(&f, "pruning.stop_gradient: s: bypassed StopGradient 's': its consumers now read 'x'");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    /* a second run changes nothing */
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Relu(x)");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Nothing preserved (fetches unknown): nothing is deleted, as Grappler. */
static void test_nothing_preserved(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("a", "Identity", "x") UN("y", "Relu", "a") UN("z", "Exp", "x"));
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Identity(x); y=Relu(a); z=Exp(x)");
    gn_pt_fx_expect_event(&f, "pruning.unreachable: nothing is preserved (no fetches given): the whole graph is kept");
    gn_pt_fx_expect_event(&f, "pruning.identity: a: Identity 'a' kept: nothing is preserved (no fetches given)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* What the meta-optimizer preserves without fetches: the outputs. Only the
 * trivial nodes in between go. */
static void test_outputs_preserved(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("a", "Identity", "x") UN("y", "Relu", "a") UN("z", "Exp", "x")
                                UN("o", "Identity", "z"));
    gn_pt_preserve_list(g, "y,o");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Relu(x); z=Exp(x); o=Identity(z)");
    gn_pt_fx_expect_event(&f, "pruning.identity: o: Identity 'o' kept: it is preserved");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- Identity refusals: Switch, Merge, Enter, control edges ------------------------------- */
static void test_identity_refusals(void **state)
{
    (void)state;
    const char *text = PH("x") PHB("p")
        "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
        UN("it", "Identity", "sw:1") UN("if", "Identity", "sw:0") UN("rt", "Relu", "it") UN("nf", "Neg", "if")
        UN("idm", "Identity", "nf")
        "node { name: 'm' op: 'Merge' input: 'rt' input: 'idm' " TF "attr { key: 'N' value { i: 2 } } }\n"
        "node { name: 'c' op: 'Identity' input: 'x' input: '^p' " TF "}\n"
        UN("e", "Identity", "x")
        "node { name: 'y' op: 'Mul' input: 'm' input: 'c' input: '^e' " TF "}\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_expect_event(&f, "pruning.identity: it: Identity 'it' kept: it follows a Switch");
    gn_pt_fx_expect_event(&f, "pruning.identity: if: Identity 'if' kept: it follows a Switch");
    gn_pt_fx_expect_event(&f, "pruning.identity: idm: Identity 'idm' kept: it feeds a Merge ('m')");
    gn_pt_fx_expect_event(&f, "pruning.identity: c: Identity 'c' kept: it has control inputs");
    gn_pt_fx_expect_event(&f, "pruning.identity: e: Identity 'e' kept: it drives control dependencies");
    char *d0 = gn_pt_dump(before), *d1 = gn_pt_dump(g);
    assert_string_equal(d0, d1);
    free(d0);
    free(d1);
    bool pv[2] = {true, false};
    for (int k = 0; k < 2; k++) {
        gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_BOOL, &pv[k], 1, 0, NULL)};
        const char *fn[2] = {"x", "p"}, *xn[1] = {"y"};
        gn_pt_check_same(before, g, fn, t, 2, xn, 1);
    }
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* An Identity right after an Enter stays (frame boundary). */
static void test_identity_after_enter(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x")
                            "node { name: 'en' op: 'Enter' input: 'x' " TF
                            "attr { key: 'frame_name' value { s: 'f' } } attr { key: 'is_constant' value { b: true } } }\n"
                            UN("i", "Identity", "en") UN("ex", "Exit", "i") UN("y", "Relu", "ex"));
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); en=Enter(x); i=Identity(en); ex=Exit(i); y=Relu(ex)");
    gn_pt_fx_expect_event(&f, "pruning.identity: i: Identity 'i' kept: it follows an Enter (frame boundary)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- device, reference, edge count --------------------------------------------------------- */
static void test_identity_other_device(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'x' op: 'Placeholder' device: '/device:GPU:0' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'i' op: 'Identity' input: 'x' device: '/device:CPU:0' " TF "}\n"
        "node { name: 'y' op: 'Relu' input: 'i' device: '/device:CPU:0' " TF "}\n");
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_expect_event(&f, "Identity 'i' kept: its input 'x' is on another device ('/device:GPU:0' vs '/device:CPU:0')");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

static void test_identity_ref_input(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { "
        "shape { } } } }\n"
        UN("i", "Identity", "v") UN("y", "Relu", "i"));
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "v=VariableV2(); i=Identity(v); y=Relu(i)");
    gn_pt_fx_expect_event(&f, "pruning.identity: i: Identity 'i' kept: its input 'v' is a reference");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* StopGradient with control inputs: its consumers inherit them; refused
 * when that would add edges. */
static void test_stop_gradient_controls(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("p") PH("q")
                            "node { name: 's' op: 'StopGradient' input: 'x' input: '^p' " TF "}\n"
                            UN("y", "Relu", "s")
                            "node { name: 's2' op: 'StopGradient' input: 'x' input: '^p' input: '^q' " TF "}\n"
                            UN("a", "Neg", "s2") UN("b", "Exp", "s2") UN("c", "Abs", "s2"));
    gn_pt_preserve_list(g, "y,a,b,c");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); q=Placeholder(); y=Relu(x, ^p); "
                    "s2=StopGradient(x, ^p, ^q); a=Neg(s2); b=Exp(s2); c=Abs(s2)");
    gn_pt_fx_expect_event(&f, "pruning.stop_gradient: s2: StopGradient 's2' kept: bypassing it would add edges (3 inputs x 3 "
                     "consumers > 3 + 3)");
    float one = 1;
    gn_tensor t[3] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, &one, 4, 0, NULL),
                      gn_pt_view(DT_FLOAT, &one, 4, 0, NULL)};
    const char *fn[3] = {"x", "p", "q"}, *xn[4] = {"y", "a", "b", "c"};
    gn_pt_check_same(before, g, fn, t, 3, xn, 4);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- pruning.noop, pruning.const_control_only, pruning.addn_single ------------------------- */
static void test_noop_const_addn(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'n' op: 'NoOp' }\n" CONST("k", "2") CONST("k2", "3")
                            "node { name: 'a' op: 'AddN' input: 'x' " TF "attr { key: 'N' value { i: 1 } } }\n"
                            "node { name: 'y' op: 'Mul' input: 'a' input: 'k2' input: '^n' input: '^k' " TF "}\n"
                            "node { name: 'keep' op: 'AddN' input: 'x' " TF "attr { key: 'N' value { i: 1 } } }\n");
    gn_pt_preserve_list(g, "y,keep");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); k2=Const(); y=Mul(x, k2); keep=AddN(x)");
    gn_pt_fx_expect_event(&f, "pruning.noop: n: deleted NoOp 'n': it has no inputs, so nothing waits on it");
    gn_pt_fx_expect_event(&f, "pruning.const_control_only: k: deleted Const 'k': it has no inputs and only control consumers (1)");
    gn_pt_fx_expect_event(&f, "pruning.addn_single: a: bypassed AddN 'a': its consumers now read 'x'");
    gn_pt_fx_expect_event(&f, "pruning.addn_single: keep: AddN 'keep' kept: it is preserved");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "keep"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 2);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- pruning.dedup_control ----------------------------------------------------------------- */
static void test_dedup_control(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("p") "node { name: 'y' op: 'Mul' input: 'x' input: 'p' input: '^x' " TF "}\n");
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); y=Mul(x, p)");
    gn_pt_fx_expect_event(&f, "pruning.dedup_control: y: dropped control input '^x' of 'y': 'x' is already a data input");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- pruning.identity_n_split -------------------------------------------------------------- */
static void test_identity_n_split(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") UN("a", "Neg", "x") UN("b", "Exp", "x") UN("c", "Abs", "x")
        "node { name: 'n' op: 'IdentityN' input: 'a' input: 'b' input: 'c' attr { key: 'T' value { list { type: "
        "DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } } }\n"
        UN("y", "Relu", "n") UN("z", "Relu", "n:1") UN("w", "Sqrt", "n:2") UN("w2", "Square", "n:2"));
    gn_pt_preserve_list(g, "y,w,w2");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Neg(x); c=Abs(x); n=IdentityN(a, c); y=Relu(n); w=Sqrt(n:1); w2=Square(n:1)");
    const Tensorflow__AttrValue *t = gn__node_attr(g, gn__graph_find(g, "n"), "T");
    assert_non_null(t);
    assert_int_equal(t->list->n_type, 2);
    gn_pt_fx_expect_event(&f, "pruning.identity_n_split: n: IdentityN 'n': kept 2 of its 3 ports; the others feed nothing that "
                     "is needed");
    gn_pt_fx_expect_event(&f, "pruning.unreachable: b: deleted Exp 'b'");
    gn_tensor tx = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[3] = {"y", "w", "w2"};
    gn_pt_check_same(before, g, fn, &tx, 1, xn, 3);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* An IdentityN reached through a control edge keeps all its ports. */
static void test_identity_n_control_reached(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") UN("a", "Neg", "x") UN("b", "Exp", "x")
        "node { name: 'n' op: 'IdentityN' input: 'a' input: 'b' attr { key: 'T' value { list { type: DT_FLOAT type: "
        "DT_FLOAT } } } }\n"
        "node { name: 'y' op: 'Relu' input: 'x' input: '^n' " TF "}\n");
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Neg(x); b=Exp(x); n=IdentityN(a, b); y=Relu(x, ^n)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- disabling ----------------------------------------------------------------------------- */
static void test_disabled_patterns(void **state)
{
    (void)state;
    const char *text = PH("x") UN("a", "Identity", "x") UN("s", "StopGradient", "a") UN("y", "Relu", "s")
        UN("z", "Exp", "x");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, "pruning.identity,pruning.unreachable");
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Identity(x); y=Relu(a); z=Exp(x)");
    gn_pt_fx_expect_no_event(&f, "pruning.identity");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "y");
    gn_pt_fx_init(&f, "pruning");
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- function bodies ----------------------------------------------------------------------- */
static const char *fn_graph =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'call' op: 'f' input: 'x' input: 'x' }\n"
    "node { name: 'y' op: 'Identity' input: 'call' " TF "}\n"
    "library { function { signature { name: 'f' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'unused' "
    "type: DT_FLOAT } output_arg { name: 'r' type: DT_FLOAT } is_stateful: true }\n"
    "  node_def { name: 'i' op: 'Identity' input: 'a' " TF "}\n"
    "  node_def { name: 'dead' op: 'Exp' input: 'a' " TF "}\n"
    "  node_def { name: 'rnd' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } } attr { "
    "key: 'dtype' value { type: DT_FLOAT } } }\n"
    "  node_def { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value "
    "{ tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }\n"
    "  node_def { name: 'n' op: 'Neg' input: 'i:output:0' " TF "}\n"
    "  ret { key: 'r' value: 'n:y:0' } } }\n";

static void test_function_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(fn_graph);
    gn__function *fnc = gn__graph_find_function(g, "f");
    assert_non_null(fnc);
    gn_graph *body = fnc->body;
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run_on(&f, gn__pass_pruning, body, "f"));
    /* the unused stateless node goes; the stateful one and its input stay;
     * the _Arg nodes stay even when unused; the Identity is bypassed */
    char *d = gn_pt_dump(body);
    if (strstr(d, "dead=") || strstr(d, "i=Identity") || !strstr(d, "rnd=RandomUniform(shape)") ||
        !strstr(d, "unused=_Arg()") || !strstr(d, "n=Neg(a)"))
        fail_msg("body: %s", d);
    free(d);
    gn_pt_fx_expect_event(&f, "[f it1] pruning.unreachable: dead: deleted Exp 'dead'");
    gn_pt_fx_free(&f);
    /* at the top level, an Identity of a call's output stays */
    gn_pt_preserve_list(g, "y");
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_expect_event(&f, "pruning.identity: y: Identity 'y' kept: it is preserved");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    g = gn_pt_load_text(fn_graph);
    gn_id y = gn__graph_find(g, "y");
    assert_int_equal(gn__node_add(g, "out", "Relu", NULL), GN_OK);
    gn_id out = gn__graph_find(g, "out");
    assert_int_equal(gn__node_add_input(g, out, (gn__edge){y, 0}), GN_OK);
    assert_int_equal(gn__node_set_attr(g, out, "T", gn__node_attr(g, y, "T")), GN_OK);
    gn_pt_preserve_list(g, "out");
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_pruning, g));
    gn_pt_fx_expect_event(&f, "pruning.identity: y: Identity 'y' kept: its input 'call' is a function call");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- depth: a chain of 200000 Identity nodes, no recursion ------------------------------- */
static void test_deep_chain(void **state)
{
    (void)state;
    size_t n = 200000, cap = n * 160 + 1024, o = 0;
    char *t = malloc(cap);
    o += (size_t)snprintf(t + o, cap - o, PH("x"));
    o += (size_t)snprintf(t + o, cap - o, UN("i0", "Identity", "x"));
    for (size_t i = 1; i < n; i++)
        o += (size_t)snprintf(t + o, cap - o, "node { name: 'i%zu' op: 'Identity' input: 'i%zu' " TF "}\n", i, i - 1);
    o += (size_t)snprintf(t + o, cap - o, "node { name: 'y' op: 'Relu' input: 'i%zu' " TF "}\n", n - 1);
    gn_graph *g = gn_pt_load_text(t);
    free(t);
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, "pruning.identity_n_split");
    f.r = (gn_report_free(f.r), NULL); /* no per-node events for 200000 nodes */
    f.c.report = NULL;
    assert_true(gn_pt_fx_run(&f, gn__pass_pruning, g));
    int64_t us = f.us;
    gn_pt_expect_dump(g, "x=Placeholder(); y=Relu(x)");
    print_message("pruning: 200000-node Identity chain in %.1f ms\n", (double)us / 1000.0);
    gn_graph_free(g);
}

/* ---- corpus -------------------------------------------------------------------------------- */

/* Runs the pass over the graph and every function body; returns whether
 * anything changed. */
static bool run_all(gn_pt_fx *f, gn__pass_fn fn, gn_graph *g)
{
    bool changed = gn_pt_fx_run(f, fn, g);
    for (uint32_t i = 0; i < g->n_fns; i++)
        if (g->fns[i].body) changed |= gn_pt_fx_run_on(f, fn, g->fns[i].body, gn__str(g, g->fns[i].name));
    return changed;
}

static void test_corpus(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        if (!gn_test_corpus(gn_pt_corpus_models[i], path, sizeof path)) fail_msg("corpus entry missing: %s", gn_pt_corpus_models[i]);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            gn_graph_free(g);
            continue;
        }
        gn_pt_mark_default_preserved(g);
        for (uint32_t k = 0; k < g->n_fns; k++)
            if (g->fns[k].body) {
                gn_pt_mark_default_preserved(g->fns[k].body);
                for (uint32_t j = 0; j < g->fns[k].n_control_ret; j++)
                    if (g->fns[k].control_ret_node[j] != GN_NONE)
                        g->fns[k].body->nodes[g->fns[k].control_ret_node[j]].flags |= GN__NODE_PRESERVE;
            }
        uint32_t before = gn_pt_live_total(g);
        gn_pt_fx f;
        gn_pt_fx_init(&f, NULL);
        run_all(&f, gn__pass_pruning, g);
        uint32_t after = gn_pt_live_total(g);
        if (run_all(&f, gn__pass_pruning, g)) fail_msg("%s: a second run changed the graph", gn_pt_corpus_models[i]);
        print_message("pruning %-100.100s %6u -> %6u\n", gn_pt_corpus_models[i], before, after);
        gn_pt_fx_free(&f);
        gn_graph_free(g);
    }
}

/* Models the CPU runtime runs: pruned for their fetches, then run. */
typedef struct runnable {
    const char *path, *feed, *fetch;
    int32_t rank;
    int64_t dims[3];
    const char *feed2; /* a second float scalar feed (dropout keep_prob) or NULL */
} runnable;

static const runnable runnables[] = {
    {"onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", "X", "output", 2, {2, 784, 0}, NULL},
    {"onnx__tensorflow-onnx/tests__models__lstm__frozen.pb", "X", "output", 2, {2, 784, 0}, "keep_prob"},
    {"onnx__tensorflow-onnx/tests__models__gru__frozen.pb", "X", "output", 2, {2, 784, 0}, "keep_prob"},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "Mfcc", "labels_softmax", 3, {1, 49, 10}, NULL},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", "Mfcc", "labels_softmax", 3, {1, 49, 10}, NULL},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", "Mfcc", "labels_softmax", 3, {1, 25, 10}, NULL},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", "Mfcc", "labels_softmax", 3, {1, 25, 10}, NULL},
};

static void test_corpus_numeric(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    for (size_t i = 0; i < sizeof runnables / sizeof runnables[0]; i++) {
        const runnable *m = &runnables[i];
        if (!gn_test_corpus(m->path, path, sizeof path)) continue;
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", m->path, gn_graph_errmsg(g));
        gn_pt_preserve_list(g, m->fetch);
        gn_pt_preserve_list(g, m->feed);
        if (m->feed2) gn_pt_preserve_list(g, m->feed2);
        gn_graph *before = gn_pt_clone(g);
        uint32_t n0 = g->n_live;
        gn_pt_fx f;
        gn_pt_fx_init(&f, NULL);
        gn_pt_fx_run(&f, gn__pass_pruning, g);
        print_message("pruning (fetch %s) %-70.70s %6u -> %6u\n", m->fetch, m->path, n0, g->n_live);
        int64_t numel = 1;
        for (int32_t k = 0; k < m->rank; k++) numel *= m->dims[k];
        float *x = malloc((size_t)numel * sizeof *x);
        uint32_t seed = 7;
        for (int64_t k = 0; k < numel; k++) {
            seed = seed * 1664525u + 1013904223u;
            x[k] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * (m->rank == 3 ? 20.0f : 1.0f);
        }
        float one = 1.0f;
        gn_tensor t[2] = {gn_pt_view(DT_FLOAT, x, (size_t)numel * sizeof *x, m->rank, m->dims), gn_pt_view(DT_FLOAT, &one, 4, 0, NULL)};
        const char *fn[2] = {m->feed, m->feed2}, *xn[1] = {m->fetch};
        gn_pt_check_same(before, g, fn, t, m->feed2 ? 2 : 1, xn, 1);
        free(x);
        gn_pt_fx_free(&f);
        gn_graph_free(before);
        gn_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grappler_example),
        cmocka_unit_test(test_nothing_preserved),
        cmocka_unit_test(test_outputs_preserved),
        cmocka_unit_test(test_identity_refusals),
        cmocka_unit_test(test_identity_after_enter),
        cmocka_unit_test(test_identity_other_device),
        cmocka_unit_test(test_identity_ref_input),
        cmocka_unit_test(test_stop_gradient_controls),
        cmocka_unit_test(test_noop_const_addn),
        cmocka_unit_test(test_dedup_control),
        cmocka_unit_test(test_identity_n_split),
        cmocka_unit_test(test_identity_n_control_reached),
        cmocka_unit_test(test_disabled_patterns),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
