/* The CUDA backend: which nodes the backend runs: the op table, the host ops,
 * and each node's attributes parsed once at compile (parse_node), which is
 * also the support check. */
#include "runtime/cuda/backend_impl.h"

static const op_info k_ops[] = {   /* sorted by name (strcmp) */
    {"Abs", OP_UNARY, GN__CU_ABS, 0},
    {"Add", OP_BINARY, GN__CU_ADD, 0},
    {"AddV2", OP_BINARY, GN__CU_ADD, 0},
    {"AvgPool", OP_POOL, 0, 0},
    {"BatchMatMulV2", OP_BMM, 0, NEED_BLAS},
    {"BiasAdd", OP_BIAS_ADD, 0, 0},
    {"Cast", OP_CAST, 0, 0},
    {"ConcatV2", OP_CONCAT, 0, 0},
    {"Conv2D", OP_CONV, 0, NEED_DNN},
    {"DepthwiseConv2dNative", OP_CONV, 1, NEED_DNN},
    {"Einsum", OP_EINSUM, 0, NEED_BLAS},
    {"Elu", OP_UNARY, GN__CU_ELU, 0},
    {"Erf", OP_UNARY, GN__CU_ERF, 0},
    {"Erfc", OP_UNARY, GN__CU_ERFC, 0},
    {"Exp", OP_UNARY, GN__CU_EXP, 0},
    {"ExpandDims", OP_EXPAND, 0, 0},
    {"Floor", OP_UNARY, GN__CU_FLOOR, 0},
    {"FusedBatchNorm", OP_BN, 0, 0},
    {"FusedBatchNormV2", OP_BN, 0, 0},
    {"FusedBatchNormV3", OP_BN, 0, 0},
    {"GatherV2", OP_GATHER, 0, 0},
    {"Grapnel>EngineOp", OP_ENGINE, 0, 0},
    {"Identity", OP_ALIAS, 0, 0},
    {"Inv", OP_UNARY, GN__CU_RECIP, 0},
    {"LeakyRelu", OP_UNARY, GN__CU_LEAKY_RELU, 0},
    {"Log", OP_UNARY, GN__CU_LOG, 0},
    {"MatMul", OP_MATMUL, 0, NEED_BLAS},
    {"MaxPool", OP_POOL, 1, 0},
    {"Maximum", OP_BINARY, GN__CU_MAX, 0},
    {"Mean", OP_REDUCE, 1, 0},
    {"Minimum", OP_BINARY, GN__CU_MIN, 0},
    {"MirrorPad", OP_PAD, 2, 0},
    {"Mul", OP_BINARY, GN__CU_MUL, 0},
    {"Neg", OP_UNARY, GN__CU_NEG, 0},
    {"NoOp", OP_NOOP, 0, 0},
    {"Pack", OP_CONCAT, 1, 0},
    {"Pad", OP_PAD, 0, 0},
    {"PadV2", OP_PAD, 1, 0},
    {"Pow", OP_BINARY, GN__CU_POW, 0},
    {"PreventGradient", OP_ALIAS, 0, 0},
    {"RealDiv", OP_BINARY, GN__CU_DIV, 0},
    {"Reciprocal", OP_UNARY, GN__CU_RECIP, 0},
    {"Relu", OP_UNARY, GN__CU_RELU, 0},
    {"Relu6", OP_UNARY, GN__CU_RELU6, 0},
    {"Reshape", OP_RESHAPE, 0, 0},
    {"Rsqrt", OP_UNARY, GN__CU_RSQRT, 0},
    {"Sigmoid", OP_UNARY, GN__CU_SIGMOID, 0},
    {"Slice", OP_SLICE, 0, 0},
    {"Snapshot", OP_ALIAS, 0, 0},
    {"Softmax", OP_SOFTMAX, 0, 0},
    {"Softplus", OP_UNARY, GN__CU_SOFTPLUS, 0},
    {"Split", OP_SPLIT, 0, 0},
    {"SplitV", OP_SPLIT, 1, 0},
    {"Sqrt", OP_UNARY, GN__CU_SQRT, 0},
    {"Square", OP_UNARY, GN__CU_SQUARE, 0},
    {"SquaredDifference", OP_BINARY, GN__CU_SQDIFF, 0},
    {"Squeeze", OP_SQUEEZE, 0, 0},
    {"StopGradient", OP_ALIAS, 0, 0},
    {"StridedSlice", OP_SLICE, 1, 0},
    {"Sub", OP_BINARY, GN__CU_SUB, 0},
    {"Sum", OP_REDUCE, 0, 0},
    {"Tanh", OP_UNARY, GN__CU_TANH, 0},
    {"Transpose", OP_TRANSPOSE, 0, 0},
    {"Unpack", OP_SPLIT, 2, 0},
    {"XlaDynamicSlice", OP_XLA, XLA_DSLICE, 0},
    {"XlaDynamicUpdateSlice", OP_XLA, XLA_DUS, 0},
    {"XlaGather", OP_XLA, XLA_GATHER, 0},
    {"XlaPad", OP_XLA, XLA_PAD, 0},
    {"_FusedConv2D", OP_CONV, 2, NEED_DNN},
    {"_FusedDepthwiseConv2dNative", OP_CONV, 3, NEED_DNN},
    {"_FusedMatMul", OP_MATMUL, 1, NEED_BLAS},
};

/* Ops evaluated on the host when the plan is made (shapes are known then),
 * when every data input is known on the host too: Const, or another of
 * these. Shape, Size and Rank need only their input's shape. This is the
 * integer shape arithmetic of Keras graphs (Shape, StridedSlice, Pack,
 * Prod, GatherV2 feeding a Reshape); the results are uploaded once per
 * plan. They run the CPU backend's kernels (src/ops/). */
static const char *const k_host_ops[] = {   /* sorted by name (strcmp) */
    "Add", "AddV2", "BroadcastTo", "Cast", "ConcatV2", "ExpandDims", "Fill", "FloorDiv", "FloorMod", "GatherV2",
    "Identity", "Max", "Maximum", "Min", "Minimum", "Mul", "Neg", "OnesLike", "Pack", "Prod", "Range", "Rank",
    "RealDiv", "Reshape", "Shape", "Size", "Slice", "Split", "SplitV", "Squeeze", "StridedSlice", "Sub", "Sum",
    "Tile", "Transpose", "Unpack", "ZerosLike",
};

static int str_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

bool gn__cuda_is_host_op(const char *op)
{
    return bsearch(op, k_host_ops, GN__ARRAY_LEN(k_host_ops), sizeof k_host_ops[0], str_cmp) != NULL &&
           gn__kernel_for(op) != NULL;
}

bool gn__cuda_is_shape_op(const char *op)
{
    return !strcmp(op, "Shape") || !strcmp(op, "Size") || !strcmp(op, "Rank");
}

const op_info gn__cuda_host_info = {"(host)", OP_HOST, 0, 0};

static int op_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const op_info *)elem)->name);
}

static const op_info *op_find(const char *op)
{
    return bsearch(op, k_ops, GN__ARRAY_LEN(k_ops), sizeof k_ops[0], op_cmp);
}

/* ---- attrs ----------------------------------------------------------------- */
const Tensorflow__AttrValue__ListValue *gn__cuda_attr_list(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST ? a->list : NULL;
}

static bool attr_str_is(const gn_graph *g, gn_id id, const char *key, const char *dflt, const char *want)
{
    const char *s = NULL;
    size_t n = 0;
    if (!gn__attr_get_string(g, id, key, &s, &n)) {
        s = dflt;
        n = strlen(dflt);
    }
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

static bool list_str_eq(const ProtobufCBinaryData *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len == n && !memcmp(s->data, lit, n);
}

/* Is node id's output known on the host when a plan is made (a Const, or a
 * host op over such values)? Graph-only check, for supports(). */
bool gn__cuda_host_known(const gn_graph *g, gn_id id, int depth)
{
    const char *op = gn__node_op(g, id);
    if (!strcmp(op, "Const") || !strcmp(op, "HostConst")) return true;
    if (depth > 32 || !gn__cuda_is_host_op(op)) return false;
    if (gn__cuda_is_shape_op(op)) return true;
    const gn__node *nd = gn__node_at(g, id);
    for (uint32_t i = 0; i < nd->n_in; i++)
        if (!gn__cuda_host_known(g, nd->in[i].node, depth + 1)) return false;
    return true;
}

/* Is data input `slot` of node id known on the host at plan time? */
bool gn__cuda_input_on_host(const gn_graph *g, gn_id id, uint32_t slot, const hctx *hc)
{
    const gn__node *nd = gn__node_at(g, id);
    if (slot >= nd->n_in) return false;
    if (!hc) return gn__cuda_host_known(g, nd->in[slot].node, 0);
    if (gn__sig_feed_index(hc->sig, hc->has_feed, nd->in[slot]) >= 0) return false;
    return hc->host[nd->in[slot].node] != 0;
}

/* Parses fused_ops of _FusedMatMul / _FusedConv2D: [BiasAdd], [BiasAdd,
 * Add] (a side input of the output's shape, a residual) or, for
 * convolutions, [FusedBatchNorm] (inference: scale, offset, mean,
 * variance, epsilon), each optionally followed by one activation. */
static bool parse_fused(const gn_graph *g, gn_id id, cnode *n, bool conv, char *why, size_t why_len)
{
    const Tensorflow__AttrValue__ListValue *l = gn__cuda_attr_list(g, id, "fused_ops");
    static const struct {
        const char *name;
        int act;
    } acts[] = {
        {"Relu", GN__CU_RELU}, {"Relu6", GN__CU_RELU6}, {"Elu", GN__CU_ELU}, {"LeakyRelu", GN__CU_LEAKY_RELU},
        {"Tanh", GN__CU_TANH}, {"Sigmoid", GN__CU_SIGMOID}, {"GeluApproximate", GN__CU_GELU_APPROX},
        {"GeluExact", GN__CU_GELU_EXACT},
    };
    n->act = GN__CU_ID;
    n->has_bias = false;
    n->epi = EPI_NONE;
    n->side = false;
    if (!l || l->n_s < 1) goto bad;
    size_t next = 1;
    if (list_str_eq(&l->s[0], "BiasAdd")) {
        n->has_bias = true;
        n->epi = EPI_BIAS;
    } else if (conv && list_str_eq(&l->s[0], "FusedBatchNorm")) {
        n->epi = EPI_BN;
        n->eps = 0.0001f;
        gn__attr_get_float(g, id, "epsilon", &n->eps);
    } else {
        goto bad;
    }
    if (l->n_s > 1 && (list_str_eq(&l->s[1], "Add") || list_str_eq(&l->s[1], "AddV2"))) {
        n->side = true;
        next = 2;
    }
    if (l->n_s > next + 1) goto bad;
    if (l->n_s == next + 1) {
        n->act = -1;
        for (size_t i = 0; i < GN__ARRAY_LEN(acts); i++)
            if (list_str_eq(&l->s[next], acts[i].name)) n->act = acts[i].act;
        if (n->act < 0) goto bad;
    }
    n->alpha = 0.2f;
    gn__attr_get_float(g, id, "leakyrelu_alpha", &n->alpha);
    return true;
bad:
    snprintf(why, why_len, "fused_ops must be [BiasAdd%s] (then Add, then one activation, each optional)",
             conv ? " or FusedBatchNorm" : "");
    return false;
}

static bool float_type_attr(const gn_graph *g, gn_id id, const char *key, char *why, size_t why_len)
{
    int t = 0;
    if (!gn__attr_get_type(g, id, key, &t)) return true;
    if (t == DT_F32 || t == DT_F16) return true;
    snprintf(why, why_len, "%s %s is not supported (float32 and float16 only)", key, gn_dtype_numpy_name(t));
    return false;
}

/* Inputs from first to last (inclusive) must be known on the host at plan time. */
static bool need_host_inputs(const gn_graph *g, gn_id id, uint32_t first, uint32_t last, const hctx *hc, char *why,
                             size_t why_len)
{
    for (uint32_t i = first; i <= last; i++)
        if (!gn__cuda_input_on_host(g, id, i, hc)) {
            snprintf(why, why_len, "input %u must be a Const (or shape arithmetic over Consts and Shape)", i);
            return false;
        }
    return true;
}

/* Data inputs an op of this kind takes (min; max: UINT32_MAX for any). */
void gn__cuda_arity(const cnode *n, uint32_t *min, uint32_t *max)
{
    uint32_t k = 2;
    switch (n->op->kind) {
    case OP_NOOP: *min = 0, *max = UINT32_MAX; return;
    case OP_CONCAT: *min = n->op->sub ? 1 : 2, *max = UINT32_MAX; return;
    case OP_BN: k = 5; break;
    case OP_UNARY: case OP_CAST: case OP_ALIAS: case OP_SQUEEZE: case OP_SOFTMAX: case OP_POOL: k = 1; break;
    case OP_SLICE: k = n->op->sub ? 4 : 3; break;
    case OP_SPLIT: k = n->op->sub == 2 ? 1 : n->op->sub == 1 ? 3 : 2; break;
    case OP_GATHER: k = 3; break;
    case OP_PAD: k = n->op->sub == 1 ? 3 : 2; break;
    case OP_XLA: k = n->op->sub == XLA_PAD ? 5 : 3; break;
    case OP_ENGINE: *min = 0, *max = UINT32_MAX; return;
    default: k = (n->epi == EPI_BN ? 6 : n->has_bias ? 3 : 2) + (n->side ? 1 : 0); break;
    }
    *min = *max = k;
}

/* Parses node id into n (when not NULL); false with why when it cannot run here. */
bool gn__cuda_parse_node(const cu_backend *b, const gn_graph *g, gn_id id, cnode *n, const hctx *hc, char *why,
                       size_t why_len)
{
    cnode tmp;
    if (!n) n = &tmp;
    memset(n, 0, sizeof *n);
    n->id = id;
    n->n_out = 1;
    n->fuse_root = -1;
    const char *opname = gn__node_op(g, id);
    const op_info *op = op_find(opname);
    if (!op) {
        snprintf(why, why_len, "op %s has no CUDA kernel yet", opname);
        return false;
    }
    n->op = op;
    if (op->need & NEED_BLAS && !b->blas) {
        snprintf(why, why_len, "needs cuBLAS: %.200s", b->blas_why);
        return false;
    }
    if (op->need & NEED_DNN && !b->dnn) {
        snprintf(why, why_len, "needs cuDNN: %s", b->dnn_why);
        return false;
    }
    const gn__node *nd = gn__node_at(g, id);
    switch (op->kind) {
    case OP_NOOP:
    case OP_ALIAS: return true;
    case OP_UNARY:
        n->alpha = 0.2f;
        gn__attr_get_float(g, id, "alpha", &n->alpha);
        return float_type_attr(g, id, "T", why, why_len);
    case OP_BINARY:
    case OP_SOFTMAX: return float_type_attr(g, id, "T", why, why_len);
    case OP_BIAS_ADD:
        n->nchw = attr_str_is(g, id, "data_format", "NHWC", "NCHW");
        return float_type_attr(g, id, "T", why, why_len);
    case OP_CAST: {
        int st = 0, dt = 0;
        gn__attr_get_type(g, id, "SrcT", &st);
        gn__attr_get_type(g, id, "DstT", &dt);
        n->dst_dtype = dt;
        if ((st == DT_F32 || st == DT_F16) && (dt == DT_F32 || dt == DT_F16)) return true;
        snprintf(why, why_len, "Cast %s -> %s is not supported (float32 <-> float16 only)", gn_dtype_numpy_name(st),
                 gn_dtype_numpy_name(dt));
        return false;
    }
    case OP_RESHAPE:
    case OP_EXPAND:
    case OP_TRANSPOSE:
    case OP_REDUCE:
        if (!need_host_inputs(g, id, 1, 1, hc, why, why_len)) return false;
        if (op->kind == OP_REDUCE) {
            gn__attr_get_bool(g, id, "keep_dims", &n->keep_dims);
            return float_type_attr(g, id, "T", why, why_len);
        }
        return true;
    case OP_PAD:
        if (!need_host_inputs(g, id, 1, op->sub == 1 ? 2 : 1, hc, why, why_len)) return false;
        if (op->sub == 2) {
            if (attr_str_is(g, id, "mode", "", "REFLECT")) n->mirror = GN__CU_PAD_REFLECT;
            else if (attr_str_is(g, id, "mode", "", "SYMMETRIC")) n->mirror = GN__CU_PAD_SYMMETRIC;
            else {
                snprintf(why, why_len, "mode must be REFLECT or SYMMETRIC");
                return false;
            }
        }
        return true;
    case OP_SLICE: {
        if (!need_host_inputs(g, id, 1, op->sub ? 3 : 2, hc, why, why_len)) return false;
        static const char *const keys[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
        for (int i = 0; op->sub && i < 5; i++) gn__attr_get_int(g, id, keys[i], &n->masks[i]);
        return true;
    }
    case OP_SPLIT: {
        int64_t num = 0;
        if (op->sub == 2) {
            gn__attr_get_int(g, id, "num", &num);
            gn__attr_get_int(g, id, "axis", &n->axis);
        } else {
            gn__attr_get_int(g, id, "num_split", &num);
            if (!need_host_inputs(g, id, op->sub ? 1 : 0, op->sub ? 2 : 0, hc, why, why_len)) return false;
        }
        if (num < 1 || num > 4096) {
            snprintf(why, why_len, "%s %lld is not supported (1 to 4096)", op->sub == 2 ? "num" : "num_split", (long long)num);
            return false;
        }
        n->n_out = (uint32_t)num;
        return true;
    }
    case OP_EINSUM: {
        int64_t cnt = 0;
        gn__attr_get_int(g, id, "N", &cnt);
        if (nd->n_in != 2 || cnt != 2) {
            snprintf(why, why_len, "only two operands are supported");
            return false;
        }
        return float_type_attr(g, id, "T", why, why_len);
    }
    case OP_GATHER: {
        int64_t bd = 0;
        gn__attr_get_int(g, id, "batch_dims", &bd);
        if (bd != 0) {
            snprintf(why, why_len, "batch_dims %lld is not supported (0 only)", (long long)bd);
            return false;
        }
        int t = DT_I32;
        gn__attr_get_type(g, id, "Tindices", &t);
        if (t != DT_I32 && t != DT_I64) {
            snprintf(why, why_len, "Tindices must be int32 or int64");
            return false;
        }
        n->idx64 = t == DT_I64;
        return need_host_inputs(g, id, 2, 2, hc, why, why_len);
    }
    case OP_XLA: {
        /* indices are read on the device; what sets the output's shape is known on the host */
        int t = DT_I32;
        gn__attr_get_type(g, id, "Tindices", &t);
        if (t != DT_I32 && t != DT_I64) {
            snprintf(why, why_len, "Tindices must be int32 or int64");
            return false;
        }
        n->idx64 = t == DT_I64;
        if (op->sub == XLA_DSLICE || op->sub == XLA_GATHER) return need_host_inputs(g, id, 2, 2, hc, why, why_len);
        if (op->sub == XLA_PAD) return need_host_inputs(g, id, 2, 4, hc, why, why_len);
        return true;
    }
    case OP_SQUEEZE: {
        const Tensorflow__AttrValue__ListValue *l = gn__cuda_attr_list(g, id, "squeeze_dims");
        if (l && l->n_i > GN__MAX_DIMS) {
            snprintf(why, why_len, "too many squeeze_dims");
            return false;
        }
        n->n_squeeze = l ? (uint32_t)l->n_i : 0;
        for (uint32_t i = 0; i < n->n_squeeze; i++) n->squeeze[i] = l->i[i];
        return true;
    }
    case OP_CONCAT:
        if (op->sub) {   /* Pack */
            gn__attr_get_int(g, id, "axis", &n->axis);
            if (nd->n_in < 1) {
                snprintf(why, why_len, "no inputs");
                return false;
            }
            return true;
        }
        if (nd->n_in < 2 || !gn__cuda_input_on_host(g, id, nd->n_in - 1, hc)) {
            snprintf(why, why_len, "the axis input must be a Const");
            return false;
        }
        return true;
    case OP_MATMUL:
    case OP_BMM:
        if (op->kind == OP_MATMUL) {
            gn__attr_get_bool(g, id, "transpose_a", &n->ta);
            gn__attr_get_bool(g, id, "transpose_b", &n->tb);
        } else {
            gn__attr_get_bool(g, id, "adj_x", &n->ta);
            gn__attr_get_bool(g, id, "adj_y", &n->tb);
        }
        n->act = GN__CU_ID;
        if (op->sub == 1 && !parse_fused(g, id, n, false, why, why_len)) return false;
        return float_type_attr(g, id, "T", why, why_len);
    case OP_CONV:
    case OP_POOL: {
        n->nchw = attr_str_is(g, id, "data_format", "NHWC", "NCHW");
        if (!n->nchw && !attr_str_is(g, id, "data_format", "NHWC", "NHWC")) {
            snprintf(why, why_len, "data_format must be NHWC or NCHW");
            return false;
        }
        int hd = n->nchw ? 2 : 1, wd = hd + 1;
        const Tensorflow__AttrValue__ListValue *st = gn__cuda_attr_list(g, id, "strides");
        const Tensorflow__AttrValue__ListValue *dl = gn__cuda_attr_list(g, id, "dilations");
        const Tensorflow__AttrValue__ListValue *ks = gn__cuda_attr_list(g, id, "ksize");
        if (!st || st->n_i != 4 || (op->kind == OP_POOL && (!ks || ks->n_i != 4)) || (dl && dl->n_i != 4)) {
            snprintf(why, why_len, "strides%s must have 4 entries", op->kind == OP_POOL ? " and ksize" : "");
            return false;
        }
        int cd = n->nchw ? 1 : 3;
        if (st->i[0] != 1 || st->i[cd] != 1 || (dl && (dl->i[0] != 1 || dl->i[cd] != 1)) ||
            (ks && op->kind == OP_POOL && (ks->i[0] != 1 || ks->i[cd] != 1))) {
            snprintf(why, why_len, "strides, dilations and ksize over batch or channels are not supported");
            return false;
        }
        n->stride[0] = st->i[hd];
        n->stride[1] = st->i[wd];
        n->dil[0] = dl ? dl->i[hd] : 1;
        n->dil[1] = dl ? dl->i[wd] : 1;
        if (op->kind == OP_POOL) {
            n->ksize[0] = ks->i[hd];
            n->ksize[1] = ks->i[wd];
        }
        if (n->stride[0] < 1 || n->stride[1] < 1 || n->dil[0] < 1 || n->dil[1] < 1 ||
            (op->kind == OP_POOL && (n->ksize[0] < 1 || n->ksize[1] < 1))) {
            snprintf(why, why_len, "strides, dilations and ksize must be positive");
            return false;
        }
        if (attr_str_is(g, id, "padding", "", "SAME")) n->pad = PAD_SAME;
        else if (attr_str_is(g, id, "padding", "", "VALID")) n->pad = PAD_VALID;
        else if (op->kind == OP_CONV && attr_str_is(g, id, "padding", "", "EXPLICIT")) {
            n->pad = PAD_EXPLICIT;
            const Tensorflow__AttrValue__ListValue *ep = gn__cuda_attr_list(g, id, "explicit_paddings");
            if (!ep || ep->n_i != 8) {
                snprintf(why, why_len, "explicit_paddings must have 8 entries");
                return false;
            }
            for (int k = 0; k < 2; k++) {
                n->explicit_pad[k] = ep->i[2 * hd + k];
                n->explicit_pad[2 + k] = ep->i[2 * wd + k];
            }
            for (int k = 0; k < 4; k++)
                if (n->explicit_pad[k] < 0) {
                    snprintf(why, why_len, "explicit_paddings must not be negative");
                    return false;
                }
        } else {
            snprintf(why, why_len, "padding must be SAME or VALID%s", op->kind == OP_CONV ? " or EXPLICIT" : "");
            return false;
        }
        n->act = GN__CU_ID;
        if (op->sub >= 2 && !parse_fused(g, id, n, true, why, why_len)) return false;
        return float_type_attr(g, id, "T", why, why_len);
    }
    case OP_ENGINE: {
        const Tensorflow__AttrValue *f = gn__node_attr(g, id, "segment_func");
        if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !f->func || !f->func->name) {
            snprintf(why, why_len, "attr 'segment_func' is missing or not a function");
            return false;
        }
        int32_t no = gn__node_num_outputs(g, id);
        if (no < 1) {
            snprintf(why, why_len, "an engine op without outputs");
            return false;
        }
        n->n_out = (uint32_t)no;
        return true;
    }
    case OP_BN: {
        bool training = true;
        gn__attr_get_bool(g, id, "is_training", &training);
        if (training) {
            snprintf(why, why_len, "is_training=true is not supported (inference only)");
            return false;
        }
        n->nchw = attr_str_is(g, id, "data_format", "NHWC", "NCHW");
        n->eps = 0.0001f;
        gn__attr_get_float(g, id, "epsilon", &n->eps);
        if (!float_type_attr(g, id, "T", why, why_len)) return false;
        return float_type_attr(g, id, "U", why, why_len);
    }
    default: break;
    }
    snprintf(why, why_len, "internal: unhandled op kind");
    return false;
}
