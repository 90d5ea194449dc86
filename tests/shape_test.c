/* Shape and dtype inference (src/ops/shape.c, src/ops/shape_<family>.c; the op list src/opdef/ops.def). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/graph.h"
#include "ops/op_fns.h"
#include "ops/shape.h"

/* ---- graph text builder ------------------------------------------------------- */
typedef struct tb {
    char *s;
    size_t len, cap;
} tb;

static void add(tb *b, const char *fmt, ...) GN__PRINTF(2, 3);
static void add(tb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

/* "1,224,-1,3" -> dims; "?" -> unknown rank; "" -> scalar */
static void shape_text(tb *b, const char *dims)
{
    if (strcmp(dims, "?") == 0) {
        add(b, "shape { unknown_rank: true }");
        return;
    }
    add(b, "shape { ");
    const char *p = dims;
    while (*p) {
        char *end;
        long long d = strtoll(p, &end, 10);
        add(b, "dim { size: %lld } ", d);
        p = *end == ',' ? end + 1 : end;
    }
    add(b, "}");
}

static void ph(tb *b, const char *name, const char *dtype, const char *dims)
{
    add(b, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } ", name, dtype);
    if (dims) {
        add(b, "attr { key: \"shape\" value { ");
        shape_text(b, dims);
        add(b, " } } ");
    }
    add(b, "}\n");
}

/* int32 constant: "1,2,3" (a vector), or a scalar when scalar */
static void ci(tb *b, const char *name, const char *vals, bool scalar)
{
    int n = 0;
    char buf[1024] = "";
    const char *p = vals;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "int_val: %ld ", v);
        n++;
        p = *end == ',' ? end + 1 : end;
    }
    add(b, "node { name: \"%s\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
           "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { ",
        name);
    if (!scalar) add(b, "dim { size: %d } ", n);
    add(b, "} %s } } } }\n", buf);
}

/* a node: inputs "a,b:1", attrs raw text */
static void nd(tb *b, const char *name, const char *op, const char *inputs, const char *attrs)
{
    add(b, "node { name: \"%s\" op: \"%s\" ", name, op);
    const char *p = inputs;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        add(b, "input: \"%.*s\" ", (int)l, p);
        p = e ? e + 1 : NULL;
    }
    add(b, "%s }\n", attrs ? attrs : "");
}

#define T_F "attr { key: \"T\" value { type: DT_FLOAT } } "
#define T_I "attr { key: \"T\" value { type: DT_INT32 } } "
#define A_S(k, v) "attr { key: \"" k "\" value { s: \"" v "\" } } "
#define A_I(k, v) "attr { key: \"" k "\" value { i: " #v " } } "
#define A_B(k, v) "attr { key: \"" k "\" value { b: " #v " } } "
#define A_L(k, items) "attr { key: \"" k "\" value { list { " items " } } } "

static gn_graph *infer_ok(tb *b)
{
    gn_graph *g = gn_test_load_text(b->s, 0);
    gn_status s = gn__graph_infer_shapes(g);
    if (s != GN_OK) fprintf(stderr, "infer failed: %s\n", gn_graph_errmsg(g));
    assert_int_equal(s, GN_OK);
    return g;
}

static void infer_fails(tb *b, const char *msg)
{
    gn_graph *g = gn_test_load_text(b->s, 0);
    gn_status s = gn__graph_infer_shapes(g);
    assert_int_equal(s, GN_ERR_GRAPH);
    if (strcmp(gn_graph_errmsg(g), msg) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", gn_graph_errmsg(g), msg);
    assert_string_equal(gn_graph_errmsg(g), msg);
    assert_null(g->shapes.ptr);
    gn_graph_free(g);
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
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

static void done(gn_graph *g, tb *b)
{
    gn_graph_free(g);
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* Shape functions of the ops whose CPU kernels came later: detection
 * (NonMaxSuppression padded or not, CropAndResize), segment reductions,
 * Bincount, the FFT family, and ops without outputs. */
static void test_later_kernel_ops(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "boxes", "DT_FLOAT", "7,4");
    ph(&b, "scores", "DT_FLOAT", "7");
    ph(&b, "img", "DT_FLOAT", "3,8,8,2");
    ph(&b, "bx", "DT_FLOAT", "4,4");
    ph(&b, "bi", "DT_INT32", "4");
    ph(&b, "data", "DT_FLOAT", "6,3,5");
    ph(&b, "ids", "DT_INT32", "6");
    ph(&b, "ids2", "DT_INT32", "6,3");
    ph(&b, "cnt", "DT_INT32", "2,9");
    ph(&b, "sig", "DT_FLOAT", "2,16");
    ph(&b, "spec", "DT_COMPLEX64", "2,9");
    ph(&b, "c2", "DT_COMPLEX64", "3,4,4");
    ph(&b, "cond", "DT_BOOL", "");
    ci(&b, "five", "5", true);
    ci(&b, "four", "4", true);
    ci(&b, "seven", "7", true);
    ci(&b, "crop", "5,6", false);
    ci(&b, "n16", "16", false);
    ci(&b, "n44", "4,6", false);
    add(&b, "node { name: \"thr\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: "
            "\"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }\n");
    nd(&b, "nms3", "NonMaxSuppressionV3", "boxes,scores,five,thr,thr", T_F);
    nd(&b, "nms4", "NonMaxSuppressionV4", "boxes,scores,five,thr,thr", T_F A_B("pad_to_max_output_size", true));
    nd(&b, "nms5", "NonMaxSuppressionV5", "boxes,scores,five,thr,thr,thr", T_F);
    nd(&b, "car", "CropAndResize", "img,bx,bi,crop", T_F);
    ph(&b, "cboxes", "DT_FLOAT", "2,9,1,4");
    ph(&b, "cscores", "DT_FLOAT", "2,9,3");
    nd(&b, "cnms", "CombinedNonMaxSuppression", "cboxes,cscores,four,seven,thr,thr", "");
    ci(&b, "twenty", "20", true);
    nd(&b, "cnmsp", "CombinedNonMaxSuppression", "cboxes,cscores,five,twenty,thr,thr", A_B("pad_per_class", true));
    nd(&b, "cnmsq", "CombinedNonMaxSuppression", "cboxes,cscores,four,seven,thr,thr", A_B("pad_per_class", true));
    nd(&b, "useg", "UnsortedSegmentSum", "data,ids,four", T_F);
    nd(&b, "useg2", "UnsortedSegmentMax", "data,ids2,four", T_F);
    nd(&b, "seg", "SegmentMean", "data,ids", T_F);
    nd(&b, "bc", "Bincount", "ids,seven,scores", T_F);
    nd(&b, "dbc", "DenseBincount", "cnt,seven,scores", T_F);
    nd(&b, "rfft", "RFFT", "sig,n16", "");
    nd(&b, "irfft", "IRFFT", "spec,n16", "");
    nd(&b, "fft", "FFT", "spec", "");
    nd(&b, "irfft2", "IRFFT2D", "c2,n44", "");
    nd(&b, "assert", "Assert", "cond,sig", A_L("T", "type: DT_FLOAT"));
    ci(&b, "ax1", "1", false);
    ci(&b, "ax_none", "", false);
    nd(&b, "uq2", "UniqueV2", "data,ax1", T_F);
    nd(&b, "uq2v", "UniqueV2", "ids,ax_none", T_I);
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
    gn_graph_free(g);
    free(b.s);
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

#define CONV_ATTRS(fmt, pad, strides) T_F A_S("data_format", fmt) A_S("padding", pad) A_L("strides", strides)

static void test_conv(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "1,224,224,3");
    ph(&b, "xc", "DT_FLOAT", "1,3,224,224");
    ph(&b, "w", "DT_FLOAT", "3,3,3,32");
    ph(&b, "dw", "DT_FLOAT", "3,3,32,2");
    ph(&b, "xu", "DT_FLOAT", "?");
    ph(&b, "xb", "DT_FLOAT", "-1,-1,-1,3");
    nd(&b, "same", "Conv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "nchw", "Conv2D", "xc,w", CONV_ATTRS("NCHW", "SAME", "i: 1 i: 1 i: 2 i: 2"));
    nd(&b, "valid", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    nd(&b, "valid2", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "dil", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1") A_L("dilations", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "expl", "Conv2D", "x,w",
       CONV_ATTRS("NHWC", "EXPLICIT", "i: 1 i: 2 i: 2 i: 1")
           A_L("explicit_paddings", "i: 0 i: 0 i: 1 i: 1 i: 2 i: 2 i: 0 i: 0"));
    nd(&b, "fused", "_FusedConv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "unk", "Conv2D", "xu,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "batch", "Conv2D", "xb,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "dwc", "DepthwiseConv2dNative", "same,dw", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 1 i: 1 i: 1"));
    nd(&b, "dwc2", "_FusedDepthwiseConv2dNative", "same,dw", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "mp", "MaxPool", "same", T_F A_S("padding", "VALID") A_L("ksize", "i: 1 i: 2 i: 2 i: 1") A_L("strides", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "ap", "AvgPool", "same", T_F A_S("padding", "SAME") A_L("ksize", "i: 1 i: 3 i: 3 i: 1") A_L("strides", "i: 1 i: 2 i: 2 i: 1"));
    nd(&b, "apc", "AvgPool", "nchw", T_F A_S("data_format", "NCHW") A_S("padding", "VALID") A_L("ksize", "i: 1 i: 1 i: 3 i: 3") A_L("strides", "i: 1 i: 1 i: 2 i: 2"));
    ci(&b, "ks", "1,2,2,1", false);
    nd(&b, "mp2", "MaxPoolV2", "same,ks,ks", T_F A_S("padding", "VALID"));
    /* dilated convolution, TensorFlow 1 style */
    ci(&b, "block", "2,2", false);
    ci(&b, "pads", "2,2,2,2", false);
    ci(&b, "pshape", "2,2", false);
    nd(&b, "pads2", "Reshape", "pads,pshape", T_I);
    ci(&b, "crops", "0,0,0,0", false);
    nd(&b, "crops2", "Reshape", "crops,pshape", T_I);
    nd(&b, "s2b", "SpaceToBatchND", "x,block,pads2", T_F);
    nd(&b, "atrous", "Conv2D", "s2b,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    nd(&b, "b2s", "BatchToSpaceND", "atrous,block,crops2", T_F);
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
    expect_dtype(g, "same", 0, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    done(g, &b);

    /* depth mismatch */
    ph(&b, "x", "DT_FLOAT", "1,8,8,5");
    ph(&b, "w", "DT_FLOAT", "3,3,3,32");
    nd(&b, "c", "Conv2D", "x,w", CONV_ATTRS("NHWC", "SAME", "i: 1 i: 1 i: 1 i: 1"));
    infer_fails(&b, "node 'c' (Conv2D): input depth 5 is not a multiple of the filter's input depth 3");
    tb b2 = {0};
    ph(&b2, "x", "DT_FLOAT", "1,2,2,3");
    ph(&b2, "w", "DT_FLOAT", "5,5,3,32");
    nd(&b2, "c", "Conv2D", "x,w", CONV_ATTRS("NHWC", "VALID", "i: 1 i: 1 i: 1 i: 1"));
    infer_fails(&b2, "node 'c' (Conv2D): computed output size would be negative: -2 (input 2, effective filter 5, stride 1)");
}

static void test_matmul(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "a", "DT_FLOAT", "2,3");
    ph(&b, "at", "DT_FLOAT", "3,2");
    ph(&b, "b", "DT_FLOAT", "3,5");
    ph(&b, "bt", "DT_FLOAT", "5,3");
    ph(&b, "u", "DT_FLOAT", "?");
    ph(&b, "b3", "DT_FLOAT", "2,1,3,4");
    ph(&b, "b4", "DT_FLOAT", "5,4,6");
    nd(&b, "mm", "MatMul", "a,b", T_F);
    nd(&b, "mm_tb", "MatMul", "a,bt", T_F A_B("transpose_b", true));
    nd(&b, "mm_ta", "MatMul", "at,b", T_F A_B("transpose_a", true));
    nd(&b, "mm_tt", "MatMul", "at,bt", T_F A_B("transpose_a", true) A_B("transpose_b", true));
    nd(&b, "mm_u", "MatMul", "u,b", T_F);
    nd(&b, "fmm", "_FusedMatMul", "a,b", T_F);
    nd(&b, "bmm", "BatchMatMulV2", "b3,b4", T_F);
    nd(&b, "bmm_adj", "BatchMatMulV3", "b4,b4", T_F A_B("adj_x", true));
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

    ph(&b, "x", "DT_FLOAT", "2,3");
    ph(&b, "w", "DT_FLOAT", "4,5");
    nd(&b, "dense/MatMul", "MatMul", "x,w", T_F);
    infer_fails(&b, "node 'dense/MatMul' (MatMul): inner dimensions differ: [2,3] x [4,5]");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ph(&b, "w", "DT_FLOAT", "4,5");
    nd(&b, "m", "MatMul", "x,w", T_F A_B("transpose_b", true));
    infer_fails(&b, "node 'm' (MatMul): inner dimensions differ: [2,3] x [4,5] (transpose_b)");
    ph(&b, "x", "DT_FLOAT", "2,3,4");
    ph(&b, "w", "DT_FLOAT", "4,5");
    nd(&b, "m", "MatMul", "x,w", T_F);
    infer_fails(&b, "node 'm' (MatMul): input 0 must be a matrix, got [2,3,4]");
}

static void test_broadcast(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "a", "DT_FLOAT", "2,1,3");
    ph(&b, "b", "DT_FLOAT", "4,1");
    ph(&b, "s", "DT_FLOAT", "");
    ph(&b, "u", "DT_FLOAT", "?");
    ph(&b, "p", "DT_FLOAT", "-1,3");
    ph(&b, "q", "DT_FLOAT", "5,1");
    nd(&b, "add", "AddV2", "a,b", T_F);
    nd(&b, "mul", "Mul", "a,s", T_F);
    nd(&b, "sub", "Sub", "a,u", T_F);
    nd(&b, "pq", "Maximum", "p,q", T_F);
    nd(&b, "less", "Less", "a,b", T_F);
    nd(&b, "sel", "SelectV2", "less,a,s", T_F);
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

    ph(&b, "a", "DT_FLOAT", "3");
    ph(&b, "b", "DT_FLOAT", "4");
    nd(&b, "add", "AddV2", "a,b", T_F);
    infer_fails(&b, "node 'add' (AddV2): incompatible shapes for broadcasting: [3] and [4]");
    ph(&b, "a", "DT_FLOAT", "2,8");
    ph(&b, "c", "DT_FLOAT", "4");
    nd(&b, "ba", "BiasAdd", "a,c", T_F);
    infer_fails(&b, "node 'ba' (BiasAdd): bias size 4 does not match the channel dimension 8 of [2,8] (bias [4])");
}

static void test_bias_bn(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "8,16,7,7");
    ph(&b, "xh", "DT_FLOAT", "8,7,7,16");
    ph(&b, "c", "DT_FLOAT", "16");
    ph(&b, "cu", "DT_FLOAT", "-1");
    nd(&b, "ba", "BiasAdd", "x,c", T_F A_S("data_format", "NCHW"));
    nd(&b, "bn", "FusedBatchNormV3", "xh,c,c,c,c", T_F A_B("is_training", false));
    nd(&b, "bnc", "FusedBatchNorm", "x,cu,cu,cu,cu", T_F A_S("data_format", "NCHW"));
    nd(&b, "bnx", "_FusedBatchNormEx", "xh,c,c,c,c", T_F A_B("is_training", false));
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
    ph(&b, "x", "DT_FLOAT", "8,7,7,16");
    ph(&b, "c", "DT_FLOAT", "16");
    ph(&b, "d", "DT_FLOAT", "15");
    nd(&b, "bn", "FusedBatchNormV3", "x,c,d,c,c", T_F);
    infer_fails(&b, "node 'bn' (FusedBatchNormV3): offset has 15 elements, x has 16 channels ([8,7,7,16])");
}

static void test_reshape(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "2,3,4");
    ph(&b, "xb", "DT_FLOAT", "-1,3,4");
    ci(&b, "s1", "-1,4", false);
    ci(&b, "s2", "3,-1", false);
    ci(&b, "s3", "24", false);
    nd(&b, "r1", "Reshape", "x,s1", T_F);
    nd(&b, "r2", "Reshape", "x,s2", T_F);
    nd(&b, "r3", "Reshape", "x,s3", T_F);
    nd(&b, "r4", "Reshape", "xb,s1", T_F);
    /* the Shape -> StridedSlice -> Pack -> Reshape idiom */
    nd(&b, "shape", "Shape", "xb", T_F);
    ci(&b, "b0", "0", false);
    ci(&b, "b1", "1", false);
    ci(&b, "twelve", "12", true);
    nd(&b, "batch", "StridedSlice", "shape,b0,b1,b1", T_I A_I("shrink_axis_mask", 1));
    nd(&b, "pack", "Pack", "batch,twelve", T_I A_I("N", 2));
    nd(&b, "flat", "Reshape", "xb,pack", T_F);
    ci(&b, "minus1", "-1", true);
    nd(&b, "pack2", "Pack", "batch,minus1", T_I A_I("N", 2));
    nd(&b, "flat2", "Reshape", "xb,pack2", T_F);
    /* with a known batch the chain folds completely */
    nd(&b, "shapek", "Shape", "x", T_F);
    nd(&b, "batchk", "StridedSlice", "shapek,b0,b1,b1", T_I A_I("shrink_axis_mask", 1));
    nd(&b, "packk", "Pack", "batchk,minus1", T_I A_I("N", 2));
    nd(&b, "flatk", "Reshape", "x,packk", T_F);
    nd(&b, "castk", "Cast", "packk", "attr { key: \"SrcT\" value { type: DT_INT32 } } attr { key: \"DstT\" value { type: DT_INT64 } }");
    nd(&b, "prod", "Prod", "shapek,b0", T_I);
    nd(&b, "mulk", "Mul", "batchk,twelve", T_I);
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

    ph(&b, "x", "DT_FLOAT", "2,3");
    ci(&b, "s", "4", false);
    nd(&b, "r", "Reshape", "x,s", T_F);
    infer_fails(&b, "node 'r' (Reshape): cannot reshape a tensor of 6 elements to [4] (4 elements)");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ci(&b, "s", "-1,4", false);
    nd(&b, "r", "Reshape", "x,s", T_F);
    infer_fails(&b, "node 'r' (Reshape): cannot reshape a tensor of 6 elements to [?,4]");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ci(&b, "s", "-1,-1", false);
    nd(&b, "r", "Reshape", "x,s", T_F);
    infer_fails(&b, "node 'r' (Reshape): only one dimension may be -1, not both 0 and 1");
}

static void test_strided_slice(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "5,6,7,8");
    ph(&b, "v", "DT_FLOAT", "5");
    ph(&b, "xu", "DT_FLOAT", "-1,6");
    ci(&b, "b_a", "1,0,0", false);
    ci(&b, "e_a", "3,0,0", false);
    ci(&b, "s_a", "1,1,2", false);
    nd(&b, "ell", "StridedSlice", "x,b_a,e_a,s_a", T_F A_I("ellipsis_mask", 2) A_I("begin_mask", 4) A_I("end_mask", 4));
    ci(&b, "b_b", "0,2", false);
    ci(&b, "e_b", "0,3", false);
    ci(&b, "s_b", "1,1", false);
    nd(&b, "shrink", "StridedSlice", "x,b_b,e_b,s_b", T_F A_I("begin_mask", 1) A_I("end_mask", 1) A_I("shrink_axis_mask", 2));
    ci(&b, "b_c", "0,0,-1", false);
    ci(&b, "e_c", "0,0,0", false);
    ci(&b, "s_c", "1,1,1", false);
    nd(&b, "newax", "StridedSlice", "x,b_c,e_c,s_c", T_F A_I("new_axis_mask", 1) A_I("ellipsis_mask", 2) A_I("shrink_axis_mask", 4));
    ci(&b, "z", "0", false);
    ci(&b, "m1", "-1", false);
    ci(&b, "three", "3", false);
    nd(&b, "rev", "StridedSlice", "v,z,z,m1", T_F A_I("begin_mask", 1) A_I("end_mask", 1));
    nd(&b, "rev2", "StridedSlice", "v,three,z,m1", T_F);
    ci(&b, "b_u", "1", false);
    ci(&b, "e_u", "3", false);
    ci(&b, "s_u", "1", false);
    nd(&b, "tail", "StridedSlice", "v,m1,z,s_u", T_F A_I("end_mask", 1));
    nd(&b, "over", "StridedSlice", "v,z,three,s_u", T_F);
    nd(&b, "unk", "StridedSlice", "xu,b_u,e_u,s_u", T_F);
    nd(&b, "unk2", "StridedSlice", "xu,b_u,e_u,s_u", T_F A_I("shrink_axis_mask", 1));
    /* values through a slice of a shape */
    nd(&b, "shape", "Shape", "x", T_F);
    ci(&b, "one", "1", false);
    nd(&b, "sl", "StridedSlice", "shape,one,m1,one", T_I);
    nd(&b, "last", "StridedSlice", "shape,m1,z,one", T_I A_I("shrink_axis_mask", 1));
    nd(&b, "revs", "StridedSlice", "shape,z,z,m1", T_I A_I("begin_mask", 1) A_I("end_mask", 1));
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

    ph(&b, "x", "DT_FLOAT", "5");
    ci(&b, "i", "7", false);
    ci(&b, "e", "8", false);
    ci(&b, "s", "1", false);
    nd(&b, "ss", "StridedSlice", "x,i,e,s", T_F A_I("shrink_axis_mask", 1));
    infer_fails(&b, "node 'ss' (StridedSlice): slice index 7 of dimension 0 out of bounds");
}

static void test_concat_pack(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "a", "DT_FLOAT", "2,-1,3");
    ph(&b, "c", "DT_FLOAT", "2,4,3");
    ph(&b, "d", "DT_FLOAT", "-1,4,5");
    ph(&b, "u", "DT_FLOAT", "?");
    ph(&b, "axu", "DT_INT32", "");
    ci(&b, "ax1", "1", true);
    ci(&b, "ax0", "0", true);
    ci(&b, "axm", "-1", true);
    nd(&b, "cat1", "ConcatV2", "a,c,ax1", T_F A_I("N", 2));
    nd(&b, "cat0", "ConcatV2", "a,c,ax0", T_F A_I("N", 2));
    nd(&b, "catm", "ConcatV2", "c,d,axm", T_F A_I("N", 2));
    nd(&b, "catu", "ConcatV2", "a,u,ax1", T_F A_I("N", 2));
    nd(&b, "catax", "ConcatV2", "a,c,axu", T_F A_I("N", 2));
    nd(&b, "catv1", "Concat", "ax0,c,c", T_F A_I("N", 2));
    /* values */
    nd(&b, "sh", "Shape", "a", T_F);
    ci(&b, "v", "7,8", false);
    nd(&b, "catv", "ConcatV2", "sh,v,ax0", T_I A_I("N", 2));
    nd(&b, "pk", "Pack", "a,c", T_F A_I("N", 2) A_I("axis", 1));
    nd(&b, "unp", "Unpack", "c", T_F A_I("num", 4) A_I("axis", 1));
    nd(&b, "unv", "Unpack", "v", T_I A_I("num", 2));
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

    ph(&b, "a", "DT_FLOAT", "2,3");
    ph(&b, "c", "DT_FLOAT", "2,3,4");
    ci(&b, "ax", "0", true);
    nd(&b, "cat", "ConcatV2", "a,c,ax", T_F A_I("N", 2));
    infer_fails(&b, "node 'cat' (ConcatV2): inputs have different ranks: [2,3] (input 0) and [2,3,4] (input 1)");
    ph(&b, "a", "DT_FLOAT", "2,3");
    ph(&b, "c", "DT_FLOAT", "2,4");
    ci(&b, "ax", "0", true);
    nd(&b, "cat", "ConcatV2", "a,c,ax", T_F A_I("N", 2));
    infer_fails(&b, "node 'cat' (ConcatV2): dimension 1 of inputs differs: [2,3] (input 0) and [2,4] (input 1)");
    ph(&b, "a", "DT_FLOAT", "2,3");
    ph(&b, "c", "DT_FLOAT", "2,4");
    nd(&b, "pk", "Pack", "a,c", T_F A_I("N", 2));
    infer_fails(&b, "node 'pk' (Pack): shapes of inputs differ: [2,3] (input 0) and [2,4] (input 1)");
}

static void test_reduce_and_misc(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "2,3,4");
    ph(&b, "img", "DT_FLOAT", "1,8,8,12");
    ph(&b, "axu", "DT_INT32", "1");
    ph(&b, "idx", "DT_INT32", "5,6");
    ph(&b, "u", "DT_FLOAT", "?");
    ci(&b, "a1", "1", false);
    ci(&b, "am1", "-1", true);
    ci(&b, "a02", "0,2", false);
    ci(&b, "empty", "", false);
    nd(&b, "mean_k", "Mean", "x,a1", T_F A_B("keep_dims", true));
    nd(&b, "mean", "Mean", "x,a1", T_F);
    nd(&b, "sum", "Sum", "x,am1", T_F);
    nd(&b, "max", "Max", "x,a02", T_F A_B("keep_dims", true));
    nd(&b, "all", "Sum", "x,empty", T_F);
    nd(&b, "sum_u", "Sum", "x,axu", T_F A_B("keep_dims", true));
    nd(&b, "sum_uu", "Sum", "x,axu", T_F);
    nd(&b, "argmax", "ArgMax", "x,a1", T_F);
    nd(&b, "relu_u", "Relu", "u", T_F);
    nd(&b, "soft", "Softmax", "x", T_F);
    nd(&b, "sq", "Squeeze", "mean_k", T_F);
    nd(&b, "sq1", "Squeeze", "mean_k", T_F A_L("squeeze_dims", "i: 1"));
    nd(&b, "ed", "ExpandDims", "x,am1", T_F);
    ci(&b, "perm", "2,0,1", false);
    nd(&b, "tr", "Transpose", "x,perm", T_F);
    ci(&b, "three", "3", true);
    nd(&b, "split", "Split", "a1,x", T_F A_I("num_split", 3));
    ci(&b, "sizes", "1,-1", false);
    nd(&b, "splitv", "SplitV", "x,sizes,am1", T_F A_I("num_split", 2));
    ci(&b, "sb", "0,1,1", false);
    ci(&b, "ssz", "-1,2,-1", false);
    nd(&b, "slice", "Slice", "x,sb,ssz", T_F);
    ci(&b, "mult", "2,1,3", false);
    nd(&b, "tile", "Tile", "x,mult", T_F);
    ci(&b, "pads", "1,1,0,0,2,3", false);
    ci(&b, "pshape", "3,2", false);
    nd(&b, "pads2", "Reshape", "pads,pshape", T_I);
    nd(&b, "pad", "Pad", "x,pads2", T_F);
    ci(&b, "zero", "0", true);
    nd(&b, "gather", "GatherV2", "x,idx,a1", T_F);
    ci(&b, "gaxis", "1", true);
    nd(&b, "gather1", "GatherV2", "x,idx,gaxis", T_F);
    nd(&b, "oh", "OneHot", "idx,three,zero,zero", T_F);
    nd(&b, "topk", "TopKV2", "x,three", T_F);
    ci(&b, "hw", "16,20", false);
    nd(&b, "rs", "ResizeBilinear", "img,hw", T_F);
    nd(&b, "s2d", "SpaceToDepth", "img", T_F A_I("block_size", 2));
    nd(&b, "d2s", "DepthToSpace", "img", T_F A_I("block_size", 2));
    ci(&b, "dims", "4,5", false);
    nd(&b, "fill", "Fill", "dims,zero", T_F);
    ci(&b, "lim", "10", true);
    ci(&b, "dl", "3", true);
    nd(&b, "range", "Range", "zero,lim,dl", T_I);
    nd(&b, "where", "Where", "x", T_F);
    ci(&b, "bt", "7,2,3,4", false);
    nd(&b, "bto", "BroadcastTo", "x,bt", T_F);
    ci(&b, "s0", "2,1", false);
    ci(&b, "s1", "5,1,3", false);
    nd(&b, "bargs", "BroadcastArgs", "s0,s1", T_I);
    nd(&b, "size", "Size", "x", T_F);
    nd(&b, "rank", "Rank", "x", T_F);
    nd(&b, "cs", "Cumsum", "x,zero", T_F);
    nd(&b, "zl", "ZerosLike", "x", T_F);
    nd(&b, "addn", "AddN", "x,zl,u", T_F A_I("N", 3));
    ph(&b, "m46", "DT_FLOAT", "4,6");
    nd(&b, "ein1", "Einsum", "x,m46", T_F A_S("equation", "abc,cd->abd"));
    ph(&b, "q", "DT_FLOAT", "2,7,4,8");
    ph(&b, "k", "DT_FLOAT", "2,9,4,8");
    nd(&b, "ein2", "Einsum", "q,k", T_F A_S("equation", "BTNH,BFNH->BNFT"));
    ph(&b, "e1", "DT_FLOAT", "3,1,2,4");
    ph(&b, "e2", "DT_FLOAT", "5,4,6");
    nd(&b, "ein3", "Einsum", "e1,e2", T_F A_S("equation", "...ij,...jk->...ik"));
    nd(&b, "ein4", "Einsum", "q", T_F A_S("equation", "abcd"));
    nd(&b, "ein5", "Einsum", "x,x", T_F A_S("equation", "abc,abd"));
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

    ph(&b, "x", "DT_FLOAT", "2,3");
    ci(&b, "a", "2", false);
    nd(&b, "m", "Mean", "x,a", T_F);
    infer_fails(&b, "node 'm' (Mean): reduction axis 2 out of range for rank 2");
    ph(&b, "x", "DT_FLOAT", "2,7");
    ci(&b, "ax", "1", true);
    nd(&b, "sp", "Split", "ax,x", T_F A_I("num_split", 2));
    infer_fails(&b, "node 'sp' (Split): dimension 1 (size 7) is not divisible by num_split 2");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ph(&b, "y", "DT_FLOAT", "2,4");
    nd(&b, "s", "AddN", "x,y", T_F A_I("N", 2));
    infer_fails(&b, "node 's' (AddN): inputs have incompatible shapes: [2,3] (input 0) and [2,4] (input 1)");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ph(&b, "y", "DT_FLOAT", "4,5");
    nd(&b, "e", "Einsum", "x,y", T_F A_S("equation", "ab,bc->ac"));
    infer_fails(&b, "node 'e' (Einsum): equation 'ab,bc->ac': label 'b' has dimensions 3 and 4");
    ph(&b, "x", "DT_FLOAT", "2,3");
    ci(&b, "p", "0,0", false);
    nd(&b, "t", "Transpose", "x,p", T_F);
    infer_fails(&b, "node 't' (Transpose): perm [0,0] is not a permutation");
}

static void test_unknown_and_sources(void **state)
{
    (void)state;
    tb b = {0};
    ph(&b, "u", "DT_FLOAT", "?");
    ph(&b, "n", "DT_FLOAT", NULL);
    ph(&b, "s", "DT_FLOAT", "");
    nd(&b, "r", "Relu", "u", T_F);
    nd(&b, "sh", "Shape", "u", T_F);
    nd(&b, "sz", "Size", "u", T_F);
    nd(&b, "custom", "SomeCustomOp", "u,s", "");
    nd(&b, "c2", "Relu", "custom:1", T_F);
    nd(&b, "id", "Identity", "n", T_F);
    nd(&b, "noop", "NoOp", NULL, NULL);
    add(&b, "node { name: \"pwd\" op: \"PlaceholderWithDefault\" input: \"s\" "
            "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { } } } }\n");
    add(&b, "node { name: \"hinted\" op: \"SomeOtherOp\" input: \"u\" attr { key: \"_output_shapes\" value { list { "
            "shape { dim { size: 3 } dim { size: -1 } } shape { unknown_rank: true } } } } }\n");
    add(&b, "node { name: \"hint2\" op: \"Relu\" input: \"u\" " T_F
            "attr { key: \"_output_shapes\" value { list { shape { dim { size: 7 } } } } } }\n");
    add(&b, "node { name: \"var\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
            "attr { key: \"shape\" value { shape { dim { size: 4 } dim { size: 5 } } } } }\n");
    nd(&b, "read", "ReadVariableOp", "var", "attr { key: \"dtype\" value { type: DT_FLOAT } }");
    nd(&b, "var_id", "Identity", "var", "attr { key: \"T\" value { type: DT_RESOURCE } }");
    nd(&b, "read2", "ReadVariableOp", "var_id", "attr { key: \"dtype\" value { type: DT_FLOAT } }");
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
    ph(&b, "big", "DT_FLOAT", "1099511627776,1099511627776");
    infer_fails(&b, "node 'big' (Placeholder): output 0: shape [1099511627776,1099511627776] has more elements than int64 can count");
}

/* A v1 while loop: x (the loop variable) grows along axis 0 each iteration,
 * i counts; y keeps its shape. */
static void loop_graph(tb *b, const char *x_shape, int reshape)
{
    ph(b, "x", "DT_FLOAT", x_shape);
    ph(b, "y", "DT_FLOAT", "2,3");
    ci(b, "zero", "0", true);
    ci(b, "ten", "10", true);
    ci(b, "one", "1", true);
    const char *fr = "attr { key: \"frame_name\" value { s: \"loop\" } } ";
    char attrs[512];
    snprintf(attrs, sizeof attrs, "%s%s", T_F, fr);
    nd(b, "enter_x", "Enter", "x", attrs);
    nd(b, "enter_y", "Enter", "y", attrs);
    snprintf(attrs, sizeof attrs, "%s%s", T_I, fr);
    nd(b, "enter_i", "Enter", "zero", attrs);
    nd(b, "merge_x", "Merge", "enter_x,next_x", T_F A_I("N", 2));
    nd(b, "merge_y", "Merge", "enter_y,next_y", T_F A_I("N", 2));
    nd(b, "merge_i", "Merge", "enter_i,next_i", T_I A_I("N", 2));
    nd(b, "less", "Less", "merge_i,ten", T_I);
    nd(b, "cond", "LoopCond", "less", NULL);
    nd(b, "sw_x", "Switch", "merge_x,cond", T_F);
    nd(b, "sw_y", "Switch", "merge_y,cond", T_F);
    nd(b, "sw_i", "Switch", "merge_i,cond", T_I);
    nd(b, "id_x", "Identity", "sw_x:1", T_F);
    nd(b, "id_y", "Identity", "sw_y:1", T_F);
    nd(b, "id_i", "Identity", "sw_i:1", T_I);
    nd(b, "cat", "ConcatV2", "id_x,id_x,zero", T_F A_I("N", 2));
    nd(b, "add_y", "AddV2", "id_y,id_y", T_F);
    nd(b, "add_i", "AddV2", "id_i,one", T_I);
    if (reshape) {
        /* 1: wrong only for the first iteration's shape; 2: wrong on every one */
        ci(b, "four", "4", false);
        nd(b, "rs", "Reshape", reshape == 1 ? "id_x,four" : "id_y,four", T_F);
    }
    nd(b, "next_x", "NextIteration", "cat", T_F);
    nd(b, "next_y", "NextIteration", "add_y", T_F);
    nd(b, "next_i", "NextIteration", "add_i", T_I);
    nd(b, "exit_x", "Exit", "sw_x", T_F);
    nd(b, "exit_y", "Exit", "sw_y", T_F);
    nd(b, "exit_i", "Exit", "sw_i", T_I);
}

static void test_v1_loop(void **state)
{
    (void)state;
    tb b = {0};
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
    "    node_def { name: \"c\" op: \"ConcatV2\" input: \"x\" input: \"x\" input: \"ax:output:0\" " T_F A_I("N", 2)
    " attr { key: \"Tidx\" value { type: DT_INT32 } } }\n"
    "    node_def { name: \"ax\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" "
    "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "    ret { key: \"y\" value: \"c:output:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"same\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " T_F " }\n"
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
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " T_F " }\n"
    "    ret { key: \"y\" value: \"r:activations:0\" }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: \"ext\" input_arg { name: \"x\" type: DT_FLOAT } output_arg { name: \"y\" type: DT_FLOAT } }\n"
    "    node_def { name: \"r\" op: \"Relu\" input: \"x\" " T_F " }\n"
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
    tb b = {0};
    ph(&b, "x", "DT_FLOAT", "2,3");
    ph(&b, "p", "DT_BOOL", "");
    const char *types = "attr { key: \"Tin\" value { list { type: DT_FLOAT } } } "
                        "attr { key: \"Tout\" value { list { type: DT_FLOAT } } } ";
    char attrs[1024];
    snprintf(attrs, sizeof attrs, "%sattr { key: \"f\" value { func { name: \"double\" } } }", types);
    nd(&b, "call", "PartitionedCall", "x", attrs);
    snprintf(attrs, sizeof attrs, "%sattr { key: \"f\" value { func { name: \"same\" } } }", types);
    nd(&b, "scall", "StatefulPartitionedCall", "x", attrs);
    nd(&b, "direct", "double", "x", NULL);
    nd(&b, "nested", "double", "direct", NULL);
    snprintf(attrs, sizeof attrs,
             "%sattr { key: \"then_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"else_branch\" value { func { name: \"double\" } } } "
             "attr { key: \"Tcond\" value { type: DT_BOOL } }",
             types);
    nd(&b, "if", "StatelessIf", "p,x", attrs);
    snprintf(attrs, sizeof attrs,
             "%sattr { key: \"then_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"else_branch\" value { func { name: \"same\" } } } "
             "attr { key: \"Tcond\" value { type: DT_BOOL } }",
             types);
    nd(&b, "if_same", "If", "p,x", attrs);
    nd(&b, "while", "While", "x",
       "attr { key: \"T\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"cond\" value { func { name: \"cond\" } } } "
       "attr { key: \"body\" value { func { name: \"double\" } } }");
    nd(&b, "while_same", "StatelessWhile", "x",
       "attr { key: \"T\" value { list { type: DT_FLOAT } } } "
       "attr { key: \"cond\" value { func { name: \"cond\" } } } "
       "attr { key: \"body\" value { func { name: \"same\" } } }");
    nd(&b, "recursive", "rec", "x", NULL);
    nd(&b, "ext_call", "ext", "x", NULL);
    nd(&b, "dataset", "SomeDatasetOp", "x", "attr { key: \"f\" value { func { name: \"ext\" } } }");
    add(&b, "%s", fn_lib);
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
        T_F A_I("N", 2) A_I("num_split", 3) A_I("num", 2) A_I("axis", -9) A_B("keep_dims", true)
            A_L("strides", "i: 0") A_L("ksize", "i: 1 i: 0") A_I("block_size", 0) A_S("padding", "SAME")
                A_S("equation", "ab,bc->ac") A_I("shrink_axis_mask", -1) A_I("ellipsis_mask", 3),
        T_F A_S("data_format", "NCHW") A_S("padding", "EXPLICIT") A_L("explicit_paddings", "i: -1 i: 2")
            A_L("strides", "i: 1 i: 2 i: 2 i: 1") A_L("ksize", "i: 1 i: 3 i: 3 i: 1") A_I("block_size", 2)
                A_I("new_axis_mask", 7) A_I("begin_mask", 5) A_I("end_mask", 2) A_S("equation", "...a,...->a")
                    A_L("squeeze_dims", "i: 7") A_I("batch_dims", -1) A_I("k", 100) A_I("depth", 3)
                        A_I("dct_coefficient_count", -4) A_I("window_size", 7) A_I("stride", 0),
        T_F A_S("padding", "VALID") A_L("dilations", "i: 1 i: 9223372036854775807 i: 1 i: 1")
            A_L("strides", "i: 1 i: 1 i: 1 i: 1") A_S("equation", "a..b,c") A_I("axis", 1) A_B("transpose_a", true)
                A_B("adj_y", true) A_I("desired_samples", 5) A_I("num_elements", 3),
    };
    uint32_t n_rows = gn__op_fns_count();
    int runs = 0;
    for (uint32_t row = 0, i = 0; row < n_rows; row++) {
        if (!gn__op_fns_at(row)->shape) continue;   /* i: the ops with a shape function */
        const char *op = gn__op_fns_at(row)->name;
        for (uint32_t cfg = 0; cfg < 16; cfg++) {
            tb b = {0};
            ph(&b, "u", "DT_FLOAT", "?");
            ph(&b, "s", "DT_FLOAT", "");
            ph(&b, "v", "DT_FLOAT", "3");
            ph(&b, "m", "DT_FLOAT", "2,3");
            ph(&b, "t4", "DT_FLOAT", "1,4,4,2");
            ph(&b, "b5", "DT_FLOAT", "-1,0,5");
            ci(&b, "ci", "2,-1", false);
            ci(&b, "cneg", "-7", true);
            add(&b, "node { name: \"cbig\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT64 } } "
                    "attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } "
                    "int64_val: 9223372036854775807 int64_val: 3 } } } }\n");
            ci(&b, "cz", "", false);
            ci(&b, "c4", "1,2,2,1", false);
            add(&b, "node { name: \"c8\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
                    "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } dim { size: 2 } } "
                    "int_val: 1 } } } }\n");
            char inputs[256] = "";
            uint32_t nin = cfg % 6;
            for (uint32_t k = 0; k < nin; k++) {
                size_t l = strlen(inputs);
                snprintf(inputs + l, sizeof inputs - l, "%s%s", k ? "," : "",
                         pool[(cfg * 7 + k * (cfg + 3) + i) % (sizeof pool / sizeof pool[0])]);
            }
            nd(&b, "n", op, inputs, attr_sets[(cfg / 2 + i) % (sizeof attr_sets / sizeof attr_sets[0])]);
            nd(&b, "after", "Identity", "n", T_F);
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
