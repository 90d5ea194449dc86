/* GraphDef <-> IR. Node inputs "x", "x:1", "^x" at the top level; in function
 * bodies "arg", "arg:k", "node:out_arg:k" and "^node", mapped to flat output
 * indices through the op registry (or the called function's signature), as
 * TensorFlow's function_def_utils / graph_constructor do. */
#include "io/graphdef.h"

#include <stdio.h>
#include <stdlib.h>

#include "opdef/registry.h"

/* ---- error helpers ------------------------------------------------------------- */
static gn_status node_fail(gn_graph *g, const gn__source *src, const char *fn, uint32_t k,
                           const char *node, const char *op, gn_status code, const char *fmt, ...)
    GN__PRINTF(8, 9);

static gn_status node_fail(gn_graph *g, const gn__source *src, const char *fn, uint32_t k,
                           const char *node, const char *op, gn_status code, const char *fmt, ...)
{
    char what[GN__ERRMSG_MAX], pre[512] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t o = 0;
    if (src && src->name) o += (size_t)snprintf(pre + o, sizeof pre - o, "%s: ", src->name);
    if (!fn && src && o < sizeof pre) {
        char pos[64] = "";
        gn__graphdef_node_pos(src, k, pos, sizeof pos);
        if (pos[0]) o += (size_t)snprintf(pre + o, sizeof pre - o, "%s: ", pos);
    }
    if (fn && o < sizeof pre) o += (size_t)snprintf(pre + o, sizeof pre - o, "function '%s': ", fn);
    if (op && op[0])
        return gn__fail(&g->err, code, "%snode '%s' (%s): %s", pre, node, op, what);
    return gn__fail(&g->err, code, "%snode '%s': %s", pre, node, what);
}

gn_status gn__graphdef_node_fail(gn_graph *g, const gn__source *src, uint32_t k, const char *node, const char *op,
                                 gn_status code, const char *fmt, ...)
{
    char what[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return node_fail(g, src, NULL, k, node, op, code, "%s", what);
}

/* ---- input-name parsing ----------------------------------------------------------- */
typedef struct parsed_input {
    bool control;
    const char *name;
    size_t name_len;
    const char *arg;     /* function form: output arg name */
    size_t arg_len;
    bool has_index;
    uint64_t index;
    bool bad;
} parsed_input;

static bool parse_uint(const char *s, size_t n, uint64_t *v)
{
    if (!n || n > 10) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    if (x > INT32_MAX) return false;
    *v = x;
    return true;
}

static parsed_input parse_input_n(const char *s, size_t n)
{
    parsed_input p = {0};
    if (n && s[0] == '^') {
        p.control = true;
        s++;
        n--;
    }
    const char *c1 = memchr(s, ':', n);
    if (!c1) {
        p.name = s;
        p.name_len = n;
        p.bad = n == 0;
        return p;
    }
    p.name = s;
    p.name_len = (size_t)(c1 - s);
    const char *rest = c1 + 1;
    size_t rn = n - p.name_len - 1;
    const char *c2 = memchr(rest, ':', rn);
    if (!c2) {
        p.has_index = true;
        p.bad = !parse_uint(rest, rn, &p.index) || p.name_len == 0 || p.control;
        return p;
    }
    p.arg = rest;
    p.arg_len = (size_t)(c2 - rest);
    p.has_index = true;
    p.bad = !parse_uint(c2 + 1, rn - p.arg_len - 1, &p.index) || p.name_len == 0 || p.arg_len == 0 || p.control;
    return p;
}

static parsed_input parse_input(const char *s) { return parse_input_n(s, strlen(s)); }

/* ---- NodeDef -> node ------------------------------------------------------------------ */
static int cmp_attr_entry(const void *a, const void *b)
{
    const Tensorflow__NodeDef__AttrEntry *x = *(Tensorflow__NodeDef__AttrEntry *const *)a;
    const Tensorflow__NodeDef__AttrEntry *y = *(Tensorflow__NodeDef__AttrEntry *const *)b;
    return strcmp(x->key, y->key);
}

static gn_status add_nodedef(gn_graph *g, const Tensorflow__NodeDef *nd, uint32_t k, const gn__source *src,
                             const char *fn)
{
    const char *name = nd->name ? nd->name : "";
    const char *op = nd->op ? nd->op : "";
    if (!name[0]) return node_fail(g, src, fn, k, "", op, GN_ERR_GRAPH, "node #%u has an empty name", k);
    if (!op[0]) return node_fail(g, src, fn, k, name, NULL, GN_ERR_GRAPH, "empty op");
    if (gn__graph_find(g, name) != GN_NONE)
        return node_fail(g, src, fn, k, name, op, GN_ERR_GRAPH, "duplicate node name");
    gn_id id;
    gn_status s = gn__node_add(g, name, op, &id);
    if (s != GN_OK) return node_fail(g, src, fn, k, name, op, s, "%s", g->err.msg);
    gn__node *n = &g->nodes[id];
    n->orig_index = k;
    if (nd->device && nd->device[0]) gn__node_set_device(g, id, nd->device);
    n = &g->nodes[id];
    n->extra = nd;
    if (nd->n_attr) {
        Tensorflow__NodeDef__AttrEntry **sorted = malloc(nd->n_attr * sizeof *sorted);
        if (!sorted) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        memcpy(sorted, nd->attr, nd->n_attr * sizeof *sorted);
        qsort(sorted, nd->n_attr, sizeof *sorted, cmp_attr_entry);
        n->attr = gn__arena_alloc(&g->arena, nd->n_attr * sizeof *n->attr, 8);
        if (!n->attr) {
            free(sorted);
            return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        }
        n->cap_attr = (uint32_t)nd->n_attr;
        for (size_t i = 0; i < nd->n_attr; i++) {
            const char *key = sorted[i]->key ? sorted[i]->key : "";
            if (i > 0 && strcmp(key, sorted[i - 1]->key ? sorted[i - 1]->key : "") == 0) {
                free(sorted);
                return node_fail(g, src, fn, k, name, op, GN_ERR_GRAPH, "attr '%s' given twice", key);
            }
            if (!sorted[i]->value) {
                free(sorted);
                return node_fail(g, src, fn, k, name, op, GN_ERR_GRAPH, "attr '%s' has no value", key);
            }
            uint32_t kid = gn__intern_cstr(g, key);
            if (kid == UINT32_MAX) {
                free(sorted);
                return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            }
            g->nodes[id].attr[i] = (gn__attr){.key = kid, .value = sorted[i]->value};
        }
        g->nodes[id].n_attr = (uint32_t)nd->n_attr;
        free(sorted);
    }
    return GN_OK;
}

gn_status gn__graph_add_nodedef(gn_graph *g, const Tensorflow__NodeDef *nd, uint32_t k, const gn__source *src)
{
    return add_nodedef(g, nd, k, src, NULL);
}

/* Top-level inputs: "x", "x:k", "^x". Edges are set directly (fanouts are
 * built in one sweep afterwards). */
gn_status gn__graph_resolve_inputs(gn_graph *g, gn_id id, const gn__strslice *inputs, uint32_t n_input, uint32_t k,
                                   const gn__source *src)
{
    gn__node *n = &g->nodes[id];
    const char *name = gn__str(g, n->name), *opname = gn__str(g, n->op);
    uint32_t nd_data = 0, nd_ctrl = 0;
    for (uint32_t i = 0; i < n_input; i++) {
        if (inputs[i].len && inputs[i].p[0] == '^') nd_ctrl++;
        else nd_data++;
    }
    n->in = nd_data ? gn__arena_alloc(&g->arena, nd_data * sizeof *n->in, 8) : NULL;
    n->ctrl = nd_ctrl ? gn__arena_alloc(&g->arena, nd_ctrl * sizeof *n->ctrl, 8) : NULL;
    if ((nd_data && !n->in) || (nd_ctrl && !n->ctrl)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    n->cap_in = nd_data;
    n->cap_ctrl = nd_ctrl;
    bool seen_ctrl = false;
    for (uint32_t i = 0; i < n_input; i++) {
        const char *in = inputs[i].p;
        int il = (int)inputs[i].len;
        parsed_input p = parse_input_n(in, inputs[i].len);
        if (p.bad || p.arg)
            return node_fail(g, src, NULL, k, name, opname, GN_ERR_GRAPH, "input %u '%.*s' is malformed", i, il, in);
        if (!p.control && seen_ctrl)
            return node_fail(g, src, NULL, k, name, opname, GN_ERR_GRAPH,
                             "data input %u '%.*s' comes after a control input", i, il, in);
        gn_id prod = gn__graph_find_n(g, p.name, p.name_len);
        if (prod == GN_NONE)
            return node_fail(g, src, NULL, k, name, opname, GN_ERR_GRAPH, "input %u names missing node '%.*s'",
                             i, (int)p.name_len, p.name);
        n = &g->nodes[id];
        if (p.control) {
            seen_ctrl = true;
            bool dup = false;
            for (uint32_t j = 0; j < n->n_ctrl; j++) dup |= n->ctrl[j] == prod;
            if (!dup) n->ctrl[n->n_ctrl++] = prod;
        } else {
            n->in[n->n_in++] = (gn__edge){prod, (uint32_t)p.index};
        }
    }
    return GN_OK;
}

gn_status gn__graph_try_resolve_inputs(gn_graph *g, gn_id id, const gn__strslice *inputs, uint32_t n_input,
                                       gn__name_finder find, void *ctx, bool *done)
{
    *done = false;
    uint32_t nd_data = 0, nd_ctrl = 0;
    for (uint32_t i = 0; i < n_input; i++) {
        if (inputs[i].len && inputs[i].p[0] == '^') nd_ctrl++;
        else nd_data++;
    }
    gn__edge *in = nd_data ? gn__arena_alloc(&g->arena, nd_data * sizeof *in, 8) : NULL;
    gn_id *ctrl = nd_ctrl ? gn__arena_alloc(&g->arena, nd_ctrl * sizeof *ctrl, 8) : NULL;
    if ((nd_data && !in) || (nd_ctrl && !ctrl)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    uint32_t n_in = 0, n_ctrl = 0;
    bool seen_ctrl = false;
    for (uint32_t i = 0; i < n_input; i++) {
        parsed_input p = parse_input_n(inputs[i].p, inputs[i].len);
        if (p.bad || p.arg || (!p.control && seen_ctrl)) return GN_OK;
        gn_id prod = find(ctx, p.name, p.name_len);
        if (prod == GN_NONE) return GN_OK;
        if (p.control) {
            seen_ctrl = true;
            bool dup = false;
            for (uint32_t j = 0; j < n_ctrl; j++) dup |= ctrl[j] == prod;
            if (!dup) ctrl[n_ctrl++] = prod;
        } else {
            in[n_in++] = (gn__edge){prod, (uint32_t)p.index};
        }
    }
    gn__node *n = &g->nodes[id];
    n->in = in;
    n->ctrl = ctrl;
    n->cap_in = nd_data;
    n->cap_ctrl = nd_ctrl;
    n->n_in = n_in;
    n->n_ctrl = n_ctrl;
    *done = true;
    return GN_OK;
}

static gn_status resolve_top_inputs(gn_graph *g, gn_id id, const Tensorflow__NodeDef *nd, uint32_t k,
                                    const gn__source *src)
{
    gn__strslice small[16], *in = small;
    if (nd->n_input > GN__ARRAY_LEN(small)) {
        in = malloc(nd->n_input * sizeof *in);
        if (!in) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < nd->n_input; i++) {
        in[i].p = nd->input[i] ? nd->input[i] : "";
        in[i].len = strlen(in[i].p);
    }
    gn_status s = gn__graph_resolve_inputs(g, id, in, (uint32_t)nd->n_input, k, src);
    if (in != small) free(in);
    return s;
}

/* ---- function bodies ---------------------------------------------------------------- */
static gn__outarg_map *outarg_map(gn_graph *g, gn_id prod)
{
    gn__node *n = &g->nodes[prod];
    if (!n->outargs) {
        n->outargs = gn__arena_zalloc(&g->arena, sizeof *n->outargs, 8);
    }
    return n->outargs;
}

/* Collects, for producers whose op is unknown, each out_arg's largest index
 * (first pass); bases are then assigned in order of first use. */
typedef struct pending_arg {
    gn_id prod;
    uint32_t arg;      /* interned */
    uint32_t max;
} pending_arg;

/* Input i of body node id is bad: "node 'x' (Op): input i<tail>", or for a
 * _Retval (an internal node) "ret 'key'<tail>", naming what the source has. */
static gn_status fn_input_fail(gn_graph *g, const char *fname, gn_id id, size_t i, uint32_t k, const char *fmt, ...)
    GN__PRINTF(6, 7);

static gn_status fn_input_fail(gn_graph *g, const char *fname, gn_id id, size_t i, uint32_t k, const char *fmt, ...)
{
    char tail[GN__ERRMSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tail, sizeof tail, fmt, ap);
    va_end(ap);
    const gn__node *n = &g->nodes[id];
    if (n->flags & GN__NODE_FN_RET)
        return gn__fail(&g->err, GN_ERR_GRAPH, "function '%s': ret '%s'%s", fname, gn__str(g, n->name) + 8, tail);
    return node_fail(g, NULL, fname, k, gn__str(g, n->name), gn__str(g, n->op), GN_ERR_GRAPH, "input %zu%s", i, tail);
}

static gn_status fn_resolve(gn_graph *g, const char *fname, gn_id id, const char *in, size_t i,
                            gn__edge *edge, gn_id *ctrl, bool *is_ctrl, uint32_t k)
{
    parsed_input p = parse_input(in);
    if (p.bad) return fn_input_fail(g, fname, id, i, k, " '%s' is malformed", in);
    gn_id prod = gn__graph_find_n(g, p.name, p.name_len);
    if (prod == GN_NONE)
        return fn_input_fail(g, fname, id, i, k, " names missing node '%.*s'", (int)p.name_len, p.name);
    *is_ctrl = p.control;
    if (p.control) {
        *ctrl = prod;
        return GN_OK;
    }
    if (!p.arg) {
        *edge = (gn__edge){prod, (uint32_t)p.index};
        return GN_OK;
    }
    const gn__opdef *op = gn__node_opdef(g, prod);
    if (op) {
        int32_t a = gn__op_output_arg(op, p.arg, p.arg_len);
        if (a < 0)
            return fn_input_fail(g, fname, id, i, k, " '%s': %s has no output named '%.*s'", in, gn__node_op(g, prod),
                                 (int)p.arg_len, p.arg);
        uint32_t start, count;
        gn__err e;
        gn__err_clear(&e);
        if (gn__op_output_range(op, g, prod, (uint32_t)a, &start, &count, &e) != GN_OK)
            return node_fail(g, NULL, fname, k, gn__node_name(g, prod), gn__node_op(g, prod), GN_ERR_GRAPH, "%s",
                             e.msg);
        if (p.index >= count)
            return fn_input_fail(g, fname, id, i, k, " '%s': output '%.*s' of '%s' has %u tensors", in,
                                 (int)p.arg_len, p.arg, gn__node_name(g, prod), count);
        *edge = (gn__edge){prod, start + (uint32_t)p.index};
        return GN_OK;
    }
    gn__outarg_map *m = g->nodes[prod].outargs;
    uint32_t an = gn__intern_find(g, p.arg, p.arg_len);
    for (uint32_t j = 0; m && j < m->n; j++)
        if (m->name[j] == an) {
            *edge = (gn__edge){prod, m->base[j] + (uint32_t)p.index};
            return GN_OK;
        }
    return gn__fail(&g->err, GN_ERR_INTERNAL, "function '%s': unresolved output arg '%s'", fname, in);
}

static gn_status build_outarg_maps(gn_graph *g, const Tensorflow__FunctionDef *fd)
{
    pending_arg *pa = NULL;
    size_t npa = 0, cap = 0;
    gn_status s = GN_OK;
    /* node_def inputs in order, then the ret values (an out_arg may be named
     * only by a ret) */
    for (size_t i = 0; i <= fd->n_node_def && s == GN_OK; i++) {
        const Tensorflow__NodeDef *nd = i < fd->n_node_def ? fd->node_def[i] : NULL;
        size_t nin = nd ? nd->n_input : fd->n_ret;
        for (size_t j = 0; j < nin; j++) {
            const char *str = nd ? nd->input[j] : fd->ret[j]->value;
            parsed_input p = parse_input(str ? str : "");
            if (p.bad || p.control || !p.arg) continue;
            gn_id prod = gn__graph_find_n(g, p.name, p.name_len);
            if (prod == GN_NONE || gn__node_opdef(g, prod)) continue;
            uint32_t an = gn__intern(g, p.arg, p.arg_len);
            if (an == UINT32_MAX) {
                s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            size_t q;
            for (q = 0; q < npa; q++)
                if (pa[q].prod == prod && pa[q].arg == an) break;
            if (q == npa) {
                if (npa == cap) {
                    cap = cap ? cap * 2 : 16;
                    pending_arg *np = realloc(pa, cap * sizeof *np);
                    if (!np) {
                        s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                        break;
                    }
                    pa = np;
                }
                pa[npa++] = (pending_arg){prod, an, (uint32_t)p.index};
            } else if (p.index > pa[q].max) {
                pa[q].max = (uint32_t)p.index;
            }
        }
    }
    /* assign bases per producer in order of first use */
    for (size_t q = 0; q < npa && s == GN_OK; q++) {
        gn__outarg_map *m = outarg_map(g, pa[q].prod);
        if (!m) {
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        uint32_t base = 0;
        for (uint32_t j = 0; j < m->n; j++) {
            uint32_t end = m->base[j];
            for (size_t r = 0; r < q; r++)
                if (pa[r].prod == pa[q].prod && pa[r].arg == m->name[j]) end += pa[r].max + 1;
            if (end > base) base = end;
        }
        uint32_t *nn = gn__arena_alloc(&g->arena, (m->n + 1) * sizeof *nn, 4);
        uint32_t *nb = gn__arena_alloc(&g->arena, (m->n + 1) * sizeof *nb, 4);
        if (!nn || !nb) {
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        if (m->n) {
            memcpy(nn, m->name, m->n * sizeof *nn);
            memcpy(nb, m->base, m->n * sizeof *nb);
        }
        nn[m->n] = pa[q].arg;
        nb[m->n] = base;
        m->name = nn;
        m->base = nb;
        m->n++;
    }
    free(pa);
    return s;
}

static gn_status add_fn_arg_node(gn_graph *body, const Tensorflow__OpDef__ArgDef *a, uint32_t idx, bool ret,
                                 gn_id *out)
{
    char *nm = NULL;
    const char *aname = a->name ? a->name : "";
    if (ret) {
        size_t n = strlen(aname) + 9;
        nm = malloc(n);
        if (!nm) return gn__fail(&body->err, GN_ERR_NOMEM, "out of memory");
        snprintf(nm, n, "_retval:%s", aname);
    }
    gn_status s = gn__node_add(body, ret ? nm : aname, ret ? "_Retval" : "_Arg", out);
    free(nm);
    if (s != GN_OK) return s;
    body->nodes[*out].flags |= ret ? GN__NODE_FN_RET : GN__NODE_FN_ARG;
    body->nodes[*out].orig_index = idx;
    /* T and index attrs, as TensorFlow's _Arg/_Retval carry */
    GN_TRY(gn__node_set_attr_int(body, *out, "index", idx));
    if (a->type != 0) GN_TRY(gn__node_set_attr_type(body, *out, "T", a->type));
    return GN_OK;
}

/* First pass over the library: every function gets its record, signature
 * and (empty) body, so that a body calling a function defined later in the
 * library resolves that call's out_arg names against its signature. */
static gn_status function_register(gn_graph *top, const Tensorflow__FunctionDef *fd, uint32_t fk)
{
    const char *fname = fd->signature && fd->signature->name ? fd->signature->name : "";
    if (!fname[0]) return gn__fail(&top->err, GN_ERR_GRAPH, "library function #%u has no name", fk);
    if (gn__graph_find_function(top, fname))
        return gn__fail(&top->err, GN_ERR_GRAPH, "function '%s' is defined twice", fname);
    gn_graph *body = gn__graph_new(GN__GRAPH_FUNCTION);
    if (!body) return gn__fail(&top->err, GN_ERR_NOMEM, "out of memory");
    body->lib = top;
    gn_status s = gn__graph_add_function(top, fname, fd, body, NULL);
    if (s != GN_OK) gn_graph_free(body);
    return s;
}

/* Second pass: builds the body of a registered function. */
static gn_status function_from_def(gn_graph *top, const Tensorflow__FunctionDef *fd)
{
    const char *fname = fd->signature->name;
    gn__function *f = gn__graph_find_function(top, fname);
    gn_graph *body = f->body;
    gn_status s = GN_OK;
    const Tensorflow__OpDef *sig = fd->signature;
    for (size_t i = 0; i < sig->n_input_arg && s == GN_OK; i++) {
        gn_id id;
        s = add_fn_arg_node(body, sig->input_arg[i], (uint32_t)i, false, &id);
        if (s != GN_OK)
            s = gn__fail(&top->err, s, "function '%s': input arg '%s': %s", fname,
                         sig->input_arg[i]->name ? sig->input_arg[i]->name : "", body->err.msg);
    }
    for (size_t i = 0; i < fd->n_node_def && s == GN_OK; i++) {
        s = add_nodedef(body, fd->node_def[i], (uint32_t)(sig->n_input_arg + i), NULL, fname);
        if (s != GN_OK) {
            gn__fail(&top->err, s, "%s", body->err.msg);
            gn__err_prefix(&top->err, "function '%s'", fname);
        }
    }
    if (s == GN_OK) s = build_outarg_maps(body, fd);
    /* inputs */
    for (size_t i = 0; i < fd->n_node_def && s == GN_OK; i++) {
        const Tensorflow__NodeDef *nd = fd->node_def[i];
        gn_id id = gn__graph_find(body, nd->name);
        bool seen_ctrl = false;
        gn__node *n = &body->nodes[id];
        uint32_t nd_data = 0, nd_ctrl = 0;
        for (size_t j = 0; j < nd->n_input; j++) {
            if (nd->input[j] && nd->input[j][0] == '^') nd_ctrl++;
            else nd_data++;
        }
        n->in = nd_data ? gn__arena_alloc(&body->arena, nd_data * sizeof *n->in, 8) : NULL;
        n->ctrl = nd_ctrl ? gn__arena_alloc(&body->arena, nd_ctrl * sizeof *n->ctrl, 8) : NULL;
        n->cap_in = nd_data;
        n->cap_ctrl = nd_ctrl;
        if ((nd_data && !n->in) || (nd_ctrl && !n->ctrl)) {
            s = gn__fail(&top->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        for (size_t j = 0; j < nd->n_input && s == GN_OK; j++) {
            gn__edge e = {0, 0};
            gn_id c = GN_NONE;
            bool ctl = false;
            const char *in = nd->input[j] ? nd->input[j] : "";
            s = fn_resolve(body, fname, id, in, j, &e, &c, &ctl, (uint32_t)i);
            if (s != GN_OK) {
                gn__fail(&top->err, s, "%s", body->err.msg);
                break;
            }
            n = &body->nodes[id];
            if (ctl) {
                seen_ctrl = true;
                bool dup = false;
                for (uint32_t q = 0; q < n->n_ctrl; q++) dup |= n->ctrl[q] == c;
                if (!dup) n->ctrl[n->n_ctrl++] = c;
            } else {
                if (seen_ctrl) {
                    s = node_fail(top, NULL, fname, (uint32_t)i, nd->name, nd->op, GN_ERR_GRAPH,
                                  "data input %zu '%s' comes after a control input", j, in);
                    break;
                }
                n->in[n->n_in++] = e;
            }
        }
    }
    /* returns: in the signature's order; the tensor each names comes from ret */
    for (size_t i = 0; i < sig->n_output_arg && s == GN_OK; i++) {
        const Tensorflow__OpDef__ArgDef *a = sig->output_arg[i];
        gn_id rid;
        s = add_fn_arg_node(body, a, (uint32_t)i, true, &rid);
        if (s != GN_OK) {
            gn__fail(&top->err, s, "function '%s': %s", fname, body->err.msg);
            break;
        }
        body->nodes[rid].orig_index = (uint32_t)(sig->n_input_arg + fd->n_node_def + i);
        const char *target = NULL;
        for (size_t r = 0; r < fd->n_ret; r++)
            if (fd->ret[r]->key && a->name && strcmp(fd->ret[r]->key, a->name) == 0) target = fd->ret[r]->value;
        if (!target) {
            s = gn__fail(&top->err, GN_ERR_GRAPH, "function '%s': output '%s' has no ret entry", fname,
                         a->name ? a->name : "");
            break;
        }
        gn__edge e = {0, 0};
        gn_id c;
        bool ctl;
        s = fn_resolve(body, fname, rid, target, 0, &e, &c, &ctl, (uint32_t)i);
        if (s == GN_OK && ctl)
            s = gn__fail(&body->err, GN_ERR_GRAPH, "function '%s': ret '%s' is a control edge", fname, target);
        if (s != GN_OK) {
            gn__fail(&top->err, s, "%s", body->err.msg);
            break;
        }
        gn__node *rn = &body->nodes[rid];
        rn->in = gn__arena_alloc(&body->arena, sizeof *rn->in, 8);
        if (!rn->in) {
            s = gn__fail(&top->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        rn->in[0] = e;
        rn->n_in = rn->cap_in = 1;
    }
    for (size_t r = 0; r < fd->n_ret && s == GN_OK; r++) {
        bool found = false;
        for (size_t i = 0; i < sig->n_output_arg; i++)
            found |= sig->output_arg[i]->name && fd->ret[r]->key && strcmp(sig->output_arg[i]->name, fd->ret[r]->key) == 0;
        if (!found)
            s = gn__fail(&top->err, GN_ERR_GRAPH, "function '%s': ret '%s' is not an output of the signature", fname,
                         fd->ret[r]->key ? fd->ret[r]->key : "");
    }
    /* control returns */
    if (s == GN_OK && fd->n_control_ret) {
        f->n_control_ret = (uint32_t)fd->n_control_ret;
        f->control_ret_name = gn__arena_alloc(&top->arena, fd->n_control_ret * sizeof *f->control_ret_name, 4);
        f->control_ret_node = gn__arena_alloc(&top->arena, fd->n_control_ret * sizeof *f->control_ret_node, 4);
        if (!f->control_ret_name || !f->control_ret_node) s = gn__fail(&top->err, GN_ERR_NOMEM, "out of memory");
        for (size_t r = 0; r < fd->n_control_ret && s == GN_OK; r++) {
            const char *key = fd->control_ret[r]->key ? fd->control_ret[r]->key : "";
            const char *val = fd->control_ret[r]->value ? fd->control_ret[r]->value : "";
            f->control_ret_name[r] = gn__intern_cstr(body, key);
            f->control_ret_node[r] = gn__graph_find(body, val);
            if (f->control_ret_node[r] == GN_NONE)
                s = gn__fail(&top->err, GN_ERR_GRAPH, "function '%s': control_ret '%s' names missing node '%s'", fname,
                             key, val);
        }
    }
    if (s == GN_OK) {
        s = gn__graph_build_fanouts(body);
        if (s != GN_OK) gn__fail(&top->err, s, "%s", body->err.msg);
    }
    return s;
}

/* ---- GraphDef -> graph ---------------------------------------------------------------- */
gn_status gn__graph_begin_graphdef(gn_graph *g, const Tensorflow__GraphDef *gd, gn__blob *blob, size_t n_nodes,
                                   const gn__source *src)
{
    GN_TRY(gn__graph_adopt_blob(g, blob));
    g->extra = gd;
    g->versions = gd->versions;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    g->deprecated_version = gd->version; /* still round-tripped */
#pragma GCC diagnostic pop
    if (n_nodes) {
        if (n_nodes > UINT32_MAX - 2) return gn__fail(&g->err, GN_ERR_GRAPH, "too many nodes");
        g->nodes = malloc(n_nodes * sizeof *g->nodes);
        if (!g->nodes) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        g->cap_nodes = (uint32_t)n_nodes;
    }
    /* library first, so that calls of library functions resolve */
    if (gd->library) {
        g->lib_extra = gd->library;
        for (size_t i = 0; i < gd->library->n_function; i++) {
            gn_status s = function_register(g, gd->library->function[i], (uint32_t)i);
            if (s != GN_OK) {
                if (src && src->name) gn__err_prefix(&g->err, "%s", src->name);
                return s;
            }
        }
        for (size_t i = 0; i < gd->library->n_function; i++) {
            gn_status s = function_from_def(g, gd->library->function[i]);
            if (s != GN_OK) {
                if (src && src->name) gn__err_prefix(&g->err, "%s", src->name);
                return s;
            }
        }
    }
    return GN_OK;
}

gn_status gn__graph_from_graphdef(gn_graph *g, const Tensorflow__GraphDef *gd, gn__blob *blob,
                                  const gn__source *src)
{
    GN_TRY(gn__graph_begin_graphdef(g, gd, blob, gd->n_node, src));
    for (size_t i = 0; i < gd->n_node; i++) GN_TRY(add_nodedef(g, gd->node[i], (uint32_t)i, src, NULL));
    for (size_t i = 0; i < gd->n_node; i++) GN_TRY(resolve_top_inputs(g, (gn_id)i, gd->node[i], (uint32_t)i, src));
    return gn__graph_build_fanouts(g);
}

/* ---- graph -> GraphDef ---------------------------------------------------------------- */
static char *input_string(const gn_graph *g, gn__arena *a, gn__edge e, bool fn)
{
    const gn__node *p = &g->nodes[e.node];
    const char *pn = gn__str(g, p->name);
    size_t pl = gn__strlen(g, p->name);
    char tmp[32];
    if (!fn || (p->flags & GN__NODE_FN_ARG)) {
        if (e.index == 0) return gn__arena_strndup(a, pn, pl);
        int m = snprintf(tmp, sizeof tmp, ":%u", e.index);
        char *s = gn__arena_alloc(a, pl + (size_t)m + 1, 1);
        if (!s) return NULL;
        memcpy(s, pn, pl);
        memcpy(s + pl, tmp, (size_t)m + 1);
        return s;
    }
    /* function body: node:out_arg:k */
    const char *arg = NULL;
    uint32_t k = e.index;
    const gn__opdef *op = gn__node_opdef(g, e.node);
    if (op) {
        for (uint32_t i = 0; i < op->n_outputs && !arg; i++) {
            uint32_t start, count;
            gn__err err;
            if (gn__op_output_range(op, g, e.node, i, &start, &count, &err) != GN_OK) break;
            if (e.index >= start && e.index < start + count) {
                arg = op->outputs[i].name;
                k = e.index - start;
            }
        }
    } else if (p->outargs) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < p->outargs->n; i++) {
            uint32_t b = p->outargs->base[i];
            if (b <= e.index && (best == UINT32_MAX || b > p->outargs->base[best])) best = i;
        }
        if (best != UINT32_MAX) {
            arg = gn__str(g, p->outargs->name[best]);
            k = e.index - p->outargs->base[best];
        }
    }
    if (!arg) {
        /* producer unknown and never referenced by name: fall back to "output" */
        arg = "output";
    }
    size_t al = strlen(arg);
    int m = snprintf(tmp, sizeof tmp, ":%u", k);
    char *s = gn__arena_alloc(a, pl + 1 + al + (size_t)m + 1, 1);
    if (!s) return NULL;
    memcpy(s, pn, pl);
    s[pl] = ':';
    memcpy(s + pl + 1, arg, al);
    memcpy(s + pl + 1 + al, tmp, (size_t)m + 1);
    return s;
}

gn_status gn__node_to_def(const gn_graph *g, gn_id id, gn__arena *a, bool fn, Tensorflow__NodeDef **out)
{
    const gn__node *n = &g->nodes[id];
    Tensorflow__NodeDef *nd = gn__arena_alloc(a, sizeof *nd, 8);
    if (!nd) return GN_ERR_NOMEM;
    tensorflow__node_def__init(nd);
    if (n->extra) {
        nd->base.n_unknown_fields = n->extra->base.n_unknown_fields;
        nd->base.unknown_fields = n->extra->base.unknown_fields;
        nd->experimental_debug_info = n->extra->experimental_debug_info;
        nd->experimental_type = n->extra->experimental_type;
    }
    nd->name = (char *)gn__str(g, n->name);
    nd->op = (char *)gn__str(g, n->op);
    nd->device = (char *)gn__str(g, n->device);
    nd->n_input = (size_t)n->n_in + n->n_ctrl;
    if (nd->n_input) {
        nd->input = gn__arena_alloc(a, nd->n_input * sizeof *nd->input, 8);
        if (!nd->input) return GN_ERR_NOMEM;
        for (uint32_t k = 0; k < n->n_in; k++) {
            nd->input[k] = input_string(g, a, n->in[k], fn);
            if (!nd->input[k]) return GN_ERR_NOMEM;
        }
        for (uint32_t k = 0; k < n->n_ctrl; k++) {
            const gn__node *p = &g->nodes[n->ctrl[k]];
            char *s = gn__arena_alloc(a, gn__strlen(g, p->name) + 2, 1);
            if (!s) return GN_ERR_NOMEM;
            s[0] = '^';
            memcpy(s + 1, gn__str(g, p->name), gn__strlen(g, p->name) + 1);
            nd->input[n->n_in + k] = s;
        }
    }
    nd->n_attr = n->n_attr;
    if (n->n_attr) {
        nd->attr = gn__arena_alloc(a, n->n_attr * sizeof *nd->attr, 8);
        Tensorflow__NodeDef__AttrEntry *ents = gn__arena_alloc(a, n->n_attr * sizeof *ents, 8);
        if (!nd->attr || !ents) return GN_ERR_NOMEM;
        for (uint32_t k = 0; k < n->n_attr; k++) {
            tensorflow__node_def__attr_entry__init(&ents[k]);
            ents[k].key = (char *)gn__str(g, n->attr[k].key);
            ents[k].value = (Tensorflow__AttrValue *)n->attr[k].value;
            nd->attr[k] = &ents[k];
        }
    }
    *out = nd;
    return GN_OK;
}

static gn_status function_to_def(const gn_graph *top, const gn__function *f, gn__arena *a,
                                 Tensorflow__FunctionDef **out, gn__err *err)
{
    Tensorflow__FunctionDef *fd = gn__arena_alloc(a, sizeof *fd, 8);
    if (!fd) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (f->def) *fd = *f->def;
    else tensorflow__function_def__init(fd);
    const gn_graph *b = f->body;
    fd->n_node_def = 0;
    fd->node_def = NULL;
    fd->n_ret = 0;
    fd->ret = NULL;
    if (!b) {
        *out = fd;
        return GN_OK;
    }
    uint32_t nbody = 0;
    for (gn_id i = 0; i < b->n_nodes; i++)
        if (!(b->nodes[i].flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET))) nbody++;
    fd->node_def = gn__arena_alloc(a, (nbody ? nbody : 1) * sizeof *fd->node_def, 8);
    if (!fd->node_def) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < b->n_nodes; i++) {
        if (b->nodes[i].flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        if (gn__node_to_def(b, i, a, true, &fd->node_def[fd->n_node_def++]) != GN_OK)
            return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    /* ret: sorted by key, as TensorFlow's deterministic serialization does */
    uint32_t nret = 0;
    for (gn_id i = 0; i < b->n_nodes; i++)
        if ((b->nodes[i].flags & GN__NODE_FN_RET) && !(b->nodes[i].flags & GN__NODE_DEAD)) nret++;
    fd->ret = gn__arena_alloc(a, (nret ? nret : 1) * sizeof *fd->ret, 8);
    Tensorflow__FunctionDef__RetEntry *re = gn__arena_alloc(a, (nret ? nret : 1) * sizeof *re, 8);
    if (!fd->ret || !re) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < b->n_nodes; i++) {
        const gn__node *n = &b->nodes[i];
        if (!(n->flags & GN__NODE_FN_RET) || (n->flags & GN__NODE_DEAD) || n->n_in != 1) continue;
        Tensorflow__FunctionDef__RetEntry *e = &re[fd->n_ret];
        tensorflow__function_def__ret_entry__init(e);
        e->key = (char *)gn__str(b, n->name) + 8; /* after "_retval:" */
        e->value = input_string(b, a, n->in[0], true);
        if (!e->value) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        /* insertion sort by key: functions have few outputs */
        size_t p = fd->n_ret++;
        while (p > 0 && strcmp(fd->ret[p - 1]->key, e->key) > 0) {
            fd->ret[p] = fd->ret[p - 1];
            p--;
        }
        fd->ret[p] = e;
    }
    /* control_ret: names from the record, node names current */
    if (f->n_control_ret) {
        fd->n_control_ret = f->n_control_ret;
        fd->control_ret = gn__arena_alloc(a, f->n_control_ret * sizeof *fd->control_ret, 8);
        Tensorflow__FunctionDef__ControlRetEntry *ce = gn__arena_alloc(a, f->n_control_ret * sizeof *ce, 8);
        if (!fd->control_ret || !ce) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t r = 0; r < f->n_control_ret; r++) {
            tensorflow__function_def__control_ret_entry__init(&ce[r]);
            ce[r].key = (char *)gn__str(b, f->control_ret_name[r]);
            ce[r].value = f->control_ret_node[r] != GN_NONE ? (char *)gn__node_name(b, f->control_ret_node[r]) : "";
            fd->control_ret[r] = &ce[r];
        }
    } else {
        fd->n_control_ret = 0;
        fd->control_ret = NULL;
    }
    (void)top;
    *out = fd;
    return GN_OK;
}

static gn_status to_graphdef(const gn_graph *g, gn__arena *a, bool with_nodes, Tensorflow__GraphDef **out,
                             gn__err *err);

gn_status gn__graph_to_graphdef(const gn_graph *g, gn__arena *a, Tensorflow__GraphDef **out, gn__err *err)
{
    return to_graphdef(g, a, true, out, err);
}

gn_status gn__graph_to_graphdef_rest(const gn_graph *g, gn__arena *a, Tensorflow__GraphDef **out, gn__err *err)
{
    return to_graphdef(g, a, false, out, err);
}

static gn_status to_graphdef(const gn_graph *g, gn__arena *a, bool with_nodes, Tensorflow__GraphDef **out,
                             gn__err *err)
{
    Tensorflow__GraphDef *gd = gn__arena_alloc(a, sizeof *gd, 8);
    if (!gd) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    tensorflow__graph_def__init(gd);
    if (g->extra) {
        gd->base.n_unknown_fields = g->extra->base.n_unknown_fields;
        gd->base.unknown_fields = g->extra->base.unknown_fields;
        gd->debug_info = g->extra->debug_info;
    }
    gd->versions = (Tensorflow__VersionDef *)g->versions;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    gd->version = g->deprecated_version;
#pragma GCC diagnostic pop
    gd->node = with_nodes ? gn__arena_alloc(a, (g->n_live ? g->n_live : 1) * sizeof *gd->node, 8) : NULL;
    if (with_nodes && !gd->node) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < g->n_nodes && with_nodes; i++) {
        if (g->nodes[i].flags & GN__NODE_DEAD) continue;
        if (gn__node_to_def(g, i, a, false, &gd->node[gd->n_node++]) != GN_OK)
            return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    if (g->n_fns || g->lib_extra) {
        Tensorflow__FunctionDefLibrary *lib = gn__arena_alloc(a, sizeof *lib, 8);
        if (!lib) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        if (g->lib_extra) *lib = *g->lib_extra;
        else tensorflow__function_def_library__init(lib);
        lib->n_function = g->n_fns;
        lib->function = gn__arena_alloc(a, (g->n_fns ? g->n_fns : 1) * sizeof *lib->function, 8);
        if (!lib->function) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t f = 0; f < g->n_fns; f++) GN_TRY(function_to_def(g, &g->fns[f], a, &lib->function[f], err));
        gd->library = lib;
    }
    *out = gd;
    return GN_OK;
}
