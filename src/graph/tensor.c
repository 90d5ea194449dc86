/* TensorProto checks, after tensorflow/core/framework/tensor.cc (FromProto). */
#include "graph/tensor.h"

#include "tensorflow/core/framework/types.pb-c.h"

gn_status gn__shape_check(const Tensorflow__TensorShapeProto *s, bool allow_unknown, int64_t *numel, gn__err *err)
{
    *numel = 1;
    if (!s) return GN_OK; /* absent shape: a scalar */
    if (s->unknown_rank) {
        if (!allow_unknown) return gn__fail(err, GN_ERR_GRAPH, "shape has unknown rank");
        if (s->n_dim) return gn__fail(err, GN_ERR_GRAPH, "shape has unknown rank but %zu dims", s->n_dim);
        *numel = -1;
        return GN_OK;
    }
    bool unknown = false;
    for (size_t i = 0; i < s->n_dim; i++) {
        int64_t d = s->dim[i]->size;
        if (d == -1 && allow_unknown) {
            unknown = true;
            continue;
        }
        if (d < 0) return gn__fail(err, GN_ERR_GRAPH, "dim %zu is %lld", i, (long long)d);
        if (!unknown) {
            if (d != 0 && *numel > INT64_MAX / d)
                return gn__fail(err, GN_ERR_GRAPH, "element count of the shape overflows int64 (dim %zu)", i);
            *numel *= d;
        }
    }
    /* an overflow check must hold for known dims even past an unknown one */
    if (unknown) {
        int64_t n = 1;
        for (size_t i = 0; i < s->n_dim; i++) {
            int64_t d = s->dim[i]->size;
            if (d <= 0) continue;
            if (n > INT64_MAX / d) return gn__fail(err, GN_ERR_GRAPH, "element count of the shape overflows int64");
            n *= d;
        }
        *numel = -1;
    }
    return GN_OK;
}

size_t gn__tensor_typed_count(const Tensorflow__TensorProto *p, int32_t dt, const char **field)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: *field = "float_val"; return p->n_float_val;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: *field = "double_val"; return p->n_double_val;
    case TENSORFLOW__DATA_TYPE__DT_INT32:
    case TENSORFLOW__DATA_TYPE__DT_INT16:
    case TENSORFLOW__DATA_TYPE__DT_INT8:
    case TENSORFLOW__DATA_TYPE__DT_UINT8:
    case TENSORFLOW__DATA_TYPE__DT_UINT16:
    case TENSORFLOW__DATA_TYPE__DT_QINT8:
    case TENSORFLOW__DATA_TYPE__DT_QUINT8:
    case TENSORFLOW__DATA_TYPE__DT_QINT16:
    case TENSORFLOW__DATA_TYPE__DT_QUINT16:
    case TENSORFLOW__DATA_TYPE__DT_QINT32: *field = "int_val"; return p->n_int_val;
    case TENSORFLOW__DATA_TYPE__DT_INT64: *field = "int64_val"; return p->n_int64_val;
    case TENSORFLOW__DATA_TYPE__DT_UINT32: *field = "uint32_val"; return p->n_uint32_val;
    case TENSORFLOW__DATA_TYPE__DT_UINT64: *field = "uint64_val"; return p->n_uint64_val;
    case TENSORFLOW__DATA_TYPE__DT_BOOL: *field = "bool_val"; return p->n_bool_val;
    case TENSORFLOW__DATA_TYPE__DT_HALF:
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: *field = "half_val"; return p->n_half_val;
    case TENSORFLOW__DATA_TYPE__DT_STRING: *field = "string_val"; return p->n_string_val;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX64: *field = "scomplex_val"; return p->n_scomplex_val / 2;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX128: *field = "dcomplex_val"; return p->n_dcomplex_val / 2;
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E5M2:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3FN:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3FNUZ:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3B11FNUZ:
    case TENSORFLOW__DATA_TYPE__DT_FLOAT8_E5M2FNUZ: *field = "float8_val"; return p->float8_val.len;
    case TENSORFLOW__DATA_TYPE__DT_RESOURCE: *field = "resource_handle_val"; return p->n_resource_handle_val;
    case TENSORFLOW__DATA_TYPE__DT_VARIANT: *field = "variant_val"; return p->n_variant_val;
    default: *field = "?"; return 0;
    }
}

gn_status gn__tensor_check(const Tensorflow__TensorProto *t, gn__err *err)
{
    int32_t dt = (int32_t)t->dtype;
    if (!gn__dtype_valid(dt)) return gn__fail(err, GN_ERR_GRAPH, "tensor has invalid dtype %d", dt);
    int64_t numel;
    GN_TRY(gn__shape_check(t->tensor_shape, false, &numel, err));
    size_t esz = gn__dtype_size(dt);
    if (t->tensor_content.len) {
        if (esz == 0) return GN_OK; /* strings (varint-framed), sub-byte and opaque types */
        if ((uint64_t)numel > SIZE_MAX / esz || t->tensor_content.len != (size_t)numel * esz)
            return gn__fail(err, GN_ERR_GRAPH,
                            "tensor_content has %zu bytes; %s with %lld elements needs %llu",
                            t->tensor_content.len, gn__dtype_enum_name(dt), (long long)numel,
                            (unsigned long long)((uint64_t)numel * esz));
        return GN_OK;
    }
    const char *field = NULL;
    size_t nvals = gn__tensor_typed_count(t, dt > 100 ? dt - 100 : dt, &field);
    if ((uint64_t)nvals > (uint64_t)numel)
        return gn__fail(err, GN_ERR_GRAPH, "%s has %zu values for %lld elements", field, nvals, (long long)numel);
    return GN_OK;
}
