/* BiasAdd / BiasAddV1 (tensorflow/core/kernels/bias_op.cc) and
 * FusedBatchNorm / V2 / V3 / _FusedBatchNormEx (fused_batch_norm_op.cc).
 *
 * Both are the per-channel epilogues of nn.c applied to a copy of x, so a
 * contraction fused with them gives the same bits as the separate kernels.
 * Batch norm in inference: y = (x - mean) * (scale / sqrt(var + eps)) + offset
 * in float (U); batch_mean / batch_variance pass mean / variance through and
 * the reserve spaces hold them too (TensorFlow's CPU kernel leaves those
 * uninitialised). In training: batch statistics over every axis but the
 * channel (two passes, accumulated in double), the running outputs with
 * exponential_avg_factor and Bessel's correction, reserve_space_1/2 the batch
 * mean and biased variance; reserve_space_3 is a scalar 0. */
#include <stdlib.h>

#include "ops/kernels/nn_internal.h"
#include "opdef/registry.h"

/* ---- BiasAdd --------------------------------------------------------------------- */
#define GN__NN_BIAS_INT(T, UT)                                                                   \
    do {                                                                                         \
        const T *xs = x->data, *bs = b->data;                                                    \
        T *ys = o->data;                                                                         \
        for (int64_t oo = 0; oo < outer; oo++)                                                   \
            for (int64_t ch = 0; ch < nch; ch++) {                                               \
                int64_t base = (oo * nch + ch) * inner;                                          \
                for (int64_t i = 0; i < inner; i++)                                              \
                    ys[base + i] = (T)((UT)xs[base + i] + (UT)bs[ch]);                           \
            }                                                                                    \
    } while (0)

static gn_status bias_add(gn__kctx *c, bool v1)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *b = &c->in[1];
    char s1[128], s2[128];
    int fmt = GN__NN_NHWC;
    if (!v1) GN_TRY(gn__nn_attr_format(c, true, &fmt));
    int32_t dt = x->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32 && dt != GN__DT_F64 && dt != TENSORFLOW__DATA_TYPE__DT_INT32 &&
        dt != TENSORFLOW__DATA_TYPE__DT_INT64)
        return gn__nn_bad_dtype(c, dt);
    if (b->dtype != dt)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "value is %s but bias is %s", gn__dtype_name(dt), gn__dtype_name(b->dtype));
    if (x->rank < 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input tensor must be at least 2D: %s", gn__nn_shape_str(x, s1, sizeof s1));
    if (b->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Biases must be 1D: %s", gn__nn_shape_str(b, s1, sizeof s1));
    int cd = fmt == GN__NN_NCHW ? 1 : x->rank - 1;
    int64_t nch = x->dims[cd];
    if (b->dims[0] != nch)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Must provide as many biases as the channel dimension of the input tensor: %s vs. %s",
                             gn__nn_shape_str(b, s1, sizeof s1), gn__nn_shape_str(x, s2, sizeof s2));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < cd; i++) outer *= x->dims[i];
    for (int i = cd + 1; i < x->rank; i++) inner *= x->dims[i];
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    if (dt == TENSORFLOW__DATA_TYPE__DT_INT32) {
        GN__NN_BIAS_INT(int32_t, uint32_t);
        return GN_OK;
    }
    if (dt == TENSORFLOW__DATA_TYPE__DT_INT64) {
        GN__NN_BIAS_INT(int64_t, uint64_t);
        return GN_OK;
    }
    gn__nn_epi e;
    memset(&e, 0, sizeof e);
    e.kind = GN__NN_EPI_BIAS;
    e.f64 = dt == GN__DT_F64;
    e.r16 = dt == GN__DT_F16;
    if (dt == GN__DT_F16) {
        float *buf = malloc((size_t)(n + nch + 1) * sizeof(float));
        if (!buf) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
        gn__nn_f16_to_f32(x->data, buf, n);
        gn__nn_f16_to_f32(b->data, buf + n, nch);
        e.bias = buf + n;
        gn__nn_epi_apply(&e, buf, 0, outer, nch, inner);
        gn__nn_f32_to_f16(buf, o->data, n);
        free(buf);
        return GN_OK;
    }
    if (n) memcpy(o->data, x->data, (size_t)n * (dt == GN__DT_F64 ? sizeof(double) : sizeof(float)));
    e.bias = b->data;
    gn__nn_epi_apply(&e, o->data, 0, outer, nch, inner);
    return GN_OK;
}

gn_status gn__nn_k_bias_add(gn__kctx *c)
{
    return bias_add(c, false);
}

gn_status gn__nn_k_bias_add_v1(gn__kctx *c)
{
    return bias_add(c, true);
}

/* ---- FusedBatchNorm ------------------------------------------------------------------ */
static gn_status fbn_vec(gn__kctx *c, int idx, const char *what, int64_t nch, bool check_count, const char *prefix)
{
    char s1[128];
    const gn__tensor *t = &c->in[idx];
    if (t->dtype != GN__DT_F32) return gn__nn_bad_dtype(c, t->dtype);
    if (t->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be 1-dimensional: %s", what, gn__nn_shape_str(t, s1, sizeof s1));
    if (check_count && t->dims[0] != nch) {
        if (prefix)
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "%s, %s must have the same number of elements as the channels of x, got %lld and %lld",
                                 prefix, what, (long long)t->dims[0], (long long)nch);
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "%s must have the same number of elements as the channels of x, got %lld and %lld", what,
                             (long long)t->dims[0], (long long)nch);
    }
    return GN_OK;
}

static gn_status fbn_run(gn__kctx *c, bool ex)
{
    char s1[128], s2[128];
    if (c->n_in < 5) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 5 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0];
    int32_t dt = x->dtype;
    if (dt != GN__DT_F16 && dt != GN__DT_F32) return gn__nn_bad_dtype(c, dt);
    int fmt;
    GN_TRY(gn__nn_attr_format(c, true, &fmt));
    float eps = gn__nn_attr_float(c, "epsilon", 0.0001f);
    float factor = gn__nn_attr_float(c, "exponential_avg_factor", 1.0f);
    bool training = gn__nn_attr_bool(c, "is_training", true);
    bool relu = false;
    const gn__tensor *side = NULL;
    if (ex) {
        char am[64];
        gn__nn_attr_str(c, "activation_mode", "Identity", am, sizeof am);
        if (!strcmp(am, "Relu")) relu = true;
        else if (strcmp(am, "Identity"))
            return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Unsupported activation mode: %s", am);
        int64_t ns = gn__nn_attr_int(c, "num_side_inputs", 0);
        if (ns < 0 || ns > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "FusedBatchNorm accepts at most one side input.");
        if (ns == 1) {
            if (c->n_in < 6) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 6 inputs, got %u", c->n_in);
            side = &c->in[5];
            if (training && !relu)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Identity activation is not supported with non-empty side input");
        }
    }
    if (x->rank != 4 && x->rank != 5)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 4 or 5-dimensional: %s", gn__nn_shape_str(x, s1, sizeof s1));
    int cd = fmt == GN__NN_NCHW ? 1 : x->rank - 1;
    int64_t nch = x->dims[cd];
    bool chk = !training || factor != 1.0f;
    const char *prefix = training ? "When exponential_avg_factor != 1" : "When is_training=false";
    GN_TRY(fbn_vec(c, 1, "scale", nch, true, NULL));
    GN_TRY(fbn_vec(c, 2, "offset", nch, true, NULL));
    GN_TRY(fbn_vec(c, 3, "mean", nch, chk, prefix));
    GN_TRY(fbn_vec(c, 4, "variance", nch, chk, prefix));
    if (side) {
        bool same = side->rank == x->rank && side->dtype == dt;
        for (int i = 0; same && i < x->rank; i++) same = side->dims[i] == x->dims[i];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "side_input shape must be equal to input shape: %s != %s",
                                 gn__nn_shape_str(side, s1, sizeof s1), gn__nn_shape_str(x, s2, sizeof s2));
    }
    const float *scale = c->in[1].data, *offset = c->in[2].data, *mean = c->in[3].data, *var = c->in[4].data;
    int64_t outer = 1, inner = 1, n = gn__tensor_numel(x);
    for (int i = 0; i < cd; i++) outer *= x->dims[i];
    for (int i = cd + 1; i < x->rank; i++) inner *= x->dims[i];
    /* outputs */
    gn__tensor *y, *bm, *bv, *r1, *r2, *r3 = NULL;
    int64_t cdim[1] = {nch};
    GN_TRY(gn__kctx_output(c, 0, dt, x->rank, x->dims, &y));
    GN_TRY(gn__kctx_output(c, 1, GN__DT_F32, 1, cdim, &bm));
    GN_TRY(gn__kctx_output(c, 2, GN__DT_F32, 1, cdim, &bv));
    GN_TRY(gn__kctx_output(c, 3, GN__DT_F32, 1, cdim, &r1));
    GN_TRY(gn__kctx_output(c, 4, GN__DT_F32, 1, cdim, &r2));
    if (c->n_out > 5) {
        GN_TRY(gn__kctx_output(c, 5, GN__DT_F32, 0, NULL, &r3));
        *(float *)r3->data = 0.0f;
    }
    float *obm = bm->data, *obv = bv->data, *or1 = r1->data, *or2 = r2->data;
    if (n == 0) {
        for (int64_t k = 0; k < nch; k++) obm[k] = obv[k] = or1[k] = or2[k] = NAN;
        return GN_OK;
    }
    /* x in float: the output buffer itself for float32 */
    float *buf = NULL, *xf;
    float *par = malloc((size_t)(3 * nch + 1) * sizeof(float));
    if (!par) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
    if (dt == GN__DT_F16) {
        buf = malloc((size_t)n * sizeof(float));
        if (!buf) {
            free(par);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
        }
        gn__nn_f16_to_f32(x->data, buf, n);
        xf = buf;
    } else {
        memcpy(y->data, x->data, (size_t)n * sizeof(float));
        xf = y->data;
    }
    float *pm = par, *ps = par + nch, *po = par + 2 * nch;
    if (!training) {
        for (int64_t k = 0; k < nch; k++) {
            pm[k] = mean[k];
            ps[k] = gn__nn_bn_factor_f(scale[k], var[k], eps);
            po[k] = offset[k];
            obm[k] = or1[k] = mean[k];
            obv[k] = or2[k] = var[k];
        }
    } else {
        double *acc = calloc((size_t)nch + 1, sizeof(double));
        if (!acc) {
            free(par);
            free(buf);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate scratch memory");
        }
        int64_t rest = n / nch;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < nch; k++) {
                const float *p = xf + (o * nch + k) * inner;
                double s = 0;
                for (int64_t i = 0; i < inner; i++) s += p[i];
                acc[k] += s;
            }
        for (int64_t k = 0; k < nch; k++) pm[k] = (float)(acc[k] / (double)rest);
        memset(acc, 0, (size_t)nch * sizeof(double));
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < nch; k++) {
                const float *p = xf + (o * nch + k) * inner;
                double s = 0, mk = pm[k];
                for (int64_t i = 0; i < inner; i++) s += ((double)p[i] - mk) * ((double)p[i] - mk);
                acc[k] += s;
            }
        float adjust = (float)rest / (float)(rest > 1 ? rest - 1 : 1);
        for (int64_t k = 0; k < nch; k++) {
            float bvar = (float)(acc[k] / (double)rest);
            ps[k] = gn__nn_bn_factor_f(scale[k], bvar, eps);
            po[k] = offset[k];
            or1[k] = pm[k];
            or2[k] = bvar;
            if (factor == 1.0f) {
                obm[k] = pm[k];
                obv[k] = bvar * adjust;
            } else {
                float one_minus = 1.0f - factor;
                obm[k] = one_minus * mean[k] + factor * pm[k];
                obv[k] = one_minus * var[k] + (factor * adjust) * bvar;
            }
        }
        free(acc);
    }
    gn__nn_epi e;
    memset(&e, 0, sizeof e);
    e.kind = GN__NN_EPI_BN;
    e.r16 = dt == GN__DT_F16;
    e.bn_mean = pm;
    e.bn_scale = ps;
    e.bn_offset = po;
    if (side) {
        e.addend = side->data;
        e.addend_dtype = side->dtype;
    }
    e.act = relu ? GN__NN_ACT_RELU : GN__NN_ACT_NONE;
    gn__nn_epi_apply(&e, xf, 0, outer, nch, inner);
    if (buf) gn__nn_f32_to_f16(buf, y->data, n);
    free(buf);
    free(par);
    return GN_OK;
}

gn_status gn__nn_k_fused_batch_norm(gn__kctx *c)
{
    return fbn_run(c, false);
}

gn_status gn__nn_k_fused_batch_norm_ex(gn__kctx *c)
{
    return fbn_run(c, true);
}
