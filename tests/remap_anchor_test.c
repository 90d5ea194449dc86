/* remap skips its whole-graph work when nothing can match: without a
 * contraction or a FusedBatchNorm no pattern can start, so no shape table is
 * inferred and nothing is refused or rewritten; with one, the table is
 * inferred and the fusion runs. Folded filters are scaled in place in the
 * graph's memory: the values are the products, per output channel. */
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

static void test_no_anchor_no_shapes(void **state)
{
    (void)state;
    /* Add of an Add (the side-input shape is wanted) and activations: no contraction */
    gn_graph *g = gn_pt_load_text(PH("x") PH("y") BIN("a", "AddV2", "x", "y") BIN("b", "AddV2", "a", "y")
                                      UN("r", "Relu", "b") UN("out", "Identity", "r"));
    gn_pt_preserve(g, "out");
    char before[4096], after[4096];
    gn_pt_describe(g, before, sizeof before);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "remap");
    assert_false(gn_pt_fx_run(&f, gn__pass_remap, g));
    assert_null(g->shapes.ptr);
    gn_pt_describe(g, after, sizeof after);
    assert_string_equal(before, after);
    gn_pt_fx_expect_no_event(&f, "remap.");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

static void test_anchor_infers_and_fuses(void **state)
{
    (void)state;
    /* MatMul + BiasAdd + Relu: the fusion still happens */
    gn_graph *g = gn_pt_load_text(
        PH("x") "node { name: 'w' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
                "attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 3 } } } } }\n"
        "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 } } } }\n"
        BIN("mm", "MatMul", "x", "w") BIN("ba", "BiasAdd", "mm", "b") UN("r", "Relu", "ba") UN("out", "Identity", "r"));
    gn_pt_preserve(g, "out");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "remap");
    assert_true(gn_pt_fx_run(&f, gn__pass_remap, g));
    gn_id r = gn__graph_find(g, "r");
    assert_int_not_equal(r, GN_NONE);
    assert_string_equal(gn__node_op(g, r), "_FusedMatMul");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_anchor_no_shapes),
        cmocka_unit_test(test_anchor_infers_and_fuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
