/* Arithmetic stages 13-33 of Grappler's pipeline: reduce_upsampling_dims,
 * remove_redundant_reshape, remove_negation, replace_mul_with_square,
 * remove_logical_not, reorder_cast_like_and_value_preserving,
 * reorder_reshape_around_unary, simplify_aggregation, hoist_cwise_unary_chains,
 * convert_sqrt_div_to_rsqrt_mul, remove_idempotent, convert_pow, convert_log1p,
 * convert_log_softmax, optimize_max_or_min_of_monotonic, convert_expm1,
 * unary_ops_composition, remove_stack_slice_same_axis, simplify_embedding_lookup,
 * remove_cast_into_segment_reduction, fuse_squared_diff. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/tensor.h"
#include "optimizer/passes/arithmetic_impl.h"

#define NM(a, id) gn__node_name((a)->g, (id))
#define OPN(a, id) gn__node_op((a)->g, (id))

static gn_status nomem(gn__ar *a) { return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory"); }

static const gn__ar_shape *shape_of(gn__ar *a, gn__edge e)
{
    const gn__ar_info *t = gn__ar_info_of(a, e);
    return t && t->s.rank >= 0 ? &t->s : NULL;
}

static bool edge_eq(gn__edge x, gn__edge y) { return x.node == y.node && x.index == y.index; }


static gn_status copy_info(gn__ar *a, gn_id dst, gn__edge src)
{
    const gn__ar_info *t = gn__ar_info_of(a, src);
    if (!t) return GN_OK;
    gn__ar_info c = *t;
    return gn__ar_set_info(a, dst, c.dtype, &c.s);
}

/* Small tensors built here: a scalar of dtype dt, or int32 vectors. */
static gn_status make_tensor(gn__ar *a, int32_t dt, int32_t rank, const int64_t *dims, gn__tensor *t)
{
    memset(t, 0, sizeof *t);
    size_t es = gn__dtype_size(dt);
    if (!es) return gn__fail(a->c->err, GN_ERR_INTERNAL, "no element size for %s", gn__dtype_name(dt));
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i];
    t->dtype = dt;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->buf = gn__buffer_new((size_t)(n ? n : 1) * es);
    if (!t->buf) return nomem(a);
    t->data = t->buf->data;
    t->nbytes = (size_t)n * es;
    return GN_OK;
}

/* Sets element i of t to the real value v; false for dtypes not handled. */
static bool set_elem(gn__tensor *t, int64_t i, double v)
{
    void *d = t->data;
    switch (t->dtype) {
    case GN__AR_F32: ((float *)d)[i] = (float)v; return true;
    case GN__AR_F64: ((double *)d)[i] = v; return true;
    case GN__AR_F16: ((gn__f16 *)d)[i] = (gn__f16)v; return true;
    case GN__AR_BF16: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        ((uint16_t *)d)[i] = (uint16_t)(u >> 16); /* exact for small integers */
        return true;
    }
    case GN__AR_I32: ((int32_t *)d)[i] = (int32_t)v; return true;
    case GN__AR_I64: ((int64_t *)d)[i] = (int64_t)v; return true;
    case GN__AR_I16: ((int16_t *)d)[i] = (int16_t)v; return true;
    case GN__AR_I8: ((int8_t *)d)[i] = (int8_t)v; return true;
    case GN__AR_U8: ((uint8_t *)d)[i] = (uint8_t)v; return true;
    case GN__AR_C64:
        ((float *)d)[2 * i] = (float)v;
        ((float *)d)[2 * i + 1] = 0;
        return true;
    case GN__AR_C128:
        ((double *)d)[2 * i] = v;
        ((double *)d)[2 * i + 1] = 0;
        return true;
    default: return false;
    }
}

/* ==== 13. reduce_upsampling_dims ======================================================== */
gn_status gn__ar_reduce_upsampling_dims(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REDUCE_UPSAMPLING_DIMS };
    if (gn__ar_op(a, n) != GN__AR_OP_Reshape || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge te = gn__ar_in(a, n, 0);
    gn_id tile = te.node;
    if (gn__ar_op(a, tile) != GN__AR_OP_Tile || te.index != 0 || gn__ar_node(a, tile)->n_in != 2) return GN_OK;
    gn__edge re = gn__ar_in(a, tile, 0);
    gn_id rs = re.node;
    if (gn__ar_op(a, rs) != GN__AR_OP_Reshape || re.index != 0 || gn__ar_node(a, rs)->n_in != 2) return GN_OK;
    gn_id mc = gn__ar_in(a, tile, 1).node, shc = gn__ar_in(a, rs, 1).node;
    int64_t m[8], sh[8];
    int32_t nm = 0, ns = 0;
    if (gn__ar_type_attr(a, mc, "dtype") != GN__AR_I32 || gn__ar_type_attr(a, shc, "dtype") != GN__AR_I32 ||
        !gn__ar_const_ints(a, mc, m, 8, &nm) || !gn__ar_const_ints(a, shc, sh, 8, &ns) || nm != 6 || ns != 6 ||
        m[3] != 1 || m[5] != 1 || sh[2] != 1 || sh[4] != 1)
        return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, tile) || gn__ar_preserved(a, rs)) {
        gn__ar_refuse(a, P, n, "a node of the pattern is preserved");
        return GN_OK;
    }
    if (gn__ar_node(a, tile)->n_use != 1) {
        gn__ar_refuse(a, P, n, "Tile '%s' has other consumers", NM(a, tile));
        return GN_OK;
    }
    static const char *const sfx[4] = {"Reshape", "Tile", "Multiples", "Shape"};
    for (int i = 0; i < 4; i++)
        if (gn__ar_name_taken(a, n, "ReduceUpsamplingDims", sfx[i])) return GN_OK;
    int64_t m4[4] = {m[0], m[1], m[2], m[4]}, s4[4] = {sh[0], sh[1], sh[3], sh[5]}, four = 4;
    gn__tensor mt, st;
    GN_TRY(make_tensor(a, GN__AR_I32, 1, &four, &mt));
    gn_status s = make_tensor(a, GN__AR_I32, 1, &four, &st);
    if (s != GN_OK) {
        gn__tensor_release(&mt);
        return s;
    }
    for (int i = 0; i < 4; i++) {
        ((int32_t *)mt.data)[i] = (int32_t)m4[i];
        ((int32_t *)st.data)[i] = (int32_t)s4[i];
    }
    gn__edge x = gn__ar_in(a, rs, 0);
    gn_id nmc = GN_NONE, nsc = GN_NONE, nrs = GN_NONE, nt = GN_NONE;
    s = gn__ar_add_const(a, gn__ar_name(a, n, "ReduceUpsamplingDims", "Multiples"), &mt, mc, x, &nmc);
    if (s == GN_OK) s = gn__ar_add_const(a, gn__ar_name(a, n, "ReduceUpsamplingDims", "Shape"), &st, shc, x, &nsc);
    gn__tensor_release(&mt);
    gn__tensor_release(&st);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, nmc, mc);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, nsc, shc);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "ReduceUpsamplingDims", "Reshape"), "Reshape", rs, &nrs);
    if (s == GN_OK) s = gn__node_add_input(a->g, nrs, x);
    if (s == GN_OK) s = gn__node_add_input(a->g, nrs, (gn__edge){nsc, 0});
    if (s == GN_OK) s = gn__ar_set_type(a, nrs, "T", gn__ar_type_attr(a, rs, "T"));
    if (s == GN_OK) s = gn__ar_set_type(a, nrs, "Tshape", GN__AR_I32);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, nrs, rs);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "ReduceUpsamplingDims", "Tile"), "Tile", tile, &nt);
    if (s == GN_OK) s = gn__node_add_input(a->g, nt, (gn__edge){nrs, 0});
    if (s == GN_OK) s = gn__node_add_input(a->g, nt, (gn__edge){nmc, 0});
    if (s == GN_OK) s = gn__ar_set_type(a, nt, "T", gn__ar_type_attr(a, tile, "T"));
    if (s == GN_OK) s = gn__ar_set_type(a, nt, "Tmultiples", GN__AR_I32);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, nt, tile);
    if (s == GN_OK) {
        int32_t T = gn__ar_type_attr(a, rs, "T");
        bool known = true;
        for (int i = 0; i < 4; i++) known = known && s4[i] >= 0;
        if (known) {
            gn__ar_shape rsh = {4, s4};
            int64_t td[4];
            for (int i = 0; i < 4; i++) td[i] = s4[i] * m4[i];
            gn__ar_shape tsh = {4, td};
            s = gn__ar_set_info(a, nrs, T, &rsh);
            if (s == GN_OK) s = gn__ar_set_info(a, nt, T, &tsh);
        }
    }
    if (s == GN_OK) s = gn__ar_set_input(a, n, 0, (gn__edge){nt, 0});
    if (s == GN_OK) s = gn__ar_push(a, n);
    GN_TRY(s);
    gn__ar_rewrote(a, P, n, "6-D upsampling through '%s' and '%s' -> 4-D Reshape '%s' + Tile '%s'", NM(a, rs),
                   NM(a, tile), NM(a, nrs), NM(a, nt));
    r->stop = true;
    return GN_OK;
}

/* ==== 14. remove_redundant_reshape ============================================================ */
gn_status gn__ar_remove_redundant_reshape(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_REDUNDANT_RESHAPE };
    uint32_t op = gn__ar_op(a, n);
    if ((op != GN__AR_OP_Reshape && op != GN__AR_OP_BroadcastTo) || gn__ar_node(a, n)->n_in < 1) return GN_OK;
    gn__edge ie = gn__ar_in(a, n, 0);
    gn_id in = ie.node;
    if (op == GN__AR_OP_Reshape && gn__ar_op(a, in) == GN__AR_OP_Reshape && gn__ar_node(a, in)->n_in >= 1) {
        if (gn__ar_preserved(a, n) || gn__ar_preserved(a, in)) {
            gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : in));
            return GN_OK;
        }
        GN_TRY(gn__ar_forward_ctrl(a, n, in));
        GN_TRY(gn__ar_set_input(a, n, 0, gn__ar_in(a, in, 0)));
        GN_TRY(gn__ar_push(a, n));
        gn__ar_rewrote(a, P, n, "Reshape of Reshape '%s' -> one Reshape", NM(a, in));
        r->stop = true;
        return GN_OK;
    }
    const gn__ar_shape *xs = shape_of(a, ie), *os = shape_of(a, (gn__edge){n, 0});
    if (!gn__ar_shape_equal(xs, os)) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the %s is preserved", OPN(a, n));
        return GN_OK;
    }
    if (gn__ar_node(a, n)->n_ctrl) {
        gn__ar_refuse(a, P, n, "it anchors control dependencies");
        return GN_OK;
    }
    char b[128];
    gn__ar_rewrote(a, P, n, "%s to the input's own shape %s", OPN(a, n), gn__ar_shape_str(xs, b, sizeof b));
    r->repl = true;
    r->to = ie;
    r->stop = true;
    return GN_OK;
}

/* ==== 15. remove_negation ========================================================================= */
gn_status gn__ar_remove_negation(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_NEGATION };
    (void)r;
    bool add = gn__ar_is_add(a, n);
    if ((!add && gn__ar_op(a, n) != GN__AR_OP_Sub) || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge xe = gn__ar_in(a, n, 0), ye = gn__ar_in(a, n, 1);
    bool yneg = gn__ar_op(a, ye.node) == GN__AR_OP_Neg && ye.index == 0 && gn__ar_node(a, ye.node)->n_in == 1;
    bool xneg = add && gn__ar_op(a, xe.node) == GN__AR_OP_Neg && xe.index == 0 && gn__ar_node(a, xe.node)->n_in == 1;
    if (!yneg && !xneg) return GN_OK;
    gn_id neg = yneg ? ye.node : xe.node;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, neg)) {
        gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : neg));
        return GN_OK;
    }
    GN_TRY(gn__ar_forward_ctrl(a, n, neg));
    const char *was = OPN(a, n);
    const char *now = add ? "Sub" : "AddV2";
    if (yneg) {
        GN_TRY(gn__ar_set_input(a, n, 1, gn__ar_in(a, neg, 0)));
    } else {
        GN_TRY(gn__ar_set_input(a, n, 0, ye));
        GN_TRY(gn__ar_set_input(a, n, 1, gn__ar_in(a, neg, 0)));
    }
    gn__ar_rewrote(a, P, n, "%s with Neg '%s' -> %s", was, NM(a, neg), now);
    GN_TRY(gn__ar_set_op(a, n, now));
    GN_TRY(gn__ar_push(a, n));
    return GN_OK;
}

/* ==== 16. replace_mul_with_square ================================================================== */
gn_status gn__ar_replace_mul_with_square(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REPLACE_MUL_WITH_SQUARE };
    uint32_t op = gn__ar_op(a, n);
    if ((op != GN__AR_OP_Mul && op != GN__AR_OP_MulNoNan) || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    if (!edge_eq(gn__ar_in(a, n, 0), gn__ar_in(a, n, 1))) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the Mul is preserved");
        return GN_OK;
    }
    if (gn__ar_name_taken(a, n, "ReplaceMulWithSquare", NULL)) return GN_OK;
    if (gn__dtype_is_complex(gn__ar_type_attr(a, n, "T")) && !gn__ar_on_cpu(a, n)) {
        gn__ar_refuse(a, P, n, "complex Square only on a CPU device (as Grappler)");
        return GN_OK;
    }
    gn_id sq = GN_NONE;
    GN_TRY(gn__ar_copy_node(a, n, gn__ar_name(a, n, "ReplaceMulWithSquare", NULL), &sq));
    GN_TRY(gn__ar_set_op(a, sq, "Square"));
    GN_TRY(gn__node_remove_input(a->g, sq, 1));
    GN_TRY(copy_info(a, sq, (gn__edge){n, 0}));
    gn__ar_rewrote(a, P, n, "Mul of '%s' by itself -> Square '%s'", NM(a, gn__ar_in(a, n, 0).node), NM(a, sq));
    r->repl = true;
    r->to = (gn__edge){sq, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 17. remove_logical_not =========================================================================== */
gn_status gn__ar_remove_logical_not(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_LOGICAL_NOT };
    if (gn__ar_op(a, n) != GN__AR_OP_LogicalNot || gn__ar_node(a, n)->n_in != 1) return GN_OK;
    gn__edge ie = gn__ar_in(a, n, 0);
    gn_id in = ie.node;
    const char *now = NULL;
    bool ordered = true;
    switch (gn__ar_op(a, in)) {
    case GN__AR_OP_Equal: now = "NotEqual"; ordered = false; break;
    case GN__AR_OP_NotEqual: now = "Equal"; ordered = false; break;
    case GN__AR_OP_Less: now = "GreaterEqual"; break;
    case GN__AR_OP_LessEqual: now = "Greater"; break;
    case GN__AR_OP_Greater: now = "LessEqual"; break;
    case GN__AR_OP_GreaterEqual: now = "Less"; break;
    default: return GN_OK;
    }
    if (ie.index != 0) return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, in)) {
        gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : in));
        return GN_OK;
    }
    if (gn__ar_node(a, in)->n_use > 1) {
        gn__ar_refuse(a, P, n, "comparison '%s' has other consumers", NM(a, in));
        return GN_OK;
    }
    int32_t T = gn__ar_type_attr(a, in, "T");
    if (ordered && (gn__ar_float_dtype(T) || gn__dtype_is_complex(T) || T == 0)) {
        gn__ar_refuse(a, P, n, "!(a %s b) differs from the inverted comparison when an operand is NaN (%s)", OPN(a, in),
                      T ? gn__dtype_name(T) : "unknown dtype");
        return GN_OK;
    }
    gn__ar_rewrote(a, P, n, "LogicalNot(%s '%s') -> %s", OPN(a, in), NM(a, in), now);
    GN_TRY(gn__ar_set_op(a, in, now));
    GN_TRY(gn__ar_push(a, in));
    r->repl = true;
    r->to = ie;
    r->stop = true;
    return GN_OK;
}

/* ==== 18. reorder_cast_like_and_value_preserving ============================================================ */
/* a size per element (not string, variant, resource), and not a quantized type */
static bool fixed_size(int32_t dt) { return gn__dtype_size(dt) != 0 && gn__dtype_kind_of(dt) != GN__DK_QUANT; }

/* Sets the dtype of node's input 0 (its type attr) to dt; false when the op
 * has no such attr or does not allow dt. */
static gn_status set_input0_type(gn__ar *a, gn_id id, int32_t dt, bool *ok)
{
    *ok = false;
    const gn__opdef *op = gn__node_opdef(a->g, id);
    if (!op || op->n_inputs < 1) return GN_OK;
    const char *ta = op->inputs[0].type_attr;
    if (!ta) {
        *ok = op->inputs[0].type == dt;
        return GN_OK;
    }
    const gn__attrdef *ad = gn__opdef_attr(op, ta);
    Tensorflow__AttrValue v = gn__attr_type_value(dt);
    gn__err e;
    gn__err_clear(&e);
    if (ad && gn__attr_check(op, ad, &v, &e) != GN_OK) return GN_OK;
    GN_TRY(gn__ar_set_type(a, id, ta, dt));
    *ok = true;
    return GN_OK;
}

gn_status gn__ar_reorder_cast_like(gn__ar *a, gn_id cons, gn__ar_res *r)
{
    enum { P = GN__AR_P_REORDER_CAST_LIKE };
    uint32_t cp = gn__ar_props(a, cons);
    bool cons_vp = gn__ar_value_preserving(a, cons), cons_cast = (cp & GN__AR_CL) != 0;
    if ((!cons_vp && !cons_cast) || gn__ar_op(a, cons) == GN__AR_OP_CheckNumerics || (cp & GN__AR_CF)) return GN_OK;
    if (gn__ar_node(a, cons)->n_in < 1) return GN_OK;
    gn__edge pe = gn__ar_in(a, cons, 0);
    gn_id prod = pe.node;
    uint32_t pp = gn__ar_props(a, prod);
    bool prod_cast = (pp & GN__AR_CL) != 0;
    bool can = gn__ar_op(a, prod) != GN__AR_OP_CheckNumerics &&
               ((prod_cast && cons_vp) || (gn__ar_value_preserving(a, prod) && cons_cast));
    if (!can || (pp & GN__AR_CF) || pe.index != 0 || gn__ar_node(a, prod)->n_in < 1) return GN_OK;
    gn_id cast = prod_cast ? prod : cons, vp = prod_cast ? cons : prod;
    const gn__opdef *cop = gn__node_opdef(a->g, cast);
    if (!cop) return GN_OK;
    int32_t src = gn__op_input_dtype(cop, a->g, cast, 0), dst = gn__op_output_dtype(cop, a->g, cast, 0);
    if (!fixed_size(src) || !fixed_size(dst)) return GN_OK;
    if (prod_cast && gn__dtype_size(dst) <= gn__dtype_size(src)) return GN_OK;
    if (!prod_cast && gn__dtype_size(dst) >= gn__dtype_size(src)) return GN_OK;
    if (gn__ar_preserved(a, cons) || gn__ar_preserved(a, prod)) {
        gn__ar_refuse(a, P, cons, "'%s' is preserved", NM(a, gn__ar_preserved(a, cons) ? cons : prod));
        return GN_OK;
    }
    if (!gn__ar_on_cpu_or_gpu(a, cons)) {
        gn__ar_refuse(a, P, cons, "not placed on a CPU or GPU device (as Grappler)");
        return GN_OK;
    }
    if (!gn__ar_same_device(a, cons, prod)) {
        gn__ar_refuse(a, P, cons, "'%s' is on another device", NM(a, prod));
        return GN_OK;
    }
    if (!(gn__ar_props(a, vp) & GN__AR_BG)) {
        gn__ar_refuse(a, P, cons, "%s is not a pure data-movement op here", OPN(a, vp));
        return GN_OK;
    }
    char sd[32], ss[32];
    snprintf(sd, sizeof sd, "%s", gn__dtype_name(dst));
    snprintf(ss, sizeof ss, "%s", gn__dtype_name(src));
    if (gn__ar_name_taken(a, cons, "ReorderCastLikeAndValuePreserving", ss) ||
        gn__ar_name_taken(a, prod, "ReorderCastLikeAndValuePreserving", sd))
        return GN_OK;
    gn_id np = GN_NONE, nc = GN_NONE;
    GN_TRY(gn__ar_copy_node(a, cons, gn__ar_name(a, cons, "ReorderCastLikeAndValuePreserving", ss), &np));
    GN_TRY(gn__node_set_input(a->g, np, 0, gn__ar_in(a, prod, 0)));
    GN_TRY(gn__ar_copy_node(a, prod, gn__ar_name(a, prod, "ReorderCastLikeAndValuePreserving", sd), &nc));
    GN_TRY(gn__node_set_input(a->g, nc, 0, (gn__edge){np, 0}));
    bool ok;
    GN_TRY(set_input0_type(a, prod_cast ? np : nc, prod_cast ? src : dst, &ok));
    if (!ok) {
        /* undo: the new nodes have no consumers */
        GN_TRY(gn__node_remove(a->g, nc));
        GN_TRY(gn__node_remove(a->g, np));
        gn__ar_refuse(a, P, cons, "%s does not take %s", OPN(a, vp), gn__dtype_name(prod_cast ? src : dst));
        return GN_OK;
    }
    /* the copies' recorded shapes were those of the nodes they copy, at
     * the other place in the chain: TensorFlow refuses an _output_shapes
     * that its shape inference contradicts at import */
    if (gn__node_attr(a->g, np, "_output_shapes")) GN_TRY(gn__node_remove_attr(a->g, np, "_output_shapes"));
    if (gn__node_attr(a->g, nc, "_output_shapes")) GN_TRY(gn__node_remove_attr(a->g, nc, "_output_shapes"));
    /* shapes: the first new node keeps its input's shape (cast) or the
     * consumer's (value-preserving op); the second is the old consumer's */
    const gn__ar_info *ci = gn__ar_info_of(a, (gn__edge){cons, 0});
    if (prod_cast) {
        if (ci) GN_TRY(gn__ar_set_info(a, np, src, &ci->s));
    } else {
        const gn__ar_info *xi = gn__ar_info_of(a, gn__ar_in(a, prod, 0));
        if (xi) GN_TRY(gn__ar_set_info(a, np, dst, &xi->s));
    }
    GN_TRY(copy_info(a, nc, (gn__edge){cons, 0}));
    gn__ar_rewrote(a, P, cons, "%s(%s) -> %s(%s) ('%s'): the data-movement op works on %s", OPN(a, cons), OPN(a, prod),
                   OPN(a, nc), OPN(a, np), NM(a, nc), gn__dtype_name(prod_cast ? src : dst));
    r->repl = true;
    r->to = (gn__edge){nc, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 19. reorder_reshape_around_unary ======================================================================= */
gn_status gn__ar_reorder_reshape_unary(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REORDER_RESHAPE_UNARY };
    if (gn__ar_op(a, n) != GN__AR_OP_Reshape || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge ue = gn__ar_in(a, n, 0);
    gn_id un = ue.node;
    if (!gn__ar_unary_elementwise(a, un) || (gn__ar_props(a, un) & GN__AR_FR) || ue.index != 0 ||
        gn__ar_node(a, un)->n_in != 1)
        return GN_OK;
    gn__edge ae = gn__ar_in(a, un, 0);
    gn_id ra = ae.node;
    if (gn__ar_op(a, ra) != GN__AR_OP_Reshape || ae.index != 0 || gn__ar_node(a, ra)->n_in != 2) return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, un) || gn__ar_preserved(a, ra)) {
        gn__ar_refuse(a, P, n, "a node of the pattern is preserved");
        return GN_OK;
    }
    int32_t dt = gn__ar_dtype(a, ue);
    if (!dt || dt != gn__ar_dtype(a, ae)) {
        gn__ar_refuse(a, P, n, "'%s' changes the dtype", NM(a, un));
        return GN_OK;
    }
    if (gn__ar_name_taken(a, ra, "ReorderReshapeAroundUnary", NULL)) return GN_OK;
    gn_id nr = GN_NONE;
    GN_TRY(gn__ar_add_node(a, gn__ar_name(a, ra, "ReorderReshapeAroundUnary", NULL), "Reshape", ra, &nr));
    GN_TRY(gn__ar_set_type(a, nr, "T", gn__ar_type_attr(a, ra, "T")));
    int32_t ts = gn__ar_type_attr(a, ra, "Tshape");
    GN_TRY(gn__ar_set_type(a, nr, "Tshape", ts ? ts : GN__AR_I32));
    GN_TRY(copy_info(a, nr, ue));
    GN_TRY(gn__ar_set_input(a, un, 0, gn__ar_in(a, ra, 0)));
    GN_TRY(gn__ar_forward_ctrl(a, un, ra));
    GN_TRY(copy_info(a, un, gn__ar_in(a, ra, 0)));
    if (gn__ar_info_of(a, (gn__edge){un, 0})) {
        gn__ar_info ui = *gn__ar_info_of(a, (gn__edge){un, 0});
        GN_TRY(gn__ar_set_info(a, un, dt, &ui.s));
    }
    GN_TRY(gn__ar_replace(a, un, (gn__edge){nr, 0}));
    GN_TRY(gn__node_add_input(a->g, nr, (gn__edge){un, 0}));
    GN_TRY(gn__node_add_input(a->g, nr, gn__ar_in(a, ra, 1)));
    GN_TRY(gn__ar_push(a, un));
    gn__ar_rewrote(a, P, n, "Reshape '%s' moved after %s '%s' as '%s'", NM(a, ra), OPN(a, un), NM(a, un), NM(a, nr));
    r->stop = true;
    return GN_OK;
}

/* ==== 20. simplify_aggregation ================================================================================== */
gn_status gn__ar_simplify_aggregation(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_SIMPLIFY_AGGREGATION };
    if (!gn__ar_is_aggregate(a, n)) return GN_OK;
    gn__node *nn = gn__ar_node(a, n);
    int32_t T = gn__ar_type_attr(a, n, "T");
    if (nn->n_in == 0 || T == GN__AR_VARIANT) return GN_OK;
    if (nn->n_in == 1 && nn->n_ctrl == 0) {
        if (gn__ar_preserved(a, n)) {
            gn__ar_refuse(a, P, n, "the aggregation is preserved");
            return GN_OK;
        }
        gn__ar_rewrote(a, P, n, "%s of one input", OPN(a, n));
        r->repl = true;
        r->to = gn__ar_in(a, n, 0);
        r->stop = true;
        return GN_OK;
    }
    uint32_t ni = nn->n_in;
    if (ni < 2) return GN_OK;
    for (uint32_t k = 1; k < ni; k++)
        if (!edge_eq(gn__ar_in(a, n, k), gn__ar_in(a, n, 0))) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the aggregation is preserved");
        return GN_OK;
    }
    if (gn__ar_name_taken(a, n, "SimplifyAggregation", "Const") || gn__ar_name_taken(a, n, "SimplifyAggregation", "Mul"))
        return GN_OK;
    gn__tensor t;
    bool settable = T == GN__AR_F32 || T == GN__AR_F64 || T == GN__AR_F16 || T == GN__AR_BF16 || T == GN__AR_I32 ||
                    T == GN__AR_I64 || T == GN__AR_I16 || T == GN__AR_I8 || T == GN__AR_U8 || gn__dtype_is_complex(T);
    if (!settable) {
        gn__ar_refuse(a, P, n, "cannot build a constant of dtype %s", T ? gn__dtype_name(T) : "unknown");
        return GN_OK;
    }
    GN_TRY(make_tensor(a, T, 0, NULL, &t));
    set_elem(&t, 0, (double)ni);
    gn__edge x = gn__ar_in(a, n, 0);
    gn_id c = GN_NONE, m = GN_NONE;
    gn_status s = gn__ar_add_const(a, gn__ar_name(a, n, "SimplifyAggregation", "Const"), &t, n, x, &c);
    gn__tensor_release(&t);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "SimplifyAggregation", "Mul"), "Mul", n, &m);
    if (s == GN_OK) s = gn__node_add_input(a->g, m, (gn__edge){c, 0});
    if (s == GN_OK) s = gn__node_add_input(a->g, m, x);
    if (s == GN_OK) s = gn__ar_set_type(a, m, "T", T);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, m, n);
    if (s == GN_OK) s = copy_info(a, m, (gn__edge){n, 0});
    GN_TRY(s);
    gn__ar_rewrote(a, P, n, "%u copies of '%s' -> Mul '%s'", ni, NM(a, x.node), NM(a, m));
    r->repl = true;
    r->to = (gn__edge){m, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 21. hoist_cwise_unary_chains ================================================================================ */
typedef struct link {
    gn_id node;
    uint32_t port;
} link;

static int link_cmp(gn__ar *a, const link *x, const link *y)
{
    if (x->port != y->port) return x->port < y->port ? -1 : 1;
    return strcmp(NM(a, x->node), NM(a, y->node));
}

static void link_sort(gn__ar *a, link *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        link t = v[i];
        uint32_t j = i;
        while (j > 0 && link_cmp(a, &t, &v[j - 1]) < 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
}

static bool relu_fusable(gn__ar *a, gn_id op)
{
    uint32_t c = gn__ar_op(a, op);
    if (c != GN__AR_OP_Relu && c != GN__AR_OP_Relu6) return false;
    if (gn__ar_node(a, op)->n_in < 1) return false;
    uint32_t p = gn__ar_op(a, gn__ar_in(a, op, 0).node);
    return p == GN__AR_OP_FusedBatchNorm || p == GN__AR_OP_FusedBatchNormV2 || p == GN__AR_OP_FusedBatchNormV3 ||
           p == GN__AR_OP_BiasAdd || p == GN__AR_OP_BiasAddV1;
}

/* Grappler's OpsAreSafeToHoist, plus: one data input, dtype kept. */
static bool safe_to_hoist(gn__ar *a, gn_id root, const link *v, uint32_t n)
{
    if (!n) return false;
    gn_id op0 = v[0].node;
    if ((gn__ar_props(a, op0) & GN__AR_FR) || !gn__ar_unary_elementwise(a, op0)) return false;
    for (uint32_t i = 0; i < n; i++) {
        gn_id op = v[i].node;
        gn__node *on = gn__ar_node(a, op);
        if (!gn__ar_same_device(a, op, root) || on->op != a->g->nodes[op0].op || gn__ar_preserved(a, op)) return false;
        if (on->n_in != 1 || on->n_use + on->n_cuse > 1 || !gn__ar_single_consumer_node(a, op)) return false;
        if (relu_fusable(a, op)) return false;
        if (gn__ar_dtype(a, (gn__edge){op, 0}) != gn__ar_dtype(a, on->in[0])) return false;
    }
    return true;
}

static gn_status add_ctrls(gn__ar *a, gn_id dst, const link *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) GN_TRY(gn__ar_forward_ctrl(a, dst, v[i].node));
    return GN_OK;
}

static gn_status hoist_concat(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_HOIST_CWISE_UNARY_CHAINS };
    int64_t N = gn__ar_int_attr(a, n, "N", 0);
    uint32_t first = gn__ar_op(a, n) == GN__AR_OP_Concat ? 1 : 0;
    gn__node *nn = gn__ar_node(a, n);
    if (N < 2 || (uint64_t)N + first > nn->n_in) return GN_OK;
    for (uint32_t i = first; i < first + N; i++)
        for (uint32_t j = first; j < i; j++)
            if (edge_eq(nn->in[i], nn->in[j])) return GN_OK;
    uint32_t cnt = (uint32_t)N;
    link *cur = calloc(cnt, sizeof *cur), *tails = calloc(cnt, sizeof *tails);
    if (!cur || !tails) {
        free(cur);
        free(tails);
        return nomem(a);
    }
    gn_status s = GN_OK;
    bool stop = false;
    for (uint32_t i = 0; i < cnt; i++) {
        gn__edge e = gn__ar_in(a, n, first + i);
        cur[i] = (link){e.node, first + i};
        if (e.index != 0) stop = true;
    }
    uint32_t prefix = 0;
    while (!stop && safe_to_hoist(a, n, cur, cnt)) {
        prefix++;
        memcpy(tails, cur, cnt * sizeof *cur);
        for (uint32_t i = 0; i < cnt && !stop; i++) {
            gn__edge e = gn__ar_in(a, tails[i].node, 0);
            if (e.index != 0) stop = true;
            cur[i].node = e.node;
        }
    }
    if (prefix == 0) goto out;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the concat is preserved");
        goto out;
    }
    {
        gn_id top = gn__ar_in(a, n, first).node; /* the first chain, reused after the concat */
        gn_id bottom = tails[0].node;
        s = add_ctrls(a, n, tails, cnt);
        /* every chain op's control inputs, at every level: walk each chain again */
        for (uint32_t i = 0; i < cnt && s == GN_OK; i++) {
            gn_id op = gn__ar_in(a, n, first + i).node;
            for (uint32_t l = 0; l < prefix && s == GN_OK; l++) {
                s = gn__ar_forward_ctrl(a, n, op);
                op = gn__ar_in(a, op, 0).node;
            }
        }
        for (uint32_t i = 0; i < cnt && s == GN_OK; i++)
            s = gn__ar_set_input(a, n, tails[i].port, gn__ar_in(a, tails[i].node, 0));
        if (s == GN_OK) s = gn__ar_replace(a, n, (gn__edge){top, 0});
        if (s == GN_OK) s = gn__ar_set_input(a, bottom, 0, (gn__edge){n, 0});
        /* the reused chain now carries the concat's shape */
        const gn__ar_info *ci = gn__ar_info_of(a, (gn__edge){n, 0});
        gn__ar_info cinfo = ci ? *ci : (gn__ar_info){0, {-1, NULL}};
        gn_id op = top;
        for (uint32_t l = 0; l < prefix && s == GN_OK; l++) {
            if (ci) s = gn__ar_set_info(a, op, cinfo.dtype, &cinfo.s);
            if (s == GN_OK) s = gn__ar_push(a, op);
            if (l + 1 < prefix) op = gn__ar_in(a, op, 0).node;
        }
        if (s == GN_OK) s = gn__ar_push(a, n);
        if (s == GN_OK) {
            gn__ar_rewrote(a, P, n, "%u %s op%s common to %u inputs moved after the concat (reusing '%s')", prefix,
                           OPN(a, top), prefix == 1 ? "" : "s", cnt, NM(a, top));
            r->stop = true;
        }
    }
out:
    free(cur);
    free(tails);
    return s;
}

static gn_status hoist_split(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_HOIST_CWISE_UNARY_CHAINS };
    int64_t ns = gn__ar_int_attr(a, n, "num_split", 0);
    gn__node *nn = gn__ar_node(a, n);
    if (ns < 2 || (a->flags[n] & GN__AR_SPLIT_DONE)) return GN_OK;
    if (nn->n_use > (uint64_t)ns || nn->n_cuse > 0 || nn->n_use == 0) return GN_OK;
    uint32_t vslot = gn__ar_op(a, n) == GN__AR_OP_SplitV ? 0 : 1;
    if (vslot >= nn->n_in) return GN_OK;
    /* the first op after each output */
    link *cur = calloc(nn->n_use, sizeof *cur), *tails = calloc(nn->n_use, sizeof *tails);
    if (!cur || !tails) {
        free(cur);
        free(tails);
        return nomem(a);
    }
    gn_status s = GN_OK;
    uint32_t cnt = 0;
    for (uint32_t i = 0; i < nn->n_use; i++) {
        gn_id c = nn->use[i].node;
        gn__edge e0 = gn__ar_in(a, c, 0);
        if (e0.node != n) {
            cnt = 0;
            goto out;
        }
        bool dup = false;
        for (uint32_t j = 0; j < cnt; j++) dup = dup || cur[j].node == c;
        if (!dup) cur[cnt++] = (link){c, e0.index};
    }
    link_sort(a, cur, cnt);
    uint32_t prefix = 0, ntails = 0;
    while (cnt && safe_to_hoist(a, n, cur, cnt)) {
        prefix++;
        memcpy(tails, cur, cnt * sizeof *cur);
        ntails = cnt;
        /* advance: the single consumer of each op, which must read it as input 0 */
        bool stop = false;
        uint32_t nc = 0;
        for (uint32_t i = 0; i < ntails && !stop; i++) {
            gn__node *tn = gn__ar_node(a, tails[i].node);
            if (tn->n_cuse) stop = true;
            for (uint32_t k = 0; k < tn->n_use && !stop; k++) {
                gn_id c = tn->use[k].node;
                if (gn__ar_in(a, c, 0).node != tails[i].node) stop = true;
                else cur[nc++] = (link){c, tails[i].port};
            }
        }
        if (stop) break;
        cnt = nc;
        link_sort(a, cur, cnt);
    }
    if (prefix == 0) goto out;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the split is preserved");
        goto out;
    }
    {
        /* copy the chain of the first tail before the split, in the same order */
        gn_id *chain = calloc(prefix, sizeof *chain);
        if (!chain) {
            s = nomem(a);
            goto out;
        }
        gn_id op = tails[0].node;
        for (uint32_t l = prefix; l-- > 0;) {
            chain[l] = op;
            op = gn__ar_in(a, op, 0).node;
        }
        gn__edge x = gn__ar_in(a, n, vslot);
        const gn__ar_info *xi = gn__ar_info_of(a, x);
        gn__ar_info xinfo = xi ? *xi : (gn__ar_info){0, {-1, NULL}};
        gn__edge prev = x;
        gn_id head = GN_NONE;
        for (uint32_t l = 0; l < prefix && s == GN_OK; l++) {
            gn_id cp = GN_NONE;
            s = gn__ar_copy_node(a, chain[l], gn__ar_name(a, n, "HoistCWiseUnaryChainsStage", NM(a, chain[l])), &cp);
            if (s == GN_OK) s = gn__node_set_input(a->g, cp, 0, prev);
            if (s == GN_OK && xi) s = gn__ar_set_info(a, cp, xinfo.dtype, &xinfo.s);
            if (l == 0) head = cp;
            prev = (gn__edge){cp, 0};
        }
        free(chain);
        /* every hoisted op's control inputs go to the head of the new chain */
        for (uint32_t i = 0; i < ntails && s == GN_OK; i++) {
            gn_id t = tails[i].node;
            for (uint32_t l = 0; l < prefix && s == GN_OK; l++) {
                s = gn__ar_forward_ctrl(a, head, t);
                t = gn__ar_in(a, t, 0).node;
            }
        }
        if (s == GN_OK) s = gn__ar_set_input(a, n, vslot, prev);
        for (uint32_t i = 0; i < ntails && s == GN_OK; i++)
            s = gn__ar_replace(a, tails[i].node, (gn__edge){n, tails[i].port});
        if (s == GN_OK) s = gn__ar_push(a, n);
        if (s == GN_OK) {
            a->flags[n] |= GN__AR_SPLIT_DONE;
            gn__ar_rewrote(a, P, n, "%u %s op%s common to the outputs moved before the split", prefix,
                           OPN(a, prev.node), prefix == 1 ? "" : "s");
            r->stop = true;
        }
    }
out:
    free(cur);
    free(tails);
    return s;
}

gn_status gn__ar_hoist_cwise_unary_chains(gn__ar *a, gn_id n, gn__ar_res *r)
{
    uint32_t op = gn__ar_op(a, n);
    if (op == GN__AR_OP_Concat || op == GN__AR_OP_ConcatV2) return hoist_concat(a, n, r);
    if (op == GN__AR_OP_Split || op == GN__AR_OP_SplitV) return hoist_split(a, n, r);
    return GN_OK;
}

/* ==== 22. convert_sqrt_div_to_rsqrt_mul ============================================================================ */
gn_status gn__ar_sqrt_div_to_rsqrt_mul(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_SQRT_DIV_TO_RSQRT_MUL };
    (void)r;
    uint32_t op = gn__ar_op(a, n);
    if ((op != GN__AR_OP_RealDiv && op != GN__AR_OP_Div && op != GN__AR_OP_TruncateDiv && op != GN__AR_OP_Xdivy) ||
        gn__ar_node(a, n)->n_in != 2)
        return GN_OK;
    gn__edge ye = gn__ar_in(a, n, 1);
    gn_id y = ye.node;
    if (gn__ar_op(a, y) != GN__AR_OP_Sqrt || ye.index != 0) return GN_OK;
    if (gn__ar_preserved(a, y)) {
        gn__ar_refuse(a, P, n, "Sqrt '%s' is preserved", NM(a, y));
        return GN_OK;
    }
    if (gn__ar_node(a, y)->n_use != 1) {
        gn__ar_refuse(a, P, n, "Sqrt '%s' has other consumers", NM(a, y));
        return GN_OK;
    }
    const char *was = OPN(a, n);
    bool xdivy = op == GN__AR_OP_Xdivy;
    gn__ar_rewrote(a, P, n, "%s by Sqrt '%s' -> %s by Rsqrt", was, NM(a, y), xdivy ? "MulNoNan" : "Mul");
    if (xdivy) {
        gn__edge x = gn__ar_in(a, n, 0);
        GN_TRY(gn__node_set_input(a->g, n, 0, ye));
        GN_TRY(gn__node_set_input(a->g, n, 1, x));
    }
    GN_TRY(gn__ar_set_op(a, n, xdivy ? "MulNoNan" : "Mul"));
    GN_TRY(gn__ar_set_op(a, y, "Rsqrt"));
    GN_TRY(gn__ar_push(a, n));
    GN_TRY(gn__ar_push(a, y));
    return GN_OK;
}

/* ==== 23. remove_idempotent ========================================================================================= */
gn_status gn__ar_remove_idempotent(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_IDEMPOTENT };
    gn__node *nn = gn__ar_node(a, n);
    if (nn->n_in != 1 || nn->n_ctrl != 0 || !gn__ar_idempotent(a, n)) return GN_OK;
    gn__edge ie = nn->in[0];
    if (a->g->nodes[ie.node].op != nn->op || !gn__ar_same_device(a, n, ie.node)) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the outer %s is preserved", OPN(a, n));
        return GN_OK;
    }
    gn__ar_rewrote(a, P, n, "%s of %s '%s'", OPN(a, n), OPN(a, ie.node), NM(a, ie.node));
    r->repl = true;
    r->to = ie;
    r->stop = true;
    return GN_OK;
}

/* ==== 24. convert_pow ================================================================================================= */
gn_status gn__ar_convert_pow(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_CONVERT_POW };
    (void)r;
    if (gn__ar_op(a, n) != GN__AR_OP_Pow || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge xe = gn__ar_in(a, n, 0), ye = gn__ar_in(a, n, 1);
    const gn__ar_shape *xs = shape_of(a, xe), *os = shape_of(a, (gn__edge){n, 0});
    if (!xs || !os || ye.index != 0) return GN_OK;
    int32_t ydt = 0;
    double re = 0, im = 0;
    bool eq = gn__ar_const_all_equal(a, ye.node, &ydt, &re, &im);
    if (!eq || im != 0) return GN_OK;
    const char *to = NULL;
    if (re == 2) to = "Square";
    else if (re == 3) to = "Mul";
    else if (re == 1) to = "Identity";
    else if (re == 0.5) to = "Sqrt";
    else if (re == 0) to = "Const";
    else if (re == -0.5) to = "Rsqrt";
    else if (re == -1) to = "Reciprocal";
    if (!to) return GN_OK;
    int32_t T = gn__ar_type_attr(a, n, "T");
    if (!gn__ar_shape_equal(xs, os)) {
        gn__ar_refuse(a, P, n, "the exponent broadcasts the base");
        return GN_OK;
    }
    if ((re == 0.5 || re == -0.5 || re == -1) && !gn__ar_float_dtype(T) && !gn__dtype_is_complex(T)) {
        gn__ar_refuse(a, P, n, "exponent %g on %s", re, gn__dtype_name(T));
        return GN_OK;
    }
    if (re == 3 && !gn__ar_on_cpu(a, n)) {
        gn__ar_refuse(a, P, n, "x^3 -> x*Square(x) only on a CPU device (as Grappler)");
        return GN_OK;
    }
    if (re == 0 && (!gn__ar_shape_fully_known(os) ||
                    !(T == GN__AR_I32 || T == GN__AR_I64 || T == GN__AR_F32 || T == GN__AR_F64 || T == GN__AR_F16 ||
                      gn__dtype_is_complex(T)))) {
        gn__ar_refuse(a, P, n, "x^0: the shape is not fully known or the dtype is not handled");
        return GN_OK;
    }
    if (re == 3) {
        gn_id sq = GN_NONE;
        if (gn__ar_name_taken(a, n, "ConvertPow", "_inner")) return GN_OK;
        GN_TRY(gn__ar_copy_node(a, n, gn__ar_name(a, n, "ConvertPow", "_inner"), &sq));
        GN_TRY(gn__ar_set_op(a, sq, "Square"));
        GN_TRY(gn__node_remove_input(a->g, sq, 1));
        GN_TRY(copy_info(a, sq, xe));
        GN_TRY(gn__ar_set_input(a, n, 1, (gn__edge){sq, 0}));
        GN_TRY(gn__ar_set_op(a, n, "Mul"));
    } else if (re == 0) {
        gn__tensor ones;
        GN_TRY(make_tensor(a, T, os->rank, os->d, &ones));
        int64_t cnt = gn__tensor_numel(&ones);
        for (int64_t i = 0; i < cnt; i++) set_elem(&ones, i, 1.0);
        gn_status s = gn__ar_set_type(a, n, "dtype", T);
        if (s == GN_OK) s = gn__ar_set_tensor(a, n, "value", &ones);
        gn__tensor_release(&ones);
        GN_TRY(s);
        gn__ar_forget_type(a, n);
        GN_TRY(gn__node_remove_attr(a->g, n, "T"));
        GN_TRY(gn__node_remove_input(a->g, n, 1));
        GN_TRY(gn__node_remove_input(a->g, n, 0));
        GN_TRY(gn__ar_maybe_dead(a, xe.node));
        GN_TRY(gn__ar_maybe_dead(a, ye.node));
        GN_TRY(gn__ar_add_ctrl_on(a, n, xe));
        GN_TRY(gn__ar_set_op(a, n, "Const"));
    } else {
        GN_TRY(gn__node_remove_input(a->g, n, 1));
        GN_TRY(gn__ar_maybe_dead(a, ye.node));
        GN_TRY(gn__ar_set_op(a, n, to));
    }
    GN_TRY(gn__ar_add_ctrl_on(a, n, ye));
    GN_TRY(gn__ar_push(a, n));
    gn__ar_rewrote(a, P, n, "Pow(x, %g) -> %s", re, re == 3 ? "Mul(x, Square(x))" : to);
    return GN_OK;
}

/* ==== 25. convert_log1p ================================================================================================== */
static bool all_ones_float(gn__ar *a, gn_id id)
{
    int32_t dt = 0;
    double re = 0, im = 0;
    bool eq = gn__ar_const_all_equal(a, id, &dt, &re, &im);
    return (gn__ar_float_dtype(dt) || gn__dtype_is_complex(dt)) && eq && re == 1 && im == 0;
}

gn_status gn__ar_convert_log1p(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_CONVERT_LOG1P };
    if (gn__ar_op(a, n) != GN__AR_OP_Log || gn__ar_node(a, n)->n_in != 1) return GN_OK;
    gn__edge ae = gn__ar_in(a, n, 0);
    gn_id add = ae.node;
    if (!gn__ar_is_add(a, add) || ae.index != 0 || gn__ar_node(a, add)->n_in != 2) return GN_OK;
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t j = 1 - i;
        gn__edge te = gn__ar_in(a, add, i), ce = gn__ar_in(a, add, j);
        const gn__ar_shape *ts = shape_of(a, te), *cs = shape_of(a, ce);
        gn__ar_shape bs;
        if (!ts || !cs || !gn__ar_shape_fully_known(cs) || !gn__ar_broadcast(a, ts, cs, &bs) ||
            !gn__ar_shape_equal(ts, &bs))
            continue;
        if (ce.index != 0 || !all_ones_float(a, ce.node)) continue;
        if (gn__ar_preserved(a, add)) {
            gn__ar_refuse(a, P, n, "Add '%s' is preserved", NM(a, add));
            return GN_OK;
        }
        GN_TRY(gn__ar_set_input(a, n, 0, te));
        GN_TRY(gn__ar_add_ctrl_on(a, n, ce));
        GN_TRY(gn__ar_forward_ctrl(a, n, add));
        GN_TRY(gn__ar_set_op(a, n, "Log1p"));
        GN_TRY(gn__ar_push(a, n));
        gn__ar_rewrote(a, P, n, "Log of Add '%s' of ones -> Log1p", NM(a, add));
        r->stop = true;
        return GN_OK;
    }
    return GN_OK;
}

/* ==== 26. convert_log_softmax ================================================================================================ */
gn_status gn__ar_convert_log_softmax(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_CONVERT_LOG_SOFTMAX };
    (void)r;
    if (gn__ar_op(a, n) != GN__AR_OP_Log || gn__ar_node(a, n)->n_in != 1) return GN_OK;
    gn__edge se = gn__ar_in(a, n, 0);
    gn_id sm = se.node;
    if (gn__ar_op(a, sm) != GN__AR_OP_Softmax || se.index != 0 || gn__ar_node(a, sm)->n_in != 1) return GN_OK;
    if (gn__ar_preserved(a, sm)) {
        gn__ar_refuse(a, P, n, "Softmax '%s' is preserved", NM(a, sm));
        return GN_OK;
    }
    if (gn__ar_node(a, sm)->n_use != 1) {
        gn__ar_refuse(a, P, n, "Softmax '%s' has other consumers", NM(a, sm));
        return GN_OK;
    }
    GN_TRY(gn__ar_set_input(a, n, 0, gn__ar_in(a, sm, 0)));
    GN_TRY(gn__ar_forward_ctrl(a, n, sm));
    GN_TRY(gn__ar_set_op(a, n, "LogSoftmax"));
    GN_TRY(gn__ar_push(a, n));
    gn__ar_rewrote(a, P, n, "Log of Softmax '%s' -> LogSoftmax", NM(a, sm));
    return GN_OK;
}

/* ==== 27. optimize_max_or_min_of_monotonic =================================================================================== */
gn_status gn__ar_max_min_of_monotonic(gn__ar *a, gn_id red, gn__ar_res *r)
{
    enum { P = GN__AR_P_MAX_MIN_OF_MONOTONIC };
    uint32_t op = gn__ar_op(a, red);
    bool pool = op == GN__AR_OP_MaxPool || op == GN__AR_OP_MaxPoolV2 || op == GN__AR_OP_MaxPool3D;
    bool arg = op == GN__AR_OP_ArgMax || op == GN__AR_OP_ArgMin;
    if (!pool && !arg && op != GN__AR_OP_Max && op != GN__AR_OP_Min) return GN_OK;
    if (gn__ar_node(a, red)->n_in < 1) return GN_OK;
    gn__edge fe = gn__ar_in(a, red, 0);
    gn_id f = fe.node;
    uint32_t fp = gn__ar_props(a, f);
    if (!(fp & (GN__AR_MI | GN__AR_MD)) || fe.index != 0 || gn__ar_node(a, f)->n_in != 1) return GN_OK;
    bool inc = (fp & GN__AR_MI) != 0;
    if (gn__ar_preserved(a, red) || gn__ar_preserved(a, f)) {
        gn__ar_refuse(a, P, red, "'%s' is preserved", NM(a, gn__ar_preserved(a, red) ? red : f));
        return GN_OK;
    }
    if (gn__ar_node(a, f)->n_use != 1 || !gn__ar_single_consumer_node(a, f)) {
        gn__ar_refuse(a, P, red, "'%s' has other consumers", NM(a, f));
        return GN_OK;
    }
    /* a control edge from f (to the reduction itself or elsewhere) would make a
     * cycle once f consumes the reduction, or order its node before the wrong one */
    if (gn__ar_node(a, f)->n_cuse) {
        gn__ar_refuse(a, P, red, "'%s' has control consumers", NM(a, f));
        return GN_OK;
    }
    if (!inc && pool) {
        gn__ar_refuse(a, P, red, "%s decreases and there is no MinPool", OPN(a, f));
        return GN_OK;
    }
    if (relu_fusable(a, f)) {
        gn__ar_refuse(a, P, red, "%s '%s' is left for the remapper to fuse", OPN(a, f), NM(a, f));
        return GN_OK;
    }
    gn__edge x = gn__ar_in(a, f, 0);
    if (gn__ar_dtype(a, (gn__edge){f, 0}) != gn__ar_dtype(a, x) || !gn__ar_dtype(a, x)) {
        gn__ar_refuse(a, P, red, "'%s' changes the dtype", NM(a, f));
        return GN_OK;
    }
    if (arg) {
        /* ArgMax/ArgMin return the first index of the extreme: dropping f is
         * only right when f never maps two different values of x to the same
         * value, or the ties it makes pick another index. Neg of a float is
         * exact; Sign, Relu, Relu6, Floor, Ceil, Rint have flat stretches;
         * the others round (Tanh(9) == Tanh(10) in float32, Exp underflows,
         * Sqrt and Log merge neighbouring floats); Neg of an integer wraps at
         * the most negative value. Grappler drops any monotonic f here. */
        int32_t xdt = gn__ar_dtype(a, x);
        bool is_float = gn__dtype_is_float(xdt);
        if (gn__ar_op(a, f) != GN__AR_OP_Neg || !is_float) {
            static const char *const flat[] = {"Sign", "Relu", "Relu6", "Floor", "Ceil", "Rint", "Round", NULL};
            bool is_flat = false;
            for (size_t i = 0; flat[i]; i++) is_flat |= strcmp(OPN(a, f), flat[i]) == 0;
            if (gn__ar_op(a, f) == GN__AR_OP_Neg)
                gn__ar_refuse(a, P, red,
                              "%s(Neg(x)) kept: Neg of an integer is not strictly monotonic (the most negative value "
                              "is its own negation), and %s(x) would return another index",
                              OPN(a, red), inc ? OPN(a, red) : (op == GN__AR_OP_ArgMax ? "ArgMin" : "ArgMax"));
            else if (is_flat)
                gn__ar_refuse(a, P, red,
                              "%s(%s(x)) kept: %s is not strictly monotonic, and the ties it makes decide which index "
                              "%s returns",
                              OPN(a, red), OPN(a, f), OPN(a, f), OPN(a, red));
            else
                gn__ar_refuse(a, P, red,
                              "%s(%s(x)) kept: %s maps neighbouring values of x to the same value in floating point "
                              "(it is not strictly monotonic there), and the ties it makes decide which index %s "
                              "returns",
                              OPN(a, red), OPN(a, f), OPN(a, f), OPN(a, red));
            return GN_OK;
        }
    }
    static const char *const flip[][2] = {{"Max", "Min"}, {"Min", "Max"}, {"ArgMax", "ArgMin"}, {"ArgMin", "ArgMax"}};
    const char *now = OPN(a, red);
    if (!inc) {
        for (size_t i = 0; i < 4; i++)
            if (strcmp(now, flip[i][0]) == 0) {
                now = flip[i][1];
                break;
            }
    }
    char was[64];
    snprintf(was, sizeof was, "%s", OPN(a, red));
    char fop[64];
    snprintf(fop, sizeof fop, "%s", OPN(a, f));
    GN_TRY(gn__ar_set_input(a, red, 0, x));
    if (!inc) GN_TRY(gn__ar_set_op(a, red, now));
    if (arg) {
        /* the index of the extreme is that of x's: f is dropped */
        GN_TRY(gn__ar_forward_ctrl(a, red, f));
        gn__ar_rewrote(a, P, red, "%s(%s(x)) -> %s(x)", was, fop, now);
    } else {
        const gn__ar_info *ri = gn__ar_info_of(a, (gn__edge){red, 0});
        gn__ar_info rinfo = ri ? *ri : (gn__ar_info){0, {-1, NULL}};
        GN_TRY(gn__ar_set_input(a, f, 0, (gn__edge){red, 0}));
        GN_TRY(gn__ar_replace(a, red, (gn__edge){f, 0}));
        if (ri) GN_TRY(gn__ar_set_info(a, f, rinfo.dtype, &rinfo.s));
        gn__ar_rewrote(a, P, red, "%s(%s(x)) -> %s(%s(x)) (now '%s')", was, fop, fop, now, NM(a, f));
    }
    GN_TRY(gn__ar_push(a, red));
    GN_TRY(gn__ar_push(a, f));
    r->stop = true;
    return GN_OK;
}

/* ==== 28. convert_expm1 ====================================================================================================== */
gn_status gn__ar_convert_expm1(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_CONVERT_EXPM1 };
    if (gn__ar_op(a, n) != GN__AR_OP_Sub || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge ee = gn__ar_in(a, n, 0), ce = gn__ar_in(a, n, 1);
    gn_id ex = ee.node;
    if (gn__ar_op(a, ex) != GN__AR_OP_Exp || ee.index != 0 || gn__ar_node(a, ex)->n_in != 1) return GN_OK;
    const gn__ar_shape *ts = shape_of(a, ee), *cs = shape_of(a, ce);
    gn__ar_shape bs;
    if (!ts || !cs || !gn__ar_broadcast(a, ts, cs, &bs) || !gn__ar_shape_equal(ts, &bs)) return GN_OK;
    if (ce.index != 0 || !all_ones_float(a, ce.node)) return GN_OK;
    if (gn__ar_preserved(a, ex)) {
        gn__ar_refuse(a, P, n, "Exp '%s' is preserved", NM(a, ex));
        return GN_OK;
    }
    GN_TRY(gn__ar_set_input(a, n, 0, gn__ar_in(a, ex, 0)));
    GN_TRY(gn__node_remove_input(a->g, n, 1));
    GN_TRY(gn__ar_maybe_dead(a, ce.node));
    GN_TRY(gn__ar_add_ctrl_on(a, n, ce));
    GN_TRY(gn__ar_forward_ctrl(a, n, ex));
    GN_TRY(gn__ar_set_op(a, n, "Expm1"));
    GN_TRY(gn__ar_push(a, n));
    gn__ar_rewrote(a, P, n, "Exp '%s' minus ones -> Expm1", NM(a, ex));
    r->stop = true;
    return GN_OK;
}

/* ==== 29. unary_ops_composition ================================================================================================ */
static bool uoc_supported(gn__ar *a, gn_id id, int32_t dt)
{
    uint32_t p = gn__ar_props(a, id);
    uint32_t need = dt == GN__AR_F32 ? GN__AR_UF : dt == GN__AR_F16 ? GN__AR_UH : dt == GN__AR_F64 ? GN__AR_UD : 0;
    return need && (p & need) && gn__ar_type_attr(a, id, "T") == dt;
}

static bool uoc_can(gn__ar *a, gn_id id, int32_t dt, bool check_device)
{
    gn__node *n = gn__ar_node(a, id);
    if (!uoc_supported(a, id, dt) || gn__ar_preserved(a, id) || (a->flags[id] & GN__AR_FUSED)) return false;
    if (n->n_in != 1 || n->n_ctrl || n->n_cuse) return false;
    return !check_device || gn__ar_on_cpu(a, id);
}

gn_status gn__ar_unary_ops_composition(gn__ar *a, gn_id root, gn__ar_res *r)
{
    enum { P = GN__AR_P_UNARY_OPS_COMPOSITION };
    int32_t dt = gn__ar_type_attr(a, root, "T");
    if (!uoc_can(a, root, dt, false)) return GN_OK;
    gn__edge e0 = gn__ar_in(a, root, 0);
    if (e0.index != 0 || gn__ar_node(a, e0.node)->n_use != 1 || !uoc_can(a, e0.node, dt, false)) return GN_OK;
    if (!gn__ar_on_cpu(a, root) || !gn__ar_on_cpu(a, e0.node)) {
        gn__ar_refuse(a, P, root, "needs a device named CPU (the fused kernel is CPU-only; as Grappler)");
        return GN_OK;
    }
    if (!a->allow_non_diff) {
        gn__ar_refuse(a, P, root, "the function is differentiated (non-differentiable rewrite)");
        return GN_OK;
    }
    char *cname = NULL;
    size_t rl = strlen(NM(a, root));
    cname = malloc(rl + 32);
    if (!cname) return nomem(a);
    snprintf(cname, rl + 32, "%s/unary_ops_composition", NM(a, root));
    if (gn__graph_find(a->g, cname) != GN_NONE) {
        free(cname);
        return GN_OK;
    }
    uint32_t cap = 8, cnt = 0;
    gn_id *ops = malloc(cap * sizeof *ops);
    if (!ops) {
        free(cname);
        return nomem(a);
    }
    ops[cnt++] = root;
    gn_id cur = root;
    gn_status s = GN_OK;
    for (;;) {
        gn__edge e = gn__ar_in(a, cur, 0);
        if (e.index != 0 || gn__ar_node(a, e.node)->n_use != 1 || !uoc_can(a, e.node, dt, true)) break;
        if (cnt == cap) {
            cap *= 2;
            gn_id *p = realloc(ops, cap * sizeof *p);
            if (!p) {
                s = nomem(a);
                break;
            }
            ops = p;
        }
        ops[cnt++] = e.node;
        cur = e.node;
    }
    if (s != GN_OK || cnt < 2) goto out;
    {
        const char **names = malloc(cnt * sizeof *names);
        if (!names) {
            s = nomem(a);
            goto out;
        }
        for (uint32_t i = 0; i < cnt; i++) names[i] = OPN(a, ops[cnt - 1 - i]);
        gn__edge x = gn__ar_in(a, ops[cnt - 1], 0);
        gn_id c = GN_NONE;
        s = gn__ar_add_node(a, cname, "_UnaryOpsComposition", root, &c);
        if (s == GN_OK) s = gn__node_add_input(a->g, c, x);
        if (s == GN_OK) s = gn__ar_set_type(a, c, "T", dt);
        if (s == GN_OK) {
            /* names may point into the string table, which grows: copy them first */
            char **copy = malloc(cnt * sizeof *copy);
            bool okc = copy != NULL;
            for (uint32_t i = 0; okc && i < cnt; i++) {
                copy[i] = strdup(names[i]);
                okc = copy[i] != NULL;
                if (!okc) {
                    for (uint32_t j = 0; j < i; j++) free(copy[j]);
                }
            }
            if (!okc) {
                free(copy);
                s = nomem(a);
            } else {
                s = gn__ar_set_strings(a, c, "op_names", (const char *const *)copy, cnt);
                for (uint32_t i = 0; i < cnt; i++) free(copy[i]);
                free(copy);
            }
        }
        free(names);
        if (s == GN_OK) s = copy_info(a, c, (gn__edge){root, 0});
        if (s == GN_OK) {
            for (uint32_t i = 0; i < cnt; i++) a->flags[ops[i]] |= GN__AR_FUSED;
            gn__ar_rewrote(a, P, root, "%u unary ops -> '%s'", cnt, NM(a, c));
            r->repl = true;
            r->to = (gn__edge){c, 0};
            r->stop = true;
        }
    }
out:
    free(ops);
    free(cname);
    return s;
}

/* ==== 30. remove_stack_slice_same_axis ========================================================================================== */
/* The element of the packed axis a Slice / StridedSlice takes, when it takes
 * exactly one element there and everything elsewhere. */
static bool slice_axis_pick(gn__ar *a, gn_id n, const gn__ar_shape *ps, int64_t axis, int64_t count, int64_t *pick,
                            bool *expand)
{
    int32_t rank = ps->rank;
    if (gn__ar_op(a, n) == GN__AR_OP_Slice) {
        int64_t b[GN__MAX_RANK], sz[GN__MAX_RANK];
        int32_t nb = 0, nsz = 0;
        if (gn__ar_node(a, n)->n_in != 3) return false;
        if (!gn__ar_const_ints(a, gn__ar_in(a, n, 1).node, b, GN__MAX_RANK, &nb) ||
            !gn__ar_const_ints(a, gn__ar_in(a, n, 2).node, sz, GN__MAX_RANK, &nsz) || nb != nsz || nb != rank)
            return false;
        if (sz[axis] != 1) return false;
        for (int32_t i = 0; i < rank; i++)
            if (i != axis && (b[i] != 0 || !(sz[i] == -1 || (ps->d[i] >= 0 && sz[i] == ps->d[i])))) return false;
        *pick = b[axis];
        *expand = true;
        return *pick >= 0 && *pick < count;
    }
    if (gn__ar_node(a, n)->n_in != 4) return false;
    int64_t bm = gn__ar_int_attr(a, n, "begin_mask", 0), em = gn__ar_int_attr(a, n, "end_mask", 0);
    int64_t elm = gn__ar_int_attr(a, n, "ellipsis_mask", 0), nam = gn__ar_int_attr(a, n, "new_axis_mask", 0);
    int64_t sam = gn__ar_int_attr(a, n, "shrink_axis_mask", 0);
    if (elm || nam) return false;
    int64_t b[GN__MAX_RANK], e[GN__MAX_RANK], st[GN__MAX_RANK];
    int32_t nb = 0, ne = 0, nst = 0;
    if (!gn__ar_const_ints(a, gn__ar_in(a, n, 1).node, b, GN__MAX_RANK, &nb) ||
        !gn__ar_const_ints(a, gn__ar_in(a, n, 2).node, e, GN__MAX_RANK, &ne) ||
        !gn__ar_const_ints(a, gn__ar_in(a, n, 3).node, st, GN__MAX_RANK, &nst) || nb != ne || nb != nst || nb > rank ||
        axis >= nb)
        return false;
    if (sam != 0 && sam != ((int64_t)1 << axis)) return false;
    for (int32_t i = 0; i < nb; i++) {
        if (st[i] != 1) return false;
        if (i == axis) continue;
        bool full_begin = (bm >> i & 1) || b[i] == 0 || (ps->d[i] >= 0 && b[i] == -ps->d[i]);
        bool full_end = (em >> i & 1) || (ps->d[i] >= 0 && e[i] >= ps->d[i]);
        if (!full_begin || !full_end) return false;
    }
    /* a shrunk axis ignores the masks (TensorFlow's ValidateStridedSliceOp) */
    int64_t bv = (!sam && (bm >> axis & 1)) ? 0 : b[axis];
    if (bv < 0) bv += count;
    if (bv < 0 || bv >= count) return false;
    if (sam) {
        *pick = bv;
        *expand = false;
        return true;
    }
    int64_t ev = (em >> axis & 1) ? count : e[axis];
    if (ev < 0) ev += count;
    if (ev > count) ev = count;
    if (ev != bv + 1) return false;
    *pick = bv;
    *expand = true;
    return true;
}

gn_status gn__ar_remove_stack_slice(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_STACK_SLICE };
    uint32_t op = gn__ar_op(a, n);
    if ((op != GN__AR_OP_StridedSlice && op != GN__AR_OP_Slice) || gn__ar_node(a, n)->n_in < 3) return GN_OK;
    gn__edge pe = gn__ar_in(a, n, 0);
    gn_id pack = pe.node;
    if (gn__ar_op(a, pack) != GN__AR_OP_Pack || pe.index != 0) return GN_OK;
    const gn__ar_shape *ps = shape_of(a, pe);
    if (!ps) return GN_OK;
    int64_t axis = gn__ar_int_attr(a, pack, "axis", 0);
    if (axis < 0) axis += ps->rank;
    if (axis < 0 || axis >= ps->rank) return GN_OK;
    int64_t pick = 0;
    bool expand = false;
    if (!slice_axis_pick(a, n, ps, axis, gn__ar_node(a, pack)->n_in, &pick, &expand)) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the slice is preserved");
        return GN_OK;
    }
    gn__edge xe = gn__ar_in(a, pack, (uint32_t)pick);
    int32_t T = gn__ar_dtype(a, (gn__edge){n, 0});
    if (!T) T = gn__ar_type_attr(a, n, "T");
    gn_id out = GN_NONE;
    if (!expand) {
        GN_TRY(gn__ar_add_node(a, gn__ar_name(a, n, "RemoveStackStridedSliceSameAxis", NULL), "Identity", n, &out));
        GN_TRY(gn__node_add_input(a->g, out, xe));
        GN_TRY(gn__ar_set_type(a, out, "T", T));
    } else {
        gn__tensor t;
        GN_TRY(make_tensor(a, GN__AR_I32, 0, NULL, &t));
        ((int32_t *)t.data)[0] = (int32_t)axis;
        gn_id ax = GN_NONE;
        gn_status s = gn__ar_add_const(a, gn__ar_name(a, n, "RemoveStackStridedSliceSameAxis", "Axis"), &t, n, xe, &ax);
        gn__tensor_release(&t);
        GN_TRY(s);
        GN_TRY(gn__ar_add_node(a, gn__ar_name(a, n, "RemoveStackStridedSliceSameAxis", NULL), "ExpandDims", n, &out));
        GN_TRY(gn__node_add_input(a->g, out, xe));
        GN_TRY(gn__node_add_input(a->g, out, (gn__edge){ax, 0}));
        GN_TRY(gn__ar_set_type(a, out, "T", T));
        GN_TRY(gn__ar_set_type(a, out, "Tdim", GN__AR_I32));
    }
    GN_TRY(gn__ar_forward_ctrl(a, out, n));
    GN_TRY(gn__ar_forward_ctrl(a, out, pack));
    GN_TRY(copy_info(a, out, (gn__edge){n, 0}));
    gn__ar_rewrote(a, P, n, "takes input %lld of Pack '%s' -> %s '%s'", (long long)pick, NM(a, pack),
                   expand ? "ExpandDims" : "Identity", NM(a, out));
    r->repl = true;
    r->to = (gn__edge){out, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 31. simplify_embedding_lookup ========================================================================================== */
static bool is_sparse_segment(uint32_t op)
{
    return op == GN__AR_OP_SparseSegmentSum || op == GN__AR_OP_SparseSegmentSumWithNumSegments ||
           op == GN__AR_OP_SparseSegmentMean || op == GN__AR_OP_SparseSegmentMeanWithNumSegments ||
           op == GN__AR_OP_SparseSegmentSqrtN || op == GN__AR_OP_SparseSegmentSqrtNWithNumSegments;
}

static bool const_is_zero(gn__ar *a, gn_id id)
{
    int64_t v[1];
    int32_t n = 0;
    return gn__ar_const_ints(a, id, v, 1, &n) && n == 1 && v[0] == 0;
}

gn_status gn__ar_simplify_embedding_lookup(gn__ar *a, gn_id red, gn__ar_res *r)
{
    enum { P = GN__AR_P_SIMPLIFY_EMBEDDING_LOOKUP };
    if (!is_sparse_segment(gn__ar_op(a, red)) || gn__ar_node(a, red)->n_in < 3) return GN_OK;
    gn__edge ge = gn__ar_in(a, red, 0);
    gn_id gather = ge.node;
    uint32_t gop = gn__ar_op(a, gather);
    if ((gop != GN__AR_OP_Gather && gop != GN__AR_OP_GatherV2 && gop != GN__AR_OP_ResourceGather) || ge.index != 0 ||
        gn__ar_node(a, gather)->n_in < 2)
        return GN_OK;
    gn__edge ue = gn__ar_in(a, gather, 1);
    gn_id uniq = ue.node;
    uint32_t uop = gn__ar_op(a, uniq);
    if ((uop != GN__AR_OP_Unique && uop != GN__AR_OP_UniqueV2) || ue.index != 0) return GN_OK;
    gn__edge ie = gn__ar_in(a, red, 1);
    if (ie.node != uniq || ie.index != 1) return GN_OK;
    if (gn__ar_preserved(a, red) || gn__ar_preserved(a, gather) || gn__ar_preserved(a, uniq)) {
        gn__ar_refuse(a, P, red, "a node of the pattern is preserved");
        return GN_OK;
    }
    if (!gn__ar_same_device(a, red, gather) || !gn__ar_same_device(a, gather, uniq)) {
        gn__ar_refuse(a, P, red, "the Gather and Unique are on other devices");
        return GN_OK;
    }
    if ((gop == GN__AR_OP_GatherV2 &&
         (gn__ar_node(a, gather)->n_in < 3 || !const_is_zero(a, gn__ar_in(a, gather, 2).node) ||
          gn__ar_int_attr(a, gather, "batch_dims", 0) != 0)) ||
        (gop == GN__AR_OP_ResourceGather && gn__ar_int_attr(a, gather, "batch_dims", 0) != 0) ||
        (uop == GN__AR_OP_UniqueV2 &&
         (gn__ar_node(a, uniq)->n_in < 2 || !const_is_zero(a, gn__ar_in(a, uniq, 1).node)))) {
        gn__ar_refuse(a, P, red, "the Gather or Unique is not along axis 0");
        return GN_OK;
    }
    int32_t ut = gn__ar_type_attr(a, uniq, "T");
    if (ut != GN__AR_I32 && ut != GN__AR_I64) {
        gn__ar_refuse(a, P, red, "the ids are %s, not int32 or int64", ut ? gn__dtype_name(ut) : "of unknown dtype");
        return GN_OK;
    }
    gn__edge params = gn__ar_in(a, gather, 0);
    gn__edge data = params;
    if (gop == GN__AR_OP_ResourceGather) {
        gn_id rv = GN_NONE;
        int32_t dt = gn__ar_type_attr(a, gather, "dtype");
        GN_TRY(gn__ar_add_node(a, gn__ar_name(a, red, "SimplifyEmbeddingLookupStage", "ReadVar"), "ReadVariableOp",
                               params.node, &rv));
        GN_TRY(gn__node_add_input(a->g, rv, params));
        if (dt) GN_TRY(gn__ar_set_type(a, rv, "dtype", dt));
        const Tensorflow__AttrValue *cls = gn__node_attr(a->g, gather, "_class");
        if (cls) GN_TRY(gn__node_set_attr(a->g, rv, "_class", cls));
        data = (gn__edge){rv, 0};
    }
    GN_TRY(gn__ar_set_input(a, red, 0, data));
    GN_TRY(gn__ar_set_input(a, red, 1, gn__ar_in(a, uniq, 0)));
    GN_TRY(gn__ar_set_type(a, red, "Tidx", ut));
    GN_TRY(gn__ar_push(a, red));
    gn__ar_rewrote(a, P, red, "Gather '%s' of Unique '%s' bypassed", NM(a, gather), NM(a, uniq));
    r->stop = true;
    return GN_OK;
}

/* ==== 32. remove_cast_into_segment_reduction ====================================================================================== */
gn_status gn__ar_remove_cast_into_segment(gn__ar *a, gn_id red, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_CAST_INTO_SEGMENT };
    if (!is_sparse_segment(gn__ar_op(a, red)) || gn__ar_node(a, red)->n_in < 3) return GN_OK;
    static const char *const attr[2] = {"Tidx", "Tsegmentids"};
    const gn__opdef *op = gn__node_opdef(a->g, red);
    bool done = false;
    for (uint32_t k = 1; k <= 2; k++) {
        gn__edge ce = gn__ar_in(a, red, k);
        gn_id cast = ce.node;
        if (gn__ar_op(a, cast) != GN__AR_OP_Cast || ce.index != 0 || gn__ar_node(a, cast)->n_in != 1) continue;
        int32_t st = gn__ar_type_attr(a, cast, "SrcT");
        if (st != GN__AR_I32 && st != GN__AR_I64) continue;
        if (gn__ar_preserved(a, red) || gn__ar_preserved(a, cast)) {
            gn__ar_refuse(a, P, red, "'%s' is preserved", NM(a, gn__ar_preserved(a, red) ? red : cast));
            continue;
        }
        if (!op || !gn__opdef_attr(op, attr[k - 1])) {
            gn__ar_refuse(a, P, red, "%s has no attr %s here", OPN(a, red), attr[k - 1]);
            continue;
        }
        GN_TRY(gn__ar_set_input(a, red, k, gn__ar_in(a, cast, 0)));
        GN_TRY(gn__ar_set_type(a, red, attr[k - 1], st));
        gn__ar_rewrote(a, P, red, "Cast '%s' from %s dropped", NM(a, cast), gn__dtype_name(st));
        done = true;
    }
    if (done) {
        GN_TRY(gn__ar_push(a, red));
        r->stop = true;
    }
    return GN_OK;
}

/* ==== 33. fuse_squared_diff ========================================================================================================== */
gn_status gn__ar_fuse_squared_diff(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_FUSE_SQUARED_DIFF };
    if (gn__ar_op(a, n) != GN__AR_OP_Square || gn__ar_node(a, n)->n_in != 1) return GN_OK;
    gn__edge be = gn__ar_in(a, n, 0);
    gn_id b = be.node;
    if (gn__ar_op(a, b) != GN__AR_OP_Sub || be.index != 0 || gn__ar_node(a, b)->n_in != 2) return GN_OK;
    if (gn__ar_preserved(a, b)) {
        gn__ar_refuse(a, P, n, "Sub '%s' is preserved", NM(a, b));
        return GN_OK;
    }
    if (gn__ar_node(a, b)->n_use != 1) {
        gn__ar_refuse(a, P, n, "Sub '%s' has other consumers", NM(a, b));
        return GN_OK;
    }
    int32_t T = gn__ar_type_attr(a, b, "T");
    if (gn__dtype_is_complex(T)) {
        gn__ar_refuse(a, P, n, "SquaredDifference conjugates complex operands");
        return GN_OK;
    }
    int32_t od = gn__op_find("SquaredDifference", strlen("SquaredDifference"));
    const gn__opdef *sd = od >= 0 ? gn__op_at((uint32_t)od) : NULL;
    const gn__attrdef *ta = sd ? gn__opdef_attr(sd, "T") : NULL;
    Tensorflow__AttrValue v = gn__attr_type_value(T);
    gn__err e;
    gn__err_clear(&e);
    if (!T || !ta || gn__attr_check(sd, ta, &v, &e) != GN_OK) {
        gn__ar_refuse(a, P, n, "SquaredDifference does not take %s", T ? gn__dtype_name(T) : "this dtype");
        return GN_OK;
    }
    GN_TRY(gn__ar_set_op(a, b, "SquaredDifference"));
    GN_TRY(gn__ar_push(a, b));
    if (gn__ar_preserved(a, n)) {
        GN_TRY(gn__ar_set_op(a, n, "Identity"));
        GN_TRY(gn__ar_push(a, n));
        gn__ar_rewrote(a, P, n, "Square of Sub '%s' -> SquaredDifference (the Square, preserved, becomes Identity)",
                       NM(a, b));
        r->stop = true;
        return GN_OK;
    }
    gn__ar_rewrote(a, P, n, "Square of Sub '%s' -> SquaredDifference '%s'", NM(a, b), NM(a, b));
    r->repl = true;
    r->to = be;
    r->stop = true;
    return GN_OK;
}
