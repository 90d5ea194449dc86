/* Pruning for the runtime: see prune.h. */
#include "runtime/prune.h"

#include <stdlib.h>

int32_t gn__sig_feed_index(const gn__engine_sig *sig, const uint8_t *has_feed, gn__edge e)
{
    if (has_feed && !has_feed[e.node]) return -1;
    for (uint32_t i = 0; i < sig->n_feeds; i++)
        if (sig->feeds[i].node == e.node && sig->feeds[i].index == e.index) return (int32_t)i;
    return -1;
}

gn_status gn__runtime_feed_marks(const gn_graph *g, const gn__engine_sig *sig, uint8_t **has_feed, gn__err *err)
{
    uint8_t *m = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    if (!m) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < sig->n_feeds; i++)
        if (sig->feeds[i].node < g->n_nodes) m[sig->feeds[i].node] = 1;
    *has_feed = m;
    return GN_OK;
}

int32_t gn__sig_control_feed(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, gn_id id)
{
    if (!has_feed[id]) return -1;
    const char *op = gn__node_op(g, id);
    if (strcmp(op, "Placeholder") != 0 && strcmp(op, "PlaceholderV2") != 0 && strcmp(op, "_Arg") != 0) return -1;
    for (uint32_t i = 0; i < sig->n_feeds; i++)
        if (sig->feeds[i].node == id) return (int32_t)i;
    return -1;
}

gn_status gn__runtime_prune(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, uint8_t **keep_out,
                            uint32_t *n_keep, gn__err *err)
{
    uint32_t N = g->n_nodes;
    uint8_t *keep = calloc(N ? N : 1, 1);
    gn_id *stack = malloc((N ? N : 1) * sizeof *stack);
    if (!keep || !stack) {
        free(keep);
        free(stack);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    uint32_t sp = 0, n = 0;
#define PUSH(id)                                                                                                       \
    do {                                                                                                               \
        gn_id id_ = (id);                                                                                              \
        if (gn__node_live(g, id_) && !keep[id_]) {                                                                     \
            keep[id_] = 1;                                                                                             \
            n++;                                                                                                       \
            stack[sp++] = id_;                                                                                         \
        }                                                                                                              \
    } while (0)
    for (uint32_t i = 0; i < sig->n_fetches; i++)
        if (gn__sig_feed_index(sig, has_feed, sig->fetches[i]) < 0) PUSH(sig->fetches[i].node);
    for (uint32_t i = 0; i < sig->n_targets; i++) PUSH(sig->targets[i]);
    while (sp) {
        const gn__node *nd = gn__node_at(g, stack[--sp]);
        for (uint32_t k = 0; k < nd->n_in; k++)
            if (gn__sig_feed_index(sig, has_feed, nd->in[k]) < 0) PUSH(nd->in[k].node);
        for (uint32_t k = 0; k < nd->n_ctrl; k++)
            if (gn__sig_control_feed(g, sig, has_feed, nd->ctrl[k]) < 0) PUSH(nd->ctrl[k]);
    }
#undef PUSH
    free(stack);
    *keep_out = keep;
    *n_keep = n;
    return GN_OK;
}

gn_status gn__runtime_compile_start(const gn_graph *g, const gn__engine_sig *sig, uint8_t **has_feed, uint8_t **keep,
                                    uint32_t *n_keep, gn__err *err)
{
    *has_feed = *keep = NULL;
    *n_keep = 0;
    for (uint32_t i = 0; i < sig->n_feeds; i++)
        if (!gn__node_live(g, sig->feeds[i].node)) return gn__fail(err, GN_ERR_INTERNAL, "feed %u names no node", i);
    for (uint32_t i = 0; i < sig->n_fetches; i++)
        if (!gn__node_live(g, sig->fetches[i].node)) return gn__fail(err, GN_ERR_INTERNAL, "fetch %u names no node", i);
    GN_TRY(gn__runtime_feed_marks(g, sig, has_feed, err));
    gn_status s = gn__runtime_prune(g, sig, *has_feed, keep, n_keep, err);
    if (s != GN_OK) {
        free(*has_feed);
        *has_feed = NULL;
    }
    return s;
}
