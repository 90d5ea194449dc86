/* Loop optimizer (Grappler's loop_optimizer.cc, grappler.md 3.13).
 *
 *  loop.stack_push_removal  A Stack/StackV2 whose handle (followed through
 *      Identity, Enter, Switch, Merge, Exit) reaches no StackPop/StackPopV2:
 *      each StackPush/StackPushV2 becomes an Identity of its value, with a
 *      control input on the handle's producer (the push still runs after the
 *      stack exists; the pushed tensors need not be kept).
 *  loop.dead_branch  A Switch/RefSwitch whose predicate is a boolean Const:
 *      everything reachable only through the untaken port is dead (a node with
 *      a dead data or control input is dead, except a Merge, which is dead
 *      only when all its data inputs are). Dead nodes are deleted; a Merge
 *      that keeps one data input becomes an Identity of it (its value_index
 *      output, when read, becomes a Const of the surviving input's index); the
 *      Switch becomes an Identity of its data input, its taken port's readers
 *      rewired to it. Refused when a dead node is preserved, when the dead
 *      region reaches a loop boundary (Enter, Exit, NextIteration) or a Merge
 *      with more than two inputs, as Grappler.
 *  loop.dead_branch_functional  Beyond Grappler (which leaves functional
 *      control flow alone, TensorFlow issue #47256): If/StatelessIf with a
 *      constant cond, and Case/StatelessCase with a constant branch_index,
 *      become a call (StatefulPartitionedCall / PartitionedCall) of the taken
 *      branch, which the function optimizer then inlines. An out-of-range
 *      Case index takes the last branch, as Case does.
 *  loop.invariant_motion  Only with loop_optimization AGGRESSIVE (Grappler has
 *      it off): inside a v1 while frame, a stateless, non-control-flow node
 *      whose data inputs are all constant Enters (is_constant=true) and that has
 *      no control inputs is moved out of the loop: it reads the Enters' outer
 *      tensors, and a new constant Enter "LoopOptimizer/<frame>_enter_<k>"
 *      brings its output into the frame; repeated to a fixed point.
 *
 * Every rewrite keeps the fetched values: the dead-branch rewrites only delete
 * nodes that can never produce a value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "ops/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_loop[] = {
    {"loop.stack_push_removal", "StackPush on a stack nobody pops becomes an Identity"},
    {"loop.dead_branch", "Switch on a constant predicate: the untaken branch is deleted"},
    {"loop.dead_branch_functional", "If/Case on a constant: replaced by a call of the taken branch"},
    {"loop.invariant_motion", "loop-invariant nodes moved out of the while frame (AGGRESSIVE only)"},
    {NULL, NULL},
};

static gn_status from_graph(gn__pass_ctx *c, gn_graph *g, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(c->err, s, "loop: %s", g->err.msg);
}

static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }
static bool preserved(const gn_graph *g, gn_id id)
{
    return (g->nodes[id].flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) != 0;
}

static Tensorflow__AttrValue *attr_new(gn_graph *g)
{
    Tensorflow__AttrValue *v = gn__graph_value_alloc(g, sizeof *v);
    if (v) tensorflow__attr_value__init(v);
    return v;
}

static gn_status set_type_attr(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *key, int32_t dtype)
{
    Tensorflow__AttrValue *v = attr_new(g);
    if (!v) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v->type = (Tensorflow__DataType)dtype;
    return from_graph(c, g, gn__node_set_attr(g, id, key, v));
}

/* Drops every attr but those named (NULL-terminated) and '_'-prefixed ones
 * other than _output_shapes. */
static gn_status keep_attrs(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *const *keep)
{
    uint32_t k = 0;
    while (k < g->nodes[id].n_attr) {
        const char *key = gn__str(g, g->nodes[id].attr[k].key);
        bool stay = key[0] == '_' && strcmp(key, "_output_shapes") != 0;
        for (const char *const *q = keep; *q && !stay; q++) stay = strcmp(*q, key) == 0;
        if (stay) {
            k++;
            continue;
        }
        GN_TRY(from_graph(c, g, gn__node_remove_attr(g, id, key)));
    }
    return GN_OK;
}

/* The boolean / integer scalar a Const node holds; false when it is not one. */
static bool const_scalar(const gn_graph *g, gn__edge e, int64_t *out)
{
    if (e.index != 0 || !op_is(g, e.node, "Const")) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(g, e.node, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    gn__tensor t;
    memset(&t, 0, sizeof t);
    gn__err e2;
    if (gn__tensor_from_proto(v->tensor, &t, &e2) != GN_OK) return false;
    bool ok = gn__tensor_numel(&t) == 1;
    if (ok) {
        switch (t.dtype) {
        case TENSORFLOW__DATA_TYPE__DT_BOOL: *out = *(const uint8_t *)t.data != 0; break;
        case TENSORFLOW__DATA_TYPE__DT_INT32: *out = *(const int32_t *)t.data; break;
        case TENSORFLOW__DATA_TYPE__DT_INT64: *out = *(const int64_t *)t.data; break;
        default: ok = false;
        }
    }
    gn__tensor_release(&t);
    return ok;
}

/* ---- stack push removal ------------------------------------------------------------ */
static bool passes_handle(const gn_graph *g, gn_id id)
{
    static const char *const ops[] = {"Identity", "Enter", "RefEnter", "Switch", "RefSwitch", "Merge",
                                      "RefMerge", "Exit", "RefExit", "NextIteration", "RefNextIteration"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (op_is(g, id, ops[i])) return true;
    return false;
}

static bool is_pop(const gn_graph *g, gn_id id) { return op_is(g, id, "StackPop") || op_is(g, id, "StackPopV2"); }
static bool is_push(const gn_graph *g, gn_id id)
{
    return op_is(g, id, "StackPush") || op_is(g, id, "StackPushV2");
}

static gn_status stack_pushes(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, "loop.stack_push_removal")) return GN_OK;
    const char *pat = "loop.stack_push_removal";
    gn_id *queue = NULL, *pushes = NULL;
    uint8_t *seen = NULL;
    gn_status s = GN_OK;
    for (gn_id st = 0; st < g->n_nodes && s == GN_OK; st++) {
        if (!gn__node_live(g, st) || !(op_is(g, st, "Stack") || op_is(g, st, "StackV2"))) continue;
        if (!queue) {
            queue = malloc(g->n_nodes * sizeof *queue);
            pushes = malloc(g->n_nodes * sizeof *pushes);
            seen = calloc(g->n_nodes, 1);
            if (!queue || !pushes || !seen) {
                s = gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
                break;
            }
        }
        /* the nodes the handle reaches; seen[] is reset for the ones visited */
        uint32_t qh = 0, qt = 0, np = 0;
        bool popped = false;
        queue[qt++] = st;
        seen[st] = 1;
        while (qh < qt) {
            gn_id n = queue[qh++];
            const gn__node *nd = &g->nodes[n];
            for (uint32_t k = 0; k < nd->n_use; k++) {
                gn_id u = nd->use[k].node;
                if (seen[u]) continue;
                if (is_pop(g, u)) popped = true;
                else if (is_push(g, u) && nd->use[k].slot == 0) pushes[np++] = u;
                if (passes_handle(g, u)) {
                    seen[u] = 1;
                    queue[qt++] = u;
                } else {
                    seen[u] = 2;
                }
            }
        }
        for (uint32_t i = 0; i < qt; i++) {
            const gn__node *nd = &g->nodes[queue[i]];
            for (uint32_t k = 0; k < nd->n_use; k++) seen[nd->use[k].node] = 0;
            seen[queue[i]] = 0;
        }
        if (popped || !np) continue;
        for (uint32_t i = 0; i < np && s == GN_OK; i++) {
            gn_id p = pushes[i];
            if (!gn__node_live(g, p) || g->nodes[p].n_in < 2) continue;
            if (preserved(g, p)) {
                gn__pass_refused(c, pat, g, p, "not removed: the push is preserved (fetch or feed)");
                continue;
            }
            gn_id handle = g->nodes[p].in[0].node;
            static const char *const keep[] = {"T", NULL};
            s = from_graph(c, g, gn__node_remove_input(g, p, 0));
            if (s == GN_OK) s = from_graph(c, g, gn__node_add_control(g, p, handle));
            if (s == GN_OK) s = keep_attrs(c, g, p, keep);
            if (s == GN_OK) s = from_graph(c, g, gn__node_set_op(g, p, "Identity"));
            if (s == GN_OK) {
                gn__pass_rewrote(c, pat, g, p, "stack '%s' is never popped: push became an Identity",
                                 gn__node_name(g, st));
                c->changed = true;
            }
        }
    }
    free(queue);
    free(pushes);
    free(seen);
    return s;
}

/* ---- dead branches (v1) -------------------------------------------------------------- */
static bool is_merge(const gn_graph *g, gn_id id) { return op_is(g, id, "Merge") || op_is(g, id, "RefMerge"); }
static bool is_frame_edge(const gn_graph *g, gn_id id)
{
    static const char *const ops[] = {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration",
                                      "LoopCond"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (op_is(g, id, ops[i])) return true;
    return false;
}

typedef struct dead_state {
    uint8_t *mark;        /* 1 dead, 2 merge touched */
    uint32_t *dead_in;    /* per merge: count of dead data inputs */
    gn_id *list;          /* dead nodes in discovery order */
    uint32_t n_list;
    gn_id *merges;        /* merges touched */
    uint32_t n_merges;
} dead_state;

static void dead_reset(dead_state *d)
{
    for (uint32_t i = 0; i < d->n_list; i++) d->mark[d->list[i]] = 0;
    for (uint32_t i = 0; i < d->n_merges; i++) {
        d->mark[d->merges[i]] = 0;
        d->dead_in[d->merges[i]] = 0;
    }
    d->n_list = d->n_merges = 0;
}

/* Adds u to the dead region, or says why the rewrite is refused. */
static const char *kill(const gn_graph *g, gn_id u, dead_state *d)
{
    if (is_frame_edge(g, u)) return "the dead branch reaches a loop boundary (Enter, Exit, NextIteration)";
    if (preserved(g, u)) return "a node of the dead branch is preserved (fetch or feed)";
    d->mark[u] = 1;
    d->list[d->n_list++] = u;
    return NULL;
}

/* A data edge into u is dead: u dies unless it is a Merge with a live input left. */
static const char *dead_data_edge(const gn_graph *g, gn_id u, dead_state *d)
{
    if (d->mark[u] == 1) return NULL;
    if (is_merge(g, u)) {
        if (g->nodes[u].n_in > 2) return "a Merge with more than two inputs is in the dead region";
        if (d->mark[u] != 2) {
            d->mark[u] = 2;
            d->merges[d->n_merges++] = u;
        }
        if (++d->dead_in[u] < g->nodes[u].n_in) return NULL;
    }
    return kill(g, u, d);
}

/* Grows the dead region from the readers of sw:port (the Switch itself stays
 * alive: its control readers are not dead); returns NULL on success or the
 * reason the rewrite is refused. */
static const char *dead_region(const gn_graph *g, gn_id sw, uint32_t port, dead_state *d)
{
    const gn__node *s = &g->nodes[sw];
    for (uint32_t k = 0; k < s->n_use; k++) {
        gn__use u = s->use[k];
        if (g->nodes[u.node].in[u.slot].index != port) continue;
        const char *why = dead_data_edge(g, u.node, d);
        if (why) return why;
    }
    for (uint32_t head = 0; head < d->n_list; head++) {
        const gn__node *nd = &g->nodes[d->list[head]];
        for (uint32_t k = 0; k < nd->n_use; k++) {
            const char *why = dead_data_edge(g, nd->use[k].node, d);
            if (why) return why;
        }
        for (uint32_t k = 0; k < nd->n_cuse; k++) {
            gn_id u = nd->cuse[k];
            if (d->mark[u] == 1 || is_merge(g, u)) continue; /* a dead control input does not kill a Merge */
            const char *why = kill(g, u, d);
            if (why) return why;
        }
    }
    return NULL;
}

static gn_status make_index_const(gn__pass_ctx *c, gn_graph *g, gn_id merge, int32_t index, gn_id *out)
{
    char name[1200];
    gn__pass_unique_name(g, gn__node_name(g, merge), "value_index", name, sizeof name);
    gn_id id;
    GN_TRY(from_graph(c, g, gn__node_add(g, name, "Const", &id)));
    gn__node_set_device(g, id, gn__str(g, g->nodes[merge].device));
    Tensorflow__TensorProto *t = gn__graph_value_alloc(g, sizeof *t);
    Tensorflow__TensorShapeProto *sh = gn__graph_value_alloc(g, sizeof *sh);
    int32_t *val = gn__graph_value_alloc(g, sizeof *val);
    Tensorflow__AttrValue *v = attr_new(g);
    if (!t || !sh || !val || !v) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    tensorflow__tensor_proto__init(t);
    tensorflow__tensor_shape_proto__init(sh);
    t->dtype = TENSORFLOW__DATA_TYPE__DT_INT32;
    t->tensor_shape = sh;
    *val = index;
    t->n_int_val = 1;
    t->int_val = val;
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = t;
    GN_TRY(set_type_attr(c, g, id, "dtype", TENSORFLOW__DATA_TYPE__DT_INT32));
    GN_TRY(from_graph(c, g, gn__node_set_attr(g, id, "value", v)));
    /* the Const runs when the Merge would have: same control inputs as the Merge's live input producer */
    *out = id;
    return GN_OK;
}

static gn_status apply_dead(gn__pass_ctx *c, gn_graph *g, gn_id sw, uint32_t taken, dead_state *d)
{
    const char *pat = "loop.dead_branch";
    /* 1. strip the data inputs of the dead nodes (consumers first is not needed then) */
    for (uint32_t i = 0; i < d->n_list; i++) {
        gn_id n = d->list[i];
        while (g->nodes[n].n_in) GN_TRY(from_graph(c, g, gn__node_remove_input(g, n, g->nodes[n].n_in - 1)));
    }
    /* 2. merges that keep one input */
    for (uint32_t i = 0; i < d->n_merges; i++) {
        gn_id m = d->merges[i];
        if (d->mark[m] == 1) continue; /* dead itself */
        int32_t live = -1;
        for (uint32_t k = 0; k < g->nodes[m].n_in; k++) {
            gn__edge e = g->nodes[m].in[k];
            bool dead_in = (e.node == sw && e.index != taken) || d->mark[e.node] == 1;
            if (!dead_in) live = (int32_t)k;
        }
        if (live < 0) continue;
        /* value_index readers get a constant */
        bool reads_index = false;
        for (uint32_t k = 0; k < g->nodes[m].n_use; k++) {
            gn__use u = g->nodes[m].use[k];
            reads_index |= g->nodes[u.node].in[u.slot].index == 1;
        }
        if (reads_index) {
            gn_id kid;
            GN_TRY(make_index_const(c, g, m, live, &kid));
            gn__edge e = g->nodes[m].in[live];
            if (e.node != GN_NONE) GN_TRY(from_graph(c, g, gn__node_add_control(g, kid, e.node)));
            GN_TRY(from_graph(c, g, gn__graph_forward_output(g, (gn__edge){m, 1}, (gn__edge){kid, 0})));
        }
        for (uint32_t k = g->nodes[m].n_in; k-- > 0;)
            if ((int32_t)k != live) GN_TRY(from_graph(c, g, gn__node_remove_input(g, m, k)));
        static const char *const keep[] = {"T", NULL};
        GN_TRY(keep_attrs(c, g, m, keep));
        GN_TRY(from_graph(c, g, gn__node_set_op(g, m, "Identity")));
        gn__pass_rewrote(c, pat, g, m, "Merge keeps one live input: became an Identity");
    }
    /* 3. delete the dead nodes */
    for (uint32_t i = 0; i < d->n_list; i++) GN_TRY(from_graph(c, g, gn__node_remove(g, d->list[i])));
    /* 4. the Switch becomes an Identity of its data input */
    GN_TRY(from_graph(c, g, gn__node_remove_input(g, sw, 1)));
    static const char *const keep[] = {"T", NULL};
    GN_TRY(keep_attrs(c, g, sw, keep));
    GN_TRY(from_graph(c, g, gn__node_set_op(g, sw, "Identity")));
    if (taken == 1) GN_TRY(from_graph(c, g, gn__graph_forward_output(g, (gn__edge){sw, 1}, (gn__edge){sw, 0})));
    gn__pass_rewrote(c, pat, g, sw, "predicate is constant %s: %u node(s) of the untaken branch deleted",
                     taken ? "true" : "false", d->n_list);
    c->changed = true;
    return GN_OK;
}

static gn_status dead_branches(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "loop.dead_branch";
    if (!gn__pattern_enabled(c, pat)) return GN_OK;
    dead_state d = {0};
    size_t cap = 0;
    gn_status s = GN_OK;
    uint32_t n0 = g->n_nodes;
    for (gn_id sw = 0; sw < n0 && s == GN_OK; sw++) {
        if (!gn__node_live(g, sw) || !(op_is(g, sw, "Switch") || op_is(g, sw, "RefSwitch"))) continue;
        if (g->nodes[sw].n_in != 2) continue;
        int64_t pv;
        if (!const_scalar(g, g->nodes[sw].in[1], &pv)) continue;
        if (gn__pass_deadline_passed(c)) break;
        if (preserved(g, sw)) {
            gn__pass_refused(c, pat, g, sw, "not rewritten: the Switch is preserved (fetch or feed)");
            continue;
        }
        if (g->n_nodes > cap) {
            /* the graph grows (index constants): keep the arrays covering every id */
            size_t n = g->n_nodes + g->n_nodes / 2 + 16;
            uint8_t *mark = realloc(d.mark, n);
            if (mark) d.mark = mark;
            uint32_t *din = mark ? realloc(d.dead_in, n * sizeof *din) : NULL;
            if (din) d.dead_in = din;
            gn_id *list = din ? realloc(d.list, n * sizeof *list) : NULL;
            if (list) d.list = list;
            gn_id *merges = list ? realloc(d.merges, n * sizeof *merges) : NULL;
            if (merges) d.merges = merges;
            if (!merges) {
                s = gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
                break;
            }
            memset(d.mark + cap, 0, n - cap);
            memset(d.dead_in + cap, 0, (n - cap) * sizeof *d.dead_in);
            cap = n;
        }
        uint32_t taken = pv ? 1 : 0;
        const char *why = dead_region(g, sw, 1 - taken, &d);
        if (why) {
            gn__pass_refused(c, pat, g, sw, "not rewritten: %s", why);
            dead_reset(&d);
            continue;
        }
        s = apply_dead(c, g, sw, taken, &d);
        dead_reset(&d); /* marks of deleted nodes must not leak into the next Switch */
    }
    free(d.mark);
    free(d.dead_in);
    free(d.list);
    free(d.merges);
    return s;
}

/* ---- functional If / Case with a constant selector ----------------------------------------- */
static gn_status functional_branches(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "loop.dead_branch_functional";
    if (!gn__pattern_enabled(c, pat)) return GN_OK;
    uint32_t n0 = g->n_nodes;
    for (gn_id id = 0; id < n0; id++) {
        if (!gn__node_live(g, id)) continue;
        bool is_if = op_is(g, id, "If") || op_is(g, id, "StatelessIf");
        bool is_case = op_is(g, id, "Case") || op_is(g, id, "StatelessCase");
        if (!is_if && !is_case) continue;
        if (g->nodes[id].n_in < 1) continue;
        int64_t v;
        if (!const_scalar(g, g->nodes[id].in[0], &v)) continue;
        const Tensorflow__NameAttrList *fn = NULL;
        if (is_if) {
            const Tensorflow__AttrValue *a = gn__node_attr(g, id, v ? "then_branch" : "else_branch");
            if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC) fn = a->func;
        } else {
            const Tensorflow__AttrValue *a = gn__node_attr(g, id, "branches");
            if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && a->list && a->list->n_func) {
                size_t n = a->list->n_func;
                size_t k = (v < 0 || (uint64_t)v >= n) ? n - 1 : (size_t)v;
                fn = a->list->func[k];
            }
        }
        if (!fn || !fn->name) {
            gn__pass_refused(c, pat, g, id, "not rewritten: the branch function attr is missing");
            continue;
        }
        const Tensorflow__AttrValue *tin = gn__node_attr(g, id, "Tin");
        const Tensorflow__AttrValue *tout = gn__node_attr(g, id, "Tout");
        if (!tin || !tout) {
            gn__pass_refused(c, pat, g, id, "not rewritten: Tin or Tout is missing");
            continue;
        }
        bool stateless = op_is(g, id, "StatelessIf") || op_is(g, id, "StatelessCase");
        Tensorflow__AttrValue *f = attr_new(g);
        if (!f) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
        f->value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
        f->func = (Tensorflow__NameAttrList *)fn;
        const Tensorflow__AttrValue *keep_tin = tin, *keep_tout = tout;
        GN_TRY(from_graph(c, g, gn__node_remove_input(g, id, 0)));
        /* the selector's producer stays ordered before the call (it is a Const: harmless) */
        static const char *const keep[] = {NULL};
        GN_TRY(keep_attrs(c, g, id, keep));
        GN_TRY(from_graph(c, g, gn__node_set_attr(g, id, "Tin", keep_tin)));
        GN_TRY(from_graph(c, g, gn__node_set_attr(g, id, "Tout", keep_tout)));
        GN_TRY(from_graph(c, g, gn__node_set_attr(g, id, "f", f)));
        GN_TRY(from_graph(c, g, gn__node_set_op(g, id, stateless ? "PartitionedCall" : "StatefulPartitionedCall")));
        gn__pass_rewrote(c, pat, g, id, "%s on constant %lld: now a call of '%s'", is_if ? "If" : "Case",
                         (long long)v, fn->name);
        c->changed = true;
    }
    return GN_OK;
}

/* ---- loop-invariant node motion (AGGRESSIVE) ---------------------------------------------- */
static bool const_enter(const gn_graph *g, gn_id id)
{
    bool b = false;
    return (op_is(g, id, "Enter") || op_is(g, id, "RefEnter")) && gn__attr_get_bool(g, id, "is_constant", &b) && b;
}

static gn_status hoist_one(gn__pass_ctx *c, gn_graph *g, gn_id n, uint32_t *counter)
{
    gn__node *nd = &g->nodes[n];
    gn_id enter0 = nd->in[0].node;
    const char *frame = NULL;
    size_t flen = 0;
    if (!gn__attr_get_string(g, enter0, "frame_name", &frame, &flen)) return GN_OK;
    /* all inputs' Enters must be of the same frame */
    for (uint32_t k = 1; k < nd->n_in; k++) {
        const char *f2;
        size_t l2;
        if (!gn__attr_get_string(g, nd->in[k].node, "frame_name", &f2, &l2) || l2 != flen || memcmp(f2, frame, flen))
            return GN_OK;
    }
    int32_t nout = gn__node_num_outputs(g, n);
    const gn__opdef *op = gn__node_opdef(g, n);
    if (nout < 1 || !op) return GN_OK;
    /* read the outer tensors */
    for (uint32_t k = 0; k < g->nodes[n].n_in; k++) {
        gn__edge outer = g->nodes[g->nodes[n].in[k].node].in[0];
        GN_TRY(from_graph(c, g, gn__node_set_input(g, n, k, outer)));
    }
    char fname[512];
    snprintf(fname, sizeof fname, "%.*s", (int)flen, frame);
    const Tensorflow__AttrValue *fattr = gn__node_attr(g, enter0, "frame_name");
    const Tensorflow__AttrValue *piter = gn__node_attr(g, enter0, "parallel_iterations");
    const Tensorflow__AttrValue *isconst = gn__node_attr(g, enter0, "is_constant");
    for (int32_t k = 0; k < nout; k++) {
        bool used = false;
        for (uint32_t u = 0; u < g->nodes[n].n_use && !used; u++) {
            gn__use us = g->nodes[n].use[u];
            used = g->nodes[us.node].in[us.slot].index == (uint32_t)k;
        }
        if (!used) continue;
        int32_t dt = gn__op_output_dtype(op, g, n, (uint32_t)k);
        char suffix[600], name[1200];
        snprintf(suffix, sizeof suffix, "%s_enter_%u", fname, (*counter)++);
        gn__pass_unique_name(g, "LoopOptimizer", suffix, name, sizeof name);
        gn_id e;
        GN_TRY(from_graph(c, g, gn__node_add(g, name, "Enter", &e)));
        gn__node_set_device(g, e, gn__str(g, g->nodes[n].device));
        GN_TRY(from_graph(c, g, gn__graph_forward_output(g, (gn__edge){n, (uint32_t)k}, (gn__edge){e, 0})));
        GN_TRY(from_graph(c, g, gn__node_add_input(g, e, (gn__edge){n, (uint32_t)k})));
        if (dt > 0) GN_TRY(set_type_attr(c, g, e, "T", dt));
        GN_TRY(from_graph(c, g, gn__node_set_attr(g, e, "frame_name", fattr)));
        GN_TRY(from_graph(c, g, gn__node_set_attr(g, e, "is_constant", isconst)));
        if (piter) GN_TRY(from_graph(c, g, gn__node_set_attr(g, e, "parallel_iterations", piter)));
    }
    gn__pass_rewrote(c, "loop.invariant_motion", g, n, "moved out of frame '%s'", fname);
    c->changed = true;
    return GN_OK;
}

static gn_status invariant_motion(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "loop.invariant_motion";
    if (c->toggle != GN_TOGGLE_AGGRESSIVE || !gn__pattern_enabled(c, pat)) return GN_OK;
    uint32_t counter = 0;
    bool again = true;
    while (again && !gn__pass_deadline_passed(c)) {
        again = false;
        uint32_t n0 = g->n_nodes;
        for (gn_id n = 0; n < n0; n++) {
            if (!gn__node_live(g, n)) continue;
            const gn__node *nd = &g->nodes[n];
            if (!nd->n_in || nd->n_ctrl || preserved(g, n)) continue;
            const gn__opdef *op = gn__node_opdef(g, n);
            if (!op || (op->flags & GN__OPF_STATEFUL) || (op->traits & (GN__T_CONTROL_FLOW | GN__T_FUNCTION_CALL)))
                continue;
            if (op_is(g, n, "Const") || op_is(g, n, "HostConst")) continue;
            bool all = true;
            for (uint32_t k = 0; k < nd->n_in && all; k++) all = const_enter(g, nd->in[k].node);
            if (!all) continue;
            uint32_t before = g->n_nodes;
            GN_TRY(hoist_one(c, g, n, &counter));
            again |= g->n_nodes != before;
        }
    }
    return GN_OK;
}

gn_status gn__pass_loop(gn__pass_ctx *c, gn_graph *g)
{
    GN_TRY(stack_pushes(c, g));
    GN_TRY(dead_branches(c, g));
    GN_TRY(functional_branches(c, g));
    GN_TRY(invariant_motion(c, g));
    return GN_OK;
}
