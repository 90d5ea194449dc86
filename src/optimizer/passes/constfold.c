/* Constant folding — "constfold" (docs/reference_grappler.md §3.6): the
 * driver. It visits the nodes in topological order and hands each to the
 * rules, constfold_fold.c (materialization and folding) and
 * constfold_simplify.c (§3.6.6), which share the helpers and the pattern
 * table of constfold_util.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/passes/constfold_impl.h"

/* ---- the driver ------------------------------------------------------------------------------ */
static gn_status visit(cf_state *s, gn_id id)
{
    gn_graph *g = s->g;
    if (!gn__node_live(g, id)) return GN_OK;
    const gn__node *n = gn__node_at(g, id);
    if (n->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) return GN_OK;
    cf_kind k = gn__cf_kind(s, id);
    bool done = false;
    if (s->st) {
        GN_TRY(gn__cf_materialize(s, id, k, &done));
        if (done) return GN_OK;
    }
    if (!gn__node_live(g, id)) return GN_OK;
    if (!(s->fl[id] & CF_NOFOLD)) {
        GN_TRY(gn__cf_fold(s, id, k, &done));
        if (done) return GN_OK;
    }
    if (!gn__node_live(g, id) || (s->fl[id] & CF_NOSIMP) || gn__cf_has_tpu_attr(g, id)) return GN_OK;
    return gn__cf_simplify(s, id, gn__cf_kind(s, id), &done);
}

static gn_status drain(cf_state *s)
{
    while (s->qhead < s->qtail) {
        gn_id id = s->q[s->qhead++];
        s->fl[id] &= (uint16_t)~CF_PENDING;
        if (s->steps >= s->max_steps) continue;
        s->steps++;
        if ((s->steps & 1023) == 0 && gn__pass_deadline_passed(s->c)) {
            s->max_steps = s->steps; /* stop cleanly: the graph is valid after every rewrite */
            continue;
        }
        GN_TRY(visit(s, id));
    }
    s->qhead = s->qtail = 0;
    return GN_OK;
}

static bool removable(const cf_state *s, gn_id id)
{
    const gn__node *n = gn__node_at(s->g, id);
    if (n->flags & (GN__NODE_DEAD | GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return false;
    return n->n_use == 0 && n->n_cuse == 0;
}

/* Grappler's FoldGraph keeps an original node without consumers only when the
 * fetches are unknown or it is preserved; the nodes it created are dropped when
 * nothing reads them. Iterative, in id order, cascading to producers. */
static gn_status drop_unused(cf_state *s)
{
    gn_graph *g = s->g;
    uint32_t n0 = g->n_nodes, dropped = 0;
    gn_id *stack = NULL;
    uint32_t sp = 0, cap = 0;
    gn_status st = GN_OK;
    for (gn_id i = 0; i < n0 && st == GN_OK; i++) {
        if (!removable(s, i)) continue;
        if (sp == cap) {
            cap = cap ? cap * 2 : 64;
            gn_id *ns = realloc(stack, cap * sizeof *ns);
            if (!ns) {
                st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            stack = ns;
        }
        stack[sp++] = i;
        while (sp && st == GN_OK) {
            gn_id id = stack[--sp];
            if (!removable(s, id)) continue;
            const gn__node *n = gn__node_at(g, id);
            uint32_t np = n->n_in + n->n_ctrl;
            gn_id *prod = gn__cf_scratch(s, np ? np : 1);
            if (!prod) {
                st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            for (uint32_t k = 0; k < n->n_in; k++) prod[k] = n->in[k].node;
            for (uint32_t k = 0; k < n->n_ctrl; k++) prod[n->n_in + k] = n->ctrl[k];
            st = gn__node_remove(g, id);
            if (st != GN_OK) break;
            dropped++;
            for (uint32_t k = 0; k < np; k++) {
                gn_id p = s->scratch_ids[k];
                if (p >= i || !removable(s, p)) continue; /* later ids are met by the outer loop */
                if (sp == cap) {
                    cap = cap ? cap * 2 : 64;
                    gn_id *ns = realloc(stack, cap * sizeof *ns);
                    if (!ns) {
                        st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
                        break;
                    }
                    stack = ns;
                }
                stack[sp++] = p;
            }
        }
    }
    free(stack);
    if (dropped) gn__cf_rewrote(s, CF_P_DROP, GN_NONE, "removed %u nodes left without consumers", dropped);
    return st;
}

static bool has_ref_input(const gn__opdef *op)
{
    for (uint16_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i].is_ref) return true;
    return false;
}

static void state_free(cf_state *s)
{
    gn__shape_table_free(s->st);
    free(s->fl);
    free(s->xinfo);
    free(s->q);
    free(s->scratch_ids);
    free(s->kc);
    free(s->deferred);
    gn__arena_free(&s->arena);
}

gn_status gn__pass_constfold(gn__pass_ctx *c, gn_graph *g)
{
    cf_state s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.g = g;
    gn__arena_init(&s.arena, 16384);
    bool any = false;
    for (int i = 0; i < CF_NPAT; i++) any |= (s.en[i] = gn__pattern_enabled(c, gn__cf_pattern_ids[i]));
    if (!any) {
        state_free(&s);
        return GN_OK;
    }
    s.aggressive = c->toggle == GN_TOGGLE_AGGRESSIVE;
    s.alias_budget = CF_ALIAS_BUDGET;

    /* shapes, once: the table is ours from now on (mutations would drop it) */
    gn__err saved = g->err;
    gn_status si = gn__graph_infer_shapes(g);
    if (si == GN_OK) {
        s.st = gn__graph_take_shapes(g);
        s.st_nodes = g->n_nodes;
        s.st_live = g->n_live;
    } else {
        g->err = saved;
        if (si == GN_ERR_NOMEM) {
            state_free(&s);
            return gn__fail(c->err, si, "out of memory inferring shapes");
        }
    }

    s.has_fetch = g->kind == GN__GRAPH_FUNCTION;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = gn__node_at(g, i);
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_RET)) s.has_fetch = true;
        if (!s.use_snapshot) {
            const char *op = gn__node_op(g, i);
            const gn__opdef *od = n->opdef >= 0 ? gn__op_at((uint32_t)n->opdef) : NULL;
            if ((od && has_ref_input(od)) || strstr(op, "Inplace")) s.use_snapshot = true;
        }
    }

    gn_id *order = NULL;
    uint32_t n_order = 0;
    /* the table's order when there is one: nothing has changed since */
    gn_status st = s.st && gn__shape_table_order(s.st, &order, &n_order) ? GN_OK : gn__graph_topo(g, &order, &n_order);
    if (st != GN_OK) {
        gn__fail(c->err, st, "%s", g->err.msg);
        state_free(&s);
        return st;
    }
    if (!gn__cf_reserve(&s)) {
        free(order);
        state_free(&s);
        return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    }
    /* every rewrite strictly simplifies or is guarded by a name it creates; the cap
     * only bounds pathological ping-pong */
    s.max_steps = 64 * (uint64_t)n_order + 4096;
    for (uint32_t i = 0; i < n_order && st == GN_OK; i++) {
        gn__prefetch_ahead(g, order, i, n_order);
        if (s.st && i + 8 < n_order && order[i + 8] < s.st->n_nodes) GN__PREFETCH(&s.st->out[order[i + 8]]);
        if (s.st && i + 4 < n_order && order[i + 4] < s.st->n_nodes) GN__PREFETCH(s.st->out[order[i + 4]]);
        gn__cf_enqueue(&s, order[i]);
        st = drain(&s);
    }
    free(order);
    /* the folds over their inputs listed meanwhile, then what they enable */
    while (st == GN_OK && s.n_deferred && !s.no_copy) {
        st = gn__cf_fold_deferred(&s);
        if (st == GN_OK) st = drain(&s);
    }
    if (st == GN_OK && s.has_fetch && s.en[CF_P_DROP] && !s.no_copy) st = drop_unused(&s);
    if (st != GN_OK && !c->err->msg[0]) gn__fail(c->err, st, "%s", g->err.msg);
    bool stale = g->n_nodes != s.st_nodes || g->n_live != s.st_live;
    for (uint32_t i = 0; !stale && i < s.cap_fl && i < g->n_nodes; i++) stale = (s.fl[i] & CF_STALE) != 0;
    if (st == GN_OK && !c->changed && !stale && s.st && !gn__graph_shapes(g)) {
        /* nothing changed: the table still describes the graph; the passes
         * after this one use it instead of inferring again */
        gn__graph_put_shapes(g, s.st);
        s.st = NULL;
    }
    state_free(&s);
    return st;
}
