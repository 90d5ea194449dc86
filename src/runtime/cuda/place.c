/* The CUDA backend: a plan's memory: buffers placed in one device arena by
 * lifetime, and a new plan for a set of input shapes (plan_new). */
#include "runtime/cuda/backend_impl.h"

bool gn__cuda_skipped(const cplan *p, const cnode *n)
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
        } else if (!gn__cuda_skipped(p, n)) {
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
        if (n && (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || gn__cuda_skipped(p, n))) continue;
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
                bytes = (size_t)gn__cuda_numel_of(p, v) * gn_dtype_size(p->dtype[v]);
                l = last[v] > f ? last[v] : f;
            } else {
                bytes = p->scr_bytes[s_idx];
            }
            size_t want = gn__cuda_align_up(bytes ? bytes : 1);
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
        if (ce != cudaSuccess) return gn__cuda_fail(err, "cudaMemcpyAsync (host values)", ce);
        any = true;
    }
    if (any && (ce = cudaStreamSynchronize(e->b->stream)) != cudaSuccess) return gn__cuda_fail(err, "cudaStreamSynchronize", ce);
    return GN_OK;
}

gn_status gn__cuda_plan_new(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err)
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
        gn__cuda_plan_free(e, p);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t v = 0; v < nv; v++) {
        p->root[v] = v;
        const cval *c = &e->vals[v];
        const gn__tensor *t = c->kind == V_FEED ? &in[c->feed] : c->kind == V_CONST ? &c->host : NULL;
        if (!t) continue;
        p->dtype[v] = t->dtype;
        p->rank[v] = t->rank;
        memcpy(gn__cuda_vdims(p, v), t->dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    for (uint32_t i = 0; i < nf; i++) {
        p->key_dtype[i] = in[i].dtype;
        p->key_rank[i] = in[i].rank;
        memcpy(&p->key_dims[(size_t)i * GN__MAX_DIMS], in[i].dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    gn_status s = GN_OK;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) s = gn__cuda_plan_node(e, p, k, err);
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) p->ln_on[k] = e->nodes[k].ln && gn__cuda_ln_check(e, p, k);
    if (s == GN_OK) s = plan_place(e, p, err);
    /* constant filters: into cuDNN's layout once, here */
    bool any = false;
    for (uint32_t k = 0; s == GN_OK && k < nn; k++) {
        const cconv *c = p->conv[k];
        const cnode *n = &e->nodes[k];
        if (!c || !c->w_once) continue;
        cudaError_t ce = gn__cu_transpose(p->dtype[n->in[1]] == DT_F16 ? 2 : 4, 4, c->w_dims, c->w_perm,
                                          gn__cuda_vptr(e, p, n->in[1]), (char *)p->arena + p->scr_off[(size_t)k * N_SCR + SCR_W],
                                          e->b->stream);
        if (ce != cudaSuccess) s = gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "filter transpose: %s", cudaGetErrorString(ce));
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
        if (ce != cudaSuccess) s = gn__cuda_node_fail(e, &e->nodes[k], err, GN_ERR_BACKEND, "int8 weights: %s", cudaGetErrorString(ce));
        any = true;
    }
    if (s == GN_OK && any) {
        cudaError_t ce = cudaStreamSynchronize(e->b->stream);
        if (ce != cudaSuccess) s = gn__cuda_fail(err, "cudaStreamSynchronize (filters)", ce);
    }
    for (uint32_t k = 0; s == GN_OK && k < nn; k++)
        if (p->i8[k]) {
            free(p->i8[k]->h_wq);
            free(p->i8[k]->h_sw);
            p->i8[k]->h_wq = NULL;
            p->i8[k]->h_sw = NULL;
        }
    if (s != GN_OK) {
        gn__cuda_plan_free(e, p);
        return s;
    }
    *out = p;
    return GN_OK;
}

bool gn__cuda_plan_matches(const gn__engine *e, const cplan *p, const gn__tensor *in)
{
    for (uint32_t i = 0; i < e->n_feeds; i++) {
        if (p->key_dtype[i] != in[i].dtype || p->key_rank[i] != in[i].rank) return false;
        for (int32_t d = 0; d < in[i].rank; d++)
            if (p->key_dims[(size_t)i * GN__MAX_DIMS + d] != in[i].dims[d]) return false;
    }
    return true;
}
