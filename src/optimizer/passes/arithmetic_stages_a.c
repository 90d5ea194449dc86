/* Arithmetic stages 1-12 of Grappler's pipeline: add_ops_rewrite,
 * fold_conjugate_into_transpose, fold_multiply_into_conv,
 * fold_transpose_into_matmul, hoist_common_factor, minimize_broadcasts,
 * remove_redundant_transpose, remove_involution, remove_redundant_bitcast,
 * remove_redundant_cast, replace_pack_with_tile_reshape, replace_mul_with_tile.
 * Each stage gets a node and either leaves it alone, rewrites around it (and
 * says whether the pipeline stops), or names its replacement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/tensor.h"
#include "optimizer/passes/arithmetic_impl.h"

#define NM(a, id) gn__node_name((a)->g, (id))
#define OPN(a, id) gn__node_op((a)->g, (id))


/* A growable list of edges (scratch for one stage call). */
typedef struct elist {
    gn__edge *v;
    uint32_t n, cap;
} elist;

static bool elist_push(elist *l, gn__edge e)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 16;
        gn__edge *p = realloc(l->v, (size_t)nc * sizeof *p);
        if (!p) return false;
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = e;
    return true;
}

typedef struct idlist {
    gn_id *v;
    uint32_t n, cap;
} idlist;

static bool idlist_push(idlist *l, gn_id id)
{
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 16;
        gn_id *p = realloc(l->v, (size_t)nc * sizeof *p);
        if (!p) return false;
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = id;
    return true;
}

static gn_status nomem(gn__ar *a) { return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory"); }

static const gn__ar_shape *shape_of(gn__ar *a, gn__edge e)
{
    const gn__ar_info *t = gn__ar_info_of(a, e);
    return t && t->s.rank >= 0 ? &t->s : NULL;
}

static const gn__ar_shape *out_shape(gn__ar *a, gn_id id) { return shape_of(a, (gn__edge){id, 0}); }

static bool all_inputs_broadcastable(gn__ar *a, gn_id id, const gn__ar_shape *s)
{
    gn__node *n = gn__ar_node(a, id);
    if (n->n_ctrl) return false; /* Grappler checks every input name, control ones fail */
    for (uint32_t k = 0; k < n->n_in; k++) {
        const gn__ar_shape *x = shape_of(a, n->in[k]);
        if (!x || !gn__ar_broadcastable(s, x)) return false;
    }
    return true;
}

/* ==== 1. add_ops_rewrite ================================================================= */
static bool aor_can_optimize(gn__ar *a, gn_id id)
{
    if (!gn__ar_is_add(a, id) && gn__ar_op(a, id) != GN__AR_OP_AddN) return false;
    if (gn__ar_preserved(a, id)) return false;
    gn__node *n = gn__ar_node(a, id);
    return n->n_ctrl == 0 && n->n_cuse == 0;
}

/* Why an Add-family input of the root was not absorbed (NULL: absorbable). */
static const char *aor_why_not(gn__ar *a, gn_id root, gn__edge e)
{
    gn_id id = e.node;
    if (!gn__ar_is_add(a, id) && gn__ar_op(a, id) != GN__AR_OP_AddN) return "";
    if (a->flags[id] & GN__AR_AOR_SEEN) return "";
    if (gn__ar_preserved(a, id)) return "is preserved";
    gn__node *n = gn__ar_node(a, id);
    if (n->n_ctrl || n->n_cuse) return "has control edges";
    if (!gn__ar_same_device(a, root, id)) return "is on another device";
    if (n->n_use != 1) return "has more than one consumer";
    const gn__ar_shape *s = out_shape(a, id);
    if (!s) return "has an unknown shape";
    if (!all_inputs_broadcastable(a, id, s)) return "has inputs that do not broadcast to its shape";
    return NULL;
}

typedef struct leaf {
    gn__edge e;
    const gn__ar_shape *s;
    int32_t cls;
} leaf;

gn_status gn__ar_add_ops_rewrite(gn__ar *a, gn_id root, gn__ar_res *r)
{
    enum { P = GN__AR_P_ADD_OPS_REWRITE };
    if (!gn__ar_is_add(a, root) && gn__ar_op(a, root) != GN__AR_OP_AddN) return GN_OK;
    if (a->flags[root] & GN__AR_AOR_SEEN) return GN_OK;
    gn__node *rn = gn__ar_node(a, root);
    /* is there a tree at all? */
    bool tree = false;
    for (uint32_t k = 0; k < rn->n_in && !tree; k++) {
        gn_id p = rn->in[k].node;
        tree = gn__ar_is_add(a, p) || gn__ar_op(a, p) == GN__AR_OP_AddN;
    }
    if (!tree) return GN_OK;
    if (!aor_can_optimize(a, root)) {
        gn__ar_refuse(a, P, root, gn__ar_preserved(a, root) ? "the root is preserved" : "the root has control edges");
        return GN_OK;
    }
    const gn__ar_shape *rs = out_shape(a, root);
    if (!rs || !all_inputs_broadcastable(a, root, rs)) {
        gn__ar_refuse(a, P, root, "the root's shape is unknown or its inputs do not broadcast to it");
        return GN_OK;
    }
    int32_t T = gn__ar_type_attr(a, root, "T");
    if (!T) return GN_OK;

    /* the group: depth first, left to right */
    elist stack = {0}, leaves_e = {0};
    idlist absorbed = {0};
    gn_status s = GN_OK;
    const char *why = NULL;
    gn__edge why_e = {GN_NONE, 0};
    for (uint32_t k = rn->n_in; k-- > 0;)
        if (!elist_push(&stack, rn->in[k])) s = nomem(a);
    while (s == GN_OK && stack.n) {
        gn__edge e = stack.v[--stack.n];
        const char *w = aor_why_not(a, root, e);
        if (!w) {
            if (!idlist_push(&absorbed, e.node)) s = nomem(a);
            gn__node *n = gn__ar_node(a, e.node);
            for (uint32_t k = n->n_in; k-- > 0 && s == GN_OK;)
                if (!elist_push(&stack, n->in[k])) s = nomem(a);
        } else {
            if (*w && !why) {
                why = w;
                why_e = e;
            }
            if (!elist_push(&leaves_e, e)) s = nomem(a);
        }
    }
    free(stack.v);
    leaf *lv = NULL;
    const gn__ar_shape **cls = NULL;
    uint32_t ncls = 0;
    if (s != GN_OK) goto done;
    if (absorbed.n == 0) {
        if (why) gn__ar_refuse(a, P, root, "input '%s' not absorbed: it %s", NM(a, why_e.node), why);
        goto done;
    }
    lv = calloc(leaves_e.n, sizeof *lv);
    cls = calloc(leaves_e.n, sizeof *cls);
    if (!lv || !cls) {
        s = nomem(a);
        goto done;
    }
    for (uint32_t i = 0; i < leaves_e.n; i++) {
        lv[i].e = leaves_e.v[i];
        lv[i].s = shape_of(a, lv[i].e);
        if (!lv[i].s) {
            gn__ar_refuse(a, P, root, "input '%s' has an unknown shape", NM(a, lv[i].e.node));
            goto done;
        }
        int32_t c = -1;
        for (uint32_t j = 0; j < ncls && c < 0; j++)
            if (gn__ar_shape_equal(cls[j], lv[i].s)) c = (int32_t)j;
        if (c < 0) {
            c = (int32_t)ncls;
            cls[ncls++] = lv[i].s;
        }
        lv[i].cls = c;
    }
    /* classes from small to large (stable) */
    uint32_t *ord = calloc(ncls, sizeof *ord);
    uint32_t *cnt = calloc(ncls, sizeof *cnt);
    if (!ord || !cnt) {
        free(ord);
        free(cnt);
        s = nomem(a);
        goto done;
    }
    for (uint32_t i = 0; i < ncls; i++) ord[i] = i;
    for (uint32_t i = 1; i < ncls; i++) {
        uint32_t v = ord[i], j = i;
        while (j > 0 && gn__ar_shape_smaller(cls[v], cls[ord[j - 1]])) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = v;
    }
    for (uint32_t i = 0; i < leaves_e.n; i++) cnt[lv[i].cls]++;
    /* worth it? fewer nodes, or as many and less work */
    uint32_t old_nodes = 1 + absorbed.n, new_nodes = 0;
    double old_cost = gn__ar_shape_cost(rs), new_cost = 0;
    for (uint32_t i = 0; i < absorbed.n; i++) old_cost += gn__ar_shape_cost(out_shape(a, absorbed.v[i]));
    for (uint32_t i = 0; i < ncls; i++)
        if (cnt[i] > 1) {
            new_nodes++;
            new_cost += gn__ar_shape_cost(cls[i]);
        }
    gn__ar_shape acc = *cls[ord[0]];
    for (uint32_t i = 1; i < ncls; i++) {
        gn__ar_shape b;
        if (!gn__ar_broadcast(a, &acc, cls[ord[i]], &b)) {
            gn__ar_refuse(a, P, root, "inputs of shapes that do not broadcast together");
            free(ord);
            free(cnt);
            goto done;
        }
        acc = b;
        new_nodes++;
        new_cost += gn__ar_shape_cost(&acc);
    }
    if (!(new_nodes < old_nodes || (new_nodes == old_nodes && new_cost < old_cost))) {
        /* not worth it: the members are not looked at again in this run
         * (a long chain would otherwise be collected once per node) */
        a->flags[root] |= GN__AR_AOR_SEEN;
        for (uint32_t i = 0; i < absorbed.n; i++) a->flags[absorbed.v[i]] |= GN__AR_AOR_SEEN;
        free(ord);
        free(cnt);
        goto done;
    }
    /* rewrite: one AddN per shape, then an AddV2 chain from the smallest */
    gn__edge *heads = calloc(ncls, sizeof *heads);
    if (!heads) {
        free(ord);
        free(cnt);
        s = nomem(a);
        goto done;
    }
    char sfx[48];
    for (uint32_t oi = 0; oi < ncls && s == GN_OK; oi++) {
        uint32_t c = ord[oi];
        if (cnt[c] == 1) {
            for (uint32_t i = 0; i < leaves_e.n; i++)
                if (lv[i].cls == (int32_t)c) heads[oi] = lv[i].e;
            continue;
        }
        if (ncls > 1) snprintf(sfx, sizeof sfx, "Leaf_%u", oi);
        gn_id id = GN_NONE;
        s = gn__ar_add_node(a, gn__ar_name(a, root, "AddOpsRewrite", ncls > 1 ? sfx : NULL), "AddN", root, &id);
        for (uint32_t i = 0; i < leaves_e.n && s == GN_OK; i++)
            if (lv[i].cls == (int32_t)c) s = gn__node_add_input(a->g, id, lv[i].e);
        if (s == GN_OK) s = gn__ar_set_type(a, id, "T", T);
        if (s == GN_OK) s = gn__ar_set_int(a, id, "N", cnt[c]);
        if (s == GN_OK) s = gn__ar_set_info(a, id, T, cls[c]);
        heads[oi] = (gn__edge){id, 0};
    }
    gn__edge cur = heads[0];
    acc = *cls[ord[0]];
    for (uint32_t oi = 1; oi < ncls && s == GN_OK; oi++) {
        gn_id id = GN_NONE;
        bool last = oi + 1 == ncls;
        snprintf(sfx, sizeof sfx, "Internal_%u", oi - 1);
        s = gn__ar_add_node(a, gn__ar_name(a, root, "AddOpsRewrite", last ? NULL : sfx), "AddV2", root, &id);
        if (s == GN_OK) s = gn__node_add_input(a->g, id, cur);
        if (s == GN_OK) s = gn__node_add_input(a->g, id, heads[oi]);
        if (s == GN_OK) s = gn__ar_set_type(a, id, "T", T);
        gn__ar_shape b;
        if (s == GN_OK && gn__ar_broadcast(a, &acc, cls[ord[oi]], &b)) {
            acc = b;
            s = gn__ar_set_info(a, id, T, &acc);
        }
        cur = (gn__edge){id, 0};
    }
    if (s == GN_OK) {
        gn__ar_rewrote(a, P, root, "%u Add/AddN nodes over %u inputs (%u shape%s) -> '%s'", old_nodes, leaves_e.n, ncls,
                       ncls == 1 ? "" : "s", NM(a, cur.node));
        r->repl = true;
        r->to = cur;
        r->stop = true;
    }
    free(heads);
    free(ord);
    free(cnt);
done:
    free(lv);
    free(cls);
    free(leaves_e.v);
    free(absorbed.v);
    return s;
}

/* ==== 2. fold_conjugate_into_transpose ===================================================== */
static bool is_transpose_op(uint32_t op) { return op == GN__AR_OP_Transpose || op == GN__AR_OP_ConjugateTranspose; }

gn_status gn__ar_fold_conj_transpose(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_FOLD_CONJ_TRANSPOSE };
    uint32_t op = gn__ar_op(a, n);
    if (op != GN__AR_OP_Conj && !is_transpose_op(op)) return GN_OK;
    if (gn__ar_node(a, n)->n_in < 1) return GN_OK;
    gn__edge ie = gn__ar_in(a, n, 0);
    gn_id in = ie.node;
    uint32_t iop = gn__ar_op(a, in);
    gn_id tr = op == GN__AR_OP_Conj ? in : n;
    gn_id cj = op == GN__AR_OP_Conj ? n : in;
    if (!is_transpose_op(gn__ar_op(a, tr)) || gn__ar_op(a, cj) != GN__AR_OP_Conj || iop == op) return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, in)) {
        gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : in));
        return GN_OK;
    }
    if (ie.index != 0 || gn__ar_node(a, in)->n_in < 1) return GN_OK;
    if (gn__ar_name_taken(a, n, "FoldConjugateIntoTranspose", NULL)) return GN_OK;
    gn_id nw = GN_NONE;
    GN_TRY(gn__ar_copy_node(a, tr, gn__ar_name(a, n, "FoldConjugateIntoTranspose", NULL), &nw));
    GN_TRY(gn__ar_set_op(a, nw, gn__ar_op(a, tr) == GN__AR_OP_Transpose ? "ConjugateTranspose" : "Transpose"));
    GN_TRY(gn__node_set_input(a->g, nw, 0, gn__ar_in(a, in, 0)));
    GN_TRY(gn__ar_forward_ctrl(a, nw, n));
    GN_TRY(gn__ar_forward_ctrl(a, nw, in));
    const gn__ar_info *t = gn__ar_info_of(a, (gn__edge){n, 0});
    if (t) GN_TRY(gn__ar_set_info(a, nw, t->dtype, &t->s));
    gn__ar_rewrote(a, P, n, "%s(%s) -> %s '%s'", OPN(a, n), OPN(a, in), OPN(a, nw), NM(a, nw));
    r->repl = true;
    r->to = (gn__edge){nw, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 3. fold_multiply_into_conv ============================================================ */
/* Grappler's GetTailOfChain: from `from`, follow input 0 while the producer
 * satisfies pred; returns the last node of the chain (from itself when the
 * first producer fails). */
typedef bool (*chain_pred)(gn__ar *a, gn_id id);

static gn_id chain_tail(gn__ar *a, gn_id from, chain_pred pred)
{
    gn_id cur = from;
    for (;;) {
        gn__node *n = gn__ar_node(a, cur);
        if (n->n_in == 0) return cur;
        gn_id next = n->in[0].node;
        if (n->in[0].index != 0 || !pred(a, next)) return cur;
        cur = next;
    }
}

static bool pred_value_preserving(gn__ar *a, gn_id id)
{
    return !gn__ar_preserved(a, id) && gn__ar_value_preserving(a, id) && gn__ar_node(a, id)->n_use == 1;
}

static bool pred_value_preserving_same_frame(gn__ar *a, gn_id id)
{
    return pred_value_preserving(a, id) && !(gn__ar_props(a, id) & GN__AR_FR);
}

static bool pred_idempotent(gn__ar *a, gn_id id)
{
    return !gn__ar_preserved(a, id) && gn__ar_idempotent(a, id) && gn__ar_node(a, id)->n_use == 1;
}

static bool const_is_scalar(gn__ar *a, gn_id id)
{
    const Tensorflow__AttrValue *v = gn__node_attr(a->g, id, "value");
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR && v->tensor && v->tensor->tensor_shape &&
           !v->tensor->tensor_shape->unknown_rank && v->tensor->tensor_shape->n_dim == 0;
}

gn_status gn__ar_fold_mul_conv(gn__ar *a, gn_id conv, gn__ar_res *r)
{
    enum { P = GN__AR_P_FOLD_MUL_CONV };
    uint32_t op = gn__ar_op(a, conv);
    if (op != GN__AR_OP_Conv2D && op != GN__AR_OP_Conv3D) return GN_OK;
    if (gn__ar_node(a, conv)->n_in < 2) return GN_OK;
    gn__edge we = gn__ar_in(a, conv, 1);
    gn_id w = we.node;
    if (!gn__ar_const_node(a, w)) return GN_OK;
    char sfx[1024];
    snprintf(sfx, sizeof sfx, "scaled_%s", NM(a, conv));
    if (gn__ar_name_taken(a, w, "FoldMultiplyIntoConv", sfx)) return GN_OK;
    gn_id tail = chain_tail(a, conv, pred_value_preserving_same_frame);
    gn__edge se = gn__ar_in(a, tail, 0);
    gn_id mul = se.node;
    if (gn__ar_op(a, mul) != GN__AR_OP_Mul) return GN_OK;
    if (gn__ar_node(a, mul)->n_in < 2) return GN_OK;
    gn__edge xe = gn__ar_in(a, mul, 0), ce = gn__ar_in(a, mul, 1);
    if (!gn__ar_const_node(a, ce.node) && gn__ar_const_node(a, xe.node)) {
        gn__edge t = xe;
        xe = ce;
        ce = t;
    }
    if (!gn__ar_const_node(a, ce.node)) return GN_OK;
    if (gn__ar_node(a, mul)->n_use != 1) {
        gn__ar_refuse(a, P, conv, "Mul '%s' has other consumers", NM(a, mul));
        return GN_OK;
    }
    if (gn__ar_preserved(a, mul)) {
        gn__ar_refuse(a, P, conv, "Mul '%s' is preserved", NM(a, mul));
        return GN_OK;
    }
    if (!const_is_scalar(a, ce.node)) {
        gn__ar_refuse(a, P, conv, "the factor '%s' is not a scalar", NM(a, ce.node));
        return GN_OK;
    }
    int32_t dt = gn__ar_type_attr(a, w, "dtype");
    if (!dt || gn__ar_type_attr(a, ce.node, "dtype") != dt) {
        gn__ar_refuse(a, P, conv, "the factor and the weights differ in dtype");
        return GN_OK;
    }
    gn_id sc = GN_NONE;
    GN_TRY(gn__ar_add_node(a, gn__ar_name(a, w, "FoldMultiplyIntoConv", sfx), "Mul", w, &sc));
    GN_TRY(gn__node_add_input(a->g, sc, we));
    GN_TRY(gn__node_add_input(a->g, sc, ce));
    GN_TRY(gn__ar_set_type(a, sc, "T", dt));
    GN_TRY(gn__ar_forward_ctrl(a, sc, mul));
    const gn__ar_info *wi = gn__ar_info_of(a, we);
    if (wi) GN_TRY(gn__ar_set_info(a, sc, dt, &wi->s));
    GN_TRY(gn__ar_set_input(a, conv, 1, (gn__edge){sc, 0}));
    GN_TRY(gn__ar_set_input(a, tail, 0, xe));
    GN_TRY(gn__ar_push(a, conv));
    GN_TRY(gn__ar_push(a, tail));
    gn__ar_rewrote(a, P, conv, "scalar Mul '%s' folded into the weights as '%s'", NM(a, mul), NM(a, sc));
    r->stop = true;
    return GN_OK;
}

/* ==== 4. fold_transpose_into_matmul =========================================================== */
static bool inner_matrix_transpose(gn__ar *a, gn_id t)
{
    if (gn__ar_node(a, t)->n_in < 2) return false;
    int64_t p[GN__MAX_RANK];
    int32_t n = 0;
    if (!gn__ar_const_ints(a, gn__ar_in(a, t, 1).node, p, GN__MAX_RANK, &n) || n < 2) return false;
    for (int32_t i = 0; i < n - 2; i++)
        if (p[i] != i) return false;
    return p[n - 1] == n - 2 && p[n - 2] == n - 1;
}

gn_status gn__ar_fold_transpose_matmul(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_FOLD_TRANSPOSE_MATMUL };
    uint32_t op = gn__ar_op(a, n);
    bool batch = op == GN__AR_OP_BatchMatMul || op == GN__AR_OP_BatchMatMulV2 || op == GN__AR_OP_BatchMatMulV3;
    if (op != GN__AR_OP_MatMul && op != GN__AR_OP_SparseMatMul && !batch) return GN_OK;
    if (gn__ar_node(a, n)->n_in < 2) return GN_OK;
    bool cplx = op != GN__AR_OP_SparseMatMul && gn__dtype_is_complex(gn__ar_type_attr(a, n, "T"));
    gn_id x[2];
    bool fold[2];
    for (int k = 0; k < 2; k++) {
        gn__edge e = gn__ar_in(a, n, (uint32_t)k);
        x[k] = e.node;
        uint32_t xo = gn__ar_op(a, e.node);
        bool kind = !cplx ? is_transpose_op(xo) : batch ? xo == GN__AR_OP_ConjugateTranspose : xo == GN__AR_OP_Transpose;
        fold[k] = kind && e.index == 0 && inner_matrix_transpose(a, e.node);
    }
    if (!fold[0] && !fold[1]) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the product is preserved");
        return GN_OK;
    }
    for (int k = 0; k < 2; k++)
        if (fold[k] && gn__ar_preserved(a, x[k])) {
            gn__ar_refuse(a, P, n, "transpose '%s' is preserved", NM(a, x[k]));
            fold[k] = false;
        }
    if (!fold[0] && !fold[1]) return GN_OK;
    if (gn__ar_name_taken(a, n, "FoldTransposeIntoMatMul", NULL)) return GN_OK;
    gn_id nw = GN_NONE;
    GN_TRY(gn__ar_copy_node(a, n, gn__ar_name(a, n, "FoldTransposeIntoMatMul", NULL), &nw));
    static const char *const attr_mm[2] = {"transpose_a", "transpose_b"};
    static const char *const attr_bmm[2] = {"adj_x", "adj_y"};
    for (int k = 0; k < 2; k++) {
        if (!fold[k]) continue;
        const char *an = batch ? attr_bmm[k] : attr_mm[k];
        GN_TRY(gn__ar_set_bool(a, nw, an, !gn__ar_bool_attr(a, n, an, false)));
        GN_TRY(gn__node_set_input(a->g, nw, (uint32_t)k, gn__ar_in(a, x[k], 0)));
        GN_TRY(gn__ar_forward_ctrl(a, nw, x[k]));
    }
    const gn__ar_info *t = gn__ar_info_of(a, (gn__edge){n, 0});
    if (t) GN_TRY(gn__ar_set_info(a, nw, t->dtype, &t->s));
    gn__ar_rewrote(a, P, n, "%s%s%s folded into '%s'", fold[0] ? NM(a, x[0]) : "", fold[0] && fold[1] ? ", " : "",
                   fold[1] ? NM(a, x[1]) : "", NM(a, nw));
    r->repl = true;
    r->to = (gn__edge){nw, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 5. hoist_common_factor ==================================================================== */
static bool is_div_hoistable(uint32_t op) { return op == GN__AR_OP_RealDiv || op == GN__AR_OP_Div; }

static bool edge_eq(gn__edge x, gn__edge y) { return x.node == y.node && x.index == y.index; }

gn_status gn__ar_hoist_common_factor(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_HOIST_COMMON_FACTOR };
    if (!gn__ar_is_aggregate(a, n)) return GN_OK;
    gn__node *nn = gn__ar_node(a, n);
    uint32_t ni = nn->n_in;
    if (ni < 2 || (a->flags[n] & GN__AR_HOISTED)) return GN_OK;
    /* candidate: every input a Mul, or every input a Div */
    uint32_t first_op = gn__ar_op(a, nn->in[0].node);
    bool is_mul = first_op == GN__AR_OP_Mul, is_div = is_div_hoistable(first_op);
    if (!is_mul && !is_div) return GN_OK;
    for (uint32_t k = 0; k < ni; k++) {
        gn__edge e = gn__ar_in(a, n, k);
        if (gn__ar_op(a, e.node) != first_op || e.index != 0 || gn__ar_node(a, e.node)->n_in < 2) return GN_OK;
    }
    /* the common factor: the intersection of every input's factors */
    gn__edge common[2];
    uint32_t nc = 0;
    for (uint32_t k = 0; k < ni; k++) {
        gn_id m = gn__ar_in(a, n, k).node;
        gn__node *mn = gn__ar_node(a, m);
        gn__edge f[2];
        uint32_t nf = 0;
        if (is_mul) {
            f[nf++] = mn->in[0];
            if (!edge_eq(mn->in[1], mn->in[0])) f[nf++] = mn->in[1];
        } else {
            f[nf++] = mn->in[1];
        }
        if (k == 0) {
            memcpy(common, f, sizeof f);
            nc = nf;
        } else {
            uint32_t w = 0;
            for (uint32_t i = 0; i < nc; i++) {
                bool in = false;
                for (uint32_t j = 0; j < nf; j++) in = in || edge_eq(common[i], f[j]);
                if (in) common[w++] = common[i];
            }
            nc = w;
        }
        if (nc == 0) return GN_OK;
    }
    if (nc != 1) return GN_OK;
    gn__edge cf = common[0];
    if (!a->aggressive) {
        gn__ar_refuse(a, P, n, "common %s '%s': runs only when arithmetic_optimization is AGGRESSIVE (as Grappler)",
                      is_div ? "denominator" : "factor", NM(a, cf.node));
        return GN_OK;
    }
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the aggregation is preserved");
        return GN_OK;
    }
    for (uint32_t k = 0; k < ni; k++) {
        gn_id m = gn__ar_in(a, n, k).node;
        gn__node *mn = gn__ar_node(a, m);
        if (mn->n_use != 1 || mn->n_cuse) {
            gn__ar_refuse(a, P, n, "'%s' has other consumers", NM(a, m));
            return GN_OK;
        }
        if (gn__ar_preserved(a, m)) {
            gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, m));
            return GN_OK;
        }
    }
    if (gn__ar_name_taken(a, n, "HoistCommonFactor", "Mul") || gn__ar_name_taken(a, n, "HoistCommonFactor", "Div") ||
        gn__ar_name_taken(a, n, "HoistCommonFactor", "AddV2"))
        return GN_OK;
    int32_t T = gn__ar_type_attr(a, n, "T");
    if (is_div && T != GN__AR_F32 && T != GN__AR_F64) {
        gn__ar_refuse(a, P, n, "a common denominator is hoisted only for float and double, not %s", gn__dtype_name(T));
        return GN_OK;
    }
    /* the other factors; an AddN needs them all of one shape */
    gn__edge *uf = calloc(ni, sizeof *uf);
    if (!uf) return nomem(a);
    bool match = true;
    for (uint32_t k = 0; k < ni && match; k++) {
        gn__node *mn = gn__ar_node(a, gn__ar_in(a, n, k).node);
        uf[k] = is_div ? mn->in[0] : (edge_eq(mn->in[0], cf) ? mn->in[1] : mn->in[0]);
        if (k > 0 && !gn__ar_is_add(a, n))
            match = gn__ar_shape_equal(shape_of(a, uf[0]), shape_of(a, uf[k]));
    }
    if (!match) {
        free(uf);
        gn__ar_refuse(a, P, n, "the remaining factors are not provably of one shape");
        return GN_OK;
    }
    gn_id in0 = gn__ar_in(a, n, 0).node;
    gn_id outer = GN_NONE, inner = GN_NONE;
    gn_status s = gn__ar_copy_node(a, in0, gn__ar_name(a, n, "HoistCommonFactor", is_div ? "Div" : "Mul"), &outer);
    if (s == GN_OK) s = gn__ar_copy_node(a, n, gn__ar_name(a, n, "HoistCommonFactor", "AddV2"), &inner);
    if (s == GN_OK) {
        a->g->nodes[outer].device = a->g->nodes[n].device;
        s = gn__node_set_input(a->g, outer, 0, is_div ? (gn__edge){inner, 0} : cf);
    }
    if (s == GN_OK) s = gn__node_set_input(a->g, outer, 1, is_div ? cf : (gn__edge){inner, 0});
    for (uint32_t k = 0; k < ni && s == GN_OK; k++) s = gn__node_set_input(a->g, inner, k, uf[k]);
    for (uint32_t k = 0; k < ni && s == GN_OK; k++) s = gn__ar_forward_ctrl(a, inner, gn__ar_in(a, n, k).node);
    if (s == GN_OK) {
        gn__ar_shape sh;
        const gn__ar_shape *u0 = shape_of(a, uf[0]);
        bool ok = u0 != NULL;
        sh = ok ? *u0 : (gn__ar_shape){-1, NULL};
        for (uint32_t k = 1; k < ni && ok; k++) {
            gn__ar_shape b;
            const gn__ar_shape *uk = shape_of(a, uf[k]);
            ok = uk && gn__ar_broadcast(a, &sh, uk, &b);
            if (ok) sh = b;
        }
        s = gn__ar_set_info(a, inner, T, ok ? &sh : NULL);
        const gn__ar_info *t = gn__ar_info_of(a, (gn__edge){n, 0});
        if (s == GN_OK && t) s = gn__ar_set_info(a, outer, t->dtype, &t->s);
    }
    free(uf);
    GN_TRY(s);
    a->flags[n] |= GN__AR_HOISTED;
    gn__ar_rewrote(a, P, n, "common %s '%s' hoisted out of %u terms: '%s'", is_div ? "denominator" : "factor",
                   NM(a, cf.node), ni, NM(a, outer));
    r->repl = true;
    r->to = (gn__edge){outer, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 6. minimize_broadcasts ====================================================================== */
static bool mb_op(gn__ar *a, gn_id id) { return gn__ar_op(a, id) == GN__AR_OP_Mul || gn__ar_is_add(a, id); }

static bool mb_absorbable(gn__ar *a, gn_id root, gn__edge e)
{
    gn_id id = e.node;
    if (e.index != 0 || a->g->nodes[id].op != a->g->nodes[root].op || !mb_op(a, id)) return false;
    if (a->flags[id] & GN__AR_MB_SEEN) return false;
    if (gn__ar_preserved(a, id)) return false;
    gn__node *n = gn__ar_node(a, id);
    if (n->n_ctrl || n->n_cuse || n->n_use != 1 || n->n_in != 2) return false;
    if (!gn__ar_same_device(a, root, id)) return false;
    const gn__ar_shape *s = out_shape(a, id);
    return s && all_inputs_broadcastable(a, id, s);
}

typedef struct mb_in {
    gn__edge e;
    const gn__ar_shape *s;    /* NULL: a node of the new tree (Grappler gives it a scalar shape) */
} mb_in;

static const gn__ar_shape k_scalar = {0, NULL};

static const gn__ar_shape *mb_sort_shape(const mb_in *x) { return x->s ? x->s : &k_scalar; }

gn_status gn__ar_minimize_broadcasts(gn__ar *a, gn_id root, gn__ar_res *r)
{
    enum { P = GN__AR_P_MINIMIZE_BROADCASTS };
    if (!mb_op(a, root) || (a->flags[root] & GN__AR_MB_SEEN)) return GN_OK;
    gn__node *rn = gn__ar_node(a, root);
    if (rn->n_in != 2) return GN_OK;
    const gn__ar_shape *rs = out_shape(a, root);
    if (!rs || !all_inputs_broadcastable(a, root, rs)) return GN_OK;
    elist stack = {0};
    idlist grp = {0};
    mb_in *in = NULL;
    uint32_t nin = 0;
    gn_status s = GN_OK;
    uint32_t cap_in = 4;
    bool unknown = false;
    in = calloc(cap_in, sizeof *in);
    if (!in) return nomem(a);
    for (uint32_t k = 2; k-- > 0;)
        if (!elist_push(&stack, rn->in[k])) s = nomem(a);
    while (s == GN_OK && stack.n) {
        gn__edge e = stack.v[--stack.n];
        if (mb_absorbable(a, root, e)) {
            if (!idlist_push(&grp, e.node)) s = nomem(a);
            gn__node *n = gn__ar_node(a, e.node);
            for (uint32_t k = 2; k-- > 0 && s == GN_OK;)
                if (!elist_push(&stack, n->in[k])) s = nomem(a);
        } else {
            if (nin == cap_in) {
                cap_in *= 2;
                mb_in *p = realloc(in, cap_in * sizeof *p);
                if (!p) {
                    s = nomem(a);
                    break;
                }
                in = p;
            }
            in[nin].e = e;
            in[nin].s = shape_of(a, e);
            if (!in[nin].s) unknown = true; /* an input of unknown shape: leave the group alone */
            nin++;
        }
    }
    free(stack.v);
    if (s != GN_OK || grp.n == 0) goto done;
    /* Grappler tags every member of a group it looked at; so do we, for this run */
    a->flags[root] |= GN__AR_MB_SEEN;
    for (uint32_t i = 0; i < grp.n; i++) a->flags[grp.v[i]] |= GN__AR_MB_SEEN;
    if (unknown || nin != grp.n + 2) goto done;
    {
        /* more than one distinct input shape? */
        bool several = false;
        for (uint32_t i = 1; i < nin && !several; i++) several = !gn__ar_shape_equal(in[0].s, in[i].s);
        if (!several) goto done;
        /* Grappler's tree: inputs sorted small to large, pairs combined into the
         * nodes of the group (last absorbed first, the root last), the largest
         * input of an odd count kept for the root */
        for (uint32_t i = 1; i < nin; i++) {
            mb_in v = in[i];
            uint32_t j = i;
            while (j > 0 && gn__ar_shape_smaller(mb_sort_shape(&v), mb_sort_shape(&in[j - 1]))) {
                in[j] = in[j - 1];
                j--;
            }
            in[j] = v;
        }
        uint32_t nq = nin;
        mb_in *q = calloc(3 * (size_t)nin + 4, sizeof *q); /* deque in the middle of a buffer */
        gn__edge *asg = calloc(2 * ((size_t)grp.n + 1), sizeof *asg);
        gn_id *who = calloc((size_t)grp.n + 1, sizeof *who);
        if (!q || !asg || !who) {
            free(q);
            free(asg);
            free(who);
            s = nomem(a);
            goto done;
        }
        uint32_t head = nin + 2, tail = head;
        bool left = nin % 2 != 0;
        mb_in leftover = {{0, 0}, NULL};
        if (left) {
            leftover = in[nin - 1];
            nq--;
        }
        for (uint32_t i = 0; i < nq; i++) q[tail++] = in[i];
        uint32_t pool = grp.n, nasg = 0;
        while (tail - head > 1) {
            mb_in l = q[head++], rr = q[head++];
            gn_id node = pool > 0 ? grp.v[--pool] : root;
            who[nasg] = node;
            asg[2 * nasg] = l.e;
            asg[2 * nasg + 1] = rr.e;
            nasg++;
            mb_in up = {{node, 0}, NULL};
            if (tail - head >= 2 && gn__ar_shape_smaller(mb_sort_shape(&q[head]), mb_sort_shape(&q[head + 1])))
                q[--head] = up;
            else
                q[tail++] = up;
        }
        if (left) {
            who[nasg] = root;
            asg[2 * nasg] = q[head].e;
            asg[2 * nasg + 1] = leftover.e;
            nasg++;
        }
        /* new shapes, bottom-up, and the cost of both trees */
        gn__ar_shape *ns = calloc(nasg, sizeof *ns);
        bool ok = ns != NULL && nasg == grp.n + 1;
        double old_cost = gn__ar_shape_cost(rs), new_cost = 0;
        for (uint32_t i = 0; i < grp.n; i++) old_cost += gn__ar_shape_cost(out_shape(a, grp.v[i]));
        for (uint32_t i = 0; i < nasg && ok; i++) {
            const gn__ar_shape *x[2];
            for (int k = 0; k < 2 && ok; k++) {
                gn__edge e = asg[2 * i + k];
                x[k] = NULL;
                for (uint32_t j = 0; j < i; j++)
                    if (who[j] == e.node) x[k] = &ns[j];
                if (!x[k]) {
                    bool member = e.node == root;
                    for (uint32_t j = 0; j < grp.n; j++) member = member || grp.v[j] == e.node;
                    x[k] = member ? NULL : shape_of(a, e);
                }
                ok = x[k] != NULL;
            }
            ok = ok && gn__ar_broadcast(a, x[0], x[1], &ns[i]);
            if (ok) new_cost += gn__ar_shape_cost(&ns[i]);
        }
        ok = ok && gn__ar_shape_equal(&ns[nasg - 1], rs);
        if (ok && new_cost < old_cost * (1 - 1e-9)) {
            int32_t T = gn__ar_type_attr(a, root, "T");
            for (uint32_t i = 0; i < nasg && s == GN_OK; i++) {
                s = gn__ar_set_input(a, who[i], 0, asg[2 * i]);
                if (s == GN_OK) s = gn__ar_set_input(a, who[i], 1, asg[2 * i + 1]);
                if (s == GN_OK) s = gn__ar_set_info(a, who[i], T, &ns[i]);
                if (s == GN_OK) s = gn__ar_push(a, who[i]);
            }
            if (s == GN_OK) {
                gn__ar_rewrote(a, P, root, "%u %s nodes over %u inputs reordered (work %.4g -> %.4g)", nasg,
                               OPN(a, root), nin, old_cost, new_cost);
                r->stop = true;
            }
        }
        free(ns);
        free(q);
        free(asg);
        free(who);
    }
done:
    free(in);
    free(grp.v);
    return s;
}

/* ==== 7. remove_redundant_transpose ============================================================ */
gn_status gn__ar_remove_redundant_transpose(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_REDUNDANT_TRANSPOSE };
    uint32_t op = gn__ar_op(a, n);
    if (!is_transpose_op(op) || gn__ar_node(a, n)->n_in < 2) return GN_OK;
    int64_t p2[GN__MAX_RANK];
    int32_t n2 = 0;
    if (!gn__ar_const_ints(a, gn__ar_in(a, n, 1).node, p2, GN__MAX_RANK, &n2)) return GN_OK;
    gn_id tail = chain_tail(a, n, pred_idempotent);
    gn__edge fe = gn__ar_in(a, tail, 0);
    gn_id first = fe.node;
    if (gn__ar_op(a, first) == op && fe.index == 0 && gn__ar_node(a, first)->n_in >= 2) {
        int64_t p1[GN__MAX_RANK];
        int32_t n1 = 0;
        if (!gn__ar_const_ints(a, gn__ar_in(a, first, 1).node, p1, GN__MAX_RANK, &n1) || n1 != n2) return GN_OK;
        for (int32_t i = 0; i < n1; i++)
            if (p1[i] < 0 || p1[i] >= n2 || p2[p1[i]] != i) return GN_OK;
        if (gn__ar_preserved(a, n) || gn__ar_preserved(a, first)) {
            gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : first));
            return GN_OK;
        }
        gn__edge x = gn__ar_in(a, first, 0);
        if (tail == n) {
            r->to = x;
        } else {
            GN_TRY(gn__ar_set_input(a, tail, 0, x));
            GN_TRY(gn__ar_forward_ctrl(a, tail, first));
            GN_TRY(gn__ar_push(a, tail));
            r->to = gn__ar_in(a, n, 0);
            /* the shape-preserving chain now carries x's shape */
            const gn__ar_info *xi = gn__ar_info_of(a, x);
            gn__ar_info xinfo = xi ? *xi : (gn__ar_info){0, {-1, NULL}};
            for (gn_id c = r->to.node;; c = gn__ar_in(a, c, 0).node) {
                GN_TRY(gn__ar_set_info(a, c, xinfo.dtype ? xinfo.dtype : gn__ar_dtype(a, (gn__edge){c, 0}),
                                       xi ? &xinfo.s : NULL));
                if (c == tail) break;
            }
        }
        gn__ar_rewrote(a, P, n, "cancels '%s'", NM(a, first));
        r->repl = true;
        r->stop = true;
        return GN_OK;
    }
    for (int32_t i = 0; i < n2; i++)
        if (p2[i] != i) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the identity transpose is preserved");
        return GN_OK;
    }
    if (op == GN__AR_OP_Transpose) {
        gn__ar_rewrote(a, P, n, "identity permutation");
        r->repl = true;
        r->to = gn__ar_in(a, n, 0);
        r->stop = true;
        return GN_OK;
    }
    if (gn__ar_name_taken(a, n, "RemoveIdentityTranspose", NULL)) return GN_OK;
    gn_id cj = GN_NONE;
    GN_TRY(gn__ar_copy_node(a, n, gn__ar_name(a, n, "RemoveIdentityTranspose", NULL), &cj));
    GN_TRY(gn__ar_set_op(a, cj, "Conj"));
    GN_TRY(gn__node_remove_input(a->g, cj, 1));
    GN_TRY(gn__node_remove_attr(a->g, cj, "Tperm"));
    const gn__ar_info *t = gn__ar_info_of(a, (gn__edge){n, 0});
    if (t) GN_TRY(gn__ar_set_info(a, cj, t->dtype, &t->s));
    gn__ar_rewrote(a, P, n, "identity ConjugateTranspose -> Conj '%s'", NM(a, cj));
    r->repl = true;
    r->to = (gn__edge){cj, 0};
    r->stop = true;
    return GN_OK;
}

/* ==== 8. remove_involution ==================================================================== */
gn_status gn__ar_remove_involution(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_INVOLUTION };
    if (!(gn__ar_props(a, n) & GN__AR_IV) || gn__ar_node(a, n)->n_in < 1) return GN_OK;
    gn_id tail = chain_tail(a, n, pred_value_preserving);
    gn__edge ie = gn__ar_in(a, tail, 0);
    gn_id inv = ie.node;
    if (a->g->nodes[inv].op != a->g->nodes[n].op || ie.index != 0 || gn__ar_node(a, inv)->n_in < 1) return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, inv)) {
        gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : inv));
        return GN_OK;
    }
    gn__edge x = gn__ar_in(a, inv, 0);
    if (tail == n) {
        r->to = x;
    } else {
        GN_TRY(gn__ar_set_input(a, tail, 0, x));
        GN_TRY(gn__ar_push(a, tail));
        r->to = gn__ar_in(a, n, 0);
    }
    gn__ar_rewrote(a, P, n, "%s cancels '%s'%s", OPN(a, n), NM(a, inv), tail == n ? "" : " across value-preserving ops");
    r->repl = true;
    r->stop = true;
    return GN_OK;
}

/* ==== 9. remove_redundant_bitcast =============================================================== */
gn_status gn__ar_remove_redundant_bitcast(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_REDUNDANT_BITCAST };
    if (gn__ar_op(a, n) != GN__AR_OP_Bitcast || gn__ar_node(a, n)->n_in < 1) return GN_OK;
    int32_t in_t = gn__ar_type_attr(a, n, "T"), out_t = gn__ar_type_attr(a, n, "type");
    if (!in_t || !out_t) return GN_OK;
    if (in_t == out_t) {
        if (gn__ar_preserved(a, n)) {
            gn__ar_refuse(a, P, n, "the Bitcast is preserved");
            return GN_OK;
        }
        gn__ar_rewrote(a, P, n, "Bitcast from %s to itself", gn__dtype_name(in_t));
        r->repl = true;
        r->to = gn__ar_in(a, n, 0);
        r->stop = true;
        return GN_OK;
    }
    gn__edge ie = gn__ar_in(a, n, 0);
    gn_id op = ie.node;
    if (gn__ar_op(a, op) != GN__AR_OP_Bitcast || gn__ar_node(a, op)->n_in < 1) return GN_OK;
    if (gn__ar_preserved(a, op)) {
        gn__ar_refuse(a, P, n, "the inner Bitcast '%s' is preserved", NM(a, op));
        return GN_OK;
    }
    int32_t op_t = gn__ar_type_attr(a, op, "T");
    if (!op_t) return GN_OK;
    GN_TRY(gn__ar_set_input(a, n, 0, gn__ar_in(a, op, 0)));
    GN_TRY(gn__ar_set_type(a, n, "T", op_t));
    GN_TRY(gn__ar_push(a, n));
    gn__ar_rewrote(a, P, n, "Bitcast of Bitcast '%s' -> one Bitcast from %s", NM(a, op), gn__dtype_name(op_t));
    r->stop = true;
    return GN_OK;
}

/* ==== 10. remove_redundant_cast =================================================================== */
gn_status gn__ar_remove_redundant_cast(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REMOVE_REDUNDANT_CAST };
    if (gn__ar_op(a, n) != GN__AR_OP_Cast || gn__ar_node(a, n)->n_in < 1) return GN_OK;
    int32_t s = gn__ar_type_attr(a, n, "SrcT"), d = gn__ar_type_attr(a, n, "DstT");
    if (!s || s != d) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the Cast is preserved");
        return GN_OK;
    }
    gn__ar_rewrote(a, P, n, "Cast from %s to itself", gn__dtype_name(s));
    r->repl = true;
    r->to = gn__ar_in(a, n, 0);
    r->stop = true;
    return GN_OK;
}

/* ==== 11. replace_pack_with_tile_reshape ============================================================ */
static bool all_inputs_equal(gn__ar *a, gn_id id)
{
    gn__node *n = gn__ar_node(a, id);
    for (uint32_t k = 1; k < n->n_in; k++)
        if (!edge_eq(n->in[k], n->in[0])) return false;
    return n->n_in > 0;
}

static gn_status int32_tensor(gn__ar *a, const int64_t *v, int32_t n, gn__tensor *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = GN__AR_I32;
    t->rank = 1;
    t->dims[0] = n;
    t->buf = gn__buffer_new((size_t)(n ? n : 1) * 4);
    if (!t->buf) return nomem(a);
    t->data = t->buf->data;
    t->nbytes = (size_t)n * 4;
    for (int32_t i = 0; i < n; i++) ((int32_t *)t->data)[i] = (int32_t)v[i];
    return GN_OK;
}

gn_status gn__ar_replace_pack_with_tile_reshape(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REPLACE_PACK_WITH_TILE_RESHAPE };
    if (gn__ar_op(a, n) != GN__AR_OP_Pack || gn__ar_node(a, n)->n_in < 2 || !all_inputs_equal(a, n)) return GN_OK;
    if (gn__ar_preserved(a, n)) {
        gn__ar_refuse(a, P, n, "the Pack is preserved");
        return GN_OK;
    }
    idlist chain = {0};
    gn__edge in = {n, 0};
    gn_status s = GN_OK;
    while (gn__ar_op(a, in.node) == GN__AR_OP_Pack && in.index == 0 && !gn__ar_preserved(a, in.node) &&
           all_inputs_equal(a, in.node)) {
        if (!idlist_push(&chain, in.node)) {
            free(chain.v);
            return nomem(a);
        }
        in = gn__ar_in(a, in.node, 0);
    }
    if (gn__ar_name_taken(a, n, "ReplacePackWithTileReshape", "Multiples") ||
        gn__ar_name_taken(a, n, "ReplacePackWithTileReshape", "Tile") ||
        gn__ar_name_taken(a, n, "ReplacePackWithTileReshape", "Shape") ||
        gn__ar_name_taken(a, n, "ReplacePackWithTileReshape", "Reshape"))
        goto out;
    const gn__ar_info *ii = gn__ar_info_of(a, in), *oi = gn__ar_info_of(a, (gn__edge){n, 0});
    if (!ii || !gn__ar_shape_fully_known(&ii->s)) {
        gn__ar_refuse(a, P, n, "the packed tensor's shape is not fully known");
        goto out;
    }
    if (!oi || !gn__ar_shape_fully_known(&oi->s)) {
        gn__ar_refuse(a, P, n, "the output shape is not fully known");
        goto out;
    }
    int32_t rank = ii->s.rank;
    if (rank > GN__MAX_RANK - 8 || (int32_t)chain.n + rank > GN__MAX_RANK) goto out;
    int64_t mult[GN__MAX_RANK];
    int32_t dims[GN__MAX_RANK];
    int32_t nd = rank;
    for (int32_t i = 0; i < rank; i++) {
        mult[i] = 1;
        dims[i] = i;
    }
    for (uint32_t ci = chain.n; ci-- > 0;) {
        gn_id p = chain.v[ci];
        int64_t axis = gn__ar_int_attr(a, p, "axis", 0), cnt = gn__ar_node(a, p)->n_in;
        if (axis < 0) axis += nd + 1;
        if (axis < 0 || axis >= nd) {
            gn__ar_refuse(a, P, n, "'%s' packs along the last axis (not a Tile)", NM(a, p));
            goto out;
        }
        int64_t m = mult[dims[axis]] * cnt;
        if (m > INT32_MAX) {
            gn__ar_refuse(a, P, n, "multiples overflow int32");
            goto out;
        }
        mult[dims[axis]] = m;
        memmove(&dims[axis + 1], &dims[axis], (size_t)(nd - axis) * sizeof *dims);
        nd++;
    }
    for (int32_t i = 0; i < oi->s.rank; i++)
        if (oi->s.d[i] > INT32_MAX) goto out;
    int32_t T = gn__ar_type_attr(a, n, "T");
    gn__tensor mt, st;
    GN_TRY(int32_tensor(a, mult, rank, &mt));
    s = int32_tensor(a, oi->s.d, oi->s.rank, &st);
    if (s != GN_OK) {
        gn__tensor_release(&mt);
        goto out;
    }
    gn_id mc = GN_NONE, tile = GN_NONE, sc = GN_NONE, rs = GN_NONE;
    s = gn__ar_add_const(a, gn__ar_name(a, n, "ReplacePackWithTileReshape", "Multiples"), &mt, n, in, &mc);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "ReplacePackWithTileReshape", "Tile"), "Tile", n, &tile);
    if (s == GN_OK) s = gn__node_add_input(a->g, tile, in);
    if (s == GN_OK) s = gn__node_add_input(a->g, tile, (gn__edge){mc, 0});
    if (s == GN_OK) s = gn__ar_set_type(a, tile, "T", T);
    if (s == GN_OK) s = gn__ar_set_type(a, tile, "Tmultiples", GN__AR_I32);
    for (uint32_t i = 0; i < chain.n && s == GN_OK; i++) s = gn__ar_forward_ctrl(a, tile, chain.v[i]);
    if (s == GN_OK) {
        int64_t td[GN__MAX_RANK];
        for (int32_t i = 0; i < rank; i++) td[i] = ii->s.d[i] * mult[i];
        gn__ar_shape ts = {rank, td};
        s = gn__ar_set_info(a, tile, T, &ts);
    }
    if (s == GN_OK) s = gn__ar_add_const(a, gn__ar_name(a, n, "ReplacePackWithTileReshape", "Shape"), &st, n, in, &sc);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "ReplacePackWithTileReshape", "Reshape"), "Reshape", n, &rs);
    if (s == GN_OK) s = gn__node_add_input(a->g, rs, (gn__edge){tile, 0});
    if (s == GN_OK) s = gn__node_add_input(a->g, rs, (gn__edge){sc, 0});
    if (s == GN_OK) s = gn__ar_set_type(a, rs, "T", T);
    if (s == GN_OK) s = gn__ar_set_type(a, rs, "Tshape", GN__AR_I32);
    if (s == GN_OK) {
        oi = gn__ar_info_of(a, (gn__edge){n, 0});
        s = gn__ar_set_info(a, rs, T, &oi->s);
    }
    gn__tensor_release(&mt);
    gn__tensor_release(&st);
    if (s == GN_OK) {
        gn__ar_rewrote(a, P, n, "%u Pack node%s of copies of '%s' -> Tile '%s' + Reshape '%s'", chain.n,
                       chain.n == 1 ? "" : "s", NM(a, in.node), NM(a, tile), NM(a, rs));
        r->repl = true;
        r->to = (gn__edge){rs, 0};
        r->stop = true;
    }
out:
    free(chain.v);
    return s;
}

/* ==== 12. replace_mul_with_tile ====================================================================== */
static bool is_ones_f32(gn__ar *a, gn_id id)
{
    if (gn__ar_type_attr(a, id, "dtype") != GN__AR_F32) return false;
    int32_t dt = 0;
    double re = 0, im = 0;
    return gn__ar_const_all_equal(a, id, &dt, &re, &im) && re == 1.0 && im == 0.0;
}

gn_status gn__ar_replace_mul_with_tile(gn__ar *a, gn_id n, gn__ar_res *r)
{
    enum { P = GN__AR_P_REPLACE_MUL_WITH_TILE };
    if (gn__ar_op(a, n) != GN__AR_OP_Mul || gn__ar_node(a, n)->n_in != 2) return GN_OK;
    gn__edge xe = gn__ar_in(a, n, 0), oe = gn__ar_in(a, n, 1);
    if (gn__ar_op(a, xe.node) == GN__AR_OP_Const || !is_ones_f32(a, oe.node)) return GN_OK;
    const gn__ar_shape *xs = shape_of(a, xe), *os = shape_of(a, oe);
    gn__ar_shape bs;
    if (!xs || !os || !gn__ar_broadcast(a, xs, os, &bs) || gn__ar_shape_equal(xs, &bs)) return GN_OK;
    if (gn__ar_preserved(a, n) || gn__ar_preserved(a, xe.node)) {
        gn__ar_refuse(a, P, n, "'%s' is preserved", NM(a, gn__ar_preserved(a, n) ? n : xe.node));
        return GN_OK;
    }
    if (xs->rank != bs.rank || os->rank != bs.rank) {
        gn__ar_refuse(a, P, n, "the operands differ in rank");
        return GN_OK;
    }
    if (gn__ar_name_taken(a, n, "ReplaceMulWithBroadcastByTile", "Tile") ||
        gn__ar_name_taken(a, n, "ReplaceMulWithBroadcastByTile", "Const"))
        return GN_OK;
    int64_t m[GN__MAX_RANK];
    for (int32_t i = 0; i < bs.rank; i++) {
        if (xs->d[i] == bs.d[i]) m[i] = 1;
        else if (xs->d[i] == 1 && bs.d[i] >= 0 && bs.d[i] <= INT32_MAX) m[i] = bs.d[i];
        else {
            gn__ar_refuse(a, P, n, "the multiples are not known");
            return GN_OK;
        }
    }
    int32_t T = gn__ar_type_attr(a, n, "T");
    gn__tensor mt;
    GN_TRY(int32_tensor(a, m, bs.rank, &mt));
    gn_id c = GN_NONE, tile = GN_NONE;
    gn_status s = gn__ar_add_const(a, gn__ar_name(a, n, "ReplaceMulWithBroadcastByTile", "Const"), &mt, n, xe, &c);
    gn__tensor_release(&mt);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, c, oe.node);
    if (s == GN_OK) s = gn__ar_add_node(a, gn__ar_name(a, n, "ReplaceMulWithBroadcastByTile", "Tile"), "Tile", n, &tile);
    if (s == GN_OK) s = gn__node_add_input(a->g, tile, xe);
    if (s == GN_OK) s = gn__node_add_input(a->g, tile, (gn__edge){c, 0});
    if (s == GN_OK) s = gn__ar_set_type(a, tile, "T", T);
    if (s == GN_OK) s = gn__ar_set_type(a, tile, "Tmultiples", GN__AR_I32);
    if (s == GN_OK) s = gn__ar_forward_ctrl(a, tile, n);
    if (s == GN_OK) s = gn__ar_set_info(a, tile, T, &bs);
    GN_TRY(s);
    gn__ar_rewrote(a, P, n, "Mul by ones '%s' -> Tile '%s'", NM(a, oe.node), NM(a, tile));
    r->repl = true;
    r->to = (gn__edge){tile, 0};
    r->stop = true;
    return GN_OK;
}
