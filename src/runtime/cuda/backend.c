/* The CUDA backend: the backend interface (runtime/backend.h) over cuDNN,
 * cuBLAS and our kernels (cuda.h). Its stages are split over the files
 * backend_impl.h lists.
 *
 * cuBLAS and cuDNN are loaded with dlopen when the backend opens, so the
 * library loads where they are missing: the ops that need them are then
 * unsupported, with the loader's message. float32 GEMMs and convolutions use
 * no TF32 (CUBLAS_COMPUTE_32F, CUDNN_FMA_MATH), so float32 results match the
 * CPU backend within 1e-5 relative L2. */
#include "runtime/cuda/backend_impl.h"

/* ---- the interface ----------------------------------------------------------- */
static bool cu_supports(void *self, const gn_graph *g, gn_id node, char *why, size_t why_len)
{
    if (why_len) why[0] = 0;
    const char *op = gn__node_op(g, node);
    if (!strcmp(op, "Const") || !strcmp(op, "HostConst") || !strcmp(op, "Placeholder") ||
        !strcmp(op, "PlaceholderV2"))
        return true;
    if (gn__cuda_is_host_op(op) && gn__cuda_host_known(g, node, 0)) return true;
    return gn__cuda_parse_node(self, g, node, NULL, NULL, why, why_len);
}

void gn__cuda_engine_free(void *self, gn__engine *e)
{
    (void)self;
    if (!e) return;
    gn__plan_cache_free(&e->plans, gn__cuda_plan_drop, e);
    for (uint32_t v = 0; v < e->n_vals; v++) gn__tensor_release(&e->vals[v].host);
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        free(e->nodes[k].in);
        free(e->nodes[k].fuse);
        free(e->nodes[k].ln);
        gn__cuda_cengop_free(e->b, e->nodes[k].eng);
    }
    if (e->weights) cudaFree(e->weights);
    free(e->vals);
    free(e->nodes);
    free(e->fetch_val);
    free(e);
}

static void plan_capture(gn__engine *e, cplan *p)
{
    cu_backend *b = e->b;
    gn__err cerr;
    memset(&cerr, 0, sizeof cerr);
    char why[sizeof e->stats.graph_why] = "";
    cudaGraph_t graph = NULL;
    cudaError_t ce = cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeThreadLocal);
    if (ce != cudaSuccess) {
        snprintf(why, sizeof why, "cudaStreamBeginCapture: %s", cudaGetErrorString(ce));
    } else {
        gn_status s = gn__cuda_run_all(e, p, &cerr);
        cudaError_t ee = cudaStreamEndCapture(b->stream, &graph);
        if (s != GN_OK)
            snprintf(why, sizeof why, "%.*s", (int)sizeof why - 1, cerr.msg);
        else if (ee != cudaSuccess)
            snprintf(why, sizeof why, "cudaStreamEndCapture: %s", cudaGetErrorString(ee));
        else if (!graph)
            snprintf(why, sizeof why, "cudaStreamEndCapture returned no graph");
        else if ((ce = cudaGraphInstantiate(&p->graph_exec, graph, 0)) != cudaSuccess) {
            p->graph_exec = NULL;
            snprintf(why, sizeof why, "cudaGraphInstantiate: %s", cudaGetErrorString(ce));
        }
    }
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();   /* capture errors are not sticky: clear them before running normally */
    if (!why[0]) {
        p->graph_state = 1;
        e->stats.graph_captures++;
        e->stats.graph_why[0] = '\0';
    } else {
        p->graph_state = -1;
        e->stats.graph_ineligible++;
        snprintf(e->stats.graph_why, sizeof e->stats.graph_why, "%s", why);
    }
}

static gn_status cu_execute(void *self, gn__engine *e, const gn__tensor *in, gn__tensor *out, uint64_t seed,
                            gn__err *err)
{
    cu_backend *b = self;
    (void)seed;
    gn__engine_stats *st = &e->stats;
    st->runs++;
    st->arena_allocs = st->dynamic_allocs = st->plan_misses = st->nodes_run = 0;
    for (uint32_t i = 0; i < e->n_feeds; i++)
        if (!in[i].dtype || in[i].dead || (in[i].nbytes && !in[i].data) || !gn_dtype_size(in[i].dtype))
            return gn__fail(err, GN_ERR_ARG, "feed %u: a %s tensor cannot be fed to the CUDA backend", i,
                            in[i].dtype ? gn_dtype_numpy_name(in[i].dtype) : "missing");
    cplan *p = NULL;
    GN_TRY(gn__cuda_plan_for(e, in, &p, err));
    st->n_plans = e->plans.n;
    st->planned = true;
    GN_TRY(gn__cuda_engines_account(e, p, err));
    st->arena_bytes = p->arena_bytes;
    st->planned_bytes = p->planned_bytes;
    gn_status s = GN_OK;
    cudaError_t ce;
    for (uint32_t i = 0; s == GN_OK && i < e->n_feeds; i++) {
        if (!in[i].nbytes) continue;
        ce = cudaMemcpyAsync(gn__cuda_vptr(e, p, i), in[i].data, in[i].nbytes, cudaMemcpyHostToDevice, b->stream);
        if (ce != cudaSuccess) s = gn__cuda_fail(err, "cudaMemcpyAsync (feed)", ce);
        st->arena_allocs++;
    }
    st->graph_replayed = false;
    if (s == GN_OK && b->cuda_graph && p->graph_state == 0) plan_capture(e, p);
    if (s == GN_OK && p->graph_state == 1) {
        ce = cudaGraphLaunch(p->graph_exec, b->stream);
        if (ce != cudaSuccess) s = gn__cuda_fail(err, "cudaGraphLaunch", ce);
        st->graph_replayed = s == GN_OK;
    } else if (s == GN_OK) {
        s = gn__cuda_run_all(e, p, err);
    }
    for (uint32_t k = 0; s == GN_OK && k < e->n_nodes; k++) {
        const cnode *n = &e->nodes[k];
        if (n->op->kind == OP_NOOP || n->op->kind == OP_HOST || gn__cuda_skipped(p, n)) continue;
        if (p->root[n->out] == n->out) {   /* launched: not an alias */
            st->nodes_run++;
            st->arena_allocs += n->n_out;
        }
    }
    for (uint32_t f = 0; s == GN_OK && f < e->n_fetches; f++) {
        uint32_t v = e->fetch_val[f];
        gn__tensor *t = &out[f];
        size_t bytes = (size_t)gn__cuda_numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        gn__buffer *buf = gn__buffer_new(bytes ? bytes : 1);
        if (!buf) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        t->dtype = p->dtype[v];
        t->rank = p->rank[v];
        memcpy(t->dims, gn__cuda_vdims(p, v), sizeof t->dims);
        t->buf = buf;
        t->data = buf->data;
        t->nbytes = bytes;
        if (!bytes) continue;
        ce = cudaMemcpyAsync(t->data, gn__cuda_vptr(e, p, v), bytes, cudaMemcpyDeviceToHost, b->stream);
        if (ce != cudaSuccess) s = gn__cuda_fail(err, "cudaMemcpyAsync (fetch)", ce);
    }
    ce = cudaStreamSynchronize(b->stream);
    if (s == GN_OK && ce != cudaSuccess) s = gn__cuda_fail(err, "cudaStreamSynchronize", ce);
    if (s != GN_OK)
        for (uint32_t f = 0; f < e->n_fetches; f++) gn__tensor_release(&out[f]);
    return s;
}

static void cu_engine_stats(void *self, const gn__engine *e, gn__engine_stats *out)
{
    (void)self;
    *out = e->stats;
}

static void cu_free(void *self)
{
    cu_backend *b = self;
    if (!b) return;
    if (b->stream) cudaStreamSynchronize(b->stream);
    if (b->lt) b->p_cublasLtDestroy(b->lt);
    if (b->lt_lib) dlclose(b->lt_lib);
    if (b->blas) b->p_cublasDestroy_v2(b->blas);
    if (b->blas_ws) cudaFree(b->blas_ws);
    free(b->algos);
    if (b->dnn) b->p_cudnnDestroy(b->dnn);
    if (b->blas_lib) dlclose(b->blas_lib);
    if (b->dnn_lib) dlclose(b->dnn_lib);
    if (b->stream) cudaStreamDestroy(b->stream);
    free(b);
}

static gn_status cu_configure(void *self, const gn__backend_config *cfg, gn__err *err)
{
    cu_backend *b = self;
    if (!cfg) return gn__fail(err, GN_ERR_INTERNAL, "cuda backend: no configuration");
    b->cuda_graph = cfg->cuda_graph;
    b->ws_limit = cfg->workspace_limit_bytes ? cfg->workspace_limit_bytes : WORKSPACE_LIMIT;
    return GN_OK;
}

static const gn__backend_iface cu_iface = {
    .api_version = GN__BACKEND_API_VERSION,
    .name = "cuda",
    .supports = cu_supports,
    .compile = gn__cuda_compile,
    .execute = cu_execute,
    .engine_free = gn__cuda_engine_free,
    .free = cu_free,
    .engine_stats = cu_engine_stats,
    .configure = cu_configure,
};

/* dlopen the first of names that loads; why gets the loader's message otherwise. */
static void *open_lib(const char *const *names, char *why, size_t why_len)
{
    for (const char *const *nm = names; *nm; nm++) {
        void *h = dlopen(*nm, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        const char *d = dlerror();
        snprintf(why, why_len, "dlopen %s: %s", *nm, d ? d : "failed");
    }
    return NULL;
}

#define LOAD(name)                                                                                            \
    if (ok) {                                                                                                 \
        void *sym_ = dlsym(lib, #name);                                                                       \
        if (sym_) memcpy(&b->p_##name, &sym_, sizeof sym_);                                                   \
        else {                                                                                                \
            snprintf(why, why_len, "%s has no symbol %s", libname, #name);                                    \
            ok = false;                                                                                       \
        }                                                                                                     \
    }

static bool load_blas(cu_backend *b)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so", NULL};
    char *why = b->blas_why;
    size_t why_len = sizeof b->blas_why;
    const char *libname = "libcublas";
    void *lib = b->blas_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUBLAS_FNS(LOAD)
    if (!ok) return false;
    cublasStatus_t st = b->p_cublasCreate_v2(&b->blas);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasCreate: %s", b->p_cublasGetStatusString(st));
        b->blas = NULL;
        return false;
    }
    if ((st = b->p_cublasSetStream_v2(b->blas, b->stream)) != CUBLAS_STATUS_SUCCESS ||
        (st = b->p_cublasSetMathMode(b->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasSetStream/SetMathMode: %s", b->p_cublasGetStatusString(st));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        return false;
    }
    /* a workspace of our own (after SetStream, which resets it): cuBLAS then
     * allocates nothing while a run is captured into a CUDA Graph */
    cudaError_t ce = cudaMalloc(&b->blas_ws, BLAS_WORKSPACE);
    if (ce != cudaSuccess) {
        (void)cudaGetLastError();
        b->blas_ws = NULL;
        snprintf(why, why_len, "cudaMalloc of cuBLAS's %zu-byte workspace: %s", BLAS_WORKSPACE, cudaGetErrorString(ce));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        return false;
    }
    if ((st = b->p_cublasSetWorkspace_v2(b->blas, b->blas_ws, BLAS_WORKSPACE)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasSetWorkspace: %s", b->p_cublasGetStatusString(st));
        b->p_cublasDestroy_v2(b->blas);
        b->blas = NULL;
        cudaFree(b->blas_ws);
        b->blas_ws = NULL;
        return false;
    }
    return true;
}

/* cuBLASLt (after cuBLAS, whose workspace it shares: both run on the one stream) */
static bool load_lt(cu_backend *b)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so", NULL};
    char *why = b->lt_why;
    size_t why_len = sizeof b->lt_why;
    const char *libname = "libcublasLt";
    if (!b->blas) {
        snprintf(why, why_len, "needs cuBLAS: %.200s", b->blas_why);
        return false;
    }
    void *lib = b->lt_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUBLASLT_FNS(LOAD)
    if (!ok) return false;
    cublasStatus_t st = b->p_cublasLtCreate(&b->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_len, "cublasLtCreate: %s", b->p_cublasLtGetStatusString(st));
        b->lt = NULL;
        return false;
    }
    return true;
}

static bool load_dnn(cu_backend *b)
{
    static const char *const names[] = {"libcudnn.so.9", "libcudnn.so", NULL};
    char *why = b->dnn_why;
    size_t why_len = sizeof b->dnn_why;
    const char *libname = "libcudnn";
    void *lib = b->dnn_lib = open_lib(names, why, why_len);
    bool ok = lib != NULL;
    CUDNN_FNS(LOAD)
    if (!ok) return false;
    cudnnStatus_t st = b->p_cudnnCreate(&b->dnn);
    if (st != CUDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "cudnnCreate: %s", b->p_cudnnGetErrorString(st));
        b->dnn = NULL;
        return false;
    }
    if ((st = b->p_cudnnSetStream(b->dnn, b->stream)) != CUDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "cudnnSetStream: %s", b->p_cudnnGetErrorString(st));
        b->p_cudnnDestroy(b->dnn);
        b->dnn = NULL;
        return false;
    }
    return true;
}

gn_status gn__cuda_backend_open(int32_t num_threads, gn__backend *out, gn__err *err)
{
    (void)num_threads;
    int count = 0;
    cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce != cudaSuccess)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(ce));
    if (count < 1) return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA device: cudaGetDeviceCount found none");
    cu_backend *b = calloc(1, sizeof *b);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    b->ws_limit = WORKSPACE_LIMIT;
    if ((ce = cudaSetDevice(b->device)) != cudaSuccess ||
        (ce = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        b->stream = NULL;
        cu_free(b);
        return gn__cuda_fail(err, "cudaSetDevice/cudaStreamCreate", ce);
    }
    if (!load_blas(b) && b->blas_lib) {
        dlclose(b->blas_lib);
        b->blas_lib = NULL;
    }
    if (!load_lt(b) && b->lt_lib) {
        dlclose(b->lt_lib);
        b->lt_lib = NULL;
    }
    if (!load_dnn(b) && b->dnn_lib) {
        dlclose(b->dnn_lib);
        b->dnn_lib = NULL;
    }
    out->iface = &cu_iface;
    out->self = b;
    return GN_OK;
}
