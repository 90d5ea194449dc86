/* Shape optimizer (src/optimizer/passes/shape.c): per pattern a graph before,
 * the exact graph after, refusals with their reasons and a numerical check on
 * the CPU backend; then every corpus model and the golden models. */
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
#define DT_INT64 9

/* Runs the pass over g (a body when fn is set) and compacts, as the meta-optimizer does. */
static bool run_pass_on(gn_graph *g, const gn_graph *lib, const char *fn, gn_report *r, const char *disabled)
{
    return gn_pt_run_pass_on(gn__pass_shape, "shape", g, lib, fn, r, disabled, GN_TOGGLE_DEFAULT);
}

static bool run_pass(gn_graph *g, gn_report *r, const char *disabled) { return run_pass_on(g, g, NULL, r, disabled); }

/* ---- graph pieces ------------------------------------------------------------------------------------ */
#define ICONST(name, shape, vals) \
    "node { name: '" name "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } " \
    "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { " shape " } " vals " } } } }\n"
#define SHAPE(name, in, ctrl, ot) \
    "node { name: '" name "' op: 'Shape' input: '" in "' " ctrl " attr { key: 'T' value { type: DT_FLOAT } } " \
    "attr { key: 'out_type' value { type: " ot " } } }\n"
#define PROD(name, in, axes, keep, t) \
    "node { name: '" name "' op: 'Prod' input: '" in "' input: '" axes "' device: '/device:GPU:0' " \
    "attr { key: 'T' value { type: " t " } } attr { key: 'Tidx' value { type: DT_INT32 } } " \
    "attr { key: 'keep_dims' value { b: " keep " } } }\n"
#define SIZE(name, in, ctrl, ot) \
    "node { name: '" name "' op: 'Size' input: '" in "' " ctrl " attr { key: 'T' value { type: DT_FLOAT } } " \
    "attr { key: 'out_type' value { type: " ot " } } }\n"
#define DIV(name, op, a, b, t) \
    "node { name: '" name "' op: '" op "' input: '" a "' input: '" b "' attr { key: 'T' value { type: " t " } } }\n"
#define CONSTV(name, t, field, v, ctrl) \
    "node { name: '" name "' op: 'Const' " ctrl " attr { key: 'dtype' value { type: " t " } } " \
    "attr { key: 'value' value { tensor { dtype: " t " tensor_shape { } " field ": " v " } } } }\n"
#define UNK2 "dim { size: -1 } dim { size: 10 }"

/* ---- shape.prod_of_shape --------------------------------------------------------------------------- */
static void test_prod_of_shape(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH_SHAPE("x", UNK2) SHAPE("s", "x", "", "DT_INT32") ICONST("axes", "dim { size: 1 }", "int_val: 0")
                                PROD("p", "s", "axes", "false", "DT_INT32"));
    gn_pt_preserve(g, "p");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    /* the Shape and the axes are gone; Size sits on the Shape's device (here none) */
    gn_pt_expect_graph(g, PH_SHAPE("x", UNK2) "node { name: 'p' op: 'Size' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
                                  "attr { key: 'out_type' value { type: DT_INT32 } } }\n");
    gn_pt_expect_report(r, "shape.prod_of_shape: p: 'p' = Prod(Shape('x')) is now Size('x')");
    float x[30] = {0};
    int64_t dims[2] = {3, 10};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"p"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 8);
    assert_false(run_pass(g, NULL, NULL));
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* int64, a scalar axis, a Shape with control inputs (kept as the anchor) and
 * another consumer (kept); Prod with keep_dims or two axes is refused. */
static void test_prod_variants(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", UNK2) "node { name: 'c' op: 'NoOp' }\n"
        SHAPE("s", "x", "input: '^c'", "DT_INT64") ICONST("axes", "", "int_val: -1")
        ICONST("axes2", "dim { size: 2 }", "int_val: 0 int_val: 0") PROD("p", "s", "axes", "false", "DT_INT64")
        PROD("pk", "s", "axes", "true", "DT_INT64") PROD("p2", "s", "axes2", "false", "DT_INT64");
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "p");
    gn_pt_preserve(g, "pk");
    gn_pt_preserve(g, "p2");
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", UNK2) "node { name: 'c' op: 'NoOp' }\n"
        SHAPE("s", "x", "input: '^c'", "DT_INT64") ICONST("axes", "", "int_val: -1")
        ICONST("axes2", "dim { size: 2 }", "int_val: 0 int_val: 0")
        "node { name: 'p' op: 'Size' input: 'x' input: '^s' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'out_type' value { type: DT_INT64 } } }\n"
        PROD("pk", "s", "axes", "true", "DT_INT64") PROD("p2", "s", "axes2", "false", "DT_INT64"));
    gn_pt_expect_report(r, "shape.prod_of_shape: pk: 'pk' = Prod(Shape('x')) not rewritten: keep_dims is set: the result "
                     "has shape [1], Size's is a scalar");
    gn_pt_expect_report(r, "shape.prod_of_shape: p2: 'p2' = Prod(Shape('x')) not rewritten: the reduction indices have "
                     "shape [2], not exactly one element");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- shape.size_ratio ----------------------------------------------------------------------------- */
/* Div(Size(x), Size(Mean(x, 1, keep_dims))) with x [?,10]: the unknown batch cancels. */
static void test_size_ratio(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", UNK2) ICONST("ax", "dim { size: 1 }", "int_val: 1")
        "node { name: 'm' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: true } } }\n"
        SIZE("sx", "x", "", "DT_INT32") SIZE("sm", "m", "", "DT_INT32") DIV("d", "Div", "sx", "sm", "DT_INT32")
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sr", "r", "", "DT_INT64") SIZE("sx64", "x", "", "DT_INT64") DIV("d1", "FloorDiv", "sr", "sx64", "DT_INT64")
        "node { name: 'o' op: 'Identity' input: 'm' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "d");
    gn_pt_preserve(g, "d1");
    gn_pt_preserve(g, "o");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    /* no loops: the constants need no anchor, and the Size nodes go */
    gn_pt_expect_graph(g, PH_SHAPE("x", UNK2) ICONST("ax", "dim { size: 1 }", "int_val: 1")
        "node { name: 'm' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: true } } }\n"
        CONSTV("d", "DT_INT32", "int_val", "10", "")
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        CONSTV("d1", "DT_INT64", "int64_val", "1", "")
        "node { name: 'o' op: 'Identity' input: 'm' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_pt_expect_report(r, "shape.size_ratio: d: 'd' = Div(Size('x'), Size('m')) is the constant 10 (shapes [?s1,10] and [?s1,1])");
    gn_pt_expect_report(r, "shape.size_ratio: d1: 'd1' = FloorDiv(Size('r'), Size('x')) is the constant 1");
    float x[40];
    for (int i = 0; i < 40; i++) x[i] = (float)i;
    int64_t dims[2] = {4, 10};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[3] = {"d", "d1", "o"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 3, 8);
    assert_false(run_pass(g, NULL, NULL));
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Both patterns in one run: Div(Prod(Shape(x)), Prod(Shape(MatMul(x, w)))) -> 2,
 * and Shape/Prod/axes all go. Unrelated unknown dims are refused. */
static void test_prod_then_ratio(void **state)
{
    (void)state;
    const char *text = PH_SHAPE("x", "dim { size: -1 } dim { size: 8 }") PH_SHAPE("z", "dim { size: -1 } dim { size: 8 }")
        "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } dim { size: 4 } } float_val: 0.5 } } } }\n"
        "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SHAPE("s1", "x", "", "DT_INT32") SHAPE("s2", "mm", "", "DT_INT32") ICONST("axes", "dim { size: 1 }", "int_val: 0")
        PROD("p1", "s1", "axes", "false", "DT_INT32") PROD("p2", "s2", "axes", "false", "DT_INT32")
        DIV("d", "Div", "p1", "p2", "DT_INT32")
        SIZE("sz", "z", "", "DT_INT32") SIZE("sx", "x", "", "DT_INT32") DIV("dz", "Div", "sx", "sz", "DT_INT32")
        "node { name: 'o' op: 'Identity' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "d");
    gn_pt_preserve(g, "dz");
    gn_pt_preserve(g, "o");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", "dim { size: -1 } dim { size: 8 }") PH_SHAPE("z", "dim { size: -1 } dim { size: 8 }")
        "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } dim { size: 4 } } float_val: 0.5 } } } }\n"
        "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        CONSTV("d", "DT_INT32", "int_val", "2", "")
        SIZE("sz", "z", "", "DT_INT32") SIZE("sx", "x", "", "DT_INT32") DIV("dz", "Div", "sx", "sz", "DT_INT32")
        "node { name: 'o' op: 'Identity' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_pt_expect_report(r, "'d' = Div(Size('x'), Size('mm')) is the constant 2");
    gn_pt_expect_report(r, "shape.size_ratio: dz: 'dz' = Div(Size('x'), Size('z')) not rewritten: the ratio of [?s");
    float x[16], z[24];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    for (int i = 0; i < 24; i++) z[i] = (float)i;
    int64_t dx[2] = {2, 8}, dz[2] = {3, 8};
    gn_tensor ft[2] = {gn_pt_view(DT_FLOAT, x, sizeof x, 2, dx), gn_pt_view(DT_FLOAT, z, sizeof z, 2, dz)};
    const char *fn[2] = {"x", "z"}, *xn[3] = {"d", "dz", "o"};
    gn_pt_expect_same_results(orig, g, fn, ft, 2, xn, 3, 8);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);

    /* with shape.size_ratio disabled only the Prods become Size */
    g = gn_pt_load_text(text);
    gn_pt_preserve(g, "d");
    gn_pt_preserve(g, "dz");
    gn_pt_preserve(g, "o");
    assert_true(run_pass(g, NULL, "shape.size_ratio"));
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "p1")), "Size");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "d")), "Div");
    gn_graph_free(g);
    /* the whole pass disabled */
    g = gn_pt_load_text(text);
    assert_false(run_pass(g, NULL, "shape"));
    gn_graph_free(g);
}

/* In a graph with v1 loops the constant keeps control edges from both Size
 * nodes (a constant inside a frame must stay anchored to it). */
static void test_ratio_anchor(void **state)
{
    (void)state;
    const char *t = PH_SHAPE("x", UNK2)
        "node { name: 'e' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sa", "r", "", "DT_INT32") SIZE("sb", "x", "", "DT_INT32") DIV("d", "Div", "sa", "sb", "DT_INT32");
    gn_graph *g = gn_pt_load_text(t);
    gn_pt_preserve(g, "d");
    gn_pt_preserve(g, "e");
    assert_true(run_pass(g, NULL, NULL));
    gn_pt_expect_graph(g, PH_SHAPE("x", UNK2)
        "node { name: 'e' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sa", "r", "", "DT_INT32") SIZE("sb", "x", "", "DT_INT32")
        CONSTV("d", "DT_INT32", "int_val", "1", "input: '^sa' input: '^sb'"));
    gn_graph_free(g);
}

/* ---- corpus and golden models ------------------------------------------------------------------------ */
static bool run_all(gn_graph *g, gn_report *r)
{
    bool ch = run_pass_on(g, g, NULL, r, NULL);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (fn->body) ch |= run_pass_on(fn->body, g, gn__str(g, fn->name), r, NULL);
    }
    return ch;
}

static void test_corpus(void **state)
{
    (void)state;
    char dir[4096];
    if (!gn_test_corpus("", dir, sizeof dir)) skip();
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
        gn_report *r = gn_pt_new_report();
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ch = run_all(g, r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gn_pt_check_valid(g, line);
        if (run_all(g, NULL)) fail_msg("%s: a second run changed the graph", line);
        char *txt = NULL;
        assert_int_equal(gn_report_to_text(r, &txt), GN_OK);
        size_t rw = 0, rf = 0;
        const char *p = strstr(txt, "Rewrites (");
        if (p) sscanf(p, "Rewrites (%zu)", &rw);
        p = strstr(txt, "Refused (");
        if (p) sscanf(p, "Refused (%zu)", &rf);
        print_message("  %-110s %6u -> %6u nodes%s, %zu rewrites, %zu refusals (%.2f ms)\n", line + 2, before,
                      gn_pt_live_total(g), ch ? "" : " (unchanged)", rw, rf,
                      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        gn_free(txt);
        gn_report_free(r);
        gn_graph_free(g);
    }
    free(out);
    assert_true(models > 30);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prod_of_shape),
        cmocka_unit_test(test_prod_variants),
        cmocka_unit_test(test_size_ratio),
        cmocka_unit_test(test_prod_then_ratio),
        cmocka_unit_test(test_ratio_anchor),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
