/* SavedModel reading: signatures, variables, assets, and freezing a signature
 * into a self-contained inference graph.
 *
 * These calls apply to a graph loaded from a SavedModel directory (or a
 * saved_model.pb[txt]); on a plain GraphDef the counts are 0 and freezing
 * fails with GN_ERR_ARG. */
#ifndef GRAPNEL_SAVEDMODEL_H
#define GRAPNEL_SAVEDMODEL_H

#include "grapnel/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tags of the chosen MetaGraphDef, comma-separated ("serve"); "" for a GraphDef. */
GN_API const char *gn_graph_tags(const gn_graph *g);

/* ---- signatures (sorted by key) ---------------------------------------------- */
GN_API size_t gn_graph_signature_count(const gn_graph *g);
GN_API const char *gn_graph_signature_key(const gn_graph *g, size_t i);
/* The signature a NULL sig means (freezing, `grapnel run`): "serving_default"
 * when there is one, else the only signature besides "__saved_model_init_op",
 * else "serving_default" (which then is not found). */
GN_API const char *gn_graph_default_signature(const gn_graph *g);
/* The method name ("tensorflow/serving/predict"); NULL when sig is not a signature. */
GN_API const char *gn_graph_signature_method(const gn_graph *g, const char *sig);

/* One input or output of a signature. */
typedef struct gn_signature_arg {
    const char *key;          /* the signature's key for it ("x") */
    const char *tensor;       /* the graph tensor ("serving_default_x:0") */
    int32_t dtype;            /* DataType number */
    int32_t rank;             /* -1 when unknown */
    int64_t dims[8];          /* -1 for an unknown dim */
} gn_signature_arg;

/* Inputs (outputs = 0) or outputs (outputs = 1) of signature sig, sorted by key.
 * Strings are borrowed from g. GN_ERR_NOT_FOUND when sig is not a signature. */
GN_API gn_status gn_graph_signature_args(const gn_graph *g, const char *sig, int32_t outputs, size_t *count);
GN_API gn_status gn_graph_signature_arg(const gn_graph *g, const char *sig, int32_t outputs, size_t k,
                                        gn_signature_arg *out);
/* A sparse (COO) argument's other two tensors (its gn_signature_arg.tensor is
 * the values tensor): *indices and *dense_shape, borrowed from g; both NULL for
 * a dense argument. */
GN_API gn_status gn_graph_signature_arg_sparse(const gn_graph *g, const char *sig, int32_t outputs, size_t k,
                                               const char **indices, const char **dense_shape);

/* ---- variables (the SavedModel's variables/ tensor bundle) ------------------ */
typedef struct gn_variable_info {
    const char *name;         /* checkpoint key ("dense/kernel/.ATTRIBUTES/VARIABLE_VALUE") */
    int32_t dtype;
    int32_t rank;
    int64_t dims[8];
    uint64_t bytes;           /* size in the data file */
} gn_variable_info;

/* Reads the bundle's index (not the data) on first use. A SavedModel without
 * variables has 0. Errors name the file and key. */
GN_API gn_status gn_graph_variable_count(gn_graph *g, size_t *count);
GN_API gn_status gn_graph_variable(gn_graph *g, size_t i, gn_variable_info *out);

/* ---- assets ------------------------------------------------------------------- */
/* From asset_file_def, or for TF1 SavedModels the "saved_model_assets" collection. */
GN_API size_t gn_graph_asset_count(const gn_graph *g);
/* The asset's file name inside assets/ and the tensor that receives its path. */
GN_API const char *gn_graph_asset_filename(const gn_graph *g, size_t i);
GN_API const char *gn_graph_asset_tensor(const gn_graph *g, size_t i);

/* ---- freezing ------------------------------------------------------------------ */
/* Builds the frozen inference graph of signature sig (NULL: the default
 * signature, gn_graph_default_signature): function calls inlined, variables replaced by
 * Const nodes holding their checkpoint values, ReadVariableOp by Identity,
 * resource gathers by gathers, restore/save and initializer nodes dropped,
 * pruned to what the signature's outputs need. The result is a plain graph
 * (owned: gn_graph_free) whose feeds and fetches are the signature's tensor
 * names (gn_graph_signature_arg). On failure *out is an error handle (or NULL
 * on OOM) and g's message says what could not be frozen, naming the node. */
GN_API gn_status gn_graph_freeze(gn_graph *g, const char *sig, gn_graph **out);

#ifdef __cplusplus
}
#endif
#endif
