/* SparseSegmentSum, SparseSegmentMean, SparseSegmentSqrtN and their
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
