/* CPU kernels: complex numbers, FFT, and the TF1 audio front end
 * (DecodeWav -> AudioSpectrogram -> Mfcc). After
 * tensorflow/core/kernels/{cwise_op_complex, cwise_op_real, cwise_op_imag,
 * cwise_op_abs, cwise_op_arg, cwise_op_conj}.cc, fft_ops.cc,
 * decode_wav_op.cc with lib/wav/wav_io.cc, spectrogram{,_op}.cc and
 * mfcc{,_op,_mel_filterbank,_dct}.cc.
 *
 * FFT: every transform runs on complex doubles (double accumulation, also for
 * complex64) and is rounded once at the end: an iterative radix-2 transform
 * when the length is a power of two, a plain DFT for short other lengths and
 * Bluestein's chirp-z algorithm (over a power-of-two transform) for long
 * ones. The R2C / C2R ops take fft_length as TensorFlow does: each transformed
 * input dimension is cropped to fft_length (fft_length / 2 + 1 for the inner
 * dimension of the inverse real ops); a shorter one is zero-padded, as
 * TensorFlow's Eigen-based kernels did and its Python wrappers do (its DUCC
 * kernel asks the caller to pad). IRFFT ignores the imaginary part of the DC
 * and Nyquist bins. All of it is deterministic: fixed operation order, no
 * threads, no BLAS. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/op_fns.h"
#include "ops/kernels/math_internal.h"
#include "opdef/registry.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_C64 TENSORFLOW__DATA_TYPE__DT_COMPLEX64
#define DT_C128 TENSORFLOW__DATA_TYPE__DT_COMPLEX128

static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

/* The real dtype of a complex one's parts and back. */
static int32_t part_dtype(int32_t cdt)
{
    return cdt == DT_C64 ? DT_FLOAT : DT_DOUBLE;
}

static int32_t complex_of(int32_t rdt)
{
    return rdt == DT_FLOAT ? DT_C64 : DT_C128;
}

/* When the node carries attr `key` (a type), it must be `want`. */
static gn_status check_type_attr(gn__kctx *c, const char *key, int32_t want)
{
    int t = 0;
    if (gn__attr_get_type(c->g, c->node, key, &t) && t != want)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr '%s' is %s but the input needs %s", key, gn__dtype_name(t),
                             gn__dtype_name(want));
    return GN_OK;
}

/* ===================================================================================== */
/* Complex numbers                                                                        */
/* ===================================================================================== */

/* ---- Complex(real, imag) with numpy broadcasting ------------------------------------- */
gn_status gn__signal_k_complex(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    const gn__tensor *re = &c->in[0], *im = &c->in[1];
    if (re->dtype != DT_FLOAT && re->dtype != DT_DOUBLE)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "real must be float or double, got %s", gn__dtype_name(re->dtype));
    if (im->dtype != re->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "real is %s but imag is %s", gn__dtype_name(re->dtype),
                             gn__dtype_name(im->dtype));
    int32_t odt = complex_of(re->dtype);
    GN_TRY(check_type_attr(c, "Tout", odt));
    const gn__tensor *ops[2] = {re, im};
    gn__km_bcast b;
    GN_TRY(gn__km_broadcast(c, 2, ops, &b, true));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, b.out_rank, b.out_dims, &o));
    if (b.numel == 0) return GN_OK;
    /* walk the collapsed iteration space with an odometer */
    int64_t idx[GN__MAX_DIMS] = {0};
    int64_t oa = 0, ob = 0;
    bool dbl = re->dtype == DT_DOUBLE;
    for (int64_t i = 0; i < b.numel; i++) {
        if (dbl) {
            ((double *)o->data)[2 * i] = ((const double *)re->data)[oa];
            ((double *)o->data)[2 * i + 1] = ((const double *)im->data)[ob];
        } else {
            ((float *)o->data)[2 * i] = ((const float *)re->data)[oa];
            ((float *)o->data)[2 * i + 1] = ((const float *)im->data)[ob];
        }
        for (int32_t d = b.rank - 1; d >= 0; d--) {
            oa += b.stride[0][d];
            ob += b.stride[1][d];
            if (++idx[d] < b.dims[d]) break;
            oa -= b.stride[0][d] * b.dims[d];
            ob -= b.stride[1][d] * b.dims[d];
            idx[d] = 0;
        }
    }
    return GN_OK;
}

/* ---- Real, Imag, ComplexAbs, Angle: complex -> its part dtype ------------------------ */
enum { PART_REAL, PART_IMAG, PART_ABS, PART_ANGLE };

static gn_status complex_part(gn__kctx *c, int which)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    if (!gn__dtype_is_complex(x->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be complex64 or complex128, got %s",
                             gn__dtype_name(x->dtype));
    int32_t odt = part_dtype(x->dtype);
    GN_TRY(check_type_attr(c, "Tout", odt));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    if (x->dtype == DT_C64) {
        const float *v = x->data;
        float *y = o->data;
        for (int64_t i = 0; i < n; i++) {
            float a = v[2 * i], b = v[2 * i + 1];
            y[i] = which == PART_REAL ? a : which == PART_IMAG ? b : which == PART_ABS ? hypotf(a, b) : atan2f(b, a);
        }
    } else {
        const double *v = x->data;
        double *y = o->data;
        for (int64_t i = 0; i < n; i++) {
            double a = v[2 * i], b = v[2 * i + 1];
            y[i] = which == PART_REAL ? a : which == PART_IMAG ? b : which == PART_ABS ? hypot(a, b) : atan2(b, a);
        }
    }
    return GN_OK;
}

gn_status gn__signal_k_real(gn__kctx *c) { return complex_part(c, PART_REAL); }
gn_status gn__signal_k_imag(gn__kctx *c) { return complex_part(c, PART_IMAG); }
gn_status gn__signal_k_complex_abs(gn__kctx *c) { return complex_part(c, PART_ABS); }
gn_status gn__signal_k_angle(gn__kctx *c) { return complex_part(c, PART_ANGLE); }

/* ---- Conj ------------------------------------------------------------------------------ */
gn_status gn__signal_k_conj(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    if (!gn__dtype_is_complex(x->dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be complex64 or complex128, got %s",
                             gn__dtype_name(x->dtype));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, x->dims, &o));
    int64_t n = gn__tensor_numel(x);
    if (x->dtype == DT_C64) {
        const float *v = x->data;
        float *y = o->data;
        for (int64_t i = 0; i < n; i++) {
            y[2 * i] = v[2 * i];
            y[2 * i + 1] = -v[2 * i + 1];
        }
    } else {
        const double *v = x->data;
        double *y = o->data;
        for (int64_t i = 0; i < n; i++) {
            y[2 * i] = v[2 * i];
            y[2 * i + 1] = -v[2 * i + 1];
        }
    }
    return GN_OK;
}

/* ===================================================================================== */
/* FFT engine: complex double, interleaved (re, im)                                       */
/* ===================================================================================== */

#define DFT_MAX 64   /* other lengths up to this use the plain DFT, longer ones Bluestein */

typedef struct pow2_plan {
    int64_t n;
    double *tw;        /* n/2 twiddles e^{-2 pi i k / n} */
} pow2_plan;

typedef struct fft_plan {
    int64_t n;
    int kind;          /* 0 radix-2, 1 plain DFT, 2 Bluestein */
    pow2_plan p2;      /* radix-2 of length n (kind 0) or m (kind 2) */
    double *tw;        /* DFT: n roots e^{-2 pi i t / n} */
    double *chirp;     /* Bluestein: n values e^{-i pi k^2 / n} */
    double *bhat;      /* Bluestein: FFT_m of the conjugate chirp, pre-divided by m */
    double *work;      /* n (DFT) or m (Bluestein) complex scratch */
} fft_plan;

static bool is_pow2(int64_t n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static bool pow2_init(pow2_plan *p, int64_t n)
{
    p->n = n;
    p->tw = malloc((size_t)(n / 2 > 0 ? n / 2 : 1) * 2 * sizeof(double));
    if (!p->tw) return false;
    const double pi = atan(1.0) * 4;
    for (int64_t k = 0; k < n / 2; k++) {
        double a = -2.0 * pi * (double)k / (double)n;
        p->tw[2 * k] = cos(a);
        p->tw[2 * k + 1] = sin(a);
    }
    return true;
}

/* In-place forward radix-2 transform (decimation in time, bit-reversed input order). */
static void pow2_run(const pow2_plan *p, double *x)
{
    int64_t n = p->n;
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double tr = x[2 * i], ti = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = tr;
            x[2 * j + 1] = ti;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, step = n / len;
        for (int64_t s = 0; s < n; s += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = p->tw[2 * k * step], wi = p->tw[2 * k * step + 1];
                double *a = x + 2 * (s + k), *b = x + 2 * (s + k + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
        }
    }
}

static void plan_free(fft_plan *p)
{
    free(p->p2.tw);
    free(p->tw);
    free(p->chirp);
    free(p->bhat);
    free(p->work);
    memset(p, 0, sizeof *p);
}

static bool plan_init(fft_plan *p, int64_t n)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    const double pi = atan(1.0) * 4;
    if (is_pow2(n)) {
        p->kind = 0;
        return pow2_init(&p->p2, n);
    }
    if (n <= DFT_MAX) {
        p->kind = 1;
        p->tw = malloc((size_t)n * 2 * sizeof(double));
        p->work = malloc((size_t)n * 2 * sizeof(double));
        if (!p->tw || !p->work) return false;
        for (int64_t t = 0; t < n; t++) {
            double a = -2.0 * pi * (double)t / (double)n;
            p->tw[2 * t] = cos(a);
            p->tw[2 * t + 1] = sin(a);
        }
        return true;
    }
    p->kind = 2;
    if (n > INT32_MAX) return false;
    int64_t m = 1;
    while (m < 2 * n - 1) {
        if (m > INT64_MAX / 4 / (int64_t)sizeof(double)) return false;
        m <<= 1;
    }
    if ((uint64_t)m > SIZE_MAX / 2 / sizeof(double)) return false;
    p->chirp = malloc((size_t)n * 2 * sizeof(double));
    p->bhat = calloc((size_t)m * 2, sizeof(double));
    p->work = malloc((size_t)m * 2 * sizeof(double));
    if (!p->chirp || !p->bhat || !p->work || !pow2_init(&p->p2, m)) return false;
    uint64_t two_n = 2 * (uint64_t)n;
    for (int64_t k = 0; k < n; k++) {
        /* k^2 mod 2n keeps the angle small (and exact) for long transforms */
        uint64_t q = ((uint64_t)k * (uint64_t)k) % two_n;   /* k < 2^31: no overflow */
        double a = -pi * (double)q / (double)n;
        p->chirp[2 * k] = cos(a);
        p->chirp[2 * k + 1] = sin(a);
    }
    /* b[k] = conj(chirp[k]) at k and m - k */
    double inv_m = 1.0 / (double)m;
    for (int64_t k = 0; k < n; k++) {
        p->bhat[2 * k] = p->chirp[2 * k];
        p->bhat[2 * k + 1] = -p->chirp[2 * k + 1];
        if (k) {
            p->bhat[2 * (m - k)] = p->chirp[2 * k];
            p->bhat[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
        }
    }
    pow2_run(&p->p2, p->bhat);
    for (int64_t i = 0; i < 2 * m; i++) p->bhat[i] *= inv_m;
    return true;
}

/* In-place transform of n complex values: forward e^{-2 pi i jk/n}, or the
 * unscaled inverse (conjugate in, forward, conjugate out). */
static void plan_run(fft_plan *p, double *x, bool inverse)
{
    int64_t n = p->n;
    if (inverse)
        for (int64_t i = 0; i < n; i++) x[2 * i + 1] = -x[2 * i + 1];
    if (p->kind == 0) {
        pow2_run(&p->p2, x);
    } else if (p->kind == 1) {
        for (int64_t k = 0; k < n; k++) {
            double sr = 0, si = 0;
            int64_t t = 0;
            for (int64_t j = 0; j < n; j++) {
                double wr = p->tw[2 * t], wi = p->tw[2 * t + 1];
                sr += x[2 * j] * wr - x[2 * j + 1] * wi;
                si += x[2 * j] * wi + x[2 * j + 1] * wr;
                t += k;
                if (t >= n) t -= n;
            }
            p->work[2 * k] = sr;
            p->work[2 * k + 1] = si;
        }
        memcpy(x, p->work, (size_t)n * 2 * sizeof(double));
    } else {
        int64_t m = p->p2.n;
        double *a = p->work;
        for (int64_t k = 0; k < n; k++) {
            double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
            a[2 * k] = x[2 * k] * cr - x[2 * k + 1] * ci;
            a[2 * k + 1] = x[2 * k] * ci + x[2 * k + 1] * cr;
        }
        memset(a + 2 * n, 0, (size_t)(m - n) * 2 * sizeof(double));
        pow2_run(&p->p2, a);
        /* multiply by bhat, then an inverse transform as conj(FFT(conj(.))) */
        for (int64_t k = 0; k < m; k++) {
            double ar = a[2 * k], ai = a[2 * k + 1], br = p->bhat[2 * k], bi = p->bhat[2 * k + 1];
            a[2 * k] = ar * br - ai * bi;
            a[2 * k + 1] = -(ar * bi + ai * br);
        }
        pow2_run(&p->p2, a);
        for (int64_t k = 0; k < n; k++) {
            double ar = a[2 * k], ai = -a[2 * k + 1], cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
            x[2 * k] = ar * cr - ai * ci;
            x[2 * k + 1] = ar * ci + ai * cr;
        }
    }
    if (inverse)
        for (int64_t i = 0; i < n; i++) x[2 * i + 1] = -x[2 * i + 1];
}

/* Transforms buf (complex, row-major dims[0..rank)) along axis ax, in place. */
static bool fft_axis(double *buf, int32_t rank, const int64_t *dims, int32_t ax, bool inverse)
{
    int64_t n = dims[ax], outer = 1, inner = 1;
    for (int32_t d = 0; d < ax; d++) outer *= dims[d];
    for (int32_t d = ax + 1; d < rank; d++) inner *= dims[d];
    if (n <= 1 || outer == 0 || inner == 0) return true;
    fft_plan p;
    if (!plan_init(&p, n)) {
        plan_free(&p);
        return false;
    }
    double *line = inner > 1 ? malloc((size_t)n * 2 * sizeof(double)) : NULL;
    if (inner > 1 && !line) {
        plan_free(&p);
        return false;
    }
    for (int64_t o = 0; o < outer; o++) {
        double *base = buf + 2 * o * n * inner;
        if (inner == 1) {
            plan_run(&p, base, inverse);
            continue;
        }
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t k = 0; k < n; k++) {
                line[2 * k] = base[2 * (k * inner + i)];
                line[2 * k + 1] = base[2 * (k * inner + i) + 1];
            }
            plan_run(&p, line, inverse);
            for (int64_t k = 0; k < n; k++) {
                base[2 * (k * inner + i)] = line[2 * k];
                base[2 * (k * inner + i) + 1] = line[2 * k + 1];
            }
        }
    }
    free(line);
    plan_free(&p);
    return true;
}

/* Copies src (dims sd, dtype sdt: float/double real or complex) into the
 * complex double buffer dst (dims dd, same rank), cropping or zero-padding
 * each dim. */
static void load_complex(double *dst, const int64_t *dd, const void *src, const int64_t *sd, int32_t sdt, int32_t rank)
{
    int64_t total = 1, cnt[GN__MAX_DIMS], sstr[GN__MAX_DIMS], dstr[GN__MAX_DIMS];
    for (int32_t d = 0; d < rank; d++) total *= dd[d];
    memset(dst, 0, (size_t)total * 2 * sizeof(double));
    int64_t ncopy = 1;
    for (int32_t d = rank - 1, ss = 1, ds = 1; d >= 0; d--) {
        cnt[d] = sd[d] < dd[d] ? sd[d] : dd[d];
        sstr[d] = ss;
        dstr[d] = ds;
        ss *= sd[d];
        ds *= dd[d];
        ncopy *= cnt[d];
    }
    if (ncopy == 0) return;
    int64_t idx[GN__MAX_DIMS] = {0}, so = 0, doff = 0;
    for (int64_t i = 0; i < ncopy; i++) {
        double re, im = 0;
        switch (sdt) {
        case DT_FLOAT: re = ((const float *)src)[so]; break;
        case DT_DOUBLE: re = ((const double *)src)[so]; break;
        case DT_C64:
            re = ((const float *)src)[2 * so];
            im = ((const float *)src)[2 * so + 1];
            break;
        default:
            re = ((const double *)src)[2 * so];
            im = ((const double *)src)[2 * so + 1];
            break;
        }
        dst[2 * doff] = re;
        dst[2 * doff + 1] = im;
        for (int32_t d = rank - 1; d >= 0; d--) {
            so += sstr[d];
            doff += dstr[d];
            if (++idx[d] < cnt[d]) break;
            so -= sstr[d] * cnt[d];
            doff -= dstr[d] * cnt[d];
            idx[d] = 0;
        }
    }
}

/* Product of dims with overflow and size checks: false when too large. */
static bool dims_numel(const int64_t *dims, int32_t rank, int64_t *out)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) return false;
        if (dims[d] && n > INT64_MAX / dims[d]) return false;
        n *= dims[d];
    }
    *out = n;
    return true;
}

/* FFT, IFFT, RFFT, IRFFT and their 2-D / 3-D forms. */
static gn_status fft_common(gn__kctx *c, int32_t r, bool forward, bool real)
{
    GN_TRY(need(c, real ? 2 : 1));
    const gn__tensor *x = &c->in[0];
    if (x->rank < r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must have rank of at least %d but got rank %d", r, x->rank);
    int32_t idt, odt;
    if (real && forward) {
        if (x->dtype != DT_FLOAT && x->dtype != DT_DOUBLE)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be float or double, got %s", gn__dtype_name(x->dtype));
        idt = x->dtype;
        odt = complex_of(idt);
        GN_TRY(check_type_attr(c, "Tcomplex", odt));
    } else {
        if (!gn__dtype_is_complex(x->dtype))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be complex64 or complex128, got %s",
                                 gn__dtype_name(x->dtype));
        idt = x->dtype;
        odt = real ? part_dtype(idt) : idt;
        GN_TRY(check_type_attr(c, real ? "Treal" : "Tcomplex", real ? odt : idt));
    }
    int32_t rank = x->rank, b = rank - r;
    int64_t len[3];   /* the transform lengths */
    if (real) {
        const gn__tensor *fl = &c->in[1];
        if (fl->rank != 1 || fl->dims[0] != r)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "fft_length must have shape [%d]", r);
        if (fl->dtype != DT_INT32 && fl->dtype != DT_INT64)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "fft_length must be int32, got %s", gn__dtype_name(fl->dtype));
        for (int32_t i = 0; i < r; i++) {
            len[i] = fl->dtype == DT_INT32 ? ((const int32_t *)fl->data)[i] : ((const int64_t *)fl->data)[i];
            if (len[i] < 0)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "fft_length[%d] must >= 0, but got: %lld", i, (long long)len[i]);
            if (len[i] > INT32_MAX)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "fft_length[%d] = %lld is too large", i, (long long)len[i]);
        }
    } else {
        for (int32_t i = 0; i < r; i++) len[i] = x->dims[b + i];
    }
    /* work buffer dims: batch + full transform lengths; input view cropped to them */
    int64_t wd[GN__MAX_DIMS], cd[GN__MAX_DIMS], od[GN__MAX_DIMS];
    for (int32_t d = 0; d < rank; d++) wd[d] = cd[d] = od[d] = x->dims[d];
    for (int32_t i = 0; i < r; i++) {
        wd[b + i] = len[i];
        od[b + i] = len[i];
        cd[b + i] = len[i];
    }
    if (real && forward) od[rank - 1] = len[r - 1] ? len[r - 1] / 2 + 1 : 0;
    if (real && !forward) cd[rank - 1] = len[r - 1] / 2 + 1;   /* bins read from the input */
    int64_t onumel, wnumel, cnumel;
    if (!dims_numel(od, rank, &onumel) || !dims_numel(wd, rank, &wnumel) || !dims_numel(cd, rank, &cnumel) ||
        (uint64_t)wnumel > SIZE_MAX / 2 / sizeof(double) || (uint64_t)cnumel > SIZE_MAX / 2 / sizeof(double))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "transform of this shape is too large");
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, odt, rank, od, &o));
    if (onumel == 0) return GN_OK;
    bool ok = true;
    double *w = NULL;
    if (real && !forward) {
        /* inverse complex transforms over the outer axes on the cropped half spectrum,
         * then C2R along the inner one */
        double *h = malloc((size_t)(cnumel ? cnumel : 1) * 2 * sizeof(double));
        w = malloc((size_t)(wnumel ? wnumel : 1) * 2 * sizeof(double));
        if (!h || !w) ok = false;
        if (ok) {
            load_complex(h, cd, x->data, x->dims, idt, rank);
            for (int32_t i = 0; i < r - 1 && ok; i++) ok = fft_axis(h, rank, cd, b + i, true);
        }
        if (ok) {
            int64_t n = len[r - 1], nb = cd[rank - 1], rows = n ? wnumel / n : 0;
            for (int64_t row = 0; row < rows; row++) {
                const double *src = h + 2 * row * nb;
                double *dst = w + 2 * row * n;
                for (int64_t k = 0; k < n; k++) {
                    if (k < nb) {
                        dst[2 * k] = src[2 * k];
                        dst[2 * k + 1] = (k == 0 || 2 * k == n) ? 0.0 : src[2 * k + 1];
                    } else {
                        int64_t mk = n - k;   /* mirror: conj(X[n - k]) */
                        dst[2 * k] = src[2 * mk];
                        dst[2 * k + 1] = -src[2 * mk + 1];
                    }
                }
            }
            ok = fft_axis(w, rank, wd, rank - 1, true);
        }
        free(h);
    } else {
        w = malloc((size_t)(wnumel ? wnumel : 1) * 2 * sizeof(double));
        if (!w) ok = false;
        if (ok) {
            load_complex(w, wd, x->data, x->dims, idt, rank);
            for (int32_t i = 0; i < r && ok; i++) ok = fft_axis(w, rank, wd, b + i, !forward);
        }
    }
    if (!ok) {
        free(w);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory for a transform of this size");
    }
    double scale = 1.0;
    if (!forward) {
        double prod = 1.0;
        for (int32_t i = 0; i < r; i++) prod *= (double)len[i];
        scale = 1.0 / prod;
    }
    if (real && !forward) {
        for (int64_t i = 0; i < onumel; i++) {
            double v = w[2 * i] * scale;
            if (odt == DT_FLOAT) ((float *)o->data)[i] = (float)v;
            else ((double *)o->data)[i] = v;
        }
    } else {
        /* output rows may be shorter than the work rows (RFFT keeps n/2 + 1 bins) */
        int64_t wn = wd[rank - 1], on = od[rank - 1], rows = on ? onumel / on : 0;
        for (int64_t row = 0; row < rows; row++)
            for (int64_t k = 0; k < on; k++) {
                double re = w[2 * (row * wn + k)] * scale, im = w[2 * (row * wn + k) + 1] * scale;
                int64_t j = row * on + k;
                if (odt == DT_C64) {
                    ((float *)o->data)[2 * j] = (float)re;
                    ((float *)o->data)[2 * j + 1] = (float)im;
                } else {
                    ((double *)o->data)[2 * j] = re;
                    ((double *)o->data)[2 * j + 1] = im;
                }
            }
    }
    free(w);
    return GN_OK;
}

gn_status gn__signal_k_fft(gn__kctx *c) { return fft_common(c, 1, true, false); }
gn_status gn__signal_k_ifft(gn__kctx *c) { return fft_common(c, 1, false, false); }
gn_status gn__signal_k_fft2d(gn__kctx *c) { return fft_common(c, 2, true, false); }
gn_status gn__signal_k_ifft2d(gn__kctx *c) { return fft_common(c, 2, false, false); }
gn_status gn__signal_k_fft3d(gn__kctx *c) { return fft_common(c, 3, true, false); }
gn_status gn__signal_k_ifft3d(gn__kctx *c) { return fft_common(c, 3, false, false); }
gn_status gn__signal_k_rfft(gn__kctx *c) { return fft_common(c, 1, true, true); }
gn_status gn__signal_k_irfft(gn__kctx *c) { return fft_common(c, 1, false, true); }
gn_status gn__signal_k_rfft2d(gn__kctx *c) { return fft_common(c, 2, true, true); }
gn_status gn__signal_k_irfft2d(gn__kctx *c) { return fft_common(c, 2, false, true); }
gn_status gn__signal_k_rfft3d(gn__kctx *c) { return fft_common(c, 3, true, true); }
gn_status gn__signal_k_irfft3d(gn__kctx *c) { return fft_common(c, 3, false, true); }

/* ===================================================================================== */
/* DecodeWav                                                                              */
/* ===================================================================================== */

/* A RIFF reader over the contents; every error names the byte offset. */
typedef struct wav_rd {
    gn__kctx *c;
    const uint8_t *p;
    int64_t size, off;
} wav_rd;

static gn_status wav_fail_at(wav_rd *r, int64_t at, const char *what, const char *detail)
{
    return gn__kctx_fail(r->c, GN_ERR_GRAPH, "WAV contents byte %lld: %s%s", (long long)at, what, detail);
}

/* n bytes available at the current offset? */
static gn_status wav_need(wav_rd *r, int64_t n, const char *what)
{
    if (r->off > r->size || n > r->size - r->off) {
        char d[96];
        snprintf(d, sizeof d, ": data too short (need %lld bytes, %lld left)", (long long)n,
                 (long long)(r->off > r->size ? 0 : r->size - r->off));
        return wav_fail_at(r, r->off, what, d);
    }
    return GN_OK;
}

static void fourcc_text(const uint8_t *s, char *out)
{
    size_t o = 0;
    for (int i = 0; i < 4; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'' && s[i] != '\\') out[o++] = (char)s[i];
        else o += (size_t)snprintf(out + o, 5, "\\x%02x", s[i]);
    }
    out[o] = 0;
}

static gn_status wav_id(wav_rd *r, const char *what, uint8_t id[4])
{
    GN_TRY(wav_need(r, 4, what));
    memcpy(id, r->p + r->off, 4);
    r->off += 4;
    return GN_OK;
}

static gn_status wav_expect(wav_rd *r, const char *want, const char *what)
{
    int64_t at = r->off;
    uint8_t id[4];
    GN_TRY(wav_id(r, what, id));
    if (memcmp(id, want, 4)) {
        char t[20], d[64];
        fourcc_text(id, t);
        snprintf(d, sizeof d, ": expected '%s' but found '%s'", want, t);
        return wav_fail_at(r, at, what, d);
    }
    return GN_OK;
}

static gn_status wav_u32(wav_rd *r, const char *what, uint32_t *v)
{
    GN_TRY(wav_need(r, 4, what));
    const uint8_t *s = r->p + r->off;
    *v = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
    r->off += 4;
    return GN_OK;
}

static gn_status wav_u16(wav_rd *r, const char *what, uint16_t *v)
{
    GN_TRY(wav_need(r, 2, what));
    const uint8_t *s = r->p + r->off;
    *v = (uint16_t)(s[0] | s[1] << 8);
    r->off += 2;
    return GN_OK;
}

gn_status gn__signal_k_decode_wav(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_STRING) return gn__kctx_fail(c, GN_ERR_GRAPH, "contents must be a string, got %s",
                                                    gn__dtype_name(x->dtype));
    if (x->rank != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "contents must be scalar, got rank %d", x->rank);
    int64_t desired_channels = -1, desired_samples = -1;
    (void)gn__attr_get_int(c->g, c->node, "desired_channels", &desired_channels);
    (void)gn__attr_get_int(c->g, c->node, "desired_samples", &desired_samples);
    if (desired_channels < -1 || desired_channels > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "desired_channels must be >= -1, got %lld", (long long)desired_channels);
    if (desired_samples < -1 || desired_samples > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "desired_samples must be >= -1, got %lld", (long long)desired_samples);
    const gn__tstring *s = x->data;
    if (s->len > (size_t)INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "WAV contents are too large for int: %zu bytes", s->len);
    wav_rd r = {c, (const uint8_t *)s->ptr, (int64_t)s->len, 0};
    uint32_t u32 = 0;
    GN_TRY(wav_expect(&r, "RIFF", "RIFF header"));
    GN_TRY(wav_u32(&r, "RIFF size", &u32));
    GN_TRY(wav_expect(&r, "WAVE", "RIFF type"));
    /* padding chunks may come before "fmt " */
    uint8_t id[4];
    int64_t at = r.off;
    GN_TRY(wav_id(&r, "chunk id", id));
    static const char *const skippable[] = {"JUNK", "bext", "iXML", "qlty", "mext", "levl", "link", "axml"};
    while (memcmp(id, "fmt ", 4)) {
        bool skip = false;
        for (size_t i = 0; i < GN__ARRAY_LEN(skippable); i++) skip = skip || !memcmp(id, skippable[i], 4);
        if (!skip) {
            char t[20], d[80];
            fourcc_text(id, t);
            snprintf(d, sizeof d, ": unexpected chunk '%s' before the 'fmt ' chunk", t);
            return wav_fail_at(&r, at, "chunk id", d);
        }
        GN_TRY(wav_u32(&r, "chunk size", &u32));
        GN_TRY(wav_need(&r, (int64_t)u32, "chunk body"));
        r.off += u32;
        at = r.off;
        GN_TRY(wav_id(&r, "chunk id", id));
    }
    uint32_t fmt_size, sample_rate, bytes_per_second;
    uint16_t audio_format, channels, block_align, bits;
    char d[160];
    at = r.off;
    GN_TRY(wav_u32(&r, "format chunk size", &fmt_size));
    if (fmt_size != 16 && fmt_size != 18) {
        snprintf(d, sizeof d, ": bad format chunk size: expected 16 or 18, but got %u", fmt_size);
        return wav_fail_at(&r, at, "format chunk", d);
    }
    at = r.off;
    GN_TRY(wav_u16(&r, "audio format", &audio_format));
    if (audio_format != 1) {
        snprintf(d, sizeof d, ": expected 1 (PCM), but got %u", audio_format);
        return wav_fail_at(&r, at, "audio format", d);
    }
    at = r.off;
    GN_TRY(wav_u16(&r, "channel count", &channels));
    if (channels < 1) return wav_fail_at(&r, at, "channel count", ": expected at least 1, but got 0");
    GN_TRY(wav_u32(&r, "sample rate", &sample_rate));
    int64_t bps_at = r.off;
    GN_TRY(wav_u32(&r, "bytes per second", &bytes_per_second));
    int64_t ba_at = r.off;
    GN_TRY(wav_u16(&r, "bytes per sample", &block_align));
    at = r.off;
    GN_TRY(wav_u16(&r, "bits per sample", &bits));
    if (bits != 16) {
        snprintf(d, sizeof d, ": can only read 16-bit WAV files, but got %u", bits);
        return wav_fail_at(&r, at, "bits per sample", d);
    }
    uint32_t want_align = ((uint32_t)bits * channels + 7) / 8;
    if (block_align != want_align) {
        snprintf(d, sizeof d, ": expected %u but got %u", want_align, block_align);
        return wav_fail_at(&r, ba_at, "bytes per sample", d);
    }
    uint32_t want_bps = (uint32_t)block_align * sample_rate;   /* uint32 arithmetic, as TensorFlow */
    if (bytes_per_second != want_bps) {
        snprintf(d, sizeof d, ": expected %u but got %u (sample_rate=%u, bytes_per_sample=%u)", want_bps,
                 bytes_per_second, sample_rate, block_align);
        return wav_fail_at(&r, bps_at, "bytes per second", d);
    }
    if (fmt_size == 18) r.off += 2;
    bool found = false;
    int64_t data_off = 0;
    uint32_t sample_count = 0;
    while (r.off < r.size) {
        at = r.off;
        GN_TRY(wav_id(&r, "chunk id", id));
        uint32_t csize;
        GN_TRY(wav_u32(&r, "chunk size", &csize));
        if (csize > (uint32_t)INT32_MAX) {
            char t[20];
            fourcc_text(id, t);
            snprintf(d, sizeof d, ": chunk '%s' is too large: %u bytes, but the limit is %d", t, csize, INT32_MAX);
            return wav_fail_at(&r, at, "chunk size", d);
        }
        if (!memcmp(id, "data", 4)) {
            if (found) return wav_fail_at(&r, at, "data chunk", ": more than one data chunk");
            found = true;
            sample_count = csize / block_align;
            int64_t bytes = 2 * (int64_t)sample_count * channels;
            GN_TRY(wav_need(&r, bytes, "sample data"));
            data_off = r.off;
            r.off += bytes;
        } else {
            r.off += csize;
        }
    }
    if (!found) return wav_fail_at(&r, r.size, "data chunk", ": no data chunk found");
    int64_t out_samples = desired_samples == -1 ? (int64_t)sample_count : desired_samples;
    int64_t out_ch = desired_channels == -1 ? (int64_t)channels : desired_channels;
    int64_t od[2] = {out_samples, out_ch};
    gn__tensor *o, *sr;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, 2, od, &o));
    float *y = o->data;
    const uint8_t *pcm = r.p + data_off;
    for (int64_t i = 0; i < out_samples; i++)
        for (int64_t ch = 0; ch < out_ch; ch++) {
            float v = 0.0f;
            if (i < (int64_t)sample_count) {
                int64_t src = i * channels + (ch < channels ? ch : channels - 1);
                int16_t q = (int16_t)(uint16_t)(pcm[2 * src] | pcm[2 * src + 1] << 8);
                v = (float)q * (1.0f / 32768.0f);
            }
            y[i * out_ch + ch] = v;
        }
    GN_TRY(gn__kctx_output(c, 1, DT_INT32, 0, NULL, &sr));
    *(int32_t *)sr->data = (int32_t)sample_rate;
    return GN_OK;
}

/* ===================================================================================== */
/* AudioSpectrogram                                                                       */
/* ===================================================================================== */

gn_status gn__signal_k_audio_spectrogram(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    int64_t window = 0, stride = 0;
    bool squared = false;
    if (!gn__attr_get_int(c->g, c->node, "window_size", &window))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "missing attr 'window_size'");
    if (!gn__attr_get_int(c->g, c->node, "stride", &stride))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "missing attr 'stride'");
    (void)gn__attr_get_bool(c->g, c->node, "magnitude_squared", &squared);
    if (window <= 1 || window > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "window_size must be > 1, got %lld", (long long)window);
    if (stride <= 0 || stride > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "stride must be > 0, got %lld", (long long)stride);
    if (x->dtype != DT_FLOAT) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be float, got %s",
                                                   gn__dtype_name(x->dtype));
    if (x->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 2-dimensional, got rank %d", x->rank);
    int64_t fft_n = 1;
    while (fft_n < window) fft_n <<= 1;
    int64_t samples = x->dims[0], channels = x->dims[1], width = fft_n / 2 + 1;
    int64_t height = samples < window ? 0 : 1 + (samples - window) / stride;
    int64_t od[3] = {channels, height, width}, onumel;
    if (!dims_numel(od, 3, &onumel)) return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, 3, od, &o));
    if (onumel == 0) return GN_OK;
    double *win = malloc((size_t)window * sizeof(double));
    double *buf = malloc((size_t)fft_n * 2 * sizeof(double));
    pow2_plan p = {0, NULL};
    bool ok = win && buf && pow2_init(&p, fft_n);
    if (ok) {
        /* TensorFlow's periodic Hann window, the same expression */
        const double pi = atan(1.0) * 4;
        for (int64_t i = 0; i < window; i++) win[i] = 0.5 - 0.5 * cos((2 * pi * (double)i) / (double)window);
        const float *in = x->data;
        float *y = o->data;
        for (int64_t ch = 0; ch < channels; ch++)
            for (int64_t f = 0; f < height; f++) {
                int64_t start = f * stride;
                for (int64_t j = 0; j < fft_n; j++) {
                    buf[2 * j] = j < window ? (double)in[(start + j) * channels + ch] * win[j] : 0.0;
                    buf[2 * j + 1] = 0.0;
                }
                pow2_run(&p, buf);
                float *row = y + (ch * height + f) * width;
                for (int64_t k = 0; k < width; k++) {
                    double re = buf[2 * k], im = buf[2 * k + 1];
                    float m2 = (float)(re * re + im * im);
                    row[k] = squared ? m2 : sqrtf(m2);
                }
            }
    }
    free(win);
    free(buf);
    free(p.tw);
    if (!ok) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    return GN_OK;
}

/* ===================================================================================== */
/* Mfcc                                                                                   */
/* ===================================================================================== */

static double freq_to_mel(double f)
{
    return 1127.0 * log1p(f / 700.0);
}

gn_status gn__signal_k_mfcc(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    const gn__tensor *spec = &c->in[0], *srt = &c->in[1];
    float upper = 4000, lower = 20;
    int64_t nch = 40, ncoef = 13;
    (void)gn__attr_get_float(c->g, c->node, "upper_frequency_limit", &upper);
    (void)gn__attr_get_float(c->g, c->node, "lower_frequency_limit", &lower);
    (void)gn__attr_get_int(c->g, c->node, "filterbank_channel_count", &nch);
    (void)gn__attr_get_int(c->g, c->node, "dct_coefficient_count", &ncoef);
    if (spec->dtype != DT_FLOAT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "spectrogram must be float, got %s", gn__dtype_name(spec->dtype));
    if (spec->rank != 3)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "spectrogram must be 3-dimensional, got rank %d", spec->rank);
    if (srt->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sample_rate must be int32, got %s", gn__dtype_name(srt->dtype));
    if (srt->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Input sample_rate should be a scalar tensor, got rank %d instead",
                             srt->rank);
    int32_t sample_rate = *(const int32_t *)srt->data;
    int64_t audio_ch = spec->dims[0], frames = spec->dims[1], bins = spec->dims[2];
    const char *why = NULL;
    if (nch < 1) why = "filterbank_channel_count must be positive";
    else if (nch > INT32_MAX) why = "filterbank_channel_count is too large";
    else if (sample_rate <= 0) why = "sample rate must be positive";
    else if (bins < 2) why = "the spectrogram must have more than 1 bin";
    else if (bins > INT32_MAX) why = "the spectrogram has too many bins";
    else if (isnan(lower) || isnan(upper)) why = "frequency limits must be numbers";
    else if (lower < 0) why = "lower_frequency_limit must be nonnegative";
    else if (upper <= lower) why = "upper_frequency_limit must be greater than lower_frequency_limit";
    else if (ncoef < 1) why = "dct_coefficient_count must be positive";
    else if (ncoef > nch) why = "dct_coefficient_count must be less than or equal to filterbank_channel_count";
    if (why)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Mfcc initialization failed for channel count %lld and sample rate %d: %s",
                             (long long)bins, sample_rate, why);
    int64_t od[3] = {audio_ch, frames, ncoef}, onumel;
    if (!dims_numel(od, 3, &onumel) || (uint64_t)ncoef * (uint64_t)nch > SIZE_MAX / sizeof(double))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, 3, od, &o));
    if (onumel == 0) return GN_OK;

    /* the mel filterbank, exactly as TensorFlow builds it (double) */
    double *center = malloc((size_t)(nch + 1) * sizeof(double));
    int32_t *band = malloc((size_t)bins * sizeof(int32_t));
    double *weights = malloc((size_t)bins * sizeof(double));
    double *cosines = malloc((size_t)(ncoef * nch) * sizeof(double));
    double *work = malloc((size_t)nch * sizeof(double));
    if (!center || !band || !weights || !cosines || !work) {
        free(center);
        free(band);
        free(weights);
        free(cosines);
        free(work);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    const double mel_low = freq_to_mel((double)lower), mel_hi = freq_to_mel((double)upper);
    const double mel_spacing = (mel_hi - mel_low) / (double)(nch + 1);
    for (int64_t i = 0; i < nch + 1; i++) center[i] = mel_low + (mel_spacing * (double)(i + 1));
    const double hz_per_sbin = 0.5 * (double)sample_rate / (double)(bins - 1);
    double sdbl = 1.5 + ((double)lower / hz_per_sbin), edbl = (double)upper / hz_per_sbin;
    int64_t start = sdbl >= (double)INT32_MAX ? INT32_MAX : (int64_t)sdbl;
    int64_t end = edbl >= (double)INT32_MAX ? INT32_MAX : (int64_t)edbl;
    int64_t chan = 0;
    for (int64_t i = 0; i < bins; i++) {
        double melf = freq_to_mel((double)i * hz_per_sbin);
        if (i < start || i > end) {
            band[i] = -2;
        } else {
            while (chan < nch && center[chan] < melf) chan++;
            band[i] = (int32_t)(chan - 1);
        }
    }
    for (int64_t i = 0; i < bins; i++) {
        int32_t ch = band[i];
        if (i < start || i > end) weights[i] = 0.0;
        else if (ch >= 0)
            weights[i] = (center[ch + 1] - freq_to_mel((double)i * hz_per_sbin)) / (center[ch + 1] - center[ch]);
        else weights[i] = (center[0] - freq_to_mel((double)i * hz_per_sbin)) / (center[0] - mel_low);
    }
    /* the DCT-II table */
    const double pi = atan(1.0) * 4, fnorm = sqrt(2.0 / (double)nch), arg = pi / (double)nch;
    for (int64_t i = 0; i < ncoef; i++)
        for (int64_t j = 0; j < nch; j++) cosines[i * nch + j] = fnorm * cos((double)i * arg * ((double)j + 0.5));
    /* an upper limit beyond the spectrum makes TensorFlow's filterbank give up
     * on every frame, so its coefficients are all zero; the same here */
    bool usable = end < bins;
    const float *sp = spec->data;
    float *y = o->data;
    for (int64_t a = 0; a < audio_ch; a++)
        for (int64_t f = 0; f < frames; f++) {
            const float *in = sp + (a * frames + f) * bins;
            float *out = y + (a * frames + f) * ncoef;
            if (!usable) {
                for (int64_t i = 0; i < ncoef; i++) out[i] = 0.0f;
                continue;
            }
            for (int64_t k = 0; k < nch; k++) work[k] = 0.0;
            for (int64_t i = start; i <= end; i++) {
                double v = sqrt((double)in[i]);
                double wv = v * weights[i];
                int64_t ch = band[i];
                if (ch >= 0) work[ch] += wv;
                ch++;
                if (ch < nch) work[ch] += v - wv;
            }
            for (int64_t k = 0; k < nch; k++) work[k] = log(work[k] < 1e-12 ? 1e-12 : work[k]);
            for (int64_t i = 0; i < ncoef; i++) {
                double sum = 0.0;
                for (int64_t j = 0; j < nch; j++) sum += cosines[i * nch + j] * work[j];
                out[i] = (float)sum;
            }
        }
    free(center);
    free(band);
    free(weights);
    free(cosines);
    free(work);
    return GN_OK;
}
