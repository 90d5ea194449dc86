/* The auto_parallel and scoped_allocator passes (src/optimizer/passes/
 * auto_parallel.c, scoped_allocator.c) against TensorFlow's Grappler:
 * tests/data/parallel/ (tools/make_parallel_goldens.py) holds TF1 training
 * steps and scoped-allocator graphs, and Grappler's output for each with only
 * that pass on; grapnel, with the same settings, must give the same graph
 * (nodes, ops, inputs, devices, attrs, up to node order). Then the declines
 * with their reasons, the pass's place in the pipeline, and the scoped
 * allocator's rewritten graphs run on the CPU backend against the originals
 * (bit for bit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "testutil.h"
#include "passtest.h"

/* Every pass off but the one under test, as the tool runs Grappler. */
#define ONLY_OPTS                                                                                              \
    "{'disable_model_pruning': True, 'layout_optimizer': False, 'constant_folding': False, "                   \
    "'shape_optimization': False, 'remapping': False, 'arithmetic_optimization': False, "                      \
    "'dependency_optimization': False, 'loop_optimization': False, 'function_optimization': False, "           \
    "'implementation_selector': False, 'common_subgraph_elimination': False, 'min_graph_nodes': -1, "          \
    "'meta_optimizer_iterations': 'ONE'}"

typedef struct row {
    char name[128], pass[64], setting[128], fetch[8][128];
    size_t nx;
} row;

static size_t read_manifest(row *rows, size_t max)
{
    char path[1024];
    gn_test_data("parallel/manifest.txt", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[2048];
    size_t n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = '\0';
        row *r = &rows[n];
        memset(r, 0, sizeof *r);
        char fetches[1024];
        if (sscanf(line, "%127[^\t]\t%63[^\t]\t%127[^\t]\t%1023s", r->name, r->pass, r->setting, fetches) != 4)
            fail_msg("bad manifest line: %s", line);
        for (char *p = fetches; *p && r->nx < 8;) {
            size_t k = strcspn(p, ",");
            snprintf(r->fetch[r->nx++], sizeof r->fetch[0], "%.*s", (int)k, p);
            p += k + (p[k] == ',');
        }
        n++;
    }
    fclose(f);
    return n;
}

/* The row's settings as a dictionary (the tool's spelling). */
static void row_options(const row *r, gn_options *o)
{
    char err[1024], extra[512];
    gn_options_init(o);
    if (gn_options_parse(o, ONLY_OPTS, err, sizeof err) != GN_OK) fail_msg("%s", err);
    if (!strcmp(r->pass, "auto_parallel")) {
        snprintf(extra, sizeof extra, "{'auto_parallel': True, 'auto_parallel.num_replicas': %s}", r->setting);
    } else {
        char ops[128];
        snprintf(ops, sizeof ops, "%s", r->setting);
        for (char *p = ops; *p; p++)
            if (*p == ';') *p = ',';
        snprintf(extra, sizeof extra,
                 "{'scoped_allocator_optimization': True, 'scoped_allocator_opts.enable_op': '%s'}", ops);
    }
    if (gn_options_parse(o, extra, err, sizeof err) != GN_OK) fail_msg("%s: %s", extra, err);
}

static gn_report *optimize(gn_graph *g, const gn_options *o, const char *const *fetch, size_t nx, const char *target)
{
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fetch;
    p.n_fetches = nx;
    char err[256];
    if (target && gn_target_parse(target, &p.target, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn_report *r = NULL;
    if (gn_optimize(g, o, &p, &r) != GN_OK) fail_msg("optimize: %s", gn_graph_errmsg(g));
    return r;
}

/* ---- the goldens ------------------------------------------------------------------------------- */
static void test_goldens(void **state)
{
    (void)state;
    row rows[32];
    size_t n = read_manifest(rows, 32);
    assert_true(n >= 11);
    size_t ap = 0, sa = 0;
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        char rel[256];
        snprintf(rel, sizeof rel, "parallel/%.120s.pb", r->name);
        gn_graph *g = gn_test_load_data(rel);
        snprintf(rel, sizeof rel, "parallel/%.120s.grappler.pb", r->name);
        gn_graph *want = gn_test_load_data(rel);
        gn_options o;
        row_options(r, &o);
        const char *fx[8];
        for (size_t k = 0; k < r->nx; k++) fx[k] = r->fetch[k];
        gn_report *rep = optimize(g, &o, fx, r->nx, NULL);
        print_message("%s: %u nodes, Grappler's %u\n", r->name, g->n_live, want->n_live);
        gn_pt_expect_same_graph(g, want);
        ap += !strcmp(r->pass, "auto_parallel");
        sa += !strcmp(r->pass, "scoped_allocator");
        gn_report_free(rep);
        gn_graph_free(g);
        gn_graph_free(want);
    }
    assert_int_equal(ap, 5);
    assert_int_equal(sa, 6);
}

/* ---- auto_parallel details ------------------------------------------------------------------------ */
static row find_row(const char *name)
{
    row rows[32];
    size_t n = read_manifest(rows, 32);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].name, name)) return rows[i];
    fail_msg("no manifest row %s", name);
    return rows[0];
}

static void test_auto_parallel_shape(void **state)
{
    (void)state;
    row r = find_row("linear_gd_queue");
    gn_graph *g = gn_test_load_data("parallel/linear_gd_queue.pb");
    gn_options o;
    row_options(&r, &o);
    o.auto_parallel_num_replicas = 3;
    const char *fx[] = {"train"};
    gn_report *rep = optimize(g, &o, fx, 1, "gpu:sm_90x2");
    char *text = gn_pt_report_text(rep);
    if (!strstr(text, "auto_parallel.replicate") || !strstr(text, "replicated 3 times") ||
        !strstr(text, "each replica dequeuing from 'dequeue'"))
        fail_msg("report:\n%s", text);
    free(text);
    /* the queue is shared, each replica has its own dequeue, on /gpu:<i % 2> */
    assert_int_not_equal(gn__graph_find(g, "input_queue"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "dequeue"), GN_NONE);
    const char *devs[] = {"/gpu:0", "/gpu:1", "/gpu:0"};
    for (int i = 0; i < 3; i++) {
        char name[128];
        snprintf(name, sizeof name, "AutoParallel-Replica-%d/dequeue", i);
        gn_id d = gn__graph_find(g, name);
        assert_int_not_equal(d, GN_NONE);
        assert_string_equal(gn__str(g, g->nodes[d].device), devs[i]);
        assert_string_equal(gn__node_name(g, g->nodes[d].in[0].node), "input_queue");
        snprintf(name, sizeof name, "AutoParallel-Replica-%d/AutoParallel-Div-w/apply", i);
        gn_id v = gn__graph_find(g, name);
        assert_int_not_equal(v, GN_NONE);
        assert_string_equal(gn__node_op(g, v), "RealDiv");
    }
    /* the variables stay single, every replica's apply op updates them */
    gn_id w = gn__graph_find(g, "w");
    assert_int_not_equal(w, GN_NONE);
    uint32_t applies = 0;
    for (uint32_t k = 0; k < g->nodes[w].n_use; k++)
        applies += !strcmp(gn__node_op(g, g->nodes[w].use[k].node), "ApplyGradientDescent");
    assert_int_equal(applies, 3);
    gn_id t = gn__graph_find(g, "train");
    assert_string_equal(gn__node_op(g, t), "NoOp");
    assert_int_equal(g->nodes[t].n_ctrl, 1);
    assert_string_equal(gn__node_name(g, g->nodes[t].ctrl[0]), "AutoParallel-Control-Fetch");
    assert_int_equal(g->nodes[g->nodes[t].ctrl[0]].n_ctrl, 3);
    gn_report_free(rep);
    gn_graph_free(g);
}

static void expect_decline(const char *graph, const char *const *fx, size_t nx, int32_t reps, const char *reason)
{
    row r = find_row("linear_gd");
    gn_graph *g = gn_test_load_data(graph);
    uint32_t before = g->n_live;
    gn_options o;
    row_options(&r, &o);
    o.auto_parallel_num_replicas = reps;
    gn_report *rep = optimize(g, &o, fx, nx, NULL);
    char *text = gn_pt_report_text(rep);
    if (!strstr(text, reason)) fail_msg("want '%s' in:\n%s", reason, text);
    assert_int_equal(g->n_live, before);
    assert_int_equal(gn__graph_find(g, "AutoParallel-Div-Const"), GN_NONE);
    free(text);
    gn_report_free(rep);
    gn_graph_free(g);
}

static void test_auto_parallel_declines(void **state)
{
    (void)state;
    const char *train[] = {"train"}, *out[] = {"out0"}, *bad[] = {"nope:0"};
    expect_decline("parallel/linear_gd.pb", NULL, 0, 2, "no fetch nodes provided (Grappler: 'No fetch nodes provided.')");
    expect_decline("parallel/sa_abs.pb", out, 1, 2, "no variables (Grappler: 'No variables provided.')");
    expect_decline("parallel/linear_gd.pb", train, 1, 0, "auto_parallel.num_replicas is 0: set it to 1 or more");
    (void)bad;
}

/* ---- scoped allocator details ------------------------------------------------------------------- */
static void test_scoped_allocator_declines(void **state)
{
    (void)state;
    /* mixed dtypes in one scope: Grappler's rewriter fails, the whole pass is dropped */
    row r = find_row("sa_mixed_dtypes");
    gn_graph *g = gn_test_load_data("parallel/sa_mixed_dtypes.pb");
    gn_options o;
    row_options(&r, &o);
    const char *fx[] = {"out0", "out1", "out2"};
    gn_report *rep = optimize(g, &o, fx, 3, NULL);
    char *text = gn_pt_report_text(rep);
    if (!strstr(text, "Group ops don't all have same type ('s/abs0' and 's/iabs0'): the whole pass is dropped"))
        fail_msg("report:\n%s", text);
    free(text);
    gn_report_free(rep);
    gn_graph_free(g);

    /* a fetched member: grapnel leaves its group alone */
    r = find_row("sa_abs");
    g = gn_test_load_data("parallel/sa_abs.pb");
    row_options(&r, &o);
    const char *fx2[] = {"out0", "out1", "grads/abs_2"};
    rep = optimize(g, &o, fx2, 3, NULL);
    text = gn_pt_report_text(rep);
    if (!strstr(text, "'grads/abs_2' is fetched or preserved: its group is left alone")) fail_msg("report:\n%s", text);
    assert_int_not_equal(gn__graph_find(g, "grads/abs_0"), GN_NONE);
    free(text);
    gn_report_free(rep);
    gn_graph_free(g);
}

/* The scoped allocator runs last and once, after both iterations. */
static void test_scoped_allocator_last(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_data("parallel/sa_abs.pb");
    gn_options o;
    gn_options_init(&o);
    char err[256];
    if (gn_options_parse(&o, "{'scoped_allocator_optimization': True, 'scoped_allocator_opts.enable_op': 'Abs', "
                             "'constant_folding': False, 'min_graph_nodes': -1}",
                         err, sizeof err) != GN_OK)
        fail_msg("%s", err);
    const char *fx[] = {"out0", "out1", "out2"};
    gn_report *rep = optimize(g, &o, fx, 3, NULL);
    size_t n = gn_report_pass_count(rep), seen = 0;
    assert_true(n > 1);
    for (size_t i = 0; i < n; i++) seen += !strcmp(gn_report_pass_name(rep, i), "scoped_allocator");
    assert_int_equal(seen, 1);
    assert_string_equal(gn_report_pass_name(rep, n - 1), "scoped_allocator");
    assert_int_equal(gn_report_pass_changed(rep, n - 1), 1);
    gn_report_free(rep);
    gn_graph_free(g);
}

/* ---- both passes are built ----------------------------------------------------------------------- */
/* The catalogue line of pass `name` (its option key, no "not built yet"),
 * followed by its pattern id. */
static void expect_listed(const char *list, const char *name, const char *key, const char *pattern)
{
    char head[128], pat[160];
    snprintf(head, sizeof head, "\n%-28s %-30s ", name, key);
    snprintf(pat, sizeof pat, "\n    %-44s ", pattern);
    const char *at = strstr(list, head);
    if (!at) fail_msg("no line '%s' in:\n%s", head + 1, list);
    const char *eol = strchr(at + 1, '\n');
    assert_non_null(eol);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(eol - at - 1), at + 1);
    if (strstr(line, "not built")) fail_msg("'%s' is listed as not built: %s", name, line);
    if (strncmp(eol, pat, strlen(pat)) != 0) fail_msg("'%s' is not followed by pattern %s in:\n%s", name, pattern, list);
}

static void test_both_built(void **state)
{
    (void)state;
    /* optimize --list-passes prints this catalogue */
    char *list = NULL;
    assert_int_equal(gn_optimizer_list_passes(&list), GN_OK);
    expect_listed(list, "autoparallel", "auto_parallel", "auto_parallel.replicate");
    expect_listed(list, "scoped_allocator", "scoped_allocator_optimization", "scoped_allocator.group");
    gn_free(list);

    /* both keys on, through the dictionary: both passes run, no "not built" note.
     * auto_mixed_precision_cpu ON makes the report carry a note, so that notes are
     * known to reach the text this test reads. */
    gn_graph *g = gn_test_load_data("parallel/linear_gd.pb");
    gn_options o;
    gn_options_init(&o);
    char err[256];
    if (gn_options_parse(&o, "{'auto_parallel': True, 'auto_parallel.num_replicas': 2, "
                             "'scoped_allocator_optimization': True, 'auto_mixed_precision_cpu': True}",
                         err, sizeof err) != GN_OK)
        fail_msg("%s", err);
    const char *fx[] = {"train"};
    gn_report *rep = optimize(g, &o, fx, 1, NULL);
    gn_pt_expect_report(rep, "auto_mixed_precision_cpu: not applicable");
    gn_pt_expect_no_report(rep, "not built");
    bool ap = false, sa = false;
    for (size_t i = 0; i < gn_report_pass_count(rep); i++) {
        ap |= !strcmp(gn_report_pass_name(rep, i), "autoparallel") && gn_report_pass_changed(rep, i) == 1;
        sa |= !strcmp(gn_report_pass_name(rep, i), "scoped_allocator");
    }
    assert_true(ap);
    assert_true(sa);
    assert_int_not_equal(gn__graph_find(g, "AutoParallel-Control-Fetch"), GN_NONE);
    gn_report_free(rep);
    gn_graph_free(g);
}

/* ---- the rewritten graphs run ---------------------------------------------------------------------- */
static void test_scoped_allocator_runs(void **state)
{
    (void)state;
    const char *names[] = {"sa_abs", "sa_scopes", "sa_int32", "sa_const", "sa_two_ops"};
    for (size_t i = 0; i < GN__ARRAY_LEN(names); i++) {
        row r = find_row(names[i]);
        char rel[256];
        snprintf(rel, sizeof rel, "parallel/%.120s.pb", r.name);
        gn_graph *before = gn_test_load_data(rel);
        gn_graph *after = gn_pt_clone(before);
        gn_options o;
        row_options(&r, &o);
        const char *fx[8];
        for (size_t k = 0; k < r.nx; k++) fx[k] = r.fetch[k];
        gn_report_free(optimize(after, &o, fx, r.nx, NULL));
        bool any = false;
        for (gn_id k = 0; k < after->n_nodes; k++)
            any |= gn__node_live(after, k) && !strcmp(gn__node_op(after, k), "_ScopedAllocatorSplit");
        assert_true(any);
        gn_tensor a[8], b[8];
        gn_pt_run_graph(before, NULL, NULL, 0, fx, a, r.nx);
        gn_pt_run_graph(after, NULL, NULL, 0, fx, b, r.nx);
        for (size_t k = 0; k < r.nx; k++) {
            assert_int_equal(a[k].dtype, b[k].dtype);
            assert_int_equal(a[k].nbytes, b[k].nbytes);
            if (memcmp(a[k].data, b[k].data, a[k].nbytes) != 0) fail_msg("%s: %s differs", r.name, fx[k]);
            gn_tensor_free(&a[k]);
            gn_tensor_free(&b[k]);
        }
        gn_graph_free(before);
        gn_graph_free(after);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_auto_parallel_shape),
        cmocka_unit_test(test_auto_parallel_declines),
        cmocka_unit_test(test_scoped_allocator_declines),
        cmocka_unit_test(test_scoped_allocator_last),
        cmocka_unit_test(test_scoped_allocator_runs),
        cmocka_unit_test(test_both_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
