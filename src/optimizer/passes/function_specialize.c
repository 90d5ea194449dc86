/* function.specialize: calls that stay after function.inline (a `_noinline`
 * function, a recursive one, ...) are specialized as Grappler's
 * SpecializeFunction does (function_optimizer.cc), at the top level only (a
 * body cannot add functions):
 *  - a call "is worth specializing" when an input comes from a truly constant
 *    node (a Const neither preserved nor fed) or an output has no consumer;
 *  - skipped (reason reported) when the function has a custom gradient (a
 *    gradients entry names it), is marked `_nospecialize`, or the call is
 *    marked for XLA;
 *  - the copy is named "<f>_specialized_for_<call, '/' -> '_'>_at_tf_graph"
 *    ("tf_graph" being Grappler's id of the main item); in it each constant
 *    input's _Arg becomes a Const of the same name and value, and outputs
 *    nobody consumes are removed (not for a preserved call: "call:k" must keep
 *    its meaning); the remaining _Arg / _Retval are renumbered;
 *  - the call then calls the copy: `f` (PartitionedCall, with Tin / Tout cut
 *    to match) or its op; the constant inputs go, their control inputs move
 *    to the call, and consumers of "call:k" read the output's new index;
 *    `_gradient_op_type` is dropped from the call.
 * Each call gets its own copy (Grappler shares one between calls specialized
 * in an identical context; we do not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/inline.h"
#include "optimizer/passes/function_impl.h"

static bool attr_true(const Tensorflow__AttrValue *v)
{
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && v->b;
}

static const Tensorflow__AttrValue *fn_attr(const gn__function *f, const char *key)
{
    if (!f->def) return NULL;
    for (size_t i = 0; i < f->def->n_attr; i++)
        if (f->def->attr[i]->key && strcmp(f->def->attr[i]->key, key) == 0) return f->def->attr[i]->value;
    return NULL;
}

static bool has_custom_gradient(const gn_graph *g, const char *fname)
{
    if (!g->lib_extra) return false;
    for (size_t i = 0; i < g->lib_extra->n_gradient; i++)
        if (g->lib_extra->gradient[i]->function_name && strcmp(g->lib_extra->gradient[i]->function_name, fname) == 0)
            return true;
    return false;
}

static bool truly_const(const gn_graph *g, gn_id p)
{
    return strcmp(gn__node_op(g, p), "Const") == 0 && !(g->nodes[p].flags & GN__NODE_PRESERVE) &&
           gn__node_attr(g, p, "value") && gn__node_attr(g, p, "dtype");
}

/* A copy of list attr `key` of node id keeping the entries keep[] marks. */
static Tensorflow__AttrValue *cut_types(gn_graph *g, const Tensorflow__AttrValue *v, const uint8_t *keep, size_t n)
{
    Tensorflow__AttrValue *nv = gn__attr_new_list(g);
    Tensorflow__DataType *t = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *t);
    if (!nv || !t) return NULL;
    size_t w = 0;
    for (size_t i = 0; i < n && i < v->list->n_type; i++)
        if (keep[i]) t[w++] = v->list->type[i];
    nv->list->n_type = w;
    nv->list->type = t;
    return nv;
}

typedef struct spec {
    gn__pass_ctx *c;
    gn_graph *g;
    gn_id call;
    gn__function *fn;
    uint8_t *is_const;  /* per input */
    uint8_t *used;      /* per output */
    size_t nin, nout;
    char name[4096];
} spec;

#define FAILG(G) gn__fail(S->c->err, s, "specializing '%s': %s", gn__node_name(S->g, S->call), (G)->err.msg)

/* See function_impl.h. */
Tensorflow__FunctionDef *gn__fn_def_cut(gn_graph *g, const Tensorflow__FunctionDef *od, const char *name,
                                        const uint8_t *keep_in, size_t nin, const uint8_t *keep_out, size_t nout)
{
    const Tensorflow__OpDef *os = od->signature;
    Tensorflow__FunctionDef *fd = gn__graph_value_alloc(g, sizeof *fd);
    Tensorflow__OpDef *sig = gn__graph_value_alloc(g, sizeof *sig);
    Tensorflow__OpDef__ArgDef **ia = gn__graph_value_alloc(g, (nin ? nin : 1) * sizeof *ia);
    Tensorflow__OpDef__ArgDef **oa = gn__graph_value_alloc(g, (nout ? nout : 1) * sizeof *oa);
    size_t nname = strlen(name);
    char *nm = gn__graph_value_alloc(g, nname + 1);
    Tensorflow__FunctionDef__ArgAttrEntry **aa =
        gn__graph_value_alloc(g, (od->n_arg_attr ? od->n_arg_attr : 1) * sizeof *aa);
    Tensorflow__FunctionDef__ResourceArgUniqueIdEntry **ru =
        gn__graph_value_alloc(g, (od->n_resource_arg_unique_id ? od->n_resource_arg_unique_id : 1) * sizeof *ru);
    uint32_t *newi = malloc((nin ? nin : 1) * sizeof *newi);
    if (!fd || !sig || !ia || !oa || !nm || !aa || !ru || !newi) {
        free(newi);
        return NULL;
    }
    *fd = *od;
    *sig = *os;
    memcpy(nm, name, nname + 1);
    sig->name = nm;
    /* new index of each kept input */
    size_t w = 0;
    for (size_t i = 0; i < nin; i++) {
        newi[i] = keep_in[i] ? (uint32_t)w : UINT32_MAX;
        if (keep_in[i]) ia[w++] = os->input_arg[i];
    }
    sig->n_input_arg = w;
    sig->input_arg = ia;
    w = 0;
    for (size_t i = 0; i < nout; i++)
        if (keep_out[i]) oa[w++] = os->output_arg[i];
    sig->n_output_arg = w;
    sig->output_arg = oa;
    fd->signature = sig;
    /* arg_attr and resource_arg_unique_id are keyed by input index */
    size_t na = 0;
    for (size_t i = 0; i < od->n_arg_attr; i++) {
        uint32_t k = od->arg_attr[i]->key;
        if (k >= nin || newi[k] == UINT32_MAX) continue;
        Tensorflow__FunctionDef__ArgAttrEntry *e = gn__graph_value_alloc(g, sizeof *e);
        if (!e) {
            free(newi);
            return NULL;
        }
        *e = *od->arg_attr[i];
        e->key = newi[k];
        aa[na++] = e;
    }
    fd->n_arg_attr = na;
    fd->arg_attr = aa;
    na = 0;
    for (size_t i = 0; i < od->n_resource_arg_unique_id; i++) {
        uint32_t k = od->resource_arg_unique_id[i]->key;
        if (k >= nin || newi[k] == UINT32_MAX) continue;
        Tensorflow__FunctionDef__ResourceArgUniqueIdEntry *e = gn__graph_value_alloc(g, sizeof *e);
        if (!e) {
            free(newi);
            return NULL;
        }
        *e = *od->resource_arg_unique_id[i];
        e->key = newi[k];
        ru[na++] = e;
    }
    fd->n_resource_arg_unique_id = na;
    fd->resource_arg_unique_id = ru;
    free(newi);
    return fd;
}

/* See function_impl.h. */
gn_status gn__fn_body_cut(gn__pass_ctx *c, gn_graph *g, const gn__function *fn, const gn_id *consts,
                          const uint8_t *keep_out, const char *what, gn_graph **out)
{
    const gn_graph *ob = fn->body;
    const Tensorflow__OpDef *os = fn->def->signature;
    gn_graph *b = NULL;
    gn_status s = gn__graph_clone(ob, &b);
    if (s != GN_OK) return gn__fail(c->err, s, "%s: cannot copy the body", what);
    /* the constants' values live in g's blobs */
    for (uint32_t k = 0; k < g->n_blobs && s == GN_OK; k++) s = gn__graph_adopt_blob(b, g->blobs[k]);
    uint32_t w = 0;
    for (size_t i = 0; i < os->n_input_arg && s == GN_OK; i++) {
        gn_id a = gn__graph_find(b, os->input_arg[i]->name);
        if (consts[i] == GN_NONE) {
            s = gn__node_set_attr(b, a, "index", gn__attr_new_int(b, w++));
            continue;
        }
        gn_id p = consts[i];
        b->nodes[a].flags &= ~GN__NODE_FN_ARG;
        s = gn__node_set_op(b, a, "Const");
        if (s == GN_OK) s = gn__node_remove_attr(b, a, "index");
        if (s == GN_OK) s = gn__node_remove_attr(b, a, "T");
        if (s == GN_OK) s = gn__node_set_attr(b, a, "dtype", gn__node_attr(g, p, "dtype"));
        if (s == GN_OK) s = gn__node_set_attr(b, a, "value", gn__node_attr(g, p, "value"));
    }
    w = 0;
    for (size_t i = 0; i < os->n_output_arg && s == GN_OK; i++) {
        char rn[4096];
        snprintf(rn, sizeof rn, "_retval:%s", os->output_arg[i]->name);
        gn_id r = gn__graph_find(b, rn);
        if (keep_out[i]) s = gn__node_set_attr(b, r, "index", gn__attr_new_int(b, w++));
        else s = gn__node_remove(b, r);
    }
    if (s == GN_OK) s = gn__graph_compact(b);
    if (s != GN_OK) {
        s = gn__fail(c->err, s, "%s: %s", what, b->err.msg);
        gn_graph_free(b);
        return s;
    }
    *out = b;
    return GN_OK;
}

static gn_status specialize_one(spec *S)
{
    gn_graph *g = S->g;
    gn_id call = S->call;
    const char *fname = gn__str(g, S->fn->name);
    uint8_t *kin = malloc(S->nin ? S->nin : 1);
    gn_id *consts = malloc((S->nin ? S->nin : 1) * sizeof *consts);
    if (!kin || !consts) {
        free(kin);
        free(consts);
        return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < S->nin; i++) {
        kin[i] = !S->is_const[i];
        consts[i] = S->is_const[i] ? g->nodes[call].in[i].node : GN_NONE;
    }
    Tensorflow__FunctionDef *fd = gn__fn_def_cut(g, S->fn->def, S->name, kin, S->nin, S->used, S->nout);
    gn_graph *body = NULL;
    char what[1200];
    snprintf(what, sizeof what, "specializing '%s'", gn__node_name(g, call));
    gn_status s = fd ? gn__fn_body_cut(S->c, g, S->fn, consts, S->used, what, &body)
                     : gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
    free(kin);
    free(consts);
    GN_TRY(s);
    /* control returns, by name in the new body */
    const gn__function of = *S->fn;
    gn__function *nf = NULL;
    s = gn__graph_add_function(g, S->name, fd, body, &nf);
    if (s != GN_OK) {
        gn_graph_free(body);
        return FAILG(g);
    }
    if (of.n_control_ret) {
        nf->control_ret_name = gn__arena_alloc(&g->arena, of.n_control_ret * sizeof *nf->control_ret_name, 4);
        nf->control_ret_node = gn__arena_alloc(&g->arena, of.n_control_ret * sizeof *nf->control_ret_node, 4);
        if (!nf->control_ret_name || !nf->control_ret_node) return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
        nf->n_control_ret = of.n_control_ret;
        for (uint32_t k = 0; k < of.n_control_ret; k++) {
            nf->control_ret_name[k] = of.control_ret_name[k]; /* same string ids: the body is a clone */
            nf->control_ret_node[k] = of.control_ret_node[k] != GN_NONE
                                          ? gn__graph_find(body, gn__node_name(of.body, of.control_ret_node[k]))
                                          : GN_NONE;
        }
    }
    /* the call site */
    const bool indirect = strcmp(gn__node_op(g, call), "PartitionedCall") == 0 ||
                          strcmp(gn__node_op(g, call), "StatefulPartitionedCall") == 0;
    if (indirect) {
        const Tensorflow__AttrValue *f = gn__node_attr(g, call, "f");
        Tensorflow__AttrValue *nv = gn__graph_value_alloc(g, sizeof *nv);
        Tensorflow__NameAttrList *nl = gn__graph_value_alloc(g, sizeof *nl);
        if (!nv || !nl) return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
        *nv = *f;
        *nl = *f->func;
        nl->name = (char *)gn__str(g, nf->name);
        nv->func = nl;
        s = gn__node_set_attr(g, call, "f", nv);
        const Tensorflow__AttrValue *tin = gn__node_attr(g, call, "Tin"), *tout = gn__node_attr(g, call, "Tout");
        uint8_t *keep_in = malloc(S->nin ? S->nin : 1);
        if (!keep_in) return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < S->nin; i++) keep_in[i] = !S->is_const[i];
        if (s == GN_OK && tin && tin->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && tin->list)
            s = gn__node_set_attr(g, call, "Tin", cut_types(g, tin, keep_in, S->nin));
        if (s == GN_OK && tout && tout->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && tout->list)
            s = gn__node_set_attr(g, call, "Tout", cut_types(g, tout, S->used, S->nout));
        free(keep_in);
    } else {
        s = gn__node_set_op(g, call, gn__str(g, nf->name));
    }
    if (s == GN_OK && gn__node_attr(g, call, "_gradient_op_type")) s = gn__node_remove_attr(g, call, "_gradient_op_type");
    /* outputs: consumers read the new indices (before inputs change) */
    uint32_t *newo = malloc((S->nout ? S->nout : 1) * sizeof *newo);
    if (!newo) return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
    uint32_t w = 0;
    for (size_t i = 0; i < S->nout; i++) newo[i] = S->used[i] ? w++ : UINT32_MAX;
    uint32_t nu = g->nodes[call].n_use;
    gn__use *uses = malloc((nu ? nu : 1) * sizeof *uses);
    if (!uses) {
        free(newo);
        return gn__fail(S->c->err, GN_ERR_NOMEM, "out of memory");
    }
    if (nu) memcpy(uses, g->nodes[call].use, nu * sizeof *uses);
    for (uint32_t k = 0; k < nu && s == GN_OK; k++) {
        gn__edge e = g->nodes[uses[k].node].in[uses[k].slot];
        if (e.index < S->nout && newo[e.index] != e.index)
            s = gn__node_set_input(g, uses[k].node, uses[k].slot, (gn__edge){call, newo[e.index]});
    }
    free(uses);
    free(newo);
    /* inputs: the constants go, their control inputs move to the call */
    for (size_t i = S->nin; i-- > 0 && s == GN_OK;) {
        if (!S->is_const[i]) continue;
        gn_id p = g->nodes[call].in[i].node;
        s = gn__node_remove_input(g, call, (uint32_t)i);
        for (uint32_t k = 0; s == GN_OK && k < g->nodes[p].n_ctrl; k++) s = gn__node_add_control(g, call, g->nodes[p].ctrl[k]);
    }
    if (s != GN_OK) return FAILG(g);
    (void)fname;
    return GN_OK;
}

gn_status gn__fn_specialize(gn__pass_ctx *c, gn_graph *g)
{
    if (g->kind != GN__GRAPH_TOP) return GN_OK;
    gn_status s = GN_OK;
    spec *S = calloc(1, sizeof *S);
    if (!S) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    S->c = c;
    S->g = g;
    gn_id n0 = g->n_nodes;
    for (gn_id i = 0; i < n0 && s == GN_OK; i++) {
        gn__function *fn = gn__inline_callee(g, i);
        if (!fn || !fn->body || !fn->def || !fn->def->signature) continue;
        const Tensorflow__OpDef *sig = fn->def->signature;
        const gn__node *n = &g->nodes[i];
        size_t nin = sig->n_input_arg, nout = sig->n_output_arg;
        if (n->n_in != nin) continue; /* list arguments */
        int32_t no = gn__node_num_outputs(g, i);
        if (no < 0 || (size_t)no != nout) continue;
        bool any_const = false, any_unused = false;
        uint8_t *is_const = calloc(nin ? nin : 1, 1), *used = calloc(nout ? nout : 1, 1);
        if (!is_const || !used) {
            free(is_const);
            free(used);
            s = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        for (size_t k = 0; k < nin; k++) any_const |= (is_const[k] = truly_const(g, n->in[k].node)) != 0;
        for (uint32_t k = 0; k < n->n_use; k++) used[g->nodes[n->use[k].node].in[n->use[k].slot].index] = 1;
        if (n->flags & GN__NODE_PRESERVE) memset(used, 1, nout ? nout : 1);
        for (size_t k = 0; k < nout; k++) any_unused |= !used[k];
        const char *fname = gn__str(g, fn->name);
        const char *why = NULL;
        if (!any_const && !any_unused) why = NULL;
        else if (has_custom_gradient(g, fname)) why = "the function has a custom gradient";
        else if (attr_true(fn_attr(fn, "_nospecialize"))) why = "the function is marked _nospecialize";
        else if (attr_true(gn__node_attr(g, i, "_XlaMustCompile")) || attr_true(fn_attr(fn, "_XlaMustCompile")))
            why = "marked for XLA compilation";
        if (!any_const && !any_unused) {
            free(is_const);
            free(used);
            continue;
        }
        char nm[4096];
        int m = snprintf(nm, sizeof nm, "%s_specialized_for_%s_at_tf_graph", fname, gn__node_name(g, i));
        for (char *p = nm + strlen(fname); *p; p++)
            if (*p == '/') *p = '_';
        if (!why && (m < 0 || (size_t)m >= sizeof nm)) why = "the specialized name is too long";
        if (!why && gn__graph_find_function(g, nm)) why = "a function of the specialized name exists already";
        if (why) {
            gn__pass_refused(c, "function.specialize", g, i, "not specialized: %s", why);
            free(is_const);
            free(used);
            continue;
        }
        memcpy(S->name, nm, (size_t)m + 1);
        S->call = i;
        S->fn = fn;
        S->is_const = is_const;
        S->used = used;
        S->nin = nin;
        S->nout = nout;
        uint32_t nc = 0, nunused = 0;
        for (size_t k = 0; k < nin; k++) nc += is_const[k];
        for (size_t k = 0; k < nout; k++) nunused += !used[k];
        char fcopy[2048];
        snprintf(fcopy, sizeof fcopy, "%s", fname);
        s = specialize_one(S);
        if (s == GN_OK) {
            c->changed = true;
            gn__pass_rewrote(c, "function.specialize", g, i,
                             "calls '%s', a copy of '%s' with %u constant input%s pushed in and %u unused output%s "
                             "removed",
                             nm, fcopy, nc, nc == 1 ? "" : "s", nunused, nunused == 1 ? "" : "s");
        }
        free(is_const);
        free(used);
    }
    free(S);
    return s;
}
