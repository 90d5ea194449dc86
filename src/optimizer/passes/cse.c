/* Common subgraph elimination: nodes that compute the same value are merged.
 *   cse.dedup        two nodes with the same op, device, data inputs (in any
 *                    order for a commutative op), control inputs (as a set)
 *                    and attrs: the later is merged into the earlier
 *   cse.dedup_const  the same for Const nodes (value compared by content)
 * Needs no shapes; never changes numerics.
 * Grappler: tensorflow/core/grappler/optimizers/common_subgraph_elimination.cc
 * (docs/reference_grappler.md §3.4).
 *
 * One sweep in topological order: each node's signature (op, device, inputs,
 * control inputs, attrs) is looked up in a hash table of representatives;
 * inputs name producers by id, and a producer merged earlier in the sweep was
 * already replaced by its survivor, so whole chains collapse in one sweep
 * (Grappler repeats its loop until nothing changes). Expected O(nodes + edges);
 * a big tensor is hashed by a bounded sample of its bytes and compared in full
 * only when the hashes agree.
 *
 * Who may merge (Grappler's CanDedup): not stateful (Assert and Print
 * excepted), not a placeholder, no ref input (op arg or a producer's ref
 * output), not a queue op, no in-place update, not a node that feeds an
 * in-place op through ops that forward their input, not Enter/Exit nor (a
 * conservative addition) the loop structure ops NextIteration, LoopCond,
 * ControlTrigger and a Merge fed by a NextIteration (a cond's Merge may);
 * not on an "SPU" device; a registered op (not an
 * unknown op nor a library function call). Two nodes with the same inputs and
 * control inputs are necessarily in the same while-loop frame, so frames need
 * no separate check. A preserved node (fetch, feed, function control output)
 * is never removed, but may absorb others; two preserved duplicates both stay.
 * The survivor is otherwise the node with the smaller id (earlier in the
 * source). Every duplicate found but not merged is reported with the reason. */
#include <stdlib.h>
#include <string.h>

#include "graph/tensor.h"
#include "ops/kernel.h"
#include "opdef/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_cse[] = {
    {"cse.dedup", "merge nodes with the same op, inputs, control inputs, attrs and device"},
    {"cse.dedup_const", "merge Const nodes with the same dtype, value, control inputs and device"},
    {NULL, NULL},
};

/* Tensors up to this many bytes given in typed fields (float_val ..., or the
 * short form that repeats the last value) are decoded so that two encodings
 * of one value compare equal; bigger ones compare by their encoding, a false
 * negative at worst, as Grappler allows above its own threshold
 * (tensor_content is already the canonical bytes at any size). Decoding big
 * splats would cost O(bytes) per constant. */
#define CSE_DECODE_MAX ((size_t)4096)
/* Byte strings longer than this are hashed by samples (equality is exact). */
#define CSE_HASH_FULL ((size_t)1 << 12)
#define CSE_HASH_WINDOW ((size_t)256)
#define CSE_HASH_WINDOWS 16

enum {
    ST_VISITED = 1u << 0,
    ST_IN_TABLE = 1u << 1,
    ST_KEEP = 1u << 2,     /* never removed: preserved, or a function control output */
    ST_INPLACE = 1u << 3,  /* feeds an in-place op */
    ST_PENDING = 1u << 4,  /* to re-insert after its input changed */
};

typedef struct cse {
    gn__pass_ctx *c;
    gn_graph *g;
    uint32_t n;              /* nodes at the start (ids stay below) */
    uint64_t *sig;
    gn_id *next;             /* hash chain */
    uint8_t *st;
    gn_id *bucket;
    uint32_t mask;
    gn__buf pa, pb;          /* packing scratch */
    gn__edge *ea, *eb;       /* sorted input scratch */
    gn_id *ca, *cb;          /* sorted control scratch */
    uint32_t cap_e, cap_c;
    gn_id *pending;
    uint32_t n_pending, cap_pending;
    uint32_t op_const;       /* interned "Const", UINT32_MAX if absent */
    /* modifies_inplace's answers that depend on the op string alone, per
     * interned op (0: not asked yet, 1: no, 2: yes), and whether any node can
     * carry an in-place attr at all (its key is interned in the graph) */
    uint8_t *op_inplace;
    uint32_t n_op_inplace;
    bool inplace_keys;
    uint8_t *op_info;        /* no_merge_reason's per-op part (OI_*), 0: not asked yet */
    uint32_t n_op_info;
} cse;

/* ---- hashing ------------------------------------------------------------------- */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t combine(uint64_t h, uint64_t v) { return mix64(h ^ (v + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2))); }

/* Bulk bytes: four independent lanes (the serial gn__hash_bytes is latency
 * bound, and tensor payloads dominate hashing time). */
static uint64_t hash_bulk(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
    while (n >= 32) {
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, b + 8 * k, 8);
            h[k] = (h[k] ^ w) * 0x9e3779b97f4a7c15ull;
            h[k] ^= h[k] >> 29;
        }
        b += 32;
        n -= 32;
    }
    uint64_t r = combine(combine(h[0], h[1]), combine(h[2], h[3]));
    return n ? combine(r, gn__hash_bytes(b, n)) : r;
}

/* Whole bytes when short; else the length and CSE_HASH_WINDOWS evenly spaced
 * windows (equal byte strings always hash equal). */
static uint64_t hash_sampled(const void *p, size_t n)
{
    if (n == 0) return 0;
    if (n <= CSE_HASH_FULL) return combine(hash_bulk(p, n), n);
    const uint8_t *b = p;
    uint64_t h = n;
    size_t step = (n - CSE_HASH_WINDOW) / (CSE_HASH_WINDOWS - 1);
    for (size_t i = 0; i < CSE_HASH_WINDOWS; i++) h = combine(h, hash_bulk(b + i * step, CSE_HASH_WINDOW));
    return h;
}

static gn_status pack(cse *s, gn__buf *b, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    b->len = 0;
    if (!gn__buf_reserve(b, n + 1)) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    b->len = protobuf_c_message_pack(m, (uint8_t *)b->data);
    return GN_OK;
}

/* A tensor attr in canonical form: decoded bytes (mode 1), its encoding (mode
 * 2), or (mode 3) the one typed field of a proto that holds nothing else but
 * its dtype and a plain shape: such a proto's encoding is a function of dtype,
 * shape and that array, one to one, so comparing them is comparing encodings,
 * without packing a copy of a big constant. */
typedef struct canon {
    int mode;
    int field;               /* mode 3: which typed field */
    int32_t dtype;
    int32_t rank;
    const Tensorflow__TensorShapeProto *shape;
    const void *bytes;
    size_t n;
    gn__tensor tmp;          /* owns bytes when decoded */
} canon;

static bool shape_simple(const Tensorflow__TensorShapeProto *p);

/* Mode 3 (see canon): no unknown fields, no version, no bytes fields, a plain
 * shape (or none), and exactly one non-empty repeated field among the numeric
 * ones whose in-memory elements encode one to one (bool_val, where any non-zero
 * int encodes as 1, is left to packing). */
static bool typed_only(const Tensorflow__TensorProto *t, int *field, const void **bytes, size_t *n)
{
    if (t->base.n_unknown_fields || t->version_number || t->tensor_content.len || t->float8_val.len ||
        t->n_string_val || t->n_resource_handle_val || t->n_variant_val || t->n_bool_val)
        return false;
    if (t->tensor_shape && !shape_simple(t->tensor_shape)) return false;
    const struct {
        size_t count;
        const void *data;
        size_t esz;
    } f[] = {
        {t->n_half_val, t->half_val, sizeof *t->half_val},       {t->n_float_val, t->float_val, sizeof *t->float_val},
        {t->n_double_val, t->double_val, sizeof *t->double_val}, {t->n_int_val, t->int_val, sizeof *t->int_val},
        {t->n_scomplex_val, t->scomplex_val, sizeof *t->scomplex_val},
        {t->n_int64_val, t->int64_val, sizeof *t->int64_val},
        {t->n_dcomplex_val, t->dcomplex_val, sizeof *t->dcomplex_val},
        {t->n_uint32_val, t->uint32_val, sizeof *t->uint32_val},
        {t->n_uint64_val, t->uint64_val, sizeof *t->uint64_val},
    };
    int which = -1;
    for (int i = 0; i < (int)GN__ARRAY_LEN(f); i++) {
        if (!f[i].count) continue;
        if (which >= 0) return false;
        which = i;
    }
    if (which < 0) return false;
    *field = which;
    *bytes = f[which].data;
    *n = f[which].count * f[which].esz;
    return true;
}

static gn_status tensor_canon(cse *s, const Tensorflow__TensorProto *t, gn__buf *scratch, canon *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->shape = t->tensor_shape;
    size_t esz = gn__dtype_size(t->dtype);
    int64_t numel = 1;
    bool known = t->tensor_shape && !t->tensor_shape->unknown_rank;
    for (size_t i = 0; known && i < t->tensor_shape->n_dim; i++) {
        int64_t d = t->tensor_shape->dim[i]->size;
        if (d < 0 || (d > 0 && numel > INT64_MAX / d)) known = false;
        else numel *= d;
    }
    if (!t->tensor_shape) {
        known = true; /* no shape: a scalar */
        numel = 1;
    }
    if (known && esz > 0 && numel <= (int64_t)(SIZE_MAX / esz)) {
        size_t nbytes = (size_t)numel * esz;
        out->rank = t->tensor_shape ? (int32_t)t->tensor_shape->n_dim : 0;
        if (t->tensor_content.len == nbytes && nbytes > 0) {
            out->mode = 1;
            out->bytes = t->tensor_content.data;
            out->n = nbytes;
            return GN_OK;
        }
        if (t->tensor_content.len == 0 && nbytes <= CSE_DECODE_MAX) {
            gn__err e;
            gn__err_clear(&e);
            gn_status st = gn__tensor_from_proto(t, &out->tmp, &e);
            if (st == GN_ERR_NOMEM) return gn__fail(s->c->err, st, "out of memory");
            if (st == GN_OK && out->tmp.nbytes == nbytes) {
                out->mode = 1;
                out->bytes = out->tmp.data;
                out->n = nbytes;
                return GN_OK;
            }
            gn__tensor_release(&out->tmp);
        }
    }
    if (typed_only(t, &out->field, &out->bytes, &out->n)) {
        out->mode = 3;
        return GN_OK;
    }
    GN_TRY(pack(s, scratch, &t->base));
    out->mode = 2;
    out->bytes = scratch->data;
    out->n = scratch->len;
    return GN_OK;
}

static void canon_free(canon *c) { gn__tensor_release(&c->tmp); }

static bool shapes_same(const Tensorflow__TensorShapeProto *a, const Tensorflow__TensorShapeProto *b)
{
    size_t na = a ? a->n_dim : 0, nb = b ? b->n_dim : 0;
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (a->dim[i]->size != b->dim[i]->size) return false;
    return true;
}

/* The common attr kinds are hashed and compared field by field (packing costs
 * two walks and a copy); tensors, functions, placeholders and anything with
 * unknown fields go through the packed bytes. Two values with equal packed
 * bytes are either both simple or both not, so hash and equality agree. */
static bool shape_simple(const Tensorflow__TensorShapeProto *p)
{
    if (!p || p->base.n_unknown_fields) return false;
    for (size_t i = 0; i < p->n_dim; i++)
        if (p->dim[i]->base.n_unknown_fields) return false;
    return true;
}

static bool attr_simple(const Tensorflow__AttrValue *v)
{
    if (v->base.n_unknown_fields) return false;
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S:
    case TENSORFLOW__ATTR_VALUE__VALUE_I:
    case TENSORFLOW__ATTR_VALUE__VALUE_F:
    case TENSORFLOW__ATTR_VALUE__VALUE_B:
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: return true;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: return shape_simple(v->shape);
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        const Tensorflow__AttrValue__ListValue *l = v->list;
        if (!l || l->base.n_unknown_fields || l->n_tensor || l->n_func) return false;
        for (size_t i = 0; i < l->n_shape; i++)
            if (!shape_simple(l->shape[i])) return false;
        return true;
    }
    default: return false;
    }
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t hash_shape(uint64_t h, const Tensorflow__TensorShapeProto *p)
{
    h = combine(combine(h, (uint64_t)p->unknown_rank), p->n_dim);
    for (size_t i = 0; i < p->n_dim; i++) {
        h = combine(h, (uint64_t)p->dim[i]->size);
        if (p->dim[i]->name && p->dim[i]->name[0]) h = combine(h, gn__hash_bytes(p->dim[i]->name, strlen(p->dim[i]->name)));
    }
    return h;
}

static uint64_t attr_simple_hash(const Tensorflow__AttrValue *v)
{
    uint64_t h = mix64((uint64_t)v->value_case);
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S: return combine(h, v->s.len ? gn__hash_bytes(v->s.data, v->s.len) : 0);
    case TENSORFLOW__ATTR_VALUE__VALUE_I: return combine(h, (uint64_t)v->i);
    case TENSORFLOW__ATTR_VALUE__VALUE_F: return combine(h, fbits(v->f));
    case TENSORFLOW__ATTR_VALUE__VALUE_B: return combine(h, (uint64_t)(v->b != 0));
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: return combine(h, (uint64_t)v->type);
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: return hash_shape(h, v->shape);
    default: break;
    }
    const Tensorflow__AttrValue__ListValue *l = v->list;
    h = combine(h, l->n_s);
    for (size_t i = 0; i < l->n_s; i++) h = combine(h, l->s[i].len ? gn__hash_bytes(l->s[i].data, l->s[i].len) : 0);
    h = combine(h, l->n_i);
    for (size_t i = 0; i < l->n_i; i++) h = combine(h, (uint64_t)l->i[i]);
    h = combine(h, l->n_f);
    for (size_t i = 0; i < l->n_f; i++) h = combine(h, fbits(l->f[i]));
    h = combine(h, l->n_b);
    for (size_t i = 0; i < l->n_b; i++) h = combine(h, (uint64_t)(l->b[i] != 0));
    h = combine(h, l->n_type);
    for (size_t i = 0; i < l->n_type; i++) h = combine(h, (uint64_t)l->type[i]);
    h = combine(h, l->n_shape);
    for (size_t i = 0; i < l->n_shape; i++) h = hash_shape(h, l->shape[i]);
    return h;
}

static bool bytes_equal(ProtobufCBinaryData a, ProtobufCBinaryData b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0);
}

static bool shape_equal(const Tensorflow__TensorShapeProto *a, const Tensorflow__TensorShapeProto *b)
{
    if (a->unknown_rank != b->unknown_rank || a->n_dim != b->n_dim) return false;
    for (size_t i = 0; i < a->n_dim; i++) {
        if (a->dim[i]->size != b->dim[i]->size) return false;
        const char *x = a->dim[i]->name ? a->dim[i]->name : "", *y = b->dim[i]->name ? b->dim[i]->name : "";
        if (strcmp(x, y) != 0) return false;
    }
    return true;
}

static bool attr_simple_equal(const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b)
{
    if (a->value_case != b->value_case) return false;
    switch (a->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S: return bytes_equal(a->s, b->s);
    case TENSORFLOW__ATTR_VALUE__VALUE_I: return a->i == b->i;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: return fbits(a->f) == fbits(b->f);
    case TENSORFLOW__ATTR_VALUE__VALUE_B: return (a->b != 0) == (b->b != 0);
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: return a->type == b->type;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: return shape_equal(a->shape, b->shape);
    default: break;
    }
    const Tensorflow__AttrValue__ListValue *x = a->list, *y = b->list;
    if (x->n_s != y->n_s || x->n_i != y->n_i || x->n_f != y->n_f || x->n_b != y->n_b || x->n_type != y->n_type ||
        x->n_shape != y->n_shape)
        return false;
    for (size_t i = 0; i < x->n_s; i++)
        if (!bytes_equal(x->s[i], y->s[i])) return false;
    if (x->n_i && memcmp(x->i, y->i, x->n_i * sizeof *x->i) != 0) return false;
    for (size_t i = 0; i < x->n_f; i++)
        if (fbits(x->f[i]) != fbits(y->f[i])) return false;
    for (size_t i = 0; i < x->n_b; i++)
        if ((x->b[i] != 0) != (y->b[i] != 0)) return false;
    for (size_t i = 0; i < x->n_type; i++)
        if (x->type[i] != y->type[i]) return false;
    for (size_t i = 0; i < x->n_shape; i++)
        if (!shape_equal(x->shape[i], y->shape[i])) return false;
    return true;
}

static gn_status attr_hash(cse *s, const Tensorflow__AttrValue *v, uint64_t *h)
{
    if (attr_simple(v)) {
        *h = attr_simple_hash(v);
        return GN_OK;
    }
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR && v->tensor) {
        canon cn;
        GN_TRY(tensor_canon(s, v->tensor, &s->pa, &cn));
        uint64_t x = combine((uint64_t)cn.mode, (uint64_t)(uint32_t)cn.dtype);
        if (cn.mode == 1) {
            x = combine(x, (uint64_t)cn.rank);
            for (int32_t i = 0; i < cn.rank; i++) x = combine(x, (uint64_t)cn.shape->dim[i]->size);
        } else if (cn.mode == 3) {
            x = combine(x, (uint64_t)cn.field);
            x = cn.shape ? hash_shape(combine(x, 1), cn.shape) : combine(x, 0);
        }
        *h = combine(x, hash_sampled(cn.bytes, cn.n));
        canon_free(&cn);
        return GN_OK;
    }
    GN_TRY(pack(s, &s->pa, &v->base));
    *h = gn__hash_bytes(s->pa.data, s->pa.len);
    return GN_OK;
}

static gn_status attr_equal(cse *s, const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b, bool *eq)
{
    *eq = true;
    if (a == b) return GN_OK;
    bool sa = attr_simple(a), sb = attr_simple(b);
    if (sa && sb) {
        *eq = attr_simple_equal(a, b);
        return GN_OK;
    }
    if (a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR && b->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR &&
        a->tensor && b->tensor) {
        canon ca, cb;
        GN_TRY(tensor_canon(s, a->tensor, &s->pa, &ca));
        gn_status st = tensor_canon(s, b->tensor, &s->pb, &cb);
        if (st != GN_OK) {
            canon_free(&ca);
            return st;
        }
        *eq = ca.mode == cb.mode && ca.n == cb.n && (ca.n == 0 || memcmp(ca.bytes, cb.bytes, ca.n) == 0);
        if (*eq && ca.mode == 1) *eq = ca.dtype == cb.dtype && shapes_same(ca.shape, cb.shape);
        if (*eq && ca.mode == 3)
            *eq = ca.dtype == cb.dtype && ca.field == cb.field && !ca.shape == !cb.shape &&
                  (!ca.shape || shape_equal(ca.shape, cb.shape));
        canon_free(&ca);
        canon_free(&cb);
        return GN_OK;
    }
    GN_TRY(pack(s, &s->pa, &a->base));
    GN_TRY(pack(s, &s->pb, &b->base));
    *eq = s->pa.len == s->pb.len && memcmp(s->pa.data, s->pb.data, s->pa.len) == 0;
    return GN_OK;
}

/* Commutative data inputs (Grappler's IsCommutative: the op def says so, and
 * Add on strings, concatenation, is not). */
static bool commutative(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    if (n->opdef < 0 || n->n_in < 2) return false;
    const gn__opdef *d = gn__node_opdef(g, id);
    if (!d || !((d->traits & GN__T_COMMUTATIVE) || (d->flags & GN__OPF_COMMUTATIVE))) return false;
    int t = 0;
    if (gn__attr_get_type(g, id, "T", &t) && t == TENSORFLOW__DATA_TYPE__DT_STRING) return false;
    return true;
}

static uint64_t edge_key(gn__edge e) { return ((uint64_t)e.node << 20) ^ e.index; }

static gn_status node_sig(cse *s, gn_id id, uint64_t *out)
{
    const gn__node *n = gn__node_at(s->g, id);
    uint64_t h = combine(mix64(n->op), n->device);
    h = combine(h, n->n_in);
    if (commutative(s->g, id)) {
        uint64_t acc = 0;
        for (uint32_t k = 0; k < n->n_in; k++) acc += mix64(edge_key(n->in[k]));
        h = combine(h, acc);
    } else {
        for (uint32_t k = 0; k < n->n_in; k++) h = combine(h, edge_key(n->in[k]));
    }
    uint64_t acc = 0;
    for (uint32_t k = 0; k < n->n_ctrl; k++) acc += mix64((uint64_t)n->ctrl[k] + 0x51ed27);
    h = combine(combine(h, n->n_ctrl), acc);
    for (uint32_t k = 0; k < n->n_attr; k++) {
        uint64_t v;
        GN_TRY(attr_hash(s, n->attr[k].value, &v));
        h = combine(combine(h, n->attr[k].key), v);
    }
    *out = h;
    return GN_OK;
}

/* ---- equality ------------------------------------------------------------------ */
static int cmp_edge(const void *a, const void *b)
{
    const gn__edge *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int cmp_id(const void *a, const void *b)
{
    gn_id x = *(const gn_id *)a, y = *(const gn_id *)b;
    return (x > y) - (x < y);
}

static gn_status scratch(cse *s, uint32_t ne, uint32_t nc)
{
    if (ne > s->cap_e) {
        uint32_t cap = ne * 2;
        gn__edge *a = realloc(s->ea, cap * sizeof *a);
        if (a) s->ea = a;
        gn__edge *b = a ? realloc(s->eb, cap * sizeof *b) : NULL;
        if (b) s->eb = b;
        if (!a || !b) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        s->cap_e = cap;
    }
    if (nc > s->cap_c) {
        uint32_t cap = nc * 2;
        gn_id *a = realloc(s->ca, cap * sizeof *a);
        if (a) s->ca = a;
        gn_id *b = a ? realloc(s->cb, cap * sizeof *b) : NULL;
        if (b) s->cb = b;
        if (!a || !b) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        s->cap_c = cap;
    }
    return GN_OK;
}

static gn_status same_node(cse *s, gn_id a, gn_id b, bool *eq)
{
    const gn_graph *g = s->g;
    const gn__node *x = gn__node_at(g, a), *y = gn__node_at(g, b);
    *eq = false;
    if (x->op != y->op || x->device != y->device || x->n_in != y->n_in || x->n_ctrl != y->n_ctrl ||
        x->n_attr != y->n_attr)
        return GN_OK;
    GN_TRY(scratch(s, x->n_in, x->n_ctrl));
    x = gn__node_at(g, a);
    y = gn__node_at(g, b);
    if (commutative(g, a)) {
        memcpy(s->ea, x->in, x->n_in * sizeof *s->ea);
        memcpy(s->eb, y->in, y->n_in * sizeof *s->eb);
        qsort(s->ea, x->n_in, sizeof *s->ea, cmp_edge);
        qsort(s->eb, y->n_in, sizeof *s->eb, cmp_edge);
        for (uint32_t k = 0; k < x->n_in; k++)
            if (cmp_edge(&s->ea[k], &s->eb[k]) != 0) return GN_OK;
    } else {
        for (uint32_t k = 0; k < x->n_in; k++)
            if (x->in[k].node != y->in[k].node || x->in[k].index != y->in[k].index) return GN_OK;
    }
    if (x->n_ctrl) {
        memcpy(s->ca, x->ctrl, x->n_ctrl * sizeof *s->ca);
        memcpy(s->cb, y->ctrl, y->n_ctrl * sizeof *s->cb);
        qsort(s->ca, x->n_ctrl, sizeof *s->ca, cmp_id);
        qsort(s->cb, y->n_ctrl, sizeof *s->cb, cmp_id);
        if (memcmp(s->ca, s->cb, x->n_ctrl * sizeof *s->ca) != 0) return GN_OK;
    }
    /* attrs are sorted by name: the same key set gives the same order */
    for (uint32_t k = 0; k < x->n_attr; k++)
        if (x->attr[k].key != y->attr[k].key) return GN_OK;
    for (uint32_t k = 0; k < x->n_attr; k++) {
        bool e;
        GN_TRY(attr_equal(s, x->attr[k].value, y->attr[k].value, &e));
        if (!e) return GN_OK;
    }
    *eq = true;
    return GN_OK;
}

/* ---- who may merge ----------------------------------------------------------------- */
static bool name_in(const char *op, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(op, list[i]) == 0) return true;
    return false;
}

static bool contains_nocase(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++) {
        size_t k = 0;
        while (k < n && s[k] && (s[k] | 0x20) == w[k]) k++;
        if (k == n) return true;
    }
    return false;
}

/* Grappler's ModifiesInputsInPlace. */
static bool modifies_inplace(const cse *s, gn_id id)
{
    const gn_graph *g = s->g;
    uint32_t op = g->nodes[id].op;
    uint8_t known = op < s->n_op_inplace ? s->op_inplace[op] : 0;
    if (!known) {
        known = contains_nocase(gn__str(g, op), "inplace") ? 2 : 1;
        if (op < s->n_op_inplace) s->op_inplace[op] = known;
    }
    if (known == 2) return true;
    if (!s->inplace_keys) return false;
    bool b = false;
    if (gn__attr_get_bool(g, id, "in_place", &b) && b) return true;
    return gn__attr_get_bool(g, id, "inplace", &b) && b;
}

/* Grappler's NeverForwardsInputs (op_types.cc), sorted for bsearch. */
static const char *const never_forwards[] = {
    "ArgMax", "ArgMin", "AudioSpectrogram", "AvgPool", "BatchMatMul", "BatchMatMulV2",
    "BatchNormWithGlobalNormalization", "BatchToSpace", "BatchToSpaceND", "Bincount", "BroadcastArgs",
    "BroadcastGradientArgs", "Bucketize", "CTCBeamSearchDecoder", "CTCGreedyDecoder", "CTCLoss",
    "CompareAndBitpack", "ComplexAbs", "Concat", "ConcatOffset", "ConcatV2", "Conv2D", "Copy", "CopyHost",
    "Cross", "CudnnRNN", "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNBackpropV3",
    "CudnnRNNCanonicalToParams", "CudnnRNNCanonicalToParamsV2", "CudnnRNNParamsSize",
    "CudnnRNNParamsToCanonical", "CudnnRNNParamsToCanonicalV2", "CudnnRNNV2", "CudnnRNNV3", "CumProd",
    "CumSum", "DebugNanCount", "DebugNumericSummary", "DecodeProtoV2", "DecodeWav", "DeepCopy",
    "DepthToSpace", "Dequantize", "Diag", "DiagPart", "EditDistance", "Empty", "EncodeProtoV2", "EncodeWav",
    "ExtractImagePatches", "ExtractVolumePatches", "Fill", "Gather", "GatherNd", "GatherV2",
    "HistogramFixedWidth", "InvertPermutation", "IsInf", "IsNan", "Isfinite", "LinSpace", "LowerBound",
    "MatMul", "MatrixDiag", "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagV2", "Mfcc", "Multinomial",
    "OneHot", "Pack", "ParameterizedTruncatedNormal", "PopulationCount", "RandomGamma", "RandomPoisson",
    "RandomPoissonV2", "RandomStandardNormal", "RandomUniform", "RandomUniformInt", "Range", "Rank",
    "RequantizationRange", "Requantize", "ReverseSequence", "Shape", "ShapeN", "Size", "SpaceToBatch",
    "SpaceToBatchND", "SpaceToDepth", "SparseMatMul", "Split", "SplitV", "TruncatedNormal", "Unique",
    "UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2", "Unpack", "UnravelIndex", "UpperBound", "Where",
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static bool never_forwards_inputs(const char *op)
{
    if (bsearch(&op, never_forwards, GN__ARRAY_LEN(never_forwards), sizeof never_forwards[0], cmp_str)) return true;
    return strstr(op, "Segment") != NULL || strncmp(op, "Quantize", 8) == 0;
}

/* Marks every node that feeds an in-place op through ops that may forward
 * their input buffer (Grappler: two such nodes merged would share one buffer
 * that both in-place updates write). Each node is expanded at most once. */
static gn_status mark_inplace(cse *s)
{
    gn_graph *g = s->g;
    gn_id *stack = NULL;
    uint32_t sp = 0, cap = 0;
    uint8_t *expanded = NULL;
    gn_status st = GN_OK;
    for (gn_id r = 0; r < s->n && st == GN_OK; r++) {
        if (!gn__node_live(g, r) || !modifies_inplace(s, r)) continue;
        if (!expanded && !(expanded = calloc(s->n, 1))) st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        if (st != GN_OK) break;
        sp = 0;
        if (sp == cap) {
            gn_id *ns = realloc(stack, (cap = cap ? cap * 2 : 256) * sizeof *ns);
            if (!ns) {
                st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            stack = ns;
        }
        stack[sp++] = r;
        while (sp && st == GN_OK) {
            gn_id x = stack[--sp];
            s->st[x] |= ST_INPLACE;
            if (expanded[x]) continue;
            /* Grappler continues through a node of the root's op or one that may forward */
            if (x != r && never_forwards_inputs(gn__node_op(g, x)) && !modifies_inplace(s, x)) continue;
            expanded[x] = 1;
            const gn__node *n = gn__node_at(g, x);
            uint32_t need = sp + n->n_in + n->n_ctrl;
            if (need > cap) {
                while (cap < need) cap *= 2;
                gn_id *ns = realloc(stack, cap * sizeof *ns);
                if (!ns) {
                    st = gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
                    break;
                }
                stack = ns;
            }
            for (uint32_t k = 0; k < n->n_in; k++) stack[sp++] = n->in[k].node;
            for (uint32_t k = 0; k < n->n_ctrl; k++) stack[sp++] = n->ctrl[k];
        }
    }
    free(stack);
    free(expanded);
    return st;
}

static const char *const loop_ops[] = {"Enter", "RefEnter", "Exit", "RefExit", NULL};
static const char *const loop_struct_ops[] = {"Merge", "RefMerge", "NextIteration", "RefNextIteration",
                                              "LoopCond", "ControlTrigger", NULL};
static const char *const placeholder_ops[] = {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault", NULL};

static bool has_ref_output(const gn__opdef *d)
{
    for (uint16_t i = 0; d && i < d->n_outputs; i++)
        if (d->outputs[i].is_ref) return true;
    return false;
}

/* A Merge that joins a while loop's back edge (an input from NextIteration).
 * Merges of conds (two branches) compute a value like any op and may merge,
 * as Grappler's CanDedup allows. */
static bool loop_merge(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    for (uint32_t k = 0; k < n->n_in; k++) {
        const char *p = gn__node_op(g, n->in[k].node);
        if (strcmp(p, "NextIteration") == 0 || strcmp(p, "RefNextIteration") == 0) return true;
    }
    return false;
}

/* What no_merge_reason learns from the op alone, once per interned op: the
 * first of the op's reasons (an index into op_why), whether it is a plain
 * Merge (a loop's or a cond's: the node decides) and whether it is a queue op. */
enum { OI_WHY = 7, OI_MERGE = 1 << 3, OI_QUEUE = 1 << 4, OI_KNOWN = 1 << 7 };
enum { WHY_UNREGISTERED = 1, WHY_LIBRARY, WHY_PLACEHOLDER, WHY_STATEFUL, WHY_LOOP_FRAME, WHY_LOOP_STRUCT, WHY_REF_INPUT };
static const char *const op_why[] = {
    NULL,
    "its op is not registered, so its side effects are unknown",
    "it calls a library function, whose side effects are not analyzed",
    "it is a placeholder, which must stay feedable",
    "its op is stateful",
    "Enter and Exit delimit a loop frame",
    "it is part of a while loop's structure",
    "it takes a ref input, which it may modify",
};

static uint8_t op_info_of(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    const char *op = gn__node_op(g, id);
    const gn__opdef *d = gn__node_opdef(g, id);
    uint8_t q = strstr(op, "Queue") ? OI_QUEUE : 0;
    bool merge = strcmp(op, "Merge") == 0;
    uint8_t why = 0;
    if (!d) why = WHY_UNREGISTERED;
    else if (n->opdef < 0) why = WHY_LIBRARY;
    else if (name_in(op, placeholder_ops)) why = WHY_PLACEHOLDER;
    else if ((d->flags & GN__OPF_STATEFUL) && strcmp(op, "Assert") != 0 && strcmp(op, "Print") != 0)
        why = WHY_STATEFUL;
    else if (name_in(op, loop_ops)) why = WHY_LOOP_FRAME;
    else if (name_in(op, loop_struct_ops) && !merge) why = WHY_LOOP_STRUCT;
    else
        for (uint16_t i = 0; i < d->n_inputs && !why; i++)
            if (d->inputs[i].is_ref) why = WHY_REF_INPUT;
    return (uint8_t)(OI_KNOWN | why | (merge && name_in(op, loop_struct_ops) ? OI_MERGE : 0) | q);
}

/* Why node id may not be merged with another, or NULL when it may. */
static const char *no_merge_reason(const cse *s, gn_id id)
{
    const gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) return "it is a function argument or return value";
    uint32_t op = n->op;
    uint8_t oi = op < s->n_op_info ? s->op_info[op] : 0;
    if (!oi) {
        oi = op_info_of(g, id);
        if (op < s->n_op_info) s->op_info[op] = oi;
    }
    uint8_t why = oi & OI_WHY;
    if (why && why != WHY_REF_INPUT) return op_why[why];
    if ((oi & OI_MERGE) && loop_merge(g, id)) return op_why[WHY_LOOP_STRUCT];
    if (why) return op_why[why];
    for (uint32_t k = 0; k < n->n_in; k++)
        if (has_ref_output(gn__node_opdef(g, n->in[k].node)))
            return "it reads a ref tensor (a variable) whose value may change between reads";
    if (oi & OI_QUEUE) return "it is a queue op";
    if (modifies_inplace(s, id)) return "it modifies an input in place";
    if (strstr(gn__str(g, n->device), "SPU")) return "it is placed on an SPU device";
    if (s->st[id] & ST_INPLACE) return "it feeds an op that updates its input in place";
    return NULL;
}

/* ---- the table -------------------------------------------------------------------- */
static void table_insert(cse *s, gn_id id)
{
    uint32_t b = (uint32_t)s->sig[id] & s->mask;
    s->next[id] = s->bucket[b];
    s->bucket[b] = id;
    s->st[id] |= ST_IN_TABLE;
}

static void table_remove(cse *s, gn_id id)
{
    if (!(s->st[id] & ST_IN_TABLE)) return;
    gn_id *p = &s->bucket[(uint32_t)s->sig[id] & s->mask];
    while (*p != GN_NONE && *p != id) p = &s->next[*p];
    if (*p == id) *p = s->next[id];
    s->st[id] &= (uint8_t)~ST_IN_TABLE;
}

static gn_status push_pending(cse *s, gn_id id)
{
    if (s->st[id] & ST_PENDING) return GN_OK;
    if (s->n_pending == s->cap_pending) {
        uint32_t cap = s->cap_pending ? s->cap_pending * 2 : 16;
        gn_id *p = realloc(s->pending, cap * sizeof *p);
        if (!p) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        s->pending = p;
        s->cap_pending = cap;
    }
    s->pending[s->n_pending++] = id;
    s->st[id] |= ST_PENDING;
    return GN_OK;
}

/* Rewires every consumer of loser (each output, and control) to survivor and removes loser. */
static gn_status merge_into(cse *s, gn_id loser, gn_id survivor)
{
    gn_graph *g = s->g;
    while (g->nodes[loser].n_use) {
        gn__use u = g->nodes[loser].use[0];
        uint32_t port = g->nodes[u.node].in[u.slot].index;
        GN_TRY(gn__graph_forward_output(g, (gn__edge){loser, port}, (gn__edge){survivor, port}));
    }
    GN_TRY(gn__graph_forward_control(g, loser, survivor));
    return gn__node_remove(g, loser);
}

static const char *pattern_of(const cse *s, gn_id id)
{
    return s->g->nodes[id].op == s->op_const ? "cse.dedup_const" : "cse.dedup";
}

/* v (being visited) equals u (in the table): merge, or report why not. */
static gn_status resolve(cse *s, gn_id u, gn_id v, bool *inserted_v)
{
    gn_graph *g = s->g;
    const char *pat = pattern_of(s, v);
    *inserted_v = false;
    const char *why = no_merge_reason(s, v);
    if (why) {
        gn__pass_refused(s->c, pat, g, v, "'%s' computes the same as '%s' but is not merged: %s",
                         gn__node_name(g, v), gn__node_name(g, u), why);
        return GN_OK;
    }
    why = no_merge_reason(s, u);
    if (why) {
        gn__pass_refused(s->c, pat, g, v, "'%s' computes the same as '%s' but is not merged: '%s': %s",
                         gn__node_name(g, v), gn__node_name(g, u), gn__node_name(g, u), why);
        table_insert(s, v);
        *inserted_v = true;
        return GN_OK;
    }
    bool keep_u = (s->st[u] & ST_KEEP) != 0, keep_v = (s->st[v] & ST_KEEP) != 0;
    if (keep_u && keep_v) {
        gn__pass_refused(s->c, pat, g, v, "'%s' computes the same as '%s' but is not merged: both are preserved",
                         gn__node_name(g, v), gn__node_name(g, u));
        return GN_OK;
    }
    gn_id survivor = keep_u ? u : keep_v ? v : (u < v ? u : v);
    gn_id loser = survivor == u ? v : u;
    if (survivor == v) {
        /* v takes u's place; u's consumers visited already hashed u's id */
        table_remove(s, u);
        const gn__node *n = gn__node_at(g, u);
        for (uint32_t k = 0; k < n->n_use; k++) {
            gn_id c = n->use[k].node;
            if (s->st[c] & ST_IN_TABLE) {
                table_remove(s, c);
                GN_TRY(push_pending(s, c));
                n = gn__node_at(g, u);
            }
        }
        for (uint32_t k = 0; k < n->n_cuse; k++) {
            gn_id c = n->cuse[k];
            if (s->st[c] & ST_IN_TABLE) {
                table_remove(s, c);
                GN_TRY(push_pending(s, c));
                n = gn__node_at(g, u);
            }
        }
    }
    /* names before the loser is removed */
    gn__pass_rewrote(s->c, pat, g, loser, "'%s' merged into '%s'", gn__node_name(g, loser), gn__node_name(g, survivor));
    GN_TRY(merge_into(s, loser, survivor));
    s->c->changed = true;
    if (survivor == v) {
        table_insert(s, v);
        *inserted_v = true;
        for (uint32_t i = 0; i < s->n_pending; i++) {
            gn_id c = s->pending[i];
            s->st[c] &= (uint8_t)~ST_PENDING;
            if (!gn__node_live(g, c)) continue;
            GN_TRY(node_sig(s, c, &s->sig[c]));
            table_insert(s, c);
        }
        s->n_pending = 0;
    }
    return GN_OK;
}

static gn_status visit(cse *s, gn_id v)
{
    gn_graph *g = s->g;
    s->st[v] |= ST_VISITED;
    const gn__opdef *d = gn__node_opdef(g, v);
    /* placeholders, variables, _Arg: never candidates, and not worth reporting */
    if (d && (d->traits & GN__T_SOURCE) && no_merge_reason(s, v)) return GN_OK;
    if (g->nodes[v].flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) return GN_OK;
    if (!gn__pattern_enabled(s->c, pattern_of(s, v))) return GN_OK;
    GN_TRY(node_sig(s, v, &s->sig[v]));
    gn_id u = s->bucket[(uint32_t)s->sig[v] & s->mask];
    gn_id first_equal = GN_NONE;
    for (; u != GN_NONE; u = s->next[u]) {
        if (s->sig[u] != s->sig[v]) continue;
        bool eq;
        GN_TRY(same_node(s, u, v, &eq));
        if (!eq) continue;
        if (first_equal == GN_NONE) first_equal = u;
        /* prefer a representative that may merge */
        if (!no_merge_reason(s, u)) break;
    }
    if (u == GN_NONE) u = first_equal;
    if (u == GN_NONE) {
        table_insert(s, v);
        return GN_OK;
    }
    bool ins;
    return resolve(s, u, v, &ins);
}

gn_status gn__pass_cse(gn__pass_ctx *c, gn_graph *g)
{
    cse s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.g = g;
    s.n = g->n_nodes;
    s.op_const = gn__intern_find(g, "Const", 5);
    s.inplace_keys = gn__intern_find(g, "in_place", 8) != UINT32_MAX || gn__intern_find(g, "inplace", 7) != UINT32_MAX;
    s.n_op_inplace = g->names.n;
    s.op_inplace = calloc(s.n_op_inplace ? s.n_op_inplace : 1, 1);
    if (!s.op_inplace) s.n_op_inplace = 0; /* answered each time instead */
    s.n_op_info = g->names.n;
    s.op_info = calloc(s.n_op_info ? s.n_op_info : 1, 1);
    if (!s.op_info) s.n_op_info = 0;
    gn__buf_init(&s.pa);
    gn__buf_init(&s.pb);
    gn_id *order = NULL;
    uint32_t n_order = 0;
    gn_status st = gn__graph_topo(g, &order, &n_order);
    if (st != GN_OK) {
        free(s.op_inplace);
        free(s.op_info);
        return c->err ? gn__fail(c->err, st, "%s", g->err.msg) : st;
    }
    uint32_t nb = 16;
    while (nb < 2 * (uint64_t)n_order && nb < (1u << 31)) nb <<= 1;
    s.mask = nb - 1;
    size_t n1 = s.n ? s.n : 1;
    s.sig = malloc(n1 * sizeof *s.sig);
    s.next = malloc(n1 * sizeof *s.next);
    s.st = calloc(n1, 1);
    s.bucket = malloc((size_t)nb * sizeof *s.bucket);
    if (!s.sig || !s.next || !s.st || !s.bucket) st = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    if (st == GN_OK) {
        memset(s.bucket, 0xff, (size_t)nb * sizeof *s.bucket);
        for (gn_id i = 0; i < s.n; i++)
            if (g->nodes[i].flags & GN__NODE_PRESERVE) s.st[i] |= ST_KEEP;
        const gn__function *f = c->fn_name && c->lib ? gn__graph_find_function(c->lib, c->fn_name) : NULL;
        for (uint32_t k = 0; f && f->body == g && k < f->n_control_ret; k++)
            if (f->control_ret_node[k] != GN_NONE && f->control_ret_node[k] < s.n) s.st[f->control_ret_node[k]] |= ST_KEEP;
        st = mark_inplace(&s);
    }
    for (uint32_t i = 0; st == GN_OK && i < n_order; i++) {
        if ((i & 1023) == 1023 && gn__pass_deadline_passed(c)) break;
        gn__prefetch_ahead(g, order, i, n_order);
        gn_id v = order[i];
        if (!gn__node_live(g, v)) continue;
        st = visit(&s, v);
    }
    if (st != GN_OK && c->err && !c->err->msg[0] && g->err.msg[0]) gn__fail(c->err, st, "%s", g->err.msg);
    free(order);
    free(s.sig);
    free(s.next);
    free(s.st);
    free(s.bucket);
    free(s.ea);
    free(s.eb);
    free(s.ca);
    free(s.cb);
    free(s.pending);
    free(s.op_inplace);
    free(s.op_info);
    gn__buf_free(&s.pa);
    gn__buf_free(&s.pb);
    return st;
}
