/* Model pruning (Grappler's model_pruner, docs/reference_grappler.md §3.1).
 *
 * 1. pruning.unreachable: keep only the transitive fan-in of the roots and
 *    delete the rest. The roots are the preserved nodes (fetches, feeds, and
 *    without fetches the graph's outputs and stateful nodes, which the
 *    meta-optimizer marks). In a function body the roots are also its _Arg
 *    and _Retval nodes, its control outputs, and every node that is stateful,
 *    of an op we do not know, or v1 control flow (as TensorFlow's function
 *    runtime keeps them). At the top level with nothing preserved (fetches
 *    unknown) nothing is deleted, as in Grappler.
 * 2. pruning.identity_n_split: while walking the fan-in, an IdentityN is
 *    entered port by port; ports that no needed node reads are dropped from it
 *    (Grappler moves them to Identity nodes that the fan-in then drops: the
 *    same result).
 * 3. pruning.dedup_control: control inputs that repeat a data input go.
 * 4. Trivial nodes are bypassed: StopGradient, Identity / single-input
 *    IdentityN without control edges that neither follows a Switch (or an
 *    Enter) nor feeds a Merge, input-less NoOp, input-less Const that only
 *    drives control edges, AddN of one input. Refused when the node is
 *    preserved, when bypassing adds edges (in*out > in+out), when an input
 *    comes from another device, is a function call's output or a reference,
 *    or when a data consumer is a function call. A worklist re-examines the
 *    neighbours of every bypassed node, so a second run finds nothing.
 *
 * Everything is iterative (worklists, no recursion over depth) and linear in
 * nodes + edges, except the IR's per-edge fanout updates when a bypass
 * touches a node with a very large fanout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_pruning[] = {
    {"pruning.unreachable", "delete nodes that no preserved node (fetch, feed, output) needs"},
    {"pruning.identity_n_split", "drop IdentityN ports that no needed node reads"},
    {"pruning.dedup_control", "drop control inputs that repeat a data input"},
    {"pruning.stop_gradient", "bypass StopGradient (it only matters while building gradients)"},
    {"pruning.identity", "bypass Identity / single-input IdentityN that has no control edges"},
    {"pruning.noop", "delete NoOp nodes that have no inputs"},
    {"pruning.const_control_only", "delete input-less Const nodes whose only consumers are control edges"},
    {"pruning.addn_single", "bypass AddN of a single input"},
    {NULL, NULL},
};

enum { ST_R = 1, ST_A = 2 };                 /* reached; all inputs traversed */
#define W_FULL UINT32_MAX          /* work item: traverse all the node's inputs */
#define W_CTRL (UINT32_MAX - 1)    /* work item: its control inputs only (else: one IdentityN port) */

typedef struct ops_ids {
    uint32_t identity, identity_n, stop_gradient, noop, konst, host_const, addn;
    uint32_t sw, ref_sw, merge, ref_merge, enter, ref_enter;
} ops_ids;

typedef struct idlist {
    gn_id *v;
    uint32_t n, cap;
} idlist;

static bool idpush(idlist *l, gn_id id)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 64;
        gn_id *a = realloc(l->v, nc * sizeof *a);
        if (!a) return false;
        l->v = a;
        l->cap = nc;
    }
    l->v[l->n++] = id;
    return true;
}

typedef struct pr {
    gn__pass_ctx *c;
    gn_graph *g;
    ops_ids op;
    uint8_t *keep;      /* never removed: preserved, _Arg/_Retval, control outputs */
    bool known;         /* something is preserved (fetches known) or a function body */
    bool body;
    bool dirty;         /* fanout lists edited directly: drop the shape table */
    uint32_t *stamp;    /* scratch, per node */
    uint32_t stamp_gen;
    idlist sc[3];       /* scratch of bypass */
    bool on[6];         /* pattern of each tkind enabled (checked once) */
} pr;

typedef struct witem {
    gn_id node;
    uint32_t what;      /* W_FULL, W_CTRL or an IdentityN port */
} witem;

typedef struct wlist {
    witem *v;
    size_t n, cap;
} wlist;

/* A refusal's reason, written only when someone reads it. */
#define WHY(...)                                                                                                     \
    do {                                                                                                             \
        if (why) snprintf(why, len, __VA_ARGS__);                                                                    \
    } while (0)

static bool wpush(wlist *w, gn_id node, uint32_t what)
{
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 1024;
        witem *p = realloc(w->v, nc * sizeof *p);
        if (!p) return false;
        w->v = p;
        w->cap = nc;
    }
    w->v[w->n++] = (witem){node, what};
    return true;
}

static uint32_t find_op(const gn_graph *g, const char *s)
{
    return gn__intern_find(g, s, strlen(s));
}

static void init_ops(const gn_graph *g, ops_ids *o)
{
    o->identity = find_op(g, "Identity");
    o->identity_n = find_op(g, "IdentityN");
    o->stop_gradient = find_op(g, "StopGradient");
    o->noop = find_op(g, "NoOp");
    o->konst = find_op(g, "Const");
    o->host_const = find_op(g, "HostConst");
    o->addn = find_op(g, "AddN");
    o->sw = find_op(g, "Switch");
    o->ref_sw = find_op(g, "RefSwitch");
    o->merge = find_op(g, "Merge");
    o->ref_merge = find_op(g, "RefMerge");
    o->enter = find_op(g, "Enter");
    o->ref_enter = find_op(g, "RefEnter");
}

static gn_status from_graph(pr *p, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(p->c->err, s, "%s", p->g->err.msg);
}

static gn_status nomem(pr *p)
{
    return gn__fail(p->c->err, GN_ERR_NOMEM, "pruning: out of memory");
}

static bool is_switch(const pr *p, gn_id id)
{
    uint32_t op = p->g->nodes[id].op;
    return op == p->op.sw || op == p->op.ref_sw;
}

static bool is_merge(const pr *p, gn_id id)
{
    uint32_t op = p->g->nodes[id].op;
    return op == p->op.merge || op == p->op.ref_merge;
}

static bool is_enter(const pr *p, gn_id id)
{
    uint32_t op = p->g->nodes[id].op;
    return op == p->op.enter || op == p->op.ref_enter;
}

static bool is_const(const pr *p, gn_id id)
{
    uint32_t op = p->g->nodes[id].op;
    return op == p->op.konst || op == p->op.host_const;
}

/* A call of a library function by name (Grappler keeps nodes next to them:
 * bypassing them can break inlining). */
static bool is_fn_call(const pr *p, gn_id id)
{
    const gn_graph *g = p->g;
    if (!g->lib || !g->lib->n_fns || g->nodes[id].opdef >= 0) return false;
    return gn__graph_find_function(g, gn__node_op(g, id)) != NULL;
}

static bool is_ref_output(const pr *p, gn__edge e)
{
    const gn__opdef *od = gn__node_opdef(p->g, e.node);
    if (!od) return false;
    /* only a Ref(...) output arg makes one (type attrs hold base types) */
    bool maybe = false;
    for (uint32_t k = 0; k < od->n_outputs && !maybe; k++)
        maybe = od->outputs[k].is_ref;
    return maybe && gn__op_output_dtype(od, p->g, e.node, e.index) > 100;
}

/* IdentityN whose T list matches its inputs, of one input. */
static uint32_t identity_n_types(const pr *p, gn_id id)
{
    const Tensorflow__AttrValue *v = gn__node_attr(p->g, id, "T");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) return UINT32_MAX;
    return (uint32_t)v->list->n_type;
}

static bool is_identity(const pr *p, gn_id id)
{
    const gn__node *n = &p->g->nodes[id];
    if (n->op == p->op.identity) return true;
    return n->op == p->op.identity_n && n->n_in == 1 && identity_n_types(p, id) == 1;
}

static const char *edge_str(const gn_graph *g, gn__edge e, char *buf, size_t len)
{
    if (e.index == 0) snprintf(buf, len, "%s", gn__node_name(g, e.node));
    else snprintf(buf, len, "%s:%u", gn__node_name(g, e.node), e.index);
    return buf;
}

/* ---- roots ------------------------------------------------------------------------------ */
static const gn__function *body_function(const gn_graph *g)
{
    if (g->kind != GN__GRAPH_FUNCTION || !g->lib) return NULL;
    for (uint32_t i = 0; i < g->lib->n_fns; i++)
        if (g->lib->fns[i].body == g) return &g->lib->fns[i];
    return NULL;
}

static void mark_keep(pr *p)
{
    gn_graph *g = p->g;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) p->keep[i] = 1;
        if (n->flags & GN__NODE_PRESERVE) p->known = true;
    }
    const gn__function *f = body_function(g);
    if (f)
        for (uint32_t j = 0; j < f->n_control_ret; j++) {
            gn_id r = f->control_ret_node[j];
            if (r != GN_NONE && gn__node_live(g, r)) p->keep[r] = 1;
        }
    if (p->body) p->known = true;
}

/* In a function body a node runs even when no output needs it if it is
 * stateful, of an unknown op, or v1 control flow. */
static bool body_root(const pr *p, gn_id id)
{
    const gn__opdef *od = gn__node_opdef(p->g, id);
    if (!od) return true;
    return (od->flags & GN__OPF_STATEFUL) || (od->traits & GN__T_CONTROL_FLOW);
}

/* ---- unreachable nodes and IdentityN ports ---------------------------------------------- */
static bool splittable(const pr *p, gn_id id, bool split_on)
{
    const gn__node *n = &p->g->nodes[id];
    return split_on && n->op == p->op.identity_n && !p->keep[id] && n->n_in >= 2 &&
           identity_n_types(p, id) == n->n_in;
}

typedef struct reach {
    uint8_t *st;
    uint32_t *base;     /* IdentityN: offset of its port flags in need[]; else UINT32_MAX */
    uint8_t *need;
    wlist w;
} reach;

static bool mark_full(reach *r, gn_id id)
{
    if (r->st[id] & ST_A) return true;
    r->st[id] |= ST_R | ST_A;
    return wpush(&r->w, id, W_FULL);
}

static bool mark_data(reach *r, gn__edge e)
{
    if (r->base[e.node] == UINT32_MAX || (r->st[e.node] & ST_A)) return mark_full(r, e.node);
    uint8_t *nd = &r->need[r->base[e.node] + e.index];
    if (!*nd) {
        *nd = 1;
        if (!wpush(&r->w, e.node, e.index)) return false;
    }
    if (!(r->st[e.node] & ST_R)) {
        r->st[e.node] |= ST_R;
        if (!wpush(&r->w, e.node, W_CTRL)) return false;
    }
    return true;
}

static gn_status compute_reach(pr *p, reach *r, bool split_on)
{
    gn_graph *g = p->g;
    uint32_t N = g->n_nodes;
    r->st = calloc(N ? N : 1, 1);
    r->base = malloc((N ? N : 1) * sizeof *r->base);
    if (!r->st || !r->base) return nomem(p);
    size_t nports = 0;
    for (gn_id i = 0; i < N; i++) {
        r->base[i] = UINT32_MAX;
        if (!(g->nodes[i].flags & GN__NODE_DEAD) && splittable(p, i, split_on)) {
            r->base[i] = (uint32_t)nports;
            nports += g->nodes[i].n_in;
        }
    }
    r->need = calloc(nports ? nports : 1, 1);
    if (!r->need) return nomem(p);
    for (gn_id i = 0; i < N; i++) {
        if (g->nodes[i].flags & GN__NODE_DEAD) continue;
        if (p->keep[i] || (p->body && body_root(p, i)))
            if (!mark_full(r, i)) return nomem(p);
    }
    /* First in, first out over the growing list (the marks reached do not
     * depend on the order), so the nodes to visit are known ahead and their
     * records and input lists are fetched before they are needed. */
    for (size_t h = 0; h < r->w.n; h++) {
        if (h + 16 < r->w.n) gn__prefetch_record(g, r->w.v[h + 16].node);
        if (h + 8 < r->w.n) GN__PREFETCH(g->nodes[r->w.v[h + 8].node].in);
        witem it = r->w.v[h];
        const gn__node *n = &g->nodes[it.node];
        if (it.what == W_FULL) {
            for (uint32_t k = 0; k < n->n_in; k++)
                if (!mark_data(r, n->in[k])) return nomem(p);
        } else if (it.what != W_CTRL) {
            if (!mark_data(r, n->in[it.what])) return nomem(p);
            continue;
        }
        n = &g->nodes[it.node];
        for (uint32_t k = 0; k < n->n_ctrl; k++)
            if (!mark_full(r, n->ctrl[k])) return nomem(p);
    }
    return GN_OK;
}

static gn_status list_attr_filtered(pr *p, gn_id id, const char *key, const uint8_t *keep_port, uint32_t n_old,
                                    uint32_t n_new)
{
    gn_graph *g = p->g;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v) return GN_OK;
    bool types = strcmp(key, "T") == 0;
    if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list ||
        (types ? v->list->n_type : v->list->n_shape) != n_old)
        return from_graph(p, gn__node_remove_attr(g, id, key));
    Tensorflow__AttrValue *nv = gn__attr_new_list(g);
    void *arr = gn__graph_value_alloc(g, (n_new ? n_new : 1) * (types ? sizeof(Tensorflow__DataType)
                                                                        : sizeof(Tensorflow__TensorShapeProto *)));
    if (!nv || !arr) return nomem(p);
    Tensorflow__AttrValue__ListValue *l = nv->list;
    uint32_t j = 0;
    for (uint32_t k = 0; k < n_old; k++) {
        if (!keep_port[k]) continue;
        if (types) ((Tensorflow__DataType *)arr)[j++] = v->list->type[k];
        else ((Tensorflow__TensorShapeProto **)arr)[j++] = v->list->shape[k];
    }
    if (types) {
        l->n_type = n_new;
        l->type = arr;
    } else {
        l->n_shape = n_new;
        l->shape = arr;
    }
    return from_graph(p, gn__node_set_attr(g, id, key, nv));
}

/* Drops the unneeded ports of the partially reached IdentityN nodes: first
 * their edges (a reader may itself be a split IdentityN whose port goes), then
 * the surviving readers are renumbered. */
static gn_status split_identity_n(pr *p, reach *r)
{
    gn_graph *g = p->g;
    uint32_t N = g->n_nodes;
    gn_id *split = NULL;
    uint32_t *n_old = NULL, n_split = 0, cap = 0;
    uint32_t *newidx = NULL, newcap = 0;
    gn_status s = GN_OK;
    for (gn_id i = 0; i < N && s == GN_OK; i++) {
        if (r->base[i] == UINT32_MAX || (r->st[i] & (ST_R | ST_A)) != ST_R) continue;
        const uint8_t *nd = &r->need[r->base[i]];
        uint32_t old = g->nodes[i].n_in, kept = 0;
        for (uint32_t k = 0; k < old; k++) kept += nd[k];
        if (kept == old) continue;
        if (n_split == cap) {
            uint32_t nc = cap ? cap * 2 : 16;
            gn_id *a = realloc(split, nc * sizeof *a);
            if (a) split = a;
            uint32_t *b = realloc(n_old, nc * sizeof *b);
            if (b) n_old = b;
            if (!a || !b) {
                s = nomem(p);
                break;
            }
            cap = nc;
        }
        split[n_split] = i;
        n_old[n_split++] = old;
        gn__pass_rewrote(p->c, "pruning.identity_n_split", g, i,
                         "IdentityN '%s': kept %u of its %u ports; the others feed nothing that is needed",
                         gn__node_name(g, i), kept, old);
        s = list_attr_filtered(p, i, "T", nd, old, kept);
        if (s == GN_OK) s = list_attr_filtered(p, i, "_output_shapes", nd, old, kept);
        for (uint32_t k = old; k-- > 0 && s == GN_OK;)
            if (!nd[k]) s = from_graph(p, gn__node_remove_input(g, i, k));
        p->c->changed = true;
    }
    for (uint32_t q = 0; q < n_split && s == GN_OK; q++) {
        gn_id i = split[q];
        const uint8_t *nd = &r->need[r->base[i]];
        if (n_old[q] > newcap) {
            uint32_t *a = realloc(newidx, n_old[q] * sizeof *a);
            if (!a) {
                s = nomem(p);
                break;
            }
            newidx = a;
            newcap = n_old[q];
        }
        uint32_t j = 0;
        for (uint32_t k = 0; k < n_old[q]; k++) newidx[k] = nd[k] ? j++ : UINT32_MAX;
        const gn__node *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->n_use; k++) {
            gn__use u = n->use[k];
            if (!(r->st[u.node] & ST_R)) continue; /* goes with the sweep */
            gn__edge *e = &g->nodes[u.node].in[u.slot];
            if (e->index >= n_old[q] || newidx[e->index] == UINT32_MAX) {
                s = gn__fail(p->c->err, GN_ERR_INTERNAL, "pruning: node '%s' reads a dropped port of IdentityN '%s'",
                             gn__node_name(g, u.node), gn__node_name(g, i));
                break;
            }
            e->index = newidx[e->index];
        }
        p->dirty = true;
    }
    free(split);
    free(n_old);
    free(newidx);
    return s;
}

static gn_status sweep_unreached(pr *p, const uint8_t *st)
{
    gn_graph *g = p->g;
    uint32_t N = g->n_nodes, removed = 0;
    for (gn_id i = 0; i < N; i++) {
        gn__node *n = &g->nodes[i];
        if ((n->flags & GN__NODE_DEAD) || (st[i] & ST_R)) continue;
        gn__pass_rewrote(p->c, "pruning.unreachable", g, i, "deleted %s '%s': no preserved node needs it",
                         gn__node_op(g, i), gn__node_name(g, i));
        removed++;
    }
    if (!removed) return GN_OK;
    for (gn_id i = 0; i < N; i++) {
        gn__node *n = &g->nodes[i];
        if ((n->flags & GN__NODE_DEAD) || (st[i] & ST_R)) continue;
        n->flags |= GN__NODE_DEAD;
        n->n_in = n->n_ctrl = n->n_use = n->n_cuse = 0;
        if (g->node_of_name[n->name] == i) g->node_of_name[n->name] = GN_NONE;
        g->n_live--;
    }
    /* survivors' inputs are all survivors (the fan-in is closed); their
     * consumer lists lose the dead */
    for (gn_id i = 0; i < N; i++) {
        gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        uint32_t k = 0;
        for (uint32_t j = 0; j < n->n_use; j++)
            if (!(g->nodes[n->use[j].node].flags & GN__NODE_DEAD)) n->use[k++] = n->use[j];
        n->n_use = k;
        k = 0;
        for (uint32_t j = 0; j < n->n_cuse; j++)
            if (!(g->nodes[n->cuse[j]].flags & GN__NODE_DEAD)) n->cuse[k++] = n->cuse[j];
        n->n_cuse = k;
    }
    p->dirty = true;
    p->c->changed = true;
    return GN_OK;
}

/* ---- control inputs that repeat a data input ------------------------------------------- */
static gn_status dedup_controls(pr *p)
{
    gn_graph *g = p->g;
    if (!gn__pattern_enabled(p->c, "pruning.dedup_control")) return GN_OK;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        if ((n->flags & GN__NODE_DEAD) || !n->n_ctrl || !n->n_in) continue;
        if (++p->stamp_gen == 0) {
            memset(p->stamp, 0, g->n_nodes * sizeof *p->stamp);
            p->stamp_gen = 1;
        }
        for (uint32_t k = 0; k < n->n_in; k++) p->stamp[n->in[k].node] = p->stamp_gen;
        for (uint32_t k = n->n_ctrl; k-- > 0;) {
            gn_id d = g->nodes[i].ctrl[k];
            if (p->stamp[d] != p->stamp_gen) continue;
            gn__pass_rewrote(p->c, "pruning.dedup_control", g, i,
                             "dropped control input '^%s' of '%s': '%s' is already a data input", gn__node_name(g, d),
                             gn__node_name(g, i), gn__node_name(g, d));
            GN_TRY(from_graph(p, gn__node_remove_control(g, i, d)));
            p->c->changed = true;
        }
    }
    return GN_OK;
}

/* ---- trivial nodes ---------------------------------------------------------------------- */
typedef enum tkind { T_NONE = 0, T_STOPGRAD, T_IDENTITY, T_NOOP, T_CONST, T_ADDN } tkind;

static const char *const t_pattern[] = {
    NULL, "pruning.stop_gradient", "pruning.identity", "pruning.noop", "pruning.const_control_only", "pruning.addn_single",
};

static tkind kind_of(const pr *p, gn_id id)
{
    const gn__node *n = &p->g->nodes[id];
    if (n->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return T_NONE;
    if (n->op == p->op.stop_gradient) return n->n_in == 1 ? T_STOPGRAD : T_NONE;
    if (is_identity(p, id)) return n->n_in == 1 ? T_IDENTITY : T_NONE;
    if (n->op == p->op.noop) return (n->n_in == 0 && n->n_ctrl == 0) ? T_NOOP : T_NONE;
    if (is_const(p, id)) return (n->n_in == 0 && n->n_ctrl == 0 && n->n_use == 0) ? T_CONST : T_NONE;
    if (n->op == p->op.addn) return n->n_in == 1 ? T_ADDN : T_NONE;
    return T_NONE;
}

/* Whether the trivial node `id` may go; when not, *why says why (the report's
 * reason). Grappler's IsTrivialOp + CanRemoveNode, plus: a bypass never turns
 * a Switch output into a control edge (a control edge from a Switch does not
 * carry the branch's deadness). */
static bool can_remove(const pr *p, gn_id id, tkind k, char *why, size_t len)
{
    const gn_graph *g = p->g;
    const gn__node *n = &g->nodes[id];
    const char *op = gn__node_op(g, id), *name = gn__node_name(g, id);
    if (p->keep[id]) {
        WHY("%s '%s' kept: it is preserved", op, name);
        return false;
    }
    if (!p->known) {
        WHY("%s '%s' kept: nothing is preserved (no fetches given), so no node is deleted", op, name);
        return false;
    }
    if (k == T_NOOP || k == T_CONST) return true;
    if (k == T_IDENTITY) {
        gn_id in = n->in[0].node;
        if (n->n_ctrl) {
            WHY("%s '%s' kept: it has control inputs", op, name);
            return false;
        }
        if (is_switch(p, in)) {
            WHY("%s '%s' kept: it follows a Switch", op, name);
            return false;
        }
        if (is_enter(p, in)) {
            WHY("%s '%s' kept: it follows an Enter (frame boundary)", op, name);
            return false;
        }
        if (n->n_cuse) {
            WHY("%s '%s' kept: it drives control dependencies", op, name);
            return false;
        }
        for (uint32_t j = 0; j < n->n_use; j++)
            if (is_merge(p, n->use[j].node)) {
                WHY("%s '%s' kept: it feeds a Merge ('%s')", op, name, gn__node_name(g, n->use[j].node));
                return false;
            }
    }
    uint64_t in_deg = (uint64_t)n->n_in + n->n_ctrl, out_deg = (uint64_t)n->n_use + n->n_cuse;
    if (in_deg * out_deg > in_deg + out_deg) {
        WHY("%s '%s' kept: bypassing it would add edges (%llu inputs x %llu consumers > %llu + %llu)", op, name,
                 (unsigned long long)in_deg, (unsigned long long)out_deg, (unsigned long long)in_deg,
                 (unsigned long long)out_deg);
        return false;
    }
    for (uint32_t j = 0; j < n->n_in + n->n_ctrl; j++) {
        gn_id src = j < n->n_in ? n->in[j].node : n->ctrl[j - n->n_in];
        if (g->nodes[src].device != n->device) {
            WHY("%s '%s' kept: its input '%s' is on another device ('%s' vs '%s')", op, name,
                     gn__node_name(g, src), gn__str(g, g->nodes[src].device), gn__str(g, n->device));
            return false;
        }
        if (j >= n->n_in) continue;
        if (is_fn_call(p, src)) {
            WHY("%s '%s' kept: its input '%s' is a function call", op, name, gn__node_name(g, src));
            return false;
        }
        if (is_ref_output(p, n->in[j])) {
            WHY("%s '%s' kept: its input '%s' is a reference", op, name, gn__node_name(g, src));
            return false;
        }
        if (n->n_cuse && is_switch(p, src)) {
            WHY("%s '%s' kept: it follows a Switch and drives control dependencies", op, name);
            return false;
        }
    }
    for (uint32_t j = 0; j < n->n_use; j++)
        if (is_fn_call(p, n->use[j].node)) {
            WHY("%s '%s' kept: its consumer '%s' is a function call", op, name,
                     gn__node_name(g, n->use[j].node));
            return false;
        }
    return true;
}

/* `u` waits for `d` unless it already reads or waits for it. */
static gn_status add_ctrl(pr *p, gn_id u, gn_id d)
{
    gn_graph *g = p->g;
    if (u == d) return GN_OK;
    const gn__node *n = &g->nodes[u];
    for (uint32_t k = 0; k < n->n_in; k++)
        if (n->in[k].node == d) return GN_OK;
    return from_graph(p, gn__node_add_control(g, u, d));
}

/* Bypasses `id`: data consumers read its input, every consumer waits for its
 * control inputs, control consumers also wait for its input's producer. The
 * neighbours are queued for another look. */
static gn_status bypass(pr *p, gn_id id, tkind k, idlist *wl, uint8_t *inq)
{
    gn_graph *g = p->g;
    gn__node *n = &g->nodes[id];
    char ebuf[512];
    idlist ctrl = p->sc[0], uses = p->sc[1], cuses = p->sc[2];
    ctrl.n = uses.n = cuses.n = 0;
    gn_status s = GN_OK;
    for (uint32_t j = 0; j < n->n_ctrl && s == GN_OK; j++)
        if (!idpush(&ctrl, n->ctrl[j])) s = nomem(p);
    for (uint32_t j = 0; j < n->n_use && s == GN_OK; j++)
        if (!idpush(&uses, n->use[j].node)) s = nomem(p);
    for (uint32_t j = 0; j < n->n_cuse && s == GN_OK; j++)
        if (!idpush(&cuses, n->cuse[j])) s = nomem(p);
    gn__edge in = n->n_in ? n->in[0] : (gn__edge){GN_NONE, 0};
    if (s == GN_OK && p->c->report) {
        if (k == T_NOOP)
            gn__pass_rewrote(p->c, t_pattern[k], g, id, "deleted NoOp '%s': it has no inputs, so nothing waits on it",
                             gn__node_name(g, id));
        else if (k == T_CONST)
            gn__pass_rewrote(p->c, t_pattern[k], g, id,
                             "deleted Const '%s': it has no inputs and only control consumers (%u)",
                             gn__node_name(g, id), cuses.n);
        else
            gn__pass_rewrote(p->c, t_pattern[k], g, id, "bypassed %s '%s': its consumers now read '%s'",
                             gn__node_op(g, id), gn__node_name(g, id), edge_str(g, in, ebuf, sizeof ebuf));
    }
    if (s == GN_OK && in.node != GN_NONE) s = from_graph(p, gn__graph_forward_output(g, (gn__edge){id, 0}, in));
    for (uint32_t u = 0; u < uses.n && s == GN_OK; u++)
        for (uint32_t j = 0; j < ctrl.n && s == GN_OK; j++) s = add_ctrl(p, uses.v[u], ctrl.v[j]);
    for (uint32_t u = 0; u < cuses.n && s == GN_OK; u++) {
        if (in.node != GN_NONE) s = add_ctrl(p, cuses.v[u], in.node);
        for (uint32_t j = 0; j < ctrl.n && s == GN_OK; j++) s = add_ctrl(p, cuses.v[u], ctrl.v[j]);
    }
    if (s == GN_OK) s = from_graph(p, gn__node_remove(g, id));
    if (s == GN_OK) {
        p->c->changed = true;
        idlist *ls[3] = {&ctrl, &uses, &cuses};
        for (int q = 0; q < 3 && s == GN_OK; q++)
            for (uint32_t j = 0; j < ls[q]->n && s == GN_OK; j++) {
                gn_id x = ls[q]->v[j];
                if (!inq[x] && kind_of(p, x) != T_NONE) {
                    inq[x] = 1;
                    if (!idpush(wl, x)) s = nomem(p);
                }
            }
        if (s == GN_OK && in.node != GN_NONE && !inq[in.node] && kind_of(p, in.node) != T_NONE) {
            inq[in.node] = 1;
            if (!idpush(wl, in.node)) s = nomem(p);
        }
    }
    p->sc[0] = ctrl;
    p->sc[1] = uses;
    p->sc[2] = cuses;
    return s;
}

static gn_status remove_trivial(pr *p)
{
    for (int k = T_STOPGRAD; k <= T_ADDN; k++) p->on[k] = gn__pattern_enabled(p->c, t_pattern[k]);
    gn_graph *g = p->g;
    uint32_t N = g->n_nodes;
    uint8_t *inq = calloc(N ? N : 1, 1);
    idlist wl = {0};
    gn_status s = inq ? GN_OK : nomem(p);
    char why[1024];
    /* FIFO over a growing list: the first round in id order, then the
     * neighbours of what changed */
    for (gn_id i = 0; i < N && s == GN_OK; i++)
        if (kind_of(p, i) != T_NONE) {
            inq[i] = 1;
            if (!idpush(&wl, i)) s = nomem(p);
        }
    for (uint32_t h = 0; h < wl.n && s == GN_OK; h++) {
        if ((h & 4095) == 4095 && gn__pass_deadline_passed(p->c)) break;
        gn_id id = wl.v[h];
        inq[id] = 0;
        tkind k = kind_of(p, id);
        if (k == T_NONE || !p->on[k]) continue;
        if (can_remove(p, id, k, NULL, 0)) s = bypass(p, id, k, &wl, inq);
    }
    /* what stays, and why */
    for (gn_id i = 0; i < N && s == GN_OK && p->c->report; i++) {
        tkind k = kind_of(p, i);
        if (k == T_NONE || !p->on[k]) continue;
        if (!can_remove(p, i, k, why, sizeof why)) gn__pass_refused(p->c, t_pattern[k], g, i, "%s", why);
    }
    free(inq);
    free(wl.v);
    return s;
}

gn_status gn__pass_pruning(gn__pass_ctx *c, gn_graph *g)
{
    pr p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.g = g;
    p.body = g->kind == GN__GRAPH_FUNCTION;
    init_ops(g, &p.op);
    uint32_t N = g->n_nodes;
    p.keep = calloc(N ? N : 1, 1);
    p.stamp = calloc(N ? N : 1, sizeof *p.stamp);
    if (!p.keep || !p.stamp) {
        free(p.keep);
        free(p.stamp);
        return nomem(&p);
    }
    mark_keep(&p);
    gn_status s = GN_OK;
    reach r;
    memset(&r, 0, sizeof r);
    if (!p.known) {
        gn__pass_refused(c, "pruning.unreachable", g, GN_NONE,
                         "nothing is preserved (no fetches given): the whole graph is kept");
    } else if (gn__pattern_enabled(c, "pruning.unreachable")) {
        s = compute_reach(&p, &r, gn__pattern_enabled(c, "pruning.identity_n_split"));
        if (s == GN_OK) s = split_identity_n(&p, &r);
        if (s == GN_OK) s = sweep_unreached(&p, r.st);
    }
    free(r.st);
    free(r.base);
    free(r.need);
    free(r.w.v);
    if (p.dirty) gn__attachment_drop(&g->shapes);
    if (s == GN_OK && !gn__pass_deadline_passed(c)) s = dedup_controls(&p);
    if (s == GN_OK && !gn__pass_deadline_passed(c)) s = remove_trivial(&p);
    if (p.dirty) gn__attachment_drop(&g->shapes);
    free(p.keep);
    free(p.stamp);
    for (int i = 0; i < 3; i++) free(p.sc[i].v);
    return s;
}
