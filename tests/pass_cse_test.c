/* Common subgraph elimination (src/optimizer/passes/cse.c): per pattern a
 * graph before, the exact graph after, the refusals with their reasons, and a
 * numerical check on the CPU backend; then every corpus model (top level and
 * function bodies, with the meta-optimizer's default preservation), which must
 * stay valid with exact fanouts and not change on a second run; the golden
 * models run before and after; and a large synthetic graph for time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "opdef/registry.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3

/* Runs the pass over g (a body when fn is set) and compacts, as the meta-optimizer does. */
static bool run_pass_on(gn_graph *g, const gn_graph *lib, const char *fn, gn_report *r, const char *disabled)
{
    return gn_pt_run_pass_on(gn__pass_cse, "common_subgraph_elimination", g, lib, fn, r, disabled, GN_TOGGLE_DEFAULT);
}

/* ---- helpers -------------------------------------------------------------------------------- */
static bool run_pass(gn_graph *g, gn_report *r, const char *disabled)
{
    return run_pass_on(g, g, NULL, r, disabled);
}

#define UNARY(name, op, in) \
    "node { name: '" name "' op: '" op "' input: '" in "' attr { key: 'T' value { type: DT_FLOAT } } }\n"
#define BINARY(name, op, a, b) \
    "node { name: '" name "' op: '" op "' input: '" a "' input: '" b "' attr { key: 'T' value { type: DT_FLOAT } } }\n"
#define DIM2 "dim { size: 2 } dim { size: 3 }"

/* ---- cse.dedup -------------------------------------------------------------------------------- */
/* docs/reference_grappler.md §3.4's example: Mul(x,y) and Mul(y,x) are one value; Add(a,b) becomes Add(a,a). */
static void test_commutative(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) PH_SHAPE("y", DIM2) BINARY("a", "Mul", "x", "y") BINARY("b", "Mul", "y", "x")
        BINARY("c", "AddV2", "a", "b") BINARY("d", "Sub", "x", "y") BINARY("e", "Sub", "y", "x")
        BINARY("f", "AddV2", "d", "e");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "c");
    gn_pt_preserve(g, "f");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", DIM2) PH_SHAPE("y", DIM2) BINARY("a", "Mul", "x", "y") BINARY("c", "AddV2", "a", "a")
                        BINARY("d", "Sub", "x", "y") BINARY("e", "Sub", "y", "x") BINARY("f", "AddV2", "d", "e"));
    gn_pt_expect_report(r, "cse.dedup: b: 'b' merged into 'a'");
    gn_pt_expect_no_report(r, "'e'");   /* Sub is not commutative: not even a candidate */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0.5f, -1, 2, 7, -3, 0.25f};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[2] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims), gn_pt_view(DT_FLOAT, y, sizeof y, 2, dims)};
    const char *fn[2] = {"x", "y"}, *xn[2] = {"c", "f"};
    gn_pt_expect_same_results(orig, g, fn, ft, 2, xn, 2, 8);
    /* a second run finds nothing */
    assert_false(run_pass(g, NULL, NULL));
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Chains collapse in one sweep: Neg(Exp(x)) twice. */
static void test_chain(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) UNARY("a1", "Exp", "x") UNARY("b1", "Exp", "x") UNARY("a2", "Neg", "a1")
        UNARY("b2", "Neg", "b1") UNARY("a3", "Tanh", "a2") UNARY("b3", "Tanh", "b2") BINARY("out", "Sub", "a3", "b3");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "out");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", DIM2) UNARY("a1", "Exp", "x") UNARY("a2", "Neg", "a1") UNARY("a3", "Tanh", "a2")
                        BINARY("out", "Sub", "a3", "a3"));
    gn_pt_expect_report(r, "'b1' merged into 'a1'");
    gn_pt_expect_report(r, "'b2' merged into 'a2'");
    gn_pt_expect_report(r, "'b3' merged into 'a3'");
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"out"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 8);
    assert_false(run_pass(g, NULL, NULL));
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Control inputs compare as a set; different sets, attrs or devices keep both. */
static void test_control_attrs_device(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) "node { name: 'p' op: 'NoOp' }\nnode { name: 'q' op: 'NoOp' input: '^x' }\n"
        "node { name: 'i1' op: 'Identity' input: 'x' input: '^p' input: '^q' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i2' op: 'Identity' input: 'x' input: '^q' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i3' op: 'Identity' input: 'x' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'l1' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.2 } } }\n"
        "node { name: 'l2' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.3 } } }\n"
        "node { name: 'r1' op: 'Relu' input: 'x' device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'r2' op: 'Relu' input: 'x' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'o' op: 'AddN' input: 'i1' input: 'i2' input: 'i3' input: 'l1' input: 'l2' input: 'r1' input: 'r2' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 7 } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "o");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", DIM2) "node { name: 'p' op: 'NoOp' }\nnode { name: 'q' op: 'NoOp' input: '^x' }\n"
        "node { name: 'i1' op: 'Identity' input: 'x' input: '^p' input: '^q' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i3' op: 'Identity' input: 'x' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'l1' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.2 } } }\n"
        "node { name: 'l2' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.3 } } }\n"
        "node { name: 'r1' op: 'Relu' input: 'x' device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'r2' op: 'Relu' input: 'x' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'o' op: 'AddN' input: 'i1' input: 'i1' input: 'i3' input: 'l1' input: 'l2' input: 'r1' input: 'r2' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 7 } } }\n");
    gn_pt_expect_report(r, "'i2' merged into 'i1'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* A node with several outputs: consumers of each port move to the survivor. */
static void test_multi_output(void **state)
{
    (void)state;
#define SPLIT(name) \
    "node { name: '" name "' op: 'Split' input: 'axis' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } " \
    "attr { key: 'num_split' value { i: 3 } } }\n"
    const char *head = "node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                       "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }\n"
        PH_SHAPE("x", "dim { size: 2 } dim { size: 6 }");
    char text[4096], want[4096];
    snprintf(text, sizeof text, "%s%s%s%s%s", head, SPLIT("s1"), SPLIT("s2"),
             BINARY("m", "Mul", "s1:1", "s2:2"), BINARY("n", "Sub", "s2:0", "s2:1"));
    snprintf(want, sizeof want, "%s%s%s%s", head, SPLIT("s1"), BINARY("m", "Mul", "s1:1", "s1:2"),
             BINARY("n", "Sub", "s1", "s1:1"));
#undef SPLIT
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "m");
    gn_pt_preserve(g, "n");
    gn_graph *orig = gn_pt_clone(g);
    assert_true(run_pass(g, NULL, NULL));
    gn_pt_expect_graph(g, want);
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i * 0.5f - 2.0f;
    int64_t dims[2] = {2, 6};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[2] = {"m", "n"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 2, 8);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* ---- cse.dedup_const --------------------------------------------------------------------------- */
#define CONSTF(name, tensor) \
    "node { name: '" name "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } " \
    "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } " tensor " } } } }\n"

static void test_const(void **state)
{
    (void)state;
    /* the same value written as tensor_content and as float_val; a third with another value;
     * the short form (one value repeated) equals the full one */
    const char *text = PH_SHAPE("x", "dim { size: 3 }")
        CONSTF("c1", "tensor_content: '\\000\\000\\200?\\000\\000\\200?\\000\\000\\200?'")
        CONSTF("c2", "float_val: 1 float_val: 1 float_val: 1") CONSTF("c3", "float_val: 1")
        CONSTF("c4", "float_val: 2") BINARY("a", "Mul", "x", "c1") BINARY("b", "Mul", "x", "c2")
        BINARY("c", "Mul", "x", "c3") BINARY("d", "Mul", "x", "c4")
        "node { name: 'o' op: 'AddN' input: 'a' input: 'b' input: 'c' input: 'd' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 4 } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "o");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", "dim { size: 3 }")
        CONSTF("c1", "tensor_content: '\\000\\000\\200?\\000\\000\\200?\\000\\000\\200?'") CONSTF("c4", "float_val: 2")
        BINARY("a", "Mul", "x", "c1") BINARY("d", "Mul", "x", "c4")
        "node { name: 'o' op: 'AddN' input: 'a' input: 'a' input: 'a' input: 'd' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 4 } } }\n");
    gn_pt_expect_report(r, "cse.dedup_const: c2: 'c2' merged into 'c1'");
    gn_pt_expect_report(r, "cse.dedup_const: c3: 'c3' merged into 'c1'");
    gn_pt_expect_report(r, "cse.dedup: b: 'b' merged into 'a'");
    float x[3] = {1.5f, -2, 3};
    int64_t dims[1] = {3};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 1, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"o"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 8);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);

    /* with cse.dedup_const disabled, constants stay, and so does everything reading them */
    g = gn_pt_load_text(text);
    gn_pt_preserve(g, "o");
    assert_false(run_pass(g, NULL, "cse.dedup_const"));
    assert_int_equal(g->n_live, 10);
    gn_graph_free(g);
    /* the whole pass disabled */
    g = gn_pt_load_text(text);
    assert_false(run_pass(g, NULL, "cse"));
    gn_graph_free(g);
}

/* Big constants: hashed by samples, compared in full; a one-byte difference keeps both. */
static void test_big_const(void **state)
{
    (void)state;
    const size_t n = 300000;
    gn__buf b;
    gn__buf_init(&b);
    const char *names[3] = {"k1", "k2", "k3"};
    for (int k = 0; k < 3; k++) {
        gn__buf_printf(&b, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                           "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: %zu } } "
                           "tensor_content: '", names[k], n);
        for (size_t i = 0; i < n; i++) {
            /* k3 differs from k1 in one element in the middle */
            unsigned v = (unsigned)(i * 2654435761u) ^ (k == 2 && i == n / 2 + 7 ? 1u : 0u);
            for (int j = 0; j < 4; j++) gn__buf_printf(&b, "\\%03o", (v >> (8 * j)) & 0xff);
        }
        gn__buf_puts(&b, "' } } } }\n");
    }
    gn__buf_puts(&b, "node { name: 'o' op: 'AddN' input: 'k1' input: 'k2' input: 'k3' "
                     "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 3 } } }\n");
    char *text = gn__buf_take(&b);
    gn_graph *g = gn_pt_load_text(text);
    free(text);
    gn_pt_preserve(g, "o");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    assert_int_equal(g->n_live, 3);
    assert_int_not_equal(gn__graph_find(g, "k3"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "k2"), GN_NONE);
    gn_pt_expect_report(r, "'k2' merged into 'k1'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* Big constants given by one typed field (too big to decode for comparing):
 * compared by that field, which is comparing their encodings. k2 equals k1;
 * k3 differs in one element that the sampled hash does not read; k4 has k1's
 * values in another shape; k5 has them as tensor_content (another encoding,
 * kept apart as before). */
static void test_big_typed_const(void **state)
{
    (void)state;
    const size_t n = 5000; /* 20000 bytes: hashed by samples */
    gn__buf b;
    gn__buf_init(&b);
    const char *names[5] = {"k1", "k2", "k3", "k4", "k5"};
    for (int k = 0; k < 5; k++) {
        gn__buf_printf(&b, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                           "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { %s } %s",
                       names[k], k == 3 ? "dim { size: 50 } dim { size: 100 }" : "dim { size: 5000 }",
                       k == 4 ? "tensor_content: '" : "");
        for (size_t i = 0; i < n; i++) {
            /* element 260 (bytes 1040..1043) lies between the first two sampled windows */
            unsigned v = (unsigned)(i * 2654435761u) >> 9;
            float f = (float)v + (k == 2 && i == 260 ? 0.5f : 0.0f);
            if (k == 4) {
                uint32_t u;
                memcpy(&u, &f, sizeof u);
                for (int j = 0; j < 4; j++) gn__buf_printf(&b, "\\%03o", (u >> (8 * j)) & 0xff);
            } else {
                gn__buf_printf(&b, "float_val: %.9g ", (double)f);
            }
        }
        gn__buf_puts(&b, k == 4 ? "' } } } }\n" : "} } } }\n");
    }
    gn__buf_puts(&b, "node { name: 'o' op: 'IdentityN' input: 'k1' input: 'k2' input: 'k3' input: 'k4' input: 'k5' "
                     "attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT "
                     "type: DT_FLOAT } } } }\n");
    char *text = gn__buf_take(&b);
    gn_graph *g = gn_pt_load_text(text);
    free(text);
    gn_pt_preserve(g, "o");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    assert_int_equal(g->n_live, 5);
    assert_int_equal(gn__graph_find(g, "k2"), GN_NONE);
    assert_int_not_equal(gn__graph_find(g, "k3"), GN_NONE);
    assert_int_not_equal(gn__graph_find(g, "k4"), GN_NONE);
    assert_int_not_equal(gn__graph_find(g, "k5"), GN_NONE);
    gn_pt_expect_report(r, "'k2' merged into 'k1'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- refusals ------------------------------------------------------------------------------- */
static void test_refusals(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2)
        "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
        "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 3 } } } }\n"
        "node { name: 'ru1' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } } "
        "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'ru2' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } } "
        "attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'shape' value { shape { " DIM2 " } } } }\n"
        "node { name: 'v2' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'shape' value { shape { " DIM2 " } } } }\n"
        UNARY("rd1", "Identity", "v") UNARY("rd2", "Identity", "v")
        "node { name: 'e1' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        "node { name: 'e2' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        UNARY("p1", "Relu", "x") UNARY("p2", "Relu", "x")
        "node { name: 'u1' op: 'SomeUnknownOp' input: 'x' }\nnode { name: 'u2' op: 'SomeUnknownOp' input: 'x' }\n"
        "node { name: 'as1' op: 'Assert' input: 'b' input: 'x' attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
        "node { name: 'as2' op: 'Assert' input: 'b' input: 'x' attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
        "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } "
        "attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    const char *keep[] = {"ru1", "ru2", "rd1", "rd2", "e1", "e2", "p1", "p2", "u1", "u2", "v", "v2"};
    gn_pt_preserve(g, "p1");
    gn_pt_preserve(g, "p2");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    /* everything stays but one Assert */
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) assert_int_not_equal(gn__graph_find(g, keep[i]), GN_NONE);
    assert_int_equal(gn__graph_find(g, "as2"), GN_NONE);
    gn_pt_expect_report(r, "cse.dedup: ru2: 'ru2' computes the same as 'ru1' but is not merged: its op is stateful");
    gn_pt_expect_report(r, "cse.dedup: rd2: 'rd2' computes the same as 'rd1' but is not merged: it reads a ref tensor (a "
                     "variable) whose value may change between reads");
    gn_pt_expect_report(r, "cse.dedup: e2: 'e2' computes the same as 'e1' but is not merged: Enter and Exit delimit a loop frame");
    gn_pt_expect_report(r, "cse.dedup: p2: 'p2' computes the same as 'p1' but is not merged: both are preserved");
    gn_pt_expect_report(r, "cse.dedup: u2: 'u2' computes the same as 'u1' but is not merged: its op is not registered, so "
                     "its side effects are unknown");
    gn_pt_expect_report(r, "'as2' merged into 'as1'");   /* Grappler: Assert and Print are not really stateful */
    gn_pt_expect_no_report(r, "v2:");                    /* variables are not candidates at all */
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_report_free(r);
    gn_graph_free(g);
}

/* A preserved node is never removed but absorbs its duplicate, even a node
 * with a smaller id; without preservation the smaller id survives. */
static void test_preserved_survivor(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) UNARY("a", "Relu", "x") UNARY("b", "Relu", "x") UNARY("ca", "Neg", "a")
        UNARY("cb", "Neg", "b") BINARY("o", "Sub", "ca", "cb");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "b");
    gn_pt_preserve(g, "o");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", DIM2) UNARY("b", "Relu", "x") UNARY("ca", "Neg", "b") BINARY("o", "Sub", "ca", "ca"));
    gn_pt_expect_report(r, "'a' merged into 'b'");
    gn_pt_expect_report(r, "'cb' merged into 'ca'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* Without preservation the smaller id survives, even when the larger was
 * visited first (q and p become equal only after a2 merged into a1). */
static void test_survivor_smaller_id(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) UNARY("a1", "Exp", "x") UNARY("a2", "Exp", "x") UNARY("q", "Neg", "a2")
        UNARY("p", "Neg", "a1") BINARY("o", "Sub", "p", "q");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "o");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", DIM2) UNARY("a1", "Exp", "x") UNARY("q", "Neg", "a1") BINARY("o", "Sub", "q", "q"));
    gn_pt_expect_report(r, "'a2' merged into 'a1'");
    gn_pt_expect_report(r, "'p' merged into 'q'");
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"o"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 8);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Nodes that feed an in-place op (through ops that may forward their buffer) are not merged. */
static void test_inplace(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", DIM2) UNARY("a1", "Identity", "x") UNARY("a2", "Identity", "x")
        "node { name: 'i' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
        "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n"
        "node { name: 'v' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 3 } } float_val: 1 } } } }\n"
        "node { name: 'ip1' op: 'InplaceAdd' input: 'a1' input: 'i' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'ip2' op: 'InplaceAdd' input: 'a2' input: 'i' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "ip1");
    gn_pt_preserve(g, "ip2");
    gn_report *r = gn_pt_new_report();
    assert_false(run_pass(g, r, NULL));
    gn_pt_expect_report(r, "'a2' computes the same as 'a1' but is not merged: it feeds an op that updates its input in place");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- corpus, golden models, scale -------------------------------------------------------------- */
/* The pass over the top level and every body, as the meta-optimizer runs it. */
static bool run_all(gn_graph *g, gn_report *r)
{
    bool ch = run_pass_on(g, g, NULL, r, NULL);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (fn->body) ch |= run_pass_on(fn->body, g, gn__str(g, fn->name), r, NULL);
    }
    return ch;
}

static void visit_corpus(const char *dir)
{
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out,
                                "cd '%s' && { find . -name saved_model.pb -o -name saved_model.pbtxt | xargs -r -n1 dirname; "
                                "find . \\( -name '*.pb' -o -name '*.pbtxt' -o -name '*.pbtxt.gz' \\) ! -name saved_model.pb "
                                "! -name saved_model.pbtxt ! -name fingerprint.pb ! -name keras_metadata.pb "
                                "! -name tfhub_module.pb ! -path '*/variables/*' ! -path '*/assets/*'; } | sort",
                                dir),
                     0);
    char *save = NULL;
    size_t models = 0;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, line + 2);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            gn_graph_free(g);
            continue;
        }
        models++;
        gn_pt_prepare(g);
        uint32_t before = gn_pt_live_total(g);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ch = run_all(g, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gn_pt_check_valid(g, line);
        uint32_t after = gn_pt_live_total(g);
        if (run_all(g, NULL)) fail_msg("%s: a second run changed the graph", line);
        print_message("  %-110s %6u -> %6u nodes%s (%.2f ms)\n", line + 2, before, after, ch ? "" : " (unchanged)",
                      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
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
        char path[4096];
        if (!strncmp(m[i].graph, "corpus/", 7)) {
            if (!gn_test_corpus(m[i].graph + 7, path, sizeof path)) continue;
        } else {
            gn_test_data(m[i].graph, path, sizeof path);
        }
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", path, gn_graph_errmsg(g));
        gn_tensor feeds[4];
        const char *fn[4], *xn[4];
        for (size_t k = 0; k < m[i].nf; k++) {
            char fp[4096], rel[1024], err[256];
            snprintf(rel, sizeof rel, "golden/%s", m[i].feed_file[k]);
            gn_test_data(rel, fp, sizeof fp);
            if (gn_npy_read(fp, &feeds[k], err, sizeof err) != GN_OK) fail_msg("%s", err);
            fn[k] = m[i].feed[k];
            char node[512];
            snprintf(node, sizeof node, "%s", fn[k]);
            node[strcspn(node, ":")] = 0;
            gn_pt_preserve(g, node);
        }
        for (size_t k = 0; k < m[i].nx; k++) {
            xn[k] = m[i].fetch[k];
            char node[512];
            snprintf(node, sizeof node, "%s", xn[k]);
            node[strcspn(node, ":")] = 0;
            gn_pt_preserve(g, node);
        }
        gn_graph *orig = gn_pt_clone(g);
        uint32_t before = gn_pt_live_total(g);
        run_all(g, NULL);
        gn_pt_check_valid(g, m[i].name);
        print_message("  %-20s %6u -> %6u nodes\n", m[i].name, before, gn_pt_live_total(g));
        gn_pt_expect_same_results(orig, g, fn, feeds, m[i].nf, xn, m[i].nx, 8);
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
        gn_graph_free(orig);
        gn_graph_free(g);
    }
}

/* Corpus models the CPU runtime runs (the golden models are above): fed with
 * deterministic pseudo-random data, before and after. lstm_layer_inference
 * keeps its inputs in Variables: they are fed (the graph is cut there). */
typedef struct runnable {
    const char *path, *feed, *fetch;
    int32_t rank;
    int64_t dims[3];
} runnable;

static const runnable runnables[] = {
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", "Mfcc", "labels_softmax", 3, {1, 49, 10}},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", "Mfcc", "labels_softmax", 3, {1, 25, 10}},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", "Mfcc", "labels_softmax", 3, {1, 25, 10}},
    {"tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt", NULL, "lstm_4/out", 0, {0}},
};

static float *random_floats(int64_t n, uint32_t seed, float scale)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    for (int64_t k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * scale;
    }
    return x;
}

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
        gn_tensor ft[16];
        float *bufs[16];
        const char *fn[16];
        size_t nf = 0;
        if (m->feed) {
            int64_t n = 1;
            for (int32_t k = 0; k < m->rank; k++) n *= m->dims[k];
            bufs[nf] = random_floats(n, 7, 20.0f);
            ft[nf] = gn_pt_view(DT_FLOAT, bufs[nf], (size_t)n * sizeof(float), m->rank, m->dims);
            fn[nf++] = m->feed;
        }
        /* variables are fed at their "<name>/read" Identity (a ref feed is not run) */
        static char names[16][512];
        for (gn_id v = 0; v < g->n_nodes && nf < 16; v++) {
            if (strcmp(gn__node_op(g, v), "Variable") != 0 && strcmp(gn__node_op(g, v), "VariableV2") != 0) continue;
            const Tensorflow__AttrValue *sh = gn__node_attr(g, v, "shape");
            assert_non_null(sh);
            snprintf(names[nf], sizeof names[nf], "%s/read", gn__node_name(g, v));
            if (gn__graph_find(g, names[nf]) == GN_NONE) continue;
            int64_t dims[8], n = 1;
            for (size_t k = 0; k < sh->shape->n_dim; k++) n *= (dims[k] = sh->shape->dim[k]->size);
            bufs[nf] = random_floats(n, 11 + (uint32_t)nf, 1.0f);
            ft[nf] = gn_pt_view(DT_FLOAT, bufs[nf], (size_t)n * sizeof(float), (int32_t)sh->shape->n_dim, dims);
            fn[nf] = names[nf];
            nf++;
        }
        for (size_t k = 0; k < nf; k++) gn_pt_preserve(g, fn[k]);
        gn_pt_preserve(g, m->fetch);
        gn_graph *before = gn_pt_clone(g);
        uint32_t n0 = g->n_live;
        assert_true(run_pass(g, NULL, NULL));
        gn_pt_check_valid(g, m->path);
        const char *xn[1] = {m->fetch};
        gn_pt_expect_same_results(before, g, fn, ft, nf, xn, 1, 8);
        print_message("  %-80s %4u -> %4u nodes, same results (%zu feeds)\n", m->path, n0, g->n_live, nf);
        for (size_t k = 0; k < nf; k++) free(bufs[k]);
        gn_graph_free(before);
        gn_graph_free(g);
    }
}

/* Time per node stays flat: 10^4 and 10^5-node chains of duplicated work
 * (every node duplicated once, so half the nodes go). */
static double scale_run(uint32_t n)
{
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_puts(&b, PH_SHAPE("x", DIM2));
    for (uint32_t i = 0; i < n / 2; i++) {
        const char *op = i % 3 == 0 ? "Relu" : i % 3 == 1 ? "Neg" : "Tanh";
        if (i == 0) {
            gn__buf_printf(&b, UNARY("a0", "%s", "x") UNARY("b0", "%s", "x"), op, op);
        } else {
            gn__buf_printf(&b,
                           "node { name: 'a%u' op: '%s' input: 'a%u' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                           "node { name: 'b%u' op: '%s' input: 'b%u' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                           i, op, i - 1, i, op, i - 1);
        }
    }
    gn__buf_printf(&b, BINARY("o", "Sub", "a%u", "b%u"), n / 2 - 1, n / 2 - 1);
    char *text = gn__buf_take(&b);
    gn_graph *g = gn_pt_load_text(text);
    free(text);
    gn_pt_preserve(g, "o");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_true(run_pass(g, NULL, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(g->n_live, n / 2 + 2);
    gn_graph_free(g);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static void test_scale(void **state)
{
    (void)state;
    double t4 = scale_run(10000), t5 = scale_run(100000);
    print_message("  10^4 nodes: %.1f ms (%.2f us/node); 10^5 nodes: %.1f ms (%.2f us/node)\n", t4 * 1e3, t4 * 1e2,
                  t5 * 1e3, t5 * 10);
    /* timings are printed, never asserted (machines are noisy): bench/ measures them */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commutative),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_control_attrs_device),
        cmocka_unit_test(test_multi_output),
        cmocka_unit_test(test_const),
        cmocka_unit_test(test_big_const),
        cmocka_unit_test(test_big_typed_const),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_preserved_survivor),
        cmocka_unit_test(test_survivor_smaller_id),
        cmocka_unit_test(test_inplace),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_corpus_numeric),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
