/* Array kernels driven by index values: Gather, GatherV2, GatherNd,
 * ScatterNd, OneHot, Where, TopKV2, DynamicPartition, DynamicStitch.
 *
 * After tensorflow/core/kernels/{gather_op, gather_nd_op, scatter_nd_op,
 * one_hot_op, where_op, topk_op}.cc. Indices out of range are errors (as on
 * TensorFlow's CPU), reported with the index's coordinates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/array_impl.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

static gn_status need_inputs(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static gn_status need_index_type(gn__kctx *c, const gn__tensor *t, const char *what)
{
    if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, not %s", what, gn__dtype_name(t->dtype));
    return GN_OK;
}

/* ---- Gather / GatherV2 ------------------------------------------------------------------ */
static gn_status gather_impl(gn__kctx *c, bool v2)
{
    GN_TRY(need_inputs(c, v2 ? 3 : 2));
    const gn__tensor *p = &c->in[0], *ix = &c->in[1];
    GN_TRY(need_index_type(c, ix, "indices"));
    if (p->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "params must be at least 1 dimensional");
    int64_t axis = 0;
    bool axis_set = false;
    if (v2) {
        const gn__tensor *at = &c->in[2];
        if (at->rank != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be scalar");
        if (at->dtype != DT_INT32 && at->dtype != DT_INT64)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be int32 or int64.");
        axis = gn__ak_int_at(at, 0);
        axis_set = true;
    }
    int32_t pr = p->rank;
    if (axis < -pr || axis >= pr)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected axis in the range [%d, %d), but got %lld", -pr, pr,
                             (long long)axis);
    if (axis < 0) axis += pr;
    int64_t bd = v2 ? gn__ak_attr_int(c, "batch_dims", 0) : 0;
    if (bd != 0) {
        int32_t ir = ix->rank;
        if (bd < -ir || bd > ir)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected batch_dims in the range [%d, %d], but got %lld", -ir, ir,
                                 (long long)bd);
        if (bd < 0) bd += ir;
        if (!axis_set) axis = bd;
        if (bd >= pr)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "batch_dims (%lld) must be less than rank(params) (%d).", (long long)bd,
                                 pr);
        if (axis < bd)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "batch_dims (%lld) must be less than or equal to axis (%lld).",
                                 (long long)bd, (long long)axis);
        for (int32_t i = 0; i < bd; i++)
            if (p->dims[i] != ix->dims[i])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld",
                                     i, (long long)p->dims[i], i, (long long)ix->dims[i]);
    }
    /* output: params[:axis] + indices[bd:] + params[axis+1:] */
    int64_t dims[GN__MAX_DIMS];
    int32_t r = 0;
    int32_t orank = (int32_t)axis + (ix->rank - (int32_t)bd) + (pr - (int32_t)axis - 1);
    if (orank > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", orank, GN__MAX_DIMS);
    int64_t batch = 1, outer = 1, nidx = 1, gdim = p->dims[axis], inner = 1;
    for (int32_t i = 0; i < axis; i++) {
        dims[r++] = p->dims[i];
        if (i < bd) batch *= p->dims[i];
        else outer *= p->dims[i];
    }
    for (int32_t i = (int32_t)bd; i < ix->rank; i++) {
        dims[r++] = ix->dims[i];
        nidx *= ix->dims[i];
    }
    for (int32_t i = (int32_t)axis + 1; i < pr; i++) {
        dims[r++] = p->dims[i];
        inner *= p->dims[i];
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, p->dtype, r, dims, &o));
    if (o.n) {
        size_t esz = gn__ak_esize(p->dtype), rowb = (size_t)inner * esz;
        char *dst = o.data;
        const char *src = p->data;
        for (int64_t b = 0; b < batch; b++)
            for (int64_t q = 0; q < outer; q++) {
                const char *base = src + ((size_t)(b * outer + q) * (size_t)gdim) * rowb;
                for (int64_t j = 0; j < nidx; j++) {
                    int64_t fi = b * nidx + j;
                    int64_t v = gn__ak_int_at(ix, fi);
                    if (v < 0 || v >= gdim) {
                        char sb[GN__AK_SHAPE_STR];
                        gn__ak_out_abort(c, &o);
                        return gn__kctx_fail(c, GN_ERR_GRAPH, "indices%s = %lld is not in [0, %lld)",
                                             gn__ak_index_str(sb, ix->rank, ix->dims, fi), (long long)v,
                                             (long long)gdim);
                    }
                    memcpy(dst, base + (size_t)v * rowb, rowb);
                    dst += rowb;
                }
            }
    }
    return gn__ak_out_end(c, &o);
}

gn_status gn__ak_gather(gn__kctx *c) { return gather_impl(c, false); }
gn_status gn__ak_gather_v2(gn__kctx *c) { return gather_impl(c, true); }

/* ---- GatherNd ------------------------------------------------------------------------------ */
static const char *index_list(char *buf, const gn__tensor *ix, int64_t row, int64_t k)
{
    size_t n = 0;
    buf[n++] = '[';
    for (int64_t j = 0; j < k && n < GN__AK_SHAPE_STR - 24; j++)
        n += (size_t)snprintf(buf + n, GN__AK_SHAPE_STR - n, "%s%lld", j ? ", " : "",
                              (long long)gn__ak_int_at(ix, row * k + j));
    buf[n++] = ']';
    buf[n] = 0;
    return buf;
}

gn_status gn__ak_gather_nd(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *p = &c->in[0], *ix = &c->in[1];
    GN_TRY(need_index_type(c, ix, "indices"));
    if (p->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "params must be at least a vector");
    if (ix->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be at least a vector");
    int64_t k = ix->dims[ix->rank - 1];
    if (k > p->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "index innermost dimension length must be <= params rank; saw: %lld vs. %d",
                             (long long)k, p->rank);
    int64_t dims[GN__MAX_DIMS];
    int32_t r = 0;
    int32_t orank = ix->rank - 1 + p->rank - (int32_t)k;
    if (orank > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", orank, GN__MAX_DIMS);
    int64_t nrows = 1, slice = 1;
    for (int32_t i = 0; i < ix->rank - 1; i++) {
        dims[r++] = ix->dims[i];
        nrows *= ix->dims[i];
    }
    for (int32_t i = (int32_t)k; i < p->rank; i++) {
        dims[r++] = p->dims[i];
        slice *= p->dims[i];
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, p->dtype, r, dims, &o));
    if (o.n) {
        size_t esz = gn__ak_esize(p->dtype), sb = (size_t)slice * esz;
        int64_t pstr[GN__MAX_DIMS];
        gn__ak_strides(p->rank, p->dims, pstr);
        char *dst = o.data;
        for (int64_t row = 0; row < nrows; row++) {
            int64_t off = 0;
            for (int64_t j = 0; j < k; j++) {
                int64_t v = gn__ak_int_at(ix, row * k + j);
                if (v < 0 || v >= p->dims[j]) {
                    char s1[GN__AK_SHAPE_STR], s2[GN__AK_SHAPE_STR], s3[GN__AK_SHAPE_STR];
                    gn__ak_out_abort(c, &o);
                    return gn__kctx_fail(c, GN_ERR_GRAPH, "indices%s = %s does not index into param shape %s",
                                         gn__ak_index_str(s1, ix->rank - 1, ix->dims, row), index_list(s2, ix, row, k),
                                         gn__ak_tshape(s3, p));
                }
                off += v * pstr[j];
            }
            memcpy(dst, (const char *)p->data + (size_t)off * esz, sb);
            dst += sb;
        }
    }
    return gn__ak_out_end(c, &o);
}

/* ---- ScatterNd ------------------------------------------------------------------------------ */
#define GN__ADD_ROW(T)                                                                                                 \
    do {                                                                                                               \
        T *d_ = dst;                                                                                                   \
        const T *s_ = src;                                                                                             \
        for (int64_t i_ = 0; i_ < n; i_++) d_[i_] += s_[i_];                                                          \
    } while (0)

static bool add_row(int32_t dt, void *dst, const void *src, int64_t n)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: GN__ADD_ROW(float); return true;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: GN__ADD_ROW(double); return true;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX64: n *= 2; GN__ADD_ROW(float); return true;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX128: n *= 2; GN__ADD_ROW(double); return true;
    case TENSORFLOW__DATA_TYPE__DT_INT32: {
        /* wraps as TensorFlow's two's complement arithmetic does */
        uint32_t *d = dst;
        const uint32_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_INT64:
    case TENSORFLOW__DATA_TYPE__DT_UINT64: {
        uint64_t *d = dst;
        const uint64_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_UINT32: GN__ADD_ROW(uint32_t); return true;
    case TENSORFLOW__DATA_TYPE__DT_INT16:
    case TENSORFLOW__DATA_TYPE__DT_UINT16: {
        uint16_t *d = dst;
        const uint16_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = (uint16_t)(d[i] + s[i]);
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_INT8:
    case TENSORFLOW__DATA_TYPE__DT_UINT8: {
        uint8_t *d = dst;
        const uint8_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(d[i] + s[i]);
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_BOOL: {
        uint8_t *d = dst;
        const uint8_t *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(d[i] || s[i]);
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_HALF: {
        gn__f16 *d = dst;
        const gn__f16 *s = src;
        for (int64_t i = 0; i < n; i++) d[i] = (gn__f16)((float)d[i] + (float)s[i]);
        return true;
    }
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: {
        uint16_t *d = dst;
        const uint16_t *s = src;
        for (int64_t i = 0; i < n; i++) {
            uint32_t a = (uint32_t)d[i] << 16, b = (uint32_t)s[i] << 16;
            float fa, fb;
            memcpy(&fa, &a, 4);
            memcpy(&fb, &b, 4);
            float f = fa + fb;
            uint32_t u;
            memcpy(&u, &f, 4);
            if ((u & 0x7fffffffu) > 0x7f800000u) d[i] = (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
            else d[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);              /* round to nearest even */
        }
        return true;
    }
    default: return false;
    }
}

gn_status gn__ak_scatter_nd(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    const gn__tensor *ix = &c->in[0], *up = &c->in[1];
    GN_TRY(need_index_type(c, ix, "indices"));
    char s1[GN__AK_SHAPE_STR], s2[GN__AK_SHAPE_STR], s3[GN__AK_SHAPE_STR];
    if (c->in[2].rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Shape must be a 1-D tensor. Got %s", gn__ak_tshape(s1, &c->in[2]));
    int64_t shape[GN__MAX_DIMS];
    int32_t r;
    GN_TRY(gn__ak_read_ints(c, 2, "shape", false, shape, GN__MAX_DIMS, &r));
    for (int32_t i = 0; i < r; i++)
        if (shape[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dimension %lld must be >= 0", (long long)shape[i]);
    if (ix->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be at least a vector");
    int64_t k = ix->dims[ix->rank - 1];
    if (k > r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "index innermost dimension length must be <= shape rank; saw: %lld vs. %d",
                             (long long)k, r);
    /* updates must be indices.shape[:-1] + shape[k:] */
    int64_t want[2 * GN__MAX_DIMS];
    int32_t wr = 0;
    for (int32_t i = 0; i < ix->rank - 1; i++) want[wr++] = ix->dims[i];
    for (int32_t i = (int32_t)k; i < r; i++) want[wr++] = shape[i];
    bool ok = up->rank == wr;
    for (int32_t i = 0; ok && i < wr; i++) ok = up->dims[i] == want[i];
    if (!ok)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "updates has shape %s; indices of shape %s into shape %s need updates of shape %s",
                             gn__ak_tshape(s1, up), gn__ak_tshape(s2, ix), gn__ak_shape_str(s3, r, shape),
                             gn__ak_shape_str((char[GN__AK_SHAPE_STR]){0}, wr, want));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, up->dtype, r, shape, &t));
    size_t esz = gn__ak_esize(up->dtype);
    memset(t->data, 0, t->nbytes);
    int64_t nrows = 1, slice = 1;
    for (int32_t i = 0; i < ix->rank - 1; i++) nrows *= ix->dims[i];
    for (int32_t i = (int32_t)k; i < r; i++) slice *= shape[i];
    if (!gn__tensor_numel(t) || !nrows) return GN_OK;
    int64_t ostr[GN__MAX_DIMS];
    gn__ak_strides(r, shape, ostr);
    for (int64_t row = 0; row < nrows; row++) {
        int64_t off = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t v = gn__ak_int_at(ix, row * k + j);
            if (v < 0 || v >= shape[j])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "indices%s = %s does not index into shape %s",
                                     gn__ak_index_str(s1, ix->rank - 1, ix->dims, row), index_list(s2, ix, row, k),
                                     gn__ak_shape_str(s3, r, shape));
            off += v * ostr[j];
        }
        if (!add_row(up->dtype, (char *)t->data + (size_t)off * esz, (const char *)up->data + (size_t)(row * slice) * esz,
                     slice))
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(up->dtype));
    }
    return GN_OK;
}

/* ---- OneHot ---------------------------------------------------------------------------------- */
gn_status gn__ak_one_hot(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 4));
    const gn__tensor *ix = &c->in[0], *on = &c->in[2], *off = &c->in[3];
    int64_t depth;
    GN_TRY(gn__ak_read_scalar_int(c, 1, "depth", &depth));
    if (!gn__ak_is_int(ix->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be an integer tensor, not %s", gn__dtype_name(ix->dtype));
    char sb[GN__AK_SHAPE_STR];
    if (on->rank != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "on_value must be a scalar, but got: %s", gn__ak_tshape(sb, on));
    if (off->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "off_value must be a scalar, but got: %s", gn__ak_tshape(sb, off));
    if (on->dtype != off->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "on_value is %s, off_value is %s", gn__dtype_name(on->dtype),
                             gn__dtype_name(off->dtype));
    int32_t r = ix->rank;
    int64_t axis = gn__ak_attr_int(c, "axis", -1);
    if (!(axis == -1 || (axis >= 0 && axis <= r)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected axis to be -1 or between [0, %d).  But received: %lld", r + 1,
                             (long long)axis);
    if (depth < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "depth must be non-negative, got: %lld", (long long)depth);
    if (r + 1 > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", r + 1, GN__MAX_DIMS);
    if (axis == -1) axis = r;
    int64_t dims[GN__MAX_DIMS], prefix = 1, suffix = 1;
    for (int32_t i = 0, o = 0; i <= r; i++) {
        if (i == axis) dims[i] = depth;
        else {
            dims[i] = ix->dims[o];
            if (o < axis) prefix *= ix->dims[o];
            else suffix *= ix->dims[o];
            o++;
        }
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, on->dtype, r + 1, dims, &o));
    if (o.n) {
        size_t esz = gn__ak_esize(on->dtype);
        char *dst = o.data;
        gn__ak_fill(dst, o.n, off->data, esz);
        for (int64_t p = 0; p < prefix; p++)
            for (int64_t s = 0; s < suffix; s++) {
                int64_t v = gn__ak_int_at(ix, p * suffix + s);
                if (v >= 0 && v < depth) memcpy(dst + (size_t)((p * depth + v) * suffix + s) * esz, on->data, esz);
            }
    }
    return gn__ak_out_end(c, &o);
}

/* ---- Where ------------------------------------------------------------------------------------ */
static bool nonzero(const gn__tensor *t, int64_t i)
{
    switch (t->dtype) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: return ((const float *)t->data)[i] != 0.0f;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: return ((const double *)t->data)[i] != 0.0;
    case TENSORFLOW__DATA_TYPE__DT_HALF: return ((const gn__f16 *)t->data)[i] != (gn__f16)0.0f;
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: return (((const uint16_t *)t->data)[i] & 0x7fff) != 0;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX64:
        return ((const float *)t->data)[2 * i] != 0.0f || ((const float *)t->data)[2 * i + 1] != 0.0f;
    case TENSORFLOW__DATA_TYPE__DT_COMPLEX128:
        return ((const double *)t->data)[2 * i] != 0.0 || ((const double *)t->data)[2 * i + 1] != 0.0;
    case TENSORFLOW__DATA_TYPE__DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
    default: return gn__ak_int_at(t, i) != 0;
    }
}

gn_status gn__ak_where(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    if (!gn__ak_is_int(x->dtype) && x->dtype != TENSORFLOW__DATA_TYPE__DT_BOOL &&
        x->dtype != TENSORFLOW__DATA_TYPE__DT_FLOAT && x->dtype != TENSORFLOW__DATA_TYPE__DT_DOUBLE &&
        x->dtype != TENSORFLOW__DATA_TYPE__DT_HALF && x->dtype != TENSORFLOW__DATA_TYPE__DT_BFLOAT16 &&
        x->dtype != TENSORFLOW__DATA_TYPE__DT_COMPLEX64 && x->dtype != TENSORFLOW__DATA_TYPE__DT_COMPLEX128)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
    int64_t n = gn__tensor_numel(x), count = 0;
    for (int64_t i = 0; i < n; i++) count += nonzero(x, i);
    int64_t dims[2] = {count, x->rank};
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, DT_INT64, 2, dims, &t));
    int64_t *o = t->data;
    for (int64_t i = 0; i < n; i++) {
        if (!nonzero(x, i)) continue;
        int64_t rem = i;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            o[d] = rem % x->dims[d];
            rem /= x->dims[d];
        }
        o += x->rank;
    }
    return GN_OK;
}

/* ---- TopKV2 ------------------------------------------------------------------------------------ */
/* a > b in the dtype's order (NaN above everything, as a descending sort of
 * TensorFlow's puts it first). */
static bool greater(int32_t dt, const void *base, int64_t a, int64_t b)
{
    switch (dt) {
#define GN__GT(T)                                                                                                      \
    {                                                                                                                  \
        T x = ((const T *)base)[a], y = ((const T *)base)[b];                                                          \
        if (x != x) return y == y;                                                                                     \
        return x > y;                                                                                                  \
    }
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: GN__GT(float)
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: GN__GT(double)
    case TENSORFLOW__DATA_TYPE__DT_HALF: GN__GT(gn__f16)
    case TENSORFLOW__DATA_TYPE__DT_INT32: GN__GT(int32_t)
    case TENSORFLOW__DATA_TYPE__DT_INT64: GN__GT(int64_t)
    case TENSORFLOW__DATA_TYPE__DT_INT16: GN__GT(int16_t)
    case TENSORFLOW__DATA_TYPE__DT_INT8: GN__GT(int8_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT8: GN__GT(uint8_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT16: GN__GT(uint16_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT32: GN__GT(uint32_t)
    case TENSORFLOW__DATA_TYPE__DT_UINT64: GN__GT(uint64_t)
#undef GN__GT
    case TENSORFLOW__DATA_TYPE__DT_BFLOAT16: {
        uint32_t ua = (uint32_t)((const uint16_t *)base)[a] << 16, ub = (uint32_t)((const uint16_t *)base)[b] << 16;
        float x, y;
        memcpy(&x, &ua, 4);
        memcpy(&y, &ub, 4);
        if (x != x) return y == y;
        return x > y;
    }
    default: return false;
    }
}

/* Stable merge sort of idx[0..n) by value descending (ties: lower index first). */
static void sort_desc(int32_t dt, const void *row, int64_t *idx, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = greater(dt, row, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid) tmp[k++] = idx[i++];
            while (j < hi) tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/* TopKV2 (k from input 1) and TopK (v1: k from the attr). */
static gn_status top_k(gn__kctx *c, int64_t k)
{
    const gn__tensor *x = &c->in[0];
    char sb[GN__AK_SHAPE_STR];
    if (k < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Need k >= 0, got %lld", (long long)k);
    if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be >= 1-D, got shape %s", gn__ak_tshape(sb, x));
    int64_t n = x->dims[x->rank - 1];
    if (n < k)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must have at least k columns. Had %lld, needed %lld", (long long)n,
                             (long long)k);
    int32_t dt = x->dtype;
    if (!gn__ak_is_int(dt) && dt != TENSORFLOW__DATA_TYPE__DT_FLOAT && dt != TENSORFLOW__DATA_TYPE__DT_DOUBLE &&
        dt != TENSORFLOW__DATA_TYPE__DT_HALF && dt != TENSORFLOW__DATA_TYPE__DT_BFLOAT16)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(dt));
    int32_t it = gn__ak_attr_type(c, "index_type", DT_INT32);
    if (it != DT_INT32 && it != DT_INT64 && it != TENSORFLOW__DATA_TYPE__DT_INT16)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "index_type must be int16, int32 or int64, not %s", gn__dtype_name(it));
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    dims[x->rank - 1] = k;
    gn__tensor *vt, *itn;
    GN_TRY(gn__kctx_output(c, 0, dt, x->rank, dims, &vt));
    if (c->n_out < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 outputs, got %u", c->n_out);
    GN_TRY(gn__kctx_output(c, 1, it, x->rank, dims, &itn));
    int64_t rows = n ? gn__tensor_numel(x) / n : 0;
    if (!k || !rows) return GN_OK;
    int64_t *idx = malloc((size_t)n * 2 * sizeof *idx);
    if (!idx) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    size_t esz = gn__ak_esize(dt);
    for (int64_t r = 0; r < rows; r++) {
        const char *row = (const char *)x->data + (size_t)(r * n) * esz;
        for (int64_t i = 0; i < n; i++) idx[i] = i;
        sort_desc(dt, row, idx, idx + n, n);
        for (int64_t i = 0; i < k; i++) {
            memcpy((char *)vt->data + (size_t)(r * k + i) * esz, row + (size_t)idx[i] * esz, esz);
            if (it == DT_INT32) ((int32_t *)itn->data)[r * k + i] = (int32_t)idx[i];
            else if (it == DT_INT64) ((int64_t *)itn->data)[r * k + i] = idx[i];
            else ((int16_t *)itn->data)[r * k + i] = (int16_t)idx[i];
        }
    }
    free(idx);
    return GN_OK;
}

gn_status gn__ak_top_k_v2(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    int64_t k;
    GN_TRY(gn__ak_read_scalar_int(c, 1, "k", &k));
    return top_k(c, k);
}

gn_status gn__ak_top_k(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 1));
    int64_t k;
    if (!gn__attr_get_int(c->g, c->node, "k", &k)) return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'k' is missing");
    return top_k(c, k);
}

/* ---- DynamicPartition ------------------------------------------------------------------- */
/* dynamic_partition_op.cc: data's slices (data.shape = partitions.shape +
 * rest) go to output partitions[i], in order; any dtype. */
gn_status gn__ak_dynamic_partition(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *pt = &c->in[1];
    int64_t np = gn__ak_attr_int(c, "num_partitions", 0);
    if (np < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "num_partitions must be at least 1, got %lld", (long long)np);
    if ((int64_t)c->n_out != np)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_partitions is %lld but the node has %u outputs", (long long)np,
                             c->n_out);
    if (pt->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "partitions must be int32, not %s", gn__dtype_name(pt->dtype));
    char sb[GN__AK_SHAPE_STR], sb2[GN__AK_SHAPE_STR];
    bool starts = pt->rank <= x->rank;
    for (int32_t d = 0; starts && d < pt->rank; d++) starts = pt->dims[d] == x->dims[d];
    if (!starts)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "data.shape must start with partitions.shape, got data.shape = %s, partitions.shape = %s",
                             gn__ak_tshape(sb, x), gn__ak_tshape(sb2, pt));
    int64_t n = gn__tensor_numel(pt);
    const int32_t *p = pt->data;
    int64_t *count = calloc((size_t)np, sizeof *count);
    if (!count) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %lld partition counts", (long long)np);
    for (int64_t i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= np) {
            free(count);
            return gn__kctx_fail(c, GN_ERR_GRAPH, "partitions%s = %d is not in [0, %lld)",
                                 gn__ak_index_str(sb, pt->rank, pt->dims, i), p[i], (long long)np);
        }
        count[p[i]]++;
    }
    /* one slice: the elements of data after partitions' dims */
    int64_t inner = 1, dims[GN__MAX_DIMS];
    int32_t orank = 1 + x->rank - pt->rank;
    for (int32_t d = pt->rank; d < x->rank; d++) {
        inner *= x->dims[d];
        dims[1 + d - pt->rank] = x->dims[d];
    }
    size_t esz = gn__ak_esize(x->dtype), row = (size_t)inner * esz;
    gn_status s = GN_OK;
    for (int64_t q = 0; q < np && s == GN_OK; q++) {
        gn__ak_out o;
        dims[0] = count[q];
        s = gn__ak_out_begin(c, (uint32_t)q, x->dtype, orank, dims, &o);
        if (s != GN_OK) break;
        int64_t at = 0;
        for (int64_t i = 0; i < n && row; i++)
            if (p[i] == q) memcpy((char *)o.data + (size_t)at++ * row, (const char *)x->data + (size_t)i * row, row);
        s = gn__ak_out_end(c, &o);
    }
    free(count);
    return s;
}

/* ---- DynamicStitch / ParallelDynamicStitch ---------------------------------------------- */
/* dynamic_stitch_op.cc: merged[indices[m][i], ...] = data[m][i, ...], inputs
 * and elements in order (a later index wins; ParallelDynamicStitch leaves
 * that order unspecified, so the serial one is a valid choice). Rows no index
 * names are zero (empty strings). */
gn_status gn__ak_dynamic_stitch(gn__kctx *c)
{
    int64_t nn = gn__ak_attr_int(c, "N", (int64_t)c->n_in / 2);
    if (nn < 1 || (int64_t)c->n_in != 2 * nn)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2*N inputs (N = %lld), got %u", (long long)nn, c->n_in);
    const gn__tensor *ix = c->in, *dt = c->in + nn;
    int64_t mx = -1;
    for (int64_t m = 0; m < nn; m++) {
        if (ix[m].dtype != DT_INT32)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be int32, not %s", gn__dtype_name(ix[m].dtype));
        const int32_t *v = ix[m].data;
        int64_t k = gn__tensor_numel(&ix[m]);
        for (int64_t i = 0; i < k; i++)
            if (v[i] > mx) mx = v[i];
    }
    for (int64_t m = 0; m < nn; m++) {
        const int32_t *v = ix[m].data;
        int64_t k = gn__tensor_numel(&ix[m]);
        for (int64_t i = 0; i < k; i++)
            if (v[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices[%lld] is out of range", (long long)i);
    }
    char s1[GN__AK_SHAPE_STR], s2[GN__AK_SHAPE_STR], s3[GN__AK_SHAPE_STR], s4[GN__AK_SHAPE_STR];
    for (int64_t m = 0; m < nn; m++) {
        const gn__tensor *d = &dt[m], *i = &ix[m];
        bool starts = i->rank <= d->rank;
        for (int32_t a = 0; starts && a < i->rank; a++) starts = i->dims[a] == d->dims[a];
        if (!starts)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "data[%lld].shape = %s does not start with indices[%lld].shape = %s",
                                 (long long)m, gn__ak_tshape(s1, d), (long long)m, gn__ak_tshape(s2, i));
        bool same = m == 0 || (d->rank - i->rank == dt[0].rank - ix[0].rank && d->dtype == dt[0].dtype);
        for (int32_t a = 0; same && a < d->rank - i->rank; a++) same = d->dims[i->rank + a] == dt[0].dims[ix[0].rank + a];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "Need data[0].shape[%d:] = data[%lld].shape[%d:], got data[0].shape = %s, data[%lld].shape "
                                 "= %s, indices[0].shape = %s, indices[%lld].shape = %s",
                                 ix[0].rank, (long long)m, i->rank, gn__ak_tshape(s1, &dt[0]), (long long)m,
                                 gn__ak_tshape(s2, d), gn__ak_tshape(s3, &ix[0]), (long long)m, gn__ak_tshape(s4, i));
    }
    int64_t dims[GN__MAX_DIMS], inner = 1;
    int32_t orank = 1 + dt[0].rank - ix[0].rank;
    dims[0] = mx + 1;
    for (int32_t a = ix[0].rank; a < dt[0].rank; a++) {
        dims[1 + a - ix[0].rank] = dt[0].dims[a];
        inner *= dt[0].dims[a];
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, dt[0].dtype, orank, dims, &o));
    size_t esz = gn__ak_esize(dt[0].dtype), row = (size_t)inner * esz;
    if (!o.tmp && o.n) memset(o.data, 0, (size_t)o.n * esz);
    for (int64_t m = 0; m < nn && row; m++) {
        const int32_t *v = ix[m].data;
        int64_t k = gn__tensor_numel(&ix[m]);
        for (int64_t i = 0; i < k; i++)
            memcpy((char *)o.data + (size_t)v[i] * row, (const char *)dt[m].data + (size_t)i * row, row);
    }
    return gn__ak_out_end(c, &o);
}
