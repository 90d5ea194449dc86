/* gn_options: the optimizer's settings, one member per key of TensorFlow's
 * experimental optimizer dictionary (tf.config.optimizer.set_experimental_options)
 * and of RewriterConfig, with the same names and defaults (src/optimizer/options.def). */
#ifndef GRAPNEL_OPTIONS_H
#define GRAPNEL_OPTIONS_H

#include "grapnel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* RewriterConfig.Toggle, same numbers. */
typedef enum gn_toggle {
    GN_TOGGLE_DEFAULT = 0,
    GN_TOGGLE_ON = 1,
    GN_TOGGLE_OFF = 2,
    GN_TOGGLE_AGGRESSIVE = 3,
    GN_TOGGLE_EXPERIMENTAL_MLIR = 4,
    GN_TOGGLE_EXPERIMENTAL_BOTH = 5,
} gn_toggle;

/* RewriterConfig.NumIterationsType */
typedef enum gn_iterations { GN_ITERS_DEFAULT = 0, GN_ITERS_ONE = 1, GN_ITERS_TWO = 2 } gn_iterations;
/* RewriterConfig.CpuLayout */
typedef enum gn_cpu_layout {
    GN_CPU_LAYOUT_NO_CONVERSION = 0,
    GN_CPU_LAYOUT_NCHW_TO_NHWC = 1,
    GN_CPU_LAYOUT_NHWC_TO_NCHW = 2,
} gn_cpu_layout;

/* layout.policy: where the layout optimizer puts GPU-placed work. */
typedef enum gn_layout_policy {
    GN_LAYOUT_POLICY_GRAPNEL = 0,     /* NCHW for GPU work: the layout the CUDA backend runs */
    GN_LAYOUT_POLICY_TENSORFLOW = 1,  /* TensorFlow's heuristic (keeps NHWC where tensor cores apply) */
    GN_LAYOUT_POLICY_NCHW = 2,        /* forced, whatever the target */
    GN_LAYOUT_POLICY_NHWC = 3,
} gn_layout_policy;

/* remap.policy: which fusions the remapper makes. */
typedef enum gn_remap_policy {
    GN_REMAP_POLICY_GRAPNEL = 0,      /* also the fusions only grapnel's backends run: the output is grapnel-only */
    GN_REMAP_POLICY_TENSORFLOW = 1,   /* the default: only fusions TensorFlow's kernels run on the target
                                         (docs/fusion_contract.md) */
} gn_remap_policy;

/* Capacity of a string-valued option (comma-separated lists), NUL included. */
#define GN_OPTIONS_STR_MAX 1024

typedef struct gn_options {
    uint32_t struct_size;       /* sizeof(gn_options), set by gn_options_init */
    int32_t layout_optimizer;   /* gn_toggle */
    int32_t constant_folding;
    int32_t shape_optimization;
    int32_t remapping;
    int32_t arithmetic_optimization;
    int32_t dependency_optimization;
    int32_t loop_optimization;
    int32_t function_optimization;
    int32_t debug_stripper;
    int32_t disable_model_pruning;          /* bool */
    int32_t scoped_allocator_optimization;
    int32_t pin_to_host_optimization;
    int32_t implementation_selector;
    int32_t auto_mixed_precision;
    int32_t disable_meta_optimizer;         /* bool */
    int64_t min_graph_nodes;
    int32_t auto_parallel;                  /* bool */
    int32_t use_plugin_optimizers;
    int32_t auto_mixed_precision_mkl;
    int32_t auto_mixed_precision_onednn_bfloat16;
    int32_t auto_mixed_precision_cpu;
    int32_t common_subgraph_elimination;
    int32_t meta_optimizer_iterations;      /* gn_iterations */
    int32_t fail_on_optimizer_errors;       /* bool */
    int64_t meta_optimizer_timeout_ms;
    int32_t cpu_layout_conversion;          /* gn_cpu_layout */
    int32_t checked;                        /* bool: validate after every pass */
    /* Pattern ids to disable, comma-separated ("arithmetic.remove_involution,constfold.fold");
     * a pass id disables the whole pass. Borrowed: must outlive the calls using it. */
    const char *disabled_patterns;
    /* grapnel's own keys (dotted in the dictionary) */
    int32_t layout_policy;                  /* "layout.policy": gn_layout_policy */
    int32_t remap_policy;                   /* "remap.policy": gn_remap_policy */
    int32_t lower_control_flow;             /* "function.lower_control_flow": bool */
    /* "amp.<list>_add" / "amp.<list>_remove": op names, comma-separated; the
     * library's version of TensorFlow's TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_*
     * environment variables (which it never reads) */
    char amp_allowlist_add[GN_OPTIONS_STR_MAX];
    char amp_allowlist_remove[GN_OPTIONS_STR_MAX];
    char amp_inferlist_add[GN_OPTIONS_STR_MAX];
    char amp_inferlist_remove[GN_OPTIONS_STR_MAX];
    char amp_clearlist_add[GN_OPTIONS_STR_MAX];
    char amp_clearlist_remove[GN_OPTIONS_STR_MAX];
    char amp_denylist_add[GN_OPTIONS_STR_MAX];
    char amp_denylist_remove[GN_OPTIONS_STR_MAX];
    char amp_keep_float32[GN_OPTIONS_STR_MAX];   /* "amp.keep_float32": node names kept in float32 */
    /* RewriterConfig's nested fields, dotted as in the text format */
    int32_t auto_parallel_num_replicas;     /* "auto_parallel.num_replicas" */
    char scoped_allocator_enable_op[GN_OPTIONS_STR_MAX]; /* "scoped_allocator_opts.enable_op": comma-separated */
} gn_options;

/* Fills TensorFlow's defaults. */
GN_API void gn_options_init(gn_options *o);

/* Parses the dictionary's own text, `{'constant_folding': True, 'min_graph_nodes': -1}`
 * (Python's True/False/None and integers; toggles also take 'ON', 'OFF', 'AGGRESSIVE',
 * 'DEFAULT'), or `key=value,...` (values true/false/on/off/aggressive/default/integers),
 * applying each key to *o (keys not named keep their value). Strings take Python's
 * escapes. Errors (GN_ERR_ARG) name the key, suggest the nearest valid key and list the
 * accepted values; syntax errors name the byte offset ("at offset 26: expected ',' or
 * '}'"); the message is written into err (errlen bytes, may be NULL). */
GN_API gn_status gn_options_parse(gn_options *o, const char *text, char *err, size_t errlen);
/* Sets / reads one key by name; value in the same spellings as gn_options_parse.
 * gn_options_get writes the value as the dictionary would print it ("True", "-1", ...). */
GN_API gn_status gn_options_set(gn_options *o, const char *key, const char *value, char *err, size_t errlen);
GN_API gn_status gn_options_get(const gn_options *o, const char *key, char *buf, size_t buflen);
/* Prints the dictionary form of every key whose value differs from the default, as
 * tf.config.optimizer.get_experimental_options() does (owned: gn_free). */
GN_API gn_status gn_options_to_string(const gn_options *o, char **text);
/* Reads a RewriterConfig message (binary or text format, detected) into *o. */
GN_API gn_status gn_options_from_rewriter_config(gn_options *o, const void *data, size_t size, char *err,
                                                 size_t errlen);
/* Number of keys and key i (for help text and bindings). */
GN_API size_t gn_options_key_count(void);
GN_API const char *gn_options_key(size_t i);
GN_API const char *gn_options_key_help(size_t i);

#ifdef __cplusplus
}
#endif
#endif
