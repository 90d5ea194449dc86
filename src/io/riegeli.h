/* Riegeli/records files (private): the container of saved_model.cpb
 * (github.com/google/riegeli, doc/riegeli_records_file_format.md;
 * docs/reference_formats.md §B8).
 *
 * A file is a sequence of chunks, each a 40-byte header (HighwayHash-64 of
 * the rest of the header, data size, data hash, chunk type and record count,
 * decoded size) then data then padding; a 24-byte block header (hash,
 * distance back to the start of the chunk it interrupts, distance on to its
 * end) sits at every multiple of 64 KiB. The first chunk is the file
 * signature ('s'). A record is addressed by its numeric position: the
 * chunk's start plus the record's index in it.
 *
 * The writer emits one simple chunk ('r', uncompressed) per record, which
 * every Riegeli reader accepts. The reader takes simple uncompressed chunks,
 * signature and padding chunks, checks every hash, and refuses compressed or
 * transposed chunks (what Riegeli's own writer makes by default) by name. */
#ifndef GN_IO_RIEGELI_H
#define GN_IO_RIEGELI_H

#include <stdio.h>

#include "common/common.h"

#define GN__RIEGELI_BLOCK 65536u

typedef struct gn__riegeli_writer {
    FILE *f;
    const char *name;   /* for messages */
    uint64_t pos;       /* file position */
} gn__riegeli_writer;

/* Starts a file on f (at offset 0): writes the signature chunk. */
gn_status gn__riegeli_writer_start(gn__riegeli_writer *w, FILE *f, const char *name, gn__err *err);
/* Appends one record (the concatenation of n_parts pieces); *numeric_pos gets its position. */
gn_status gn__riegeli_write_record(gn__riegeli_writer *w, size_t n_parts, const void *const *parts,
                                   const size_t *lens, uint64_t *numeric_pos, gn__err *err);

typedef struct gn__riegeli_record {
    uint64_t pos;           /* numeric position */
    const uint8_t *data;    /* owned by the array (gn__riegeli_records_free) */
    size_t len;
} gn__riegeli_record;

/* Parses a whole file held in memory (data, size); *recs gets the records in
 * order (free with gn__riegeli_records_free). Errors name the file and the
 * byte offset. */
gn_status gn__riegeli_read(const uint8_t *data, size_t size, const char *name, gn__riegeli_record **recs,
                           size_t *n_recs, gn__err *err);

void gn__riegeli_records_free(gn__riegeli_record *recs, size_t n);

#endif
