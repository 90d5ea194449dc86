/* The dependency optimizer (src/optimizer/passes/dependency.c) and the debug
 * stripper (src/optimizer/passes/debug_stripper.c), one pattern at a time: a
 * small graph before, the exact graph after, the refusals with their reasons,
 * and the original and the rewritten graph run on the CPU backend on the same
 * feeds. Then every corpus model, with what the meta-optimizer preserves and,
 * where the CPU runtime runs it, with fetches given, checked numerically;
 * and a large synthetic graph for the transitive reduction's cost. */
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

/* ---- dependency.transitive_reduction ---------------------------------------------------- */
static void test_transitive_reduction(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("a", "Neg", "x") UN("b", "Exp", "a")
                            "node { name: 'c' op: 'Mul' input: 'b' input: 'x' input: '^a' " TF "}\n");
    gn_pt_preserve_list(g, "c");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "dependency");
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Neg(x); b=Exp(a); c=Mul(b, x)");
    gn_pt_fx_expect_event(&f, "dependency.transitive_reduction: c: dropped control input '^a' of 'c': another path from 'a' "
                     "already runs it first");
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"c"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    assert_false(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A path that ends in a data edge into a Merge orders nothing (the Merge may
 * fire on its other input): the control edge stays. */
static void test_transitive_reduction_merge(void **state)
{
    (void)state;
    const char *text = PH("x") PHB("p") "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
        UN("u", "Neg", "x") UN("w", "Exp", "u")
        "node { name: 'm' op: 'Merge' input: 'sw:1' input: 'w' input: '^u' " TF "attr { key: 'N' value { i: 2 } } }\n"
        UN("y", "Relu", "m");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); sw=Switch(x, p); u=Neg(x); w=Exp(u); m=Merge(sw:1, w, ^u); "
                    "y=Relu(m)");
    gn_pt_fx_expect_no_event(&f, "dependency.transitive_reduction");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- dependency.remove_noop ------------------------------------------------------------- */
static void test_remove_noop(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("a") PH("b") PH("x") "node { name: 'n' op: 'NoOp' input: '^a' input: '^b' }\n"
                            "node { name: 'c' op: 'Neg' input: 'x' input: '^n' " TF "}\n"
                            "node { name: 'n2' op: 'NoOp' input: '^a' input: '^b' }\n"
                            "node { name: 'c1' op: 'Neg' input: 'x' input: '^n2' " TF "}\n"
                            "node { name: 'c2' op: 'Exp' input: 'x' input: '^n2' " TF "}\n"
                            "node { name: 'c3' op: 'Abs' input: 'x' input: '^n2' " TF "}\n"
                            "node { name: 'n3' op: 'NoOp' input: '^a' }\n"
                            "node { name: 'c4' op: 'Relu' input: 'x' input: '^n3' " TF "}\n");
    gn_pt_preserve_list(g, "c,c1,c2,c3,c4,n3");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "a=Placeholder(); b=Placeholder(); x=Placeholder(); c=Neg(x, ^a, ^b); n2=NoOp(^a, ^b); "
                    "c1=Neg(x, ^n2); c2=Exp(x, ^n2); c3=Abs(x, ^n2); n3=NoOp(^a); c4=Relu(x, ^n3)");
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: n: bypassed NoOp 'n' (2 inputs, 1 consumers)");
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: n2: NoOp 'n2' kept: bypassing it would add edges (6 instead of 5)");
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: n3: NoOp 'n3' kept: it is preserved");
    float v = 2;
    gn_tensor t[3] = {gn_pt_view(DT_FLOAT, &v, 4, 0, NULL), gn_pt_view(DT_FLOAT, &v, 4, 0, NULL), gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6)};
    const char *fn[3] = {"a", "b", "x"}, *xn[5] = {"c", "c1", "c2", "c3", "c4"};
    gn_pt_check_same(before, g, fn, t, 3, xn, 5);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Nothing preserved: nothing is deleted. */
static void test_nothing_preserved(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("a") PH("x") "node { name: 'n' op: 'NoOp' input: '^a' }\n"
                            "node { name: 'c' op: 'Neg' input: 'x' input: '^n' " TF "}\n" UN("i", "Identity", "c"));
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_false(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: n: NoOp 'n' kept: nothing is preserved (no fetches given)");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: i: Identity 'i' kept: nothing is preserved (no fetches given), so "
                     "no node is deleted");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- dependency.remove_identity --------------------------------------------------------- */
static void test_remove_identity(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("q") PHB("p") UN("i", "Identity", "x") UN("r", "Relu", "i")
                            "node { name: 'z' op: 'Neg' input: 'q' input: '^i' " TF "}\n"
                            "node { name: 'i2' op: 'Identity' input: 'x' input: '^q' " TF "}\n"
                            UN("r2", "Exp", "i2")
                            "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
                            UN("t", "Identity", "sw:1") UN("f", "Identity", "sw:0")
                            "node { name: 'm' op: 'Merge' input: 'f' input: 't' " TF "attr { key: 'N' value { i: 2 } } }\n"
                            UN("y", "Relu", "m"));
    gn_pt_preserve_list(g, "r,z,r2,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); q=Placeholder(); p=Placeholder(); r=Relu(x); z=Neg(q, ^x); r2=Exp(x, ^q); "
                    "sw=Switch(x, p); m=Merge(sw, sw:1); y=Relu(m)");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: i: bypassed Identity 'i': its consumers now read 'x'");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: t: bypassed Identity 't': its consumers now read 'sw:1'");
    bool pv[2] = {true, false};
    float one = 1;
    for (int k = 0; k < 2; k++) {
        gn_tensor t[3] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, &one, 4, 0, NULL),
                          gn_pt_view(DT_BOOL, &pv[k], 1, 0, NULL)};
        const char *fn[3] = {"x", "q", "p"}, *xn[4] = {"r", "z", "r2", "y"};
        gn_pt_check_same(before, g, fn, t, 3, xn, 4);
    }
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A multi-input IdentityN goes when its edges do not grow (Grappler's count:
 * one per data input and per data consumer edge). */
static void test_remove_identity_n(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("a") PH("b")
                            "node { name: 'n' op: 'IdentityN' input: 'a' input: 'b' attr { key: 'T' value { list { "
                            "type: DT_FLOAT type: DT_FLOAT } } } }\n"
                            UN("y", "Neg", "n") UN("z", "Exp", "n:1")
                            "node { name: 'n2' op: 'IdentityN' input: 'a' input: 'b' attr { key: 'T' value { list { "
                            "type: DT_FLOAT type: DT_FLOAT } } } }\n"
                            "node { name: 'w' op: 'Mul' input: 'n2' input: 'n2:1' " TF "}\n");
    gn_pt_preserve_list(g, "y,z,w");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "a=Placeholder(); b=Placeholder(); y=Neg(a); z=Exp(b); n2=IdentityN(a, b); w=Mul(n2, n2:1)");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: n: bypassed IdentityN 'n': its consumers now read its 2 inputs");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: n2: IdentityN 'n2' kept: bypassing it would add edges (4 instead of 3)");
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6)};
    const char *fn[2] = {"a", "b"}, *xn[3] = {"y", "z", "w"};
    gn_pt_check_same(before, g, fn, t, 2, xn, 3);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_identity_refusals(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") PHB("p")
        "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { "
        "shape { } } } }\n"
        UN("iv", "Identity", "v") UN("rv", "Relu", "iv")
        "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
        UN("it", "Identity", "sw:1") UN("k", "Neg", "it")
        "node { name: 'kc' op: 'Exp' input: 'x' input: '^it' " TF "}\n"
        "node { name: 'en' op: 'Enter' input: 'x' " TF
        "attr { key: 'frame_name' value { s: 'f' } } attr { key: 'is_constant' value { b: true } } }\n"
        UN("ie", "Identity", "en") UN("ex", "Exit", "ie")
        "node { name: 'd' op: 'Placeholder' device: '/device:GPU:0' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'id' op: 'Identity' input: 'd' device: '/device:CPU:0' " TF "}\n"
        "node { name: 'd1' op: 'Neg' input: 'id' device: '/device:GPU:1' " TF "}\n"
        "node { name: 'd2' op: 'Exp' input: 'id' device: '/device:CPU:0' " TF "}\n");
    gn_pt_preserve_list(g, "rv,kc,ex,d1,d2");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_run(&f, gn__pass_dependency, g);
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: iv: Identity 'iv' kept: it reads variable 'v'");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: it: Identity 'it' kept: it follows a Switch and drives control "
                     "dependencies");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: ie: Identity 'ie' kept: it follows an Enter (frame boundary)");
    gn_pt_fx_expect_event(&f, "dependency.remove_identity: id: Identity 'id' kept: bypassing it would add device crossings");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- dependency.to_noop ----------------------------------------------------------------- */
static void test_to_noop(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("p") UN("a", "Relu", "x")
                            "node { name: 'y' op: 'Neg' input: 'p' input: '^a' " TF "}\n"
                            "node { name: 'rnd' op: 'RandomUniform' input: 's' attr { key: 'T' value { type: DT_INT32 } } "
                            "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
                            "node { name: 's' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
                            "'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }\n"
                            "node { name: 'y2' op: 'Exp' input: 'p' input: '^rnd' " TF "}\n");
    gn_pt_preserve_list(g, "y,y2");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); y=Neg(p, ^x); rnd=RandomUniform(s); s=Const(); y2=Exp(p, ^rnd)");
    gn_pt_fx_expect_event(&f, "dependency.to_noop: a: Relu 'a' became a NoOp: its outputs only drive control dependencies");
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: a: bypassed NoOp 'a' (1 inputs, 1 consumers)");
    gn_pt_fx_expect_event(&f, "dependency.to_noop: rnd: RandomUniform 'rnd' kept: it may have side effects (stateful, a "
                     "placeholder, or writes an input)");
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6)};
    const char *fn[2] = {"x", "p"}, *xn[1] = {"y"};
    gn_pt_check_same(before, g, fn, t, 2, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A data input from a Switch becomes a control input on an Identity of that
 * branch, never on the Switch. */
static void test_to_noop_switch(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PHB("p") "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
                            UN("a", "Relu", "sw:1") UN("b", "Neg", "sw:1")
                            "node { name: 'y' op: 'Exp' input: 'b' input: '^a' " TF "}\n");
    gn_pt_preserve_list(g, "y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); sw=Switch(x, p); b=Neg(sw:1); "
                    "y=Exp(b, ^ConstantFoldingCtrl/sw_1); ConstantFoldingCtrl/sw_1=Identity(sw:1)");
    gn_id id = gn__graph_find(g, "ConstantFoldingCtrl/sw_1");
    int dt = 0;
    assert_true(gn__attr_get_type(g, id, "T", &dt));
    assert_int_equal(dt, DT_FLOAT);
    gn_pt_fx_expect_event(&f, "dependency.to_noop: ConstantFoldingCtrl/sw_1: added Identity 'ConstantFoldingCtrl/sw_1' of "
                     "'sw:1' to carry a control dependency on one branch");
    bool pv = true;
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_BOOL, &pv, 1, 0, NULL)};
    const char *fn[2] = {"x", "p"}, *xn[1] = {"y"};
    gn_pt_check_same(before, g, fn, t, 2, xn, 1);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- dependency.const_control, dependency.dedup_control --------------------------------- */
static void test_const_control_and_dedup(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("p") CONST("k", "2")
                            "node { name: 'y' op: 'Neg' input: 'x' input: '^k' " TF "}\n"
                            "node { name: 'z' op: 'Mul' input: 'x' input: 'p' input: '^x' " TF "}\n");
    gn_pt_preserve_list(g, "y,z");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); y=Neg(x); z=Mul(x, p)");
    gn_pt_fx_expect_event(&f, "dependency.const_control: y: dropped control input '^k' of 'y': a Const without inputs runs "
                     "first anyway");
    gn_pt_fx_expect_event(&f, "dependency.const_control: k: deleted Const 'k': nothing uses it");
    gn_pt_fx_expect_event(&f, "dependency.dedup_control: z: dropped control input '^x' of 'z': 'x' is already a data input");
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6)};
    const char *fn[2] = {"x", "p"}, *xn[2] = {"y", "z"};
    gn_pt_check_same(before, g, fn, t, 2, xn, 2);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- dependency.group_cross_device ------------------------------------------------------ */
#define PHD(n, d) "node { name: '" n "' op: 'Placeholder' device: '" d "' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
static void test_group_cross_device(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PHD("x", "/job:w/replica:0/task:0/device:CPU:0") PHD("a", "/job:w/replica:0/task:1/device:GPU:0")
        PHD("b", "/job:w/replica:0/task:1/device:GPU:0") PHD("c", "/job:w/replica:0/task:1/device:GPU:0")
        "node { name: 'y' op: 'Neg' input: 'x' input: '^a' input: '^b' input: '^c' device: "
        "'/job:w/replica:0/task:0/device:CPU:0' " TF "}\n"
        PHD("a2", "/job:w/replica:0/task:1/device:GPU:0") PHD("b2", "/job:w/replica:0/task:1/device:GPU:1")
        "node { name: 'y2' op: 'Exp' input: 'x' input: '^a2' input: '^b2' device: "
        "'/job:w/replica:0/task:0/device:CPU:0' " TF "}\n");
    gn_pt_preserve_list(g, "y,y2");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_expect_dump(g, "x=Placeholder()@/job:w/replica:0/task:0/device:CPU:0; a=Placeholder()@/job:w/replica:0/task:1/device:GPU:0; "
                    "b=Placeholder()@/job:w/replica:0/task:1/device:GPU:0; c=Placeholder()@/job:w/replica:0/task:1/device:GPU:0; "
                    "y=Neg(x, ^GroupCrossDeviceControlEdges_0/y)@/job:w/replica:0/task:0/device:CPU:0; "
                    "a2=Placeholder()@/job:w/replica:0/task:1/device:GPU:0; b2=Placeholder()@/job:w/replica:0/task:1/device:GPU:1; "
                    "y2=Exp(x, ^GroupCrossDeviceControlEdges_0/y2)@/job:w/replica:0/task:0/device:CPU:0; "
                    "GroupCrossDeviceControlEdges_0/y=NoOp(^a, ^b, ^c)@/job:w/replica:0/task:1/device:GPU:0; "
                    "GroupCrossDeviceControlEdges_0/y2=NoOp(^a2, ^b2)@/job:w/replica:0/task:1/device:GPU:1");
    gn_pt_fx_expect_event(&f, "dependency.group_cross_device: y: control inputs of 'y' from device "
                     "'/job:w/replica:0/task:1/device:GPU:0' now come through NoOp 'GroupCrossDeviceControlEdges_0/y' (3)");
    gn_pt_fx_expect_event(&f, "dependency.group_cross_device: y2: control inputs of 'y2' from host "
                     "'/job:w/replica:0/task:1/device:GPU:1' now come through NoOp 'GroupCrossDeviceControlEdges_0/y2' (2)");
    gn_pt_fx_expect_event(&f, "dependency.remove_noop: GroupCrossDeviceControlEdges_0/y: NoOp 'GroupCrossDeviceControlEdges_0/y' "
                     "kept: bypassing it would add device crossings");
    assert_false(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- function bodies ---------------------------------------------------------------------- */
static void test_function_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") "node { name: 'call' op: 'f' input: 'x' }\n" UN("y", "Identity", "call")
        "library { function { signature { name: 'f' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'r' "
        "type: DT_FLOAT } is_stateful: true control_output: 'side' }\n"
        "  node_def { name: 'i' op: 'Identity' input: 'a' " TF "}\n"
        "  node_def { name: 'n' op: 'NoOp' input: '^i' }\n"
        "  node_def { name: 'k' op: 'Neg' input: 'i:output:0' " TF "}\n"
        "  ret { key: 'r' value: 'k:y:0' } control_ret { key: 'side' value: 'n' } } }\n");
    gn_graph *body = gn__graph_find_function(g, "f")->body;
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    assert_true(gn_pt_fx_run_on(&f, gn__pass_dependency, body, "f"));
    char *d = gn_pt_dump(body);
    if (strstr(d, "i=Identity") || !strstr(d, "n=NoOp(^a)") || !strstr(d, "k=Neg(a)")) fail_msg("body: %s", d);
    free(d);
    gn_pt_fx_expect_event(&f, "[f it1] dependency.remove_noop: n: NoOp 'n' kept: it is preserved");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- the debug stripper ------------------------------------------------------------------ */
static void test_debug_stripper(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        PH("x") PH("a") PHB("ok") PHB("p")
        "node { name: 'as' op: 'Assert' input: 'ok' input: 'x' attr { key: 'T' value { list { type: DT_FLOAT } } } "
        "attr { key: 'summarize' value { i: 3 } } attr { key: '_class' value { list { s: 'loc:@x' } } } }\n"
        "node { name: 'y' op: 'Neg' input: 'x' input: '^as' " TF "}\n"
        "node { name: 'cn' op: 'CheckNumerics' input: 'x' " TF "attr { key: 'message' value { s: 'bad' } } }\n"
        UN("y2", "Relu", "cn")
        "node { name: 'pr' op: 'Print' input: 'x' input: 'a' input: 'ok' " TF
        "attr { key: 'U' value { list { type: DT_FLOAT type: DT_BOOL } } } attr { key: 'message' value { s: 'm' } } "
        "attr { key: 'first_n' value { i: -1 } } attr { key: 'summarize' value { i: 3 } } }\n"
        UN("y3", "Exp", "pr")
        "node { name: 'str' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
        "tensor { dtype: DT_STRING tensor_shape { } string_val: 'hi' } } } }\n"
        "node { name: 'pv' op: 'PrintV2' input: 'str' attr { key: 'output_stream' value { s: 'stderr' } } attr { key: "
        "'end' value { s: '\\n' } } }\n"
        "node { name: 'y4' op: 'Abs' input: 'x' input: '^pv' " TF "}\n"
        "node { name: 'sw' op: 'Switch' input: 'x' input: 'p' " TF "}\n"
        UN("if", "Identity", "sw:0")
        "node { name: 'as1' op: 'Assert' input: 'ok' input: 'sw:1' attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
        "node { name: 'as0' op: 'Assert' input: 'ok' input: 'sw:0' attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
        "node { name: 'y5' op: 'Relu' input: 'x' input: '^as1' input: '^as0' input: '^if' " TF "}\n");
    gn_pt_preserve_list(g, "y,y2,y3,y4,y5,as");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "debug_stripper");
    assert_true(gn_pt_fx_run(&f, gn__pass_debug_stripper, g));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Placeholder(); ok=Placeholder(); p=Placeholder(); as=NoOp(^ok, ^x); "
                    "y=Neg(x, ^as); cn=Identity(x); y2=Relu(cn); pr=Identity(x, ^a, ^ok); y3=Exp(pr); str=Const(); "
                    "pv=NoOp(^str); y4=Abs(x, ^pv); sw=Switch(x, p); if=Identity(sw); "
                    "as1=NoOp(^ok, ^ConstantFoldingCtrl/sw_1); as0=NoOp(^ok, ^if); y5=Relu(x, ^as1, ^as0, ^if); "
                    "ConstantFoldingCtrl/sw_1=Identity(sw:1)");
    gn_id as = gn__graph_find(g, "as"), cn = gn__graph_find(g, "cn"), pr = gn__graph_find(g, "pr");
    assert_int_equal(g->nodes[as].n_attr, 1); /* _class stays */
    assert_non_null(gn__node_attr(g, as, "_class"));
    assert_int_equal(g->nodes[cn].n_attr, 1);
    assert_non_null(gn__node_attr(g, cn, "T"));
    assert_int_equal(g->nodes[pr].n_attr, 1);
    assert_non_null(gn__node_attr(g, pr, "T"));
    gn_pt_fx_expect_event(&f, "debug_stripper.assert: as: Assert 'as' became a NoOp; its 2 data inputs are now control inputs");
    gn_pt_fx_expect_event(&f, "debug_stripper.check_numerics: cn: CheckNumerics 'cn' became an Identity of its input");
    gn_pt_fx_expect_event(&f, "debug_stripper.print: pr: Print 'pr' became an Identity of its first input; 2 other inputs are "
                     "now control");
    gn_pt_fx_expect_event(&f, "debug_stripper.print_v2: pv: PrintV2 'pv' became a NoOp; its 1 data input is now control input");
    /* CheckNumerics has a CPU kernel: the same values before and after */
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    {
        const char *fn[1] = {"x"}, *xn[1] = {"y2"};
        gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    }
    /* Assert and Print have none: against the graph without them */
    gn_graph *ref = gn_pt_load_text(PH("x") UN("y", "Neg", "x") UN("y3", "Exp", "x") UN("y4", "Abs", "x"));
    float av = 1;
    bool okv = true;
    gn_tensor ts[3] = {t, gn_pt_view(DT_FLOAT, &av, 4, 0, NULL), gn_pt_view(DT_BOOL, &okv, 1, 0, NULL)};
    const char *xn[3] = {"y", "y3", "y4"}, *fn[3] = {"x", "a", "ok"};
    gn_tensor out[2][3];
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(ref, NULL, &s), GN_OK);
    assert_int_equal(gn_session_run(s, fn, ts, 1, xn, out[0], 3), GN_OK);
    gn_session_free(s);
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    if (gn_session_run(s, fn, ts, 3, xn, out[1], 3) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    gn_session_free(s);
    for (int i = 0; i < 3; i++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&out[1][i], &out[0][i], 0, &cr), GN_OK);
        assert_true(cr.match);
        gn_tensor_free(&out[0][i]);
        gn_tensor_free(&out[1][i]);
    }
    gn_graph_free(ref);
    /* then the dependency optimizer takes the NoOps away where it may */
    gn_pt_fx_pass(&f, "dependency");
    gn_pt_fx_run(&f, gn__pass_dependency, g);
    char *d = gn_pt_dump(g);
    /* 'as' is preserved: it stays, as a NoOp */
    if (!strstr(d, "as=NoOp(") || strstr(d, "pv=") || strstr(d, "as1=") || strstr(d, "as0=")) fail_msg("after: %s", d);
    free(d);
    /* a second stripping changes nothing */
    gn_pt_fx_pass(&f, "debug_stripper");
    assert_false(gn_pt_fx_run(&f, gn__pass_debug_stripper, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_debug_stripper_disabled(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'cn' op: 'CheckNumerics' input: 'x' " TF
                            "attr { key: 'message' value { s: 'bad' } } }\n" UN("y", "Relu", "cn"));
    gn_pt_fx f;
    gn_pt_fx_init(&f, "debug_stripper.check_numerics");
    assert_false(gn_pt_fx_run(&f, gn__pass_debug_stripper, g));
    gn_pt_expect_dump(g, "x=Placeholder(); cn=CheckNumerics(x); y=Relu(cn)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- size: transitive reduction on large graphs ---------------------------------------- */
static gn_graph *chain_graph(size_t n, bool fan)
{
    size_t cap = n * 200 + 4096, o = 0;
    char *t = malloc(cap);
    o += (size_t)snprintf(t + o, cap - o, PH("x0"));
    if (fan) o += (size_t)snprintf(t + o, cap - o, UN("s", "Neg", "x0"));
    for (size_t i = 1; i < n; i++) {
        o += (size_t)snprintf(t + o, cap - o, "node { name: 'x%zu' op: 'Neg' input: 'x%zu' ", i, i - 1);
        if (fan) o += (size_t)snprintf(t + o, cap - o, "input: '^s' ");
        else if (i >= 2) o += (size_t)snprintf(t + o, cap - o, "input: '^x%zu' ", i - 2);
        o += (size_t)snprintf(t + o, cap - o, TF "}\n");
    }
    gn_graph *g = gn_pt_load_text(t);
    free(t);
    return g;
}

static void test_transitive_reduction_large(void **state)
{
    (void)state;
    size_t n = 100000;
    for (int fan = 0; fan < 2; fan++) {
        gn_graph *g = chain_graph(n, fan);
        char last[32];
        snprintf(last, sizeof last, "x%zu", n - 1);
        gn_pt_preserve_list(g, last);
        gn_pt_fx f;
        gn_pt_fx_init(&f, NULL);
        f.r = (gn_report_free(f.r), NULL);
        f.c.report = NULL;
        assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
        int64_t us = f.us;
        size_t ctl = 0;
        for (gn_id i = 0; i < g->n_nodes; i++) ctl += g->nodes[i].n_ctrl;
        /* the chain orders everything: every control edge goes; in the fan the
         * one into x1 is left, and then 's' only drives that control edge, so
         * it becomes a NoOp and goes, and x1 already reads x0 */
        assert_int_equal(ctl, 0);
        if (fan) assert_int_equal(gn__graph_find(g, "s"), GN_NONE);
        print_message("dependency: %zu-node chain (%s) in %.1f ms\n", n, fan ? "one source, control edges to all"
                                                                             : "control edges two back", (double)us / 1000.0);
        gn_graph_free(g);
    }
}

/* Many sources whose control edges all reach far: the searches are capped, the
 * time stays linear, the edges stay. */
static void test_transitive_reduction_capped(void **state)
{
    (void)state;
    size_t n = 10000, cap = n * 200 + 4096, o = 0;
    char *t = malloc(cap);
    o += (size_t)snprintf(t + o, cap - o, PH("x0"));
    for (size_t i = 1; i < n; i++)
        o += (size_t)snprintf(t + o, cap - o, "node { name: 'x%zu' op: 'Neg' input: 'x%zu' " TF "}\n", i, i - 1);
    o += (size_t)snprintf(t + o, cap - o, "node { name: 'end' op: 'Neg' input: 'x%zu'", n - 1);
    for (size_t i = 0; i < n - 1; i += 2) o += (size_t)snprintf(t + o, cap - o, " input: '^x%zu'", i);
    o += (size_t)snprintf(t + o, cap - o, " " TF "}\n");
    gn_graph *g = gn_pt_load_text(t);
    free(t);
    gn_pt_preserve_list(g, "end");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_run(&f, gn__pass_dependency, g);
    int64_t us = f.us;
    print_message("dependency: %zu sources with far control edges in %.1f ms\n", n / 2, (double)us / 1000.0);
    gn_id end = gn__graph_find(g, "end");
    print_message("dependency: %u of %zu control edges left\n", g->nodes[end].n_ctrl, n / 2);
    gn_pt_fx_expect_event(&f, "dependency.transitive_reduction");
    gn_pt_fx_free(&f);
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
        gn_pt_fx_pass(&f, "debug_stripper");
        run_all(&f, gn__pass_debug_stripper, g);
        uint32_t mid = gn_pt_live_total(g);
        if (run_all(&f, gn__pass_debug_stripper, g)) fail_msg("%s: a second stripping changed the graph", gn_pt_corpus_models[i]);
        gn_pt_fx_pass(&f, "dependency");
        run_all(&f, gn__pass_dependency, g);
        uint32_t after = gn_pt_live_total(g);
        if (run_all(&f, gn__pass_dependency, g)) {
            char *t = gn_pt_fx_report_text(&f);
            fail_msg("%s: a second dependency run changed the graph\n%s", gn_pt_corpus_models[i], t);
        }
        print_message("debug_stripper+dependency %-90.90s %6u -> %6u -> %6u\n", gn_pt_corpus_models[i], before, mid, after);
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
        gn_pt_fx_pass(&f, "debug_stripper");
        gn_pt_fx_run(&f, gn__pass_debug_stripper, g);
        gn_pt_fx_pass(&f, "dependency");
        gn_pt_fx_run(&f, gn__pass_dependency, g);
        print_message("dependency (fetch %s) %-70.70s %6u -> %6u\n", m->fetch, m->path, n0, g->n_live);
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
        cmocka_unit_test(test_transitive_reduction),
        cmocka_unit_test(test_transitive_reduction_merge),
        cmocka_unit_test(test_remove_noop),
        cmocka_unit_test(test_nothing_preserved),
        cmocka_unit_test(test_remove_identity),
        cmocka_unit_test(test_remove_identity_n),
        cmocka_unit_test(test_identity_refusals),
        cmocka_unit_test(test_to_noop),
        cmocka_unit_test(test_to_noop_switch),
        cmocka_unit_test(test_const_control_and_dedup),
        cmocka_unit_test(test_group_cross_device),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_debug_stripper),
        cmocka_unit_test(test_debug_stripper_disabled),
        cmocka_unit_test(test_transitive_reduction_large),
        cmocka_unit_test(test_transitive_reduction_capped),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
