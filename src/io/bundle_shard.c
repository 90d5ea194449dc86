/* Writing a checkpoint as TensorFlow's MaxShardSizePolicy splits it
 * (tensorflow/python/checkpoint/sharding/sharding_policies.py, then
 * MergeV2Checkpoints in tensor_bundle.cc; docs/reference_formats.md §B3, §B7).
 *
 * The policy walks the tensors in save order with a running "remaining"
 * budget of the current shard. Sizes: elements x dtype size; for strings the
 * sum of the string lengths, with the longest string as the "element size";
 * the object graph (and variants) count 0. A scalar never splits: bigger than
 * the maximum it becomes a shard of its own (after all others), else it opens
 * a new shard when it does not fit. A larger tensor is cut while what is left
 * of it exceeds the remaining budget: the axis chosen is the one needing the
 * fewest partitions whose hyperplanes fit the remaining space (axis 0 by
 * default), the slice is ceil(len / partitions) hyperplanes along it, taken
 * from the corner of the tensor not yet placed; a slice bigger than the
 * maximum becomes a shard of its own; a shard filled exactly opens a new one.
 * What is left goes into the current shard.
 *
 * Every shard becomes a bundle, and the merge renumbers the data files in the
 * order they first hold an entry (a shard that holds nothing keeps no data
 * file, but counts in num_shards), gives a sliced tensor's full-tensor entry
 * the shard of its first slice, and concatenates the slice lists in shard
 * order. gn__bundle_writer_set_shard reproduces that layout directly.
 *
 * Two departures, both where TensorFlow's code cannot produce a usable
 * checkpoint: a tensor none of whose hyperplanes fits an empty shard is an
 * error here (the policy loop never ends there), and a tensor with no
 * elements is kept as an ordinary entry (the policy drops it). */
#include "io/bundle.h"

#include <stdlib.h>

#include "graph/tensor.h"

#define OBJECT_GRAPH_KEY "_CHECKPOINTABLE_OBJECT_GRAPH"
#define INF_PARTS INT64_MAX

typedef struct piece {
    size_t tensor;
    int32_t shard;      /* >= 0: the policy's tensor shards; < 0: -1 - k, the k-th oversized shard */
    bool sliced;
    int64_t off[GN__MAX_DIMS], len[GN__MAX_DIMS];
} piece;

typedef struct plan {
    piece *p;
    size_t n, cap;
    int32_t n_shards;   /* tensor shards, the last possibly empty */
    int32_t n_large;
    int64_t max, remaining;
} plan;

static gn_status push(plan *pl, size_t ti, int32_t shard, bool sliced, int32_t rank, const int64_t *off,
                      const int64_t *len, gn__err *err)
{
    if (pl->n == pl->cap) {
        size_t nc = pl->cap ? pl->cap * 2 : 32;
        piece *np = realloc(pl->p, nc * sizeof *np);
        if (!np) return gn__fail(err, GN_ERR_NOMEM, "MaxShardSizePolicy: out of memory");
        pl->p = np;
        pl->cap = nc;
    }
    piece *q = &pl->p[pl->n++];
    memset(q, 0, sizeof *q);
    q->tensor = ti;
    q->shard = shard;
    q->sliced = sliced;
    for (int32_t d = 0; d < rank; d++) {
        q->off[d] = off[d];
        q->len[d] = len[d];
    }
    return GN_OK;
}

static void new_shard(plan *pl)
{
    pl->n_shards++;
    pl->remaining = pl->max;
}

static int64_t prod(int32_t rank, const int64_t *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= d[i];
    return n;
}

/* num_partitions(axis) of the policy: INF_PARTS when one hyperplane does not fit. */
static int64_t num_partitions(const plan *pl, int32_t rank, const int64_t *ws, int64_t dsz, int32_t axis)
{
    int64_t axis_len = ws[axis];
    int64_t bytes_per_slice = (prod(rank, ws) / axis_len) * dsz;
    int64_t per_shard = bytes_per_slice > 0 ? pl->remaining / bytes_per_slice : INF_PARTS;
    if (per_shard <= 0) return INF_PARTS;
    return (axis_len + per_shard - 1) / per_shard;
}

/* _get_next_partition: (axis, hyperplanes to take); 0 when none fits. */
static int64_t next_partition(const plan *pl, int32_t rank, const int64_t *ws, int64_t dsz, int32_t *axis)
{
    int64_t num_elems = prod(rank, ws);
    int64_t min_parts = num_partitions(pl, rank, ws, dsz, 0);
    int32_t min_axis = 0;
    for (int32_t a = 1; a < rank; a++) {
        int64_t parts = num_partitions(pl, rank, ws, dsz, a);
        double part_size = parts == INF_PARTS ? 0.0 : (double)num_elems * (double)dsz / (double)parts;
        if (parts < min_parts && part_size <= (double)pl->remaining) {
            min_axis = a;
            min_parts = parts;
        }
    }
    *axis = min_axis;
    if (min_parts == INF_PARTS) return 0;
    return (ws[min_axis] + min_parts - 1) / min_parts;
}

/* Policy size and "element size" of a tensor. */
static void policy_size(const char *key, const gn__tensor *t, int64_t *total, int64_t *dsz)
{
    *total = *dsz = 0;
    if (strcmp(key, OBJECT_GRAPH_KEY) == 0 || t->dtype == TENSORFLOW__DATA_TYPE__DT_VARIANT) return;
    int64_t n = gn__tensor_numel(t);
    if (t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING) {
        const gn__tstring *s = t->data;
        for (int64_t i = 0; i < n; i++) {
            *total += (int64_t)s[i].len;
            if ((int64_t)s[i].len > *dsz) *dsz = (int64_t)s[i].len;
        }
        return;
    }
    *dsz = (int64_t)gn__dtype_size(t->dtype);
    *total = n * *dsz;
}

static gn_status plan_tensor(plan *pl, size_t ti, const char *key, const gn__tensor *t, gn__err *err)
{
    int64_t total, dsz;
    policy_size(key, t, &total, &dsz);
    int32_t rank = t->rank;
    if (rank == 0) {
        if (total > pl->max) return push(pl, ti, -1 - pl->n_large++, false, 0, NULL, NULL, err);
        if (total > pl->remaining) new_shard(pl);
        pl->remaining -= total;
        return push(pl, ti, pl->n_shards - 1, false, 0, NULL, NULL, err);
    }
    if (gn__tensor_numel(t) == 0) return push(pl, ti, pl->n_shards - 1, false, 0, NULL, NULL, err);
    int64_t off[GN__MAX_DIMS] = {0}, ws[GN__MAX_DIMS];
    for (int32_t d = 0; d < rank; d++) ws[d] = t->dims[d];
    int64_t wsize = total;
    while (wsize > pl->remaining) {
        int32_t axis;
        int64_t part = next_partition(pl, rank, ws, dsz, &axis);
        if (part == 0) {
            if (pl->remaining == pl->max) {
                int64_t row = dsz;
                for (int32_t d = 1; d < rank; d++) row *= ws[d];
                return gn__fail(err, GN_ERR_UNSUPPORTED,
                                "MaxShardSizePolicy(%lld): key '%s': no slice of the tensor fits in an empty "
                                "shard (one hyperplane along axis 0 is %lld bytes; TensorFlow's policy never "
                                "finishes here)",
                                (long long)pl->max, key, (long long)row);
            }
            new_shard(pl);
            continue;
        }
        int64_t shape[GN__MAX_DIMS];
        for (int32_t d = 0; d < rank; d++) shape[d] = ws[d];
        shape[axis] = part;
        int64_t bytes = prod(rank, shape) * dsz;
        if (bytes > pl->max) {
            GN_TRY(push(pl, ti, -1 - pl->n_large++, true, rank, off, shape, err));
        } else if (bytes > pl->remaining) {
            return gn__fail(err, GN_ERR_INTERNAL, "MaxShardSizePolicy: key '%s': a slice of %lld bytes exceeds the "
                            "%lld left in its shard", key, (long long)bytes, (long long)pl->remaining);
        } else {
            GN_TRY(push(pl, ti, pl->n_shards - 1, true, rank, off, shape, err));
            pl->remaining -= bytes;
            if (pl->remaining == 0) new_shard(pl);
        }
        off[axis] += part;
        ws[axis] -= part;
        wsize = prod(rank, ws) * dsz;
    }
    if (prod(rank, ws) > 0) GN_TRY(push(pl, ti, pl->n_shards - 1, true, rank, off, ws, err));
    pl->remaining -= wsize;
    return GN_OK;
}

/* The block [off, off + len) of t, as a tensor borrowing *mem (freed by the caller). */
static gn_status slice_of(const gn__tensor *t, const int64_t *off, const int64_t *len, gn__tensor *out, void **mem,
                          gn__err *err)
{
    int32_t rank = t->rank;
    size_t esz = t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING ? sizeof(gn__tstring) : gn__dtype_size(t->dtype);
    int64_t n = prod(rank, len);
    uint8_t *dst = malloc(n > 0 ? (size_t)n * esz : 1);
    if (!dst) return gn__fail(err, GN_ERR_NOMEM, "MaxShardSizePolicy: out of memory");
    int64_t stride[GN__MAX_DIMS];
    stride[rank - 1] = 1;
    for (int32_t d = rank - 1; d > 0; d--) stride[d - 1] = stride[d] * t->dims[d];
    int64_t idx[GN__MAX_DIMS] = {0};
    size_t row = (size_t)len[rank - 1] * esz;
    uint8_t *o = dst;
    for (int64_t r = 0; n > 0 && r < n / len[rank - 1]; r++) {
        int64_t src = off[rank - 1];
        for (int32_t d = 0; d < rank - 1; d++) src += (off[d] + idx[d]) * stride[d];
        memcpy(o, (const uint8_t *)t->data + (size_t)src * esz, row);
        o += row;
        for (int32_t d = rank - 2; d >= 0; d--) {
            if (++idx[d] < len[d]) break;
            idx[d] = 0;
        }
    }
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->rank = rank;
    for (int32_t d = 0; d < rank; d++) out->dims[d] = len[d];
    out->data = dst;
    out->nbytes = (size_t)(n > 0 ? n : 0) * esz;
    *mem = dst;
    return GN_OK;
}

gn_status gn__bundle_write_max_shard(gn__bundle_writer *w, size_t n, const char *const *keys,
                                     const gn__tensor *tensors, int64_t max_shard_size, gn__err *err)
{
    if (max_shard_size <= 0)
        return gn__fail(err, GN_ERR_ARG, "MaxShardSizePolicy: max_shard_size must be positive");
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.max = pl.remaining = max_shard_size;
    pl.n_shards = 1;
    gn_status st = GN_OK;
    for (size_t i = 0; st == GN_OK && i < n; i++) {
        if (tensors[i].rank < 0 || tensors[i].rank > GN__MAX_DIMS)
            st = gn__fail(err, GN_ERR_ARG, "MaxShardSizePolicy: key '%s': rank %d", keys[i], tensors[i].rank);
        else
            st = plan_tensor(&pl, i, keys[i], &tensors[i], err);
    }
    /* the shards kept: the tensor shards when the first holds something, then the oversized ones */
    int32_t total = pl.n_large;
    bool first = false;
    for (size_t i = 0; i < pl.n; i++) first |= pl.p[i].shard == 0;
    if (first) total += pl.n_shards;
    int32_t *ids = calloc((size_t)(pl.n_shards + pl.n_large) + 1, sizeof *ids);
    if (st == GN_OK && !ids) st = gn__fail(err, GN_ERR_NOMEM, "MaxShardSizePolicy: out of memory");
    /* data file numbers: shards in order, each that holds a tensor taking the next */
    int32_t next = 0;
    for (int32_t s = 0; st == GN_OK && s < pl.n_shards + pl.n_large; s++) {
        int32_t code = s < pl.n_shards ? s : -1 - (s - pl.n_shards);
        bool used = false;
        for (size_t i = 0; i < pl.n && !used; i++) used = pl.p[i].shard == code;
        ids[s] = used && (code < 0 || first) ? next++ : -1;
    }
    for (int32_t s = 0; st == GN_OK && s < pl.n_shards + pl.n_large; s++) {
        if (ids[s] < 0) continue;
        int32_t code = s < pl.n_shards ? s : -1 - (s - pl.n_shards);
        st = gn__bundle_writer_set_shard(w, ids[s], err);
        for (size_t i = 0; st == GN_OK && i < pl.n; i++) {
            const piece *q = &pl.p[i];
            if (q->shard != code) continue;
            const gn__tensor *t = &tensors[q->tensor];
            if (!q->sliced) {
                st = gn__bundle_writer_add(w, keys[q->tensor], t, err);
                continue;
            }
            gn__tensor sl;
            void *mem = NULL;
            st = slice_of(t, q->off, q->len, &sl, &mem, err);
            if (st == GN_OK)
                st = gn__bundle_writer_add_slice(w, keys[q->tensor], t->rank, t->dims, q->off, q->len, &sl, err);
            free(mem);
        }
    }
    if (st == GN_OK && total > 0) st = gn__bundle_writer_set_num_shards(w, total, err);
    free(ids);
    free(pl.p);
    return st;
}
