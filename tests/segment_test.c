/* Engine conversion (src/convert/): ConversionParams with TensorFlow's
 * defaults and validation, the segmenter (refusals with reasons, cycles
 * avoided, minimum_segment_size, constants copied in, dry run) and the
 * converted graphs run on the CPU backend against the originals: the small
 * graphs here and every golden model. */
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
#define UND(n, op, in, dev) "node { name: '" n "' op: '" op "' input: '" in "' device: '" dev "' " TF "}\n"
#define BIN(n, op, a, b) "node { name: '" n "' op: '" op "' input: '" a "' input: '" b "' " TF "}\n"
#define CONST(n, v)                                                                                                  \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"

static float xs[6] = {-1.5f, 2.0f, 0.25f, -3.0f, 4.0f, 0.5f};
static const int64_t d6[1] = {6};

/* ---- params ------------------------------------------------------------------------------- */
static void test_params(void **state)
{
    (void)state;
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char *t = NULL;
    assert_int_equal(gn_conversion_params_to_string(&p, &t), GN_OK);
    assert_string_equal(t, "{'max_workspace_size_bytes': 1073741824, 'precision_mode': 'FP32', "
                           "'minimum_segment_size': 3, 'maximum_cached_engines': 1, 'use_calibration': True, "
                           "'allow_build_at_runtime': True}");
    gn_free(t);
    char err[512];
    assert_int_equal(gn_conversion_params_parse(&p, "{'precision_mode': 'fp16', 'minimum_segment_size': 5, "
                                                    "\"allow_build_at_runtime\": False}",
                                                err, sizeof err),
                     GN_OK);
    assert_int_equal(p.precision_mode, GN_PRECISION_FP16);
    assert_int_equal(p.minimum_segment_size, 5);
    assert_int_equal(p.allow_build_at_runtime, 0);
    assert_int_equal(gn_conversion_params_parse(&p, "{'minimum_segment_size': None}", err, sizeof err), GN_OK);
    assert_int_equal(p.minimum_segment_size, 3);
    assert_int_equal(gn_conversion_params_parse(&p, "{'minimum_segment_size': 0}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "minimum_segment_size should be positive or -1 (to disable main graph conversion), got 0");
    assert_int_equal(p.minimum_segment_size, 3); /* unchanged on error */
    assert_int_equal(gn_conversion_params_parse(&p, "{'precision_mode': 'FP64'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "precision_mode 'FP64' is not one of FP32, FP16, INT8 (either case)");
    assert_int_equal(gn_conversion_params_parse(&p, "{'max_batch_size': 4}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "unknown conversion parameter 'max_batch_size' (valid: max_workspace_size_bytes, "
                             "precision_mode, minimum_segment_size, maximum_cached_engines, use_calibration, "
                             "allow_build_at_runtime)");
    assert_int_equal(gn_conversion_params_parse(&p, "{'maximum_cached_engines': 0}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "maximum_cached_engines must be >= 1, got 0");
    assert_int_equal(gn_conversion_params_parse(&p, "{'minimum_segment_size': -1}", err, sizeof err), GN_OK);
    /* the text is Python's: escapes, bare keys, 1_000, comments; syntax errors name the offset */
    assert_int_equal(gn_conversion_params_parse(&p, "{'precision_mode': 'FP\\x316', max_workspace_size_bytes: 1_000,"
                                                    " # bytes\n}",
                                                err, sizeof err),
                     GN_OK);
    assert_int_equal(p.precision_mode, GN_PRECISION_FP16);
    assert_int_equal(p.max_workspace_size_bytes, 1000);
    assert_int_equal(gn_conversion_params_parse(&p, "", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "conversion params: at offset 0: expected '{'");
    assert_int_equal(gn_conversion_params_parse(&p, "{'use_calibration': True 'x': 1}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "conversion params: at offset 25: expected ',' or '}'");
    assert_int_equal(gn_conversion_params_parse(&p, "{'use_calibration': }", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "conversion params: at offset 20: expected a value");
    assert_int_equal(gn_conversion_params_parse(&p, "{'use_calibration': 'True'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "use_calibration: 'True' is not True, False or None");
    assert_int_equal(gn_conversion_params_parse(&p, "{'minimum_segment_size': 99999999999}", err, sizeof err),
                     GN_ERR_ARG);
    assert_string_equal(err, "minimum_segment_size: 99999999999 is out of range");
}

/* ---- segmenting -------------------------------------------------------------------------------- */
static const char *k_chain = PH("x") UN("a", "Relu", "x") UN("b", "Exp", "a") UND("c", "Neg", "b", "/device:GPU:0")
    UN("d", "Tanh", "c") UN("e", "Sigmoid", "d") UN("f", "Square", "e") UN("y", "Identity", "f");

static gn_graph *segment(const char *text, const char *params, int dry, char **rep, size_t *n)
{
    gn_graph *g = gn_pt_load_text(text);
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char err[256];
    if (params) assert_int_equal(gn_conversion_params_parse(&p, params, err, sizeof err), GN_OK);
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    const char *keep[2] = {"x", "y"};
    sp.preserve = keep;
    sp.n_preserve = 2;
    sp.dry_run = dry;
    gn_status s = gn_segment(g, &p, &sp, rep, n);
    if (s != GN_OK) fail_msg("gn_segment: %s", gn_graph_errmsg(g));
    return g;
}

static void expect_same(const char *text, gn_graph *g)
{
    gn_graph *orig = gn_pt_load_text(text);
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_check_same(orig, g, fn, &t, 1, xn, 1);
    gn_graph_free(orig);
}

static void test_chain(void **state)
{
    (void)state;
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(k_chain, "{'minimum_segment_size': 2}", 0, &rep, &n);
    assert_int_equal(n, 2);
    gn_pt_expect_dump(g, "x=Placeholder(); c=Neg(GrapnelEngineOp_000_000)@/device:GPU:0; y=Identity(GrapnelEngineOp_000_001); "
                         "GrapnelEngineOp_000_000=Grapnel>EngineOp(x); GrapnelEngineOp_000_001=Grapnel>EngineOp(c)");
    assert_non_null(strstr(rep, "not converted: c (Neg): placed on '/device:GPU:0', not on the cpu backend's device\n"));
    assert_non_null(strstr(rep, "not converted: y (Identity): is a graph input or output (preserved)\n"));
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000: 2 node(s), 1 input(s), 1 output(s), 0 constant(s) "
                                "copied in: a b\n"));
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_001: 3 node(s), 1 input(s), 1 output(s), 0 constant(s) "
                                "copied in: d e f\n"));
    assert_non_null(strstr(rep, "2 engine(s), 0 segment(s) left native\n"));
    /* the kept segment and the engine's attrs */
    gn_id e = gn__graph_find(g, "GrapnelEngineOp_000_001");
    const Tensorflow__AttrValue *f = gn__node_attr(g, e, "segment_func");
    assert_string_equal(f->func->name, "GrapnelEngineOp_000_001_native_segment");
    const gn__function *fn = gn__graph_find_function(g, "GrapnelEngineOp_000_001_native_segment");
    assert_non_null(fn);
    gn_pt_expect_dump(fn->body, "GrapnelInputPH_0=_Arg(); d=Tanh(GrapnelInputPH_0); e=Sigmoid(d); f=Square(e); "
                                "_retval:GrapnelOutputPH_0=_Retval(f)");
    const char *pm;
    size_t pl;
    assert_true(gn__attr_get_string(g, e, "precision_mode", &pm, &pl));
    assert_int_equal(pl, 4);
    assert_memory_equal(pm, "FP32", 4);
    gn_pt_check_valid(g, "segmented chain");
    expect_same(k_chain, g);
    gn_free(rep);
    gn_graph_free(g);
    /* minimum_segment_size 3: the two-node segment stays native */
    g = segment(k_chain, NULL, 0, &rep, &n);
    assert_int_equal(n, 1);
    assert_non_null(strstr(rep, "segment of 2 node(s) starting at a stays native: 2 effective node(s), "
                                "minimum_segment_size is 3\n"));
    gn_pt_expect_dump(g, "x=Placeholder(); a=Relu(x); b=Exp(a); c=Neg(b)@/device:GPU:0; y=Identity(GrapnelEngineOp_000_000); "
                         "GrapnelEngineOp_000_000=Grapnel>EngineOp(c)");
    expect_same(k_chain, g);
    gn_free(rep);
    gn_graph_free(g);
    /* -1: nothing converted */
    g = segment(k_chain, "{'minimum_segment_size': -1}", 0, &rep, &n);
    assert_int_equal(n, 0);
    gn_free(rep);
    gn_graph_free(g);
}

/* a -> b (refused) -> c and a -> c: a and c together would need b inside. */
static void test_no_cycle(void **state)
{
    (void)state;
    const char *text = PH("x") UN("a", "Relu", "x") UND("b", "Exp", "a", "/device:GPU:0") BIN("c", "AddV2", "a", "b")
        UN("y", "Identity", "c");
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, "{'minimum_segment_size': 1}", 0, &rep, &n);
    assert_int_equal(n, 2);
    gn_pt_expect_dump(g, "x=Placeholder(); b=Exp(GrapnelEngineOp_000_000)@/device:GPU:0; y=Identity(GrapnelEngineOp_000_001); "
                         "GrapnelEngineOp_000_000=Grapnel>EngineOp(x); "
                         "GrapnelEngineOp_000_001=Grapnel>EngineOp(GrapnelEngineOp_000_000, b)");
    gn_pt_check_valid(g, "no cycle");
    expect_same(text, g);
    gn_free(rep);
    gn_graph_free(g);
}

/* Two clusters that are each convex but would read each other through
 * outside nodes (a1 -> w -> b1, b2 -> v -> a2): one merge must be refused. */
static void test_no_cycle_between_clusters(void **state)
{
    (void)state;
    const char *text = PH("x") UN("a1", "Relu", "x") UND("w", "Exp", "a1", "/device:GPU:0") UN("b2", "Tanh", "x")
        BIN("b1", "AddV2", "w", "b2") UND("v", "Sigmoid", "b2", "/device:GPU:0") BIN("a2", "AddV2", "a1", "v")
        BIN("y", "AddV2", "a2", "b1");
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, "{'minimum_segment_size': 1}", 0, &rep, &n);
    gn_pt_check_valid(g, "two clusters");
    assert_int_equal(n, 3);
    expect_same(text, g);
    gn_free(rep);
    gn_graph_free(g);
}

/* A variable's reference output feeding a segment: the engine takes its value. */
static void test_ref_input(void **state)
{
    (void)state;
    const char *text = PH("x")
        "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'shape' value { shape { dim { size: 6 } } } } }\n"
        BIN("a", "Mul", "x", "v") UN("b", "Exp", "a") UN("c", "Neg", "b") UN("y", "Identity", "c");
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, NULL, 0, &rep, &n);
    assert_int_equal(n, 1);
    gn_pt_check_valid(g, "ref input");
    const Tensorflow__AttrValue *in = gn__node_attr(g, gn__graph_find(g, "GrapnelEngineOp_000_000"), "InT");
    assert_int_equal(in->list->n_type, 2);
    assert_int_equal(in->list->type[0], DT_FLOAT);
    assert_int_equal(in->list->type[1], DT_FLOAT);
    gn_free(rep);
    gn_graph_free(g);
}

/* Constants are copied in; Identity does not count toward the size. */
static void test_consts_and_identity(void **state)
{
    (void)state;
    const char *text = PH("x") CONST("k", "2.5") BIN("a", "Mul", "x", "k") UN("i1", "Identity", "a")
        UN("i2", "Identity", "i1") BIN("b", "AddV2", "i2", "k") UN("y", "Identity", "b");
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, NULL, 0, &rep, &n);
    assert_int_equal(n, 0); /* 2 effective nodes < 3 */
    assert_non_null(strstr(rep, "segment of 4 node(s) starting at a stays native: 2 effective node(s), "
                                "minimum_segment_size is 3\n"));
    gn_free(rep);
    gn_graph_free(g);
    g = segment(text, "{'minimum_segment_size': 2}", 0, &rep, &n);
    assert_int_equal(n, 1);
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000: 4 node(s), 1 input(s), 1 output(s), 1 constant(s) "
                                "copied in: a i1 i2 b\n"));
    const gn__function *fn = gn__graph_find_function(g, "GrapnelEngineOp_000_000_native_segment");
    gn_pt_expect_dump(fn->body, "GrapnelInputPH_0=_Arg(); k=Const(); a=Mul(GrapnelInputPH_0, k); i1=Identity(a); "
                                "i2=Identity(i1); b=AddV2(i2, k); _retval:GrapnelOutputPH_0=_Retval(b)");
    expect_same(text, g);
    gn_free(rep);
    gn_graph_free(g);
}

static void test_dry_run(void **state)
{
    (void)state;
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(k_chain, "{'minimum_segment_size': 2}", 1, &rep, &n);
    assert_int_equal(n, 2);
    gn_pt_expect_dump(g, "x=Placeholder(); a=Relu(x); b=Exp(a); c=Neg(b)@/device:GPU:0; d=Tanh(c); e=Sigmoid(d); "
                         "f=Square(e); y=Identity(f)");
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000 (dry run): 2 node(s): a b\n"));
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_001 (dry run): 3 node(s): d e f\n"));
    assert_non_null(strstr(rep, "2 engine(s) (dry run), 0 segment(s) left native\n"));
    /* preserve marks were the call's only */
    assert_int_equal(g->nodes[gn__graph_find(g, "y")].flags & GN__NODE_PRESERVE, 0);
    gn_free(rep);
    gn_graph_free(g);
}

/* ---- the engine cache ------------------------------------------------------------------------------ */
static void run_len(gn_session *s, int64_t n)
{
    float v[8] = {0.5f, -1, 2, 0.25f, -3, 1.5f, 4, -0.5f};
    gn_tensor t = gn_pt_view(DT_FLOAT, v, (size_t)n * sizeof(float), 1, &n);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_tensor out;
    memset(&out, 0, sizeof out);
    if (gn_session_run(s, fn, &t, 1, xn, &out, 1) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    assert_int_equal(out.dims[0], n);
    /* y = square(sigmoid(tanh(-exp(relu(x))))) */
    for (int64_t i = 0; i < n; i++) {
        float a = v[i] > 0 ? v[i] : 0, w = 1.0f / (1.0f + expf(-tanhf(-expf(a))));
        float got = ((float *)out.data)[i];
        if (fabsf(got - w * w) > 1e-6f) fail_msg("y[%lld] = %g, want %g", (long long)i, got, w * w);
    }
    gn_tensor_free(&out);
}

static void expect_counts(gn_session *s, uint64_t hits, uint64_t builds, uint64_t evictions, uint64_t fallbacks)
{
    gn__engine_stats st;
    uint32_t ne = 0;
    assert_int_equal(gn__session_stats(s, &st, &ne), GN_OK);
    if (st.eng_hits != hits || st.eng_builds != builds || st.eng_evictions != evictions || st.eng_fallbacks != fallbacks)
        fail_msg("hits %llu builds %llu evictions %llu fallbacks %llu; want %llu %llu %llu %llu",
                 (unsigned long long)st.eng_hits, (unsigned long long)st.eng_builds,
                 (unsigned long long)st.eng_evictions, (unsigned long long)st.eng_fallbacks,
                 (unsigned long long)hits, (unsigned long long)builds, (unsigned long long)evictions,
                 (unsigned long long)fallbacks);
}

static void test_engine_cache(void **state)
{
    (void)state;
    /* one engine (d, e, f) after c on the GPU; a, b stay native (minimum_segment_size 3) */
    gn_graph *g = segment(k_chain, "{'maximum_cached_engines': 2}", 0, NULL, NULL);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run_len(s, 6);
    expect_counts(s, 0, 1, 0, 0);
    run_len(s, 3);
    expect_counts(s, 0, 2, 0, 0);
    run_len(s, 6);
    expect_counts(s, 1, 2, 0, 0);
    run_len(s, 2); /* full: the least recently used ([3]) goes */
    expect_counts(s, 1, 3, 1, 0);
    run_len(s, 6);
    expect_counts(s, 2, 3, 1, 0);
    run_len(s, 3); /* [3] was evicted: built again, [2] goes */
    expect_counts(s, 2, 4, 2, 0);
    gn_session_free(s);
    gn_graph_free(g);
    /* no building at run time: every run is the native segment */
    g = segment(k_chain, "{'allow_build_at_runtime': False}", 0, NULL, NULL);
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    run_len(s, 6);
    run_len(s, 6);
    expect_counts(s, 0, 0, 0, 2);
    gn_session_free(s);
    gn_graph_free(g);
}

/* FP16: a float16 copy of the segment is what engines run; inputs and
 * outputs keep their types; the native segment stays float32. */
static void test_fp16_engine(void **state)
{
    (void)state;
    gn_graph *g = segment(k_chain, "{'precision_mode': 'FP16'}", 0, NULL, NULL);
    const gn__function *fn = gn__graph_find_function(g, "GrapnelEngineOp_000_000_fp16_segment");
    assert_non_null(fn);
    gn_pt_expect_dump(fn->body, "GrapnelInputPH_0=_Arg(); d=Tanh(GrapnelInputPH_0-0-CastToFp16); e=Sigmoid(d); "
                                "f=Square(e); _retval:GrapnelOutputPH_0=_Retval(f-0-CastToFp32); "
                                "GrapnelInputPH_0-0-CastToFp16=Cast(GrapnelInputPH_0); f-0-CastToFp32=Cast(f)");
    int dt = 0;
    assert_true(gn__attr_get_type(fn->body, gn__graph_find(fn->body, "e"), "T", &dt));
    assert_int_equal(dt, 19);
    const Tensorflow__AttrValue *ef = gn__node_attr(g, gn__graph_find(g, "GrapnelEngineOp_000_000"), "_engine_func");
    assert_string_equal(ef->func->name, "GrapnelEngineOp_000_000_fp16_segment");
    gn_pt_check_valid(g, "fp16 chain");
    /* what it computes: float16 rounding, within 1e-2 of float32 */
    gn_graph *orig = gn_pt_load_text(k_chain);
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), a, b;
    const char *fnm[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_run_graph(orig, fnm, &t, 1, xn, &a, 1);
    gn_pt_run_graph(g, fnm, &t, 1, xn, &b, 1);
    gn_compare_result r;
    memset(&r, 0, sizeof r);
    gn_tensor_compare(&b, &a, 1e-2, &r);
    assert_true(r.match);
    assert_true(r.rel_l2_err > 0); /* it did run in float16 */
    gn_tensor_free(&a);
    gn_tensor_free(&b);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* FP16 with FusedBatchNormV3: x and y in half, scale, offset, mean and variance
 * (typed U) stay float32 Consts, as TensorFlow's kernel requires; the engine
 * runs on the CPU within float16's precision of the float graph. */
#define VEC3(n, a, b, c)                                                                                             \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: " a " float_val: " b " float_val: " c    \
    " } } } }\n"
static const char *k_fbn =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { "
    "shape { dim { size: 1 } dim { size: 2 } dim { size: 2 } dim { size: 3 } } } } }\n" VEC3("scale", "1.5", "0.5", "2")
        VEC3("offset", "0.25", "-1", "0") VEC3("mean", "0.5", "-0.5", "1") VEC3("var", "4", "1", "0.25")
    "node { name: 'bn' op: 'FusedBatchNormV3' input: 'x' input: 'scale' input: 'offset' input: 'mean' input: 'var' "
    "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } "
    "attr { key: 'epsilon' value { f: 0.001 } } attr { key: 'is_training' value { b: false } } "
    "attr { key: 'data_format' value { s: 'NHWC' } } }\n" UN("r", "Relu", "bn") UN("t", "Tanh", "r")
        UN("y", "Identity", "t");

static void test_fp16_batch_norm(void **state)
{
    (void)state;
    gn_graph *g = segment(k_fbn, "{'precision_mode': 'FP16'}", 0, NULL, NULL);
    const gn__function *fn = gn__graph_find_function(g, "GrapnelEngineOp_000_000_fp16_segment");
    assert_non_null(fn);
    const gn_graph *b = fn->body;
    gn_id bn = gn__graph_find(b, "bn");
    assert_int_not_equal(bn, GN_NONE);
    int dt = 0;
    assert_true(gn__attr_get_type(b, bn, "T", &dt));
    assert_int_equal(dt, 19);
    assert_true(gn__attr_get_type(b, bn, "U", &dt));
    assert_int_equal(dt, 1);
    /* inputs 1-4 read float32 Consts, not casts of half ones */
    for (uint32_t k = 1; k <= 4; k++) {
        gn_id c = b->nodes[bn].in[k].node;
        assert_string_equal(gn__node_op(b, c), "Const");
        assert_int_equal(gn__node_attr(b, c, "value")->tensor->dtype, 1);
    }
    assert_string_equal(gn__node_op(b, b->nodes[bn].in[0].node), "Cast");
    gn_pt_check_valid(g, "fp16 batch norm");
    float xv[12] = {-1.5f, 2.0f, 0.25f, -3.0f, 4.0f, 0.5f, 1.0f, -0.75f, 3.0f, 0.125f, -2.0f, 1.75f};
    int64_t xd[4] = {1, 2, 2, 3};
    gn_graph *orig = gn_pt_load_text(k_fbn);
    gn_tensor t = gn_pt_view(DT_FLOAT, xv, sizeof xv, 4, xd), a, r16;
    const char *fnm[1] = {"x"}, *xn[1] = {"y"};
    gn_pt_run_graph(orig, fnm, &t, 1, xn, &a, 1);
    gn_pt_run_graph(g, fnm, &t, 1, xn, &r16, 1);
    gn_compare_result r;
    memset(&r, 0, sizeof r);
    gn_tensor_compare(&r16, &a, 1e-2, &r);
    assert_true(r.match);
    assert_true(r.rel_l2_err > 0); /* it did run in float16 */
    gn_tensor_free(&a);
    gn_tensor_free(&r16);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* ---- golden models: converted graphs give what the originals give ------------------------------- */
static void golden_at(const char *params, double tol)
{
    gn_pt_golden m[16];
    size_t nm = gn_pt_read_manifest(m, 16);
    size_t done = 0;
    for (size_t i = 0; i < nm; i++) {
        gn_graph *orig = NULL, *g = NULL;
        gn_tensor feeds[4];
        const char *fnames[4], *xnames[4];
        if (!gn_pt_golden_open(&m[i], &orig, feeds, fnames, xnames, false)) continue;
        g = gn_pt_clone(orig);
        const char *keep[8];
        size_t nk = 0;
        for (size_t k = 0; k < m[i].nf; k++) keep[nk++] = m[i].feed[k];
        for (size_t k = 0; k < m[i].nx; k++) keep[nk++] = m[i].fetch[k];
        gn_conversion_params p;
        gn_conversion_params_init(&p);
        char perr[256];
        assert_int_equal(gn_conversion_params_parse(&p, params, perr, sizeof perr), GN_OK);
        gn_segment_params sp;
        gn_segment_params_init(&sp);
        sp.preserve = keep;
        sp.n_preserve = nk;
        size_t n = 0;
        if (gn_segment(g, &p, &sp, NULL, &n) != GN_OK) fail_msg("%s: %s", m[i].name, gn_graph_errmsg(g));
        gn_pt_check_valid(g, m[i].name);
        gn_tensor want[4], got[4];
        gn_pt_run_graph(orig, fnames, feeds, m[i].nf, xnames, want, m[i].nx);
        gn_pt_run_graph(g, fnames, feeds, m[i].nf, xnames, got, m[i].nx);
        double worst = 0;
        for (size_t k = 0; k < m[i].nx; k++) {
            gn_compare_result r;
            memset(&r, 0, sizeof r);
            gn_tensor_compare(&got[k], &want[k], tol, &r);
            if (!r.match)
                fail_msg("%s %s: fetch %s: rel L2 %.3e above %g (%s)", m[i].name, params, xnames[k], r.rel_l2_err, tol,
                         r.why);
            if (r.rel_l2_err > worst) worst = r.rel_l2_err;
            gn_tensor_free(&want[k]);
            gn_tensor_free(&got[k]);
        }
        print_message("segment %s: %s: %zu engine(s), %zu nodes left, rel L2 %.2e\n", params, m[i].name, n,
                      gn_graph_node_count(g), worst);
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&feeds[k]);
        gn_graph_free(orig);
        gn_graph_free(g);
        done++;
    }
    assert_true(done >= 5);
}

/* Random DAGs with long edges and a quarter of the nodes on another device
 * (outside every engine): many merges would close a cycle through those nodes,
 * found only by searching past the consumer cluster's earlier producers. The
 * segmented graphs must stay acyclic and compute what the originals do. */
/* n_graphs random DAGs of N nodes; with hubs, a long input reads one of the
 * first four nodes half of the time (hundreds of consumers each). */
static size_t random_dags(int N, int n_graphs, bool hubs)
{
    static const char *const un[4] = {"Tanh", "Sigmoid", "Neg", "Relu"};
    static const char *const bin[2] = {"Maximum", "Minimum"};
    const size_t CAP = 400 * (size_t)N + 4096;
    char *text = malloc(CAP);
    assert_non_null(text);
    uint32_t rng = 12345u;
#define RND() (rng = rng * 1664525u + 1013904223u, rng >> 8)
    size_t engines_total = 0;
    for (int seed = 0; seed < n_graphs; seed++) {
        size_t o = (size_t)snprintf(text, CAP, "%s", PH("x"));
        for (int i = 0; i < N; i++) {
            char a[16], b[16], nm[16];
            snprintf(nm, sizeof nm, "n%d", i);
            if (i == 0) snprintf(a, sizeof a, "x");
            else snprintf(a, sizeof a, "n%u", (unsigned)(RND() % (uint32_t)i));
            const char *dev = RND() % 4 == 0 ? "/device:GPU:0" : "";
            if (i > 1 && RND() % 2) {
                /* one recent input, one from anywhere before: long edges */
                int back = (int)(RND() % 3);
                if (back > i - 1) back = 0;
                snprintf(a, sizeof a, "n%d", i - 1 - back);
                uint32_t from = (uint32_t)i;
                if (hubs && i > 4 && RND() % 2) from = 4;
                snprintf(b, sizeof b, "n%u", (unsigned)(RND() % from));
                o += (size_t)snprintf(text + o, CAP - o,
                                      "node { name: '%s' op: '%s' input: '%s' input: '%s' device: '%s' " TF "}\n", nm,
                                      bin[RND() % 2], a, b, dev);
            } else {
                o += (size_t)snprintf(text + o, CAP - o, "node { name: '%s' op: '%s' input: '%s' device: '%s' " TF "}\n",
                                      nm, un[RND() % 4], a, dev);
            }
        }
        /* y reads every node nothing else reads (all of them reach the output) */
        o += (size_t)snprintf(text + o, CAP - o, "node { name: 'y' op: 'AddN' ");
        int nread = 0;
        for (int i = 0; i < N; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "n%d", i);
            char pat[32];
            snprintf(pat, sizeof pat, "input: '%s'", nm);
            if (strstr(text, pat)) continue;
            o += (size_t)snprintf(text + o, CAP - o, "input: '%s' ", nm);
            nread++;
        }
        o += (size_t)snprintf(text + o, CAP - o,
                              "attr { key: 'N' value { i: %d } } " TF "}\n", nread);
        assert_true(o < CAP);
        char *rep = NULL;
        size_t n = 0;
        gn_graph *g = segment(text, "{'minimum_segment_size': 1}", 0, &rep, &n);
        engines_total += n;
        gn_pt_check_valid(g, "segmented random DAG");
        expect_same(text, g);
        gn_free(rep);
        gn_graph_free(g);
    }
#undef RND
    free(text);
    return engines_total;
}

static void test_random_dag_no_cycle(void **state)
{
    (void)state;
    assert_true(random_dags(48, 24, false) >= 24);
}

/* Bigger clusters read by many outside producers: their producer lists span
 * many chunks, searches run out of budget part way through one, and walks
 * empty and free chunks that later lists reuse. */
static void test_random_dag_long_lists(void **state)
{
    (void)state;
    assert_true(random_dags(400, 3, true) >= 3);
    assert_true(random_dags(400, 3, false) >= 3);
}

/* An engine op's signature holds at most 65535 inputs and outputs: a is read
 * by 40000 nodes on another device, b by 30000; each fits, together they may
 * not (the bound counts the edges leaving the cluster), so a and b become two
 * engines instead of one the op could not describe. */
static void test_boundary_limit(void **state)
{
    (void)state;
    enum { NA = 40000, NB = 30000 };
    size_t cap = (size_t)(NA + NB) * 128 + 1024, o = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "%s%s%s%s", PH("x"), UN("a", "Relu", "x"), UN("b", "Tanh", "a"),
                          UN("y", "Identity", "b"));
    for (int i = 0; i < NA + NB; i++)
        o += (size_t)snprintf(text + o, cap - o,
                              "node { name: 'g%d' op: 'Neg' input: '%s' device: '/device:GPU:0' " TF "}\n", i,
                              i < NA ? "a" : "b");
    assert_true(o < cap);
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, "{'minimum_segment_size': 1}", 1, &rep, &n);
    assert_int_equal(n, 2);
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000 (dry run): 1 node(s): a\n"));
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_001 (dry run): 1 node(s): b\n"));
    gn_free(rep);
    gn_graph_free(g);
    /* with 20000 readers of a, they merge */
    snprintf(text, cap, "%s%s%s%s", PH("x"), UN("a", "Relu", "x"), UN("b", "Tanh", "a"), UN("y", "Identity", "b"));
    o = strlen(text);
    for (int i = 0; i < 20000 + NB; i++)
        o += (size_t)snprintf(text + o, cap - o,
                              "node { name: 'g%d' op: 'Neg' input: '%s' device: '/device:GPU:0' " TF "}\n", i,
                              i < 20000 ? "a" : "b");
    g = segment(text, "{'minimum_segment_size': 1}", 1, &rep, &n);
    assert_int_equal(n, 1);
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000 (dry run): 2 node(s): a b\n"));
    gn_free(rep);
    gn_graph_free(g);
    free(text);
}

/* A node's fanouts by name ("o2:0 y:4"), control consumers after '|'. */
static void expect_fanouts(const gn_graph *g, const char *node, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node %s", node);
    const gn__node *nd = &g->nodes[id];
    char got[1024] = "";
    size_t o = 0;
    for (uint32_t k = 0; k < nd->n_use && o < sizeof got; k++)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%s:%u", k ? " " : "", gn__node_name(g, nd->use[k].node),
                              nd->use[k].slot);
    for (uint32_t k = 0; k < nd->n_cuse && o < sizeof got; k++)
        o += (size_t)snprintf(got + o, sizeof got - o, "%s%s", k ? " " : "|", gn__node_name(g, nd->cuse[k]));
    if (strcmp(got, want) != 0) fail_msg("fanouts of %s: '%s', wanted '%s'", node, got, want);
}

/* After conversion every list is exact: the engine lists the outside readers
 * output by output, each member's in its own order; producers keep their
 * other consumers in order and list the engine last; control edges into
 * members move to the engine once; a constant only members read is gone, one
 * also read outside stays. */
static void test_fanouts_after_conversion(void **state)
{
    (void)state;
    const char *text = PH("x") CONST("k", "2.5") CONST("k2", "0.5") UND("h", "Exp", "x", "/device:GPU:0")
        UN("a", "Relu", "h") UND("o1", "Neg", "h", "/device:GPU:0") BIN("b", "AddV2", "a", "h")
        UND("o2", "Sigmoid", "a", "/device:GPU:0")
        "node { name: 'c' op: 'Mul' input: 'b' input: 'k' input: '^o1' " TF "}\n"
        "node { name: 'o3' op: 'Mul' input: 'b' input: 'k2' device: '/device:GPU:0' " TF "}\n"
        "node { name: 'd' op: 'Mul' input: 'c' input: 'k2' input: '^o1' " TF "}\n"
        "node { name: 'y' op: 'AddN' input: 'd' input: 'o2' input: 'o3' input: 'o1' input: 'a' "
        "attr { key: 'N' value { i: 5 } } " TF "}\n"
        "node { name: 'z' op: 'NoOp' input: '^b' }\n";
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, NULL, 0, &rep, &n);
    assert_int_equal(n, 1);
    assert_non_null(strstr(rep, "engine GrapnelEngineOp_000_000: 4 node(s), 1 input(s), 3 output(s), 2 constant(s) "
                                "copied in: a b c d\n"));
    gn_pt_expect_dump(g, "x=Placeholder(); k2=Const(); h=Exp(x)@/device:GPU:0; o1=Neg(h)@/device:GPU:0; "
                         "o2=Sigmoid(GrapnelEngineOp_000_000)@/device:GPU:0; "
                         "o3=Mul(GrapnelEngineOp_000_000:1, k2)@/device:GPU:0; "
                         "y=AddN(GrapnelEngineOp_000_000:2, o2, o3, o1, GrapnelEngineOp_000_000); "
                         "z=NoOp(^GrapnelEngineOp_000_000); GrapnelEngineOp_000_000=Grapnel>EngineOp(h, ^o1)");
    expect_fanouts(g, "GrapnelEngineOp_000_000", "o2:0 y:4 o3:0 y:0|z");
    expect_fanouts(g, "h", "o1:0 GrapnelEngineOp_000_000:0");
    expect_fanouts(g, "o1", "y:3|GrapnelEngineOp_000_000");
    expect_fanouts(g, "k2", "o3:1");
    expect_fanouts(g, "x", "h:0");
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_pt_check_valid(g, "fanouts after conversion");
    expect_same(text, g);
    gn_free(rep);
    gn_graph_free(g);
}

/* Many engines reading one wide producer, and one engine with hundreds of
 * control inputs: the producer keeps its outside readers in order with the
 * engines after them, in the order they were built; each engine's readers and
 * control inputs are exact, each control input listed once. */
static void test_wide_hub(void **state)
{
    (void)state;
    enum { K = 400 };
    size_t cap = (size_t)K * 640 + 1024, o = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    o += (size_t)snprintf(text + o, cap - o, "%s%s", PH("x"), UND("h", "Exp", "x", "/device:GPU:0"));
    /* K two-node segments m<i> -> n<i>, each read by q<i> on the device; r<i>,
     * also on the device, read h between them; odd n<i> wait on r<i-1>, r<i> */
    for (int i = 0; i < K; i++) {
        o += (size_t)snprintf(text + o, cap - o,
                              "node { name: 'm%d' op: 'Relu' input: 'h' " TF "}\n"
                              "node { name: 'r%d' op: 'Neg' input: 'h' device: '/device:GPU:0' " TF "}\n",
                              i, i);
        if (i % 2)
            o += (size_t)snprintf(text + o, cap - o,
                                  "node { name: 'n%d' op: 'Tanh' input: 'm%d' input: '^r%d' input: '^r%d' " TF "}\n",
                                  i, i, i - 1, i);
        else
            o += (size_t)snprintf(text + o, cap - o, "node { name: 'n%d' op: 'Tanh' input: 'm%d' " TF "}\n", i, i);
        o += (size_t)snprintf(text + o, cap - o,
                              "node { name: 'q%d' op: 'Sigmoid' input: 'n%d' device: '/device:GPU:0' " TF "}\n", i,
                              i);
    }
    /* one chain c<j>, each member waiting on r<j> and r<7j+1 mod K> */
    for (int j = 0; j < K; j++) {
        char in[16];
        snprintf(in, sizeof in, j ? "c%d" : "h", j - 1);
        o += (size_t)snprintf(text + o, cap - o,
                              "node { name: 'c%d' op: '%s' input: '%s' input: '^r%d' input: '^r%d' " TF "}\n", j,
                              j % 2 ? "Tanh" : "Relu", in, j, (7 * j + 1) % K);
    }
    o += (size_t)snprintf(text + o, cap - o, "node { name: 'y' op: 'AddN' ");
    for (int i = 0; i < K; i++) o += (size_t)snprintf(text + o, cap - o, "input: 'q%d' input: 'r%d' ", i, i);
    o += (size_t)snprintf(text + o, cap - o, "input: 'c%d' attr { key: 'N' value { i: %d } } " TF "}\n", K - 1,
                          2 * K + 1);
    assert_true(o < cap);
    char *rep = NULL;
    size_t n = 0;
    gn_graph *g = segment(text, "{'minimum_segment_size': 2}", 0, &rep, &n);
    assert_int_equal(n, K + 1);
    char nm[64];
    /* h: the r<i> in order, then the engines in the order they were built */
    const gn__node *h = &g->nodes[gn__graph_find(g, "h")];
    assert_int_equal(h->n_use, 2 * K + 1);
    for (uint32_t i = 0; i < 2 * K + 1; i++) {
        if (i < K) snprintf(nm, sizeof nm, "r%u", i);
        else snprintf(nm, sizeof nm, "GrapnelEngineOp_000_%03u", i - K);
        assert_string_equal(gn__node_name(g, h->use[i].node), nm);
        assert_int_equal(h->use[i].slot, 0);
    }
    /* the pair engines: q<i> reads each, odd ones wait on r<i-1> and r<i> */
    for (uint32_t i = 0; i < K; i++) {
        snprintf(nm, sizeof nm, "q%u", i);
        const gn__node *q = &g->nodes[gn__graph_find(g, nm)];
        const gn__node *en = &g->nodes[q->in[0].node];
        assert_string_equal(gn__node_op(g, q->in[0].node), "Grapnel>EngineOp");
        assert_int_equal(en->n_use, 1);
        assert_int_equal(en->n_ctrl, i % 2 ? 2 : 0);
        for (uint32_t k = 0; k < en->n_ctrl; k++) {
            snprintf(nm, sizeof nm, "r%u", i - 1 + k);
            assert_string_equal(gn__node_name(g, en->ctrl[k]), nm);
        }
    }
    /* the chain's engine: y reads it; its control inputs once each, members in order */
    const gn__node *y = &g->nodes[gn__graph_find(g, "y")];
    gn_id ce = y->in[2 * K].node;
    const gn__node *en = &g->nodes[ce];
    uint8_t seen[K] = {0};
    uint32_t k = 0;
    for (uint32_t j = 0; j < K; j++) {
        uint32_t want[2] = {j, (7 * j + 1) % K};
        for (int w = 0; w < 2; w++) {
            if (seen[want[w]]) continue;
            seen[want[w]] = 1;
            assert_true(k < en->n_ctrl);
            snprintf(nm, sizeof nm, "r%u", want[w]);
            assert_string_equal(gn__node_name(g, en->ctrl[k]), nm);
            k++;
        }
    }
    assert_int_equal(en->n_ctrl, K);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_pt_check_valid(g, "wide hub");
    expect_same(text, g);
    gn_free(rep);
    gn_graph_free(g);
    free(text);
}

/* FP32 engines: within 1e-5 of the originals; FP16 engines: within 1e-2. */
static void test_golden(void **state)
{
    (void)state;
    golden_at("{'precision_mode': 'FP32'}", 1e-5);
    golden_at("{'precision_mode': 'FP16'}", 1e-2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),  cmocka_unit_test(test_chain),   cmocka_unit_test(test_no_cycle),
        cmocka_unit_test(test_no_cycle_between_clusters),
        cmocka_unit_test(test_random_dag_no_cycle),
        cmocka_unit_test(test_random_dag_long_lists),
        cmocka_unit_test(test_boundary_limit),
        cmocka_unit_test(test_fanouts_after_conversion),
        cmocka_unit_test(test_wide_hub),
        cmocka_unit_test(test_ref_input),
        cmocka_unit_test(test_consts_and_identity), cmocka_unit_test(test_dry_run), cmocka_unit_test(test_engine_cache), cmocka_unit_test(test_fp16_engine), cmocka_unit_test(test_fp16_batch_norm), cmocka_unit_test(test_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
