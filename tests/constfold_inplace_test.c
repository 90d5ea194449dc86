/* Constant folding's results written over their input's bytes
 * (src/optimizer/passes/constfold_fold.c, fold_in_place): when it happens
 * (the folded Const's value lies where the input Const's did) and when it
 * must not (a clone or another node still reads those bytes, checked mode,
 * the input fetched), each with the optimized graph's results checked against
 * the original's on the CPU backend. Models come as binary GraphDefs, as real
 * ones do, loaded with gn_graph_load_buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "passtest.h"

#define N 128   /* W is N x N floats: 64 KiB, the smallest result folded in place */
#define MATMUL(n, a, b) "node { name: '" n "' op: 'MatMul' input: '" a "' input: '" b "' " TF "}\n"

/* x [2, N] -> MatMul(x, m), m = Mul(W, sc) (or Mul(sc, W) when swapped),
 * plus `extra` nodes; as a binary GraphDef in *bytes. */
static void model_bytes2(const char *early, const char *extra, bool swapped, void **bytes, size_t *n)
{
    gn_pt_text t = {0};
    uint64_t rng = 0x2545f4914f6cdd1dull;
    gn_pt_text_add(&t, "%s", PH_SHAPE("x", "dim { size: 2 } dim { size: 128 }"));
    int64_t dw[2] = {N, N}, ds[1] = {N};
    gn_pt_text_const(&t, "W", 2, dw, &rng);
    gn_pt_text_const(&t, "sc", 1, ds, &rng);
    if (early) gn_pt_text_add(&t, "%s", early);
    gn_pt_text_add(&t, "node { name: 'm' op: 'Mul' input: '%s' input: '%s' " TF "}\n", swapped ? "sc" : "W",
                   swapped ? "W" : "sc");
    gn_pt_text_add(&t, "node { name: 'y' op: 'MatMul' input: 'x' input: 'm' " TF
                       "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: false } } }\n");
    if (extra) gn_pt_text_add(&t, "%s", extra);
    gn_graph *g = gn_pt_text_load(&t);
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, bytes, n), GN_OK);
    gn_graph_free(g);
}

static void model_bytes(const char *extra, bool swapped, void **bytes, size_t *n)
{
    model_bytes2(NULL, extra, swapped, bytes, n);
}

static gn_graph *load(const void *bytes, size_t n)
{
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(bytes, n, "model.pb", NULL, &g) != GN_OK) fail_msg("load: %s", gn_graph_errmsg(g));
    return g;
}

/* Where node name's value keeps its elements; NULL when it has no value. */
static const void *value_bytes(const gn_graph *g, const char *name)
{
    gn_id id = gn__graph_find(g, name);
    if (id == GN_NONE || !gn__node_live(g, id)) return NULL;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR) return NULL;
    const Tensorflow__TensorProto *p = v->tensor;
    return p->tensor_content.len ? (const void *)p->tensor_content.data : (const void *)p->float_val;
}

static void optimize(gn_graph *g, const gn_options *o, const char *const *fetches, size_t nx)
{
    static const char *const feeds[] = {"x"};
    char *json = gn_pt_optimize_json(g, o, fetches, nx, feeds, 1);
    /* nothing failed, nothing was rolled back */
    assert_null(strstr(json, "\"rolled_back\": true"));
    free(json);
}

/* before and after agree on y (and z when there is one), f32 rel L2 1e-5 */
static void expect_same(const gn_graph *before, const gn_graph *after, const char *const *fetches, size_t nx)
{
    gn_pt_expect_same_random(before, after, fetches, nx, -1.0, 1.0);
}

static void check_in_place(const char *extra, bool swapped)
{
    void *bytes;
    size_t n;
    model_bytes(extra, swapped, &bytes, &n);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const void *w = value_bytes(g, "W");
    assert_non_null(w);
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y"};
    optimize(g, &o, fetches, 1);
    /* m is a Const whose value is where W's was; W is gone */
    gn_id m = gn__graph_find(g, "m");
    assert_true(m != GN_NONE);
    assert_string_equal(gn__node_op(g, m), "Const");
    assert_ptr_equal(value_bytes(g, "m"), w);
    assert_true(gn__graph_find(g, "W") == GN_NONE);
    expect_same(orig, g, fetches, 1);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

static void test_result_over_its_input(void **state)
{
    (void)state;
    check_in_place(NULL, false);
}

static void test_result_over_the_second_input(void **state)
{
    (void)state;
    check_in_place(NULL, true);
}

/* Each case: optimized, m folded but not over W's bytes, and the results
 * (every fetch) still the original's. */
static void check_not_in_place(const char *early, const char *extra, const char *const *fetches, size_t nx,
                               bool checked)
{
    void *bytes;
    size_t n;
    model_bytes2(early, extra, false, &bytes, &n);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const void *w = value_bytes(g, "W");
    gn_options o;
    gn_options_init(&o);
    o.checked = checked;
    optimize(g, &o, fetches, nx);
    assert_non_null(value_bytes(g, "m"));
    assert_ptr_not_equal(value_bytes(g, "m"), w);
    expect_same(orig, g, fetches, nx);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

/* W is also read by a MatMul of x (a Neg of W would fold, and leave the Mul
 * W's one reader) */
static void test_input_read_elsewhere(void **state)
{
    (void)state;
    const char *const fetches[] = {"y", "z"};
    check_not_in_place(NULL, MATMUL("z", "x", "W"), fetches, 2, false);
}

/* The Mul reads W through a Reshape, which folds into a Const sharing W's
 * bytes. With W read by nothing else (it goes with the pass), the result is
 * written over those bytes; with W also read by a MatMul of x, the Reshape's
 * Const has one reader (the Mul) but its bytes two, and it is not. */
static void check_through_a_reshape(bool w_read_elsewhere)
{
    void *bytes;
    size_t n;
    gn_pt_text t = {0};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    gn_pt_text_add(&t, "%s", PH_SHAPE("x", "dim { size: 2 } dim { size: 128 }"));
    gn_pt_text_add(&t, "%s", PH_SHAPE("x2", "dim { size: 2 } dim { size: 64 }"));
    int64_t dw[2] = {N, N}, ds[1] = {256};
    gn_pt_text_const(&t, "W", 2, dw, &rng);
    gn_pt_text_const(&t, "sc", 1, ds, &rng);
    gn_pt_text_add(&t, "node { name: 'dims' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                       "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
                       "int_val: 64 int_val: 256 } } } }\n");
    gn_pt_text_add(&t, "node { name: 'wr' op: 'Reshape' input: 'W' input: 'dims' " TF AT("Tshape", "DT_INT32") "}\n");
    gn_pt_text_add(&t, "node { name: 'm' op: 'Mul' input: 'wr' input: 'sc' " TF "}\n");
    gn_pt_text_add(&t, "%s", MATMUL("y", "x2", "m"));
    gn_pt_text_add(&t, "%s", w_read_elsewhere ? MATMUL("z", "x", "W") : UN("z", "Neg", "x"));
    gn_graph *src = gn_pt_text_load(&t);
    assert_int_equal(gn_graph_serialize(src, GN_FORMAT_BINARY, &bytes, &n), GN_OK);
    gn_graph_free(src);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const void *w = value_bytes(g, "W");
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y", "z"};
    static const char *const feeds[] = {"x", "x2"};
    char *json = gn_pt_optimize_json(g, &o, fetches, 2, feeds, 2);
    free(json);
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "m")), "Const");
    if (w_read_elsewhere) assert_ptr_not_equal(value_bytes(g, "m"), w);
    else assert_ptr_equal(value_bytes(g, "m"), w);
    expect_same(orig, g, fetches, 2);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

static void test_through_a_folded_reshape(void **state)
{
    (void)state;
    check_through_a_reshape(false);
}

static void test_bytes_shared_by_a_folded_reshape(void **state)
{
    (void)state;
    check_through_a_reshape(true);
}

/* Two Reshapes of W fold into Consts sharing W's bytes, each read by one
 * Mul: each Mul's result may not go over those bytes, which the other reads
 * (the folds done together are checked against each other too). */
static void test_two_results_over_the_same_bytes(void **state)
{
    (void)state;
    void *bytes;
    size_t n;
    gn_pt_text t = {0};
    uint64_t rng = 0x5851f42d4c957f2dull;
    gn_pt_text_add(&t, "%s", PH_SHAPE("x2", "dim { size: 2 } dim { size: 64 }"));
    gn_pt_text_add(&t, "%s", PH_SHAPE("x3", "dim { size: 2 } dim { size: 256 }"));
    int64_t dw[2] = {N, N}, d1[1] = {256}, d2[1] = {64};
    gn_pt_text_const(&t, "W", 2, dw, &rng);
    gn_pt_text_const(&t, "s1", 1, d1, &rng);
    gn_pt_text_const(&t, "s2", 1, d2, &rng);
    gn_pt_text_add(&t, "node { name: 'dims1' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                       "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
                       "int_val: 64 int_val: 256 } } } }\n");
    gn_pt_text_add(&t, "node { name: 'dims2' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
                       "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
                       "int_val: 256 int_val: 64 } } } }\n");
    gn_pt_text_add(&t, "node { name: 'r1' op: 'Reshape' input: 'W' input: 'dims1' " TF AT("Tshape", "DT_INT32") "}\n");
    gn_pt_text_add(&t, "node { name: 'r2' op: 'Reshape' input: 'W' input: 'dims2' " TF AT("Tshape", "DT_INT32") "}\n");
    gn_pt_text_add(&t, "node { name: 'm1' op: 'Mul' input: 'r1' input: 's1' " TF "}\n");
    gn_pt_text_add(&t, "node { name: 'm2' op: 'Mul' input: 'r2' input: 's2' " TF "}\n");
    gn_pt_text_add(&t, "%s", MATMUL("y1", "x2", "m1"));
    gn_pt_text_add(&t, "%s", MATMUL("y2", "x3", "m2"));
    gn_graph *src = gn_pt_text_load(&t);
    assert_int_equal(gn_graph_serialize(src, GN_FORMAT_BINARY, &bytes, &n), GN_OK);
    gn_graph_free(src);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const char *w = value_bytes(g, "W");
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y1", "y2"};
    static const char *const feeds[] = {"x2", "x3"};
    free(gn_pt_optimize_json(g, &o, fetches, 2, feeds, 2));
    for (int k = 0; k < 2; k++) {
        const char *m = value_bytes(g, k ? "m2" : "m1");
        assert_non_null(m);
        /* not over any byte of W */
        assert_true(m + sizeof(float) * N * N <= w || m >= w + sizeof(float) * N * N);
    }
    expect_same(orig, g, fetches, 2);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

/* checked mode keeps its copy of the graph for rollback, which shares W */
static void test_checked_mode(void **state)
{
    (void)state;
    const char *const fetches[] = {"y"};
    check_not_in_place(NULL, NULL, fetches, 1, true);
}

/* a clone of the graph made by the caller shares W's bytes: they stay */
static void test_clone_keeps_its_values(void **state)
{
    (void)state;
    void *bytes;
    size_t n;
    model_bytes(NULL, false, &bytes, &n);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    gn_graph *twin = NULL;
    assert_int_equal(gn_graph_clone(g, &twin), GN_OK);
    const void *w = value_bytes(g, "W");
    assert_ptr_equal(value_bytes(twin, "W"), w);
    float *saved = malloc(sizeof(float) * N * N);
    assert_non_null(saved);
    memcpy(saved, w, sizeof(float) * N * N);
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y"};
    optimize(g, &o, fetches, 1);
    assert_ptr_not_equal(value_bytes(g, "m"), w);
    assert_memory_equal(value_bytes(twin, "W"), saved, sizeof(float) * N * N);
    expect_same(orig, g, fetches, 1);
    expect_same(orig, twin, fetches, 1);
    free(saved);
    gn_graph_free(twin);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

/* W fetched: its value is an output */
static void test_input_fetched(void **state)
{
    (void)state;
    void *bytes;
    size_t n;
    model_bytes(NULL, false, &bytes, &n);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const void *w = value_bytes(g, "W");
    float *saved = malloc(sizeof(float) * N * N);
    assert_non_null(saved);
    memcpy(saved, w, sizeof(float) * N * N);
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y", "W"};
    optimize(g, &o, fetches, 2);
    assert_ptr_equal(value_bytes(g, "W"), w);
    assert_memory_equal(w, saved, sizeof(float) * N * N);
    assert_ptr_not_equal(value_bytes(g, "m"), w);
    expect_same(orig, g, fetches, 2);
    free(saved);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

/* Four folds of 1 MiB each, 4 MiB together: a batch large enough to be
 * split between two threads (inplace_run). Each result lies over its own
 * input's bytes and every fetch agrees with the original graph's. */
static void test_large_batch(void **state)
{
    (void)state;
    enum { K = 4, R = 256, C = 1024 };
    gn_pt_text t = {0};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    gn_pt_text_add(&t, "%s", PH_SHAPE("x", "dim { size: 2 } dim { size: 256 }"));
    int64_t dw[2] = {R, C}, ds[1] = {C};
    for (int k = 0; k < K; k++) {
        char w[8], sc[8];
        snprintf(w, sizeof w, "W%d", k);
        snprintf(sc, sizeof sc, "sc%d", k);
        gn_pt_text_const(&t, w, 2, dw, &rng);
        gn_pt_text_const(&t, sc, 1, ds, &rng);
        gn_pt_text_add(&t, "node { name: 'm%d' op: 'Mul' input: 'W%d' input: 'sc%d' " TF "}\n", k, k, k);
        gn_pt_text_add(&t, "node { name: 'y%d' op: 'MatMul' input: 'x' input: 'm%d' " TF
                           "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: false } } }\n",
                       k, k);
    }
    gn_graph *src = gn_pt_text_load(&t);
    void *bytes;
    size_t n;
    assert_int_equal(gn_graph_serialize(src, GN_FORMAT_BINARY, &bytes, &n), GN_OK);
    gn_graph_free(src);
    gn_graph *orig = load(bytes, n), *g = load(bytes, n);
    const void *w[K];
    char name[8];
    for (int k = 0; k < K; k++) {
        snprintf(name, sizeof name, "W%d", k);
        assert_non_null(w[k] = value_bytes(g, name));
    }
    gn_options o;
    gn_options_init(&o);
    const char *const fetches[] = {"y0", "y1", "y2", "y3"};
    optimize(g, &o, fetches, K);
    for (int k = 0; k < K; k++) {
        snprintf(name, sizeof name, "m%d", k);
        assert_ptr_equal(value_bytes(g, name), w[k]);
    }
    expect_same(orig, g, fetches, K);
    gn_graph_free(g);
    gn_graph_free(orig);
    gn_free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_over_its_input),
        cmocka_unit_test(test_result_over_the_second_input),
        cmocka_unit_test(test_through_a_folded_reshape),
        cmocka_unit_test(test_input_read_elsewhere),
        cmocka_unit_test(test_bytes_shared_by_a_folded_reshape),
        cmocka_unit_test(test_two_results_over_the_same_bytes),
        cmocka_unit_test(test_checked_mode),
        cmocka_unit_test(test_clone_keeps_its_values),
        cmocka_unit_test(test_input_fetched),
        cmocka_unit_test(test_large_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
