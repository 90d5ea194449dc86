/* Math kernels: the helpers shared by math_*.c (the kernels are named in the
 * op list, src/opdef/ops.def).
 *
 * Mirrors TensorFlow's cwise_op_*.cc, reduction_ops*.cc, softmax_op_functor.h,
 * cast_op.h, random_op.cc and stateless_random_ops*.cc: same semantics
 * (integer division by zero is an error, Maximum propagates NaN, Round is
 * half-to-even, ...), our own loops. All of it compiles with
 * -ffp-contract=off and never calls BLAS. Sums run in a fixed blocked pairwise
 * order on both paths, so reductions give the same bits everywhere.
 * float32 / float16 transcendentals use the vectorized float approximations
 * of math_internal.h (within 3 ulp) on every path, constant folding included:
 * a folded value is the one the CPU backend computes for the unfolded graph,
 * so a comparison that sits within an ulp of its threshold (a cond predicate
 * on a softmax's sum) takes the same branch folded or not. Under
 * GN__K_EXACT_MATH (tests only) they are evaluated with libm in double and
 * rounded once. */
#include "ops/kernels/math_internal.h"

#include <stdio.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

/* ---- failures ----------------------------------------------------------------- */
gn_status gn__km_bad_dtype(gn__kctx *c, int32_t dtype)
{
    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(dtype));
}

gn_status gn__km_need_inputs(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    for (uint32_t i = 0; i < n; i++)
        if (c->in[i].dtype == 0) return gn__kctx_fail(c, GN_ERR_INTERNAL, "input %u is not set", i);
    if (c->n_out < 1) return gn__kctx_fail(c, GN_ERR_INTERNAL, "no output slot");
    return GN_OK;
}

void gn__km_shape_str(const int64_t *dims, int32_t rank, char *buf, size_t len)
{
    size_t at = 0;
    if (len == 0) return;
    buf[0] = 0;
    int w = snprintf(buf, len, "[");
    at = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < rank && at < len; i++) {
        w = snprintf(buf + at, len - at, "%s%lld", i ? "," : "", (long long)dims[i]);
        if (w < 0) return;
        at += (size_t)w;
    }
    if (at < len) snprintf(buf + at, len - at, "]");
}

/* ---- attrs ----------------------------------------------------------------------- */
bool gn__km_attr_bool(const gn__kctx *c, const char *key, bool dflt)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, key, &v) ? v : dflt;
}

float gn__km_attr_float(const gn__kctx *c, const char *key, float dflt)
{
    float v;
    return gn__attr_get_float(c->g, c->node, key, &v) ? v : dflt;
}

int64_t gn__km_attr_int(const gn__kctx *c, const char *key, int64_t dflt)
{
    int64_t v;
    return gn__attr_get_int(c->g, c->node, key, &v) ? v : dflt;
}

int32_t gn__km_attr_type(const gn__kctx *c, const char *key, int32_t dflt)
{
    int v;
    return gn__attr_get_type(c->g, c->node, key, &v) ? (int32_t)v : dflt;
}

/* ---- tensor readers ------------------------------------------------------------- */
int64_t gn__km_int_at(const gn__tensor *t, int64_t i)
{
    if (t->dtype == GN_DT_I64) return ((const int64_t *)t->data)[i];
    return ((const int32_t *)t->data)[i];
}

gn_status gn__km_read_shape(gn__kctx *c, const gn__tensor *t, const char *what, int32_t *rank, int64_t *dims)
{
    if (t->dtype != GN_DT_I32 && t->dtype != GN_DT_I64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, not %s", what, gn__dtype_name(t->dtype));
    if (t->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a vector, not rank %d", what, t->rank);
    int64_t n = gn__tensor_numel(t);
    if (n > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%s has rank %lld, over the supported %d", what, (long long)n,
                             GN__MAX_DIMS);
    for (int64_t i = 0; i < n; i++) {
        dims[i] = gn__km_int_at(t, i);
        if (dims[i] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s has negative dimension %lld", what, (long long)dims[i]);
    }
    *rank = (int32_t)n;
    return GN_OK;
}

gn_status gn__km_copy_input(gn__kctx *c, uint32_t i)
{
    const gn__tensor *x = &c->in[i];
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    if (o->nbytes) memcpy(o->data, x->data, o->nbytes);
    return GN_OK;
}

/* ---- broadcasting --------------------------------------------------------------- */
gn_status gn__km_broadcast(gn__kctx *c, uint32_t nops, const gn__tensor *const *ops, gn__km_bcast *b, bool report)
{
    int32_t r = 0;
    for (uint32_t k = 0; k < nops; k++)
        if (ops[k]->rank > r) r = ops[k]->rank;
    if (r > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", r, GN__MAX_DIMS);
    /* dims aligned to the right; 1 where an operand has fewer dims */
    int64_t d[3][GN__MAX_DIMS];
    b->out_rank = r;
    b->numel = 1;
    for (int32_t i = 0; i < r; i++) {
        int64_t o = 1;
        for (uint32_t k = 0; k < nops; k++) {
            int32_t j = i - (r - ops[k]->rank);
            d[k][i] = j >= 0 ? ops[k]->dims[j] : 1;
            if (d[k][i] == 1) continue;
            if (o == 1) o = d[k][i];
            else if (o != d[k][i]) goto incompatible;
        }
        b->out_dims[i] = o;
        b->numel *= o;
    }
    /* collapse: drop size-1 output dims, merge runs with the same broadcast pattern */
    int32_t cr = 0;
    unsigned prev_pat = ~0u;
    for (int32_t i = 0; i < r; i++) {
        if (b->out_dims[i] == 1) continue;
        unsigned pat = 0;
        for (uint32_t k = 0; k < nops; k++)
            if (d[k][i] == 1) pat |= 1u << k;
        if (cr > 0 && pat == prev_pat) {
            b->dims[cr - 1] *= b->out_dims[i];
        } else {
            b->dims[cr] = b->out_dims[i];
            for (uint32_t k = 0; k < nops; k++) b->stride[k][cr] = (pat >> k) & 1u ? 0 : 1;
            cr++;
        }
        prev_pat = pat;
    }
    if (cr == 0) {
        b->dims[0] = 1;
        for (uint32_t k = 0; k < nops; k++) b->stride[k][0] = 0;
        cr = 1;
    }
    b->rank = cr;
    /* strides: product of the operand's real dims to the right */
    for (uint32_t k = 0; k < nops; k++) {
        int64_t s = 1;
        for (int32_t i = cr - 1; i >= 0; i--) {
            if (b->stride[k][i]) {
                b->stride[k][i] = s;
                s *= b->dims[i];
            }
        }
    }
    return GN_OK;

incompatible:
    if (!report) return GN_ERR_GRAPH;
    char s[3][160];
    for (uint32_t k = 0; k < nops; k++) gn__km_shape_str(ops[k]->dims, ops[k]->rank, s[k], sizeof s[k]);
    if (nops == 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "shapes %s, %s and %s cannot be broadcast", s[0], s[1], s[2]);
    return gn__kctx_fail(c, GN_ERR_GRAPH, "shapes %s and %s cannot be broadcast", s[0], s[1]);
}

void gn__km_bcast_rows(const gn__km_bcast *b, uint32_t nops, gn__km_row_fn row, void *user)
{
    int32_t outer = b->rank - 1;
    int64_t n = b->dims[outer];
    int64_t idx[GN__MAX_DIMS] = {0};
    int64_t off[3] = {0, 0, 0};
    int64_t rows = 1;
    for (int32_t i = 0; i < outer; i++) rows *= b->dims[i];
    if (n == 0) return;
    for (int64_t r = 0; r < rows; r++) {
        row(user, off, n);
        /* odometer over the outer dims, innermost first */
        for (int32_t i = outer - 1; i >= 0; i--) {
            for (uint32_t k = 0; k < nops; k++) off[k] += b->stride[k][i];
            if (++idx[i] < b->dims[i]) break;
            for (uint32_t k = 0; k < nops; k++) off[k] -= b->stride[k][i] * b->dims[i];
            idx[i] = 0;
        }
    }
}

/* ---- float -> int ----------------------------------------------------------------- */
int64_t gn__km_f2i64(double v)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)v;
}

int32_t gn__km_f2i32(double v)
{
    if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
    return (int32_t)v;
}

uint64_t gn__km_f2u64(double v)
{
    /* gcc's sequence: values below 2^63 through the signed conversion, the rest
     * offset by 2^63 */
    if (v < 9223372036854775808.0) return (uint64_t)gn__km_f2i64(v);
    if (v < 18446744073709551616.0) return (uint64_t)(int64_t)(v - 9223372036854775808.0) ^ 0x8000000000000000ull;
    return 0x8000000000000000ull;
}

/* ---- pairwise sums ------------------------------------------------------------------ */
/* Blocks of 128 summed with 8 interleaved partial sums, combined at the end in
 * a fixed tree; blocks combined pairwise through a binary counter. */
#define GN_KM_SUM_BLOCK 128

#define GN_KM_DEF_SUM(NAME, T)                                                                     \
    static T NAME##_block(const T *x, int64_t n)                                                   \
    {                                                                                              \
        T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                       \
        int64_t i = 0;                                                                             \
        for (; i + 8 <= n; i += 8)                                                                 \
            for (int j = 0; j < 8; j++) acc[j] += x[i + j];                                        \
        T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));    \
        for (; i < n; i++) s += x[i];                                                              \
        return s;                                                                                  \
    }                                                                                              \
    T NAME(const T *x, int64_t n)                                                                  \
    {                                                                                              \
        if (n <= GN_KM_SUM_BLOCK) return NAME##_block(x, n);                                       \
        T stack[64];                                                                               \
        int64_t count = 0; /* blocks pushed; bit k set = a partial of 2^k blocks on the stack */   \
        int depth = 0;                                                                             \
        for (int64_t at = 0; at < n; at += GN_KM_SUM_BLOCK) {                                      \
            int64_t len = n - at < GN_KM_SUM_BLOCK ? n - at : GN_KM_SUM_BLOCK;                     \
            T s = NAME##_block(x + at, len);                                                       \
            for (int64_t c = count; c & 1; c >>= 1) s = stack[--depth] + s;                        \
            stack[depth++] = s;                                                                    \
            count++;                                                                               \
        }                                                                                          \
        T s = stack[--depth];                                                                      \
        while (depth > 0) s = stack[--depth] + s;                                                  \
        return s;                                                                                  \
    }

GN_KM_DEF_SUM(gn__km_sum_f32, float)
GN_KM_DEF_SUM(gn__km_sum_f64, double)
