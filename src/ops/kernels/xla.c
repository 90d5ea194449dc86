/* CPU kernels of TensorFlow's XLA ops (tf2xla) that TensorFlow-backend Keras 3
 * and jit_compile functions write into graphs: XlaDynamicSlice,
 * XlaDynamicUpdateSlice, XlaPad, XlaGather, XlaScatter, XlaDotV2, XlaConvV2,
 * XlaReduce, XlaVariadicReduceV2, XlaReduceWindow, XlaSelectAndScatter,
 * XlaSort, XlaVariadicSort, XlaBroadcastHelper, XlaEinsum, XlaSharding,
 * XlaOptimizationBarrier, XlaSetDynamicDimensionSize and
 * XlaRemoveDynamicDimensionSize. Semantics are XLA's (the operation semantics of
 * XLA's HLO): start indices are clamped into the operand, XlaPad takes negative
 * (cropping) and interior padding, out-of-bounds scatter windows are skipped.
 *
 * Proto attrs and computation attrs are read by src/ops/xla_attrs.c; a form
 * not supported is an error naming the node, the attr and what it holds.
 * Arithmetic (XlaReduce, XlaScatter's combiner, XlaDotV2) runs in double for
 * floating dtypes, rounded to the dtype after every step of a reduction, and
 * in int64 for integer dtypes. */
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/array_impl.h"
#include "ops/kernels/math_internal.h"
#include "ops/kernels/nn_internal.h"
#include "ops/xla_attrs.h"

#define MAXD GN__MAX_DIMS

static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    for (uint32_t i = 0; i < n; i++)
        if (!c->in[i].dtype) return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is not set", i);
    return GN_OK;
}

static gn_status attr_fail(gn__kctx *c, const char *why) { return gn__kctx_fail(c, GN_ERR_GRAPH, "%s", why); }

static size_t esize(gn__kctx *c, int32_t dt)
{
    (void)c;
    return gn__dtype_size(dt);
}

/* An int32/int64 vector input of exactly `want` entries (want < 0: any up to MAXD). */
static gn_status read_vec(gn__kctx *c, uint32_t in, const char *what, int32_t want, int64_t *v, int32_t *n)
{
    const gn__tensor *t = &c->in[in];
    if (t->dtype != GN_DT_I32 && t->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, not %s", what, gn__dtype_name(t->dtype));
    if (t->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a vector, not of rank %d", what, (int)t->rank);
    int64_t cnt = t->dims[0];
    if (want >= 0 && cnt != want)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s has %lld entries; the operand has rank %d", what, (long long)cnt,
                             (int)want);
    if (cnt > MAXD) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%s has %lld entries, over %d", what, (long long)cnt, MAXD);
    for (int64_t i = 0; i < cnt; i++) v[i] = gn__km_int_at(t, i);
    if (n) *n = (int32_t)cnt;
    return GN_OK;
}

static void strides(int32_t r, const int64_t *d, int64_t *s)
{
    int64_t m = 1;
    for (int32_t i = r - 1; i >= 0; i--) {
        s[i] = m;
        m *= d[i];
    }
}

/* Next multi-index in row-major order; false after the last. */
static bool next_index(int32_t r, const int64_t *d, int64_t *ix)
{
    for (int32_t i = r - 1; i >= 0; i--) {
        if (++ix[i] < d[i]) return true;
        ix[i] = 0;
    }
    return false;
}

static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* ---- scalar arithmetic on any numeric dtype ----------------------------------------- */
/* the integers and bool: what XLA's integer arithmetic takes (floats: gn__dtype_is_float) */
static bool is_int(int32_t dt) { return gn__dtype_is_integer(dt) || dt == GN_DT_BOOL; }


static double ldf(const void *p, int32_t dt, int64_t i)
{
    switch (dt) {
    case GN_DT_F32: return ((const float *)p)[i];
    case GN_DT_F64: return ((const double *)p)[i];
    case GN_DT_F16: return gn__km_h2f(((const uint16_t *)p)[i]);
    default: return gn__km_bf2f(((const uint16_t *)p)[i]);
    }
}

static void stf(void *p, int32_t dt, int64_t i, double v)
{
    switch (dt) {
    case GN_DT_F32: ((float *)p)[i] = (float)v; break;
    case GN_DT_F64: ((double *)p)[i] = v; break;
    case GN_DT_F16: ((uint16_t *)p)[i] = gn__km_f2h((float)v); break;
    default: ((uint16_t *)p)[i] = gn__km_f2bf((float)v); break;
    }
}

static int64_t ldi(const void *p, int32_t dt, int64_t i)
{
    switch (dt) {
    case GN_DT_I8: return ((const int8_t *)p)[i];
    case GN_DT_I16: return ((const int16_t *)p)[i];
    case GN_DT_I32: return ((const int32_t *)p)[i];
    case GN_DT_I64: return ((const int64_t *)p)[i];
    case GN_DT_U8: return ((const uint8_t *)p)[i];
    case GN_DT_U16: return ((const uint16_t *)p)[i];
    case GN_DT_U32: return ((const uint32_t *)p)[i];
    case GN_DT_U64: return (int64_t)((const uint64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0;   /* bool */
    }
}

static void sti(void *p, int32_t dt, int64_t i, int64_t v)
{
    switch (dt) {
    case GN_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case GN_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case GN_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case GN_DT_I64: ((int64_t *)p)[i] = v; break;
    case GN_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case GN_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case GN_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case GN_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

static double combf(gn__xla_fn_kind k, double a, double b)
{
    switch (k) {
    case GN__XLA_FN_ADD: return a + b;
    case GN__XLA_FN_MUL: return a * b;
    case GN__XLA_FN_MAX: return (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b);   /* NaN propagates */
    case GN__XLA_FN_MIN: return (a != a || b != b) ? (a != a ? a : b) : (a < b ? a : b);
    case GN__XLA_FN_REPLACE: return b;
    default: return (a != 0) && (b != 0);
    }
}

static int64_t combi(gn__xla_fn_kind k, int32_t dt, int64_t a, int64_t b)
{
    bool u = gn__dtype_is_unsigned(dt);
    switch (k) {
    case GN__XLA_FN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case GN__XLA_FN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case GN__XLA_FN_MAX: return u ? ((uint64_t)a > (uint64_t)b ? a : b) : (a > b ? a : b);
    case GN__XLA_FN_MIN: return u ? ((uint64_t)a < (uint64_t)b ? a : b) : (a < b ? a : b);
    case GN__XLA_FN_AND: return (a != 0) && (b != 0);
    case GN__XLA_FN_OR: return (a != 0) || (b != 0);
    default: return b;
    }
}

/* dst[di] = f(dst[di], src[si]) for dtype dt */
static void combine_at(gn__xla_fn_kind k, int32_t dt, void *dst, int64_t di, const void *src, int64_t si)
{
    if (gn__dtype_is_float(dt)) stf(dst, dt, di, combf(k, ldf(dst, dt, di), ldf(src, dt, si)));
    else sti(dst, dt, di, combi(k, dt, ldi(dst, dt, di), ldi(src, dt, si)));
}

static gn_status check_combiner(gn__kctx *c, int32_t dt, const gn__xla_fn *f, const char *key)
{
    bool logical = f->kind == GN__XLA_FN_AND || f->kind == GN__XLA_FN_OR;
    if (!gn__dtype_is_float(dt) && !is_int(dt)) return gn__km_bad_dtype(c, dt);
    if (logical && dt != GN_DT_BOOL)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr '%s': a %s computation needs bool operands, not %s", key,
                             gn__xla_fn_name(f->kind), gn__dtype_name(dt));
    return GN_OK;
}

/* ---- XlaDynamicSlice / XlaDynamicUpdateSlice -------------------------------------------- */
gn_status gn__xla_k_dynamic_slice(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0];
    int32_t r = x->rank;
    int64_t st[MAXD], sz[MAXD];
    GN_TRY(read_vec(c, 1, "start_indices", r, st, NULL));
    GN_TRY(read_vec(c, 2, "size_indices", r, sz, NULL));
    for (int32_t i = 0; i < r; i++) {
        if (sz[i] < 0 || sz[i] > x->dims[i])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "size_indices[%d] = %lld is out of range for dimension %d of size %lld",
                                 i, (long long)sz[i], i, (long long)x->dims[i]);
        st[i] = clamp64(st[i], 0, x->dims[i] - sz[i]);
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, r, sz, &o));
    size_t es = esize(c, x->dtype);
    int64_t xs[MAXD], os[MAXD], off = 0;
    strides(r, x->dims, xs);
    strides(r, sz, os);
    for (int32_t i = 0; i < r; i++) off += st[i] * xs[i];
    if (gn__tensor_numel(o)) gn__ak_copy_nd(o->data, os, (const char *)x->data + off * (int64_t)es, xs, r, sz, es);
    return GN_OK;
}

gn_status gn__xla_k_dynamic_update_slice(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *u = &c->in[1];
    int32_t r = x->rank;
    if (u->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "update is %s, input is %s", gn__dtype_name(u->dtype),
                             gn__dtype_name(x->dtype));
    if (u->rank != r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "update has rank %d, input has rank %d", (int)u->rank, (int)r);
    int64_t st[MAXD];
    GN_TRY(read_vec(c, 2, "indices", r, st, NULL));
    for (int32_t i = 0; i < r; i++) {
        if (u->dims[i] > x->dims[i])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "update dimension %d is %lld, larger than the input's %lld", i,
                                 (long long)u->dims[i], (long long)x->dims[i]);
        st[i] = clamp64(st[i], 0, x->dims[i] - u->dims[i]);
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, r, x->dims, &o));
    size_t es = esize(c, x->dtype);
    if (x->nbytes) memcpy(o->data, x->data, x->nbytes);
    int64_t xs[MAXD], us[MAXD], off = 0;
    strides(r, x->dims, xs);
    strides(r, u->dims, us);
    for (int32_t i = 0; i < r; i++) off += st[i] * xs[i];
    if (gn__tensor_numel(u)) gn__ak_copy_nd((char *)o->data + off * (int64_t)es, xs, u->data, us, r, u->dims, es);
    return GN_OK;
}

/* ---- XlaPad ----------------------------------------------------------------------------- */
gn_status gn__xla_k_pad(gn__kctx *c)
{
    GN_TRY(need(c, 5));
    const gn__tensor *x = &c->in[0], *pv = &c->in[1];
    int32_t r = x->rank;
    if (pv->rank != 0 || pv->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "padding_value must be a %s scalar", gn__dtype_name(x->dtype));
    int64_t lo[MAXD], hi[MAXD], in[MAXD], od[MAXD];
    GN_TRY(read_vec(c, 2, "padding_low", r, lo, NULL));
    GN_TRY(read_vec(c, 3, "padding_high", r, hi, NULL));
    GN_TRY(read_vec(c, 4, "padding_interior", r, in, NULL));
    for (int32_t i = 0; i < r; i++) {
        if (in[i] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "padding_interior[%d] = %lld is negative", i, (long long)in[i]);
        int64_t d = x->dims[i];
        od[i] = lo[i] + hi[i] + d + (d > 0 ? (d - 1) * in[i] : 0);
        if (od[i] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "padding gives dimension %d the negative size %lld", i,
                                 (long long)od[i]);
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, r, od, &o));
    size_t es = esize(c, x->dtype);
    int64_t n = gn__tensor_numel(o);
    for (int64_t k = 0; k < n; k++) memcpy((char *)o->data + k * (int64_t)es, pv->data, es);
    if (!n || !gn__tensor_numel(x)) return GN_OK;
    int64_t os[MAXD], ix[MAXD] = {0};
    strides(r, od, os);
    int64_t k = 0;
    do {
        int64_t off = 0;
        bool inside = true;
        for (int32_t i = 0; i < r && inside; i++) {
            int64_t p = lo[i] + ix[i] * (in[i] + 1);
            inside = p >= 0 && p < od[i];
            off += p * os[i];
        }
        if (inside) memcpy((char *)o->data + off * (int64_t)es, (const char *)x->data + k * (int64_t)es, es);
        k++;
    } while (next_index(r, x->dims, ix));
    return GN_OK;
}

/* ---- XlaBroadcastHelper -------------------------------------------------------------------- */
gn_status gn__xla_k_broadcast_helper(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *l = &c->in[0], *rt = &c->in[1];
    int64_t bd[MAXD];
    int32_t nb;
    GN_TRY(read_vec(c, 2, "broadcast_dims", -1, bd, &nb));
    if (l->rank == rt->rank) {
        if (nb) return gn__kctx_fail(c, GN_ERR_GRAPH, "broadcast_dims must be empty when the ranks are equal");
        GN_TRY(gn__kctx_forward(c, 0, 0));
        return gn__kctx_forward(c, 1, 1);
    }
    bool lsmall = l->rank < rt->rank;
    const gn__tensor *s = lsmall ? l : rt, *b = lsmall ? rt : l;
    if (nb != s->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "broadcast_dims has %d entries; the lower-rank operand has rank %d", nb,
                             (int)s->rank);
    int64_t dims[MAXD];
    for (int32_t i = 0; i < b->rank; i++) dims[i] = 1;
    for (int32_t i = 0; i < nb; i++) {
        if (bd[i] < 0 || bd[i] >= b->rank || (i && bd[i] <= bd[i - 1]))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "broadcast_dims must be increasing and in [0, %d)", (int)b->rank);
        dims[bd[i]] = s->dims[i];
    }
    GN_TRY(gn__kctx_forward_reshape(c, lsmall ? 0 : 1, lsmall ? 0 : 1, b->rank, dims));
    return gn__kctx_forward(c, lsmall ? 1 : 0, lsmall ? 1 : 0);
}

/* ---- identities --------------------------------------------------------------------------- */
gn_status gn__xla_k_sharding(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    char why[GN__XLA_WHY];
    if (!gn__xla_proto_attr_ok(c->g, c->node, "sharding", "xla.OpSharding", why)) return attr_fail(c, why);
    return gn__kctx_forward(c, 0, 0);
}

gn_status gn__xla_k_optimization_barrier(gn__kctx *c)
{
    if (c->n_out > c->n_in) return gn__kctx_fail(c, GN_ERR_GRAPH, "%u outputs for %u inputs", c->n_out, c->n_in);
    for (uint32_t k = 0; k < c->n_out; k++) GN_TRY(gn__kctx_forward(c, k, k));
    return GN_OK;
}

/* ---- XlaGather ----------------------------------------------------------------------------- */
gn_status gn__xla_k_gather(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *idx = &c->in[1];
    if (idx->dtype != GN_DT_I32 && idx->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "start_indices must be int32 or int64, not %s",
                             gn__dtype_name(idx->dtype));
    gn__xla_gather_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_gather_attr(c->g, c->node, x->rank, idx->rank, &d, why)) return attr_fail(c, why);
    int32_t r = x->rank;
    int64_t ss[MAXD];
    GN_TRY(read_vec(c, 2, "slice_sizes", r, ss, NULL));
    int64_t ivd = d.index_vector_dim;
    gn__xla_gather_geom geo;
    if (!gn__xla_gather_shape(&d, r, x->dims, idx->rank, idx->dims, ss, &geo, why)) return attr_fail(c, why);
    int32_t orank = geo.out_rank;
    if (orank > MAXD) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank %d is over %d", orank, MAXD);
    const int64_t *od = geo.out_dims;
    bool is_off[MAXD];
    int32_t bmap[MAXD], omap[MAXD];   /* output dim -> indices dim / operand dim */
    for (int32_t i = 0; i < orank; i++) {
        is_off[i] = geo.out_map[i] >= 0;
        omap[i] = geo.out_map[i];
        bmap[i] = -1 - geo.out_map[i];
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, orank, od, &o));
    int64_t n = gn__tensor_numel(o);
    if (!n) return GN_OK;
    size_t es = esize(c, x->dtype);
    int64_t xs[MAXD], is[MAXD], ix[MAXD] = {0};
    strides(r, x->dims, xs);
    strides(idx->rank, idx->dims, is);
    int64_t k = 0;
    do {
        int64_t ib = 0;   /* offset of the index vector in start_indices */
        for (int32_t i = 0; i < orank; i++)
            if (!is_off[i]) ib += ix[i] * is[bmap[i]];
        int64_t start[MAXD] = {0};
        for (int32_t j = 0; j < d.start_index_map.n; j++) {
            int64_t dim = d.start_index_map.v[j];
            int64_t v = gn__km_int_at(idx, ib + (ivd < idx->rank ? j * is[ivd] : 0));
            start[dim] = clamp64(v, 0, x->dims[dim] - ss[dim]);
        }
        int64_t off = 0;
        for (int32_t i = 0; i < r; i++) off += start[i] * xs[i];
        for (int32_t i = 0; i < orank; i++)
            if (is_off[i]) off += ix[i] * xs[omap[i]];
        memcpy((char *)o->data + k * (int64_t)es, (const char *)x->data + off * (int64_t)es, es);
        k++;
    } while (next_index(orank, od, ix));
    return GN_OK;
}

/* ---- XlaScatter ---------------------------------------------------------------------------- */
gn_status gn__xla_k_scatter(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0], *idx = &c->in[1], *u = &c->in[2];
    if (idx->dtype != GN_DT_I32 && idx->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scatter_indices must be int32 or int64, not %s",
                             gn__dtype_name(idx->dtype));
    if (u->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "updates are %s, operand is %s", gn__dtype_name(u->dtype),
                             gn__dtype_name(x->dtype));
    gn__xla_scatter_dims d;
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_scatter_attr(c->g, c->node, x->rank, idx->rank, u->rank, &d, why)) return attr_fail(c, why);
    if (!gn__xla_fn_attr(c->g, c->node, "update_computation", false, &f, why)) return attr_fail(c, why);
    GN_TRY(check_combiner(c, x->dtype, &f, "update_computation"));
    int32_t r = x->rank;
    int64_t ivd = d.index_vector_dim;
    int64_t nidx = ivd < idx->rank ? idx->dims[ivd] : 1;
    if (nidx != d.scatter_dims_to_operand_dims.n)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "attr 'dimension_numbers': scatter_dims_to_operand_dims has %d entries, the index "
                             "vector %lld",
                             d.scatter_dims_to_operand_dims.n, (long long)nidx);
    bool is_win[MAXD] = {false}, inserted[MAXD] = {false};
    for (int32_t i = 0; i < d.update_window_dims.n; i++) is_win[d.update_window_dims.v[i]] = true;
    for (int32_t i = 0; i < d.inserted_window_dims.n; i++) inserted[d.inserted_window_dims.v[i]] = true;
    int32_t wmap[MAXD], smap[MAXD], wi = 0, si = 0, noins[MAXD], nno = 0;
    for (int32_t i = 0; i < r; i++)
        if (!inserted[i]) noins[nno++] = i;
    int32_t n_scatter = (int32_t)(idx->rank - (ivd < idx->rank ? 1 : 0));
    if (u->rank != n_scatter + d.update_window_dims.n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "updates have rank %d; the indices and dimension numbers need %d",
                             (int)u->rank, n_scatter + d.update_window_dims.n);
    int64_t wsize[MAXD];
    for (int32_t i = 0; i < r; i++) wsize[i] = 1;
    for (int32_t i = 0; i < u->rank; i++) {
        if (is_win[i]) {
            wmap[i] = noins[wi++];
            wsize[wmap[i]] = u->dims[i];
            if (u->dims[i] > x->dims[wmap[i]])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "update window dimension %d is larger than the operand's", i);
        } else {
            if (si == ivd) si++;
            smap[i] = si;
            if (u->dims[i] != idx->dims[si])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "updates dimension %d is %lld, scatter_indices has %lld", i,
                                     (long long)u->dims[i], (long long)idx->dims[si]);
            si++;
        }
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, r, x->dims, &o));
    if (x->nbytes) memcpy(o->data, x->data, x->nbytes);
    if (!gn__tensor_numel(u)) return GN_OK;
    size_t es = esize(c, x->dtype);
    int64_t xs[MAXD], is[MAXD], ix[MAXD] = {0};
    strides(r, x->dims, xs);
    strides(idx->rank, idx->dims, is);
    int64_t k = 0;
    do {
        int64_t ib = 0;
        for (int32_t i = 0; i < u->rank; i++)
            if (!is_win[i]) ib += ix[i] * is[smap[i]];
        int64_t start[MAXD] = {0};
        bool ok = true;
        for (int32_t j = 0; j < d.scatter_dims_to_operand_dims.n; j++) {
            int64_t dim = d.scatter_dims_to_operand_dims.v[j];
            start[dim] = gn__km_int_at(idx, ib + (ivd < idx->rank ? j * is[ivd] : 0));
        }
        for (int32_t i = 0; i < r; i++) ok = ok && start[i] >= 0 && start[i] <= x->dims[i] - wsize[i];
        if (ok) {
            int64_t off = 0;
            for (int32_t i = 0; i < r; i++) off += start[i] * xs[i];
            for (int32_t i = 0; i < u->rank; i++)
                if (is_win[i]) off += ix[i] * xs[wmap[i]];
            if (f.kind == GN__XLA_FN_REPLACE)
                memcpy((char *)o->data + off * (int64_t)es, (const char *)u->data + k * (int64_t)es, es);
            else combine_at(f.kind, x->dtype, o->data, off, u->data, k);
        }
        k++;
    } while (next_index(u->rank, u->dims, ix));
    return GN_OK;
}

/* ---- XlaReduce / XlaVariadicReduceV2 ------------------------------------------------------- */
/* The dimensions_to_reduce attr against rank r into red[]. */
static gn_status reduce_dims(gn__kctx *c, int32_t r, bool *red)
{
    const Tensorflow__AttrValue *av = gn__node_attr(c->g, c->node, "dimensions_to_reduce");
    if (!av || av->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'dimensions_to_reduce' is missing");
    for (int32_t i = 0; i < r; i++) red[i] = false;
    for (size_t i = 0; i < av->list->n_i; i++) {
        int64_t dd = av->list->i[i];
        if (dd < 0 || dd >= r || red[dd])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'dimensions_to_reduce': dimension %lld is out of range or repeated for rank %d",
                                 (long long)dd, (int)r);
        red[dd] = true;
    }
    return GN_OK;
}

/* Output k = the reduction of x over red[] by kind from init. */
static gn_status reduce_into(gn__kctx *c, uint32_t k_out, const gn__tensor *x, const gn__tensor *init,
                             gn__xla_fn_kind kind, const bool *red)
{
    int32_t r = x->rank;
    int64_t od[MAXD], xs[MAXD], ostr[MAXD] = {0};
    int32_t orank = 0;
    for (int32_t i = 0; i < r; i++)
        if (!red[i]) od[orank++] = x->dims[i];
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, k_out, x->dtype, orank, od, &o));
    size_t es = esize(c, x->dtype);
    int64_t n = gn__tensor_numel(o);
    for (int64_t k = 0; k < n; k++) memcpy((char *)o->data + k * (int64_t)es, init->data, es);
    if (!gn__tensor_numel(x)) return GN_OK;
    strides(r, x->dims, xs);
    strides(orank, od, ostr);
    int64_t map[MAXD];   /* input dim -> output stride (0 for reduced) */
    for (int32_t i = 0, j = 0; i < r; i++) map[i] = red[i] ? 0 : ostr[j++];
    int64_t ix[MAXD] = {0}, k = 0;
    do {
        int64_t off = 0;
        for (int32_t i = 0; i < r; i++) off += ix[i] * map[i];
        combine_at(kind, x->dtype, o->data, off, x->data, k);
        k++;
    } while (next_index(r, x->dims, ix));
    return GN_OK;
}

static gn_status check_init(gn__kctx *c, const gn__tensor *x, const gn__tensor *init, const char *what)
{
    if (init->dtype != x->dtype || init->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a %s scalar", what, gn__dtype_name(x->dtype));
    return GN_OK;
}

gn_status gn__xla_k_reduce(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    const gn__tensor *x = &c->in[0], *init = &c->in[1];
    GN_TRY(check_init(c, x, init, "init_value"));
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "reducer", false, &f, why)) return attr_fail(c, why);
    if (f.kind == GN__XLA_FN_REPLACE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "attr 'reducer' returns its second argument; not a reduction");
    GN_TRY(check_combiner(c, x->dtype, &f, "reducer"));
    bool red[MAXD];
    GN_TRY(reduce_dims(c, x->rank, red));
    return reduce_into(c, 0, x, init, f.kind, red);
}

gn_status gn__xla_k_variadic_reduce(gn__kctx *c)
{
    uint32_t n = c->n_in / 2;
    if (!n || c->n_in != 2 * n || c->n_out != n || n > GN__XLA_MAXN)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%u inputs and %u outputs: N inputs, N init values and N outputs wanted",
                             c->n_in, c->n_out);
    GN_TRY(need(c, c->n_in));
    gn__xla_fn_kind kinds[GN__XLA_MAXN];
    char why[GN__XLA_WHY];
    if (!gn__xla_variadic_fn_attr(c->g, c->node, "reducer", (int32_t)n, kinds, why)) return attr_fail(c, why);
    const gn__tensor *x0 = &c->in[0];
    bool red[MAXD];
    GN_TRY(reduce_dims(c, x0->rank, red));
    for (uint32_t k = 0; k < n; k++) {
        const gn__tensor *x = &c->in[k];
        bool same = x->rank == x0->rank;
        for (int32_t i = 0; same && i < x->rank; i++) same = x->dims[i] == x0->dims[i];
        if (!same) return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u has another shape than input 0", k);
        GN_TRY(check_init(c, x, &c->in[n + k], "init_values"));
        gn__xla_fn f = {kinds[k], 0, 2};
        GN_TRY(check_combiner(c, x->dtype, &f, "reducer"));
    }
    for (uint32_t k = 0; k < n; k++) GN_TRY(reduce_into(c, k, &c->in[k], &c->in[n + k], kinds[k], red));
    return GN_OK;
}

/* ---- XlaDotV2 ------------------------------------------------------------------------------- */
gn_status gn__xla_k_dot(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    const gn__tensor *a = &c->in[0], *b = &c->in[1];
    gn__xla_dot_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_dot_attr(c->g, c->node, a->rank, b->rank, &d, why)) return attr_fail(c, why);
    if (!gn__xla_proto_attr_ok(c->g, c->node, "precision_config", "xla.PrecisionConfig", why)) return attr_fail(c, why);
    int32_t odt = gn__km_attr_type(c, "preferred_element_type", a->dtype);
    if (!(gn__dtype_is_float(a->dtype) || is_int(a->dtype)) || !(gn__dtype_is_float(b->dtype) || is_int(b->dtype)))
        return gn__km_bad_dtype(c, gn__dtype_is_float(a->dtype) || is_int(a->dtype) ? b->dtype : a->dtype);
    if (!gn__dtype_is_float(odt) && !is_int(odt)) return gn__km_bad_dtype(c, odt);
    for (int32_t i = 0; i < d.lhs_contracting.n; i++)
        if (a->dims[d.lhs_contracting.v[i]] != b->dims[d.rhs_contracting.v[i]])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "contracting dimension %d: lhs has %lld, rhs %lld", i,
                                 (long long)a->dims[d.lhs_contracting.v[i]], (long long)b->dims[d.rhs_contracting.v[i]]);
    for (int32_t i = 0; i < d.lhs_batch.n; i++)
        if (a->dims[d.lhs_batch.v[i]] != b->dims[d.rhs_batch.v[i]])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "batch dimension %d: lhs has %lld, rhs %lld", i,
                                 (long long)a->dims[d.lhs_batch.v[i]], (long long)b->dims[d.rhs_batch.v[i]]);
    bool ua[MAXD] = {false}, ub[MAXD] = {false};
    for (int32_t i = 0; i < d.lhs_contracting.n; i++) ua[d.lhs_contracting.v[i]] = true;
    for (int32_t i = 0; i < d.lhs_batch.n; i++) ua[d.lhs_batch.v[i]] = true;
    for (int32_t i = 0; i < d.rhs_contracting.n; i++) ub[d.rhs_contracting.v[i]] = true;
    for (int32_t i = 0; i < d.rhs_batch.n; i++) ub[d.rhs_batch.v[i]] = true;
    /* output: batch, lhs free, rhs free; each output dim's stride in a and b */
    int64_t od[MAXD], sa[MAXD], sb[MAXD], as[MAXD], bs[MAXD];
    strides(a->rank, a->dims, as);
    strides(b->rank, b->dims, bs);
    int32_t orank = 0;
    for (int32_t i = 0; i < d.lhs_batch.n; i++, orank++) {
        od[orank] = a->dims[d.lhs_batch.v[i]];
        sa[orank] = as[d.lhs_batch.v[i]];
        sb[orank] = bs[d.rhs_batch.v[i]];
    }
    for (int32_t i = 0; i < a->rank; i++)
        if (!ua[i]) {
            if (orank >= MAXD) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank over %d", MAXD);
            od[orank] = a->dims[i];
            sa[orank] = as[i];
            sb[orank++] = 0;
        }
    for (int32_t i = 0; i < b->rank; i++)
        if (!ub[i]) {
            if (orank >= MAXD) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank over %d", MAXD);
            od[orank] = b->dims[i];
            sa[orank] = 0;
            sb[orank++] = bs[i];
        }
    int32_t nc = d.lhs_contracting.n;
    int64_t cd[MAXD], ca[MAXD], cb[MAXD];
    for (int32_t i = 0; i < nc; i++) {
        cd[i] = a->dims[d.lhs_contracting.v[i]];
        ca[i] = as[d.lhs_contracting.v[i]];
        cb[i] = bs[d.rhs_contracting.v[i]];
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, orank, od, &o));
    if (!gn__tensor_numel(o)) return GN_OK;
    bool fl = gn__dtype_is_float(odt);
    int64_t contracted = 1;
    for (int32_t i = 0; i < nc; i++) contracted *= cd[i];
    int64_t ix[MAXD] = {0}, k = 0;
    do {
        int64_t oa = 0, ob = 0;
        for (int32_t i = 0; i < orank; i++) {
            oa += ix[i] * sa[i];
            ob += ix[i] * sb[i];
        }
        double accf = 0;
        int64_t acci = 0;
        int64_t jx[MAXD] = {0};
        for (int64_t t = 0; t < contracted; t++) {
            int64_t pa = oa, pb = ob;
            for (int32_t i = 0; i < nc; i++) {
                pa += jx[i] * ca[i];
                pb += jx[i] * cb[i];
            }
            if (fl) {
                double va = gn__dtype_is_float(a->dtype) ? ldf(a->data, a->dtype, pa) : (double)ldi(a->data, a->dtype, pa);
                double vb = gn__dtype_is_float(b->dtype) ? ldf(b->data, b->dtype, pb) : (double)ldi(b->data, b->dtype, pb);
                accf += va * vb;
            } else {
                int64_t va = gn__dtype_is_float(a->dtype) ? (int64_t)ldf(a->data, a->dtype, pa) : ldi(a->data, a->dtype, pa);
                int64_t vb = gn__dtype_is_float(b->dtype) ? (int64_t)ldf(b->data, b->dtype, pb) : ldi(b->data, b->dtype, pb);
                acci = (int64_t)((uint64_t)acci + (uint64_t)va * (uint64_t)vb);
            }
            next_index(nc, cd, jx);
        }
        if (fl) stf(o->data, odt, k, accf);
        else sti(o->data, odt, k, acci);
        k++;
    } while (next_index(orank, od, ix));
    return GN_OK;
}

/* ---- XlaSort / XlaVariadicSort ------------------------------------------------------------------ */
typedef struct sort_key {
    const gn__tensor *t;
    gn__xla_fn_kind kind;
} sort_key;

/* a "comes before" b, by XLA's comparison of floats with NaN (x < NaN for XlaSort's total order). */
static bool before(const sort_key *s, int64_t i, int64_t j)
{
    int32_t dt = s->t->dtype;
    int cmp;
    if (gn__dtype_is_float(dt)) {
        double a = ldf(s->t->data, dt, i), b = ldf(s->t->data, dt, j);
        if (a != a || b != b) cmp = (a != a) - (b != b);
        else cmp = (a > b) - (a < b);
    } else if (gn__dtype_is_unsigned(dt)) {
        uint64_t a = (uint64_t)ldi(s->t->data, dt, i), b = (uint64_t)ldi(s->t->data, dt, j);
        cmp = (a > b) - (a < b);
    } else {
        int64_t a = ldi(s->t->data, dt, i), b = ldi(s->t->data, dt, j);
        cmp = (a > b) - (a < b);
    }
    switch (s->kind) {
    case GN__XLA_FN_LESS: return cmp < 0;
    case GN__XLA_FN_GREATER: return cmp > 0;
    case GN__XLA_FN_LE: return cmp <= 0;
    default: return cmp >= 0;
    }
}

/* Stable merge sort of perm[0..n) (positions base + p * stride). */
static void merge_sort(const sort_key *s, int64_t base, int64_t stride, int64_t *perm, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                /* take from the right only when it strictly comes before the left */
                if (before(s, base + perm[j] * stride, base + perm[i] * stride) &&
                    !before(s, base + perm[i] * stride, base + perm[j] * stride))
                    tmp[k++] = perm[j++];
                else tmp[k++] = perm[i++];
            }
            while (i < mid) tmp[k++] = perm[i++];
            while (j < hi) tmp[k++] = perm[j++];
        }
        memcpy(perm, tmp, (size_t)n * sizeof *perm);
    }
}

static gn_status sort_common(gn__kctx *c, uint32_t n_ops, int64_t dim, const sort_key *key)
{
    const gn__tensor *x0 = &c->in[0];
    int32_t r = x0->rank;
    if (r == 0) {
        for (uint32_t k = 0; k < n_ops; k++) GN_TRY(gn__kctx_forward(c, k, k));
        return GN_OK;
    }
    if (dim < 0 || dim >= r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "dimension %lld is out of range for rank %d", (long long)dim, (int)r);
    for (uint32_t k = 1; k < n_ops; k++) {
        const gn__tensor *t = &c->in[k];
        bool same = t->rank == r;
        for (int32_t i = 0; same && i < r; i++) same = t->dims[i] == x0->dims[i];
        if (!same) return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u has another shape than input 0", k);
    }
    gn__tensor *outs[16];
    for (uint32_t k = 0; k < n_ops; k++) GN_TRY(gn__kctx_output(c, k, c->in[k].dtype, r, x0->dims, &outs[k]));
    int64_t n = x0->dims[dim], total = gn__tensor_numel(x0);
    if (!total) return GN_OK;
    int64_t xs[MAXD];
    strides(r, x0->dims, xs);
    int64_t stride = xs[dim];
    int64_t *perm = malloc((size_t)n * 2 * sizeof *perm);
    if (!perm) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate the sort permutation");
    int64_t outer[MAXD];
    for (int32_t i = 0; i < r; i++) outer[i] = i == dim ? 1 : x0->dims[i];
    int64_t ix[MAXD] = {0};
    do {
        int64_t base = 0;
        for (int32_t i = 0; i < r; i++) base += ix[i] * xs[i];
        for (int64_t p = 0; p < n; p++) perm[p] = p;
        merge_sort(key, base, stride, perm, perm + n, n);
        for (uint32_t k = 0; k < n_ops; k++) {
            size_t es = gn__dtype_size(c->in[k].dtype);
            for (int64_t p = 0; p < n; p++)
                memcpy((char *)outs[k]->data + (base + p * stride) * (int64_t)es,
                       (const char *)c->in[k].data + (base + perm[p] * stride) * (int64_t)es, es);
        }
    } while (next_index(r, outer, ix));
    free(perm);
    return GN_OK;
}

gn_status gn__xla_k_sort(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    if (!gn__dtype_is_float(x->dtype) && !is_int(x->dtype)) return gn__km_bad_dtype(c, x->dtype);
    sort_key key = {x, GN__XLA_FN_LESS};
    return sort_common(c, 1, x->rank - 1, &key);
}

gn_status gn__xla_k_variadic_sort(gn__kctx *c)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects inputs and a dimension, got %u inputs", c->n_in);
    uint32_t n_ops = c->n_in - 1;
    if (n_ops > 16 || n_ops > c->n_out)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%u operands: at most 16 are supported", n_ops);
    GN_TRY(need(c, c->n_in));
    int64_t dim;
    GN_TRY(gn__ak_read_scalar_int(c, n_ops, "dimension", &dim));
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "comparator", true, &f, why)) return attr_fail(c, why);
    if (f.n_args != (int32_t)(2 * n_ops))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'comparator' takes %d arguments; %u operands need %u", f.n_args,
                             n_ops, 2 * n_ops);
    const gn__tensor *k = &c->in[f.operand];
    if (!gn__dtype_is_float(k->dtype) && !is_int(k->dtype)) return gn__km_bad_dtype(c, k->dtype);
    sort_key key = {k, f.kind};
    if (dim < 0) dim += c->in[0].rank;
    return sort_common(c, n_ops, dim, &key);
}

/* ---- XlaSetDynamicDimensionSize / XlaRemoveDynamicDimensionSize ------------------------------ */
static gn_status dim_index(gn__kctx *c, int64_t *d)
{
    GN_TRY(gn__ak_read_scalar_int(c, 1, "dim_index", d));
    if (*d < 0 || *d >= c->in[0].rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "dim_index %lld is out of range for rank %d", (long long)*d,
                             (int)c->in[0].rank);
    return GN_OK;
}

/* A dynamic size is the valid prefix of the dimension: what TensorFlow returns
 * for it and what the ops after it read, so the kernel slices to it. */
gn_status gn__xla_k_set_dynamic_dimension_size(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    const gn__tensor *x = &c->in[0];
    int64_t d, size;
    GN_TRY(dim_index(c, &d));
    GN_TRY(gn__ak_read_scalar_int(c, 2, "size", &size));
    if (size < 0 || size > x->dims[d])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "size %lld is out of range for dimension %lld of size %lld",
                             (long long)size, (long long)d, (long long)x->dims[d]);
    if (size == x->dims[d]) return gn__kctx_forward(c, 0, 0);
    int64_t od[MAXD], xs[MAXD], os[MAXD];
    memcpy(od, x->dims, sizeof(int64_t) * (size_t)x->rank);
    od[d] = size;
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, od, &o));
    strides(x->rank, x->dims, xs);
    strides(x->rank, od, os);
    if (gn__tensor_numel(o)) gn__ak_copy_nd(o->data, os, x->data, xs, x->rank, od, esize(c, x->dtype));
    return GN_OK;
}

gn_status gn__xla_k_remove_dynamic_dimension_size(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    int64_t d;
    GN_TRY(dim_index(c, &d));
    return gn__kctx_forward(c, 0, 0);
}

/* ---- windows: XlaReduceWindow, XlaSelectAndScatter ----------------------------------------------- */
/* A [rank, 2] int padding input into lo / hi. */
static gn_status read_padding(gn__kctx *c, uint32_t in, int32_t r, int64_t *lo, int64_t *hi)
{
    const gn__tensor *t = &c->in[in];
    if (t->dtype != GN_DT_I32 && t->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "padding must be int32 or int64, not %s", gn__dtype_name(t->dtype));
    if (t->rank != 2 || t->dims[0] != r || t->dims[1] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "padding must be of shape [%d, 2] (the operand's rank)", (int)r);
    for (int32_t i = 0; i < r; i++) {
        lo[i] = gn__km_int_at(t, 2 * i);
        hi[i] = gn__km_int_at(t, 2 * i + 1);
    }
    return GN_OK;
}

typedef struct window {
    int32_t r;
    int64_t dims[MAXD], stride[MAXD], bdil[MAXD], wdil[MAXD], lo[MAXD], hi[MAXD], out[MAXD];
} window;

/* Window inputs at (dims, strides, base dilations, window dilations, padding);
 * a negative index: all ones (or no padding). */
static gn_status read_window(gn__kctx *c, const gn__tensor *x, int in_dims, int in_str, int in_bd, int in_wd,
                             int in_pad, window *w)
{
    int32_t r = x->rank;
    w->r = r;
    GN_TRY(read_vec(c, (uint32_t)in_dims, "window_dimensions", r, w->dims, NULL));
    GN_TRY(read_vec(c, (uint32_t)in_str, "window_strides", r, w->stride, NULL));
    for (int32_t i = 0; i < r; i++) w->bdil[i] = w->wdil[i] = 1;
    if (in_bd >= 0) GN_TRY(read_vec(c, (uint32_t)in_bd, "base_dilations", r, w->bdil, NULL));
    if (in_wd >= 0) GN_TRY(read_vec(c, (uint32_t)in_wd, "window_dilations", r, w->wdil, NULL));
    GN_TRY(read_padding(c, (uint32_t)in_pad, r, w->lo, w->hi));
    for (int32_t i = 0; i < r; i++) {
        if (w->dims[i] < 1 || w->stride[i] < 1 || w->bdil[i] < 1 || w->wdil[i] < 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "dimension %d: window %lld, stride %lld and dilations %lld, %lld must be positive", i,
                                 (long long)w->dims[i], (long long)w->stride[i], (long long)w->bdil[i],
                                 (long long)w->wdil[i]);
        int64_t base = x->dims[i] ? (x->dims[i] - 1) * w->bdil[i] + 1 : 0;
        int64_t padded = base + w->lo[i] + w->hi[i], span = (w->dims[i] - 1) * w->wdil[i] + 1;
        w->out[i] = padded >= span ? (padded - span) / w->stride[i] + 1 : 0;
    }
    return GN_OK;
}

/* The operand offset of window element wix of the window at oix; false in padding or holes. */
static bool window_at(const window *w, const gn__tensor *x, const int64_t *xs, const int64_t *oix,
                      const int64_t *wix, int64_t *off)
{
    int64_t o = 0;
    for (int32_t i = 0; i < w->r; i++) {
        int64_t p = oix[i] * w->stride[i] + wix[i] * w->wdil[i] - w->lo[i];
        if (p < 0 || p % w->bdil[i]) return false;
        p /= w->bdil[i];
        if (p >= x->dims[i]) return false;
        o += p * xs[i];
    }
    *off = o;
    return true;
}

gn_status gn__xla_k_reduce_window(gn__kctx *c)
{
    GN_TRY(need(c, 7));
    const gn__tensor *x = &c->in[0], *init = &c->in[1];
    GN_TRY(check_init(c, x, init, "init_value"));
    window w;
    GN_TRY(read_window(c, x, 2, 3, 4, 5, 6, &w));
    gn__xla_fn f;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "computation", false, &f, why)) return attr_fail(c, why);
    if (f.kind == GN__XLA_FN_REPLACE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "attr 'computation' returns its second argument; not a reduction");
    GN_TRY(check_combiner(c, x->dtype, &f, "computation"));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, w.r, w.out, &o));
    size_t es = esize(c, x->dtype);
    int64_t n = gn__tensor_numel(o), xs[MAXD], oix[MAXD] = {0};
    if (!n) return GN_OK;
    strides(w.r, x->dims, xs);
    for (int64_t k = 0; k < n; k++) {
        memcpy((char *)o->data + k * (int64_t)es, init->data, es);
        int64_t wix[MAXD] = {0}, off;
        do
            if (window_at(&w, x, xs, oix, wix, &off)) combine_at(f.kind, x->dtype, o->data, k, x->data, off);
        while (next_index(w.r, w.dims, wix));
        next_index(w.r, w.out, oix);
    }
    return GN_OK;
}

gn_status gn__xla_k_select_and_scatter(gn__kctx *c)
{
    GN_TRY(need(c, 6));
    const gn__tensor *x = &c->in[0], *src = &c->in[4], *init = &c->in[5];
    GN_TRY(check_init(c, x, init, "init_value"));
    if (src->dtype != x->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "source is %s, operand is %s", gn__dtype_name(src->dtype),
                             gn__dtype_name(x->dtype));
    window w;
    GN_TRY(read_window(c, x, 1, 2, -1, -1, 3, &w));
    gn__xla_fn sel, sc;
    char why[GN__XLA_WHY];
    if (!gn__xla_fn_attr(c->g, c->node, "select", true, &sel, why)) return attr_fail(c, why);
    if (sel.n_args != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'select' takes %d arguments; 2 wanted", sel.n_args);
    if (!gn__xla_fn_attr(c->g, c->node, "scatter", false, &sc, why)) return attr_fail(c, why);
    GN_TRY(check_combiner(c, x->dtype, &sc, "scatter"));
    if (!gn__dtype_is_float(x->dtype) && !is_int(x->dtype)) return gn__km_bad_dtype(c, x->dtype);
    bool same = src->rank == w.r;
    for (int32_t i = 0; same && i < w.r; i++) same = src->dims[i] == w.out[i];
    if (!same)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "source must have the shape of the windows (rank %d, dimension 0 %lld)",
                             (int)w.r, (long long)(w.r ? w.out[0] : 0));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    size_t es = esize(c, x->dtype);
    int64_t n = gn__tensor_numel(o), xs[MAXD], oix[MAXD] = {0};
    for (int64_t k = 0; k < n; k++) memcpy((char *)o->data + k * (int64_t)es, init->data, es);
    int64_t ns = gn__tensor_numel(src);
    if (!ns) return GN_OK;
    strides(w.r, x->dims, xs);
    sort_key key = {x, sel.kind};
    for (int64_t k = 0; k < ns; k++) {
        int64_t wix[MAXD] = {0}, off, best = -1;
        do
            if (window_at(&w, x, xs, oix, wix, &off) && (best < 0 || !before(&key, best, off))) best = off;
        while (next_index(w.r, w.dims, wix));
        if (best >= 0) combine_at(sc.kind, x->dtype, o->data, best, src->data, k);
        next_index(w.r, w.out, oix);
    }
    return GN_OK;
}

/* ---- XlaConvV2 -------------------------------------------------------------------------------- */
static double ld_any(const gn__tensor *t, int64_t i)
{
    return gn__dtype_is_float(t->dtype) ? ldf(t->data, t->dtype, i) : (double)ldi(t->data, t->dtype, i);
}

static int64_t ld_int(const gn__tensor *t, int64_t i)
{
    return gn__dtype_is_float(t->dtype) ? (int64_t)ldf(t->data, t->dtype, i) : ldi(t->data, t->dtype, i);
}

gn_status gn__xla_k_conv(gn__kctx *c)
{
    GN_TRY(need(c, 7));
    const gn__tensor *a = &c->in[0], *b = &c->in[1];
    gn__xla_conv_dims d;
    char why[GN__XLA_WHY];
    if (!gn__xla_conv_attr(c->g, c->node, a->rank, b->rank, &d, why)) return attr_fail(c, why);
    if (!gn__xla_proto_attr_ok(c->g, c->node, "precision_config", "xla.PrecisionConfig", why)) return attr_fail(c, why);
    int64_t bgc = gn__km_attr_int(c, "batch_group_count", 1);
    if (bgc != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "attr 'batch_group_count' is %lld; only 1 is supported",
                             (long long)bgc);
    int32_t odt = gn__km_attr_type(c, "preferred_element_type", a->dtype);
    if (!gn__dtype_is_float(a->dtype) && !is_int(a->dtype)) return gn__km_bad_dtype(c, a->dtype);
    if (!gn__dtype_is_float(b->dtype) && !is_int(b->dtype)) return gn__km_bad_dtype(c, b->dtype);
    if (!gn__dtype_is_float(odt) && !is_int(odt)) return gn__km_bad_dtype(c, odt);
    int32_t ns = d.in_spatial.n;
    int64_t st[MAXD], lo[MAXD], hi[MAXD], ld[MAXD], rd[MAXD], groups;
    GN_TRY(read_vec(c, 2, "window_strides", ns, st, NULL));
    GN_TRY(read_padding(c, 3, ns, lo, hi));
    GN_TRY(read_vec(c, 4, "lhs_dilation", ns, ld, NULL));
    GN_TRY(read_vec(c, 5, "rhs_dilation", ns, rd, NULL));
    GN_TRY(gn__ak_read_scalar_int(c, 6, "feature_group_count", &groups));
    int64_t nb = a->dims[d.in_batch], fin = a->dims[d.in_feature], kin = b->dims[d.k_in_feature],
            fout = b->dims[d.k_out_feature];
    if (groups < 1 || fin % groups || fout % groups || kin * groups != fin)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "feature_group_count %lld: the lhs has %lld features, the kernel %lld input and %lld "
                             "output features",
                             (long long)groups, (long long)fin, (long long)kin, (long long)fout);
    int64_t od[MAXD], ksz[MAXD];
    od[d.out_batch] = nb;
    od[d.out_feature] = fout;
    for (int32_t i = 0; i < ns; i++) {
        if (st[i] < 1 || ld[i] < 1 || rd[i] < 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "spatial dimension %d: strides and dilations must be positive", i);
        int64_t in = a->dims[d.in_spatial.v[i]];
        ksz[i] = b->dims[d.k_spatial.v[i]];
        int64_t base = in ? (in - 1) * ld[i] + 1 : 0, padded = base + lo[i] + hi[i];
        int64_t span = ksz[i] ? (ksz[i] - 1) * rd[i] + 1 : 0;
        od[d.out_spatial.v[i]] = padded >= span ? (padded - span) / st[i] + 1 : 0;
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, ns + 2, od, &o));
    int64_t n = gn__tensor_numel(o);
    if (!n) return GN_OK;
    int64_t as[MAXD], bs[MAXD], os[MAXD];
    strides(a->rank, a->dims, as);
    strides(b->rank, b->dims, bs);
    strides(ns + 2, od, os);
    bool fl = gn__dtype_is_float(odt), empty_kernel = false;
    for (int32_t i = 0; i < ns; i++) empty_kernel = empty_kernel || ksz[i] == 0;
    int64_t fout_g = fout / groups;
    for (int64_t k = 0; k < n; k++) {
        int64_t ob = (k / os[d.out_batch]) % nb, of = (k / os[d.out_feature]) % fout, osp[MAXD];
        for (int32_t i = 0; i < ns; i++) osp[i] = (k / os[d.out_spatial.v[i]]) % od[d.out_spatial.v[i]];
        int64_t g = of / fout_g;
        double accf = 0;
        int64_t acci = 0;
        int64_t kix[MAXD] = {0};
        if (!empty_kernel) do {
            int64_t pa = ob * as[d.in_batch], pb = of * bs[d.k_out_feature];
            bool ok = true;
            for (int32_t i = 0; i < ns && ok; i++) {
                int64_t p = osp[i] * st[i] + kix[i] * rd[i] - lo[i];
                ok = p >= 0 && p % ld[i] == 0 && p / ld[i] < a->dims[d.in_spatial.v[i]];
                pa += (p / ld[i]) * as[d.in_spatial.v[i]];
                pb += kix[i] * bs[d.k_spatial.v[i]];
            }
            if (!ok) continue;
            for (int64_t ic = 0; ic < kin; ic++) {
                int64_t ia = pa + (g * kin + ic) * as[d.in_feature], ib = pb + ic * bs[d.k_in_feature];
                if (fl) accf += ld_any(a, ia) * ld_any(b, ib);
                else acci = (int64_t)((uint64_t)acci + (uint64_t)ld_int(a, ia) * (uint64_t)ld_int(b, ib));
            }
        } while (next_index(ns, ksz, kix));
        if (fl) stf(o->data, odt, k, accf);
        else sti(o->data, odt, k, acci);
    }
    return GN_OK;
}

gn_status gn__xla_k_einsum(gn__kctx *c) { return gn__nn_k_einsum(c); }
