/* The arithmetic pass (src/optimizer/passes/arithmetic*.c), one pattern at a
 * time: a small graph before, the exact graph after (names, ops, inputs in
 * order, attrs), a refusal with its recorded reason where the pattern has
 * preconditions, and a numerical check on the CPU backend (original against
 * rewritten, same random inputs). Runs through gn_optimize with only the
 * arithmetic pass on, so the report, preservation and validation are the real
 * ones. Then every corpus model: the pass runs, the result validates, fanouts
 * check, a second run changes nothing, and the models the CPU runtime can run
 * give the same outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "optimizer/passes/arithmetic_impl.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1

/* ---- running the pass ------------------------------------------------------------------------------ */
static void only_arith(gn_options *o, int32_t toggle)
{
    gn_pt_options_alone(o);
    o->arithmetic_optimization = toggle;
    o->min_graph_nodes = -1;
    o->meta_optimizer_iterations = GN_ITERS_ONE;
    o->fail_on_optimizer_errors = 1;
    o->checked = 1;
}

/* Runs the arithmetic pass alone on g; returns the report as JSON (owned). */
static char *run_arith_opts(gn_graph *g, const char *const *fetches, size_t nf, int32_t toggle, const char *disabled)
{
    gn_options o;
    only_arith(&o, toggle);
    o.disabled_patterns = disabled;
    return gn_pt_optimize_json(g, &o, fetches, nf, NULL, 0);
}

static char *run_arith(gn_graph *g, const char *const *fetches, size_t nf)
{
    return run_arith_opts(g, fetches, nf, GN_TOGGLE_DEFAULT, NULL);
}

/* The report has an event of kind for arithmetic.<pattern> on node with detail. */
static void expect_event(const char *json, const char *kind, const char *pattern, const char *node, const char *detail)
{
    char id[256];
    snprintf(id, sizeof id, "arithmetic.%s", pattern);
    gn_pt_expect_json_event(json, kind, id, node, detail);
}

/* before and after give the same fetches on the same random inputs in [0.5, 2] */
static void check_numeric(const gn_graph *before, const gn_graph *after, const char *const *fetch, size_t nx)
{
    gn_pt_expect_same_random(before, after, fetch, nx, 0.5, 2.0);
}

/* A second run over the result changes nothing. */
static void expect_fixed_point(gn_graph *g, const char *const *fetches, size_t nf, int32_t toggle)
{
    char *d1 = gn_pt_dump_sorted(g);
    char *json = run_arith_opts(g, fetches, nf, toggle, NULL);
    char *d2 = gn_pt_dump_sorted(g);
    if (strcmp(d1, d2) != 0) fail_msg("second run changed the graph\n--- first ---\n%s--- second ---\n%s\n%s", d1, d2, json);
    free(d1);
    free(d2);
    free(json);
}

/* One pattern case: load (the text is freed), clone, optimize. */
typedef struct case_out {
    gn_graph *before, *after;
    char *json;
} case_out;

static case_out run_case(gn_pt_text *b, const char *const *fetch, size_t nx, int32_t toggle)
{
    case_out c;
    c.after = gn_pt_text_load(b);
    c.before = gn_pt_clone(c.after);
    c.json = run_arith_opts(c.after, fetch, nx, toggle, NULL);
    return c;
}

static void case_free(case_out *c)
{
    gn_graph_free(c->before);
    gn_graph_free(c->after);
    free(c->json);
}

static const char *const k_out[] = {"out"};
static const char *const k_out2[] = {"out", "out2"};

/* ==== tests ============================================================================================= */
static void test_tables(void **state)
{
    (void)state;
    assert_true(gn__ar_op_table_sorted());
    size_t n = 0;
    while (gn__patterns_arithmetic[n].id) n++;
    assert_int_equal(n, GN__AR_NPAT);
}

/* ---- 1. add_ops_rewrite -------------------------------------------------------------------------------- */
static void test_add_ops_rewrite(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_ph(&b, "w", "f", "2,3");
    gn_pt_text_node(&b, "a1", "Add", "x,y", TF);
    gn_pt_text_node(&b, "a2", "AddV2", "z,w", TF);
    gn_pt_text_node(&b, "s", "AddN", "a1,a2", TF AINT("N", "2"));
    gn_pt_text_node(&b, "out", "Identity", "s", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/AddOpsRewrite_s = AddN(x, y, z, w) {N=4, T=float}\n"
                          "out = Identity(ArithmeticOptimizer/AddOpsRewrite_s) {T=float}\n"
                          "w = Placeholder() {dtype=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "add_ops_rewrite", "s", "3 Add/AddN nodes over 4 inputs (1 shape)");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

static void test_add_ops_rewrite_broadcast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_ph(&b, "bb", "f", "3");
    gn_pt_text_ph(&b, "cc", "f", "3");
    gn_pt_text_node(&b, "a1", "AddV2", "x,bb", TF);
    gn_pt_text_node(&b, "a2", "AddV2", "y,cc", TF);
    gn_pt_text_node(&b, "s", "AddV2", "a1,a2", TF);
    gn_pt_text_node(&b, "out", "Identity", "s", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/AddOpsRewrite_s = AddV2(ArithmeticOptimizer/AddOpsRewrite_s_Leaf_0, "
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_1) {T=float}\n"
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_0 = AddN(bb, cc) {N=2, T=float}\n"
                          "ArithmeticOptimizer/AddOpsRewrite_s_Leaf_1 = AddN(x, y) {N=2, T=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/AddOpsRewrite_s) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

static void test_add_ops_rewrite_refused(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_node(&b, "a1", "AddV2", "x,y", TF);
    gn_pt_text_node(&b, "s", "AddV2", "a1,z", TF);
    gn_pt_text_node(&b, "out", "Identity", "s", TF);
    gn_pt_text_node(&b, "out2", "Identity", "a1", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "add_ops_rewrite", "s", "input 'a1' not absorbed: it has more than one consumer");
    char *d0 = gn_pt_dump_sorted(c.before), *d1 = gn_pt_dump_sorted(c.after);
    assert_string_equal(d0, d1);
    free(d0);
    free(d1);
    case_free(&c);
}

/* ---- 2. fold_conjugate_into_transpose (complex: no CPU kernels, structure only) ------------------------ */
static void test_fold_conjugate_into_transpose(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "c", "2,3");
    gn_pt_text_ph(&b, "y", "c", "2,3");
    gn_pt_text_cst(&b, "perm", "i", "2", "1,0");
    gn_pt_text_node(&b, "t", "Transpose", "x,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "c", "Conj", "t", AT("T", "DT_COMPLEX64"));
    gn_pt_text_node(&b, "out", "Identity", "c", AT("T", "DT_COMPLEX64"));
    gn_pt_text_node(&b, "c2", "Conj", "y", AT("T", "DT_COMPLEX64"));
    gn_pt_text_node(&b, "t2", "ConjugateTranspose", "c2,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "t2", AT("T", "DT_COMPLEX64"));
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/FoldConjugateIntoTranspose_c = ConjugateTranspose(x, perm) {T=complex64, Tperm=int32}\n"
                          "ArithmeticOptimizer/FoldConjugateIntoTranspose_t2 = Transpose(y, perm) {T=complex64, Tperm=int32}\n"
                          "out = Identity(ArithmeticOptimizer/FoldConjugateIntoTranspose_c) {T=complex64}\n"
                          "out2 = Identity(ArithmeticOptimizer/FoldConjugateIntoTranspose_t2) {T=complex64}\n"
                          "perm = Const() {dtype=int32, value=int32[2]{1,0}}\n"
                          "x = Placeholder() {dtype=complex64}\n"
                          "y = Placeholder() {dtype=complex64}\n");
    expect_event(c.json, "rewrote", "fold_conjugate_into_transpose", "c", "Conj(Transpose) -> ConjugateTranspose");
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    /* refused: the transpose is fetched too */
    static const char *const f[] = {"out", "t"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "c", "2,3");
    gn_pt_text_cst(&b2, "perm", "i", "2", "1,0");
    gn_pt_text_node(&b2, "t", "Transpose", "x,perm", AT("T", "DT_COMPLEX64") AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b2, "c", "Conj", "t", AT("T", "DT_COMPLEX64"));
    gn_pt_text_node(&b2, "out", "Identity", "c", AT("T", "DT_COMPLEX64"));
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_conjugate_into_transpose", "c", "'t' is preserved");
    case_free(&c);
}

/* ---- 3. fold_multiply_into_conv ------------------------------------------------------------------------- */
#define CONV_ATTRS TF "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: \"padding\" value { s: \"VALID\" } } "

static void test_fold_multiply_into_conv(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "1,4,4,2");
    gn_pt_text_cst(&b, "s", "f", "", "0.5");
    gn_pt_text_cst(&b, "w", "f", "2,2,2,3", "0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,0.25");
    gn_pt_text_node(&b, "m", "Mul", "x,s", TF);
    gn_pt_text_cst(&b, "shp", "i", "4", "1,4,4,2");
    gn_pt_text_node(&b, "r", "Reshape", "m,shp", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "conv", "Conv2D", "r,w", CONV_ATTRS);
    gn_pt_text_node(&b, "out", "Identity", "conv", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after,
                 "ArithmeticOptimizer/FoldMultiplyIntoConv_w_scaled_conv = Mul(w, s) {T=float}\n"
                 "conv = Conv2D(x, ArithmeticOptimizer/FoldMultiplyIntoConv_w_scaled_conv) {T=float, padding=\"VALID\", strides=[1,1,1,1]}\n"
                 "out = Identity(conv) {T=float}\n"
                 "s = Const() {dtype=float, value=float[]{0.5}}\n"
                 "w = Const() {dtype=float, value=float[2,2,2,3]{0.1,-0.2,0.3,0.4,-0.5,0.6,0.7,0.25,...}}\n"
                 "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "fold_multiply_into_conv", "conv", "scalar Mul 'm' folded into the weights");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "1,4,4,2");
    gn_pt_text_cst(&b2, "s", "f", "", "0.5");
    gn_pt_text_cst(&b2, "w", "f", "2,2,2,3", "0.1");
    gn_pt_text_node(&b2, "m", "Mul", "x,s", TF);
    gn_pt_text_node(&b2, "conv", "Conv2D", "m,w", CONV_ATTRS);
    gn_pt_text_node(&b2, "out", "Identity", "conv", TF);
    gn_pt_text_node(&b2, "out2", "Identity", "m", TF);
    c = run_case(&b2, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_multiply_into_conv", "conv", "Mul 'm' has other consumers");
    case_free(&c);
}

/* ---- 4. fold_transpose_into_matmul ------------------------------------------------------------------------ */
static void test_fold_transpose_into_matmul(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "3,2");
    gn_pt_text_ph(&b, "b", "f", "3,4");
    gn_pt_text_cst(&b, "perm", "i", "2", "1,0");
    gn_pt_text_node(&b, "t", "Transpose", "a,perm", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "mm", "MatMul", "t,b", TF);
    gn_pt_text_node(&b, "out", "Identity", "mm", TF);
    gn_pt_text_ph(&b, "x", "f", "2,3,4");
    gn_pt_text_ph(&b, "y", "f", "2,5,4");
    gn_pt_text_cst(&b, "p3", "i", "3", "0,2,1");
    gn_pt_text_node(&b, "ty", "Transpose", "y,p3", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "bm", "BatchMatMulV2", "x,ty", TF);
    gn_pt_text_node(&b, "out2", "Identity", "bm", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/FoldTransposeIntoMatMul_bm = BatchMatMulV2(x, y) {T=float, adj_y=true}\n"
                          "ArithmeticOptimizer/FoldTransposeIntoMatMul_mm = MatMul(a, b) {T=float, transpose_a=true}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "b = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/FoldTransposeIntoMatMul_mm) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/FoldTransposeIntoMatMul_bm) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "t"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "a", "f", "3,2");
    gn_pt_text_ph(&b2, "b", "f", "3,4");
    gn_pt_text_cst(&b2, "perm", "i", "2", "1,0");
    gn_pt_text_node(&b2, "t", "Transpose", "a,perm", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b2, "mm", "MatMul", "t,b", TF);
    gn_pt_text_node(&b2, "out", "Identity", "mm", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fold_transpose_into_matmul", "mm", "transpose 't' is preserved");
    case_free(&c);
}

/* ---- 5. hoist_common_factor (AGGRESSIVE only) -------------------------------------------------------------- */
static gn_pt_text hoist_graph(void)
{
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y1", "f", "2,3");
    gn_pt_text_ph(&b, "y2", "f", "2,3");
    gn_pt_text_node(&b, "m1", "Mul", "x,y1", TF);
    gn_pt_text_node(&b, "m2", "Mul", "y2,x", TF);
    gn_pt_text_node(&b, "s", "AddN", "m1,m2", TF AINT("N", "2"));
    gn_pt_text_node(&b, "out", "Identity", "s", TF);
    gn_pt_text_node(&b, "d1", "RealDiv", "y1,x", TF);
    gn_pt_text_node(&b, "d2", "RealDiv", "y2,x", TF);
    gn_pt_text_node(&b, "s2", "AddV2", "d1,d2", TF);
    gn_pt_text_node(&b, "out2", "Identity", "s2", TF);
    return b;
}

static void test_hoist_common_factor(void **state)
{
    (void)state;
    gn_pt_text b = hoist_graph();
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_AGGRESSIVE);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/HoistCommonFactor_s2_AddV2 = AddV2(y1, y2) {T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s2_Div = RealDiv(ArithmeticOptimizer/HoistCommonFactor_s2_AddV2, x) {T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s_AddV2 = AddN(y1, y2) {N=2, T=float}\n"
                          "ArithmeticOptimizer/HoistCommonFactor_s_Mul = Mul(x, ArithmeticOptimizer/HoistCommonFactor_s_AddV2) {T=float}\n"
                          "out = Identity(ArithmeticOptimizer/HoistCommonFactor_s_Mul) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/HoistCommonFactor_s2_Div) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y1 = Placeholder() {dtype=float}\n"
                          "y2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "hoist_common_factor", "s", "common factor 'x' hoisted out of 2 terms");
    expect_event(c.json, "rewrote", "hoist_common_factor", "s2", "common denominator 'x'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_AGGRESSIVE);
    case_free(&c);
    /* refused: not AGGRESSIVE */
    b = hoist_graph();
    c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "hoist_common_factor", "s", "only when arithmetic_optimization is AGGRESSIVE");
    case_free(&c);
}

/* ---- 6. minimize_broadcasts ---------------------------------------------------------------------------------- */
static void test_minimize_broadcasts(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "big", "f", "2,3");
    gn_pt_text_ph(&b, "s1", "f", "3");
    gn_pt_text_ph(&b, "s2", "f", "3");
    gn_pt_text_node(&b, "m1", "Mul", "big,s1", TF);
    gn_pt_text_node(&b, "m2", "Mul", "m1,s2", TF);
    gn_pt_text_node(&b, "out", "Identity", "m2", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "big = Placeholder() {dtype=float}\n"
                          "m1 = Mul(s1, s2) {T=float}\n"
                          "m2 = Mul(m1, big) {T=float}\n"
                          "out = Identity(m2) {T=float}\n"
                          "s1 = Placeholder() {dtype=float}\n"
                          "s2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "minimize_broadcasts", "m2", "2 Mul nodes over 3 inputs reordered");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 7. remove_redundant_transpose ------------------------------------------------------------------------------ */
static void test_remove_redundant_transpose(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3,4");
    gn_pt_text_cst(&b, "p1", "i", "3", "1,2,0");
    gn_pt_text_cst(&b, "p2", "i", "3", "2,0,1");
    gn_pt_text_node(&b, "t1", "Transpose", "x,p1", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "t2", "Transpose", "t1,p2", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "t2", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3,4");
    gn_pt_text_node(&b, "u1", "Transpose", "y,p1", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "i1", "Snapshot", "u1", TF);
    gn_pt_text_node(&b, "u2", "Transpose", "i1,p2", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "u2", TF);
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_cst(&b, "pid", "i", "2", "0,1");
    gn_pt_text_node(&b, "t3", "Transpose", "z,pid", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "out3", "Identity", "t3", TF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "i1 = Snapshot(y) {T=float}\n"
                          "out = Identity(x) {T=float}\n"
                          "out2 = Identity(i1) {T=float}\n"
                          "out3 = Identity(z) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_transpose", "t2", "cancels 't1'");
    expect_event(c.json, "rewrote", "remove_redundant_transpose", "t3", "identity permutation");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "t1"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3,4");
    gn_pt_text_cst(&b2, "p1", "i", "3", "1,2,0");
    gn_pt_text_cst(&b2, "p2", "i", "3", "2,0,1");
    gn_pt_text_node(&b2, "t1", "Transpose", "x,p1", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b2, "t2", "Transpose", "t1,p2", TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b2, "out", "Identity", "t2", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_redundant_transpose", "t2", "'t1' is preserved");
    case_free(&c);
}

/* ---- 8. remove_involution ---------------------------------------------------------------------------------------- */
static void test_remove_involution(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "n1", "Neg", "x", TF);
    gn_pt_text_node(&b, "n2", "Neg", "n1", TF);
    gn_pt_text_node(&b, "out", "Identity", "n2", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "r1", "Reciprocal", "y", TF);
    gn_pt_text_cst(&b, "shp", "i", "1", "6");
    gn_pt_text_node(&b, "rs", "Reshape", "r1,shp", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "r2", "Reciprocal", "rs", TF);
    gn_pt_text_node(&b, "out2", "Identity", "r2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(x) {T=float}\n"
                          "out2 = Identity(rs) {T=float}\n"
                          "rs = Reshape(y, shp) {T=float, Tshape=int32}\n"
                          "shp = Const() {dtype=int32, value=int32[1]{6}}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_involution", "r2", "across value-preserving ops");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "n1"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3");
    gn_pt_text_node(&b2, "n1", "Neg", "x", TF);
    gn_pt_text_node(&b2, "n2", "Neg", "n1", TF);
    gn_pt_text_node(&b2, "out", "Identity", "n2", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_involution", "n2", "'n1' is preserved");
    case_free(&c);
}

/* ---- 9. remove_redundant_bitcast ------------------------------------------------------------------------------------ */
static void test_remove_redundant_bitcast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "b1", "Bitcast", "x", TF AT("type", "DT_INT32"));
    gn_pt_text_node(&b, "b2", "Bitcast", "b1", TI AT("type", "DT_FLOAT"));
    gn_pt_text_node(&b, "out", "Identity", "b2", TF);
    gn_pt_text_ph(&b, "y", "i", "2,3");
    gn_pt_text_node(&b, "b3", "Bitcast", "y", TI AT("type", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "b3", TI);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(x) {T=float}\n"
                          "out2 = Identity(y) {T=int32}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=int32}\n");
    expect_event(c.json, "rewrote", "remove_redundant_bitcast", "b2", "Bitcast of Bitcast 'b1'");
    expect_event(c.json, "rewrote", "remove_redundant_bitcast", "b3", "Bitcast from int32 to itself");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 10. remove_redundant_cast ------------------------------------------------------------------------------------------ */
static void test_remove_redundant_cast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "c", "Cast", "x", AT("SrcT", "DT_FLOAT") AT("DstT", "DT_FLOAT"));
    gn_pt_text_node(&b, "out", "Identity", "c", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(x) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_cast", "c", "Cast from float to itself");
    check_numeric(c.before, c.after, k_out, 1);
    case_free(&c);
    static const char *const f[] = {"c"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3");
    gn_pt_text_node(&b2, "c", "Cast", "x", AT("SrcT", "DT_FLOAT") AT("DstT", "DT_FLOAT"));
    gn_pt_text_node(&b2, "out", "Identity", "c", TF);
    c = run_case(&b2, f, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "remove_redundant_cast", "c", "the Cast is preserved");
    case_free(&c);
}

/* ---- 11. replace_pack_with_tile_reshape ------------------------------------------------------------------------------------ */
static void test_replace_pack_with_tile_reshape(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "pk", "Pack", "x,x", TF AINT("N", "2") AINT("axis", "0"));
    gn_pt_text_node(&b, "out", "Identity", "pk", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "p2", "Pack", "y,y", TF AINT("N", "2") AINT("axis", "-1"));
    gn_pt_text_node(&b, "out2", "Identity", "p2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after,
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Multiples = Const() {dtype=int32, value=int32[2]{2,1}}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Reshape = Reshape(ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Tile, "
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Shape) {T=float, Tshape=int32}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Shape = Const() {dtype=int32, value=int32[3]{2,2,3}}\n"
                 "ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Tile = Tile(x, ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Multiples) {T=float, Tmultiples=int32}\n"
                 "out = Identity(ArithmeticOptimizer/ReplacePackWithTileReshape_pk_Reshape) {T=float}\n"
                 "out2 = Identity(p2) {T=float}\n"
                 "p2 = Pack(y, y) {N=2, T=float, axis=-1}\n"
                 "x = Placeholder() {dtype=float}\n"
                 "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "replace_pack_with_tile_reshape", "p2", "'p2' packs along the last axis");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 12. replace_mul_with_tile -------------------------------------------------------------------------------------------------- */
static void test_replace_mul_with_tile(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,1,3");
    gn_pt_text_cst(&b, "ones", "f", "2,4,3", "1");
    gn_pt_text_node(&b, "m", "Mul", "x,ones", TF);
    gn_pt_text_node(&b, "out", "Identity", "m", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after,
                 "ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Const = Const() {dtype=int32, value=int32[3]{1,4,1}}\n"
                 "ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Tile = Tile(x, ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Const) {T=float, Tmultiples=int32}\n"
                 "out = Identity(ArithmeticOptimizer/ReplaceMulWithBroadcastByTile_m_Tile) {T=float}\n"
                 "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "x"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,1,3");
    gn_pt_text_cst(&b2, "ones", "f", "2,4,3", "1");
    gn_pt_text_node(&b2, "m", "Mul", "x,ones", TF);
    gn_pt_text_node(&b2, "out", "Identity", "m", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "replace_mul_with_tile", "m", "'x' is preserved");
    case_free(&c);
}

/* ---- 13. reduce_upsampling_dims ----------------------------------------------------------------------------------------------------- */
static void test_reduce_upsampling_dims(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "1,2,2,3");
    gn_pt_text_cst(&b, "s6", "i", "6", "1,2,1,2,1,3");
    gn_pt_text_node(&b, "r1", "Reshape", "x,s6", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_cst(&b, "m6", "i", "6", "1,1,2,1,2,1");
    gn_pt_text_node(&b, "t", "Tile", "r1,m6", TF AT("Tmultiples", "DT_INT32"));
    gn_pt_text_cst(&b, "s4", "i", "4", "1,4,4,3");
    gn_pt_text_node(&b, "r2", "Reshape", "t,s4", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "r2", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after,
                 "ArithmeticOptimizer/ReduceUpsamplingDims_r2_Multiples = Const() {dtype=int32, value=int32[4]{1,1,2,2}}\n"
                 "ArithmeticOptimizer/ReduceUpsamplingDims_r2_Tile = Tile(x, ArithmeticOptimizer/ReduceUpsamplingDims_r2_Multiples) {T=float, Tmultiples=int32}\n"
                 "out = Identity(r2) {T=float}\n"
                 "r2 = Reshape(ArithmeticOptimizer/ReduceUpsamplingDims_r2_Tile, s4) {T=float, Tshape=int32}\n"
                 "s4 = Const() {dtype=int32, value=int32[4]{1,4,4,3}}\n"
                 "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "reduce_upsampling_dims", "r2", "6-D upsampling through 'r1' and 't'");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 14. remove_redundant_reshape ------------------------------------------------------------------------------------------------------ */
static void test_remove_redundant_reshape(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_cst(&b, "s1", "i", "1", "6");
    gn_pt_text_node(&b, "r1", "Reshape", "x,s1", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_cst(&b, "s2", "i", "2", "3,2");
    gn_pt_text_node(&b, "r2", "Reshape", "r1,s2", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "r2", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_cst(&b, "s3", "i", "2", "2,3");
    gn_pt_text_node(&b, "r3", "Reshape", "y,s3", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "r3", TF);
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_node(&b, "r4", "Reshape", "z,s3,^s2", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "out3", "Identity", "r4", TF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(r2) {T=float}\n"
                          "out2 = Identity(y) {T=float}\n"
                          "out3 = Identity(r4) {T=float}\n"
                          "r2 = Reshape(x, s2) {T=float, Tshape=int32}\n"
                          "r4 = Reshape(z, s3, ^s2) {T=float, Tshape=int32}\n"
                          "s2 = Const() {dtype=int32, value=int32[2]{3,2}}\n"
                          "s3 = Const() {dtype=int32, value=int32[2]{2,3}}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_redundant_reshape", "r2", "Reshape of Reshape 'r1'");
    expect_event(c.json, "rewrote", "remove_redundant_reshape", "r3", "to the input's own shape [2,3]");
    expect_event(c.json, "refused", "remove_redundant_reshape", "r4", "it anchors control dependencies");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 15. remove_negation ------------------------------------------------------------------------------------------------------------------ */
static void test_remove_negation(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "2,3");
    gn_pt_text_ph(&b, "b", "f", "2,3");
    gn_pt_text_node(&b, "nb", "Neg", "b", TF);
    gn_pt_text_node(&b, "s1", "AddV2", "a,nb", TF);
    gn_pt_text_node(&b, "out", "Identity", "s1", TF);
    gn_pt_text_ph(&b, "c", "f", "2,3");
    gn_pt_text_ph(&b, "d", "f", "2,3");
    gn_pt_text_node(&b, "nd", "Neg", "d", TF);
    gn_pt_text_node(&b, "s2", "Sub", "c,nd", TF);
    gn_pt_text_node(&b, "out2", "Identity", "s2", TF);
    gn_pt_text_ph(&b, "e", "f", "2,3");
    gn_pt_text_ph(&b, "g", "f", "2,3");
    gn_pt_text_node(&b, "ne", "Neg", "e", TF);
    gn_pt_text_node(&b, "s3", "Add", "ne,g", TF);
    gn_pt_text_node(&b, "out3", "Identity", "s3", TF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "a = Placeholder() {dtype=float}\n"
                          "b = Placeholder() {dtype=float}\n"
                          "c = Placeholder() {dtype=float}\n"
                          "d = Placeholder() {dtype=float}\n"
                          "e = Placeholder() {dtype=float}\n"
                          "g = Placeholder() {dtype=float}\n"
                          "out = Identity(s1) {T=float}\n"
                          "out2 = Identity(s2) {T=float}\n"
                          "out3 = Identity(s3) {T=float}\n"
                          "s1 = Sub(a, b) {T=float}\n"
                          "s2 = AddV2(c, d) {T=float}\n"
                          "s3 = Sub(g, e) {T=float}\n");
    expect_event(c.json, "rewrote", "remove_negation", "s2", "Sub with Neg 'nd' -> AddV2");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 16. replace_mul_with_square --------------------------------------------------------------------------------------------------------- */
static void test_replace_mul_with_square(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "m", "Mul", "x,x", TF);
    gn_pt_text_node(&b, "out", "Identity", "m", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/ReplaceMulWithSquare_m = Square(x) {T=float}\n"
                          "out = Identity(ArithmeticOptimizer/ReplaceMulWithSquare_m) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"m"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3");
    gn_pt_text_node(&b2, "m", "Mul", "x,x", TF);
    c = run_case(&b2, f, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "replace_mul_with_square", "m", "the Mul is preserved");
    case_free(&c);
}

/* ---- 17. remove_logical_not --------------------------------------------------------------------------------------------------------------- */
static void test_remove_logical_not(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "8");
    gn_pt_text_ph(&b, "bb", "f", "8");
    gn_pt_text_node(&b, "e", "Equal", "a,bb", TF);
    gn_pt_text_node(&b, "ln", "LogicalNot", "e", "");
    gn_pt_text_node(&b, "out", "Identity", "ln", AT("T", "DT_BOOL"));
    gn_pt_text_ph(&b, "i1", "i", "8");
    gn_pt_text_ph(&b, "i2", "i", "8");
    gn_pt_text_node(&b, "l", "Less", "i1,i2", TI);
    gn_pt_text_node(&b, "ln2", "LogicalNot", "l", "");
    gn_pt_text_node(&b, "out2", "Identity", "ln2", AT("T", "DT_BOOL"));
    gn_pt_text_ph(&b, "f1", "f", "8");
    gn_pt_text_ph(&b, "f2", "f", "8");
    gn_pt_text_node(&b, "l3", "Less", "f1,f2", TF);
    gn_pt_text_node(&b, "ln3", "LogicalNot", "l3", "");
    gn_pt_text_node(&b, "out3", "Identity", "ln3", AT("T", "DT_BOOL"));
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "e = NotEqual(a, bb) {T=float}\n"
                          "f1 = Placeholder() {dtype=float}\n"
                          "f2 = Placeholder() {dtype=float}\n"
                          "i1 = Placeholder() {dtype=int32}\n"
                          "i2 = Placeholder() {dtype=int32}\n"
                          "l = GreaterEqual(i1, i2) {T=int32}\n"
                          "l3 = Less(f1, f2) {T=float}\n"
                          "ln3 = LogicalNot(l3)\n"
                          "out = Identity(e) {T=bool}\n"
                          "out2 = Identity(l) {T=bool}\n"
                          "out3 = Identity(ln3) {T=bool}\n");
    expect_event(c.json, "refused", "remove_logical_not", "ln3", "NaN");
    gn_pt_expect_same_random(c.before, c.after, f3, 3, 0.0, 3.0);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 18. reorder_cast_like_and_value_preserving ------------------------------------------------------------------------------------------------ */
#define CPU "device: \"/device:CPU:0\" "

static gn_pt_text cast_graph(bool device)
{
    gn_pt_text b = {0};
    gn_pt_text_add(&b, "node { name: \"x\" op: \"Placeholder\" %s attr { key: \"dtype\" value { type: DT_UINT8 } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } dim { size: 4 } } } } }\n",
           device ? CPU : "");
    gn_pt_text_node(&b, "c", "Cast", "x", device ? CPU AT("SrcT", "DT_UINT8") AT("DstT", "DT_FLOAT") : AT("SrcT", "DT_UINT8") AT("DstT", "DT_FLOAT"));
    gn_pt_text_cst(&b, "p", "i", "3", "2,0,1");
    gn_pt_text_node(&b, "t", "Transpose", "c,p", device ? CPU TF AT("Tperm", "DT_INT32") : TF AT("Tperm", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "t", TF);
    return b;
}

static void test_reorder_cast_like(void **state)
{
    (void)state;
    gn_pt_text b = cast_graph(true);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after,
                 "ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_c_float = Cast(ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_t_uint8) "
                 "{DstT=float, SrcT=uint8} @/device:CPU:0\n"
                 "ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_t_uint8 = Transpose(x, p) {T=uint8, Tperm=int32} @/device:CPU:0\n"
                 "out = Identity(ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_c_float) {T=float}\n"
                 "p = Const() {dtype=int32, value=int32[3]{2,0,1}}\n"
                 "x = Placeholder() {dtype=uint8} @/device:CPU:0\n");
    gn_pt_expect_same_random(c.before, c.after, k_out, 1, 0.0, 200.0);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    b = cast_graph(false);
    c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "reorder_cast_like_and_value_preserving", "t", "not placed on a CPU or GPU device");
    case_free(&c);
}

/* ---- 19. reorder_reshape_around_unary ------------------------------------------------------------------------------------------------------------ */
static void test_reorder_reshape_around_unary(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_cst(&b, "sa", "i", "1", "6");
    gn_pt_text_node(&b, "ra", "Reshape", "x,sa", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "rl", "Relu", "ra", TF);
    gn_pt_text_cst(&b, "sb", "i", "2", "3,2");
    gn_pt_text_node(&b, "rb", "Reshape", "rl,sb", TF AT("Tshape", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "rb", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(rb) {T=float}\n"
                          "rb = Reshape(rl, sb) {T=float, Tshape=int32}\n"
                          "rl = Relu(x) {T=float}\n"
                          "sb = Const() {dtype=int32, value=int32[2]{3,2}}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "reorder_reshape_around_unary", "rb", "Reshape 'ra' moved after Relu 'rl'");
    gn_pt_expect_same_random(c.before, c.after, k_out, 1, -1.0, 1.0);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 20. simplify_aggregation ------------------------------------------------------------------------------------------------------------------------ */
static void test_simplify_aggregation(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "s1", "AddN", "x", TF AINT("N", "1"));
    gn_pt_text_node(&b, "out", "Identity", "s1", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "s2", "AddN", "y,y,y", TF AINT("N", "3"));
    gn_pt_text_node(&b, "out2", "Identity", "s2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/SimplifyAggregation_s2_Const = Const() {dtype=float, value=float[]{3}}\n"
                          "ArithmeticOptimizer/SimplifyAggregation_s2_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_s2_Const, y) {T=float}\n"
                          "out = Identity(x) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/SimplifyAggregation_s2_Mul) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "simplify_aggregation", "s2", "3 copies of 'y'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 21. hoist_cwise_unary_chains ------------------------------------------------------------------------------------------------------------------------ */
static void test_hoist_cwise_unary_chains(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "2,3");
    gn_pt_text_ph(&b, "bb", "f", "2,3");
    gn_pt_text_node(&b, "sa", "Sin", "a", TF);
    gn_pt_text_node(&b, "ea", "Exp", "sa", TF);
    gn_pt_text_node(&b, "sb", "Sin", "bb", TF);
    gn_pt_text_node(&b, "eb", "Exp", "sb", TF);
    gn_pt_text_cst(&b, "ax", "i", "", "0");
    gn_pt_text_node(&b, "cc", "ConcatV2", "ea,eb,ax", TF AINT("N", "2") AT("Tidx", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "cc", TF);
    gn_pt_text_ph(&b, "x", "f", "4,3");
    gn_pt_text_node(&b, "sp", "Split", "ax,x", TF AINT("num_split", "2"));
    gn_pt_text_node(&b, "e0", "Exp", "sp", TF);
    gn_pt_text_node(&b, "e1", "Exp", "sp:1", TF);
    gn_pt_text_node(&b, "out2", "Identity", "e0", TF);
    gn_pt_text_node(&b, "out3", "Identity", "e1", TF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/HoistCWiseUnaryChainsStage_sp_e0 = Exp(x) {T=float}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "ax = Const() {dtype=int32, value=int32[]{0}}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = ConcatV2(a, bb, ax) {N=2, T=float, Tidx=int32}\n"
                          "ea = Exp(sa) {T=float}\n"
                          "out = Identity(ea) {T=float}\n"
                          "out2 = Identity(sp) {T=float}\n"
                          "out3 = Identity(sp:1) {T=float}\n"
                          "sa = Sin(cc) {T=float}\n"
                          "sp = Split(ax, ArithmeticOptimizer/HoistCWiseUnaryChainsStage_sp_e0) {T=float, num_split=2}\n"
                          "x = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "hoist_cwise_unary_chains", "cc", "2 Exp ops common to 2 inputs moved after the concat");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 22. convert_sqrt_div_to_rsqrt_mul --------------------------------------------------------------------------------------------------------------------- */
static void test_sqrt_div_to_rsqrt_mul(void **state)
{
    (void)state;
    static const char *const f3[] = {"out", "out2", "out3"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "sq", "Sqrt", "y", TF);
    gn_pt_text_node(&b, "d", "RealDiv", "x,sq", TF);
    gn_pt_text_node(&b, "out", "Identity", "d", TF);
    gn_pt_text_ph(&b, "x2", "f", "2,3");
    gn_pt_text_ph(&b, "y2", "f", "2,3");
    gn_pt_text_node(&b, "sq2", "Sqrt", "y2", TF);
    gn_pt_text_node(&b, "xd", "Xdivy", "x2,sq2", TF);
    gn_pt_text_node(&b, "out2", "Identity", "xd", TF);
    gn_pt_text_ph(&b, "x3", "f", "2,3");
    gn_pt_text_node(&b, "sq3", "Sqrt", "x3", TF);
    gn_pt_text_node(&b, "d3", "RealDiv", "x3,sq3", TF);
    gn_pt_text_node(&b, "m3", "Mul", "d3,sq3", TF);
    gn_pt_text_node(&b, "out3", "Identity", "m3", TF);
    case_out c = run_case(&b, f3, 3, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "d = Mul(x, sq) {T=float}\n"
                          "d3 = RealDiv(x3, sq3) {T=float}\n"
                          "m3 = Mul(d3, sq3) {T=float}\n"
                          "out = Identity(d) {T=float}\n"
                          "out2 = Identity(xd) {T=float}\n"
                          "out3 = Identity(m3) {T=float}\n"
                          "sq = Rsqrt(y) {T=float}\n"
                          "sq2 = Rsqrt(y2) {T=float}\n"
                          "sq3 = Sqrt(x3) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "x2 = Placeholder() {dtype=float}\n"
                          "x3 = Placeholder() {dtype=float}\n"
                          "xd = MulNoNan(sq2, x2) {T=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "y2 = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "convert_sqrt_div_to_rsqrt_mul", "d3", "Sqrt 'sq3' has other consumers");
    check_numeric(c.before, c.after, f3, 3);
    expect_fixed_point(c.after, f3, 3, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 23. remove_idempotent ------------------------------------------------------------------------------------------------------------------------------------ */
static void test_remove_idempotent(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "s1", "Snapshot", "x", TF);
    gn_pt_text_node(&b, "s2", "Snapshot", "s1", TF);
    gn_pt_text_node(&b, "out", "Identity", "s2", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "g1", "StopGradient", "y", TF);
    gn_pt_text_node(&b, "g2", "StopGradient", "g1", TF);
    gn_pt_text_node(&b, "out2", "Identity", "g2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "g1 = StopGradient(y) {T=float}\n"
                          "out = Identity(s1) {T=float}\n"
                          "out2 = Identity(g1) {T=float}\n"
                          "s1 = Snapshot(x) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "remove_idempotent", "s2", "Snapshot of Snapshot 's1'");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 24. convert_pow ------------------------------------------------------------------------------------------------------------------------------------------ */
static void test_convert_pow(void **state)
{
    (void)state;
    static const char *const f[] = {"o2", "o3", "o1", "o05", "o0", "om05", "om1", "ob"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    static const char *const names[] = {"2", "1", "05", "0", "m05", "m1"};
    static const char *const vals[] = {"2", "1", "0.5", "0", "-0.5", "-1"};
    for (int i = 0; i < 6; i++) {
        char c[16], p[16], o[16], in[40];
        snprintf(c, sizeof c, "c%s", names[i]);
        snprintf(p, sizeof p, "p%s", names[i]);
        snprintf(o, sizeof o, "o%s", names[i]);
        snprintf(in, sizeof in, "x,%s", c);
        gn_pt_text_cst(&b, c, "f", "", vals[i]);
        gn_pt_text_node(&b, p, "Pow", in, TF);
        gn_pt_text_node(&b, o, "Identity", p, TF);
    }
    gn_pt_text_add(&b, "node { name: \"x3\" op: \"Placeholder\" " CPU "attr { key: \"dtype\" value { type: DT_FLOAT } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } } } } }\n");
    gn_pt_text_cst(&b, "c3", "f", "3", "3");
    gn_pt_text_node(&b, "p3", "Pow", "x3,c3", CPU TF);
    gn_pt_text_node(&b, "o3", "Identity", "p3", TF);
    gn_pt_text_ph(&b, "xb", "f", "3");
    gn_pt_text_cst(&b, "cb", "f", "2,3", "2");
    gn_pt_text_node(&b, "pb", "Pow", "xb,cb", TF);
    gn_pt_text_node(&b, "ob", "Identity", "pb", TF);
    case_out c = run_case(&b, f, 8, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/ConvertPow_p3__inner = Square(x3) {T=float} @/device:CPU:0\n"
                          "c0 = Const() {dtype=float, value=float[]{0}}\n"
                          "c05 = Const() {dtype=float, value=float[]{0.5}}\n"
                          "c1 = Const() {dtype=float, value=float[]{1}}\n"
                          "c2 = Const() {dtype=float, value=float[]{2}}\n"
                          "c3 = Const() {dtype=float, value=float[3]{3,3,3}}\n"
                          "cb = Const() {dtype=float, value=float[2,3]{2,2,2,2,2,2}}\n"
                          "cm05 = Const() {dtype=float, value=float[]{-0.5}}\n"
                          "cm1 = Const() {dtype=float, value=float[]{-1}}\n"
                          "o0 = Identity(p0) {T=float}\n"
                          "o05 = Identity(p05) {T=float}\n"
                          "o1 = Identity(p1) {T=float}\n"
                          "o2 = Identity(p2) {T=float}\n"
                          "o3 = Identity(p3) {T=float}\n"
                          "ob = Identity(pb) {T=float}\n"
                          "om05 = Identity(pm05) {T=float}\n"
                          "om1 = Identity(pm1) {T=float}\n"
                          "p0 = Const(^x, ^c0) {dtype=float, value=float[2,3]{1,1,1,1,1,1}}\n"
                          "p05 = Sqrt(x, ^c05) {T=float}\n"
                          "p1 = Identity(x, ^c1) {T=float}\n"
                          "p2 = Square(x, ^c2) {T=float}\n"
                          "p3 = Mul(x3, ArithmeticOptimizer/ConvertPow_p3__inner, ^c3) {T=float} @/device:CPU:0\n"
                          "pb = Pow(xb, cb) {T=float}\n"
                          "pm05 = Rsqrt(x, ^cm05) {T=float}\n"
                          "pm1 = Reciprocal(x, ^cm1) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "x3 = Placeholder() {dtype=float} @/device:CPU:0\n"
                          "xb = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "convert_pow", "pb", "the exponent broadcasts the base");
    expect_event(c.json, "rewrote", "convert_pow", "p3", "Pow(x, 3) -> Mul(x, Square(x))");
    check_numeric(c.before, c.after, f, 8);
    expect_fixed_point(c.after, f, 8, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 25-26. convert_log1p, convert_log_softmax ------------------------------------------------------------------------------------------------------------ */
static void test_convert_log1p_and_log_softmax(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_cst(&b, "one", "f", "", "1");
    gn_pt_text_node(&b, "ad", "AddV2", "one,x", TF);
    gn_pt_text_node(&b, "lg", "Log", "ad", TF);
    gn_pt_text_node(&b, "out", "Identity", "lg", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "sm", "Softmax", "y", TF);
    gn_pt_text_node(&b, "l2", "Log", "sm", TF);
    gn_pt_text_node(&b, "out2", "Identity", "l2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "l2 = LogSoftmax(y) {T=float}\n"
                          "lg = Log1p(x, ^one) {T=float}\n"
                          "one = Const() {dtype=float, value=float[]{1}}\n"
                          "out = Identity(lg) {T=float}\n"
                          "out2 = Identity(l2) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n");
    expect_event(c.json, "rewrote", "convert_log1p", "lg", "Log of Add 'ad' of ones -> Log1p");
    expect_event(c.json, "rewrote", "convert_log_softmax", "l2", "Log of Softmax 'sm' -> LogSoftmax");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "sm"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "y", "f", "2,3");
    gn_pt_text_node(&b2, "sm", "Softmax", "y", TF);
    gn_pt_text_node(&b2, "lg", "Log", "sm", TF);
    gn_pt_text_node(&b2, "out", "Identity", "lg", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "convert_log_softmax", "lg", "Softmax 'sm' is preserved");
    case_free(&c);
}

/* ---- 27. optimize_max_or_min_of_monotonic ------------------------------------------------------------------------------------------------------------------- */
static void test_max_or_min_of_monotonic(void **state)
{
    (void)state;
    static const char *const f[] = {"out", "out2", "out3", "out4"};
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_cst(&b, "ax", "i", "", "1");
    gn_pt_text_node(&b, "sq", "Sqrt", "x", TF);
    gn_pt_text_node(&b, "mx", "Max", "sq,ax", TF AT("Tidx", "DT_INT32") AB("keep_dims", "false"));
    gn_pt_text_node(&b, "out", "Identity", "mx", TF);
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_node(&b, "ng", "Neg", "y", TF);
    gn_pt_text_node(&b, "mx2", "Max", "ng,ax", TF AT("Tidx", "DT_INT32") AB("keep_dims", "false"));
    gn_pt_text_node(&b, "out2", "Identity", "mx2", TF);
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_node(&b, "nz", "Neg", "z", TF);
    gn_pt_text_node(&b, "am", "ArgMax", "nz,ax", TF AT("Tidx", "DT_INT32") AT("output_type", "DT_INT64"));
    gn_pt_text_node(&b, "out3", "Identity", "am", AT("T", "DT_INT64"));
    gn_pt_text_ph(&b, "w", "f", "1,4,4,1");
    gn_pt_text_node(&b, "nw", "Neg", "w", TF);
    gn_pt_text_node(&b, "mp", "MaxPool", "nw",
       TF "attr { key: \"ksize\" value { list { i: 1 i: 2 i: 2 i: 1 } } } "
          "attr { key: \"strides\" value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: \"padding\" value { s: \"VALID\" } } ");
    gn_pt_text_node(&b, "out4", "Identity", "mp", TF);
    case_out c = run_case(&b, f, 4, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "am = ArgMin(z, ax) {T=float, Tidx=int32, output_type=int64}\n"
                          "ax = Const() {dtype=int32, value=int32[]{1}}\n"
                          "mp = MaxPool(nw) {T=float, ksize=[1,2,2,1], padding=\"VALID\", strides=[1,2,2,1]}\n"
                          "mx = Max(x, ax) {T=float, Tidx=int32, keep_dims=false}\n"
                          "mx2 = Min(y, ax) {T=float, Tidx=int32, keep_dims=false}\n"
                          "ng = Neg(mx2) {T=float}\n"
                          "nw = Neg(w) {T=float}\n"
                          "out = Identity(sq) {T=float}\n"
                          "out2 = Identity(ng) {T=float}\n"
                          "out3 = Identity(am) {T=int64}\n"
                          "out4 = Identity(mp) {T=float}\n"
                          "sq = Sqrt(mx) {T=float}\n"
                          "w = Placeholder() {dtype=float}\n"
                          "x = Placeholder() {dtype=float}\n"
                          "y = Placeholder() {dtype=float}\n"
                          "z = Placeholder() {dtype=float}\n");
    expect_event(c.json, "refused", "optimize_max_or_min_of_monotonic", "mp", "Neg decreases and there is no MinPool");
    check_numeric(c.before, c.after, f, 4);
    expect_fixed_point(c.after, f, 4, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 28. convert_expm1 ------------------------------------------------------------------------------------------------------------------------------------------- */
static void test_convert_expm1(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "ex", "Exp", "x", TF);
    gn_pt_text_cst(&b, "one", "f", "3", "1");
    gn_pt_text_node(&b, "sb", "Sub", "ex,one", TF);
    gn_pt_text_node(&b, "out", "Identity", "sb", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "one = Const() {dtype=float, value=float[3]{1,1,1}}\n"
                          "out = Identity(sb) {T=float}\n"
                          "sb = Expm1(x, ^one) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    static const char *const f[] = {"out", "ex"};
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3");
    gn_pt_text_node(&b2, "ex", "Exp", "x", TF);
    gn_pt_text_cst(&b2, "one", "f", "", "1");
    gn_pt_text_node(&b2, "sb", "Sub", "ex,one", TF);
    gn_pt_text_node(&b2, "out", "Identity", "sb", TF);
    c = run_case(&b2, f, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "convert_expm1", "sb", "Exp 'ex' is preserved");
    case_free(&c);
}

/* ---- 29. unary_ops_composition ------------------------------------------------------------------------------------------------------------------------------------- */
static gn_pt_text uoc_graph(bool device)
{
    gn_pt_text b = {0};
    gn_pt_text_add(&b, "node { name: \"x\" op: \"Placeholder\" %s attr { key: \"dtype\" value { type: DT_FLOAT } } "
               "attr { key: \"shape\" value { shape { dim { size: 2 } dim { size: 3 } } } } }\n",
           device ? CPU : "");
    gn_pt_text_node(&b, "s", "Sin", "x", device ? CPU TF : TF);
    gn_pt_text_node(&b, "e", "Exp", "s", device ? CPU TF : TF);
    gn_pt_text_node(&b, "t", "Tanh", "e", device ? CPU TF : TF);
    gn_pt_text_node(&b, "out", "Identity", "t", TF);
    return b;
}

static void test_unary_ops_composition(void **state)
{
    (void)state;
    gn_pt_text b = uoc_graph(true);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "out = Identity(t/unary_ops_composition) {T=float}\n"
                          "t/unary_ops_composition = _UnaryOpsComposition(x) {T=float, op_names=[Sin,Exp,Tanh]} @/device:CPU:0\n"
                          "x = Placeholder() {dtype=float} @/device:CPU:0\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    b = uoc_graph(false);
    c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "unary_ops_composition", "t", "needs a device named CPU");
    case_free(&c);
}

/* ---- 30. remove_stack_slice_same_axis ------------------------------------------------------------------------------------------------------------------------------- */
static void test_remove_stack_slice_same_axis(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "2,3");
    gn_pt_text_ph(&b, "bb", "f", "2,3");
    gn_pt_text_ph(&b, "cc", "f", "2,3");
    gn_pt_text_node(&b, "pk", "Pack", "a,bb,cc", TF AINT("N", "3") AINT("axis", "1"));
    gn_pt_text_cst(&b, "bg", "i", "3", "0,1,0");
    gn_pt_text_cst(&b, "en", "i", "3", "0,2,0");
    gn_pt_text_cst(&b, "st", "i", "3", "1,1,1");
    gn_pt_text_node(&b, "ss", "StridedSlice", "pk,bg,en,st",
       TF AT("Index", "DT_INT32") AINT("begin_mask", "5") AINT("end_mask", "5") AINT("ellipsis_mask", "0")
           AINT("new_axis_mask", "0") AINT("shrink_axis_mask", "2"));
    gn_pt_text_node(&b, "out", "Identity", "ss", TF);
    gn_pt_text_cst(&b, "sb", "i", "3", "0,2,0");
    gn_pt_text_cst(&b, "sz", "i", "3", "-1,1,-1");
    gn_pt_text_node(&b, "sl", "Slice", "pk,sb,sz", TF AT("Index", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "sl", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl = ExpandDims(cc, ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl_Axis) {T=float, Tdim=int32}\n"
                          "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl_Axis = Const() {dtype=int32, value=int32[]{1}}\n"
                          "ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_ss = Identity(bb) {T=float}\n"
                          "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "cc = Placeholder() {dtype=float}\n"
                          "out = Identity(ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_ss) {T=float}\n"
                          "out2 = Identity(ArithmeticOptimizer/RemoveStackStridedSliceSameAxis_sl) {T=float}\n");
    expect_event(c.json, "rewrote", "remove_stack_slice_same_axis", "ss", "takes input 1 of Pack 'pk' -> Identity");
    check_numeric(c.before, c.after, k_out2, 2);
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 31-32. simplify_embedding_lookup, remove_cast_into_segment_reduction (no CPU kernels: structure only) ------------------------ */
static void test_embedding_lookup_and_segment_cast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "params", "f", "10,4");
    gn_pt_text_ph(&b, "ids", "l", "5");
    gn_pt_text_ph(&b, "seg", "i", "5");
    gn_pt_text_node(&b, "u", "Unique", "ids", AT("T", "DT_INT64") AT("out_idx", "DT_INT32"));
    gn_pt_text_cst(&b, "ax0", "i", "", "0");
    gn_pt_text_node(&b, "g", "GatherV2", "params,u,ax0", AT("Tparams", "DT_FLOAT") AT("Tindices", "DT_INT64") AT("Taxis", "DT_INT32") AINT("batch_dims", "0"));
    gn_pt_text_node(&b, "r", "SparseSegmentSum", "g,u:1,seg", TF AT("Tidx", "DT_INT32"));
    gn_pt_text_node(&b, "out", "Identity", "r", TF);
    gn_pt_text_ph(&b, "data", "f", "10,4");
    gn_pt_text_ph(&b, "idx", "l", "5");
    gn_pt_text_node(&b, "c", "Cast", "idx", AT("SrcT", "DT_INT64") AT("DstT", "DT_INT32"));
    gn_pt_text_node(&b, "r2", "SparseSegmentMean", "data,c,seg", TF AT("Tidx", "DT_INT32"));
    gn_pt_text_node(&b, "out2", "Identity", "r2", TF);
    case_out c = run_case(&b, k_out2, 2, GN_TOGGLE_DEFAULT);
    char *d = gn_pt_dump_sorted(c.after);
    assert_non_null(strstr(d, "r = SparseSegmentSum(params, ids, seg) {T=float, Tidx=int64"));
    assert_non_null(strstr(d, "r2 = SparseSegmentMean(data, idx, seg) {T=float, Tidx=int64"));
    assert_null(strstr(d, "u = Unique"));
    assert_null(strstr(d, "g = GatherV2"));
    assert_null(strstr(d, "c = Cast"));
    free(d);
    expect_event(c.json, "rewrote", "simplify_embedding_lookup", "r", "Gather 'g' of Unique 'u' bypassed");
    expect_event(c.json, "rewrote", "remove_cast_into_segment_reduction", "r2", "Cast 'c' from int64 dropped");
    expect_fixed_point(c.after, k_out2, 2, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- 33. fuse_squared_diff ---------------------------------------------------------------------------------------------------------------------------------------- */
static void test_fuse_squared_diff(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "2,3");
    gn_pt_text_ph(&b, "bb", "f", "2,3");
    gn_pt_text_node(&b, "sb", "Sub", "a,bb", TF);
    gn_pt_text_node(&b, "sq", "Square", "sb", TF);
    gn_pt_text_node(&b, "out", "Identity", "sq", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "a = Placeholder() {dtype=float}\n"
                          "bb = Placeholder() {dtype=float}\n"
                          "out = Identity(sb) {T=float}\n"
                          "sb = SquaredDifference(a, bb) {T=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "a", "f", "2,3");
    gn_pt_text_ph(&b2, "bb", "f", "2,3");
    gn_pt_text_node(&b2, "sb", "Sub", "a,bb", TF);
    gn_pt_text_node(&b2, "sq", "Square", "sb", TF);
    gn_pt_text_node(&b2, "out", "Identity", "sq", TF);
    gn_pt_text_node(&b2, "out2", "Identity", "sb", TF);
    c = run_case(&b2, k_out2, 2, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "fuse_squared_diff", "sq", "Sub 'sb' has other consumers");
    case_free(&c);
}

/* ---- disabling a pattern by id ---------------------------------------------------------------------------------------------------------------------------------------- */
static void test_pattern_disabled(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_node(&b, "n1", "Neg", "x", TF);
    gn_pt_text_node(&b, "n2", "Neg", "n1", TF);
    gn_pt_text_node(&b, "out", "Identity", "n2", TF);
    gn_graph *g = gn_pt_text_load(&b);
    char *d0 = gn_pt_dump_sorted(g);
    char *json = run_arith_opts(g, k_out, 1, GN_TOGGLE_DEFAULT, "arithmetic.remove_involution");
    char *d1 = gn_pt_dump_sorted(g);
    assert_string_equal(d0, d1);
    gn_pt_expect_no_json_event(json, "arithmetic.remove_involution");
    free(d0);
    free(d1);
    free(json);
    gn_graph_free(g);
}

/* ---- v1 control flow: rewrites inside a while loop keep the frame ---------------------------------------------------------------- */
#define ENTER(T, c) AT("T", T) "attr { key: \"frame_name\" value { s: \"lp\" } } " AB("is_constant", c) AINT("parallel_iterations", "10")

static void test_inside_while_loop(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2");
    gn_pt_text_cst(&b, "n0", "i", "", "0");
    gn_pt_text_cst(&b, "lim", "i", "", "3");
    gn_pt_text_node(&b, "ei", "Enter", "n0", ENTER("DT_INT32", "false"));
    gn_pt_text_node(&b, "ex", "Enter", "x", ENTER("DT_FLOAT", "false"));
    gn_pt_text_node(&b, "el", "Enter", "lim", ENTER("DT_INT32", "true"));
    gn_pt_text_node(&b, "mi", "Merge", "ei,ni", TI AINT("N", "2"));
    gn_pt_text_node(&b, "mx", "Merge", "ex,nx", TF AINT("N", "2"));
    gn_pt_text_node(&b, "ls", "Less", "mi,el", TI);
    gn_pt_text_node(&b, "lc", "LoopCond", "ls", "");
    gn_pt_text_node(&b, "si", "Switch", "mi,lc", TI);
    gn_pt_text_node(&b, "sx", "Switch", "mx,lc", TF);
    gn_pt_text_node(&b, "ii", "Identity", "si:1", TI);
    gn_pt_text_node(&b, "ix", "Identity", "sx:1", TF);
    gn_pt_text_add(&b, "node { name: \"one\" op: \"Const\" input: \"^ii\" attr { key: \"dtype\" value { type: DT_INT32 } } "
               "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n");
    gn_pt_text_node(&b, "ai", "AddV2", "ii,one", TI);
    gn_pt_text_node(&b, "n1", "Neg", "ix", TF);
    gn_pt_text_node(&b, "n2", "Neg", "n1", TF);
    gn_pt_text_node(&b, "ag", "AddN", "n2,n2", TF AINT("N", "2"));
    gn_pt_text_node(&b, "ni", "NextIteration", "ai", TI);
    gn_pt_text_node(&b, "nx", "NextIteration", "ag", TF);
    gn_pt_text_node(&b, "xo", "Exit", "sx", TF);
    gn_pt_text_node(&b, "out", "Identity", "xo", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    char *d = gn_pt_dump_sorted(c.after);
    if (!strstr(d, "ArithmeticOptimizer/SimplifyAggregation_ag_Const = Const(^ix) {dtype=float, value=float[]{2}}\n") ||
        !strstr(d, "ArithmeticOptimizer/SimplifyAggregation_ag_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_ag_Const, ix) {T=float}\n") ||
        !strstr(d, "nx = NextIteration(ArithmeticOptimizer/SimplifyAggregation_ag_Mul) {T=float}\n") || strstr(d, "n1 =") ||
        strstr(d, "n2 ="))
        fail_msg("unexpected loop rewrite:\n%s", d);
    free(d);
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- a new Const in a cond branch is anchored through an Identity of the Switch port ------------------------------------------- */
static void test_const_anchor_on_switch(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "p", "b", "");
    gn_pt_text_node(&b, "sw", "Switch", "x,p", TF);
    gn_pt_text_node(&b, "t", "AddN", "sw:1,sw:1", TF AINT("N", "2"));
    gn_pt_text_node(&b, "f", "Neg", "sw", TF);
    gn_pt_text_node(&b, "m", "Merge", "f,t", TF AINT("N", "2"));
    gn_pt_text_node(&b, "out", "Identity", "m", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn_pt_expect_dump_sorted(c.after, "ArithmeticOptimizer/SimplifyAggregation_t_Const = Const(^ConstantFoldingCtrl/sw_1) {dtype=float, value=float[]{2}}\n"
                          "ArithmeticOptimizer/SimplifyAggregation_t_Mul = Mul(ArithmeticOptimizer/SimplifyAggregation_t_Const, sw:1) {T=float}\n"
                          "ConstantFoldingCtrl/sw_1 = Identity(sw:1) {T=float}\n"
                          "f = Neg(sw) {T=float}\n"
                          "m = Merge(f, ArithmeticOptimizer/SimplifyAggregation_t_Mul) {N=2, T=float}\n"
                          "out = Identity(m) {T=float}\n"
                          "p = Placeholder() {dtype=bool}\n"
                          "sw = Switch(x, p) {T=float}\n"
                          "x = Placeholder() {dtype=float}\n");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- nodes combined into one must share a device; feeds are never bypassed ------------------------------------------------------ */
static void test_device_and_feed(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "f", "2,3");
    gn_pt_text_ph(&b, "y", "f", "2,3");
    gn_pt_text_ph(&b, "z", "f", "2,3");
    gn_pt_text_node(&b, "a1", "AddV2", "x,y", "device: \"/device:GPU:0\" " TF);
    gn_pt_text_node(&b, "s", "AddV2", "a1,z", "device: \"/device:CPU:0\" " TF);
    gn_pt_text_node(&b, "out", "Identity", "s", TF);
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    expect_event(c.json, "refused", "add_ops_rewrite", "s", "input 'a1' not absorbed: it is on another device");
    case_free(&c);
    /* n1 is fed: Neg(Neg(x)) must keep reading the fed value */
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "f", "2,3");
    gn_pt_text_node(&b2, "n1", "Neg", "x", TF);
    gn_pt_text_node(&b2, "n2", "Neg", "n1", TF);
    gn_pt_text_node(&b2, "out", "Identity", "n2", TF);
    gn_graph *g = gn_pt_text_load(&b2);
    gn_options o;
    only_arith(&o, GN_TOGGLE_DEFAULT);
    static const char *const feed[] = {"n1"};
    char *json = gn_pt_optimize_json(g, &o, k_out, 1, feed, 1);
    expect_event(json, "refused", "remove_involution", "n2", "'n1' is preserved");
    char *d = gn_pt_dump_sorted(g);
    assert_non_null(strstr(d, "n2 = Neg(n1)"));
    free(d);
    free(json);
    gn_graph_free(g);
}

/* ---- function bodies are optimized too ------------------------------------------------------------------------------------------ */
static void test_function_body(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "f", "2,3");
    gn_pt_text_node(&b, "call", "PartitionedCall", "a",
       "attr { key: \"Tin\" value { list { type: DT_FLOAT } } } attr { key: \"Tout\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"f\" value { func { name: \"f\" } } } ");
    gn_pt_text_node(&b, "out", "Identity", "call", TF);
    gn_pt_text_add(&b, "library { function { signature { name: \"f\" input_arg { name: \"x\" type: DT_FLOAT } "
               "output_arg { name: \"y\" type: DT_FLOAT } } "
               "node_def { name: \"n1\" op: \"Neg\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "node_def { name: \"n2\" op: \"Neg\" input: \"n1:y:0\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "node_def { name: \"sq\" op: \"Mul\" input: \"n2:y:0\" input: \"n2:y:0\" attr { key: \"T\" value { type: DT_FLOAT } } } "
               "ret { key: \"y\" value: \"sq:z:0\" } } }\n");
    case_out c = run_case(&b, k_out, 1, GN_TOGGLE_DEFAULT);
    gn__function *f = gn__graph_find_function(c.after, "f");
    assert_non_null(f);
    gn_pt_expect_dump_sorted(f->body, "ArithmeticOptimizer/ReplaceMulWithSquare_sq = Square(x) {T=float}\n"
                          "_retval:y = _Retval(ArithmeticOptimizer/ReplaceMulWithSquare_sq) {T=float, index=0}\n"
                          "x = _Arg() {T=float, index=0}\n");
    expect_event(c.json, "rewrote", "remove_involution", "n2", "Neg cancels 'n1'");
    check_numeric(c.before, c.after, k_out, 1);
    expect_fixed_point(c.after, k_out, 1, GN_TOGGLE_DEFAULT);
    case_free(&c);
}

/* ---- the corpus ------------------------------------------------------------------------------------------------------------------------------------------------------ */
/* nodes of the graph and its functions, as the public API counts them */
static size_t total_nodes(const gn_graph *g)
{
    size_t n = gn_graph_node_count(g);
    for (size_t f = 0; f < gn_graph_function_count(g); f++) n += gn_graph_function_node_count(g, f);
    return n;
}

static void test_corpus(void **state)
{
    (void)state;
    size_t ran = 0;
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        char path[2048];
        if (!gn_test_corpus(gn_pt_corpus_models[i], path, sizeof path)) continue;
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            print_message("  %-60.60s does not load: %s\n", gn_pt_corpus_models[i], gn_graph_errmsg(g));
            gn_graph_free(g);
            continue;
        }
        size_t before = total_nodes(g);
        char *json = run_arith(g, NULL, 0);
        size_t after = total_nodes(g);
        print_message("  %-60.60s nodes %5zu -> %5zu  rewrites %3zu  refusals %3zu\n", gn_pt_corpus_models[i], before, after,
                      gn_pt_count_json_events(json, "rewrote"), gn_pt_count_json_events(json, "refused"));
        free(json);
        expect_fixed_point(g, NULL, 0, GN_TOGGLE_DEFAULT);
        gn_graph_free(g);
        ran++;
    }
    if (!ran) skip();
}

/* Models the CPU runtime runs: the same outputs before and after (feeds preserved). */
typedef struct runnable {
    const char *path;
    const char *feed[2];
    const char *feed_dims[2];   /* "" scalar */
    float feed_const[2];        /* NaN: random in [-1, 1] */
    const char *fetch;
} runnable;

/* A float32 tensor of dims (text), every element cval, or uniform in [-1, 1) when cval is NaN. */
static void make_tensor_f(gn_tensor *t, const char *dims, float cval, uint64_t *seed)
{
    int64_t d[8];
    if (gn_tensor_alloc(DT_FLOAT, gn_pt_dims(dims, d), d, t) != GN_OK) fail_msg("alloc");
    int64_t n = gn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = isnan(cval) ? (float)((double)(gn_pt_xorshift(seed) >> 11) / 4503599627370496.0 - 1.0) : cval;
}

static void test_corpus_numeric(void **state)
{
    (void)state;
    static const runnable models[] = {
        {"onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", {"X", NULL}, {"2,784", NULL}, {NAN, 0}, "output"},
        {"onnx__tensorflow-onnx/tests__models__lstm__frozen.pb", {"X", "keep_prob"}, {"2,784", ""}, {NAN, 1.0f}, "output"},
        {"onnx__tensorflow-onnx/tests__models__gru__frozen.pb", {"X", "keep_prob"}, {"2,784", ""}, {NAN, 1.0f}, "output"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", {"Mfcc", NULL}, {"1,49,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", {"Mfcc", NULL}, {"1,49,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", {"Mfcc", NULL}, {"1,25,10", NULL}, {NAN, 0}, "labels_softmax"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", {"Mfcc", NULL}, {"1,25,10", NULL}, {NAN, 0}, "labels_softmax"},
    };
    size_t ran = 0;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const runnable *m = &models[i];
        char path[2048];
        if (!gn_test_corpus(m->path, path, sizeof path)) continue;
        gn_graph *g = NULL, *before = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("load %s: %s", m->path, gn_graph_errmsg(g));
        assert_int_equal(gn_graph_clone(g, &before), GN_OK);
        size_t nf = m->feed[1] ? 2 : 1;
        const char *fetch[1] = {m->fetch};
        gn_options o;
        only_arith(&o, GN_TOGGLE_DEFAULT);
        char *json = gn_pt_optimize_json(g, &o, fetch, 1, m->feed, nf);
        gn_tensor ft[2];
        uint64_t seed = 12345;
        for (size_t k = 0; k < nf; k++) make_tensor_f(&ft[k], m->feed_dims[k], m->feed_const[k], &seed);
        double rel;
        gn_pt_expect_close(before, g, m->feed, ft, nf, fetch, 1, 0, &rel);
        print_message("  %-60.60s nodes %5zu -> %5zu  rewrites %3zu  rel L2 %.2e\n", m->path, gn_graph_node_count(before),
                      gn_graph_node_count(g), gn_pt_count_json_events(json, "rewrote"), rel);
        for (size_t k = 0; k < nf; k++) gn_tensor_free(&ft[k]);
        free(json);
        gn_graph_free(before);
        gn_graph_free(g);
        ran++;
    }
    if (!ran) skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_add_ops_rewrite),
        cmocka_unit_test(test_add_ops_rewrite_broadcast),
        cmocka_unit_test(test_add_ops_rewrite_refused),
        cmocka_unit_test(test_fold_conjugate_into_transpose),
        cmocka_unit_test(test_fold_multiply_into_conv),
        cmocka_unit_test(test_fold_transpose_into_matmul),
        cmocka_unit_test(test_hoist_common_factor),
        cmocka_unit_test(test_minimize_broadcasts),
        cmocka_unit_test(test_remove_redundant_transpose),
        cmocka_unit_test(test_remove_involution),
        cmocka_unit_test(test_remove_redundant_bitcast),
        cmocka_unit_test(test_remove_redundant_cast),
        cmocka_unit_test(test_replace_pack_with_tile_reshape),
        cmocka_unit_test(test_replace_mul_with_tile),
        cmocka_unit_test(test_reduce_upsampling_dims),
        cmocka_unit_test(test_remove_redundant_reshape),
        cmocka_unit_test(test_remove_negation),
        cmocka_unit_test(test_replace_mul_with_square),
        cmocka_unit_test(test_remove_logical_not),
        cmocka_unit_test(test_reorder_cast_like),
        cmocka_unit_test(test_reorder_reshape_around_unary),
        cmocka_unit_test(test_simplify_aggregation),
        cmocka_unit_test(test_hoist_cwise_unary_chains),
        cmocka_unit_test(test_sqrt_div_to_rsqrt_mul),
        cmocka_unit_test(test_remove_idempotent),
        cmocka_unit_test(test_convert_pow),
        cmocka_unit_test(test_convert_log1p_and_log_softmax),
        cmocka_unit_test(test_max_or_min_of_monotonic),
        cmocka_unit_test(test_convert_expm1),
        cmocka_unit_test(test_unary_ops_composition),
        cmocka_unit_test(test_remove_stack_slice_same_axis),
        cmocka_unit_test(test_embedding_lookup_and_segment_cast),
        cmocka_unit_test(test_fuse_squared_diff),
        cmocka_unit_test(test_pattern_disabled),
        cmocka_unit_test(test_inside_while_loop),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_const_anchor_on_switch),
        cmocka_unit_test(test_device_and_feed),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
