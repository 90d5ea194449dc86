/* The CUDA backend's private header: what its C files share (the backend,
 * the parsed nodes, plans and engine records, and the functions one stage
 * calls in another). The stages, split as src/runtime/cpu/ splits its own:
 *
 * support.c: which nodes the backend runs: the op table, the host ops, and
 *     each node's attributes parsed once at compile (parse_node), which is also
 *     the support check.
 * compile.c: compile: the nodes in topological order, parsed and checked,
 *     weights uploaded once; the plans kept per set of input shapes, most
 *     recently used first.
 * fuse.c: fusing runs of elementwise ops into one kernel (a small program
 *     the kernel interprets).
 * layernorm.c: layer norm as one kernel: the runs of nodes that compute a
 *     layer norm, matched at compile and checked per plan.
 * plan.c: plans, one per set of input shapes: the host-side shapes and
 *     values, cuDNN descriptors and algorithms, cuBLASLt GEMMs, the INT8 nodes'
 *     plans, per node (plan_node).
 * place.c: a plan's memory: buffers placed in one device arena by lifetime,
 *     and a new plan for a set of input shapes (plan_new).
 * run.c: running one node of a plan (and all of them, in order).
 * engine_op.c: Grapnel>EngineOp: the engines an engine op runs, kept per op
 *     in a least-recently-used cache.
 * backend.c: the backend interface (runtime/backend.h): supports, execute
 *     (CUDA Graph capture), stats, and opening the backend with cuBLAS, cuBLASLt
 *     and cuDNN loaded by dlopen.
 */
#ifndef GN_RUNTIME_CUDA_BACKEND_IMPL_H
#define GN_RUNTIME_CUDA_BACKEND_IMPL_H

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
#include "runtime/engine_cache.h"
#include "runtime/engine_op.h"
#include "runtime/cuda/cuda.h"
#include "runtime/prune.h"
#include "runtime/quant.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64
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

/* support.c: the record of a node run on the host */
extern const op_info gn__cuda_host_info;

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
    gn__plan_cache plans;         /* its plans per input shapes (runtime/engine_cache.h) */
    gn__engine_stats stats;
    uint32_t depth;               /* 0: the session's engine; 1 + its parent's for an engine op's function */
    uint64_t eng_clock;           /* engine caches: the time of last use (least recently used goes first) */
    const gn__calib_table *q8_table;   /* while an INT8 engine is compiled: its calibration table */
};

#define NODE_FMT "node '%s' (%s): "

#define NODE_ARGS(e, n) gn__node_name((e)->g, (n)->id), gn__node_op((e)->g, (n)->id)

#define CK_CUDA(call)                                                                                         \
    do {                                                                                                      \
        cudaError_t ce_ = (call);                                                                             \
        if (ce_ != cudaSuccess)                                                                               \
            return gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, cudaGetErrorString(ce_));           \
    } while (0)

#define CK_DNN(call)                                                                                          \
    do {                                                                                                      \
        cudnnStatus_t ds_ = (call);                                                                           \
        if (ds_ != CUDNN_STATUS_SUCCESS)                                                                      \
            return gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cudnnGetErrorString(ds_));      \
    } while (0)

#define CK_BLAS(call)                                                                                         \
    do {                                                                                                      \
        cublasStatus_t bs_ = (call);                                                                          \
        if (bs_ != CUBLAS_STATUS_SUCCESS)                                                                     \
            return gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cublasGetStatusString(bs_));    \
    } while (0)

struct ceng;

struct cengop;

#define CK_LT(call)                                                                                           \
    do {                                                                                                      \
        cublasStatus_t ls_ = (call);                                                                          \
        if (ls_ != CUBLAS_STATUS_SUCCESS)                                                                     \
            return gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "%s: %s", #call, b->p_cublasLtGetStatusString(ls_));  \
    } while (0)

/* A _FusedMatMul's cuBLASLt GEMM (per node, per plan). */
typedef struct clt {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
} clt;

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
    bool counted;                 /* its build (or prebuilt start) is counted */
    bool fallback;                /* the native segment, not an engine (never cached) */
    gn__engine_key key;           /* its inputs' dtypes and shapes */
    gn__engine *sub;              /* the function, compiled */
    cplan *sp;                    /* its plan for the key's shapes (owned by sub) */
} ceng;

/* An engine op: its attrs and its engine cache (runtime/engine_cache.h),
 * whose entries hold a reference to their ceng. */
typedef struct cengop {
    gn__engine_op_cfg cfg;        /* the op's attrs (runtime/engine_op.h) */
    gn__engine_cache cache;
} cengop;

/* support.c */
bool gn__cuda_is_host_op(const char *op);
bool gn__cuda_is_shape_op(const char *op);
const Tensorflow__AttrValue__ListValue *gn__cuda_attr_list(const gn_graph *g, gn_id id, const char *key);
bool gn__cuda_host_known(const gn_graph *g, gn_id id, int depth);
bool gn__cuda_input_on_host(const gn_graph *g, gn_id id, uint32_t slot, const hctx *hc);
void gn__cuda_arity(const cnode *n, uint32_t *min, uint32_t *max);
bool gn__cuda_parse_node(const cu_backend *b, const gn_graph *g, gn_id id, cnode *n, const hctx *hc, char *why,
                       size_t why_len);

/* plan.c */
size_t gn__cuda_align_up(size_t v);
gn_status gn__cuda_fail(gn__err *err, const char *what, cudaError_t e);
gn_status gn__cuda_node_fail(const gn__engine *e, const cnode *n, gn__err *err, gn_status code, const char *fmt, ...)
    GN__PRINTF(5, 6);
int64_t *gn__cuda_vdims(cplan *p, uint32_t v);
int64_t gn__cuda_numel_of(const cplan *p, uint32_t v);
void *gn__cuda_vptr(const gn__engine *e, const cplan *p, uint32_t v);
void gn__cuda_plan_free(const gn__engine *e, cplan *p);
/* gn__cuda_plan_free as a cache's free callback (ctx: the engine) */
void gn__cuda_plan_drop(void *e, void *p);
const gn__tensor *gn__cuda_host_tensor(const gn__engine *e, const cplan *p, uint32_t v);
gn_status gn__cuda_const_ints(const gn__engine *e, const cplan *p, const cnode *n, uint32_t v, int64_t *out, int64_t max,
                            int64_t *count, gn__err *err);
bool gn__cuda_is_float(int32_t dt);
gn_status gn__cuda_window(const gn__engine *e, const cnode *n, int64_t in, int64_t k, int64_t dil, int64_t stride,
                        const int64_t *explicit_pad, int64_t *out, int64_t *before, int64_t *after, gn__err *err);
gn_status gn__cuda_run_epilogue(gn__engine *e, cplan *p, const cnode *n, int h, int64_t ne, int64_t c, int64_t inner, void *y,
                              gn__err *err);
gn_status gn__cuda_plan_xla(const gn__engine *e, cplan *p, const cnode *n, gn__cu_xpad *pad, gn__cu_xgather *gather,
                          gn__err *err);
gn_status gn__cuda_plan_node(gn__engine *e, cplan *p, uint32_t k, gn__err *err);

/* layernorm.c */
gn_status gn__cuda_match_layernorms(gn__engine *e, gn__err *err);
bool gn__cuda_ln_check(const gn__engine *e, cplan *p, uint32_t k);

/* place.c */
bool gn__cuda_skipped(const cplan *p, const cnode *n);
gn_status gn__cuda_plan_new(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err);
bool gn__cuda_plan_matches(const gn__engine *e, const cplan *p, const gn__tensor *in);

/* backend.c */
void gn__cuda_engine_free(void *self, gn__engine *e);

/* fuse.c */
gn_status gn__cuda_fuse_elementwise(gn__engine *e, gn__err *err);

/* compile.c */
gn_status gn__cuda_compile_depth(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, uint32_t depth,
                               const gn__calib_table *q8, gn__engine **out, gn__err *err);
gn_status gn__cuda_compile(void *self, const gn_graph *g, const gn__engine_sig *sig, gn__engine **out, gn__err *err);
gn_status gn__cuda_plan_for(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err);

/* engine_op.c */
void gn__cuda_ceng_release(cu_backend *b, ceng *c);
void gn__cuda_cengop_free(cu_backend *b, cengop *op);
gn_status gn__cuda_engines_init(gn__engine *e, gn__err *err);
gn_status gn__cuda_plan_engine(gn__engine *e, cplan *p, uint32_t k, gn__err *err);
gn_status gn__cuda_engines_account(gn__engine *e, cplan *p, gn__err *err);
gn_status gn__cuda_run_engine_node(gn__engine *e, cplan *p, const cnode *n, uint32_t k, gn__err *err);

/* run.c */
gn_status gn__cuda_run_all(gn__engine *e, cplan *p, gn__err *err);

#endif
