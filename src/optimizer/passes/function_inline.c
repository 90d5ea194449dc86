/* Function-call inlining and library pruning (src/optimizer/inline.h has the
 * rules). Nothing here recurses over graph depth or call nesting: nested calls
 * are inlined by the same forward sweep over the node array (inlined nodes are
 * appended, so the sweep reaches them), and recursion is found by a
 * reachability search over the library's call graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/savedmodel.h"
#include "optimizer/inline.h"
#include "opdef/registry.h"

#define NAME_MAX_LEN 4096

/* dst = a + b + c (c may be NULL); false when it does not fit. */
static bool cat3(char *dst, size_t n, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
    if (la + lb + lc + 1 > n) {
        if (n) dst[0] = 0;
        return false;
    }
    memcpy(dst, a, la);
    memcpy(dst + la, b, lb);
    if (lc) memcpy(dst + la + lb, c, lc);
    dst[la + lb + lc] = 0;
    return true;
}

static bool is_partitioned_call(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    return strcmp(op, "PartitionedCall") == 0 || strcmp(op, "StatefulPartitionedCall") == 0;
}

gn__function *gn__inline_callee(const gn_graph *g, gn_id id)
{
    const gn_graph *top = g->lib;
    if (!top || !top->n_fns) return NULL;
    const gn__node *n = &g->nodes[id];
    if (n->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return NULL;
    if (is_partitioned_call(g, id)) {
        const Tensorflow__AttrValue *f = gn__node_attr(g, id, "f");
        if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !f->func || !f->func->name) return NULL;
        return gn__graph_find_function(g, f->func->name);
    }
    if (n->opdef >= 0) return NULL;
    return gn__graph_find_function(g, gn__str(g, n->op));
}

static const Tensorflow__AttrValue *fn_attr(const gn__function *f, const char *key)
{
    if (!f->def) return NULL;
    for (size_t i = 0; i < f->def->n_attr; i++)
        if (f->def->attr[i]->key && strcmp(f->def->attr[i]->key, key) == 0) return f->def->attr[i]->value;
    return NULL;
}

static bool attr_true(const Tensorflow__AttrValue *v)
{
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && v->b;
}

/* Functions fn calls directly (call ops and calls by op name in its body). */
static void callees(const gn_graph *top, const gn__function *fn, int32_t *out, uint32_t *n_out)
{
    const gn_graph *b = fn->body;
    *n_out = 0;
    if (!b) return;
    for (gn_id i = 0; i < b->n_nodes; i++) {
        gn__function *c = gn__inline_callee(b, i);
        if (c) out[(*n_out)++] = (int32_t)(c - top->fns);
    }
}

/* Does fn reach itself through direct calls? Breadth-first search over the
 * library's call graph (heap worklists, no recursion). */
static bool is_recursive(const gn_graph *top, const gn__function *fn)
{
    uint32_t nf = top->n_fns;
    uint32_t self = (uint32_t)(fn - top->fns);
    uint8_t *seen = calloc(nf, 1);
    int32_t *queue = malloc((size_t)nf * sizeof *queue);
    uint32_t cap = 64, qh = 0, qt = 0;
    int32_t *buf = malloc(cap * sizeof *buf);
    bool rec = false;
    if (!seen || !queue || !buf) goto out;
    queue[qt++] = (int32_t)self;
    while (qh < qt && !rec) {
        const gn__function *f = &top->fns[queue[qh++]];
        const gn_graph *b = f->body;
        if (b && b->n_nodes > cap) {
            int32_t *nb = realloc(buf, (size_t)b->n_nodes * sizeof *nb);
            if (!nb) break;
            buf = nb;
            cap = b->n_nodes;
        }
        uint32_t nc;
        callees(top, f, buf, &nc);
        for (uint32_t k = 0; k < nc; k++) {
            if ((uint32_t)buf[k] == self) {
                rec = true;
                break;
            }
            if (!seen[buf[k]]) {
                seen[buf[k]] = 1;
                queue[qt++] = buf[k];
            }
        }
    }
out:
    free(seen);
    free(queue);
    free(buf);
    return rec;
}

/* The value bound to placeholder `name` at this call. */
static const Tensorflow__AttrValue *bound_attr(const gn_graph *g, gn_id call, const char *name)
{
    if (is_partitioned_call(g, call)) {
        const Tensorflow__AttrValue *f = gn__node_attr(g, call, "f");
        if (!f || !f->func) return NULL;
        for (size_t i = 0; i < f->func->n_attr; i++)
            if (f->func->attr[i]->key && strcmp(f->func->attr[i]->key, name) == 0) return f->func->attr[i]->value;
        return NULL;
    }
    return gn__node_attr(g, call, name);
}

/* The dtype of an argument: the _Arg / _Retval's T, else its type_attr
 * bound at the call. */
static const Tensorflow__AttrValue *arg_type(const gn_graph *g, gn_id call, const gn_graph *b, gn_id node,
                                             const Tensorflow__OpDef__ArgDef *a)
{
    const Tensorflow__AttrValue *t = gn__node_attr(b, node, "T");
    if (t) return t;
    if (a->type_attr && a->type_attr[0]) return bound_attr(g, call, a->type_attr);
    return NULL;
}

static bool name_taken(const gn_graph *g, const char *call, const char *suffix)
{
    char nm[NAME_MAX_LEN];
    if (!cat3(nm, sizeof nm, call, "/", suffix)) return true;
    return gn__graph_find(g, nm) != GN_NONE;
}

enum { IGNORE_NOINLINE = 1, IGNORE_XLA = 2 };

/* rec: per library function, 0 not known yet, 1 not recursive, 2 recursive
 * (NULL: no cache); ignore: IGNORE_* */
static bool possible(const gn_graph *g, gn_id call, int ignore, uint8_t *rec, char *why, size_t n)
{
    gn__function *fn = gn__inline_callee(g, call);
    if (!fn) {
        snprintf(why, n, "not a call of a library function");
        return false;
    }
    const char *fname = gn__str(g->lib, fn->name);
    const gn_graph *b = fn->body;
    const Tensorflow__OpDef *sig = fn->def ? fn->def->signature : NULL;
    if (!b || !sig) {
        snprintf(why, n, "function '%s' has no body", fname);
        return false;
    }
    if (!(ignore & IGNORE_NOINLINE) && attr_true(fn_attr(fn, "_noinline"))) {
        snprintf(why, n, "function '%s' is marked _noinline", fname);
        return false;
    }
    if (!(ignore & IGNORE_XLA) &&
        (attr_true(fn_attr(fn, "_XlaMustCompile")) || attr_true(gn__node_attr(g, call, "_XlaMustCompile")))) {
        snprintf(why, n, "marked for XLA compilation (_XlaMustCompile)");
        return false;
    }
    const gn__node *cn = &g->nodes[call];
    if (cn->n_in != sig->n_input_arg) {
        snprintf(why, n, "function '%s' has list arguments (%u inputs for %zu arguments)", fname, cn->n_in,
                 sig->n_input_arg);
        return false;
    }
    int32_t nout = gn__node_num_outputs(g, call);
    if (nout >= 0 && (size_t)nout != sig->n_output_arg) {
        snprintf(why, n, "function '%s' has list results (%d outputs for %zu results)", fname, nout, sig->n_output_arg);
        return false;
    }
    for (size_t k = 0; k < sig->n_input_arg; k++) {
        gn_id a = gn__graph_find(b, sig->input_arg[k]->name ? sig->input_arg[k]->name : "");
        if (a == GN_NONE) {
            snprintf(why, n, "function '%s': no _Arg node for input %zu", fname, k);
            return false;
        }
        if (!arg_type(g, call, b, a, sig->input_arg[k])) {
            snprintf(why, n, "function '%s': the type of input %zu is not known at the call", fname, k);
            return false;
        }
    }
    for (size_t k = 0; k < sig->n_output_arg; k++) {
        char rn[NAME_MAX_LEN];
        cat3(rn, sizeof rn, "_retval:", sig->output_arg[k]->name ? sig->output_arg[k]->name : "", NULL);
        gn_id r = gn__graph_find(b, rn);
        if (r == GN_NONE || b->nodes[r].n_in != 1) {
            snprintf(why, n, "function '%s': no _Retval node for output %zu", fname, k);
            return false;
        }
        if (!arg_type(g, call, b, r, sig->output_arg[k])) {
            snprintf(why, n, "function '%s': the type of output %zu is not known at the call", fname, k);
            return false;
        }
    }
    const char *cname = gn__node_name(g, call);
    if (strlen(cname) + 64 >= NAME_MAX_LEN / 2) {
        snprintf(why, n, "the call's name is too long");
        return false;
    }
    for (gn_id i = 0; i < b->n_nodes; i++) {
        const gn__node *bn = &b->nodes[i];
        if (bn->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        for (uint32_t a = 0; a < bn->n_attr; a++) {
            const Tensorflow__AttrValue *v = bn->attr[a].value;
            if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER &&
                !bound_attr(g, call, v->placeholder ? v->placeholder : "")) {
                snprintf(why, n, "function '%s': attr placeholder '$%s' of '%s' is not bound by the call", fname,
                         v->placeholder ? v->placeholder : "", gn__str(b, bn->name));
                return false;
            }
        }
        if (name_taken(g, cname, gn__str(b, bn->name))) {
            snprintf(why, n, "node name '%s/%s' is already taken", cname, gn__str(b, bn->name));
            return false;
        }
    }
    if (name_taken(g, cname, "input_control_node") || name_taken(g, cname, "output_control_node")) {
        snprintf(why, n, "node name '%s/input_control_node' or '%s/output_control_node' is already taken", cname,
                 cname);
        return false;
    }
    for (size_t k = 0; k < sig->n_input_arg || k < sig->n_output_arg; k++) {
        char sfx[64];
        snprintf(sfx, sizeof sfx, "input/_%zu", k);
        bool t = k < sig->n_input_arg && name_taken(g, cname, sfx);
        snprintf(sfx, sizeof sfx, "output/_%zu", k);
        t = t || (k < sig->n_output_arg && name_taken(g, cname, sfx));
        if (t) {
            snprintf(why, n, "an input/output Identity name under '%s/' is already taken", cname);
            return false;
        }
    }
    uint32_t fk = (uint32_t)(fn - g->lib->fns);
    if (!rec || !rec[fk]) {
        uint8_t r = is_recursive(g->lib, fn) ? 2 : 1;
        if (rec) rec[fk] = r;
        if (r == 2) {
            snprintf(why, n, "function '%s' is recursive", fname);
            return false;
        }
    } else if (rec[fk] == 2) {
        snprintf(why, n, "function '%s' is recursive", fname);
        return false;
    }
    return true;
}

bool gn__inline_possible(const gn_graph *g, gn_id call, bool ignore_noinline, char *why, size_t n)
{
    return possible(g, call, ignore_noinline ? IGNORE_NOINLINE : 0, NULL, why, n);
}

bool gn__inline_possible_cached(const gn_graph *g, gn_id call, bool ignore_noinline, uint8_t *rec, char *why, size_t n)
{
    return possible(g, call, ignore_noinline ? IGNORE_NOINLINE : 0, rec, why, n);
}

/* ---- building nodes ---- */
static gn_status add_node(gn_graph *g, const char *name, const char *op, uint32_t device, gn_id *out, gn__err *err)
{
    gn_status s = gn__node_add(g, name, op, out);
    if (s != GN_OK) return gn__fail(err, s, "%s", g->err.msg);
    g->nodes[*out].device = device;
    return GN_OK;
}

static gn_status set_type_attr(gn_graph *g, gn_id id, const char *key, const Tensorflow__AttrValue *like, gn__err *err)
{
    if (!like) return GN_OK;
    gn_status s = gn__node_set_attr(g, id, key, like);
    return s == GN_OK ? s : gn__fail(err, s, "%s", g->err.msg);
}

/* "<prefix>name" as a string attr value (frame names, colocation groups). */
static ProtobufCBinaryData prefixed(gn_graph *g, const char *prefix, const uint8_t *s, size_t n)
{
    ProtobufCBinaryData r = {0, NULL};
    size_t pl = strlen(prefix);
    uint8_t *p = gn__graph_value_alloc(g, pl + n + 1);
    if (!p) return r;
    memcpy(p, prefix, pl);
    if (n) memcpy(p + pl, s, n);
    p[pl + n] = 0;
    r.data = p;
    r.len = pl + n;
    return r;
}

/* The value to attach for attr `key` of a body node copied under call; *drop
 * set when the node gets no such attr (a `_class` none of whose groups is left).
 * A `_class` group naming an argument becomes the argument's input Identity, one
 * naming a body node gets the prefix, and one naming neither (the FuncGraph's
 * name of a captured input, "embedding_lookup/15" where the argument is
 * "embedding_lookup_15") is dropped, as TensorFlow's inliner drops it: kept, it
 * would name no node of the graph, which TensorFlow's importer refuses
 * ("expects to be colocated with unknown node"). */
static const Tensorflow__AttrValue *map_attr(gn_graph *g, gn_id call, const gn_graph *b, const char *key,
                                             const Tensorflow__AttrValue *v, const char *prefix, const char *const *argmap,
                                             const Tensorflow__OpDef *sig, bool *drop)
{
    *drop = false;
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER)
        return bound_attr(g, call, v->placeholder ? v->placeholder : "");
    if (strcmp(key, "frame_name") == 0 && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S) {
        Tensorflow__AttrValue *nv = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_S);
        if (!nv) return NULL;
        nv->s = prefixed(g, prefix, v->s.data, v->s.len);
        return nv->s.data ? nv : NULL;
    }
    if (strcmp(key, "_class") == 0 && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list &&
        v->list->n_s) {
        Tensorflow__AttrValue *nv = gn__attr_new_list(g);
        ProtobufCBinaryData *ss = gn__graph_value_alloc(g, v->list->n_s * sizeof *ss);
        if (!nv || !ss) return NULL;
        nv->list->s = ss;
        size_t kept = 0;
        for (size_t i = 0; i < v->list->n_s; i++) {
            ProtobufCBinaryData in = v->list->s[i];
            ProtobufCBinaryData *o = &ss[kept];
            *o = in;
            if (in.len <= 5 || memcmp(in.data, "loc:@", 5) != 0) {
                kept++;
                continue;
            }
            const char *grp = (const char *)in.data + 5;
            size_t gl = in.len - 5;
            const char *to = NULL;
            for (size_t k = 0; sig && k < sig->n_input_arg && !to; k++)
                if (sig->input_arg[k]->name && strlen(sig->input_arg[k]->name) == gl &&
                    memcmp(sig->input_arg[k]->name, grp, gl) == 0)
                    to = argmap[k];
            char tmp[NAME_MAX_LEN];
            if (to) {
                cat3(tmp, sizeof tmp, "loc:@", to, NULL);
                *o = prefixed(g, tmp, NULL, 0);
            } else if (gn__graph_find_n(b, grp, gl) != GN_NONE) {
                cat3(tmp, sizeof tmp, "loc:@", prefix, NULL);
                *o = prefixed(g, tmp, (const uint8_t *)grp, gl);
            } else {
                continue;   /* names no node: dropped */
            }
            if (!o->data) return NULL;
            kept++;
        }
        nv->list->n_s = kept;
        *drop = kept == 0;
        return nv;
    }
    return v;
}

static gn_status copy_outargs(gn_graph *g, gn_id id, const gn_graph *b, const gn__outarg_map *m, gn__err *err)
{
    gn__outarg_map *nm = gn__arena_alloc(&g->arena, sizeof *nm, 8);
    uint32_t *names = gn__arena_alloc(&g->arena, (m->n ? m->n : 1) * sizeof *names, 4);
    uint32_t *base = gn__arena_alloc(&g->arena, (m->n ? m->n : 1) * sizeof *base, 4);
    if (!nm || !names || !base) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < m->n; i++) {
        names[i] = gn__intern(g, gn__str(b, m->name[i]), gn__strlen(b, m->name[i]));
        if (names[i] == UINT32_MAX) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        base[i] = m->base[i];
    }
    nm->n = m->n;
    nm->name = names;
    nm->base = base;
    g->nodes[id].outargs = nm;
    return GN_OK;
}

/* The function record whose body is g (NULL at the top level). */
static gn__function *owner_of(const gn_graph *g)
{
    if (g->kind != GN__GRAPH_FUNCTION || !g->lib) return NULL;
    const gn_graph *top = g->lib;
    for (uint32_t f = 0; f < top->n_fns; f++)
        if (top->fns[f].body == g) return &top->fns[f];
    return NULL;
}

bool gn__is_control_ret(const gn_graph *g, gn_id id)
{
    const gn__function *fn = owner_of(g);
    for (uint32_t k = 0; fn && k < fn->n_control_ret; k++)
        if (fn->control_ret_node[k] == id) return true;
    return false;
}

void gn__retarget_control_ret(gn_graph *g, gn_id from, gn_id to)
{
    gn__function *fn = owner_of(g);
    for (uint32_t k = 0; fn && k < fn->n_control_ret; k++)
        if (fn->control_ret_node[k] == from) fn->control_ret_node[k] = to;
}

#define TRY_G(expr)                                                                                                  \
    do {                                                                                                             \
        gn_status s_ = (expr);                                                                                       \
        if (s_ != GN_OK) {                                                                                           \
            st = gn__fail(err, s_, "inlining '%s': %s", cname, g->err.msg);                                          \
            goto out;                                                                                                \
        }                                                                                                            \
    } while (0)

gn_status gn__inline_call_ex(gn_graph *g, gn_id call, bool keep_caller, gn__err *err)
{
    gn__function *fn = gn__inline_callee(g, call);
    if (!fn || !fn->body || !fn->def || !fn->def->signature)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "'%s' is not a call of a library function", gn__node_name(g, call));
    const gn_graph *b = fn->body;
    const Tensorflow__OpDef *sig = fn->def->signature;
    const bool multi_device = is_partitioned_call(g, call);
    const char *cname = gn__node_name(g, call); /* arena string: stable */
    const uint32_t cname_id = g->nodes[call].name;
    const uint32_t dev = g->nodes[call].device;
    const uint32_t orig = g->nodes[call].orig_index;
    const uint32_t cflags = g->nodes[call].flags & GN__NODE_PRESERVE;
    const size_t nin = sig->n_input_arg, nout = sig->n_output_arg;
    gn_status st = GN_OK;
    const bool is_cret = gn__is_control_ret(g, call);
    if (is_cret) keep_caller = true; /* the body's control return names it */
    char prefix[NAME_MAX_LEN / 2];
    if (!cat3(prefix, sizeof prefix, cname, "/", NULL))
        return gn__fail(err, GN_ERR_UNSUPPORTED, "cannot inline '%s': name too long", cname);

    gn__edge *inputs = malloc((nin ? nin : 1) * sizeof *inputs);
    gn_id *ctrl_in = malloc((g->nodes[call].n_ctrl ? g->nodes[call].n_ctrl : 1) * sizeof *ctrl_in);
    gn_id *map = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof *map);
    gn_id *in_id = malloc((nin ? nin : 1) * sizeof *in_id);
    gn_id *out_id = malloc((nout ? nout : 1) * sizeof *out_id);
    const char **argname = malloc((nin ? nin : 1) * sizeof *argname);
    if (!inputs || !ctrl_in || !map || !in_id || !out_id || !argname) {
        st = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    uint32_t n_ctrl_in = g->nodes[call].n_ctrl;
    if (nin) memcpy(inputs, g->nodes[call].in, nin * sizeof *inputs);
    if (n_ctrl_in) memcpy(ctrl_in, g->nodes[call].ctrl, n_ctrl_in * sizeof *ctrl_in);
    for (gn_id i = 0; i < b->n_nodes; i++) map[i] = GN_NONE;

    /* body blobs: attr values and tensors are shared, not copied */
    for (uint32_t k = 0; k < b->n_blobs; k++) TRY_G(gn__graph_adopt_blob(g, b->blobs[k]));

    char nm[NAME_MAX_LEN];
    gn_id icn = GN_NONE;
    if (n_ctrl_in) {
        cat3(nm, sizeof nm, prefix, "input_control_node", NULL);
        TRY_G(add_node(g, nm, "NoOp", dev, &icn, err));
        g->nodes[icn].orig_index = orig;
        for (uint32_t k = 0; k < n_ctrl_in; k++) TRY_G(gn__node_add_control(g, icn, ctrl_in[k]));
    }
    for (size_t k = 0; k < nin; k++) {
        gn_id arg = gn__graph_find(b, sig->input_arg[k]->name);
        char sfx[32];
        snprintf(sfx, sizeof sfx, "input/_%zu", k);
        cat3(nm, sizeof nm, prefix, sfx, NULL);
        TRY_G(add_node(g, nm, "Identity", dev, &in_id[k], err));
        g->nodes[in_id[k]].orig_index = orig;
        argname[k] = gn__node_name(g, in_id[k]);
        st = set_type_attr(g, in_id[k], "T", arg_type(g, call, b, arg, sig->input_arg[k]), err);
        if (st != GN_OK) goto out;
        TRY_G(gn__node_add_input(g, in_id[k], inputs[k]));
        if (icn != GN_NONE) TRY_G(gn__node_add_control(g, in_id[k], icn));
        map[arg] = in_id[k];
    }
    /* body nodes, then their edges */
    for (gn_id i = 0; i < b->n_nodes; i++) {
        const gn__node *bn = &b->nodes[i];
        if (bn->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        cat3(nm, sizeof nm, prefix, gn__str(b, bn->name), NULL);
        gn_id id;
        TRY_G(add_node(g, nm, gn__str(b, bn->op), dev, &id, err));
        map[i] = id;
        if (bn->device) {
            g->nodes[id].device = gn__intern(g, gn__str(b, bn->device), gn__strlen(b, bn->device));
            if (g->nodes[id].device == UINT32_MAX) {
                st = gn__fail(err, GN_ERR_NOMEM, "out of memory");
                goto out;
            }
        }
        g->nodes[id].orig_index = orig;
        g->nodes[id].extra = bn->extra;
        for (uint32_t a = 0; a < bn->n_attr; a++) {
            const char *key = gn__str(b, bn->attr[a].key);
            bool drop;
            const Tensorflow__AttrValue *v = map_attr(g, call, b, key, bn->attr[a].value, prefix, argname, sig, &drop);
            if (!v) {
                st = gn__fail(err, GN_ERR_NOMEM, "inlining '%s': attr '%s' of '%s' cannot be bound", cname, key,
                              gn__str(b, bn->name));
                goto out;
            }
            if (drop) continue;
            TRY_G(gn__node_set_attr(g, id, key, v));
        }
        if (bn->outargs && g->kind == GN__GRAPH_FUNCTION) {
            st = copy_outargs(g, id, b, bn->outargs, err);
            if (st != GN_OK) goto out;
        }
    }
    for (gn_id i = 0; i < b->n_nodes; i++) {
        const gn__node *bn = &b->nodes[i];
        if (bn->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        gn_id id = map[i];
        for (uint32_t k = 0; k < bn->n_in; k++) {
            gn__edge e = bn->in[k];
            if (b->nodes[e.node].flags & GN__NODE_FN_ARG) e.index = 0;
            e.node = map[e.node];
            TRY_G(gn__node_add_input(g, id, e));
        }
        for (uint32_t k = 0; k < bn->n_ctrl; k++) TRY_G(gn__node_add_control(g, id, map[bn->ctrl[k]]));
        /* forward the execution frame: no inputs at all, or a nested call
         * without control inputs */
        if (icn != GN_NONE &&
            ((bn->n_in == 0 && bn->n_ctrl == 0) || (gn__inline_callee(g, id) && bn->n_ctrl == 0)))
            TRY_G(gn__node_add_control(g, id, icn));
    }
    /* outputs */
    for (size_t k = 0; k < nout; k++) {
        char rn[NAME_MAX_LEN];
        cat3(rn, sizeof rn, "_retval:", sig->output_arg[k]->name, NULL);
        gn_id r = gn__graph_find(b, rn);
        const gn__node *rnode = &b->nodes[r];
        gn__edge e = rnode->in[0];
        if (b->nodes[e.node].flags & GN__NODE_FN_ARG) e.index = 0;
        e.node = map[e.node];
        char sfx[32];
        snprintf(sfx, sizeof sfx, "output/_%zu", k);
        cat3(nm, sizeof nm, prefix, sfx, NULL);
        TRY_G(add_node(g, nm, "Identity", dev, &out_id[k], err));
        g->nodes[out_id[k]].orig_index = orig;
        st = set_type_attr(g, out_id[k], "T", arg_type(g, call, b, r, sig->output_arg[k]), err);
        if (st != GN_OK) goto out;
        TRY_G(gn__node_add_input(g, out_id[k], e));
        for (uint32_t c = 0; c < rnode->n_ctrl; c++) TRY_G(gn__node_add_control(g, out_id[k], map[rnode->ctrl[c]]));
        TRY_G(gn__graph_forward_output(g, (gn__edge){call, (uint32_t)k}, (gn__edge){out_id[k], 0}));
    }
    gn_id ocn = GN_NONE;
    if (g->nodes[call].n_cuse || keep_caller) {
        cat3(nm, sizeof nm, prefix, "output_control_node", NULL);
        TRY_G(add_node(g, nm, "NoOp", dev, &ocn, err));
        g->nodes[ocn].orig_index = orig;
        for (uint32_t k = 0; k < fn->n_control_ret; k++)
            if (fn->control_ret_node[k] != GN_NONE && map[fn->control_ret_node[k]] != GN_NONE)
                TRY_G(gn__node_add_control(g, ocn, map[fn->control_ret_node[k]]));
        if (!multi_device)
            for (size_t k = 0; k < nout; k++) TRY_G(gn__node_add_control(g, ocn, out_id[k]));
        if (g->nodes[ocn].n_ctrl == 0 && icn != GN_NONE) TRY_G(gn__node_add_control(g, ocn, icn));
        TRY_G(gn__graph_forward_control(g, call, ocn));
    }
    TRY_G(gn__node_remove(g, call));
    if (keep_caller) {
        gn_id k_id;
        if (nout) {
            TRY_G(gn__node_add_interned(g, cname_id, gn__intern_cstr(g, "IdentityN"), &k_id));
            Tensorflow__AttrValue *tv = gn__attr_new_list(g);
            Tensorflow__DataType *ty = gn__graph_value_alloc(g, nout * sizeof *ty);
            if (!tv || !ty) {
                st = gn__fail(err, GN_ERR_NOMEM, "out of memory");
                goto out;
            }
            for (size_t k = 0; k < nout; k++) {
                int t = 0;
                gn__attr_get_type(g, out_id[k], "T", &t);
                ty[k] = (Tensorflow__DataType)t;
                TRY_G(gn__node_add_input(g, k_id, (gn__edge){out_id[k], 0}));
            }
            tv->list->n_type = nout;
            tv->list->type = ty;
            TRY_G(gn__node_set_attr(g, k_id, "T", tv));
        } else {
            TRY_G(gn__node_add_interned(g, cname_id, gn__intern_cstr(g, "NoOp"), &k_id));
        }
        g->nodes[k_id].device = dev;
        g->nodes[k_id].orig_index = orig;
        g->nodes[k_id].flags |= cflags;
        TRY_G(gn__node_add_control(g, k_id, ocn));
        if (is_cret) gn__retarget_control_ret(g, call, k_id);
    }
out:
    free(inputs);
    free(ctrl_in);
    free(map);
    free(in_id);
    free(out_id);
    free(argname);
    return st;
}

gn_status gn__inline_call(gn_graph *g, gn_id call, gn__err *err)
{
    char why[512];
    if (!gn__inline_possible(g, call, false, why, sizeof why))
        return gn__fail(err, GN_ERR_UNSUPPORTED, "cannot inline '%s': %s", gn__node_name(g, call), why);
    return gn__inline_call_ex(g, call, true, err);
}

gn_status gn__inline_calls(gn_graph *g, const gn__inline_opts *o, uint32_t *n_inlined, gn__err *err)
{
    gn__inline_opts def = {0};
    if (!o) o = &def;
    uint32_t max_depth = o->max_depth ? o->max_depth : 64;
    uint32_t count = 0, cap = 0;
    uint8_t *depth = NULL;
    gn_status s = GN_OK;
    char why[512];
    uint8_t *rec = calloc(g->lib->n_fns ? g->lib->n_fns : 1, 1);
    if (!rec) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (n_inlined) *n_inlined = 0;
    for (gn_id i = 0; i < g->n_nodes && s == GN_OK; i++) {
        if (g->n_nodes > cap) {
            uint32_t ncap = g->n_nodes * 2;
            uint8_t *nd = realloc(depth, ncap);
            if (!nd) {
                s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            memset(nd + cap, 0, ncap - cap);
            depth = nd;
            cap = ncap;
        }
        if (!gn__inline_callee(g, i)) continue;
        if (depth[i] >= max_depth) continue;
        if (!possible(g, i, (o->ignore_noinline ? IGNORE_NOINLINE : 0) | (o->ignore_xla ? IGNORE_XLA : 0), rec, why,
                      sizeof why))
            continue;
        uint32_t first = g->n_nodes;
        uint8_t d = depth[i];
        bool keep = !o->drop_caller || (g->nodes[i].flags & GN__NODE_PRESERVE);
        s = gn__inline_call_ex(g, i, keep, err);
        if (s != GN_OK) break;
        count++;
        if (g->n_nodes > cap) {
            uint32_t ncap = g->n_nodes * 2;
            uint8_t *nd = realloc(depth, ncap);
            if (!nd) {
                s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            memset(nd + cap, 0, ncap - cap);
            depth = nd;
            cap = ncap;
        }
        for (gn_id k = first; k < g->n_nodes; k++) depth[k] = (uint8_t)(d + 1 < 255 ? d + 1 : 255);
    }
    free(depth);
    free(rec);
    if (n_inlined) *n_inlined = count;
    if (s == GN_OK && o->drop_unused_fns && g->kind == GN__GRAPH_TOP) s = gn__prune_library(g, true, NULL, err);
    return s;
}

/* ---- library pruning ---- */
static void mark_fn(const gn_graph *top, const char *name, uint8_t *live, int32_t *stack, uint32_t *sp)
{
    if (!name) return;
    gn__function *f = gn__graph_find_function(top, name);
    if (!f) return;
    int32_t k = (int32_t)(f - top->fns);
    if (live[k]) return;
    live[k] = 1;
    stack[(*sp)++] = k;
}

static void mark_attr_fns(const gn_graph *top, const Tensorflow__AttrValue *v, uint8_t *live, int32_t *stack,
                          uint32_t *sp)
{
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && v->func) {
        mark_fn(top, v->func->name, live, stack, sp);
        for (size_t i = 0; i < v->func->n_attr; i++)
            if (v->func->attr[i]->value) mark_attr_fns(top, v->func->attr[i]->value, live, stack, sp);
    } else if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list) {
        for (size_t i = 0; i < v->list->n_func; i++) {
            mark_fn(top, v->list->func[i]->name, live, stack, sp);
            for (size_t j = 0; j < v->list->func[i]->n_attr; j++)
                if (v->list->func[i]->attr[j]->value)
                    mark_attr_fns(top, v->list->func[i]->attr[j]->value, live, stack, sp);
        }
    }
}

static void mark_graph_fns(const gn_graph *top, const gn_graph *g, uint8_t *live, int32_t *stack, uint32_t *sp)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->opdef < 0) mark_fn(top, gn__str(g, n->op), live, stack, sp);
        for (uint32_t a = 0; a < n->n_attr; a++) mark_attr_fns(top, n->attr[a].value, live, stack, sp);
    }
}

gn_status gn__prune_library(gn_graph *g, bool keep_saved, uint32_t *n_removed, gn__err *err)
{
    if (n_removed) *n_removed = 0;
    if (g->kind != GN__GRAPH_TOP || !g->n_fns) return GN_OK;
    uint32_t nf = g->n_fns;
    uint8_t *live = calloc(nf, 1);
    int32_t *stack = malloc((size_t)nf * sizeof *stack);
    if (!live || !stack) {
        free(live);
        free(stack);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    uint32_t sp = 0;
    mark_graph_fns(g, g, live, stack, &sp);
    if (g->lib_extra)
        for (size_t i = 0; i < g->lib_extra->n_gradient; i++) {
            mark_fn(g, g->lib_extra->gradient[i]->function_name, live, stack, &sp);
            mark_fn(g, g->lib_extra->gradient[i]->gradient_func, live, stack, &sp);
        }
    if (g->lib_extra)
        for (size_t i = 0; i < g->lib_extra->n_registered_gradients; i++)
            mark_fn(g, g->lib_extra->registered_gradients[i]->gradient_func, live, stack, &sp);
    const gn__savedmodel *sm = gn__graph_saved(g);
    if (keep_saved && sm && sm->mg && sm->mg->object_graph_def) {
        const Tensorflow__SavedObjectGraph *og = sm->mg->object_graph_def;
        for (size_t i = 0; i < og->n_concrete_functions; i++)
            mark_fn(g, og->concrete_functions[i]->key, live, stack, &sp);
    }
    while (sp) {
        const gn__function *f = &g->fns[stack[--sp]];
        if (f->body) mark_graph_fns(g, f->body, live, stack, &sp);
        if (f->def)
            for (size_t i = 0; i < f->def->n_attr; i++)
                if (f->def->attr[i]->value) mark_attr_fns(g, f->def->attr[i]->value, live, stack, &sp);
    }
    uint32_t w = 0, removed = 0;
    for (uint32_t k = 0; k < nf; k++) {
        if (!live[k]) {
            g->fn_of_name[g->fns[k].name] = -1;
            gn_graph_free(g->fns[k].body);
            removed++;
            continue;
        }
        if (w != k) g->fns[w] = g->fns[k];
        g->fn_of_name[g->fns[w].name] = (int32_t)w;
        w++;
    }
    g->n_fns = w;
    free(live);
    free(stack);
    if (n_removed) *n_removed = removed;
    return GN_OK;
}
