/* The session API and the CPU backend's executor: feeds and fetches by name,
 * cutting the graph at a feed, exact error messages, engine caching, memory
 * plans reused across runs, .npy files and the compare helper. Corpus models
 * where the kernels exist: tensorflow/rust's addition model, tf-onnx's
 * fc-layers (against a reference computed here from the graph's constants),
 * ML-KWS's DS_CNN_S fed at Mfcc. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "ops/kernel.h"
#include "runtime/session.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_STRING 7
#define DT_INT64 9
#define DT_BOOL 10
#define DT_HALF 19

/* ---- helpers ---------------------------------------------------------------------------- */
static gn_session *new_session(const gn_graph *g, uint64_t seed)
{
    gn_session_options o;
    gn_session_options_init(&o);
    o.seed = seed;
    gn_session *s = NULL;
    if (gn_session_new(g, &o, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    return s;
}

static gn_tensor view(int32_t dtype, void *data, size_t nbytes, int32_t rank, const int64_t *dims)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (int32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
    t.data = data;
    t.nbytes = nbytes;
    return t;
}

static void expect_run_error(gn_session *s, const char *const *fn, const gn_tensor *ft, size_t nf,
                             const char *const *xn, size_t nx, gn_status code, const char *msg)
{
    gn_tensor out[4];
    gn_status st = gn_session_run(s, fn, ft, nf, xn, out, nx);
    if (st != code || strcmp(gn_session_errmsg(s), msg) != 0)
        fail_msg("status %d (want %d)\n  got:  %s\n  want: %s", st, code, gn_session_errmsg(s), msg);
    for (size_t i = 0; i < nx; i++) assert_null(out[i].internal);
}

/* ---- the addition model --------------------------------------------------------------------- */
static void test_addition(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("tensorflow__rust/examples__addition__model.pb");
    if (!g) skip();
    gn_session *s = new_session(g, 0);
    int32_t x = 3, y = 39;
    gn_tensor feeds[2] = {view(DT_INT32, &x, 4, 0, NULL), view(DT_INT32, &y, 4, 0, NULL)};
    const char *fn[2] = {"x", "y:0"};
    const char *xn[2] = {"z", "z:0"};
    gn_tensor out[2];
    assert_int_equal(gn_session_run(s, fn, feeds, 2, xn, out, 2), GN_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out[i].dtype, DT_INT32);
        assert_int_equal(out[i].rank, 0);
        assert_int_equal(out[i].nbytes, 4);
        assert_int_equal(*(int32_t *)out[i].data, 42);
        assert_non_null(out[i].internal);
        gn_tensor_free(&out[i]);
        assert_null(out[i].data);
    }
    assert_string_equal(gn_session_errmsg(s), "");
    gn_session_free(s);
    gn_graph_free(g);
}

static void test_errors(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("tensorflow__rust/examples__addition__model.pb");
    if (!g) skip();
    gn_session *s = new_session(g, 0);
    int32_t x = 1, y = 2;
    float xf = 1;
    gn_tensor feeds[2] = {view(DT_INT32, &x, 4, 0, NULL), view(DT_INT32, &y, 4, 0, NULL)};
    const char *fn[2] = {"x", "y"};
    const char *z[1] = {"z"};
    const char *bad1[1] = {"q"}, *bad2[1] = {"z:3"}, *bad3[1] = {"q:1"};
    expect_run_error(s, fn, feeds, 2, bad1, 1, GN_ERR_NOT_FOUND, "no tensor 'q' in the graph");
    expect_run_error(s, fn, feeds, 2, bad3, 1, GN_ERR_NOT_FOUND, "no tensor 'q:1' in the graph");
    expect_run_error(s, fn, feeds, 2, bad2, 1, GN_ERR_NOT_FOUND,
                     "no tensor 'z:3' in the graph: node 'z' has 1 output");
    const char *badfeed[2] = {"x:1", "y"};
    expect_run_error(s, badfeed, feeds, 2, z, 1, GN_ERR_NOT_FOUND,
                     "no tensor 'x:1' in the graph: node 'x' has 1 output");
    gn_tensor wrong[2] = {view(DT_FLOAT, &xf, 4, 0, NULL), view(DT_INT32, &y, 4, 0, NULL)};
    expect_run_error(s, fn, wrong, 2, z, 1, GN_ERR_ARG, "feed 'x': float32 given, int32 expected");
    int32_t two[2] = {1, 2};
    int64_t d2 = 2;
    gn_tensor shaped[2] = {view(DT_INT32, two, 8, 1, &d2), view(DT_INT32, &y, 4, 0, NULL)};
    /* x's placeholder has shape [] written as a rank-0 shape: unconstrained,
     * and int32 [2] + int32 [] broadcasts */
    gn_tensor out[1];
    assert_int_equal(gn_session_run(s, fn, shaped, 2, z, out, 1), GN_OK);
    assert_int_equal(out[0].rank, 1);
    assert_int_equal(((int32_t *)out[0].data)[1], 4);
    gn_tensor_free(&out[0]);
    gn_tensor shortbuf[2] = {view(DT_INT32, two, 4, 1, &d2), view(DT_INT32, &y, 4, 0, NULL)};
    expect_run_error(s, fn, shortbuf, 2, z, 1, GN_ERR_ARG, "feed 'x': 4 bytes given, int32 [2] needs 8");
    const char *twice[2] = {"x", "x:0"};
    expect_run_error(s, twice, feeds, 2, z, 1, GN_ERR_ARG, "feed 'x:0' is given twice");
    expect_run_error(s, fn, feeds, 1, z, 1, GN_ERR_ARG,
                     "node 'y' (Placeholder): no value fed for this placeholder (int32, shape [])");
    gn_session_free(s);
    gn_graph_free(g);
}

static void test_backend_names(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                            "'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n", 1);
    gn_session_options o;
    gn_session_options_init(&o);
    assert_string_equal(o.backend, "cpu");
    assert_int_equal(o.struct_size, sizeof o);
    o.backend = "cuda";
    gn_session *s = NULL;
    const char *c[1] = {"c"};
    gn_tensor out[1];
#ifdef GN_HAVE_CUDA   /* built with the CUDA backend (tests/cuda_test.c): a GPU may be present */
    if (gn_session_new(g, &o, &s) == GN_OK) {
        gn_session_free(s);
    } else {
        assert_int_equal(strncmp(gn_session_errmsg(s), "no CUDA device: ", 16), 0);
#else
    {
        assert_int_equal(gn_session_new(g, &o, &s), GN_ERR_UNSUPPORTED);
        assert_string_equal(gn_session_errmsg(s), "the CUDA backend is not built in");
#endif
        assert_int_equal(gn_session_run(s, NULL, NULL, 0, c, out, 1), GN_ERR_MISUSE);
        gn_session_free(s);
    }
    o.backend = "tpu";
    assert_int_equal(gn_session_new(g, &o, &s), GN_ERR_NOT_FOUND);
    assert_string_equal(gn_session_errmsg(s), "no backend named 'tpu' (known: cpu, cuda)");
    gn_session_free(s);
    o.backend = "cpu";
    o.struct_size = 3;
    assert_int_equal(gn_session_new(g, &o, &s), GN_ERR_ARG);
    gn_session_free(s);
    assert_int_equal(gn_session_new(NULL, NULL, &s), GN_ERR_ARG);
    gn_session_free(s);
    /* defaults with NULL options; a constant fetch is copied out of the graph */
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    assert_int_equal(gn_session_run(s, NULL, NULL, 0, c, out, 1), GN_OK);
    assert_float_equal(*(float *)out[0].data, 2.0f, 0);
    assert_non_null(out[0].internal);
    gn_tensor_free(&out[0]);
    gn_session_free(s);
    gn_graph_free(g);
}

/* An op without a kernel fails before anything runs (the Reshape below it
 * would fail at run time with another message). */
static void test_unsupported_before_running(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 's' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
        "tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 7 } } } }\n"
        "node { name: 'r' op: 'Reshape' input: 'x' input: 's' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'p' op: 'MyCustomParse' input: 'r' }\n"
        "node { name: 'ok' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n", 1);
    gn_session *s = new_session(g, 0);
    float v[3] = {1, 2, 3};
    int64_t d = 3;
    gn_tensor f = view(DT_FLOAT, v, sizeof v, 1, &d);
    const char *fn[1] = {"x"}, *p[1] = {"p"}, *ok[1] = {"ok"};
    expect_run_error(s, fn, &f, 1, p, 1, GN_ERR_UNSUPPORTED,
                     "node 'p' (MyCustomParse): the CPU backend has no kernel for MyCustomParse");
    /* the same graph runs when the fetch does not need the node; a feed
     * handed back as a fetch is copied, not aliased */
    gn_tensor out[1];
    assert_int_equal(gn_session_run(s, fn, &f, 1, ok, out, 1), GN_OK);
    assert_ptr_not_equal(out[0].data, v);
    assert_memory_equal(out[0].data, v, sizeof v);
    gn_tensor_free(&out[0]);
    gn_session_free(s);
    gn_graph_free(g);
}

/* Feeding a tensor that is not a placeholder cuts the graph there: the
 * nodes above it never run (here one has no kernel at all), and 'name:k'
 * feeds and fetches pick the output. */
static void test_feed_cut(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        "node { name: 'w' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
        "node { name: 'front' op: 'MyDecoder' input: 'w' }\n"
        "node { name: 'y0' op: 'Identity' input: 'front' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'y' op: 'Identity' input: 'front:1' attr { key: 'T' value { type: DT_INT32 } } }\n", 1);
    gn_session *s = new_session(g, 0);
    int32_t v[2] = {5, 6};
    int64_t d = 2;
    gn_tensor f = view(DT_INT32, v, sizeof v, 1, &d);
    const char *fn[1] = {"front:1"}, *y[2] = {"y", "front:1"};
    gn_tensor out[2];
    if (gn_session_run(s, fn, &f, 1, y, out, 2) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out[i].dtype, DT_INT32);
        assert_int_equal(out[i].rank, 1);
        assert_int_equal(out[i].dims[0], 2);
        assert_int_equal(((int32_t *)out[i].data)[1], 6);
        assert_ptr_not_equal(out[i].data, v);
        gn_tensor_free(&out[i]);
    }
    /* a feed cuts one output only: y0 still needs front, and so w */
    const char *y0[1] = {"y0"};
    expect_run_error(s, fn, &f, 1, y0, 1, GN_ERR_ARG,
                     "node 'w' (Placeholder): no value fed for this placeholder (string, shape <unknown>)");
    /* without the cut, the front end is needed and cannot run */
    const char *wn[1] = {"w"};
    gn_string str = {"abc", 3};
    gn_tensor ws = view(DT_STRING, &str, sizeof str, 0, NULL);
    expect_run_error(s, wn, &ws, 1, y, 1, GN_ERR_UNSUPPORTED,
                     "node 'front' (MyDecoder): the CPU backend has no kernel for MyDecoder");
    /* a string feed fetched back is deep-copied */
    assert_int_equal(gn_session_run(s, wn, &ws, 1, wn, out, 1), GN_OK);
    assert_int_equal(out[0].dtype, DT_STRING);
    gn_string *o = out[0].data;
    assert_int_equal(o->len, 3);
    assert_ptr_not_equal(o->data, str.data);
    assert_memory_equal(o->data, "abc", 3);
    gn_tensor_free(&out[0]);
    gn_session_free(s);
    gn_graph_free(g);
}

/* ---- fc-layers against a reference from the graph's constants -------------------------------- */
static float *const_values(const gn_graph *g, const char *name, int64_t *n)
{
    gn_id id = gn__graph_find(g, name);
    assert_true(id != GN_NONE);
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "value");
    assert_non_null(v);
    gn__tensor t;
    gn__err e;
    assert_int_equal(gn__tensor_from_proto(v->tensor, &t, &e), GN_OK);
    *n = gn__tensor_numel(&t);
    float *out = malloc((size_t)*n * sizeof *out);
    memcpy(out, t.data, (size_t)*n * sizeof *out);
    gn__tensor_release(&t);
    return out;
}

/* y[b, n] = relu?(x[b, k] W[k, n] + bias[n]) in double */
static double *dense(const double *x, int64_t B, int64_t K, const float *w, const float *bias, int64_t N, int relu)
{
    double *y = calloc((size_t)(B * N), sizeof *y);
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < N; j++) {
            double acc = bias[j];
            for (int64_t k = 0; k < K; k++) acc += x[b * K + k] * (double)w[k * N + j];
            y[b * N + j] = relu && acc < 0 ? 0 : acc;
        }
    return y;
}

static void fill(float *x, int64_t n, uint32_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

static void check_fc(const gn_graph *g, const float *x, int64_t B, const gn_tensor *out)
{
    int64_t n1, n2, n3, nb1, nb2, nb3;
    float *w1 = const_values(g, "dense/kernel", &n1), *b1 = const_values(g, "dense/bias", &nb1);
    float *w2 = const_values(g, "dense_1/kernel", &n2), *b2 = const_values(g, "dense_1/bias", &nb2);
    float *w3 = const_values(g, "pred/kernel", &n3), *b3 = const_values(g, "pred/bias", &nb3);
    assert_int_equal(n1, 784 * 256);
    assert_int_equal(n3, 256 * 10);
    double *xd = malloc((size_t)(B * 784) * sizeof *xd);
    for (int64_t i = 0; i < B * 784; i++) xd[i] = x[i];
    double *h1 = dense(xd, B, 784, w1, b1, 256, 1);
    double *h2 = dense(h1, B, 256, w2, b2, 256, 1);
    double *y = dense(h2, B, 256, w3, b3, 10, 0);
    assert_int_equal(out->dtype, DT_FLOAT);
    assert_int_equal(out->rank, 2);
    assert_int_equal(out->dims[0], B);
    assert_int_equal(out->dims[1], 10);
    double d2 = 0, r2 = 0;
    for (int64_t i = 0; i < B * 10; i++) {
        double d = ((float *)out->data)[i] - y[i];
        d2 += d * d;
        r2 += y[i] * y[i];
    }
    double rel = sqrt(d2 / r2);
    if (!(rel < 1e-5)) fail_msg("fc-layers: relative L2 error %g", rel);
    free(w1), free(b1), free(w2), free(b2), free(w3), free(b3);
    free(xd), free(h1), free(h2), free(y);
}

static void test_fc_layers_and_plan(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb");
    if (!g) skip();
    gn_session *s = new_session(g, 0);
    enum { B = 3 };
    float *x = malloc(B * 784 * sizeof *x);
    fill(x, B * 784, 7);
    int64_t dims[2] = {B, 784};
    gn_tensor f = view(DT_FLOAT, x, B * 784 * sizeof *x, 2, dims);
    const char *fn[1] = {"X"}, *xn[1] = {"output"};
    gn_tensor out1[1], out2[1], out3[1];
    gn__engine_stats st;
    uint32_t n_eng;

    assert_int_equal(gn_session_run(s, fn, &f, 1, xn, out1, 1), GN_OK);
    check_fc(g, x, B, &out1[0]);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(n_eng, 1);
    assert_int_equal(st.runs, 1);
    assert_false(st.planned);          /* the first run records */
    assert_int_equal(st.arena_allocs, 0);
    assert_true(st.dynamic_allocs > 0);
    assert_true(st.nodes_run > 0);

    /* same shapes: the plan places every output but the fetched one */
    assert_int_equal(gn_session_run(s, fn, &f, 1, xn, out2, 1), GN_OK);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(n_eng, 1);
    assert_int_equal(st.runs, 2);
    assert_true(st.planned);
    assert_int_equal(st.plan_misses, 0);
    assert_int_equal(st.dynamic_allocs, 1);   /* the fetched output, handed to the caller */
    assert_true(st.arena_allocs > 0);
    assert_true(st.arena_bytes > 0);
    assert_true(st.arena_bytes < st.planned_bytes);   /* buffers share space by lifetime */
    assert_int_equal(out2[0].nbytes, out1[0].nbytes);
    assert_memory_equal(out1[0].data, out2[0].data, out1[0].nbytes);   /* bit-identical */
    assert_ptr_not_equal(out1[0].data, out2[0].data);

    /* a third run while the first two results are still held */
    assert_int_equal(gn_session_run(s, fn, &f, 1, xn, out3, 1), GN_OK);
    assert_memory_equal(out1[0].data, out3[0].data, out1[0].nbytes);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(st.plan_misses, 0);
    assert_int_equal(st.dynamic_allocs, 1);
    gn_tensor_free(&out2[0]);
    gn_tensor_free(&out3[0]);

    /* another batch size: a second plan, right values */
    int64_t d1[2] = {1, 784};
    gn_tensor f1 = view(DT_FLOAT, x, 784 * sizeof *x, 2, d1);
    assert_int_equal(gn_session_run(s, fn, &f1, 1, xn, out2, 1), GN_OK);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(st.n_plans, 2);
    assert_false(st.planned);
    /* Not bit-identical to row 0 of the batch-3 run: BLAS may take another
     * kernel (a gemv) for one row, which sums in another order. */
    for (int i = 0; i < 10; i++) {
        float a = ((const float *)out2[0].data)[i], b = ((const float *)out1[0].data)[i];
        assert_true(fabsf(a - b) <= 1e-5f * (1.0f + fabsf(b)));
    }
    gn_tensor_free(&out2[0]);
    gn_tensor_free(&out1[0]);

    /* a second fetch set: a second engine; the first one is reused after */
    const char *xn2[2] = {"model/dense/Relu", "output"};
    gn_tensor o2[2];
    assert_int_equal(gn_session_run(s, fn, &f, 1, xn2, o2, 2), GN_OK);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(n_eng, 2);
    assert_int_equal(o2[0].dims[1], 256);
    for (int64_t i = 0; i < B * 256; i++) assert_true(((float *)o2[0].data)[i] >= 0);
    check_fc(g, x, B, &o2[1]);
    gn_tensor_free(&o2[0]);
    gn_tensor_free(&o2[1]);
    assert_int_equal(gn_session_run(s, fn, &f, 1, xn, out1, 1), GN_OK);
    gn__session_stats(s, &st, &n_eng);
    assert_int_equal(n_eng, 2);
    assert_true(st.planned);
    gn_tensor_free(&out1[0]);
    free(x);
    gn_session_free(s);
    gn_graph_free(g);
}

/* A shape that depends on the data: the plan recorded a small Where, a
 * later run with the same input shape needs more; that buffer goes to the
 * heap and the results stay right. */
static void test_plan_data_dependent(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
        "node { name: 'w' op: 'Where' input: 'x' attr { key: 'T' value { type: DT_BOOL } } }\n"
        "node { name: 'c' op: 'Cast' input: 'w' attr { key: 'SrcT' value { type: DT_INT64 } } attr { key: 'DstT' value "
        "{ type: DT_FLOAT } } }\n"
        "node { name: 'y' op: 'AddV2' input: 'c' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n", 1);
    gn_session *s = new_session(g, 0);
    bool x[8] = {0, 1, 0, 0, 0, 0, 1, 0};
    int64_t d = 8;
    gn_tensor f = view(DT_BOOL, x, sizeof x, 1, &d);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_tensor out[1];
    gn__engine_stats st;
    for (int run = 0; run < 4; run++) {
        if (run == 2) memset(x, 1, sizeof x);
        if (gn_session_run(s, fn, &f, 1, xn, out, 1) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
        int64_t n = run < 2 ? 2 : 8;
        assert_int_equal(out[0].dims[0], n);
        assert_int_equal(out[0].dims[1], 1);
        for (int64_t i = 0; i < n; i++) {
            float want = run < 2 ? (i ? 12.0f : 2.0f) : 2.0f * (float)i;
            assert_true(((float *)out[0].data)[i] == want);
        }
        gn_tensor_free(&out[0]);
        gn__session_stats(s, &st, NULL);
        if (run == 1) assert_int_equal(st.plan_misses, 0);
        if (run >= 2) {
            assert_true(st.planned);
            assert_true(st.plan_misses >= 1);   /* Where and Cast outgrew their slots */
        }
    }
    gn_session_free(s);
    gn_graph_free(g);
}

/* DS_CNN_S fed at Mfcc: DecodeWav and AudioSpectrogram upstream are never
 * run (the CPU backend has no kernels for them). */
static void test_ds_cnn_from_mfcc(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb");
    if (!g) skip();
    gn_session *s = new_session(g, 0);
    float m[49 * 10];
    fill(m, 49 * 10, 3);
    for (int i = 0; i < 490; i++) m[i] *= 20;
    int64_t dims[3] = {1, 49, 10};
    gn_tensor f = view(DT_FLOAT, m, sizeof m, 3, dims);
    const char *fn[1] = {"Mfcc"}, *xn[1] = {"labels_softmax"};
    gn_tensor out[1];
    if (gn_session_run(s, fn, &f, 1, xn, out, 1) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    assert_int_equal(out[0].rank, 2);
    assert_int_equal(out[0].dims[1], 12);
    double sum = 0;
    for (int i = 0; i < 12; i++) sum += ((float *)out[0].data)[i];
    assert_float_equal(sum, 1.0, 1e-5);
    gn_tensor_free(&out[0]);
    /* unfed, the front end is needed and cannot run */
    expect_run_error(s, NULL, NULL, 0, xn, 1, GN_ERR_ARG,
                     "node 'wav_data' (Placeholder): no value fed for this placeholder (string, shape [])");
    gn_session_free(s);
    gn_graph_free(g);
}

/* ---- .npy ---------------------------------------------------------------------------------------- */
static void test_npy_roundtrip(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/rt.npy", gn_test_tmpdir());
    const int32_t dts[] = {1, 2, 3, 4, 5, 6, 9, 10, 17, 19, 22, 23};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        int64_t dims[3] = {2, 3, 4};
        gn_tensor t;
        assert_int_equal(gn_tensor_alloc(dts[k], 3, dims, &t), GN_OK);
        for (size_t i = 0; i < t.nbytes; i++) ((uint8_t *)t.data)[i] = dts[k] == DT_BOOL ? (uint8_t)(i & 1) : (uint8_t)(i * 7);
        char err[256];
        assert_int_equal(gn_npy_write(path, &t, err, sizeof err), GN_OK);
        gn_tensor r;
        assert_int_equal(gn_npy_read(path, &r, err, sizeof err), GN_OK);
        assert_int_equal(r.dtype, dts[k]);
        assert_int_equal(r.rank, 3);
        assert_int_equal(r.dims[2], 4);
        assert_int_equal(r.nbytes, t.nbytes);
        assert_memory_equal(r.data, t.data, t.nbytes);
        gn_tensor_free(&r);
        gn_tensor_free(&t);
    }
    /* the exact bytes numpy writes for np.save(f, np.array([1.5, 2], np.float32)) */
    float v[2] = {1.5f, 2.0f};
    int64_t d = 2;
    gn_tensor t = view(DT_FLOAT, v, sizeof v, 1, &d);
    void *data;
    size_t size;
    assert_int_equal(gn_npy_serialize(&t, &data, &size, NULL, 0), GN_OK);
    const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    assert_int_equal(size, 128 + 8);
    assert_memory_equal(data, "\x93NUMPY\x01\x00\x76\x00", 10);
    assert_memory_equal((char *)data + 10, hdr, strlen(hdr));
    assert_int_equal(((char *)data)[127], '\n');
    assert_int_equal(((char *)data)[126], ' ');
    assert_memory_equal((char *)data + 128, v, 8);
    gn_free(data);
    /* scalars, strings */
    int64_t sd = 2;
    gn_string ss[2] = {{"ab", 2}, {"", 0}};
    gn_tensor st = view(DT_STRING, ss, sizeof ss, 1, &sd);
    assert_int_equal(gn_npy_serialize(&st, &data, &size, NULL, 0), GN_OK);
    gn_tensor r;
    assert_int_equal(gn_npy_parse(data, size, "s.npy", &r, NULL, 0), GN_OK);
    assert_int_equal(r.dtype, DT_STRING);
    gn_string *rs = r.data;
    assert_int_equal(rs[0].len, 2);
    assert_memory_equal(rs[0].data, "ab", 2);
    assert_int_equal(rs[1].len, 0);
    gn_tensor_free(&r);
    gn_free(data);
}

static void npy_bad(const char *hdr, size_t datalen, int version, gn_status code, const char *want)
{
    unsigned char buf[1024];
    size_t hl = strlen(hdr), pre = version == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    buf[8] = (unsigned char)hl;
    buf[9] = 0;
    if (version != 1) buf[10] = buf[11] = 0;
    memcpy(buf + pre, hdr, hl);
    memset(buf + pre + hl, 0, datalen);
    gn_tensor t;
    char err[512];
    gn_status s = gn_npy_parse(buf, pre + hl + datalen, "x.npy", &t, err, sizeof err);
    if (s != code || strcmp(err, want) != 0) fail_msg("status %d (want %d)\n  got:  %s\n  want: %s", s, code, err, want);
    if (s == GN_OK) assert_non_null(t.internal);
    else assert_null(t.internal);
    gn_tensor_free(&t);
}

static void test_npy_errors(void **state)
{
    (void)state;
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24, 1, GN_OK, "");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24, 3, GN_OK, "");
    npy_bad("{\"descr\": \"<i8\", \"shape\": (), \"fortran_order\": False}", 8, 2, GN_OK, "");
    npy_bad("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, 1, GN_ERR_UNSUPPORTED,
            "x.npy: header: fortran_order True is not supported (C order only)");
    npy_bad("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, 1, GN_ERR_UNSUPPORTED,
            "x.npy: big-endian data ('>f4') is not supported (save with dtype '<f4')");
    npy_bad("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, 1, GN_ERR_UNSUPPORTED,
            "x.npy: dtype '<c8' is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64, bool, bytes)");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20, 1, GN_ERR_PARSE,
            "x.npy: data is 20 bytes, but shape and dtype '<f4' need 24");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 54: 'shape' must hold non-negative integers");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 50: 'shape' must be a tuple such as (2, 3)");
    npy_bad("{'descr': '<f4', 'fortran_order': False }", 0, 1, GN_ERR_PARSE, "x.npy: header: missing key 'shape'");
    npy_bad("{'descr' '<f4'}", 0, 1, GN_ERR_PARSE, "x.npy: header: at offset 9: expected ':'");
    npy_bad("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 34: 'fortran_order' must be True or False");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 56: unknown key 'x'");
    npy_bad("{'descr': '<f4", 0, 1, GN_ERR_PARSE, "x.npy: header: at offset 10: unterminated string");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 0, 1, GN_ERR_UNSUPPORTED,
            "x.npy: header: at offset 67: 'shape' has more than 8 dimensions");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } extra", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 57: unexpected text after '}'");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,) }", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 51: a dimension in 'shape' is too large");
    npy_bad("{'descr': 3, 'fortran_order': False, 'shape': (2,) }", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 10: 'descr' must be a string such as '<f4'");
    npy_bad("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'descr': '<f4\\q'}", 0, 1, GN_ERR_PARSE,
            "x.npy: header: at offset 69: bad escape '\\q' in a string");
    /* Python's literal: escapes, comments, a Python 2 long, the key given twice (the last wins) */
    npy_bad("{'descr': '\\x3cf8', # comment\n 'fortran_order': False, 'shape': (1L, 2,), 'descr': \"<f4\"}", 8, 1,
            GN_OK, "");
    gn_tensor t;
    char err[256];
    assert_int_equal(gn_npy_parse("hello world!", 12, "y.npy", &t, err, sizeof err), GN_ERR_PARSE);
    assert_string_equal(err, "y.npy: not a .npy file (no \\x93NUMPY magic)");
    assert_int_equal(gn_npy_parse("\x93NUMPY\x01\x00\x50\x00{", 11, "z.npy", &t, err, sizeof err), GN_ERR_PARSE);
    assert_string_equal(err, "z.npy: header is truncated (80 bytes announced, 1 present)");
    assert_int_equal(gn_npy_parse("\x93NUMPY\x04\x00\x50\x00{", 11, "z.npy", &t, err, sizeof err), GN_ERR_UNSUPPORTED);
    assert_string_equal(err, "z.npy: .npy format version 4.0 is not supported (1.0, 2.0, 3.0 are)");
    assert_int_equal(gn_npy_read("/nonexistent/q.npy", &t, err, sizeof err), GN_ERR_IO);
    assert_non_null(strstr(err, "/nonexistent/q.npy"));
}

/* ---- compare --------------------------------------------------------------------------------------- */
static void test_compare(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4.00001f}, z[4] = {0, 0, 0, 0};
    int64_t d = 4, d2[2] = {2, 2};
    gn_tensor ta = view(DT_FLOAT, a, 16, 1, &d), tb = view(DT_FLOAT, b, 16, 1, &d), tz = view(DT_FLOAT, z, 16, 1, &d);
    gn_compare_result r;
    assert_int_equal(gn_tensor_compare(&ta, &ta, 0, &r), GN_OK);
    assert_int_equal(r.match, 1);
    assert_true(r.max_abs_err == 0 && r.rel_l2_err == 0);
    assert_true(r.tol == 1e-5);
    assert_int_equal(gn_tensor_compare(&tb, &ta, 0, &r), GN_OK);
    assert_int_equal(r.match, 1);
    assert_float_equal(r.max_abs_err, 4.00001f - 4.0, 1e-12);
    assert_float_equal(r.rel_l2_err, (4.00001f - 4.0) / sqrt(30.0), 1e-12);
    assert_int_equal(gn_tensor_compare(&tb, &ta, 1e-7, &r), GN_OK);
    assert_int_equal(r.match, 0);
    assert_string_equal(r.why, "relative L2 error 1.83e-06 is over the tolerance 1e-07");
    /* against an all-zero reference: absolute */
    assert_int_equal(gn_tensor_compare(&ta, &tz, 0, &r), GN_OK);
    assert_int_equal(r.match, 0);
    assert_float_equal(r.rel_l2_err, sqrt(30.0), 1e-12);
    assert_string_equal(r.why, "relative L2 error 5.48 is over the tolerance 1e-05 (absolute: the reference is all zeros)");
    assert_int_equal(gn_tensor_compare(&tz, &tz, 0, &r), GN_OK);
    assert_int_equal(r.match, 1);
    /* NaNs */
    float n1[2] = {NAN, 1}, n2[2] = {NAN, 1}, n3[2] = {1, NAN};
    int64_t two = 2;
    gn_tensor t1 = view(DT_FLOAT, n1, 8, 1, &two), t2 = view(DT_FLOAT, n2, 8, 1, &two), t3 = view(DT_FLOAT, n3, 8, 1, &two);
    gn_tensor_compare(&t1, &t2, 0, &r);
    assert_int_equal(r.match, 1);
    gn_tensor_compare(&t1, &t3, 0, &r);
    assert_int_equal(r.match, 0);
    assert_int_equal(r.n_nan_mismatch, 2);
    assert_string_equal(r.why, "NaN in different places (2 elements)");
    /* shapes, dtypes */
    gn_tensor t22 = view(DT_FLOAT, a, 16, 2, d2);
    gn_tensor_compare(&t22, &ta, 0, &r);
    assert_int_equal(r.match, 0);
    assert_string_equal(r.why, "shape [2,2] vs [4]");
    int32_t i1[4] = {1, 2, 3, 4}, i2[4] = {1, 2, 3, 5};
    gn_tensor ti1 = view(DT_INT32, i1, 16, 1, &d), ti2 = view(DT_INT32, i2, 16, 1, &d);
    gn_tensor_compare(&ti1, &ta, 0, &r);
    assert_string_equal(r.why, "dtype int32 vs float32");
    gn_tensor_compare(&ti2, &ti1, 1.0, &r);   /* integers: exact, whatever the tolerance */
    assert_int_equal(r.match, 0);
    assert_int_equal(r.n_diff, 1);
    assert_float_equal(r.max_abs_err, 1, 0);
    assert_string_equal(r.why, "1 of 4 elements differ (int32 must match exactly)");
    gn_tensor_compare(&ti1, &ti1, 0, &r);
    assert_int_equal(r.match, 1);
    /* float16 default tolerance */
    gn__f16 h1[2] = {1, 2}, h2[2] = {1, 2.001f};
    gn_tensor th1 = view(DT_HALF, h1, 4, 1, &two), th2 = view(DT_HALF, h2, 4, 1, &two);
    gn_tensor_compare(&th2, &th1, 0, &r);
    assert_true(r.tol == 1e-2);
    assert_int_equal(r.match, 1);
    assert_true(gn_compare_default_tol(DT_INT64) == 0);
    assert_int_equal(gn_tensor_compare(NULL, &ta, 0, &r), GN_ERR_ARG);
}

static void test_tensor_helpers(void **state)
{
    (void)state;
    int64_t dims[2] = {2, 3};
    gn_tensor t;
    assert_int_equal(gn_tensor_alloc(DT_INT64, 2, dims, &t), GN_OK);
    assert_int_equal(gn_tensor_numel(&t), 6);
    assert_int_equal(t.nbytes, 48);
    for (int i = 0; i < 6; i++) assert_int_equal(((int64_t *)t.data)[i], 0);
    gn_tensor_free(&t);
    assert_null(t.internal);
    gn_tensor_free(NULL);
    float x = 1;
    gn_tensor c = view(DT_FLOAT, &x, 4, 0, NULL);
    gn_tensor_free(&c);   /* a caller's tensor: untouched */
    assert_ptr_equal(c.data, &x);
    assert_int_equal(gn_tensor_alloc(DT_STRING, 0, NULL, &t), GN_ERR_ARG);
    int64_t neg = -1;
    assert_int_equal(gn_tensor_alloc(DT_FLOAT, 1, &neg, &t), GN_ERR_ARG);
    assert_int_equal(gn_dtype_size(DT_HALF), 2);
    assert_int_equal(gn_dtype_size(DT_STRING), 0);
    assert_string_equal(gn_dtype_numpy_name(DT_HALF), "float16");
    assert_string_equal(gn_dtype_numpy_name(DT_BOOL), "bool");
    assert_string_equal(gn_dtype_numpy_name(DT_STRING), "string");
}

static void test_control_table_sorted(void **state)
{
    (void)state;
    assert_non_null(gn__kernel_for("Switch"));
    assert_non_null(gn__kernel_for("TensorListSetItem"));
    assert_non_null(gn__kernel_for("ParseExampleV2"));
    assert_null(gn__kernel_for("DecodeJpeg"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addition),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_backend_names),
        cmocka_unit_test(test_unsupported_before_running),
        cmocka_unit_test(test_feed_cut),
        cmocka_unit_test(test_fc_layers_and_plan),
        cmocka_unit_test(test_plan_data_dependent),
        cmocka_unit_test(test_ds_cnn_from_mfcc),
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test(test_npy_errors),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_tensor_helpers),
        cmocka_unit_test(test_control_table_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
