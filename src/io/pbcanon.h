/* Deterministic protobuf serialization (private): what TensorFlow's C++
 * SerializeToString(deterministic) gives, so fingerprint.pb's
 * saved_model_checksum is TensorFlow's (docs/reference_formats.md §B9). */
#ifndef GN_IO_PBCANON_H
#define GN_IO_PBCANON_H

#include "common/common.h"

/* Packs m into a heap buffer (*out, caller frees): maps in key order, map
 * entries with key and value always present. m itself is not changed. */
gn_status gn__pack_deterministic(const ProtobufCMessage *m, uint8_t **out, size_t *len, gn__err *err);

#endif
