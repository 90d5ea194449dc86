/* Engine conversion, as TF-TRT does it: TensorFlow's ConversionParams, the
 * segmenter, and Grapnel>EngineOp nodes (docs/reference_formats.md part A).
 *
 * gn_segment finds the subgraphs a backend supports (the backend's `supports`
 * gives the reason for every refusal), grows clusters with union-find in
 * reverse topological order without creating cycles, drops clusters with
 * fewer than minimum_segment_size effective nodes (Identity, Snapshot and
 * StopGradient do not count), and replaces each remaining cluster with one
 * `Grapnel>EngineOp` node. The original subgraph is kept as the library
 * function `<engine>_native_segment`, named by the node's `segment_func`
 * attr; constant inputs are copied into it. The node carries the conversion
 * parameters in TF-TRT's attrs (precision_mode, max_cached_engines_count,
 * workspace_size_bytes, use_calibration, InT/OutT, input_shapes /
 * output_shapes, ...). The namespace "Grapnel" is what SavedModel's
 * namespace_whitelist governs. */
#ifndef GRAPNEL_CONVERT_H
#define GRAPNEL_CONVERT_H

#include "grapnel/graph.h"
#include "grapnel/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gn_precision {
    GN_PRECISION_FP32 = 0,
    GN_PRECISION_FP16 = 1,
    GN_PRECISION_INT8 = 2,
} gn_precision;

/* tf.experimental.tensorrt.ConversionParams, the same six fields and defaults. */
typedef struct gn_conversion_params {
    uint32_t struct_size;               /* set by gn_conversion_params_init */
    int64_t max_workspace_size_bytes;   /* default 1 << 30 */
    int32_t precision_mode;             /* gn_precision; default FP32 */
    int32_t minimum_segment_size;       /* default 3; > 0, or -1: convert nothing in the main graph */
    int32_t maximum_cached_engines;     /* default 1; >= 1 */
    int32_t use_calibration;            /* default True; only meaningful for INT8 */
    int32_t allow_build_at_runtime;     /* default True */
} gn_conversion_params;

GN_API void gn_conversion_params_init(gn_conversion_params *p);
/* Parses the dictionary's own text, e.g. "{'precision_mode': 'FP16',
 * 'minimum_segment_size': 5}" (keys as ConversionParams' fields; precision in
 * either case; Python's True/False/None, None resetting a field), applied on
 * top of *p, then validates as TensorFlow does. Errors name the field. */
GN_API gn_status gn_conversion_params_parse(gn_conversion_params *p, const char *text, char *err, size_t errlen);
/* Checks the values as TrtConversionParams does (GN_ERR_ARG with the field). */
GN_API gn_status gn_conversion_params_validate(const gn_conversion_params *p, char *err, size_t errlen);
/* "{'max_workspace_size_bytes': 1073741824, 'precision_mode': 'FP32', ...}",
 * every field, in the namedtuple's order (owned: gn_free). */
GN_API gn_status gn_conversion_params_to_string(const gn_conversion_params *p, char **text);

typedef struct gn_segment_params {
    uint32_t struct_size;             /* set by gn_segment_params_init */
    const char *backend;              /* whose `supports` decides: "cpu" (default) or "cuda" */
    const char *const *preserve;      /* tensors or nodes that stay outside every segment
                                         (the graph's feeds and fetches) */
    size_t n_preserve;
    int32_t dry_run;                  /* nonzero: report the clusters, change nothing */
} gn_segment_params;

GN_API void gn_segment_params_init(gn_segment_params *p);

/* Segments g in place (unless dry_run). *report (may be NULL; owned: gn_free)
 * gets the text report: one line per segment with its engine name and
 * members, then one line per refused node with the reason, then the count of
 * segments dropped by minimum_segment_size. *n_engines (may be NULL) gets the
 * number of engine nodes made (or that would be made). */
GN_API gn_status gn_segment(gn_graph *g, const gn_conversion_params *p, const gn_segment_params *sp,
                            char **report, size_t *n_engines);

/* ---- INT8 (docs/reference_formats.md §A8) ----------------------------------------------
 * With precision_mode INT8 an engine op's `calibration_data` attr holds its
 * calibration table, this text:
 *
 *   grapnel-int8-calibration v1
 *   # comment lines start with '#'
 *   GrapnelInputPH_0:0 2.75
 *   conv1/Conv2D:0 11.0312
 *
 * one "TENSOR AMAX" line per float tensor: the engine inputs
 * (GrapnelInputPH_<k>:0) and the tensors of its native segment, by their node
 * names there; AMAX is the symmetric range [-AMAX, AMAX], quantized with scale
 * AMAX / 127 to [-127, 127]. Engines are built from the table (never by
 * calibrating again): Conv2D, DepthwiseConv2dNative, MatMul, _FusedConv2D and
 * _FusedMatMul with constant weights run in int8 (activations per tensor from
 * the table, weights per output channel, int32 sums, then dequantized; fused
 * bias and activation in float); every other op runs in float.
 *
 * use_calibration=True: gn_segment leaves the table empty (the engines run
 * their native segments, counted as fallbacks) until gn_calibrate fills it.
 * use_calibration=False: gn_segment fills it from the graph's
 * FakeQuantWithMinMaxVars/Args and QuantizeAndDequantizeV2/V3/V4 nodes, whose
 * range max(|min|, |max|) applies to their input and output tensors and is
 * passed on through Identity, Snapshot, StopGradient, Relu, Relu6, MaxPool,
 * Reshape, Squeeze, ExpandDims and Transpose; a tensor an engine would
 * quantize without a range is GN_ERR_GRAPH naming it, before the graph
 * changes. A graph with no quantization node at all gets FP16 engines, as
 * TF-TRT does, and the report says so. */

/* Calibrates every INT8 engine op of g that has use_calibration: runs g on the
 * CPU backend over n_batches batches (batches[b * n_feeds + i] is fed to
 * feed_names[i]; shapes may differ between batches), each engine op running
 * its native segment, records max |x| of every float tensor of each engine's
 * segment and stores the tables in the ops' calibration_data. *report (may be
 * NULL; owned: gn_free) gets one line per engine. GN_ERR_ARG when g has no
 * such engine op; on failure the tables are left as they were. */
GN_API gn_status gn_calibrate(gn_graph *g, const char *const *feed_names, size_t n_feeds, const gn_tensor *batches,
                              size_t n_batches, char **report);

/* ---- engines built ahead of time, and saved with a SavedModel (docs/reference_formats.md §A9) ---
 * TF-TRT's build(): runs g once on `backend` ("cpu"; NULL: "cpu") with the
 * given feeds (zero tensors of the wanted shapes will do: gn_tensor_alloc),
 * every top-level engine op building its engine for the input shapes it
 * gets, and records those shapes per engine op in g (at most its
 * maximum_cached_engines, the most recent kept; building again with other
 * shapes adds to them). Every session created on g afterwards starts with
 * these engines in its caches (its first run with those shapes is a cache
 * hit, counted as prebuilt, not built). gn_savedmodel_save writes them to
 * assets/grapnel-engine.<engine name> ('/' written as '_'): a TFRecord file,
 * one record per engine, giving the input shapes (the cache key), precision,
 * backend, device, library version and a digest of the segment (and of an
 * INT8 op's calibration table); src/convert/engine_asset.h documents the
 * payload. A session on a graph loaded from that SavedModel starts with those
 * engines; a record made for another backend, device, library version,
 * precision or segment is refused and counted (the engine is then built at
 * run time, or the native segment runs without allow_build_at_runtime); a
 * malformed asset (truncated, bad CRC) makes the run fail with
 * GN_ERR_PARSE naming the file and the record. *report (may be NULL; owned:
 * gn_free) gets one line per engine op with its input shapes. Errors are in
 * gn_graph_errmsg(g): GN_ERR_ARG when g has no engine op, the run's error
 * otherwise. */
GN_API gn_status gn_engines_build(gn_graph *g, const char *backend, const char *const *feed_names,
                                  const gn_tensor *feeds, size_t n_feeds, char **report);

#ifdef __cplusplus
}
#endif
#endif
