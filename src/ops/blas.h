/* The BLAS library the CPU kernels' gemms call (OpenBLAS), loaded with dlopen
 * by whoever runs kernels with it (a CPU backend), not linked: a process that
 * only loads, optimizes and saves graphs never starts BLAS's thread pool or
 * pays its start-up (about 11 ms per process). A kernel context without one
 * (constant folding, shape inference, or no BLAS library on the machine) runs
 * the fixed-order reference gemm (src/ops/kernels/nn_gemm.c). */
#ifndef GN_OPS_BLAS_H
#define GN_OPS_BLAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CBLAS's enum values (cblas.h): the layout and transpose arguments */
enum { GN__CBLAS_ROW_MAJOR = 101, GN__CBLAS_NO_TRANS = 111, GN__CBLAS_TRANS = 112 };

typedef struct gn__blas {
    void *lib;                    /* dlopen handle; NULL: none loaded */
    const char *name;             /* the library's file name, for reports */
    void (*sgemm)(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                  const float *b, int ldb, float beta, float *c, int ldc);
    void (*dgemm)(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                  const double *b, int ldb, double beta, double *c, int ldc);
    int (*num_threads)(void);     /* NULL: one */
} gn__blas;

/* Loads the first of libopenblas.so.0, libopenblas.so, libblas.so.3 that has
 * cblas_sgemm and cblas_dgemm. false (b zeroed) when none does: kernels then
 * use the reference gemm. Each call takes its own reference on the library;
 * the library stays loaded once opened (RTLD_NODELETE), so sessions after the
 * first find it started. */
bool gn__blas_open(gn__blas *b);
void gn__blas_close(gn__blas *b);

/* Threads the library computes a gemm with: 1 for NULL. */
int64_t gn__blas_threads(const gn__blas *b);

#endif
