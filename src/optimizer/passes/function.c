/* Function optimizer (Grappler's function_optimizer, grappler.md 3.3).
 *
 *  - function.inline: every call (PartitionedCall, StatefulPartitionedCall, an
 *    op named after a library function) is inlined as TensorFlow's
 *    InlineFunctionBody does (src/optimizer/inline.h has the exact form), in
 *    one forward sweep that also reaches the calls inlined bodies bring (to a
 *    fixed point, at most 64 deep). Inside a function body the calls resolve
 *    against the top-level library. The caller keeps its name as an IdentityN
 *    (a NoOp without outputs) only when it is preserved (fetched, or a
 *    default-preserved sink), as Grappler keeps only fetched / kept callers.
 *    `_noinline` is respected except with AGGRESSIVE (as Grappler); refusals:
 *    see gn__inline_possible. Unlike Grappler (GrapplerItem::save_op /
 *    restore_op), the SavedModel's save / restore calls are inlined too: the
 *    result must not depend on whether the graph came from a SavedModel or
 *    from the GraphDef written after a first optimize (idempotence); they
 *    stay as targets by name (NoOp / IdentityN over their control outputs).
 *  - function.specialize (src/optimizer/passes/function_specialize.c): a
 *    call that stays (refused above) and has Const inputs or unused outputs
 *    calls a copy "<f>_specialized_for_<call, '/'->'_'>_at_tf_graph" with the
 *    constants pushed into the body and the unused outputs pruned (top level
 *    only: a body cannot add functions).
 *  - function.lower_if / function.lower_while: with lower_control_flow
 *    (function.lower_control_flow), see function_lower.c.
 *  - function.prune_library: at the top level, library functions nothing
 *    references any more are removed (calls, func / list(func) attrs such as
 *    If/While/Case branches, gradients entries), as Grappler prunes its
 *    output library. A SavedModel's object graph is not a root here (see
 *    gn__prune_library).
 * Functional If / Case / While otherwise stay as they are; the meta-optimizer
 * optimizes their branch and body functions in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/inline.h"
#include "optimizer/pass.h"
#include "optimizer/passes/function_impl.h"

const gn__pattern gn__patterns_function[] = {
    {"function.inline", "inline function calls (PartitionedCall, StatefulPartitionedCall, calls by op name)"},
    {"function.specialize", "specialize calls that stay for their Const inputs and unused outputs"},
    {"function.lower_if", "lower functional If / StatelessIf to Switch / Merge (lower_control_flow)"},
    {"function.lower_while", "lower functional While / StatelessWhile to Enter / Merge / Switch / Exit (lower_control_flow)"},
    {"function.lower_case", "lower functional Case / StatelessCase (lower_control_flow): not implemented, refused"},
    {"function.prune_library", "remove library functions nothing references"},
    {NULL, NULL},
};

#define MAX_DEPTH 64u

static gn_status inline_all(gn__pass_ctx *c, gn_graph *g)
{
    const gn_graph *top = g->lib;
    uint8_t *rec = calloc(top->n_fns ? top->n_fns : 1, 1);
    uint8_t *depth = NULL;
    uint32_t cap = 0;
    gn_status s = GN_OK;
    char why[512];
    bool aggressive = c->toggle == GN_TOGGLE_AGGRESSIVE;
    if (!rec) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < g->n_nodes && s == GN_OK; i++) {
        if (g->n_nodes > cap) {
            uint32_t ncap = g->n_nodes * 2;
            uint8_t *nd = realloc(depth, ncap);
            if (!nd) {
                s = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            memset(nd + cap, 0, ncap - cap);
            depth = nd;
            cap = ncap;
        }
        gn__function *fn = gn__inline_callee(g, i);
        if (!fn) continue;
        if ((i & 255) == 0 && gn__pass_deadline_passed(c)) break;
        if (depth[i] >= MAX_DEPTH) {
            gn__pass_refused(c, "function.inline", g, i, "not inlined: calls nested deeper than %u", MAX_DEPTH);
            continue;
        }
        if (!gn__inline_possible_cached(g, i, aggressive, rec, why, sizeof why)) {
            gn__pass_refused(c, "function.inline", g, i, "not inlined: %s", why);
            continue;
        }
        const char *fname = gn__str(top, fn->name);
        uint32_t first = g->n_nodes;
        uint8_t d = depth[i];
        bool keep = (g->nodes[i].flags & GN__NODE_PRESERVE) != 0;
        char cname[1024];
        snprintf(cname, sizeof cname, "%s", gn__node_name(g, i));
        s = gn__inline_call_ex(g, i, keep, c->err);
        if (s != GN_OK) break;
        c->changed = true;
        gn_id at = keep ? gn__graph_find(g, cname) : GN_NONE;
        gn__pass_rewrote(c, "function.inline", g, at, "inlined '%s' (function '%s', %u nodes)%s", cname, fname,
                         g->n_nodes - first, keep ? "; the caller stays as its outputs" : "");
        if (g->n_nodes > cap) {
            uint32_t ncap = g->n_nodes * 2;
            uint8_t *nd = realloc(depth, ncap);
            if (!nd) {
                s = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            memset(nd + cap, 0, ncap - cap);
            depth = nd;
            cap = ncap;
        }
        for (gn_id k = first; k < g->n_nodes; k++) depth[k] = (uint8_t)(d + 1);
    }
    free(rec);
    free(depth);
    return s;
}

static gn_status prune(gn__pass_ctx *c, gn_graph *g)
{
    uint32_t nf = g->n_fns;
    if (!nf) return GN_OK;
    uint32_t *names = malloc(nf * sizeof *names);
    if (!names) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < nf; k++) names[k] = g->fns[k].name;
    uint32_t removed = 0;
    gn_status s = gn__prune_library(g, false, &removed, c->err);
    if (s == GN_OK && removed) {
        c->changed = true;
        gn__buf b;
        gn__buf_init(&b);
        uint32_t shown = 0;
        for (uint32_t k = 0; k < nf; k++) {
            if (gn__graph_find_function(g, gn__str(g, names[k]))) continue;
            if (shown < 8) gn__buf_printf(&b, "%s'%s'", shown ? ", " : "", gn__str(g, names[k]));
            shown++;
        }
        if (shown > 8) gn__buf_printf(&b, " and %u more", shown - 8);
        char *list = gn__buf_take(&b);
        gn__pass_rewrote(c, "function.prune_library", g, GN_NONE,
                         "removed %u library function%s nothing references (library size = %u): %s", removed,
                         removed == 1 ? "" : "s", g->n_fns, list ? list : "");
        free(list);
    }
    free(names);
    return s;
}

gn_status gn__pass_function(gn__pass_ctx *c, gn_graph *g)
{
    const gn_graph *top = g->lib ? g->lib : c->lib;
    if (!top || !top->n_fns) return GN_OK;
    if (c->opts && c->opts->lower_control_flow) GN_TRY(gn__fn_lower_control_flow(c, g));
    if (gn__pattern_enabled(c, "function.inline")) GN_TRY(inline_all(c, g));
    if (!c->fn_name && gn__pattern_enabled(c, "function.specialize")) GN_TRY(gn__fn_specialize(c, g));
    if (!c->fn_name && gn__pattern_enabled(c, "function.prune_library")) GN_TRY(prune(c, g));
    return GN_OK;
}
