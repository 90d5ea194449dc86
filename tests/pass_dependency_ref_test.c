/* Dependency optimizer (src/optimizer/passes/dependency.c): an Identity that
 * reads a RefSwitch's reference output is bypassed, as Grappler's
 * SafeToRemoveIdentity does (a v1 cond's `read` of a variable); an Identity
 * that reads the variable itself stays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "graph/ir.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define NODE(name, op, inputs, attrs) "node { name: '" name "' op: '" op "' " inputs " " attrs "}\n"
#define IN(x) "input: '" x "' "

static void test_identity_after_ref_switch(void **state)
{
    (void)state;
    const char *text =
        "node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } "
        "attr { key: 'shape' value { shape { } } } attr { key: 'container' value { s: '' } } "
        "attr { key: 'shared_name' value { s: '' } } }\n"
        "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
        "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }\n"
        NODE("rs", "RefSwitch", IN("v") IN("p"), TF) NODE("read", "Identity", IN("rs:1"), TF)
        NODE("sw", "Switch", IN("c") IN("p"), TF)
        NODE("m", "Merge", IN("sw") IN("read"), TF "attr { key: 'N' value { i: 2 } }")
        NODE("q", "Identity", IN("v"), TF) NODE("out", "AddV2", IN("m") IN("q"), TF);
    gn_graph *g = gn_pt_load_text(text);
    gn_pt_preserve_list(g, "out");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "dependency");
    assert_true(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_id read = gn__graph_find(g, "read"), m = gn__graph_find(g, "m"), rs = gn__graph_find(g, "rs");
    assert_true(read == GN_NONE || !gn__node_live(g, read));
    assert_int_not_equal(m, GN_NONE);
    const gn__node *mn = gn__node_at(g, m);
    assert_int_equal(mn->n_in, 2);
    assert_int_equal(mn->in[1].node, rs);
    assert_int_equal(mn->in[1].index, 1);
    gn_id q = gn__graph_find(g, "q");
    assert_true(q != GN_NONE && gn__node_live(g, q));
    gn_pt_fx_expect_event(&f, "Identity 'q' kept: it reads variable 'v'");
    assert_false(gn_pt_fx_run(&f, gn__pass_dependency, g));
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_after_ref_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
