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
#include "ops/registry.h"
#include "optimizer/pass.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3

/* ---- helpers -------------------------------------------------------------------------------- */
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

/* An empty report to collect the pass's events (gn_optimize with the meta
 * optimizer disabled hands one back). */
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

static char *report_text(const gn_report *r)
{
    char *t = NULL;
    assert_int_equal(gn_report_to_text(r, &t), GN_OK);
    return t;
}

static void expect_report(const gn_report *r, const char *line)
{
    char *t = report_text(r);
    if (!strstr(t, line)) fail_msg("report lacks\n  %s\nreport:\n%s", line, t);
    gn_free(t);
}

static void expect_no_report(const gn_report *r, const char *what)
{
    char *t = report_text(r);
    if (strstr(t, what)) fail_msg("report has '%s':\n%s", what, t);
    gn_free(t);
}

/* Runs the pass over g (a body when fn is set) and compacts, as the meta-optimizer does. */
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
    c.pass_id = "common_subgraph_elimination";
    c.fn_name = fn;
    c.lib = lib;
    c.err = &err;
    gn_status s = gn__pass_cse(&c, g);
    if (s != GN_OK) fail_msg("pass failed: %s (%s)", err.msg, g->err.msg);
    assert_int_equal(gn__graph_compact(g), GN_OK);
    return c.changed;
}

static bool run_pass(gn_graph *g, gn_report *r, const char *disabled)
{
    return run_pass_on(g, g, NULL, r, disabled);
}

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

/* g has exactly the nodes of the graph `want` describes: names, ops, devices,
 * data inputs in order, control inputs as a set, attrs (by packed bytes). */
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
    assert_int_equal(gn__graph_validate(g), GN_OK);
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

/* The rewritten graph gives what the original gave (f32 rel L2 <= 1e-5, ints exact). */
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

#define PH(name, shape) \
    "node { name: '" name "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " \
    "attr { key: 'shape' value { shape { " shape " } } } }\n"
#define UNARY(name, op, in) \
    "node { name: '" name "' op: '" op "' input: '" in "' attr { key: 'T' value { type: DT_FLOAT } } }\n"
#define BINARY(name, op, a, b) \
    "node { name: '" name "' op: '" op "' input: '" a "' input: '" b "' attr { key: 'T' value { type: DT_FLOAT } } }\n"
#define DIM2 "dim { size: 2 } dim { size: 3 }"

/* ---- cse.dedup -------------------------------------------------------------------------------- */
/* grappler.md's example: Mul(x,y) and Mul(y,x) are one value; Add(a,b) becomes Add(a,a). */
static void test_commutative(void **state)
{
    (void)state;
    const char *text = PH("x", DIM2) PH("y", DIM2) BINARY("a", "Mul", "x", "y") BINARY("b", "Mul", "y", "x")
        BINARY("c", "AddV2", "a", "b") BINARY("d", "Sub", "x", "y") BINARY("e", "Sub", "y", "x")
        BINARY("f", "AddV2", "d", "e");
    gn_graph *g = load_text(text);
    preserve(g, "c");
    preserve(g, "f");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", DIM2) PH("y", DIM2) BINARY("a", "Mul", "x", "y") BINARY("c", "AddV2", "a", "a")
                        BINARY("d", "Sub", "x", "y") BINARY("e", "Sub", "y", "x") BINARY("f", "AddV2", "d", "e"));
    expect_report(r, "cse.dedup: b: 'b' merged into 'a'");
    expect_no_report(r, "'e'");   /* Sub is not commutative: not even a candidate */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0.5f, -1, 2, 7, -3, 0.25f};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[2] = {view(DT_FLOAT, x, sizeof x, 2, dims), view(DT_FLOAT, y, sizeof y, 2, dims)};
    const char *fn[2] = {"x", "y"}, *xn[2] = {"c", "f"};
    expect_same_results(orig, g, fn, ft, 2, xn, 2);
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
    const char *text = PH("x", DIM2) UNARY("a1", "Exp", "x") UNARY("b1", "Exp", "x") UNARY("a2", "Neg", "a1")
        UNARY("b2", "Neg", "b1") UNARY("a3", "Tanh", "a2") UNARY("b3", "Tanh", "b2") BINARY("out", "Sub", "a3", "b3");
    gn_graph *g = load_text(text);
    preserve(g, "out");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", DIM2) UNARY("a1", "Exp", "x") UNARY("a2", "Neg", "a1") UNARY("a3", "Tanh", "a2")
                        BINARY("out", "Sub", "a3", "a3"));
    expect_report(r, "'b1' merged into 'a1'");
    expect_report(r, "'b2' merged into 'a2'");
    expect_report(r, "'b3' merged into 'a3'");
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"out"};
    expect_same_results(orig, g, fn, ft, 1, xn, 1);
    assert_false(run_pass(g, NULL, NULL));
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Control inputs compare as a set; different sets, attrs or devices keep both. */
static void test_control_attrs_device(void **state)
{
    (void)state;
    const char *text = PH("x", DIM2) "node { name: 'p' op: 'NoOp' }\nnode { name: 'q' op: 'NoOp' input: '^x' }\n"
        "node { name: 'i1' op: 'Identity' input: 'x' input: '^p' input: '^q' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i2' op: 'Identity' input: 'x' input: '^q' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i3' op: 'Identity' input: 'x' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'l1' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.2 } } }\n"
        "node { name: 'l2' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.3 } } }\n"
        "node { name: 'r1' op: 'Relu' input: 'x' device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'r2' op: 'Relu' input: 'x' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'o' op: 'AddN' input: 'i1' input: 'i2' input: 'i3' input: 'l1' input: 'l2' input: 'r1' input: 'r2' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 7 } } }\n";
    gn_graph *g = load_text(text);
    preserve(g, "o");
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", DIM2) "node { name: 'p' op: 'NoOp' }\nnode { name: 'q' op: 'NoOp' input: '^x' }\n"
        "node { name: 'i1' op: 'Identity' input: 'x' input: '^p' input: '^q' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'i3' op: 'Identity' input: 'x' input: '^p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'l1' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.2 } } }\n"
        "node { name: 'l2' op: 'LeakyRelu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'alpha' value { f: 0.3 } } }\n"
        "node { name: 'r1' op: 'Relu' input: 'x' device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'r2' op: 'Relu' input: 'x' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'o' op: 'AddN' input: 'i1' input: 'i1' input: 'i3' input: 'l1' input: 'l2' input: 'r1' input: 'r2' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 7 } } }\n");
    expect_report(r, "'i2' merged into 'i1'");
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
        PH("x", "dim { size: 2 } dim { size: 6 }");
    char text[4096], want[4096];
    snprintf(text, sizeof text, "%s%s%s%s%s", head, SPLIT("s1"), SPLIT("s2"),
             BINARY("m", "Mul", "s1:1", "s2:2"), BINARY("n", "Sub", "s2:0", "s2:1"));
    snprintf(want, sizeof want, "%s%s%s%s", head, SPLIT("s1"), BINARY("m", "Mul", "s1:1", "s1:2"),
             BINARY("n", "Sub", "s1", "s1:1"));
#undef SPLIT
    gn_graph *g = load_text(text);
    preserve(g, "m");
    preserve(g, "n");
    gn_graph *orig = clone(g);
    assert_true(run_pass(g, NULL, NULL));
    expect_graph(g, want);
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i * 0.5f - 2.0f;
    int64_t dims[2] = {2, 6};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[2] = {"m", "n"};
    expect_same_results(orig, g, fn, ft, 1, xn, 2);
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
    const char *text = PH("x", "dim { size: 3 }")
        CONSTF("c1", "tensor_content: '\\000\\000\\200?\\000\\000\\200?\\000\\000\\200?'")
        CONSTF("c2", "float_val: 1 float_val: 1 float_val: 1") CONSTF("c3", "float_val: 1")
        CONSTF("c4", "float_val: 2") BINARY("a", "Mul", "x", "c1") BINARY("b", "Mul", "x", "c2")
        BINARY("c", "Mul", "x", "c3") BINARY("d", "Mul", "x", "c4")
        "node { name: 'o' op: 'AddN' input: 'a' input: 'b' input: 'c' input: 'd' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 4 } } }\n";
    gn_graph *g = load_text(text);
    preserve(g, "o");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", "dim { size: 3 }")
        CONSTF("c1", "tensor_content: '\\000\\000\\200?\\000\\000\\200?\\000\\000\\200?'") CONSTF("c4", "float_val: 2")
        BINARY("a", "Mul", "x", "c1") BINARY("d", "Mul", "x", "c4")
        "node { name: 'o' op: 'AddN' input: 'a' input: 'a' input: 'a' input: 'd' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'N' value { i: 4 } } }\n");
    expect_report(r, "cse.dedup_const: c2: 'c2' merged into 'c1'");
    expect_report(r, "cse.dedup_const: c3: 'c3' merged into 'c1'");
    expect_report(r, "cse.dedup: b: 'b' merged into 'a'");
    float x[3] = {1.5f, -2, 3};
    int64_t dims[1] = {3};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 1, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"o"};
    expect_same_results(orig, g, fn, ft, 1, xn, 1);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);

    /* with cse.dedup_const disabled, constants stay, and so does everything reading them */
    g = load_text(text);
    preserve(g, "o");
    assert_false(run_pass(g, NULL, "cse.dedup_const"));
    assert_int_equal(g->n_live, 10);
    gn_graph_free(g);
    /* the whole pass disabled */
    g = load_text(text);
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
    gn_graph *g = load_text(text);
    free(text);
    preserve(g, "o");
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    assert_int_equal(g->n_live, 3);
    assert_int_not_equal(gn__graph_find(g, "k3"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "k2"), GN_NONE);
    expect_report(r, "'k2' merged into 'k1'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- refusals ------------------------------------------------------------------------------- */
static void test_refusals(void **state)
{
    (void)state;
    const char *text = PH("x", DIM2)
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
    gn_graph *g = load_text(text);
    const char *keep[] = {"ru1", "ru2", "rd1", "rd2", "e1", "e2", "p1", "p2", "u1", "u2", "v", "v2"};
    preserve(g, "p1");
    preserve(g, "p2");
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    /* everything stays but one Assert */
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) assert_int_not_equal(gn__graph_find(g, keep[i]), GN_NONE);
    assert_int_equal(gn__graph_find(g, "as2"), GN_NONE);
    expect_report(r, "cse.dedup: ru2: 'ru2' computes the same as 'ru1' but is not merged: its op is stateful");
    expect_report(r, "cse.dedup: rd2: 'rd2' computes the same as 'rd1' but is not merged: it reads a ref tensor (a "
                     "variable) whose value may change between reads");
    expect_report(r, "cse.dedup: e2: 'e2' computes the same as 'e1' but is not merged: Enter and Exit delimit a loop frame");
    expect_report(r, "cse.dedup: p2: 'p2' computes the same as 'p1' but is not merged: both are preserved");
    expect_report(r, "cse.dedup: u2: 'u2' computes the same as 'u1' but is not merged: its op is not registered, so "
                     "its side effects are unknown");
    expect_report(r, "'as2' merged into 'as1'");   /* Grappler: Assert and Print are not really stateful */
    expect_no_report(r, "v2:");                    /* variables are not candidates at all */
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
    const char *text = PH("x", DIM2) UNARY("a", "Relu", "x") UNARY("b", "Relu", "x") UNARY("ca", "Neg", "a")
        UNARY("cb", "Neg", "b") BINARY("o", "Sub", "ca", "cb");
    gn_graph *g = load_text(text);
    preserve(g, "b");
    preserve(g, "o");
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", DIM2) UNARY("b", "Relu", "x") UNARY("ca", "Neg", "b") BINARY("o", "Sub", "ca", "ca"));
    expect_report(r, "'a' merged into 'b'");
    expect_report(r, "'cb' merged into 'ca'");
    gn_report_free(r);
    gn_graph_free(g);
}

/* Without preservation the smaller id survives, even when the larger was
 * visited first (q and p become equal only after a2 merged into a1). */
static void test_survivor_smaller_id(void **state)
{
    (void)state;
    const char *text = PH("x", DIM2) UNARY("a1", "Exp", "x") UNARY("a2", "Exp", "x") UNARY("q", "Neg", "a2")
        UNARY("p", "Neg", "a1") BINARY("o", "Sub", "p", "q");
    gn_graph *g = load_text(text);
    preserve(g, "o");
    gn_graph *orig = clone(g);
    gn_report *r = new_report();
    assert_true(run_pass(g, r, NULL));
    expect_graph(g, PH("x", DIM2) UNARY("a1", "Exp", "x") UNARY("q", "Neg", "a1") BINARY("o", "Sub", "q", "q"));
    expect_report(r, "'a2' merged into 'a1'");
    expect_report(r, "'p' merged into 'q'");
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    gn_tensor ft[1] = {view(DT_FLOAT, x, sizeof x, 2, dims)};
    const char *fn[1] = {"x"}, *xn[1] = {"o"};
    expect_same_results(orig, g, fn, ft, 1, xn, 1);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Nodes that feed an in-place op (through ops that may forward their buffer) are not merged. */
static void test_inplace(void **state)
{
    (void)state;
    const char *text = PH("x", DIM2) UNARY("a1", "Identity", "x") UNARY("a2", "Identity", "x")
        "node { name: 'i' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
        "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n"
        "node { name: 'v' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 3 } } float_val: 1 } } } }\n"
        "node { name: 'ip1' op: 'InplaceAdd' input: 'a1' input: 'i' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'ip2' op: 'InplaceAdd' input: 'a2' input: 'i' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = load_text(text);
    preserve(g, "ip1");
    preserve(g, "ip2");
    gn_report *r = new_report();
    assert_false(run_pass(g, r, NULL));
    expect_report(r, "'a2' computes the same as 'a1' but is not merged: it feeds an op that updates its input in place");
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- corpus, golden models, scale -------------------------------------------------------------- */
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
        prepare(g);
        uint32_t before = live_total(g);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        bool ch = run_all(g, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        check_valid(g, line);
        uint32_t after = live_total(g);
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

/* Golden models (tests/data/golden/manifest.txt): run before and after. */
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
        char a[512], b[512];
        int k = sscanf(line, "%511s %511s", a, b);
        if (k < 1 || a[0] == '#') continue;
        if (!strcmp(a, "model") && k == 2 && n < max) {
            cur = &m[n++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->name, sizeof cur->name, "%s", b);
        } else if (cur && !strcmp(a, "graph") && k == 2) {
            snprintf(cur->graph, sizeof cur->graph, "%s", b);
        } else if (cur && !strcmp(a, "feed") && cur->nf < 4) {
            char c[512];
            if (sscanf(line, "%*s %511s %511s", b, c) == 2) {
                snprintf(cur->feed[cur->nf], sizeof cur->feed[0], "%s", b);
                snprintf(cur->feed_file[cur->nf], sizeof cur->feed_file[0], "%s", c);
                cur->nf++;
            }
        } else if (cur && !strcmp(a, "fetch") && k == 2 && cur->nx < 4) {
            snprintf(cur->fetch[cur->nx++], sizeof cur->fetch[0], "%s", b);
        }
    }
    fclose(f);
    return n;
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
            char node[512];
            snprintf(node, sizeof node, "%s", fn[k]);
            node[strcspn(node, ":")] = 0;
            preserve(g, node);
        }
        for (size_t k = 0; k < m[i].nx; k++) {
            xn[k] = m[i].fetch[k];
            char node[512];
            snprintf(node, sizeof node, "%s", xn[k]);
            node[strcspn(node, ":")] = 0;
            preserve(g, node);
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
            ft[nf] = view(DT_FLOAT, bufs[nf], (size_t)n * sizeof(float), m->rank, m->dims);
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
            ft[nf] = view(DT_FLOAT, bufs[nf], (size_t)n * sizeof(float), (int32_t)sh->shape->n_dim, dims);
            fn[nf] = names[nf];
            nf++;
        }
        for (size_t k = 0; k < nf; k++) preserve(g, fn[k]);
        preserve(g, m->fetch);
        gn_graph *before = clone(g);
        uint32_t n0 = g->n_live;
        assert_true(run_pass(g, NULL, NULL));
        check_valid(g, m->path);
        const char *xn[1] = {m->fetch};
        expect_same_results(before, g, fn, ft, nf, xn, 1);
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
    gn__buf_puts(&b, PH("x", DIM2));
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
    gn_graph *g = load_text(text);
    free(text);
    preserve(g, "o");
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
    /* generous: linear would be 10x; allow noise but catch quadratic behaviour */
    if (t5 > 40 * t4 + 0.05) fail_msg("time grows faster than linear: %.3fs for 10^4, %.3fs for 10^5", t4, t5);
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
