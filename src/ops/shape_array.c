/* Shape functions: shape manipulation (Reshape, Concat, Pack, Slice,
 * StridedSlice, Tile, Pad, ...) and gathers. */
#include "ops/shape_fn.h"

/* ---- shape manipulation ---------------------------------------------------------- */
gn_status gn__sf_shape(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k < c->n_in; k++) {
        const gn__shape *s = IS(c, k);
        GN_TRY(set_vector(c, k, s->rank));
        if (s->rank < 0) continue;
        gn__partial_value *v = val_new(c, s->rank, false);
        if (!v) return oom(c);
        for (int32_t i = 0; i < s->rank; i++)
            if (s->dims[i] >= 0) vset(v, i, s->dims[i]);
        c->out[k].value = v;
    }
    return GN_OK;
}

gn_status gn__sf_size(ctx *c)
{
    NEED(c, 1, 1);
    set_scalar(c, 0);
    int64_t n = gn__shape_num_elements(IS(c, 0));
    if (n >= 0 && fits_dtype(c->out[0].dtype, n)) {
        gn__partial_value *v = val_new(c, 1, true);
        if (!v) return oom(c);
        vset(v, 0, n);
        c->out[0].value = v;
    }
    return GN_OK;
}

gn_status gn__sf_rank(ctx *c)
{
    NEED(c, 1, 1);
    set_scalar(c, 0);
    if (IS(c, 0)->rank >= 0) {
        gn__partial_value *v = val_new(c, 1, true);
        if (!v) return oom(c);
        vset(v, 0, IS(c, 0)->rank);
        c->out[0].value = v;
    }
    return GN_OK;
}

gn_status gn__sf_reshape(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *v = VAL(c, 1);
    int64_t nin = gn__shape_num_elements(x);
    char s1[SB];
    if (!v) {
        gn__shape s;
        GN_TRY(shape_from_tensor(c, 1, &s));
        if (s.rank == 1 && nin >= 0) s.dims[0] = nin;
        if (s.rank == 0 && nin >= 0 && nin != 1)
            return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to []", (long long)nin);
        c->out[0].shape = s;
        return GN_OK;
    }
    if (v->shape.rank != 1 || v->n > MAXR) return GN_OK;
    int64_t d[MAXR];
    int32_t r = (int32_t)v->n;
    int32_t wild = -1;
    bool all_known = true;
    int64_t prod = 1;
    for (int32_t i = 0; i < r; i++) {
        int64_t e = 0;
        if (!vget(v, i, &e)) {
            d[i] = -1;
            all_known = false;
            continue;
        }
        if (e == -1) {
            if (wild >= 0) return gn__shape_fail(c, "only one dimension may be -1, not both %d and %d", wild, i);
            wild = i;
            d[i] = -1;
            continue;
        }
        if (e < -1) return gn__shape_fail(c, "dimension %d of the new shape is %lld", i, (long long)e);
        d[i] = e;
        if (prod >= 0 && __builtin_mul_overflow(prod, e, &prod)) prod = -2;
    }
    if (prod == -2) {
        gn__shape t = {r, d};
        return gn__shape_fail(c, "new shape %s has more elements than int64 can count", sstr(&t, s1));
    }
    if (all_known && nin >= 0) {
        if (wild >= 0) {
            if (prod > 0) {
                if (nin % prod != 0) {
                    gn__shape t = {r, d};
                    return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to %s", (long long)nin,
                                          sstr(&t, s1));
                }
                d[wild] = nin / prod;
            }
        } else if (prod != nin) {
            gn__shape t = {r, d};
            return gn__shape_fail(c, "cannot reshape a tensor of %lld elements to %s (%lld elements)", (long long)nin,
                                  sstr(&t, s1), (long long)prod);
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    return revalue(c, 0, c->in[0].value);
}

gn_status gn__sf_squeeze(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    const Tensorflow__AttrValue__ListValue *l = attr_list(c, "squeeze_dims");
    if (!l || !l->n_i) l = attr_list(c, "axis");
    if (x->rank < 0) return GN_OK;
    bool want[MAXR] = {false};
    bool listed = l && l->n_i;
    if (listed) {
        for (size_t i = 0; i < l->n_i; i++) {
            int64_t a = l->i[i];
            if (a < -x->rank || a >= x->rank)
                return gn__shape_fail(c, "squeeze dimension %lld out of range for rank %d", (long long)a, x->rank);
            want[a < 0 ? a + x->rank : a] = true;
        }
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t e = x->dims[i];
        if (listed) {
            if (want[i]) {
                if (e >= 0 && e != 1)
                    return gn__shape_fail(c, "cannot squeeze dimension %d of size %lld", i, (long long)e);
                continue;
            }
        } else {
            if (e == 1) continue;
            if (e < 0) return GN_OK; /* might be 1: the rank is unknown */
        }
        d[r++] = e;
    }
    GN_TRY(set_dims(c, 0, r, d));
    return revalue(c, 0, c->in[0].value);
}

gn_status gn__sf_expand_dims(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0 || x->rank + 1 > MAXR) return GN_OK;
    int64_t a = 0;
    int64_t d[MAXR];
    if (!scalar_val(c, 1, &a)) {
        for (int32_t i = 0; i <= x->rank; i++) d[i] = -1;
        return set_dims(c, 0, x->rank + 1, d);
    }
    if (a < -x->rank - 1 || a > x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)a, x->rank);
    if (a < 0) a += x->rank + 1;
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (i == a) d[r++] = 1;
        d[r++] = x->dims[i];
    }
    if (a == x->rank) d[r++] = 1;
    GN_TRY(set_dims(c, 0, r, d));
    return revalue(c, 0, c->in[0].value);
}

gn_status gn__sf_transpose(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ps = IS(c, 1);
    const gn__partial_value *p = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && p) r = (int32_t)p->n;
    if (r < 0 && ps->rank == 1) r = (int32_t)ps->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) d[i] = -1;
    if (p) {
        if (p->n != r)
            return gn__shape_fail(c, "perm has %lld elements for a tensor of rank %d", (long long)p->n, r);
        if (vall_known(p)) {
            bool seen[MAXR] = {false};
            for (int32_t i = 0; i < r; i++) {
                int64_t q = p->v[i];
                if (q < 0) q += r;
                if (q < 0 || q >= r || seen[q]) {
                    gn__shape t = {r, p->v};
                    char s1[SB];
                    return gn__shape_fail(c, "perm %s is not a permutation", sstr(&t, s1));
                }
                seen[q] = true;
                d[i] = x->rank >= 0 ? x->dims[q] : -1;
            }
        }
    }
    return set_dims_like(c, 0, r, d, x);
}

/* ConcatV2 (axis last) and Concat (axis first) */
static gn_status concat_impl(ctx *c, uint32_t first, uint32_t n, uint32_t axis_in)
{
    if (n == 0 || c->n_out < 1) return GN_OK;
    int32_t r = -1;
    uint32_t rfrom = 0;
    char s1[SB], s2[SB];
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        if (s->rank < 0) continue;
        if (r < 0) {
            r = s->rank;
            rfrom = i;
        } else if (s->rank != r) {
            return gn__shape_fail(c, "inputs have different ranks: %s (input %u) and %s (input %u)",
                                  sstr(IS(c, first + rfrom), s1), first + rfrom, sstr(s, s2), first + i);
        }
    }
    int64_t axis = 0;
    bool axis_known = scalar_val(c, axis_in, &axis);
    if (r < 0) return GN_OK;
    if (r == 0) return gn__shape_fail(c, "cannot concatenate scalars");
    int64_t d[MAXR];
    for (int32_t j = 0; j < r; j++) d[j] = -1;
    if (!axis_known) return set_dims(c, 0, r, d);
    if (axis < -r || axis >= r) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, r);
    if (axis < 0) axis += r;
    int64_t sum = 0;
    uint32_t from[MAXR] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        if (s->rank < 0) {
            sum = -1;
            continue;
        }
        for (int32_t j = 0; j < r; j++) {
            int64_t e = s->dims[j];
            if (j == axis) {
                if (e < 0 || sum < 0) sum = -1;
                else if (__builtin_add_overflow(sum, e, &sum))
                    return gn__shape_fail(c, "concatenated dimension overflows");
                continue;
            }
            if (e < 0) continue;
            if (d[j] >= 0 && d[j] != e)
                return gn__shape_fail(c, "dimension %d of inputs differs: %s (input %u) and %s (input %u)", j,
                                      sstr(IS(c, first + from[j]), s1), first + from[j], sstr(s, s2), first + i);
            if (d[j] < 0) {
                d[j] = e;
                from[j] = i;
            }
        }
    }
    d[axis] = sum;
    GN_TRY(set_dims(c, 0, r, d));
    /* values: vectors concatenated */
    if (r != 1 || d[0] < 0 || d[0] > MAX_VALUE_ELEMS) return GN_OK;
    bool any = false;
    for (uint32_t i = 0; i < n; i++) any |= VAL(c, first + i) != NULL;
    if (!any) return GN_OK;
    gn__partial_value *v = val_new(c, d[0], false);
    if (!v) return oom(c);
    int64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        const gn__shape *s = IS(c, first + i);
        const gn__partial_value *iv = VAL(c, first + i);
        int64_t len = s->dims[0];
        for (int64_t j = 0; j < len; j++) {
            int64_t x = 0;
            if (iv && iv->n == len && vget(iv, j, &x)) vset(v, pos + j, x);
        }
        pos += len;
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_concat_v2(ctx *c)
{
    NEED(c, 2, 1);
    return concat_impl(c, 0, c->n_in - 1, c->n_in - 1);
}

gn_status gn__sf_concat(ctx *c)
{
    NEED(c, 2, 1);
    return concat_impl(c, 1, c->n_in - 1, 0);
}

gn_status gn__sf_pack(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[MAXR];
    int32_t r = -1;
    gn__shape acc = {-1, NULL};
    uint32_t from = 0;
    for (uint32_t i = 0; i < c->n_in; i++) {
        int64_t nd[MAXR];
        int32_t nr;
        if (merge_dims(&acc, IS(c, i), nd, &nr)) {
            char s1[SB], s2[SB];
            return gn__shape_fail(c, "shapes of inputs differ: %s (input %u) and %s (input %u)", sstr(IS(c, from), s1),
                                  from, sstr(IS(c, i), s2), i);
        }
        memcpy(d, nd, (nr > 0 ? (size_t)nr : 0) * sizeof *d);
        r = nr;
        acc = (gn__shape){r, d};
        if (IS(c, i)->rank >= 0 && IS(c, from)->rank < 0) from = i;
    }
    if (r < 0 || r + 1 > MAXR) return GN_OK;
    int64_t axis = attr_i(c, "axis", 0);
    if (axis < -(r + 1) || axis > r) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, r + 1);
    if (axis < 0) axis += r + 1;
    int64_t o[MAXR];
    int32_t k = 0;
    for (int32_t i = 0; i <= r; i++) {
        if (i == axis) o[k++] = c->n_in;
        if (i < r) o[k++] = d[i];
    }
    GN_TRY(set_dims(c, 0, r + 1, o));
    /* values: a vector of scalars */
    if (r != 0 || c->n_in > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, c->n_in, false);
    if (!v) return oom(c);
    for (uint32_t i = 0; i < c->n_in; i++) {
        int64_t x = 0;
        if (scalar_val(c, i, &x)) vset(v, i, x);
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_unpack(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return GN_OK;
    if (x->rank == 0) return gn__shape_fail(c, "cannot unpack a scalar");
    int64_t axis = attr_i(c, "axis", 0);
    if (axis < -x->rank || axis >= x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    int64_t num = attr_i(c, "num", (int64_t)c->n_out);
    if (x->dims[axis] >= 0 && x->dims[axis] != num)
        return gn__shape_fail(c, "dimension %lld has size %lld, not num=%lld", (long long)axis,
                              (long long)x->dims[axis], (long long)num);
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (i != axis) d[r++] = x->dims[i];
    GN_TRY(set_dims(c, 0, r, d));
    for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape;
    const gn__partial_value *v = VAL(c, 0);
    if (v && x->rank == 1 && v->n == (int64_t)c->n_out) {
        for (uint32_t k = 0; k < c->n_out; k++) {
            int64_t e = 0;
            if (!vget(v, k, &e)) continue;
            gn__partial_value *s = val_new(c, 1, true);
            if (!s) return oom(c);
            vset(s, 0, e);
            c->out[k].value = s;
        }
    }
    return GN_OK;
}

static gn_status split_common(ctx *c, const gn__shape *x, bool axis_known, int64_t axis, const int64_t *sizes,
                              uint32_t n)
{
    if (x->rank < 0) return GN_OK;
    int64_t d[MAXR];
    if (!axis_known) {
        for (int32_t i = 0; i < x->rank; i++) d[i] = -1;
        GN_TRY(set_dims(c, 0, x->rank, d));
        for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape;
        return GN_OK;
    }
    if (axis < -x->rank || axis >= x->rank)
        return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, x->rank);
    if (axis < 0) axis += x->rank;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (uint32_t k = 0; k < c->n_out && k < n; k++) {
        d[axis] = sizes[k];
        GN_TRY(set_dims_like(c, k, x->rank, d, k ? &c->out[k - 1].shape : NULL));
    }
    return GN_OK;
}

gn_status gn__sf_split(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 1);
    int64_t axis = 0;
    bool ak = scalar_val(c, 0, &axis);
    int64_t num = attr_i(c, "num_split", (int64_t)c->n_out);
    if (num <= 0) return gn__shape_fail(c, "num_split must be positive");
    int64_t size = -1;
    if (ak && x->rank >= 0) {
        int64_t a = axis < 0 ? axis + x->rank : axis;
        if (a >= 0 && a < x->rank && x->dims[a] >= 0) {
            if (x->dims[a] % num != 0)
                return gn__shape_fail(c, "dimension %lld (size %lld) is not divisible by num_split %lld", (long long)a,
                                      (long long)x->dims[a], (long long)num);
            size = x->dims[a] / num;
        }
    }
    int64_t sizes[1024];
    uint32_t n = c->n_out < 1024 ? c->n_out : 1024;
    for (uint32_t k = 0; k < n; k++) sizes[k] = size;
    return split_common(c, x, ak, axis, sizes, n);
}

gn_status gn__sf_split_v(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    int64_t axis = 0;
    bool ak = scalar_val(c, 2, &axis);
    const gn__partial_value *sv = VAL(c, 1);
    uint32_t n = c->n_out < 1024 ? c->n_out : 1024;
    int64_t sizes[1024];
    for (uint32_t k = 0; k < n; k++) sizes[k] = -1;
    if (sv && sv->n == (int64_t)c->n_out && ak && x->rank >= 0) {
        int64_t a = axis < 0 ? axis + x->rank : axis;
        int64_t dim = a >= 0 && a < x->rank ? x->dims[a] : -1;
        int32_t wild = -1;
        bool all = true;
        int64_t sum = 0;
        for (uint32_t k = 0; k < n; k++) {
            int64_t e = 0;
            if (!vget(sv, k, &e)) {
                all = false;
                continue;
            }
            if (e == -1) {
                if (wild >= 0) return gn__shape_fail(c, "only one size_splits entry may be -1");
                wild = (int32_t)k;
                continue;
            }
            if (e < -1) return gn__shape_fail(c, "size_splits entry %u is %lld", k, (long long)e);
            sizes[k] = e;
            if (__builtin_add_overflow(sum, e, &sum)) return gn__shape_fail(c, "size_splits overflow");
        }
        if (all && dim >= 0) {
            if (wild >= 0) {
                if (sum > dim)
                    return gn__shape_fail(c, "size_splits add up to %lld, more than dimension size %lld", (long long)sum,
                                          (long long)dim);
                sizes[wild] = dim - sum;
            } else if (sum != dim) {
                return gn__shape_fail(c, "size_splits add up to %lld, not the dimension size %lld", (long long)sum,
                                      (long long)dim);
            }
        }
    }
    return split_common(c, x, ak, axis, sizes, n);
}

gn_status gn__sf_slice(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = VAL(c, 1), *sv = VAL(c, 2);
    int32_t r = x->rank;
    if (r < 0 && bv) r = (int32_t)bv->n;
    if (r < 0 && sv) r = (int32_t)sv->n;
    if (r < 0 && IS(c, 1)->rank == 1) r = (int32_t)IS(c, 1)->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    if ((bv && bv->n != r) || (sv && sv->n != r))
        return gn__shape_fail(c, "begin and size must have one entry per dimension (rank %d)", r);
    int64_t d[MAXR], b[MAXR];
    bool bk[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1;
        int64_t s = -1;
        bk[i] = vget(bv, i, &b[i]);
        bool sk = vget(sv, i, &s);
        d[i] = -1;
        if (bk[i] && (b[i] < 0 || (dim >= 0 && b[i] > dim)))
            return gn__shape_fail(c, "begin %lld out of range for dimension %d of size %lld", (long long)b[i], i,
                                  (long long)dim);
        if (!sk) continue;
        if (s == -1) {
            if (bk[i] && dim >= 0) d[i] = dim - b[i];
            continue;
        }
        if (s < -1) return gn__shape_fail(c, "size %lld for dimension %d", (long long)s, i);
        if (bk[i] && dim >= 0 && s > dim - b[i])
            return gn__shape_fail(c, "slice of size %lld at %lld out of range for dimension %d of size %lld",
                                  (long long)s, (long long)b[i], i, (long long)dim);
        d[i] = s;
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    const gn__partial_value *xv = VAL(c, 0);
    if (xv && r == 1 && bk[0] && d[0] >= 0 && b[0] + d[0] <= xv->n) {
        gn__partial_value *v = val_new(c, d[0], false);
        if (!v) return oom(c);
        for (int64_t j = 0; j < d[0]; j++) {
            int64_t e = 0;
            if (vget(xv, b[0] + j, &e)) vset(v, j, e);
        }
        c->out[0].value = v;
    }
    return GN_OK;
}

enum { SS_SHRINK = -1, SS_NEWAXIS = -2 };

gn_status gn__sf_strided_slice(ctx *c)
{
    NEED(c, 4, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = VAL(c, 1), *ev = VAL(c, 2), *sv = VAL(c, 3);
    if (x->rank < 0 || !sv || !vall_known(sv) || sv->shape.rank != 1) return GN_OK;
    int32_t n = (int32_t)sv->n;
    if (n > 31) return GN_OK;
    if (bv && bv->n != n) bv = NULL;
    if (ev && ev->n != n) ev = NULL;
    uint32_t bm = (uint32_t)attr_i(c, "begin_mask", 0), em = (uint32_t)attr_i(c, "end_mask", 0);
    uint32_t elm = (uint32_t)attr_i(c, "ellipsis_mask", 0), nam = (uint32_t)attr_i(c, "new_axis_mask", 0);
    uint32_t sam = (uint32_t)attr_i(c, "shrink_axis_mask", 0);
    if (elm & (elm - 1)) return gn__shape_fail(c, "multiple ellipses in a slice spec are not allowed");
    int32_t rank = x->rank;
    /* sparse -> dense */
    bool seen = false;
    int32_t add_after = 0;
    for (int32_t i = 0; i < n; i++) {
        if (seen && (nam & (1u << i))) add_after++;
        if (elm & (1u << i)) seen = true;
    }
    int32_t sdims = n;
    uint32_t selm = elm;
    if (!seen) {
        selm |= 1u << n;
        sdims++;
    }
    int64_t begin[MAXR], end[MAXR], stride[MAXR];
    bool bknown[MAXR], eknown[MAXR], dbm[MAXR], dem[MAXR], dsm[MAXR];
    int32_t gather[2 * MAXR + 32];
    int32_t ng = 0, full = 0;
    for (int32_t i = 0; i < sdims; i++) {
        if (selm & (1u << i)) {
            int32_t next = rank - (sdims - i) + 1 + add_after;
            if (next > rank) next = rank;
            for (; full < next; full++) {
                begin[full] = end[full] = 0;
                stride[full] = 1;
                bknown[full] = eknown[full] = true;
                dbm[full] = dem[full] = true;
                dsm[full] = false;
                gather[ng++] = full;
            }
        } else if (nam & (1u << i)) {
            if (ng >= 2 * MAXR + 32) return GN_OK;
            gather[ng++] = SS_NEWAXIS;
        } else {
            if (full == rank)
                return gn__shape_fail(c, "index out of range using input dim %d; input has only %d dims", full, rank);
            bknown[full] = vget(bv, i, &begin[full]);
            eknown[full] = vget(ev, i, &end[full]);
            stride[full] = sv->v[i];
            dbm[full] = (bm & (1u << i)) != 0;
            dem[full] = (em & (1u << i)) != 0;
            dsm[full] = (sam & (1u << i)) != 0;
            gather[ng++] = dsm[full] ? SS_SHRINK : full;
            full++;
        }
    }
    /* the remaining dims (an ellipsis that matched nothing leaves none) */
    for (; full < rank; full++) {
        begin[full] = end[full] = 0;
        stride[full] = 1;
        bknown[full] = eknown[full] = true;
        dbm[full] = dem[full] = true;
        dsm[full] = false;
    }
    int64_t proc[MAXR];
    int64_t cb[MAXR];
    bool cbk[MAXR];
    for (int32_t i = 0; i < rank; i++) {
        int64_t s = stride[i];
        cbk[i] = false;
        if (s == 0) return gn__shape_fail(c, "strides[%d] must be non-zero", i);
        int64_t dim = x->dims[i];
        if (dim < 0) {
            proc[i] = dsm[i] ? 1 : -1;
            continue;
        }
        if (dsm[i] && s <= 0) return gn__shape_fail(c, "only stride 1 allowed on non-range indexing");
        bool b_ok = dbm[i] || bknown[i], e_ok = dem[i] || eknown[i];
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
        if (dsm[i]) {
            proc[i] = 1;
            if (!bknown[i]) continue;
            int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
            if (xf < 0 || xf >= dim)
                return gn__shape_fail(c, "slice index %lld of dimension %d out of bounds", (long long)begin[i], i);
            cb[i] = xf;
            cbk[i] = true;
            continue;
        }
        if (b_ok && e_ok) {
            int64_t bb = 0, ee = 0;
            if (dbm[i]) bb = s > 0 ? lo : hi;
            else {
                int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
                bb = xf < lo ? lo : xf > hi ? hi : xf;
            }
            if (dem[i]) ee = s > 0 ? hi : lo;
            else {
                int64_t xf = end[i] < 0 ? dim + end[i] : end[i];
                ee = xf < lo ? lo : xf > hi ? hi : xf;
            }
            int64_t len = ee - bb;
            proc[i] = (len == 0 || ((len < 0) != (s < 0))) ? 0 : len / s + (len % s != 0 ? 1 : 0);
            cb[i] = bb;
            cbk[i] = true;
        } else if (dbm[i] && dem[i] && dim > 0) {
            int64_t len = s < 0 ? -dim : dim;
            proc[i] = len / s + (len % s != 0 ? 1 : 0);
        } else {
            proc[i] = -1;
        }
    }
    int64_t d[MAXR];
    int32_t r = 0;
    bool has_new = false;
    for (int32_t k = 0; k < ng; k++) {
        if (gather[k] == SS_SHRINK) continue;
        if (r >= MAXR) return GN_OK;
        if (gather[k] == SS_NEWAXIS) {
            d[r++] = 1;
            has_new = true;
        } else {
            d[r++] = proc[gather[k]];
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    /* values: a slice of a known vector (Shape -> StridedSlice) */
    const gn__partial_value *xv = VAL(c, 0);
    if (!xv || rank != 1 || has_new || !cbk[0] || xv->n != x->dims[0]) return GN_OK;
    int64_t cnt = proc[0];
    if (cnt < 0 || cnt > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, cnt, dsm[0]);
    if (!v) return oom(c);
    for (int64_t j = 0; j < cnt; j++) {
        int64_t e = 0;
        if (vget(xv, cb[0] + j * stride[0], &e)) vset(v, j, e);
    }
    c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_pad(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ps = IS(c, 1);
    const gn__partial_value *p = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && ps->rank == 2 && ps->dims[0] >= 0) r = (int32_t)ps->dims[0];
    if (r < 0 && p) r = (int32_t)(p->n / 2);
    if (r < 0 || r > MAXR) return GN_OK;
    if (ps->rank >= 0 && (ps->rank != 2 || (ps->dims[0] >= 0 && ps->dims[0] != r) || (ps->dims[1] >= 0 && ps->dims[1] != 2))) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "paddings must be [%d, 2] for input %s, got %s", r, sstr(x, s1), sstr(ps, s2));
    }
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1, a, b;
        d[i] = -1;
        if (!p || p->n != 2 * r || !vget(p, 2 * i, &a) || !vget(p, 2 * i + 1, &b)) continue;
        if (a < 0 || b < 0) return gn__shape_fail(c, "paddings must be non-negative, got %lld and %lld for dimension %d",
                                                  (long long)a, (long long)b, i);
        if (dim >= 0 && (__builtin_add_overflow(dim, a, &d[i]) || __builtin_add_overflow(d[i], b, &d[i])))
            return gn__shape_fail(c, "padded dimension %d overflows", i);
    }
    return set_dims_like(c, 0, r, d, x);
}

gn_status gn__sf_tile(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ms = IS(c, 1);
    const gn__partial_value *m = VAL(c, 1);
    int32_t r = x->rank;
    if (r < 0 && m) r = (int32_t)m->n;
    if (r < 0 && ms->rank == 1) r = (int32_t)ms->dims[0];
    if (r < 0 || r > MAXR) return GN_OK;
    if (m && m->n != r)
        return gn__shape_fail(c, "multiples has %lld elements for a tensor of rank %d", (long long)m->n, r);
    int64_t d[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->rank >= 0 ? x->dims[i] : -1, k;
        bool kk = vget(m, i, &k);
        if (kk && k < 0) return gn__shape_fail(c, "multiples must be non-negative, got %lld", (long long)k);
        if ((kk && k == 0) || dim == 0) d[i] = 0;
        else if (kk && dim >= 0) {
            if (__builtin_mul_overflow(dim, k, &d[i])) return gn__shape_fail(c, "tiled dimension overflows");
        } else d[i] = -1;
    }
    return set_dims_like(c, 0, r, d, x);
}

gn_status gn__sf_fill(ctx *c)
{
    NEED(c, 2, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, 0, &s));
    c->out[0].shape = s;
    int64_t n = gn__shape_num_elements(&s), x;
    if (n >= 0 && n <= MAX_VALUE_ELEMS && s.rank <= 1 && scalar_val(c, 1, &x)) {
        gn__partial_value *v = val_new(c, n, s.rank == 0);
        if (!v) return oom(c);
        for (int64_t j = 0; j < n; j++) vset(v, j, x);
        c->out[0].value = v;
    }
    return GN_OK;
}

gn_status gn__sf_range(ctx *c)
{
    NEED(c, 3, 1);
    int64_t st, li, de;
    if (!scalar_val(c, 0, &st) || !scalar_val(c, 1, &li) || !scalar_val(c, 2, &de)) return set_vector(c, 0, -1);
    if (de == 0) return gn__shape_fail(c, "delta must not be 0");
    if (de == INT64_MIN) return set_vector(c, 0, -1);
    if (de > 0 && st > li) return gn__shape_fail(c, "start %lld > limit %lld with delta %lld > 0", (long long)st, (long long)li, (long long)de);
    if (de < 0 && st < li) return gn__shape_fail(c, "start %lld < limit %lld with delta %lld < 0", (long long)st, (long long)li, (long long)de);
    int64_t span, ad = de < 0 ? -de : de;
    if (__builtin_sub_overflow(li, st, &span)) return set_vector(c, 0, -1);
    if (span < 0) span = -span;
    int64_t n = span / ad + (span % ad != 0);
    GN_TRY(set_vector(c, 0, n));
    if (n <= MAX_VALUE_ELEMS) {
        gn__partial_value *v = val_new(c, n, false);
        if (!v) return oom(c);
        for (int64_t j = 0; j < n; j++) vset(v, j, st + j * de);
        c->out[0].value = v;
    }
    return GN_OK;
}

gn_status gn__sf_lin_space(ctx *c)
{
    NEED(c, 3, 1);
    int64_t n = 0;
    return set_vector(c, 0, scalar_val(c, 2, &n) && n >= 0 ? n : -1);
}

gn_status gn__sf_zeros_like(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

/* ---- gathers ---------------------------------------------------------------------- */
static gn_status gather_impl(ctx *c, const gn__shape *p, const gn__partial_value *pv, uint32_t idx_in, bool axis_known,
                             int64_t axis, int64_t bd)
{
    const gn__shape *ix = IS(c, idx_in);
    char s1[SB];
    if (p->rank >= 0 && p->rank < 1) return gn__shape_fail(c, "params must be at least 1-dimensional, got %s", sstr(p, s1));
    if (ix->rank >= 0 && bd < 0) bd += ix->rank;
    if (ix->rank >= 0 && (bd < 0 || bd > ix->rank))
        return gn__shape_fail(c, "batch_dims %lld out of range for indices %s", (long long)bd, sstr(ix, s1));
    if (p->rank < 0 || ix->rank < 0) return GN_OK;
    int32_t r = p->rank + ix->rank - 1 - (int32_t)bd;
    if (r < 0 || r > MAXR) return GN_OK;
    int64_t d[MAXR];
    if (!axis_known) {
        for (int32_t i = 0; i < r; i++) d[i] = -1;
        return set_dims(c, 0, r, d);
    }
    if (axis < -p->rank || axis >= p->rank)
        return gn__shape_fail(c, "axis %lld out of range for params %s", (long long)axis, sstr(p, s1));
    if (axis < 0) axis += p->rank;
    if (bd > axis) return gn__shape_fail(c, "batch_dims %lld must be <= axis %lld", (long long)bd, (long long)axis);
    int32_t k = 0;
    for (int32_t i = 0; i < axis; i++) {
        int64_t e = p->dims[i];
        if (i < bd && e < 0) e = ix->dims[i];
        d[k++] = e;
    }
    for (int32_t i = (int32_t)bd; i < ix->rank; i++) d[k++] = ix->dims[i];
    for (int32_t i = (int32_t)axis + 1; i < p->rank; i++) d[k++] = p->dims[i];
    GN_TRY(set_dims(c, 0, k, d));
    /* values: gathering from a known vector */
    const gn__partial_value *iv = VAL(c, idx_in);
    if (!pv || !iv || p->rank != 1 || ix->rank > 1 || iv->n > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, iv->n, ix->rank == 0);
    if (!v) return oom(c);
    for (int64_t j = 0; j < iv->n; j++) {
        int64_t q = 0, e = 0;
        if (vget(iv, j, &q) && q >= 0 && q < pv->n && vget(pv, q, &e)) vset(v, j, e);
    }
    if (vany_known(v)) c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_gather_v2(ctx *c)
{
    NEED(c, 3, 1);
    int64_t axis = 0;
    bool ak = scalar_val(c, 2, &axis);
    return gather_impl(c, IS(c, 0), VAL(c, 0), 1, ak, axis, attr_i(c, "batch_dims", 0));
}

gn_status gn__sf_gather(ctx *c)
{
    NEED(c, 2, 1);
    return gather_impl(c, IS(c, 0), VAL(c, 0), 1, true, 0, 0);
}

gn_status gn__sf_resource_gather(ctx *c)
{
    NEED(c, 2, 1);
    const gn__handle_data *h = c->in[0].handle;
    if (!h) return GN_OK;
    return gather_impl(c, &h->shape, NULL, 1, true, attr_i(c, "batch_dims", 0), attr_i(c, "batch_dims", 0));
}

gn_status gn__sf_gather_nd(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *p = IS(c, 0), *ix = IS(c, 1);
    if (ix->rank < 1 || p->rank < 0) return GN_OK;
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 0) return GN_OK;
    if (k > p->rank) return gn__shape_fail(c, "index depth %lld exceeds params rank %d", (long long)k, p->rank);
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < ix->rank - 1; i++) d[r++] = ix->dims[i];
    for (int32_t i = (int32_t)k; i < p->rank; i++) {
        if (r >= MAXR) return GN_OK;
        d[r++] = p->dims[i];
    }
    return set_dims(c, 0, r, d);
}
