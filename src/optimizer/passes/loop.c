/* Loop optimizer (Grappler's loop_optimizer.cc, docs/reference_grappler.md §3.13).
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
 *  loop.invariant_motion_functional  The same for functional While /
 *      StatelessWhile (AGGRESSIVE only), at the top level. Loop variable k is
 *      invariant when the body returns its argument k unchanged (directly or
 *      through Identities). A body node is moved when it is stateless, not
 *      control flow nor a call, has no control inputs or consumers, is not a
 *      control output, and its data inputs are invariant arguments, Consts or
 *      moved nodes (at least one not a Const: constant folding handles the
 *      rest). The moved nodes are copied before the loop as
 *      "<while>/LoopOptimizer/<body node>" (reading the While's inputs; the
 *      Consts they read are copied too); each of their outputs that the rest
 *      of the body reads becomes a new loop variable: a new body argument
 *      "loop_invariant_<j>" returned unchanged (output
 *      "loop_invariant_<j>_out"), a new cond argument it ignores, a new While
 *      input, with T, output_shapes and _output_shapes (when they list every
 *      loop variable) extended (the moved node's _output_shapes entry, else
 *      unknown rank); parallel_iterations and the other attrs stay. The body
 *      and cond are edited in copies, "<f>_licm_for_<while, '/' -> '_'>",
 *      which the While then names, so other users of the originals (another
 *      While, a direct call) see them unchanged; the function optimizer drops
 *      the originals when nothing references them any more. Refused: a While
 *      inside a function body (the rewrite adds library functions, which a
 *      body's optimization cannot do), missing functions, signatures or T not
 *      matching the loop variables, a copy's name already taken, an unknown
 *      dtype. As with TensorFlow's loop-invariant motion, a moved node runs
 *      even when the loop runs zero times.
 *  loop.const_var_functional  Beyond Grappler, AGGRESSIVE only, at the top
 *      level, before the invariant motion: a functional While / StatelessWhile
 *      loop variable whose input is a Const (not preserved, output 0) and that
 *      the body returns unchanged (as above) is the same constant on every
 *      iteration. In copies of the body and cond, "<f>_const_for_<while, '/'
 *      -> '_'>", its _Arg becomes a Const of the same name and value (as
 *      function.specialize does for a call's constant inputs: gn__fn_def_cut,
 *      gn__fn_body_cut), its _Retval goes, a Const nothing reads goes; the
 *      While loses the input (the Const's control inputs move to it), its
 *      consumers of that output read the Const, the later outputs are
 *      renumbered; T, output_shapes, _output_shapes (when they list every loop
 *      variable), _read_only_resource_inputs and _num_original_outputs follow.
 *      A frozen TF2 While carries its weights as such loop variables; as
 *      Consts in the body, constant folding and the fusions there see them.
 *      Refused: a While inside a function body, a preserved While (a fetched
 *      "while:k" must keep its meaning), every loop variable constant, a copy's
 *      name taken.
 *
 * Every rewrite keeps the fetched values: the dead-branch rewrites only delete
 * nodes that can never produce a value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "optimizer/pass.h"
#include "optimizer/passes/function_impl.h"

const gn__pattern gn__patterns_loop[] = {
    {"loop.stack_push_removal", "StackPush on a stack nobody pops becomes an Identity"},
    {"loop.dead_branch", "Switch on a constant predicate: the untaken branch is deleted"},
    {"loop.dead_branch_functional", "If/Case on a constant: replaced by a call of the taken branch"},
    {"loop.invariant_motion", "loop-invariant nodes moved out of the while frame (AGGRESSIVE only)"},
    {"loop.invariant_motion_functional", "loop-invariant nodes moved out of a functional While's body (AGGRESSIVE only)"},
    {"loop.const_var_functional", "constant loop variables of a functional While become Consts in its body and cond (AGGRESSIVE only)"},
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

static gn_status set_type_attr(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *key, int32_t dtype)
{
    return from_graph(c, g, gn__node_set_attr_type(g, id, key, dtype));
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
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
    if (!t || !sh || !val || !v) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    tensorflow__tensor_proto__init(t);
    tensorflow__tensor_shape_proto__init(sh);
    t->dtype = TENSORFLOW__DATA_TYPE__DT_INT32;
    t->tensor_shape = sh;
    *val = index;
    t->n_int_val = 1;
    t->int_val = val;
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
        Tensorflow__AttrValue *f = gn__attr_new_func(g, (Tensorflow__NameAttrList *)fn);
        if (!f) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
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

/* ---- loop-invariant motion out of functional While (AGGRESSIVE) --------------------------- */
enum { LV_VARIANT = 0, LV_PASS = 1, LV_CONST = 2, LV_HOIST = 3 };

static bool no_placeholder_attrs(const gn_graph *g, gn_id id)
{
    for (uint32_t k = 0; k < g->nodes[id].n_attr; k++)
        if (g->nodes[id].attr[k].value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER) return false;
    return true;
}

/* May body node v be computed once outside the loop, its inputs being? */
static bool movable(const gn_graph *b, gn_id v)
{
    const gn__node *nd = &b->nodes[v];
    if (nd->n_ctrl || nd->n_cuse || !nd->n_in || (nd->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET))) return false;
    const gn__opdef *op = gn__node_opdef(b, v);
    if (!op || nd->opdef < 0 || (op->flags & GN__OPF_STATEFUL) ||
        (op->traits & (GN__T_CONTROL_FLOW | GN__T_FUNCTION_CALL)))
        return false;
    return gn__node_num_outputs(b, v) >= 1 && no_placeholder_attrs(b, v);
}

static const Tensorflow__NameAttrList *func_attr(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func && a->func->name ? a->func : NULL;
}

typedef struct licm {
    gn__pass_ctx *c;
    gn_graph *g;
    gn_id w;
    uint32_t n;                 /* loop variables */
    const gn_graph *b;          /* the body */
    uint8_t *st;                /* per body node: LV_* */
    uint8_t *need;              /* per body node: copied out */
    gn_id *pass_arg;            /* per body node of LV_PASS: the loop variable it is */
    gn_id *outer;               /* per body node: its copy in g */
    gn__edge *bound;            /* the body tensors that become loop variables */
    int32_t *bound_dt;
    uint32_t n_bound;
    gn_id *order;
    uint32_t n_order;
    uint32_t moved;
} licm;

static void licm_free(licm *L)
{
    free(L->st);
    free(L->need);
    free(L->pass_arg);
    free(L->outer);
    free(L->bound);
    free(L->bound_dt);
    free(L->order);
}

/* Loop variable k of a While whose body is b (signature sig): 1 when the body returns
 * its argument k as it came (directly or through Identities without control inputs),
 * 0 when not, -1 when the body has no such argument / return; *arg gets the _Arg. */
static int invariant_var(const gn_graph *b, const Tensorflow__OpDef *sig, uint32_t k, gn_id *arg)
{
    gn_id a = gn__graph_find(b, sig->input_arg[k]->name);
    char rn[1200];
    snprintf(rn, sizeof rn, "_retval:%s", sig->output_arg[k]->name);
    gn_id r = gn__graph_find(b, rn);
    if (a == GN_NONE || r == GN_NONE || !(b->nodes[a].flags & GN__NODE_FN_ARG) || b->nodes[r].n_in != 1) return -1;
    *arg = a;
    gn__edge e = b->nodes[r].in[0];
    while (e.node != a && e.index == 0 && strcmp(gn__node_op(b, e.node), "Identity") == 0 &&
           b->nodes[e.node].n_in == 1 && b->nodes[e.node].n_ctrl == 0)
        e = b->nodes[e.node].in[0];
    return e.node == a && e.index == 0;
}

/* Classifies the body's nodes; false with why when the While is refused. */
static bool licm_analyze(licm *L, const gn__function *bf, const char **why)
{
    const gn_graph *b = L->b;
    const Tensorflow__OpDef *sig = bf->def->signature;
    uint32_t N = b->n_nodes;
    L->st = calloc(N ? N : 1, 1);
    L->need = calloc(N ? N : 1, 1);
    L->pass_arg = malloc((N ? N : 1) * sizeof *L->pass_arg);
    L->bound = malloc((N ? N : 1) * sizeof *L->bound);
    L->bound_dt = malloc((N ? N : 1) * sizeof *L->bound_dt);
    if (!L->st || !L->need || !L->pass_arg || !L->bound || !L->bound_dt) {
        *why = "out of memory";
        return false;
    }
    /* loop variable k is invariant when the body returns its argument k as it came (through Identities) */
    for (uint32_t k = 0; k < L->n; k++) {
        gn_id a = GN_NONE;
        int inv = invariant_var(b, sig, k, &a);
        if (inv < 0) {
            *why = "the body's arguments do not match the loop variables";
            return false;
        }
        if (inv) {
            L->st[a] = LV_PASS;
            L->pass_arg[a] = k;
        }
    }
    /* forward over the body in topological order */
    gn_status s = gn__graph_topo((gn_graph *)b, &L->order, &L->n_order);
    if (s != GN_OK) {
        *why = "the body has a cycle";
        return false;
    }
    for (uint32_t i = 0; i < L->n_order; i++) {
        gn_id v = L->order[i];
        const gn__node *nd = &b->nodes[v];
        if (nd->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        if (strcmp(gn__node_op(b, v), "Const") == 0 && !nd->n_in && !nd->n_ctrl && !nd->n_cuse) {
            L->st[v] = LV_CONST;
            continue;
        }
        if (strcmp(gn__node_op(b, v), "Identity") == 0 && nd->n_in == 1 && !nd->n_ctrl &&
            L->st[nd->in[0].node] == LV_PASS) {
            L->st[v] = LV_PASS;
            L->pass_arg[v] = L->pass_arg[nd->in[0].node];
            continue;
        }
        if (!movable(b, v)) continue;
        bool cret = false;
        for (uint32_t k = 0; k < bf->n_control_ret && !cret; k++) cret = bf->control_ret_node[k] == v;
        if (cret) continue;
        bool all = true, some = false;
        for (uint32_t k = 0; k < nd->n_in && all; k++) {
            uint8_t t = L->st[nd->in[k].node];
            all = t != LV_VARIANT;
            some |= t == LV_PASS || t == LV_HOIST;
        }
        if (all) L->st[v] = some ? LV_HOIST : LV_CONST;
    }
    /* the tensors crossing from hoisted nodes to the rest of the body */
    for (uint32_t i = 0; i < L->n_order; i++) {
        gn_id v = L->order[i];
        if (L->st[v] != LV_HOIST) continue;
        int32_t no = gn__node_num_outputs(b, v);
        for (int32_t k = 0; k < no; k++) {
            bool crosses = false;
            for (uint32_t u = 0; u < b->nodes[v].n_use && !crosses; u++) {
                gn__use us = b->nodes[v].use[u];
                crosses = b->nodes[us.node].in[us.slot].index == (uint32_t)k && L->st[us.node] == LV_VARIANT;
            }
            if (!crosses) continue;
            int32_t dt = gn__op_output_dtype(gn__node_opdef(b, v), b, v, (uint32_t)k);
            if (dt <= 0) {
                *why = "the dtype of a loop-invariant tensor is unknown";
                return false;
            }
            L->bound[L->n_bound] = (gn__edge){v, (uint32_t)k};
            L->bound_dt[L->n_bound++] = dt;
        }
    }
    /* what the crossing tensors need, copied out */
    for (uint32_t j = 0; j < L->n_bound; j++) L->need[L->bound[j].node] = 1;
    for (uint32_t i = L->n_order; i-- > 0;) {
        gn_id v = L->order[i];
        if (!L->need[v]) continue;
        if (L->st[v] == LV_HOIST) L->moved++;
        for (uint32_t k = 0; k < b->nodes[v].n_in; k++) {
            gn_id p = b->nodes[v].in[k].node;
            if (L->st[p] == LV_CONST || L->st[p] == LV_HOIST) L->need[p] = 1;
        }
    }
    *why = NULL;
    return true;
}

static gn_status licm_fail(licm *L, gn_status s, const gn_graph *g)
{
    return gn__fail(L->c->err, s, "loop: invariant motion out of '%s': %s", gn__node_name(L->g, L->w), g->err.msg);
}

/* The outer copies of the needed body nodes, in body order. */
static gn_status licm_copy_out(licm *L)
{
    gn_graph *g = L->g;
    const gn_graph *b = L->b;
    for (uint32_t k = 0; k < b->n_blobs; k++)
        if (gn__graph_adopt_blob(g, b->blobs[k]) != GN_OK) return licm_fail(L, GN_ERR_NOMEM, g);
    const char *dev = gn__str(g, g->nodes[L->w].device);
    char base[1200];
    snprintf(base, sizeof base, "%s/LoopOptimizer", gn__node_name(g, L->w));
    for (uint32_t i = 0; i < L->n_order; i++) {
        gn_id v = L->order[i];
        if (!L->need[v]) continue;
        char name[2600];
        gn__pass_unique_name(g, base, gn__node_name(b, v), name, sizeof name);
        gn_id o;
        if (gn__node_add(g, name, gn__node_op(b, v), &o) != GN_OK) return licm_fail(L, GN_ERR_GRAPH, g);
        L->outer[v] = o;
        const char *bdev = gn__str(b, b->nodes[v].device);
        gn__node_set_device(g, o, bdev[0] ? bdev : dev);
        g->nodes[o].orig_index = g->nodes[L->w].orig_index;
        for (uint32_t k = 0; k < b->nodes[v].n_attr; k++) {
            const gn__attr *a = &b->nodes[v].attr[k];
            if (gn__node_set_attr(g, o, gn__str(b, a->key), a->value) != GN_OK) return licm_fail(L, GN_ERR_GRAPH, g);
        }
        for (uint32_t k = 0; k < b->nodes[v].n_in; k++) {
            gn__edge e = b->nodes[v].in[k];
            gn__edge oe = L->st[e.node] == LV_PASS ? g->nodes[L->w].in[L->pass_arg[e.node]]
                                                    : (gn__edge){L->outer[e.node], e.index};
            if (gn__node_add_input(g, o, oe) != GN_OK) return licm_fail(L, GN_ERR_GRAPH, g);
        }
    }
    return GN_OK;
}

/* A new _Arg / _Retval of a body: T, index. */
static gn_status fn_io_node(gn_graph *b, const char *name, bool ret, int32_t dt, uint32_t index, gn_id *out)
{
    GN_TRY(gn__node_add(b, name, ret ? "_Retval" : "_Arg", out));
    b->nodes[*out].flags |= ret ? GN__NODE_FN_RET : GN__NODE_FN_ARG;
    b->nodes[*out].orig_index = index;
    Tensorflow__AttrValue *t = gn__attr_new_type(b, dt), *ix = gn__attr_new_int(b, index);
    if (!t || !ix) return GN_ERR_NOMEM;
    GN_TRY(gn__node_set_attr(b, *out, "T", t));
    return gn__node_set_attr(b, *out, "index", ix);
}

/* A copy of od named `name` whose signature has m more inputs (in_names)
 * and, when out_names, m more outputs, of types dt; built in g's values. */
static Tensorflow__FunctionDef *extend_def(gn_graph *g, const Tensorflow__FunctionDef *od, const char *name,
                                           char **in_names, char **out_names, const int32_t *dt, uint32_t m)
{
    Tensorflow__FunctionDef *fd = gn__graph_value_alloc(g, sizeof *fd);
    Tensorflow__OpDef *sig = gn__graph_value_alloc(g, sizeof *sig);
    const Tensorflow__OpDef *os = od->signature;
    size_t ni = os->n_input_arg + m, no = os->n_output_arg + (out_names ? m : 0);
    Tensorflow__OpDef__ArgDef **ia = gn__graph_value_alloc(g, ni * sizeof *ia);
    Tensorflow__OpDef__ArgDef **oa = gn__graph_value_alloc(g, (no ? no : 1) * sizeof *oa);
    char *nm = gn__graph_value_alloc(g, strlen(name) + 1);
    if (!fd || !sig || !ia || !oa || !nm) return NULL;
    *fd = *od;
    *sig = *os;
    strcpy(nm, name);
    sig->name = nm;
    if (os->n_input_arg) memcpy(ia, os->input_arg, os->n_input_arg * sizeof *ia);
    if (os->n_output_arg) memcpy(oa, os->output_arg, os->n_output_arg * sizeof *oa);
    for (uint32_t j = 0; j < m; j++) {
        for (int w = 0; w < (out_names ? 2 : 1); w++) {
            Tensorflow__OpDef__ArgDef *a = gn__graph_value_alloc(g, sizeof *a);
            const char *src = w ? out_names[j] : in_names[j];
            char *an = gn__graph_value_alloc(g, strlen(src) + 1);
            if (!a || !an) return NULL;
            tensorflow__op_def__arg_def__init(a);
            strcpy(an, src);
            a->name = an;
            a->type = (Tensorflow__DataType)dt[j];
            if (w) oa[os->n_output_arg + j] = a;
            else ia[os->n_input_arg + j] = a;
        }
    }
    sig->n_input_arg = ni;
    sig->input_arg = ia;
    sig->n_output_arg = no;
    sig->output_arg = oa;
    fd->signature = sig;
    return fd;
}

/* A name for new argument j, free in body b and among its signature's args. */
static void arg_name(const gn_graph *b, const Tensorflow__OpDef *sig, uint32_t j, const char *sfx, char *buf, size_t n)
{
    for (uint32_t t = 0;; t++) {
        if (t) snprintf(buf, n, "loop_invariant_%u_%u%s", j, t, sfx);
        else snprintf(buf, n, "loop_invariant_%u%s", j, sfx);
        bool taken = gn__graph_find(b, buf) != GN_NONE;
        char rn[300];
        snprintf(rn, sizeof rn, "_retval:%s", buf);
        taken |= gn__graph_find(b, rn) != GN_NONE;
        for (size_t k = 0; k < sig->n_input_arg && !taken; k++) taken = strcmp(sig->input_arg[k]->name, buf) == 0;
        for (size_t k = 0; k < sig->n_output_arg && !taken; k++) taken = strcmp(sig->output_arg[k]->name, buf) == 0;
        if (!taken) return;
    }
}

/* Adds function `name` (a clone of of's body, edited by the caller) with def fd, control returns kept. */
static gn_status add_fn(licm *L, const char *name, const Tensorflow__FunctionDef *fd, gn_graph *body,
                        const gn__function *of)
{
    gn_graph *g = L->g;
    gn__function snapshot = *of; /* of may move when g->fns grows */
    gn__function *nf = NULL;
    if (gn__graph_add_function(g, name, fd, body, &nf) != GN_OK) {
        gn_graph_free(body);
        return licm_fail(L, GN_ERR_GRAPH, g);
    }
    if (snapshot.n_control_ret) {
        nf->control_ret_name = gn__arena_alloc(&g->arena, snapshot.n_control_ret * sizeof *nf->control_ret_name, 4);
        nf->control_ret_node = gn__arena_alloc(&g->arena, snapshot.n_control_ret * sizeof *nf->control_ret_node, 4);
        if (!nf->control_ret_name || !nf->control_ret_node)
            return gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
        nf->n_control_ret = snapshot.n_control_ret;
        for (uint32_t k = 0; k < snapshot.n_control_ret; k++) {
            nf->control_ret_name[k] = snapshot.control_ret_name[k]; /* the body is a clone: same string ids */
            gn_id old = snapshot.control_ret_node[k];
            nf->control_ret_node[k] = old != GN_NONE ? gn__graph_find(body, gn__node_name(snapshot.body, old)) : GN_NONE;
        }
    }
    return GN_OK;
}

/* A list attr of the While (T, output_shapes, _output_shapes) with the new entries appended. */
static const Tensorflow__AttrValue *extend_list(licm *L, const Tensorflow__AttrValue *v, bool types)
{
    gn_graph *g = L->g;
    Tensorflow__AttrValue *nv = gn__graph_value_alloc(g, sizeof *nv);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    if (!nv || !l) return NULL;
    *nv = *v;
    *l = *v->list;
    size_t n = types ? v->list->n_type : v->list->n_shape;
    if (types) {
        Tensorflow__DataType *t = gn__graph_value_alloc(g, (n + L->n_bound) * sizeof *t);
        if (!t) return NULL;
        memcpy(t, v->list->type, n * sizeof *t);
        for (uint32_t j = 0; j < L->n_bound; j++) t[n + j] = (Tensorflow__DataType)L->bound_dt[j];
        l->type = t;
        l->n_type = n + L->n_bound;
    } else {
        Tensorflow__TensorShapeProto **sh = gn__graph_value_alloc(g, (n + L->n_bound) * sizeof *sh);
        if (!sh) return NULL;
        if (n) memcpy(sh, v->list->shape, n * sizeof *sh);
        for (uint32_t j = 0; j < L->n_bound; j++) {
            /* the hoisted node's _output_shapes entry when it has one, else unknown */
            const Tensorflow__AttrValue *os = gn__node_attr(L->b, L->bound[j].node, "_output_shapes");
            if (os && os->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && os->list &&
                L->bound[j].index < os->list->n_shape) {
                sh[n + j] = os->list->shape[L->bound[j].index];
                continue;
            }
            Tensorflow__TensorShapeProto *u = gn__graph_value_alloc(g, sizeof *u);
            if (!u) return NULL;
            tensorflow__tensor_shape_proto__init(u);
            u->unknown_rank = 1;
            sh[n + j] = u;
        }
        l->shape = sh;
        l->n_shape = n + L->n_bound;
    }
    nv->list = l;
    return nv;
}

static const Tensorflow__AttrValue *renamed_func(gn_graph *g, const Tensorflow__AttrValue *v, const char *name)
{
    Tensorflow__AttrValue *nv = gn__graph_value_alloc(g, sizeof *nv);
    Tensorflow__NameAttrList *nl = gn__graph_value_alloc(g, sizeof *nl);
    char *nm = gn__graph_value_alloc(g, strlen(name) + 1);
    if (!nv || !nl || !nm) return NULL;
    *nv = *v;
    *nl = *v->func;
    strcpy(nm, name);
    nl->name = nm;
    nv->func = nl;
    return nv;
}

static gn_status licm_apply(licm *L, const gn__function *bf, const gn__function *cf, const char *bname,
                            const char *cname)
{
    gn_graph *g = L->g;
    const gn_graph *b = L->b;
    const uint32_t m = L->n_bound, n = L->n;
    gn_status s = GN_OK;
    L->outer = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof *L->outer);
    char **in_names = calloc(m, sizeof *in_names), **out_names = calloc(m, sizeof *out_names);
    char **c_names = calloc(m, sizeof *c_names);
    gn_graph *nb = NULL, *nc = NULL;
    if (!L->outer || !in_names || !out_names || !c_names) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
        goto out;
    }
    for (uint32_t j = 0; j < m && s == GN_OK; j++) {
        in_names[j] = malloc(256);
        out_names[j] = malloc(256);
        c_names[j] = malloc(256);
        if (!in_names[j] || !out_names[j] || !c_names[j]) s = gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
    }
    if (s != GN_OK) goto out;
    s = licm_copy_out(L);
    if (s != GN_OK) goto out;
    /* the body: the crossing tensors become arguments returned as they came; the hoisted nodes go */
    if (gn__graph_clone(b, &nb) != GN_OK || gn__graph_clone(cf->body, &nc) != GN_OK) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
        goto out;
    }
    const Tensorflow__OpDef *bsig = bf->def->signature, *csig = cf->def->signature;
    for (uint32_t j = 0; j < m; j++) {
        arg_name(b, bsig, j, "", in_names[j], 256);
        snprintf(out_names[j], 256, "%s_out", in_names[j]);
        arg_name(cf->body, csig, j, "", c_names[j], 256);
        gn_id a, r, ca;
        char rn[300];
        snprintf(rn, sizeof rn, "_retval:%s", out_names[j]);
        s = fn_io_node(nb, in_names[j], false, L->bound_dt[j], n + j, &a);
        if (s == GN_OK) s = fn_io_node(nb, rn, true, L->bound_dt[j], n + j, &r);
        if (s == GN_OK) s = gn__node_add_input(nb, r, (gn__edge){a, 0});
        if (s == GN_OK) s = fn_io_node(nc, c_names[j], false, L->bound_dt[j], (uint32_t)csig->n_input_arg + j, &ca);
        if (s != GN_OK) {
            s = gn__fail(L->c->err, s, "loop: invariant motion out of '%s': cannot add argument '%s'",
                         gn__node_name(g, L->w), in_names[j]);
            goto out;
        }
        /* the rest of the body reads the argument */
        gn__edge e = L->bound[j];
        uint32_t nu = nb->nodes[e.node].n_use;
        for (uint32_t u = nu; u-- > 0;) {
            gn__use us = nb->nodes[e.node].use[u];
            if (us.node < b->n_nodes && L->st[us.node] == LV_VARIANT &&
                nb->nodes[us.node].in[us.slot].index == e.index) {
                s = gn__node_set_input(nb, us.node, us.slot, (gn__edge){a, 0});
                if (s != GN_OK) {
                    s = licm_fail(L, s, nb);
                    goto out;
                }
            }
        }
    }
    /* hoisted nodes nothing reads any more, and constants only they read */
    for (uint32_t i = L->n_order; i-- > 0 && s == GN_OK;) {
        gn_id v = L->order[i];
        if ((L->st[v] == LV_HOIST || (L->st[v] == LV_CONST && L->need[v])) && nb->nodes[v].n_use == 0 &&
            nb->nodes[v].n_cuse == 0) {
            s = gn__node_remove(nb, v);
            if (s != GN_OK) s = licm_fail(L, s, nb);
        }
    }
    if (s == GN_OK && (gn__graph_compact(nb) != GN_OK || gn__graph_compact(nc) != GN_OK))
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
    if (s != GN_OK) goto out;
    /* the functions */
    Tensorflow__FunctionDef *bfd = extend_def(g, bf->def, bname, in_names, out_names, L->bound_dt, m);
    Tensorflow__FunctionDef *cfd = extend_def(g, cf->def, cname, c_names, NULL, L->bound_dt, m);
    if (!bfd || !cfd) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "loop: out of memory");
        goto out;
    }
    const gn__function cf_copy = *cf;
    s = add_fn(L, bname, bfd, nb, bf); /* bf, cf may move from here on */
    nb = NULL;
    if (s == GN_OK) s = add_fn(L, cname, cfd, nc, &cf_copy);
    nc = NULL;
    if (s != GN_OK) goto out;
    /* the While: the new loop variables, their types and shapes, the new functions */
    gn_id w = L->w;
    for (uint32_t j = 0; j < m && s == GN_OK; j++)
        s = gn__node_add_input(g, w, (gn__edge){L->outer[L->bound[j].node], L->bound[j].index});
    static const char *const lists[] = {"T", "output_shapes", "_output_shapes"};
    for (size_t k = 0; k < 3 && s == GN_OK; k++) {
        const Tensorflow__AttrValue *v = gn__node_attr(g, w, lists[k]);
        if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) continue;
        size_t have = k == 0 ? v->list->n_type : v->list->n_shape;
        if (have != n) continue; /* an empty output_shapes says nothing: it stays empty */
        const Tensorflow__AttrValue *nv = extend_list(L, v, k == 0);
        s = nv ? gn__node_set_attr(g, w, lists[k], nv) : GN_ERR_NOMEM;
    }
    if (s == GN_OK) {
        const Tensorflow__AttrValue *bv = renamed_func(g, gn__node_attr(g, w, "body"), bname);
        const Tensorflow__AttrValue *cv = renamed_func(g, gn__node_attr(g, w, "cond"), cname);
        s = bv && cv ? gn__node_set_attr(g, w, "body", bv) : GN_ERR_NOMEM;
        if (s == GN_OK) s = gn__node_set_attr(g, w, "cond", cv);
    }
    if (s != GN_OK) s = licm_fail(L, s, g);
out:
    if (nb) gn_graph_free(nb);
    if (nc) gn_graph_free(nc);
    for (uint32_t j = 0; j < m; j++) {
        if (in_names) free(in_names[j]);
        if (out_names) free(out_names[j]);
        if (c_names) free(c_names[j]);
    }
    free(in_names);
    free(out_names);
    free(c_names);
    return s;
}

/* The body and cond of While w and their names; NULL, or why they do not fit the loop variables. */
static const char *while_fns(gn_graph *g, gn_id w, const Tensorflow__NameAttrList **bl,
                             const Tensorflow__NameAttrList **cl, gn__function **bf, gn__function **cf)
{
    *bl = func_attr(g, w, "body");
    *cl = func_attr(g, w, "cond");
    const Tensorflow__AttrValue *t = gn__node_attr(g, w, "T");
    *bf = *bl ? gn__graph_find_function(g, (*bl)->name) : NULL;
    *cf = *cl ? gn__graph_find_function(g, (*cl)->name) : NULL;
    const uint32_t n = g->nodes[w].n_in;
    const gn__function *b = *bf, *c = *cf;
    if (!b || !c || !b->body || !c->body || !b->def || !c->def || !b->def->signature || !c->def->signature)
        return "the cond or body function is not in the library";
    if (!t || t->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !t->list || t->list->n_type != n)
        return "T does not match the inputs";
    if (b->def->signature->n_input_arg != n || b->def->signature->n_output_arg != n ||
        c->def->signature->n_input_arg != n)
        return "the cond / body signatures do not match the loop variables";
    return NULL;
}

static gn_status functional_invariant_motion(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "loop.invariant_motion_functional";
    if (c->toggle != GN_TOGGLE_AGGRESSIVE || !gn__pattern_enabled(c, pat)) return GN_OK;
    uint32_t n0 = g->n_nodes;
    for (gn_id w = 0; w < n0; w++) {
        if (!gn__node_live(g, w) || !(op_is(g, w, "While") || op_is(g, w, "StatelessWhile"))) continue;
        if (gn__pass_deadline_passed(c)) break;
        if (g->kind != GN__GRAPH_TOP) {
            gn__pass_refused(c, pat, g, w, "not moved: the While is inside a function body (a body cannot add "
                                           "the functions the rewrite needs)");
            continue;
        }
        const Tensorflow__NameAttrList *bl = NULL, *cl = NULL;
        gn__function *bf = NULL, *cf = NULL;
        const uint32_t n = g->nodes[w].n_in;
        const char *why = while_fns(g, w, &bl, &cl, &bf, &cf);
        if (why) {
            gn__pass_refused(c, pat, g, w, "not moved: %s", why);
            continue;
        }
        licm L;
        memset(&L, 0, sizeof L);
        L.c = c;
        L.g = g;
        L.w = w;
        L.n = n;
        L.b = bf->body;
        if (!licm_analyze(&L, bf, &why)) {
            licm_free(&L);
            if (why && strcmp(why, "out of memory") == 0) return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
            gn__pass_refused(c, pat, g, w, "not moved: %s", why);
            continue;
        }
        if (!L.n_bound) {
            licm_free(&L);
            continue;
        }
        /* the copies: "<f>_licm_for_<while, '/' -> '_'>" */
        char wn[1024], bname[2200], cname[2200];
        snprintf(wn, sizeof wn, "%s", gn__node_name(g, w));
        for (char *p = wn; *p; p++)
            if (*p == '/') *p = '_';
        snprintf(bname, sizeof bname, "%s_licm_for_%s", bl->name, wn);
        snprintf(cname, sizeof cname, "%s_licm_for_%s", cl->name, wn);
        if (gn__graph_find_function(g, bname) || gn__graph_find_function(g, cname) || strcmp(bname, cname) == 0) {
            gn__pass_refused(c, pat, g, w, "not moved: function '%s' exists already", bname);
            licm_free(&L);
            continue;
        }
        char oldb[1024];
        snprintf(oldb, sizeof oldb, "%s", bl->name);
        uint32_t moved = L.moved, nb = L.n_bound;
        gn_status s = licm_apply(&L, bf, cf, bname, cname);
        licm_free(&L);
        GN_TRY(s);
        c->changed = true;
        gn__pass_rewrote(c, pat, g, w,
                         "%u loop-invariant node(s) of body '%s' computed once before the loop, %u new loop "
                         "variable(s); body '%s', cond '%s'",
                         moved, oldb, nb, bname, cname);
    }
    return GN_OK;
}

/* ---- loop.const_var_functional ------------------------------------------------------------- */
/* A copy of list attr v (types, or shapes) keeping the n entries keep marks. */
static const Tensorflow__AttrValue *cut_list(gn_graph *g, const Tensorflow__AttrValue *v, const uint8_t *keep,
                                             uint32_t n, bool types)
{
    Tensorflow__AttrValue *nv = gn__graph_value_alloc(g, sizeof *nv);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    if (!nv || !l) return NULL;
    *nv = *v;
    *l = *v->list;
    size_t w = 0;
    if (types) {
        Tensorflow__DataType *t = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *t);
        if (!t) return NULL;
        for (uint32_t i = 0; i < n; i++)
            if (keep[i]) t[w++] = v->list->type[i];
        l->type = t;
        l->n_type = w;
    } else {
        Tensorflow__TensorShapeProto **sh = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *sh);
        if (!sh) return NULL;
        for (uint32_t i = 0; i < n; i++)
            if (keep[i]) sh[w++] = v->list->shape[i];
        l->shape = sh;
        l->n_shape = w;
    }
    nv->list = l;
    return nv;
}

/* A list of input indices (_read_only_resource_inputs) with the dropped ones gone, the others renumbered. */
static const Tensorflow__AttrValue *cut_indices(gn_graph *g, const Tensorflow__AttrValue *v, const uint8_t *keep,
                                                uint32_t n)
{
    Tensorflow__AttrValue *nv = gn__graph_value_alloc(g, sizeof *nv);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    int64_t *ix = gn__graph_value_alloc(g, (v->list->n_i ? v->list->n_i : 1) * sizeof *ix);
    if (!nv || !l || !ix) return NULL;
    *nv = *v;
    *l = *v->list;
    size_t w = 0;
    for (size_t i = 0; i < v->list->n_i; i++) {
        int64_t k = v->list->i[i];
        if (k < 0 || k >= (int64_t)n) {
            ix[w++] = k;
            continue;
        }
        if (!keep[k]) continue;
        int64_t nk = 0;
        for (int64_t j = 0; j < k; j++) nk += keep[j];
        ix[w++] = nk;
    }
    l->i = ix;
    l->n_i = w;
    nv->list = l;
    return nv;
}

static bool const_input(const gn_graph *g, gn__edge e)
{
    return e.index == 0 && op_is(g, e.node, "Const") && !(g->nodes[e.node].flags & GN__NODE_PRESERVE) &&
           gn__node_attr(g, e.node, "value") && gn__node_attr(g, e.node, "dtype");
}

/* The While's edits once its new functions exist: consumers of a dropped output read the
 * Const, the others the output's new index; the constant inputs go; the list attrs shrink. */
static gn_status const_vars_while(gn__pass_ctx *c, gn_graph *g, gn_id w, const uint8_t *keep, const gn_id *consts,
                                  uint32_t n, uint32_t m, const char *bname, const char *cname)
{
    gn_status s = GN_OK;
    uint32_t nu = g->nodes[w].n_use;
    gn__use *uses = malloc((nu ? nu : 1) * sizeof *uses);
    uint32_t *newo = malloc((n ? n : 1) * sizeof *newo);
    if (!uses || !newo) {
        free(uses);
        free(newo);
        return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    }
    uint32_t k2 = 0;
    for (uint32_t k = 0; k < n; k++) newo[k] = keep[k] ? k2++ : UINT32_MAX;
    if (nu) memcpy(uses, g->nodes[w].use, nu * sizeof *uses);
    for (uint32_t u = 0; u < nu && s == GN_OK; u++) {
        gn__edge e = g->nodes[uses[u].node].in[uses[u].slot];
        if (e.index >= n) continue;
        if (!keep[e.index]) s = gn__node_set_input(g, uses[u].node, uses[u].slot, (gn__edge){consts[e.index], 0});
        else if (newo[e.index] != e.index) s = gn__node_set_input(g, uses[u].node, uses[u].slot, (gn__edge){w, newo[e.index]});
    }
    free(uses);
    free(newo);
    for (uint32_t k = n; k-- > 0 && s == GN_OK;) {
        if (keep[k]) continue;
        gn_id p = consts[k];
        s = gn__node_remove_input(g, w, k);
        for (uint32_t j = 0; s == GN_OK && j < g->nodes[p].n_ctrl; j++) s = gn__node_add_control(g, w, g->nodes[p].ctrl[j]);
    }
    static const char *const lists[] = {"T", "output_shapes", "_output_shapes"};
    for (size_t k = 0; k < 3 && s == GN_OK; k++) {
        const Tensorflow__AttrValue *v = gn__node_attr(g, w, lists[k]);
        if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) continue;
        if ((k == 0 ? v->list->n_type : v->list->n_shape) != n) continue; /* an empty output_shapes stays empty */
        const Tensorflow__AttrValue *nv = cut_list(g, v, keep, n, k == 0);
        s = nv ? gn__node_set_attr(g, w, lists[k], nv) : GN_ERR_NOMEM;
    }
    const Tensorflow__AttrValue *ro = gn__node_attr(g, w, "_read_only_resource_inputs");
    if (s == GN_OK && ro && ro->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && ro->list && ro->list->n_i) {
        const Tensorflow__AttrValue *nv = cut_indices(g, ro, keep, n);
        s = nv ? gn__node_set_attr(g, w, "_read_only_resource_inputs", nv) : GN_ERR_NOMEM;
    }
    const Tensorflow__AttrValue *no = gn__node_attr(g, w, "_num_original_outputs");
    if (s == GN_OK && no && no->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I && no->i == (int64_t)n) {
        Tensorflow__AttrValue *nv = gn__attr_new_int(g, n - m);
        s = nv ? gn__node_set_attr(g, w, "_num_original_outputs", nv) : GN_ERR_NOMEM;
    }
    if (s == GN_OK) {
        const Tensorflow__AttrValue *bv = renamed_func(g, gn__node_attr(g, w, "body"), bname);
        const Tensorflow__AttrValue *cv = renamed_func(g, gn__node_attr(g, w, "cond"), cname);
        s = bv && cv ? gn__node_set_attr(g, w, "body", bv) : GN_ERR_NOMEM;
        if (s == GN_OK) s = gn__node_set_attr(g, w, "cond", cv);
    }
    if (s != GN_OK) return gn__fail(c->err, s, "loop: constant loop variables of '%s': %s", gn__node_name(g, w), g->err.msg);
    return GN_OK;
}

static gn_status const_vars_one(gn__pass_ctx *c, gn_graph *g, gn_id w, const char *pat)
{
    const uint32_t n = g->nodes[w].n_in;
    const Tensorflow__NameAttrList *bl = NULL, *cl = NULL;
    gn__function *bf = NULL, *cf = NULL;
    const char *why = while_fns(g, w, &bl, &cl, &bf, &cf);
    if (!why && (g->nodes[w].flags & GN__NODE_PRESERVE)) why = "the While is preserved (its outputs keep their indices)";
    if (why) {
        gn__pass_refused(c, pat, g, w, "not pushed in: %s", why);
        return GN_OK;
    }
    const size_t ncout = cf->def->signature->n_output_arg;
    uint8_t *keep = malloc(n ? n : 1), *ones = malloc(ncout ? ncout : 1);
    gn_id *consts = malloc((n ? n : 1) * sizeof *consts);
    if (!keep || !ones || !consts) {
        free(keep);
        free(ones);
        free(consts);
        return gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    }
    memset(ones, 1, ncout ? ncout : 1);
    uint32_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        gn_id a = GN_NONE;
        gn__edge e = g->nodes[w].in[k];
        bool drop = const_input(g, e) && invariant_var(bf->body, bf->def->signature, k, &a) == 1;
        keep[k] = !drop;
        consts[k] = drop ? e.node : GN_NONE;
        m += drop;
    }
    char wn[1024], bname[2200], cname[2200];
    snprintf(wn, sizeof wn, "%s", gn__node_name(g, w));
    for (char *p = wn; *p; p++)
        if (*p == '/') *p = '_';
    snprintf(bname, sizeof bname, "%s_const_for_%s", bl->name, wn);
    snprintf(cname, sizeof cname, "%s_const_for_%s", cl->name, wn);
    if (m == 0) why = "no constant input is returned unchanged by the body";
    else if (m == n) why = "every loop variable is constant";
    else if (gn__graph_find_function(g, bname) || gn__graph_find_function(g, cname) || strcmp(bname, cname) == 0)
        why = "a function of the new name exists already";
    gn_status s = GN_OK;
    if (why) {
        gn__pass_refused(c, pat, g, w, "not pushed in: %s", why);
        goto out;
    }
    char what[1200];
    snprintf(what, sizeof what, "loop: constant loop variables of '%s'", gn__node_name(g, w));
    Tensorflow__FunctionDef *bfd = gn__fn_def_cut(g, bf->def, bname, keep, n, keep, n);
    Tensorflow__FunctionDef *cfd = gn__fn_def_cut(g, cf->def, cname, keep, n, ones, ncout);
    gn_graph *nb = NULL, *nc = NULL;
    if (!bfd || !cfd) s = gn__fail(c->err, GN_ERR_NOMEM, "loop: out of memory");
    if (s == GN_OK) s = gn__fn_body_cut(c, g, bf, consts, keep, what, &nb);
    if (s == GN_OK) s = gn__fn_body_cut(c, g, cf, consts, ones, what, &nc);
    /* the Consts nothing reads (a cond that ignores the weights) go */
    for (int f = 0; f < 2 && s == GN_OK; f++) {
        gn_graph *fb = f ? nc : nb;
        const Tensorflow__OpDef *sig = (f ? cf : bf)->def->signature;
        for (uint32_t k = 0; k < n && s == GN_OK; k++) {
            gn_id a = keep[k] ? GN_NONE : gn__graph_find(fb, sig->input_arg[k]->name);
            if (a != GN_NONE && !fb->nodes[a].n_use && !fb->nodes[a].n_cuse) s = gn__node_remove(fb, a);
        }
        if (s == GN_OK) s = gn__graph_compact(fb);
        if (s != GN_OK) s = gn__fail(c->err, s, "%s: %s", what, fb->err.msg);
    }
    if (s != GN_OK) {
        gn_graph_free(nb);
        gn_graph_free(nc);
        goto out;
    }
    char oldb[1024];
    snprintf(oldb, sizeof oldb, "%s", bl->name);
    licm L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.g = g;
    L.w = w;
    const gn__function cf_copy = *cf;
    s = add_fn(&L, bname, bfd, nb, bf); /* bf, cf may move from here on */
    if (s == GN_OK) s = add_fn(&L, cname, cfd, nc, &cf_copy);
    else gn_graph_free(nc);
    if (s == GN_OK) s = const_vars_while(c, g, w, keep, consts, n, m, bname, cname);
    if (s == GN_OK) {
        c->changed = true;
        gn__pass_rewrote(c, pat, g, w,
                         "%u of %u loop variable(s) constant and returned unchanged: Consts in body '%s' and cond "
                         "'%s' (copies of '%s' and its cond without them)",
                         m, n, bname, cname, oldb);
    }
out:
    free(keep);
    free(ones);
    free(consts);
    return s;
}

static gn_status functional_const_vars(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "loop.const_var_functional";
    if (c->toggle != GN_TOGGLE_AGGRESSIVE || !gn__pattern_enabled(c, pat)) return GN_OK;
    uint32_t n0 = g->n_nodes;
    for (gn_id w = 0; w < n0; w++) {
        if (!gn__node_live(g, w) || !(op_is(g, w, "While") || op_is(g, w, "StatelessWhile"))) continue;
        if (gn__pass_deadline_passed(c)) break;
        bool any = false;
        for (uint32_t k = 0; k < g->nodes[w].n_in && !any; k++) any = const_input(g, g->nodes[w].in[k]);
        if (!any) continue;
        if (g->kind != GN__GRAPH_TOP) {
            gn__pass_refused(c, pat, g, w, "not pushed in: the While is inside a function body (a body cannot add "
                                           "the functions the rewrite needs)");
            continue;
        }
        GN_TRY(const_vars_one(c, g, w, pat));
    }
    return GN_OK;
}

gn_status gn__pass_loop(gn__pass_ctx *c, gn_graph *g)
{
    GN_TRY(stack_pushes(c, g));
    GN_TRY(dead_branches(c, g));
    GN_TRY(functional_branches(c, g));
    GN_TRY(invariant_motion(c, g));
    GN_TRY(functional_const_vars(c, g));
    GN_TRY(functional_invariant_motion(c, g));
    return GN_OK;
}
