/* gpu_bench: latency and throughput of one graph on one backend, through
 * the public session API (each run copies the feed in and the fetch out).
 *
 *   gpu_bench MODEL.pb FEED SHAPE FETCH [--backend cuda|cpu] [--min-time S] [--max-iters N]
 *             [--cuda-graph 0|1]
 *
 * SHAPE is the feed's shape, comma-separated (its first dim is the batch);
 * the feed is float32, uniform in [-1, 1). Three warm-up runs (the first
 * makes the memory plan and picks the cuDNN algorithms), then runs until
 * --min-time seconds (default 2) or --max-iters runs (default 200).
 * --cuda-graph 1 sets the session option cuda_graph: the first run of a
 * shape set is captured into a CUDA Graph, later runs replay it (default 0).
 * Prints one line:
 *   backend B batch N runs R median_ms M p90_ms P items_per_s T first_run_ms F cpu_s C cuda_graph G
 * Exit status 1 with the library's message when a step fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"

static double now_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: gpu_bench MODEL.pb FEED SHAPE FETCH [--backend cuda|cpu] [--min-time S] [--max-iters N] "
                        "[--cuda-graph 0|1]\n");
        return 2;
    }
    const char *model = argv[1], *feed = argv[2], *shape = argv[3], *fetch = argv[4], *backend = "cuda";
    double min_time = 2.0;
    long max_iters = 200;
    int cuda_graph = 0;
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
        else if (!strcmp(argv[i], "--min-time")) min_time = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-iters")) max_iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--cuda-graph") && (!strcmp(argv[i + 1], "0") || !strcmp(argv[i + 1], "1")))
            cuda_graph = argv[i + 1][0] == '1';
        else {
            fprintf(stderr, "gpu_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (max_iters < 1) max_iters = 1;
    gn_tensor in;
    memset(&in, 0, sizeof in);
    in.dtype = 1;
    int64_t n = 1;
    for (const char *p = shape; *p && in.rank < GN_TENSOR_MAX_DIMS;) {
        char *end = NULL;
        in.dims[in.rank] = strtoll(p, &end, 10);
        if (end == p || in.dims[in.rank] < 0) {
            fprintf(stderr, "gpu_bench: bad shape %s\n", shape);
            return 2;
        }
        n *= in.dims[in.rank++];
        p = *end == ',' ? end + 1 : end;
    }
    float *x = malloc((size_t)n * sizeof *x + 1);
    if (!x) return 1;
    uint64_t r = 88172645463325252ull;
    for (int64_t i = 0; i < n; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        x[i] = (float)((r >> 40) * (1.0 / 8388608.0)) - 1.0f;
    }
    in.data = x;
    in.nbytes = (size_t)n * sizeof *x;
    gn_graph *g = NULL;
    if (gn_graph_load(model, NULL, &g) != GN_OK) {
        fprintf(stderr, "gpu_bench: %s\n", g ? gn_graph_errmsg(g) : "load failed");
        gn_graph_free(g);
        free(x);
        return 1;
    }
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = backend;
    o.cuda_graph = cuda_graph != 0;
    gn_session *s = NULL;
    int rc = 0;
    double *t = malloc((size_t)max_iters * sizeof *t);
    const char *fn[1] = {feed}, *xn[1] = {fetch};
    double first = 0;
    long runs = 0;
    double c0 = 0;
    if (!t || gn_session_new(g, &o, &s) != GN_OK) {
        fprintf(stderr, "gpu_bench: session: %s\n", s ? gn_session_errmsg(s) : "out of memory");
        rc = 1;
    }
    for (int w = 0; rc == 0 && w < 3; w++) {
        gn_tensor out;
        double t0 = now_s(CLOCK_MONOTONIC);
        if (gn_session_run(s, fn, &in, 1, xn, &out, 1) != GN_OK) {
            fprintf(stderr, "gpu_bench: run: %s\n", gn_session_errmsg(s));
            rc = 1;
            break;
        }
        if (w == 0) first = now_s(CLOCK_MONOTONIC) - t0;
        gn_tensor_free(&out);
    }
    if (rc == 0) {
        double start = now_s(CLOCK_MONOTONIC);
        c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
        while (runs < max_iters && (runs < 5 || now_s(CLOCK_MONOTONIC) - start < min_time)) {
            gn_tensor out;
            double t0 = now_s(CLOCK_MONOTONIC);
            if (gn_session_run(s, fn, &in, 1, xn, &out, 1) != GN_OK) {
                fprintf(stderr, "gpu_bench: run: %s\n", gn_session_errmsg(s));
                rc = 1;
                break;
            }
            t[runs++] = now_s(CLOCK_MONOTONIC) - t0;
            gn_tensor_free(&out);
        }
    }
    if (rc == 0 && runs > 0) {
        double cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        double med = t[runs / 2], p90 = t[(runs * 9) / 10 < runs ? (runs * 9) / 10 : runs - 1];
        printf("backend %s batch %lld runs %ld median_ms %.3f p90_ms %.3f items_per_s %.1f first_run_ms %.1f cpu_s %.2f "
               "cuda_graph %d\n",
               backend, (long long)(in.rank ? in.dims[0] : 1), runs, 1e3 * med, 1e3 * p90,
               (double)(in.rank ? in.dims[0] : 1) / med, 1e3 * first, cpu, cuda_graph);
    }
    free(t);
    gn_session_free(s);
    gn_graph_free(g);
    free(x);
    return rc;
}
