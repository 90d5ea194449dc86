/* The CUDA backend: the backend interface (runtime/backend.h) over cuDNN,
 * cuBLAS and our kernels (cuda.h). See cuda.h for the layout of the code.
 *
 * cuBLAS and cuDNN are loaded with dlopen when the backend opens, so the
 * library loads where they are missing: the ops that need them are then
 * unsupported, with the loader's message. float32 GEMMs and convolutions use
 * no TF32 (CUBLAS_COMPUTE_32F, CUDNN_FMA_MATH), so float32 results match the
 * CPU backend within 1e-5 relative L2. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"   /* cublasLt.h declares f() */
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cublas_v2.h>
#include <cudnn.h>

#include "io/engine_store.h"
#include "ops/xla_attrs.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda.h"
#include "runtime/prune.h"
#include "runtime/quant.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64
#define MAX_PLANS 8
#define ALIGN 256
#define WORKSPACE_LIMIT ((size_t)512 << 20)   /* per convolution; cuDNN algorithms needing more are skipped */

/* ---- libraries loaded at open ---------------------------------------------- */
#define CUBLAS_FNS(X)                                                                                                  \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode) X(cublasGemmEx)               \
    X(cublasGemmStridedBatchedEx) X(cublasGetStatusString) X(cublasSetWorkspace_v2)
#define CUDNN_FNS(X)                                                                                                   \
    X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnCreateTensorDescriptor)          \
    X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor) X(cudnnCreateFilterDescriptor)                    \
    X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor) X(cudnnCreateConvolutionDescriptor)               \
    X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount)         \
    X(cudnnSetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim) X(cudnnGetConvolutionForwardAlgorithm_v7) \
    X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward) X(cudnnFindConvolutionForwardAlgorithm)
#define CUBLASLT_FNS(X)                                                                                                \
    X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetStatusString) X(cublasLtMatmulDescCreate)                     \
    X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)                     \
    X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)              \
    X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
#define FIELD(name) __typeof__(&name) p_##name;
#define BLAS_WORKSPACE ((size_t)32 << 20)   /* cuBLAS's own workspace, set once (no allocation inside a capture) */

/* A convolution's cuDNN algorithm, chosen once per (descriptors, workspace
 * bound) and kept for the backend's lifetime. */
typedef struct algo_key {
    int32_t dt, fmt, n, c, h, w, k, fc, r, s, pad_h, pad_w, str_h, str_w, dil_h, dil_w, groups, math;
    uint64_t ws_limit;
} algo_key;
typedef struct algo_entry {
    algo_key key;
    cudnnConvolutionFwdAlgo_t algo;
    cudnnMathType_t math;
    size_t ws_bytes;
    bool measured;                /* chosen by cudnnFindConvolutionForwardAlgorithm (else the heuristic) */
} algo_entry;

typedef struct cu_backend {
    int device;
    cudaStream_t stream;
    size_t ws_limit;
    bool cuda_graph;              /* capture runs into CUDA Graphs (gn__backend_config) */
    void *blas_ws;                /* device: cuBLAS workspace (BLAS_WORKSPACE bytes) */
    algo_entry *algos;            /* cuDNN algorithm cache */
    uint32_t n_algos, cap_algos;
    uint64_t algo_finds, algo_hits;   /* measured choices made, cache hits (tests, reports) */
    void *blas_lib, *dnn_lib;
    cublasHandle_t blas;          /* NULL: cuBLAS unavailable (blas_why says why) */
    cudnnHandle_t dnn;            /* NULL: cuDNN unavailable (dnn_why) */
    char blas_why[256], dnn_why[256];
    void *lt_lib;
    cublasLtHandle_t lt;          /* NULL: cuBLASLt unavailable (lt_why); _FusedMatMul then runs cuBLAS + our epilogue */
    char lt_why[256];
    CUBLAS_FNS(FIELD)
    CUBLASLT_FNS(FIELD)
    CUDNN_FNS(FIELD)
} cu_backend;

/* ---- ops --------------------------------------------------------------------- */
enum {
    OP_NOOP, OP_ALIAS, OP_RESHAPE, OP_SQUEEZE, OP_EXPAND, OP_UNARY, OP_CAST, OP_BINARY, OP_BIAS_ADD, OP_MATMUL,
    OP_BMM, OP_CONV, OP_POOL, OP_BN, OP_SOFTMAX, OP_TRANSPOSE, OP_CONCAT, OP_REDUCE, OP_PAD, OP_SLICE, OP_SPLIT,
    OP_GATHER, OP_HOST, OP_EINSUM, OP_ENGINE, OP_XLA,
};
/* OP_XLA subs: the XLA data-movement ops (xla_kernels.cu) */
enum { XLA_DSLICE, XLA_DUS, XLA_GATHER, XLA_PAD };
enum { NEED_NONE = 0, NEED_BLAS = 1, NEED_DNN = 2 };

typedef struct op_info {
    const char *name;
    int kind, sub;
    int need;
} op_info;

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

static bool is_host_op(const char *op)
{
    return bsearch(op, k_host_ops, GN__ARRAY_LEN(k_host_ops), sizeof k_host_ops[0], str_cmp) != NULL &&
           gn__kernel_for(op) != NULL;
}

static bool is_shape_op(const char *op)
{
    return !strcmp(op, "Shape") || !strcmp(op, "Size") || !strcmp(op, "Rank");
}

static const op_info k_host_info = {"(host)", OP_HOST, 0, 0};

static int op_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const op_info *)elem)->name);
}

static const op_info *op_find(const char *op)
{
    return bsearch(op, k_ops, GN__ARRAY_LEN(k_ops), sizeof k_ops[0], op_cmp);
}

/* ---- attrs ----------------------------------------------------------------- */
static const Tensorflow__AttrValue__ListValue *attr_list(const gn_graph *g, gn_id id, const char *key)
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

enum { PAD_VALID, PAD_SAME, PAD_EXPLICIT };
enum { EPI_NONE, EPI_BIAS, EPI_BN };

/* Per-node attributes, parsed once at compile. */
typedef struct cnode {
    gn_id id;
    const op_info *op;
    uint32_t n_in;
    uint32_t *in;                 /* value per data input */
    uint32_t out;                 /* value of output 0 */
    int act;                      /* fused activation (GN__CU_*), GN__CU_ID: none */
    bool has_bias;
    int epi;                      /* fused epilogue: EPI_* (has_bias for EPI_BIAS) */
    bool side;                    /* ... then + a side input of the output's shape (fused Add) */
    float alpha, eps;
    bool ta, tb, nchw, keep_dims;
    int pad;
    int64_t stride[2], dil[2], ksize[2], explicit_pad[4];   /* H, W; explicit: top, bottom, left, right */
    int32_t dst_dtype;            /* Cast */
    int64_t squeeze[GN__MAX_DIMS];
    uint32_t n_squeeze;
    uint32_t n_out;               /* outputs (values out .. out + n_out - 1) */
    int64_t axis;                 /* Pack, Unpack */
    int mirror;                   /* MirrorPad: GN__CU_PAD_REFLECT or _SYMMETRIC */
    int64_t masks[5];             /* StridedSlice: begin, end, ellipsis, new_axis, shrink_axis */
    bool idx64;                   /* GatherV2: int64 indices */
    int32_t fuse_root;            /* >= 0: computed inside that node's fused kernel (no buffer, no launch) */
    struct fprog *fuse;           /* a fused run's program (the root node of the run) */
    struct cengop *eng;           /* Grapnel>EngineOp: its engine cache */
    struct cln *ln;               /* the output node of a layer norm run as one kernel */
    int32_t ln_member;            /* > 0: inside the layer norm of node ln_member - 1 */
    bool is_q8;                   /* an INT8 engine's int8 node (runtime/quant.h) */
    float q8_sx;                  /* ... its input's scale */
    gn__q8_node q8;               /* ... and what its attrs say */
} cnode;

/* A fused run of elementwise nodes (built at compile): the ops over the
 * run's inputs (values), in an order where each op's operands come first. */
typedef struct fprog {
    int32_t n_in, n_ops;
    uint32_t in_val[GN__CU_FUSE_MAX_IN];
    gn__cu_fuse_op ops[GN__CU_FUSE_MAX_OPS];
} fprog;

/* What compile knows about where inputs come from (NULL in supports()). */
typedef struct hctx {
    const gn__engine_sig *sig;
    const uint8_t *has_feed;
    const uint8_t *host;          /* per graph node: output known on the host at plan time */
} hctx;

/* Is node id's output known on the host when a plan is made (a Const, or a
 * host op over such values)? Graph-only check, for supports(). */
static bool host_known(const gn_graph *g, gn_id id, int depth)
{
    const char *op = gn__node_op(g, id);
    if (!strcmp(op, "Const") || !strcmp(op, "HostConst")) return true;
    if (depth > 32 || !is_host_op(op)) return false;
    if (is_shape_op(op)) return true;
    const gn__node *nd = gn__node_at(g, id);
    for (uint32_t i = 0; i < nd->n_in; i++)
        if (!host_known(g, nd->in[i].node, depth + 1)) return false;
    return true;
}

/* Is data input `slot` of node id known on the host at plan time? */
static bool input_on_host(const gn_graph *g, gn_id id, uint32_t slot, const hctx *hc)
{
    const gn__node *nd = gn__node_at(g, id);
    if (slot >= nd->n_in) return false;
    if (!hc) return host_known(g, nd->in[slot].node, 0);
    if (gn__sig_feed_index(hc->sig, hc->has_feed, nd->in[slot]) >= 0) return false;
    return hc->host[nd->in[slot].node] != 0;
}

/* Parses fused_ops of _FusedMatMul / _FusedConv2D: [BiasAdd], [BiasAdd,
 * Add] (a side input of the output's shape, a residual) or, for
 * convolutions, [FusedBatchNorm] (inference: scale, offset, mean,
 * variance, epsilon), each optionally followed by one activation. */
static bool parse_fused(const gn_graph *g, gn_id id, cnode *n, bool conv, char *why, size_t why_len)
{
    const Tensorflow__AttrValue__ListValue *l = attr_list(g, id, "fused_ops");
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
        if (!input_on_host(g, id, i, hc)) {
            snprintf(why, why_len, "input %u must be a Const (or shape arithmetic over Consts and Shape)", i);
            return false;
        }
    return true;
}

/* Data inputs an op of this kind takes (min; max: UINT32_MAX for any). */
static void arity(const cnode *n, uint32_t *min, uint32_t *max)
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
static bool parse_node(const cu_backend *b, const gn_graph *g, gn_id id, cnode *n, const hctx *hc, char *why,
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
        const Tensorflow__AttrValue__ListValue *l = attr_list(g, id, "squeeze_dims");
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
        if (nd->n_in < 2 || !input_on_host(g, id, nd->n_in - 1, hc)) {
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
        const Tensorflow__AttrValue__ListValue *st = attr_list(g, id, "strides");
        const Tensorflow__AttrValue__ListValue *dl = attr_list(g, id, "dilations");
        const Tensorflow__AttrValue__ListValue *ks = attr_list(g, id, "ksize");
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
            const Tensorflow__AttrValue__ListValue *ep = attr_list(g, id, "explicit_paddings");
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

/* ---- values, engine, plans --------------------------------------------------- */
enum { V_FEED, V_CONST, V_NODE };

typedef struct cval {
    int kind;
    uint32_t feed;                /* V_FEED */
    gn__tensor host;              /* V_CONST: the value on the host (owned) */
    size_t dev_off;               /* V_CONST: offset in the engine's weights */
} cval;

typedef struct cconv {            /* per convolution node, per plan */
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws_bytes;
    bool prepad;
    int64_t pp_in[4], pp_before[4], pp_out[4];   /* pre-padding of the input (4-D, data layout) */
    int64_t w_dims[4];            /* TensorFlow filter dims */
    int32_t w_perm[4];            /* to cuDNN's filter layout */
    bool w_once;                  /* the filter is constant: transposed once per plan, kept */
    int64_t c_out, inner;         /* epilogue: channels, elements per channel run */
} cconv;

enum { SCR_W, SCR_PAD, SCR_WS, N_SCR };

/* An Einsum as a batched GEMM (per node, per plan): A and B transposed to
 * [batch, M, K] and [batch, K, N] (into scratch, unless already so), C
 * [batch, M, N] transposed to the output's order. */
typedef struct ceinsum {
    int32_t ra, rb, rc;
    int64_t a_dims[GN__MAX_DIMS], b_dims[GN__MAX_DIMS], c_dims[GN__MAX_DIMS];
    int32_t pa[GN__MAX_DIMS], pb[GN__MAX_DIMS], pc[GN__MAX_DIMS];
    bool ta, tb, tc;              /* a transpose is needed */
    int64_t batch, m, n, k;
} ceinsum;

typedef struct cplan {
    int32_t *key_dtype, *key_rank;
    int64_t *key_dims;            /* n_feeds * GN__MAX_DIMS */
    int32_t *dtype, *rank;        /* per value */
    int64_t *dims;                /* per value * GN__MAX_DIMS */
    uint32_t *root;               /* storage owner (aliases point at their input's root) */
    size_t *off, *bytes;          /* per value: arena offset and size (roots with storage) */
    size_t *scr_off;              /* per node * N_SCR */
    size_t *scr_bytes;
    cconv **conv;                 /* per node, NULL unless a convolution */
    struct ceinsum **ein;         /* per node, NULL unless an Einsum */
    gn__cu_slice **sl;            /* per node: n_out boxes (Slice, StridedSlice, Split, SplitV, Unpack) */
    gn__tensor *hval;             /* per value: the value on the host (host nodes; owned) */
    void *arena;
    size_t arena_bytes, planned_bytes;
    int graph_state;              /* 0: not tried, 1: captured (graph_exec), -1: cannot be captured */
    cudaGraphExec_t graph_exec;
    struct ceng **eng;            /* per node: the engine (or native segment) an engine op runs (a reference) */
    uint8_t *ln_on;               /* per node: this layer norm runs as one kernel in this plan */
    struct clt **lt;              /* per node: a _FusedMatMul's cuBLASLt GEMM with its epilogue (NULL: none) */
    struct ci8 **i8;              /* per node: an int8 node's plan (NULL: it runs in float) */
} cplan;

struct gn__engine {
    cu_backend *b;
    const gn_graph *g;
    uint32_t n_feeds, n_fetches;
    uint32_t n_vals;
    cval *vals;
    uint32_t n_nodes;
    cnode *nodes;                 /* in execution order */
    uint32_t *fetch_val;
    void *weights;                /* device: all Const values */
    size_t weights_bytes;
    cplan *plans[MAX_PLANS];
    uint32_t n_plans;
    gn__engine_stats stats;
    uint32_t depth;               /* 0: the session's engine; 1 + its parent's for an engine op's function */
    uint64_t eng_clock;           /* engine caches: the time of last use (least recently used goes first) */
    const gn__calib_table *q8_table;   /* while an INT8 engine is compiled: its calibration table */
};

static size_t align_up(size_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static gn_status cuda_fail(gn__err *err, const char *what, cudaError_t e)
{
    return gn__fail(err, GN_ERR_BACKEND, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define NODE_FMT "node '%s' (%s): "
#define NODE_ARGS(e, n) gn__node_name((e)->g, (n)->id), gn__node_op((e)->g, (n)->id)

static gn_status node_fail(const gn__engine *e, const cnode *n, gn__err *err, gn_status code, const char *fmt, ...)
    GN__PRINTF(5, 6);
static gn_status node_fail(const gn__engine *e, const cnode *n, gn__err *err, gn_status code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gn__fail(err, code, NODE_FMT "%s", NODE_ARGS(e, n), msg);
}

#define CK_CUDA(call)                                                                                         \
    do {                                                                                                      \
        cudaError_t ce_ = (call);                                                                             \
        if (ce_ != cudaSuccess)                                                                               \
            return node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, cudaGetErrorString(ce_));           \
    } while (0)
#define CK_DNN(call)                                                                                          \
    do {                                                                                                      \
        cudnnStatus_t ds_ = (call);                                                                           \
        if (ds_ != CUDNN_STATUS_SUCCESS)                                                                      \
            return node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cudnnGetErrorString(ds_));      \
    } while (0)
#define CK_BLAS(call)                                                                                         \
    do {                                                                                                      \
        cublasStatus_t bs_ = (call);                                                                          \
        if (bs_ != CUBLAS_STATUS_SUCCESS)                                                                     \
            return node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cublasGetStatusString(bs_));    \
    } while (0)

struct ceng;
struct cengop;
static gn_status plan_engine(gn__engine *e, cplan *p, uint32_t k, gn__err *err);
static gn_status run_engine_node(gn__engine *e, cplan *p, const cnode *n, uint32_t k, gn__err *err);
static gn_status engines_init(gn__engine *e, gn__err *err);
static gn_status engines_account(gn__engine *e, cplan *p, gn__err *err);
static void cengop_free(cu_backend *b, struct cengop *op);
static void cu_engine_free(void *self, gn__engine *e);
static gn_status compile_depth(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, uint32_t depth,
                               const gn__calib_table *q8, gn__engine **out, gn__err *err);
static gn_status plan_new(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err);
static gn_status run_all(gn__engine *e, cplan *p, gn__err *err);

#define CK_LT(call)                                                                                           \
    do {                                                                                                      \
        cublasStatus_t ls_ = (call);                                                                          \
        if (ls_ != CUBLAS_STATUS_SUCCESS)                                                                     \
            return node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cublasLtGetStatusString(ls_));  \
    } while (0)

/* A _FusedMatMul's cuBLASLt GEMM (per node, per plan). */
typedef struct clt {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
} clt;

static void clt_free(const cu_backend *b, clt *c)
{
    if (!c) return;
    if (c->la) b->p_cublasLtMatrixLayoutDestroy(c->la);
    if (c->lb) b->p_cublasLtMatrixLayoutDestroy(c->lb);
    if (c->ld) b->p_cublasLtMatrixLayoutDestroy(c->ld);
    if (c->desc) b->p_cublasLtMatmulDescDestroy(c->desc);
    free(c);
}

/* The first algorithm cuBLASLt's heuristic offers for c's descriptors
 * (built when ok) within our workspace; NULL (c freed) when none. */
static clt *lt_pick(const cu_backend *b, clt *c, bool ok)
{
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulPreference_t pref = NULL;
    size_t ws = BLAS_WORKSPACE;
    ok = ok && b->p_cublasLtMatmulPreferenceCreate(&pref) == OK &&
         b->p_cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) == OK;
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int found = 0;
    ok = ok && b->p_cublasLtMatmulAlgoGetHeuristic(b->lt, c->desc, c->la, c->lb, c->ld, c->ld, pref, 1, &res, &found) == OK &&
         found > 0 && res.state == CUBLAS_STATUS_SUCCESS && res.workspaceSize <= BLAS_WORKSPACE;
    if (pref) b->p_cublasLtMatmulPreferenceDestroy(pref);
    if (!ok) {
        clt_free(b, c);
        return NULL;
    }
    c->algo = res.algo;
    return c;
}

/* cuBLASLt for a 2-D _FusedMatMul of [m, k] x [k, n] with a bias and then
 * nothing, Relu, or (float16 only) the tanh Gelu inside the GEMM
 * (CUBLASLT_EPILOGUE_BIAS, RELU_BIAS, GELU_BIAS), accumulating in float32
 * (CUBLAS_COMPUTE_32F: no TF32); NULL when cuBLASLt is missing, the fused
 * ops do not fit an epilogue, or its heuristic offers no algorithm: then
 * cuBLAS and our epilogue kernel run. Row-major C = op(A) op(B) is
 * column-major C^T = op(B)^T op(A)^T, whose rows get the bias. */
static clt *plan_lt(const gn__engine *e, const cnode *n, int h, int64_t m, int64_t nn, int64_t kk)
{
    cu_backend *b = e->b;
    if (!b->lt || n->epi != EPI_BIAS || !n->has_bias || n->side || m < 1 || nn < 1 || kk < 1) return NULL;
    cublasLtEpilogue_t epi;
    if (n->act == GN__CU_ID) epi = CUBLASLT_EPILOGUE_BIAS;
    else if (n->act == GN__CU_RELU) epi = CUBLASLT_EPILOGUE_RELU_BIAS;
    else if (n->act == GN__CU_GELU_APPROX && h) epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    else return NULL;
    clt *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
    int32_t bias_t = (int32_t)dt;   /* the bias has the output's type */
    cublasOperation_t opa = n->tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = n->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    bool ok = b->p_cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_t, sizeof bias_t) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->la, dt, (uint64_t)(n->tb ? kk : nn), (uint64_t)(n->tb ? nn : kk),
                                              n->tb ? kk : nn) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->lb, dt, (uint64_t)(n->ta ? m : kk), (uint64_t)(n->ta ? kk : m),
                                              n->ta ? m : kk) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->ld, dt, (uint64_t)nn, (uint64_t)m, nn) == OK;
    return lt_pick(b, c, ok);
}

/* cuBLASLt for an INT8 engine's GEMM: int8 rows of the activations [m, kp]
 * times int8 rows of the weights [nn, kp], summed into int32 [m, nn]
 * (CUBLAS_COMPUTE_32I; column-major that is the "TN" form its int8 kernels
 * want: C^T = W^T' X^T with W^T' the weights transposed); NULL when
 * cuBLASLt is missing or its heuristic offers no algorithm for these
 * shapes: then gn__cu_gemm8 runs. */
static clt *plan_lt8(const cu_backend *b, int64_t m, int64_t nn, int64_t kp)
{
    if (!b->lt || m < 1 || nn < 1 || kp < 1) return NULL;
    clt *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    cublasOperation_t opa = CUBLAS_OP_T, opb = CUBLAS_OP_N;
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    bool ok = b->p_cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->la, CUDA_R_8I, (uint64_t)kp, (uint64_t)nn, kp) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->lb, CUDA_R_8I, (uint64_t)kp, (uint64_t)m, kp) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->ld, CUDA_R_32I, (uint64_t)nn, (uint64_t)m, nn) == OK;
    return lt_pick(b, c, ok);
}

/* An int8 node of an INT8 engine (per node, per plan): its weights
 * quantized once, here, as the CPU reference quantizes them
 * (gn__q8_weights), and kept in the node's SCR_W scratch for the plan's
 * life: wq (wq_bytes, rounded up to ALIGN) then sw, one scale per channel.
 * MatMul and Conv2D run as quantize (im2col for the convolution), an int8
 * GEMM (cuBLASLt, else gn__cu_gemm8) into int32 (SCR_WS) over rows of kp
 * bytes (SCR_PAD), and dequantize with bias and activation; depthwise
 * convolutions run as one kernel. */
typedef struct ci8 {
    int kind;                     /* GN__Q8_* */
    int64_t m, n, k, kp;          /* GEMM rows, channels, values per channel, row pitch (k rounded up to 16) */
    int64_t mult;                 /* depthwise channel multiplier */
    gn__cu_conv8 geo;             /* convolutions */
    float sx, inv;
    int act;                      /* GN__CU_* */
    size_t wq_bytes;
    int8_t *h_wq;                 /* host copies, until plan_new uploads them */
    float *h_sw;
    clt *lt;                      /* cuBLASLt's int8 GEMM; NULL: gn__cu_gemm8 */
} ci8;

static void ci8_free(const cu_backend *b, ci8 *c)
{
    if (!c) return;
    free(c->h_wq);
    free(c->h_sw);
    clt_free(b, c->lt);
    free(c);
}

static int64_t *vdims(cplan *p, uint32_t v)
{
    return &p->dims[(size_t)v * GN__MAX_DIMS];
}

static int64_t numel_of(const cplan *p, uint32_t v)
{
    int64_t n = 1;
    for (int32_t d = 0; d < p->rank[v]; d++) n *= p->dims[(size_t)v * GN__MAX_DIMS + d];
    return n;
}

static const char *shape_str(const cplan *p, uint32_t v, char *buf, size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    for (int32_t d = 0; d < p->rank[v] && pos < len; d++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", d ? "," : "", (long long)p->dims[(size_t)v * GN__MAX_DIMS + d]);
    if (pos < len) snprintf(buf + pos, len - pos, "]");
    return buf;
}

static void *vptr(const gn__engine *e, const cplan *p, uint32_t v)
{
    uint32_t r = p->root[v];
    if (e->vals[r].kind == V_CONST) return (char *)e->weights + e->vals[r].dev_off;
    return (char *)p->arena + p->off[r];
}

static void cconv_free(const cu_backend *b, cconv *c)
{
    if (!c) return;
    if (c->x) b->p_cudnnDestroyTensorDescriptor(c->x);
    if (c->y) b->p_cudnnDestroyTensorDescriptor(c->y);
    if (c->w) b->p_cudnnDestroyFilterDescriptor(c->w);
    if (c->conv) b->p_cudnnDestroyConvolutionDescriptor(c->conv);
    free(c);
}

static void ceng_release(cu_backend *b, struct ceng *c);

static void plan_free(const gn__engine *e, cplan *p)
{
    if (!p) return;
    if (p->eng)
        for (uint32_t i = 0; i < e->n_nodes; i++) ceng_release(e->b, p->eng[i]);
    free(p->eng);
    free(p->ln_on);
    if (p->lt)
        for (uint32_t i = 0; i < e->n_nodes; i++) clt_free(e->b, p->lt[i]);
    free(p->lt);
    if (p->i8)
        for (uint32_t i = 0; i < e->n_nodes; i++) ci8_free(e->b, p->i8[i]);
    free(p->i8);
    if (p->conv)
        for (uint32_t i = 0; i < e->n_nodes; i++) cconv_free(e->b, p->conv[i]);
    if (p->ein)
        for (uint32_t i = 0; i < e->n_nodes; i++) free(p->ein[i]);
    free(p->ein);
    if (p->sl)
        for (uint32_t i = 0; i < e->n_nodes; i++) free(p->sl[i]);
    if (p->hval)
        for (uint32_t v = 0; v < e->n_vals; v++) gn__tensor_release(&p->hval[v]);
    free(p->sl);
    free(p->hval);
    if (p->graph_exec) cudaGraphExecDestroy(p->graph_exec);
    if (p->arena) cudaFree(p->arena);
    free(p->key_dtype);
    free(p->key_rank);
    free(p->key_dims);
    free(p->dtype);
    free(p->rank);
    free(p->dims);
    free(p->root);
    free(p->off);
    free(p->bytes);
    free(p->scr_off);
    free(p->scr_bytes);
    free(p->conv);
    free(p);
}

/* Value v on the host: a Const, or a host node's output in plan p; NULL otherwise. */
static const gn__tensor *host_tensor(const gn__engine *e, const cplan *p, uint32_t v)
{
    if (e->vals[v].kind == V_CONST) return &e->vals[v].host;
    if (p->hval[v].dtype) return &p->hval[v];
    return NULL;
}

/* Integer values of host value v (int32 or int64), at most max. */
static gn_status const_ints(const gn__engine *e, const cplan *p, const cnode *n, uint32_t v, int64_t *out, int64_t max,
                            int64_t *count, gn__err *err)
{
    const gn__tensor *t = host_tensor(e, p, v);
    if (!t) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "shape argument must be a Const");
    int64_t k = gn__tensor_numel(t);
    if (k > max) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "shape argument has %lld values", (long long)k);
    for (int64_t i = 0; i < k; i++) {
        if (t->dtype == DT_I32) out[i] = ((const int32_t *)t->data)[i];
        else if (t->dtype == DT_I64) out[i] = ((const int64_t *)t->data)[i];
        else return node_fail(e, n, err, GN_ERR_GRAPH, "shape argument must be int32 or int64");
    }
    *count = k;
    return GN_OK;
}

static bool is_float(int32_t dt)
{
    return dt == DT_F32 || dt == DT_F16;
}

/* TensorFlow's window: output size and padding before/after for one spatial dim. */
static gn_status window(const gn__engine *e, const cnode *n, int64_t in, int64_t k, int64_t dil, int64_t stride,
                        const int64_t *explicit_pad, int64_t *out, int64_t *before, int64_t *after, gn__err *err)
{
    int64_t eff = (k - 1) * dil + 1;
    if (n->pad == PAD_VALID) {
        *before = *after = 0;
        if (in < eff) return node_fail(e, n, err, GN_ERR_GRAPH, "window %lld larger than input %lld", (long long)eff, (long long)in);
        *out = (in - eff) / stride + 1;
    } else if (n->pad == PAD_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + eff - in;
        if (total < 0) total = 0;
        *before = total / 2;
        *after = total - *before;
    } else {
        *before = explicit_pad[0];
        *after = explicit_pad[1];
        if (in + *before + *after < eff) return node_fail(e, n, err, GN_ERR_GRAPH, "window larger than padded input");
        *out = (in + *before + *after - eff) / stride + 1;
    }
    return GN_OK;
}

static void row_strides(int32_t rank, const int64_t *dims, int64_t *stride)
{
    int64_t st = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = st;
        st *= dims[d];
    }
}

/* A host node: evaluated now, on the host, with the CPU backend's kernel
 * (the shapes, hence Shape's value, are fixed within a plan). */
static gn_status plan_host(gn__engine *e, cplan *p, const cnode *n, gn__err *err)
{
    const char *op = gn__node_op(e->g, n->id);
    uint32_t o = n->out;
    gn__kctx c;
    memset(&c, 0, sizeof c);
    c.g = e->g;
    c.node = n->id;
    c.n_out = n->n_out;
    c.out = &p->hval[o];
    c.err = err;
    gn__tensor *ins = calloc(n->n_in + 1, sizeof *ins);
    if (!ins) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    gn_status s = GN_OK;
    if (is_shape_op(op)) {
        uint32_t x = n->in[0];
        int t = DT_I32;
        gn__attr_get_type(e->g, n->id, "out_type", &t);
        bool shape = !strcmp(op, "Shape");
        int64_t dims[1] = {p->rank[x]};
        gn__tensor *out = NULL;
        if (t != DT_I32 && t != DT_I64) s = node_fail(e, n, err, GN_ERR_UNSUPPORTED, "out_type must be int32 or int64");
        if (s == GN_OK && !strcmp(op, "Rank")) t = DT_I32;
        if (s == GN_OK) s = gn__kctx_output(&c, 0, t, shape ? 1 : 0, dims, &out);
        int64_t total = numel_of(p, x);
        for (int32_t d = 0; s == GN_OK && d < (shape ? p->rank[x] : 1); d++) {
            int64_t v = shape ? vdims(p, x)[d] : !strcmp(op, "Size") ? total : p->rank[x];
            if (t == DT_I32 && v > INT32_MAX) s = node_fail(e, n, err, GN_ERR_GRAPH, "value %lld does not fit int32", (long long)v);
            else if (t == DT_I32) ((int32_t *)out->data)[d] = (int32_t)v;
            else ((int64_t *)out->data)[d] = v;
        }
    } else {
        for (uint32_t i = 0; s == GN_OK && i < n->n_in; i++) {
            const gn__tensor *t = host_tensor(e, p, n->in[i]);
            if (!t) s = node_fail(e, n, err, GN_ERR_INTERNAL, "input %u is not known on the host", i);
            else ins[i] = *t;
        }
        c.n_in = n->n_in;
        c.in = ins;
        gn__kernel_fn fn = gn__kernel_for(op);
        if (s == GN_OK && !fn) s = node_fail(e, n, err, GN_ERR_INTERNAL, "no host kernel");
        if (s == GN_OK) s = fn(&c);
    }
    free(ins);
    for (uint32_t i = 0; s == GN_OK && i < n->n_out; i++) {
        const gn__tensor *t = &p->hval[o + i];
        if (!t->dtype || t->dead) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "output %u was not produced on the host", i);
        p->root[o + i] = o + i;
        p->dtype[o + i] = t->dtype;
        p->rank[o + i] = t->rank;
        memcpy(vdims(p, o + i), t->dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    return s;
}

/* StridedSlice as TensorFlow resolves it (masks, one ellipsis, implied
 * trailing ellipsis, new axes, shrunk axes): sl over the input's dims, od
 * and *orank the output's shape (the same elements in the same order). */
static gn_status strided_slice(const gn__engine *e, const cplan *p, const cnode *n, uint32_t x, gn__cu_slice *sl,
                               int64_t *od, int32_t *orank, gn__err *err)
{
    int64_t bg[GN__MAX_DIMS], en[GN__MAX_DIMS], st[GN__MAX_DIMS], nb = 0, nen = 0, ns = 0;
    GN_TRY(const_ints(e, p, n, n->in[1], bg, GN__MAX_DIMS, &nb, err));
    GN_TRY(const_ints(e, p, n, n->in[2], en, GN__MAX_DIMS, &nen, err));
    GN_TRY(const_ints(e, p, n, n->in[3], st, GN__MAX_DIMS, &ns, err));
    if (nb != nen || nb != ns || nb < 1)
        return node_fail(e, n, err, GN_ERR_GRAPH, "begin, end and strides must have one length (%lld, %lld, %lld)",
                         (long long)nb, (long long)nen, (long long)ns);
    int64_t bm = n->masks[0], em = n->masks[1], elm = n->masks[2], nam = n->masks[3], sam = n->masks[4];
    int32_t xr = p->rank[x];
    const int64_t *xd = &p->dims[(size_t)x * GN__MAX_DIMS];
    int64_t m = nb, ell = -1, add_after = 0, xs[GN__MAX_DIMS];
    for (int64_t i = 0; i < m; i++)
        if ((elm >> i) & 1) {
            if (ell >= 0) return node_fail(e, n, err, GN_ERR_GRAPH, "more than one ellipsis in the slice");
            ell = i;
        }
    for (int64_t i = ell + 1; ell >= 0 && i < m; i++) add_after += (nam >> i) & 1;
    int64_t mm = ell >= 0 ? m : m + 1;   /* without one, an ellipsis is implied at the end */
    row_strides(xr, xd, xs);
    sl->rank = xr;
    sl->start = 0;
    int32_t full = 0, r = 0;
    for (int64_t i = 0; i < mm; i++) {
        if (ell >= 0 ? i == ell : i == m) {
            int64_t next = xr - (mm - i) + 1 + add_after;
            if (next > xr) next = xr;
            for (; full < next; full++) {
                if (r >= GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
                sl->dims[full] = xd[full];
                sl->step[full] = xs[full];
                od[r++] = xd[full];
            }
            continue;
        }
        if ((nam >> i) & 1) {
            if (r >= GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
            od[r++] = 1;
            continue;
        }
        if (full >= xr) return node_fail(e, n, err, GN_ERR_GRAPH, "the slice has more dims than the input's %d", xr);
        int64_t dim = xd[full], sd = st[i], b, size;
        if (sd == 0) return node_fail(e, n, err, GN_ERR_GRAPH, "strides[%lld] is 0", (long long)i);
        if ((sam >> i) & 1) {
            b = bg[i] < 0 ? bg[i] + dim : bg[i];
            if (b < 0 || b >= dim)
                return node_fail(e, n, err, GN_ERR_GRAPH, "index %lld out of bounds for dim %d of size %lld",
                                 (long long)bg[i], full, (long long)dim);
            if (sd < 0) return node_fail(e, n, err, GN_ERR_GRAPH, "only stride 1 is allowed on a shrunk axis");
            sd = 1;
            size = 1;
        } else {
            int64_t lo = sd > 0 ? 0 : -1, hi = sd > 0 ? dim : dim - 1, ed;
            if ((bm >> i) & 1) b = sd > 0 ? lo : hi;
            else {
                b = bg[i] < 0 ? bg[i] + dim : bg[i];
                b = b < lo ? lo : b > hi ? hi : b;
            }
            if ((em >> i) & 1) ed = sd > 0 ? hi : lo;
            else {
                ed = en[i] < 0 ? en[i] + dim : en[i];
                ed = ed < lo ? lo : ed > hi ? hi : ed;
            }
            size = sd > 0 ? (ed > b ? (ed - b + sd - 1) / sd : 0) : (b > ed ? (b - ed - sd - 1) / -sd : 0);
            if (r >= GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
            od[r++] = size;
        }
        sl->dims[full] = size;
        sl->step[full] = sd * xs[full];
        if (size > 0) sl->start += b * xs[full];
        full++;
    }
    if (full != xr) return node_fail(e, n, err, GN_ERR_INTERNAL, "slice covers %d of %d dims", full, xr);
    *orank = r;
    return GN_OK;
}

/* A fused Add's side input must have the output's shape and dtype. */
static gn_status check_side(const gn__engine *e, cplan *p, const cnode *n, uint32_t o, gn__err *err)
{
    if (!n->side) return GN_OK;
    uint32_t v = n->in[n->epi == EPI_BN ? 6 : 3];
    bool ok = p->rank[v] == p->rank[o] && p->dtype[v] == p->dtype[o];
    for (int32_t d = 0; ok && d < p->rank[o]; d++) ok = vdims(p, v)[d] == vdims(p, o)[d];
    char s1[160], s2[160];
    if (!ok) return node_fail(e, n, err, GN_ERR_GRAPH, "side input %s does not match the output %s", shape_str(p, v, s1, sizeof s1), shape_str(p, o, s2, sizeof s2));
    return GN_OK;
}

/* The epilogue of a fused convolution or matrix product, in place on y
 * (channels c, each a run of inner elements). */
static gn_status run_epilogue(gn__engine *e, cplan *p, const cnode *n, int h, int64_t ne, int64_t c, int64_t inner, void *y,
                              gn__err *err)
{
    cudaStream_t s = e->b->stream;
    if (n->epi == EPI_BN) {
        CK_CUDA(gn__cu_batchnorm(h, p->dtype[n->in[2]] == DT_F16, ne, c, inner, y, vptr(e, p, n->in[2]),
                                 vptr(e, p, n->in[3]), vptr(e, p, n->in[4]), vptr(e, p, n->in[5]), n->eps, y, s));
        if (!n->side && n->act != GN__CU_ID) CK_CUDA(gn__cu_bias_act(h, ne, c, inner, y, NULL, n->act, n->alpha, s));
    }
    if (n->side) {   /* act(y (+ bias) + side), one kernel */
        gn__cu_fused f;
        memset(&f, 0, sizeof f);
        int64_t outer = c > 0 && inner > 0 ? ne / (c * inner) : 0;
        bool bias = n->epi == EPI_BIAS;
        int k = 0;
        f.rank = 3;
        f.dims[0] = outer, f.dims[1] = c, f.dims[2] = inner;
        f.n_in = bias ? 3 : 2;
        f.in[0] = y;
        f.in[1] = vptr(e, p, n->in[n->epi == EPI_BN ? 6 : 3]);
        if (bias) f.in[2] = vptr(e, p, n->in[2]);
        for (int i = 0; i < 2; i++) f.stride[i][0] = c * inner, f.stride[i][1] = inner, f.stride[i][2] = 1;
        f.stride[2][1] = 1;   /* the bias: per channel */
        if (bias) f.ops[k++] = (gn__cu_fuse_op){1, GN__CU_ADD, -1, -3, 0.f};
        f.ops[k] = (gn__cu_fuse_op){1, GN__CU_ADD, (int8_t)(bias ? 0 : -1), -2, 0.f};
        k++;
        if (n->act != GN__CU_ID) {
            f.ops[k] = (gn__cu_fuse_op){0, (int8_t)n->act, (int8_t)(k - 1), 0, n->alpha};
            k++;
        }
        f.n_ops = k;
        CK_CUDA(gn__cu_fused_run(h, &f, y, s));
        return GN_OK;
    }
    if (n->epi == EPI_BN) return GN_OK;
    if (n->has_bias || n->act != GN__CU_ID)
        CK_CUDA(gn__cu_bias_act(h, ne, c, inner, y, n->has_bias ? vptr(e, p, n->in[2]) : NULL, n->act, n->alpha, s));
    return GN_OK;
}

/* Einsum "ab..,cd..->ef.." of two operands (no "...", no label twice in an
 * operand, every label of one operand only also in the output): labels in
 * both and the output are batch dims, in both only contracted, in one
 * operand and the output free. */
static gn_status plan_einsum(const gn__engine *e, const cplan *p, const cnode *n, ceinsum *c, int64_t *od, int32_t *orank,
                             gn__err *err)
{
    const char *eq = NULL;
    size_t len = 0;
    char sa[16], sb[16], so[16];
    if (!gn__attr_get_string(e->g, n->id, "equation", &eq, &len) || len >= 48)
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "missing or long equation");
    char buf[48];
    memcpy(buf, eq, len);
    buf[len] = 0;
    char *comma = strchr(buf, ','), *arrow = strstr(buf, "->");
    if (!comma || !arrow || arrow < comma || strchr(buf, '.') || strchr(buf, ' '))
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': only 'A,B->C' without ellipsis", buf);
    size_t la = (size_t)(comma - buf), lb = (size_t)(arrow - comma - 1), lo = strlen(arrow + 2);
    uint32_t xa = n->in[0], xb = n->in[1];
    if (p->dtype[xa] != p->dtype[xb]) return node_fail(e, n, err, GN_ERR_GRAPH, "operands of different dtypes");
    if (la != (size_t)p->rank[xa] || lb != (size_t)p->rank[xb] || lo > GN__MAX_DIMS || la > 15 || lb > 15 || lo > 15)
        return node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s' does not match the operands' ranks %d and %d", buf,
                         p->rank[xa], p->rank[xb]);
    memcpy(sa, buf, la), sa[la] = 0;
    memcpy(sb, comma + 1, lb), sb[lb] = 0;
    memcpy(so, arrow + 2, lo), so[lo] = 0;
    const int64_t *ad = &p->dims[(size_t)xa * GN__MAX_DIMS], *bd = &p->dims[(size_t)xb * GN__MAX_DIMS];
    int32_t nbat = 0, nm = 0, nn = 0, nk = 0;
    char bat[16], mm[16], nnl[16], kk[16];
    c->batch = c->m = c->n = c->k = 1;
    /* output labels in order: batch, M (from A), N (from B) */
    for (size_t i = 0; i < lo; i++) {
        const char *pa = strchr(sa, so[i]), *pb = strchr(sb, so[i]);
        if (strchr(so + i + 1, so[i]) || (pa && strchr(pa + 1, so[i])) || (pb && strchr(pb + 1, so[i])))
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': a repeated label", buf);
        if (pa && pb) {
            if (ad[pa - sa] != bd[pb - sb]) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': batch dims differ (broadcasting)", buf);
            bat[nbat++] = so[i], c->batch *= ad[pa - sa];
        } else if (pa) mm[nm++] = so[i], c->m *= ad[pa - sa];
        else if (pb) nnl[nn++] = so[i], c->n *= bd[pb - sb];
        else return node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s': output label '%c' is in no operand", buf, so[i]);
        od[i] = pa ? ad[pa - sa] : bd[pb - sb];
    }
    for (size_t i = 0; i < la; i++) {
        if (strchr(so, sa[i])) continue;
        const char *pb = strchr(sb, sa[i]);
        if (!pb || strchr(sa + i + 1, sa[i])) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': label '%c' summed in one operand", buf, sa[i]);
        if (ad[i] != bd[pb - sb]) return node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s': contracted dims differ", buf);
        kk[nk++] = sa[i], c->k *= ad[i];
    }
    for (size_t i = 0; i < lb; i++) {
        if (strchr(sb + i + 1, sb[i])) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': a repeated label", buf);
        if (!strchr(so, sb[i]) && !strchr(sa, sb[i]))
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': label '%c' summed in one operand", buf, sb[i]);
    }
    /* permutations: A -> [bat, M, K], B -> [bat, K, N], [bat, M, N] -> output */
    char ta[16], tb[16], tc[16];
    int32_t r = 0;
    memcpy(ta, bat, (size_t)nbat), memcpy(ta + nbat, mm, (size_t)nm), memcpy(ta + nbat + nm, kk, (size_t)nk);
    memcpy(tb, bat, (size_t)nbat), memcpy(tb + nbat, kk, (size_t)nk), memcpy(tb + nbat + nk, nnl, (size_t)nn);
    memcpy(tc, bat, (size_t)nbat), memcpy(tc + nbat, mm, (size_t)nm), memcpy(tc + nbat + nm, nnl, (size_t)nn);
    c->ra = (int32_t)la, c->rb = (int32_t)lb, c->rc = (int32_t)lo;
    c->ta = c->tb = c->tc = false;
    for (r = 0; r < (int32_t)la; r++) {
        c->pa[r] = (int32_t)(strchr(sa, ta[r]) - sa);
        c->ta |= c->pa[r] != r;
        c->a_dims[r] = ad[r];
    }
    for (r = 0; r < (int32_t)lb; r++) {
        c->pb[r] = (int32_t)(strchr(sb, tb[r]) - sb);
        c->tb |= c->pb[r] != r;
        c->b_dims[r] = bd[r];
    }
    /* C [bat, M, N] (labels tc) to the output (labels so): out dim d = C dim of so[d] */
    for (r = 0; r < (int32_t)lo; r++) {
        c->pc[r] = (int32_t)(memchr(tc, so[r], lo) ? (const char *)memchr(tc, so[r], lo) - tc : 0);
        c->tc |= c->pc[r] != r;
        c->c_dims[r] = od[(const char *)memchr(so, tc[r], lo) - so];
    }
    if (c->m > INT32_MAX || c->n > INT32_MAX || c->k > INT32_MAX || c->batch > INT32_MAX)
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuBLAS");
    *orank = (int32_t)lo;
    return GN_OK;
}

/* Output shape (and per-node plan state) of node k. */
/* One candidate of cuDNN's list: usable when it ran (or is expected to),
 * fits the workspace bound and, for float32 when measured (keep_math
 * false), uses no tensor-op (TF32) math. Sets the descriptor's math type. */
static bool algo_fits(const cu_backend *b, cconv *c, const cudnnConvolutionFwdAlgoPerf_t *pf, cudnnMathType_t want,
                      bool keep_math, algo_entry *a)
{
    if (pf->status != CUDNN_STATUS_SUCCESS || pf->memory > b->ws_limit) return false;
    cudnnMathType_t m = keep_math ? want : pf->mathType;
    if (want == CUDNN_FMA_MATH && m != CUDNN_FMA_MATH) return false;
    if (b->p_cudnnSetConvolutionMathType(c->conv, m) != CUDNN_STATUS_SUCCESS) return false;
    size_t ws = 0;
    if (b->p_cudnnGetConvolutionForwardWorkspaceSize(b->dnn, c->x, c->w, c->conv, c->y, pf->algo, &ws) !=
            CUDNN_STATUS_SUCCESS ||
        ws > b->ws_limit)
        return false;
    a->algo = pf->algo;
    a->math = m;
    a->ws_bytes = ws;
    return true;
}

/* The forward algorithm of convolution c (descriptors set): from the
 * backend's cache when these descriptors were met before; else the fastest
 * that cudnnFindConvolutionForwardAlgorithm measures within the workspace
 * bound; else (the trials failed, e.g. for memory) the first of cuDNN's
 * heuristic list that fits. The choice is cached either way. */
static gn_status choose_algo(gn__engine *e, const cnode *n, cconv *c, const algo_key *key, gn__err *err)
{
    cu_backend *b = e->b;
    for (uint32_t i = 0; i < b->n_algos; i++) {
        const algo_entry *a = &b->algos[i];
        if (memcmp(&a->key, key, sizeof *key) != 0) continue;
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, a->math));
        c->algo = a->algo;
        c->ws_bytes = a->ws_bytes;
        b->algo_hits++;
        return GN_OK;
    }
    algo_entry a;
    memset(&a, 0, sizeof a);
    a.key = *key;
    cudnnMathType_t want = (cudnnMathType_t)key->math;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    bool found = false;
    /* cuDNN allocates the trials' buffers itself and sorts by time */
    if (b->p_cudnnFindConvolutionForwardAlgorithm(b->dnn, c->x, c->w, c->conv, c->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                  &got, perf) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < got && i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && !found; i++)
            found = algo_fits(b, c, &perf[i], want, false, &a);
    (void)cudaGetLastError();   /* a trial's failed allocation leaves a (non-sticky) error behind */
    a.measured = found;
    if (!found) {
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, want));
        got = 0;
        CK_DNN(b->p_cudnnGetConvolutionForwardAlgorithm_v7(b->dnn, c->x, c->w, c->conv, c->y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
        for (int i = 0; i < got && i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && !found; i++)
            found = algo_fits(b, c, &perf[i], want, true, &a);
    }
    if (!found)
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED,
                         "cuDNN has no forward algorithm for this convolution within a %zu-byte workspace", b->ws_limit);
    CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, a.math));
    c->algo = a.algo;
    c->ws_bytes = a.ws_bytes;
    if (a.measured) b->algo_finds++;
    if (b->n_algos == b->cap_algos) {   /* the cache only saves time: when it cannot grow, nothing is lost */
        uint32_t cap = b->cap_algos ? b->cap_algos * 2 : 16;
        algo_entry *na = realloc(b->algos, (size_t)cap * sizeof *na);
        if (!na) return GN_OK;
        b->algos = na;
        b->cap_algos = cap;
    }
    b->algos[b->n_algos++] = a;
    return GN_OK;
}

_Static_assert((int)GN__I8_RELU == (int)GN__CU_RELU && (int)GN__I8_RELU6 == (int)GN__CU_RELU6 &&
                   (int)GN__I8_ELU == (int)GN__CU_ELU && (int)GN__I8_LEAKY == (int)GN__CU_LEAKY_RELU &&
                   (int)GN__I8_ID == (int)GN__CU_ID,
               "int8_math.h's activations are cuda.h's");

static int q8_act(int act)
{
    switch (act) {
    case GN__Q8_ACT_RELU: return GN__CU_RELU;
    case GN__Q8_ACT_RELU6: return GN__CU_RELU6;
    case GN__Q8_ACT_ELU: return GN__CU_ELU;
    case GN__Q8_ACT_LEAKY: return GN__CU_LEAKY_RELU;
    default: return GN__CU_ID;
    }
}

/* An int8 node's plan (ci8), once plan_node has checked its shapes; none
 * (the node runs in float) when its weights are not known on the host now
 * or its input is not float32. */
static gn_status plan_q8(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    const cnode *n = &e->nodes[k];
    uint32_t x = n->in[0], o = n->out;
    const gn__tensor *w = host_tensor(e, p, p->root[n->in[1]]);
    if (!w || p->dtype[x] != DT_F32) return GN_OK;
    int64_t K = 0, N = 0;
    GN_TRY(gn__q8_weights(e->g, n->id, &n->q8, w, 0, NULL, NULL, &K, &N, err));
    ci8 *c = calloc(1, sizeof *c);
    if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    p->i8[k] = c;
    c->kind = n->q8.kind;
    c->k = K;
    c->n = N;
    c->kp = (K + 15) / 16 * 16;
    c->sx = n->q8_sx;
    c->inv = 1.0f / c->sx;
    c->act = q8_act(n->q8.act);
    const int64_t *xd = vdims(p, x), *od = vdims(p, o);
    if (c->kind == GN__Q8_MM) {
        c->m = od[0];
        if (od[1] != N || (n->q8.ta ? xd[0] : xd[1]) != K)
            return node_fail(e, n, err, GN_ERR_INTERNAL, "int8 weights do not match the planned shapes");
    } else {
        gn__cu_conv8 *g = &c->geo;
        int64_t bh, ah, bw, aw, oh, ow;
        GN_TRY(window(e, n, xd[1], w->dims[0], 1, n->q8.stride[0], &n->explicit_pad[0], &oh, &bh, &ah, err));
        GN_TRY(window(e, n, xd[2], w->dims[1], 1, n->q8.stride[1], &n->explicit_pad[2], &ow, &bw, &aw, err));
        *g = (gn__cu_conv8){.n = xd[0], .h = xd[1], .w = xd[2], .c = xd[3], .oh = oh, .ow = ow, .kh = w->dims[0],
                            .kw = w->dims[1], .sh = n->q8.stride[0], .sw = n->q8.stride[1], .pad_top = bh, .pad_left = bw};
        c->m = g->n * oh * ow;
        c->mult = w->dims[3];
        if (oh != od[1] || ow != od[2] || od[3] != N || w->dims[2] != g->c)
            return node_fail(e, n, err, GN_ERR_INTERNAL, "int8 weights do not match the planned shapes");
    }
    size_t wbytes = (size_t)(c->kind == GN__Q8_DW ? K * N : N * c->kp);
    c->wq_bytes = align_up(wbytes ? wbytes : 1);
    c->h_wq = malloc(wbytes + 1);
    c->h_sw = malloc((size_t)(N + 1) * sizeof *c->h_sw);
    if (!c->h_wq || !c->h_sw) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(gn__q8_weights(e->g, n->id, &n->q8, w, c->kp, c->h_wq, c->h_sw, &K, &N, err));
    size_t base = (size_t)k * N_SCR;
    p->scr_bytes[base + SCR_W] = c->wq_bytes + (size_t)N * sizeof(float);
    if (c->kind != GN__Q8_DW) {
        p->scr_bytes[base + SCR_PAD] = (size_t)(c->m * c->kp);
        p->scr_bytes[base + SCR_WS] = (size_t)(c->m * N) * sizeof(int32_t);
        c->lt = plan_lt8(e->b, c->m, N, c->kp);
    }
    return GN_OK;
}

/* An XLA data-movement node's output shape (set in the plan), checked as the
 * CPU kernels check it; the launch parameters of XlaPad (pad) and XlaGather
 * (gather) when asked for. */
static gn_status plan_xla(const gn__engine *e, cplan *p, const cnode *n, gn__cu_xpad *pad, gn__cu_xgather *gather,
                          gn__err *err)
{
    uint32_t x = n->in[0], o = n->out, iv = n->in[n->op->sub == XLA_DUS ? 2 : 1];   /* the indices (XlaPad: unused) */
    int64_t *od = vdims(p, o), *xd = vdims(p, x), v[3][GN__MAX_DIMS], cnt = 0;
    int32_t xr = p->rank[x];
    char s1[160];
    if (n->op->sub != XLA_PAD && p->dtype[iv] != (n->idx64 ? DT_I64 : DT_I32))
        return node_fail(e, n, err, GN_ERR_GRAPH, "indices are %s, not Tindices", gn_dtype_numpy_name(p->dtype[iv]));
    if (xr > GN__CU_MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d is over %d", xr, GN__CU_MAX_DIMS);
    switch (n->op->sub) {
    case XLA_DSLICE:
        if (p->rank[iv] != 1 || vdims(p, iv)[0] != xr)
            return node_fail(e, n, err, GN_ERR_GRAPH, "start_indices must be a vector of %d entries", xr);
        GN_TRY(const_ints(e, p, n, n->in[2], v[0], GN__MAX_DIMS, &cnt, err));
        if (cnt != xr) return node_fail(e, n, err, GN_ERR_GRAPH, "size_indices has %lld entries; the operand has rank %d", (long long)cnt, xr);
        for (int32_t d = 0; d < xr; d++) {
            if (v[0][d] < 0 || v[0][d] > xd[d])
                return node_fail(e, n, err, GN_ERR_GRAPH, "size_indices[%d] = %lld is out of range for %s", d, (long long)v[0][d], shape_str(p, x, s1, sizeof s1));
            od[d] = v[0][d];
        }
        return GN_OK;
    case XLA_DUS: {
        uint32_t u = n->in[1];
        if (p->dtype[u] != p->dtype[x] || p->rank[u] != xr)
            return node_fail(e, n, err, GN_ERR_GRAPH, "update %s does not match the operand %s", shape_str(p, u, s1, sizeof s1), gn_dtype_numpy_name(p->dtype[x]));
        for (int32_t d = 0; d < xr; d++)
            if (vdims(p, u)[d] > xd[d]) return node_fail(e, n, err, GN_ERR_GRAPH, "update dimension %d is larger than the operand's", d);
        if (p->rank[iv] != 1 || vdims(p, iv)[0] != xr)
            return node_fail(e, n, err, GN_ERR_GRAPH, "indices must be a vector of %d entries", xr);
        return GN_OK;
    }
    case XLA_PAD: {
        if (p->dtype[n->in[1]] != p->dtype[x] || numel_of(p, n->in[1]) != 1)
            return node_fail(e, n, err, GN_ERR_GRAPH, "padding_value must be one %s value", gn_dtype_numpy_name(p->dtype[x]));
        for (int k = 0; k < 3; k++) {
            GN_TRY(const_ints(e, p, n, n->in[2 + k], v[k], GN__MAX_DIMS, &cnt, err));
            if (cnt != xr) return node_fail(e, n, err, GN_ERR_GRAPH, "padding input %d has %lld entries; the operand has rank %d", 2 + k, (long long)cnt, xr);
        }
        for (int32_t d = 0; d < xr; d++) {
            if (v[2][d] < 0) return node_fail(e, n, err, GN_ERR_GRAPH, "padding_interior[%d] is negative", d);
            od[d] = v[0][d] + v[1][d] + xd[d] + (xd[d] > 0 ? (xd[d] - 1) * v[2][d] : 0);
            if (od[d] < 0) return node_fail(e, n, err, GN_ERR_GRAPH, "padding gives dimension %d a negative size", d);
        }
        if (pad) {
            pad->rank = xr;
            for (int32_t d = 0; d < xr; d++) {
                pad->in_dims[d] = xd[d];
                pad->out_dims[d] = od[d];
                pad->lo[d] = v[0][d];
                pad->interior[d] = v[2][d];
            }
        }
        return GN_OK;
    }
    default: {
        int32_t ir = p->rank[iv];
        const int64_t *id = vdims(p, iv);
        gn__xla_gather_dims d;
        gn__xla_gather_geom geo;
        char why[GN__XLA_WHY];
        GN_TRY(const_ints(e, p, n, n->in[2], v[0], GN__MAX_DIMS, &cnt, err));
        if (cnt != xr) return node_fail(e, n, err, GN_ERR_GRAPH, "slice_sizes has %lld entries; the operand has rank %d", (long long)cnt, xr);
        if (!gn__xla_gather_attr(e->g, n->id, xr, ir, &d, why) || !gn__xla_gather_shape(&d, xr, xd, ir, id, v[0], &geo, why))
            return node_fail(e, n, err, GN_ERR_GRAPH, "%s", why);
        if (geo.out_rank > GN__CU_MAX_DIMS || ir > GN__CU_MAX_DIMS)
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "output rank %d is over %d", geo.out_rank, GN__CU_MAX_DIMS);
        p->rank[o] = geo.out_rank;
        memcpy(od, geo.out_dims, sizeof(int64_t) * (size_t)geo.out_rank);
        if (gather) {
            memset(gather, 0, sizeof *gather);
            gather->out_rank = geo.out_rank;
            gather->op_rank = xr;
            gather->n_index = d.start_index_map.n;
            int64_t m = 1;
            for (int32_t k = ir - 1; k >= 0; k--) gather->idx_stride[k] = m, m *= id[k];
            gather->ivd_stride = d.index_vector_dim < ir ? gather->idx_stride[d.index_vector_dim] : 0;
            m = 1;
            for (int32_t k = xr - 1; k >= 0; k--) {
                gather->op_dims[k] = xd[k];
                gather->op_stride[k] = m;
                gather->slice[k] = v[0][k];
                m *= xd[k];
            }
            for (int32_t k = 0; k < geo.out_rank; k++) {
                gather->out_dims[k] = geo.out_dims[k];
                gather->out_map[k] = geo.out_map[k];
            }
            for (int32_t j = 0; j < d.start_index_map.n; j++) gather->start_map[j] = (int32_t)d.start_index_map.v[j];
        }
        return GN_OK;
    }
    }
}

static gn_status plan_node(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    cnode *n = &e->nodes[k];
    if (n->op->kind == OP_NOOP) return GN_OK;
    if (n->op->kind == OP_HOST) return plan_host(e, p, n, err);
    if (n->op->kind == OP_ENGINE) return plan_engine(e, p, k, err);
    uint32_t o = n->out, x = n->in[n->op->kind == OP_SPLIT && n->op->sub == 0 ? 1 : 0];
    int64_t *od = vdims(p, o), *xd = vdims(p, x);
    int32_t xr = p->rank[x];
    char s1[160], s2[160];
    p->root[o] = o;
    p->dtype[o] = p->dtype[x];
    p->rank[o] = xr;
    memcpy(od, xd, sizeof(int64_t) * GN__MAX_DIMS);
    bool need_float = true;
    switch (n->op->kind) {
    case OP_ALIAS:
        need_float = false;
        p->root[o] = p->root[x];
        break;
    case OP_RESHAPE: {
        need_float = false;
        int64_t s[GN__MAX_DIMS], cnt = 0, known = 1, neg = -1;
        GN_TRY(const_ints(e, p, n, n->in[1], s, GN__MAX_DIMS, &cnt, err));
        for (int64_t d = 0; d < cnt; d++) {
            if (s[d] == -1 && neg < 0) neg = d;
            else if (s[d] < 0) return node_fail(e, n, err, GN_ERR_GRAPH, "bad shape value %lld", (long long)s[d]);
            else known *= s[d];
        }
        int64_t total = numel_of(p, x);
        if (neg >= 0) s[neg] = known ? total / known : 0;
        int64_t prod = 1;
        for (int64_t d = 0; d < cnt; d++) prod *= s[d];
        if (prod != total) return node_fail(e, n, err, GN_ERR_GRAPH, "cannot reshape %s to %lld elements", shape_str(p, x, s1, sizeof s1), (long long)prod);
        p->rank[o] = (int32_t)cnt;
        memcpy(od, s, sizeof(int64_t) * (size_t)cnt);
        p->root[o] = p->root[x];
        break;
    }
    case OP_SQUEEZE: {
        need_float = false;
        uint8_t drop[GN__MAX_DIMS] = {0};
        for (uint32_t i = 0; i < n->n_squeeze; i++) {
            int64_t a = n->squeeze[i] < 0 ? n->squeeze[i] + xr : n->squeeze[i];
            if (a < 0 || a >= xr || xd[a] != 1) return node_fail(e, n, err, GN_ERR_GRAPH, "cannot squeeze dim %lld of %s", (long long)n->squeeze[i], shape_str(p, x, s1, sizeof s1));
            drop[a] = 1;
        }
        int32_t r = 0;
        for (int32_t d = 0; d < xr; d++)
            if (!(n->n_squeeze ? drop[d] : xd[d] == 1)) od[r++] = xd[d];
        p->rank[o] = r;
        p->root[o] = p->root[x];
        break;
    }
    case OP_EXPAND: {
        need_float = false;
        int64_t a, cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], &a, 1, &cnt, err));
        if (cnt != 1) return node_fail(e, n, err, GN_ERR_GRAPH, "axis must be one value");
        if (a < 0) a += xr + 1;
        if (a < 0 || a > xr || xr >= GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_GRAPH, "bad axis");
        for (int32_t d = xr; d > a; d--) od[d] = xd[d - 1];
        od[a] = 1;
        p->rank[o] = xr + 1;
        p->root[o] = p->root[x];
        break;
    }
    case OP_UNARY:
    case OP_SOFTMAX:
        if (n->op->kind == OP_SOFTMAX && xr < 1) return node_fail(e, n, err, GN_ERR_GRAPH, "Softmax needs rank >= 1");
        break;
    case OP_CAST: p->dtype[o] = n->dst_dtype; break;
    case OP_BINARY: {
        uint32_t y = n->in[1];
        int64_t *yd = vdims(p, y);
        int32_t yr = p->rank[y], r = xr > yr ? xr : yr;
        if (p->dtype[y] != p->dtype[x]) return node_fail(e, n, err, GN_ERR_GRAPH, "dtypes differ");
        for (int32_t d = 0; d < r; d++) {
            int64_t a = d - (r - xr) >= 0 ? xd[d - (r - xr)] : 1, c = d - (r - yr) >= 0 ? yd[d - (r - yr)] : 1;
            if (a != c && a != 1 && c != 1)
                return node_fail(e, n, err, GN_ERR_GRAPH, "shapes %s and %s do not broadcast", shape_str(p, x, s1, sizeof s1), shape_str(p, y, s2, sizeof s2));
            od[d] = a == 1 ? c : a;
        }
        p->rank[o] = r;
        break;
    }
    case OP_BIAS_ADD: {
        uint32_t y = n->in[1];
        int32_t cd = n->nchw ? 1 : xr - 1;
        if (xr < 2 || p->rank[y] != 1 || vdims(p, y)[0] != xd[cd] || p->dtype[y] != p->dtype[x])
            return node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match input %s", shape_str(p, y, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
        break;
    }
    case OP_MATMUL:
    case OP_BMM: {
        uint32_t y = n->in[1];
        int64_t *yd = vdims(p, y);
        int32_t yr = p->rank[y];
        if (p->dtype[y] != p->dtype[x]) return node_fail(e, n, err, GN_ERR_GRAPH, "dtypes differ");
        if (xr < 2 || yr < 2 || (n->op->kind == OP_MATMUL && (xr != 2 || yr != 2)))
            return node_fail(e, n, err, GN_ERR_GRAPH, "bad operand ranks");
        int64_t m = n->ta ? xd[xr - 1] : xd[xr - 2], kx = n->ta ? xd[xr - 2] : xd[xr - 1];
        int64_t ky = n->tb ? yd[yr - 1] : yd[yr - 2], nn = n->tb ? yd[yr - 2] : yd[yr - 1];
        if (kx != ky) return node_fail(e, n, err, GN_ERR_GRAPH, "inner dims differ: %s and %s", shape_str(p, x, s1, sizeof s1), shape_str(p, y, s2, sizeof s2));
        int32_t r = xr > yr ? xr : yr;
        for (int32_t d = 0; d < r - 2; d++) {
            int64_t a = d - (r - xr) >= 0 ? xd[d - (r - xr)] : 1, c = d - (r - yr) >= 0 ? yd[d - (r - yr)] : 1;
            if (a != c && a != 1 && c != 1) return node_fail(e, n, err, GN_ERR_GRAPH, "batch dims do not broadcast");
            od[d] = a == 1 ? c : a;
        }
        od[r - 2] = m;
        od[r - 1] = nn;
        p->rank[o] = r;
        if (n->has_bias) {
            uint32_t bv = n->in[2];
            if (p->rank[bv] != 1 || vdims(p, bv)[0] != nn || p->dtype[bv] != p->dtype[x])
                return node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match %lld columns", shape_str(p, bv, s1, sizeof s1), (long long)nn);
        }
        GN_TRY(check_side(e, p, n, o, err));
        if (n->is_q8) GN_TRY(plan_q8(e, p, k, err));
        if (!p->i8[k] && n->op->kind == OP_MATMUL && n->op->sub == 1 && is_float(p->dtype[x]))
            p->lt[k] = plan_lt(e, n, p->dtype[x] == DT_F16, m, nn, kx);
        break;
    }
    case OP_CONV: {
        uint32_t w = n->in[1];
        int64_t *wd = vdims(p, w);
        bool dw = n->op->sub == 1 || n->op->sub == 3;
        if (xr != 4 || p->rank[w] != 4 || p->dtype[w] != p->dtype[x])
            return node_fail(e, n, err, GN_ERR_GRAPH, "input %s and filter %s must be 4-D of one dtype", shape_str(p, x, s1, sizeof s1), shape_str(p, w, s2, sizeof s2));
        int hd = n->nchw ? 2 : 1, cdim = n->nchw ? 1 : 3;
        int64_t N = xd[0], C = xd[cdim], H = xd[hd], W = xd[hd + 1];
        int64_t kh = wd[0], kw = wd[1], ci = wd[2], co = dw ? wd[2] * wd[3] : wd[3];
        if (dw ? ci != C : (ci < 1 || C % ci != 0 || co % (C / ci) != 0))
            return node_fail(e, n, err, GN_ERR_GRAPH, "filter %s does not match input %s", shape_str(p, w, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(window(e, n, H, kh, n->dil[0], n->stride[0], &n->explicit_pad[0], &oh, &bh, &ah, err));
        GN_TRY(window(e, n, W, kw, n->dil[1], n->stride[1], &n->explicit_pad[2], &ow, &bw, &aw, err));
        od[0] = N;
        od[cdim] = co;
        od[hd] = oh;
        od[hd + 1] = ow;
        if (n->has_bias) {
            uint32_t bv = n->in[2];
            if (p->rank[bv] != 1 || vdims(p, bv)[0] != co || p->dtype[bv] != p->dtype[x])
                return node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match %lld channels", shape_str(p, bv, s1, sizeof s1), (long long)co);
        }
        for (uint32_t i = 2; n->epi == EPI_BN && i < 6; i++) {
            uint32_t v = n->in[i];
            if (p->rank[v] != 1 || vdims(p, v)[0] != co || !is_float(p->dtype[v]) || p->dtype[v] != p->dtype[n->in[2]])
                return node_fail(e, n, err, GN_ERR_GRAPH, "batch norm argument %u %s does not match %lld channels", i - 2, shape_str(p, v, s1, sizeof s1), (long long)co);
        }
        p->rank[o] = 4;
        GN_TRY(check_side(e, p, n, o, err));
        if (n->is_q8) GN_TRY(plan_q8(e, p, k, err));
        if (!is_float(p->dtype[x]) || p->i8[k]) break;
        cconv *c = calloc(1, sizeof *c);
        if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->conv[k] = c;
        c->c_out = co;
        c->inner = n->nchw ? oh * ow : 1;
        /* cuDNN pads symmetrically: the rest is padded here first */
        int64_t ph = bh < ah ? bh : ah, pw = bw < aw ? bw : aw;
        int64_t Hp = H + (bh - ph) + (ah - ph), Wp = W + (bw - pw) + (aw - pw);
        size_t es = p->dtype[x] == DT_F16 ? 2 : 4;
        if (Hp != H || Wp != W) {
            c->prepad = true;
            memcpy(c->pp_in, xd, sizeof c->pp_in);
            memset(c->pp_before, 0, sizeof c->pp_before);
            c->pp_before[hd] = bh - ph;
            c->pp_before[hd + 1] = bw - pw;
            memcpy(c->pp_out, xd, sizeof c->pp_out);
            c->pp_out[hd] = Hp;
            c->pp_out[hd + 1] = Wp;
            p->scr_bytes[(size_t)k * N_SCR + SCR_PAD] = (size_t)(N * C * Hp * Wp) * es;
        }
        memcpy(c->w_dims, wd, sizeof c->w_dims);
        c->w_once = host_tensor(e, p, w) != NULL;
        /* TensorFlow HWIO (depthwise: HWIM) to KCRS (NCHW) or KRSC (NHWC) */
        static const int32_t perm_kcrs[4] = {3, 2, 0, 1}, perm_krsc[4] = {3, 0, 1, 2}, perm_dw[4] = {2, 3, 0, 1};
        memcpy(c->w_perm, dw ? perm_dw : n->nchw ? perm_kcrs : perm_krsc, sizeof c->w_perm);
        p->scr_bytes[(size_t)k * N_SCR + SCR_W] = (size_t)(kh * kw * wd[2] * wd[3]) * es;
        cudnnDataType_t dt = p->dtype[x] == DT_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        cudnnTensorFormat_t fmt = n->nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
        int64_t groups = dw ? C : C / ci, fc = dw ? 1 : ci;
        if (N > INT32_MAX || C > INT32_MAX || Hp > INT32_MAX || Wp > INT32_MAX || co > INT32_MAX)
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuDNN");
        CK_DNN(b->p_cudnnCreateTensorDescriptor(&c->x));
        CK_DNN(b->p_cudnnCreateTensorDescriptor(&c->y));
        CK_DNN(b->p_cudnnCreateFilterDescriptor(&c->w));
        CK_DNN(b->p_cudnnCreateConvolutionDescriptor(&c->conv));
        CK_DNN(b->p_cudnnSetTensor4dDescriptor(c->x, fmt, dt, (int)N, (int)C, (int)Hp, (int)Wp));
        CK_DNN(b->p_cudnnSetFilter4dDescriptor(c->w, dt, fmt, (int)co, (int)fc, (int)kh, (int)kw));
        CK_DNN(b->p_cudnnSetConvolution2dDescriptor(c->conv, (int)ph, (int)pw, (int)n->stride[0], (int)n->stride[1],
                                                   (int)n->dil[0], (int)n->dil[1], CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
        CK_DNN(b->p_cudnnSetConvolutionGroupCount(c->conv, (int)groups));
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
        int yn, yc, yh, yw;
        CK_DNN(b->p_cudnnGetConvolution2dForwardOutputDim(c->conv, c->x, c->w, &yn, &yc, &yh, &yw));
        if (yn != N || yc != co || yh != oh || yw != ow)
            return node_fail(e, n, err, GN_ERR_INTERNAL, "cuDNN output %dx%dx%dx%d, expected %lldx%lldx%lldx%lld", yn, yc, yh, yw,
                             (long long)N, (long long)co, (long long)oh, (long long)ow);
        CK_DNN(b->p_cudnnSetTensor4dDescriptor(c->y, fmt, dt, yn, yc, yh, yw));
        algo_key key;
        memset(&key, 0, sizeof key);
        key.dt = (int32_t)dt;
        key.fmt = (int32_t)fmt;
        key.n = (int32_t)N;
        key.c = (int32_t)C;
        key.h = (int32_t)Hp;
        key.w = (int32_t)Wp;
        key.k = (int32_t)co;
        key.fc = (int32_t)fc;
        key.r = (int32_t)kh;
        key.s = (int32_t)kw;
        key.pad_h = (int32_t)ph;
        key.pad_w = (int32_t)pw;
        key.str_h = (int32_t)n->stride[0];
        key.str_w = (int32_t)n->stride[1];
        key.dil_h = (int32_t)n->dil[0];
        key.dil_w = (int32_t)n->dil[1];
        key.groups = (int32_t)groups;
        key.math = (int32_t)(dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH);
        key.ws_limit = b->ws_limit;
        GN_TRY(choose_algo(e, n, c, &key, err));
        p->scr_bytes[(size_t)k * N_SCR + SCR_WS] = c->ws_bytes;
        break;
    }
    case OP_POOL: {
        if (xr != 4) return node_fail(e, n, err, GN_ERR_GRAPH, "input %s must be 4-D", shape_str(p, x, s1, sizeof s1));
        int hd = n->nchw ? 2 : 1;
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(window(e, n, xd[hd], n->ksize[0], 1, n->stride[0], NULL, &oh, &bh, &ah, err));
        GN_TRY(window(e, n, xd[hd + 1], n->ksize[1], 1, n->stride[1], NULL, &ow, &bw, &aw, err));
        od[hd] = oh;
        od[hd + 1] = ow;
        break;
    }
    case OP_BN: {
        int32_t cd = n->nchw ? 1 : xr - 1;
        if (xr < 2) return node_fail(e, n, err, GN_ERR_GRAPH, "input must have rank >= 2");
        for (uint32_t i = 1; i < 5; i++) {
            uint32_t v = n->in[i];
            if (p->rank[v] != 1 || vdims(p, v)[0] != xd[cd] || !is_float(p->dtype[v]) || p->dtype[v] != p->dtype[n->in[1]])
                return node_fail(e, n, err, GN_ERR_GRAPH, "argument %u %s does not match %lld channels", i, shape_str(p, v, s1, sizeof s1), (long long)xd[cd]);
        }
        break;
    }
    case OP_TRANSPOSE: {
        need_float = false;
        int64_t pm[GN__MAX_DIMS], cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], pm, GN__MAX_DIMS, &cnt, err));
        uint8_t seen[GN__MAX_DIMS] = {0};
        if (cnt != xr) return node_fail(e, n, err, GN_ERR_GRAPH, "perm has %lld entries for rank %d", (long long)cnt, xr);
        for (int32_t d = 0; d < xr; d++) {
            if (pm[d] < 0 || pm[d] >= xr || seen[pm[d]]++) return node_fail(e, n, err, GN_ERR_GRAPH, "bad perm");
            od[d] = xd[pm[d]];
        }
        break;
    }
    case OP_CONCAT: {
        need_float = false;
        int64_t a, cnt = 0;
        if (n->op->sub) {   /* Pack: a new dim of n_in at axis */
            a = n->axis < 0 ? n->axis + xr + 1 : n->axis;
            if (a < 0 || a > xr || xr >= GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_GRAPH, "bad axis %lld", (long long)n->axis);
            for (uint32_t i = 0; i < n->n_in; i++) {
                uint32_t v = n->in[i];
                bool ok = p->rank[v] == xr && p->dtype[v] == p->dtype[x];
                for (int32_t d = 0; ok && d < xr; d++) ok = vdims(p, v)[d] == xd[d];
                if (!ok) return node_fail(e, n, err, GN_ERR_GRAPH, "input %u %s does not match %s", i, shape_str(p, v, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
            }
            for (int32_t d = xr; d > a; d--) od[d] = xd[d - 1];
            od[a] = n->n_in;
            p->rank[o] = xr + 1;
            break;
        }
        GN_TRY(const_ints(e, p, n, n->in[n->n_in - 1], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return node_fail(e, n, err, GN_ERR_GRAPH, "bad axis");
        od[a] = 0;
        for (uint32_t i = 0; i + 1 < n->n_in; i++) {
            uint32_t v = n->in[i];
            bool ok = p->rank[v] == xr && p->dtype[v] == p->dtype[x];
            for (int32_t d = 0; ok && d < xr; d++) ok = d == a || vdims(p, v)[d] == xd[d];
            if (!ok) return node_fail(e, n, err, GN_ERR_GRAPH, "input %u %s does not match %s", i, shape_str(p, v, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
            od[a] += vdims(p, v)[a];
        }
        break;
    }
    case OP_REDUCE: {
        int64_t ax[GN__MAX_DIMS], cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], ax, GN__MAX_DIMS, &cnt, err));
        uint8_t red[GN__MAX_DIMS] = {0};
        for (int64_t i = 0; i < cnt; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + xr : ax[i];
            if (a < 0 || a >= xr) return node_fail(e, n, err, GN_ERR_GRAPH, "bad reduction axis %lld", (long long)ax[i]);
            red[a] = 1;
        }
        int32_t r = 0;
        for (int32_t d = 0; d < xr; d++) {
            if (!red[d]) od[r++] = xd[d];
            else if (n->keep_dims) od[r++] = 1;
        }
        p->rank[o] = r;
        break;
    }
    case OP_PAD: {
        need_float = false;
        int64_t pd[2 * GN__MAX_DIMS], cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], pd, 2 * GN__MAX_DIMS, &cnt, err));
        if (cnt != 2 * xr) return node_fail(e, n, err, GN_ERR_GRAPH, "paddings must be [%d, 2]", xr);
        for (int32_t d = 0; d < xr; d++) {
            if (pd[2 * d] < 0 || pd[2 * d + 1] < 0) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "negative paddings");
            int64_t lim = n->mirror == GN__CU_PAD_REFLECT ? xd[d] - 1 : xd[d];
            if (n->op->sub == 2 && (pd[2 * d] > lim || pd[2 * d + 1] > lim))
                return node_fail(e, n, err, GN_ERR_GRAPH, "paddings of dim %d must be at most %lld (%s)", d, (long long)lim,
                                 n->mirror == GN__CU_PAD_REFLECT ? "REFLECT" : "SYMMETRIC");
            od[d] = xd[d] + pd[2 * d] + pd[2 * d + 1];
        }
        if (n->op->sub == 1) {
            const gn__tensor *cv = host_tensor(e, p, n->in[2]);
            if (!cv || cv->dtype != p->dtype[x] || gn__tensor_numel(cv) != 1)
                return node_fail(e, n, err, GN_ERR_GRAPH, "constant_values must be one value of the input's dtype");
        }
        break;
    }
    case OP_SLICE: {
        need_float = false;
        gn__cu_slice *sl = calloc(1, sizeof *sl);
        if (!sl) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->sl[k] = sl;
        if (n->op->sub) {
            GN_TRY(strided_slice(e, p, n, x, sl, od, &p->rank[o], err));
            break;
        }
        int64_t bg[GN__MAX_DIMS], sz[GN__MAX_DIMS], xs[GN__MAX_DIMS], nb = 0, ns = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], bg, GN__MAX_DIMS, &nb, err));
        GN_TRY(const_ints(e, p, n, n->in[2], sz, GN__MAX_DIMS, &ns, err));
        if (nb != xr || ns != xr) return node_fail(e, n, err, GN_ERR_GRAPH, "begin and size must have %d values", xr);
        row_strides(xr, xd, xs);
        sl->rank = xr;
        for (int32_t d = 0; d < xr; d++) {
            if (sz[d] == -1) sz[d] = xd[d] - bg[d];
            if (bg[d] < 0 || sz[d] < 0 || bg[d] + sz[d] > xd[d])
                return node_fail(e, n, err, GN_ERR_GRAPH, "slice [%lld, +%lld) outside dim %d of %s", (long long)bg[d],
                                 (long long)sz[d], d, shape_str(p, x, s1, sizeof s1));
            sl->dims[d] = sz[d];
            sl->step[d] = xs[d];
            if (sz[d] > 0) sl->start += bg[d] * xs[d];
            od[d] = sz[d];
        }
        break;
    }
    case OP_SPLIT: {
        need_float = false;
        int64_t a = n->axis, cnt = 1, num = n->n_out, sizes[4096];
        if (n->op->sub != 2) GN_TRY(const_ints(e, p, n, n->in[n->op->sub ? 2 : 0], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return node_fail(e, n, err, GN_ERR_GRAPH, "bad axis for input %s", shape_str(p, x, s1, sizeof s1));
        if (n->op->sub == 0) {
            if (xd[a] % num) return node_fail(e, n, err, GN_ERR_GRAPH, "dim %lld of %s does not split in %lld", (long long)a, shape_str(p, x, s1, sizeof s1), (long long)num);
            for (int64_t i = 0; i < num; i++) sizes[i] = xd[a] / num;
        } else if (n->op->sub == 1) {
            int64_t got = 0, sum = 0, neg = -1;
            GN_TRY(const_ints(e, p, n, n->in[1], sizes, num, &got, err));
            if (got != num) return node_fail(e, n, err, GN_ERR_GRAPH, "size_splits has %lld values for num_split %lld", (long long)got, (long long)num);
            for (int64_t i = 0; i < num; i++) {
                if (sizes[i] == -1 && neg < 0) neg = i;
                else if (sizes[i] < 0) return node_fail(e, n, err, GN_ERR_GRAPH, "bad size_splits value %lld", (long long)sizes[i]);
                else sum += sizes[i];
            }
            if (neg >= 0) sizes[neg] = xd[a] - sum, sum = xd[a];
            if (sum != xd[a] || (neg >= 0 && sizes[neg] < 0))
                return node_fail(e, n, err, GN_ERR_GRAPH, "size_splits do not add up to dim %lld of %s", (long long)a, shape_str(p, x, s1, sizeof s1));
        } else {
            if (xd[a] != num) return node_fail(e, n, err, GN_ERR_GRAPH, "dim %lld of %s is not num %lld", (long long)a, shape_str(p, x, s1, sizeof s1), (long long)num);
            for (int64_t i = 0; i < num; i++) sizes[i] = 1;
        }
        gn__cu_slice *sl = calloc((size_t)num, sizeof *sl);
        if (!sl) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->sl[k] = sl;
        int64_t xs[GN__MAX_DIMS], at = 0;
        row_strides(xr, xd, xs);
        for (int64_t i = 0; i < num; i++) {
            uint32_t v = o + (uint32_t)i;
            sl[i].rank = xr;
            memcpy(sl[i].dims, xd, sizeof(int64_t) * (size_t)xr);
            memcpy(sl[i].step, xs, sizeof(int64_t) * (size_t)xr);
            sl[i].dims[a] = sizes[i];
            sl[i].start = at * xs[a];
            at += sizes[i];
            p->root[v] = v;
            p->dtype[v] = p->dtype[x];
            int64_t *vd = vdims(p, v);
            memcpy(vd, xd, sizeof(int64_t) * GN__MAX_DIMS);
            vd[a] = sizes[i];
            p->rank[v] = xr;
            if (n->op->sub == 2) {   /* Unpack: the axis goes */
                for (int32_t d = (int32_t)a; d + 1 < xr; d++) vd[d] = vd[d + 1];
                p->rank[v] = xr - 1;
            }
        }
        break;
    }
    case OP_EINSUM: {
        ceinsum *c = calloc(1, sizeof *c);
        if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->ein[k] = c;
        GN_TRY(plan_einsum(e, p, n, c, od, &p->rank[o], err));
        size_t es = gn_dtype_size(p->dtype[x]);
        if (c->ta) p->scr_bytes[(size_t)k * N_SCR + SCR_W] = (size_t)(c->batch * c->m * c->k) * es;
        if (c->tb) p->scr_bytes[(size_t)k * N_SCR + SCR_PAD] = (size_t)(c->batch * c->k * c->n) * es;
        if (c->tc) p->scr_bytes[(size_t)k * N_SCR + SCR_WS] = (size_t)(c->batch * c->m * c->n) * es;
        break;
    }
    case OP_GATHER: {
        need_float = false;
        uint32_t iv = n->in[1];
        int64_t a, cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[2], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return node_fail(e, n, err, GN_ERR_GRAPH, "bad axis for params %s", shape_str(p, x, s1, sizeof s1));
        if (p->dtype[iv] != (n->idx64 ? DT_I64 : DT_I32)) return node_fail(e, n, err, GN_ERR_GRAPH, "indices are %s, not Tindices", gn_dtype_numpy_name(p->dtype[iv]));
        int32_t ir = p->rank[iv];
        if (xr - 1 + ir > GN__MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
        int32_t r = 0;
        int64_t tmp[GN__MAX_DIMS];
        for (int32_t d = 0; d < a; d++) tmp[r++] = xd[d];
        for (int32_t d = 0; d < ir; d++) tmp[r++] = vdims(p, iv)[d];
        for (int32_t d = (int32_t)a + 1; d < xr; d++) tmp[r++] = xd[d];
        memcpy(od, tmp, sizeof(int64_t) * (size_t)r);
        p->rank[o] = r;
        break;
    }
    case OP_XLA:
        need_float = false;
        GN_TRY(plan_xla(e, p, n, NULL, NULL, err));
        break;
    default: return node_fail(e, n, err, GN_ERR_INTERNAL, "unhandled op");
    }
    if (need_float && !is_float(p->dtype[x]))
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dtype %s is not supported on the CUDA backend (float32 and float16 only)",
                         gn_dtype_numpy_name(p->dtype[x]));
    size_t es = gn_dtype_size(p->dtype[x]);
    if (!need_float && es != 1 && es != 2 && es != 4 && es != 8)
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dtype %s is not supported on the CUDA backend", gn_dtype_numpy_name(p->dtype[x]));
    return GN_OK;
}

/* ---- layer norm as one kernel ------------------------------------------------------------
 * The layer-norm subgraph over the last axis, as Keras writes it out:
 *   M = Mean(X, -1, keep_dims), V = Mean(SquaredDifference(X, M), -1, keep_dims)
 *   SC = Rsqrt(V + eps) * gamma
 *   out = X * SC + (beta - M * SC)           (bench/gen_models.c)
 *   out = X * SC + (Neg(M) * SC + beta)      (Keras 3 LayerNormalization)
 * (operands of Add and Mul in either order, M through an Identity or
 * StopGradient into the SquaredDifference) where every inner value has only
 * these consumers and none is fetched, runs as one kernel at `out` when the
 * plan's shapes fit (ln_check): the other nodes then get no buffer and
 * launch nothing; otherwise they run one by one. */
typedef struct cln {
    uint32_t x, m, v, gamma, beta, eps;   /* values */
} cln;

typedef struct lnctx {
    const gn__engine *e;
    const uint32_t *prod, *uses;
    uint32_t members[16];
    uint32_t n_members;
    bool ok;
} lnctx;

/* The node computing value v, when it is an op of this kind (and sub) with
 * exactly `uses` consumers; it is recorded as a member. */
static const cnode *ln_node(lnctx *L, uint32_t v, int kind, int sub, uint32_t uses)
{
    uint32_t k = L->prod[v];
    if (k == UINT32_MAX || L->uses[v] != uses) return NULL;
    const cnode *n = &L->e->nodes[k];
    if (n->op->kind != kind || (kind != OP_ALIAS && n->op->sub != sub) || n->out != v || n->fuse || n->ln ||
        n->ln_member || L->n_members == GN__ARRAY_LEN(L->members))
        return NULL;
    if (kind == OP_REDUCE && !n->keep_dims) return NULL;
    L->members[L->n_members++] = k;
    return n;
}

/* a and b are the operands of binary node n, in either order */
static bool ln_operands(const cnode *n, uint32_t a, uint32_t b)
{
    return (n->in[0] == a && n->in[1] == b) || (n->in[0] == b && n->in[1] == a);
}

static bool ln_match(lnctx *L, const cnode *o, cln *out)
{
    for (int oa = 0; oa < 2; oa++) {
        for (int pb = 0; pb < 2; pb++) {
            L->n_members = 0;
            uint32_t pv = o->in[oa], qv = o->in[1 - oa];
            const cnode *pn = ln_node(L, pv, OP_BINARY, GN__CU_MUL, 1);
            if (!pn) continue;
            uint32_t x = pn->in[pb], sc = pn->in[1 - pb];
            const cnode *scn = ln_node(L, sc, OP_BINARY, GN__CU_MUL, 2);
            if (!scn) continue;
            for (int sg = 0; sg < 2; sg++) {
                uint32_t base = L->n_members;
                const cnode *rsn = ln_node(L, scn->in[sg], OP_UNARY, GN__CU_RSQRT, 1);
                if (!rsn) goto next_sg;
                uint32_t gamma = scn->in[1 - sg];
                const cnode *ven = ln_node(L, rsn->in[0], OP_BINARY, GN__CU_ADD, 1);
                if (!ven) goto next_sg;
                for (int vo = 0; vo < 2; vo++) {
                    uint32_t base2 = L->n_members;
                    uint32_t v = ven->in[vo], eps = ven->in[1 - vo];
                    const cnode *vn = ln_node(L, v, OP_REDUCE, 1, 1), *sn = NULL, *mn = NULL;
                    if (vn) sn = ln_node(L, vn->in[0], OP_BINARY, GN__CU_SQDIFF, 1);
                    uint32_t mt = UINT32_MAX, m = UINT32_MAX;
                    for (int so = 0; sn && so < 2 && m == UINT32_MAX; so++)
                        if (sn->in[so] == x) mt = sn->in[1 - so], m = mt;
                    if (m != UINT32_MAX && L->prod[mt] != UINT32_MAX && L->e->nodes[L->prod[mt]].op->kind == OP_ALIAS) {
                        const cnode *an = ln_node(L, mt, OP_ALIAS, 0, 1);
                        m = an && an->n_in == 1 ? an->in[0] : UINT32_MAX;
                    }
                    if (m != UINT32_MAX) mn = ln_node(L, m, OP_REDUCE, 1, 2);
                    if (mn && mn->in[0] == x) {
                        /* beta - M * SC, or Neg(M) * SC + beta */
                        uint32_t base3 = L->n_members;
                        const cnode *qn = ln_node(L, qv, OP_BINARY, GN__CU_SUB, 1);
                        if (qn) {
                            const cnode *msn = ln_node(L, qn->in[1], OP_BINARY, GN__CU_MUL, 1);
                            if (msn && ln_operands(msn, m, sc)) {
                                *out = (cln){x, m, v, gamma, qn->in[0], eps};
                                return true;
                            }
                        }
                        for (int qa = 0; qa < 2; qa++) {
                            L->n_members = base3;
                            qn = ln_node(L, qv, OP_BINARY, GN__CU_ADD, 1);
                            const cnode *m1 = qn ? ln_node(L, qn->in[qa], OP_BINARY, GN__CU_MUL, 1) : NULL;
                            for (int mo = 0; m1 && mo < 2; mo++) {
                                if (m1->in[1 - mo] != sc) continue;
                                const cnode *ng = ln_node(L, m1->in[mo], OP_UNARY, GN__CU_NEG, 1);
                                if (ng && ng->in[0] == m) {
                                    *out = (cln){x, m, v, gamma, qn->in[1 - qa], eps};
                                    return true;
                                }
                                if (ng) L->n_members--;
                            }
                        }
                    }
                    L->n_members = base2;
                }
            next_sg:
                L->n_members = base;
            }
        }
    }
    return false;
}

/* At compile, before the elementwise runs are fused: marks every layer norm. */
static gn_status match_layernorms(gn__engine *e, gn__err *err)
{
    uint32_t nv = e->n_vals, nn = e->n_nodes;
    uint32_t *uses = calloc(nv + 1, sizeof *uses), *prod = malloc((nv + 1) * sizeof *prod);
    if (!uses || !prod) {
        free(uses);
        free(prod);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t v = 0; v < nv; v++) prod[v] = UINT32_MAX;
    for (uint32_t k = 0; k < nn; k++) {
        const cnode *n = &e->nodes[k];
        for (uint32_t i = 0; i < n->n_in; i++) uses[n->in[i]]++;
        if (n->op->kind != OP_NOOP && n->op->kind != OP_HOST)
            for (uint32_t i = 0; i < n->n_out; i++) prod[n->out + i] = k;
    }
    for (uint32_t f = 0; f < e->n_fetches; f++) uses[e->fetch_val[f]] += 2;
    gn_status s = GN_OK;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) {
        cnode *o = &e->nodes[k];
        if (o->op->kind != OP_BINARY || o->op->sub != GN__CU_ADD || o->ln_member) continue;
        lnctx L = {e, prod, uses, {0}, 0, false};
        cln c;
        if (!ln_match(&L, o, &c)) continue;
        if (!(o->ln = malloc(sizeof *o->ln))) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        *o->ln = c;
        for (uint32_t i = 0; i < L.n_members; i++) e->nodes[L.members[i]].ln_member = (int32_t)k + 1;
    }
    free(uses);
    free(prod);
    return s;
}

/* At plan time: does layer norm k fit its one kernel with these shapes? */
static bool ln_check(const gn__engine *e, cplan *p, uint32_t k)
{
    const cnode *o = &e->nodes[k];
    const cln *c = o->ln;
    int32_t r = p->rank[c->x], dt = p->dtype[c->x];
    if (r < 1 || !is_float(dt) || p->rank[o->out] != r || p->rank[c->m] != r || p->rank[c->v] != r) return false;
    const int64_t *xd = vdims(p, c->x);
    for (int32_t d = 0; d < r; d++)
        if (vdims(p, o->out)[d] != xd[d] || vdims(p, c->m)[d] != (d == r - 1 ? 1 : xd[d]) ||
            vdims(p, c->v)[d] != vdims(p, c->m)[d])
            return false;
    int64_t cols = xd[r - 1];
    const uint32_t vec[2] = {c->gamma, c->beta};
    for (int i = 0; i < 2; i++) {
        uint32_t v = vec[i];
        int64_t ne = numel_of(p, v);
        if (p->dtype[v] != dt || !(ne == 1 || (ne == cols && p->rank[v] >= 1 && vdims(p, v)[p->rank[v] - 1] == cols)))
            return false;
    }
    return p->dtype[c->eps] == dt && numel_of(p, c->eps) == 1 && p->dtype[o->out] == dt;
}

/* Is node n skipped in plan p (inside a fused kernel or a layer norm)? */
static bool skipped(const cplan *p, const cnode *n)
{
    return n->fuse_root >= 0 || (n->ln_member && p->ln_on[n->ln_member - 1]);
}

/* The step at which node k's work happens in plan p. */
static uint32_t step_of(const cplan *p, const cnode *n, uint32_t k)
{
    if (n->fuse_root >= 0) return (uint32_t)n->fuse_root;
    if (n->ln_member && p->ln_on[n->ln_member - 1]) return (uint32_t)(n->ln_member - 1);
    return k;
}

/* Places every buffer of the plan in one arena by lifetime (greedy first fit
 * in order of definition) and allocates the arena. */
typedef struct interval {
    size_t off, bytes;
    uint32_t first, last;
} interval;

static int iv_cmp(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Lowest offset where `want` bytes are free over steps [f, l] (first fit). */
static size_t first_fit(const interval *iv, uint32_t n_iv, interval *tmp, size_t want, uint32_t f, uint32_t l)
{
    uint32_t nt = 0;
    for (uint32_t j = 0; j < n_iv; j++)
        if (!(iv[j].last < f || iv[j].first > l)) tmp[nt++] = iv[j];
    qsort(tmp, nt, sizeof *tmp, iv_cmp);
    size_t off = 0;
    for (uint32_t j = 0; j < nt; j++) {
        if (off + want <= tmp[j].off) break;
        if (off < tmp[j].off + tmp[j].bytes) off = tmp[j].off + tmp[j].bytes;
    }
    return off;
}

static gn_status plan_place(gn__engine *e, cplan *p, gn__err *err)
{
    uint32_t nv = e->n_vals, nn = e->n_nodes, end = nn + 1;
    size_t max_iv = (size_t)nv + (size_t)nn * N_SCR + 1;
    uint32_t *first = malloc((nv + 1) * sizeof *first), *last = malloc((nv + 1) * sizeof *last);
    interval *iv = malloc(max_iv * sizeof *iv), *tmp = malloc(max_iv * sizeof *tmp);
    if (!first || !last || !iv || !tmp) {
        free(first);
        free(last);
        free(iv);
        free(tmp);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    /* steps: 0 = feeds copied in (and host values uploaded, kept to the
     * end), node k runs at step k + 1 (a node fused into another at that
     * one's step), end = fetches copied out */
    for (uint32_t v = 0; v < nv; v++) first[v] = last[v] = 0;
    for (uint32_t k = 0; k < nn; k++) {
        const cnode *n = &e->nodes[k];
        if (n->op->kind == OP_NOOP) continue;
        uint32_t step = step_of(p, n, k) + 1;
        if (n->op->kind == OP_HOST) {
            for (uint32_t i = 0; i < n->n_out; i++) last[n->out + i] = end;
        } else if (!skipped(p, n)) {
            for (uint32_t i = 0; i < n->n_out; i++) {
                uint32_t v = n->out + i, r = p->root[v];
                if (r == v) first[r] = step;
                if (last[r] < step) last[r] = step;
            }
        }
        for (uint32_t i = 0; i < n->n_in; i++) {
            uint32_t ri = p->root[n->in[i]];
            if (last[ri] < step) last[ri] = step;
        }
    }
    for (uint32_t f = 0; f < e->n_fetches; f++) last[p->root[e->fetch_val[f]]] = end;
    uint32_t n_iv = 0;
    size_t arena = 0;
    p->planned_bytes = 0;
    /* in order of definition: the feeds and host values, then per node its scratch and its outputs */
    for (uint32_t step = 0; step <= nn; step++) {
        const cnode *n = step ? &e->nodes[step - 1] : NULL;
        uint32_t n_cand = step == 0 ? nv : N_SCR + n->n_out;
        if (n && (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || skipped(p, n))) continue;
        for (uint32_t j = 0; j < n_cand; j++) {
            uint32_t v = UINT32_MAX;
            size_t bytes, s_idx = 0;
            uint32_t f = step, l = step;
            if (step == 0) {
                if (j >= e->n_feeds && !p->hval[j].dtype) continue;   /* a feed or a host value */
                v = j;
            } else if (j < N_SCR) {
                s_idx = (size_t)(step - 1) * N_SCR + j;
                if (!p->scr_bytes[s_idx]) continue;
                if (j == SCR_W && ((p->conv[step - 1] && p->conv[step - 1]->w_once) || p->i8[step - 1]))
                    f = 0, l = end;   /* kept */
            } else {
                v = n->out + (j - N_SCR);
                if (p->root[v] != v) continue;
            }
            if (v != UINT32_MAX) {
                bytes = (size_t)numel_of(p, v) * gn_dtype_size(p->dtype[v]);
                l = last[v] > f ? last[v] : f;
            } else {
                bytes = p->scr_bytes[s_idx];
            }
            size_t want = align_up(bytes ? bytes : 1);
            size_t off = first_fit(iv, n_iv, tmp, want, f, l);
            iv[n_iv++] = (interval){off, want, f, l};
            if (v != UINT32_MAX) {
                p->off[v] = off;
                p->bytes[v] = bytes;
            } else {
                p->scr_off[s_idx] = off;
            }
            p->planned_bytes += bytes;
            if (arena < off + want) arena = off + want;
        }
    }
    free(first);
    free(last);
    free(iv);
    free(tmp);
    p->arena_bytes = arena;
    cudaError_t ce = cudaMalloc(&p->arena, arena ? arena : ALIGN);
    if (ce != cudaSuccess) {
        p->arena = NULL;
        return gn__fail(err, GN_ERR_BACKEND, "cudaMalloc of a %zu-byte arena: %s", arena, cudaGetErrorString(ce));
    }
    /* host values: uploaded once per plan */
    bool any = false;
    for (uint32_t v = e->n_feeds; v < nv; v++) {
        if (!p->hval[v].dtype || !p->bytes[v] || !p->hval[v].data) continue;
        ce = cudaMemcpyAsync((char *)p->arena + p->off[v], p->hval[v].data, p->bytes[v], cudaMemcpyHostToDevice,
                             e->b->stream);
        if (ce != cudaSuccess) return cuda_fail(err, "cudaMemcpyAsync (host values)", ce);
        any = true;
    }
    if (any && (ce = cudaStreamSynchronize(e->b->stream)) != cudaSuccess) return cuda_fail(err, "cudaStreamSynchronize", ce);
    return GN_OK;
}

static gn_status plan_new(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err)
{
    *out = NULL;
    uint32_t nv = e->n_vals, nn = e->n_nodes, nf = e->n_feeds;
    cplan *p = calloc(1, sizeof *p);
    if (!p) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    p->key_dtype = calloc(nf + 1, sizeof *p->key_dtype);
    p->key_rank = calloc(nf + 1, sizeof *p->key_rank);
    p->key_dims = calloc((size_t)nf * GN__MAX_DIMS + 1, sizeof *p->key_dims);
    p->dtype = calloc(nv + 1, sizeof *p->dtype);
    p->rank = calloc(nv + 1, sizeof *p->rank);
    p->dims = calloc((size_t)nv * GN__MAX_DIMS + 1, sizeof *p->dims);
    p->root = calloc(nv + 1, sizeof *p->root);
    p->off = calloc(nv + 1, sizeof *p->off);
    p->bytes = calloc(nv + 1, sizeof *p->bytes);
    p->scr_off = calloc((size_t)nn * N_SCR + 1, sizeof *p->scr_off);
    p->scr_bytes = calloc((size_t)nn * N_SCR + 1, sizeof *p->scr_bytes);
    p->conv = calloc(nn + 1, sizeof *p->conv);
    p->sl = calloc(nn + 1, sizeof *p->sl);
    p->ein = calloc(nn + 1, sizeof *p->ein);
    p->hval = calloc(nv + 1, sizeof *p->hval);
    p->eng = calloc(nn + 1, sizeof *p->eng);
    p->ln_on = calloc(nn + 1, 1);
    p->lt = calloc(nn + 1, sizeof *p->lt);
    p->i8 = calloc(nn + 1, sizeof *p->i8);
    if (!p->i8 || !p->lt || !p->ln_on || !p->eng || !p->sl || !p->hval || !p->ein || !p->key_dtype || !p->key_rank || !p->key_dims || !p->dtype || !p->rank || !p->dims || !p->root || !p->off ||
        !p->bytes || !p->scr_off || !p->scr_bytes || !p->conv) {
        plan_free(e, p);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t v = 0; v < nv; v++) {
        p->root[v] = v;
        const cval *c = &e->vals[v];
        const gn__tensor *t = c->kind == V_FEED ? &in[c->feed] : c->kind == V_CONST ? &c->host : NULL;
        if (!t) continue;
        p->dtype[v] = t->dtype;
        p->rank[v] = t->rank;
        memcpy(vdims(p, v), t->dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    for (uint32_t i = 0; i < nf; i++) {
        p->key_dtype[i] = in[i].dtype;
        p->key_rank[i] = in[i].rank;
        memcpy(&p->key_dims[(size_t)i * GN__MAX_DIMS], in[i].dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    gn_status s = GN_OK;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) s = plan_node(e, p, k, err);
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) p->ln_on[k] = e->nodes[k].ln && ln_check(e, p, k);
    if (s == GN_OK) s = plan_place(e, p, err);
    /* constant filters: into cuDNN's layout once, here */
    bool any = false;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) {
        const cconv *c = p->conv[k];
        const cnode *n = &e->nodes[k];
        if (!c || !c->w_once) continue;
        cudaError_t ce = gn__cu_transpose(p->dtype[n->in[1]] == DT_F16 ? 2 : 4, 4, c->w_dims, c->w_perm,
                                          vptr(e, p, n->in[1]), (char *)p->arena + p->scr_off[(size_t)k * N_SCR + SCR_W],
                                          e->b->stream);
        if (ce != cudaSuccess) s = node_fail(e, n, err, GN_ERR_BACKEND, "filter transpose: %s", cudaGetErrorString(ce));
        any = true;
    }
    /* int8 weights and scales: uploaded once, here */
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) {
        const ci8 *c = p->i8[k];
        if (!c) continue;
        char *dst = (char *)p->arena + p->scr_off[(size_t)k * N_SCR + SCR_W];
        size_t wb = (size_t)(c->kind == GN__Q8_DW ? c->k * c->n : c->n * c->kp);
        cudaError_t ce = cudaMemcpyAsync(dst, c->h_wq, wb, cudaMemcpyHostToDevice, e->b->stream);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(dst + c->wq_bytes, c->h_sw, (size_t)c->n * sizeof(float), cudaMemcpyHostToDevice,
                                 e->b->stream);
        if (ce != cudaSuccess) s = node_fail(e, &e->nodes[k], err, GN_ERR_BACKEND, "int8 weights: %s", cudaGetErrorString(ce));
        any = true;
    }
    if (s == GN_OK && any) {
        cudaError_t ce = cudaStreamSynchronize(e->b->stream);
        if (ce != cudaSuccess) s = cuda_fail(err, "cudaStreamSynchronize (filters)", ce);
    }
    for (uint32_t k = 0; s == GN_OK && k < nn; k++)
        if (p->i8[k]) {
            free(p->i8[k]->h_wq);
            free(p->i8[k]->h_sw);
            p->i8[k]->h_wq = NULL;
            p->i8[k]->h_sw = NULL;
        }
    if (s != GN_OK) {
        plan_free(e, p);
        return s;
    }
    *out = p;
    return GN_OK;
}

static bool plan_matches(const gn__engine *e, const cplan *p, const gn__tensor *in)
{
    for (uint32_t i = 0; i < e->n_feeds; i++) {
        if (p->key_dtype[i] != in[i].dtype || p->key_rank[i] != in[i].rank) return false;
        for (int32_t d = 0; d < in[i].rank; d++)
            if (p->key_dims[(size_t)i * GN__MAX_DIMS + d] != in[i].dims[d]) return false;
    }
    return true;
}

/* ---- running one node -------------------------------------------------------- */
/* The root of a fused run: one kernel over the run's program, each input
 * read with its broadcast strides against the root's output shape. */
static gn_status run_fused(gn__engine *e, cplan *p, const cnode *n, gn__err *err)
{
    const fprog *fp = n->fuse;
    uint32_t o = n->out;
    int32_t r = p->rank[o];
    const int64_t *od = vdims(p, o);
    gn__cu_fused f;
    memset(&f, 0, sizeof f);
    if (r > GN__CU_MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d", r);
    f.rank = r;
    f.n_in = fp->n_in;
    f.n_ops = fp->n_ops;
    memcpy(f.dims, od, sizeof(int64_t) * (size_t)r);
    memcpy(f.ops, fp->ops, sizeof fp->ops);
    for (int32_t i = 0; i < fp->n_in; i++) {
        uint32_t v = fp->in_val[i];
        int32_t vr = p->rank[v];
        const int64_t *vd = vdims(p, v);
        if (vr > r || p->dtype[v] != p->dtype[o]) return node_fail(e, n, err, GN_ERR_INTERNAL, "fused input %d does not fit", i);
        int64_t st = 1;
        for (int32_t d = r - 1; d >= 0; d--) {
            int32_t dv = d - (r - vr);
            int64_t ext = dv >= 0 ? vd[dv] : 1;
            if (ext != 1 && ext != od[d]) return node_fail(e, n, err, GN_ERR_INTERNAL, "fused input %d does not broadcast", i);
            f.stride[i][d] = ext == 1 ? 0 : st;
            st *= ext;
        }
        f.in[i] = vptr(e, p, v);
    }
    cudaError_t ce = gn__cu_fused_run(p->dtype[o] == DT_F16, &f, vptr(e, p, o), e->b->stream);
    if (ce != cudaSuccess) return node_fail(e, n, err, GN_ERR_BACKEND, "fused elementwise kernel (%d ops): %s", fp->n_ops, cudaGetErrorString(ce));
    return GN_OK;
}

/* An int8 node (ci8). */
static gn_status run_q8(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    const cnode *n = &e->nodes[k];
    const ci8 *c = p->i8[k];
    cudaStream_t s = b->stream;
    size_t base = (size_t)k * N_SCR;
    char *ar = p->arena;
    const int8_t *wq = (const int8_t *)(ar + p->scr_off[base + SCR_W]);
    const float *sw = (const float *)(ar + p->scr_off[base + SCR_W] + c->wq_bytes);
    const float *x = vptr(e, p, n->in[0]);
    const float *bias = n->q8.bias ? vptr(e, p, n->in[2]) : NULL;
    float *y = vptr(e, p, n->out);
    if (c->kind == GN__Q8_DW) {
        CK_CUDA(gn__cu_dw8(&c->geo, c->mult, x, c->inv, wq, c->sx, sw, bias, c->act, n->q8.alpha, y, s));
        return GN_OK;
    }
    if (c->m == 0 || c->n == 0) return GN_OK;
    int8_t *xq = (int8_t *)(ar + p->scr_off[base + SCR_PAD]);
    int32_t *acc = (int32_t *)(ar + p->scr_off[base + SCR_WS]);
    if (c->kind == GN__Q8_MM) CK_CUDA(gn__cu_q8_rows(c->m, c->k, c->kp, n->q8.ta, x, c->inv, xq, s));
    else CK_CUDA(gn__cu_im2col8(&c->geo, c->kp, x, c->inv, xq, s));
    if (c->lt) {
        const int32_t one = 1, zero = 0;
        CK_LT(b->p_cublasLtMatmul(b->lt, c->lt->desc, &one, wq, c->lt->la, xq, c->lt->lb, &zero, acc, c->lt->ld, acc,
                                  c->lt->ld, &c->lt->algo, b->blas_ws, BLAS_WORKSPACE, s));
    } else {
        CK_CUDA(gn__cu_gemm8(c->m, c->n, c->kp, xq, wq, acc, s));
    }
    CK_CUDA(gn__cu_dequant8(c->m * c->n, c->n, acc, c->sx, sw, bias, c->act, n->q8.alpha, y, s));
    return GN_OK;
}

static gn_status run_node(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    cnode *n = &e->nodes[k];
    cudaStream_t s = b->stream;
    /* aliases, host values, nodes inside a fused kernel or a layer norm: nothing to run */
    if (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || skipped(p, n) || p->root[n->out] != n->out)
        return GN_OK;
    if (n->ln && p->ln_on[k]) {
        const cln *c = n->ln;
        int64_t cols = vdims(p, c->x)[p->rank[c->x] - 1], ne = numel_of(p, c->x);
        CK_CUDA(gn__cu_layernorm(p->dtype[c->x] == DT_F16, cols ? ne / cols : 0, cols, vptr(e, p, c->x),
                                 vptr(e, p, c->gamma), numel_of(p, c->gamma), vptr(e, p, c->beta), numel_of(p, c->beta),
                                 vptr(e, p, c->eps), vptr(e, p, n->out), s));
        return GN_OK;
    }
    if (n->op->kind == OP_ENGINE) return run_engine_node(e, p, n, k, err);
    uint32_t o = n->out, x = n->in[n->op->kind == OP_SPLIT && n->op->sub == 0 ? 1 : 0];
    if (n->fuse) return run_fused(e, p, n, err);
    if (p->i8[k]) return run_q8(e, p, k, err);
    void *yp = vptr(e, p, o);
    const void *xp = vptr(e, p, x);
    int h = p->dtype[x] == DT_F16;
    int64_t ne = numel_of(p, o);
    int64_t *xd = vdims(p, x), *od = vdims(p, o);
    int32_t xr = p->rank[x];
    switch (n->op->kind) {
    case OP_UNARY: CK_CUDA(gn__cu_unary(n->op->sub, h, ne, xp, yp, n->alpha, s)); break;
    case OP_CAST: CK_CUDA(gn__cu_cast(h, p->dtype[o] == DT_F16, ne, xp, yp, s)); break;
    case OP_BINARY:
    case OP_BIAS_ADD: {
        uint32_t y = n->in[1];
        gn__cu_bcast bc;
        memset(&bc, 0, sizeof bc);
        int32_t r = p->rank[o], yr = p->rank[y];
        if (r > GN__CU_MAX_DIMS) return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d", r);
        bool same = r == xr && r == yr;
        for (int32_t d = 0; same && d < r; d++) same = xd[d] == vdims(p, y)[d];
        if (n->op->kind == OP_BINARY) {
            int64_t sx = 1, sy = 1;
            for (int32_t d = r - 1; d >= 0; d--) {
                int32_t dx = d - (r - xr), dy = d - (r - yr);
                int64_t ex = dx >= 0 ? xd[dx] : 1, ey = dy >= 0 ? vdims(p, y)[dy] : 1;
                bc.dims[d] = od[d];
                bc.sa[d] = ex == 1 ? 0 : sx;
                bc.sb[d] = ey == 1 ? 0 : sy;
                sx *= ex;
                sy *= ey;
            }
        } else {
            same = false;
            int32_t cd = n->nchw ? 1 : r - 1;
            int64_t sx = 1;
            for (int32_t d = r - 1; d >= 0; d--) {
                bc.dims[d] = od[d];
                bc.sa[d] = sx;
                bc.sb[d] = d == cd ? 1 : 0;
                sx *= od[d];
            }
        }
        bc.rank = r;
        CK_CUDA(gn__cu_binary(n->op->kind == OP_BINARY ? n->op->sub : GN__CU_ADD, h, ne, same ? NULL : &bc, xp,
                              vptr(e, p, y), yp, s));
        break;
    }
    case OP_MATMUL:
    case OP_BMM: {
        uint32_t y = n->in[1];
        int32_t r = p->rank[o], yr = p->rank[y];
        int64_t *yd = vdims(p, y);
        int64_t m = od[r - 2], nn = od[r - 1], kk = n->ta ? xd[xr - 2] : xd[xr - 1];
        int64_t batch = 1, bx = 1, by = 1;
        for (int32_t d = 0; d < r - 2; d++) batch *= od[d];
        for (int32_t d = 0; d < xr - 2; d++) bx *= xd[d];
        for (int32_t d = 0; d < yr - 2; d++) by *= yd[d];
        if ((bx != 1 && bx != batch) || (by != 1 && by != batch))
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "batch broadcasting other than all-or-nothing per operand");
        if (bx == batch && by == batch && batch > 1) {   /* same batch count: the batch dims must agree too */
            for (int32_t d = 0; d < r - 2; d++) {
                int32_t dx = d - (r - xr), dy = d - (r - yr);
                if ((dx >= 0 && xd[dx] != od[d]) || (dy >= 0 && yd[dy] != od[d]))
                    return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "mixed batch broadcasting");
            }
        }
        if (m > INT32_MAX || nn > INT32_MAX || kk > INT32_MAX || batch > INT32_MAX)
            return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuBLAS");
        if (ne == 0) break;
        const clt *lt = p->lt[k];
        if (lt && batch == 1 && kk > 0) {   /* the GEMM with its bias (+ activation) epilogue */
            const void *bias = vptr(e, p, n->in[2]);
            const float one = 1.0f, zero = 0.0f;
            CK_LT(b->p_cublasLtMatmulDescSetAttribute(lt->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
            CK_LT(b->p_cublasLtMatmul(b->lt, lt->desc, &one, vptr(e, p, y), lt->la, xp, lt->lb, &zero, yp, lt->ld, yp,
                                      lt->ld, &lt->algo, b->blas_ws, BLAS_WORKSPACE, s));
            break;
        }
        if (kk == 0) {
            CK_CUDA(cudaMemsetAsync(yp, 0, (size_t)ne * (h ? 2 : 4), s));
        } else {
            /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
            cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
            const float one = 1.0f, zero = 0.0f;
            cublasOperation_t opa = n->ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = n->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
            int lda = (int)(n->ta ? m : kk), ldb = (int)(n->tb ? kk : nn);
            const void *yp2 = vptr(e, p, y);
            if (batch == 1) {
                CK_BLAS(b->p_cublasGemmEx(b->blas, opb, opa, (int)nn, (int)m, (int)kk, &one, yp2, dt, ldb, xp, dt, lda,
                                          &zero, yp, dt, (int)nn, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            } else {
                long long sa = bx == 1 ? 0 : (long long)(m * kk), sb = by == 1 ? 0 : (long long)(kk * nn);
                CK_BLAS(b->p_cublasGemmStridedBatchedEx(b->blas, opb, opa, (int)nn, (int)m, (int)kk, &one, yp2, dt, ldb,
                                                        sb, xp, dt, lda, sa, &zero, yp, dt, (int)nn,
                                                        (long long)(m * nn), (int)batch, CUBLAS_COMPUTE_32F,
                                                        CUBLAS_GEMM_DEFAULT));
            }
        }
        GN_TRY(run_epilogue(e, p, n, h, ne, nn, 1, yp, err));
        break;
    }
    case OP_CONV: {
        cconv *c = p->conv[k];
        if (!c) return node_fail(e, n, err, GN_ERR_INTERNAL, "no convolution plan");
        size_t base = (size_t)k * N_SCR;
        void *wt = (char *)p->arena + p->scr_off[base + SCR_W];
        if (!c->w_once) CK_CUDA(gn__cu_transpose(h ? 2 : 4, 4, c->w_dims, c->w_perm, vptr(e, p, n->in[1]), wt, s));
        const void *src = xp;
        if (c->prepad) {
            void *pp = (char *)p->arena + p->scr_off[base + SCR_PAD];
            CK_CUDA(gn__cu_pad(h ? 2 : 4, GN__CU_PAD_CONST, NULL, 4, c->pp_in, c->pp_before, c->pp_out, xp, pp, s));
            src = pp;
        }
        void *ws = c->ws_bytes ? (char *)p->arena + p->scr_off[base + SCR_WS] : NULL;
        const float one = 1.0f, zero = 0.0f;
        if (ne > 0)
            CK_DNN(b->p_cudnnConvolutionForward(b->dnn, &one, c->x, src, c->w, wt, c->conv, c->algo, ws, c->ws_bytes,
                                                &zero, c->y, yp));
        GN_TRY(run_epilogue(e, p, n, h, ne, c->c_out, c->inner, yp, err));
        break;
    }
    case OP_POOL: {
        gn__cu_pool pp;
        int hd = n->nchw ? 2 : 1, cd = n->nchw ? 1 : 3;
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(window(e, n, xd[hd], n->ksize[0], 1, n->stride[0], NULL, &oh, &bh, &ah, err));
        GN_TRY(window(e, n, xd[hd + 1], n->ksize[1], 1, n->stride[1], NULL, &ow, &bw, &aw, err));
        pp = (gn__cu_pool){.max = n->op->sub, .nchw = n->nchw, .n = xd[0], .c = xd[cd], .h = xd[hd], .w = xd[hd + 1],
                           .oh = oh, .ow = ow, .kh = n->ksize[0], .kw = n->ksize[1], .sh = n->stride[0],
                           .sw = n->stride[1], .pad_top = bh, .pad_left = bw};
        CK_CUDA(gn__cu_pool2d(h, &pp, xp, yp, s));
        break;
    }
    case OP_BN: {
        int32_t cd = n->nchw ? 1 : xr - 1;
        int64_t inner = 1;
        for (int32_t d = cd + 1; d < xr; d++) inner *= xd[d];
        CK_CUDA(gn__cu_batchnorm(h, p->dtype[n->in[1]] == DT_F16, ne, xd[cd], inner, xp, vptr(e, p, n->in[1]),
                                 vptr(e, p, n->in[2]), vptr(e, p, n->in[3]), vptr(e, p, n->in[4]), n->eps, yp, s));
        break;
    }
    case OP_SOFTMAX: {
        int64_t cols = xd[xr - 1];
        CK_CUDA(gn__cu_softmax(h, cols ? ne / cols : 0, cols, xp, yp, s));
        break;
    }
    case OP_TRANSPOSE: {
        int64_t pm[GN__MAX_DIMS], cnt = 0;
        int32_t perm[GN__MAX_DIMS];
        GN_TRY(const_ints(e, p, n, n->in[1], pm, GN__MAX_DIMS, &cnt, err));
        for (int64_t d = 0; d < cnt; d++) perm[d] = (int32_t)pm[d];
        CK_CUDA(gn__cu_transpose((int)gn_dtype_size(p->dtype[x]), xr, xd, perm, xp, yp, s));
        break;
    }
    case OP_CONCAT: {
        int64_t a, cnt = 0;
        int32_t orank = p->rank[o];
        uint32_t n_data = n->op->sub ? n->n_in : n->n_in - 1;
        if (n->op->sub) a = n->axis < 0 ? n->axis + orank : n->axis;
        else {
            GN_TRY(const_ints(e, p, n, n->in[n->n_in - 1], &a, 1, &cnt, err));
            if (a < 0) a += xr;
        }
        size_t es = gn_dtype_size(p->dtype[o]);
        int64_t outer = 1, inner = 1;
        for (int32_t d = 0; d < a; d++) outer *= od[d];
        for (int32_t d = (int32_t)a + 1; d < orank; d++) inner *= od[d];
        size_t dpitch = (size_t)(od[a] * inner) * es, col = 0;
        for (uint32_t i = 0; i < n_data; i++) {
            uint32_t v = n->in[i];
            size_t width = (size_t)((n->op->sub ? 1 : vdims(p, v)[a]) * inner) * es;
            if (width && outer)
                CK_CUDA(cudaMemcpy2DAsync((char *)yp + col, dpitch, vptr(e, p, v), width, width, (size_t)outer,
                                          cudaMemcpyDeviceToDevice, s));
            col += width;
        }
        break;
    }
    case OP_REDUCE: {
        int64_t ax[GN__MAX_DIMS], cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], ax, GN__MAX_DIMS, &cnt, err));
        uint8_t red[GN__MAX_DIMS] = {0};
        for (int64_t i = 0; i < cnt; i++) red[ax[i] < 0 ? ax[i] + xr : ax[i]] = 1;
        CK_CUDA(gn__cu_reduce(h, n->op->sub, xr, xd, red, xp, yp, s));
        break;
    }
    case OP_PAD: {
        int64_t pd[2 * GN__MAX_DIMS], before[GN__MAX_DIMS], cnt = 0;
        GN_TRY(const_ints(e, p, n, n->in[1], pd, 2 * GN__MAX_DIMS, &cnt, err));
        for (int32_t d = 0; d < xr; d++) before[d] = pd[2 * d];
        const gn__tensor *cv = n->op->sub == 1 ? host_tensor(e, p, n->in[2]) : NULL;
        int mode = n->op->sub == 2 ? n->mirror : GN__CU_PAD_CONST;
        CK_CUDA(gn__cu_pad((int)gn_dtype_size(p->dtype[x]), mode, cv ? cv->data : NULL, xr, xd, before, od, xp, yp, s));
        break;
    }
    case OP_SLICE:
    case OP_SPLIT: {
        const gn__cu_slice *sl = p->sl[k];
        if (!sl) return node_fail(e, n, err, GN_ERR_INTERNAL, "no slice plan");
        for (uint32_t i = 0; i < n->n_out; i++)
            CK_CUDA(gn__cu_slice_copy((int)gn_dtype_size(p->dtype[x]), &sl[i], xp, vptr(e, p, o + i), s));
        break;
    }
    case OP_EINSUM: {
        const ceinsum *c = p->ein[k];
        if (!c) return node_fail(e, n, err, GN_ERR_INTERNAL, "no einsum plan");
        size_t base = (size_t)k * N_SCR, es = h ? 2 : 4;
        const void *a = xp, *bm = vptr(e, p, n->in[1]);
        void *cm = c->tc ? (char *)p->arena + p->scr_off[base + SCR_WS] : yp;
        if (ne == 0) break;
        if (c->ta) {
            void *t = (char *)p->arena + p->scr_off[base + SCR_W];
            CK_CUDA(gn__cu_transpose((int)es, c->ra, c->a_dims, c->pa, a, t, s));
            a = t;
        }
        if (c->tb) {
            void *t = (char *)p->arena + p->scr_off[base + SCR_PAD];
            CK_CUDA(gn__cu_transpose((int)es, c->rb, c->b_dims, c->pb, bm, t, s));
            bm = t;
        }
        if (c->k == 0) {
            CK_CUDA(cudaMemsetAsync(cm, 0, (size_t)(c->batch * c->m * c->n) * es, s));
        } else {   /* row-major C = A B as column-major C^T = B^T A^T */
            cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
            const float one = 1.0f, zero = 0.0f;
            CK_BLAS(b->p_cublasGemmStridedBatchedEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)c->n, (int)c->m, (int)c->k, &one,
                                                    bm, dt, (int)c->n, (long long)(c->k * c->n), a, dt, (int)c->k,
                                                    (long long)(c->m * c->k), &zero, cm, dt, (int)c->n,
                                                    (long long)(c->m * c->n), (int)c->batch, CUBLAS_COMPUTE_32F,
                                                    CUBLAS_GEMM_DEFAULT));
        }
        if (c->tc) CK_CUDA(gn__cu_transpose((int)es, c->rc, c->c_dims, c->pc, cm, yp, s));
        break;
    }
    case OP_GATHER: {
        int64_t a, cnt = 0, outer = 1, inner = 1;
        GN_TRY(const_ints(e, p, n, n->in[2], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        for (int32_t d = 0; d < a; d++) outer *= xd[d];
        for (int32_t d = (int32_t)a + 1; d < xr; d++) inner *= xd[d];
        CK_CUDA(gn__cu_gather((int)gn_dtype_size(p->dtype[x]), n->idx64, outer, xd[a], inner, numel_of(p, n->in[1]), xp,
                              vptr(e, p, n->in[1]), yp, s));
        break;
    }
    case OP_XLA: {
        int es = (int)gn_dtype_size(p->dtype[x]);
        if (n->op->sub == XLA_DSLICE) {
            CK_CUDA(gn__cu_xla_dynamic_slice(es, n->idx64, xr, xd, od, vptr(e, p, n->in[1]), xp, yp, s));
        } else if (n->op->sub == XLA_DUS) {
            CK_CUDA(gn__cu_xla_dynamic_update_slice(es, n->idx64, xr, xd, vdims(p, n->in[1]), vptr(e, p, n->in[2]), xp,
                                                    vptr(e, p, n->in[1]), yp, s));
        } else if (n->op->sub == XLA_PAD) {
            gn__cu_xpad pad;
            GN_TRY(plan_xla(e, p, n, &pad, NULL, err));
            CK_CUDA(gn__cu_xla_pad(es, &pad, vptr(e, p, n->in[1]), xp, yp, s));
        } else {
            gn__cu_xgather gather;
            GN_TRY(plan_xla(e, p, n, NULL, &gather, err));
            CK_CUDA(gn__cu_xla_gather(es, n->idx64, &gather, xp, vptr(e, p, n->in[1]), yp, s));
        }
        break;
    }
    default: return node_fail(e, n, err, GN_ERR_INTERNAL, "unhandled op");
    }
    return GN_OK;
}

/* ---- the interface ----------------------------------------------------------- */
static bool cu_supports(void *self, const gn_graph *g, gn_id node, char *why, size_t why_len)
{
    if (why_len) why[0] = 0;
    const char *op = gn__node_op(g, node);
    if (!strcmp(op, "Const") || !strcmp(op, "HostConst") || !strcmp(op, "Placeholder") ||
        !strcmp(op, "PlaceholderV2"))
        return true;
    if (is_host_op(op) && host_known(g, node, 0)) return true;
    return parse_node(self, g, node, NULL, NULL, why, why_len);
}

static void cu_engine_free(void *self, gn__engine *e)
{
    (void)self;
    if (!e) return;
    for (uint32_t i = 0; i < e->n_plans; i++) plan_free(e, e->plans[i]);
    for (uint32_t v = 0; v < e->n_vals; v++) gn__tensor_release(&e->vals[v].host);
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        free(e->nodes[k].in);
        free(e->nodes[k].fuse);
        free(e->nodes[k].ln);
        cengop_free(e->b, e->nodes[k].eng);
    }
    if (e->weights) cudaFree(e->weights);
    free(e->vals);
    free(e->nodes);
    free(e->fetch_val);
    free(e);
}

/* ---- fusing runs of elementwise ops -------------------------------------------- */
static bool fusable(const gn_graph *g, const cnode *n, int *t)
{
    if ((n->op->kind != OP_UNARY && n->op->kind != OP_BINARY) || n->ln || n->ln_member) return false;
    *t = 0;
    return gn__attr_get_type(g, n->id, "T", t) && (*t == DT_F32 || *t == DT_F16);
}

#define EMIT_FAIL (-1000)

/* Appends node k (a member of root's run, or the root) to fp after its
 * operands; returns its register, EMIT_FAIL when the program is full. */
static int emit(const gn__engine *e, fprog *fp, const uint32_t *prod, uint32_t root, uint32_t k)
{
    const cnode *n = &e->nodes[k];
    int opd[2] = {0, 0};
    uint32_t nin = n->op->kind == OP_BINARY ? 2 : 1;
    for (uint32_t i = 0; i < nin; i++) {
        uint32_t v = n->in[i], pk = prod[v];
        if (pk != UINT32_MAX && e->nodes[pk].fuse_root == (int32_t)root) {
            opd[i] = emit(e, fp, prod, root, pk);
            if (opd[i] == EMIT_FAIL) return EMIT_FAIL;
            continue;
        }
        int32_t j = 0;
        while (j < fp->n_in && fp->in_val[j] != v) j++;
        if (j == fp->n_in) {
            if (fp->n_in == GN__CU_FUSE_MAX_IN) return EMIT_FAIL;
            fp->in_val[fp->n_in++] = v;
        }
        opd[i] = -1 - j;
    }
    if (fp->n_ops == GN__CU_FUSE_MAX_OPS) return EMIT_FAIL;
    gn__cu_fuse_op *o = &fp->ops[fp->n_ops];
    o->binary = n->op->kind == OP_BINARY;
    o->op = (int8_t)n->op->sub;
    o->a = (int8_t)opd[0];
    o->b = (int8_t)opd[1];
    o->alpha = n->alpha;
    return fp->n_ops++;
}

/* Runs of float elementwise ops (unary and binary, with broadcasting) where
 * each value inside the run has exactly one consumer, inside the run, and
 * is not fetched become one kernel at the run's last node (the root): the
 * other nodes get no buffer and launch nothing. Runs that would exceed the
 * kernel's inputs or ops are left unfused. */
static gn_status fuse_elementwise(gn__engine *e, gn__err *err)
{
    const gn_graph *g = e->g;
    uint32_t nv = e->n_vals, nn = e->n_nodes;
    uint32_t *uses = calloc(nv + 1, sizeof *uses), *user = calloc(nv + 1, sizeof *user);
    uint32_t *prod = malloc((nv + 1) * sizeof *prod);
    uint8_t *has_members = calloc(nn + 1, 1);
    if (!uses || !user || !prod || !has_members) {
        free(uses);
        free(user);
        free(prod);
        free(has_members);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t v = 0; v < nv; v++) prod[v] = UINT32_MAX;
    for (uint32_t k = 0; k < nn; k++) {
        const cnode *n = &e->nodes[k];
        for (uint32_t i = 0; i < n->n_in; i++) {
            uses[n->in[i]]++;
            user[n->in[i]] = k;
        }
        if (n->op->kind != OP_NOOP)
            for (uint32_t i = 0; i < n->n_out; i++) prod[n->out + i] = k;
    }
    for (uint32_t f = 0; f < e->n_fetches; f++) uses[e->fetch_val[f]] += 2;
    /* parent: the one consumer, when both are fusable with one dtype */
    for (uint32_t k = 0; k < nn; k++) {
        cnode *n = &e->nodes[k];
        int t, tc;
        n->fuse_root = -1;
        if (!fusable(g, n, &t) || uses[n->out] != 1) continue;
        const cnode *c = &e->nodes[user[n->out]];
        if (user[n->out] > k && fusable(g, c, &tc) && tc == t) n->fuse_root = (int32_t)user[n->out];
    }
    /* parent -> root (consumers come later in the order) */
    for (uint32_t k = nn; k-- > 0;) {
        cnode *n = &e->nodes[k];
        if (n->fuse_root < 0) continue;
        int32_t par = n->fuse_root;
        if (e->nodes[par].fuse_root >= 0) n->fuse_root = e->nodes[par].fuse_root;
        has_members[n->fuse_root] = 1;
    }
    gn_status s = GN_OK;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) {
        cnode *n = &e->nodes[k];
        if (!has_members[k]) continue;
        fprog *fp = calloc(1, sizeof *fp);
        if (!fp) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        if (emit(e, fp, prod, k, k) == EMIT_FAIL) {   /* too big: leave the run unfused */
            free(fp);
            for (uint32_t j = 0; j < k; j++)
                if (e->nodes[j].fuse_root == (int32_t)k) e->nodes[j].fuse_root = -1;
            continue;
        }
        n->fuse = fp;
    }
    free(uses);
    free(user);
    free(prod);
    free(has_members);
    return s;
}

/* Depth-first topological order of the kept nodes (data and control inputs,
 * cut at the feeds), iterative. */
static gn_status topo(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, const uint8_t *keep,
                      gn_id *order, uint32_t *n_order, gn__err *err)
{
    uint32_t nn = g->n_nodes, cnt = 0;
    uint8_t *state = calloc(nn + 1, 1);
    gn_id *stack = malloc((nn + 1) * sizeof *stack);
    uint32_t *next = calloc(nn + 1, sizeof *next);
    gn_status s = GN_OK;
    if (!state || !stack || !next) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id root = 0; s == GN_OK && root < nn; root++) {
        if (!keep[root] || state[root]) continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        state[root] = 1;
        while (sp && s == GN_OK) {
            gn_id id = stack[sp - 1];
            const gn__node *nd = gn__node_at(g, id);
            uint32_t i = next[id], total = nd->n_in + nd->n_ctrl;
            gn_id dep = GN_NONE;
            for (; i < total && dep == GN_NONE; i++) {
                if (i < nd->n_in) {
                    if (gn__sig_feed_index(sig, has_feed, nd->in[i]) >= 0) continue;
                    dep = nd->in[i].node;
                } else {
                    gn_id c = nd->ctrl[i - nd->n_in];
                    if (gn__sig_control_feed(g, sig, has_feed, c) >= 0) continue;
                    dep = c;
                }
                if (!keep[dep] || state[dep] == 2) dep = GN_NONE;
            }
            next[id] = i;
            if (dep != GN_NONE) {
                if (state[dep] == 1) s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' is in a cycle (loops are not supported on the CUDA backend)", gn__node_name(g, dep));
                else {
                    state[dep] = 1;
                    stack[sp++] = dep;
                }
                continue;
            }
            state[id] = 2;
            order[cnt++] = id;
            sp--;
        }
    }
    free(state);
    free(stack);
    free(next);
    *n_order = cnt;
    return s;
}

static gn_status build_engine(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, gn__engine *e,
                              const uint8_t *has_feed, const uint8_t *keep, uint32_t n_keep, gn__err *err)
{
    gn_id *order = malloc((n_keep + 1) * sizeof *order);
    uint32_t *val_of = malloc((g->n_nodes + 1) * sizeof *val_of);   /* node -> value of output 0 */
    uint32_t *nout_of = calloc(g->n_nodes + 1, sizeof *nout_of);    /* node -> outputs computed */
    uint8_t *host = calloc(g->n_nodes + 1, 1);                       /* node -> known on the host at plan time */
    uint32_t n_order = 0;
    size_t cap = sig->n_feeds;
    gn_status s = GN_OK;
    if (!order || !val_of || !nout_of || !host) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GN_OK && i < g->n_nodes; i++) val_of[i] = UINT32_MAX;
    if (s == GN_OK) s = topo(g, sig, has_feed, keep, order, &n_order, err);
    for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
        int32_t k = gn__node_num_outputs(g, order[i]);
        cap += k > 1 ? (size_t)k : 1;
    }
    hctx hc = {sig, has_feed, host};
    if (s == GN_OK) {
        e->vals = calloc(cap + 1, sizeof *e->vals);
        e->nodes = calloc(n_order + 1, sizeof *e->nodes);
        e->fetch_val = calloc(sig->n_fetches + 1, sizeof *e->fetch_val);
        if (!e->vals || !e->nodes || !e->fetch_val) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; s == GN_OK && i < sig->n_feeds; i++) {
        e->vals[e->n_vals].kind = V_FEED;
        e->vals[e->n_vals++].feed = i;
    }
    char why[512];
    size_t wbytes = 0;
    for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
        gn_id id = order[i];
        const char *op = gn__node_op(g, id);
        if (!strcmp(op, "Const") || !strcmp(op, "HostConst")) {
            const Tensorflow__AttrValue *a = gn__node_attr(g, id, "value");
            cval *c = &e->vals[e->n_vals];
            if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR) {
                s = gn__fail(err, GN_ERR_GRAPH, "node '%s' (Const): no value", gn__node_name(g, id));
                break;
            }
            s = gn__tensor_from_proto(a->tensor, &c->host, err);
            if (s != GN_OK) {
                gn__err_prefix(err, "node '%s' (Const)", gn__node_name(g, id));
                break;
            }
            if (!gn_dtype_size(c->host.dtype)) {
                s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (Const): not supported on the CUDA backend: dtype %s",
                             gn__node_name(g, id), gn_dtype_numpy_name(c->host.dtype));
                break;
            }
            c->kind = V_CONST;
            c->dev_off = wbytes;
            wbytes += align_up(c->host.nbytes ? c->host.nbytes : 1);
            val_of[id] = e->n_vals++;
            nout_of[id] = 1;
            host[id] = 1;
            continue;
        }
        cnode *n = &e->nodes[e->n_nodes];
        if (!strcmp(op, "Placeholder") || !strcmp(op, "PlaceholderV2")) {
            s = gn__fail(err, GN_ERR_ARG, "node '%s' (%s): the placeholder is needed but not fed", gn__node_name(g, id), op);
            break;
        }
        const gn__node *nd = gn__node_at(g, id);
        bool on_host = is_host_op(op);
        for (uint32_t j = 0; on_host && !is_shape_op(op) && j < nd->n_in; j++) on_host = input_on_host(g, id, j, &hc);
        if (on_host) {
            memset(n, 0, sizeof *n);
            n->id = id;
            n->op = &k_host_info;
            n->fuse_root = -1;
            int32_t no = gn__node_num_outputs(g, id);
            n->n_out = no > 1 ? (uint32_t)no : 1;
            host[id] = 1;
        } else if (!parse_node(b, g, id, n, &hc, why, sizeof why)) {
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (%s): not supported on the CUDA backend: %s",
                         gn__node_name(g, id), op, why);
            break;
        }
        uint32_t min_in = 0, max_in = UINT32_MAX;
        if (!on_host) arity(n, &min_in, &max_in);
        if (nd->n_in < min_in || nd->n_in > max_in) {
            s = gn__fail(err, GN_ERR_GRAPH, "node '%s' (%s): %u inputs, expected %u", gn__node_name(g, id), op, nd->n_in, min_in);
            break;
        }
        n->n_in = nd->n_in;
        n->in = calloc(nd->n_in + 1, sizeof *n->in);
        if (!n->in) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        e->n_nodes++;
        for (uint32_t j = 0; s == GN_OK && j < nd->n_in; j++) {
            gn__edge in = nd->in[j];
            int32_t fi = gn__sig_feed_index(sig, has_feed, in);
            if (fi >= 0) n->in[j] = (uint32_t)fi;
            else if (val_of[in.node] == UINT32_MAX || in.index >= nout_of[in.node])
                s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (%s): not supported on the CUDA backend: input %u is output %u of '%s' (%s), which the CUDA backend does not compute",
                             gn__node_name(g, id), op, j, in.index, gn__node_name(g, in.node), gn__node_op(g, in.node));
            else n->in[j] = val_of[in.node] + in.index;
        }
        /* an INT8 engine: the nodes the CPU reference runs in int8 do here too */
        if (s == GN_OK && e->q8_table && !on_host && (n->op->kind == OP_CONV || n->op->kind == OP_MATMUL) &&
            gn__int8_node_info(g, id, &n->q8)) {
            gn__edge xe = nd->in[0];
            float amax = gn__calib_find(e->q8_table, gn__node_name(g, xe.node), xe.index);
            if (amax < 0) {
                s = gn__fail(err, GN_ERR_GRAPH,
                             "INT8 engine: no range for tensor '%s:%u' (input of %s '%s') in the calibration table",
                             gn__node_name(g, xe.node), xe.index, op, gn__node_name(g, id));
                break;
            }
            n->is_q8 = true;
            n->q8_sx = gn__q8_scale(amax);
        }
        if (n->op->kind == OP_NOOP) continue;
        if (s == GN_OK && e->n_vals + n->n_out > cap) {
            s = gn__fail(err, GN_ERR_INTERNAL, "node '%s' (%s): %u outputs, more than its op declares", gn__node_name(g, id), op, n->n_out);
            break;
        }
        n->out = e->n_vals;
        for (uint32_t k = 0; k < n->n_out; k++) e->vals[e->n_vals++].kind = V_NODE;
        val_of[id] = n->out;
        nout_of[id] = n->n_out;
    }
    e->n_fetches = sig->n_fetches;
    for (uint32_t f = 0; s == GN_OK && f < sig->n_fetches; f++) {
        gn__edge fe = sig->fetches[f];
        int32_t fi = gn__sig_feed_index(sig, has_feed, fe);
        if (fi >= 0) e->fetch_val[f] = (uint32_t)fi;
        else if (!keep[fe.node] || val_of[fe.node] == UINT32_MAX || fe.index >= nout_of[fe.node])
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "fetch %u: output %u of '%s' (%s) cannot be fetched from the CUDA backend",
                         f, fe.index, gn__node_name(g, fe.node), gn__node_op(g, fe.node));
        else e->fetch_val[f] = val_of[fe.node] + fe.index;
    }
    if (s == GN_OK) s = match_layernorms(e, err);
    if (s == GN_OK) s = fuse_elementwise(e, err);
    /* weights: uploaded once */
    if (s == GN_OK) {
        e->weights_bytes = wbytes;
        cudaError_t ce = cudaMalloc(&e->weights, wbytes ? wbytes : ALIGN);
        if (ce != cudaSuccess) {
            e->weights = NULL;
            s = cuda_fail(err, "cudaMalloc (weights)", ce);
        }
        for (uint32_t v = 0; s == GN_OK && v < e->n_vals; v++) {
            const cval *c = &e->vals[v];
            if (c->kind != V_CONST || !c->host.nbytes) continue;
            ce = cudaMemcpyAsync((char *)e->weights + c->dev_off, c->host.data, c->host.nbytes, cudaMemcpyHostToDevice,
                                 b->stream);
            if (ce != cudaSuccess) s = cuda_fail(err, "cudaMemcpyAsync (weights)", ce);
        }
        if (s == GN_OK && (ce = cudaStreamSynchronize(b->stream)) != cudaSuccess) s = cuda_fail(err, "cudaStreamSynchronize", ce);
    }
    free(order);
    free(val_of);
    free(nout_of);
    free(host);
    return s;
}

static gn_status compile_depth(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, uint32_t depth,
                               const gn__calib_table *q8, gn__engine **out, gn__err *err)
{
    *out = NULL;
    for (uint32_t i = 0; i < sig->n_feeds; i++)
        if (!gn__node_live(g, sig->feeds[i].node)) return gn__fail(err, GN_ERR_INTERNAL, "feed %u names no node", i);
    for (uint32_t i = 0; i < sig->n_fetches; i++)
        if (!gn__node_live(g, sig->fetches[i].node)) return gn__fail(err, GN_ERR_INTERNAL, "fetch %u names no node", i);
    uint8_t *has_feed = NULL, *keep = NULL;
    uint32_t n_keep = 0;
    GN_TRY(gn__runtime_feed_marks(g, sig, &has_feed, err));
    gn_status s = gn__runtime_prune(g, sig, has_feed, &keep, &n_keep, err);
    gn__engine *e = NULL;
    if (s == GN_OK && !(e = calloc(1, sizeof *e))) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        e->b = b;
        e->g = g;
        e->n_feeds = sig->n_feeds;
        e->depth = depth;
        e->q8_table = q8;
        s = build_engine(b, g, sig, e, has_feed, keep, n_keep, err);
        e->q8_table = NULL;
    }
    if (s == GN_OK) s = engines_init(e, err);
    free(has_feed);
    free(keep);
    if (s != GN_OK) {
        cu_engine_free(b, e);
        return s;
    }
    *out = e;
    return GN_OK;
}

static gn_status cu_compile(void *self, const gn_graph *g, const gn__engine_sig *sig, gn__engine **out, gn__err *err)
{
    return compile_depth(self, g, sig, 0, NULL, out, err);
}

static gn_status plan_for(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err)
{
    for (uint32_t i = 0; i < e->n_plans; i++) {
        if (!plan_matches(e, e->plans[i], in)) continue;
        cplan *p = e->plans[i];
        memmove(&e->plans[1], &e->plans[0], i * sizeof *e->plans);
        e->plans[0] = p;
        *out = p;
        return GN_OK;
    }
    cplan *p = NULL;
    GN_TRY(plan_new(e, in, &p, err));
    if (e->n_plans == MAX_PLANS) plan_free(e, e->plans[--e->n_plans]);
    memmove(&e->plans[1], &e->plans[0], e->n_plans * sizeof *e->plans);
    e->plans[0] = p;
    e->n_plans++;
    *out = p;
    return GN_OK;
}

/* ---- Grapnel>EngineOp ---------------------------------------------------------------
 * On this backend an FP32/FP16 engine is the op's engine function (its
 * `_engine_func`, else its native segment) compiled by this backend, with a
 * plan for one set of input shapes. The op keeps up to
 * max_cached_engines_count of them, keyed by input shapes, dropping the least
 * recently used when it builds one more; without allow_build_at_runtime a
 * miss runs the native segment (also compiled here). The cache starts with
 * the engines built ahead of time (gn_engines_build) or read from a
 * SavedModel's assets, built when the session's engine is compiled.
 *
 * An INT8 engine is the native segment compiled with the op's calibration
 * table: the nodes the CPU reference runs in int8 (runtime/quant.h) run
 * here in int8 too (plan_q8, run_q8), the others in float32. As on the CPU
 * backend, an INT8 op without a table yet (use_calibration and no
 * gn_calibrate) runs its native segment, and so does one whose engine
 * cannot be built (a tensor without a range): counted as fallbacks.
 *
 * An engine is refcounted: the cache holds a reference and so does every
 * plan of the enclosing engine that runs it, so a plan (and the CUDA Graph
 * captured from it) keeps what it launches after an eviction. The choice is
 * made when the enclosing plan is made (its output shapes depend on it);
 * the counters are kept per run (engines_account), as the CPU backend counts
 * them: a plan whose engine was evicted since builds it again (the plan's
 * copy goes back into the cache). */
typedef struct ceng {
    uint32_t refs;
    bool in_cache;                /* held by its op's cache */
    bool counted;                 /* its build (or prebuilt start) is counted */
    bool fallback;                /* the native segment, not an engine (never cached) */
    uint64_t last_use;
    uint32_t n_in;
    int32_t *dtype, *rank;        /* the key: per input */
    int64_t *dims;                /* n_in * GN__MAX_DIMS */
    gn__engine *sub;              /* the function, compiled */
    cplan *sp;                    /* its plan for the key's shapes (owned by sub) */
} ceng;

typedef struct cengop {
    const char *segment_fn, *engine_fn;
    bool int8, allow;
    const char *table;            /* INT8: the calibration table (NULL: none yet) */
    size_t table_len;
    uint32_t max;
    ceng **k;                     /* the cache */
    uint32_t n, cap;
} cengop;

#define MAX_ENGINE_DEPTH 4

static void ceng_release(cu_backend *b, ceng *c)
{
    if (!c || --c->refs) return;
    cu_engine_free(b, c->sub);
    free(c->dtype);
    free(c->rank);
    free(c->dims);
    free(c);
}

static void cengop_free(cu_backend *b, cengop *op)
{
    if (!op) return;
    for (uint32_t i = 0; i < op->n; i++) {
        op->k[i]->in_cache = false;
        ceng_release(b, op->k[i]);
    }
    free(op->k);
    free(op);
}

static const char *func_attr(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func && a->func->name ? a->func->name : NULL;
}

/* Compiles function fname for op n and plans it for the given input shapes
 * (an INT8 engine, unless fallback, when op has a calibration table); *out
 * gets one reference. */
static gn_status ceng_build(gn__engine *e, const cnode *n, const char *fname, bool fallback, const cengop *op,
                            const int32_t *dtype, const int32_t *rank, const int64_t *dims, ceng **out, gn__err *err)
{
    *out = NULL;
    const gn_graph *g = e->g;
    uint32_t n_in = n->n_in;
    if (e->depth + 1 >= MAX_ENGINE_DEPTH)
        return node_fail(e, n, err, GN_ERR_UNSUPPORTED, "engine ops nested more than %d deep", MAX_ENGINE_DEPTH);
    const gn__function *fn = gn__graph_find_function(g->lib ? g->lib : g, fname);
    const Tensorflow__OpDef *sd = fn && fn->def ? fn->def->signature : NULL;
    if (!fn || !fn->body || !sd) return node_fail(e, n, err, GN_ERR_GRAPH, "function '%s' is not in the library", fname);
    if (sd->n_input_arg != n_in || sd->n_output_arg != n->n_out)
        return node_fail(e, n, err, GN_ERR_GRAPH, "function '%s' takes %zu inputs and returns %zu, the op has %u and %u",
                         fname, sd->n_input_arg, sd->n_output_arg, n_in, n->n_out);
    ceng *c = calloc(1, sizeof *c);
    gn__edge *feeds = calloc(n_in + 1, sizeof *feeds), *fetches = calloc(n->n_out + 1, sizeof *fetches);
    gn__tensor *tin = calloc(n_in + 1, sizeof *tin);
    if (c) {
        c->refs = 1;
        c->dtype = calloc(n_in + 1, sizeof *c->dtype);
        c->rank = calloc(n_in + 1, sizeof *c->rank);
        c->dims = calloc((size_t)n_in * GN__MAX_DIMS + 1, sizeof *c->dims);
    }
    gn_status s = GN_OK;
    if (!c || !feeds || !fetches || !tin || !c->dtype || !c->rank || !c->dims) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GN_OK && i < n_in; i++) {
        c->dtype[i] = tin[i].dtype = dtype[i];
        c->rank[i] = tin[i].rank = rank[i];
        memcpy(&c->dims[(size_t)i * GN__MAX_DIMS], &dims[(size_t)i * GN__MAX_DIMS], sizeof(int64_t) * GN__MAX_DIMS);
        memcpy(tin[i].dims, &dims[(size_t)i * GN__MAX_DIMS], sizeof(int64_t) * GN__MAX_DIMS);
        gn_id a = gn__graph_find(fn->body, sd->input_arg[i]->name);
        if (a == GN_NONE || !(gn__node_at(fn->body, a)->flags & GN__NODE_FN_ARG))
            s = node_fail(e, n, err, GN_ERR_GRAPH, "function '%s': no node for input argument '%s'", fname, sd->input_arg[i]->name);
        else if ((int32_t)sd->input_arg[i]->type != dtype[i])
            s = node_fail(e, n, err, GN_ERR_GRAPH, "input %u is %s, function '%s' takes %s", i, gn_dtype_numpy_name(dtype[i]),
                          fname, gn_dtype_numpy_name((int32_t)sd->input_arg[i]->type));
        else feeds[i] = (gn__edge){a, 0};
    }
    for (uint32_t i = 0; s == GN_OK && i < n->n_out; i++) {
        char name[1024];
        snprintf(name, sizeof name, "_retval:%s", sd->output_arg[i]->name);
        gn_id r = gn__graph_find(fn->body, name);
        if (r == GN_NONE || gn__node_at(fn->body, r)->n_in < 1)
            s = node_fail(e, n, err, GN_ERR_GRAPH, "function '%s': output argument '%s' is not returned", fname, sd->output_arg[i]->name);
        else fetches[i] = gn__node_at(fn->body, r)->in[0];
    }
    gn__calib_table tab;
    memset(&tab, 0, sizeof tab);
    bool q8 = !fallback && op && op->int8 && op->table_len;
    if (s == GN_OK && q8) s = gn__calib_parse(op->table, op->table_len, &tab, err);
    if (s == GN_OK) {
        c->n_in = n_in;
        c->fallback = fallback;
        gn__engine_sig sig = {n_in, feeds, n->n_out, fetches, fn->n_control_ret, fn->control_ret_node};
        s = compile_depth(e->b, fn->body, &sig, e->depth + 1, q8 ? &tab : NULL, &c->sub, err);
        if (s == GN_OK) s = plan_new(c->sub, tin, &c->sp, err);
        if (s == GN_OK) {
            c->sub->plans[0] = c->sp;
            c->sub->n_plans = 1;
        }
        if (s != GN_OK) gn__err_prefix(err, NODE_FMT "function '%s'", NODE_ARGS(e, n), fname);
    }
    gn__calib_free(&tab);
    free(feeds);
    free(fetches);
    free(tin);
    if (s != GN_OK) {
        if (c) {
            c->refs = 1;
            ceng_release(e->b, c);
        }
        return s;
    }
    *out = c;
    return GN_OK;
}

/* Puts c into op's cache (a new reference), first dropping the least
 * recently used engine when the cache is full. */
static gn_status cache_insert(gn__engine *e, cengop *op, ceng *c, gn__err *err)
{
    if (op->n >= op->max && op->n) {
        uint32_t lru = 0;
        for (uint32_t i = 1; i < op->n; i++)
            if (op->k[i]->last_use < op->k[lru]->last_use) lru = i;
        ceng *old = op->k[lru];
        op->k[lru] = op->k[--op->n];
        old->in_cache = false;
        ceng_release(e->b, old);
        e->stats.eng_evictions++;
    }
    if (op->n == op->cap) {
        uint32_t nc = op->cap ? op->cap * 2 : 4;
        ceng **k = realloc(op->k, nc * sizeof *k);
        if (!k) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        op->k = k;
        op->cap = nc;
    }
    c->refs++;
    c->in_cache = true;
    c->last_use = ++e->eng_clock;
    op->k[op->n++] = c;
    return GN_OK;
}

/* At compile: each engine op's cache, started with the engines built ahead
 * of time (the session's own graph only). */
static gn_status engines_init(gn__engine *e, gn__err *err)
{
    const gn_graph *g = e->g;
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        cnode *n = &e->nodes[k];
        if (n->op->kind != OP_ENGINE) continue;
        cengop *op = n->eng = calloc(1, sizeof *op);
        if (!op) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        op->segment_fn = func_attr(g, n->id, "segment_func");
        op->engine_fn = func_attr(g, n->id, "_engine_func");
        if (!op->engine_fn) op->engine_fn = op->segment_fn;
        const char *pm = NULL;
        size_t pl = 0;
        op->int8 = gn__attr_get_string(g, n->id, "precision_mode", &pm, &pl) && pl == 4 && !strncasecmp(pm, "INT8", 4);
        if (op->int8 && !gn__attr_get_string(g, n->id, "calibration_data", &op->table, &op->table_len))
            op->table = NULL, op->table_len = 0;
        if (op->int8) op->engine_fn = op->segment_fn;   /* an INT8 engine is built from the native segment */
        op->allow = true;
        (void)gn__attr_get_bool(g, n->id, "allow_build_at_runtime", &op->allow);
        int64_t max = 1;
        (void)gn__attr_get_int(g, n->id, "max_cached_engines_count", &max);
        op->max = max < 1 ? 1 : max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
        if (e->depth) continue;
        gn__engine_shapes *sh = NULL;
        uint32_t ns = 0, stale = 0;
        gn_status s = gn__engine_seeds(g, g, n->id, GN__ENGINE_CUDA, op->max, &sh, &ns, &stale, err);
        if (s != GN_OK) {
            gn__err_prefix(err, NODE_FMT "engine assets", NODE_ARGS(e, n));
            return s;
        }
        e->stats.eng_stale += stale;
        const Tensorflow__AttrValue__ListValue *it = attr_list(g, n->id, "InT");
        int32_t *dt = calloc(n->n_in + 1, sizeof *dt);
        if (!dt) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; s == GN_OK && ns && i < n->n_in; i++) {
            if (!it || it->n_type != n->n_in) s = node_fail(e, n, err, GN_ERR_GRAPH, "attr InT must list %u types", n->n_in);
            else dt[i] = (int32_t)it->type[i];
        }
        /* INT8 without a table: no engine can be built (the native segment runs) */
        bool native = op->int8 && !op->table_len;
        for (uint32_t i = 0; i < ns; i++) {
            ceng *c = NULL;
            if (s == GN_OK && !native && sh[i].n_in != n->n_in)
                s = node_fail(e, n, err, GN_ERR_GRAPH, "a prebuilt engine has %u inputs, the op %u", sh[i].n_in, n->n_in);
            if (s == GN_OK && !native) {
                s = ceng_build(e, n, op->engine_fn, false, op, dt, sh[i].rank, sh[i].dims, &c, err);
                if (s != GN_OK && op->int8) {   /* as on the CPU backend: not prebuilt, the segment runs */
                    gn__err_clear(err);
                    s = GN_OK;
                }
            }
            if (s == GN_OK && c) s = cache_insert(e, op, c, err);
            if (c) {
                c->counted = true;
                e->stats.eng_prebuilt += s == GN_OK;
                ceng_release(e->b, c);   /* the cache keeps it */
            }
            gn__engine_shapes_free(&sh[i]);
        }
        free(sh);
        free(dt);
        if (s != GN_OK) return s;
    }
    return GN_OK;
}

/* At plan time: the engine op's engine for the plan's input shapes (from the
 * cache, built, or the native segment), and its output shapes. */
static gn_status plan_engine(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cnode *n = &e->nodes[k];
    cengop *op = n->eng;
    if (!op) return node_fail(e, n, err, GN_ERR_INTERNAL, "no engine cache");
    ceng *c = NULL;
    bool native = op->int8 && !op->table_len;   /* INT8 not calibrated: no engine can be built */
    for (uint32_t i = 0; !native && i < op->n && !c; i++) {
        const ceng *h = op->k[i];
        bool same = h->n_in == n->n_in;
        for (uint32_t j = 0; same && j < n->n_in; j++) {
            uint32_t v = n->in[j];
            same = h->dtype[j] == p->dtype[v] && h->rank[j] == p->rank[v];
            for (int32_t d = 0; same && d < p->rank[v]; d++) same = h->dims[(size_t)j * GN__MAX_DIMS + (size_t)d] == vdims(p, v)[d];
        }
        if (same) c = op->k[i];
    }
    if (c) {
        c->refs++;
    } else {
        bool fb = native || !op->allow;
        int32_t *dt = calloc(n->n_in + 1, sizeof *dt), *rk = calloc(n->n_in + 1, sizeof *rk);
        int64_t *dm = calloc((size_t)n->n_in * GN__MAX_DIMS + 1, sizeof *dm);
        gn_status s = dt && rk && dm ? GN_OK : gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t j = 0; s == GN_OK && j < n->n_in; j++) {
            uint32_t v = n->in[j];
            dt[j] = p->dtype[v];
            rk[j] = p->rank[v];
            memcpy(&dm[(size_t)j * GN__MAX_DIMS], vdims(p, v), sizeof(int64_t) * GN__MAX_DIMS);
        }
        if (s == GN_OK) s = ceng_build(e, n, fb ? op->segment_fn : op->engine_fn, fb, op, dt, rk, dm, &c, err);
        if (s != GN_OK && op->int8 && !fb) {   /* as on the CPU backend: an INT8 engine that cannot be built */
            gn__err_clear(err);               /* runs the native segment, counted as a fallback */
            fb = true;
            s = ceng_build(e, n, op->segment_fn, true, op, dt, rk, dm, &c, err);
        }
        if (s == GN_OK && !fb) s = cache_insert(e, op, c, err);
        free(dt);
        free(rk);
        free(dm);
        if (s != GN_OK) {
            ceng_release(e->b, c);
            return s;
        }
    }
    p->eng[k] = c;
    for (uint32_t f = 0; f < n->n_out; f++) {
        uint32_t v = n->out + f, sv = c->sub->fetch_val[f];
        p->root[v] = v;
        p->dtype[v] = c->sp->dtype[sv];
        p->rank[v] = c->sp->rank[sv];
        memcpy(vdims(p, v), vdims(c->sp, sv), sizeof(int64_t) * GN__MAX_DIMS);
    }
    return GN_OK;
}

/* Per run (also when a captured graph replays): the engine ops' counters
 * and least-recently-used order, as the CPU backend keeps them. */
static gn_status engines_account(gn__engine *e, cplan *p, gn__err *err)
{
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        ceng *c = p->eng[k];
        if (!c) continue;
        e->eng_clock++;
        if (c->fallback) {
            e->stats.eng_fallbacks++;
            continue;
        }
        if (!c->in_cache) {   /* evicted since the plan was made: built again */
            GN_TRY(cache_insert(e, e->nodes[k].eng, c, err));
            e->stats.eng_builds++;
            c->counted = true;
        } else if (!c->counted) {
            e->stats.eng_builds++;
            c->counted = true;
        } else {
            e->stats.eng_hits++;
        }
        c->last_use = e->eng_clock;
    }
    return GN_OK;
}

/* An engine op's run: its inputs copied into the engine's plan, the
 * engine's kernels, its outputs copied out (all on the stream). */
static gn_status run_engine_node(gn__engine *e, cplan *p, const cnode *n, uint32_t k, gn__err *err)
{
    ceng *c = p->eng[k];
    if (!c) return node_fail(e, n, err, GN_ERR_INTERNAL, "no engine planned");
    gn__engine *sub = c->sub;
    cplan *sp = c->sp;
    cudaStream_t s = e->b->stream;
    for (uint32_t i = 0; i < n->n_in; i++) {
        uint32_t v = n->in[i];
        size_t bytes = (size_t)numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        if (bytes) CK_CUDA(cudaMemcpyAsync(vptr(sub, sp, i), vptr(e, p, v), bytes, cudaMemcpyDeviceToDevice, s));
    }
    gn_status st = run_all(sub, sp, err);
    if (st != GN_OK) {
        gn__err_prefix(err, NODE_FMT "%s", NODE_ARGS(e, n), c->fallback ? "native segment" : "engine");
        return st;
    }
    for (uint32_t f = 0; f < n->n_out; f++) {
        uint32_t v = n->out + f;
        size_t bytes = (size_t)numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        if (bytes)
            CK_CUDA(cudaMemcpyAsync(vptr(e, p, v), vptr(sub, sp, sub->fetch_val[f]), bytes, cudaMemcpyDeviceToDevice, s));
    }
    return GN_OK;
}

static gn_status run_all(gn__engine *e, cplan *p, gn__err *err)
{
    for (uint32_t k = 0; k < e->n_nodes; k++) GN_TRY(run_node(e, p, k, err));
    return GN_OK;
}

/* Captures the plan's kernels into a CUDA Graph (the feed and fetch copies
 * stay outside: the graph reads and writes the plan's fixed arena buffers).
 * Nothing runs during a capture. When something cannot be captured (a call
 * that syncs with the host or allocates invalidates the capture) the plan is
 * marked so and runs normally from then on; the stats say why. */
static void plan_capture(gn__engine *e, cplan *p)
{
    cu_backend *b = e->b;
    gn__err cerr;
    memset(&cerr, 0, sizeof cerr);
    char why[sizeof e->stats.graph_why] = "";
    cudaGraph_t graph = NULL;
    cudaError_t ce = cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal);
    if (ce != cudaSuccess) {
        snprintf(why, sizeof why, "cudaStreamBeginCapture: %s", cudaGetErrorString(ce));
    } else {
        gn_status s = run_all(e, p, &cerr);
        cudaError_t ee = cudaStreamEndCapture(b->stream, &graph);
        if (s != GN_OK)
            snprintf(why, sizeof why, "%.*s", (int)sizeof why - 1, cerr.msg);
        else if (ee != cudaSuccess)
            snprintf(why, sizeof why, "cudaStreamEndCapture: %s", cudaGetErrorString(ee));
        else if (!graph)
            snprintf(why, sizeof why, "cudaStreamEndCapture returned no graph");
        else if ((ce = cudaGraphInstantiate(&p->graph_exec, graph, 0)) != cudaSuccess) {
            p->graph_exec = NULL;
            snprintf(why, sizeof why, "cudaGraphInstantiate: %s", cudaGetErrorString(ce));
        }
    }
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();   /* capture errors are not sticky: clear them before running normally */
    if (!why[0]) {
        p->graph_state = 1;
        e->stats.graph_captures++;
        e->stats.graph_why[0] = '\0';
    } else {
        p->graph_state = -1;
        e->stats.graph_ineligible++;
        snprintf(e->stats.graph_why, sizeof e->stats.graph_why, "%s", why);
    }
}

static gn_status cu_execute(void *self, gn__engine *e, const gn__tensor *in, gn__tensor *out, uint64_t seed,
                            gn__err *err)
{
    cu_backend *b = self;
    (void)seed;
    gn__engine_stats *st = &e->stats;
    st->runs++;
    st->arena_allocs = st->dynamic_allocs = st->plan_misses = st->nodes_run = 0;
    for (uint32_t i = 0; i < e->n_feeds; i++)
        if (!in[i].dtype || in[i].dead || (in[i].nbytes && !in[i].data) || !gn_dtype_size(in[i].dtype))
            return gn__fail(err, GN_ERR_ARG, "feed %u: a %s tensor cannot be fed to the CUDA backend", i,
                            in[i].dtype ? gn_dtype_numpy_name(in[i].dtype) : "missing");
    cplan *p = NULL;
    GN_TRY(plan_for(e, in, &p, err));
    st->n_plans = e->n_plans;
    st->planned = true;
    GN_TRY(engines_account(e, p, err));
    st->arena_bytes = p->arena_bytes;
    st->planned_bytes = p->planned_bytes;
    gn_status s = GN_OK;
    cudaError_t ce;
    for (uint32_t i = 0; s == GN_OK && i < e->n_feeds; i++) {
        if (!in[i].nbytes) continue;
        ce = cudaMemcpyAsync(vptr(e, p, i), in[i].data, in[i].nbytes, cudaMemcpyHostToDevice, b->stream);
        if (ce != cudaSuccess) s = cuda_fail(err, "cudaMemcpyAsync (feed)", ce);
        st->arena_allocs++;
    }
    st->graph_replayed = false;
    if (s == GN_OK && b->cuda_graph && p->graph_state == 0) plan_capture(e, p);
    if (s == GN_OK && p->graph_state == 1) {
        ce = cudaGraphLaunch(p->graph_exec, b->stream);
        if (ce != cudaSuccess) s = cuda_fail(err, "cudaGraphLaunch", ce);
        st->graph_replayed = s == GN_OK;
    } else if (s == GN_OK) {
        s = run_all(e, p, err);
    }
    for (uint32_t k = 0; s == GN_OK && k < e->n_nodes; k++) {
        const cnode *n = &e->nodes[k];
        if (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || skipped(p, n)) continue;
        if (p->root[n->out] == n->out) {   /* launched: not an alias */
            st->nodes_run++;
            st->arena_allocs += n->n_out;
        }
    }
    for (uint32_t f = 0; s == GN_OK && f < e->n_fetches; f++) {
        uint32_t v = e->fetch_val[f];
        gn__tensor *t = &out[f];
        size_t bytes = (size_t)numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        gn__buffer *buf = gn__buffer_new(bytes ? bytes : 1);
        if (!buf) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        t->dtype = p->dtype[v];
        t->rank = p->rank[v];
        memcpy(t->dims, vdims(p, v), sizeof t->dims);
        t->buf = buf;
        t->data = buf->data;
        t->nbytes = bytes;
        if (!bytes) continue;
        ce = cudaMemcpyAsync(t->data, vptr(e, p, v), bytes, cudaMemcpyDeviceToHost, b->stream);
        if (ce != cudaSuccess) s = cuda_fail(err, "cudaMemcpyAsync (fetch)", ce);
    }
    ce = cudaStreamSynchronize(b->stream);
    if (s == GN_OK && ce != cudaSuccess) s = cuda_fail(err, "cudaStreamSynchronize", ce);
    if (s != GN_OK)
        for (uint32_t f = 0; f < e->n_fetches; f++) gn__tensor_release(&out[f]);
    return s;
}

static void cu_engine_stats(void *self, const gn__engine *e, gn__engine_stats *out)
{
    (void)self;
    *out = e->stats;
}

static void cu_free(void *self)
{
    cu_backend *b = self;
    if (!b) return;
    if (b->stream) cudaStreamSynchronize(b->stream);
    if (b->lt) b->p_cublasLtDestroy(b->lt);
    if (b->lt_lib) dlclose(b->lt_lib);
    if (b->blas) b->p_cublasDestroy_v2(b->blas);
    if (b->blas_ws) cudaFree(b->blas_ws);
    free(b->algos);
    if (b->dnn) b->p_cudnnDestroy(b->dnn);
    if (b->blas_lib) dlclose(b->blas_lib);
    if (b->dnn_lib) dlclose(b->dnn_lib);
    if (b->stream) cudaStreamDestroy(b->stream);
    free(b);
}

static gn_status cu_configure(void *self, const gn__backend_config *cfg, gn__err *err)
{
    cu_backend *b = self;
    if (!cfg) return gn__fail(err, GN_ERR_INTERNAL, "cuda backend: no configuration");
    b->cuda_graph = cfg->cuda_graph;
    b->ws_limit = cfg->workspace_limit_bytes ? cfg->workspace_limit_bytes : WORKSPACE_LIMIT;
    return GN_OK;
}

static const gn__backend_iface cu_iface = {
    .api_version = GN__BACKEND_API_VERSION,
    .name = "cuda",
    .supports = cu_supports,
    .compile = cu_compile,
    .execute = cu_execute,
    .engine_free = cu_engine_free,
    .free = cu_free,
    .engine_stats = cu_engine_stats,
    .configure = cu_configure,
};

/* dlopen the first of names that loads; why gets the loader's message otherwise. */
static void *open_lib(const char *const *names, char *why, size_t why_len)
{
    for (const char *const *nm = names; *nm; nm++) {
        void *h = dlopen(*nm, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        const char *d = dlerror();
        snprintf(why, why_len, "dlopen %s: %s", *nm, d ? d : "failed");
    }
    return NULL;
}

#define LOAD(name)                                                                                            \
    if (ok) {                                                                                                 \
        void *sym_ = dlsym(lib, #name);                                                                       \
        if (sym_) memcpy(&b->p_##name, &sym_, sizeof sym_);                                                   \
        else {                                                                                                \
            snprintf(why, why_len, "%s has no symbol %s", libname, #name);                                    \
            ok = false;                                                                                       \
        }                                                                                                     \
    }

static bool load_blas(cu_backend *b)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so", NULL};
    char *why = b->blas_why;
    size_t why_len = sizeof b->blas_why;
    const char *libname = "libcublas";
    void *lib = b->blas_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUBLAS_FNS(LOAD)
    if (!ok) return false;
    cublasStatus_t st = b->p_cublasCreate_v2(&b->blas);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasCreate: %s", b->p_cublasGetStatusString(st));
        b->blas = NULL;
        return false;
    }
    if ((st = b->p_cublasSetStream_v2(b->blas, b->stream)) != CUBLAS_STATUS_SUCCESS ||
        (st = b->p_cublasSetMathMode(b->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasSetStream/SetMathMode: %s", b->p_cublasGetStatusString(st));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        return false;
    }
    /* a workspace of our own (after SetStream, which resets it): cuBLAS then
     * allocates nothing while a run is captured into a CUDA Graph */
    cudaError_t ce = cudaMalloc(&b->blas_ws, BLAS_WORKSPACE);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        b->blas_ws = NULL;
        snprintf(why, why_len, "cudaMalloc of cuBLAS's %zu-byte workspace: %s", BLAS_WORKSPACE, cudaGetErrorString(ce));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        return false;
    }
    if ((st = b->p_cublasSetWorkspace_v2(b->blas, b->blas_ws, BLAS_WORKSPACE)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasSetWorkspace: %s", b->p_cublasGetStatusString(st));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        cudaFree(b->blas_ws);
        b->blas_ws = NULL;
        return false;
    }
    return true;
}

/* cuBLASLt (after cuBLAS, whose workspace it shares: both run on the one stream) */
static bool load_lt(cu_backend *b)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so", NULL};
    char *why = b->lt_why;
    size_t why_len = sizeof b->lt_why;
    const char *libname = "libcublasLt";
    if (!b->blas) {
        snprintf(why, why_len, "needs cuBLAS: %.200s", b->blas_why);
        return false;
    }
    void *lib = b->lt_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUBLASLT_FNS(LOAD)
    if (!ok) return false;
    cublasStatus_t st = b->p_cublasLtCreate(&b->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasLtCreate: %s", b->p_cublasLtGetStatusString(st));
        b->lt = NULL;
        return false;
    }
    return true;
}

static bool load_dnn(cu_backend *b)
{
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so", NULL};
    char *why = b->dnn_why;
    size_t why_len = sizeof b->dnn_why;
    const char *libname = "libcudnn";
    void *lib = b->dnn_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUDNN_FNS(LOAD)
    if (!ok) return false;
    cudnnStatus_t st = b->p_cudnnCreate(&b->dnn);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "cudnnCreate: %s", b->p_cudnnGetErrorString(st));
        b->dnn = NULL;
        return false;
    }
    if ((st = b->p_cudnnSetStream(b->dnn, b->stream)) != CUDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "cudnnSetStream: %s", b->p_cudnnGetErrorString(st));
        b->p_cudnnDestroy(b->dnn);
        b->dnn = NULL;
        return false;
    }
    return true;
}

gn_status gn__cuda_backend_open(int32_t num_threads, gn__backend *out, gn__err *err)
{
    (void)num_threads;
    int count = 0;
    cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(ce));
    if (count < 1) return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount found none");
    cu_backend *b = calloc(1, sizeof *b);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    b->ws_limit = WORKSPACE_LIMIT;
    if ((ce = cudaSetDevice(b->device)) != cudaSuccess ||
        (ce = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        b->stream = NULL;
        cu_free(b);
        return cuda_fail(err, "cudaSetDevice/cudaStreamCreate", ce);
    }
    if (!load_blas(b) && b->blas_lib) {
        dlclose(b->blas_lib);
        b->blas_lib = NULL;
    }
    if (!load_lt(b) && b->lt_lib) {
        dlclose(b->lt_lib);
        b->lt_lib = NULL;
    }
    if (!load_dnn(b) && b->dnn_lib) {
        dlclose(b->dnn_lib);
        b->dnn_lib = NULL;
    }
    out->iface = &cu_iface;
    out->self = b;
    return GN_OK;
}
