/* RaggedTensorToTensor (tensorflow/core/kernels/ragged_tensor_to_tensor_op.cc):
 * a ragged tensor (flat values and one row partition per ragged dimension)
 * written into a dense tensor padded with default_value, as
 * RaggedTensor.to_tensor does (Keras' TextVectorization pads its token ids
 * so).
 *
 * Inputs: shape (the output's; a scalar or -1 entries: the natural size,
 * the longest row, in that dimension), values [N, inner...], default_value
 * (broadcast to the inner shape), then the row partitions, typed by the
 * row_partition_types attr: "ROW_SPLITS" for every ragged dimension, or
 * "FIRST_DIM_SIZE" (the number of rows) followed by one "VALUE_ROWIDS" per
 * ragged dimension. A row longer than the output's dimension is cut, as in
 * TensorFlow; a shorter one padded. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/kernel.h"
#include "ops/op_fns.h"

#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define RT_MAX_RANK 16

static int64_t int_at(const gn__tensor *t, int64_t i)
{
    return t->dtype == DT_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

static bool int_tensor(const gn__tensor *t) { return t->dtype == DT_INT32 || t->dtype == DT_INT64; }

gn_status gn__rag_k_ragged_tensor_to_tensor(gn__kctx *c)
{
    if (c->n_in < 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects at least 4 inputs, got %u", c->n_in);
    const gn__tensor *shape = &c->in[0], *values = &c->in[1], *defv = &c->in[2];
    const Tensorflow__AttrValue *types = gn__node_attr(c->g, c->node, "row_partition_types");
    uint32_t np = c->n_in - 3;
    if (!types || !types->list || types->list->n_s != np)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "row_partition_types must name each of the %u row partitions", np);
    bool first_dim = types->list->s[0].len == 14 && !memcmp(types->list->s[0].data, "FIRST_DIM_SIZE", 14);
    const char *want = first_dim ? "VALUE_ROWIDS" : "ROW_SPLITS";
    for (uint32_t k = first_dim ? 1 : 0; k < np; k++)
        if (types->list->s[k].len != strlen(want) || memcmp(types->list->s[k].data, want, strlen(want)))
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                                 "row partition %u is '%.*s': after '%s' every partition must be %s", k,
                                 (int)types->list->s[k].len, (const char *)types->list->s[k].data,
                                 first_dim ? "FIRST_DIM_SIZE" : "ROW_SPLITS", want);
    for (uint32_t k = 0; k < np; k++)
        if (!int_tensor(&c->in[3 + k]))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "row partition %u must be int32 or int64", k);
    int32_t ragged = (int32_t)(first_dim ? np - 1 : np);   /* ragged dimensions */
    if (ragged < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "no ragged dimension");
    if (values->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "values must have rank 1 or more");
    int32_t rank = 1 + ragged + values->rank - 1;
    if (rank > RT_MAX_RANK) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank %d is over %d", rank, RT_MAX_RANK);

    /* the rows of each level: level 0 the output's rows; level k's elements
     * are level k-1's children; the last level's elements are values' rows */
    int64_t nrows;
    if (first_dim) {
        const gn__tensor *f = &c->in[3];
        if (gn__tensor_numel(f) != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "FIRST_DIM_SIZE must be a scalar");
        nrows = int_at(f, 0);
    } else {
        const gn__tensor *s0 = &c->in[3];
        if (s0->rank != 1 || s0->dims[0] < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "row_splits must be a non-empty vector");
        nrows = s0->dims[0] - 1;
    }
    if (nrows < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "the number of rows %lld is negative", (long long)nrows);

    /* natural size of each ragged dimension; parents checked against the partitions */
    int64_t dims[RT_MAX_RANK];
    dims[0] = nrows;
    int64_t parents = nrows;
    for (int32_t k = 1; k <= ragged; k++) {
        const gn__tensor *p = &c->in[3 + (first_dim ? k : k - 1)];
        int64_t longest = 0, children;
        if (first_dim) {
            if (p->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "value_rowids %d must be a vector", k);
            children = p->dims[0];
            int64_t run = 0, last = -1;
            for (int64_t j = 0; j < children; j++) {
                int64_t r = int_at(p, j);
                if (r < last || r >= parents)
                    return gn__kctx_fail(c, GN_ERR_GRAPH,
                                         "value_rowids %d: entry %lld is %lld (the ids must be sorted and below %lld)",
                                         k, (long long)j, (long long)r, (long long)parents);
                run = r == last ? run + 1 : 1;
                last = r;
                if (run > longest) longest = run;
            }
        } else {
            if (p->rank != 1 || p->dims[0] != parents + 1)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "row_splits %d must be a vector of %lld", k - 1,
                                     (long long)(parents + 1));
            if (int_at(p, 0) != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "row_splits %d must start at 0", k - 1);
            for (int64_t j = 0; j < parents; j++) {
                int64_t len = int_at(p, j + 1) - int_at(p, j);
                if (len < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "row_splits %d must not decrease", k - 1);
                if (len > longest) longest = len;
            }
            children = int_at(p, parents);
        }
        dims[k] = longest;
        parents = children;
    }
    if (parents != values->dims[0])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "the row partitions describe %lld values, values has %lld",
                             (long long)parents, (long long)values->dims[0]);
    for (int32_t d = 1; d < values->rank; d++) dims[ragged + d] = values->dims[d];

    /* the requested shape: a scalar (unknown rank) or one entry per dimension, -1 for the natural size */
    if (!int_tensor(shape)) return gn__kctx_fail(c, GN_ERR_GRAPH, "shape must be int32 or int64");
    if (shape->rank == 1 && shape->dims[0] > 0) {
        if (shape->dims[0] != rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "shape has %lld dimensions, the result %d", (long long)shape->dims[0],
                                 rank);
        for (int32_t d = 0; d < rank; d++) {
            int64_t v = int_at(shape, d);
            if (v < -1) return gn__kctx_fail(c, GN_ERR_GRAPH, "shape dimension %d is %lld", d, (long long)v);
            if (v < 0) continue;
            if (d > ragged && v != dims[d])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "shape dimension %d is %lld, values' is %lld", d, (long long)v,
                                     (long long)dims[d]);
            dims[d] = v;
        }
    } else if (shape->rank > 1) {
        return gn__kctx_fail(c, GN_ERR_GRAPH, "shape must be a scalar or a vector");
    }

    /* default_value broadcast to the inner shape: a scalar or exactly it */
    int64_t inner = 1;
    for (int32_t d = 1; d < values->rank; d++) inner *= values->dims[d];
    int64_t dn = gn__tensor_numel(defv);
    if (defv->dtype != values->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "default_value is %s, values %s", gn__dtype_name(defv->dtype),
                             gn__dtype_name(values->dtype));
    if (dn != 1 && dn != inner)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "default_value has %lld elements, the inner shape %lld", (long long)dn,
                             (long long)inner);

    {   /* the output's element count must fit before places are computed in it */
        int64_t prod = 1;
        for (int32_t d = 0; d < rank; d++)
            if (__builtin_mul_overflow(prod, dims[d], &prod))
                return gn__kctx_fail(c, GN_ERR_GRAPH, "the output shape overflows");
    }
    /* each element's place in the output, level by level (-1: cut) */
    int64_t count = nrows, *place = malloc((size_t)(count > 0 ? count : 1) * sizeof *place);
    if (!place) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < count; i++) place[i] = i < dims[0] ? i : -1;
    for (int32_t k = 1; k <= ragged; k++) {
        const gn__tensor *p = &c->in[3 + (first_dim ? k : k - 1)];
        int64_t children = first_dim ? p->dims[0] : int_at(p, count);
        int64_t *next = malloc((size_t)(children > 0 ? children : 1) * sizeof *next);
        if (!next) {
            free(place);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        }
        if (first_dim) {
            int64_t last = -1, q = 0;
            for (int64_t j = 0; j < children; j++) {
                int64_t r = int_at(p, j);
                q = r == last ? q + 1 : 0;
                last = r;
                next[j] = place[r] < 0 || q >= dims[k] ? -1 : place[r] * dims[k] + q;
            }
        } else {
            for (int64_t r = 0; r < count; r++)
                for (int64_t j = int_at(p, r); j < int_at(p, r + 1); j++) {
                    int64_t q = j - int_at(p, r);
                    next[j] = place[r] < 0 || q >= dims[k] ? -1 : place[r] * dims[k] + q;
                }
        }
        free(place);
        place = next;
        count = children;
    }

    gn__tensor *o;
    gn_status st;
    int64_t slots = 1, total;   /* output rows of `inner` elements */
    for (int32_t d = 0; d <= ragged; d++)
        if (__builtin_mul_overflow(slots, dims[d], &slots)) slots = -1;
    if (slots < 0 || __builtin_mul_overflow(slots, inner, &total)) {
        free(place);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "the output shape overflows");
    }
    if (values->dtype == DT_STRING) {
        /* each output row's source: a value row, or -1 for the default */
        int64_t *src = malloc((size_t)(slots > 0 ? slots : 1) * sizeof *src);
        if (!src) {
            free(place);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        }
        for (int64_t i = 0; i < slots; i++) src[i] = -1;
        for (int64_t j = 0; j < count; j++)
            if (place[j] >= 0) src[place[j]] = j;
        const gn__tstring *vs = values->data, *ds = defv->data;
        size_t bytes = 0;
        for (int64_t i = 0; i < slots; i++)
            for (int64_t e = 0; e < inner; e++)
                bytes += src[i] >= 0 ? vs[src[i] * inner + e].len : ds[dn == 1 ? 0 : e].len;
        char *storage;
        st = gn__kctx_output_strings(c, 0, rank, dims, bytes, &o, &storage);
        if (st == GN_OK) {
            gn__tstring *os = o->data;
            for (int64_t i = 0; i < slots; i++)
                for (int64_t e = 0; e < inner; e++) {
                    const gn__tstring *from = src[i] >= 0 ? &vs[src[i] * inner + e] : &ds[dn == 1 ? 0 : e];
                    if (from->len) memcpy(storage, from->ptr, from->len);
                    os[i * inner + e] = (gn__tstring){storage, from->len};
                    storage += from->len;
                }
        }
        free(src);
    } else {
        st = gn__kctx_output(c, 0, values->dtype, rank, dims, &o);
        if (st == GN_OK) {
            size_t esz = gn__dtype_size(values->dtype), row = (size_t)inner * esz;
            char *out = o->data;
            for (int64_t i = 0; i < slots; i++)
                for (int64_t e = 0; e < inner; e++)
                    memcpy(out + (size_t)(i * inner + e) * esz, (const char *)defv->data + (size_t)(dn == 1 ? 0 : e) * esz,
                           esz);
            for (int64_t j = 0; j < count; j++)
                if (place[j] >= 0 && row) memcpy(out + (size_t)place[j] * row, (const char *)values->data + (size_t)j * row, row);
        }
    }
    free(place);
    return st;
}

/* ---- RaggedRange (ragged_range_op.cc) ---------------------------------------------------------- */
/* One range per row: starts, limits and deltas each a scalar (broadcast) or a
 * vector of the rows; row i holds start, start + delta, ... short of limit.
 * Outputs the row splits (Tsplits) and the values (T: int32, int64, float,
 * double). */
#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE

static double num_at(const gn__tensor *t, int64_t i)
{
    i = gn__tensor_numel(t) == 1 ? 0 : i;
    switch (t->dtype) {
    case DT_INT32: return ((const int32_t *)t->data)[i];
    case DT_INT64: return (double)((const int64_t *)t->data)[i];
    case DT_FLOAT: return ((const float *)t->data)[i];
    default: return ((const double *)t->data)[i];
    }
}

static int64_t int_num_at(const gn__tensor *t, int64_t i)
{
    i = gn__tensor_numel(t) == 1 ? 0 : i;
    return t->dtype == DT_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

gn_status gn__rag_k_ragged_range(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    const gn__tensor *st = &c->in[0], *li = &c->in[1], *de = &c->in[2];
    int32_t dt = st->dtype;
    if (dt != DT_INT32 && dt != DT_INT64 && dt != DT_FLOAT && dt != DT_DOUBLE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "T %s", gn__dtype_name(dt));
    if (li->dtype != dt || de->dtype != dt) return gn__kctx_fail(c, GN_ERR_GRAPH, "starts, limits and deltas differ in type");
    int64_t rows = 1;
    bool any_vector = false;
    for (int i = 0; i < 3; i++) {
        const gn__tensor *t = &c->in[i];
        if (t->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar or vector", i == 0 ? "starts" : i == 1 ? "limits" : "deltas");
        if (t->rank == 1) {
            if (any_vector && t->dims[0] != rows)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "starts, limits, and deltas must have the same shape");
            rows = t->dims[0];
            any_vector = true;
        }
    }
    int32_t split_dt = DT_INT64;
    int sdt = 0;
    if (gn__attr_get_type(c->g, c->node, "Tsplits", &sdt)) split_dt = sdt;
    bool ints = dt == DT_INT32 || dt == DT_INT64;
    int64_t total = 0;
    int64_t *sizes = malloc((size_t)(rows > 0 ? rows : 1) * sizeof *sizes);
    if (!sizes) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t r = 0; r < rows; r++) {
        int64_t n;
        if (ints) {
            int64_t a = int_num_at(st, r), b = int_num_at(li, r), d = int_num_at(de, r);
            if (d == 0) {
                free(sizes);
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires delta != 0");
            }
            n = (d > 0 && b < a) || (d < 0 && b > a) ? 0 : ((b > a ? b - a : a - b) + (d > 0 ? d : -d) - 1) / (d > 0 ? d : -d);
        } else {
            double a = num_at(st, r), b = num_at(li, r), d = num_at(de, r);
            if (d == 0) {
                free(sizes);
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires delta != 0");
            }
            n = (d > 0 && b < a) || (d < 0 && b > a) ? 0 : (int64_t)ceil(fabs((b - a) / d));
        }
        if (n > (int64_t)1 << 31) {
            free(sizes);
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Requires ((limit - start) / delta) <= 2147483647");
        }
        sizes[r] = n;
        total += n;
    }
    int64_t sd[1] = {rows + 1}, vd[1] = {total};
    gn__tensor *splits, *vals;
    gn_status s = gn__kctx_output(c, 0, split_dt, 1, sd, &splits);
    if (s == GN_OK) s = gn__kctx_output(c, 1, dt, 1, vd, &vals);
    if (s != GN_OK) {
        free(sizes);
        return s;
    }
    int64_t at = 0;
    for (int64_t r = 0; r <= rows; r++) {
        if (split_dt == DT_INT32) ((int32_t *)splits->data)[r] = (int32_t)at;
        else ((int64_t *)splits->data)[r] = at;
        if (r == rows) break;
        for (int64_t k = 0; k < sizes[r]; k++, at++) {
            switch (dt) {
            case DT_INT32: ((int32_t *)vals->data)[at] = (int32_t)(int_num_at(st, r) + k * int_num_at(de, r)); break;
            case DT_INT64: ((int64_t *)vals->data)[at] = int_num_at(st, r) + k * int_num_at(de, r); break;
            case DT_FLOAT: ((float *)vals->data)[at] = (float)num_at(st, r) + (float)k * (float)num_at(de, r); break;
            default: ((double *)vals->data)[at] = num_at(st, r) + (double)k * num_at(de, r); break;
            }
        }
    }
    free(sizes);
    return GN_OK;
}
