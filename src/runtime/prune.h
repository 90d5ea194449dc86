/* Pruning for the runtime (private): which nodes a run needs.
 *
 * Starting from the fetched tensors and the target nodes, walks data and
 * control inputs backwards. A fed tensor cuts the walk: its producer is not
 * needed for it (it may still be needed for another of its outputs). As in
 * TensorFlow, control edges out of a fed Placeholder (or _Arg) are cut too:
 * its consumers then depend on the feed. Iterative; no recursion over graph
 * depth. */
#ifndef GN_RUNTIME_PRUNE_H
#define GN_RUNTIME_PRUNE_H

#include "runtime/backend.h"

/* Feed index of tensor e in sig, -1 when e is not fed. has_feed (per node
 * id, from gn__runtime_feed_marks) makes the common case one load. */
int32_t gn__sig_feed_index(const gn__engine_sig *sig, const uint8_t *has_feed, gn__edge e);
/* has_feed[id] = 1 when some output of node id is fed (heap; caller frees). */
gn_status gn__runtime_feed_marks(const gn_graph *g, const gn__engine_sig *sig, uint8_t **has_feed, gn__err *err);
/* The feed that replaces control edges out of node id (a fed Placeholder,
 * PlaceholderV2 or _Arg), -1 when control edges out of id are kept. */
int32_t gn__sig_control_feed(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, gn_id id);
/* keep[id] = 1 for every node the fetches and targets need (heap; caller
 * frees); *n_keep gets their number. */
gn_status gn__runtime_prune(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, uint8_t **keep,
                            uint32_t *n_keep, gn__err *err);
/* What every backend's compile starts with: each feed and fetch must name a
 * live node (GN_ERR_INTERNAL "feed 3 names no node" otherwise), then has_feed
 * and keep as above. On success the caller frees *has_feed and *keep; on
 * failure both are NULL. */
gn_status gn__runtime_compile_start(const gn_graph *g, const gn__engine_sig *sig, uint8_t **has_feed, uint8_t **keep,
                                    uint32_t *n_keep, gn__err *err);

#endif
