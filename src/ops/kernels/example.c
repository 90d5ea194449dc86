/* ParseExampleV2 (tensorflow/core/kernels/example_parsing_ops.cc,
 * util/example_proto_fast_parsing.cc): serialized tf.train.Example protos,
 * the input of TensorFlow Serving's classify / regress / predict signatures
 * and of every Estimator and TFX export, parsed into the features a
 * signature names.
 *
 * The wire format is read here directly (Example.features = 1; Features.feature
 * = 1, a map entry of key = 1 and value = 2; Feature: bytes_list = 1,
 * float_list = 2, int64_list = 3, each with value = 1, the numbers packed or
 * not), every length checked against what is left. A feature named twice in
 * one Example: the last one counts, as protobuf's map does.
 *
 * Per key kind, as tf.io.parse_example gives them (B the number of examples;
 * a scalar `serialized` gives outputs without the batch dimension):
 *   dense (FixedLenFeature): [B] + shape, each example's values exactly the
 *     shape's count, a missing feature taking dense_defaults (empty: required;
 *     one value: broadcast); a shape whose first dimension is -1
 *     (FixedLenSequenceFeature) takes any multiple of the rest, padded with
 *     the default to the longest example;
 *   sparse (VarLenFeature): indices [N, 2] (example, position), values [N],
 *     dense_shape [B, longest];
 *   ragged (RaggedFeature): values [N] and row_splits [B + 1].
 * A feature of the wrong kind, a wrong count or a missing required feature is
 * an error naming the key and the example's index. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/kernel.h"
#include "ops/op_fns.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* ---- wire format -------------------------------------------------------------------------------- */
typedef struct wire {
    const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (w->p >= w->end) return false;
        uint8_t b = *w->p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The next field: its number, wire type and, for length-delimited ones, the
 * bytes; other kinds skipped (their value in *v for varints). */
static bool field(wire *w, uint32_t *num, int *type, wire *sub, uint64_t *v)
{
    uint64_t key;
    if (!varint(w, &key)) return false;
    *num = (uint32_t)(key >> 3);
    *type = (int)(key & 7);
    switch (*type) {
    case 0: return varint(w, v);
    case 1:
        if (w->end - w->p < 8) return false;
        memcpy(v, w->p, 8);
        w->p += 8;
        return true;
    case 5: {
        if (w->end - w->p < 4) return false;
        uint32_t x;
        memcpy(&x, w->p, 4);
        *v = x;
        w->p += 4;
        return true;
    }
    case 2: {
        uint64_t len;
        if (!varint(w, &len) || len > (uint64_t)(w->end - w->p)) return false;
        sub->p = w->p;
        sub->end = w->p + len;
        w->p += len;
        return true;
    }
    default: return false;
    }
}

enum { K_NONE = 0, K_BYTES = 1, K_FLOAT = 2, K_INT64 = 3 };

/* One Feature: its kind and its list's bytes (value = 1 fields inside). */
typedef struct feat {
    int kind;
    wire list;
} feat;

/* The value of `key` in Example bytes ex (the last entry naming it); kind
 * K_NONE when absent. False on malformed bytes. */
static bool find_feature(wire ex, const char *key, size_t klen, feat *out)
{
    out->kind = K_NONE;
    while (ex.p < ex.end) {
        uint32_t num;
        int type;
        wire feats = {NULL, NULL};
        uint64_t v;
        if (!field(&ex, &num, &type, &feats, &v)) return false;
        if (num != 1 || type != 2) continue;
        while (feats.p < feats.end) {
            wire entry = {NULL, NULL};
            if (!field(&feats, &num, &type, &entry, &v)) return false;
            if (num != 1 || type != 2) continue;
            wire k = {NULL, NULL}, val = {NULL, NULL};
            bool has_val = false;
            while (entry.p < entry.end) {
                wire x = {NULL, NULL};
                if (!field(&entry, &num, &type, &x, &v)) return false;
                if (type != 2) continue;
                if (num == 1) k = x;
                else if (num == 2) val = x, has_val = true;
            }
            size_t kl = k.p ? (size_t)(k.end - k.p) : 0;
            if (kl != klen || (kl && memcmp(k.p, key, kl))) continue;
            feat f = {K_NONE, {NULL, NULL}};
            while (has_val && val.p < val.end) {   /* Feature: the last list set wins (a oneof) */
                wire l = {NULL, NULL};
                if (!field(&val, &num, &type, &l, &v)) return false;
                if (type == 2 && num >= 1 && num <= 3) f.kind = (int)num, f.list = l;
            }
            *out = f;   /* a feature with no list: present, of no kind (an empty list of any type) */
            if (!has_val || f.kind == K_NONE) out->kind = -1;
        }
    }
    return true;
}

/* The values of a list: count (and, into dst when not NULL, the values as
 * float / int64 / gn__tstring pointing into the bytes). False on bad bytes. */
static bool list_values(const feat *f, int64_t *count, void *dst)
{
    int64_t n = 0;
    wire w = f->list;
    while (w.p < w.end) {
        uint32_t num;
        int type;
        wire sub = {NULL, NULL};
        uint64_t v;
        if (!field(&w, &num, &type, &sub, &v)) return false;
        if (num != 1) continue;
        if (f->kind == K_BYTES) {
            if (type != 2) return false;
            if (dst) ((gn__tstring *)dst)[n] = (gn__tstring){(const char *)sub.p, (size_t)(sub.end - sub.p)};
            n++;
        } else if (f->kind == K_FLOAT) {
            if (type == 5) {
                if (dst) {
                    uint32_t b = (uint32_t)v;
                    memcpy((float *)dst + n, &b, 4);
                }
                n++;
            } else if (type == 2) {
                if ((sub.end - sub.p) % 4) return false;
                int64_t k = (sub.end - sub.p) / 4;
                if (dst) memcpy((float *)dst + n, sub.p, (size_t)k * 4);
                n += k;
            } else {
                return false;
            }
        } else {
            if (type == 0) {
                if (dst) ((int64_t *)dst)[n] = (int64_t)v;
                n++;
            } else if (type == 2) {
                while (sub.p < sub.end) {
                    uint64_t x;
                    if (!varint(&sub, &x)) return false;
                    if (dst) ((int64_t *)dst)[n] = (int64_t)x;
                    n++;
                }
            } else {
                return false;
            }
        }
    }
    *count = n;
    return true;
}

static int kind_of(int32_t dt) { return dt == DT_STRING ? K_BYTES : dt == DT_FLOAT ? K_FLOAT : K_INT64; }

static const char *kind_name(int k)
{
    return k == K_BYTES ? "string" : k == K_FLOAT ? "float" : k == K_INT64 ? "int64" : "none";
}

static size_t elem_size(int32_t dt) { return dt == DT_STRING ? sizeof(gn__tstring) : dt == DT_FLOAT ? 4 : 8; }

/* ---- the kernel --------------------------------------------------------------------------------- */
typedef struct parse_ctx {
    gn__kctx *c;
    const gn__tstring *ser;
    int64_t batch;
    bool scalar;
} parse_ctx;

/* Example i's feature `key` (its list counted into *count, kind checked
 * against want); *present false when absent. */
static gn_status get(parse_ctx *pc, int64_t i, const gn__tstring *key, int want, feat *f, int64_t *count,
                     bool *present)
{
    wire ex = {(const uint8_t *)pc->ser[i].ptr, (const uint8_t *)pc->ser[i].ptr + pc->ser[i].len};
    if (!find_feature(ex, key->ptr, key->len, f))
        return gn__kctx_fail(pc->c, GN_ERR_GRAPH, "Could not parse example input, value: example %lld is not a "
                             "tf.train.Example", (long long)i);
    *count = 0;
    *present = f->kind != K_NONE;
    if (f->kind == -1) return GN_OK;   /* present, no values */
    if (!*present) return GN_OK;
    if (f->kind != want)
        return gn__kctx_fail(pc->c, GN_ERR_GRAPH,
                             "Name: <unknown>, Key: %.*s, Index: %lld.  Data types don't match. Data type: %s but "
                             "expected type: %s",
                             (int)key->len, key->ptr, (long long)i, kind_name(f->kind), kind_name(want));
    if (!list_values(f, count, NULL))
        return gn__kctx_fail(pc->c, GN_ERR_GRAPH, "Could not parse example input: example %lld, key %.*s",
                             (long long)i, (int)key->len, key->ptr);
    return GN_OK;
}

/* Copies n values of the list into dst (strings: into the output's storage). */
static void put_values(const feat *f, int64_t n, void *dst, char **storage)
{
    if (!n || f->kind <= 0) return;
    if (f->kind != K_BYTES) {
        int64_t got;
        (void)list_values(f, &got, dst);
        return;
    }
    gn__tstring *s = dst;
    int64_t got;
    (void)list_values(f, &got, s);
    for (int64_t k = 0; k < got; k++) {
        if (s[k].len) memcpy(*storage, s[k].ptr, s[k].len);
        s[k].ptr = *storage;
        *storage += s[k].len;
    }
}

/* Bytes of the strings example i's list holds (0 for other kinds). */
static size_t list_bytes(const feat *f, int64_t n)
{
    if (f->kind != K_BYTES || !n) return 0;
    gn__tstring *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) return 0;
    int64_t got;
    size_t b = 0;
    if (list_values(f, &got, tmp))
        for (int64_t k = 0; k < got; k++) b += tmp[k].len;
    free(tmp);
    return b;
}

static gn_status out_alloc(parse_ctx *pc, uint32_t k, int32_t dt, int32_t rank, const int64_t *dims, size_t bytes,
                           gn__tensor **t, char **storage)
{
    if (dt == DT_STRING) return gn__kctx_output_strings(pc->c, k, rank, dims, bytes, t, storage);
    *storage = NULL;
    return gn__kctx_output(pc->c, k, dt, rank, dims, t);
}

static const Tensorflow__AttrValue *list_attr(gn__kctx *c, const char *name)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, name);
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list ? v : NULL;
}

static gn_status parse_sparse(parse_ctx *pc, const gn__tstring *key, int32_t dt, uint32_t o_idx, uint32_t o_val,
                              uint32_t o_shape)
{
    int want = kind_of(dt);
    int64_t total = 0, longest = 0;
    size_t bytes = 0;
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        total += n;
        if (n > longest) longest = n;
        bytes += list_bytes(&f, n);
    }
    int32_t ir = pc->scalar ? 1 : 2;
    int64_t idims[2] = {total, ir}, vdims[1] = {total}, sdims[1] = {ir};
    gn__tensor *ti, *tv, *ts;
    char *storage;
    GN_TRY(gn__kctx_output(pc->c, o_idx, DT_INT64, 2, idims, &ti));
    GN_TRY(out_alloc(pc, o_val, dt, 1, vdims, bytes, &tv, &storage));
    GN_TRY(gn__kctx_output(pc->c, o_shape, DT_INT64, 1, sdims, &ts));
    int64_t *idx = ti->data, at = 0;
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        put_values(&f, n, (char *)tv->data + (size_t)at * elem_size(dt), &storage);
        for (int64_t k = 0; k < n; k++, at++) {
            if (pc->scalar) {
                idx[at] = k;
            } else {
                idx[2 * at] = i;
                idx[2 * at + 1] = k;
            }
        }
    }
    int64_t *sh = ts->data;
    if (pc->scalar) {
        sh[0] = longest;
    } else {
        sh[0] = pc->batch;
        sh[1] = longest;
    }
    return GN_OK;
}

static gn_status parse_dense(parse_ctx *pc, const gn__tstring *key, int32_t dt, const Tensorflow__TensorShapeProto *sp,
                             const gn__tensor *dflt, uint32_t o)
{
    int want = kind_of(dt);
    if (dflt->dtype != dt)
        return gn__kctx_fail(pc->c, GN_ERR_GRAPH, "dense_defaults for '%.*s' is %s, Tdense says %s", (int)key->len,
                             key->ptr, gn__dtype_name(dflt->dtype), gn__dtype_name(dt));
    int32_t srank = sp && !sp->unknown_rank ? (int32_t)sp->n_dim : 0;
    if (srank > 7) return gn__kctx_fail(pc->c, GN_ERR_UNSUPPORTED, "dense shape of rank %d", srank);
    bool variable = srank > 0 && sp->dim[0]->size < 0;
    int64_t per = 1;   /* values per row (variable) or per example */
    for (int32_t d = variable ? 1 : 0; d < srank; d++) {
        if (sp->dim[d]->size < 0)
            return gn__kctx_fail(pc->c, GN_ERR_GRAPH, "dense shape for '%.*s': only the first dimension may be unknown",
                                 (int)key->len, key->ptr);
        per *= sp->dim[d]->size;
    }
    int64_t dn = gn__tensor_numel(dflt);
    if (!variable && dn != 0 && dn != 1 && dn != per)
        return gn__kctx_fail(pc->c, GN_ERR_GRAPH, "dense_defaults for '%.*s' has %lld values, the shape %lld",
                             (int)key->len, key->ptr, (long long)dn, (long long)per);
    int64_t rows = 0;   /* variable: the longest example's rows */
    size_t bytes = 0;
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        if (variable) {
            if (per && n % per)
                return gn__kctx_fail(pc->c, GN_ERR_GRAPH,
                                     "Name: <unknown>, Key: %.*s, Index: %lld.  Number of values is not a multiple of "
                                     "stride length. Saw %lld values but output shape is: [?,%lld]",
                                     (int)key->len, key->ptr, (long long)i, (long long)n, (long long)per);
            if (per && n / per > rows) rows = n / per;
        } else if (!present || f.kind == -1) {
            if (dn == 0)
                return gn__kctx_fail(pc->c, GN_ERR_GRAPH,
                                     "Name: <unknown>, Feature: %.*s (data type: %s) is required but could not be "
                                     "found.",
                                     (int)key->len, key->ptr, kind_name(want));
        } else if (n != per) {
            return gn__kctx_fail(pc->c, GN_ERR_GRAPH,
                                 "Name: <unknown>, Key: %.*s, Index: %lld.  Number of %s values != expected.  Values "
                                 "size: %lld but output shape: [%lld]",
                                 (int)key->len, key->ptr, (long long)i, kind_name(want), (long long)n, (long long)per);
        }
        bytes += list_bytes(&f, n);
    }
    int64_t dims[9];
    int32_t rank = 0;
    if (!pc->scalar) dims[rank++] = pc->batch;
    if (variable) dims[rank++] = rows;
    for (int32_t d = variable ? 1 : 0; d < srank; d++) dims[rank++] = sp->dim[d]->size;
    int64_t slot = variable ? rows * per : per;   /* elements per example */
    if (dt == DT_STRING && dn)
        for (int64_t i = 0; i < pc->batch; i++)   /* room for the defaults: at most every element */
            for (int64_t e = 0; e < slot; e++) bytes += ((const gn__tstring *)dflt->data)[dn == 1 ? 0 : e % dn].len;
    gn__tensor *t;
    char *storage;
    GN_TRY(out_alloc(pc, o, dt, rank, dims, bytes, &t, &storage));
    size_t esz = elem_size(dt);
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        char *base = (char *)t->data + (size_t)(i * slot) * esz;
        int64_t have = present && f.kind > 0 ? n : 0;
        put_values(&f, have, base, &storage);
        for (int64_t e = have; e < slot; e++) {   /* the default: broadcast, element for element, or zero */
            if (!dn) {
                if (dt == DT_STRING) ((gn__tstring *)(void *)base)[e] = (gn__tstring){storage, 0};
                else memset(base + (size_t)e * esz, 0, esz);
                continue;
            }
            const char *src = (const char *)dflt->data + (size_t)(dn == 1 ? 0 : e % dn) * esz;
            if (dt == DT_STRING) {
                const gn__tstring *s = (const gn__tstring *)(const void *)src;
                if (s->len) memcpy(storage, s->ptr, s->len);
                ((gn__tstring *)(void *)base)[e] = (gn__tstring){storage, s->len};
                storage += s->len;
            } else {
                memcpy(base + (size_t)e * esz, src, esz);
            }
        }
    }
    return GN_OK;
}

static gn_status parse_ragged(parse_ctx *pc, const gn__tstring *key, int32_t dt, int32_t split_dt, uint32_t o_val,
                              uint32_t o_split)
{
    int want = kind_of(dt);
    int64_t total = 0;
    size_t bytes = 0;
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        total += n;
        bytes += list_bytes(&f, n);
    }
    int64_t vdims[1] = {total}, sdims[1] = {pc->batch + 1};
    gn__tensor *tv, *ts;
    char *storage;
    GN_TRY(out_alloc(pc, o_val, dt, 1, vdims, bytes, &tv, &storage));
    GN_TRY(gn__kctx_output(pc->c, o_split, split_dt, pc->scalar ? 0 : 1, pc->scalar ? NULL : sdims, &ts));
    int64_t at = 0;
    if (!pc->scalar) {
        if (split_dt == DT_INT32) ((int32_t *)ts->data)[0] = 0;
        else ((int64_t *)ts->data)[0] = 0;
    }
    for (int64_t i = 0; i < pc->batch; i++) {
        feat f;
        int64_t n;
        bool present;
        GN_TRY(get(pc, i, key, want, &f, &n, &present));
        put_values(&f, n, (char *)tv->data + (size_t)at * elem_size(dt), &storage);
        at += n;
        if (pc->scalar) continue;
        if (split_dt == DT_INT32) ((int32_t *)ts->data)[i + 1] = (int32_t)at;
        else ((int64_t *)ts->data)[i + 1] = at;
    }
    return GN_OK;
}

gn_status gn__ex_k_parse_example_v2(gn__kctx *c)
{
    if (c->n_in < 5) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects at least 5 inputs, got %u", c->n_in);
    for (uint32_t i = 0; i < 5; i++)
        if (c->in[i].dtype != DT_STRING)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u must be string, got %s", i, gn__dtype_name(c->in[i].dtype));
    const gn__tensor *ser = &c->in[0], *sk = &c->in[2], *dk = &c->in[3], *rk = &c->in[4];
    if (ser->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected serialized to be a scalar or vector, got rank %d", ser->rank);
    int64_t num_sparse = 0;
    (void)gn__attr_get_int(c->g, c->node, "num_sparse", &num_sparse);
    const Tensorflow__AttrValue *tdense = list_attr(c, "Tdense"), *stypes = list_attr(c, "sparse_types"),
                                *shapes = list_attr(c, "dense_shapes"), *rvt = list_attr(c, "ragged_value_types"),
                                *rst = list_attr(c, "ragged_split_types");
    size_t nd = tdense ? tdense->list->n_type : 0, nr = rvt ? rvt->list->n_type : 0;
    if (gn__tensor_numel(sk) != num_sparse || (stypes ? (int64_t)stypes->list->n_type : 0) != num_sparse)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sparse_keys has %lld keys, num_sparse is %lld",
                             (long long)gn__tensor_numel(sk), (long long)num_sparse);
    if ((size_t)gn__tensor_numel(dk) != nd || (shapes ? shapes->list->n_shape : 0) != nd || c->n_in != 5 + nd)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "dense_keys has %lld keys, Tdense %zu types",
                             (long long)gn__tensor_numel(dk), nd);
    if ((size_t)gn__tensor_numel(rk) != nr || (rst ? rst->list->n_type : 0) != nr)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "ragged_keys has %lld keys, ragged_value_types %zu",
                             (long long)gn__tensor_numel(rk), nr);
    parse_ctx pc = {c, ser->data, gn__tensor_numel(ser), ser->rank == 0};
    uint32_t ns = (uint32_t)num_sparse;
    for (uint32_t i = 0; i < ns; i++)
        GN_TRY(parse_sparse(&pc, &((const gn__tstring *)sk->data)[i], (int32_t)stypes->list->type[i], i, ns + i,
                            2 * ns + i));
    for (uint32_t j = 0; j < nd; j++)
        GN_TRY(parse_dense(&pc, &((const gn__tstring *)dk->data)[j], (int32_t)tdense->list->type[j],
                           shapes->list->shape[j], &c->in[5 + j], 3 * ns + j));
    for (uint32_t r = 0; r < nr; r++)
        GN_TRY(parse_ragged(&pc, &((const gn__tstring *)rk->data)[r], (int32_t)rvt->list->type[r],
                            (int32_t)rst->list->type[r], 3 * ns + (uint32_t)nd + r, 3 * ns + (uint32_t)nd + (uint32_t)nr + r));
    return GN_OK;
}
