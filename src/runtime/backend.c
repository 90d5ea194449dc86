/* Built-in backends by name (see backend.h).
 *
 * The CUDA backend is a module, libgrapnel_cuda.so (src/runtime/cuda/module.h),
 * opened with dlopen when a session first asks for "cuda", so the library
 * loads and runs on the CPU where no CUDA library is installed. It is looked
 * for, in order:
 *   1. $GRAPNEL_CUDA_MODULE, the module's path (an explicit choice: nothing else is tried);
 *   2. next to the object holding this code: libgrapnel.so's directory, or
 *      the program's for a program linked with libgrapnel.a;
 *   3. the system loader (LD_LIBRARY_PATH, the program's RUNPATH, ld.so.cache).
 * It is opened with RTLD_NODELETE: backends and engines keep pointers into it,
 * and the CUDA runtime is not made to unload. */
#define _GNU_SOURCE   /* dladdr1, RTLD_NODELETE */
#include "runtime/backend.h"

#ifdef GN_HAVE_CUDA
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/cuda/module.h"

#define GN__CUDA_HOST_INIT(name) .name = name,
static const gn__cuda_host k_cuda_host = {
    .struct_size = sizeof(gn__cuda_host),
    .api_version = GN__CUDA_MODULE_API,
    .backend_api = GN__BACKEND_API_VERSION,
    .version = GN__CUDA_MODULE_VERSION,
    GN__CUDA_HOST_FNS(GN__CUDA_HOST_INIT)
};
#undef GN__CUDA_HOST_INIT

/* The directory of the object this code is in (with its trailing '/'), or "". */
static void own_dir(char *out, size_t cap)
{
    out[0] = '\0';
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1((void *)&gn__backend_open, &info, (void **)&lm, RTLD_DL_LINKMAP)) return;
    char path[PATH_MAX];
    if (lm && lm->l_name && lm->l_name[0]) {   /* a shared object: its path as loaded, made canonical */
        if (!realpath(lm->l_name, path)) snprintf(path, sizeof path, "%s", lm->l_name);
    } else {   /* the program itself (static library) */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) return;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (!slash) return;
    slash[1] = '\0';
    snprintf(out, cap, "%s", path);
}

static gn_status cuda_open(int32_t num_threads, gn__backend *out, gn__err *err)
{
    const char *env = getenv(GN__CUDA_MODULE_ENV);
    char path[PATH_MAX + sizeof GN__CUDA_MODULE_FILE];
    void *h = NULL;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h)
            return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA backend: cannot load %s=%s: %s", GN__CUDA_MODULE_ENV,
                            env, dlerror());
    } else {
        char dir[PATH_MAX];
        own_dir(dir, sizeof dir);
        snprintf(path, sizeof path, "%s%s", dir, GN__CUDA_MODULE_FILE);
        if (dir[0] && access(path, F_OK) == 0) {
            /* the module is there: a failure here is the loader's (no CUDA runtime, most often) */
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
            if (!h) return gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA backend: cannot load %s: %s", path, dlerror());
        } else {
            h = dlopen(GN__CUDA_MODULE_FILE, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
            if (!h)
                return gn__fail(err, GN_ERR_UNSUPPORTED,
                                "no CUDA backend: the module %s is neither in %s nor found by the system loader (%s); "
                                "set %s to its path",
                                GN__CUDA_MODULE_FILE, dir[0] ? dir : "this library's directory", dlerror(),
                                GN__CUDA_MODULE_ENV);
            snprintf(path, sizeof path, "%s", GN__CUDA_MODULE_FILE);
        }
    }
    gn__cuda_module_open_fn open_fn;
    *(void **)&open_fn = dlsym(h, GN__CUDA_MODULE_ENTRY);
    gn_status s;
    if (!open_fn) {
        s = gn__fail(err, GN_ERR_UNSUPPORTED, "no CUDA backend: %s is not a grapnel CUDA module (no %s)", path,
                     GN__CUDA_MODULE_ENTRY);
    } else {
        s = open_fn(&k_cuda_host, num_threads, out, err);   /* the module keeps the pointer: a static table */
    }
    dlclose(h);   /* RTLD_NODELETE: stays mapped */
    return s;
}
#endif

gn_status gn__backend_open(const char *name, int32_t num_threads, gn__backend *out, gn__err *err)
{
    out->iface = NULL;
    out->self = NULL;
    if (!name || !*name || strcmp(name, "cpu") == 0) return gn__cpu_backend_open(num_threads, out, err);
#ifdef GN_HAVE_CUDA
    if (strcmp(name, "cuda") == 0) return cuda_open(num_threads, out, err);
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
