/* bench_segment: times engine conversion (gn_segment) on one GraphDef.
 *
 *   bench_segment [--dry-run] FILE.pb [REPEAT]
 *   bench_segment --run FILE.pb PARAMS FEED=IN.npy ... FETCH ... [--calibrate] [--runs N]
 *
 * --run: segments FILE with PARAMS (ConversionParams text; INT8 with
 * use_calibration is calibrated on the feeds first), then runs the original
 * and the segmented graph N times (default 10) on the feeds in fresh
 * sessions and prints, per graph, the first run (compile, memory plan and,
 * segmented, the engine builds) and the median of the others (cache hits),
 * wall and CPU milliseconds:
 *   model=F params=P engines=E calibrate_ms=.. native_first_ms=.. native_run_ms=..
 *   engine_first_ms=.. engine_hit_ms=.. (cpu: ..)
 *
 * Loads FILE (not timed), then runs gn_segment with the default
 * ConversionParams on the CPU backend, preserving the graph's sinks (nodes
 * nothing reads) as a caller would its fetches, REPEAT times on fresh copies
 * (default 3), and prints the fastest:
 *   file=F nodes=N engines=E outside=O segment_ms=.. ns_per_node=.. cpu_ms=.. cpu_ns_per_node=..
 * (O: the nodes left outside every engine, Consts and sinks included).
 * --dry-run: the segments are decided (candidates, growth with its cycle
 * search, the size rules) but no engine is built (O is then 0).
 * Exits 1 with grapnel's message when a step fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static double cpu_ms(void) { return (double)clock() * 1e3 / CLOCKS_PER_SEC; }

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXIO 8

/* N runs of g in one session: first run wall/cpu, median of the others. */
static int time_runs(const gn_graph *g, const char **fn, const gn_tensor *ft, size_t nf, const char **xn, size_t nx,
                     int runs, double *first, double *first_cpu, double *med, double *med_cpu, uint64_t *hits)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) {
        fprintf(stderr, "bench_segment: %s\n", s ? gn_session_errmsg(s) : "out of memory");
        gn_session_free(s);
        return 1;
    }
    double w[256], c[256];
    if (runs > 256) runs = 256;
    for (int r = 0; r < runs; r++) {
        gn_tensor out[MAXIO];
        memset(out, 0, sizeof out);
        double t0 = now_ms(), c0 = cpu_ms();
        if (gn_session_run(s, fn, ft, nf, xn, out, nx) != GN_OK) {
            fprintf(stderr, "bench_segment: %s\n", gn_session_errmsg(s));
            gn_session_free(s);
            return 1;
        }
        w[r] = now_ms() - t0;
        c[r] = cpu_ms() - c0;
        for (size_t k = 0; k < nx; k++) gn_tensor_free(&out[k]);
    }
    *first = w[0];
    *first_cpu = c[0];
    qsort(w + 1, (size_t)(runs - 1), sizeof *w, cmp_dbl);
    qsort(c + 1, (size_t)(runs - 1), sizeof *c, cmp_dbl);
    *med = runs > 1 ? w[1 + (runs - 1) / 2] : w[0];
    *med_cpu = runs > 1 ? c[1 + (runs - 1) / 2] : c[0];
    (void)hits;
    gn_session_free(s);
    return 0;
}

static int run_mode(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_segment --run FILE.pb PARAMS FEED=IN.npy ... FETCH ... [--calibrate] [--runs N]\n");
        return 2;
    }
    const char *file = argv[2], *params = argv[3];
    const char *fn[MAXIO], *xn[MAXIO], *keep[2 * MAXIO];
    char *fnbuf[MAXIO];
    gn_tensor ft[MAXIO];
    size_t nf = 0, nx = 0;
    int runs = 10, cal = 0;
    char err[512];
    for (int i = 4; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!strcmp(argv[i], "--calibrate")) cal = 1;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (eq && nf < MAXIO) {
            fnbuf[nf] = strndup(argv[i], (size_t)(eq - argv[i]));
            fn[nf] = fnbuf[nf];
            if (gn_npy_read(eq + 1, &ft[nf], err, sizeof err) != GN_OK) {
                fprintf(stderr, "bench_segment: %s\n", err);
                return 1;
            }
            nf++;
        } else if (nx < MAXIO) xn[nx++] = argv[i];
    }
    if (runs < 2) runs = 2;
    gn_graph *g0 = NULL, *g = NULL;
    if (gn_graph_load(file, NULL, &g0) != GN_OK || gn_graph_clone(g0, &g) != GN_OK) {
        fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g0));
        return 1;
    }
    size_t nk = 0;
    for (size_t i = 0; i < nf; i++) keep[nk++] = fn[i];
    for (size_t i = 0; i < nx; i++) keep[nk++] = xn[i];
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    if (gn_conversion_params_parse(&p, params, err, sizeof err) != GN_OK) {
        fprintf(stderr, "bench_segment: %s\n", err);
        return 2;
    }
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.preserve = keep;
    sp.n_preserve = nk;
    size_t engines = 0;
    if (gn_segment(g, &p, &sp, NULL, &engines) != GN_OK) {
        fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g));
        return 1;
    }
    double cal_ms = 0;
    if (cal && engines && p.precision_mode == GN_PRECISION_INT8 && p.use_calibration) {
        double t0 = now_ms();
        if (gn_calibrate(g, fn, nf, ft, 1, NULL) != GN_OK) {
            fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g));
            return 1;
        }
        cal_ms = now_ms() - t0;
    }
    double nfst, nfstc, nmed, nmedc, efst, efstc, emed, emedc;
    if (time_runs(g0, fn, ft, nf, xn, nx, runs, &nfst, &nfstc, &nmed, &nmedc, NULL) ||
        time_runs(g, fn, ft, nf, xn, nx, runs, &efst, &efstc, &emed, &emedc, NULL))
        return 1;
    const char *base = strrchr(file, '/');
    printf("model=%s params=%s engines=%zu calibrate_ms=%.1f native_first_ms=%.2f native_run_ms=%.2f "
           "engine_first_ms=%.2f engine_hit_ms=%.2f (cpu: native %.2f/%.2f engine %.2f/%.2f)\n",
           base ? base + 1 : file, params, engines, cal_ms, nfst, nmed, efst, emed, nfstc, nmedc, efstc, emedc);
    for (size_t i = 0; i < nf; i++) {
        gn_tensor_free(&ft[i]);
        free(fnbuf[i]);
    }
    gn_graph_free(g0);
    gn_graph_free(g);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--run")) return run_mode(argc, argv);
    int dry = argc > 1 && !strcmp(argv[1], "--dry-run");
    if (dry) {
        argc--;
        argv++;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: bench_segment [--dry-run] FILE.pb [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    if (repeat < 1) repeat = 1;
    gn_graph *g0 = NULL;
    if (gn_graph_load(argv[1], NULL, &g0) != GN_OK) {
        fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g0));
        gn_graph_free(g0);
        return 1;
    }
    size_t n = gn_graph_node_count(g0);
    /* sinks: nodes no input names (every input name, sorted, then a binary search per node) */
    char **names = calloc(n + 1, sizeof *names);
    size_t cap = 1024, ni_all = 0, nk = 0;
    char **inputs = malloc(cap * sizeof *inputs);
    char buf[1024];
    for (size_t i = 0; i < n; i++) {
        size_t ni = gn_graph_node_input_count(g0, i);
        for (size_t k = 0; k < ni; k++) {
            if (gn_graph_node_input(g0, i, k, buf, sizeof buf) != GN_OK) continue;
            char *p = buf[0] == '^' ? buf + 1 : buf;
            char *colon = strchr(p, ':');
            if (colon) *colon = '\0';
            if (ni_all == cap) inputs = realloc(inputs, (cap *= 2) * sizeof *inputs);
            inputs[ni_all++] = strdup(p);
        }
    }
    qsort(inputs, ni_all, sizeof *inputs, cmp_str);
    for (size_t i = 0; i < n; i++) {
        const char *nm = gn_graph_node_name(g0, i);
        if (!bsearch(&nm, inputs, ni_all, sizeof *inputs, cmp_str)) names[nk++] = strdup(nm);
    }
    for (size_t i = 0; i < ni_all; i++) free(inputs[i]);
    free(inputs);
    double best = 1e300, best_cpu = 1e300;
    size_t engines = 0, outside = 0;
    for (int r = 0; r < repeat; r++) {
        gn_graph *g = NULL;
        if (gn_graph_clone(g0, &g) != GN_OK) return 1;
        gn_segment_params sp;
        gn_segment_params_init(&sp);
        sp.preserve = (const char *const *)names;
        sp.n_preserve = nk;
        sp.dry_run = dry;
        double t0 = now_ms(), c0 = cpu_ms();
        gn_status s = gn_segment(g, NULL, &sp, NULL, &engines);
        double t = now_ms() - t0, tc = cpu_ms() - c0;
        if (tc < best_cpu) best_cpu = tc;
        if (s != GN_OK) {
            fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g));
            return 1;
        }
        if (t < best) best = t;
        outside = dry ? 0 : gn_graph_node_count(g) - engines;
        gn_graph_free(g);
    }
    printf("file=%s nodes=%zu engines=%zu outside=%zu segment_ms=%.1f ns_per_node=%.0f cpu_ms=%.1f "
           "cpu_ns_per_node=%.0f\n",
           argv[1], n, engines, outside, best, best * 1e6 / (double)n, best_cpu, best_cpu * 1e6 / (double)n);
    for (size_t i = 0; i < nk; i++) free(names[i]);
    free(names);
    gn_graph_free(g0);
    return 0;
}
