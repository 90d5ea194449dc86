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
#include <stdint.h>
#include <string.h>

#include "ops/kernels/math_internal.h"
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

/* ---- Dequantize(input T, min_range, max_range) -> float / bfloat16 ----------------------------- */
/* TensorFlow's dequantize_op.cc (and quantization_utils.h for MIN_FIRST), in
 * float as its CPU kernel evaluates them; lo/hi are T's limits:
 *   MIN_COMBINED: (x + half) * (max - min) / (float(hi) - lo) + min, half =
 *     (float(hi) - lo + 1) / 2 for signed T, 0 for unsigned;
 *   MIN_FIRST (per tensor only): s = (max - min) / (2^bits - 1), m =
 *     round(min / s) * s (min when max == min); (m - float(lo) * s) + x * s;
 *   SCALED: x * (lo == 0 ? max / hi : fmax(min / (lo + narrow_range), max / hi)).
 * axis >= 0 with more than one slice: one (min, max) per index of that dim.
 * SCALED per tensor reads x as float(int(float(x))): TensorFlow casts the
 * qint to int through float, so a qint32 >= 2^31 - 64 becomes INT32_MIN.
 * bfloat16 output: the float result rounded to nearest even. */
enum { DQ_MIN_COMBINED, DQ_MIN_FIRST, DQ_SCALED };

static float dq_at(const gn__tensor *x, int64_t i)
{
    switch (x->dtype) {
    case TENSORFLOW__DATA_TYPE__DT_QINT8: return (float)((const int8_t *)x->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_QUINT8: return (float)((const uint8_t *)x->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_QINT16: return (float)((const int16_t *)x->data)[i];
    case TENSORFLOW__DATA_TYPE__DT_QUINT16: return (float)((const uint16_t *)x->data)[i];
    default: return (float)((const int32_t *)x->data)[i];   /* DT_QINT32 */
    }
}


gn_status gn__quant_k_dequantize(gn__kctx *c)
{
    if (c->n_in < 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 3 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *tmin = &c->in[1], *tmax = &c->in[2];
    int bits;
    int64_t lo, hi;
    switch (x->dtype) {
    case TENSORFLOW__DATA_TYPE__DT_QINT8: bits = 8, lo = INT8_MIN, hi = INT8_MAX; break;
    case TENSORFLOW__DATA_TYPE__DT_QUINT8: bits = 8, lo = 0, hi = UINT8_MAX; break;
    case TENSORFLOW__DATA_TYPE__DT_QINT16: bits = 16, lo = INT16_MIN, hi = INT16_MAX; break;
    case TENSORFLOW__DATA_TYPE__DT_QUINT16: bits = 16, lo = 0, hi = UINT16_MAX; break;
    case TENSORFLOW__DATA_TYPE__DT_QINT32: bits = 32, lo = INT32_MIN, hi = INT32_MAX; break;
    default:
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be qint8, quint8, qint16, quint16 or qint32, got %s",
                             gn__dtype_name(x->dtype));
    }
    if (tmin->dtype != DT_FLOAT || tmax->dtype != DT_FLOAT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "min_range and max_range must be float");
    int odt = DT_FLOAT;
    (void)gn__attr_get_type(c->g, c->node, "dtype", &odt);
    const char *ms = "MIN_COMBINED";
    size_t ml = strlen(ms);
    (void)gn__attr_get_string(c->g, c->node, "mode", &ms, &ml);
    if (odt != DT_FLOAT && odt != TENSORFLOW__DATA_TYPE__DT_BFLOAT16)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Output type must be bfloat16 or float, is '%s'", gn__dtype_name(odt));
    int mode = -1;
    if (ml == 12 && !memcmp(ms, "MIN_COMBINED", 12)) mode = DQ_MIN_COMBINED;
    else if (ml == 9 && !memcmp(ms, "MIN_FIRST", 9)) mode = DQ_MIN_FIRST;
    else if (ml == 6 && !memcmp(ms, "SCALED", 6)) mode = DQ_SCALED;
    if (odt == DT_FLOAT && mode < 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '%.*s'",
                             (int)ml, ms);
    if (odt != DT_FLOAT && mode != DQ_MIN_COMBINED)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "When output type is bfloat16, Mode string must be 'MIN_COMBINED', is '%.*s'",
                             (int)ml, ms);
    bool narrow = attr_b(c, "narrow_range", false);
    int64_t axis = attr_i(c, "axis", -1);
    if (axis >= x->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Axis must be less than input dimension(%d), got %lld", x->rank,
                             (long long)axis);
    int64_t slices = axis > -1 ? x->dims[axis] : 1;
    int64_t nmin = gn__tensor_numel(tmin), nmax = gn__tensor_numel(tmax);
    if (nmin != slices)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "input_min_tensor must have as many elements as input on the dequantization axis (%lld), "
                             "got %lld, expected %lld", (long long)axis, (long long)nmin, (long long)slices);
    if (nmax != slices)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "input_max_tensor must have as many elements as input on the dequantization axis (%lld), "
                             "got %lld, expected %lld", (long long)axis, (long long)nmax, (long long)slices);
    if (slices != 1 && mode == DQ_MIN_FIRST)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "MIN_FIRST mode is not implemented for Dequantize with axis != -1.");
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x), post = 1;
    for (int32_t d = (int32_t)axis + 1; slices != 1 && d < x->rank; d++) post *= x->dims[d];
    const float *mins = tmin->data, *maxs = tmax->data;
    const float flo = (float)lo, fhi = (float)hi;
    const float half = lo < 0 ? (fhi - flo + 1.0f) / 2.0f : 0.0f;
    float *of = odt == DT_FLOAT ? o->data : NULL;
    uint16_t *ob = odt == DT_FLOAT ? NULL : o->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = slices == 1 ? 0 : (i / post) % slices;
        float mn = mins[s], mx = maxs[s], xv = dq_at(x, i), y;
        if (mode == DQ_MIN_COMBINED) {
            float scale = (mx - mn) / (fhi - flo);
            y = (xv + half) * scale + mn;
        } else if (mode == DQ_MIN_FIRST) {
            float scale = (float)((double)(mx - mn) / ((double)((int64_t)1 << bits) - 1.0));
            float mr = mx == mn ? mn : roundf(mn / scale) * scale;
            y = (mr - flo * scale) + xv * scale;
        } else {
            /* per tensor, TensorFlow goes through int from a float: a qint32 that
             * rounds to 2^31 wraps to INT32_MIN (x86's conversion overflow) */
            if (slices == 1 && bits == 32 && xv >= 2147483648.0f) xv = -2147483648.0f;
            float a = mn / (float)(lo + (narrow ? 1 : 0)), b = mx / fhi;
            float scale = lo == 0 ? b : a < b ? b : a;   /* std::max */
            y = xv * scale;
        }
        if (of) of[i] = y;
        else ob[i] = gn__km_f2bf(y);
    }
    return GN_OK;
}
