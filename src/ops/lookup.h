/* Lookup tables (private): the CPU kernels of HashTableV2 and the ops that
 * initialize and read it (src/ops/kernels/lookup.c), and the text-file reader
 * of InitializeTableFromTextFileV2, which SavedModel freezing also uses to
 * turn a table's asset file into constants (src/convert/freeze.c). */
#ifndef GN_OPS_LOOKUP_H
#define GN_OPS_LOOKUP_H

#include "ops/kernel.h"

/* TensorFlow's text-file initializer (core/kernels/lookup_util.cc): one
 * entry per line ('\n' ends a line, a trailing '\r' is dropped, a last line
 * without '\n' counts); key_index / value_index: -2 the whole line, -1 the
 * line number plus offset (int64 only), k >= 0 the k-th field of the line
 * split at every delim. Fields become key_dtype / value_dtype (string,
 * int32 (plus offset, as TensorFlow does), int64, float, double). vocab_size
 * -1 reads every line; otherwise exactly that many (the rest is ignored; a
 * shorter file is an error). An empty line is an error. keys and values get
 * 1-D tensors of n entries (owned: release them). Errors name the file and
 * the line (0-based, as TensorFlow counts). */
gn_status gn__table_read_text_file(const char *path, int32_t key_dtype, int32_t value_dtype, int64_t key_index,
                                   int64_t value_index, int64_t vocab_size, char delim, int64_t offset,
                                   gn__tensor *keys, gn__tensor *values, gn__err *err);

#endif
