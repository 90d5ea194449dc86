/* Shape and dtype inference (src/ops/shape.c, src/ops/shape_<family>.c; the op list src/opdef/ops.def). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/graph.h"
#include "ops/op_fns.h"
#include "ops/shape.h"
#include "passtest.h"

static gn_graph *infer_ok(gn_pt_text *b)
{
    gn_graph *g = gn_test_load_text(b->s, 0);
    gn_status s = gn__graph_infer_shapes(g);
    if (s != GN_OK) fprintf(stderr, "infer failed: %s\n", gn_graph_errmsg(g));
    assert_int_equal(s, GN_OK);
    return g;
}

static void infer_fails(gn_pt_text *b, const char *msg)
{
    gn_graph *g = gn_test_load_text(b->s, 0);
    gn_status s = gn__graph_infer_shapes(g);
    assert_int_equal(s, GN_ERR_GRAPH);
    if (strcmp(gn_graph_errmsg(g), msg) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", gn_graph_errmsg(g), msg);
    assert_string_equal(gn_graph_errmsg(g), msg);
    assert_null(g->shapes.ptr);
    gn_graph_free(g);
    gn_pt_text_free(b);
}

static const gn__tinfo *out_of(const gn_graph *g, const char *node, uint32_t k)
{
    gn_id id = gn__graph_find(g, node);
    if (id == GN_NONE) fprintf(stderr, "no node %s\n", node);
    assert_int_not_equal(id, GN_NONE);
    const gn__tinfo *t = gn__shape_of(g, id, k);
    if (!t) fprintf(stderr, "no output %u of %s\n", k, node);
    assert_non_null(t);
    return t;
}

static void expect(const gn_graph *g, const char *node, uint32_t k, const char *want)
{
    char buf[512];
    gn__shape_str(&out_of(g, node, k)->shape, buf, sizeof buf);
    if (strcmp(buf, want) != 0) fprintf(stderr, "%s:%u: got %s, want %s\n", node, k, buf, want);
    assert_string_equal(buf, want);
}

static void expect_dtype(const gn_graph *g, const char *node, uint32_t k, int32_t dt)
{
    assert_int_equal(out_of(g, node, k)->dtype, dt);
}

/* value as "1,?,3" ("" when none) */
static void expect_val(const gn_graph *g, const char *node, uint32_t k, const char *want)
{
    const gn__partial_value *v = out_of(g, node, k)->value;
    char buf[512] = "";
    if (v) {
        for (int64_t i = 0; i < v->n; i++) {
            size_t l = strlen(buf);
            if (v->known[i]) snprintf(buf + l, sizeof buf - l, "%s%lld", i ? "," : "", (long long)v->v[i]);
            else snprintf(buf + l, sizeof buf - l, "%s?", i ? "," : "");
        }
    } else {
        snprintf(buf, sizeof buf, "<none>");
    }
    if (strcmp(buf, want) != 0) fprintf(stderr, "%s:%u value: got %s, want %s\n", node, k, buf, want);
    assert_string_equal(buf, want);
}

static void done(gn_graph *g, gn_pt_text *b)
{
    gn_graph_free(g);
    gn_pt_text_free(b);
}

/* Shape functions of the ops whose CPU kernels came later: detection
 * (NonMaxSuppression padded or not, CropAndResize), segment reductions,
 * Bincount, the FFT family, and ops without outputs. */
static void test_later_kernel_ops(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "boxes", "DT_FLOAT", "7,4");
    gn_pt_text_ph(&b, "scores", "DT_FLOAT", "7");
    gn_pt_text_ph(&b, "img", "DT_FLOAT", "3,8,8,2");
    gn_pt_text_ph(&b, "bx", "DT_FLOAT", "4,4");
    gn_pt_text_ph(&b, "bi", "DT_INT32", "4");
    gn_pt_text_ph(&b, "data", "DT_FLOAT", "6,3,5");
    gn_pt_text_ph(&b, "ids", "DT_INT32", "6");
    gn_pt_text_ph(&b, "ids2", "DT_INT32", "6,3");
    gn_pt_text_ph(&b, "cnt", "DT_INT32", "2,9");
    gn_pt_text_ph(&b, "sig", "DT_FLOAT", "2,16");
    gn_pt_text_ph(&b, "spec", "DT_COMPLEX64", "2,9");
    gn_pt_text_ph(&b, "c2", "DT_COMPLEX64", "3,4,4");
    gn_pt_text_ph(&b, "cond", "DT_BOOL", "");
    gn_pt_text_cst(&b, "five", "i", "", "5");
    gn_pt_text_cst(&b, "four", "i", "", "4");
    gn_pt_text_cst(&b, "seven", "i", "", "7");
    gn_pt_text_cst(&b, "crop", "i", NULL, "5,6");
    gn_pt_text_cst(&b, "n16", "i", NULL, "16");
    gn_pt_text_cst(&b, "n44", "i", NULL, "4,6");
    gn_pt_text_add(&b, "node { name: \"thr\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: "
            "\"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }\n");
    gn_pt_text_node(&b, "nms3", "NonMaxSuppressionV3", "boxes,scores,five,thr,thr", TF);
    gn_pt_text_node(&b, "nms4", "NonMaxSuppressionV4", "boxes,scores,five,thr,thr", TF AB("pad_to_max_output_size", "true"));
    gn_pt_text_node(&b, "nms5", "NonMaxSuppressionV5", "boxes,scores,five,thr,thr,thr", TF);
    gn_pt_text_node(&b, "car", "CropAndResize", "img,bx,bi,crop", TF);
    gn_pt_text_ph(&b, "cboxes", "DT_FLOAT", "2,9,1,4");
    gn_pt_text_ph(&b, "cscores", "DT_FLOAT", "2,9,3");
    gn_pt_text_node(&b, "cnms", "CombinedNonMaxSuppression", "cboxes,cscores,four,seven,thr,thr", "");
    gn_pt_text_cst(&b, "twenty", "i", "", "20");
    gn_pt_text_node(&b, "cnmsp", "CombinedNonMaxSuppression", "cboxes,cscores,five,twenty,thr,thr", AB("pad_per_class", "true"));
    gn_pt_text_node(&b, "cnmsq", "CombinedNonMaxSuppression", "cboxes,cscores,four,seven,thr,thr", AB("pad_per_class", "true"));
    gn_pt_text_node(&b, "useg", "UnsortedSegmentSum", "data,ids,four", TF);
    gn_pt_text_node(&b, "useg2", "UnsortedSegmentMax", "data,ids2,four", TF);
    gn_pt_text_node(&b, "seg", "SegmentMean", "data,ids", TF);
    gn_pt_text_node(&b, "bc", "Bincount", "ids,seven,scores", TF);
    gn_pt_text_node(&b, "dbc", "DenseBincount", "cnt,seven,scores", TF);
    gn_pt_text_node(&b, "rfft", "RFFT", "sig,n16", "");
    gn_pt_text_node(&b, "irfft", "IRFFT", "spec,n16", "");
    gn_pt_text_node(&b, "fft", "FFT", "spec", "");
    gn_pt_text_node(&b, "irfft2", "IRFFT2D", "c2,n44", "");
    gn_pt_text_node(&b, "assert", "Assert", "cond,sig", AL("T", "type: DT_FLOAT"));
    gn_pt_text_cst(&b, "ax1", "i", NULL, "1");
    gn_pt_text_cst(&b, "ax_none", "i", NULL, "");
    gn_pt_text_node(&b, "uq2", "UniqueV2", "data,ax1", TF);
    gn_pt_text_node(&b, "uq2v", "UniqueV2", "ids,ax_none", TI);
    /* SoftmaxCrossEntropyWithLogits broadcasts logits [1,5] against labels [6,5] */
    gn_pt_text_ph(&b, "lg15", "DT_FLOAT", "1,5");
    gn_pt_text_ph(&b, "lb65", "DT_FLOAT", "6,5");
    gn_pt_text_node(&b, "xent", "SoftmaxCrossEntropyWithLogits", "lg15,lb65", TF);
    gn_pt_text_node(&b, "xent2", "SoftmaxCrossEntropyWithLogits", "lb65,lg15", TF);
    gn_graph *g = infer_ok(&b);
    expect(g, "nms3", 0, "[?]");
    expect(g, "nms4", 0, "[5]");
    expect(g, "nms4", 1, "[]");
    expect(g, "nms5", 0, "[?]");
    expect(g, "nms5", 1, "[?]");
    expect(g, "nms5", 2, "[]");
    expect(g, "car", 0, "[4,5,6,2]");
    expect(g, "cnms", 0, "[2,7,4]");
    expect(g, "cnms", 1, "[2,7]");
    expect(g, "cnms", 2, "[2,7]");
    expect(g, "cnms", 3, "[2]");
    expect(g, "cnmsp", 1, "[2,15]");   /* min(20, 5 * 3) */
    expect(g, "cnmsq", 1, "[2,7]");
    expect(g, "useg", 0, "[4,3,5]");
    expect(g, "useg2", 0, "[4,5]");
    expect(g, "seg", 0, "[?,3,5]");
    expect(g, "bc", 0, "[7]");
    expect(g, "dbc", 0, "[2,7]");
    expect(g, "rfft", 0, "[2,9]");
    expect(g, "irfft", 0, "[2,16]");
    expect(g, "fft", 0, "[2,9]");
    expect(g, "irfft2", 0, "[3,4,6]");
    expect(g, "uq2", 0, "[6,?,5]");
    expect(g, "uq2", 1, "[3]");
    expect(g, "uq2v", 0, "[?]");
    expect(g, "uq2v", 1, "[6]");
    expect(g, "xent", 0, "[6]");
    expect(g, "xent", 1, "[6,5]");
    expect(g, "xent2", 0, "[6]");
    expect(g, "xent2", 1, "[6,5]");
    gn_graph_free(g);
    gn_pt_text_free(&b);
}

/* ---- tests ----------------------------------------------------------------------- */
static void test_table_sorted(void **state)
{
    (void)state;
    uint32_t n = 0;
    for (uint32_t i = 0; i < gn__op_fns_count(); i++) n += gn__op_fns_at(i)->shape != NULL;
    assert_true(n > 250);
    assert_non_null(gn__shape_fn_for("Conv2D"));
    assert_non_null(gn__shape_fn_for("Abs"));
    assert_non_null(gn__shape_fn_for("_SwitchN"));
    assert_null(gn__shape_fn_for("NoSuchOp"));
    assert_null(gn__shape_fn_for(""));
}

#define CONV_ATTRS(fmt, pad, strides) TF AS("data_format", fmt) AS("padding", pad) AL("strides", strides)

static void test_conv(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "1,224,224,3");
    gn_pt_text_ph(&b, "xc", "DT_FLOAT", "1,3,224,224");
    gn_pt_text_ph(&b, "w", "DT_FLOAT", "3,3,3,32");
    gn_pt_text_ph(&b, "dw", "DT_FLOAT", "3,3,32,2");
    gn_pt_text_ph(&b, "xu", "DT_FLOAT", "?");
    gn_pt_text_ph(&b, "xb", "DT_FLOAT", "-1,-1,-1,3");
    gn_pt_text_node(&b, "same", "Conv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "nchw", "Conv2D", "xc,w", CONV_ATTRS("NCHW", "SAME", "i: 1 i: 1 i: 2 i: 2"));
    gn_pt_text_node(&b, "valid", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    gn_pt_text_node(&b, "valid2", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "dil", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1") AL("dilations", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "expl", "Conv2D", "x,w",
       CONV_ATTRS("NHWC", "EXPLICIT", "i: 1 i: 2 i: 2 i: 1")
           AL("explicit_paddings", "i: 0 i: 0 i: 1 i: 1 i: 2 i: 2 i: 0 i: 0"));
    gn_pt_text_node(&b, "fused", "_FusedConv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "unk", "Conv2D", "xu,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "batch", "Conv2D", "xb,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "dwc", "DepthwiseConv2dNative", "same,dw", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 1 i: 1 i: 1"));
    gn_pt_text_node(&b, "dwc2", "_FusedDepthwiseConv2dNative", "same,dw", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "mp", "MaxPool", "same", TF AS("padding", "VALID") AL("ksize", "i: 1 i: 2 i: 2 i: 1") AL("strides", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "ap", "AvgPool", "same", TF AS("padding", "SAME") AL("ksize", "i: 1 i: 3 i: 3 i: 1") AL("strides", "i: 1 i: 2 i: 2 i: 1"));
    gn_pt_text_node(&b, "apc", "AvgPool", "nchw", TF AS("data_format", "NCHW") AS("padding", "VALID") AL("ksize", "i: 1 i: 1 i: 3 i: 3") AL("strides", "i: 1 i: 1 i: 2 i: 2"));
    gn_pt_text_cst(&b, "ks", "i", NULL, "1,2,2,1");
    gn_pt_text_node(&b, "mp2", "MaxPoolV2", "same,ks,ks", TF AS("padding", "VALID"));
    /* ExtractImagePatches: windows dilated by rates (shapes from TensorFlow 2.21) */
#define EIP_ATTRS(pad) TF AS("padding", pad) AL("ksizes", "i: 1 i: 3 i: 2 i: 1") AL("strides", "i: 1 i: 2 i: 3 i: 1") AL("rates", "i: 1 i: 2 i: 1 i: 1")
    gn_pt_text_node(&b, "eipv", "ExtractImagePatches", "x", EIP_ATTRS("VALID"));
    gn_pt_text_node(&b, "eips", "ExtractImagePatches", "x", EIP_ATTRS("SAME"));
    gn_pt_text_node(&b, "eipb", "ExtractImagePatches", "xb", EIP_ATTRS("SAME"));
#undef EIP_ATTRS
    /* dilated convolution, TensorFlow 1 style */
    gn_pt_text_cst(&b, "block", "i", NULL, "2,2");
    gn_pt_text_cst(&b, "pads", "i", NULL, "2,2,2,2");
    gn_pt_text_cst(&b, "pshape", "i", NULL, "2,2");
    gn_pt_text_node(&b, "pads2", "Reshape", "pads,pshape", TI);
    gn_pt_text_cst(&b, "crops", "i", NULL, "0,0,0,0");
    gn_pt_text_node(&b, "crops2", "Reshape", "crops,pshape", TI);
    gn_pt_text_node(&b, "s2b", "SpaceToBatchND", "x,block,pads2", TF);
    gn_pt_text_node(&b, "atrous", "Conv2D", "s2b,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    gn_pt_text_node(&b, "b2s", "BatchToSpaceND", "atrous,block,crops2", TF);
    gn_graph *g = infer_ok(&b);
    expect(g, "s2b", 0, "[4,114,114,3]");
    expect(g, "atrous", 0, "[4,112,112,32]");
    expect(g, "b2s", 0, "[1,224,224,32]");
    expect(g, "same", 0, "[1,112,112,32]");
    expect(g, "nchw", 0, "[1,32,112,112]");
    expect(g, "valid", 0, "[1,222,222,32]");
    expect(g, "valid2", 0, "[1,111,111,32]");
    expect(g, "dil", 0, "[1,220,220,32]");
    expect(g, "expl", 0, "[1,112,113,32]");
    expect(g, "fused", 0, "[1,112,112,32]");
    expect(g, "unk", 0, "[?,?,?,32]");
    expect(g, "batch", 0, "[?,?,?,32]");
    expect(g, "dwc", 0, "[1,112,112,64]");
    expect(g, "dwc2", 0, "[1,55,55,64]");
    expect(g, "mp", 0, "[1,56,56,32]");
    expect(g, "ap", 0, "[1,56,56,32]");
    expect(g, "apc", 0, "[1,32,55,55]");
    expect(g, "mp2", 0, "[1,56,56,32]");
    expect(g, "eipv", 0, "[1,110,75,18]");
    expect(g, "eips", 0, "[1,112,75,18]");
    expect(g, "eipb", 0, "[?,?,?,18]");
    expect_dtype(g, "same", 0, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    done(g, &b);

    /* depth mismatch */
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "1,8,8,5");
    gn_pt_text_ph(&b, "w", "DT_FLOAT", "3,3,3,32");
    gn_pt_text_node(&b, "c", "Conv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 1 i: 1 i: 1"));
    infer_fails(&b, "node 'c' (Conv2D): input depth 5 is not a multiple of the filter's input depth 3");
    gn_pt_text b2 = {0};
    gn_pt_text_ph(&b2, "x", "DT_FLOAT", "1,2,2,3");
    gn_pt_text_ph(&b2, "w", "DT_FLOAT", "5,5,3,32");
    gn_pt_text_node(&b2, "c", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    infer_fails(&b2, "node 'c' (Conv2D): computed output size would be negative: -2 (input 2, effective filter 5, stride 1)");
}

static void test_matmul(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "at", "DT_FLOAT", "3,2");
    gn_pt_text_ph(&b, "b", "DT_FLOAT", "3,5");
    gn_pt_text_ph(&b, "bt", "DT_FLOAT", "5,3");
    gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
    gn_pt_text_ph(&b, "b3", "DT_FLOAT", "2,1,3,4");
    gn_pt_text_ph(&b, "b4", "DT_FLOAT", "5,4,6");
    gn_pt_text_node(&b, "mm", "MatMul", "a,b", TF);
    gn_pt_text_node(&b, "mm_tb", "MatMul", "a,bt", TF AB("transpose_b", "true"));
    gn_pt_text_node(&b, "mm_ta", "MatMul", "at,b", TF AB("transpose_a", "true"));
    gn_pt_text_node(&b, "mm_tt", "MatMul", "at,bt", TF AB("transpose_a", "true") AB("transpose_b", "true"));
    gn_pt_text_node(&b, "mm_u", "MatMul", "u,b", TF);
    gn_pt_text_node(&b, "fmm", "_FusedMatMul", "a,b", TF);
    gn_pt_text_node(&b, "bmm", "BatchMatMulV2", "b3,b4", TF);
    gn_pt_text_node(&b, "bmm_adj", "BatchMatMulV3", "b4,b4", TF AB("adj_x", "true"));
    gn_graph *g = infer_ok(&b);
    expect(g, "mm", 0, "[2,5]");
    expect(g, "mm_tb", 0, "[2,5]");
    expect(g, "mm_ta", 0, "[2,5]");
    expect(g, "mm_tt", 0, "[2,5]");
    expect(g, "mm_u", 0, "[?,5]");
    expect(g, "fmm", 0, "[2,5]");
    expect(g, "bmm", 0, "[2,5,3,6]");
    expect(g, "bmm_adj", 0, "[5,6,6]");
    done(g, &b);

    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "w", "DT_FLOAT", "4,5");
    gn_pt_text_node(&b, "dense/MatMul", "MatMul", "x,w", TF);
    infer_fails(&b, "node 'dense/MatMul' (MatMul): inner dimensions differ: [2,3] x [4,5]");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "w", "DT_FLOAT", "4,5");
    gn_pt_text_node(&b, "m", "MatMul", "x,w", TF AB("transpose_b", "true"));
    infer_fails(&b, "node 'm' (MatMul): inner dimensions differ: [2,3] x [4,5] (transpose_b)");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3,4");
    gn_pt_text_ph(&b, "w", "DT_FLOAT", "4,5");
    gn_pt_text_node(&b, "m", "MatMul", "x,w", TF);
    infer_fails(&b, "node 'm' (MatMul): input 0 must be a matrix, got [2,3,4]");
}

static void test_broadcast(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,1,3");
    gn_pt_text_ph(&b, "b", "DT_FLOAT", "4,1");
    gn_pt_text_ph(&b, "s", "DT_FLOAT", "");
    gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
    gn_pt_text_ph(&b, "p", "DT_FLOAT", "-1,3");
    gn_pt_text_ph(&b, "q", "DT_FLOAT", "5,1");
    gn_pt_text_node(&b, "add", "AddV2", "a,b", TF);
    gn_pt_text_node(&b, "mul", "Mul", "a,s", TF);
    gn_pt_text_node(&b, "sub", "Sub", "a,u", TF);
    gn_pt_text_node(&b, "pq", "Maximum", "p,q", TF);
    gn_pt_text_node(&b, "less", "Less", "a,b", TF);
    gn_pt_text_node(&b, "sel", "SelectV2", "less,a,s", TF);
    gn_graph *g = infer_ok(&b);
    expect(g, "add", 0, "[2,4,3]");
    expect(g, "mul", 0, "[2,1,3]");
    expect(g, "sub", 0, "<unknown>");
    expect(g, "pq", 0, "[5,3]");
    expect(g, "less", 0, "[2,4,3]");
    expect_dtype(g, "less", 0, TENSORFLOW__DATA_TYPE__DT_BOOL);
    expect(g, "sel", 0, "[2,4,3]");
    /* the output shares the input's dims when it is the same shape */
    assert_ptr_equal(out_of(g, "mul", 0)->shape.dims, out_of(g, "a", 0)->shape.dims);
    done(g, &b);

    gn_pt_text_ph(&b, "a", "DT_FLOAT", "3");
    gn_pt_text_ph(&b, "b", "DT_FLOAT", "4");
    gn_pt_text_node(&b, "add", "AddV2", "a,b", TF);
    infer_fails(&b, "node 'add' (AddV2): incompatible shapes for broadcasting: [3] and [4]");
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,8");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "4");
    gn_pt_text_node(&b, "ba", "BiasAdd", "a,c", TF);
    infer_fails(&b, "node 'ba' (BiasAdd): bias size 4 does not match the channel dimension 8 of [2,8] (bias [4])");
}

static void test_bias_bn(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "8,16,7,7");
    gn_pt_text_ph(&b, "xh", "DT_FLOAT", "8,7,7,16");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "16");
    gn_pt_text_ph(&b, "cu", "DT_FLOAT", "-1");
    gn_pt_text_node(&b, "ba", "BiasAdd", "x,c", TF AS("data_format", "NCHW"));
    gn_pt_text_node(&b, "bn", "FusedBatchNormV3", "xh,c,c,c,c", TF AB("is_training", "false"));
    gn_pt_text_node(&b, "bnc", "FusedBatchNorm", "x,cu,cu,cu,cu", TF AS("data_format", "NCHW"));
    gn_pt_text_node(&b, "bnx", "_FusedBatchNormEx", "xh,c,c,c,c", TF AB("is_training", "false"));
    gn_graph *g = infer_ok(&b);
    expect(g, "ba", 0, "[8,16,7,7]");
    expect(g, "bn", 0, "[8,7,7,16]");
    expect(g, "bn", 1, "[16]");
    expect(g, "bn", 4, "[16]");
    expect(g, "bn", 5, "<unknown>");
    expect(g, "bnc", 0, "[8,16,7,7]");
    expect(g, "bnc", 2, "[16]");
    expect(g, "bnx", 0, "[8,7,7,16]");
    done(g, &b);
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "8,7,7,16");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "16");
    gn_pt_text_ph(&b, "d", "DT_FLOAT", "15");
    gn_pt_text_node(&b, "bn", "FusedBatchNormV3", "x,c,d,c,c", TF);
    infer_fails(&b, "node 'bn' (FusedBatchNormV3): offset has 15 elements, x has 16 channels ([8,7,7,16])");
}

static void test_reshape(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3,4");
    gn_pt_text_ph(&b, "xb", "DT_FLOAT", "-1,3,4");
    gn_pt_text_cst(&b, "s1", "i", NULL, "-1,4");
    gn_pt_text_cst(&b, "s2", "i", NULL, "3,-1");
    gn_pt_text_cst(&b, "s3", "i", NULL, "24");
    gn_pt_text_node(&b, "r1", "Reshape", "x,s1", TF);
    gn_pt_text_node(&b, "r2", "Reshape", "x,s2", TF);
    gn_pt_text_node(&b, "r3", "Reshape", "x,s3", TF);
    gn_pt_text_node(&b, "r4", "Reshape", "xb,s1", TF);
    /* the Shape -> StridedSlice -> Pack -> Reshape idiom */
    gn_pt_text_node(&b, "shape", "Shape", "xb", TF);
    gn_pt_text_cst(&b, "b0", "i", NULL, "0");
    gn_pt_text_cst(&b, "b1", "i", NULL, "1");
    gn_pt_text_cst(&b, "twelve", "i", "", "12");
    gn_pt_text_node(&b, "batch", "StridedSlice", "shape,b0,b1,b1", TI AINT("shrink_axis_mask", "1"));
    gn_pt_text_node(&b, "pack", "Pack", "batch,twelve", TI AINT("N", "2"));
    gn_pt_text_node(&b, "flat", "Reshape", "xb,pack", TF);
    gn_pt_text_cst(&b, "minus1", "i", "", "-1");
    gn_pt_text_node(&b, "pack2", "Pack", "batch,minus1", TI AINT("N", "2"));
    gn_pt_text_node(&b, "flat2", "Reshape", "xb,pack2", TF);
    /* with a known batch the chain folds completely */
    gn_pt_text_node(&b, "shapek", "Shape", "x", TF);
    gn_pt_text_node(&b, "batchk", "StridedSlice", "shapek,b0,b1,b1", TI AINT("shrink_axis_mask", "1"));
    gn_pt_text_node(&b, "packk", "Pack", "batchk,minus1", TI AINT("N", "2"));
    gn_pt_text_node(&b, "flatk", "Reshape", "x,packk", TF);
    gn_pt_text_node(&b, "castk", "Cast", "packk", "attr { key: \"SrcT\" value { type: DT_INT32 } } attr { key: \"DstT\" value { type: DT_INT64 } }");
    gn_pt_text_node(&b, "prod", "Prod", "shapek,b0", TI);
    gn_pt_text_node(&b, "mulk", "Mul", "batchk,twelve", TI);
    gn_graph *g = infer_ok(&b);
    expect(g, "r1", 0, "[6,4]");
    expect(g, "r2", 0, "[3,8]");
    expect(g, "r3", 0, "[24]");
    expect(g, "r4", 0, "[?,4]");
    expect(g, "shape", 0, "[3]");
    expect_val(g, "shape", 0, "?,3,4");
    expect(g, "batch", 0, "[]");
    expect_val(g, "batch", 0, "?");
    expect_val(g, "pack", 0, "?,12");
    expect(g, "flat", 0, "[?,12]");
    expect(g, "flat2", 0, "[?,?]");
    expect_val(g, "batchk", 0, "2");
    expect(g, "flatk", 0, "[2,12]");
    expect_val(g, "castk", 0, "2,-1");
    expect_dtype(g, "castk", 0, TENSORFLOW__DATA_TYPE__DT_INT64);
    expect_val(g, "prod", 0, "24");
    expect_val(g, "mulk", 0, "24");
    done(g, &b);

    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_cst(&b, "s", "i", NULL, "4");
    gn_pt_text_node(&b, "r", "Reshape", "x,s", TF);
    infer_fails(&b, "node 'r' (Reshape): cannot reshape a tensor of 6 elements to [4] (4 elements)");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_cst(&b, "s", "i", NULL, "-1,4");
    gn_pt_text_node(&b, "r", "Reshape", "x,s", TF);
    infer_fails(&b, "node 'r' (Reshape): cannot reshape a tensor of 6 elements to [?,4]");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_cst(&b, "s", "i", NULL, "-1,-1");
    gn_pt_text_node(&b, "r", "Reshape", "x,s", TF);
    infer_fails(&b, "node 'r' (Reshape): only one dimension may be -1, not both 0 and 1");
}

static void test_strided_slice(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "5,6,7,8");
    gn_pt_text_ph(&b, "v", "DT_FLOAT", "5");
    gn_pt_text_ph(&b, "xu", "DT_FLOAT", "-1,6");
    gn_pt_text_cst(&b, "b_a", "i", NULL, "1,0,0");
    gn_pt_text_cst(&b, "e_a", "i", NULL, "3,0,0");
    gn_pt_text_cst(&b, "s_a", "i", NULL, "1,1,2");
    gn_pt_text_node(&b, "ell", "StridedSlice", "x,b_a,e_a,s_a", TF AINT("ellipsis_mask", "2") AINT("begin_mask", "4") AINT("end_mask", "4"));
    gn_pt_text_cst(&b, "b_b", "i", NULL, "0,2");
    gn_pt_text_cst(&b, "e_b", "i", NULL, "0,3");
    gn_pt_text_cst(&b, "s_b", "i", NULL, "1,1");
    gn_pt_text_node(&b, "shrink", "StridedSlice", "x,b_b,e_b,s_b", TF AINT("begin_mask", "1") AINT("end_mask", "1") AINT("shrink_axis_mask", "2"));
    gn_pt_text_cst(&b, "b_c", "i", NULL, "0,0,-1");
    gn_pt_text_cst(&b, "e_c", "i", NULL, "0,0,0");
    gn_pt_text_cst(&b, "s_c", "i", NULL, "1,1,1");
    gn_pt_text_node(&b, "newax", "StridedSlice", "x,b_c,e_c,s_c", TF AINT("new_axis_mask", "1") AINT("ellipsis_mask", "2") AINT("shrink_axis_mask", "4"));
    gn_pt_text_cst(&b, "z", "i", NULL, "0");
    gn_pt_text_cst(&b, "m1", "i", NULL, "-1");
    gn_pt_text_cst(&b, "three", "i", NULL, "3");
    gn_pt_text_node(&b, "rev", "StridedSlice", "v,z,z,m1", TF AINT("begin_mask", "1") AINT("end_mask", "1"));
    gn_pt_text_node(&b, "rev2", "StridedSlice", "v,three,z,m1", TF);
    gn_pt_text_cst(&b, "b_u", "i", NULL, "1");
    gn_pt_text_cst(&b, "e_u", "i", NULL, "3");
    gn_pt_text_cst(&b, "s_u", "i", NULL, "1");
    gn_pt_text_node(&b, "tail", "StridedSlice", "v,m1,z,s_u", TF AINT("end_mask", "1"));
    gn_pt_text_node(&b, "over", "StridedSlice", "v,z,three,s_u", TF);
    gn_pt_text_node(&b, "unk", "StridedSlice", "xu,b_u,e_u,s_u", TF);
    gn_pt_text_node(&b, "unk2", "StridedSlice", "xu,b_u,e_u,s_u", TF AINT("shrink_axis_mask", "1"));
    /* values through a slice of a shape */
    gn_pt_text_node(&b, "shape", "Shape", "x", TF);
    gn_pt_text_cst(&b, "one", "i", NULL, "1");
    gn_pt_text_node(&b, "sl", "StridedSlice", "shape,one,m1,one", TI);
    gn_pt_text_node(&b, "last", "StridedSlice", "shape,m1,z,one", TI AINT("shrink_axis_mask", "1"));
    gn_pt_text_node(&b, "revs", "StridedSlice", "shape,z,z,m1", TI AINT("begin_mask", "1") AINT("end_mask", "1"));
    gn_graph *g = infer_ok(&b);
    expect(g, "ell", 0, "[2,6,7,4]");
    expect(g, "shrink", 0, "[5,7,8]");
    expect(g, "newax", 0, "[1,5,6,7]");
    expect(g, "rev", 0, "[5]");
    expect(g, "rev2", 0, "[3]");
    expect(g, "tail", 0, "[1]");
    expect(g, "over", 0, "[3]");
    expect(g, "unk", 0, "[?,6]");
    expect(g, "unk2", 0, "[6]");
    expect(g, "sl", 0, "[2]");
    expect_val(g, "sl", 0, "6,7");
    expect(g, "last", 0, "[]");
    expect_val(g, "last", 0, "8");
    expect_val(g, "revs", 0, "8,7,6,5");
    done(g, &b);

    gn_pt_text_ph(&b, "x", "DT_FLOAT", "5");
    gn_pt_text_cst(&b, "i", "i", NULL, "7");
    gn_pt_text_cst(&b, "e", "i", NULL, "8");
    gn_pt_text_cst(&b, "s", "i", NULL, "1");
    gn_pt_text_node(&b, "ss", "StridedSlice", "x,i,e,s", TF AINT("shrink_axis_mask", "1"));
    infer_fails(&b, "node 'ss' (StridedSlice): slice index 7 of dimension 0 out of bounds");
}

static void test_concat_pack(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,-1,3");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "2,4,3");
    gn_pt_text_ph(&b, "d", "DT_FLOAT", "-1,4,5");
    gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
    gn_pt_text_ph(&b, "axu", "DT_INT32", "");
    gn_pt_text_cst(&b, "ax1", "i", "", "1");
    gn_pt_text_cst(&b, "ax0", "i", "", "0");
    gn_pt_text_cst(&b, "axm", "i", "", "-1");
    gn_pt_text_node(&b, "cat1", "ConcatV2", "a,c,ax1", TF AINT("N", "2"));
    gn_pt_text_node(&b, "cat0", "ConcatV2", "a,c,ax0", TF AINT("N", "2"));
    gn_pt_text_node(&b, "catm", "ConcatV2", "c,d,axm", TF AINT("N", "2"));
    gn_pt_text_node(&b, "catu", "ConcatV2", "a,u,ax1", TF AINT("N", "2"));
    gn_pt_text_node(&b, "catax", "ConcatV2", "a,c,axu", TF AINT("N", "2"));
    gn_pt_text_node(&b, "catv1", "Concat", "ax0,c,c", TF AINT("N", "2"));
    /* values */
    gn_pt_text_node(&b, "sh", "Shape", "a", TF);
    gn_pt_text_cst(&b, "v", "i", NULL, "7,8");
    gn_pt_text_node(&b, "catv", "ConcatV2", "sh,v,ax0", TI AINT("N", "2"));
    gn_pt_text_node(&b, "pk", "Pack", "a,c", TF AINT("N", "2") AINT("axis", "1"));
    gn_pt_text_node(&b, "unp", "Unpack", "c", TF AINT("num", "4") AINT("axis", "1"));
    gn_pt_text_node(&b, "unv", "Unpack", "v", TI AINT("num", "2"));
    gn_graph *g = infer_ok(&b);
    expect(g, "cat1", 0, "[2,?,3]");
    expect(g, "cat0", 0, "[4,4,3]");
    expect(g, "catm", 0, "[2,4,8]");
    expect(g, "catu", 0, "[2,?,3]");
    expect(g, "catax", 0, "[?,?,?]");
    expect(g, "catv1", 0, "[4,4,3]");
    expect(g, "catv", 0, "[5]");
    expect_val(g, "catv", 0, "2,?,3,7,8");
    expect(g, "pk", 0, "[2,2,4,3]");
    expect(g, "unp", 3, "[2,3]");
    expect_val(g, "unv", 1, "8");
    done(g, &b);

    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "2,3,4");
    gn_pt_text_cst(&b, "ax", "i", "", "0");
    gn_pt_text_node(&b, "cat", "ConcatV2", "a,c,ax", TF AINT("N", "2"));
    infer_fails(&b, "node 'cat' (ConcatV2): inputs have different ranks: [2,3] (input 0) and [2,3,4] (input 1)");
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "2,4");
    gn_pt_text_cst(&b, "ax", "i", "", "0");
    gn_pt_text_node(&b, "cat", "ConcatV2", "a,c,ax", TF AINT("N", "2"));
    infer_fails(&b, "node 'cat' (ConcatV2): dimension 1 of inputs differs: [2,3] (input 0) and [2,4] (input 1)");
    gn_pt_text_ph(&b, "a", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "c", "DT_FLOAT", "2,4");
    gn_pt_text_node(&b, "pk", "Pack", "a,c", TF AINT("N", "2"));
    infer_fails(&b, "node 'pk' (Pack): shapes of inputs differ: [2,3] (input 0) and [2,4] (input 1)");
}

static void test_reduce_and_misc(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3,4");
    gn_pt_text_ph(&b, "img", "DT_FLOAT", "1,8,8,12");
    gn_pt_text_ph(&b, "axu", "DT_INT32", "1");
    gn_pt_text_ph(&b, "idx", "DT_INT32", "5,6");
    gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
    gn_pt_text_cst(&b, "a1", "i", NULL, "1");
    gn_pt_text_cst(&b, "am1", "i", "", "-1");
    gn_pt_text_cst(&b, "a02", "i", NULL, "0,2");
    gn_pt_text_cst(&b, "empty", "i", NULL, "");
    gn_pt_text_node(&b, "mean_k", "Mean", "x,a1", TF AB("keep_dims", "true"));
    gn_pt_text_node(&b, "mean", "Mean", "x,a1", TF);
    gn_pt_text_node(&b, "sum", "Sum", "x,am1", TF);
    gn_pt_text_node(&b, "max", "Max", "x,a02", TF AB("keep_dims", "true"));
    gn_pt_text_node(&b, "all", "Sum", "x,empty", TF);
    gn_pt_text_node(&b, "sum_u", "Sum", "x,axu", TF AB("keep_dims", "true"));
    gn_pt_text_node(&b, "sum_uu", "Sum", "x,axu", TF);
    gn_pt_text_node(&b, "argmax", "ArgMax", "x,a1", TF);
    gn_pt_text_node(&b, "relu_u", "Relu", "u", TF);
    gn_pt_text_node(&b, "soft", "Softmax", "x", TF);
    gn_pt_text_node(&b, "sq", "Squeeze", "mean_k", TF);
    gn_pt_text_node(&b, "sq1", "Squeeze", "mean_k", TF AL("squeeze_dims", "i: 1"));
    gn_pt_text_node(&b, "ed", "ExpandDims", "x,am1", TF);
    gn_pt_text_cst(&b, "perm", "i", NULL, "2,0,1");
    gn_pt_text_node(&b, "tr", "Transpose", "x,perm", TF);
    gn_pt_text_cst(&b, "three", "i", "", "3");
    gn_pt_text_node(&b, "split", "Split", "a1,x", TF AINT("num_split", "3"));
    gn_pt_text_cst(&b, "sizes", "i", NULL, "1,-1");
    gn_pt_text_node(&b, "splitv", "SplitV", "x,sizes,am1", TF AINT("num_split", "2"));
    gn_pt_text_cst(&b, "sb", "i", NULL, "0,1,1");
    gn_pt_text_cst(&b, "ssz", "i", NULL, "-1,2,-1");
    gn_pt_text_node(&b, "slice", "Slice", "x,sb,ssz", TF);
    gn_pt_text_cst(&b, "mult", "i", NULL, "2,1,3");
    gn_pt_text_node(&b, "tile", "Tile", "x,mult", TF);
    gn_pt_text_cst(&b, "pads", "i", NULL, "1,1,0,0,2,3");
    gn_pt_text_cst(&b, "pshape", "i", NULL, "3,2");
    gn_pt_text_node(&b, "pads2", "Reshape", "pads,pshape", TI);
    gn_pt_text_node(&b, "pad", "Pad", "x,pads2", TF);
    gn_pt_text_cst(&b, "zero", "i", "", "0");
    gn_pt_text_node(&b, "gather", "GatherV2", "x,idx,a1", TF);
    gn_pt_text_cst(&b, "gaxis", "i", "", "1");
    gn_pt_text_node(&b, "gather1", "GatherV2", "x,idx,gaxis", TF);
    gn_pt_text_node(&b, "oh", "OneHot", "idx,three,zero,zero", TF);
    gn_pt_text_node(&b, "topk", "TopKV2", "x,three", TF);
    gn_pt_text_cst(&b, "hw", "i", NULL, "16,20");
    gn_pt_text_node(&b, "rs", "ResizeBilinear", "img,hw", TF);
    gn_pt_text_node(&b, "s2d", "SpaceToDepth", "img", TF AINT("block_size", "2"));
    gn_pt_text_node(&b, "d2s", "DepthToSpace", "img", TF AINT("block_size", "2"));
    gn_pt_text_cst(&b, "dims", "i", NULL, "4,5");
    gn_pt_text_node(&b, "fill", "Fill", "dims,zero", TF);
    gn_pt_text_cst(&b, "lim", "i", "", "10");
    gn_pt_text_cst(&b, "dl", "i", "", "3");
    gn_pt_text_node(&b, "range", "Range", "zero,lim,dl", TI);
    gn_pt_text_node(&b, "where", "Where", "x", TF);
    gn_pt_text_cst(&b, "bt", "i", NULL, "7,2,3,4");
    gn_pt_text_node(&b, "bto", "BroadcastTo", "x,bt", TF);
    gn_pt_text_cst(&b, "s0", "i", NULL, "2,1");
    gn_pt_text_cst(&b, "s1", "i", NULL, "5,1,3");
    gn_pt_text_node(&b, "bargs", "BroadcastArgs", "s0,s1", TI);
    gn_pt_text_node(&b, "size", "Size", "x", TF);
    gn_pt_text_node(&b, "rank", "Rank", "x", TF);
    gn_pt_text_node(&b, "cs", "Cumsum", "x,zero", TF);
    gn_pt_text_node(&b, "zl", "ZerosLike", "x", TF);
    gn_pt_text_node(&b, "addn", "AddN", "x,zl,u", TF AINT("N", "3"));
    gn_pt_text_ph(&b, "m46", "DT_FLOAT", "4,6");
    gn_pt_text_node(&b, "ein1", "Einsum", "x,m46", TF AS("equation", "abc,cd->abd"));
    gn_pt_text_ph(&b, "q", "DT_FLOAT", "2,7,4,8");
    gn_pt_text_ph(&b, "k", "DT_FLOAT", "2,9,4,8");
    gn_pt_text_node(&b, "ein2", "Einsum", "q,k", TF AS("equation", "BTNH,BFNH->BNFT"));
    gn_pt_text_ph(&b, "e1", "DT_FLOAT", "3,1,2,4");
    gn_pt_text_ph(&b, "e2", "DT_FLOAT", "5,4,6");
    gn_pt_text_node(&b, "ein3", "Einsum", "e1,e2", TF AS("equation", "...ij,...jk->...ik"));
    gn_pt_text_node(&b, "ein4", "Einsum", "q", TF AS("equation", "abcd"));
    gn_pt_text_node(&b, "ein5", "Einsum", "x,x", TF AS("equation", "abc,abd"));
    gn_graph *g = infer_ok(&b);
    expect(g, "mean_k", 0, "[2,1,4]");
    expect(g, "mean", 0, "[2,4]");
    expect(g, "sum", 0, "[2,3]");
    expect(g, "max", 0, "[1,3,1]");
    expect(g, "all", 0, "[2,3,4]");
    expect(g, "sum_u", 0, "[?,?,?]");
    expect(g, "sum_uu", 0, "<unknown>");
    expect(g, "argmax", 0, "[2,4]");
    expect_dtype(g, "argmax", 0, TENSORFLOW__DATA_TYPE__DT_INT64);
    expect(g, "relu_u", 0, "<unknown>");
    expect(g, "soft", 0, "[2,3,4]");
    expect(g, "sq", 0, "[2,4]");
    expect(g, "sq1", 0, "[2,4]");
    expect(g, "ed", 0, "[2,3,4,1]");
    expect(g, "tr", 0, "[4,2,3]");
    expect(g, "split", 0, "[2,1,4]");
    expect(g, "split", 2, "[2,1,4]");
    expect(g, "splitv", 0, "[2,3,1]");
    expect(g, "splitv", 1, "[2,3,3]");
    expect(g, "slice", 0, "[2,2,3]");
    expect(g, "tile", 0, "[4,3,12]");
    expect(g, "pad", 0, "[4,3,9]");
    expect(g, "gather", 0, "[2,5,6,4]");
    expect(g, "gather1", 0, "[2,5,6,4]");
    expect(g, "oh", 0, "[5,6,3]");
    expect(g, "topk", 0, "[2,3,3]");
    expect(g, "topk", 1, "[2,3,3]");
    expect(g, "rs", 0, "[1,16,20,12]");
    expect(g, "s2d", 0, "[1,4,4,48]");
    expect(g, "d2s", 0, "[1,16,16,3]");
    expect(g, "fill", 0, "[4,5]");
    expect(g, "range", 0, "[4]");
    expect_val(g, "range", 0, "0,3,6,9");
    expect(g, "where", 0, "[?,3]");
    expect(g, "bto", 0, "[7,2,3,4]");
    expect_val(g, "bargs", 0, "5,2,3");
    expect_val(g, "size", 0, "24");
    expect_val(g, "rank", 0, "3");
    expect(g, "cs", 0, "[2,3,4]");
    expect(g, "addn", 0, "[2,3,4]");
    expect(g, "ein1", 0, "[2,3,6]");
    expect(g, "ein2", 0, "[2,4,9,7]");
    expect(g, "ein3", 0, "[3,5,2,6]");
    expect(g, "ein4", 0, "[2,7,4,8]");
    expect(g, "ein5", 0, "[4,4]");
    done(g, &b);

    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_cst(&b, "a", "i", NULL, "2");
    gn_pt_text_node(&b, "m", "Mean", "x,a", TF);
    infer_fails(&b, "node 'm' (Mean): reduction axis 2 out of range for rank 2");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,7");
    gn_pt_text_cst(&b, "ax", "i", "", "1");
    gn_pt_text_node(&b, "sp", "Split", "ax,x", TF AINT("num_split", "2"));
    infer_fails(&b, "node 'sp' (Split): dimension 1 (size 7) is not divisible by num_split 2");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "y", "DT_FLOAT", "2,4");
    gn_pt_text_node(&b, "s", "AddN", "x,y", TF AINT("N", "2"));
    infer_fails(&b, "node 's' (AddN): inputs have incompatible shapes: [2,3] (input 0) and [2,4] (input 1)");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "y", "DT_FLOAT", "4,5");
    gn_pt_text_node(&b, "e", "Einsum", "x,y", TF AS("equation", "ab,bc->ac"));
    infer_fails(&b, "node 'e' (Einsum): equation 'ab,bc->ac': label 'b' has dimensions 3 and 4");
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_cst(&b, "p", "i", NULL, "0,0");
    gn_pt_text_node(&b, "t", "Transpose", "x,p", TF);
    infer_fails(&b, "node 't' (Transpose): perm [0,0] is not a permutation");
}

static void test_unknown_and_sources(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
    gn_pt_text_ph(&b, "n", "DT_FLOAT", NULL);
    gn_pt_text_ph(&b, "s", "DT_FLOAT", "");
    gn_pt_text_node(&b, "r", "Relu", "u", TF);
    gn_pt_text_node(&b, "sh", "Shape", "u", TF);
    gn_pt_text_node(&b, "sz", "Size", "u", TF);
    gn_pt_text_node(&b, "custom", "SomeCustomOp", "u,s", "");
    gn_pt_text_node(&b, "c2", "Relu", "custom:1", TF);
    gn_pt_text_node(&b, "id", "Identity", "n", TF);
    gn_pt_text_node(&b, "noop", "NoOp", NULL, NULL);
    gn_pt_text_add(&b, "node { name: \"pwd\" op: \"PlaceholderWithDefault\" input: \"s\" "
            "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { } } } }\n");
    gn_pt_text_add(&b, "node { name: \"hinted\" op: \"SomeOtherOp\" input: \"u\" attr { key: \"_output_shapes\" value { list { "
            "shape { dim { size: 3 } dim { size: -1 } } shape { unknown_rank: true } } } } }\n");
    gn_pt_text_add(&b, "node { name: \"hint2\" op: \"Relu\" input: \"u\" " TF
            "attr { key: \"_output_shapes\" value { list { shape { dim { size: 7 } } } } } }\n");
    gn_pt_text_add(&b, "node { name: \"var\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
            "attr { key: \"shape\" value { shape { dim { size: 4 } dim { size: 5 } } } } }\n");
    gn_pt_text_node(&b, "read", "ReadVariableOp", "var", "attr { key: \"dtype\" value { type: DT_FLOAT } }");
    gn_pt_text_node(&b, "var_id", "Identity", "var", "attr { key: \"T\" value { type: DT_RESOURCE } }");
    gn_pt_text_node(&b, "read2", "ReadVariableOp", "var_id", "attr { key: \"dtype\" value { type: DT_FLOAT } }");
    gn_graph *g = infer_ok(&b);
    expect(g, "u", 0, "<unknown>");
    expect(g, "n", 0, "<unknown>");
    expect(g, "s", 0, "[]");
    expect(g, "r", 0, "<unknown>");
    expect(g, "sh", 0, "[?]");
    expect_val(g, "sh", 0, "<none>");
    expect_val(g, "sz", 0, "<none>");
    expect(g, "custom", 1, "<unknown>");
    expect_dtype(g, "custom", 1, 0);
    expect(g, "c2", 0, "<unknown>");
    expect(g, "id", 0, "<unknown>");
    expect_dtype(g, "id", 0, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_int_equal(gn__shape_num_outputs(g, gn__graph_find(g, "noop")), 0);
    expect(g, "pwd", 0, "[]");
    expect(g, "hinted", 0, "[3,?]");
    expect(g, "hinted", 1, "<unknown>");
    expect(g, "hint2", 0, "[7]");
    expect(g, "var", 0, "[]");
    expect_dtype(g, "var", 0, TENSORFLOW__DATA_TYPE__DT_RESOURCE);
    expect(g, "read", 0, "[4,5]");
    expect(g, "read2", 0, "[4,5]");
    /* the public accessors see the same */
    int64_t dims[4];
    size_t i_read = gn__graph_find(g, "read");
    assert_int_equal(gn_graph_node_output_shape(g, i_read, 0, dims, 4), 2);
    assert_int_equal(dims[0], 4);
    assert_int_equal(dims[1], 5);
    done(g, &b);

    /* int64 element count overflow */
    gn_pt_text_ph(&b, "big", "DT_FLOAT", "1099511627776,1099511627776");
    infer_fails(&b, "node 'big' (Placeholder): output 0: shape [1099511627776,1099511627776] has more elements than int64 can count");
}

/* A v1 while loop: x (the loop variable) grows along axis 0 each iteration,
 * i counts; y keeps its shape. */
static void loop_graph(gn_pt_text *b, const char *x_shape, int reshape)
{
    gn_pt_text_ph(b, "x", "DT_FLOAT", x_shape);
    gn_pt_text_ph(b, "y", "DT_FLOAT", "2,3");
    gn_pt_text_cst(b, "zero", "i", "", "0");
    gn_pt_text_cst(b, "ten", "i", "", "10");
    gn_pt_text_cst(b, "one", "i", "", "1");
    const char *fr = "attr { key: \"frame_name\" value { s: \"loop\" } } ";
    char attrs[512];
    snprintf(attrs, sizeof attrs, "%s%s", TF, fr);
    gn_pt_text_node(b, "enter_x", "Enter", "x", attrs);
    gn_pt_text_node(b, "enter_y", "Enter", "y", attrs);
    snprintf(attrs, sizeof attrs, "%s%s", TI, fr);
    gn_pt_text_node(b, "enter_i", "Enter", "zero", attrs);
    gn_pt_text_node(b, "merge_x", "Merge", "enter_x,next_x", TF AINT("N", "2"));
    gn_pt_text_node(b, "merge_y", "Merge", "enter_y,next_y", TF AINT("N", "2"));
    gn_pt_text_node(b, "merge_i", "Merge", "enter_i,next_i", TI AINT("N", "2"));
    gn_pt_text_node(b, "less", "Less", "merge_i,ten", TI);
    gn_pt_text_node(b, "cond", "LoopCond", "less", NULL);
    gn_pt_text_node(b, "sw_x", "Switch", "merge_x,cond", TF);
    gn_pt_text_node(b, "sw_y", "Switch", "merge_y,cond", TF);
    gn_pt_text_node(b, "sw_i", "Switch", "merge_i,cond", TI);
    gn_pt_text_node(b, "id_x", "Identity", "sw_x:1", TF);
    gn_pt_text_node(b, "id_y", "Identity", "sw_y:1", TF);
    gn_pt_text_node(b, "id_i", "Identity", "sw_i:1", TI);
    gn_pt_text_node(b, "cat", "ConcatV2", "id_x,id_x,zero", TF AINT("N", "2"));
    gn_pt_text_node(b, "add_y", "AddV2", "id_y,id_y", TF);
    gn_pt_text_node(b, "add_i", "AddV2", "id_i,one", TI);
    if (reshape) {
        /* 1: wrong only for the first iteration's shape; 2: wrong on every one */
        gn_pt_text_cst(b, "four", "i", NULL, "4");
        gn_pt_text_node(b, "rs", "Reshape", reshape == 1 ? "id_x,four" : "id_y,four", TF);
    }
    gn_pt_text_node(b, "next_x", "NextIteration", "cat", TF);
    gn_pt_text_node(b, "next_y", "NextIteration", "add_y", TF);
    gn_pt_text_node(b, "next_i", "NextIteration", "add_i", TI);
    gn_pt_text_node(b, "exit_x", "Exit", "sw_x", TF);
    gn_pt_text_node(b, "exit_y", "Exit", "sw_y", TF);
    gn_pt_text_node(b, "exit_i", "Exit", "sw_i", TI);
}

static void test_v1_loop(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    loop_graph(&b, "2,3", 0);
    gn_graph *g = infer_ok(&b);
    expect(g, "merge_x", 0, "[?,3]");
    expect(g, "merge_x", 1, "[]");
    expect(g, "cat", 0, "[?,3]");
    expect(g, "exit_x", 0, "[?,3]");
    expect(g, "merge_y", 0, "[2,3]");
    expect(g, "exit_y", 0, "[2,3]");
    expect(g, "exit_i", 0, "[]");
    expect_val(g, "merge_i", 0, "<none>");
    expect_val(g, "enter_i", 0, "0");
    expect_dtype(g, "less", 0, TENSORFLOW__DATA_TYPE__DT_BOOL);
    done(g, &b);

    /* an error that only the first visit sees ([2,3] -> [4]) is not reported */
    loop_graph(&b, "2,3", 1);
    g = infer_ok(&b);
    expect(g, "rs", 0, "[4]");
    expect(g, "exit_x", 0, "[?,3]");
    done(g, &b);

    /* one that holds on every iteration is */
    loop_graph(&b, "2,3", 2);
    infer_fails(&b, "node 'rs' (Reshape): cannot reshape a tensor of 6 elements to [4] (4 elements)");
}

static const char *fn_lib =
    "library {\n"
    "  function {\n"
    "    signature { name: \"double\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"c\" op: \"ConcatV2\" input: \"x\" input: \"x\" input: \"ax:output:0\" " TF AINT("N", "2")
    " attr { key: \"Tidx\" value { type: DT_INT32 } } }\n"
    "    node_def { name: \"ax\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" "
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "    ret { key: \"y\" value: \"c:output:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"same\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " TF " }\n"
    "    ret { key: \"y\" value: \"r:activations:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"cond\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"b\" type: DT_BOOL } }\n"
    "    node_def { name: \"k\" op: \"Const\" attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"value\" "
    "value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\n"
    "    ret { key: \"b\" value: \"k:output:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"entry\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " TF " }\n"
    "    ret { key: \"y\" value: \"r:activations:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"ext\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " TF " }\n"
    "    ret { key: \"y\" value: \"r:activations:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"rec\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"again\" op: \"rec\" input: \"x\" }\n"
    "    ret { key: \"y\" value: \"again:y:0\" }\n"
    "  }\n"
    "}\n";

static void test_functions(void **state)
{
    (void)state;
    gn_pt_text b = {0};
    gn_pt_text_ph(&b, "x", "DT_FLOAT", "2,3");
    gn_pt_text_ph(&b, "p", "DT_BOOL", "");
    const char *types = "attr { key: \"Tin\" value { list { type: DT_FLOAT } } } "
                        "attr { key: \"Tout\" value { list { type: DT_FLOAT } } } ";
    char attrs[1024];
    snprintf(attrs, sizeof attrs, "%sattr { key: \"f\" value { func { name: \"double\" } } }", types);
    gn_pt_text_node(&b, "call", "PartitionedCall", "x", attrs);
    snprintf(attrs, sizeof attrs, "%sattr { key: \"f\" value { func { name: \"same\" } } }", types);
    gn_pt_text_node(&b, "scall", "StatefulPartitionedCall", "x", attrs);
    gn_pt_text_node(&b, "direct", "double", "x", NULL);
    gn_pt_text_node(&b, "nested", "double", "direct", NULL);
    snprintf(attrs, sizeof attrs,
             "%sattr { key: \"then_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"else_branch\" value { func { name: \"double\" } } } "
             "attr { key: \"Tcond\" value { type: DT_BOOL } }",
             types);
    gn_pt_text_node(&b, "if", "StatelessIf", "p,x", attrs);
    snprintf(attrs, sizeof attrs,
             "%sattr { key: \"then_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"else_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"Tcond\" value { type: DT_BOOL } }",
             types);
    gn_pt_text_node(&b, "if_same", "If", "p,x", attrs);
    gn_pt_text_node(&b, "while", "While", "x",
       "attr { key: \"T\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"cond\" value { func { name: \"cond\" } } } "
       "attr { key: \"body\" value { func { name: \"double\" } } }");
    gn_pt_text_node(&b, "while_same", "StatelessWhile", "x",
       "attr { key: \"T\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"cond\" value { func { name: \"cond\" } } } "
       "attr { key: \"body\" value { func { name: \"same\" } } }");
    gn_pt_text_node(&b, "recursive", "rec", "x", NULL);
    gn_pt_text_node(&b, "ext_call", "ext", "x", NULL);
    gn_pt_text_node(&b, "dataset", "SomeDatasetOp", "x", "attr { key: \"f\" value { func { name: \"ext\" } } }");
    gn_pt_text_add(&b, "%s", fn_lib);
    gn_graph *g = infer_ok(&b);
    expect(g, "call", 0, "[4,3]");
    expect_dtype(g, "call", 0, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    expect(g, "scall", 0, "[2,3]");
    expect(g, "direct", 0, "[4,3]");
    expect(g, "nested", 0, "[8,3]");
    expect(g, "if", 0, "[?,3]");
    expect(g, "if_same", 0, "[2,3]");
    expect(g, "while", 0, "[?,3]");
    expect(g, "while_same", 0, "[2,3]");
    expect(g, "recursive", 0, "<unknown>");
    expect_dtype(g, "recursive", 0, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    expect(g, "ext_call", 0, "[2,3]");
    /* bodies are inferred on their own too: with the join of their call
     * sites' arguments when every use of the function is a call we see */
    gn__function *f = gn__graph_find_function(g, "double");
    assert_non_null(f);
    assert_non_null(f->body->shapes.ptr);
    expect(f->body, "c", 0, "[?,3]");
    expect(f->body, "ax", 0, "[]");
    expect(gn__graph_find_function(g, "same")->body, "r", 0, "[2,3]");
    /* else with what the signature says */
    expect(gn__graph_find_function(g, "entry")->body, "r", 0, "<unknown>");
    expect(gn__graph_find_function(g, "ext")->body, "r", 0, "<unknown>");
    expect(gn__graph_find_function(g, "rec")->body, "again", 0, "<unknown>");
    /* once a caller changes, what was derived from its arguments is gone */
    gn_id x = gn__graph_find(g, "x");
    assert_int_equal(gn__node_set_attr(g, x, "dtype", gn__node_attr(g, x, "dtype")), GN_OK);
    assert_null(g->shapes.ptr);
    assert_null(gn__shape_of(f->body, gn__graph_find(f->body, "c"), 0));
    assert_non_null(gn__shape_of(gn__graph_find_function(g, "entry")->body, 0, 0));
    assert_int_equal(gn__graph_infer_shapes(g), GN_OK);
    expect(f->body, "c", 0, "[?,3]");
    done(g, &b);
}

static void test_corpus_models(void **state)
{
    (void)state;
    struct {
        const char *path, *node, *shape;
    } cases[] = {
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "labels_softmax", "[1,12]"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "MobileNet/conv_1/Conv2D", "[1,25,5,64]"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "Mfcc", "[1,49,10]"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", "labels_softmax", "[1,12]"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", "labels_softmax", "[1,12]"},
        {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", "labels_softmax", "[1,12]"},
        {"onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", "output", "[?,10]"},
        {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt",
         "while/Exit_1", "[?,2]"},
        {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt",
         "while/while/Exit_1", "[?,1,?]"},
        {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt",
         "while/Exit_1", "[?,1,1]"},
    };
    char path[2048];
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!gn_test_corpus(cases[i].path, path, sizeof path)) continue;
        gn_graph *g = NULL;
        assert_int_equal(gn_graph_load(path, NULL, &g), GN_OK);
        gn_status s = gn__graph_infer_shapes(g);
        if (s != GN_OK) fprintf(stderr, "%s: %s\n", cases[i].path, gn_graph_errmsg(g));
        assert_int_equal(s, GN_OK);
        expect(g, cases[i].node, 0, cases[i].shape);
        gn_graph_free(g);
        ran++;
    }
    if (!ran) skip();
}

/* Every graph of the corpus infers without error, and where a node carries
 * `_output_shapes` (TensorFlow's own inference), ours never contradicts it
 * even with the hints removed first. */
static void strip_hints(gn_graph *g, const Tensorflow__AttrValue ***saved, gn_id **ids, size_t *n, size_t *cap)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i)) continue;
        const Tensorflow__AttrValue *h = gn__node_attr(g, i, "_output_shapes");
        if (!h) continue;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 256;
            *saved = realloc(*saved, *cap * sizeof **saved);
            *ids = realloc(*ids, *cap * sizeof **ids);
        }
        (*saved)[*n] = h;
        (*ids)[*n] = i;
        (*n)++;
        gn__node_remove_attr(g, i, "_output_shapes");
    }
}

static void check_against_hints(gn_graph *g, const Tensorflow__AttrValue **saved, gn_id *ids, size_t n,
                                 const char *file)
{
    for (size_t j = 0; j < n; j++) {
        const Tensorflow__AttrValue *h = saved[j];
        if (h->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !h->list) continue;
        for (size_t k = 0; k < h->list->n_shape; k++) {
            const gn__tinfo *t = gn__shape_of(g, ids[j], (uint32_t)k);
            if (!t) continue;
            gn__arena a;
            gn__arena_init(&a, 0);
            gn__shape hs;
            assert_true(gn__shape_from_proto(h->list->shape[k], &a, &hs));
            bool bad = false;
            if (hs.rank >= 0 && t->shape.rank >= 0) {
                if (hs.rank != t->shape.rank) bad = true;
                for (int32_t d = 0; !bad && d < hs.rank; d++)
                    bad = hs.dims[d] >= 0 && t->shape.dims[d] >= 0 && hs.dims[d] != t->shape.dims[d];
            }
            if (bad) {
                char s1[256], s2[256];
                fprintf(stderr, "%s: node '%s' (%s) output %zu: ours %s, TensorFlow's %s\n", file,
                        gn__node_name(g, ids[j]), gn__node_op(g, ids[j]), k, gn__shape_str(&t->shape, s1, 256),
                        gn__shape_str(&hs, s2, 256));
            }
            assert_false(bad);
            gn__arena_free(&a);
        }
    }
}

static void test_corpus_all(void **state)
{
    (void)state;
    char list[2048];
    if (!gn_test_corpus("", list, sizeof list)) skip();
    char *out = NULL;
    int rc = gn_test_sh(&out, "cd '%s' && find . \\( -name '*.pb' -o -name '*.pbtxt' -o -name '*.pbtxt.gz' \\) "
                              "! -path '*/variables/*' ! -name fingerprint.pb ! -name keras_metadata.pb "
                              "! -name tfhub_module.pb | sort",
                        list);
    assert_int_equal(rc, 0);
    int n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", list, line);
        /* a SavedModel is loaded through its directory */
        const char *base = strrchr(path, '/');
        if (base && (strcmp(base, "/saved_model.pb") == 0 || strcmp(base, "/saved_model.pbtxt") == 0))
            *strrchr(path, '/') = '\0';
        gn_graph *g = NULL;
        gn_load_options o;
        gn_load_options_init(&o);
        o.validate = 0;
        if (gn_graph_load(path, &o, &g) != GN_OK) {
            /* loading is another suite's business */
            gn_graph_free(g);
            continue;
        }
        const Tensorflow__AttrValue **saved = NULL;
        gn_id *ids = NULL;
        size_t ns = 0, cap = 0;
        /* top level only: a body's hints are checked through its own table */
        strip_hints(g, &saved, &ids, &ns, &cap);
        gn_status s = gn__graph_infer_shapes(g);
        if (s != GN_OK) fprintf(stderr, "%s: %s\n", line, gn_graph_errmsg(g));
        assert_int_equal(s, GN_OK);
        check_against_hints(g, saved, ids, ns, line);
        for (uint32_t f = 0; f < g->n_fns; f++) {
            gn_graph *body = g->fns[f].body;
            size_t nb = 0, capb = 0;
            const Tensorflow__AttrValue **sb = NULL;
            gn_id *ib = NULL;
            for (gn_id i = 0; i < body->n_nodes; i++) {
                const Tensorflow__AttrValue *h = gn__node_live(body, i) ? gn__node_attr(body, i, "_output_shapes") : NULL;
                if (!h) continue;
                if (nb == capb) {
                    capb = capb ? capb * 2 : 64;
                    sb = realloc(sb, capb * sizeof *sb);
                    ib = realloc(ib, capb * sizeof *ib);
                }
                sb[nb] = h;
                ib[nb++] = i;
            }
            check_against_hints(body, sb, ib, nb, line);
            free(sb);
            free(ib);
        }
        free(saved);
        free(ids);
        gn_graph_free(g);
        n++;
    }
    free(out);
    assert_true(n > 10);
}

/* A chain far deeper than any recursion could take, and wide enough to time. */
static void test_large_graph(void **state)
{
    (void)state;
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    g->lib = g;
    const uint32_t N = 1000000;
    gn_id prev;
    assert_int_equal(gn__node_add(g, "x", "Placeholder", &prev), GN_OK);
    Tensorflow__AttrValue *dt = gn__graph_value_alloc(g, sizeof *dt);
    Tensorflow__AttrValue *sh = gn__graph_value_alloc(g, sizeof *sh);
    Tensorflow__TensorShapeProto *sp = gn__graph_value_alloc(g, sizeof *sp);
    Tensorflow__TensorShapeProto__Dim *dd = gn__graph_value_alloc(g, 2 * sizeof *dd);
    Tensorflow__TensorShapeProto__Dim **dp = gn__graph_value_alloc(g, 2 * sizeof *dp);
    assert_true(dt && sh && sp && dd && dp);
    tensorflow__attr_value__init(dt);
    dt->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    dt->type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    tensorflow__tensor_shape_proto__init(sp);
    for (int i = 0; i < 2; i++) {
        tensorflow__tensor_shape_proto__dim__init(&dd[i]);
        dd[i].size = i ? 16 : 8;
        dp[i] = &dd[i];
    }
    sp->n_dim = 2;
    sp->dim = dp;
    tensorflow__attr_value__init(sh);
    sh->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    sh->shape = sp;
    assert_int_equal(gn__node_set_attr(g, prev, "dtype", dt), GN_OK);
    assert_int_equal(gn__node_set_attr(g, prev, "shape", sh), GN_OK);
    static const char *ops[] = {"Relu", "AddV2", "Identity", "Tanh"};
    char name[32];
    for (uint32_t i = 1; i < N; i++) {
        snprintf(name, sizeof name, "n%u", i);
        gn_id id;
        const char *op = ops[i % 4];
        assert_int_equal(gn__node_add(g, name, op, &id), GN_OK);
        assert_int_equal(gn__node_add_input(g, id, (gn__edge){prev, 0}), GN_OK);
        if (i % 4 == 1) assert_int_equal(gn__node_add_input(g, id, (gn__edge){prev, 0}), GN_OK);
        assert_int_equal(gn__node_set_attr(g, id, "T", dt), GN_OK);
        prev = id;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(gn__graph_infer_shapes(g), GN_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    fprintf(stderr, "[ info ] shape inference of %u nodes: %.3f s\n", N, secs);
    snprintf(name, sizeof name, "n%u", N - 1);
    expect(g, name, 0, "[8,16]");
    /* generous: sanitizer builds are several times slower */
    assert_true(secs < 10.0);
    /* a mutation drops the table */
    assert_int_equal(gn__node_remove_attr(g, prev, "T"), GN_OK);
    assert_null(g->shapes.ptr);
    gn_graph_free(g);
}

/* Every shape function, fed odd inputs and odd attrs, answers OK or a
 * GN_ERR_GRAPH naming the node, and never reads or writes out of bounds (run
 * this under ASan/UBSan). */
static void test_robustness(void **state)
{
    (void)state;
    static const char *pool[] = {"u", "s", "v", "m", "t4", "ci", "cneg", "cbig", "cz", "c4", "c8", "b5"};
    static const char *attr_sets[] = {
        "",
        TF AINT("N", "2") AINT("num_split", "3") AINT("num", "2") AINT("axis", "-9") AB("keep_dims", "true")
            AL("strides", "i: 0") AL("ksize", "i: 1 i: 0") AINT("block_size", "0") AS("padding", "SAME")
                AS("equation", "ab,bc->ac") AINT("shrink_axis_mask", "-1") AINT("ellipsis_mask", "3"),
        TF AS("data_format", "NCHW") AS("padding", "EXPLICIT") AL("explicit_paddings", "i: -1 i: 2")
            AL("strides", "i: 1 i: 2 i: 2 i: 1") AL("ksize", "i: 1 i: 3 i: 3 i: 1") AINT("block_size", "2")
                AINT("new_axis_mask", "7") AINT("begin_mask", "5") AINT("end_mask", "2") AS("equation", "...a,...->a")
                    AL("squeeze_dims", "i: 7") AINT("batch_dims", "-1") AINT("k", "100") AINT("depth", "3")
                        AINT("dct_coefficient_count", "-4") AINT("window_size", "7") AINT("stride", "0"),
        TF AS("padding", "VALID") AL("dilations", "i: 1 i: 9223372036854775807 i: 1 i: 1")
            AL("strides", "i: 1 i: 1 i: 1 i: 1") AS("equation", "a..b,c") AINT("axis", "1") AB("transpose_a", "true")
                AB("adj_y", "true") AINT("desired_samples", "5") AINT("num_elements", "3"),
    };
    uint32_t n_rows = gn__op_fns_count();
    int runs = 0;
    for (uint32_t row = 0, i = 0; row < n_rows; row++) {
        if (!gn__op_fns_at(row)->shape) continue;   /* i: the ops with a shape function */
        const char *op = gn__op_fns_at(row)->name;
        for (uint32_t cfg = 0; cfg < 16; cfg++) {
            gn_pt_text b = {0};
            gn_pt_text_ph(&b, "u", "DT_FLOAT", "?");
            gn_pt_text_ph(&b, "s", "DT_FLOAT", "");
            gn_pt_text_ph(&b, "v", "DT_FLOAT", "3");
            gn_pt_text_ph(&b, "m", "DT_FLOAT", "2,3");
            gn_pt_text_ph(&b, "t4", "DT_FLOAT", "1,4,4,2");
            gn_pt_text_ph(&b, "b5", "DT_FLOAT", "-1,0,5");
            gn_pt_text_cst(&b, "ci", "i", NULL, "2,-1");
            gn_pt_text_cst(&b, "cneg", "i", "", "-7");
            gn_pt_text_add(&b, "node { name: \"cbig\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT64 } } "
                    "attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } "
                    "int64_val: 9223372036854775807 int64_val: 3 } } } }\n");
            gn_pt_text_cst(&b, "cz", "i", NULL, "");
            gn_pt_text_cst(&b, "c4", "i", NULL, "1,2,2,1");
            gn_pt_text_add(&b, "node { name: \"c8\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
                    "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } dim { size: 2 } } "
                    "int_val: 1 } } } }\n");
            char inputs[256] = "";
            uint32_t nin = cfg % 6;
            for (uint32_t k = 0; k < nin; k++) {
                size_t l = strlen(inputs);
                snprintf(inputs + l, sizeof inputs - l, "%s%s", k ? "," : "",
                         pool[(cfg * 7 + k * (cfg + 3) + i) % (sizeof pool / sizeof pool[0])]);
            }
            gn_pt_text_node(&b, "n", op, inputs, attr_sets[(cfg / 2 + i) % (sizeof attr_sets / sizeof attr_sets[0])]);
            gn_pt_text_node(&b, "after", "Identity", "n", TF);
            gn_graph *g = gn_test_load_text(b.s, 0);
            gn_status s = gn__graph_infer_shapes(g);
            if (s != GN_OK && s != GN_ERR_GRAPH) fprintf(stderr, "%s cfg %u: %d %s\n", op, cfg, s, gn_graph_errmsg(g));
            assert_true(s == GN_OK || s == GN_ERR_GRAPH);
            if (s == GN_ERR_GRAPH) {
                if (strncmp(gn_graph_errmsg(g), "node '", 6) != 0) fprintf(stderr, "%s: %s\n", op, gn_graph_errmsg(g));
                assert_int_equal(strncmp(gn_graph_errmsg(g), "node '", 6), 0);
            }
            done(g, &b);
            runs++;
        }
        i++;
    }
    assert_true(runs > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_sorted),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_bias_bn),
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_strided_slice),
        cmocka_unit_test(test_concat_pack),
        cmocka_unit_test(test_reduce_and_misc),
        cmocka_unit_test(test_later_kernel_ops),
        cmocka_unit_test(test_unknown_and_sources),
        cmocka_unit_test(test_v1_loop),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_robustness),
        cmocka_unit_test(test_corpus_models),
        cmocka_unit_test(test_corpus_all),
        cmocka_unit_test(test_large_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
