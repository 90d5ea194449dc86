/* Tensor bundles (private): TensorFlow's checkpoint format, the
 * `variables/variables.index` + `variables.data-NNNNN-of-NNNNN` pair of a
 * SavedModel (docs/reference_formats.md §B3-§B5;
 * tensorflow/core/util/tensor_bundle/tensor_bundle.cc,
 * tensorflow/core/lib/io/table*.cc, format.cc, block*.cc).
 *
 * Reading: the index is a LevelDB-style sorted string table (blocks of
 * prefix-compressed keys with restart points, an index block, a 48-byte
 * footer ending in the table magic). Blocks may be Snappy-compressed; every
 * block's masked CRC-32C is checked, and so is every tensor's. The empty key
 * holds the BundleHeaderProto; every other key a BundleEntryProto (dtype,
 * shape, shard_id, offset, size, crc32c, slices). Entries with slices are
 * assembled from their slice entries; string tensors are decoded from
 * TensorFlow's varint-length layout.
 *
 * Writing: uncompressed blocks, as TensorFlow's writer, one data shard (or
 * several, as a sharded save leaves them), keys in sorted order, written atomically (temporary files then rename; a failure
 * leaves nothing behind).
 *
 * Errors name the file and the key: "variables.index: block at byte 1234:
 * checksum mismatch", "variables.data-00000-of-00001: key 'dense/kernel': 128
 * bytes at offset 4096 run past the end of the file (2048 bytes)". */
#ifndef GN_IO_BUNDLE_H
#define GN_IO_BUNDLE_H

#include "common/common.h"
#include "common/crc32c.h"
#include "ops/kernel.h"
#include "tensorflow/core/protobuf/tensor_bundle.pb-c.h"

typedef struct gn__bundle gn__bundle;

/* Opens the bundle whose files are `<prefix>.index` and `<prefix>.data-*`
 * (prefix ".../variables/variables"). Reads and checks the whole index; the
 * data shards are opened lazily. */
gn_status gn__bundle_open(const char *prefix, gn__bundle **out, gn__err *err);
void gn__bundle_close(gn__bundle *b);   /* NULL is a no-op */

/* Keys in sorted order, the header's empty key excluded, and so are the
 * per-slice keys of partitioned tensors (gn__bundle_slice_key; any key holding
 * a NUL byte): a partitioned tensor is listed once, under its own name, and
 * reads whole. Borrowed. */
size_t gn__bundle_count(const gn__bundle *b);
const char *gn__bundle_key(const gn__bundle *b, size_t i);
/* The entry of a key, NULL when absent. Borrowed (lives as long as b). */
const Tensorflow__BundleEntryProto *gn__bundle_entry(const gn__bundle *b, const char *key);
/* The header (num_shards, endianness, version). Borrowed. */
const Tensorflow__BundleHeaderProto *gn__bundle_header(const gn__bundle *b);

/* Reads the full tensor of key into out (a fresh buffer, released with
 * gn__tensor_release), checking the CRC-32C of the bytes read. Sliced entries
 * are assembled from their slices. GN_ERR_NOT_FOUND for a missing key,
 * GN_ERR_PARSE for corrupt data, GN_ERR_IO for a missing or short shard. */
gn_status gn__bundle_read(gn__bundle *b, const char *key, gn__tensor *out, gn__err *err);

/* ---- writing ------------------------------------------------------------------ */
typedef struct gn__bundle_writer gn__bundle_writer;

/* Starts a bundle at prefix; nothing appears at `<prefix>.*` before
 * gn__bundle_writer_finish succeeds. */
gn_status gn__bundle_writer_new(const char *prefix, gn__bundle_writer **out, gn__err *err);
/* Files written by finish are fsynced (gn_graph_set_fsync); off at first. */
void gn__bundle_writer_set_durable(gn__bundle_writer *w, bool durable);
/* Adds a tensor (copied). Keys may come in any order; a duplicate is an error. */
gn_status gn__bundle_writer_add(gn__bundle_writer *w, const char *key, const gn__tensor *t, gn__err *err);
/* Adds a slice of a larger tensor, as TensorFlow's sharded saves do: `full`
 * is the full tensor's shape, starts/lengths the slice (length -1: the whole
 * dimension), t the slice's values. */
gn_status gn__bundle_writer_add_slice(gn__bundle_writer *w, const char *key, int32_t rank, const int64_t *full,
                                      const int64_t *starts, const int64_t *lengths, const gn__tensor *t,
                                      gn__err *err);
/* Later adds go to data shard `shard` (0 at the start): the layout
 * MergeV2Checkpoints leaves after a sharded save, where shard ids are the data
 * files' numbers. A sliced tensor's full-tensor entry records the shard of its
 * first slice, as the merge does. */
gn_status gn__bundle_writer_set_shard(gn__bundle_writer *w, int32_t shard, gn__err *err);
/* The header's num_shards (default: the data shards used). A merge counts the
 * shards that held no tensor too, so it can exceed the data files written. */
gn_status gn__bundle_writer_set_num_shards(gn__bundle_writer *w, int32_t num_shards, gn__err *err);
/* Writes `<prefix>.index` and `<prefix>.data-NNNNN-of-MMMMM` (one per data
 * shard used; 00000-of-00001 by default) atomically and frees w (also on
 * failure, which leaves no file). */
gn_status gn__bundle_writer_finish(gn__bundle_writer *w, gn__err *err);
void gn__bundle_writer_abort(gn__bundle_writer *w);   /* frees w, writes nothing */

/* Adds tensors[0..n) (keys[i], in TensorFlow's save order) to w split into
 * data shards as TensorFlow's MaxShardSizePolicy(max_shard_size) and the
 * merge of its shards leave them (src/io/bundle_shard.c): tensors cut into
 * slices across shards, data files numbered in shard order, num_shards set. */
gn_status gn__bundle_write_max_shard(gn__bundle_writer *w, size_t n, const char *const *keys,
                                     const gn__tensor *tensors, int64_t max_shard_size, gn__err *err);

/* The key TensorFlow stores one slice of a partitioned tensor under
 * (checkpoint::EncodeTensorNameSlice): OrderedCode of the number 0, the name,
 * the rank, then each dimension's signed start and length, where a dimension
 * taken whole is start 0, length -1. Such keys start with a NUL byte, so they
 * never appear among gn__bundle_key's keys. Appends to out (check out->oom). */
void gn__bundle_slice_key(gn__buf *out, const char *name, size_t name_len, int32_t rank, const int64_t *starts,
                          const int64_t *lengths);

#endif
