/* CPU kernels: segment reductions, TensorScatter*, Roll, Bucketize, Unique,
 * Bincount, L2Loss, MatrixDiagV3 / MatrixDiagPartV3, Assert, Print, PrintV2
 * and StringFormat. After tensorflow/core/kernels/{segment_reduction_ops_impl,
 * scatter_nd_op, roll_op, bucketize_op, unique_op, bincount_op, l2loss_op,
 * matrix_diag_op, logging_ops, string_format_op}.cc and the tensor
 * summaries of framework/tensor.cc (see kernel.h).
 *
 * Arithmetic is done in the element type, in a fixed order (input rows in
 * order), so every run gives the same bits; integer sums and products wrap
 * (computed on the unsigned type) instead of overflowing. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_INT8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_UINT8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_INT16 TENSORFLOW__DATA_TYPE__DT_INT16
#define DT_UINT16 TENSORFLOW__DATA_TYPE__DT_UINT16
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_UINT32 TENSORFLOW__DATA_TYPE__DT_UINT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_UINT64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* ---- shared helpers ------------------------------------------------------------------------------ */
static gn_status need(gn__kctx *c, uint32_t n_in)
{
    if (c->n_in < n_in) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n_in, c->n_in);
    return GN_OK;
}

static bool is_index_dtype(int32_t dt) { return dt == DT_INT32 || dt == DT_INT64 || dt == DT_INT16 || dt == DT_UINT16; }

static int64_t index_at(const gn__tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_INT32: return ((const int32_t *)t->data)[i];
    case DT_INT16: return ((const int16_t *)t->data)[i];
    case DT_UINT16: return ((const uint16_t *)t->data)[i];
    default: return ((const int64_t *)t->data)[i];
    }
}

/* "[2,3]" into buf */
static const char *dims_str(int32_t rank, const int64_t *dims, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int32_t d = 0; d < rank && o + 24 < n; d++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (o + 2 <= n) snprintf(buf + o, n - o, "]");
    return buf;
}

/* The coordinates of flat index i in a shape of `rank` dims, as "[1,2]" ("" for a scalar). */
static const char *coord_str(int32_t rank, const int64_t *dims, int64_t i, char *buf, size_t n)
{
    int64_t co[GN__MAX_DIMS];
    for (int32_t d = rank - 1; d >= 0; d--) {
        co[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
    if (rank == 0) {
        if (n) buf[0] = 0;
        return buf;
    }
    return dims_str(rank, co, buf, n);
}

static int64_t prod_dims(const int64_t *dims, int32_t from, int32_t to)
{
    int64_t n = 1;
    for (int32_t d = from; d < to; d++) n *= dims[d];
    return n;
}

/* A scalar (or one-element) integer input: int32 or int64. */
static gn_status scalar_int(gn__kctx *c, uint32_t i, const char *what, int64_t *v)
{
    const gn__tensor *t = &c->in[i];
    if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, got %s", what, gn__dtype_name(t->dtype));
    if (t->rank != 0) {
        char b[160];
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s should be a scalar, not shape %s", what,
                             dims_str(t->rank, t->dims, b, sizeof b));
    }
    *v = index_at(t, 0);
    return GN_OK;
}

/* Element-type dispatch for arithmetic kernels. X(name, C type, DataType, is_int, lowest, highest) */
#define GN_MISC_NUM_TYPES(X)                                                                                           \
    X(f32, float, DT_FLOAT, 0, -FLT_MAX, FLT_MAX)                                                                      \
    X(f64, double, DT_DOUBLE, 0, -DBL_MAX, DBL_MAX)                                                                    \
    X(f16, gn__f16, DT_HALF, 0, (gn__f16)-65504.0f, (gn__f16)65504.0f)                                                 \
    X(i8, int8_t, DT_INT8, 1, INT8_MIN, INT8_MAX)                                                                      \
    X(u8, uint8_t, DT_UINT8, 1, 0, UINT8_MAX)                                                                          \
    X(i16, int16_t, DT_INT16, 1, INT16_MIN, INT16_MAX)                                                                 \
    X(u16, uint16_t, DT_UINT16, 1, 0, UINT16_MAX)                                                                      \
    X(i32, int32_t, DT_INT32, 1, INT32_MIN, INT32_MAX)                                                                 \
    X(u32, uint32_t, DT_UINT32, 1, 0, UINT32_MAX)                                                                      \
    X(i64, int64_t, DT_INT64, 1, INT64_MIN, INT64_MAX)                                                                 \
    X(u64, uint64_t, DT_UINT64, 1, 0, UINT64_MAX)

/* wrapping add/sub/mul for integers (through uint64), plain for floats */
#define M_ADD(T, I, a, b) ((I) ? (T)((uint64_t)(a) + (uint64_t)(b)) : (T)((a) + (b)))
#define M_SUB(T, I, a, b) ((I) ? (T)((uint64_t)(a) - (uint64_t)(b)) : (T)((a) - (b)))
#define M_MUL(T, I, a, b) ((I) ? (T)((uint64_t)(a) * (uint64_t)(b)) : (T)((a) * (b)))

enum { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN };
enum { S_UPDATE, S_ADD, S_SUB, S_MAX, S_MIN };

/* Segment reduction: seg[r] is the output row of input row r (< 0: dropped).
 * out has nseg rows of `inner` elements. Empty segments get `empty_zero` ? 0 :
 * the reduction's identity (TensorFlow: sorted ops write 0, unsorted the
 * identity: lowest() for max, highest() for min, 1 for prod). */
#define GN_MISC_SEG_FN(NAME, T, DT, I, LO, HI)                                                                         \
    static void seg_##NAME(const void *xv, void *yv, const int64_t *seg, int64_t rows, int64_t inner, int64_t nseg,    \
                           int red, bool empty_zero, int64_t *count)                                                   \
    {                                                                                                                  \
        const T *x = xv;                                                                                               \
        T *y = yv;                                                                                                     \
        T init = red == R_PROD ? (T)1 : red == R_MAX ? (T)(LO) : red == R_MIN ? (T)(HI) : (T)0;                        \
        for (int64_t i = 0; i < nseg * inner; i++) y[i] = init;                                                        \
        for (int64_t s = 0; s < nseg; s++) count[s] = 0;                                                               \
        for (int64_t r = 0; r < rows; r++) {                                                                           \
            int64_t s = seg[r];                                                                                        \
            if (s < 0) continue;                                                                                       \
            count[s]++;                                                                                                \
            const T *xr = x + r * inner;                                                                               \
            T *yr = y + s * inner;                                                                                     \
            for (int64_t k = 0; k < inner; k++) {                                                                      \
                T a = xr[k], b = yr[k];                                                                                \
                switch (red) {                                                                                         \
                case R_SUM:                                                                                            \
                case R_MEAN: yr[k] = M_ADD(T, I, a, b); break;                                                         \
                case R_PROD: yr[k] = M_MUL(T, I, a, b); break;                                                         \
                case R_MAX: yr[k] = (a < b) ? b : a; break;                                                            \
                default: yr[k] = (b < a) ? b : a; break;                                                               \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        for (int64_t s = 0; s < nseg; s++) {                                                                           \
            T *yr = y + s * inner;                                                                                     \
            if (!count[s]) {                                                                                           \
                if (empty_zero)                                                                                        \
                    for (int64_t k = 0; k < inner; k++) yr[k] = (T)0;                                                  \
            } else if (red == R_MEAN) {                                                                                \
                for (int64_t k = 0; k < inner; k++) yr[k] = (I) ? (T)(yr[k] / count[s]) : (T)(yr[k] / (T)count[s]);    \
            }                                                                                                          \
        }                                                                                                              \
    }
GN_MISC_NUM_TYPES(GN_MISC_SEG_FN)

/* Scatter of `rows` update slices of `inner` elements at element offsets off[r]. */
#define GN_MISC_SCATTER_FN(NAME, T, DT, I, LO, HI)                                                                     \
    static void scatter_##NAME(void *yv, const void *uv, const int64_t *off, int64_t rows, int64_t inner, int op)      \
    {                                                                                                                  \
        T *y = yv;                                                                                                     \
        const T *u = uv;                                                                                               \
        for (int64_t r = 0; r < rows; r++) {                                                                           \
            if (off[r] < 0) continue;                                                                                  \
            T *yr = y + off[r];                                                                                        \
            const T *ur = u + r * inner;                                                                               \
            for (int64_t k = 0; k < inner; k++) {                                                                      \
                T a = yr[k], b = ur[k];                                                                                \
                switch (op) {                                                                                          \
                case S_ADD: yr[k] = M_ADD(T, I, a, b); break;                                                          \
                case S_SUB: yr[k] = M_SUB(T, I, a, b); break;                                                          \
                case S_MAX: yr[k] = (a < b) ? b : a; break;                                                            \
                case S_MIN: yr[k] = (b < a) ? b : a; break;                                                            \
                default: yr[k] = b; break;                                                                             \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }
GN_MISC_NUM_TYPES(GN_MISC_SCATTER_FN)

typedef void (*seg_fn)(const void *, void *, const int64_t *, int64_t, int64_t, int64_t, int, bool, int64_t *);
typedef void (*scatter_fn)(void *, const void *, const int64_t *, int64_t, int64_t, int);

static seg_fn seg_for(int32_t dt)
{
#define GN_MISC_CASE(NAME, T, DT, I, LO, HI)                                                                           \
    case DT: return seg_##NAME;
    switch (dt) {
        GN_MISC_NUM_TYPES(GN_MISC_CASE) default : return NULL;
    }
#undef GN_MISC_CASE
}

static scatter_fn scatter_for(int32_t dt)
{
#define GN_MISC_CASE(NAME, T, DT, I, LO, HI)                                                                           \
    case DT: return scatter_##NAME;
    switch (dt) {
        GN_MISC_NUM_TYPES(GN_MISC_CASE) default : return NULL;
    }
#undef GN_MISC_CASE
}

/* ---- SegmentSum/Mean/Max/Min (sorted ids) and UnsortedSegmentSum/Max/Min/Prod ------------------ */
static gn_status segment_common(gn__kctx *c, int red, bool sorted)
{
    GN_TRY(need(c, sorted ? 2 : 3));
    const gn__tensor *x = &c->in[0], *ids = &c->in[1];
    seg_fn fn = seg_for(x->dtype);
    if (!fn) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "data of dtype %s", gn__dtype_name(x->dtype));
    if (!is_index_dtype(ids->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids must be int32 or int64, got %s", gn__dtype_name(ids->dtype));
    char b1[200], b2[200];
    int64_t nseg = 0, rows = 0;
    int64_t *seg = NULL;
    int32_t ir; /* leading dims of data covered by the ids */
    if (sorted) {
        if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least rank 1");
        if (ids->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids should be a vector.");
        if (ids->dims[0] != x->dims[0])
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "segment_ids should be the same size as dimension 0 of input: %lld vs %lld",
                                 (long long)ids->dims[0], (long long)x->dims[0]);
        ir = 1;
        rows = ids->dims[0];
        if (rows > 0) {
            int64_t last = index_at(ids, rows - 1);
            if (last < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "segment ids must be >= 0");
            if (last == INT64_MAX)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "segment id %lld is too large", (long long)last);
            nseg = last + 1;
        }
        for (int64_t r = 0; r < rows; r++) {
            int64_t s = index_at(ids, r);
            if (r > 0 && s != index_at(ids, r - 1) && s < index_at(ids, r - 1))
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "segment ids are not increasing: segment_ids[%lld] = %lld after %lld",
                                     (long long)r, (long long)s, (long long)index_at(ids, r - 1));
            if (s < 0 || s >= nseg)
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "Segment id %lld out of range [0, %lld), possibly because 'segment_ids' input is "
                                     "not sorted.",
                                     (long long)s, (long long)nseg);
        }
    } else {
        GN_TRY(scalar_int(c, 2, "num_segments", &nseg));
        if (nseg < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input num_segments == %lld must not be negative.", (long long)nseg);
        bool prefix = ids->rank <= x->rank;
        for (int32_t d = 0; prefix && d < ids->rank; d++) prefix = ids->dims[d] == x->dims[d];
        if (!prefix)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "data.shape = %s does not start with segment_ids.shape = %s",
                                 dims_str(x->rank, x->dims, b1, sizeof b1),
                                 dims_str(ids->rank, ids->dims, b2, sizeof b2));
        ir = ids->rank;
        rows = gn__tensor_numel(ids);
        for (int64_t r = 0; r < rows; r++) {
            int64_t s = index_at(ids, r);
            if (s >= nseg)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids%s = %lld is out of range [0, %lld)",
                                     coord_str(ids->rank, ids->dims, r, b1, sizeof b1), (long long)s, (long long)nseg);
        }
    }
    int64_t dims[GN__MAX_DIMS];
    int32_t orank = 1 + x->rank - ir;
    if (orank > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "more than %d dimensions", GN__MAX_DIMS);
    dims[0] = nseg;
    for (int32_t d = ir; d < x->rank; d++) dims[1 + d - ir] = x->dims[d];
    int64_t inner = prod_dims(x->dims, ir, x->rank);
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, orank, dims, &y));
    if (!inner || !nseg) return GN_OK; /* nothing to write (and nseg may be huge) */
    seg = malloc((size_t)(rows ? rows : 1) * sizeof *seg);
    int64_t *count = malloc((size_t)(nseg ? nseg : 1) * sizeof *count);
    if (!seg || !count) {
        free(seg);
        free(count);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    for (int64_t r = 0; r < rows; r++) seg[r] = index_at(ids, r);
    fn(x->data, y->data, seg, rows, inner, nseg, red, sorted, count);
    free(seg);
    free(count);
    return GN_OK;
}

gn_status gn__misc_k_segment_sum(gn__kctx *c) { return segment_common(c, R_SUM, true); }
gn_status gn__misc_k_segment_mean(gn__kctx *c) { return segment_common(c, R_MEAN, true); }
gn_status gn__misc_k_segment_max(gn__kctx *c) { return segment_common(c, R_MAX, true); }
gn_status gn__misc_k_segment_min(gn__kctx *c) { return segment_common(c, R_MIN, true); }
gn_status gn__misc_k_unsorted_segment_sum(gn__kctx *c) { return segment_common(c, R_SUM, false); }
gn_status gn__misc_k_unsorted_segment_prod(gn__kctx *c) { return segment_common(c, R_PROD, false); }
gn_status gn__misc_k_unsorted_segment_max(gn__kctx *c) { return segment_common(c, R_MAX, false); }
gn_status gn__misc_k_unsorted_segment_min(gn__kctx *c) { return segment_common(c, R_MIN, false); }

/* ---- TensorScatterUpdate/Add/Sub/Max/Min(tensor, indices, updates) ---------------------------- */
static gn_status tensor_scatter(gn__kctx *c, int op)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *ix = &c->in[1], *u = &c->in[2];
    char b1[200], b2[200], b3[200];
    scatter_fn fn = scatter_for(x->dtype);
    size_t es = gn__dtype_size(x->dtype);
    if (!es || (op != S_UPDATE && !fn) || (op == S_UPDATE && x->dtype == DT_STRING))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "tensor of dtype %s", gn__dtype_name(x->dtype));
    if (u->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "updates is %s but tensor is %s", gn__dtype_name(u->dtype),
                             gn__dtype_name(x->dtype));
    if (!is_index_dtype(ix->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be int32 or int64, got %s", gn__dtype_name(ix->dtype));
    if (x->rank < 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input shape must have rank at least one. Found: %s",
                             dims_str(x->rank, x->dims, b1, sizeof b1));
    if (ix->rank < 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Indices shape must have rank at least one. Found: %s",
                             dims_str(ix->rank, ix->dims, b1, sizeof b1));
    int64_t K = ix->dims[ix->rank - 1];
    if (K > x->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Index innermost dimension length must be <= tensor rank; saw: %lld vs. %d", (long long)K,
                             x->rank);
    /* updates shape = indices.shape[:-1] + tensor.shape[K:] */
    int64_t want[2 * GN__MAX_DIMS];
    int32_t wr = 0;
    for (int32_t d = 0; d < ix->rank - 1; d++) want[wr++] = ix->dims[d];
    for (int32_t d = (int32_t)K; d < x->rank; d++) want[wr++] = x->dims[d];
    bool ok = wr == u->rank;
    for (int32_t d = 0; ok && d < wr; d++) ok = want[d] == u->dims[d];
    if (!ok) {
        if (wr > GN__MAX_DIMS) wr = GN__MAX_DIMS;
        return gn__kctx_fail(c, GN_ERR_GRAPH, "updates shape %s must be indices.shape[:-1] + tensor.shape[%lld:] = %s",
                             dims_str(u->rank, u->dims, b1, sizeof b1), (long long)K,
                             dims_str(wr, want, b2, sizeof b2));
    }
    /* bad_indices_policy: "" / "DEFAULT" / "ERROR" fail on an out-of-bounds
     * index (TensorFlow's CPU behaviour), "IGNORE" skips its update */
    const char *pol = "";
    size_t pn = 0;
    (void)gn__attr_get_string(c->g, c->node, "bad_indices_policy", &pol, &pn);
    bool ignore = pn == 6 && !memcmp(pol, "IGNORE", 6);
    if (!ignore && pn && !(pn == 7 && !memcmp(pol, "DEFAULT", 7)) && !(pn == 5 && !memcmp(pol, "ERROR", 5)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'bad_indices_policy' is '%.*s'; expected DEFAULT, ERROR or IGNORE",
                             (int)(pn > 64 ? 64 : pn), pol);
    int64_t rows = prod_dims(ix->dims, 0, ix->rank - 1);
    int64_t inner = prod_dims(x->dims, (int32_t)K, x->rank);
    int64_t *off = malloc((size_t)(rows ? rows : 1) * sizeof *off);
    if (!off) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t r = 0; r < rows; r++) {
        int64_t o = 0;
        for (int64_t d = 0; d < K; d++) {
            int64_t v = index_at(ix, r * K + d);
            if ((v < 0 || v >= x->dims[d]) && ignore) {
                o = -1;
                break;
            }
            if (v < 0 || v >= x->dims[d]) {
                size_t p = 0;
                for (int64_t e = 0; e < K && p + 24 < sizeof b2; e++)
                    p += (size_t)snprintf(b2 + p, sizeof b2 - p, "%s%lld", e ? ", " : "",
                                          (long long)index_at(ix, r * K + e));
                if (!K) b2[0] = 0;
                free(off);
                return gn__kctx_fail(c, GN_ERR_GRAPH, "indices%s = [%s] does not index into shape %s",
                                     coord_str(ix->rank - 1, ix->dims, r, b1, sizeof b1), b2,
                                     dims_str(x->rank, x->dims, b3, sizeof b3));
            }
            o = o * x->dims[d] + v;
        }
        off[r] = o < 0 ? -1 : o * inner;
    }
    gn__tensor *y;
    gn_status st = gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &y);
    if (st == GN_OK) {
        if (x->nbytes) memcpy(y->data, x->data, (size_t)gn__tensor_numel(x) * es);
        if (fn)
            fn(y->data, u->data, off, rows, inner, op);
        else /* update of a type without arithmetic (bool, ...): copy slices */
            for (int64_t r = 0; r < rows; r++)
                if (off[r] >= 0)
                    memcpy((uint8_t *)y->data + (size_t)off[r] * es,
                           (const uint8_t *)u->data + (size_t)(r * inner) * es, (size_t)inner * es);
    }
    free(off);
    return st;
}

gn_status gn__misc_k_tensor_scatter_update(gn__kctx *c) { return tensor_scatter(c, S_UPDATE); }
gn_status gn__misc_k_tensor_scatter_add(gn__kctx *c) { return tensor_scatter(c, S_ADD); }
gn_status gn__misc_k_tensor_scatter_sub(gn__kctx *c) { return tensor_scatter(c, S_SUB); }
gn_status gn__misc_k_tensor_scatter_max(gn__kctx *c) { return tensor_scatter(c, S_MAX); }
gn_status gn__misc_k_tensor_scatter_min(gn__kctx *c) { return tensor_scatter(c, S_MIN); }

/* ---- Roll(input, shift, axis) ------------------------------------------------------------------ */
gn_status gn__misc_k_roll(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *sh = &c->in[1], *ax = &c->in[2];
    char b1[200];
    size_t es = gn__dtype_size(x->dtype);
    if (!es) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input of dtype %s", gn__dtype_name(x->dtype));
    if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 1-D or higher");
    if ((sh->dtype != DT_INT32 && sh->dtype != DT_INT64) || sh->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "shift must be a scalar or a 1-D vector of int32 or int64. Found: %s %s",
                             gn__dtype_name(sh->dtype), dims_str(sh->rank, sh->dims, b1, sizeof b1));
    if ((ax->dtype != DT_INT32 && ax->dtype != DT_INT64) || ax->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "axis must be a scalar or a 1-D vector of int32 or int64. Found: %s %s",
                             gn__dtype_name(ax->dtype), dims_str(ax->rank, ax->dims, b1, sizeof b1));
    int64_t n = gn__tensor_numel(sh);
    if (n != gn__tensor_numel(ax))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "shift and axis must have the same size: %lld vs %lld", (long long)n,
                             (long long)gn__tensor_numel(ax));
    int64_t shift[GN__MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t a = index_at(ax, i);
        if (a < 0) a += x->rank;
        if (a < 0 || a >= x->rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "axis %lld is out of range for input of rank %d",
                                 (long long)index_at(ax, i), x->rank);
        int64_t d = x->dims[a];
        if (d > 0) {
            int64_t s = index_at(sh, i) % d; /* in (-d, d) */
            shift[a] = (shift[a] + s + d) % d;
        }
    }
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &y));
    int64_t total = gn__tensor_numel(x);
    if (!total) return GN_OK;
    /* rows of the last dim: two memcpys each */
    int32_t r = x->rank;
    int64_t last = x->dims[r - 1], outer = total / last, co[GN__MAX_DIMS] = {0};
    int64_t s = shift[r - 1];
    const uint8_t *in = x->data;
    uint8_t *out = y->data;
    for (int64_t o = 0; o < outer; o++) {
        /* source row: coordinate (co[d] - shift[d]) mod dims[d] for the leading dims */
        int64_t src = 0;
        for (int32_t d = 0; d < r - 1; d++) src = src * x->dims[d] + (co[d] - shift[d] + x->dims[d]) % x->dims[d];
        const uint8_t *sr = in + (size_t)(src * last) * es;
        uint8_t *dr = out + (size_t)(o * last) * es;
        memcpy(dr + (size_t)s * es, sr, (size_t)(last - s) * es);
        if (s) memcpy(dr, sr + (size_t)(last - s) * es, (size_t)s * es);
        for (int32_t d = r - 2; d >= 0; d--) {
            if (++co[d] < x->dims[d]) break;
            co[d] = 0;
        }
    }
    return GN_OK;
}

/* ---- Bucketize(input) attr boundaries -> int32 -------------------------------------------------- */
gn_status gn__misc_k_bucketize(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    const Tensorflow__AttrValue *a = gn__node_attr(c->g, c->node, "boundaries");
    if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !a->list)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'boundaries' (list of float) is missing");
    const float *bd = a->list->f;
    size_t nb = a->list->n_f;
    for (size_t i = 1; i < nb; i++)
        if (!(bd[i - 1] <= bd[i])) return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected sorted boundaries");
    if (x->dtype != DT_FLOAT && x->dtype != DT_DOUBLE && x->dtype != DT_INT32 && x->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input of dtype %s", gn__dtype_name(x->dtype));
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, DT_INT32, x->rank, x->dims, &y));
    int32_t *o = y->data;
    for (int64_t i = 0, n = gn__tensor_numel(x); i < n; i++) {
        float v; /* TensorFlow compares the value cast to float */
        switch (x->dtype) {
        case DT_FLOAT: v = ((const float *)x->data)[i]; break;
        case DT_DOUBLE: v = (float)((const double *)x->data)[i]; break;
        case DT_INT32: v = (float)((const int32_t *)x->data)[i]; break;
        default: v = (float)((const int64_t *)x->data)[i]; break;
        }
        /* upper_bound: the first boundary > v */
        size_t lo = 0, hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v < bd[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        o[i] = (int32_t)lo;
    }
    return GN_OK;
}

/* ---- Unique(x) / UniqueV2(x, axis) -> (y, idx) -------------------------------------------------- */
/* Slices are equal when every element compares equal (floats with ==, so
 * NaN is never equal to anything and -0 equals 0, as TensorFlow's hash map). */
static bool elem_eq(int32_t dt, const uint8_t *a, const uint8_t *b, size_t es)
{
    switch (dt) {
    case DT_FLOAT: return *(const float *)(const void *)a == *(const float *)(const void *)b;
    case DT_DOUBLE: return *(const double *)(const void *)a == *(const double *)(const void *)b;
    case DT_HALF: return *(const gn__f16 *)(const void *)a == *(const gn__f16 *)(const void *)b;
    case DT_BOOL: return (*a != 0) == (*b != 0);
    case DT_STRING: {
        const gn__tstring *s = (const void *)a, *t = (const void *)b;
        return s->len == t->len && (!s->len || !memcmp(s->ptr, t->ptr, s->len));
    }
    default: return !memcmp(a, b, es);
    }
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t elem_hash(uint64_t h, int32_t dt, const uint8_t *a, size_t es)
{
    switch (dt) {
    case DT_FLOAT: {
        float v = *(const float *)(const void *)a;
        if (v == 0) v = 0; /* -0 hashes as 0 */
        return mix(h, &v, sizeof v);
    }
    case DT_DOUBLE: {
        double v = *(const double *)(const void *)a;
        if (v == 0) v = 0;
        return mix(h, &v, sizeof v);
    }
    case DT_HALF: {
        float v = (float)*(const gn__f16 *)(const void *)a;
        if (v == 0) v = 0;
        return mix(h, &v, sizeof v);
    }
    case DT_BOOL: {
        uint8_t v = *a != 0;
        return mix(h, &v, 1);
    }
    case DT_STRING: {
        const gn__tstring *s = (const void *)a;
        return mix(mix(h, &s->len, sizeof s->len), s->ptr, s->len);
    }
    default: return mix(h, a, es);
    }
}

static gn_status unique_common(gn__kctx *c, bool v2)
{
    GN_TRY(need(c, v2 ? 2 : 1));
    const gn__tensor *x = &c->in[0];
    int32_t dt = x->dtype;
    size_t es = dt == DT_STRING ? sizeof(gn__tstring) : gn__dtype_size(dt);
    if (!es) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input of dtype %s", gn__dtype_name(dt));
    int out_idx = DT_INT32;
    (void)gn__attr_get_type(c->g, c->node, "out_idx", &out_idx);
    if (out_idx != DT_INT32 && out_idx != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'out_idx' must be int32 or int64, got %s", gn__dtype_name(out_idx));
    int64_t axis = 0;
    bool flat = true;
    if (v2) {
        const gn__tensor *ax = &c->in[1];
        if ((ax->dtype != DT_INT32 && ax->dtype != DT_INT64) || ax->rank != 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "axis expects a 1D vector of int32 or int64.");
        if (ax->dims[0] > 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "axis does not support input tensors larger than 1 elements");
        if (ax->dims[0] == 1) {
            flat = false;
            axis = index_at(ax, 0);
            int64_t a = axis < 0 ? axis + x->rank : axis;
            if (a < 0 || a >= x->rank)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "axis has to be between [0, %d), got %lld", x->rank,
                                     (long long)axis);
            axis = a;
        }
    }
    if (flat && x->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "unique expects a 1D vector.");
    /* slices along axis: n slices, each `outer` runs of `inner` elements */
    int64_t n = x->dims[axis];
    int64_t outer = prod_dims(x->dims, 0, (int32_t)axis), inner = prod_dims(x->dims, (int32_t)axis + 1, x->rank);
    if (out_idx == DT_INT32 && n > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%lld elements do not fit an int32 index", (long long)n);
    const uint8_t *base = x->data;
    size_t cap = 16;
    while (cap < (uint64_t)n * 2) cap *= 2;
    int64_t *table = malloc(cap * sizeof *table);                 /* slice id of the first occurrence, -1 empty */
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof *first); /* unique j -> slice */
    int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    if (!table || !first || !idx) {
        free(table);
        free(first);
        free(idx);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < cap; i++) table[i] = -1;
    int64_t nu = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = 1469598103934665603ull;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < inner; k++) h = elem_hash(h, dt, base + (size_t)((o * n + i) * inner + k) * es, es);
        size_t p = (size_t)(h & (cap - 1));
        int64_t found = -1;
        while (table[p] >= 0) {
            int64_t j = table[p], sj = first[j];
            bool eq = true;
            for (int64_t o = 0; eq && o < outer; o++)
                for (int64_t k = 0; eq && k < inner; k++)
                    eq = elem_eq(dt, base + (size_t)((o * n + i) * inner + k) * es,
                                 base + (size_t)((o * n + sj) * inner + k) * es, es);
            if (eq) {
                found = j;
                break;
            }
            p = (p + 1) & (cap - 1);
        }
        if (found < 0) {
            found = nu;
            first[nu++] = i;
            table[p] = found;
        }
        idx[i] = found;
    }
    free(table);
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    dims[axis] = nu;
    gn__tensor *y = NULL, *yi = NULL;
    gn_status st = GN_OK;
    if (dt == DT_STRING) {
        size_t bytes = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < nu; j++)
                for (int64_t k = 0; k < inner; k++)
                    bytes += ((const gn__tstring *)x->data)[(o * n + first[j]) * inner + k].len;
        char *store = NULL;
        st = gn__kctx_output_strings(c, 0, x->rank, dims, bytes, &y, &store);
        if (st == GN_OK) {
            gn__tstring *os = y->data;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < nu; j++)
                    for (int64_t k = 0; k < inner; k++) {
                        const gn__tstring *s = &((const gn__tstring *)x->data)[(o * n + first[j]) * inner + k];
                        if (s->len) memcpy(store, s->ptr, s->len);
                        os[(o * nu + j) * inner + k] = (gn__tstring){store, s->len};
                        store += s->len;
                    }
        }
    } else {
        st = gn__kctx_output(c, 0, dt, x->rank, dims, &y);
        if (st == GN_OK)
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < nu; j++)
                    memcpy((uint8_t *)y->data + (size_t)((o * nu + j) * inner) * es,
                           base + (size_t)((o * n + first[j]) * inner) * es, (size_t)inner * es);
    }
    if (st == GN_OK) st = gn__kctx_output(c, 1, out_idx, 1, &n, &yi);
    if (st == GN_OK)
        for (int64_t i = 0; i < n; i++) {
            if (out_idx == DT_INT32)
                ((int32_t *)yi->data)[i] = (int32_t)idx[i];
            else
                ((int64_t *)yi->data)[i] = idx[i];
        }
    free(first);
    free(idx);
    return st;
}

gn_status gn__misc_k_unique(gn__kctx *c) { return unique_common(c, false); }
gn_status gn__misc_k_unique_v2(gn__kctx *c) { return unique_common(c, true); }

/* ---- Bincount(arr, size, weights) / DenseBincount(input, size, weights) ---------------------- */
static void add_weight(int32_t dt, void *out, int64_t o, const gn__tensor *w, int64_t i, bool binary)
{
    switch (dt) {
    case DT_FLOAT:
        ((float *)out)[o] = binary ? 1.0f : ((float *)out)[o] + (w ? ((const float *)w->data)[i] : 1.0f);
        break;
    case DT_DOUBLE:
        ((double *)out)[o] = binary ? 1.0 : ((double *)out)[o] + (w ? ((const double *)w->data)[i] : 1.0);
        break;
    case DT_INT32:
        ((int32_t *)out)[o] =
            binary ? 1 : (int32_t)((uint32_t)((int32_t *)out)[o] + (uint32_t)(w ? ((const int32_t *)w->data)[i] : 1));
        break;
    default:
        ((int64_t *)out)[o] =
            binary ? 1 : (int64_t)((uint64_t)((int64_t *)out)[o] + (uint64_t)(w ? ((const int64_t *)w->data)[i] : 1));
        break;
    }
}

static gn_status bincount_common(gn__kctx *c, bool dense)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *w = &c->in[2];
    char b1[200], b2[200];
    int64_t size;
    GN_TRY(scalar_int(c, 1, "size", &size));
    if (size < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "size (%lld) must be non-negative", (long long)size);
    if (dense ? (x->dtype != DT_INT32 && x->dtype != DT_INT64) : x->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be %s, got %s", dense ? "input" : "arr",
                             dense ? "int32 or int64" : "int32", gn__dtype_name(x->dtype));
    int32_t dt = w->dtype;
    if (dt != DT_FLOAT && dt != DT_DOUBLE && dt != DT_INT32 && dt != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "weights of dtype %s", gn__dtype_name(dt));
    bool binary = false;
    if (dense) (void)gn__attr_get_bool(c->g, c->node, "binary_output", &binary);
    if (dense && x->rank != 1 && x->rank != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be a 1-D or 2-D tensor, got shape %s",
                             dims_str(x->rank, x->dims, b1, sizeof b1));
    int64_t nw = gn__tensor_numel(w), nx = gn__tensor_numel(x);
    bool use_w = nw > 0;
    if (use_w) {
        bool same = w->rank == x->rank;
        for (int32_t d = 0; same && d < x->rank; d++) same = w->dims[d] == x->dims[d];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "weights shape %s must equal %s shape %s (or weights be empty)",
                                 dims_str(w->rank, w->dims, b1, sizeof b1), dense ? "input" : "arr",
                                 dims_str(x->rank, x->dims, b2, sizeof b2));
    }
    for (int64_t i = 0; i < nx; i++)
        if (index_at(x, i) < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input arr must be non-negative! %s%s = %lld",
                                 dense ? "input" : "arr", coord_str(x->rank, x->dims, i, b1, sizeof b1),
                                 (long long)index_at(x, i));
    int64_t rows = dense && x->rank == 2 ? x->dims[0] : 1, cols = dense && x->rank == 2 ? x->dims[1] : nx;
    int64_t dims[2] = {rows, size};
    gn__tensor *y;
    if (dense && x->rank == 2) {
        GN_TRY(gn__kctx_output(c, 0, dt, 2, dims, &y));
    } else {
        GN_TRY(gn__kctx_output(c, 0, dt, 1, &size, &y));
    }
    if (y->nbytes) memset(y->data, 0, y->nbytes);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            int64_t i = r * cols + k, v = index_at(x, i);
            if (v >= size) continue; /* values past size are ignored */
            add_weight(dt, y->data, r * size + v, use_w ? w : NULL, i, binary);
        }
    return GN_OK;
}

gn_status gn__misc_k_bincount(gn__kctx *c) { return bincount_common(c, false); }
gn_status gn__misc_k_dense_bincount(gn__kctx *c) { return bincount_common(c, true); }

/* ---- L2Loss(t) = sum(t^2) / 2 ---------------------------------------------------------------- */
gn_status gn__misc_k_l2_loss(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    gn__tensor *y;
    int64_t n = gn__tensor_numel(x);
    switch (x->dtype) {
    case DT_FLOAT: {
        /* accumulated in double, in order, then rounded once */
        double s = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = ((const float *)x->data)[i];
            s += v * v;
        }
        GN_TRY(gn__kctx_output(c, 0, x->dtype, 0, NULL, &y));
        *(float *)y->data = (float)(s * 0.5);
        return GN_OK;
    }
    case DT_HALF: {
        double s = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = (double)((const gn__f16 *)x->data)[i];
            s += v * v;
        }
        GN_TRY(gn__kctx_output(c, 0, x->dtype, 0, NULL, &y));
        *(gn__f16 *)y->data = (gn__f16)(float)(s * 0.5);
        return GN_OK;
    }
    case DT_DOUBLE: {
        long double s = 0;
        for (int64_t i = 0; i < n; i++) {
            long double v = ((const double *)x->data)[i];
            s += v * v;
        }
        GN_TRY(gn__kctx_output(c, 0, x->dtype, 0, NULL, &y));
        *(double *)y->data = (double)(s * 0.5L);
        return GN_OK;
    }
    default: return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input of dtype %s", gn__dtype_name(x->dtype));
    }
}

/* ---- MatrixDiagV3 / MatrixDiagPartV3 ------------------------------------------------------------ */
static gn_status diag_k(gn__kctx *c, uint32_t i, int64_t *lo, int64_t *hi)
{
    const gn__tensor *k = &c->in[i];
    int64_t n = gn__tensor_numel(k);
    if (k->dtype != DT_INT32 || k->rank > 1 || n < 1 || n > 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "diag_index (k) must be an int32 scalar or vector of one or two elements, "
                             "received %lld elements",
                             (long long)n);
    *lo = index_at(k, 0);
    *hi = n == 2 ? index_at(k, 1) : *lo;
    if (*lo > *hi)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "lower_diag_index must not be larger than upper_diag_index: %lld > %lld",
                             (long long)*lo, (long long)*hi);
    return GN_OK;
}

static gn_status diag_align(gn__kctx *c, bool *left_super, bool *left_sub)
{
    const char *s = "RIGHT_LEFT";
    size_t n = strlen(s);
    (void)gn__attr_get_string(c->g, c->node, "align", &s, &n);
#define IS(lit) (n == sizeof lit - 1 && !memcmp(s, lit, n))
    if (!IS("LEFT_RIGHT") && !IS("RIGHT_LEFT") && !IS("LEFT_LEFT") && !IS("RIGHT_RIGHT"))
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "attr 'align' is '%.*s'; expected LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT or RIGHT_RIGHT",
                             (int)(n > 64 ? 64 : n), s);
    *left_super = IS("LEFT_LEFT") || IS("LEFT_RIGHT");
    *left_sub = IS("LEFT_LEFT") || IS("RIGHT_LEFT");
#undef IS
    return GN_OK;
}

static void diag_len_offset(int64_t d, int64_t max_len, int64_t rows, int64_t cols, bool left_super, bool left_sub,
                            int64_t *len, int64_t *off)
{
    int64_t a = rows + (d < 0 ? d : 0), b = cols - (d > 0 ? d : 0);
    *len = a < b ? a : b;
    bool left = d >= 0 ? left_super : left_sub;
    *off = left ? 0 : max_len - *len;
}

static gn_status padding_scalar(gn__kctx *c, uint32_t i, int32_t dt)
{
    const gn__tensor *p = &c->in[i];
    if (p->dtype != dt || gn__tensor_numel(p) != 1 || p->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "padding_value must be a scalar of the input's dtype %s",
                             gn__dtype_name(dt));
    return GN_OK;
}

gn_status gn__misc_k_matrix_diag_v3(gn__kctx *c)
{
    GN_TRY(need(c, 5));
    const gn__tensor *x = &c->in[0];
    size_t es = gn__dtype_size(x->dtype);
    if (!es) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "diagonal of dtype %s", gn__dtype_name(x->dtype));
    int64_t lo, hi, nr, nc;
    GN_TRY(diag_k(c, 1, &lo, &hi));
    if (c->in[2].dtype != DT_INT32 || c->in[2].rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_rows must be an int32 scalar");
    if (c->in[3].dtype != DT_INT32 || c->in[3].rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_cols must be an int32 scalar");
    nr = index_at(&c->in[2], 0);
    nc = index_at(&c->in[3], 0);
    GN_TRY(padding_scalar(c, 4, x->dtype));
    bool ls, lb;
    GN_TRY(diag_align(c, &ls, &lb));
    if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "diagonal must be at least 1-dim");
    int64_t nd = hi - lo + 1;
    if (nd > 1 && (x->rank < 2 || x->dims[x->rank - 2] != nd))
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "The number of diagonals provided in the input does not match the lower_diag_index and "
                             "upper_diag_index range.");
    if (lo <= -(int64_t)INT32_MAX || hi >= INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "diagonal index out of range");
    int64_t max_len = x->dims[x->rank - 1];
    int64_t min_rows = max_len - (hi < 0 ? hi : 0), min_cols = max_len + (lo > 0 ? lo : 0);
    if (nr != -1 && nr < min_rows)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "The number of rows is too small: %lld < %lld", (long long)nr,
                             (long long)min_rows);
    if (nc != -1 && nc < min_cols)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "The number of columns is too small: %lld < %lld", (long long)nc,
                             (long long)min_cols);
    if (nr == -1 && nc == -1)
        nr = nc = min_rows > min_cols ? min_rows : min_cols;
    else if (nr == -1)
        nr = min_rows;
    else if (nc == -1)
        nc = min_cols;
    if (nr != min_rows && nc != min_cols)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "The number of rows or columns is not consistent with the specified d_lower, "
                             "d_upper, and diagonal.");
    int32_t br = x->rank - (nd > 1 ? 2 : 1);
    if (br + 2 > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "more than %d dimensions", GN__MAX_DIMS);
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x->dims, (size_t)br * sizeof *dims);
    dims[br] = nr;
    dims[br + 1] = nc;
    int64_t batch = prod_dims(x->dims, 0, br);
    if (nr && nc && batch && (nr > INT64_MAX / nc || nr * nc > INT64_MAX / batch))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, br + 2, dims, &y));
    const uint8_t *in = x->data, *pad = c->in[4].data;
    uint8_t *out = y->data;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t m = 0; m < nr; m++)
            for (int64_t n = 0; n < nc; n++) {
                int64_t d = n - m;
                uint8_t *o = out + (size_t)((b * nr + m) * nc + n) * es;
                const uint8_t *src = pad;
                if (d >= lo && d <= hi) {
                    int64_t len, off;
                    diag_len_offset(d, max_len, nr, nc, ls, lb, &len, &off);
                    int64_t p = n - (d > 0 ? d : 0) + off;
                    if (p >= 0 && p < max_len) src = in + (size_t)((b * nd + (hi - d)) * max_len + p) * es;
                }
                memcpy(o, src, es);
            }
    return GN_OK;
}

gn_status gn__misc_k_matrix_diag_part_v3(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0];
    size_t es = gn__dtype_size(x->dtype);
    if (!es) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input of dtype %s", gn__dtype_name(x->dtype));
    if (x->rank < 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least 2-dim, received shape rank %d", x->rank);
    int64_t lo, hi;
    GN_TRY(diag_k(c, 1, &lo, &hi));
    GN_TRY(padding_scalar(c, 2, x->dtype));
    bool ls, lb;
    GN_TRY(diag_align(c, &ls, &lb));
    int64_t nr = x->dims[x->rank - 2], nc = x->dims[x->rank - 1];
    if (!((-nr < lo && lo < nc) || lo == 0))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "lower_diag_index is out of bound: %lld for a %lldx%lld matrix",
                             (long long)lo, (long long)nr, (long long)nc);
    if (!((-nr < hi && hi < nc) || hi == 0))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "upper_diag_index is out of bound: %lld for a %lldx%lld matrix",
                             (long long)hi, (long long)nr, (long long)nc);
    int64_t nd = hi - lo + 1;
    int64_t a = nr + (hi < 0 ? hi : 0), b2 = nc - (lo > 0 ? lo : 0);
    int64_t max_len = a < b2 ? a : b2;
    if (max_len < 0) max_len = 0;
    int32_t br = x->rank - 2;
    int64_t dims[GN__MAX_DIMS];
    memcpy(dims, x->dims, (size_t)br * sizeof *dims);
    int32_t orank = br;
    if (nd > 1) dims[orank++] = nd;
    dims[orank++] = max_len;
    int64_t batch = prod_dims(x->dims, 0, br);
    gn__tensor *y;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, orank, dims, &y));
    const uint8_t *in = x->data, *pad = c->in[2].data;
    uint8_t *out = y->data;
    for (int64_t bt = 0; bt < batch; bt++)
        for (int64_t j = 0; j < nd; j++) {
            int64_t d = hi - j, len, off;
            diag_len_offset(d, max_len, nr, nc, ls, lb, &len, &off);
            for (int64_t p = 0; p < max_len; p++) {
                int64_t q = p - off;
                const uint8_t *src = pad;
                if (q >= 0 && q < len) {
                    int64_t row = q + (d < 0 ? -d : 0), col = q + (d > 0 ? d : 0);
                    src = in + (size_t)((bt * nr + row) * nc + col) * es;
                }
                memcpy(out + (size_t)((bt * nd + j) * max_len + p) * es, src, es);
            }
        }
    return GN_OK;
}

/* ---- tensor summaries (Tensor::SummarizeValue) ------------------------------------------------ */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* TensorFlow's StrCat of a float: %.6g, or %.9g when that does not read back. */
static void fmt_float(char *o, size_t n, float v)
{
    if (isnan(v)) {
        snprintf(o, n, "%snan", signbit(v) ? "-" : "");
        return;
    }
    snprintf(o, n, "%.*g", FLT_DIG, (double)v);
    if (strtof(o, NULL) != v) snprintf(o, n, "%.*g", FLT_DIG + 3, (double)v);
}

static void fmt_double(char *o, size_t n, double v)
{
    if (isnan(v)) {
        snprintf(o, n, "%snan", signbit(v) ? "-" : "");
        return;
    }
    snprintf(o, n, "%.*g", DBL_DIG, v);
    if (strtod(o, NULL) != v) snprintf(o, n, "%.*g", DBL_DIG + 2, v);
}

/* One element (PrintOneElement); strings are C-escaped, and quoted in v2. */
static void put_elem(sbuf *b, const gn__tensor *t, int64_t i, bool v2)
{
    char o[64];
    const void *d = t->data;
    switch (t->dtype) {
    case DT_FLOAT: fmt_float(o, sizeof o, ((const float *)d)[i]); break;
    case DT_HALF: fmt_float(o, sizeof o, (float)((const gn__f16 *)d)[i]); break;
    case DT_DOUBLE: fmt_double(o, sizeof o, ((const double *)d)[i]); break;
    case DT_INT8: snprintf(o, sizeof o, "%d", ((const int8_t *)d)[i]); break;
    case DT_UINT8: snprintf(o, sizeof o, "%u", ((const uint8_t *)d)[i]); break;
    case DT_INT16: snprintf(o, sizeof o, "%d", ((const int16_t *)d)[i]); break;
    case DT_UINT16: snprintf(o, sizeof o, "%u", ((const uint16_t *)d)[i]); break;
    case DT_INT32: snprintf(o, sizeof o, "%d", ((const int32_t *)d)[i]); break;
    case DT_UINT32: snprintf(o, sizeof o, "%u", ((const uint32_t *)d)[i]); break;
    case DT_INT64: snprintf(o, sizeof o, "%lld", (long long)((const int64_t *)d)[i]); break;
    case DT_UINT64: snprintf(o, sizeof o, "%llu", (unsigned long long)((const uint64_t *)d)[i]); break;
    case DT_BOOL: snprintf(o, sizeof o, "%d", ((const uint8_t *)d)[i] ? 1 : 0); break;
    case DT_STRING: {
        const gn__tstring *s = &((const gn__tstring *)d)[i];
        if (v2) sb_put(b, "\"", 1);
        for (size_t k = 0; k < s->len; k++) {
            unsigned char ch = (unsigned char)s->ptr[k];
            switch (ch) {
            case '\n': sb_str(b, "\\n"); break;
            case '\r': sb_str(b, "\\r"); break;
            case '\t': sb_str(b, "\\t"); break;
            case '"': sb_str(b, "\\\""); break;
            case '\'': sb_str(b, "\\'"); break;
            case '\\': sb_str(b, "\\\\"); break;
            default:
                if (ch < 0x20 || ch == 0x7f) {
                    snprintf(o, sizeof o, "\\%03o", ch);
                    sb_str(b, o);
                } else {
                    sb_put(b, (const char *)&ch, 1);
                }
            }
        }
        if (v2) sb_put(b, "\"", 1);
        return;
    }
    default: snprintf(o, sizeof o, "?"); break;
    }
    sb_str(b, o);
}

static bool summarizable(int32_t dt) { return dt == DT_STRING || dt == DT_BOOL || (gn__dtype_size(dt) && seg_for(dt)); }

/* v1 (PrintOneDim): the first `limit` elements in nesting brackets. */
static void print_dim_v1(sbuf *b, const gn__tensor *t, int32_t dim, int64_t limit, int64_t *di)
{
    if (*di >= limit) return;
    int64_t count = t->dims[dim];
    if (dim == t->rank - 1) {
        for (int64_t i = 0; i < count; i++) {
            if (*di >= limit) {
                if (dim != 0) sb_str(b, "...");
                return;
            }
            if (i > 0) sb_str(b, " ");
            put_elem(b, t, (*di)++, false);
        }
        return;
    }
    for (int64_t i = 0; i < count; i++) {
        bool flag = false;
        if (*di < limit) {
            sb_str(b, "[");
            flag = true;
        }
        print_dim_v1(b, t, dim + 1, limit, di);
        if (*di < limit || flag) sb_str(b, "]");
    }
}

static void dim_spacing(sbuf *b, int32_t dim, int32_t nd)
{
    if (dim == nd - 1) {
        sb_str(b, " ");
        return;
    }
    for (int32_t j = 0; j < nd - dim - 1; j++) sb_str(b, "\n");
    for (int32_t j = 0; j <= dim; j++) sb_str(b, " ");
}

/* v2 (PrintOneDimV2): numpy-like, `ends` elements at each end of every dim. */
static void print_dim_v2(sbuf *b, const gn__tensor *t, int32_t dim, int64_t ends, int64_t di)
{
    if (b->oom) return;
    if (dim == t->rank) {
        put_elem(b, t, di, true);
        return;
    }
    sb_str(b, "[");
    int64_t count = t->dims[dim], start_end = ends > count - ends ? ends : count - ends;
    int64_t per = prod_dims(t->dims, dim + 1, t->rank);
    for (int64_t i = 0; i < ends && i < count; i++) {
        if (i > 0) dim_spacing(b, dim, t->rank);
        print_dim_v2(b, t, dim + 1, ends, di + per * i);
    }
    if (count > 2 * ends) {
        dim_spacing(b, dim, t->rank);
        sb_str(b, "...");
    }
    for (int64_t i = start_end; i < count; i++) {
        dim_spacing(b, dim, t->rank);
        print_dim_v2(b, t, dim + 1, ends, di + per * i);
    }
    sb_str(b, "]");
}

static void summarize(sbuf *b, const gn__tensor *t, int64_t max_entries, bool v2)
{
    int64_t n = gn__tensor_numel(t);
    if (max_entries < 0) max_entries = n;
    int64_t limit = max_entries < n ? max_entries : n;
    if (t->rank == 0) {
        for (int64_t i = 0; i < limit; i++) {
            if (i) sb_str(b, " ");
            put_elem(b, t, i, v2);
        }
        if (n > limit) sb_str(b, "...");
        return;
    }
    if (v2) {
        print_dim_v2(b, t, 0, limit, 0);
    } else {
        int64_t di = 0;
        print_dim_v1(b, t, 0, limit, &di);
        if (n > limit) sb_str(b, "...");
    }
}

/* ---- Assert(condition, data...) --------------------------------------------------------------- */
/* A false condition fails the run with GN_ERR_ARG (TensorFlow's
 * InvalidArgument): "assertion failed: [d0] [d1]", each data tensor
 * summarized to at most `summarize` entries as TensorFlow's Assert kernel
 * writes them. A true condition produces nothing. */
gn_status gn__misc_k_assert(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *cond = &c->in[0];
    char b1[200];
    if (cond->dtype != DT_BOOL || cond->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "condition should be a bool scalar, got %s %s",
                             gn__dtype_name(cond->dtype), dims_str(cond->rank, cond->dims, b1, sizeof b1));
    if (*(const uint8_t *)cond->data) return GN_OK;
    int64_t sz = 3;
    (void)gn__attr_get_int(c->g, c->node, "summarize", &sz);
    sbuf b = {0};
    sb_str(&b, "assertion failed: ");
    for (uint32_t i = 1; i < c->n_in; i++) {
        sb_str(&b, "[");
        if (summarizable(c->in[i].dtype))
            summarize(&b, &c->in[i], sz, false);
        else
            sb_str(&b, "?");
        sb_str(&b, i + 1 < c->n_in ? "] " : "]");
    }
    gn_status st = b.oom ? gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory") : gn__kctx_fail(c, GN_ERR_ARG, "%s", b.p);
    free(b.p);
    return st;
}

/* ---- Print(input, data...) -> input; PrintV2(input) ------------------------------------------ */
/* The library never writes to stdout or stderr: Print is the identity on
 * its first input (the data it would log is ignored) and PrintV2, which has
 * no outputs, only checks that its input is a string scalar. Graphs keep
 * their meaning; only the side effect of logging is dropped. */
gn_status gn__misc_k_print(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    return gn__kctx_forward(c, 0, 0);
}

gn_status gn__misc_k_print_v2(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_STRING || x->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be a string scalar, got %s of rank %d",
                             gn__dtype_name(x->dtype), x->rank);
    return GN_OK;
}

/* ---- StringFormat(inputs...) -> string scalar ------------------------------------------------- */
gn_status gn__misc_k_string_format(gn__kctx *c)
{
    const char *tpl = "%s", *ph = "%s";
    size_t tn = 2, pn = 2;
    (void)gn__attr_get_string(c->g, c->node, "template", &tpl, &tn);
    (void)gn__attr_get_string(c->g, c->node, "placeholder", &ph, &pn);
    int64_t sz = 3;
    (void)gn__attr_get_int(c->g, c->node, "summarize", &sz);
    if (!pn) return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'placeholder' must not be empty");
    uint32_t np = 0;
    for (size_t i = 0; i + pn <= tn;) {
        if (!memcmp(tpl + i, ph, pn)) {
            np++;
            i += pn;
        } else {
            i++;
        }
    }
    if (np != c->n_in)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num placeholders in template and num inputs must match: %u vs. %u", np,
                             c->n_in);
    for (uint32_t k = 0; k < c->n_in; k++)
        if (!summarizable(c->in[k].dtype))
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input %u of dtype %s cannot be formatted", k,
                                 gn__dtype_name(c->in[k].dtype));
    sbuf b = {0};
    sb_put(&b, "", 0);
    uint32_t k = 0;
    size_t start = 0;
    for (size_t i = 0; i + pn <= tn;) {
        if (!memcmp(tpl + i, ph, pn)) {
            sb_put(&b, tpl + start, i - start);
            summarize(&b, &c->in[k++], sz, true);
            i += pn;
            start = i;
        } else {
            i++;
        }
    }
    sb_put(&b, tpl + start, tn - start);
    gn_status st = GN_OK;
    if (b.oom) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn__tensor *y;
    char *store;
    if (st == GN_OK) st = gn__kctx_output_strings(c, 0, 0, NULL, b.n, &y, &store);
    if (st == GN_OK) {
        if (b.n) memcpy(store, b.p, b.n);
        ((gn__tstring *)y->data)[0] = (gn__tstring){store, b.n};
    }
    free(b.p);
    return st;
}
