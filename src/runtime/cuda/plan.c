/* The CUDA backend: plans, one per set of input shapes: the host-side shapes
 * and values, cuDNN descriptors and algorithms, cuBLASLt GEMMs, the INT8
 * nodes' plans, per node (plan_node). */
#include "runtime/cuda/backend_impl.h"

size_t gn__cuda_align_up(size_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

gn_status gn__cuda_fail(gn__err *err, const char *what, cudaError_t e)
{
    return gn__fail(err, GN_ERR_BACKEND, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

gn_status gn__cuda_node_fail(const gn__engine *e, const cnode *n, gn__err *err, gn_status code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gn__fail(err, code, NODE_FMT "%s", NODE_ARGS(e, n), msg);
}

static void clt_free(const cu_backend *b, clt *c)
{
    if (!c) return;
    if (c->la) b->p_cublasLtMatrixLayoutDestroy(c->la);
    if (c->lb) b->p_cublasLtMatrixLayoutDestroy(c->lb);
    if (c->ld) b->p_cublasLtMatrixLayoutDestroy(c->ld);
    if (c->desc) b->p_cublasLtMatmulDescDestroy(c->desc);
    free(c);
}

/* The first algorithm cuBLASLt's heuristic offers for c's descriptors
 * (built when ok) within our workspace; NULL (c freed) when none. */
static clt *lt_pick(const cu_backend *b, clt *c, bool ok)
{
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulPreference_t pref = NULL;
    size_t ws = BLAS_WORKSPACE;
    ok = ok && b->p_cublasLtMatmulPreferenceCreate(&pref) == OK &&
         b->p_cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) == OK;
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int found = 0;
    ok = ok && b->p_cublasLtMatmulAlgoGetHeuristic(b->lt, c->desc, c->la, c->lb, c->ld, c->ld, pref, 1, &res, &found) == OK &&
         found > 0 && res.state == CUBLAS_STATUS_SUCCESS && res.workspaceSize <= BLAS_WORKSPACE;
    if (pref) b->p_cublasLtMatmulPreferenceDestroy(pref);
    if (!ok) {
        clt_free(b, c);
        return NULL;
    }
    c->algo = res.algo;
    return c;
}

/* cuBLASLt for a 2-D _FusedMatMul of [m, k] x [k, n] with a bias and then
 * nothing, Relu, or (float16 only) the tanh Gelu inside the GEMM
 * (CUBLASLT_EPILOGUE_BIAS, RELU_BIAS, GELU_BIAS), accumulating in float32
 * (CUBLAS_COMPUTE_32F: no TF32); NULL when cuBLASLt is missing, the fused
 * ops do not fit an epilogue, or its heuristic offers no algorithm: then
 * cuBLAS and our epilogue kernel run. Row-major C = op(A) op(B) is
 * column-major C^T = op(B)^T op(A)^T, whose rows get the bias. */
static clt *plan_lt(const gn__engine *e, const cnode *n, int h, int64_t m, int64_t nn, int64_t kk)
{
    cu_backend *b = e->b;
    if (!b->lt || n->epi != EPI_BIAS || !n->has_bias || n->side || m < 1 || nn < 1 || kk < 1) return NULL;
    cublasLtEpilogue_t epi;
    if (n->act == GN__CU_ID) epi = CUBLASLT_EPILOGUE_BIAS;
    else if (n->act == GN__CU_RELU) epi = CUBLASLT_EPILOGUE_RELU_BIAS;
    else if (n->act == GN__CU_GELU_APPROX && h) epi = CUBLASLT_EPILOGUE_GELU_BIAS;
    else return NULL;
    clt *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    cudaDataType_t dt = h ? CUDA_R_16F : CUDA_R_32F;
    int32_t bias_t = (int32_t)dt;   /* the bias has the output's type */
    cublasOperation_t opa = n->tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = n->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    bool ok = b->p_cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_t, sizeof bias_t) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->la, dt, (uint64_t)(n->tb ? kk : nn), (uint64_t)(n->tb ? nn : kk),
                                              n->tb ? kk : nn) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->lb, dt, (uint64_t)(n->ta ? m : kk), (uint64_t)(n->ta ? kk : m),
                                              n->ta ? m : kk) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->ld, dt, (uint64_t)nn, (uint64_t)m, nn) == OK;
    return lt_pick(b, c, ok);
}

/* cuBLASLt for an INT8 engine's GEMM: int8 rows of the activations [m, kp]
 * times int8 rows of the weights [nn, kp], summed into int32 [m, nn]
 * (CUBLAS_COMPUTE_32I; column-major that is the "TN" form its int8 kernels
 * want: C^T = W^T' X^T with W^T' the weights transposed); NULL when
 * cuBLASLt is missing or its heuristic offers no algorithm for these
 * shapes: then gn__cu_gemm8 runs. */
static clt *plan_lt8(const cu_backend *b, int64_t m, int64_t nn, int64_t kp)
{
    if (!b->lt || m < 1 || nn < 1 || kp < 1) return NULL;
    clt *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    cublasOperation_t opa = CUBLAS_OP_T, opb = CUBLAS_OP_N;
    const cublasStatus_t OK = CUBLAS_STATUS_SUCCESS;
    bool ok = b->p_cublasLtMatmulDescCreate(&c->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa) == OK &&
              b->p_cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->la, CUDA_R_8I, (uint64_t)kp, (uint64_t)nn, kp) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->lb, CUDA_R_8I, (uint64_t)kp, (uint64_t)m, kp) == OK &&
              b->p_cublasLtMatrixLayoutCreate(&c->ld, CUDA_R_32I, (uint64_t)nn, (uint64_t)m, nn) == OK;
    return lt_pick(b, c, ok);
}

static void ci8_free(const cu_backend *b, ci8 *c)
{
    if (!c) return;
    free(c->h_wq);
    free(c->h_sw);
    clt_free(b, c->lt);
    free(c);
}

int64_t *gn__cuda_vdims(cplan *p, uint32_t v)
{
    return &p->dims[(size_t)v * GN__MAX_DIMS];
}

int64_t gn__cuda_numel_of(const cplan *p, uint32_t v)
{
    int64_t n = 1;
    for (int32_t d = 0; d < p->rank[v]; d++) n *= p->dims[(size_t)v * GN__MAX_DIMS + d];
    return n;
}

static const char *shape_str(const cplan *p, uint32_t v, char *buf, size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    for (int32_t d = 0; d < p->rank[v] && pos < len; d++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", d ? "," : "", (long long)p->dims[(size_t)v * GN__MAX_DIMS + d]);
    if (pos < len) snprintf(buf + pos, len - pos, "]");
    return buf;
}

void *gn__cuda_vptr(const gn__engine *e, const cplan *p, uint32_t v)
{
    uint32_t r = p->root[v];
    if (e->vals[r].kind == V_CONST) return (char *)e->weights + e->vals[r].dev_off;
    return (char *)p->arena + p->off[r];
}

static void cconv_free(const cu_backend *b, cconv *c)
{
    if (!c) return;
    if (c->x) b->p_cudnnDestroyTensorDescriptor(c->x);
    if (c->y) b->p_cudnnDestroyTensorDescriptor(c->y);
    if (c->w) b->p_cudnnDestroyFilterDescriptor(c->w);
    if (c->conv) b->p_cudnnDestroyConvolutionDescriptor(c->conv);
    free(c);
}

void gn__cuda_plan_free(const gn__engine *e, cplan *p)
{
    if (!p) return;
    if (p->eng)
        for (uint32_t i = 0; i < e->n_nodes; i++) gn__cuda_ceng_release(e->b, p->eng[i]);
    free(p->eng);
    free(p->ln_on);
    if (p->lt)
        for (uint32_t i = 0; i < e->n_nodes; i++) clt_free(e->b, p->lt[i]);
    free(p->lt);
    if (p->i8)
        for (uint32_t i = 0; i < e->n_nodes; i++) ci8_free(e->b, p->i8[i]);
    free(p->i8);
    if (p->conv)
        for (uint32_t i = 0; i < e->n_nodes; i++) cconv_free(e->b, p->conv[i]);
    if (p->ein)
        for (uint32_t i = 0; i < e->n_nodes; i++) free(p->ein[i]);
    free(p->ein);
    if (p->sl)
        for (uint32_t i = 0; i < e->n_nodes; i++) free(p->sl[i]);
    if (p->hval)
        for (uint32_t v = 0; v < e->n_vals; v++) gn__tensor_release(&p->hval[v]);
    free(p->sl);
    free(p->hval);
    if (p->graph_exec) cudaGraphExecDestroy(p->graph_exec);
    if (p->arena) cudaFree(p->arena);
    free(p->key_dtype);
    free(p->key_rank);
    free(p->key_dims);
    free(p->dtype);
    free(p->rank);
    free(p->dims);
    free(p->root);
    free(p->off);
    free(p->bytes);
    free(p->scr_off);
    free(p->scr_bytes);
    free(p->conv);
    free(p);
}

/* Value v on the host: a Const, or a host node's output in plan p; NULL otherwise. */
const gn__tensor *gn__cuda_host_tensor(const gn__engine *e, const cplan *p, uint32_t v)
{
    if (e->vals[v].kind == V_CONST) return &e->vals[v].host;
    if (p->hval[v].dtype) return &p->hval[v];
    return NULL;
}

/* Integer values of host value v (int32 or int64), at most max. */
gn_status gn__cuda_const_ints(const gn__engine *e, const cplan *p, const cnode *n, uint32_t v, int64_t *out, int64_t max,
                            int64_t *count, gn__err *err)
{
    const gn__tensor *t = gn__cuda_host_tensor(e, p, v);
    if (!t) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "shape argument must be a Const");
    int64_t k = gn__tensor_numel(t);
    if (k > max) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "shape argument has %lld values", (long long)k);
    for (int64_t i = 0; i < k; i++) {
        if (t->dtype == DT_I32) out[i] = ((const int32_t *)t->data)[i];
        else if (t->dtype == DT_I64) out[i] = ((const int64_t *)t->data)[i];
        else return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "shape argument must be int32 or int64");
    }
    *count = k;
    return GN_OK;
}

bool gn__cuda_is_float(int32_t dt)
{
    return dt == DT_F32 || dt == DT_F16;
}

/* TensorFlow's window: output size and padding before/after for one spatial dim. */
gn_status gn__cuda_window(const gn__engine *e, const cnode *n, int64_t in, int64_t k, int64_t dil, int64_t stride,
                        const int64_t *explicit_pad, int64_t *out, int64_t *before, int64_t *after, gn__err *err)
{
    int64_t eff = (k - 1) * dil + 1;
    if (n->pad == PAD_VALID) {
        *before = *after = 0;
        if (in < eff) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "window %lld larger than input %lld", (long long)eff, (long long)in);
        *out = (in - eff) / stride + 1;
    } else if (n->pad == PAD_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + eff - in;
        if (total < 0) total = 0;
        *before = total / 2;
        *after = total - *before;
    } else {
        *before = explicit_pad[0];
        *after = explicit_pad[1];
        if (in + *before + *after < eff) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "window larger than padded input");
        *out = (in + *before + *after - eff) / stride + 1;
    }
    return GN_OK;
}

static void row_strides(int32_t rank, const int64_t *dims, int64_t *stride)
{
    int64_t st = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        stride[d] = st;
        st *= dims[d];
    }
}

/* A host node: evaluated now, on the host, with the CPU backend's kernel
 * (the shapes, hence Shape's value, are fixed within a plan). */
static gn_status plan_host(gn__engine *e, cplan *p, const cnode *n, gn__err *err)
{
    const char *op = gn__node_op(e->g, n->id);
    uint32_t o = n->out;
    gn__kctx c;
    memset(&c, 0, sizeof c);
    c.g = e->g;
    c.node = n->id;
    c.n_out = n->n_out;
    c.out = &p->hval[o];
    c.err = err;
    gn__tensor *ins = calloc(n->n_in + 1, sizeof *ins);
    if (!ins) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    gn_status s = GN_OK;
    if (gn__cuda_is_shape_op(op)) {
        uint32_t x = n->in[0];
        int t = DT_I32;
        gn__attr_get_type(e->g, n->id, "out_type", &t);
        bool shape = !strcmp(op, "Shape");
        int64_t dims[1] = {p->rank[x]};
        gn__tensor *out = NULL;
        if (t != DT_I32 && t != DT_I64) s = gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "out_type must be int32 or int64");
        if (s == GN_OK && !strcmp(op, "Rank")) t = DT_I32;
        if (s == GN_OK) s = gn__kctx_output(&c, 0, t, shape ? 1 : 0, dims, &out);
        int64_t total = gn__cuda_numel_of(p, x);
        for (int32_t d = 0; s == GN_OK && d < (shape ? p->rank[x] : 1); d++) {
            int64_t v = shape ? gn__cuda_vdims(p, x)[d] : !strcmp(op, "Size") ? total : p->rank[x];
            if (t == DT_I32 && v > INT32_MAX) s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "value %lld does not fit int32", (long long)v);
            else if (t == DT_I32) ((int32_t *)out->data)[d] = (int32_t)v;
            else ((int64_t *)out->data)[d] = v;
        }
    } else {
        for (uint32_t i = 0; s == GN_OK && i < n->n_in; i++) {
            const gn__tensor *t = gn__cuda_host_tensor(e, p, n->in[i]);
            if (!t) s = gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "input %u is not known on the host", i);
            else ins[i] = *t;
        }
        c.n_in = n->n_in;
        c.in = ins;
        gn__kernel_fn fn = gn__kernel_for(op);
        if (s == GN_OK && !fn) s = gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no host kernel");
        if (s == GN_OK) s = fn(&c);
    }
    free(ins);
    for (uint32_t i = 0; s == GN_OK && i < n->n_out; i++) {
        const gn__tensor *t = &p->hval[o + i];
        if (!t->dtype || t->dead) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "output %u was not produced on the host", i);
        p->root[o + i] = o + i;
        p->dtype[o + i] = t->dtype;
        p->rank[o + i] = t->rank;
        memcpy(gn__cuda_vdims(p, o + i), t->dims, sizeof(int64_t) * GN__MAX_DIMS);
    }
    return s;
}

/* StridedSlice as TensorFlow resolves it (masks, one ellipsis, implied
 * trailing ellipsis, new axes, shrunk axes): sl over the input's dims, od
 * and *orank the output's shape (the same elements in the same order). */
static gn_status strided_slice(const gn__engine *e, const cplan *p, const cnode *n, uint32_t x, gn__cu_slice *sl,
                               int64_t *od, int32_t *orank, gn__err *err)
{
    int64_t bg[GN__MAX_DIMS], en[GN__MAX_DIMS], st[GN__MAX_DIMS], nb = 0, nen = 0, ns = 0;
    GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], bg, GN__MAX_DIMS, &nb, err));
    GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], en, GN__MAX_DIMS, &nen, err));
    GN_TRY(gn__cuda_const_ints(e, p, n, n->in[3], st, GN__MAX_DIMS, &ns, err));
    if (nb != nen || nb != ns || nb < 1)
        return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "begin, end and strides must have one length (%lld, %lld, %lld)",
                         (long long)nb, (long long)nen, (long long)ns);
    int64_t bm = n->masks[0], em = n->masks[1], elm = n->masks[2], nam = n->masks[3], sam = n->masks[4];
    int32_t xr = p->rank[x];
    const int64_t *xd = &p->dims[(size_t)x * GN__MAX_DIMS];
    int64_t m = nb, ell = -1, add_after = 0, xs[GN__MAX_DIMS];
    for (int64_t i = 0; i < m; i++)
        if ((elm >> i) & 1) {
            if (ell >= 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "more than one ellipsis in the slice");
            ell = i;
        }
    for (int64_t i = ell + 1; ell >= 0 && i < m; i++) add_after += (nam >> i) & 1;
    int64_t mm = ell >= 0 ? m : m + 1;   /* without one, an ellipsis is implied at the end */
    row_strides(xr, xd, xs);
    sl->rank = xr;
    sl->start = 0;
    int32_t full = 0, r = 0;
    for (int64_t i = 0; i < mm; i++) {
        if (ell >= 0 ? i == ell : i == m) {
            int64_t next = xr - (mm - i) + 1 + add_after;
            if (next > xr) next = xr;
            for (; full < next; full++) {
                if (r >= GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
                sl->dims[full] = xd[full];
                sl->step[full] = xs[full];
                od[r++] = xd[full];
            }
            continue;
        }
        if ((nam >> i) & 1) {
            if (r >= GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
            od[r++] = 1;
            continue;
        }
        if (full >= xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "the slice has more dims than the input's %d", xr);
        int64_t dim = xd[full], sd = st[i], b, size;
        if (sd == 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "strides[%lld] is 0", (long long)i);
        if ((sam >> i) & 1) {
            b = bg[i] < 0 ? bg[i] + dim : bg[i];
            if (b < 0 || b >= dim)
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "index %lld out of bounds for dim %d of size %lld",
                                 (long long)bg[i], full, (long long)dim);
            if (sd < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "only stride 1 is allowed on a shrunk axis");
            sd = 1;
            size = 1;
        } else {
            int64_t lo = sd > 0 ? 0 : -1, hi = sd > 0 ? dim : dim - 1, ed;
            if ((bm >> i) & 1) b = sd > 0 ? lo : hi;
            else {
                b = bg[i] < 0 ? bg[i] + dim : bg[i];
                b = b < lo ? lo : b > hi ? hi : b;
            }
            if ((em >> i) & 1) ed = sd > 0 ? hi : lo;
            else {
                ed = en[i] < 0 ? en[i] + dim : en[i];
                ed = ed < lo ? lo : ed > hi ? hi : ed;
            }
            size = sd > 0 ? (ed > b ? (ed - b + sd - 1) / sd : 0) : (b > ed ? (b - ed - sd - 1) / -sd : 0);
            if (r >= GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
            od[r++] = size;
        }
        sl->dims[full] = size;
        sl->step[full] = sd * xs[full];
        if (size > 0) sl->start += b * xs[full];
        full++;
    }
    if (full != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "slice covers %d of %d dims", full, xr);
    *orank = r;
    return GN_OK;
}

/* A fused Add's side input must have the output's shape and dtype. */
static gn_status check_side(const gn__engine *e, cplan *p, const cnode *n, uint32_t o, gn__err *err)
{
    if (!n->side) return GN_OK;
    uint32_t v = n->in[n->epi == EPI_BN ? 6 : 3];
    bool ok = p->rank[v] == p->rank[o] && p->dtype[v] == p->dtype[o];
    for (int32_t d = 0; ok && d < p->rank[o]; d++) ok = gn__cuda_vdims(p, v)[d] == gn__cuda_vdims(p, o)[d];
    char s1[160], s2[160];
    if (!ok) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "side input %s does not match the output %s", shape_str(p, v, s1, sizeof s1), shape_str(p, o, s2, sizeof s2));
    return GN_OK;
}

/* The epilogue of a fused convolution or matrix product, in place on y
 * (channels c, each a run of inner elements). */
gn_status gn__cuda_run_epilogue(gn__engine *e, cplan *p, const cnode *n, int h, int64_t ne, int64_t c, int64_t inner, void *y,
                              gn__err *err)
{
    cudaStream_t s = e->b->stream;
    if (n->epi == EPI_BN) {
        CK_CUDA(gn__cu_batchnorm(h, p->dtype[n->in[2]] == DT_F16, ne, c, inner, y, gn__cuda_vptr(e, p, n->in[2]),
                                 gn__cuda_vptr(e, p, n->in[3]), gn__cuda_vptr(e, p, n->in[4]), gn__cuda_vptr(e, p, n->in[5]), n->eps, y, s));
        if (!n->side && n->act != GN__CU_ID) CK_CUDA(gn__cu_bias_act(h, ne, c, inner, y, NULL, n->act, n->alpha, s));
    }
    if (n->side) {   /* act(y (+ bias) + side), one kernel */
        gn__cu_fused f;
        memset(&f, 0, sizeof f);
        int64_t outer = c > 0 && inner > 0 ? ne / (c * inner) : 0;
        bool bias = n->epi == EPI_BIAS;
        int k = 0;
        f.rank = 3;
        f.dims[0] = outer, f.dims[1] = c, f.dims[2] = inner;
        f.n_in = bias ? 3 : 2;
        f.in[0] = y;
        f.in[1] = gn__cuda_vptr(e, p, n->in[n->epi == EPI_BN ? 6 : 3]);
        if (bias) f.in[2] = gn__cuda_vptr(e, p, n->in[2]);
        for (int i = 0; i < 2; i++) f.stride[i][0] = c * inner, f.stride[i][1] = inner, f.stride[i][2] = 1;
        f.stride[2][1] = 1;   /* the bias: per channel */
        if (bias) f.ops[k++] = (gn__cu_fuse_op){1, GN__CU_ADD, -1, -3, 0.f};
        f.ops[k] = (gn__cu_fuse_op){1, GN__CU_ADD, (int8_t)(bias ? 0 : -1), -2, 0.f};
        k++;
        if (n->act != GN__CU_ID) {
            f.ops[k] = (gn__cu_fuse_op){0, (int8_t)n->act, (int8_t)(k - 1), 0, n->alpha};
            k++;
        }
        f.n_ops = k;
        CK_CUDA(gn__cu_fused_run(h, &f, y, s));
        return GN_OK;
    }
    if (n->epi == EPI_BN) return GN_OK;
    if (n->has_bias || n->act != GN__CU_ID)
        CK_CUDA(gn__cu_bias_act(h, ne, c, inner, y, n->has_bias ? gn__cuda_vptr(e, p, n->in[2]) : NULL, n->act, n->alpha, s));
    return GN_OK;
}

/* Einsum "ab..,cd..->ef.." of two operands (no "...", no label twice in an
 * operand, every label of one operand only also in the output): labels in
 * both and the output are batch dims, in both only contracted, in one
 * operand and the output free. */
static gn_status plan_einsum(const gn__engine *e, const cplan *p, const cnode *n, ceinsum *c, int64_t *od, int32_t *orank,
                             gn__err *err)
{
    const char *eq = NULL;
    size_t len = 0;
    char sa[16], sb[16], so[16];
    if (!gn__attr_get_string(e->g, n->id, "equation", &eq, &len) || len >= 48)
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "missing or long equation");
    char buf[48];
    memcpy(buf, eq, len);
    buf[len] = 0;
    char *comma = strchr(buf, ','), *arrow = strstr(buf, "->");
    if (!comma || !arrow || arrow < comma || strchr(buf, '.') || strchr(buf, ' '))
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': only 'A,B->C' without ellipsis", buf);
    size_t la = (size_t)(comma - buf), lb = (size_t)(arrow - comma - 1), lo = strlen(arrow + 2);
    uint32_t xa = n->in[0], xb = n->in[1];
    if (p->dtype[xa] != p->dtype[xb]) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "operands of different dtypes");
    if (la != (size_t)p->rank[xa] || lb != (size_t)p->rank[xb] || lo > GN__MAX_DIMS || la > 15 || lb > 15 || lo > 15)
        return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s' does not match the operands' ranks %d and %d", buf,
                         p->rank[xa], p->rank[xb]);
    memcpy(sa, buf, la), sa[la] = 0;
    memcpy(sb, comma + 1, lb), sb[lb] = 0;
    memcpy(so, arrow + 2, lo), so[lo] = 0;
    const int64_t *ad = &p->dims[(size_t)xa * GN__MAX_DIMS], *bd = &p->dims[(size_t)xb * GN__MAX_DIMS];
    int32_t nbat = 0, nm = 0, nn = 0, nk = 0;
    char bat[16], mm[16], nnl[16], kk[16];
    c->batch = c->m = c->n = c->k = 1;
    /* output labels in order: batch, M (from A), N (from B) */
    for (size_t i = 0; i < lo; i++) {
        const char *pa = strchr(sa, so[i]), *pb = strchr(sb, so[i]);
        if (strchr(so + i + 1, so[i]) || (pa && strchr(pa + 1, so[i])) || (pb && strchr(pb + 1, so[i])))
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': a repeated label", buf);
        if (pa && pb) {
            if (ad[pa - sa] != bd[pb - sb]) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': batch dims differ (broadcasting)", buf);
            bat[nbat++] = so[i], c->batch *= ad[pa - sa];
        } else if (pa) mm[nm++] = so[i], c->m *= ad[pa - sa];
        else if (pb) nnl[nn++] = so[i], c->n *= bd[pb - sb];
        else return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s': output label '%c' is in no operand", buf, so[i]);
        od[i] = pa ? ad[pa - sa] : bd[pb - sb];
    }
    for (size_t i = 0; i < la; i++) {
        if (strchr(so, sa[i])) continue;
        const char *pb = strchr(sb, sa[i]);
        if (!pb || strchr(sa + i + 1, sa[i])) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': label '%c' summed in one operand", buf, sa[i]);
        if (ad[i] != bd[pb - sb]) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "equation '%s': contracted dims differ", buf);
        kk[nk++] = sa[i], c->k *= ad[i];
    }
    for (size_t i = 0; i < lb; i++) {
        if (strchr(sb + i + 1, sb[i])) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': a repeated label", buf);
        if (!strchr(so, sb[i]) && !strchr(sa, sb[i]))
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "equation '%s': label '%c' summed in one operand", buf, sb[i]);
    }
    /* permutations: A -> [bat, M, K], B -> [bat, K, N], [bat, M, N] -> output */
    char ta[16], tb[16], tc[16];
    int32_t r = 0;
    memcpy(ta, bat, (size_t)nbat), memcpy(ta + nbat, mm, (size_t)nm), memcpy(ta + nbat + nm, kk, (size_t)nk);
    memcpy(tb, bat, (size_t)nbat), memcpy(tb + nbat, kk, (size_t)nk), memcpy(tb + nbat + nk, nnl, (size_t)nn);
    memcpy(tc, bat, (size_t)nbat), memcpy(tc + nbat, mm, (size_t)nm), memcpy(tc + nbat + nm, nnl, (size_t)nn);
    c->ra = (int32_t)la, c->rb = (int32_t)lb, c->rc = (int32_t)lo;
    c->ta = c->tb = c->tc = false;
    for (r = 0; r < (int32_t)la; r++) {
        c->pa[r] = (int32_t)(strchr(sa, ta[r]) - sa);
        c->ta |= c->pa[r] != r;
        c->a_dims[r] = ad[r];
    }
    for (r = 0; r < (int32_t)lb; r++) {
        c->pb[r] = (int32_t)(strchr(sb, tb[r]) - sb);
        c->tb |= c->pb[r] != r;
        c->b_dims[r] = bd[r];
    }
    /* C [bat, M, N] (labels tc) to the output (labels so): out dim d = C dim of so[d] */
    for (r = 0; r < (int32_t)lo; r++) {
        c->pc[r] = (int32_t)(memchr(tc, so[r], lo) ? (const char *)memchr(tc, so[r], lo) - tc : 0);
        c->tc |= c->pc[r] != r;
        c->c_dims[r] = od[(const char *)memchr(so, tc[r], lo) - so];
    }
    if (c->m > INT32_MAX || c->n > INT32_MAX || c->k > INT32_MAX || c->batch > INT32_MAX)
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuBLAS");
    *orank = (int32_t)lo;
    return GN_OK;
}

/* Output shape (and per-node plan state) of node k. */
/* One candidate of cuDNN's list: usable when it ran (or is expected to),
 * fits the workspace bound and, for float32 when measured (keep_math
 * false), uses no tensor-op (TF32) math. Sets the descriptor's math type. */
static bool algo_fits(const cu_backend *b, cconv *c, const cudnnConvolutionFwdAlgoPerf_t *pf, cudnnMathType_t want,
                      bool keep_math, algo_entry *a)
{
    if (pf->status != CUDNN_STATUS_SUCCESS || pf->memory > b->ws_limit) return false;
    cudnnMathType_t m = keep_math ? want : pf->mathType;
    if (want == CUDNN_FMA_MATH && m != CUDNN_FMA_MATH) return false;
    if (b->p_cudnnSetConvolutionMathType(c->conv, m) != CUDNN_STATUS_SUCCESS) return false;
    size_t ws = 0;
    if (b->p_cudnnGetConvolutionForwardWorkspaceSize(b->dnn, c->x, c->w, c->conv, c->y, pf->algo, &ws) !=
            CUDNN_STATUS_SUCCESS ||
        ws > b->ws_limit)
        return false;
    a->algo = pf->algo;
    a->math = m;
    a->ws_bytes = ws;
    return true;
}

/* The forward algorithm of convolution c (descriptors set): from the
 * backend's cache when these descriptors were met before; else the fastest
 * that cudnnFindConvolutionForwardAlgorithm measures within the workspace
 * bound; else (the trials failed, e.g. for memory) the first of cuDNN's
 * heuristic list that fits. The choice is cached either way. */
static gn_status choose_algo(gn__engine *e, const cnode *n, cconv *c, const algo_key *key, gn__err *err)
{
    cu_backend *b = e->b;
    for (uint32_t i = 0; i < b->n_algos; i++) {
        const algo_entry *a = &b->algos[i];
        if (memcmp(&a->key, key, sizeof *key) != 0) continue;
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, a->math));
        c->algo = a->algo;
        c->ws_bytes = a->ws_bytes;
        b->algo_hits++;
        return GN_OK;
    }
    algo_entry a;
    memset(&a, 0, sizeof a);
    a.key = *key;
    cudnnMathType_t want = (cudnnMathType_t)key->math;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    bool found = false;
    /* cuDNN allocates the trials' buffers itself and sorts by time */
    if (b->p_cudnnFindConvolutionForwardAlgorithm(b->dnn, c->x, c->w, c->conv, c->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                  &got, perf) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < got && i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && !found; i++)
            found = algo_fits(b, c, &perf[i], want, false, &a);
    (void)cudaGetLastError();   /* a trial's failed allocation leaves a (non-sticky) error behind */
    a.measured = found;
    if (!found) {
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, want));
        got = 0;
        CK_DNN(b->p_cudnnGetConvolutionForwardAlgorithm_v7(b->dnn, c->x, c->w, c->conv, c->y,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
        for (int i = 0; i < got && i < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && !found; i++)
            found = algo_fits(b, c, &perf[i], want, true, &a);
    }
    if (!found)
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED,
                         "cuDNN has no forward algorithm for this convolution within a %zu-byte workspace", b->ws_limit);
    CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, a.math));
    c->algo = a.algo;
    c->ws_bytes = a.ws_bytes;
    if (a.measured) b->algo_finds++;
    if (b->n_algos == b->cap_algos) {   /* the cache only saves time: when it cannot grow, nothing is lost */
        uint32_t cap = b->cap_algos ? b->cap_algos * 2 : 16;
        algo_entry *na = realloc(b->algos, (size_t)cap * sizeof *na);
        if (!na) return GN_OK;
        b->algos = na;
        b->cap_algos = cap;
    }
    b->algos[b->n_algos++] = a;
    return GN_OK;
}

_Static_assert((int)GN__I8_RELU == (int)GN__CU_RELU && (int)GN__I8_RELU6 == (int)GN__CU_RELU6 &&
                   (int)GN__I8_ELU == (int)GN__CU_ELU && (int)GN__I8_LEAKY == (int)GN__CU_LEAKY_RELU &&
                   (int)GN__I8_ID == (int)GN__CU_ID,
               "int8_math.h's activations are cuda.h's");

static int q8_act(int act)
{
    switch (act) {
    case GN__Q8_ACT_RELU: return GN__CU_RELU;
    case GN__Q8_ACT_RELU6: return GN__CU_RELU6;
    case GN__Q8_ACT_ELU: return GN__CU_ELU;
    case GN__Q8_ACT_LEAKY: return GN__CU_LEAKY_RELU;
    default: return GN__CU_ID;
    }
}

/* An int8 node's plan (ci8), once plan_node has checked its shapes; none
 * (the node runs in float) when its weights are not known on the host now
 * or its input is not float32. */
static gn_status plan_q8(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    const cnode *n = &e->nodes[k];
    uint32_t x = n->in[0], o = n->out;
    const gn__tensor *w = gn__cuda_host_tensor(e, p, p->root[n->in[1]]);
    if (!w || p->dtype[x] != DT_F32) return GN_OK;
    int64_t K = 0, N = 0;
    GN_TRY(gn__q8_weights(e->g, n->id, &n->q8, w, 0, NULL, NULL, &K, &N, err));
    ci8 *c = calloc(1, sizeof *c);
    if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    p->i8[k] = c;
    c->kind = n->q8.kind;
    c->k = K;
    c->n = N;
    c->kp = (K + 15) / 16 * 16;
    c->sx = n->q8_sx;
    c->inv = 1.0f / c->sx;
    c->act = q8_act(n->q8.act);
    const int64_t *xd = gn__cuda_vdims(p, x), *od = gn__cuda_vdims(p, o);
    if (c->kind == GN__Q8_MM) {
        c->m = od[0];
        if (od[1] != N || (n->q8.ta ? xd[0] : xd[1]) != K)
            return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "int8 weights do not match the planned shapes");
    } else {
        gn__cu_conv8 *g = &c->geo;
        int64_t bh, ah, bw, aw, oh, ow;
        GN_TRY(gn__cuda_window(e, n, xd[1], w->dims[0], 1, n->q8.stride[0], &n->explicit_pad[0], &oh, &bh, &ah, err));
        GN_TRY(gn__cuda_window(e, n, xd[2], w->dims[1], 1, n->q8.stride[1], &n->explicit_pad[2], &ow, &bw, &aw, err));
        *g = (gn__cu_conv8){.n = xd[0], .h = xd[1], .w = xd[2], .c = xd[3], .oh = oh, .ow = ow, .kh = w->dims[0],
                            .kw = w->dims[1], .sh = n->q8.stride[0], .sw = n->q8.stride[1], .pad_top = bh, .pad_left = bw};
        c->m = g->n * oh * ow;
        c->mult = w->dims[3];
        if (oh != od[1] || ow != od[2] || od[3] != N || w->dims[2] != g->c)
            return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "int8 weights do not match the planned shapes");
    }
    size_t wbytes = (size_t)(c->kind == GN__Q8_DW ? K * N : N * c->kp);
    c->wq_bytes = gn__cuda_align_up(wbytes ? wbytes : 1);
    c->h_wq = malloc(wbytes + 1);
    c->h_sw = malloc((size_t)(N + 1) * sizeof *c->h_sw);
    if (!c->h_wq || !c->h_sw) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(gn__q8_weights(e->g, n->id, &n->q8, w, c->kp, c->h_wq, c->h_sw, &K, &N, err));
    size_t base = (size_t)k * N_SCR;
    p->scr_bytes[base + SCR_W] = c->wq_bytes + (size_t)N * sizeof(float);
    if (c->kind != GN__Q8_DW) {
        p->scr_bytes[base + SCR_PAD] = (size_t)(c->m * c->kp);
        p->scr_bytes[base + SCR_WS] = (size_t)(c->m * N) * sizeof(int32_t);
        c->lt = plan_lt8(e->b, c->m, N, c->kp);
    }
    return GN_OK;
}

/* An XLA data-movement node's output shape (set in the plan), checked as the
 * CPU kernels check it; the launch parameters of XlaPad (pad) and XlaGather
 * (gather) when asked for. */
gn_status gn__cuda_plan_xla(const gn__engine *e, cplan *p, const cnode *n, gn__cu_xpad *pad, gn__cu_xgather *gather,
                          gn__err *err)
{
    uint32_t x = n->in[0], o = n->out, iv = n->in[n->op->sub == XLA_DUS ? 2 : 1];   /* the indices (XlaPad: unused) */
    int64_t *od = gn__cuda_vdims(p, o), *xd = gn__cuda_vdims(p, x), v[3][GN__MAX_DIMS], cnt = 0;
    int32_t xr = p->rank[x];
    char s1[160];
    if (n->op->sub != XLA_PAD && p->dtype[iv] != (n->idx64 ? DT_I64 : DT_I32))
        return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "indices are %s, not Tindices", gn_dtype_numpy_name(p->dtype[iv]));
    if (xr > GN__CU_MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "rank %d is over %d", xr, GN__CU_MAX_DIMS);
    switch (n->op->sub) {
    case XLA_DSLICE:
        if (p->rank[iv] != 1 || gn__cuda_vdims(p, iv)[0] != xr)
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "start_indices must be a vector of %d entries", xr);
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], v[0], GN__MAX_DIMS, &cnt, err));
        if (cnt != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "size_indices has %lld entries; the operand has rank %d", (long long)cnt, xr);
        for (int32_t d = 0; d < xr; d++) {
            if (v[0][d] < 0 || v[0][d] > xd[d])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "size_indices[%d] = %lld is out of range for %s", d, (long long)v[0][d], shape_str(p, x, s1, sizeof s1));
            od[d] = v[0][d];
        }
        return GN_OK;
    case XLA_DUS: {
        uint32_t u = n->in[1];
        if (p->dtype[u] != p->dtype[x] || p->rank[u] != xr)
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "update %s does not match the operand %s", shape_str(p, u, s1, sizeof s1), gn_dtype_numpy_name(p->dtype[x]));
        for (int32_t d = 0; d < xr; d++)
            if (gn__cuda_vdims(p, u)[d] > xd[d]) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "update dimension %d is larger than the operand's", d);
        if (p->rank[iv] != 1 || gn__cuda_vdims(p, iv)[0] != xr)
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "indices must be a vector of %d entries", xr);
        return GN_OK;
    }
    case XLA_PAD: {
        if (p->dtype[n->in[1]] != p->dtype[x] || gn__cuda_numel_of(p, n->in[1]) != 1)
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "padding_value must be one %s value", gn_dtype_numpy_name(p->dtype[x]));
        for (int k = 0; k < 3; k++) {
            GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2 + k], v[k], GN__MAX_DIMS, &cnt, err));
            if (cnt != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "padding input %d has %lld entries; the operand has rank %d", 2 + k, (long long)cnt, xr);
        }
        for (int32_t d = 0; d < xr; d++) {
            if (v[2][d] < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "padding_interior[%d] is negative", d);
            od[d] = v[0][d] + v[1][d] + xd[d] + (xd[d] > 0 ? (xd[d] - 1) * v[2][d] : 0);
            if (od[d] < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "padding gives dimension %d a negative size", d);
        }
        if (pad) {
            pad->rank = xr;
            for (int32_t d = 0; d < xr; d++) {
                pad->in_dims[d] = xd[d];
                pad->out_dims[d] = od[d];
                pad->lo[d] = v[0][d];
                pad->interior[d] = v[2][d];
            }
        }
        return GN_OK;
    }
    default: {
        int32_t ir = p->rank[iv];
        const int64_t *id = gn__cuda_vdims(p, iv);
        gn__xla_gather_dims d;
        gn__xla_gather_geom geo;
        char why[GN__XLA_WHY];
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], v[0], GN__MAX_DIMS, &cnt, err));
        if (cnt != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "slice_sizes has %lld entries; the operand has rank %d", (long long)cnt, xr);
        if (!gn__xla_gather_attr(e->g, n->id, xr, ir, &d, why) || !gn__xla_gather_shape(&d, xr, xd, ir, id, v[0], &geo, why))
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "%s", why);
        if (geo.out_rank > GN__CU_MAX_DIMS || ir > GN__CU_MAX_DIMS)
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "output rank %d is over %d", geo.out_rank, GN__CU_MAX_DIMS);
        p->rank[o] = geo.out_rank;
        memcpy(od, geo.out_dims, sizeof(int64_t) * (size_t)geo.out_rank);
        if (gather) {
            memset(gather, 0, sizeof *gather);
            gather->out_rank = geo.out_rank;
            gather->op_rank = xr;
            gather->n_index = d.start_index_map.n;
            int64_t m = 1;
            for (int32_t k = ir - 1; k >= 0; k--) gather->idx_stride[k] = m, m *= id[k];
            gather->ivd_stride = d.index_vector_dim < ir ? gather->idx_stride[d.index_vector_dim] : 0;
            m = 1;
            for (int32_t k = xr - 1; k >= 0; k--) {
                gather->op_dims[k] = xd[k];
                gather->op_stride[k] = m;
                gather->slice[k] = v[0][k];
                m *= xd[k];
            }
            for (int32_t k = 0; k < geo.out_rank; k++) {
                gather->out_dims[k] = geo.out_dims[k];
                gather->out_map[k] = geo.out_map[k];
            }
            for (int32_t j = 0; j < d.start_index_map.n; j++) gather->start_map[j] = (int32_t)d.start_index_map.v[j];
        }
        return GN_OK;
    }
    }
}

gn_status gn__cuda_plan_node(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cu_backend *b = e->b;
    cnode *n = &e->nodes[k];
    if (n->op->kind == OP_NOOP) return GN_OK;
    if (n->op->kind == OP_HOST) return plan_host(e, p, n, err);
    if (n->op->kind == OP_ENGINE) return gn__cuda_plan_engine(e, p, k, err);
    uint32_t o = n->out, x = n->in[n->op->kind == OP_SPLIT && n->op->sub == 0 ? 1 : 0];
    int64_t *od = gn__cuda_vdims(p, o), *xd = gn__cuda_vdims(p, x);
    int32_t xr = p->rank[x];
    char s1[160], s2[160];
    p->root[o] = o;
    p->dtype[o] = p->dtype[x];
    p->rank[o] = xr;
    memcpy(od, xd, sizeof(int64_t) * GN__MAX_DIMS);
    bool need_float = true;
    switch (n->op->kind) {
    case OP_ALIAS:
        need_float = false;
        p->root[o] = p->root[x];
        break;
    case OP_RESHAPE: {
        need_float = false;
        int64_t s[GN__MAX_DIMS], cnt = 0, known = 1, neg = -1;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], s, GN__MAX_DIMS, &cnt, err));
        for (int64_t d = 0; d < cnt; d++) {
            if (s[d] == -1 && neg < 0) neg = d;
            else if (s[d] < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad shape value %lld", (long long)s[d]);
            else known *= s[d];
        }
        int64_t total = gn__cuda_numel_of(p, x);
        if (neg >= 0) s[neg] = known ? total / known : 0;
        int64_t prod = 1;
        for (int64_t d = 0; d < cnt; d++) prod *= s[d];
        if (prod != total) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "cannot reshape %s to %lld elements", shape_str(p, x, s1, sizeof s1), (long long)prod);
        p->rank[o] = (int32_t)cnt;
        memcpy(od, s, sizeof(int64_t) * (size_t)cnt);
        p->root[o] = p->root[x];
        break;
    }
    case OP_SQUEEZE: {
        need_float = false;
        uint8_t drop[GN__MAX_DIMS] = {0};
        for (uint32_t i = 0; i < n->n_squeeze; i++) {
            int64_t a = n->squeeze[i] < 0 ? n->squeeze[i] + xr : n->squeeze[i];
            if (a < 0 || a >= xr || xd[a] != 1) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "cannot squeeze dim %lld of %s", (long long)n->squeeze[i], shape_str(p, x, s1, sizeof s1));
            drop[a] = 1;
        }
        int32_t r = 0;
        for (int32_t d = 0; d < xr; d++)
            if (!(n->n_squeeze ? drop[d] : xd[d] == 1)) od[r++] = xd[d];
        p->rank[o] = r;
        p->root[o] = p->root[x];
        break;
    }
    case OP_EXPAND: {
        need_float = false;
        int64_t a, cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], &a, 1, &cnt, err));
        if (cnt != 1) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "axis must be one value");
        if (a < 0) a += xr + 1;
        if (a < 0 || a > xr || xr >= GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad axis");
        for (int32_t d = xr; d > a; d--) od[d] = xd[d - 1];
        od[a] = 1;
        p->rank[o] = xr + 1;
        p->root[o] = p->root[x];
        break;
    }
    case OP_UNARY:
    case OP_SOFTMAX:
        if (n->op->kind == OP_SOFTMAX && xr < 1) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "Softmax needs rank >= 1");
        break;
    case OP_CAST: p->dtype[o] = n->dst_dtype; break;
    case OP_BINARY: {
        uint32_t y = n->in[1];
        int64_t *yd = gn__cuda_vdims(p, y);
        int32_t yr = p->rank[y], r = xr > yr ? xr : yr;
        if (p->dtype[y] != p->dtype[x]) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "dtypes differ");
        for (int32_t d = 0; d < r; d++) {
            int64_t a = d - (r - xr) >= 0 ? xd[d - (r - xr)] : 1, c = d - (r - yr) >= 0 ? yd[d - (r - yr)] : 1;
            if (a != c && a != 1 && c != 1)
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "shapes %s and %s do not broadcast", shape_str(p, x, s1, sizeof s1), shape_str(p, y, s2, sizeof s2));
            od[d] = a == 1 ? c : a;
        }
        p->rank[o] = r;
        break;
    }
    case OP_BIAS_ADD: {
        uint32_t y = n->in[1];
        int32_t cd = n->nchw ? 1 : xr - 1;
        if (xr < 2 || p->rank[y] != 1 || gn__cuda_vdims(p, y)[0] != xd[cd] || p->dtype[y] != p->dtype[x])
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match input %s", shape_str(p, y, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
        break;
    }
    case OP_MATMUL:
    case OP_BMM: {
        uint32_t y = n->in[1];
        int64_t *yd = gn__cuda_vdims(p, y);
        int32_t yr = p->rank[y];
        if (p->dtype[y] != p->dtype[x]) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "dtypes differ");
        if (xr < 2 || yr < 2 || (n->op->kind == OP_MATMUL && (xr != 2 || yr != 2)))
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad operand ranks");
        int64_t m = n->ta ? xd[xr - 1] : xd[xr - 2], kx = n->ta ? xd[xr - 2] : xd[xr - 1];
        int64_t ky = n->tb ? yd[yr - 1] : yd[yr - 2], nn = n->tb ? yd[yr - 2] : yd[yr - 1];
        if (kx != ky) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "inner dims differ: %s and %s", shape_str(p, x, s1, sizeof s1), shape_str(p, y, s2, sizeof s2));
        int32_t r = xr > yr ? xr : yr;
        for (int32_t d = 0; d < r - 2; d++) {
            int64_t a = d - (r - xr) >= 0 ? xd[d - (r - xr)] : 1, c = d - (r - yr) >= 0 ? yd[d - (r - yr)] : 1;
            if (a != c && a != 1 && c != 1) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "batch dims do not broadcast");
            od[d] = a == 1 ? c : a;
        }
        od[r - 2] = m;
        od[r - 1] = nn;
        p->rank[o] = r;
        if (n->has_bias) {
            uint32_t bv = n->in[2];
            if (p->rank[bv] != 1 || gn__cuda_vdims(p, bv)[0] != nn || p->dtype[bv] != p->dtype[x])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match %lld columns", shape_str(p, bv, s1, sizeof s1), (long long)nn);
        }
        GN_TRY(check_side(e, p, n, o, err));
        if (n->is_q8) GN_TRY(plan_q8(e, p, k, err));
        if (!p->i8[k] && n->op->kind == OP_MATMUL && n->op->sub == 1 && gn__cuda_is_float(p->dtype[x]))
            p->lt[k] = plan_lt(e, n, p->dtype[x] == DT_F16, m, nn, kx);
        break;
    }
    case OP_CONV: {
        uint32_t w = n->in[1];
        int64_t *wd = gn__cuda_vdims(p, w);
        bool dw = n->op->sub == 1 || n->op->sub == 3;
        if (xr != 4 || p->rank[w] != 4 || p->dtype[w] != p->dtype[x])
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input %s and filter %s must be 4-D of one dtype", shape_str(p, x, s1, sizeof s1), shape_str(p, w, s2, sizeof s2));
        int hd = n->nchw ? 2 : 1, cdim = n->nchw ? 1 : 3;
        int64_t N = xd[0], C = xd[cdim], H = xd[hd], W = xd[hd + 1];
        int64_t kh = wd[0], kw = wd[1], ci = wd[2], co = dw ? wd[2] * wd[3] : wd[3];
        if (dw ? ci != C : (ci < 1 || C % ci != 0 || co % (C / ci) != 0))
            return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "filter %s does not match input %s", shape_str(p, w, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(gn__cuda_window(e, n, H, kh, n->dil[0], n->stride[0], &n->explicit_pad[0], &oh, &bh, &ah, err));
        GN_TRY(gn__cuda_window(e, n, W, kw, n->dil[1], n->stride[1], &n->explicit_pad[2], &ow, &bw, &aw, err));
        od[0] = N;
        od[cdim] = co;
        od[hd] = oh;
        od[hd + 1] = ow;
        if (n->has_bias) {
            uint32_t bv = n->in[2];
            if (p->rank[bv] != 1 || gn__cuda_vdims(p, bv)[0] != co || p->dtype[bv] != p->dtype[x])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bias %s does not match %lld channels", shape_str(p, bv, s1, sizeof s1), (long long)co);
        }
        for (uint32_t i = 2; n->epi == EPI_BN && i < 6; i++) {
            uint32_t v = n->in[i];
            if (p->rank[v] != 1 || gn__cuda_vdims(p, v)[0] != co || !gn__cuda_is_float(p->dtype[v]) || p->dtype[v] != p->dtype[n->in[2]])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "batch norm argument %u %s does not match %lld channels", i - 2, shape_str(p, v, s1, sizeof s1), (long long)co);
        }
        p->rank[o] = 4;
        GN_TRY(check_side(e, p, n, o, err));
        if (n->is_q8) GN_TRY(plan_q8(e, p, k, err));
        if (!gn__cuda_is_float(p->dtype[x]) || p->i8[k]) break;
        cconv *c = calloc(1, sizeof *c);
        if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->conv[k] = c;
        c->c_out = co;
        c->inner = n->nchw ? oh * ow : 1;
        /* cuDNN pads symmetrically: the rest is padded here first */
        int64_t ph = bh < ah ? bh : ah, pw = bw < aw ? bw : aw;
        int64_t Hp = H + (bh - ph) + (ah - ph), Wp = W + (bw - pw) + (aw - pw);
        size_t es = p->dtype[x] == DT_F16 ? 2 : 4;
        if (Hp != H || Wp != W) {
            c->prepad = true;
            memcpy(c->pp_in, xd, sizeof c->pp_in);
            memset(c->pp_before, 0, sizeof c->pp_before);
            c->pp_before[hd] = bh - ph;
            c->pp_before[hd + 1] = bw - pw;
            memcpy(c->pp_out, xd, sizeof c->pp_out);
            c->pp_out[hd] = Hp;
            c->pp_out[hd + 1] = Wp;
            p->scr_bytes[(size_t)k * N_SCR + SCR_PAD] = (size_t)(N * C * Hp * Wp) * es;
        }
        memcpy(c->w_dims, wd, sizeof c->w_dims);
        c->w_once = gn__cuda_host_tensor(e, p, w) != NULL;
        /* TensorFlow HWIO (depthwise: HWIM) to KCRS (NCHW) or KRSC (NHWC) */
        static const int32_t perm_kcrs[4] = {3, 2, 0, 1}, perm_krsc[4] = {3, 0, 1, 2}, perm_dw[4] = {2, 3, 0, 1};
        memcpy(c->w_perm, dw ? perm_dw : n->nchw ? perm_kcrs : perm_krsc, sizeof c->w_perm);
        p->scr_bytes[(size_t)k * N_SCR + SCR_W] = (size_t)(kh * kw * wd[2] * wd[3]) * es;
        cudnnDataType_t dt = p->dtype[x] == DT_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        cudnnTensorFormat_t fmt = n->nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
        int64_t groups = dw ? C : C / ci, fc = dw ? 1 : ci;
        if (N > INT32_MAX || C > INT32_MAX || Hp > INT32_MAX || Wp > INT32_MAX || co > INT32_MAX)
            return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dims too large for cuDNN");
        CK_DNN(b->p_cudnnCreateTensorDescriptor(&c->x));
        CK_DNN(b->p_cudnnCreateTensorDescriptor(&c->y));
        CK_DNN(b->p_cudnnCreateFilterDescriptor(&c->w));
        CK_DNN(b->p_cudnnCreateConvolutionDescriptor(&c->conv));
        CK_DNN(b->p_cudnnSetTensor4dDescriptor(c->x, fmt, dt, (int)N, (int)C, (int)Hp, (int)Wp));
        CK_DNN(b->p_cudnnSetFilter4dDescriptor(c->w, dt, fmt, (int)co, (int)fc, (int)kh, (int)kw));
        CK_DNN(b->p_cudnnSetConvolution2dDescriptor(c->conv, (int)ph, (int)pw, (int)n->stride[0], (int)n->stride[1],
                                                   (int)n->dil[0], (int)n->dil[1], CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
        CK_DNN(b->p_cudnnSetConvolutionGroupCount(c->conv, (int)groups));
        CK_DNN(b->p_cudnnSetConvolutionMathType(c->conv, dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
        int yn, yc, yh, yw;
        CK_DNN(b->p_cudnnGetConvolution2dForwardOutputDim(c->conv, c->x, c->w, &yn, &yc, &yh, &yw));
        if (yn != N || yc != co || yh != oh || yw != ow)
            return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "cuDNN output %dx%dx%dx%d, expected %lldx%lldx%lldx%lld", yn, yc, yh, yw,
                             (long long)N, (long long)co, (long long)oh, (long long)ow);
        CK_DNN(b->p_cudnnSetTensor4dDescriptor(c->y, fmt, dt, yn, yc, yh, yw));
        algo_key key;
        memset(&key, 0, sizeof key);
        key.dt = (int32_t)dt;
        key.fmt = (int32_t)fmt;
        key.n = (int32_t)N;
        key.c = (int32_t)C;
        key.h = (int32_t)Hp;
        key.w = (int32_t)Wp;
        key.k = (int32_t)co;
        key.fc = (int32_t)fc;
        key.r = (int32_t)kh;
        key.s = (int32_t)kw;
        key.pad_h = (int32_t)ph;
        key.pad_w = (int32_t)pw;
        key.str_h = (int32_t)n->stride[0];
        key.str_w = (int32_t)n->stride[1];
        key.dil_h = (int32_t)n->dil[0];
        key.dil_w = (int32_t)n->dil[1];
        key.groups = (int32_t)groups;
        key.math = (int32_t)(dt == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH);
        key.ws_limit = b->ws_limit;
        GN_TRY(choose_algo(e, n, c, &key, err));
        p->scr_bytes[(size_t)k * N_SCR + SCR_WS] = c->ws_bytes;
        break;
    }
    case OP_POOL: {
        if (xr != 4) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input %s must be 4-D", shape_str(p, x, s1, sizeof s1));
        int hd = n->nchw ? 2 : 1;
        int64_t oh, ow, bh, ah, bw, aw;
        GN_TRY(gn__cuda_window(e, n, xd[hd], n->ksize[0], 1, n->stride[0], NULL, &oh, &bh, &ah, err));
        GN_TRY(gn__cuda_window(e, n, xd[hd + 1], n->ksize[1], 1, n->stride[1], NULL, &ow, &bw, &aw, err));
        od[hd] = oh;
        od[hd + 1] = ow;
        break;
    }
    case OP_BN: {
        int32_t cd = n->nchw ? 1 : xr - 1;
        if (xr < 2) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input must have rank >= 2");
        for (uint32_t i = 1; i < 5; i++) {
            uint32_t v = n->in[i];
            if (p->rank[v] != 1 || gn__cuda_vdims(p, v)[0] != xd[cd] || !gn__cuda_is_float(p->dtype[v]) || p->dtype[v] != p->dtype[n->in[1]])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "argument %u %s does not match %lld channels", i, shape_str(p, v, s1, sizeof s1), (long long)xd[cd]);
        }
        break;
    }
    case OP_TRANSPOSE: {
        need_float = false;
        int64_t pm[GN__MAX_DIMS], cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], pm, GN__MAX_DIMS, &cnt, err));
        uint8_t seen[GN__MAX_DIMS] = {0};
        if (cnt != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "perm has %lld entries for rank %d", (long long)cnt, xr);
        for (int32_t d = 0; d < xr; d++) {
            if (pm[d] < 0 || pm[d] >= xr || seen[pm[d]]++) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad perm");
            od[d] = xd[pm[d]];
        }
        break;
    }
    case OP_CONCAT: {
        need_float = false;
        int64_t a, cnt = 0;
        if (n->op->sub) {   /* Pack: a new dim of n_in at axis */
            a = n->axis < 0 ? n->axis + xr + 1 : n->axis;
            if (a < 0 || a > xr || xr >= GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad axis %lld", (long long)n->axis);
            for (uint32_t i = 0; i < n->n_in; i++) {
                uint32_t v = n->in[i];
                bool ok = p->rank[v] == xr && p->dtype[v] == p->dtype[x];
                for (int32_t d = 0; ok && d < xr; d++) ok = gn__cuda_vdims(p, v)[d] == xd[d];
                if (!ok) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input %u %s does not match %s", i, shape_str(p, v, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
            }
            for (int32_t d = xr; d > a; d--) od[d] = xd[d - 1];
            od[a] = n->n_in;
            p->rank[o] = xr + 1;
            break;
        }
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[n->n_in - 1], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad axis");
        od[a] = 0;
        for (uint32_t i = 0; i + 1 < n->n_in; i++) {
            uint32_t v = n->in[i];
            bool ok = p->rank[v] == xr && p->dtype[v] == p->dtype[x];
            for (int32_t d = 0; ok && d < xr; d++) ok = d == a || gn__cuda_vdims(p, v)[d] == xd[d];
            if (!ok) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input %u %s does not match %s", i, shape_str(p, v, s1, sizeof s1), shape_str(p, x, s2, sizeof s2));
            od[a] += gn__cuda_vdims(p, v)[a];
        }
        break;
    }
    case OP_REDUCE: {
        int64_t ax[GN__MAX_DIMS], cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], ax, GN__MAX_DIMS, &cnt, err));
        uint8_t red[GN__MAX_DIMS] = {0};
        for (int64_t i = 0; i < cnt; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + xr : ax[i];
            if (a < 0 || a >= xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad reduction axis %lld", (long long)ax[i]);
            red[a] = 1;
        }
        int32_t r = 0;
        for (int32_t d = 0; d < xr; d++) {
            if (!red[d]) od[r++] = xd[d];
            else if (n->keep_dims) od[r++] = 1;
        }
        p->rank[o] = r;
        break;
    }
    case OP_PAD: {
        need_float = false;
        int64_t pd[2 * GN__MAX_DIMS], cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], pd, 2 * GN__MAX_DIMS, &cnt, err));
        if (cnt != 2 * xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "paddings must be [%d, 2]", xr);
        for (int32_t d = 0; d < xr; d++) {
            if (pd[2 * d] < 0 || pd[2 * d + 1] < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "negative paddings");
            int64_t lim = n->mirror == GN__CU_PAD_REFLECT ? xd[d] - 1 : xd[d];
            if (n->op->sub == 2 && (pd[2 * d] > lim || pd[2 * d + 1] > lim))
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "paddings of dim %d must be at most %lld (%s)", d, (long long)lim,
                                 n->mirror == GN__CU_PAD_REFLECT ? "REFLECT" : "SYMMETRIC");
            od[d] = xd[d] + pd[2 * d] + pd[2 * d + 1];
        }
        if (n->op->sub == 1) {
            const gn__tensor *cv = gn__cuda_host_tensor(e, p, n->in[2]);
            if (!cv || cv->dtype != p->dtype[x] || gn__tensor_numel(cv) != 1)
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "constant_values must be one value of the input's dtype");
        }
        break;
    }
    case OP_SLICE: {
        need_float = false;
        gn__cu_slice *sl = calloc(1, sizeof *sl);
        if (!sl) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->sl[k] = sl;
        if (n->op->sub) {
            GN_TRY(strided_slice(e, p, n, x, sl, od, &p->rank[o], err));
            break;
        }
        int64_t bg[GN__MAX_DIMS], sz[GN__MAX_DIMS], xs[GN__MAX_DIMS], nb = 0, ns = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], bg, GN__MAX_DIMS, &nb, err));
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], sz, GN__MAX_DIMS, &ns, err));
        if (nb != xr || ns != xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "begin and size must have %d values", xr);
        row_strides(xr, xd, xs);
        sl->rank = xr;
        for (int32_t d = 0; d < xr; d++) {
            if (sz[d] == -1) sz[d] = xd[d] - bg[d];
            if (bg[d] < 0 || sz[d] < 0 || bg[d] + sz[d] > xd[d])
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "slice [%lld, +%lld) outside dim %d of %s", (long long)bg[d],
                                 (long long)sz[d], d, shape_str(p, x, s1, sizeof s1));
            sl->dims[d] = sz[d];
            sl->step[d] = xs[d];
            if (sz[d] > 0) sl->start += bg[d] * xs[d];
            od[d] = sz[d];
        }
        break;
    }
    case OP_SPLIT: {
        need_float = false;
        int64_t a = n->axis, cnt = 1, num = n->n_out, sizes[4096];
        if (n->op->sub != 2) GN_TRY(gn__cuda_const_ints(e, p, n, n->in[n->op->sub ? 2 : 0], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad axis for input %s", shape_str(p, x, s1, sizeof s1));
        if (n->op->sub == 0) {
            if (xd[a] % num) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "dim %lld of %s does not split in %lld", (long long)a, shape_str(p, x, s1, sizeof s1), (long long)num);
            for (int64_t i = 0; i < num; i++) sizes[i] = xd[a] / num;
        } else if (n->op->sub == 1) {
            int64_t got = 0, sum = 0, neg = -1;
            GN_TRY(gn__cuda_const_ints(e, p, n, n->in[1], sizes, num, &got, err));
            if (got != num) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "size_splits has %lld values for num_split %lld", (long long)got, (long long)num);
            for (int64_t i = 0; i < num; i++) {
                if (sizes[i] == -1 && neg < 0) neg = i;
                else if (sizes[i] < 0) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad size_splits value %lld", (long long)sizes[i]);
                else sum += sizes[i];
            }
            if (neg >= 0) sizes[neg] = xd[a] - sum, sum = xd[a];
            if (sum != xd[a] || (neg >= 0 && sizes[neg] < 0))
                return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "size_splits do not add up to dim %lld of %s", (long long)a, shape_str(p, x, s1, sizeof s1));
        } else {
            if (xd[a] != num) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "dim %lld of %s is not num %lld", (long long)a, shape_str(p, x, s1, sizeof s1), (long long)num);
            for (int64_t i = 0; i < num; i++) sizes[i] = 1;
        }
        gn__cu_slice *sl = calloc((size_t)num, sizeof *sl);
        if (!sl) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->sl[k] = sl;
        int64_t xs[GN__MAX_DIMS], at = 0;
        row_strides(xr, xd, xs);
        for (int64_t i = 0; i < num; i++) {
            uint32_t v = o + (uint32_t)i;
            sl[i].rank = xr;
            memcpy(sl[i].dims, xd, sizeof(int64_t) * (size_t)xr);
            memcpy(sl[i].step, xs, sizeof(int64_t) * (size_t)xr);
            sl[i].dims[a] = sizes[i];
            sl[i].start = at * xs[a];
            at += sizes[i];
            p->root[v] = v;
            p->dtype[v] = p->dtype[x];
            int64_t *vd = gn__cuda_vdims(p, v);
            memcpy(vd, xd, sizeof(int64_t) * GN__MAX_DIMS);
            vd[a] = sizes[i];
            p->rank[v] = xr;
            if (n->op->sub == 2) {   /* Unpack: the axis goes */
                for (int32_t d = (int32_t)a; d + 1 < xr; d++) vd[d] = vd[d + 1];
                p->rank[v] = xr - 1;
            }
        }
        break;
    }
    case OP_EINSUM: {
        ceinsum *c = calloc(1, sizeof *c);
        if (!c) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        p->ein[k] = c;
        GN_TRY(plan_einsum(e, p, n, c, od, &p->rank[o], err));
        size_t es = gn_dtype_size(p->dtype[x]);
        if (c->ta) p->scr_bytes[(size_t)k * N_SCR + SCR_W] = (size_t)(c->batch * c->m * c->k) * es;
        if (c->tb) p->scr_bytes[(size_t)k * N_SCR + SCR_PAD] = (size_t)(c->batch * c->k * c->n) * es;
        if (c->tc) p->scr_bytes[(size_t)k * N_SCR + SCR_WS] = (size_t)(c->batch * c->m * c->n) * es;
        break;
    }
    case OP_GATHER: {
        need_float = false;
        uint32_t iv = n->in[1];
        int64_t a, cnt = 0;
        GN_TRY(gn__cuda_const_ints(e, p, n, n->in[2], &a, 1, &cnt, err));
        if (a < 0) a += xr;
        if (cnt != 1 || a < 0 || a >= xr) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "bad axis for params %s", shape_str(p, x, s1, sizeof s1));
        if (p->dtype[iv] != (n->idx64 ? DT_I64 : DT_I32)) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "indices are %s, not Tindices", gn_dtype_numpy_name(p->dtype[iv]));
        int32_t ir = p->rank[iv];
        if (xr - 1 + ir > GN__MAX_DIMS) return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "more than %d output dims", GN__MAX_DIMS);
        int32_t r = 0;
        int64_t tmp[GN__MAX_DIMS];
        for (int32_t d = 0; d < a; d++) tmp[r++] = xd[d];
        for (int32_t d = 0; d < ir; d++) tmp[r++] = gn__cuda_vdims(p, iv)[d];
        for (int32_t d = (int32_t)a + 1; d < xr; d++) tmp[r++] = xd[d];
        memcpy(od, tmp, sizeof(int64_t) * (size_t)r);
        p->rank[o] = r;
        break;
    }
    case OP_XLA:
        need_float = false;
        GN_TRY(gn__cuda_plan_xla(e, p, n, NULL, NULL, err));
        break;
    default: return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "unhandled op");
    }
    if (need_float && !gn__cuda_is_float(p->dtype[x]))
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dtype %s is not supported on the CUDA backend (float32 and float16 only)",
                         gn_dtype_numpy_name(p->dtype[x]));
    size_t es = gn_dtype_size(p->dtype[x]);
    if (!need_float && es != 1 && es != 2 && es != 4 && es != 8)
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "dtype %s is not supported on the CUDA backend", gn_dtype_numpy_name(p->dtype[x]));
    return GN_OK;
}
