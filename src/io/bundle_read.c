/* Tensor bundle reader: the `.index` sorted string table (LevelDB format,
 * table.cc / block.cc / format.cc) read in one pass into a sorted key array,
 * and BundleReader's value decoding (tensor_bundle.cc): fixed-size tensors,
 * DT_STRING, byte swapping for big-endian writers, partitioned tensors
 * assembled from their slices. Layout: docs/reference_formats.md §B3-§B5.
 * Every length and offset read from a file is bounds-checked before use. */
#include "io/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/tensor.h"
#include "io/snappy.h"

#define FOOTER_LEN 48u
#define TABLE_MAGIC 0xdb4775248b80fb57ull
#define BUNDLE_VERSION 1   /* kTensorBundleVersion: the consumer version of this reader */
#define KEYDESC 200

typedef struct bkey {
    const char *key;
    size_t len;
    Tensorflow__BundleEntryProto *e;
} bkey;

typedef struct shard {
    int fd;               /* -1 until opened */
    uint64_t size;
} shard;

struct gn__bundle {
    char *prefix;
    const char *index_name;   /* basename of the index file, into index_path */
    char *index_path;
    gn__arena arena;
    ProtobufCAllocator pba;
    Tensorflow__BundleHeaderProto *header;
    bkey *keys;               /* every key but the header's, sorted */
    size_t n_keys, cap_keys;
    size_t *pub;              /* indices into keys of the listed keys */
    size_t n_pub;
    shard *shards;
    int32_t n_shards;         /* allocated: largest shard id referenced + 1 */
    bool swap;                /* the writer's byte order differs from ours */
};

/* ---- small helpers ----------------------------------------------------------------- */
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decodes a varint of at most max_bits bits from [*p, end); false when truncated or too long. */
static bool get_varint(const uint8_t **p, const uint8_t *end, unsigned max_bits, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < max_bits && *p < end; shift += 7) {
        uint8_t c = *(*p)++;
        if (shift == 63 && (c & 0x7e)) return false;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            if (max_bits == 32 && v > UINT32_MAX) return false;
            *out = v;
            return true;
        }
    }
    return false;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Printable form of a key for messages: control and non-ASCII bytes as \xNN. */
static const char *kdesc(const char *k, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o + 8 >= KEYDESC) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        uint8_t c = (uint8_t)k[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, KEYDESC - o, "\\x%02x", c);
    }
    out[o] = 0;
    return out;
}

static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* ---- blocks ------------------------------------------------------------------------ */
typedef struct blockref {
    const uint8_t *d;     /* contents (after decompression) */
    size_t n;
    uint8_t *owned;       /* heap copy for a Snappy block */
    uint64_t off;         /* file offset of the stored block */
} blockref;

/* Reads the block at handle (off, size): bounds, trailer CRC, decompression. */
static gn_status block_read(const gn__bundle *b, const uint8_t *file, size_t limit, uint64_t off, uint64_t size,
                            const char *what, blockref *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    out->off = off;
    if (off > limit || size > limit - off || limit - off - size < 5)
        return gn__fail(err, GN_ERR_PARSE,
                        "%s: %s block (offset %llu, size %llu) runs past the end of the blocks (%zu bytes)",
                        b->index_name, what, (unsigned long long)off, (unsigned long long)size, limit);
    const uint8_t *p = file + off;
    uint8_t type = p[size];
    uint32_t stored = le32(p + size + 1);
    uint32_t crc = gn__crc32c(gn__crc32c(0, p, (size_t)size), &type, 1);
    if (gn__crc32c_unmask(stored) != crc)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: checksum mismatch (stored 0x%08x, computed 0x%08x)",
                        b->index_name, (unsigned long long)off, stored, gn__crc32c_mask(crc));
    if (type == 0) {
        out->d = p;
        out->n = (size_t)size;
        return GN_OK;
    }
    if (type != 1)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: unknown compression type %u", b->index_name,
                        (unsigned long long)off, type);
    size_t ulen = 0;
    if (!gn__snappy_length(p, (size_t)size, &ulen) || ulen / 32 > (size_t)size + 64)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: corrupt Snappy data", b->index_name,
                        (unsigned long long)off);
    out->owned = malloc(ulen ? ulen : 1);
    if (!out->owned) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
    if (!gn__snappy_decode(p, (size_t)size, out->owned, ulen)) {
        free(out->owned);
        out->owned = NULL;
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: corrupt Snappy data", b->index_name,
                        (unsigned long long)off);
    }
    out->d = out->owned;
    out->n = ulen;
    return GN_OK;
}

typedef struct blockit {
    const gn__bundle *b;
    const blockref *blk;
    size_t pos, end;
    size_t entry;         /* byte of the current entry in the block */
    gn__buf key;
    const uint8_t *val;
    size_t vlen;
} blockit;

static gn_status blockit_init(blockit *it, const gn__bundle *b, const blockref *blk, gn__err *err)
{
    memset(it, 0, sizeof *it);
    it->b = b;
    it->blk = blk;
    gn__buf_init(&it->key);
    if (blk->n < 4)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: %zu bytes is too short", b->index_name,
                        (unsigned long long)blk->off, blk->n);
    uint32_t nr = le32(blk->d + blk->n - 4);
    if (nr > (blk->n - 4) / 4)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: %u restart points do not fit in %zu bytes",
                        b->index_name, (unsigned long long)blk->off, nr, blk->n);
    it->end = blk->n - 4 - 4 * (size_t)nr;
    return GN_OK;
}

/* Next entry; *done at the end of the block. */
static gn_status blockit_next(blockit *it, bool *done, gn__err *err)
{
    *done = false;
    if (it->pos >= it->end) {
        *done = true;
        return GN_OK;
    }
    const uint8_t *base = it->blk->d, *p = base + it->pos, *end = base + it->end;
    it->entry = it->pos;
    uint64_t shared, non_shared, vlen;
    if (!get_varint(&p, end, 32, &shared) || !get_varint(&p, end, 32, &non_shared) ||
        !get_varint(&p, end, 32, &vlen) || non_shared > (uint64_t)(end - p) ||
        vlen > (uint64_t)(end - p) - non_shared)
        return gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: bad entry at byte %zu of the block",
                        it->b->index_name, (unsigned long long)it->blk->off, it->pos);
    if (shared > it->key.len)
        return gn__fail(err, GN_ERR_PARSE,
                        "%s: block at byte %llu: entry at byte %zu shares %llu bytes with a %zu-byte key",
                        it->b->index_name, (unsigned long long)it->blk->off, it->pos, (unsigned long long)shared,
                        it->key.len);
    it->key.len = (size_t)shared;
    gn__buf_append(&it->key, p, (size_t)non_shared);
    if (it->key.oom) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", it->b->index_name);
    p += non_shared;
    it->val = p;
    it->vlen = (size_t)vlen;
    it->pos = (size_t)(p + vlen - base);
    return GN_OK;
}

/* ---- opening ------------------------------------------------------------------------ */
static gn_status add_key(gn__bundle *b, const char *k, size_t n, Tensorflow__BundleEntryProto *e, gn__err *err)
{
    if (b->n_keys == b->cap_keys) {
        size_t nc = b->cap_keys ? b->cap_keys * 2 : 64;
        bkey *nk = realloc(b->keys, nc * sizeof *nk);
        if (!nk) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
        b->keys = nk;
        b->cap_keys = nc;
    }
    char *kc = gn__arena_alloc(&b->arena, n + 1, 1);
    if (!kc) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
    if (n) memcpy(kc, k, n);
    kc[n] = 0;
    b->keys[b->n_keys++] = (bkey){kc, n, e};
    return GN_OK;
}

typedef struct scan {
    gn__buf last;         /* previous data key */
    bool any;             /* a data key was seen */
    gn__buf last_index;
    bool any_index;
} scan;

static gn_status scan_data_block(gn__bundle *b, scan *s, const blockref *blk, gn__err *err)
{
    blockit it;
    gn_status st = blockit_init(&it, b, blk, err);
    char kd[KEYDESC], kd2[KEYDESC];
    for (bool done = false; st == GN_OK;) {
        st = blockit_next(&it, &done, err);
        if (st != GN_OK || done) break;
        const char *k = it.key.data ? it.key.data : "";
        size_t kn = it.key.len;
        if (s->any && key_cmp(s->last.data ? s->last.data : "", s->last.len, k, kn) >= 0) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: block at byte %llu: entry at byte %zu: key '%s' is not after '%s'",
                          b->index_name, (unsigned long long)blk->off, it.entry, kdesc(k, kn, kd),
                          kdesc(s->last.data, s->last.len, kd2));
            break;
        }
        if (!s->any && kn != 0) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: no header entry (the first key is '%s')", b->index_name,
                          kdesc(k, kn, kd));
            break;
        }
        s->last.len = 0;
        gn__buf_append(&s->last, k, kn);
        if (s->last.oom) {
            st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
            break;
        }
        if (!s->any) {
            s->any = true;
            b->header = tensorflow__bundle_header_proto__unpack(&b->pba, it.vlen, it.val);
            if (!b->header && b->arena.oom)
                st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
            else if (!b->header)
                st = gn__fail(err, GN_ERR_PARSE, "%s: the header entry is not a BundleHeaderProto", b->index_name);
            continue;
        }
        Tensorflow__BundleEntryProto *e = tensorflow__bundle_entry_proto__unpack(&b->pba, it.vlen, it.val);
        if (!e && b->arena.oom) {
            st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
            break;
        }
        if (!e) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: key '%s': the entry is not a BundleEntryProto", b->index_name,
                          kdesc(k, kn, kd));
            break;
        }
        st = add_key(b, k, kn, e, err);
    }
    gn__buf_free(&it.key);
    return st;
}

static gn_status check_header(gn__bundle *b, gn__err *err)
{
    const Tensorflow__BundleHeaderProto *h = b->header;
    if (h->num_shards < 1)
        return gn__fail(err, GN_ERR_PARSE, "%s: header: num_shards %d", b->index_name, h->num_shards);
    if (h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE &&
        h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__BIG)
        return gn__fail(err, GN_ERR_PARSE, "%s: header: unknown endianness %d", b->index_name, (int)h->endianness);
    const uint16_t probe = 1;
    bool host_big = *(const uint8_t *)&probe == 0;
    b->swap = (h->endianness == TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__BIG) != host_big;
    const Tensorflow__VersionDef *v = h->version;
    if (v) {
        if (v->producer < 0)
            return gn__fail(err, GN_ERR_PARSE, "%s: checkpoint producer version %d is below the minimum 0",
                            b->index_name, v->producer);
        if (v->min_consumer > BUNDLE_VERSION)
            return gn__fail(err, GN_ERR_UNSUPPORTED,
                            "%s: checkpoint needs a reader of version %d or later; this one is version %d",
                            b->index_name, v->min_consumer, BUNDLE_VERSION);
        for (size_t i = 0; i < v->n_bad_consumers; i++)
            if (v->bad_consumers[i] == BUNDLE_VERSION)
                return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: checkpoint disallows reader version %d",
                                b->index_name, BUNDLE_VERSION);
    }
    int32_t max_shard = -1;
    char kd[KEYDESC];
    for (size_t i = 0; i < b->n_keys; i++) {
        const Tensorflow__BundleEntryProto *e = b->keys[i].e;
        if (e->n_slices) continue;   /* location fields are ignored */
        if (e->shard_id < 0 || e->shard_id >= h->num_shards || e->offset < 0 || e->size < 0)
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': bad location (shard %d of %d, offset %lld, size %lld)",
                            b->index_name, kdesc(b->keys[i].key, b->keys[i].len, kd), e->shard_id, h->num_shards,
                            (long long)e->offset, (long long)e->size);
        if (e->shard_id > max_shard) max_shard = e->shard_id;
    }
    if (max_shard >= 0) {
        b->shards = malloc((size_t)(max_shard + 1) * sizeof *b->shards);
        /* n_shards counts only shards that exist: gn__bundle_close walks them */
        if (!b->shards) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
        b->n_shards = max_shard + 1;
        for (int32_t i = 0; i < b->n_shards; i++) b->shards[i].fd = -1;
    }
    return GN_OK;
}

static gn_status parse_index(gn__bundle *b, const uint8_t *file, size_t fsize, gn__err *err)
{
    if (fsize < FOOTER_LEN)
        return gn__fail(err, GN_ERR_PARSE, "%s: %zu bytes is too short for a table footer (48 bytes)",
                        b->index_name, fsize);
    const uint8_t *f = file + fsize - FOOTER_LEN;
    uint64_t magic = (uint64_t)le32(f + 40) | (uint64_t)le32(f + 44) << 32;
    if (magic != TABLE_MAGIC)
        return gn__fail(err, GN_ERR_PARSE, "%s: not an sstable (bad magic number)", b->index_name);
    const uint8_t *p = f, *fend = f + 40;
    uint64_t moff, msize, ioff, isize;
    if (!get_varint(&p, fend, 64, &moff) || !get_varint(&p, fend, 64, &msize) || !get_varint(&p, fend, 64, &ioff) ||
        !get_varint(&p, fend, 64, &isize))
        return gn__fail(err, GN_ERR_PARSE, "%s: bad block handles in the footer", b->index_name);
    size_t limit = fsize - FOOTER_LEN;
    blockref ib;
    GN_TRY(block_read(b, file, limit, moff, msize, "metaindex", &ib, err));   /* checked, not used */
    free(ib.owned);
    GN_TRY(block_read(b, file, limit, ioff, isize, "index", &ib, err));
    blockit it;
    gn_status st = blockit_init(&it, b, &ib, err);
    scan s;
    memset(&s, 0, sizeof s);
    gn__buf_init(&s.last);
    gn__buf_init(&s.last_index);
    char kd[KEYDESC], kd2[KEYDESC];
    for (bool done = false; st == GN_OK;) {
        st = blockit_next(&it, &done, err);
        if (st != GN_OK || done) break;
        if (s.any_index && key_cmp(s.last_index.data, s.last_index.len, it.key.data, it.key.len) >= 0) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: index block: key '%s' is not after '%s'", b->index_name,
                          kdesc(it.key.data, it.key.len, kd), kdesc(s.last_index.data, s.last_index.len, kd2));
            break;
        }
        s.any_index = true;
        s.last_index.len = 0;
        gn__buf_append(&s.last_index, it.key.data, it.key.len);
        const uint8_t *hp = it.val, *he = it.val + it.vlen;
        uint64_t doff, dsize;
        if (!get_varint(&hp, he, 64, &doff) || !get_varint(&hp, he, 64, &dsize)) {
            st = gn__fail(err, GN_ERR_PARSE, "%s: index block: bad block handle for key '%s'", b->index_name,
                          kdesc(it.key.data, it.key.len, kd));
            break;
        }
        blockref db;
        st = block_read(b, file, limit, doff, dsize, "data", &db, err);
        if (st != GN_OK) break;
        st = scan_data_block(b, &s, &db, err);
        free(db.owned);
    }
    if (st == GN_OK && !s.any) st = gn__fail(err, GN_ERR_PARSE, "%s: no header entry (empty table)", b->index_name);
    if (st == GN_OK && (s.last_index.oom || s.last.oom)) st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", b->index_name);
    gn__buf_free(&it.key);
    gn__buf_free(&s.last);
    gn__buf_free(&s.last_index);
    free(ib.owned);
    return st;
}

gn_status gn__bundle_open(const char *prefix, gn__bundle **out, gn__err *err)
{
    *out = NULL;
    if (!prefix || !*prefix) return gn__fail(err, GN_ERR_ARG, "bundle: empty prefix");
    gn__bundle *b = calloc(1, sizeof *b);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    gn__arena_init(&b->arena, 16384);
    gn__arena_pb_allocator(&b->arena, &b->pba);
    size_t pn = strlen(prefix);
    b->prefix = strdup(prefix);
    b->index_path = malloc(pn + 8);
    if (!b->prefix || !b->index_path) {
        gn__bundle_close(b);
        return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    }
    snprintf(b->index_path, pn + 8, "%s.index", prefix);
    b->index_name = base_name(b->index_path);
    uint8_t *file = NULL;
    size_t fsize = 0;
    gn_status st = gn__read_file(b->index_path, &file, &fsize, err);
    if (st == GN_OK) st = parse_index(b, file, fsize, err);
    free(file);
    if (st == GN_OK) st = check_header(b, err);
    if (st == GN_OK && b->n_keys) {
        b->pub = malloc(b->n_keys * sizeof *b->pub);
        if (!b->pub) st = gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
        for (size_t i = 0; st == GN_OK && i < b->n_keys; i++)
            if (!memchr(b->keys[i].key, 0, b->keys[i].len)) b->pub[b->n_pub++] = i;
    }
    if (st != GN_OK) {
        gn__bundle_close(b);
        return st;
    }
    *out = b;
    return GN_OK;
}

void gn__bundle_close(gn__bundle *b)
{
    if (!b) return;
    for (int32_t i = 0; i < b->n_shards; i++)
        if (b->shards[i].fd >= 0) close(b->shards[i].fd);
    free(b->shards);
    free(b->keys);
    free(b->pub);
    free(b->prefix);
    free(b->index_path);
    gn__arena_free(&b->arena);
    free(b);
}

size_t gn__bundle_count(const gn__bundle *b) { return b->n_pub; }

const char *gn__bundle_key(const gn__bundle *b, size_t i) { return i < b->n_pub ? b->keys[b->pub[i]].key : NULL; }

const Tensorflow__BundleHeaderProto *gn__bundle_header(const gn__bundle *b) { return b->header; }

/* Any key, NUL bytes included; NULL when absent. */
static const bkey *find_key(const gn__bundle *b, const char *k, size_t n)
{
    size_t lo = 0, hi = b->n_keys;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(b->keys[mid].key, b->keys[mid].len, k, n);
        if (c == 0) return &b->keys[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const Tensorflow__BundleEntryProto *gn__bundle_entry(const gn__bundle *b, const char *key)
{
    const bkey *k = find_key(b, key, strlen(key));
    return k ? k->e : NULL;
}

/* ---- data --------------------------------------------------------------------------- */
static void shard_name(const gn__bundle *b, int32_t id, char *out, size_t cap)
{
    snprintf(out, cap, "%s.data-%05d-of-%05d", base_name(b->prefix), id, b->header->num_shards);
}

static gn_status shard_get(gn__bundle *b, int32_t id, const char *kd, shard **out, gn__err *err)
{
    shard *s = &b->shards[id];
    if (s->fd < 0) {
        struct stat stt;
        memset(&stt, 0, sizeof stt);
        size_t cap = strlen(b->prefix) + 32;
        char *path = malloc(cap);
        if (!path) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
        snprintf(path, cap, "%s.data-%05d-of-%05d", b->prefix, id, b->header->num_shards);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int e = errno;
        if (fd >= 0 && fstat(fd, &stt) != 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
        gn_status st = GN_OK;
        if (fd < 0)
            st = gn__fail(err, GN_ERR_IO, "%s: cannot open for key '%s': %s", base_name(path), kd, strerror(e));
        free(path);
        if (st != GN_OK) return st;
        s->fd = fd;
        s->size = (uint64_t)stt.st_size;
    }
    *out = s;
    return GN_OK;
}

/* Opens the entry's shard and checks that its bytes lie inside the file. */
static gn_status check_extent(gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd, shard **out,
                              gn__err *err)
{
    shard *s = NULL;
    GN_TRY(shard_get(b, e->shard_id, kd, &s, err));
    uint64_t off = (uint64_t)e->offset, size = (uint64_t)e->size;
    if (off > s->size || size > s->size - off) {
        char name[320];
        shard_name(b, e->shard_id, name, sizeof name);
        return gn__fail(err, GN_ERR_IO, "%s: key '%s': %llu bytes at offset %llu run past the end of the file (%llu bytes)",
                        name, kd, (unsigned long long)size, (unsigned long long)off, (unsigned long long)s->size);
    }
    *out = s;
    return GN_OK;
}

/* Reads the entry's size bytes at offset into dst. */
static gn_status read_at(gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd, uint8_t *dst,
                         gn__err *err)
{
    shard *s = NULL;
    GN_TRY(check_extent(b, e, kd, &s, err));
    char name[320];
    uint64_t off = (uint64_t)e->offset, size = (uint64_t)e->size;
    size_t done = 0;
    while (done < size) {
        ssize_t r = pread(s->fd, dst + done, (size_t)size - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int en = r < 0 ? errno : 0;
            shard_name(b, e->shard_id, name, sizeof name);
            return gn__fail(err, GN_ERR_IO, "%s: key '%s': read of %llu bytes at offset %llu failed: %s", name, kd,
                            (unsigned long long)size, (unsigned long long)off,
                            en ? strerror(en) : "unexpected end of file");
        }
        done += (size_t)r;
    }
    return GN_OK;
}

static gn_status entry_shape(const gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd,
                             int32_t *rank, int64_t *dims, int64_t *numel, gn__err *err)
{
    const Tensorflow__TensorShapeProto *sh = e->shape;
    *rank = 0;
    *numel = 1;
    if (!sh) return GN_OK;
    if (sh->unknown_rank)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': shape of unknown rank", b->index_name, kd);
    if (sh->n_dim > GN__MAX_DIMS)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: key '%s': rank %zu is over the supported %d", b->index_name, kd,
                        sh->n_dim, GN__MAX_DIMS);
    int64_t n = 1;
    for (size_t d = 0; d < sh->n_dim; d++) {
        int64_t v = sh->dim[d]->size;
        if (v < 0) return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': dim %zu is %lld", b->index_name, kd, d, (long long)v);
        if (v && n > INT64_MAX / v)
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': element count overflows", b->index_name, kd);
        n *= v;
        dims[d] = v;
    }
    *rank = (int32_t)sh->n_dim;
    *numel = n;
    return GN_OK;
}

/* Element size for dtype: >0 for fixed-size types, 0 for DT_STRING; error otherwise. */
static gn_status elem_size(const gn__bundle *b, int32_t dt, const char *kd, size_t *esz, gn__err *err)
{
    if (dt == TENSORFLOW__DATA_TYPE__DT_STRING) {
        *esz = 0;
        return GN_OK;
    }
    size_t s = (dt > 0 && dt < 100) ? gn__dtype_size(dt) : 0;
    if (!s)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: key '%s': cannot read dtype %d", b->index_name, kd, dt);
    *esz = s;
    return GN_OK;
}

static void byte_swap(uint8_t *p, size_t n, size_t unit)
{
    if (unit < 2) return;
    for (size_t i = 0; i + unit <= n; i += unit)
        for (size_t a = i, z = i + unit - 1; a < z; a++, z--) {
            uint8_t t = p[a];
            p[a] = p[z];
            p[z] = t;
        }
}

static gn_status crc_fail(gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd, uint32_t crc,
                          gn__err *err)
{
    char name[320];
    shard_name(b, e->shard_id, name, sizeof name);
    return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': checksum mismatch (stored 0x%08x, computed 0x%08x)", name, kd,
                    e->crc32c, gn__crc32c_mask(crc));
}

/* Decodes a DT_STRING tensor of numel elements from its stored bytes. */
static gn_status decode_strings(gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd,
                                const uint8_t *raw, size_t size, int64_t numel, gn__tensor *out, gn__err *err)
{
    char name[320];
    shard_name(b, e->shard_id, name, sizeof name);
    /* every element needs at least one length byte (TensorFlow's reader takes 0 bytes
     * as all-empty strings; its writer never stores that, and refusing it bounds
     * the allocation below by the file size) */
    if ((uint64_t)numel > size)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': %lld strings cannot fit in %zu bytes", name, kd,
                        (long long)numel, size);
    if ((uint64_t)numel > SIZE_MAX / sizeof(gn__tstring))
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': too many strings", name, kd);
    size_t head = (size_t)numel * sizeof(gn__tstring);
    uint64_t *lens = NULL;
    uint32_t crc = 0;
    size_t total = 0;
    const uint8_t *p = raw, *end = raw + size;
    if (size) {
        lens = malloc(numel ? (size_t)numel * sizeof *lens : 1);
        if (!lens) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
        for (int64_t i = 0; i < numel; i++) {
            if (!get_varint(&p, end, 64, &lens[i])) {
                free(lens);
                return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': bad length of string %lld at byte %lld", name, kd,
                                (long long)i, (long long)e->offset + (long long)(p - raw));
            }
            uint8_t le[8];
            uint64_t l = lens[i];
            size_t w = l <= UINT32_MAX ? 4 : 8;
            if (b->swap)
                for (size_t j = 0; j < w; j++) le[j] = (uint8_t)(l >> (8 * (w - 1 - j)));
            else
                for (size_t j = 0; j < w; j++) le[j] = (uint8_t)(l >> (8 * j));
            crc = gn__crc32c(crc, le, w);
            if (l > size || total + l > size) {
                free(lens);
                return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': string lengths exceed the entry's %zu bytes", name,
                                kd, size);
            }
            total += (size_t)l;
        }
        if ((size_t)(end - p) < 4 || (size_t)(end - p) - 4 != total) {
            free(lens);
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': string lengths (%zu bytes) do not match the entry's %zu bytes",
                            name, kd, total, size);
        }
        uint32_t raw_lc = le32(p), lc = raw_lc;
        if (b->swap) lc = (raw_lc >> 24) | ((raw_lc >> 8) & 0xff00u) | ((raw_lc << 8) & 0xff0000u) | (raw_lc << 24);
        if (gn__crc32c_unmask(lc) != crc) {
            free(lens);
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': length checksum mismatch (stored 0x%08x, computed 0x%08x)",
                            name, kd, lc, gn__crc32c_mask(crc));
        }
        crc = gn__crc32c(crc, p, 4);
        p += 4;
        crc = gn__crc32c(crc, p, total);
    }
    if (gn__crc32c_unmask(e->crc32c) != crc) {
        free(lens);
        return crc_fail(b, e, kd, crc, err);
    }
    if (total > SIZE_MAX - head) {
        free(lens);
        return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    }
    gn__buffer *buf = gn__buffer_new(head + total);
    if (!buf) {
        free(lens);
        return gn__fail(err, GN_ERR_NOMEM, "%s: key '%s': out of memory for %zu bytes", name, kd, head + total);
    }
    gn__tstring *ts = buf->data;
    char *store = (char *)buf->data + head;
    if (total) memcpy(store, p, total);
    size_t at = 0;
    for (int64_t i = 0; i < numel; i++) {
        size_t l = lens ? (size_t)lens[i] : 0;
        ts[i].ptr = store + at;
        ts[i].len = l;
        at += l;
    }
    free(lens);
    out->data = buf->data;
    out->nbytes = head;
    out->buf = buf;
    return GN_OK;
}

/* Reads a stored (unsliced) entry into out (dtype and shape already set). */
static gn_status read_plain(gn__bundle *b, const Tensorflow__BundleEntryProto *e, const char *kd, int64_t numel,
                            size_t esz, gn__tensor *out, gn__err *err)
{
    if ((uint64_t)e->size > SIZE_MAX) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    size_t size = (size_t)e->size;
    if (esz) {
        if ((uint64_t)numel > SIZE_MAX / esz || (uint64_t)numel * esz != (uint64_t)e->size) {
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': the entry holds %lld bytes, %lld elements need %llu",
                            b->index_name, kd, (long long)e->size, (long long)numel,
                            (unsigned long long)numel * (unsigned long long)esz);
        }
        shard *sh = NULL;
        GN_TRY(check_extent(b, e, kd, &sh, err));
        gn__buffer *buf = gn__buffer_new(size);
        if (!buf) return gn__fail(err, GN_ERR_NOMEM, "%s: key '%s': out of memory for %zu bytes", b->index_name, kd, size);
        gn_status st = read_at(b, e, kd, buf->data, err);
        if (st == GN_OK) {
            uint32_t crc = gn__crc32c(0, buf->data, size);
            if (gn__crc32c_unmask(e->crc32c) != crc) st = crc_fail(b, e, kd, crc, err);
        }
        if (st != GN_OK) {
            gn__buffer_unref(buf);
            return st;
        }
        if (b->swap) {
            bool cplx = out->dtype == TENSORFLOW__DATA_TYPE__DT_COMPLEX64 ||
                        out->dtype == TENSORFLOW__DATA_TYPE__DT_COMPLEX128;
            byte_swap(buf->data, size, cplx ? esz / 2 : esz);
        }
        out->data = buf->data;
        out->nbytes = size;
        out->buf = buf;
        return GN_OK;
    }
    /* DT_STRING: read the stored bytes, bounded by the file size before allocating */
    shard *s = NULL;
    GN_TRY(check_extent(b, e, kd, &s, err));
    uint8_t *raw = malloc(size ? size : 1);
    if (!raw) return gn__fail(err, GN_ERR_NOMEM, "%s: key '%s': out of memory for %zu bytes", b->index_name, kd, size);
    gn_status st = read_at(b, e, kd, raw, err);
    if (st == GN_OK) st = decode_strings(b, e, kd, raw, size, numel, out, err);
    free(raw);
    return st;
}

/* Copies one slice (already read, shape lens) into the full tensor at starts;
 * cover marks the elements written. Strings are copied as gn__tstring records. */
static gn_status copy_slice(const gn__bundle *b, const char *kd, int32_t rank, const int64_t *full, const int64_t *starts,
                            const int64_t *lens, const uint8_t *src, size_t esz, uint8_t *dst, uint8_t *cover,
                            int64_t *copied, gn__err *err)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= lens[d];
    if (n == 0) return GN_OK;
    int64_t row = rank ? lens[rank - 1] : 1;
    int64_t idx[GN__MAX_DIMS] = {0};
    int64_t stride[GN__MAX_DIMS];
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= full[d];
    }
    for (int64_t done = 0; done < n; done += row) {
        int64_t at = 0;
        for (int32_t d = 0; d < rank; d++) at += (starts[d] + idx[d]) * stride[d];
        for (int64_t j = 0; j < row; j++) {
            int64_t q = at + j;
            if (cover[q >> 3] & (1u << (q & 7)))
                return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': slices overlap at element %lld", b->index_name, kd,
                                (long long)q);
            cover[q >> 3] |= (uint8_t)(1u << (q & 7));
        }
        memcpy(dst + (size_t)at * esz, src + (size_t)done * esz, (size_t)row * esz);
        *copied += row;
        /* next row: advance the index over all dims but the last */
        for (int32_t d = rank - 2; d >= 0; d--) {
            if (++idx[d] < lens[d]) break;
            idx[d] = 0;
        }
    }
    return GN_OK;
}

typedef struct slice_ref {
    const bkey *k;
    int64_t starts[GN__MAX_DIMS], lens[GN__MAX_DIMS];
    int64_t numel;
} slice_ref;

/* Checks slice i of a partitioned entry and finds its stored entry; the stored
 * bytes are checked to lie inside the shard, which bounds what gets allocated. */
static gn_status slice_lookup(gn__bundle *b, const bkey *k, const char *kd, const gn__tensor *full, size_t i,
                              size_t esz, gn__buf *sk, slice_ref *r, gn__err *err)
{
    const Tensorflow__TensorSliceProto *sp = k->e->slices[i];
    int32_t rank = full->rank;
    if (sp->n_extent != (size_t)rank)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': slice %zu has %zu dims, the tensor %d", b->index_name, kd, i,
                        sp->n_extent, rank);
    int64_t klens[GN__MAX_DIMS];
    r->numel = 1;
    for (int32_t d = 0; d < rank; d++) {
        const Tensorflow__TensorSliceProto__Extent *x = sp->extent[d];
        bool has_len = x->has_length_case == TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
        r->starts[d] = x->start;
        klens[d] = has_len ? x->length : -1;
        r->lens[d] = has_len ? x->length : full->dims[d];
        if (r->starts[d] < 0 || r->lens[d] < 0 || (!has_len && r->starts[d] != 0) ||
            r->starts[d] > full->dims[d] - r->lens[d])
            return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': slice %zu: extent [%lld, +%lld) of dim %d is outside %lld",
                            b->index_name, kd, i, (long long)r->starts[d], (long long)r->lens[d], d,
                            (long long)full->dims[d]);
        r->numel *= r->lens[d];   /* no overflow: bounded by the full tensor's count */
    }
    sk->len = 0;
    gn__bundle_slice_key(sk, k->key, k->len, rank, r->starts, klens);
    if (sk->oom) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    char skd[KEYDESC];
    kdesc(sk->data, sk->len, skd);
    r->k = find_key(b, sk->data, sk->len);
    if (!r->k || r->k->e->n_slices)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': slice %zu has no entry (key '%s')", b->index_name, kd, i, skd);
    int32_t srank;
    int64_t sdims[GN__MAX_DIMS], snumel;
    GN_TRY(entry_shape(b, r->k->e, skd, &srank, sdims, &snumel, err));
    bool same = (int32_t)r->k->e->dtype == full->dtype && srank == rank;
    for (int32_t d = 0; same && d < rank; d++) same = sdims[d] == r->lens[d];
    if (!same)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': slice %zu (key '%s') has another dtype or shape", b->index_name,
                        kd, i, skd);
    if (esz && (uint64_t)r->k->e->size != (uint64_t)r->numel * esz)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': the entry holds %lld bytes, %lld elements need %llu",
                        b->index_name, skd, (long long)r->k->e->size, (long long)r->numel,
                        (unsigned long long)r->numel * (unsigned long long)esz);
    if (!esz && (uint64_t)r->numel > (uint64_t)r->k->e->size)
        return gn__fail(err, GN_ERR_PARSE, "%s: key '%s': %lld strings cannot fit in %lld bytes", b->index_name, skd,
                        (long long)r->numel, (long long)r->k->e->size);
    shard *s = NULL;
    return check_extent(b, r->k->e, skd, &s, err);
}

static gn_status read_sliced(gn__bundle *b, const bkey *k, const char *kd, int64_t numel, size_t esz, gn__tensor *out,
                             gn__err *err)
{
    const Tensorflow__BundleEntryProto *e = k->e;
    int32_t rank = out->rank;
    bool strings = esz == 0;
    size_t unit = strings ? sizeof(gn__tstring) : esz;
    slice_ref *refs = calloc(e->n_slices, sizeof *refs);
    if (!refs) return gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    gn__buf sk;
    gn__buf_init(&sk);
    gn_status st = GN_OK;
    /* pass 1: every slice is valid and stored; their element counts add up to the
     * tensor's (overlaps are caught while copying) */
    uint64_t sum = 0;
    for (size_t i = 0; st == GN_OK && i < e->n_slices; i++) {
        st = slice_lookup(b, k, kd, out, i, esz, &sk, &refs[i], err);
        if (st == GN_OK) sum += (uint64_t)refs[i].numel;
        if (st == GN_OK && sum > (uint64_t)numel)
            st = gn__fail(err, GN_ERR_PARSE, "%s: key '%s': the slices hold more than the %lld elements of the tensor",
                          b->index_name, kd, (long long)numel);
    }
    gn__buf_free(&sk);
    if (st == GN_OK && sum != (uint64_t)numel)
        st = gn__fail(err, GN_ERR_PARSE, "%s: key '%s': the slices cover %llu of %lld elements", b->index_name, kd,
                      (unsigned long long)sum, (long long)numel);
    if (st != GN_OK) {
        free(refs);
        return st;
    }
    /* pass 2: read and place each slice */
    uint8_t *dst = malloc(numel ? (size_t)numel * unit : 1);
    uint8_t *cover = calloc((size_t)numel / 8 + 1, 1);
    gn__tensor *parts = strings ? calloc(e->n_slices, sizeof *parts) : NULL;
    if (!dst || !cover || (strings && !parts)) st = gn__fail(err, GN_ERR_NOMEM, "bundle: out of memory");
    int64_t copied = 0;
    char skd[KEYDESC];
    for (size_t i = 0; st == GN_OK && i < e->n_slices; i++) {
        const slice_ref *r = &refs[i];
        gn__tensor part;
        memset(&part, 0, sizeof part);
        part.dtype = out->dtype;
        part.rank = rank;
        st = read_plain(b, r->k->e, kdesc(r->k->key, r->k->len, skd), r->numel, esz, &part, err);
        if (st != GN_OK) break;
        st = copy_slice(b, kd, rank, out->dims, r->starts, r->lens, part.data, unit, dst, cover, &copied, err);
        if (strings) parts[i] = part;   /* the records point into it: keep it until the end */
        else gn__tensor_release(&part);
    }
    if (st == GN_OK) {
        size_t total = 0;
        const gn__tstring *ts = (const gn__tstring *)dst;
        if (strings)
            for (int64_t i = 0; i < numel; i++) total += ts[i].len;   /* bounded by the parts' sizes */
        size_t head = (size_t)numel * unit;
        gn__buffer *buf = gn__buffer_new(head + total);
        if (!buf) {
            st = gn__fail(err, GN_ERR_NOMEM, "%s: key '%s': out of memory", b->index_name, kd);
        } else if (strings) {
            gn__tstring *o = buf->data;
            char *store = (char *)buf->data + head;
            size_t at = 0;
            for (int64_t i = 0; i < numel; i++) {
                if (ts[i].len) memcpy(store + at, ts[i].ptr, ts[i].len);
                o[i].ptr = store + at;
                o[i].len = ts[i].len;
                at += ts[i].len;
            }
        } else if (head) {
            memcpy(buf->data, dst, head);
        }
        if (buf) {
            out->data = buf->data;
            out->nbytes = head;
            out->buf = buf;
        }
    }
    if (parts)
        for (size_t i = 0; i < e->n_slices; i++) gn__tensor_release(&parts[i]);
    free(parts);
    free(dst);
    free(cover);
    free(refs);
    return st;
}

gn_status gn__bundle_read(gn__bundle *b, const char *key, gn__tensor *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    char kd[KEYDESC];
    size_t kn = strlen(key);
    kdesc(key, kn, kd);
    const bkey *k = kn ? find_key(b, key, kn) : NULL;
    if (!k) return gn__fail(err, GN_ERR_NOT_FOUND, "%s: no key '%s'", b->index_name, kd);
    const Tensorflow__BundleEntryProto *e = k->e;
    size_t esz = 0;
    GN_TRY(elem_size(b, (int32_t)e->dtype, kd, &esz, err));
    gn__tensor t;
    memset(&t, 0, sizeof t);
    int64_t numel;
    GN_TRY(entry_shape(b, e, kd, &t.rank, t.dims, &numel, err));
    t.dtype = (int32_t)e->dtype;
    gn_status st = e->n_slices ? read_sliced(b, k, kd, numel, esz, &t, err) : read_plain(b, e, kd, numel, esz, &t, err);
    if (st != GN_OK) return st;
    *out = t;
    return GN_OK;
}
