/* Loading the BLAS library (src/ops/blas.h). */
#define _GNU_SOURCE   /* RTLD_NODELETE */
#include "ops/blas.h"

#include <dlfcn.h>
#include <string.h>

bool gn__blas_open(gn__blas *b)
{
    static const char *const names[] = {"libopenblas.so.0", "libopenblas.so", "libblas.so.3"};
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* NODELETE: once a session has started it, the library and its thread
         * pool stay for the process, as when it was linked; the next session
         * does not pay its start-up again */
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!lib) continue;
        void *s = dlsym(lib, "cblas_sgemm"), *d = dlsym(lib, "cblas_dgemm");
        if (!s || !d) {
            dlclose(lib);
            continue;
        }
        b->lib = lib;
        b->name = names[i];
        /* object pointer to function pointer: POSIX dlsym's documented use */
        memcpy(&b->sgemm, &s, sizeof s);
        memcpy(&b->dgemm, &d, sizeof d);
        void *t = dlsym(lib, "openblas_get_num_threads");
        if (t) memcpy(&b->num_threads, &t, sizeof t);
        return true;
    }
    return false;
}

void gn__blas_close(gn__blas *b)
{
    if (b->lib) dlclose(b->lib);
    memset(b, 0, sizeof *b);
}

int64_t gn__blas_threads(const gn__blas *b)
{
    if (!b || !b->num_threads) return 1;
    int n = b->num_threads();
    return n < 1 ? 1 : n;
}
