/* Built-in backends by name (see backend.h). */
#include "runtime/backend.h"
#ifdef GN_HAVE_CUDA
#include "runtime/cuda/cuda.h"
#endif

gn_status gn__backend_open(const char *name, int32_t num_threads, gn__backend *out, gn__err *err)
{
    out->iface = NULL;
    out->self = NULL;
    if (!name || !*name || strcmp(name, "cpu") == 0) return gn__cpu_backend_open(num_threads, out, err);
#ifdef GN_HAVE_CUDA
    if (strcmp(name, "cuda") == 0) return gn__cuda_backend_open(num_threads, out, err);
#else
    if (strcmp(name, "cuda") == 0) return gn__fail(err, GN_ERR_UNSUPPORTED, "the CUDA backend is not built in");
#endif
    return gn__fail(err, GN_ERR_NOT_FOUND, "no backend named '%s' (known: cpu, cuda)", name);
}

void gn__backend_close(gn__backend *b)
{
    if (b && b->iface && b->iface->free) b->iface->free(b->self);
    if (b) {
        b->iface = NULL;
        b->self = NULL;
    }
}
