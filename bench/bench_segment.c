/* bench_segment: times engine conversion (gn_segment) on one GraphDef.
 *
 *   bench_segment FILE.pb [REPEAT]
 *
 * Loads FILE (not timed), then runs gn_segment with the default
 * ConversionParams on the CPU backend, preserving the graph's sinks (nodes
 * nothing reads) as a caller would its fetches, REPEAT times on fresh copies
 * (default 3), and prints the fastest:
 *   file=F nodes=N engines=E segment_ms=.. ns_per_node=..
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_segment FILE.pb [REPEAT]\n");
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
    double best = 1e300;
    size_t engines = 0;
    for (int r = 0; r < repeat; r++) {
        gn_graph *g = NULL;
        if (gn_graph_clone(g0, &g) != GN_OK) return 1;
        gn_segment_params sp;
        gn_segment_params_init(&sp);
        sp.preserve = (const char *const *)names;
        sp.n_preserve = nk;
        double t0 = now_ms();
        gn_status s = gn_segment(g, NULL, &sp, NULL, &engines);
        double t = now_ms() - t0;
        if (s != GN_OK) {
            fprintf(stderr, "bench_segment: %s\n", gn_graph_errmsg(g));
            return 1;
        }
        if (t < best) best = t;
        gn_graph_free(g);
    }
    printf("file=%s nodes=%zu engines=%zu segment_ms=%.1f ns_per_node=%.0f\n", argv[1], n, engines, best,
           best * 1e6 / (double)n);
    for (size_t i = 0; i < nk; i++) free(names[i]);
    free(names);
    gn_graph_free(g0);
    return 0;
}
