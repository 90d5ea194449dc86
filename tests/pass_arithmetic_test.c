/* The arithmetic pass (src/optimizer/passes/arithmetic*.c), one pattern at a
 * time: a small graph before, the exact graph after (names, ops, inputs in
 * order, attrs), a refusal with its recorded reason where the pattern has
 * preconditions, and a numerical check on the CPU backend (original against
 * rewritten, same random inputs). Runs through gn_optimize with only the
 * arithmetic pass on, so the report, preservation and validation are the real
 * ones. Then every corpus model: the pass runs, the result validates, fanouts
 * check, a second run changes nothing, and the models the CPU runtime can run
 * give the same outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "optimizer/passes/arithmetic_impl.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_UINT8 4
#define DT_BOOL 10

/* ---- graph text builder ------------------------------------------------------------------ */
typedef struct gb {
    char s[65536];
    size_t n;
} gb;

static void gb_add(gb *b, const char *fmt, ...) GN__PRINTF(2, 3);
static void gb_add(gb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof b->s - b->n) fail_msg("graph text too long");
    b->n += (size_t)w;
}

static const char *dt_enum(const char *t)
{
    if (strcmp(t, "f") == 0) return "DT_FLOAT";
    if (strcmp(t, "i") == 0) return "DT_INT32";
    if (strcmp(t, "l") == 0) return "DT_INT64";
    if (strcmp(t, "b") == 0) return "DT_BOOL";
    if (strcmp(t, "u8") == 0) return "DT_UINT8";
    if (strcmp(t, "c") == 0) return "DT_COMPLEX64";
    if (strcmp(t, "d") == 0) return "DT_DOUBLE";
    return t;
}

static void shape_text(gb *b, const char *dims)
{
    gb_add(b, "shape {");
    const char *p = dims;
    while (p && *p) {
        long v = strtol(p, (char **)&p, 10);
        gb_add(b, " dim { size: %ld }", v);
        while (*p == ',' || *p == ' ') p++;
    }
    gb_add(b, " }");
}

/* Placeholder of dtype t ("f", "i", ...) and shape dims ("2,3"; "" scalar). */
static void ph(gb *b, const char *name, const char *t, const char *dims)
{
    gb_add(b, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } ", name, dt_enum(t));
    gb_add(b, "attr { key: \"shape\" value { ");
    shape_text(b, dims);
    gb_add(b, " } } }\n");
}

/* A node: inputs "a,b:1,^c"; attrs raw text ("T:f" shorthands expanded by at()). */
static void nd(gb *b, const char *name, const char *op, const char *inputs, const char *attrs)
{
    gb_add(b, "node { name: \"%s\" op: \"%s\"", name, op);
    const char *p = inputs;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        gb_add(b, " input: \"%.*s\"", (int)l, p);
        p = e ? e + 1 : p + l;
    }
    gb_add(b, " %s }\n", attrs ? attrs : "");
}

/* attr shorthands */
#define AT(k, t) "attr { key: \"" k "\" value { type: " t " } } "
#define AF "attr { key: \"T\" value { type: DT_FLOAT } } "
#define AI "attr { key: \"T\" value { type: DT_INT32 } } "
#define AB(k, v) "attr { key: \"" k "\" value { b: " v " } } "
#define AINT(k, v) "attr { key: \"" k "\" value { i: " v " } } "

/* Const of dtype t, shape dims, values "1,2,3" (float_val / int_val). */
static void cst(gb *b, const char *name, const char *t, const char *dims, const char *vals)
{
    bool isf = strcmp(t, "f") == 0 || strcmp(t, "d") == 0;
    bool isl = strcmp(t, "l") == 0;
    gb_add(b, "node { name: \"%s\" op: \"Const\" attr { key: \"dtype\" value { type: %s } } ", name, dt_enum(t));
    gb_add(b, "attr { key: \"value\" value { tensor { dtype: %s tensor_shape {", dt_enum(t));
    const char *p = dims;
    while (p && *p) {
        long v = strtol(p, (char **)&p, 10);
        gb_add(b, " dim { size: %ld }", v);
        while (*p == ',' || *p == ' ') p++;
    }
    gb_add(b, " }");
    p = vals;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        gb_add(b, " %s: %.*s", isf ? (strcmp(t, "d") == 0 ? "double_val" : "float_val") : isl ? "int64_val" : "int_val",
               (int)l, p);
        p = e ? e + 1 : p + l;
    }
    gb_add(b, " } } } }\n");
}

static gn_graph *load(const gb *b)
{
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(b->s, b->n, "t.pbtxt", NULL, &g) != GN_OK) fail_msg("load: %s\n%s", gn_graph_errmsg(g), b->s);
    return g;
}

/* ---- dump: one line per live node, sorted by name ------------------------------------------------ */
static void attr_text(char *out, size_t n, const Tensorflow__AttrValue *v)
{
    out[0] = 0;
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: snprintf(out, n, "%s", gn_dtype_name((int32_t)v->type)); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_I: snprintf(out, n, "%lld", (long long)v->i); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: snprintf(out, n, "%s", v->b ? "true" : "false"); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: snprintf(out, n, "%g", (double)v->f); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_S: snprintf(out, n, "\"%.*s\"", (int)v->s.len, (const char *)v->s.data); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        size_t at = 0;
        at += (size_t)snprintf(out + at, n - at, "[");
        for (size_t i = 0; v->list && i < v->list->n_s && at < n; i++)
            at += (size_t)snprintf(out + at, n - at, "%s%.*s", i ? "," : "", (int)v->list->s[i].len,
                                   (const char *)v->list->s[i].data);
        for (size_t i = 0; v->list && i < v->list->n_i && at < n; i++)
            at += (size_t)snprintf(out + at, n - at, "%s%lld", i ? "," : "", (long long)v->list->i[i]);
        if (at < n) snprintf(out + at, n - at, "]");
        break;
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
        gn__tensor t;
        gn__err e;
        gn__err_clear(&e);
        if (gn__tensor_from_proto(v->tensor, &t, &e) != GN_OK) {
            snprintf(out, n, "<bad tensor>");
            break;
        }
        size_t at = 0;
        at += (size_t)snprintf(out + at, n - at, "%s[", gn_dtype_name(t.dtype));
        for (int32_t i = 0; i < t.rank && at < n; i++) at += (size_t)snprintf(out + at, n - at, "%s%lld", i ? "," : "", (long long)t.dims[i]);
        at += (size_t)snprintf(out + at, at < n ? n - at : 0, "]{");
        int64_t cnt = gn__tensor_numel(&t);
        for (int64_t i = 0; i < cnt && i < 8 && at < n; i++) {
            if (t.dtype == DT_FLOAT) at += (size_t)snprintf(out + at, n - at, "%s%g", i ? "," : "", (double)((float *)t.data)[i]);
            else if (t.dtype == DT_INT32) at += (size_t)snprintf(out + at, n - at, "%s%d", i ? "," : "", ((int32_t *)t.data)[i]);
            else at += (size_t)snprintf(out + at, n - at, "%s?", i ? "," : "");
        }
        if (at < n) snprintf(out + at, n - at, "%s}", cnt > 8 ? ",..." : "");
        gn__tensor_release(&t);
        break;
    }
    default: snprintf(out, n, "?"); break;
    }
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* "name = Op(in, in:1, ^ctl) {k=v, ...} @device" lines, sorted. Owned. */
static char *dump(const gn_graph *g)
{
    char **lines = calloc(g->n_nodes + 1, sizeof *lines);
    size_t nl = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i)) continue;
        const gn__node *n = &g->nodes[i];
        char buf[8192];
        size_t at = (size_t)snprintf(buf, sizeof buf, "%s = %s(", gn__node_name(g, i), gn__node_op(g, i));
        for (uint32_t k = 0; k < n->n_in && at < sizeof buf; k++) {
            if (n->in[k].index) at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s:%u", k ? ", " : "", gn__node_name(g, n->in[k].node), n->in[k].index);
            else at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", k ? ", " : "", gn__node_name(g, n->in[k].node));
        }
        for (uint32_t k = 0; k < n->n_ctrl && at < sizeof buf; k++)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s^%s", (k || n->n_in) ? ", " : "", gn__node_name(g, n->ctrl[k]));
        at += (size_t)snprintf(buf + at, at < sizeof buf ? sizeof buf - at : 0, ")");
        bool first = true;
        for (uint32_t k = 0; k < n->n_attr && at < sizeof buf; k++) {
            const char *key = gn__str(g, n->attr[k].key);
            if (strcmp(key, "shape") == 0 && strcmp(gn__node_op(g, i), "Placeholder") == 0) continue;
            char v[1024];
            attr_text(v, sizeof v, n->attr[k].value);
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s=%s", first ? " {" : ", ", key, v);
            first = false;
        }
        if (!first && at < sizeof buf) at += (size_t)snprintf(buf + at, sizeof buf - at, "}");
        if (n->device && at < sizeof buf) snprintf(buf + at, sizeof buf - at, " @%s", gn__str(g, n->device));
        lines[nl++] = strdup(buf);
    }
    qsort(lines, nl, sizeof *lines, cmp_str);
    size_t tot = 1;
    for (size_t i = 0; i < nl; i++) tot += strlen(lines[i]) + 1;
    char *s = malloc(tot);
    size_t at = 0;
    for (size_t i = 0; i < nl; i++) {
        size_t l = strlen(lines[i]);
        memcpy(s + at, lines[i], l);
        s[at + l] = '\n';
        at += l + 1;
        free(lines[i]);
    }
    s[at] = 0;
    free(lines);
    return s;
}

/* ---- running the pass ------------------------------------------------------------------------------ */
static void only_arith(gn_options *o, int32_t toggle)
{
    gn_options_init(o);
    o->layout_optimizer = GN_TOGGLE_OFF;
    o->constant_folding = GN_TOGGLE_OFF;
    o->shape_optimization = GN_TOGGLE_OFF;
    o->remapping = GN_TOGGLE_OFF;
    o->arithmetic_optimization = toggle;
    o->dependency_optimization = GN_TOGGLE_OFF;
    o->loop_optimization = GN_TOGGLE_OFF;
    o->function_optimization = GN_TOGGLE_OFF;
    o->debug_stripper = GN_TOGGLE_OFF;
    o->disable_model_pruning = 1;
    o->scoped_allocator_optimization = GN_TOGGLE_OFF;
    o->pin_to_host_optimization = GN_TOGGLE_OFF;
    o->implementation_selector = GN_TOGGLE_OFF;
    o->auto_mixed_precision = GN_TOGGLE_OFF;
    o->common_subgraph_elimination = GN_TOGGLE_OFF;
    o->min_graph_nodes = -1;
    o->meta_optimizer_iterations = GN_ITERS_ONE;
    o->fail_on_optimizer_errors = 1;
    o->checked = 1;
}

/* Runs the arithmetic pass alone on g; returns the report as JSON (owned). */
static char *run_arith_opts(gn_graph *g, const char *const *fetches, size_t nf, int32_t toggle, const char *disabled)
{
    gn_options o;
    only_arith(&o, toggle);
    o.disabled_patterns = disabled;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fetches;
    p.n_fetches = nf;
    gn_report *r = NULL;
    gn_status s = gn_optimize(g, &o, &p, &r);
    char *json = NULL;
    if (r) gn_report_to_json(r, &json);
    if (s != GN_OK) fail_msg("optimize: %s\n%s", gn_graph_errmsg(g), json ? json : "");
    gn_report_free(r);
    if (gn__graph_validate(g) != GN_OK) fail_msg("invalid after the pass: %s", gn_graph_errmsg(g));
    if (gn__graph_check_fanouts(g) != GN_OK) fail_msg("fanouts: %s", gn_graph_errmsg(g));
    return json;
}

static char *run_arith(gn_graph *g, const char *const *fetches, size_t nf)
{
    return run_arith_opts(g, fetches, nf, GN_TOGGLE_DEFAULT, NULL);
}

static void expect_graph(const gn_graph *g, const char *want)
{
    char *got = dump(g);
    if (strcmp(got, want) != 0) {
        char msg[32768];
        snprintf(msg, sizeof msg, "graph differs\n--- got ---\n%s--- want ---\n%s", got, want);
        free(got);
        fail_msg("%s", msg);
    }
    free(got);
}

/* The report has an event of kind ("rewrote"/"refused") for pattern on node
 * whose detail contains `detail`. */
static void expect_event(const char *json, const char *kind, const char *pattern, const char *node, const char *detail)
{
    char head[1024];
    snprintf(head, sizeof head, "\"kind\": \"%s\", \"pattern\": \"arithmetic.%s\", \"node\": \"%s\", \"detail\": \"",
             kind, pattern, node);
    for (const char *p = strstr(json, head); p; p = strstr(p + 1, head)) {
        const char *d = p + strlen(head);
        const char *e = strchr(d, '}');
        if (!e) break;
        const char *hit = strstr(d, detail);
        if (hit && hit < e) return;
    }
    fail_msg("no %s event for %s on '%s' with '%s' in\n%s", kind, pattern, node, detail, json);
}

static void expect_no_event(const char *json, const char *pattern)
{
    char head[256];
    snprintf(head, sizeof head, "\"pattern\": \"arithmetic.%s\"", pattern);
    if (strstr(json, head)) fail_msg("unexpected %s event in\n%s", pattern, json);
}

/* ---- numerics ---------------------------------------------------------------------------------------- */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random feeds for every Placeholder of g (shape from its attr), in [lo, hi]. */
typedef struct feeds {
    const char *names[16];
    gn_tensor t[16];
    size_t n;
} feeds;

static void make_feeds(const gn_graph *g, feeds *f, double lo, double hi, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    uint64_t s = seed ? seed : 88172645463325252ull;
    for (gn_id i = 0; i < g->n_nodes && f->n < 16; i++) {
        if (!gn__node_live(g, i) || strcmp(gn__node_op(g, i), "Placeholder") != 0) continue;
        int dt = 0;
        gn__attr_get_type(g, i, "dtype", &dt);
        const Tensorflow__AttrValue *sh = gn__node_attr(g, i, "shape");
        int64_t dims[8];
        int32_t rank = 0;
        if (sh && sh->shape)
            for (size_t k = 0; k < sh->shape->n_dim && k < 8; k++) dims[rank++] = sh->shape->dim[k]->size;
        gn_tensor *t = &f->t[f->n];
        if (gn_tensor_alloc(dt, rank, dims, t) != GN_OK) fail_msg("alloc feed %s", gn__node_name(g, i));
        int64_t cnt = gn_tensor_numel(t);
        for (int64_t k = 0; k < cnt; k++) {
            double u = (double)(rng_next(&s) >> 11) / 9007199254740992.0;
            double v = lo + (hi - lo) * u;
            switch (dt) {
            case DT_FLOAT: ((float *)t->data)[k] = (float)v; break;
            case DT_INT32: ((int32_t *)t->data)[k] = (int32_t)floor(v); break;
            case DT_UINT8: ((uint8_t *)t->data)[k] = (uint8_t)floor(fabs(v)); break;
            case DT_BOOL: ((uint8_t *)t->data)[k] = v > (lo + hi) / 2; break;
            default: fail_msg("feed dtype %d", dt);
            }
        }
        f->names[f->n++] = gn__node_name(g, i);
    }
}

static void free_feeds(feeds *f)
{
    for (size_t i = 0; i < f->n; i++) gn_tensor_free(&f->t[i]);
}

static void run_graph(const gn_graph *g, const feeds *f, const char *const *fetch, size_t nx, gn_tensor *out)
{
    gn_session_options so;
    gn_session_options_init(&so);
    gn_session *s = NULL;
    if (gn_session_new(g, &so, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, f->names, f->t, f->n, fetch, out, nx) != GN_OK) {
        char msg[2048];
        snprintf(msg, sizeof msg, "run: %s", gn_session_errmsg(s));
        gn_session_free(s);
        fail_msg("%s", msg);
    }
    gn_session_free(s);
}

/* before and after give the same fetches on the same random inputs */
static void check_numeric_range(const gn_graph *before, const gn_graph *after, const char *const *fetch, size_t nx,
                                double lo, double hi)
{
    feeds f;
    make_feeds(before, &f, lo, hi, 0);
    gn_tensor a[8], b[8];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    run_graph(before, &f, fetch, nx, a);
    run_graph(after, &f, fetch, nx, b);
    for (size_t i = 0; i < nx; i++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b[i], &a[i], 0, &cr), GN_OK);
        if (!cr.match) fail_msg("fetch %s differs: %s (rel L2 %g)", fetch[i], cr.why, cr.rel_l2_err);
        gn_tensor_free(&a[i]);
        gn_tensor_free(&b[i]);
    }
    free_feeds(&f);
}

static void check_numeric(const gn_graph *before, const gn_graph *after, const char *const *fetch, size_t nx)
{
    check_numeric_range(before, after, fetch, nx, 0.5, 2.0);
}

/* A second run over the result changes nothing. */
static void expect_fixed_point(gn_graph *g, const char *const *fetches, size_t nf, int32_t toggle)
{
    char *d1 = dump(g);
    char *json = run_arith_opts(g, fetches, nf, toggle, NULL);
    char *d2 = dump(g);
    if (strcmp(d1, d2) != 0) fail_msg("second run changed the graph\n--- first ---\n%s--- second ---\n%s\n%s", d1, d2, json);
    free(d1);
    free(d2);
    free(json);
}

/* One pattern case: build, clone, optimize, compare, check numerics and the fixed point. */
typedef struct case_out {
    gn_graph *before, *after;
    char *json;
} case_out;

static case_out run_case(const gb *b, const char *const *fetch, size_t nx, int32_t toggle)
{
    case_out c;
    c.after = load(b);
    if (gn_graph_clone(c.after, &c.before) != GN_OK) fail_msg("clone");
    c.json = run_arith_opts(c.after, fetch, nx, toggle, NULL);
    return c;
}

static void case_free(case_out *c)
{
    gn_graph_free(c->before);
    gn_graph_free(c->after);
    free(c->json);
}

static const char *const k_out[] = {"out"};
static const char *const k_out2[] = {"out", "out2"};

/* ==== tests ============================================================================================= */
static void test_tables(void **state)
{
    (void)state;
    assert_true(gn__ar_op_table_sorted());
    size_t n = 0;
    while (gn__patterns_arithmetic[n].id) n++;
    assert_int_equal(n, GN__AR_NPAT);
}

/* ---- 1. add_ops_rewrite -------------------------------------------------------------------------------- */
static void test_add_ops_rewrite(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y", "f", "2,3");
    ph(&b, "z", "f", "2,3");
    ph(&b, "w", "f", "2,3");
    nd(&b, "a1", "Add", "x,y", AF);
    nd(&b, "a2", "AddV2", "z,w", AF);
    nd(&b, "s", "AddN", "a1,a2", AF AINT("N", "2"));
    nd(&b, "out", "Identity", "s", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/AddOpsRewrite_s = AddN(x, y, z, w) {N=4, T=float}\n"
                          "out = Identity(ArithmeticOptimizer/AddOpsRewrite_s) {T=float}\n"
                          "w = Placeholder() {dtype=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "add_ops_rewrite", "s", "3 Add/AddN nodes over 4 inputs (1 shape)");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

static void test_add_ops_rewrite_broadcast(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y", "f", "2,3");
    ph(&b, "bb", "f", "3");
    ph(&b, "cc", "f", "3");
    nd(&b, "a1", "AddV2", "x,bb", AF);
    nd(&b, "a2", "AddV2", "y,cc", AF);
    nd(&b, "s", "AddV2", "a1,a2", AF);
    nd(&b, "out", "Identity", "s", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/AddOpsRewrite_s = AddV2(ArithmeticOptimizer/AddOpsRewrite_s_Leaf_0, "
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_1) {T=float}\n"
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_0 = AddN(bb, cc) {N=2, T=float}\n"
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_1 = AddN(x, y) {N=2, T=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/AddOpsRewrite_s) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

static void test_add_ops_rewrite_refused(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y", "f", "2,3");
    ph(&b, "z", "f", "2,3");
    nd(&b, "a1", "AddV2", "x,y", AF);
    nd(&b, "s", "AddV2", "a1,z", AF);
    nd(&b, "out", "Identity", "s", AF);
    nd(&b, "out2", "Identity", "a1", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "add_ops_rewrite", "s", "input 'a1' not absorbed: it has more than one consumer");
    char *d0 = dump(c.before), *d1 = dump(c.after);
    assert_string_equal(d0, d1);
    free(d0);
    free(d1);
    case_free(&c);
}

/* ---- 2. fold_conjugate_into_transpose (complex: no CPU kernels, structure only) ------------------------ */
static void test_fold_conjugate_into_transpose(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "c", "2,3");
    ph(&b, "y", "c", "2,3");
    cst(&b, "perm", "i", "2", "1,0");
    nd(&b, "t", "Transpose", "x,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    nd(&b, "c", "Conj", "t", AT("T", "DT_COMPLEX64"));
    nd(&b, "out", "Identity", "c", AT("T", "DT_COMPLEX64"));
    nd(&b, "c2", "Conj", "y", AT("T", "DT_COMPLEX64"));
    nd(&b, "t2", "ConjugateTranspose", "c2,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    nd(&b, "out2", "Identity", "t2", AT("T", "DT_COMPLEX64"));
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/FoldConjugateIntoTranspose_c = ConjugateTranspose(x, perm) {T=complex64, Tperm=int32}\n"
                          "ArithmeticOptimizer/FoldConjugateIntoTranspose_t2 = Transpose(y, perm) {T=complex64, Tperm=int32}\n"
                          "out = Identity(ArithmeticOptimizer/FoldConjugateIntoTranspose_c) {T=complex64}\n"
                          "out2 = Identity(ArithmeticOptimizer/FoldConjugateIntoTranspose_t2) {T=complex64}\n"
                          "perm = Const() {dtype=int32, value=int32[2]{1,0}}\n"
                          "x = Placeholder() {dtype=complex64}\n"
                          "y = Placeholder() {dtype=complex64}\n");
    expect_event(c.json, "rewrote", "fold_conjugate_into_transpose", "c", "Conj(Transpose) -> ConjugateTranspose");
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    /* refused: the transpose is fetched too */
    static const char *const f[] = {"out", "t"};
    gb b2 = {0};
    ph(&b2, "x", "c", "2,3");
    cst(&b2, "perm", "i", "2", "1,0");
    nd(&b2, "t", "Transpose", "x,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    nd(&b2, "c", "Conj", "t", AT("T", "DT_COMPLEX64"));
    nd(&b2, "out", "Identity", "c", AT("T", "DT_COMPLEX64"));
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_conjugate_into_transpose", "c", "'t' is preserved");
    case_free(&c);
}

/* ---- 3. fold_multiply_into_conv ------------------------------------------------------------------------- */
#define CONV_ATTRS AF "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: \"padding\" value { s: \"VALID\" } } "

static void test_fold_multiply_into_conv(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "1,4,4,2");
    cst(&b, "s", "f", "", "0.5");
    cst(&b, "w", "f", "2,2,2,3", "0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,0.25");
    nd(&b, "m", "Mul", "x,s", AF);
    cst(&b, "shp", "i", "4", "1,4,4,2");
    nd(&b, "r", "Reshape", "m,shp", AF AT("Tshape", "DT_INT32"));
    nd(&b, "conv", "Conv2D", "r,w", CONV_ATTRS);
    nd(&b, "out", "Identity", "conv", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after,
                 "ArithmeticOptimizer/FoldMultiplyIntoConv_w_scaled_conv = Mul(w, s) {T=float}\n"
                 "conv = Conv2D(x, ArithmeticOptimizer/FoldMultiplyIntoConv_w_scaled_conv) {T=float, padding=\"VALID\", strides=[1,1,1,1]}\n"
                 "out = Identity(conv) {T=float}\n"
                 "s = Const() {dtype=float, value=float[]{0.5}}\n"
                 "w = Const() {dtype=float, value=float[2,2,2,3]{0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,0.25,...}}\n"
                 "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "fold_multiply_into_conv", "conv", "scalar Mul 'm' folded into the weights");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    gb b2 = {0};
    ph(&b2, "x", "f", "1,4,4,2");
    cst(&b2, "s", "f", "", "0.5");
    cst(&b2, "w", "f", "2,2,2,3", "0.1");
    nd(&b2, "m", "Mul", "x,s", AF);
    nd(&b2, "conv", "Conv2D", "m,w", CONV_ATTRS);
    nd(&b2, "out", "Identity", "conv", AF);
    nd(&b2, "out2", "Identity", "m", AF);
    c = run_case(&b2, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_multiply_into_conv", "conv", "Mul 'm' has other consumers");
    case_free(&c);
}

/* ---- 4. fold_transpose_into_matmul ------------------------------------------------------------------------ */
static void test_fold_transpose_into_matmul(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "a", "f", "3,2");
    ph(&b, "b", "f", "3,4");
    cst(&b, "perm", "i", "2", "1,0");
    nd(&b, "t", "Transpose", "a,perm", AF AT("Tperm", "DT_INT32"));
    nd(&b, "mm", "MatMul", "t,b", AF);
    nd(&b, "out", "Identity", "mm", AF);
    ph(&b, "x", "f", "2,3,4");
    ph(&b, "y", "f", "2,5,4");
    cst(&b, "p3", "i", "3", "0,2,1");
    nd(&b, "ty", "Transpose", "y,p3", AF AT("Tperm", "DT_INT32"));
    nd(&b, "bm", "BatchMatMulV2", "x,ty", AF);
    nd(&b, "out2", "Identity", "bm", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/FoldTransposeIntoMatMul_bm = BatchMatMulV2(x, y) {T=float, adj_y=true}\n"
                          "ArithmeticOptimizer/FoldTransposeIntoMatMul_mm = MatMul(a, b) {T=float, transpose_a=true}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "b = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/FoldTransposeIntoMatMul_mm) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/FoldTransposeIntoMatMul_bm) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "t"};
    gb b2 = {0};
    ph(&b2, "a", "f", "3,2");
    ph(&b2, "b", "f", "3,4");
    cst(&b2, "perm", "i", "2", "1,0");
    nd(&b2, "t", "Transpose", "a,perm", AF AT("Tperm", "DT_INT32"));
    nd(&b2, "mm", "MatMul", "t,b", AF);
    nd(&b2, "out", "Identity", "mm", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_transpose_into_matmul", "mm", "transpose 't' is preserved");
    case_free(&c);
}

/* ---- 5. hoist_common_factor (AGGRESSIVE only) -------------------------------------------------------------- */
static gb hoist_graph(void)
{
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y1", "f", "2,3");
    ph(&b, "y2", "f", "2,3");
    nd(&b, "m1", "Mul", "x,y1", AF);
    nd(&b, "m2", "Mul", "y2,x", AF);
    nd(&b, "s", "AddN", "m1,m2", AF AINT("N", "2"));
    nd(&b, "out", "Identity", "s", AF);
    nd(&b, "d1", "RealDiv", "y1,x", AF);
    nd(&b, "d2", "RealDiv", "y2,x", AF);
    nd(&b, "s2", "AddV2", "d1,d2", AF);
    nd(&b, "out2", "Identity", "s2", AF);
    return b;
}

static void test_hoist_common_factor(void **state)
{
    (void)state;
    gb b = hoist_graph();
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_AGGRESSIVE);
    expect_graph(c.after, "ArithmeticOptimizer/HoistCommonFactor_s2_AddV2 = AddV2(y1, y2) {T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s2_Div = RealDiv(ArithmeticOptimizer/HoistCommonFactor_s2_AddV2, x) {T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s_AddV2 = AddN(y1, y2) {N=2, T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s_Mul = Mul(x, ArithmeticOptimizer/HoistCommonFactor_s_AddV2) {T=float}\n"
                          "out = Identity(ArithmeticOptimizer/HoistCommonFactor_s_Mul) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/HoistCommonFactor_s2_Div) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y1 = Placeholder() {dtype=float}\n"
                          "y2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "hoist_common_factor", "s", "common factor 'x' hoisted out of 2 terms");
    expect_event(c.json, "rewrote", "hoist_common_factor", "s2", "common denominator 'x'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_AGGRESSIVE);
    case_free(&c);
    /* refused: not AGGRESSIVE */
    b = hoist_graph();
    c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "hoist_common_factor", "s", "only when arithmetic_optimization is AGGRESSIVE");
    case_free(&c);
}

/* ---- 6. minimize_broadcasts ---------------------------------------------------------------------------------- */
static void test_minimize_broadcasts(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "big", "f", "2,3");
    ph(&b, "s1", "f", "3");
    ph(&b, "s2", "f", "3");
    nd(&b, "m1", "Mul", "big,s1", AF);
    nd(&b, "m2", "Mul", "m1,s2", AF);
    nd(&b, "out", "Identity", "m2", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "big = Placeholder() {dtype=float}\n"
                          "m1 = Mul(s1, s2) {T=float}\n"
                          "m2 = Mul(m1, big) {T=float}\n"
                          "out = Identity(m2) {T=float}\n"
                          "s1 = Placeholder() {dtype=float}\n"
                          "s2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "minimize_broadcasts", "m2", "2 Mul nodes over 3 inputs reordered");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 7. remove_redundant_transpose ------------------------------------------------------------------------------ */
static void test_remove_redundant_transpose(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "x", "f", "2,3,4");
    cst(&b, "p1", "i", "3", "1,2,0");
    cst(&b, "p2", "i", "3", "2,0,1");
    nd(&b, "t1", "Transpose", "x,p1", AF AT("Tperm", "DT_INT32"));
    nd(&b, "t2", "Transpose", "t1,p2", AF AT("Tperm", "DT_INT32"));
    nd(&b, "out", "Identity", "t2", AF);
    ph(&b, "y", "f", "2,3,4");
    nd(&b, "u1", "Transpose", "y,p1", AF AT("Tperm", "DT_INT32"));
    nd(&b, "i1", "Snapshot", "u1", AF);
    nd(&b, "u2", "Transpose", "i1,p2", AF AT("Tperm", "DT_INT32"));
    nd(&b, "out2", "Identity", "u2", AF);
    ph(&b, "z", "f", "2,3");
    cst(&b, "pid", "i", "2", "0,1");
    nd(&b, "t3", "Transpose", "z,pid", AF AT("Tperm", "DT_INT32"));
    nd(&b, "out3", "Identity", "t3", AF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "i1 = Snapshot(y) {T=float}\n"
                          "out = Identity(x) {T=float}\n"
                          "out2 = Identity(i1) {T=float}\n"
                          "out3 = Identity(z) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_transpose", "t2", "cancels 't1'");
    expect_event(c.json, "rewrote", "remove_redundant_transpose", "t3", "identity permutation");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "t1"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3,4");
    cst(&b2, "p1", "i", "3", "1,2,0");
    cst(&b2, "p2", "i", "3", "2,0,1");
    nd(&b2, "t1", "Transpose", "x,p1", AF AT("Tperm", "DT_INT32"));
    nd(&b2, "t2", "Transpose", "t1,p2", AF AT("Tperm", "DT_INT32"));
    nd(&b2, "out", "Identity", "t2", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_redundant_transpose", "t2", "'t1' is preserved");
    case_free(&c);
}

/* ---- 8. remove_involution ---------------------------------------------------------------------------------------- */
static void test_remove_involution(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "n1", "Neg", "x", AF);
    nd(&b, "n2", "Neg", "n1", AF);
    nd(&b, "out", "Identity", "n2", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "r1", "Reciprocal", "y", AF);
    cst(&b, "shp", "i", "1", "6");
    nd(&b, "rs", "Reshape", "r1,shp", AF AT("Tshape", "DT_INT32"));
    nd(&b, "r2", "Reciprocal", "rs", AF);
    nd(&b, "out2", "Identity", "r2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(x) {T=float}\n"
                          "out2 = Identity(rs) {T=float}\n"
                          "rs = Reshape(y, shp) {T=float, Tshape=int32}\n"
                          "shp = Const() {dtype=int32, value=int32[1]{6}}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_involution", "r2", "across value-preserving ops");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "n1"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3");
    nd(&b2, "n1", "Neg", "x", AF);
    nd(&b2, "n2", "Neg", "n1", AF);
    nd(&b2, "out", "Identity", "n2", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_involution", "n2", "'n1' is preserved");
    case_free(&c);
}

/* ---- 9. remove_redundant_bitcast ------------------------------------------------------------------------------------ */
static void test_remove_redundant_bitcast(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "b1", "Bitcast", "x", AF AT("type", "DT_INT32"));
    nd(&b, "b2", "Bitcast", "b1", AI AT("type", "DT_FLOAT"));
    nd(&b, "out", "Identity", "b2", AF);
    ph(&b, "y", "i", "2,3");
    nd(&b, "b3", "Bitcast", "y", AI AT("type", "DT_INT32"));
    nd(&b, "out2", "Identity", "b3", AI);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(x) {T=float}\n"
                          "out2 = Identity(y) {T=int32}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=int32}\n");
    expect_event(c.json, "rewrote", "remove_redundant_bitcast", "b2", "Bitcast of Bitcast 'b1'");
    expect_event(c.json, "rewrote", "remove_redundant_bitcast", "b3", "Bitcast from int32 to itself");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 10. remove_redundant_cast ------------------------------------------------------------------------------------------ */
static void test_remove_redundant_cast(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "c", "Cast", "x", AT("SrcT", "DT_FLOAT") AT("DstT", "DT_FLOAT"));
    nd(&b, "out", "Identity", "c", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(x) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_cast", "c", "Cast from float to itself");
    check_numeric(c.before, c.after, k_out, 1);
    case_free(&c);
    static const char *const f[] = {"c"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3");
    nd(&b2, "c", "Cast", "x", AT("SrcT", "DT_FLOAT") AT("DstT", "DT_FLOAT"));
    nd(&b2, "out", "Identity", "c", AF);
    c = run_case(&b2, f, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_redundant_cast", "c", "the Cast is preserved");
    case_free(&c);
}

/* ---- 11. replace_pack_with_tile_reshape ------------------------------------------------------------------------------------ */
static void test_replace_pack_with_tile_reshape(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "pk", "Pack", "x,x", AF AINT("N", "2") AINT("axis", "0"));
    nd(&b, "out", "Identity", "pk", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "p2", "Pack", "y,y", AF AINT("N", "2") AINT("axis", "-1"));
    nd(&b, "out2", "Identity", "p2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after,
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Multiples = Const() {dtype=int32, value=int32[2]{2,1}}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Reshape = Reshape(ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Tile, "
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Shape) {T=float, Tshape=int32}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Shape = Const() {dtype=int32, value=int32[3]{2,2,3}}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Tile = Tile(x, ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Multiples) {T=float, Tmultiples=int32}\n"
                 "out = Identity(ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Reshape) {T=float}\n"
                 "out2 = Identity(p2) {T=float}\n"
                 "p2 = Pack(y, y) {N=2, T=float, axis=-1}\n"
                 "x = Placeholder() {dtype=float}\n"
                 "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "replace_pack_with_tile_reshape", "p2", "'p2' packs along the last axis");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 12. replace_mul_with_tile -------------------------------------------------------------------------------------------------- */
static void test_replace_mul_with_tile(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,1,3");
    cst(&b, "ones", "f", "2,4,3", "1");
    nd(&b, "m", "Mul", "x,ones", AF);
    nd(&b, "out", "Identity", "m", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after,
                 "ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Const = Const() {dtype=int32, value=int32[3]{1,4,1}}\n"
                 "ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Tile = Tile(x, ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Const) {T=float, Tmultiples=int32}\n"
                 "out = Identity(ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Tile) {T=float}\n"
                 "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "x"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,1,3");
    cst(&b2, "ones", "f", "2,4,3", "1");
    nd(&b2, "m", "Mul", "x,ones", AF);
    nd(&b2, "out", "Identity", "m", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "replace_mul_with_tile", "m", "'x' is preserved");
    case_free(&c);
}

/* ---- 13. reduce_upsampling_dims ----------------------------------------------------------------------------------------------------- */
static void test_reduce_upsampling_dims(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "1,2,2,3");
    cst(&b, "s6", "i", "6", "1,2,1,2,1,3");
    nd(&b, "r1", "Reshape", "x,s6", AF AT("Tshape", "DT_INT32"));
    cst(&b, "m6", "i", "6", "1,1,2,1,2,1");
    nd(&b, "t", "Tile", "r1,m6", AF AT("Tmultiples", "DT_INT32"));
    cst(&b, "s4", "i", "4", "1,4,4,3");
    nd(&b, "r2", "Reshape", "t,s4", AF AT("Tshape", "DT_INT32"));
    nd(&b, "out", "Identity", "r2", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after,
                 "ArithmeticOptimizer/ReduceUpsamplingDims_r2_Multiples = Const() {dtype=int32, value=int32[4]{1,1,2,2}}\n"
                 "ArithmeticOptimizer/ReduceUpsamplingDims_r2_Tile = Tile(x, ArithmeticOptimizer/ReduceUpsamplingDims_r2_Multiples) {T=float, Tmultiples=int32}\n"
                 "out = Identity(r2) {T=float}\n"
                 "r2 = Reshape(ArithmeticOptimizer/ReduceUpsamplingDims_r2_Tile, s4) {T=float, Tshape=int32}\n"
                 "s4 = Const() {dtype=int32, value=int32[4]{1,4,4,3}}\n"
                 "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "reduce_upsampling_dims", "r2", "6-D upsampling through 'r1' and 't'");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 14. remove_redundant_reshape ------------------------------------------------------------------------------------------------------ */
static void test_remove_redundant_reshape(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    cst(&b, "s1", "i", "1", "6");
    nd(&b, "r1", "Reshape", "x,s1", AF AT("Tshape", "DT_INT32"));
    cst(&b, "s2", "i", "2", "3,2");
    nd(&b, "r2", "Reshape", "r1,s2", AF AT("Tshape", "DT_INT32"));
    nd(&b, "out", "Identity", "r2", AF);
    ph(&b, "y", "f", "2,3");
    cst(&b, "s3", "i", "2", "2,3");
    nd(&b, "r3", "Reshape", "y,s3", AF AT("Tshape", "DT_INT32"));
    nd(&b, "out2", "Identity", "r3", AF);
    ph(&b, "z", "f", "2,3");
    nd(&b, "r4", "Reshape", "z,s3,^s2", AF AT("Tshape", "DT_INT32"));
    nd(&b, "out3", "Identity", "r4", AF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(r2) {T=float}\n"
                          "out2 = Identity(y) {T=float}\n"
                          "out3 = Identity(r4) {T=float}\n"
                          "r2 = Reshape(x, s2) {T=float, Tshape=int32}\n"
                          "r4 = Reshape(z, s3, ^s2) {T=float, Tshape=int32}\n"
                          "s2 = Const() {dtype=int32, value=int32[2]{3,2}}\n"
                          "s3 = Const() {dtype=int32, value=int32[2]{2,3}}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_reshape", "r2", "Reshape of Reshape 'r1'");
    expect_event(c.json, "rewrote", "remove_redundant_reshape", "r3", "to the input's own shape [2,3]");
    expect_event(c.json, "refused", "remove_redundant_reshape", "r4", "it anchors control dependencies");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 15. remove_negation ------------------------------------------------------------------------------------------------------------------ */
static void test_remove_negation(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "a", "f", "2,3");
    ph(&b, "b", "f", "2,3");
    nd(&b, "nb", "Neg", "b", AF);
    nd(&b, "s1", "AddV2", "a,nb", AF);
    nd(&b, "out", "Identity", "s1", AF);
    ph(&b, "c", "f", "2,3");
    ph(&b, "d", "f", "2,3");
    nd(&b, "nd", "Neg", "d", AF);
    nd(&b, "s2", "Sub", "c,nd", AF);
    nd(&b, "out2", "Identity", "s2", AF);
    ph(&b, "e", "f", "2,3");
    ph(&b, "g", "f", "2,3");
    nd(&b, "ne", "Neg", "e", AF);
    nd(&b, "s3", "Add", "ne,g", AF);
    nd(&b, "out3", "Identity", "s3", AF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "a = Placeholder() {dtype=float}\n"
                          "b = Placeholder() {dtype=float}\n"
                          "c = Placeholder() {dtype=float}\n"
                          "d = Placeholder() {dtype=float}\n"
                          "e = Placeholder() {dtype=float}\n"
                          "g = Placeholder() {dtype=float}\n"
                          "out = Identity(s1) {T=float}\n"
                          "out2 = Identity(s2) {T=float}\n"
                          "out3 = Identity(s3) {T=float}\n"
                          "s1 = Sub(a, b) {T=float}\n"
                          "s2 = AddV2(c, d) {T=float}\n"
                          "s3 = Sub(g, e) {T=float}\n");
    expect_event(c.json, "rewrote", "remove_negation", "s2", "Sub with Neg 'nd' -> AddV2");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 16. replace_mul_with_square --------------------------------------------------------------------------------------------------------- */
static void test_replace_mul_with_square(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "m", "Mul", "x,x", AF);
    nd(&b, "out", "Identity", "m", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/ReplaceMulWithSquare_m = Square(x) {T=float}\n"
                          "out = Identity(ArithmeticOptimizer/ReplaceMulWithSquare_m) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"m"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3");
    nd(&b2, "m", "Mul", "x,x", AF);
    c = run_case(&b2, f, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "replace_mul_with_square", "m", "the Mul is preserved");
    case_free(&c);
}

/* ---- 17. remove_logical_not --------------------------------------------------------------------------------------------------------------- */
static void test_remove_logical_not(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "a", "f", "8");
    ph(&b, "bb", "f", "8");
    nd(&b, "e", "Equal", "a,bb", AF);
    nd(&b, "ln", "LogicalNot", "e", "");
    nd(&b, "out", "Identity", "ln", AT("T", "DT_BOOL"));
    ph(&b, "i1", "i", "8");
    ph(&b, "i2", "i", "8");
    nd(&b, "l", "Less", "i1,i2", AI);
    nd(&b, "ln2", "LogicalNot", "l", "");
    nd(&b, "out2", "Identity", "ln2", AT("T", "DT_BOOL"));
    ph(&b, "f1", "f", "8");
    ph(&b, "f2", "f", "8");
    nd(&b, "l3", "Less", "f1,f2", AF);
    nd(&b, "ln3", "LogicalNot", "l3", "");
    nd(&b, "out3", "Identity", "ln3", AT("T", "DT_BOOL"));
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "e = NotEqual(a, bb) {T=float}\n"
                          "f1 = Placeholder() {dtype=float}\n"
                          "f2 = Placeholder() {dtype=float}\n"
                          "i1 = Placeholder() {dtype=int32}\n"
                          "i2 = Placeholder() {dtype=int32}\n"
                          "l = GreaterEqual(i1, i2) {T=int32}\n"
                          "l3 = Less(f1, f2) {T=float}\n"
                          "ln3 = LogicalNot(l3)\n"
                          "out = Identity(e) {T=bool}\n"
                          "out2 = Identity(l) {T=bool}\n"
                          "out3 = Identity(ln3) {T=bool}\n");
    expect_event(c.json, "refused", "remove_logical_not", "ln3", "NaN");
    check_numeric_range(c.before, c.after, f3, 3, 0.0, 3.0);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 18. reorder_cast_like_and_value_preserving ------------------------------------------------------------------------------------------------ */
#define CPU "device: \"/device:CPU:0\" "

static gb cast_graph(bool device)
{
    gb b = {0};
    gb_add(&b, "node { name: \"x\" op: \"Placeholder\" %s attr { key: \"dtype\" value { type: DT_UINT8 } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } dim { size: 4 } } } } }\n",
           device ? CPU : "");
    nd(&b, "c", "Cast", "x", device ? CPU AT("SrcT", "DT_UINT8") AT("DstT", "DT_FLOAT") : AT("SrcT", "DT_UINT8") AT("DstT", "DT_FLOAT"));
    cst(&b, "p", "i", "3", "2,0,1");
    nd(&b, "t", "Transpose", "c,p", device ? CPU AF AT("Tperm", "DT_INT32") : AF AT("Tperm", "DT_INT32"));
    nd(&b, "out", "Identity", "t", AF);
    return b;
}

static void test_reorder_cast_like(void **state)
{
    (void)state;
    gb b = cast_graph(true);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after,
                 "ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_c_float = Cast(ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_t_uint8) "
                 "{DstT=float, SrcT=uint8} @/device:CPU:0\n"
                 "ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_t_uint8 = Transpose(x, p) {T=uint8, Tperm=int32} @/device:CPU:0\n"
                 "out = Identity(ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_c_float) {T=float}\n"
                 "p = Const() {dtype=int32, value=int32[3]{2,0,1}}\n"
                 "x = Placeholder() {dtype=uint8} @/device:CPU:0\n");
    check_numeric_range(c.before, c.after, k_out, 1, 0.0, 200.0);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    b = cast_graph(false);
    c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "reorder_cast_like_and_value_preserving", "t", "not placed on a CPU or GPU device");
    case_free(&c);
}

/* ---- 19. reorder_reshape_around_unary ------------------------------------------------------------------------------------------------------------ */
static void test_reorder_reshape_around_unary(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    cst(&b, "sa", "i", "1", "6");
    nd(&b, "ra", "Reshape", "x,sa", AF AT("Tshape", "DT_INT32"));
    nd(&b, "rl", "Relu", "ra", AF);
    cst(&b, "sb", "i", "2", "3,2");
    nd(&b, "rb", "Reshape", "rl,sb", AF AT("Tshape", "DT_INT32"));
    nd(&b, "out", "Identity", "rb", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(rb) {T=float}\n"
                          "rb = Reshape(rl, sb) {T=float, Tshape=int32}\n"
                          "rl = Relu(x) {T=float}\n"
                          "sb = Const() {dtype=int32, value=int32[2]{3,2}}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "reorder_reshape_around_unary", "rb", "Reshape 'ra' moved after Relu 'rl'");
    check_numeric_range(c.before, c.after, k_out, 1, -1.0, 1.0);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 20. simplify_aggregation ------------------------------------------------------------------------------------------------------------------------ */
static void test_simplify_aggregation(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "s1", "AddN", "x", AF AINT("N", "1"));
    nd(&b, "out", "Identity", "s1", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "s2", "AddN", "y,y,y", AF AINT("N", "3"));
    nd(&b, "out2", "Identity", "s2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/SimplifyAggregation_s2_Const = Const() {dtype=float, value=float[]{3}}\n"
                          "ArithmeticOptimizer/SimplifyAggregation_s2_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_s2_Const, y) {T=float}\n"
                          "out = Identity(x) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/SimplifyAggregation_s2_Mul) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "simplify_aggregation", "s2", "3 copies of 'y'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 21. hoist_cwise_unary_chains ------------------------------------------------------------------------------------------------------------------------ */
static void test_hoist_cwise_unary_chains(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "a", "f", "2,3");
    ph(&b, "bb", "f", "2,3");
    nd(&b, "sa", "Sin", "a", AF);
    nd(&b, "ea", "Exp", "sa", AF);
    nd(&b, "sb", "Sin", "bb", AF);
    nd(&b, "eb", "Exp", "sb", AF);
    cst(&b, "ax", "i", "", "0");
    nd(&b, "cc", "ConcatV2", "ea,eb,ax", AF AINT("N", "2") AT("Tidx", "DT_INT32"));
    nd(&b, "out", "Identity", "cc", AF);
    ph(&b, "x", "f", "4,3");
    nd(&b, "sp", "Split", "ax,x", AF AINT("num_split", "2"));
    nd(&b, "e0", "Exp", "sp", AF);
    nd(&b, "e1", "Exp", "sp:1", AF);
    nd(&b, "out2", "Identity", "e0", AF);
    nd(&b, "out3", "Identity", "e1", AF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/HoistCWiseUnaryChainsStage_sp_e0 = Exp(x) {T=float}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "ax = Const() {dtype=int32, value=int32[]{0}}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = ConcatV2(a, bb, ax) {N=2, T=float, Tidx=int32}\n"
                          "ea = Exp(sa) {T=float}\n"
                          "out = Identity(ea) {T=float}\n"
                          "out2 = Identity(sp) {T=float}\n"
                          "out3 = Identity(sp:1) {T=float}\n"
                          "sa = Sin(cc) {T=float}\n"
                          "sp = Split(ax, ArithmeticOptimizer/HoistCWiseUnaryChainsStage_sp_e0) {T=float, num_split=2}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "hoist_cwise_unary_chains", "cc", "2 Exp ops common to 2 inputs moved after the concat");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 22. convert_sqrt_div_to_rsqrt_mul --------------------------------------------------------------------------------------------------------------------- */
static void test_sqrt_div_to_rsqrt_mul(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y", "f", "2,3");
    nd(&b, "sq", "Sqrt", "y", AF);
    nd(&b, "d", "RealDiv", "x,sq", AF);
    nd(&b, "out", "Identity", "d", AF);
    ph(&b, "x2", "f", "2,3");
    ph(&b, "y2", "f", "2,3");
    nd(&b, "sq2", "Sqrt", "y2", AF);
    nd(&b, "xd", "Xdivy", "x2,sq2", AF);
    nd(&b, "out2", "Identity", "xd", AF);
    ph(&b, "x3", "f", "2,3");
    nd(&b, "sq3", "Sqrt", "x3", AF);
    nd(&b, "d3", "RealDiv", "x3,sq3", AF);
    nd(&b, "m3", "Mul", "d3,sq3", AF);
    nd(&b, "out3", "Identity", "m3", AF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "d = Mul(x, sq) {T=float}\n"
                          "d3 = RealDiv(x3, sq3) {T=float}\n"
                          "m3 = Mul(d3, sq3) {T=float}\n"
                          "out = Identity(d) {T=float}\n"
                          "out2 = Identity(xd) {T=float}\n"
                          "out3 = Identity(m3) {T=float}\n"
                          "sq = Rsqrt(y) {T=float}\n"
                          "sq2 = Rsqrt(y2) {T=float}\n"
                          "sq3 = Sqrt(x3) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "x2 = Placeholder() {dtype=float}\n"
                          "x3 = Placeholder() {dtype=float}\n"
                          "xd = MulNoNan(sq2, x2) {T=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "y2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "convert_sqrt_div_to_rsqrt_mul", "d3", "Sqrt 'sq3' has other consumers");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 23. remove_idempotent ------------------------------------------------------------------------------------------------------------------------------------ */
static void test_remove_idempotent(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "s1", "Snapshot", "x", AF);
    nd(&b, "s2", "Snapshot", "s1", AF);
    nd(&b, "out", "Identity", "s2", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "g1", "StopGradient", "y", AF);
    nd(&b, "g2", "StopGradient", "g1", AF);
    nd(&b, "out2", "Identity", "g2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "g1 = StopGradient(y) {T=float}\n"
                          "out = Identity(s1) {T=float}\n"
                          "out2 = Identity(g1) {T=float}\n"
                          "s1 = Snapshot(x) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_idempotent", "s2", "Snapshot of Snapshot 's1'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 24. convert_pow ------------------------------------------------------------------------------------------------------------------------------------------ */
static void test_convert_pow(void **state)
{
    (void)state;
    static const char *const f[] = {"o2", "o3", "o1", "o05", "o0", "om05", "om1", "ob"};
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    static const char *const names[] = {"2", "1", "05", "0", "m05", "m1"};
    static const char *const vals[] = {"2", "1", "0.5", "0", "-0.5", "-1"};
    for (int i = 0; i < 6; i++) {
        char c[16], p[16], o[16], in[40];
        snprintf(c, sizeof c, "c%s", names[i]);
        snprintf(p, sizeof p, "p%s", names[i]);
        snprintf(o, sizeof o, "o%s", names[i]);
        snprintf(in, sizeof in, "x,%s", c);
        cst(&b, c, "f", "", vals[i]);
        nd(&b, p, "Pow", in, AF);
        nd(&b, o, "Identity", p, AF);
    }
    gb_add(&b, "node { name: \"x3\" op: \"Placeholder\" " CPU "attr { key: \"dtype\" value { type: DT_FLOAT } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } } } } }\n");
    cst(&b, "c3", "f", "3", "3");
    nd(&b, "p3", "Pow", "x3,c3", CPU AF);
    nd(&b, "o3", "Identity", "p3", AF);
    ph(&b, "xb", "f", "3");
    cst(&b, "cb", "f", "2,3", "2");
    nd(&b, "pb", "Pow", "xb,cb", AF);
    nd(&b, "ob", "Identity", "pb", AF);
    case_out c = run_case(&b, f, 8, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/ConvertPow_p3__inner = Square(x3) {T=float} @/device:CPU:0\n"
                          "c0 = Const() {dtype=float, value=float[]{0}}\n"
                          "c05 = Const() {dtype=float, value=float[]{0.5}}\n"
                          "c1 = Const() {dtype=float, value=float[]{1}}\n"
                          "c2 = Const() {dtype=float, value=float[]{2}}\n"
                          "c3 = Const() {dtype=float, value=float[3]{3,3,3}}\n"
                          "cb = Const() {dtype=float, value=float[2,3]{2,2,2,2,2,2}}\n"
                          "cm05 = Const() {dtype=float, value=float[]{-0.5}}\n"
                          "cm1 = Const() {dtype=float, value=float[]{-1}}\n"
                          "o0 = Identity(p0) {T=float}\n"
                          "o05 = Identity(p05) {T=float}\n"
                          "o1 = Identity(p1) {T=float}\n"
                          "o2 = Identity(p2) {T=float}\n"
                          "o3 = Identity(p3) {T=float}\n"
                          "ob = Identity(pb) {T=float}\n"
                          "om05 = Identity(pm05) {T=float}\n"
                          "om1 = Identity(pm1) {T=float}\n"
                          "p0 = Const(^x, ^c0) {dtype=float, value=float[2,3]{1,1,1,1,1,1}}\n"
                          "p05 = Sqrt(x, ^c05) {T=float}\n"
                          "p1 = Identity(x, ^c1) {T=float}\n"
                          "p2 = Square(x, ^c2) {T=float}\n"
                          "p3 = Mul(x3, ArithmeticOptimizer/ConvertPow_p3__inner, ^c3) {T=float} @/device:CPU:0\n"
                          "pb = Pow(xb, cb) {T=float}\n"
                          "pm05 = Rsqrt(x, ^cm05) {T=float}\n"
                          "pm1 = Reciprocal(x, ^cm1) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "x3 = Placeholder() {dtype=float} @/device:CPU:0\n"
                          "xb = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "convert_pow", "pb", "the exponent broadcasts the base");
    expect_event(c.json, "rewrote", "convert_pow", "p3", "Pow(x, 3) -> Mul(x, Square(x))");
    check_numeric(c.before, c.after, f, 8);
    expect_fixed_point(c.after, f, 8, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 25-26. convert_log1p, convert_log_softmax ------------------------------------------------------------------------------------------------------------ */
static void test_convert_log1p_and_log_softmax(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    cst(&b, "one", "f", "", "1");
    nd(&b, "ad", "AddV2", "one,x", AF);
    nd(&b, "lg", "Log", "ad", AF);
    nd(&b, "out", "Identity", "lg", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "sm", "Softmax", "y", AF);
    nd(&b, "l2", "Log", "sm", AF);
    nd(&b, "out2", "Identity", "l2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "l2 = LogSoftmax(y) {T=float}\n"
                          "lg = Log1p(x, ^one) {T=float}\n"
                          "one = Const() {dtype=float, value=float[]{1}}\n"
                          "out = Identity(lg) {T=float}\n"
                          "out2 = Identity(l2) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "convert_log1p", "lg", "Log of Add 'ad' of ones -> Log1p");
    expect_event(c.json, "rewrote", "convert_log_softmax", "l2", "Log of Softmax 'sm' -> LogSoftmax");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "sm"};
    gb b2 = {0};
    ph(&b2, "y", "f", "2,3");
    nd(&b2, "sm", "Softmax", "y", AF);
    nd(&b2, "lg", "Log", "sm", AF);
    nd(&b2, "out", "Identity", "lg", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "convert_log_softmax", "lg", "Softmax 'sm' is preserved");
    case_free(&c);
}

/* ---- 27. optimize_max_or_min_of_monotonic ------------------------------------------------------------------------------------------------------------------- */
static void test_max_or_min_of_monotonic(void **state)
{
    (void)state;
    static const char *const f[] = {"out", "out2", "out3", "out4"};
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    cst(&b, "ax", "i", "", "1");
    nd(&b, "sq", "Sqrt", "x", AF);
    nd(&b, "mx", "Max", "sq,ax", AF AT("Tidx", "DT_INT32") AB("keep_dims", "false"));
    nd(&b, "out", "Identity", "mx", AF);
    ph(&b, "y", "f", "2,3");
    nd(&b, "ng", "Neg", "y", AF);
    nd(&b, "mx2", "Max", "ng,ax", AF AT("Tidx", "DT_INT32") AB("keep_dims", "false"));
    nd(&b, "out2", "Identity", "mx2", AF);
    ph(&b, "z", "f", "2,3");
    nd(&b, "nz", "Neg", "z", AF);
    nd(&b, "am", "ArgMax", "nz,ax", AF AT("Tidx", "DT_INT32") AT("output_type", "DT_INT64"));
    nd(&b, "out3", "Identity", "am", AT("T", "DT_INT64"));
    ph(&b, "w", "f", "1,4,4,1");
    nd(&b, "nw", "Neg", "w", AF);
    nd(&b, "mp", "MaxPool", "nw",
       AF "attr { key: \"ksize\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
          "attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: \"padding\" value { s: \"VALID\" } } ");
    nd(&b, "out4", "Identity", "mp", AF);
    case_out c = run_case(&b, f, 4, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "am = ArgMin(z, ax) {T=float, Tidx=int32, output_type=int64}\n"
                          "ax = Const() {dtype=int32, value=int32[]{1}}\n"
                          "mp = MaxPool(nw) {T=float, ksize=[1,2,2,1], padding=\"VALID\", strides=[1,2,2,1]}\n"
                          "mx = Max(x, ax) {T=float, Tidx=int32, keep_dims=false}\n"
                          "mx2 = Min(y, ax) {T=float, Tidx=int32, keep_dims=false}\n"
                          "ng = Neg(mx2) {T=float}\n"
                          "nw = Neg(w) {T=float}\n"
                          "out = Identity(sq) {T=float}\n"
                          "out2 = Identity(ng) {T=float}\n"
                          "out3 = Identity(am) {T=int64}\n"
                          "out4 = Identity(mp) {T=float}\n"
                          "sq = Sqrt(mx) {T=float}\n"
                          "w = Placeholder() {dtype=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "optimize_max_or_min_of_monotonic", "mp", "Neg decreases and there is no MinPool");
    check_numeric(c.before, c.after, f, 4);
    expect_fixed_point(c.after, f, 4, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 28. convert_expm1 ------------------------------------------------------------------------------------------------------------------------------------------- */
static void test_convert_expm1(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "ex", "Exp", "x", AF);
    cst(&b, "one", "f", "3", "1");
    nd(&b, "sb", "Sub", "ex,one", AF);
    nd(&b, "out", "Identity", "sb", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "one = Const() {dtype=float, value=float[3]{1,1,1}}\n"
                          "out = Identity(sb) {T=float}\n"
                          "sb = Expm1(x, ^one) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "ex"};
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3");
    nd(&b2, "ex", "Exp", "x", AF);
    cst(&b2, "one", "f", "", "1");
    nd(&b2, "sb", "Sub", "ex,one", AF);
    nd(&b2, "out", "Identity", "sb", AF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "convert_expm1", "sb", "Exp 'ex' is preserved");
    case_free(&c);
}

/* ---- 29. unary_ops_composition ------------------------------------------------------------------------------------------------------------------------------------- */
static gb uoc_graph(bool device)
{
    gb b = {0};
    gb_add(&b, "node { name: \"x\" op: \"Placeholder\" %s attr { key: \"dtype\" value { type: DT_FLOAT } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } } } } }\n",
           device ? CPU : "");
    nd(&b, "s", "Sin", "x", device ? CPU AF : AF);
    nd(&b, "e", "Exp", "s", device ? CPU AF : AF);
    nd(&b, "t", "Tanh", "e", device ? CPU AF : AF);
    nd(&b, "out", "Identity", "t", AF);
    return b;
}

static void test_unary_ops_composition(void **state)
{
    (void)state;
    gb b = uoc_graph(true);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "out = Identity(t/unary_ops_composition) {T=float}\n"
                          "t/unary_ops_composition = _UnaryOpsComposition(x) {T=float, op_names=[Sin,Exp,Tanh]} @/device:CPU:0\n"
                          "x = Placeholder() {dtype=float} @/device:CPU:0\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    b = uoc_graph(false);
    c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "unary_ops_composition", "t", "needs a device named CPU");
    case_free(&c);
}

/* ---- 30. remove_stack_slice_same_axis ------------------------------------------------------------------------------------------------------------------------------- */
static void test_remove_stack_slice_same_axis(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "a", "f", "2,3");
    ph(&b, "bb", "f", "2,3");
    ph(&b, "cc", "f", "2,3");
    nd(&b, "pk", "Pack", "a,bb,cc", AF AINT("N", "3") AINT("axis", "1"));
    cst(&b, "bg", "i", "3", "0,1,0");
    cst(&b, "en", "i", "3", "0,2,0");
    cst(&b, "st", "i", "3", "1,1,1");
    nd(&b, "ss", "StridedSlice", "pk,bg,en,st",
       AF AT("Index", "DT_INT32") AINT("begin_mask", "5") AINT("end_mask", "5") AINT("ellipsis_mask", "0")
           AINT("new_axis_mask", "0") AINT("shrink_axis_mask", "2"));
    nd(&b, "out", "Identity", "ss", AF);
    cst(&b, "sb", "i", "3", "0,2,0");
    cst(&b, "sz", "i", "3", "-1,1,-1");
    nd(&b, "sl", "Slice", "pk,sb,sz", AF AT("Index", "DT_INT32"));
    nd(&b, "out2", "Identity", "sl", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl = ExpandDims(cc, ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl_Axis) {T=float, Tdim=int32}\n"
                          "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl_Axis = Const() {dtype=int32, value=int32[]{1}}\n"
                          "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_ss = Identity(bb) {T=float}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_ss) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl) {T=float}\n");
    expect_event(c.json, "rewrote", "remove_stack_slice_same_axis", "ss", "takes input 1 of Pack 'pk' -> Identity");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 31-32. simplify_embedding_lookup, remove_cast_into_segment_reduction (no CPU kernels: structure only) ------------------------ */
static void test_embedding_lookup_and_segment_cast(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "params", "f", "10,4");
    ph(&b, "ids", "l", "5");
    ph(&b, "seg", "i", "5");
    nd(&b, "u", "Unique", "ids", AT("T", "DT_INT64") AT("out_idx", "DT_INT32"));
    cst(&b, "ax0", "i", "", "0");
    nd(&b, "g", "GatherV2", "params,u,ax0", AT("Tparams", "DT_FLOAT") AT("Tindices", "DT_INT64") AT("Taxis", "DT_INT32") AINT("batch_dims", "0"));
    nd(&b, "r", "SparseSegmentSum", "g,u:1,seg", AF AT("Tidx", "DT_INT32"));
    nd(&b, "out", "Identity", "r", AF);
    ph(&b, "data", "f", "10,4");
    ph(&b, "idx", "l", "5");
    nd(&b, "c", "Cast", "idx", AT("SrcT", "DT_INT64") AT("DstT", "DT_INT32"));
    nd(&b, "r2", "SparseSegmentMean", "data,c,seg", AF AT("Tidx", "DT_INT32"));
    nd(&b, "out2", "Identity", "r2", AF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    char *d = dump(c.after);
    assert_non_null(strstr(d, "r = SparseSegmentSum(params, ids, seg) {T=float, Tidx=int64"));
    assert_non_null(strstr(d, "r2 = SparseSegmentMean(data, idx, seg) {T=float, Tidx=int64"));
    assert_null(strstr(d, "u = Unique"));
    assert_null(strstr(d, "g = GatherV2"));
    assert_null(strstr(d, "c = Cast"));
    free(d);
    expect_event(c.json, "rewrote", "simplify_embedding_lookup", "r", "Gather 'g' of Unique 'u' bypassed");
    expect_event(c.json, "rewrote", "remove_cast_into_segment_reduction", "r2", "Cast 'c' from int64 dropped");
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 33. fuse_squared_diff ---------------------------------------------------------------------------------------------------------------------------------------- */
static void test_fuse_squared_diff(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "a", "f", "2,3");
    ph(&b, "bb", "f", "2,3");
    nd(&b, "sb", "Sub", "a,bb", AF);
    nd(&b, "sq", "Square", "sb", AF);
    nd(&b, "out", "Identity", "sq", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "out = Identity(sb) {T=float}\n"
                          "sb = SquaredDifference(a, bb) {T=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    gb b2 = {0};
    ph(&b2, "a", "f", "2,3");
    ph(&b2, "bb", "f", "2,3");
    nd(&b2, "sb", "Sub", "a,bb", AF);
    nd(&b2, "sq", "Square", "sb", AF);
    nd(&b2, "out", "Identity", "sq", AF);
    nd(&b2, "out2", "Identity", "sb", AF);
    c = run_case(&b2, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fuse_squared_diff", "sq", "Sub 'sb' has other consumers");
    case_free(&c);
}

/* ---- disabling a pattern by id ---------------------------------------------------------------------------------------------------------------------------------------- */
static void test_pattern_disabled(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    nd(&b, "n1", "Neg", "x", AF);
    nd(&b, "n2", "Neg", "n1", AF);
    nd(&b, "out", "Identity", "n2", AF);
    gn_graph *g = load(&b);
    char *d0 = dump(g);
    char *json = run_arith_opts(g, k_out, 1, GN_TOGGLE_DEFAULT, "arithmetic.remove_involution");
    char *d1 = dump(g);
    assert_string_equal(d0, d1);
    expect_no_event(json, "remove_involution");
    free(d0);
    free(d1);
    free(json);
    gn_graph_free(g);
}

/* ---- v1 control flow: rewrites inside a while loop keep the frame ---------------------------------------------------------------- */
#define ENTER(T, c) AT("T", T) "attr { key: \"frame_name\" value { s: \"lp\" } } " AB("is_constant", c) AINT("parallel_iterations", "10")

static void test_inside_while_loop(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2");
    cst(&b, "n0", "i", "", "0");
    cst(&b, "lim", "i", "", "3");
    nd(&b, "ei", "Enter", "n0", ENTER("DT_INT32", "false"));
    nd(&b, "ex", "Enter", "x", ENTER("DT_FLOAT", "false"));
    nd(&b, "el", "Enter", "lim", ENTER("DT_INT32", "true"));
    nd(&b, "mi", "Merge", "ei,ni", AI AINT("N", "2"));
    nd(&b, "mx", "Merge", "ex,nx", AF AINT("N", "2"));
    nd(&b, "ls", "Less", "mi,el", AI);
    nd(&b, "lc", "LoopCond", "ls", "");
    nd(&b, "si", "Switch", "mi,lc", AI);
    nd(&b, "sx", "Switch", "mx,lc", AF);
    nd(&b, "ii", "Identity", "si:1", AI);
    nd(&b, "ix", "Identity", "sx:1", AF);
    gb_add(&b, "node { name: \"one\" op: \"Const\" input: \"^ii\" attr { key: \"dtype\" value { type: DT_INT32 } } "
               "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n");
    nd(&b, "ai", "AddV2", "ii,one", AI);
    nd(&b, "n1", "Neg", "ix", AF);
    nd(&b, "n2", "Neg", "n1", AF);
    nd(&b, "ag", "AddN", "n2,n2", AF AINT("N", "2"));
    nd(&b, "ni", "NextIteration", "ai", AI);
    nd(&b, "nx", "NextIteration", "ag", AF);
    nd(&b, "xo", "Exit", "sx", AF);
    nd(&b, "out", "Identity", "xo", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    char *d = dump(c.after);
    if (!strstr(d, "ArithmeticOptimizer/SimplifyAggregation_ag_Const = Const(^ix) {dtype=float, value=float[]{2}}\n") ||
        !strstr(d, "ArithmeticOptimizer/SimplifyAggregation_ag_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_ag_Const, ix) {T=float}\n") ||
        !strstr(d, "nx = NextIteration(ArithmeticOptimizer/SimplifyAggregation_ag_Mul) {T=float}\n") || strstr(d, "n1 =") ||
        strstr(d, "n2 ="))
        fail_msg("unexpected loop rewrite:\n%s", d);
    free(d);
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- a new Const in a cond branch is anchored through an Identity of the Switch port ------------------------------------------- */
static void test_const_anchor_on_switch(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "p", "b", "");
    nd(&b, "sw", "Switch", "x,p", AF);
    nd(&b, "t", "AddN", "sw:1,sw:1", AF AINT("N", "2"));
    nd(&b, "f", "Neg", "sw", AF);
    nd(&b, "m", "Merge", "f,t", AF AINT("N", "2"));
    nd(&b, "out", "Identity", "m", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_graph(c.after, "ArithmeticOptimizer/SimplifyAggregation_t_Const = Const(^ConstantFoldingCtrl/sw_1) {dtype=float, value=float[]{2}}\n"
                          "ArithmeticOptimizer/SimplifyAggregation_t_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_t_Const, sw:1) {T=float}\n"
                          "ConstantFoldingCtrl/sw_1 = Identity(sw:1) {T=float}\n"
                          "f = Neg(sw) {T=float}\n"
                          "m = Merge(f, ArithmeticOptimizer/SimplifyAggregation_t_Mul) {N=2, T=float}\n"
                          "out = Identity(m) {T=float}\n"
                          "p = Placeholder() {dtype=bool}\n"
                          "sw = Switch(x, p) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- nodes combined into one must share a device; feeds are never bypassed ------------------------------------------------------ */
static void test_device_and_feed(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "x", "f", "2,3");
    ph(&b, "y", "f", "2,3");
    ph(&b, "z", "f", "2,3");
    nd(&b, "a1", "AddV2", "x,y", "device: \"/device:GPU:0\" " AF);
    nd(&b, "s", "AddV2", "a1,z", "device: \"/device:CPU:0\" " AF);
    nd(&b, "out", "Identity", "s", AF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "add_ops_rewrite", "s", "input 'a1' not absorbed: it is on another device");
    case_free(&c);
    /* n1 is fed: Neg(Neg(x)) must keep reading the fed value */
    gb b2 = {0};
    ph(&b2, "x", "f", "2,3");
    nd(&b2, "n1", "Neg", "x", AF);
    nd(&b2, "n2", "Neg", "n1", AF);
    nd(&b2, "out", "Identity", "n2", AF);
    gn_graph *g = load(&b2);
    gn_options o;
    only_arith(&o, GN_TOGGLE_DEFAULT);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    static const char *const feed[] = {"n1"};
    p.fetches = k_out;
    p.n_fetches = 1;
    p.feeds = feed;
    p.n_feeds = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    char *json = NULL;
    gn_report_to_json(r, &json);
    gn_report_free(r);
    expect_event(json, "refused", "remove_involution", "n2", "'n1' is preserved");
    char *d = dump(g);
    assert_non_null(strstr(d, "n2 = Neg(n1)"));
    free(d);
    free(json);
    gn_graph_free(g);
}

/* ---- function bodies are optimized too ------------------------------------------------------------------------------------------ */
static void test_function_body(void **state)
{
    (void)state;
    gb b = {0};
    ph(&b, "a", "f", "2,3");
    nd(&b, "call", "PartitionedCall", "a",
       "attr { key: \"Tin\" value { list { type: DT_FLOAT } } } attr { key: \"Tout\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"f\" value { func { name: \"f\" } } } ");
    nd(&b, "out", "Identity", "call", AF);
    gb_add(&b, "library { function { signature { name: \"f\" input_arg { name: \"x\" type: DT_FLOAT } "
               "output_arg { name: \"y\" type: DT_FLOAT } } "
               "node_def { name: \"n1\" op: \"Neg\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "node_def { name: \"n2\" op: \"Neg\" input: \"n1:y:0\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "node_def { name: \"sq\" op: \"Mul\" input: \"n2:y:0\" input: \"n2:y:0\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "ret { key: \"y\" value: \"sq:z:0\" } } }\n");
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn__function *f = gn__graph_find_function(c.after, "f");
    assert_non_null(f);
    expect_graph(f->body, "ArithmeticOptimizer/ReplaceMulWithSquare_sq = Square(x) {T=float}\n"
                          "_retval:y = _Retval(ArithmeticOptimizer/ReplaceMulWithSquare_sq) {T=float, index=0}\n"
                          "x = _Arg() {T=float, index=0}\n");
    expect_event(c.json, "rewrote", "remove_involution", "n2", "Neg cancels 'n1'");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- the corpus ------------------------------------------------------------------------------------------------------------------------------------------------------ */
static size_t total_nodes(const gn_graph *g)
{
    size_t n = gn_graph_node_count(g);
    for (size_t f = 0; f < gn_graph_function_count(g); f++) n += gn_graph_function_node_count(g, f);
    return n;
}

static size_t count_events(const char *json, const char *kind)
{
    char k[64];
    snprintf(k, sizeof k, "\"kind\": \"%s\"", kind);
    size_t n = 0;
    for (const char *p = strstr(json, k); p; p = strstr(p + 1, k)) n++;
    return n;
}

static void test_corpus(void **state)
{
    (void)state;
    size_t ran = 0;
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        char path[2048];
        if (!gn_test_corpus(gn_pt_corpus_models[i], path, sizeof path)) continue;
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            print_message("  %-60.60s does not load: %s\n", gn_pt_corpus_models[i], gn_graph_errmsg(g));
            gn_graph_free(g);
            continue;
        }
        size_t before = total_nodes(g);
        char *json = run_arith(g, NULL, 0);
        size_t after = total_nodes(g);
        print_message("  %-60.60s nodes %5zu -> %5zu  rewrites %3zu  refusals %3zu\n", gn_pt_corpus_models[i], before, after,
                      count_events(json, "rewrote"), count_events(json, "refused"));
        free(json);
        expect_fixed_point(g, NULL, 0, GN_TOGGLE_DEFAULT);
        gn_graph_free(g);
        ran++;
    }
    if (!ran) skip();
}

/* Models the CPU runtime runs: the same outputs before and after (feeds preserved). */
typedef struct runnable {
    const char *path;
    const char *feed[2];
    const char *feed_dims[2];   /* "" scalar */
    float feed_const[2];        /* NaN: random in [-1, 1] */
    const char *fetch;
} runnable;

static void make_tensor_f(gn_tensor *t, const char *dims, float cval, uint64_t *seed)
{
    int64_t d[8];
    int32_t r = 0;
    const char *p = dims;
    while (*p) {
        d[r++] = strtol(p, (char **)&p, 10);
        while (*p == ',') p++;
    }
    if (gn_tensor_alloc(DT_FLOAT, r, d, t) != GN_OK) fail_msg("alloc");
    int64_t n = gn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = isnan(cval) ? (float)((double)(rng_next(seed) >> 11) / 4503599627370496.0 - 1.0) : cval;
}

static void test_corpus_numeric(void **state)
{
    (void)state;
    static const runnable models[] = {
        {"onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", {"X", NULL}, {"2,784", NULL}, {NAN, 0}, "output"},
        {"onnx__tensorflow-onnx/tests__models__lstm__frozen.pb", {"X", "keep_prob"}, {"2,784", ""}, {NAN, 1.0f}, "output"},
        {"onnx__tensorflow-onnx/tests__models__gru__frozen.pb", {"X", "keep_prob"}, {"2,784", ""}, {NAN, 1.0f}, "output"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", {"Mfcc", NULL}, {"1,49,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", {"Mfcc", NULL}, {"1,49,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", {"Mfcc", NULL}, {"1,25,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", {"Mfcc", NULL}, {"1,25,10", NULL}, {NAN, 0}, "labels_softmax"},
    };
    size_t ran = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const runnable *m = &models[i];
        char path[2048];
        if (!gn_test_corpus(m->path, path, sizeof path)) continue;
        gn_graph *g = NULL, *before = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("load %s: %s", m->path, gn_graph_errmsg(g));
        assert_int_equal(gn_graph_clone(g, &before), GN_OK);
        size_t nf = m->feed[1] ? 2 : 1;
        const char *fetch[1] = {m->fetch};
        gn_options o;
        only_arith(&o, GN_TOGGLE_DEFAULT);
        gn_optimize_params p;
        gn_optimize_params_init(&p);
        p.fetches = fetch;
        p.n_fetches = 1;
        p.feeds = m->feed;
        p.n_feeds = nf;
        gn_report *r = NULL;
        if (gn_optimize(g, &o, &p, &r) != GN_OK) fail_msg("optimize %s: %s", m->path, gn_graph_errmsg(g));
        char *json = NULL;
        gn_report_to_json(r, &json);
        gn_report_free(r);
        feeds f;
        memset(&f, 0, sizeof f);
        uint64_t seed = 12345;
        for (size_t k = 0; k < nf; k++) {
            make_tensor_f(&f.t[k], m->feed_dims[k], m->feed_const[k], &seed);
            f.names[k] = m->feed[k];
        }
        f.n = nf;
        gn_tensor a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        run_graph(before, &f, fetch, 1, &a);
        run_graph(g, &f, fetch, 1, &b);
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b, &a, 0, &cr), GN_OK);
        print_message("  %-60.60s nodes %5zu -> %5zu  rewrites %3zu  rel L2 %.2e\n", m->path, gn_graph_node_count(before),
                      gn_graph_node_count(g), count_events(json, "rewrote"), cr.rel_l2_err);
        if (!cr.match) fail_msg("%s: %s (rel L2 %g)", m->path, cr.why, cr.rel_l2_err);
        gn_tensor_free(&a);
        gn_tensor_free(&b);
        free_feeds(&f);
        free(json);
        gn_graph_free(before);
        gn_graph_free(g);
        ran++;
    }
    if (!ran) skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_add_ops_rewrite),
        cmocka_unit_test(test_add_ops_rewrite_broadcast),
        cmocka_unit_test(test_add_ops_rewrite_refused),
        cmocka_unit_test(test_fold_conjugate_into_transpose),
        cmocka_unit_test(test_fold_multiply_into_conv),
        cmocka_unit_test(test_fold_transpose_into_matmul),
        cmocka_unit_test(test_hoist_common_factor),
        cmocka_unit_test(test_minimize_broadcasts),
        cmocka_unit_test(test_remove_redundant_transpose),
        cmocka_unit_test(test_remove_involution),
        cmocka_unit_test(test_remove_redundant_bitcast),
        cmocka_unit_test(test_remove_redundant_cast),
        cmocka_unit_test(test_replace_pack_with_tile_reshape),
        cmocka_unit_test(test_replace_mul_with_tile),
        cmocka_unit_test(test_reduce_upsampling_dims),
        cmocka_unit_test(test_remove_redundant_reshape),
        cmocka_unit_test(test_remove_negation),
        cmocka_unit_test(test_replace_mul_with_square),
        cmocka_unit_test(test_remove_logical_not),
        cmocka_unit_test(test_reorder_cast_like),
        cmocka_unit_test(test_reorder_reshape_around_unary),
        cmocka_unit_test(test_simplify_aggregation),
        cmocka_unit_test(test_hoist_cwise_unary_chains),
        cmocka_unit_test(test_sqrt_div_to_rsqrt_mul),
        cmocka_unit_test(test_remove_idempotent),
        cmocka_unit_test(test_convert_pow),
        cmocka_unit_test(test_convert_log1p_and_log_softmax),
        cmocka_unit_test(test_max_or_min_of_monotonic),
        cmocka_unit_test(test_convert_expm1),
        cmocka_unit_test(test_unary_ops_composition),
        cmocka_unit_test(test_remove_stack_slice_same_axis),
        cmocka_unit_test(test_embedding_lookup_and_segment_cast),
        cmocka_unit_test(test_fuse_squared_diff),
        cmocka_unit_test(test_pattern_disabled),
        cmocka_unit_test(test_inside_while_loop),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_const_anchor_on_switch),
        cmocka_unit_test(test_device_and_feed),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
