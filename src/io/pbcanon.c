/* Deterministic protobuf serialization, as TensorFlow's C++ writes and
 * hashes SavedModels (SerializeToString with deterministic=true): map
 * entries sorted by key (strings bytewise, integers numerically) and each
 * entry's key and value written even when they hold default values. Fields
 * go in the order protobuf-c packs them (field number order for TensorFlow's
 * protos). */
#include <stdlib.h>
#include <string.h>

#include "io/graphdef.h"
#include "io/pbcanon.h"

typedef struct canon {
    gn__err *err;
    gn__arena a;
    ProtobufCAllocator pa;
    const ProtobufCMessageDescriptor *mapdesc_src[64];
    const ProtobufCMessageDescriptor *mapdesc[64];
    size_t n_mapdesc;
} canon;

/* TensorFlow hashes (fingerprint.pb's saved_model_checksum) and writes
 * SavedModels with deterministic serialization: map entries in key order.
 * The messages we pack keep the source's map order, so the packed bytes are
 * decoded into an arena, every map sorted by key (strings bytewise, integers
 * numerically), and packed again. */
static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t nl = strlen(d->name);
    return d->n_fields == 2 && nl > 5 && strcmp(d->name + nl - 5, "Entry") == 0 && d->fields[0].id == 1 &&
           d->fields[1].id == 2 && strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

static int key_cmp(const ProtobufCFieldDescriptor *k, const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    const char *pa = (const char *)a + k->offset, *pb = (const char *)b + k->offset;
    switch (k->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *x = *(char *const *)pa, *y = *(char *const *)pb;
        return strcmp(x ? x : "", y ? y : "");
    }
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32: {
        int32_t x, y;
        memcpy(&x, pa, 4);
        memcpy(&y, pb, 4);
        return (x > y) - (x < y);
    }
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: {
        uint32_t x, y;
        memcpy(&x, pa, 4);
        memcpy(&y, pb, 4);
        return (x > y) - (x < y);
    }
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64: {
        int64_t x, y;
        memcpy(&x, pa, 8);
        memcpy(&y, pb, 8);
        return (x > y) - (x < y);
    }
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: {
        uint64_t x, y;
        memcpy(&x, pa, 8);
        memcpy(&y, pb, 8);
        return (x > y) - (x < y);
    }
    case PROTOBUF_C_TYPE_BOOL: {
        protobuf_c_boolean x, y;
        memcpy(&x, pa, sizeof x);
        memcpy(&y, pb, sizeof y);
        return (x != 0) - (y != 0);
    }
    default:
        return 0;
    }
}

/* Stable merge sort of map entries by key (tmp: scratch of n pointers). */
static void sort_entries(const ProtobufCFieldDescriptor *k, ProtobufCMessage **v, ProtobufCMessage **tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = key_cmp(k, v[j], v[i]) < 0 ? v[j++] : v[i++];
            while (i < mid) tmp[o++] = v[i++];
            while (j < hi) tmp[o++] = v[j++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
}

/* C++ writes a map entry's key and value even when they hold default
 * values; protobuf-c skips default proto3 fields. A copy of the entry's
 * descriptor with both fields required makes protobuf-c write them (NULL
 * strings and messages pack as empty). One copy per entry type, kept in c. */
static const ProtobufCMessageDescriptor *map_entry_descriptor(canon *c, const ProtobufCMessageDescriptor *d)
{
    for (size_t i = 0; i < c->n_mapdesc; i++)
        if (c->mapdesc_src[i] == d) return c->mapdesc[i];
    if (c->n_mapdesc == GN__ARRAY_LEN(c->mapdesc)) return NULL;
    ProtobufCMessageDescriptor *nd = gn__arena_alloc(&c->a, sizeof *nd, 16);
    ProtobufCFieldDescriptor *nf = gn__arena_alloc(&c->a, 2 * sizeof *nf, 16);
    if (!nd || !nf) return NULL;
    *nd = *d;
    memcpy(nf, d->fields, 2 * sizeof *nf);
    for (int k = 0; k < 2; k++) {
        nf[k].label = PROTOBUF_C_LABEL_REQUIRED;
        nf[k].flags &= ~(unsigned)PROTOBUF_C_FIELD_FLAG_ONEOF;
    }
    nd->fields = nf;
    c->mapdesc_src[c->n_mapdesc] = d;
    c->mapdesc[c->n_mapdesc++] = nd;
    return nd;
}

/* Sorts every map in m; depth is bounded by the nesting the decoder allowed. */
static gn_status canon_message(canon *c, ProtobufCMessage *m, int depth)
{
    if (depth > GN__MAX_PROTO_DEPTH + 8) return gn__fail(c->err, GN_ERR_PARSE, "message nested too deeply to serialize");
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        char *base = (char *)m;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(size_t *)(base + fd->quantifier_offset);
            ProtobufCMessage **v = *(ProtobufCMessage ***)(base + fd->offset);
            if (!n || !v) continue;
            const ProtobufCMessageDescriptor *sd = fd->descriptor;
            if (is_map_entry(sd)) {
                if (n > 1) {
                    ProtobufCMessage **tmp = gn__arena_alloc(&c->a, n * sizeof *tmp, 8);
                    if (!tmp) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
                    sort_entries(&sd->fields[0], v, tmp, n);
                }
                const ProtobufCMessageDescriptor *always = map_entry_descriptor(c, sd);
                if (!always) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
                for (size_t i = 0; i < n; i++)
                    if (v[i]) v[i]->descriptor = always;
            }
            for (size_t i = 0; i < n; i++)
                if (v[i]) GN_TRY(canon_message(c, v[i], depth + 1));
        } else {
            if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(uint32_t *)(base + fd->quantifier_offset) != fd->id) continue;
            ProtobufCMessage *sub = *(ProtobufCMessage **)(base + fd->offset);
            if (sub) GN_TRY(canon_message(c, sub, depth + 1));
        }
    }
    return GN_OK;
}

static gn_status pack(canon *c, const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *b1 = malloc(n ? n : 1);
    if (!b1) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory for %zu bytes", n);
    protobuf_c_message_pack(m, b1);
    ProtobufCMessage *copy = protobuf_c_message_unpack(m->descriptor, &c->pa, n, b1);
    free(b1);
    if (!copy) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory re-reading %zu bytes", n);
    GN_TRY(canon_message(c, copy, 0));
    size_t n2 = protobuf_c_message_get_packed_size(copy);
    uint8_t *b2 = malloc(n2 ? n2 : 1);
    if (!b2) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory for %zu bytes", n2);
    size_t w = protobuf_c_message_pack(copy, b2);
    if (w != n2) {
        free(b2);
        return gn__fail(c->err, GN_ERR_INTERNAL, "packed %zu bytes, expected %zu", w, n2);
    }
    *out = b2;
    *len = n2;
    return GN_OK;
}


gn_status gn__pack_deterministic(const ProtobufCMessage *m, uint8_t **out, size_t *len, gn__err *err)
{
    canon cc;
    memset(&cc, 0, sizeof cc);
    cc.err = err;
    gn__arena_init(&cc.a, 64 * 1024);
    gn__arena_pb_allocator(&cc.a, &cc.pa);
    gn_status s = pack(&cc, m, out, len);
    gn__arena_free(&cc.a);
    return s;
}
