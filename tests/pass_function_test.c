/* The function optimizer (src/optimizer/passes/function*.c) and the inliner
 * (src/optimizer/inline.h): one rewrite at a time, the exact graph after, the
 * refusals with their reasons, and the original and the rewritten graph run
 * on the CPU backend on the same feeds. Then every corpus model with a
 * function library through the pass and through the whole default pipeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "io/savedmodel.h"
#include "optimizer/inline.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define FCONST(n, v)                                                                                                 \
    "node_def { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"
#define CALL_ATTRS(fn)                                                                                               \
    "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } " \
    "attr { key: 'f' value { func { name: '" fn "' } } } "
#define CALL_ATTRS2(fn)                                                                                              \
    "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT type: " \
    "DT_FLOAT } } } attr { key: 'f' value { func { name: '" fn "' } } } "

/* add_one(a) = a + 1 */
#define FN_ADD_ONE                                                                                                   \
    "function { signature { name: 'add_one' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "   \
    "DT_FLOAT } }\n" FCONST("one", "1")                                                                             \
    "node_def { name: 'add' op: 'AddV2' input: 'a' input: 'one:output:0' " TF "}\n"                                \
    "ret { key: 'y' value: 'add:z:0' } }\n"

/* two(a) = (a * 2, -a) */
#define FN_TWO                                                                                                       \
    "function { signature { name: 'two' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'p' type: "       \
    "DT_FLOAT } output_arg { name: 'q' type: DT_FLOAT } }\n" FCONST("c2", "2")                                     \
    "node_def { name: 'mul' op: 'Mul' input: 'a' input: 'c2:output:0' " TF "}\n"                                   \
    "node_def { name: 'neg' op: 'Neg' input: 'a' " TF "}\n"                                                        \
    "ret { key: 'p' value: 'mul:z:0' } ret { key: 'q' value: 'neg:y:0' } }\n"

static float xs[6] = {-1.5f, 2.0f, 0.25f, -3.0f, 4.0f, 0.5f};
static const int64_t d6[1] = {6};

static void check_x(const gn_graph *before, const gn_graph *after, const char *fetch)
{
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {fetch};
    gn_pt_check_same(before, after, fn, &t, 1, xn, 1);
}

/* ---- function.inline ------------------------------------------------------------------------- */
static void test_inline_partitioned_call(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'PartitionedCall' input: 'x' " CALL_ATTRS("add_one")
                                  "}\nnode { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_ADD_ONE "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Neg(call/output/_0); call/input/_0=Identity(x); call/one=Const(); call/add=AddV2(call/input/_0, call/one); call/output/_0=Identity(call/add)");
    gn_pt_fx_expect_event(&f, "function.inline: inlined 'call' (function 'add_one', 4 nodes)");
    assert_int_equal(g->n_fns, 0);
    check_x(before, g, "y");
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}


/* The call is fetched: its name stays, as an IdentityN over the outputs, and
 * "call:1" still names output 1. */
static void test_inline_fetch_by_call_name(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'StatefulPartitionedCall' input: 'x' " CALL_ATTRS2("two")
                                  "}\nnode { name: 'y' op: 'Exp' input: 'call:1' " TF "}\n"
                                  "library { " FN_TWO "}\n");
    gn_pt_preserve_list(g, "x,call,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Exp(call/output/_1); call/input/_0=Identity(x); call/c2=Const(); call/mul=Mul(call/input/_0, call/c2); call/neg=Neg(call/input/_0); call/output/_0=Identity(call/mul); call/output/_1=Identity(call/neg); call/output_control_node=NoOp(); call=IdentityN(call/output/_0, call/output/_1, ^call/output_control_node)");
    check_x(before, g, "call:1");
    check_x(before, g, "call:0");
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Control inputs of the call gate the inputs and the body's input-less
 * nodes; control consumers wait for the control returns. */
#define FN_STATEFUL                                                                                                  \
    "function { signature { name: 'st' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "        \
    "DT_FLOAT } control_output: 'side' is_stateful: true }\n" FCONST("k", "3")                                     \
    "node_def { name: 'mul' op: 'Mul' input: 'a' input: 'k:output:0' " TF "}\n"                                    \
    "node_def { name: 'side' op: 'NoOp' input: '^mul' }\n"                                                         \
    "ret { key: 'y' value: 'mul:z:0' } control_ret { key: 'side' value: 'side' } }\n"

static void test_inline_control_edges(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'gate' op: 'NoOp' }\n"
                                  "node { name: 'call' op: 'StatefulPartitionedCall' input: 'x' input: '^gate' "
                                  CALL_ATTRS("st") "}\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' input: '^call' " TF "}\n"
                                  "node { name: 'after' op: 'NoOp' input: '^call' }\n"
                                  "library { " FN_STATEFUL "}\n");
    gn_pt_preserve_list(g, "x,y,after");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); gate=NoOp(); y=Neg(call/output/_0, ^call/output_control_node); after=NoOp(^call/output_control_node); call/input_control_node=NoOp(^gate); call/input/_0=Identity(x, ^call/input_control_node); call/k=Const(^call/input_control_node); call/mul=Mul(call/input/_0, call/k); call/side=NoOp(^call/mul); call/output/_0=Identity(call/mul); call/output_control_node=NoOp(^call/side)");
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A call by op name (data outputs drive the output control node) inside a
 * function called through PartitionedCall: both levels open in one run. */
#define FN_OUTER                                                                                                     \
    "function { signature { name: 'outer' input_arg { name: 'b' type: DT_FLOAT } output_arg { name: 'o' type: "     \
    "DT_FLOAT } }\n"                                                                                               \
    "node_def { name: 'inner' op: 'add_one' input: 'b' }\n"                                                        \
    "node_def { name: 'sq' op: 'Square' input: 'inner:y:0' " TF "}\n"                                              \
    "ret { key: 'o' value: 'sq:y:0' } }\n"

static void test_inline_nested(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'PartitionedCall' input: 'x' " CALL_ATTRS("outer")
                                  "}\nnode { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_OUTER FN_ADD_ONE "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Neg(call/output/_0); call/input/_0=Identity(x); call/sq=Square(call/inner/output/_0); call/output/_0=Identity(call/sq); call/inner/input/_0=Identity(call/input/_0); call/inner/one=Const(); call/inner/add=AddV2(call/inner/input/_0, call/inner/one); call/inner/output/_0=Identity(call/inner/add)");
    gn_pt_fx_expect_event(&f, "function.inline: inlined 'call/inner' (function 'add_one', 4 nodes)");
    assert_int_equal(g->n_fns, 0);
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* The pass over a function body opens the calls the body makes (resolved
 * against the top-level library); the top level is left alone. */
static void test_inline_in_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'outer' input: 'x' }\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_OUTER FN_ADD_ONE "}\n");
    gn__function *outer = gn__graph_find_function(g, "outer");
    assert_non_null(outer);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run_on(&f, gn__pass_function, outer->body, "outer"));
    gn_pt_expect_dump(outer->body, "b=_Arg(); sq=Square(inner/output/_0); _retval:o=_Retval(sq); inner/input/_0=Identity(b); inner/one=Const(); inner/add=AddV2(inner/input/_0, inner/one); inner/output/_0=Identity(inner/add)");
    assert_int_equal(g->n_fns, 2);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* A call that is a control return of the body it sits in stays as its
 * outputs (an IdentityN of its name), and the control return follows it. */
#define FN_WRAP                                                                                                      \
    "function { signature { name: 'wrap' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "      \
    "DT_FLOAT } control_output: 'c' is_stateful: true }\n"                                                         \
    "node_def { name: 'c' op: 'st' input: 'a' }\n"                                                                 \
    "ret { key: 'y' value: 'c:y:0' } control_ret { key: 'c' value: 'c' } }\n"

static void test_inline_control_ret_in_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'wrap' input: 'x' }\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_WRAP FN_STATEFUL "}\n");
    gn_graph *before = gn_pt_clone(g);
    gn__function *w = gn__graph_find_function(g, "wrap");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run_on(&f, gn__pass_function, w->body, "wrap"));
    gn_pt_expect_dump(w->body, "a=_Arg(); _retval:y=_Retval(c/output/_0); c/input/_0=Identity(a); c/k=Const(); "
                               "c/mul=Mul(c/input/_0, c/k); c/side=NoOp(^c/mul); c/output/_0=Identity(c/mul); "
                               "c/output_control_node=NoOp(^c/side, ^c/output/_0); "
                               "c=IdentityN(c/output/_0, ^c/output_control_node)");
    assert_int_equal(w->n_control_ret, 1);
    assert_string_equal(gn__node_name(w->body, w->control_ret_node[0]), "c");
    void *bytes = NULL;
    size_t nbytes = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &bytes, &nbytes), GN_OK);
    gn_graph *back = NULL;
    assert_int_equal(gn_graph_load_buffer(bytes, nbytes, "t.pb", NULL, &back), GN_OK);
    gn_free(bytes);
    check_x(before, back, "y");
    gn_graph_free(back);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* _noinline is respected (and the call specialized instead when it has a
 * constant input); AGGRESSIVE ignores it, as Grappler. */
#define FN_NOINLINE                                                                                                  \
    "function { signature { name: 'ni' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'b' type: "         \
    "DT_FLOAT } output_arg { name: 'p' type: DT_FLOAT } output_arg { name: 'q' type: DT_FLOAT } }\n"              \
    "attr { key: '_noinline' value { b: true } }\n"                                                                \
    "node_def { name: 'mul' op: 'Mul' input: 'a' input: 'b' " TF "}\n"                                             \
    "node_def { name: 'sub' op: 'Sub' input: 'a' input: 'b' " TF "}\n"                                             \
    "ret { key: 'p' value: 'mul:z:0' } ret { key: 'q' value: 'sub:z:0' } }\n"
#define CALL_NI                                                                                                      \
    "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "      \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }\n"                                             \
    "node { name: 'sc/call' op: 'PartitionedCall' input: 'x' input: 'c' "                                           \
    "attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT } } } "                                         \
    "attr { key: 'Tout' value { list { type: DT_FLOAT type: DT_FLOAT } } } "                                        \
    "attr { key: 'f' value { func { name: 'ni' } } } }\n"                                                          \
    "node { name: 'y' op: 'Neg' input: 'sc/call:1' " TF "}\n"

static void test_noinline_refused_and_specialized(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") CALL_NI "library { " FN_NOINLINE "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.inline: sc/call: not inlined: function 'ni' is marked _noinline");
    gn_pt_fx_expect_event(&f, "function.specialize: sc/call: calls 'ni_specialized_for_sc_call_at_tf_graph', a copy of 'ni' with 1 constant input pushed in and 1 unused output removed");
    gn_pt_expect_dump(g, "x=Placeholder(); c=Const(); sc/call=PartitionedCall(x); y=Neg(sc/call)");
    assert_int_equal(g->n_fns, 1);
    gn__function *sf = gn__graph_find_function(g, "ni_specialized_for_sc_call_at_tf_graph");
    assert_non_null(sf);
    gn_pt_expect_dump(sf->body, "a=_Arg(); b=Const(); mul=Mul(a, b); sub=Sub(a, b); _retval:q=_Retval(sub)");
    assert_int_equal(sf->def->signature->n_input_arg, 1);
    assert_int_equal(sf->def->signature->n_output_arg, 1);
    check_x(before, g, "y");
    /* written out and read back, the specialized function is a valid one */
    void *bytes = NULL;
    size_t nbytes = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &bytes, &nbytes), GN_OK);
    gn_graph *back = NULL;
    assert_int_equal(gn_graph_load_buffer(bytes, nbytes, "t.pb", NULL, &back), GN_OK);
    gn_free(bytes);
    check_x(before, back, "y");
    gn_graph_free(back);
    /* nothing left to do */
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

static void test_noinline_aggressive(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") CALL_NI "library { " FN_NOINLINE "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    f.c.toggle = GN_TOGGLE_AGGRESSIVE;
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); c=Const(); y=Neg(sc/call/output/_1); sc/call/input/_0=Identity(x); sc/call/input/_1=Identity(c); sc/call/mul=Mul(sc/call/input/_0, sc/call/input/_1); sc/call/sub=Sub(sc/call/input/_0, sc/call/input/_1); sc/call/output/_0=Identity(sc/call/mul); sc/call/output/_1=Identity(sc/call/sub)");
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A recursive function is never opened (the sweep would not end). */
#define FN_REC                                                                                                       \
    "function { signature { name: 'rec' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "       \
    "DT_FLOAT } }\n"                                                                                               \
    "node_def { name: 'again' op: 'rec' input: 'a' }\n"                                                            \
    "ret { key: 'y' value: 'again:y:0' } }\n"

static void test_recursion_refused(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'rec' input: 'x' }\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_REC "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.inline: call: not inlined: function 'rec' is recursive");
    gn_pt_expect_dump(g, "x=Placeholder(); call=rec(x); y=Neg(call)");
    assert_int_equal(g->n_fns, 1);
    gn__err err;
    gn__err_clear(&err);
    assert_int_equal(gn__inline_call(g, gn__graph_find(g, "call"), &err), GN_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "cannot inline 'call': function 'rec' is recursive");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* Attr placeholders of the body ("$T") take the call's attrs; the call's
 * device goes to the nodes without one. */
#define FN_POLY                                                                                                      \
    "function { signature { name: 'poly' input_arg { name: 'a' type_attr: 'T' } output_arg { name: 'y' type_attr: " \
    "'T' } attr { name: 'T' type: 'type' } }\n"                                                                    \
    "node_def { name: 'sq' op: 'Square' input: 'a' attr { key: 'T' value { placeholder: 'T' } } }\n"               \
    "node_def { name: 'ab' op: 'Abs' input: 'sq:y:0' device: '/device:CPU:1' attr { key: 'T' value { "           \
    "placeholder: 'T' } } }\n"                                                                                     \
    "ret { key: 'y' value: 'ab:y:0' } }\n"

static void test_inline_placeholders_and_device(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'poly' input: 'x' device: '/device:CPU:0' " TF "}\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_POLY "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); y=Neg(call/output/_0); call/input/_0=Identity(x)@/device:CPU:0; call/sq=Square(call/input/_0)@/device:CPU:0; call/ab=Abs(call/sq)@/device:CPU:1; call/output/_0=Identity(call/ab)@/device:CPU:0");
    gn_id sq = gn__graph_find(g, "call/sq");
    int t = 0;
    assert_true(gn__attr_get_type(g, sq, "T", &t));
    assert_int_equal(t, DT_FLOAT);
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Colocation groups of body nodes, as TensorFlow's inliner maps them: one
 * naming a body node gets the call's prefix, one naming an argument becomes
 * the argument's input Identity, and one naming neither (a FuncGraph's name
 * for a captured input: tf.nn.embedding_lookup writes "loc:@embedding_lookup/15"
 * where the argument is "embedding_lookup_15") is dropped, and with it the
 * attr when no group is left: TensorFlow's importer refuses a group naming no
 * node ("expects to be colocated with unknown node"). */
#define COLOC(g) "attr { key: '_class' value { list { " g " } } } "
#define FN_COLOC                                                                                                     \
    "function { signature { name: 'coloc' input_arg { name: 'a_15' type: DT_FLOAT } output_arg { name: 'y' type: "  \
    "DT_FLOAT } }\n"                                                                                                \
    "node_def { name: 'sq' op: 'Square' input: 'a_15' " TF "}\n"                                                   \
    "node_def { name: 'ab' op: 'Abs' input: 'sq:y:0' " TF COLOC("s: 'loc:@sq' s: 'loc:@a/15'") "}\n"            \
    "node_def { name: 'ng' op: 'Neg' input: 'ab:y:0' " TF COLOC("s: 'loc:@a_15'") "}\n"                          \
    "node_def { name: 'ex' op: 'Exp' input: 'ng:y:0' " TF COLOC("s: 'loc:@a/15'") "}\n"                          \
    "ret { key: 'y' value: 'ex:y:0' } }\n"

static void check_class(const gn_graph *g, const char *node, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    assert_int_not_equal(id, GN_NONE);
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "_class");
    if (!want) {
        if (v) fail_msg("'%s' keeps a _class attr", node);
        return;
    }
    assert_non_null(v);
    assert_int_equal(v->list->n_s, 1);
    assert_int_equal(v->list->s[0].len, strlen(want));
    assert_memory_equal(v->list->s[0].data, want, strlen(want));
}

static void test_inline_colocation_groups(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") "node { name: 'call' op: 'PartitionedCall' input: 'x' "
                                  "attr { key: 'Tin' value { list { type: DT_FLOAT } } } "
                                  "attr { key: 'Tout' value { list { type: DT_FLOAT } } } "
                                  "attr { key: 'f' value { func { name: 'coloc' } } } }\n"
                                  "node { name: 'y' op: 'Neg' input: 'call' " TF "}\n"
                                  "library { " FN_COLOC "}\n");
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    check_class(g, "call/ab", "loc:@call/sq");
    check_class(g, "call/ng", "loc:@call/input/_0");
    check_class(g, "call/ex", NULL);
    check_x(before, g, "y");
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* gn__inline_calls, as freezing uses it: every call open (even _noinline),
 * callers kept as IdentityN, functions dropped. */
static void test_inline_calls_api(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") CALL_NI "library { " FN_NOINLINE "}\n");
    gn_graph *before = gn_pt_clone(g);
    gn__inline_opts o = {.ignore_noinline = true, .drop_unused_fns = true};
    uint32_t n = 0;
    gn__err err;
    gn__err_clear(&err);
    assert_int_equal(gn__inline_calls(g, &o, &n, &err), GN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(g->n_fns, 0);
    assert_int_equal(gn__graph_compact(g), GN_OK);
    assert_int_equal(gn__graph_validate(g), GN_OK);
    gn_pt_expect_dump(g, "x=Placeholder(); c=Const(); y=Neg(sc/call/output/_1); sc/call/input/_0=Identity(x); sc/call/input/_1=Identity(c); sc/call/mul=Mul(sc/call/input/_0, sc/call/input/_1); sc/call/sub=Sub(sc/call/input/_0, sc/call/input/_1); sc/call/output/_0=Identity(sc/call/mul); sc/call/output/_1=Identity(sc/call/sub); sc/call/output_control_node=NoOp(); sc/call=IdentityN(sc/call/output/_0, sc/call/output/_1, ^sc/call/output_control_node)");
    check_x(before, g, "sc/call:1");
    check_x(before, g, "y");
    /* without ignore_noinline nothing opens */
    gn_graph *h = gn_pt_clone(before);
    gn__inline_opts o2 = {0};
    assert_int_equal(gn__inline_calls(h, &o2, &n, &err), GN_OK);
    assert_int_equal(n, 0);
    gn_graph_free(h);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- function.prune_library ------------------------------------------------------------------ */
static void test_prune_library(void **state)
{
    (void)state;
    /* If branches and functions reached only through a kept function stay */
    gn_graph *g = gn_pt_load_text(
        PH("x") "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"
        "node { name: 'if' op: 'If' input: 'p' input: 'x' attr { key: 'Tcond' value { type: DT_BOOL } } "
        "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } "
        "attr { key: 'then_branch' value { func { name: 'outer' } } } "
        "attr { key: 'else_branch' value { func { name: 'two_first' } } } }\n"
        "library { " FN_OUTER FN_ADD_ONE FN_TWO
        "function { signature { name: 'two_first' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "
        "DT_FLOAT } }\n node_def { name: 'n' op: 'Neg' input: 'a' " TF "}\n ret { key: 'y' value: 'n:y:0' } }\n"
        FN_REC "}\n");
    gn_pt_preserve_list(g, "x,p,if");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.prune_library: removed 2 library functions nothing references (library size = 3): 'two', 'rec'");
    assert_int_equal(g->n_fns, 3);
    assert_non_null(gn__graph_find_function(g, "outer"));
    assert_non_null(gn__graph_find_function(g, "add_one"));
    assert_non_null(gn__graph_find_function(g, "two_first"));
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- function.symbolic_gradient ------------------------------------------------------------- */
static uint32_t count_calls(const gn_graph *g);
/* sq(a) = a * a, its registered gradient sq_grad(a, dy) = dy * 2a; and
 * cube(a) = a * a * a without one. */
#define FN_SQ_GRAD                                                                                                   \
    "function { signature { name: 'sq' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "        \
    "DT_FLOAT } }\n node_def { name: 'm' op: 'Mul' input: 'a' input: 'a' " TF "}\n ret { key: 'y' value: 'm:z:0' } }\n" \
    "function { signature { name: 'sq_grad' input_arg { name: 'a' type: DT_FLOAT } input_arg { name: 'dy' type: "   \
    "DT_FLOAT } output_arg { name: 'da' type: DT_FLOAT } }\n" FCONST("two", "2")                                    \
    "node_def { name: 'ta' op: 'Mul' input: 'a' input: 'two:output:0' " TF "}\n"                                   \
    "node_def { name: 'g' op: 'Mul' input: 'dy' input: 'ta:z:0' " TF "}\n ret { key: 'da' value: 'g:z:0' } }\n"    \
    "function { signature { name: 'cube' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "      \
    "DT_FLOAT } }\n node_def { name: 'm' op: 'Mul' input: 'a' input: 'a' " TF "}\n"                                \
    "node_def { name: 'm2' op: 'Mul' input: 'm:z:0' input: 'a' " TF "}\n ret { key: 'y' value: 'm2:z:0' } }\n"     \
    "gradient { function_name: 'sq' gradient_func: 'sq_grad' }\n"
#define SG(n, fn)                                                                                                    \
    "node { name: '" n "' op: 'SymbolicGradient' input: 'x' input: 'dy' "                                           \
    "attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT } } } "                                         \
    "attr { key: 'Tout' value { list { type: DT_FLOAT } } } attr { key: 'f' value { func { name: '" fn "' } } } }\n"

static void test_symbolic_gradient(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(PH("x") PH("dy") SG("g", "sq") SG("h", "cube") "node { name: 'y' op: 'Neg' input: 'g' " TF
                                  "}\n library { " FN_SQ_GRAD "}\n");
    gn_pt_preserve_list(g, "x,dy,y,h");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); dy=Placeholder(); h=SymbolicGradient(x, dy); y=Neg(g/output/_0); "
                         "g/input/_0=Identity(x); g/input/_1=Identity(dy); g/two=Const(); g/ta=Mul(g/input/_0, g/two); "
                         "g/g=Mul(g/input/_1, g/ta); g/output/_0=Identity(g/g)");
    gn_pt_fx_expect_event(&f, "function.symbolic_gradient: g: SymbolicGradient of 'sq' is now a call of its gradient "
                              "function 'sq_grad'");
    gn_pt_fx_expect_event(&f, "function.symbolic_gradient: h: not expanded: 'cube' has no gradient function in the "
                              "library (building a gradient from the gradients of its ops is not implemented)");
    /* y = -(dy * 2x) */
    float dys[6] = {1.0f, -2.0f, 0.5f, 3.0f, 0.25f, -1.0f};
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(DT_FLOAT, dys, sizeof dys, 1, d6)};
    const char *fn[2] = {"x", "dy"}, *xn[1] = {"y"};
    gn_tensor o;
    gn_pt_run_graph(g, fn, t, 2, xn, &o, 1);
    for (int k = 0; k < 6; k++) assert_float_equal(((const float *)o.data)[k], -(dys[k] * 2.0f * xs[k]), 0.0f);
    gn_tensor_free(&o);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* graphdef2mlir/graph-gradient-def: SymbolicGradient of foo (x -> e^x - e^-x),
 * whose registered gradient foo_grad(x, dy) = x * dy (as the test graph
 * defines it, not the true derivative), at x = Const 0.25 with dy = ones. As
 * TensorFlow 2.21's function optimizer: foo and the SymbolicGradient are
 * inlined (the gradient through foo_grad) and the default pipeline leaves one
 * Const; TensorFlow computes 0.25 for the fetch. */
static void test_corpus_symbolic_gradient(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("tensorflow__tensorflow/"
                        "tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__graph-gradient-def.pbtxt",
                        path, sizeof path))
        skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_pt_preserve_list(g, "gradients/foo_grad/SymbolicGradient");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.symbolic_gradient: gradients/foo_grad/SymbolicGradient: SymbolicGradient of "
                              "'foo' is now a call of its gradient function 'foo_grad'");
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i)) assert_string_not_equal(gn__node_op(g, i), "SymbolicGradient");
    assert_int_equal(count_calls(g), 0);
    gn_pt_check_valid(g, "graph-gradient-def");
    const char *xn[1] = {"gradients/foo_grad/SymbolicGradient"};
    gn_tensor o;
    gn_pt_run_graph(g, NULL, NULL, 0, xn, &o, 1);
    assert_int_equal(o.dtype, DT_FLOAT);
    assert_float_equal(*(const float *)o.data, 0.25f, 0.0f);
    gn_tensor_free(&o);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
    /* the default pipeline: one Const, as Grappler */
    assert_int_equal(gn_graph_load(path, NULL, &g), GN_OK);
    gn_options opt;
    gn_options_init(&opt);
    gn_optimize_params pr;
    gn_optimize_params_init(&pr);
    pr.fetches = xn;
    pr.n_fetches = 1;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &opt, &pr, &r), GN_OK);
    gn_report_free(r);
    assert_int_equal(g->n_live, 1);
    gn_pt_run_graph(g, NULL, NULL, 0, xn, &o, 1);
    assert_float_equal(*(const float *)o.data, 0.25f, 0.0f);
    gn_tensor_free(&o);
    gn_graph_free(g);
}

/* ---- function.lower_if ----------------------------------------------------------------------- */
#define FN_BRANCHES                                                                                                  \
    "function { signature { name: 'then_f' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "    \
    "DT_FLOAT } }\n" FCONST("k", "10")                                                                             \
    "node_def { name: 'm' op: 'Mul' input: 'a' input: 'k:output:0' " TF "}\n ret { key: 'y' value: 'm:z:0' } }\n"  \
    "function { signature { name: 'else_f' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "    \
    "DT_FLOAT } }\n node_def { name: 'n' op: 'Neg' input: 'a' " TF "}\n ret { key: 'y' value: 'n:y:0' } }\n"
#define IF_GRAPH(lower)                                                                                              \
    PH("x") "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }\n"                  \
    "node { name: 'if' op: 'StatelessIf' input: 'p' input: 'x' attr { key: 'Tcond' value { type: DT_BOOL } } "      \
    "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } " \
    "attr { key: 'then_branch' value { func { name: 'then_f' } } } "                                               \
    "attr { key: 'else_branch' value { func { name: 'else_f' } } } " lower "}\n"                                    \
    "node { name: 'y' op: 'Abs' input: 'if' " TF "}\n"                                                             \
    "library { " FN_BRANCHES "}\n"
#define LOWER_ATTR "attr { key: '_lower_using_switch_merge' value { b: true } } "

static void run_if(const gn_graph *gr, bool pv, float *out)
{
    bool pb = pv;
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(10, &pb, 1, 0, NULL)};
    const char *fn[2] = {"x", "p"}, *xn[1] = {"y"};
    gn_tensor o;
    gn_pt_run_graph(gr, fn, t, 2, xn, &o, 1);
    assert_int_equal(o.dtype, DT_FLOAT);
    memcpy(out, o.data, sizeof xs);
    gn_tensor_free(&o);
}

static void test_lower_if(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(IF_GRAPH(LOWER_ATTR));
    gn_pt_preserve_list(g, "x,p,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    f.o.lower_control_flow = 1;
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); p=Placeholder(); y=Abs(if/output_0); if/switch_pred=Switch(p, p); "
                         "if/pivot_f=Identity(if/switch_pred); if/pivot_t=Identity(if/switch_pred:1); "
                         "if/input_0=Switch(x, p); if/output_0=Merge(if/else/output/_0, if/then/output/_0); "
                         "if/branch_executed=Merge(if/pivot_f, if/pivot_t); if/then/input_control_node=NoOp(^if/pivot_t); "
                         "if/then/input/_0=Identity(if/input_0:1, ^if/then/input_control_node); "
                         "if/then/k=Const(^if/then/input_control_node); if/then/m=Mul(if/then/input/_0, if/then/k); "
                         "if/then/output/_0=Identity(if/then/m); if/else/input_control_node=NoOp(^if/pivot_f); "
                         "if/else/input/_0=Identity(if/input_0, ^if/else/input_control_node); "
                         "if/else/n=Neg(if/else/input/_0); if/else/output/_0=Identity(if/else/n)");
    gn_pt_fx_expect_event(&f, "function.lower_if: lowered If 'if' to Switch / Merge");
    gn_pt_fx_expect_event(&f, "function.inline: inlined 'if/then' (function 'then_f', 5 nodes)");
    assert_int_equal(g->n_fns, 0);
    for (int pv = 0; pv < 2; pv++) {
        float a[6], b[6];
        run_if(before, pv, a);
        run_if(g, pv, b);
        for (int k = 0; k < 6; k++) assert_float_equal(a[k], b[k], 0.0f);
        assert_float_equal(b[1], pv ? 20.0f : 2.0f, 0.0f);
    }
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- function.lower_while -------------------------------------------------------------------- */
#define ICONST(n, v)                                                                                                 \
    "node_def { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { " \
    "tensor { dtype: DT_INT32 tensor_shape { } int_val: " v " } } } }\n"
#define FN_LOOP                                                                                                      \
    "function { signature { name: 'lcond' input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'v' type: "      \
    "DT_FLOAT } output_arg { name: 'r' type: DT_BOOL } }\n" ICONST("three", "3")                                   \
    "node_def { name: 'lt' op: 'Less' input: 'i' input: 'three:output:0' " TI "}\n"                                \
    "ret { key: 'r' value: 'lt:z:0' } }\n"                                                                         \
    "function { signature { name: 'lbody' input_arg { name: 'i' type: DT_INT32 } input_arg { name: 'v' type: "      \
    "DT_FLOAT } output_arg { name: 'i2' type: DT_INT32 } output_arg { name: 'v2' type: DT_FLOAT } }\n"             \
    ICONST("one", "1") FCONST("c", "1.5")                                                                          \
    "node_def { name: 'inc' op: 'AddV2' input: 'i' input: 'one:output:0' " TI "}\n"                                \
    "node_def { name: 'mul' op: 'Mul' input: 'v' input: 'c:output:0' " TF "}\n"                                    \
    "ret { key: 'i2' value: 'inc:z:0' } ret { key: 'v2' value: 'mul:z:0' } }\n"
#define WHILE_GRAPH                                                                                                  \
    PH("x") "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "     \
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"                                       \
    "node { name: 'w' op: 'StatelessWhile' input: 'i0' input: 'x' "                                                 \
    "attr { key: 'T' value { list { type: DT_INT32 type: DT_FLOAT } } } "                                           \
    "attr { key: 'cond' value { func { name: 'lcond' } } } attr { key: 'body' value { func { name: 'lbody' } } } "  \
    "attr { key: 'parallel_iterations' value { i: 10 } } " LOWER_ATTR "}\n"                                         \
    "node { name: 'y' op: 'Neg' input: 'w:1' " TF "}\n"                                                            \
    "library { " FN_LOOP "}\n"

static void test_lower_while(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(WHILE_GRAPH);
    gn_pt_preserve_list(g, "x,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    f.o.lower_control_flow = 1;
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g,
                         "x=Placeholder(); i0=Const(); y=Neg(w/exit_1); w/enter_0=Enter(i0); "
                         "w/merge_0=Merge(w/enter_0, w/next_iteration_0); w/enter_1=Enter(x); "
                         "w/merge_1=Merge(w/enter_1, w/next_iteration_1); w/loop_cond=LoopCond(w/cond/output/_0); "
                         "w/switch_0=Switch(w/merge_0, w/loop_cond); w/exit_0=Exit(w/switch_0); "
                         "w/identity_0=Identity(w/switch_0:1); w/switch_1=Switch(w/merge_1, w/loop_cond); "
                         "w/exit_1=Exit(w/switch_1); w/identity_1=Identity(w/switch_1:1); "
                         "w/next_iteration_0=NextIteration(w/body/output/_0); "
                         "w/next_iteration_1=NextIteration(w/body/output/_1); w/cond/input_control_node=NoOp(^w/merge_0); "
                         "w/cond/input/_0=Identity(w/merge_0, ^w/cond/input_control_node); "
                         "w/cond/input/_1=Identity(w/merge_1, ^w/cond/input_control_node); "
                         "w/cond/three=Const(^w/cond/input_control_node); w/cond/lt=Less(w/cond/input/_0, w/cond/three); "
                         "w/cond/output/_0=Identity(w/cond/lt); w/body/input_control_node=NoOp(^w/identity_0); "
                         "w/body/input/_0=Identity(w/identity_0, ^w/body/input_control_node); "
                         "w/body/input/_1=Identity(w/identity_1, ^w/body/input_control_node); "
                         "w/body/one=Const(^w/body/input_control_node); w/body/c=Const(^w/body/input_control_node); "
                         "w/body/inc=AddV2(w/body/input/_0, w/body/one); w/body/mul=Mul(w/body/input/_1, w/body/c); "
                         "w/body/output/_0=Identity(w/body/inc); w/body/output/_1=Identity(w/body/mul)");
    gn_pt_fx_expect_event(&f, "function.lower_while: lowered While 'w' to Enter / Merge / Switch / Exit / NextIteration");
    assert_int_equal(g->n_fns, 0);
    check_x(before, g, "y");
    float got[6];
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_tensor o;
    gn_pt_run_graph(g, fn, &t, 1, xn, &o, 1);
    memcpy(got, o.data, sizeof got);
    gn_tensor_free(&o);
    for (int k = 0; k < 6; k++) assert_float_equal(got[k], -xs[k] * 1.5f * 1.5f * 1.5f, 1e-6f);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Without the option, or without the attr, If stays; While is refused. */
static void test_lower_refusals(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(IF_GRAPH(""));
    gn_pt_preserve_list(g, "x,p,y");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_no_event(&f, "function.lower_if");
    f.o.lower_control_flow = 1;
    assert_false(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.lower_if: if: not lowered: no _lower_using_switch_merge attr");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- function.lower_case --------------------------------------------------------------------- */
#define FN_ADD_ONE_B                                                                                                 \
    "function { signature { name: 'inc_f' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: "     \
    "DT_FLOAT } }\n" FCONST("one", "1")                                                                             \
    "node_def { name: 'add' op: 'AddV2' input: 'a' input: 'one:output:0' " TF "}\n ret { key: 'y' value: 'add:z:0' } }\n"
#define CASE_GRAPH(lower)                                                                                            \
    PH("x") "node { name: 'i' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }\n"                 \
    "node { name: 'c' op: 'StatelessCase' input: 'i' input: 'x' "                                                   \
    "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } " \
    "attr { key: 'branches' value { list { func { name: 'then_f' } func { name: 'else_f' } func { name: 'inc_f' } " \
    "} } } " lower "}\n"                                                                                            \
    "node { name: 'y' op: 'Abs' input: 'c' " TF "}\n"                                                              \
    "library { " FN_BRANCHES FN_ADD_ONE_B "}\n"

static void run_case(const gn_graph *gr, int32_t iv, float *out)
{
    gn_tensor t[2] = {gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d6), gn_pt_view(3, &iv, sizeof iv, 0, NULL)};
    const char *fn[2] = {"x", "i"}, *xn[1] = {"y"};
    gn_tensor o;
    gn_pt_run_graph(gr, fn, t, 2, xn, &o, 1);
    assert_int_equal(o.dtype, DT_FLOAT);
    memcpy(out, o.data, sizeof xs);
    gn_tensor_free(&o);
}

static void test_lower_case(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(CASE_GRAPH(LOWER_ATTR));
    gn_pt_preserve_list(g, "x,i,y");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    f.o.lower_control_flow = 1;
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_expect_dump(g, "x=Placeholder(); i=Placeholder(); y=Abs(c/output_0); c/branch_index=_SwitchN(i, i); "
                         "c/pivot_0=Identity(c/branch_index); c/pivot_1=Identity(c/branch_index:1); "
                         "c/pivot_2=Identity(c/branch_index:2); c/input_0=_SwitchN(x, i); "
                         "c/output_0=Merge(c/branch0/output/_0, c/branch1/output/_0, c/branch2/output/_0); "
                         "c/branch_executed=Merge(c/pivot_0, c/pivot_1, c/pivot_2, ^c/branch0/output_control_node, "
                         "^c/branch1/output_control_node, ^c/branch2/output_control_node); "
                         "c/branch0/input_control_node=NoOp(^c/pivot_0); "
                         "c/branch0/input/_0=Identity(c/input_0, ^c/branch0/input_control_node); "
                         "c/branch0/k=Const(^c/branch0/input_control_node); c/branch0/m=Mul(c/branch0/input/_0, c/branch0/k); "
                         "c/branch0/output/_0=Identity(c/branch0/m); c/branch0/output_control_node=NoOp(^c/branch0/output/_0); "
                         "c/branch1/input_control_node=NoOp(^c/pivot_1); "
                         "c/branch1/input/_0=Identity(c/input_0:1, ^c/branch1/input_control_node); "
                         "c/branch1/n=Neg(c/branch1/input/_0); c/branch1/output/_0=Identity(c/branch1/n); "
                         "c/branch1/output_control_node=NoOp(^c/branch1/output/_0); "
                         "c/branch2/input_control_node=NoOp(^c/pivot_2); "
                         "c/branch2/input/_0=Identity(c/input_0:2, ^c/branch2/input_control_node); "
                         "c/branch2/one=Const(^c/branch2/input_control_node); "
                         "c/branch2/add=AddV2(c/branch2/input/_0, c/branch2/one); c/branch2/output/_0=Identity(c/branch2/add); "
                         "c/branch2/output_control_node=NoOp(^c/branch2/output/_0)");
    gn_pt_fx_expect_event(&f, "function.lower_case: lowered Case 'c' to _SwitchN / Merge");
    gn_pt_fx_expect_event(&f, "function.inline: inlined 'c/branch2' (function 'inc_f', 6 nodes)");
    assert_int_equal(g->n_fns, 0);
    /* every branch, and out-of-range indices (the last branch, as Case) */
    static const int32_t idx[5] = {0, 1, 2, 7, -1};
    for (int j = 0; j < 5; j++) {
        float a[6], b[6];
        run_case(before, idx[j], a);
        run_case(g, idx[j], b);
        for (int k = 0; k < 6; k++) assert_float_equal(a[k], b[k], 0.0f);
        float want = idx[j] == 0 ? 20.0f : idx[j] == 1 ? 2.0f : 3.0f; /* |x[1] = 2| through the branch */
        assert_float_equal(b[1], want, 0.0f);
    }
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* The corpus Case (graphdef2mlir/case_op: StatelessCase on Const 1 over two
 * branches, x + 1 and x + 2, of Const 0) lowered by the default pipeline with
 * lower_control_flow: no Case and no function left, and the same value. */
static void test_corpus_case_lowered(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__case_op.pbtxt",
                        path, sizeof path))
        skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_graph *before = gn_pt_clone(g);
    /* the function pass alone: the Case is lowered, its branches inlined */
    gn_pt_preserve_list(g, "indexed_case/Identity");
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    f.o.lower_control_flow = 1;
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.lower_case: lowered Case 'indexed_case' to _SwitchN / Merge");
    assert_int_equal(g->n_fns, 0);
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i)) assert_string_not_equal(gn__node_op(g, i), "StatelessCase");
    gn_pt_check_valid(g, "case_op");
    const char *xn[1] = {"indexed_case/Identity"};
    gn_pt_check_same(before, g, NULL, NULL, 0, xn, 1);
    gn_tensor o;
    gn_pt_run_graph(g, NULL, NULL, 0, xn, &o, 1);
    assert_int_equal(o.dtype, 3);
    assert_int_equal(*(const int32_t *)o.data, 2);
    gn_tensor_free(&o);
    gn_pt_fx_free(&f);
    /* the default pipeline with lowering: folds to the constant 2 */
    gn_graph *h = gn_pt_clone(before);
    gn_options opt;
    gn_options_init(&opt);
    opt.lower_control_flow = 1;
    gn_report *r = NULL;
    gn_optimize_params pr;
    gn_optimize_params_init(&pr);
    pr.fetches = xn;
    pr.n_fetches = 1;
    assert_int_equal(gn_optimize(h, &opt, &pr, &r), GN_OK);
    gn_report_free(r);
    gn_pt_check_valid(h, "case_op");
    gn_pt_check_same(before, h, NULL, NULL, 0, xn, 1);
    gn_graph_free(h);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* ---- corpus ---------------------------------------------------------------------------------- */
static uint32_t count_calls(const gn_graph *g)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i) && gn__inline_callee(g, i)) n++;
    return n;
}

/* Calls among the ancestors of the serving_default signature's outputs. */
static uint32_t serving_calls(const gn_graph *g)
{
    const Tensorflow__MetaGraphDef *mg = gn__graph_saved(g) ? gn__graph_saved(g)->mg : NULL;
    assert_non_null(mg);
    gn_id *stack = malloc((g->n_nodes + 1) * sizeof *stack);
    uint8_t *seen = calloc(g->n_nodes + 1, 1);
    uint32_t sp = 0, calls = 0, outs = 0;
    for (size_t i = 0; i < mg->n_signature_def; i++) {
        if (strcmp(mg->signature_def[i]->key, "serving_default") != 0) continue;
        const Tensorflow__SignatureDef *sd = mg->signature_def[i]->value;
        for (size_t k = 0; k < sd->n_outputs; k++) {
            const char *t = sd->outputs[k]->value->name;
            const char *colon = strchr(t, ':');
            gn_id id = gn__graph_find_n(g, t, colon ? (size_t)(colon - t) : strlen(t));
            assert_true(id != GN_NONE);
            if (!seen[id]) {
                seen[id] = 1;
                stack[sp++] = id;
                outs++;
            }
        }
    }
    assert_true(outs > 0);
    while (sp) {
        gn_id id = stack[--sp];
        if (gn__inline_callee(g, id)) calls++;
        const gn__node *n = &g->nodes[id];
        for (uint32_t k = 0; k < n->n_in + n->n_ctrl; k++) {
            gn_id p = k < n->n_in ? n->in[k].node : n->ctrl[k - n->n_in];
            if (!seen[p]) {
                seen[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    free(stack);
    free(seen);
    return calls;
}

#define HALF_PLUS_TWO_TF2                                                                                            \
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123"

/* Every corpus model with a function library: the pass over the top level
 * and then over every body (as the meta-optimizer runs it), valid after, a
 * second run changes nothing; then the whole default pipeline. */
static void test_corpus(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    uint32_t models = 0;
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        const char *m = gn_pt_corpus_models[i];
        if (!gn_test_corpus(m, path, sizeof path)) fail_msg("corpus entry missing: %s", m);
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            gn_graph_free(g);
            continue;
        }
        if (g->n_fns == 0) {
            gn_graph_free(g);
            continue;
        }
        models++;
        gn_graph *orig = gn_pt_clone(g);
        gn_pt_prepare(g);
        uint32_t fns0 = g->n_fns, calls0 = count_calls(g), live0 = gn_pt_live_total(g);
        gn_pt_fx f;
        gn_pt_fx_init(&f, NULL);
        gn_pt_fx_pass(&f, "function");
        gn_pt_fx_run(&f, gn__pass_function, g);
        for (uint32_t k = 0; k < g->n_fns; k++) gn_pt_fx_run_on(&f, gn__pass_function, g->fns[k].body, "body");
        gn_pt_check_valid(g, m);
        /* the meta-optimizer's next iteration drops what the bodies' inlining
         * left unreferenced */
        gn_pt_prepare(g);
        gn_pt_fx_run(&f, gn__pass_function, g);
        gn_pt_prepare(g);
        gn_pt_fx f2;
        gn_pt_fx_init(&f2, NULL);
        gn_pt_fx_pass(&f2, "function");
        if (gn_pt_fx_run(&f2, gn__pass_function, g)) {
            char *t = gn_pt_fx_report_text(&f2);
            fail_msg("%s: a second run changed the graph\n%s", m, t);
        }
        gn_pt_fx_free(&f2);
        uint32_t calls1 = count_calls(g);
        /* half_plus_two (TF2): no call left */
        if (strcmp(m, HALF_PLUS_TWO_TF2) == 0) {
            assert_int_equal(calls1, 0);
            assert_int_equal(serving_calls(g), 0);
            assert_int_equal(g->n_fns, 0);
        }
        print_message("function %-80.80s calls %4u -> %4u  fns %3u -> %3u  nodes %6u -> %6u\n", m, calls0, calls1,
                      fns0, g->n_fns, live0, gn_pt_live_total(g));
        /* bert1: 92 functions, the Keras layer functions each called from
         * about five of the others. Inlining into every body while keeping the
         * object graph's concrete functions copies each layer into each caller
         * (the whole library grows about 3x); the function optimizer keeps
         * only what the graph references, so the library goes and the graph
         * and its functions shrink to what the signatures and the save /
         * restore functions compute (7,932 -> 1,018 nodes). */
        if (strstr(m, "regularization__testdata__bert1")) {
            assert_int_equal(g->n_fns, 0);
            assert_true(gn_pt_live_total(g) < live0 / 4);
        }
        gn_pt_fx_free(&f);
        /* the default pipeline */
        gn_options o;
        gn_options_init(&o);
        gn_report *r = NULL;
        if (gn_optimize(orig, &o, NULL, &r) != GN_OK) fail_msg("%s: optimize: %s", m, gn_graph_errmsg(orig));
        gn_report_free(r);
        gn_pt_check_valid(orig, m);
        gn_graph_free(orig);
        /* and with functional control flow lowered */
        gn_graph *low = NULL;
        assert_int_equal(gn_graph_load(path, NULL, &low), GN_OK);
        o.lower_control_flow = 1;
        if (gn_optimize(low, &o, NULL, &r) != GN_OK) fail_msg("%s: optimize (lowered): %s", m, gn_graph_errmsg(low));
        gn_report_free(r);
        gn_pt_check_valid(low, m);
        gn_graph_free(low);
        gn_graph_free(g);
    }
    print_message("%u corpus models with functions\n", models);
    assert_true(models >= 10);
}

/* half_plus_two (TF2): every call opened by gn__inline_calls (as freezing
 * does), none left in the serving path. */
static void test_corpus_half_plus_two_tf2(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus(HALF_PLUS_TWO_TF2, path, sizeof path)) skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_true(count_calls(g) > 0);
    assert_true(serving_calls(g) > 0);
    gn__inline_opts o = {.ignore_noinline = true, .drop_unused_fns = true};
    uint32_t n = 0;
    gn__err err;
    gn__err_clear(&err);
    assert_int_equal(gn__inline_calls(g, &o, &n, &err), GN_OK);
    assert_int_equal(gn__graph_compact(g), GN_OK);
    gn_pt_check_valid(g, "half_plus_two_tf2");
    assert_int_equal(serving_calls(g), 0);
    assert_int_equal(count_calls(g), 0);
    print_message("half_plus_two_tf2: %u calls inlined, %u functions left, %u nodes\n", n, g->n_fns, g->n_live);
    gn_graph_free(g);
}

/* Corpus graphs the CPU runtime runs: same results before and after. The
 * TF2 SavedModel SimpleWhileLoop (a StatelessWhile inside the called
 * function) runs; half_plus_two_tf2, kws_ref_model and bert1 read resource
 * variables (VarHandleOp), which the CPU backend has no kernel for, and
 * function_functional_while is ill-typed (its While feeds an int32 to a float
 * argument), so those are checked structurally above. */
static void test_corpus_numeric(void **state)
{
    (void)state;
    char path[4096];
    const char *m = "tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop";
    if (!gn_test_corpus(m, path, sizeof path)) skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_pt_preserve_list(g, "serving_default_value,PartitionedCall");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gn_pt_fx_pass(&f, "function");
    assert_true(gn_pt_fx_run(&f, gn__pass_function, g));
    gn_pt_fx_expect_event(&f, "function.inline: PartitionedCall: inlined 'PartitionedCall' (function "
                              "'__inference_signature_wrapper_139', 6 nodes); the caller stays as its outputs");
    gn_pt_fx_expect_event(&f, "function.inline: inlined 'PartitionedCall/PartitionedCall' (function "
                              "'__inference_compute_132', 7 nodes)");
    const char *xn[1] = {"PartitionedCall:0"}, *fn[1] = {"serving_default_value"};
    for (int k = 0; k < 3; k++) {
        float v = (float)k * 2.5f - 1.0f;
        gn_tensor t = gn_pt_view(DT_FLOAT, &v, sizeof v, 0, NULL);
        gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    }
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_partitioned_call),
        cmocka_unit_test(test_inline_fetch_by_call_name),
        cmocka_unit_test(test_inline_control_edges),
        cmocka_unit_test(test_inline_nested),
        cmocka_unit_test(test_inline_in_body),
        cmocka_unit_test(test_inline_control_ret_in_body),
        cmocka_unit_test(test_noinline_refused_and_specialized),
        cmocka_unit_test(test_noinline_aggressive),
        cmocka_unit_test(test_recursion_refused),
        cmocka_unit_test(test_inline_placeholders_and_device),
        cmocka_unit_test(test_inline_colocation_groups),
        cmocka_unit_test(test_inline_calls_api),
        cmocka_unit_test(test_prune_library),
        cmocka_unit_test(test_lower_if),
        cmocka_unit_test(test_lower_while),
        cmocka_unit_test(test_lower_refusals),
        cmocka_unit_test(test_lower_case),
        cmocka_unit_test(test_symbolic_gradient),
        cmocka_unit_test(test_corpus_symbolic_gradient),
        cmocka_unit_test(test_corpus_case_lowered),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_half_plus_two_tf2),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
