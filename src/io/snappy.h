/* Snappy block decompression (private), for the compressed blocks of a
 * tensor bundle's `.index` table (LevelDB's kSnappyCompression).
 *
 * The format (Snappy's format_description.txt): the uncompressed length as a
 * varint of at most 5 bytes (32 bits), then elements, each a tag byte whose low
 * two bits give its kind: a literal (its length in the tag's upper six bits,
 * or in the 1-4 little-endian bytes after it), or a copy of bytes already
 * written (length and offset in the tag and 1, 2 or 4 bytes after it). A copy
 * may overlap what it writes, a byte at a time.
 *
 * Written here rather than linked, so that the library does not load Snappy's
 * C++ runtime into every process for a block kind few checkpoints use. */
#ifndef GN_IO_SNAPPY_H
#define GN_IO_SNAPPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The uncompressed length the block states; false when its varint is cut
 * short or longer than 32 bits. */
bool gn__snappy_length(const uint8_t *in, size_t n, size_t *ulen);

/* Decodes the block in[0..n) into out, which holds exactly the stated
 * length ulen (from gn__snappy_length). False when the block is corrupt: an
 * element cut short, a copy reaching before the start (or offset 0), more or
 * fewer bytes than stated. Never reads or writes outside in[0..n) and
 * out[0..ulen). */
bool gn__snappy_decode(const uint8_t *in, size_t n, uint8_t *out, size_t ulen);

#endif
