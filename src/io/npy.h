/* NumPy .npy reading and writing (private side; the public calls are
 * gn_npy_* in include/grapnel/runtime.h). */
#ifndef GN_IO_NPY_H
#define GN_IO_NPY_H

#include "common/common.h"
#include "grapnel/runtime.h"

/* Parses a whole .npy image into an owned tensor; messages start with name. */
gn_status gn__npy_parse(const uint8_t *data, size_t size, const char *name, gn_tensor *out, gn__err *err);
/* Encodes t (heap; caller frees). */
gn_status gn__npy_encode(const gn_tensor *t, uint8_t **data, size_t *size, gn__err *err);
/* The .npy descr of each dtype is a column of src/opdef/dtypes.def
 * (gn__dtype_npy_descr, gn__dtype_from_npy in opdef/dtype.h). */

#endif
