/* CPU kernels of src/ops/kernels/signal.c: complex numbers, the FFT family
 * and the audio front end (DecodeWav, AudioSpectrogram, Mfcc).
 *
 * Hand-worked cases are checked exactly. The rest is compared with
 * TensorFlow's own outputs in tests/data/signal (tools/make_signal_goldens.py;
 * complex arrays are stored as float arrays with a trailing (re, im) dim).
 * Tolerances:
 *   FFT, complex64 / float32 results: max |err| <= 2e-6 * (1 + max |ref|)
 *     (TensorFlow transforms in float, the kernel in double)
 *   FFT, complex128 / float64 results: max |err| <= 1e-12 * (1 + max |ref|)
 *   FFT round trip in double: 1e-13 * (1 + max |x|)
 *   AudioSpectrogram: |err| <= 1e-6 * |ref| + 1e-7 * max |ref| per element
 *   Mfcc on TensorFlow's spectrogram: |err| <= 1e-5 * (1 + |ref|)
 *   DS-CNN keyword-spotting graph from a wav, against TensorFlow:
 *     Mfcc |err| <= 1e-4 * (1 + |ref|), softmax max |err| <= 1e-5 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/op_fns.h"
#include "testutil.h"
#include "passtest.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_STR TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_C64 TENSORFLOW__DATA_TYPE__DT_COMPLEX64
#define DT_C128 TENSORFLOW__DATA_TYPE__DT_COMPLEX128


static gn_graph *graph1(const char *op, int n_in, const char *const *dts, const char *attrs)
{
    return gn_pt_kgraph(op, n_in, dts, attrs, 1);
}


static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    return gn_pt_ktensor(dt, rank, dims, data);
}


static void run_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out)
{
    gn_pt_krun_ok(g, in, n_in, out, n_out, GN__K_REFERENCE);
}



static void expect_shape(const gn__tensor *t, int32_t dt, int rank, const int64_t *dims)
{
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* ---- golden files ------------------------------------------------------------------ */
/* A golden .npy as a kernel tensor; complex when `cplx` (the file's trailing dim of 2 is
 * dropped). The gn_tensor keeps the data: free it with gn_tensor_free. */
static gn__tensor golden(const char *name, bool cplx, gn_tensor *keep)
{
    char rel[256], path[2048], err[512];
    snprintf(rel, sizeof rel, "signal/%s.npy", name);
    gn_test_data(rel, path, sizeof path);
    if (gn_npy_read(path, keep, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = keep->dtype;
    t.rank = keep->rank;
    memcpy(t.dims, keep->dims, sizeof t.dims);
    t.data = keep->data;
    t.nbytes = keep->nbytes;
    if (cplx) {
        assert_true(keep->rank >= 1 && keep->dims[keep->rank - 1] == 2);
        t.rank--;
        t.dtype = keep->dtype == DT_F32 ? DT_C64 : DT_C128;
    }
    return t;
}

/* max |a - ref| over all float components, and max |ref| */
static void max_err(const gn__tensor *a, const gn__tensor *ref, double *err, double *refmax)
{
    assert_int_equal(a->dtype, ref->dtype);
    assert_int_equal(a->rank, ref->rank);
    for (int i = 0; i < a->rank; i++) assert_int_equal(a->dims[i], ref->dims[i]);
    bool dbl = a->dtype == DT_F64 || a->dtype == DT_C128;
    bool cpx = a->dtype == DT_C64 || a->dtype == DT_C128;
    int64_t n = gn__tensor_numel(a) * (cpx ? 2 : 1);
    *err = 0;
    *refmax = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = dbl ? ((const double *)a->data)[i] : ((const float *)a->data)[i];
        double r = dbl ? ((const double *)ref->data)[i] : ((const float *)ref->data)[i];
        if (!(fabs(x - r) <= *err)) *err = fabs(x - r);
        if (fabs(r) > *refmax) *refmax = fabs(r);
    }
}

/* ---- complex numbers --------------------------------------------------------------- */
static void test_complex_ops(void **state)
{
    (void)state;
    gn__tensor out[1];
    /* Complex with broadcasting: float [2,1] and [3] -> complex64 [2,3] */
    gn_graph *g = graph1("Complex", 2, (const char *const[]){"DT_FLOAT", "DT_FLOAT"},
                         "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tout' value { type: DT_COMPLEX64 } }");
    gn__tensor in[2] = {tens(DT_F32, 2, D(2, 1), (const float[]){1, -2}),
                        tens(DT_F32, 1, D(3), (const float[]){10, 20, 30})};
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_C64, 2, D(2, 3));
    const float want_c[12] = {1, 10, 1, 20, 1, 30, -2, 10, -2, 20, -2, 30};
    assert_memory_equal(out[0].data, want_c, sizeof want_c);
    gn_pt_krelease(out, 1);
    in[0] = tens(DT_F32, 1, D(3), (const float[]){1, 2, 3});
    in[1] = tens(DT_F32, 1, D(2), (const float[]){1, 2});
    gn_pt_kexpect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (Complex): shapes [3] and [2] cannot be broadcast");
    in[1] = tens(DT_F64, 1, D(3), (const double[]){1, 2, 3});
    in[1].dims[0] = 3;
    gn_pt_kexpect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (Complex): real is float but imag is double");
    gn_graph_free(g);

    /* double scalar + vector -> complex128 */
    g = graph1("Complex", 2, (const char *const[]){"DT_DOUBLE", "DT_DOUBLE"},
               "attr { key: 'T' value { type: DT_DOUBLE } } attr { key: 'Tout' value { type: DT_COMPLEX128 } }");
    in[0] = tens(DT_F64, 0, NULL, (const double[]){0.5});
    in[1] = tens(DT_F64, 1, D(2), (const double[]){-1, 7});
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_C128, 1, D(2));
    const double want_d[4] = {0.5, -1, 0.5, 7};
    assert_memory_equal(out[0].data, want_d, sizeof want_d);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* the parts of complex64 and complex128 values */
    static const float zf[6] = {3, 4, -1, 0, 0, -2};
    static const double zd[6] = {3, 4, -1, 0, 0, -2};
    const char *ops[5] = {"Real", "Imag", "ComplexAbs", "Angle", "Conj"};
    for (int dbl = 0; dbl < 2; dbl++)
        for (int k = 0; k < 5; k++) {
            char attrs[200];
            snprintf(attrs, sizeof attrs, "attr { key: 'T' value { type: %s } }%s", dbl ? "DT_COMPLEX128" : "DT_COMPLEX64",
                     k == 4 ? "" : dbl ? " attr { key: 'Tout' value { type: DT_DOUBLE } }"
                                       : " attr { key: 'Tout' value { type: DT_FLOAT } }");
            g = graph1(ops[k], 1, (const char *const[]){dbl ? "DT_COMPLEX128" : "DT_COMPLEX64"}, attrs);
            gn__tensor z = dbl ? tens(DT_C128, 1, D(3), zd) : tens(DT_C64, 1, D(3), zf);
            run_ok(g, &z, 1, out, 1);
            double want[6];
            switch (k) {
            case 0: memcpy(want, (double[]){3, -1, 0}, 3 * sizeof(double)); break;
            case 1: memcpy(want, (double[]){4, 0, -2}, 3 * sizeof(double)); break;
            case 2: memcpy(want, (double[]){5, 1, 2}, 3 * sizeof(double)); break;
            case 3: memcpy(want, (double[]){atan2(4, 3), M_PI, -M_PI / 2}, 3 * sizeof(double)); break;
            default: memcpy(want, (double[]){3, -4, -1, -0.0, 0, 2}, 6 * sizeof(double)); break;
            }
            int n = k == 4 ? 6 : 3;
            expect_shape(&out[0], k == 4 ? (dbl ? DT_C128 : DT_C64) : (dbl ? DT_F64 : DT_F32), 1, D(3));
            for (int i = 0; i < n; i++) {
                if (dbl) assert_true(((const double *)out[0].data)[i] == want[i]);
                else assert_true(((const float *)out[0].data)[i] == (float)want[i]);
            }
            gn_pt_krelease(out, 1);
            gn__tensor bad = tens(DT_F32, 1, D(3), zf);
            char msg[200];
            snprintf(msg, sizeof msg, "node 'n' (%s): input must be complex64 or complex128, got float", ops[k]);
            gn_pt_kexpect_error(g, &bad, 1, 1, GN_ERR_GRAPH, msg);
            gn_graph_free(g);
        }
}

/* ---- FFT ------------------------------------------------------------------------------ */
typedef struct fft_case {
    const char *name, *op;
    int r;                /* fft rank */
    int32_t len[3];       /* fft_length (real ops) */
    bool real_in, real_out;
} fft_case;

static const fft_case k_fft_cases[] = {
    {"rfft_f32_12", "RFFT", 1, {12}, true, false},
    {"rfft_f32_pad", "RFFT", 1, {16}, true, false},
    {"rfft_f32_crop", "RFFT", 1, {15}, true, false},
    {"rfft_f64_100", "RFFT", 1, {100}, true, false},
    {"irfft_f32_16", "IRFFT", 1, {16}, false, true},
    {"irfft_f32_odd", "IRFFT", 1, {9}, false, true},
    {"irfft_f64_crop", "IRFFT", 1, {10}, false, true},
    {"irfft_f32_pad", "IRFFT", 1, {12}, false, true},
    {"fft_c64_24", "FFT", 1, {0}, false, false},
    {"fft_c64_256", "FFT", 1, {0}, false, false},
    {"ifft_c128_97", "IFFT", 1, {0}, false, false},
    {"ifft_c64_1000", "IFFT", 1, {0}, false, false},
    {"fft2d_c64", "FFT2D", 2, {0}, false, false},
    {"ifft3d_c128", "IFFT3D", 3, {0}, false, false},
    {"rfft2d_f32", "RFFT2D", 2, {6, 8}, true, false},
    {"rfft2d_f32_padcrop", "RFFT2D", 2, {6, 10}, true, false},
    {"irfft2d_f32", "IRFFT2D", 2, {6, 8}, false, true},
};

static const char *tname(int32_t dt)
{
    switch (dt) {
    case DT_F32: return "DT_FLOAT";
    case DT_F64: return "DT_DOUBLE";
    case DT_C64: return "DT_COMPLEX64";
    default: return "DT_COMPLEX128";
    }
}

static gn_graph *fft_graph(const char *op, int32_t in_dt, bool real)
{
    char attrs[300];
    bool fwd_real = in_dt == DT_F32 || in_dt == DT_F64;
    int32_t cdt = fwd_real ? (in_dt == DT_F32 ? DT_C64 : DT_C128) : in_dt;
    int32_t rdt = cdt == DT_C64 ? DT_F32 : DT_F64;
    if (real)
        snprintf(attrs, sizeof attrs, "attr { key: 'Treal' value { type: %s } } attr { key: 'Tcomplex' value { type: %s } }",
                 tname(rdt), tname(cdt));
    else snprintf(attrs, sizeof attrs, "attr { key: 'Tcomplex' value { type: %s } }", tname(cdt));
    return graph1(op, real ? 2 : 1, (const char *const[]){tname(in_dt), "DT_INT32"}, attrs);
}

static void test_fft_goldens(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_fft_cases / sizeof k_fft_cases[0]; i++) {
        const fft_case *fc = &k_fft_cases[i];
        char nx[128], ny[128];
        snprintf(nx, sizeof nx, "%s_x", fc->name);
        snprintf(ny, sizeof ny, "%s_y", fc->name);
        gn_tensor kx, ky;
        gn__tensor in[2];
        in[0] = golden(nx, !fc->real_in, &kx);
        gn__tensor ref = golden(ny, !fc->real_out, &ky);
        bool real = fc->real_in || fc->real_out;
        in[1] = tens(DT_I32, 1, D(fc->r), fc->len);
        gn_graph *g = fft_graph(fc->op, in[0].dtype, real);
        gn__tensor out[1];
        run_ok(g, in, real ? 2 : 1, out, 1);
        double err, rmax;
        max_err(&out[0], &ref, &err, &rmax);
        bool dbl = ref.dtype == DT_F64 || ref.dtype == DT_C128;
        double tol = (dbl ? 1e-12 : 2e-6) * (1 + rmax);
        if (!(err <= tol)) fail_msg("%s: max |err| %g > %g", fc->name, err, tol);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        gn_tensor_free(&kx);
        gn_tensor_free(&ky);
    }
}

/* Exact small cases, round trips at lengths that take each algorithm, errors. */
static void test_fft_exact_and_errors(void **state)
{
    (void)state;
    gn__tensor out[1], in[2];
    /* FFT [1,2,3,4] = [10, -2+2i, -2, -2-2i] */
    gn_graph *g = fft_graph("FFT", DT_C64, false);
    in[0] = tens(DT_C64, 1, D(4), (const float[]){1, 0, 2, 0, 3, 0, 4, 0});
    run_ok(g, in, 1, out, 1);
    expect_shape(&out[0], DT_C64, 1, D(4));
    assert_memory_equal(out[0].data, ((const float[]){10, 0, -2, 2, -2, 0, -2, -2}), 8 * sizeof(float));
    gn_pt_krelease(out, 1);
    in[0] = tens(DT_C64, 0, NULL, (const float[]){1, 0});
    gn_pt_kexpect_error(g, in, 1, 1, GN_ERR_GRAPH, "node 'n' (FFT): input must have rank of at least 1 but got rank 0");
    in[0] = tens(DT_F32, 1, D(2), (const float[]){1, 0});
    gn_pt_kexpect_error(g, in, 1, 1, GN_ERR_GRAPH, "node 'n' (FFT): input must be complex64 or complex128, got float");
    gn_graph_free(g);

    /* RFFT [1,2,3,4], fft_length 4 -> [10, -2+2i, -2]; fft_length 3 crops to [1,2,3] */
    g = fft_graph("RFFT", DT_F32, true);
    in[0] = tens(DT_F32, 1, D(4), (const float[]){1, 2, 3, 4});
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){4});
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_C64, 1, D(3));
    assert_memory_equal(out[0].data, ((const float[]){10, 0, -2, 2, -2, 0}), 6 * sizeof(float));
    gn_pt_krelease(out, 1);
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){1});
    run_ok(g, in, 2, out, 1);   /* length 1: the first sample */
    expect_shape(&out[0], DT_C64, 1, D(1));
    assert_memory_equal(out[0].data, ((const float[]){1, 0}), 2 * sizeof(float));
    gn_pt_krelease(out, 1);
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){0});
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_C64, 1, D(0));
    gn_pt_krelease(out, 1);
    in[0] = tens(DT_F32, 2, D(2, 0), NULL);   /* empty input, zero-padded: zeros */
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){4});
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_C64, 2, D(2, 3));
    for (int i = 0; i < 12; i++) assert_true(((const float *)out[0].data)[i] == 0.0f);
    gn_pt_krelease(out, 1);
    in[0] = tens(DT_F32, 1, D(4), (const float[]){1, 2, 3, 4});
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){-3});
    gn_pt_kexpect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (RFFT): fft_length[0] must >= 0, but got: -3");
    in[1] = tens(DT_I32, 1, D(2), (const int32_t[]){4, 4});
    gn_pt_kexpect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (RFFT): fft_length must have shape [1]");
    in[0] = tens(DT_C64, 1, D(2), (const float[]){1, 2, 3, 4});
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){4});
    gn_pt_kexpect_error(g, in, 2, 1, GN_ERR_GRAPH, "node 'n' (RFFT): input must be float or double, got complex64");
    gn_graph_free(g);

    /* IRFFT ignores the imaginary part of the DC and Nyquist bins */
    g = fft_graph("IRFFT", DT_C64, true);
    in[0] = tens(DT_C64, 1, D(3), (const float[]){1, 2, 3, 4, 5, -1});
    in[1] = tens(DT_I32, 1, D(1), (const int32_t[]){4});
    run_ok(g, in, 2, out, 1);
    expect_shape(&out[0], DT_F32, 1, D(4));
    assert_memory_equal(out[0].data, ((const float[]){3, -3, 0, 1}), 4 * sizeof(float));
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* IFFT(FFT(x)) == x in double at lengths for radix-2, the plain DFT, and Bluestein */
    const int64_t lens[] = {1, 2, 7, 16, 60, 64, 65, 127, 1024, 1025};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t n = lens[li];
        double *x = malloc((size_t)n * 2 * sizeof(double));
        for (int64_t i = 0; i < 2 * n; i++) x[i] = sin(0.37 * (double)i + 0.1 * (double)(i % 5)) + 0.25;
        gn_graph *gf = fft_graph("FFT", DT_C128, false), *gi = fft_graph("IFFT", DT_C128, false);
        in[0] = tens(DT_C128, 2, D(1, n), x);
        gn__tensor mid[1];
        run_ok(gf, in, 1, mid, 1);
        /* spot-check one bin against a direct sum in long double */
        int64_t k = n / 3;
        long double sr = 0, si = 0;
        for (int64_t j = 0; j < n; j++) {
            long double a = -2.0L * 3.14159265358979323846264338327950288L * (long double)((j * k) % n) / (long double)n;
            sr += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
            si += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
        }
        const double *X = mid[0].data;
        double bin_tol = 1e-13 * (double)n * 2;
        if (!(fabs(X[2 * k] - (double)sr) <= bin_tol && fabs(X[2 * k + 1] - (double)si) <= bin_tol))
            fail_msg("n=%lld bin %lld: (%.17g, %.17g) vs (%.17Lg, %.17Lg)", (long long)n, (long long)k, X[2 * k],
                     X[2 * k + 1], sr, si);
        run_ok(gi, mid, 1, out, 1);
        const double *y = out[0].data;
        for (int64_t i = 0; i < 2 * n; i++)
            if (!(fabs(y[i] - x[i]) <= 1e-13 * 2.5)) fail_msg("n=%lld: round trip [%lld] %.17g vs %.17g", (long long)n,
                                                               (long long)i, y[i], x[i]);
        /* deterministic: the same bits again */
        gn__tensor again[1];
        run_ok(gf, in, 1, again, 1);
        assert_memory_equal(again[0].data, mid[0].data, (size_t)n * 16);
        gn_pt_krelease(again, 1);
        gn_pt_krelease(mid, 1);
        gn_pt_krelease(out, 1);
        gn_graph_free(gf);
        gn_graph_free(gi);
        free(x);
    }
}

/* ---- DecodeWav ------------------------------------------------------------------------ */
typedef struct bytes {
    uint8_t b[512];
    size_t n;
} bytes;

static void put(bytes *w, const void *p, size_t n)
{
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void put32(bytes *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}
static void put16(bytes *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(w, b, 2);
}

/* A RIFF/WAVE file: optional JUNK chunk, fmt (16 or 18 bytes), data of n int16 samples,
 * optional trailing LIST chunk. */
static bytes make_wav(uint16_t ch, uint32_t rate, uint16_t bits, const int16_t *pcm, size_t n, bool junk, bool fmt18,
                      bool list)
{
    bytes w = {{0}, 0};
    put(&w, "RIFF", 4);
    put32(&w, 0);
    put(&w, "WAVE", 4);
    if (junk) {
        put(&w, "JUNK", 4);
        put32(&w, 6);
        put(&w, "\0\0\0\0\0\0", 6);
    }
    put(&w, "fmt ", 4);
    put32(&w, fmt18 ? 18 : 16);
    put16(&w, 1);
    put16(&w, ch);
    put32(&w, rate);
    put32(&w, rate * ch * 2);
    put16(&w, (uint16_t)(ch * 2));
    put16(&w, bits);
    if (fmt18) put16(&w, 0);
    put(&w, "data", 4);
    put32(&w, (uint32_t)(n * 2));
    for (size_t i = 0; i < n; i++) put16(&w, (uint16_t)pcm[i]);
    if (list) {
        put(&w, "LIST", 4);
        put32(&w, 4);
        put(&w, "INFO", 4);
    }
    uint32_t sz = (uint32_t)w.n - 8;
    memcpy(w.b + 4, (uint8_t[]){(uint8_t)sz, (uint8_t)(sz >> 8), (uint8_t)(sz >> 16), (uint8_t)(sz >> 24)}, 4);
    return w;
}

static gn_graph *wav_graph(int dch, int dsamp)
{
    char attrs[200];
    snprintf(attrs, sizeof attrs,
             "attr { key: 'desired_channels' value { i: %d } } attr { key: 'desired_samples' value { i: %d } }", dch,
             dsamp);
    return graph1("DecodeWav", 1, (const char *const[]){"DT_STRING"}, attrs);
}

static void test_decode_wav(void **state)
{
    (void)state;
    static const int16_t pcm[6] = {0, 16384, -32768, 32767, -1, 100};   /* 3 frames x 2 channels */
    bytes w = make_wav(2, 22050, 16, pcm, 6, true, true, true);
    gn__tstring s = {(const char *)w.b, w.n};
    gn__tensor in = tens(DT_STR, 0, NULL, &s), out[2];
    const float q = 1.0f / 32768.0f;

    gn_graph *g = wav_graph(-1, -1);
    run_ok(g, &in, 1, out, 2);
    expect_shape(&out[0], DT_F32, 2, D(3, 2));
    const float all[6] = {0, 0.5f, -1, 32767 * q, -q, 100 * q};
    assert_memory_equal(out[0].data, all, sizeof all);
    expect_shape(&out[1], DT_I32, 0, NULL);
    assert_int_equal(*(const int32_t *)out[1].data, 22050);
    gn_pt_krelease(out, 2);
    gn_graph_free(g);

    /* one channel, padded to 5 samples */
    g = wav_graph(1, 5);
    run_ok(g, &in, 1, out, 2);
    expect_shape(&out[0], DT_F32, 2, D(5, 1));
    assert_memory_equal(out[0].data, ((const float[]){0, -1, -q, 0, 0}), 5 * sizeof(float));
    gn_pt_krelease(out, 2);
    gn_graph_free(g);

    /* three channels (the last repeats), truncated to 2 samples */
    g = wav_graph(3, 2);
    run_ok(g, &in, 1, out, 2);
    expect_shape(&out[0], DT_F32, 2, D(2, 3));
    assert_memory_equal(out[0].data, ((const float[]){0, 0.5f, 0.5f, -1, 32767 * q, 32767 * q}), 6 * sizeof(float));
    gn_pt_krelease(out, 2);

    /* malformed files: the error names the byte position */
    bytes bad = w;
    memcpy(bad.b, "RIFX", 4);
    s = (gn__tstring){(const char *)bad.b, bad.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 0: RIFF header: expected 'RIFF' but found 'RIFX'");
    s = (gn__tstring){(const char *)w.b, w.n - 12 - 3};   /* cut inside the samples */
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 60: sample data: data too short (need 12 bytes, 9 left)");
    s = (gn__tstring){(const char *)w.b, 6};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 4: RIFF size: data too short (need 4 bytes, 2 left)");
    bytes b8 = make_wav(1, 8000, 8, pcm, 2, false, false, false);
    s = (gn__tstring){(const char *)b8.b, b8.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 34: bits per sample: can only read 16-bit WAV files, but got 8");
    bytes nodata = make_wav(1, 8000, 16, pcm, 2, false, false, false);
    memcpy(nodata.b + 36, "date", 4);
    s = (gn__tstring){(const char *)nodata.b, nodata.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH, "node 'n' (DecodeWav): WAV contents byte 48: data chunk: no data chunk found");
    bytes odd = make_wav(1, 8000, 16, pcm, 2, false, false, false);
    memcpy(odd.b + 12, "LIST", 4);
    s = (gn__tstring){(const char *)odd.b, odd.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 12: chunk id: unexpected chunk 'LIST' before the 'fmt ' chunk");
    bytes rate = make_wav(1, 8000, 16, pcm, 2, false, false, false);
    rate.b[28] ^= 1;   /* bytes per second */
    s = (gn__tstring){(const char *)rate.b, rate.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH,
                        "node 'n' (DecodeWav): WAV contents byte 28: bytes per second: expected 16000 but got 16001 "
                        "(sample_rate=8000, bytes_per_sample=2)");
    /* every truncation and every single-byte change of a valid file: an error or a result, never a crash */
    for (size_t cut = 0; cut <= w.n; cut++) {
        s = (gn__tstring){(const char *)w.b, cut};
        gn__err err;
        gn_status st = gn_pt_krun(g, &in, 1, out, 2, GN__K_REFERENCE, &err);
        gn_pt_krelease(out, 2);
        assert_true(st == GN_OK || st == GN_ERR_GRAPH);
        if (cut < w.n - 12) assert_int_equal(st, GN_ERR_GRAPH);   /* the trailing LIST chunk is optional */
    }
    for (size_t pos = 0; pos < w.n; pos++)
        for (int v = 0; v < 3; v++) {
            bytes m = w;
            m.b[pos] = (uint8_t)(v == 0 ? 0 : v == 1 ? 0xff : m.b[pos] ^ 0x80);
            s = (gn__tstring){(const char *)m.b, m.n};
            gn__err err;
            gn_status st = gn_pt_krun(g, &in, 1, out, 2, GN__K_REFERENCE, &err);
            gn_pt_krelease(out, 2);
            assert_true(st == GN_OK || st == GN_ERR_GRAPH);
        }
    gn__tensor vec = tens(DT_STR, 1, D(1), &s);
    gn_pt_kexpect_error(g, &vec, 1, 2, GN_ERR_GRAPH, "node 'n' (DecodeWav): contents must be scalar, got rank 1");
    gn_graph_free(g);
    g = wav_graph(-2, -1);
    s = (gn__tstring){(const char *)w.b, w.n};
    gn_pt_kexpect_error(g, &in, 1, 2, GN_ERR_GRAPH, "node 'n' (DecodeWav): desired_channels must be >= -1, got -2");
    gn_graph_free(g);
}

/* ---- AudioSpectrogram and Mfcc ------------------------------------------------------------ */
static gn_graph *spec_graph(int window, int stride, bool squared)
{
    char attrs[200];
    snprintf(attrs, sizeof attrs,
             "attr { key: 'window_size' value { i: %d } } attr { key: 'stride' value { i: %d } } "
             "attr { key: 'magnitude_squared' value { b: %s } }",
             window, stride, squared ? "true" : "false");
    return graph1("AudioSpectrogram", 1, (const char *const[]){"DT_FLOAT"}, attrs);
}

static gn_graph *mfcc_graph(float upper, float lower, int channels, int coefs)
{
    char attrs[400];
    snprintf(attrs, sizeof attrs,
             "attr { key: 'upper_frequency_limit' value { f: %.9g } } attr { key: 'lower_frequency_limit' value { f: %.9g } } "
             "attr { key: 'filterbank_channel_count' value { i: %d } } attr { key: 'dct_coefficient_count' value { i: %d } }",
             upper, lower, channels, coefs);
    return graph1("Mfcc", 2, (const char *const[]){"DT_FLOAT", "DT_INT32"}, attrs);
}

static void test_spectrogram(void **state)
{
    (void)state;
    gn__tensor out[2];
    /* constant 1 over 6 samples, window 4 (Hann [0, .5, 1, .5]), stride 2: rows [4, 1, 0] */
    gn_graph *g = spec_graph(4, 2, true);
    static const float ones[6] = {1, 1, 1, 1, 1, 1};
    gn__tensor x = tens(DT_F32, 2, D(6, 1), ones);
    run_ok(g, &x, 1, out, 1);
    expect_shape(&out[0], DT_F32, 3, D(1, 2, 3));
    assert_memory_equal(out[0].data, ((const float[]){4, 1, 0, 4, 1, 0}), 6 * sizeof(float));
    gn_pt_krelease(out, 1);
    x = tens(DT_F32, 2, D(3, 1), ones);   /* shorter than a window: no frames */
    run_ok(g, &x, 1, out, 1);
    expect_shape(&out[0], DT_F32, 3, D(1, 0, 3));
    gn_pt_krelease(out, 1);
    x = tens(DT_F32, 1, D(6), ones);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH, "node 'n' (AudioSpectrogram): input must be 2-dimensional, got rank 1");
    gn_graph_free(g);
    g = spec_graph(1, 2, true);
    x = tens(DT_F32, 2, D(6, 1), ones);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH, "node 'n' (AudioSpectrogram): window_size must be > 1, got 1");
    gn_graph_free(g);

    /* the stereo clip, decoded here, against TensorFlow's spectrograms */
    char path[2048];
    size_t len = 0;
    unsigned char *wav = gn_test_slurp(gn_test_data("signal/short.wav", path, sizeof path), &len);
    assert_non_null(wav);
    gn__tstring s = {(const char *)wav, len};
    gn__tensor in = tens(DT_STR, 0, NULL, &s), audio[2];
    g = wav_graph(-1, -1);
    run_ok(g, &in, 1, audio, 2);
    gn_graph_free(g);
    expect_shape(&audio[0], DT_F32, 2, D(1000, 2));
    for (int64_t i = 0; i < 2000; i++) {
        int16_t v = (int16_t)(wav[44 + 2 * i] | wav[45 + 2 * i] << 8);
        assert_true(((const float *)audio[0].data)[i] == (float)v / 32768.0f);
    }
    struct {
        const char *golden;
        int window, stride;
        bool squared;
    } cases[2] = {{"spec_a", 256, 128, true}, {"spec_b", 200, 75, false}};
    for (int k = 0; k < 2; k++) {
        g = spec_graph(cases[k].window, cases[k].stride, cases[k].squared);
        run_ok(g, &audio[0], 1, out, 1);
        gn_tensor keep;
        gn__tensor ref = golden(cases[k].golden, false, &keep);
        double err, rmax;
        max_err(&out[0], &ref, &err, &rmax);
        const float *a = out[0].data, *r = ref.data;
        for (int64_t i = 0; i < gn__tensor_numel(&ref); i++)
            if (!(fabs((double)a[i] - r[i]) <= 1e-6 * fabs(r[i]) + 1e-7 * rmax))
                fail_msg("%s[%lld]: %.9g vs %.9g", cases[k].golden, (long long)i, a[i], r[i]);
        gn_tensor_free(&keep);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }

    /* Mfcc on TensorFlow's spectrogram, three attr sets (the last one's upper limit
     * is beyond the spectrum: TensorFlow gives zeros) */
    gn_tensor keep_spec;
    gn__tensor mi[2];
    mi[0] = golden("spec_a", false, &keep_spec);
    mi[1] = audio[1];   /* sample rate 8000 */
    assert_int_equal(*(const int32_t *)mi[1].data, 8000);
    struct {
        const char *golden;
        float upper, lower;
        int ch, coef;
    } mc[3] = {{"mfcc_a", 4000, 20, 40, 13}, {"mfcc_b", 3000, 100, 20, 12}, {"mfcc_c", 8000, 20, 40, 13}};
    for (int k = 0; k < 3; k++) {
        g = mfcc_graph(mc[k].upper, mc[k].lower, mc[k].ch, mc[k].coef);
        run_ok(g, mi, 2, out, 1);
        gn_tensor keep;
        gn__tensor ref = golden(mc[k].golden, false, &keep);
        double err, rmax;
        max_err(&out[0], &ref, &err, &rmax);
        const float *a = out[0].data, *r = ref.data;
        for (int64_t i = 0; i < gn__tensor_numel(&ref); i++)
            if (!(fabs((double)a[i] - r[i]) <= 1e-5 * (1 + fabs(r[i]))))
                fail_msg("%s[%lld]: %.9g vs %.9g", mc[k].golden, (long long)i, a[i], r[i]);
        gn_tensor_free(&keep);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    g = mfcc_graph(4000, 20, 10, 13);
    gn_pt_kexpect_error(g, mi, 2, 1, GN_ERR_GRAPH,
                        "node 'n' (Mfcc): Mfcc initialization failed for channel count 129 and sample rate 8000: "
                        "dct_coefficient_count must be less than or equal to filterbank_channel_count");
    gn__tensor bad[2] = {mi[0], tens(DT_I32, 1, D(1), (const int32_t[]){8000})};
    gn_pt_kexpect_error(g, bad, 2, 1, GN_ERR_GRAPH,
                        "node 'n' (Mfcc): Input sample_rate should be a scalar tensor, got rank 1 instead");
    gn_graph_free(g);
    gn_tensor_free(&keep_spec);
    gn_pt_krelease(audio, 2);
    free(wav);
}

/* ---- through a session, and folded by the optimizer --------------------------------------- */
static const char *k_fold_graph =
    "node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor {"
    " dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 6 } }"
    " float_val: [1, 2, 3, 4, 5, 6, -1, 0.5, 0.25, 0, 3, 7] } } } }\n"
    "node { name: 'len' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 8 } } } }\n"
    "node { name: 'spec' op: 'RFFT' input: 'x' input: 'len' attr { key: 'Treal' value { type: DT_FLOAT } }"
    " attr { key: 'Tcomplex' value { type: DT_COMPLEX64 } } }\n"
    "node { name: 'mag' op: 'ComplexAbs' input: 'spec' attr { key: 'T' value { type: DT_COMPLEX64 } }"
    " attr { key: 'Tout' value { type: DT_FLOAT } } }\n"
    "node { name: 're' op: 'Real' input: 'spec' attr { key: 'T' value { type: DT_COMPLEX64 } }"
    " attr { key: 'Tout' value { type: DT_FLOAT } } }\n"
    "node { name: 'im' op: 'Imag' input: 'spec' attr { key: 'T' value { type: DT_COMPLEX64 } }"
    " attr { key: 'Tout' value { type: DT_FLOAT } } }\n"
    "node { name: 'z' op: 'Complex' input: 're' input: 'im' attr { key: 'T' value { type: DT_FLOAT } }"
    " attr { key: 'Tout' value { type: DT_COMPLEX64 } } }\n"
    "node { name: 'back' op: 'IRFFT' input: 'z' input: 'len' attr { key: 'Treal' value { type: DT_FLOAT } }"
    " attr { key: 'Tcomplex' value { type: DT_COMPLEX64 } } }\n"
    "node { name: 'out' op: 'Identity' input: 'back' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'mag_out' op: 'Identity' input: 'mag' attr { key: 'T' value { type: DT_FLOAT } } }\n";

static void run_fetches(const gn_graph *g, gn_tensor *outs)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    const char *fetch[2] = {"out", "mag_out"};
    if (gn_session_run(s, NULL, NULL, 0, fetch, outs, 2) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void test_session_and_fold(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kload(k_fold_graph, 1);
    gn_tensor before[2], after[2];
    run_fetches(g, before);
    assert_int_equal(before[0].rank, 2);
    assert_int_equal(before[0].dims[1], 8);
    assert_int_equal(before[1].dims[1], 5);
    /* |X_0| of row 0 is the sum of the samples */
    assert_true(((const float *)before[1].data)[0] == 21.0f);
    /* real and imaginary parts recombined: IRFFT gives back the zero-padded input */
    const float want0[8] = {1, 2, 3, 4, 5, 6, 0, 0};
    for (int i = 0; i < 8; i++) assert_true(fabsf(((const float *)before[0].data)[i] - want0[i]) <= 1e-5f);

    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *fetches[2] = {"out", "mag_out"};
    p.fetches = fetches;
    p.n_fetches = 2;
    gn_report *r = NULL;
    if (gn_optimize(g, NULL, &p, &r) != GN_OK) fail_msg("optimize: %s", gn_graph_errmsg(g));
    gn_report_free(r);
    for (size_t i = 0; i < gn_graph_node_count(g); i++) {
        const char *op = gn_graph_node_op(g, i);
        if (!strcmp(op, "RFFT") || !strcmp(op, "IRFFT") || !strcmp(op, "Complex") || !strcmp(op, "ComplexAbs"))
            fail_msg("%s was not folded", op);
    }
    run_fetches(g, after);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(after[k].nbytes, before[k].nbytes);
        assert_memory_equal(after[k].data, before[k].data, before[k].nbytes);
        gn_tensor_free(&before[k]);
        gn_tensor_free(&after[k]);
    }
    gn_graph_free(g);
}

/* ---- the ARM DS-CNN keyword-spotting graph from a wav --------------------------------------- */
static void test_kws_end_to_end(void **state)
{
    (void)state;
    char pb[2048], path[2048];
    if (!gn_test_corpus("ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", pb, sizeof pb)) skip();
    gn_graph *g = NULL;
    if (gn_graph_load(pb, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    size_t len = 0;
    unsigned char *wav = gn_test_slurp(gn_test_data("signal/kws.wav", path, sizeof path), &len);
    assert_non_null(wav);
    gn_string ws = {(const char *)wav, len};
    gn_tensor feed;
    memset(&feed, 0, sizeof feed);
    feed.dtype = DT_STR;
    feed.data = &ws;
    feed.nbytes = sizeof ws;
    const char *feeds[1] = {"wav_data"}, *fetches[2] = {"Mfcc", "labels_softmax"};
    gn_tensor out[2];
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, feeds, &feed, 1, fetches, out, 2) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);

    gn_tensor km, ks;
    golden("kws_mfcc", false, &km);
    golden("kws_softmax", false, &ks);
    assert_int_equal(out[0].rank, 3);
    assert_int_equal(gn_tensor_numel(&out[0]), gn_tensor_numel(&km));
    for (int64_t i = 0; i < gn_tensor_numel(&km); i++) {
        float a = ((const float *)out[0].data)[i], r = ((const float *)km.data)[i];
        if (!(fabsf(a - r) <= 1e-4f * (1 + fabsf(r)))) fail_msg("Mfcc[%lld]: %.9g vs %.9g", (long long)i, a, r);
    }
    assert_int_equal(gn_tensor_numel(&out[1]), 12);
    for (int64_t i = 0; i < 12; i++) {
        float a = ((const float *)out[1].data)[i], r = ((const float *)ks.data)[i];
        if (!(fabsf(a - r) <= 1e-5f)) fail_msg("softmax[%lld]: %.9g vs %.9g", (long long)i, a, r);
    }

    /* the same through `grapnel run`, the wav fed as a one-element byte-string .npy */
    char npy[2048], res[2048], err[512];
    snprintf(npy, sizeof npy, "%s/kws_wav.npy", gn_test_tmpdir());
    snprintf(res, sizeof res, "%s/kws_softmax.npy", gn_test_tmpdir());
    if (gn_npy_write(npy, &feed, err, sizeof err) != GN_OK) fail_msg("%s", err);
    char *log = NULL;
    int rc = gn_test_sh(&log, "'%s' run '%s' --feed wav_data='%s' --fetch labels_softmax='%s'", GN_CLI_PATH, pb, npy, res);
    if (rc != 0) fail_msg("grapnel run: %d\n%s", rc, log ? log : "");
    free(log);
    gn_tensor cli;
    if (gn_npy_read(res, &cli, err, sizeof err) != GN_OK) fail_msg("%s", err);
    assert_int_equal(gn_tensor_numel(&cli), 12);
    assert_memory_equal(cli.data, out[1].data, 12 * sizeof(float));
    gn_tensor_free(&cli);

    gn_tensor_free(&km);
    gn_tensor_free(&ks);
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    free(wav);
    gn_graph_free(g);
}

/* The op list (src/opdef/ops.def) names these kernels; the whole list is
 * checked in op_list_test.c. */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("RFFT"), gn__signal_k_rfft);
    assert_ptr_equal(gn__kernel_for("AudioSpectrogram"), gn__signal_k_audio_spectrogram);
    assert_ptr_equal(gn__kernel_for("ComplexAbs"), gn__signal_k_complex_abs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_complex_ops),
        cmocka_unit_test(test_fft_goldens),
        cmocka_unit_test(test_fft_exact_and_errors),
        cmocka_unit_test(test_decode_wav),
        cmocka_unit_test(test_spectrogram),
        cmocka_unit_test(test_session_and_fold),
        cmocka_unit_test(test_kws_end_to_end),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
