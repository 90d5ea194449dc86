/* Feature-transform ops of tf.Transform / feature-column graphs:
 * SparseToDense, StringToHashBucketFast, BoostedTreesBucketize, LowerBound,
 * UpperBound. After
 * tensorflow/core/kernels/{sparse_to_dense_op, string_to_hash_bucket_op}.cc
 * and boosted_trees/quantile_ops.cc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "common/farmhash.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static int64_t index_at(const gn__tensor *t, int64_t i)
{
    return t->dtype == DT_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

static void index_str(const gn__tensor *ix, int64_t row, int64_t nd, char *buf, size_t n)
{
    size_t o = 0;
    for (int64_t d = 0; d < nd && o + 24 < n; d++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)index_at(ix, row * nd + d));
    if (!nd && n) buf[0] = 0;
}

/* ---- SparseToDense(sparse_indices, output_shape, sparse_values, default_value) ---------------- */
gn_status gn__feature_k_sparse_to_dense(gn__kctx *c)
{
    GN_TRY(need(c, 4));
    const gn__tensor *ix = &c->in[0], *shp = &c->in[1], *vals = &c->in[2], *dv = &c->in[3];
    if (ix->dtype != DT_INT32 && ix->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sparse_indices must be int32 or int64, got %s",
                             gn__dtype_name(ix->dtype));
    if (ix->rank > 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sparse_indices should be a scalar, vector, or matrix, got rank %d",
                             ix->rank);
    int64_t num_elems = ix->rank > 0 ? ix->dims[0] : 1;
    int64_t num_dims = ix->rank > 1 ? ix->dims[1] : 1;
    if (shp->rank != 1 || shp->dtype != ix->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output_shape must be rank 1 of the indices' dtype");
    if (shp->dims[0] != num_dims)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output_shape has incorrect number of elements: %lld should be: %lld",
                             (long long)shp->dims[0], (long long)num_dims);
    if (num_dims > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "more than %d dimensions", GN__MAX_DIMS);
    int64_t nv = gn__tensor_numel(vals);
    if (!(vals->rank == 0 || (vals->rank == 1 && nv == num_elems)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sparse_values has incorrect shape: %lld values for %lld indices",
                             (long long)nv, (long long)num_elems);
    if (dv->rank != 0 || gn__tensor_numel(dv) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "default_value should be a scalar");
    if (vals->dtype != dv->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sparse_values is %s but default_value is %s",
                             gn__dtype_name(vals->dtype), gn__dtype_name(dv->dtype));
    int64_t dims[GN__MAX_DIMS];
    int64_t total = 1;
    for (int64_t d = 0; d < num_dims; d++) {
        dims[d] = index_at(shp, d);
        if (dims[d] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "output_shape[%lld] is negative: %lld", (long long)d,
                                 (long long)dims[d]);
        if (dims[d] && total > INT64_MAX / dims[d])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "output_shape is too large");
        total *= dims[d];
    }
    bool validate = true;
    (void)gn__attr_get_bool(c->g, c->node, "validate_indices", &validate);
    /* flat offsets, checked */
    int64_t *off = malloc((size_t)(num_elems ? num_elems : 1) * sizeof *off);
    if (!off) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn_status st = GN_OK;
    for (int64_t i = 0; i < num_elems && st == GN_OK; i++) {
        int64_t o = 0;
        bool in = true;
        for (int64_t d = 0; d < num_dims; d++) {
            int64_t x = index_at(ix, i * num_dims + d);
            if (x < 0 || x >= dims[d]) in = false;
            o = o * dims[d] + x;
        }
        char b1[200], b2[200];
        if (!in) {
            index_str(ix, i, num_dims, b1, sizeof b1);
            index_str(shp, 0, num_dims, b2, sizeof b2);
            st = gn__kctx_fail(c, GN_ERR_GRAPH, "indices[%lld] = [%s] is out of bounds: need 0 <= index < [%s]",
                               (long long)i, b1, b2);
        } else if (validate && i > 0 && o <= off[i - 1]) {
            index_str(ix, i, num_dims, b1, sizeof b1);
            st = gn__kctx_fail(c, GN_ERR_GRAPH, "indices[%lld] = [%s] is %s", (long long)i, b1,
                               o == off[i - 1] ? "repeated" : "out of order");
        }
        off[i] = o;
    }
    gn__tensor *out = NULL;
    if (st == GN_OK && vals->dtype == DT_STRING) {
        /* strings: the default everywhere, then the values */
        const gn__tstring *sv = vals->data, *sd = dv->data;
        int64_t *src = malloc((size_t)(total ? total : 1) * sizeof *src);   /* -1 default, else value index */
        if (!src) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        size_t bytes = 0;
        if (st == GN_OK) {
            for (int64_t i = 0; i < total; i++) src[i] = -1;
            for (int64_t i = 0; i < num_elems; i++) src[off[i]] = vals->rank ? i : 0;
            for (int64_t i = 0; i < total; i++) bytes += src[i] < 0 ? sd->len : sv[src[i]].len;
        }
        char *store = NULL;
        if (st == GN_OK) st = gn__kctx_output_strings(c, 0, (int32_t)num_dims, dims, bytes, &out, &store);
        if (st == GN_OK) {
            gn__tstring *os = out->data;
            for (int64_t i = 0; i < total; i++) {
                const gn__tstring *s = src[i] < 0 ? sd : &sv[src[i]];
                if (s->len) memcpy(store, s->ptr, s->len);
                os[i] = (gn__tstring){store, s->len};
                store += s->len;
            }
        }
        free(src);
    } else if (st == GN_OK) {
        size_t es = gn__dtype_size(vals->dtype);
        if (!es) st = gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "values of dtype %s", gn__dtype_name(vals->dtype));
        if (st == GN_OK) st = gn__kctx_output(c, 0, vals->dtype, (int32_t)num_dims, dims, &out);
        if (st == GN_OK) {
            uint8_t *o = out->data;
            for (int64_t i = 0; i < total; i++) memcpy(o + (size_t)i * es, dv->data, es);
            for (int64_t i = 0; i < num_elems; i++)
                memcpy(o + (size_t)off[i] * es, (const uint8_t *)vals->data + (size_t)(vals->rank ? i : 0) * es, es);
        }
    }
    free(off);
    return st;
}

/* ---- StringToHashBucketFast ------------------------------------------------------------------- */
gn_status gn__feature_k_string_to_hash_bucket_fast(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *in = &c->in[0];
    if (in->dtype != DT_STRING)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be string, got %s", gn__dtype_name(in->dtype));
    int64_t nb = 0;
    if (!gn__attr_get_int(c->g, c->node, "num_buckets", &nb) || nb < 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'num_buckets' must be >= 1");
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_INT64, in->rank, in->dims, &o));
    const gn__tstring *s = in->data;
    int64_t *y = o->data;
    for (int64_t i = 0, n = gn__tensor_numel(in); i < n; i++)
        y[i] = (int64_t)(gn__fingerprint64(s[i].ptr, s[i].len) % (uint64_t)nb);
    return GN_OK;
}

/* ---- BoostedTreesBucketize(float_values x N, bucket_boundaries x N) -> buckets x N --------------- */
gn_status gn__feature_k_boosted_trees_bucketize(gn__kctx *c)
{
    int64_t nf = 0;
    if (!gn__attr_get_int(c->g, c->node, "num_features", &nf) || nf < 0 || 2 * nf != (int64_t)c->n_in ||
        nf != (int64_t)c->n_out)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'num_features' (%lld) does not match %u inputs / %u outputs",
                             (long long)nf, c->n_in, c->n_out);
    for (int64_t f = 0; f < nf; f++) {
        const gn__tensor *v = &c->in[f], *b = &c->in[nf + f];
        if (v->dtype != DT_FLOAT || b->dtype != DT_FLOAT)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "feature %lld: values and boundaries must be float", (long long)f);
        if (b->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Buckets should be flat vectors.");
        if (v->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "feature %lld: values must have a first dimension",
                                              (long long)f);
        int64_t n = v->dims[0], nb = b->dims[0];
        gn__tensor *o;
        GN_TRY(gn__kctx_output(c, (uint32_t)f, DT_INT32, 1, &n, &o));
        const float *x = v->data, *bd = b->data;
        int32_t *y = o->data;
        for (int64_t i = 0; i < n; i++) {
            if (nb == 0) {
                y[i] = 0;
                continue;
            }
            /* std::lower_bound, stepped back at the end */
            int64_t lo = 0, hi = nb;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (bd[mid] < x[i]) lo = mid + 1;
                else hi = mid;
            }
            if (lo == nb) lo--;
            y[i] = (int32_t)lo;
        }
    }
    return GN_OK;
}

/* ---- LowerBound / UpperBound(sorted_inputs [B, N], values [B, M]) -> [B, M] of out_type -------
 * Per row b, the std::lower_bound / std::upper_bound position of each value
 * in sorted_inputs[b] (tensorflow/core/kernels/searchsorted_op.cc). */
#define SEARCH_ROW(T)                                                                      \
    do {                                                                                   \
        const T *sv = (const T *)srt->data + b * n, *vv = (const T *)val->data + b * m;   \
        for (int64_t j = 0; j < m; j++) {                                                  \
            int64_t lo = 0, hi = n;                                                        \
            while (lo < hi) {                                                              \
                int64_t mid = lo + (hi - lo) / 2;                                          \
                if (upper ? !(vv[j] < sv[mid]) : sv[mid] < vv[j]) lo = mid + 1;            \
                else hi = mid;                                                             \
            }                                                                              \
            pos[b * m + j] = lo;                                                           \
        }                                                                                  \
    } while (0)

static gn_status k_search_sorted(gn__kctx *c, bool upper)
{
    GN_TRY(need(c, 2));
    const gn__tensor *srt = &c->in[0], *val = &c->in[1];
    if (srt->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input sorted_inputs should be a 2-D tensor");
    if (val->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input values should be a 2-D tensor");
    if (srt->dims[0] != val->dims[0])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Leading dim_size of both tensors must match.");
    if (srt->dtype != val->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sorted_inputs is %s but values is %s", gn__dtype_name(srt->dtype),
                             gn__dtype_name(val->dtype));
    int ot = DT_INT32;
    (void)gn__attr_get_type(c->g, c->node, "out_type", &ot);
    if (ot != DT_INT32 && ot != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "out_type must be int32 or int64, got %s", gn__dtype_name(ot));
    int64_t nb = srt->dims[0], n = srt->dims[1], m = val->dims[1];
    if (ot == DT_INT32 && n >= INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "trailing dim_size must less than INT_MAX for int32 output type, was %lld",
                             (long long)n);
    int64_t *pos = malloc((size_t)(nb * m > 0 ? nb * m : 1) * sizeof *pos);
    if (!pos) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < nb; b++) {
        switch (srt->dtype) {
        case TENSORFLOW__DATA_TYPE__DT_FLOAT: SEARCH_ROW(float); break;
        case TENSORFLOW__DATA_TYPE__DT_DOUBLE: SEARCH_ROW(double); break;
        case DT_INT32: SEARCH_ROW(int32_t); break;
        case DT_INT64: SEARCH_ROW(int64_t); break;
        default:
            free(pos);
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "no kernel for T=%s", gn__dtype_name(srt->dtype));
        }
    }
    gn__tensor *o;
    int64_t od[2] = {nb, m};
    gn_status st = gn__kctx_output(c, 0, ot, 2, od, &o);
    if (st == GN_OK)
        for (int64_t i = 0; i < nb * m; i++) {
            if (ot == DT_INT32) ((int32_t *)o->data)[i] = (int32_t)pos[i];
            else ((int64_t *)o->data)[i] = pos[i];
        }
    free(pos);
    return st;
}
#undef SEARCH_ROW

gn_status gn__feature_k_lower_bound(gn__kctx *c) { return k_search_sorted(c, false); }
gn_status gn__feature_k_upper_bound(gn__kctx *c) { return k_search_sorted(c, true); }
