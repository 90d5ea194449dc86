/* Arithmetic optimization (Grappler's ArithmeticOptimizer, docs/reference_grappler.md §3.10).
 *
 * Every stage of Grappler's pipeline is a pattern "arithmetic.<stage>", run in
 * Grappler's order on each node taken from a worklist (Grappler's node queue:
 * every node in topological order, popped from the back; a rewrite queues the
 * nodes it touched and the consumers it redirected), so one invocation runs to
 * a fixed point without whole-graph rescans. The first stage that replaces a
 * node ends the pipeline for it; its consumers (data and control) are rewired
 * to the replacement. Nodes a rewrite leaves without consumers are deleted when
 * they are not preserved and have no side effects.
 *
 * Shapes come from src/ops/shape.h, turned into symbolic shapes (an unknown dim
 * is a symbol; element-wise ops, MatMul, Reshape, ... carry their inputs'
 * symbols, so "same shape" is provable with an unknown batch size, as with
 * Grappler's symbolic shape inference). When inference fails the stages that
 * need shapes are off (each records why).
 *
 * Rules every stage follows (beyond its own preconditions, listed at each
 * stage): a preserved node (fetch, feed, _Arg/_Retval) is never bypassed,
 * removed, or given another value; nodes combined into one sit on the same
 * device; new Const nodes are anchored with a control edge to a node of the
 * frame they are used in when the graph has v1 control flow (through an
 * Identity when that node is a Switch); nothing is rewired across
 * Enter/Exit/NextIteration. New nodes are named as Grappler names them,
 * "<scope>/ArithmeticOptimizer/<Stage>_<name>[_<suffix>]", made unique with
 * "_<k>". Stages that rebuild a group (add_ops_rewrite, minimize_broadcasts)
 * only fire when the result is strictly smaller or cheaper, which makes a
 * second run a no-op (Grappler tags the nodes instead).
 *
 * Where we differ from Grappler, on purpose:
 *  - hoist_common_factor runs only with AGGRESSIVE, as in current TensorFlow;
 *  - remove_logical_not turns !(a<b) into a>=b only for non-float operands
 *    (NaN); Equal/NotEqual for every dtype;
 *  - convert_pow checks that the exponent does not broadcast the base;
 *  - optimize_max_or_min_of_monotonic leaves segment reductions alone (empty
 *    segments), and under ArgMax/ArgMin drops only a float Neg: any other f
 *    (Sign, Relu, Floor, Tanh, Exp, ...) can map two values to one, and the
 *    tie then picks another index (docs/grappler_differences.md);
 *  - hoist_cwise_unary_chains does not look through Reshape, and refuses ops
 *    that change the dtype;
 *  - _UnaryOpsComposition, Mul(x, Square(x)) for x^3, complex Square and
 *    cast reordering need a device named CPU (or GPU), as Grappler's
 *    NodeIsOnCpu: an unplaced node is not known to be on the CPU.
 *
 * Grappler: tensorflow/core/grappler/optimizers/arithmetic_optimizer.cc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/passes/arithmetic_impl.h"

const gn__pattern gn__patterns_arithmetic[] = {
    {"arithmetic.add_ops_rewrite",
     "a tree of Add/AddV2/AddN with single-consumer interior nodes -> one AddN per input shape and a broadcast "
     "AddV2 chain (combine_add_to_addn)"},
    {"arithmetic.fold_conjugate_into_transpose", "Conj(Transpose(x)) or Transpose(Conj(x)) -> ConjugateTranspose(x)"},
    {"arithmetic.fold_multiply_into_conv",
     "Conv2D/Conv3D(Mul(x, scalar const) through value-preserving ops, const W) -> Conv(x, Mul(W, scalar))"},
    {"arithmetic.fold_transpose_into_matmul",
     "MatMul/BatchMatMul of an inner-dims Transpose -> transpose_a/b or adj_x/adj_y"},
    {"arithmetic.hoist_common_factor",
     "AddN(Mul(x,y1), Mul(x,y2)) -> Mul(x, AddN(y1,y2)); Add(Div(y1,x), Div(y2,x)) -> Div(Add(y1,y2), x) "
     "(AGGRESSIVE only)"},
    {"arithmetic.minimize_broadcasts", "reassociate a tree of Add or Mul so that smaller operands combine first"},
    {"arithmetic.remove_redundant_transpose",
     "Transpose(Transpose(x, p), inverse of p) -> x, also through idempotent ops; identity permutation -> x "
     "(remove_identity_transpose)"},
    {"arithmetic.remove_involution", "Neg/Reciprocal/Conj/Invert/LogicalNot twice, across value-preserving ops -> x"},
    {"arithmetic.remove_redundant_bitcast", "Bitcast to its own type -> x; Bitcast(Bitcast(x)) -> Bitcast(x)"},
    {"arithmetic.remove_redundant_cast", "Cast with SrcT == DstT -> x"},
    {"arithmetic.replace_pack_with_tile_reshape", "Pack of N copies of x (chained) -> Reshape(Tile(x))"},
    {"arithmetic.replace_mul_with_tile", "Mul(x, ones) that only broadcasts x -> Tile(x, multiples)"},
    {"arithmetic.reduce_upsampling_dims", "Reshape(Tile(Reshape(x, 6-D))) nearest-neighbour upsampling -> 4-D"},
    {"arithmetic.remove_redundant_reshape",
     "Reshape(Reshape(x)) -> Reshape(x); Reshape/BroadcastTo to the input's own shape -> x"},
    {"arithmetic.remove_negation", "a + (-b) -> a - b; (-a) + b -> b - a; a - (-b) -> a + b"},
    {"arithmetic.replace_mul_with_square", "Mul(x, x) -> Square(x)"},
    {"arithmetic.remove_logical_not", "LogicalNot(Equal) -> NotEqual and the other comparisons (ints) inverted"},
    {"arithmetic.reorder_cast_like_and_value_preserving",
     "Transpose/Reshape/...(Cast(x)) -> Cast(Transpose(x)) when the cast widens (and the converse)"},
    {"arithmetic.reorder_reshape_around_unary",
     "Reshape(unary(Reshape(x))) -> Reshape(Reshape(unary(x))) so the reshapes merge"},
    {"arithmetic.simplify_aggregation", "AddN(x) -> x; AddN(x, x, ..., x) -> Mul(N, x)"},
    {"arithmetic.hoist_cwise_unary_chains",
     "Concat(f(g(a)), f(g(b))) -> f(g(Concat(a, b))); the same chain after every Split output -> before it"},
    {"arithmetic.convert_sqrt_div_to_rsqrt_mul", "Div(x, Sqrt(y)) -> Mul(x, Rsqrt(y)); Xdivy -> MulNoNan"},
    {"arithmetic.remove_idempotent", "Identity/Snapshot/StopGradient/...(same op(x)) -> the inner one"},
    {"arithmetic.convert_pow",
     "Pow(x, c), c all equal: 2 Square, 3 x*Square(x) (CPU), 1 Identity, 0.5 Sqrt, 0 ones, -0.5 Rsqrt, -1 "
     "Reciprocal"},
    {"arithmetic.convert_log1p", "Log(Add(x, 1)) -> Log1p(x)"},
    {"arithmetic.convert_log_softmax", "Log(Softmax(x)) -> LogSoftmax(x)"},
    {"arithmetic.optimize_max_or_min_of_monotonic",
     "Max/Min/ArgMax/ArgMin/MaxPool of a monotonic element-wise f(x) -> f(Max(x)) (Min when f decreases)"},
    {"arithmetic.convert_expm1", "Sub(Exp(x), 1) -> Expm1(x)"},
    {"arithmetic.unary_ops_composition",
     "a chain of element-wise unary ops on the CPU -> one _UnaryOpsComposition (needs a CPU device)"},
    {"arithmetic.remove_stack_slice_same_axis",
     "Slice/StridedSlice taking element i of Pack along its axis -> x_i (or ExpandDims(x_i))"},
    {"arithmetic.simplify_embedding_lookup",
     "SparseSegment*(Gather(params, Unique(ids).y), Unique(ids).idx, seg) -> SparseSegment*(params, ids, seg)"},
    {"arithmetic.remove_cast_into_segment_reduction",
     "drop an int32/int64 Cast into a SparseSegment* indices or segment_ids input"},
    {"arithmetic.fuse_squared_diff", "Square(Sub(a, b)) -> SquaredDifference(a, b) (not complex)"},
    {NULL, NULL},
};

typedef struct stage_row {
    int pat;
    gn__ar_stage_fn fn;
    bool shapes;     /* needs shape inference (Grappler's can_use_shapes) */
} stage_row;

static const stage_row stages[] = {
    {GN__AR_P_ADD_OPS_REWRITE, gn__ar_add_ops_rewrite, true},
    {GN__AR_P_FOLD_CONJ_TRANSPOSE, gn__ar_fold_conj_transpose, false},
    {GN__AR_P_FOLD_MUL_CONV, gn__ar_fold_mul_conv, false},
    {GN__AR_P_FOLD_TRANSPOSE_MATMUL, gn__ar_fold_transpose_matmul, false},
    {GN__AR_P_HOIST_COMMON_FACTOR, gn__ar_hoist_common_factor, true},
    {GN__AR_P_MINIMIZE_BROADCASTS, gn__ar_minimize_broadcasts, true},
    {GN__AR_P_REMOVE_REDUNDANT_TRANSPOSE, gn__ar_remove_redundant_transpose, true},
    {GN__AR_P_REMOVE_INVOLUTION, gn__ar_remove_involution, false},
    {GN__AR_P_REMOVE_REDUNDANT_BITCAST, gn__ar_remove_redundant_bitcast, false},
    {GN__AR_P_REMOVE_REDUNDANT_CAST, gn__ar_remove_redundant_cast, false},
    {GN__AR_P_REPLACE_PACK_WITH_TILE_RESHAPE, gn__ar_replace_pack_with_tile_reshape, true},
    {GN__AR_P_REPLACE_MUL_WITH_TILE, gn__ar_replace_mul_with_tile, true},
    {GN__AR_P_REDUCE_UPSAMPLING_DIMS, gn__ar_reduce_upsampling_dims, false},
    {GN__AR_P_REMOVE_REDUNDANT_RESHAPE, gn__ar_remove_redundant_reshape, true},
    {GN__AR_P_REMOVE_NEGATION, gn__ar_remove_negation, false},
    {GN__AR_P_REPLACE_MUL_WITH_SQUARE, gn__ar_replace_mul_with_square, false},
    {GN__AR_P_REMOVE_LOGICAL_NOT, gn__ar_remove_logical_not, false},
    {GN__AR_P_REORDER_CAST_LIKE, gn__ar_reorder_cast_like, false},
    {GN__AR_P_REORDER_RESHAPE_UNARY, gn__ar_reorder_reshape_unary, false},
    {GN__AR_P_SIMPLIFY_AGGREGATION, gn__ar_simplify_aggregation, false},
    {GN__AR_P_HOIST_CWISE_UNARY_CHAINS, gn__ar_hoist_cwise_unary_chains, false},
    {GN__AR_P_SQRT_DIV_TO_RSQRT_MUL, gn__ar_sqrt_div_to_rsqrt_mul, false},
    {GN__AR_P_REMOVE_IDEMPOTENT, gn__ar_remove_idempotent, false},
    {GN__AR_P_CONVERT_POW, gn__ar_convert_pow, true},
    {GN__AR_P_CONVERT_LOG1P, gn__ar_convert_log1p, true},
    {GN__AR_P_CONVERT_LOG_SOFTMAX, gn__ar_convert_log_softmax, false},
    {GN__AR_P_MAX_MIN_OF_MONOTONIC, gn__ar_max_min_of_monotonic, false},
    {GN__AR_P_CONVERT_EXPM1, gn__ar_convert_expm1, true},
    {GN__AR_P_UNARY_OPS_COMPOSITION, gn__ar_unary_ops_composition, false},
    {GN__AR_P_REMOVE_STACK_SLICE, gn__ar_remove_stack_slice, true},
    {GN__AR_P_SIMPLIFY_EMBEDDING_LOOKUP, gn__ar_simplify_embedding_lookup, false},
    {GN__AR_P_REMOVE_CAST_INTO_SEGMENT, gn__ar_remove_cast_into_segment, false},
    {GN__AR_P_FUSE_SQUARED_DIFF, gn__ar_fuse_squared_diff, false},
};

/* Could stage `pat` apply to a node of op `code`? (a cheap pre-filter: the
 * driver calls a stage only for the ops it starts from) */
static bool stage_root(int pat, uint32_t code)
{
    uint32_t pr = gn__ar_op_props(code);
    switch (pat) {
    case GN__AR_P_ADD_OPS_REWRITE:
    case GN__AR_P_HOIST_COMMON_FACTOR:
    case GN__AR_P_SIMPLIFY_AGGREGATION:
        return code == GN__AR_OP_Add || code == GN__AR_OP_AddV2 || code == GN__AR_OP_AddN;
    case GN__AR_P_FOLD_CONJ_TRANSPOSE:
        return code == GN__AR_OP_Conj || code == GN__AR_OP_Transpose || code == GN__AR_OP_ConjugateTranspose;
    case GN__AR_P_FOLD_MUL_CONV: return code == GN__AR_OP_Conv2D || code == GN__AR_OP_Conv3D;
    case GN__AR_P_FOLD_TRANSPOSE_MATMUL:
        return code == GN__AR_OP_MatMul || code == GN__AR_OP_SparseMatMul || code == GN__AR_OP_BatchMatMul ||
               code == GN__AR_OP_BatchMatMulV2 || code == GN__AR_OP_BatchMatMulV3;
    case GN__AR_P_MINIMIZE_BROADCASTS: return code == GN__AR_OP_Mul || code == GN__AR_OP_Add || code == GN__AR_OP_AddV2;
    case GN__AR_P_REMOVE_REDUNDANT_TRANSPOSE: return code == GN__AR_OP_Transpose || code == GN__AR_OP_ConjugateTranspose;
    case GN__AR_P_REMOVE_INVOLUTION: return (pr & GN__AR_IV) != 0;
    case GN__AR_P_REMOVE_REDUNDANT_BITCAST: return code == GN__AR_OP_Bitcast;
    case GN__AR_P_REMOVE_REDUNDANT_CAST: return code == GN__AR_OP_Cast;
    case GN__AR_P_REPLACE_PACK_WITH_TILE_RESHAPE: return code == GN__AR_OP_Pack;
    case GN__AR_P_REPLACE_MUL_WITH_TILE: return code == GN__AR_OP_Mul;
    case GN__AR_P_REDUCE_UPSAMPLING_DIMS:
    case GN__AR_P_REORDER_RESHAPE_UNARY: return code == GN__AR_OP_Reshape;
    case GN__AR_P_REMOVE_REDUNDANT_RESHAPE: return code == GN__AR_OP_Reshape || code == GN__AR_OP_BroadcastTo;
    case GN__AR_P_REMOVE_NEGATION: return code == GN__AR_OP_Add || code == GN__AR_OP_AddV2 || code == GN__AR_OP_Sub;
    case GN__AR_P_REPLACE_MUL_WITH_SQUARE: return code == GN__AR_OP_Mul || code == GN__AR_OP_MulNoNan;
    case GN__AR_P_REMOVE_LOGICAL_NOT: return code == GN__AR_OP_LogicalNot;
    case GN__AR_P_REORDER_CAST_LIKE:
        return (pr & (GN__AR_VP | GN__AR_CL)) != 0 || code == GN__AR_OP_AddN || code == GN__AR_OP_Add ||
               code == GN__AR_OP_AddV2;
    case GN__AR_P_HOIST_CWISE_UNARY_CHAINS:
        return code == GN__AR_OP_Concat || code == GN__AR_OP_ConcatV2 || code == GN__AR_OP_Split ||
               code == GN__AR_OP_SplitV;
    case GN__AR_P_SQRT_DIV_TO_RSQRT_MUL:
        return code == GN__AR_OP_RealDiv || code == GN__AR_OP_Div || code == GN__AR_OP_TruncateDiv ||
               code == GN__AR_OP_Xdivy;
    case GN__AR_P_REMOVE_IDEMPOTENT:
        return (pr & GN__AR_VS) != 0 || code == GN__AR_OP_AddN || code == GN__AR_OP_Add || code == GN__AR_OP_AddV2;
    case GN__AR_P_CONVERT_POW: return code == GN__AR_OP_Pow;
    case GN__AR_P_CONVERT_LOG1P:
    case GN__AR_P_CONVERT_LOG_SOFTMAX: return code == GN__AR_OP_Log;
    case GN__AR_P_MAX_MIN_OF_MONOTONIC:
        return code == GN__AR_OP_Max || code == GN__AR_OP_Min || code == GN__AR_OP_ArgMax || code == GN__AR_OP_ArgMin ||
               code == GN__AR_OP_MaxPool || code == GN__AR_OP_MaxPoolV2 || code == GN__AR_OP_MaxPool3D;
    case GN__AR_P_CONVERT_EXPM1: return code == GN__AR_OP_Sub;
    case GN__AR_P_UNARY_OPS_COMPOSITION: return (pr & (GN__AR_UF | GN__AR_UH | GN__AR_UD)) != 0;
    case GN__AR_P_REMOVE_STACK_SLICE: return code == GN__AR_OP_StridedSlice || code == GN__AR_OP_Slice;
    case GN__AR_P_SIMPLIFY_EMBEDDING_LOOKUP:
    case GN__AR_P_REMOVE_CAST_INTO_SEGMENT:
        return code == GN__AR_OP_SparseSegmentSum || code == GN__AR_OP_SparseSegmentSumWithNumSegments ||
               code == GN__AR_OP_SparseSegmentMean || code == GN__AR_OP_SparseSegmentMeanWithNumSegments ||
               code == GN__AR_OP_SparseSegmentSqrtN || code == GN__AR_OP_SparseSegmentSqrtNWithNumSegments;
    case GN__AR_P_FUSE_SQUARED_DIFF: return code == GN__AR_OP_Square;
    default: return true;
    }
}

/* ---- the pass --------------------------------------------------------------------------- */
static bool function_is_differentiated(const gn__pass_ctx *c)
{
    if (!c->fn_name || !c->lib || !c->lib->lib_extra) return false;
    const Tensorflow__FunctionDefLibrary *le = c->lib->lib_extra;
    for (size_t i = 0; i < le->n_gradient; i++)
        if (le->gradient[i] && le->gradient[i]->function_name && strcmp(le->gradient[i]->function_name, c->fn_name) == 0)
            return true;
    return false;
}

static void ar_free(gn__ar *a)
{
    free(a->flags);
    free(a->tc);
    free(a->refused);
    free(a->n_info);
    free(a->info);
    free(a->opc);
    free(a->stack);
    free(a->dead);
    gn__buf_free(&a->name);
    gn__arena_free(&a->arena);
}

static gn_status run(gn__ar *a)
{
    gn_graph *g = a->g;
    gn__pass_ctx *c = a->c;
    GN_TRY(gn__ar_grow(a));

    for (gn_id i = 0; i < g->n_nodes; i++)
        if (gn__node_live(g, i) && (gn__ar_props(a, i) & GN__AR_CF)) {
            a->has_v1_cf = true;
            break;
        }

    /* a table left by an earlier pass that changed nothing is current */
    gn_status s = gn__graph_shapes(g) ? GN_OK : gn__graph_infer_shapes(g);
    gn__err shape_err = g->err;
    gn__err_clear(&g->err);

    /* the order the table was inferred in, else one of our own */
    gn_id *order = NULL;
    uint32_t n = 0;
    if ((s != GN_OK || !gn__shape_table_order(gn__graph_shapes(g), &order, &n)) && gn__graph_topo(g, &order, &n) != GN_OK) {
        if (g->err.code == GN_ERR_NOMEM) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
        gn__err_clear(&g->err);
        free(order);
        order = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *order);
        if (!order) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
        n = 0;
        for (gn_id i = 0; i < g->n_nodes; i++)
            if (gn__node_live(g, i)) order[n++] = i;
    }

    if (s == GN_OK) {
        a->use_shapes = true;
        s = gn__ar_build_shapes(a, order, n);
    } else if (s == GN_ERR_NOMEM) {
        s = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < GN__ARRAY_LEN(stages); i++)
            if (stages[i].shapes && a->enabled[stages[i].pat])
                gn__ar_refuse(a, stages[i].pat, GN_NONE, "shape inference failed (%s): stage off", shape_err.msg);
        s = GN_OK;
    }
    /* the table is ours now (symbolic copy); the graph's goes with the first
     * edit, or at the end when anything changed (gn__pass_arithmetic) */
    for (uint32_t i = 0; i < n && s == GN_OK; i++) s = gn__ar_push(a, order[i]);
    free(order);
    GN_TRY(s);

    /* per op code, the stages (indices into stages[]) that can start from it */
    uint64_t mask[GN__AR_NOPS];
    for (uint32_t code = 0; code < GN__AR_NOPS; code++) {
        mask[code] = 0;
        for (size_t i = 0; code && i < GN__ARRAY_LEN(stages); i++) {
            const stage_row *st = &stages[i];
            if (a->enabled[st->pat] && (!st->shapes || a->use_shapes) && stage_root(st->pat, code))
                mask[code] |= 1ull << i;
        }
    }

    uint32_t tick = 0;
    while (a->n_stack) {
        if ((++tick & 1023) == 0 && gn__pass_deadline_passed(c)) {
            if (c->report)
                gn__pass_refused(c, "arithmetic", g, GN_NONE, "time budget spent: %u queued nodes not visited",
                                 a->n_stack);
            break;
        }
        /* the stack is mostly popped in the order it holds: fetch ahead */
        if (a->n_stack > 16) gn__prefetch_record(g, a->stack[a->n_stack - 17]);
        if (a->n_stack > 8) gn__prefetch_arrays(g, a->stack[a->n_stack - 9]);
        gn_id id = a->stack[--a->n_stack];
        a->flags[id] &= (uint8_t)~GN__AR_INQ;
        if (!gn__node_live(g, id)) continue;
        gn__ar_res r;
        memset(&r, 0, sizeof r);
        uint32_t code = gn__ar_op(a, id);
        for (size_t i = 0; i < GN__ARRAY_LEN(stages); i++) {
            if (!(mask[code] >> i & 1)) continue;
            GN_TRY(stages[i].fn(a, id, &r));
            if (r.stop || !gn__node_live(g, id)) break;
            code = gn__ar_op(a, id); /* a stage that rewrites in place may change the op */
        }
        if (r.repl && gn__node_live(g, id)) GN_TRY(gn__ar_replace(a, id, r.to));
        GN_TRY(gn__ar_flush_dead(a));
    }
    return GN_OK;
}

gn_status gn__pass_arithmetic(gn__pass_ctx *c, gn_graph *g)
{
    gn__ar a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.g = g;
    a.next_sym = -2;
    a.aggressive = c->toggle == GN_TOGGLE_AGGRESSIVE;
    a.allow_non_diff = !function_is_differentiated(c);
    gn__arena_init(&a.arena, 1 << 16);
    gn__buf_init(&a.name);
#define GN__AR_PAT_NAME(E, s) s,
    static const char *const names[GN__AR_NPAT] = {GN__AR_PATTERNS(GN__AR_PAT_NAME)};
#undef GN__AR_PAT_NAME
    bool any = false;
    for (int i = 0; i < GN__AR_NPAT; i++) {
        snprintf(a.pid[i], sizeof a.pid[i], "arithmetic.%s", names[i]);
        if (!gn__patterns_arithmetic[i].id || strcmp(gn__patterns_arithmetic[i].id, a.pid[i]) != 0) {
            ar_free(&a);
            return gn__fail(c->err, GN_ERR_INTERNAL, "arithmetic pattern table out of order at '%s'", a.pid[i]);
        }
        a.enabled[i] = gn__pattern_enabled(c, a.pid[i]);
        any = any || a.enabled[i];
    }
    gn_status s = any ? run(&a) : GN_OK;
    /* an unchanged graph keeps its shapes for the passes after this one */
    if (s != GN_OK || c->changed) gn__attachment_drop(&g->shapes);
    if (s != GN_OK && !c->err->msg[0]) gn__fail(c->err, s, "%s", g->err.msg[0] ? g->err.msg : gn_status_str(s));
    ar_free(&a);
    return s;
}
