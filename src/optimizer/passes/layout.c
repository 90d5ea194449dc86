/* The layout optimizer (Grappler's GenericLayoutOptimizer,
 * docs/reference_grappler.md §3.11): moves 4-D image work from one data format to the other,
 * NHWC to NCHW for GPU-placed work by default.
 *
 * Plan, then rewrite. The plan walks the graph in topological order with the
 * inferred shapes and marks each node converted or not:
 *  - a layout-SENSITIVE op (Conv2D, DepthwiseConv2dNative, pooling, BiasAdd,
 *    FusedBatchNorm*, DepthToSpace/SpaceToDepth, the _Fused forms, and the
 *    gradients: Conv2DBackpropInput/Filter, the depthwise ones, MaxPoolGrad*,
 *    AvgPoolGrad, BiasAddGrad, FusedBatchNormGrad* in training mode) on the
 *    device being converted, whose data_format is the source format, whose
 *    layout inputs are 4-D, float, not preserved and with a consumer;
 *  - a layout-AGNOSTIC op (elementwise unary/binary/AddN/Select, the
 *    ReluGrad-type gradients, Concat, Split, Pad/MirrorPad, reductions,
 *    Squeeze, Slice, StridedSlice, Tile, ReverseV2, Shape/ShapeN, Fill,
 *    IdentityN, Switch/Merge) on that device when one of its inputs comes from
 *    a converted node (a 4-D tensor, or a Shape's vector for Fill) or from a
 *    user Transpose that undoes ours (TensorFlow's IsAfterDstToSrcTransform:
 *    the inserted transpose cancels against it), and every layout-dependent
 *    operand it has can be remapped.
 * The rewrite then gives every converted node its inputs in the destination
 * format: straight from a converted producer (the inverse-transpose pair
 * TensorFlow inserts and later cancels never materializes), through a user
 * Transpose that undoes ours (both cancelled), from a constant transposed at
 * compile time (a lower-rank constant operand of an elementwise op is first
 * broadcast to 4-D), through a Reshape for a non-constant vector operand, or
 * through one new Transpose; and one inverse Transpose per
 * output port feeds every consumer that still wants the source format
 * (preserved nodes, _Retval, unconverted ops). Operands that hold one value
 * per dimension (paddings, begin/size, multiples, input_sizes, ksize/strides
 * inputs) and axes are permuted: a constant becomes a new constant, anything
 * computed at run time goes through a DataFormatVecPermute or DataFormatDimMap
 * node (the CPU runtime has kernels for both). A converted Shape/ShapeN hands
 * out its vector in the destination order: a converted Fill reads it as it
 * is, every other consumer through a DataFormatVecPermute back. Attributes
 * (data_format, strides, ksize, dilations, explicit_paddings, squeeze_dims,
 * StridedSlice masks) are permuted; `_output_shapes` is dropped from
 * converted nodes.
 *
 * Names follow TensorFlow: "<node>-<slot>-TransposeNHWCToNCHW-LayoutOptimizer"
 * (its perm "<that>-PermConstNHWCToNCHW-LayoutOptimizer"), output transposes
 * "<node>-<port>-0-TransposeNCHWToNHWC-LayoutOptimizer", remapped operands
 * "<node>-<slot>-DataFormatDimMapNHWCToNCHW-LayoutOptimizer" (axes) and
 * "<node>-<slot>-DataFormatVecPermuteNHWCToNCHW-LayoutOptimizer" (vectors;
 * constants keep the name TensorFlow's runtime node has before constant
 * folding), Shape outputs "<node>-<port>-0-DataFormatVecPermuteNCHWToNHWC-
 * LayoutOptimizer".
 *
 * As TensorFlow: preserved nodes (fetches, feeds) are never converted, so a
 * fetch name keeps meaning the original tensor; nodes without consumers and
 * integer convolutions are left alone; FusedBatchNormGrad only in training
 * mode; reductions that drop axes only with constant axes whose remaining
 * dimensions keep their order; StridedSlice only with constant begin/end/
 * strides and no ellipsis/new-axis/shrink masks. Nodes inside v1 while loops
 * are left alone (a new constant would have to join the loop's frame). Inputs
 * that need a run-time Transpose share one per producer output. A function
 * body is inferred on its own, so an op fed straight by an _Arg without a
 * known rank is refused.
 * The direction: GPU-placed nodes when there are any (layout.policy: grapnel
 * and NCHW give NHWC to NCHW, NHWC the reverse, tensorflow TensorFlow's
 * GetSrcAndDstDataFormats: NCHW to NHWC when the GPU is Volta or newer and at
 * least half the GPU Conv2Ds are float16); else CPU-placed nodes when
 * cpu_layout_conversion asks (both directions: our CPU kernels run NCHW,
 * where TensorFlow refuses NHWC_TO_NCHW). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_layout[] = {
    {"layout.sensitive", "convert a layout-sensitive op (Conv2D, pooling, BiasAdd, FusedBatchNorm, ...) to the target data format"},
    {"layout.agnostic", "carry the target format through a layout-agnostic op (elementwise, Concat, Split, Pad, reductions, slices, ...)"},
    {"layout.fold_const", "transpose a constant operand of a converted op at compile time instead of at run time"},
    {"layout.cancel", "feed a converted op through a user Transpose that undoes the inserted one (both cancel)"},
    {NULL, NULL},
};

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_BFLOAT16 = 14, DT_HALF = 19 };

/* ---- op tables ---------------------------------------------------------------------------- */
enum {
    K_NONE = 0,
    /* sensitive */
    S_CONV,      /* input 0 (and 4-D extra args of _Fused*) */
    S_POOL,      /* ksize/strides attrs */
    S_POOLV2,    /* ksize/strides const inputs 1, 2 */
    S_BIAS,
    S_FBN,       /* FusedBatchNorm*: input 0, output 0; _FusedBatchNormEx side input 5 */
    S_SPACE,     /* DepthToSpace / SpaceToDepth */
    S_BPINPUT,   /* Conv2DBackpropInput: sizes vector 0, out_backprop 2, output 0 */
    S_BPFILTER,  /* Conv2DBackpropFilter: input 0 and out_backprop 2; the filter output keeps its layout */
    S_FBNGRAD,   /* FusedBatchNormGrad*: y_backprop 0 and x 1, output 0 (training only) */
    S_POOLGRAD,  /* MaxPoolGrad / MaxPoolGradGrad: inputs 0, 1, 2, output 0 */
    S_POOLGRADV2, /* ... with ksize/strides vectors 3, 4 */
    S_AVGPOOLGRAD, /* AvgPoolGrad: orig_input_shape vector 0, grad 1, output 0 */
    S_BIASGRAD,  /* BiasAddGrad: input 0; the bias-sized output keeps its layout */
    /* agnostic */
    A_UNARY,
    A_BINARY,
    A_SELECT,
    A_ADDN,
    A_CONCAT,    /* axis input 0 */
    A_CONCATV2,  /* axis input N */
    A_SPLIT,     /* axis 0, value 1 */
    A_SPLITV,    /* value 0, sizes 1, axis 2 */
    A_PAD,       /* paddings input 1 */
    A_REDUCE,    /* axes input 1 */
    A_SQUEEZE,
    A_SLICE,     /* begin 1, size 2 */
    A_SSLICE,    /* begin 1, end 2, strides 3 */
    A_TILE,      /* multiples 1 */
    A_REVERSE,   /* axis 1 */
    A_GRAD2,     /* ReluGrad-type: gradient 0 and features 1, both 4-D */
    A_SHAPE,     /* Shape: the output vector stays in the destination order (a VecPermute back for others) */
    A_SHAPEN,    /* ShapeN: the same per converted port */
    A_FILL,      /* Fill: dims vector 0 */
    A_IDENTITYN, /* IdentityN: the ports fed in the destination format */
    A_SWITCH,    /* Switch: data 0, outputs 0 and 1 */
    A_MERGE,     /* Merge: every input converted, output 0 */
};

typedef struct op_kind {
    const char *op;
    int kind;
} op_kind;

/* sorted by op name (strcmp) */
static const op_kind op_kinds[] = {
    {"Abs", A_UNARY},
    {"Acos", A_UNARY},
    {"Acosh", A_UNARY},
    {"Add", A_BINARY},
    {"AddN", A_ADDN},
    {"AddV2", A_BINARY},
    {"All", A_REDUCE},
    {"Angle", A_UNARY},
    {"Any", A_REDUCE},
    {"Asin", A_UNARY},
    {"Asinh", A_UNARY},
    {"Atan", A_UNARY},
    {"Atan2", A_BINARY},
    {"Atanh", A_UNARY},
    {"AvgPool", S_POOL},
    {"AvgPoolGrad", S_AVGPOOLGRAD},
    {"BiasAdd", S_BIAS},
    {"BiasAddGrad", S_BIASGRAD},
    {"Cast", A_UNARY},
    {"Ceil", A_UNARY},
    {"CheckNumerics", A_UNARY},
    {"Complex", A_BINARY},
    {"ComplexAbs", A_UNARY},
    {"Concat", A_CONCAT},
    {"ConcatV2", A_CONCATV2},
    {"Conj", A_UNARY},
    {"Conv2D", S_CONV},
    {"Conv2DBackpropFilter", S_BPFILTER},
    {"Conv2DBackpropInput", S_BPINPUT},
    {"Cos", A_UNARY},
    {"Cosh", A_UNARY},
    {"DepthToSpace", S_SPACE},
    {"DepthwiseConv2dNative", S_CONV},
    {"DepthwiseConv2dNativeBackpropFilter", S_BPFILTER},
    {"DepthwiseConv2dNativeBackpropInput", S_BPINPUT},
    {"Digamma", A_UNARY},
    {"Div", A_BINARY},
    {"Elu", A_UNARY},
    {"EluGrad", A_GRAD2},
    {"Equal", A_BINARY},
    {"Erf", A_UNARY},
    {"Erfc", A_UNARY},
    {"Exp", A_UNARY},
    {"Expm1", A_UNARY},
    {"Fill", A_FILL},
    {"Floor", A_UNARY},
    {"FloorDiv", A_BINARY},
    {"FloorMod", A_BINARY},
    {"FusedBatchNorm", S_FBN},
    {"FusedBatchNormGrad", S_FBNGRAD},
    {"FusedBatchNormGradV2", S_FBNGRAD},
    {"FusedBatchNormGradV3", S_FBNGRAD},
    {"FusedBatchNormV2", S_FBN},
    {"FusedBatchNormV3", S_FBN},
    {"Greater", A_BINARY},
    {"GreaterEqual", A_BINARY},
    {"GuaranteeConst", A_UNARY},
    {"Identity", A_UNARY},
    {"IdentityN", A_IDENTITYN},
    {"Igamma", A_BINARY},
    {"Igammac", A_BINARY},
    {"Imag", A_UNARY},
    {"Inv", A_UNARY},
    {"InvGrad", A_GRAD2},
    {"IsFinite", A_UNARY},
    {"IsInf", A_UNARY},
    {"IsNan", A_UNARY},
    {"LeakyRelu", A_UNARY},
    {"LeakyReluGrad", A_GRAD2},
    {"Less", A_BINARY},
    {"LessEqual", A_BINARY},
    {"Lgamma", A_UNARY},
    {"Log", A_UNARY},
    {"Log1p", A_UNARY},
    {"LogicalAnd", A_BINARY},
    {"LogicalNot", A_UNARY},
    {"LogicalOr", A_BINARY},
    {"Max", A_REDUCE},
    {"MaxPool", S_POOL},
    {"MaxPoolGrad", S_POOLGRAD},
    {"MaxPoolGradGrad", S_POOLGRAD},
    {"MaxPoolGradGradV2", S_POOLGRADV2},
    {"MaxPoolGradV2", S_POOLGRADV2},
    {"MaxPoolV2", S_POOLV2},
    {"Maximum", A_BINARY},
    {"Mean", A_REDUCE},
    {"Merge", A_MERGE},
    {"Min", A_REDUCE},
    {"Minimum", A_BINARY},
    {"MirrorPad", A_PAD},
    {"MirrorPadGrad", A_PAD},
    {"Mod", A_BINARY},
    {"Mul", A_BINARY},
    {"Neg", A_UNARY},
    {"NotEqual", A_BINARY},
    {"OnesLike", A_UNARY},
    {"Pad", A_PAD},
    {"PadV2", A_PAD},
    {"Polygamma", A_BINARY},
    {"Pow", A_BINARY},
    {"PreventGradient", A_UNARY},
    {"Prod", A_REDUCE},
    {"Real", A_UNARY},
    {"RealDiv", A_BINARY},
    {"Reciprocal", A_UNARY},
    {"ReciprocalGrad", A_GRAD2},
    {"Relu", A_UNARY},
    {"Relu6", A_UNARY},
    {"Relu6Grad", A_GRAD2},
    {"ReluGrad", A_GRAD2},
    {"ReverseV2", A_REVERSE},
    {"Rint", A_UNARY},
    {"Round", A_UNARY},
    {"Rsqrt", A_UNARY},
    {"RsqrtGrad", A_GRAD2},
    {"Select", A_SELECT},
    {"SelectV2", A_SELECT},
    {"Selu", A_UNARY},
    {"SeluGrad", A_GRAD2},
    {"Shape", A_SHAPE},
    {"ShapeN", A_SHAPEN},
    {"Sigmoid", A_UNARY},
    {"SigmoidGrad", A_GRAD2},
    {"Sign", A_UNARY},
    {"Sin", A_UNARY},
    {"Sinh", A_UNARY},
    {"Slice", A_SLICE},
    {"Snapshot", A_UNARY},
    {"Softplus", A_UNARY},
    {"SoftplusGrad", A_GRAD2},
    {"Softsign", A_UNARY},
    {"SoftsignGrad", A_GRAD2},
    {"SpaceToDepth", S_SPACE},
    {"Split", A_SPLIT},
    {"SplitV", A_SPLITV},
    {"Sqrt", A_UNARY},
    {"SqrtGrad", A_GRAD2},
    {"Square", A_UNARY},
    {"SquaredDifference", A_BINARY},
    {"Squeeze", A_SQUEEZE},
    {"StopGradient", A_UNARY},
    {"StridedSlice", A_SSLICE},
    {"Sub", A_BINARY},
    {"Sum", A_REDUCE},
    {"Switch", A_SWITCH},
    {"Tan", A_UNARY},
    {"Tanh", A_UNARY},
    {"TanhGrad", A_GRAD2},
    {"Tile", A_TILE},
    {"TruncateDiv", A_BINARY},
    {"TruncateMod", A_BINARY},
    {"ZerosLike", A_UNARY},
    {"Zeta", A_BINARY},
    {"_FusedBatchNormEx", S_FBN},
    {"_FusedConv2D", S_CONV},
    {"_FusedDepthwiseConv2dNative", S_CONV},
};

static int kind_cmp(const void *k, const void *e) { return strcmp((const char *)k, ((const op_kind *)e)->op); }

static int op_kind_of(const char *op)
{
    const op_kind *e = bsearch(op, op_kinds, GN__ARRAY_LEN(op_kinds), sizeof op_kinds[0], kind_cmp);
    return e ? e->kind : K_NONE;
}

static bool is_sensitive(int k) { return k >= S_CONV && k <= S_BIASGRAD; }

/* ---- state ---------------------------------------------------------------------------------- */
enum { MAX_IN = 64 };

typedef struct lay {
    gn__pass_ctx *c;
    gn_graph *g;
    char src[5], dst[5];
    int perm[4];      /* src -> dst: dst dim i is src dim perm[i] */
    int inv[4];       /* dst -> src */
    int axis_map[4];  /* src axis a is dst axis axis_map[a] */
    bool gpu;         /* converting GPU-placed nodes (else CPU-placed) */
    uint32_t n0;      /* node count when planning */
    uint8_t *conv;    /* per node: kind when converted, 0 otherwise */
    uint64_t *in_mask;  /* converted: input slots carrying a 4-D layout tensor */
    uint64_t *out_mask; /* converted: output ports carrying a 4-D layout tensor (bit 63: all ports >= 63) */
    uint64_t *bc_mask;  /* converted: slots with a lower-rank constant broadcast operand */
    uint64_t *rs_mask;  /* converted: slots with a vector broadcast operand reshaped at run time */
    uint64_t *vec_mask; /* converted: slots holding a per-dimension vector ([4] or [4, 2]) wanted in dst order */
    uint64_t *ax_mask;  /* converted: slots holding axes (remapped to the dst format) */
    uint64_t *vout_mask; /* converted: output ports giving a shape vector in dst order (Shape, ShapeN) */
    uint32_t *in_off;   /* per node: first entry of its inputs in in_dt */
    int32_t *in_dt;     /* dtype of each input (converted nodes' layout slots) */
    uint32_t *out_off;
    int32_t *out_dt;    /* dtype of each output (converted nodes) */
    uint16_t *depth;    /* v1 while-loop frame depth (0: outside every loop) */
    gn_id *tr_of;       /* per producer: the input Transpose made for its output tr_idx */
    uint32_t *tr_idx;
    char name[4200];
} lay;

static gn_status nomem(lay *L) { return gn__fail(L->c->err, GN_ERR_NOMEM, "out of memory"); }

static const gn__tinfo *tinfo(const lay *L, gn__edge e) { return gn__shape_of(L->g, e.node, e.index); }
static int32_t rank_of(const lay *L, gn__edge e)
{
    const gn__tinfo *t = tinfo(L, e);
    return t ? t->shape.rank : -1;
}
static int32_t dtype_of(const lay *L, gn__edge e)
{
    const gn__tinfo *t = tinfo(L, e);
    if (t && t->dtype) return t->dtype;
    const gn__opdef *op = gn__node_opdef(L->g, e.node);
    return op ? gn__op_output_dtype(op, L->g, e.node, e.index) : 0;
}

static bool on_device(const lay *L, gn_id id)
{
    bool gpu = gn__pass_on_gpu(L->c, L->g, id);
    return L->gpu ? gpu : !gpu;
}

static void set_formats(lay *L, const char *src, const char *dst)
{
    memcpy(L->src, src, 5);
    memcpy(L->dst, dst, 5);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            if (src[j] == dst[i]) L->perm[i] = j;
            if (dst[j] == src[i]) L->inv[i] = j;
        }
    }
    for (int a = 0; a < 4; a++) L->axis_map[a] = L->inv[a];
}

static bool attr_is(const lay *L, gn_id id, const char *key, const char *dflt, const char *want)
{
    const char *s = dflt;
    size_t n = strlen(dflt);
    (void)gn__attr_get_string(L->g, id, key, &s, &n);
    return n == strlen(want) && !memcmp(s, want, n);
}


/* A Const node's value (fresh copy; release it), false when not a Const. */
static bool const_value(const lay *L, gn_id id, gn__tensor *t)
{
    memset(t, 0, sizeof *t);
    if (strcmp(gn__node_op(L->g, id), "Const") != 0) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(L->g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    gn__err e;
    gn__err_clear(&e);
    if (gn__tensor_from_proto(v->tensor, t, &e) != GN_OK) {
        memset(t, 0, sizeof *t);
        return false;
    }
    return true;
}

/* Integer constant values (int32/int64, at most max). */
static bool const_ints(const lay *L, gn__edge e, int64_t *v, int32_t max, int32_t *n, int32_t *rank)
{
    gn__tensor t;
    if (e.index != 0 || !const_value(L, e.node, &t)) return false;
    bool ok = (t.dtype == DT_INT32 || t.dtype == DT_INT64) && gn__tensor_numel(&t) <= max;
    if (ok) {
        *n = (int32_t)gn__tensor_numel(&t);
        *rank = t.rank;
        for (int32_t i = 0; i < *n; i++)
            v[i] = t.dtype == DT_INT32 ? ((const int32_t *)t.data)[i] : ((const int64_t *)t.data)[i];
    }
    gn__tensor_release(&t);
    return ok;
}

static bool is_const_node(const lay *L, gn__edge e)
{
    return e.index == 0 && strcmp(gn__node_op(L->g, e.node), "Const") == 0;
}

/* Is the user node a Transpose by a constant permutation p? */
static bool is_transpose_by(const lay *L, gn_id id, const int *p)
{
    if (strcmp(gn__node_op(L->g, id), "Transpose") != 0 || L->g->nodes[id].n_in != 2) return false;
    int64_t v[8];
    int32_t n = 0, r = 0;
    if (!const_ints(L, L->g->nodes[id].in[1], v, 8, &n, &r) || n != 4) return false;
    for (int i = 0; i < 4; i++)
        if (v[i] != p[i]) return false;
    return true;
}

/* Does the producer of e hand out the destination format? */
static bool layout_edge(const lay *L, gn__edge e)
{
    if (e.node >= L->n0 || !L->conv[e.node]) return false;
    uint32_t k = e.index < 63 ? e.index : 63;
    return (L->out_mask[e.node] >> k) & 1u;
}

/* Does the producer of e hand out a shape vector in the destination order? */
static bool vec_edge(const lay *L, gn__edge e)
{
    if (e.node >= L->n0 || !L->conv[e.node] || e.index >= 64) return false;
    return (L->vout_mask[e.node] >> e.index) & 1u;
}

/* A user Transpose undoing ours, whose input is still in the source format's
 * meaning (not a converted node's output). */
static bool cancellable(const lay *L, gn__edge e)
{
    return e.index == 0 && is_transpose_by(L, e.node, L->inv) && !layout_edge(L, L->g->nodes[e.node].in[0]) &&
           gn__pattern_enabled(L->c, "layout.cancel");
}

/* A constant (not preserved: a feed may replace it) we can transpose now. */
static bool foldable(const lay *L, gn__edge e)
{
    if (!is_const_node(L, e) || (L->g->nodes[e.node].flags & GN__NODE_PRESERVE) ||
        !gn__pattern_enabled(L->c, "layout.fold_const"))
        return false;
    gn__tensor t;
    if (!const_value(L, e.node, &t)) return false;
    bool ok = t.dtype != 7 /* string */ && t.rank <= 4 && gn__tensor_numel(&t) > 0;
    gn__tensor_release(&t);
    return ok;
}

/* Remaining src dims, listed in dst order, keep their src order? (an output
 * with those dims reads the same in both formats) */
static bool order_kept(const lay *L, unsigned removed)
{
    int last = -1;
    for (int j = 0; j < 4; j++) {
        int d = L->perm[j];
        if (removed & (1u << d)) continue;
        if (d < last) return false;
        last = d;
    }
    return true;
}

/* ---- planning ----------------------------------------------------------------------------------- */
typedef struct plan {
    uint64_t in, out, bc, rs, vec, ax, vout;
    const char *why;      /* refusal */
    bool quiet;           /* not a candidate: no event */
} plan;

static void refuse(plan *p, const char *why) { p->why = why; }

/* Layout slot s: rank-4 input. Returns false (and the reason) when it is not. */
static bool need4(const lay *L, plan *p, gn_id id, uint32_t s)
{
    int32_t r = rank_of(L, L->g->nodes[id].in[s]);
    if (r < 0) refuse(p, "unknown rank");
    else if (r != 4) refuse(p, "input is not 4-D");
    else {
        p->in |= 1ull << s;
        return true;
    }
    return false;
}

/* Slot s holds one value per dimension: a 4-vector or, with pairs, a [4, 2]
 * tensor (paddings). It is fed in the destination order: straight from a
 * converted Shape, as a constant permuted now, or through a
 * DataFormatVecPermute at run time. */
static bool vec_operand(const lay *L, plan *p, gn_id id, uint32_t s, bool pairs, const char *why)
{
    const gn__node *n = &L->g->nodes[id];
    bool ok = false;
    if (s < n->n_in && s < MAX_IN) {
        gn__edge e = n->in[s];
        if (!pairs && vec_edge(L, e)) ok = true;
        else if (is_const_node(L, e)) {
            int64_t v[16];
            int32_t k = 0, r = 0;
            ok = const_ints(L, e, v, 16, &k, &r) && (pairs ? k == 8 && r == 2 : k == 4 && r == 1);
        } else {
            const gn__tinfo *t = tinfo(L, e);
            int32_t dt = dtype_of(L, e);
            ok = t && (dt == DT_INT32 || dt == DT_INT64) && t->shape.rank == (pairs ? 2 : 1) && t->shape.dims &&
                 t->shape.dims[0] == 4 && (!pairs || t->shape.dims[1] == 2);
        }
    }
    if (ok) p->vec |= 1ull << s;
    else refuse(p, why);
    return ok;
}

static void plan_sensitive(const lay *L, gn_id id, int kind, plan *p)
{
    gn_graph *g = L->g;
    const gn__node *n = &g->nodes[id];
    if (L->depth[id]) {
        refuse(p, "inside a while loop frame");
        return;
    }
    if (!on_device(L, id)) {
        refuse(p, L->gpu ? "not GPU-placed" : "not CPU-placed");
        return;
    }
    if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) {
        refuse(p, "preserved node");
        return;
    }
    if (n->n_use == 0 && n->n_cuse == 0) {
        p->quiet = true;
        return;
    }
    if (!attr_is(L, id, "data_format", "NHWC", L->src)) {
        if (attr_is(L, id, "data_format", "NHWC", L->dst))
            refuse(p, !strcmp(L->dst, "NCHW") ? "data_format already NCHW" : "data_format already NHWC");
        else refuse(p, "data_format is neither NHWC nor NCHW");
        return;
    }
    int dt = 0;
    if (!gn__attr_get_type(g, id, "T", &dt) || !gn__dtype_is_float(dt)) {
        refuse(p, "not a floating-point op");
        return;
    }
    switch (kind) {
    case S_BPINPUT:
        /* input_sizes 0, filter 1 (its layout does not depend on data_format), out_backprop 2 */
        if (n->n_in != 3 || rank_of(L, (gn__edge){id, 0}) != 4) {
            refuse(p, rank_of(L, (gn__edge){id, 0}) < 0 ? "unknown rank" : "output is not 4-D");
            return;
        }
        if (!need4(L, p, id, 2) || !vec_operand(L, p, id, 0, false, "input_sizes is not a 4-vector")) return;
        p->out = 1;
        break;
    case S_BPFILTER:
        /* input 0 and out_backprop 2; filter_sizes 1 and the filter gradient keep their layout */
        if (n->n_in != 3 || !need4(L, p, id, 0) || !need4(L, p, id, 2)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        break;
    case S_FBNGRAD: {
        bool training = false;
        (void)gn__attr_get_bool(g, id, "is_training", &training);
        if (!training) {
            refuse(p, "not in training mode");
            return;
        }
        if (n->n_in < 5 || !need4(L, p, id, 0) || !need4(L, p, id, 1)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        p->out = 1;
        break;
    }
    case S_POOLGRAD:
    case S_POOLGRADV2:
        if (n->n_in != (kind == S_POOLGRAD ? 3u : 5u)) {
            refuse(p, "unexpected input count");
            return;
        }
        for (uint32_t s = 0; s < 3; s++)
            if (!need4(L, p, id, s)) return;
        if (kind == S_POOLGRADV2 && (!vec_operand(L, p, id, 3, false, "ksize/strides are not 4-vectors") ||
                                     !vec_operand(L, p, id, 4, false, "ksize/strides are not 4-vectors")))
            return;
        p->out = 1;
        break;
    case S_AVGPOOLGRAD:
        if (n->n_in != 2 || !need4(L, p, id, 1) ||
            !vec_operand(L, p, id, 0, false, "orig_input_shape is not a 4-vector")) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        p->out = 1;
        break;
    case S_BIASGRAD:
        if (n->n_in != 1 || !need4(L, p, id, 0)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        break;
    default:
        if (n->n_in < 1 || !need4(L, p, id, 0)) return;
        p->out = 1;
        break;
    }
    if (kind == S_CONV && n->n_in > 2) {
        for (uint32_t s = 2; s < n->n_in && s < MAX_IN; s++)
            if (rank_of(L, n->in[s]) == 4) p->in |= 1ull << s;
            else if (rank_of(L, n->in[s]) < 0) {
                refuse(p, "unknown rank");
                return;
            }
    }
    if (kind == S_FBN && n->n_in > 5) {
        for (uint32_t s = 5; s < n->n_in && s < MAX_IN; s++)
            if (!need4(L, p, id, s)) return;
    }
    if (kind == S_POOLV2 && (!vec_operand(L, p, id, 1, false, "ksize/strides are not 4-vectors") ||
                             !vec_operand(L, p, id, 2, false, "ksize/strides are not 4-vectors")))
        return;
    if (attr_is(L, id, "padding", "", "EXPLICIT")) {
        const Tensorflow__AttrValue *a = gn__node_attr(g, id, "explicit_paddings");
        if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !a->list || a->list->n_i != 8) {
            refuse(p, "explicit_paddings is not 8 values");
            return;
        }
    }
}

/* Operand s of an elementwise op: 4-D (layout), scalar (kept) or a lower-rank
 * constant (broadcast, expanded to 4-D and transposed at compile time). */
static bool elementwise_operand(const lay *L, plan *p, gn_id id, uint32_t s)
{
    gn__edge e = L->g->nodes[id].in[s];
    int32_t r = rank_of(L, e);
    if (r < 0) {
        refuse(p, "unknown rank");
        return false;
    }
    if (r == 4) {
        p->in |= 1ull << s;
        return true;
    }
    if (r == 0) return true;
    if (r > 4) {
        refuse(p, "operand of rank above 4");
        return false;
    }
    if (foldable(L, e)) {
        p->bc |= 1ull << s;
        return true;
    }
    if (r != 1) {
        refuse(p, "broadcast operand of rank 2 or 3 is not a constant");
        return false;
    }
    p->rs |= 1ull << s;
    return true;
}

static bool const_vec4(const lay *L, plan *p, gn_id id, uint32_t s, const char *why)
{
    int64_t v[8];
    int32_t n = 0, r = 0;
    if (s >= L->g->nodes[id].n_in || !const_ints(L, L->g->nodes[id].in[s], v, 8, &n, &r) || n != 4 || r != 1) {
        refuse(p, why);
        return false;
    }
    return true;
}

/* Axes in slot s: a constant scalar or vector of axes in [-4, 4) (*removed
 * gets the set), or, unless known is required, an int scalar or vector
 * computed at run time (remapped by a DataFormatDimMap; *removed is 0). */
static bool axis_operand(const lay *L, plan *p, gn_id id, uint32_t s, bool known, unsigned *removed)
{
    int64_t v[8];
    int32_t n = 0, r = 0;
    *removed = 0;
    const gn__node *nd = &L->g->nodes[id];
    if (s >= nd->n_in || s >= MAX_IN) {
        refuse(p, "unexpected input count");
        return false;
    }
    if (!is_const_node(L, nd->in[s])) {
        int32_t rk = rank_of(L, nd->in[s]), dt = dtype_of(L, nd->in[s]);
        if (known || rk < 0 || rk > 1 || (dt != DT_INT32 && dt != DT_INT64)) {
            refuse(p, "axis is not a constant");
            return false;
        }
        p->ax |= 1ull << s;
        return true;
    }
    if (!const_ints(L, nd->in[s], v, 8, &n, &r) || r > 1) {
        refuse(p, "axis is not a constant");
        return false;
    }
    p->ax |= 1ull << s;
    for (int32_t i = 0; i < n; i++) {
        if (v[i] < -4 || v[i] >= 4) {
            refuse(p, "axis out of range");
            return false;
        }
        *removed |= 1u << (v[i] < 0 ? v[i] + 4 : v[i]);
    }
    return true;
}

static void plan_agnostic(const lay *L, gn_id id, int kind, plan *p)
{
    gn_graph *g = L->g;
    const gn__node *n = &g->nodes[id];
    /* a candidate only when a converted producer feeds it a layout tensor
     * (or a shape vector in the destination order), or when a user Transpose
     * that undoes ours does (TensorFlow's IsAfterDstToSrcTransform): the
     * transpose inserted before it cancels against the user's */
    bool adjacent = false;
    for (uint32_t s = 0; s < n->n_in; s++)
        if (layout_edge(L, n->in[s]) || vec_edge(L, n->in[s]) || cancellable(L, n->in[s])) adjacent = true;
    if (!adjacent) {
        p->quiet = true;
        return;
    }
    if (L->depth[id]) {
        refuse(p, "inside a while loop frame");
        return;
    }
    if (!on_device(L, id)) {
        refuse(p, L->gpu ? "not GPU-placed" : "not CPU-placed");
        return;
    }
    if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) {
        refuse(p, "preserved node");
        return;
    }
    if (n->n_use == 0 && n->n_cuse == 0) {
        p->quiet = true;
        return;
    }
    if (n->n_in > MAX_IN) {
        refuse(p, "more than 64 inputs");
        return;
    }
    switch (kind) {
    case A_UNARY:
        if (n->n_in != 1 || !need4(L, p, id, 0)) return;
        p->out = 1;
        break;
    case A_BINARY:
    case A_SELECT:
        if (n->n_in != (kind == A_SELECT ? 3u : 2u)) {
            refuse(p, "unexpected input count");
            return;
        }
        for (uint32_t s = 0; s < n->n_in; s++)
            if (!elementwise_operand(L, p, id, s)) return;
        if (kind == A_SELECT && !strcmp(gn__node_op(g, id), "Select") && !((p->in >> 0) & 1) &&
            rank_of(L, n->in[0]) != 0) {
            refuse(p, "Select condition is a vector");
            return;
        }
        p->out = 1;
        break;
    case A_ADDN:
        for (uint32_t s = 0; s < n->n_in; s++)
            if (!need4(L, p, id, s)) return;
        p->out = 1;
        break;
    case A_CONCAT:
    case A_CONCATV2: {
        if (n->n_in < 2) {
            refuse(p, "unexpected input count");
            return;
        }
        uint32_t ax = kind == A_CONCAT ? 0 : n->n_in - 1;
        unsigned rm;
        if (!axis_operand(L, p, id, ax, false, &rm)) return;
        for (uint32_t s = 0; s < n->n_in; s++)
            if (s != ax && !need4(L, p, id, s)) return;
        p->out = 1;
        break;
    }
    case A_SPLIT:
    case A_SPLITV: {
        uint32_t val = kind == A_SPLIT ? 1 : 0, ax = kind == A_SPLIT ? 0 : 2;
        unsigned rm;
        if (n->n_in != (kind == A_SPLIT ? 2u : 3u) || !axis_operand(L, p, id, ax, false, &rm)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        if (!need4(L, p, id, val)) return;
        p->out = ~0ull;
        break;
    }
    case A_PAD:
        if (n->n_in < 2 || !vec_operand(L, p, id, 1, true, "paddings are not a [4, 2] tensor")) return;
        if (!need4(L, p, id, 0)) return;
        p->out = 1;
        break;
    case A_REDUCE: {
        unsigned rm;
        bool keep = false;
        (void)gn__attr_get_bool(g, id, "keep_dims", &keep);
        if (n->n_in != 2 || !axis_operand(L, p, id, 1, !keep, &rm)) return;
        if (!keep && !order_kept(L, rm)) {
            refuse(p, "reduction output depends on the layout");
            return;
        }
        if (!need4(L, p, id, 0)) return;
        p->out = keep ? 1 : 0;
        break;
    }
    case A_SQUEEZE: {
        const Tensorflow__AttrValue *a = gn__node_attr(g, id, "squeeze_dims");
        unsigned rm = 0;
        if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !a->list || a->list->n_i == 0) {
            refuse(p, "squeeze_dims not given");
            return;
        }
        for (size_t i = 0; i < a->list->n_i; i++) {
            int64_t d = a->list->i[i];
            if (d < -4 || d >= 4) {
                refuse(p, "axis out of range");
                return;
            }
            rm |= 1u << (d < 0 ? d + 4 : d);
        }
        if (!order_kept(L, rm)) {
            refuse(p, "squeezed output depends on the layout");
            return;
        }
        if (!need4(L, p, id, 0)) return;
        p->out = 0;
        break;
    }
    case A_SLICE:
        if (n->n_in != 3 || !vec_operand(L, p, id, 1, false, "begin/size are not 4-vectors") ||
            !vec_operand(L, p, id, 2, false, "begin/size are not 4-vectors") || !need4(L, p, id, 0))
            return;
        p->out = 1;
        break;
    case A_SSLICE: {
        int64_t m = 0;
        const char *masks[] = {"ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
        for (int i = 0; i < 3; i++)
            if (gn__attr_get_int(g, id, masks[i], &m) && m != 0) {
                refuse(p, "ellipsis, new-axis or shrink-axis mask set");
                return;
            }
        if (n->n_in != 4) {
            refuse(p, "unexpected input count");
            return;
        }
        for (uint32_t s = 1; s <= 3; s++)
            if (!const_vec4(L, p, id, s, "begin/end/strides are not constant 4-vectors")) return;
        p->vec |= 0xeull;
        if (!need4(L, p, id, 0)) return;
        p->out = 1;
        break;
    }
    case A_TILE:
        if (n->n_in != 2 || !vec_operand(L, p, id, 1, false, "multiples are not a 4-vector") || !need4(L, p, id, 0))
            return;
        p->out = 1;
        break;
    case A_REVERSE: {
        unsigned rm;
        if (n->n_in != 2 || !axis_operand(L, p, id, 1, false, &rm) || !need4(L, p, id, 0)) return;
        p->out = 1;
        break;
    }
    case A_GRAD2:
        if (n->n_in != 2 || !need4(L, p, id, 0) || !need4(L, p, id, 1)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        p->out = 1;
        break;
    case A_SHAPE:
        if (n->n_in != 1 || !layout_edge(L, n->in[0]) || !need4(L, p, id, 0)) {
            if (!p->why) refuse(p, "input not in the destination format");
            return;
        }
        p->vout = 1;
        break;
    case A_SHAPEN:
    case A_IDENTITYN:
        /* the ports fed in the destination format (or through a cancelling user Transpose) */
        for (uint32_t s = 0; s < n->n_in && s < 63; s++) {
            gn__edge e = n->in[s];
            if ((layout_edge(L, e) || cancellable(L, e)) && rank_of(L, e) == 4) {
                p->in |= 1ull << s;
                if (kind == A_SHAPEN) p->vout |= 1ull << s;
                else p->out |= 1ull << s;
            }
        }
        if (!p->in) p->quiet = true;
        break;
    case A_FILL:
        /* dims from a converted Shape: the output is made in the destination format */
        if (n->n_in != 2 || !vec_edge(L, n->in[0]) || rank_of(L, (gn__edge){id, 0}) != 4) {
            refuse(p, "dims not from a converted Shape or output not 4-D");
            return;
        }
        p->vec = 1;
        p->out = 1;
        break;
    case A_SWITCH:
        if (n->n_in != 2 || !need4(L, p, id, 0)) {
            if (!p->why) refuse(p, "unexpected input count");
            return;
        }
        p->out = 3;
        break;
    case A_MERGE:
        /* every input must arrive in the destination format */
        for (uint32_t s = 0; s < n->n_in; s++)
            if (!layout_edge(L, n->in[s]) && !cancellable(L, n->in[s])) {
                refuse(p, "an input is not in the destination format");
                return;
            }
        for (uint32_t s = 0; s < n->n_in; s++)
            if (!need4(L, p, id, s)) return;
        p->out = 1;
        break;
    default:
        p->quiet = true;
        return;
    }
}

/* Decides every node; fills conv/in_mask/out_mask and the dtypes. */
static gn_status plan_all(lay *L, const gn_id *order, uint32_t n_order, uint32_t *n_conv)
{
    gn_graph *g = L->g;
    gn__pass_ctx *c = L->c;
    bool en_s = gn__pattern_enabled(c, "layout.sensitive"), en_a = gn__pattern_enabled(c, "layout.agnostic");
    *n_conv = 0;
    for (uint32_t k = 0; k < n_order; k++) {
        if ((k & 1023) == 0 && gn__pass_deadline_passed(c)) break;
        gn_id id = order[k];
        int kind = op_kind_of(gn__node_op(g, id));
        if (kind == K_NONE) continue;
        bool sens = is_sensitive(kind);
        if (sens ? !en_s : !en_a) continue;
        plan p = {0, 0, 0, 0, 0, 0, 0, NULL, false};
        if (sens) plan_sensitive(L, id, kind, &p);
        else plan_agnostic(L, id, kind, &p);
        if (p.quiet) continue;
        /* dtypes of layout inputs must be known (the Transpose's T) */
        const gn__node *n = &g->nodes[id];
        if (!p.why) {
            for (uint32_t s = 0; s < n->n_in && s < MAX_IN; s++) {
                if (!(((p.in | p.rs | p.vec | p.ax) >> s) & 1)) continue;
                int32_t dt = dtype_of(L, n->in[s]);
                if (!dt) {
                    p.why = "unknown dtype";
                    break;
                }
                L->in_dt[L->in_off[id] + s] = dt;
            }
        }
        if (!p.why) {
            uint32_t no = L->out_off[id + 1] - L->out_off[id];
            for (uint32_t o = 0; o < no; o++) {
                uint32_t b = o < 63 ? o : 63;
                if (!(((p.out | p.vout) >> b) & 1)) continue;
                int32_t dt = dtype_of(L, (gn__edge){id, o});
                if (!dt) {
                    p.why = "unknown dtype";
                    break;
                }
                L->out_dt[L->out_off[id] + o] = dt;
            }
        }
        if (p.why) {
            gn__pass_refused(c, sens ? "layout.sensitive" : "layout.agnostic", g, id, "%s", p.why);
            continue;
        }
        L->conv[id] = (uint8_t)kind;
        L->in_mask[id] = p.in;
        L->out_mask[id] = p.out;
        L->bc_mask[id] = p.bc;
        L->rs_mask[id] = p.rs;
        L->vec_mask[id] = p.vec;
        L->ax_mask[id] = p.ax;
        L->vout_mask[id] = p.vout;
        (*n_conv)++;
    }
    return GN_OK;
}

/* ---- building ----------------------------------------------------------------------------------- */
/* "<base><rest>" or, when taken, "<base><rest>_<k>" with the smallest free k */
static const char *fresh_name(lay *L, const char *fmt_base, uint32_t a, uint32_t b, bool two, const char *what)
{
    if (two) snprintf(L->name, sizeof L->name, "%s-%u-%u-%s-LayoutOptimizer", fmt_base, a, b, what);
    else snprintf(L->name, sizeof L->name, "%s-%u-%s-LayoutOptimizer", fmt_base, a, what);
    if (gn__graph_find(L->g, L->name) == GN_NONE) return L->name;
    size_t len = strlen(L->name);
    for (uint32_t k = 1;; k++) {
        snprintf(L->name + len, sizeof L->name - len, "_%u", k);
        if (gn__graph_find(L->g, L->name) == GN_NONE) return L->name;
    }
}

static gn_status add_node(lay *L, const char *name, const char *op, gn_id device_of, gn_id *out)
{
    GN_TRY(gn__node_add(L->g, name, op, out));
    L->g->nodes[*out].device = L->g->nodes[device_of].device;
    return GN_OK;
}

static gn_status add_const(lay *L, const char *name, const gn__tensor *t, gn_id device_of, gn_id *out)
{
    GN_TRY(add_node(L, name, "Const", device_of, out));
    GN_TRY(gn__node_set_attr_type(L->g, *out, "dtype", t->dtype));
    Tensorflow__TensorProto *p = NULL;
    GN_TRY(gn__tensor_to_proto(t, gn__graph_value_allocator(L->g), &p, L->c->err));
    return gn__node_set_attr_tensor(L->g, *out, "value", p);
}

/* Transpose(e, p) named name, its perm "<name>-PermConst<A>To<B>-LayoutOptimizer". */
static gn_status add_transpose(lay *L, gn__edge e, const int *p, int32_t dt, gn_id device_of, const char *from,
                               const char *to, gn_id *out)
{
    char tname[2048];
    snprintf(tname, sizeof tname, "%.2000s", L->name);
    GN_TRY(add_node(L, tname, "Transpose", device_of, out));
    GN_TRY(gn__node_set_attr_type(L->g, *out, "T", dt));
    GN_TRY(gn__node_set_attr_type(L->g, *out, "Tperm", DT_INT32));
    GN_TRY(gn__node_add_input(L->g, *out, e));
    int32_t pv[4] = {p[0], p[1], p[2], p[3]};
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT_INT32;
    t.rank = 1;
    t.dims[0] = 4;
    t.data = pv;
    t.nbytes = sizeof pv;
    snprintf(L->name, sizeof L->name, "%.2000s-PermConst%sTo%s-LayoutOptimizer", tname, from, to);
    if (gn__graph_find(L->g, L->name) != GN_NONE) {
        size_t len = strlen(L->name);
        for (uint32_t k = 1;; k++) {
            snprintf(L->name + len, sizeof L->name - len, "_%u", k);
            if (gn__graph_find(L->g, L->name) == GN_NONE) break;
        }
    }
    gn_id pc = GN_NONE;
    GN_TRY(add_const(L, L->name, &t, device_of, &pc));
    return gn__node_add_input(L->g, *out, (gn__edge){pc, 0});
}

/* Drops a constant nothing reads any more (not preserved). */
static gn_status drop_if_unused(lay *L, gn_id id)
{
    gn__node *n = &L->g->nodes[id];
    if (!gn__node_live(L->g, id) || n->n_use || n->n_cuse || (n->flags & GN__NODE_PRESERVE)) return GN_OK;
    if (strcmp(gn__node_op(L->g, id), "Const") != 0 && strcmp(gn__node_op(L->g, id), "Transpose") != 0) return GN_OK;
    return gn__node_remove(L->g, id);
}

/* Transposes a constant of rank <= 4 (lower ranks right-aligned, padded with
 * ones) by p into a fresh rank-4 tensor at out (caller frees out->data). */
static bool transpose_const(const gn__tensor *t, const int *p, gn__tensor *out)
{
    int64_t n = gn__tensor_numel(t);
    if (t->rank > 4 || t->dtype == 7 /* string */ || n <= 0) return false;
    size_t es = t->nbytes / (size_t)n;
    if (es * (size_t)n != t->nbytes || es == 0) return false;
    int64_t d[4];
    for (int i = 0; i < 4; i++) d[i] = 1;
    for (int i = 0; i < t->rank; i++) d[4 - t->rank + i] = t->dims[i];
    int64_t od[4], st[4];
    st[3] = 1;
    for (int i = 2; i >= 0; i--) st[i] = st[i + 1] * d[i + 1];
    for (int i = 0; i < 4; i++) od[i] = d[p[i]];
    unsigned char *o = malloc(t->nbytes);
    if (!o) return false;
    const unsigned char *x = t->data;
    size_t w = 0;
    for (int64_t a = 0; a < od[0]; a++)
        for (int64_t b = 0; b < od[1]; b++)
            for (int64_t c = 0; c < od[2]; c++)
                for (int64_t e = 0; e < od[3]; e++) {
                    int64_t idx[4] = {0, 0, 0, 0};
                    idx[p[0]] = a, idx[p[1]] = b, idx[p[2]] = c, idx[p[3]] = e;
                    int64_t off = idx[0] * st[0] + idx[1] * st[1] + idx[2] * st[2] + idx[3] * st[3];
                    memcpy(o + w, x + (size_t)off * es, es);
                    w += es;
                }
    memset(out, 0, sizeof *out);
    out->dtype = t->dtype;
    out->rank = 4;
    for (int i = 0; i < 4; i++) out->dims[i] = od[i];
    out->data = o;
    out->nbytes = t->nbytes;
    return true;
}

/* Feeds layout slot s of converted node v in the destination format. */
static gn_status fix_input(lay *L, gn_id v, uint32_t s, bool bc)
{
    gn_graph *g = L->g;
    gn__edge e = g->nodes[v].in[s];
    if (!bc && layout_edge(L, e)) return GN_OK;
    const char *vn = gn__node_name(g, v);
    char base[1024];
    snprintf(base, sizeof base, "%s", vn);
    char tr[32];
    snprintf(tr, sizeof tr, "Transpose%sTo%s", L->src, L->dst);
    if (!bc && cancellable(L, e)) {
        gn_id t = e.node;
        GN_TRY(gn__node_set_input(g, v, s, g->nodes[t].in[0]));
        gn__pass_rewrote(L->c, "layout.cancel", g, v, "input %u read before user Transpose '%s'", s, gn__node_name(g, t));
        gn_id pc = g->nodes[t].in[1].node;
        GN_TRY(drop_if_unused(L, t));
        if (!gn__node_live(g, t)) GN_TRY(drop_if_unused(L, pc));
        return GN_OK;
    }
    if (foldable(L, e)) {
        gn__tensor t, o;
        if (const_value(L, e.node, &t)) {
            bool ok = transpose_const(&t, L->perm, &o);
            gn__tensor_release(&t);
            if (ok) {
                fresh_name(L, base, s, 0, false, tr);
                gn_id nc = GN_NONE;
                gn_status st = add_const(L, L->name, &o, v, &nc);
                free(o.data);
                GN_TRY(st);
                GN_TRY(gn__node_set_input(g, v, s, (gn__edge){nc, 0}));
                gn__pass_rewrote(L->c, "layout.fold_const", g, v, "input %u: constant '%s' transposed to %s", s,
                                 gn__node_name(g, e.node), L->dst);
                return drop_if_unused(L, e.node);
            }
        }
    }
    if (bc) return gn__fail(L->c->err, GN_ERR_INTERNAL, "layout: broadcast constant of '%s' not folded", vn);
    /* one Transpose per producer output, shared by its converted consumers on one device */
    gn_id t = e.node < L->n0 ? L->tr_of[e.node] : GN_NONE;
    if (t != GN_NONE && L->tr_idx[e.node] == e.index && g->nodes[t].device == g->nodes[v].device)
        return gn__node_set_input(g, v, s, (gn__edge){t, 0});
    fresh_name(L, base, s, 0, false, tr);
    GN_TRY(add_transpose(L, e, L->perm, L->in_dt[L->in_off[v] + s], v, L->src, L->dst, &t));
    if (e.node < L->n0 && L->tr_of[e.node] == GN_NONE) {
        L->tr_of[e.node] = t;
        L->tr_idx[e.node] = e.index;
    }
    return gn__node_set_input(g, v, s, (gn__edge){t, 0});
}

/* A vector operand broadcast along the last source dimension: Reshape it so
 * that it lines up with that dimension in the destination format ([-1, 1, 1]
 * for NHWC to NCHW, [-1, 1] for NCHW to NHWC). */
static gn_status reshape_input(lay *L, gn_id v, uint32_t s)
{
    gn_graph *g = L->g;
    gn__edge e = g->nodes[v].in[s];
    char base[1024], tag[64];
    snprintf(base, sizeof base, "%s", gn__node_name(g, v));
    snprintf(tag, sizeof tag, "Reshape%sTo%s", L->src, L->dst);
    fresh_name(L, base, s, 0, false, tag);
    char rname[2048];
    snprintf(rname, sizeof rname, "%.2000s", L->name);
    gn_id rs = GN_NONE;
    GN_TRY(add_node(L, rname, "Reshape", v, &rs));
    GN_TRY(gn__node_set_attr_type(L->g, rs, "T", L->in_dt[L->in_off[v] + s]));
    GN_TRY(gn__node_set_attr_type(L->g, rs, "Tshape", DT_INT32));
    GN_TRY(gn__node_add_input(g, rs, e));
    int32_t shp[4] = {-1, 1, 1, 1};
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT_INT32;
    t.rank = 1;
    t.dims[0] = 4 - L->axis_map[3];
    t.data = shp;
    t.nbytes = (size_t)t.dims[0] * sizeof shp[0];
    snprintf(L->name, sizeof L->name, "%.2000s-Shape-LayoutOptimizer", rname);
    gn_id sc = GN_NONE;
    if (gn__graph_find(g, L->name) != GN_NONE) return gn__fail(L->c->err, GN_ERR_GRAPH, "layout: name '%s' taken", L->name);
    GN_TRY(add_const(L, L->name, &t, v, &sc));
    GN_TRY(gn__node_add_input(g, rs, (gn__edge){sc, 0}));
    return gn__node_set_input(g, v, s, (gn__edge){rs, 0});
}

/* Replaces input slot s (an int constant) of v by a new constant of values x. */
static gn_status replace_int_const(lay *L, gn_id v, uint32_t s, const int64_t *x, int32_t n, int32_t rank,
                                   const int64_t *dims, const char *what)
{
    gn_graph *g = L->g;
    gn__edge e = g->nodes[v].in[s];
    gn__tensor t;
    if (!const_value(L, e.node, &t)) return gn__fail(L->c->err, GN_ERR_INTERNAL, "layout: constant input vanished");
    int32_t dt = t.dtype;
    gn__tensor_release(&t);
    int64_t b64[16];
    int32_t b32[16];
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
    for (int32_t i = 0; i < n; i++) {
        b64[i] = x[i];
        b32[i] = (int32_t)x[i];
    }
    t.data = dt == DT_INT32 ? (void *)b32 : (void *)b64;
    t.nbytes = (size_t)n * (dt == DT_INT32 ? 4u : 8u);
    char base[1024], tag[64];
    snprintf(base, sizeof base, "%s", gn__node_name(g, v));
    snprintf(tag, sizeof tag, "%s%sTo%s", what, L->src, L->dst);
    fresh_name(L, base, s, 0, false, tag);
    gn_id nc = GN_NONE;
    GN_TRY(add_const(L, L->name, &t, v, &nc));
    GN_TRY(gn__node_set_input(g, v, s, (gn__edge){nc, 0}));
    return drop_if_unused(L, e.node);
}

static gn_status remap_axes(lay *L, gn_id v, uint32_t s)
{
    int64_t x[8], dims[1];
    int32_t n = 0, r = 0;
    if (!const_ints(L, L->g->nodes[v].in[s], x, 8, &n, &r)) return gn__fail(L->c->err, GN_ERR_INTERNAL, "layout: axis");
    for (int32_t i = 0; i < n; i++) x[i] = L->axis_map[x[i] < 0 ? x[i] + 4 : x[i]];
    dims[0] = n;
    return replace_int_const(L, v, s, x, n, r, dims, "DataFormatDimMap");
}

/* DataFormatVecPermute / DataFormatDimMap node `name` of e from format `from` to `to`. */
static gn_status add_format_node(lay *L, const char *name, const char *op, gn__edge e, int32_t dt, gn_id device_of,
                                 const char *from, const char *to, gn_id *out)
{
    GN_TRY(add_node(L, name, op, device_of, out));
    GN_TRY(gn__node_set_attr_type(L->g, *out, "T", dt));
    GN_TRY(gn__node_set_attr_string(L->g, *out, "src_format", from));
    GN_TRY(gn__node_set_attr_string(L->g, *out, "dst_format", to));
    return gn__node_add_input(L->g, *out, e);
}

/* Feeds slot s (a per-dimension vector or [4, 2] pairs) of v in the
 * destination order: a converted Shape's output as it is, a constant
 * permuted now, anything else through a DataFormatVecPermute. */
static gn_status fix_vec(lay *L, gn_id v, uint32_t s)
{
    gn_graph *g = L->g;
    gn__edge e = g->nodes[v].in[s];
    if (vec_edge(L, e)) return GN_OK;
    if (is_const_node(L, e) && !(g->nodes[e.node].flags & GN__NODE_PRESERVE)) {
        int64_t x[16], y[16], dims[2] = {4, 2};
        int32_t n = 0, r = 0;
        if (!const_ints(L, e, x, 16, &n, &r) || (n != 4 && n != 8))
            return gn__fail(L->c->err, GN_ERR_INTERNAL, "layout: vector operand %u of '%s'", s, gn__node_name(g, v));
        int k = n / 4;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < k; j++) y[k * i + j] = x[k * L->perm[i] + j];
        return replace_int_const(L, v, s, y, n, r, dims, "DataFormatVecPermute");
    }
    char base[1024], tag[64];
    snprintf(base, sizeof base, "%s", gn__node_name(g, v));
    snprintf(tag, sizeof tag, "DataFormatVecPermute%sTo%s", L->src, L->dst);
    fresh_name(L, base, s, 0, false, tag);
    gn_id f = GN_NONE;
    GN_TRY(add_format_node(L, L->name, "DataFormatVecPermute", e, L->in_dt[L->in_off[v] + s], v, L->src, L->dst, &f));
    return gn__node_set_input(g, v, s, (gn__edge){f, 0});
}

/* Axes in slot s of v remapped to the destination format: a constant now,
 * anything else through a DataFormatDimMap. */
static gn_status fix_axis(lay *L, gn_id v, uint32_t s)
{
    gn_graph *g = L->g;
    gn__edge e = g->nodes[v].in[s];
    if (is_const_node(L, e) && !(g->nodes[e.node].flags & GN__NODE_PRESERVE)) return remap_axes(L, v, s);
    char base[1024], tag[64];
    snprintf(base, sizeof base, "%s", gn__node_name(g, v));
    snprintf(tag, sizeof tag, "DataFormatDimMap%sTo%s", L->src, L->dst);
    fresh_name(L, base, s, 0, false, tag);
    gn_id f = GN_NONE;
    GN_TRY(add_format_node(L, L->name, "DataFormatDimMap", e, L->in_dt[L->in_off[v] + s], v, L->src, L->dst, &f));
    return gn__node_set_input(g, v, s, (gn__edge){f, 0});
}

static gn_status permute_list_attr(lay *L, gn_id v, const char *key, int pairs)
{
    const Tensorflow__AttrValue *a = gn__node_attr(L->g, v, key);
    if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !a->list) return GN_OK;
    size_t n = a->list->n_i;
    if (n != (size_t)(4 * pairs)) return GN_OK;
    int64_t x[8], y[8];
    memcpy(x, a->list->i, n * sizeof x[0]);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < pairs; k++) y[i * pairs + k] = x[L->perm[i] * pairs + k];
    return gn__node_set_attr_ints(L->g, v, key, y, n);
}

static gn_status permute_mask(lay *L, gn_id v, const char *key)
{
    int64_t m = 0;
    if (!gn__attr_get_int(L->g, v, key, &m) || m == 0) return GN_OK;
    int64_t o = 0;
    for (int i = 0; i < 4; i++)
        if ((m >> L->perm[i]) & 1) o |= 1ll << i;
    return gn__node_set_attr_int(L->g, v, key, o);
}

/* Rewrites converted node v: inputs, layout operands, attributes. */
static gn_status convert_node(lay *L, gn_id v)
{
    gn_graph *g = L->g;
    int kind = L->conv[v];
    uint32_t n_in = g->nodes[v].n_in;
    for (uint32_t s = 0; s < n_in && s < MAX_IN; s++) {
        if ((L->in_mask[v] >> s) & 1) GN_TRY(fix_input(L, v, s, false));
        else if ((L->bc_mask[v] >> s) & 1) GN_TRY(fix_input(L, v, s, true));
        else if ((L->rs_mask[v] >> s) & 1) GN_TRY(reshape_input(L, v, s));
        else if ((L->vec_mask[v] >> s) & 1) GN_TRY(fix_vec(L, v, s));
        else if ((L->ax_mask[v] >> s) & 1) GN_TRY(fix_axis(L, v, s));
    }
    switch (kind) {
    case S_CONV:
    case S_POOL:
    case S_POOLV2:
    case S_BIAS:
    case S_FBN:
    case S_SPACE:
    case S_BPINPUT:
    case S_BPFILTER:
    case S_FBNGRAD:
    case S_POOLGRAD:
    case S_POOLGRADV2:
    case S_AVGPOOLGRAD:
    case S_BIASGRAD:
        GN_TRY(gn__node_set_attr_string(L->g, v, "data_format", L->dst));
        GN_TRY(permute_list_attr(L, v, "strides", 1));
        GN_TRY(permute_list_attr(L, v, "ksize", 1));
        GN_TRY(permute_list_attr(L, v, "dilations", 1));
        GN_TRY(permute_list_attr(L, v, "explicit_paddings", 2));
        break;
    case A_SQUEEZE: {
        const Tensorflow__AttrValue *a = gn__node_attr(g, v, "squeeze_dims");
        int64_t x[8];
        size_t n = a->list->n_i < 8 ? a->list->n_i : 8;
        for (size_t i = 0; i < n; i++) {
            int64_t d = a->list->i[i];
            x[i] = L->axis_map[d < 0 ? d + 4 : d];
        }
        GN_TRY(gn__node_set_attr_ints(L->g, v, "squeeze_dims", x, n));
        break;
    }
    case A_SSLICE:
        GN_TRY(permute_mask(L, v, "begin_mask"));
        GN_TRY(permute_mask(L, v, "end_mask"));
        break;
    default: break;
    }
    if (gn__node_attr(g, v, "_output_shapes")) GN_TRY(gn__node_remove_attr(g, v, "_output_shapes"));
    return GN_OK;
}

/* One inverse Transpose per layout output port for the consumers that want
 * the source format. */
static gn_status fix_outputs(lay *L, gn_id v)
{
    gn_graph *g = L->g;
    uint32_t no = L->out_off[v + 1] - L->out_off[v];
    char base[1024], tr[32], vp[48];
    snprintf(base, sizeof base, "%s", gn__node_name(g, v));
    snprintf(tr, sizeof tr, "Transpose%sTo%s", L->dst, L->src);
    snprintf(vp, sizeof vp, "DataFormatVecPermute%sTo%s", L->dst, L->src);
    for (uint32_t o = 0; o < no; o++) {
        bool vec = vec_edge(L, (gn__edge){v, o});
        if (!vec && !layout_edge(L, (gn__edge){v, o})) continue;
        gn_id t = GN_NONE;
        for (uint32_t i = 0; i < g->nodes[v].n_use;) {
            gn__use u = g->nodes[v].use[i];
            gn__edge e = g->nodes[u.node].in[u.slot];
            bool wants_dst = u.node < L->n0 && L->conv[u.node] && u.slot < MAX_IN &&
                             (((vec ? L->vec_mask[u.node] : L->in_mask[u.node]) >> u.slot) & 1);
            if (e.index != o || wants_dst || u.node == t) {
                i++;
                continue;
            }
            if (t == GN_NONE) {
                fresh_name(L, base, o, 0, true, vec ? vp : tr);
                if (vec)
                    GN_TRY(add_format_node(L, L->name, "DataFormatVecPermute", (gn__edge){v, o},
                                           L->out_dt[L->out_off[v] + o], v, L->dst, L->src, &t));
                else
                    GN_TRY(add_transpose(L, (gn__edge){v, o}, L->inv, L->out_dt[L->out_off[v] + o], v, L->dst, L->src,
                                         &t));
                continue; /* the use list grew: rescan from i */
            }
            GN_TRY(gn__node_set_input(g, u.node, u.slot, (gn__edge){t, 0}));
            /* set_input removed this use from v's list: do not advance */
        }
    }
    return GN_OK;
}

/* ---- the pass ---------------------------------------------------------------------------------- */
/* v1 while loops: a node's frame depth is its deepest input's, one more after
 * an Enter, one less after an Exit. Nodes inside a loop are not converted (a
 * new constant would have to join the frame); the root frame is (new nodes
 * there have no inputs from inside a loop). */
static void frame_depths(lay *L, const gn_id *order, uint32_t n_order)
{
    gn_graph *g = L->g;
    for (uint32_t k = 0; k < n_order; k++) {
        gn_id v = order[k];
        const gn__node *n = &g->nodes[v];
        uint32_t d = 0;
        for (uint32_t i = 0; i < n->n_in; i++)
            if (L->depth[n->in[i].node] > d) d = L->depth[n->in[i].node];
        for (uint32_t i = 0; i < n->n_ctrl; i++)
            if (L->depth[n->ctrl[i]] > d) d = L->depth[n->ctrl[i]];
        const char *op = gn__node_op(g, v);
        if (n->n_in && (!strcmp(op, "Enter") || !strcmp(op, "RefEnter"))) d = L->depth[n->in[0].node] + 1u;
        else if (n->n_in && (!strcmp(op, "Exit") || !strcmp(op, "RefExit")))
            d = L->depth[n->in[0].node] ? L->depth[n->in[0].node] - 1u : 0;
        L->depth[v] = (uint16_t)(d < 65535 ? d : 65535);
    }
}

/* Source and destination formats; false when there is nothing to convert. */
static bool choose_formats(lay *L)
{
    gn__pass_ctx *c = L->c;
    gn_graph *g = L->g;
    bool any_gpu = false;
    const int32_t cc = c->target->kind == GN_TARGET_GPU ? c->target->compute_capability : 0;
    const bool volta = cc >= 70, ampere = cc >= 80;
    uint32_t convs = 0, prefer_nhwc = 0;
    bool fp32_backprop = false;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i) || !gn__pass_on_gpu(c, g, i)) continue;
        any_gpu = true;
        const char *op = gn__node_op(g, i);
        int dt = 0;
        if ((!strncmp(op, "Conv2DBackprop", 14) || !strncmp(op, "Conv3DBackprop", 14)) &&
            gn__attr_get_type(g, i, "T", &dt) && dt == DT_FLOAT)
            fp32_backprop = true;
    }
    for (gn_id i = 0; any_gpu && i < g->n_nodes; i++) {
        if (!gn__node_live(g, i) || !gn__pass_on_gpu(c, g, i)) continue;
        const char *op = gn__node_op(g, i);
        if (strcmp(op, "Conv2D") != 0 && strcmp(op, "Conv3D") != 0) continue;
        convs++;
        int dt = 0;
        if (!gn__attr_get_type(g, i, "T", &dt)) continue;
        /* TensorFlow's GetSrcAndDstDataFormats: float16 on Volta+, bfloat16 on
         * Ampere+, float32 on Ampere+ with TF32 (on by default) and no float32
         * backprop convolution */
        if ((volta && dt == DT_HALF) || (ampere && dt == DT_BFLOAT16) ||
            (ampere && dt == DT_FLOAT && !fp32_backprop))
            prefer_nhwc++;
    }
    if (any_gpu) {
        L->gpu = true;
        int pol = c->opts ? c->opts->layout_policy : GN_LAYOUT_POLICY_GRAPNEL;
        bool nhwc = false;
        if (pol == GN_LAYOUT_POLICY_NHWC) nhwc = true;
        else if (pol == GN_LAYOUT_POLICY_TENSORFLOW) {
            /* at least half the GPU convolutions prefer NHWC (our GPUs share
             * one compute capability): keep NHWC (convert NCHW to NHWC) */
            nhwc = convs > 0 && 2 * prefer_nhwc >= convs;
        }
        if (nhwc) set_formats(L, "NCHW", "NHWC");
        else set_formats(L, "NHWC", "NCHW");
        return true;
    }
    int cl = c->opts ? c->opts->cpu_layout_conversion : GN_CPU_LAYOUT_NO_CONVERSION;
    L->gpu = false;
    if (cl == GN_CPU_LAYOUT_NCHW_TO_NHWC) set_formats(L, "NCHW", "NHWC");
    else if (cl == GN_CPU_LAYOUT_NHWC_TO_NCHW) set_formats(L, "NHWC", "NCHW");
    else return false;
    return true;
}

static void lay_free(lay *L)
{
    free(L->conv);
    free(L->in_mask);
    free(L->out_mask);
    free(L->bc_mask);
    free(L->rs_mask);
    free(L->vec_mask);
    free(L->ax_mask);
    free(L->vout_mask);
    free(L->in_off);
    free(L->in_dt);
    free(L->depth);
    free(L->tr_of);
    free(L->tr_idx);
    free(L->out_off);
    free(L->out_dt);
}

static gn_status run(lay *L)
{
    gn_graph *g = L->g;
    gn__pass_ctx *c = L->c;
    uint32_t n = L->n0 = g->n_nodes;
    L->conv = calloc(n ? n : 1, 1);
    L->in_mask = calloc(n ? n : 1, sizeof *L->in_mask);
    L->out_mask = calloc(n ? n : 1, sizeof *L->out_mask);
    L->bc_mask = calloc(n ? n : 1, sizeof *L->bc_mask);
    L->rs_mask = calloc(n ? n : 1, sizeof *L->rs_mask);
    L->vec_mask = calloc(n ? n : 1, sizeof *L->vec_mask);
    L->ax_mask = calloc(n ? n : 1, sizeof *L->ax_mask);
    L->vout_mask = calloc(n ? n : 1, sizeof *L->vout_mask);
    L->in_off = malloc((n + 1) * sizeof *L->in_off);
    L->depth = calloc(n ? n : 1, sizeof *L->depth);
    L->tr_of = malloc((n ? n : 1) * sizeof *L->tr_of);
    L->tr_idx = calloc(n ? n : 1, sizeof *L->tr_idx);
    L->out_off = malloc((n + 1) * sizeof *L->out_off);
    if (!L->conv || !L->in_mask || !L->out_mask || !L->bc_mask || !L->rs_mask || !L->vec_mask || !L->ax_mask || !L->vout_mask || !L->depth || !L->tr_of || !L->tr_idx || !L->in_off || !L->out_off) return nomem(L);

    gn_status s = gn__graph_infer_shapes(g);
    if (s == GN_ERR_NOMEM) return nomem(L);
    if (s != GN_OK) {
        gn__pass_refused(c, "layout.sensitive", g, GN_NONE, "shape inference failed (%s): ranks unknown",
                         g->err.msg);
        gn__err_clear(&g->err);
    }
    uint32_t ti = 0, to = 0;
    for (gn_id i = 0; i < n; i++) {
        L->in_off[i] = ti;
        L->out_off[i] = to;
        if (!gn__node_live(g, i)) continue;
        ti += g->nodes[i].n_in;
        uint32_t no = gn__shape_num_outputs(g, i);
        int32_t k = gn__node_num_outputs(g, i);
        if (k > 0 && (uint32_t)k > no) no = (uint32_t)k;
        to += no;
    }
    L->in_off[n] = ti;
    L->out_off[n] = to;
    L->in_dt = calloc(ti ? ti : 1, sizeof *L->in_dt);
    L->out_dt = calloc(to ? to : 1, sizeof *L->out_dt);
    if (!L->in_dt || !L->out_dt) return nomem(L);

    for (gn_id i = 0; i < n; i++) L->tr_of[i] = GN_NONE;
    gn_id *order = NULL;
    uint32_t n_order = 0;
    GN_TRY(gn__graph_topo(g, &order, &n_order));
    frame_depths(L, order, n_order);
    uint32_t n_conv = 0;
    s = plan_all(L, order, n_order, &n_conv);
    if (s != GN_OK || n_conv == 0) {
        free(order);
        return s;
    }
    /* rewrite: inputs first (in topological order), then outputs */
    for (uint32_t k = 0; k < n_order && s == GN_OK; k++) {
        gn_id v = order[k];
        if (!L->conv[v]) continue;
        s = convert_node(L, v);
        if (s == GN_OK) {
            bool sens = is_sensitive(L->conv[v]);
            gn__pass_rewrote(c, sens ? "layout.sensitive" : "layout.agnostic", g, v, "%s to %s", L->src, L->dst);
        }
    }
    for (uint32_t k = 0; k < n_order && s == GN_OK; k++)
        if (L->conv[order[k]]) s = fix_outputs(L, order[k]);
    free(order);
    c->changed = true;
    return s;
}

gn_status gn__pass_layout(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, "layout")) return GN_OK;
    lay L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.g = g;
    if (!choose_formats(&L)) return GN_OK;
    gn_status s = run(&L);
    lay_free(&L);
    return s;
}
