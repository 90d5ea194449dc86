/* Function-call inlining (private), shared by the function optimizer pass
 * (src/optimizer/passes/function.c) and SavedModel freezing. The code is in
 * src/optimizer/passes/function_inline.c.
 *
 * A call is a PartitionedCall / StatefulPartitionedCall node (function in its
 * `f` attr) or a node whose op names a library function. Inlining it follows
 * TensorFlow's InlineFunctionBody (common_runtime/inline_function_utils.cc):
 *  - when the call has control inputs, a NoOp "<call>/input_control_node"
 *    takes them; it gates every input Identity, every body node without
 *    inputs and every nested call without control inputs;
 *  - each input k goes through an Identity "<call>/input/_<k>" (TensorFlow:
 *    "Func/<call>/input/_<counter>"; ours is per call, so deterministic);
 *  - the body's nodes are copied under the prefix "<call>/" (Enter frame
 *    names and "loc:@" colocation groups prefixed too); nodes with no device
 *    take the call's device; attr placeholders ("$T") are bound from the call
 *    (its attrs for a call by op name, the `f` attr's attrs for
 *    PartitionedCall);
 *  - each output k comes out of an Identity "<call>/output/_<k>", and every
 *    consumer of "call:k" is rewired to it;
 *  - when the call has control consumers (or the caller is kept), a NoOp
 *    "<call>/output_control_node" depends on the body's control outputs
 *    (control_ret) for PartitionedCall / StatefulPartitionedCall
 *    (TensorFlow's kControlOutputs), on the output Identities and the
 *    control outputs for calls by op name (TensorFlow: kDataOutputs only;
 *    we add the control outputs so no side effect is left unordered), or,
 *    when that leaves it without inputs, on the input control node; the
 *    call's control consumers then depend on it;
 *  - the caller kept: an IdentityN that takes the call's own name over the
 *    output Identities (so "call:k" still names output k), or a NoOp of that
 *    name when the function has no outputs, with a control input on the
 *    output control node. A call that is a control return of the body it
 *    sits in is always kept, and the control return follows it.
 * Refused (left alone, reason given): functions not in the library, calls
 * marked `_noinline` (in the FunctionDef's attr), calls marked for XLA
 * (`_XlaMustCompile`; Keras compiles grouped convolutions so on the CPU),
 * unless the options say otherwise, recursive functions, list arguments (input count not
 * the signature's), unbound attr placeholders, a name already taken. */
#ifndef GN_OPTIMIZER_INLINE_H
#define GN_OPTIMIZER_INLINE_H

#include "graph/ir.h"

typedef struct gn__inline_opts {
    bool ignore_noinline;     /* inline even what `_noinline` forbids (freezing needs every call open) */
    bool ignore_xla;          /* inline calls marked for XLA too (freezing: a frozen graph runs their ops) */
    bool drop_unused_fns;     /* afterwards, remove library functions nothing references (top level only;
                                 a SavedModel's concrete functions stay) */
    bool drop_caller;         /* keep the IdentityN / NoOp named like the call only when the call is
                                 GN__NODE_PRESERVE (as Grappler keeps only fetched callers); by default
                                 (false) it is always kept */
    uint32_t max_depth;       /* nested calls: inlined down to this depth; 0 means 64 */
} gn__inline_opts;

/* Inlines every call in g (a top-level graph or a function body), nested
 * calls included (calls the inlined bodies bring are inlined in the same
 * sweep), until none is left that may be inlined. *n_inlined (may be NULL)
 * gets the count. Cost: linear in the nodes created. GN_ERR_GRAPH with a
 * message naming the call on a malformed body; refused calls are no error. */
gn_status gn__inline_calls(gn_graph *g, const gn__inline_opts *o, uint32_t *n_inlined, gn__err *err);
/* Inlines one call node of g (top level or a function body; calls resolve
 * against g->lib), keeping the caller as an IdentityN / NoOp. A call that
 * cannot be inlined fails with GN_ERR_UNSUPPORTED and the reason. */
gn_status gn__inline_call(gn_graph *g, gn_id call, gn__err *err);

/* ---- the pieces the function optimizer uses ---- */
/* The library function node id calls, or NULL when it is not a call. */
gn__function *gn__inline_callee(const gn_graph *g, gn_id id);
/* Why call cannot be inlined (written into why, returns false), or true. */
bool gn__inline_possible(const gn_graph *g, gn_id call, bool ignore_noinline, char *why, size_t n);
/* The same, with a cache of the recursion test: rec has one byte per library
 * function (g->lib->n_fns), zeroed before the first call. */
bool gn__inline_possible_cached(const gn_graph *g, gn_id call, bool ignore_noinline, uint8_t *rec, char *why, size_t n);
/* Inlines call (gn__inline_possible must have said yes); keep_caller: leave
 * the IdentityN / NoOp named like the call. */
gn_status gn__inline_call_ex(gn_graph *g, gn_id call, bool keep_caller, gn__err *err);
/* In a function body g: is node id one of its function's control returns?
 * Retarget those that name `from` to `to` (a node replacing it). */
bool gn__is_control_ret(const gn_graph *g, gn_id id);
void gn__retarget_control_ret(gn_graph *g, gn_id from, gn_id to);
/* Removes from top-level g the library functions that no node of g
 * references, directly or through other functions (calls by op name, func
 * and list(func) attrs, If/While/Case branches), keeping gradient functions
 * (both sides of a gradients entry) and, with keep_saved, for a graph loaded
 * from a SavedModel, the object graph's concrete functions (gn__inline_calls
 * keeps them; the function optimizer, like Grappler, does not, so that its
 * result does not depend on where the graph came from). *n_removed gets the
 * count. */
gn_status gn__prune_library(gn_graph *g, bool keep_saved, uint32_t *n_removed, gn__err *err);

#endif
