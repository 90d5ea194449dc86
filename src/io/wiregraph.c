/* Binary GraphDef <-> IR without a protobuf-c tree for the nodes (see
 * graphdef.h: gn__graph_from_wire, gn__graph_write_binary).
 *
 * Reading: one pass over the top-level records. Each NodeDef whose fields
 * are only name, op, input, device and attr (each map entry one key and one
 * value) is decoded straight into the IR; its attr values are decoded once
 * per distinct encoding and the resulting immutable AttrValue is shared by
 * every node carrying the same bytes. A Const tensor of the common form is
 * decoded here into one arena block (fast_tensor_value), keeping its bytes
 * for the writer when they are protobuf-c's own encoding of it; when the
 * image is the loaded file's, kept by the graph (gn_graph_load), a large
 * tensor's tensor_content and encoding are not copied but point into it; any other
 * value is unpacked by protobuf-c (checked first by gn__wire_check, which
 * bounds the nesting protobuf-c's unpack recurses over). Inputs naming a
 * node already added are resolved at once (the name's hash and table slot
 * are still in cache); the others once every node exists. Any other NodeDef (unknown fields, debug info, repeated singular
 * fields, strings holding NUL bytes, or an error to report) goes through
 * protobuf-c and gn__graph_add_nodedef, as a text GraphDef does. The
 * GraphDef's other fields (library, versions, unknown fields) are gathered
 * and unpacked as one GraphDef without nodes. On any failure the whole image
 * is checked by gn__wire_check first, so a framing error is reported the
 * same way, and before any graph error, as when the file is decoded whole.
 *
 * Writing: each NodeDef is encoded from the IR with sizes computed once;
 * an attr value still holding the bytes it was loaded from is copied, every
 * other distinct value is sized (and, when small, packed) once by
 * protobuf-c. For a file (gn__graph_write_binary_pieces), large values that
 * already sit in memory (loaded encodings; a tensor's content or packed
 * float / double values, the rest of its encoding written here) are left
 * where they are, as pieces of a gathered write. Nodes carrying source fields the IR does not model, and the
 * rest of the GraphDef, are packed by protobuf-c from gn__node_to_def and
 * gn__graph_to_graphdef's messages, so the output is byte for byte what
 * protobuf_c_message_pack gives for gn__graph_to_graphdef.
 *
 * No recursion, no global state. */
#include <stdio.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "io/graphdef.h"
#include "io/wirecheck.h"

/* protobuf-c refuses a message with more fields than this (see wirecheck.c) */
#define WG_MAX_FIELDS ((size_t)16 * ((1u << 23) - 1))

/* ---- varints ------------------------------------------------------------------- */
/* A varint of at most maxb bytes at b[*pos..end); false when truncated or longer. */
static inline bool get_varint(const uint8_t *b, size_t *pos, size_t end, unsigned maxb, uint64_t *v)
{
    size_t p = *pos;
    if (p < end && b[p] < 0x80) {
        *v = b[p];
        *pos = p + 1;
        return true;
    }
    uint64_t x = 0;
    for (unsigned k = 0; k < maxb; k++) {
        if (p + k >= end) return false;
        uint8_t c = b[p + k];
        x |= (uint64_t)(c & 0x7f) << (7 * k);
        if (c < 0x80) {
            *v = x;
            *pos = p + k + 1;
            return true;
        }
    }
    return false;
}

static inline size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* ---- attr values, unpacked once per distinct encoding ------------------------------ */
/* Distinct values in load order; the table holds (hash tag << 32 | index + 1)
 * in 8 bytes a slot, so the probes of a large graph stay in few pages. */
typedef struct vent {
    uint64_t h;
    const uint8_t *p;
    const Tensorflow__AttrValue *v;
    uint32_t len;
    uint32_t enc;                     /* gn__attr.enc for it */
} vent;

typedef struct vtab {
    uint64_t *s;       /* 0: empty */
    size_t cap;        /* power of two */
    vent *e;
    size_t n, cap_e;
} vtab;

/* Values longer than this are unpacked every time (rarely shared, costly to hash). */
#define WG_SHARE_MAX 4096

typedef struct shape_slot shape_slot;

typedef struct wdec {
    gn_graph *g;
    const uint8_t *d;
    size_t len;
    gn__blob *blob;
    bool lend;              /* d is owned by a blob of g: large tensors point into it */
    Tensorflow__TensorProto **lent;   /* the tensors whose content points into d */
    size_t n_lent, cap_lent;
    size_t lent_bytes;      /* encoded bytes of the values that point into d */
    gn__move *moves;        /* lent contents moved to their aligned address, done after decoding */
    size_t n_moves, cap_moves;
    ProtobufCAllocator alloc;
    const gn__source *src;
    vtab vals;
    gn__err tmp;            /* messages of local checks; the whole-image check decides */
    /* node inputs, gathered until every node exists */
    gn__strslice *in;
    size_t n_in, cap_in;
    uint32_t *in_start;     /* node k's inputs: in[in_start[k] .. in_start[k+1]) */
    /* one node's attrs while it is decoded */
    struct tattr {
        uint32_t key;
        const char *kp;
        size_t kl;
        uint32_t enc;
        const Tensorflow__AttrValue *v;
    } *attrs;
    size_t cap_attrs;
    /* recently interned attr keys, op names and devices (few distinct ones),
     * so most lookups skip the graph's large string table */
    struct kcache {
        const uint8_t *p;
        size_t len;
        uint32_t id;
    } kc[256];
    /* node names recently added, by hash: most inputs name one of them */
    struct rname {
        uint64_t h;
        uint32_t id;       /* interned */
    } *rn;
    uint8_t *done;          /* node k's inputs resolved while decoding */
    /* name hashes of nodes k and k + 1 (by k & 1), taken one node ahead so
     * that the string table slot is in cache when the name is interned */
    struct prehash {
        size_t off, len;
        uint64_t h;
    } pre[2];
    /* the same for the attr values of nodes k and k + 1 (the value table's slot) */
    struct prehash vpre[2][8];
    /* recently decoded tensor shapes, by their bytes */
    struct shape_slot {
        const uint8_t *p;                  /* bytes in the image; NULL: empty */
        size_t len;
        Tensorflow__TensorShapeProto *shape;
        bool canon;
    } shapes[64];
} wdec;

static uint32_t intern_cached(wdec *w, const uint8_t *p, size_t n)
{
    size_t h = n * 31u;
    if (n) h ^= (size_t)p[0] * 131u ^ (size_t)p[n - 1] * 7u ^ (size_t)p[n / 2] * 17u;
    struct kcache *c = &w->kc[h & 255];
    if (c->p && c->len == n && memcmp(c->p, p, n) == 0) return c->id;
    uint32_t id = gn__intern(w->g, (const char *)p, n);
    if (id != UINT32_MAX) *c = (struct kcache){p, n, id};
    return id;
}

static bool vtab_grow(vtab *t)
{
    if (t->n == t->cap_e) {
        size_t ncap = t->cap_e ? t->cap_e * 2 : 2048;
        vent *ne = realloc(t->e, ncap * sizeof *ne);
        if (!ne) return false;
        t->e = ne;
        t->cap_e = ncap;
    }
    if ((t->n + 1) * 2 <= t->cap) return true;
    size_t ncap = t->cap ? t->cap * 2 : 4096;
    uint64_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = (size_t)t->e[i].h & (ncap - 1);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = (t->e[i].h >> 32 << 32) | (uint64_t)(i + 1);
    }
    free(t->s);
    t->s = ns;
    t->cap = ncap;
    return true;
}

/* ---- Const tensors, decoded without protobuf-c ------------------------------------ */
/* An AttrValue holding only a TensorProto of the common form (dtype, shape,
 * version, tensor_content and the packed float / double / int / int64 / bool /
 * half values, each field at most once and in field order; dims with a size
 * and no name) is decoded here into one arena block: the AttrValue, the
 * TensorProto, its value arrays and, when the bytes are exactly what
 * protobuf-c packs for the result, a copy of them (gn__attr_enc). Shapes are
 * shared between tensors by their bytes. Everything else, and every value
 * this decoder refuses, goes through gn__wire_check and protobuf-c, so what
 * is accepted here is only ever what they accept, decoded the same way. */

#define WG_SHAPE_CACHE GN__ARRAY_LEN(((wdec *)0)->shapes)
/* Encodings up to this size are kept (gn__attr_enc) */
#define WG_ENC_MAX 1024

/* A varint of at most 10 bytes; *canon cleared when it is not the shortest form. */
static inline bool rd_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *v, bool *canon)
{
    size_t p = *pos;
    if (p < end && b[p] < 0x80) {
        *v = b[p];
        *pos = p + 1;
        return true;
    }
    uint64_t x = 0;
    for (unsigned k = 0; k < 10; k++) {
        if (p + k >= end) return false;
        uint8_t c = b[p + k];
        x |= (uint64_t)(c & 0x7f) << (7 * k);
        if (c < 0x80) {
            if (k == 9 && c > 1) return false; /* bits past 64: protobuf-c reads those differently */
            if (c == 0) *canon = false;
            *v = x;
            *pos = p + k + 1;
            return true;
        }
    }
    return false;
}

/* Bytes protobuf-c packs an int32 (or enum) value in: negative ones take 10. */
static inline size_t int32_wire_size(int32_t v) { return v < 0 ? 10 : varint_size((uint64_t)v); }

/* The TensorShapeProto at b[p..e): dims (size only) then unknown_rank. */
static Tensorflow__TensorShapeProto *fast_shape(wdec *w, const uint8_t *b, size_t p, size_t e, bool *canon)
{
    uint64_t h = gn__hash_bytes(b + p, e - p);
    shape_slot *sl = &w->shapes[h & (WG_SHAPE_CACHE - 1)];
    if (sl->p && sl->len == e - p && memcmp(sl->p, b + p, e - p) == 0) {
        if (!sl->canon) *canon = false;
        return sl->shape;
    }
    bool c = true, rank_seen = false, unknown = false;
    size_t n_dim = 0, q = p;
    while (q < e) {
        uint64_t tag, l;
        if (!rd_varint(b, &q, e, &tag, &c)) return NULL;
        if (tag == ((2 << 3) | 2) && !rank_seen) {
            if (!rd_varint(b, &q, e, &l, &c) || l > e - q) return NULL;
            size_t de = q + (size_t)l;
            if (q < de) {
                uint64_t dt, sz;
                if (!rd_varint(b, &q, de, &dt, &c) || dt != ((1 << 3) | 0)) return NULL;
                if (!rd_varint(b, &q, de, &sz, &c) || q != de) return NULL;
                if (sz == 0) c = false;
            }
            q = de;
            n_dim++;
        } else if (tag == ((3 << 3) | 0) && !rank_seen) {
            uint64_t v = 0;
            size_t q0 = q;
            if (!rd_varint(b, &q, e, &v, &c)) return NULL;
            unknown = v != 0;
            if (q - q0 != 1 || v != 1) c = false;
            rank_seen = true;
        } else {
            return NULL;
        }
    }
    if (n_dim > WG_MAX_FIELDS) return NULL;
    size_t bytes = sizeof(Tensorflow__TensorShapeProto) +
                   n_dim * (sizeof(Tensorflow__TensorShapeProto__Dim *) + sizeof(Tensorflow__TensorShapeProto__Dim));
    uint8_t *m = gn__arena_alloc(&w->blob->arena, bytes, 8);
    if (!m) return NULL;
    Tensorflow__TensorShapeProto *s = (Tensorflow__TensorShapeProto *)m;
    tensorflow__tensor_shape_proto__init(s);
    s->unknown_rank = unknown;
    if (n_dim) {
        s->n_dim = n_dim;
        s->dim = (Tensorflow__TensorShapeProto__Dim **)(m + sizeof *s);
        Tensorflow__TensorShapeProto__Dim *d = (Tensorflow__TensorShapeProto__Dim *)(s->dim + n_dim);
        size_t k = 0;
        bool unused = true;
        q = p;
        while (k < n_dim) {
            uint64_t tag = 0, l = 0, sz = 0;
            rd_varint(b, &q, e, &tag, &unused);
            rd_varint(b, &q, e, &l, &unused);
            size_t de = q + (size_t)l;
            if (q < de) {
                rd_varint(b, &q, de, &tag, &unused);
                rd_varint(b, &q, de, &sz, &unused);
            }
            q = de;
            tensorflow__tensor_shape_proto__dim__init(&d[k]);
            d[k].size = (int64_t)sz;
            s->dim[k] = &d[k];
            k++;
        }
    }
    *sl = (shape_slot){b + p, e - p, s, c};
    if (!c) *canon = false;
    return s;
}

/* A packed field of varints at b[p..e): the element count, 0 when malformed.
 * kind: 'i' int32 (and half), 'l' int64, 'b' bool (one byte, 0 or 1, each);
 * *canon cleared when an element is not in the form protobuf-c writes. */
static size_t packed_varints(const uint8_t *b, size_t p, size_t e, char kind, bool *canon)
{
    size_t n = 0;
    while (p < e) {
        uint64_t v;
        size_t p0 = p;
        if (!rd_varint(b, &p, e, &v, canon)) return 0;
        if (kind == 'i' && p - p0 != int32_wire_size((int32_t)(uint32_t)v)) *canon = false;
        if (kind == 'b' && (p - p0 != 1 || v > 1)) return 0; /* protobuf-c refuses these */
        n++;
    }
    return n;
}

typedef struct tfield {
    size_t off, len;       /* payload */
    size_t n;              /* elements */
} tfield;

/* TensorProto field numbers this decoder takes, as bits */
#define TF_TAKEN ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7) | (1u << 10) | \
                  (1u << 11) | (1u << 13))

/* GN_OK with *out (and *enc, 0 when the bytes are not canonical); GN_ERR_PARSE
 * when this decoder does not take the value (the caller falls back);
 * GN_ERR_NOMEM. */
static gn_status fast_tensor_value(wdec *w, const uint8_t *p, size_t n, const Tensorflow__AttrValue **out,
                                   uint32_t *enc)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    bool canon = true;
    size_t q = 0;
    uint64_t l;
    if (n < 2 || p[0] != ((8 << 3) | 2)) return GN_ERR_PARSE;
    q = 1;
    if (!rd_varint(p, &q, n, &l, &canon) || l != n - q || q > 6) return GN_ERR_PARSE;
    tfield f[14];
    memset(f, 0, sizeof f);
    unsigned last = 0;
    uint64_t dtype = 0, version = 0;
    Tensorflow__TensorShapeProto *shape = NULL;
    while (q < n) {
        uint8_t tag = p[q++];
        unsigned fn = tag >> 3, wt = tag & 7;
        if (tag >= 0x80 || fn <= last || !((TF_TAKEN >> fn) & 1)) return GN_ERR_PARSE;
        last = fn;
        if (fn == 1 || fn == 3) {
            uint64_t v = 0;
            size_t q0 = q;
            if (wt != 0 || !rd_varint(p, &q, n, &v, &canon) || v > INT32_MAX) return GN_ERR_PARSE;
            if (v == 0 || q - q0 != varint_size(v)) canon = false;
            if (fn == 1) dtype = v;
            else version = v;
            continue;
        }
        if (wt != 2 || !rd_varint(p, &q, n, &l, &canon) || l > n - q) return GN_ERR_PARSE;
        size_t fo = q, fe = q + (size_t)l;
        q = fe;
        if (fn == 2) {
            shape = fast_shape(w, p, fo, fe, &canon);
            if (!shape) return GN_ERR_PARSE; /* or out of memory: protobuf-c reports it the same way */
            continue;
        }
        if (l == 0) return GN_ERR_PARSE;
        f[fn] = (tfield){fo, (size_t)l, 0};
        switch (fn) {
        case 4: f[fn].n = (size_t)l; break;
        case 5: f[fn].n = (size_t)l / 4; if (l % 4) return GN_ERR_PARSE; break;
        case 6: f[fn].n = (size_t)l / 8; if (l % 8) return GN_ERR_PARSE; break;
        case 7: case 13: f[fn].n = packed_varints(p, fo, fe, 'i', &canon); break;
        case 10: f[fn].n = packed_varints(p, fo, fe, 'l', &canon); break;
        case 11: f[fn].n = packed_varints(p, fo, fe, 'b', &canon); break;
        default: return GN_ERR_PARSE;
        }
        if (!f[fn].n) return GN_ERR_PARSE;
    }
    /* one block: AttrValue, TensorProto, arrays (8-aligned), content, encoding */
    size_t bytes = sizeof(Tensorflow__AttrValue) + sizeof(Tensorflow__TensorProto);
    bytes += f[6].n * sizeof(double) + f[10].n * sizeof(int64_t);
    bytes += f[5].n * sizeof(float) + f[7].n * sizeof(int32_t) + f[13].n * sizeof(int32_t) +
             f[11].n * sizeof(protobuf_c_boolean);
    /* large values: their tensor_content and encoding are the image's own
     * bytes when the image stays with the graph (w->lend); otherwise packed
     * again on writing, not kept twice */
    bool lend = w->lend && n > WG_ENC_MAX;
    if (n > WG_ENC_MAX && !lend) canon = false;
    bytes += lend ? 0 : f[4].n + (canon ? n : 0);
    uint8_t *m = gn__arena_alloc(&w->blob->arena, bytes, 8);
    if (!m) return GN_ERR_NOMEM;
    Tensorflow__AttrValue *av = (Tensorflow__AttrValue *)m;
    Tensorflow__TensorProto *t = (Tensorflow__TensorProto *)(m + sizeof *av);
    uint8_t *o = m + sizeof *av + sizeof *t;
    tensorflow__attr_value__init(av);
    tensorflow__tensor_proto__init(t);
    av->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    av->tensor = t;
    t->dtype = (Tensorflow__DataType)(int32_t)dtype;
    t->version_number = (int32_t)version;
    t->tensor_shape = shape;
    bool unused = true;
    if (f[6].n) {
        t->n_double_val = f[6].n;
        t->double_val = (double *)o;
        memcpy(o, p + f[6].off, f[6].len);
        o += f[6].len;
    }
    if (f[10].n) {
        t->n_int64_val = f[10].n;
        t->int64_val = (int64_t *)o;
        size_t r = f[10].off;
        for (size_t k = 0; k < f[10].n; k++) {
            uint64_t v = 0;
            rd_varint(p, &r, f[10].off + f[10].len, &v, &unused);
            t->int64_val[k] = (int64_t)v;
        }
        o += f[10].n * sizeof(int64_t);
    }
    if (f[5].n) {
        t->n_float_val = f[5].n;
        t->float_val = (float *)o;
        memcpy(o, p + f[5].off, f[5].len);
        o += f[5].len;
    }
    for (unsigned fn = 7; fn <= 13; fn += 6) {
        if (!f[fn].n) continue;
        int32_t *a = (int32_t *)o;
        size_t r = f[fn].off;
        for (size_t k = 0; k < f[fn].n; k++) {
            uint64_t v = 0;
            rd_varint(p, &r, f[fn].off + f[fn].len, &v, &unused);
            a[k] = (int32_t)(uint32_t)v;
        }
        if (fn == 7) {
            t->n_int_val = f[fn].n;
            t->int_val = a;
        } else {
            t->n_half_val = f[fn].n;
            t->half_val = a;
        }
        o += f[fn].n * sizeof(int32_t);
    }
    if (f[11].n) {
        t->n_bool_val = f[11].n;
        t->bool_val = (protobuf_c_boolean *)o;
        size_t r = f[11].off;
        for (size_t k = 0; k < f[11].n; k++) {
            uint64_t v = 0;
            rd_varint(p, &r, f[11].off + f[11].len, &v, &unused);
            t->bool_val[k] = v != 0;
        }
        o += f[11].n * sizeof(protobuf_c_boolean);
    }
    if (lend) {
        if (w->n_lent == w->cap_lent) {
            size_t ncap = w->cap_lent ? w->cap_lent * 2 : 256;
            Tensorflow__TensorProto **nl = realloc(w->lent, ncap * sizeof *nl);
            if (!nl) return GN_ERR_NOMEM;
            w->lent = nl;
            w->cap_lent = ncap;
        }
        w->lent[w->n_lent++] = t;
        w->lent_bytes += n;
    }
    if (f[4].n) {
        t->tensor_content.len = f[4].len;
        if (lend) {
            /* the image is this graph's own copy of the file: a content not
             * aligned for its element type is moved back over its own framing
             * (already read) to the aligned address below it, so that kernels
             * and folded results read it in place instead of copying it. Its
             * encoding is then packed again on writing (the same bytes: only a
             * canonical encoding would have been kept). Values small enough
             * for the sharing table are left where they are. */
            uint8_t *c = (uint8_t *)(uintptr_t)(p + f[4].off);
            size_t esz = gn__dtype_size((int32_t)dtype), align = esz > 8 ? 8 : esz;
            size_t r = align > 1 && n > WG_SHARE_MAX ? (size_t)((uintptr_t)c % align) : 0;
            if (r && f[4].off >= r) {
                /* moved after decoding, many at once on two threads
                 * (gn__move_all); nothing reads the bytes before */
                if (w->n_moves == w->cap_moves) {
                    size_t ncap = w->cap_moves ? w->cap_moves * 2 : 256;
                    gn__move *nm = realloc(w->moves, ncap * sizeof *nm);
                    if (!nm) return GN_ERR_NOMEM;
                    w->moves = nm;
                    w->cap_moves = ncap;
                }
                w->moves[w->n_moves++] = (gn__move){c - r, c, f[4].len};
                c -= r;
                canon = false;
            }
            t->tensor_content.data = c;
        } else {
            t->tensor_content.data = o;
            memcpy(o, p + f[4].off, f[4].len);
            o += f[4].len;
        }
    }
    *enc = 0;
    if (canon) {
        if (lend) o = (uint8_t *)(uintptr_t)p;
        else memcpy(o, p, n);
        gn_graph *g = w->g;
        if (g->n_encs == g->cap_encs) {
            uint32_t ncap = g->cap_encs ? g->cap_encs * 2 : 1024;
            if (ncap < g->cap_encs) return GN_ERR_NOMEM;
            gn__attr_enc *ne = realloc(g->encs, (size_t)ncap * sizeof *ne);
            if (!ne) return GN_ERR_NOMEM;
            g->encs = ne;
            g->cap_encs = ncap;
            if (!g->n_encs) g->encs[g->n_encs++] = (gn__attr_enc){NULL, NULL, 0};
        }
        g->encs[g->n_encs] = (gn__attr_enc){av, o, n};
        *enc = g->n_encs++;
    }
    *out = av;
    return GN_OK;
#else
    (void)w;
    (void)p;
    (void)n;
    (void)out;
    (void)enc;
    return GN_ERR_PARSE;
#endif
}

/* The AttrValue encoded in p[0..n): GN_OK with *out and *enc (0: none);
 * GN_ERR_PARSE when its framing is bad; GN_ERR_NOMEM. */
static gn_status attr_value(wdec *w, const uint8_t *p, size_t n, const Tensorflow__AttrValue **out, uint32_t *enc,
                            uint32_t k)
{
    vtab *t = &w->vals;
    uint64_t *slot = NULL;
    uint64_t h = 0;
    if (n <= WG_SHARE_MAX) {
        if ((t->n == t->cap_e || (t->n + 1) * 2 > t->cap) && !vtab_grow(t)) return GN_ERR_NOMEM;
        const struct prehash *ph = w->vpre[k & 1];
        size_t off = (size_t)(p - w->d), i = 0;
        while (i < GN__ARRAY_LEN(w->vpre[0]) && ph[i].off != off && ph[i].off != SIZE_MAX) i++;
        h = i < GN__ARRAY_LEN(w->vpre[0]) && ph[i].off == off && ph[i].len == n ? ph[i].h : gn__hash_bytes(p, n);
        size_t j = (size_t)h & (t->cap - 1);
        while (t->s[j]) {
            if ((t->s[j] >> 32) == (h >> 32)) {
                const vent *e = &t->e[(uint32_t)t->s[j] - 1];
                if (e->len == n && memcmp(e->p, p, n) == 0) {
                    *out = e->v;
                    *enc = e->enc;
                    return GN_OK;
                }
            }
            j = (j + 1) & (t->cap - 1);
        }
        slot = &t->s[j];
    }
    *enc = 0;
    gn_status s = fast_tensor_value(w, p, n, out, enc);
    if (s == GN_ERR_NOMEM) return s;
    if (s != GN_OK) {
        /* GraphDef > NodeDef > attr entry > AttrValue: three levels used */
        if (gn__wire_check(&tensorflow__attr_value__descriptor, p, n, GN__MAX_PROTO_DEPTH - 3, &w->tmp) != GN_OK)
            return w->tmp.code == GN_ERR_NOMEM ? GN_ERR_NOMEM : GN_ERR_PARSE;
        ProtobufCMessage *m = protobuf_c_message_unpack(&tensorflow__attr_value__descriptor, &w->alloc, n, p);
        if (!m) return w->blob->arena.oom ? GN_ERR_NOMEM : GN_ERR_PARSE;
        *out = (const Tensorflow__AttrValue *)m;
    }
    if (slot) {
        t->e[t->n] = (vent){h, p, *out, (uint32_t)n, *enc};
        *slot = (h >> 32 << 32) | (uint64_t)(++t->n);
    }
    return GN_OK;
}

/* ---- one NodeDef ------------------------------------------------------------------- */
#define WG_RECENT 4096

/* Node by name for gn__graph_try_resolve_inputs: the recent names first. */
static gn_id find_recent(void *ctx, const char *s, size_t n)
{
    wdec *w = ctx;
    const gn_graph *g = w->g;
    uint64_t h = gn__hash_bytes(s, n);
    struct rname *r = &w->rn[h & (WG_RECENT - 1)];
    uint32_t id;
    if (r->h == h && gn__strlen(g, r->id) == n && memcmp(gn__str(g, r->id), s, n) == 0) {
        id = r->id;
    } else {
        id = gn__intern_find_hashed(g, s, n, h);
        if (id == UINT32_MAX) return GN_NONE;
    }
    if (id >= g->node_of_name_cap) return GN_NONE;
    gn_id node = g->node_of_name[id];
    if (node != GN_NONE && (g->nodes[node].flags & GN__NODE_DEAD)) return GN_NONE;
    return node;
}

static bool push_input(wdec *w, const char *p, size_t n)
{
    if (w->n_in == w->cap_in) {
        size_t ncap = w->cap_in ? w->cap_in * 2 : 1024;
        gn__strslice *ni = realloc(w->in, ncap * sizeof *ni);
        if (!ni) return false;
        w->in = ni;
        w->cap_in = ncap;
    }
    w->in[w->n_in++] = (gn__strslice){p, n};
    return true;
}

static int key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* A NodeDef the fast path does not take: checked and unpacked by protobuf-c,
 * added by gn__graph_add_nodedef (which also reports what is wrong with it). */
static gn_status slow_node(wdec *w, size_t off, size_t n, uint32_t k)
{
    gn_graph *g = w->g;
    w->n_in = w->in_start[k];
    /* GraphDef > NodeDef: one level used */
    if (gn__wire_check(&tensorflow__node_def__descriptor, w->d + off, n, GN__MAX_PROTO_DEPTH - 1, &w->tmp) != GN_OK)
        return w->tmp.code == GN_ERR_NOMEM ? gn__fail(&g->err, GN_ERR_NOMEM, "out of memory") : GN_ERR_PARSE;
    Tensorflow__NodeDef *nd =
        (Tensorflow__NodeDef *)protobuf_c_message_unpack(&tensorflow__node_def__descriptor, &w->alloc, n, w->d + off);
    if (!nd) return w->blob->arena.oom ? gn__fail(&g->err, GN_ERR_NOMEM, "out of memory") : GN_ERR_PARSE;
    GN_TRY(gn__graph_add_nodedef(g, nd, k, w->src));
    for (size_t i = 0; i < nd->n_input; i++) {
        const char *s = nd->input[i] ? nd->input[i] : "";
        if (!push_input(w, s, strlen(s))) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    return GN_OK;
}

typedef struct slice {
    size_t off, len;
} slice;

/* Reads the attr map entry at [p, e): key and value, each exactly once. */
static bool read_entry(const uint8_t *d, size_t p, size_t e, slice *key, slice *val)
{
    bool hk = false, hv = false;
    while (p < e) {
        uint64_t tag, l;
        if (!get_varint(d, &p, e, 5, &tag) || (tag & 7) != 2) return false;
        if (!get_varint(d, &p, e, 5, &l) || l > e - p) return false;
        if (tag == ((1 << 3) | 2) && !hk) {
            *key = (slice){p, (size_t)l};
            hk = true;
        } else if (tag == ((2 << 3) | 2) && !hv) {
            *val = (slice){p, (size_t)l};
            hv = true;
        } else {
            return false;
        }
        p += (size_t)l;
    }
    return hk && hv;
}

static inline bool has_nul(const uint8_t *p, size_t n) { return n && memchr(p, 0, n) != NULL; }

static gn_status fast_node(wdec *w, size_t off, size_t n, uint32_t k)
{
    gn_graph *g = w->g;
    const uint8_t *d = w->d;
    size_t p = off, e = off + n;
    slice name = {0, 0}, op = {0, 0}, dev = {0, 0};
    bool hn = false, ho = false, hd = false;
    size_t na = 0, nfields = 0;
    w->in_start[k] = (uint32_t)w->n_in;
    while (p < e) {
        uint64_t tag, l;
        if (!get_varint(d, &p, e, 5, &tag) || (tag & 7) != 2) return slow_node(w, off, n, k);
        if (!get_varint(d, &p, e, 5, &l) || l > e - p) return slow_node(w, off, n, k);
        size_t fo = p;
        p += (size_t)l;
        if (++nfields > WG_MAX_FIELDS) return slow_node(w, off, n, k);
        switch (tag >> 3) {
        case 1:
            if (hn || has_nul(d + fo, l)) return slow_node(w, off, n, k);
            name = (slice){fo, (size_t)l};
            hn = true;
            break;
        case 2:
            if (ho || has_nul(d + fo, l)) return slow_node(w, off, n, k);
            op = (slice){fo, (size_t)l};
            ho = true;
            break;
        case 3:
            if (has_nul(d + fo, l)) return slow_node(w, off, n, k);
            if (!push_input(w, (const char *)d + fo, (size_t)l)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        case 4:
            if (hd || has_nul(d + fo, l)) return slow_node(w, off, n, k);
            dev = (slice){fo, (size_t)l};
            hd = true;
            break;
        case 5: {
            slice key = {0, 0}, val = {0, 0};
            if (!read_entry(d, fo, p, &key, &val) || has_nul(d + key.off, key.len)) return slow_node(w, off, n, k);
            if (na == w->cap_attrs) {
                size_t ncap = w->cap_attrs ? w->cap_attrs * 2 : 16;
                struct tattr *nt = realloc(w->attrs, ncap * sizeof *nt);
                if (!nt) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                w->attrs = nt;
                w->cap_attrs = ncap;
            }
            const Tensorflow__AttrValue *v;
            uint32_t enc;
            gn_status s = attr_value(w, d + val.off, val.len, &v, &enc, k);
            if (s == GN_ERR_NOMEM) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            if (s != GN_OK) return s;
            /* insertion by key: TensorFlow writes them sorted already */
            const char *kp = (const char *)d + key.off;
            size_t j = na++;
            while (j > 0 && key_cmp(w->attrs[j - 1].kp, w->attrs[j - 1].kl, kp, key.len) > 0) {
                w->attrs[j] = w->attrs[j - 1];
                j--;
            }
            if (j > 0 && key_cmp(w->attrs[j - 1].kp, w->attrs[j - 1].kl, kp, key.len) == 0)
                return slow_node(w, off, n, k); /* the same key twice */
            w->attrs[j] = (struct tattr){0, kp, key.len, enc, v};
            break;
        }
        default:
            return slow_node(w, off, n, k);
        }
    }
    if (!name.len || !op.len) return slow_node(w, off, n, k);
    const struct prehash *ph = &w->pre[k & 1];
    uint64_t nh = ph->off == name.off && ph->len == name.len ? ph->h : gn__hash_bytes(d + name.off, name.len);
    uint32_t nm = gn__intern_hashed(g, (const char *)d + name.off, name.len, nh);
    if (nm == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    if (nm < g->node_of_name_cap && g->node_of_name[nm] != GN_NONE) return slow_node(w, off, n, k); /* duplicate */
    uint32_t o = intern_cached(w, d + op.off, op.len);
    uint32_t dv = dev.len ? intern_cached(w, d + dev.off, dev.len) : 0;
    if (o == UINT32_MAX || dv == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    gn__attr *at = NULL;
    if (na) {
        at = gn__arena_alloc(&g->arena, na * sizeof *at, 8);
        if (!at) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < na; i++) {
            uint32_t kid = intern_cached(w, (const uint8_t *)w->attrs[i].kp, w->attrs[i].kl);
            if (kid == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            at[i] = (gn__attr){.key = kid, .enc = w->attrs[i].enc, .value = w->attrs[i].v};
        }
    }
    gn_id id;
    GN_TRY(gn__node_add_interned(g, nm, o, &id));
    gn__node *nd = &g->nodes[id];
    nd->orig_index = k;
    nd->device = dv;
    nd->attr = at;
    nd->n_attr = nd->cap_attr = (uint32_t)na;
    w->rn[nh & (WG_RECENT - 1)] = (struct rname){nh, nm};
    /* inputs naming nodes already added are resolved now, while their names
     * are still in cache; the rest once every node exists */
    bool done;
    /* w->in is NULL until some node has an input: no pointer arithmetic on it then */
    GN_TRY(gn__graph_try_resolve_inputs(g, id, w->in ? w->in + w->in_start[k] : NULL,
                                        (uint32_t)(w->n_in - w->in_start[k]), find_recent, w, &done));
    if (done) {
        w->done[k] = 1;
        w->n_in = w->in_start[k];
    }
    return GN_OK;
}

/* ---- the GraphDef ------------------------------------------------------------------ */
/* Skips one field of wire type wt at *p; false when it does not fit or wt is
 * not one protobuf-c reads. */
static bool skip_field(const uint8_t *d, size_t *p, size_t e, unsigned wt)
{
    uint64_t v;
    switch (wt) {
    case 0: return get_varint(d, p, e, 10, &v);
    case 1:
        if (e - *p < 8) return false;
        *p += 8;
        return true;
    case 5:
        if (e - *p < 4) return false;
        *p += 4;
        return true;
    case 2:
        if (!get_varint(d, p, e, 5, &v) || v > e - *p) return false;
        *p += (size_t)v;
        return true;
    default: return false;
    }
}

/* Hashes node k's name (when it is the record's first field, as TensorFlow
 * writes it) and prefetches its string table slot. */
static void prehash_name(wdec *w, slice nd, size_t k)
{
    const uint8_t *d = w->d;
    struct prehash *ph = &w->pre[k & 1];
    ph->off = SIZE_MAX;
    w->vpre[k & 1][0].off = SIZE_MAX;
    if (nd.len < 2 || d[nd.off] != 0x0a || d[nd.off + 1] >= 0x80 || (size_t)d[nd.off + 1] + 2 > nd.len) return;
    *ph = (struct prehash){nd.off + 2, d[nd.off + 1], gn__hash_bytes(d + nd.off + 2, d[nd.off + 1])};
#if defined(__GNUC__)
    const gn__strtab *t = &w->g->names;
    if (t->nslots) __builtin_prefetch(&t->slots[(uint32_t)ph->h & (t->nslots - 1)]);
#endif
    /* attr values: the first few, in small records only */
    struct prehash *vp = w->vpre[k & 1];
    size_t nv = 0, p = nd.off, e = nd.off + nd.len;
    while (p < e && nv < GN__ARRAY_LEN(w->vpre[0])) {
        uint64_t tag, l;
        if (!get_varint(d, &p, e, 5, &tag) || (tag & 7) != 2 || !get_varint(d, &p, e, 5, &l) || l > e - p) break;
        size_t fe = p + (size_t)l;
        slice key, val;
        if (tag == ((5 << 3) | 2) && read_entry(d, p, fe, &key, &val) && val.len <= WG_SHARE_MAX) {
            vp[nv] = (struct prehash){val.off, val.len, gn__hash_bytes(d + val.off, val.len)};
#if defined(__GNUC__)
            if (w->vals.cap) __builtin_prefetch(&w->vals.s[(size_t)vp[nv].h & (w->vals.cap - 1)]);
#endif
            nv++;
        }
        p = fe;
    }
    if (nv < GN__ARRAY_LEN(w->vpre[0])) vp[nv].off = SIZE_MAX;
}

static gn_status decode(wdec *w, bool *empty)
{
    gn_graph *g = w->g;
    const uint8_t *d = w->d;
    size_t len = w->len, p = 0;
    if (len > GN__WIRE_MAX_LEN) return GN_ERR_PARSE;
    /* top level: node records, and the byte ranges of everything else */
    slice *nodes = NULL, *rest = NULL;
    size_t n_nodes = 0, cap_nodes = 0, n_rest = 0, cap_rest = 0, rest_bytes = 0;
    gn_status s = GN_OK;
    while (p < len) {
        size_t start = p;
        uint64_t tag, l;
        if (!get_varint(d, &p, len, 5, &tag) || (tag >> 3) == 0 || tag > UINT32_MAX) {
            s = GN_ERR_PARSE;
            break;
        }
        if (tag == ((1 << 3) | 2)) {
            if (!get_varint(d, &p, len, 5, &l) || l > len - p) {
                s = GN_ERR_PARSE;
                break;
            }
            if (n_nodes == cap_nodes) {
                cap_nodes = cap_nodes ? cap_nodes * 2 : (len / 64 > 1024 ? len / 64 : 1024);
                slice *nn = realloc(nodes, cap_nodes * sizeof *nn);
                if (!nn) {
                    s = GN_ERR_NOMEM;
                    break;
                }
                nodes = nn;
            }
            nodes[n_nodes++] = (slice){p, (size_t)l};
            p += (size_t)l;
            continue;
        }
        if ((tag >> 3) == 1 || !skip_field(d, &p, len, (unsigned)(tag & 7))) {
            s = GN_ERR_PARSE;
            break;
        }
        if (n_rest && rest[n_rest - 1].off + rest[n_rest - 1].len == start) {
            rest[n_rest - 1].len += p - start;
        } else {
            if (n_rest == cap_rest) {
                cap_rest = cap_rest ? cap_rest * 2 : 8;
                slice *nr = realloc(rest, cap_rest * sizeof *nr);
                if (!nr) {
                    s = GN_ERR_NOMEM;
                    break;
                }
                rest = nr;
            }
            rest[n_rest++] = (slice){start, p - start};
        }
        rest_bytes += p - start;
    }
    if (s == GN_OK && n_nodes + n_rest > WG_MAX_FIELDS) s = GN_ERR_PARSE;
    /* everything but the nodes, as one GraphDef */
    Tensorflow__GraphDef *gd = NULL;
    if (s == GN_OK && rest_bytes) {
        uint8_t *buf = malloc(rest_bytes);
        if (!buf) {
            s = GN_ERR_NOMEM;
        } else {
            size_t o = 0;
            for (size_t i = 0; i < n_rest; i++) {
                memcpy(buf + o, d + rest[i].off, rest[i].len);
                o += rest[i].len;
            }
            if (gn__wire_check(&tensorflow__graph_def__descriptor, buf, rest_bytes, GN__MAX_PROTO_DEPTH, &w->tmp) !=
                GN_OK)
                s = w->tmp.code == GN_ERR_NOMEM ? GN_ERR_NOMEM : GN_ERR_PARSE;
            else if (!(gd = (Tensorflow__GraphDef *)protobuf_c_message_unpack(&tensorflow__graph_def__descriptor,
                                                                               &w->alloc, rest_bytes, buf)))
                s = w->blob->arena.oom ? GN_ERR_NOMEM : GN_ERR_PARSE;
            free(buf);
        }
    } else if (s == GN_OK) {
        gd = gn__arena_alloc(&w->blob->arena, sizeof *gd, 8);
        if (!gd) s = GN_ERR_NOMEM;
        else tensorflow__graph_def__init(gd);
    }
    free(rest);
    if (s == GN_ERR_NOMEM) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    if (s != GN_OK) {
        free(nodes);
        return s;
    }
    if (gd->n_node) {
        /* cannot happen: field 1 records were all taken out */
        free(nodes);
        return GN_ERR_PARSE;
    }
    if (n_nodes == 0 && (!gd->library || gd->library->n_function == 0)) {
        free(nodes);
        *empty = true;
        return GN_OK;
    }
    s = gn__graph_begin_graphdef(g, gd, w->blob, n_nodes, w->src);
    if (s == GN_OK && !gn__intern_reserve(g, n_nodes)) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        w->in_start = malloc((n_nodes + 1) * sizeof *w->in_start);
        w->done = calloc(n_nodes + 1, 1);
        w->rn = calloc(WG_RECENT, sizeof *w->rn);
        if (!w->in_start || !w->done || !w->rn) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < n_nodes && s == GN_OK; k++) {
        if (w->n_in > UINT32_MAX - 1) {
            s = gn__fail(&g->err, GN_ERR_GRAPH, "too many inputs");
            break;
        }
        if (k + 1 < n_nodes) prehash_name(w, nodes[k + 1], k + 1);
        s = fast_node(w, nodes[k].off, nodes[k].len, (uint32_t)k);
    }
    free(nodes);
    if (s != GN_OK) return s;
    w->in_start[n_nodes] = (uint32_t)w->n_in;
    for (size_t k = 0; k < n_nodes; k++)
        if (!w->done[k])
            GN_TRY(gn__graph_resolve_inputs(g, (gn_id)k, w->in ? w->in + w->in_start[k] : NULL, w->in_start[k + 1] - w->in_start[k],
                                            (uint32_t)k, w->src));
    return gn__graph_build_fanouts(g);
}

/* The image stays with the graph when at least half its bytes are values
 * pointing into it (a model of weights); otherwise those values get copies of
 * their bytes and the graph lets the image go, so a graph of small tensors
 * keeps no more memory than before. */
static gn_status keep_or_drop_image(wdec *w, gn__blob *image)
{
    gn_graph *g = w->g;
    if (w->lent_bytes && w->lent_bytes >= w->len / 2) return GN_OK;
    const uint8_t *lo = w->d, *hi = w->d + w->len;
    for (size_t i = 0; i < w->n_lent; i++) {
        ProtobufCBinaryData *c = &w->lent[i]->tensor_content;
        if (!c->len || c->data < lo || c->data >= hi) continue;
        uint8_t *m = gn__arena_memdup(&w->blob->arena, c->data, c->len);
        if (!m) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        c->data = m;
    }
    for (uint32_t k = 1; k < g->n_encs && w->n_lent; k++) {
        gn__attr_enc *e = &g->encs[k];
        if (e->bytes < lo || e->bytes >= hi) continue;
        uint8_t *m = gn__arena_memdup(&w->blob->arena, e->bytes, e->len);
        if (!m) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        e->bytes = m;
    }
    gn__graph_drop_blob(g, image);
    return GN_OK;
}

gn_status gn__graph_from_wire(gn_graph *g, const uint8_t *data, size_t len, gn__blob *blob, gn__blob *image,
                              const gn__source *src, bool *framing, bool *empty)
{
    *framing = false;
    *empty = false;
    if (image && gn__graph_adopt_blob(g, image) != GN_OK) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    wdec w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.d = data;
    w.len = len;
    w.blob = blob;
    w.lend = image != NULL;
    w.src = src;
    gn__arena_pb_allocator(&blob->arena, &w.alloc);
    gn_status s = decode(&w, empty);
    if (s == GN_OK) gn__move_all(w.moves, w.n_moves);
    if (image && s == GN_OK) s = keep_or_drop_image(&w, image);
    free(w.moves);
    free(w.lent);
    free(w.vals.s);
    free(w.vals.e);
    free(w.in);
    free(w.in_start);
    free(w.done);
    free(w.rn);
    free(w.attrs);
    if (s == GN_OK || s == GN_ERR_NOMEM) return s;
    /* A framing error anywhere comes first, worded by the whole-image check. */
    gn__err e;
    gn__err_clear(&e);
    if (gn__wire_check(&tensorflow__graph_def__descriptor, data, len, GN__MAX_PROTO_DEPTH, &e) != GN_OK) {
        *framing = true;
        g->err = e;
        return e.code;
    }
    if (s == GN_ERR_PARSE && g->err.code == GN_OK) {
        /* protobuf-c refused what the check accepts */
        *framing = true;
        return gn__fail(&g->err, GN_ERR_PARSE, "not a valid %s", tensorflow__graph_def__descriptor.name);
    }
    return s;
}

/* ---- writing --------------------------------------------------------------------- */
typedef struct pslot {
    const Tensorflow__AttrValue *v;   /* NULL: empty */
    size_t size;                      /* packed size */
    size_t off;                       /* in the cache, SIZE_MAX when not cached */
} pslot;

/* What the sizing pass found for one attr value, read back in order by the
 * writing pass (so that pass looks nothing up). */
typedef struct vsize {
    uint32_t size;        /* packed size */
    uint32_t off;         /* in the cache; VS_PACK: packed in place; VS_ENC: the loaded bytes */
} vsize;
#define VS_PACK UINT32_MAX
#define VS_ENC (UINT32_MAX - 1)
/* Gathered (gn__graph_write_binary_pieces): the loaded bytes, left where they
 * are; a tensor whose content is left where it is, the rest written here. */
#define VS_ENC_G (UINT32_MAX - 2)
#define VS_TENSOR_G (UINT32_MAX - 3)
#define VS_FIRST_SPECIAL VS_TENSOR_G
/* Values and tensor contents at least this large are gathered. */
#define WG_GATHER_MIN ((size_t)32 << 10)

/* The bytes an attr was loaded from, when they still encode its value. */
static inline const gn__attr_enc *attr_enc(const gn_graph *g, const gn__attr *a)
{
    return a->enc && a->enc < g->n_encs && g->encs[a->enc].value == a->value ? &g->encs[a->enc] : NULL;
}

static inline size_t ld_size(size_t n) { return 1 + varint_size(n) + n; }  /* tag < 128 */

typedef struct wenc {
    pslot *s;
    size_t n, cap;
    gn__buf cache;
    pslot recent[256];    /* last values looked up, by address */
    vsize *vs;            /* one per attr value of the plain live nodes, in order */
    size_t n_vs, cap_vs;
    bool gather;          /* large values already in memory become pieces */
    size_t gathered;      /* bytes of the pieces */
    size_t node_gathered; /* of the node being written */
    gn__wire_piece *pieces;
    size_t n_pieces;      /* counted while sizing, filled while writing */
} wenc;

/* The TensorProto of v holding only dtype, shape, version and one large
 * field of raw bytes (tensor_content, or the packed float_val / double_val,
 * whose wire bytes are the array's on a little-endian host): packed as dtype,
 * shape, version (*head), then that field (tag *tag, payload *p, *len): the
 * payload can be gathered. *tsize: the TensorProto's packed size. */
static bool tensor_gatherable(const Tensorflow__AttrValue *v, size_t size, Tensorflow__TensorProto *head,
                              size_t *tsize, uint8_t *tag, const uint8_t **p, size_t *len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    const Tensorflow__TensorProto *tp = v->tensor;
    if (tp->tensor_content.len >= WG_GATHER_MIN) {
        *tag = 0x22;
        *p = tp->tensor_content.data;
        *len = tp->tensor_content.len;
    } else if (tp->n_float_val >= WG_GATHER_MIN / sizeof(float)) {
        *tag = 0x2a;
        *p = (const uint8_t *)tp->float_val;
        *len = tp->n_float_val * sizeof(float);
    } else if (tp->n_double_val >= WG_GATHER_MIN / sizeof(double)) {
        *tag = 0x32;
        *p = (const uint8_t *)tp->double_val;
        *len = tp->n_double_val * sizeof(double);
    } else {
        return false;
    }
    tensorflow__tensor_proto__init(head);
    head->dtype = tp->dtype;
    head->tensor_shape = tp->tensor_shape;
    head->version_number = tp->version_number;
    size_t ts = protobuf_c_message_get_packed_size(&head->base) + ld_size(*len);
    /* any other field of the tensor or the value would add bytes */
    if (size != ld_size(ts)) return false;
    *tsize = ts;
    return true;
#else
    (void)v, (void)size, (void)head, (void)tsize, (void)tag, (void)p, (void)len;
    return false;
#endif
}

/* Values up to this size are packed once and copied; larger ones packed in place. */
#define WG_CACHE_MAX 512

static bool ptab_grow(wenc *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 1024;
    pslot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->s[i].v) continue;
        size_t j = (size_t)gn__hash_bytes(&t->s[i].v, sizeof t->s[i].v) & (ncap - 1);
        while (ns[j].v) j = (j + 1) & (ncap - 1);
        ns[j] = t->s[i];
    }
    free(t->s);
    t->s = ns;
    t->cap = ncap;
    return true;
}

static const pslot *packed_slow(wenc *t, const Tensorflow__AttrValue *v);

static inline const pslot *packed(wenc *t, const Tensorflow__AttrValue *v)
{
    pslot *r = &t->recent[((uintptr_t)v >> 4) & 255];
    if (r->v == v) return r;
    const pslot *ps = packed_slow(t, v);
    if (ps) *r = *ps;
    return ps;
}

static const pslot *packed_slow(wenc *t, const Tensorflow__AttrValue *v)
{
    if ((t->n + 1) * 2 > t->cap && !ptab_grow(t)) return NULL;
    size_t j = (size_t)gn__hash_bytes(&v, sizeof v) & (t->cap - 1);
    while (t->s[j].v) {
        if (t->s[j].v == v) return &t->s[j];
        j = (j + 1) & (t->cap - 1);
    }
    size_t size = protobuf_c_message_get_packed_size(&v->base);
    size_t off = SIZE_MAX;
    if (size <= WG_CACHE_MAX) {
        if (!gn__buf_reserve(&t->cache, size)) return NULL;
        off = t->cache.len;
        size_t w = protobuf_c_message_pack(&v->base, (uint8_t *)t->cache.data + off);
        if (w != size) return NULL;
        t->cache.len += size;
    }
    t->s[j] = (pslot){v, size, off};
    t->n++;
    return &t->s[j];
}

static size_t dec_digits(uint32_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static bool plain_node(const gn__node *n)
{
    const Tensorflow__NodeDef *x = n->extra;
    return !x || (!x->base.n_unknown_fields && !x->experimental_debug_info && !x->experimental_type);
}

/* Encoded size of a plain node's NodeDef body, NULL-free: SIZE_MAX on OOM. */
static size_t node_size(const gn_graph *g, const gn__node *n, wenc *t)
{
    size_t z = 0;
    if (gn__strlen(g, n->name)) z += ld_size(gn__strlen(g, n->name));
    if (gn__strlen(g, n->op)) z += ld_size(gn__strlen(g, n->op));
    for (uint32_t k = 0; k < n->n_in; k++) {
        size_t l = gn__strlen(g, g->nodes[n->in[k].node].name);
        if (n->in[k].index) l += 1 + dec_digits(n->in[k].index);
        z += ld_size(l);
    }
    for (uint32_t k = 0; k < n->n_ctrl; k++) z += ld_size(1 + (size_t)gn__strlen(g, g->nodes[n->ctrl[k]].name));
    if (gn__strlen(g, n->device)) z += ld_size(gn__strlen(g, n->device));
    for (uint32_t k = 0; k < n->n_attr; k++) {
        size_t kl = gn__strlen(g, n->attr[k].key), e = kl ? ld_size(kl) : 0;
        if (n->attr[k].value) {
            const gn__attr_enc *ae = attr_enc(g, &n->attr[k]);
            pslot es;
            const pslot *ps = ae ? &es : packed(t, n->attr[k].value);
            if (ae) es = (pslot){ae->value, ae->len, SIZE_MAX - 1};
            if (!ps || ps->size > INT32_MAX || (ps->off < SIZE_MAX - 1 && ps->off >= VS_FIRST_SPECIAL)) return SIZE_MAX;
            if (t->n_vs == t->cap_vs) {
                size_t ncap = t->cap_vs ? t->cap_vs * 2 : 4096;
                vsize *nv = realloc(t->vs, ncap * sizeof *nv);
                if (!nv) return SIZE_MAX;
                t->vs = nv;
                t->cap_vs = ncap;
            }
            uint32_t off = ps->off == SIZE_MAX       ? VS_PACK
                           : ps->off == SIZE_MAX - 1 ? VS_ENC
                                                     : (uint32_t)ps->off;
            Tensorflow__TensorProto head;
            size_t ts, gl;
            uint8_t tag;
            const uint8_t *gp;
            if (t->gather && off == VS_ENC && ps->size >= WG_GATHER_MIN) {
                off = VS_ENC_G;
                t->gathered += ps->size;
                t->n_pieces++;
            } else if (t->gather && off == VS_PACK &&
                       tensor_gatherable(n->attr[k].value, ps->size, &head, &ts, &tag, &gp, &gl)) {
                off = VS_TENSOR_G;
                t->gathered += gl;
                t->n_pieces++;
            }
            t->vs[t->n_vs++] = (vsize){(uint32_t)ps->size, off};
            e += ld_size(ps->size);
        }
        z += ld_size(e);
    }
    return z;
}

/* Both writer sweeps go through the nodes in id order but read the name of
 * every input's producer, anywhere in memory: ask for the producers' records
 * 16 nodes ahead, their name lengths and pointers 8 ahead, and (when the
 * bytes are copied) the names themselves 4 ahead. Hints only. */
static void prefetch_input_names(const gn_graph *g, gn_id i, bool bytes)
{
    if (i + 16 < g->n_nodes && !(g->nodes[i + 16].flags & GN__NODE_DEAD)) {
        const gn__node *a = &g->nodes[i + 16];
        for (uint32_t k = 0; k < a->n_in; k++) GN__PREFETCH(&g->nodes[a->in[k].node].name);
        for (uint32_t k = 0; k < a->n_ctrl; k++) GN__PREFETCH(&g->nodes[a->ctrl[k]].name);
    }
    if (i + 8 < g->n_nodes && !(g->nodes[i + 8].flags & GN__NODE_DEAD)) {
        const gn__node *a = &g->nodes[i + 8];
        for (uint32_t k = 0; k < a->n_in + a->n_ctrl; k++) {
            uint32_t nm = g->nodes[k < a->n_in ? a->in[k].node : a->ctrl[k - a->n_in]].name;
            GN__PREFETCH(&g->names.len[nm]);
            if (bytes) GN__PREFETCH(&g->names.str[nm]);
        }
    }
    if (bytes && i + 4 < g->n_nodes && !(g->nodes[i + 4].flags & GN__NODE_DEAD)) {
        const gn__node *a = &g->nodes[i + 4];
        for (uint32_t k = 0; k < a->n_in + a->n_ctrl; k++)
            GN__PREFETCH(gn__str(g, g->nodes[k < a->n_in ? a->in[k].node : a->ctrl[k - a->n_in]].name));
    }
}

static uint8_t *put_str(uint8_t *o, uint8_t tag, const char *s, size_t n)
{
    *o++ = tag;
    o = put_varint(o, n);
    memcpy(o, s, n);
    return o + n;
}

static uint8_t *write_node(const gn_graph *g, const gn__node *n, wenc *t, size_t *vi, uint8_t *o, const uint8_t *base)
{
    if (gn__strlen(g, n->name)) o = put_str(o, 0x0a, gn__str(g, n->name), gn__strlen(g, n->name));
    if (gn__strlen(g, n->op)) o = put_str(o, 0x12, gn__str(g, n->op), gn__strlen(g, n->op));
    for (uint32_t k = 0; k < n->n_in; k++) {
        const gn__node *p = &g->nodes[n->in[k].node];
        size_t pl = gn__strlen(g, p->name);
        uint32_t ix = n->in[k].index;
        size_t il = ix ? 1 + dec_digits(ix) : 0;
        *o++ = 0x1a;
        o = put_varint(o, pl + il);
        memcpy(o, gn__str(g, p->name), pl);
        o += pl;
        if (ix) {
            *o = ':';
            for (size_t q = il - 1; q > 0; q--, ix /= 10) o[q] = (uint8_t)('0' + ix % 10);
            o += il;
        }
    }
    for (uint32_t k = 0; k < n->n_ctrl; k++) {
        const gn__node *p = &g->nodes[n->ctrl[k]];
        size_t pl = gn__strlen(g, p->name);
        *o++ = 0x1a;
        o = put_varint(o, pl + 1);
        *o++ = '^';
        memcpy(o, gn__str(g, p->name), pl);
        o += pl;
    }
    if (gn__strlen(g, n->device)) o = put_str(o, 0x22, gn__str(g, n->device), gn__strlen(g, n->device));
    for (uint32_t k = 0; k < n->n_attr; k++) {
        size_t kl = gn__strlen(g, n->attr[k].key), e = kl ? ld_size(kl) : 0;
        const vsize *vz = n->attr[k].value ? &t->vs[(*vi)++] : NULL;
        if (vz) e += ld_size(vz->size);
        *o++ = 0x2a;
        o = put_varint(o, e);
        if (kl) o = put_str(o, 0x0a, gn__str(g, n->attr[k].key), kl);
        if (vz) {
            *o++ = 0x12;
            o = put_varint(o, vz->size);
            if (vz->off == VS_ENC_G) {
                t->pieces[t->n_pieces++] = (gn__wire_piece){(size_t)(o - base), g->encs[n->attr[k].enc].bytes,
                                                            vz->size};
                t->node_gathered += vz->size;
                continue;
            }
            if (vz->off == VS_TENSOR_G) {
                Tensorflow__TensorProto head;
                size_t ts = 0, gl = 0;
                uint8_t tag = 0;
                const uint8_t *gp = NULL;
                tensor_gatherable(n->attr[k].value, vz->size, &head, &ts, &tag, &gp, &gl);
                *o++ = 0x42;
                o = put_varint(o, ts);
                o += protobuf_c_message_pack(&head.base, o);
                *o++ = tag;
                o = put_varint(o, gl);
                t->pieces[t->n_pieces++] = (gn__wire_piece){(size_t)(o - base), gp, gl};
                t->node_gathered += gl;
                continue;
            }
            if (vz->off == VS_ENC) memcpy(o, g->encs[n->attr[k].enc].bytes, vz->size);
            else if (vz->off != VS_PACK) memcpy(o, t->cache.data + vz->off, vz->size);
            else protobuf_c_message_pack(&n->attr[k].value->base, o);
            o += vz->size;
        }
    }
    return o;
}

static gn_status write_binary(gn_graph *g, gn__buf *out, bool gather, gn__wire_piece **pieces, size_t *n_pieces)
{
    wenc t;
    memset(&t, 0, sizeof t);
    t.gather = gather;
    gn__buf_init(&t.cache);
    gn__arena a;
    gn__arena_init(&a, 64 * 1024);
    gn_status s = GN_OK;
    size_t *sizes = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *sizes);
    Tensorflow__NodeDef **defs = NULL;   /* nodes packed by protobuf-c */
    Tensorflow__GraphDef *gd = NULL;
    size_t total = 0, rest = 0;
    if (!sizes) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    /* sizes first, so the output is allocated once */
    for (gn_id i = 0; i < g->n_nodes && s == GN_OK; i++) {
        prefetch_input_names(g, i, false);
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (plain_node(n)) {
            sizes[i] = node_size(g, n, &t);
            if (sizes[i] == SIZE_MAX) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        } else {
            if (!defs && !(defs = calloc(g->n_nodes, sizeof *defs))) {
                s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            if (gn__node_to_def(g, i, &a, false, &defs[i]) != GN_OK) {
                s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            sizes[i] = protobuf_c_message_get_packed_size(&defs[i]->base);
        }
        total += ld_size(sizes[i]);
    }
    if (s == GN_OK) s = gn__graph_to_graphdef_rest(g, &a, &gd, &g->err);
    if (s == GN_OK) {
        rest = protobuf_c_message_get_packed_size(&gd->base);
        total += rest;
        if (total > (size_t)INT32_MAX)
            s = gn__fail(&g->err, GN_ERR_UNSUPPORTED,
                         "GraphDef would be %zu bytes, over protobuf's 2 GiB limit (keep weights in a "
                         "SavedModel's variables instead)", total);
        else if (!gn__buf_reserve(out, total - t.gathered))
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory for %zu bytes", total - t.gathered);
        else if (t.n_pieces && !(t.pieces = malloc(t.n_pieces * sizeof *t.pieces)))
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    if (s == GN_OK) {
        uint8_t *base = (uint8_t *)out->data + out->len, *o = base;
        size_t vi = 0;
        t.n_pieces = 0;
        for (gn_id i = 0; i < g->n_nodes; i++) {
            prefetch_input_names(g, i, true);
            const gn__node *n = &g->nodes[i];
            if (n->flags & GN__NODE_DEAD) continue;
            *o++ = 0x0a;
            o = put_varint(o, sizes[i]);
            uint8_t *b = o;
            t.node_gathered = 0;
            if (defs && defs[i]) o += protobuf_c_message_pack(&defs[i]->base, o);
            else o = write_node(g, n, &t, &vi, o, base);
            if ((size_t)(o - b) + t.node_gathered != sizes[i]) {
                s = gn__fail(&g->err, GN_ERR_INTERNAL, "node '%s': wrote %zu bytes, expected %zu",
                             gn__str(g, n->name), (size_t)(o - b) + t.node_gathered, sizes[i]);
                break;
            }
        }
        if (s == GN_OK) o += protobuf_c_message_pack(&gd->base, o);
        if (s == GN_OK && (size_t)(o - base) + t.gathered != total)
            s = gn__fail(&g->err, GN_ERR_INTERNAL, "packed %zu bytes, expected %zu", (size_t)(o - base) + t.gathered,
                         total);
        if (s == GN_OK) out->len += total - t.gathered;
    }
    if (s == GN_OK && pieces) {
        *pieces = t.pieces;
        *n_pieces = t.n_pieces;
        t.pieces = NULL;
    }
    free(t.pieces);
    free(sizes);
    free(defs);
    free(t.s);
    free(t.vs);
    gn__buf_free(&t.cache);
    gn__arena_free(&a);
    return s;
}

gn_status gn__graph_write_binary(gn_graph *g, gn__buf *out) { return write_binary(g, out, false, NULL, NULL); }

gn_status gn__graph_write_binary_pieces(gn_graph *g, gn__buf *out, gn__wire_piece **pieces, size_t *n_pieces)
{
    *pieces = NULL;
    *n_pieces = 0;
    return write_binary(g, out, true, pieces, n_pieces);
}
