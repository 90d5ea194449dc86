/* CPU kernels: 3-D convolution and pooling (see kernel.h): Conv3D,
 * Conv3DBackpropInputV2 (the transposed convolution of Keras' Conv3DTranspose),
 * MaxPool3D and AvgPool3D (tensorflow/core/kernels/conv_ops_3d.cc,
 * conv_grad_ops_3d.cc, pooling_ops_3d.cc).
 *
 * Everything runs channels-last (NDHWC) in the compute type: float for
 * float16 and float32 (float16 is rounded once, on the way out), double for
 * float64. NCDHW tensors are transposed in and out: TensorFlow's CPU kernels
 * accept only NDHWC and no dilation, its GPU kernels accept both, and graphs
 * laid out for a GPU must still run here. The filter is [KD, KH, KW, Cin/G,
 * Cout] in both layouts.
 *
 * Conv3D is im2col over blocks of output voxels (scratch sized per BLAS
 * thread and reused) and one gemm per block and group against the filter seen
 * as a [KD*KH*KW*Cin/G, Cout] matrix; a 1x1x1 stride-1 convolution is one gemm
 * over the input as an [N*D*H*W, Cin] matrix. Conv3DBackpropInputV2 is the
 * converse: per block, col = dy * W^T, then col2im adds each row's taps into
 * the input gradient in a fixed order. With GN__K_REFERENCE the gemms are the
 * fixed-order loops of nn_gemm.c (no BLAS).
 *
 * Pooling clips each window to the input: MaxPool3D takes the maximum of the
 * elements inside (padding never wins, NaN never replaces a value), AvgPool3D
 * divides their sum by their count, as TensorFlow's Eigen CuboidAvgPooling
 * does. */
#include <stdlib.h>

#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

/* im2col / col2im block: about 512 KB of patches per BLAS thread (as nn_conv.c) */
#define GN__3D_COL_PER_THREAD ((int64_t)1 << 17)
#define GN__3D_COL_MIN ((int64_t)1 << 18)
#define GN__3D_COL_MAX ((int64_t)1 << 21)

/* Canonical index order of 5-element attrs and shapes: N, D, H, W, C. */
enum { I_N = 0, I_D = 1, I_H = 2, I_W = 3, I_C = 4 };

typedef struct geo3 {
    int fmt;                 /* GN__NN_NHWC: NDHWC; GN__NN_NCHW: NCDHW */
    int pad;                 /* GN__NN_PAD_VALID / SAME */
    int64_t n, cin;          /* batch, input channels */
    int64_t in[3];           /* input D, H, W */
    int64_t k[3];            /* filter / window D, H, W */
    int64_t kc, cout;        /* filter input channels (per group), output channels */
    int64_t groups, og;      /* groups, output channels per group */
    int64_t s[3], dl[3];     /* strides, dilations */
    int64_t pb[3], pa[3];    /* padding before / after */
    int64_t out[3];          /* output D, H, W */
} geo3;

static bool float_dt(int32_t dt)
{
    return dt == GN__DT_F16 || dt == GN__DT_F32 || dt == GN__DT_F64;
}

/* Position of canonical index i (N, D, H, W, C) in a 5-element attr or shape. */
static int pos5(int fmt, int i)
{
    if (fmt == GN__NN_NHWC) return i;
    return i == I_N ? 0 : i == I_C ? 1 : i + 1;
}

/* The 5 ints of list attr `key` in canonical order; *present false when the
 * attr is absent or empty (v untouched). Fails when it has another length. */
static gn_status attr5(gn__kctx *c, const char *key, int fmt, const char *len_msg, int64_t v[5], bool *present)
{
    const Tensorflow__AttrValue__ListValue *l = gn__nn_attr_list(c, key);
    *present = l && l->n_i != 0;
    if (!*present) return GN_OK;
    if (l->n_i != 5) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s", len_msg);
    for (int i = 0; i < 5; i++) v[i] = l->i[pos5(fmt, i)];
    return GN_OK;
}

/* TensorFlow's GetWindowedOutputSizeVerbose for one spatial dim, with every
 * step checked for int64 overflow (input_sizes and attrs can be anything). */
static gn_status window(gn__kctx *c, int64_t in, int64_t k, int64_t dil, int64_t stride, int pad, int64_t *pb,
                        int64_t *pa, int64_t *out)
{
    int64_t eff, o;
    if (stride <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Stride must be > 0, but got %lld", (long long)stride);
    if (__builtin_mul_overflow(k - 1, dil, &eff) || __builtin_add_overflow(eff, 1, &eff))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "effective filter size of %lld taps dilated by %lld overflows",
                             (long long)k, (long long)dil);
    if (pad == GN__NN_PAD_VALID) {
        int64_t num;
        if (__builtin_sub_overflow(in, eff, &num) || __builtin_add_overflow(num, stride, &num))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "output size of input %lld with filter %lld overflows",
                                 (long long)in, (long long)eff);
        o = num / stride;
        *pb = *pa = 0;
    } else {
        o = in / stride + (in % stride != 0);
        int64_t need;
        if (o > 0) {
            if (__builtin_mul_overflow(o - 1, stride, &need) || __builtin_add_overflow(need, eff, &need))
                return gn__kctx_fail(c, GN_ERR_GRAPH, "padding of input %lld with filter %lld overflows",
                                     (long long)in, (long long)eff);
            need -= in;
        } else {
            need = 0;
        }
        if (need < 0) need = 0;
        *pb = need / 2;
        *pa = need - need / 2;
    }
    if (o < 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Computed output size would be negative: %lld [input_size: %lld, "
                             "effective_filter_size: %lld, stride: %lld]",
                             (long long)o, (long long)in, (long long)eff, (long long)stride);
    *out = o;
    return GN_OK;
}

/* strides, dilations, padding and data_format of Conv3D / Conv3DBackpropInputV2 */
static gn_status conv_attrs(gn__kctx *c, geo3 *p)
{
    GN_TRY(gn__nn_attr_format(c, true, &p->fmt));
    GN_TRY(gn__nn_attr_padding(c, false, &p->pad));
    int64_t st[5], dl[5] = {1, 1, 1, 1, 1};
    bool have;
    GN_TRY(attr5(c, "strides", p->fmt, "Sliding window strides field must specify 5 dimensions", st, &have));
    if (!have) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window strides field must specify 5 dimensions");
    if (st[I_N] != 1 || st[I_C] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                             "Current implementation does not yet support strides in the batch and depth dimensions.");
    if (st[I_D] <= 0 || st[I_H] <= 0 || st[I_W] <= 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Spatial strides should be larger than 0.");
    GN_TRY(attr5(c, "dilations", p->fmt, "Dilation rates field must specify 5 dimensions", dl, &have));
    if (dl[I_N] != 1 || dl[I_C] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED,
                             "Current implementation does not yet support dilation rates in the batch and depth "
                             "dimensions.");
    if (dl[I_D] <= 0 || dl[I_H] <= 0 || dl[I_W] <= 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Dilated rates should be larger than 0.");
    for (int i = 0; i < 3; i++) {
        p->s[i] = st[I_D + i];
        p->dl[i] = dl[I_D + i];
    }
    return GN_OK;
}

/* Filter dims and groups; the input's N, D, H, W, C are already in p. */
static gn_status conv_filter(gn__kctx *c, const gn__tensor *f, bool allow_groups, geo3 *p)
{
    char s1[128];
    if (f->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "filter must be 5-dimensional: %s", gn__nn_shape_str(f, s1, sizeof s1));
    for (int i = 0; i < 3; i++) p->k[i] = f->dims[i];
    p->kc = f->dims[3];
    p->cout = f->dims[4];
    if (!allow_groups || p->kc == p->cin) {
        p->groups = 1;
    } else {
        if (p->kc <= 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "filter depth must be positive, got %lld", (long long)p->kc);
        if (p->cin % p->kc)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input depth must be evenly divisible by filter depth: %lld vs %lld",
                                 (long long)p->cin, (long long)p->kc);
        p->groups = p->cin / p->kc;
        if (p->groups == 0 || p->cout % p->groups)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "output depth must be evenly divisible by number of groups: %lld vs %lld",
                                 (long long)p->cout, (long long)p->groups);
    }
    p->og = p->groups ? p->cout / p->groups : 0;
    for (int i = 0; i < 3; i++)
        GN_TRY(window(c, p->in[i], p->k[i], p->dl[i], p->s[i], p->pad, &p->pb[i], &p->pa[i], &p->out[i]));
    return GN_OK;
}

/* ---- layout and dtype staging ------------------------------------------------------ */
/* A compute-type NDHWC view of t (n, channels ch, sp voxels, layout fmt): the
 * tensor's own data when it already is one, else a heap copy (*own: free). */
static gn_status stage_in(gn__kctx *c, const gn__tensor *t, bool f64, int fmt, int64_t n, int64_t ch, int64_t sp,
                          const void **out, void **own)
{
    *own = NULL;
    *out = t->data;
    const int32_t ct = f64 ? GN__DT_F64 : GN__DT_F32;
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t cnt = gn__tensor_numel(t);
    const bool cf = fmt == GN__NN_NCHW && ch > 1 && sp > 1;
    if (t->dtype == ct && !cf) return GN_OK;
    void *a = malloc((size_t)(cnt ? cnt : 1) * esz);
    if (!a) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)cnt * esz);
    const void *src = t->data;
    if (t->dtype != ct) {
        if (f64) gn__nn_to_f64(t->dtype, t->data, a, cnt);
        else gn__nn_to_f32(t->dtype, t->data, a, cnt);
        src = a;
    }
    if (cf) {
        void *b = malloc((size_t)(cnt ? cnt : 1) * esz);
        if (!b) {
            free(a);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)cnt * esz);
        }
        if (cnt) gn__nn_nchw_to_nhwc(src, b, esz, n, ch, 1, sp);
        free(a);
        a = b;
    }
    *out = a;
    *own = a;
    return GN_OK;
}

/* Where to compute output o: its own data when its dtype is the compute type
 * and its layout channels-last (or equivalent), else scratch (*own). */
static gn_status stage_out(gn__kctx *c, gn__tensor *o, bool f64, int fmt, int64_t ch, int64_t sp, void **out,
                           void **own)
{
    *own = NULL;
    *out = o->data;
    const int32_t ct = f64 ? GN__DT_F64 : GN__DT_F32;
    const bool cf = fmt == GN__NN_NCHW && ch > 1 && sp > 1;
    if (o->dtype == ct && !cf) return GN_OK;
    const int64_t cnt = gn__tensor_numel(o);
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    void *a = malloc((size_t)(cnt ? cnt : 1) * esz);
    if (!a) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)cnt * esz);
    *out = a;
    *own = a;
    return GN_OK;
}

/* Writes the NDHWC compute-type result y (the scratch of stage_out) into o. */
static gn_status finish_out(gn__kctx *c, gn__tensor *o, bool f64, int fmt, int64_t n, int64_t ch, int64_t sp,
                            const void *y)
{
    const int32_t ct = f64 ? GN__DT_F64 : GN__DT_F32;
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t cnt = gn__tensor_numel(o);
    const bool cf = fmt == GN__NN_NCHW && ch > 1 && sp > 1;
    if (cnt == 0 || y == o->data) return GN_OK;
    if (!cf) {
        if (f64) gn__nn_from_f64(y, o->dtype, o->data, cnt);
        else gn__nn_from_f32(y, o->dtype, o->data, cnt);
        return GN_OK;
    }
    if (o->dtype == ct) {
        gn__nn_nhwc_to_nchw(y, o->data, esz, n, 1, sp, ch);
        return GN_OK;
    }
    void *t = malloc((size_t)cnt * esz);
    if (!t) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)cnt * esz);
    gn__nn_nhwc_to_nchw(y, t, esz, n, 1, sp, ch);
    if (f64) gn__nn_from_f64(t, o->dtype, o->data, cnt);
    else gn__nn_from_f32(t, o->dtype, o->data, cnt);
    free(t);
    return GN_OK;
}

typedef gn_status (*conv3d_core)(gn__kctx *c, const geo3 *p, bool f64, const void *a, const void *w, void *y);

/* Stages data input a (a_ch channels, a_sp spatial elements) and filter f
 * as NDHWC in the compute type, runs core into o's staging (o_ch, o_sp),
 * and writes o back in p's layout and dtype. */
static gn_status run_staged(gn__kctx *c, const geo3 *p, bool f64, const gn__tensor *a, int64_t a_ch, int64_t a_sp,
                            const gn__tensor *f, gn__tensor *o, int64_t o_ch, int64_t o_sp, conv3d_core core)
{
    const void *x = NULL, *w = NULL;
    void *xown = NULL, *wown = NULL, *y = NULL, *yown = NULL;
    gn_status st = stage_in(c, a, f64, p->fmt, p->n, a_ch, a_sp, &x, &xown);
    if (st == GN_OK) st = stage_in(c, f, f64, GN__NN_NHWC, 1, 1, 1, &w, &wown);
    if (st == GN_OK) st = stage_out(c, o, f64, p->fmt, o_ch, o_sp, &y, &yown);
    if (st == GN_OK) st = core(c, p, f64, x, w, y);
    if (st == GN_OK) st = finish_out(c, o, f64, p->fmt, p->n, o_ch, o_sp, y);
    free(xown);
    free(wown);
    free(yown);
    return st;
}

/* Output dims in the node's layout. */
static void dims5(int fmt, int64_t n, const int64_t *sp, int64_t ch, int64_t *d)
{
    d[pos5(fmt, I_N)] = n;
    d[pos5(fmt, I_D)] = sp[0];
    d[pos5(fmt, I_H)] = sp[1];
    d[pos5(fmt, I_W)] = sp[2];
    d[pos5(fmt, I_C)] = ch;
}

/* Patch rows per im2col block for patches of k elements. */
static int64_t block_rows(const gn__blas *blas, int64_t k, int64_t npix)
{
    int64_t threads = gn__blas_threads(blas);
    if (threads < 1) threads = 1;
    int64_t elems = GN__3D_COL_PER_THREAD * threads;
    if (elems < GN__3D_COL_MIN) elems = GN__3D_COL_MIN;
    if (elems > GN__3D_COL_MAX) elems = GN__3D_COL_MAX;
    int64_t blk = elems / (k > 0 ? k : 1);
    if (blk < 16) blk = 16;
    if (blk > npix) blk = npix;
    return blk;
}

static void gemm_ct(bool f64, const gn__blas *blas, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                    const void *b, int64_t ldb, void *cc, int64_t ldc)
{
    if (f64) gn__nn_dgemm(blas, false, tb, m, n, k, a, lda, b, ldb, cc, ldc);
    else gn__nn_sgemm(blas, false, tb, m, n, k, a, lda, b, ldb, cc, ldc);
}

/* ---- im2col / col2im ----------------------------------------------------------------- */
/* Rows [p0, p1) of the patch matrix of one image x (NDHWC) for group g: a row
 * per output voxel, columns (kz, ky, kx, ci) of K = KD*KH*KW*kc. */
#define GN__3D_IM2COL(NAME, T)                                                                          \
    static void NAME(const geo3 *p, const T *x, int64_t g, int64_t p0, int64_t p1, T *col)               \
    {                                                                                                   \
        const int64_t kc = p->kc, kd = p->k[0], kh = p->k[1], kw = p->k[2], k = kd * kh * kw * kc;       \
        const int64_t D = p->in[0], H = p->in[1], W = p->in[2], cin = p->cin;                           \
        const int64_t ohw = p->out[1] * p->out[2];                                                      \
        const bool whole = p->dl[2] == 1 && p->groups == 1;                                             \
        int64_t oz = p0 / ohw, oy = (p0 % ohw) / p->out[2], ox = p0 % p->out[2];                         \
        for (int64_t pp = p0; pp < p1; pp++) {                                                          \
            T *row = col + (pp - p0) * k;                                                               \
            const int64_t iz0 = oz * p->s[0] - p->pb[0], iy0 = oy * p->s[1] - p->pb[1];                  \
            const int64_t ix0 = ox * p->s[2] - p->pb[2];                                                \
            for (int64_t kz = 0; kz < kd; kz++) {                                                       \
                const int64_t iz = iz0 + kz * p->dl[0];                                                 \
                T *dz = row + kz * kh * kw * kc;                                                        \
                if (iz < 0 || iz >= D) {                                                                \
                    memset(dz, 0, (size_t)(kh * kw * kc) * sizeof(T));                                  \
                    continue;                                                                           \
                }                                                                                       \
                for (int64_t ky = 0; ky < kh; ky++) {                                                   \
                    const int64_t iy = iy0 + ky * p->dl[1];                                             \
                    T *dst = dz + ky * kw * kc;                                                         \
                    if (iy < 0 || iy >= H) {                                                            \
                        memset(dst, 0, (size_t)(kw * kc) * sizeof(T));                                  \
                        continue;                                                                       \
                    }                                                                                   \
                    const T *src = x + (iz * H + iy) * W * cin + g * kc;                                \
                    if (whole && ix0 >= 0 && ix0 + kw <= W) {                                           \
                        memcpy(dst, src + ix0 * cin, (size_t)(kw * kc) * sizeof(T));                    \
                        continue;                                                                       \
                    }                                                                                   \
                    for (int64_t kx = 0; kx < kw; kx++) {                                               \
                        const int64_t ix = ix0 + kx * p->dl[2];                                         \
                        if (ix < 0 || ix >= W) memset(dst + kx * kc, 0, (size_t)kc * sizeof(T));        \
                        else memcpy(dst + kx * kc, src + ix * cin, (size_t)kc * sizeof(T));             \
                    }                                                                                   \
                }                                                                                       \
            }                                                                                           \
            if (++ox == p->out[2]) {                                                                    \
                ox = 0;                                                                                 \
                if (++oy == p->out[1]) {                                                                \
                    oy = 0;                                                                             \
                    oz++;                                                                               \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }

GN__3D_IM2COL(im2col_f, float)
GN__3D_IM2COL(im2col_d, double)

/* dx (one image, NDHWC, groups 1) += the taps of patch rows [p0, p1) of col. */
#define GN__3D_COL2IM(NAME, T)                                                                          \
    static void NAME(const geo3 *p, const T *col, int64_t p0, int64_t p1, T *dx)                        \
    {                                                                                                   \
        const int64_t kc = p->kc, kd = p->k[0], kh = p->k[1], kw = p->k[2], k = kd * kh * kw * kc;       \
        const int64_t D = p->in[0], H = p->in[1], W = p->in[2];                                         \
        const int64_t ohw = p->out[1] * p->out[2];                                                      \
        int64_t oz = p0 / ohw, oy = (p0 % ohw) / p->out[2], ox = p0 % p->out[2];                         \
        for (int64_t pp = p0; pp < p1; pp++) {                                                          \
            const T *row = col + (pp - p0) * k;                                                         \
            const int64_t iz0 = oz * p->s[0] - p->pb[0], iy0 = oy * p->s[1] - p->pb[1];                  \
            const int64_t ix0 = ox * p->s[2] - p->pb[2];                                                \
            for (int64_t kz = 0; kz < kd; kz++) {                                                       \
                const int64_t iz = iz0 + kz * p->dl[0];                                                 \
                if (iz < 0 || iz >= D) continue;                                                        \
                for (int64_t ky = 0; ky < kh; ky++) {                                                   \
                    const int64_t iy = iy0 + ky * p->dl[1];                                             \
                    if (iy < 0 || iy >= H) continue;                                                    \
                    const T *src = row + (kz * kh + ky) * kw * kc;                                      \
                    T *dst = dx + (iz * H + iy) * W * kc;                                               \
                    for (int64_t kx = 0; kx < kw; kx++) {                                               \
                        const int64_t ix = ix0 + kx * p->dl[2];                                         \
                        if (ix < 0 || ix >= W) continue;                                                \
                        T *d = dst + ix * kc;                                                           \
                        const T *s = src + kx * kc;                                                     \
                        for (int64_t ci = 0; ci < kc; ci++) d[ci] += s[ci];                             \
                    }                                                                                   \
                }                                                                                       \
            }                                                                                           \
            if (++ox == p->out[2]) {                                                                    \
                ox = 0;                                                                                 \
                if (++oy == p->out[1]) {                                                                \
                    oy = 0;                                                                             \
                    oz++;                                                                               \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }

GN__3D_COL2IM(col2im_f, float)
GN__3D_COL2IM(col2im_d, double)

/* ---- Conv3D ------------------------------------------------------------------------------ */
/* y[N, OD, OH, OW, Cout] = conv(x[N, D, H, W, Cin], w[KD, KH, KW, Cin/G, Cout]), compute type. */
static gn_status conv3d_ndhwc(gn__kctx *c, const geo3 *p, bool f64, const void *x, const void *w, void *y)
{
    const gn__blas *blas = gn__kctx_blas(c);
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t o = p->cout, npix = p->out[0] * p->out[1] * p->out[2];
    const int64_t isp = p->in[0] * p->in[1] * p->in[2];
    if (p->n == 0 || npix == 0 || o == 0) return GN_OK;
    const int64_t k = p->k[0] * p->k[1] * p->k[2] * p->kc;
    if (k == 0) {
        memset(y, 0, (size_t)(p->n * npix * o) * esz);
        return GN_OK;
    }
    if (p->k[0] == 1 && p->k[1] == 1 && p->k[2] == 1 && p->groups == 1 && p->s[0] == 1 && p->s[1] == 1 &&
        p->s[2] == 1 && p->pb[0] == 0 && p->pb[1] == 0 && p->pb[2] == 0 && npix == isp) {
        gemm_ct(f64, blas, false, p->n * npix, o, p->cin, x, p->cin, w, o, y, o);
        return GN_OK;
    }
    const int64_t blk = block_rows(blas, k, npix);
    void *col = malloc((size_t)(blk * k) * esz);
    if (!col) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)(blk * k) * esz);
    const int64_t img = isp * p->cin;
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t p0 = 0; p0 < npix; p0 += blk) {
            const int64_t p1 = p0 + blk < npix ? p0 + blk : npix;
            for (int64_t g = 0; g < p->groups; g++) {
                if (f64) im2col_d(p, (const double *)x + b * img, g, p0, p1, col);
                else im2col_f(p, (const float *)x + b * img, g, p0, p1, col);
                gemm_ct(f64, blas, false, p1 - p0, p->og, k, col, k, (const char *)w + (size_t)(g * p->og) * esz, o,
                        (char *)y + (size_t)((b * npix + p0) * o + g * p->og) * esz, o);
            }
        }
    }
    free(col);
    return GN_OK;
}

gn_status gn__nn3d_k_conv3d(gn__kctx *c)
{
    char s1[128];
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *in = &c->in[0], *f = &c->in[1];
    const int32_t dt = in->dtype;
    if (!float_dt(dt)) return gn__nn_bad_dtype(c, dt);
    if (f->dtype != dt)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input is %s but filter is %s", gn__dtype_name(dt),
                             gn__dtype_name(f->dtype));
    geo3 p;
    memset(&p, 0, sizeof p);
    GN_TRY(conv_attrs(c, &p));
    if (in->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 5-dimensional: %s", gn__nn_shape_str(in, s1, sizeof s1));
    p.n = in->dims[pos5(p.fmt, I_N)];
    p.cin = in->dims[pos5(p.fmt, I_C)];
    for (int i = 0; i < 3; i++) p.in[i] = in->dims[pos5(p.fmt, I_D + i)];
    GN_TRY(conv_filter(c, f, true, &p));
    int64_t od[5];
    dims5(p.fmt, p.n, p.out, p.cout, od);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 5, od, &o));
    if (gn__tensor_numel(o) == 0) return GN_OK;
    const int64_t isp = p.in[0] * p.in[1] * p.in[2], osp = p.out[0] * p.out[1] * p.out[2];
    return run_staged(c, &p, dt == GN__DT_F64, in, p.cin, isp, f, o, p.cout, osp, conv3d_ndhwc);
}

/* ---- Conv3DBackpropInputV2 ----------------------------------------------------------- */
/* dx[N, D, H, W, Cin] = the transpose of conv3d_ndhwc applied to dy. */
static gn_status conv3d_bwd_ndhwc(gn__kctx *c, const geo3 *p, bool f64, const void *dy, const void *w, void *dx)
{
    const gn__blas *blas = gn__kctx_blas(c);
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t npix = p->out[0] * p->out[1] * p->out[2], img = p->in[0] * p->in[1] * p->in[2] * p->cin;
    memset(dx, 0, (size_t)(p->n * img) * esz);
    const int64_t k = p->k[0] * p->k[1] * p->k[2] * p->kc;
    if (p->n == 0 || npix == 0 || k == 0) return GN_OK;
    const int64_t blk = block_rows(blas, k, npix);
    void *col = malloc((size_t)(blk * k) * esz);
    if (!col) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", (size_t)(blk * k) * esz);
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t p0 = 0; p0 < npix; p0 += blk) {
            const int64_t p1 = p0 + blk < npix ? p0 + blk : npix;
            /* col[P, K] = dy[P, Cout] * w[K, Cout]^T */
            gemm_ct(f64, blas, true, p1 - p0, k, p->cout, (const char *)dy + (size_t)((b * npix + p0) * p->cout) * esz,
                    p->cout, w, p->cout, col, k);
            if (f64) col2im_d(p, col, p0, p1, (double *)dx + b * img);
            else col2im_f(p, col, p0, p1, (float *)dx + b * img);
        }
    }
    free(col);
    return GN_OK;
}

gn_status gn__nn3d_k_conv3d_backprop_input_v2(gn__kctx *c)
{
    char s1[128];
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    const gn__tensor *sz = &c->in[0], *f = &c->in[1], *dy = &c->in[2];
    const int32_t dt = f->dtype;
    if (!float_dt(dt)) return gn__nn_bad_dtype(c, dt);
    if (dy->dtype != dt)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "filter is %s but out_backprop is %s", gn__dtype_name(dt),
                             gn__dtype_name(dy->dtype));
    geo3 p;
    memset(&p, 0, sizeof p);
    GN_TRY(conv_attrs(c, &p));
    /* input_sizes: a vector of int32 or int64, a shape */
    if (sz->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 && sz->dtype != TENSORFLOW__DATA_TYPE__DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input_sizes must be int32 or int64, got %s", gn__dtype_name(sz->dtype));
    if (sz->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input_sizes must be a vector, got shape %s",
                             gn__nn_shape_str(sz, s1, sizeof s1));
    if (sz->dims[0] != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input tensor must have 5 dimensions, input_sizes has %lld",
                             (long long)sz->dims[0]);
    int64_t isz[5], total = 1;
    for (int i = 0; i < 5; i++) {
        isz[i] = sz->dtype == TENSORFLOW__DATA_TYPE__DT_INT32 ? ((const int32_t *)sz->data)[i]
                                                               : ((const int64_t *)sz->data)[i];
        if (isz[i] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input_sizes: dimension %d is %lld, must be >= 0", i,
                                 (long long)isz[i]);
        if (__builtin_mul_overflow(total, isz[i], &total))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input_sizes: the element count overflows");
    }
    if (dy->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "out_backprop tensor must have 5 dimensions: %s",
                             gn__nn_shape_str(dy, s1, sizeof s1));
    if (f->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "filter_sizes tensor must have 5 dimensions: %s",
                             gn__nn_shape_str(f, s1, sizeof s1));
    p.n = isz[pos5(p.fmt, I_N)];
    p.cin = isz[pos5(p.fmt, I_C)];
    for (int i = 0; i < 3; i++) p.in[i] = isz[pos5(p.fmt, I_D + i)];
    if (p.cin != f->dims[3])
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "input and filter_sizes must have the same number of channels. Got %lld for input and "
                             "%lld for filter_sizes",
                             (long long)p.cin, (long long)f->dims[3]);
    const int64_t dyc = dy->dims[pos5(p.fmt, I_C)];
    if (dyc != f->dims[4])
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "out_backprop and filter_sizes must have the same number of channels. Got %lld for "
                             "out_backprop and %lld for filter_sizes",
                             (long long)dyc, (long long)f->dims[4]);
    GN_TRY(conv_filter(c, f, false, &p));
    if (dy->dims[pos5(p.fmt, I_N)] != p.n)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Conv3DBackpropInputOp: input and out_backprop must have the same batch size. Input "
                             "batch: %lld, outbackprop batch: %lld, batch_dim: %d",
                             (long long)p.n, (long long)dy->dims[pos5(p.fmt, I_N)], pos5(p.fmt, I_N));
    for (int i = 0; i < 3; i++) {
        const int64_t got = dy->dims[pos5(p.fmt, I_D + i)];
        if (got != p.out[i])
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "Conv3DBackpropInputOp: Size of out_backprop doesn't match computed: actual = %lld, "
                                 "computed = %lld spatial_dim: %d input: %lld filter: %lld output: %lld stride: %lld "
                                 "dilation: %lld",
                                 (long long)got, (long long)p.out[i], pos5(p.fmt, I_D + i), (long long)p.in[i],
                                 (long long)p.k[i], (long long)got, (long long)p.s[i], (long long)p.dl[i]);
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 5, isz, &o));
    if (gn__tensor_numel(o) == 0) return GN_OK;
    const int64_t isp = p.in[0] * p.in[1] * p.in[2], osp = p.out[0] * p.out[1] * p.out[2];
    return run_staged(c, &p, dt == GN__DT_F64, dy, p.cout, osp, f, o, p.cin, isp, conv3d_bwd_ndhwc);
}

/* ---- MaxPool3D / AvgPool3D ----------------------------------------------------------- */
/* Pools n images x[n, D, H, W, ch] (compute type T) into y; acc holds ch sums. */
#define GN__3D_POOL(NAME, T, NEG_INF)                                                                   \
    static void NAME(const geo3 *p, bool avg, const T *x, T *y, T *acc)                                 \
    {                                                                                                   \
        const int64_t D = p->in[0], H = p->in[1], W = p->in[2], ch = p->cin;                            \
        for (int64_t b = 0; b < p->n; b++) {                                                            \
            const T *img = x + b * D * H * W * ch;                                                      \
            for (int64_t oz = 0; oz < p->out[0]; oz++) {                                                \
                int64_t z0 = oz * p->s[0] - p->pb[0], z1 = z0 + p->k[0];                                \
                z0 = z0 < 0 ? 0 : z0;                                                                   \
                z1 = z1 > D ? D : z1;                                                                   \
                for (int64_t oy = 0; oy < p->out[1]; oy++) {                                            \
                    int64_t y0 = oy * p->s[1] - p->pb[1], y1 = y0 + p->k[1];                            \
                    y0 = y0 < 0 ? 0 : y0;                                                               \
                    y1 = y1 > H ? H : y1;                                                               \
                    for (int64_t ox = 0; ox < p->out[2]; ox++) {                                        \
                        int64_t x0 = ox * p->s[2] - p->pb[2], x1 = x0 + p->k[2];                        \
                        x0 = x0 < 0 ? 0 : x0;                                                           \
                        x1 = x1 > W ? W : x1;                                                           \
                        T *out = y + (((b * p->out[0] + oz) * p->out[1] + oy) * p->out[2] + ox) * ch;   \
                        T *a = avg ? acc : out;                                                         \
                        for (int64_t k = 0; k < ch; k++) a[k] = avg ? (T)0 : NEG_INF;                   \
                        int64_t cnt = 0;                                                                \
                        for (int64_t iz = z0; iz < z1; iz++)                                            \
                            for (int64_t iy = y0; iy < y1; iy++)                                        \
                                for (int64_t ix = x0; ix < x1; ix++) {                                  \
                                    const T *in = img + ((iz * H + iy) * W + ix) * ch;                  \
                                    cnt++;                                                              \
                                    if (avg)                                                            \
                                        for (int64_t k = 0; k < ch; k++) a[k] += in[k];                 \
                                    else                                                                \
                                        for (int64_t k = 0; k < ch; k++) a[k] = in[k] > a[k] ? in[k] : a[k]; \
                                }                                                                       \
                        if (avg)                                                                        \
                            for (int64_t k = 0; k < ch; k++) out[k] = a[k] / (T)cnt;                    \
                    }                                                                                   \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }

GN__3D_POOL(pool_f, float, -INFINITY)
GN__3D_POOL(pool_d, double, -(double)INFINITY)

static gn_status pool3d(gn__kctx *c, bool avg)
{
    char s1[128];
    if (c->n_in < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects an input");
    const gn__tensor *x = &c->in[0];
    const int32_t dt = x->dtype;
    if (!float_dt(dt)) return gn__nn_bad_dtype(c, dt);
    geo3 p;
    memset(&p, 0, sizeof p);
    GN_TRY(gn__nn_attr_format(c, true, &p.fmt));
    GN_TRY(gn__nn_attr_padding(c, false, &p.pad));
    int64_t ks[5], st[5];
    bool have;
    GN_TRY(attr5(c, "ksize", p.fmt, "Sliding window ksize field must specify 5 dimensions", ks, &have));
    if (!have) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window ksize field must specify 5 dimensions");
    GN_TRY(attr5(c, "strides", p.fmt, "Sliding window stride field must specify 5 dimensions", st, &have));
    if (!have) return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window stride field must specify 5 dimensions");
    if (ks[I_N] != 1 || st[I_N] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Pooling is not yet supported on the batch dimension.");
    if (ks[I_C] != 1 || st[I_C] != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Pooling is not yet supported on the depth dimension.");
    for (int i = 0; i < 3; i++)
        if (ks[I_D + i] <= 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Sliding window ksize field must have positive dimensions, got %lld",
                                 (long long)ks[I_D + i]);
    if (x->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "tensor_in must be 5-dimensional: %s", gn__nn_shape_str(x, s1, sizeof s1));
    p.n = x->dims[pos5(p.fmt, I_N)];
    p.cin = x->dims[pos5(p.fmt, I_C)];
    for (int i = 0; i < 3; i++) {
        p.in[i] = x->dims[pos5(p.fmt, I_D + i)];
        p.k[i] = ks[I_D + i];
        p.s[i] = st[I_D + i];
        p.dl[i] = 1;
        GN_TRY(window(c, p.in[i], p.k[i], 1, p.s[i], p.pad, &p.pb[i], &p.pa[i], &p.out[i]));
    }
    int64_t od[5];
    dims5(p.fmt, p.n, p.out, p.cin, od);
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 5, od, &o));
    if (gn__tensor_numel(o) == 0) return GN_OK;
    const bool f64 = dt == GN__DT_F64;
    const size_t esz = f64 ? sizeof(double) : sizeof(float);
    const int64_t isp = p.in[0] * p.in[1] * p.in[2], osp = p.out[0] * p.out[1] * p.out[2];
    const void *xp = NULL;
    void *xown = NULL, *y = NULL, *yown = NULL, *acc = NULL;
    gn_status s = stage_in(c, x, f64, p.fmt, p.n, p.cin, isp, &xp, &xown);
    if (s == GN_OK) s = stage_out(c, o, f64, p.fmt, p.cin, osp, &y, &yown);
    if (s == GN_OK && !(acc = malloc((size_t)(p.cin + 1) * esz)))
        s = gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
    if (s == GN_OK) {
        if (f64) pool_d(&p, avg, xp, y, acc);
        else pool_f(&p, avg, xp, y, acc);
        s = finish_out(c, o, f64, p.fmt, p.n, p.cin, osp, y);
    }
    free(xown);
    free(yown);
    free(acc);
    return s;
}

gn_status gn__nn3d_k_max_pool3d(gn__kctx *c)
{
    return pool3d(c, false);
}

gn_status gn__nn3d_k_avg_pool3d(gn__kctx *c)
{
    return pool3d(c, true);
}
