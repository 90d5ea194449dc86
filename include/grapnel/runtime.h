/* gn_session: running a graph on a backend.
 *
 * A session binds a graph to a backend. Feeds and fetches are named as in
 * TensorFlow: "node" (output 0) or "node:k". A feed may name any tensor, not
 * only a placeholder: the graph is cut there, so a model whose front end is
 * out of scope runs from the first tensor after it. The first run for a given
 * set of feed names, fetch names and input shapes prunes the graph to what the
 * fetches need, compiles it on the backend and plans its memory; later runs
 * with the same set reuse the plan.
 *
 * Threads: a session is used by one thread at a time (any thread, the caller
 * ordering the uses); sessions on one graph may run at the same time in
 * different threads, the graph shared as graph.h says. A feed is only read:
 * one tensor may be fed to runs in several threads at once. A fetch belongs
 * to the caller, who may read and free it in any thread, while the session
 * runs again.
 */
#ifndef GRAPNEL_RUNTIME_H
#define GRAPNEL_RUNTIME_H

#include <stdbool.h>

#include "grapnel/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GN_TENSOR_MAX_DIMS 8

/* An element of a DT_STRING tensor (7). */
typedef struct gn_string {
    const char *data;
    size_t len;
} gn_string;

/* Caller-visible tensor.
 * Ownership: a tensor the caller passes as a feed is borrowed for the call
 * (data must stay valid until gn_session_run returns). A tensor the library
 * returns (a fetch) owns its data: release it with gn_tensor_free, which
 * also resets it. `internal` is the library's bookkeeping: NULL in the
 * caller's own tensors. */
typedef struct gn_tensor {
    int32_t dtype;                      /* TensorFlow DataType number (1 float, 3 int32, 19 half, ...) */
    int32_t rank;                       /* 0 for a scalar */
    int64_t dims[GN_TENSOR_MAX_DIMS];
    void *data;                         /* row-major; DT_STRING: an array of gn_string */
    size_t nbytes;
    void *internal;
} gn_tensor;

GN_API void gn_tensor_free(gn_tensor *t);          /* NULL or a caller tensor: no-op */
GN_API int64_t gn_tensor_numel(const gn_tensor *t);
/* Bytes per element of a fixed-size dtype, 0 for strings and opaque types. */
GN_API size_t gn_dtype_size(int32_t dtype);

typedef struct gn_session gn_session;

typedef struct gn_session_options {
    uint32_t struct_size;      /* set by gn_session_options_init */
    const char *backend;       /* "cpu" (default) or "cuda" */
    uint64_t seed;             /* run seed for random ops (default 0); with the ops' seed attrs
                                  it makes random ops deterministic */
    int32_t num_threads;       /* 0: the backend's default */
    /* ---- added later: callers built before these exist pass a smaller
     * struct_size and get the defaults ---- */
    uint64_t workspace_limit_bytes;   /* CUDA backend: the most workspace one cuDNN convolution
                                         may use; 0: the default, 512 MiB */
    bool cuda_graph;           /* CUDA backend: capture a whole run into a CUDA Graph on the first
                                  run of each input-shape set and replay it afterwards (default
                                  false); a plan that cannot be captured runs normally, and the
                                  session's stats say why. Other backends ignore it. */
    /* ---- resource bounds (CPU backend), each checked before the work it bounds;
     * going past one fails the run with GN_ERR_LIMIT and a message naming the
     * node and what it asked for ---- */
    uint64_t memory_limit_bytes;  /* the most bytes one tensor a node makes may take (a string
                                     tensor: its elements and their bytes); 0: the default, a
                                     quarter of the machine's physical memory (4 GiB when that
                                     cannot be read); UINT64_MAX: no limit */
    uint64_t step_limit;       /* the most node executions one gn_session_run may make, function
                                  calls and loop iterations included; 0: the default,
                                  GN_SESSION_DEFAULT_STEP_LIMIT; UINT64_MAX: no limit */
    uint64_t time_limit_ms;    /* wall-clock limit of one gn_session_run, checked between node
                                  executions (a single kernel is not interrupted); 0: none */
} gn_session_options;

/* The default step_limit: 2^28 node executions, about a minute of the
 * cheapest nodes on one core, far over any real model's run. */
#define GN_SESSION_DEFAULT_STEP_LIMIT ((uint64_t)1 << 28)

GN_API void gn_session_options_init(gn_session_options *o);

/* Creates a session on g. g is retained: it must outlive the session and not
 * change while the session exists. On failure *out is still a handle in an
 * error state (gn_session_errmsg) unless it could not be allocated. */
GN_API gn_status gn_session_new(const gn_graph *g, const gn_session_options *o, gn_session **out);

/* Runs the graph: feeds[i] is fed to feed_names[i], and fetches[j] receives
 * fetch_names[j] (owned: gn_tensor_free). Returns GN_ERR_NOT_FOUND for a name
 * that is not a tensor of the graph, GN_ERR_ARG for a feed of the wrong dtype,
 * GN_ERR_UNSUPPORTED for an op the backend cannot run (the message names the
 * node and op), GN_ERR_GRAPH for bad values met at run time, GN_ERR_LIMIT
 * when the run goes past one of the session's resource bounds. */
GN_API gn_status gn_session_run(gn_session *s, const char *const *feed_names, const gn_tensor *feeds, size_t n_feeds,
                                const char *const *fetch_names, gn_tensor *fetches, size_t n_fetches);

GN_API const char *gn_session_errmsg(const gn_session *s);
GN_API void gn_session_free(gn_session *s);

/* ---- tensors the library allocates -------------------------------------- */
/* A zero-filled tensor of a fixed-size dtype (owned: gn_tensor_free).
 * GN_ERR_ARG for a bad dtype or shape, GN_ERR_NOMEM. */
GN_API gn_status gn_tensor_alloc(int32_t dtype, int32_t rank, const int64_t *dims, gn_tensor *out);
/* numpy's name of a DataType ("float32", "int64", "bool", "float16", ...);
 * TensorFlow's name for the others ("string", "resource", ...). Static text. */
GN_API const char *gn_dtype_numpy_name(int32_t dtype);

/* ---- .npy files ----------------------------------------------------------- */
/* NumPy .npy format versions 1.0, 2.0 and 3.0, C order, little-endian:
 * <f4 <f2 <f8 <i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1, and |S<n> (byte strings,
 * read as a string tensor, trailing NULs dropped). Errors are written into
 * err[0..errlen) (may be NULL) and name the file and what is wrong:
 * "x.npy: header: fortran_order True is not supported (C order only)". */
GN_API gn_status gn_npy_read(const char *path, gn_tensor *out, char *err, size_t errlen);
/* Same from memory; name is used in messages. out is owned (gn_tensor_free). */
GN_API gn_status gn_npy_parse(const void *data, size_t size, const char *name, gn_tensor *out, char *err,
                              size_t errlen);
/* Writes t as version 1.0, atomically (temporary file, then rename). */
GN_API gn_status gn_npy_write(const char *path, const gn_tensor *t, char *err, size_t errlen);
/* Encodes t in memory (owned: gn_free). */
GN_API gn_status gn_npy_serialize(const gn_tensor *t, void **data, size_t *size, char *err, size_t errlen);

/* ---- comparing results (grapnel verify) ---------------------------------- */
typedef struct gn_compare_result {
    int32_t match;            /* 1: same dtype and shape, NaNs in the same places, and
                                 within tolerance (integers, bools, strings: equal) */
    double max_abs_err;       /* max |a - ref| over elements that are not NaN on both sides */
    double rel_l2_err;        /* ||a - ref||_2 / ||ref||_2; when ref is all zeros,
                                 the absolute ||a - ref||_2 */
    double tol;               /* the tolerance rel_l2_err was held to */
    int64_t n_diff;           /* elements that differ at all */
    int64_t n_nan_mismatch;   /* elements NaN on one side only */
    char why[256];            /* when match is 0: the reason, e.g. "shape [2,3] vs [3,2]" */
} gn_compare_result;

/* Compares a against the reference ref. tol <= 0 picks the default of the
 * dtype: 1e-5 for float32 and float64, 1e-2 for float16 and bfloat16; other
 * dtypes must match exactly. Returns GN_OK when the comparison was made
 * (out->match says how it went), GN_ERR_ARG for NULL arguments. */
GN_API gn_status gn_tensor_compare(const gn_tensor *a, const gn_tensor *ref, double tol, gn_compare_result *out);
/* The default tolerance of a dtype (0 for exact dtypes). */
GN_API double gn_compare_default_tol(int32_t dtype);

#ifdef __cplusplus
}
#endif
#endif
