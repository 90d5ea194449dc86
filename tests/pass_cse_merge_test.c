/* Common subgraph elimination of Merge nodes (src/optimizer/passes/cse.c):
 * a cond's Merges with the same inputs compute one value and merge, as
 * Grappler's CanDedup allows (lowered v1 conds repeat branch_executed Merges
 * of the same pivots); a while loop's Merge (fed by a NextIteration) does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "graph/ir.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_BOOL 10

static bool run_pass(gn_graph *g, gn_report *r)
{
    return gn_pt_run_pass_on(gn__pass_cse, "common_subgraph_elimination", g, g, NULL, r, NULL, GN_TOGGLE_DEFAULT);
}

#define NODE(name, op, inputs, attrs) "node { name: '" name "' op: '" op "' " inputs " " attrs "}\n"
#define IN(x) "input: '" x "' "
#define MERGE(name, a, b) NODE(name, "Merge", IN(a) IN(b), TF "attr { key: 'N' value { i: 2 } }")
#define HEAD                                                                                                    \
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "                        \
    "attr { key: 'shape' value { shape { dim { size: 3 } } } } }\n"                                             \
    "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } "                         \
    "attr { key: 'shape' value { shape { } } } }\n"                                                             \
    NODE("sw", "Switch", IN("x") IN("p"), TF) NODE("t", "Neg", IN("sw:1"), TF) NODE("f", "Exp", IN("sw"), TF)

static void test_cond_merges(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(HEAD MERGE("m1", "f", "t") MERGE("m2", "f", "t")
                                      NODE("out", "AddV2", IN("m1") IN("m2"), TF));
    gn_pt_preserve(g, "out");
    gn_graph *orig = gn_pt_clone(g);
    gn_report *r = gn_pt_new_report();
    assert_true(run_pass(g, r));
    gn_pt_expect_graph(g, HEAD MERGE("m1", "f", "t") NODE("out", "AddV2", IN("m1") IN("m1"), TF));
    gn_pt_expect_report(r, "cse.dedup: m2: 'm2' merged into 'm1'");
    assert_false(run_pass(g, NULL));
    float x[3] = {0.5f, -1, 2};
    int64_t d3[1] = {3};
    const char *fn[2] = {"x", "p"}, *xn[1] = {"out"};
    for (int branch = 0; branch < 2; branch++) {
        bool p = branch == 1;
        gn_tensor ft[2] = {gn_pt_view(DT_FLOAT, x, sizeof x, 1, d3), gn_pt_view(DT_BOOL, &p, sizeof p, 0, NULL)};
        gn_pt_expect_same_results(orig, g, fn, ft, 2, xn, 1, 4);
    }
    gn_report_free(r);
    gn_graph_free(orig);
    gn_graph_free(g);
}

/* Two loop Merges of the same Enter and NextIteration stay apart, with the reason. */
static void test_loop_merges(void **state)
{
    (void)state;
#define ENTER(name, in)                                                                                       \
    NODE(name, "Enter", IN(in), TF "attr { key: 'frame_name' value { s: 'loop' } } "                          \
                               "attr { key: 'is_constant' value { b: false } } "                              \
                               "attr { key: 'parallel_iterations' value { i: 10 } }")
    const char *text = HEAD ENTER("e", "x") MERGE("m1", "e", "n") MERGE("m2", "e", "n")
        NODE("n", "NextIteration", IN("m1"), TF) NODE("use", "AddV2", IN("m1") IN("m2"), TF);
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve(g, "use");
    gn_report *r = gn_pt_new_report();
    run_pass(g, r);
    gn_pt_expect_report(r, "cse.dedup: m2: 'm2' computes the same as 'm1' but is not merged: it is part of a while "
                           "loop's structure");
    gn_id m2 = gn__graph_find(g, "m2");
    assert_true(m2 != GN_NONE && gn__node_live(g, m2));
    gn_report_free(r);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cond_merges),
        cmocka_unit_test(test_loop_merges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
