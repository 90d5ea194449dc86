/* Scoped allocator (Grappler's scoped_allocator_optimizer.cc,
 * docs/reference_grappler.md §3.17): on when scoped_allocator_optimization is ON; the meta-optimizer runs
 * it last and once. The ops of scoped_allocator_opts.enable_op (default
 * CollectiveReduce) are grouped by device, op, name scope (all of the name but
 * its last component) and frame; each group of two or more, ordered by name
 * (CollectiveReduce with an instance_key: by instance_key), becomes
 *
 *   scoped_allocator_<id>_1          _ScopedAllocator: the backing buffer, its
 *                                    fields 64-byte aligned (shapes, shape,
 *                                    id, sa_name, T, expected_call_count), a
 *                                    control input on the first producer input
 *                                    outside the producers' fan-out
 *   producers                        ^scoped_allocator_<id>_1 and
 *                                    _scoped_allocator [slot, id + 1 + i]
 *   scoped_allocator_concat_<id>_1   _ScopedAllocatorConcat(buffer, inputs...)
 *   scoped_allocator_<id>_1_<Op>     one op over the whole buffer, the first
 *                                    member's attrs and _forward_input [0, 0]
 *   scoped_allocator_split_<id>_1    _ScopedAllocatorSplit(result, inputs...),
 *                                    whose output i replaces member i
 *
 * with ids 1, 1 + (n0 + 1), ... and the trailing 1 Grappler's per-process
 * invocation count as it is in a fresh process. An input that is a Const, an
 * Exit or a tensor read by two members is first copied by an Identity
 * scoped_allocator_identity_<k>_1 (k from 1), which then is the producer.
 *
 * Where Grappler's rewriter returns an error, Grappler's meta-optimizer drops
 * the whole pass's output: so does grapnel, reporting Grappler's reason (mixed
 * dtypes in a group, a shape not fully known, more than one input, an input of
 * another dtype, an input already in a scoped allocator, a data edge inside
 * the group, an _Arg input). Shapes are those Grappler infers: a tensor that
 * depends on a Placeholder has no known shape for it (it is not told the
 * feeds' shapes). grapnel's own refusals: a group member that is fetched or
 * otherwise preserved (the rewrite removes it), a member with no device
 * (Grappler CHECK-fails there), and graphs with v1 loops (frames are not
 * analysed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/shape.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_scoped_allocator[] = {
    {"scoped_allocator.group", "enable_op ops of one device, scope and dtype share one buffer, one op runs over it"},
    {NULL, NULL},
};

#define PAT "scoped_allocator.group"
#define INVOCATION 1
#define ALIGN 64

static gn_status from_graph(gn__pass_ctx *c, gn_graph *g, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(c->err, s, "%s", g->err.msg);
}

static gn_status nomem(gn__pass_ctx *c) { return gn__fail(c->err, GN_ERR_NOMEM, "out of memory"); }

static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

/* One member's input after the rewrite: the producer (an Identity to be made
 * when ident) and its output slot. */
typedef struct member {
    gn_id op;
    gn__edge in;      /* the original data input */
    bool ident;       /* copied by a new Identity first */
    gn__shape shape;  /* dims point into dims[] (the shape table goes with the first rewrite) */
    int64_t dims[GN__MAX_RANK];
} member;

typedef struct group {
    uint32_t first, n;  /* into the member array */
    int32_t dtype;
} group;

typedef struct sa {
    gn__pass_ctx *c;
    gn_graph *g;
    uint8_t *ph;       /* per node: depends on a Placeholder (1), computed (2) */
    member *m;
    uint32_t n_m;
    group *gr;
    uint32_t n_gr;
    /* producers given a field by an earlier group: (node, slot) */
    gn__edge *taken;
    uint32_t n_taken;
} sa;

/* Per node: does its value depend on a Placeholder (Grappler, not told the
 * feeds' shapes, knows no shape there)? One sweep in topological order. */
static gn_status placeholder_deps(sa *s)
{
    gn_graph *g = s->g;
    gn_id *order = NULL;
    uint32_t n = 0;
    GN_TRY(from_graph(s->c, g, gn__graph_topo(g, &order, &n)));
    for (uint32_t i = 0; i < n; i++) {
        gn_id x = order[i];
        const gn__node *nx = &g->nodes[x];
        uint8_t dep = op_is(g, x, "Placeholder") || op_is(g, x, "PlaceholderV2");
        for (uint32_t k = 0; k < nx->n_in && !dep; k++) dep = s->ph[nx->in[k].node];
        s->ph[x] = dep;
    }
    free(order);
    return GN_OK;
}

/* The device, op and scope (name up to its last '/') key of a node. */
static bool same_group(const gn_graph *g, gn_id a, gn_id b)
{
    if (g->nodes[a].device != g->nodes[b].device || g->nodes[a].op != g->nodes[b].op) return false;
    const char *x = gn__node_name(g, a), *y = gn__node_name(g, b);
    const char *sx = strrchr(x, '/'), *sy = strrchr(y, '/');
    size_t lx = sx ? (size_t)(sx - x) : 0, ly = sy ? (size_t)(sy - y) : 0;
    return lx == ly && !memcmp(x, y, lx);
}

static int64_t instance_key(const gn_graph *g, gn_id id)
{
    int64_t k = -1;
    if (!op_is(g, id, "CollectiveReduce") || !gn__attr_get_int(g, id, "instance_key", &k)) return -1;
    return k;
}

static bool before(const gn_graph *g, gn_id a, gn_id b)
{
    int64_t ka = instance_key(g, a), kb = instance_key(g, b);
    if (ka >= 0 && kb >= 0 && ka != kb) return ka < kb;
    return strcmp(gn__node_name(g, a), gn__node_name(g, b)) < 0;
}

/* Grappler's order of a group: by name, CollectiveReduce by instance_key. */
static void order_group(const gn_graph *g, member *m, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        member x = m[i];
        uint32_t k = i;
        for (; k > 0 && before(g, x.op, m[k - 1].op); k--) m[k] = m[k - 1];
        m[k] = x;
    }
}

/* Grappler's analysis of one group; false (with the reason reported) where
 * its rewriter returns an error. */
static bool analyze(sa *s, group *gr)
{
    gn__pass_ctx *c = s->c;
    gn_graph *g = s->g;
    member *m = &s->m[gr->first];
    for (uint32_t i = 0; i < gr->n; i++) {
        gn_id id = m[i].op;
        int t;
        if (!gn__attr_get_type(g, id, "T", &t)) {
            gn__pass_refused(c, PAT, g, id, "'%s' has no attr T: the whole pass is dropped", gn__node_name(g, id));
            return false;
        }
        const gn__tinfo *o = gn__shape_of(g, id, 0);
        if (!o || gn__shape_num_outputs(g, id) != 1) {
            gn__pass_refused(c, PAT, g, id, "'%s' does not have exactly one output: the whole pass is dropped",
                             gn__node_name(g, id));
            return false;
        }
        if (i == 0) gr->dtype = o->dtype;
        else if (o->dtype != gr->dtype) {
            gn__pass_refused(c, PAT, g, id,
                             "Group ops don't all have same type ('%s' and '%s'): the whole pass is dropped",
                             gn__node_name(g, m[0].op), gn__node_name(g, id));
            return false;
        }
        if (t != gr->dtype) {
            gn__pass_refused(c, PAT, g, id, "Type mismatch on '%s': the whole pass is dropped", gn__node_name(g, id));
            return false;
        }
        if (!gn__shape_fully_defined(&o->shape) || s->ph[id]) {
            gn__pass_refused(c, PAT, g, id, "Complete shape not known for %s: the whole pass is dropped",
                             gn__node_name(g, id));
            return false;
        }
        if (o->shape.rank > GN__MAX_RANK) {
            gn__pass_refused(c, PAT, g, id, "'%s' has rank %d: the whole pass is dropped", gn__node_name(g, id),
                             o->shape.rank);
            return false;
        }
        m[i].shape.rank = o->shape.rank;
        for (int32_t d = 0; d < o->shape.rank; d++) m[i].dims[d] = o->shape.dims[d];
        m[i].shape.dims = m[i].dims;
    }
    for (uint32_t i = 0; i < gr->n; i++) {
        gn_id id = m[i].op;
        if (g->nodes[id].n_in != 1) {
            gn__pass_refused(c, PAT, g, id, "Found more than one input for node %s: the whole pass is dropped",
                             gn__node_name(g, id));
            return false;
        }
        gn__edge e = g->nodes[id].in[0];
        m[i].in = e;
        bool repeated = false;
        for (uint32_t k = 0; k < s->n_m; k++)
            if (s->m[k].op != id && g->nodes[s->m[k].op].n_in >= 1 && g->nodes[s->m[k].op].in[0].node == e.node &&
                g->nodes[s->m[k].op].in[0].index == e.index)
                repeated = true;
        m[i].ident = op_is(g, e.node, "Const") || op_is(g, e.node, "HostConst") || op_is(g, e.node, "Exit") ||
                     op_is(g, e.node, "RefExit") || repeated;
        if (m[i].ident) continue;
        const gn__tinfo *pi = gn__shape_of(g, e.node, e.index);
        if (!pi || pi->dtype != gr->dtype) {
            gn__pass_refused(c, PAT, g, id, "ScopedAllocatorOptimizer expected input type of '%s' to be its own: "
                             "the whole pass is dropped", gn__node_name(g, id));
            return false;
        }
        if (g->nodes[e.node].flags & GN__NODE_FN_ARG || op_is(g, e.node, "_Arg")) {
            gn__pass_refused(c, PAT, g, id, "ScopedAllocatorOptimizer does not work well when the op inputs are _Arg "
                             "ops: the whole pass is dropped");
            return false;
        }
        bool taken = false;
        for (uint32_t k = 0; k < s->n_taken; k++) taken |= s->taken[k].node == e.node && s->taken[k].index == e.index;
        const Tensorflow__AttrValue *sv = gn__node_attr(g, e.node, "_scoped_allocator");
        if (sv && sv->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && sv->list && sv->list->n_i >= 1 &&
            sv->list->i[0] == e.index)
            taken = true;
        if (taken) {
            gn__pass_refused(c, PAT, g, id, "input %s output %u is already assigned to a scoped allocator: the whole "
                             "pass is dropped", gn__node_name(g, e.node), e.index);
            return false;
        }
        for (uint32_t k = 0; k < gr->n; k++)
            if (m[k].op == e.node) {
                gn__pass_refused(c, PAT, g, id, "Data edge exists between %s and another node in the set: the whole "
                                 "pass is dropped", gn__node_name(g, e.node));
                return false;
            }
    }
    for (uint32_t i = 0; i < gr->n; i++)
        if (!m[i].ident) s->taken[s->n_taken++] = m[i].in;
    return true;
}

/* ---- attrs ----------------------------------------------------------------------------------- */
static gn_status set_av(sa *s, gn_id id, const char *key, Tensorflow__AttrValue *v)
{
    if (!v) return nomem(s->c);
    return from_graph(s->c, s->g, gn__node_set_attr(s->g, id, key, v));
}

static Tensorflow__AttrValue *av_shapes(gn_graph *g, const member *m, uint32_t n)
{
    Tensorflow__AttrValue *v = gn__attr_new_list(g);
    Tensorflow__TensorShapeProto **sh = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *sh);
    if (!v || !sh) return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!(sh[i] = gn__shape_proto_new(g, m[i].shape.rank, m[i].shape.dims))) return NULL;
    v->list->n_shape = n;
    v->list->shape = sh;
    return v;
}

/* ---- the rewrite ------------------------------------------------------------------------------ */
static gn_status add_node(sa *s, const char *name, const char *op, gn_id device_of, gn_id *out)
{
    GN_TRY(from_graph(s->c, s->g, gn__node_add(s->g, name, op, out)));
    gn__node_set_device(s->g, *out, gn__str(s->g, s->g->nodes[device_of].device));
    return GN_OK;
}

/* Marks the transitive fan-out (data and control) of the producers. */
static gn_status fanout(sa *s, const gn_id *prod, uint32_t n, uint8_t *mark)
{
    gn_graph *g = s->g;
    gn_id *stack = malloc((size_t)g->n_nodes * sizeof *stack);
    if (!stack) return nomem(s->c);
    uint32_t sp = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!mark[prod[i]]) {
            mark[prod[i]] = 1;
            stack[sp++] = prod[i];
        }
    while (sp) {
        const gn__node *x = &g->nodes[stack[--sp]];
        for (uint32_t k = 0; k < x->n_use + x->n_cuse; k++) {
            gn_id u = k < x->n_use ? x->use[k].node : x->cuse[k - x->n_use];
            if (mark[u]) continue;
            mark[u] = 1;
            stack[sp++] = u;
        }
    }
    free(stack);
    return GN_OK;
}

static gn_status rewrite(sa *s, const group *gr, int32_t sa_id, int32_t *ident_id)
{
    gn__pass_ctx *c = s->c;
    gn_graph *g = s->g;
    member *m = &s->m[gr->first];
    uint32_t n = gr->n;
    gn_id dev = m[0].op;
    const char *opname = gn__node_op(g, m[0].op);
    char sa_name[64], name[1200];
    snprintf(sa_name, sizeof sa_name, "scoped_allocator_%d_%d", sa_id, INVOCATION);
    gn_id *prod = malloc(n * sizeof *prod);
    uint32_t *slot = malloc(n * sizeof *slot);
    uint8_t *mark = NULL;
    gn_status st = GN_OK;
    if (!prod || !slot) {
        st = nomem(c);
        goto out;
    }
    /* Identity copies of Const / Exit / repeated inputs */
    for (uint32_t i = 0; i < n && st == GN_OK; i++) {
        prod[i] = m[i].in.node;
        slot[i] = m[i].in.index;
        if (!m[i].ident) continue;
        snprintf(name, sizeof name, "scoped_allocator_identity_%d_%d", (*ident_id)++, INVOCATION);
        gn_id k;
        if ((st = add_node(s, name, "Identity", m[i].op, &k)) != GN_OK) break;
        if ((st = set_av(s, k, "T", gn__attr_new_type(g, gr->dtype))) != GN_OK) break;
        if ((st = from_graph(c, g, gn__node_add_input(g, k, m[i].in))) != GN_OK) break;
        if ((st = from_graph(c, g, gn__node_set_input(g, m[i].op, 0, (gn__edge){k, 0}))) != GN_OK) break;
        prod[i] = k;
        slot[i] = 0;
    }
    if (st != GN_OK) goto out;
    /* the buffer: fields aligned to 64 bytes */
    size_t esz = gn__dtype_size(gr->dtype), bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        bytes += (size_t)gn__shape_num_elements(&m[i].shape) * esz;
        if (bytes % ALIGN) bytes += ALIGN - bytes % ALIGN;
    }
    const int64_t n_elems = (int64_t)(bytes / esz); /* the buffer's shape: [n_elems] */
    mark = calloc(g->n_nodes + 1, 1);
    if (!mark) {
        st = nomem(c);
        goto out;
    }
    if ((st = fanout(s, prod, n, mark)) != GN_OK) goto out;
    gn_id san;
    if ((st = add_node(s, sa_name, "_ScopedAllocator", dev, &san)) != GN_OK) goto out;
    if ((st = set_av(s, san, "sa_name", gn__attr_new_string(g, sa_name, strlen(sa_name)))) != GN_OK ||
        (st = set_av(s, san, "T", gn__attr_new_type(g, gr->dtype))) != GN_OK ||
        (st = set_av(s, san, "id", gn__attr_new_int(g, sa_id))) != GN_OK ||
        (st = set_av(s, san, "shapes", av_shapes(g, m, n))) != GN_OK ||
        (st = set_av(s, san, "shape", gn__attr_new_shape(g, 1, &n_elems))) != GN_OK ||
        (st = set_av(s, san, "expected_call_count", gn__attr_new_int(g, n))) != GN_OK)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        if ((st = from_graph(c, g, gn__node_add_control(g, prod[i], san))) != GN_OK) goto out;
        const Tensorflow__AttrValue *old = gn__node_attr(g, prod[i], "_scoped_allocator");
        int64_t v[64];
        size_t nv = 0;
        if (old && old->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && old->list)
            for (size_t k = 0; k < old->list->n_i && nv < 62; k++) v[nv++] = old->list->i[k];
        v[nv++] = slot[i];
        v[nv++] = sa_id + 1 + (int64_t)i;
        if ((st = set_av(s, prod[i], "_scoped_allocator", gn__attr_new_ints(g, v, nv))) != GN_OK) goto out;
    }
    /* the delay edge: the first producer input outside the producers' fan-out */
    bool delayed = false;
    for (uint32_t i = 0; i < n && !delayed; i++)
        for (uint32_t k = 0; k < g->nodes[prod[i]].n_in && !delayed; k++) {
            gn_id p = g->nodes[prod[i]].in[k].node;
            if (p < g->n_nodes && mark[p]) continue;
            if ((st = from_graph(c, g, gn__node_add_control(g, san, p))) != GN_OK) goto out;
            delayed = true;
        }
    /* concat, the op, split */
    gn_id cat, op, split;
    snprintf(name, sizeof name, "scoped_allocator_concat_%d_%d", sa_id, INVOCATION);
    if ((st = add_node(s, name, "_ScopedAllocatorConcat", dev, &cat)) != GN_OK) goto out;
    if ((st = from_graph(c, g, gn__node_add_input(g, cat, (gn__edge){san, 0}))) != GN_OK) goto out;
    for (uint32_t i = 0; i < n; i++)
        if ((st = from_graph(c, g, gn__node_add_input(g, cat, g->nodes[m[i].op].in[0]))) != GN_OK) goto out;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < g->nodes[m[i].op].n_ctrl; k++) {
            gn_id p = g->nodes[m[i].op].ctrl[k];
            bool member_of = false;
            for (uint32_t j = 0; j < n; j++) member_of |= m[j].op == p;
            if (!member_of && (st = from_graph(c, g, gn__node_add_control(g, cat, p))) != GN_OK) goto out;
        }
    if ((st = set_av(s, cat, "sa_name", gn__attr_new_string(g, sa_name, strlen(sa_name)))) != GN_OK ||
        (st = set_av(s, cat, "id", gn__attr_new_int(g, sa_id))) != GN_OK ||
        (st = set_av(s, cat, "T", gn__attr_new_type(g, gr->dtype))) != GN_OK ||
        (st = set_av(s, cat, "shape", gn__attr_new_shape(g, 1, &n_elems))) != GN_OK ||
        (st = set_av(s, cat, "N", gn__attr_new_int(g, n))) != GN_OK ||
        (st = set_av(s, cat, "reshape", gn__attr_new_bool(g, false))) != GN_OK)
        goto out;
    snprintf(name, sizeof name, "%s_%s", sa_name, opname);
    if ((st = add_node(s, name, opname, dev, &op)) != GN_OK) goto out;
    for (uint32_t k = 0; k < g->nodes[m[0].op].n_attr; k++) {
        const gn__attr *a = &g->nodes[m[0].op].attr[k];
        if ((st = from_graph(c, g, gn__node_set_attr(g, op, gn__str(g, a->key), a->value))) != GN_OK) goto out;
    }
    int64_t fwd[2] = {0, 0};
    if ((st = set_av(s, op, "_forward_input", gn__attr_new_ints(g, fwd, 2))) != GN_OK) goto out;
    if ((st = from_graph(c, g, gn__node_add_input(g, op, (gn__edge){cat, 0}))) != GN_OK) goto out;
    snprintf(name, sizeof name, "scoped_allocator_split_%d_%d", sa_id, INVOCATION);
    if ((st = add_node(s, name, "_ScopedAllocatorSplit", dev, &split)) != GN_OK) goto out;
    if ((st = from_graph(c, g, gn__node_add_input(g, split, (gn__edge){op, 0}))) != GN_OK) goto out;
    for (uint32_t i = 0; i < n; i++)
        if ((st = from_graph(c, g, gn__node_add_input(g, split, g->nodes[m[i].op].in[0]))) != GN_OK) goto out;
    if ((st = set_av(s, split, "sa_name", gn__attr_new_string(g, sa_name, strlen(sa_name)))) != GN_OK ||
        (st = set_av(s, split, "id", gn__attr_new_int(g, sa_id))) != GN_OK ||
        (st = set_av(s, split, "T", gn__attr_new_type(g, gr->dtype))) != GN_OK ||
        (st = set_av(s, split, "shapes", av_shapes(g, m, n))) != GN_OK ||
        (st = set_av(s, split, "N", gn__attr_new_int(g, n))) != GN_OK)
        goto out;
    /* the members' readers read the split; the members go */
    for (uint32_t i = 0; i < n; i++) {
        if ((st = from_graph(c, g, gn__graph_forward_output(g, (gn__edge){m[i].op, 0}, (gn__edge){split, i}))) !=
            GN_OK)
            goto out;
        while (g->nodes[m[i].op].n_cuse) {
            gn_id u = g->nodes[m[i].op].cuse[g->nodes[m[i].op].n_cuse - 1];
            bool member_of = false;
            for (uint32_t j = 0; j < n; j++) member_of |= m[j].op == u;
            if ((st = from_graph(c, g, gn__node_remove_control(g, u, m[i].op))) != GN_OK) goto out;
            if (!member_of && (st = from_graph(c, g, gn__node_add_control(g, u, split))) != GN_OK) goto out;
        }
    }
    gn__pass_rewrote(c, PAT, g, split, "%u %s ops (%s ... %s) share %s's %zu-byte buffer", n, opname,
                     gn__node_name(g, m[0].op), gn__node_name(g, m[n - 1].op), sa_name, bytes);
    for (uint32_t i = 0; i < n; i++)
        if ((st = from_graph(c, g, gn__node_remove(g, m[i].op))) != GN_OK) goto out;
out:
    free(prod);
    free(slot);
    free(mark);
    return st;
}

gn_status gn__pass_scoped_allocator(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, PAT)) return GN_OK;
    const char *list = c->opts->scoped_allocator_enable_op[0] ? c->opts->scoped_allocator_enable_op : "CollectiveReduce";
    sa s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.g = g;
    uint32_t nn = g->n_nodes;
    for (gn_id id = 0; id < nn; id++) {
        if (!gn__node_live(g, id)) continue;
        if (op_is(g, id, "Enter") || op_is(g, id, "RefEnter")) {
            for (gn_id k = 0; k < nn; k++)
                if (gn__node_live(g, k) && gn__list_has(list, gn__node_op(g, k))) {
                    gn__pass_refused(c, PAT, g, id, "the graph has v1 loops ('%s'): loop frames are not analysed",
                                     gn__node_name(g, id));
                    break;
                }
            return GN_OK;
        }
    }
    gn_status st = gn__graph_infer_shapes(g);
    if (st != GN_OK) return from_graph(c, g, st);
    s.m = calloc(nn ? nn : 1, sizeof *s.m);
    s.gr = calloc(nn ? nn : 1, sizeof *s.gr);
    s.taken = calloc(nn ? nn : 1, sizeof *s.taken);
    s.ph = calloc(nn ? nn : 1, 1);
    uint8_t *used = calloc(nn ? nn : 1, 1);
    if (!s.m || !s.gr || !s.taken || !s.ph || !used) {
        st = nomem(c);
        goto out;
    }
    if ((st = placeholder_deps(&s)) != GN_OK) goto out;
    /* groups, in order of enable_op, then of their first member */
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        size_t len = (size_t)(t - p);
        for (gn_id id = 0; id < nn && len; id++) {
            if (used[id] || !gn__node_live(g, id) || gn__strlen(g, g->nodes[id].op) != len ||
                memcmp(gn__node_op(g, id), p, len) != 0)
                continue;
            group *gr = &s.gr[s.n_gr];
            gr->first = s.n_m;
            for (gn_id k = id; k < nn; k++)
                if (!used[k] && gn__node_live(g, k) && same_group(g, id, k)) {
                    used[k] = 1;
                    s.m[s.n_m++].op = k;
                }
            gr->n = s.n_m - gr->first;
            if (gr->n < 2) {
                s.n_m = gr->first;
                continue;
            }
            s.n_gr++;
        }
        p = e;
    }
    /* Grappler's checks, all groups first: one failure drops the whole pass */
    for (uint32_t i = 0; i < s.n_gr; i++) {
        group *gr = &s.gr[i];
        order_group(g, &s.m[gr->first], gr->n);
        if (!analyze(&s, gr)) goto out;
    }
    int32_t sa_id = 1, ident_id = 1;
    for (uint32_t i = 0; i < s.n_gr; i++) {
        group *gr = &s.gr[i];
        bool skip = false;
        for (uint32_t k = 0; k < gr->n && !skip; k++) {
            gn_id id = s.m[gr->first + k].op;
            if (g->nodes[id].flags & GN__NODE_PRESERVE) {
                gn__pass_refused(c, PAT, g, id, "'%s' is fetched or preserved: its group is left alone",
                                 gn__node_name(g, id));
                skip = true;
            } else if (!gn__str(g, g->nodes[id].device)[0]) {
                gn__pass_refused(c, PAT, g, id, "'%s' has no device: its group is left alone", gn__node_name(g, id));
                skip = true;
            }
        }
        if (skip) continue;
        if (gn__pass_deadline_passed(c)) break;
        if ((st = rewrite(&s, gr, sa_id, &ident_id)) != GN_OK) goto out;
        sa_id += (int32_t)gr->n + 1;
        c->changed = true;
    }
out:
    free(s.m);
    free(s.gr);
    free(s.taken);
    free(s.ph);
    free(used);
    return st;
}
