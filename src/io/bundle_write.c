/* Tensor bundle writer: TensorFlow's BundleWriter (tensor_bundle.cc) over
 * LevelDB's table builder (table_builder.cc, block_builder.cc, format.cc):
 * uncompressed blocks of block_size 256 KiB, restart interval 16 (1 in the
 * index block), the BundleHeaderProto under the empty key, entries in key
 * order. One data shard unless gn__bundle_writer_set_shard chose others: the
 * layout MergeV2Checkpoints leaves after a sharded save. Layout:
 * docs/reference_formats.md §B3-§B5. */
#include "io/bundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/tensor.h"

#define TABLE_BLOCK_SIZE 262144u
#define TABLE_RESTART_INTERVAL 16u
#define TABLE_MAGIC 0xdb4775248b80fb57ull

/* ---- encodings --------------------------------------------------------------------- */
static void put_varint64(gn__buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    gn__buf_append(b, t, n);
}

static void put_fixed32(gn__buf *b, uint32_t v)
{
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    gn__buf_append(b, t, 4);
}

/* OrderedCode::WriteNumIncreasing: a length byte, then the significant bytes big-endian. */
static void oc_put_num(gn__buf *b, uint64_t v)
{
    uint8_t t[9];
    int len = 0;
    for (uint64_t x = v; x; x >>= 8) len++;
    t[0] = (uint8_t)len;
    for (int i = 0; i < len; i++) t[1 + i] = (uint8_t)(v >> (8 * (len - 1 - i)));
    gn__buf_append(b, t, (size_t)len + 1);
}

/* OrderedCode::WriteString: 00 -> 00 FF, FF -> FF 00, terminated by 00 01. */
static void oc_put_string(gn__buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c == 0x00) gn__buf_append(b, "\x00\xff", 2);
        else if (c == 0xff) gn__buf_append(b, "\xff\x00", 2);
        else gn__buf_putc(b, (char)c);
    }
    gn__buf_append(b, "\x00\x01", 2);
}

/* OrderedCode::WriteSignedNumIncreasing: sign and length in the leading bits, then
 * the big-endian two's complement payload; n bytes hold [-2^(7n-1), 2^(7n-1)). */
static void oc_put_signed(gn__buf *b, int64_t v)
{
    static const uint8_t hdr[11][2] = {{0, 0},    {0x80, 0}, {0xc0, 0}, {0xe0, 0},    {0xf0, 0},   {0xf8, 0},
                                       {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
    uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    if (x < 64) {
        gn__buf_putc(b, (char)(uint8_t)(0x80u ^ (uint8_t)v));
        return;
    }
    int bits = 64;
    while (bits > 0 && !(x >> (bits - 1))) bits--;   /* bits >= 7 here */
    int len = (bits + 1 + 6) / 7;                     /* smallest n with bits <= 7n - 1 */
    uint8_t t[10];
    uint8_t sign = v < 0 ? 0xff : 0x00;
    t[0] = t[1] = sign;
    for (int i = 0; i < 8; i++) t[2 + i] = (uint8_t)((uint64_t)v >> (8 * (7 - i)));
    uint8_t *p = t + 10 - len;
    p[0] ^= hdr[len][0];
    p[1] ^= hdr[len][1];
    gn__buf_append(b, p, (size_t)len);
}

void gn__bundle_slice_key(gn__buf *out, const char *name, size_t name_len, int32_t rank, const int64_t *starts,
                          const int64_t *lengths)
{
    oc_put_num(out, 0);
    oc_put_string(out, name, name_len);
    oc_put_num(out, (uint64_t)(rank < 0 ? 0 : rank));
    for (int32_t d = 0; d < rank; d++) {
        oc_put_signed(out, starts[d]);
        oc_put_signed(out, lengths[d]);
    }
}

/* ---- table builder ------------------------------------------------------------------ */
typedef struct block_builder {
    gn__buf buf;
    uint32_t *restarts;
    size_t n_restarts, cap_restarts;
    uint32_t counter, interval;
    gn__buf last;
    bool oom;
} block_builder;

static void bb_init(block_builder *bb, uint32_t interval)
{
    memset(bb, 0, sizeof *bb);
    gn__buf_init(&bb->buf);
    gn__buf_init(&bb->last);
    bb->interval = interval;
}

static void bb_push_restart(block_builder *bb, uint32_t off)
{
    if (bb->n_restarts == bb->cap_restarts) {
        size_t nc = bb->cap_restarts ? bb->cap_restarts * 2 : 16;
        uint32_t *r = realloc(bb->restarts, nc * sizeof *r);
        if (!r) {
            bb->oom = true;
            return;
        }
        bb->restarts = r;
        bb->cap_restarts = nc;
    }
    bb->restarts[bb->n_restarts++] = off;
}

static void bb_reset(block_builder *bb)
{
    bb->buf.len = 0;
    bb->last.len = 0;
    bb->n_restarts = 0;
    bb->counter = 0;
    bb_push_restart(bb, 0);
}

static void bb_free(block_builder *bb)
{
    gn__buf_free(&bb->buf);
    gn__buf_free(&bb->last);
    free(bb->restarts);
}

static bool bb_empty(const block_builder *bb) { return bb->buf.len == 0; }

static size_t bb_estimate(const block_builder *bb) { return bb->buf.len + bb->n_restarts * 4 + 4; }

static void bb_add(block_builder *bb, const char *key, size_t klen, const void *val, size_t vlen)
{
    size_t shared = 0;
    if (bb->counter < bb->interval) {
        size_t m = bb->last.len < klen ? bb->last.len : klen;
        while (shared < m && bb->last.data[shared] == key[shared]) shared++;
    } else {
        bb_push_restart(bb, (uint32_t)bb->buf.len);
        bb->counter = 0;
    }
    put_varint64(&bb->buf, shared);
    put_varint64(&bb->buf, klen - shared);
    put_varint64(&bb->buf, vlen);
    gn__buf_append(&bb->buf, key + shared, klen - shared);
    gn__buf_append(&bb->buf, val, vlen);
    bb->last.len = shared;
    gn__buf_append(&bb->last, key + shared, klen - shared);
    bb->counter++;
}

static void bb_finish(block_builder *bb)
{
    for (size_t i = 0; i < bb->n_restarts; i++) put_fixed32(&bb->buf, bb->restarts[i]);
    put_fixed32(&bb->buf, (uint32_t)bb->n_restarts);
}

typedef struct table_builder {
    gn__buf *out;
    block_builder data, index;
    gn__buf last_key;
    bool pending;
    uint64_t pending_off, pending_size;
} table_builder;

/* Writes a finished block with its trailer (type 0 + masked CRC-32C over block + type). */
static void write_block(gn__buf *out, const gn__buf *block, uint64_t *off, uint64_t *size)
{
    *off = out->len;
    *size = block->len;
    gn__buf_append(out, block->data, block->len);
    uint8_t type = 0;
    uint32_t crc = gn__crc32c(gn__crc32c(0, block->data, block->len), &type, 1);
    gn__buf_putc(out, 0);
    put_fixed32(out, gn__crc32c_mask(crc));
}

static void handle_encode(gn__buf *b, uint64_t off, uint64_t size)
{
    put_varint64(b, off);
    put_varint64(b, size);
}

static void tb_add_pending_index(table_builder *tb, const char *key, size_t klen)
{
    gn__buf h;
    gn__buf_init(&h);
    handle_encode(&h, tb->pending_off, tb->pending_size);
    bb_add(&tb->index, key, klen, h.data, h.len);
    if (h.oom) tb->index.oom = true;
    gn__buf_free(&h);
    tb->pending = false;
}

static void tb_flush(table_builder *tb)
{
    if (bb_empty(&tb->data)) return;
    bb_finish(&tb->data);
    write_block(tb->out, &tb->data.buf, &tb->pending_off, &tb->pending_size);
    bb_reset(&tb->data);
    tb->pending = true;
}

static void tb_add(table_builder *tb, const char *key, size_t klen, const void *val, size_t vlen)
{
    if (tb->pending) {
        /* FindShortestSeparator(last_key, key) */
        gn__buf *s = &tb->last_key;
        size_t m = s->len < klen ? s->len : klen, i = 0;
        while (i < m && s->data[i] == key[i]) i++;
        if (i < m) {
            uint8_t c = (uint8_t)s->data[i];
            if (c < 0xff && c + 1 < (uint8_t)key[i]) {
                s->data[i] = (char)(c + 1);
                s->len = i + 1;
            }
        }
        tb_add_pending_index(tb, s->data, s->len);
    }
    tb->last_key.len = 0;
    gn__buf_append(&tb->last_key, key, klen);
    bb_add(&tb->data, key, klen, val, vlen);
    if (bb_estimate(&tb->data) >= TABLE_BLOCK_SIZE) tb_flush(tb);
}

static void tb_finish(table_builder *tb)
{
    tb_flush(tb);
    /* metaindex: an empty block */
    block_builder meta;
    bb_init(&meta, TABLE_RESTART_INTERVAL);
    bb_reset(&meta);
    bb_finish(&meta);
    uint64_t meta_off, meta_size, idx_off, idx_size;
    write_block(tb->out, &meta.buf, &meta_off, &meta_size);
    if (meta.oom || meta.buf.oom) tb->out->oom = true;
    bb_free(&meta);
    if (tb->pending) {
        /* FindShortSuccessor(last_key) */
        gn__buf *s = &tb->last_key;
        for (size_t i = 0; i < s->len; i++) {
            uint8_t c = (uint8_t)s->data[i];
            if (c != 0xff) {
                s->data[i] = (char)(c + 1);
                s->len = i + 1;
                break;
            }
        }
        tb_add_pending_index(tb, s->data ? s->data : "", s->len);
    }
    bb_finish(&tb->index);
    write_block(tb->out, &tb->index.buf, &idx_off, &idx_size);
    /* footer: two handles, zero padding to 40 bytes, the magic */
    size_t start = tb->out->len;
    handle_encode(tb->out, meta_off, meta_size);
    handle_encode(tb->out, idx_off, idx_size);
    while (!tb->out->oom && tb->out->len < start + 40) gn__buf_putc(tb->out, 0);
    put_fixed32(tb->out, (uint32_t)TABLE_MAGIC);
    put_fixed32(tb->out, (uint32_t)(TABLE_MAGIC >> 32));
}

/* ---- the writer ------------------------------------------------------------------------ */
typedef struct wentry {
    char *key;
    size_t klen;
    Tensorflow__BundleEntryProto *e;
    size_t cap_slices;
} wentry;

struct gn__bundle_writer {
    char *prefix;
    gn__arena arena;
    ProtobufCAllocator pba;
    gn__buf *data;        /* one per data shard */
    int32_t n_data;       /* data shards used (at least 1) */
    int32_t cur;          /* the shard adds go to */
    int32_t num_shards;   /* header num_shards: at least n_data */
    wentry *ents;
    size_t n, cap;
    size_t *hash;         /* open addressing: entry index + 1, 0 = empty */
    size_t hcap;
    bool durable;         /* gn__bundle_writer_set_durable */
};

void gn__bundle_writer_set_durable(gn__bundle_writer *w, bool durable)
{
    w->durable = durable;
}

gn_status gn__bundle_writer_new(const char *prefix, gn__bundle_writer **out, gn__err *err)
{
    *out = NULL;
    if (!prefix || !*prefix) return gn__fail(err, GN_ERR_ARG, "bundle writer: empty prefix");
    gn__bundle_writer *w = calloc(1, sizeof *w);
    if (!w) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    w->prefix = strdup(prefix);
    if (!w->prefix) {
        free(w);
        return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    }
    gn__arena_init(&w->arena, 16384);
    gn__arena_pb_allocator(&w->arena, &w->pba);
    w->data = malloc(sizeof *w->data);
    if (!w->data) {
        free(w->prefix);
        gn__arena_free(&w->arena);
        free(w);
        return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    }
    gn__buf_init(&w->data[0]);
    w->n_data = 1;
    w->num_shards = 1;
    *out = w;
    return GN_OK;
}

void gn__bundle_writer_abort(gn__bundle_writer *w)
{
    if (!w) return;
    free(w->prefix);
    gn__arena_free(&w->arena);
    for (int32_t i = 0; i < w->n_data; i++) gn__buf_free(&w->data[i]);
    free(w->data);
    free(w->ents);
    free(w->hash);
    free(w);
}

static size_t key_hash(const char *k, size_t n) { return (size_t)gn__hash_bytes(k, n); }

/* Index of key in w->ents, or SIZE_MAX. */
static size_t find_entry(const gn__bundle_writer *w, const char *key, size_t klen)
{
    if (!w->hcap) return SIZE_MAX;
    size_t mask = w->hcap - 1;
    for (size_t h = key_hash(key, klen) & mask;; h = (h + 1) & mask) {
        size_t v = w->hash[h];
        if (!v) return SIZE_MAX;
        const wentry *e = &w->ents[v - 1];
        if (e->klen == klen && memcmp(e->key, key, klen) == 0) return v - 1;
    }
}

static bool hash_insert(size_t *tab, size_t cap, const wentry *ents, size_t idx)
{
    size_t mask = cap - 1;
    for (size_t h = key_hash(ents[idx].key, ents[idx].klen) & mask;; h = (h + 1) & mask)
        if (!tab[h]) {
            tab[h] = idx + 1;
            return true;
        }
}

/* Appends a new entry (key must be absent). */
static gn_status new_entry(gn__bundle_writer *w, const char *key, size_t klen, wentry **out, gn__err *err)
{
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 64;
        wentry *ne = realloc(w->ents, nc * sizeof *ne);
        if (!ne) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
        w->ents = ne;
        w->cap = nc;
    }
    if ((w->n + 1) * 2 > w->hcap) {
        size_t nc = w->hcap ? w->hcap * 2 : 128;
        size_t *nt = calloc(nc, sizeof *nt);
        if (!nt) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
        for (size_t i = 0; i < w->n; i++) hash_insert(nt, nc, w->ents, i);
        free(w->hash);
        w->hash = nt;
        w->hcap = nc;
    }
    wentry *e = &w->ents[w->n];
    memset(e, 0, sizeof *e);
    e->key = gn__arena_memdup(&w->arena, key, klen ? klen : 1);
    e->klen = klen;
    e->e = gn__arena_alloc(&w->arena, sizeof *e->e, 8);
    Tensorflow__TensorShapeProto *sh = gn__arena_alloc(&w->arena, sizeof *sh, 8);
    if (!e->key || !e->e || !sh) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    tensorflow__bundle_entry_proto__init(e->e);
    tensorflow__tensor_shape_proto__init(sh);
    e->e->shape = sh;
    hash_insert(w->hash, w->hcap, w->ents, w->n);
    w->n++;
    *out = e;
    return GN_OK;
}

static gn_status set_shape(gn__bundle_writer *w, Tensorflow__TensorShapeProto *sh, int32_t rank, const int64_t *dims,
                           gn__err *err)
{
    sh->n_dim = (size_t)rank;
    sh->dim = NULL;
    if (rank == 0) return GN_OK;
    sh->dim = gn__arena_alloc(&w->arena, (size_t)rank * sizeof *sh->dim, 8);
    Tensorflow__TensorShapeProto__Dim *d = gn__arena_alloc(&w->arena, (size_t)rank * sizeof *d, 8);
    if (!sh->dim || !d) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    for (int32_t i = 0; i < rank; i++) {
        tensorflow__tensor_shape_proto__dim__init(&d[i]);
        d[i].size = dims[i];
        sh->dim[i] = &d[i];
    }
    return GN_OK;
}

static void fmt_key(const char *k, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        uint8_t c = (uint8_t)k[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = 0;
}

/* Element count and byte size of a tensor's stored form; checks dtype and shape. */
static gn_status tensor_layout(const char *what, const gn__tensor *t, int64_t *numel, size_t *esz, gn__err *err)
{
    if (t->rank < 0 || t->rank > GN__MAX_DIMS)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': rank %d", what, t->rank);
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0)
            return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': dim %d is %lld", what, d,
                            (long long)t->dims[d]);
        if (t->dims[d] && n > INT64_MAX / t->dims[d])
            return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': element count overflows", what);
        n *= t->dims[d];
    }
    size_t es = 0;
    if (t->dtype != TENSORFLOW__DATA_TYPE__DT_STRING) {
        es = (t->dtype > 0 && t->dtype < 100) ? gn__dtype_size(t->dtype) : 0;
        if (!es)
            return gn__fail(err, GN_ERR_UNSUPPORTED, "bundle writer: key '%s': cannot store dtype %d", what,
                            t->dtype);
        if ((uint64_t)n > SIZE_MAX / es || t->nbytes < (size_t)n * es || (n && !t->data))
            return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': tensor holds %zu bytes, needs %llu",
                            what, t->nbytes, (unsigned long long)((uint64_t)n * es));
    } else if (n && !t->data) {
        return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': string tensor without data", what);
    }
    *numel = n;
    *esz = es;
    return GN_OK;
}

/* Appends t's stored bytes to the data file and fills the entry (BundleWriter::Add). */
static gn_status add_tensor(gn__bundle_writer *w, const char *key, size_t klen, const gn__tensor *t, gn__err *err)
{
    char kd[256];
    fmt_key(key, klen, kd, sizeof kd);
    int64_t numel = 0;
    size_t esz = 0;
    GN_TRY(tensor_layout(kd, t, &numel, &esz, err));
    if (find_entry(w, key, klen) != SIZE_MAX)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: duplicate key '%s'", kd);
    wentry *e;
    GN_TRY(new_entry(w, key, klen, &e, err));
    e->e->dtype = (Tensorflow__DataType)t->dtype;
    GN_TRY(set_shape(w, e->e->shape, t->rank, t->dims, err));
    gn__buf *data = &w->data[w->cur];
    e->e->shard_id = w->cur;
    e->e->offset = (int64_t)data->len;
    size_t start = data->len;
    uint32_t crc;
    if (esz) {
        size_t bytes = (size_t)numel * esz;
        gn__buf_append(data, t->data, bytes);
        crc = gn__crc32c(0, t->data, bytes);
    } else {
        /* varint64 lengths; masked CRC of the lengths (as uint32 LE, or uint64 past
         * 32 bits); the bytes. The entry CRC runs over lengths, checksum, bytes. */
        const gn__tstring *s = t->data;
        crc = 0;
        for (int64_t i = 0; i < numel; i++) {
            uint64_t len = s[i].len;
            put_varint64(data, len);
            if (len <= UINT32_MAX) {
                uint8_t le[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
                crc = gn__crc32c(crc, le, 4);
            } else {
                uint8_t le[8];
                for (int j = 0; j < 8; j++) le[j] = (uint8_t)(len >> (8 * j));
                crc = gn__crc32c(crc, le, 8);
            }
        }
        uint32_t lc = gn__crc32c_mask(crc);
        uint8_t le[4] = {(uint8_t)lc, (uint8_t)(lc >> 8), (uint8_t)(lc >> 16), (uint8_t)(lc >> 24)};
        gn__buf_append(data, le, 4);
        crc = gn__crc32c(crc, le, 4);
        for (int64_t i = 0; i < numel; i++) {
            if (s[i].len && !s[i].ptr)
                return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': string %lld has no bytes", kd,
                                (long long)i);
            gn__buf_append(data, s[i].ptr, s[i].len);
            if (s[i].len) crc = gn__crc32c(crc, s[i].ptr, s[i].len);
        }
    }
    if (data->oom) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory for key '%s'", kd);
    e->e->size = (int64_t)(data->len - start);
    e->e->crc32c = gn__crc32c_mask(crc);
    return GN_OK;
}

gn_status gn__bundle_writer_add(gn__bundle_writer *w, const char *key, const gn__tensor *t, gn__err *err)
{
    if (!key || !*key)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: the empty key is reserved for the header");
    return add_tensor(w, key, strlen(key), t, err);
}

gn_status gn__bundle_writer_add_slice(gn__bundle_writer *w, const char *key, int32_t rank, const int64_t *full,
                                      const int64_t *starts, const int64_t *lengths, const gn__tensor *t,
                                      gn__err *err)
{
    if (!key || !*key)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: the empty key is reserved for the header");
    if (rank < 0 || rank > GN__MAX_DIMS)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': slice rank %d", key, rank);
    if (t->rank != rank)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: key '%s': slice tensor has rank %d, full shape %d",
                        key, t->rank, rank);
    bool whole = true;
    for (int32_t d = 0; d < rank; d++) {
        int64_t len = lengths[d];
        if (full[d] < 0 || starts[d] < 0 || (len == -1 && starts[d] != 0) || len < -1 ||
            (len >= 0 && starts[d] > full[d] - len))
            return gn__fail(err, GN_ERR_ARG,
                            "bundle writer: key '%s': slice [%lld, +%lld) of dim %d does not fit in %lld", key,
                            (long long)starts[d], (long long)len, d, (long long)full[d]);
        int64_t want = len == -1 ? full[d] : len;
        if (t->dims[d] != want)
            return gn__fail(err, GN_ERR_ARG,
                            "bundle writer: key '%s': slice tensor dim %d is %lld, the slice says %lld", key, d,
                            (long long)t->dims[d], (long long)want);
        if (!(len == -1 || (starts[d] == 0 && len == full[d]))) whole = false;
    }
    /* IsFullSlice: a slice that is the whole tensor is an ordinary entry */
    if (whole) return gn__bundle_writer_add(w, key, t, err);
    size_t klen = strlen(key);
    size_t i = find_entry(w, key, klen);
    wentry *e;
    if (i == SIZE_MAX) {
        GN_TRY(new_entry(w, key, klen, &e, err));
        e->e->dtype = (Tensorflow__DataType)t->dtype;
        GN_TRY(set_shape(w, e->e->shape, rank, full, err));
        e->e->shard_id = w->cur;   /* MergeV2Checkpoints: the shard of the first slice */
    } else {
        e = &w->ents[i];
        bool same = e->e->n_slices > 0 && (int32_t)e->e->dtype == t->dtype && e->e->shape->n_dim == (size_t)rank;
        for (int32_t d = 0; same && d < rank; d++) same = e->e->shape->dim[d]->size == full[d];
        if (!same)
            return gn__fail(err, GN_ERR_ARG,
                            "bundle writer: key '%s': slice does not match the tensor already added under that key",
                            key);
    }
    /* the slice's own entry first (it may fail on a duplicate slice) */
    gn__buf sk;
    gn__buf_init(&sk);
    gn__bundle_slice_key(&sk, key, klen, rank, starts, lengths);
    if (sk.oom) {
        gn__buf_free(&sk);
        return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    }
    gn_status st = add_tensor(w, sk.data, sk.len, t, err);
    gn__buf_free(&sk);
    if (st != GN_OK) return st;
    e = &w->ents[find_entry(w, key, klen)];   /* add_tensor may have moved the array */
    /* TensorSlice::AsProto: one extent per dim, empty for a full dim */
    if (e->e->n_slices == e->cap_slices) {
        size_t nc = e->cap_slices ? e->cap_slices * 2 : 4;
        Tensorflow__TensorSliceProto **ns = gn__arena_alloc(&w->arena, nc * sizeof *ns, 8);
        if (!ns) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
        if (e->e->n_slices) memcpy(ns, e->e->slices, e->e->n_slices * sizeof *ns);
        e->e->slices = ns;
        e->cap_slices = nc;
    }
    Tensorflow__TensorSliceProto *sp = gn__arena_alloc(&w->arena, sizeof *sp, 8);
    Tensorflow__TensorSliceProto__Extent **ex =
        rank ? gn__arena_alloc(&w->arena, (size_t)rank * sizeof *ex, 8) : NULL;
    Tensorflow__TensorSliceProto__Extent *exv =
        rank ? gn__arena_alloc(&w->arena, (size_t)rank * sizeof *exv, 8) : NULL;
    if (!sp || (rank && (!ex || !exv))) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    tensorflow__tensor_slice_proto__init(sp);
    for (int32_t d = 0; d < rank; d++) {
        tensorflow__tensor_slice_proto__extent__init(&exv[d]);
        if (lengths[d] != -1) {
            exv[d].start = starts[d];
            exv[d].has_length_case = TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
            exv[d].length = lengths[d];
        }
        ex[d] = &exv[d];
    }
    sp->n_extent = (size_t)rank;
    sp->extent = ex;
    e->e->slices[e->e->n_slices++] = sp;
    return GN_OK;
}

gn_status gn__bundle_writer_set_shard(gn__bundle_writer *w, int32_t shard, gn__err *err)
{
    if (shard < 0 || shard >= 99999)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: data shard %d is out of range", shard);
    if (shard >= w->n_data) {
        gn__buf *nd = realloc(w->data, (size_t)(shard + 1) * sizeof *nd);
        if (!nd) return gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
        w->data = nd;
        for (int32_t i = w->n_data; i <= shard; i++) gn__buf_init(&w->data[i]);
        w->n_data = shard + 1;
    }
    if (w->num_shards < w->n_data) w->num_shards = w->n_data;
    w->cur = shard;
    return GN_OK;
}

gn_status gn__bundle_writer_set_num_shards(gn__bundle_writer *w, int32_t num_shards, gn__err *err)
{
    if (num_shards < w->n_data || num_shards > 99999)
        return gn__fail(err, GN_ERR_ARG, "bundle writer: num_shards %d is below the %d data shards written",
                        num_shards, w->n_data);
    w->num_shards = num_shards;
    return GN_OK;
}

static int wentry_cmp(const void *a, const void *b)
{
    const wentry *x = a, *y = b;
    size_t m = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->key, y->key, m);
    if (c) return c;
    return x->klen < y->klen ? -1 : x->klen > y->klen;
}

static gn_status build_index(gn__bundle_writer *w, gn__buf *out, gn__err *err)
{
    qsort(w->ents, w->n, sizeof *w->ents, wentry_cmp);
    table_builder tb;
    memset(&tb, 0, sizeof tb);
    tb.out = out;
    bb_init(&tb.data, TABLE_RESTART_INTERVAL);
    bb_init(&tb.index, 1);
    bb_reset(&tb.data);
    bb_reset(&tb.index);
    gn__buf_init(&tb.last_key);
    gn__buf val;
    gn__buf_init(&val);

    Tensorflow__BundleHeaderProto hdr = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
    Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
    ver.producer = 1;
    hdr.num_shards = w->num_shards;
    hdr.endianness = TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE;
    hdr.version = &ver;
    gn_status st = GN_OK;
    size_t n = tensorflow__bundle_header_proto__get_packed_size(&hdr);
    if (gn__buf_reserve(&val, n)) {
        val.len = tensorflow__bundle_header_proto__pack(&hdr, (uint8_t *)val.data);
        tb_add(&tb, "", 0, val.data, val.len);
    }
    for (size_t i = 0; i < w->n && !val.oom; i++) {
        n = tensorflow__bundle_entry_proto__get_packed_size(w->ents[i].e);
        val.len = 0;
        if (!gn__buf_reserve(&val, n)) break;
        val.len = tensorflow__bundle_entry_proto__pack(w->ents[i].e, (uint8_t *)val.data);
        tb_add(&tb, w->ents[i].key, w->ents[i].klen, val.data, val.len);
    }
    if (!val.oom) tb_finish(&tb);
    if (val.oom || out->oom || tb.data.oom || tb.index.oom || tb.data.buf.oom || tb.index.buf.oom ||
        tb.last_key.oom || tb.data.last.oom || tb.index.last.oom)
        st = gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory building the index");
    gn__buf_free(&val);
    gn__buf_free(&tb.last_key);
    bb_free(&tb.data);
    bb_free(&tb.index);
    return st;
}

gn_status gn__bundle_writer_finish(gn__bundle_writer *w, gn__err *err)
{
    gn__buf idx;
    gn__buf_init(&idx);
    gn_status st = build_index(w, &idx, err);
    size_t pn = strlen(w->prefix);
    char *dpath = malloc(pn + 32), *ipath = malloc(pn + 8);
    if (st == GN_OK && (!dpath || !ipath)) st = gn__fail(err, GN_ERR_NOMEM, "bundle writer: out of memory");
    int32_t written = 0;
    if (st == GN_OK) {
        for (; st == GN_OK && written < w->n_data; written++) {
            snprintf(dpath, pn + 32, "%s.data-%05d-of-%05d", w->prefix, written, w->num_shards);
            const gn__buf *d = &w->data[written];
            st = gn__write_file_atomic(dpath, d->data ? d->data : "", d->len, w->durable, err);
        }
        if (st != GN_OK) written--;
        if (st == GN_OK) {
            snprintf(ipath, pn + 8, "%s.index", w->prefix);
            st = gn__write_file_atomic(ipath, idx.data, idx.len, w->durable, err);
        }
        if (st != GN_OK)
            for (int32_t i = 0; i < written; i++) {
                snprintf(dpath, pn + 32, "%s.data-%05d-of-%05d", w->prefix, i, w->num_shards);
                unlink(dpath);
            }
    }
    free(dpath);
    free(ipath);
    gn__buf_free(&idx);
    gn__bundle_writer_abort(w);
    return st;
}
