/* Shape functions: elementwise ops (unary, binary with broadcasting, select,
 * cast), the broadcasting ops and reductions; binary ops and reductions share
 * the partial-value arithmetic (vop_apply). */
#include "ops/shape_fn.h"

/* ---- elementwise --------------------------------------------------------------- */
gn_status gn__shape_fn_unary(gn__shape_ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

gn_status gn__sf_unary_rank1(ctx *c)
{
    NEED(c, 1, 1);
    if (IS(c, 0)->rank == 0) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    c->out[0].shape = *IS(c, 0);
    return GN_OK;
}

gn_status gn__sf_cast(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    c->out[0].value = c->in[0].value; /* the driver drops it unless the result is an integer */
    return GN_OK;
}

typedef enum { VOP_NONE, VOP_ADD, VOP_SUB, VOP_MUL, VOP_FLOORDIV, VOP_FLOORMOD, VOP_MAX, VOP_MIN } vop;

static bool vop_apply(vop op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case VOP_ADD: return !__builtin_add_overflow(a, b, r);
    case VOP_SUB: return !__builtin_sub_overflow(a, b, r);
    case VOP_MUL: return !__builtin_mul_overflow(a, b, r);
    case VOP_FLOORDIV: {
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
        *r = q;
        return true;
    }
    case VOP_FLOORMOD: {
        if (b == 0 || (a == INT64_MIN && b == -1)) return false;
        int64_t m = a % b;
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        *r = m;
        return true;
    }
    case VOP_MAX: *r = a > b ? a : b; return true;
    case VOP_MIN: *r = a < b ? a : b; return true;
    default: return false;
    }
}

static gn_status binary(ctx *c, vop op)
{
    NEED(c, 2, 1);
    bool strict = true;
    bool flag;
    if (gn__attr_get_bool(c->g, c->node, "incompatible_shape_error", &flag)) strict = flag;
    GN_TRY(broadcast_out(c, 0, 0, 1, strict));
    if (op == VOP_NONE) return GN_OK;
    const gn__partial_value *a = VAL(c, 0), *b = VAL(c, 1);
    const gn__shape *os = &c->out[0].shape;
    if (!a || !b || os->rank < 0 || os->rank > 1) return GN_OK;
    int64_t n = os->rank == 0 ? 1 : os->dims[0];
    if (n < 0 || n > MAX_VALUE_ELEMS) return GN_OK;
    if ((a->n != n && a->n != 1) || (b->n != n && b->n != 1)) return GN_OK;
    gn__partial_value *r = val_new(c, n, os->rank == 0);
    if (!r) return oom(c);
    for (int64_t j = 0; j < n; j++) {
        int64_t x = 0, y = 0, z = 0;
        bool kx = vget(a, a->n == 1 ? 0 : j, &x), ky = vget(b, b->n == 1 ? 0 : j, &y);
        if (kx && ky) {
            if (vop_apply(op, x, y, &z) && fits_dtype(c->out[0].dtype, z)) vset(r, j, z);
        } else if (op == VOP_MUL && ((kx && x == 0) || (ky && y == 0))) {
            vset(r, j, 0);
        }
    }
    if (vany_known(r)) c->out[0].value = r;
    return GN_OK;
}

gn_status gn__shape_fn_broadcast(gn__shape_ctx *c) { return binary(c, VOP_NONE); }
gn_status gn__sf_add(ctx *c) { return binary(c, VOP_ADD); }
gn_status gn__sf_sub(ctx *c) { return binary(c, VOP_SUB); }
gn_status gn__sf_mul(ctx *c) { return binary(c, VOP_MUL); }
gn_status gn__sf_floordiv(ctx *c) { return binary(c, VOP_FLOORDIV); }
gn_status gn__sf_floormod(ctx *c) { return binary(c, VOP_FLOORMOD); }
gn_status gn__sf_maximum(ctx *c) { return binary(c, VOP_MAX); }
gn_status gn__sf_minimum(ctx *c) { return binary(c, VOP_MIN); }

static gn_status gn__sf_bias_add_impl(ctx *c, bool v1)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *b = IS(c, 1);
    if (b->rank >= 0 && b->rank != 1) {
        char s1[SB];
        return gn__shape_fail(c, "bias must be 1-D, got %s", sstr(b, s1));
    }
    if (x->rank < 0) {
        c->out[0].shape = *x;
        return GN_OK;
    }
    bool nchw = !v1 && channels_first(c);
    if (x->rank < (nchw ? 3 : 2)) {
        char s1[SB];
        return gn__shape_fail(c, "input must have rank >= %d, got %s", nchw ? 3 : 2, sstr(x, s1));
    }
    int32_t ci = nchw ? x->rank - 3 : x->rank - 1;
    int64_t bc = b->rank == 1 ? b->dims[0] : -1;
    int64_t xc = x->dims[ci];
    if (xc >= 0 && bc >= 0 && xc != bc) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "bias size %lld does not match the channel dimension %lld of %s (bias %s)",
                              (long long)bc, (long long)xc, sstr(x, s1), sstr(b, s2));
    }
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    if (xc < 0) d[ci] = bc;
    return set_dims_like(c, 0, x->rank, d, x);
}
gn_status gn__sf_bias_add(ctx *c) { return gn__sf_bias_add_impl(c, false); }
gn_status gn__sf_bias_add_v1(ctx *c) { return gn__sf_bias_add_impl(c, true); }

gn_status gn__sf_bias_add_grad(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return set_vector(c, 0, -1);
    if (x->rank < 2) {
        char s1[SB];
        return gn__shape_fail(c, "input must have rank >= 2, got %s", sstr(x, s1));
    }
    bool nchw = channels_first(c);
    return set_vector(c, 0, x->dims[nchw ? x->rank - 3 < 0 ? 1 : x->rank - 3 : x->rank - 1]);
}

gn_status gn__sf_select(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *cond = IS(c, 0), *t = IS(c, 1), *e = IS(c, 2);
    int64_t d[MAXR];
    int32_t r;
    char s1[SB], s2[SB];
    if (merge_dims(t, e, d, &r))
        return gn__shape_fail(c, "'then' %s and 'else' %s must have the same shape", sstr(t, s1), sstr(e, s2));
    gn__shape te = {r, d};
    if (cond->rank > 0 && r >= 0) { /* a scalar condition picks a whole tensor */
        if (cond->rank == 1 && r > 1) {
            if (cond->dims[0] >= 0 && d[0] >= 0 && cond->dims[0] != d[0])
                return gn__shape_fail(c, "condition %s must match the first dimension of %s", sstr(cond, s1),
                                      sstr(&te, s2));
            if (d[0] < 0) d[0] = cond->dims[0];
        } else {
            int64_t d2[MAXR];
            int32_t r2;
            if (merge_dims(cond, &te, d2, &r2))
                return gn__shape_fail(c, "condition %s and 'then' %s must have the same shape", sstr(cond, s1),
                                      sstr(&te, s2));
            memcpy(d, d2, (size_t)r2 * sizeof *d);
        }
    }
    return set_dims_like(c, 0, r, d, t);
}

gn_status gn__sf_select_v2(ctx *c)
{
    NEED(c, 3, 1);
    int64_t d1[MAXR], d2[MAXR];
    int32_t r1, r2;
    char s1[SB], s2[SB], s3[SB];
    if (broadcast_dims(IS(c, 1), IS(c, 2), d1, &r1) ||
        broadcast_dims(IS(c, 0), &(gn__shape){r1, d1}, d2, &r2))
        return gn__shape_fail(c, "incompatible shapes for broadcasting: %s, %s and %s", sstr(IS(c, 0), s1),
                              sstr(IS(c, 1), s2), sstr(IS(c, 2), s3));
    return set_dims_like(c, 0, r2, d2, IS(c, 1));
}

gn_status gn__sf_add_n(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[MAXR];
    gn__shape acc = *IS(c, 0);
    uint32_t from = 0;
    for (uint32_t i = 1; i < c->n_in; i++) {
        int32_t r;
        if (merge_dims(&acc, IS(c, i), d, &r)) {
            char s1[SB], s2[SB];
            return gn__shape_fail(c, "inputs have incompatible shapes: %s (input %u) and %s (input %u)",
                                  sstr(&acc, s1), from, sstr(IS(c, i), s2), i);
        }
        if (r != acc.rank || (r > 0 && memcmp(d, acc.dims, (size_t)r * sizeof *d) != 0)) {
            GN_TRY(set_dims(c, 0, r, d));
            acc = c->out[0].shape;
            from = i;
        }
    }
    c->out[0].shape = acc;
    return GN_OK;
}

/* ---- broadcasting ops ----------------------------------------------------------- */
gn_status gn__sf_broadcast_to(ctx *c)
{
    NEED(c, 2, 1);
    gn__shape t;
    GN_TRY(shape_from_tensor(c, 1, &t));
    const gn__shape *x = IS(c, 0);
    char s1[SB], s2[SB];
    if (t.rank >= 0 && x->rank >= 0) {
        if (x->rank > t.rank)
            return gn__shape_fail(c, "input %s has more dimensions than the target %s", sstr(x, s1), sstr(&t, s2));
        for (int32_t i = 0; i < x->rank; i++) {
            int64_t xi = x->dims[i], *ti = &t.dims[i + t.rank - x->rank];
            if (xi < 0) continue;
            if (*ti >= 0 && xi != 1 && xi != *ti)
                return gn__shape_fail(c, "input %s is not broadcastable to %s", sstr(x, s1), sstr(&t, s2));
            if (*ti < 0 && xi != 1) *ti = xi;
        }
    }
    c->out[0].shape = t;
    return GN_OK;
}

gn_status gn__sf_broadcast_args(ctx *c)
{
    NEED(c, 2, 1);
    const gn__partial_value *a = VAL(c, 0), *b = VAL(c, 1);
    const gn__shape *as = IS(c, 0), *bs = IS(c, 1);
    int64_t na = a ? a->n : as->rank == 1 ? as->dims[0] : -1;
    int64_t nb = b ? b->n : bs->rank == 1 ? bs->dims[0] : -1;
    if (na < 0 || nb < 0) return set_vector(c, 0, -1);
    int64_t n = na > nb ? na : nb;
    GN_TRY(set_vector(c, 0, n));
    if (!a || !b || n > MAX_VALUE_ELEMS) return GN_OK;
    gn__partial_value *v = val_new(c, n, false);
    if (!v) return oom(c);
    for (int64_t j = 0; j < n; j++) {
        int64_t ja = j - (n - na), jb = j - (n - nb), x = 1, y = 1;
        bool kx = ja < 0 || vget(a, ja, &x), ky = jb < 0 || vget(b, jb, &y);
        if (kx && ky) {
            if (x == y || y == 1) vset(v, j, x);
            else if (x == 1) vset(v, j, y);
            else return gn__shape_fail(c, "incompatible shapes: dimension %lld is %lld and %lld", (long long)j,
                                       (long long)x, (long long)y);
        } else if (kx && x > 1) {
            vset(v, j, x);
        } else if (ky && y > 1) {
            vset(v, j, y);
        }
    }
    c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_broadcast_gradient_args(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) GN_TRY(set_vector(c, k, -1));
    return GN_OK;
}

/* ---- reductions ---------------------------------------------------------------- */
static gn_status reduce_impl(ctx *c, vop vo)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *a = VAL(c, 1);
    bool keep = attr_b(c, "keep_dims", false);
    if (!a || !vall_known(a)) {
        if (IS(c, 1)->rank == 1 && IS(c, 1)->dims[0] == 0) {
            c->out[0].shape = *x;
            return GN_OK;
        }
        if (keep && x->rank >= 0) {
            int64_t d[MAXR];
            for (int32_t i = 0; i < x->rank; i++) d[i] = -1;
            return set_dims(c, 0, x->rank, d);
        }
        return GN_OK;
    }
    if (x->rank < 0) return GN_OK;
    bool red[MAXR] = {false};
    for (int64_t j = 0; j < a->n; j++) {
        int64_t ax = a->v[j];
        if (ax < -x->rank || ax >= x->rank || (x->rank == 0 && ax != 0 && ax != -1))
            return gn__shape_fail(c, "reduction axis %lld out of range for rank %d", (long long)ax, x->rank);
        if (x->rank == 0) continue;
        red[ax < 0 ? ax + x->rank : ax] = true;
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (red[i]) {
            if (keep) d[r++] = 1;
        } else {
            d[r++] = x->dims[i];
        }
    }
    GN_TRY(set_dims_like(c, 0, r, d, x));
    /* values: the reduction of a known vector */
    const gn__partial_value *xv = VAL(c, 0);
    if (vo == VOP_NONE || !xv || x->rank != 1 || !red[0] || !vall_known(xv)) return GN_OK;
    int64_t acc = vo == VOP_MUL ? 1 : vo == VOP_ADD ? 0 : xv->n ? xv->v[0] : 0;
    if ((vo == VOP_MAX || vo == VOP_MIN) && !xv->n) return GN_OK;
    for (int64_t j = 0; j < xv->n; j++)
        if (!vop_apply(vo, acc, xv->v[j], &acc)) return GN_OK;
    if (!fits_dtype(c->out[0].dtype, acc)) return GN_OK;
    gn__partial_value *v = val_new(c, 1, !keep);
    if (!v) return oom(c);
    vset(v, 0, acc);
    c->out[0].value = v;
    return GN_OK;
}

gn_status gn__sf_reduce(ctx *c) { return reduce_impl(c, VOP_NONE); }
gn_status gn__sf_sum(ctx *c) { return reduce_impl(c, VOP_ADD); }
gn_status gn__sf_prod(ctx *c) { return reduce_impl(c, VOP_MUL); }
gn_status gn__sf_max(ctx *c) { return reduce_impl(c, VOP_MAX); }
gn_status gn__sf_min(ctx *c) { return reduce_impl(c, VOP_MIN); }

gn_status gn__sf_argmax(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    if (x->rank < 0) return GN_OK;
    if (x->rank == 0) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    int64_t a = 0;
    int64_t d[MAXR];
    int32_t r = 0;
    if (!scalar_val(c, 1, &a)) {
        for (int32_t i = 0; i < x->rank - 1; i++) d[i] = -1;
        return set_dims(c, 0, x->rank - 1, d);
    }
    if (a < -x->rank || a >= x->rank)
        return gn__shape_fail(c, "dimension %lld out of range for rank %d", (long long)a, x->rank);
    if (a < 0) a += x->rank;
    for (int32_t i = 0; i < x->rank; i++)
        if (i != a) d[r++] = x->dims[i];
    return set_dims(c, 0, r, d);
}
