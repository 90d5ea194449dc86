/* The shape functions' private header (src/ops/shape_<family>.c): one function per op
 * or family, mirroring TensorFlow's (tensorflow/core/ops/ *.cc,
 * framework/common_shape_fns.cc). Each reads its inputs' records and attrs
 * from the context and writes output shapes and, for small integer tensors,
 * partial values. Dims and values are allocated in the table's arena; an
 * output may share an input's dims (records are immutable once written).
 * Unknown dims never cause an error; contradictions between known dims do,
 * naming the node (gn__shape_fail).
 *
 * The files split the functions by op family; the op list src/opdef/ops.def
 * maps op names to them (and ops/op_fns.h declares them from it). The helpers
 * below are shared by every family. */
#ifndef GN_OPS_SHAPE_FN_H
#define GN_OPS_SHAPE_FN_H

#include <stdlib.h>
#include <string.h>

#include "ops/op_fns.h"
#include "ops/shape.h"

typedef gn__shape_ctx ctx;

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define MAXR GN__MAX_RANK
#define MAX_VALUE_ELEMS 64
#define SB 256 /* shape string buffer */

#define NEED(c, ni, no)                                                        \
    do {                                                                       \
        if ((int64_t)(c)->n_in < (int64_t)(ni) || (int64_t)(c)->n_out < (int64_t)(no)) return GN_OK;              \
    } while (0)

/* ---- small helpers ---------------------------------------------------------- */
static inline gn_status oom(ctx *c) { return gn__shape_nomem(c); }
static inline const gn__shape *IS(const ctx *c, uint32_t i) { return &c->in[i].shape; }
static inline const gn__partial_value *VAL(const ctx *c, uint32_t i) { return i < c->n_in ? c->in[i].value : NULL; }
static inline const char *sstr(const gn__shape *s, char *buf) { return gn__shape_str(s, buf, SB); }

static inline gn__shape unknown_shape(void) { return gn__shape_unknown(); }

/* out k = a shape with these dims (copied); rank < 0 or > MAXR: unknown */
static inline gn_status set_dims(ctx *c, uint32_t k, int32_t rank, const int64_t *dims)
{
    if (k >= c->n_out) return GN_OK;
    if (rank < 0 || rank > MAXR) {
        c->out[k].shape = unknown_shape();
        return GN_OK;
    }
    gn__shape s;
    if (!gn__shape_alloc(c->arena, rank, &s)) return oom(c);
    for (int32_t i = 0; i < rank; i++) s.dims[i] = dims[i] < 0 ? -1 : dims[i];
    c->out[k].shape = s;
    return GN_OK;
}

/* out k = dims, sharing `like`'s dims when they are the same */
static inline gn_status set_dims_like(ctx *c, uint32_t k, int32_t rank, const int64_t *dims, const gn__shape *like)
{
    if (k >= c->n_out) return GN_OK;
    if (like && like->rank == rank) {
        bool same = true;
        for (int32_t i = 0; i < rank && same; i++) same = like->dims[i] == dims[i];
        if (same) {
            c->out[k].shape = *like;
            return GN_OK;
        }
    }
    return set_dims(c, k, rank, dims);
}

static inline gn_status set_scalar(ctx *c, uint32_t k)
{
    if (k < c->n_out) c->out[k].shape = (gn__shape){0, NULL};
    return GN_OK;
}

static inline gn_status set_vector(ctx *c, uint32_t k, int64_t n)
{
    return set_dims(c, k, 1, &n);
}

static inline void set_shape(ctx *c, uint32_t k, const gn__shape *s)
{
    if (k < c->n_out) c->out[k].shape = *s;
}

/* out k takes input i entirely (shape, value, handle); a pre-filled dtype stays */
static inline void pass_through(ctx *c, uint32_t k, uint32_t i)
{
    if (k >= c->n_out || i >= c->n_in) return;
    int32_t dt = c->out[k].dtype;
    c->out[k] = c->in[i];
    if (dt) c->out[k].dtype = dt;
}

/* ---- attrs ------------------------------------------------------------------ */
static inline int64_t attr_i(const ctx *c, const char *key, int64_t def)
{
    int64_t v = 0;
    return gn__attr_get_int(c->g, c->node, key, &v) ? v : def;
}

static inline bool attr_b(const ctx *c, const char *key, bool def)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, key, &v) ? v : def;
}

static inline bool attr_s(const ctx *c, const char *key, const char **s, size_t *n)
{
    return gn__attr_get_string(c->g, c->node, key, s, n);
}

static inline bool attr_s_eq(const ctx *c, const char *key, const char *want)
{
    const char *s;
    size_t n;
    if (!attr_s(c, key, &s, &n)) return false;
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

static inline const Tensorflow__AttrValue__ListValue *attr_list(const ctx *c, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST) return NULL;
    return v->list;
}

static inline const Tensorflow__TensorShapeProto *attr_shape(const ctx *c, const char *key, bool *present)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    *present = v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    return *present ? v->shape : NULL;
}

/* data_format: NCHW / NCDHW (channels first) or NHWC / NDHWC */
static inline bool channels_first(const ctx *c)
{
    const char *s;
    size_t n;
    return attr_s(c, "data_format", &s, &n) && n >= 2 && s[0] == 'N' && s[1] == 'C';
}

enum { PAD_VALID, PAD_SAME, PAD_EXPLICIT, PAD_OTHER };
static inline int padding_kind(const ctx *c)
{
    if (attr_s_eq(c, "padding", "SAME")) return PAD_SAME;
    if (attr_s_eq(c, "padding", "VALID")) return PAD_VALID;
    if (attr_s_eq(c, "padding", "EXPLICIT")) return PAD_EXPLICIT;
    return PAD_OTHER;
}

/* ---- partial values ---------------------------------------------------------- */
static inline bool vget(const gn__partial_value *v, int64_t j, int64_t *x)
{
    if (!v || j < 0 || j >= v->n || !v->known[j]) return false;
    *x = v->v[j];
    return true;
}

static inline bool vall_known(const gn__partial_value *v)
{
    if (!v) return false;
    for (int64_t j = 0; j < v->n; j++)
        if (!v->known[j]) return false;
    return true;
}

static inline bool scalar_val(const ctx *c, uint32_t i, int64_t *x)
{
    const gn__partial_value *v = VAL(c, i);
    return v && v->n == 1 && vget(v, 0, x);
}

/* A value of n elements, all unknown; rank 0 (scalar) or 1 ([n]). */
static inline gn__partial_value *val_new(ctx *c, int64_t n, bool scalar)
{
    gn__partial_value *v = gn__arena_alloc(c->arena, sizeof *v, _Alignof(gn__partial_value));
    if (!v) return NULL;
    size_t m = n > 0 ? (size_t)n : 1;
    v->v = gn__arena_alloc(c->arena, m * sizeof *v->v, _Alignof(int64_t));
    v->known = gn__arena_zalloc(c->arena, m, 1);
    if (!v->v || !v->known) return NULL;
    v->n = n;
    for (int64_t j = 0; j < n; j++) v->v[j] = -1;
    if (scalar) {
        v->shape = (gn__shape){0, NULL};
    } else {
        if (!gn__shape_alloc(c->arena, 1, &v->shape)) return NULL;
        v->shape.dims[0] = n;
    }
    return v;
}

static inline void vset(gn__partial_value *v, int64_t j, int64_t x)
{
    v->v[j] = x;
    v->known[j] = 1;
}

static inline bool vany_known(const gn__partial_value *v)
{
    for (int64_t j = 0; j < v->n; j++)
        if (v->known[j]) return true;
    return false;
}

/* the same elements under another shape */
static inline gn_status revalue(ctx *c, uint32_t k, const gn__partial_value *v)
{
    if (k >= c->n_out || !v) return GN_OK;
    const gn__shape *s = &c->out[k].shape;
    if (gn__shape_num_elements(s) != v->n) return GN_OK;
    gn__partial_value *nv = gn__arena_alloc(c->arena, sizeof *nv, _Alignof(gn__partial_value));
    if (!nv) return oom(c);
    *nv = *v;
    nv->shape = *s;
    c->out[k].value = nv;
    return GN_OK;
}

static inline bool fits_dtype(int32_t dt, int64_t x)
{
    if (dt == DT_INT32) return x >= INT32_MIN && x <= INT32_MAX;
    return true;
}

/* Dims described by shape tensor input i: its partial value's elements (-1 or
 * unknown: an unknown dim), else just its length. A scalar -1 means an
 * unknown rank. */
static inline gn_status shape_from_tensor(ctx *c, uint32_t i, gn__shape *out)
{
    *out = unknown_shape();
    if (i >= c->n_in) return GN_OK;
    const gn__partial_value *v = VAL(c, i);
    const gn__shape *s = IS(c, i);
    if (v) {
        if (v->shape.rank == 0) {
            int64_t x = 0;
            if (vget(v, 0, &x) && x != -1)
                return gn__shape_fail(c, "input %u: a shape must be a vector, got the scalar %lld", i, (long long)x);
            return GN_OK;
        }
        if (v->shape.rank != 1 || v->n > MAXR) return GN_OK;
        if (!gn__shape_alloc(c->arena, (int32_t)v->n, out)) return oom(c);
        for (int64_t j = 0; j < v->n; j++) {
            int64_t x = 0;
            if (!vget(v, j, &x)) continue;
            if (x < -1)
                return gn__shape_fail(c, "input %u: dimension %lld of the shape is %lld, must be >= -1", i,
                                      (long long)j, (long long)x);
            out->dims[j] = x;
        }
        return GN_OK;
    }
    if (s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= MAXR) {
        if (!gn__shape_alloc(c->arena, (int32_t)s->dims[0], out)) return oom(c);
    }
    return GN_OK;
}

/* ---- merging and broadcasting ----------------------------------------------- */
/* Most specific shape compatible with a and b: 0 ok, 1 conflict. Writes into
 * buf (MAXR) and *rank; rank -1 when both unknown. */
static inline int merge_dims(const gn__shape *a, const gn__shape *b, int64_t *buf, int32_t *rank)
{
    if (a->rank < 0 && b->rank < 0) {
        *rank = -1;
        return 0;
    }
    if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank) return 1;
    const gn__shape *k = a->rank >= 0 ? a : b;
    *rank = k->rank;
    for (int32_t i = 0; i < k->rank; i++) {
        int64_t x = a->rank >= 0 ? a->dims[i] : -1;
        int64_t y = b->rank >= 0 ? b->dims[i] : -1;
        if (x >= 0 && y >= 0 && x != y) return 1;
        buf[i] = x >= 0 ? x : y;
    }
    return 0;
}

/* numpy broadcasting of a and b into buf; 0 ok, 1 incompatible; rank -1 if unknown */
static inline int broadcast_dims(const gn__shape *a, const gn__shape *b, int64_t *buf, int32_t *rank)
{
    if (a->rank < 0 || b->rank < 0) {
        *rank = -1;
        return 0;
    }
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    *rank = r;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t x = ia >= 0 ? a->dims[ia] : 1;
        int64_t y = ib >= 0 ? b->dims[ib] : 1;
        int64_t o = 0;
        if (x >= 0 && y >= 0) {
            if (x == y) o = x;
            else if (x == 1) o = y;
            else if (y == 1) o = x;
            else return 1;
        } else if (x < 0 && y < 0) {
            o = -1;
        } else {
            int64_t k = x >= 0 ? x : y; /* the known one */
            o = k > 1 ? k : -1;
        }
        buf[i] = o;
    }
    return 0;
}

/* out k = broadcast of inputs a and b, sharing dims with one of them when possible */
static inline gn_status broadcast_out(ctx *c, uint32_t k, uint32_t ia, uint32_t ib, bool error_on_mismatch)
{
    int64_t d[MAXR];
    int32_t r;
    const gn__shape *a = IS(c, ia), *b = IS(c, ib);
    if (broadcast_dims(a, b, d, &r)) {
        if (!error_on_mismatch) {
            set_shape(c, k, &(gn__shape){-1, NULL});
            return GN_OK;
        }
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "incompatible shapes for broadcasting: %s and %s", sstr(a, s1), sstr(b, s2));
    }
    if (r < 0) {
        set_shape(c, k, &(gn__shape){-1, NULL});
        return GN_OK;
    }
    if (a->rank == r) return set_dims_like(c, k, r, d, a);
    return set_dims_like(c, k, r, d, b);
}

#endif
