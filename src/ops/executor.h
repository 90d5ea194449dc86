/* What a kernel may ask of the executor running it (private).
 *
 * Most kernels are plain functions of their inputs. A few need the executor:
 * the functional control-flow ops (If, While, Case, PartitionedCall, a node
 * whose op is a library function) run a function body with a nested
 * executor, and the TensorArray ops keep objects that live as long as the
 * run. ctx->run is NULL outside an executor (constant folding): such kernels
 * then fail with GN_ERR_UNSUPPORTED.
 *
 * A backend that executes graphs embeds `struct gn__run` as the first member
 * of its run state and points `ops` at its implementation. */
#ifndef GN_OPS_EXECUTOR_H
#define GN_OPS_EXECUTOR_H

#include "ops/kernel.h"

struct gn__run_ops {
    /* Runs library function `fn` (looked up from c->g's library) on n_in
     * borrowed inputs; out[0..n_out) (zeroed by the caller) receive owned
     * references. The error names the calling node. */
    gn_status (*call)(struct gn__run *r, gn__kctx *c, const char *fn, const gn__tensor *in, uint32_t n_in,
                      gn__tensor *out, uint32_t n_out);
    /* Hands obj to the run: free_fn(obj) is called when the outermost run
     * ends (success or failure). */
    gn_status (*own)(struct gn__run *r, void *obj, void (*free_fn)(void *obj));
    /* Runs the Grapnel>EngineOp node c->node through its engine cache: an
     * engine per set of input shapes, at most max_cached_engines_count of
     * them (least recently used evicted), built on a miss when
     * allow_build_at_runtime, otherwise the native segment runs. */
    gn_status (*engine)(struct gn__run *r, gn__kctx *c, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                        uint32_t n_out);
};

struct gn__run {
    const struct gn__run_ops *ops;
};

/* Wrappers for kernels (fail with GN_ERR_UNSUPPORTED when c->run is NULL). */
gn_status gn__run_call(gn__kctx *c, const char *fn, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                       uint32_t n_out);
gn_status gn__run_own(gn__kctx *c, void *obj, void (*free_fn)(void *obj));
gn_status gn__run_engine(gn__kctx *c, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out);

/* The kernel run for a node whose op is a library function name: calls the
 * function of that name on the node's inputs (src/ops/kernels/control.c). */
gn_status gn__kernel_call_op(gn__kctx *c);

/* TensorFlow's ToBool for a predicate tensor: a scalar is true when nonzero
 * (strings: non-empty); a non-scalar is true when it has elements. */
gn_status gn__tensor_to_bool(gn__kctx *c, const gn__tensor *t, bool *out);

#endif
