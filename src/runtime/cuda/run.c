/* The CUDA backend: running one node of a plan (and all of them, in order). */
#include "runtime/cuda/backend_impl.h"

/* ---- running one node -------------------------------------------------------- */
/* The root of a fused run: one kernel over the run's program, each input
 * read with its broadcast strides against the root's output shape. */
static gn_status run_fused(gn__engine *e, cplan *p, const cnode *n, gn__err *err)
{
    const fprog *fp = n->fuse;
    uint32_t o = n->out;
    int32_t r = p->rank[o];
    const int64_t *od = gn__cuda_vdims(p, o);
    gn__cu_fused f;
    memset(&f, 0, sizeof f);
    if (r > GN__CU_MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d", r);
    f.rank = r;
    f.n_in = fp->n_in;
    f.n_ops = fp->n_ops;
    memcpy(f.dims, od, sizeof(int64_t) * (size_t)r);
    memcpy(f.ops, fp->ops, sizeof fp->ops);
    for (int32_t i = 0; i < fp->n_in; i++) {
        uint32_t v = fp->in_val[i];
        int32_t vr = p->rank[v];
        const int64_t *vd = gn__cuda_vdims(p, v);
        if (vr > r || p->dtype[v] != p->dtype[o]) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "fused input %d does not fit", i);
        int64_t st = 1;
        for (int32_t d = r - 1; d >= 0; d--) {
            int32_t dv = d - (r - vr);
            int64_t ext = dv >= 0 ? vd[dv] : 1;
            if (ext != 1 && ext != od[d]) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "fused input %d does not broadcast", i);
            f.stride[i][d] = ext == 1 ? 0 : st;
            st *= ext;
        }
        f.in[i] = gn__cuda_vptr(e, p, v);
    }
    cudaError_t ce = gn__cu_fused_run(p->dtype[o] == DT_F16, &f, gn__cuda_vptr(e, p, o), e->b->stream);
    if (ce != cudaSuccess) return gn__cuda_node_fail(e, n, err, GN_ERR_BACKEND, "fused elementwise kernel (%d ops): %s", fp->n_ops, cudaGetErrorString(ce));
    return GN_OK;
}

/* An int8 node (ci8). */
static gn_status run_q8(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    const cnode *n = &e->nodes[k];
    const ci8 *c = p->i8[k];
    cudaStream_t s = b->stream;
    size_t base = (size_t)k * N_SCR;
    char *ar = p->arena;
    const int8_t *wq = (const int8_t *)(ar + p->scr_off[base + SCR_W]);
    const float *sw = (const float *)(ar + p->scr_off[base + SCR_W] + c->wq_bytes);
    const float *x = gn__cuda_vptr(e, p, n->in[0]);
    const float *bias = n->q8.bias ? gn__cuda_vptr(e, p, n->in[2]) : NULL;
    float *y = gn__cuda_vptr(e, p, n->out);
    if (c->kind == GN__Q8_DW) {
        CK_CUDA(gn__cu_dw8(&c->geo, c->mult, x, c->inv, wq, c->sx, sw, bias, c->act, n->q8.alpha, y, s));
        return GN_OK;
    }
    if (c->m == 0 || c->n == 0) return GN_OK;
    int8_t *xq = (int8_t *)(ar + p->scr_off[base + SCR_PAD]);
    int32_t *acc = (int32_t *)(ar + p->scr_off[base + SCR_WS]);
    if (c->kind == GN__Q8_MM) CK_CUDA(gn__cu_q8_rows(c->m, c->k, c->kp, n->q8.ta, x, c->inv, xq, s));
    else CK_CUDA(gn__cu_im2col8(&c->geo, c->kp, x, c->inv, xq, s));
    if (c->lt) {
        const int32_t one = 1, zero = 0;
        CK_LT(b->p_cublasLtMatmul(b->lt, c->lt->desc, &one, wq, c->lt->la, xq, c->lt->lb, &zero, acc, c->lt->ld, acc,
                                  c->lt->ld, &c->lt->algo, b->blas_ws, BLAS_WORKSPACE, s));
    } else {
        CK_CUDA(gn__cu_gemm8(c->m, c->n, c->kp, xq, wq, acc, s));
    }
    CK_CUDA(gn__cu_dequant8(c->m * c->n, c->n, acc, c->sx, sw, bias, c->act, n->q8.alpha, y, s));
    return GN_OK;
}

static gn_status run_node(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    cnode *n = &e->nodes[k];
    cudaStream_t s = b->stream;
    /* aliases, host values, nodes inside a fused kernel or a layer norm: nothing to run */
    if (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || gn__cuda_skipped(p, n) || p->root[n->out] != n->out)
        return GN_OK;
    if (n->ln && p->ln_on[k]) {
        const cln *c = n->ln;
        int64_t cols = gn__cuda_vdims(p, c->x)[p->rank[c->x] - 1], ne = gn__cuda_numel_of(p, c->x);
        CK_CUDA(gn__cu_layernorm(p->dtype[c->x] == DT_F16, cols ? ne / cols : 0, cols, gn__cuda_vptr(e, p, c->x),
                                 gn__cuda_vptr(e, p, c->gamma), gn__cuda_numel_of(p, c->gamma), gn__cuda_vptr(e, p, c->beta), gn__cuda_numel_of(p, c->beta),
                                 gn__cuda_vptr(e, p, c->eps), gn__cuda_vptr(e, p, n->out), s));
        return GN_OK;
    }
    if (n->op->kind == OP_ENGINE) return gn__cuda_run_engine_node(e, p, n, k, err);
    uint32_t o = n->out, x = n->in[n->op->kind == OP_SPLIT && n->op->sub == 0 ? 1 : 0];
    if (n->fuse) return run_fused(e, p, n, err);
    if (p->i8[k]) return run_q8(e, p, k, err);
    void *yp = gn__cuda_vptr(e, p, o);
    const void *xp = gn__cuda_vptr(e, p, x);
    int h = p->dtype[x] == DT_F16;
    int64_t ne = gn__cuda_numel_of(p, o);
    int64_t *xd = gn__cuda_vdims(p, x), *od = gn__cuda_vdims(p, o);
    int32_t xr = p->rank[x];
    switch (n->op->kind) {
    case OP_UNARY: CK_CUDA(gn__cu_unary(n->op->sub, h, ne, xp, yp, n->alpha, s)); break;
    case OP_CAST: CK_CUDA(gn__cu_cast(h, p->dtype[o] == DT_F16, ne, xp, yp, s)); break;
    case OP_BINARY:
    case OP_BIAS_ADD: {
        uint32_t y = n->in[1];
        gn__cu_bcast bc;
        memset(&bc, 0, sizeof bc);
        int32_t r = p->rank[o], yr = p->rank[y];
        if (r > GN__CU_MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d", r);
        bool same = r == xr && r == yr;
        for (int32_t d = 0; same && d < r; d++) same = xd[d] == gn__cuda_vdims(p, y)[d];
        if (n->op->kind == OP_BINARY) {
            int64_t sx = 1, sy = 1;
            for (int32_t d = r - 1; d >= 0; d--) {
                int32_t dx = d - (r - xr), dy = d - (r - yr);
                int64_t ex = dx >= 0 ? xd[dx] : 1, ey = dy >= 0 ? gn__cuda_vdims(p, y)[dy] : 1;
                bc.dims[d] = od[d];
                bc.sa[d] = ex == 1 ? 0 : sx;
                bc.sb[d] = ey == 1 ? 0 : sy;
                sx *= ex;
                sy *= ey;
            }
        } else {
            same = false;
            int32_t cd = n->nchw ? 1 : r - 1;
            int64_t sx = 1;
            for (int32_t d = r - 1; d >= 0; d--) {
                bc.dims[d] = od[d];
                bc.sa[d] = sx;
                bc.sb[d] = d == cd ? 1 : 0;
                sx *= od[d];
            }
        }
        bc.rank = r;
        CK_CUDA(gn__cu_binary(n->op->kind == OP_BINARY ? n->op->sub : GN__CU_ADD, h, ne, same ? NULL : &bc, xp,
                              gn__cuda_vptr(e, p, y), yp, s));
        break;
    }
    case OP_MATMUL:
    case OP_BMM: {
        uint32_t y = n->in[1];
        int32_t r = p->rank[o], yr = p->rank[y];
        int64_t *yd = gn__cuda_vdims(p, y);
        int64_t m = od[r - 2], nn = od[r - 1], kk = n->ta ? xd[xr - 2] : xd[xr - 1];
        int64_t batch = 1, bx = 1, by = 1;
        for (int32_t d = 0; d < r - 2; d++) batch *= od[d];
        for (int32_t d = 0; d < xr - 2; d++) bx *= xd[d];
        for (int32_t d = 0; d < yr - 2; d++) by *= yd[d];
        if ((bx != 1 && bx != batch) || (by != 1 && by != batch))
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "batch broadcasting other than all-or-nothing per operand");
        if (bx == batch && by == batch && batch > 1) {   /* same batch count: the batch dims must agree too */
            for (int32_t d = 0; d < r - 2; d++) {
                int32_t dx = d - (r - xr), dy = d - (r - yr);
                if ((dx >= 0 && xd[dx] != od[d]) || (dy >= 0 && yd[dy] != od[d]))
                    return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "mixed batch broadcasting");
            }
        }
        if (m > INT32_MAX || nn > INT32_MAX || kk > INT32_MAX || batch > INT32_MAX)
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuBLAS");
        if (ne == 0) break;
        const clt *lt = p->lt[k];
        if (lt && batch == 1 && kk > 0) {   /* the GEMM with its bias (+ activation) epilogue */
            const void *bias = gn__cuda_vptr(e, p, n->in[2]);
            const float one = 1.0f, zero = 0.0f;
            CK_LT(b->p_cublasLtMatmulDescSetAttribute(lt->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
            CK_LT(b->p_cublasLtMatmul(b->lt, lt->desc, &one, gn__cuda_vptr(e, p, y), lt->la, xp, lt->lb, &zero, yp, lt->ld, yp,
                                      lt->ld, &lt->algo, b->blas_ws, BLAS_WORKSPACE, s));
            break;
        }
        if (kk == 0) {
            CK_CUDA(cudaMemsetAsync(yp, 0, (size_t)ne * (h ? 2 : 4), s));
        } else {
            /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
            cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
            const float one = 1.0f, zero = 0.0f;
            cublasOperation_t opa = n->ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = n->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
            int lda = (int)(n->ta ? m : kk), ldb = (int)(n->tb ? kk : nn);
            const void *yp2 = gn__cuda_vptr(e, p, y);
            if (batch == 1) {
                CK_BLAS(b->p_cublasGemmEx(b->blas, opb, opa, (int)nn, (int)m, (int)kk, &one, yp2, dt, ldb, xp, dt, lda,
                                          &zero, yp, dt, (int)nn, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            } else {
                long long sa = bx == 1 ? 0 : (long long)(m * kk), sb = by == 1 ? 0 : (long long)(kk * nn);
                CK_BLAS(b->p_cublasGemmStridedBatchedEx(b->blas, opb, opa, (int)nn, (int)m, (int)kk, &one, yp2, dt, ldb,
                                                        sb, xp, dt, lda, sa, &zero, yp, dt, (int)nn,
                                                        (long long)(m * nn), (int)batch, CUBLAS_COMPUTE_32F,
                                                        CUBLAS_GEMM_DEFAULT));
            }
        }
        GN_TRY(gn__cuda_run_epilogue(e, p, n, h, ne, nn, 1, yp, err));
        break;
    }
    case OP_CONV: {
        cconv *c = p->conv[k];
        if (!c) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no convolution plan");
        size_t base = (size_t)k * N_SCR;
        void *wt = (char *)p->arena + p->scr_off[base + SCR_W];
        if (!c->w_once) CK_CUDA(gn__cu_transpose(h ? 2 : 4, 4, c->w_dims, c->w_perm, gn__cuda_vptr(e, p, n->in[1]), wt, s));
        const void *src = xp;
        if (c->prepad) {
            void *pp = (char *)p->arena + p->scr_off[base + SCR_PAD];
            CK_CUDA(gn__cu_pad(h ? 2 : 4, GN__CU_PAD_CONST, NULL, 4, c->pp_in, c->pp_before, c->pp_out, xp, pp, s));
            src = pp;
        }
        void *ws = c->ws_bytes ? (char *)p->arena + p->scr_off[base + SCR_WS] : NULL;
        const float one = 1.0f, zero = 0.0f;
        if (ne > 0)
            CK_DNN(b->p_cudnnConvolutionForward(b->dnn, &one, c->x, src, c->w, wt, c->conv, c->algo, ws, c->ws_bytes,
                                                &zero, c->y, yp));
        GN_TRY(gn__cuda_run_epilogue(e, p, n, h, ne, c->c_out, c->inner, yp, err));
        break;
    }
    case OP_POOL: {
        gn__cu_pool pp;
        int hd = n->nchw ? 2 : 1, cd = n->nchw ? 1 : 3;
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(gn__cuda_window(e, n, xd[hd], n->ksize[0], 1, n->stride[0], NULL, &oh, &bh, &ah, err));
        GN_TRY(gn__cuda_window(e, n, xd[hd + 1], n->ksize[1], 1, n->stride[1], NULL, &ow, &bw, &aw, err));
        pp = (gn__cu_pool){.max = n->op->sub, .nchw = n->nchw, .n = xd[0], .c = xd[cd], .h = xd[hd], .w = xd[hd + 1],
                           .oh = oh, .ow = ow, .kh = n->ksize[0], .kw = n->ksize[1], .sh = n->stride[0],
                           .sw = n->stride[1], .pad_top = bh, .pad_left = bw};
        CK_CUDA(gn__cu_pool2d(h, &pp, xp, yp, s));
        break;
    }
    case OP_BN: {
        int32_t cd = n->nchw ? 1 : xr - 1;
        int64_t inner = 1;
        for (int32_t d = cd + 1; d < xr; d++) inner *= xd[d];
        CK_CUDA(gn__cu_batchnorm(h, p->dtype[n->in[1]] == DT_F16, ne, xd[cd], inner, xp, gn__cuda_vptr(e, p, n->in[1]),
                                 gn__cuda_vptr(e, p, n->in[2]), gn__cuda_vptr(e, p, n->in[3]), gn__cuda_vptr(e, p, n->in[4]), n->eps, yp, s));
        break;
    }
    case OP_SOFTMAX: {
        int64_t cols = xd[xr - 1];
        CK_CUDA(gn__cu_softmax(h, cols ? ne / cols : 0, cols, xp, yp, s));
        break;
    }
    case OP_TRANSPOSE: {
        int64_t pm[GN__MAX_DIMS], cnt = 0;
        int32_t perm[GN__MAX_DIMS];
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], pm, GN__MAX_DIMS, &cnt, err));
        for (int64_t d = 0; d < cnt; d++) perm[d] = (int32_t)pm[d];
        CK_CUDA(gn__cu_transpose((int)gn_dtype_size(p->dtype[x]), xr, xd, perm, xp, yp, s));
        break;
    }
    case OP_CONCAT: {
        int64_t a, cnt = 0;
        int32_t orank = p->rank[o];
        uint32_t n_data = n->op->sub ? n->n_in : n->n_in - 1;
        if (n->op->sub) a = n->axis < 0 ? n->axis + orank : n->axis;
        else {
            GN_TRY(gn__cuda_const_ints(e, p, n, n->in[n->n_in - 1], &a, 1, &cnt, err));
            if (a < 0) a += xr;
        }
        size_t es = gn_dtype_size(p->dtype[o]);
        int64_t outer = 1, inner = 1;
        for (int32_t d = 0; d < a; d++) outer *= od[d];
        for (int32_t d = (int32_t)a + 1; d < orank; d++) inner *= od[d];
        size_t dpitch = (size_t)(od[a] * inner) * es, col = 0;
        for (uint32_t i = 0; i < n_data; i++) {
            uint32_t v = n->in[i];
            size_t width = (size_t)((n->op->sub ? 1 : gn__cuda_vdims(p, v)[a]) * inner) * es;
            if (width && outer)
                CK_CUDA(cudaMemcpy2DAsync((char *)yp + col, dpitch, gn__cuda_vptr(e, p, v), width, width, (size_t)outer,
                                          cudaMemcpyDeviceToDevice, s));
            col += width;
        }
        break;
    }
    case OP_REDUCE: {
        int64_t ax[GN__MAX_DIMS], cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], ax, GN__MAX_DIMS, &cnt, err));
        uint8_t red[GN__MAX_DIMS] = {0};
        for (int64_t i = 0; i < cnt; i++) red[ax[i] < 0 ? ax[i] + xr : ax[i]] = 1;
        CK_CUDA(gn__cu_reduce(h, n->op->sub, xr, xd, red, xp, yp, s));
        break;
    }
    case OP_PAD: {
        int64_t pd[2 * GN__MAX_DIMS], before[GN__MAX_DIMS], cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], pd, 2 * GN__MAX_DIMS, &cnt, err));
        for (int32_t d = 0; d < xr; d++) before[d] = pd[2 * d];
        const gn__tensor *cv = n->op->sub == 1 ? gn__cuda_host_tensor(e, p, n->in[2]) : NULL;
        int mode = n->op->sub == 2 ? n->mirror : GN__CU_PAD_CONST;
        CK_CUDA(gn__cu_pad((int)gn_dtype_size(p->dtype[x]), mode, cv ? cv->data : NULL, xr, xd, before, od, xp, yp, s));
        break;
    }
    case OP_SLICE:
    case OP_SPLIT: {
        const gn__cu_slice *sl = p->sl[k];
        if (!sl) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no slice plan");
        for (uint32_t i = 0; i < n->n_out; i++)
            CK_CUDA(gn__cu_slice_copy((int)gn_dtype_size(p->dtype[x]), &sl[i], xp, gn__cuda_vptr(e, p, o + i), s));
        break;
    }
    case OP_EINSUM: {
        const ceinsum *c = p->ein[k];
        if (!c) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no einsum plan");
        size_t base = (size_t)k * N_SCR, es = h ? 2 : 4;
        const void *a = xp, *bm = gn__cuda_vptr(e, p, n->in[1]);
        void *cm = c->tc ? (char *)p->arena + p->scr_off[base + SCR_WS] : yp;
        if (ne == 0) break;
        if (c->ta) {
            void *t = (char *)p->arena + p->scr_off[base + SCR_W];
            CK_CUDA(gn__cu_transpose((int)es, c->ra, c->a_dims, c->pa, a, t, s));
            a = t;
        }
        if (c->tb) {
            void *t = (char *)p->arena + p->scr_off[base + SCR_PAD];
            CK_CUDA(gn__cu_transpose((int)es, c->rb, c->b_dims, c->pb, bm, t, s));
            bm = t;
        }
        if (c->k == 0) {
            CK_CUDA(cudaMemsetAsync(cm, 0, (size_t)(c->batch * c->m * c->n) * es, s));
        } else {   /* row-major C = A B as column-major C^T = B^T A^T */
            cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
            const float one = 1.0f, zero = 0.0f;
            CK_BLAS(b->p_cublasGemmStridedBatchedEx(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)c->n, (int)c->m, (int)c->k, &one,
                                                    bm, dt, (int)c->n, (long long)(c->k * c->n), a, dt, (int)c->k,
                                                    (long long)(c->m * c->k), &zero, cm, dt, (int)c->n,
                                                    (long long)(c->m * c->n), (int)c->batch, CUBLAS_COMPUTE_32F,
                                                    CUBLAS_GEMM_DEFAULT));
        }
        if (c->tc) CK_CUDA(gn__cu_transpose((int)es, c->rc, c->c_dims, c->pc, cm, yp, s));
        break;
    }
    case OP_GATHER: {
        int64_t a, cnt = 0, outer = 1, inner = 1;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        for (int32_t d = 0; d < a; d++) outer *= xd[d];
        for (int32_t d = (int32_t)a + 1; d < xr; d++) inner *= xd[d];
        CK_CUDA(gn__cu_gather((int)gn_dtype_size(p->dtype[x]), n->idx64, outer, xd[a], inner, gn__cuda_numel_of(p, n->in[1]), xp,
                              gn__cuda_vptr(e, p, n->in[1]), yp, s));
        break;
    }
    case OP_XLA: {
        int es = (int)gn_dtype_size(p->dtype[x]);
        if (n->op->sub == XLA_DSLICE) {
            CK_CUDA(gn__cu_xla_dynamic_slice(es, n->idx64, xr, xd, od, gn__cuda_vptr(e, p, n->in[1]), xp, yp, s));
        } else if (n->op->sub == XLA_DUS) {
            CK_CUDA(gn__cu_xla_dynamic_update_slice(es, n->idx64, xr, xd, gn__cuda_vdims(p, n->in[1]), gn__cuda_vptr(e, p, n->in[2]), xp,
                                                    gn__cuda_vptr(e, p, n->in[1]), yp, s));
        } else if (n->op->sub == XLA_PAD) {
            gn__cu_xpad pad;
            GN_TRY(gn__cuda_plan_xla(e, p, n, &pad, NULL, err));
            CK_CUDA(gn__cu_xla_pad(es, &pad, gn__cuda_vptr(e, p, n->in[1]), xp, yp, s));
        } else {
            gn__cu_xgather gather;
            GN_TRY(gn__cuda_plan_xla(e, p, n, NULL, &gather, err));
            CK_CUDA(gn__cu_xla_gather(es, n->idx64, &gather, xp, gn__cuda_vptr(e, p, n->in[1]), yp, s));
        }
        break;
    }
    default: return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "unhandled op");
    }
    return GN_OK;
}

gn_status gn__cuda_run_all(gn__engine *e, cplan *p, gn__err *err)
{
    for (uint32_t k = 0; k < e->n_nodes; k++) GN_TRY(run_node(e, p, k, err));
    return GN_OK;
}

/* Captures the plan's kernels into a CUDA Graph (the feed and fetch copies
 * stay outside: the graph reads and writes the plan's fixed arena buffers).
 * Nothing runs during a capture. When something cannot be captured (a call
 * that syncs with the host or allocates invalidates the capture) the plan is
 * marked so and runs normally from then on; the stats say why. */
