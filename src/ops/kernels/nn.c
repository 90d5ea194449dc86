/* Neural-network kernels: the helpers the nn_*.c files share
 * (attrs, window arithmetic, conversions, strided copies, fused epilogues).
 *
 *   nn_gemm.c  MatMul, BatchMatMul/V2/V3, _FusedMatMul, Einsum, the gemm wrappers
 *   nn_conv.c  Conv2D, DepthwiseConv2dNative and their _Fused* forms
 *   nn_norm.c  BiasAdd, FusedBatchNorm/V2/V3, _FusedBatchNormEx
 *   nn_pool.c  MaxPool, MaxPoolV2, AvgPool, LRN
 *   nn_space.c SpaceToBatchND, BatchToSpaceND
 *
 * Semantics follow tensorflow/core/kernels (conv_ops.cc, conv_ops_fused_impl.h,
 * fused_eigen_output_kernels.h, matmul_op_fused.cc, batch_matmul_op_impl.h,
 * einsum_op_impl.h, bias_op.cc, fused_batch_norm_op.cc, maxpooling_op.cc,
 * avgpooling_op.cc, lrn_op.cc) and tensorflow/core/ops/nn_ops.cc. */
#include "ops/kernels/nn_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

/* ---- attrs --------------------------------------------------------------------- */
const Tensorflow__AttrValue__ListValue *gn__nn_attr_list(const gn__kctx *c, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST) return NULL;
    return v->list;
}

bool gn__nn_attr_bool(const gn__kctx *c, const char *key, bool dflt)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, key, &v) ? v : dflt;
}

float gn__nn_attr_float(const gn__kctx *c, const char *key, float dflt)
{
    float v;
    return gn__attr_get_float(c->g, c->node, key, &v) ? v : dflt;
}

int64_t gn__nn_attr_int(const gn__kctx *c, const char *key, int64_t dflt)
{
    int64_t v;
    return gn__attr_get_int(c->g, c->node, key, &v) ? v : dflt;
}

void gn__nn_attr_str(const gn__kctx *c, const char *key, const char *dflt, char *buf, size_t n)
{
    const char *s;
    size_t len;
    if (!gn__attr_get_string(c->g, c->node, key, &s, &len)) {
        s = dflt;
        len = strlen(dflt);
    }
    if (len >= n) len = n - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
}

gn_status gn__nn_attr_format(gn__kctx *c, bool allow_5d, int *fmt)
{
    char s[64];
    gn__nn_attr_str(c, "data_format", "NHWC", s, sizeof s);
    if (!strcmp(s, "NHWC") || (allow_5d && !strcmp(s, "NDHWC"))) *fmt = GN__NN_NHWC;
    else if (!strcmp(s, "NCHW") || (allow_5d && !strcmp(s, "NCDHW"))) *fmt = GN__NN_NCHW;
    else return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "data_format '%s' is not supported", s);
    return GN_OK;
}

gn_status gn__nn_attr_padding(gn__kctx *c, bool allow_explicit, int *pad)
{
    char s[64];
    gn__nn_attr_str(c, "padding", "", s, sizeof s);
    if (!strcmp(s, "VALID")) *pad = GN__NN_PAD_VALID;
    else if (!strcmp(s, "SAME")) *pad = GN__NN_PAD_SAME;
    else if (allow_explicit && !strcmp(s, "EXPLICIT")) *pad = GN__NN_PAD_EXPLICIT;
    else return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "padding '%s' is not supported", s);
    return GN_OK;
}

gn_status gn__nn_window(gn__kctx *c, int64_t in, int64_t k, int64_t dil, int64_t stride, int pad,
                        int64_t *pad_before, int64_t *pad_after, int64_t *out)
{
    if (stride <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Stride must be > 0, but got %lld", (long long)stride);
    if (dil < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dilation rate must be >= 1, but got %lld", (long long)dil);
    int64_t eff = (k - 1) * dil + 1;
    int64_t o;
    switch (pad) {
    case GN__NN_PAD_VALID:
        o = (in - eff + stride) / stride;
        *pad_before = *pad_after = 0;
        break;
    case GN__NN_PAD_EXPLICIT:
        o = (in + *pad_before + *pad_after - eff + stride) / stride;
        break;
    default: {
        o = (in + stride - 1) / stride;
        int64_t need = (o - 1) * stride + eff - in;
        if (need < 0) need = 0;
        *pad_before = need / 2;
        *pad_after = need - need / 2;
        break;
    }
    }
    if (o < 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Computed output size would be negative: %lld [input_size: %lld, "
                             "effective_filter_size: %lld, stride: %lld]",
                             (long long)o, (long long)in, (long long)eff, (long long)stride);
    *out = o;
    return GN_OK;
}

const char *gn__nn_shape_str(const gn__tensor *t, char *buf, size_t n)
{
    size_t pos = 0;
    if (n == 0) return buf;
    buf[0] = 0;
    pos += (size_t)snprintf(buf + pos, n - pos, "[");
    for (int32_t i = 0; i < t->rank && pos < n; i++)
        pos += (size_t)snprintf(buf + pos, n - pos, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    if (pos < n) snprintf(buf + pos, n - pos, "]");
    return buf;
}

gn_status gn__nn_bad_dtype(gn__kctx *c, int32_t dtype)
{
    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(dtype));
}

/* ---- conversions ------------------------------------------------------------- */
void gn__nn_f16_to_f32(const gn__f16 *s, float *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = (float)s[i];
}

void gn__nn_f32_to_f16(const float *s, gn__f16 *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++) d[i] = (gn__f16)s[i];
}

void gn__nn_to_f32(int32_t dtype, const void *s, float *d, int64_t n)
{
    if (dtype == GN__DT_F16) gn__nn_f16_to_f32(s, d, n);
    else if (dtype == GN__DT_F64)
        for (int64_t i = 0; i < n; i++) d[i] = (float)((const double *)s)[i];
    else if (n)
        memcpy(d, s, (size_t)n * sizeof(float));
}

void gn__nn_to_f64(int32_t dtype, const void *s, double *d, int64_t n)
{
    if (dtype == GN__DT_F16)
        for (int64_t i = 0; i < n; i++) d[i] = (double)((const gn__f16 *)s)[i];
    else if (dtype == GN__DT_F32)
        for (int64_t i = 0; i < n; i++) d[i] = (double)((const float *)s)[i];
    else if (n)
        memcpy(d, s, (size_t)n * sizeof(double));
}

void gn__nn_from_f32(const float *s, int32_t dtype, void *d, int64_t n)
{
    if (dtype == GN__DT_F16) gn__nn_f32_to_f16(s, d, n);
    else if (dtype == GN__DT_F64)
        for (int64_t i = 0; i < n; i++) ((double *)d)[i] = (double)s[i];
    else if (n && d != (const void *)s)
        memcpy(d, s, (size_t)n * sizeof(float));
}

void gn__nn_from_f64(const double *s, int32_t dtype, void *d, int64_t n)
{
    if (dtype == GN__DT_F16)
        for (int64_t i = 0; i < n; i++) ((gn__f16 *)d)[i] = (gn__f16)s[i];
    else if (dtype == GN__DT_F32)
        for (int64_t i = 0; i < n; i++) ((float *)d)[i] = (float)s[i];
    else if (n && d != (const void *)s)
        memcpy(d, s, (size_t)n * sizeof(double));
}

/* ---- strided copies ---------------------------------------------------------- */
#define GN__NN_INNER_COPY(T)                                                       \
    do {                                                                           \
        T *dd = (T *)d;                                                            \
        const T *ss = (const T *)s;                                                \
        for (int64_t j = 0; j < inner; j++) dd[j] = ss[j * istride];               \
    } while (0)

void gn__nn_strided_copy(void *dst, const void *src, int rank, const int64_t *dims, const int64_t *strides,
                         size_t esz)
{
    int64_t total = 1;
    for (int i = 0; i < rank; i++) total *= dims[i];
    if (total == 0) return;
    if (rank == 0) {
        memcpy(dst, src, esz);
        return;
    }
    int64_t inner = dims[rank - 1], istride = strides[rank - 1];
    int64_t idx[GN__MAX_DIMS * 4] = {0};   /* rank <= 4 * GN__MAX_DIMS */
    int64_t off = 0;   /* source element offset of the current row */
    char *d = dst;
    for (int64_t row = 0, rows = total / inner; row < rows; row++) {
        const char *s = (const char *)src + off * (int64_t)esz;
        if (istride == 1) memcpy(d, s, (size_t)inner * esz);
        else if (esz == 4) GN__NN_INNER_COPY(uint32_t);
        else if (esz == 8) GN__NN_INNER_COPY(uint64_t);
        else if (esz == 2) GN__NN_INNER_COPY(uint16_t);
        else GN__NN_INNER_COPY(uint8_t);
        d += (size_t)inner * esz;
        for (int k = rank - 2; k >= 0; k--) {
            off += strides[k];
            if (++idx[k] < dims[k]) break;
            off -= strides[k] * dims[k];
            idx[k] = 0;
        }
    }
}

/* dst[cols, rows] = transpose of src[rows, cols], in cache tiles. */
#define GN__NN_TRANSPOSE(T)                                                                    \
    do {                                                                                       \
        const T *s = src;                                                                      \
        T *d = dst;                                                                            \
        for (int64_t r0 = 0; r0 < rows; r0 += 32)                                              \
            for (int64_t c0 = 0; c0 < cols; c0 += 32) {                                        \
                int64_t r1 = r0 + 32 < rows ? r0 + 32 : rows, c1 = c0 + 32 < cols ? c0 + 32 : cols; \
                for (int64_t r = r0; r < r1; r++)                                              \
                    for (int64_t cc = c0; cc < c1; cc++) d[cc * rows + r] = s[r * cols + cc];  \
            }                                                                                  \
    } while (0)

static void transpose2d(const void *src, void *dst, size_t esz, int64_t rows, int64_t cols)
{
    if (rows == 1 || cols == 1) {
        if (rows * cols > 0) memcpy(dst, src, (size_t)(rows * cols) * esz);
        return;
    }
    if (esz == 4) GN__NN_TRANSPOSE(uint32_t);
    else if (esz == 8) GN__NN_TRANSPOSE(uint64_t);
    else if (esz == 2) GN__NN_TRANSPOSE(uint16_t);
    else GN__NN_TRANSPOSE(uint8_t);
}

void gn__nn_nhwc_to_nchw(const void *src, void *dst, size_t esz, int64_t n, int64_t h, int64_t w, int64_t c)
{
    int64_t img = h * w * c;
    for (int64_t b = 0; b < n; b++)
        transpose2d((const char *)src + (size_t)(b * img) * esz, (char *)dst + (size_t)(b * img) * esz, esz, h * w, c);
}

void gn__nn_nchw_to_nhwc(const void *src, void *dst, size_t esz, int64_t n, int64_t c, int64_t h, int64_t w)
{
    int64_t img = h * w * c;
    for (int64_t b = 0; b < n; b++)
        transpose2d((const char *)src + (size_t)(b * img) * esz, (char *)dst + (size_t)(b * img) * esz, esz, c, h * w);
}

/* ---- epilogues --------------------------------------------------------------- */
static inline float r16f(float v)
{
    return (float)(gn__f16)v;
}

static float load_f(int32_t dt, const void *p, int64_t i)
{
    if (dt == GN__DT_F16) return (float)((const gn__f16 *)p)[i];
    if (dt == GN__DT_F64) return (float)((const double *)p)[i];
    return ((const float *)p)[i];
}

static double load_d(int32_t dt, const void *p, int64_t i)
{
    if (dt == GN__DT_F16) return (double)((const gn__f16 *)p)[i];
    if (dt == GN__DT_F32) return (double)((const float *)p)[i];
    return ((const double *)p)[i];
}

static void epi_f(const gn__nn_epi *e, float *y, int64_t o0, int64_t o1, int64_t ch, int64_t inner)
{
    const float *bias = e->bias, *mean = e->bn_mean, *sc = e->bn_scale, *off = e->bn_offset;
    const bool r16 = e->r16;
    const int act = e->act;
    const float alpha = e->alpha;
    const bool f32_add = e->addend && e->addend_dtype == GN__DT_F32;
    if (inner == 1 && !r16) {
        /* channels last (NHWC, matrix rows): one pass per stage over a whole
         * row, so each loop is branch-free and vectorizes; the same operations
         * per element, in the same order, as the general loop below */
        for (int64_t o = o0; o < o1; o++) {
            float *p = y + o * ch;
            if (e->kind == GN__NN_EPI_BIAS) {
                for (int64_t c = 0; c < ch; c++) p[c] = p[c] + bias[c];
            } else if (e->kind == GN__NN_EPI_BN) {
                for (int64_t c = 0; c < ch; c++) p[c] = (p[c] - mean[c]) * sc[c] + off[c];
            }
            if (f32_add) {
                const float *a = (const float *)e->addend + o * ch;
                for (int64_t c = 0; c < ch; c++) p[c] = p[c] + a[c];
            } else if (e->addend) {
                for (int64_t c = 0; c < ch; c++) p[c] = p[c] + load_f(e->addend_dtype, e->addend, o * ch + c);
            }
            if (act == GN__NN_ACT_RELU) {
                for (int64_t c = 0; c < ch; c++) p[c] = p[c] < 0.0f ? 0.0f : p[c];
            } else if (act == GN__NN_ACT_RELU6) {
                for (int64_t c = 0; c < ch; c++) p[c] = p[c] < 0.0f ? 0.0f : (p[c] > 6.0f ? 6.0f : p[c]);
            } else if (act != GN__NN_ACT_NONE) {
                for (int64_t c = 0; c < ch; c++) p[c] = gn__nn_act_f(act, p[c], alpha);
            }
        }
        return;
    }
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t c = 0; c < ch; c++) {
            int64_t base = (o * ch + c) * inner;
            float *p = y + base;
            if (r16)
                for (int64_t i = 0; i < inner; i++) p[i] = r16f(p[i]);
            if (e->kind == GN__NN_EPI_BIAS) {
                float b = bias[c];
                for (int64_t i = 0; i < inner; i++) p[i] = p[i] + b;
            } else if (e->kind == GN__NN_EPI_BN) {
                float m = mean[c], s = sc[c], of = off[c];
                for (int64_t i = 0; i < inner; i++) p[i] = (p[i] - m) * s + of;
            }
            if (r16 && e->kind != GN__NN_EPI_NONE)
                for (int64_t i = 0; i < inner; i++) p[i] = r16f(p[i]);
            if (e->addend) {
                if (f32_add) {
                    const float *a = (const float *)e->addend + base;
                    for (int64_t i = 0; i < inner; i++) p[i] = p[i] + a[i];
                } else {
                    for (int64_t i = 0; i < inner; i++) p[i] = p[i] + load_f(e->addend_dtype, e->addend, base + i);
                }
                if (r16)
                    for (int64_t i = 0; i < inner; i++) p[i] = r16f(p[i]);
            }
            if (act == GN__NN_ACT_RELU) {
                for (int64_t i = 0; i < inner; i++) p[i] = p[i] < 0.0f ? 0.0f : p[i];
            } else if (act != GN__NN_ACT_NONE) {
                for (int64_t i = 0; i < inner; i++) p[i] = gn__nn_act_f(act, p[i], alpha);
                if (r16)
                    for (int64_t i = 0; i < inner; i++) p[i] = r16f(p[i]);
            }
        }
    }
}

static void epi_d(const gn__nn_epi *e, double *y, int64_t o0, int64_t o1, int64_t ch, int64_t inner)
{
    const double *bias = e->bias, *mean = e->bn_mean, *sc = e->bn_scale, *off = e->bn_offset;
    for (int64_t o = o0; o < o1; o++) {
        for (int64_t c = 0; c < ch; c++) {
            int64_t base = (o * ch + c) * inner;
            double *p = y + base;
            if (e->kind == GN__NN_EPI_BIAS) {
                double b = bias[c];
                for (int64_t i = 0; i < inner; i++) p[i] = p[i] + b;
            } else if (e->kind == GN__NN_EPI_BN) {
                double m = mean[c], s = sc[c], of = off[c];
                for (int64_t i = 0; i < inner; i++) p[i] = (p[i] - m) * s + of;
            }
            if (e->addend)
                for (int64_t i = 0; i < inner; i++) p[i] = p[i] + load_d(e->addend_dtype, e->addend, base + i);
            if (e->act != GN__NN_ACT_NONE)
                for (int64_t i = 0; i < inner; i++) p[i] = gn__nn_act_d(e->act, p[i], (double)e->alpha);
        }
    }
}

void gn__nn_epi_apply(const gn__nn_epi *e, void *y, int64_t o0, int64_t o1, int64_t ch, int64_t inner)
{
    if (e->kind == GN__NN_EPI_NONE && !e->addend && e->act == GN__NN_ACT_NONE && !e->r16) return;
    if (e->f64) epi_d(e, y, o0, o1, ch, inner);
    else epi_f(e, y, o0, o1, ch, inner);
}

void gn__nn_epi_free(gn__nn_epi *e)
{
    free(e->owned);
    e->owned = NULL;
}

/* ---- fused_ops parsing -------------------------------------------------------- */
static bool list_str_eq(const ProtobufCBinaryData *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len == n && !memcmp(s->data, lit, n);
}

static int act_from_name(const ProtobufCBinaryData *s)
{
    static const struct {
        const char *name;
        int act;
    } acts[] = {
        {"Relu", GN__NN_ACT_RELU},           {"Relu6", GN__NN_ACT_RELU6},
        {"Elu", GN__NN_ACT_ELU},             {"LeakyRelu", GN__NN_ACT_LEAKY_RELU},
        {"Tanh", GN__NN_ACT_TANH},           {"Sigmoid", GN__NN_ACT_SIGMOID},
        {"GeluApproximate", GN__NN_ACT_GELU_APPROX}, {"GeluExact", GN__NN_ACT_GELU_EXACT},
    };
    for (size_t i = 0; i < GN__ARRAY_LEN(acts); i++)
        if (list_str_eq(s, acts[i].name)) return acts[i].act;
    return -1;
}

static gn_status fused_ops_unsupported(gn__kctx *c, const Tensorflow__AttrValue__ListValue *l)
{
    char buf[512];
    size_t pos = 0;
    buf[0] = 0;
    for (size_t i = 0; l && i < l->n_s && pos + 2 < sizeof buf; i++)
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%.*s", i ? "," : "", (int)l->s[i].len,
                                (const char *)l->s[i].data);
    return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "fused_ops [%s] is not supported", buf);
}

gn_status gn__nn_epi_from_fused(gn__kctx *c, const gn__tensor *args, uint32_t n_args, int64_t ch,
                                const gn__tensor *out_shape, int32_t dtype, gn__nn_epi *e)
{
    memset(e, 0, sizeof *e);
    e->f64 = dtype == GN__DT_F64;
    e->r16 = dtype == GN__DT_F16;
    const Tensorflow__AttrValue__ListValue *l = gn__nn_attr_list(c, "fused_ops");
    size_t n = l ? l->n_s : 0, i = 0;
    uint32_t need = 0;
    if (n == 0) return fused_ops_unsupported(c, l);
    if (list_str_eq(&l->s[0], "BiasAdd")) {
        e->kind = GN__NN_EPI_BIAS;
        need = 1;
    } else if (list_str_eq(&l->s[0], "FusedBatchNorm")) {
        e->kind = GN__NN_EPI_BN;
        need = 4;
    } else {
        return fused_ops_unsupported(c, l);
    }
    i = 1;
    bool add = false;
    if (i < n && (list_str_eq(&l->s[i], "Add") || list_str_eq(&l->s[i], "AddV2"))) {
        add = true;
        need++;
        i++;
    }
    if (i < n) {
        int act = act_from_name(&l->s[i]);
        if (act < 0) return fused_ops_unsupported(c, l);
        e->act = act;
        i++;
    }
    if (i != n) return fused_ops_unsupported(c, l);
    e->alpha = gn__nn_attr_float(c, "leakyrelu_alpha", 0.2f);
    float eps = gn__nn_attr_float(c, "epsilon", 0.0001f);
    if (n_args != need)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "fused_ops need %u args, the node has %u", need, n_args);
    uint32_t n_par = e->kind == GN__NN_EPI_BIAS ? 1 : 4;
    for (uint32_t k = 0; k < n_par; k++) {
        const gn__tensor *a = &args[k];
        if (a->dtype != GN__DT_F16 && a->dtype != GN__DT_F32 && a->dtype != GN__DT_F64) return gn__nn_bad_dtype(c, a->dtype);
        /* a vector of ch elements; TensorFlow also takes [1, ..., 1, ch] */
        bool ok = a->rank >= 1 && a->dims[a->rank - 1] == ch;
        for (int32_t d = 0; ok && d + 1 < a->rank; d++) ok = a->dims[d] == 1;
        if (!ok) {
            char s1[128];
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s argument %u must be a vector of %lld elements, got %s",
                                 e->kind == GN__NN_EPI_BIAS ? "BiasAdd" : "FusedBatchNorm", k, (long long)ch,
                                 gn__nn_shape_str(a, s1, sizeof s1));
        }
    }
    if (add) {
        const gn__tensor *a = &args[n_par];
        bool same = a->rank == out_shape->rank;
        for (int32_t d = 0; same && d < a->rank; d++) same = a->dims[d] == out_shape->dims[d];
        if (!same) {
            char s1[128], s2[128];
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Add argument shape %s does not match the output shape %s",
                                 gn__nn_shape_str(a, s1, sizeof s1), gn__nn_shape_str(out_shape, s2, sizeof s2));
        }
        if (a->dtype != GN__DT_F16 && a->dtype != GN__DT_F32 && a->dtype != GN__DT_F64) return gn__nn_bad_dtype(c, a->dtype);
        e->addend = a->data;
        e->addend_dtype = a->dtype;
    }
    size_t esz = e->f64 ? sizeof(double) : sizeof(float);
    size_t total = (size_t)(ch ? ch : 1) * n_par * esz;
    e->owned = malloc(total);
    if (!e->owned) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes", total);
    if (e->kind == GN__NN_EPI_BIAS) {
        if (e->f64) gn__nn_to_f64(args[0].dtype, args[0].data, e->owned, ch);
        else gn__nn_to_f32(args[0].dtype, args[0].data, e->owned, ch);
        e->bias = e->owned;
    } else if (e->f64) {
        double *p = e->owned;
        double *mean = p, *scale = p + ch, *offset = p + 2 * ch;
        for (int64_t k = 0; k < ch; k++) {
            double s = load_d(args[0].dtype, args[0].data, k), o = load_d(args[1].dtype, args[1].data, k);
            double m = load_d(args[2].dtype, args[2].data, k), v = load_d(args[3].dtype, args[3].data, k);
            mean[k] = m;
            scale[k] = gn__nn_bn_factor_d(s, v, (double)eps);
            offset[k] = o;
        }
        e->bn_mean = mean;
        e->bn_scale = scale;
        e->bn_offset = offset;
    } else {
        float *p = e->owned;
        float *mean = p, *scale = p + ch, *offset = p + 2 * ch;
        for (int64_t k = 0; k < ch; k++) {
            float s = load_f(args[0].dtype, args[0].data, k), o = load_f(args[1].dtype, args[1].data, k);
            float m = load_f(args[2].dtype, args[2].data, k), v = load_f(args[3].dtype, args[3].data, k);
            mean[k] = m;
            scale[k] = gn__nn_bn_factor_f(s, v, eps);
            offset[k] = o;
        }
        e->bn_mean = mean;
        e->bn_scale = scale;
        e->bn_offset = offset;
    }
    return GN_OK;
}
