/* Comparing tensors: what `grapnel verify` reports (gn_tensor_compare). */
#include <math.h>
#include <stdio.h>

#include "graph/tensor.h"
#include "grapnel/runtime.h"
#include "ops/kernel.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

double gn_compare_default_tol(int32_t dtype)
{
    switch (dtype) {
    case DT(FLOAT):
    case DT(DOUBLE): return 1e-5;
    case DT(HALF):
    case DT(BFLOAT16): return 1e-2;
    default: return 0;
    }
}

static double get_f(const gn_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT(FLOAT): return ((const float *)t->data)[i];
    case DT(DOUBLE): return ((const double *)t->data)[i];
    case DT(HALF): return (double)((const gn__f16 *)t->data)[i];
    case DT(BFLOAT16): {
        uint32_t u = (uint32_t)((const uint16_t *)t->data)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    default: return 0;
    }
}

static double get_num(const gn_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT(INT8): return ((const int8_t *)t->data)[i];
    case DT(UINT8): return ((const uint8_t *)t->data)[i];
    case DT(BOOL): return ((const uint8_t *)t->data)[i] != 0;
    case DT(INT16): return ((const int16_t *)t->data)[i];
    case DT(UINT16): return ((const uint16_t *)t->data)[i];
    case DT(INT32): return ((const int32_t *)t->data)[i];
    case DT(UINT32): return ((const uint32_t *)t->data)[i];
    case DT(INT64): return (double)((const int64_t *)t->data)[i];
    case DT(UINT64): return (double)((const uint64_t *)t->data)[i];
    default: return 0;
    }
}

static void shape_text(const gn_tensor *t, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int32_t i = 0; i < t->rank && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

gn_status gn_tensor_compare(const gn_tensor *a, const gn_tensor *ref, double tol, gn_compare_result *out)
{
    if (!out) return GN_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (!a || !ref) return GN_ERR_ARG;
    out->tol = tol > 0 ? tol : gn_compare_default_tol(ref->dtype);
    if (a->dtype != ref->dtype) {
        snprintf(out->why, sizeof out->why, "dtype %s vs %s", gn_dtype_numpy_name(a->dtype),
                 gn_dtype_numpy_name(ref->dtype));
        return GN_OK;
    }
    bool same = a->rank == ref->rank;
    for (int32_t i = 0; same && i < a->rank; i++) same = a->dims[i] == ref->dims[i];
    if (!same) {
        char x[120], y[120];
        shape_text(a, x, sizeof x);
        shape_text(ref, y, sizeof y);
        snprintf(out->why, sizeof out->why, "shape %.110s vs %.110s", x, y);
        return GN_OK;
    }
    int64_t n = gn_tensor_numel(ref);
    if (gn__dtype_is_float(ref->dtype)) {
        double d2 = 0, r2 = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = get_f(a, i), y = get_f(ref, i);
            bool xn = isnan(x), yn = isnan(y);
            if (xn || yn) {
                if (xn != yn) {
                    out->n_nan_mismatch++;
                    out->n_diff++;
                }
                continue;
            }
            double d = x == y ? 0 : fabs(x - y);   /* equal infinities: no error */
            if (d != 0) out->n_diff++;
            if (d > mx || isnan(d)) mx = d;
            d2 += d * d;
            if (isfinite(y)) r2 += y * y;
        }
        out->max_abs_err = mx;
        double dl = sqrt(d2);
        out->rel_l2_err = r2 > 0 ? dl / sqrt(r2) : dl;
        if (out->n_nan_mismatch) {
            snprintf(out->why, sizeof out->why, "NaN in different places (%lld elements)",
                     (long long)out->n_nan_mismatch);
        } else if (!(out->rel_l2_err <= out->tol)) {
            snprintf(out->why, sizeof out->why, "relative L2 error %.3g is over the tolerance %.3g%s",
                     out->rel_l2_err, out->tol, r2 > 0 ? "" : " (absolute: the reference is all zeros)");
        } else {
            out->match = 1;
        }
        return GN_OK;
    }
    if (ref->dtype == DT(STRING)) {
        const gn_string *x = a->data, *y = ref->data;
        for (int64_t i = 0; i < n; i++)
            if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].data, y[i].data, x[i].len) != 0)) out->n_diff++;
    } else {
        size_t esz = gn__dtype_size(ref->dtype);
        if (!esz) {
            snprintf(out->why, sizeof out->why, "dtype %s cannot be compared", gn_dtype_numpy_name(ref->dtype));
            return GN_OK;
        }
        const uint8_t *x = a->data, *y = ref->data;
        double mx = 0, d2 = 0, r2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double p = get_num(a, i), q = get_num(ref, i);
            r2 += q * q;
            if (memcmp(x + (size_t)i * esz, y + (size_t)i * esz, esz) == 0) continue;
            out->n_diff++;
            double d = fabs(p - q);
            if (d > mx) mx = d;
            d2 += d * d;
        }
        out->max_abs_err = mx;
        out->rel_l2_err = r2 > 0 ? sqrt(d2) / sqrt(r2) : sqrt(d2);
    }
    if (out->n_diff)
        snprintf(out->why, sizeof out->why, "%lld of %lld elements differ (%s must match exactly)",
                 (long long)out->n_diff, (long long)n, gn_dtype_numpy_name(ref->dtype));
    else out->match = 1;
    return GN_OK;
}
