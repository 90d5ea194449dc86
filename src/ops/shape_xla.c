/* Shape functions of TensorFlow's XLA ops (tf2xla). They mirror the ops' shape functions in TensorFlow's
 * tensorflow/compiler/tf2xla/ops/xla_ops.cc; the proto attrs are read by
 * src/ops/xla_attrs.c, which gives the kernels' messages too. */
#include "ops/shape_fn.h"

#include "ops/xla_attrs.h"

/* An entry xla_vec does not know (padding may be -1, so not -1). */
#define XLA_UNKNOWN INT64_MIN

/* Known entries of int vector input i into v[0..n) (XLA_UNKNOWN where
 * unknown); n = its length, -1 when unknown. */
static void xla_vec(const ctx *c, uint32_t i, int64_t *v, int32_t *n)
{
    *n = -1;
    const gn__partial_value *pv = VAL(c, i);
    const gn__shape *s = i < c->n_in ? IS(c, i) : NULL;
    int64_t len = pv && pv->shape.rank == 1 ? pv->n : (s && s->rank == 1 ? s->dims[0] : -1);
    if (len < 0 || len > MAXR) return;
    *n = (int32_t)len;
    for (int64_t j = 0; j < len; j++)
        if (!vget(pv, j, &v[j])) v[j] = XLA_UNKNOWN;
}

static gn_status xla_attr_fail(ctx *c, const char *why) { return gn__shape_fail(c, "%s", why); }

gn_status gn__sf_xla_dynamic_slice(ctx *c)
{
    NEED(c, 3, 1);
    int64_t sz[MAXR];
    int32_t n;
    xla_vec(c, 2, sz, &n);
    const gn__shape *x = IS(c, 0);
    if (n >= 0 && x->rank >= 0 && n != x->rank)
        return gn__shape_fail(c, "size_indices has %d entries; the input has rank %d", n, (int)x->rank);
    if (n < 0 && x->rank >= 0) {
        gn__shape s;
        if (!gn__shape_alloc(c->arena, x->rank, &s)) return oom(c);
        set_shape(c, 0, &s);
        return GN_OK;
    }
    return set_dims(c, 0, n, sz);
}

gn_status gn__sf_xla_dynamic_update_slice(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0), *u = IS(c, 1);
    char a[SB], b[SB];
    if (x->rank >= 0 && u->rank >= 0 && x->rank != u->rank)
        return gn__shape_fail(c, "update %s and input %s have different ranks", sstr(u, a), sstr(x, b));
    pass_through(c, 0, 0);
    c->out[0].value = NULL;
    return GN_OK;
}

gn_status gn__sf_xla_pad(ctx *c)
{
    NEED(c, 5, 1);
    const gn__shape *x = IS(c, 0);
    int64_t lo[MAXR], hi[MAXR], in[MAXR];
    int32_t nl, nh, ni;
    xla_vec(c, 2, lo, &nl);
    xla_vec(c, 3, hi, &nh);
    xla_vec(c, 4, in, &ni);
    int32_t r = x->rank >= 0 ? x->rank : nl;
    if (r < 0) return GN_OK;
    if ((nl >= 0 && nl != r) || (nh >= 0 && nh != r) || (ni >= 0 && ni != r))
        return gn__shape_fail(c, "padding_low, padding_high and padding_interior must have the input's rank %d", r);
    int64_t od[MAXR];
    for (int32_t i = 0; i < r; i++) {
        int64_t d = x->rank >= 0 ? x->dims[i] : -1;
        bool known = d >= 0 && nl >= 0 && nh >= 0 && ni >= 0 && lo[i] != XLA_UNKNOWN && hi[i] != XLA_UNKNOWN && in[i] >= 0;
        od[i] = known ? lo[i] + hi[i] + d + (d > 0 ? (d - 1) * in[i] : 0) : -1;
    }
    return set_dims(c, 0, r, od);
}

gn_status gn__sf_xla_broadcast_helper(ctx *c)
{
    NEED(c, 3, 2);
    const gn__shape *l = IS(c, 0), *r = IS(c, 1);
    pass_through(c, 0, 0);
    pass_through(c, 1, 1);
    if (l->rank < 0 || r->rank < 0 || l->rank == r->rank) return GN_OK;
    bool lsmall = l->rank < r->rank;
    const gn__shape *s = lsmall ? l : r, *b = lsmall ? r : l;
    int64_t bd[MAXR];
    int32_t nb;
    xla_vec(c, 2, bd, &nb);
    uint32_t k = lsmall ? 0 : 1;
    c->out[k].value = NULL;
    if (nb != s->rank) {
        if (nb >= 0)
            return gn__shape_fail(c, "broadcast_dims has %d entries; the lower-rank operand has rank %d", nb,
                                  (int)s->rank);
        return set_dims(c, k, -1, NULL);
    }
    int64_t dims[MAXR];
    for (int32_t i = 0; i < b->rank; i++) dims[i] = 1;
    for (int32_t i = 0; i < nb; i++) {
        if (bd[i] < 0) {   /* not known: the rank only */
            for (int32_t j = 0; j < b->rank; j++) dims[j] = -1;
            return set_dims(c, k, b->rank, dims);
        }
        if (bd[i] >= b->rank)
            return gn__shape_fail(c, "broadcast_dims[%d] = %lld is out of range for rank %d", i, (long long)bd[i],
                                  (int)b->rank);
        dims[bd[i]] = s->dims[i];
    }
    return set_dims(c, k, b->rank, dims);
}

gn_status gn__sf_xla_gather(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0), *idx = IS(c, 1);
    gn__xla_gather_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_gather_attr(c->g, c->node, x->rank, idx->rank, &d, why)) return xla_attr_fail(c, why);
    if (idx->rank < 0) return GN_OK;
    int64_t ss[MAXR];
    int32_t ns;
    xla_vec(c, 2, ss, &ns);
    int64_t ivd = d.index_vector_dim;
    int32_t orank = (int32_t)(idx->rank - (ivd < idx->rank ? 1 : 0)) + d.offset_dims.n;
    if (orank > MAXR) return GN_OK;
    bool is_off[MAXR] = {false}, collapsed[MAXR] = {false};
    for (int32_t i = 0; i < d.offset_dims.n; i++) {
        if (d.offset_dims.v[i] >= orank) return GN_OK;
        is_off[d.offset_dims.v[i]] = true;
    }
    int32_t r = x->rank >= 0 ? x->rank : ns;
    for (int32_t i = 0; i < d.collapsed_slice_dims.n; i++)
        if (d.collapsed_slice_dims.v[i] < MAXR) collapsed[d.collapsed_slice_dims.v[i]] = true;
    int32_t noncol[MAXR], nnc = 0;
    for (int32_t i = 0; r >= 0 && i < r; i++)
        if (!collapsed[i]) noncol[nnc++] = i;
    int64_t od[MAXR];
    int32_t bi = 0, oi = 0;
    for (int32_t i = 0; i < orank; i++) {
        if (is_off[i]) {
            od[i] = (ns >= 0 && oi < nnc) ? ss[noncol[oi]] : -1;
            oi++;
        } else {
            if (bi == ivd) bi++;
            od[i] = idx->dims[bi++];
        }
    }
    return set_dims(c, 0, orank, od);
}

gn_status gn__sf_xla_scatter(ctx *c)
{
    NEED(c, 3, 1);
    gn__xla_scatter_dims d;
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_scatter_attr(c->g, c->node, IS(c, 0)->rank, IS(c, 1)->rank, IS(c, 2)->rank, &d, why) ||
        !gn__xla_fn_attr(c->g, c->node, "update_computation", false, &f, why))
        return xla_attr_fail(c, why);
    pass_through(c, 0, 0);
    c->out[0].value = NULL;
    return GN_OK;
}

gn_status gn__sf_xla_dot(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    gn__xla_dot_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_dot_attr(c->g, c->node, a->rank, b->rank, &d, why) ||
        !gn__xla_proto_attr_ok(c->g, c->node, "precision_config", "xla.PrecisionConfig", why))
        return xla_attr_fail(c, why);
    if (a->rank < 0 || b->rank < 0) return GN_OK;
    bool ua[MAXR] = {false}, ub[MAXR] = {false};
    for (int32_t i = 0; i < d.lhs_contracting.n; i++) ua[d.lhs_contracting.v[i]] = true;
    for (int32_t i = 0; i < d.lhs_batch.n; i++) ua[d.lhs_batch.v[i]] = true;
    for (int32_t i = 0; i < d.rhs_contracting.n; i++) ub[d.rhs_contracting.v[i]] = true;
    for (int32_t i = 0; i < d.rhs_batch.n; i++) ub[d.rhs_batch.v[i]] = true;
    int64_t od[MAXR];
    int32_t n = 0;
    for (int32_t i = 0; i < d.lhs_batch.n; i++) od[n++] = a->dims[d.lhs_batch.v[i]];
    for (int32_t i = 0; i < a->rank; i++)
        if (!ua[i] && n < MAXR) od[n++] = a->dims[i];
    for (int32_t i = 0; i < b->rank; i++)
        if (!ub[i] && n < MAXR) od[n++] = b->dims[i];
    return set_dims(c, 0, n, od);
}

static gn_status xla_reduced(ctx *c, uint32_t k, const gn__shape *x, const Tensorflow__AttrValue__ListValue *l);

gn_status gn__sf_xla_reduce(ctx *c)
{
    NEED(c, 2, 1);
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "reducer", false, &f, why)) return xla_attr_fail(c, why);
    const gn__shape *x = IS(c, 0);
    const Tensorflow__AttrValue__ListValue *l = attr_list(c, "dimensions_to_reduce");
    if (x->rank < 0 || !l) return GN_OK;
    return xla_reduced(c, 0, x, l);
}

gn_status gn__sf_xla_sort(ctx *c)
{
    NEED(c, 1, 1);
    pass_through(c, 0, 0);
    c->out[0].value = NULL;
    return GN_OK;
}

gn_status gn__sf_xla_variadic_sort(ctx *c)
{
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "comparator", true, &f, why)) return xla_attr_fail(c, why);
    for (uint32_t k = 0; k < c->n_out && k + 1 < c->n_in; k++) {
        pass_through(c, k, k);
        c->out[k].value = NULL;
    }
    return GN_OK;
}

gn_status gn__sf_xla_sharding(ctx *c)
{
    NEED(c, 1, 1);
    char why[GN__XLA_WHY];
    if (!gn__xla_proto_attr_ok(c->g, c->node, "sharding", "xla.OpSharding", why)) return xla_attr_fail(c, why);
    pass_through(c, 0, 0);
    return GN_OK;
}

/* A scalar int input's value, -1 when unknown. */
static int64_t xla_scalar(const ctx *c, uint32_t i)
{
    int64_t v;
    const gn__partial_value *pv = VAL(c, i);
    return pv && pv->shape.rank == 0 && vget(pv, 0, &v) ? v : -1;
}

gn_status gn__sf_xla_set_dynamic_dimension_size(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return GN_OK;
    int64_t d = xla_scalar(c, 1), size = xla_scalar(c, 2);
    if (d >= x->rank)
        return gn__shape_fail(c, "dim_index %lld is out of range for rank %d", (long long)d, (int)x->rank);
    int64_t od[MAXR];
    for (int32_t i = 0; i < x->rank; i++) od[i] = x->dims[i];
    if (d >= 0) od[d] = size;
    else
        for (int32_t i = 0; i < x->rank; i++) od[i] = -1;
    return set_dims(c, 0, x->rank, od);
}

gn_status gn__sf_xla_remove_dynamic_dimension_size(ctx *c)
{
    NEED(c, 2, 1);
    pass_through(c, 0, 0);
    c->out[0].value = NULL;
    return GN_OK;
}

/* The output dims of dimensions_to_reduce over x (unknown rank: unknown). */
static gn_status xla_reduced(ctx *c, uint32_t k, const gn__shape *x, const Tensorflow__AttrValue__ListValue *l)
{
    if (x->rank < 0 || !l) return set_dims(c, k, -1, NULL);
    bool red[MAXR] = {false};
    for (size_t i = 0; i < l->n_i; i++) {
        if (l->i[i] < 0 || l->i[i] >= x->rank)
            return gn__shape_fail(c, "attr 'dimensions_to_reduce': dimension %lld is out of range for rank %d",
                                  (long long)l->i[i], (int)x->rank);
        red[l->i[i]] = true;
    }
    int64_t od[MAXR];
    int32_t n = 0;
    for (int32_t i = 0; i < x->rank; i++)
        if (!red[i]) od[n++] = x->dims[i];
    return set_dims(c, k, n, od);
}

gn_status gn__sf_xla_variadic_reduce(ctx *c)
{
    uint32_t n = c->n_out;
    if (!n || c->n_in != 2 * n || n > GN__XLA_MAXN) return GN_OK;
    gn__xla_fn_kind kinds[GN__XLA_MAXN];
    char why[GN__XLA_WHY];
    if (!gn__xla_variadic_fn_attr(c->g, c->node, "reducer", (int32_t)n, kinds, why)) return xla_attr_fail(c, why);
    const Tensorflow__AttrValue__ListValue *l = attr_list(c, "dimensions_to_reduce");
    for (uint32_t k = 0; k < n; k++) GN_TRY(xla_reduced(c, k, IS(c, k), l));
    return GN_OK;
}

/* Output dims of a window over x: inputs (dims, strides, base dilations,
 * window dilations; < 0: ones) and a [rank, 2] padding input. */
static gn_status xla_window_shape(ctx *c, int in_dims, int in_str, int in_bd, int in_wd, int in_pad)
{
    const gn__shape *x = IS(c, 0);
    int32_t r = x->rank;
    if (r < 0) return GN_OK;
    int64_t w[MAXR], s[MAXR], bd[MAXR], wd[MAXR], od[MAXR];
    int32_t nw, nst, nbd = r, nwd = r;
    xla_vec(c, (uint32_t)in_dims, w, &nw);
    xla_vec(c, (uint32_t)in_str, s, &nst);
    for (int32_t i = 0; i < r; i++) bd[i] = wd[i] = 1;
    if (in_bd >= 0) xla_vec(c, (uint32_t)in_bd, bd, &nbd);
    if (in_wd >= 0) xla_vec(c, (uint32_t)in_wd, wd, &nwd);
    if ((nw >= 0 && nw != r) || (nst >= 0 && nst != r) || (nbd >= 0 && nbd != r) || (nwd >= 0 && nwd != r))
        return gn__shape_fail(c, "the window inputs must have the operand's rank %d", (int)r);
    const gn__partial_value *pv = VAL(c, (uint32_t)in_pad);
    for (int32_t i = 0; i < r; i++) {
        int64_t lo, hi;
        bool known = x->dims[i] >= 0 && nw == r && nst == r && nbd == r && nwd == r && w[i] >= 1 && s[i] >= 1 &&
                     bd[i] >= 1 && wd[i] >= 1 && vget(pv, 2 * i, &lo) && vget(pv, 2 * i + 1, &hi);
        if (!known) {
            od[i] = -1;
            continue;
        }
        int64_t base = x->dims[i] ? (x->dims[i] - 1) * bd[i] + 1 : 0, padded = base + lo + hi;
        int64_t span = (w[i] - 1) * wd[i] + 1;
        od[i] = padded >= span ? (padded - span) / s[i] + 1 : 0;
    }
    return set_dims(c, 0, r, od);
}

gn_status gn__sf_xla_reduce_window(ctx *c)
{
    NEED(c, 7, 1);
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "computation", false, &f, why)) return xla_attr_fail(c, why);
    return xla_window_shape(c, 2, 3, 4, 5, 6);
}

gn_status gn__sf_xla_select_and_scatter(ctx *c)
{
    NEED(c, 6, 1);
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "select", true, &f, why) ||
        !gn__xla_fn_attr(c->g, c->node, "scatter", false, &f, why))
        return xla_attr_fail(c, why);
    pass_through(c, 0, 0);
    c->out[0].value = NULL;
    return GN_OK;
}

gn_status gn__sf_xla_conv(ctx *c)
{
    NEED(c, 7, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    gn__xla_conv_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_conv_attr(c->g, c->node, a->rank, b->rank, &d, why) ||
        !gn__xla_proto_attr_ok(c->g, c->node, "precision_config", "xla.PrecisionConfig", why))
        return xla_attr_fail(c, why);
    int32_t ns = d.in_spatial.n;
    if (ns + 2 > MAXR) return GN_OK;
    int64_t st[MAXR], ld[MAXR], rd[MAXR], od[MAXR];
    int32_t n1, n2, n3;
    xla_vec(c, 2, st, &n1);
    xla_vec(c, 4, ld, &n2);
    xla_vec(c, 5, rd, &n3);
    const gn__partial_value *pv = VAL(c, 3);
    od[d.out_batch] = a->rank >= 0 ? a->dims[d.in_batch] : -1;
    od[d.out_feature] = b->rank >= 0 ? b->dims[d.k_out_feature] : -1;
    for (int32_t i = 0; i < ns; i++) {
        int64_t lo, hi, in = a->rank >= 0 ? a->dims[d.in_spatial.v[i]] : -1,
                         k = b->rank >= 0 ? b->dims[d.k_spatial.v[i]] : -1;
        bool known = in >= 0 && k >= 0 && n1 == ns && n2 == ns && n3 == ns && st[i] >= 1 && ld[i] >= 1 &&
                     rd[i] >= 1 && vget(pv, 2 * i, &lo) && vget(pv, 2 * i + 1, &hi);
        if (!known) {
            od[d.out_spatial.v[i]] = -1;
            continue;
        }
        int64_t base = in ? (in - 1) * ld[i] + 1 : 0, padded = base + lo + hi, span = k ? (k - 1) * rd[i] + 1 : 0;
        od[d.out_spatial.v[i]] = padded >= span ? (padded - span) / st[i] + 1 : 0;
    }
    return set_dims(c, 0, ns + 2, od);
}
