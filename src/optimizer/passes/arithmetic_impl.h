/* The arithmetic pass's shared state and helpers (private to
 * src/optimizer/passes/arithmetic*.c). See arithmetic.c for what the pass does. */
#ifndef GN_OPTIMIZER_PASSES_ARITHMETIC_IMPL_H
#define GN_OPTIMIZER_PASSES_ARITHMETIC_IMPL_H

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"

/* ---- patterns, in Grappler's pipeline order (docs/reference_grappler.md §3.10) ------- */
#define GN__AR_PATTERNS(X)                                                                       \
    X(ADD_OPS_REWRITE, "add_ops_rewrite")                                                        \
    X(FOLD_CONJ_TRANSPOSE, "fold_conjugate_into_transpose")                                      \
    X(FOLD_MUL_CONV, "fold_multiply_into_conv")                                                  \
    X(FOLD_TRANSPOSE_MATMUL, "fold_transpose_into_matmul")                                       \
    X(HOIST_COMMON_FACTOR, "hoist_common_factor")                                                \
    X(MINIMIZE_BROADCASTS, "minimize_broadcasts")                                                \
    X(REMOVE_REDUNDANT_TRANSPOSE, "remove_redundant_transpose")                                  \
    X(REMOVE_INVOLUTION, "remove_involution")                                                    \
    X(REMOVE_REDUNDANT_BITCAST, "remove_redundant_bitcast")                                      \
    X(REMOVE_REDUNDANT_CAST, "remove_redundant_cast")                                            \
    X(REPLACE_PACK_WITH_TILE_RESHAPE, "replace_pack_with_tile_reshape")                          \
    X(REPLACE_MUL_WITH_TILE, "replace_mul_with_tile")                                            \
    X(REDUCE_UPSAMPLING_DIMS, "reduce_upsampling_dims")                                          \
    X(REMOVE_REDUNDANT_RESHAPE, "remove_redundant_reshape")                                      \
    X(REMOVE_NEGATION, "remove_negation")                                                        \
    X(REPLACE_MUL_WITH_SQUARE, "replace_mul_with_square")                                        \
    X(REMOVE_LOGICAL_NOT, "remove_logical_not")                                                  \
    X(REORDER_CAST_LIKE, "reorder_cast_like_and_value_preserving")                               \
    X(REORDER_RESHAPE_UNARY, "reorder_reshape_around_unary")                                     \
    X(SIMPLIFY_AGGREGATION, "simplify_aggregation")                                              \
    X(HOIST_CWISE_UNARY_CHAINS, "hoist_cwise_unary_chains")                                      \
    X(SQRT_DIV_TO_RSQRT_MUL, "convert_sqrt_div_to_rsqrt_mul")                                    \
    X(REMOVE_IDEMPOTENT, "remove_idempotent")                                                    \
    X(CONVERT_POW, "convert_pow")                                                                \
    X(CONVERT_LOG1P, "convert_log1p")                                                            \
    X(CONVERT_LOG_SOFTMAX, "convert_log_softmax")                                                \
    X(MAX_MIN_OF_MONOTONIC, "optimize_max_or_min_of_monotonic")                                  \
    X(CONVERT_EXPM1, "convert_expm1")                                                            \
    X(UNARY_OPS_COMPOSITION, "unary_ops_composition")                                            \
    X(REMOVE_STACK_SLICE, "remove_stack_slice_same_axis")                                        \
    X(SIMPLIFY_EMBEDDING_LOOKUP, "simplify_embedding_lookup")                                    \
    X(REMOVE_CAST_INTO_SEGMENT, "remove_cast_into_segment_reduction")                            \
    X(FUSE_SQUARED_DIFF, "fuse_squared_diff")

#define GN__AR_PAT_ENUM(E, s) GN__AR_P_##E,
enum { GN__AR_PATTERNS(GN__AR_PAT_ENUM) GN__AR_NPAT };
#undef GN__AR_PAT_ENUM

/* ---- the ops the pass recognizes (sorted by name, strcmp order) ---------------------- *
 * Properties (Grappler's op_types.cc):
 *   IV involution; VS value, order and shape preserving; VO value and order
 *   preserving; VP value preserving; UE unary element-wise; MI / MD monotonic
 *   non-decreasing / non-increasing; CL cast-like; FR modifies frame info; CF
 *   control flow; SW a Switch; UF / UH / UD _UnaryOpsComposition supports it for
 *   float / half / double; BG value preserving with a byte-generic CPU kernel. */
#define GN__AR_OPS(X)                                                    \
    X(Abs, UE | UF | UH | UD)                                            \
    X(Acos, UE | MD | UF | UD)                                           \
    X(Acosh, UE | MI | UF | UD)                                          \
    X(Add, 0)                                                            \
    X(AddN, 0)                                                           \
    X(AddV2, 0)                                                          \
    X(ArgMax, 0)                                                         \
    X(ArgMin, 0)                                                         \
    X(Asin, UE | MI | UF | UD)                                           \
    X(Asinh, UE | MI | UF | UD)                                          \
    X(Atan, UE | MI | UF | UD)                                           \
    X(Atanh, UE | MI | UF | UD)                                          \
    X(AvgPool, 0)                                                        \
    X(BatchMatMul, 0)                                                    \
    X(BatchMatMulV2, 0)                                                  \
    X(BatchMatMulV3, 0)                                                  \
    X(BatchToSpace, VP)                                                  \
    X(BatchToSpaceND, VP)                                                \
    X(BiasAdd, 0)                                                        \
    X(BiasAddV1, 0)                                                      \
    X(Bitcast, 0)                                                        \
    X(BroadcastTo, 0)                                                    \
    X(Cast, CL)                                                          \
    X(Ceil, UE | MI | UF | UH | UD)                                      \
    X(CheckNumerics, VS | VO | VP | UE)                                  \
    X(ComplexAbs, UE)                                                    \
    X(Concat, 0)                                                         \
    X(ConcatV2, 0)                                                       \
    X(Conj, IV | UE)                                                     \
    X(ConjugateTranspose, 0)                                             \
    X(Const, 0)                                                          \
    X(ControlTrigger, CF)                                                \
    X(Conv2D, 0)                                                         \
    X(Conv3D, 0)                                                         \
    X(Cos, UE | UF | UH | UD)                                            \
    X(Cosh, UE | UF | UD)                                                \
    X(DebugGradientIdentity, VS | VO | VP | UE)                          \
    X(DeepCopy, VS | VO | VP | UE)                                       \
    X(DepthToSpace, VP | BG)                                             \
    X(DepthwiseConv2dNative, 0)                                          \
    X(Digamma, UE)                                                       \
    X(Div, 0)                                                            \
    X(DivNoNan, 0)                                                       \
    X(Elu, UE | MI | UF | UH | UD)                                       \
    X(Enter, VS | VO | VP | UE | FR | CF)                                \
    X(Equal, 0)                                                          \
    X(Erf, UE | MI)                                                      \
    X(Erfc, UE | MD)                                                     \
    X(Exit, VS | VO | VP | UE | FR | CF)                                 \
    X(Exp, UE | MI | UF | UH | UD)                                       \
    X(ExpandDims, VO | VP | BG)                                          \
    X(Expm1, UE | MI | UF | UH | UD)                                     \
    X(Floor, UE | MI | UF | UH | UD)                                     \
    X(FloorDiv, 0)                                                       \
    X(FusedBatchNorm, 0)                                                 \
    X(FusedBatchNormV2, 0)                                               \
    X(FusedBatchNormV3, 0)                                               \
    X(Gather, 0)                                                         \
    X(GatherV2, 0)                                                       \
    X(Greater, 0)                                                        \
    X(GreaterEqual, 0)                                                   \
    X(Identity, VS | VO | VP | UE | BG)                                  \
    X(IdentityN, 0)                                                      \
    X(Imag, 0)                                                           \
    X(Inv, UE | UF | UH | UD)                                            \
    X(Invert, IV | UE)                                                   \
    X(InvertPermutation, 0)                                             \
    X(IsFinite, CL)                                                      \
    X(IsInf, CL)                                                         \
    X(IsNan, CL)                                                         \
    X(Less, 0)                                                           \
    X(LessEqual, 0)                                                      \
    X(Lgamma, UE)                                                        \
    X(Log, UE | MI | UF | UH | UD)                                       \
    X(Log1p, UE | MI | UF | UH | UD)                                     \
    X(LogSoftmax, 0)                                                     \
    X(LogicalNot, IV | UE)                                               \
    X(LoopCond, CF)                                                      \
    X(MatMul, 0)                                                         \
    X(Max, 0)                                                            \
    X(MaxPool, 0)                                                        \
    X(MaxPool3D, 0)                                                      \
    X(MaxPoolV2, 0)                                                      \
    X(Merge, CF)                                                         \
    X(Min, 0)                                                            \
    X(Mul, 0)                                                            \
    X(MulNoNan, 0)                                                       \
    X(Neg, IV | UE | MD | UF | UH | UD)                                  \
    X(NextIteration, FR | CF)                                            \
    X(NotEqual, 0)                                                       \
    X(Pack, 0)                                                           \
    X(Placeholder, 0)                                                    \
    X(PlaceholderV2, 0)                                                  \
    X(PlaceholderWithDefault, 0)                                         \
    X(Pow, 0)                                                            \
    X(PreventGradient, VS | VO | VP | UE | BG)                           \
    X(Print, VS | VO | VP | UE)                                          \
    X(Rank, 0)                                                           \
    X(ReadVariableOp, 0)                                                 \
    X(RealDiv, 0)                                                        \
    X(Reciprocal, IV | UE | UF | UH | UD)                                \
    X(RefEnter, FR | CF)                                                 \
    X(RefExit, FR | CF)                                                  \
    X(RefIdentity, VS | VO | VP | UE)                                    \
    X(RefMerge, CF)                                                      \
    X(RefNextIteration, FR | CF)                                         \
    X(RefSwitch, CF | SW)                                                \
    X(Relu, UE | MI | UF | UH | UD)                                      \
    X(Relu6, UE | MI | UF | UH | UD)                                     \
    X(Reshape, VO | VP | BG)                                             \
    X(ResourceGather, 0)                                                 \
    X(Reverse, VP | BG)                                                  \
    X(ReverseV2, VP | BG)                                                \
    X(Rint, UE | MI | UF | UD)                                           \
    X(Roll, VP)                                                          \
    X(Round, UE | UF | UH | UD)                                          \
    X(Rsqrt, UE | MD | UF | UH | UD)                                     \
    X(Selu, UE | MI | UF | UH | UD)                                      \
    X(Shape, 0)                                                          \
    X(ShapeN, 0)                                                         \
    X(Sigmoid, UE | MI | UF | UH | UD)                                   \
    X(Sign, UE | MI)                                                     \
    X(Sin, UE | UF | UH | UD)                                            \
    X(Sinh, UE | MI | UF | UD)                                           \
    X(Size, 0)                                                           \
    X(Slice, 0)                                                          \
    X(Snapshot, VS | VO | VP | UE | BG)                                  \
    X(Softmax, 0)                                                        \
    X(Softplus, UE | MI)                                                 \
    X(Softsign, UE | MI)                                                 \
    X(SpaceToBatch, VP)                                                  \
    X(SpaceToBatchND, VP)                                                \
    X(SpaceToDepth, VP | BG)                                             \
    X(SparseMatMul, 0)                                                   \
    X(SparseSegmentMean, 0)                                              \
    X(SparseSegmentMeanWithNumSegments, 0)                               \
    X(SparseSegmentSqrtN, 0)                                             \
    X(SparseSegmentSqrtNWithNumSegments, 0)                              \
    X(SparseSegmentSum, 0)                                               \
    X(SparseSegmentSumWithNumSegments, 0)                                \
    X(Split, 0)                                                          \
    X(SplitV, 0)                                                         \
    X(Sqrt, UE | MI | UF | UH | UD)                                      \
    X(Square, UE | UF | UH | UD)                                         \
    X(SquaredDifference, 0)                                              \
    X(Squeeze, VO | VP | BG)                                             \
    X(StopGradient, VS | VO | VP | UE | BG)                              \
    X(StridedSlice, 0)                                                   \
    X(Sub, 0)                                                            \
    X(Switch, CF | SW)                                                   \
    X(Tan, UE | UF | UD)                                                 \
    X(Tanh, UE | MI | UF | UH | UD)                                      \
    X(Tile, 0)                                                           \
    X(Transpose, VP | BG)                                                \
    X(TruncateDiv, 0)                                                    \
    X(Unique, 0)                                                         \
    X(UniqueV2, 0)                                                       \
    X(Xdivy, 0)                                                          \
    X(_SwitchN, CF | SW)                                                 \
    X(_XlaMerge, CF)

#define GN__AR_OP_ENUM(name, props) GN__AR_OP_##name,
enum { GN__AR_OP_NONE = 0, GN__AR_OPS(GN__AR_OP_ENUM) GN__AR_NOPS };
#undef GN__AR_OP_ENUM

enum {
    GN__AR_IV = 1u << 0,
    GN__AR_VS = 1u << 1,
    GN__AR_VO = 1u << 2,
    GN__AR_VP = 1u << 3,
    GN__AR_UE = 1u << 4,
    GN__AR_MI = 1u << 5,
    GN__AR_MD = 1u << 6,
    GN__AR_CL = 1u << 7,
    GN__AR_FR = 1u << 8,
    GN__AR_CF = 1u << 9,
    GN__AR_SW = 1u << 10,
    GN__AR_UF = 1u << 11,
    GN__AR_UH = 1u << 12,
    GN__AR_UD = 1u << 13,
    GN__AR_BG = 1u << 14,
};

/* DataType numbers used here */
enum {
    GN__AR_F32 = 1, GN__AR_F64 = 2, GN__AR_I32 = 3, GN__AR_U8 = 4, GN__AR_I16 = 5, GN__AR_I8 = 6,
    GN__AR_STRING = 7, GN__AR_C64 = 8, GN__AR_I64 = 9, GN__AR_BOOL = 10, GN__AR_BF16 = 14,
    GN__AR_C128 = 18, GN__AR_F16 = 19, GN__AR_RESOURCE = 20, GN__AR_VARIANT = 21,
};

/* A symbolic shape: rank -1 when unknown; dims >= 0 known, <= -2 a symbol (two
 * equal symbols are provably equal sizes), never -1. */
typedef struct gn__ar_shape {
    int32_t rank;
    const int64_t *d;
} gn__ar_shape;

typedef struct gn__ar_info {
    int32_t dtype;      /* 0 unknown */
    gn__ar_shape s;
} gn__ar_info;

/* per-node flags */
enum {
    GN__AR_INQ = 1u << 0,        /* in the worklist */
    GN__AR_SPLIT_DONE = 1u << 1, /* hoist_cwise_unary_chains handled this Split */
    GN__AR_HOISTED = 1u << 2,    /* hoist_common_factor rewrote this aggregation */
    GN__AR_FUSED = 1u << 3,      /* part of an _UnaryOpsComposition chain */
    GN__AR_AOR_SEEN = 1u << 4,   /* in an add_ops_rewrite group already looked at */
    GN__AR_MB_SEEN = 1u << 5,    /* in a minimize_broadcasts group already looked at */
};

typedef struct gn__ar {
    gn__pass_ctx *c;
    gn_graph *g;
    gn__arena arena;        /* symbolic shapes, scratch that lives for the pass */
    bool use_shapes;        /* shape inference succeeded */
    bool has_v1_cf;         /* the graph has Enter/Exit/Switch/Merge: new Consts get anchored */
    bool allow_non_diff;    /* _UnaryOpsComposition allowed (not a function being differentiated) */
    bool aggressive;
    bool enabled[GN__AR_NPAT];
    char pid[GN__AR_NPAT][64];   /* "arithmetic.<pattern>" */

    uint32_t cap;           /* per-node arrays */
    uint8_t *flags;
    uint64_t *refused;      /* patterns whose refusal was recorded for the node */
    uint32_t *n_info;
    gn__ar_info **info;     /* per node: n_info[id] outputs, or NULL (unknown) */
    uint8_t *tc;            /* per node: its "T" attr as dtype + 2, 1: none, 0: not looked up
                               (the most asked attr; every attr write here resets it) */
    int64_t next_sym;

    uint16_t *opc;          /* op code by interned op string id; 0xffff: not looked up */
    uint32_t opc_cap;

    gn_id *stack;           /* the worklist (Grappler's SetVector: push back, pop back) */
    uint32_t n_stack, cap_stack;
    gn_id *dead;            /* scratch for the dead-node cascade */
    uint32_t n_dead, cap_dead;

    gn__buf name;           /* scratch for new names */
    uint64_t rewrites;
} gn__ar;

/* What a stage did with the node it was given. */
typedef struct gn__ar_res {
    bool stop;              /* the pipeline stops for this node */
    bool repl;              /* consumers of output 0 go to `to` */
    gn__edge to;
} gn__ar_res;

typedef gn_status (*gn__ar_stage_fn)(gn__ar *a, gn_id n, gn__ar_res *r);

/* ---- stages (arithmetic_stages_*.c), one per pattern ------------------------------ */
gn_status gn__ar_add_ops_rewrite(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_fold_conj_transpose(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_fold_mul_conv(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_fold_transpose_matmul(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_hoist_common_factor(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_minimize_broadcasts(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_redundant_transpose(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_involution(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_redundant_bitcast(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_redundant_cast(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_replace_pack_with_tile_reshape(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_replace_mul_with_tile(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_reduce_upsampling_dims(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_redundant_reshape(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_negation(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_replace_mul_with_square(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_logical_not(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_reorder_cast_like(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_reorder_reshape_unary(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_simplify_aggregation(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_hoist_cwise_unary_chains(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_sqrt_div_to_rsqrt_mul(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_idempotent(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_convert_pow(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_convert_log1p(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_convert_log_softmax(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_max_min_of_monotonic(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_convert_expm1(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_unary_ops_composition(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_stack_slice(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_simplify_embedding_lookup(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_remove_cast_into_segment(gn__ar *a, gn_id n, gn__ar_res *r);
gn_status gn__ar_fuse_squared_diff(gn__ar *a, gn_id n, gn__ar_res *r);

/* ---- helpers (arithmetic_util.c) --------------------------------------------------- */
static inline gn__node *gn__ar_node(const gn__ar *a, gn_id id) { return &a->g->nodes[id]; }
static inline gn__edge gn__ar_in(const gn__ar *a, gn_id id, uint32_t k) { return a->g->nodes[id].in[k]; }
static inline bool gn__ar_preserved(const gn__ar *a, gn_id id)
{
    return (a->g->nodes[id].flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) != 0;
}
static inline bool gn__ar_same_device(const gn__ar *a, gn_id x, gn_id y)
{
    return a->g->nodes[x].device == a->g->nodes[y].device;
}
/* Op code of a node (GN__AR_OP_NONE for ops the pass does not know) and its
 * properties. The code is cached per interned op string. */
uint32_t gn__ar_op_slow(gn__ar *a, gn_id id);
static inline uint32_t gn__ar_op(gn__ar *a, gn_id id)
{
    uint32_t o = a->g->nodes[id].op;
    if (o < a->opc_cap && a->opc[o] != 0xffff) return a->opc[o];
    return gn__ar_op_slow(a, id);
}
uint32_t gn__ar_props(gn__ar *a, gn_id id);
uint32_t gn__ar_op_props(uint32_t op);
/* Checks the op table is sorted (tests). */
bool gn__ar_op_table_sorted(void);

/* Records a rewrite (marks the pass changed) / a refusal (once per node and pattern). */
void gn__ar_rewrote(gn__ar *a, int pat, gn_id n, const char *fmt, ...) GN__PRINTF(4, 5);
void gn__ar_refuse(gn__ar *a, int pat, gn_id n, const char *fmt, ...) GN__PRINTF(4, 5);

/* Worklist */
gn_status gn__ar_push(gn__ar *a, gn_id id);
/* Per-node arrays follow g->n_nodes (call after adding nodes). */
gn_status gn__ar_grow(gn__ar *a);

/* Attribute readers */
int32_t gn__ar_type_attr(const gn__ar *a, gn_id id, const char *key);   /* 0 when absent */
/* Drops what gn__ar_type_attr remembers of node id (before any write of its attrs). */
void gn__ar_forget_type(gn__ar *a, gn_id id);
int64_t gn__ar_int_attr(const gn__ar *a, gn_id id, const char *key, int64_t dflt);
bool gn__ar_bool_attr(const gn__ar *a, gn_id id, const char *key, bool dflt);
/* Output dtype k of a node: inferred, else from its op definition; 0 unknown. */
int32_t gn__ar_dtype(gn__ar *a, gn__edge e);

/* Attribute writers (values built in the graph's own blob). */
gn_status gn__ar_set_type(gn__ar *a, gn_id id, const char *key, int32_t dtype);
gn_status gn__ar_set_bool(gn__ar *a, gn_id id, const char *key, bool v);
gn_status gn__ar_set_int(gn__ar *a, gn_id id, const char *key, int64_t v);
gn_status gn__ar_set_tensor(gn__ar *a, gn_id id, const char *key, const gn__tensor *t);
gn_status gn__ar_set_strings(gn__ar *a, gn_id id, const char *key, const char *const *s, uint32_t n);

/* Names: Grappler's "<scope>/ArithmeticOptimizer/<Stage>_<name>[_<suffix>]", made
 * unique with "_<k>". The result is valid until the next call. */
const char *gn__ar_name(gn__ar *a, gn_id base, const char *stage, const char *suffix);
bool gn__ar_name_taken(gn__ar *a, gn_id base, const char *stage, const char *suffix);

/* New nodes (per-node arrays grown, node pushed on the worklist). */
gn_status gn__ar_add_node(gn__ar *a, const char *name, const char *op, gn_id device_of, gn_id *out);
/* A copy of src (op, device, attrs, data and control inputs) named name. */
gn_status gn__ar_copy_node(gn__ar *a, gn_id src, const char *name, gn_id *out);
/* A Const node holding t, on device_of's device; anchored to `anchor` (a data
 * input's producer) with a control edge when the graph has v1 control flow. */
gn_status gn__ar_add_const(gn__ar *a, const char *name, const gn__tensor *t, gn_id device_of, gn__edge anchor,
                           gn_id *out);
/* Control dependency of `id` on the producer of e, through an Identity when the
 * producer is a Switch (a control edge from a Switch is not allowed). */
gn_status gn__ar_add_ctrl_on(gn__ar *a, gn_id id, gn__edge e);
/* Copies the control inputs of src onto dst (no duplicates). */
gn_status gn__ar_forward_ctrl(gn__ar *a, gn_id dst, gn_id src);
gn_status gn__ar_set_op(gn__ar *a, gn_id id, const char *op);
/* Input edits that remember the old producer: once the stage is done, the
 * driver deletes the nodes a rewrite left without consumers (gn__ar_removable)
 * with gn__ar_flush_dead. */
gn_status gn__ar_set_input(gn__ar *a, gn_id id, uint32_t slot, gn__edge e);
gn_status gn__ar_maybe_dead(gn__ar *a, gn_id id);
/* Deletes the queued nodes that have no consumers left, then their producers
 * that lost their last consumer, and so on (an explicit stack: no recursion). */
gn_status gn__ar_flush_dead(gn__ar *a);
/* Rewires the consumers of n:0 (data) and of n (control) to `to` and queues them. */
gn_status gn__ar_replace(gn__ar *a, gn_id n, gn__edge to);

/* Consumers */
bool gn__ar_single_consumer_node(const gn__ar *a, gn_id id);   /* one node, data or control */
/* Can the node be removed from a rewritten pattern once unused (not preserved,
 * known op, no side effects)? */
bool gn__ar_removable(gn__ar *a, gn_id id);

/* Grappler's op classes (op_types.cc), with the attr-dependent cases. */
bool gn__ar_is_add(gn__ar *a, gn_id id);              /* Add/AddV2, not string */
bool gn__ar_is_aggregate(gn__ar *a, gn_id id);        /* AddN, Add/AddV2 not string */
bool gn__ar_value_preserving(gn__ar *a, gn_id id);    /* IsValuePreserving */
bool gn__ar_vaos(gn__ar *a, gn_id id);                /* IsValueAndOrderAndShapePreserving */
bool gn__ar_unary_elementwise(gn__ar *a, gn_id id);   /* IsUnaryElementWise */
bool gn__ar_free_of_side_effects(gn__ar *a, gn_id id);
bool gn__ar_idempotent(gn__ar *a, gn_id id);          /* IsIdempotent */

/* Constants: a Const that is not fed (not preserved). *t is decoded, or
 * borrows the value's bytes when they have the tensor's layout: read only
 * (release with gn__tensor_release). */
bool gn__ar_const_node(gn__ar *a, gn_id id);
bool gn__ar_const_tensor(gn__ar *a, gn_id id, gn__tensor *t);
/* All elements equal, with value re + i*im; false for an empty tensor and for
 * dtypes not handled. */
bool gn__ar_all_equal(const gn__tensor *t, double *re, double *im);
/* gn__ar_const_tensor and gn__ar_all_equal in one, without expanding a value
 * given in the short form; *dtype: the value's dtype (0 when not a constant). */
bool gn__ar_const_all_equal(gn__ar *a, gn_id id, int32_t *dtype, double *re, double *im);
bool gn__ar_float_dtype(int32_t dt);  /* half, bfloat16, float, double */
/* Integer values of a small int32/int64 Const, at most max; false otherwise. */
bool gn__ar_const_ints(gn__ar *a, gn_id id, int64_t *v, int32_t max, int32_t *n);

/* Symbolic shapes */
const gn__ar_info *gn__ar_info_of(const gn__ar *a, gn__edge e);
gn_status gn__ar_set_info(gn__ar *a, gn_id id, int32_t dtype, const gn__ar_shape *s);
bool gn__ar_shape_fully_known(const gn__ar_shape *s);   /* no symbols */
bool gn__ar_shape_equal(const gn__ar_shape *x, const gn__ar_shape *y);
/* TensorFlow's ShapesBroadcastable / ShapeAfterBroadcast on symbolic shapes:
 * aligned dims equal or one of them 1. out->d points into the pass arena. */
bool gn__ar_broadcastable(const gn__ar_shape *x, const gn__ar_shape *y);
bool gn__ar_broadcast(gn__ar *a, const gn__ar_shape *x, const gn__ar_shape *y, gn__ar_shape *out);
/* TensorFlow's CompareSymbolicallyShapedTensorSizes: x provably smaller. */
bool gn__ar_shape_smaller(const gn__ar_shape *x, const gn__ar_shape *y);
/* Element-count estimate for cost comparisons (symbols count 1024 each). */
double gn__ar_shape_cost(const gn__ar_shape *s);
const char *gn__ar_shape_str(const gn__ar_shape *s, char *buf, size_t n);
/* Builds the symbolic shapes of every node from inferred shapes. */
gn_status gn__ar_build_shapes(gn__ar *a, const gn_id *order, uint32_t n);

/* Device helpers */
bool gn__ar_on_cpu(const gn__ar *a, gn_id id);          /* device names a CPU (Grappler's NodeIsOnCpu) */
bool gn__ar_on_cpu_or_gpu(const gn__ar *a, gn_id id);

#endif
