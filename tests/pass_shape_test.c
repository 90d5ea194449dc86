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
#include "ops/registry.h"
#include "optimizer/pass.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_INT64 9

/* ---- helpers (as in pass_cse_test.c) ------------------------------------------------------------ */
static gn_graph *load_text(const char *text)
{
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "t.pbtxt", NULL, &g);
    if (s != GN_OK) fail_msg("load: %s", gn_graph_errmsg(g));
    return g;
}

static gn_graph *clone(const gn_graph *g)
{
    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    return c;
}

static gn_report *new_report(void)
{
    gn_graph *g = load_text("node { name: 'a' op: 'NoOp' }");
    gn_options o;
    gn_options_init(&o);
    o.disable_meta_optimizer = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, NULL, &r), GN_OK);
    assert_non_null(r);
    gn_graph_free(g);
    return r;
}

static void expect_report(const gn_report *r, const char *line)
{
    char *t = NULL;
    assert_int_equal(gn_report_to_text(r, &t), GN_OK);
    if (!strstr(t, line)) fail_msg("report lacks\n  %s\nreport:\n%s", line, t);
    gn_free(t);
}

static bool run_pass_on(gn_graph *g, const gn_graph *lib, const char *fn, gn_report *r, const char *disabled)
{
    gn_options o;
    gn_options_init(&o);
    o.disabled_patterns = disabled;
    gn__err err;
    gn__err_clear(&err);
    gn__pass_ctx c;
    memset(&c, 0, sizeof c);
    c.opts = &o;
    c.report = r;
    c.pass_id = "shape";
    c.fn_name = fn;
    c.lib = lib;
    c.err = &err;
    gn_status s = gn__pass_shape(&c, g);
    if (s != GN_OK) fail_msg("pass failed: %s (%s)", err.msg, g->err.msg);
    assert_int_equal(gn__graph_compact(g), GN_OK);
    return c.changed;
}

static bool run_pass(gn_graph *g, gn_report *r, const char *disabled) { return run_pass_on(g, g, NULL, r, disabled); }

static void preserve(gn_graph *g, const char *name)
{
    gn_id id = gn__graph_find(g, name);
    if (id == GN_NONE) fail_msg("no node '%s'", name);
    g->nodes[id].flags |= GN__NODE_PRESERVE;
}

static void describe(const gn_graph *g, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (gn_id i = 0; i < g->n_nodes && k < n; i++) {
        if (!gn__node_live(g, i)) continue;
        const gn__node *nd = gn__node_at(g, i);
        k += (size_t)snprintf(buf + k, n - k, "  %s = %s(", gn__node_name(g, i), gn__node_op(g, i));
        for (uint32_t j = 0; j < nd->n_in && k < n; j++)
            k += (size_t)snprintf(buf + k, n - k, "%s%s:%u", j ? ", " : "", gn__node_name(g, nd->in[j].node),
                                  nd->in[j].index);
        for (uint32_t j = 0; j < nd->n_ctrl && k < n; j++)
            k += (size_t)snprintf(buf + k, n - k, "%s^%s", nd->n_in + j ? ", " : "", gn__node_name(g, nd->ctrl[j]));
        if (k < n) k += (size_t)snprintf(buf + k, n - k, ")\n");
    }
}

static bool attr_same(const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b)
{
    size_t na = protobuf_c_message_get_packed_size(&a->base), nb = protobuf_c_message_get_packed_size(&b->base);
    if (na != nb) return false;
    uint8_t *x = malloc(na + 1), *y = malloc(nb + 1);
    protobuf_c_message_pack(&a->base, x);
    protobuf_c_message_pack(&b->base, y);
    bool eq = memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return eq;
}

static void expect_graph(gn_graph *g, const char *want)
{
    static char d[16384];
    gn_graph *w = load_text(want);
    describe(g, d, sizeof d);
    if (g->n_live != w->n_live) fail_msg("%u nodes, want %u; got:\n%s", g->n_live, w->n_live, d);
    for (gn_id i = 0; i < w->n_nodes; i++) {
        if (!gn__node_live(w, i)) continue;
        const char *name = gn__node_name(w, i);
        gn_id j = gn__graph_find(g, name);
        if (j == GN_NONE) fail_msg("no node '%s'; got:\n%s", name, d);
        const gn__node *a = gn__node_at(g, j), *b = gn__node_at(w, i);
        if (strcmp(gn__node_op(g, j), gn__node_op(w, i)) != 0)
            fail_msg("'%s' is %s, want %s", name, gn__node_op(g, j), gn__node_op(w, i));
        if (strcmp(gn__str(g, a->device), gn__str(w, b->device)) != 0)
            fail_msg("'%s' on '%s', want '%s'", name, gn__str(g, a->device), gn__str(w, b->device));
        if (a->n_in != b->n_in || a->n_ctrl != b->n_ctrl)
            fail_msg("'%s': %u inputs and %u control, want %u and %u; got:\n%s", name, a->n_in, a->n_ctrl, b->n_in,
                     b->n_ctrl, d);
        for (uint32_t k = 0; k < a->n_in; k++)
            if (strcmp(gn__node_name(g, a->in[k].node), gn__node_name(w, b->in[k].node)) != 0 ||
                a->in[k].index != b->in[k].index)
                fail_msg("'%s' input %u is %s:%u, want %s:%u; got:\n%s", name, k, gn__node_name(g, a->in[k].node),
                         a->in[k].index, gn__node_name(w, b->in[k].node), b->in[k].index, d);
        for (uint32_t k = 0; k < b->n_ctrl; k++) {
            bool found = false;
            for (uint32_t m = 0; m < a->n_ctrl; m++)
                found |= strcmp(gn__node_name(g, a->ctrl[m]), gn__node_name(w, b->ctrl[k])) == 0;
            if (!found) fail_msg("'%s' lacks control input ^%s; got:\n%s", name, gn__node_name(w, b->ctrl[k]), d);
        }
        if (a->n_attr != b->n_attr) fail_msg("'%s': %u attrs, want %u", name, a->n_attr, b->n_attr);
        for (uint32_t k = 0; k < b->n_attr; k++) {
            const Tensorflow__AttrValue *v = gn__node_attr(g, j, gn__str(w, b->attr[k].key));
            if (!v) fail_msg("'%s' lacks attr '%s'", name, gn__str(w, b->attr[k].key));
            if (!attr_same(v, b->attr[k].value)) fail_msg("'%s': attr '%s' differs", name, gn__str(w, b->attr[k].key));
        }
    }
    if (gn__graph_validate(g) != GN_OK) fail_msg("invalid: %s", g->err.msg);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_graph_free(w);
}

static gn_tensor view(int32_t dtype, void *data, size_t nbytes, int32_t rank, const int64_t *dims)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (int32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
    t.data = data;
    t.nbytes = nbytes;
    return t;
}

static void run_graph(const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf, const char *const *xn,
                      gn_tensor *out, size_t nx)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, fn, ft, nf, xn, out, nx) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void expect_same_results(const gn_graph *before, const gn_graph *after, const char *const *fn,
                                const gn_tensor *ft, size_t nf, const char *const *xn, size_t nx)
{
    gn_tensor a[8], b[8];
    assert_true(nx <= 8);
    run_graph(before, fn, ft, nf, xn, a, nx);
    run_graph(after, fn, ft, nf, xn, b, nx);
    for (size_t i = 0; i < nx; i++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b[i], &a[i], 0, &cr), GN_OK);
        if (!cr.match) fail_msg("fetch '%s' differs: %s (rel L2 %g)", xn[i], cr.why, cr.rel_l2_err);
        gn_tensor_free(&a[i]);
        gn_tensor_free(&b[i]);
    }
}

/* ---- graph pieces ------------------------------------------------------------------------------------ */
#define PH(name, shape) \
    "node { name: '" name "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " \
    "attr { key: 'shape' value { shape { " shape " } } } }\n"
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
    gn_graph *g = load_text(PH("x", UNK2) SHAPE("s", "x", "", "DT_INT32") ICONST("axes", "dim { size: 1 }", "int_val: 0")
                                PROD("p", "s", "axes", "false", "DT_INT32"));
    preserve(g, "p");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    /* the Shape and the axes are gone; Size sits on the Shape's device (here none) */
    expect_graph(g, PH("x", UNK2) "node { name: 'p' op: 'Size' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
                                  "attr { key: 'out_type' value { type: DT_INT32 } } }\n");
    expect_report(r, "shape.prod_of_shape: p: 'p' = Prod(Shape('x')) is now Size('x')");
    float x[30] = {0};
    int64_t dims[2] = {3, 10};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"p"};
    expect_same_results(orig, g, fn, ft, 1, xn, 1);
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
    const char *text = PH("x", UNK2) "node { name: 'c' op: 'NoOp' }\n"
        SHAPE("s", "x", "input: '^c'", "DT_INT64") ICONST("axes", "", "int_val: -1")
        ICONST("axes2", "dim { size: 2 }", "int_val: 0 int_val: 0") PROD("p", "s", "axes", "false", "DT_INT64")
        PROD("pk", "s", "axes", "true", "DT_INT64") PROD("p2", "s", "axes2", "false", "DT_INT64");
    gn_graph *g = load_text(text);
    preserve(g, "p");
    preserve(g, "pk");
    preserve(g, "p2");
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", UNK2) "node { name: 'c' op: 'NoOp' }\n"
        SHAPE("s", "x", "input: '^c'", "DT_INT64") ICONST("axes", "", "int_val: -1")
        ICONST("axes2", "dim { size: 2 }", "int_val: 0 int_val: 0")
        "node { name: 'p' op: 'Size' input: 'x' input: '^s' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'out_type' value { type: DT_INT64 } } }\n"
        PROD("pk", "s", "axes", "true", "DT_INT64") PROD("p2", "s", "axes2", "false", "DT_INT64"));
    expect_report(r, "shape.prod_of_shape: pk: 'pk' = Prod(Shape('x')) not rewritten: keep_dims is set: the result "
                     "has shape [1], Size's is a scalar");
    expect_report(r, "shape.prod_of_shape: p2: 'p2' = Prod(Shape('x')) not rewritten: the reduction indices have "
                     "shape [2], not exactly one element");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- shape.size_ratio ----------------------------------------------------------------------------- */
/* Div(Size(x), Size(Mean(x, 1, keep_dims))) with x [?,10]: the unknown batch cancels. */
static void test_size_ratio(void **state)
{
    (void)state;
    const char *text = PH("x", UNK2) ICONST("ax", "dim { size: 1 }", "int_val: 1")
        "node { name: 'm' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: true } } }\n"
        SIZE("sx", "x", "", "DT_INT32") SIZE("sm", "m", "", "DT_INT32") DIV("d", "Div", "sx", "sm", "DT_INT32")
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sr", "r", "", "DT_INT64") SIZE("sx64", "x", "", "DT_INT64") DIV("d1", "FloorDiv", "sr", "sx64", "DT_INT64")
        "node { name: 'o' op: 'Identity' input: 'm' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = load_text(text);
    preserve(g, "d");
    preserve(g, "d1");
    preserve(g, "o");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    /* no loops: the constants need no anchor, and the Size nodes go */
    expect_graph(g, PH("x", UNK2) ICONST("ax", "dim { size: 1 }", "int_val: 1")
        "node { name: 'm' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: true } } }\n"
        CONSTV("d", "DT_INT32", "int_val", "10", "")
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        CONSTV("d1", "DT_INT64", "int64_val", "1", "")
        "node { name: 'o' op: 'Identity' input: 'm' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    expect_report(r, "shape.size_ratio: d: 'd' = Div(Size('x'), Size('m')) is the constant 10 (shapes [?s1,10] and [?s1,1])");
    expect_report(r, "shape.size_ratio: d1: 'd1' = FloorDiv(Size('r'), Size('x')) is the constant 1");
    float x[40];
    for (int i = 0; i < 40; i++) x[i] = (float)i;
    int64_t dims[2] = {4, 10};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[3] = {"d", "d1", "o"};
    expect_same_results(orig, g, fn, ft, 1, xn, 3);
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
    const char *text = PH("x", "dim { size: -1 } dim { size: 8 }") PH("z", "dim { size: -1 } dim { size: 8 }")
        "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } dim { size: 4 } } float_val: 0.5 } } } }\n"
        "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SHAPE("s1", "x", "", "DT_INT32") SHAPE("s2", "mm", "", "DT_INT32") ICONST("axes", "dim { size: 1 }", "int_val: 0")
        PROD("p1", "s1", "axes", "false", "DT_INT32") PROD("p2", "s2", "axes", "false", "DT_INT32")
        DIV("d", "Div", "p1", "p2", "DT_INT32")
        SIZE("sz", "z", "", "DT_INT32") SIZE("sx", "x", "", "DT_INT32") DIV("dz", "Div", "sx", "sz", "DT_INT32")
        "node { name: 'o' op: 'Identity' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = load_text(text);
    preserve(g, "d");
    preserve(g, "dz");
    preserve(g, "o");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", "dim { size: -1 } dim { size: 8 }") PH("z", "dim { size: -1 } dim { size: 8 }")
        "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } dim { size: 4 } } float_val: 0.5 } } } }\n"
        "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        CONSTV("d", "DT_INT32", "int_val", "2", "")
        SIZE("sz", "z", "", "DT_INT32") SIZE("sx", "x", "", "DT_INT32") DIV("dz", "Div", "sx", "sz", "DT_INT32")
        "node { name: 'o' op: 'Identity' input: 'mm' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    expect_report(r, "'d' = Div(Size('x'), Size('mm')) is the constant 2");
    expect_report(r, "shape.size_ratio: dz: 'dz' = Div(Size('x'), Size('z')) not rewritten: the ratio of [?s");
    float x[16], z[24];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    for (int i = 0; i < 24; i++) z[i] = (float)i;
    int64_t dx[2] = {2, 8}, dz[2] = {3, 8};
    gn_tensor ft[2] = {view(DT_FLOAT, x, sizeof x, 2, dx), view(DT_FLOAT, z, sizeof z, 2, dz)};
    const char *fn[2] = {"x", "z"}, *xn[3] = {"d", "dz", "o"};
    expect_same_results(orig, g, fn, ft, 2, xn, 3);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);

    /* with shape.size_ratio disabled only the Prods become Size */
    g = load_text(text);
    preserve(g, "d");
    preserve(g, "dz");
    preserve(g, "o");
    assert_true(run_pass(g, NULL, "shape.size_ratio"));
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "p1")), "Size");
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "d")), "Div");
    gn_graph_free(g);
    /* the whole pass disabled */
    g = load_text(text);
    assert_false(run_pass(g, NULL, "shape"));
    gn_graph_free(g);
}

/* In a graph with v1 loops the constant keeps control edges from both Size
 * nodes (a constant inside a frame must stay anchored to it). */
static void test_ratio_anchor(void **state)
{
    (void)state;
    const char *t = PH("x", UNK2)
        "node { name: 'e' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sa", "r", "", "DT_INT32") SIZE("sb", "x", "", "DT_INT32") DIV("d", "Div", "sa", "sb", "DT_INT32");
    gn_graph *g = load_text(t);
    preserve(g, "d");
    preserve(g, "e");
    assert_true(run_pass(g, NULL, NULL));
    expect_graph(g, PH("x", UNK2)
        "node { name: 'e' op: 'Enter' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'frame_name' value { s: 'f' } } }\n"
        "node { name: 'r' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        SIZE("sa", "r", "", "DT_INT32") SIZE("sb", "x", "", "DT_INT32")
        CONSTV("d", "DT_INT32", "int_val", "1", "input: '^sa' input: '^sb'"));
    gn_graph_free(g);
}

/* ---- corpus and golden models ------------------------------------------------------------------------ */
static void mark_default_preserved(gn_graph *g)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        const gn__opdef *op = gn__node_opdef(g, i);
        if ((n->n_use == 0 && n->n_cuse == 0) || !op || (op->flags & GN__OPF_STATEFUL) || (n->flags & GN__NODE_FN_RET))
            n->flags |= GN__NODE_PRESERVE;
    }
}

static uint32_t live_total(const gn_graph *g)
{
    uint32_t n = g->n_live;
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) n += g->fns[f].body->n_live;
    return n;
}

static bool run_all(gn_graph *g, gn_report *r)
{
    bool ch = run_pass_on(g, g, NULL, r, NULL);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (fn->body) ch |= run_pass_on(fn->body, g, gn__str(g, fn->name), r, NULL);
    }
    return ch;
}

static void prepare(gn_graph *g)
{
    mark_default_preserved(g);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (!fn->body) continue;
        mark_default_preserved(fn->body);
        for (uint32_t k = 0; k < fn->n_control_ret; k++)
            if (fn->control_ret_node[k] != GN_NONE) fn->body->nodes[fn->control_ret_node[k]].flags |= GN__NODE_PRESERVE;
    }
}

static void check_valid(gn_graph *g, const char *what)
{
    if (gn__graph_validate(g) != GN_OK) fail_msg("%s: invalid after the pass: %s", what, g->err.msg);
    if (gn__graph_check_fanouts(g) != GN_OK) fail_msg("%s: fanouts: %s", what, g->err.msg);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body && gn__graph_check_fanouts(g->fns[f].body) != GN_OK)
            fail_msg("%s: fanouts of a body: %s", what, g->fns[f].body->err.msg);
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
        prepare(g);
        uint32_t before = live_total(g);
        gn_report *r = new_report();
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ch = run_all(g, r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        check_valid(g, line);
        if (run_all(g, NULL)) fail_msg("%s: a second run changed the graph", line);
        char *txt = NULL;
        assert_int_equal(gn_report_to_text(r, &txt), GN_OK);
        size_t rw = 0, rf = 0;
        const char *p = strstr(txt, "Rewrites (");
        if (p) sscanf(p, "Rewrites (%zu)", &rw);
        p = strstr(txt, "Refused (");
        if (p) sscanf(p, "Refused (%zu)", &rf);
        print_message("  %-110s %6u -> %6u nodes%s, %zu rewrites, %zu refusals (%.2f ms)\n", line + 2, before,
                      live_total(g), ch ? "" : " (unchanged)", rw, rf,
                      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        gn_free(txt);
        gn_report_free(r);
        gn_graph_free(g);
    }
    free(out);
    assert_true(models > 30);
}

typedef struct golden {
    char name[512], graph[512];
    char feed[4][512], feed_file[4][512];
    char fetch[4][512];
    size_t nf, nx;
} golden;

static size_t read_manifest(golden *m, size_t max)
{
    char path[4096];
    gn_test_data("golden/manifest.txt", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[1024];
    size_t n = 0;
    golden *cur = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char a[512], b[512], c[512];
        int k = sscanf(line, "%511s %511s %511s", a, b, c);
        if (k < 1 || a[0] == '#') continue;
        if (!strcmp(a, "model") && k >= 2 && n < max) {
            cur = &m[n++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->name, sizeof cur->name, "%s", b);
        } else if (cur && !strcmp(a, "graph") && k >= 2) {
            snprintf(cur->graph, sizeof cur->graph, "%s", b);
        } else if (cur && !strcmp(a, "feed") && k == 3 && cur->nf < 4) {
            snprintf(cur->feed[cur->nf], sizeof cur->feed[0], "%s", b);
            snprintf(cur->feed_file[cur->nf], sizeof cur->feed_file[0], "%s", c);
            cur->nf++;
        } else if (cur && !strcmp(a, "fetch") && k >= 2 && cur->nx < 4) {
            snprintf(cur->fetch[cur->nx++], sizeof cur->fetch[0], "%s", b);
        }
    }
    fclose(f);
    return n;
}

static void preserve_tensor(gn_graph *g, const char *tensor)
{
    char node[512];
    snprintf(node, sizeof node, "%s", tensor);
    node[strcspn(node, ":")] = 0;
    preserve(g, node);
}

static void test_golden(void **state)
{
    (void)state;
    golden m[16];
    size_t n = read_manifest(m, 16);
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
            preserve_tensor(g, fn[k]);
        }
        for (size_t k = 0; k < m[i].nx; k++) {
            xn[k] = m[i].fetch[k];
            preserve_tensor(g, xn[k]);
        }
        gn_graph *orig = clone(g);
        uint32_t before = live_total(g);
        run_all(g, NULL);
        check_valid(g, m[i].name);
        print_message("  %-20s %6u -> %6u nodes\n", m[i].name, before, live_total(g));
        expect_same_results(orig, g, fn, feeds, m[i].nf, xn, m[i].nx);
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
