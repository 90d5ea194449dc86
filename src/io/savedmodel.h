/* SavedModel state attached to a graph loaded from a SavedModel (private).
 *
 * gn_graph_load on a SavedModel directory (or a saved_model.pb[txt] named
 * directly) keeps the decoded SavedModel message and the chosen MetaGraphDef
 * here, shared by reference between a graph and its clones. Everything the
 * MetaGraphDef holds besides graph_def (signature_def, saver_def,
 * object_graph_def, asset_file_def, meta_info_def, collection_def) is read from
 * mg; the graph itself is the IR. Immutable once attached, but for the
 * variables' index, opened once on first use and then shared.
 *
 * Readers: signatures, variables, assets (src/io/savedmodel.c); freezing
 * (src/convert/freeze.c).
 * Writers (src/io/savedmodel_write.c): gn_savedmodel_save and SaveOptions. */
#ifndef GN_IO_SAVEDMODEL_H
#define GN_IO_SAVEDMODEL_H

#include "graph/ir.h"
#include "io/bundle.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

typedef struct gn__savedmodel {
    _Atomic uint32_t refs;                   /* clones in other threads share it: counted atomically */
    gn__blob *blob;                          /* owns sm and everything it points to */
    const Tensorflow__SavedModel *sm;
    const Tensorflow__MetaGraphDef *mg;      /* the MetaGraphDef chosen by tag */
    char *dir;                               /* the SavedModel directory (no trailing '/');
                                                NULL when loaded from a buffer */
    _Atomic(struct gn__bundle *) index;      /* the variables' bundle, opened on first use by
                                                the index queries (gn__savedmodel_index) and
                                                closed with the last reference; only its
                                                index is read through it */
} gn__savedmodel;

/* Takes a reference on blob; dir is copied (may be NULL). NULL on OOM. */
gn__savedmodel *gn__savedmodel_new(gn__blob *blob, const Tensorflow__SavedModel *sm,
                                   const Tensorflow__MetaGraphDef *mg, const char *dir);
gn__savedmodel *gn__savedmodel_ref(gn__savedmodel *s);
void gn__savedmodel_unref(gn__savedmodel *s);   /* NULL is a no-op */
/* Closes the cached bundle (gn__savedmodel_unref calls it). */
void gn__savedmodel_drop_index(gn__savedmodel *s);

/* The SavedModel g was loaded from (its `saved` attachment), NULL when none. */
static inline gn__savedmodel *gn__graph_saved(const gn_graph *g) { return (gn__savedmodel *)g->saved.ptr; }
/* Hangs s on g, which takes over the reference given (a clone takes one of
 * its own), dropping the one g had. */
void gn__graph_set_saved(gn_graph *g, gn__savedmodel *s);

/* ---- signatures and variables (the readers: savedmodel.c, and freezing,
 * src/convert/freeze.c) ---- */
/* The signature named sig of g's MetaGraphDef; NULL when none (or no SavedModel). */
const Tensorflow__SignatureDef *gn__savedmodel_signature(const gn_graph *g, const char *sig);
/* Input (outputs = 0) or output k of s in key order; *key gets its key. */
const Tensorflow__TensorInfo *gn__savedmodel_sig_arg(const Tensorflow__SignatureDef *s, int32_t outputs, size_t k,
                                                     const char **key);
/* The tensor a TensorInfo names ("" for a composite one; the values tensor of a sparse one). */
const char *gn__savedmodel_tensor_name(const Tensorflow__TensorInfo *ti);
/* "a, b, c" (heap; caller frees). */
char *gn__savedmodel_signature_list(const gn_graph *g);
/* "<dir>/variables/variables" (heap), NULL without a directory. */
char *gn__savedmodel_bundle_prefix(const gn__savedmodel *s);
bool gn__savedmodel_has_variables(const gn__savedmodel *s);
/* Opens the variables bundle; *out stays NULL when the SavedModel has none. */
gn_status gn__savedmodel_open_bundle(gn_graph *g, gn__bundle **out);

#endif
