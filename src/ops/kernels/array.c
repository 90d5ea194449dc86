/* Array kernels: constants, placeholders, identities, shapes, reshaping,
 * concatenation and splitting (the other array kernels live in array_slice.c,
 * array_gather.c, array_misc.c, array_format.c).
 *
 * TensorFlow semantics, after tensorflow/core/kernels/{constant_op,
 * identity_op, reshape_op, squeeze_op, shape_ops, concat_op, pack_op,
 * unpack_op, split_op, split_v_op, fill, transpose_op, broadcast_to_op}.cc.
 * Type-agnostic kernels work on every dtype by element size; strings are
 * copied (never shared with an input). */
#include <stdio.h>
#include <stdlib.h>

#include "ops/kernels/array_impl.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

static gn_status need_inputs(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

/* ---- constants and placeholders ----------------------------------------------------- */
gn_status gn__array_k_const(gn__kctx *c)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'value' is missing or not a tensor");
    int dtype;
    if (gn__attr_get_type(c->g, c->node, "dtype", &dtype) && dtype != (int)v->tensor->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Type mismatch between value (%s) and dtype (%s)",
                             gn__dtype_name((int32_t)v->tensor->dtype), gn__dtype_name(dtype));
    return gn__ak_tensor_from_proto_out(c, 0, v->tensor, true);
}

gn_status gn__array_k_placeholder(gn__kctx *c)
{
    return gn__kctx_fail(c, GN_ERR_ARG, "no value fed");
}

gn_status gn__array_k_forward(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    return gn__kctx_forward(c, 0, 0);
}

gn_status gn__array_k_identity_n(gn__kctx *c)
{
    for (uint32_t i = 0; i < c->n_in && i < c->n_out; i++) GN_TRY(gn__kctx_forward(c, i, i));
    return GN_OK;
}

gn_status gn__array_k_noop(gn__kctx *c)
{
    (void)c;
    return GN_OK;
}

/* "x" or "x:1": the node's data input k as TensorFlow spells it. */
static void input_name(const gn__kctx *c, uint32_t k, char *buf, size_t n)
{
    const gn__node *nd = gn__node_at(c->g, c->node);
    if (k >= nd->n_in) {
        snprintf(buf, n, "input %u", k);
        return;
    }
    gn__edge e = nd->in[k];
    if (e.index) snprintf(buf, n, "%s:%u", gn__node_name(c->g, e.node), e.index);
    else snprintf(buf, n, "%s", gn__node_name(c->g, e.node));
}

gn_status gn__array_k_ensure_shape(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "shape");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE || !v->shape)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'shape' is missing or not a shape");
    const Tensorflow__TensorShapeProto *s = v->shape;
    if (s->unknown_rank) return gn__kctx_forward(c, 0, 0);
    const gn__tensor *x = &c->in[0];
    bool ok = (int64_t)s->n_dim == x->rank;
    for (size_t i = 0; ok && i < s->n_dim; i++)
        if (s->dim[i]->size >= 0 && s->dim[i]->size != x->dims[i]) ok = false;
    if (!ok) {
        char name[300], a[GN__AK_SHAPE_STR], b[GN__AK_SHAPE_STR];
        int64_t d[GN__MAX_DIMS];
        int32_t r = s->n_dim > GN__MAX_DIMS ? GN__MAX_DIMS : (int32_t)s->n_dim;
        for (int32_t i = 0; i < r; i++) d[i] = s->dim[i]->size < 0 ? -1 : s->dim[i]->size;
        input_name(c, 0, name, sizeof name);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Shape of tensor %s %s is not compatible with expected shape %s.", name,
                             gn__ak_tshape(a, x), gn__ak_shape_str(b, r, d));
    }
    return gn__kctx_forward(c, 0, 0);
}

/* ---- reshaping ---------------------------------------------------------------------- */
gn_status gn__array_k_reshape(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *st = &c->in[1];
    char sb[GN__AK_SHAPE_STR];
    if (st->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "sizes input must be 1-D, not %s", gn__ak_tshape(sb, st));
    if (st->dtype != DT_INT32 && st->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "desired shape must be a DT_INT32 or DT_INT64 vector, not a %s",
                             gn__dtype_name(st->dtype));
    int64_t nd = gn__tensor_numel(st);
    if (nd > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %lld is over the supported %d", (long long)nd, GN__MAX_DIMS);
    int64_t dims[GN__MAX_DIMS];
    int64_t product = 1;
    int32_t unknown = -1;
    bool sizes_zero = false;
    for (int32_t d = 0; d < (int32_t)nd; d++) {
        int64_t s = gn__ak_int_at(st, d);
        if (s == -1) {
            if (unknown != -1)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Only one input size may be -1, not both %d and %d", unknown, d);
            unknown = d;
            dims[d] = 1;
        } else if (s < 0) {
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Size %d must be non-negative, not %lld", d, (long long)s);
        } else {
            dims[d] = s;
            if (s == 0) sizes_zero = true;
            else if (product > INT64_MAX / s) return gn__kctx_fail(c, GN_ERR_GRAPH, "requested shape overflows int64");
            else product *= s;
        }
    }
    int64_t n = gn__tensor_numel(x);
    bool bad = false;
    if (unknown != -1) {
        int64_t in_n = 1;
        bool in_zero = false;
        for (int32_t d = 0; d < x->rank; d++) {
            if (x->dims[d] > 0 || !sizes_zero) in_n *= x->dims[d];
            else in_zero = true;
        }
        int64_t missing = in_n / product;
        if (!in_zero && product * missing != in_n) bad = true;
        dims[unknown] = missing;
    }
    if (!bad) {
        int64_t m = 1;
        for (int32_t d = 0; d < (int32_t)nd; d++) m *= dims[d];
        bad = m != n;
    }
    if (bad) {
        int64_t req[GN__MAX_DIMS];
        for (int32_t d = 0; d < (int32_t)nd; d++) req[d] = gn__ak_int_at(st, d);
        char b[GN__AK_SHAPE_STR + 8];
        /* shape_str prints -1 as "?": spell the request as given */
        size_t o = 0;
        b[o++] = '[';
        for (int32_t d = 0; d < (int32_t)nd; d++)
            o += (size_t)snprintf(b + o, sizeof b - o, "%s%lld", d ? "," : "", (long long)req[d]);
        snprintf(b + o, sizeof b - o, "]");
        return gn__kctx_fail(c, GN_ERR_GRAPH, "cannot reshape a tensor with %lld elements to shape %s", (long long)n, b);
    }
    return gn__kctx_forward_reshape(c, 0, 0, (int32_t)nd, dims);
}

gn_status gn__array_k_squeeze(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "squeeze_dims");
    if (!v) v = gn__node_attr(c->g, c->node, "axis");
    bool wanted[GN__MAX_DIMS] = {false};
    size_t nsq = (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list) ? v->list->n_i : 0;
    for (size_t i = 0; i < nsq; i++) {
        int64_t d = v->list->i[i];
        if (d < -x->rank || d >= x->rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Tried to squeeze dim index %lld for tensor with %d dimensions.",
                                 (long long)d, x->rank);
        if (d < 0) d += x->rank;
        wanted[d] = true;
    }
    int64_t dims[GN__MAX_DIMS];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t e = x->dims[i];
        if (nsq == 0) {
            if (e != 1) dims[r++] = e;
        } else if (wanted[i]) {
            if (e != 1)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Can not squeeze dim[%d], expected a dimension of 1, got %lld", i,
                                     (long long)e);
        } else {
            dims[r++] = e;
        }
    }
    return gn__kctx_forward_reshape(c, 0, 0, r, dims);
}

gn_status gn__array_k_expand_dims(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *dt = &c->in[1];
    if (gn__tensor_numel(dt) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'dim' must be a tensor with a single value");
    if (dt->dtype != DT_INT32 && dt->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'dim' must be int32 or int64, not %s", gn__dtype_name(dt->dtype));
    int64_t d = gn__ak_int_at(dt, 0);
    int32_t r = x->rank;
    if (d < -1 - r || d > r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Tried to expand dim index %lld for tensor with %d dimensions.",
                             (long long)d, r);
    if (d < 0) d += r + 1;
    if (r + 1 > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", r + 1, GN__MAX_DIMS);
    int64_t dims[GN__MAX_DIMS];
    int32_t o = 0;
    for (int32_t i = 0; i <= r; i++) {
        if (i == d) dims[o++] = 1;
        if (i < r) dims[o++] = x->dims[i];
    }
    return gn__kctx_forward_reshape(c, 0, 0, r + 1, dims);
}

/* ---- shapes ------------------------------------------------------------------------- */
static gn_status int_out(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims,
                         const int64_t *vals, int64_t n)
{
    if (dtype != DT_INT32 && dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "out_type must be int32 or int64, not %s", gn__dtype_name(dtype));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, k, dtype, rank, dims, &t));
    for (int64_t i = 0; i < n; i++) {
        if (dtype == DT_INT32) {
            if (vals[i] > INT32_MAX)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "value %lld does not fit the 32-bit output type",
                                     (long long)vals[i]);
            ((int32_t *)t->data)[i] = (int32_t)vals[i];
        } else {
            ((int64_t *)t->data)[i] = vals[i];
        }
    }
    return GN_OK;
}

gn_status gn__array_k_shape(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    int32_t ot = gn__ak_attr_type(c, "out_type", DT_INT32);
    int64_t r = c->in[0].rank;
    return int_out(c, 0, ot, 1, &r, c->in[0].dims, r);
}

gn_status gn__array_k_shape_n(gn__kctx *c)
{
    int32_t ot = gn__ak_attr_type(c, "out_type", DT_INT32);
    for (uint32_t i = 0; i < c->n_in && i < c->n_out; i++) {
        int64_t r = c->in[i].rank;
        GN_TRY(int_out(c, i, ot, 1, &r, c->in[i].dims, r));
    }
    return GN_OK;
}

gn_status gn__array_k_size(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    int32_t ot = gn__ak_attr_type(c, "out_type", DT_INT32);
    int64_t n = gn__tensor_numel(&c->in[0]);
    return int_out(c, 0, ot, 0, NULL, &n, 1);
}

gn_status gn__array_k_rank(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    int64_t r = c->in[0].rank;
    return int_out(c, 0, gn__ak_attr_type(c, "out_type", DT_INT32), 0, NULL, &r, 1);
}

gn_status gn__array_k_broadcast_args(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    int64_t a[GN__MAX_DIMS], b[GN__MAX_DIMS], o[GN__MAX_DIMS];
    int32_t na, nb;
    GN_TRY(gn__ak_read_ints(c, 0, "s0", false, a, GN__MAX_DIMS, &na));
    GN_TRY(gn__ak_read_ints(c, 1, "s1", false, b, GN__MAX_DIMS, &nb));
    int32_t r = na > nb ? na : nb;
    for (int32_t i = 0; i < r; i++) {
        int64_t x = i < r - na ? 1 : a[i - (r - na)];
        int64_t y = i < r - nb ? 1 : b[i - (r - nb)];
        if (x == y || y == 1) o[i] = x;
        else if (x == 1) o[i] = y;
        else {
            char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Incompatible shapes: %s vs. %s", gn__ak_shape_str(sa, na, a),
                                 gn__ak_shape_str(sb, nb, b));
        }
    }
    int64_t len = r;
    return int_out(c, 0, c->in[0].dtype, 1, &len, o, r);
}

/* ---- filling ------------------------------------------------------------------------ */
/* One element of value 1 (or 0 when zero) of dtype into v; false if the dtype
 * has no such value. */
static bool unit_value(int32_t dt, bool zero, void *v)
{
    memset(v, 0, 16);
    if (zero) return gn__ak_esize(dt) != 0;
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: *(float *)v = 1.0f; return true;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: *(double *)v = 1.0; return true;
    case TENSORFLOW__DATA_TYPE__DT_HALF: *(gn__f16 *)v = (gn__f16)1.0f; return true;
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: *(uint16_t *)v = 0x3f80; return true;
    case TENSORFLOW__DATA_TYPE__DT_INT32: *(int32_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_INT64: *(int64_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_INT16: *(int16_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_INT8: *(int8_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_UINT8: *(uint8_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_UINT16: *(uint16_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_UINT32: *(uint32_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_UINT64: *(uint64_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_BOOL: *(uint8_t *)v = 1; return true;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX64: *(float *)v = 1.0f; return true;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX128: *(double *)v = 1.0; return true;
    default: return false;
    }
}

static gn_status fill_like(gn__kctx *c, bool zero)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    unsigned char v[16];
    if (!unit_value(x->dtype, zero, v))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, x->rank, x->dims, &o));
    if (x->dtype != DT_STRING) gn__ak_fill(o.data, o.n, v, gn__ak_esize(x->dtype));
    return gn__ak_out_end(c, &o);
}

gn_status gn__array_k_zeros_like(gn__kctx *c) { return fill_like(c, true); }
gn_status gn__array_k_ones_like(gn__kctx *c) { return fill_like(c, false); }

gn_status gn__array_k_fill(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *dt = &c->in[0], *val = &c->in[1];
    char sb[GN__AK_SHAPE_STR];
    if (dt->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "dims must be a vector, got shape %s", gn__ak_tshape(sb, dt));
    if (!(val->rank == 0 || (val->rank == 1 && val->dims[0] == 1)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "value must be a scalar, got shape %s", gn__ak_tshape(sb, val));
    int64_t dims[GN__MAX_DIMS];
    int32_t r;
    GN_TRY(gn__ak_read_ints(c, 0, "dims", false, dims, GN__MAX_DIMS, &r));
    for (int32_t i = 0; i < r; i++)
        if (dims[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dimension %lld must be >= 0", (long long)dims[i]);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, val->dtype, r, dims, &o));
    gn__ak_fill(o.data, o.n, val->data, gn__ak_esize(val->dtype));
    return gn__ak_out_end(c, &o);
}

gn_status gn__array_k_empty(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    int64_t dims[GN__MAX_DIMS];
    int32_t r;
    GN_TRY(gn__ak_read_ints(c, 0, "shape", false, dims, GN__MAX_DIMS, &r));
    int32_t dt = gn__ak_attr_type(c, "dtype", 0);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, dt, r, dims, &o));
    if (dt != DT_STRING) memset(o.data, 0, (size_t)o.n * gn__ak_esize(dt));
    return gn__ak_out_end(c, &o);
}

gn_status gn__array_k_invert_permutation(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    if (x->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "invert_permutation expects a 1D vector.");
    if (x->dtype != DT_INT32 && x->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "x must be int32 or int64, not %s", gn__dtype_name(x->dtype));
    int64_t n = x->dims[0];
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, 1, x->dims, &t));
    for (int64_t i = 0; i < n; i++) {
        if (x->dtype == DT_INT32) ((int32_t *)t->data)[i] = -1;
        else ((int64_t *)t->data)[i] = -1;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t d = gn__ak_int_at(x, i);
        if (d < 0 || d >= n)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%lld is not between 0 and %lld", (long long)d, (long long)n);
        if (gn__ak_int_at(t, d) != -1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%lld is duplicated in the input.", (long long)d);
        if (x->dtype == DT_INT32) ((int32_t *)t->data)[d] = (int32_t)i;
        else ((int64_t *)t->data)[d] = i;
    }
    return GN_OK;
}

/* ---- concatenation ---------------------------------------------------------------- */
/* Output [outer, sum inner_i] from inputs viewed as [outer, inner_i]. */
static void concat_rows(char *dst, const gn__tensor *const *in, uint32_t n, int64_t outer, const int64_t *inner,
                        size_t esz)
{
    for (int64_t r = 0; r < outer; r++)
        for (uint32_t i = 0; i < n; i++) {
            size_t b = (size_t)inner[i] * esz;
            if (!b) continue;
            memcpy(dst, (const char *)in[i]->data + (size_t)r * b, b);
            dst += b;
        }
}

static gn_status concat_impl(gn__kctx *c, const gn__tensor *const *in, uint32_t n, const gn__tensor *axis_t)
{
    if (n == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "no values to concatenate");
    if (axis_t->dtype != DT_INT32 && axis_t->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be int32 or int64, not %s", gn__dtype_name(axis_t->dtype));
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    if (gn__tensor_numel(axis_t) != 1 || axis_t->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Concat dim tensor should be a scalar integer, but got shape %s",
                             gn__ak_tshape(sa, axis_t));
    const gn__tensor *x0 = in[0];
    int32_t r = x0->rank;
    int64_t axis = gn__ak_int_at(axis_t, 0);
    if (r == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "ConcatOp : Can't concatenate scalars (use tf.stack instead)");
    if (axis < -r || axis >= r)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "ConcatOp : Expected concatenating dimensions in the range [%d, %d), but got %lld", -r, r,
                             (long long)axis);
    if (axis < 0) axis += r;
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const gn__tensor *x = in[i];
        if (x->dtype != x0->dtype)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s, input 0 is %s", i, gn__dtype_name(x->dtype),
                                 gn__dtype_name(x0->dtype));
        if (x->rank != r)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s inputs have ranks %d and %d", gn__node_op(c->g, c->node), r,
                                 x->rank);
        for (int32_t j = 0; j < r; j++)
            if (j != axis && x->dims[j] != x0->dims[j])
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "ConcatOp : Dimension %d in both shapes must be equal: shape[0] = %s vs. shape[%u] = %s",
                                     j, gn__ak_tshape(sa, x0), i, gn__ak_tshape(sb, x));
        dims[axis] += x->dims[axis];
    }
    if (n == 1) {
        /* a single input is the output (same buffer) */
        for (uint32_t i = 0; i < c->n_in; i++)
            if (&c->in[i] == in[0]) return gn__kctx_forward(c, 0, i);
    }
    size_t esz = gn__ak_esize(x0->dtype);
    int64_t outer = 1;
    for (int32_t j = 0; j < axis; j++) outer *= dims[j];
    int64_t after = 1;
    for (int32_t j = (int32_t)axis + 1; j < r; j++) after *= dims[j];
    int64_t *inner = malloc(n * sizeof *inner);
    if (!inner) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) inner[i] = in[i]->dims[axis] * after;
    gn__ak_out o;
    gn_status s = gn__ak_out_begin(c, 0, x0->dtype, r, dims, &o);
    if (s == GN_OK) {
        if (o.n) concat_rows(o.data, in, n, outer, inner, esz);
        s = gn__ak_out_end(c, &o);
    }
    free(inner);
    return s;
}

gn_status gn__array_k_concat_v2(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    uint32_t n = c->n_in - 1;
    const gn__tensor *stack[16] = {0};
    const gn__tensor **in = n <= 16 ? stack : malloc(n * sizeof *in);
    if (!in) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) in[i] = &c->in[i];
    gn_status s = concat_impl(c, in, n, &c->in[n]);
    if (in != stack) free(in);
    return s;
}

gn_status gn__array_k_concat(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    uint32_t n = c->n_in - 1;
    const gn__tensor *stack[16] = {0};
    const gn__tensor **in = n <= 16 ? stack : malloc(n * sizeof *in);
    if (!in) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) in[i] = &c->in[i + 1];
    gn_status s = concat_impl(c, in, n, &c->in[0]);
    if (in != stack) free(in);
    return s;
}

gn_status gn__array_k_pack(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    uint32_t n = c->n_in;
    const gn__tensor *x0 = &c->in[0];
    int32_t r = x0->rank;
    int64_t axis = gn__ak_attr_int(c, "axis", 0);
    int32_t er = r + 1;
    if (axis < 0) axis += er;
    if (axis < 0 || axis >= er)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis = %lld not in [%d, %d)", (long long)gn__ak_attr_int(c, "axis", 0),
                             -er, er);
    if (er > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", er, GN__MAX_DIMS);
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    for (uint32_t i = 1; i < n; i++) {
        const gn__tensor *x = &c->in[i];
        bool same = x->rank == r && x->dtype == x0->dtype;
        for (int32_t j = 0; same && j < r; j++) same = x->dims[j] == x0->dims[j];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "Shapes of all inputs must match: values[0].shape = %s != values[%u].shape = %s",
                                 gn__ak_tshape(sa, x0), i, gn__ak_tshape(sb, x));
    }
    int64_t dims[GN__MAX_DIMS];
    for (int32_t j = 0, o = 0; j < er; j++) dims[j] = j == axis ? (int64_t)n : x0->dims[o++];
    if (n == 1) return gn__kctx_forward_reshape(c, 0, 0, er, dims);
    int64_t outer = 1, inner = 1;
    for (int32_t j = 0; j < axis; j++) outer *= x0->dims[j];
    for (int32_t j = (int32_t)axis; j < r; j++) inner *= x0->dims[j];
    size_t esz = gn__ak_esize(x0->dtype);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x0->dtype, er, dims, &o));
    if (o.n) {
        char *dst = o.data;
        size_t b = (size_t)inner * esz;
        for (int64_t row = 0; row < outer; row++)
            for (uint32_t i = 0; i < n; i++) {
                memcpy(dst, (const char *)c->in[i].data + (size_t)row * b, b);
                dst += b;
            }
    }
    return gn__ak_out_end(c, &o);
}

/* Output k = x[..., begin:begin+len, ...] along axis (x viewed as [outer, mid, after]). */
static gn_status split_out(gn__kctx *c, uint32_t k, const gn__tensor *x, int32_t axis, int64_t begin, int64_t len,
                           int32_t out_rank, const int64_t *out_dims)
{
    int64_t outer = 1, after = 1;
    for (int32_t j = 0; j < axis; j++) outer *= x->dims[j];
    for (int32_t j = axis + 1; j < x->rank; j++) after *= x->dims[j];
    size_t esz = gn__ak_esize(x->dtype);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, k, x->dtype, out_rank, out_dims, &o));
    if (o.n) {
        size_t rowb = (size_t)len * after * esz, inb = (size_t)x->dims[axis] * after * esz;
        const char *src = (const char *)x->data + (size_t)begin * after * esz;
        char *dst = o.data;
        for (int64_t r = 0; r < outer; r++) memcpy(dst + (size_t)r * rowb, src + (size_t)r * inb, rowb);
    }
    return gn__ak_out_end(c, &o);
}

gn_status gn__array_k_unpack(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    int32_t r = x->rank;
    int64_t axis0 = gn__ak_attr_int(c, "axis", 0), axis = axis0;
    int64_t num = gn__ak_attr_int(c, "num", (int64_t)c->n_out);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis = %lld not in [%d, %d)", (long long)axis0, -r, r);
    char sb[GN__AK_SHAPE_STR];
    if (x->dims[axis] != num)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input shape axis %lld must equal %lld, got shape %s", (long long)axis,
                             (long long)num, gn__ak_tshape(sb, x));
    int64_t dims[GN__MAX_DIMS];
    for (int32_t j = 0, o = 0; j < r; j++)
        if (j != axis) dims[o++] = x->dims[j];
    for (int64_t i = 0; i < num && (uint32_t)i < c->n_out; i++)
        GN_TRY(split_out(c, (uint32_t)i, x, (int32_t)axis, i, 1, r - 1, dims));
    return GN_OK;
}

static gn_status split_common(gn__kctx *c, const gn__tensor *x, uint32_t xi, int64_t axis, const int64_t *sizes,
                              uint32_t n)
{
    if (n == 1) return gn__kctx_forward(c, 0, xi);
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    int64_t at = 0;
    for (uint32_t i = 0; i < n && i < c->n_out; i++) {
        dims[axis] = sizes[i];
        GN_TRY(split_out(c, i, x, (int32_t)axis, at, sizes[i], x->rank, dims));
        at += sizes[i];
    }
    return GN_OK;
}

gn_status gn__array_k_split(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[1];
    int64_t axis0, axis;
    GN_TRY(gn__ak_read_scalar_int(c, 0, "split_dim", &axis0));
    int64_t n = gn__ak_attr_int(c, "num_split", (int64_t)c->n_out);
    int32_t r = x->rank;
    axis = axis0 < 0 ? axis0 + r : axis0;
    if (axis < 0 || axis >= r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "-input rank(-%d) <= split_dim < input rank (%d), but got %lld", r, r,
                             (long long)axis0);
    if (n <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Number of ways to split should be > 0, but got %lld", (long long)n);
    if (x->dims[axis] % n)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Number of ways to split should evenly divide the split dimension, but got split_dim %lld "
                             "(size = %lld) and num_split %lld",
                             (long long)axis, (long long)x->dims[axis], (long long)n);
    int64_t *sizes = malloc((size_t)n * sizeof *sizes);
    if (!sizes) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) sizes[i] = x->dims[axis] / n;
    gn_status s = split_common(c, x, 1, axis, sizes, (uint32_t)n);
    free(sizes);
    return s;
}

gn_status gn__array_k_split_v(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    const gn__tensor *x = &c->in[0], *st = &c->in[1];
    int64_t n = gn__ak_attr_int(c, "num_split", (int64_t)c->n_out);
    if (st->rank != 1 || st->dims[0] != n)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "size of the split_tensor must be 1-D and have the same elements as outputs got %d -D and "
                             "%lld elements",
                             st->rank, (long long)gn__tensor_numel(st));
    if (!gn__ak_is_int(st->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "size_splits must be an integer tensor, not %s", gn__dtype_name(st->dtype));
    int64_t axis0, axis;
    GN_TRY(gn__ak_read_scalar_int(c, 2, "split_dim", &axis0));
    int32_t r = x->rank;
    axis = axis0 < 0 ? axis0 + r : axis0;
    if (axis < 0 || axis >= r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "-input rank(-%d) <= split_dim < input rank (%d), but got %lld", r, r,
                             (long long)axis0);
    if (n <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Number of ways to split should be > 0, but got %lld", (long long)n);
    int64_t *sizes = malloc((size_t)n * sizeof *sizes);
    if (!sizes) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    int64_t neg = -1, det = 0;
    gn_status s = GN_OK;
    for (int64_t i = 0; i < n && s == GN_OK; i++) {
        sizes[i] = gn__ak_int_at(st, i);
        if (sizes[i] == -1) {
            if (neg != -1) s = gn__kctx_fail(c, GN_ERR_GRAPH, "There can only be one -1 in the input.");
            neg = i;
        } else {
            det += sizes[i];
        }
    }
    int64_t dim = x->dims[axis];
    if (s == GN_OK && !((neg == -1 && det == dim) || (neg >= 0 && det <= dim)))
        s = gn__kctx_fail(c, GN_ERR_GRAPH,
                          "Determined shape must either match input shape along split_dim exactly if fully specified, "
                          "or be less than the size of the input along split_dim if not fully specified.  Got: %lld",
                          (long long)det);
    if (s == GN_OK && neg >= 0) sizes[neg] = dim - det;
    for (int64_t i = 0; i < n && s == GN_OK; i++)
        if (sizes[i] < 0)
            s = gn__kctx_fail(c, GN_ERR_GRAPH, "Split size at index %lld must be >= 0. Got: %lld", (long long)i,
                              (long long)sizes[i]);
    if (s == GN_OK) s = split_common(c, x, 0, axis, sizes, (uint32_t)n);
    free(sizes);
    return s;
}

/* ---- Bitcast: same bytes, another dtype ----------------------------------------------------- */
gn_status gn__array_k_bitcast(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    int32_t to = gn__ak_attr_type(c, "type", 0);
    size_t in_sz = gn__dtype_size(x->dtype), out_sz = gn__dtype_size(to);
    if (!in_sz || !out_sz)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Cannot bitcast from %s to %s", gn__dtype_name(x->dtype),
                             gn__dtype_name(to));
    int64_t dims[GN__MAX_DIMS];
    int32_t r = x->rank;
    memcpy(dims, x->dims, sizeof dims);
    if (in_sz > out_sz) {
        if (in_sz % out_sz)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Cannot bitcast from %s to %s", gn__dtype_name(x->dtype),
                                 gn__dtype_name(to));
        if (r + 1 > GN__MAX_DIMS)
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", r + 1, GN__MAX_DIMS);
        dims[r++] = (int64_t)(in_sz / out_sz);
    } else if (in_sz < out_sz) {
        if (out_sz % in_sz || r < 1 || dims[r - 1] != (int64_t)(out_sz / in_sz))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Cannot bitcast from %s to %s: shape %s does not end in %zu",
                                 gn__dtype_name(x->dtype), gn__dtype_name(to),
                                 gn__ak_tshape((char[GN__AK_SHAPE_STR]){0}, x), out_sz / in_sz);
        r--;
    }
    /* the element count changes with the dtype: share the buffer, relabel */
    GN_TRY(gn__kctx_forward(c, 0, 0));
    gn__tensor *o = &c->out[0];
    o->dtype = to;
    o->rank = r;
    for (int32_t i = 0; i < r; i++) o->dims[i] = dims[i];
    return GN_OK;
}
