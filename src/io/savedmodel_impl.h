/* Helpers shared by the SavedModel readers (src/io/savedmodel.c, freeze.c). Private. */
#ifndef GN_IO_SAVEDMODEL_IMPL_H
#define GN_IO_SAVEDMODEL_IMPL_H

#include "io/bundle.h"
#include "io/savedmodel.h"

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
