/* TensorProto <-> gn__tensor, after tensorflow/core/framework/tensor.cc
 * (Tensor::FromProto, AsProtoTensorContent) and
 * tensorflow/core/platform/tensor_coding.cc (string lists).
 *
 * Decoding: tensor_content holds the little-endian element bytes (for
 * DT_STRING: every element's varint32 length, then all the bytes); otherwise
 * the typed field of the dtype holds the values, where fewer values than
 * elements means "repeat the last value" and none means all zero. More values
 * than elements, or content bytes that do not match dtype and shape, are
 * errors (TensorFlow would truncate the former; a graph that relies on it is
 * malformed). DT_RESOURCE and DT_VARIANT are not supported. */
#include <stdlib.h>

#include "grapnel/runtime.h"
#include "ops/kernels/array_impl.h"

typedef struct layout {
    int32_t dtype;
    int32_t rank;
    int64_t dims[GN__MAX_DIMS];
    int64_t n;
    size_t esz;          /* fixed-size element bytes; sizeof(gn__tstring) for strings */
    size_t str_bytes;    /* strings: bytes of string data */
} layout;

static const char *dtn(int32_t dt) { return gn__dtype_name(dt); }

/* Reads a varint32 at *pos (< end); false when malformed. */
static bool varint32(const uint8_t *b, size_t end, size_t *pos, uint32_t *v)
{
    uint32_t r = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
        if (*pos >= end) return false;
        uint8_t byte = b[(*pos)++];
        r |= (uint32_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static gn_status proto_layout(const Tensorflow__TensorProto *p, layout *l, gn__err *err)
{
    memset(l, 0, sizeof *l);
    int32_t dt = (int32_t)p->dtype;
    l->dtype = dt;
    if (dt == TENSORFLOW__DATA_TYPE__DT_RESOURCE || dt == TENSORFLOW__DATA_TYPE__DT_VARIANT)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "tensors of dtype %s are not supported", dtn(dt));
    if (dt > 100 || !gn__dtype_valid(dt)) return gn__fail(err, GN_ERR_GRAPH, "tensor has invalid dtype %d", dt);
    l->esz = gn__ak_esize(dt);
    if (!l->esz) return gn__fail(err, GN_ERR_UNSUPPORTED, "tensors of dtype %s are not supported", dtn(dt));
    int64_t n;
    GN_TRY(gn__shape_check(p->tensor_shape, false, &n, err));
    size_t rank = p->tensor_shape ? p->tensor_shape->n_dim : 0;
    if (rank > GN__MAX_DIMS)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "tensor rank %zu is over the supported %d", rank, GN__MAX_DIMS);
    l->rank = (int32_t)rank;
    for (size_t i = 0; i < rank; i++) l->dims[i] = p->tensor_shape->dim[i]->size;
    l->n = n;
    if ((uint64_t)n > SIZE_MAX / l->esz) return gn__fail(err, GN_ERR_NOMEM, "tensor of %lld elements is too large", (long long)n);

    if (dt != TENSORFLOW__DATA_TYPE__DT_STRING) {
        if (p->tensor_content.len) {
            if (p->tensor_content.len != (size_t)n * l->esz)
                return gn__fail(err, GN_ERR_GRAPH, "tensor_content has %zu bytes; %s with %lld elements needs %llu",
                                p->tensor_content.len, dtn(dt), (long long)n,
                                (unsigned long long)((uint64_t)n * l->esz));
            return GN_OK;
        }
        const char *field;
        size_t m = gn__tensor_typed_count(p, dt, &field);
        if ((uint64_t)m > (uint64_t)n)
            return gn__fail(err, GN_ERR_GRAPH, "%s has %zu values for %lld elements", field, m, (long long)n);
        if ((dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX64 && p->n_scomplex_val % 2) ||
            (dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX128 && p->n_dcomplex_val % 2))
            return gn__fail(err, GN_ERR_GRAPH, "%s has an odd number of floats", field);
        return GN_OK;
    }

    /* strings */
    if (p->tensor_content.len) {
        const uint8_t *b = p->tensor_content.data;
        size_t end = p->tensor_content.len, pos = 0;
        uint64_t total = 0;
        for (int64_t i = 0; i < n; i++) {
            uint32_t len;
            if (!varint32(b, end, &pos, &len))
                return gn__fail(err, GN_ERR_GRAPH, "string tensor_content is malformed: length %lld of %lld is cut",
                                (long long)i, (long long)n);
            total += len;
        }
        if (total != end - pos)
            return gn__fail(err, GN_ERR_GRAPH,
                            "string tensor_content is malformed: the lengths add up to %llu bytes, %zu follow them",
                            (unsigned long long)total, end - pos);
        l->str_bytes = (size_t)total;
        return GN_OK;
    }
    size_t m = p->n_string_val;
    if ((uint64_t)m > (uint64_t)n)
        return gn__fail(err, GN_ERR_GRAPH, "string_val has %zu values for %lld elements", m, (long long)n);
    size_t total = 0;
    for (size_t i = 0; i < m; i++) {
        if (p->string_val[i].len > SIZE_MAX - total) return gn__fail(err, GN_ERR_NOMEM, "string tensor too large");
        total += p->string_val[i].len;
    }
    /* repeated last values share the last value's bytes */
    l->str_bytes = total;
    return GN_OK;
}

typedef struct {
    float re, im;
} c64;
typedef struct {
    double re, im;
} c128;

#define GN__FILL(T, ARR, CNT, CONV)                                                                                    \
    do {                                                                                                               \
        T *d_ = data;                                                                                                  \
        size_t m_ = (CNT);                                                                                             \
        if (m_ == 0) {                                                                                                 \
            memset(data, 0, (size_t)n * sizeof(T));                                                                    \
            break;                                                                                                     \
        }                                                                                                              \
        for (size_t i_ = 0; i_ < m_; i_++) d_[i_] = CONV((ARR), i_);                                                   \
        for (int64_t i_ = (int64_t)m_; i_ < n; i_++) d_[i_] = d_[m_ - 1];                                              \
    } while (0)

#define GN__PLAIN(a, i) (a)[i]
#define GN__I8(a, i) ((int8_t)(a)[i])
#define GN__U8(a, i) ((uint8_t)(a)[i])
#define GN__I16(a, i) ((int16_t)(a)[i])
#define GN__U16(a, i) ((uint16_t)(a)[i])
#define GN__BOOL(a, i) ((uint8_t)((a)[i] ? 1 : 0))
#define GN__C64(a, i) ((c64){(a)[2 * (i)], (a)[2 * (i) + 1]})
#define GN__C128(a, i) ((c128){(a)[2 * (i)], (a)[2 * (i) + 1]})

/* Fills data (l->n elements) from p; for strings `data` is the gn__tstring
 * array and `storage` the string bytes (l->str_bytes). */
static void proto_fill(const Tensorflow__TensorProto *p, const layout *l, void *data, char *storage)
{
    int64_t n = l->n;
    if (n == 0) return;
    int32_t dt = l->dtype;
    if (dt == TENSORFLOW__DATA_TYPE__DT_STRING) {
        gn__tstring *s = data;
        if (p->tensor_content.len) {
            const uint8_t *b = p->tensor_content.data;
            size_t pos = 0;
            for (int64_t i = 0; i < n; i++) {
                uint32_t len = 0;
                (void)varint32(b, p->tensor_content.len, &pos, &len);
                s[i].len = len;
            }
            for (int64_t i = 0; i < n; i++) {
                s[i].ptr = storage;
                if (s[i].len) memcpy(storage, b + pos, s[i].len);
                pos += s[i].len;
                storage += s[i].len;
            }
            return;
        }
        size_t m = p->n_string_val;
        if (m == 0) {
            for (int64_t i = 0; i < n; i++) s[i] = (gn__tstring){storage, 0};
            return;
        }
        for (size_t i = 0; i < m; i++) {
            size_t len = p->string_val[i].len;
            s[i].ptr = storage;
            s[i].len = len;
            if (len) memcpy(storage, p->string_val[i].data, len);
            storage += len;
        }
        for (int64_t i = (int64_t)m; i < n; i++) s[i] = s[m - 1];
        return;
    }
    if (p->tensor_content.len) {
        memcpy(data, p->tensor_content.data, p->tensor_content.len);
        return;
    }
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: GN__FILL(float, p->float_val, p->n_float_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: GN__FILL(double, p->double_val, p->n_double_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_INT32:
    case TENSORFLOW__DATA_TYPE__DT_QINT32: GN__FILL(int32_t, p->int_val, p->n_int_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_INT16:
    case TENSORFLOW__DATA_TYPE__DT_QINT16: GN__FILL(int16_t, p->int_val, p->n_int_val, GN__I16); break;
    case TENSORFLOW__DATA_TYPE__DT_UINT16:
    case TENSORFLOW__DATA_TYPE__DT_QUINT16: GN__FILL(uint16_t, p->int_val, p->n_int_val, GN__U16); break;
    case TENSORFLOW__DATA_TYPE__DT_INT8:
    case TENSORFLOW__DATA_TYPE__DT_QINT8: GN__FILL(int8_t, p->int_val, p->n_int_val, GN__I8); break;
    case TENSORFLOW__DATA_TYPE__DT_UINT8:
    case TENSORFLOW__DATA_TYPE__DT_QUINT8: GN__FILL(uint8_t, p->int_val, p->n_int_val, GN__U8); break;
    case TENSORFLOW__DATA_TYPE__DT_INT64: GN__FILL(int64_t, p->int64_val, p->n_int64_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_UINT32: GN__FILL(uint32_t, p->uint32_val, p->n_uint32_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_UINT64: GN__FILL(uint64_t, p->uint64_val, p->n_uint64_val, GN__PLAIN); break;
    case TENSORFLOW__DATA_TYPE__DT_BOOL: GN__FILL(uint8_t, p->bool_val, p->n_bool_val, GN__BOOL); break;
    case TENSORFLOW__DATA_TYPE__DT_HALF:
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: GN__FILL(uint16_t, p->half_val, p->n_half_val, GN__U16); break;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX64: GN__FILL(c64, p->scomplex_val, p->n_scomplex_val / 2, GN__C64); break;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX128:
        GN__FILL(c128, p->dcomplex_val, p->n_dcomplex_val / 2, GN__C128);
        break;
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E5M2:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3FN:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3FNUZ:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3B11FNUZ:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E5M2FNUZ:
        GN__FILL(uint8_t, p->float8_val.data, p->float8_val.len, GN__PLAIN);
        break;
    default: memset(data, 0, (size_t)n * l->esz); break;
    }
}

static void set_shape(gn__tensor *t, const layout *l)
{
    t->dtype = l->dtype;
    t->rank = l->rank;
    for (int32_t i = 0; i < l->rank; i++) t->dims[i] = l->dims[i];
    t->dead = false;
}

/* The proto holds every element (tensor_content, or one typed value per
 * element): decoding it allocates no more than the proto already takes. */
static bool carries_all(const Tensorflow__TensorProto *p, const layout *l)
{
    if (p->tensor_content.len) return true;
    const char *field;
    return (int64_t)gn__tensor_typed_count(p, l->dtype, &field) == l->n;
}

/* The tensor decoded into a buffer from alloc (gn__buffer_new when NULL). */
static gn_status decode(const Tensorflow__TensorProto *p, gn__buffer *(*alloc)(void *user, uint32_t output, size_t bytes),
                        void *user, gn__tensor *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    layout l;
    GN_TRY(proto_layout(p, &l, err));
    size_t head = (size_t)l.n * l.esz;
    bool str = l.dtype == TENSORFLOW__DATA_TYPE__DT_STRING;
    size_t extra = str ? l.str_bytes : 0;
    if (extra > SIZE_MAX - head) return gn__fail(err, GN_ERR_NOMEM, "tensor too large");
    if (head + extra > GN__TENSOR_EXPAND_MAX && !carries_all(p, &l)) {
        const char *field;
        char b1[32], b2[32];
        size_t m = gn__tensor_typed_count(p, l.dtype, &field);
        return gn__fail(err, GN_ERR_LIMIT,
                        "tensor of %lld %s elements (%s) given by %zu value%s: expanding it is over the limit of %s",
                        (long long)l.n, gn_dtype_numpy_name(l.dtype), gn__fmt_bytes(b1, sizeof b1, head + extra), m,
                        m == 1 ? "" : "s", gn__fmt_bytes(b2, sizeof b2, GN__TENSOR_EXPAND_MAX));
    }
    gn__buffer *b = alloc ? alloc(user, 0, head + extra) : gn__buffer_new(head + extra);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "cannot allocate %zu bytes for a tensor", head + extra);
    proto_fill(p, &l, b->data, str ? (char *)b->data + head : NULL);
    set_shape(out, &l);
    out->data = b->data;
    out->nbytes = head;
    out->buf = b;
    return GN_OK;
}

gn_status gn__tensor_from_proto(const Tensorflow__TensorProto *p, gn__tensor *out, gn__err *err)
{
    return decode(p, NULL, NULL, out, err);
}

/* The bytes of p that already have the tensor's layout, or NULL. */
static const void *aliasable(const Tensorflow__TensorProto *p, const layout *l)
{
    if (l->n == 0 || l->dtype == TENSORFLOW__DATA_TYPE__DT_STRING) return NULL;
    const void *d = NULL;
    if (p->tensor_content.len) d = p->tensor_content.data;
    else {
        switch (l->dtype) {
        case TENSORFLOW__DATA_TYPE__DT_FLOAT:
            if ((int64_t)p->n_float_val == l->n) d = p->float_val;
            break;
        case TENSORFLOW__DATA_TYPE__DT_DOUBLE:
            if ((int64_t)p->n_double_val == l->n) d = p->double_val;
            break;
        case TENSORFLOW__DATA_TYPE__DT_INT32:
            if ((int64_t)p->n_int_val == l->n) d = p->int_val;
            break;
        case TENSORFLOW__DATA_TYPE__DT_INT64:
            if ((int64_t)p->n_int64_val == l->n) d = p->int64_val;
            break;
        case TENSORFLOW__DATA_TYPE__DT_UINT32:
            if ((int64_t)p->n_uint32_val == l->n) d = p->uint32_val;
            break;
        case TENSORFLOW__DATA_TYPE__DT_UINT64:
            if ((int64_t)p->n_uint64_val == l->n) d = p->uint64_val;
            break;
        default: break;
        }
    }
    /* natural alignment of the element type (complex: of its parts) */
    size_t align = l->esz > 8 ? 8 : l->esz;
    if (!d || ((uintptr_t)d % align)) return NULL;
    return d;
}

gn_status gn__tensor_view_proto(const Tensorflow__TensorProto *p, gn__tensor *out, gn__err *err)
{
    layout l;
    GN_TRY(proto_layout(p, &l, err));
    const void *alias = aliasable(p, &l);
    if (!alias) return gn__tensor_from_proto(p, out, err);
    memset(out, 0, sizeof *out);
    set_shape(out, &l);
    out->data = (void *)alias;
    out->nbytes = (size_t)l.n * l.esz;
    return GN_OK;
}

gn_status gn__tensor_view_proto_alloc(const Tensorflow__TensorProto *p,
                                      gn__buffer *(*alloc)(void *user, uint32_t output, size_t bytes), void *user,
                                      gn__tensor *out, gn__err *err)
{
    layout l;
    GN_TRY(proto_layout(p, &l, err));
    const void *alias = aliasable(p, &l);
    if (!alias) return decode(p, alloc, user, out, err);
    memset(out, 0, sizeof *out);
    set_shape(out, &l);
    out->data = (void *)alias;
    out->nbytes = (size_t)l.n * l.esz;
    return GN_OK;
}

gn_status gn__ak_tensor_from_proto_out(gn__kctx *c, uint32_t k, const Tensorflow__TensorProto *p, bool borrow)
{
    layout l;
    gn_status s = proto_layout(p, &l, c->err);
    if (s != GN_OK) {
        gn__err_prefix(c->err, "node '%s' (%s): attr 'value'", gn__node_name(c->g, c->node),
                       gn__node_op(c->g, c->node));
        return s;
    }
    if (k >= c->n_out) return gn__kctx_fail(c, GN_ERR_INTERNAL, "output %u of %u", k, c->n_out);
    const void *alias = borrow ? aliasable(p, &l) : NULL;
    if (alias) {
        gn__tensor *o = &c->out[k];
        gn__tensor_release(o);
        set_shape(o, &l);
        o->data = (void *)alias;
        o->nbytes = (size_t)l.n * l.esz;
        o->buf = NULL;
        return GN_OK;
    }
    gn__tensor *t;
    if (l.dtype == TENSORFLOW__DATA_TYPE__DT_STRING) {
        char *storage;
        GN_TRY(gn__kctx_output_strings(c, k, l.rank, l.dims, l.str_bytes, &t, &storage));
        proto_fill(p, &l, t->data, storage);
        return GN_OK;
    }
    GN_TRY(gn__kctx_output(c, k, l.dtype, l.rank, l.dims, &t));
    proto_fill(p, &l, t->data, NULL);
    return GN_OK;
}

/* ---- encoding ------------------------------------------------------------------------ */
static void *pb_alloc(ProtobufCAllocator *a, size_t n)
{
    return a->alloc(a->allocator_data, n ? n : 1);
}

gn_status gn__tensor_to_proto(const gn__tensor *t, ProtobufCAllocator *alloc, Tensorflow__TensorProto **out,
                              gn__err *err)
{
    *out = NULL;
    int32_t dt = t->dtype;
    size_t esz = gn__ak_esize(dt);
    if (!esz || dt > 100)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "cannot encode a tensor of dtype %s", dtn(dt));
    if (t->rank < 0 || t->rank > GN__MAX_DIMS)
        return gn__fail(err, GN_ERR_INTERNAL, "tensor rank %d", t->rank);
    Tensorflow__TensorProto *p = pb_alloc(alloc, sizeof *p);
    Tensorflow__TensorShapeProto *sh = pb_alloc(alloc, sizeof *sh);
    if (!p || !sh) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
    tensorflow__tensor_proto__init(p);
    tensorflow__tensor_shape_proto__init(sh);
    p->dtype = (Tensorflow__DataType)dt;
    p->tensor_shape = sh;
    if (t->rank) {
        sh->dim = pb_alloc(alloc, (size_t)t->rank * sizeof *sh->dim);
        if (!sh->dim) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
        for (int32_t i = 0; i < t->rank; i++) {
            Tensorflow__TensorShapeProto__Dim *d = pb_alloc(alloc, sizeof *d);
            if (!d) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
            tensorflow__tensor_shape_proto__dim__init(d);
            d->size = t->dims[i];
            sh->dim[i] = d;
        }
        sh->n_dim = (size_t)t->rank;
    }
    int64_t n = gn__tensor_numel(t);
    if (dt == TENSORFLOW__DATA_TYPE__DT_STRING) {
        if (n) {
            const gn__tstring *s = t->data;
            p->string_val = pb_alloc(alloc, (size_t)n * sizeof *p->string_val);
            if (!p->string_val) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
            for (int64_t i = 0; i < n; i++) {
                p->string_val[i].len = s[i].len;
                p->string_val[i].data = NULL;
                if (s[i].len) {
                    p->string_val[i].data = pb_alloc(alloc, s[i].len);
                    if (!p->string_val[i].data) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
                    memcpy(p->string_val[i].data, s[i].ptr, s[i].len);
                }
            }
            p->n_string_val = (size_t)n;
        }
    } else if (n) {
        size_t bytes = (size_t)n * esz;
        uint8_t *d = pb_alloc(alloc, bytes);
        if (!d) return gn__fail(err, GN_ERR_NOMEM, "out of memory encoding a tensor");
        memcpy(d, t->data, bytes);
        if (dt == TENSORFLOW__DATA_TYPE__DT_BOOL)
            for (size_t i = 0; i < bytes; i++) d[i] = d[i] ? 1 : 0;
        p->tensor_content.data = d;
        p->tensor_content.len = bytes;
    }
    *out = p;
    return GN_OK;
}
