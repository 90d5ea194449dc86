/* Riegeli/records writer and reader (src/io/riegeli.h). */
#include "io/riegeli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/highwayhash.h"

#define BLOCK_HEADER 24u
#define USABLE_BLOCK (GN__RIEGELI_BLOCK - BLOCK_HEADER)
#define CHUNK_HEADER 40u

enum { CHUNK_SIGNATURE = 's', CHUNK_METADATA = 'm', CHUNK_PADDING = 'p', CHUNK_SIMPLE = 'r', CHUNK_TRANSPOSED = 't' };

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* The format's position arithmetic (riegeli_records_file_format.md, "Implementation notes"). */
static uint64_t add_with_overhead(uint64_t pos, uint64_t size)
{
    uint64_t blocks = (size + (pos + USABLE_BLOCK - 1) % GN__RIEGELI_BLOCK) / USABLE_BLOCK;
    return pos + size + blocks * BLOCK_HEADER;
}

static uint64_t round_up_to_boundary(uint64_t pos)
{
    uint64_t remaining = (GN__RIEGELI_BLOCK - pos % GN__RIEGELI_BLOCK) % GN__RIEGELI_BLOCK;
    return pos + (remaining > USABLE_BLOCK - 1 ? remaining - (USABLE_BLOCK - 1) : 0);
}

static uint64_t chunk_end(uint64_t begin, uint64_t data_size, uint64_t num_records)
{
    uint64_t a = add_with_overhead(begin, CHUNK_HEADER + data_size), b = round_up_to_boundary(begin + num_records);
    return a > b ? a : b;
}

/* ---- writing ---------------------------------------------------------------------- */
/* Writes n bytes (zeros when p is NULL) of the chunk [begin, end), with the
 * block headers that fall inside. */
static gn_status emit(gn__riegeli_writer *w, const uint8_t *p, uint64_t n, uint64_t begin, uint64_t end, gn__err *err)
{
    static const uint8_t zeros[4096];
    while (n) {
        if (w->pos % GN__RIEGELI_BLOCK == 0) {
            uint8_t h[BLOCK_HEADER];
            put64(h + 8, w->pos - begin);
            put64(h + 16, end - w->pos);
            put64(h, gn__highwayhash64(gn__riegeli_hash_key, h + 8, 16));
            if (fwrite(h, 1, sizeof h, w->f) != sizeof h)
                return gn__fail(err, GN_ERR_IO, "%s: write failed at byte %llu: %s", w->name,
                                (unsigned long long)w->pos, strerror(errno));
            w->pos += BLOCK_HEADER;
        }
        uint64_t room = GN__RIEGELI_BLOCK - w->pos % GN__RIEGELI_BLOCK;
        size_t take = (size_t)(n < room ? n : room);
        if (!p && take > sizeof zeros) take = sizeof zeros;
        if (fwrite(p ? p : zeros, 1, take, w->f) != take)
            return gn__fail(err, GN_ERR_IO, "%s: write failed at byte %llu: %s", w->name,
                            (unsigned long long)w->pos, strerror(errno));
        w->pos += take;
        if (p) p += take;
        n -= take;
    }
    return GN_OK;
}

static gn_status write_chunk(gn__riegeli_writer *w, uint8_t type, uint64_t num_records, uint64_t decoded,
                             size_t n_parts, const void *const *parts, const size_t *lens, gn__err *err)
{
    uint64_t begin = w->pos, data_size = 0;
    gn__hh hh;
    gn__hh_start(&hh, gn__riegeli_hash_key);
    for (size_t i = 0; i < n_parts; i++) {
        data_size += lens[i];
        gn__hh_append(&hh, parts[i], lens[i]);
    }
    uint64_t end = chunk_end(begin, data_size, num_records);
    uint8_t h[CHUNK_HEADER];
    put64(h + 8, data_size);
    put64(h + 16, gn__hh_finish64(&hh));
    put64(h + 24, (uint64_t)type | num_records << 8);
    put64(h + 32, decoded);
    put64(h, gn__highwayhash64(gn__riegeli_hash_key, h + 8, 32));
    GN_TRY(emit(w, h, CHUNK_HEADER, begin, end, err));
    for (size_t i = 0; i < n_parts; i++) GN_TRY(emit(w, parts[i], lens[i], begin, end, err));
    if (w->pos < end) GN_TRY(emit(w, NULL, end - w->pos, begin, end, err));
    return GN_OK;
}

gn_status gn__riegeli_writer_start(gn__riegeli_writer *w, FILE *f, const char *name, gn__err *err)
{
    w->f = f;
    w->name = name;
    w->pos = 0;
    return write_chunk(w, CHUNK_SIGNATURE, 0, 0, 0, NULL, NULL, err);
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

gn_status gn__riegeli_write_record(gn__riegeli_writer *w, size_t n_parts, const void *const *parts,
                                   const size_t *lens, uint64_t *numeric_pos, gn__err *err)
{
    uint64_t size = 0;
    for (size_t i = 0; i < n_parts; i++) size += lens[i];
    /* compression_type 0, compressed_sizes_size, the sizes (one varint), the values */
    uint8_t head[1 + 10 + 10];
    uint8_t sz[10];
    size_t nsz = put_varint(sz, size);
    head[0] = 0;
    size_t nh = 1 + put_varint(head + 1, nsz);
    memcpy(head + nh, sz, nsz);
    nh += nsz;
    const void **p = malloc((n_parts + 1) * sizeof *p);
    size_t *l = malloc((n_parts + 1) * sizeof *l);
    if (!p || !l) {
        free(p);
        free(l);
        return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", w->name);
    }
    p[0] = head;
    l[0] = nh;
    for (size_t i = 0; i < n_parts; i++) {
        p[i + 1] = parts[i];
        l[i + 1] = lens[i];
    }
    *numeric_pos = w->pos;
    gn_status st = write_chunk(w, CHUNK_SIMPLE, 1, size, n_parts + 1, p, l, err);
    free(p);
    free(l);
    return st;
}

/* ---- reading ---------------------------------------------------------------------- */
typedef struct rd {
    const uint8_t *d;
    size_t size;
    uint64_t pos;
    const char *name;
    gn__err *err;
} rd;

/* Reads n bytes of chunk contents at r->pos into out (NULL: skip), stepping
 * over (and checking) block headers. */
static gn_status rd_bytes(rd *r, uint8_t *out, uint64_t n)
{
    while (n) {
        if (r->pos % GN__RIEGELI_BLOCK == 0) {
            if (r->pos + BLOCK_HEADER > r->size)
                return gn__fail(r->err, GN_ERR_PARSE, "%s: truncated block header at byte %llu", r->name,
                                (unsigned long long)r->pos);
            const uint8_t *h = r->d + r->pos;
            if (get64(h) != gn__highwayhash64(gn__riegeli_hash_key, h + 8, 16))
                return gn__fail(r->err, GN_ERR_PARSE, "%s: block header at byte %llu: hash mismatch", r->name,
                                (unsigned long long)r->pos);
            r->pos += BLOCK_HEADER;
        }
        uint64_t room = GN__RIEGELI_BLOCK - r->pos % GN__RIEGELI_BLOCK;
        uint64_t take = n < room ? n : room;
        if (r->pos + take > r->size)
            return gn__fail(r->err, GN_ERR_PARSE, "%s: truncated chunk at byte %llu", r->name,
                            (unsigned long long)r->pos);
        if (out) {
            memcpy(out, r->d + r->pos, (size_t)take);
            out += take;
        }
        r->pos += take;
        n -= take;
    }
    return GN_OK;
}

static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 64 && *p < end; s += 7) {
        uint8_t c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (c < 0x80) return true;
    }
    return false;
}

gn_status gn__riegeli_read(const uint8_t *data, size_t size, const char *name, gn__riegeli_record **recs,
                           size_t *n_recs, gn__err *err)
{
    *recs = NULL;
    *n_recs = 0;
    rd r = {data, size, 0, name, err};
    size_t cap = 0, n = 0;
    gn__riegeli_record *out = NULL;
    uint8_t *buf = NULL;   /* chunk data gathered across block headers */
    gn_status st = GN_OK;
    for (bool first = true; st == GN_OK && r.pos < size; first = false) {
        uint64_t begin = r.pos;
        uint8_t h[CHUNK_HEADER];
        st = rd_bytes(&r, h, CHUNK_HEADER);
        if (st != GN_OK) break;
        if (get64(h) != gn__highwayhash64(gn__riegeli_hash_key, h + 8, 32)) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk header at byte %llu: hash mismatch", name,
                          (unsigned long long)begin);
            break;
        }
        uint64_t data_size = get64(h + 8), data_hash = get64(h + 16), tr = get64(h + 24), decoded = get64(h + 32);
        uint8_t type = (uint8_t)tr;
        uint64_t num_records = tr >> 8;
        if (first && type != CHUNK_SIGNATURE) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: not a Riegeli/records file (no file signature at byte 0)", name);
            break;
        }
        if (data_size > size) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu: data size %llu exceeds the file", name,
                          (unsigned long long)begin, (unsigned long long)data_size);
            break;
        }
        free(buf);
        buf = malloc(data_size ? (size_t)data_size : 1);
        if (!buf) {
            st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", name);
            break;
        }
        st = rd_bytes(&r, buf, data_size);
        if (st != GN_OK) break;
        if (gn__highwayhash64(gn__riegeli_hash_key, buf, (size_t)data_size) != data_hash) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu: data hash mismatch", name,
                          (unsigned long long)begin);
            break;
        }
        uint64_t end = chunk_end(begin, data_size, num_records);
        if (end > size) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu ends past the end of the file", name,
                          (unsigned long long)begin);
            break;
        }
        r.pos = end;
        if (type == CHUNK_SIGNATURE || type == CHUNK_PADDING || type == CHUNK_METADATA) continue;
        if (type != CHUNK_SIMPLE) {
            st = gn__fail(err, GN_ERR_UNSUPPORTED,
                          "%s: chunk at byte %llu has type '%c'%s; only simple chunks ('r') are read", name,
                          (unsigned long long)begin, type >= 0x20 && type < 0x7f ? type : '?',
                          type == CHUNK_TRANSPOSED ? " (transposed)" : "");
            break;
        }
        const uint8_t *p = buf, *e = buf + data_size;
        uint64_t sizes_len = 0;
        if (data_size < 1 || p[0] != 0) {
            st = gn__fail(err, GN_ERR_UNSUPPORTED, "%s: chunk at byte %llu is compressed (type %u); only "
                          "uncompressed chunks are read", name, (unsigned long long)begin, data_size ? p[0] : 0);
            break;
        }
        p++;
        if (!get_varint(&p, e, &sizes_len) || sizes_len > (uint64_t)(e - p)) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu: bad record sizes", name,
                          (unsigned long long)begin);
            break;
        }
        const uint8_t *sp = p, *se = p + sizes_len;
        const uint8_t *vals = se;
        uint64_t total = 0;
        for (uint64_t i = 0; i < num_records; i++) {
            uint64_t len;
            if (!get_varint(&sp, se, &len) || len > (uint64_t)(e - vals) - total) {
                st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu: record %llu runs past the chunk", name,
                              (unsigned long long)begin, (unsigned long long)i);
                break;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                gn__riegeli_record *no = realloc(out, cap * sizeof *no);
                if (!no) {
                    st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", name);
                    break;
                }
                out = no;
            }
            uint8_t *copy = malloc(len ? (size_t)len : 1);
            if (!copy) {
                st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", name);
                break;
            }
            memcpy(copy, vals + total, (size_t)len);
            out[n].pos = begin + i;
            out[n].data = copy;
            out[n].len = (size_t)len;
            n++;
            total += len;
        }
        if (st == GN_OK && total != decoded)
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk at byte %llu: records hold %llu bytes, the header says %llu",
                          name, (unsigned long long)begin, (unsigned long long)total, (unsigned long long)decoded);
        if (st != GN_OK) break;
    }
    free(buf);
    if (st != GN_OK) {
        gn__riegeli_records_free(out, n);
        return st;
    }
    *recs = out;
    *n_recs = n;
    return GN_OK;
}

void gn__riegeli_records_free(gn__riegeli_record *recs, size_t n)
{
    for (size_t i = 0; recs && i < n; i++) free((void *)recs[i].data);
    free(recs);
}
