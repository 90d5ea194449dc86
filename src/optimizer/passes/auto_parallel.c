/* Auto-parallel (Grappler's auto_parallel.cc, docs/reference_grappler.md §3.16):
 * data-parallel
 * replication of a TF1 training step, on when auto_parallel is set, with
 * auto_parallel.num_replicas copies.
 *
 *  1. Declines (the graph unchanged, the reason reported) where Grappler's
 *     Initialize fails: no fetches, no variables; and where grapnel would make
 *     a graph that trains nothing: num_replicas below 1. Grappler's
 *     AutoParallel constructor CHECK-fails (aborts) below 2; grapnel also
 *     builds the one-replica graph (the step as before, renamed, gradients
 *     divided by 1).
 *  2. Every apply op (ApplyGradientDescent ... ApplyCenteredRMSProp) gets its
 *     gradient input divided by the replica count:
 *     AutoParallel-Div-<apply> = RealDiv(grad, AutoParallel-Div-Const), T float,
 *     the Const a float32 scalar num_replicas (Grappler's, with no shape).
 *  3. The replicated set: the transitive fan-in (data and control) of the
 *     fetches, minus the variables and, when the step reads a queue, the fan-in
 *     of its first dequeue op other than the dequeue itself (the queue and its
 *     settings stay shared; each replica dequeues its own batch). Everything
 *     else is shared. grapnel has no init-op list (Grappler's item.init_ops,
 *     from the MetaGraphDef's collections): its variables are every variable
 *     op of the graph, and initializers lie outside the fetches' fan-in anyway.
 *  4. Each replicated node is copied as AutoParallel-Replica-<i>/<name>, for i
 *     in 0..num_replicas-1, inputs from replicated nodes renamed alike, placed
 *     on /gpu:<i % num_gpus> when the target has GPUs (Grappler's count of
 *     available GPUs), else keeping its device; shared nodes that consumed a
 *     replicated node now consume replica 0's copy. The originals go.
 *  5. AutoParallel-Control-Fetch (NoOp) depends on every replica's copy of
 *     every fetch; each fetch name becomes a NoOp with a control input on it.
 *     As in Grappler, a fetched tensor is then no longer available: the step is
 *     run for its updates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/pass.h"

const gn__pattern gn__patterns_auto_parallel[] = {
    {"auto_parallel.replicate", "copy the training step num_replicas times, gradients divided by num_replicas"},
    {NULL, NULL},
};

#define PAT "auto_parallel.replicate"
#define PREFIX "AutoParallel"

static gn_status from_graph(gn__pass_ctx *c, gn_graph *g, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(c->err, s, "%s", g->err.msg);
}

static gn_status nomem(gn__pass_ctx *c) { return gn__fail(c->err, GN_ERR_NOMEM, "out of memory"); }

/* Grappler's apply ops and the input index of their gradient. */
static int grad_index(const char *op)
{
    static const struct {
        const char *op;
        int idx;
    } k[] = {{"ApplyGradientDescent", 2}, {"ApplyProximalGradientDescent", 4}, {"ApplyAdadelta", 6},
             {"ApplyAdagrad", 3},         {"ApplyProximalAdagrad", 5},         {"ApplyAdagradDA", 3},
             {"ApplyFtrl", 3},            {"ApplyMomentum", 3},                {"ApplyAdam", 9},
             {"ApplyRMSProp", 7},         {"ApplyCenteredRMSProp", 8}};
    for (size_t i = 0; i < GN__ARRAY_LEN(k); i++)
        if (!strcmp(op, k[i].op)) return k[i].idx;
    return -1;
}

/* Grappler's IsVariable. */
static bool is_variable(const char *op)
{
    return !strcmp(op, "Variable") || !strcmp(op, "VariableV2") || !strcmp(op, "AutoReloadVariable") ||
           !strcmp(op, "VarHandleOp") || !strcmp(op, "_VarHandlesOp") || !strcmp(op, "ReadVariableOp") ||
           !strcmp(op, "_ReadVariablesOp");
}

/* Grappler's IsDequeueOp. */
static bool is_dequeue(const char *op)
{
    return !strcmp(op, "QueueDequeueManyV2") || !strcmp(op, "QueueDequeueMany") || !strcmp(op, "QueueDequeueV2") ||
           !strcmp(op, "QueueDequeue") || !strcmp(op, "QueueDequeueUpToV2") || !strcmp(op, "QueueDequeueUpTo");
}

/* Marks the transitive fan-in (data and control) of the roots with bit. */
static gn_status fanin(gn__pass_ctx *c, const gn_graph *g, const gn_id *roots, uint32_t n_roots, uint8_t *mark,
                       uint8_t bit)
{
    gn_id *stack = malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *stack);
    if (!stack) return nomem(c);
    uint32_t sp = 0;
    for (uint32_t i = 0; i < n_roots; i++)
        if (!(mark[roots[i]] & bit)) {
            mark[roots[i]] |= bit;
            stack[sp++] = roots[i];
        }
    while (sp) {
        const gn__node *x = &g->nodes[stack[--sp]];
        for (uint32_t k = 0; k < x->n_in + x->n_ctrl; k++) {
            gn_id p = k < x->n_in ? x->in[k].node : x->ctrl[k - x->n_in];
            if (mark[p] & bit) continue;
            mark[p] |= bit;
            stack[sp++] = p;
        }
    }
    free(stack);
    return GN_OK;
}

static gn_status set_float_type(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *key)
{
    return from_graph(c, g, gn__node_set_attr_type(g, id, key, TENSORFLOW__DATA_TYPE__DT_FLOAT));
}

/* AutoParallel-Div-Const: dtype float, value {dtype: DT_FLOAT tensor_shape {} float_val: n}. */
static gn_status add_div_const(gn__pass_ctx *c, gn_graph *g, int32_t n, gn_id *out)
{
    GN_TRY(from_graph(c, g, gn__node_add(g, PREFIX "-Div-Const", "Const", out)));
    GN_TRY(set_float_type(c, g, *out, "dtype"));
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
    Tensorflow__TensorProto *t = gn__graph_value_alloc(g, sizeof *t);
    float *f = gn__graph_value_alloc(g, sizeof *f);
    Tensorflow__TensorShapeProto *sh = gn__graph_value_alloc(g, sizeof *sh);
    if (!v || !t || !f || !sh) return nomem(c);
    tensorflow__tensor_proto__init(t);
    tensorflow__tensor_shape_proto__init(sh);
    t->dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    t->tensor_shape = sh; /* a scalar: Grappler's graph has tensor_shape {} */
    *f = (float)n;
    t->n_float_val = 1;
    t->float_val = f;
    v->tensor = t;
    return from_graph(c, g, gn__node_set_attr(g, *out, "value", v));
}

/* The node a fetch names ("x", "x:1", "^x"). */
static gn_id fetch_node(const gn_graph *g, const char *t)
{
    if (t[0] == '^') t++;
    size_t n = strlen(t);
    const char *colon = strrchr(t, ':');
    if (colon && colon[1]) {
        const char *q = colon + 1;
        while (*q >= '0' && *q <= '9') q++;
        if (!*q) n = (size_t)(colon - t);
    }
    return gn__graph_find_n(g, t, n);
}

typedef struct ap {
    gn__pass_ctx *c;
    gn_graph *g;
    int32_t n_rep;
    uint8_t *mark;     /* per node: FETCH_FANIN, DONT */
    gn_id *copy;       /* [n_orig * n_rep]: replica copies of replicated nodes */
    uint32_t n_orig;
} ap;

enum { FANIN = 1, DONT = 2, INPUT = 4 };

static bool replicated(const ap *a, gn_id id) { return id < a->n_orig && (a->mark[id] & (FANIN | DONT)) == FANIN; }

static gn_status build(ap *a, const gn_id *fetch, uint32_t n_fetch)
{
    gn__pass_ctx *c = a->c;
    gn_graph *g = a->g;
    int32_t gpus = c->target && c->target->kind == GN_TARGET_GPU ? c->target->num_gpus : 0;
    char name[2048], dev[32];
    /* copies, then their inputs (copies may refer to later copies) */
    for (gn_id id = 0; id < a->n_orig; id++) {
        if (!replicated(a, id)) continue;
        const gn__node *x = &g->nodes[id];
        for (int32_t r = 0; r < a->n_rep; r++) {
            snprintf(name, sizeof name, PREFIX "-Replica-%d/%s", r, gn__node_name(g, id));
            gn_id k;
            GN_TRY(from_graph(c, g, gn__node_add(g, name, gn__node_op(g, id), &k)));
            x = &g->nodes[id];
            if (gpus > 0) {
                snprintf(dev, sizeof dev, "/gpu:%d", r % gpus);
                gn__node_set_device(g, k, dev);
            } else {
                gn__node_set_device(g, k, gn__str(g, x->device));
            }
            for (uint32_t m = 0; m < x->n_attr; m++)
                GN_TRY(from_graph(c, g, gn__node_set_attr(g, k, gn__str(g, x->attr[m].key), x->attr[m].value)));
            a->copy[(size_t)id * (size_t)a->n_rep + (size_t)r] = k;
        }
    }
    for (gn_id id = 0; id < a->n_orig; id++) {
        if (!gn__node_live(g, id)) continue;
        bool rep = replicated(a, id);
        for (int32_t r = 0; r < (rep ? a->n_rep : 0); r++) {
            gn_id k = a->copy[(size_t)id * (size_t)a->n_rep + (size_t)r];
            for (uint32_t m = 0; m < g->nodes[id].n_in; m++) {
                gn__edge e = g->nodes[id].in[m];
                if (replicated(a, e.node)) e.node = a->copy[(size_t)e.node * (size_t)a->n_rep + (size_t)r];
                GN_TRY(from_graph(c, g, gn__node_add_input(g, k, e)));
            }
            for (uint32_t m = 0; m < g->nodes[id].n_ctrl; m++) {
                gn_id p = g->nodes[id].ctrl[m];
                if (replicated(a, p)) p = a->copy[(size_t)p * (size_t)a->n_rep + (size_t)r];
                GN_TRY(from_graph(c, g, gn__node_add_control(g, k, p)));
            }
        }
        if (rep) continue;
        /* a shared node reading a replicated one reads replica 0's copy */
        for (uint32_t m = 0; m < g->nodes[id].n_in; m++) {
            gn__edge e = g->nodes[id].in[m];
            if (!replicated(a, e.node)) continue;
            e.node = a->copy[(size_t)e.node * (size_t)a->n_rep];
            GN_TRY(from_graph(c, g, gn__node_set_input(g, id, m, e)));
        }
        for (uint32_t m = 0; m < g->nodes[id].n_ctrl; m++) {
            gn_id p = g->nodes[id].ctrl[m];
            if (!replicated(a, p)) continue;
            GN_TRY(from_graph(c, g, gn__node_remove_control(g, id, p)));
            GN_TRY(from_graph(c, g, gn__node_add_control(g, id, a->copy[(size_t)p * (size_t)a->n_rep])));
            m = (uint32_t)-1; /* the list changed: look again */
        }
    }
    /* the originals go; the fetches' names come back as NoOps */
    uint32_t n_rm = 0;
    gn_id *rm = malloc((size_t)(a->n_orig ? a->n_orig : 1) * sizeof *rm);
    if (!rm) return nomem(c);
    for (gn_id id = 0; id < a->n_orig; id++)
        if (replicated(a, id)) rm[n_rm++] = id;
    gn_status s = from_graph(c, g, gn__nodes_remove(g, rm, n_rm));
    free(rm);
    GN_TRY(s);
    gn_id ctl;
    GN_TRY(from_graph(c, g, gn__node_add(g, PREFIX "-Control-Fetch", "NoOp", &ctl)));
    for (uint32_t f = 0; f < n_fetch; f++)
        for (int32_t r = 0; r < a->n_rep; r++)
            GN_TRY(from_graph(c, g, gn__node_add_control(g, ctl, a->copy[(size_t)fetch[f] * (size_t)a->n_rep + (size_t)r])));
    for (uint32_t f = 0; f < n_fetch; f++) {
        /* the name of a removed node (a fetch named twice is added once) */
        snprintf(name, sizeof name, PREFIX "-Replica-0/");
        const char *fname = gn__node_name(g, a->copy[(size_t)fetch[f] * (size_t)a->n_rep]) + strlen(name);
        if (gn__graph_find(g, fname) != GN_NONE) continue;
        gn_id k;
        GN_TRY(from_graph(c, g, gn__node_add(g, fname, "NoOp", &k)));
        GN_TRY(from_graph(c, g, gn__node_add_control(g, k, ctl)));
        g->nodes[k].flags |= GN__NODE_PRESERVE;
    }
    return GN_OK;
}

gn_status gn__pass_auto_parallel(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, PAT)) return GN_OK;
    if (c->fn_name) return GN_OK; /* a function body has no variables of its own */
    int32_t n_rep = c->opts->auto_parallel_num_replicas;
    if (c->n_fetches == 0) {
        gn__pass_refused(c, PAT, g, GN_NONE, "no fetch nodes provided (Grappler: 'No fetch nodes provided.')");
        return GN_OK;
    }
    uint32_t n_orig = g->n_nodes;
    gn_id *fetch = malloc(c->n_fetches * sizeof *fetch);
    uint8_t *mark = calloc(n_orig ? n_orig : 1, 1);
    if (!fetch || !mark) {
        free(fetch);
        free(mark);
        return nomem(c);
    }
    uint32_t n_fetch = 0;
    gn_status s = GN_OK;
    for (size_t i = 0; i < c->n_fetches; i++) {
        gn_id f = fetch_node(g, c->fetches[i]);
        if (f == GN_NONE) {
            gn__pass_refused(c, PAT, g, GN_NONE, "fetch '%s' is not a node of the graph", c->fetches[i]);
            goto out;
        }
        bool dup = false;
        for (uint32_t k = 0; k < n_fetch; k++) dup |= fetch[k] == f;
        if (!dup) fetch[n_fetch++] = f;
    }
    uint32_t n_var = 0, n_apply = 0;
    for (gn_id id = 0; id < n_orig; id++) {
        if (!gn__node_live(g, id)) continue;
        n_var += is_variable(gn__node_op(g, id));
        n_apply += grad_index(gn__node_op(g, id)) >= 0;
    }
    if (n_var == 0) {
        gn__pass_refused(c, PAT, g, GN_NONE, "no variables (Grappler: 'No variables provided.')");
        goto out;
    }
    if (n_rep < 1) {
        gn__pass_refused(c, PAT, g, GN_NONE,
                         "auto_parallel.num_replicas is %d: set it to 1 or more (Grappler CHECK-fails below 2: "
                         "'Check failed: num_replicas_ >= 2')",
                         n_rep);
        goto out;
    }
    if (gn__pass_deadline_passed(c)) goto out;
    /* 2. the gradients divided by the replica count */
    gn_id div_const;
    if ((s = add_div_const(c, g, n_rep, &div_const)) != GN_OK) goto out;
    for (gn_id id = 0; id < n_orig && s == GN_OK; id++) {
        if (!gn__node_live(g, id)) continue;
        int gi = grad_index(gn__node_op(g, id));
        if (gi < 0) continue;
        if ((uint32_t)gi >= g->nodes[id].n_in) {
            s = gn__fail(c->err, GN_ERR_GRAPH, "node '%s' (%s) has %u inputs, the gradient is input %d",
                         gn__node_name(g, id), gn__node_op(g, id), g->nodes[id].n_in, gi);
            break;
        }
        char name[1200];
        snprintf(name, sizeof name, PREFIX "-Div-%s", gn__node_name(g, id));
        gn_id d;
        if ((s = from_graph(c, g, gn__node_add(g, name, "RealDiv", &d))) != GN_OK) break;
        if ((s = from_graph(c, g, gn__node_add_input(g, d, g->nodes[id].in[gi]))) != GN_OK) break;
        if ((s = from_graph(c, g, gn__node_add_input(g, d, (gn__edge){div_const, 0}))) != GN_OK) break;
        if ((s = set_float_type(c, g, d, "T")) != GN_OK) break;
        s = from_graph(c, g, gn__node_set_input(g, id, (uint32_t)gi, (gn__edge){d, 0}));
    }
    if (s != GN_OK) goto out;
    /* 3. what is replicated */
    uint32_t n_all = g->n_nodes;
    uint8_t *m2 = realloc(mark, n_all);
    if (!m2) {
        s = nomem(c);
        goto out;
    }
    mark = m2;
    memset(mark, 0, n_all);
    if ((s = fanin(c, g, fetch, n_fetch, mark, FANIN)) != GN_OK) goto out;
    gn_id deq = GN_NONE;
    for (gn_id id = 0; id < n_all && deq == GN_NONE; id++)
        if ((mark[id] & FANIN) && gn__node_live(g, id) && is_dequeue(gn__node_op(g, id))) deq = id;
    if (deq != GN_NONE && (s = fanin(c, g, &deq, 1, mark, INPUT)) != GN_OK) goto out;
    uint32_t n_rep_nodes = 0;
    for (gn_id id = 0; id < n_all; id++) {
        if (!gn__node_live(g, id)) continue;
        if (is_variable(gn__node_op(g, id)) || ((mark[id] & INPUT) && id != deq)) mark[id] |= DONT;
        n_rep_nodes += (mark[id] & (FANIN | DONT)) == FANIN;
    }
    char deq_name[1024] = "";
    if (deq != GN_NONE) snprintf(deq_name, sizeof deq_name, ", each replica dequeuing from '%s'", gn__node_name(g, deq));
    ap a = {c, g, n_rep, mark, NULL, n_all};
    a.copy = malloc((size_t)n_all * (size_t)n_rep * sizeof *a.copy);
    if (!a.copy) {
        s = nomem(c);
        goto out;
    }
    s = build(&a, fetch, n_fetch);
    free(a.copy);
    if (s != GN_OK) goto out;
    c->changed = true;
    gn__pass_rewrote(c, PAT, g, gn__graph_find(g, PREFIX "-Control-Fetch"),
                     "%u nodes replicated %d times as " PREFIX "-Replica-<i>/, %u apply ops with gradients divided "
                     "by %d%s",
                     n_rep_nodes, n_rep, n_apply, n_rep, deq_name);
out:
    free(fetch);
    free(mark);
    return s;
}
