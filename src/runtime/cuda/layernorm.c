/* The CUDA backend: layer norm as one kernel: the runs of nodes that compute a
 * layer norm, matched at compile and checked per plan. */
#include "runtime/cuda/backend_impl.h"

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
gn_status gn__cuda_match_layernorms(gn__engine *e, gn__err *err)
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
bool gn__cuda_ln_check(const gn__engine *e, cplan *p, uint32_t k)
{
    const cnode *o = &e->nodes[k];
    const cln *c = o->ln;
    int32_t r = p->rank[c->x], dt = p->dtype[c->x];
    if (r < 1 || !gn__cuda_is_float(dt) || p->rank[o->out] != r || p->rank[c->m] != r || p->rank[c->v] != r) return false;
    const int64_t *xd = gn__cuda_vdims(p, c->x);
    for (int32_t d = 0; d < r; d++)
        if (gn__cuda_vdims(p, o->out)[d] != xd[d] || gn__cuda_vdims(p, c->m)[d] != (d == r - 1 ? 1 : xd[d]) ||
            gn__cuda_vdims(p, c->v)[d] != gn__cuda_vdims(p, c->m)[d])
            return false;
    int64_t cols = xd[r - 1];
    const uint32_t vec[2] = {c->gamma, c->beta};
    for (int i = 0; i < 2; i++) {
        uint32_t v = vec[i];
        int64_t ne = gn__cuda_numel_of(p, v);
        if (p->dtype[v] != dt || !(ne == 1 || (ne == cols && p->rank[v] >= 1 && gn__cuda_vdims(p, v)[p->rank[v] - 1] == cols)))
            return false;
    }
    return p->dtype[c->eps] == dt && gn__cuda_numel_of(p, c->eps) == 1 && p->dtype[o->out] == dt;
}

/* Is node n skipped in plan p (inside a fused kernel or a layer norm)? */
