/* The meta-optimizer's bookkeeping between passes: the structural clone it
 * snapshots with (strings copied with their ids, no re-hashing), rollback
 * when the snapshot is kept across passes that changed nothing, passes
 * skipped in a later iteration when the graph is as their last run left it,
 * and the CPU time in the JSON report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "passtest.h"

/* every built-in pass off: only the custom passes run */
#define ALL_OFF                                                                                                  \
    "{'layout_optimizer': False, 'constant_folding': False, 'shape_optimization': False, 'remapping': False, "    \
    "'arithmetic_optimization': False, 'dependency_optimization': False, 'loop_optimization': False, "           \
    "'function_optimization': False, 'debug_stripper': False, 'scoped_allocator_optimization': False, "          \
    "'pin_to_host_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': False, "       \
    "'common_subgraph_elimination': False, 'auto_parallel': False, 'disable_model_pruning': True, "              \
    "'min_graph_nodes': -1}"

static void options_from(gn_options *o, const char *text)
{
    char err[512];
    gn_options_init(o);
    if (gn_options_parse(o, text, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
}

/* ---- clone ------------------------------------------------------------------------------------ */
static void test_clone_same_names_and_ids(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("a", "Relu", "x") UN("b", "Neg", "a") UN("c", "Relu", "b"));
    gn_graph *c = gn_pt_clone(g);
    assert_int_equal(c->n_nodes, g->n_nodes);
    assert_int_equal(c->names.n, g->names.n);
    for (uint32_t i = 0; i < g->names.n; i++) {
        assert_string_equal(gn__str(c, i), gn__str(g, i));
        assert_int_equal(gn__strlen(c, i), gn__strlen(g, i));
        /* the copied hash slots find every string under its old id */
        assert_int_equal(gn__intern_find(c, gn__str(g, i), gn__strlen(g, i)), i);
        /* and the clone's strings are its own */
        if (gn__strlen(g, i)) assert_ptr_not_equal(gn__str(c, i), gn__str(g, i));
    }
    for (gn_id i = 0; i < g->n_nodes; i++) {
        assert_string_equal(gn__node_name(c, i), gn__node_name(g, i));
        assert_string_equal(gn__node_op(c, i), gn__node_op(g, i));
        assert_int_equal(c->nodes[i].n_in, g->nodes[i].n_in);
        assert_int_equal(c->nodes[i].n_use, g->nodes[i].n_use);
        assert_ptr_not_equal(c->nodes[i].in, g->nodes[i].in);
    }
    /* the clone grows on its own: a new name, a new node, a new edge */
    gn_id d = GN_NONE;
    assert_int_equal(gn__node_add(c, "d_only_in_clone", "NoOp", &d), GN_OK);
    assert_int_equal(gn__node_add_control(c, d, gn__graph_find(c, "c")), GN_OK);
    assert_int_equal(gn__node_add_control(c, gn__graph_find(c, "a"), gn__graph_find(c, "x")), GN_OK);
    assert_int_equal(gn__graph_find(g, "d_only_in_clone"), GN_NONE);
    assert_int_equal(gn__intern_find(g, "d_only_in_clone", 15), UINT32_MAX);
    assert_int_equal(g->nodes[gn__graph_find(g, "c")].n_cuse, 0);
    assert_int_equal(g->nodes[gn__graph_find(g, "a")].n_ctrl, 0);
    assert_int_equal(c->nodes[gn__graph_find(c, "c")].n_cuse, 1);
    assert_int_equal(gn__graph_check_fanouts(c), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    /* freeing the original leaves the clone whole */
    gn_graph_free(g);
    assert_int_equal(gn__graph_validate(c), GN_OK);
    assert_string_equal(gn__node_name(c, gn__graph_find(c, "b")), "b");
    gn_graph_free(c);
}

/* ---- rollback with a snapshot kept across unchanged passes ------------------------------------- */
typedef struct step {
    const char *add;   /* node to add (a NoOp after x), or NULL */
    bool fail;         /* then fail */
    int calls;
} step;

static gn_status custom_run(void *user, gn_graph *g, int32_t *changed, char *err, size_t errlen)
{
    step *s = user;
    s->calls++;
    *changed = 0;
    if (s->add && gn__graph_find(g, s->add) == GN_NONE) {
        gn_id id = GN_NONE;
        if (gn__node_add(g, s->add, "NoOp", &id) != GN_OK) return GN_ERR_INTERNAL;
        if (gn__node_add_control(g, id, gn__graph_find(g, "x")) != GN_OK) return GN_ERR_INTERNAL;
        *changed = 1;
    }
    if (s->fail) {
        snprintf(err, errlen, "failing on purpose");
        return GN_ERR_INTERNAL;
    }
    return GN_OK;
}

static void run_custom(gn_graph *g, step *steps, size_t n, gn_report **r)
{
    gn_options o;
    options_from(&o, ALL_OFF);
    gn_custom_pass cp[4];
    for (size_t i = 0; i < n; i++) {
        cp[i].name = "custom";
        cp[i].run = custom_run;
        cp[i].user = &steps[i];
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.custom_passes = cp;
    p.n_custom_passes = n;
    assert_int_equal(gn_optimize(g, &o, &p, r), GN_OK);
}

static void test_rollback_after_unchanged_pass(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("y", "Relu", "x"));
    /* the first pass changes nothing (the snapshot taken before it is kept),
     * the second adds a node and fails: the graph is as it came in */
    step steps[2] = {{NULL, false, 0}, {"added", true, 0}};
    gn_report *r = NULL;
    run_custom(g, steps, 2, &r);
    assert_int_equal(gn__graph_find(g, "added"), GN_NONE);
    assert_int_equal(g->n_live, 2);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_pt_expect_report(r, "custom: failing on purpose (rolled back)");
    gn_report_free(r);
    gn_graph_free(g);
}

static void test_rollback_after_changed_pass(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("y", "Relu", "x"));
    /* the first pass adds 'kept' and says so (the snapshot is taken again),
     * the second adds 'dropped' and fails: only 'kept' stays */
    step steps[2] = {{"kept", false, 0}, {"dropped", true, 0}};
    gn_report *r = NULL;
    run_custom(g, steps, 2, &r);
    assert_int_not_equal(gn__graph_find(g, "kept"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "dropped"), GN_NONE);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_report_free(r);
    gn_graph_free(g);
}

/* ---- passes skipped in a later iteration ------------------------------------------------------- */
static size_t count_substr(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static void test_second_iteration_skips_clean_passes(void **state)
{
    (void)state;
    /* pruning removes the Identity in iteration 1 (a change, so iteration 2
     * runs); the passes after it changed nothing on a graph nothing changed
     * since, so iteration 2 skips them; pruning itself runs again */
    const char *text = PH("x") UN("i", "Identity", "x") UN("y", "Relu", "i") UN("z", "Neg", "y");
    gn_graph *g = gn_pt_load_text(text);
    gn_options o;
    options_from(&o, "{'min_graph_nodes': -1}");
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *fetch[] = {"z"};
    p.fetches = fetch;
    p.n_fetches = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    assert_int_equal(gn__graph_find(g, "i"), GN_NONE);
    size_t n_it2 = 0, n_skipped = 0, pruning_it2_ran = 0;
    for (size_t i = 0; i < gn_report_pass_count(r); i++) {
        if (gn_report_pass_iteration(r, i) != 1) continue;
        n_it2++;
        if (strcmp(gn_report_pass_name(r, i), "pruning") == 0 && !gn_report_pass_changed(r, i)) pruning_it2_ran = 1;
    }
    char *json = NULL;
    assert_int_equal(gn_report_to_json(r, &json), GN_OK);
    n_skipped = count_substr(json, "\"skipped\": true");
    assert_true(n_it2 > 0);
    assert_true(pruning_it2_ran);
    assert_true(n_skipped > 0);
    assert_true(n_skipped < n_it2); /* pruning and the passes after the last change run */
    /* the report's CPU time is there, per pass and in total */
    assert_non_null(strstr(json, "\"total_cpu_micros\": "));
    assert_int_equal(count_substr(json, "\"cpu_micros\": "), gn_report_pass_count(r));
    free(json);
    char *text_report = gn_pt_report_text(r);
    assert_non_null(strstr(text_report, "skipped: the graph is as its last run left it."));
    free(text_report);
    gn_report_free(r);

    /* the same graph with one iteration and then a second optimize gives the
     * same graph as two iterations with the skips */
    gn_graph *h = gn_pt_load_text(text);
    gn_options o1;
    options_from(&o1, "{'min_graph_nodes': -1, 'meta_optimizer_iterations': 'ONE'}");
    assert_int_equal(gn_optimize(h, &o1, &p, NULL), GN_OK);
    assert_int_equal(gn_optimize(h, &o1, &p, NULL), GN_OK);
    char a[4096], b[4096];
    gn_pt_describe(g, a, sizeof a);
    gn_pt_describe(h, b, sizeof b);
    assert_string_equal(a, b);
    /* and optimizing the result again changes nothing */
    gn_report *r2 = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r2), GN_OK);
    for (size_t i = 0; i < gn_report_pass_count(r2); i++) assert_false(gn_report_pass_changed(r2, i));
    gn_report_free(r2);
    gn_graph_free(h);
    gn_graph_free(g);
}

/* A custom pass is never skipped: the meta-optimizer cannot know it is
 * deterministic. */
static void test_custom_pass_runs_every_iteration(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") UN("y", "Relu", "x"));
    step steps[1] = {{"once", false, 0}};
    gn_report *r = NULL;
    run_custom(g, steps, 1, &r);
    /* iteration 1 changed the graph, so iteration 2 ran it again */
    assert_int_equal(steps[0].calls, 2);
    gn_report_free(r);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clone_same_names_and_ids),
        cmocka_unit_test(test_rollback_after_unchanged_pass),
        cmocka_unit_test(test_rollback_after_changed_pass),
        cmocka_unit_test(test_second_iteration_skips_clean_passes),
        cmocka_unit_test(test_custom_pass_runs_every_iteration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
