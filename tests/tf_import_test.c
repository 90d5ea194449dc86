/* What TensorFlow's import (tf.compat.v1.import_graph_def) checks, on what
 * grapnel writes (the kinds tools/tf_oracle.py found):
 *  - colocation attrs across renaming rewrites (src/optimizer/colocation.c):
 *    a pass, or segment, that replaces a node by one of another name rewrites
 *    the `_class` "loc:@" entries naming it to the node that took its place,
 *    or drops them when none did (TensorFlow refuses "expects to be colocated
 *    with unknown node");
 *  - `_output_shapes` of nodes a rewrite moves (TensorFlow refuses one its
 *    shape inference contradicts).
 * Each test checks the exact attrs, the import invariant over the whole
 * result, and runs original and result on the CPU backend (rel L2 <= 1e-5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "graph/ir.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1

/* The `_class` entries of node `name`, joined by ',' ("" when no attr). */
static void class_of(const gn_graph *g, const char *name, char *buf, size_t n)
{
    gn_id id = gn__graph_find(g, name);
    if (id == GN_NONE) fail_msg("no node %s", name);
    buf[0] = 0;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "_class");
    if (!v) return;
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    size_t w = 0;
    for (size_t i = 0; i < v->list->n_s && w < n; i++)
        w += (size_t)snprintf(buf + w, n - w, "%s%.*s", i ? "," : "", (int)v->list->s[i].len,
                              (const char *)v->list->s[i].data);
}

/* Every loc:@ entry of g names a node of g (what TensorFlow's import checks). */
static void expect_colocation_valid(const gn_graph *g)
{
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        const Tensorflow__AttrValue *v = gn__node_attr(g, id, "_class");
        if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) continue;
        for (size_t i = 0; i < v->list->n_s; i++) {
            ProtobufCBinaryData s = v->list->s[i];
            if (s.len <= 5 || memcmp(s.data, "loc:@", 5)) continue;
            if (gn__graph_find_n(g, (const char *)s.data + 5, s.len - 5) == GN_NONE)
                fail_msg("%s expects to be colocated with unknown node '%.*s'", gn__node_name(g, id), (int)s.len - 5,
                         (const char *)s.data + 5);
        }
    }
}

static gn_graph *optimize(const gn_graph *orig, const char *opts, const char *const *xn, size_t nx,
                          const char *const *fn, size_t nf)
{
    gn_graph *g = gn_pt_clone(orig);
    gn_options o;
    gn_options_init(&o);
    char err[256];
    if (gn_options_parse(&o, opts, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    o.checked = 1;
    o.fail_on_optimizer_errors = 1;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = xn;
    p.n_fetches = nx;
    p.feeds = fn;
    p.n_feeds = nf;
    if (gn_optimize(g, &o, &p, NULL) != GN_OK) fail_msg("gn_optimize: %s", gn_graph_errmsg(g));
    return g;
}

#define PH_2D(name, d0, d1)                                                                                     \
    "node { name: '" name "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: " \
    "'shape' value { shape { dim { size: " #d0 " } dim { size: " #d1 " } } } } }\n"

/* The issue's graph: Transpose + MatMul feeding a TF1 cond's Switch whose _class names the MatMul.
 * The arithmetic optimizer folds the Transpose into a new MatMul
 * "ArithmeticOptimizer/FoldTransposeIntoMatMul_MatMul"; the Switch's entry follows it. */
static void test_fold_transpose_switch(void **state)
{
    (void)state;
    const char *text =
        PH_2D("x", 4, 3) PH_2D("w", 4, 5)
        "node { name: 'pred' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'shape' "
        "value { shape { } } } }\n"
        "node { name: 'perm' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
        "tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 0 } } } }\n"
        "node { name: 't' op: 'Transpose' input: 'x' input: 'perm' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'Tperm' value { type: DT_INT32 } } }\n"
        "node { name: 'MatMul' op: 'MatMul' input: 't' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'transpose_a' value { b: false } } attr { key: 'transpose_b' value { b: false } } }\n"
        "node { name: 'cond/Switch' op: 'Switch' input: 'MatMul' input: 'pred' attr { key: 'T' value { type: "
        "DT_FLOAT } } attr { key: '_class' value { list { s: 'loc:@MatMul' } } } }\n"
        "node { name: 'cond/f' op: 'Neg' input: 'cond/Switch' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'cond/t' op: 'Identity' input: 'cond/Switch:1' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'cond/Merge' op: 'Merge' input: 'cond/f' input: 'cond/t' attr { key: 'T' value { type: "
        "DT_FLOAT } } attr { key: 'N' value { i: 2 } } }\n";
    gn_graph *orig = gn_pt_load_text(text);
    const char *fn[3] = {"x", "w", "pred"}, *xn[1] = {"cond/Merge"};
    gn_graph *g = optimize(orig, "{'min_graph_nodes': -1}", xn, 1, fn, 3);
    assert_true(gn__graph_find(g, "MatMul") == GN_NONE);
    gn_id mm = gn__graph_find(g, "ArithmeticOptimizer/FoldTransposeIntoMatMul_MatMul");
    assert_true(mm != GN_NONE);
    char cls[256];
    class_of(g, "cond/Switch", cls, sizeof cls);
    assert_string_equal(cls, "loc:@ArithmeticOptimizer/FoldTransposeIntoMatMul_MatMul");
    expect_colocation_valid(g);
    /* both branches, same values */
    float xv[12], wv[20];
    for (int i = 0; i < 12; i++) xv[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < 20; i++) wv[i] = (float)(i % 7) * 0.25f - 0.5f;
    int64_t dx[2] = {4, 3}, dw[2] = {4, 5};
    for (int b = 0; b < 2; b++) {
        bool pv = b != 0;
        gn_tensor ft[3] = {gn_pt_view(DT_FLOAT, xv, sizeof xv, 2, dx), gn_pt_view(DT_FLOAT, wv, sizeof wv, 2, dw),
                           gn_pt_view(10, &pv, sizeof pv, 0, NULL)};
        gn_pt_expect_same_results(orig, g, fn, ft, 3, xn, 1, 1);
    }
    gn_graph_free(g);
    gn_graph_free(orig);
}

/* Conv2D + BiasAdd + Relu fused under the Relu's name: an entry naming the Conv2D (absorbed, and
 * nothing in its place that a consumer reads) is dropped, the attr with it; an entry naming a
 * node that stays is kept. */
static void test_fusion_drops_absorbed(void **state)
{
    (void)state;
    const char *text =
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
        "value { shape { dim { size: 1 } dim { size: 5 } dim { size: 5 } dim { size: 2 } } } } }\n"
        "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } dim { size: 2 } dim { size: 3 } } "
        "float_val: 0.5 float_val: -1 float_val: 2 float_val: 1.5 float_val: 0.25 float_val: -0.75 } } } }\n"
        "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
        "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 0.1 float_val: -0.2 float_val: 0.3 } "
        "} } }\n"
        "node { name: 'conv' op: 'Conv2D' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } attr { "
        "key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } }\n"
        "node { name: 'bias' op: 'BiasAdd' input: 'conv' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'act' op: 'Relu' input: 'bias' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'y' op: 'Neg' input: 'act' attr { key: 'T' value { type: DT_FLOAT } } attr { key: '_class' "
        "value { list { s: 'loc:@conv' } } } }\n"
        "node { name: 'z' op: 'Neg' input: 'act' attr { key: 'T' value { type: DT_FLOAT } } attr { key: '_class' "
        "value { list { s: 'loc:@conv' s: 'loc:@x' } } } }\n";
    gn_graph *orig = gn_pt_load_text(text);
    const char *fn[1] = {"x"}, *xn[2] = {"y", "z"};
    gn_graph *g = optimize(orig, "{'min_graph_nodes': -1}", xn, 2, fn, 1);
    assert_true(gn__graph_find(g, "conv") == GN_NONE);
    assert_string_equal(gn__node_op(g, gn__graph_find(g, "act")), "_FusedConv2D");
    char cls[256];
    class_of(g, "y", cls, sizeof cls);
    assert_string_equal(cls, "");
    class_of(g, "z", cls, sizeof cls);
    assert_string_equal(cls, "loc:@x");
    expect_colocation_valid(g);
    float xv[50];
    for (int i = 0; i < 50; i++) xv[i] = (float)(i % 9) * 0.3f - 1.0f;
    int64_t dx[4] = {1, 5, 5, 2};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, xv, sizeof xv, 4, dx)};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 2, 2);
    gn_graph_free(g);
    gn_graph_free(orig);
}

/* segment: an engine takes in the node a `_class` names; the entry follows it to the engine. */
static void test_segment_engine(void **state)
{
    (void)state;
    const char *text =
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
        "value { shape { dim { size: 2 } dim { size: 3 } } } } }\n"
        "node { name: 'a' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'b' op: 'Neg' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'c' op: 'Tanh' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'out' op: 'Identity' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } attr { key: "
        "'_class' value { list { s: 'loc:@c' } } } }\n"
        "node { name: 'out2' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } attr { key: "
        "'_class' value { list { s: 'loc:@b' } } } }\n";
    gn_graph *orig = gn_pt_load_text(text);
    gn_graph *g = gn_pt_clone(orig);
    const char *keep[3] = {"x", "out", "out2"};
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.preserve = keep;
    sp.n_preserve = 3;
    size_t ne = 0;
    if (gn_segment(g, NULL, &sp, NULL, &ne) != GN_OK) fail_msg("gn_segment: %s", gn_graph_errmsg(g));
    assert_int_equal(ne, 1);
    assert_true(gn__graph_find(g, "c") == GN_NONE);
    char cls[256];
    class_of(g, "out", cls, sizeof cls);
    assert_string_equal(cls, "loc:@GrapnelEngineOp_000_000");
    /* out2 reads x, not b: nothing took b's place for it */
    class_of(g, "out2", cls, sizeof cls);
    assert_string_equal(cls, "");
    expect_colocation_valid(g);
    float xv[6] = {-1.5f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f};
    int64_t dx[2] = {2, 3};
    gn_tensor ft[1] = {gn_pt_view(DT_FLOAT, xv, sizeof xv, 2, dx)};
    const char *fn[1] = {"x"}, *xn[2] = {"out", "out2"};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 2, 2);
    gn_graph_free(g);
    gn_graph_free(orig);
}

/* The rank of node id's _output_shapes entry 0, -2 when it has none. */
static int out_shape_rank(const gn_graph *g, gn_id id)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "_output_shapes");
    if (!v) return -2;
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    assert_true(v->list->n_shape >= 1);
    return v->list->shape[0]->unknown_rank ? -1 : (int)v->list->shape[0]->n_dim;
}

/* Cast (widening) + ExpandDims reordered by the arithmetic optimizer (CPU-placed, as Grappler
 * wants): the copies do not carry the shapes of the nodes they copy (a [3] Cast copy now yields
 * [3, 1]). */
static void test_reorder_cast_output_shapes(void **state)
{
    (void)state;
    const char *text =
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' "
        "value { shape { dim { size: 3 } } } } attr { key: '_output_shapes' value { list { shape { dim { size: 3 } } "
        "} } } }\n"
        "node { name: 'c' op: 'Cast' input: 'x' device: '/device:CPU:0' attr { key: 'SrcT' value { type: DT_INT32 } } attr { key: 'DstT' "
        "value { type: DT_INT64 } } attr { key: '_output_shapes' value { list { shape { dim { size: 3 } } } } } }\n"
        "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
        "tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }\n"
        "node { name: 'e' op: 'ExpandDims' input: 'c' input: 'ax' device: '/device:CPU:0' attr { key: 'T' value { type: DT_INT64 } } attr { "
        "key: 'Tdim' value { type: DT_INT32 } } attr { key: '_output_shapes' value { list { shape { dim { size: 3 } "
        "dim { size: 1 } } } } } }\n"
        "node { name: 'y' op: 'Identity' input: 'e' attr { key: 'T' value { type: DT_INT64 } } }\n";
    gn_graph *orig = gn_pt_load_text(text);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_graph *g = optimize(orig, "{'min_graph_nodes': -1}", xn, 1, fn, 1);
    uint32_t moved = 0;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id) || !strstr(gn__node_name(g, id), "ReorderCastLikeAndValuePreserving")) continue;
        moved++;
        assert_int_equal(out_shape_rank(g, id), -2);
    }
    assert_int_equal(moved, 2);
    int32_t xv[3] = {4, -7, 9};
    int64_t dx[1] = {3};
    gn_tensor ft[1] = {gn_pt_view(3, xv, sizeof xv, 1, dx)};
    gn_pt_expect_same_results(orig, g, fn, ft, 1, xn, 1, 1);
    gn_graph_free(g);
    gn_graph_free(orig);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fold_transpose_switch),
    cmocka_unit_test(test_fusion_drops_absorbed),
    cmocka_unit_test(test_segment_engine),
    cmocka_unit_test(test_reorder_cast_output_shapes),
};

int main(void) { return cmocka_run_group_tests(tests, NULL, NULL); }
