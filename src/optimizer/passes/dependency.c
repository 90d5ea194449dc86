/* Dependency optimization (Grappler's dependency_optimizer, docs/reference_grappler.md §3.14).
 *
 * Two rounds of:
 *  1. dependency.transitive_reduction: a control edge u -> v goes when another
 *     path u ~> v exists (v then runs after u anyway). Computed as Grappler
 *     does, on a topological order: from each node with control outputs, a
 *     search bounded to the topological positions up to its last control
 *     target counts paths (0, 1, 2+) to each reached node; a target with 2+
 *     paths has an alternative to its direct edge. Edges out of Merge and
 *     frame changers (Enter / Exit / NextIteration) and edges into frame
 *     changers and into ops with no definition are ignored; so are data edges
 *     into a Merge (a Merge fires on any one data input, so a path ending
 *     there orders nothing). The search walks the IR's fanout lists; each
 *     one gets a floor of steps plus its share of a budget linear in the
 *     graph (16 steps per edge), so the whole reduction stays linear where
 *     Grappler's is quadratic at worst; a cut search only leaves edges in
 *     place (the report says how many sources were cut). Skipped when the
 *     graph has no control edges.
 *  2. A worklist over NoOp / Identity / IdentityN / Const / candidates:
 *     - dependency.const_control: an input-less Const runs first anyway, so
 *       control edges out of it go; if nothing uses it then, it goes too;
 *     - dependency.to_noop: a side-effect-free node whose outputs only drive
 *       control edges becomes a NoOp with its data inputs as control inputs;
 *     - dependency.remove_noop / dependency.remove_identity: a NoOp or an
 *       Identity(N) is bypassed (its inputs wired to its consumers as control
 *       inputs, or as the data they read) when that does not add edges
 *       (in*out <= in+out) nor device crossings, with Grappler's Identity
 *       preconditions (not after a variable, a Recv, a reference, an Enter,
 *       nor a Switch whose Identity drives control edges; not a multi-input
 *       one feeding a Merge or _Retval).
 *  3. dependency.dedup_control: control inputs repeating a data input go
 *     (first over the whole graph, then on every node the worklist touches).
 *  4. dependency.group_cross_device: several control inputs from one other
 *     device (then: host) are gathered by a NoOp on that device,
 *     "GroupCrossDeviceControlEdges_<k>/<node>", so one message crosses.
 *
 * Nothing is deleted when nothing is preserved at the top level (fetches
 * unknown), as in Grappler. Data inputs turned into control inputs never name
 * a Switch: an Identity of the Switch output carries the dependency instead
 * ("ConstantFoldingCtrl/<switch>_<port>", Grappler's AddControlDependency). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_dependency[] = {
    {"dependency.dedup_control", "drop control inputs that repeat a data input"},
    {"dependency.transitive_reduction", "drop control edges that another path already implies"},
    {"dependency.const_control", "drop control edges out of input-less Const nodes, then the Const if unused"},
    {"dependency.to_noop", "turn side-effect-free nodes whose outputs only feed control edges into NoOp"},
    {"dependency.remove_noop", "bypass NoOp nodes when that adds neither edges nor device crossings"},
    {"dependency.remove_identity", "bypass Identity / IdentityN nodes under the same rules"},
    {"dependency.group_cross_device", "route control edges from one other device through one NoOp there"},
    {NULL, NULL},
};

/* Per-source and whole-pass step caps of the transitive reduction. A step is
 * one edge looked at by a search (every fanout of every node it visits, taken
 * or not), so the caps bound the work itself: the pass stays linear, at a few
 * edge visits per edge of the graph. */
#define TR_SOURCE_STEPS 4096u
#define TR_TOTAL_STEPS_PER_EDGE 2u
#define TR_TOTAL_STEPS_MIN (1u << 21)

typedef struct ops_ids {
    uint32_t identity, identity_n, noop, konst, host_const;
    uint32_t sw, ref_sw, merge, ref_merge, enter, ref_enter, exit, ref_exit, next, ref_next;
    uint32_t var[9];    /* variables and reads of them, _Recv, _HostRecv (see is_variable / is_recv) */
} ops_ids;

typedef struct idlist {
    gn_id *v;
    uint32_t n, cap;
} idlist;

static bool idpush(idlist *l, gn_id id)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 16;
        gn_id *a = realloc(l->v, (size_t)nc * sizeof *a);
        if (!a) return false;
        l->v = a;
        l->cap = nc;
    }
    l->v[l->n++] = id;
    return true;
}

typedef struct dp {
    gn__pass_ctx *c;
    gn_graph *g;
    ops_ids op;
    bool known;
    uint32_t cap;        /* size of the per-node arrays */
    uint8_t *keep;       /* preserved, _Arg / _Retval, control outputs */
    uint8_t *inq;        /* on the worklist */
    uint32_t *stamp;
    uint32_t gen;
    gn_id *stack;
    uint32_t n_stack, cap_stack;
    bool dirty;          /* fanouts edited directly: the shape table goes */
    bool has_device;     /* some node has a device: cross-device grouping applies */
    bool on_const, on_noop, on_rm_noop, on_rm_identity; /* patterns enabled (checked once) */
    gn__edge *data;      /* scratch of bypass */
    uint32_t cap_data;
    idlist ctrl;
} dp;

/* A refusal's reason, written only when someone reads it. */
#define WHY(...)                                                                                                     \
    do {                                                                                                             \
        if (why) snprintf(why, len, __VA_ARGS__);                                                                    \
    } while (0)

static uint32_t find_op(const gn_graph *g, const char *s)
{
    return gn__intern_find(g, s, strlen(s));
}

static void init_ops(const gn_graph *g, ops_ids *o)
{
    o->identity = find_op(g, "Identity");
    o->identity_n = find_op(g, "IdentityN");
    o->noop = find_op(g, "NoOp");
    o->konst = find_op(g, "Const");
    o->host_const = find_op(g, "HostConst");
    o->sw = find_op(g, "Switch");
    o->ref_sw = find_op(g, "RefSwitch");
    o->merge = find_op(g, "Merge");
    o->ref_merge = find_op(g, "RefMerge");
    o->enter = find_op(g, "Enter");
    o->ref_enter = find_op(g, "RefEnter");
    o->exit = find_op(g, "Exit");
    o->ref_exit = find_op(g, "RefExit");
    o->next = find_op(g, "NextIteration");
    o->ref_next = find_op(g, "RefNextIteration");
    static const char *const var[9] = {"Variable",       "VariableV2",    "AutoReloadVariable", "VarHandleOp",
                                       "ReadVariableOp", "_VarHandlesOp", "_ReadVariablesOp",   "_Recv",
                                       "_HostRecv"};
    for (int i = 0; i < 9; i++) o->var[i] = find_op(g, var[i]);
}

static gn_status from_graph(dp *d, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(d->c->err, s, "%s", d->g->err.msg);
}

static gn_status nomem(dp *d)
{
    return gn__fail(d->c->err, GN_ERR_NOMEM, "dependency: out of memory");
}

static uint32_t opof(const dp *d, gn_id id) { return d->g->nodes[id].op; }
static bool is_switch(const dp *d, gn_id id) { return opof(d, id) == d->op.sw || opof(d, id) == d->op.ref_sw; }
static bool is_merge(const dp *d, gn_id id) { return opof(d, id) == d->op.merge || opof(d, id) == d->op.ref_merge; }
static bool is_enter(const dp *d, gn_id id) { return opof(d, id) == d->op.enter || opof(d, id) == d->op.ref_enter; }
static bool is_noop(const dp *d, gn_id id) { return opof(d, id) == d->op.noop; }
static bool is_const(const dp *d, gn_id id) { return opof(d, id) == d->op.konst || opof(d, id) == d->op.host_const; }

static bool modifies_frame(const dp *d, gn_id id)
{
    uint32_t op = opof(d, id);
    return op == d->op.enter || op == d->op.ref_enter || op == d->op.exit || op == d->op.ref_exit ||
           op == d->op.next || op == d->op.ref_next;
}

static uint32_t identity_n_types(const dp *d, gn_id id)
{
    const Tensorflow__AttrValue *v = gn__node_attr(d->g, id, "T");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) return UINT32_MAX;
    return (uint32_t)v->list->n_type;
}

/* Identity, or IdentityN of one tensor */
static bool is_identity(const dp *d, gn_id id)
{
    if (opof(d, id) == d->op.identity) return true;
    return opof(d, id) == d->op.identity_n && identity_n_types(d, id) == 1;
}

static bool is_multi_identity_n(const dp *d, gn_id id)
{
    return opof(d, id) == d->op.identity_n && identity_n_types(d, id) != 1;
}

static bool op_in(const char *op, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(op, *list) == 0) return true;
    return false;
}

static bool is_variable(const dp *d, gn_id id)
{
    uint32_t op = opof(d, id);
    for (int i = 0; i < 7; i++)
        if (op == d->op.var[i]) return true;
    return false;
}

static bool is_recv(const dp *d, gn_id id) { return opof(d, id) == d->op.var[7] || opof(d, id) == d->op.var[8]; }

static bool is_ref_output(const gn_graph *g, gn__edge e)
{
    const gn__opdef *od = gn__node_opdef(g, e.node);
    if (!od) return false;
    /* only a Ref(...) output arg makes one (type attrs hold base types) */
    bool maybe = false;
    for (uint32_t k = 0; k < od->n_outputs && !maybe; k++)
        maybe = od->outputs[k].is_ref;
    return maybe && gn__op_output_dtype(od, g, e.node, e.index) > 100;
}

static const char *edge_str(const gn_graph *g, gn__edge e, char *buf, size_t len)
{
    if (e.index == 0) snprintf(buf, len, "%s", gn__node_name(g, e.node));
    else snprintf(buf, len, "%s:%u", gn__node_name(g, e.node), e.index);
    return buf;
}

/* ---- per-node arrays ---------------------------------------------------------------------- */
static gn_status ensure_cap(dp *d)
{
    uint32_t N = d->g->n_nodes;
    if (N <= d->cap) return GN_OK;
    uint32_t nc = d->cap ? d->cap : 64;
    while (nc < N) nc *= 2;
    uint8_t *keep = realloc(d->keep, nc);
    if (keep) d->keep = keep;
    uint8_t *inq = realloc(d->inq, nc);
    if (inq) d->inq = inq;
    uint32_t *stamp = realloc(d->stamp, (size_t)nc * sizeof *stamp);
    if (stamp) d->stamp = stamp;
    if (!keep || !inq || !stamp) return nomem(d);
    memset(d->keep + d->cap, 0, nc - d->cap);
    memset(d->inq + d->cap, 0, nc - d->cap);
    memset(d->stamp + d->cap, 0, (size_t)(nc - d->cap) * sizeof *d->stamp);
    d->cap = nc;
    return GN_OK;
}

static uint32_t next_gen(dp *d)
{
    if (++d->gen == 0) {
        memset(d->stamp, 0, (size_t)d->cap * sizeof *d->stamp);
        d->gen = 1;
    }
    return d->gen;
}

static gn_status push(dp *d, gn_id id)
{
    if (id >= d->cap) GN_TRY(ensure_cap(d));
    if (d->inq[id]) return GN_OK;
    if (d->n_stack == d->cap_stack) {
        uint32_t nc = d->cap_stack ? d->cap_stack * 2 : 1024;
        gn_id *s = realloc(d->stack, (size_t)nc * sizeof *s);
        if (!s) return nomem(d);
        d->stack = s;
        d->cap_stack = nc;
    }
    d->inq[id] = 1;
    d->stack[d->n_stack++] = id;
    return GN_OK;
}

/* ---- control inputs --------------------------------------------------------------------- */
static bool connected(const gn_graph *g, gn_id u, gn_id src)
{
    const gn__node *n = &g->nodes[u];
    for (uint32_t k = 0; k < n->n_in; k++)
        if (n->in[k].node == src) return true;
    for (uint32_t k = 0; k < n->n_ctrl; k++)
        if (n->ctrl[k] == src) return true;
    return false;
}

/* `u` waits for `src` unless it already reads or waits for it; *added says
 * whether an edge was made. */
static gn_status add_ctrl(dp *d, gn_id u, gn_id src, bool *added)
{
    if (added) *added = false;
    if (u == src || connected(d->g, u, src)) return GN_OK;
    if (added) *added = true;
    return from_graph(d, gn__node_add_control(d->g, u, src));
}

/* The node a control dependency on tensor e should name: its producer, or for
 * a Switch output an Identity of it (found, or made as Grappler does). */
static gn_status ctrl_source(dp *d, gn__edge e, const char *pattern, gn_id *out)
{
    gn_graph *g = d->g;
    *out = e.node;
    if (!is_switch(d, e.node)) return GN_OK;
    const gn__node *sw = &g->nodes[e.node];
    for (uint32_t k = 0; k < sw->n_use; k++) {
        gn__use u = sw->use[k];
        if (opof(d, u.node) == d->op.identity && u.slot == 0 && g->nodes[u.node].in[0].index == e.index &&
            g->nodes[u.node].device == sw->device) {
            *out = u.node;
            return GN_OK;
        }
    }
    char suffix[1024], name[1200];
    snprintf(suffix, sizeof suffix, "%s_%u", gn__node_name(g, e.node), e.index);
    gn__pass_unique_name(g, "ConstantFoldingCtrl", suffix, name, sizeof name);
    gn_id id;
    GN_TRY(from_graph(d, gn__node_add(g, name, "Identity", &id)));
    GN_TRY(ensure_cap(d));
    GN_TRY(from_graph(d, gn__node_add_input(g, id, e)));
    gn__node_set_device(g, id, gn__str(g, g->nodes[e.node].device));
    const Tensorflow__AttrValue *t = gn__node_attr(g, e.node, "T");
    if (t) GN_TRY(from_graph(d, gn__node_set_attr(g, id, "T", t)));
    gn__pass_rewrote(d->c, pattern, g, id, "added Identity '%s' of '%s:%u' to carry a control dependency on one branch",
                     name, gn__node_name(g, e.node), e.index);
    *out = id;
    return GN_OK;
}

/* ---- dependency.dedup_control ----------------------------------------------------------- */
static gn_status dedup_node(dp *d, gn_id i)
{
    gn_graph *g = d->g;
    const gn__node *n = &g->nodes[i];
    if (!n->n_ctrl || !n->n_in) return GN_OK;
    uint32_t gen = next_gen(d);
    for (uint32_t k = 0; k < n->n_in; k++) d->stamp[n->in[k].node] = gen;
    for (uint32_t k = n->n_ctrl; k-- > 0;) {
        gn_id src = g->nodes[i].ctrl[k];
        if (d->stamp[src] != gen) continue;
        gn__pass_rewrote(d->c, "dependency.dedup_control", g, i,
                         "dropped control input '^%s' of '%s': '%s' is already a data input", gn__node_name(g, src),
                         gn__node_name(g, i), gn__node_name(g, src));
        GN_TRY(from_graph(d, gn__node_remove_control(g, i, src)));
        d->c->changed = true;
    }
    return GN_OK;
}

/* The first sweep: what is kept, whether any device is set, and the control
 * inputs that repeat a data input. */
static gn_status first_sweep(dp *d)
{
    gn_graph *g = d->g;
    bool dedup = gn__pattern_enabled(d->c, "dependency.dedup_control");
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) d->keep[i] = 1;
        if (n->flags & GN__NODE_PRESERVE) d->known = true;
        if (n->device) d->has_device = true;
        if (dedup) GN_TRY(dedup_node(d, i));
    }
    if (g->kind == GN__GRAPH_FUNCTION && g->lib) {
        d->known = true;
        for (uint32_t f = 0; f < g->lib->n_fns; f++) {
            const gn__function *fn = &g->lib->fns[f];
            if (fn->body != g) continue;
            for (uint32_t j = 0; j < fn->n_control_ret; j++) {
                gn_id r = fn->control_ret_node[j];
                if (r != GN_NONE && gn__node_live(g, r)) d->keep[r] = 1;
            }
        }
    }
    return GN_OK;
}

/* ---- dependency.transitive_reduction ---------------------------------------------------- */
enum {
    TR_NO_IN = 1,   /* frame changer or op without a definition: not a target, not on a path */
    TR_NO_OUT = 2,  /* Merge or frame changer: its out-edges order nothing that can be relied on */
    TR_MERGE = 4,   /* data edges into it order nothing */
};

typedef struct pair {
    gn_id t, src;
} pair;

/* Drops the control edges (t, src) from each t's control inputs; the
 * sources' fanout lists were filtered already. Grouped by target with a
 * counting sort, so a target with many removed inputs costs its degree. */
static gn_status drop_control_inputs(dp *d, const pair *rm, size_t n)
{
    gn_graph *g = d->g;
    uint32_t N = g->n_nodes;
    uint32_t *start = calloc((size_t)N + 1, sizeof *start);
    gn_id *srcs = malloc((n ? n : 1) * sizeof *srcs);
    if (!start || !srcs) {
        /* no memory for the grouping: one edge at a time */
        free(start);
        free(srcs);
        for (size_t i = 0; i < n; i++) {
            gn__node *nt = &g->nodes[rm[i].t];
            for (uint32_t q = 0; q < nt->n_ctrl; q++)
                if (nt->ctrl[q] == rm[i].src) {
                    memmove(&nt->ctrl[q], &nt->ctrl[q + 1], (size_t)(nt->n_ctrl - q - 1) * sizeof *nt->ctrl);
                    nt->n_ctrl--;
                    break;
                }
        }
        d->dirty = true;
        return GN_OK;
    }
    for (size_t i = 0; i < n; i++) start[rm[i].t + 1]++;
    for (uint32_t i = 0; i < N; i++) start[i + 1] += start[i];
    for (size_t i = 0; i < n; i++) srcs[start[rm[i].t]++] = rm[i].src;
    /* start[t] is now the end of t's group; its beginning is start[t - 1] */
    uint32_t begin = 0;
    for (gn_id t = 0; t < N; t++) {
        uint32_t end = start[t];
        if (end > begin) {
            uint32_t gen = next_gen(d);
            for (uint32_t k = begin; k < end; k++) d->stamp[srcs[k]] = gen;
            gn__node *nt = &g->nodes[t];
            uint32_t w = 0;
            for (uint32_t q = 0; q < nt->n_ctrl; q++)
                if (d->stamp[nt->ctrl[q]] != gen) nt->ctrl[w++] = nt->ctrl[q];
            nt->n_ctrl = w;
        }
        begin = end;
    }
    free(start);
    free(srcs);
    d->dirty = true;
    return GN_OK;
}

static gn_status transitive_reduction(dp *d)
{
    gn_graph *g = d->g;
    const char *pat = "dependency.transitive_reduction";
    if (!gn__pattern_enabled(d->c, pat)) return GN_OK;
    uint32_t N = g->n_nodes;
    uint8_t *fl = calloc(N ? N : 1, 1);
    if (!fl) return nomem(d);
    uint64_t n_ctl = 0, n_edges = 0, n_outs = 0;
    for (gn_id i = 0; i < N; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        n_ctl += n->n_ctrl;
        n_edges += (uint64_t)n->n_in + n->n_ctrl;
        n_outs += (uint64_t)n->n_use + n->n_cuse;
        if (modifies_frame(d, i) || n->opdef < 0) fl[i] |= TR_NO_IN;
        if (modifies_frame(d, i) || is_merge(d, i)) fl[i] |= TR_NO_OUT;
        if (is_merge(d, i)) fl[i] |= TR_MERGE;
    }
    if (!n_ctl) {
        free(fl);
        return GN_OK;
    }
    gn_id *order = NULL;
    uint32_t n = 0;
    if (gn__graph_topo(g, &order, &n) != GN_OK) {
        gn__pass_refused(d->c, pat, g, GN_NONE, "skipped: no topological order (%s)", g->err.msg);
        gn__err_clear(&g->err);
        free(fl);
        return GN_OK;
    }
    /* The searches run on a copy of the fanouts in topological positions
     * (compressed rows: fan[off[p] .. off[p + 1]) are the fanouts of the node
     * at position p, data then control, in the graph's order), so that a step
     * reads a few small arrays instead of a node record and the per-node
     * arrays. An entry is the fanout's position, or UINT32_MAX where the
     * search never enters it (a TR_NO_IN node, or a data edge into a Merge).
     * Sources are taken in topological order and a search only reaches
     * positions after its source, so the control fanouts a search filters
     * (its source's) are never read again: the copy stays exact. */
    uint32_t *pos = malloc((N ? N : 1) * sizeof *pos);
    uint32_t *off = malloc(((size_t)n + 1) * sizeof *off);
    uint8_t *pfl = malloc(n ? n : 1);
    uint32_t *fan = n_outs < UINT32_MAX ? malloc((size_t)(n_outs ? n_outs : 1) * sizeof *fan) : NULL;
    /* per position: (search number << 2) | paths found so far (0, 1, 2+) */
    uint32_t *vis = calloc(n ? n : 1, sizeof *vis);
    uint32_t *stack = malloc(((size_t)2 * n + 2) * sizeof *stack);
    pair *rm = NULL;
    size_t n_rm = 0, cap_rm = 0;
    gn_status s = GN_OK;
    if (!pos || !off || !pfl || !fan || !vis || !stack) {
        s = nomem(d);
        goto out;
    }
    for (gn_id i = 0; i < N; i++) pos[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) pos[order[i]] = i;
    uint64_t n_fan = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* nodes in topological order are all over memory: fetch ahead */
        if (i + 16 < n) GN__PREFETCH(&g->nodes[order[i + 16]].use);
        if (i + 8 < n) {
            const gn__node *a = &g->nodes[order[i + 8]];
            GN__PREFETCH(a->use);
            GN__PREFETCH(a->cuse);
        }
        const gn__node *nx = &g->nodes[order[i]];
        off[i] = (uint32_t)n_fan;
        pfl[i] = fl[order[i]];
        uint32_t deg = nx->n_use + nx->n_cuse;
        for (uint32_t k = 0; k < deg; k++) {
            gn_id y = k < nx->n_use ? nx->use[k].node : nx->cuse[k - nx->n_use];
            bool skip = (fl[y] & TR_NO_IN) || (k < nx->n_use && (fl[y] & TR_MERGE));
            fan[n_fan++] = skip ? UINT32_MAX : pos[y];
        }
    }
    off[n] = (uint32_t)n_fan;
    /* the budget: linear in the graph; each search gets a floor plus its
     * share of what is left */
    uint64_t total = 0, budget = (uint64_t)TR_TOTAL_STEPS_PER_EDGE * (n_edges + n);
    if (budget < TR_TOTAL_STEPS_MIN) budget = TR_TOTAL_STEPS_MIN;
    uint64_t n_src = 0;
    for (gn_id x = 0; x < N; x++)
        n_src += !(g->nodes[x].flags & GN__NODE_DEAD) && g->nodes[x].n_cuse && !(fl[x] & TR_NO_OUT);
    uint32_t gen = 0, n_cut = 0;
    gn_id first_cut = GN_NONE;
    for (uint32_t i = 0; i < n && s == GN_OK; i++) {
        if (i + 8 < n) GN__PREFETCH(&g->nodes[order[i + 8]].use);
        gn_id src = order[i];
        gn__node *ns = &g->nodes[src];
        if (!ns->n_cuse || (fl[src] & TR_NO_OUT)) continue;
        n_src--;
        /* the range: up to the last control target; nothing to find when the
         * first fanout is already that target */
        uint32_t hi = 0, lo = UINT32_MAX;
        for (uint32_t k = 0; k < ns->n_cuse; k++) {
            gn_id t = ns->cuse[k];
            if (fl[t] & TR_NO_IN) continue;
            if (pos[t] > hi) hi = pos[t];
            if (pos[t] < lo) lo = pos[t];
        }
        for (uint32_t k = 0; k < ns->n_use; k++) {
            gn_id t = ns->use[k].node;
            if (!(fl[t] & (TR_NO_IN | TR_MERGE)) && pos[t] < lo) lo = pos[t];
        }
        if (lo >= hi) continue;
        if ((i & 1023) == 1023 && gn__pass_deadline_passed(d->c)) break;
        if (total > budget) {
            gn__pass_refused(d->c, pat, g, GN_NONE,
                             "stopped after %llu search steps (the cap for this graph): control edges out of the "
                             "%llu remaining nodes were left as they are",
                             (unsigned long long)total, (unsigned long long)n_src + 1);
            break;
        }
        uint64_t cap64 = TR_SOURCE_STEPS + (budget - total) / (n_src + 1);
        uint32_t cap = cap64 > UINT32_MAX ? UINT32_MAX : (uint32_t)cap64;
        if (++gen >= (1u << 30)) {
            memset(vis, 0, (size_t)n * sizeof *vis);
            gen = 1;
        }
        uint32_t tag = gen << 2;
        /* count paths (0, 1, 2+) from src to the positions up to hi */
        uint32_t sp = 0, steps = 0;
        bool cut = false;
        stack[sp++] = i;
        while (sp && !cut) {
            uint32_t x = stack[--sp];
            if (x != i && (pfl[x] & TR_NO_OUT)) continue;
            uint32_t b = off[x], deg = off[x + 1] - b;
            if (deg >= cap - steps) {
                steps = cap;
                cut = true;
                break;
            }
            steps += deg;
            for (uint32_t k = 0; k < deg; k++) {
                uint32_t y = fan[b + k];
                if (y > hi) continue;
                uint32_t v = vis[y];
                if ((v & ~3u) != tag) v = tag;
                if ((v & 3u) >= 2) continue;
                vis[y] = v + 1;
                stack[sp++] = y;
            }
        }
        total += steps;
        if (cut && !n_cut++) first_cut = src;
        /* a target reached twice has a path besides its direct edge */
        uint32_t w = 0;
        for (uint32_t k = 0; k < ns->n_cuse; k++) {
            gn_id t = ns->cuse[k];
            uint32_t pt = pos[t];
            if ((fl[t] & TR_NO_IN) || pt == UINT32_MAX || (vis[pt] & ~3u) != tag || (vis[pt] & 3u) < 2) {
                ns->cuse[w++] = t;
                continue;
            }
            if (n_rm == cap_rm) {
                size_t nc = cap_rm ? cap_rm * 2 : 256;
                pair *a = realloc(rm, nc * sizeof *a);
                if (!a) {
                    s = nomem(d);
                    ns->cuse[w++] = t;
                    continue;
                }
                rm = a;
                cap_rm = nc;
            }
            rm[n_rm++] = (pair){t, src};
        }
        ns->n_cuse = w;
    }
    if (n_cut)
        gn__pass_refused(d->c, pat, g, first_cut,
                         "control edges out of %u node%s (first: '%s') were checked only in part: their searches "
                         "reached the step cap",
                         n_cut, n_cut == 1 ? "" : "s", gn__node_name(g, first_cut));
    if (d->c->report)
        for (size_t i = 0; i < n_rm; i++)
            gn__pass_rewrote(d->c, pat, g, rm[i].t,
                             "dropped control input '^%s' of '%s': another path from '%s' already runs it first",
                             gn__node_name(g, rm[i].src), gn__node_name(g, rm[i].t), gn__node_name(g, rm[i].src));
    if (n_rm) {
        /* the sources' lists are filtered; the targets' follow (even after a
         * failure above, so the fanouts stay consistent) */
        gn_status s2 = drop_control_inputs(d, rm, n_rm);
        if (s == GN_OK) s = s2;
        d->c->changed = true;
        d->dirty = true;
    }
out:
    free(fl);
    free(order);
    free(pos);
    free(off);
    free(pfl);
    free(fan);
    free(vis);
    free(stack);
    free(rm);
    return s;
}

/* ---- node rules ------------------------------------------------------------------------- */
static bool free_of_side_effect(const dp *d, gn_id id)
{
    const gn_graph *g = d->g;
    const char *op = gn__node_op(g, id);
    static const char *const placeholders[] = {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault", NULL};
    static const char *const sends[] = {"_Send", "_HostSend", NULL};
    if (op_in(op, placeholders) || op_in(op, sends)) return false;
    if (g->nodes[id].opdef < 0) return false;
    const gn__opdef *od = gn__op_at((uint32_t)g->nodes[id].opdef);
    if (od->flags & GN__OPF_STATEFUL) return false;
    for (uint32_t k = 0; k < od->n_inputs; k++)
        if (od->inputs[k].is_ref) return false;
    if (strstr(op, "Queue")) return false;
    /* ops that write an input in place ("InplaceUpdate", ...) */
    for (const char *p = op; *p; p++)
        if ((p[0] == 'I' || p[0] == 'i') && (p[1] == 'n') && (p[2] == 'p' || p[2] == 'P') && strncmp(p + 3, "lace", 4) == 0)
            return false;
    return true;
}

/* Grappler's SafeToRemoveIdentity, plus: not after an Enter (frame
 * boundary) nor a reference other than a RefSwitch output; a Switch input
 * of any port of an IdentityN counts. */
static bool safe_to_remove_identity(const dp *d, gn_id id, char *why, size_t len)
{
    const gn_graph *g = d->g;
    const gn__node *n = &g->nodes[id];
    const char *op = gn__node_op(g, id), *name = gn__node_name(g, id);
    if (d->keep[id]) {
        WHY("%s '%s' kept: it is preserved", op, name);
        return false;
    }
    if (!d->known) {
        WHY("%s '%s' kept: nothing is preserved (no fetches given), so no node is deleted", op, name);
        return false;
    }
    if (n->n_in < 1) {
        WHY("%s '%s' kept: it has no data input", op, name);
        return false;
    }
    gn_id in0 = n->in[0].node;
    if (is_variable(d, in0)) {
        WHY("%s '%s' kept: it reads variable '%s'", op, name, gn__node_name(g, in0));
        return false;
    }
    if (is_recv(d, in0)) {
        WHY("%s '%s' kept: it follows a Recv ('%s')", op, name, gn__node_name(g, in0));
        return false;
    }
    if (is_enter(d, in0)) {
        WHY("%s '%s' kept: it follows an Enter (frame boundary)", op, name);
        return false;
    }
    bool follows_switch = false;
    for (uint32_t k = 0; k < n->n_in; k++) {
        /* a reference read from a RefSwitch may be bypassed, as in Grappler
         * (its consumers dereference it); other references are kept */
        if (is_ref_output(g, n->in[k]) && !is_switch(d, n->in[k].node)) {
            WHY("%s '%s' kept: its input '%s' is a reference", op, name, gn__node_name(g, n->in[k].node));
            return false;
        }
        follows_switch |= is_switch(d, n->in[k].node);
    }
    if (follows_switch && n->n_cuse) {
        WHY("%s '%s' kept: it follows a Switch and drives control dependencies", op, name);
        return false;
    }
    if (n->n_in + n->n_ctrl > 1) {
        for (uint32_t k = 0; k < n->n_use + n->n_cuse; k++) {
            gn_id u = k < n->n_use ? n->use[k].node : n->cuse[k - n->n_use];
            if ((g->nodes[u].flags & GN__NODE_FN_RET) || is_merge(d, u)) {
                WHY("%s '%s' kept: it has several inputs and feeds %s '%s'", op, name, gn__node_op(g, u),
                         gn__node_name(g, u));
                return false;
            }
        }
    }
    return true;
}

/* Grappler's SafeToConvertToNoOp; `why` gets the reason when it is not. */
static bool safe_to_noop(const dp *d, gn_id id, char *why, size_t len)
{
    static const char *const never[] = {"Assert",     "CheckNumerics", "_Retval", "_Arg", "_ParallelConcatUpdate",
                                        "TPUExecute", "TPUCompile",    "ControlTrigger", NULL};
    const gn_graph *g = d->g;
    const gn__node *n = &g->nodes[id];
    const char *op = gn__node_op(g, id), *name = gn__node_name(g, id);
    if (why) why[0] = 0;
    if (n->n_use) return false;
    if (d->keep[id]) {
        WHY("%s '%s' kept: it is preserved", op, name);
        return false;
    }
    if (!d->known) {
        WHY("%s '%s' kept: nothing is preserved (no fetches given)", op, name);
        return false;
    }
    if (is_merge(d, id) || is_switch(d, id) || modifies_frame(d, id)) {
        WHY("%s '%s' kept: it is control flow", op, name);
        return false;
    }
    if (n->opdef < 0) {
        WHY("%s '%s' kept: %s is not an op we know", op, name, op);
        return false;
    }
    if (!free_of_side_effect(d, id)) {
        WHY("%s '%s' kept: it may have side effects (stateful, a placeholder, or writes an input)", op,
                 name);
        return false;
    }
    if (strncmp(op, "Submodel", 8) == 0 || op_in(op, never)) {
        WHY("%s '%s' kept: %s is never rewritten", op, name, op);
        return false;
    }
    const gn__opdef *od = gn__op_at((uint32_t)n->opdef);
    if (od->n_outputs == 0) {
        WHY("%s '%s' kept: it has no outputs", op, name);
        return false;
    }
    if ((opof(d, id) == d->op.identity || opof(d, id) == d->op.identity_n) && !safe_to_remove_identity(d, id, why, len))
        return false;
    /* An Identity of a Switch output is what a control dependency on that
     * branch is carried by (ctrl_source): as a NoOp it would need a new
     * Identity of the same output, which would in turn become a NoOp, without
     * end. */
    if (opof(d, id) == d->op.identity)
        for (uint32_t k = 0; k < n->n_in; k++)
            if (is_switch(d, n->in[k].node)) {
                WHY("%s '%s' kept: it reads Switch '%s', and a NoOp in its place would need another Identity of it",
                    op, name, gn__node_name(g, n->in[k].node));
                return false;
            }
    return true;
}

/* Distinct consumers (data and control) of id, in fanout order. */
static gn_status consumers(dp *d, gn_id id, idlist *out)
{
    const gn__node *n = &d->g->nodes[id];
    uint32_t gen = next_gen(d);
    out->n = 0;
    for (uint32_t k = 0; k < n->n_use + n->n_cuse; k++) {
        gn_id u = k < n->n_use ? n->use[k].node : n->cuse[k - n->n_use];
        if (d->stamp[u] == gen) continue;
        d->stamp[u] = gen;
        if (!idpush(out, u)) return nomem(d);
    }
    return GN_OK;
}

/* Grappler's BypassingNodeIsBeneficial. */
static bool bypass_beneficial(dp *d, gn_id id, const idlist *outs, char *why, size_t len)
{
    const gn_graph *g = d->g;
    const gn__node *n = &g->nodes[id];
    const char *op = gn__node_op(g, id), *name = gn__node_name(g, id);
    bool identity = is_identity(d, id), multi = is_multi_identity_n(d, id);
    uint64_t n_in = (uint64_t)n->n_in + n->n_ctrl, n_out = outs->n, edges;
    if (multi) {
        edges = n->n_in + (uint64_t)n->n_ctrl * n_out + n->n_use + (uint64_t)n->n_cuse * n_in;
    } else {
        edges = n_in * n_out;
    }
    if (edges > n_in + n_out) {
        WHY("%s '%s' kept: bypassing it would add edges (%llu instead of %llu)", op, name,
                 (unsigned long long)edges, (unsigned long long)(n_in + n_out));
        return false;
    }
#define IN_NODE(k) ((k) < n->n_in ? n->in[k].node : n->ctrl[(k) - n->n_in])
    uint32_t dev = n->device;
    if ((n_in == 1 && n_out > 1 && g->nodes[IN_NODE(0)].device != dev) ||
        (n_in > 1 && n_out == 1 && g->nodes[outs->v[0]].device != dev)) {
        WHY("%s '%s' kept: bypassing it would add device crossings", op, name);
        return false;
    }
    uint64_t cross_in = 0, cross_out = 0, cross_after = 0;
    for (uint32_t k = 0; k < n_in; k++) cross_in += g->nodes[IN_NODE(k)].device != dev;
    for (uint32_t k = 0; k < n_out; k++) cross_out += g->nodes[outs->v[k]].device != dev;
    if (cross_in || cross_out)
        for (uint32_t k = 0; k < n_in; k++)
            for (uint32_t j = 0; j < n_out; j++) cross_after += g->nodes[IN_NODE(k)].device != g->nodes[outs->v[j]].device;
#undef IN_NODE
    if (cross_after > cross_in + cross_out) {
        WHY("%s '%s' kept: bypassing it would add device crossings (%llu instead of %llu)", op, name,
                 (unsigned long long)cross_after, (unsigned long long)(cross_in + cross_out));
        return false;
    }
    if ((identity || multi) && cross_in && cross_out && cross_after) {
        WHY("%s '%s' kept: it follows a device crossing", op, name);
        return false;
    }
    return true;
}

/* Removes NoOp / Identity / IdentityN `id`, rewiring its consumers (outs:
 * its distinct consumers). */
static gn_status bypass(dp *d, gn_id id, const char *pattern, const idlist *outs)
{
    gn_graph *g = d->g;
    const gn__node *n = &g->nodes[id];
    uint32_t n_data = n->n_in, n_ctrl = n->n_ctrl;
    /* copies: the edits below change the node's lists */
    if (n_data > d->cap_data) {
        gn__edge *a = realloc(d->data, (size_t)n_data * sizeof *a);
        if (!a) return nomem(d);
        d->data = a;
        d->cap_data = n_data;
    }
    if (n_data) memcpy(d->data, n->in, n_data * sizeof *d->data);
    d->ctrl.n = 0;
    for (uint32_t k = 0; k < n_ctrl; k++)
        if (!idpush(&d->ctrl, n->ctrl[k])) return nomem(d);
    const gn__edge *data = d->data;
    const gn_id *ctrl = d->ctrl.v;
    if (d->c->report) {
        char ebuf[512];
        if (is_noop(d, id))
            gn__pass_rewrote(d->c, pattern, g, id, "bypassed NoOp '%s' (%u inputs, %u consumers)", gn__node_name(g, id),
                             n_ctrl, outs->n);
        else if (n_data == 1)
            gn__pass_rewrote(d->c, pattern, g, id, "bypassed %s '%s': its consumers now read '%s'", gn__node_op(g, id),
                             gn__node_name(g, id), edge_str(g, data[0], ebuf, sizeof ebuf));
        else
            gn__pass_rewrote(d->c, pattern, g, id, "bypassed %s '%s': its consumers now read its %u inputs",
                             gn__node_op(g, id), gn__node_name(g, id), n_data);
    }
    /* who waited on it (before the data edges move) */
    uint32_t gen = next_gen(d);
    for (uint32_t k = 0; k < n->n_cuse; k++) d->stamp[n->cuse[k]] = gen;
    gn_status s = GN_OK;
    for (uint32_t k = 0; k < n_data && s == GN_OK; k++)
        s = from_graph(d, gn__graph_forward_output(g, (gn__edge){id, k}, data[k]));
    /* control consumers wait for what it read; every consumer for what it waited on */
    for (uint32_t j = 0; j < outs->n && s == GN_OK; j++) {
        gn_id u = outs->v[j];
        bool added;
        if (d->stamp[u] == gen)
            for (uint32_t k = 0; k < n_data && s == GN_OK; k++) {
                s = add_ctrl(d, u, data[k].node, &added);
                if (s == GN_OK && added) s = push(d, data[k].node);
            }
        for (uint32_t k = 0; k < n_ctrl && s == GN_OK; k++) {
            s = add_ctrl(d, u, ctrl[k], &added);
            if (s == GN_OK && added) s = push(d, ctrl[k]);
        }
    }
    if (s == GN_OK) s = from_graph(d, gn__node_remove(g, id));
    if (s == GN_OK) d->c->changed = true;
    for (uint32_t j = 0; j < outs->n && s == GN_OK; j++) s = push(d, outs->v[j]);
    for (uint32_t k = 0; k < n_data && s == GN_OK; k++) s = push(d, data[k].node);
    for (uint32_t k = 0; k < n_ctrl && s == GN_OK; k++) s = push(d, ctrl[k]);
    return s;
}

/* Data inputs become control inputs (Switch outputs through an Identity),
 * the op becomes NoOp, the attrs go. */
static gn_status convert_to_noop(dp *d, gn_id id)
{
    gn_graph *g = d->g;
    const char *pat = "dependency.to_noop";
    uint32_t n_data = g->nodes[id].n_in;
    gn__edge *data = malloc((n_data ? n_data : 1) * sizeof *data);
    if (!data) return nomem(d);
    if (n_data) memcpy(data, g->nodes[id].in, n_data * sizeof *data);
    gn__pass_rewrote(d->c, pat, g, id, "%s '%s' became a NoOp: its outputs only drive control dependencies",
                     gn__node_op(g, id), gn__node_name(g, id));
    gn_status s = GN_OK;
    for (uint32_t k = n_data; k-- > 0 && s == GN_OK;) s = from_graph(d, gn__node_remove_input(g, id, k));
    for (uint32_t k = 0; k < n_data && s == GN_OK; k++) {
        gn_id src;
        s = ctrl_source(d, data[k], pat, &src);
        if (s == GN_OK) s = add_ctrl(d, id, src, NULL);
        if (s == GN_OK) s = push(d, data[k].node);
    }
    while (s == GN_OK && g->nodes[id].n_attr)
        s = from_graph(d, gn__node_remove_attr(g, id, gn__str(g, g->nodes[id].attr[g->nodes[id].n_attr - 1].key)));
    if (s == GN_OK) s = from_graph(d, gn__node_set_op(g, id, "NoOp"));
    if (s == GN_OK) s = push(d, id);
    d->c->changed = true;
    free(data);
    return s;
}

static gn_status optimize_node(dp *d, gn_id id, idlist *outs)
{
    gn_graph *g = d->g;
    const gn__node *n = &g->nodes[id];
    if (is_const(d, id) && !n->n_in && !n->n_ctrl) {
        if (!d->on_const) return GN_OK;
        /* all its control edges at once: each consumer's list, then its own */
        gn__node *k = &g->nodes[id];
        for (uint32_t j = 0; j < k->n_cuse; j++) {
            gn_id v = k->cuse[j];
            gn__pass_rewrote(d->c, "dependency.const_control", g, v,
                             "dropped control input '^%s' of '%s': a Const without inputs runs first anyway",
                             gn__node_name(g, id), gn__node_name(g, v));
            gn__node *nv = &g->nodes[v];
            for (uint32_t q = 0; q < nv->n_ctrl; q++)
                if (nv->ctrl[q] == id) {
                    memmove(&nv->ctrl[q], &nv->ctrl[q + 1], (size_t)(nv->n_ctrl - q - 1) * sizeof *nv->ctrl);
                    nv->n_ctrl--;
                    break;
                }
            GN_TRY(push(d, v));
            k = &g->nodes[id];
        }
        if (k->n_cuse) {
            k->n_cuse = 0;
            d->dirty = true;
            d->c->changed = true;
        }
        n = &g->nodes[id];
        if (!n->n_use && d->known && !d->keep[id]) {
            gn__pass_rewrote(d->c, "dependency.const_control", g, id, "deleted Const '%s': nothing uses it",
                             gn__node_name(g, id));
            GN_TRY(from_graph(d, gn__node_remove(g, id)));
            d->c->changed = true;
        }
        return GN_OK;
    }
    bool noop = is_noop(d, id);
    if (!noop && d->on_noop && safe_to_noop(d, id, NULL, 0))
        return convert_to_noop(d, id);
    bool ident = opof(d, id) == d->op.identity || opof(d, id) == d->op.identity_n;
    if (!noop && !ident) return GN_OK;
    const char *pat = noop ? "dependency.remove_noop" : "dependency.remove_identity";
    if (!(noop ? d->on_rm_noop : d->on_rm_identity)) return GN_OK;
    if (noop && (d->keep[id] || !d->known)) return GN_OK;
    if (ident && !safe_to_remove_identity(d, id, NULL, 0)) return GN_OK;
    GN_TRY(consumers(d, id, outs));
    if (!bypass_beneficial(d, id, outs, NULL, 0)) return GN_OK;
    return bypass(d, id, pat, outs);
}

static gn_status optimize_dependencies(dp *d)
{
    gn_graph *g = d->g;
    idlist outs = {0};
    gn_status s = ensure_cap(d);
    uint32_t N = g->n_nodes;
    for (gn_id i = 0; i < N && s == GN_OK; i++) {
        if (!gn__node_live(g, i)) continue;
        if (is_noop(d, i) || opof(d, i) == d->op.identity || opof(d, i) == d->op.identity_n || is_const(d, i) ||
            safe_to_noop(d, i, NULL, 0))
            s = push(d, i);
    }
    uint32_t steps = 0;
    bool dedup = gn__pattern_enabled(d->c, "dependency.dedup_control");
    while (d->n_stack && s == GN_OK) {
        if ((++steps & 4095) == 0 && gn__pass_deadline_passed(d->c)) break;
        gn_id id = d->stack[--d->n_stack];
        d->inq[id] = 0;
        if (!gn__node_live(g, id)) continue;
        /* a consumer that now reads what it waited on */
        if (dedup) s = dedup_node(d, id);
        if (s == GN_OK) s = optimize_node(d, id, &outs);
    }
    /* anything left on the stack (deadline) is simply not looked at again */
    for (uint32_t k = 0; k < d->n_stack; k++) d->inq[d->stack[k]] = 0;
    d->n_stack = 0;
    free(outs.v);
    return s;
}

/* What stays, and why (once, after the last round). */
static gn_status report_refusals(dp *d)
{
    gn_graph *g = d->g;
    idlist outs = {0};
    char why[1024];
    gn_status s = ensure_cap(d);
    for (gn_id i = 0; i < g->n_nodes && s == GN_OK; i++) {
        if (!gn__node_live(g, i)) continue;
        const gn__node *n = &g->nodes[i];
        if (is_const(d, i)) continue;
        bool noop = is_noop(d, i), ident = opof(d, i) == d->op.identity || opof(d, i) == d->op.identity_n;
        if (noop || ident) {
            const char *pat = noop ? "dependency.remove_noop" : "dependency.remove_identity";
            if (!gn__pattern_enabled(d->c, pat)) continue;
            if (noop && d->keep[i]) {
                gn__pass_refused(d->c, pat, g, i, "NoOp '%s' kept: it is preserved", gn__node_name(g, i));
                continue;
            }
            if (noop && !d->known) {
                gn__pass_refused(d->c, pat, g, i, "NoOp '%s' kept: nothing is preserved (no fetches given)",
                                 gn__node_name(g, i));
                continue;
            }
            if (ident && !safe_to_remove_identity(d, i, why, sizeof why)) {
                gn__pass_refused(d->c, pat, g, i, "%s", why);
                continue;
            }
            s = consumers(d, i, &outs);
            if (s == GN_OK && !bypass_beneficial(d, i, &outs, why, sizeof why)) gn__pass_refused(d->c, pat, g, i, "%s", why);
            continue;
        }
        if (!n->n_use && n->n_cuse && !(n->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) &&
            d->on_noop && !safe_to_noop(d, i, why, sizeof why) && why[0])
            gn__pass_refused(d->c, "dependency.to_noop", g, i, "%s", why);
    }
    free(outs.v);
    return s;
}

/* ---- dependency.group_cross_device ------------------------------------------------------- */
/* The task part of a device name ("/job:w/replica:0/task:1" of
 * "/job:w/replica:0/task:1/device:GPU:0"), as TensorFlow's SplitDeviceName;
 * false when the name does not parse or has no device type and id. */
static bool split_device(const char *dev, char *task, size_t len)
{
    char job[256] = "", rep[64] = "", tsk[64] = "";
    bool has_type = false, has_id = false;
    const char *p = dev;
    if (*p != '/') return false;
    while (*p) {
        if (*p != '/') return false;
        p++;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char part[256];
        if (n >= sizeof part) return false;
        memcpy(part, p, n);
        part[n] = 0;
        char *colon = strchr(part, ':');
        if (!colon) return false;
        *colon = 0;
        const char *key = part, *val = colon + 1;
        if (strcmp(key, "job") == 0) snprintf(job, sizeof job, "%s", val);
        else if (strcmp(key, "replica") == 0) snprintf(rep, sizeof rep, "%s", val);
        else if (strcmp(key, "task") == 0) snprintf(tsk, sizeof tsk, "%s", val);
        else if (strcmp(key, "device") == 0) {
            const char *c2 = strchr(val, ':');
            has_type = c2 != NULL || *val;
            has_id = c2 && c2[1] && strcmp(c2 + 1, "*") != 0;
        } else {
            /* legacy "/cpu:0", "/gpu:1" */
            has_type = true;
            has_id = *val && strcmp(val, "*") != 0;
        }
        p += n;
    }
    if (!has_type || !has_id) return false;
    size_t o = 0;
    task[0] = 0;
    if (job[0]) o += (size_t)snprintf(task + o, o < len ? len - o : 0, "/job:%s", job);
    if (rep[0]) o += (size_t)snprintf(task + o, o < len ? len - o : 0, "/replica:%s", rep);
    if (tsk[0]) o += (size_t)snprintf(task + o, o < len ? len - o : 0, "/task:%s", tsk);
    return o < len;
}

typedef struct devkey {
    uint32_t *key;      /* interned device string id -> grouping key (a representative device id) */
    uint32_t n;
} devkey;

/* Grouping key of each device string: itself, or at host granularity the
 * first device string with the same task part. */
static gn_status build_keys(dp *d, bool host, devkey *k)
{
    gn_graph *g = d->g;
    k->n = g->names.n;
    k->key = malloc((k->n ? k->n : 1) * sizeof *k->key);
    if (!k->key) return nomem(d);
    for (uint32_t i = 0; i < k->n; i++) k->key[i] = i;
    if (!host) return GN_OK;
    /* distinct devices in use */
    uint8_t *seen = calloc(k->n ? k->n : 1, 1);
    idlist devs = {0};
    gn_status s = seen ? GN_OK : nomem(d);
    for (gn_id i = 0; i < g->n_nodes && s == GN_OK; i++) {
        uint32_t dv = g->nodes[i].device;
        if (!gn__node_live(g, i) || !dv || seen[dv]) continue;
        seen[dv] = 1;
        if (!idpush(&devs, dv)) s = nomem(d);
    }
    char (*task)[512] = s == GN_OK ? malloc((devs.n ? devs.n : 1) * sizeof *task) : NULL;
    if (s == GN_OK && !task) s = nomem(d);
    for (uint32_t i = 0; i < devs.n && s == GN_OK; i++) {
        const char *name = gn__str(g, devs.v[i]);
        if (!split_device(name, task[i], sizeof task[i])) snprintf(task[i], sizeof task[i], "%s", name);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(task[j], task[i]) == 0) {
                k->key[devs.v[i]] = k->key[devs.v[j]];
                break;
            }
    }
    free(task);
    free(seen);
    free(devs.v);
    if (s != GN_OK) {
        free(k->key);
        k->key = NULL;
    }
    return s;
}

static gn_status group_cross_device(dp *d, bool host)
{
    gn_graph *g = d->g;
    const char *pat = "dependency.group_cross_device";
    if (!gn__pattern_enabled(d->c, pat)) return GN_OK;
    if (!d->has_device) return GN_OK;
    devkey k = {0};
    GN_TRY(build_keys(d, host, &k));
    /* per key: count of control inputs from it, and its NoOp */
    uint32_t *cnt = calloc(k.n ? k.n : 1, sizeof *cnt), *cstamp = calloc(k.n ? k.n : 1, sizeof *cstamp);
    gn_id *noop = malloc((k.n ? k.n : 1) * sizeof *noop);
    idlist keys = {0}, moved = {0};
    gn_status s = (cnt && cstamp && noop) ? GN_OK : nomem(d);
    uint32_t N = g->n_nodes, gen = 0;
    for (gn_id i = 0; i < N && s == GN_OK; i++) {
        const gn__node *n = &g->nodes[i];
        if ((n->flags & GN__NODE_DEAD) || !n->device || n->n_ctrl < 2) continue;
        uint32_t me = k.key[n->device];
        gen++;
        keys.n = 0;
        for (uint32_t j = 0; j < n->n_ctrl && s == GN_OK; j++) {
            uint32_t dv = g->nodes[n->ctrl[j]].device;
            if (!dv || k.key[dv] == me) continue;
            uint32_t key = k.key[dv];
            if (cstamp[key] != gen) {
                cstamp[key] = gen;
                cnt[key] = 0;
                noop[key] = GN_NONE;
            }
            if (++cnt[key] == 2 && !idpush(&keys, key)) s = nomem(d);
        }
        if (!keys.n || s != GN_OK) continue;
        uint32_t num = 0;
        for (uint32_t q = 0; q < keys.n && s == GN_OK; q++) {
            uint32_t key = keys.v[q];
            /* the device of the second control input from that key, as Grappler */
            uint32_t seen = 0, dev = 0;
            n = &g->nodes[i];
            for (uint32_t j = 0; j < n->n_ctrl && seen < 2; j++) {
                uint32_t dv = g->nodes[n->ctrl[j]].device;
                if (dv && k.key[dv] == key && ++seen == 2) dev = dv;
            }
            char prefix[64], name[2048];
            gn_id id = GN_NONE;
            do {
                snprintf(prefix, sizeof prefix, "GroupCrossDeviceControlEdges_%u", num++);
                snprintf(name, sizeof name, "%s/%s", prefix, gn__node_name(g, i));
            } while (gn__graph_find(g, name) != GN_NONE);
            s = from_graph(d, gn__node_add(g, name, "NoOp", &id));
            if (s == GN_OK) s = ensure_cap(d);
            if (s != GN_OK) break;
            gn__node_set_device(g, id, gn__str(g, dev));
            noop[key] = id;
        }
        /* reroute */
        moved.n = 0;
        n = &g->nodes[i];
        for (uint32_t j = 0; j < n->n_ctrl && s == GN_OK; j++) {
            gn_id src = n->ctrl[j];
            uint32_t dv = g->nodes[src].device;
            if (!dv || k.key[dv] == me || cstamp[k.key[dv]] != gen || noop[k.key[dv]] == GN_NONE) continue;
            if (!idpush(&moved, src)) s = nomem(d);
        }
        for (uint32_t j = 0; j < moved.n && s == GN_OK; j++) {
            gn_id src = moved.v[j];
            s = from_graph(d, gn__node_remove_control(g, i, src));
            if (s == GN_OK) s = from_graph(d, gn__node_add_control(g, noop[k.key[g->nodes[src].device]], src));
        }
        for (uint32_t q = 0; q < keys.n && s == GN_OK; q++) {
            gn_id id = noop[keys.v[q]];
            s = from_graph(d, gn__node_add_control(g, i, id));
            if (s == GN_OK)
                gn__pass_rewrote(d->c, pat, g, i, "control inputs of '%s' from %s '%s' now come through NoOp '%s' (%u)",
                                 gn__node_name(g, i), host ? "host" : "device", gn__str(g, g->nodes[id].device),
                                 gn__node_name(g, id), g->nodes[id].n_ctrl);
        }
        if (s == GN_OK) d->c->changed = true;
    }
    free(cnt);
    free(cstamp);
    free(noop);
    free(keys.v);
    free(moved.v);
    free(k.key);
    return s;
}

/* ---- the pass ----------------------------------------------------------------------------- */
gn_status gn__pass_dependency(gn__pass_ctx *c, gn_graph *g)
{
    dp d;
    memset(&d, 0, sizeof d);
    d.c = c;
    d.g = g;
    init_ops(g, &d.op);
    d.on_const = gn__pattern_enabled(c, "dependency.const_control");
    d.on_noop = gn__pattern_enabled(c, "dependency.to_noop");
    d.on_rm_noop = gn__pattern_enabled(c, "dependency.remove_noop");
    d.on_rm_identity = gn__pattern_enabled(c, "dependency.remove_identity");
    gn_status s = ensure_cap(&d);
    if (s == GN_OK) s = first_sweep(&d);
    for (int round = 0; round < 2 && s == GN_OK; round++) {
        if (gn__pass_deadline_passed(c)) break;
        bool before = c->changed;
        c->changed = false;
        /* the op names may have been interned by the previous round */
        init_ops(g, &d.op);
        s = transitive_reduction(&d);
        if (d.dirty) gn__attachment_drop(&g->shapes);
        if (s == GN_OK) s = optimize_dependencies(&d);
        if (s == GN_OK) s = group_cross_device(&d, false);
        if (s == GN_OK) s = group_cross_device(&d, true);
        bool now = c->changed;
        c->changed = before || now;
        if (!now) break;
    }
    if (s == GN_OK && c->report) {
        init_ops(g, &d.op);
        s = report_refusals(&d);
    }
    if (d.dirty) gn__attachment_drop(&g->shapes);
    free(d.keep);
    free(d.inq);
    free(d.stamp);
    free(d.stack);
    free(d.data);
    free(d.ctrl.v);
    return s;
}
