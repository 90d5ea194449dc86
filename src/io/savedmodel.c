/* SavedModel reading: tags, signatures, variables and assets of the chosen
 * MetaGraphDef (include/grapnel/savedmodel.h). Freezing is in freeze.c. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/savedmodel.h"
#include "io/bundle.h"
#include "io/savedmodel.h"

const char *gn_graph_tags(const gn_graph *g)
{
    const gn__savedmodel *sm = g ? gn__graph_saved(g) : NULL;
    if (!sm || !sm->mg->meta_info_def) return "";
    const Tensorflow__MetaGraphDef__MetaInfoDef *mi = sm->mg->meta_info_def;
    if (mi->n_tags == 0) return "";
    if (mi->n_tags == 1) return mi->tags[0];
    /* several tags: joined, and interned in the graph's strings (deduplicated) */
    gn__buf b;
    gn__buf_init(&b);
    for (size_t i = 0; i < mi->n_tags; i++) {
        if (i) gn__buf_putc(&b, ',');
        gn__buf_puts(&b, mi->tags[i]);
    }
    char *joined = gn__buf_take(&b);
    if (!joined) return "";
    uint32_t id = gn__intern_cstr((gn_graph *)g, joined);
    free(joined);
    return id == UINT32_MAX ? "" : gn__str(g, id);
}

/* ---- signatures --------------------------------------------------------------- */
static const Tensorflow__MetaGraphDef *meta(const gn_graph *g)
{
    const gn__savedmodel *sm = g ? gn__graph_saved(g) : NULL;
    return sm ? sm->mg : NULL;
}

size_t gn_graph_signature_count(const gn_graph *g)
{
    const Tensorflow__MetaGraphDef *mg = meta(g);
    return mg ? mg->n_signature_def : 0;
}

/* The entry of rank i in key order. */
static const Tensorflow__MetaGraphDef__SignatureDefEntry *sig_sorted(const Tensorflow__MetaGraphDef *mg, size_t i)
{
    for (size_t a = 0; a < mg->n_signature_def; a++) {
        size_t rank = 0;
        for (size_t b = 0; b < mg->n_signature_def; b++)
            if (strcmp(mg->signature_def[b]->key, mg->signature_def[a]->key) < 0) rank++;
        if (rank == i) return mg->signature_def[a];
    }
    return NULL;
}

const char *gn_graph_signature_key(const gn_graph *g, size_t i)
{
    const Tensorflow__MetaGraphDef *mg = meta(g);
    if (!mg || i >= mg->n_signature_def) return NULL;
    const Tensorflow__MetaGraphDef__SignatureDefEntry *e = sig_sorted(mg, i);
    return e ? e->key : NULL;
}

const Tensorflow__SignatureDef *gn__savedmodel_signature(const gn_graph *g, const char *sig)
{
    const Tensorflow__MetaGraphDef *mg = meta(g);
    if (!mg || !sig) return NULL;
    for (size_t i = 0; i < mg->n_signature_def; i++)
        if (strcmp(mg->signature_def[i]->key, sig) == 0) return mg->signature_def[i]->value;
    return NULL;
}

const char *gn_graph_default_signature(const gn_graph *g)
{
    if (gn__savedmodel_signature(g, "serving_default")) return "serving_default";
    const char *only = NULL;
    size_t n = 0;
    for (size_t i = 0; i < gn_graph_signature_count(g); i++) {
        const char *k = gn_graph_signature_key(g, i);
        if (strcmp(k, "__saved_model_init_op") == 0) continue;
        only = k;
        n++;
    }
    return n == 1 ? only : "serving_default";
}

const char *gn_graph_signature_method(const gn_graph *g, const char *sig)
{
    const Tensorflow__SignatureDef *s = gn__savedmodel_signature(g, sig);
    return s ? (s->method_name ? s->method_name : "") : NULL;
}

char *gn__savedmodel_signature_list(const gn_graph *g)
{
    gn__buf b;
    gn__buf_init(&b);
    size_t n = gn_graph_signature_count(g);
    for (size_t i = 0; i < n; i++) {
        if (i) gn__buf_puts(&b, ", ");
        gn__buf_puts(&b, gn_graph_signature_key(g, i));
    }
    if (n == 0) gn__buf_puts(&b, "none");
    return gn__buf_take(&b);
}

static gn_status sig_not_found(gn_graph *g, const char *sig)
{
    char *list = gn__savedmodel_signature_list(g);
    gn_status s = gn__fail(&g->err, GN_ERR_NOT_FOUND, "no signature '%s' in the SavedModel (signatures: %s)",
                           sig ? sig : "(null)", list ? list : "?");
    free(list);
    return s;
}

/* Number of inputs or outputs and the entry of rank k (key order). */
static size_t sig_n(const Tensorflow__SignatureDef *s, int32_t outputs)
{
    return outputs ? s->n_outputs : s->n_inputs;
}
static const char *sig_key_at(const Tensorflow__SignatureDef *s, int32_t outputs, size_t j)
{
    return outputs ? s->outputs[j]->key : s->inputs[j]->key;
}
static const Tensorflow__TensorInfo *sig_val_at(const Tensorflow__SignatureDef *s, int32_t outputs, size_t j)
{
    return outputs ? s->outputs[j]->value : s->inputs[j]->value;
}

const Tensorflow__TensorInfo *gn__savedmodel_sig_arg(const Tensorflow__SignatureDef *s, int32_t outputs, size_t k,
                                                     const char **key)
{
    size_t n = sig_n(s, outputs);
    for (size_t a = 0; a < n; a++) {
        size_t rank = 0;
        for (size_t b = 0; b < n; b++)
            if (strcmp(sig_key_at(s, outputs, b), sig_key_at(s, outputs, a)) < 0) rank++;
        if (rank == k) {
            if (key) *key = sig_key_at(s, outputs, a);
            return sig_val_at(s, outputs, a);
        }
    }
    return NULL;
}

const char *gn__savedmodel_tensor_name(const Tensorflow__TensorInfo *ti)
{
    if (!ti) return "";
    switch (ti->encoding_case) {
    case TENSORFLOW__TENSOR_INFO__ENCODING_NAME: return ti->name ? ti->name : "";
    case TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE:
        return ti->coo_sparse && ti->coo_sparse->values_tensor_name ? ti->coo_sparse->values_tensor_name : "";
    default: return "";
    }
}

gn_status gn_graph_signature_args(const gn_graph *g, const char *sig, int32_t outputs, size_t *count)
{
    *count = 0;
    const Tensorflow__SignatureDef *s = gn__savedmodel_signature(g, sig);
    if (!s) return g ? sig_not_found((gn_graph *)g, sig) : GN_ERR_ARG;
    *count = sig_n(s, outputs);
    return GN_OK;
}

/* The k-th input (outputs 0) or output of signature SIG, and its key. */
static gn_status sig_arg_info(const gn_graph *g, const char *sig, int32_t outputs, size_t k,
                              const Tensorflow__TensorInfo **ti, const char **key)
{
    const Tensorflow__SignatureDef *s = gn__savedmodel_signature(g, sig);
    if (!s) return g ? sig_not_found((gn_graph *)g, sig) : GN_ERR_ARG;
    *ti = gn__savedmodel_sig_arg(s, outputs, k, key);
    if (!*ti)
        return gn__fail(&((gn_graph *)g)->err, GN_ERR_ARG, "signature '%s': %s %zu out of range (%zu)", sig,
                        outputs ? "output" : "input", k, sig_n(s, outputs));
    return GN_OK;
}

gn_status gn_graph_signature_arg(const gn_graph *g, const char *sig, int32_t outputs, size_t k,
                                 gn_signature_arg *out)
{
    memset(out, 0, sizeof *out);
    const char *key = NULL;
    const Tensorflow__TensorInfo *ti = NULL;
    GN_TRY(sig_arg_info(g, sig, outputs, k, &ti, &key));
    out->key = key;
    out->tensor = gn__savedmodel_tensor_name(ti);
    out->dtype = (int32_t)ti->dtype;
    out->rank = -1;
    const Tensorflow__TensorShapeProto *sh = ti->tensor_shape;
    if (sh && !sh->unknown_rank && sh->n_dim <= 8) {
        out->rank = (int32_t)sh->n_dim;
        for (size_t d = 0; d < sh->n_dim; d++) out->dims[d] = sh->dim[d]->size;
    }
    return GN_OK;
}

gn_status gn_graph_signature_arg_sparse(const gn_graph *g, const char *sig, int32_t outputs, size_t k,
                                        const char **indices, const char **dense_shape)
{
    *indices = *dense_shape = NULL;
    const char *key = NULL;
    const Tensorflow__TensorInfo *ti = NULL;
    GN_TRY(sig_arg_info(g, sig, outputs, k, &ti, &key));
    if (ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE && ti->coo_sparse) {
        *indices = ti->coo_sparse->indices_tensor_name ? ti->coo_sparse->indices_tensor_name : "";
        *dense_shape = ti->coo_sparse->dense_shape_tensor_name ? ti->coo_sparse->dense_shape_tensor_name : "";
    }
    return GN_OK;
}

/* ---- variables ------------------------------------------------------------------ */
char *gn__savedmodel_bundle_prefix(const gn__savedmodel *s)
{
    if (!s->dir) return NULL;
    size_t n = strlen(s->dir) + 32;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/variables/variables", s->dir);
    return p;
}

bool gn__savedmodel_has_variables(const gn__savedmodel *s)
{
    if (!s->dir) return false;
    /* no allocation for a path of ordinary length: an allocation failing here
     * must not pass for "no variables" */
    char buf[4096];
    size_t n = strlen(s->dir) + sizeof "/variables/variables.index";
    char *f = n <= sizeof buf ? buf : malloc(n);
    if (!f) return true;   /* let the open that follows report the failure */
    snprintf(f, n, "%s/variables/variables.index", s->dir);
    FILE *h = fopen(f, "rb");
    bool ok = h != NULL;
    if (h) fclose(h);
    if (f != buf) free(f);
    return ok;
}

gn_status gn__savedmodel_open_bundle(gn_graph *g, gn__bundle **out)
{
    *out = NULL;
    if (!gn__graph_saved(g) || !gn__savedmodel_has_variables(gn__graph_saved(g))) return GN_OK;
    char *p = gn__savedmodel_bundle_prefix(gn__graph_saved(g));
    if (!p) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    gn_status s = gn__bundle_open(p, out, &g->err);
    free(p);
    return s;
}

/* Variables are the bundle's keys, less the object graph TensorFlow keeps there. */
static bool listed_key(const char *k)
{
    return strcmp(k, "_CHECKPOINTABLE_OBJECT_GRAPH") != 0;
}

void gn__savedmodel_drop_index(gn__savedmodel *s)
{
    if (s) gn__bundle_close(atomic_exchange(&s->index, NULL));
}

/* The variables' bundle of g, opened once per loaded SavedModel (shared by
 * its clones) and kept: the index queries read only its index. *out stays
 * NULL without variables. */
static gn_status cached_index(gn_graph *g, gn__bundle **out)
{
    *out = NULL;
    if (!gn__graph_saved(g)) return GN_OK;
    gn__bundle *b = atomic_load(&gn__graph_saved(g)->index);
    if (!b) {
        GN_TRY(gn__savedmodel_open_bundle(g, &b));
        if (!b) return GN_OK;
        gn__bundle *expected = NULL;
        if (!atomic_compare_exchange_strong(&gn__graph_saved(g)->index, &expected, b)) {
            gn__bundle_close(b);   /* another thread opened it first */
            b = expected;
        }
    }
    *out = b;
    return GN_OK;
}

gn_status gn_graph_variable_count(gn_graph *g, size_t *count)
{
    *count = 0;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    gn__bundle *b = NULL;
    GN_TRY(cached_index(g, &b));
    if (!b) return GN_OK;
    size_t n = 0;
    for (size_t i = 0; i < gn__bundle_count(b); i++)
        if (listed_key(gn__bundle_key(b, i))) n++;
    *count = n;
    return GN_OK;
}

gn_status gn_graph_variable(gn_graph *g, size_t i, gn_variable_info *out)
{
    memset(out, 0, sizeof *out);
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    gn__bundle *b = NULL;
    GN_TRY(cached_index(g, &b));
    if (!b) return gn__fail(&g->err, GN_ERR_ARG, "variable %zu: the graph has no variables", i);
    size_t n = 0;
    gn_status s = GN_OK;
    const char *key = NULL;
    for (size_t k = 0; k < gn__bundle_count(b) && !key; k++) {
        const char *kk = gn__bundle_key(b, k);
        if (listed_key(kk) && n++ == i) key = kk;
    }
    if (!key) {
        s = gn__fail(&g->err, GN_ERR_ARG, "variable %zu out of range (%zu)", i, n);
    } else {
        const Tensorflow__BundleEntryProto *e = gn__bundle_entry(b, key);
        uint32_t id = gn__intern_cstr(g, key);   /* borrowed from the graph's strings */
        if (id == UINT32_MAX) {
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        } else {
            out->name = gn__str(g, id);
            out->dtype = e ? (int32_t)e->dtype : 0;
            out->rank = -1;
            if (e && e->shape && !e->shape->unknown_rank && e->shape->n_dim <= 8) {
                out->rank = (int32_t)e->shape->n_dim;
                for (size_t d = 0; d < e->shape->n_dim; d++) out->dims[d] = e->shape->dim[d]->size;
            }
            out->bytes = e ? (uint64_t)e->size : 0;
        }
    }
    return s;
}

/* ---- assets --------------------------------------------------------------------- */
/* TF1 SavedModels list their assets in the "saved_model_assets" collection, as
 * Any-packed AssetFileDefs. */
static const Tensorflow__CollectionDef__AnyList *asset_collection(const Tensorflow__MetaGraphDef *mg)
{
    for (size_t i = 0; i < mg->n_collection_def; i++) {
        const Tensorflow__MetaGraphDef__CollectionDefEntry *e = mg->collection_def[i];
        if (strcmp(e->key, "saved_model_assets") == 0 && e->value &&
            e->value->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST)
            return e->value->any_list;
    }
    return NULL;
}

size_t gn_graph_asset_count(const gn_graph *g)
{
    const Tensorflow__MetaGraphDef *mg = meta(g);
    if (!mg) return 0;
    if (mg->n_asset_file_def) return mg->n_asset_file_def;
    const Tensorflow__CollectionDef__AnyList *l = asset_collection(mg);
    return l ? l->n_value : 0;
}

/* Field `which` (0 filename, 1 tensor) of asset i; strings of a collection
 * entry are interned in g. */
static const char *asset_field(const gn_graph *g, size_t i, int which)
{
    const Tensorflow__MetaGraphDef *mg = meta(g);
    if (!mg || i >= gn_graph_asset_count(g)) return NULL;
    if (mg->n_asset_file_def) {
        const Tensorflow__AssetFileDef *a = mg->asset_file_def[i];
        return which == 0 ? (a->filename ? a->filename : "") : gn__savedmodel_tensor_name(a->tensor_info);
    }
    const Google__Protobuf__Any *any = asset_collection(mg)->value[i];
    Tensorflow__AssetFileDef *a = tensorflow__asset_file_def__unpack(NULL, any->value.len, any->value.data);
    if (!a) return "";
    const char *v = which == 0 ? (a->filename ? a->filename : "") : gn__savedmodel_tensor_name(a->tensor_info);
    uint32_t id = gn__intern_cstr((gn_graph *)g, v);
    tensorflow__asset_file_def__free_unpacked(a, NULL);
    return id == UINT32_MAX ? "" : gn__str(g, id);
}

const char *gn_graph_asset_filename(const gn_graph *g, size_t i)
{
    return asset_field(g, i, 0);
}

const char *gn_graph_asset_tensor(const gn_graph *g, size_t i)
{
    return asset_field(g, i, 1);
}
