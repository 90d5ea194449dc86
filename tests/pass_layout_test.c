/* The layout optimizer (src/optimizer/passes/layout.c): small graphs with the
 * exact graph after, the data_format and permuted attributes, the refusals
 * with their reasons, and the original and the rewritten graph run on the CPU
 * backend (which runs both layouts) on the same feeds (relative L2 <= 1e-5).
 * Then the golden models and the corpus CNNs optimized for gpu:sm_90 with the
 * layout optimizer alone: valid, the same results as the original, and the
 * exact number of Transpose nodes per model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_HALF 19
#define DT_INT32 3
#define TH "attr { key: 'T' value { type: DT_HALF } } "
#define SHAPE4(a, b, c, d)                                                                                    \
    "attr { key: 'shape' value { shape { dim { size: " #a " } dim { size: " #b " } dim { size: " #c " } dim { " \
    "size: " #d " } } } } "
#define PH4(n, a, b, c, d) \
    "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " SHAPE4(a, b, c, d) "}\n"
#define PH4H(n, a, b, c, d) \
    "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_HALF } } " SHAPE4(a, b, c, d) "}\n"
#define FMT(f) "attr { key: 'data_format' value { s: '" f "' } } "
#define LIST4(k, a, b, c, d) "attr { key: '" k "' value { list { i: " #a " i: " #b " i: " #c " i: " #d " } } } "
#define PAD(p) "attr { key: 'padding' value { s: '" p "' } } "
#define CONV(n, x, w, f) \
    "node { name: '" n "' op: 'Conv2D' input: '" x "' input: '" w "' " TF FMT(f) PAD("SAME") LIST4("strides", 1, 1, 1, 1) "}\n"
#define CONVD(n, x, w, dev)                                                                                  \
    "node { name: '" n "' op: 'Conv2D' input: '" x "' input: '" w "' device: '" dev "' " TF FMT("NHWC") PAD("SAME") \
        LIST4("strides", 1, 1, 1, 1) "}\n"
#define BIN(n, op, a, b) "node { name: '" n "' op: '" op "' input: '" a "' input: '" b "' " TF "}\n"
#define ICONST(n, shape, vals)                                                                                    \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { " \
    "tensor { dtype: DT_INT32 tensor_shape { " shape " } " vals " } } } }\n"
#define FCONST(n, shape, vals)                                                                                    \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"

/* ---- helpers -------------------------------------------------------------------------------------- */
static float *pseudo(int64_t n, uint32_t seed)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    for (int64_t k = 0; k < n; k++) {
        seed = seed * 1664525u + 1013904223u;
        x[k] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return x;
}

typedef struct feeds {
    const char *name[8];
    gn_tensor t[8];
    float *buf[8];
    size_t n;
} feeds;

static void feed4(feeds *f, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    int64_t n = a * b * c * d;
    f->buf[f->n] = pseudo(n, (uint32_t)(17 + 31 * f->n));
    f->t[f->n] = gn_pt_view(DT_FLOAT, f->buf[f->n], (size_t)n * sizeof(float), 4, dims);
    f->name[f->n++] = name;
}

static void feeds_free(feeds *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->buf[i]);
}

static void gpu(gn_pt_fx *f, int cc)
{
    f->target.kind = GN_TARGET_GPU;
    f->target.compute_capability = cc;
    f->target.num_gpus = 1;
    gn_pt_fx_pass(f, "layout");
}

static uint32_t count_op(const gn_graph *g, const char *op)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i) && !strcmp(gn__node_op(g, i), op)) n++;
    return n;
}

static void expect_str_attr(const gn_graph *g, const char *node, const char *key, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node '%s'", node);
    const char *s = NULL;
    size_t n = 0;
    if (!gn__attr_get_string(g, id, key, &s, &n)) fail_msg("%s: no attr %s", node, key);
    if (n != strlen(want) || memcmp(s, want, n)) fail_msg("%s.%s = '%.*s', want '%s'", node, key, (int)n, s, want);
}

static void expect_list_attr(const gn_graph *g, const char *node, const char *key, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node '%s'", node);
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST) fail_msg("%s: no list attr %s", node, key);
    char buf[256] = "";
    for (size_t i = 0; i < a->list->n_i; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%lld", i ? "," : "", (long long)a->list->i[i]);
    if (strcmp(buf, want)) fail_msg("%s.%s = [%s], want [%s]", node, key, buf, want);
}

/* the int values of Const node `node` as "a,b,c" */
static void expect_const_ints(const gn_graph *g, const char *node, const char *want)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fail_msg("no node '%s'", node);
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, "value");
    assert_non_null(a);
    const Tensorflow__TensorProto *p = a->tensor;
    char buf[256] = "";
    const int32_t *v = (const int32_t *)p->tensor_content.data;
    size_t n = p->tensor_content.len / 4;
    for (size_t i = 0; i < n; i++) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", v[i]);
    for (size_t i = 0; i < p->n_int_val; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", strlen(buf) ? "," : "", p->int_val[i]);
    if (strcmp(buf, want)) fail_msg("%s = [%s], want [%s]", node, buf, want);
}

/* ---- a chain of convolutions -------------------------------------------------------------------- */
#define CHAIN                                                                                                 \
    PH4("x", 1, 6, 6, 2) PH4("w1", 3, 3, 2, 2) PH4("w2", 3, 3, 2, 2) PH4("w3", 3, 3, 2, 2) CONV("c1", "x", "w1", "NHWC") \
    UN("r1", "Relu", "c1") CONV("c2", "r1", "w2", "NHWC") CONV("c3", "c2", "w3", "NHWC")                                   \
    "node { name: 'p' op: 'MaxPool' input: 'c3' " TF FMT("NHWC") PAD("VALID") LIST4("ksize", 1, 2, 2, 1)                   \
        LIST4("strides", 1, 2, 2, 1) "}\n" ICONST("axis", "", "int_val: 3")                                              \
    "node { name: 'cat' op: 'ConcatV2' input: 'p' input: 'p' input: 'axis' " TF                                        \
    "attr { key: 'N' value { i: 2 } } attr { key: 'Tidx' value { type: DT_INT32 } } }\n" UN("out", "Identity", "cat")

static void chain_feeds(feeds *fd)
{
    feed4(fd, "x", 1, 6, 6, 2);
    feed4(fd, "w1", 3, 3, 2, 2);
    feed4(fd, "w2", 3, 3, 2, 2);
    feed4(fd, "w3", 3, 3, 2, 2);
}

static void test_chain(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(CHAIN);
    gn_pt_preserve_list(g, "x,w1,w2,w3,out");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_layout, g));
    assert_int_equal(count_op(g, "Transpose"), 2);
    feeds fd = {0};
    chain_feeds(&fd);
    const char *xn[1] = {"out"};
    gn_pt_expect_same_results(before, g, fd.name, fd.t, fd.n, xn, 1, 16);
    feeds_free(&fd);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}


/* ---- layout-agnostic ops and constant operands ------------------------------------------------------ */
#define AGNOSTIC                                                                                                  \
    PH4("x", 1, 6, 6, 3) PH4("w", 3, 3, 3, 4) PH4("y", 1, 6, 6, 4) CONV("c", "x", "w", "NHWC")                          \
    FCONST("bias", "dim { size: 4 }", "float_val: 0.5 float_val: -1 float_val: 2 float_val: 0.25")                       \
    "node { name: 'ba' op: 'BiasAdd' input: 'c' input: 'bias' " TF FMT("NHWC") "}\n"                                    \
    FCONST("vec", "dim { size: 4 }", "float_val: 1 float_val: 2 float_val: 3 float_val: 4")                              \
    BIN("m", "Mul", "ba", "vec") BIN("a", "AddV2", "m", "y") UN("t", "Tanh", "a")                                        \
    ICONST("pads", "dim { size: 4 } dim { size: 2 }",                                                                   \
           "int_val: 0 int_val: 0 int_val: 1 int_val: 2 int_val: 0 int_val: 1 int_val: 0 int_val: 0")                     \
    "node { name: 'pad' op: 'Pad' input: 't' input: 'pads' " TF "attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n" \
    ICONST("sb", "dim { size: 4 }", "int_val: 0 int_val: 1 int_val: 0 int_val: 1")                                      \
    ICONST("se", "dim { size: 4 }", "int_val: 1 int_val: 6 int_val: 6 int_val: 4")                                      \
    ICONST("ss", "dim { size: 4 }", "int_val: 1 int_val: 1 int_val: 2 int_val: 1")                                      \
    "node { name: 'sl' op: 'StridedSlice' input: 'pad' input: 'sb' input: 'se' input: 'ss' " TF                        \
    "attr { key: 'Index' value { type: DT_INT32 } } attr { key: 'begin_mask' value { i: 8 } } "                         \
    "attr { key: 'end_mask' value { i: 1 } } attr { key: 'ellipsis_mask' value { i: 0 } } "                             \
    "attr { key: 'new_axis_mask' value { i: 0 } } attr { key: 'shrink_axis_mask' value { i: 0 } } }\n"                  \
    ICONST("mult", "dim { size: 4 }", "int_val: 1 int_val: 1 int_val: 2 int_val: 1")                                    \
    "node { name: 'tile' op: 'Tile' input: 'sl' input: 'mult' " TF "attr { key: 'Tmultiples' value { type: DT_INT32 } } }\n" \
    ICONST("rax", "dim { size: 1 }", "int_val: 2")                                                                      \
    "node { name: 'rev' op: 'ReverseV2' input: 'tile' input: 'rax' " TF "attr { key: 'Tidx' value { type: DT_INT32 } } }\n" \
    ICONST("sax", "", "int_val: -1")                                                                                    \
    "node { name: 'split' op: 'Split' input: 'sax' input: 'rev' " TF "attr { key: 'num_split' value { i: 2 } } }\n"     \
    "node { name: 'addn' op: 'AddN' input: 'split' input: 'split:1' " TF "attr { key: 'N' value { i: 2 } } }\n"        \
    ICONST("beg", "dim { size: 4 }", "int_val: 0 int_val: 1 int_val: 0 int_val: 0")                                     \
    ICONST("size", "dim { size: 4 }", "int_val: 1 int_val: 4 int_val: 3 int_val: 2")                                    \
    "node { name: 'slice' op: 'Slice' input: 'addn' input: 'beg' input: 'size' " TF                                     \
    "attr { key: 'Index' value { type: DT_INT32 } } }\n"                                                                \
    "node { name: 'mp' op: 'MaxPool' input: 'slice' " TF FMT("NHWC") PAD("SAME") LIST4("ksize", 1, 2, 2, 1)            \
        LIST4("strides", 1, 1, 1, 1) "}\n"                                                                                \
    ICONST("hw", "dim { size: 2 }", "int_val: 1 int_val: 2")                                                            \
    "node { name: 'mean' op: 'Mean' input: 'mp' input: 'hw' " TF "attr { key: 'Tidx' value { type: DT_INT32 } } "     \
    "attr { key: 'keep_dims' value { b: false } } }\n"                                                                  \
    "node { name: 'sum' op: 'Sum' input: 'mp' input: 'hw' " TF "attr { key: 'Tidx' value { type: DT_INT32 } } "       \
    "attr { key: 'keep_dims' value { b: true } } }\n"                                                                   \
    "node { name: 'sq' op: 'Squeeze' input: 'sum' " TF "attr { key: 'squeeze_dims' value { list { i: 1 i: 2 } } } }\n" \
    BIN("o", "Sub", "mean", "sq")

static void test_agnostic(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(AGNOSTIC);
    gn_pt_preserve_list(g, "x,w,y,o");
    gn_graph *before = gn_pt_clone(g);
    gn_pt_fx f;
    gn_pt_fx_init(&f, NULL);
    gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_layout, g));
    feeds fd = {0};
    feed4(&fd, "x", 1, 6, 6, 3);
    feed4(&fd, "w", 3, 3, 3, 4);
    feed4(&fd, "y", 1, 6, 6, 4);
    const char *xn[1] = {"o"};
    gn_pt_expect_same_results(before, g, fd.name, fd.t, fd.n, xn, 1, 16);
    feeds_free(&fd);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}


/* runs the layout pass on text with target (cc 0: cpu) and options; returns the graph and its original */
typedef struct lrun {
    gn_graph *g, *before;
    gn_pt_fx f;
    bool changed;
} lrun;

static void lrun_start(lrun *r, const char *text, const char *preserve, int cc, int policy, int cpu_layout)
{
    r->g = gn_pt_load_text(text);
    gn_pt_preserve_list(r->g, preserve);
    r->before = gn_pt_clone(r->g);
    gn_pt_fx_init(&r->f, NULL);
    gn_pt_fx_pass(&r->f, "layout");
    if (cc) gpu(&r->f, cc);
    r->f.o.layout_policy = policy;
    r->f.o.cpu_layout_conversion = cpu_layout;
    r->changed = gn_pt_fx_run(&r->f, gn__pass_layout, r->g);
}

static void lrun_end(lrun *r)
{
    gn_pt_fx_free(&r->f);
    gn_graph_free(r->before);
    gn_graph_free(r->g);
}

static void lrun_check(lrun *r, feeds *fd, const char *fetch)
{
    const char *xn[1] = {fetch};
    gn_pt_expect_same_results(r->before, r->g, fd->name, fd->t, fd->n, xn, 1, 16);
}

static void test_agnostic_attrs(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, AGNOSTIC, "x,w,y,o", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* in: x and y; out: none (o reads the order-free Mean and Squeeze outputs) */
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_const_ints(r.g, "pad-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "0,0,0,0,1,2,0,1");
    expect_const_ints(r.g, "sl-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "0,1,1,0");
    expect_const_ints(r.g, "sl-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,4,6,6");
    expect_const_ints(r.g, "sl-3-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,1,1,2");
    expect_const_ints(r.g, "tile-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,1,1,2");
    expect_const_ints(r.g, "rev-1-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "3");
    expect_const_ints(r.g, "split-0-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "1");
    expect_const_ints(r.g, "mean-1-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "2,3");
    expect_const_ints(r.g, "slice-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "0,0,1,0");
    expect_const_ints(r.g, "slice-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,2,4,3");
    expect_list_attr(r.g, "sq", "squeeze_dims", "2,3");
    expect_list_attr(r.g, "mp", "ksize", "1,1,2,2");
    gn_id sl = gn__graph_find(r.g, "sl");
    int64_t m = 0;
    assert_true(gn__attr_get_int(r.g, sl, "begin_mask", &m));
    assert_int_equal(m, 2);
    assert_true(gn__attr_get_int(r.g, sl, "end_mask", &m));
    assert_int_equal(m, 1);
    expect_str_attr(r.g, "ba", "data_format", "NCHW");
    /* the broadcast vector became a [1, 4, 1, 1] constant */
    gn_id mc = gn__graph_find(r.g, "m-1-TransposeNHWCToNCHW-LayoutOptimizer");
    assert_int_not_equal(mc, GN_NONE);
    assert_string_equal(gn__node_op(r.g, mc), "Const");
    const Tensorflow__TensorShapeProto *ts = gn__node_attr(r.g, mc, "value")->tensor->tensor_shape;
    assert_int_equal(ts->n_dim, 4);
    assert_int_equal(ts->dim[1]->size, 4);
    assert_int_equal(ts->dim[3]->size, 1);
    /* the old constants nothing reads any more are gone */
    assert_int_equal(gn__graph_find(r.g, "vec"), GN_NONE);
    assert_int_equal(gn__graph_find(r.g, "pads"), GN_NONE);
    lrun_end(&r);
}

/* ---- FusedBatchNorm, MaxPoolV2, explicit padding, dilations --------------------------------------- */
#define C2(n, v) FCONST(n, "dim { size: 2 }", v)
#define FBN                                                                                                       \
    PH4("x", 2, 7, 7, 2) PH4("w", 2, 2, 2, 2)                                                                       \
    "node { name: 'c' op: 'Conv2D' input: 'x' input: 'w' " TF FMT("NHWC") PAD("EXPLICIT") LIST4("strides", 1, 2, 1, 1) \
    LIST4("dilations", 1, 1, 2, 1)                                                                                  \
    "attr { key: 'explicit_paddings' value { list { i: 0 i: 0 i: 1 i: 2 i: 0 i: 1 i: 0 i: 0 } } } }\n"              \
    C2("sc", "float_val: 1.5 float_val: 0.5") C2("of", "float_val: 0.1 float_val: -0.2")                             \
    C2("mu", "float_val: 0.3 float_val: -0.1") C2("va", "float_val: 2 float_val: 0.5")                               \
    "node { name: 'bn' op: 'FusedBatchNormV3' input: 'c' input: 'sc' input: 'of' input: 'mu' input: 'va' " TF        \
    "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'epsilon' value { f: 0.001 } } " FMT("NHWC")            \
    "attr { key: 'is_training' value { b: false } } }\n" UN("r", "Relu6", "bn")                                      \
    ICONST("ks", "dim { size: 4 }", "int_val: 1 int_val: 2 int_val: 1 int_val: 1")                                   \
    ICONST("st", "dim { size: 4 }", "int_val: 1 int_val: 1 int_val: 2 int_val: 1")                                   \
    "node { name: 'mp' op: 'MaxPoolV2' input: 'r' input: 'ks' input: 'st' " TF FMT("NHWC") PAD("VALID") "}\n"        \
    UN("out", "Identity", "mp")

static void test_fbn_pool_v2(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, FBN, "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); sc=Const(); "
        "of=Const(); mu=Const(); va=Const(); bn=FusedBatchNormV3(c, sc, of, mu, va); r=Relu6(bn); "
        "mp=MaxPoolV2(r, mp-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer, "
        "mp-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer); "
        "out=Identity(mp-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "mp-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "mp-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "mp-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(mp, "
        "mp-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "mp-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_list_attr(r.g, "c", "strides", "1,1,2,1");
    expect_list_attr(r.g, "c", "dilations", "1,1,1,2");
    expect_list_attr(r.g, "c", "explicit_paddings", "0,0,0,0,1,2,0,1");
    expect_str_attr(r.g, "bn", "data_format", "NCHW");
    expect_str_attr(r.g, "mp", "data_format", "NCHW");
    expect_const_ints(r.g, "mp-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,1,2,1");
    expect_const_ints(r.g, "mp-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,1,1,2");
    expect_const_ints(r.g, "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer", "0,3,1,2");
    expect_const_ints(r.g, "mp-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer",
                      "0,2,3,1");
    feeds fd = {0};
    feed4(&fd, "x", 2, 7, 7, 2);
    feed4(&fd, "w", 2, 2, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- the chain: exact graph ------------------------------------------------------------------------- */
static void test_chain_exact(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, CHAIN, "x,w1,w2,w3,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w1=Placeholder(); w2=Placeholder(); w3=Placeholder(); "
        "c1=Conv2D(c1-0-TransposeNHWCToNCHW-LayoutOptimizer, w1); r1=Relu(c1); c2=Conv2D(r1, w2); "
        "c3=Conv2D(c2, w3); p=MaxPool(c3); cat=ConcatV2(p, p, cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer); "
        "out=Identity(cat-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "c1-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, "
        "c1-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c1-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer=Const(); "
        "cat-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(cat, "
        "cat-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "cat-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_const_ints(r.g, "cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "1");
    expect_list_attr(r.g, "p", "ksize", "1,1,2,2");
    expect_list_attr(r.g, "p", "strides", "1,1,2,2");
    for (int i = 1; i <= 3; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "c%d", i);
        expect_str_attr(r.g, nm, "data_format", "NCHW");
    }
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: c1: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: r1: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: cat: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: out: preserved node");
    /* a second run finds nothing left to do */
    assert_false(gn_pt_fx_run(&r.f, gn__pass_layout, r.g));
    lrun_end(&r);
}

/* ---- policies ----------------------------------------------------------------------------------------- */
#define HALF_CHAIN                                                                                                   \
    PH4H("x", 1, 5, 5, 2) PH4H("w", 3, 3, 2, 2)                                                                         \
    "node { name: 'c1' op: 'Conv2D' input: 'x' input: 'w' " TH FMT("NHWC") PAD("SAME") LIST4("strides", 1, 1, 1, 1) "}\n" \
    "node { name: 'r' op: 'Relu' input: 'c1' " TH "}\n"                                                                 \
    "node { name: 'c2' op: 'Conv2D' input: 'r' input: 'w' " TH FMT("NHWC") PAD("SAME") LIST4("strides", 1, 1, 1, 1) "}\n" \
    "node { name: 'out' op: 'Identity' input: 'c2' " TH "}\n"

static void test_policy_tensorflow(void **state)
{
    (void)state;
    lrun r;
    /* Volta or newer and the convolutions float16: TensorFlow keeps NHWC */
    lrun_start(&r, HALF_CHAIN, "x,w,out", 90, GN_LAYOUT_POLICY_TENSORFLOW, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_false(r.changed);
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: c1: data_format already NHWC");
    lrun_end(&r);
    /* Pascal: NCHW */
    lrun_start(&r, HALF_CHAIN, "x,w,out", 60, GN_LAYOUT_POLICY_TENSORFLOW, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_str_attr(r.g, "c2", "data_format", "NCHW");
    lrun_end(&r);
    /* float32 on sm_90: TF32 tensor cores, so TensorFlow keeps NHWC (as TensorFlow
     * 2.21 does with a virtual sm_90 GPU: tests/data/grappler_gpu_counts.txt) */
    lrun_start(&r, CHAIN, "x,w1,w2,w3,out", 90, GN_LAYOUT_POLICY_TENSORFLOW, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_false(r.changed);
    lrun_end(&r);
    /* float32 on Volta (no TF32): NCHW */
    lrun_start(&r, CHAIN, "x,w1,w2,w3,out", 70, GN_LAYOUT_POLICY_TENSORFLOW, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_str_attr(r.g, "c3", "data_format", "NCHW");
    lrun_end(&r);
    /* grapnel's policy and forced NCHW convert the float16 graph on sm_90 too */
    lrun_start(&r, HALF_CHAIN, "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    expect_str_attr(r.g, "c1", "data_format", "NCHW");
    lrun_end(&r);
    lrun_start(&r, HALF_CHAIN, "x,w,out", 90, GN_LAYOUT_POLICY_NCHW, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    expect_str_attr(r.g, "c1", "data_format", "NCHW");
    lrun_end(&r);
}

#define NCHW_CHAIN                                                                                                  \
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " SHAPE4(1, 2, 6, 5) "}\n"     \
    PH4("w", 3, 3, 2, 2) CONV("c1", "x", "w", "NCHW")                                                                   \
    "node { name: 'b' op: 'BiasAdd' input: 'c1' input: 'bias' " TF FMT("NCHW") "}\n"                                   \
    FCONST("bias", "dim { size: 2 }", "float_val: 0.5 float_val: -0.5") UN("r", "Elu", "b")                            \
    "node { name: 'ap' op: 'AvgPool' input: 'r' " TF FMT("NCHW") PAD("SAME") LIST4("ksize", 1, 1, 2, 3)                  \
        LIST4("strides", 1, 1, 2, 2) "}\n"                                                                               \
    CONV("c2", "ap", "w", "NCHW") UN("out", "Identity", "c2")

static void test_policy_forced_nhwc(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, NCHW_CHAIN, "x,w,out", 90, GN_LAYOUT_POLICY_NHWC, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_str_attr(r.g, "c1", "data_format", "NHWC");
    expect_str_attr(r.g, "ap", "data_format", "NHWC");
    expect_list_attr(r.g, "ap", "ksize", "1,2,3,1");
    expect_list_attr(r.g, "ap", "strides", "1,2,2,1");
    expect_const_ints(r.g, "c1-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer", "0,2,3,1");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: ap: NCHW to NHWC");
    feeds fd = {0};
    feed4(&fd, "x", 1, 2, 6, 5);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
    /* grapnel's policy leaves an NCHW graph as it is */
    lrun_start(&r, NCHW_CHAIN, "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_false(r.changed);
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: c1: data_format already NCHW");
    lrun_end(&r);
}

/* ---- cpu_layout_conversion ------------------------------------------------------------------------------ */
static void test_cpu_layout_conversion(void **state)
{
    (void)state;
    lrun r;
    /* a CPU target: nothing unless asked */
    lrun_start(&r, CHAIN, "x,w1,w2,w3,out", 0, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_false(r.changed);
    gn_pt_fx_expect_no_event(&r.f, "layout.");
    lrun_end(&r);
    lrun_start(&r, NCHW_CHAIN, "x,w,out", 0, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NCHW_TO_NHWC);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_str_attr(r.g, "c2", "data_format", "NHWC");
    feeds fd = {0};
    feed4(&fd, "x", 1, 2, 6, 5);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
    /* the other way (TensorFlow refuses it on CPU; our CPU kernels run NCHW) */
    lrun_start(&r, CHAIN, "x,w1,w2,w3,out", 0, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NHWC_TO_NCHW);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    feeds fd2 = {0};
    chain_feeds(&fd2);
    lrun_check(&r, &fd2, "out");
    feeds_free(&fd2);
    lrun_end(&r);
    /* a GPU-placed node under a cpu target: the GPU path, for that node only */
    lrun_start(&r, PH4("x", 1, 6, 6, 2) PH4("w", 3, 3, 2, 2) CONVD("c1", "x", "w", "/device:GPU:0")
                   CONV("c2", "c1", "w", "NHWC") UN("out", "Identity", "c2"),
               "x,w,out", 0, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NHWC_TO_NCHW);
    assert_true(r.changed);
    expect_str_attr(r.g, "c1", "data_format", "NCHW");
    expect_str_attr(r.g, "c2", "data_format", "NHWC");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: c2: not GPU-placed");
    lrun_end(&r);
}

/* ---- placement ------------------------------------------------------------------------------------------ */
static void test_cpu_placed_node(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, PH4("x", 1, 6, 6, 2) PH4("w", 3, 3, 2, 2) CONVD("c1", "x", "w", "/device:CPU:0")
                   UN("r", "Relu", "c1") CONV("c2", "r", "w", "NHWC") UN("out", "Identity", "c2"),
               "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    gn_pt_expect_dump(r.g, "x=Placeholder(); w=Placeholder(); c1=Conv2D(x, w)@/device:CPU:0; "
                           "r=Relu(c1); c2=Conv2D(c2-0-TransposeNHWCToNCHW-LayoutOptimizer, w); "
                           "out=Identity(c2-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
                           "c2-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(r, "
                           "c2-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
                           "c2-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
                           "c2-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(c2, "
                           "c2-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
                           "c2-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_str_attr(r.g, "c1", "data_format", "NHWC");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: c1: not GPU-placed");
    feeds fd = {0};
    feed4(&fd, "x", 1, 6, 6, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- refusals, preserved nodes, cancelling a user Transpose ---------------------------------------------- */
static void test_refusals(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               "node { name: 'u' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
               "node { name: 'm' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
               "attr { key: 'shape' value { shape { dim { size: 3 } dim { size: 2 } } } } }\n" PH4("w", 3, 3, 2, 2)
               CONV("cu", "u", "w", "NHWC") UN("ru", "Relu", "cu")
               "node { name: 'bm' op: 'BiasAdd' input: 'm' input: 'bias' " TF FMT("NHWC") "}\n"
               FCONST("bias", "dim { size: 2 }", "float_val: 1 float_val: 2") UN("rm", "Relu", "bm")
               PH4("x", 1, 4, 4, 2) CONV("cp", "x", "w", "NHWC") UN("rp", "Relu", "cp") CONV("cn", "x", "w", "NCHW")
               UN("rn", "Relu", "cn") CONV("dead", "x", "w", "NHWC"),
               "u,m,w,x,ru,rm,cp,rp,rn", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_false(r.changed);
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: cu: unknown rank");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: bm: input is not 4-D");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: cp: preserved node");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: cn: data_format already NCHW");
    gn_pt_fx_expect_no_event(&r.f, "dead");
    lrun_end(&r);
    /* patterns off */
    gn_graph *g = gn_pt_load_text(CHAIN);
    gn_pt_preserve_list(g, "x,w1,w2,w3,out");
    gn_pt_fx f;
    gn_pt_fx_init(&f, "layout.sensitive");
    gpu(&f, 90);
    assert_false(gn_pt_fx_run(&f, gn__pass_layout, g));
    gn_pt_fx_free(&f);
    gn_pt_fx_init(&f, "layout");
    gpu(&f, 90);
    assert_false(gn_pt_fx_run(&f, gn__pass_layout, g));
    gn_pt_fx_free(&f);
    /* agnostic off: the chain keeps a transpose pair around the Relu and the Concat */
    gn_pt_fx_init(&f, "layout.agnostic");
    gpu(&f, 90);
    assert_true(gn_pt_fx_run(&f, gn__pass_layout, g));
    assert_int_equal(count_op(g, "Transpose"), 4);
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

static void test_cancel_user_transpose(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " SHAPE4(1, 2, 5, 6) "}\n"
               ICONST("perm", "dim { size: 4 }", "int_val: 0 int_val: 2 int_val: 3 int_val: 1")
               "node { name: 'tx' op: 'Transpose' input: 'x' input: 'perm' " TF
               "attr { key: 'Tperm' value { type: DT_INT32 } } }\n" PH4("w", 3, 3, 2, 2)
               CONV("c", "tx", "w", "NHWC") UN("out", "Relu", "c"),
               "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    gn_pt_expect_dump(r.g, "x=Placeholder(); w=Placeholder(); c=Conv2D(x, w); "
                           "out=Relu(c-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
                           "c-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(c, "
                           "c-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
                           "c-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    gn_pt_fx_expect_event(&r.f, "layout.cancel: c: input 0 read before user Transpose 'tx'");
    feeds fd = {0};
    feed4(&fd, "x", 1, 2, 5, 6);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* a residual block: the Add gets its second operand from the block input */
static void test_residual(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, PH4("x", 1, 5, 5, 2) PH4("w", 3, 3, 2, 2) CONV("c1", "x", "w", "NHWC") UN("r1", "Relu", "c1")
                   CONV("c2", "r1", "w", "NHWC") BIN("add", "AddV2", "c2", "r1") UN("r2", "Relu", "add")
                   CONV("c3", "r2", "w", "NHWC") BIN("add2", "AddV2", "c3", "x") UN("out", "Identity", "add2"),
               "x,w,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* x is transposed once for c1 and add2 (one shared Transpose); one transpose out */
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: add2: NHWC to NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 5, 5, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}


/* more refusals of layout-agnostic ops next to a converted node */
static void test_agnostic_refusals(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               PH4("x", 1, 4, 4, 2) PH4("w", 3, 3, 2, 2) CONV("c", "x", "w", "NHWC")
               "node { name: 'ax' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } "
               "attr { key: 'shape' value { shape { } } } }\n"
               "node { name: 'cat' op: 'ConcatV2' input: 'c' input: 'c' input: 'ax' " TF
               "attr { key: 'N' value { i: 2 } } attr { key: 'Tidx' value { type: DT_INT32 } } }\n"
               ICONST("hc", "dim { size: 2 }", "int_val: 0 int_val: 1")
               "node { name: 'red' op: 'Max' input: 'c' input: 'hc' " TF "attr { key: 'Tidx' value { type: DT_INT32 } } "
               "attr { key: 'keep_dims' value { b: false } } }\n"
               "node { name: 'sq' op: 'Squeeze' input: 'c' " TF "attr { key: 'squeeze_dims' value { list { } } } }\n"
               "node { name: 'm' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
               "attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 2 } } } } }\n"
               BIN("mul", "Mul", "c", "m") UN("o1", "Identity", "cat") UN("o2", "Identity", "red")
               UN("o3", "Identity", "sq") UN("o4", "Identity", "mul"),
               "x,w,ax,m,o1,o2,o3,o4", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* an axis computed at run time goes through a DataFormatDimMap */
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: cat: NHWC to NCHW");
    gn_id dm = gn__graph_find(r.g, "cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer");
    assert_int_not_equal(dm, GN_NONE);
    assert_string_equal(gn__node_op(r.g, dm), "DataFormatDimMap");
    assert_int_equal(r.g->nodes[dm].in[0].node, gn__graph_find(r.g, "ax"));
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: red: reduction output depends on the layout");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: sq: squeeze_dims not given");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: mul: broadcast operand of rank 2 or 3 is not a constant");
    /* c is converted; its three unconverted consumers share one transpose
     * back, the Concat's output has its own */
    assert_int_equal(count_op(r.g, "Transpose"), 3);
    lrun_end(&r);
}

/* Select, SplitV, Concat (axis first), a vector operand reshaped at run time */
static void test_agnostic_more(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               PH4("x", 1, 4, 4, 2) PH4("w", 3, 3, 2, 2) CONV("c", "x", "w", "NHWC")
               "node { name: 'v' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
               "attr { key: 'shape' value { shape { dim { size: 2 } } } } }\n"
               BIN("add", "AddV2", "c", "v") BIN("gt", "Greater", "add", "c")
               "node { name: 'sel' op: 'SelectV2' input: 'gt' input: 'add' input: 'c' " TF "}\n"
               ICONST("ax", "", "int_val: 2") ICONST("sizes", "dim { size: 2 }", "int_val: 1 int_val: 3")
               "node { name: 'sv' op: 'SplitV' input: 'sel' input: 'sizes' input: 'ax' " TF
               "attr { key: 'Tlen' value { type: DT_INT32 } } attr { key: 'num_split' value { i: 2 } } }\n"
               ICONST("ax1", "", "int_val: 2")
               "node { name: 'cat' op: 'Concat' input: 'ax1' input: 'sv:1' input: 'sv' " TF
               "attr { key: 'N' value { i: 2 } } }\n"
               UN("out", "Identity", "cat"),
               "x,w,v,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    assert_int_equal(count_op(r.g, "Reshape"), 1);
    gn_id rs = gn__graph_find(r.g, "add-1-ReshapeNHWCToNCHW-LayoutOptimizer");
    assert_int_not_equal(rs, GN_NONE);
    expect_const_ints(r.g, "add-1-ReshapeNHWCToNCHW-LayoutOptimizer-Shape-LayoutOptimizer", "-1,1,1");
    expect_const_ints(r.g, "sv-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "3");
    expect_const_ints(r.g, "cat-0-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "3");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: sel: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: sv: NHWC to NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 4, 4, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    int64_t d2[1] = {2};
    float vv[2] = {0.25f, -0.75f};
    fd.t[fd.n] = gn_pt_view(DT_FLOAT, vv, sizeof vv, 1, d2);
    fd.buf[fd.n] = NULL;
    fd.name[fd.n++] = "v";
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

static void optimize_layout(gn_graph *g, const char *what, const char *const *fetch, size_t nx,
                            const char *const *feed, size_t nf);
static uint32_t count_nchw(const gn_graph *g);

/* A function body: converted inside, transposes at the edges. */
#define FN_GRAPH                                                                                                   \
    PH4("x", 1, 5, 5, 2) PH4("w", 3, 3, 2, 2)                                                                        \
    "node { name: 'call' op: 'f' input: 'x' input: 'w' }\n" UN("out", "Identity", "call")                            \
    "library { function { signature { name: 'f' input_arg { name: 'a' type: DT_FLOAT } "                             \
    "input_arg { name: 'k' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT } } "                               \
    "node_def { name: 'c' op: 'Conv2D' input: 'a' input: 'k' " TF FMT("NHWC") PAD("SAME")                            \
    LIST4("strides", 1, 1, 1, 1) "} node_def { name: 'r' op: 'Relu' input: 'c:output:0' " TF "} "                   \
    "node_def { name: 'c2' op: 'Conv2D' input: 'r:activations:0' input: 'k' " TF FMT("NHWC") PAD("SAME")            \
    LIST4("strides", 1, 1, 1, 1) "} ret { key: 'y' value: 'c2:output:0' } } }\n"

static void test_function_body(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(FN_GRAPH);
    gn_graph *before = gn_pt_clone(g);
    const char *fn[2] = {"x", "w"}, *xn[1] = {"out"};
    optimize_layout(g, "fn", xn, 1, fn, 2);
    gn_pt_check_valid(g, "fn");
    gn__function *f = gn__graph_find_function(g, "f");
    assert_non_null(f);
    /* a body is inferred on its own: the _Arg 'a' has no known rank, so the
     * first convolution stays (refused "unknown rank"); the second is
     * converted, with a Transpose in and one before the _Retval */
    assert_int_equal(count_op(f->body, "Transpose"), 2);
    expect_str_attr(f->body, "c", "data_format", "NHWC");
    expect_str_attr(f->body, "c2", "data_format", "NCHW");
    assert_int_equal(count_nchw(g), 1);
    assert_int_equal(count_op(g, "Transpose"), 0);
    feeds fd = {0};
    feed4(&fd, "x", 1, 5, 5, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    gn_pt_expect_same_results(before, g, fd.name, fd.t, fd.n, xn, 1, 16);
    feeds_free(&fd);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* _FusedConv2D (bias + Relu), DepthwiseConv2dNative, SpaceToDepth / DepthToSpace */
static void test_fused_depthwise_space(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               PH4("x", 1, 6, 6, 2) PH4("w", 3, 3, 2, 4) PH4("dw", 3, 3, 4, 1)
               FCONST("b", "dim { size: 4 }", "float_val: 0.1 float_val: -0.2 float_val: 0.3 float_val: 0")
               "node { name: 'fc' op: '_FusedConv2D' input: 'x' input: 'w' input: 'b' " TF FMT("NHWC") PAD("SAME")
               LIST4("strides", 1, 1, 1, 1) "attr { key: 'num_args' value { i: 1 } } attr { key: 'TArgs' value { list { type: DT_FLOAT } } } "
               "attr { key: 'fused_ops' value { list { s: 'BiasAdd' s: 'Relu' } } } "
               "attr { key: 'epsilon' value { f: 0.0001 } } }\n"
               "node { name: 'dc' op: 'DepthwiseConv2dNative' input: 'fc' input: 'dw' " TF FMT("NHWC") PAD("VALID")
               LIST4("strides", 1, 2, 1, 1) "}\n"
               "node { name: 'd2s' op: 'DepthToSpace' input: 'dc' " TF FMT("NHWC")
               "attr { key: 'block_size' value { i: 2 } } }\n"
               "node { name: 's2d' op: 'SpaceToDepth' input: 'd2s' " TF FMT("NHWC")
               "attr { key: 'block_size' value { i: 2 } } }\n" UN("out", "Sigmoid", "s2d"),
               "x,w,dw,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    assert_int_equal(count_op(r.g, "Transpose"), 2);
    expect_str_attr(r.g, "fc", "data_format", "NCHW");
    expect_str_attr(r.g, "dc", "data_format", "NCHW");
    expect_list_attr(r.g, "dc", "strides", "1,1,2,1");
    expect_str_attr(r.g, "d2s", "data_format", "NCHW");
    expect_str_attr(r.g, "s2d", "data_format", "NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 6, 6, 2);
    feed4(&fd, "w", 3, 3, 2, 4);
    feed4(&fd, "dw", 3, 3, 4, 1);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- gradient ops (a training step) ----------------------------------------------------------------- */
#define ATTR_B(k, v) "attr { key: '" k "' value { b: " v " } } "
#define GRADS                                                                                                     \
    PH4("x", 1, 6, 6, 2) PH4("w", 3, 3, 2, 2) PH4("dy", 1, 6, 6, 2) CONV("c", "x", "w", "NHWC") UN("r", "Relu", "c")       \
    BIN("rg", "ReluGrad", "dy", "r")                                                                                \
    ICONST("isz", "dim { size: 4 }", "int_val: 1 int_val: 6 int_val: 6 int_val: 2")                                  \
    ICONST("fsz", "dim { size: 4 }", "int_val: 3 int_val: 3 int_val: 2 int_val: 2")                                  \
    "node { name: 'bpi' op: 'Conv2DBackpropInput' input: 'isz' input: 'w' input: 'rg' " TF FMT("NHWC") PAD("SAME")   \
        LIST4("strides", 1, 1, 1, 1) "}\n"                                                                          \
    "node { name: 'bpf' op: 'Conv2DBackpropFilter' input: 'x' input: 'fsz' input: 'rg' " TF FMT("NHWC") PAD("SAME")  \
        LIST4("strides", 1, 1, 1, 1) "}\n"                                                                          \
    "node { name: 'bg' op: 'BiasAddGrad' input: 'rg' " TF FMT("NHWC") "}\n"                                         \
    "node { name: 'mp' op: 'MaxPool' input: 'r' " TF FMT("NHWC") PAD("VALID") LIST4("ksize", 1, 2, 2, 1)            \
        LIST4("strides", 1, 2, 2, 1) "}\n"                                                                          \
    UN("mpr", "Relu", "mp")                                                                                         \
    "node { name: 'mpg' op: 'MaxPoolGrad' input: 'r' input: 'mp' input: 'mpr' " TF FMT("NHWC") PAD("VALID")          \
        LIST4("ksize", 1, 2, 2, 1) LIST4("strides", 1, 2, 2, 1) "}\n"                                               \
    C2("sc", "float_val: 1.5 float_val: 0.5") C2("m1", "float_val: 0 float_val: 0") C2("m2", "float_val: 1 float_val: 1") \
    "node { name: 'fbg' op: 'FusedBatchNormGradV3' input: 'bpi' input: 'mpg' input: 'sc' input: 'm1' input: 'm2' "    \
    "input: 'm1' " TF "attr { key: 'U' value { type: DT_FLOAT } } attr { key: 'epsilon' value { f: 0.001 } } "        \
    FMT("NHWC") ATTR_B("is_training", "true") "}\n"                                                                   \
    UN("o1", "Identity", "fbg") UN("o2", "Identity", "bpf") UN("o3", "Identity", "bg")

static void test_grad_ops(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, GRADS, "x,w,dy,o1,o2,o3", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* every op is NCHW; x is transposed once (for c and the filter gradient),
     * dy once, and only the input gradient goes back: the filter and bias
     * gradients keep their layout */
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); dy=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); "
        "r=Relu(c); rg=ReluGrad(rg-0-TransposeNHWCToNCHW-LayoutOptimizer, r); fsz=Const(); "
        "bpi=Conv2DBackpropInput(bpi-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer, w, rg); "
        "bpf=Conv2DBackpropFilter(c-0-TransposeNHWCToNCHW-LayoutOptimizer, fsz, rg); bg=BiasAddGrad(rg); mp=MaxPool(r); "
        "mpr=Relu(mp); mpg=MaxPoolGrad(r, mp, mpr); sc=Const(); m1=Const(); m2=Const(); "
        "fbg=FusedBatchNormGradV3(bpi, mpg, sc, m1, m2, m1); o1=Identity(fbg-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "o2=Identity(bpf); o3=Identity(bg); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "rg-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(dy, rg-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "rg-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "bpi-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "fbg-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(fbg, fbg-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "fbg-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    const char *nchw[] = {"bpi", "bpf", "bg", "mpg", "fbg"};
    for (size_t i = 0; i < 5; i++) expect_str_attr(r.g, nchw[i], "data_format", "NCHW");
    expect_list_attr(r.g, "mpg", "ksize", "1,1,2,2");
    expect_list_attr(r.g, "bpi", "strides", "1,1,1,1");
    expect_const_ints(r.g, "bpi-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,2,6,6");
    expect_const_ints(r.g, "fsz", "3,3,2,2");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: rg: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.sensitive: fbg: NHWC to NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 6, 6, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    feed4(&fd, "dy", 1, 6, 6, 2);
    const char *xn[3] = {"o1", "o2", "o3"};
    gn_pt_expect_same_results(r.before, r.g, fd.name, fd.t, fd.n, xn, 3, 16);
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- Shape and Fill: the shape vector stays in NCHW order between them -------------------------------------- */
#define SHAPE_FILL                                                                                                \
    PH4("x", 1, 5, 4, 3) PH4("w", 3, 3, 3, 2) CONV("c", "x", "w", "NHWC")                                             \
    "node { name: 'sh' op: 'Shape' input: 'c' " TF "attr { key: 'out_type' value { type: DT_INT32 } } }\n"           \
    FCONST("half", "", "float_val: 0.5")                                                                           \
    "node { name: 'f' op: 'Fill' input: 'sh' input: 'half' " TF "attr { key: 'index_type' value { type: DT_INT32 } } }\n" \
    BIN("m", "Mul", "c", "f") UN("out", "Relu", "m") UN("dims", "Identity", "sh")

static void test_shape_fill(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, SHAPE_FILL, "x,w,out,dims", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* Shape reads c in NCHW and Fill makes an NCHW tensor from that order; the
     * fetched shape goes back through a DataFormatVecPermute, not a Transpose of c */
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); sh=Shape(c); "
        "half=Const(); f=Fill(sh, half); m=Mul(c, f); out=Relu(m-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "dims=Identity(sh-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "sh-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer=DataFormatVecPermute(sh); "
        "m-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(m, m-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "m-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_str_attr(r.g, "sh-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer", "src_format", "NCHW");
    expect_str_attr(r.g, "sh-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer", "dst_format", "NHWC");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: sh: NHWC to NCHW");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: f: NHWC to NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 5, 4, 3);
    feed4(&fd, "w", 3, 3, 3, 2);
    const char *xn[2] = {"out", "dims"};
    gn_pt_expect_same_results(r.before, r.g, fd.name, fd.t, fd.n, xn, 2, 16);
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- vectors and axes computed at run time: DataFormatVecPermute / DataFormatDimMap nodes ----------------- */
#define IPH(n, shape)                                                                                              \
    "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' " \
    "value { shape { " shape " } } } }\n"
#define RUNTIME_VECS                                                                                              \
    PH4("x", 1, 5, 4, 3) PH4("w", 3, 3, 3, 4) CONV("c", "x", "w", "NHWC") IPH("pads", "dim { size: 4 } dim { size: 2 }") \
    "node { name: 'pad' op: 'Pad' input: 'c' input: 'pads' " TF "attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n" \
    IPH("beg", "dim { size: 4 }") ICONST("size", "dim { size: 4 }", "int_val: 1 int_val: 4 int_val: 3 int_val: -1")  \
    "node { name: 'sl' op: 'Slice' input: 'pad' input: 'beg' input: 'size' " TF                                       \
    "attr { key: 'Index' value { type: DT_INT32 } } }\n" IPH("mult", "dim { size: 4 }")                               \
    "node { name: 'tile' op: 'Tile' input: 'sl' input: 'mult' " TF "attr { key: 'Tmultiples' value { type: DT_INT32 } } }\n" \
    IPH("ax", "")                                                                                                    \
    "node { name: 'cat' op: 'ConcatV2' input: 'tile' input: 'tile' input: 'ax' " TF                                  \
    "attr { key: 'N' value { i: 2 } } attr { key: 'Tidx' value { type: DT_INT32 } } }\n" IPH("rax", "dim { size: 1 }") \
    "node { name: 'sum' op: 'Sum' input: 'cat' input: 'rax' " TF "attr { key: 'Tidx' value { type: DT_INT32 } } "    \
    ATTR_B("keep_dims", "true") "}\n" UN("out", "Identity", "sum")

static void test_runtime_vectors(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, RUNTIME_VECS, "x,w,pads,beg,mult,ax,rax,out", 90, GN_LAYOUT_POLICY_GRAPNEL,
               GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); pads=Placeholder(); "
        "pad=Pad(c, pad-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer); beg=Placeholder(); "
        "sl=Slice(pad, sl-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer, sl-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer); "
        "mult=Placeholder(); tile=Tile(sl, tile-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer); ax=Placeholder(); "
        "cat=ConcatV2(tile, tile, cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer); rax=Placeholder(); "
        "sum=Sum(cat, sum-1-DataFormatDimMapNHWCToNCHW-LayoutOptimizer); "
        "out=Identity(sum-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "pad-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=DataFormatVecPermute(pads); "
        "sl-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=DataFormatVecPermute(beg); "
        "sl-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "tile-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=DataFormatVecPermute(mult); "
        "cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer=DataFormatDimMap(ax); "
        "sum-1-DataFormatDimMapNHWCToNCHW-LayoutOptimizer=DataFormatDimMap(rax); "
        "sum-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(sum, sum-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "sum-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_const_ints(r.g, "sl-2-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,-1,4,3");
    expect_str_attr(r.g, "pad-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "src_format", "NHWC");
    expect_str_attr(r.g, "pad-1-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "dst_format", "NCHW");
    expect_str_attr(r.g, "cat-2-DataFormatDimMapNHWCToNCHW-LayoutOptimizer", "dst_format", "NCHW");
    feeds fd = {0};
    feed4(&fd, "x", 1, 5, 4, 3);
    feed4(&fd, "w", 3, 3, 3, 4);
    int32_t pads[8] = {0, 0, 1, 2, 0, 1, 1, 0}, beg[4] = {0, 1, 1, 2}, mult[4] = {1, 2, 1, 1}, ax = 3, rax = 1;
    int64_t d42[2] = {4, 2}, d4[1] = {4}, d1[1] = {1};
    const char *nm[5] = {"pads", "beg", "mult", "ax", "rax"};
    gn_tensor ts[5] = {gn_pt_view(DT_INT32, pads, sizeof pads, 2, d42), gn_pt_view(DT_INT32, beg, sizeof beg, 1, d4),
                       gn_pt_view(DT_INT32, mult, sizeof mult, 1, d4), gn_pt_view(DT_INT32, &ax, sizeof ax, 0, NULL),
                       gn_pt_view(DT_INT32, &rax, sizeof rax, 1, d1)};
    for (int i = 0; i < 5; i++) {
        fd.t[fd.n] = ts[i];
        fd.buf[fd.n] = NULL;
        fd.name[fd.n++] = nm[i];
    }
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- a user Transpose, then Pad, then the convolution: the Transpose moves up through the Pad -------------- */
#define USER_PAD                                                                                                  \
    PH4("x", 1, 5, 6, 2) ICONST("perm", "dim { size: 4 }", "int_val: 0 int_val: 3 int_val: 1 int_val: 2")           \
    "node { name: 'tx' op: 'Transpose' input: 'x' input: 'perm' " TF "attr { key: 'Tperm' value { type: DT_INT32 } } }\n" \
    ICONST("pads", "dim { size: 4 } dim { size: 2 }",                                                                 \
           "int_val: 0 int_val: 0 int_val: 0 int_val: 0 int_val: 1 int_val: 2 int_val: 2 int_val: 1")                 \
    "node { name: 'pad' op: 'MirrorPad' input: 'tx' input: 'pads' " TF                                               \
    "attr { key: 'Tpaddings' value { type: DT_INT32 } } attr { key: 'mode' value { s: 'REFLECT' } } }\n"            \
    PH4("w", 3, 3, 2, 2) CONV("c", "pad", "w", "NCHW") UN("out", "Relu", "c")

static void test_pad_after_user_transpose(void **state)
{
    (void)state;
    lrun r;
    /* NCHW to NHWC (forced): the user's NHWC-to-NCHW Transpose undoes the inserted one */
    lrun_start(&r, USER_PAD, "x,w,out", 90, GN_LAYOUT_POLICY_NHWC, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* no Transpose before the convolution: the MirrorPad reads x itself, its paddings in NHWC order */
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); pad=MirrorPad(x, pad-1-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer); w=Placeholder(); "
        "c=Conv2D(pad, w); out=Relu(c-0-0-TransposeNHWCToNCHW-LayoutOptimizer); "
        "pad-1-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer=Const(); "
        "c-0-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(c, c-0-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const()");
    expect_const_ints(r.g, "pad-1-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer", "0,0,1,2,2,1,0,0");
    expect_str_attr(r.g, "c", "data_format", "NHWC");
    gn_pt_fx_expect_event(&r.f, "layout.cancel: pad: input 0 read before user Transpose 'tx'");
    gn_pt_fx_expect_event(&r.f, "layout.agnostic: pad: NCHW to NHWC");
    feeds fd = {0};
    feed4(&fd, "x", 1, 5, 6, 2);
    feed4(&fd, "w", 3, 3, 2, 2);
    lrun_check(&r, &fd, "out");
    feeds_free(&fd);
    lrun_end(&r);
}

/* ---- Switch / Merge, IdentityN, ShapeN ------------------------------------------------------------------------ */
#define COND_GRAPH                                                                                                \
    PH4("x", 1, 5, 4, 3) PH4("w", 3, 3, 3, 2) CONV("c", "x", "w", "NHWC")                                             \
    "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'shape' value { " \
    "shape { } } } }\n"                                                                                             \
    "node { name: 'v' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { " \
    "shape { dim { size: 3 } } } } }\n"                                                                             \
    "node { name: 'sw' op: 'Switch' input: 'c' input: 'p' " TF "}\n" UN("a", "Relu", "sw") UN("b", "Tanh", "sw:1")     \
    "node { name: 'm' op: 'Merge' input: 'a' input: 'b' " TF "attr { key: 'N' value { i: 2 } } }\n"                   \
    "node { name: 'idn' op: 'IdentityN' input: 'm' input: 'v' attr { key: 'T' value { list { type: DT_FLOAT type: "   \
    "DT_FLOAT } } } }\n"                                                                                            \
    "node { name: 'shn' op: 'ShapeN' input: 'idn' input: 'v' " TF "attr { key: 'N' value { i: 2 } } "                \
    "attr { key: 'out_type' value { type: DT_INT32 } } }\n"                                                         \
    UN("out", "Sigmoid", "idn") UN("o2", "Identity", "idn:1")                                                       \
    "node { name: 'o3' op: 'Identity' input: 'shn' attr { key: 'T' value { type: DT_INT32 } } }\n"                 \
    "node { name: 'o4' op: 'Identity' input: 'shn:1' attr { key: 'T' value { type: DT_INT32 } } }\n"

static void test_switch_merge_identityn_shapen(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r, COND_GRAPH, "x,w,p,v,out,o2,o3,o4", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    /* both branches and the Merge stay NCHW; IdentityN and ShapeN convert
     * their 4-D port only (the vector v passes untouched) */
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); p=Placeholder(); "
        "v=Placeholder(); sw=Switch(c, p); a=Relu(sw); b=Tanh(sw:1); m=Merge(a, b); idn=IdentityN(m, v); "
        "shn=ShapeN(idn, v); out=Sigmoid(idn-0-0-TransposeNCHWToNHWC-LayoutOptimizer); o2=Identity(idn:1); "
        "o3=Identity(shn-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer); o4=Identity(shn:1); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "idn-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(idn, idn-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "idn-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const(); "
        "shn-0-0-DataFormatVecPermuteNCHWToNHWC-LayoutOptimizer=DataFormatVecPermute(shn)");
    const char *conv[] = {"sw", "b", "m", "idn", "shn"};
    for (size_t i = 0; i < 5; i++) {
        char ev[64];
        snprintf(ev, sizeof ev, "layout.agnostic: %s: NHWC to NCHW", conv[i]);
        gn_pt_fx_expect_event(&r.f, ev);
    }
    for (int taken = 0; taken < 2; taken++) {
        feeds fd = {0};
        feed4(&fd, "x", 1, 5, 4, 3);
        feed4(&fd, "w", 3, 3, 3, 2);
        bool pv = taken != 0;
        float vv[3] = {1, 2, 3};
        int64_t d3[1] = {3};
        fd.t[fd.n] = gn_pt_view(10 /* DT_BOOL */, &pv, 1, 0, NULL);
        fd.buf[fd.n] = NULL;
        fd.name[fd.n++] = "p";
        fd.t[fd.n] = gn_pt_view(DT_FLOAT, vv, sizeof vv, 1, d3);
        fd.buf[fd.n] = NULL;
        fd.name[fd.n++] = "v";
        const char *xn[4] = {"out", "o2", "o3", "o4"};
        gn_pt_expect_same_results(r.before, r.g, fd.name, fd.t, fd.n, xn, 4, 16);
        feeds_free(&fd);
    }
    lrun_end(&r);
}

/* AvgPoolGrad and MaxPoolGradV2 (no CPU kernels: the exact graph only): the
 * shape and ksize/strides vectors are permuted like any per-dimension operand */
static void test_pool_grads_v2(void **state)
{
    (void)state;
    lrun r;
    lrun_start(&r,
               PH4("x", 1, 6, 6, 2) PH4("w", 3, 3, 2, 2) CONV("c", "x", "w", "NHWC") UN("r", "Relu", "c")
               ICONST("shp", "dim { size: 4 }", "int_val: 1 int_val: 6 int_val: 6 int_val: 2")
               "node { name: 'ag' op: 'AvgPoolGrad' input: 'shp' input: 'r' " TF FMT("NHWC") PAD("SAME")
               LIST4("ksize", 1, 1, 1, 1) LIST4("strides", 1, 1, 1, 1) "}\n"
               IPH("ks", "dim { size: 4 }") ICONST("st", "dim { size: 4 }", "int_val: 1 int_val: 1 int_val: 1 int_val: 1")
               "node { name: 'mg' op: 'MaxPoolGradV2' input: 'c' input: 'r' input: 'ag' input: 'ks' input: 'st' " TF
               FMT("NHWC") PAD("SAME") "}\n" UN("out", "Identity", "mg"),
               "x,w,ks,out", 90, GN_LAYOUT_POLICY_GRAPNEL, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_true(r.changed);
    gn_pt_expect_dump(
        r.g,
        "x=Placeholder(); w=Placeholder(); c=Conv2D(c-0-TransposeNHWCToNCHW-LayoutOptimizer, w); r=Relu(c); "
        "ag=AvgPoolGrad(ag-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer, r); ks=Placeholder(); "
        "mg=MaxPoolGradV2(c, r, ag, mg-3-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer, "
        "mg-4-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer); out=Identity(mg-0-0-TransposeNCHWToNHWC-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer=Transpose(x, c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer); "
        "c-0-TransposeNHWCToNCHW-LayoutOptimizer-PermConstNHWCToNCHW-LayoutOptimizer=Const(); "
        "ag-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "mg-3-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=DataFormatVecPermute(ks); "
        "mg-4-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer=Const(); "
        "mg-0-0-TransposeNCHWToNHWC-LayoutOptimizer=Transpose(mg, mg-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer); "
        "mg-0-0-TransposeNCHWToNHWC-LayoutOptimizer-PermConstNCHWToNHWC-LayoutOptimizer=Const()");
    expect_const_ints(r.g, "ag-0-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer", "1,2,6,6");
    expect_str_attr(r.g, "ag", "data_format", "NCHW");
    expect_str_attr(r.g, "mg", "data_format", "NCHW");
    lrun_end(&r);
}

/* ---- golden models and corpus models, optimized for gpu:sm_90 --------------------------------------- */
#define LAYOUT_ALONE                                                                                             \
    "{'layout_optimizer': True, 'constant_folding': False, 'shape_optimization': False, 'remapping': False, "    \
    "'arithmetic_optimization': False, 'dependency_optimization': False, 'loop_optimization': False, "           \
    "'function_optimization': False, 'debug_stripper': False, 'scoped_allocator_optimization': False, "          \
    "'pin_to_host_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': False, "       \
    "'common_subgraph_elimination': False, 'auto_parallel': False, 'disable_model_pruning': True, 'min_graph_nodes': -1}"

static uint32_t count_nchw1(const gn_graph *g)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const char *f = NULL;
        size_t len = 0;
        if (gn__node_live(g, i) && gn__attr_get_string(g, i, "data_format", &f, &len) && len == 4 && !memcmp(f, "NCHW", 4))
            n++;
    }
    return n;
}

static uint32_t count_nchw(const gn_graph *g)
{
    uint32_t n = count_nchw1(g);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) n += count_nchw1(g->fns[f].body);
    return n;
}

static uint32_t count_transposes(const gn_graph *g)
{
    uint32_t n = count_op(g, "Transpose");
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) n += count_op(g->fns[f].body, "Transpose");
    return n;
}

static void debug_transposes1(const gn_graph *g);
static void debug_transposes(const gn_graph *g)
{
    if (!getenv("GN_LAYOUT_DEBUG")) return;
    debug_transposes1(g);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) {
            print_message("   function %s\n", gn__str(g, g->fns[f].name));
            debug_transposes1(g->fns[f].body);
        }
}
static void debug_transposes1(const gn_graph *g)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i) || strcmp(gn__node_op(g, i), "Transpose")) continue;
        const gn__node *n = &g->nodes[i];
        print_message("    %s <- %s (%s) ->", gn__node_name(g, i), gn__node_name(g, n->in[0].node),
                      gn__node_op(g, n->in[0].node));
        for (uint32_t u = 0; u < n->n_use; u++)
            print_message(" %s(%s)", gn__node_name(g, n->use[u].node), gn__node_op(g, n->use[u].node));
        print_message("\n");
    }
}

/* gn_optimize with the layout optimizer alone, target gpu:sm_90, checked */
static void optimize_layout(gn_graph *g, const char *what, const char *const *fetch, size_t nx,
                            const char *const *feed, size_t nf)
{
    gn_options o;
    gn_options_init(&o);
    char err[512];
    if (gn_options_parse(&o, LAYOUT_ALONE, err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    o.checked = 1;
    o.fail_on_optimizer_errors = 1;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    if (gn_target_parse("gpu:sm_90", &p.target, err, sizeof err) != GN_OK) fail_msg("target: %s", err);
    p.fetches = fetch;
    p.n_fetches = nx;
    p.feeds = feed;
    p.n_feeds = nf;
    gn_report *r = NULL;
    if (gn_optimize(g, &o, &p, &r) != GN_OK) fail_msg("%s: %s", what, gn_graph_errmsg(g));
    if (getenv("GN_LAYOUT_DEBUG") && strstr(what, getenv("GN_LAYOUT_DEBUG"))) {
        char *text = NULL;
        gn_report_to_text(r, &text);
        print_message("%s\n", text);
        gn_free(text);
    }
    gn_report_free(r);
    if (gn_graph_validate(g) != GN_OK) fail_msg("%s: invalid: %s", what, gn_graph_errmsg(g));
}

typedef struct expected_count {
    const char *model;
    uint32_t before, after;   /* Transpose nodes */
    uint32_t nchw;            /* nodes with data_format NCHW after */
} expected_count;

static const expected_count golden_counts[] = {
    /* one Transpose in (the image), none out (global pooling reads the same in both formats) */
    {"cnn_bn_residual", 0, 1, 5},
    /* the image feeds the first convolution and the first residual Add: one shared Transpose in, one out */
    {"mobilenet_v2", 0, 2, 6},
    {"lstm", 1, 1, 0},
    {"lstm_v1", 1, 1, 0},
    {"transformer", 2, 2, 0},
    {"ds_cnn_s", 0, 1, 28},
    {"tfonnx_fc_layers", 0, 0, 0},
    {"tfonnx_lstm", 0, 0, 0},
    {"tfonnx_gru", 0, 0, 0},
};

static const expected_count *find_count(const expected_count *t, size_t n, const char *model)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].model, model)) return &t[i];
    return NULL;
}

static void test_golden(void **state)
{
    (void)state;
    gn_pt_golden m[32];
    size_t n = gn_pt_read_manifest(m, 32);
    if (!n) skip();
    for (size_t i = 0; i < n; i++) {
        gn_graph *g = NULL;
        gn_tensor ft[4];
        const char *fn[4], *xn[4];
        if (!gn_pt_golden_open(&m[i], &g, ft, fn, xn, false)) continue;
        gn_graph *orig = gn_pt_clone(g);
        uint32_t t0 = count_transposes(g);
        optimize_layout(g, m[i].name, xn, m[i].nx, fn, m[i].nf);
        uint32_t t1 = count_transposes(g);
        debug_transposes(g);
        uint32_t nchw = count_nchw(g);
        print_message("  %-20s Transposes %u -> %u, NCHW nodes %u\n", m[i].name, t0, t1, nchw);
        gn_pt_expect_same_results(orig, g, fn, ft, m[i].nf, xn, m[i].nx, 8);
        const expected_count *e = find_count(golden_counts, GN__ARRAY_LEN(golden_counts), m[i].name);
        if (!e) fail_msg("%s: no expected Transpose count", m[i].name);
        if (e && (e->before != t0 || e->after != t1 || e->nchw != nchw))
            fail_msg("%s: Transposes %u -> %u, NCHW nodes %u; expected %u -> %u, %u", m[i].name, t0, t1, nchw, e->before,
                     e->after, e->nchw);
        for (size_t k = 0; k < m[i].nf; k++) gn_tensor_free(&ft[k]);
        gn_graph_free(orig);
        gn_graph_free(g);
    }
}

/* Every corpus model: valid after the pass; the Transpose count of each model
 * the pass changes is listed (every other model must come back unchanged). */
static const expected_count corpus_counts[] = {
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", 0, 1, 28},
    /* one Conv2D before the GRU loop: a Transpose in and one out (the BiasAdds in the loop are 2-D) */
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", 1, 3, 1},
    /* a SavedModel of per-layer functions: each converted body transposes at its _Arg and _Retval; in
     * the model body each dropout's Shape reads its NCHW input through a DataFormatVecPermute instead of
     * a Transpose back to NHWC (two fewer than before Shape was converted) */
    {"mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model", 0, 36, 95},
    {"tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module", 2, 4, 1},
    /* already NCHW: nothing to do */
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main.pbtxt", 1, 1, 266},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main_graph_mode.pbtxt", 1, 1, 266},
};

static void test_corpus(void **state)
{
    (void)state;
    char dir[4096];
    if (!gn_test_corpus("", dir, sizeof dir)) skip();
    for (size_t i = 0; i < gn_pt_corpus_model_count; i++) {
        char path[4096];
        if (!gn_test_corpus(gn_pt_corpus_models[i], path, sizeof path)) continue;
        gn_graph *g = NULL;
        if (gn_graph_load(path, NULL, &g) != GN_OK) {
            gn_graph_free(g);
            continue;
        }
        uint32_t t0 = count_transposes(g), n0 = gn_pt_live_total(g);
        optimize_layout(g, gn_pt_corpus_models[i], NULL, 0, NULL, 0);
        gn_pt_check_valid(g, gn_pt_corpus_models[i]);
        uint32_t t1 = count_transposes(g), n1 = gn_pt_live_total(g), nchw = count_nchw(g);
        debug_transposes(g);
        print_message("  %s: Transposes %u -> %u, nodes %u -> %u, NCHW nodes %u\n", gn_pt_corpus_models[i], t0, t1, n0,
                      n1, nchw);
        const expected_count *e = find_count(corpus_counts, GN__ARRAY_LEN(corpus_counts), gn_pt_corpus_models[i]);

        if (e && (e->before != t0 || e->after != t1 || e->nchw != nchw))
            fail_msg("%s: Transposes %u -> %u, NCHW nodes %u; expected %u -> %u, %u", gn_pt_corpus_models[i], t0, t1,
                     nchw, e->before, e->after, e->nchw);
        if (!e && (t0 != t1 || n0 != n1))
            fail_msg("%s: changed (Transposes %u -> %u, nodes %u -> %u) but not listed", gn_pt_corpus_models[i], t0, t1,
                     n0, n1);
        gn_graph_free(g);
    }
}


/* The KWS models the CPU runtime runs, fed at Mfcc with pseudo-random data:
 * the same labels_softmax before and after (DS_CNN_S is a golden model). */
static void test_corpus_numeric(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", path, sizeof path)) skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", path, gn_graph_errmsg(g));
    int64_t dims[3] = {1, 49, 10};
    float *x = pseudo(490, 7);
    for (int k = 0; k < 490; k++) x[k] *= 20.0f;
    gn_tensor t = gn_pt_view(DT_FLOAT, x, 490 * sizeof(float), 3, dims);
    const char *fn[1] = {"Mfcc"}, *xn[1] = {"labels_softmax"};
    gn_graph *orig = gn_pt_clone(g);
    optimize_layout(g, "CRNN_S", xn, 1, fn, 1);
    assert_int_equal(count_nchw(g), 1);
    assert_int_equal(count_transposes(g), 3);
    gn_pt_expect_same_results(orig, g, fn, &t, 1, xn, 1, 8);
    free(x);
    gn_graph_free(orig);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_agnostic),
        cmocka_unit_test(test_agnostic_attrs),
        cmocka_unit_test(test_fbn_pool_v2),
        cmocka_unit_test(test_chain_exact),
        cmocka_unit_test(test_policy_tensorflow),
        cmocka_unit_test(test_policy_forced_nhwc),
        cmocka_unit_test(test_cpu_layout_conversion),
        cmocka_unit_test(test_cpu_placed_node),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_cancel_user_transpose),
        cmocka_unit_test(test_residual),
        cmocka_unit_test(test_agnostic_refusals),
        cmocka_unit_test(test_agnostic_more),
        cmocka_unit_test(test_function_body),
        cmocka_unit_test(test_fused_depthwise_space),
        cmocka_unit_test(test_grad_ops),
        cmocka_unit_test(test_shape_fill),
        cmocka_unit_test(test_runtime_vectors),
        cmocka_unit_test(test_pad_after_user_transpose),
        cmocka_unit_test(test_switch_merge_identityn_shapen),
        cmocka_unit_test(test_pool_grads_v2),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_numeric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
