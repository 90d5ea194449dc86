/* Control flow on the CPU executor: Switch/Merge with dead branches, v1
 * while loops with frames (the corpus while_loop.pbtxt and nested_loop.pbtxt,
 * a loop on an untaken branch, loop invariants), _SwitchN, functional
 * If/While/Case/PartitionedCall (the corpus graphdef2mlir files and the
 * SimpleWhileLoop SavedModel), TensorArrays (in a loop and not), TensorLists
 * (copy on write, inside a functional While), and the KWS models whose RNNs
 * are TensorArray loops. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "runtime/session.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_BOOL 10

/* ---- helpers ------------------------------------------------------------------------------ */
static gn_graph *load_corpus_edited(const char *rel, const char *from, const char *to)
{
    char path[2048];
    if (!gn_test_corpus(rel, path, sizeof path)) return NULL;
    size_t n;
    char *text = (char *)gn_test_slurp(path, &n);
    assert_non_null(text);
    char *at = strstr(text, from);
    assert_non_null(at);
    size_t fl = strlen(from), tl = strlen(to);
    char *out = malloc(n + tl + 1);
    memcpy(out, text, (size_t)(at - text));
    memcpy(out + (at - text), to, tl);
    strcpy(out + (at - text) + tl, at + fl);
    gn_graph *g = gn_test_load_text(out, 1);
    free(out);
    free(text);
    return g;
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

typedef struct run {
    gn_session *s;
    gn_tensor out[8];
    size_t n;
} run;

/* Runs with feeds name=tensor and the given fetches; fails the test with
 * the session's message on error. */
static void run_ok(run *r, const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf,
                   const char *const *xn, size_t nx)
{
    if (!r->s) {
        gn_session_options o;
        gn_session_options_init(&o);
        assert_int_equal(gn_session_new(g, &o, &r->s), GN_OK);
    }
    for (size_t i = 0; i < r->n; i++) gn_tensor_free(&r->out[i]);
    r->n = nx;
    if (gn_session_run(r->s, fn, ft, nf, xn, r->out, nx) != GN_OK) fail_msg("run: %s", gn_session_errmsg(r->s));
}

static void run_err(run *r, const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf,
                    const char *const *xn, size_t nx, gn_status code, const char *msg)
{
    if (!r->s) assert_int_equal(gn_session_new(g, NULL, &r->s), GN_OK);
    for (size_t i = 0; i < r->n; i++) gn_tensor_free(&r->out[i]);
    r->n = 0;
    gn_tensor out[8];
    gn_status st = gn_session_run(r->s, fn, ft, nf, xn, out, nx);
    if (st != code || strcmp(gn_session_errmsg(r->s), msg) != 0)
        fail_msg("status %d (want %d)\n  got:  %s\n  want: %s", st, code, gn_session_errmsg(r->s), msg);
}

static void run_free(run *r)
{
    for (size_t i = 0; i < r->n; i++) gn_tensor_free(&r->out[i]);
    gn_session_free(r->s);
    memset(r, 0, sizeof *r);
}

static void expect_f32(const gn_tensor *t, int32_t rank, const int64_t *dims, const float *v)
{
    assert_int_equal(t->dtype, DT_FLOAT);
    assert_int_equal(t->rank, rank);
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        assert_int_equal(t->dims[i], dims[i]);
        n *= dims[i];
    }
    for (int64_t i = 0; i < n; i++)
        if (((const float *)t->data)[i] != v[i]) fail_msg("element %lld: %g, want %g", (long long)i, ((const float *)t->data)[i], v[i]);
}

static int32_t scalar_i32(const gn_tensor *t)
{
    assert_int_equal(t->dtype, DT_INT32);
    assert_int_equal(t->rank, 0);
    return *(const int32_t *)t->data;
}

static float scalar_f32(const gn_tensor *t)
{
    assert_int_equal(t->dtype, DT_FLOAT);
    assert_int_equal(t->rank, 0);
    return *(const float *)t->data;
}

#define NODE(n, op, rest) "node { name: '" n "' op: '" op "' " rest " }\n"
#define T_F "attr { key: 'T' value { type: DT_FLOAT } }"
#define T_I "attr { key: 'T' value { type: DT_INT32 } }"
#define CONST_I(n, v, extra) \
    NODE(n, "Const", extra " attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " #v " } } }")
#define CONST_F(n, v, extra) \
    NODE(n, "Const", extra " attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: " #v " } } }")
#define PH_DT(n, dt) NODE(n, "Placeholder", "attr { key: 'dtype' value { type: " dt " } }")

/* ---- Switch / Merge --------------------------------------------------------------------------- */
static const char *cond_graph =
    PH_DT("x", "DT_FLOAT") PH_DT("p", "DT_BOOL")
    NODE("sw", "Switch", "input: 'x' input: 'p' " T_F)
    NODE("f", "Identity", "input: 'sw' " T_F)
    NODE("t", "AddV2", "input: 'sw:1' input: 'sw:1' " T_F)
    NODE("m", "Merge", "input: 'f' input: 't' " T_F " attr { key: 'N' value { i: 2 } }")
    /* a node with a dead control input is dead */
    CONST_F("after_t", 7, "input: '^t'")
    /* ControlTrigger is never dead */
    NODE("ct", "ControlTrigger", "input: '^t' input: '^f'")
    CONST_F("after_ct", 9, "input: '^ct'")
    /* a Merge of dead inputs only is dead */
    NODE("dead_m", "Merge", "input: 't' input: 't' " T_F " attr { key: 'N' value { i: 2 } }");

static void test_switch_merge(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(cond_graph, 1);
    run r = {0};
    float x = 3;
    bool p = true;
    gn_tensor f[2] = {view(DT_FLOAT, &x, 4, 0, NULL), view(DT_BOOL, &p, 1, 0, NULL)};
    const char *fn[2] = {"x", "p"};
    const char *xn[4] = {"m", "m:1", "after_t", "after_ct"};
    run_ok(&r, g, fn, f, 2, xn, 4);
    assert_true(scalar_f32(&r.out[0]) == 6);
    assert_int_equal(scalar_i32(&r.out[1]), 1);
    assert_true(scalar_f32(&r.out[2]) == 7);
    assert_true(scalar_f32(&r.out[3]) == 9);
    p = false;
    const char *xn2[3] = {"m", "m:1", "after_ct"};
    run_ok(&r, g, fn, f, 2, xn2, 3);
    assert_true(scalar_f32(&r.out[0]) == 3);
    assert_int_equal(scalar_i32(&r.out[1]), 0);
    assert_true(scalar_f32(&r.out[2]) == 9);
    /* the untaken branch did not run: Switch, Identity, Merge, Const, ControlTrigger,
     * Const (feeds and fetches are not kernels) */
    gn__engine_stats st;
    gn__session_stats(r.s, &st, NULL);
    assert_int_equal(st.nodes_run, 5);
    const char *dt[1] = {"t"}, *da[1] = {"after_t"}, *dm[1] = {"dead_m"};
    run_err(&r, g, fn, f, 2, dt, 1, GN_ERR_GRAPH, "fetch 't' is dead: it is on the untaken branch of a Switch");
    run_err(&r, g, fn, f, 2, da, 1, GN_ERR_GRAPH, "fetch 'after_t' is dead: it is on the untaken branch of a Switch");
    run_err(&r, g, fn, f, 2, dm, 1, GN_ERR_GRAPH, "fetch 'dead_m' is dead: it is on the untaken branch of a Switch");
    p = true;
    run_ok(&r, g, fn, f, 2, dm, 1);
    assert_true(scalar_f32(&r.out[0]) == 6);
    /* a bad predicate */
    float pf = 1;
    gn_tensor bad[2] = {view(DT_FLOAT, &x, 4, 0, NULL), view(DT_FLOAT, &pf, 4, 0, NULL)};
    const char *m1[1] = {"m"};
    run_err(&r, g, fn, bad, 2, m1, 1, GN_ERR_ARG, "feed 'p': float32 given, bool expected");
    run_free(&r);
    gn_graph_free(g);
}

static void test_switch_n(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("tensorflow__tensorflow/"
                              "tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__switch_n.pbtxt");
    if (!g) skip();
    run r = {0};
    const char *xn[2] = {"Case/merge/_9", "Case/merge/_9:1"};
    run_ok(&r, g, NULL, NULL, 0, xn, 2);
    assert_true(scalar_f32(&r.out[0]) == 2);   /* branch 0: 1 * 2 */
    assert_int_equal(scalar_i32(&r.out[1]), 0);
    /* feeding the branch index picks the branch; out of range goes to the last output */
    int32_t bi = 1;
    gn_tensor f = view(DT_INT32, &bi, 4, 0, NULL);
    const char *fn[1] = {"Case/branch_index"};
    run_ok(&r, g, fn, &f, 1, xn, 2);
    assert_true(scalar_f32(&r.out[0]) == 3);
    assert_int_equal(scalar_i32(&r.out[1]), 1);
    /* 7 is out of range: each _SwitchN takes its last output, the index's
     * (of 3) branch 2 and the input's (of 2) branch 1, so both products are
     * dead and so is the Merge */
    bi = 7;
    run_err(&r, g, fn, &f, 1, xn, 2, GN_ERR_GRAPH, "fetch 'Case/merge/_9' is dead: it is on the untaken branch of a Switch");
    const char *p2[1] = {"Case/pivot_2/_6"};
    run_ok(&r, g, fn, &f, 1, p2, 1);
    assert_int_equal(scalar_i32(&r.out[0]), 7);
    run_free(&r);
    gn_graph_free(g);
}

/* ---- v1 while loops --------------------------------------------------------------------------- */
static void test_while_loop_corpus(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("tensorflow__tensorflow/"
                              "tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt");
    if (!g) skip();
    run r = {0};
    float ones[2] = {1, 2};
    int64_t d[2] = {1, 2};
    gn_tensor f = view(DT_FLOAT, ones, sizeof ones, 2, d);
    const char *fn[1] = {"ones"}, *xn[2] = {"while/Exit", "while/Exit_1"};
    run_ok(&r, g, fn, &f, 1, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 10);
    assert_int_equal(r.out[1].rank, 2);
    assert_int_equal(r.out[1].dims[0], 1024);
    assert_int_equal(r.out[1].dims[1], 2);
    for (int i = 0; i < 1024; i++) {
        assert_true(((float *)r.out[1].data)[2 * i] == 1);
        assert_true(((float *)r.out[1].data)[2 * i + 1] == 2);
    }
    gn__engine_stats st;
    gn__session_stats(r.s, &st, NULL);
    assert_false(st.planned);
    /* loops never get a plan, but stay right run after run */
    run_ok(&r, g, fn, &f, 1, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 10);
    gn__session_stats(r.s, &st, NULL);
    assert_false(st.planned);
    assert_int_equal(st.arena_allocs, 0);
    /* a tensor inside the loop cannot be fetched */
    const char *in[1] = {"while/add"};
    run_err(&r, g, fn, &f, 1, in, 1, GN_ERR_UNSUPPORTED,
            "fetch 'while/add': the tensor is inside the while loop frame 'while/while/'");
    run_free(&r);
    gn_graph_free(g);
}

#define NESTED "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt"

static void test_nested_loop_corpus(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus(NESTED);
    if (!g) skip();
    run r = {0};
    const char *xn[2] = {"while/Exit", "while/Exit_1"};
    run_ok(&r, g, NULL, NULL, 0, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 3);
    float eight[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t d8[3] = {8, 1, 1};
    expect_f32(&r.out[1], 3, d8, eight);
    run_free(&r);
    gn_graph_free(g);

    /* the outer body consumes the inner loop's result: frames within frames */
    g = load_corpus_edited(NESTED, "name: \"while/concat\"\n  op: \"ConcatV2\"\n  input: \"while/Identity_1\"\n  input: \"while/Identity_1\"",
                           "name: \"while/concat\"\n  op: \"ConcatV2\"\n  input: \"while/while/Exit_1\"\n  input: \"while/while/Exit_1\"");
    assert_non_null(g);
    run_ok(&r, g, NULL, NULL, 0, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 3);
    /* each outer iteration: inner loop x8 along axis 2, then x2 along axis 0 */
    assert_int_equal(r.out[1].rank, 3);
    assert_int_equal(r.out[1].dims[0], 8);
    assert_int_equal(r.out[1].dims[1], 1);
    assert_int_equal(r.out[1].dims[2], 512);
    for (int i = 0; i < 8 * 512; i++) assert_true(((float *)r.out[1].data)[i] == 1);
    run_free(&r);
    gn_graph_free(g);
}

/* A loop on the untaken branch of a cond: its Enter is dead, the frame
 * finishes with dead exits, which reach the Merge after it. The bound is a
 * loop invariant (constant Enter). */
static const char *loop_in_cond =
    PH_DT("x", "DT_INT32") PH_DT("p", "DT_BOOL") CONST_I("five", 5, "")
    NODE("sw", "Switch", "input: 'x' input: 'p' " T_I)
    NODE("L/Enter", "Enter", "input: 'sw:1' " T_I " attr { key: 'frame_name' value { s: 'L' } } attr { key: 'parallel_iterations' value { i: 2 } }")
    NODE("L/Bound", "Enter", "input: 'five' " T_I " attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: true } }")
    NODE("L/Merge", "Merge", "input: 'L/Enter' input: 'L/Next' " T_I " attr { key: 'N' value { i: 2 } }")
    NODE("L/Less", "Less", "input: 'L/Merge' input: 'L/Bound' " T_I)
    NODE("L/LoopCond", "LoopCond", "input: 'L/Less'")
    NODE("L/Switch", "Switch", "input: 'L/Merge' input: 'L/LoopCond' " T_I)
    NODE("L/Id", "Identity", "input: 'L/Switch:1' " T_I)
    CONST_I("L/one", 1, "input: '^L/Id'")
    NODE("L/add", "AddV2", "input: 'L/Id' input: 'L/one' " T_I)
    NODE("L/Next", "NextIteration", "input: 'L/add' " T_I)
    NODE("L/Exit", "Exit", "input: 'L/Switch' " T_I)
    NODE("f", "Identity", "input: 'sw' " T_I)
    NODE("m", "Merge", "input: 'f' input: 'L/Exit' " T_I " attr { key: 'N' value { i: 2 } }")
    NODE("after", "Identity", "input: 'L/Exit' " T_I);

static void test_loop_in_cond(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(loop_in_cond, 1);
    run r = {0};
    int32_t x = 1;
    bool p = true;
    gn_tensor f[2] = {view(DT_INT32, &x, 4, 0, NULL), view(DT_BOOL, &p, 1, 0, NULL)};
    const char *fn[2] = {"x", "p"}, *xn[2] = {"m", "m:1"};
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 5);
    assert_int_equal(scalar_i32(&r.out[1]), 1);
    x = -20;   /* 25 iterations with parallel_iterations 2 */
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 5);
    x = 7;     /* no iteration */
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 7);
    p = false;
    x = 1;
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_int_equal(scalar_i32(&r.out[0]), 1);
    assert_int_equal(scalar_i32(&r.out[1]), 0);
    const char *af[1] = {"after"};
    run_err(&r, g, fn, f, 2, af, 1, GN_ERR_GRAPH, "fetch 'after' is dead: it is on the untaken branch of a Switch");
    run_free(&r);
    gn_graph_free(g);
}

static void test_frame_errors(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(PH_DT("x", "DT_INT32") NODE("e", "Exit", "input: 'x' " T_I), 1);
    run r = {0};
    int32_t x = 1;
    gn_tensor f = view(DT_INT32, &x, 4, 0, NULL);
    const char *fn[1] = {"x"}, *xn[1] = {"e"};
    run_err(&r, g, fn, &f, 1, xn, 1, GN_ERR_GRAPH, "node 'e' (Exit) is not inside a while loop");
    run_free(&r);
    gn_graph_free(g);
    g = gn_test_load_text(PH_DT("x", "DT_INT32")
                  NODE("e", "Enter", "input: 'x' " T_I " attr { key: 'frame_name' value { s: 'F' } }")
                  NODE("a", "AddV2", "input: 'e' input: 'x' " T_I)
                  NODE("o", "Exit", "input: 'a' " T_I), 1);
    const char *on[1] = {"o"};
    run_err(&r, g, fn, &f, 1, on, 1, GN_ERR_GRAPH,
            "node 'a' (AddV2) has inputs from different frames: '(feed)' in the root frame and 'e' in frame 'F'");
    run_free(&r);
    gn_graph_free(g);
}

/* ---- functional control flow ------------------------------------------------------------------- */
#define MLIR(f) "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__" f

static void test_functional_if(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus(MLIR("functional-if-ops.pbtxt"));
    if (!g) skip();
    run r = {0};
    float a = 2, b = 3;
    gn_tensor f[2] = {view(DT_FLOAT, &a, 4, 0, NULL), view(DT_FLOAT, &b, 4, 0, NULL)};
    const char *fn[2] = {"a", "b"}, *xn[2] = {"StatefulIf", "StatelessIf"};
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_true(scalar_f32(&r.out[0]) == 5);   /* a < b: cond_true adds */
    assert_true(scalar_f32(&r.out[1]) == 5);
    a = 4;
    run_ok(&r, g, fn, f, 2, xn, 2);
    assert_true(scalar_f32(&r.out[0]) == 12);  /* cond_false multiplies */
    assert_true(scalar_f32(&r.out[1]) == 12);
    run_free(&r);
    gn_graph_free(g);
}

static void test_functional_while(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus(MLIR("functional-while-ops.pbtxt"));
    if (!g) skip();
    run r = {0};
    int32_t it = 3;
    float val[2] = {1.5f, 2};
    int64_t d = 2;
    gn_tensor f[2] = {view(DT_INT32, &it, 4, 0, NULL), view(DT_FLOAT, val, 8, 1, &d)};
    const char *fn[2] = {"iter", "val"};
    const char *xn[4] = {"StatefulWhile", "StatefulWhile:1", "StatelessWhile:1", "WhileWithOutputShapes:1"};
    run_ok(&r, g, fn, f, 2, xn, 4);
    assert_int_equal(scalar_i32(&r.out[0]), 0);
    float want[2] = {12, 16};
    for (int i = 1; i < 4; i++) expect_f32(&r.out[i], 1, &d, want);
    it = 0;
    run_ok(&r, g, fn, f, 2, xn, 4);
    expect_f32(&r.out[1], 1, &d, val);
    run_free(&r);
    gn_graph_free(g);

    /* a function whose While passes an int32 to a float argument */
    g = gn_test_load_corpus("tensorflow__tensorflow/"
                    "tensorflow__core__grappler__costs__graph_properties_testdata__function_functional_while.pbtxt");
    if (!g) skip();
    const char *call[1] = {"MyFunc_AenMyWWx1Us"};
    run_err(&r, g, NULL, NULL, 0, call, 1, GN_ERR_GRAPH,
            "node 'MyFunc_AenMyWWx1Us' (MyFunc_AenMyWWx1Us): function 'MyFunc_AenMyWWx1Us': node 'While' (While): "
            "function 'Cond_Xf5ttAHgUCg': argument 0 ('n') is float, int32 given");
    run_free(&r);
    gn_graph_free(g);
}

static void test_functional_case(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus(MLIR("case_op.pbtxt"));
    if (!g) skip();
    run r = {0};
    const char *xn[1] = {"indexed_case/Identity"};
    run_ok(&r, g, NULL, NULL, 0, xn, 1);
    assert_int_equal(scalar_i32(&r.out[0]), 2);   /* branch 0: 1 + 1 */
    int32_t bi = 1;
    gn_tensor f = view(DT_INT32, &bi, 4, 0, NULL);
    const char *fn[1] = {"Const_1"};
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_int_equal(scalar_i32(&r.out[0]), 3);   /* branch 1: 1 + 2 */
    bi = -4;   /* out of range: the last branch */
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_int_equal(scalar_i32(&r.out[0]), 3);
    run_free(&r);
    gn_graph_free(g);
}

static void test_saved_model_while(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_corpus("tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop");
    if (!g) skip();
    run r = {0};
    float v = 5;
    gn_tensor f = view(DT_FLOAT, &v, 4, 0, NULL);
    const char *fn[1] = {"serving_default_value"}, *xn[1] = {"PartitionedCall"};
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_true(scalar_f32(&r.out[0]) == 15);   /* 5 + 4 + 3 + 2 + 1 */
    v = 0;
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_true(scalar_f32(&r.out[0]) == 0);
    run_free(&r);
    gn_graph_free(g);
}

/* An unsupported op inside a function is found before anything runs. */
static void test_function_unsupported(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        PH_DT("x", "DT_FLOAT")
        NODE("call", "PartitionedCall", "input: 'x' attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' "
             "value { list { type: DT_FLOAT } } } attr { key: 'f' value { func { name: 'bad' } } }")
        "library { function { signature { name: 'bad' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'b' type: "
        "DT_FLOAT } } node_def { name: 'q' op: 'MyCustomOp' input: 'a' } ret { key: 'b' value: 'q:y:0' } } }\n", 1);
    run r = {0};
    float x = 1;
    gn_tensor f = view(DT_FLOAT, &x, 4, 0, NULL);
    const char *fn[1] = {"x"}, *xn[1] = {"call"};
    run_err(&r, g, fn, &f, 1, xn, 1, GN_ERR_UNSUPPORTED,
            "function 'bad': node 'q' (MyCustomOp): the CPU backend has no kernel for MyCustomOp");
    run_free(&r);
    gn_graph_free(g);
}

/* ---- TensorArray -------------------------------------------------------------------------------- */
#define TA_ATTRS "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'element_shape' value { shape { dim { size: 2 } } } }"
static const char *ta_graph =
    CONST_I("n", 3, "")
    NODE("vals", "Const", "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: "
         "DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } } float_val: 1 float_val: 2 float_val: 3 float_val: 4 "
         "float_val: 5 float_val: 6 } } }")
    NODE("idx", "Const", "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: "
         "DT_INT32 tensor_shape { dim { size: 3 } } int_val: 0 int_val: 1 int_val: 2 } } }")
    NODE("gidx", "Const", "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: "
         "DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 0 } } }")
    CONST_I("one", 1, "")
    NODE("ta", "TensorArrayV3", "input: 'n' " TA_ATTRS)
    NODE("sc", "TensorArrayScatterV3", "input: 'ta' input: 'idx' input: 'vals' input: 'ta:1' " T_F)
    NODE("rd", "TensorArrayReadV3", "input: 'ta' input: 'one' input: 'sc' attr { key: 'dtype' value { type: DT_FLOAT } }")
    NODE("ga", "TensorArrayGatherV3", "input: 'ta' input: 'gidx' input: 'sc' " TA_ATTRS " input: '^rd'")
    NODE("sz", "TensorArraySizeV3", "input: 'ta' input: 'sc'")
    NODE("rd2", "TensorArrayReadV3", "input: 'ta' input: 'one' input: 'sc' attr { key: 'dtype' value { type: DT_FLOAT } } input: '^rd'")
    /* a loop writing 2*x[i] into a second array, then gathering it */
    NODE("out", "TensorArrayV3", "input: 'n' " TA_ATTRS)
    CONST_I("zero", 0, "")
    NODE("L/i0", "Enter", "input: 'zero' " T_I " attr { key: 'frame_name' value { s: 'L' } }")
    NODE("L/f0", "Enter", "input: 'out:1' " T_F " attr { key: 'frame_name' value { s: 'L' } }")
    NODE("L/inh", "Enter", "input: 'ta' attr { key: 'T' value { type: DT_RESOURCE } } attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: true } }")
    NODE("L/inf", "Enter", "input: 'sc' " T_F " attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: true } }")
    NODE("L/outh", "Enter", "input: 'out' attr { key: 'T' value { type: DT_RESOURCE } } attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: true } }")
    NODE("L/n", "Enter", "input: 'n' " T_I " attr { key: 'frame_name' value { s: 'L' } } attr { key: 'is_constant' value { b: true } }")
    NODE("L/mi", "Merge", "input: 'L/i0' input: 'L/ni' " T_I " attr { key: 'N' value { i: 2 } }")
    NODE("L/mf", "Merge", "input: 'L/f0' input: 'L/nf' " T_F " attr { key: 'N' value { i: 2 } }")
    NODE("L/less", "Less", "input: 'L/mi' input: 'L/n' " T_I)
    NODE("L/cond", "LoopCond", "input: 'L/less'")
    NODE("L/si", "Switch", "input: 'L/mi' input: 'L/cond' " T_I)
    NODE("L/sf", "Switch", "input: 'L/mf' input: 'L/cond' " T_F)
    NODE("L/i", "Identity", "input: 'L/si:1' " T_I)
    NODE("L/f", "Identity", "input: 'L/sf:1' " T_F)
    NODE("L/x", "TensorArrayReadV3", "input: 'L/inh' input: 'L/i' input: 'L/inf' attr { key: 'dtype' value { type: DT_FLOAT } }")
    NODE("L/x2", "AddV2", "input: 'L/x' input: 'L/x' " T_F)
    NODE("L/w", "TensorArrayWriteV3", "input: 'L/outh' input: 'L/i' input: 'L/x2' input: 'L/f' " T_F)
    CONST_I("L/one", 1, "input: '^L/i'")
    NODE("L/i1", "AddV2", "input: 'L/i' input: 'L/one' " T_I)
    NODE("L/ni", "NextIteration", "input: 'L/i1' " T_I)
    NODE("L/nf", "NextIteration", "input: 'L/w' " T_F)
    NODE("L/ef", "Exit", "input: 'L/sf' " T_F)
    NODE("all", "TensorArrayGatherV3", "input: 'out' input: 'idx' input: 'L/ef' " TA_ATTRS);

static void test_tensor_array(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(ta_graph, 1);
    run r = {0};
    const char *xn[3] = {"rd", "ga", "sz"};
    run_ok(&r, g, NULL, NULL, 0, xn, 3);
    int64_t d2 = 2, d22[2] = {2, 2};
    float rd[2] = {3, 4}, ga[4] = {5, 6, 1, 2};
    expect_f32(&r.out[0], 1, &d2, rd);
    expect_f32(&r.out[1], 2, d22, ga);
    assert_int_equal(scalar_i32(&r.out[2]), 3);
    const char *twice[1] = {"rd2"};
    run_err(&r, g, NULL, NULL, 0, twice, 1, GN_ERR_GRAPH,
            "node 'rd2' (TensorArrayReadV3): Could not read index 1 twice because it was cleared after a previous "
            "read (perhaps try setting clear_after_read = false?)");
    const char *all[1] = {"all"};
    run_ok(&r, g, NULL, NULL, 0, all, 1);
    int64_t d32[2] = {3, 2};
    float twice_vals[6] = {2, 4, 6, 8, 10, 12};
    expect_f32(&r.out[0], 2, d32, twice_vals);
    run_free(&r);
    gn_graph_free(g);
}

/* ---- TensorList ------------------------------------------------------------------------------ */
#define LIST_F "attr { key: 'element_dtype' value { type: DT_FLOAT } } attr { key: 'shape_type' value { type: DT_INT32 } }"
#define VEC2(n, a, b) \
    NODE(n, "Const", "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT " \
         "tensor_shape { dim { size: 2 } } float_val: " #a " float_val: " #b " } } }")
static const char *list_graph =
    NODE("es", "Const", "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: "
         "DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } }")
    CONST_I("n", 3, "") CONST_I("i0", 0, "") CONST_I("i1", 1, "") CONST_I("i2", 2, "") CONST_I("neg", -1, "")
    VEC2("v0", 1, 2) VEC2("v2", 5, 6)
    NODE("l0", "TensorListReserve", "input: 'es' input: 'n' " LIST_F)
    NODE("l1", "TensorListSetItem", "input: 'l0' input: 'i0' input: 'v0' " LIST_F)
    NODE("l2", "TensorListSetItem", "input: 'l1' input: 'i2' input: 'v2' " LIST_F)
    NODE("st", "TensorListStack", "input: 'l2' input: 'es' " LIST_F)
    NODE("len", "TensorListLength", "input: 'l2'")
    /* l1 has two consumers: setting an item in l2 must not change it */
    NODE("g1", "TensorListGetItem", "input: 'l1' input: 'i2' input: 'es' " LIST_F)
    NODE("g2", "TensorListGetItem", "input: 'l2' input: 'i2' input: 'es' " LIST_F)
    NODE("pb", "TensorListPushBack", "input: 'l2' input: 'v0' " LIST_F)
    NODE("plen", "TensorListLength", "input: 'pb'")
    NODE("pop", "TensorListPopBack", "input: 'pb' input: 'es' " LIST_F)
    NODE("poplen", "TensorListLength", "input: 'pop'")
    NODE("mat", "Const", "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: "
         "DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1 float_val: 2 float_val: 3 float_val: 4 } } }")
    NODE("ft", "TensorListFromTensor", "input: 'mat' input: 'es' " LIST_F)
    NODE("fi", "TensorListGetItem", "input: 'ft' input: 'i1' input: 'es' " LIST_F)
    NODE("shape", "TensorListElementShape", "input: 'l0' attr { key: 'shape_type' value { type: DT_INT32 } }")
    NODE("e0", "EmptyTensorList", "input: 'es' input: 'neg' " LIST_F)
    NODE("e1", "TensorListPushBack", "input: 'e0' input: 'v2' " LIST_F)
    NODE("est", "TensorListStack", "input: 'e1' input: 'es' " LIST_F)
    NODE("bad", "TensorListGetItem", "input: 'l1' input: 'n' input: 'es' " LIST_F);

static void test_tensor_list(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(list_graph, 1);
    run r = {0};
    const char *xn[8] = {"st", "len", "g1", "g2", "plen", "pop:1", "poplen", "fi"};
    run_ok(&r, g, NULL, NULL, 0, xn, 8);
    int64_t d2 = 2, d32[2] = {3, 2};
    float st[6] = {1, 2, 0, 0, 5, 6}, zero[2] = {0, 0}, v2[2] = {5, 6}, v0[2] = {1, 2}, row1[2] = {3, 4};
    expect_f32(&r.out[0], 2, d32, st);
    assert_int_equal(scalar_i32(&r.out[1]), 3);
    expect_f32(&r.out[2], 1, &d2, zero);
    expect_f32(&r.out[3], 1, &d2, v2);
    assert_int_equal(scalar_i32(&r.out[4]), 4);
    expect_f32(&r.out[5], 1, &d2, v0);
    assert_int_equal(scalar_i32(&r.out[6]), 3);
    expect_f32(&r.out[7], 1, &d2, row1);
    const char *xn2[2] = {"shape", "est"};
    run_ok(&r, g, NULL, NULL, 0, xn2, 2);
    assert_int_equal(r.out[0].dtype, DT_INT32);
    assert_int_equal(r.out[0].dims[0], 1);
    assert_int_equal(((int32_t *)r.out[0].data)[0], 2);
    int64_t d12[2] = {1, 2};
    expect_f32(&r.out[1], 2, d12, v2);
    const char *bad[1] = {"bad"}, *handle[1] = {"l1"};
    run_err(&r, g, NULL, NULL, 0, bad, 1, GN_ERR_GRAPH,
            "node 'bad' (TensorListGetItem): Trying to access element 3 in a list with 3 elements");
    run_err(&r, g, NULL, NULL, 0, handle, 1, GN_ERR_UNSUPPORTED, "fetch 'l1': a variant tensor cannot be fetched");
    run_free(&r);
    gn_graph_free(g);
}

/* A functional While carrying a TensorList, as Keras' LSTM does:
 * for i in range(n): l[i] = fill(2, i) */
static const char *list_while_graph =
    NODE("es", "Const", "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: "
         "DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } }")
    PH_DT("n", "DT_INT32") CONST_I("zero", 0, "")
    NODE("l0", "TensorListReserve", "input: 'es' input: 'n' " LIST_F)
    NODE("w", "StatelessWhile", "input: 'zero' input: 'n' input: 'l0' attr { key: 'T' value { list { type: DT_INT32 type: "
         "DT_INT32 type: DT_VARIANT } } } attr { key: 'cond' value { func { name: 'c' } } } attr { key: 'body' value { func "
         "{ name: 'b' } } }")
    NODE("out", "TensorListStack", "input: 'w:2' input: 'es' " LIST_F)
    "library {\n"
    " function { signature { name: 'c' input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'n' type: DT_INT32 } "
    "input_arg { name: 'l' type: DT_VARIANT } output_arg { name: 'r' type: DT_BOOL } }\n"
    "  node_def { name: 'lt' op: 'Less' input: 'i' input: 'n' " T_I " } ret { key: 'r' value: 'lt:z:0' } }\n"
    " function { signature { name: 'b' input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'n' type: DT_INT32 } "
    "input_arg { name: 'l' type: DT_VARIANT } output_arg { name: 'i2' type: DT_INT32 } output_arg { name: 'n2' type: "
    "DT_INT32 } output_arg { name: 'l2' type: DT_VARIANT } }\n"
    "  node_def { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
    "tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "  node_def { name: 'inc' op: 'AddV2' input: 'i' input: 'one:output:0' " T_I " }\n"
    "  node_def { name: 'fi' op: 'Cast' input: 'i' attr { key: 'SrcT' value { type: DT_INT32 } } attr { key: 'DstT' "
    "value { type: DT_FLOAT } } }\n"
    "  node_def { name: 'dims' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
    "tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }\n"
    "  node_def { name: 'item' op: 'Fill' input: 'dims:output:0' input: 'fi:y:0' " T_F " }\n"
    "  node_def { name: 'set' op: 'TensorListSetItem' input: 'l' input: 'i' input: 'item:output:0' " LIST_F " }\n"
    "  ret { key: 'i2' value: 'inc:z:0' } ret { key: 'n2' value: 'n' } ret { key: 'l2' value: 'set:output_handle:0' } }\n"
    "}\n";

static void test_tensor_list_in_while(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(list_while_graph, 1);
    run r = {0};
    int32_t n = 4;
    gn_tensor f = view(DT_INT32, &n, 4, 0, NULL);
    const char *fn[1] = {"n"}, *xn[2] = {"out", "w"};
    run_ok(&r, g, fn, &f, 1, xn, 2);
    int64_t d42[2] = {4, 2};
    float want[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    expect_f32(&r.out[0], 2, d42, want);
    assert_int_equal(scalar_i32(&r.out[1]), 4);
    run_free(&r);
    gn_graph_free(g);
}

/* ---- the KWS models: RNNs as TensorArray loops --------------------------------------------------- */
static void run_kws(const char *model, int64_t frames)
{
    char rel[512];
    snprintf(rel, sizeof rel, "ARM-software__ML-KWS-for-MCU/Pretrained_models__%s.pb", model);
    gn_graph *g = gn_test_load_corpus(rel);
    if (!g) skip();
    float *m = malloc((size_t)frames * 10 * sizeof *m);
    uint32_t seed = 11;
    for (int64_t i = 0; i < frames * 10; i++) {
        seed = seed * 1664525u + 1013904223u;
        m[i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * 20;
    }
    int64_t dims[3] = {1, frames, 10};
    gn_tensor f = view(DT_FLOAT, m, (size_t)frames * 10 * sizeof *m, 3, dims);
    run r = {0};
    const char *fn[1] = {"Mfcc"}, *xn[1] = {"labels_softmax"};
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_int_equal(r.out[0].dims[1], 12);
    double sum = 0;
    for (int i = 0; i < 12; i++) sum += ((float *)r.out[0].data)[i];
    assert_float_equal(sum, 1.0, 1e-5);
    /* again: the same bits */
    float first[12];
    memcpy(first, r.out[0].data, sizeof first);
    run_ok(&r, g, fn, &f, 1, xn, 1);
    assert_memory_equal(first, r.out[0].data, sizeof first);
    run_free(&r);
    free(m);
    gn_graph_free(g);
}

static void test_kws_crnn(void **state)
{
    (void)state;
    run_kws("CRNN__CRNN_S", 49);
}

static void test_kws_lstm(void **state)
{
    (void)state;
    run_kws("LSTM__LSTM_S", 25);
}

static void test_kws_gru(void **state)
{
    (void)state;
    run_kws("GRU__GRU_S", 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch_merge),
        cmocka_unit_test(test_switch_n),
        cmocka_unit_test(test_while_loop_corpus),
        cmocka_unit_test(test_nested_loop_corpus),
        cmocka_unit_test(test_loop_in_cond),
        cmocka_unit_test(test_frame_errors),
        cmocka_unit_test(test_functional_if),
        cmocka_unit_test(test_functional_while),
        cmocka_unit_test(test_functional_case),
        cmocka_unit_test(test_saved_model_while),
        cmocka_unit_test(test_function_unsupported),
        cmocka_unit_test(test_tensor_array),
        cmocka_unit_test(test_tensor_list),
        cmocka_unit_test(test_tensor_list_in_while),
        cmocka_unit_test(test_kws_crnn),
        cmocka_unit_test(test_kws_lstm),
        cmocka_unit_test(test_kws_gru),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
