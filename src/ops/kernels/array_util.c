/* Helpers of the array kernels: outputs built by element size (strings
 * through a temporary array), N-d strided copies, index tensors, messages. */
#include "ops/kernels/array_impl.h"

#include <stdio.h>
#include <stdlib.h>

size_t gn__ak_esize(int32_t dtype)
{
    if (dtype == TENSORFLOW__DATA_TYPE__DT_STRING) return sizeof(gn__tstring);
    return gn__dtype_size(dtype);
}

/* ---- outputs -------------------------------------------------------------------- */
gn_status gn__ak_out_begin(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims, gn__ak_out *o)
{
    memset(o, 0, sizeof *o);
    o->k = k;
    o->dtype = dtype;
    if (rank < 0 || rank > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", rank, GN__MAX_DIMS);
    o->rank = rank;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "negative dimension %lld", (long long)dims[i]);
        if (dims[i] && n > INT64_MAX / dims[i]) return gn__kctx_fail(c, GN_ERR_GRAPH, "element count overflows");
        n *= dims[i];
        o->dims[i] = dims[i];
    }
    o->n = n;
    if (dtype == TENSORFLOW__DATA_TYPE__DT_STRING) {
        if ((uint64_t)n > SIZE_MAX / sizeof(gn__tstring))
            return gn__kctx_fail(c, GN_ERR_NOMEM, "tensor too large");
        /* the element array alone is over the limit: refused before the scratch copy */
        GN_TRY(gn__kctx_check_output(c, k, dtype, n, (size_t)n * sizeof(gn__tstring)));
        o->tmp = calloc(n ? (size_t)n : 1, sizeof(gn__tstring));
        if (!o->tmp) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %lld strings", (long long)n);
        o->data = o->tmp;
        return GN_OK;
    }
    if (!gn__dtype_size(dtype))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported here", gn__dtype_name(dtype));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, k, dtype, rank, dims, &t));
    o->data = t->data;
    return GN_OK;
}

gn_status gn__ak_out_end(gn__kctx *c, gn__ak_out *o)
{
    if (!o->tmp) return GN_OK;
    size_t bytes = 0;
    for (int64_t i = 0; i < o->n; i++) {
        if (o->tmp[i].len > SIZE_MAX - bytes) {
            free(o->tmp);
            o->tmp = NULL;
            return gn__kctx_fail(c, GN_ERR_NOMEM, "string tensor too large");
        }
        bytes += o->tmp[i].len;
    }
    gn__tensor *t;
    char *storage;
    gn_status s = gn__kctx_output_strings(c, o->k, o->rank, o->dims, bytes, &t, &storage);
    if (s == GN_OK) {
        gn__tstring *d = t->data;
        for (int64_t i = 0; i < o->n; i++) {
            size_t len = o->tmp[i].len;
            d[i].ptr = storage;
            d[i].len = len;
            if (len) memcpy(storage, o->tmp[i].ptr, len);
            storage += len;
        }
    }
    free(o->tmp);
    o->tmp = NULL;
    return s;
}

void gn__ak_out_abort(gn__kctx *c, gn__ak_out *o)
{
    free(o->tmp);
    o->tmp = NULL;
    if (o->k < c->n_out) gn__tensor_release(&c->out[o->k]);
}

/* ---- strided copies ----------------------------------------------------------------- */
typedef struct {
    uint64_t a, b;
} gn__ak_16;

void gn__ak_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

void gn__ak_fill(void *dst, int64_t n, const void *value, size_t esz)
{
    if (n <= 0) return;
    switch (esz) {
    case 1: memset(dst, *(const uint8_t *)value, (size_t)n); return;
    case 2: {
        uint16_t v;
        memcpy(&v, value, 2);
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = v;
        return;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, value, 4);
        uint32_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = v;
        return;
    }
    case 8: {
        uint64_t v;
        memcpy(&v, value, 8);
        uint64_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = v;
        return;
    }
    default: {
        char *d = dst;
        for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * esz, value, esz);
        return;
    }
    }
}

/* One row: n elements with strides ds / ss (elements). */
#define GN__AK_ROW(T)                                                                                                  \
    do {                                                                                                               \
        T *d_ = (T *)dst;                                                                                              \
        const T *s_ = (const T *)src;                                                                                  \
        for (int64_t i_ = 0; i_ < n; i_++) d_[i_ * ds] = s_[i_ * ss];                                                  \
    } while (0)

static void copy_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t esz)
{
    if (ds == 1 && ss == 1) {
        memcpy(dst, src, (size_t)n * esz);
        return;
    }
    switch (esz) {
    case 1: GN__AK_ROW(uint8_t); break;
    case 2: GN__AK_ROW(uint16_t); break;
    case 4: GN__AK_ROW(uint32_t); break;
    case 8: GN__AK_ROW(uint64_t); break;
    case 16: GN__AK_ROW(gn__ak_16); break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds * (int64_t)esz, src + i * ss * (int64_t)esz, esz);
        break;
    }
}

/* Blocked 2-D transpose-like copy: rows x cols, dst contiguous along cols
 * (dc == 1), src contiguous along rows (sr == 1). The shorter side is the
 * inner block loop, so whole cache lines of the longer side are finished
 * before moving on; inside a tile the walk follows the side with the smaller
 * stride across (measured: NHWC->NCHW and back both gain). */
#define GN__AK_TILE(T, r0, c0)                                                                                         \
    do {                                                                                                               \
        int64_t r1 = r0 + B < rows ? r0 + B : rows, c1 = c0 + B < cols ? c0 + B : cols;                               \
        if (sc <= dr)                                                                                                  \
            for (int64_t cc = c0; cc < c1; cc++)                                                                       \
                for (int64_t r = r0; r < r1; r++) d_[r * dr + cc] = s_[r + cc * sc];                                   \
        else                                                                                                           \
            for (int64_t r = r0; r < r1; r++)                                                                          \
                for (int64_t cc = c0; cc < c1; cc++) d_[r * dr + cc] = s_[r + cc * sc];                                \
    } while (0)
#define GN__AK_BLOCK(T)                                                                                                \
    do {                                                                                                               \
        T *d_ = (T *)dst;                                                                                              \
        const T *s_ = (const T *)src;                                                                                  \
        if (rows <= cols) {                                                                                            \
            for (int64_t c0 = 0; c0 < cols; c0 += B)                                                                   \
                for (int64_t r0 = 0; r0 < rows; r0 += B) GN__AK_TILE(T, r0, c0);                                      \
        } else {                                                                                                       \
            for (int64_t r0 = 0; r0 < rows; r0 += B)                                                                   \
                for (int64_t c0 = 0; c0 < cols; c0 += B) GN__AK_TILE(T, r0, c0);                                      \
        }                                                                                                              \
    } while (0)

static void copy_block(char *dst, int64_t dr, const char *src, int64_t sc, int64_t rows, int64_t cols, size_t esz)
{
    enum { B = 32 };
    switch (esz) {
    case 1: GN__AK_BLOCK(uint8_t); break;
    case 2: GN__AK_BLOCK(uint16_t); break;
    case 4: GN__AK_BLOCK(uint32_t); break;
    case 8: GN__AK_BLOCK(uint64_t); break;
    case 16: GN__AK_BLOCK(gn__ak_16); break;
    default:
        for (int64_t r = 0; r < rows; r++)
            for (int64_t cc = 0; cc < cols; cc++)
                memcpy(dst + (r * dr + cc) * (int64_t)esz, src + (r + cc * sc) * (int64_t)esz, esz);
        break;
    }
}

void gn__ak_copy_nd(void *dst, const int64_t *dstride, const void *src, const int64_t *sstride, int32_t rank,
                    const int64_t *dims, size_t esz)
{
    int64_t d[GN__AK_COPY_MAX], ds[GN__AK_COPY_MAX], ss[GN__AK_COPY_MAX];
    int32_t r = 0;
    if (rank > GN__AK_COPY_MAX) return;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        d[r] = dims[i];
        ds[r] = dstride[i];
        ss[r] = sstride[i];
        r++;
    }
    /* merge dim i into the next kept one when both strides nest */
    int32_t m = 0;
    for (int32_t i = 0; i < r; i++) {
        if (m > 0 && ds[m - 1] == ds[i] * d[i] && ss[m - 1] == ss[i] * d[i]) {
            d[m - 1] *= d[i];
            ds[m - 1] = ds[i];
            ss[m - 1] = ss[i];
            continue;
        }
        d[m] = d[i];
        ds[m] = ds[i];
        ss[m] = ss[i];
        m++;
    }
    r = m;
    char *dp = dst;
    const char *sp = src;
    int64_t e = (int64_t)esz;
    if (r == 0) {
        memcpy(dp, sp, esz);
        return;
    }
    /* the inner kernel: a blocked 2-D copy or a row */
    bool block = r >= 2 && ds[r - 1] == 1 && ss[r - 1] != 1 && ss[r - 2] == 1 && d[r - 1] >= 4 && d[r - 2] >= 4;
    int32_t outer = block ? r - 2 : r - 1;
    int64_t idx[GN__AK_COPY_MAX] = {0};
    for (;;) {
        if (block) copy_block(dp, ds[r - 2], sp, ss[r - 1], d[r - 2], d[r - 1], esz);
        else copy_row(dp, ds[r - 1], sp, ss[r - 1], d[r - 1], esz);
        int32_t j = outer - 1;
        for (; j >= 0; j--) {
            dp += ds[j] * e;
            sp += ss[j] * e;
            if (++idx[j] < d[j]) break;
            dp -= ds[j] * d[j] * e;
            sp -= ss[j] * d[j] * e;
            idx[j] = 0;
        }
        if (j < 0) return;
    }
}

/* ---- index tensors ---------------------------------------------------------------- */
bool gn__ak_is_int(int32_t dt)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_INT32:
    case TENSORFLOW__DATA_TYPE__DT_INT64:
    case TENSORFLOW__DATA_TYPE__DT_INT16:
    case TENSORFLOW__DATA_TYPE__DT_INT8:
    case TENSORFLOW__DATA_TYPE__DT_UINT8:
    case TENSORFLOW__DATA_TYPE__DT_UINT16:
    case TENSORFLOW__DATA_TYPE__DT_UINT32:
    case TENSORFLOW__DATA_TYPE__DT_UINT64: return true;
    default: return false;
    }
}

int64_t gn__ak_int_at(const gn__tensor *t, int64_t i)
{
    switch (t->dtype) {
    case TENSORFLOW__DATA_TYPE__DT_INT32: return ((const int32_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_INT64: return ((const int64_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_INT16: return ((const int16_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_INT8: return ((const int8_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_UINT8: return ((const uint8_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_UINT16: return ((const uint16_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_UINT32: return ((const uint32_t *)t->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_UINT64: return (int64_t)((const uint64_t *)t->data)[i];
    default: return 0;
    }
}

gn_status gn__ak_read_ints(gn__kctx *c, uint32_t in, const char *what, bool allow_scalar, int64_t *v, int32_t max,
                           int32_t *n)
{
    if (in >= c->n_in) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s: input %u is missing", what, in);
    const gn__tensor *t = &c->in[in];
    if (t->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 && t->dtype != TENSORFLOW__DATA_TYPE__DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, not %s", what, gn__dtype_name(t->dtype));
    char sb[GN__AK_SHAPE_STR];
    if (!(t->rank == 1 || (allow_scalar && t->rank == 0)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be 1-D, not %s", what, gn__ak_tshape(sb, t));
    int64_t cnt = gn__tensor_numel(t);
    if (cnt > max)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%s has %lld elements, over the supported %d", what,
                             (long long)cnt, max);
    for (int64_t i = 0; i < cnt; i++) v[i] = gn__ak_int_at(t, i);
    *n = (int32_t)cnt;
    return GN_OK;
}

gn_status gn__ak_read_scalar_int(gn__kctx *c, uint32_t in, const char *what, int64_t *v)
{
    if (in >= c->n_in) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s: input %u is missing", what, in);
    const gn__tensor *t = &c->in[in];
    if (t->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 && t->dtype != TENSORFLOW__DATA_TYPE__DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, not %s", what, gn__dtype_name(t->dtype));
    if (gn__tensor_numel(t) != 1) {
        char sb[GN__AK_SHAPE_STR];
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar, not shape %s", what, gn__ak_tshape(sb, t));
    }
    *v = gn__ak_int_at(t, 0);
    return GN_OK;
}

int64_t gn__ak_attr_int(const gn__kctx *c, const char *key, int64_t dflt)
{
    int64_t v;
    return gn__attr_get_int(c->g, c->node, key, &v) ? v : dflt;
}

bool gn__ak_attr_bool(const gn__kctx *c, const char *key, bool dflt)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, key, &v) ? v : dflt;
}

int32_t gn__ak_attr_type(const gn__kctx *c, const char *key, int32_t dflt)
{
    int v;
    return gn__attr_get_type(c->g, c->node, key, &v) ? (int32_t)v : dflt;
}

/* ---- messages ----------------------------------------------------------------------- */
const char *gn__ak_shape_str(char *buf, int32_t rank, const int64_t *dims)
{
    size_t n = 0;
    buf[n++] = '[';
    for (int32_t i = 0; i < rank && n < GN__AK_SHAPE_STR - 24; i++) {
        int w;
        if (dims[i] < 0) w = snprintf(buf + n, GN__AK_SHAPE_STR - n, "%s?", i ? "," : "");
        else w = snprintf(buf + n, GN__AK_SHAPE_STR - n, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (w > 0) n += (size_t)w;
    }
    buf[n++] = ']';
    buf[n] = 0;
    return buf;
}

const char *gn__ak_index_str(char *buf, int32_t rank, const int64_t *dims, int64_t i)
{
    if (rank <= 0) {
        buf[0] = 0;
        return buf;
    }
    int64_t coord[GN__MAX_DIMS];
    for (int32_t d = rank - 1; d >= 0; d--) {
        coord[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
    return gn__ak_shape_str(buf, rank, coord);
}
