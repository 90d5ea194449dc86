/* SparseReshape and SparseFillEmptyRows (below), and SparseSegmentSum,
 * SparseSegmentMean, SparseSegmentSqrtN and their
 * WithNumSegments forms (tensorflow/core/kernels/segment_reduction_ops_impl.h,
 * SparseSegmentReductionOpBase): what tf.nn.embedding_lookup_sparse and the
 * feature columns' embedding_column compute from a sparse feature.
 *
 *   output[s] = reduce over k with segment_ids[k] == s of data[indices[k]]
 *
 * segment_ids sorted; the output has segment_ids' last + 1 rows (num_segments
 * in the WithNumSegments forms), a row no id names is zero. Mean divides by
 * the row's count, SqrtN by its square root. float and double, summed in the
 * order of k. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/kernel.h"
#include "ops/op_fns.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

enum { SS_SUM, SS_MEAN, SS_SQRTN };

static int64_t at(const gn__tensor *t, int64_t i)
{
    return t->dtype == DT_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

static gn_status sparse_segment(gn__kctx *c, int kind, bool with_num)
{
    uint32_t need = with_num ? 4 : 3;
    if (c->n_in < need) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", need, c->n_in);
    const gn__tensor *data = &c->in[0], *idx = &c->in[1], *seg = &c->in[2];
    if (data->dtype != DT_FLOAT && data->dtype != DT_DOUBLE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "data of dtype %s (float and double are supported)",
                             gn__dtype_name(data->dtype));
    for (int i = 1; i < (int)need; i++)
        if (c->in[i].dtype != DT_INT32 && c->in[i].dtype != DT_INT64)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %d must be int32 or int64, got %s", i,
                                 gn__dtype_name(c->in[i].dtype));
    if (idx->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices should be a vector.");
    if (seg->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids should be a vector.");
    if (data->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "data must have rank 1 or more");
    int64_t k = idx->dims[0];
    if (seg->dims[0] != k)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids and indices should have same size.");
    int64_t rows;
    if (with_num) {
        if (gn__tensor_numel(&c->in[3]) != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "num_segments should be a scalar");
        rows = at(&c->in[3], 0);
        if (rows < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "num_segments must be >= 0, got %lld", (long long)rows);
    } else {
        rows = k ? at(seg, k - 1) + 1 : 0;
    }
    int64_t n = data->dims[0], inner = 1;
    for (int32_t d = 1; d < data->rank; d++) inner *= data->dims[d];
    for (int64_t j = 1; j < k; j++)
        if (at(seg, j) < at(seg, j - 1)) return gn__kctx_fail(c, GN_ERR_GRAPH, "segment ids are not increasing");
    for (int64_t j = 0; j < k; j++) {
        int64_t s = at(seg, j), i = at(idx, j);
        if (s < 0 || s >= rows)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Segment id %lld out of range [0, %lld), possibly because "
                                 "'segment_ids' input is not sorted.", (long long)s, (long long)rows);
        if (i < 0 || i >= n)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Bad: indices[%lld] == %lld out of range [0, %lld)", (long long)j,
                                 (long long)i, (long long)n);
    }
    int64_t dims[GN__MAX_DIMS];
    dims[0] = rows;
    for (int32_t d = 1; d < data->rank; d++) dims[d] = data->dims[d];
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, data->dtype, data->rank, dims, &o));
    bool dbl = data->dtype == DT_DOUBLE;
    size_t esz = dbl ? 8 : 4;
    memset(o->data, 0, (size_t)(rows * inner) * esz);
    for (int64_t j = 0; j < k;) {
        int64_t s = at(seg, j), e = j;
        while (e < k && at(seg, e) == s) e++;
        if (dbl) {
            double *y = (double *)o->data + s * inner;
            const double *x = data->data;
            for (int64_t q = j; q < e; q++)
                for (int64_t t = 0; t < inner; t++) y[t] += x[at(idx, q) * inner + t];
            double div = kind == SS_MEAN ? (double)(e - j) : kind == SS_SQRTN ? sqrt((double)(e - j)) : 1.0;
            if (kind != SS_SUM)
                for (int64_t t = 0; t < inner; t++) y[t] /= div;
        } else {
            float *y = (float *)o->data + s * inner;
            const float *x = data->data;
            for (int64_t q = j; q < e; q++)
                for (int64_t t = 0; t < inner; t++) y[t] += x[at(idx, q) * inner + t];
            float div = kind == SS_MEAN ? (float)(e - j) : kind == SS_SQRTN ? sqrtf((float)(e - j)) : 1.0f;
            if (kind != SS_SUM)
                for (int64_t t = 0; t < inner; t++) y[t] /= div;
        }
        j = e;
    }
    return GN_OK;
}

gn_status gn__ss_k_sum(gn__kctx *c) { return sparse_segment(c, SS_SUM, false); }
gn_status gn__ss_k_mean(gn__kctx *c) { return sparse_segment(c, SS_MEAN, false); }
gn_status gn__ss_k_sqrtn(gn__kctx *c) { return sparse_segment(c, SS_SQRTN, false); }
gn_status gn__ss_k_sum_n(gn__kctx *c) { return sparse_segment(c, SS_SUM, true); }
gn_status gn__ss_k_mean_n(gn__kctx *c) { return sparse_segment(c, SS_MEAN, true); }
gn_status gn__ss_k_sqrtn_n(gn__kctx *c) { return sparse_segment(c, SS_SQRTN, true); }

/* ---- SparseReshape, SparseFillEmptyRows (sparse_reshape_op.cc, sparse_fill_empty_rows_op.cc) ---- */
/* SparseReshape: each index linearized row-major in input_shape and laid out
 * again in new_shape (one -1 inferred from the element count). */
gn_status gn__ss_k_sparse_reshape(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    const gn__tensor *ix = &c->in[0], *ish = &c->in[1], *nsh = &c->in[2];
    for (int i = 0; i < 3; i++)
        if (c->in[i].dtype != DT_INT64) return gn__kctx_fail(c, GN_ERR_GRAPH, "input %d must be int64", i);
    if (ix->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input indices should be a matrix but received shape of rank %d", ix->rank);
    if (ish->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input shape should be a vector");
    if (nsh->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Target shape should be a vector");
    int64_t n = ix->dims[0], rin = ix->dims[1], rout = nsh->dims[0];
    if (ish->dims[0] != rin)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input tensor rank must match input shape length: %lld vs %lld",
                             (long long)rin, (long long)ish->dims[0]);
    if (rin > GN__MAX_DIMS || rout > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank over %d", GN__MAX_DIMS);
    const int64_t *in_shape = ish->data, *want = nsh->data;
    int64_t dense = 1, known = 1, unknown = -1, out_shape[GN__MAX_DIMS];
    for (int64_t d = 0; d < rin; d++)
        if (in_shape[d] < 0 || __builtin_mul_overflow(dense, in_shape[d], &dense))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input_shape dimension %lld is negative or the shape overflows",
                                 (long long)d);
    for (int64_t d = 0; d < rout; d++) {
        if (want[d] == -1) {
            if (unknown >= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "only one output dimension may be -1, not both %lld and %lld", (long long)unknown, (long long)d);
            unknown = d;
        } else if (want[d] < 0) {
            return gn__kctx_fail(c, GN_ERR_GRAPH, "size %lld must be non-negative, not %lld", (long long)d, (long long)want[d]);
        } else if (__builtin_mul_overflow(known, want[d], &known)) {
            return gn__kctx_fail(c, GN_ERR_GRAPH, "the requested shape overflows");
        }
        out_shape[d] = want[d];
    }
    if (unknown >= 0) {
        if (known == 0 || dense % known)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input to reshape is a SparseTensor with %lld dense values, but the requested shape requires a multiple of %lld",
                                 (long long)dense, (long long)known);
        out_shape[unknown] = dense / known;
    } else if (known != dense) {
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input to reshape is a tensor with %lld dense values, but the requested shape has %lld",
                             (long long)dense, (long long)known);
    }
    int64_t odims[2] = {n, rout}, sdims[1] = {rout};
    gn__tensor *oi, *os;
    GN_TRY(gn__kctx_output(c, 0, DT_INT64, 2, odims, &oi));
    GN_TRY(gn__kctx_output(c, 1, DT_INT64, 1, sdims, &os));
    memcpy(os->data, out_shape, (size_t)rout * sizeof(int64_t));
    const int64_t *x = ix->data;
    int64_t *y = oi->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t lin = 0;
        for (int64_t d = 0; d < rin; d++) {
            int64_t k = x[i * rin + d];
            if (k < 0 || k >= in_shape[d])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld of entry %lld is outside input_shape", (long long)k,
                                     (long long)i);
            lin = lin * in_shape[d] + k;   /* below dense: no overflow */
        }
        for (int64_t d = rout - 1; d >= 0; d--) {
            int64_t s = out_shape[d];
            y[i * rout + d] = s ? lin % s : 0;
            lin = s ? lin / s : 0;
        }
    }
    return GN_OK;
}

/* SparseFillEmptyRows: every row of dense_shape[0] with no entry gets one at
 * column 0 holding default_value; entries keep their order within a row.
 * Outputs the new indices and values, which rows were empty, and where each
 * input entry went. */
gn_status gn__ss_k_sparse_fill_empty_rows(gn__kctx *c)
{
    if (c->n_in < 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 4 inputs, got %u", c->n_in);
    const gn__tensor *ix = &c->in[0], *v = &c->in[1], *sh = &c->in[2], *dv = &c->in[3];
    if (ix->dtype != DT_INT64 || sh->dtype != DT_INT64) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices and dense_shape must be int64");
    if (sh->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "dense_shape must be a vector");
    if (ix->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be a matrix");
    if (v->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "values must be a vector");
    if (gn__tensor_numel(dv) != 1 || dv->dtype != v->dtype) return gn__kctx_fail(c, GN_ERR_GRAPH, "default_value must be a scalar of the values' type");
    int64_t n = ix->dims[0], rank = ix->dims[1];
    if (v->dims[0] != n) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices and values must have the same number of entries");
    if (sh->dims[0] != rank || rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "dense_shape must have one entry per index column");
    const int64_t *x = ix->data, rows = ((const int64_t *)sh->data)[0];
    if (rows < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dense shape cannot be negative");
    int64_t *count = calloc((size_t)(rows > 0 ? rows : 1), sizeof *count);
    if (!count) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        int64_t r = x[i * rank];
        if (r < 0 || r >= rows) {
            free(count);
            return gn__kctx_fail(c, GN_ERR_GRAPH, "indices(%lld, 0) is invalid: %lld >= %lld", (long long)i, (long long)r, (long long)rows);
        }
        count[r]++;
    }
    int64_t empty = 0;
    for (int64_t r = 0; r < rows; r++) empty += count[r] == 0;
    int64_t total = n + empty, idims[2] = {total, rank}, vdims[1] = {total}, edims[1] = {rows}, rdims[1] = {n};
    bool strings = v->dtype == TENSORFLOW__DATA_TYPE__DT_STRING;
    size_t esz = strings ? sizeof(gn__tstring) : gn__dtype_size(v->dtype);
    gn__tensor *oi, *ov, *oe, *orv;
    char *storage = NULL;
    gn_status st = gn__kctx_output(c, 0, DT_INT64, 2, idims, &oi);
    if (st == GN_OK && strings) {
        size_t bytes = ((const gn__tstring *)dv->data)->len * (size_t)empty;
        for (int64_t i = 0; i < n; i++) bytes += ((const gn__tstring *)v->data)[i].len;
        st = gn__kctx_output_strings(c, 1, 1, vdims, bytes, &ov, &storage);
    } else if (st == GN_OK) {
        st = gn__kctx_output(c, 1, v->dtype, 1, vdims, &ov);
    }
    if (st == GN_OK) st = gn__kctx_output(c, 2, TENSORFLOW__DATA_TYPE__DT_BOOL, 1, edims, &oe);
    if (st == GN_OK) st = gn__kctx_output(c, 3, DT_INT64, 1, rdims, &orv);
    int64_t *at = st == GN_OK ? malloc((size_t)(rows > 0 ? rows : 1) * sizeof *at) : NULL;
    if (st == GN_OK && !at) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (st != GN_OK) {
        free(count);
        return st;
    }
    /* each row's first output position: its entries, or for an empty row its default */
    int64_t pos = 0;
    for (int64_t r = 0; r < rows; r++) {
        at[r] = pos;
        pos += count[r] ? count[r] : 1;
        ((uint8_t *)oe->data)[r] = count[r] == 0;
    }
    int64_t *oidx = oi->data, *rev = orv->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = x[i * rank], p = at[r]++;
        memcpy(oidx + p * rank, x + i * rank, (size_t)rank * sizeof *x);
        if (!strings) memcpy((char *)ov->data + (size_t)p * esz, (const char *)v->data + (size_t)i * esz, esz);
        else ((gn__tstring *)ov->data)[p] = ((const gn__tstring *)v->data)[i];   /* copied below */
        rev[i] = p;
    }
    for (int64_t r = 0; r < rows; r++) {
        if (count[r]) continue;
        int64_t p = at[r];
        oidx[p * rank] = r;
        for (int64_t d = 1; d < rank; d++) oidx[p * rank + d] = 0;
        if (!strings) memcpy((char *)ov->data + (size_t)p * esz, dv->data, esz);
        else ((gn__tstring *)ov->data)[p] = *(const gn__tstring *)dv->data;
    }
    if (strings) {   /* the output owns its bytes: each string copied into its storage, in order */
        gn__tstring *o = ov->data;
        for (int64_t p = 0; p < total; p++) {
            if (o[p].len) memcpy(storage, o[p].ptr, o[p].len);
            o[p].ptr = storage;
            storage += o[p].len;
        }
    }
    free(at);
    free(count);
    return GN_OK;
}

/* ---- SparseReduceSum (sparse_reduce_op.cc) ------------------------------------------------------ */
/* The dense sum of a SparseTensor over reduction_axes (a scalar or a vector,
 * negative counting from the end; an empty one: every axis), the reduced axes
 * dropped or, with keep_dims, kept as 1; entries that share an index add up.
 * float, double, int32, int64. */
gn_status gn__ss_k_sparse_reduce_sum(gn__kctx *c)
{
    if (c->n_in < 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 4 inputs, got %u", c->n_in);
    const gn__tensor *ix = &c->in[0], *v = &c->in[1], *sh = &c->in[2], *ax = &c->in[3];
    if (ix->dtype != DT_INT64 || sh->dtype != DT_INT64 || ix->rank != 2 || sh->rank != 1 || v->rank != 1 ||
        v->dims[0] != ix->dims[0] || sh->dims[0] != ix->dims[1])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input_indices [N, R], input_values [N] and input_shape [R] expected");
    if (v->dtype != DT_FLOAT && v->dtype != DT_DOUBLE && v->dtype != DT_INT32 && v->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "values of dtype %s", gn__dtype_name(v->dtype));
    if (ax->dtype != DT_INT32 || ax->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "reduction_axes must be an int32 scalar or vector");
    int64_t n = ix->dims[0], r = ix->dims[1];
    if (r > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %lld", (long long)r);
    const int64_t *shape = sh->data, *x = ix->data;
    bool reduce[GN__MAX_DIMS] = {false};
    int64_t na = gn__tensor_numel(ax);
    for (int64_t i = 0; i < na; i++) {
        int64_t a = ((const int32_t *)ax->data)[i];
        if (a < -r || a >= r)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Invalid reduction dimension %lld, for input with %lld dimensions.",
                                 (long long)a, (long long)r);
        reduce[a < 0 ? a + r : a] = true;
    }
    if (na == 0)   /* no axis given: every one */
        for (int64_t d = 0; d < r; d++) reduce[d] = true;
    bool keep = false;
    (void)gn__attr_get_bool(c->g, c->node, "keep_dims", &keep);
    int64_t dims[GN__MAX_DIMS];
    int32_t rank = 0;
    for (int64_t d = 0; d < r; d++) {
        if (shape[d] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "input_shape has a negative dimension");
        if (!reduce[d]) dims[rank++] = shape[d];
        else if (keep) dims[rank++] = 1;
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, v->dtype, rank, dims, &o));
    memset(o->data, 0, o->nbytes);
    for (int64_t i = 0; i < n; i++) {
        int64_t at = 0;
        for (int64_t d = 0; d < r; d++) {
            int64_t k = x[i * r + d];
            if (k < 0 || k >= shape[d])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld of entry %lld is out of bounds", (long long)k,
                                     (long long)i);
            if (!reduce[d]) at = at * shape[d] + k;
        }
        switch (v->dtype) {
        case DT_FLOAT: ((float *)o->data)[at] += ((const float *)v->data)[i]; break;
        case DT_DOUBLE: ((double *)o->data)[at] += ((const double *)v->data)[i]; break;
        case DT_INT32: {   /* wrapping, as TensorFlow's int32 sums do */
            int32_t *y = (int32_t *)o->data + at;
            *y = (int32_t)((uint32_t)*y + (uint32_t)((const int32_t *)v->data)[i]);
        } break;
        default: {
            int64_t *y = (int64_t *)o->data + at;
            *y = (int64_t)((uint64_t)*y + (uint64_t)((const int64_t *)v->data)[i]);
        } break;
        }
    }
    return GN_OK;
}
