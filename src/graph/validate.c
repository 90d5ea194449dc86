/* The validator: structure, arity, attrs against the registry, tensors.
 * After tensorflow/core/graph/validate.cc and framework/node_def_util.cc
 * (ValidateNodeDef). Messages name the node: "node 'x' (Op): ...". */
#include <stdio.h>
#include <stdlib.h>

#include "graph/ir.h"
#include "graph/tensor.h"
#include "opdef/registry.h"

static gn_status fail_node(gn_graph *g, const char *fn, gn_id id, gn_status code, const char *what)
{
    const char *name = gn__node_name(g, id);
    if (g->nodes[id].flags & GN__NODE_FN_RET) name += 8;
    if (fn) return gn__fail(&g->err, code, "function '%s': node '%s' (%s): %s", fn, name, gn__node_op(g, id), what);
    return gn__fail(&g->err, code, "node '%s' (%s): %s", name, gn__node_op(g, id), what);
}

static gn_status check_attr_value(const Tensorflow__AttrValue *v, gn__err *e)
{
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
        return v->tensor ? gn__tensor_check(v->tensor, e) : GN_OK;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: {
        int64_t n;
        return gn__shape_check(v->shape, true, &n, e);
    }
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
        if (!v->list) return GN_OK;
        for (size_t i = 0; i < v->list->n_tensor; i++) GN_TRY(gn__tensor_check(v->list->tensor[i], e));
        for (size_t i = 0; i < v->list->n_shape; i++) {
            int64_t n;
            GN_TRY(gn__shape_check(v->list->shape[i], true, &n, e));
        }
        return GN_OK;
    default: return GN_OK;
    }
}

/* Attr values are immutable and often shared between nodes (the binary
 * loader unpacks each distinct encoding once): checks already passed for a
 * value, or for a (definition, value) pair, are remembered in small
 * direct-mapped tables local to one validation. */
#define VCACHE 512
typedef struct vcache {
    const void *v[VCACHE];
    const void *ad[VCACHE];
} vcache;

static inline size_t vc_slot(const void *a, const void *b)
{
    uintptr_t x = ((uintptr_t)a >> 4) ^ ((uintptr_t)b >> 3) * 0x9e3779b1u;
    return (size_t)(x ^ (x >> 11)) & (VCACHE - 1);
}

static gn_status validate_nodes(gn_graph *g, const char *fn, vcache *seen_val, vcache *seen_attr);

static gn_status validate_one(gn_graph *g, const char *fn)
{
    vcache *seen_val = calloc(1, sizeof *seen_val), *seen_attr = calloc(1, sizeof *seen_attr);
    if (!seen_val || !seen_attr) {
        free(seen_val);
        free(seen_attr);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    gn_status s = validate_nodes(g, fn, seen_val, seen_attr);
    free(seen_val);
    free(seen_attr);
    return s;
}

static gn_status validate_nodes(gn_graph *g, const char *fn, vcache *seen_val, vcache *seen_attr)
{
    gn_id *order = NULL;
    uint32_t n = 0;
    gn_status s = gn__graph_topo(g, &order, &n);
    if (s != GN_OK) {
        if (fn) gn__err_prefix(&g->err, "function '%s'", fn);
        return s;
    }
    free(order);
    char what[GN__ERRMSG_MAX];
    gn__err e;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        const gn__node *nd = &g->nodes[id];
        if (nd->flags & GN__NODE_DEAD) continue;
        /* inputs refer to outputs that exist */
        for (uint32_t k = 0; k < nd->n_in; k++) {
            gn__edge in = nd->in[k];
            int32_t no = gn__node_num_outputs(g, in.node);
            if (no >= 0 && in.index >= (uint32_t)no) {
                snprintf(what, sizeof what, "input %u refers to output %u of '%s' (%s), which has %d output%s", k,
                         in.index, gn__node_name(g, in.node), gn__node_op(g, in.node), no, no == 1 ? "" : "s");
                return fail_node(g, fn, id, GN_ERR_GRAPH, what);
            }
        }
        /* tensors and shapes in attrs */
        for (uint32_t k = 0; k < nd->n_attr; k++) {
            const Tensorflow__AttrValue *v = nd->attr[k].value;
            size_t c = vc_slot(v, NULL);
            if (seen_val->v[c] == v) continue;
            gn__err_clear(&e);
            if (check_attr_value(v, &e) != GN_OK) {
                snprintf(what, sizeof what, "attr '%.200s': %.700s", gn__str(g, nd->attr[k].key), e.msg);
                return fail_node(g, fn, id, GN_ERR_GRAPH, what);
            }
            seen_val->v[c] = v;
        }
        if (nd->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        const gn__opdef *op = gn__node_opdef(g, id);
        if (!op) continue; /* ops we do not know pass through untouched */
        /* attrs against the op's definition */
        for (uint32_t a = 0; a < op->n_attrs; a++) {
            const gn__attrdef *ad = &op->attrs[a];
            const Tensorflow__AttrValue *v = gn__node_attr(g, id, ad->name);
            gn__err_clear(&e);
            if (!v) {
                if (!ad->default_len && !ad->default_pb) {
                    snprintf(what, sizeof what, "missing attr '%s' (%s)", ad->name, ad->type);
                    return fail_node(g, fn, id, GN_ERR_GRAPH, what);
                }
                continue;
            }
            size_t c = vc_slot(v, ad);
            if (seen_attr->v[c] == v && seen_attr->ad[c] == ad) continue;
            if (gn__attr_check(op, ad, v, &e) != GN_OK) return fail_node(g, fn, id, GN_ERR_GRAPH, e.msg);
            seen_attr->v[c] = v;
            seen_attr->ad[c] = ad;
        }
        /* arity */
        uint32_t want;
        gn__err_clear(&e);
        gn_status as = gn__op_num_inputs(op, g, id, &want, &e);
        if (as == GN_ERR_UNSUPPORTED) continue; /* arity set by a function-body placeholder attr */
        if (as != GN_OK) return fail_node(g, fn, id, GN_ERR_GRAPH, e.msg);
        if (want != nd->n_in) {
            snprintf(what, sizeof what, "has %u data input%s, %s takes %u", nd->n_in, nd->n_in == 1 ? "" : "s",
                     op->name, want);
            return fail_node(g, fn, id, GN_ERR_GRAPH, what);
        }
    }
    return GN_OK;
}

gn_status gn__graph_validate(gn_graph *g)
{
    GN_TRY(validate_one(g, NULL));
    for (uint32_t f = 0; f < g->n_fns; f++) {
        gn_graph *b = g->fns[f].body;
        if (!b) continue;
        gn_status s = validate_one(b, gn__str(g, g->fns[f].name));
        if (s != GN_OK) return gn__fail(&g->err, s, "%s", b->err.msg);
    }
    return GN_OK;
}

gn_status gn_graph_validate(gn_graph *g)
{
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    return gn__graph_validate(g);
}

/* ---- frames (TF1 while loops) ---------------------------------------------------------------- */
typedef struct vframe {
    uint32_t parent;
    const char *name;
    size_t len;
} vframe;

static bool op_in(const char *op, const char *a, const char *b) { return !strcmp(op, a) || !strcmp(op, b); }

static void frame_desc(const vframe *f, uint32_t k, char *out, size_t n)
{
    if (k == 0) snprintf(out, n, "the root frame");
    else snprintf(out, n, "frame '%.*s'", (int)(f[k].len > 200 ? 200 : f[k].len), f[k].name);
}

gn_status gn__graph_check_frames(gn_graph *g)
{
    gn_id *order = NULL;
    uint32_t n = 0;
    GN_TRY(gn__graph_topo(g, &order, &n));
    uint32_t *outf = malloc(((size_t)g->n_nodes + 1) * sizeof *outf), *nodef = malloc(((size_t)g->n_nodes + 1) * sizeof *nodef);
    vframe *fr = malloc(16 * sizeof *fr);
    uint32_t nfr = 1, capfr = 16;
    gn_status s = GN_OK;
    if (!outf || !nodef || !fr) {
        s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    fr[0] = (vframe){0, "", 0};
    for (gn_id i = 0; i < g->n_nodes; i++) outf[i] = nodef[i] = UINT32_MAX;
    char f1[256], f2[256];
    for (uint32_t o = 0; o < n && s == GN_OK; o++) {
        gn_id id = order[o];
        const gn__node *nd = &g->nodes[id];
        uint32_t f = UINT32_MAX;
        gn_id first = GN_NONE;
        for (uint32_t k = 0; k < nd->n_in + nd->n_ctrl && s == GN_OK; k++) {
            gn_id src = k < nd->n_in ? nd->in[k].node : nd->ctrl[k - nd->n_in];
            if (op_in(gn__node_op(g, src), "NextIteration", "RefNextIteration")) continue; /* a back edge: below */
            if (f == UINT32_MAX) {
                f = outf[src];
                first = src;
            } else if (outf[src] != f) {
                frame_desc(fr, f, f1, sizeof f1);
                frame_desc(fr, outf[src], f2, sizeof f2);
                s = gn__fail(&g->err, GN_ERR_GRAPH, "node '%s' (%s) has inputs from different frames: '%s' in %s and '%s' in %s",
                             gn__node_name(g, id), gn__node_op(g, id), gn__node_name(g, first), f1, gn__node_name(g, src), f2);
            }
        }
        if (s != GN_OK) break;
        if (f == UINT32_MAX) f = 0;
        nodef[id] = f;
        const char *op = gn__node_op(g, id);
        if (op_in(op, "Enter", "RefEnter")) {
            const char *name = "";
            size_t len = 0;
            gn__attr_get_string(g, id, "frame_name", &name, &len);
            uint32_t c = 1;
            while (c < nfr && !(fr[c].parent == f && fr[c].len == len && !memcmp(fr[c].name, name, len))) c++;
            if (c == nfr) {
                if (nfr == capfr) {
                    vframe *nf = realloc(fr, (size_t)capfr * 2 * sizeof *nf);
                    if (!nf) {
                        s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                        break;
                    }
                    fr = nf;
                    capfr *= 2;
                }
                fr[nfr++] = (vframe){f, name, len};
            }
            outf[id] = c;
        } else if (op_in(op, "Exit", "RefExit")) {
            if (f == 0) {
                s = gn__fail(&g->err, GN_ERR_GRAPH, "node '%s' (%s) is not inside a while loop", gn__node_name(g, id), op);
                break;
            }
            outf[id] = fr[f].parent;
        } else {
            outf[id] = f;
        }
    }
    /* back edges: a NextIteration's output is in the frame of the node it feeds */
    for (uint32_t o = 0; o < n && s == GN_OK; o++) {
        gn_id id = order[o];
        const gn__node *nd = &g->nodes[id];
        for (uint32_t k = 0; k < nd->n_in + nd->n_ctrl && s == GN_OK; k++) {
            gn_id src = k < nd->n_in ? nd->in[k].node : nd->ctrl[k - nd->n_in];
            if (!op_in(gn__node_op(g, src), "NextIteration", "RefNextIteration") || outf[src] == nodef[id]) continue;
            frame_desc(fr, outf[src], f1, sizeof f1);
            frame_desc(fr, nodef[id], f2, sizeof f2);
            s = gn__fail(&g->err, GN_ERR_GRAPH, "node '%s' (%s) takes '%s' from %s, but is in %s", gn__node_name(g, id),
                         gn__node_op(g, id), gn__node_name(g, src), f1, f2);
        }
    }
out:
    free(order);
    free(outf);
    free(nodef);
    free(fr);
    return s;
}

