/* Constant folding (docs/reference_grappler.md §3.6), private to
 * src/optimizer/passes/constfold*.c.
 *
 * One invocation of the pass:
 *   1. infers shapes once (the table is taken over from the graph, so that the
 *      rewrites below, which would drop it, keep using it: a rewrite that
 *      changes what a node computes marks the node stale instead);
 *   2. visits the live nodes once in topological order; each visit tries, in
 *      Grappler's order, materialization (Shape, Size, Rank, ShapeN,
 *      BroadcastGradientArgs, reduction indices, Fill/ZerosLike/OnesLike),
 *      folding (evaluation with the CPU kernels' reference path), then the
 *      simplifications of 3.6.6, first hit wins;
 *   3. every rewrite queues the nodes whose rules it may have enabled (the
 *      node itself, its consumers, the nodes it created), and the queue is
 *      drained to a fixed point after each visit;
 *   4. when the graph has preserved nodes (fetches known) or is a function
 *      body, nodes left without consumers that are not preserved are dropped,
 *      as Grappler's FoldGraph does.
 * Nothing here recurses over the graph. */
#ifndef GN_OPTIMIZER_PASSES_CONSTFOLD_IMPL_H
#define GN_OPTIMIZER_PASSES_CONSTFOLD_IMPL_H

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"

/* The pattern ids, in the order of the table (gn__patterns_constfold). */
#define CF_PATTERNS(X)                                                                                              \
    X(FOLD, "fold", "evaluate a node whose inputs are all constants (CPU reference kernels) into Const nodes")      \
    X(FOLD_MERGE, "fold_merge", "Merge with a constant input: constants for its value and its value_index")         \
    X(MAT_SHAPE, "materialize_shape", "Shape/Size/Rank of a statically known shape become a Const")                 \
    X(MAT_SHAPE_N, "materialize_shape_n", "ShapeN outputs of statically known shapes become Consts")                \
    X(MAT_BCAST, "materialize_broadcast_grad_args", "BroadcastGradientArgs of known shapes become Consts")          \
    X(MAT_REDUCTION, "materialize_reduction_indices", "full reductions get constant indices [0..rank)")             \
    X(MAT_FILL, "materialize_fill", "Fill/ZerosLike/OnesLike of a known shape become a compressed Const")          \
    X(REMOVE_SPLIT, "remove_split", "Split/SplitV with num_split=1 become Identity")                                \
    X(REMOVE_TRANSPOSE, "remove_transpose", "Transpose that moves no dimension larger than 1 becomes Identity")     \
    X(REMOVE_SHUFFLE, "remove_random_shuffle", "RandomShuffle of a scalar or of a leading dimension 1 is Identity") \
    X(REMOVE_REVERSE, "remove_reverse", "ReverseV2 along dimensions of size 1 only becomes Identity")             \
    X(REMOVE_SLICE, "remove_slice", "Slice of the whole input becomes Identity")                                    \
    X(REMOVE_STRIDED_SLICE, "remove_strided_slice", "StridedSlice of the whole input becomes Identity")            \
    X(REMOVE_TILE, "remove_tile", "Tile with all multiples 1 becomes Identity")                                     \
    X(REMOVE_PAD, "remove_pad", "Pad/PadV2 with all paddings 0 becomes Identity")                                   \
    X(REMOVE_SQUEEZE, "remove_squeeze", "Squeeze of an input with no dimension 1 becomes Identity")                \
    X(PACK, "pack_to_expand_dims", "Pack of one input becomes ExpandDims")                                          \
    X(ENTER, "move_constants_past_enter", "consumers of a constant Enter read a copy of the constant in the frame") \
    X(SWITCH, "switch_same_predicate", "Switch(p, p): consumers read constants false/true")                          \
    X(REDUCTION, "simplify_reduction", "reductions over no or size-1 dimensions become Identity or Squeeze")        \
    X(RESHAPE, "remove_reshape", "Reshape to the input's own shape becomes Identity")                               \
    X(MUL_BY_ONE, "mul_by_one", "x*1 and 1*y forward the other operand (shapes checked)")                           \
    X(ADD_ZERO, "add_zero", "x+0, 0+y and x-0 forward the other operand (shapes checked)")                          \
    X(SUB_FROM_ZERO, "sub_from_zero", "0-y becomes Neg(y)")                                                         \
    X(DIV_BY_ONE, "div_by_one", "x/1 forwards x (shapes checked)")                                                  \
    X(ONE_DIV, "one_div", "1/y becomes Reciprocal(y) (floating and complex types)")                                 \
    X(OR_TRUE, "logical_or_true", "x OR true becomes a constant true of the output shape")                         \
    X(MUL_BY_ZERO, "mul_by_zero", "x*0, 0*y and MatMul with a zero operand become zeros (0/y only AGGRESSIVE)")     \
    X(DIV_TO_RECIP, "div_to_reciprocal_mul", "division by a constant becomes a multiplication by its reciprocal")  \
    X(PUSH_DOWN, "constant_push_down", "move constants down Add/Sub and Mul/Div trees so that they meet and fold")  \
    X(MUL_CONV, "mul_conv_push_down", "a constant Mul after Conv2D/Conv3D moves onto the constant filter")          \
    X(IDENTITY_N, "identity_n_constants", "consumers of IdentityN outputs that are constants read them directly")  \
    X(PARTIAL_ADDN, "partial_addn", "constant inputs of AddN/AccumulateNV2 are summed in a foldable AddN")          \
    X(MERGE_CONCAT, "merge_concat", "ConcatV2 into a ConcatV2 along the same axis is inlined")                     \
    X(PARTIAL_CONCAT, "partial_concat", "runs of constant Concat inputs are joined in a foldable ConcatV2")         \
    X(PUSH_DOWN_BIAS, "bias_add_push_down", "constant bias vectors of BiasAdd/Add chains are brought together")     \
    X(CASE, "case_constant_index", "Case with a constant branch index becomes a PartitionedCall of that branch")    \
    X(SELECT, "select_constant_predicate", "Select/SelectV2 with an all-true/all-false predicate forwards a branch")\
    X(VAR_UPDATE, "redundant_variable_update", "variable updates by 0 (add/sub) or 1 (mul/div) are dropped")       \
    X(DROP, "drop_unused", "nodes left without consumers that are not preserved are removed")

#define CF_ENUM(E, id, help) CF_P_##E,
enum { CF_PATTERNS(CF_ENUM) CF_NPAT };
#undef CF_ENUM

/* Per-node flags of the pass (cf_state.fl). */
enum {
    CF_PENDING = 1u << 0,   /* in the queue */
    CF_STALE = 1u << 1,     /* its outputs changed meaning: inferred shapes no longer apply */
    CF_NOFOLD = 1u << 2,    /* folding was tried and failed: do not retry */
    CF_NOSIMP = 1u << 3,    /* result too large: Grappler's nodes_to_not_simplify */
    CF_ZCHK = 1u << 4,      /* CF_ZERO / CF_ONE computed */
    CF_ZERO = 1u << 5,      /* a Const whose elements are all 0 */
    CF_ONE = 1u << 6,       /* a Const whose elements are all 1 */
    CF_NEW = 1u << 7,       /* created by this pass */
    CF_REPORTED = 1u << 8,  /* a refusal of fold was already recorded */
    CF_DEFER = 1u << 9,     /* listed to be folded over its input (cf_state.deferred) */
    CF_NOINPLACE = 1u << 10, /* not to be folded over its input: the usual way */
};

/* Op kinds the pass reasons about (cf_kind); K_OTHER for everything else. */
typedef enum cf_kind {
    K_OTHER = 0,
    K_ACCUMULATE_N, K_ADD, K_ADDN, K_ADDV2, K_ALL, K_ANY, K_ASSIGN_ADD, K_ASSIGN_ADD_VAR, K_ASSIGN_SUB,
    K_ASSIGN_SUB_VAR, K_BATCH_MATMUL, K_BATCH_MATMUL_V2, K_BIAS_ADD, K_BIAS_ADD_V1, K_BCAST_GRAD_ARGS, K_CASE,
    K_CONCAT, K_CONCAT_V2, K_CONST, K_CONV2D, K_CONV3D, K_DIV, K_ENTER, K_EUCLIDEAN_NORM, K_EXIT, K_FAKE_PARAM,
    K_FILL, K_FLOOR_DIV, K_HOST_CONST, K_IDENTITY, K_IDENTITY_N, K_LOGICAL_AND, K_LOGICAL_OR, K_LOOP_COND,
    K_MATMUL, K_MAX, K_MEAN, K_MERGE, K_MIN, K_MUL, K_MUL_NO_NAN, K_NEXT_ITERATION, K_ONES_LIKE, K_PACK, K_PAD,
    K_PAD_V2, K_PLACEHOLDER, K_PLACEHOLDER_V2, K_PLACEHOLDER_WITH_DEFAULT, K_PROD, K_RANDOM_SHUFFLE, K_RANK,
    K_REAL_DIV, K_REF_ENTER, K_REF_EXIT, K_REF_IDENTITY, K_REF_MERGE, K_REF_NEXT_ITERATION, K_REF_SWITCH,
    K_RESHAPE, K_RES_SCATTER_ADD, K_RES_SCATTER_DIV, K_RES_SCATTER_MUL, K_RES_SCATTER_ND_ADD,
    K_RES_SCATTER_ND_DIV, K_RES_SCATTER_ND_MUL, K_RES_SCATTER_ND_SUB, K_RES_SCATTER_SUB, K_REVERSE_V2,
    K_SCATTER_ADD, K_SCATTER_DIV, K_SCATTER_MUL, K_SCATTER_ND_ADD, K_SCATTER_ND_DIV, K_SCATTER_ND_MUL,
    K_SCATTER_ND_SUB, K_SCATTER_SUB, K_SELECT, K_SELECT_V2, K_SHAPE, K_SHAPE_N, K_SHUFFLE, K_SIZE, K_SLICE,
    K_SPARSE_MATMUL, K_SPLIT, K_SPLIT_V, K_SQUEEZE, K_STRIDED_SLICE, K_SUB, K_SUM, K_SWITCH, K_TILE,
    K_TRANSPOSE, K_TRUNCATE_DIV, K_XDIVY, K_XLA_MERGE, K_ZEROS_LIKE,
    K_COUNT
} cf_kind;

typedef struct cf_state {
    gn__pass_ctx *c;
    gn_graph *g;
    gn__shape_table *st;        /* taken over from g after inference; NULL without shapes */
    uint32_t st_nodes, st_live; /* the graph's node counts when st was inferred */
    uint16_t *fl;               /* per node, grown with the graph */
    uint32_t cap_fl;
    gn__tinfo *xinfo;           /* per node: the shape of a Const the pass created (dtype 0: none) */
    uint32_t cap_xinfo;
    gn__arena arena;            /* scratch for the life of the invocation */
    gn_id *q;                   /* FIFO of nodes to (re)visit */
    uint32_t qhead, qtail, qcap;
    bool has_fetch;             /* preserved nodes exist (or a function body): unused nodes may go */
    bool use_snapshot;          /* the graph mutates inputs in place: forward through Snapshot */
    bool aggressive;            /* toggle AGGRESSIVE */
    bool en[CF_NPAT];           /* pattern enabled */
    uint64_t steps, max_steps;  /* visits, and the cap that guarantees termination */
    uint8_t *kc;                /* op kind per interned op string (0xff: not looked up) */
    uint32_t cap_kc;
    gn_id *scratch_ids;         /* reusable buffer */
    uint32_t cap_scratch;
    char *slab;                 /* graph memory that fold results are carved from */
    size_t slab_left;
    size_t out_bytes;           /* fold results put in graph memory so far */
    uint64_t alias_budget;      /* node visits left to in-place checks (constfold_fold.c) */
    bool no_copy;               /* no copy to roll back to after a result written over its
                                   input (out of memory): the pass stops where it is */
    gn_id *deferred;            /* folds over their inputs, done together (constfold_fold.c) */
    uint32_t n_deferred, cap_deferred;
} cf_state;

/* ---- constfold_util.c: bookkeeping ----------------------------------------------- */
extern const char *const gn__cf_pattern_ids[CF_NPAT];
cf_kind gn__cf_kind(cf_state *s, gn_id id);
/* Grows the per-node arrays to cover every node id; false on OOM. */
bool gn__cf_reserve(cf_state *s);
void gn__cf_enqueue(cf_state *s, gn_id id);
/* Queues every data and control consumer of id. */
void gn__cf_enqueue_consumers(cf_state *s, gn_id id);
/* The node changed what it computes: forget its inferred output shapes. */
void gn__cf_mark_stale(cf_state *s, gn_id id);
/* Report helpers (no-ops without a report). */
void gn__cf_rewrote(cf_state *s, int pat, gn_id id, const char *fmt, ...) GN__PRINTF(4, 5);
void gn__cf_refused(cf_state *s, int pat, gn_id id, const char *fmt, ...) GN__PRINTF(4, 5);

/* ---- constfold_util.c: facts about nodes ------------------------------------------ */
/* A Const (or HostConst) that is not preserved (a fed node is not a constant). */
bool gn__cf_really_const(cf_state *s, gn_id id);
bool gn__cf_is_const_op(cf_state *s, gn_id id);
/* What the pass knows about output k of node id: dtype 0 / rank -1 when nothing. */
gn__tinfo gn__cf_out_info(cf_state *s, gn_id id, uint32_t k);
static inline gn__tinfo gn__cf_in_info(cf_state *s, gn_id id, uint32_t slot)
{
    const gn__node *n = gn__node_at(s->g, id);
    return gn__cf_out_info(s, n->in[slot].node, n->in[slot].index);
}
/* The value tensor of a Const node (NULL if absent or not a tensor). */
const Tensorflow__TensorProto *gn__cf_const_value(const cf_state *s, gn_id id);
/* Decodes the value of a really-constant node that is an int32/int64 tensor of at
 * most max elements into vals (int64); false otherwise. */
bool gn__cf_const_ints(cf_state *s, gn_id id, int64_t **vals, int64_t *n, int64_t max);
/* Element count of the Const's value (from its shape), -1 when unknown. */
int64_t gn__cf_const_numel(const cf_state *s, gn_id id);
/* IsZeros / IsOnes of Grappler (cached for Const nodes). */
bool gn__cf_is_zeros(cf_state *s, gn_id id);
bool gn__cf_is_ones(cf_state *s, gn_id id);
/* The dtype of node id's output: attr T, attr dtype, bool for LogicalAnd/Or, else inferred. */
int32_t gn__cf_node_dtype(cf_state *s, gn_id id);
bool gn__cf_has_tpu_attr(const gn_graph *g, gn_id id);

/* ---- constfold_util.c: building ------------------------------------------------------ */
Tensorflow__AttrValue *gn__cf_attr_type(cf_state *s, int32_t dtype);
Tensorflow__AttrValue *gn__cf_attr_int(cf_state *s, int64_t v);
Tensorflow__AttrValue *gn__cf_attr_tensor(cf_state *s, Tensorflow__TensorProto *t);
/* A list(int) attr holding v[0..n). */
Tensorflow__AttrValue *gn__cf_attr_int_list(cf_state *s, const int64_t *v, int64_t n);
Tensorflow__AttrValue *gn__cf_attr_func(cf_state *s, const Tensorflow__NameAttrList *f);
/* Encodes t as Grappler's CreateNodeDef does (typed repeated field truncated after
 * the last change when more than 4 elements, else tensor_content); *encoded gets the
 * encoded payload size. */
gn_status gn__cf_encode(cf_state *s, const gn__tensor *t, Tensorflow__TensorProto **out, size_t *encoded);
/* The same; share: t's bytes are those of another constant of the graph (kept
 * for the graph's life, never changed), and the typed field may point at them
 * instead of copying them (the same encoded bytes either way). */
gn_status gn__cf_encode_shared(cf_state *s, const gn__tensor *t, bool share, Tensorflow__TensorProto **out,
                               size_t *encoded);

/* The encoding gn__cf_encode_shared gives a float or double result of n
 * elements (4 < n < INT32_MAX) at data, naturally aligned, which share=true
 * points at: made before the bytes hold the result (a result written over
 * its input), with all n elements; gn__cf_encode_view_finish then keeps the
 * count the values call for, without allocating. NULL when out of memory. */
Tensorflow__TensorProto *gn__cf_encode_view(cf_state *s, int32_t dt, int32_t rank, const int64_t *dims, void *data,
                                            int64_t n);
void gn__cf_encode_view_finish(Tensorflow__TensorProto *p);
/* A TensorProto holding one value repeated over shape (Grappler's compressed form);
 * GN_ERR_UNSUPPORTED for dtypes that have none. */
gn_status gn__cf_fill_proto(cf_state *s, int32_t dtype, double value, const gn__shape *shape,
                            Tensorflow__TensorProto **out);
/* One value (scalar) repeated over shape, in the typed field (half/bfloat16 in
 * half_val); GN_ERR_UNSUPPORTED for other dtypes. */
gn_status gn__cf_encode_single(cf_state *s, const gn__tensor *scalar, const gn__shape *shape,
                               Tensorflow__TensorProto **out);
/* Makes node id a Const holding value (dtype attr, value attr). keep_internal keeps
 * attrs whose name starts with '_' (EraseRegularNodeAttributes) else drops all. */
gn_status gn__cf_make_const(cf_state *s, gn_id id, int32_t dtype, Tensorflow__TensorProto *value, bool keep_internal);
/* Adds a new Const node "ConstantFolding/<base><suffix>" (made unique) on device dev. */
gn_status gn__cf_new_const(cf_state *s, const char *base, const char *suffix, uint32_t device, int32_t dtype,
                           Tensorflow__TensorProto *value, gn_id *out);
/* A node to hang a control dependency on instead of tensor e: e's producer, or for a
 * Switch an Identity anchor "ConstantFoldingCtrl/<switch>_<port>". */
gn_status gn__cf_ctrl_anchor(cf_state *s, gn__edge e, gn_id *out);
/* Turns data inputs [from, n_in) of id into control dependencies (anchored), placed
 * before its existing control inputs, in order. */
gn_status gn__cf_inputs_to_controls(cf_state *s, gn_id id, uint32_t from);
/* Reorders data inputs: new order given as a permutation of the old slots. */
gn_status gn__cf_permute_inputs(cf_state *s, gn_id id, const uint32_t *perm, uint32_t n);
/* Drops every attr (or those not starting with '_' when keep_internal). */
gn_status gn__cf_clear_attrs(cf_state *s, gn_id id, bool keep_internal);
/* ReplaceOperationWithIdentity / WithSnapshot: op Identity (Snapshot when asked and the
 * graph mutates in place) forwarding input k; other data inputs become control deps.
 * false (and nothing changed) when the dtype is unknown. */
gn_status gn__cf_to_identity(cf_state *s, gn_id id, uint32_t k, bool snapshot, bool *done);
/* ReplaceOperationWithConstant: value of the fully known output shape. */
gn_status gn__cf_to_constant(cf_state *s, gn_id id, double value, const gn__shape *shape, bool *done);
/* ReplaceOperationWithBroadcastTo: BroadcastTo(input k, Const(output shape)). */
gn_status gn__cf_to_broadcast(cf_state *s, gn_id id, uint32_t k, bool *done);
/* Consumers reading output port of id read `to` instead (data edges). */
gn_status gn__cf_rewire_port(cf_state *s, gn_id id, uint32_t port, gn__edge to);
/* Room for n ids in s->scratch_ids (grown as needed); NULL when memory is short. */
gn_id *gn__cf_scratch(cf_state *s, uint32_t n);

/* ---- constfold_fold.c ---------------------------------------------------------------- */
gn_status gn__cf_materialize(cf_state *s, gn_id id, cf_kind k, bool *done);
gn_status gn__cf_fold(cf_state *s, gn_id id, cf_kind k, bool *done);
/* Folds the listed folds over their inputs (fold_in_place) at once; the
 * caller drains the queue afterwards (their consumers are queued). */
gn_status gn__cf_fold_deferred(cf_state *s);

/* ---- constfold_simplify.c ------------------------------------------------------------ */
gn_status gn__cf_simplify(cf_state *s, gn_id id, cf_kind k, bool *done);

/* ---- shape helpers (constfold_util.c) ------------------------------------------------- */
/* Both fully known and equal. */
bool gn__cf_shape_same_known(const gn__shape *a, const gn__shape *b);
/* Broadcasting `other` onto x gives x's own shape (sound with unknown dims of x). */
bool gn__cf_broadcast_keeps(const gn__shape *x, const gn__shape *other);

#define CF_MAX_CONSTANT_SIZE ((size_t)10 * 1024 * 1024)
/* Node visits one run of the pass may spend checking that a result may be
 * written over its input (constfold_fold.c). */
#define CF_ALIAS_BUDGET ((uint64_t)1 << 24)
/* Results written over an input: at least this many bytes, and this many per
 * node of the graph (each is checked against every node's values, about as
 * costly per node as faulting in 16 bytes of fresh memory). */
#define CF_INPLACE_MIN ((size_t)64 << 10)
#define CF_INPLACE_PER_NODE ((size_t)16)

#endif
