/* Function optimizer (Grappler's function_optimizer, docs/reference_grappler.md §3.3).
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
 *  - function.symbolic_gradient: a SymbolicGradient node whose function f
 *    has a gradient function in the library (a gradients entry, as
 *    tf.Defun(grad_func=...) registers) becomes a call of that function by op
 *    name, with f's attrs, which function.inline then inlines, as TensorFlow
 *    instantiates SymbolicGradient (FunctionLibraryRuntime: the registered
 *    gradient first). Refused when f has no registered gradient: TensorFlow
 *    would then build one from the registered gradients of f's ops
 *    (SymbolicGradientBuilder), which we do not implement; the node stays.
 *  - function.specialize (src/optimizer/passes/function_specialize.c): a
 *    call that stays (refused above) and has Const inputs or unused outputs
 *    calls a copy "<f>_specialized_for_<call, '/'->'_'>_at_tf_graph" with the
 *    constants pushed into the body and the unused outputs pruned (top level
 *    only: a body cannot add functions).
 *  - function.lower_if / function.lower_while / function.lower_case: with lower_control_flow
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
    {"function.symbolic_gradient", "SymbolicGradient of a function with a registered gradient function: a call of it"},
    {"function.specialize", "specialize calls that stay for their Const inputs and unused outputs"},
    {"function.lower_if", "lower functional If / StatelessIf to Switch / Merge (lower_control_flow)"},
    {"function.lower_while", "lower functional While / StatelessWhile to Enter / Merge / Switch / Exit (lower_control_flow)"},
    {"function.lower_case", "lower functional Case / StatelessCase to _SwitchN / Merge (lower_control_flow)"},
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

/* ---- SymbolicGradient of a function with a registered gradient ------------------------------- */
static const char *registered_gradient(const gn_graph *top, const char *fname)
{
    if (!top->lib_extra) return NULL;
    for (size_t i = 0; i < top->lib_extra->n_gradient; i++) {
        const Tensorflow__GradientDef *gd = top->lib_extra->gradient[i];
        if (gd->function_name && gd->gradient_func && strcmp(gd->function_name, fname) == 0) return gd->gradient_func;
    }
    return NULL;
}

static bool fn_marked(const gn__function *f, const char *key)
{
    if (!f->def) return false;
    for (size_t i = 0; i < f->def->n_attr; i++)
        if (f->def->attr[i]->key && strcmp(f->def->attr[i]->key, key) == 0)
            return f->def->attr[i]->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B && f->def->attr[i]->value->b;
    return false;
}

static gn_status symbolic_gradients(gn__pass_ctx *c, gn_graph *g)
{
    const char *pat = "function.symbolic_gradient";
    const gn_graph *top = g->lib;
    gn_id n0 = g->n_nodes;
    for (gn_id i = 0; i < n0; i++) {
        if (!gn__node_live(g, i) || strcmp(gn__node_op(g, i), "SymbolicGradient") != 0) continue;
        const Tensorflow__AttrValue *f = gn__node_attr(g, i, "f");
        if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !f->func || !f->func->name) {
            gn__pass_refused(c, pat, g, i, "not expanded: no function in attr f");
            continue;
        }
        const Tensorflow__NameAttrList *fl = f->func;
        gn__function *fn = gn__graph_find_function(g, fl->name);
        if (!fn) {
            gn__pass_refused(c, pat, g, i, "not expanded: function '%s' is not in the library", fl->name);
            continue;
        }
        if (fn_marked(fn, "_noinline") && c->toggle != GN_TOGGLE_AGGRESSIVE) {
            gn__pass_refused(c, pat, g, i, "not expanded: function '%s' is marked _noinline", fl->name);
            continue;
        }
        const char *gname = registered_gradient(top, fl->name);
        if (!gname) {
            gn__pass_refused(c, pat, g, i,
                             "not expanded: '%s' has no gradient function in the library (building a gradient from "
                             "the gradients of its ops is not implemented)",
                             fl->name);
            continue;
        }
        gn__function *gf = gn__graph_find_function(g, gname);
        if (!gf || !gf->def || !gf->def->signature) {
            gn__pass_refused(c, pat, g, i, "not expanded: gradient function '%s' is not in the library", gname);
            continue;
        }
        const Tensorflow__OpDef *gs = gf->def->signature;
        int32_t no = gn__node_num_outputs(g, i);
        if (gs->n_input_arg != g->nodes[i].n_in || no < 0 || gs->n_output_arg != (size_t)no) {
            gn__pass_refused(c, pat, g, i,
                             "not expanded: gradient function '%s' takes %zu inputs and gives %zu outputs, the "
                             "SymbolicGradient has %u and %d",
                             gname, gs->n_input_arg, gs->n_output_arg, g->nodes[i].n_in, no);
            continue;
        }
        char fname[1024], gcopy[1024];
        snprintf(fname, sizeof fname, "%s", fl->name);
        snprintf(gcopy, sizeof gcopy, "%s", gname);
        /* a call of the gradient function by op name, with f's attrs */
        static const char *const drop[] = {"f", "Tin", "Tout"};
        for (size_t k = 0; k < 3; k++)
            if (gn__node_attr(g, i, drop[k]) && gn__node_remove_attr(g, i, drop[k]) != GN_OK)
                return gn__fail(c->err, GN_ERR_GRAPH, "%s", g->err.msg);
        for (size_t a = 0; a < fl->n_attr; a++)
            if (gn__node_set_attr(g, i, fl->attr[a]->key, fl->attr[a]->value) != GN_OK)
                return gn__fail(c->err, GN_ERR_GRAPH, "%s", g->err.msg);
        if (gn__node_set_op(g, i, gcopy) != GN_OK) return gn__fail(c->err, GN_ERR_GRAPH, "%s", g->err.msg);
        c->changed = true;
        gn__pass_rewrote(c, pat, g, i, "SymbolicGradient of '%s' is now a call of its gradient function '%s'", fname,
                         gcopy);
    }
    return GN_OK;
}

gn_status gn__pass_function(gn__pass_ctx *c, gn_graph *g)
{
    const gn_graph *top = g->lib ? g->lib : c->lib;
    if (!top || !top->n_fns) return GN_OK;
    if (c->opts && c->opts->lower_control_flow) GN_TRY(gn__fn_lower_control_flow(c, g));
    if (gn__pattern_enabled(c, "function.symbolic_gradient")) GN_TRY(symbolic_gradients(c, g));
    if (gn__pattern_enabled(c, "function.inline")) GN_TRY(inline_all(c, g));
    if (!c->fn_name && gn__pattern_enabled(c, "function.specialize")) GN_TRY(gn__fn_specialize(c, g));
    if (!c->fn_name && gn__pattern_enabled(c, "function.prune_library")) GN_TRY(prune(c, g));
    return GN_OK;
}
