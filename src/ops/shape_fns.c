/* Shape functions: one per op (or family), mirroring TensorFlow's
 * (tensorflow/core/ops/ *.cc, framework/common_shape_fns.cc). Each reads its
 * inputs' records and attrs from the context and writes output shapes and,
 * for small integer tensors, partial values. Dims and values are allocated in
 * the table's arena; an output may share an input's dims (records are
 * immutable once written). Unknown dims never cause an error; contradictions
 * between known dims do, naming the node (gn__shape_fail).
 *
 * The table at the end maps op names to functions, sorted by name. */
#include "ops/shape.h"

#include <stdlib.h>
#include <string.h>

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
static gn_status oom(ctx *c) { return gn__shape_nomem(c); }
static const gn__shape *IS(const ctx *c, uint32_t i) { return &c->in[i].shape; }
static const gn__partial_value *VAL(const ctx *c, uint32_t i) { return i < c->n_in ? c->in[i].value : NULL; }
static const char *sstr(const gn__shape *s, char *buf) { return gn__shape_str(s, buf, SB); }

static gn__shape unknown_shape(void) { return gn__shape_unknown(); }

/* out k = a shape with these dims (copied); rank < 0 or > MAXR: unknown */
static gn_status set_dims(ctx *c, uint32_t k, int32_t rank, const int64_t *dims)
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
static gn_status set_dims_like(ctx *c, uint32_t k, int32_t rank, const int64_t *dims, const gn__shape *like)
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

static gn_status set_scalar(ctx *c, uint32_t k)
{
    if (k < c->n_out) c->out[k].shape = (gn__shape){0, NULL};
    return GN_OK;
}

static gn_status set_vector(ctx *c, uint32_t k, int64_t n)
{
    return set_dims(c, k, 1, &n);
}

static void set_shape(ctx *c, uint32_t k, const gn__shape *s)
{
    if (k < c->n_out) c->out[k].shape = *s;
}

/* out k takes input i entirely (shape, value, handle); a pre-filled dtype stays */
static void pass_through(ctx *c, uint32_t k, uint32_t i)
{
    if (k >= c->n_out || i >= c->n_in) return;
    int32_t dt = c->out[k].dtype;
    c->out[k] = c->in[i];
    if (dt) c->out[k].dtype = dt;
}

/* ---- attrs ------------------------------------------------------------------ */
static int64_t attr_i(const ctx *c, const char *key, int64_t def)
{
    int64_t v = 0;
    return gn__attr_get_int(c->g, c->node, key, &v) ? v : def;
}

static bool attr_b(const ctx *c, const char *key, bool def)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, key, &v) ? v : def;
}

static bool attr_s(const ctx *c, const char *key, const char **s, size_t *n)
{
    return gn__attr_get_string(c->g, c->node, key, s, n);
}

static bool attr_s_eq(const ctx *c, const char *key, const char *want)
{
    const char *s;
    size_t n;
    if (!attr_s(c, key, &s, &n)) return false;
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

static const Tensorflow__AttrValue__ListValue *attr_list(const ctx *c, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST) return NULL;
    return v->list;
}

static const Tensorflow__TensorShapeProto *attr_shape(const ctx *c, const char *key, bool *present)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    *present = v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    return *present ? v->shape : NULL;
}

/* data_format: NCHW / NCDHW (channels first) or NHWC / NDHWC */
static bool channels_first(const ctx *c)
{
    const char *s;
    size_t n;
    return attr_s(c, "data_format", &s, &n) && n >= 2 && s[0] == 'N' && s[1] == 'C';
}

enum { PAD_VALID, PAD_SAME, PAD_EXPLICIT, PAD_OTHER };
static int padding_kind(const ctx *c)
{
    if (attr_s_eq(c, "padding", "SAME")) return PAD_SAME;
    if (attr_s_eq(c, "padding", "VALID")) return PAD_VALID;
    if (attr_s_eq(c, "padding", "EXPLICIT")) return PAD_EXPLICIT;
    return PAD_OTHER;
}

/* ---- partial values ---------------------------------------------------------- */
static bool vget(const gn__partial_value *v, int64_t j, int64_t *x)
{
    if (!v || j < 0 || j >= v->n || !v->known[j]) return false;
    *x = v->v[j];
    return true;
}

static bool vall_known(const gn__partial_value *v)
{
    if (!v) return false;
    for (int64_t j = 0; j < v->n; j++)
        if (!v->known[j]) return false;
    return true;
}

static bool scalar_val(const ctx *c, uint32_t i, int64_t *x)
{
    const gn__partial_value *v = VAL(c, i);
    return v && v->n == 1 && vget(v, 0, x);
}

/* A value of n elements, all unknown; rank 0 (scalar) or 1 ([n]). */
static gn__partial_value *val_new(ctx *c, int64_t n, bool scalar)
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

static void vset(gn__partial_value *v, int64_t j, int64_t x)
{
    v->v[j] = x;
    v->known[j] = 1;
}

static bool vany_known(const gn__partial_value *v)
{
    for (int64_t j = 0; j < v->n; j++)
        if (v->known[j]) return true;
    return false;
}

/* the same elements under another shape */
static gn_status revalue(ctx *c, uint32_t k, const gn__partial_value *v)
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

static bool fits_dtype(int32_t dt, int64_t x)
{
    if (dt == DT_INT32) return x >= INT32_MIN && x <= INT32_MAX;
    return true;
}

/* Dims described by shape tensor input i: its partial value's elements (-1 or
 * unknown: an unknown dim), else just its length. A scalar -1 means an
 * unknown rank. */
static gn_status shape_from_tensor(ctx *c, uint32_t i, gn__shape *out)
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
static int merge_dims(const gn__shape *a, const gn__shape *b, int64_t *buf, int32_t *rank)
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
static int broadcast_dims(const gn__shape *a, const gn__shape *b, int64_t *buf, int32_t *rank)
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
static gn_status broadcast_out(ctx *c, uint32_t k, uint32_t ia, uint32_t ib, bool error_on_mismatch)
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

/* ---- identity-like ----------------------------------------------------------- */
static gn_status sf_identity(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k < c->n_in; k++) pass_through(c, k, k);
    return GN_OK;
}

static gn_status sf_switch(ctx *c)
{
    NEED(c, 1, 1);
    for (uint32_t k = 0; k < c->n_out; k++) pass_through(c, k, 0);
    return GN_OK;
}

static gn_status sf_merge(ctx *c)
{
    NEED(c, 1, 1);
    bool first = true, all_ready = true;
    gn__tinfo acc = {0, {-1, NULL}, NULL, NULL};
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (!c->in_ready[i]) {
            all_ready = false;
            continue;
        }
        if (first) {
            acc = c->in[i];
            first = false;
            continue;
        }
        gn__shape j;
        if (!gn__shape_join(c->arena, &acc.shape, IS(c, i), &j)) return oom(c);
        acc.shape = j;
        if (!gn__value_equal(acc.value, c->in[i].value)) acc.value = NULL;
        if (acc.handle != c->in[i].handle) acc.handle = NULL;
    }
    if (!all_ready) acc.value = NULL;
    int32_t dt = c->out[0].dtype;
    c->out[0] = acc;
    if (dt) c->out[0].dtype = dt;
    if (c->n_out > 1) set_scalar(c, 1);
    return GN_OK;
}

static gn_status sf_ensure_shape(ctx *c)
{
    NEED(c, 1, 1);
    pass_through(c, 0, 0);
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, "shape", &present);
    if (!present) return GN_OK;
    gn__shape want;
    if (!gn__shape_from_proto(p, c->arena, &want)) return oom(c);
    int64_t d[MAXR];
    int32_t r;
    if (merge_dims(IS(c, 0), &want, d, &r)) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "input shape %s is not compatible with %s", sstr(IS(c, 0), s1), sstr(&want, s2));
    }
    return set_dims_like(c, 0, r, d, IS(c, 0));
}

/* ---- sources ------------------------------------------------------------------ */
static uint64_t le_bytes(const uint8_t *p, int n)
{
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--) x = (x << 8) | p[i];
    return x;
}

/* The first n int32/int64 values of a TensorProto (short forms expanded). */
static bool tensor_int_values(const Tensorflow__TensorProto *tp, int64_t n, int64_t *out)
{
    int32_t dt = tp->dtype;
    if (dt != DT_INT32 && dt != DT_INT64) return false;
    int esz = dt == DT_INT32 ? 4 : 8;
    if (tp->tensor_content.len) {
        if (tp->tensor_content.len != (size_t)n * (size_t)esz) return false;
        for (int64_t i = 0; i < n; i++) {
            uint64_t x = le_bytes(tp->tensor_content.data + i * esz, esz);
            out[i] = dt == DT_INT32 ? (int64_t)(int32_t)(uint32_t)x : (int64_t)x;
        }
        return true;
    }
    size_t cnt = dt == DT_INT32 ? tp->n_int_val : tp->n_int64_val;
    if (cnt > (size_t)n) return false;
    for (int64_t i = 0; i < n; i++) {
        if (!cnt) {
            out[i] = 0;
            continue;
        }
        size_t j = (size_t)i < cnt ? (size_t)i : cnt - 1;
        out[i] = dt == DT_INT32 ? tp->int_val[j] : tp->int64_val[j];
    }
    return true;
}

static gn_status sf_const(ctx *c)
{
    NEED(c, 0, 1);
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return GN_OK;
    const Tensorflow__TensorProto *tp = v->tensor;
    gn__shape s;
    if (!gn__shape_from_proto(tp->tensor_shape, c->arena, &s)) return oom(c);
    if (!tp->tensor_shape) s = (gn__shape){0, NULL}; /* absent shape: a scalar */
    if (!gn__shape_fully_defined(&s)) return GN_OK;
    c->out[0].shape = s;
    if (!c->out[0].dtype) c->out[0].dtype = tp->dtype;
    int64_t n = gn__shape_num_elements(&s);
    if (n < 0 || n > MAX_VALUE_ELEMS) return GN_OK;
    int64_t vals[MAX_VALUE_ELEMS];
    if (!tensor_int_values(tp, n, vals)) return GN_OK;
    gn__partial_value *pv = val_new(c, n, s.rank == 0);
    if (!pv) return oom(c);
    for (int64_t i = 0; i < n; i++) vset(pv, i, vals[i]);
    pv->shape = s; /* any rank: Pad's [r, 2] paddings */
    c->out[0].value = pv;
    return GN_OK;
}

static gn_status shape_attr_out(ctx *c, const char *key)
{
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, key, &present);
    if (!present) return GN_OK;
    /* GraphDefs before version 22 wrote an unknown shape as an empty one */
    if (p && !p->unknown_rank && p->n_dim == 0 && c->lib && c->lib->versions &&
        c->lib->versions->producer > 0 && c->lib->versions->producer <= 21)
        return GN_OK;
    gn__shape s;
    if (!gn__shape_from_proto(p, c->arena, &s)) return oom(c);
    c->out[0].shape = s;
    return GN_OK;
}

static gn_status sf_placeholder(ctx *c)
{
    NEED(c, 0, 1);
    return shape_attr_out(c, "shape");
}

static gn_status sf_placeholder_with_default(ctx *c)
{
    NEED(c, 1, 1);
    bool present;
    attr_shape(c, "shape", &present);
    if (!present) {
        c->out[0].shape = *IS(c, 0);
        return GN_OK;
    }
    GN_TRY(shape_attr_out(c, "shape"));
    /* the default must fit the declared shape */
    int64_t d[MAXR];
    int32_t r;
    if (merge_dims(IS(c, 0), &c->out[0].shape, d, &r)) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "default value %s is not compatible with the shape %s", sstr(IS(c, 0), s1),
                              sstr(&c->out[0].shape, s2));
    }
    return GN_OK;
}

static gn_status sf_variable(ctx *c)
{
    NEED(c, 0, 1);
    return shape_attr_out(c, "shape");
}

static gn_status sf_var_handle(ctx *c)
{
    NEED(c, 0, 1);
    set_scalar(c, 0);
    gn__handle_data *h = gn__arena_alloc(c->arena, sizeof *h, _Alignof(gn__handle_data));
    if (!h) return oom(c);
    int dt = 0;
    gn__attr_get_type(c->g, c->node, "dtype", &dt);
    h->dtype = dt;
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, "shape", &present);
    if (!gn__shape_from_proto(present ? p : NULL, c->arena, &h->shape)) return oom(c);
    c->out[0].handle = h;
    return GN_OK;
}

static gn_status sf_read_variable(ctx *c)
{
    NEED(c, 1, 1);
    const gn__handle_data *h = c->in[0].handle;
    if (h) c->out[0].shape = h->shape;
    return GN_OK;
}

static gn_status sf_assign(ctx *c)
{
    NEED(c, 2, 1);
    c->out[0].shape = *IS(c, 1);
    return GN_OK;
}

static gn_status sf_scalar(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) set_scalar(c, k);
    return GN_OK;
}

/* ---- elementwise --------------------------------------------------------------- */
gn_status gn__shape_fn_unary(gn__shape_ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

static gn_status sf_unary_rank1(ctx *c)
{
    NEED(c, 1, 1);
    if (IS(c, 0)->rank == 0) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

static gn_status sf_cast(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    c->out[0].value = c->in[0].value; /* the driver drops it unless the result is an integer */
    return GN_OK;
}

typedef enum { VOP_NONE, VOP_ADD, VOP_SUB, VOP_MUL, VOP_FLOORDIV, VOP_FLOORMOD, VOP_MAX, VOP_MIN } vop;

static bool vop_apply(vop op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case VOP_ADD: return !__builtin_add_overflow(a, b, r);
    case VOP_SUB: return !__builtin_sub_overflow(a, b, r);
    case VOP_MUL: return !__builtin_mul_overflow(a, b, r);
    case VOP_FLOORDIV: {
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
        *r = q;
        return true;
    }
    case VOP_FLOORMOD: {
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        int64_t m = a % b;
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        *r = m;
        return true;
    }
    case VOP_MAX: *r = a > b ? a : b; return true;
    case VOP_MIN: *r = a < b ? a : b; return true;
    default: return false;
    }
}

static gn_status binary(ctx *c, vop op)
{
    NEED(c, 2, 1);
    bool strict = true;
    bool flag;
    if (gn__attr_get_bool(c->g, c->node, "incompatible_shape_error", &flag)) strict = flag;
    GN_TRY(broadcast_out(c, 0, 0, 1, strict));
    if (op == VOP_NONE) return GN_OK;
    const gn__partial_value *a = VAL(c, 0), *b = VAL(c, 1);
    const gn__shape *os = &c->out[0].shape;
    if (!a || !b || os->rank < 0 || os->rank > 1) return GN_OK;
    int64_t n = os->rank == 0 ? 1 : os->dims[0];
    if (n < 0 || n > MAX_VALUE_ELEMS) return GN_OK;
    if ((a->n != n && a->n != 1) || (b->n != n && b->n != 1)) return GN_OK;
    gn__partial_value *r = val_new(c, n, os->rank == 0);
    if (!r) return oom(c);
    for (int64_t j = 0; j < n; j++) {
        int64_t x = 0, y = 0, z = 0;
        bool kx = vget(a, a->n == 1 ? 0 : j, &x), ky = vget(b, b->n == 1 ? 0 : j, &y);
        if (kx && ky) {
            if (vop_apply(op, x, y, &z) && fits_dtype(c->out[0].dtype, z)) vset(r, j, z);
        } else if (op == VOP_MUL && ((kx && x == 0) || (ky && y == 0))) {
            vset(r, j, 0);
        }
    }
    if (vany_known(r)) c->out[0].value = r;
    return GN_OK;
}

gn_status gn__shape_fn_broadcast(gn__shape_ctx *c) { return binary(c, VOP_NONE); }
static gn_status sf_add(ctx *c) { return binary(c, VOP_ADD); }
static gn_status sf_sub(ctx *c) { return binary(c, VOP_SUB); }
static gn_status sf_mul(ctx *c) { return binary(c, VOP_MUL); }
static gn_status sf_floordiv(ctx *c) { return binary(c, VOP_FLOORDIV); }
static gn_status sf_floormod(ctx *c) { return binary(c, VOP_FLOORMOD); }
static gn_status sf_maximum(ctx *c) { return binary(c, VOP_MAX); }
static gn_status sf_minimum(ctx *c) { return binary(c, VOP_MIN); }

static gn_status sf_bias_add_impl(ctx *c, bool v1)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *b = IS(c, 1);
    if (b->rank >= 0 && b->rank != 1) {
        char s1[SB];
        return gn__shape_fail(c, "bias must be 1-D, got %s", sstr(b, s1));
    }
    if (x->rank < 0) {
        c->out[0].shape = *x;
        return GN_OK;
    }
    bool nchw = !v1 && channels_first(c);
    if (x->rank < (nchw ? 3 : 2)) {
        char s1[SB];
        return gn__shape_fail(c, "input must have rank >= %d, got %s", nchw ? 3 : 2, sstr(x, s1));
    }
    int32_t ci = nchw ? x->rank - 3 : x->rank - 1;
    int64_t bc = b->rank == 1 ? b->dims[0] : -1;
    int64_t xc = x->dims[ci];
    if (xc >= 0 && bc >= 0 && xc != bc) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "bias size %lld does not match the channel dimension %lld of %s (bias %s)",
                              (long long)bc, (long long)xc, sstr(x, s1), sstr(b, s2));
    }
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    if (xc < 0) d[ci] = bc;
    return set_dims_like(c, 0, x->rank, d, x);
}
static gn_status sf_bias_add(ctx *c) { return sf_bias_add_impl(c, false); }
static gn_status sf_bias_add_v1(ctx *c) { return sf_bias_add_impl(c, true); }

static gn_status sf_bias_add_grad(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return set_vector(c, 0, -1);
    if (x->rank < 2) {
        char s1[SB];
        return gn__shape_fail(c, "input must have rank >= 2, got %s", sstr(x, s1));
    }
    bool nchw = channels_first(c);
    return set_vector(c, 0, x->dims[nchw ? x->rank - 3 < 0 ? 1 : x->rank - 3 : x->rank - 1]);
}

static gn_status sf_select(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *cond = IS(c, 0), *t = IS(c, 1), *e = IS(c, 2);
    int64_t d[MAXR];
    int32_t r;
    char s1[SB], s2[SB];
    if (merge_dims(t, e, d, &r))
        return gn__shape_fail(c, "'then' %s and 'else' %s must have the same shape", sstr(t, s1), sstr(e, s2));
    gn__shape te = {r, d};
    if (cond->rank > 0 && r >= 0) { /* a scalar condition picks a whole tensor */
        if (cond->rank == 1 && r > 1) {
            if (cond->dims[0] >= 0 && d[0] >= 0 && cond->dims[0] != d[0])
                return gn__shape_fail(c, "condition %s must match the first dimension of %s", sstr(cond, s1),
                                      sstr(&te, s2));
            if (d[0] < 0) d[0] = cond->dims[0];
        } else {
            int64_t d2[MAXR];
            int32_t r2;
            if (merge_dims(cond, &te, d2, &r2))
                return gn__shape_fail(c, "condition %s and 'then' %s must have the same shape", sstr(cond, s1),
                                      sstr(&te, s2));
            memcpy(d, d2, (size_t)r2 * sizeof *d);
        }
    }
    return set_dims_like(c, 0, r, d, t);
}

static gn_status sf_select_v2(ctx *c)
{
    NEED(c, 3, 1);
    int64_t d1[MAXR], d2[MAXR];
    int32_t r1, r2;
    char s1[SB], s2[SB], s3[SB];
    if (broadcast_dims(IS(c, 1), IS(c, 2), d1, &r1) ||
        broadcast_dims(IS(c, 0), &(gn__shape){r1, d1}, d2, &r2))
        return gn__shape_fail(c, "incompatible shapes for broadcasting: %s, %s and %s", sstr(IS(c, 0), s1),
                              sstr(IS(c, 1), s2), sstr(IS(c, 2), s3));
    return set_dims_like(c, 0, r2, d2, IS(c, 1));
}

static gn_status sf_add_n(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[MAXR];
    gn__shape acc = *IS(c, 0);
    uint32_t from = 0;
    for (uint32_t i = 1; i < c->n_in; i++) {
        int32_t r;
        if (merge_dims(&acc, IS(c, i), d, &r)) {
            char s1[SB], s2[SB];
            return gn__shape_fail(c, "inputs have incompatible shapes: %s (input %u) and %s (input %u)",
                                  sstr(&acc, s1), from, sstr(IS(c, i), s2), i);
        }
        if (r != acc.rank || (r > 0 && memcmp(d, acc.dims, (size_t)r * sizeof *d) != 0)) {
            GN_TRY(set_dims(c, 0, r, d));
            acc = c->out[0].shape;
            from = i;
        }
    }
    c->out[0].shape = acc;
    return GN_OK;
}

/* ---- convolution and pooling -------------------------------------------------- */
/* TensorFlow's GetWindowedOutputSize, with the same arithmetic */
static gn_status window(ctx *c, int64_t in, int64_t k, int64_t s, int64_t dil, int pad, int64_t pb, int64_t pa,
                        int64_t *out)
{
    *out = -1;
    if (s <= 0) return gn__shape_fail(c, "strides must be positive, got %lld", (long long)s);
    if (dil <= 0) return gn__shape_fail(c, "dilations must be positive, got %lld", (long long)dil);
    if (in < 0) return GN_OK;
    if (pad == PAD_SAME) {
        *out = in / s + (in % s != 0);
        return GN_OK;
    }
    if (k < 0) return GN_OK;
    if (pad != PAD_EXPLICIT) pb = pa = 0;
    if (pb < 0 || pa < 0) return gn__shape_fail(c, "explicit paddings must be non-negative");
    int64_t eff, num;
    if (__builtin_mul_overflow(k - 1, dil, &eff) || __builtin_add_overflow(eff, 1, &eff) ||
        __builtin_add_overflow(in, pb, &num) || __builtin_add_overflow(num, pa, &num) ||
        __builtin_add_overflow(num - eff, s, &num))
        return gn__shape_fail(c, "window arithmetic overflows (input %lld, filter %lld, dilation %lld, stride %lld)",
                              (long long)in, (long long)k, (long long)dil, (long long)s);
    int64_t o = num / s;
    if (o < 0)
        return gn__shape_fail(c, "computed output size would be negative: %lld (input %lld, effective filter %lld, stride %lld)",
                              (long long)o, (long long)in, (long long)eff, (long long)s);
    *out = o;
    return GN_OK;
}

static int64_t list_i(const Tensorflow__AttrValue__ListValue *l, int32_t i, int64_t def)
{
    return l && i >= 0 && (size_t)i < l->n_i ? l->i[i] : def;
}

/* Conv2D / Conv3D / DepthwiseConv2dNative and the fused forms: input in the
 * data_format, filter [spatial..., in, out] */
static gn_status conv_nd(ctx *c, int nsp, bool depthwise)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *f = IS(c, 1);
    int32_t rank = nsp + 2;
    char s1[SB];
    if (x->rank >= 0 && x->rank != rank)
        return gn__shape_fail(c, "input must be %d-dimensional, got %s", rank, sstr(x, s1));
    if (f->rank >= 0 && f->rank != rank)
        return gn__shape_fail(c, "filter must be %d-dimensional, got %s", rank, sstr(f, s1));
    bool cf = channels_first(c);
    int pad = padding_kind(c);
    const Tensorflow__AttrValue__ListValue *st = attr_list(c, "strides");
    const Tensorflow__AttrValue__ListValue *dl = attr_list(c, "dilations");
    const Tensorflow__AttrValue__ListValue *ep = attr_list(c, "explicit_paddings");
    if (st && st->n_i && st->n_i != (size_t)rank)
        return gn__shape_fail(c, "strides has %zu entries, wants %d", st->n_i, rank);
    if (dl && dl->n_i && dl->n_i != (size_t)rank)
        return gn__shape_fail(c, "dilations has %zu entries, wants %d", dl->n_i, rank);
    if (pad == PAD_EXPLICIT && (!ep || ep->n_i != (size_t)(2 * rank)))
        return gn__shape_fail(c, "explicit_paddings must have %d entries", 2 * rank);
    int64_t d[MAXR];
    for (int32_t i = 0; i < rank; i++) d[i] = -1;
    int32_t ci = cf ? 1 : rank - 1;
    int64_t in_c = x->rank >= 0 ? x->dims[ci] : -1;
    int64_t f_in = f->rank >= 0 ? f->dims[nsp] : -1, f_out = f->rank >= 0 ? f->dims[nsp + 1] : -1;
    if (depthwise) {
        if (in_c >= 0 && f_in >= 0 && in_c != f_in)
            return gn__shape_fail(c, "input depth %lld does not match the filter's input depth %lld", (long long)in_c,
                                  (long long)f_in);
        int64_t ic = in_c >= 0 ? in_c : f_in;
        d[ci] = -1;
        if (ic >= 0 && f_out >= 0 && __builtin_mul_overflow(ic, f_out, &d[ci]))
            return gn__shape_fail(c, "output depth overflows");
    } else {
        if (in_c >= 0 && f_in > 0 && in_c % f_in != 0)
            return gn__shape_fail(c, "input depth %lld is not a multiple of the filter's input depth %lld",
                                  (long long)in_c, (long long)f_in);
        d[ci] = f_out;
    }
    d[0] = x->rank >= 0 ? x->dims[0] : -1;
    for (int i = 0; i < nsp; i++) {
        int32_t di = cf ? 2 + i : 1 + i;
        int64_t in = x->rank >= 0 ? x->dims[di] : -1;
        int64_t k = f->rank >= 0 ? f->dims[i] : -1;
        GN_TRY(window(c, in, k, list_i(st, di, 1), list_i(dl, di, 1), pad, list_i(ep, 2 * di, 0),
                      list_i(ep, 2 * di + 1, 0), &d[di]));
    }
    return set_dims(c, 0, rank, d);
}

static gn_status sf_conv2d(ctx *c) { return conv_nd(c, 2, false); }
static gn_status sf_conv3d(ctx *c) { return conv_nd(c, 3, false); }
static gn_status sf_depthwise(ctx *c) { return conv_nd(c, 2, true); }

/* Pooling: a window over every dim but the batch, ksize/strides in the data_format */
static gn_status pool_impl(ctx *c, int32_t rank, const int64_t *ks, const int64_t *ss, size_t nk)
{
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != rank) return gn__shape_fail(c, "input must be %d-dimensional, got %s", rank, sstr(x, s1));
    if (nk != (size_t)rank) return gn__shape_fail(c, "ksize and strides must have %d entries", rank);
    int pad = padding_kind(c);
    const Tensorflow__AttrValue__ListValue *ep = attr_list(c, "explicit_paddings");
    if (pad == PAD_EXPLICIT && (!ep || ep->n_i != (size_t)(2 * rank)))
        return gn__shape_fail(c, "explicit_paddings must have %d entries", 2 * rank);
    int64_t d[MAXR];
    d[0] = x->rank >= 0 ? x->dims[0] : -1;
    for (int32_t i = 1; i < rank; i++) {
        int64_t in = x->rank >= 0 ? x->dims[i] : -1;
        if (ks[i] < 0 || ss[i] < 0) {
            d[i] = -1;
            continue;
        }
        if (ks[i] == 0) return gn__shape_fail(c, "ksize must be positive");
        GN_TRY(window(c, in, ks[i], ss[i], 1, pad, list_i(ep, 2 * i, 0), list_i(ep, 2 * i + 1, 0), &d[i]));
    }
    GN_TRY(set_dims(c, 0, rank, d));
    for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape; /* MaxPoolWithArgmax */
    return GN_OK;
}

static gn_status pool_attrs(ctx *c, int32_t rank)
{
    NEED(c, 1, 1);
    const Tensorflow__AttrValue__ListValue *kl = attr_list(c, "ksize"), *sl = attr_list(c, "strides");
    if (!kl || !sl || kl->n_i != sl->n_i || kl->n_i > MAXR) return GN_OK;
    int64_t ks[MAXR], ss[MAXR];
    for (size_t i = 0; i < kl->n_i; i++) {
        ks[i] = kl->i[i];
        ss[i] = sl->i[i];
    }
    return pool_impl(c, rank, ks, ss, kl->n_i);
}

static gn_status sf_pool(ctx *c) { return pool_attrs(c, 4); }
static gn_status sf_pool3d(ctx *c) { return pool_attrs(c, 5); }

static gn_status sf_pool_v2(ctx *c)
{
    NEED(c, 3, 1);
    const gn__partial_value *kv = VAL(c, 1), *sv = VAL(c, 2);
    const gn__shape *x = IS(c, 0);
    if (x->rank >= 0 && x->rank != 4) {
        char s1[SB];
        return gn__shape_fail(c, "input must be 4-dimensional, got %s", sstr(x, s1));
    }
    if (!kv || !sv || kv->n != 4 || sv->n != 4) {
        int64_t d[4] = {-1, -1, -1, -1};
        if (x->rank == 4) d[0] = x->dims[0];
        return set_dims(c, 0, 4, d);
    }
    int64_t ks[4], ss[4];
    for (int i = 0; i < 4; i++) {
        if (!vget(kv, i, &ks[i])) ks[i] = -1;
        if (!vget(sv, i, &ss[i])) ss[i] = -1;
    }
    return pool_impl(c, 4, ks, ss, 4);
}

/* Conv2DBackpropInput and friends: the output is described by a shape input */
static gn_status from_shape_input(ctx *c, uint32_t i)
{
    NEED(c, i + 1, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, i, &s));
    c->out[0].shape = s;
    return GN_OK;
}

static gn_status sf_shape_input0(ctx *c) { return from_shape_input(c, 0); }
static gn_status sf_shape_input1(ctx *c) { return from_shape_input(c, 1); }
static gn_status sf_shape_input2(ctx *c) { return from_shape_input(c, 2); }

static gn_status sf_conv2d_backprop_input(ctx *c)
{
    NEED(c, 3, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, 0, &s));
    if (s.rank == 2) {
        /* [H, W] only: batch from out_backprop, channels from the filter */
        const gn__shape *ob = IS(c, 2), *f = IS(c, 1);
        bool cf = channels_first(c);
        int64_t d[4];
        d[0] = ob->rank == 4 ? ob->dims[0] : -1;
        int64_t ch = f->rank == 4 ? f->dims[2] : -1;
        if (cf) {
            d[1] = ch;
            d[2] = s.dims[0];
            d[3] = s.dims[1];
        } else {
            d[1] = s.dims[0];
            d[2] = s.dims[1];
            d[3] = ch;
        }
        return set_dims(c, 0, 4, d);
    }
    c->out[0].shape = s;
    return GN_OK;
}

/* ---- matrix products ------------------------------------------------------------ */
static const char *transpose_note(bool ta, bool tb)
{
    if (ta && tb) return " (transpose_a, transpose_b)";
    if (ta) return " (transpose_a)";
    if (tb) return " (transpose_b)";
    return "";
}

static gn_status sf_matmul(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    char s1[SB], s2[SB];
    if (a->rank >= 0 && a->rank != 2) return gn__shape_fail(c, "input 0 must be a matrix, got %s", sstr(a, s1));
    if (b->rank >= 0 && b->rank != 2) return gn__shape_fail(c, "input 1 must be a matrix, got %s", sstr(b, s1));
    bool ta = attr_b(c, "transpose_a", false), tb = attr_b(c, "transpose_b", false);
    int64_t m = a->rank == 2 ? a->dims[ta ? 1 : 0] : -1, ka = a->rank == 2 ? a->dims[ta ? 0 : 1] : -1;
    int64_t kb = b->rank == 2 ? b->dims[tb ? 1 : 0] : -1, n = b->rank == 2 ? b->dims[tb ? 0 : 1] : -1;
    if (ka >= 0 && kb >= 0 && ka != kb)
        return gn__shape_fail(c, "inner dimensions differ: %s x %s%s", sstr(a, s1), sstr(b, s2), transpose_note(ta, tb));
    int64_t d[2] = {m, n};
    return set_dims(c, 0, 2, d);
}

static gn_status batch_matmul(ctx *c, bool bcast)
{
    NEED(c, 2, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    char s1[SB], s2[SB];
    if (a->rank >= 0 && a->rank < 2) return gn__shape_fail(c, "input 0 must have rank >= 2, got %s", sstr(a, s1));
    if (b->rank >= 0 && b->rank < 2) return gn__shape_fail(c, "input 1 must have rank >= 2, got %s", sstr(b, s1));
    bool ta = attr_b(c, "adj_x", false), tb = attr_b(c, "adj_y", false);
    int64_t m = -1, ka = -1, kb = -1, n = -1;
    if (a->rank >= 2) {
        m = a->dims[a->rank - (ta ? 1 : 2)];
        ka = a->dims[a->rank - (ta ? 2 : 1)];
    }
    if (b->rank >= 2) {
        kb = b->dims[b->rank - (tb ? 1 : 2)];
        n = b->dims[b->rank - (tb ? 2 : 1)];
    }
    if (ka >= 0 && kb >= 0 && ka != kb) {
        const char *note = ta && tb ? " (adj_x, adj_y)" : ta ? " (adj_x)" : tb ? " (adj_y)" : "";
        return gn__shape_fail(c, "inner dimensions differ: %s x %s%s", sstr(a, s1), sstr(b, s2), note);
    }
    if (a->rank < 0 || b->rank < 0) {
        if (!bcast && (a->rank >= 0 || b->rank >= 0)) {
            const gn__shape *k = a->rank >= 0 ? a : b;
            int64_t d[MAXR];
            for (int32_t i = 0; i < k->rank - 2; i++) d[i] = k->dims[i];
            d[k->rank - 2] = m;
            d[k->rank - 1] = n;
            return set_dims(c, 0, k->rank, d);
        }
        return GN_OK;
    }
    gn__shape ba = {a->rank - 2, a->dims}, bb = {b->rank - 2, b->dims};
    int64_t d[MAXR];
    int32_t r;
    if (bcast) {
        if (broadcast_dims(&ba, &bb, d, &r))
            return gn__shape_fail(c, "batch dimensions do not broadcast: %s x %s", sstr(a, s1), sstr(b, s2));
    } else {
        if (merge_dims(&ba, &bb, d, &r))
            return gn__shape_fail(c, "batch dimensions differ: %s x %s", sstr(a, s1), sstr(b, s2));
    }
    if (r + 2 > MAXR) return GN_OK;
    d[r] = m;
    d[r + 1] = n;
    return set_dims(c, 0, r + 2, d);
}

static gn_status sf_batch_matmul(ctx *c) { return batch_matmul(c, false); }
static gn_status sf_batch_matmul_v2(ctx *c) { return batch_matmul(c, true); }

/* Einsum: explicit ("ab,bc->ac") and implicit equations, "..." broadcast */
#define EIN_ELL '.'
static gn_status sf_einsum(ctx *c)
{
    NEED(c, 1, 1);
    const char *eq;
    size_t eqn;
    if (!attr_s(c, "equation", &eq, &eqn) || eqn > 512) return GN_OK;
    /* tokens: letters, and '.' for an ellipsis; ',' and '>' separate */
    char tok[512];
    size_t nt = 0;
    for (size_t i = 0; i < eqn; i++) {
        char ch = eq[i];
        if (ch == ' ') continue;
        if (ch == '.') {
            if (i + 2 >= eqn || eq[i + 1] != '.' || eq[i + 2] != '.')
                return gn__shape_fail(c, "equation '%.*s': a '.' outside an ellipsis", (int)eqn, eq);
            tok[nt++] = EIN_ELL;
            i += 2;
        } else if (ch == '-') {
            if (i + 1 >= eqn || eq[i + 1] != '>') return gn__shape_fail(c, "equation '%.*s': bad '-'", (int)eqn, eq);
            tok[nt++] = '>';
            i++;
        } else if (ch == ',' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            tok[nt++] = ch;
        } else {
            return gn__shape_fail(c, "equation '%.*s': bad character '%c'", (int)eqn, eq, ch);
        }
    }
    /* split */
    size_t arrow = nt;
    for (size_t i = 0; i < nt; i++)
        if (tok[i] == '>') {
            arrow = i;
            break;
        }
    uint32_t nops = 1;
    for (size_t i = 0; i < arrow; i++) nops += tok[i] == ',';
    if (nops != c->n_in)
        return gn__shape_fail(c, "equation '%.*s' has %u operands, the node has %u inputs", (int)eqn, eq, nops, c->n_in);
    if (nops > 8) return GN_OK;
    int64_t ldim[128];
    int lcount[128];
    for (int i = 0; i < 128; i++) {
        ldim[i] = -1;
        lcount[i] = 0;
    }
    bool any_ell = false, ell_unknown = false;
    int64_t ell[MAXR];
    int32_t ell_rank = 0; /* broadcast of the ellipsis parts so far */
    size_t start = 0;
    for (uint32_t op = 0; op < nops; op++) {
        size_t end = start;
        while (end < arrow && tok[end] != ',') end++;
        const gn__shape *s = IS(c, op);
        int32_t nlab = 0;
        int32_t ellpos = -1;
        for (size_t i = start; i < end; i++) {
            if (tok[i] == EIN_ELL) {
                if (ellpos >= 0) return gn__shape_fail(c, "equation '%.*s': two ellipses in one operand", (int)eqn, eq);
                ellpos = nlab;
            } else {
                nlab++;
            }
        }
        if (ellpos >= 0) any_ell = true;
        int32_t er = 0;
        if (s->rank >= 0) {
            if (ellpos < 0 ? s->rank != nlab : s->rank < nlab) {
                char s1[SB];
                return gn__shape_fail(c, "equation '%.*s': operand %u has shape %s but %d labels", (int)eqn, eq, op,
                                      sstr(s, s1), nlab);
            }
            er = s->rank - nlab;
        } else if (ellpos >= 0) {
            ell_unknown = true;
        }
        int32_t li = 0;
        for (size_t i = start; i < end; i++) {
            if (tok[i] == EIN_ELL) {
                if (s->rank >= 0) {
                    gn__shape part = {er, s->dims + li};
                    gn__shape acc = {ell_rank, ell};
                    int64_t nd[MAXR];
                    int32_t nr;
                    if (broadcast_dims(&acc, &part, nd, &nr)) {
                        char s1[SB], s2[SB];
                        return gn__shape_fail(c, "equation '%.*s': ellipsis dimensions %s and %s do not broadcast",
                                              (int)eqn, eq, sstr(&acc, s1), sstr(&part, s2));
                    }
                    memcpy(ell, nd, (size_t)nr * sizeof *ell);
                    ell_rank = nr;
                }
                continue;
            }
            unsigned char lab = (unsigned char)tok[i];
            int32_t pos = ellpos >= 0 && li >= ellpos ? li + er : li;
            int64_t dim = s->rank >= 0 ? s->dims[pos] : -1;
            if (lcount[lab] && ldim[lab] >= 0 && dim >= 0 && ldim[lab] != dim)
                return gn__shape_fail(c, "equation '%.*s': label '%c' has dimensions %lld and %lld", (int)eqn, eq, lab,
                                      (long long)ldim[lab], (long long)dim);
            if (ldim[lab] < 0) ldim[lab] = dim;
            lcount[lab]++;
            li++;
        }
        start = end + 1;
    }
    /* output labels */
    char outl[128 + 1];
    size_t no = 0;
    if (arrow < nt) {
        for (size_t i = arrow + 1; i < nt && no < 128; i++) {
            char ch = tok[i];
            if (ch == ',' || ch == '>') return gn__shape_fail(c, "equation '%.*s': bad output", (int)eqn, eq);
            if (ch != EIN_ELL && !lcount[(unsigned char)ch])
                return gn__shape_fail(c, "equation '%.*s': output label '%c' is not in the inputs", (int)eqn, eq, ch);
            outl[no++] = ch;
        }
    } else {
        if (any_ell) outl[no++] = EIN_ELL;
        for (int ch = 'A'; ch <= 'z'; ch++)
            if (lcount[ch] == 1) outl[no++] = (char)ch;
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (size_t i = 0; i < no; i++) {
        if (outl[i] == EIN_ELL) {
            if (ell_unknown) return GN_OK;
            if (r + ell_rank > MAXR) return GN_OK;
            for (int32_t j = 0; j < ell_rank; j++) d[r++] = ell[j];
        } else {
            if (r >= MAXR) return GN_OK;
            d[r++] = ldim[(unsigned char)outl[i]];
        }
    }
    return set_dims(c, 0, r, d);
}

/* ---- batch norm ----------------------------------------------------------------- */
static gn_status sf_fused_batch_norm(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 4 && x->rank != 5)
        return gn__shape_fail(c, "x must be 4- or 5-dimensional, got %s", sstr(x, s1));
    bool cf = channels_first(c);
    bool training = attr_b(c, "is_training", true);
    float eaf = 1.0f;
    gn__attr_get_float(c->g, c->node, "exponential_avg_factor", &eaf);
    uint32_t nchk = (training && eaf == 1.0f) ? 3 : 5;
    if (nchk > c->n_in) nchk = c->n_in;
    int32_t ci = x->rank >= 0 ? (cf ? 1 : x->rank - 1) : -1;
    int64_t ch = ci >= 0 ? x->dims[ci] : -1;
    static const char *const names[] = {"x", "scale", "offset", "mean", "variance"};
    for (uint32_t i = 1; i < nchk; i++) {
        const gn__shape *v = IS(c, i);
        if (v->rank < 0) continue;
        if (v->rank != 1) return gn__shape_fail(c, "%s must be 1-dimensional, got %s", names[i], sstr(v, s1));
        if (ch >= 0 && v->dims[0] >= 0 && ch != v->dims[0])
            return gn__shape_fail(c, "%s has %lld elements, x has %lld channels (%s)", names[i], (long long)v->dims[0],
                                  (long long)ch, sstr(x, s1));
        if (ch < 0) ch = v->dims[0];
    }
    if (x->rank >= 0) {
        int64_t d[MAXR];
        memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
        d[ci] = ch;
        GN_TRY(set_dims_like(c, 0, x->rank, d, x));
    }
    for (uint32_t k = 1; k < c->n_out && k < 5; k++) GN_TRY(set_vector(c, k, ch));
    return GN_OK;
}

/* ---- shape manipulation ---------------------------------------------------------- */
static gn_status sf_shape(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k < c->n_in; k++) {
        const gn__shape *s = IS(c, k);
        GN_TRY(set_vector(c, k, s->rank));
        if (s->rank < 0) continue;
        gn__partial_value *v = val_new(c, s->rank, false);
        if (!v) return oom(c);
        for (int32_t i = 0; i < s->rank; i++)
            if (s->dims[i] >= 0) vset(v, i, s->dims[i]);
        c->out[k].value = v;
    }
    return GN_OK;
}

static gn_status sf_size(ctx *c)
{
    NEED(c, 1, 1);
    set_scalar(c, 0);
    int64_t n = gn__shape_num_elements(IS(c, 0));
    if (n >= 0 && fits_dtype(c->out[0].dtype, n)) {
        gn__partial_value *v = val_new(c, 1, true);
        if (!v) return oom(c);
        vset(v, 0, n);
        c->out[0].value = v;
    }
    return GN_OK;
}

static gn_status sf_rank(ctx *c)
{
    NEED(c, 1, 1);
    set_scalar(c, 0);
    if (IS(c, 0)->rank >= 0) {
        gn__partial_value *v = val_new(c, 1, true);
        if (!v) return oom(c);
        vset(v, 0, IS(c, 0)->rank);
        c->out[0].value = v;
    }
    return GN_OK;
}

static gn_status sf_reshape(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *v = VAL(c, 1);
    int64_t nin = gn__shape_num_elements(x);
    char s1[SB];
    if (!v) {
        gn__shape s;
        GN_TRY(shape_from_tensor(c, 1, &s));
        if (s.rank == 1 && nin >= 0) s.dims[0] = nin;
        if (s.rank == 0 && nin >= 0 && nin != 1)
            return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to []", (long long)nin);
        c->out[0].shape = s;
        return GN_OK;
    }
    if (v->shape.rank != 1 || v->n > MAXR) return GN_OK;
    int64_t d[MAXR];
    int32_t r = (int32_t)v->n;
    int32_t wild = -1;
    bool all_known = true;
    int64_t prod = 1;
    for (int32_t i = 0; i < r; i++) {
        int64_t e = 0;
        if (!vget(v, i, &e)) {
            d[i] = -1;
            all_known = false;
            continue;
        }
        if (e == -1) {
            if (wild >= 0) return gn__shape_fail(c, "only one dimension may be -1, not both %d and %d", wild, i);
            wild = i;
            d[i] = -1;
            continue;
        }
        if (e < -1) return gn__shape_fail(c, "dimension %d of the new shape is %lld", i, (long long)e);
        d[i] = e;
        if (prod >= 0 && __builtin_mul_overflow(prod, e, &prod)) prod = -2;
    }
    if (prod == -2) {
        gn__shape t = {r, d};
        return gn__shape_fail(c, "new shape %s has more elements than int64 can count", sstr(&t, s1));
    }
    if (all_known && nin >= 0) {
        if (wild >= 0) {
            if (prod > 0) {
                if (nin % prod != 0) {
                    gn__shape t = {r, d};
                    return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to %s", (long long)nin,
                                          sstr(&t, s1));
                }
                d[wild] = nin / prod;
            }
        } else if (prod != nin) {
            gn__shape t = {r, d};
            return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to %s (%lld elements)", (long long)nin,
                                  sstr(&t, s1), (long long)prod);
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    return revalue(c, 0, c->in[0].value);
}

static gn_status sf_squeeze(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    const Tensorflow__AttrValue__ListValue *l = attr_list(c, "squeeze_dims");
    if (!l || !l->n_i) l = attr_list(c, "axis");
    if (x->rank < 0) return GN_OK;
    bool want[MAXR] = {false};
    bool listed = l && l->n_i;
    if (listed) {
        for (size_t i = 0; i < l->n_i; i++) {
            int64_t a = l->i[i];
            if (a < -x->rank || a >= x->rank)
                return gn__shape_fail(c, "squeeze dimension %lld out of range for rank %d", (long long)a, x->rank);
            want[a < 0 ? a + x->rank : a] = true;
        }
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t e = x->dims[i];
        if (listed) {
            if (want[i]) {
                if (e >= 0 && e != 1)
                    return gn__shape_fail(c, "cannot squeeze dimension %d of size %lld", i, (long long)e);
                continue;
            }
        } else {
            if (e == 1) continue;
            if (e < 0) return GN_OK; /* might be 1: the rank is unknown */
        }
        d[r++] = e;
    }
    GN_TRY(set_dims(c, 0, r, d));
    return revalue(c, 0, c->in[0].value);
}

static gn_status sf_expand_dims(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0 || x->rank + 1 > MAXR) return GN_OK;
    int64_t a = 0;
    int64_t d[MAXR];
    if (!scalar_val(c, 1, &a)) {
        for (int32_t i = 0; i <= x->rank; i++) d[i] = -1;
        return set_dims(c, 0, x->rank + 1, d);
    }
    if (a < -x->rank - 1 || a > x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)a, x->rank);
    if (a < 0) a += x->rank + 1;
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (i == a) d[r++] = 1;
        d[r++] = x->dims[i];
    }
    if (a == x->rank) d[r++] = 1;
    GN_TRY(set_dims(c, 0, r, d));
    return revalue(c, 0, c->in[0].value);
}

static gn_status sf_transpose(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ps = IS(c, 1);
    const gn__partial_value *p = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && p) r = (int32_t)p->n;
    if (r < 0 && ps->rank == 1) r = (int32_t)ps->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) d[i] = -1;
    if (p) {
        if (p->n != r)
            return gn__shape_fail(c, "perm has %lld elements for a tensor of rank %d", (long long)p->n, r);
        if (vall_known(p)) {
            bool seen[MAXR] = {false};
            for (int32_t i = 0; i < r; i++) {
                int64_t q = p->v[i];
                if (q < 0) q += r;
                if (q < 0 || q >= r || seen[q]) {
                    gn__shape t = {r, p->v};
                    char s1[SB];
                    return gn__shape_fail(c, "perm %s is not a permutation", sstr(&t, s1));
                }
                seen[q] = true;
                d[i] = x->rank >= 0 ? x->dims[q] : -1;
            }
        }
    }
    return set_dims_like(c, 0, r, d, x);
}

/* ConcatV2 (axis last) and Concat (axis first) */
static gn_status concat_impl(ctx *c, uint32_t first, uint32_t n, uint32_t axis_in)
{
    if (n == 0 || c->n_out < 1) return GN_OK;
    int32_t r = -1;
    uint32_t rfrom = 0;
    char s1[SB], s2[SB];
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        if (s->rank < 0) continue;
        if (r < 0) {
            r = s->rank;
            rfrom = i;
        } else if (s->rank != r) {
            return gn__shape_fail(c, "inputs have different ranks: %s (input %u) and %s (input %u)",
                                  sstr(IS(c, first + rfrom), s1), first + rfrom, sstr(s, s2), first + i);
        }
    }
    int64_t axis = 0;
    bool axis_known = scalar_val(c, axis_in, &axis);
    if (r < 0) return GN_OK;
    if (r == 0) return gn__shape_fail(c, "cannot concatenate scalars");
    int64_t d[MAXR];
    for (int32_t j = 0; j < r; j++) d[j] = -1;
    if (!axis_known) return set_dims(c, 0, r, d);
    if (axis < -r || axis >= r) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, r);
    if (axis < 0) axis += r;
    int64_t sum = 0;
    uint32_t from[MAXR] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        if (s->rank < 0) {
            sum = -1;
            continue;
        }
        for (int32_t j = 0; j < r; j++) {
            int64_t e = s->dims[j];
            if (j == axis) {
                if (e < 0 || sum < 0) sum = -1;
                else if (__builtin_add_overflow(sum, e, &sum))
                    return gn__shape_fail(c, "concatenated dimension overflows");
                continue;
            }
            if (e < 0) continue;
            if (d[j] >= 0 && d[j] != e)
                return gn__shape_fail(c, "dimension %d of inputs differs: %s (input %u) and %s (input %u)", j,
                                      sstr(IS(c, first + from[j]), s1), first + from[j], sstr(s, s2), first + i);
            if (d[j] < 0) {
                d[j] = e;
                from[j] = i;
            }
        }
    }
    d[axis] = sum;
    GN_TRY(set_dims(c, 0, r, d));
    /* values: vectors concatenated */
    if (r != 1 || d[0] < 0 || d[0] > MAX_VALUE_ELEMS) return GN_OK;
    bool any = false;
    for (uint32_t i = 0; i < n; i++) any |= VAL(c, first + i) != NULL;
    if (!any) return GN_OK;
    gn__partial_value *v = val_new(c, d[0], false);
    if (!v) return oom(c);
    int64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        const gn__partial_value *iv = VAL(c, first + i);
        int64_t len = s->dims[0];
        for (int64_t j = 0; j < len; j++) {
            int64_t x = 0;
            if (iv && iv->n == len && vget(iv, j, &x)) vset(v, pos + j, x);
        }
        pos += len;
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_concat_v2(ctx *c)
{
    NEED(c, 2, 1);
    return concat_impl(c, 0, c->n_in - 1, c->n_in - 1);
}

static gn_status sf_concat(ctx *c)
{
    NEED(c, 2, 1);
    return concat_impl(c, 1, c->n_in - 1, 0);
}

static gn_status sf_pack(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[MAXR];
    int32_t r = -1;
    gn__shape acc = {-1, NULL};
    uint32_t from = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        int64_t nd[MAXR];
        int32_t nr;
        if (merge_dims(&acc, IS(c, i), nd, &nr)) {
            char s1[SB], s2[SB];
            return gn__shape_fail(c, "shapes of inputs differ: %s (input %u) and %s (input %u)", sstr(IS(c, from), s1),
                                  from, sstr(IS(c, i), s2), i);
        }
        memcpy(d, nd, (nr > 0 ? (size_t)nr : 0) * sizeof *d);
        r = nr;
        acc = (gn__shape){r, d};
        if (IS(c, i)->rank >= 0 && IS(c, from)->rank < 0) from = i;
    }
    if (r < 0 || r + 1 > MAXR) return GN_OK;
    int64_t axis = attr_i(c, "axis", 0);
    if (axis < -(r + 1) || axis > r) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, r + 1);
    if (axis < 0) axis += r + 1;
    int64_t o[MAXR];
    int32_t k = 0;
    for (int32_t i = 0; i <= r; i++) {
        if (i == axis) o[k++] = c->n_in;
        if (i < r) o[k++] = d[i];
    }
    GN_TRY(set_dims(c, 0, r + 1, o));
    /* values: a vector of scalars */
    if (r != 0 || c->n_in > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, c->n_in, false);
    if (!v) return oom(c);
    for (uint32_t i = 0; i < c->n_in; i++) {
        int64_t x = 0;
        if (scalar_val(c, i, &x)) vset(v, i, x);
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_unpack(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return GN_OK;
    if (x->rank == 0) return gn__shape_fail(c, "cannot unpack a scalar");
    int64_t axis = attr_i(c, "axis", 0);
    if (axis < -x->rank || axis >= x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t num = attr_i(c, "num", (int64_t)c->n_out);
    if (x->dims[axis] >= 0 && x->dims[axis] != num)
        return gn__shape_fail(c, "dimension %lld has size %lld, not num=%lld", (long long)axis,
                              (long long)x->dims[axis], (long long)num);
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (i != axis) d[r++] = x->dims[i];
    GN_TRY(set_dims(c, 0, r, d));
    for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape;
    const gn__partial_value *v = VAL(c, 0);
    if (v && x->rank == 1 && v->n == (int64_t)c->n_out) {
        for (uint32_t k = 0; k < c->n_out; k++) {
            int64_t e = 0;
            if (!vget(v, k, &e)) continue;
            gn__partial_value *s = val_new(c, 1, true);
            if (!s) return oom(c);
            vset(s, 0, e);
            c->out[k].value = s;
        }
    }
    return GN_OK;
}

static gn_status split_common(ctx *c, const gn__shape *x, bool axis_known, int64_t axis, const int64_t *sizes,
                              uint32_t n)
{
    if (x->rank < 0) return GN_OK;
    int64_t d[MAXR];
    if (!axis_known) {
        for (int32_t i = 0; i < x->rank; i++) d[i] = -1;
        GN_TRY(set_dims(c, 0, x->rank, d));
        for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape;
        return GN_OK;
    }
    if (axis < -x->rank || axis >= x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (uint32_t k = 0; k < c->n_out && k < n; k++) {
        d[axis] = sizes[k];
        GN_TRY(set_dims_like(c, k, x->rank, d, k ? &c->out[k - 1].shape : NULL));
    }
    return GN_OK;
}

static gn_status sf_split(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 1);
    int64_t axis = 0;
    bool ak = scalar_val(c, 0, &axis);
    int64_t num = attr_i(c, "num_split", (int64_t)c->n_out);
    if (num <= 0) return gn__shape_fail(c, "num_split must be positive");
    int64_t size = -1;
    if (ak && x->rank >= 0) {
        int64_t a = axis < 0 ? axis + x->rank : axis;
        if (a >= 0 && a < x->rank && x->dims[a] >= 0) {
            if (x->dims[a] % num != 0)
                return gn__shape_fail(c, "dimension %lld (size %lld) is not divisible by num_split %lld", (long long)a,
                                      (long long)x->dims[a], (long long)num);
            size = x->dims[a] / num;
        }
    }
    int64_t sizes[1024];
    uint32_t n = c->n_out < 1024 ? c->n_out : 1024;
    for (uint32_t k = 0; k < n; k++) sizes[k] = size;
    return split_common(c, x, ak, axis, sizes, n);
}

static gn_status sf_split_v(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    int64_t axis = 0;
    bool ak = scalar_val(c, 2, &axis);
    const gn__partial_value *sv = VAL(c, 1);
    uint32_t n = c->n_out < 1024 ? c->n_out : 1024;
    int64_t sizes[1024];
    for (uint32_t k = 0; k < n; k++) sizes[k] = -1;
    if (sv && sv->n == (int64_t)c->n_out && ak && x->rank >= 0) {
        int64_t a = axis < 0 ? axis + x->rank : axis;
        int64_t dim = a >= 0 && a < x->rank ? x->dims[a] : -1;
        int32_t wild = -1;
        bool all = true;
        int64_t sum = 0;
        for (uint32_t k = 0; k < n; k++) {
            int64_t e = 0;
            if (!vget(sv, k, &e)) {
                all = false;
                continue;
            }
            if (e == -1) {
                if (wild >= 0) return gn__shape_fail(c, "only one size_splits entry may be -1");
                wild = (int32_t)k;
                continue;
            }
            if (e < -1) return gn__shape_fail(c, "size_splits entry %u is %lld", k, (long long)e);
            sizes[k] = e;
            if (__builtin_add_overflow(sum, e, &sum)) return gn__shape_fail(c, "size_splits overflow");
        }
        if (all && dim >= 0) {
            if (wild >= 0) {
                if (sum > dim)
                    return gn__shape_fail(c, "size_splits add up to %lld, more than dimension size %lld", (long long)sum,
                                          (long long)dim);
                sizes[wild] = dim - sum;
            } else if (sum != dim) {
                return gn__shape_fail(c, "size_splits add up to %lld, not the dimension size %lld", (long long)sum,
                                      (long long)dim);
            }
        }
    }
    return split_common(c, x, ak, axis, sizes, n);
}

static gn_status sf_slice(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = VAL(c, 1), *sv = VAL(c, 2);
    int32_t r = x->rank;
    if (r < 0 && bv) r = (int32_t)bv->n;
    if (r < 0 && sv) r = (int32_t)sv->n;
    if (r < 0 && IS(c, 1)->rank == 1) r = (int32_t)IS(c, 1)->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    if ((bv && bv->n != r) || (sv && sv->n != r))
        return gn__shape_fail(c, "begin and size must have one entry per dimension (rank %d)", r);
    int64_t d[MAXR], b[MAXR];
    bool bk[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1;
        int64_t s = -1;
        bk[i] = vget(bv, i, &b[i]);
        bool sk = vget(sv, i, &s);
        d[i] = -1;
        if (bk[i] && (b[i] < 0 || (dim >= 0 && b[i] > dim)))
            return gn__shape_fail(c, "begin %lld out of range for dimension %d of size %lld", (long long)b[i], i,
                                  (long long)dim);
        if (!sk) continue;
        if (s == -1) {
            if (bk[i] && dim >= 0) d[i] = dim - b[i];
            continue;
        }
        if (s < -1) return gn__shape_fail(c, "size %lld for dimension %d", (long long)s, i);
        if (bk[i] && dim >= 0 && s > dim - b[i])
            return gn__shape_fail(c, "slice [%lld, %lld) out of range for dimension %d of size %lld", (long long)b[i],
                                  (long long)(b[i] + s), i, (long long)dim);
        d[i] = s;
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    const gn__partial_value *xv = VAL(c, 0);
    if (xv && r == 1 && bk[0] && d[0] >= 0 && b[0] + d[0] <= xv->n) {
        gn__partial_value *v = val_new(c, d[0], false);
        if (!v) return oom(c);
        for (int64_t j = 0; j < d[0]; j++) {
            int64_t e = 0;
            if (vget(xv, b[0] + j, &e)) vset(v, j, e);
        }
        c->out[0].value = v;
    }
    return GN_OK;
}

enum { SS_SHRINK = -1, SS_NEWAXIS = -2 };

static gn_status sf_strided_slice(ctx *c)
{
    NEED(c, 4, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = VAL(c, 1), *ev = VAL(c, 2), *sv = VAL(c, 3);
    if (x->rank < 0 || !sv || !vall_known(sv) || sv->shape.rank != 1) return GN_OK;
    int32_t n = (int32_t)sv->n;
    if (n > 31) return GN_OK;
    if (bv && bv->n != n) bv = NULL;
    if (ev && ev->n != n) ev = NULL;
    uint32_t bm = (uint32_t)attr_i(c, "begin_mask", 0), em = (uint32_t)attr_i(c, "end_mask", 0);
    uint32_t elm = (uint32_t)attr_i(c, "ellipsis_mask", 0), nam = (uint32_t)attr_i(c, "new_axis_mask", 0);
    uint32_t sam = (uint32_t)attr_i(c, "shrink_axis_mask", 0);
    if (elm & (elm - 1)) return gn__shape_fail(c, "multiple ellipses in a slice spec are not allowed");
    int32_t rank = x->rank;
    /* sparse -> dense */
    bool seen = false;
    int32_t add_after = 0;
    for (int32_t i = 0; i < n; i++) {
        if (seen && (nam & (1u << i))) add_after++;
        if (elm & (1u << i)) seen = true;
    }
    int32_t sdims = n;
    uint32_t selm = elm;
    if (!seen) {
        selm |= 1u << n;
        sdims++;
    }
    int64_t begin[MAXR], end[MAXR], stride[MAXR];
    bool bknown[MAXR], eknown[MAXR], dbm[MAXR], dem[MAXR], dsm[MAXR];
    int32_t gather[2 * MAXR + 32];
    int32_t ng = 0, full = 0;
    for (int32_t i = 0; i < sdims; i++) {
        if (selm & (1u << i)) {
            int32_t next = rank - (sdims - i) + 1 + add_after;
            if (next > rank) next = rank;
            for (; full < next; full++) {
                begin[full] = end[full] = 0;
                stride[full] = 1;
                bknown[full] = eknown[full] = true;
                dbm[full] = dem[full] = true;
                dsm[full] = false;
                gather[ng++] = full;
            }
        } else if (nam & (1u << i)) {
            if (ng >= 2 * MAXR + 32) return GN_OK;
            gather[ng++] = SS_NEWAXIS;
        } else {
            if (full == rank)
                return gn__shape_fail(c, "index out of range using input dim %d; input has only %d dims", full, rank);
            bknown[full] = vget(bv, i, &begin[full]);
            eknown[full] = vget(ev, i, &end[full]);
            stride[full] = sv->v[i];
            dbm[full] = (bm & (1u << i)) != 0;
            dem[full] = (em & (1u << i)) != 0;
            dsm[full] = (sam & (1u << i)) != 0;
            gather[ng++] = dsm[full] ? SS_SHRINK : full;
            full++;
        }
    }
    /* the remaining dims (an ellipsis that matched nothing leaves none) */
    for (; full < rank; full++) {
        begin[full] = end[full] = 0;
        stride[full] = 1;
        bknown[full] = eknown[full] = true;
        dbm[full] = dem[full] = true;
        dsm[full] = false;
    }
    int64_t proc[MAXR];
    int64_t cb[MAXR];
    bool cbk[MAXR];
    for (int32_t i = 0; i < rank; i++) {
        int64_t s = stride[i];
        cbk[i] = false;
        if (s == 0) return gn__shape_fail(c, "strides[%d] must be non-zero", i);
        int64_t dim = x->dims[i];
        if (dim < 0) {
            proc[i] = dsm[i] ? 1 : -1;
            continue;
        }
        if (dsm[i] && s <= 0) return gn__shape_fail(c, "only stride 1 allowed on non-range indexing");
        bool b_ok = dbm[i] || bknown[i], e_ok = dem[i] || eknown[i];
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
        if (dsm[i]) {
            proc[i] = 1;
            if (!bknown[i]) continue;
            int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
            if (xf < 0 || xf >= dim)
                return gn__shape_fail(c, "slice index %lld of dimension %d out of bounds", (long long)begin[i], i);
            cb[i] = xf;
            cbk[i] = true;
            continue;
        }
        if (b_ok && e_ok) {
            int64_t bb = 0, ee = 0;
            if (dbm[i]) bb = s > 0 ? lo : hi;
            else {
                int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
                bb = xf < lo ? lo : xf > hi ? hi : xf;
            }
            if (dem[i]) ee = s > 0 ? hi : lo;
            else {
                int64_t xf = end[i] < 0 ? dim + end[i] : end[i];
                ee = xf < lo ? lo : xf > hi ? hi : xf;
            }
            int64_t len = ee - bb;
            proc[i] = (len == 0 || ((len < 0) != (s < 0))) ? 0 : len / s + (len % s != 0 ? 1 : 0);
            cb[i] = bb;
            cbk[i] = true;
        } else if (dbm[i] && dem[i] && dim > 0) {
            int64_t len = s < 0 ? -dim : dim;
            proc[i] = len / s + (len % s != 0 ? 1 : 0);
        } else {
            proc[i] = -1;
        }
    }
    int64_t d[MAXR];
    int32_t r = 0;
    bool has_new = false;
    for (int32_t k = 0; k < ng; k++) {
        if (gather[k] == SS_SHRINK) continue;
        if (r >= MAXR) return GN_OK;
        if (gather[k] == SS_NEWAXIS) {
            d[r++] = 1;
            has_new = true;
        } else {
            d[r++] = proc[gather[k]];
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    /* values: a slice of a known vector (Shape -> StridedSlice) */
    const gn__partial_value *xv = VAL(c, 0);
    if (!xv || rank != 1 || has_new || !cbk[0] || xv->n != x->dims[0]) return GN_OK;
    int64_t cnt = proc[0];
    if (cnt < 0 || cnt > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, cnt, dsm[0]);
    if (!v) return oom(c);
    for (int64_t j = 0; j < cnt; j++) {
        int64_t e = 0;
        if (vget(xv, cb[0] + j * stride[0], &e)) vset(v, j, e);
    }
    c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_pad(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ps = IS(c, 1);
    const gn__partial_value *p = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && ps->rank == 2 && ps->dims[0] >= 0) r = (int32_t)ps->dims[0];
    if (r < 0 && p) r = (int32_t)(p->n / 2);
    if (r < 0 || r > MAXR) return GN_OK;
    if (ps->rank >= 0 && (ps->rank != 2 || (ps->dims[0] >= 0 && ps->dims[0] != r) || (ps->dims[1] >= 0 && ps->dims[1] != 2))) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "paddings must be [%d, 2] for input %s, got %s", r, sstr(x, s1), sstr(ps, s2));
    }
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1, a, b;
        d[i] = -1;
        if (!p || p->n != 2 * r || !vget(p, 2 * i, &a) || !vget(p, 2 * i + 1, &b)) continue;
        if (a < 0 || b < 0) return gn__shape_fail(c, "paddings must be non-negative, got %lld and %lld for dimension %d",
                                                  (long long)a, (long long)b, i);
        if (dim >= 0 && (__builtin_add_overflow(dim, a, &d[i]) || __builtin_add_overflow(d[i], b, &d[i])))
            return gn__shape_fail(c, "padded dimension %d overflows", i);
    }
    return set_dims_like(c, 0, r, d, x);
}

static gn_status sf_tile(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ms = IS(c, 1);
    const gn__partial_value *m = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && m) r = (int32_t)m->n;
    if (r < 0 && ms->rank == 1) r = (int32_t)ms->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    if (m && m->n != r)
        return gn__shape_fail(c, "multiples has %lld elements for a tensor of rank %d", (long long)m->n, r);
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1, k;
        bool kk = vget(m, i, &k);
        if (kk && k < 0) return gn__shape_fail(c, "multiples must be non-negative, got %lld", (long long)k);
        if ((kk && k == 0) || dim == 0) d[i] = 0;
        else if (kk && dim >= 0) {
            if (__builtin_mul_overflow(dim, k, &d[i])) return gn__shape_fail(c, "tiled dimension overflows");
        } else d[i] = -1;
    }
    return set_dims_like(c, 0, r, d, x);
}

static gn_status sf_fill(ctx *c)
{
    NEED(c, 2, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, 0, &s));
    c->out[0].shape = s;
    int64_t n = gn__shape_num_elements(&s), x;
    if (n >= 0 && n <= MAX_VALUE_ELEMS && s.rank <= 1 && scalar_val(c, 1, &x)) {
        gn__partial_value *v = val_new(c, n, s.rank == 0);
        if (!v) return oom(c);
        for (int64_t j = 0; j < n; j++) vset(v, j, x);
        c->out[0].value = v;
    }
    return GN_OK;
}

static gn_status sf_range(ctx *c)
{
    NEED(c, 3, 1);
    int64_t st, li, de;
    if (!scalar_val(c, 0, &st) || !scalar_val(c, 1, &li) || !scalar_val(c, 2, &de)) return set_vector(c, 0, -1);
    if (de == 0) return gn__shape_fail(c, "delta must not be 0");
    if (de == INT64_MIN) return set_vector(c, 0, -1);
    if (de > 0 && st > li) return gn__shape_fail(c, "start %lld > limit %lld with delta %lld > 0", (long long)st, (long long)li, (long long)de);
    if (de < 0 && st < li) return gn__shape_fail(c, "start %lld < limit %lld with delta %lld < 0", (long long)st, (long long)li, (long long)de);
    int64_t span, ad = de < 0 ? -de : de;
    if (__builtin_sub_overflow(li, st, &span)) return set_vector(c, 0, -1);
    if (span < 0) span = -span;
    int64_t n = span / ad + (span % ad != 0);
    GN_TRY(set_vector(c, 0, n));
    if (n <= MAX_VALUE_ELEMS) {
        gn__partial_value *v = val_new(c, n, false);
        if (!v) return oom(c);
        for (int64_t j = 0; j < n; j++) vset(v, j, st + j * de);
        c->out[0].value = v;
    }
    return GN_OK;
}

static gn_status sf_lin_space(ctx *c)
{
    NEED(c, 3, 1);
    int64_t n = 0;
    return set_vector(c, 0, scalar_val(c, 2, &n) && n >= 0 ? n : -1);
}

static gn_status sf_zeros_like(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

/* ---- reductions ---------------------------------------------------------------- */
static gn_status reduce_impl(ctx *c, vop vo)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *a = VAL(c, 1);
    bool keep = attr_b(c, "keep_dims", false);
    if (!a || !vall_known(a)) {
        if (IS(c, 1)->rank == 1 && IS(c, 1)->dims[0] == 0) {
            c->out[0].shape = *x;
            return GN_OK;
        }
        if (keep && x->rank >= 0) {
            int64_t d[MAXR];
            for (int32_t i = 0; i < x->rank; i++) d[i] = -1;
            return set_dims(c, 0, x->rank, d);
        }
        return GN_OK;
    }
    if (x->rank < 0) return GN_OK;
    bool red[MAXR] = {false};
    for (int64_t j = 0; j < a->n; j++) {
        int64_t ax = a->v[j];
        if (ax < -x->rank || ax >= x->rank || (x->rank == 0 && ax != 0 && ax != -1))
            return gn__shape_fail(c, "reduction axis %lld out of range for rank %d", (long long)ax, x->rank);
        if (x->rank == 0) continue;
        red[ax < 0 ? ax + x->rank : ax] = true;
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (red[i]) {
            if (keep) d[r++] = 1;
        } else {
            d[r++] = x->dims[i];
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    /* values: the reduction of a known vector */
    const gn__partial_value *xv = VAL(c, 0);
    if (vo == VOP_NONE || !xv || x->rank != 1 || !red[0] || !vall_known(xv)) return GN_OK;
    int64_t acc = vo == VOP_MUL ? 1 : vo == VOP_ADD ? 0 : xv->n ? xv->v[0] : 0;
    if ((vo == VOP_MAX || vo == VOP_MIN) && !xv->n) return GN_OK;
    for (int64_t j = 0; j < xv->n; j++)
        if (!vop_apply(vo, acc, xv->v[j], &acc)) return GN_OK;
    if (!fits_dtype(c->out[0].dtype, acc)) return GN_OK;
    gn__partial_value *v = val_new(c, 1, !keep);
    if (!v) return oom(c);
    vset(v, 0, acc);
    c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_reduce(ctx *c) { return reduce_impl(c, VOP_NONE); }
static gn_status sf_sum(ctx *c) { return reduce_impl(c, VOP_ADD); }
static gn_status sf_prod(ctx *c) { return reduce_impl(c, VOP_MUL); }
static gn_status sf_max(ctx *c) { return reduce_impl(c, VOP_MAX); }
static gn_status sf_min(ctx *c) { return reduce_impl(c, VOP_MIN); }

static gn_status sf_argmax(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return GN_OK;
    if (x->rank == 0) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    int64_t a = 0;
    int64_t d[MAXR];
    int32_t r = 0;
    if (!scalar_val(c, 1, &a)) {
        for (int32_t i = 0; i < x->rank - 1; i++) d[i] = -1;
        return set_dims(c, 0, x->rank - 1, d);
    }
    if (a < -x->rank || a >= x->rank)
        return gn__shape_fail(c, "dimension %lld out of range for rank %d", (long long)a, x->rank);
    if (a < 0) a += x->rank;
    for (int32_t i = 0; i < x->rank; i++)
        if (i != a) d[r++] = x->dims[i];
    return set_dims(c, 0, r, d);
}

/* ---- gathers ---------------------------------------------------------------------- */
static gn_status gather_impl(ctx *c, const gn__shape *p, const gn__partial_value *pv, uint32_t idx_in, bool axis_known,
                             int64_t axis, int64_t bd)
{
    const gn__shape *ix = IS(c, idx_in);
    char s1[SB];
    if (p->rank >= 0 && p->rank < 1) return gn__shape_fail(c, "params must be at least 1-dimensional, got %s", sstr(p, s1));
    if (ix->rank >= 0 && bd < 0) bd += ix->rank;
    if (ix->rank >= 0 && (bd < 0 || bd > ix->rank))
        return gn__shape_fail(c, "batch_dims %lld out of range for indices %s", (long long)bd, sstr(ix, s1));
    if (p->rank < 0 || ix->rank < 0) return GN_OK;
    int32_t r = p->rank + ix->rank - 1 - (int32_t)bd;
    if (r < 0 || r > MAXR) return GN_OK;
    int64_t d[MAXR];
    if (!axis_known) {
        for (int32_t i = 0; i < r; i++) d[i] = -1;
        return set_dims(c, 0, r, d);
    }
    if (axis < -p->rank || axis >= p->rank)
        return gn__shape_fail(c, "axis %lld out of range for params %s", (long long)axis, sstr(p, s1));
    if (axis < 0) axis += p->rank;
    if (bd > axis) return gn__shape_fail(c, "batch_dims %lld must be <= axis %lld", (long long)bd, (long long)axis);
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) {
        int64_t e = p->dims[i];
        if (i < bd && e < 0) e = ix->dims[i];
        d[k++] = e;
    }
    for (int32_t i = (int32_t)bd; i < ix->rank; i++) d[k++] = ix->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < p->rank; i++) d[k++] = p->dims[i];
    GN_TRY(set_dims(c, 0, k, d));
    /* values: gathering from a known vector */
    const gn__partial_value *iv = VAL(c, idx_in);
    if (!pv || !iv || p->rank != 1 || ix->rank > 1 || iv->n > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, iv->n, ix->rank == 0);
    if (!v) return oom(c);
    for (int64_t j = 0; j < iv->n; j++) {
        int64_t q = 0, e = 0;
        if (vget(iv, j, &q) && q >= 0 && q < pv->n && vget(pv, q, &e)) vset(v, j, e);
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_gather_v2(ctx *c)
{
    NEED(c, 3, 1);
    int64_t axis = 0;
    bool ak = scalar_val(c, 2, &axis);
    return gather_impl(c, IS(c, 0), VAL(c, 0), 1, ak, axis, attr_i(c, "batch_dims", 0));
}

static gn_status sf_gather(ctx *c)
{
    NEED(c, 2, 1);
    return gather_impl(c, IS(c, 0), VAL(c, 0), 1, true, 0, 0);
}

static gn_status sf_resource_gather(ctx *c)
{
    NEED(c, 2, 1);
    const gn__handle_data *h = c->in[0].handle;
    if (!h) return GN_OK;
    return gather_impl(c, &h->shape, NULL, 1, true, attr_i(c, "batch_dims", 0), attr_i(c, "batch_dims", 0));
}

static gn_status sf_gather_nd(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *p = IS(c, 0), *ix = IS(c, 1);
    if (ix->rank < 1 || p->rank < 0) return GN_OK;
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 0) return GN_OK;
    if (k > p->rank) return gn__shape_fail(c, "index depth %lld exceeds params rank %d", (long long)k, p->rank);
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < ix->rank - 1; i++) d[r++] = ix->dims[i];
    for (int32_t i = (int32_t)k; i < p->rank; i++) {
        if (r >= MAXR) return GN_OK;
        d[r++] = p->dims[i];
    }
    return set_dims(c, 0, r, d);
}

/* ---- broadcasting ops ----------------------------------------------------------- */
static gn_status sf_broadcast_to(ctx *c)
{
    NEED(c, 2, 1);
    gn__shape t;
    GN_TRY(shape_from_tensor(c, 1, &t));
    const gn__shape *x = IS(c, 0);
    char s1[SB], s2[SB];
    if (t.rank >= 0 && x->rank >= 0) {
        if (x->rank > t.rank)
            return gn__shape_fail(c, "input %s has more dimensions than the target %s", sstr(x, s1), sstr(&t, s2));
        for (int32_t i = 0; i < x->rank; i++) {
            int64_t xi = x->dims[i], *ti = &t.dims[i + t.rank - x->rank];
            if (xi < 0) continue;
            if (*ti >= 0 && xi != 1 && xi != *ti)
                return gn__shape_fail(c, "input %s is not broadcastable to %s", sstr(x, s1), sstr(&t, s2));
            if (*ti < 0 && xi != 1) *ti = xi;
        }
    }
    c->out[0].shape = t;
    return GN_OK;
}

static gn_status sf_broadcast_args(ctx *c)
{
    NEED(c, 2, 1);
    const gn__partial_value *a = VAL(c, 0), *b = VAL(c, 1);
    const gn__shape *as = IS(c, 0), *bs = IS(c, 1);
    int64_t na = a ? a->n : as->rank == 1 ? as->dims[0] : -1;
    int64_t nb = b ? b->n : bs->rank == 1 ? bs->dims[0] : -1;
    if (na < 0 || nb < 0) return set_vector(c, 0, -1);
    int64_t n = na > nb ? na : nb;
    GN_TRY(set_vector(c, 0, n));
    if (!a || !b || n > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, n, false);
    if (!v) return oom(c);
    for (int64_t j = 0; j < n; j++) {
        int64_t ja = j - (n - na), jb = j - (n - nb), x = 1, y = 1;
        bool kx = ja < 0 || vget(a, ja, &x), ky = jb < 0 || vget(b, jb, &y);
        if (kx && ky) {
            if (x == y || y == 1) vset(v, j, x);
            else if (x == 1) vset(v, j, y);
            else return gn__shape_fail(c, "incompatible shapes: dimension %lld is %lld and %lld", (long long)j,
                                       (long long)x, (long long)y);
        } else if (kx && x > 1) {
            vset(v, j, x);
        } else if (ky && y > 1) {
            vset(v, j, y);
        }
    }
    c->out[0].value = v;
    return GN_OK;
}

static gn_status sf_broadcast_gradient_args(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) GN_TRY(set_vector(c, k, -1));
    return GN_OK;
}

/* ---- misc ----------------------------------------------------------------------- */
static gn_status sf_one_hot(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *ix = IS(c, 0);
    int64_t axis = attr_i(c, "axis", -1), depth = -1;
    if (scalar_val(c, 1, &depth) && depth < 0) return gn__shape_fail(c, "depth must be non-negative, got %lld", (long long)depth);
    if (ix->rank < 0 || ix->rank + 1 > MAXR) return GN_OK;
    if (axis < -1 || axis > ix->rank) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, ix->rank + 1);
    if (axis == -1) axis = ix->rank;
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i <= ix->rank; i++) {
        if (i == axis) d[r++] = depth;
        if (i < ix->rank) d[r++] = ix->dims[i];
    }
    return set_dims(c, 0, r, d);
}

static gn_status topk_impl(ctx *c, bool k_known, int64_t k)
{
    const gn__shape *x = IS(c, 0);
    if (k_known && k < 0) return gn__shape_fail(c, "k must be non-negative, got %lld", (long long)k);
    if (x->rank < 0) {
        return GN_OK;
    }
    if (x->rank < 1) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    int64_t last = x->dims[x->rank - 1];
    if (k_known && last >= 0 && last < k)
        return gn__shape_fail(c, "input must have at least %lld columns, got %lld", (long long)k, (long long)last);
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank - 1] = k_known ? k : -1;
    GN_TRY(set_dims(c, 0, x->rank, d));
    for (uint32_t o = 1; o < c->n_out; o++) c->out[o].shape = c->out[0].shape;
    return GN_OK;
}

static gn_status sf_topk_v2(ctx *c)
{
    NEED(c, 2, 1);
    int64_t k = -1;
    bool kk = scalar_val(c, 1, &k);
    return topk_impl(c, kk, k);
}

static gn_status sf_topk(ctx *c)
{
    NEED(c, 1, 1);
    int64_t k = -1;
    bool kk = gn__attr_get_int(c->g, c->node, "k", &k);
    return topk_impl(c, kk, k);
}

static gn_status sf_resize(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 4) return gn__shape_fail(c, "images must be 4-dimensional, got %s", sstr(x, s1));
    const gn__partial_value *sz = VAL(c, 1);
    if (sz && sz->n != 2) return gn__shape_fail(c, "size must have 2 elements, got %lld", (long long)sz->n);
    int64_t d[4] = {-1, -1, -1, -1};
    if (x->rank == 4) {
        d[0] = x->dims[0];
        d[3] = x->dims[3];
    }
    int64_t h = 0, w = 0;
    if (vget(sz, 0, &h)) d[1] = h;
    if (vget(sz, 1, &w)) d[2] = w;
    if (d[1] < -1 || d[2] < -1) return gn__shape_fail(c, "size must be non-negative");
    return set_dims(c, 0, 4, d);
}

static gn_status depth_space(ctx *c, bool to_depth)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank < 0) return GN_OK;
    if (x->rank != 4) return gn__shape_fail(c, "input must be 4-dimensional, got %s", sstr(x, s1));
    int64_t b = attr_i(c, "block_size", 0);
    if (b < 2) return gn__shape_fail(c, "block_size must be > 1, got %lld", (long long)b);
    if (b > ((int64_t)1 << 20)) return gn__shape_fail(c, "block_size %lld is too large", (long long)b);
    bool cf = channels_first(c);
    int32_t hi = cf ? 2 : 1, wi = cf ? 3 : 2, ci = cf ? 1 : 3;
    int64_t d[4];
    memcpy(d, x->dims, sizeof d);
    if (to_depth) {
        for (int k = 0; k < 2; k++) {
            int32_t i = k ? wi : hi;
            if (d[i] >= 0 && d[i] % b != 0)
                return gn__shape_fail(c, "dimension %d (size %lld) is not divisible by block_size %lld", i,
                                      (long long)d[i], (long long)b);
            if (d[i] >= 0) d[i] /= b;
        }
        if (d[ci] >= 0 && __builtin_mul_overflow(d[ci], b * b, &d[ci])) return gn__shape_fail(c, "depth overflows");
    } else {
        if (d[ci] >= 0 && d[ci] % (b * b) != 0)
            return gn__shape_fail(c, "depth %lld is not divisible by block_size^2 = %lld", (long long)d[ci],
                                  (long long)(b * b));
        if (d[ci] >= 0) d[ci] /= b * b;
        if ((d[hi] >= 0 && __builtin_mul_overflow(d[hi], b, &d[hi])) ||
            (d[wi] >= 0 && __builtin_mul_overflow(d[wi], b, &d[wi])))
            return gn__shape_fail(c, "dimension overflows");
    }
    return set_dims(c, 0, 4, d);
}

static gn_status sf_space_to_depth(ctx *c) { return depth_space(c, true); }
static gn_status sf_depth_to_space(ctx *c) { return depth_space(c, false); }

static gn_status sf_where(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[2] = {-1, IS(c, 0)->rank};
    return set_dims(c, 0, 2, d);
}

static gn_status sf_unique(ctx *c)
{
    NEED(c, 1, 1);
    GN_TRY(set_vector(c, 0, -1));
    if (c->n_out > 1) c->out[1].shape = *IS(c, 0);
    return GN_OK;
}

static gn_status sf_l2_loss(ctx *c) { return set_scalar(c, 0); }

static gn_status sf_softmax_xent(ctx *c)
{
    NEED(c, 2, 2);
    const gn__shape *f = IS(c, 0);
    GN_TRY(set_vector(c, 0, f->rank >= 1 ? f->dims[0] : -1));
    c->out[1].shape = *f;
    return GN_OK;
}

static gn_status sf_sparse_softmax_xent(ctx *c)
{
    NEED(c, 2, 2);
    c->out[0].shape = *IS(c, 1);
    c->out[1].shape = *IS(c, 0);
    return GN_OK;
}

static gn_status sf_concat_offset(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k + 1 < c->n_in; k++) c->out[k].shape = *IS(c, k + 1);
    return GN_OK;
}

/* DataFormatVecPermute / DataFormatDimMap: values follow the formats */
static bool format_attr(const ctx *c, const char *key, const char *def, char *buf)
{
    const char *s;
    size_t n;
    if (!attr_s(c, key, &s, &n)) {
        s = def;
        n = strlen(def);
    }
    if (n == 0 || n > 8) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static gn_status sf_data_format_vec_permute(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    const gn__partial_value *v = VAL(c, 0);
    char src[9], dst[9];
    if (!v || v->shape.rank != 1 || !format_attr(c, "src_format", "NHWC", src) || !format_attr(c, "dst_format", "NCHW", dst))
        return GN_OK;
    size_t n = strlen(src);
    if (strlen(dst) != n) return GN_OK;
    char s2[9], d2[9];
    if ((size_t)v->n == n - 2) {
        /* spatial dims only */
        size_t k = 0, m = 0;
        for (size_t i = 0; i < n; i++)
            if (src[i] != 'N' && src[i] != 'C') s2[k++] = src[i];
        for (size_t i = 0; i < n; i++)
            if (dst[i] != 'N' && dst[i] != 'C') d2[m++] = dst[i];
        s2[k] = d2[m] = '\0';
    } else if ((size_t)v->n == n) {
        memcpy(s2, src, n + 1);
        memcpy(d2, dst, n + 1);
    } else {
        return GN_OK;
    }
    gn__partial_value *o = val_new(c, v->n, false);
    if (!o) return oom(c);
    for (int64_t j = 0; j < v->n; j++) {
        const char *p = strchr(s2, d2[j]);
        int64_t e = 0;
        if (p && vget(v, p - s2, &e)) vset(o, j, e);
    }
    c->out[0].value = o;
    return GN_OK;
}

static gn_status sf_data_format_dim_map(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    const gn__partial_value *v = VAL(c, 0);
    char src[9], dst[9];
    if (!v || !format_attr(c, "src_format", "NHWC", src) || !format_attr(c, "dst_format", "NCHW", dst)) return GN_OK;
    int64_t n = (int64_t)strlen(src);
    if ((int64_t)strlen(dst) != n) return GN_OK;
    gn__partial_value *o = val_new(c, v->n, v->shape.rank == 0);
    if (!o) return oom(c);
    for (int64_t j = 0; j < v->n; j++) {
        int64_t e = 0;
        if (!vget(v, j, &e) || e < -n || e >= n) continue;
        if (e < 0) e += n;
        const char *p = strchr(dst, src[e]);
        if (p) vset(o, j, p - dst);
    }
    c->out[0].value = o;
    return GN_OK;
}

/* SpaceToBatchND (paddings) and BatchToSpaceND (crops): the dilated
 * convolution idiom; block shape and pads from inputs 1 and 2, or for the v1
 * ops from block_size and input 1 */
static gn_status space_batch(ctx *c, bool to_batch, bool v1)
{
    NEED(c, v1 ? 2 : 3, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = v1 ? NULL : VAL(c, 1), *pv = VAL(c, v1 ? 1 : 2);
    int64_t m = -1, bs[MAXR];
    if (v1) {
        m = 2;
        bs[0] = bs[1] = attr_i(c, "block_size", -1);
    } else if (bv && bv->n <= MAXR) {
        m = bv->n;
        for (int64_t i = 0; i < m; i++)
            if (!vget(bv, i, &bs[i])) bs[i] = -1;
    } else if (IS(c, 1)->rank == 1) {
        m = IS(c, 1)->dims[0];
        for (int64_t i = 0; i < m && i < MAXR; i++) bs[i] = -1;
    }
    if (x->rank < 0) return GN_OK;
    if (m < 0 || m + 1 > x->rank) {
        int64_t d[MAXR];
        for (int32_t i = 0; i < x->rank; i++) d[i] = m < 0 ? -1 : i > m ? x->dims[i] : -1;
        return set_dims(c, 0, x->rank, d);
    }
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    int64_t prod = 1;
    for (int64_t i = 0; i < m; i++) {
        if (bs[i] == 0 || bs[i] < -1) return gn__shape_fail(c, "block shape entries must be positive, got %lld", (long long)bs[i]);
        if (bs[i] < 0 || prod < 0) prod = -1;
        else if (__builtin_mul_overflow(prod, bs[i], &prod)) return gn__shape_fail(c, "block shape overflows");
        int64_t a = 0, b = 0;
        bool pk = pv && pv->n == 2 * m && vget(pv, 2 * i, &a) && vget(pv, 2 * i + 1, &b);
        int64_t in = x->dims[i + 1];
        if (!pk || in < 0 || bs[i] < 0) {
            d[i + 1] = -1;
            continue;
        }
        if (a < 0 || b < 0) return gn__shape_fail(c, "%s must be non-negative", to_batch ? "paddings" : "crops");
        if (to_batch) {
            int64_t p;
            if (__builtin_add_overflow(in, a, &p) || __builtin_add_overflow(p, b, &p))
                return gn__shape_fail(c, "padded dimension overflows");
            if (p % bs[i] != 0)
                return gn__shape_fail(c, "padded dimension %lld (size %lld) is not divisible by block size %lld",
                                      (long long)(i + 1), (long long)p, (long long)bs[i]);
            d[i + 1] = p / bs[i];
        } else {
            int64_t p;
            if (__builtin_mul_overflow(in, bs[i], &p) || __builtin_sub_overflow(p, a, &p) ||
                __builtin_sub_overflow(p, b, &p))
                return gn__shape_fail(c, "dimension overflows");
            if (p < 0) return gn__shape_fail(c, "crops are larger than dimension %lld", (long long)(i + 1));
            d[i + 1] = p;
        }
    }
    if (x->dims[0] >= 0 && prod > 0) {
        if (to_batch) {
            if (__builtin_mul_overflow(x->dims[0], prod, &d[0])) return gn__shape_fail(c, "batch overflows");
        } else {
            if (x->dims[0] % prod != 0)
                return gn__shape_fail(c, "batch %lld is not divisible by the block size product %lld",
                                      (long long)x->dims[0], (long long)prod);
            d[0] = x->dims[0] / prod;
        }
    } else {
        d[0] = -1;
    }
    return set_dims(c, 0, x->rank, d);
}

static gn_status sf_space_to_batch_nd(ctx *c) { return space_batch(c, true, false); }
static gn_status sf_batch_to_space_nd(ctx *c) { return space_batch(c, false, false); }
static gn_status sf_space_to_batch(ctx *c) { return space_batch(c, true, true); }
static gn_status sf_batch_to_space(ctx *c) { return space_batch(c, false, true); }

/* output 0 has input i's shape */
static gn_status like_input(ctx *c, uint32_t i)
{
    NEED(c, i + 1, 1);
    c->out[0].shape = *IS(c, i);
    return GN_OK;
}
static gn_status sf_like_input1(ctx *c) { return like_input(c, 1); }

static gn_status sf_fused_batch_norm_grad(ctx *c)
{
    NEED(c, 3, 1);
    int64_t d[MAXR];
    int32_t r;
    if (merge_dims(IS(c, 0), IS(c, 1), d, &r)) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "y_backprop %s and x %s must have the same shape", sstr(IS(c, 0), s1), sstr(IS(c, 1), s2));
    }
    GN_TRY(set_dims_like(c, 0, r, d, IS(c, 1)));
    const gn__shape *sc = IS(c, 2);
    int64_t ch = sc->rank == 1 ? sc->dims[0] : -1;
    if (ch < 0 && r >= 2) ch = d[channels_first(c) ? 1 : r - 1];
    for (uint32_t k = 1; k < c->n_out && k < 3; k++) GN_TRY(set_vector(c, k, ch));
    for (uint32_t k = 3; k < c->n_out && k < 5; k++) GN_TRY(set_vector(c, k, 0));
    return GN_OK;
}

/* ---- audio (the keyword-spotting front ends) ------------------------------------- */
static gn_status sf_decode_wav(ctx *c)
{
    NEED(c, 1, 1);
    int64_t ch = attr_i(c, "desired_channels", -1), n = attr_i(c, "desired_samples", -1);
    int64_t d[2] = {n > 0 ? n : -1, ch > 0 ? ch : -1};
    GN_TRY(set_dims(c, 0, 2, d));
    if (c->n_out > 1) set_scalar(c, 1);
    return GN_OK;
}

static gn_status sf_audio_spectrogram(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 2) return gn__shape_fail(c, "input must be 2-dimensional, got %s", sstr(x, s1));
    int64_t w = attr_i(c, "window_size", 0), st = attr_i(c, "stride", 0);
    if (w <= 0 || st <= 0 || w > ((int64_t)1 << 40)) return GN_OK;
    int64_t len = x->rank == 2 ? x->dims[0] : -1, frames = -1;
    if (len >= 0) frames = len < w ? 0 : 1 + (len - w) / st;
    int64_t fft = 1;
    while (fft < w) fft <<= 1;
    int64_t d[3] = {x->rank == 2 ? x->dims[1] : -1, frames, 1 + fft / 2};
    return set_dims(c, 0, 3, d);
}

static gn_status sf_mfcc(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 3) return gn__shape_fail(c, "spectrogram must be 3-dimensional, got %s", sstr(x, s1));
    int64_t d[3] = {x->rank == 3 ? x->dims[0] : -1, x->rank == 3 ? x->dims[1] : -1,
                    attr_i(c, "dct_coefficient_count", 13)};
    return set_dims(c, 0, 3, d);
}

/* ---- TensorArray / TensorList / Stack ------------------------------------------------- */
static gn_status sf_tensor_array(ctx *c)
{
    NEED(c, 0, 1);
    GN_TRY(set_vector(c, 0, 2));
    if (c->n_out > 1) set_scalar(c, 1);
    gn__handle_data *h = gn__arena_alloc(c->arena, sizeof *h, _Alignof(gn__handle_data));
    if (!h) return oom(c);
    int dt = 0;
    gn__attr_get_type(c->g, c->node, "dtype", &dt);
    h->dtype = dt;
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, "element_shape", &present);
    if (!gn__shape_from_proto(present ? p : NULL, c->arena, &h->shape)) return oom(c);
    c->out[0].handle = h;
    return GN_OK;
}

static gn_status sf_tensor_array_grad(ctx *c)
{
    NEED(c, 1, 1);
    GN_TRY(set_vector(c, 0, 2));
    c->out[0].handle = c->in[0].handle;
    if (c->n_out > 1) set_scalar(c, 1);
    return GN_OK;
}

static gn_status sf_tensor_array_read(ctx *c)
{
    NEED(c, 1, 1);
    if (c->in[0].handle) c->out[0].shape = c->in[0].handle->shape;
    return GN_OK;
}

static gn_status sf_tensor_array_gather(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *ix = IS(c, 1);
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, "element_shape", &present);
    gn__shape es;
    if (!gn__shape_from_proto(present ? p : NULL, c->arena, &es)) return oom(c);
    if (es.rank < 0 && c->in[0].handle) es = c->in[0].handle->shape;
    if (es.rank < 0 || es.rank + 1 > MAXR) return GN_OK;
    int64_t d[MAXR];
    d[0] = ix->rank == 1 ? ix->dims[0] : -1;
    for (int32_t i = 0; i < es.rank; i++) d[i + 1] = es.dims[i];
    return set_dims(c, 0, es.rank + 1, d);
}

static gn_status sf_tensor_array_concat(ctx *c)
{
    NEED(c, 1, 1);
    bool present;
    const Tensorflow__TensorShapeProto *p = attr_shape(c, "element_shape_except0", &present);
    gn__shape es;
    if (!gn__shape_from_proto(present ? p : NULL, c->arena, &es)) return oom(c);
    if (es.rank >= 0 && es.rank + 1 <= MAXR) {
        int64_t d[MAXR];
        d[0] = -1;
        for (int32_t i = 0; i < es.rank; i++) d[i + 1] = es.dims[i];
        GN_TRY(set_dims(c, 0, es.rank + 1, d));
    }
    if (c->n_out > 1) GN_TRY(set_vector(c, 1, -1));
    return GN_OK;
}

static gn_status sf_tensor_list_stack(ctx *c)
{
    NEED(c, 2, 1);
    gn__shape es;
    GN_TRY(shape_from_tensor(c, 1, &es));
    if (es.rank < 0 || es.rank + 1 > MAXR) return GN_OK;
    int64_t n = attr_i(c, "num_elements", -1);
    int64_t d[MAXR];
    d[0] = n >= 0 ? n : -1;
    for (int32_t i = 0; i < es.rank; i++) d[i + 1] = es.dims[i];
    return set_dims(c, 0, es.rank + 1, d);
}

static gn_status sf_tensor_list_pop_back(ctx *c)
{
    NEED(c, 2, 1);
    set_scalar(c, 0);
    if (c->n_out < 2) return GN_OK;
    gn__shape es;
    GN_TRY(shape_from_tensor(c, 1, &es));
    c->out[1].shape = es;
    return GN_OK;
}

static gn_status sf_tensor_list_gather(ctx *c)
{
    NEED(c, 3, 1);
    gn__shape es;
    GN_TRY(shape_from_tensor(c, 2, &es));
    if (es.rank < 0 || es.rank + 1 > MAXR) return GN_OK;
    const gn__shape *ix = IS(c, 1);
    int64_t d[MAXR];
    d[0] = ix->rank == 1 ? ix->dims[0] : -1;
    for (int32_t i = 0; i < es.rank; i++) d[i + 1] = es.dims[i];
    return set_dims(c, 0, es.rank + 1, d);
}

static gn_status sf_vector_unknown(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) GN_TRY(set_vector(c, k, -1));
    return GN_OK;
}

static gn_status sf_stack_push(ctx *c)
{
    NEED(c, 2, 1);
    c->out[0].shape = *IS(c, 1);
    return GN_OK;
}

/* ---- ops the later kernels brought -------------------------------------------- */
/* NonMaxSuppressionV3: [?] int32. V4: [max_output_size] when padded (else
 * [?]) and valid_outputs []. V5: indices and scores [?] (padded:
 * [max_output_size]), valid_outputs []. */
static gn_status sf_nms(ctx *c)
{
    NEED(c, 3, 1);
    int64_t m = -1;
    if (attr_b(c, "pad_to_max_output_size", false)) (void)scalar_val(c, 2, &m);
    GN_TRY(set_vector(c, 0, m));
    if (c->n_out == 3) {   /* V5: selected_scores too */
        GN_TRY(set_vector(c, 1, m));
        return set_scalar(c, 2);
    }
    return c->n_out == 2 ? set_scalar(c, 1) : GN_OK;
}

/* CombinedNonMaxSuppression: boxes [batch, d, 4], scores and classes
 * [batch, d], valid_detections [batch]; d is max_total_size, or with
 * pad_per_class min(max_total_size, max_output_size_per_class *
 * num_classes). */
static gn_status sf_combined_nms(ctx *c)
{
    NEED(c, 6, 4);
    const gn__shape *sc = IS(c, 1);
    int64_t batch = sc->rank == 3 ? sc->dims[0] : -1, classes = sc->rank == 3 ? sc->dims[2] : -1, per = -1, total = -1;
    (void)scalar_val(c, 2, &per);
    (void)scalar_val(c, 3, &total);
    int64_t d = total;
    if (attr_b(c, "pad_per_class", false))
        d = total >= 0 && per >= 0 && classes >= 0 ? (per * classes < total ? per * classes : total) : -1;
    GN_TRY(set_dims(c, 0, 3, (int64_t[3]){batch, d, 4}));
    GN_TRY(set_dims(c, 1, 2, (int64_t[2]){batch, d}));
    GN_TRY(set_dims(c, 2, 2, (int64_t[2]){batch, d}));
    return set_vector(c, 3, batch);
}

/* CropAndResize: [num_boxes, crop_height, crop_width, depth]. */
static gn_status sf_crop_and_resize(ctx *c)
{
    NEED(c, 4, 1);
    const gn__shape *im = IS(c, 0), *bx = IS(c, 1);
    int64_t d[4] = {-1, -1, -1, -1}, v = 0;
    if (bx->rank == 2) d[0] = bx->dims[0];
    if (im->rank == 4) d[3] = im->dims[3];
    const gn__partial_value *sz = VAL(c, 3);
    if (vget(sz, 0, &v)) d[1] = v;
    if (vget(sz, 1, &v)) d[2] = v;
    return set_dims(c, 0, 4, d);
}

/* Segment reductions: [num_segments (unsorted: input 2; sorted: ?)] +
 * data's dims past segment_ids' rank. */
static gn_status sf_segment(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ids = IS(c, 1);
    if (x->rank < 0 || ids->rank < 0 || ids->rank > x->rank) return set_dims(c, 0, -1, NULL);
    int64_t d[MAXR], n = -1;
    if (c->n_in > 2) (void)scalar_val(c, 2, &n);
    int32_t r = 1 + x->rank - ids->rank;
    d[0] = n;
    for (int32_t i = 1; i < r; i++) d[i] = x->dims[ids->rank + i - 1];
    return set_dims(c, 0, r, d);
}

/* UniqueV2 over axis a: y is x with dim a unknown, idx [x.dim(a)]; an
 * empty axis is Unique of a vector. */
static gn_status sf_unique_v2(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *ax = VAL(c, 1);
    int64_t a = 0;
    if (ax && ax->n == 0) return sf_unique(c);
    if (x->rank < 0 || !vget(ax, 0, &a)) {
        GN_TRY(set_dims(c, 0, -1, NULL));
        return set_vector(c, 1, -1);
    }
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank) return gn__shape_fail(c, "axis %lld is out of range for rank %d", (long long)a, x->rank);
    int64_t d[MAXR];
    for (int32_t i = 0; i < x->rank; i++) d[i] = i == a ? -1 : x->dims[i];
    GN_TRY(set_dims(c, 0, x->rank, d));
    return set_vector(c, 1, x->dims[a]);
}

/* Bincount: [size]. DenseBincount: [size], or [batch, size] for a matrix. */
static gn_status sf_bincount(ctx *c)
{
    NEED(c, 2, 1);
    int64_t size = -1;
    (void)scalar_val(c, 1, &size);
    const gn__shape *x = IS(c, 0);
    if (x->rank == 2) return set_dims(c, 0, 2, (int64_t[2]){x->dims[0], size});
    return set_vector(c, 0, size);
}

/* FFT / IFFT: the input's shape; RFFT*: the innermost dims become
 * fft_length (the last one fft_length / 2 + 1); IRFFT*: fft_length. */
static gn_status sf_fft(ctx *c)
{
    NEED(c, 1, 1);
    const char *op = gn__node_op(c->g, c->node);
    const gn__shape *x = IS(c, 0);
    int32_t k = strstr(op, "3D") ? 3 : strstr(op, "2D") ? 2 : 1;
    bool real = op[0] == 'R', inverse_real = op[0] == 'I' && op[1] == 'R';
    if (!real && !inverse_real) {
        set_shape(c, 0, x);
        return GN_OK;
    }
    if (x->rank < 0 || x->rank < k || x->rank > MAXR) return set_dims(c, 0, -1, NULL);
    int64_t d[MAXR];
    for (int32_t i = 0; i < x->rank; i++) d[i] = x->dims[i];
    const gn__partial_value *len = VAL(c, 1);
    for (int32_t j = 0; j < k; j++) {
        int64_t n = 0, *dim = &d[x->rank - k + j];
        if (!vget(len, j, &n)) *dim = -1;
        else *dim = real && j == k - 1 ? (n ? n / 2 + 1 : 0) : n;
    }
    return set_dims(c, 0, x->rank, d);
}

/* Ops without outputs (Assert, PrintV2): nothing to say. */
static gn_status sf_none(ctx *c)
{
    (void)c;
    return GN_OK;
}

static gn_status sf_string_scalar(ctx *c)
{
    return set_scalar(c, 0);
}

/* ---- the table -------------------------------------------------------------------- */
typedef struct shape_fn_entry {
    const char *name;
    gn__shape_fn fn;
} shape_fn_entry;

#include "ops/shape_xla.inc"

#define UNARY gn__shape_fn_unary
#define BCAST gn__shape_fn_broadcast

/* sorted by name (strcmp order); tests check it */
static const shape_fn_entry shape_fns[] = {
    {"Abs", UNARY},
    {"Acos", UNARY},
    {"Acosh", UNARY},
    {"Add", sf_add},
    {"AddN", sf_add_n},
    {"AddV2", sf_add},
    {"All", sf_reduce},
    {"Angle", UNARY},
    {"Any", sf_reduce},
    {"ApproximateEqual", BCAST},
    {"ArgMax", sf_argmax},
    {"ArgMin", sf_argmax},
    {"AsString", UNARY},
    {"Asin", UNARY},
    {"Asinh", UNARY},
    {"Assert", sf_none},
    {"Assign", sf_assign},
    {"AssignAdd", UNARY},
    {"AssignSub", UNARY},
    {"Atan", UNARY},
    {"Atan2", BCAST},
    {"Atanh", UNARY},
    {"AudioSpectrogram", sf_audio_spectrogram},
    {"AvgPool", sf_pool},
    {"AvgPool3D", sf_pool3d},
    {"AvgPool3DGrad", sf_shape_input0},
    {"AvgPoolGrad", sf_shape_input0},
    {"BatchMatMul", sf_batch_matmul},
    {"BatchMatMulV2", sf_batch_matmul_v2},
    {"BatchMatMulV3", sf_batch_matmul_v2},
    {"BatchToSpace", sf_batch_to_space},
    {"BatchToSpaceND", sf_batch_to_space_nd},
    {"BesselI0e", UNARY},
    {"BesselI1e", UNARY},
    {"BiasAdd", sf_bias_add},
    {"BiasAddGrad", sf_bias_add_grad},
    {"BiasAddV1", sf_bias_add_v1},
    {"Bincount", sf_bincount},
    {"BitwiseAnd", BCAST},
    {"BitwiseOr", BCAST},
    {"BitwiseXor", BCAST},
    {"BroadcastArgs", sf_broadcast_args},
    {"BroadcastGradientArgs", sf_broadcast_gradient_args},
    {"BroadcastTo", sf_broadcast_to},
    {"Bucketize", UNARY},
    {"Cast", sf_cast},
    {"Ceil", UNARY},
    {"CheckNumerics", sf_identity},
    {"CheckNumericsV2", sf_identity},
    {"ClipByValue", UNARY},
    {"CombinedNonMaxSuppression", sf_combined_nms},
    {"Complex", BCAST},
    {"ComplexAbs", UNARY},
    {"Concat", sf_concat},
    {"ConcatOffset", sf_concat_offset},
    {"ConcatV2", sf_concat_v2},
    {"Conj", UNARY},
    {"ConjugateTranspose", sf_transpose},
    {"Const", sf_const},
    {"Conv2D", sf_conv2d},
    {"Conv2DBackpropFilter", sf_shape_input1},
    {"Conv2DBackpropFilterV2", sf_like_input1},
    {"Conv2DBackpropInput", sf_conv2d_backprop_input},
    {"Conv2DBackpropInputV2", UNARY},
    {"Conv3D", sf_conv3d},
    {"Conv3DBackpropFilter", sf_like_input1},
    {"Conv3DBackpropFilterV2", sf_shape_input1},
    {"Conv3DBackpropInput", UNARY},
    {"Conv3DBackpropInputV2", sf_shape_input0},
    {"Cos", UNARY},
    {"Cosh", UNARY},
    {"CropAndResize", sf_crop_and_resize},
    {"Cumprod", UNARY},
    {"Cumsum", UNARY},
    {"CumulativeLogsumexp", UNARY},
    {"DataFormatDimMap", sf_data_format_dim_map},
    {"DataFormatVecPermute", sf_data_format_vec_permute},
    {"DebugGradientIdentity", sf_identity},
    {"DebugGradientRefIdentity", sf_identity},
    {"DebugIdentity", sf_identity},
    {"DebugIdentityV2", sf_identity},
    {"DebugIdentityV3", sf_identity},
    {"DecodeWav", sf_decode_wav},
    {"DenseBincount", sf_bincount},
    {"DepthToSpace", sf_depth_to_space},
    {"DepthwiseConv2dNative", sf_depthwise},
    {"DepthwiseConv2dNativeBackpropFilter", sf_shape_input1},
    {"DepthwiseConv2dNativeBackpropInput", sf_conv2d_backprop_input},
    {"Dequantize", UNARY},
    {"Digamma", UNARY},
    {"Div", BCAST},
    {"DivNoNan", BCAST},
    {"Einsum", sf_einsum},
    {"Elu", UNARY},
    {"EluGrad", UNARY},
    {"Empty", sf_shape_input0},
    {"EmptyTensorList", sf_scalar},
    {"EnsureShape", sf_ensure_shape},
    {"Enter", sf_identity},
    {"Equal", BCAST},
    {"Erf", UNARY},
    {"Erfc", UNARY},
    {"Erfinv", UNARY},
    {"EuclideanNorm", sf_reduce},
    {"Exit", sf_identity},
    {"Exp", UNARY},
    {"ExpandDims", sf_expand_dims},
    {"Expm1", UNARY},
    {"FFT", sf_fft},
    {"FFT2D", sf_fft},
    {"FFT3D", sf_fft},
    {"FakeQuantWithMinMaxArgs", UNARY},
    {"FakeQuantWithMinMaxVars", UNARY},
    {"FakeQuantWithMinMaxVarsPerChannel", UNARY},
    {"Fill", sf_fill},
    {"Floor", UNARY},
    {"FloorDiv", sf_floordiv},
    {"FloorMod", sf_floormod},
    {"FusedBatchNorm", sf_fused_batch_norm},
    {"FusedBatchNormGrad", sf_fused_batch_norm_grad},
    {"FusedBatchNormGradV2", sf_fused_batch_norm_grad},
    {"FusedBatchNormGradV3", sf_fused_batch_norm_grad},
    {"FusedBatchNormV2", sf_fused_batch_norm},
    {"FusedBatchNormV3", sf_fused_batch_norm},
    {"Gather", sf_gather},
    {"GatherNd", sf_gather_nd},
    {"GatherV2", sf_gather_v2},
    {"Greater", BCAST},
    {"GreaterEqual", BCAST},
    {"GuaranteeConst", sf_identity},
    {"HostConst", sf_const},
    {"IFFT", sf_fft},
    {"IFFT2D", sf_fft},
    {"IFFT3D", sf_fft},
    {"IRFFT", sf_fft},
    {"IRFFT2D", sf_fft},
    {"IRFFT3D", sf_fft},
    {"Identity", sf_identity},
    {"IdentityN", sf_identity},
    {"Igamma", BCAST},
    {"Igammac", BCAST},
    {"Imag", UNARY},
    {"ImmutableConst", sf_variable},
    {"Inv", UNARY},
    {"InvGrad", UNARY},
    {"Invert", UNARY},
    {"InvertPermutation", UNARY},
    {"IsFinite", UNARY},
    {"IsInf", UNARY},
    {"IsNan", UNARY},
    {"L2Loss", sf_l2_loss},
    {"LRN", UNARY},
    {"LeakyRelu", UNARY},
    {"LeakyReluGrad", UNARY},
    {"LeftShift", BCAST},
    {"Less", BCAST},
    {"LessEqual", BCAST},
    {"Lgamma", UNARY},
    {"LinSpace", sf_lin_space},
    {"Log", UNARY},
    {"Log1p", UNARY},
    {"LogSoftmax", sf_unary_rank1},
    {"LogicalAnd", BCAST},
    {"LogicalNot", UNARY},
    {"LogicalOr", BCAST},
    {"LoopCond", sf_identity},
    {"MatMul", sf_matmul},
    {"MatrixBandPart", UNARY},
    {"Max", sf_max},
    {"MaxPool", sf_pool},
    {"MaxPool3D", sf_pool3d},
    {"MaxPool3DGrad", UNARY},
    {"MaxPool3DGradGrad", sf_like_input1},
    {"MaxPoolGrad", UNARY},
    {"MaxPoolGradGrad", sf_like_input1},
    {"MaxPoolGradGradV2", sf_like_input1},
    {"MaxPoolGradV2", UNARY},
    {"MaxPoolV2", sf_pool_v2},
    {"MaxPoolWithArgmax", sf_pool},
    {"Maximum", sf_maximum},
    {"Mean", sf_reduce},
    {"Merge", sf_merge},
    {"Mfcc", sf_mfcc},
    {"Min", sf_min},
    {"Minimum", sf_minimum},
    {"MirrorPad", sf_pad},
    {"Mod", BCAST},
    {"Mul", sf_mul},
    {"MulNoNan", BCAST},
    {"Ndtri", UNARY},
    {"Neg", UNARY},
    {"NextAfter", BCAST},
    {"NextIteration", sf_identity},
    {"NonMaxSuppressionV3", sf_nms},
    {"NonMaxSuppressionV4", sf_nms},
    {"NonMaxSuppressionV5", sf_nms},
    {"NotEqual", BCAST},
    {"OneHot", sf_one_hot},
    {"OnesLike", sf_zeros_like},
    {"Pack", sf_pack},
    {"Pad", sf_pad},
    {"PadV2", sf_pad},
    {"Placeholder", sf_placeholder},
    {"PlaceholderV2", sf_placeholder},
    {"PlaceholderWithDefault", sf_placeholder_with_default},
    {"Polygamma", BCAST},
    {"Pow", BCAST},
    {"PreventGradient", sf_identity},
    {"Print", sf_identity},
    {"PrintV2", sf_none},
    {"Prod", sf_prod},
    {"QuantizeAndDequantize", UNARY},
    {"QuantizeAndDequantizeV2", UNARY},
    {"QuantizeAndDequantizeV3", UNARY},
    {"QuantizeAndDequantizeV4", UNARY},
    {"RFFT", sf_fft},
    {"RFFT2D", sf_fft},
    {"RFFT3D", sf_fft},
    {"RandomStandardNormal", sf_shape_input0},
    {"RandomUniform", sf_shape_input0},
    {"RandomUniformInt", sf_shape_input0},
    {"Range", sf_range},
    {"Rank", sf_rank},
    {"ReadVariableOp", sf_read_variable},
    {"Real", UNARY},
    {"RealDiv", BCAST},
    {"Reciprocal", UNARY},
    {"ReciprocalGrad", UNARY},
    {"RefEnter", sf_identity},
    {"RefExit", sf_identity},
    {"RefIdentity", sf_identity},
    {"RefMerge", sf_merge},
    {"RefNextIteration", sf_identity},
    {"RefSwitch", sf_switch},
    {"RegexReplace", UNARY},
    {"Relu", UNARY},
    {"Relu6", UNARY},
    {"Relu6Grad", UNARY},
    {"ReluGrad", UNARY},
    {"Reshape", sf_reshape},
    {"ResizeArea", sf_resize},
    {"ResizeBicubic", sf_resize},
    {"ResizeBilinear", sf_resize},
    {"ResizeNearestNeighbor", sf_resize},
    {"ResizeNearestNeighborGrad", sf_resize},
    {"ResourceGather", sf_resource_gather},
    {"Reverse", UNARY},
    {"ReverseSequence", UNARY},
    {"ReverseV2", UNARY},
    {"RightShift", BCAST},
    {"Rint", UNARY},
    {"Roll", UNARY},
    {"Round", UNARY},
    {"Rsqrt", UNARY},
    {"RsqrtGrad", UNARY},
    {"ScatterNd", sf_shape_input2},
    {"SegmentMax", sf_segment},
    {"SegmentMean", sf_segment},
    {"SegmentMin", sf_segment},
    {"SegmentSum", sf_segment},
    {"Select", sf_select},
    {"SelectV2", sf_select_v2},
    {"Selu", UNARY},
    {"SeluGrad", UNARY},
    {"Shape", sf_shape},
    {"ShapeN", sf_shape},
    {"Sigmoid", UNARY},
    {"SigmoidGrad", UNARY},
    {"Sign", UNARY},
    {"Sin", UNARY},
    {"Sinh", UNARY},
    {"Size", sf_size},
    {"Slice", sf_slice},
    {"Snapshot", sf_identity},
    {"Softmax", sf_unary_rank1},
    {"SoftmaxCrossEntropyWithLogits", sf_softmax_xent},
    {"Softplus", UNARY},
    {"SoftplusGrad", UNARY},
    {"Softsign", UNARY},
    {"SoftsignGrad", UNARY},
    {"SpaceToBatch", sf_space_to_batch},
    {"SpaceToBatchND", sf_space_to_batch_nd},
    {"SpaceToDepth", sf_space_to_depth},
    {"SparseSoftmaxCrossEntropyWithLogits", sf_sparse_softmax_xent},
    {"SparseToDense", sf_shape_input1},
    {"Split", sf_split},
    {"SplitV", sf_split_v},
    {"Sqrt", UNARY},
    {"SqrtGrad", UNARY},
    {"Square", UNARY},
    {"SquaredDifference", BCAST},
    {"Squeeze", sf_squeeze},
    {"StackPopV2", NULL},
    {"StackPushV2", sf_stack_push},
    {"StackV2", sf_scalar},
    {"StatelessRandomNormal", sf_shape_input0},
    {"StatelessRandomNormalV2", sf_shape_input0},
    {"StatelessRandomUniform", sf_shape_input0},
    {"StatelessRandomUniformInt", sf_shape_input0},
    {"StatelessRandomUniformV2", sf_shape_input0},
    {"StatelessTruncatedNormal", sf_shape_input0},
    {"StatelessTruncatedNormalV2", sf_shape_input0},
    {"StaticRegexReplace", UNARY},
    {"StopGradient", sf_identity},
    {"StridedSlice", sf_strided_slice},
    {"StridedSliceGrad", sf_shape_input0},
    {"StringFormat", sf_string_scalar},
    {"StringLower", UNARY},
    {"StringStrip", UNARY},
    {"StringToHashBucket", UNARY},
    {"StringToHashBucketFast", UNARY},
    {"StringToHashBucketStrong", UNARY},
    {"StringToNumber", UNARY},
    {"StringUpper", UNARY},
    {"Sub", sf_sub},
    {"Sum", sf_sum},
    {"Switch", sf_switch},
    {"Tan", UNARY},
    {"Tanh", UNARY},
    {"TanhGrad", UNARY},
    {"TemporaryVariable", sf_variable},
    {"TensorArrayCloseV3", NULL},
    {"TensorArrayConcatV3", sf_tensor_array_concat},
    {"TensorArrayGatherV3", sf_tensor_array_gather},
    {"TensorArrayGradV3", sf_tensor_array_grad},
    {"TensorArrayGradWithShape", sf_tensor_array_grad},
    {"TensorArrayReadV3", sf_tensor_array_read},
    {"TensorArrayScatterV3", sf_scalar},
    {"TensorArraySizeV3", sf_scalar},
    {"TensorArraySplitV3", sf_scalar},
    {"TensorArrayV3", sf_tensor_array},
    {"TensorArrayWriteV3", sf_scalar},
    {"TensorListElementShape", sf_vector_unknown},
    {"TensorListFromTensor", sf_scalar},
    {"TensorListGather", sf_tensor_list_gather},
    {"TensorListGetItem", sf_shape_input2},
    {"TensorListLength", sf_scalar},
    {"TensorListPopBack", sf_tensor_list_pop_back},
    {"TensorListPushBack", sf_scalar},
    {"TensorListReserve", sf_scalar},
    {"TensorListResize", sf_scalar},
    {"TensorListScatter", sf_scalar},
    {"TensorListScatterIntoExistingList", sf_scalar},
    {"TensorListScatterV2", sf_scalar},
    {"TensorListSetItem", sf_scalar},
    {"TensorListSplit", sf_scalar},
    {"TensorListStack", sf_tensor_list_stack},
    {"TensorScatterAdd", UNARY},
    {"TensorScatterMax", UNARY},
    {"TensorScatterMin", UNARY},
    {"TensorScatterSub", UNARY},
    {"TensorScatterUpdate", UNARY},
    {"Tile", sf_tile},
    {"TopK", sf_topk},
    {"TopKV2", sf_topk_v2},
    {"Transpose", sf_transpose},
    {"TruncateDiv", BCAST},
    {"TruncateMod", BCAST},
    {"TruncatedNormal", sf_shape_input0},
    {"Unique", sf_unique},
    {"UniqueV2", sf_unique_v2},
    {"Unpack", sf_unpack},
    {"UnsortedSegmentMax", sf_segment},
    {"UnsortedSegmentMin", sf_segment},
    {"UnsortedSegmentProd", sf_segment},
    {"UnsortedSegmentSum", sf_segment},
    {"VarHandleOp", sf_var_handle},
    {"VarIsInitializedOp", sf_scalar},
    {"Variable", sf_variable},
    {"VariableV2", sf_variable},
    {"Where", sf_where},
    {"Xdivy", BCAST},
    {"XlaBroadcastHelper", sf_xla_broadcast_helper},
    {"XlaConvV2", sf_xla_conv},
    {"XlaDotV2", sf_xla_dot},
    {"XlaDynamicSlice", sf_xla_dynamic_slice},
    {"XlaDynamicUpdateSlice", sf_xla_dynamic_update_slice},
    {"XlaEinsum", sf_einsum},
    {"XlaGather", sf_xla_gather},
    {"XlaOptimizationBarrier", sf_identity},
    {"XlaPad", sf_xla_pad},
    {"XlaReduce", sf_xla_reduce},
    {"XlaReduceWindow", sf_xla_reduce_window},
    {"XlaRemoveDynamicDimensionSize", sf_xla_remove_dynamic_dimension_size},
    {"XlaScatter", sf_xla_scatter},
    {"XlaSelectAndScatter", sf_xla_select_and_scatter},
    {"XlaSetDynamicDimensionSize", sf_xla_set_dynamic_dimension_size},
    {"XlaSharding", sf_xla_sharding},
    {"XlaSort", sf_xla_sort},
    {"XlaVariadicReduceV2", sf_xla_variadic_reduce},
    {"XlaVariadicSort", sf_xla_variadic_sort},
    {"Xlog1py", BCAST},
    {"Xlogy", BCAST},
    {"ZerosLike", sf_zeros_like},
    {"Zeta", BCAST},
    {"_Arg", NULL},
    {"_FusedBatchNormEx", sf_fused_batch_norm},
    {"_FusedBatchNormGradEx", sf_fused_batch_norm_grad},
    {"_FusedConv2D", sf_conv2d},
    {"_FusedDepthwiseConv2dNative", sf_depthwise},
    {"_FusedMatMul", sf_matmul},
    {"_HostConst", sf_const},
    {"_SwitchN", sf_switch},
    {"_UnaryOpsComposition", UNARY},
};

gn__shape_fn gn__shape_fn_for(const char *op)
{
    size_t lo = 0, hi = GN__ARRAY_LEN(shape_fns);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(shape_fns[mid].name, op);
        if (cmp == 0) return shape_fns[mid].fn;
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

uint32_t gn__shape_fn_count(void) { return (uint32_t)GN__ARRAY_LEN(shape_fns); }

const char *gn__shape_fn_name(uint32_t i) { return i < GN__ARRAY_LEN(shape_fns) ? shape_fns[i].name : NULL; }
