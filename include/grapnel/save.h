/* Writing SavedModels: gn_savedmodel_save with every tf.saved_model.SaveOptions
 * field (docs/reference_formats.md §B1, §B6-§B9).
 *
 * The directory written holds saved_model.pb (or, with
 * experimental_image_format and a SavedModel of 1 GiB or more, the chunked
 * saved_model.cpb TensorFlow's proto splitter writes), fingerprint.pb,
 * variables/ when the graph keeps variables (a SavedModel input: its
 * checkpoint copied byte for byte, or with MaxShardSizePolicy rewritten with
 * its tensors sliced across shards exactly as TensorFlow writes it), assets/ (the files the MetaGraphDef's asset_file_def names) and,
 * with save_debug_info, debug/saved_model_debug_info.pb. Everything is
 * written into a fresh sibling directory "DIR.tmp-XXXXXX" that is renamed to
 * DIR at the end (saved_model.pb being its last essential file), so a save
 * that fails leaves neither DIR nor the temporary directory behind. DIR must
 * not exist, or be an empty directory. The bytes are deterministic. */
#ifndef GRAPNEL_SAVE_H
#define GRAPNEL_SAVE_H

#include "grapnel/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gn_variable_policy {
    GN_VARIABLE_POLICY_NONE = 0,                          /* devices of variables dropped */
    GN_VARIABLE_POLICY_SAVE_VARIABLE_DEVICES = 1,         /* devices of variables kept */
    GN_VARIABLE_POLICY_EXPAND_DISTRIBUTED_VARIABLES = 2,  /* kept, and distributed components too */
} gn_variable_policy;

typedef enum gn_sharding_policy {
    GN_SHARDING_DEFAULT = 0,         /* None: TensorFlow's default, ShardByTaskPolicy */
    GN_SHARDING_BY_TASK = 1,         /* ShardByTaskPolicy(): one data file per task (host) */
    GN_SHARDING_MAX_SHARD_SIZE = 2,  /* MaxShardSizePolicy(max_shard_size) */
} gn_sharding_policy;

/* One function alias: meta_info_def.function_aliases[function] = alias. */
typedef struct gn_function_alias {
    const char *alias;
    const char *function;   /* a FunctionDef name of the graph's library */
} gn_function_alias;

/* tf.saved_model.SaveOptions, one member per field. Initialise with
 * gn_save_options_init (TensorFlow's defaults); set struct_size to
 * sizeof(gn_save_options) when filling it by hand. */
typedef struct gn_save_options {
    uint32_t struct_size;
    /* namespace_whitelist: 0 = None (every namespace allowed); 1 = only the
     * n_namespace_whitelist listed ones (0 listed = none allowed). */
    int32_t has_namespace_whitelist;
    size_t n_namespace_whitelist;
    const char *const *namespace_whitelist;
    int32_t save_debug_info;                      /* False */
    size_t n_function_aliases;
    const gn_function_alias *function_aliases;    /* None */
    int32_t experimental_debug_stripper;          /* False */
    const char *experimental_io_device;           /* NULL = None */
    gn_variable_policy experimental_variable_policy;   /* NONE */
    int32_t experimental_custom_gradients;        /* True */
    int32_t experimental_image_format;            /* False */
    int32_t experimental_skip_saver;              /* False */
    gn_sharding_policy experimental_sharding_callback; /* None */
    int64_t max_shard_size;                       /* bytes, for GN_SHARDING_MAX_SHARD_SIZE */
    size_t n_extra_tags;                          /* extra_tags: tags besides the saved ones */
    const char *const *extra_tags;
    void *internal;                               /* strings owned by gn_save_options_parse */
} gn_save_options;

GN_API void gn_save_options_init(gn_save_options *o);
/* Parses Python dict text, e.g. "{'save_debug_info': True, 'namespace_whitelist':
 * ['Custom']}", into o (fields not named keep their values). Values: True,
 * False, None, integers (1_000, 1024 * 1024), 'strings' or "strings" (Python's
 * escapes), [lists] of strings, {dicts}
 * of strings (function_aliases: {'alias': 'function_name'}), variable
 * policies as 'save_variable_devices' / VariablePolicy.SAVE_VARIABLE_DEVICES
 * (any case), sharding callbacks as ShardByTaskPolicy() or
 * MaxShardSizePolicy(N) / MaxShardSizePolicy(max_shard_size=N) (optionally
 * prefixed tf.train.experimental.). Strings stay owned by o until
 * gn_save_options_clear. GN_ERR_ARG with a message in err on a bad text, an
 * unknown key or a value of the wrong kind, naming the byte offset of the key
 * or value ("save options: at offset 1: unknown SaveOptions field 'x'");
 * GN_ERR_NOMEM when out of memory. */
GN_API gn_status gn_save_options_parse(gn_save_options *o, const char *text, char *err, size_t errlen);
/* Frees what gn_save_options_parse allocated and re-initialises o. */
GN_API void gn_save_options_clear(gn_save_options *o);
/* Every field as Python dict text in the order of SaveOptions' signature
 * (heap string: gn_free). NULL on OOM. */
GN_API char *gn_save_options_to_string(const gn_save_options *o);

/* What to save besides the options. */
typedef struct gn_save_params {
    uint32_t struct_size;
    /* For a GraphDef input: the serving signature's inputs and outputs as
     * tensor names ("x", "x:0", "node:1"). Keys are the node names with '/'
     * replaced by '_' and ":k" (k > 0) appended as "_k", unless the name
     * is given as "KEY=tensor" ("x=serving_default_x:0"); a sparse (COO)
     * argument is its three tensors, "KEY=values,indices,dense_shape". No feeds: every
     * Placeholder. A SavedModel input keeps its signatures; feeds/fetches
     * given for it replace signature_key's signature. */
    size_t n_feeds;
    const char *const *feeds;
    size_t n_fetches;
    const char *const *fetches;
    const char *signature_key;   /* NULL: "serving_default" */
    const char *tags;            /* comma-separated; NULL: the loaded ones, else "serve" */
    /* With experimental_image_format: the proto splitter's maximum size in
     * bytes (TensorFlow's proto_splitter debug_set_max_size); 0 = TensorFlow's
     * 1 GiB. A SavedModel at least this big is written as the chunked
     * saved_model.cpb; a smaller value splits small models (tests). */
    int64_t chunk_max_size;
} gn_save_params;

GN_API void gn_save_params_init(gn_save_params *p);

/* Writes g as a SavedModel into dir. o and p may be NULL (defaults).
 * Errors (g's message): GN_ERR_ARG for a namespace refusal, an alias naming
 * a missing function, a fetch naming a missing tensor, a GraphDef without
 * fetches; GN_ERR_IO for a directory that cannot be written (or exists and is
 * not empty) and for missing assets or variables; GN_ERR_UNSUPPORTED for a
 * SavedModel proto past protobuf's 2 GiB limit without
 * experimental_image_format, for a MaxShardSizePolicy whose maximum no slice
 * of a tensor fits (TensorFlow's policy never finishes there), and for a
 * chunked image TensorFlow's splitter could not make either (a node over the
 * maximum that is not a Const). */
GN_API gn_status gn_savedmodel_save(gn_graph *g, const char *dir, const gn_save_options *o,
                                    const gn_save_params *p);

#ifdef __cplusplus
}
#endif
#endif
