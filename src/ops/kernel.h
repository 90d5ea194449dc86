/* CPU kernels (private): the one implementation of each op's meaning, used by
 * the CPU reference backend and by constant folding.
 *
 * A kernel reads its inputs (ctx->in), the node's attrs (through the graph:
 * gn__attr_get_* on ctx->g / ctx->node) and produces its outputs with
 * gn__kctx_output (fresh buffer) or gn__kctx_forward (alias an input). It
 * never prints or aborts: failures go through gn__kctx_fail, which names the
 * node and op. With GN__K_REFERENCE set a kernel must give the same bits on
 * every x86-64 machine: fixed summation order, no BLAS, no FMA contraction
 * that depends on the CPU (compile with -ffp-contract=off). */
#ifndef GN_OPS_KERNEL_H
#define GN_OPS_KERNEL_H

#include "graph/ir.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/types.pb-c.h"

#define GN__MAX_DIMS 8

/* A refcounted heap buffer holding tensor data. */
typedef struct gn__buffer {
    uint32_t refs;
    uint32_t flags;          /* GN__BUF_* */
    size_t size;
    void *data;
    void (*release)(struct gn__buffer *b);   /* called when refs drops to 0 */
    void *owner;             /* for release */
} gn__buffer;

gn__buffer *gn__buffer_new(size_t size);      /* malloc-backed, 64-byte aligned, refs 1 */
gn__buffer *gn__buffer_ref(gn__buffer *b);
void gn__buffer_unref(gn__buffer *b);

/* A string element of a DT_STRING tensor; bytes live in the same buffer. */
typedef struct gn__tstring {
    const char *ptr;
    size_t len;
} gn__tstring;

typedef struct gn__tensor {
    int32_t dtype;           /* TensorFlow DataType; 0 = no tensor (e.g. dead / unset) */
    int32_t rank;
    int64_t dims[GN__MAX_DIMS];
    void *data;              /* element 0; for DT_STRING an array of gn__tstring;
                                for DT_RESOURCE / DT_VARIANT an array of void * handles */
    size_t nbytes;
    gn__buffer *buf;         /* owner of data; NULL when borrowed (graph constant, caller feed) */
    bool dead;               /* v1 control flow: a dead tensor (untaken Switch branch) */
} gn__tensor;

int64_t gn__tensor_numel(const gn__tensor *t);
/* Releases t's buffer reference and zeroes it. */
void gn__tensor_release(gn__tensor *t);
/* t2 = t1 with an extra buffer reference. */
void gn__tensor_copy_ref(gn__tensor *dst, const gn__tensor *src);
/* Decodes a TensorProto (tensor_content or typed fields, the short "repeat
 * the last value" form, all-zero when empty) into a fresh tensor.
 * GN_ERR_LIMIT for a short form that would expand past GN__TENSOR_EXPAND_MAX. */
gn_status gn__tensor_from_proto(const Tensorflow__TensorProto *p, gn__tensor *out, gn__err *err);
/* As gn__tensor_from_proto, but when p already holds every element in the
 * tensor's layout (tensor_content, or one typed value per element of a type
 * stored as itself), naturally aligned, the tensor borrows those bytes (buf
 * NULL, valid as long as p is) instead of copying them. */
gn_status gn__tensor_view_proto(const Tensorflow__TensorProto *p, gn__tensor *out, gn__err *err);
/* The same, a copy (when one is needed) in a buffer from alloc, called as a
 * kernel's output allocator is (output 0): constant folding decodes the input
 * of an op that forwards it into memory its result may keep. */
gn_status gn__tensor_view_proto_alloc(const Tensorflow__TensorProto *p,
                                      gn__buffer *(*alloc)(void *user, uint32_t output, size_t bytes), void *user,
                                      gn__tensor *out, gn__err *err);
/* The most bytes gn__tensor_from_proto expands a proto to when the proto
 * does not hold every element itself (the "repeat the last value" and
 * all-zero forms): past it, GN_ERR_LIMIT without allocating. */
#define GN__TENSOR_EXPAND_MAX ((size_t)1 << 30)
/* Encodes a tensor as a TensorProto (tensor_content for fixed-size dtypes,
 * string_val for strings) allocated with alloc. */
gn_status gn__tensor_to_proto(const gn__tensor *t, ProtobufCAllocator *alloc, Tensorflow__TensorProto **out,
                              gn__err *err);

enum {
    GN__K_REFERENCE = 1u << 0,   /* bit-reproducible path (constant folding): no BLAS, fixed order */
    GN__K_EXACT_MATH = 1u << 1,  /* float transcendentals in double libm, rounded once (tests) */
};

struct gn__run;                  /* executor state (ops/executor.h); opaque to plain kernels */

typedef struct gn__kctx {
    const gn_graph *g;
    gn_id node;
    uint32_t n_in;
    const gn__tensor *in;        /* data inputs, in order */
    uint32_t n_out;
    gn__tensor *out;             /* zeroed by the caller; filled by the kernel */
    uint32_t flags;              /* GN__K_* */
    gn__err *err;
    struct gn__run *run;         /* NULL outside the executor (constant folding) */
    /* Output allocator: NULL means gn__buffer_new. The runtime's memory plan
     * hooks in here. */
    gn__buffer *(*alloc)(void *user, uint32_t output, size_t bytes);
    void *alloc_user;
    uint64_t seed;               /* run seed for random ops (combined with seed/seed2 attrs) */
    /* The most bytes one output may take (strings: the gn__tstring array and
     * the string bytes together); 0: no limit. Over it, gn__kctx_output and
     * gn__kctx_output_strings fail with GN_ERR_LIMIT before allocating. The
     * session sets its memory_limit_bytes here; constant folding its size cap. */
    size_t max_output_bytes;
    /* The BLAS library gemms call (src/ops/blas.h); NULL: the reference gemm.
     * Ignored under GN__K_REFERENCE. */
    const struct gn__blas *blas;
} gn__kctx;

/* The library a kernel's gemms call: NULL under GN__K_REFERENCE or without one. */
static inline const struct gn__blas *gn__kctx_blas(const gn__kctx *c)
{
    return (c->flags & GN__K_REFERENCE) ? NULL : c->blas;
}

/* Allocates output k with dtype and shape; *t gets the tensor (data uninitialised). */
gn_status gn__kctx_output(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims, gn__tensor **t);
/* Allocates a DT_STRING output with room for `bytes` bytes of string data
 * after the gn__tstring array (the kernel fills ptr/len pointing into it). */
gn_status gn__kctx_output_strings(gn__kctx *c, uint32_t k, int32_t rank, const int64_t *dims, size_t bytes,
                                  gn__tensor **t, char **storage);
/* "4.0 TiB", "512 B": bytes for messages (1024-based units, one decimal). */
const char *gn__fmt_bytes(char *buf, size_t n, uint64_t bytes);

/* GN_ERR_LIMIT (naming the node, the output, its elements and bytes) when an
 * output of `bytes` is over c->max_output_bytes: for a kernel that builds an
 * output in scratch memory first, before it allocates that. */
gn_status gn__kctx_check_output(gn__kctx *c, uint32_t k, int32_t dtype, int64_t numel, size_t bytes);
/* Output k is input i (shared buffer), optionally with another shape of the same element count. */
gn_status gn__kctx_forward(gn__kctx *c, uint32_t k, uint32_t i);
gn_status gn__kctx_forward_reshape(gn__kctx *c, uint32_t k, uint32_t i, int32_t rank, const int64_t *dims);
/* "node 'x' (Op): <what>" as GN_ERR_GRAPH (bad input values) or another code. */
gn_status gn__kctx_fail(gn__kctx *c, gn_status code, const char *fmt, ...) GN__PRINTF(3, 4);

typedef gn_status (*gn__kernel_fn)(gn__kctx *c);

/* The CPU kernel of op (src/ops/op_fns.c, from the op list src/opdef/ops.def);
 * NULL when the CPU backend cannot run op. */
gn__kernel_fn gn__kernel_for(const char *op);

/* float16 helpers: C's _Float16 */
typedef _Float16 gn__f16;

#endif
