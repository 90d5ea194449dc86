/* Shape functions: sources: constants, placeholders, variables and resource
 * reads. */
#include "ops/shape_fn.h"

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

gn_status gn__sf_const(ctx *c)
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

gn_status gn__sf_placeholder(ctx *c)
{
    NEED(c, 0, 1);
    return shape_attr_out(c, "shape");
}

gn_status gn__sf_placeholder_with_default(ctx *c)
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

gn_status gn__sf_variable(ctx *c)
{
    NEED(c, 0, 1);
    return shape_attr_out(c, "shape");
}

gn_status gn__sf_var_handle(ctx *c)
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

gn_status gn__sf_read_variable(ctx *c)
{
    NEED(c, 1, 1);
    const gn__handle_data *h = c->in[0].handle;
    if (h) c->out[0].shape = h->shape;
    return GN_OK;
}

gn_status gn__sf_assign(ctx *c)
{
    NEED(c, 2, 1);
    c->out[0].shape = *IS(c, 1);
    return GN_OK;
}

gn_status gn__sf_scalar(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) set_scalar(c, k);
    return GN_OK;
}
