/* The chunked SavedModel image, saved_model.cpb (private; src/io/savedmodel_chunked.c). */
#ifndef GN_IO_SAVEDMODEL_CHUNKED_H
#define GN_IO_SAVEDMODEL_CHUNKED_H

#include "common/common.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

/* TensorFlow's proto splitter maximum (constants.max_size()): 1 GiB. */
#define GN__CPB_MAX_SIZE ((int64_t)1 << 30)

/* When sm is at least max_size bytes, splits it as TensorFlow's
 * SavedModelSplitter and writes path (…/saved_model.cpb); *chunked tells
 * whether it did (else the caller writes saved_model.pb), *checksum gets
 * TensorFlow's saved_model_checksum of the file. Temporary copies come from a.
 * durable: the file is fsynced before it is closed (gn_graph_set_fsync). */
gn_status gn__savedmodel_write_chunked(const Tensorflow__SavedModel *sm, const char *path, int64_t max_size,
                                       bool durable, gn__arena *a, bool *chunked, uint64_t *checksum, gn__err *err);

/* Reads a saved_model.cpb and merges its chunks: *out (heap) gets the
 * serialized SavedModel. Files of simple uncompressed Riegeli chunks only. */
gn_status gn__savedmodel_read_chunked(const char *path, uint8_t **out, size_t *len, gn__err *err);

#endif
