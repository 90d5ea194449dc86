/* The CUDA backend (src/runtime/cuda/) against the CPU backend: per op on
 * random inputs (float32: relative L2 below 1e-5, no TF32; float16: below
 * 1e-2), the golden models (tests/data/golden/manifest.txt) on both, and
 * the golden models converted to engine ops for the CUDA backend (outputs
 * and engine-cache counters against the CPU backend's).
 * Without a GPU (or when built without CUDA) every GPU test prints why and
 * skips; test_no_device checks that asking for "cuda" then fails with a
 * clear message while "cpu" still works. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "passtest.h"
#include "runtime/session.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_HALF 19

/* ---- is there a GPU? -------------------------------------------------------------------- */
static char g_why[512];   /* why "cuda" cannot open; "" when it can */
static int g_probed;

static const char *cuda_missing(void)
{
    if (g_probed) return g_why[0] ? g_why : NULL;
    g_probed = 1;
    gn_graph *g = gn_test_load_text("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                            "'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }\n", 1);
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = "cuda";
    gn_session *s = NULL;
    if (gn_session_new(g, &o, &s) != GN_OK) snprintf(g_why, sizeof g_why, "%s", gn_session_errmsg(s));
    gn_session_free(s);
    gn_graph_free(g);
    return g_why[0] ? g_why : NULL;
}

/* GN_CUDA_TEST_CPU_ONLY=1 (no GPU): runs the CPU half of each comparison, to check the test graphs themselves. */
static bool cpu_only(void)
{
    const char *v = getenv("GN_CUDA_TEST_CPU_ONLY");
    return v && *v == '1' && cuda_missing();
}

#define NEED_GPU()                                                                                                    \
    do {                                                                                                              \
        const char *why_ = cuda_missing();                                                                            \
        if (why_ && !cpu_only()) {                                                                                    \
            print_message("skipped: %s\n", why_);                                                                     \
            skip();                                                                                                   \
        }                                                                                                             \
    } while (0)

/* ---- graphs as text ----------------------------------------------------------------------- */
typedef struct tbuf {
    char s[32768];
    size_t n;
} tbuf;

static void add(tbuf *b, const char *fmt, ...) GN__PRINTF(2, 3);
static void add(tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < sizeof b->s - b->n);
    b->n += (size_t)k;
}

static const char *tname(int dt)
{
    return dt == DT_HALF ? "DT_HALF" : "DT_FLOAT";
}

static void ph(tbuf *b, const char *name, int dt)
{
    add(b, "node { name: '%s' op: 'Placeholder' attr { key: 'dtype' value { type: %s } } }\n", name, tname(dt));
}

/* an int32 Const with n values (rank 1, or a scalar when scalar) */
static void cint(tbuf *b, const char *name, bool scalar, int n, const int *v)
{
    add(b, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { ",
        name);
    if (!scalar) add(b, "dim { size: %d } ", n);
    add(b, "}");
    for (int i = 0; i < n; i++) add(b, " int_val: %d", v[i]);
    add(b, " } } } }\n");
}

/* paddings-style int32 Const of shape [r, 2] */
static void cint2(tbuf *b, const char *name, int r, const int *v)
{
    add(b, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
           "tensor { dtype: DT_INT32 tensor_shape { dim { size: %d } dim { size: 2 } }",
        name, r);
    for (int i = 0; i < 2 * r; i++) add(b, " int_val: %d", v[i]);
    add(b, " } } } }\n");
}

/* ---- running on both backends --------------------------------------------------------------- */
typedef struct tin {
    const char *name;
    int32_t rank;
    int64_t dims[6];
    int dtype;                  /* 0: the test's dtype */
    bool positive;              /* values in (0.1, 2) instead of (-2, 2) */
} tin;

static uint64_t g_rng = 88172645463325252ull;

static float urand(void) { return (float)((gn_pt_xorshift(&g_rng) >> 11) * (1.0 / 9007199254740992.0)); }

static gn_status run_on(const char *backend, const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf,
                        const char *fetch, gn_tensor *out, char *msg, size_t msg_len)
{
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = backend;
    gn_session *s = NULL;
    gn_status st = gn_session_new(g, &o, &s);
    const char *xn[1] = {fetch};
    if (st == GN_OK) st = gn_session_run(s, fn, ft, nf, xn, out, 1);
    if (st != GN_OK) snprintf(msg, msg_len, "%s", gn_session_errmsg(s));
    /* a second run reuses the plan: the same result */
    if (st == GN_OK) {
        gn_tensor again;
        st = gn_session_run(s, fn, ft, nf, xn, &again, 1);
        if (st != GN_OK) snprintf(msg, msg_len, "second run: %s", gn_session_errmsg(s));
        else if (again.nbytes != out->nbytes || memcmp(again.data, out->data, out->nbytes)) {
            snprintf(msg, msg_len, "second run: different result");
            st = GN_ERR_INTERNAL;
        }
        gn_tensor_free(&again);
    }
    gn_session_free(s);
    return st;
}

/* Runs graph text on the CPU and CUDA backends with random inputs; the results must agree. */
static void compare_graph(const char *what, const char *text, int dt, const tin *ins, size_t n_in, const char *fetch)
{
    gn_graph *g = gn_test_load_text(text, 1);
    gn_tensor feeds[8];
    const char *fn[8];
    void *mem[8];
    assert_true(n_in <= 8);
    for (size_t i = 0; i < n_in; i++) {
        int t = ins[i].dtype ? ins[i].dtype : dt;
        int64_t n = 1;
        for (int32_t d = 0; d < ins[i].rank; d++) n *= ins[i].dims[d];
        size_t es = t == DT_HALF ? 2 : 4;
        mem[i] = malloc((size_t)n * es + 1);
        assert_non_null(mem[i]);
        for (int64_t k = 0; k < n; k++) {
            float v = ins[i].positive ? 0.1f + 1.9f * urand() : 4.0f * urand() - 2.0f;
            if (t == DT_HALF) ((_Float16 *)mem[i])[k] = (_Float16)v;
            else ((float *)mem[i])[k] = v;
        }
        memset(&feeds[i], 0, sizeof feeds[i]);
        feeds[i].dtype = t;
        feeds[i].rank = ins[i].rank;
        memcpy(feeds[i].dims, ins[i].dims, sizeof(int64_t) * (size_t)ins[i].rank);
        feeds[i].data = mem[i];
        feeds[i].nbytes = (size_t)n * es;
        fn[i] = ins[i].name;
    }
    gn_tensor ref, got;
    char msg[1024];
    if (run_on("cpu", g, fn, feeds, n_in, fetch, &ref, msg, sizeof msg) != GN_OK) fail_msg("%s: cpu: %s", what, msg);
    if (cpu_only()) {
        gn_tensor_free(&ref);
        for (size_t i = 0; i < n_in; i++) free(mem[i]);
        gn_graph_free(g);
        return;
    }
    if (run_on("cuda", g, fn, feeds, n_in, fetch, &got, msg, sizeof msg) != GN_OK) fail_msg("%s: cuda: %s", what, msg);
    double tol = ref.dtype == DT_HALF ? 1e-2 : 1e-5;
    gn_compare_result r;
    assert_int_equal(gn_tensor_compare(&got, &ref, tol, &r), GN_OK);
    if (!r.match) fail_msg("%s: cuda vs cpu: %s (rel L2 %g, max abs %g)", what, r.why, r.rel_l2_err, r.max_abs_err);
    gn_tensor_free(&ref);
    gn_tensor_free(&got);
    for (size_t i = 0; i < n_in; i++) free(mem[i]);
    gn_graph_free(g);
}

static const int k_dts[2] = {DT_FLOAT, DT_HALF};

/* ---- tests -------------------------------------------------------------------------------- */
static void test_no_device(void **state)
{
    (void)state;
    const char *why = cuda_missing();
    if (!why) {
        print_message("skipped: a CUDA device is present (this test checks the answer without one)\n");
        skip();
    }
#ifdef GN_HAVE_CUDA
    assert_int_equal(strncmp(why, "no CUDA device: cudaGetDeviceCount", 34), 0);
#else
    assert_string_equal(why, "the CUDA backend is not built in");
#endif
    tbuf b = {.n = 0};
    ph(&b, "x", DT_FLOAT);
    add(&b, "node { name: 'y' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_graph *g = gn_test_load_text(b.s, 1);
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = "cuda";
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, &o, &s), GN_ERR_UNSUPPORTED);
    assert_string_equal(gn_session_errmsg(s), why);
    gn_session_free(s);
    /* the CPU backend keeps working */
    float v[3] = {-1, 0, 2};
    gn_tensor f = {.dtype = DT_FLOAT, .rank = 1, .dims = {3}, .data = v, .nbytes = sizeof v}, out;
    char msg[512];
    const char *fn[1] = {"x"};
    assert_int_equal(run_on("cpu", g, fn, &f, 1, "y", &out, msg, sizeof msg), GN_OK);
    assert_true(((float *)out.data)[0] == 0 && ((float *)out.data)[2] == 2);
    gn_tensor_free(&out);
    gn_graph_free(g);
}

static void test_unsupported_node(void **state)
{
    (void)state;
    NEED_GPU();
    if (cpu_only()) skip();
    tbuf b = {.n = 0};
    ph(&b, "x", DT_FLOAT);
    add(&b, "node { name: 'y' op: 'Cumsum' input: 'x' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    int a = 0;
    cint(&b, "a", true, 1, &a);
    gn_graph *g = gn_test_load_text(b.s, 1);
    float v[3] = {1, 2, 3};
    gn_tensor f = {.dtype = DT_FLOAT, .rank = 1, .dims = {3}, .data = v, .nbytes = sizeof v}, out;
    char msg[512];
    const char *fn[1] = {"x"};
    assert_int_equal(run_on("cuda", g, fn, &f, 1, "y", &out, msg, sizeof msg), GN_ERR_UNSUPPORTED);
    assert_string_equal(msg, "node 'y' (Cumsum): not supported on the CUDA backend: op Cumsum has no CUDA kernel yet");
    gn_graph_free(g);
}

static void test_unary(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *ops[] = {"Relu", "Relu6", "Elu", "Sigmoid", "Tanh", "Exp", "Log", "Neg",
                                "Sqrt", "Rsqrt", "Square", "Abs", "Identity", "Erf", "Erfc", "Softplus",
                                "Reciprocal", "Floor", "LeakyRelu"};
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++) {
            tbuf b = {.n = 0};
            ph(&b, "x", k_dts[t]);
            add(&b, "node { name: 'y' op: '%s' input: 'x' attr { key: 'T' value { type: %s } } }\n", ops[i],
                tname(k_dts[t]));
            bool pos = !strcmp(ops[i], "Log") || !strcmp(ops[i], "Sqrt") || !strcmp(ops[i], "Rsqrt") ||
                       !strcmp(ops[i], "Reciprocal");
            tin in = {"x", 3, {3, 5, 70}, 0, pos};
            char what[64];
            snprintf(what, sizeof what, "%s %s", ops[i], tname(k_dts[t]));
            compare_graph(what, b.s, k_dts[t], &in, 1, "y");
        }
}

static void test_cast(void **state)
{
    (void)state;
    NEED_GPU();
    for (int t = 0; t < 2; t++) {
        int src = k_dts[t], dst = k_dts[1 - t];
        tbuf b = {.n = 0};
        ph(&b, "x", src);
        add(&b, "node { name: 'y' op: 'Cast' input: 'x' attr { key: 'SrcT' value { type: %s } } attr { key: 'DstT' "
                "value { type: %s } } }\n",
            tname(src), tname(dst));
        tin in = {"x", 2, {17, 33}, src, false};
        compare_graph("Cast", b.s, src, &in, 1, "y");
    }
}

static void test_binary(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *ops[] = {"AddV2", "Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "Pow"};
    static const struct {
        int32_t ra;
        int64_t a[4];
        int32_t rb;
        int64_t b[4];
    } shapes[] = {
        {3, {2, 3, 40}, 3, {2, 3, 40}},   /* same shape */
        {3, {2, 3, 40}, 2, {3, 1}},       /* broadcast both ways */
        {1, {7}, 4, {2, 1, 3, 7}},
        {2, {4, 5}, 0, {0}},              /* scalar */
    };
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
            for (size_t k = 0; k < GN__ARRAY_LEN(shapes); k++) {
                tbuf b = {.n = 0};
                ph(&b, "a", k_dts[t]);
                ph(&b, "b", k_dts[t]);
                add(&b, "node { name: 'y' op: '%s' input: 'a' input: 'b' attr { key: 'T' value { type: %s } } }\n",
                    ops[i], tname(k_dts[t]));
                bool div = !strcmp(ops[i], "RealDiv"), pw = !strcmp(ops[i], "Pow");
                tin in[2] = {{"a", shapes[k].ra, {0}, 0, pw}, {"b", shapes[k].rb, {0}, 0, div}};
                memcpy(in[0].dims, shapes[k].a, sizeof shapes[k].a);
                memcpy(in[1].dims, shapes[k].b, sizeof shapes[k].b);
                char what[96];
                snprintf(what, sizeof what, "%s %s shapes %zu", ops[i], tname(k_dts[t]), k);
                compare_graph(what, b.s, k_dts[t], in, 2, "y");
            }
}

static void test_bias_add(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++)
        for (int nchw = 0; nchw < 2; nchw++) {
            tbuf b = {.n = 0};
            ph(&b, "x", k_dts[t]);
            ph(&b, "b", k_dts[t]);
            add(&b, "node { name: 'y' op: 'BiasAdd' input: 'x' input: 'b' attr { key: 'T' value { type: %s } } "
                    "attr { key: 'data_format' value { s: '%s' } } }\n",
                tname(k_dts[t]), nchw ? "NCHW" : "NHWC");
            tin in[2] = {{"x", 4, {2, 6, 5, 7}, 0, false}, {"b", 1, {nchw ? 6 : 7}, 0, false}};
            compare_graph(nchw ? "BiasAdd NCHW" : "BiasAdd NHWC", b.s, k_dts[t], in, 2, "y");
        }
}

static void test_matmul(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                tbuf b = {.n = 0};
                ph(&b, "a", k_dts[t]);
                ph(&b, "b", k_dts[t]);
                add(&b, "node { name: 'y' op: 'MatMul' input: 'a' input: 'b' attr { key: 'T' value { type: %s } } "
                        "attr { key: 'transpose_a' value { b: %s } } attr { key: 'transpose_b' value { b: %s } } }\n",
                    tname(k_dts[t]), ta ? "true" : "false", tb ? "true" : "false");
                int64_t m = 37, k = 64, n = 29;
                tin in[2] = {{"a", 2, {ta ? k : m, ta ? m : k}, 0, false}, {"b", 2, {tb ? n : k, tb ? k : n}, 0, false}};
                char what[64];
                snprintf(what, sizeof what, "MatMul %s ta=%d tb=%d", tname(k_dts[t]), ta, tb);
                compare_graph(what, b.s, k_dts[t], in, 2, "y");
            }
}

static void test_batch_matmul(void **state)
{
    (void)state;
    NEED_GPU();
    static const struct {
        int32_t ra;
        int64_t a[4];
        int32_t rb;
        int64_t b[4];
        int adj_x, adj_y;
    } cases[] = {
        {3, {4, 5, 6}, 3, {4, 6, 7}, 0, 0},
        {4, {2, 3, 6, 5}, 4, {2, 3, 7, 6}, 1, 1},
        {3, {4, 5, 6}, 2, {6, 7}, 0, 0},        /* y broadcast over the batch */
        {2, {5, 6}, 3, {3, 6, 7}, 0, 0},        /* x broadcast */
    };
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < GN__ARRAY_LEN(cases); i++) {
            tbuf b = {.n = 0};
            ph(&b, "a", k_dts[t]);
            ph(&b, "b", k_dts[t]);
            add(&b, "node { name: 'y' op: 'BatchMatMulV2' input: 'a' input: 'b' attr { key: 'T' value { type: %s } } "
                    "attr { key: 'adj_x' value { b: %s } } attr { key: 'adj_y' value { b: %s } } }\n",
                tname(k_dts[t]), cases[i].adj_x ? "true" : "false", cases[i].adj_y ? "true" : "false");
            tin in[2] = {{"a", cases[i].ra, {0}, 0, false}, {"b", cases[i].rb, {0}, 0, false}};
            memcpy(in[0].dims, cases[i].a, sizeof cases[i].a);
            memcpy(in[1].dims, cases[i].b, sizeof cases[i].b);
            char what[64];
            snprintf(what, sizeof what, "BatchMatMulV2 %s case %zu", tname(k_dts[t]), i);
            compare_graph(what, b.s, k_dts[t], in, 2, "y");
        }
}

static void test_fused_matmul(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *acts[] = {NULL, "Relu", "Relu6", "Tanh", "Sigmoid", "GeluExact", "GeluApproximate"};
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < GN__ARRAY_LEN(acts); i++) {
            tbuf b = {.n = 0};
            ph(&b, "a", k_dts[t]);
            ph(&b, "w", k_dts[t]);
            ph(&b, "bias", k_dts[t]);
            add(&b, "node { name: 'y' op: '_FusedMatMul' input: 'a' input: 'w' input: 'bias' attr { key: 'T' value { "
                    "type: %s } } attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' value { list { s: "
                    "'BiasAdd'",
                tname(k_dts[t]));
            if (acts[i]) add(&b, " s: '%s'", acts[i]);
            add(&b, " } } } }\n");
            tin in[3] = {{"a", 2, {8, 48}, 0, false}, {"w", 2, {48, 24}, 0, false}, {"bias", 1, {24}, 0, false}};
            char what[64];
            snprintf(what, sizeof what, "_FusedMatMul %s %s", tname(k_dts[t]), acts[i] ? acts[i] : "bias");
            compare_graph(what, b.s, k_dts[t], in, 3, "y");
        }
}

/* _FusedMatMul with transpose_a / transpose_b (the layouts cuBLASLt gets
 * for its bias epilogues), bias alone, + Relu, + GeluApproximate, and a
 * bias + Add (side input) that stays on cuBLAS and our epilogue kernel. */
static void test_fused_matmul_transposed(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *fused[] = {"s: 'BiasAdd'", "s: 'BiasAdd' s: 'Relu'", "s: 'BiasAdd' s: 'GeluApproximate'",
                                  "s: 'BiasAdd' s: 'Add'"};
    for (size_t t = 0; t < 2; t++)
        for (int tr = 0; tr < 4; tr++)
            for (size_t f = 0; f < GN__ARRAY_LEN(fused); f++) {
                bool ta = tr & 1, tb = tr & 2, side = f == 3;
                tbuf b = {.n = 0};
                ph(&b, "a", k_dts[t]);
                ph(&b, "w", k_dts[t]);
                ph(&b, "bias", k_dts[t]);
                if (side) ph(&b, "side", k_dts[t]);
                add(&b, "node { name: 'y' op: '_FusedMatMul' input: 'a' input: 'w' input: 'bias' %s attr { key: 'T' "
                        "value { type: %s } } attr { key: 'num_args' value { i: %d } } attr { key: 'transpose_a' value "
                        "{ b: %s } } attr { key: 'transpose_b' value { b: %s } } attr { key: 'fused_ops' value { list "
                        "{ %s } } } }\n",
                    side ? "input: 'side'" : "", tname(k_dts[t]), side ? 2 : 1, ta ? "true" : "false",
                    tb ? "true" : "false", fused[f]);
                tin in[4] = {{"a", 2, {0}, 0, false}, {"w", 2, {0}, 0, false}, {"bias", 1, {24}, 0, false},
                             {"side", 2, {9, 24}, 0, false}};
                in[0].dims[0] = ta ? 40 : 9, in[0].dims[1] = ta ? 9 : 40;
                in[1].dims[0] = tb ? 24 : 40, in[1].dims[1] = tb ? 40 : 24;
                char what[96];
                snprintf(what, sizeof what, "_FusedMatMul %s ta %d tb %d [%s]", tname(k_dts[t]), ta, tb, fused[f]);
                compare_graph(what, b.s, k_dts[t], in, side ? 4 : 3, "y");
            }
}

/* Conv2D / DepthwiseConv2dNative / _FusedConv2D over formats, paddings, strides, dilations. */
static void test_conv(void **state)
{
    (void)state;
    NEED_GPU();
    static const struct {
        const char *op;
        const char *pad;
        int s, d;
    } cases[] = {
        {"Conv2D", "SAME", 1, 1}, {"Conv2D", "SAME", 2, 1}, {"Conv2D", "VALID", 2, 1}, {"Conv2D", "VALID", 1, 2},
        {"Conv2D", "EXPLICIT", 1, 1}, {"DepthwiseConv2dNative", "SAME", 1, 1},
        {"DepthwiseConv2dNative", "VALID", 2, 1}, {"_FusedConv2D", "SAME", 2, 1},
    };
    for (size_t t = 0; t < 2; t++)
        for (int nchw = 0; nchw < 2; nchw++)
            for (size_t i = 0; i < GN__ARRAY_LEN(cases); i++) {
                bool dw = strstr(cases[i].op, "Depthwise") != NULL, fused = cases[i].op[0] == '_';
                tbuf b = {.n = 0};
                ph(&b, "x", k_dts[t]);
                ph(&b, "w", k_dts[t]);
                if (fused) ph(&b, "bias", k_dts[t]);
                int s = cases[i].s, d = cases[i].d;
                add(&b, "node { name: 'y' op: '%s' input: 'x' input: 'w'%s attr { key: 'T' value { type: %s } } "
                        "attr { key: 'padding' value { s: '%s' } } attr { key: 'data_format' value { s: '%s' } } ",
                    cases[i].op, fused ? " input: 'bias'" : "", tname(k_dts[t]), cases[i].pad, nchw ? "NCHW" : "NHWC");
                if (nchw)
                    add(&b, "attr { key: 'strides' value { list { i: 1 i: 1 i: %d i: %d } } } attr { key: 'dilations' "
                            "value { list { i: 1 i: 1 i: %d i: %d } } } ", s, s, d, d);
                else
                    add(&b, "attr { key: 'strides' value { list { i: 1 i: %d i: %d i: 1 } } } attr { key: 'dilations' "
                            "value { list { i: 1 i: %d i: %d i: 1 } } } ", s, s, d, d);
                if (!strcmp(cases[i].pad, "EXPLICIT"))
                    add(&b, "attr { key: 'explicit_paddings' value { list { %s } } } ",
                        nchw ? "i: 0 i: 0 i: 0 i: 0 i: 1 i: 2 i: 0 i: 1" : "i: 0 i: 0 i: 1 i: 2 i: 0 i: 1 i: 0 i: 0");
                if (fused)
                    add(&b, "attr { key: 'num_args' value { i: 1 } } attr { key: 'fused_ops' value { list { s: 'BiasAdd' "
                            "s: 'Relu' } } } attr { key: 'TArgs' value { list { type: %s } } } ", tname(k_dts[t]));
                add(&b, "}\n");
                int64_t c = 6, co = dw ? 12 : 8;
                tin in[3] = {{"x", 4, {2, 0, 0, 0}, 0, false}, {"w", 4, {3, 3, c, dw ? 2 : co}, 0, false},
                             {"bias", 1, {co}, 0, false}};
                if (nchw) {
                    in[0].dims[1] = c;
                    in[0].dims[2] = 11;
                    in[0].dims[3] = 10;
                } else {
                    in[0].dims[1] = 11;
                    in[0].dims[2] = 10;
                    in[0].dims[3] = c;
                }
                char what[96];
                snprintf(what, sizeof what, "%s %s %s %s s=%d d=%d", cases[i].op, tname(k_dts[t]),
                         nchw ? "NCHW" : "NHWC", cases[i].pad, s, d);
                compare_graph(what, b.s, k_dts[t], in, fused ? 3 : 2, "y");
            }
}

/* Einsum of two operands as a batched GEMM: Keras' attention equations
 * (batch, free and contracted labels in every order) and a Dense over a
 * sequence. */
static void test_einsum(void **state)
{
    (void)state;
    NEED_GPU();
    static const struct {
        const char *eq;
        int32_t ra;
        int64_t a[4];
        int32_t rb;
        int64_t b[4];
    } cases[] = {
        {"BTNH,BSNH->BNTS", 4, {2, 5, 3, 8}, 4, {2, 7, 3, 8}},
        {"BNTS,BSNH->BTNH", 4, {2, 3, 5, 7}, 4, {2, 7, 3, 8}},
        {"abc,cd->abd", 3, {2, 5, 16}, 2, {16, 6}},
        {"ij,jk->ik", 2, {9, 12}, 2, {12, 4}},
    };
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < GN__ARRAY_LEN(cases); i++) {
            tbuf b = {.n = 0};
            ph(&b, "a", k_dts[t]);
            ph(&b, "b", k_dts[t]);
            add(&b, "node { name: 'y' op: 'Einsum' input: 'a' input: 'b' attr { key: 'T' value { type: %s } } attr { key: "
                    "'N' value { i: 2 } } attr { key: 'equation' value { s: '%s' } } }\n", tname(k_dts[t]), cases[i].eq);
            tin in[2] = {{"a", cases[i].ra, {0}, 0, false}, {"b", cases[i].rb, {0}, 0, false}};
            memcpy(in[0].dims, cases[i].a, sizeof cases[i].a);
            memcpy(in[1].dims, cases[i].b, sizeof cases[i].b);
            char what[64];
            snprintf(what, sizeof what, "Einsum %s %s", cases[i].eq, tname(k_dts[t]));
            compare_graph(what, b.s, k_dts[t], in, 2, "y");
        }
}

/* The other epilogues of _FusedConv2D / _FusedMatMul: [FusedBatchNorm,
 * Relu], [FusedBatchNorm, Add, Relu], [BiasAdd, Add, Relu] (a residual side
 * input), and _FusedMatMul [BiasAdd, Add]. */
static void test_fused_epilogues(void **state)
{
    (void)state;
    NEED_GPU();
    static const struct {
        const char *ops;
        int n_args;
        bool side;
    } cases[] = {
        {"s: 'FusedBatchNorm' s: 'Relu'", 4, false},
        {"s: 'FusedBatchNorm' s: 'Add' s: 'Relu'", 4, true},
        {"s: 'BiasAdd' s: 'Add' s: 'Relu'", 1, true},
        {"s: 'BiasAdd' s: 'AddV2'", 1, true},
    };
    static const char *args[4] = {"a0", "a1", "a2", "a3"};
    for (size_t t = 0; t < 2; t++)
        for (int nchw = 0; nchw < 2; nchw++)
            for (size_t i = 0; i < GN__ARRAY_LEN(cases); i++) {
                const char *T = tname(k_dts[t]);
                tbuf b = {.n = 0};
                ph(&b, "x", k_dts[t]);
                ph(&b, "w", k_dts[t]);
                ph(&b, "side", k_dts[t]);
                for (int k = 0; k < cases[i].n_args; k++) ph(&b, args[k], k_dts[t]);
                add(&b, "node { name: 'y' op: '_FusedConv2D' input: 'x' input: 'w'");
                for (int k = 0; k < cases[i].n_args; k++) add(&b, " input: '%s'", args[k]);
                if (cases[i].side) add(&b, " input: 'side'");
                add(&b, " attr { key: 'T' value { type: %s } } attr { key: 'padding' value { s: 'SAME' } } attr { key: "
                        "'data_format' value { s: '%s' } } attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } "
                        "attr { key: 'num_args' value { i: %d } } attr { key: 'epsilon' value { f: 0.001 } } attr { key: "
                        "'fused_ops' value { list { %s } } } }\n",
                    T, nchw ? "NCHW" : "NHWC", cases[i].n_args + (cases[i].side ? 1 : 0), cases[i].ops);
                b.n -= 2;   /* the closing brace: TArgs, one T per argument */
                add(&b, "attr { key: 'TArgs' value { list {");
                for (int k = 0; k < cases[i].n_args + (cases[i].side ? 1 : 0); k++) add(&b, " type: %s", T);
                add(&b, " } } } }\n");
                tin in[7] = {{"x", 4, {2, 0, 0, 0}, 0, false}, {"w", 4, {3, 3, 5, 8}, 0, false},
                             {"side", 4, {2, 0, 0, 0}, 0, false}, {"a0", 1, {8}, 0, false}, {"a1", 1, {8}, 0, false},
                             {"a2", 1, {8}, 0, false}, {"a3", 1, {8}, 0, true}};
                int64_t sp[2][4] = {{2, 9, 7, 5}, {2, 5, 9, 7}}, so[2][4] = {{2, 9, 7, 8}, {2, 8, 9, 7}};
                memcpy(in[0].dims, sp[nchw], sizeof sp[nchw]);
                memcpy(in[2].dims, so[nchw], sizeof so[nchw]);
                char what[128];
                snprintf(what, sizeof what, "_FusedConv2D [%s] %s %s", cases[i].ops, T, nchw ? "NCHW" : "NHWC");
                compare_graph(what, b.s, k_dts[t], in, 3 + (size_t)cases[i].n_args, "y");
                if (nchw || cases[i].n_args != 1) continue;
                /* the same epilogue on a matrix product */
                tbuf m = {.n = 0};
                ph(&m, "x", k_dts[t]);
                ph(&m, "w", k_dts[t]);
                ph(&m, "side", k_dts[t]);
                ph(&m, "a0", k_dts[t]);
                add(&m, "node { name: 'y' op: '_FusedMatMul' input: 'x' input: 'w' input: 'a0' input: 'side' attr { key: "
                        "'T' value { type: %s } } attr { key: 'num_args' value { i: 2 } } attr { key: 'fused_ops' value { "
                        "list { %s } } } }\n", T, cases[i].ops);
                tin mi[4] = {{"x", 2, {6, 32}, 0, false}, {"w", 2, {32, 8}, 0, false}, {"side", 2, {6, 8}, 0, false},
                             {"a0", 1, {8}, 0, false}};
                snprintf(what, sizeof what, "_FusedMatMul [%s] %s", cases[i].ops, T);
                compare_graph(what, m.s, k_dts[t], mi, 4, "y");
            }
}

static void test_pool(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *ops[] = {"MaxPool", "AvgPool"}, *pads[] = {"SAME", "VALID"};
    for (size_t t = 0; t < 2; t++)
        for (int nchw = 0; nchw < 2; nchw++)
            for (size_t i = 0; i < 2; i++)
                for (size_t p = 0; p < 2; p++) {
                    tbuf b = {.n = 0};
                    ph(&b, "x", k_dts[t]);
                    add(&b, "node { name: 'y' op: '%s' input: 'x' attr { key: 'T' value { type: %s } } attr { key: "
                            "'padding' value { s: '%s' } } attr { key: 'data_format' value { s: '%s' } } ",
                        ops[i], tname(k_dts[t]), pads[p], nchw ? "NCHW" : "NHWC");
                    if (nchw)
                        add(&b, "attr { key: 'ksize' value { list { i: 1 i: 1 i: 3 i: 3 } } } attr { key: 'strides' "
                                "value { list { i: 1 i: 1 i: 2 i: 2 } } } }\n");
                    else
                        add(&b, "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 1 } } } attr { key: 'strides' "
                                "value { list { i: 1 i: 2 i: 2 i: 1 } } } }\n");
                    tin in = {"x", 4, {2, 0, 0, 0}, 0, false};
                    int64_t h = 12, w = 9, c = 5;
                    if (nchw) {
                        in.dims[1] = c;
                        in.dims[2] = h;
                        in.dims[3] = w;
                    } else {
                        in.dims[1] = h;
                        in.dims[2] = w;
                        in.dims[3] = c;
                    }
                    char what[96];
                    snprintf(what, sizeof what, "%s %s %s %s", ops[i], tname(k_dts[t]), nchw ? "NCHW" : "NHWC", pads[p]);
                    compare_graph(what, b.s, k_dts[t], &in, 1, "y");
                }
}

static void test_batch_norm(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++)
        for (int nchw = 0; nchw < 2; nchw++) {
            tbuf b = {.n = 0};
            ph(&b, "x", k_dts[t]);
            static const char *args[] = {"scale", "offset", "mean", "var"};
            for (int i = 0; i < 4; i++) ph(&b, args[i], DT_FLOAT);
            add(&b, "node { name: 'y' op: 'FusedBatchNormV3' input: 'x' input: 'scale' input: 'offset' input: 'mean' "
                    "input: 'var' attr { key: 'T' value { type: %s } } attr { key: 'U' value { type: DT_FLOAT } } attr "
                    "{ key: 'epsilon' value { f: 0.001 } } attr { key: 'is_training' value { b: false } } attr { key: "
                    "'data_format' value { s: '%s' } } }\n",
                tname(k_dts[t]), nchw ? "NCHW" : "NHWC");
            tin in[5] = {{"x", 4, {2, 0, 0, 0}, 0, false}, {"scale", 1, {6}, DT_FLOAT, false},
                         {"offset", 1, {6}, DT_FLOAT, false}, {"mean", 1, {6}, DT_FLOAT, false},
                         {"var", 1, {6}, DT_FLOAT, true}};
            if (nchw) {
                in[0].dims[1] = 6;
                in[0].dims[2] = 4;
                in[0].dims[3] = 5;
            } else {
                in[0].dims[1] = 4;
                in[0].dims[2] = 5;
                in[0].dims[3] = 6;
            }
            compare_graph(nchw ? "FusedBatchNormV3 NCHW" : "FusedBatchNormV3 NHWC", b.s, k_dts[t], in, 5, "y");
        }
}

static void test_softmax(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++) {
        tbuf b = {.n = 0};
        ph(&b, "x", k_dts[t]);
        add(&b, "node { name: 'y' op: 'Softmax' input: 'x' attr { key: 'T' value { type: %s } } }\n", tname(k_dts[t]));
        tin in = {"x", 3, {3, 7, 1000}, 0, false};
        compare_graph("Softmax", b.s, k_dts[t], &in, 1, "y");
    }
}

/* Reshape, Squeeze, ExpandDims (no copies) feeding a Relu, and Transpose, ConcatV2, Mean, Sum, Pad. */
static void test_array_ops(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++) {
        const char *T = tname(k_dts[t]);
        tbuf b = {.n = 0};
        ph(&b, "x", k_dts[t]);
        int shape[3] = {4, -1, 1}, ax = 0, perm[4] = {3, 0, 2, 1}, axis = 1, red[2] = {1, -1}, pads[8] = {0, 1, 2, 0, 1, 1, 0, 3};
        cint(&b, "shape", false, 3, shape);
        cint(&b, "ax", true, 1, &ax);
        cint(&b, "perm", false, 4, perm);
        cint(&b, "axis", true, 1, &axis);
        cint(&b, "red", false, 2, red);
        cint2(&b, "pads", 4, pads);
        add(&b, "node { name: 'r' op: 'Reshape' input: 'x' input: 'shape' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'sq' op: 'Squeeze' input: 'r' attr { key: 'T' value { type: %s } } attr { key: "
                "'squeeze_dims' value { list { i: -1 } } } }\n", T);
        add(&b, "node { name: 'e' op: 'ExpandDims' input: 'sq' input: 'ax' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'e2' op: 'ExpandDims' input: 'e' input: 'ax' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'rl' op: 'Relu' input: 'e2' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'tr' op: 'Transpose' input: 'rl' input: 'perm' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'cc' op: 'ConcatV2' input: 'tr' input: 'tr' input: 'tr' input: 'axis' attr { key: 'T' "
                "value { type: %s } } attr { key: 'N' value { i: 3 } } }\n", T);
        add(&b, "node { name: 'pd' op: 'Pad' input: 'cc' input: 'pads' attr { key: 'T' value { type: %s } } }\n", T);
        add(&b, "node { name: 'mn' op: 'Mean' input: 'pd' input: 'red' attr { key: 'T' value { type: %s } } attr { "
                "key: 'keep_dims' value { b: true } } }\n", T);
        add(&b, "node { name: 'sm' op: 'Sum' input: 'pd' input: 'red' attr { key: 'T' value { type: %s } } attr { "
                "key: 'keep_dims' value { b: false } } }\n", T);
        add(&b, "node { name: 'y' op: 'Mul' input: 'sm' input: 'sm' attr { key: 'T' value { type: %s } } }\n", T);
        tin in = {"x", 3, {2, 6, 5}, 0, false};
        static const char *fetches[] = {"tr", "cc", "pd", "mn", "sm", "y"};
        for (size_t i = 0; i < GN__ARRAY_LEN(fetches); i++) {
            char what[64];
            snprintf(what, sizeof what, "array ops %s fetch %s", T, fetches[i]);
            compare_graph(what, b.s, k_dts[t], &in, 1, fetches[i]);
        }
    }
}

/* Slice, StridedSlice (masks, negative strides, new and shrunk axes, an
 * ellipsis), Split, SplitV, Unpack (each output fetched), Pack, PadV2,
 * MirrorPad (both modes), GatherV2 with Const indices. */
static void test_slicing_ops(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++) {
        const char *T = tname(k_dts[t]);
        tbuf b = {.n = 0};
        ph(&b, "x", k_dts[t]);
        int sb[3] = {1, 0, 2}, ss[3] = {2, -1, 3};
        cint(&b, "sb", false, 3, sb);
        cint(&b, "ss", false, 3, ss);
        add(&b, "node { name: 'sl' op: 'Slice' input: 'x' input: 'sb' input: 'ss' attr { key: 'T' value { type: %s } } "
                "attr { key: 'Index' value { type: DT_INT32 } } }\n", T);
        /* x[1:, ::-2, 3] with begin_mask 2, shrink 4 */
        int b1[3] = {1, 0, 3}, e1[3] = {4, 0, 4}, s1[3] = {1, -2, 1};
        cint(&b, "b1", false, 3, b1);
        cint(&b, "e1", false, 3, e1);
        cint(&b, "s1", false, 3, s1);
        add(&b, "node { name: 'ss1' op: 'StridedSlice' input: 'x' input: 'b1' input: 'e1' input: 's1' attr { key: 'T' "
                "value { type: %s } } attr { key: 'Index' value { type: DT_INT32 } } attr { key: 'begin_mask' value { "
                "i: 2 } } attr { key: 'end_mask' value { i: 2 } } attr { key: 'shrink_axis_mask' value { i: 4 } } }\n", T);
        /* x[..., newaxis, -3:-1] */
        int b2[3] = {0, 0, -3}, e2[3] = {0, 0, -1}, s2[3] = {1, 1, 1};
        cint(&b, "b2", false, 3, b2);
        cint(&b, "e2", false, 3, e2);
        cint(&b, "s2", false, 3, s2);
        add(&b, "node { name: 'ss2' op: 'StridedSlice' input: 'x' input: 'b2' input: 'e2' input: 's2' attr { key: 'T' "
                "value { type: %s } } attr { key: 'Index' value { type: DT_INT32 } } attr { key: 'ellipsis_mask' value { "
                "i: 1 } } attr { key: 'new_axis_mask' value { i: 2 } } }\n", T);
        int ax1 = 1, ax2 = 2, sv[3] = {1, -1, 2};
        cint(&b, "ax1", true, 1, &ax1);
        cint(&b, "ax2", true, 1, &ax2);
        cint(&b, "sv", false, 3, sv);
        add(&b, "node { name: 'sp' op: 'Split' input: 'ax2' input: 'x' attr { key: 'T' value { type: %s } } attr { key: "
                "'num_split' value { i: 3 } } }\n", T);
        add(&b, "node { name: 'spv' op: 'SplitV' input: 'x' input: 'sv' input: 'ax1' attr { key: 'T' value { type: %s } "
                "} attr { key: 'Tlen' value { type: DT_INT32 } } attr { key: 'num_split' value { i: 3 } } }\n", T);
        add(&b, "node { name: 'up' op: 'Unpack' input: 'x' attr { key: 'T' value { type: %s } } attr { key: 'num' value "
                "{ i: 4 } } attr { key: 'axis' value { i: 0 } } }\n", T);
        add(&b, "node { name: 'pk' op: 'Pack' input: 'up:3' input: 'up:1' input: 'up' attr { key: 'T' value { type: %s } "
                "} attr { key: 'N' value { i: 3 } } attr { key: 'axis' value { i: -2 } } }\n", T);
        int pads[6] = {1, 0, 0, 2, 3, 1};
        cint2(&b, "pads", 3, pads);
        add(&b, "node { name: 'cv' op: 'Const' attr { key: 'dtype' value { type: %s } } attr { key: 'value' value { tensor "
                "{ dtype: %s tensor_shape { } %s: %s } } } }\n", T, T, k_dts[t] == DT_HALF ? "half_val" : "float_val",
            k_dts[t] == DT_HALF ? "15872" : "1.5");   /* 1.5 */
        add(&b, "node { name: 'p2' op: 'PadV2' input: 'x' input: 'pads' input: 'cv' attr { key: 'T' value { type: %s } } "
                "attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n", T);
        add(&b, "node { name: 'mr' op: 'MirrorPad' input: 'x' input: 'pads' attr { key: 'T' value { type: %s } } attr { "
                "key: 'Tpaddings' value { type: DT_INT32 } } attr { key: 'mode' value { s: 'REFLECT' } } }\n", T);
        add(&b, "node { name: 'ms' op: 'MirrorPad' input: 'x' input: 'pads' attr { key: 'T' value { type: %s } } attr { "
                "key: 'Tpaddings' value { type: DT_INT32 } } attr { key: 'mode' value { s: 'SYMMETRIC' } } }\n", T);
        int gi[5] = {4, 0, 0, 2, 5};
        cint(&b, "gi", false, 5, gi);
        add(&b, "node { name: 'ga' op: 'GatherV2' input: 'x' input: 'gi' input: 'ax2' attr { key: 'Tparams' value { type: "
                "%s } } attr { key: 'Tindices' value { type: DT_INT32 } } attr { key: 'Taxis' value { type: DT_INT32 } } "
                "attr { key: 'batch_dims' value { i: 0 } } }\n", T);
        tin in = {"x", 3, {4, 5, 6}, 0, false};
        static const char *fetches[] = {"sl", "ss1", "ss2", "sp", "sp:1", "sp:2", "spv", "spv:1", "spv:2", "up:2",
                                        "pk", "p2", "mr", "ms", "ga"};
        for (size_t i = 0; i < GN__ARRAY_LEN(fetches); i++) {
            char what[64];
            snprintf(what, sizeof what, "slicing ops %s fetch %s", T, fetches[i]);
            compare_graph(what, b.s, k_dts[t], &in, 1, fetches[i]);
        }
    }
}

/* Shape arithmetic evaluated on the host at plan time: Shape, StridedSlice,
 * Prod, Pack feeding a Reshape (as Keras' Tensordot writes it). */
static void test_host_shape_ops(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++) {
        const char *T = tname(k_dts[t]);
        tbuf b = {.n = 0};
        ph(&b, "x", k_dts[t]);
        int b0[1] = {0}, e0[1] = {2}, s0[1] = {1}, ax = 0, last = -1;
        cint(&b, "b0", false, 1, b0);
        cint(&b, "e0", false, 1, e0);
        cint(&b, "s0", false, 1, s0);
        cint(&b, "ax", true, 1, &ax);
        cint(&b, "last", true, 1, &last);
        add(&b, "node { name: 'shape' op: 'Shape' input: 'x' attr { key: 'T' value { type: %s } } attr { key: 'out_type' "
                "value { type: DT_INT32 } } }\n", T);
        add(&b, "node { name: 'lead' op: 'StridedSlice' input: 'shape' input: 'b0' input: 'e0' input: 's0' attr { key: 'T' "
                "value { type: DT_INT32 } } attr { key: 'Index' value { type: DT_INT32 } } }\n");
        add(&b, "node { name: 'rows' op: 'Prod' input: 'lead' input: 'ax' attr { key: 'T' value { type: DT_INT32 } } attr "
                "{ key: 'Tidx' value { type: DT_INT32 } } attr { key: 'keep_dims' value { b: false } } }\n");
        add(&b, "node { name: 'newshape' op: 'Pack' input: 'rows' input: 'last' attr { key: 'T' value { type: DT_INT32 } } "
                "attr { key: 'N' value { i: 2 } } attr { key: 'axis' value { i: 0 } } }\n");
        add(&b, "node { name: 'r' op: 'Reshape' input: 'x' input: 'newshape' attr { key: 'T' value { type: %s } } attr { "
                "key: 'Tshape' value { type: DT_INT32 } } }\n", T);
        add(&b, "node { name: 'y' op: 'Tanh' input: 'r' attr { key: 'T' value { type: %s } } }\n", T);
        tin in = {"x", 3, {3, 4, 10}, 0, false};
        compare_graph("host shape ops", b.s, k_dts[t], &in, 1, "y");
        compare_graph("host shape ops (Shape fetched)", b.s, k_dts[t], &in, 1, "newshape");
    }
}

/* Runs of elementwise ops (fused into one kernel inside the backend) with
 * broadcasting at several depths, a value used twice (not fused across),
 * and the layer-norm subgraph (Mean, SquaredDifference, Rsqrt, Mul, Sub,
 * AddV2). */
static void test_fused_elementwise(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++) {
        const char *T = tname(k_dts[t]);
        tbuf b = {.n = 0};
        ph(&b, "x", k_dts[t]);
        ph(&b, "g", k_dts[t]);
        ph(&b, "c", k_dts[t]);
        int axes[1] = {-1};
        cint(&b, "axes", false, 1, axes);
        add(&b, "node { name: 'eps' op: 'Const' attr { key: 'dtype' value { type: %s } } attr { key: 'value' value { tensor "
                "{ dtype: %s tensor_shape { } %s: %s } } } }\n", T, T, k_dts[t] == DT_HALF ? "half_val" : "float_val",
            k_dts[t] == DT_HALF ? "4096" : "0.001");   /* 2^-11 in half */
#define BIN(name, op, a, c) add(&b, "node { name: '" name "' op: '" op "' input: '" a "' input: '" c "' attr { key: 'T' value { type: %s } } }\n", T)
#define UN_T(name, op, a) add(&b, "node { name: '" name "' op: '" op "' input: '" a "' attr { key: 'T' value { type: %s } } }\n", T)
        add(&b, "node { name: 'mean' op: 'Mean' input: 'x' input: 'axes' attr { key: 'T' value { type: %s } } attr { key: "
                "'keep_dims' value { b: true } } }\n", T);
        BIN("sqd", "SquaredDifference", "x", "mean");
        add(&b, "node { name: 'var' op: 'Mean' input: 'sqd' input: 'axes' attr { key: 'T' value { type: %s } } attr { key: "
                "'keep_dims' value { b: true } } }\n", T);
        BIN("ve", "AddV2", "var", "eps");
        UN_T("rs", "Rsqrt", "ve");
        BIN("sc", "Mul", "rs", "g");
        BIN("xs", "Mul", "x", "sc");
        BIN("ms", "Mul", "mean", "sc");
        BIN("sh", "Sub", "c", "ms");
        BIN("ln", "AddV2", "xs", "sh");
        /* a longer run: tanh-approximate Gelu over ln, with a used-twice value */
        UN_T("cube", "Square", "ln");
        BIN("c3", "Mul", "cube", "ln");
        BIN("inner", "AddV2", "ln", "c3");
        UN_T("th", "Tanh", "inner");
        BIN("one", "AddV2", "th", "g");
        BIN("y", "Mul", "one", "ln");
        UN_T("z", "Relu", "y");
        BIN("w", "Maximum", "z", "c");
#undef BIN
#undef UN
        tin in[3] = {{"x", 3, {3, 7, 40}, 0, false}, {"g", 1, {40}, 0, false}, {"c", 2, {1, 40}, 0, false}};
        static const char *fetches[] = {"ln", "y", "w"};
        for (size_t i = 0; i < GN__ARRAY_LEN(fetches); i++) {
            char what[64];
            snprintf(what, sizeof what, "fused elementwise %s fetch %s", T, fetches[i]);
            compare_graph(what, b.s, k_dts[t], in, 3, fetches[i]);
        }
    }
}

/* The layer norm as Keras 3 writes it (M through StopGradient into the
 * SquaredDifference, beta added after Neg(M) * SC), which the CUDA backend
 * runs as one kernel; then the same graph with an inner value fetched (not
 * one kernel: each node runs), and with a beta that broadcasts the output
 * beyond x's shape (the plan finds the shapes do not fit the kernel and
 * runs each node). */
static void test_layer_norm(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t t = 0; t < 2; t++)
        for (int variant = 0; variant < 3; variant++) {
            const char *T = tname(k_dts[t]);
            tbuf b = {.n = 0};
            ph(&b, "x", k_dts[t]);
            ph(&b, "gamma", k_dts[t]);
            ph(&b, "beta", k_dts[t]);
            int axes[1] = {-1};
            cint(&b, "axes", false, 1, axes);
            add(&b, "node { name: 'eps' op: 'Const' attr { key: 'dtype' value { type: %s } } attr { key: 'value' value { "
                    "tensor { dtype: %s tensor_shape { } %s: %s } } } }\n",
                T, T, k_dts[t] == DT_HALF ? "half_val" : "float_val", k_dts[t] == DT_HALF ? "4096" : "0.001");
#define BIN(name, op, a, c) add(&b, "node { name: '" name "' op: '" op "' input: '" a "' input: '" c "' attr { key: 'T' value { type: %s } } }\n", T)
#define UN_T(name, op, a) add(&b, "node { name: '" name "' op: '" op "' input: '" a "' attr { key: 'T' value { type: %s } } }\n", T)
            add(&b, "node { name: 'mean' op: 'Mean' input: 'x' input: 'axes' attr { key: 'T' value { type: %s } } attr { "
                    "key: 'keep_dims' value { b: true } } }\n", T);
            UN_T("sg", "StopGradient", "mean");
            BIN("sqd", "SquaredDifference", "x", "sg");
            add(&b, "node { name: 'var' op: 'Mean' input: 'sqd' input: 'axes' attr { key: 'T' value { type: %s } } attr { "
                    "key: 'keep_dims' value { b: true } } }\n", T);
            UN_T("neg", "Neg", "mean");
            BIN("add", "AddV2", "var", "eps");
            UN_T("rs", "Rsqrt", "add");
            BIN("sc", "Mul", "rs", "gamma");
            BIN("mul_1", "Mul", "neg", "sc");
            BIN("add_1", "AddV2", "mul_1", "beta");
            BIN("mul_2", "Mul", "x", "sc");
            BIN("out", "AddV2", "mul_2", "add_1");
            UN_T("y", "Relu", "out");
#undef BIN
#undef UN
            tin in[3] = {{"x", 3, {4, 6, 48}, 0, false}, {"gamma", 1, {48}, 0, false}, {"beta", 1, {48}, 0, false}};
            if (variant == 2) {   /* beta [3, 1, 48] broadcasts x [1, 6, 48] to [3, 6, 48] */
                in[0] = (tin){"x", 3, {1, 6, 48}, 0, false};
                in[2] = (tin){"beta", 3, {3, 1, 48}, 0, false};
            }
            char what[96];
            snprintf(what, sizeof what, "layer norm %s %s", T, variant == 0 ? "one kernel" : variant == 1 ? "sc fetched" : "beta broadcasts");
            compare_graph(what, b.s, k_dts[t], in, 3, variant == 1 ? "sc" : "y");
            if (variant == 1) compare_graph(what, b.s, k_dts[t], in, 3, "out");
        }
}

/* One fetch of a golden model on the CPU and (with a GPU) CUDA backends,
 * compared within tol (relative L2); label names the model and variant.
 * false when the CUDA backend lacks an op of the graph (printed, not
 * compared); *compared counts the fetches compared. */
static bool golden_fetch_agrees(const char *label, const gn_graph *g, const char *const *fn, const gn_tensor *feeds,
                                size_t nf, const char *fetch, double tol, size_t *compared)
{
    gn_tensor ref, got;
    char msg[1024];
    if (run_on("cpu", g, fn, feeds, nf, fetch, &ref, msg, sizeof msg) != GN_OK) fail_msg("%s: cpu: %s", label, msg);
    if (cpu_only()) {
        gn_tensor_free(&ref);
        (*compared)++;
        return true;
    }
    gn_status st = run_on("cuda", g, fn, feeds, nf, fetch, &got, msg, sizeof msg);
    if (st == GN_ERR_UNSUPPORTED) {
        print_message("golden %s: not on the CUDA backend yet: %s\n", label, msg);
        gn_tensor_free(&ref);
        return false;
    }
    if (st != GN_OK) fail_msg("%s: cuda: %s", label, msg);
    gn_compare_result r;
    assert_int_equal(gn_tensor_compare(&got, &ref, tol, &r), GN_OK);
    if (!r.match) fail_msg("%s %s: cuda vs cpu: %s (rel L2 %g)", label, fetch, r.why, r.rel_l2_err);
    print_message("golden %s %s: cuda vs cpu rel L2 %.3g\n", label, fetch, r.rel_l2_err);
    (*compared)++;
    gn_tensor_free(&ref);
    gn_tensor_free(&got);
    return true;
}

/* The golden models on both backends: models with an op the CUDA backend
 * lacks are listed (and not compared); every other output must agree. */
static void test_golden(void **state)
{
    (void)state;
    NEED_GPU();
    gn_pt_golden m[32];
    size_t n = gn_pt_read_manifest(m, GN__ARRAY_LEN(m)), compared = 0;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        if (strncmp(m[i].graph, "golden/", 7)) continue;   /* corpus models: not here */
        gn_test_data(m[i].graph, path, sizeof path);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", m[i].name, gn_graph_errmsg(g));
        gn_tensor feeds[4];
        const char *fn[4];
        for (size_t k = 0; k < m[i].nf; k++) {
            char fp[4096], rel[600], e[256];
            snprintf(rel, sizeof rel, "golden/%s", m[i].feed_file[k]);
            gn_test_data(rel, fp, sizeof fp);
            if (gn_npy_read(fp, &feeds[k], e, sizeof e) != GN_OK) fail_msg("%s: %s", m[i].name, e);
            fn[k] = m[i].feed[k];
        }
        for (size_t x = 0; x < m[i].nx; x++)
            if (!golden_fetch_agrees(m[i].name, g, fn, feeds, m[i].nf, m[i].fetch[x], 1e-5, &compared)) break;
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
        gn_graph_free(g);
    }
    assert_true(compared > 0);
}

/* The golden models and the corpus CNNs among them after the GPU-targeted
 * passes (target gpu:sm_90: layout NCHW, remapping; then again with
 * auto_mixed_precision, float16), each run on the CPU and CUDA backends on
 * the model's inputs: float32 graphs within 1e-5, float16 graphs within
 * 1e-2 (relative L2). Models with an op the CUDA backend lacks are listed. */
static void test_golden_gpu_passes(void **state)
{
    (void)state;
    NEED_GPU();
    gn_pt_golden m[32];
    size_t n = gn_pt_read_manifest(m, GN__ARRAY_LEN(m)), compared = 0;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++)
        for (int amp = 0; amp < 2; amp++) {
            gn_graph *g = NULL;
            gn_tensor feeds[4];
            const char *fn[4], *xn[4];
            if (!gn_pt_golden_open(&m[i], &g, feeds, fn, xn, false)) continue;   /* corpus absent */
            gn_options o;
            gn_options_init(&o);
            char e[256];
            if (amp) assert_int_equal(gn_options_set(&o, "auto_mixed_precision", "True", e, sizeof e), GN_OK);
            gn_optimize_params prm;
            gn_optimize_params_init(&prm);
            prm.fetches = xn;
            prm.n_fetches = m[i].nx;
            prm.feeds = fn;
            prm.n_feeds = m[i].nf;
            assert_int_equal(gn_target_parse("gpu:sm_90", &prm.target, e, sizeof e), GN_OK);
            if (gn_optimize(g, &o, &prm, NULL) != GN_OK) fail_msg("%s: optimize: %s", m[i].name, gn_graph_errmsg(g));
            char label[512];
            snprintf(label, sizeof label, "%.200s (gpu passes%s)", m[i].name, amp ? ", float16" : "");
            for (size_t x = 0; x < m[i].nx; x++)
                if (!golden_fetch_agrees(label, g, fn, feeds, m[i].nf, xn[x], amp ? 1e-2 : 1e-5, &compared)) break;
            for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
            gn_graph_free(g);
        }
    assert_true(compared > 0);
}

/* ---- session options: CUDA Graph replay, cuDNN workspace bound ----------------------------- */
/* A caller built before cuda_graph and workspace_limit_bytes existed passes
 * the older, shorter struct: it still works, with the defaults; a struct
 * larger than this library knows is refused. The CPU backend takes the new
 * settings and ignores them. Runs without a GPU. */
static void test_session_options_compat(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
                            "node { name: 'y' op: 'Square' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n", 1);
    float xv[3] = {1.0f, -2.0f, 3.0f};
    gn_tensor x = {.dtype = DT_FLOAT, .rank = 1, .dims = {3}, .data = xv, .nbytes = sizeof xv};
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_session_options o;
    gn_session_options_init(&o);
    assert_false(o.cuda_graph);
    assert_int_equal(o.workspace_limit_bytes, 0);
    for (int variant = 0; variant < 3; variant++) {
        gn_session_options_init(&o);
        if (variant == 0) o.struct_size = (uint32_t)offsetof(gn_session_options, workspace_limit_bytes);   /* the older layout */
        if (variant == 1) {
            o.cuda_graph = true;
            o.workspace_limit_bytes = 1u << 20;
        }
        if (variant == 2) o.struct_size = (uint32_t)sizeof o + 8;
        gn_session *s = NULL;
        gn_status st = gn_session_new(g, &o, &s);
        if (variant == 2) {
            assert_int_equal(st, GN_ERR_ARG);
            assert_non_null(strstr(gn_session_errmsg(s), "struct_size"));
            gn_session_free(s);
            continue;
        }
        if (st != GN_OK) fail_msg("variant %d: %s", variant, gn_session_errmsg(s));
        gn_tensor y;
        if (gn_session_run(s, fn, &x, 1, xn, &y, 1) != GN_OK) fail_msg("variant %d: %s", variant, gn_session_errmsg(s));
        assert_int_equal(y.rank, 1);
        assert_true(((float *)y.data)[0] == 1.0f && ((float *)y.data)[1] == 4.0f && ((float *)y.data)[2] == 9.0f);
        gn_tensor_free(&y);
        gn__engine_stats es;
        assert_int_equal(gn__session_stats(s, &es, NULL), GN_OK);
        assert_false(es.graph_replayed);
        assert_int_equal(es.graph_captures, 0);
        gn_session_free(s);
    }
    gn_graph_free(g);
}

/* y = Relu(Conv2D(x, w)) + x2 (cuDNN and a fused elementwise kernel) and
 * m = BiasAdd(MatMul(a, b), c) (cuBLAS), fetched together. */
static const char k_graph_run[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'w' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'x2' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'c' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'cv' op: 'Conv2D' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'data_format' value { s: 'NHWC' } } "
    "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } }\n"
    "node { name: 'cv2' op: 'Conv2D' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'data_format' value { s: 'NHWC' } } "
    "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } }\n"
    "node { name: 'r' op: 'Relu' input: 'cv' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'r2' op: 'Sub' input: 'r' input: 'cv2' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'y' op: 'AddV2' input: 'r2' input: 'x2' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'mm' op: 'MatMul' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'm' op: 'BiasAdd' input: 'mm' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n";

typedef struct feedset {
    gn_tensor t[6];
    float *mem[6];
} feedset;

/* Random feeds for k_graph_run at batch n (a fresh draw each call). */
static void feedset_make(feedset *f, int64_t n)
{
    const int64_t dims[6][4] = {{n, 9, 9, 4}, {3, 3, 4, 8}, {n, 9, 9, 8}, {n * 3, 7}, {7, 6}, {6}};
    const int32_t ranks[6] = {4, 4, 4, 2, 2, 1};
    for (int i = 0; i < 6; i++) {
        int64_t ne = 1;
        for (int32_t d = 0; d < ranks[i]; d++) ne *= dims[i][d];
        f->mem[i] = malloc((size_t)ne * sizeof(float));
        assert_non_null(f->mem[i]);
        for (int64_t k = 0; k < ne; k++) f->mem[i][k] = 4.0f * urand() - 2.0f;
        memset(&f->t[i], 0, sizeof f->t[i]);
        f->t[i].dtype = DT_FLOAT;
        f->t[i].rank = ranks[i];
        memcpy(f->t[i].dims, dims[i], sizeof(int64_t) * (size_t)ranks[i]);
        f->t[i].data = f->mem[i];
        f->t[i].nbytes = (size_t)ne * sizeof(float);
    }
}

static void feedset_free(feedset *f)
{
    for (int i = 0; i < 6; i++) free(f->mem[i]);
}

static const char *const k_run_feeds[6] = {"x", "w", "x2", "a", "b", "c"};
static const char *const k_run_fetches[2] = {"y", "m"};

static gn_session *session_with(const gn_graph *g, const char *backend, bool cuda_graph, uint64_t ws_limit)
{
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = backend;
    o.cuda_graph = cuda_graph;
    o.workspace_limit_bytes = ws_limit;
    gn_session *s = NULL;
    if (gn_session_new(g, &o, &s) != GN_OK) fail_msg("%s session: %s", backend, gn_session_errmsg(s));
    return s;
}

/* Runs f on s (CUDA) and ref (CPU) and compares both fetches (float32, no TF32: 1e-5). */
static void run_compare(const char *what, gn_session *s, gn_session *ref, const feedset *f)
{
    gn_tensor want[2], got[2];
    if (gn_session_run(ref, k_run_feeds, f->t, 6, k_run_fetches, want, 2) != GN_OK)
        fail_msg("%s: cpu: %s", what, gn_session_errmsg(ref));
    if (s) {
        if (gn_session_run(s, k_run_feeds, f->t, 6, k_run_fetches, got, 2) != GN_OK)
            fail_msg("%s: cuda: %s", what, gn_session_errmsg(s));
        for (int i = 0; i < 2; i++) {
            gn_compare_result r;
            assert_int_equal(gn_tensor_compare(&got[i], &want[i], 1e-5, &r), GN_OK);
            if (!r.match)
                fail_msg("%s: fetch %s: cuda vs cpu: %s (rel L2 %g)", what, k_run_fetches[i], r.why, r.rel_l2_err);
            gn_tensor_free(&got[i]);
        }
    }
    for (int i = 0; i < 2; i++) gn_tensor_free(&want[i]);
}

/* cuda_graph: the first run of a shape set is captured, later runs replay
 * the graph with new feed values (copied into the plan's fixed buffers), and
 * every run agrees with the CPU backend; a new shape set is captured anew. */
static void test_cuda_graph(void **state)
{
    (void)state;
    NEED_GPU();
    gn_graph *g = gn_test_load_text(k_graph_run, 1);
    gn_session *ref = session_with(g, "cpu", true, 0);
    gn_session *s = cpu_only() ? NULL : session_with(g, "cuda", true, 0);
    static const int64_t batches[5] = {2, 2, 2, 3, 3};
    for (int run = 0; run < 5; run++) {
        feedset f;
        feedset_make(&f, batches[run]);
        char what[64];
        snprintf(what, sizeof what, "run %d (batch %lld)", run, (long long)batches[run]);
        run_compare(what, s, ref, &f);
        feedset_free(&f);
        if (!s) continue;
        gn__engine_stats es;
        assert_int_equal(gn__session_stats(s, &es, NULL), GN_OK);
        if (es.graph_ineligible) fail_msg("%s: the plan could not be captured: %s", what, es.graph_why);
        assert_int_equal(es.graph_captures, run < 3 ? 1 : 2);
        assert_true(es.graph_replayed);   /* the captured run is launched as a graph too */
        assert_int_equal(es.n_plans, run < 3 ? 1 : 2);
    }
    gn_session_free(s);
    gn_session_free(ref);
    gn_graph_free(g);
}

/* Without cuda_graph nothing is captured; results are the same. */
static void test_cuda_graph_off(void **state)
{
    (void)state;
    NEED_GPU();
    gn_graph *g = gn_test_load_text(k_graph_run, 1);
    gn_session *ref = session_with(g, "cpu", false, 0);
    gn_session *s = cpu_only() ? NULL : session_with(g, "cuda", false, 0);
    for (int run = 0; run < 2; run++) {
        feedset f;
        feedset_make(&f, 2);
        run_compare("no graph", s, ref, &f);
        feedset_free(&f);
        if (!s) continue;
        gn__engine_stats es;
        assert_int_equal(gn__session_stats(s, &es, NULL), GN_OK);
        assert_false(es.graph_replayed);
        assert_int_equal(es.graph_captures, 0);
        assert_int_equal(es.graph_ineligible, 0);
    }
    gn_session_free(s);
    gn_session_free(ref);
    gn_graph_free(g);
}

/* workspace_limit_bytes bounds cuDNN's algorithm choice: with a 1-byte
 * bound only workspace-free algorithms qualify, and the convolutions (the
 * two identical ones share one cached choice) still agree with the CPU; a
 * generous bound agrees too. */
static void test_workspace_limit(void **state)
{
    (void)state;
    NEED_GPU();
    gn_graph *g = gn_test_load_text(k_graph_run, 1);
    gn_session *ref = session_with(g, "cpu", false, 1);
    static const uint64_t limits[3] = {1, 0, (uint64_t)1 << 30};
    for (int i = 0; i < 3; i++) {
        gn_session *s = cpu_only() ? NULL : session_with(g, "cuda", false, limits[i]);
        feedset f;
        feedset_make(&f, 2);
        char what[64];
        snprintf(what, sizeof what, "workspace limit %llu", (unsigned long long)limits[i]);
        run_compare(what, s, ref, &f);
        feedset_free(&f);
        gn_session_free(s);
    }
    gn_session_free(ref);
    gn_graph_free(g);
}

/* ---- engine ops: graphs segmented for the CUDA backend (grapnel segment --backend cuda) ------- */
typedef struct eng_counts {
    uint64_t hits, builds, evictions, fallbacks, prebuilt;
} eng_counts;

static eng_counts counts_of(const gn_session *s)
{
    gn__engine_stats es;
    assert_int_equal(gn__session_stats(s, &es, NULL), GN_OK);
    return (eng_counts){es.eng_hits, es.eng_builds, es.eng_evictions, es.eng_fallbacks, es.eng_prebuilt};
}

static void counts_equal(const char *what, eng_counts got, eng_counts want)
{
    if (got.hits != want.hits || got.builds != want.builds || got.evictions != want.evictions ||
        got.fallbacks != want.fallbacks || got.prebuilt != want.prebuilt)
        fail_msg("%s: engine counters (hits %llu builds %llu evictions %llu fallbacks %llu prebuilt %llu), want (%llu %llu "
                 "%llu %llu %llu)",
                 what, (unsigned long long)got.hits, (unsigned long long)got.builds, (unsigned long long)got.evictions,
                 (unsigned long long)got.fallbacks, (unsigned long long)got.prebuilt, (unsigned long long)want.hits,
                 (unsigned long long)want.builds, (unsigned long long)want.evictions,
                 (unsigned long long)want.fallbacks, (unsigned long long)want.prebuilt);
}

/* Segments g for the CUDA backend (the CPU backend's segmenter without a
 * GPU: the graph then runs on the CPU only); returns the number of engines. */
static size_t segment_for_test(gn_graph *g, int precision, int max_cached, bool allow, int min_size,
                               const char *const *keep, size_t n_keep)
{
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    p.precision_mode = precision;
    p.maximum_cached_engines = max_cached;
    p.allow_build_at_runtime = allow;
    p.minimum_segment_size = min_size;
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.backend = cpu_only() ? "cpu" : "cuda";
    sp.preserve = keep;
    sp.n_preserve = n_keep;
    size_t n = 0;
    char *rep = NULL;
    if (gn_segment(g, &p, &sp, &rep, &n) != GN_OK) fail_msg("segment (%s): %s", sp.backend, gn_graph_errmsg(g));
    gn_free(rep);
    return n;
}

/* Runs g on the CUDA backend `runs` times (a fresh session) and compares the
 * last run's nx fetches with want (the CPU backend's) within tol and the
 * engine counters with cc; false (printed) when the CUDA backend cannot run
 * the graph yet. */
static bool cuda_agrees(const char *what, const gn_graph *g, const char *const *fn, const gn_tensor *feeds, size_t nf,
                        const char *const *xn, size_t nx, const gn_tensor *want, double tol, int runs, eng_counts cc)
{
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = "cuda";
    gn_session *s = NULL;
    gn_tensor got[4];
    assert_true(nx <= 4);
    gn_status st = gn_session_new(g, &o, &s);
    for (int run = 0; st == GN_OK && run < runs; run++) {
        st = gn_session_run(s, fn, feeds, nf, xn, got, nx);
        if (st == GN_OK && run + 1 < runs)
            for (size_t x = 0; x < nx; x++) gn_tensor_free(&got[x]);
    }
    if (st == GN_ERR_UNSUPPORTED) {
        print_message("%s: not on the CUDA backend yet: %s\n", what, gn_session_errmsg(s));
        gn_session_free(s);
        return false;
    }
    if (st != GN_OK) fail_msg("%s: cuda: %s", what, gn_session_errmsg(s));
    for (size_t x = 0; x < nx; x++) {
        gn_compare_result r;
        assert_int_equal(gn_tensor_compare(&got[x], &want[x], tol, &r), GN_OK);
        print_message("%s %s: cuda vs cpu rel L2 %.3g\n", what, xn[x], r.rel_l2_err);
        if (!r.match) fail_msg("%s %s: cuda vs cpu: %s (rel L2 %g)", what, xn[x], r.why, r.rel_l2_err);
        gn_tensor_free(&got[x]);
    }
    counts_equal(what, counts_of(s), cc);
    gn_session_free(s);
    return true;
}

/* The golden models segmented into FP32, FP16 and INT8 engine ops, INT8
 * both without calibration (use_calibration and no table yet: every engine
 * op runs its native segment, counted as a fallback on both backends) and
 * calibrated on the golden feed (INT8 engines), each run twice on the CPU
 * and CUDA backends: the outputs agree (FP32 and the INT8 fallback within
 * 1e-5, FP16 within 1e-2, INT8 engines within 1e-3: the float nodes between
 * the int8 ones, cuDNN's and cuBLAS's against ours, can move a value across
 * a rounding boundary of the next quantization, one step of amax / 127 for
 * that element) and so do the engine counters (a build, then a hit, per
 * engine op). */
static void test_engines_golden(void **state)
{
    (void)state;
    NEED_GPU();
    static const int precs[4] = {0, 1, 2, 2};
    static const char *const pname[4] = {"FP32", "FP16", "INT8", "INT8 calibrated"};
    static const double tol[4] = {1e-5, 1e-2, 1e-5, 1e-3};
    gn_pt_golden m[32];
    size_t n = gn_pt_read_manifest(m, GN__ARRAY_LEN(m)), compared = 0;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(m[i].graph, "golden/", 7)) continue;   /* corpus models: not here */
        for (int pi = 0; pi < 4; pi++) {
            gn_graph *g = NULL;
            gn_tensor feeds[4];
            const char *fn[4], *xn[4], *keep[8];
            if (!gn_pt_golden_open(&m[i], &g, feeds, fn, xn, true)) continue;
            size_t nk = 0;
            for (size_t k = 0; k < m[i].nf; k++) keep[nk++] = fn[k];
            for (size_t k = 0; k < m[i].nx; k++) keep[nk++] = xn[k];
            size_t n_eng = segment_for_test(g, precs[pi], 1, true, 3, keep, nk);
            char what[700], *rep = NULL;
            snprintf(what, sizeof what, "golden %s %s engines", m[i].name, pname[pi]);
            if (pi == 3 && n_eng && gn_calibrate(g, fn, m[i].nf, feeds, 1, &rep) != GN_OK)
                fail_msg("%s: calibrate: %s", what, gn_graph_errmsg(g));
            gn_free(rep);
            if (!n_eng) {
                print_message("%s: no segment\n", what);
                for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
                gn_graph_free(g);
                continue;
            }
            gn_session *ref = session_with(g, "cpu", false, 0);
            gn_tensor want[4];
            for (int run = 0; run < 2; run++)
                if (gn_session_run(ref, fn, feeds, m[i].nf, xn, want, m[i].nx) != GN_OK)
                    fail_msg("%s: cpu: %s", what, gn_session_errmsg(ref));
                else if (run == 0)
                    for (size_t x = 0; x < m[i].nx; x++) gn_tensor_free(&want[x]);
            eng_counts cc = counts_of(ref);
            print_message("%s: %zu engine op(s); cpu: builds %llu hits %llu fallbacks %llu\n", what, n_eng,
                          (unsigned long long)cc.builds, (unsigned long long)cc.hits, (unsigned long long)cc.fallbacks);
            if (pi == 2) assert_true(cc.fallbacks > 0 && cc.fallbacks % 2 == 0 && cc.builds == 0 && cc.hits == 0);
            else if (pi == 3) assert_true(cc.builds > 0 && cc.hits >= cc.builds);   /* (lstm_v1: engines in its loop stay native) */
            else assert_true(cc.builds > 0 && cc.hits >= cc.builds && cc.fallbacks == 0);
            if (!cpu_only()) cuda_agrees(what, g, fn, feeds, m[i].nf, xn, m[i].nx, want, tol[pi], 2, cc);
            compared++;
            for (size_t x = 0; x < m[i].nx; x++) gn_tensor_free(&want[x]);
            gn_session_free(ref);
            for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
            gn_graph_free(g);
        }
    }
    assert_true(compared > 0);
}

/* y = Relu(x W + b) * c with constant W, b, c: one engine op. */
static gn_graph *engine_graph(void)
{
    tbuf b = {.n = 0};
    ph(&b, "x", DT_FLOAT);
    add(&b, "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
            "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 16 } dim { size: 8 } }");
    for (int i = 0; i < 128; i++) add(&b, " float_val: %g", (double)((i * 37 % 23) - 11) / 16.0);
    add(&b, " } } } }\n");
    add(&b, "node { name: 'bias' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
            "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 8 } }");
    for (int i = 0; i < 8; i++) add(&b, " float_val: %g", (double)(i - 4) / 8.0);
    add(&b, " } } } }\n");
    add(&b, "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
            "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1.5 } } } }\n");
    add(&b, "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    add(&b, "node { name: 'ba' op: 'BiasAdd' input: 'mm' input: 'bias' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    add(&b, "node { name: 'r' op: 'Relu' input: 'ba' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    add(&b, "node { name: 'y' op: 'Mul' input: 'r' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    return gn_test_load_text(b.s, 1);
}

/* The engine cache over shape sets: batches 2, 2, 3, 2, 3 with room for one
 * engine (build, hit, build and evict, build and evict, build and evict),
 * for two (build, hit, build, hit, hit), and without
 * allow_build_at_runtime (the native segment every run); CUDA with and
 * without CUDA Graph replay keeps the CPU backend's counters after every
 * run, and its results agree (1e-5). */
static void test_engine_cache(void **state)
{
    (void)state;
    NEED_GPU();
    static const struct {
        int max;
        bool allow;
        eng_counts end;
    } cases[3] = {
        {1, true, {1, 4, 3, 0, 0}},
        {2, true, {3, 2, 0, 0, 0}},
        {1, false, {0, 0, 0, 5, 0}},
    };
    static const int64_t batches[5] = {2, 2, 3, 2, 3};
    const char *keep[2] = {"x", "y"}, *fn[1] = {"x"}, *xn[1] = {"y"};
    for (size_t c = 0; c < GN__ARRAY_LEN(cases); c++)
        for (int graph = 0; graph < 2; graph++) {
            gn_graph *g = engine_graph();
            assert_int_equal(segment_for_test(g, 0, cases[c].max, cases[c].allow, 2, keep, 2), 1);
            gn_session *ref = session_with(g, "cpu", false, 0);
            gn_session *s = cpu_only() ? NULL : session_with(g, "cuda", graph == 1, 0);
            for (int run = 0; run < 5; run++) {
                float xv[3 * 16];
                for (int i = 0; i < 3 * 16; i++) xv[i] = 4.0f * urand() - 2.0f;
                gn_tensor x = {.dtype = DT_FLOAT, .rank = 2, .dims = {batches[run], 16}, .data = xv,
                               .nbytes = (size_t)batches[run] * 16 * sizeof(float)};
                gn_tensor want, got;
                char what[96];
                snprintf(what, sizeof what, "max %d allow %d graph %d run %d", cases[c].max, cases[c].allow, graph, run);
                if (gn_session_run(ref, fn, &x, 1, xn, &want, 1) != GN_OK) fail_msg("%s: cpu: %s", what, gn_session_errmsg(ref));
                if (s) {
                    if (gn_session_run(s, fn, &x, 1, xn, &got, 1) != GN_OK) fail_msg("%s: cuda: %s", what, gn_session_errmsg(s));
                    gn_compare_result r;
                    assert_int_equal(gn_tensor_compare(&got, &want, 1e-5, &r), GN_OK);
                    if (!r.match) fail_msg("%s: cuda vs cpu: %s (rel L2 %g)", what, r.why, r.rel_l2_err);
                    gn_tensor_free(&got);
                    counts_equal(what, counts_of(s), counts_of(ref));
                }
                gn_tensor_free(&want);
            }
            counts_equal("cpu after five runs", counts_of(ref), cases[c].end);
            gn_session_free(s);
            gn_session_free(ref);
            gn_graph_free(g);
        }
}

/* ---- INT8 engines ------------------------------------------------------------------------------ */
/* x [2, 9, 9, 3] -> _FusedConv2D 3x3 stride 2 SAME, bias, Relu (27 values
 * per channel: the GEMM rows are padded to 32) -> DepthwiseConv2dNative 3x3
 * VALID, multiplier 2 -> Reshape [2, 144] -> MatMul transpose_b -> Transpose
 * -> _FusedMatMul transpose_a, bias, Relu6 -> y [2, 6]: the three int8
 * kernels, both GEMM operand orders, padding and an epilogue each. */
static gn_graph *int8_graph(void)
{
    gn_pt_text t = {0}, *b = &t;
    static const struct {
        const char *name;
        int rank;
        int64_t dims[4];
    } consts[] = {{"w1", 4, {3, 3, 3, 8}}, {"b1", 1, {8}},     {"w2", 4, {3, 3, 8, 2}},
                  {"w3", 2, {10, 144}},     {"w4", 2, {10, 6}}, {"b4", 1, {6}}};
    for (size_t i = 0; i < GN__ARRAY_LEN(consts); i++) gn_pt_text_const(b, consts[i].name, consts[i].rank, consts[i].dims, &g_rng);
    gn_pt_text_add(b, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
    for (int i = 0; i < 2; i++)
        gn_pt_text_add(b, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
                          "'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: [%s] } } } }\n",
                       i ? "perm" : "shape", i ? "1, 0" : "2, 144");
    gn_pt_text_add(b, "node { name: 'c1' op: '_FusedConv2D' input: 'x' input: 'w1' input: 'b1' attr { key: 'T' value { type: "
            "DT_FLOAT } } attr { key: 'padding' value { s: 'SAME' } } attr { key: 'data_format' value { s: 'NHWC' } } "
            "attr { key: 'strides' value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: 'num_args' value { i: 1 } } "
            "attr { key: 'TArgs' value { list { type: DT_FLOAT } } } attr { key: 'fused_ops' value { list { s: "
            "'BiasAdd' s: 'Relu' } } } }\n");
    gn_pt_text_add(b, "node { name: 'd2' op: 'DepthwiseConv2dNative' input: 'c1' input: 'w2' attr { key: 'T' value { type: "
            "DT_FLOAT } } attr { key: 'padding' value { s: 'VALID' } } attr { key: 'data_format' value { s: 'NHWC' } } "
            "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } }\n");
    gn_pt_text_add(b, "node { name: 'r' op: 'Reshape' input: 'd2' input: 'shape' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_pt_text_add(b, "node { name: 'm3' op: 'MatMul' input: 'r' input: 'w3' attr { key: 'T' value { type: DT_FLOAT } } attr { "
            "key: 'transpose_b' value { b: true } } }\n");
    gn_pt_text_add(b, "node { name: 't' op: 'Transpose' input: 'm3' input: 'perm' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    gn_pt_text_add(b, "node { name: 'y' op: '_FusedMatMul' input: 't' input: 'w4' input: 'b4' attr { key: 'T' value { type: "
            "DT_FLOAT } } attr { key: 'transpose_a' value { b: true } } attr { key: 'num_args' value { i: 1 } } attr { "
            "key: 'TArgs' value { list { type: DT_FLOAT } } } attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: "
            "'Relu6' } } } }\n");
    gn_graph *g = gn_test_load_text(b->s, 1);
    gn_pt_text_free(b);
    return g;
}

static void random_input(gn_tensor *t, int32_t rank, const int64_t *dims, float scale)
{
    assert_int_equal(gn_tensor_alloc(DT_FLOAT, rank, dims, t), GN_OK);
    float *v = t->data;
    for (int64_t i = 0; i < gn_tensor_numel(t); i++) v[i] = scale * (2.0f * urand() - 1.0f);
}

/* The graph above as one INT8 engine op, calibrated on four random batches
 * (gn_calibrate): the CUDA backend's engine runs the same three int8 nodes
 * as the CPU reference, so the outputs agree within 1e-6 (relative L2; the
 * quantization, int32 sums and dequantization are computed alike, the
 * float Reshape and Transpose exactly), while both differ from float32
 * (the int8 arithmetic ran); counters agree (one build, then hits). */
static void test_engines_int8(void **state)
{
    (void)state;
    NEED_GPU();
    gn_graph *g = int8_graph();
    const char *keep[2] = {"x", "y"}, *fn[1] = {"x"}, *xn[1] = {"y"};
    static const int64_t xd[4] = {2, 9, 9, 3};
    gn_tensor x, flt;
    random_input(&x, 4, xd, 2.0f);
    gn_session *fs = session_with(g, "cpu", false, 0);
    if (gn_session_run(fs, fn, &x, 1, xn, &flt, 1) != GN_OK) fail_msg("float: %s", gn_session_errmsg(fs));
    gn_session_free(fs);
    assert_int_equal(segment_for_test(g, 2, 1, true, 2, keep, 2), 1);
    gn_tensor cal[4];
    for (int i = 0; i < 4; i++) random_input(&cal[i], 4, xd, 2.0f);
    char *rep = NULL;
    if (gn_calibrate(g, fn, 1, cal, 4, &rep) != GN_OK) fail_msg("calibrate: %s", gn_graph_errmsg(g));
    gn_free(rep);
    for (int i = 0; i < 4; i++) gn_tensor_free(&cal[i]);
    gn_session *ref = session_with(g, "cpu", false, 0);
    gn_session *s = cpu_only() ? NULL : session_with(g, "cuda", false, 0);
    for (int run = 0; run < 2; run++) {
        gn_tensor want, got;
        if (gn_session_run(ref, fn, &x, 1, xn, &want, 1) != GN_OK) fail_msg("cpu: %s", gn_session_errmsg(ref));
        gn_compare_result r;
        assert_int_equal(gn_tensor_compare(&want, &flt, 1.0, &r), GN_OK);
        print_message("int8 engine run %d: cpu int8 vs float32 rel L2 %.3g\n", run, r.rel_l2_err);
        if (!(r.rel_l2_err > 1e-5)) fail_msg("the CPU's INT8 engine agrees with float32 to %g: no int8 ran", r.rel_l2_err);
        if (s) {
            if (gn_session_run(s, fn, &x, 1, xn, &got, 1) != GN_OK) fail_msg("cuda: %s", gn_session_errmsg(s));
            assert_int_equal(gn_tensor_compare(&got, &want, 1e-6, &r), GN_OK);
            print_message("int8 engine run %d: cuda vs cpu rel L2 %.3g\n", run, r.rel_l2_err);
            if (!r.match) fail_msg("cuda vs cpu: %s (rel L2 %g)", r.why, r.rel_l2_err);
            gn_tensor_free(&got);
            counts_equal("int8 engine", counts_of(s), counts_of(ref));
        }
        gn_tensor_free(&want);
    }
    counts_equal("cpu int8 engine after two runs", counts_of(ref), (eng_counts){1, 1, 0, 0, 0});
    gn_session_free(s);
    gn_session_free(ref);
    gn_tensor_free(&x);
    gn_tensor_free(&flt);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_device),   cmocka_unit_test(test_unsupported_node), cmocka_unit_test(test_unary),
        cmocka_unit_test(test_cast),        cmocka_unit_test(test_binary),           cmocka_unit_test(test_bias_add),
        cmocka_unit_test(test_matmul),      cmocka_unit_test(test_batch_matmul),     cmocka_unit_test(test_fused_matmul),
        cmocka_unit_test(test_conv),        cmocka_unit_test(test_pool),             cmocka_unit_test(test_batch_norm),
        cmocka_unit_test(test_softmax),     cmocka_unit_test(test_array_ops),        cmocka_unit_test(test_slicing_ops),
        cmocka_unit_test(test_host_shape_ops), cmocka_unit_test(test_fused_elementwise), cmocka_unit_test(test_fused_epilogues), cmocka_unit_test(test_einsum), cmocka_unit_test(test_golden), cmocka_unit_test(test_golden_gpu_passes),
        cmocka_unit_test(test_session_options_compat), cmocka_unit_test(test_cuda_graph),
        cmocka_unit_test(test_cuda_graph_off), cmocka_unit_test(test_workspace_limit),
        cmocka_unit_test(test_engines_golden), cmocka_unit_test(test_engine_cache),
        cmocka_unit_test(test_layer_norm), cmocka_unit_test(test_fused_matmul_transposed),
        cmocka_unit_test(test_engines_int8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
