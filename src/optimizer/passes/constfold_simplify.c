/* Constant folding: the simplifications of docs/reference_grappler.md
 * §3.6.6, tried in Grappler's order; the first that applies wins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/tensor.h"
#include "optimizer/passes/constfold_impl.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

static gn_status nomem(cf_state *s) { return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory"); }

static bool is_float_or_complex(int32_t dt) { return gn__dtype_is_float(dt) || gn__dtype_is_complex(dt); }

static int64_t attr_int(cf_state *s, gn_id id, const char *key, int64_t dflt)
{
    int64_t v;
    return gn__attr_get_int(s->g, id, key, &v) ? v : dflt;
}

/* The constant vector feeding input slot of id (decoded), or false. */
static bool const_input(cf_state *s, gn_id id, uint32_t slot, int64_t **v, int64_t *n)
{
    const gn__node *nd = gn__node_at(s->g, id);
    if (slot >= nd->n_in) return false;
    return gn__cf_const_ints(s, nd->in[slot].node, v, n, 1 << 20);
}

static gn_status identity(cf_state *s, gn_id id, int pat, uint32_t k, bool snapshot, const char *what, bool *done)
{
    GN_TRY(gn__cf_to_identity(s, id, k, snapshot, done));
    if (*done) gn__cf_rewrote(s, pat, id, "%s", what);
    return GN_OK;
}

/* 1. Split / SplitV with num_split = 1 */
static gn_status remove_split(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_SPLIT && k != K_SPLIT_V) || !s->en[CF_P_REMOVE_SPLIT]) return GN_OK;
    int64_t ns;
    if (!gn__attr_get_int(s->g, id, "num_split", &ns) || ns != 1) return GN_OK;
    return identity(s, id, CF_P_REMOVE_SPLIT, k == K_SPLIT ? 1 : 0, false, "split into one piece", done);
}

/* 2. Transpose that keeps every dimension larger than 1 in place */
static gn_status remove_transpose(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_TRANSPOSE && k != K_SHUFFLE) || !s->en[CF_P_REMOVE_TRANSPOSE] || !s->st) return GN_OK;
    int64_t *perm, np;
    if (!const_input(s, id, 1, &perm, &np)) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (x.shape.rank < 0 || np != x.shape.rank) return GN_OK;
    for (int32_t j = 0; j < x.shape.rank; j++)
        if (!(x.shape.dims[j] == 1 || perm[j] == j)) return GN_OK;
    return identity(s, id, CF_P_REMOVE_TRANSPOSE, 0, false, "permutation moves no dimension larger than 1", done);
}

/* 3. RandomShuffle of a scalar or of a leading dimension 1 */
static gn_status remove_shuffle(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_RANDOM_SHUFFLE || !s->en[CF_P_REMOVE_SHUFFLE] || !s->st) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (x.shape.rank < 0 || (x.shape.rank > 0 && x.shape.dims[0] != 1)) return GN_OK;
    return identity(s, id, CF_P_REMOVE_SHUFFLE, 0, false, "nothing to shuffle", done);
}

/* 4. ReverseV2 along dimensions of size 1 only */
static gn_status remove_reverse(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_REVERSE_V2 || !s->en[CF_P_REMOVE_REVERSE] || !s->st) return GN_OK;
    int64_t *ax, na;
    if (!const_input(s, id, 1, &ax, &na)) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    int32_t r = x.shape.rank;
    if (r < 0 || (r == 0 && na > 0)) return GN_OK;
    for (int64_t i = 0; i < na; i++) {
        int64_t a = ((ax[i] + r) % r + r) % r;
        if (x.shape.dims[a] != 1) return GN_OK;
    }
    return identity(s, id, CF_P_REMOVE_REVERSE, 0, false, "reversed dimensions all have size 1", done);
}

/* 5. Slice of the whole input */
static gn_status remove_slice(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_SLICE || !s->en[CF_P_REMOVE_SLICE] || !s->st) return GN_OK;
    int64_t *b, nb, *sz, ns;
    if (!const_input(s, id, 1, &b, &nb) || !const_input(s, id, 2, &sz, &ns)) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (x.shape.rank < 0 || nb < x.shape.rank || ns < x.shape.rank) return GN_OK;
    for (int32_t j = 0; j < x.shape.rank; j++)
        if (b[j] != 0 || !(sz[j] == -1 || sz[j] == x.shape.dims[j])) return GN_OK;
    return identity(s, id, CF_P_REMOVE_SLICE, 0, false, "slice of the whole input", done);
}

/* 6. StridedSlice of the whole input */
static gn_status remove_strided_slice(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_STRIDED_SLICE || !s->en[CF_P_REMOVE_STRIDED_SLICE] || !s->st) return GN_OK;
    if (gn__node_at(s->g, id)->n_in != 4) return GN_OK;
    if (attr_int(s, id, "new_axis_mask", 0) != 0 || attr_int(s, id, "shrink_axis_mask", 0) != 0) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (x.shape.rank < 0) return GN_OK;
    int32_t r = x.shape.rank;
    for (int32_t j = 0; j < r; j++)
        if (x.shape.dims[j] < 0) return GN_OK;
    int64_t *b, nb, *e, ne, *st, ns;
    if (!const_input(s, id, 1, &b, &nb) || !const_input(s, id, 2, &e, &ne) || !const_input(s, id, 3, &st, &ns))
        return GN_OK;
    int64_t bm = attr_int(s, id, "begin_mask", 0), em = attr_int(s, id, "end_mask", 0);
    int64_t elm = attr_int(s, id, "ellipsis_mask", 0);
    bool expanded[GN__MAX_RANK] = {false};
    int32_t n_exp = 0, ell = -1;
    for (int32_t j = 0; j < r; j++) {
        if ((j < 63 && (elm & ((int64_t)1 << j))) || (ell == -1 && j >= ns)) ell = j;
        if (ell != -1 && r > ns + j - ell) {
            expanded[j] = true;
            n_exp++;
        }
    }
    for (int32_t j = 0; j < r; j++) {
        if (expanded[j]) continue;
        int32_t i = j;
        if (ell != -1 && j >= ell + n_exp) i = j - n_exp;
        if (i >= nb || i >= ne || i >= ns || i >= 63) return GN_OK;
        bool bok = (bm & ((int64_t)1 << i)) || b[i] == 0;
        bool eok = (em & ((int64_t)1 << i)) || e[i] == x.shape.dims[j];
        if (!bok || !eok || st[i] != 1) return GN_OK;
    }
    return identity(s, id, CF_P_REMOVE_STRIDED_SLICE, 0, false, "strided slice of the whole input", done);
}

/* 7. Tile with all multiples 1 */
static gn_status remove_tile(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_TILE || !s->en[CF_P_REMOVE_TILE] || !s->st) return GN_OK;
    int64_t *m, nm;
    if (!const_input(s, id, 1, &m, &nm)) return GN_OK;
    for (int64_t i = 0; i < nm; i++)
        if (m[i] != 1) return GN_OK;
    return identity(s, id, CF_P_REMOVE_TILE, 0, false, "all multiples are 1", done);
}

/* 8. Pad / PadV2 with all paddings 0 */
static gn_status remove_pad(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_PAD && k != K_PAD_V2) || !s->en[CF_P_REMOVE_PAD] || !s->st) return GN_OK;
    int64_t *p, np;
    if (!const_input(s, id, 1, &p, &np)) return GN_OK;
    for (int64_t i = 0; i < np; i++)
        if (p[i] != 0) return GN_OK;
    return identity(s, id, CF_P_REMOVE_PAD, 0, false, "all paddings are 0", done);
}

/* 9. Squeeze of an input without dimensions of size 1 */
static gn_status remove_squeeze(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_SQUEEZE || !s->en[CF_P_REMOVE_SQUEEZE] || !s->st) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (x.shape.rank < 0) return GN_OK;
    for (int32_t j = 0; j < x.shape.rank; j++)
        if (!(x.shape.dims[j] > 1)) return GN_OK;
    return identity(s, id, CF_P_REMOVE_SQUEEZE, 0, false, "no dimension of size 1", done);
}

/* 10. Pack of one input -> ExpandDims */
static gn_status pack(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_PACK || !s->en[CF_P_PACK]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in != 1) return GN_OK;
    const char *nm = gn__node_name(g, id);
    size_t need = strlen(nm) + 48;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return nomem(s);
    snprintf(want, need, "ConstantFolding/%s_const_axis", nm);
    if (gn__graph_find(g, want) != GN_NONE) return GN_OK;
    /* a fed input is not a fixed tensor; preserved nodes stand in for feeds */
    if (gn__node_at(g, n->in[0].node)->flags & GN__NODE_PRESERVE) {
        gn__cf_refused(s, CF_P_PACK, id, "the input may be fed");
        return GN_OK;
    }
    int64_t axis = attr_int(s, id, "axis", 0);
    int32_t av = (int32_t)axis;
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT(INT32);
    t.rank = 0;
    t.data = &av;
    t.nbytes = 4;
    Tensorflow__TensorProto *p;
    size_t enc;
    GN_TRY(gn__cf_encode(s, &t, &p, &enc));
    gn_id c, a;
    GN_TRY(gn__cf_new_const(s, nm, "_const_axis", gn__node_at(g, id)->device, DT(INT32), p, &c));
    GN_TRY(gn__cf_ctrl_anchor(s, gn__node_at(g, id)->in[0], &a));
    GN_TRY(gn__node_add_control(g, c, a));
    GN_TRY(gn__node_set_op(g, id, "ExpandDims"));
    GN_TRY(gn__node_remove_attr(g, id, "axis"));
    GN_TRY(gn__node_remove_attr(g, id, "N"));
    Tensorflow__AttrValue *td = gn__cf_attr_type(s, DT(INT32));
    if (!td) return nomem(s);
    GN_TRY(gn__node_set_attr(g, id, "Tdim", td));
    GN_TRY(gn__node_add_input(g, id, (gn__edge){c, 0}));
    gn__cf_rewrote(s, CF_P_PACK, id, "Pack of one input became ExpandDims (axis %lld)", (long long)axis);
    gn__cf_enqueue(s, id);
    *done = true;
    return GN_OK;
}

/* 11. constant into Enter(is_constant): consumers read a copy inside the frame */
static gn_status enter(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_ENTER && k != K_REF_ENTER) || !s->en[CF_P_ENTER]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    bool isc = false;
    if (n->n_in == 0 || !gn__attr_get_bool(g, id, "is_constant", &isc) || !isc) return GN_OK;
    gn_id in = n->in[0].node;
    if (!gn__cf_really_const(s, in)) return GN_OK;
    const char *inm = gn__node_name(g, in);
    size_t need = strlen(inm) + 48;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return nomem(s);
    snprintf(want, need, "ConstantFolding/%s_enter", inm);
    if (gn__graph_find(g, want) != GN_NONE) return GN_OK;
    bool any = false;
    for (uint32_t u = 0; u < n->n_use && !any; u++) {
        gn__use us = n->use[u];
        any = !gn__cf_is_const_op(s, us.node) && g->nodes[us.node].in[us.slot].index == 0;
    }
    if (!any) return GN_OK;
    gn_id c;
    GN_TRY(gn__node_add(g, want, gn__node_op(g, in), &c));
    if (!gn__cf_reserve(s)) return nomem(s);
    s->fl[c] |= CF_NEW;
    gn__node_at(g, c)->device = gn__node_at(g, id)->device;
    for (uint32_t a = 0; a < gn__node_at(g, in)->n_attr; a++) {
        const gn__node *src = gn__node_at(g, in);
        GN_TRY(gn__node_set_attr(g, c, gn__str(g, src->attr[a].key), src->attr[a].value));
    }
    GN_TRY(gn__node_add_control(g, c, id));
    GN_TRY(gn__cf_rewire_port(s, id, 0, (gn__edge){c, 0}));
    gn__cf_rewrote(s, CF_P_ENTER, id, "consumers read a copy of constant '%s' in the frame", inm);
    *done = true;
    return GN_OK;
}

/* 12. Switch(p, p) */
static gn_status switch_same(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_SWITCH || !s->en[CF_P_SWITCH]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 2 || n->in[0].node != n->in[1].node || n->in[0].index != n->in[1].index) return GN_OK;
    const char *nm = gn__node_name(g, id);
    size_t need = strlen(nm) + 48;
    char *wf = gn__arena_alloc(&s->arena, need, 1), *wt = gn__arena_alloc(&s->arena, need, 1);
    if (!wf || !wt) return nomem(s);
    snprintf(wf, need, "ConstantFolding/%s_const_false", nm);
    snprintf(wt, need, "ConstantFolding/%s_const_true", nm);
    if (gn__graph_find(g, wf) != GN_NONE || gn__graph_find(g, wt) != GN_NONE) return GN_OK;
    /* already done (Grappler: the only consumers are two Identities without data
     * consumers): here, nothing but such Identities reads the Switch */
    bool work = false;
    for (uint32_t u = 0; u < n->n_use && !work; u++) {
        gn_id c = n->use[u].node;
        cf_kind ck = gn__cf_kind(s, c);
        work = !((ck == K_IDENTITY || ck == K_REF_IDENTITY) && gn__node_at(g, c)->n_use == 0);
    }
    if (!work) return GN_OK;
    /* snapshot the data consumers of ports 0/1 before anchors are made */
    uint32_t nu = n->n_use;
    gn__use *us = gn__arena_alloc(&s->arena, (nu ? nu : 1) * sizeof *us, _Alignof(gn__use));
    if (!us) return nomem(s);
    if (nu) memcpy(us, n->use, nu * sizeof *us);
    gn_id cs[2];
    for (int j = 0; j < 2; j++) {
        uint8_t b = (uint8_t)j;
        gn__tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = DT(BOOL);
        t.data = &b;
        t.nbytes = 1;
        Tensorflow__TensorProto *p;
        size_t enc;
        GN_TRY(gn__cf_encode(s, &t, &p, &enc));
        GN_TRY(gn__cf_new_const(s, nm, j ? "_const_true" : "_const_false", gn__node_at(g, id)->device, DT(BOOL), p,
                                &cs[j]));
    }
    gn_id anc[2];
    for (int j = 0; j < 2; j++) {
        GN_TRY(gn__cf_ctrl_anchor(s, (gn__edge){id, (uint32_t)j}, &anc[j]));
        GN_TRY(gn__node_add_control(g, cs[j], anc[j]));
    }
    for (uint32_t u = 0; u < nu; u++) {
        gn__edge e = g->nodes[us[u].node].in[us[u].slot];
        if (e.node != id || e.index > 1 || us[u].node == anc[0] || us[u].node == anc[1]) continue;
        GN_TRY(gn__node_set_input(g, us[u].node, us[u].slot, (gn__edge){cs[e.index], 0}));
        gn__cf_enqueue(s, us[u].node);
    }
    gn__cf_rewrote(s, CF_P_SWITCH, id, "Switch on its own data: consumers read false/true constants");
    *done = true;
    return GN_OK;
}

/* 13. reductions */
static bool is_reduction(cf_kind k)
{
    return k == K_SUM || k == K_PROD || k == K_MIN || k == K_MAX || k == K_MEAN || k == K_ANY || k == K_ALL;
}

/* Identity of input 0; input 1 (a constant) becomes a plain control input placed
 * before the existing ones, as Grappler's in-place "^input" does. */
static gn_status second_to_control(cf_state *s, gn_id id, int32_t dt, int pat, const char *what, bool *done)
{
    gn_graph *g = s->g;
    gn__node *n = gn__node_at(g, id);
    gn_id idx = n->in[1].node;
    uint32_t nc = n->n_ctrl;
    gn_id *old = gn__arena_alloc(&s->arena, (nc ? nc : 1) * sizeof *old, _Alignof(gn_id));
    if (!old) return nomem(s);
    if (nc) memcpy(old, n->ctrl, nc * sizeof *old);
    while (gn__node_at(g, id)->n_in > 1) GN_TRY(gn__node_remove_input(g, id, gn__node_at(g, id)->n_in - 1));
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_remove_control(g, id, old[i]));
    GN_TRY(gn__node_add_control(g, id, idx));
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_control(g, id, old[i]));
    GN_TRY(gn__cf_clear_attrs(s, id, true));
    GN_TRY(gn__node_set_op(g, id, "Identity"));
    Tensorflow__AttrValue *t = gn__cf_attr_type(s, dt);
    if (!t) return nomem(s);
    GN_TRY(gn__node_set_attr(g, id, "T", t));
    gn__cf_rewrote(s, pat, id, "%s", what);
    if (id < s->cap_fl) s->fl[id] &= (uint16_t)~(CF_NOFOLD | CF_REPORTED);
    gn__cf_enqueue(s, id);
    gn__cf_enqueue(s, idx);
    gn__cf_enqueue_consumers(s, id);
    *done = true;
    return GN_OK;
}

static gn_status reduction_to_identity(cf_state *s, gn_id id, cf_kind k, const char *what, bool *done)
{
    int dt = 0;
    if (!gn__attr_get_type(s->g, id, "T", &dt)) {
        if (k != K_ANY && k != K_ALL) return GN_OK;
        dt = DT(BOOL);
    }
    return second_to_control(s, id, dt, CF_P_REDUCTION, what, done);
}

static gn_status simplify_reduction(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (!is_reduction(k) || !s->en[CF_P_REDUCTION]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 2) return GN_OK;
    gn_id idx = n->in[1].node;
    if (!gn__cf_really_const(s, idx) || !gn__cf_const_value(s, idx)) return GN_OK;
    int64_t nidx = gn__cf_const_numel(s, idx);
    if (nidx == 0) return reduction_to_identity(s, id, k, "reduction over no dimension", done);
    if (!s->st) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0), o = gn__cf_out_info(s, id, 0);
    if (!gn__shape_fully_defined(&x.shape) || !gn__shape_fully_defined(&o.shape)) return GN_OK;
    int64_t *iv, ni;
    if (!gn__cf_const_ints(s, idx, &iv, &ni, 1 << 20)) return GN_OK;
    bool keep = false;
    gn__attr_get_bool(g, id, "keep_dims", &keep);
    bool single = gn__shape_num_elements(&x.shape) == 1 && gn__shape_num_elements(&o.shape) == 1;
    bool has_t = gn__node_attr(g, id, "T") != NULL;
    if (single && !keep && has_t) {
        /* One element in, one out. Grappler makes this a Reshape to [1,...,1]
         * of the output rank, which costs a new shape Const; every input dim is
         * 1, so dropping the reduced dims is exactly a Squeeze of them, which
         * needs no new node (and the indices Const becomes a control input). */
        if (x.shape.rank < 1 || ni < 1 || ni > x.shape.rank) return GN_OK;
        int64_t *dims = gn__arena_alloc(&s->arena, (size_t)x.shape.rank * sizeof *dims, _Alignof(int64_t));
        if (!dims) return nomem(s);
        int64_t nd = 0;
        for (int32_t d = 0; d < x.shape.rank; d++) {
            bool reduced = false;
            for (int64_t i = 0; i < ni; i++) {
                if (iv[i] < -(int64_t)x.shape.rank || iv[i] >= x.shape.rank) return GN_OK;
                reduced |= (iv[i] < 0 ? iv[i] + x.shape.rank : iv[i]) == d;
            }
            if (reduced) dims[nd++] = d;
        }
        if (o.shape.rank != x.shape.rank - nd) return GN_OK;
        int dt = 0;
        if (!gn__attr_get_type(g, id, "T", &dt)) return GN_OK;
        Tensorflow__AttrValue *sq = gn__cf_attr_int_list(s, dims, nd);
        Tensorflow__AttrValue *ta = gn__cf_attr_type(s, dt);
        if (!sq || !ta) return nomem(s);
        bool done2 = false;
        GN_TRY(second_to_control(s, id, dt, CF_P_REDUCTION, "reduction of one element became Squeeze", &done2));
        GN_TRY(gn__node_set_op(g, id, "Squeeze"));
        GN_TRY(gn__node_set_attr(g, id, "squeeze_dims", sq));
        *done = done2;
        return GN_OK;
    }
    if (!keep) return GN_OK;
    for (int64_t i = 0; i < ni; i++) {
        int64_t d = iv[i] < 0 ? iv[i] + x.shape.rank : iv[i];
        if (d < 0 || d >= x.shape.rank || x.shape.dims[d] != 1) return GN_OK;
    }
    return reduction_to_identity(s, id, k, "reduced dimensions all have size 1 (keep_dims)", done);
}

/* 14. Reshape to the input's own shape */
static gn_status remove_reshape(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_RESHAPE || !s->en[CF_P_RESHAPE] || !s->st) return GN_OK;
    gn_graph *g = s->g;
    int dt = 0;
    if (!gn__attr_get_type(g, id, "T", &dt) || gn__node_at(g, id)->n_in < 2) return GN_OK;
    int64_t *v, nv;
    if (!const_input(s, id, 1, &v, &nv)) return GN_OK;
    gn__tinfo x = gn__cf_in_info(s, id, 0);
    if (!x.dtype || !gn__shape_fully_defined(&x.shape) || nv != x.shape.rank) return GN_OK;
    for (int64_t i = 0; i < nv; i++) {
        if (v[i] < -1) return GN_OK;
        if (v[i] != -1 && v[i] != x.shape.dims[i]) return GN_OK;
    }
    return second_to_control(s, id, dt, CF_P_RESHAPE, "reshape to the input's own shape", done);
}

/* 15. arithmetic with zeros and ones */
static gn_status neg_or_recip(cf_state *s, gn_id id, const char *op)
{
    static const uint32_t swap[2] = {1, 0};
    GN_TRY(gn__cf_permute_inputs(s, id, swap, 2));
    GN_TRY(gn__cf_inputs_to_controls(s, id, 1));
    GN_TRY(gn__node_set_op(s->g, id, op));
    gn__cf_enqueue(s, id);
    gn__cf_enqueue_consumers(s, id);
    return GN_OK;
}

static void shape_text(const gn__tinfo *t, char *buf, size_t n) { gn__shape_str(&t->shape, buf, n); }

static gn_status arithmetic(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    gn_graph *g = s->g;
    int dtT = 0;
    bool has_T = gn__attr_get_type(g, id, "T", &dtT);
    bool is_mul = k == K_MUL || k == K_MUL_NO_NAN || k == K_LOGICAL_AND;
    bool is_matmul = k == K_MATMUL || k == K_SPARSE_MATMUL || k == K_BATCH_MATMUL || k == K_BATCH_MATMUL_V2;
    bool is_add = ((k == K_ADD || k == K_ADDV2) && !(has_T && dtT == DT(STRING))) || k == K_BIAS_ADD ||
                  k == K_BIAS_ADD_V1 || k == K_LOGICAL_OR;
    bool is_sub = k == K_SUB;
    bool is_div = k == K_REAL_DIV || k == K_DIV || k == K_XDIVY || k == K_TRUNCATE_DIV;
    if (!(is_mul || is_matmul || is_add || is_sub || is_div) || !s->st) return GN_OK;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 2) return GN_OK;
    gn_id xn = n->in[0].node, yn = n->in[1].node;
    gn__tinfo o = gn__cf_out_info(s, id, 0), x = gn__cf_in_info(s, id, 0), y = gn__cf_in_info(s, id, 1);
    if (o.shape.rank < 0 && x.shape.rank < 0 && y.shape.rank < 0) return GN_OK;
    bool bias = k == K_BIAS_ADD || k == K_BIAS_ADD_V1;
    /* "matches the output shape": known and equal, or provably so because the
     * other operand broadcasts onto it (elementwise ops), or BiasAdd's value */
    bool y_match = gn__cf_shape_same_known(&o.shape, &y.shape) ||
                   (!is_matmul && !bias && gn__cf_broadcast_keeps(&y.shape, &x.shape));
    bool x_match = gn__cf_shape_same_known(&o.shape, &x.shape) ||
                   (!is_matmul && ((bias && x.shape.rank >= 0) || (!bias && gn__cf_broadcast_keeps(&x.shape, &y.shape))));
    bool x_zero = gn__cf_is_zeros(s, xn);
    bool x_one = !x_zero && gn__cf_is_ones(s, xn);
    char b1[96], b2[96];
    if ((is_mul && x_one) || (is_add && x_zero)) {
        int pat = is_mul ? CF_P_MUL_BY_ONE : CF_P_ADD_ZERO;
        if (!s->en[pat]) return GN_OK;
        if (y_match) return identity(s, id, pat, 1, true, is_mul ? "1*y is y" : "0+y is y", done);
        if (x_match) {
            GN_TRY(gn__cf_to_broadcast(s, id, 1, done));
            if (*done) gn__cf_rewrote(s, pat, id, "%s", is_mul ? "1*y is BroadcastTo(y)" : "0+y is BroadcastTo(y)");
            return GN_OK;
        }
        shape_text(&y, b1, sizeof b1);
        shape_text(&o, b2, sizeof b2);
        gn__cf_refused(s, pat, id, "y %s is not known to have the output shape %s", b1, b2);
        return GN_OK;
    }
    if (is_sub && x_zero && s->en[CF_P_SUB_FROM_ZERO]) {
        if (y_match) {
            GN_TRY(neg_or_recip(s, id, "Neg"));
            gn__cf_rewrote(s, CF_P_SUB_FROM_ZERO, id, "0-y became Neg(y)");
            *done = true;
            return GN_OK;
        }
    }
    if (is_div && x_one && s->en[CF_P_ONE_DIV] && y_match && has_T && is_float_or_complex(dtT)) {
        GN_TRY(neg_or_recip(s, id, "Reciprocal"));
        gn__cf_rewrote(s, CF_P_ONE_DIV, id, "1/y became Reciprocal(y)");
        *done = true;
        return GN_OK;
    }
    bool y_zero = gn__cf_is_zeros(s, yn);
    bool y_one = !y_zero && gn__cf_is_ones(s, yn);
    if (((is_mul || is_div) && y_one) || ((is_add || is_sub) && y_zero)) {
        int pat = is_mul ? CF_P_MUL_BY_ONE : is_div ? CF_P_DIV_BY_ONE : CF_P_ADD_ZERO;
        if (!s->en[pat]) return GN_OK;
        const char *w = is_mul ? "x*1 is x" : is_div ? "x/1 is x" : is_add ? "x+0 is x" : "x-0 is x";
        if (x_match) return identity(s, id, pat, 0, true, w, done);
        if (y_match) {
            GN_TRY(gn__cf_to_broadcast(s, id, 0, done));
            if (*done) gn__cf_rewrote(s, pat, id, "%s (BroadcastTo)", w);
            return GN_OK;
        }
        shape_text(&x, b1, sizeof b1);
        shape_text(&o, b2, sizeof b2);
        gn__cf_refused(s, pat, id, "x %s is not known to have the output shape %s", b1, b2);
        return GN_OK;
    }
    bool full = gn__shape_fully_defined(&o.shape);
    if (k == K_LOGICAL_OR && (x_one || y_one) && s->en[CF_P_OR_TRUE]) {
        if (full) {
            GN_TRY(gn__cf_to_constant(s, id, 1, &o.shape, done));
            if (*done) gn__cf_rewrote(s, CF_P_OR_TRUE, id, "x OR true is true");
        }
        return GN_OK;
    }
    bool zero_div = is_div && x_zero && s->aggressive;
    if ((x_zero || y_zero) && (is_mul || is_matmul || zero_div) && s->en[CF_P_MUL_BY_ZERO]) {
        if (full) {
            GN_TRY(gn__cf_to_constant(s, id, 0, &o.shape, done));
            if (*done) gn__cf_rewrote(s, CF_P_MUL_BY_ZERO, id, "a product with zeros is zeros");
            return GN_OK;
        }
        if ((is_mul || is_div) && x_zero) {
            if (x_match) return identity(s, id, CF_P_MUL_BY_ZERO, 0, false, "0*y is the zeros", done);
            if (y_match) {
                GN_TRY(gn__cf_to_broadcast(s, id, 0, done));
                if (*done) gn__cf_rewrote(s, CF_P_MUL_BY_ZERO, id, "0*y is BroadcastTo(zeros)");
            }
        } else if (is_mul && y_zero) {
            if (y_match) return identity(s, id, CF_P_MUL_BY_ZERO, 1, false, "x*0 is the zeros", done);
            if (x_match) {
                GN_TRY(gn__cf_to_broadcast(s, id, 1, done));
                if (*done) gn__cf_rewrote(s, CF_P_MUL_BY_ZERO, id, "x*0 is BroadcastTo(zeros)");
            }
        }
        if (!*done) {
            shape_text(&o, b2, sizeof b2);
            gn__cf_refused(s, CF_P_MUL_BY_ZERO, id, "output shape %s not fully known", b2);
        }
    }
    return GN_OK;
}

/* 16. division by a constant -> multiplication by its reciprocal */
static gn_status div_to_recip(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_DIV && k != K_REAL_DIV && k != K_XDIVY) || !s->en[CF_P_DIV_TO_RECIP]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 2 || !gn__cf_really_const(s, n->in[1].node)) return GN_OK;
    const Tensorflow__AttrValue *T = gn__node_attr(g, id, "T");
    int dt = 0;
    if (!T || !gn__attr_get_type(g, id, "T", &dt)) return GN_OK;
    if (k == K_DIV && !is_float_or_complex(dt)) return GN_OK;
    char *name;
    {
        const char *nm = gn__node_name(g, id);
        size_t need = strlen(nm) + 64;
        name = gn__arena_alloc(&s->arena, need, 1);
        char *mid = gn__arena_alloc(&s->arena, need, 1);
        if (!name || !mid) return nomem(s);
        snprintf(mid, need, "%s_recip", nm);
        gn__pass_unique_name(g, "ConstantFolding", mid, name, need);
    }
    gn_id r;
    GN_TRY(gn__node_add(g, name, "Reciprocal", &r));
    if (!gn__cf_reserve(s)) return nomem(s);
    s->fl[r] |= CF_NEW;
    gn__node_at(g, r)->device = gn__node_at(g, id)->device;
    GN_TRY(gn__node_add_input(g, r, gn__node_at(g, id)->in[1]));
    GN_TRY(gn__node_set_attr(g, r, "T", T));
    if (k == K_XDIVY) {
        gn__edge x = gn__node_at(g, id)->in[0];
        GN_TRY(gn__node_set_op(g, id, "MulNoNan"));
        GN_TRY(gn__node_set_input(g, id, 1, x));
        GN_TRY(gn__node_set_input(g, id, 0, (gn__edge){r, 0}));
    } else {
        GN_TRY(gn__node_set_op(g, id, "Mul"));
        GN_TRY(gn__node_set_input(g, id, 1, (gn__edge){r, 0}));
    }
    gn__cf_rewrote(s, CF_P_DIV_TO_RECIP, id, "x/c became x*Reciprocal(c)");
    gn__cf_enqueue(s, r);
    gn__cf_enqueue(s, id);
    *done = true;
    return GN_OK;
}

/* 17. ConstantPushDown (and the context 23 shares) */
typedef struct push_ctx {
    gn_id op_child, const_child, left_leaf, right_leaf;
    bool lc, rc, llc, rlc;
} push_ctx;

static bool consumes(const gn_graph *g, gn_id producer, gn_id who)
{
    const gn__node *p = gn__node_at(g, producer);
    for (uint32_t i = 0; i < p->n_use; i++)
        if (p->use[i].node == who) return true;
    for (uint32_t i = 0; i < p->n_cuse; i++)
        if (p->cuse[i] == who) return true;
    return false;
}

/* Might `from` depend on `on` (through data or control inputs)? The walk
 * stops after a few hundred nodes and then answers yes. A constant that
 * waits on the node it would be moved into (a materialized Shape of it
 * carries a control edge from it) would make a cycle. */
static bool may_depend_on(const gn_graph *g, gn_id from, gn_id on)
{
    enum { MAX_SEEN = 256 };
    gn_id seen[MAX_SEEN];
    uint32_t n_seen = 0, next = 0;
    seen[n_seen++] = from;
    while (next < n_seen) {
        const gn__node *p = gn__node_at(g, seen[next++]);
        for (uint32_t k = 0; k < p->n_in + p->n_ctrl; k++) {
            gn_id u = k < p->n_in ? p->in[k].node : p->ctrl[k - p->n_in];
            if (u == on) return true;
            bool dup = false;
            for (uint32_t j = 0; j < n_seen && !dup; j++) dup = seen[j] == u;
            if (dup) continue;
            if (n_seen == MAX_SEEN) return true;
            seen[n_seen++] = u;
        }
    }
    return false;
}

static bool prepare_push(cf_state *s, gn_id id, push_ctx *c)
{
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (!s->has_fetch || n->n_in != 2) return false;
    gn_id l = n->in[0].node, r = n->in[1].node;
    c->lc = gn__cf_really_const(s, l);
    c->rc = gn__cf_really_const(s, r);
    if (!c->lc && !c->rc) return false;
    c->op_child = c->lc ? r : l;
    c->const_child = c->lc ? l : r;
    uint32_t dev = n->device;
    if (gn__node_at(g, c->op_child)->device != dev || gn__node_at(g, c->const_child)->device != dev) return false;
    const gn__node *q = gn__node_at(g, c->op_child);
    if (q->n_in + q->n_ctrl < 2 || q->n_in < 2 || (q->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG)) || q->n_use > 1)
        return false;
    int dt = 0;
    if (!gn__attr_get_type(g, id, "T", &dt) || dt == DT(BFLOAT16) || dt == DT(HALF)) return false;
    if (may_depend_on(g, c->const_child, c->op_child)) return false;
    c->left_leaf = q->in[0].node;
    c->right_leaf = q->in[1].node;
    c->llc = gn__cf_really_const(s, c->left_leaf);
    c->rlc = gn__cf_really_const(s, c->right_leaf);
    if (c->llc && c->rlc) return false;
    if (gn__node_at(g, c->left_leaf)->device != dev || gn__node_at(g, c->right_leaf)->device != dev) return false;
    return true;
}

static bool k_add(cf_state *s, gn_id id)
{
    cf_kind k = gn__cf_kind(s, id);
    int dt = 0;
    if (k != K_ADD && k != K_ADDV2) return false;
    return !(gn__attr_get_type(s->g, id, "T", &dt) && dt == DT(STRING));
}

static gn_status push_down(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (!s->en[CF_P_PUSH_DOWN]) return GN_OK;
    gn_graph *g = s->g;
    bool is_add = k_add(s, id), is_mul = k == K_MUL, is_sub = k == K_SUB, is_div = k == K_DIV;
    if (!(is_add || is_sub || is_mul || is_div)) return GN_OK;
    bool sym = is_add || is_mul;
    push_ctx c;
    if (!prepare_push(s, id, &c)) return GN_OK;
    cf_kind ck = gn__cf_kind(s, c.op_child);
    bool c_add = k_add(s, c.op_child), c_mul = ck == K_MUL, c_sub = ck == K_SUB, c_div = ck == K_DIV;
    bool add_sub = (is_add || is_sub) && (c_add || c_sub);
    bool mul_div = (is_mul || is_div) && (c_mul || c_div);
    if (!add_sub && !mul_div) return GN_OK;
    bool c_sym = c_add || c_mul;
    int dt = 0;
    gn__attr_get_type(g, id, "T", &dt);
    if (!(sym && c_sym) && !is_float_or_complex(dt)) return GN_OK;
    gn_id y_node = c.llc ? c.left_leaf : c.right_leaf;
    if (!gn__cf_really_const(s, y_node)) {
        /* do not make broadcasting work larger: C must not be bigger than X */
        gn__tinfo cs = gn__cf_in_info(s, id, c.lc ? 0 : 1);
        gn__tinfo xs = gn__cf_in_info(s, c.op_child, c.llc ? 1 : 0);
        if (gn__shape_fully_defined(&cs.shape) && gn__shape_fully_defined(&xs.shape)) {
            if (gn__shape_num_elements(&cs.shape) > gn__shape_num_elements(&xs.shape)) return GN_OK;
        } else if (cs.shape.rank > 0 && xs.shape.rank >= 0) {
            int32_t m = cs.shape.rank < xs.shape.rank ? cs.shape.rank : xs.shape.rank;
            for (int32_t i = 0; i < m; i++)
                if (xs.shape.dims[i] >= 0 && cs.shape.dims[i] > xs.shape.dims[i]) return GN_OK;
        }
    }
    const gn__node *q = gn__node_at(g, c.op_child);
    const gn__node *p = gn__node_at(g, id);
    gn__edge in_x = c.llc ? q->in[1] : q->in[0];
    gn__edge in_y = c.llc ? q->in[0] : q->in[1];
    gn__edge in_c = c.lc ? p->in[0] : p->in[1];
    gn__edge in_op = c.lc ? p->in[1] : p->in[0];
    gn__edge np0, np1, nq0, nq1;
    if (sym && c_sym) {
        np0 = in_x;
        np1 = in_op;
        nq0 = in_c;
        nq1 = in_y;
    } else {
        bool neg_c = !sym && !c.lc;
        bool child_neg = !sym && c.lc;
        bool neg_x = ((!c_sym && c.llc) != child_neg);   /* X is the right leaf when the left is constant */
        bool neg_y = ((!c_sym && !c.llc) != child_neg);
        const char *so = (is_add || is_sub) ? "Add" : "Mul", *no = (is_add || is_sub) ? "Sub" : "Div";
        GN_TRY(gn__node_set_op(g, id, (neg_x || (neg_c && neg_y)) ? no : so));
        np0 = neg_x ? in_op : in_x;
        np1 = neg_x ? in_x : in_op;
        GN_TRY(gn__node_set_op(g, c.op_child, neg_c != neg_y ? no : so));
        nq0 = neg_c ? in_y : in_c;
        nq1 = neg_c ? in_c : in_y;
    }
    GN_TRY(gn__node_set_input(g, id, 0, np0));
    GN_TRY(gn__node_set_input(g, id, 1, np1));
    GN_TRY(gn__node_set_input(g, c.op_child, 0, nq0));
    GN_TRY(gn__node_set_input(g, c.op_child, 1, nq1));
    gn__cf_mark_stale(s, c.op_child);
    if (c.op_child < s->cap_fl) s->fl[c.op_child] &= (uint16_t)~(CF_NOFOLD | CF_REPORTED);
    gn__cf_rewrote(s, CF_P_PUSH_DOWN, id, "constant '%s' moved down into '%s'", gn__node_name(g, in_c.node),
                   gn__node_name(g, c.op_child));
    gn__cf_enqueue(s, c.op_child);
    gn__cf_enqueue(s, id);
    *done = true;
    return GN_OK;
}

/* 18. Mul(Conv(X, C1), C2) -> Conv(X, Mul(C1, C2)) */
static bool valid_const_shape_for_conv(const char *fmt, const gn__shape *filter, const gn__shape *cs)
{
    if (cs->rank < 0) return false;
    if (gn__shape_fully_defined(cs) && cs->rank <= (int32_t)strlen(fmt) && gn__shape_num_elements(cs) == 1)
        return true;
    if (strcmp(fmt, "NHWC") == 0 || strcmp(fmt, "NDHWC") == 0) {
        if (!gn__cf_broadcast_keeps(filter, cs)) return false;
        for (int32_t i = 0; i < cs->rank - 1; i++)
            if (cs->dims[i] != 1) return false;
        return true;
    }
    return false;
}

static gn_status mul_conv(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_MUL && k != K_MUL_NO_NAN) || !s->en[CF_P_MUL_CONV] || !s->st) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in != 2) return GN_OK;
    gn_id l = n->in[0].node, r = n->in[1].node;
    bool lc = gn__cf_really_const(s, l), rc = gn__cf_really_const(s, r);
    if (!lc && !rc) return GN_OK;
    gn_id conv = lc ? r : l, c2 = lc ? l : r;
    cf_kind ck = gn__cf_kind(s, conv);
    if (ck != K_CONV2D && ck != K_CONV3D) return GN_OK;
    if (gn__node_at(g, l)->device != n->device || gn__node_at(g, r)->device != n->device) return GN_OK;
    const gn__node *cv = gn__node_at(g, conv);
    if (cv->n_in < 2 || cv->n_use > 1 || (cv->flags & GN__NODE_PRESERVE)) return GN_OK;
    bool in_c = gn__cf_really_const(s, cv->in[0].node), f_c = gn__cf_really_const(s, cv->in[1].node);
    if (in_c == f_c) return GN_OK;
    if (in_c) return GN_OK; /* only the constant-filter form is handled (the input form needs a scalar) */
    gn__tinfo mo = gn__cf_out_info(s, id, 0), co = gn__cf_out_info(s, conv, 0);
    gn__tinfo cst = gn__cf_out_info(s, c2, 0), fil = gn__cf_in_info(s, conv, 1);
    bool same = gn__cf_shape_same_known(&mo.shape, &co.shape) || gn__cf_broadcast_keeps(&co.shape, &cst.shape);
    if (!same) return GN_OK;
    const char *fmt;
    size_t fl;
    if (!gn__attr_get_string(g, conv, "data_format", &fmt, &fl)) {
        fmt = ck == K_CONV3D ? "NDHWC" : "NHWC";
        fl = strlen(fmt);
    }
    char fbuf[16];
    snprintf(fbuf, sizeof fbuf, "%.*s", (int)(fl < 15 ? fl : 15), fmt);
    if (!valid_const_shape_for_conv(fbuf, &fil.shape, &cst.shape)) return GN_OK;
    /* C2 may wait on the convolution directly (handled below), not through another node */
    const gn__node *c2n = gn__node_at(g, c2);
    for (uint32_t j = 0; j < c2n->n_in + c2n->n_ctrl; j++) {
        gn_id u = j < c2n->n_in ? c2n->in[j].node : c2n->ctrl[j - c2n->n_in];
        if (u != conv && may_depend_on(g, u, conv)) return GN_OK;
    }
    const char *cvn = gn__node_name(g, conv);
    size_t need = strlen(cvn) + 32;
    char *mname = gn__arena_alloc(&s->arena, need, 1);
    if (!mname) return nomem(s);
    snprintf(mname, need, "%s/merged_input", cvn);
    if (gn__graph_find(g, mname) != GN_NONE) return GN_OK;
    gn__edge c1e = cv->in[1];
    /* a control edge conv -> C2 would close a cycle: hang it on C1 instead */
    if (consumes(g, conv, c2)) {
        GN_TRY(gn__node_remove_control(g, c2, conv));
        gn_id a;
        GN_TRY(gn__cf_ctrl_anchor(s, c1e, &a));
        GN_TRY(gn__node_add_control(g, c2, a));
    }
    /* new Mul(C1, C2) named <conv>/merged_input, in the multiplication's order */
    gn_id m;
    GN_TRY(gn__node_add(g, mname, gn__node_op(g, id), &m));
    if (!gn__cf_reserve(s)) return nomem(s);
    s->fl[m] |= CF_NEW;
    gn__node_at(g, m)->device = gn__node_at(g, id)->device;
    for (uint32_t a = 0; a < gn__node_at(g, id)->n_attr; a++) {
        const gn__node *src = gn__node_at(g, id);
        GN_TRY(gn__node_set_attr(g, m, gn__str(g, src->attr[a].key), src->attr[a].value));
    }
    GN_TRY(gn__node_add_input(g, m, lc ? (gn__edge){c2, gn__node_at(g, id)->in[0].index} : c1e));
    GN_TRY(gn__node_add_input(g, m, lc ? c1e : (gn__edge){c2, gn__node_at(g, id)->in[1].index}));
    {
        const gn__node *mn = gn__node_at(g, id);
        uint32_t nc = mn->n_ctrl;
        gn_id *ctl = gn__arena_alloc(&s->arena, (nc ? nc : 1) * sizeof *ctl, _Alignof(gn_id));
        if (!ctl) return nomem(s);
        if (nc) memcpy(ctl, mn->ctrl, nc * sizeof *ctl);
        for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_control(g, m, ctl[i]));
        for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_remove_control(g, id, ctl[i]));
    }
    /* the multiplication node (its name, its consumers) becomes the convolution */
    GN_TRY(gn__cf_clear_attrs(s, id, false));
    GN_TRY(gn__node_set_op(g, id, gn__node_op(g, conv)));
    gn__node_at(g, id)->device = gn__node_at(g, conv)->device;
    for (uint32_t a = 0; a < gn__node_at(g, conv)->n_attr; a++) {
        const gn__node *src = gn__node_at(g, conv);
        GN_TRY(gn__node_set_attr(g, id, gn__str(g, src->attr[a].key), src->attr[a].value));
    }
    gn__edge xin = gn__node_at(g, conv)->in[0];
    GN_TRY(gn__node_set_input(g, id, 0, xin));
    GN_TRY(gn__node_set_input(g, id, 1, (gn__edge){m, 0}));
    {
        const gn__node *cn = gn__node_at(g, conv);
        uint32_t nc = cn->n_ctrl;
        gn_id *ctl = gn__arena_alloc(&s->arena, (nc ? nc : 1) * sizeof *ctl, _Alignof(gn_id));
        if (!ctl) return nomem(s);
        if (nc) memcpy(ctl, cn->ctrl, nc * sizeof *ctl);
        for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_control(g, id, ctl[i]));
    }
    GN_TRY(gn__graph_forward_control(g, conv, id));
    GN_TRY(gn__node_remove(g, conv));
    gn__cf_rewrote(s, CF_P_MUL_CONV, id, "the constant factor moved onto the filter ('%s')", mname);
    gn__cf_enqueue(s, m);
    gn__cf_enqueue(s, id);
    *done = true;
    return GN_OK;
}

/* 19. IdentityN with constant inputs */
static gn_status identity_n(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_IDENTITY_N || !s->en[CF_P_IDENTITY_N]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in == 0 || n->n_ctrl) return GN_OK;
    uint32_t moved = 0;
    uint32_t nu = n->n_use;
    gn__use *us = gn__arena_alloc(&s->arena, (nu ? nu : 1) * sizeof *us, _Alignof(gn__use));
    if (!us) return nomem(s);
    if (nu) memcpy(us, n->use, nu * sizeof *us);
    for (uint32_t u = 0; u < nu; u++) {
        gn_id c = us[u].node;
        const gn__node *cn = gn__node_at(g, c);
        if (cn->flags & GN__NODE_FN_RET) continue;
        const char *cop = gn__node_op(g, c);
        if (strcmp(cop, "_Retval") == 0 || strcmp(cop, "_DeviceRetval") == 0) continue;
        gn__edge e = cn->in[us[u].slot];
        if (e.node != id || e.index >= gn__node_at(g, id)->n_in) continue;
        gn__edge src = gn__node_at(g, id)->in[e.index];
        if (!gn__cf_really_const(s, src.node)) continue;
        GN_TRY(gn__node_set_input(g, c, us[u].slot, src));
        GN_TRY(gn__node_add_control(g, c, id));
        gn__cf_enqueue(s, c);
        moved++;
    }
    if (!moved) return GN_OK;
    gn__cf_rewrote(s, CF_P_IDENTITY_N, id, "%u consumer input(s) read the constants directly", moved);
    *done = true;
    return GN_OK;
}

/* 20. partial AddN / AccumulateNV2 */
static gn_status partial_addn(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_ADDN && k != K_ACCUMULATE_N) || !s->en[CF_P_PARTIAL_ADDN]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    uint32_t nin = n->n_in;
    if (nin <= 2) return GN_OK;
    uint32_t *ci = gn__arena_alloc(&s->arena, nin * sizeof *ci, _Alignof(uint32_t));
    uint32_t *ni = gn__arena_alloc(&s->arena, nin * sizeof *ni, _Alignof(uint32_t));
    if (!ci || !ni) return nomem(s);
    uint32_t nc = 0, nn = 0;
    for (uint32_t i = 0; i < nin; i++) {
        if (gn__cf_really_const(s, n->in[i].node)) ci[nc++] = i;
        else ni[nn++] = i;
    }
    if (nc == nin && k == K_ACCUMULATE_N) {
        GN_TRY(gn__node_set_op(g, id, "AddN"));
        GN_TRY(gn__node_remove_attr(g, id, "shape"));
        gn__cf_rewrote(s, CF_P_PARTIAL_ADDN, id, "AccumulateNV2 of constants became AddN");
        s->fl[id] &= (uint16_t)~(CF_NOFOLD | CF_REPORTED);
        gn__cf_enqueue(s, id);
        *done = true;
        return GN_OK;
    }
    if (nc < 2 || nc >= nin) return GN_OK;
    char suffix[40];
    snprintf(suffix, sizeof suffix, "_partial_split_%u", nc);
    const char *nm = gn__node_name(g, id);
    size_t need = strlen(nm) + 64;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return nomem(s);
    snprintf(want, need, "ConstantFolding/%s%s", nm, suffix);
    if (gn__graph_find(g, want) != GN_NONE) return GN_OK;
    gn_id a;
    GN_TRY(gn__node_add(g, want, "AddN", &a));
    if (!gn__cf_reserve(s)) return nomem(s);
    s->fl[a] |= CF_NEW;
    gn__node_at(g, a)->device = gn__node_at(g, id)->device;
    for (uint32_t t = 0; t < gn__node_at(g, id)->n_attr; t++) {
        const gn__node *src = gn__node_at(g, id);
        const char *key = gn__str(g, src->attr[t].key);
        if (strcmp(key, "shape") == 0) continue;
        GN_TRY(gn__node_set_attr(g, a, key, src->attr[t].value));
    }
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_input(g, a, gn__node_at(g, id)->in[ci[i]]));
    Tensorflow__AttrValue *na = gn__cf_attr_int(s, nc);
    if (!na) return nomem(s);
    GN_TRY(gn__node_set_attr(g, a, "N", na));
    /* the first constant slot reads the new node; the other constant slots go */
    GN_TRY(gn__node_set_input(g, id, ci[0], (gn__edge){a, 0}));
    for (uint32_t i = nc; i-- > 1;) GN_TRY(gn__node_remove_input(g, id, ci[i]));
    Tensorflow__AttrValue *nn2 = gn__cf_attr_int(s, gn__node_at(g, id)->n_in);
    if (!nn2) return nomem(s);
    GN_TRY(gn__node_set_attr(g, id, "N", nn2));
    gn__cf_rewrote(s, CF_P_PARTIAL_ADDN, id, "%u constant inputs summed in '%s'", nc, want);
    gn__cf_enqueue(s, a);
    *done = true;
    return GN_OK;
}

/* 21. MergeConcat */
static bool concat_axis(cf_state *s, gn_id id, int64_t *axis)
{
    if (gn__cf_kind(s, id) != K_CONCAT_V2) return false;
    const gn__node *n = gn__node_at(s->g, id);
    if (n->n_in < 2) return false;
    int64_t *v, nv;
    if (!gn__cf_const_ints(s, n->in[n->n_in - 1].node, &v, &nv, 1) || nv != 1) return false;
    *axis = v[0];
    return true;
}

/* "/job:a/replica:0/task:1/device:GPU:0" -> length of "/job:a/replica:0/task:1" */
static size_t task_len(const char *dev)
{
    const char *d = strstr(dev, "/device:");
    if (!d) d = strstr(dev, "/cpu:");
    if (!d) d = strstr(dev, "/gpu:");
    if (!d) d = strstr(dev, "/CPU:");
    if (!d) d = strstr(dev, "/GPU:");
    return d ? (size_t)(d - dev) : strlen(dev);
}

static gn_status merge_concat(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_CONCAT_V2 || !s->en[CF_P_MERGE_CONCAT] || !s->st) return GN_OK;
    gn_graph *g = s->g;
    int64_t axis, paxis;
    if (!concat_axis(s, id, &axis)) return GN_OK;
    const gn__node *n = gn__node_at(g, id);
    if (n->flags & GN__NODE_PRESERVE) return GN_OK;
    if (n->n_cuse || n->n_use == 0) return GN_OK;
    gn_id parent = n->use[0].node;
    for (uint32_t u = 1; u < n->n_use; u++)
        if (n->use[u].node != parent) return GN_OK;
    bool all_const = true;
    for (uint32_t i = 0; i + 1 < n->n_in && all_const; i++) all_const = gn__cf_really_const(s, n->in[i].node);
    if (all_const) return GN_OK;
    if (!concat_axis(s, parent, &paxis) || paxis != axis) return GN_OK;
    const gn__node *p = gn__node_at(g, parent);
    /* parent's inputs on at most one task */
    const char *task = NULL;
    size_t tl = 0;
    for (uint32_t i = 0; i + 1 < p->n_in; i++) {
        const char *dev = gn__str(g, gn__node_at(g, p->in[i].node)->device);
        if (!dev[0]) continue;
        size_t l = task_len(dev);
        if (!task) {
            task = dev;
            tl = l;
        } else if (l != tl || memcmp(task, dev, l) != 0) {
            return GN_OK;
        }
    }
    /* the parent's new data inputs */
    uint32_t inner = n->n_in - 1, cnt = 0;
    for (uint32_t i = 0; i < p->n_in; i++) cnt += (p->in[i].node == id && p->in[i].index == 0) ? inner : 1;
    gn__edge *ne = gn__arena_alloc(&s->arena, cnt * sizeof *ne, _Alignof(gn__edge));
    if (!ne) return nomem(s);
    uint32_t m = 0;
    for (uint32_t i = 0; i < p->n_in; i++) {
        if (p->in[i].node == id && p->in[i].index == 0) {
            for (uint32_t j = 0; j < inner; j++) ne[m++] = n->in[j];
        } else {
            ne[m++] = p->in[i];
        }
    }
    while (gn__node_at(g, parent)->n_in) GN_TRY(gn__node_remove_input(g, parent, gn__node_at(g, parent)->n_in - 1));
    for (uint32_t i = 0; i < m; i++) GN_TRY(gn__node_add_input(g, parent, ne[i]));
    /* the inner node's control inputs move to the parent */
    n = gn__node_at(g, id);
    uint32_t nc = n->n_ctrl;
    gn_id *ctl = gn__arena_alloc(&s->arena, (nc ? nc : 1) * sizeof *ctl, _Alignof(gn_id));
    if (!ctl) return nomem(s);
    if (nc) memcpy(ctl, n->ctrl, nc * sizeof *ctl);
    for (uint32_t i = 0; i < nc; i++) {
        GN_TRY(gn__node_remove_control(g, id, ctl[i]));
        GN_TRY(gn__node_add_control(g, parent, ctl[i]));
    }
    Tensorflow__AttrValue *na = gn__cf_attr_int(s, (int64_t)m - 1);
    if (!na) return nomem(s);
    GN_TRY(gn__node_set_attr(g, parent, "N", na));
    /* the inner concat becomes a NoOp that still waits for its inputs */
    GN_TRY(gn__cf_inputs_to_controls(s, id, 0));
    GN_TRY(gn__cf_clear_attrs(s, id, true));
    GN_TRY(gn__node_remove_attr(g, id, "_output_shapes"));
    GN_TRY(gn__node_set_op(g, id, "NoOp"));
    gn__cf_mark_stale(s, id);
    gn__cf_rewrote(s, CF_P_MERGE_CONCAT, id, "inlined into '%s'", gn__node_name(g, parent));
    gn__cf_enqueue(s, parent);
    *done = true;
    return GN_OK;
}

/* 22. partial Concat folding */
static gn_status partial_concat(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_CONCAT && k != K_CONCAT_V2) || !s->en[CF_P_PARTIAL_CONCAT]) return GN_OK;
    gn_graph *g = s->g;
    const char *nm = gn__node_name(g, id);
    if (strstr(nm, "_partial_split_")) return GN_OK;
    const gn__node *n = gn__node_at(g, id);
    uint32_t nin = n->n_in;
    if (nin <= 3) return GN_OK;
    uint32_t begin = 0, end = nin, axis_arg;
    if (k == K_CONCAT) {
        begin = 1;
        axis_arg = 0;
    } else {
        end = nin - 1;
        axis_arg = nin - 1;
    }
    uint32_t *rf = gn__arena_alloc(&s->arena, nin * sizeof *rf, _Alignof(uint32_t));
    uint32_t *rl = gn__arena_alloc(&s->arena, nin * sizeof *rl, _Alignof(uint32_t));
    if (!rf || !rl) return nomem(s);
    uint32_t nr = 0, first = begin, last = begin;
    while (last < end) {
        while (first < end && !gn__cf_really_const(s, n->in[first].node)) first++;
        last = first + 1;
        while (last < end && gn__cf_really_const(s, n->in[last].node)) last++;
        if (first < end && last - first > 1) {
            rf[nr] = first;
            rl[nr++] = last;
        }
        first = last;
    }
    if (nr == 0 || (nr == 1 && rf[0] == begin && rl[0] == end)) return GN_OK;
    gn__edge axis = n->in[axis_arg];
    size_t need = strlen(nm) + 64 + 12 * 16;
    char *name = gn__arena_alloc(&s->arena, need, 1);
    if (!name) return nomem(s);
    for (uint32_t r = 0; r < nr; r++) {
        snprintf(name, need, "ConstantFolding/%s_partial_split", gn__node_name(g, id));
        size_t L = strlen(name);
        do {
            if (L + 16 >= need) return GN_OK;
            L += (size_t)snprintf(name + L, need - L, "_%u", rf[r]);
        } while (gn__graph_find(g, name) != GN_NONE);
        gn_id a;
        GN_TRY(gn__node_add(g, name, "ConcatV2", &a));
        if (!gn__cf_reserve(s)) return nomem(s);
        s->fl[a] |= CF_NEW;
        gn__node_at(g, a)->device = gn__node_at(g, id)->device;
        for (uint32_t t = 0; t < gn__node_at(g, id)->n_attr; t++) {
            const gn__node *src = gn__node_at(g, id);
            GN_TRY(gn__node_set_attr(g, a, gn__str(g, src->attr[t].key), src->attr[t].value));
        }
        for (uint32_t i = rf[r]; i < rl[r]; i++) GN_TRY(gn__node_add_input(g, a, gn__node_at(g, id)->in[i]));
        GN_TRY(gn__node_add_input(g, a, axis));
        Tensorflow__AttrValue *na = gn__cf_attr_int(s, rl[r] - rf[r]);
        if (!na) return nomem(s);
        GN_TRY(gn__node_set_attr(g, a, "N", na));
        GN_TRY(gn__node_set_input(g, id, rf[r], (gn__edge){a, 0}));
        gn__cf_enqueue(s, a);
    }
    /* drop the other slots of each run, from the back */
    for (uint32_t r = nr; r-- > 0;)
        for (uint32_t i = rl[r]; i-- > rf[r] + 1;) GN_TRY(gn__node_remove_input(g, id, i));
    Tensorflow__AttrValue *nn = gn__cf_attr_int(s, (int64_t)gn__node_at(g, id)->n_in - 1);
    if (!nn) return nomem(s);
    GN_TRY(gn__node_set_attr(g, id, "N", nn));
    gn__cf_rewrote(s, CF_P_PARTIAL_CONCAT, id, "%u run(s) of constant inputs concatenated apart", nr);
    *done = true;
    return GN_OK;
}

/* 23. ConstantPushDownBiasAdd */
/* numpy broadcasting of two known-rank shapes into out (GN__MAX_RANK dims);
 * false when they may not broadcast */
static bool bcast_dims(const gn__shape *a, const gn__shape *b, int64_t *out, int32_t *rank)
{
    if (a->rank < 0 || b->rank < 0) return false;
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t i = 0; i < r; i++) {
        int64_t x = i < r - a->rank ? 1 : a->dims[i - (r - a->rank)];
        int64_t y = i < r - b->rank ? 1 : b->dims[i - (r - b->rank)];
        if (x == 1) out[i] = y;
        else if (y == 1) out[i] = x;
        else if (x < 0 || y < 0) out[i] = x < 0 ? y : x; /* the known one (both unknown: unknown) */
        else if (x != y) return false;
        else out[i] = x;
    }
    *rank = r;
    return true;
}

/* The output of a BiasAdd (node bn's attrs) of value (rank, dims) and bias
 * b, into out; false unless the bias's length and the channel dimension
 * are known and equal. */
static bool bias_dims(const gn_graph *g, gn_id bn, const int64_t *v, int32_t vr, const gn__shape *b, int64_t *out,
                      int32_t *rank)
{
    if (vr < 2 || b->rank != 1 || b->dims[0] < 0) return false;
    const char *fmt = NULL;
    size_t fl = 0;
    int32_t ch = vr - 1;
    if (gn__attr_get_string(g, bn, "data_format", &fmt, &fl) && fl >= 3 && memcmp(fmt, "NC", 2) == 0) ch = 1;
    if (v[ch] != b->dims[0]) return false;
    memcpy(out, v, sizeof *out * (size_t)vr);
    *rank = vr;
    return true;
}

/* The shapes after the swap still make sense: BiasAdd's bias still matches
 * its channel dimension, and the parent's output keeps its shape. */
static bool push_down_bias_shapes(cf_state *s, gn_id id, gn_id child, bool p_bias, bool c_bias, uint32_t swap_in,
                                  uint32_t cidx, const gn__tinfo *q0, const gn__tinfo *q1, const gn__tinfo *cp)
{
    const gn__tinfo *leaf = swap_in == 0 ? q0 : q1;
    const gn__shape *in0 = swap_in == 0 ? &cp->shape : &q0->shape, *in1 = swap_in == 1 ? &cp->shape : &q1->shape;
    int64_t cd[GN__MAX_RANK], pd[GN__MAX_RANK];
    int32_t cr, pr;
    if (in0->rank > GN__MAX_RANK || in1->rank > GN__MAX_RANK || leaf->shape.rank > GN__MAX_RANK) return false;
    if (c_bias) {
        if (!bias_dims(s->g, child, in0->dims, in0->rank, in1, cd, &cr)) return false;
    } else if (!bcast_dims(in0, in1, cd, &cr)) {
        return false;
    }
    gn__shape cs = {cr, cd};
    if (p_bias) {
        if (cidx != 1 || !bias_dims(s->g, id, cd, cr, &leaf->shape, pd, &pr)) return false;
    } else if (!bcast_dims(&cs, &leaf->shape, pd, &pr)) {
        return false;
    }
    gn__tinfo out = gn__cf_out_info(s, id, 0);
    if (out.shape.rank != pr) return false;
    for (int32_t i = 0; i < pr; i++)
        if (out.shape.dims[i] != pd[i]) return false;
    return true;
}

static gn_status push_down_bias(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (!s->en[CF_P_PUSH_DOWN_BIAS] || !s->st) return GN_OK;
    gn_graph *g = s->g;
    bool p_bias = k == K_BIAS_ADD || k == K_BIAS_ADD_V1;
    if (!p_bias && !k_add(s, id)) return GN_OK;
    push_ctx c;
    if (!prepare_push(s, id, &c)) return GN_OK;
    if (c.lc && p_bias) return GN_OK;
    cf_kind ck = gn__cf_kind(s, c.op_child);
    bool c_bias = ck == K_BIAS_ADD || ck == K_BIAS_ADD_V1;
    if (!c_bias && !k_add(s, c.op_child)) return GN_OK;
    gn__tinfo p0 = gn__cf_in_info(s, id, 0), p1 = gn__cf_in_info(s, id, 1);
    gn__tinfo q0 = gn__cf_in_info(s, c.op_child, 0), q1 = gn__cf_in_info(s, c.op_child, 1);
    if (p0.shape.rank < 0 || p1.shape.rank < 0 || q0.shape.rank < 0 || q1.shape.rank < 0) return GN_OK;
    if (q0.shape.rank != 1 && q1.shape.rank != 1) return GN_OK;
    uint32_t vi = q0.shape.rank == 1 ? 0 : 1, mi = 1 - vi;
    const gn__tinfo *vp = vi == 0 ? &q0 : &q1, *mp = mi == 0 ? &q0 : &q1;
    uint32_t cidx = c.lc ? 0 : 1;
    const gn__tinfo *cp = cidx == 0 ? &p0 : &p1;
    int swap_in = -1;
    if (!p_bias && c_bias && cp->shape.rank == mp->shape.rank && cp->dtype == mp->dtype) swap_in = (int)mi;
    else if (cp->shape.rank == 1 && cp->dtype == vp->dtype) swap_in = (int)vi;
    if (swap_in < 0) return GN_OK;
    gn__edge leaf = gn__node_at(g, c.op_child)->in[swap_in];
    if (gn__cf_is_const_op(s, leaf.node)) return GN_OK;
    /* Grappler swaps on ranks alone: Add(BiasAdd(M[1,5], CV[5]), CM[4,1]) became
     * Add(M, BiasAdd(CM[4,1], CV[5])), whose bias no longer matches */
    if (!push_down_bias_shapes(s, id, c.op_child, p_bias, c_bias, (uint32_t)swap_in, cidx, &q0, &q1, cp))
        return GN_OK;
    gn__edge ce = gn__node_at(g, id)->in[cidx];
    GN_TRY(gn__node_set_input(g, id, cidx, leaf));
    GN_TRY(gn__node_set_input(g, c.op_child, (uint32_t)swap_in, ce));
    gn__cf_mark_stale(s, c.op_child);
    if (c.op_child < s->cap_fl) s->fl[c.op_child] &= (uint16_t)~(CF_NOFOLD | CF_REPORTED);
    gn__cf_rewrote(s, CF_P_PUSH_DOWN_BIAS, id, "constant '%s' moved down into '%s'", gn__node_name(g, ce.node),
                   gn__node_name(g, c.op_child));
    gn__cf_enqueue(s, c.op_child);
    gn__cf_enqueue(s, id);
    *done = true;
    return GN_OK;
}

/* 24. Case with a constant branch index */
static gn_status simplify_case(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (k != K_CASE || !s->en[CF_P_CASE]) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 1) return GN_OK;
    int64_t *v, nv;
    if (!gn__cf_const_ints(s, n->in[0].node, &v, &nv, 1) || nv != 1) return GN_OK;
    const Tensorflow__AttrValue *br = gn__node_attr(g, id, "branches");
    if (!br || br->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !br->list) return GN_OK;
    if (v[0] < 0 || (size_t)v[0] >= br->list->n_func) return GN_OK;
    Tensorflow__AttrValue *f = gn__cf_attr_func(s, br->list->func[v[0]]);
    if (!f) return nomem(s);
    gn_id idx = n->in[0].node;
    GN_TRY(gn__node_remove_input(g, id, 0));
    GN_TRY(gn__node_set_op(g, id, "PartitionedCall"));
    GN_TRY(gn__node_set_attr(g, id, "f", f));
    GN_TRY(gn__node_remove_attr(g, id, "branches"));
    GN_TRY(gn__node_remove_attr(g, id, "output_shapes"));
    gn__cf_rewrote(s, CF_P_CASE, id, "branch %lld is always taken", (long long)v[0]);
    gn__cf_enqueue(s, idx);
    *done = true;
    return GN_OK;
}

/* 25. Select with an all-true / all-false predicate */
static gn_status simplify_select(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if ((k != K_SELECT && k != K_SELECT_V2) || !s->en[CF_P_SELECT] || !s->st) return GN_OK;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in < 3) return GN_OK;
    gn_id pn = n->in[0].node;
    bool all_true = gn__cf_is_ones(s, pn), all_false = !all_true && gn__cf_is_zeros(s, pn);
    if (!all_true && !all_false) return GN_OK;
    uint32_t live = all_true ? 1 : 2;
    gn__tinfo p = gn__cf_in_info(s, id, 0), a = gn__cf_in_info(s, id, 1), b = gn__cf_in_info(s, id, 2);
    bool pred_scalar = p.shape.rank == 0;
    if (gn__cf_shape_same_known(&a.shape, &b.shape) && (gn__cf_shape_same_known(&p.shape, &a.shape) || pred_scalar)) {
        GN_TRY(gn__cf_to_identity(s, id, live, false, done));
        if (*done) gn__cf_rewrote(s, CF_P_SELECT, id, "predicate is all %s", all_true ? "true" : "false");
        return GN_OK;
    }
    GN_TRY(gn__cf_to_broadcast(s, id, live, done));
    if (*done) gn__cf_rewrote(s, CF_P_SELECT, id, "predicate is all %s (BroadcastTo)", all_true ? "true" : "false");
    return GN_OK;
}

/* 26. resource variable updates by 0 (add/sub) or 1 (mul/div) */
static gn_status variable_update(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (!s->en[CF_P_VAR_UPDATE]) return GN_OK;
    bool add_sub, scatter;
    switch (k) {
    case K_ASSIGN_ADD_VAR: case K_ASSIGN_SUB_VAR: add_sub = true; scatter = false; break;
    case K_RES_SCATTER_ADD: case K_RES_SCATTER_SUB: case K_RES_SCATTER_ND_ADD: case K_RES_SCATTER_ND_SUB:
        add_sub = true; scatter = true; break;
    case K_RES_SCATTER_MUL: case K_RES_SCATTER_DIV: case K_RES_SCATTER_ND_MUL: case K_RES_SCATTER_ND_DIV:
        add_sub = false; scatter = true; break;
    default: return GN_OK;
    }
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    uint32_t vi = scatter ? 2 : 1;
    if (n->n_in <= vi || n->n_use) return GN_OK;
    gn_id d = n->in[vi].node;
    if (!(add_sub ? gn__cf_is_zeros(s, d) : gn__cf_is_ones(s, d))) return GN_OK;
    GN_TRY(gn__cf_inputs_to_controls(s, id, 0));
    GN_TRY(gn__cf_clear_attrs(s, id, true));
    GN_TRY(gn__node_remove_attr(g, id, "_output_shapes"));
    GN_TRY(gn__node_set_op(g, id, "NoOp"));
    gn__cf_rewrote(s, CF_P_VAR_UPDATE, id, "update by %s changes nothing", add_sub ? "zero" : "one");
    *done = true;
    return GN_OK;
}

typedef gn_status (*rule_fn)(cf_state *s, gn_id id, cf_kind k, bool *done);

gn_status gn__cf_simplify(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    static const rule_fn rules[] = {
        remove_split,   remove_transpose, remove_shuffle,     remove_reverse, remove_slice,   remove_strided_slice,
        remove_tile,    remove_pad,       remove_squeeze,     pack,           enter,          switch_same,
        simplify_reduction, remove_reshape, arithmetic,       div_to_recip,   push_down,      mul_conv,
        identity_n,     partial_addn,     merge_concat,       partial_concat, push_down_bias, simplify_case,
        simplify_select, variable_update,
    };
    *done = false;
    if (k == K_CONST || k == K_HOST_CONST || k == K_IDENTITY) return GN_OK;
    for (size_t i = 0; i < GN__ARRAY_LEN(rules); i++) {
        GN_TRY(rules[i](s, id, k, done));
        if (*done || !gn__node_live(s->g, id)) return GN_OK;
    }
    return GN_OK;
}
