/* Matrix products: the gemm wrappers (OpenBLAS, or a fixed-order reference
 * loop), MatMul, _FusedMatMul, BatchMatMul/V2/V3 and Einsum.
 *
 * Einsum (tensorflow/core/kernels/linalg/einsum_op_impl.h) is lowered the same
 * way TensorFlow lowers it: labels are classified as batch (in both operands
 * and the output), free (one operand and the output) or contracted (not in the
 * output); each operand is brought to [batch, free, contracted] (used in place
 * when its layout already is, or its transpose), one batched gemm runs, and the
 * result is permuted to the output order. Repeated labels take diagonals and
 * ellipsis dimensions broadcast. */
#include <limits.h>
#include <stdlib.h>

#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

/* ---- gemm --------------------------------------------------------------------- */
static bool fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

#define GN__NN_REF_GEMM(NAME, T)                                                               \
    static void NAME(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, \
                     const T *b, int64_t ldb, T *cc, int64_t ldc)                              \
    {                                                                                          \
        for (int64_t i = 0; i < m; i++) {                                                      \
            T *crow = cc + i * ldc;                                                            \
            if (!tb) {                                                                         \
                for (int64_t j = 0; j < n; j++) crow[j] = 0;                                   \
                for (int64_t p = 0; p < k; p++) {                                              \
                    T av = ta ? a[p * lda + i] : a[i * lda + p];                               \
                    const T *brow = b + p * ldb;                                               \
                    for (int64_t j = 0; j < n; j++) crow[j] += av * brow[j];                   \
                }                                                                              \
            } else {                                                                           \
                for (int64_t j = 0; j < n; j++) {                                              \
                    const T *bcol = b + j * ldb;                                               \
                    T acc = 0;                                                                 \
                    if (ta)                                                                    \
                        for (int64_t p = 0; p < k; p++) acc += a[p * lda + i] * bcol[p];       \
                    else                                                                       \
                        for (int64_t p = 0; p < k; p++) acc += a[i * lda + p] * bcol[p];       \
                    crow[j] = acc;                                                             \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

GN__NN_REF_GEMM(ref_sgemm, float)
GN__NN_REF_GEMM(ref_dgemm, double)

void gn__nn_sgemm(const gn__blas *blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float *cc, int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++) memset(cc + i * ldc, 0, (size_t)n * sizeof(float));
        return;
    }
    if (!blas || !fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc)) {
        ref_sgemm(ta, tb, m, n, k, a, lda, b, ldb, cc, ldc);
        return;
    }
    blas->sgemm(GN__CBLAS_ROW_MAJOR, ta ? GN__CBLAS_TRANS : GN__CBLAS_NO_TRANS, tb ? GN__CBLAS_TRANS : GN__CBLAS_NO_TRANS,
                (int)m, (int)n, (int)k, 1.0f, a, (int)lda, b, (int)ldb, 0.0f, cc, (int)ldc);
}

void gn__nn_dgemm(const gn__blas *blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                  const double *b, int64_t ldb, double *cc, int64_t ldc)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (int64_t i = 0; i < m; i++) memset(cc + i * ldc, 0, (size_t)n * sizeof(double));
        return;
    }
    if (!blas || !fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc)) {
        ref_dgemm(ta, tb, m, n, k, a, lda, b, ldb, cc, ldc);
        return;
    }
    blas->dgemm(GN__CBLAS_ROW_MAJOR, ta ? GN__CBLAS_TRANS : GN__CBLAS_NO_TRANS, tb ? GN__CBLAS_TRANS : GN__CBLAS_NO_TRANS,
                (int)m, (int)n, (int)k, 1.0, a, (int)lda, b, (int)ldb, 0.0, cc, (int)ldc);
}

/* One gemm in the compute type (double when f64, else float). */
static void gemm_ct(bool f64, const gn__blas *blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                    const void *b, int64_t ldb, void *cc, int64_t ldc)
{
    if (f64) gn__nn_dgemm(blas, ta, tb, m, n, k, a, lda, b, ldb, cc, ldc);
    else gn__nn_sgemm(blas, ta, tb, m, n, k, a, lda, b, ldb, cc, ldc);
}

static bool float_dtype(int32_t dt)
{
    return dt == GN__DT_F16 || dt == GN__DT_F32 || dt == GN__DT_F64;
}

/* A compute-type view of t: its own data when the dtype matches, else a
 * converted heap copy (*owned, free it). */
static gn_status as_ct(gn__kctx *c, const gn__tensor *t, bool f64, const void **out, void **owned)
{
    *owned = NULL;
    int32_t want = f64 ? GN__DT_F64 : GN__DT_F32;
    if (t->dtype == want) {
        *out = t->data;
        return GN_OK;
    }
    int64_t n = gn__tensor_numel(t);
    size_t bytes = (size_t)(n ? n : 1) * (f64 ? sizeof(double) : sizeof(float));
    void *p = malloc(bytes);
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    if (f64) gn__nn_to_f64(t->dtype, t->data, p, n);
    else gn__nn_to_f32(t->dtype, t->data, p, n);
    *out = p;
    *owned = p;
    return GN_OK;
}

/* Where to compute an output: the tensor itself when its dtype is the compute
 * type, else a scratch buffer (*owned) converted by finish_ct. */
static gn_status out_ct(gn__kctx *c, gn__tensor *o, bool f64, void **out, void **owned)
{
    *owned = NULL;
    int32_t want = f64 ? GN__DT_F64 : GN__DT_F32;
    if (o->dtype == want) {
        *out = o->data;
        return GN_OK;
    }
    int64_t n = gn__tensor_numel(o);
    size_t bytes = (size_t)(n ? n : 1) * (f64 ? sizeof(double) : sizeof(float));
    void *p = malloc(bytes);
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    *out = p;
    *owned = p;
    return GN_OK;
}

static void finish_ct(gn__tensor *o, bool f64, void *owned)
{
    if (!owned) return;
    if (f64) gn__nn_from_f64(owned, o->dtype, o->data, gn__tensor_numel(o));
    else gn__nn_from_f32(owned, o->dtype, o->data, gn__tensor_numel(o));
    free(owned);
}

static void zero_ct(void *p, bool f64, int64_t n)
{
    if (n) memset(p, 0, (size_t)n * (f64 ? sizeof(double) : sizeof(float)));
}

/* ---- MatMul / _FusedMatMul -------------------------------------------------------- */
static gn_status matmul_impl(gn__kctx *c, bool fused)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *a = &c->in[0], *b = &c->in[1];
    char s1[128], s2[128];
    if (!float_dtype(a->dtype)) return gn__nn_bad_dtype(c, a->dtype);
    if (b->dtype != a->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] is %s but In[1] is %s", gn__dtype_name(a->dtype),
                             gn__dtype_name(b->dtype));
    if (a->rank != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] is not a matrix. Instead it has shape %s",
                             gn__nn_shape_str(a, s1, sizeof s1));
    if (b->rank != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "In[1] is not a matrix. Instead it has shape %s",
                             gn__nn_shape_str(b, s1, sizeof s1));
    bool ta = gn__nn_attr_bool(c, "transpose_a", false), tb = gn__nn_attr_bool(c, "transpose_b", false);
    int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
    int64_t k2 = tb ? b->dims[1] : b->dims[0], n = tb ? b->dims[0] : b->dims[1];
    if (k != k2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                             gn__nn_shape_str(a, s1, sizeof s1), gn__nn_shape_str(b, s2, sizeof s2));
    int64_t od[2] = {m, n};
    gn__tensor oshape = {.rank = 2, .dims = {m, n}};
    gn__nn_epi epi;
    memset(&epi, 0, sizeof epi);
    if (fused) {
        int64_t num_args = gn__nn_attr_int(c, "num_args", (int64_t)c->n_in - 2);
        if (num_args < 0 || num_args > (int64_t)c->n_in - 2)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "num_args %lld but %u inputs", (long long)num_args, c->n_in);
        GN_TRY(gn__nn_epi_from_fused(c, c->in + 2, (uint32_t)num_args, n, &oshape, a->dtype, &epi));
    }
    gn__tensor *o;
    gn_status st = gn__kctx_output(c, 0, a->dtype, 2, od, &o);
    if (st != GN_OK) {
        gn__nn_epi_free(&epi);
        return st;
    }
    bool f64 = a->dtype == GN__DT_F64;
    const gn__blas *blas = gn__kctx_blas(c);
    const void *ap = NULL, *bp = NULL;
    void *aown = NULL, *bown = NULL, *op = NULL, *oown = NULL;
    if ((st = as_ct(c, a, f64, &ap, &aown)) != GN_OK) goto done;
    if ((st = as_ct(c, b, f64, &bp, &bown)) != GN_OK) goto done;
    if ((st = out_ct(c, o, f64, &op, &oown)) != GN_OK) goto done;
    gemm_ct(f64, blas, ta, tb, m, n, k, ap, a->dims[1], bp, b->dims[1], op, n);
    if (fused) gn__nn_epi_apply(&epi, op, 0, m, n, 1);
    finish_ct(o, f64, oown);
    oown = NULL;
done:
    free(aown);
    free(bown);
    free(oown);
    gn__nn_epi_free(&epi);
    return st;
}

gn_status gn__nn_k_matmul(gn__kctx *c)
{
    return matmul_impl(c, false);
}

gn_status gn__nn_k_fused_matmul(gn__kctx *c)
{
    return matmul_impl(c, true);
}

/* ---- batched products over broadcast batch dims ----------------------------------- */
/* out[b] = op(x[b]) op(y[b]) for every batch index b of the output batch shape
 * (nb dims ob[]), x and y matrices found by element strides xs[], ys[] per
 * batch dim (0 where broadcast). When y is the same matrix for all b and x is
 * contiguous and not transposed, one gemm with m * batch rows does it. */
static void batched_gemm(bool f64, const gn__blas *blas, int nb, const int64_t *ob, const int64_t *xs, const int64_t *ys,
                         bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *x, int64_t ldx,
                         const void *y, int64_t ldy, void *out)
{
    size_t esz = f64 ? sizeof(double) : sizeof(float);
    int64_t batch = 1;
    for (int i = 0; i < nb; i++) batch *= ob[i];
    if (batch == 0 || m == 0 || n == 0) return;
    bool y_shared = true, x_dense = !ta;
    int64_t expect = m * k;
    for (int i = nb - 1; i >= 0; i--) {
        if (ob[i] == 1) continue;
        if (ys[i] != 0) y_shared = false;
        if (xs[i] != expect) x_dense = false;
        expect *= ob[i];
    }
    if (y_shared && x_dense && batch > 1) {
        gemm_ct(f64, blas, false, tb, batch * m, n, k, x, ldx, y, ldy, out, n);
        return;
    }
    int64_t idx[GN__MAX_DIMS] = {0};
    int64_t xo = 0, yo = 0;
    for (int64_t bi = 0; bi < batch; bi++) {
        gemm_ct(f64, blas, ta, tb, m, n, k, (const char *)x + xo * (int64_t)esz, ldx,
                (const char *)y + yo * (int64_t)esz, ldy, (char *)out + bi * m * n * (int64_t)esz, n);
        for (int d = nb - 1; d >= 0; d--) {
            xo += xs[d];
            yo += ys[d];
            if (++idx[d] < ob[d]) break;
            xo -= xs[d] * ob[d];
            yo -= ys[d] * ob[d];
            idx[d] = 0;
        }
    }
}

static gn_status bmm_impl(gn__kctx *c, int version)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *y = &c->in[1];
    char s1[128], s2[128];
    int32_t tout = x->dtype;
    if (!float_dtype(x->dtype)) return gn__nn_bad_dtype(c, x->dtype);
    if (!float_dtype(y->dtype)) return gn__nn_bad_dtype(c, y->dtype);
    if (version == 3) {
        int t;
        if (gn__attr_get_type(c->g, c->node, "Tout", &t)) tout = t;
        if (!float_dtype(tout)) return gn__nn_bad_dtype(c, tout);
    } else if (y->dtype != x->dtype) {
        return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] is %s but In[1] is %s", gn__dtype_name(x->dtype),
                             gn__dtype_name(y->dtype));
    }
    bool adj_x = gn__nn_attr_bool(c, "adj_x", false), adj_y = gn__nn_attr_bool(c, "adj_y", false);
    int64_t ob[GN__MAX_DIMS], xs[GN__MAX_DIMS], ys[GN__MAX_DIMS];
    int nb;
    if (version == 1) {
        if (x->rank != y->rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] and In[1] has different ndims: %s vs. %s",
                                 gn__nn_shape_str(x, s1, sizeof s1), gn__nn_shape_str(y, s2, sizeof s2));
        if (x->rank < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] and In[1] ndims must be >= 2: %d", x->rank);
        nb = x->rank - 2;
        for (int i = 0; i < nb; i++)
            if (x->dims[i] != y->dims[i])
                return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0].dim(%d) and In[1].dim(%d) must be the same: %s vs %s", i,
                                     i, gn__nn_shape_str(x, s1, sizeof s1), gn__nn_shape_str(y, s2, sizeof s2));
    } else {
        if (x->rank < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] ndims must be >= 2: %d", x->rank);
        if (y->rank < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "In[1] ndims must be >= 2: %d", y->rank);
        nb = (x->rank > y->rank ? x->rank : y->rank) - 2;
    }
    /* broadcast batch shape, right-aligned; strides in elements of each operand */
    int xb = x->rank - 2, yb = y->rank - 2;
    int64_t xstride = x->dims[x->rank - 2] * x->dims[x->rank - 1];
    int64_t ystride = y->dims[y->rank - 2] * y->dims[y->rank - 1];
    for (int i = nb - 1; i >= 0; i--) {
        int xi = xb - (nb - i), yi = yb - (nb - i);
        int64_t xd = xi >= 0 ? x->dims[xi] : 1, yd = yi >= 0 ? y->dims[yi] : 1;
        if (xd != yd && xd != 1 && yd != 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
                                 gn__nn_shape_str(x, s1, sizeof s1), gn__nn_shape_str(y, s2, sizeof s2));
        ob[i] = xd > yd ? xd : yd;
        if (xd == 0 || yd == 0) ob[i] = 0;
        xs[i] = xd == 1 ? 0 : xstride;
        ys[i] = yd == 1 ? 0 : ystride;
        xstride *= xd;
        ystride *= yd;
    }
    int64_t xr = x->dims[x->rank - 2], xc = x->dims[x->rank - 1];
    int64_t yr = y->dims[y->rank - 2], yc = y->dims[y->rank - 1];
    int64_t m = adj_x ? xc : xr, k = adj_x ? xr : xc, k2 = adj_y ? yc : yr, n = adj_y ? yr : yc;
    if (k != k2) {
        if (version == 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "In[0] mismatch In[1] shape: %lld vs. %lld: %s %s %d %d",
                                 (long long)k, (long long)k2, gn__nn_shape_str(x, s1, sizeof s1),
                                 gn__nn_shape_str(y, s2, sizeof s2), adj_x, adj_y);
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                             gn__nn_shape_str(x, s1, sizeof s1), gn__nn_shape_str(y, s2, sizeof s2));
    }
    int64_t od[GN__MAX_DIMS];
    for (int i = 0; i < nb; i++) od[i] = ob[i];
    od[nb] = m;
    od[nb + 1] = n;
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, tout, nb + 2, od, &o));
    bool f64 = x->dtype == GN__DT_F64 || y->dtype == GN__DT_F64 || tout == GN__DT_F64;
    const gn__blas *blas = gn__kctx_blas(c);
    const void *xp = NULL, *yp = NULL;
    void *xown = NULL, *yown = NULL, *op = NULL, *oown = NULL;
    gn_status st;
    if ((st = as_ct(c, x, f64, &xp, &xown)) != GN_OK) goto done;
    if ((st = as_ct(c, y, f64, &yp, &yown)) != GN_OK) goto done;
    if ((st = out_ct(c, o, f64, &op, &oown)) != GN_OK) goto done;
    if (k == 0) zero_ct(op, f64, gn__tensor_numel(o));
    else batched_gemm(f64, blas, nb, ob, xs, ys, adj_x, adj_y, m, n, k, xp, xc, yp, yc, op);
    finish_ct(o, f64, oown);
    oown = NULL;
done:
    free(xown);
    free(yown);
    free(oown);
    return st;
}

gn_status gn__nn_k_batch_matmul(gn__kctx *c)
{
    return bmm_impl(c, 1);
}

gn_status gn__nn_k_batch_matmul_v2(gn__kctx *c)
{
    return bmm_impl(c, 2);
}

gn_status gn__nn_k_batch_matmul_v3(gn__kctx *c)
{
    return bmm_impl(c, 3);
}

/* ---- Einsum ---------------------------------------------------------------------- */
#define EIN_ELL 52                       /* label ids 0..51 letters, 52.. ellipsis dims */
#define EIN_NL (EIN_ELL + GN__MAX_DIMS)

typedef struct ein_term {
    int n;                               /* labels after ellipsis expansion */
    int lab[GN__MAX_DIMS];
} ein_term;

static int letter_id(char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
    return -1;
}

/* Parses one term: letters and at most one "..." (stored as -1). */
static bool ein_tokens(const char *s, size_t len, int *tok, int *ntok, bool *has_ell)
{
    *ntok = 0;
    *has_ell = false;
    for (size_t i = 0; i < len;) {
        if (s[i] == ' ') {
            i++;
            continue;
        }
        if (s[i] == '.') {
            if (i + 3 > len || s[i + 1] != '.' || s[i + 2] != '.' || *has_ell) return false;
            *has_ell = true;
            if (*ntok >= 2 * GN__MAX_DIMS) return false;
            tok[(*ntok)++] = -1;
            i += 3;
            continue;
        }
        int id = letter_id(s[i]);
        if (id < 0 || *ntok >= 2 * GN__MAX_DIMS) return false;
        tok[(*ntok)++] = id;
        i++;
    }
    return true;
}

typedef struct ein_plan {
    int n_in;
    ein_term in[2];
    ein_term out;
    int64_t size[EIN_NL];
    int64_t stride[2][EIN_NL];           /* element stride per label (summed over repeats; 0 if absent/broadcast) */
    bool present[2][EIN_NL];
} ein_plan;

static gn_status ein_parse(gn__kctx *c, const char *eq, size_t len, ein_plan *p)
{
    memset(p, 0, sizeof *p);
    char s1[128];
    const char *arrow = NULL;
    for (size_t i = 0; i + 1 < len; i++)
        if (eq[i] == '-' && eq[i + 1] == '>') {
            arrow = eq + i;
            break;
        }
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : len;
    /* split inputs */
    const char *terms[3];
    size_t tlen[3];
    int nt = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i == lhs_len || eq[i] == ',') {
            if (nt >= 2) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "equation '%.*s' has more than 2 inputs", (int)len, eq);
            terms[nt] = eq + start;
            tlen[nt] = i - start;
            nt++;
            start = i + 1;
        }
    }
    if ((uint32_t)nt != c->n_in)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "equation '%.*s' names %d inputs but the node has %u", (int)len, eq, nt,
                             c->n_in);
    p->n_in = nt;
    int tok[2][2 * GN__MAX_DIMS], ntok[2];
    bool ell[2];
    int ell_rank[2] = {0, 0}, E = 0;
    for (int t = 0; t < nt; t++) {
        if (!ein_tokens(terms[t], tlen[t], tok[t], &ntok[t], &ell[t]))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "invalid equation '%.*s'", (int)len, eq);
        int named = ntok[t] - (ell[t] ? 1 : 0);
        const gn__tensor *x = &c->in[t];
        if ((!ell[t] && x->rank != named) || (ell[t] && x->rank < named))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected input %d to have rank %d but got: %d", t, named, x->rank);
        ell_rank[t] = x->rank - named;
        if (ell_rank[t] > E) E = ell_rank[t];
    }
    for (int t = 0; t < nt; t++) {
        ein_term *term = &p->in[t];
        for (int i = 0; i < ntok[t]; i++) {
            if (tok[t][i] >= 0) term->lab[term->n++] = tok[t][i];
            else
                for (int j = 0; j < ell_rank[t]; j++) term->lab[term->n++] = EIN_ELL + (E - ell_rank[t]) + j;
        }
    }
    /* output */
    int count[EIN_NL] = {0};
    for (int t = 0; t < nt; t++)
        for (int i = 0; i < p->in[t].n; i++) count[p->in[t].lab[i]]++;
    if (arrow) {
        int otok[2 * GN__MAX_DIMS], no;
        bool oell;
        if (!ein_tokens(arrow + 2, len - lhs_len - 2, otok, &no, &oell))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "invalid equation '%.*s'", (int)len, eq);
        bool seen[EIN_NL] = {false};
        for (int i = 0; i < no; i++) {
            if (otok[i] >= 0) {
                if (!count[otok[i]] || seen[otok[i]])
                    return gn__kctx_fail(c, GN_ERR_GRAPH, "invalid output subscripts in equation '%.*s'", (int)len, eq);
                seen[otok[i]] = true;
                if (p->out.n >= GN__MAX_DIMS)
                    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank over %d", GN__MAX_DIMS);
                p->out.lab[p->out.n++] = otok[i];
            } else {
                if (p->out.n + E > GN__MAX_DIMS)
                    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank over %d", GN__MAX_DIMS);
                for (int j = 0; j < E; j++) p->out.lab[p->out.n++] = EIN_ELL + j;
            }
        }
    } else {
        for (int j = 0; j < E; j++) p->out.lab[p->out.n++] = EIN_ELL + j;
        for (int id = 0; id < EIN_ELL; id++)
            if (count[id] == 1) {
                if (p->out.n >= GN__MAX_DIMS)
                    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "output rank over %d", GN__MAX_DIMS);
                p->out.lab[p->out.n++] = id;
            }
    }
    /* sizes and strides */
    for (int id = 0; id < EIN_NL; id++) p->size[id] = -1;
    for (int t = 0; t < nt; t++) {
        const gn__tensor *x = &c->in[t];
        for (int i = 0; i < p->in[t].n; i++) {
            int id = p->in[t].lab[i];
            int64_t d = x->dims[i];
            if (p->size[id] < 0 || p->size[id] == d) {
                p->size[id] = d;
            } else if (id >= EIN_ELL && (d == 1 || p->size[id] == 1)) {
                if (d > p->size[id]) p->size[id] = d;
            } else {
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "Expected dimension %lld at axis %d of the input shaped %s but got dimension %lld",
                                     (long long)p->size[id], i, gn__nn_shape_str(x, s1, sizeof s1), (long long)d);
            }
        }
    }
    for (int t = 0; t < nt; t++) {
        const gn__tensor *x = &c->in[t];
        int64_t st = 1;
        for (int i = p->in[t].n - 1; i >= 0; i--) {
            int id = p->in[t].lab[i];
            p->present[t][id] = true;
            if (!(x->dims[i] == 1 && p->size[id] != 1)) p->stride[t][id] += st;
            st *= x->dims[i];
        }
    }
    return GN_OK;
}

/* Row-major check: does an operand with these per-label strides lay out
 * labels[0..n) contiguously in this order? Size-1 labels are ignored. */
static bool ein_rowmajor(const ein_plan *p, int t, const int *labels, int n)
{
    int64_t expect = 1;
    for (int i = n - 1; i >= 0; i--) {
        int64_t sz = p->size[labels[i]];
        if (sz == 1) continue;
        if (p->stride[t][labels[i]] != expect) return false;
        expect *= sz;
    }
    return true;
}

static int64_t ein_prod(const ein_plan *p, const int *labels, int n)
{
    int64_t v = 1;
    for (int i = 0; i < n; i++) v *= p->size[labels[i]];
    return v;
}

/* Gathers operand t (compute type, element size esz) into a contiguous buffer
 * laid out as labels[0..n). */
static void ein_gather(const ein_plan *p, int t, const void *src, const int *labels, int n, void *dst, size_t esz)
{
    int64_t dims[3 * GN__MAX_DIMS], strides[3 * GN__MAX_DIMS];
    int r = 0;
    for (int i = 0; i < n; i++) {
        if (p->size[labels[i]] == 1) continue;
        dims[r] = p->size[labels[i]];
        strides[r] = p->stride[t][labels[i]];
        r++;
    }
    if (r == 0) {
        memcpy(dst, src, esz);
        return;
    }
    gn__nn_strided_copy(dst, src, r, dims, strides, esz);
}

static gn_status ein_one(gn__kctx *c, const ein_plan *p, bool f64, const void *x, void *out)
{
    /* out[o] = sum over the labels not in the output */
    int red[EIN_NL], nr = 0;
    bool in_out[EIN_NL] = {false};
    for (int i = 0; i < p->out.n; i++) in_out[p->out.lab[i]] = true;
    for (int id = 0; id < EIN_NL; id++)
        if (p->present[0][id] && !in_out[id] && p->size[id] != 1) red[nr++] = id;
    int64_t od[GN__MAX_DIMS], os[GN__MAX_DIMS];
    for (int i = 0; i < p->out.n; i++) {
        od[i] = p->size[p->out.lab[i]];
        os[i] = p->stride[0][p->out.lab[i]];
    }
    if (nr == 0) {
        gn__nn_strided_copy(out, x, p->out.n, od, os, f64 ? sizeof(double) : sizeof(float));
        return GN_OK;
    }
    int64_t total = 1, rtotal = 1;
    for (int i = 0; i < p->out.n; i++) total *= od[i];
    for (int i = 0; i < nr; i++) rtotal *= p->size[red[i]];
    int64_t oidx[GN__MAX_DIMS] = {0}, ooff = 0;
    for (int64_t e = 0; e < total; e++) {
        int64_t ridx[EIN_NL] = {0}, roff = 0;
        double accd = 0;
        float accf = 0;
        for (int64_t r = 0; r < rtotal; r++) {
            if (f64) accd += ((const double *)x)[ooff + roff];
            else accf += ((const float *)x)[ooff + roff];
            for (int d = nr - 1; d >= 0; d--) {
                roff += p->stride[0][red[d]];
                if (++ridx[d] < p->size[red[d]]) break;
                roff -= p->stride[0][red[d]] * p->size[red[d]];
                ridx[d] = 0;
            }
        }
        if (f64) ((double *)out)[e] = accd;
        else ((float *)out)[e] = accf;
        for (int d = p->out.n - 1; d >= 0; d--) {
            ooff += os[d];
            if (++oidx[d] < od[d]) break;
            ooff -= os[d] * od[d];
            oidx[d] = 0;
        }
    }
    (void)c;
    return GN_OK;
}

static gn_status ein_two(gn__kctx *c, const ein_plan *p, bool f64, const void *xa, const void *xb, void *out)
{
    size_t esz = f64 ? sizeof(double) : sizeof(float);
    const gn__blas *blas = gn__kctx_blas(c);
    bool in_out[EIN_NL] = {false};
    for (int i = 0; i < p->out.n; i++) in_out[p->out.lab[i]] = true;
    int bl[EIN_NL], nbl = 0, al[EIN_NL], nal = 0, brl[EIN_NL], nbrl = 0, kl[EIN_NL], nkl = 0;
    for (int i = 0; i < p->out.n; i++) {
        int id = p->out.lab[i];
        if (p->present[0][id] && p->present[1][id]) bl[nbl++] = id;
        else if (p->present[0][id]) al[nal++] = id;
        else brl[nbrl++] = id;
    }
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < p->in[t].n; i++) {
            int id = p->in[t].lab[i];
            if (in_out[id]) continue;
            bool dup = false;
            for (int j = 0; j < nkl; j++) dup |= kl[j] == id;
            if (!dup) kl[nkl++] = id;
        }
    /* roles: left operand l gives the rows; prefer the one that makes the
     * result land in output order */
    int order_a[3 * EIN_NL], order_b[3 * EIN_NL], na = 0, nbb = 0;
    for (int i = 0; i < nbl; i++) order_a[na++] = order_b[nbb++] = bl[i];
    for (int i = 0; i < nal; i++) order_a[na++] = al[i];
    for (int i = 0; i < nbrl; i++) order_a[na++] = brl[i];
    for (int i = 0; i < nbrl; i++) order_b[nbb++] = brl[i];
    for (int i = 0; i < nal; i++) order_b[nbb++] = al[i];
    bool direct_a = true, direct_b = true;
    for (int i = 0; i < p->out.n; i++) {
        direct_a &= order_a[i] == p->out.lab[i];
        direct_b &= order_b[i] == p->out.lab[i];
    }
    int l = (!direct_a && direct_b) ? 1 : 0, r = 1 - l;
    bool direct = l == 0 ? direct_a : direct_b;
    const int *ml = l == 0 ? al : brl, *nl = l == 0 ? brl : al;
    int nml = l == 0 ? nal : nbrl, nnl = l == 0 ? nbrl : nal;
    const void *src[2] = {xa, xb};
    int64_t batch = ein_prod(p, bl, nbl), m = ein_prod(p, ml, nml), n = ein_prod(p, nl, nnl), k = ein_prod(p, kl, nkl);
    int64_t total = batch * m * n;
    void *res = out, *lown = NULL, *rown = NULL, *resown = NULL;
    gn_status st = GN_OK;
    if (total == 0) return GN_OK;
    if (!direct) {
        resown = malloc((size_t)total * esz);
        if (!resown) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)total * esz);
        res = resown;
    }
    if (k == 0) {
        zero_ct(res, f64, total);
    } else {
        /* left as [batch, m, k] (or [batch, k, m] transposed) */
        int lab[3 * EIN_NL], nlab = 0;
        bool ta = false, tb = false;
        const void *lp = src[l], *rp = src[r];
        bool r_shared = true;
        for (int i = 0; i < nbl; i++) r_shared &= p->stride[r][bl[i]] == 0 || p->size[bl[i]] == 1;
        nlab = 0;
        for (int i = 0; i < nbl; i++) lab[nlab++] = bl[i];
        for (int i = 0; i < nml; i++) lab[nlab++] = ml[i];
        for (int i = 0; i < nkl; i++) lab[nlab++] = kl[i];
        if (!ein_rowmajor(p, l, lab, nlab)) {
            int lab2[3 * EIN_NL], n2 = 0;
            for (int i = 0; i < nbl; i++) lab2[n2++] = bl[i];
            for (int i = 0; i < nkl; i++) lab2[n2++] = kl[i];
            for (int i = 0; i < nml; i++) lab2[n2++] = ml[i];
            if (!r_shared && ein_rowmajor(p, l, lab2, n2)) {
                ta = true;
            } else {
                lown = malloc((size_t)(batch * m * k) * esz);
                if (!lown) {
                    st = gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)(batch * m * k) * esz);
                    goto done;
                }
                ein_gather(p, l, src[l], lab, nlab, lown, esz);
                lp = lown;
            }
        }
        /* right as [batch?, k, n] (or [batch?, n, k] transposed) */
        int rlab[3 * EIN_NL], nr = 0;
        if (!r_shared)
            for (int i = 0; i < nbl; i++) rlab[nr++] = bl[i];
        for (int i = 0; i < nkl; i++) rlab[nr++] = kl[i];
        for (int i = 0; i < nnl; i++) rlab[nr++] = nl[i];
        if (!ein_rowmajor(p, r, rlab, nr)) {
            int rlab2[3 * EIN_NL], n2 = 0;
            if (!r_shared)
                for (int i = 0; i < nbl; i++) rlab2[n2++] = bl[i];
            for (int i = 0; i < nnl; i++) rlab2[n2++] = nl[i];
            for (int i = 0; i < nkl; i++) rlab2[n2++] = kl[i];
            if (ein_rowmajor(p, r, rlab2, n2)) {
                tb = true;
            } else {
                int64_t rn = (r_shared ? 1 : batch) * k * n;
                rown = malloc((size_t)rn * esz);
                if (!rown) {
                    st = gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)rn * esz);
                    goto done;
                }
                ein_gather(p, r, src[r], rlab, nr, rown, esz);
                rp = rown;
            }
        }
        /* the base pointer of an operand used in place starts at element 0
         * of its labels; strides of labels it lacks are 0 */
        int64_t ldl = ta ? m : k, ldr = tb ? k : n;
        if (r_shared) {
            gemm_ct(f64, blas, false, tb, batch * m, n, k, lp, ldl, rp, ldr, res, n);
        } else {
            for (int64_t bi = 0; bi < batch; bi++)
                gemm_ct(f64, blas, ta, tb, m, n, k, (const char *)lp + (size_t)(bi * m * k) * esz, ldl,
                        (const char *)rp + (size_t)(r_shared ? 0 : bi * k * n) * esz, ldr,
                        (char *)res + (size_t)(bi * m * n) * esz, n);
        }
    }
    if (!direct) {
        /* res is [batch labels, m labels, n labels]; permute to the output */
        int64_t lst[EIN_NL];
        int64_t st_ = 1;
        for (int i = nnl - 1; i >= 0; i--) {
            lst[nl[i]] = st_;
            st_ *= p->size[nl[i]];
        }
        for (int i = nml - 1; i >= 0; i--) {
            lst[ml[i]] = st_;
            st_ *= p->size[ml[i]];
        }
        for (int i = nbl - 1; i >= 0; i--) {
            lst[bl[i]] = st_;
            st_ *= p->size[bl[i]];
        }
        int64_t od[GN__MAX_DIMS], os[GN__MAX_DIMS];
        for (int i = 0; i < p->out.n; i++) {
            od[i] = p->size[p->out.lab[i]];
            os[i] = lst[p->out.lab[i]];
        }
        gn__nn_strided_copy(out, res, p->out.n, od, os, esz);
    }
done:
    free(lown);
    free(rown);
    free(resown);
    return st;
}

gn_status gn__nn_k_einsum(gn__kctx *c)
{
    const char *eq;
    size_t len;
    if (!gn__attr_get_string(c->g, c->node, "equation", &eq, &len))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "missing attr 'equation'");
    if (c->n_in < 1 || c->n_in > 2)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Einsum with %u inputs is not supported", c->n_in);
    int32_t dt = c->in[0].dtype;
    if (!float_dtype(dt)) return gn__nn_bad_dtype(c, dt);
    if (c->n_in == 2 && c->in[1].dtype != dt)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "inputs have different dtypes: %s vs %s", gn__dtype_name(dt),
                             gn__dtype_name(c->in[1].dtype));
    ein_plan *p = malloc(sizeof *p);
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate the einsum plan");
    gn_status st = ein_parse(c, eq, len, p);
    if (st != GN_OK) {
        free(p);
        return st;
    }
    int64_t od[GN__MAX_DIMS];
    for (int i = 0; i < p->out.n; i++) od[i] = p->size[p->out.lab[i]];
    gn__tensor *o;
    bool f64 = dt == GN__DT_F64;
    const void *xa = NULL, *xb = NULL;
    void *aown = NULL, *bown = NULL, *op = NULL, *oown = NULL;
    if ((st = gn__kctx_output(c, 0, dt, p->out.n, od, &o)) != GN_OK) goto done;
    if ((st = as_ct(c, &c->in[0], f64, &xa, &aown)) != GN_OK) goto done;
    if (c->n_in == 2 && (st = as_ct(c, &c->in[1], f64, &xb, &bown)) != GN_OK) goto done;
    if ((st = out_ct(c, o, f64, &op, &oown)) != GN_OK) goto done;
    if (c->n_in == 1) st = ein_one(c, p, f64, xa, op);
    else st = ein_two(c, p, f64, xa, xb, op);
    if (st == GN_OK) {
        finish_ct(o, f64, oown);
        oown = NULL;
    }
done:
    free(aown);
    free(bown);
    free(oown);
    free(p);
    return st;
}
