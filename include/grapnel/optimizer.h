/* gn_optimize: the meta-optimizer (TensorFlow's Grappler pipeline) and its report. */
#ifndef GRAPNEL_OPTIMIZER_H
#define GRAPNEL_OPTIMIZER_H

#include "grapnel/graph.h"
#include "grapnel/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pass of the caller's, run after the built-in ones in every iteration. It
 * sets *changed to nonzero when it changed g, and returns GN_OK, or an error
 * with a message in err (errlen bytes). */
typedef struct gn_custom_pass {
    const char *name;
    gn_status (*run)(void *user, gn_graph *g, int32_t *changed, char *err, size_t errlen);
    void *user;
} gn_custom_pass;

/* The machine the graph will run on (docs/architecture.md, "Target"). Nodes placed on a
 * device (`/device:GPU:0`, `/device:CPU:0`) stay there; a node with an empty
 * device runs on the target's default: the first GPU for a GPU target. */
typedef enum gn_target_kind { GN_TARGET_CPU = 0, GN_TARGET_GPU = 1 } gn_target_kind;

typedef struct gn_target {
    int32_t kind;                 /* gn_target_kind */
    int32_t compute_capability;   /* GPU: major * 10 + minor (90 for sm_90); 0 for CPU */
    int32_t num_gpus;             /* GPU: at least 1; 0 for CPU */
} gn_target;

/* Parses "cpu", "gpu" (sm_90, one GPU), "gpu:sm_80", "gpu:sm_90x4" (four GPUs)
 * or "auto" (asks the CUDA driver, when one is installed, for its first GPU's
 * compute capability and the GPU count; cpu when there is none). */
GN_API gn_status gn_target_parse(const char *text, gn_target *out, char *err, size_t errlen);
/* "cpu", "gpu:sm_90", "gpu:sm_90x4" */
GN_API void gn_target_to_string(const gn_target *t, char *buf, size_t buflen);

typedef struct gn_optimize_params {
    uint32_t struct_size;                 /* set by gn_optimize_params_init */
    const char *const *fetches;           /* tensors that must be computed ("x", "x:1"); preserved */
    size_t n_fetches;
    const char *const *feeds;             /* tensors supplied at run time; preserved, and nothing
                                             upstream of them is needed for the fetches */
    size_t n_feeds;
    const gn_custom_pass *custom_passes;  /* borrowed for the call */
    size_t n_custom_passes;
    const char *dump_dir;                 /* when set: the graph after every pass, as
                                             NNNN_itK_<pass>.pbtxt (sequence-numbered) */
    gn_target target;                     /* default: cpu */
    bool no_report_events;                /* the report keeps its per-pass records and notes but
                                             no rewrite / refusal events, and the passes skip the
                                             work of finding them: for callers that show no report
                                             (on graphs of thousands of nodes they take 10-20% of
                                             the time). With no report asked for (report NULL),
                                             none are recorded either way. */
} gn_optimize_params;

GN_API void gn_optimize_params_init(gn_optimize_params *p);

typedef struct gn_report gn_report;

/* Rewrites g in place with the passes o enables, in Grappler's order, for the
 * configured iterations. params and report may be NULL. A pass that fails is
 * rolled back and reported, unless o->fail_on_optimizer_errors. *report (owned:
 * gn_report_free) gets the per-pass record even when the call fails. */
GN_API gn_status gn_optimize(gn_graph *g, const gn_options *o, const gn_optimize_params *params,
                             gn_report **report);

GN_API void gn_report_free(gn_report *r);
/* Grappler-style text and JSON (owned: gn_free). */
GN_API gn_status gn_report_to_text(const gn_report *r, char **text);
GN_API gn_status gn_report_to_json(const gn_report *r, char **json);
/* Scalar accessors for bindings: one entry per pass run. */
GN_API size_t gn_report_pass_count(const gn_report *r);
GN_API const char *gn_report_pass_name(const gn_report *r, size_t i);
GN_API int32_t gn_report_pass_iteration(const gn_report *r, size_t i);
GN_API int64_t gn_report_pass_micros(const gn_report *r, size_t i);
GN_API int32_t gn_report_pass_changed(const gn_report *r, size_t i);
GN_API int64_t gn_report_total_micros(const gn_report *r);

/* The pass catalogue: one line per pass (id, option key, what it does), then
 * its pattern ids indented, each with a line (owned: gn_free). */
GN_API gn_status gn_optimizer_list_passes(char **text);

#ifdef __cplusplus
}
#endif
#endif
