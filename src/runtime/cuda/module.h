/* The CUDA backend as a module (private): libgrapnel_cuda.so, loaded with
 * dlopen the first time a session asks for backend "cuda"
 * (src/runtime/backend.c), so that libgrapnel itself needs no CUDA library
 * to load.
 *
 * The module holds src/runtime/cuda/ (backend.c and the kernels) and links
 * the CUDA runtime; it does not link libgrapnel. What it needs from the
 * library (graph IR, attributes, pruning, tensors, INT8 helpers, errors) it
 * calls through the table below, which the library hands to the module's
 * one exported function. So the same module serves the shared library and
 * a program linked with the static one, and every graph, tensor and error
 * record is handled by the library's own code.
 *
 * The module and the library must come from the same build: the entry
 * point refuses a table of another API number, size or library version. */
#ifndef GN_RUNTIME_CUDA_MODULE_H
#define GN_RUNTIME_CUDA_MODULE_H

#include "io/engine_store.h"
#include "grapnel/grapnel.h"
#include "grapnel/version.h"
#include "ops/kernel.h"
#include "runtime/backend.h"
#include "runtime/engine_cache.h"
#include "runtime/engine_op.h"
#include "runtime/prune.h"
#include "runtime/quant.h"

#define GN__CUDA_MODULE_FILE "libgrapnel_cuda.so"
#define GN__CUDA_MODULE_ENTRY "gn__cuda_module_open"
#define GN__CUDA_MODULE_API 1
/* the library's version, as gn_version() gives it (include/grapnel/version.h) */
#define GN__CUDA_MODULE_VERSION GN_VERSION_STRING
/* Overrides the search for the module: its path. */
#define GN__CUDA_MODULE_ENV "GRAPNEL_CUDA_MODULE"

/* The library functions the module calls, in one list (host table fields,
 * module forwarders). gn__fail and gn__err_prefix are variadic: the table
 * has gn__vfail, and the module formats the prefix itself. */
#define GN__CUDA_HOST_FNS(X)                                                                                           \
    X(gn__attr_get_bool) X(gn__attr_get_float) X(gn__attr_get_int) X(gn__attr_get_string) X(gn__attr_get_type)         \
    X(gn__buffer_new) X(gn__calib_find) X(gn__calib_free) X(gn__calib_parse) X(gn__engine_cache_find_engine)          \
    X(gn__engine_cache_find_key) X(gn__engine_cache_free) X(gn__engine_cache_insert) X(gn__engine_key_alloc)           \
    X(gn__engine_key_copy) X(gn__engine_key_free) X(gn__engine_seeds) X(gn__engine_op_read) X(gn__engine_shapes_free)  \
    X(gn__err_clear) X(gn__err_prefix) X(gn__vfail)                                                                    \
    X(gn__graph_find) X(gn__graph_find_function) X(gn__int8_node_info) X(gn__kctx_output) X(gn__kernel_for)            \
    X(gn__node_attr) X(gn__node_num_outputs) X(gn__plan_cache_add) X(gn__plan_cache_find) X(gn__plan_cache_free)       \
    X(gn__q8_scale) X(gn__q8_weights) X(gn__runtime_compile_start)                                                     \
    X(gn__sig_control_feed) X(gn__sig_feed_index) X(gn__tensor_from_proto) X(gn__tensor_numel) X(gn__tensor_release)   \
    X(gn_dtype_numpy_name) X(gn_dtype_size)

#define GN__CUDA_HOST_FIELD(name) __typeof__(&name) name;
typedef struct gn__cuda_host {
    uint32_t struct_size;      /* sizeof(gn__cuda_host) */
    uint32_t api_version;      /* GN__CUDA_MODULE_API */
    uint32_t backend_api;      /* GN__BACKEND_API_VERSION */
    const char *version;       /* GN__CUDA_MODULE_VERSION of the library */
    GN__CUDA_HOST_FNS(GN__CUDA_HOST_FIELD)
} gn__cuda_host;
#undef GN__CUDA_HOST_FIELD

/* The module's entry point (exported by name GN__CUDA_MODULE_ENTRY): opens
 * the backend as gn__backend_open does; GN_ERR_UNSUPPORTED when `host` is
 * not the table of the library this module was built with. */
typedef gn_status (*gn__cuda_module_open_fn)(const gn__cuda_host *host, int32_t num_threads, gn__backend *out,
                                             gn__err *err);

#endif
