/* Dawsn (Dawson's integral), an op added by one row of the op list
 * (src/opdef/ops.def): its shape through shape inference, its values through a
 * CPU session, against
 *   - F(x) = exp(-x^2) * integral_0^x exp(t^2) dt computed here by Simpson's
 *     rule on integral_0^x exp(-u (2x - u)) du (u = x - t), independently of
 *     the kernel's series;
 *   - TensorFlow 2.21's tf.math.special.dawsn (kernels/special_math/
 *     special_math_op_dawsn.cc, float and double on the CPU), values printed
 *     by it and written below;
 *   - its special values: F(+-0) = F(+-inf) = +0, NaN stays NaN. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grapnel/runtime.h"

#define DT_F32 1
#define DT_F64 2
#define DT_F16 19

/* x -> Dawsn -> y, x a placeholder of dtype `dt` and shape [n]. */
static gn_graph *dawsn_graph(const char *dt, int64_t n)
{
    char text[512];
    snprintf(text, sizeof text,
             "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } "
             "attr { key: \"shape\" value { shape { dim { size: %lld } } } } }\n"
             "node { name: \"y\" op: \"Dawsn\" input: \"x\" attr { key: \"T\" value { type: %s } } }\n",
             dt, (long long)n, dt);
    gn_graph *g = gn_test_load_text(text, 1);
    assert_non_null(g);
    return g;
}

/* Runs the graph on x (n elements of dtype) into out (owned: gn_tensor_free). */
static gn_status run(gn_graph *g, int32_t dtype, void *x, int64_t n, gn_tensor *out, char *msg, size_t msglen)
{
    gn_session_options o;
    gn_session_options_init(&o);
    gn_session *s = NULL;
    gn_status st = gn_session_new(g, &o, &s);
    if (st == GN_OK) {
        gn_tensor feed;
        memset(&feed, 0, sizeof feed);
        feed.dtype = dtype;
        feed.rank = 1;
        feed.dims[0] = n;
        feed.data = x;
        feed.nbytes = (size_t)n * gn_dtype_size(dtype);
        const char *fn[] = {"x"}, *xn[] = {"y"};
        st = gn_session_run(s, fn, &feed, 1, xn, out, 1);
    }
    snprintf(msg, msglen, "%s", s ? gn_session_errmsg(s) : "");
    gn_session_free(s);
    return st;
}

/* Dawson's integral by Simpson's rule with N intervals on [0, U]: the
 * integrand exp(-u (2x - u)) falls below exp(-50) past u = 50 / x. */
static double dawsn_quadrature(double x)
{
    double a = fabs(x);
    if (a == 0) return 0;
    double upper = a < 50.0 / a ? a : 50.0 / a;
    const int n = 200000;
    double h = upper / n, sum = 0;
    for (int i = 0; i <= n; i++) {
        double u = i * h;
        double f = exp(-u * (2 * a - u));
        sum += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
    }
    double r = sum * h / 3;
    return x < 0 ? -r : r;
}

/* Points and TensorFlow 2.21's answers (tf.math.special.dawsn). */
static const double xs[] = {0.25, -0.5, 0.924138873, 1.0, 2.0, -3.0, 3.25, 4.5, 6.25, 9.9, 10.0, 12.0, -50.0};
static const double tf_f64[] = {0.2398391635628982,  -0.4244363835020223, 0.5410442246351816,  0.5380795069127684,
                                0.30134038892379195, -0.17827103061055835, 0.162570914560687,  0.11408861022682497,
                                0.08106609406101173, 0.0507667506518047,  0.05025384718759853, 0.041812876453988256,
                                -0.010002001201201684};
static const float tf_f32[] = {0.23983915150165558f, -0.42443639039993286f, 0.5410442352294922f,  0.5380795001983643f,
                               0.30134040117263794f, -0.17827101051807404f, 0.16257092356681824f, 0.11408860236406326f,
                               0.08106609433889389f, 0.050766754895448685f, 0.05025384947657585f, 0.04181287810206413f,
                               -0.01000200118869543f};
#define NX (sizeof xs / sizeof xs[0])

static void test_shape(void **state)
{
    (void)state;
    gn_graph *g = dawsn_graph("DT_DOUBLE", 7);
    assert_int_equal(gn_graph_infer_shapes(g), GN_OK);
    size_t y = gn_graph_node_count(g) - 1;
    assert_string_equal(gn_graph_node_op(g, y), "Dawsn");
    int64_t dims[4];
    assert_int_equal(gn_graph_node_output_shape(g, y, 0, dims, 4), 1);
    assert_int_equal(dims[0], 7);
    assert_int_equal(gn_graph_node_output_dtype(g, y, 0), DT_F64);
    gn_graph_free(g);
}

static void test_double(void **state)
{
    (void)state;
    gn_graph *g = dawsn_graph("DT_DOUBLE", (int64_t)NX);
    double x[NX];
    memcpy(x, xs, sizeof x);
    gn_tensor out;
    char msg[512];
    if (run(g, DT_F64, x, (int64_t)NX, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    assert_int_equal(out.dtype, DT_F64);
    const double *y = out.data;
    for (size_t i = 0; i < NX; i++) {
        double q = dawsn_quadrature(xs[i]);
        if (fabs(y[i] - q) > 1e-12 * fabs(q) || fabs(y[i] - tf_f64[i]) > 1e-13 * fabs(tf_f64[i]))
            fail_msg("Dawsn(%.17g) = %.17g; quadrature %.17g, TensorFlow %.17g", xs[i], y[i], q, tf_f64[i]);
    }
    gn_tensor_free(&out);
    gn_graph_free(g);
}

static void test_float(void **state)
{
    (void)state;
    gn_graph *g = dawsn_graph("DT_FLOAT", (int64_t)NX);
    float x[NX];
    for (size_t i = 0; i < NX; i++) x[i] = (float)xs[i];
    gn_tensor out;
    char msg[512];
    if (run(g, DT_F32, x, (int64_t)NX, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    assert_int_equal(out.dtype, DT_F32);
    const float *y = out.data;
    for (size_t i = 0; i < NX; i++) {
        /* one rounding of the exact value: within one float ulp of the
         * quadrature at the float input; TensorFlow's float kernel, which
         * computes in float, within 4 */
        double q = dawsn_quadrature((double)x[i]);
        double ulp = nextafterf(fabsf((float)q), INFINITY) - fabsf((float)q);
        if (fabs((double)y[i] - q) > ulp || fabs((double)y[i] - (double)tf_f32[i]) > 4 * ulp)
            fail_msg("Dawsn(%.9g) = %.9g; quadrature %.17g, TensorFlow %.9g", (double)x[i], (double)y[i], q,
                     (double)tf_f32[i]);
    }
    gn_tensor_free(&out);
    gn_graph_free(g);
}

static void test_special_values(void **state)
{
    (void)state;
    double x[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-30, 1e20, -1e300};
    const size_t n = sizeof x / sizeof x[0];
    gn_graph *g = dawsn_graph("DT_DOUBLE", (int64_t)n);
    gn_tensor out;
    char msg[512];
    if (run(g, DT_F64, x, (int64_t)n, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const double *y = out.data;
    for (size_t i = 0; i < 4; i++) {
        assert_true(y[i] == 0.0);
        assert_false(signbit(y[i]));   /* TensorFlow: +0 for -0 and -inf too */
    }
    assert_true(isnan(y[4]));
    assert_true(y[5] == 1e-30);        /* F(x) = x - 2x^3/3 + ... */
    assert_true(y[6] == 5e-21);        /* F(x) = 1/(2x) + 1/(4x^3) + ... */
    assert_true(y[7] == -5e-301);
    gn_tensor_free(&out);
    gn_graph_free(g);
}

/* TensorFlow has no half kernel for Dawsn on the CPU; neither has grapnel. */
static void test_half_refused(void **state)
{
    (void)state;
    gn_graph *g = dawsn_graph("DT_HALF", 1);
    uint16_t x = 0x3c00;   /* 1.0 */
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[512];
    gn_status st = run(g, DT_F16, &x, 1, &out, msg, sizeof msg);
    if (st != GN_ERR_UNSUPPORTED || !strstr(msg, "node 'y' (Dawsn): dtype half is not supported"))
        fail_msg("status %d: %s", st, msg);
    gn_tensor_free(&out);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),          cmocka_unit_test(test_double),
        cmocka_unit_test(test_float),          cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_half_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
