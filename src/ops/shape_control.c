/* Shape functions: identity-like ops (Identity, Switch, Merge, EnsureShape)
 * and the TensorArray / TensorList / Stack families. */
#include "ops/shape_fn.h"

/* ---- identity-like ----------------------------------------------------------- */
gn_status gn__sf_identity(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k < c->n_in; k++) pass_through(c, k, k);
    return GN_OK;
}

gn_status gn__sf_switch(ctx *c)
{
    NEED(c, 1, 1);
    for (uint32_t k = 0; k < c->n_out; k++) pass_through(c, k, 0);
    return GN_OK;
}

gn_status gn__sf_merge(ctx *c)
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

gn_status gn__sf_ensure_shape(ctx *c)
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

/* ---- TensorArray / TensorList / Stack ------------------------------------------------- */
gn_status gn__sf_tensor_array(ctx *c)
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

gn_status gn__sf_tensor_array_grad(ctx *c)
{
    NEED(c, 1, 1);
    GN_TRY(set_vector(c, 0, 2));
    c->out[0].handle = c->in[0].handle;
    if (c->n_out > 1) set_scalar(c, 1);
    return GN_OK;
}

gn_status gn__sf_tensor_array_read(ctx *c)
{
    NEED(c, 1, 1);
    if (c->in[0].handle) c->out[0].shape = c->in[0].handle->shape;
    return GN_OK;
}

gn_status gn__sf_tensor_array_gather(ctx *c)
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

gn_status gn__sf_tensor_array_concat(ctx *c)
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

gn_status gn__sf_tensor_list_stack(ctx *c)
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

gn_status gn__sf_tensor_list_pop_back(ctx *c)
{
    NEED(c, 2, 1);
    set_scalar(c, 0);
    if (c->n_out < 2) return GN_OK;
    gn__shape es;
    GN_TRY(shape_from_tensor(c, 1, &es));
    c->out[1].shape = es;
    return GN_OK;
}

gn_status gn__sf_tensor_list_gather(ctx *c)
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

gn_status gn__sf_vector_unknown(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) GN_TRY(set_vector(c, k, -1));
    return GN_OK;
}

gn_status gn__sf_stack_push(ctx *c)
{
    NEED(c, 2, 1);
    c->out[0].shape = *IS(c, 1);
    return GN_OK;
}
