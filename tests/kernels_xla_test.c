/* CPU kernels of TensorFlow's XLA ops (src/ops/kernels/xla.c) against
 * TensorFlow: each case of tests/data/xla/ (written by
 * tools/make_xla_goldens.py) is the GraphDef of a tf.function using the op,
 * with its inputs and TensorFlow's outputs; the CPU backend runs the graph in
 * a session and must give TensorFlow's outputs. Tolerances: copies, integer
 * outputs, sorts and max reductions exact; float32 sums and dots within
 * relative L2 1e-6 (another summation order). Malformed attrs are errors
 * naming the node and the attr, checked message for message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "ops/kernel.h"
#include "ops/shape.h"
#include "passtest.h"
#include "testutil.h"

typedef struct xcase {
    const char *name;
    uint32_t n_in, n_out;
    double tol; /* 0: exact */
} xcase;

static const xcase cases[] = {
    {"dus", 3, 1, 0},           {"dus_clamp", 3, 1, 0},       {"dus_i32", 3, 1, 0},
    {"dslice", 2, 1, 0},        {"pad", 2, 1, 0},             {"gather_rows", 2, 1, 0},
    {"gather_points", 2, 1, 0}, {"scatter_add", 3, 1, 1e-6},  {"scatter_replace", 3, 1, 0},
    {"dot_batch", 2, 1, 1e-6},  {"dot_t", 2, 1, 1e-6},        {"reduce_sum", 1, 1, 1e-6},
    {"reduce_max", 1, 1, 0},    {"reduce_prod_i32", 1, 1, 0}, {"sort", 1, 1, 0},
    {"variadic_sort", 2, 2, 0}, {"einsum", 2, 1, 1e-6},       {"sharding", 1, 1, 0},
    {"barrier", 2, 2, 0},       {"dyn_set", 1, 1, 0},         {"dyn_sum", 1, 1, 1e-6},
    {"dyn_remove", 1, 1, 0},    {"vreduce", 2, 2, 1e-6},      {"vreduce_i32", 1, 1, 0},
    {"rwin_max", 1, 1, 0},      {"rwin_sum", 1, 1, 1e-6},     {"sas", 2, 1, 1e-6},
    {"sas_ties", 2, 1, 1e-6},   {"conv_nhwc", 2, 1, 1e-6},    {"conv_group", 2, 1, 1e-6},
    {"conv_lhsdil", 2, 1, 1e-6},
};

#define XC_SCALAR                                                                                                     \
    "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { " \
    "dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }"

static void read_npy(const char *name, const char *kind, uint32_t k, gn_tensor *t)
{
    char rel[256], path[4096], err[512];
    snprintf(rel, sizeof rel, "xla/%s_%s%u.npy", name, kind, k);
    gn_test_data(rel, path, sizeof path);
    if (gn_npy_read(path, t, err, sizeof err) != GN_OK) fail_msg("%s", err);
}

/* Runs case xc on backend ("cpu", "cuda") and compares with TensorFlow's outputs. */
static void run_case(const xcase *xc, const char *backend)
{
    char rel[256], path[4096], fnames[4][16], onames[4][16];
    snprintf(rel, sizeof rel, "xla/%s.pb", xc->name);
    gn_test_data(rel, path, sizeof path);
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", xc->name, gn_graph_errmsg(g));
    gn_tensor in[4], ref[4], out[4];
    const char *feeds[4], *fetches[4];
    memset(out, 0, sizeof out);
    for (uint32_t k = 0; k < xc->n_in; k++) {
        read_npy(xc->name, "in", k, &in[k]);
        snprintf(fnames[k], sizeof fnames[k], "x%u:0", k);
        feeds[k] = fnames[k];
    }
    for (uint32_t k = 0; k < xc->n_out; k++) {
        read_npy(xc->name, "out", k, &ref[k]);
        snprintf(onames[k], sizeof onames[k], "out%u:0", k);
        fetches[k] = onames[k];
    }
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = backend;
    gn_session *s = NULL;
    if (gn_session_new(g, &o, &s) != GN_OK) fail_msg("%s on %s: session: %s", xc->name, backend, gn_session_errmsg(s));
    if (gn_session_run(s, feeds, in, xc->n_in, fetches, out, xc->n_out) != GN_OK)
        fail_msg("%s on %s: run: %s", xc->name, backend, gn_session_errmsg(s));
    for (uint32_t k = 0; k < xc->n_out; k++) {
        gn_compare_result r;
        assert_int_equal(gn_tensor_compare(&out[k], &ref[k], xc->tol, &r), GN_OK);
        if (!r.match) fail_msg("%s output %u: %s (rel L2 %g)", xc->name, k, r.why, r.rel_l2_err);
        if (xc->tol == 0 && r.n_diff) fail_msg("%s output %u: %lld elements differ", xc->name, k, (long long)r.n_diff);
        gn_tensor_free(&out[k]);
        gn_tensor_free(&ref[k]);
    }
    for (uint32_t k = 0; k < xc->n_in; k++) gn_tensor_free(&in[k]);
    gn_session_free(s);
    gn_graph_free(g);
}

static void test_goldens(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) run_case(&cases[ci], "cpu");
}

/* Shape inference (the shape functions of src/ops/shape_xla.inc) gives every
 * golden output its exact static shape: the inputs have static shapes and the
 * window, size and padding inputs are constants. */
static void test_shapes(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const xcase *xc = &cases[ci];
        char rel[256], path[4096], name[16], b1[128], b2[128];
        snprintf(rel, sizeof rel, "xla/%s.pb", xc->name);
        gn_test_data(rel, path, sizeof path);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", xc->name, gn_graph_errmsg(g));
        if (gn__graph_infer_shapes(g) != GN_OK) fail_msg("%s: shapes: %s", xc->name, gn_graph_errmsg(g));
        for (uint32_t k = 0; k < xc->n_out; k++) {
            gn_tensor ref;
            read_npy(xc->name, "out", k, &ref);
            snprintf(name, sizeof name, "out%u", k);
            const gn__tinfo *t = gn__shape_of(g, gn__graph_find(g, name), 0);
            assert_non_null(t);
            gn__shape want = {ref.rank, ref.dims};
            if (!gn__shape_equal(&t->shape, &want))
                fail_msg("%s output %u: inferred %s, TensorFlow gives %s", xc->name, k, gn__shape_str(&t->shape, b1, sizeof b1),
                         gn__shape_str(&want, b2, sizeof b2));
            gn_tensor_free(&ref);
        }
        gn_graph_free(g);
    }
}

/* XlaBroadcastHelper whose broadcast_dims are fed: the lower-rank operand's
 * output has the higher rank, its dims unknown (and inference does not fail). */
static void test_shape_fed_broadcast_dims(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'l' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value "
        "{ shape { dim { size: 3 } } } } } "
        "node { name: 'r' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value "
        "{ shape { dim { size: 2 } dim { size: 3 } } } } } "
        "node { name: 'bd' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' "
        "value { shape { dim { size: 1 } } } } } "
        "node { name: 'b' op: 'XlaBroadcastHelper' input: 'l' input: 'r' input: 'bd' attr { key: 'T' value { type: "
        "DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } } }");
    assert_int_equal(gn__graph_infer_shapes(g), GN_OK);
    char buf[128];
    gn_id b = gn__graph_find(g, "b");
    assert_string_equal(gn__shape_str(&gn__shape_of(g, b, 0)->shape, buf, sizeof buf), "[?,?]");
    assert_string_equal(gn__shape_str(&gn__shape_of(g, b, 1)->shape, buf, sizeof buf), "[2,3]");
    gn_graph_free(g);
}

/* Why the CUDA backend cannot open here (no device, not built in), NULL when it can. */
static const char *cuda_missing(char *why, size_t n)
{
    gn_graph *g = gn_pt_load_text(XC_SCALAR);
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = "cuda";
    gn_session *s = NULL;
    why[0] = 0;
    if (gn_session_new(g, &o, &s) != GN_OK) snprintf(why, n, "%s", gn_session_errmsg(s));
    gn_session_free(s);
    gn_graph_free(g);
    return why[0] ? why : NULL;
}

/* The CUDA kernels of the data-movement ops (src/runtime/cuda/xla_kernels.cu)
 * on the same graphs: exact. Skipped without a CUDA device
 * (scripts/gpu-check.sh runs this suite on a GPU machine). */
static void test_goldens_cuda(void **state)
{
    (void)state;
    char why[512];
    if (cuda_missing(why, sizeof why)) {
        print_message("skipped: %s\n", why);
        skip();
    }
    static const char *const names[] = {"dus", "dus_clamp", "dus_i32", "dslice", "pad", "gather_rows", "gather_points"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
            if (!strcmp(cases[ci].name, names[i])) run_case(&cases[ci], "cuda");
}

/* A one-node graph of op with attrs, run on in: must fail with exactly msg. */
static void expect_error(const char *op, int n_in, const char *attrs, const gn__tensor *in, uint32_t n_out,
                         const char *msg)
{
    gn_graph *g = gn_pt_kgraph(op, n_in, NULL, attrs, 0);
    gn__tensor out[2];
    gn__err err;
    gn_status s = gn_pt_krun(g, in, (uint32_t)n_in, out, n_out, GN__K_REFERENCE, &err);
    gn_pt_krelease(out, n_out);
    gn_graph_free(g);
    if (s != GN_ERR_GRAPH || strcmp(err.msg, msg)) fail_msg("%s: got (%d) '%s'\nwant '%s'", op, s, err.msg, msg);
}

static void test_bad_attrs(void **state)
{
    (void)state;
    float x[6] = {0};
    int32_t idx[2] = {1, 0}, ss[2] = {1, 3};
    int64_t d23[2] = {2, 3}, d2[1] = {2}, d21[2] = {2, 1};
    gn__tensor in[3] = {gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_FLOAT, 2, d23, x),
                        gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 2, d21, idx),
                        gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 1, d2, ss)};
    /* field 1 says 5 bytes follow, 1 does */
    expect_error("XlaGather", 3, "attr { key: 'dimension_numbers' value { s: '\\n\\005\\001' } }", in, 1,
                 "node 'n' (XlaGather): attr 'dimension_numbers' does not parse as xla.GatherDimensionNumbers: field 1 "
                 "is truncated at byte 0");
    /* offset_dims [1], collapsed [0], start_index_map [0, 1] against a 1-entry index vector */
    expect_error("XlaGather", 3,
                 "attr { key: 'dimension_numbers' value { s: '\\n\\001\\001\\022\\001\\000\\032\\002\\000\\001 \\001' } }",
                 in, 1,
                 "node 'n' (XlaGather): attr 'dimension_numbers': start_index_map has 2 entries, the index vector 1");
    /* collapsed_slice_dims names dimension 5 of a rank-2 operand */
    expect_error("XlaGather", 3, "attr { key: 'dimension_numbers' value { s: '\\n\\001\\001\\022\\001\\005' } }", in, 1,
                 "node 'n' (XlaGather): attr 'dimension_numbers': collapsed_slice_dims[0] = 5 is out of range for the "
                 "operand of rank 2");
    /* wrong rank of an index operand: a [2,1] start index for a rank-2 input */
    gn__tensor dus[3] = {in[0], in[0], in[1]};
    expect_error("XlaDynamicUpdateSlice", 3, "", dus, 1,
                 "node 'n' (XlaDynamicUpdateSlice): indices must be a vector, not of rank 2");
    /* a DotDimensionNumbers with a wire type 7 field */
    gn__tensor dot[2] = {in[0], in[0]};
    expect_error("XlaDotV2", 2, "attr { key: 'dimension_numbers' value { s: '\\017' } }", dot, 1,
                 "node 'n' (XlaDotV2): attr 'dimension_numbers' does not parse as xla.DotDimensionNumbers: field 1 has "
                 "wire type 7 at byte 0");
    /* a reducer that is not in the library */
    gn__tensor red[2] = {in[0], gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_FLOAT, 0, NULL, x)};
    expect_error("XlaReduce", 2,
                 "attr { key: 'reducer' value { func { name: 'nope' } } } attr { key: 'dimensions_to_reduce' value { "
                 "list { i: 0 } } }",
                 red, 1, "node 'n' (XlaReduce): attr 'reducer' names function 'nope', which is not in the library");
    /* XlaReduceWindow: padding of rank 1 where [2, 2] is wanted */
    int32_t ones[2] = {1, 1}, pad1[2] = {0, 0}, two = 2;
    int64_t d22[2] = {2, 2};
    gn__tensor vec2 = gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 1, d2, ones);
    gn__tensor rw[7] = {in[0], red[1], vec2, vec2, vec2, vec2,
                        gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 1, d2, pad1)};
    expect_error("XlaReduceWindow", 7, "attr { key: 'computation' value { func { name: 'nope' } } }", rw, 1,
                 "node 'n' (XlaReduceWindow): padding must be of shape [2, 2] (the operand's rank)");
    /* XlaSelectAndScatter: window_dimensions of rank 2 */
    gn__tensor sas[6] = {in[0], in[1], vec2, gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 2, d22, x), in[0], red[1]};
    expect_error("XlaSelectAndScatter", 6, "", sas, 1,
                 "node 'n' (XlaSelectAndScatter): window_dimensions must be a vector, not of rank 2");
    /* XlaConvV2: a ConvolutionDimensionNumbers whose field 6 is cut short, then
     * well-formed numbers (NWC, WIO, NWC) against a rank-2 lhs */
    gn__tensor conv[7] = {in[0], in[0], vec2, vec2, vec2, vec2, gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 0, NULL, &two)};
    expect_error("XlaConvV2", 7, "attr { key: 'dimension_numbers' value { s: '\\062\\003\\000' } }", conv, 1,
                 "node 'n' (XlaConvV2): attr 'dimension_numbers' does not parse as xla.ConvolutionDimensionNumbers: "
                 "field 6 is truncated at byte 0");
    expect_error("XlaConvV2", 7,
                 "attr { key: 'dimension_numbers' value { s: "
                 "'\\030\\001\\040\\002\\062\\001\\000\\100\\002\\120\\002\\132\\001\\001\\142\\001\\001' } }",
                 conv, 1,
                 "node 'n' (XlaConvV2): attr 'dimension_numbers': 1 spatial dimensions need lhs and rhs of rank 3, not 2 "
                 "and 2");
    /* XlaSetDynamicDimensionSize: dim_index past the rank */
    gn__tensor dyn[3] = {in[0], gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 0, NULL, &two),
                         gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 0, NULL, &two)};
    expect_error("XlaSetDynamicDimensionSize", 3, "", dyn, 1,
                 "node 'n' (XlaSetDynamicDimensionSize): dim_index 2 is out of range for rank 2");
}

/* A TensorFlow graph whose variadic reducer is not a supported form: the
 * session refuses it naming the node, the attr and what the function computes. */
static void test_refused_computation(void **state)
{
    (void)state;
    char path[4096];
    gn_test_data("xla/bad_vreduce.pb", path, sizeof path);
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_session_options o;
    gn_session_options_init(&o);
    gn_session *s = NULL;
    float x[12] = {0};
    int64_t d34[2] = {3, 4};
    gn_tensor in[2];
    memset(in, 0, sizeof in);
    for (int k = 0; k < 2; k++) {
        in[k].dtype = 1; /* DT_FLOAT */
        in[k].rank = 2;
        memcpy(in[k].dims, d34, sizeof d34);
        in[k].data = x;
        in[k].nbytes = sizeof x;
    }
    const char *feeds[2] = {"x0:0", "x1:0"}, *fetch[1] = {"out0:0"};
    gn_tensor out[1];
    memset(out, 0, sizeof out);
    gn_status st = gn_session_new(g, &o, &s);
    if (st == GN_OK) st = gn_session_run(s, feeds, in, 2, fetch, out, 1);
    assert_int_not_equal(st, GN_OK);
    const char *msg = gn_session_errmsg(s);
    if (!msg || !*msg) msg = gn_graph_errmsg(g);
    if (!strstr(msg, "node 'XlaVariadicReduceV2' (XlaVariadicReduceV2): attr 'reducer' holds function '") ||
        !strstr(msg, "' whose result 0 is Sub of other values; supported: each result k Add, Mul, Maximum, Minimum, "
                     "LogicalAnd or LogicalOr of arguments k and 2+k"))
        fail_msg("got '%s'", msg);
    gn_session_free(s);
    gn_graph_free(g);
}

/* ---- constant folding through XLA ops -------------------------------------------------------- */
#define XC(name, dt, shape, vals)                                                                           \
    "node { name: '" name "' op: 'Const' attr { key: 'dtype' value { type: " dt " } } attr { key: 'value' " \
    "value { tensor { dtype: " dt " tensor_shape { " shape " } " vals " } } } } "
#define XDIM(n) "dim { size: " #n " } "
#define XT(k, dt) "attr { key: '" k "' value { type: " dt " } } "

/* A 2x2 max pool (XlaReduceWindow with a Maximum computation from the
 * library) of a constant, then an XlaDynamicSlice of its second row: both fold
 * into one Const with the values XLA gives ([14, 16]); the graph computes the
 * same before and after. */
static void test_constfold(void **state)
{
    (void)state;
    const char *text =
        XC("x", "DT_FLOAT", XDIM(4) XDIM(4),
           "float_val: 1 float_val: 2 float_val: 3 float_val: 4 float_val: 5 float_val: 6 float_val: 7 float_val: 8 "
           "float_val: 9 float_val: 10 float_val: 11 float_val: 12 float_val: 13 float_val: 14 float_val: 15 "
           "float_val: 16")
        XC("init", "DT_FLOAT", "", "float_val: -100") XC("two", "DT_INT32", XDIM(2), "int_val: 2")
        XC("one", "DT_INT32", XDIM(2), "int_val: 1") XC("pad", "DT_INT32", XDIM(2) XDIM(2), "int_val: 0")
        XC("start", "DT_INT32", XDIM(2), "int_val: 1 int_val: 0") XC("size", "DT_INT32", XDIM(2), "int_val: 1 int_val: 2")
        "node { name: 'rw' op: 'XlaReduceWindow' input: 'x' input: 'init' input: 'two' input: 'two' input: 'one' "
        "input: 'one' input: 'pad' " XT("T", "DT_FLOAT") XT("Tindices", "DT_INT32")
        "attr { key: 'computation' value { func { name: 'mx' } } } } "
        "node { name: 'ds' op: 'XlaDynamicSlice' input: 'rw' input: 'start' input: 'size' " XT("T", "DT_FLOAT")
        XT("Tindices", "DT_INT32") "} "
        "node { name: 'y' op: 'Placeholder' " XT("dtype", "DT_FLOAT") "} "
        "node { name: 'out' op: 'AddV2' input: 'y' input: 'ds' " XT("T", "DT_FLOAT") "} "
        "library { function { signature { name: 'mx' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'b' "
        "type: DT_FLOAT } output_arg { name: 'r' type: DT_FLOAT } } node_def { name: 'm' op: 'Maximum' input: 'a' "
        "input: 'b' " XT("T", "DT_FLOAT") "} ret { key: 'r' value: 'm:z:0' } } }";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "out");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(gn_pt_run_pass_on(gn__pass_constfold, "constfold", g, g, NULL, r, NULL, GN_TOGGLE_DEFAULT));
    gn_pt_expect_report(r, "constfold.fold: ds: folded into a Const");
    gn_pt_expect_dump(g, "ds=Const(); y=Placeholder(); out=AddV2(y, ds)");
    float zero[2] = {0, 0}, *got;
    int64_t d12[2] = {1, 2};
    gn_tensor ft = gn_pt_view(1, zero, sizeof zero, 2, d12), out;
    const char *fn[1] = {"y"}, *xn[1] = {"out"};
    gn_pt_expect_same_results(orig, g, fn, &ft, 1, xn, 1, 8);
    gn_pt_run_graph(g, fn, &ft, 1, xn, &out, 1);
    got = out.data;
    assert_int_equal(gn_tensor_numel(&out), 2);
    assert_true(got[0] == 14.0f && got[1] == 16.0f);
    gn_tensor_free(&out);
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

static void expect_str_attr_x(const gn_graph *g, const char *node, const char *key, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node '%s'", node);
    const char *v = NULL;
    size_t n = 0;
    if (!gn__attr_get_string(g, id, key, &v, &n)) fail_msg("%s: no attr %s", node, key);
    if (n != strlen(want) || memcmp(v, want, n)) fail_msg("%s.%s = '%.*s', want '%s'", node, key, (int)n, v, want);
}

/* ---- what the passes know of XLA ops ---------------------------------------------------------- */
#define XPH(name, shape) "node { name: '" name "' op: 'Placeholder' " XT("dtype", "DT_FLOAT") \
    "attr { key: 'shape' value { shape { " shape " } } } } "
#define XMAX_LIB                                                                                                \
    "library { function { signature { name: 'mx' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'b' " \
    "type: DT_FLOAT } output_arg { name: 'r' type: DT_FLOAT } } node_def { name: 'm' op: 'Maximum' input: 'a' "  \
    "input: 'b' " XT("T", "DT_FLOAT") "} ret { key: 'r' value: 'm:z:0' } } }"
#define XCONV(name, in, w)                                                                                    \
    "node { name: '" name "' op: 'Conv2D' input: '" in "' input: '" w "' " XT("T", "DT_FLOAT")                  \
    "attr { key: 'data_format' value { s: 'NHWC' } } attr { key: 'padding' value { s: 'SAME' } } "              \
    "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } } "

/* Feeds of the given names, each [d0, d1, d2, d3] (d3 = 0: 2-D), filled from a seed. */
typedef struct xfeeds {
    gn_tensor t[4];
    float buf[4][256];
} xfeeds;

static void xfeed(xfeeds *f, int k, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    int64_t dims[4] = {d0, d1, d2, d3};
    int rank = d3 ? 4 : 2;
    int64_t n = d0 * d1 * (d3 ? d2 * d3 : 1);
    uint32_t st = 2463534242u + (uint32_t)k;
    for (int64_t i = 0; i < n; i++) {
        st ^= st << 13;
        st ^= st >> 17;
        st ^= st << 5;
        f->buf[k][i] = (float)(st % 2001) / 1000.0f - 1.0f;
    }
    f->t[k] = gn_pt_view(1, f->buf[k], (size_t)n * sizeof(float), rank, dims);
}

static uint32_t xcount(const gn_graph *g, const char *op)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i) && !strcmp(gn__node_op(g, i), op)) n++;
    return n;
}

/* The layout optimizer on a GPU turns NHWC convolutions to NCHW; an XLA op
 * after them (its window, dimension numbers or indices name NHWC dims) is not
 * layout-agnostic: it reads its input back in NHWC through a Transpose and
 * keeps its window inputs, and the graph computes the same. */
static void test_layout_leaves_xla_ops(void **state)
{
    (void)state;
    const char *text =
        XPH("x", XDIM(1) XDIM(6) XDIM(6) XDIM(2)) XPH("w1", XDIM(3) XDIM(3) XDIM(2) XDIM(2))
        XPH("w2", XDIM(3) XDIM(3) XDIM(2) XDIM(2)) XCONV("c1", "x", "w1") XCONV("c2", "c1", "w2")
        XC("init", "DT_FLOAT", "", "float_val: -100") XC("win", "DT_INT32", XDIM(4), "int_val: 1 int_val: 2 int_val: 2 int_val: 1")
        XC("one", "DT_INT32", XDIM(4), "int_val: 1") XC("pad", "DT_INT32", XDIM(4) XDIM(2), "int_val: 0")
        "node { name: 'rw' op: 'XlaReduceWindow' input: 'c2' input: 'init' input: 'win' input: 'win' input: 'one' "
        "input: 'one' input: 'pad' " XT("T", "DT_FLOAT") XT("Tindices", "DT_INT32")
        "attr { key: 'computation' value { func { name: 'mx' } } } } "
        "node { name: 'out' op: 'Identity' input: 'rw' " XT("T", "DT_FLOAT") "} " XMAX_LIB;
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "x,w1,w2,out");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    f.target.kind = GN_TARGET_GPU;
    f.target.compute_capability = 90;
    f.target.num_gpus = 1;
    gn_pt_fx_pass(&f, "layout");
    assert_true(gn_pt_fx_run(&f, gn__pass_layout, g));
    expect_str_attr_x(g, "c2", "data_format", "NCHW");
    gn_id rw = gn__graph_find(g, "rw");
    assert_int_not_equal(rw, GN_NONE);
    const gn__node *n = gn__node_at(g, rw);
    assert_string_equal(gn__node_op(g, n->in[0].node), "Transpose");
    assert_string_equal(gn__node_name(g, n->in[2].node), "win");
    assert_string_equal(gn__node_name(g, n->in[6].node), "pad");
    assert_int_equal(xcount(g, "Transpose"), 2);
    gn_pt_fx_expect_no_event(&f, "layout.agnostic: rw");
    xfeeds fd;
    xfeed(&fd, 0, 1, 6, 6, 2);
    xfeed(&fd, 1, 3, 3, 2, 2);
    xfeed(&fd, 2, 3, 3, 2, 2);
    const char *fn[3] = {"x", "w1", "w2"}, *xn[1] = {"out"};
    gn_pt_expect_same_results(before, g, fn, fd.t, 3, xn, 1, 8);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Auto mixed precision: TensorFlow's lists (auto_mixed_precision_lists.h) hold
 * no XLA op, so an XLA op after a float16 MatMul stays float32 with a Cast
 * before it, and the Relu after it (clear list) stays float32 too. */
static void test_amp_keeps_xla_float32(void **state)
{
    (void)state;
    const char *text =
        XPH("x", XDIM(4) XDIM(8)) XPH("w", XDIM(8) XDIM(8))
        "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' " XT("T", "DT_FLOAT") "} "
        XC("start", "DT_INT32", XDIM(2), "int_val: 1 int_val: 2") XC("size", "DT_INT32", XDIM(2), "int_val: 3 int_val: 4")
        "node { name: 'ds' op: 'XlaDynamicSlice' input: 'mm' input: 'start' input: 'size' " XT("T", "DT_FLOAT")
        XT("Tindices", "DT_INT32") "} "
        "node { name: 'r' op: 'Relu' input: 'ds' " XT("T", "DT_FLOAT") "} "
        "node { name: 'y' op: 'Identity' input: 'r' " XT("T", "DT_FLOAT") "} ";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "x,w,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "auto_mixed_precision");
    f.target.kind = GN_TARGET_GPU;
    f.target.compute_capability = 90;
    f.target.num_gpus = 1;
    f.c.toggle = GN_TOGGLE_ON;
    assert_true(gn_pt_fx_run(&f, gn__pass_amp, g));
    gn_pt_expect_dump(g, "x=Placeholder(); w=Placeholder(); mm=MatMul(x-0-CastToFp16-AutoMixedPrecision, "
                         "w-0-CastToFp16-AutoMixedPrecision); start=Const(); size=Const(); "
                         "ds=XlaDynamicSlice(mm-0-CastToFp32-AutoMixedPrecision, start, size); r=Relu(ds); y=Identity(r); "
                         "x-0-CastToFp16-AutoMixedPrecision=Cast(x); w-0-CastToFp16-AutoMixedPrecision=Cast(w); "
                         "mm-0-CastToFp32-AutoMixedPrecision=Cast(mm)");
    int dt = 0;
    assert_true(gn__attr_get_type(g, gn__graph_find(g, "ds"), "T", &dt));
    assert_int_equal(dt, 1);
    xfeeds fd;
    xfeed(&fd, 0, 4, 8, 0, 0);
    xfeed(&fd, 1, 8, 8, 0, 0);
    gn_tensor a, b;
    const char *fn[2] = {"x", "w"}, *xn[1] = {"y"};
    gn_pt_run_graph(before, fn, fd.t, 2, xn, &a, 1);
    gn_pt_run_graph(g, fn, fd.t, 2, xn, &b, 1);
    gn_compare_result cr;
    assert_int_equal(gn_tensor_compare(&b, &a, 1e-2, &cr), GN_OK);
    if (!cr.match) fail_msg("y differs: %s (rel L2 %g)", cr.why, cr.rel_l2_err);
    gn_tensor_free(&a);
    gn_tensor_free(&b);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Arithmetic: Neg(Neg(x)) is x, but not across an XlaOptimizationBarrier or an
 * XlaSharding (not value-preserving ops the involution stage looks through),
 * and two XlaSharding in a row are not merged (no idempotence): the graph is
 * left as it is. */
static void test_arithmetic_leaves_xla_ops(void **state)
{
    (void)state;
    const char *text =
        XPH("x", XDIM(2) XDIM(3))
        "node { name: 'n1' op: 'Neg' input: 'x' " XT("T", "DT_FLOAT") "} "
        "node { name: 'b' op: 'XlaOptimizationBarrier' input: 'n1' attr { key: 'T' value { list { type: DT_FLOAT } } } } "
        "node { name: 'n2' op: 'Neg' input: 'b' " XT("T", "DT_FLOAT") "} "
        "node { name: 's1' op: 'XlaSharding' input: 'n2' " XT("T", "DT_FLOAT") "} "
        "node { name: 's2' op: 'XlaSharding' input: 's1' " XT("T", "DT_FLOAT") "} "
        "node { name: 'n3' op: 'Neg' input: 's2' " XT("T", "DT_FLOAT") "} "
        "node { name: 'y' op: 'Identity' input: 'n3' " XT("T", "DT_FLOAT") "} ";
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "arithmetic");
    assert_false(gn_pt_fx_run(&f, gn__pass_arithmetic, g));
    gn_pt_expect_dump(g, "x=Placeholder(); n1=Neg(x); b=XlaOptimizationBarrier(n1); n2=Neg(b); s1=XlaSharding(n2); "
                         "s2=XlaSharding(s1); n3=Neg(s2); y=Identity(n3)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_goldens_cuda),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_shape_fed_broadcast_dims),
        cmocka_unit_test(test_bad_attrs),
        cmocka_unit_test(test_refused_computation),
        cmocka_unit_test(test_constfold),
        cmocka_unit_test(test_layout_leaves_xla_ops),
        cmocka_unit_test(test_amp_keeps_xla_float32),
        cmocka_unit_test(test_arithmetic_leaves_xla_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
