/* Engine conversion, as TF-TRT does it: TensorFlow's ConversionParams, the
 * segmenter, and Grapnel>EngineOp nodes (reference/trt_savedmodel.md part A).
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

#ifdef __cplusplus
}
#endif
#endif
