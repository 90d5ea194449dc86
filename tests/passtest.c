/* Helpers shared by the optimizer pass tests: see passtest.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "opdef/registry.h"
#include "passtest.h"

/* ---- graphs and reports --------------------------------------------------------------------- */
/* ---- one kernel on one node ------------------------------------------------------------- */
gn_graph *gn_pt_kload(const char *text, int validate)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = validate;
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "t.pbtxt", &o, &g);
    if (s != GN_OK) fail_msg("load failed (%d): %s\n%s", s, gn_graph_errmsg(g), text);
    return g;
}

gn_graph *gn_pt_kgraph(const char *op, int n_in, const char *const *dts, const char *attrs, int validate)
{
    gn_pt_text t = {0};
    for (int i = 0; i < n_in; i++)
        gn_pt_text_add(&t, "node { name: 'in%d' op: 'Placeholder' attr { key: 'dtype' value { type: %s } } }\n", i,
                       dts ? dts[i] : "DT_FLOAT");
    gn_pt_text_add(&t, "node { name: 'n' op: '%s'", op);
    for (int i = 0; i < n_in; i++) gn_pt_text_add(&t, " input: 'in%d'", i);
    gn_pt_text_add(&t, " %s }\n", attrs ? attrs : "");
    gn_graph *g = gn_pt_kload(t.s, validate);
    gn_pt_text_free(&t);
    return g;
}

size_t gn_pt_kesize(int32_t dt)
{
    return dt == TENSORFLOW__DATA_TYPE__DT_STRING ? sizeof(gn__tstring) : gn_dtype_size(dt);
}

gn__tensor gn_pt_ktensor(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        t.dims[i] = dims[i];
        n *= dims[i];
    }
    t.data = (void *)data;
    t.nbytes = (size_t)n * gn_pt_kesize(dt);
    return t;
}

gn_status gn_pt_krun(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out,
                     uint32_t flags, gn__err *err)
{
    gn__kctx c;
    memset(&c, 0, sizeof c);
    memset(out, 0, (n_out ? n_out : 1) * sizeof *out);
    memset(err, 0, sizeof *err);
    c.g = g;
    c.node = gn__graph_find(g, "n");
    assert_int_not_equal(c.node, GN_NONE);
    c.in = in;
    c.n_in = n_in;
    c.out = out;
    c.n_out = n_out;
    c.flags = flags;
    c.err = err;
    gn__kernel_fn fn = gn__kernel_for(gn__node_op(g, c.node));
    if (!fn) fail_msg("no kernel for %s", gn__node_op(g, c.node));
    return fn(&c);
}

void gn_pt_krun_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out, uint32_t flags)
{
    gn__err err;
    gn_status s = gn_pt_krun(g, in, n_in, out, n_out, flags, &err);
    if (s != GN_OK) fail_msg("kernel failed (%d): %s", s, err.msg);
}

void gn_pt_krelease(gn__tensor *t, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) gn__tensor_release(&t[i]);
}

void gn_pt_kexpect_error(gn_graph *g, const gn__tensor *in, uint32_t n_in, uint32_t n_out, gn_status code,
                         const char *msg)
{
    gn__tensor out[8];
    gn__err err;
    assert_true(n_out <= 8);
    gn_status s = gn_pt_krun(g, in, n_in, out, n_out, GN__K_REFERENCE, &err);
    gn_pt_krelease(out, n_out);
    if (s != code || strcmp(err.msg, msg)) fail_msg("got (%d) '%s'\nwant (%d) '%s'", s, err.msg, code, msg);
}

void gn_pt_text_add(gn_pt_text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (t->s && (size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap - t->n <= (size_t)k) cap *= 2;
        char *s = realloc(t->s, cap);
        assert_non_null(s);
        t->s = s;
        t->cap = cap;
    }
}

uint64_t gn_pt_xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double uniform_pm1(void *rng) { return 2.0 * (double)(gn_pt_xorshift(rng) >> 11) * (1.0 / 9007199254740992.0) - 1.0; }

void gn_pt_text_const(gn_pt_text *t, const char *name, int rank, const int64_t *dims, uint64_t *rng)
{
    gn_pt_text_const_gen(t, name, "DT_FLOAT", rank, dims, "%.4g", uniform_pm1, rng);
}

void gn_pt_text_free(gn_pt_text *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

gn_graph *gn_pt_text_load(gn_pt_text *t)
{
    gn_graph *g = gn_pt_load_text(t->s ? t->s : "");
    gn_pt_text_free(t);
    return g;
}

const char *gn_pt_dt(const char *t)
{
    static const char *const names[][2] = {{"f", "DT_FLOAT"}, {"d", "DT_DOUBLE"}, {"h", "DT_HALF"},
                                           {"i", "DT_INT32"}, {"l", "DT_INT64"},  {"b", "DT_BOOL"},
                                           {"u8", "DT_UINT8"}, {"c", "DT_COMPLEX64"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(t, names[k][0]) == 0) return names[k][1];
    return t;
}

int gn_pt_dims(const char *text, int64_t *dims)
{
    if (strcmp(text, "?") == 0) return -1;
    int r = 0;
    const char *p = text;
    while (*p) {
        if (r == 8) fail_msg("dims '%s': more than 8", text);
        char *end;
        dims[r++] = strtoll(p, &end, 10);
        if (end == p) fail_msg("dims '%s': not a number list", text);
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    return r;
}

void gn_pt_text_shape(gn_pt_text *t, int rank, const int64_t *dims)
{
    if (rank < 0) {
        gn_pt_text_add(t, "shape { unknown_rank: true }");
        return;
    }
    gn_pt_text_add(t, "shape {");
    for (int i = 0; i < rank; i++) gn_pt_text_add(t, " dim { size: %lld }", (long long)dims[i]);
    gn_pt_text_add(t, " }");
}

static void text_ph(gn_pt_text *t, const char *name, const char *dt, bool shaped, int rank, const int64_t *dims)
{
    gn_pt_text_add(t, "node { name: '%s' op: 'Placeholder' attr { key: 'dtype' value { type: %s } }", name, gn_pt_dt(dt));
    if (shaped) {
        gn_pt_text_add(t, " attr { key: 'shape' value { ");
        gn_pt_text_shape(t, rank, dims);
        gn_pt_text_add(t, " } }");
    }
    gn_pt_text_add(t, " }\n");
}

void gn_pt_text_ph_dims(gn_pt_text *t, const char *name, const char *dt, int rank, const int64_t *dims)
{
    text_ph(t, name, dt, true, rank, dims);
}

void gn_pt_text_ph(gn_pt_text *t, const char *name, const char *dt, const char *dims)
{
    int64_t d[8];
    text_ph(t, name, dt, dims != NULL, dims ? gn_pt_dims(dims, d) : 0, d);
}

void gn_pt_text_op(gn_pt_text *t, const char *name, const char *op, const char *inputs, const char *dt,
                   const char *attrs)
{
    gn_pt_text_add(t, "node { name: '%s' op: '%s'", name, op);
    const char *p = inputs;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        gn_pt_text_add(t, " input: '%.*s'", (int)l, p);
        p += l + (e != NULL);
    }
    if (dt) gn_pt_text_add(t, " attr { key: 'T' value { type: %s } }", gn_pt_dt(dt));
    gn_pt_text_add(t, " %s }\n", attrs ? attrs : "");
}

void gn_pt_text_node(gn_pt_text *t, const char *name, const char *op, const char *inputs, const char *attrs)
{
    gn_pt_text_op(t, name, op, inputs, NULL, attrs);
}

/* The head of a Const node up to its values, and the TensorProto field they go in. */
static const char *const_head(gn_pt_text *t, const char *name, const char *dt, int rank, const int64_t *dims)
{
    dt = gn_pt_dt(dt);
    gn_pt_text_add(t, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: %s } } attr { key: 'value' "
                      "value { tensor { dtype: %s tensor_",
                   name, dt, dt);
    gn_pt_text_shape(t, rank, dims); /* "tensor_" + "shape {...}" */
    return !strcmp(dt, "DT_FLOAT") ? "float_val" : !strcmp(dt, "DT_DOUBLE") ? "double_val"
           : !strcmp(dt, "DT_INT64") ? "int64_val" : "int_val";
}

void gn_pt_text_cst(gn_pt_text *t, const char *name, const char *dt, const char *dims, const char *vals)
{
    int64_t d[8] = {vals && *vals ? 1 : 0};
    if (!dims)
        for (const char *p = vals; p && *p; p++) d[0] += *p == ',';
    const char *field = const_head(t, name, dt, dims ? gn_pt_dims(dims, d) : 1, d);
    const char *p = vals;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        gn_pt_text_add(t, " %s: %.*s", field, (int)l, p);
        p += l + (e != NULL);
    }
    gn_pt_text_add(t, " } } } }\n");
}

void gn_pt_text_const_gen(gn_pt_text *t, const char *name, const char *dt, int rank, const int64_t *dims,
                          const char *fmt, gn_pt_gen gen, void *ctx)
{
    const char *field = const_head(t, name, dt, rank, dims);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    for (int64_t i = 0; i < n; i++) {
        gn_pt_text_add(t, " %s: ", field);
        gn_pt_text_add(t, fmt, gen(ctx));
    }
    gn_pt_text_add(t, " } } } }\n");
}

gn_graph *gn_pt_load_text(const char *text) { return gn_test_load_text(text, 1); }

gn_graph *gn_pt_clone(const gn_graph *g)
{
    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    return c;
}

gn_report *gn_pt_new_report(void)
{
    gn_graph *g = gn_pt_load_text("node { name: 'a' op: 'NoOp' }");
    gn_options o;
    gn_options_init(&o);
    o.disable_meta_optimizer = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, NULL, &r), GN_OK);
    assert_non_null(r);
    gn_graph_free(g);
    return r;
}

char *gn_pt_report_text(const gn_report *r)
{
    char *t = NULL;
    assert_int_equal(gn_report_to_text(r, &t), GN_OK);
    return t;
}

void gn_pt_expect_report(const gn_report *r, const char *line)
{
    char *t = gn_pt_report_text(r);
    if (!strstr(t, line)) fail_msg("report lacks\n  %s\nreport:\n%s", line, t);
    gn_free(t);
}

void gn_pt_expect_no_report(const gn_report *r, const char *what)
{
    char *t = gn_pt_report_text(r);
    if (strstr(t, what)) fail_msg("report has '%s':\n%s", what, t);
    gn_free(t);
}

void gn_pt_preserve(gn_graph *g, const char *name)
{
    gn_id id = gn__graph_find(g, name);
    if (id == GN_NONE) fail_msg("no node '%s'", name);
    g->nodes[id].flags |= GN__NODE_PRESERVE;
}

void gn_pt_preserve_tensor(gn_graph *g, const char *tensor)
{
    char node[512];
    snprintf(node, sizeof node, "%s", tensor);
    node[strcspn(node, ":")] = 0;
    gn_pt_preserve(g, node);
}

bool gn_pt_run_pass_on(gn__pass_fn fn, const char *pass_id, gn_graph *g, const gn_graph *lib, const char *fn_name,
                       gn_report *r, const char *disabled, int toggle)
{
    gn_options o;
    gn_options_init(&o);
    o.disabled_patterns = disabled;
    gn__err err;
    gn__err_clear(&err);
    gn__pass_ctx c;
    memset(&c, 0, sizeof c);
    gn_target cpu = {GN_TARGET_CPU, 0, 0};
    c.opts = &o;
    c.target = &cpu;
    c.report = r;
    c.pass_id = pass_id;
    c.toggle = toggle;
    c.fn_name = fn_name;
    c.lib = lib;
    c.err = &err;
    gn_status s = fn(&c, g);
    if (s != GN_OK) fail_msg("pass failed: %s (%s)", err.msg, g->err.msg);
    assert_int_equal(gn__graph_compact(g), GN_OK);
    return c.changed;
}

/* ---- the exact graph after -------------------------------------------------------------------- */
void gn_pt_describe(const gn_graph *g, char *buf, size_t n)
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

bool gn_pt_attr_same(const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b)
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

void gn_pt_expect_graph(gn_graph *g, const char *want)
{
    gn_graph *w = gn_pt_load_text(want);
    gn_pt_expect_same_graph(g, w);
    gn_graph_free(w);
}

/* Tensor attrs hold the same values (dtype, shape, elements), however they
 * are encoded (TensorFlow's graph export drops an all-zero tensor_content). */
static bool tensor_attr_same(const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b)
{
    if (a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || b->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
        !a->tensor || !b->tensor)
        return false;
    gn__tensor x, y;
    gn__err e;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    bool eq = gn__tensor_from_proto(a->tensor, &x, &e) == GN_OK && gn__tensor_from_proto(b->tensor, &y, &e) == GN_OK &&
              x.dtype == y.dtype && x.rank == y.rank && !memcmp(x.dims, y.dims, sizeof x.dims) &&
              x.nbytes == y.nbytes && x.dtype != TENSORFLOW__DATA_TYPE__DT_STRING &&
              (!x.nbytes || !memcmp(x.data, y.data, x.nbytes));
    gn__tensor_release(&x);
    gn__tensor_release(&y);
    return eq;
}

/* an attr's packed bytes in hex (a failure's message) */
static void attr_hex(const Tensorflow__AttrValue *v, char *buf, size_t n)
{
    size_t len = protobuf_c_message_get_packed_size(&v->base);
    uint8_t *x = malloc(len + 1);
    assert_non_null(x);
    protobuf_c_message_pack(&v->base, x);
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < len && k + 4 < n; i++) k += (size_t)snprintf(buf + k, n - k, "%02x", x[i]);
    free(x);
}

/* g against w; strict: control inputs in order and attrs by their packed bytes
 * alone, else control inputs as a set and tensor attrs by their values too. */
static void same_graph(gn_graph *g, const gn_graph *w, bool strict)
{
    static char d[32768];
    gn_pt_describe(g, d, sizeof d);
    if (g->n_live != w->n_live) fail_msg("%u nodes, want %u; got:\n%s", g->n_live, w->n_live, d);
    for (gn_id i = 0; i < w->n_nodes; i++) {
        if (!gn__node_live(w, i)) continue;
        const char *name = gn__node_name(w, i);
        gn_id j = gn__graph_find(g, name);
        if (j == GN_NONE) fail_msg("no node '%s'; got:\n%s", name, d);
        const gn__node *a = gn__node_at(g, j), *b = gn__node_at(w, i);
        if (strcmp(gn__node_op(g, j), gn__node_op(w, i)) != 0)
            fail_msg("'%s' is %s, want %s; got:\n%s", name, gn__node_op(g, j), gn__node_op(w, i), d);
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
            if (strict) {
                if (strcmp(gn__node_name(g, a->ctrl[k]), gn__node_name(w, b->ctrl[k])) != 0)
                    fail_msg("'%s' control input %u is ^%s, want ^%s; got:\n%s", name, k, gn__node_name(g, a->ctrl[k]),
                             gn__node_name(w, b->ctrl[k]), d);
                continue;
            }
            bool found = false;
            for (uint32_t m = 0; m < a->n_ctrl; m++)
                found |= strcmp(gn__node_name(g, a->ctrl[m]), gn__node_name(w, b->ctrl[k])) == 0;
            if (!found) fail_msg("'%s' lacks control input ^%s; got:\n%s", name, gn__node_name(w, b->ctrl[k]), d);
        }
        if (a->n_attr != b->n_attr) fail_msg("'%s': %u attrs, want %u", name, a->n_attr, b->n_attr);
        for (uint32_t k = 0; k < b->n_attr; k++) {
            const char *key = gn__str(w, b->attr[k].key);
            const Tensorflow__AttrValue *v = gn__node_attr(g, j, key);
            if (!v) fail_msg("'%s' lacks attr '%s'", name, key);
            if (gn_pt_attr_same(v, b->attr[k].value) || (!strict && tensor_attr_same(v, b->attr[k].value))) continue;
            char x[512], y[512];
            attr_hex(v, x, sizeof x);
            attr_hex(b->attr[k].value, y, sizeof y);
            fail_msg("'%s': attr '%s' differs:\n  got  %s\n  want %s", name, key, x, y);
        }
    }
    if (gn__graph_validate(g) != GN_OK) fail_msg("invalid: %s", g->err.msg);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
}

void gn_pt_expect_same_graph(gn_graph *g, const gn_graph *w) { same_graph(g, w, false); }

void gn_pt_expect_graph_strict(gn_graph *g, const char *want)
{
    gn_graph *w = gn_pt_load_text(want);
    same_graph(g, w, true);
    gn_graph_free(w);
}

/* ---- running on the CPU backend ----------------------------------------------------------------- */
gn_tensor gn_pt_view(int32_t dtype, void *data, size_t nbytes, int32_t rank, const int64_t *dims)
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

void gn_pt_run_graph(const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf, const char *const *xn,
                     gn_tensor *out, size_t nx)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, fn, ft, nf, xn, out, nx) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

void gn_pt_expect_close(const gn_graph *before, const gn_graph *after, const char *const *fn, const gn_tensor *ft,
                        size_t nf, const char *const *xn, size_t nx, double tol, double *rel)
{
    gn_tensor a[16], b[16];
    assert_true(nx <= 16);
    gn_pt_run_graph(before, fn, ft, nf, xn, a, nx);
    gn_pt_run_graph(after, fn, ft, nf, xn, b, nx);
    for (size_t i = 0; i < nx; i++) {
        if (b[i].dtype != a[i].dtype)
            fail_msg("fetch '%s' is %s, was %s", xn[i], gn_dtype_name(b[i].dtype), gn_dtype_name(a[i].dtype));
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b[i], &a[i], tol, &cr), GN_OK);
        if (!cr.match) fail_msg("fetch '%s' differs: %s (rel L2 %g)", xn[i], cr.why, cr.rel_l2_err);
        if (rel) rel[i] = cr.rel_l2_err;
        gn_tensor_free(&a[i]);
        gn_tensor_free(&b[i]);
    }
}

void gn_pt_expect_same_results(const gn_graph *before, const gn_graph *after, const char *const *fn,
                               const gn_tensor *ft, size_t nf, const char *const *xn, size_t nx, size_t max_nx)
{
    assert_true(max_nx <= 16);
    assert_true(nx <= max_nx);
    gn_pt_expect_close(before, after, fn, ft, nf, xn, nx, 0, NULL);
}

void gn_pt_feeds_random(const gn_graph *g, gn_pt_feeds *f, double lo, double hi, uint64_t seed)
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
            double u = (double)(gn_pt_xorshift(&s) >> 11) / 9007199254740992.0;
            double v = lo + (hi - lo) * u;
            switch (dt) {
            case TENSORFLOW__DATA_TYPE__DT_FLOAT: ((float *)t->data)[k] = (float)v; break;
            case TENSORFLOW__DATA_TYPE__DT_INT32: ((int32_t *)t->data)[k] = (int32_t)floor(v); break;
            case TENSORFLOW__DATA_TYPE__DT_UINT8: ((uint8_t *)t->data)[k] = (uint8_t)floor(fabs(v)); break;
            case TENSORFLOW__DATA_TYPE__DT_BOOL: ((uint8_t *)t->data)[k] = v > (lo + hi) / 2; break;
            default: fail_msg("feed dtype %d", dt);
            }
        }
        f->names[f->n++] = gn__node_name(g, i);
    }
}

void gn_pt_feeds_free(gn_pt_feeds *f)
{
    for (size_t i = 0; i < f->n; i++) gn_tensor_free(&f->t[i]);
}

void gn_pt_expect_same_random(const gn_graph *before, const gn_graph *after, const char *const *xn, size_t nx,
                              double lo, double hi)
{
    gn_pt_feeds f;
    gn_pt_feeds_random(before, &f, lo, hi, 0);
    gn_pt_expect_close(before, after, f.names, f.t, f.n, xn, nx, 0, NULL);
    gn_pt_feeds_free(&f);
}

/* ---- gn_optimize with one pass ---------------------------------------------------------------- */
void gn_pt_options_alone(gn_options *o)
{
    gn_options_init(o);
    int32_t *off[] = {&o->layout_optimizer,         &o->constant_folding,
                      &o->shape_optimization,       &o->remapping,
                      &o->arithmetic_optimization,  &o->dependency_optimization,
                      &o->loop_optimization,        &o->function_optimization,
                      &o->debug_stripper,           &o->scoped_allocator_optimization,
                      &o->pin_to_host_optimization, &o->implementation_selector,
                      &o->auto_mixed_precision,     &o->common_subgraph_elimination};
    for (size_t k = 0; k < sizeof off / sizeof off[0]; k++) *off[k] = GN_TOGGLE_OFF;
    o->disable_model_pruning = 1;
}

void gn_pt_target_gpu(gn_target *t, int cc)
{
    t->kind = GN_TARGET_GPU;
    t->compute_capability = cc;
    t->num_gpus = 1;
}

char *gn_pt_optimize_json(gn_graph *g, const gn_options *o, const char *const *fetches, size_t nx,
                          const char *const *feeds, size_t nf)
{
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fetches;
    p.n_fetches = nx;
    p.feeds = feeds;
    p.n_feeds = nf;
    gn_report *r = NULL;
    gn_status s = gn_optimize(g, o, &p, &r);
    char *json = NULL;
    if (r) gn_report_to_json(r, &json);
    gn_report_free(r);
    if (s != GN_OK) fail_msg("optimize: %s\n%s", gn_graph_errmsg(g), json ? json : "");
    if (gn__graph_validate(g) != GN_OK) fail_msg("invalid after the pass: %s", gn_graph_errmsg(g));
    if (gn__graph_check_fanouts(g) != GN_OK) fail_msg("fanouts: %s", gn_graph_errmsg(g));
    return json;
}

void gn_pt_expect_json_event(const char *json, const char *kind, const char *pattern, const char *node,
                             const char *detail)
{
    char head[1024];
    snprintf(head, sizeof head, "\"kind\": \"%s\", \"pattern\": \"%s\", \"node\": \"%s\", \"detail\": \"", kind, pattern,
             node);
    for (const char *p = strstr(json, head); p; p = strstr(p + 1, head)) {
        const char *d = p + strlen(head);
        const char *e = strchr(d, '}');
        if (!e) break;
        const char *hit = strstr(d, detail);
        if (hit && hit < e) return;
    }
    fail_msg("no %s event for %s on '%s' with '%s' in\n%s", kind, pattern, node, detail, json);
}

void gn_pt_expect_no_json_event(const char *json, const char *pattern)
{
    char head[256];
    snprintf(head, sizeof head, "\"pattern\": \"%s\"", pattern);
    if (strstr(json, head)) fail_msg("unexpected %s event in\n%s", pattern, json);
}

size_t gn_pt_count_json_events(const char *json, const char *kind)
{
    char k[64];
    snprintf(k, sizeof k, "\"kind\": \"%s\"", kind);
    size_t n = 0;
    for (const char *p = strstr(json, k); p; p = strstr(p + 1, k)) n++;
    return n;
}

/* ---- corpus and golden models ------------------------------------------------------------------ */
void gn_pt_mark_default_preserved(gn_graph *g)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        const gn__opdef *op = gn__node_opdef(g, i);
        if ((n->n_use == 0 && n->n_cuse == 0) || !op || (op->flags & GN__OPF_STATEFUL) || (n->flags & GN__NODE_FN_RET))
            n->flags |= GN__NODE_PRESERVE;
    }
}

void gn_pt_prepare_bodies(gn_graph *g)
{
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn__function *fn = &g->fns[f];
        if (!fn->body) continue;
        gn_pt_mark_default_preserved(fn->body);
        for (uint32_t k = 0; k < fn->n_control_ret; k++)
            if (fn->control_ret_node[k] != GN_NONE) fn->body->nodes[fn->control_ret_node[k]].flags |= GN__NODE_PRESERVE;
    }
}

void gn_pt_prepare(gn_graph *g)
{
    gn_pt_mark_default_preserved(g);
    gn_pt_prepare_bodies(g);
}

uint32_t gn_pt_live_total(const gn_graph *g)
{
    uint32_t n = g->n_live;
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) n += g->fns[f].body->n_live;
    return n;
}

void gn_pt_check_valid(gn_graph *g, const char *what)
{
    if (gn__graph_validate(g) != GN_OK) fail_msg("%s: invalid after the pass: %s", what, g->err.msg);
    if (gn__graph_check_fanouts(g) != GN_OK) fail_msg("%s: fanouts: %s", what, g->err.msg);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body && gn__graph_check_fanouts(g->fns[f].body) != GN_OK)
            fail_msg("%s: fanouts of a body: %s", what, g->fns[f].body->err.msg);
}

char *gn_pt_corpus_list(const char *dir)
{
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out,
                                "cd '%s' && { find . -name saved_model.pb -o -name saved_model.pbtxt | xargs -r -n1 dirname; "
                                "find . \\( -name '*.pb' -o -name '*.pbtxt' -o -name '*.pbtxt.gz' \\) ! -name saved_model.pb "
                                "! -name saved_model.pbtxt ! -name fingerprint.pb ! -name keras_metadata.pb "
                                "! -name tfhub_module.pb ! -path '*/variables/*' ! -path '*/assets/*'; } | sort",
                                dir),
                     0);
    return out;
}

size_t gn_pt_read_manifest(gn_pt_golden *m, size_t max)
{
    gn_test_manifest *man = malloc(sizeof *man);
    char err[1024];
    assert_non_null(man);
    if (gn_test_read_manifest(man, err, sizeof err)) {
        free(man);
        fail_msg("%s", err);
    }
    size_t n = 0;
    for (size_t i = 0; i < man->n && n < max; i++, n++) {
        const gn_test_golden *g = &man->models[i];
        gn_pt_golden *cur = &m[n];
        memset(cur, 0, sizeof *cur);
        snprintf(cur->name, sizeof cur->name, "%s", g->name);
        snprintf(cur->graph, sizeof cur->graph, "%s", g->graph);
        for (size_t k = 0; k < g->n_feeds && cur->nf < 4; k++, cur->nf++) {
            snprintf(cur->feed[cur->nf], sizeof cur->feed[0], "%s", g->feeds[k].tensor);
            snprintf(cur->feed_file[cur->nf], sizeof cur->feed_file[0], "%s", g->feeds[k].file);
        }
        for (size_t k = 0; k < g->n_fetches && cur->nx < 4; k++, cur->nx++)
            snprintf(cur->fetch[cur->nx], sizeof cur->fetch[0], "%s", g->fetches[k].tensor);
    }
    free(man);
    return n;
}

/* ---- a pass context with its own report ---------------------------------------------------------- */
void gn_pt_fx_init(gn_pt_fx *f, const char *disabled)
{
    memset(f, 0, sizeof *f);
    gn_options_init(&f->o);
    f->o.disabled_patterns = disabled;
    /* an empty report to collect the pass's events */
    gn_graph *g = gn_pt_load_text("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
    gn_options o2;
    gn_options_init(&o2);
    o2.disable_meta_optimizer = 1;
    assert_int_equal(gn_optimize(g, &o2, NULL, &f->r), GN_OK);
    gn_graph_free(g);
    f->c.opts = &f->o;
    f->target.kind = GN_TARGET_CPU;
    f->c.target = &f->target;
    f->c.report = f->r;
    f->c.pass_id = "pruning";
    f->c.err = &f->err;
}

void gn_pt_fx_free(gn_pt_fx *f) { gn_report_free(f->r); }

bool gn_pt_fx_run_on(gn_pt_fx *f, gn__pass_fn fn, gn_graph *g, const char *fn_name)
{
    f->c.changed = false;
    f->c.fn_name = fn_name;
    f->c.lib = g->lib;
    gn__err_clear(&f->err);
    int64_t t0 = gn__now_us();
    gn_status s = fn(&f->c, g);
    f->us = gn__now_us() - t0;
    if (s != GN_OK) fail_msg("pass failed: %s", f->err.msg);
    if (gn__graph_check_fanouts(g) != GN_OK) fail_msg("fanouts: %s", g->err.msg);
    if (gn__graph_compact(g) != GN_OK) fail_msg("compact: %s", g->err.msg);
    const gn_graph *top = g->lib ? g->lib : g;
    if (gn__graph_validate((gn_graph *)top) != GN_OK) fail_msg("validate: %s", top->err.msg);
    return f->c.changed;
}

char *gn_pt_fx_report_text(gn_pt_fx *f)
{
    char *t = NULL;
    assert_int_equal(gn_report_to_text(f->r, &t), GN_OK);
    return t;
}

void gn_pt_fx_expect_event(gn_pt_fx *f, const char *text)
{
    char *t = gn_pt_fx_report_text(f);
    if (!strstr(t, text)) fail_msg("report lacks:\n  %s\nreport:\n%s", text, t);
    free(t);
}

void gn_pt_fx_expect_no_event(gn_pt_fx *f, const char *text)
{
    char *t = gn_pt_fx_report_text(f);
    if (strstr(t, text)) fail_msg("report has:\n  %s\nreport:\n%s", text, t);
    free(t);
}

/* "name<eq>Op(in, in:1, ^ctl)": the head of a node's line in the dumps */
static void dump_head(gn_pt_text *t, const gn_graph *g, gn_id i, const char *eq)
{
    const gn__node *nd = &g->nodes[i];
    gn_pt_text_add(t, "%s%s%s(", gn__node_name(g, i), eq, gn__node_op(g, i));
    for (uint32_t k = 0; k < nd->n_in; k++) {
        if (nd->in[k].index) gn_pt_text_add(t, "%s%s:%u", k ? ", " : "", gn__node_name(g, nd->in[k].node), nd->in[k].index);
        else gn_pt_text_add(t, "%s%s", k ? ", " : "", gn__node_name(g, nd->in[k].node));
    }
    for (uint32_t k = 0; k < nd->n_ctrl; k++)
        gn_pt_text_add(t, "%s^%s", (k || nd->n_in) ? ", " : "", gn__node_name(g, nd->ctrl[k]));
    gn_pt_text_add(t, ")");
}

char *gn_pt_dump(const gn_graph *g)
{
    gn_pt_text t = {0};
    gn_pt_text_add(&t, "%s", "");
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *nd = &g->nodes[i];
        if (nd->flags & GN__NODE_DEAD) continue;
        if (t.n) gn_pt_text_add(&t, "; ");
        dump_head(&t, g, i, "=");
        if (nd->device) gn_pt_text_add(&t, "@%s", gn__str(g, nd->device));
    }
    return t.s;
}

/* an attr value as gn_pt_dump_sorted writes it */
static void attr_text(gn_pt_text *t, const Tensorflow__AttrValue *v)
{
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: gn_pt_text_add(t, "%s", gn_dtype_name((int32_t)v->type)); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_I: gn_pt_text_add(t, "%lld", (long long)v->i); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: gn_pt_text_add(t, "%s", v->b ? "true" : "false"); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: gn_pt_text_add(t, "%g", (double)v->f); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_S: gn_pt_text_add(t, "\"%.*s\"", (int)v->s.len, (const char *)v->s.data); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
        gn_pt_text_add(t, "[");
        for (size_t i = 0; v->list && i < v->list->n_s; i++)
            gn_pt_text_add(t, "%s%.*s", i ? "," : "", (int)v->list->s[i].len, (const char *)v->list->s[i].data);
        for (size_t i = 0; v->list && i < v->list->n_i; i++) gn_pt_text_add(t, "%s%lld", i ? "," : "", (long long)v->list->i[i]);
        gn_pt_text_add(t, "]");
        break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: {
        gn__tensor x;
        gn__err e;
        gn__err_clear(&e);
        if (gn__tensor_from_proto(v->tensor, &x, &e) != GN_OK) {
            gn_pt_text_add(t, "<bad tensor>");
            break;
        }
        gn_pt_text_add(t, "%s[", gn_dtype_name(x.dtype));
        for (int32_t i = 0; i < x.rank; i++) gn_pt_text_add(t, "%s%lld", i ? "," : "", (long long)x.dims[i]);
        gn_pt_text_add(t, "]{");
        int64_t cnt = gn__tensor_numel(&x);
        for (int64_t i = 0; i < cnt && i < 8; i++) {
            if (x.dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT) gn_pt_text_add(t, "%s%g", i ? "," : "", (double)((float *)x.data)[i]);
            else if (x.dtype == TENSORFLOW__DATA_TYPE__DT_INT32) gn_pt_text_add(t, "%s%d", i ? "," : "", ((int32_t *)x.data)[i]);
            else gn_pt_text_add(t, "%s?", i ? "," : "");
        }
        gn_pt_text_add(t, "%s}", cnt > 8 ? ",..." : "");
        gn__tensor_release(&x);
        break;
    }
    default: gn_pt_text_add(t, "?"); break;
    }
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

char *gn_pt_dump_sorted(const gn_graph *g)
{
    char **lines = calloc(g->n_nodes + 1, sizeof *lines);
    assert_non_null(lines);
    size_t nl = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i)) continue;
        const gn__node *n = &g->nodes[i];
        gn_pt_text t = {0};
        dump_head(&t, g, i, " = ");
        bool first = true;
        for (uint32_t k = 0; k < n->n_attr; k++) {
            const char *key = gn__str(g, n->attr[k].key);
            if (strcmp(key, "shape") == 0 && strcmp(gn__node_op(g, i), "Placeholder") == 0) continue;
            gn_pt_text_add(&t, "%s%s=", first ? " {" : ", ", key);
            attr_text(&t, n->attr[k].value);
            first = false;
        }
        if (!first) gn_pt_text_add(&t, "}");
        if (n->device) gn_pt_text_add(&t, " @%s", gn__str(g, n->device));
        lines[nl++] = t.s;
    }
    qsort(lines, nl, sizeof *lines, cmp_str);
    gn_pt_text all = {0};
    gn_pt_text_add(&all, "%s", "");
    for (size_t i = 0; i < nl; i++) {
        gn_pt_text_add(&all, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    return all.s;
}

void gn_pt_expect_dump_sorted(const gn_graph *g, const char *want)
{
    char *got = gn_pt_dump_sorted(g);
    if (strcmp(got, want) != 0) fail_msg("graph differs\n--- got ---\n%s--- want ---\n%s", got, want);
    free(got);
}

static gn_id attr_node(const gn_graph *g, const char *node)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node '%s'", node);
    return id;
}

void gn_pt_expect_attr_s(const gn_graph *g, const char *node, const char *key, const char *want)
{
    const char *s = NULL;
    size_t n = 0;
    if (!gn__attr_get_string(g, attr_node(g, node), key, &s, &n)) fail_msg("%s: no string attr %s", node, key);
    if (n != strlen(want) || memcmp(s, want, n)) fail_msg("%s.%s = '%.*s', want '%s'", node, key, (int)n, s, want);
}

void gn_pt_expect_attr_i(const gn_graph *g, const char *node, const char *key, int64_t want)
{
    int64_t v = -999;
    if (!gn__attr_get_int(g, attr_node(g, node), key, &v)) fail_msg("%s: no int attr %s", node, key);
    if (v != want) fail_msg("%s.%s = %lld, want %lld", node, key, (long long)v, (long long)want);
}

void gn_pt_expect_attr_f(const gn_graph *g, const char *node, const char *key, float want)
{
    float v = -999;
    if (!gn__attr_get_float(g, attr_node(g, node), key, &v)) fail_msg("%s: no float attr %s", node, key);
    if (fabsf(v - want) > 1e-7f) fail_msg("%s.%s = %g, want %g", node, key, v, want);
}

static const Tensorflow__AttrValue__ListValue *attr_list(const gn_graph *g, const char *node, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, attr_node(g, node), key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) fail_msg("%s: no list attr %s", node, key);
    return v->list;
}

void gn_pt_expect_attr_ints(const gn_graph *g, const char *node, const char *key, const int64_t *want, size_t n)
{
    const Tensorflow__AttrValue__ListValue *l = attr_list(g, node, key);
    assert_int_equal(l->n_i, n);
    for (size_t i = 0; i < n; i++) assert_int_equal(l->i[i], want[i]);
}

void gn_pt_expect_attr_strs(const gn_graph *g, const char *node, const char *key, const char *want)
{
    const Tensorflow__AttrValue__ListValue *l = attr_list(g, node, key);
    gn_pt_text t = {0};
    gn_pt_text_add(&t, "%s", "");
    for (size_t i = 0; i < l->n_s; i++) gn_pt_text_add(&t, "%s%.*s", i ? "," : "", (int)l->s[i].len, (const char *)l->s[i].data);
    if (strcmp(t.s, want)) fail_msg("%s %s [%s], want [%s]", node, key, t.s, want);
    gn_pt_text_free(&t);
}

void gn_pt_expect_dump(const gn_graph *g, const char *want)
{
    char *got = gn_pt_dump(g);
    if (strcmp(got, want) != 0) fail_msg("graph:\n  got:  %s\n  want: %s", got, want);
    free(got);
}

void gn_pt_preserve_list(gn_graph *g, const char *names)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        gn_id id = gn__graph_find(g, t);
        if (id == GN_NONE) fail_msg("no node %s", t);
        g->nodes[id].flags |= GN__NODE_PRESERVE;
    }
}

void gn_pt_check_same(const gn_graph *a, const gn_graph *b, const char *const *fn, const gn_tensor *ft, size_t nf,
                      const char *const *xn, size_t nx)
{
    assert_true(nx <= 8);
    gn_pt_expect_close(a, b, fn, ft, nf, xn, nx, 0, NULL);
}

const char *const gn_pt_corpus_models[GN_PT_CORPUS_MODELS] = {
    "ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb",
    "ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb",
    "ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb",
    "ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb",
    "onnx__tensorflow-onnx/tests__models__lstm__frozen.pb",
    "onnx__tensorflow-onnx/tests__models__gru__frozen.pb",
    "onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb",
    "tensorflow__rust/examples__addition__model.pb",
    "tensorflow__rust/examples__regression_checkpoint__model.pb",
    "tensorflow__rust/examples__regression_savedmodel",
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123",
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123",
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_counter__00000123",
    "tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__1646034756",
    "tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt",
    "tensorflow__tfx/tfx__components__testdata__trainer__keras__Format-Serving",
    "tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model",
    "tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn",
    "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model",
    "tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module",
    "SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential",
    "tensorflow__ngraph-bridge/test__python__fusedmatmul_0.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__graph__regularization__testdata__bert1",
    "tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop",
    "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__StaticHashTableModule",
    "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123",
    "tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main_graph_mode.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__jit__tests__opens2s_gnmt_mixed_precision.pbtxt.gz",
    "tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__loops_and_queues.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__function_functional_while.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__functional-if-ops.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__functional-while-ops.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__case_op.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__switch_n.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__graph-gradient-def.pbtxt",
    "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__shape-attrs.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__data__service__testdata__interleave_textline_dataset.pbtxt",
    "tensorflow__tensorflow/tensorflow__core__ir__importexport__tests__roundtrip__test10.pbtxt",
};
const size_t gn_pt_corpus_model_count = sizeof gn_pt_corpus_models / sizeof gn_pt_corpus_models[0];
/* every entry given (an initializer shorter than the bound would leave NULLs) */
_Static_assert(sizeof(gn_pt_corpus_models) / sizeof gn_pt_corpus_models[0] == GN_PT_CORPUS_MODELS, "corpus list");

bool gn_pt_golden_open(const gn_pt_golden *m, gn_graph **g, gn_tensor *feeds, const char **fn, const char **xn,
                       bool preserve)
{
    char path[4096];
    *g = NULL;
    if (!strncmp(m->graph, "corpus/", 7)) {
        if (!gn_test_corpus(m->graph + 7, path, sizeof path)) return false;
    } else {
        gn_test_data(m->graph, path, sizeof path);
    }
    if (gn_graph_load(path, NULL, g) != GN_OK) fail_msg("%s: %s", path, gn_graph_errmsg(*g));
    for (size_t k = 0; k < m->nf; k++) {
        char fp[4096], rel[600], err[256];
        snprintf(rel, sizeof rel, "golden/%s", m->feed_file[k]);
        gn_test_data(rel, fp, sizeof fp);
        if (gn_npy_read(fp, &feeds[k], err, sizeof err) != GN_OK) fail_msg("%s", err);
        fn[k] = m->feed[k];
        if (preserve) gn_pt_preserve_tensor(*g, fn[k]);
    }
    for (size_t k = 0; k < m->nx; k++) {
        xn[k] = m->fetch[k];
        if (preserve) gn_pt_preserve_tensor(*g, xn[k]);
    }
    return true;
}
