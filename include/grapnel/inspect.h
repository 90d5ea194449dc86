/* gn_graph: human-readable summaries. */
#ifndef GRAPNEL_INSPECT_H
#define GRAPNEL_INSPECT_H

#include "grapnel/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GN_INSPECT_SHAPES = 1u << 0,   /* infer and list every node's output dtypes and shapes */
};

/* The `grapnel inspect` report: node and edge counts, versions, op histogram,
 * dtypes, graph inputs (placeholders) and outputs (nodes whose outputs nothing
 * consumes), functions; with GN_INSPECT_SHAPES every node's outputs.
 * *text is owned: gn_free. */
GN_API gn_status gn_graph_inspect(gn_graph *g, uint32_t flags, char **text);
/* Graphviz dot text of the graph and its function bodies (owned: gn_free). */
GN_API gn_status gn_graph_to_dot(gn_graph *g, char **text);

#ifdef __cplusplus
}
#endif
#endif
