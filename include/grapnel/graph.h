/* gn_graph: loading, saving and inspecting TensorFlow graphs.
 *
 * A gn_graph holds one graph (a GraphDef, or the graph of one MetaGraphDef of
 * a SavedModel) with its function library.
 *
 * Threads. The library has no global mutable state: calls on distinct handles
 * (graphs, sessions, reports) may run at the same time in any threads, a graph
 * and its clones included (what they share is immutable and counted
 * atomically). A handle is used by one thread at a time (any thread; the
 * caller orders the uses, e.g. with a mutex), with one exception: a graph that
 * no call changes may be shared by any number of threads for
 *   - gn_graph_clone,
 *   - gn_session_new (runtime.h), and the runs of the sessions made on it
 *     (each session used by one thread at a time),
 *   - the inspection calls of this header: gn_graph_node_count,
 *     gn_graph_node_name/op/device/input_count/input,
 *     gn_graph_node_output_count/dtype/shape, gn_graph_function_count/name/
 *     node_count (the shapes read are those gn_graph_infer_shapes made before
 *     the graph was shared).
 * Every other call, including the SavedModel queries of savedmodel.h (they
 * cache strings and the variables' index in the graph), gn_graph_serialize,
 * gn_graph_save and gn_graph_errmsg, needs the graph to itself. Options and
 * parameter structs (gn_load_options, gn_options, gn_optimize_params,
 * gn_conversion_params, gn_segment_params, gn_save_options, gn_session_options)
 * are only read by the calls they are passed to, so one may be passed to
 * calls in several threads at once. Checked under ThreadSanitizer by
 * tests/threads_test.c (`make tsan`; docs/hardening.md). */
#ifndef GRAPNEL_GRAPH_H
#define GRAPNEL_GRAPH_H

#include "grapnel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gn_graph gn_graph;

typedef enum gn_format {
    GN_FORMAT_AUTO = 0,        /* load: from the content; save: from the file name */
    GN_FORMAT_BINARY = 1,      /* binary GraphDef (.pb) */
    GN_FORMAT_TEXT = 2,        /* text GraphDef (.pbtxt) */
    GN_FORMAT_SAVEDMODEL = 3,  /* SavedModel directory */
} gn_format;

typedef struct gn_load_options {
    uint32_t struct_size;      /* sizeof(gn_load_options), set by gn_load_options_init */
    gn_format format;          /* GN_FORMAT_AUTO: detected from the content */
    const char *tags;          /* SavedModel: comma-separated tag set; NULL: the only
                                  MetaGraphDef, else the one tagged "serve" (borrowed) */
    int32_t validate;          /* nonzero (default): validate after loading */
} gn_load_options;

GN_API void gn_load_options_init(gn_load_options *o);

/* Loads a .pb, .pbtxt (optionally gzip-compressed) or SavedModel directory.
 * opts may be NULL (defaults). On failure *out is still a handle, in an error
 * state, whose gn_graph_errmsg says "<path>: byte N: ..." or "<path>: line L:C:
 * ..." and names the node where there is one; free it with gn_graph_free. Only
 * when the handle cannot be allocated is *out NULL (GN_ERR_NOMEM).
 * Returns GN_ERR_IO, GN_ERR_PARSE, GN_ERR_GRAPH, GN_ERR_NOT_FOUND (tag). */
GN_API gn_status gn_graph_load(const char *path, const gn_load_options *opts, gn_graph **out);
/* Same from memory; name is used in messages (borrowed). */
GN_API gn_status gn_graph_load_buffer(const void *data, size_t size, const char *name,
                                      const gn_load_options *opts, gn_graph **out);

/* Writes the graph as a GraphDef, atomically (temporary file, then rename: a
 * failed write leaves nothing). fmt GN_FORMAT_AUTO picks text for names ending
 * in .pbtxt/.txt, binary otherwise. Deterministic: same graph, same bytes. */
GN_API gn_status gn_graph_save(gn_graph *g, const char *path, gn_format fmt);
/* Whether the files written for g (gn_graph_save, gn_savedmodel_save and its
 * variables and assets, engine assets) are flushed to the disk (fsync, the
 * file and then its directory) before the save returns. Off by default,
 * as in TensorFlow's own writers: every file is still written whole under a
 * temporary name and renamed into place, so a killed process or a full disk
 * never leaves a partial file, but after a power loss or a system crash the
 * file may be missing or empty; on, it is not (and a save waits for the disk).
 * Kept by gn_graph_clone. The CLI turns it on with GRAPNEL_FSYNC=1. */
GN_API void gn_graph_set_fsync(gn_graph *g, int on);
/* Serializes to memory (owned: gn_free). */
GN_API gn_status gn_graph_serialize(gn_graph *g, gn_format fmt, void **data, size_t *size);

GN_API void gn_graph_free(gn_graph *g);                 /* NULL is a no-op */
GN_API const char *gn_graph_errmsg(const gn_graph *g);  /* "" when the last call succeeded */
GN_API gn_status gn_graph_errcode(const gn_graph *g);

/* Structural copy sharing tensor payloads. */
GN_API gn_status gn_graph_clone(const gn_graph *g, gn_graph **out);
/* Validates structure (docs/architecture.md, "Graph validation"); the message names the node. */
GN_API gn_status gn_graph_validate(gn_graph *g);
/* Infers every node's output dtypes and (partial) shapes, function bodies included. */
GN_API gn_status gn_graph_infer_shapes(gn_graph *g);

/* ---- inspection (indices are 0..count-1 over live nodes, in graph order) --- */
GN_API size_t gn_graph_node_count(const gn_graph *g);
GN_API const char *gn_graph_node_name(const gn_graph *g, size_t i);   /* borrowed until the graph changes */
GN_API const char *gn_graph_node_op(const gn_graph *g, size_t i);
GN_API const char *gn_graph_node_device(const gn_graph *g, size_t i);
GN_API size_t gn_graph_node_input_count(const gn_graph *g, size_t i); /* data + control */
/* Input k in TensorFlow's spelling ("x", "x:1", "^x"), written into buf. */
GN_API gn_status gn_graph_node_input(const gn_graph *g, size_t i, size_t k, char *buf, size_t buflen);
/* After gn_graph_infer_shapes: outputs of node i; dtype is TensorFlow's
 * DataType number (0 unknown); rank -1 when unknown; dims[j] -1 when unknown.
 * Returns the rank, or -1; at most maxdims dims are written. */
GN_API int32_t gn_graph_node_output_count(const gn_graph *g, size_t i);
GN_API int32_t gn_graph_node_output_dtype(const gn_graph *g, size_t i, int32_t k);
GN_API int32_t gn_graph_node_output_shape(const gn_graph *g, size_t i, int32_t k,
                                          int64_t *dims, int32_t maxdims);
GN_API size_t gn_graph_function_count(const gn_graph *g);
GN_API const char *gn_graph_function_name(const gn_graph *g, size_t i);
GN_API size_t gn_graph_function_node_count(const gn_graph *g, size_t i);
/* Name of a DataType number, TensorFlow's spelling without DT_ ("float"). */
GN_API const char *gn_dtype_name(int32_t dtype);

#ifdef __cplusplus
}
#endif
#endif
