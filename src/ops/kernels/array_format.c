/* DataFormatDimMap and DataFormatVecPermute: the two small integer ops the
 * layout optimizer puts on axes and shape vectors when a graph changes data
 * format (TensorFlow's kernels/data_format_ops.{h,cc}).
 *
 * Both take src_format and dst_format (default NHWC and NCHW), strings of 4
 * or 5 letters where dst is a permutation of src.
 *  - DataFormatDimMap: every element x of an int32/int64 tensor of any shape
 *    is an axis of the source format (in [-n, n) for a format of n letters);
 *    y is where that axis lies in the destination format. Out-of-range values
 *    map as TensorFlow's select chain does: x mod n (C remainder of x + n) that
 *    is not one of 0..n-2 gives the last entry.
 *  - DataFormatVecPermute: x is a vector of n values (one per dimension) or
 *    an [n, 2] tensor (one pair per dimension, e.g. paddings), or, with 2 in
 *    place of n, the spatial dimensions (H and W) only; y holds the same rows
 *    in destination order: y[j] = x[i] where dst[j] == src[i]. */
#include <string.h>

#include "ops/kernels/array_impl.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

enum { FMT_MAX = 5 };

/* Reads a format attr (default def) into buf; fails unless it has 4 or 5 letters. */
static gn_status format_attr(gn__kctx *c, const char *key, const char *def, char *buf, const char *what)
{
    const char *s = def;
    size_t n = strlen(def);
    (void)gn__attr_get_string(c->g, c->node, key, &s, &n);
    if (n != 4 && n != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s format must be of length 4 or 5, received %s = %.*s", what, key,
                             (int)(n < 64 ? n : 64), s);
    memcpy(buf, s, n);
    buf[n] = '\0';
    return GN_OK;
}

/* Both formats, checked to be a permutation of each other. */
static gn_status read_formats(gn__kctx *c, char *src, char *dst)
{
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 1 input, got %u", c->n_in);
    GN_TRY(format_attr(c, "src_format", "NHWC", src, "Source"));
    GN_TRY(format_attr(c, "dst_format", "NCHW", dst, "Destination"));
    size_t n = strlen(src);
    bool ok = strlen(dst) == n;
    for (size_t i = 0; ok && i < n; i++) {
        /* every letter of src once, and once in dst */
        if (memchr(src, src[i], i)) ok = false;
        else if (!memchr(dst, src[i], n)) ok = false;
    }
    if (!ok)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Destination and source format must determine a permutation, got %s and %s",
                             src, dst);
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_INT32 && x->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "x must be int32 or int64, not %s", gn__dtype_name(x->dtype));
    return GN_OK;
}

static void put_int(gn__tensor *t, int64_t i, int64_t v)
{
    if (t->dtype == DT_INT32) ((int32_t *)t->data)[i] = (int32_t)v;
    else ((int64_t *)t->data)[i] = v;
}

gn_status gn__ak_data_format_dim_map(gn__kctx *c)
{
    char src[FMT_MAX + 1], dst[FMT_MAX + 1];
    GN_TRY(read_formats(c, src, dst));
    const int64_t n = (int64_t)strlen(src);
    int64_t map[FMT_MAX];
    for (int64_t i = 0; i < n; i++) map[i] = (const char *)memchr(dst, src[i], (size_t)n) - dst;
    const gn__tensor *x = &c->in[0];
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &y));
    int64_t count = gn__tensor_numel(x);
    for (int64_t k = 0; k < count; k++) {
        int64_t v = gn__ak_int_at(x, k);
        /* TensorFlow computes (x + n) % n in T (C remainder); int32 wraps
         * modulo 2^32 near its limits, computed here without overflow */
        int64_t r = x->dtype == DT_INT32 ? (int64_t)(int32_t)((uint32_t)v + (uint32_t)n) % n
                                         : (int64_t)((uint64_t)v + (uint64_t)n) % n;
        put_int(y, k, r >= 0 && r < n - 1 ? map[r] : map[n - 1]);
    }
    return GN_OK;
}

gn_status gn__ak_data_format_vec_permute(gn__kctx *c)
{
    char src[FMT_MAX + 1], dst[FMT_MAX + 1];
    GN_TRY(read_formats(c, src, dst));
    const gn__tensor *x = &c->in[0];
    char shape[GN__AK_SHAPE_STR];
    if (x->rank != 1 && x->rank != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be a vector or 2D tensor, but got shape %s",
                             gn__ak_tshape(shape, x));
    const int64_t n = (int64_t)strlen(src), rows = x->dims[0];
    if (x->rank == 1 && rows != 2 && rows != n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "1D input must be of size 2 or %lld, but got shape %s", (long long)n,
                             gn__ak_tshape(shape, x));
    if (x->rank == 2 && rows != 2 && rows != n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "First dimension of 2D input must be of size 2 or %lld, but got shape %s",
                             (long long)n, gn__ak_tshape(shape, x));
    if (x->rank == 2 && x->dims[1] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Second dimension of 2D input must be of size 2, but got shape %s",
                             gn__ak_tshape(shape, x));
    char s[FMT_MAX + 1], d[FMT_MAX + 1];
    if (rows == 2 && n != 2) {
        /* two rows: the spatial dimensions only */
        size_t ks = 0, kd = 0;
        for (int64_t i = 0; i < n; i++) {
            if (src[i] == 'H' || src[i] == 'W') s[ks++] = src[i];
            if (dst[i] == 'H' || dst[i] == 'W') d[kd++] = dst[i];
        }
        s[ks] = d[kd] = '\0';
        if (ks != 2 || kd != 2)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Format specifier must contain H and W for 2D case");
    } else {
        memcpy(s, src, (size_t)n + 1);
        memcpy(d, dst, (size_t)n + 1);
    }
    const int64_t cols = x->rank == 2 ? x->dims[1] : 1;
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &y));
    for (int64_t j = 0; j < rows; j++) {
        int64_t i = (const char *)memchr(s, d[j], (size_t)rows) - s;
        for (int64_t k = 0; k < cols; k++) put_int(y, j * cols + k, gn__ak_int_at(x, i * cols + k));
    }
    return GN_OK;
}

