/* The CUDA backend: fusing runs of elementwise ops into one kernel (a small
 * program the kernel interprets). */
#include "runtime/cuda/backend_impl.h"

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
gn_status gn__cuda_fuse_elementwise(gn__engine *e, gn__err *err)
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
