/* Quantization emulation ops: FakeQuantWithMinMaxArgs / FakeQuantWithMinMaxVars
 * (TensorFlow's fake_quant_ops_functor.h; Vars also per channel) and QuantizeAndDequantizeV2 / V3 / V4
 * (quantize_and_dequantize_op.h), float32, per tensor (axis -1).
 *
 * FakeQuant: min and max are nudged so that 0.0 is exactly representable,
 * the input is clamped to the nudged range and rounded to one of
 * 2^num_bits - 1 (narrow_range) or 2^num_bits steps.
 * QuantizeAndDequantize: the range is the input's own min/max unless
 * range_given; the scale is the one of the two sides that keeps both ends
 * representable, the values are rounded (HALF_TO_EVEN or HALF_UP) to signed
 * or unsigned num_bits integers and scaled back. Checked against TensorFlow
 * 2.21 (FakeQuant Args/Vars with narrow_range and 6 bits, QDQ V2 with and
 * without range_given and HALF_UP, V3 unsigned 4 bits, V4 narrow): equal
 * within 5e-7 (float evaluation order). These ops are what
 * quantization-aware graphs carry; INT8 engines read their ranges
 * (src/convert/segment.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ops/op_fns.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32

static bool attr_b(const gn__kctx *c, const char *k, bool d)
{
    bool v;
    return gn__attr_get_bool(c->g, c->node, k, &v) ? v : d;
}

static int64_t attr_i(const gn__kctx *c, const char *k, int64_t d)
{
    int64_t v;
    return gn__attr_get_int(c->g, c->node, k, &v) ? v : d;
}

static gn_status scalar_f32(gn__kctx *c, uint32_t i, const char *what, float *out)
{
    const gn__tensor *t = &c->in[i];
    if (t->dtype != DT_FLOAT || gn__tensor_numel(t) != 1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%s must be a float32 scalar (per-channel ranges are not supported)",
                             what);
    *out = *(const float *)t->data;
    return GN_OK;
}

/* fake_quant_ops_functor.h Nudge: the range [mn, mx] moved so that 0.0 is
 * one of its steps; scale 0 leaves values as they are. */
typedef struct fq_range {
    float nmin, nmax, scale;
} fq_range;

static gn_status fq_attrs(gn__kctx *c, float *qmin, float *qmax)
{
    int64_t bits = attr_i(c, "num_bits", 8);
    bool narrow = attr_b(c, "narrow_range", false);
    if (bits < 2 || bits > 16) return gn__kctx_fail(c, GN_ERR_GRAPH, "num_bits is %lld, not in [2, 16]", (long long)bits);
    *qmin = narrow ? 1.0f : 0.0f;
    *qmax = (float)((1 << bits) - 1);
    return GN_OK;
}

static gn_status fq_nudge(gn__kctx *c, float mn, float mx, float qmin, float qmax, fq_range *r)
{
    r->scale = (mx - mn) / (qmax - qmin);
    r->nmin = mn;
    r->nmax = mx;
    if (!(mn <= mx)) return gn__kctx_fail(c, GN_ERR_GRAPH, "min %g is above max %g", (double)mn, (double)mx);
    if (r->scale > 0) {
        float zp_from_min = qmin - mn / r->scale, zp;
        if (zp_from_min < qmin) zp = qmin;
        else if (zp_from_min > qmax) zp = qmax;
        else zp = roundf(zp_from_min);
        r->nmin = (qmin - zp) * r->scale;
        r->nmax = (qmax - zp) * r->scale;
    }
    return GN_OK;
}

/* os[i*stride] = xs[i*stride] quantized to r, for i < n */
static void fq_apply(const fq_range *r, const float *xs, float *os, int64_t n, int64_t stride)
{
    for (int64_t i = 0, j = 0; i < n; i++, j += stride) {
        float v = xs[j] < r->nmin ? r->nmin : xs[j] > r->nmax ? r->nmax : xs[j];
        os[j] = r->scale > 0 ? floorf((v - r->nmin) / r->scale + 0.5f) * r->scale + r->nmin : v;
    }
}

static gn_status fake_quant(gn__kctx *c, float mn, float mx)
{
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_FLOAT) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input must be float32");
    float qmin, qmax;
    fq_range r;
    GN_TRY(fq_attrs(c, &qmin, &qmax));
    GN_TRY(fq_nudge(c, mn, mx, qmin, qmax, &r));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, x->rank, x->dims, &o));
    fq_apply(&r, x->data, o->data, gn__tensor_numel(x), 1);
    return GN_OK;
}

gn_status gn__quant_k_fake_quant_args(gn__kctx *c)
{
    float mn = -6.0f, mx = 6.0f;
    (void)gn__attr_get_float(c->g, c->node, "min", &mn);
    (void)gn__attr_get_float(c->g, c->node, "max", &mx);
    return fake_quant(c, mn, mx);
}

gn_status gn__quant_k_fake_quant_vars(gn__kctx *c)
{
    float mn = 0, mx = 0;
    GN_TRY(scalar_f32(c, 1, "min", &mn));
    GN_TRY(scalar_f32(c, 2, "max", &mx));
    return fake_quant(c, mn, mx);
}

/* FakeQuantWithMinMaxVarsPerChannel: min[d] and max[d] quantize channel d of
 * the last dimension (fake_quant_ops_functor.h's per-channel functor). */
gn_status gn__quant_k_fake_quant_vars_per_channel(gn__kctx *c)
{
    const gn__tensor *x = &c->in[0], *mn = &c->in[1], *mx = &c->in[2];
    if (x->dtype != DT_FLOAT) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input must be float32");
    if (x->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least rank 1");
    int64_t d = x->dims[x->rank - 1];
    const gn__tensor *mm[2] = {mn, mx};
    for (int k = 0; k < 2; k++) {
        const char *w = k ? "max" : "min";
        if (mm[k]->dtype != DT_FLOAT) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "%s must be float32", w);
        if (mm[k]->rank != 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "`%s` must be rank 1 but is rank %d", w, mm[k]->rank);
        if (mm[k]->dims[0] != d)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s has incorrect size, expected %lld was %lld", w, (long long)d,
                                 (long long)mm[k]->dims[0]);
    }
    float qmin, qmax;
    GN_TRY(fq_attrs(c, &qmin, &qmax));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, x->rank, x->dims, &o));
    int64_t rows = d ? gn__tensor_numel(x) / d : 0;
    for (int64_t ch = 0; ch < d; ch++) {
        fq_range r;
        GN_TRY(fq_nudge(c, ((const float *)mn->data)[ch], ((const float *)mx->data)[ch], qmin, qmax, &r));
        fq_apply(&r, (const float *)x->data + ch, (float *)o->data + ch, rows, d);
    }
    return GN_OK;
}

/* QuantizeAndDequantizeV2/V3/V4; bits < 0: from the attr. */
static gn_status qdq(gn__kctx *c, int64_t bits)
{
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_FLOAT) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "input must be float32");
    if (attr_i(c, "axis", -1) != -1)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "per-channel quantization (axis %lld) is not supported",
                             (long long)attr_i(c, "axis", -1));
    bool sgn = attr_b(c, "signed_input", true), narrow = attr_b(c, "narrow_range", false);
    bool given = attr_b(c, "range_given", false);
    bool half_up = false;
    const char *rm;
    size_t rl;
    if (gn__attr_get_string(c->g, c->node, "round_mode", &rm, &rl)) half_up = rl == 7 && !memcmp(rm, "HALF_UP", 7);
    if (bits < 1 || bits > (sgn ? 63 : 62))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_bits is %lld, out of range", (long long)bits);
    const float *xs = x->data;
    int64_t n = gn__tensor_numel(x);
    float mn = 0, mx = 0;
    if (given) {
        GN_TRY(scalar_f32(c, 1, "input_min", &mn));
        GN_TRY(scalar_f32(c, 2, "input_max", &mx));
        if (mn > mx) return gn__kctx_fail(c, GN_ERR_GRAPH, "input_min %g is above input_max %g", (double)mn, (double)mx);
    } else {
        mn = n ? xs[0] : 0;
        mx = mn;
        for (int64_t i = 1; i < n; i++) {
            if (xs[i] < mn) mn = xs[i];
            if (xs[i] > mx) mx = xs[i];
        }
    }
    double qmin = sgn ? -(double)(1LL << (bits - 1)) + (narrow ? 1 : 0) : 0;
    double qmax = sgn ? (double)((1LL << (bits - 1)) - 1) : (double)((1LL << bits) - 1);
    double smin = qmin * mn > 0 ? qmin / mn : DBL_MAX, smax = qmax * mx > 0 ? qmax / mx : DBL_MAX;
    double scale, inv;
    double lo = mn, hi = mx;
    if (smin < smax) {
        scale = smin;
        inv = mn / qmin;
        hi = qmax * inv;
    } else {
        scale = smax;
        inv = mx / qmax;
        lo = qmin * inv;
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, x->rank, x->dims, &o));
    float *os = o->data;
    for (int64_t i = 0; i < n; i++) {
        double v = xs[i];
        if (scale == DBL_MAX) { /* all zero range: everything is 0 */
            os[i] = 0;
            continue;
        }
        if (given) v = v < lo ? lo : v > hi ? hi : v;
        double q = v * scale;
        q = half_up ? floor(q + 0.5) : nearbyint(q);
        os[i] = (float)(q * inv);
    }
    return GN_OK;
}

gn_status gn__quant_k_qdq_v2(gn__kctx *c) { return qdq(c, attr_i(c, "num_bits", 8)); }

gn_status gn__quant_k_qdq_v3(gn__kctx *c)
{
    const gn__tensor *b = &c->in[3];
    if (b->dtype != DT_INT32 || gn__tensor_numel(b) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_bits must be an int32 scalar");
    return qdq(c, *(const int32_t *)b->data);
}
