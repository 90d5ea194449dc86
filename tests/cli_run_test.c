/* grapnel run / grapnel verify, through the built CLI (GN_CLI_PATH): .npy in
 * and out, numpy-style printing, random feeds, --shape/--dim/--seed, default
 * fetches, and verify's exit codes (0 match, 1 differ or fail, 2 usage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3

static char *tmp(const char *name)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 1024, "%s/%s", gn_test_tmpdir(), name);
    return b;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void write_npy(const char *path, int32_t dtype, const void *data, size_t nbytes, int32_t rank, const int64_t *dims)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (int32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
    t.data = (void *)data;
    t.nbytes = nbytes;
    char err[256];
    if (gn_npy_write(path, &t, err, sizeof err) != GN_OK) fail_msg("%s", err);
}

/* Runs the CLI; returns its exit status, output in *out (caller frees). */
static int cli(char **out, const char *args)
{
    return gn_test_sh(out, "'%s' %s", GN_CLI_PATH, args);
}

static void expect(const char *args, int rc, const char *want_out)
{
    char *out = NULL;
    int got = cli(&out, args);
    if (got != rc || (want_out && strcmp(out, want_out) != 0))
        fail_msg("grapnel %s\n  exit %d (want %d)\n--- got\n%s--- want\n%s", args, got, rc, out, want_out ? want_out : "(any)");
    free(out);
}

static void expect_contains(const char *args, int rc, const char *needle)
{
    char *out = NULL;
    int got = cli(&out, args);
    if (got != rc || !strstr(out, needle))
        fail_msg("grapnel %s\n  exit %d (want %d)\n--- got\n%s--- wanted it to contain\n%s", args, got, rc, out, needle);
    free(out);
}

#define PH_DT(n, dt) "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: " dt " } } }\n"

/* ---- run ------------------------------------------------------------------------------------ */
static void test_run_npy(void **state)
{
    (void)state;
    char model[2048], cmd[8192];
    if (!gn_test_corpus("tensorflow__rust/examples__addition__model.pb", model, sizeof model)) skip();
    int32_t x = 40, y = 2;
    write_npy(tmp("x.npy"), DT_INT32, &x, 4, 0, NULL);
    write_npy(tmp("y.npy"), DT_INT32, &y, 4, 0, NULL);
    remove(tmp("z.npy"));
    snprintf(cmd, sizeof cmd, "run '%s' --feed x=%s --feed y=%s --fetch z=%s", model, tmp("x.npy"), tmp("y.npy"),
             tmp("z.npy"));
    char want[4096];
    snprintf(want, sizeof want, "z: int32 () -> %s\n", tmp("z.npy"));
    expect(cmd, 0, want);
    gn_tensor z;
    char err[256];
    assert_int_equal(gn_npy_read(tmp("z.npy"), &z, err, sizeof err), GN_OK);
    assert_int_equal(z.dtype, DT_INT32);
    assert_int_equal(z.rank, 0);
    assert_int_equal(*(int32_t *)z.data, 42);
    gn_tensor_free(&z);
    /* printed, and the default fetch is the graph's output */
    snprintf(cmd, sizeof cmd, "run '%s' --feed x=%s --feed=y=%s", model, tmp("x.npy"), tmp("y.npy"));
    expect(cmd, 0, "z: int32 ()\n42\n");
    /* errors: exit 1 with the library's message */
    snprintf(cmd, sizeof cmd, "run '%s' --feed x=%s --feed y=%s --fetch q", model, tmp("x.npy"), tmp("y.npy"));
    expect(cmd, 1, "grapnel run: no tensor 'q' in the graph (its outputs: z)\n");
    write_text(tmp("bad.npy"), "not numpy");
    snprintf(cmd, sizeof cmd, "run '%s' --feed x=%s", model, tmp("bad.npy"));
    char w2[4096];
    snprintf(w2, sizeof w2, "grapnel run: %s: not a .npy file (no \\x93NUMPY magic)\n", tmp("bad.npy"));
    expect(cmd, 1, w2);
    float xf = 1;
    write_npy(tmp("xf.npy"), DT_FLOAT, &xf, 4, 0, NULL);
    snprintf(cmd, sizeof cmd, "run '%s' --feed x=%s --feed y=%s", model, tmp("xf.npy"), tmp("y.npy"));
    expect(cmd, 1, "grapnel run: feed 'x': float32 given, int32 expected\n");
}

/* The default fetches: nodes nothing consumes, by data or control edge. An
 * Identity only a control edge reads (a frozen ReadVariableOp's, a TF2 loop's
 * loop_body_control) is an anchor, not an output, unless nothing else is. */
static void test_run_default_fetches(void **state)
{
    (void)state;
    write_text(tmp("anchor.pbtxt"),
               PH_DT("x", "DT_FLOAT")
               "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
               "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }\n"
               "node { name: 'anchor' op: 'Identity' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'y' op: 'Neg' input: 'x' input: '^anchor' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    float v3[3] = {1.5f, 2, 9};
    int64_t d3 = 3;
    write_npy(tmp("v3.npy"), DT_FLOAT, v3, sizeof v3, 1, &d3);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "run %s --feed x=%s", tmp("anchor.pbtxt"), tmp("v3.npy"));
    expect(cmd, 0, "y: float32 (3,)\n[-1.5 -2.  -9. ]\n");
    /* a bare --feed NAME: random values at that tensor (here of x's inferred shape, --dim 1 for unknowns);
     * the same seed gives the same values as a random placeholder would get */
    snprintf(cmd, sizeof cmd, "run %s --feed y --fetch y --shape y=2", tmp("anchor.pbtxt"));
    char *out = NULL;
    assert_int_equal(cli(&out, cmd), 0);
    if (strncmp(out, "y: float32 (2,)\n", 16) != 0) fail_msg("got: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "run %s --feed nope --fetch y", tmp("anchor.pbtxt"));
    assert_int_equal(cli(&out, cmd), 1);
    free(out);
    /* only anchors left: they are the outputs */
    write_text(tmp("anchor2.pbtxt"),
               "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
               "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }\n"
               "node { name: 'anchor' op: 'Identity' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n"
               "node { name: 'z' op: 'NoOp' input: '^anchor' }\n");
    snprintf(cmd, sizeof cmd, "run %s", tmp("anchor2.pbtxt"));
    expect(cmd, 0, "anchor: float32 ()\n3.\n");
}

static void test_run_printing(void **state)
{
    (void)state;
    const char *g = PH_DT("f", "DT_FLOAT") PH_DT("i", "DT_INT32") PH_DT("b", "DT_BOOL");
    write_text(tmp("p.pbtxt"), g);
    char cmd[8192];
    float v3[3] = {1.5f, 2, 9};
    int64_t d3 = 3;
    write_npy(tmp("v3.npy"), DT_FLOAT, v3, sizeof v3, 1, &d3);
    snprintf(cmd, sizeof cmd, "run %s --feed f=%s --fetch f", tmp("p.pbtxt"), tmp("v3.npy"));
    expect(cmd, 0, "f: float32 (3,)\n[1.5 2.  9. ]\n");
    /* over 1000 elements: 3 edge items per dimension */
    float *big = malloc(2000 * sizeof *big);
    int32_t *ibig = malloc(2000 * sizeof *ibig);
    for (int k = 0; k < 2000; k++) big[k] = (float)k, ibig[k] = k;
    int64_t d2000 = 2000, d4050[2] = {40, 50};
    write_npy(tmp("big.npy"), DT_FLOAT, big, 2000 * sizeof *big, 1, &d2000);
    snprintf(cmd, sizeof cmd, "run %s --feed f=%s --fetch f", tmp("p.pbtxt"), tmp("big.npy"));
    expect(cmd, 0, "f: float32 (2000,)\n[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]\n");
    write_npy(tmp("big2.npy"), DT_FLOAT, big, 2000 * sizeof *big, 2, d4050);
    snprintf(cmd, sizeof cmd, "run %s --feed f=%s --fetch f", tmp("p.pbtxt"), tmp("big2.npy"));
    expect(cmd, 0,
           "f: float32 (40, 50)\n"
           "[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n"
           " [5.000e+01 5.100e+01 5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n"
           " [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 1.480e+02 1.490e+02]\n"
           " ...\n"
           " [1.850e+03 1.851e+03 1.852e+03 ... 1.897e+03 1.898e+03 1.899e+03]\n"
           " [1.900e+03 1.901e+03 1.902e+03 ... 1.947e+03 1.948e+03 1.949e+03]\n"
           " [1.950e+03 1.951e+03 1.952e+03 ... 1.997e+03 1.998e+03 1.999e+03]]\n");
    write_npy(tmp("ibig.npy"), DT_INT32, ibig, 2000 * sizeof *ibig, 1, &d2000);
    snprintf(cmd, sizeof cmd, "run %s --feed i=%s --fetch i", tmp("p.pbtxt"), tmp("ibig.npy"));
    expect(cmd, 0, "i: int32 (2000,)\n[   0    1    2 ... 1997 1998 1999]\n");
    float q[24];
    for (int k = 0; k < 24; k++) q[k] = (float)(k - 10) / 4;
    int64_t d234[3] = {2, 3, 4};
    write_npy(tmp("q.npy"), DT_FLOAT, q, sizeof q, 3, d234);
    snprintf(cmd, sizeof cmd, "run %s --feed f=%s --fetch f", tmp("p.pbtxt"), tmp("q.npy"));
    expect(cmd, 0,
           "f: float32 (2, 3, 4)\n"
           "[[[-2.5  -2.25 -2.   -1.75]\n  [-1.5  -1.25 -1.   -0.75]\n  [-0.5  -0.25  0.    0.25]]\n\n"
           " [[ 0.5   0.75  1.    1.25]\n  [ 1.5   1.75  2.    2.25]\n  [ 2.5   2.75  3.    3.25]]]\n");
    unsigned char bb[4] = {1, 0, 0, 1};
    int64_t d22[2] = {2, 2};
    write_npy(tmp("b.npy"), 10, bb, 4, 2, d22);
    snprintf(cmd, sizeof cmd, "run %s --feed b=%s --fetch b", tmp("p.pbtxt"), tmp("b.npy"));
    expect(cmd, 0, "b: bool (2, 2)\n[[ True False]\n [False  True]]\n");
    free(big);
    free(ibig);
}

static void test_run_random_feeds(void **state)
{
    (void)state;
    char model[2048], cmd[8192];
    if (!gn_test_corpus("onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", model, sizeof model)) skip();
    char *a = NULL, *b = NULL, *c = NULL;
    snprintf(cmd, sizeof cmd, "run '%s' --seed 1", model);
    assert_int_equal(cli(&a, cmd), 0);
    assert_int_equal(cli(&b, cmd), 0);
    assert_string_equal(a, b);                      /* seeded: the same feeds */
    assert_non_null(strstr(a, "output: float32 (1, 10)\n"));   /* X is [?,784]: --dim defaults to 1 */
    snprintf(cmd, sizeof cmd, "run '%s' --seed 2", model);
    assert_int_equal(cli(&c, cmd), 0);
    assert_string_not_equal(a, c);
    free(a), free(b), free(c);
    snprintf(cmd, sizeof cmd, "run '%s' --dim 3 --fetch output=%s", model, tmp("fc.npy"));
    assert_int_equal(cli(NULL, cmd), 0);
    gn_tensor t;
    assert_int_equal(gn_npy_read(tmp("fc.npy"), &t, NULL, 0), GN_OK);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.dims[0], 3);
    assert_int_equal(t.dims[1], 10);
    gn_tensor_free(&t);
    /* --shape overrides; a wrong one is the library's error */
    snprintf(cmd, sizeof cmd, "run '%s' --shape X=2x5", model);
    expect(cmd, 1, "grapnel run: feed 'X': shape [2,5] given, [?,784] expected\n");
    snprintf(cmd, sizeof cmd, "run '%s' --shape X=2xq", model);
    expect(cmd, 2, "grapnel run: --shape X=2xq: expected dimensions such as 2x784\n");
}

static void test_run_shape_needed(void **state)
{
    (void)state;
    char model[2048], cmd[8192];
    if (!gn_test_corpus("onnx__tensorflow-onnx/tests__models__gru__frozen.pb", model, sizeof model)) skip();
    snprintf(cmd, sizeof cmd, "run '%s' --shape keep_prob=", model);
    expect(cmd, 2,
           "grapnel run: placeholder 'X' has no known shape: give one with --shape X=DIMS (e.g. 2x784) or feed it "
           "with --feed\n");
    snprintf(cmd, sizeof cmd, "run '%s' --shape X=2x784 --shape keep_prob=", model);
    expect_contains(cmd, 0, "output: float32 (2, 10)\n");
}

static void test_run_usage(void **state)
{
    (void)state;
    expect_contains("run --help", 0, "usage: grapnel run MODEL");
    expect_contains("verify --help", 0, "usage: grapnel verify A B");
    expect("run", 2, "grapnel run: a model path is required\n(see grapnel run --help)\n");
    expect("run a.pb b.pb", 2, "grapnel run: unexpected argument 'b.pb'\n(see grapnel run --help)\n");
    expect("run a.pb --frob", 2, "grapnel run: unknown option '--frob'\n(see grapnel run --help)\n");
    expect("run a.pb --feed x=", 2,
           "grapnel run: --feed 'x=': expected NAME=FILE.npy or NAME\n(see grapnel run --help)\n");
    expect("run a.pb --seed -1", 2,
           "grapnel run: --seed '-1': expected a non-negative integer\n(see grapnel run --help)\n");
    expect("run a.pb --fetch", 2, "grapnel run: --fetch needs NAME[=FILE.npy]\n(see grapnel run --help)\n");
    expect("verify a.pb", 2, "grapnel verify: two model paths are required\n(see grapnel verify --help)\n");
    expect("verify a.pb b.pb --tol 0", 2,
           "grapnel verify: --tol '0': expected a positive number\n(see grapnel verify --help)\n");
    expect("verify a.pb b.pb --fetch y=o.npy", 2,
           "grapnel verify: --fetch 'y=...': verify takes fetch names only\n(see grapnel verify --help)\n");
    expect_contains("run /nonexistent/m.pb", 1, "grapnel run: /nonexistent/m.pb");
}

/* ---- verify --------------------------------------------------------------------------------- */
/* optimize on a SavedModel whose serving signature has more inputs (54) than
 * the command line has words: the signature's feeds and fetches once
 * overflowed arrays sized by argc. The frozen, optimized graph is written. */
static void test_optimize_signature_many_inputs(void **state)
{
    (void)state;
    char dir[2048], cmd[8192];
    if (!gn_test_corpus("tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model", dir,
                        sizeof dir))
        skip();
    remove(tmp("tft_opt.pb"));
    snprintf(cmd, sizeof cmd, "optimize '%s' -o %s", dir, tmp("tft_opt.pb"));
    expect(cmd, 0, NULL);
    FILE *f = fopen(tmp("tft_opt.pb"), "rb");
    assert_non_null(f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "inspect %s", tmp("tft_opt.pb"));
    expect_contains(cmd, 0, "inputs (54):");
}

/* optimize on a SavedModel, written as a SavedModel: the signature keeps its key
 * and its arguments' keys (input 'x', output 'y', not the tensors' names), so
 * clients calling it by key still can; a --fetch given is keyed by its name; the
 * MetaGraphDef keeps the input's tags, and a sparse argument its three tensors. */
static void test_optimize_savedmodel_keeps_keys(void **state)
{
    (void)state;
    char dir[2048], cmd[8192];
    if (!gn_test_corpus("tensorflow__serving/"
                        "tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123",
                        dir, sizeof dir))
        skip();
    gn_test_rm_tree(tmp("hp2_opt"));
    snprintf(cmd, sizeof cmd, "optimize '%s' -o %s", dir, tmp("hp2_opt"));
    expect(cmd, 0, "");
    snprintf(cmd, sizeof cmd, "inspect --signatures %s", tmp("hp2_opt"));
    expect(cmd, 0,
           "SavedModel tags: serve\n"
           "signatures: 1\n"
           "  serving_default (tensorflow/serving/predict)\n"
           "    input  x: serving_default_x:0 float [1]\n"
           "    output y: StatefulPartitionedCall_5:0 float [1]\n"
           "init op: (none)\n");
    /* run by the keys: half plus two */
    float x = 4;
    int64_t d1 = 1;
    write_npy(tmp("hp2_x.npy"), DT_FLOAT, &x, sizeof x, 1, &d1);
    snprintf(cmd, sizeof cmd, "run %s --feed x=%s --fetch y", tmp("hp2_opt"), tmp("hp2_x.npy"));
    expect(cmd, 0, "y: float32 (1,)\n[4.]\n");
    gn_test_rm_tree(tmp("hp2_opt"));
    snprintf(cmd, sizeof cmd, "optimize '%s' -o %s --signature regress_x2_to_y3", dir, tmp("hp2_opt"));
    expect(cmd, 0, "");
    snprintf(cmd, sizeof cmd, "inspect --signatures %s", tmp("hp2_opt"));
    expect(cmd, 0,
           "SavedModel tags: serve\n"
           "signatures: 1\n"
           "  regress_x2_to_y3 (tensorflow/serving/predict)\n"
           "    input  inputs: regress_x2_to_y3_inputs:0 float [1]\n"
           "    output outputs: StatefulPartitionedCall_2:0 float [1]\n"
           "init op: (none)\n");
    gn_test_rm_tree(tmp("hp2_opt"));
    snprintf(cmd, sizeof cmd, "optimize '%s' -o %s --fetch StatefulPartitionedCall_5", dir, tmp("hp2_opt"));
    expect(cmd, 0, "");
    snprintf(cmd, sizeof cmd, "inspect --signatures %s", tmp("hp2_opt"));
    expect(cmd, 0,
           "SavedModel tags: serve\n"
           "signatures: 1\n"
           "  serving_default (tensorflow/serving/predict)\n"
           "    input  x: serving_default_x:0 float [1]\n"
           "    output StatefulPartitionedCall_5: StatefulPartitionedCall_5:0 float [1]\n"
           "init op: (none)\n");
    gn_test_rm_tree(tmp("hp2_opt"));
    /* a MetaGraphDef tagged 'transform' whose only signature is not serving_default:
     * both kept (TensorFlow's loaders find the model by its tags) */
    if (!gn_test_corpus("tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn", dir,
                        sizeof dir))
        return;
    gn_test_rm_tree(tmp("tft_opt"));
    snprintf(cmd, sizeof cmd, "optimize '%s' -o %s", dir, tmp("tft_opt"));
    expect(cmd, 0, "");
    snprintf(cmd, sizeof cmd, "inspect --signatures %s", tmp("tft_opt"));
    expect_contains(cmd, 0,
                    "SavedModel tags: transform\n"
                    "signatures: 1\n"
                    "  transform_signature (tensorflow/serving/predict)\n"
                    "    input  company: transform/inputs/company/company_1:0 string [?, ?]\n");
    /* its inputs are sparse: each keeps its indices and dense shape (coo_sparse),
     * which TensorFlow's loaders need to feed them */
    gn_graph *r = NULL;
    if (gn_graph_load(tmp("tft_opt"), NULL, &r) != GN_OK) fail_msg("load %s", tmp("tft_opt"));
    size_t n = 0, sparse = 0;
    assert_int_equal(gn_graph_signature_args(r, "transform_signature", 0, &n), GN_OK);
    assert_int_equal(n, 18);
    for (size_t k = 0; k < n; k++) {
        gn_signature_arg arg;
        const char *ind = NULL, *shp = NULL;
        assert_int_equal(gn_graph_signature_arg(r, "transform_signature", 0, k, &arg), GN_OK);
        assert_int_equal(gn_graph_signature_arg_sparse(r, "transform_signature", 0, k, &ind, &shp), GN_OK);
        if (!strcmp(arg.key, "company")) {
            assert_string_equal(arg.tensor, "transform/inputs/company/company_1:0");
            assert_string_equal(ind, "transform/inputs/company/company:0");
            assert_string_equal(shp, "transform/inputs/company/company_2:0");
        }
        sparse += ind != NULL;
    }
    assert_int_equal(sparse, 18);
    gn_graph_free(r);
    gn_test_rm_tree(tmp("tft_opt"));
}

static void test_verify(void **state)
{
    (void)state;
    char model[2048], cmd[8192];
    if (!gn_test_corpus("onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", model, sizeof model)) skip();
    snprintf(cmd, sizeof cmd, "verify '%s' '%s' --dim 4", model, model);
    expect(cmd, 0,
           "fetch   dtype    shape           max_abs_err   rel_l2_err  result\n"
           "output  float32  (4, 10)                   0            0  ok\n"
           "ok: 1 of 1 fetches match\n");
    /* a deliberately different graph: x + x against x * x */
    const char *add = PH_DT("x", "DT_FLOAT") "node { name: 'y' op: 'AddV2' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    const char *mul = PH_DT("x", "DT_FLOAT") "node { name: 'y' op: 'Mul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    const char *add2 = PH_DT("x", "DT_FLOAT") "node { name: 'z' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                       "node { name: 'y' op: 'AddV2' input: 'z' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    write_text(tmp("add.pbtxt"), add);
    write_text(tmp("mul.pbtxt"), mul);
    write_text(tmp("add2.pbtxt"), add2);
    float two[2] = {2, 0};
    int64_t d2 = 2;
    write_npy(tmp("two.npy"), DT_FLOAT, two, sizeof two, 1, &d2);
    snprintf(cmd, sizeof cmd, "verify %s %s --feed x=%s --fetch y", tmp("add.pbtxt"), tmp("add2.pbtxt"), tmp("two.npy"));
    expect(cmd, 0,
           "fetch  dtype    shape           max_abs_err   rel_l2_err  result\n"
           "y      float32  (2,)                      0            0  ok\n"
           "ok: 1 of 1 fetches match\n");
    /* [2, 0]: x + x = [4, 0], x * x = [4, 0]: equal here */
    snprintf(cmd, sizeof cmd, "verify %s %s --feed x=%s --fetch y", tmp("add.pbtxt"), tmp("mul.pbtxt"), tmp("two.npy"));
    expect_contains(cmd, 0, "ok: 1 of 1 fetches match\n");
    /* random feeds in [-1, 1): they differ */
    snprintf(cmd, sizeof cmd, "verify %s %s --shape x=8", tmp("add.pbtxt"), tmp("mul.pbtxt"));
    expect_contains(cmd, 1, "FAIL: relative L2 error");
    expect_contains(cmd, 1, "FAIL: 0 of 1 fetches match\n");
    /* integers must be equal */
    const char *iadd = PH_DT("x", "DT_INT32") "node { name: 'y' op: 'AddV2' input: 'x' input: 'x' attr { key: 'T' value { type: DT_INT32 } } }\n";
    const char *imul = PH_DT("x", "DT_INT32") "node { name: 'y' op: 'Mul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_INT32 } } }\n";
    write_text(tmp("iadd.pbtxt"), iadd);
    write_text(tmp("imul.pbtxt"), imul);
    int32_t iv[3] = {2, 3, 0};
    int64_t d3 = 3;
    write_npy(tmp("iv.npy"), DT_INT32, iv, sizeof iv, 1, &d3);
    snprintf(cmd, sizeof cmd, "verify %s %s --feed x=%s --tol 100", tmp("iadd.pbtxt"), tmp("imul.pbtxt"), tmp("iv.npy"));
    expect_contains(cmd, 1, "FAIL: 1 of 3 elements differ (int32 must match exactly)\n");
    /* a graph that cannot run */
    const char *bad = PH_DT("x", "DT_FLOAT") "node { name: 'y' op: 'MyCustomOp' input: 'x' }\n";
    write_text(tmp("bad.pbtxt"), bad);
    snprintf(cmd, sizeof cmd, "verify %s %s --shape x=2 --fetch y", tmp("add.pbtxt"), tmp("bad.pbtxt"));
    char want[4096];
    snprintf(want, sizeof want, "grapnel verify: %s: node 'y' (MyCustomOp): the CPU backend has no kernel for MyCustomOp\n",
             tmp("bad.pbtxt"));
    expect(cmd, 1, want);
    /* one graph on two backends: cpu against cpu matches; cuda either runs (a GPU is
     * present) or fails saying why, naming the model it could not run */
    snprintf(cmd, sizeof cmd, "verify %s %s --feed x=%s --fetch y --backend cpu --backend-b cpu", tmp("add.pbtxt"),
             tmp("add.pbtxt"), tmp("two.npy"));
    expect_contains(cmd, 0, "ok: 1 of 1 fetches match\n");
    snprintf(cmd, sizeof cmd, "verify %s %s --feed x=%s --fetch y --backend-b cuda", tmp("add.pbtxt"),
             tmp("add.pbtxt"), tmp("two.npy"));
    char *out = NULL;
    int rc = cli(&out, cmd);
    if (rc != 0) {
        snprintf(want, sizeof want, "grapnel verify: %s: ", tmp("add.pbtxt"));
        if (!strstr(out, want) || !strstr(out, "CUDA")) fail_msg("verify --backend-b cuda: %s", out);
    }
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_npy),
        cmocka_unit_test(test_run_printing),
        cmocka_unit_test(test_run_default_fetches),
        cmocka_unit_test(test_run_random_feeds),
        cmocka_unit_test(test_run_shape_needed),
        cmocka_unit_test(test_run_usage),
        cmocka_unit_test(test_optimize_signature_many_inputs),
        cmocka_unit_test(test_optimize_savedmodel_keeps_keys),
        cmocka_unit_test(test_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
