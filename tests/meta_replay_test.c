/* Rollback by replay: the meta-optimizer keeps one copy of the graph from
 * before a run of built-in passes and, when a later pass fails, goes back to
 * it and runs those passes again, so the graph is exactly as it was before
 * the failed pass without a copy after every pass that changed something. */
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

#define BIN(n, op, a, b) "node { name: '" n "' op: '" op "' input: '" a "' input: '" b "' " TF "}\n"

/* Pruning removes the Identity nodes, CSE merges the two Relu, arithmetic
 * rewrites the Add of a value with itself: several built-in passes change
 * the graph before the custom passes run. */
static const char *k_graph = PH("x") UN("i1", "Identity", "x") UN("i2", "Identity", "i1") UN("r1", "Relu", "i2")
    UN("r2", "Relu", "i2") BIN("s", "AddV2", "r1", "r2") UN("n", "Neg", "s") UN("z", "Sqrt", "n");

typedef struct custom {
    bool add, fail;
    int calls;
    uint32_t live_seen;   /* nodes of the graph the last call was given */
} custom;

static gn_status custom_run(void *user, gn_graph *g, int32_t *changed, char *err, size_t errlen)
{
    custom *c = user;
    c->calls++;
    c->live_seen = g->n_live;
    *changed = 0;
    if (c->add && gn__graph_find(g, "added_by_custom") == GN_NONE) {
        gn_id id = GN_NONE;
        if (gn__node_add(g, "added_by_custom", "NoOp", &id) != GN_OK) return GN_ERR_INTERNAL;
        if (gn__node_add_control(g, id, gn__graph_find(g, "x")) != GN_OK) return GN_ERR_INTERNAL;
        *changed = 1;
    }
    if (c->fail) {
        snprintf(err, errlen, "failing on purpose");
        return GN_ERR_INTERNAL;
    }
    return GN_OK;
}

static gn_graph *optimize(const char *options, custom *cp, size_t n_cp, gn_report **r)
{
    gn_graph *g = gn_pt_load_text(k_graph);
    gn_options o;
    char err[512];
    gn_options_init(&o);
    if (gn_options_parse(&o, options, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    gn_custom_pass passes[2];
    for (size_t i = 0; i < n_cp; i++) {
        passes[i].name = "custom";
        passes[i].run = custom_run;
        passes[i].user = &cp[i];
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *fetch[] = {"z"};
    p.fetches = fetch;
    p.n_fetches = 1;
    p.custom_passes = n_cp ? passes : NULL;
    p.n_custom_passes = n_cp;
    assert_int_equal(gn_optimize(g, &o, &p, r), GN_OK);
    return g;
}

static size_t runs_of(const gn_report *r, const char *pass)
{
    size_t n = 0;
    for (size_t i = 0; i < gn_report_pass_count(r); i++) n += strcmp(gn_report_pass_name(r, i), pass) == 0;
    return n;
}

static void expect_same_graph(gn_graph *a, gn_graph *b)
{
    char da[8192], db[8192];
    gn_pt_describe(a, da, sizeof da);
    gn_pt_describe(b, db, sizeof db);
    assert_string_equal(da, db);
}

static void check(const char *options)
{
    /* the reference: the built-in passes alone */
    gn_report *r0 = NULL;
    gn_graph *want = optimize(options, NULL, 0, &r0);
    assert_int_equal(gn__graph_find(want, "i1"), GN_NONE);
    assert_true(want->n_live < 8);

    /* a custom pass that changes the graph and fails, after them */
    custom cp = {true, true, 0, 0};
    gn_report *r = NULL;
    gn_graph *g = optimize(options, &cp, 1, &r);
    assert_true(cp.calls >= 1);
    /* it was given what the built-in passes made of the graph ... */
    assert_int_equal(cp.live_seen, want->n_live);
    /* ... and the graph is that again, not the graph from before them */
    assert_int_equal(gn__graph_find(g, "added_by_custom"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "i1"), GN_NONE);
    expect_same_graph(g, want);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_pt_expect_report(r, "custom: failing on purpose (rolled back)");
    /* the passes run again for the rollback leave no second report entry */
    assert_int_equal(runs_of(r, "pruning"), runs_of(r0, "pruning"));
    assert_int_equal(runs_of(r, "arithmetic"), runs_of(r0, "arithmetic"));
    char *json = NULL;
    assert_int_equal(gn_report_to_json(r, &json), GN_OK);
    assert_null(strstr(json, "run again"));
    free(json);

    /* the graph optimized again changes nothing: the rollback kept it whole */
    gn_report *r2 = NULL;
    gn_options o;
    char err[512];
    gn_options_init(&o);
    assert_int_equal(gn_options_parse(&o, options, err, sizeof err), GN_OK);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *fetch[] = {"z"};
    p.fetches = fetch;
    p.n_fetches = 1;
    assert_int_equal(gn_optimize(g, &o, &p, &r2), GN_OK);
    for (size_t i = 0; i < gn_report_pass_count(r2); i++) assert_false(gn_report_pass_changed(r2, i));
    gn_report_free(r2);
    gn_report_free(r);
    gn_report_free(r0);
    gn_graph_free(g);
    gn_graph_free(want);
}

static void test_rollback_redoes_builtin_passes(void **state)
{
    (void)state;
    check("{'min_graph_nodes': -1}");
}

static void test_rollback_redoes_builtin_passes_checked(void **state)
{
    (void)state;
    /* the same with validation after every pass and one iteration */
    check("{'min_graph_nodes': -1, 'meta_optimizer_iterations': 'ONE', 'checked': True}");
}

/* A custom pass that changed the graph is not run again: the copy is taken
 * after it, and a failing custom pass after it keeps its change. */
static void test_changed_custom_pass_kept(void **state)
{
    (void)state;
    custom cp[2] = {{true, false, 0, 0}, {false, true, 0, 0}};
    gn_report *r = NULL;
    gn_graph *g = optimize("{'min_graph_nodes': -1}", cp, 2, &r);
    assert_int_not_equal(gn__graph_find(g, "added_by_custom"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "i1"), GN_NONE);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    assert_int_equal(gn__graph_check_fanouts(g), GN_OK);
    gn_pt_expect_report(r, "custom: failing on purpose (rolled back)");
    gn_report_free(r);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollback_redoes_builtin_passes),
        cmocka_unit_test(test_rollback_redoes_builtin_passes_checked),
        cmocka_unit_test(test_changed_custom_pass_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
