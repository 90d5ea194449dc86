/* INT8 engine conversion (docs/reference_formats.md §A8): the quantization
 * kernels, the calibration run and its table, ranges from FakeQuant /
 * QuantizeAndDequantize nodes and the error for a missing one, FP16 engines
 * when INT8 has neither, the CPU backend's int8 engines (exact int8 arithmetic
 * on a small graph, counters), and per model bounds on the golden models:
 * relative L2 against float32 and top-1 agreement on random inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "runtime/backend.h"
#include "runtime/session.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define MM(n, a, b) "node { name: '" n "' op: 'MatMul' input: '" a "' input: '" b "' " TF "}\n"
#define SCAL(n, v)                                                                                                   \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"
#define MAT22(n, a, b, c, d)                                                                                         \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: [" a ", " b ", " c ", " d \
    "] } } } }\n"
#define FQV(n, in, mn, mx)                                                                                           \
    "node { name: '" n "' op: 'FakeQuantWithMinMaxVars' input: '" in "' input: '" mn "' input: '" mx "' }\n"

/* x [2,2] -> m1 = x W1 -> r = Relu(m1) -> m2 = r W2 -> t = -m2 -> y */
/* (values chosen so that no quantized value is a tie: the rounding is the same however it is computed) */
static const char *k_mlp = PH("x") MAT22("w1", "1", "-2", "0.25", "1.5") MAT22("w2", "2", "0.25", "-1.5", "1")
    MM("m1", "x", "w1") UN("r", "Relu", "m1") MM("m2", "r", "w2") UN("t", "Neg", "m2") UN("y", "Identity", "t");

static gn_graph *segment_text(const char *text, const char *params, gn_status want, char **rep)
{
    gn_graph *g = gn_pt_load_text(text);
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char err[256];
    assert_int_equal(gn_conversion_params_parse(&p, params, err, sizeof err), GN_OK);
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    const char *keep[2] = {"x", "y"};
    sp.preserve = keep;
    sp.n_preserve = 2;
    size_t n = 0;
    gn_status s = gn_segment(g, &p, &sp, rep, &n);
    if (s != want) fail_msg("gn_segment: %d, want %d: %s", s, want, gn_graph_errmsg(g));
    return g;
}

static const char *table_of(const gn_graph *g, const char *engine, size_t *len)
{
    const char *t = NULL;
    assert_true(gn__attr_get_string(g, gn__graph_find(g, engine), "calibration_data", &t, len));
    return t;
}

static void expect_table(const gn_graph *g, const char *engine, const char *want)
{
    size_t len = 0;
    const char *t = table_of(g, engine, &len);
    if (len != strlen(want) || memcmp(t, want, len)) fail_msg("table of %s:\n%.*s\nwant:\n%s", engine, (int)len, t, want);
}

static void expect_counts(gn_session *s, uint64_t hits, uint64_t builds, uint64_t fallbacks)
{
    gn__engine_stats st;
    uint32_t ne = 0;
    assert_int_equal(gn__session_stats(s, &st, &ne), GN_OK);
    if (st.eng_hits != hits || st.eng_builds != builds || st.eng_fallbacks != fallbacks)
        fail_msg("hits %llu builds %llu fallbacks %llu; want %llu %llu %llu", (unsigned long long)st.eng_hits,
                 (unsigned long long)st.eng_builds, (unsigned long long)st.eng_fallbacks, (unsigned long long)hits,
                 (unsigned long long)builds, (unsigned long long)fallbacks);
}

static void run1(gn_session *s, float *x, float *y)
{
    const int64_t d[2] = {2, 2};
    gn_tensor t = gn_pt_view(DT_FLOAT, x, 4 * sizeof(float), 2, d), out;
    memset(&out, 0, sizeof out);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    if (gn_session_run(s, fn, &t, 1, xn, &out, 1) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    memcpy(y, out.data, 4 * sizeof(float));
    gn_tensor_free(&out);
}

/* ---- kernels ------------------------------------------------------------------------------------ */
static void test_fake_quant_kernels(void **state)
{
    (void)state;
    /* range [-1, 2] in 8 bits: scale 3/255, zero point round(85) = 85 -> nudged [-1, 2] */
    const char *text = PH("x") SCAL("lo", "-1") SCAL("hi", "2") FQV("y", "x", "lo", "hi");
    gn_graph *g = gn_pt_load_text(text);
    float xs[5] = {-3.0f, -1.0f, 0.01f, 0.7f, 5.0f};
    const int64_t d[1] = {5};
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d), out;
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_run_graph(g, fn, &t, 1, xn, &out, 1);
    const float *y = out.data;
    float sc = 3.0f / 255.0f;
    assert_float_equal(y[0], -1.0f, 1e-6);
    assert_float_equal(y[1], -1.0f, 1e-6);
    assert_float_equal(y[2], floorf((0.01f + 1.0f) / sc + 0.5f) * sc - 1.0f, 1e-6);
    assert_float_equal(y[3], floorf((0.7f + 1.0f) / sc + 0.5f) * sc - 1.0f, 1e-6);
    assert_float_equal(y[4], 2.0f, 1e-6);
    gn_tensor_free(&out);
    gn_graph_free(g);
    /* QuantizeAndDequantizeV2, range from the input (max |x| = 5 -> scale 127/5), half to even */
    text = PH("x") SCAL("lo", "0") SCAL("hi", "0")
        "node { name: 'y' op: 'QuantizeAndDequantizeV2' input: 'x' input: 'lo' input: 'hi' " TF "}\n";
    g = gn_pt_load_text(text);
    gn_pt_run_graph(g, fn, &t, 1, xn, &out, 1);
    y = out.data;
    for (int i = 0; i < 5; i++) assert_float_equal(y[i], nearbyint(xs[i] * 127.0 / 5.0) * (5.0 / 127.0), 1e-6);
    gn_tensor_free(&out);
    gn_graph_free(g);
}

/* ---- calibration -------------------------------------------------------------------------------- */
static void test_calibration_table(void **state)
{
    (void)state;
    char *rep = NULL;
    gn_graph *g = segment_text(k_mlp, "{'precision_mode': 'INT8'}", GN_OK, &rep);
    gn_pt_expect_dump(g, "x=Placeholder(); y=Identity(GrapnelEngineOp_000_000); GrapnelEngineOp_000_000=Grapnel>EngineOp(x)");
    expect_table(g, "GrapnelEngineOp_000_000", "");
    gn_free(rep);
    /* not calibrated yet: the native segment runs, counted as a fallback */
    gn_session *s = NULL;
    float x1[4] = {1, -2.5f, 0.5f, 3}, x2[4] = {-4, 1, 2, 0.25f}, y[4];
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run1(s, x1, y);
    expect_counts(s, 0, 0, 1);
    gn_session_free(s);
    /* two batches: every float tensor's max |x| (the values are exact in float) */
    const int64_t d[2] = {2, 2};
    gn_tensor b[2] = {gn_pt_view(DT_FLOAT, x1, sizeof x1, 2, d), gn_pt_view(DT_FLOAT, x2, sizeof x2, 2, d)};
    const char *fn[1] = {"x:0"};
    assert_int_equal(gn_calibrate(g, fn, 1, b, 2, &rep), GN_OK);
    assert_string_equal(rep, "engine GrapnelEngineOp_000_000: 5 tensor range(s) over 2 batch(es)\n");
    gn_free(rep);
    /* the float values, exact (dyadic) */
    float m1 = 0, m2 = 0;
    const float *xs[2] = {x1, x2};
    const float w1[4] = {1, -2, 0.25f, 1.5f}, w2[4] = {2, 0.25f, -1.5f, 1};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++) {
            float r[2];
            for (int j = 0; j < 2; j++) {
                float v = xs[k][i * 2] * w1[j] + xs[k][i * 2 + 1] * w1[2 + j];
                if (fabsf(v) > m1) m1 = fabsf(v);
                r[j] = v > 0 ? v : 0;
            }
            for (int j = 0; j < 2; j++) {
                float v = r[0] * w2[j] + r[1] * w2[2 + j];
                if (fabsf(v) > m2) m2 = fabsf(v);
            }
        }
    assert_float_equal(m1, 9.5, 0); /* x2 row 0: -4 * -2 + 1 * 1.5; also the Relu's max */
    char want[512];
    snprintf(want, sizeof want,
             "grapnel-int8-calibration v1\n# calibration: max |x| over 2 batch(es)\nGrapnelInputPH_0:0 4\n"
             "m1:0 9.5\nr:0 9.5\nm2:0 %.9g\nt:0 %.9g\n",
             (double)m2, (double)m2);
    expect_table(g, "GrapnelEngineOp_000_000", want);
    /* an engine is built from the table, then found in the cache */
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run1(s, x1, y);
    expect_counts(s, 0, 1, 0);
    /* the int8 arithmetic, by hand: x per tensor (4/127), w1 per column */
    float sx = 4.0f / 127.0f, sr = 9.5f / 127.0f;
    float want_y[4];
    for (int i = 0; i < 2; i++) {
        float r[2];
        for (int j = 0; j < 2; j++) {
            float cm = fmaxf(fabsf(w1[j]), fabsf(w1[2 + j])), sw = cm / 127.0f;
            int32_t acc = 0;
            for (int k = 0; k < 2; k++)
                acc += (int32_t)nearbyintf(x1[i * 2 + k] / sx) * (int32_t)nearbyintf(w1[k * 2 + j] / sw);
            float v = (float)acc * sx * sw;
            r[j] = v > 0 ? v : 0;
        }
        for (int j = 0; j < 2; j++) {
            float cm = fmaxf(fabsf(w2[j]), fabsf(w2[2 + j])), sw = cm / 127.0f;
            int32_t acc = 0;
            for (int k = 0; k < 2; k++) {
                float q = nearbyintf(r[k] / sr);
                acc += (int32_t)(q > 127 ? 127 : q) * (int32_t)nearbyintf(w2[k * 2 + j] / sw);
            }
            want_y[i * 2 + j] = -((float)acc * sr * sw);
        }
    }
    for (int i = 0; i < 4; i++) assert_float_equal(y[i], want_y[i], 1e-6);
    run1(s, x2, y);
    expect_counts(s, 1, 1, 0);
    gn_session_free(s);
    /* a table without the ranges the engine needs: its build fails, the native
     * segment runs (exact float results), counted as a fallback on every run */
    static const char bad[] = "grapnel-int8-calibration v1\nm1:0 9.5\n";
    Tensorflow__AttrValue *v = gn__graph_value_alloc(g, sizeof *v);
    tensorflow__attr_value__init(v);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    v->s.data = (uint8_t *)bad;
    v->s.len = strlen(bad);
    assert_int_equal(gn__node_set_attr(g, gn__graph_find(g, "GrapnelEngineOp_000_000"), "calibration_data", v), GN_OK);
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run1(s, x1, y);
    run1(s, x1, y);
    expect_counts(s, 0, 0, 2);
    for (int i = 0; i < 2; i++) {
        float r0 = fmaxf(x1[i * 2] * w1[0] + x1[i * 2 + 1] * w1[2], 0), r1 = fmaxf(x1[i * 2] * w1[1] + x1[i * 2 + 1] * w1[3], 0);
        for (int j = 0; j < 2; j++) assert_float_equal(y[i * 2 + j], -(r0 * w2[j] + r1 * w2[2 + j]), 1e-6);
    }
    gn_session_free(s);
    gn_graph_free(g);
    /* nothing to calibrate */
    g = gn_pt_load_text(k_mlp);
    assert_int_equal(gn_calibrate(g, fn, 1, b, 2, &rep), GN_ERR_ARG);
    assert_non_null(strstr(gn_graph_errmsg(g), "no Grapnel>EngineOp with precision_mode INT8"));
    gn_graph_free(g);
}

/* ---- ranges from quantization nodes --------------------------------------------------------------- */
static void test_qdq_ranges(void **state)
{
    (void)state;
    /* x -> FakeQuant[-3, 2] -> m1 -> Relu -> FakeQuant[-8, 8] -> m2: both MatMul inputs have a range */
    const char *text = PH("x") MAT22("w1", "1", "-2", "0.5", "1") MAT22("w2", "2", "0.25", "-1", "1")
        SCAL("a0", "-3") SCAL("a1", "2") SCAL("b0", "-8") SCAL("b1", "8") FQV("q1", "x", "a0", "a1")
        MM("m1", "q1", "w1") UN("r", "Relu", "m1") FQV("q2", "r", "b0", "b1") MM("m2", "q2", "w2")
        UN("y", "Identity", "m2");
    char *rep = NULL;
    gn_graph *g = segment_text(text, "{'precision_mode': 'INT8', 'use_calibration': False}", GN_OK, &rep);
    gn_free(rep);
    gn_pt_expect_dump(g, "x=Placeholder(); y=Identity(GrapnelEngineOp_000_000); GrapnelEngineOp_000_000=Grapnel>EngineOp(x)");
    expect_table(g, "GrapnelEngineOp_000_000",
                 "grapnel-int8-calibration v1\n# ranges from the graph's FakeQuant / QuantizeAndDequantize nodes\n"
                 "GrapnelInputPH_0:0 3\nq1:0 3\nr:0 8\nq2:0 8\n");
    bool cal = true;
    assert_true(gn__attr_get_bool(g, gn__graph_find(g, "GrapnelEngineOp_000_000"), "use_calibration", &cal));
    assert_false(cal);
    /* engines build from it at once */
    gn_session *s = NULL;
    float x1[4] = {1, -2.5f, 0.5f, 3}, y[4];
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run1(s, x1, y);
    expect_counts(s, 0, 1, 0);
    gn_session_free(s);
    gn_graph_free(g);
    /* the second FakeQuant gone: m2's input has no range */
    text = PH("x") MAT22("w1", "1", "-2", "0.5", "1") MAT22("w2", "2", "0.25", "-1", "1") SCAL("a0", "-3")
        SCAL("a1", "2") FQV("q1", "x", "a0", "a1") MM("m1", "q1", "w1") UN("r", "Exp", "m1") MM("m2", "r", "w2")
        UN("y", "Identity", "m2");
    g = segment_text(text, "{'precision_mode': 'INT8', 'use_calibration': False}", GN_ERR_GRAPH, NULL);
    assert_string_equal(gn_graph_errmsg(g),
                        "segment: INT8 without calibration: tensor 'r:0' (input of MatMul 'm2') has no range: no "
                        "FakeQuant or QuantizeAndDequantize node gives one (or use_calibration=True and calibrate)");
    /* nothing changed */
    assert_int_equal(gn__graph_find(g, "GrapnelEngineOp_000_000"), GN_NONE);
    assert_true(gn__graph_find(g, "m2") != GN_NONE);
    gn_graph_free(g);
}

/* INT8, no calibration, no quantization node anywhere: FP16 engines, as TF-TRT does. */
static void test_int8_without_ranges_is_fp16(void **state)
{
    (void)state;
    char *rep = NULL;
    gn_graph *g = segment_text(k_mlp, "{'precision_mode': 'INT8', 'use_calibration': False}", GN_OK, &rep);
    assert_non_null(strstr(rep, "INT8 without calibration and no FakeQuant or QuantizeAndDequantize node in the graph: "
                                "engines are FP16 (as TF-TRT does)\n"));
    const char *pm;
    size_t pl;
    assert_true(gn__attr_get_string(g, gn__graph_find(g, "GrapnelEngineOp_000_000"), "precision_mode", &pm, &pl));
    assert_int_equal(pl, 4);
    assert_memory_equal(pm, "FP16", 4);
    assert_non_null(gn__graph_find_function(g, "GrapnelEngineOp_000_000_fp16_segment"));
    gn_free(rep);
    gn_graph_free(g);
}

/* ---- the CLI: grapnel segment --calibrate ------------------------------------------------------------ */
static void test_cli_calibrate(void **state)
{
    (void)state;
    char model[1024], x[1024], out[1024], *o = NULL;
    gn_test_data("golden/cnn_bn_residual.pb", model, sizeof model);
    gn_test_data("golden/cnn_bn_residual.in0.npy", x, sizeof x);
    snprintf(out, sizeof out, "%s/int8_cli.pb", gn_test_tmpdir());
    int rc = gn_test_sh(&o, "'%s' segment '%s' -o '%s' --params \"{'precision_mode': 'INT8'}\" --feed x --fetch "
                            "Identity --calibrate '%s' '%s' 2>&1",
                        GN_CLI_PATH, model, out, x, x);
    if (rc != 0) fail_msg("exit %d:\n%s", rc, o);
    assert_non_null(strstr(o, "INT8 engines need calibration (gn_calibrate, grapnel segment --calibrate)"));
    assert_non_null(strstr(o, "engine GrapnelEngineOp_000_000: "));
    assert_non_null(strstr(o, " tensor range(s) over 2 batch(es)\n"));
    free(o);
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load(out, NULL, &g), GN_OK);
    size_t len = 0;
    const char *t = table_of(g, "GrapnelEngineOp_000_000", &len);
    assert_true(len > 40);
    assert_memory_equal(t, "grapnel-int8-calibration v1\n# calibration: max |x| over 2 batch(es)\nGrapnelInputPH_0:0 ",
                        strlen("grapnel-int8-calibration v1\n# calibration: max |x| over 2 batch(es)\nGrapnelInputPH_0:0 "));
    gn_graph_free(g);
    /* files not a multiple of the inputs */
    rc = gn_test_sh(&o, "'%s' segment '%s' -o '%s' --params \"{'precision_mode': 'INT8'}\" --feed x --feed y "
                        "--calibrate '%s' 2>&1",
                    GN_CLI_PATH, model, out, x);
    assert_int_equal(rc, 2);
    assert_string_equal(o, "grapnel segment: --calibrate: 1 file(s) for 2 input(s): give one .npy per input (in --feed "
                           "order), batch after batch\n");
    free(o);
}

/* ---- golden models: INT8 against float32 on random inputs ------------------------------------------ */
static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

static float rng_normal(uint64_t *s)
{
    double u1 = ((double)rng_next(s) + 1.0) / 9007199254740993.0, u2 = (double)rng_next(s) / 9007199254740992.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* A random tensor like feed t: normal, with t's mean and standard deviation
 * (float tensors of more than one element; others are copied). */
static void random_like(const gn_tensor *t, uint64_t *seed, gn_tensor *out)
{
    assert_int_equal(gn_tensor_alloc(t->dtype, t->rank, t->dims, out), GN_OK);
    memcpy(out->data, t->data, t->nbytes);
    int64_t n = gn_tensor_numel(t);
    if (t->dtype != DT_FLOAT || n < 2) return;
    const float *r = t->data;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; i++) mean += r[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++) var += (r[i] - mean) * (r[i] - mean);
    double sd = sqrt(var / (double)n);
    float *x = out->data;
    for (int64_t i = 0; i < n; i++) x[i] = (float)(mean + sd * rng_normal(seed));
}

typedef struct int8_bound {
    const char *model;
    double rel_l2;       /* worst relative L2 over the test inputs, at most */
    double top1;         /* top-1 agreement, at least */
    bool int8;           /* int8 engines run (not only native segments): the error is not 0 */
} int8_bound;

/* Per model: measured with this test (8 calibration batches, 8 test batches,
 * random normal with the golden feed's mean and standard deviation), then the
 * bound stated with room above it. Measured rel L2 / top-1:
 *   cnn_bn_residual 5.1e-3 / 1.000 (16 rows)   mobilenet_v2 1.18e-2 / 0.978 (400)
 *   lstm 4.0e-2 / 1.000 (16)                    lstm_v1 1.05e-2 / 1.000 (16; the engines inside
 *                                               the v1 loop cannot be calibrated and stay native)
 *   transformer 1.46e-2 / 0.969 (128)           ds_cnn_s 2.39e-1 / 0.875 (8; per-tensor int8 of
 *                                               the MFCC input, whose coefficients differ in scale)
 *   tfonnx_fc_layers 2.1e-2 / 1.000 (16)        tfonnx_lstm 2.8e-2 / 1.000 (16)
 *   tfonnx_gru 2.8e-2 / 1.000 (16) */
static const int8_bound k_bounds[] = {
    {"cnn_bn_residual", 0.02, 0.93, true}, {"mobilenet_v2", 0.03, 0.95, true},
    {"lstm", 0.08, 0.93, true},            {"lstm_v1", 0.03, 0.93, true},
    {"transformer", 0.03, 0.93, true},     {"ds_cnn_s", 0.4, 0.75, true},
    {"tfonnx_fc_layers", 0.05, 0.93, true}, {"tfonnx_lstm", 0.06, 0.93, true},
    {"tfonnx_gru", 0.06, 0.93, true},
};

#define N_CAL 8
#define N_TEST 8

static void test_golden_int8(void **state)
{
    (void)state;
    gn_pt_golden m[16];
    size_t nm = gn_pt_read_manifest(m, 16), done = 0;
    for (size_t i = 0; i < nm; i++) {
        gn_graph *orig = NULL;
        gn_tensor feeds[4];
        const char *fnames[4], *xnames[4];
        if (!gn_pt_golden_open(&m[i], &orig, feeds, fnames, xnames, false)) continue;
        const int8_bound *bd = NULL;
        for (size_t k = 0; k < sizeof k_bounds / sizeof k_bounds[0]; k++)
            if (!strcmp(k_bounds[k].model, m[i].name)) bd = &k_bounds[k];
        if (!bd) fail_msg("%s: no INT8 bound stated", m[i].name);
        gn_graph *g = gn_pt_clone(orig);
        const char *keep[8];
        size_t nk = 0;
        for (size_t k = 0; k < m[i].nf; k++) keep[nk++] = m[i].feed[k];
        for (size_t k = 0; k < m[i].nx; k++) keep[nk++] = m[i].fetch[k];
        gn_conversion_params p;
        gn_conversion_params_init(&p);
        char perr[256];
        assert_int_equal(gn_conversion_params_parse(&p, "{'precision_mode': 'INT8'}", perr, sizeof perr), GN_OK);
        gn_segment_params sp;
        gn_segment_params_init(&sp);
        sp.preserve = keep;
        sp.n_preserve = nk;
        size_t n = 0;
        if (gn_segment(g, &p, &sp, NULL, &n) != GN_OK) fail_msg("%s: %s", m[i].name, gn_graph_errmsg(g));
        /* calibration: random batches like the golden feed */
        gn_tensor cal[N_CAL * 4];
        uint64_t seed = 1000 + i;
        for (size_t b = 0; b < N_CAL; b++)
            for (size_t k = 0; k < m[i].nf; k++) random_like(&feeds[k], &seed, &cal[b * m[i].nf + k]);
        char *rep = NULL;
        if (n && gn_calibrate(g, fnames, m[i].nf, cal, N_CAL, &rep) != GN_OK)
            fail_msg("%s: calibrate: %s", m[i].name, gn_graph_errmsg(g));
        gn_free(rep);
        for (size_t b = 0; b < N_CAL * m[i].nf; b++) gn_tensor_free(&cal[b]);
        /* test inputs: other random batches */
        double worst = 0;
        size_t agree = 0, rows = 0;
        uint64_t tseed = 77 + i;
        gn_session *s8 = NULL;
        assert_int_equal(gn_session_new(g, NULL, &s8), GN_OK);
        for (int t = 0; t < N_TEST; t++) {
            gn_tensor in[4], want[4], got[4];
            memset(want, 0, sizeof want);
            memset(got, 0, sizeof got);
            for (size_t k = 0; k < m[i].nf; k++) random_like(&feeds[k], &tseed, &in[k]);
            gn_pt_run_graph(orig, fnames, in, m[i].nf, xnames, want, m[i].nx);
            if (gn_session_run(s8, fnames, in, m[i].nf, xnames, got, m[i].nx) != GN_OK)
                fail_msg("%s: %s", m[i].name, gn_session_errmsg(s8));
            for (size_t k = 0; k < m[i].nx; k++) {
                gn_compare_result r;
                memset(&r, 0, sizeof r);
                gn_tensor_compare(&got[k], &want[k], 1.0, &r);
                if (r.rel_l2_err > worst || isnan(r.rel_l2_err)) worst = r.rel_l2_err;
                /* top-1 along the last dimension of the last fetch */
                if (k == m[i].nx - 1 && want[k].dtype == DT_FLOAT && want[k].rank >= 1) {
                    int64_t c = want[k].dims[want[k].rank - 1], nr = c ? gn_tensor_numel(&want[k]) / c : 0;
                    const float *a = want[k].data, *b = got[k].data;
                    for (int64_t r0 = 0; r0 < nr; r0++) {
                        int64_t ia = 0, ib = 0;
                        for (int64_t j = 1; j < c; j++) {
                            if (a[r0 * c + j] > a[r0 * c + ia]) ia = j;
                            if (b[r0 * c + j] > b[r0 * c + ib]) ib = j;
                        }
                        agree += ia == ib;
                        rows++;
                    }
                }
                gn_tensor_free(&want[k]);
                gn_tensor_free(&got[k]);
            }
            for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&in[k]);
        }
        gn__engine_stats st;
        uint32_t ne = 0;
        assert_int_equal(gn__session_stats(s8, &st, &ne), GN_OK);
        double top1 = rows ? (double)agree / (double)rows : 1.0;
        print_message("int8 %s: %zu engine(s), builds %llu hits %llu fallbacks %llu, rel L2 %.3e, top-1 %.3f "
                      "(%zu rows)\n",
                      m[i].name, n, (unsigned long long)st.eng_builds, (unsigned long long)st.eng_hits,
                      (unsigned long long)st.eng_fallbacks, worst, top1, rows);
        if (bd->int8 && (!st.eng_builds || !(worst > 0)))
            fail_msg("%s: no int8 engine ran (builds %llu, rel L2 %g)", m[i].name, (unsigned long long)st.eng_builds,
                     worst);
        int8_bound any = {m[i].name, 1e9, 0, false};
        if (getenv("GN_INT8_MEASURE")) bd = &any; /* print the figures only */
        if (!(worst <= bd->rel_l2)) fail_msg("%s: INT8 rel L2 %.3e above the stated %g", m[i].name, worst, bd->rel_l2);
        if (top1 < bd->top1) fail_msg("%s: INT8 top-1 agreement %.3f below the stated %g", m[i].name, top1, bd->top1);
        gn_session_free(s8);
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
        gn_graph_free(orig);
        gn_graph_free(g);
        done++;
    }
    assert_true(done >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fake_quant_kernels),
        cmocka_unit_test(test_calibration_table),
        cmocka_unit_test(test_qdq_ranges),
        cmocka_unit_test(test_int8_without_ranges_is_fp16),
        cmocka_unit_test(test_cli_calibrate),
        cmocka_unit_test(test_golden_int8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
