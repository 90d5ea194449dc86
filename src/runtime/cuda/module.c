/* The module side of libgrapnel_cuda.so (module.h): the entry point, and
 * the library functions backend.c calls, each forwarded to the library's
 * own through the table it handed over.
 *
 * The table is kept in one pointer, written by the first open: a table is
 * immutable, and any other one a later open brings (a program holding both
 * the static and the shared library) is of the same build, checked below,
 * so its functions are the same code. */
#include <stdatomic.h>
#include <stdio.h>

#include "grapnel/grapnel.h"
#include "runtime/cuda/cuda.h"
#include "runtime/cuda/module.h"

#define MODULE_VERSION GN__CUDA_MODULE_VERSION

static const gn__cuda_host *_Atomic g_host;

static const gn__cuda_host *H(void) { return atomic_load_explicit(&g_host, memory_order_acquire); }

__attribute__((visibility("default"))) gn_status gn__cuda_module_open(const gn__cuda_host *host, int32_t num_threads,
                                                                      gn__backend *out, gn__err *err);

gn_status gn__cuda_module_open(const gn__cuda_host *host, int32_t num_threads, gn__backend *out, gn__err *err)
{
    /* nothing of the table is called before it is known to match */
    if (!host || host->struct_size != sizeof *host || host->api_version != GN__CUDA_MODULE_API ||
        host->backend_api != GN__BACKEND_API_VERSION || !host->version || strcmp(host->version, MODULE_VERSION) != 0) {
        if (err) {
            err->code = GN_ERR_UNSUPPORTED;
            snprintf(err->msg, sizeof err->msg,
                     "the CUDA backend module (grapnel %s, module API %d) does not match this library (grapnel %s, "
                     "module API %u)",
                     MODULE_VERSION, GN__CUDA_MODULE_API, host && host->version ? host->version : "?",
                     host ? (unsigned)host->api_version : 0u);
        }
        return GN_ERR_UNSUPPORTED;
    }
    const gn__cuda_host *none = NULL;
    atomic_compare_exchange_strong_explicit(&g_host, &none, host, memory_order_acq_rel, memory_order_acquire);
    return gn__cuda_backend_open(num_threads, out, err);
}

/* ---- the library's functions, through the table -------------------------------------------- */
gn_status gn__fail(gn__err *e, gn_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gn_status s = H()->gn__vfail(e, code, fmt, ap);
    va_end(ap);
    return s;
}

void gn__err_prefix(gn__err *e, const char *fmt, ...)
{
    char pre[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (n >= 0) H()->gn__err_prefix(e, "%s", pre);
}

gn_status gn__vfail(gn__err *e, gn_status code, const char *fmt, va_list ap)
{
    return H()->gn__vfail(e, code, fmt, ap);
}

void gn__err_clear(gn__err *e) { H()->gn__err_clear(e); }

bool gn__attr_get_bool(const gn_graph *g, gn_id id, const char *key, bool *v)
{
    return H()->gn__attr_get_bool(g, id, key, v);
}

bool gn__attr_get_float(const gn_graph *g, gn_id id, const char *key, float *v)
{
    return H()->gn__attr_get_float(g, id, key, v);
}

bool gn__attr_get_int(const gn_graph *g, gn_id id, const char *key, int64_t *v)
{
    return H()->gn__attr_get_int(g, id, key, v);
}

bool gn__attr_get_string(const gn_graph *g, gn_id id, const char *key, const char **s, size_t *n)
{
    return H()->gn__attr_get_string(g, id, key, s, n);
}

bool gn__attr_get_type(const gn_graph *g, gn_id id, const char *key, int *dtype)
{
    return H()->gn__attr_get_type(g, id, key, dtype);
}

gn__buffer *gn__buffer_new(size_t size) { return H()->gn__buffer_new(size); }

float gn__calib_find(const gn__calib_table *t, const char *node, uint32_t index)
{
    return H()->gn__calib_find(t, node, index);
}

void gn__calib_free(gn__calib_table *t) { H()->gn__calib_free(t); }

gn_status gn__calib_parse(const char *text, size_t len, gn__calib_table *out, gn__err *err)
{
    return H()->gn__calib_parse(text, len, out, err);
}

gn__engine_cache_entry *gn__engine_cache_find_engine(const gn__engine_cache *c, const void *engine)
{
    return H()->gn__engine_cache_find_engine(c, engine);
}

gn__engine_cache_entry *gn__engine_cache_find_key(const gn__engine_cache *c, const gn__engine_key *k)
{
    return H()->gn__engine_cache_find_key(c, k);
}

void gn__engine_cache_free(gn__engine_cache *c) { H()->gn__engine_cache_free(c); }

gn__engine_cache_entry *gn__engine_cache_insert(gn__engine_cache *c, uint32_t max, gn__engine_key *key, void *engine,
                                                uint64_t now, bool *evicted)
{
    return H()->gn__engine_cache_insert(c, max, key, engine, now, evicted);
}

bool gn__engine_key_alloc(gn__engine_key *k, uint32_t n_in, bool with_dtype)
{
    return H()->gn__engine_key_alloc(k, n_in, with_dtype);
}

bool gn__engine_key_copy(gn__engine_key *dst, const gn__engine_key *src) { return H()->gn__engine_key_copy(dst, src); }

void gn__engine_key_free(gn__engine_key *k) { H()->gn__engine_key_free(k); }

gn_status gn__engine_seeds(const gn_graph *top, const gn_graph *g, gn_id node, gn__engine_backend be, uint32_t max,
                           gn__engine_shapes **out, uint32_t *n_out, uint32_t *n_stale, gn__err *err)
{
    return H()->gn__engine_seeds(top, g, node, be, max, out, n_out, n_stale, err);
}

void gn__engine_op_read(const gn_graph *g, gn_id node, gn__engine_op_cfg *cfg) { H()->gn__engine_op_read(g, node, cfg); }

void gn__engine_shapes_free(gn__engine_shapes *s) { H()->gn__engine_shapes_free(s); }

gn_id gn__graph_find(const gn_graph *g, const char *name) { return H()->gn__graph_find(g, name); }

gn__function *gn__graph_find_function(const gn_graph *g, const char *name)
{
    return H()->gn__graph_find_function(g, name);
}

bool gn__int8_node_info(const gn_graph *body, gn_id id, gn__q8_node *out)
{
    return H()->gn__int8_node_info(body, id, out);
}

gn_status gn__kctx_output(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims, gn__tensor **t)
{
    return H()->gn__kctx_output(c, k, dtype, rank, dims, t);
}

gn__kernel_fn gn__kernel_for(const char *op) { return H()->gn__kernel_for(op); }

const Tensorflow__AttrValue *gn__node_attr(const gn_graph *g, gn_id id, const char *key)
{
    return H()->gn__node_attr(g, id, key);
}

int32_t gn__node_num_outputs(const gn_graph *g, gn_id id) { return H()->gn__node_num_outputs(g, id); }

void gn__plan_cache_add(gn__plan_cache *c, void *plan, gn__engine_free_fn free_plan, void *ctx)
{
    H()->gn__plan_cache_add(c, plan, free_plan, ctx);
}

void *gn__plan_cache_find(gn__plan_cache *c, gn__plan_match_fn match, void *ctx, const gn__tensor *in)
{
    return H()->gn__plan_cache_find(c, match, ctx, in);
}

void gn__plan_cache_free(gn__plan_cache *c, gn__engine_free_fn free_plan, void *ctx)
{
    H()->gn__plan_cache_free(c, free_plan, ctx);
}

float gn__q8_scale(float amax) { return H()->gn__q8_scale(amax); }

gn_status gn__q8_weights(const gn_graph *g, gn_id id, const gn__q8_node *q, const gn__tensor *w, int64_t pitch,
                         int8_t *wq, float *sw, int64_t *k_out, int64_t *n_out, gn__err *err)
{
    return H()->gn__q8_weights(g, id, q, w, pitch, wq, sw, k_out, n_out, err);
}

gn_status gn__runtime_compile_start(const gn_graph *g, const gn__engine_sig *sig, uint8_t **has_feed, uint8_t **keep,
                                    uint32_t *n_keep, gn__err *err)
{
    return H()->gn__runtime_compile_start(g, sig, has_feed, keep, n_keep, err);
}

int32_t gn__sig_control_feed(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, gn_id id)
{
    return H()->gn__sig_control_feed(g, sig, has_feed, id);
}

int32_t gn__sig_feed_index(const gn__engine_sig *sig, const uint8_t *has_feed, gn__edge e)
{
    return H()->gn__sig_feed_index(sig, has_feed, e);
}

gn_status gn__tensor_from_proto(const Tensorflow__TensorProto *p, gn__tensor *out, gn__err *err)
{
    return H()->gn__tensor_from_proto(p, out, err);
}

int64_t gn__tensor_numel(const gn__tensor *t) { return H()->gn__tensor_numel(t); }

void gn__tensor_release(gn__tensor *t) { H()->gn__tensor_release(t); }

const char *gn_dtype_numpy_name(int32_t dtype) { return H()->gn_dtype_numpy_name(dtype); }

size_t gn_dtype_size(int32_t dtype) { return H()->gn_dtype_size(dtype); }
