/* bench_amp: times auto mixed precision on one GraphDef.
 *
 *   bench_amp FILE.pb [REPEAT] [TARGET]
 *
 * Loads FILE.pb (not timed), then runs gn_optimize with auto_mixed_precision
 * alone ON (every other pass off, pruning off) for TARGET (default gpu:sm_90),
 * REPEAT times (default 3, a fresh load each time), and reports the fastest
 * run: the pass's own time from the report and the whole gn_optimize call,
 * and the Cast count after.
 *
 * Prints one line:
 *   file=F nodes=N amp_ms=.. amp_ns_per_node=.. optimize_ms=.. casts=.. nodes_after=..
 * Exits 1 with grapnel's message when a step fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"

#define AMP_ALONE                                                                                             \
    "{'layout_optimizer': False, 'constant_folding': False, 'shape_optimization': False, 'remapping': False, "    \
    "'arithmetic_optimization': False, 'dependency_optimization': False, 'loop_optimization': False, "           \
    "'function_optimization': False, 'debug_stripper': False, 'scoped_allocator_optimization': False, "          \
    "'pin_to_host_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': True, "       \
    "'common_subgraph_elimination': False, 'auto_parallel': False, 'disable_model_pruning': True}"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_amp FILE.pb [REPEAT] [TARGET]\n");
        return 2;
    }
    const char *file = argv[1];
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    const char *target = argc > 3 ? argv[3] : "gpu:sm_90";
    if (repeat < 1) repeat = 1;
    char err[512];
    gn_options o;
    gn_options_init(&o);
    if (gn_options_parse(&o, AMP_ALONE, err, sizeof err) != GN_OK) {
        fprintf(stderr, "options: %s\n", err);
        return 1;
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    if (gn_target_parse(target, &p.target, err, sizeof err) != GN_OK) {
        fprintf(stderr, "target: %s\n", err);
        return 1;
    }
    double best_amp = -1, best_total = -1;
    size_t nodes = 0, after = 0, casts = 0;
    for (int r = 0; r < repeat; r++) {
        gn_graph *g = NULL;
        if (gn_graph_load(file, NULL, &g) != GN_OK) {
            fprintf(stderr, "load %s: %s\n", file, g ? gn_graph_errmsg(g) : "out of memory");
            gn_graph_free(g);
            return 1;
        }
        nodes = gn_graph_node_count(g);
        gn_report *rep = NULL;
        double t0 = now_ms();
        gn_status s = gn_optimize(g, &o, &p, &rep);
        double t1 = now_ms();
        if (s != GN_OK) {
            fprintf(stderr, "optimize: %s\n", gn_graph_errmsg(g));
            gn_report_free(rep);
            gn_graph_free(g);
            return 1;
        }
        double amp = 0;
        for (size_t i = 0; i < gn_report_pass_count(rep); i++)
            if (!strcmp(gn_report_pass_name(rep, i), "auto_mixed_precision")) amp += (double)gn_report_pass_micros(rep, i) / 1e3;
        if (best_amp < 0 || amp < best_amp) best_amp = amp;
        if (best_total < 0 || t1 - t0 < best_total) best_total = t1 - t0;
        after = gn_graph_node_count(g);
        casts = 0;
        for (size_t i = 0; i < after; i++)
            if (!strcmp(gn_graph_node_op(g, i), "Cast")) casts++;
        gn_report_free(rep);
        gn_graph_free(g);
    }
    printf("file=%s nodes=%zu amp_ms=%.3f amp_ns_per_node=%.1f optimize_ms=%.3f casts=%zu nodes_after=%zu\n",
           file, nodes, best_amp, best_amp * 1e6 / (double)(nodes ? nodes : 1), best_total, casts, after);
    return 0;
}
