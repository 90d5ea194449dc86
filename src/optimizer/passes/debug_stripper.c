/* Debug stripper (Grappler's debug_stripper, docs/reference_grappler.md §3.5).
 *
 *  - Assert and PrintV2 become NoOp: their regular attrs go (attrs starting
 *    with '_' stay), their data inputs become control inputs (the dependency
 *    optimizer removes what is left over).
 *  - CheckNumerics (and CheckNumericsV2) and Print become Identity of their
 *    first input, keeping attr T; Print's other inputs become control inputs.
 *
 * The node keeps its name, device and control edges, so whatever ran after it
 * still does; preserved nodes are stripped too (the option asks for exactly
 * that, and a preserved Assert or Print would otherwise never go: without
 * fetches every stateful node is preserved). A data input that comes from a
 * Switch is not turned into '^switch' (a control edge from a Switch does not
 * carry the untaken branch's deadness): the new control input is an Identity
 * of that Switch output, an existing one or "ConstantFoldingCtrl/<switch>_<port>"
 * as Grappler's AddControlDependency makes it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/pass.h"

const gn__pattern gn__patterns_debug_stripper[] = {
    {"debug_stripper.assert", "Assert becomes a NoOp; its inputs become control inputs"},
    {"debug_stripper.print_v2", "PrintV2 becomes a NoOp; its inputs become control inputs"},
    {"debug_stripper.check_numerics", "CheckNumerics becomes an Identity of its input"},
    {"debug_stripper.print", "Print becomes an Identity of its first input; the others become control inputs"},
    {NULL, NULL},
};

static gn_status from_graph(gn__pass_ctx *c, gn_graph *g, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(c->err, s, "%s", g->err.msg);
}

static bool op_is(const gn_graph *g, gn_id id, const char *op)
{
    return strcmp(gn__node_op(g, id), op) == 0;
}

static bool is_switch(const gn_graph *g, gn_id id)
{
    return op_is(g, id, "Switch") || op_is(g, id, "RefSwitch");
}

/* The node a control input on tensor e should name: e's producer, or for a
 * Switch output an Identity of it (found or made). */
static gn_status ctrl_source(gn__pass_ctx *c, gn_graph *g, gn__edge e, const char *pattern, gn_id *out)
{
    *out = e.node;
    if (!is_switch(g, e.node)) return GN_OK;
    const gn__node *sw = &g->nodes[e.node];
    for (uint32_t k = 0; k < sw->n_use; k++) {
        gn__use u = sw->use[k];
        if (op_is(g, u.node, "Identity") && u.slot == 0 && g->nodes[u.node].in[0].index == e.index &&
            g->nodes[u.node].device == sw->device) {
            *out = u.node;
            return GN_OK;
        }
    }
    char suffix[1024], name[1200];
    snprintf(suffix, sizeof suffix, "%s_%u", gn__node_name(g, e.node), e.index);
    gn__pass_unique_name(g, "ConstantFoldingCtrl", suffix, name, sizeof name);
    gn_id id;
    GN_TRY(from_graph(c, g, gn__node_add(g, name, "Identity", &id)));
    GN_TRY(from_graph(c, g, gn__node_add_input(g, id, e)));
    gn__node_set_device(g, id, gn__str(g, g->nodes[e.node].device));
    const Tensorflow__AttrValue *t = gn__node_attr(g, e.node, "T");
    if (t) GN_TRY(from_graph(c, g, gn__node_set_attr(g, id, "T", t)));
    gn__pass_rewrote(c, pattern, g, id, "added Identity '%s' of '%s:%u' to carry a control dependency on one branch",
                     name, gn__node_name(g, e.node), e.index);
    *out = id;
    return GN_OK;
}

/* Data inputs from..n_in become control inputs, in input order, after the
 * control inputs it had (deduplicated, and none repeating a data input that
 * stays). */
static gn_status inputs_to_control(gn__pass_ctx *c, gn_graph *g, gn_id id, uint32_t from, const char *pattern)
{
    uint32_t n_in = g->nodes[id].n_in;
    if (n_in <= from) return GN_OK;
    gn__edge *moved = malloc((n_in - from) * sizeof *moved);
    if (!moved) return gn__fail(c->err, GN_ERR_NOMEM, "debug_stripper: out of memory");
    memcpy(moved, &g->nodes[id].in[from], (n_in - from) * sizeof *moved);
    gn_status s = GN_OK;
    for (uint32_t k = n_in; k-- > from && s == GN_OK;) s = from_graph(c, g, gn__node_remove_input(g, id, k));
    for (uint32_t k = 0; k < n_in - from && s == GN_OK; k++) {
        gn_id src;
        s = ctrl_source(c, g, moved[k], pattern, &src);
        bool is_data = false;
        for (uint32_t j = 0; s == GN_OK && j < g->nodes[id].n_in; j++) is_data |= g->nodes[id].in[j].node == src;
        if (s == GN_OK && !is_data) s = from_graph(c, g, gn__node_add_control(g, id, src));
    }
    free(moved);
    return s;
}

/* Removes every attr except those named in keep (NULL-terminated) and those
 * starting with '_'. */
static gn_status strip_attrs(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *const *keep)
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

static gn_status to_noop(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *pattern)
{
    static const char *const none[] = {NULL};
    char op[64];
    snprintf(op, sizeof op, "%s", gn__node_op(g, id));
    uint32_t n_in = g->nodes[id].n_in;
    c->changed = true;
    GN_TRY(inputs_to_control(c, g, id, 0, pattern));
    GN_TRY(strip_attrs(c, g, id, none));
    GN_TRY(from_graph(c, g, gn__node_set_op(g, id, "NoOp")));
    gn__pass_rewrote(c, pattern, g, id, "%s '%s' became a NoOp; its %u data input%s now control input%s", op,
                     gn__node_name(g, id), n_in, n_in == 1 ? " is" : "s are", n_in == 1 ? "" : "s");
    return GN_OK;
}

static gn_status to_identity(gn__pass_ctx *c, gn_graph *g, gn_id id, const char *pattern)
{
    static const char *const keep_t[] = {"T", NULL};
    char op[64];
    snprintf(op, sizeof op, "%s", gn__node_op(g, id));
    uint32_t n_in = g->nodes[id].n_in;
    if (n_in < 1) {
        gn__pass_refused(c, pattern, g, id, "%s '%s' kept: it has no data input to forward", op, gn__node_name(g, id));
        return GN_OK;
    }
    c->changed = true;
    GN_TRY(inputs_to_control(c, g, id, 1, pattern));
    GN_TRY(strip_attrs(c, g, id, keep_t));
    GN_TRY(from_graph(c, g, gn__node_set_op(g, id, "Identity")));
    if (n_in > 1)
        gn__pass_rewrote(c, pattern, g, id, "%s '%s' became an Identity of its first input; %u other input%s now control",
                         op, gn__node_name(g, id), n_in - 1, n_in == 2 ? " is" : "s are");
    else
        gn__pass_rewrote(c, pattern, g, id, "%s '%s' became an Identity of its input", op, gn__node_name(g, id));
    return GN_OK;
}

gn_status gn__pass_debug_stripper(gn__pass_ctx *c, gn_graph *g)
{
    uint32_t N = g->n_nodes; /* nodes added below (Switch anchors) need nothing */
    for (gn_id i = 0; i < N; i++) {
        if ((i & 4095) == 4095 && gn__pass_deadline_passed(c)) break;
        const gn__node *n = &g->nodes[i];
        if (n->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        const char *op = gn__node_op(g, i);
        const char *pattern = NULL;
        bool noop = false;
        if (strcmp(op, "Assert") == 0) {
            pattern = "debug_stripper.assert";
            noop = true;
        } else if (strcmp(op, "PrintV2") == 0) {
            pattern = "debug_stripper.print_v2";
            noop = true;
        } else if (strcmp(op, "CheckNumerics") == 0 || strcmp(op, "CheckNumericsV2") == 0) {
            pattern = "debug_stripper.check_numerics";
        } else if (strcmp(op, "Print") == 0) {
            pattern = "debug_stripper.print";
        } else {
            continue;
        }
        if (!gn__pattern_enabled(c, pattern)) continue;
        GN_TRY(noop ? to_noop(c, g, i, pattern) : to_identity(c, g, i, pattern));
    }
    return GN_OK;
}
