/* bench_conv3d: the CPU kernels of 3-D convolution (src/ops/kernels/nn_3d.c).
 *
 *   bench_conv3d [REPS]            (default 5)
 *
 * Runs, REPS times each, a float32 Conv3D of input [1,16,32,32,16] with filter
 * [3,3,3,16,32] (stride 1, SAME: 453 MFLOP), and the Conv3DBackpropInputV2 of
 * the same geometry (the transposed convolution back to [1,16,32,32,16]), on
 * the BLAS path and on the reference path (GN__K_REFERENCE: fixed-order
 * loops), calling the kernels directly on a one-node graph. Prints one line per
 * kernel and path with the best wall and process-CPU milliseconds of one run and
 * GFLOP/s from the best wall time:
 *   op=Conv3D path=blas wall_ms=.. cpu_ms=.. gflops=..
 * Exits 1 with the kernel's message on a failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/kernel.h"

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static gn_graph *graph(const char *op, int n_in, const char *const *dts)
{
    char buf[2048];
    size_t pos = 0;
    for (int i = 0; i < n_in; i++)
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos,
                                "node { name: 'in%d' op: 'Placeholder' attr { key: 'dtype' value { type: %s } } }\n", i,
                                dts[i]);
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "node { name: 'n' op: '%s'", op);
    for (int i = 0; i < n_in; i++) pos += (size_t)snprintf(buf + pos, sizeof buf - pos, " input: 'in%d'", i);
    snprintf(buf + pos, sizeof buf - pos,
             " attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'padding' value { s: 'SAME' } }"
             " attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 i: 1 } } } }\n");
    gn_load_options o;
    gn_load_options_init(&o);
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(buf, strlen(buf), "bench.pbtxt", &o, &g) != GN_OK) {
        fprintf(stderr, "bench_conv3d: %s\n", gn_graph_errmsg(g));
        exit(1);
    }
    return g;
}

static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, void *data, size_t esz)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= (t.dims[i] = dims[i]);
    t.data = data;
    t.nbytes = (size_t)n * esz;
    return t;
}

static void bench(const char *op, gn_graph *g, const gn__tensor *in, uint32_t n_in, double flop, int reps)
{
    for (int path = 0; path < 2; path++) {
        double best_wall = 1e300, best_cpu = 1e300;
        for (int r = 0; r < reps; r++) {
            gn__tensor out;
            gn__err err;
            gn__kctx c;
            memset(&c, 0, sizeof c);
            memset(&out, 0, sizeof out);
            memset(&err, 0, sizeof err);
            c.g = g;
            c.node = gn__graph_find(g, "n");
            c.in = in;
            c.n_in = n_in;
            c.out = &out;
            c.n_out = 1;
            c.flags = path ? GN__K_REFERENCE : 0;
            c.err = &err;
            double w0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
            gn_status s = gn__kernel_for(op)(&c);
            double w1 = clock_ms(CLOCK_MONOTONIC), c1 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
            if (s != GN_OK) {
                fprintf(stderr, "bench_conv3d: %s\n", err.msg);
                exit(1);
            }
            gn__tensor_release(&out);
            if (w1 - w0 < best_wall) best_wall = w1 - w0;
            if (c1 - c0 < best_cpu) best_cpu = c1 - c0;
            if (path && r >= 1) break;   /* the reference path is slow: two runs */
        }
        printf("op=%s path=%s wall_ms=%.1f cpu_ms=%.1f gflops=%.2f\n", op, path ? "reference" : "blas", best_wall,
               best_cpu, flop / best_wall / 1e6);
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    const int64_t dx[5] = {1, 16, 32, 32, 16}, dw[5] = {3, 3, 3, 16, 32}, dy[5] = {1, 16, 32, 32, 32};
    const int64_t nx = 16 * 32 * 32 * 16, nw = 27 * 16 * 32, ny = 16 * 32 * 32 * 32;
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), *g = malloc((size_t)ny * sizeof *g);
    if (!x || !w || !g) return 1;
    uint64_t s = 42;
    for (int64_t i = 0; i < nx; i++) x[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
    for (int64_t i = 0; i < nw; i++) w[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
    for (int64_t i = 0; i < ny; i++) g[i] = (float)((s = s * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
    const double flop = 2.0 * (double)ny * 27 * 16;
    const char *const f2[] = {"DT_FLOAT", "DT_FLOAT"}, *const f3[] = {"DT_INT32", "DT_FLOAT", "DT_FLOAT"};
    gn_graph *gc = graph("Conv3D", 2, f2);
    gn__tensor cin[2] = {tens(TENSORFLOW__DATA_TYPE__DT_FLOAT, 5, dx, x, 4), tens(TENSORFLOW__DATA_TYPE__DT_FLOAT, 5, dw, w, 4)};
    bench("Conv3D", gc, cin, 2, flop, reps);
    gn_graph *gb = graph("Conv3DBackpropInputV2", 3, f3);
    int32_t sizes[5] = {1, 16, 32, 32, 16};
    const int64_t d5[1] = {5};
    gn__tensor bin[3] = {tens(TENSORFLOW__DATA_TYPE__DT_INT32, 1, d5, sizes, 4),
                         tens(TENSORFLOW__DATA_TYPE__DT_FLOAT, 5, dw, w, 4),
                         tens(TENSORFLOW__DATA_TYPE__DT_FLOAT, 5, dy, g, 4)};
    bench("Conv3DBackpropInputV2", gb, bin, 3, flop, reps);
    gn_graph_free(gc);
    gn_graph_free(gb);
    free(x);
    free(w);
    free(g);
    return 0;
}
