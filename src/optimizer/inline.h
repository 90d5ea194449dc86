/* Function-call inlining (private), shared by the function optimizer pass
 * (src/optimizer/passes/function.c) and SavedModel freezing.
 *
 * A call is a PartitionedCall / StatefulPartitionedCall node (function in its
 * `f` attr) or a node whose op names a library function. Inlining it as
 * TensorFlow's inline_function_utils.cc does: the body's nodes are copied into
 * the caller under the prefix "<call name>/", each input goes through an
 * Identity "<call name>/input/_<k>" (or the _Arg's name), the outputs come out
 * of one IdentityN node that takes the call's own name, so "call:k" still
 * names output k; the call's control inputs gate every input, and the body's
 * control outputs (control_ret) and side effects are joined into a NoOp
 * "<call name>/output_control_node" that the call's control consumers then
 * depend on. Calls marked `_noinline` (in the function's attr) are left
 * alone, as are calls of functions that are not in the library. */
#ifndef GN_OPTIMIZER_INLINE_H
#define GN_OPTIMIZER_INLINE_H

#include "graph/ir.h"

typedef struct gn__inline_opts {
    bool ignore_noinline;     /* inline even what `_noinline` forbids (freezing needs every call open) */
    bool drop_unused_fns;     /* afterwards, remove library functions nothing references */
    uint32_t max_depth;       /* nested calls: rounds to a fixed point; 0 means 64 */
} gn__inline_opts;

/* Inlines every call in g (a top-level graph), nested calls included, until
 * none is left that may be inlined. *n_inlined (may be NULL) gets the count.
 * GN_ERR_GRAPH with a message naming the call on a malformed body or a
 * recursive function. */
gn_status gn__inline_calls(gn_graph *g, const gn__inline_opts *o, uint32_t *n_inlined, gn__err *err);
/* Inlines one call node of g (top level or a function body; calls resolve
 * against g->lib). */
gn_status gn__inline_call(gn_graph *g, gn_id call, gn__err *err);

#endif
