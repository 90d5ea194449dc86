/* Decoder models end to end, against TensorFlow's outputs.
 *
 * tests/data/decoder holds two Keras 3 models that tools/model_zoo.py froze
 * (docs/decoders.md), with inputs and TensorFlow's outputs on them:
 *   decoder_step   one step of a transformer decoder over a key/value cache:
 *                  token ids, position and the two caches in; logits and the
 *                  caches updated with keras.ops.slice_update
 *                  (XlaDynamicUpdateSlice) out;
 *   generate_loop  greedy generation: a functional While over the same step,
 *                  the caches, the last token and the ids as loop variables;
 *                  the generated ids and the last logits out.
 * For each: the CPU backend runs the frozen graph (twice in one session);
 * the default optimizer pipeline and loop_optimization AGGRESSIVE rewrite it
 * (what they do inside the While's body is checked in the report); segment
 * makes engine ops of it. Every result must give TensorFlow's outputs:
 * float32 within relative L2 1e-5, the ids exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/runtime.h"
#include "testutil.h"

#define MAX_IO 4
#define TOL 1e-5

typedef struct dec_case {
    const char *name;
    const char *feeds[MAX_IO];
    size_t n_feeds;
    const char *fetches[MAX_IO];
    size_t n_fetches;
} dec_case;

static const dec_case k_step = {"decoder_step", {"ids:0", "pos:0", "k_cache:0", "v_cache:0"}, 4,
                                {"Identity:0", "Identity_1:0", "Identity_2:0"}, 3};
static const dec_case k_loop = {"generate_loop", {"start:0"}, 1, {"Identity:0", "Identity_1:0"}, 2};
/* the While's body as tools/model_zoo.py froze it */
#define LOOP_BODY "while_body_frozen_2942"

typedef struct dec_data {
    gn_graph *g;
    gn_tensor feeds[MAX_IO];
    gn_tensor refs[MAX_IO];
} dec_data;

static void dec_free(dec_data *d)
{
    for (size_t i = 0; i < MAX_IO; i++) {
        gn_tensor_free(&d->feeds[i]);
        gn_tensor_free(&d->refs[i]);
    }
    gn_graph_free(d->g);
    memset(d, 0, sizeof *d);
}

static void dec_load(const dec_case *c, dec_data *d)
{
    char rel[256], path[2048], err[512];
    memset(d, 0, sizeof *d);
    snprintf(rel, sizeof rel, "decoder/%s/frozen.pb", c->name);
    gn_test_data(rel, path, sizeof path);
    if (gn_graph_load(path, NULL, &d->g) != GN_OK) fail_msg("load %s: %s", path, gn_graph_errmsg(d->g));
    for (size_t i = 0; i < c->n_feeds + c->n_fetches; i++) {
        int feed = i < c->n_feeds;
        snprintf(rel, sizeof rel, "decoder/%s/%s%zu.npy", c->name, feed ? "in" : "out",
                 feed ? i : i - c->n_feeds);
        gn_test_data(rel, path, sizeof path);
        if (gn_npy_read(path, feed ? &d->feeds[i] : &d->refs[i - c->n_feeds], err, sizeof err) != GN_OK)
            fail_msg("%s", err);
    }
}

/* Runs g on the recorded inputs (twice in one session) and compares every
 * fetch with TensorFlow's. */
static void expect_tf(const char *what, gn_graph *g, const dec_case *c, dec_data *d)
{
    gn_session *s = NULL;
    gn_session_options o;
    gn_session_options_init(&o);
    if (gn_session_new(g, &o, &s) != GN_OK) fail_msg("%s: session: %s", what, gn_session_errmsg(s));
    gn_tensor outs[MAX_IO];
    memset(outs, 0, sizeof outs);
    char err[2048] = "";
    for (int run = 1; run <= 2 && !err[0]; run++) {
        if (gn_session_run(s, c->feeds, d->feeds, c->n_feeds, c->fetches, outs, c->n_fetches) != GN_OK) {
            snprintf(err, sizeof err, "%s: run %d: %s", what, run, gn_session_errmsg(s));
            break;
        }
        for (size_t i = 0; i < c->n_fetches; i++) {
            gn_compare_result r;
            memset(&r, 0, sizeof r);
            assert_int_equal(gn_tensor_compare(&outs[i], &d->refs[i], TOL, &r), GN_OK);
            if (run == 1)
                print_message("    %-14s %-22s %-13s rel L2 %.2e  max abs %.2e\n", c->name, what, c->fetches[i],
                              r.rel_l2_err, r.max_abs_err);
            if (!r.match && !err[0])
                snprintf(err, sizeof err, "%s: run %d: fetch %s: %s (rel L2 %.3e, max abs %.3e)", what, run,
                         c->fetches[i], r.why[0] ? r.why : "mismatch", r.rel_l2_err, r.max_abs_err);
            gn_tensor_free(&outs[i]);
        }
    }
    gn_session_free(s);
    if (err[0]) fail_msg("%s", err);
}

/* Optimizes a copy of d->g with the options text; returns it and the report text. */
static gn_graph *optimized(const dec_case *c, dec_data *d, const char *opts, char **report)
{
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_clone(d->g, &g), GN_OK);
    gn_options o;
    gn_options_init(&o);
    char err[512];
    if (opts && gn_options_parse(&o, opts, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.feeds = c->feeds;
    p.n_feeds = c->n_feeds;
    p.fetches = c->fetches;
    p.n_fetches = c->n_fetches;
    gn_report *r = NULL;
    gn_status st = gn_optimize(g, &o, &p, &r);
    if (st != GN_OK) {
        gn_report_free(r);
        fail_msg("%s: optimize: %s", c->name, gn_graph_errmsg(g));
    }
    assert_int_equal(gn_report_to_text(r, report), GN_OK);
    gn_report_free(r);
    return g;
}

static void expect_line(const char *report, const char *line)
{
    if (!strstr(report, line)) fail_msg("the report lacks '%s'", line);
}

static size_t count_op(const gn_graph *g, const char *op)
{
    size_t n = 0;
    for (size_t i = 0; i < gn_graph_node_count(g); i++) n += strcmp(gn_graph_node_op(g, i), op) == 0;
    return n;
}

static size_t function_nodes(const gn_graph *g, const char *name)
{
    for (size_t i = 0; i < gn_graph_function_count(g); i++)
        if (strcmp(gn_graph_function_name(g, i), name) == 0) return gn_graph_function_node_count(g, i);
    fail_msg("no function '%s'", name);
    return 0;
}

/* ---- run ------------------------------------------------------------------------------------- */
static void test_run_step(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_step, &d);
    assert_int_equal(count_op(d.g, "XlaDynamicUpdateSlice"), 2);
    expect_tf("run", d.g, &k_step, &d);
    dec_free(&d);
}

static void test_run_loop(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_loop, &d);
    assert_int_equal(count_op(d.g, "While"), 1);
    expect_tf("run", d.g, &k_loop, &d);
    dec_free(&d);
}

/* ---- optimize ------------------------------------------------------------------------------ */
static void test_optimize_step(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_step, &d);
    char *rep = NULL;
    gn_graph *g = optimized(&k_step, &d, NULL, &rep);
    /* the frozen weights' ReadVariableOp Identities and the mask's Range are constants */
    expect_line(rep, "[main it1] constfold.fold: decoder_step_1/range: folded into a Const");
    expect_line(rep, "[main it1] constfold.fold: decoder_step_1/embedding_1/GatherV2/ReadVariableOp: folded into a Const");
    /* the seven Dense layers: MatMul + BiasAdd fused (the gelu one included) */
    assert_int_equal(count_op(g, "_FusedMatMul"), 7);
    assert_int_equal(count_op(g, "MatMul"), 0);
    assert_true(gn_graph_node_count(g) < gn_graph_node_count(d.g));
    gn_free(rep);
    expect_tf("optimize", g, &k_step, &d);
    gn_graph_free(g);
    dec_free(&d);
}

static void test_optimize_loop(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_loop, &d);
    char *rep = NULL;
    gn_graph *g = optimized(&k_loop, &d, NULL, &rep);
    /* inside the While's body: constant folding from the shapes of the loop variables
     * (the mask's Range, the embeddings' bounds, 1/sqrt(dh)) and the fusions */
    expect_line(rep, "[" LOOP_BODY " it1] constfold.fold: while/decoder_step_1_1/range: folded into a Const");
    expect_line(rep, "[" LOOP_BODY " it1] constfold.fold: while/decoder_step_1_1/embedding_2_1/strided_slice: "
                     "folded into a Const");
    expect_line(rep, "[" LOOP_BODY " it1] constfold.div_to_reciprocal_mul: while/decoder_step_1_1/truediv: "
                     "x/c became x*Reciprocal(c)");
    expect_line(rep, "[" LOOP_BODY " it1] remap.contraction_bias_act: while/decoder_step_1_1/dense_13_1/BiasAdd: "
                     "fused MatMul");
    assert_int_equal(function_nodes(d.g, LOOP_BODY), 190);
    assert_int_equal(function_nodes(g, LOOP_BODY), 144);
    assert_int_equal(count_op(g, "While"), 1);
    gn_free(rep);
    expect_tf("optimize", g, &k_loop, &d);
    gn_graph_free(g);
    dec_free(&d);
}

/* loop_optimization AGGRESSIVE: the 22 frozen weights, which the While carries as loop
 * variables its body returns unchanged, become Consts in the body (and are no loop
 * variables any more); constant folding in the body then folds what reads them (the
 * layer norms' Reshapes of their weights, the weights' ReadVariableOp Identities). */
static void test_optimize_loop_aggressive(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_loop, &d);
    char *rep = NULL;
    gn_graph *g = optimized(&k_loop, &d, "{'loop_optimization': 'AGGRESSIVE'}", &rep);
    expect_line(rep, "[main it1] loop.const_var_functional: while: 22 of 30 loop variable(s) constant and returned "
                     "unchanged: Consts in body '" LOOP_BODY "_const_for_while'");
    expect_line(rep, "[" LOOP_BODY "_const_for_while it1] constfold.fold: "
                     "while/decoder_step_1_1/layer_normalization_3_1/Reshape: folded into a Const");
    expect_line(rep, "[" LOOP_BODY "_const_for_while it1] constfold.fold: "
                     "while/decoder_step_1_1/dense_7_1/Cast/ReadVariableOp: folded into a Const");
    for (size_t i = 0; i < gn_graph_node_count(g); i++)
        if (strcmp(gn_graph_node_op(g, i), "While") == 0) assert_int_equal(gn_graph_node_input_count(g, i), 8);
    assert_int_equal(count_op(g, "While"), 1);
    assert_int_equal(function_nodes(g, LOOP_BODY "_const_for_while"), 130);
    assert_int_equal(gn_graph_function_count(g), 2); /* the originals are gone */
    gn_free(rep);
    expect_tf("optimize AGGRESSIVE", g, &k_loop, &d);
    gn_graph_free(g);
    dec_free(&d);
}

/* ---- segment ------------------------------------------------------------------------------- */
static gn_graph *segmented(const dec_case *c, dec_data *d, const char *params, size_t *n_engines)
{
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_clone(d->g, &g), GN_OK);
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char err[512];
    if (gn_conversion_params_parse(&p, params, err, sizeof err) != GN_OK) fail_msg("params: %s", err);
    const char *keep[2 * MAX_IO];
    size_t nk = 0;
    for (size_t i = 0; i < c->n_feeds; i++) keep[nk++] = c->feeds[i];
    for (size_t i = 0; i < c->n_fetches; i++) keep[nk++] = c->fetches[i];
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.preserve = keep;
    sp.n_preserve = nk;
    if (gn_segment(g, &p, &sp, NULL, n_engines) != GN_OK) fail_msg("%s: segment: %s", c->name, gn_graph_errmsg(g));
    return g;
}

/* The whole step (attention over the cache, the cache updates, the MLP and the head)
 * is one engine; only the inputs and the frozen weights' Identities stay outside. */
static void test_segment_step(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_step, &d);
    size_t n = 0;
    gn_graph *g = segmented(&k_step, &d, "{'minimum_segment_size': 3}", &n);
    assert_int_equal(n, 1);
    assert_int_equal(count_op(g, "Grapnel>EngineOp"), 1);
    assert_int_equal(count_op(g, "XlaDynamicUpdateSlice"), 0);
    assert_int_equal(count_op(g, "Einsum"), 0);
    expect_tf("segment FP32", g, &k_step, &d);
    gn_graph_free(g);
    dec_free(&d);
}

/* The loop: the cache and ids set-up before the While is an engine; the While stays
 * outside (control flow), its body runs natively. */
static void test_segment_loop(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_loop, &d);
    size_t n = 0;
    gn_graph *g = segmented(&k_loop, &d, "{'minimum_segment_size': 3}", &n);
    assert_int_equal(n, 1);
    assert_int_equal(count_op(g, "Grapnel>EngineOp"), 1);
    assert_int_equal(count_op(g, "While"), 1);
    expect_tf("segment FP32", g, &k_loop, &d);
    gn_graph_free(g);
    dec_free(&d);
}

/* The optimized step segmented: still one engine, still TensorFlow's outputs. */
static void test_optimize_then_segment_step(void **state)
{
    (void)state;
    dec_data d;
    dec_load(&k_step, &d);
    char *rep = NULL;
    gn_graph *opt = optimized(&k_step, &d, NULL, &rep);
    gn_free(rep);
    gn_graph_free(d.g);
    d.g = opt;
    size_t n = 0;
    gn_graph *g = segmented(&k_step, &d, "{'minimum_segment_size': 3}", &n);
    assert_int_equal(n, 1);
    assert_int_equal(count_op(g, "_FusedMatMul"), 0);
    expect_tf("optimize+segment", g, &k_step, &d);
    gn_graph_free(g);
    dec_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_step),
        cmocka_unit_test(test_run_loop),
        cmocka_unit_test(test_optimize_step),
        cmocka_unit_test(test_optimize_loop),
        cmocka_unit_test(test_optimize_loop_aggressive),
        cmocka_unit_test(test_segment_step),
        cmocka_unit_test(test_segment_loop),
        cmocka_unit_test(test_optimize_then_segment_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
