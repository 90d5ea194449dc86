/* bench_layout: times the layout optimizer on one GraphDef.
 *
 *   bench_layout FILE.pb [REPEAT] [TARGET]
 *
 * Loads FILE.pb (not timed), then runs gn_optimize with the layout optimizer
 * alone (every other pass off, pruning off) for TARGET (default gpu:sm_90),
 * REPEAT times (default 3, a fresh load each time), and reports the fastest
 * run: the layout pass's own time from the report (wall clock), the whole
 * gn_optimize call (wall clock and process CPU time, the less disturbed
 * number on a shared machine), per node, and the Transpose count after.
 *
 * Prints one line:
 *   file=F nodes=N layout_ms=.. layout_ns_per_node=.. optimize_ms=.. optimize_cpu_ms=..
 *   cpu_ns_per_node=.. transposes=.. nodes_after=..
 * Exits 1 with grapnel's message when a step fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"

#define LAYOUT_ALONE                                                                                             \
    "{'layout_optimizer': True, 'constant_folding': False, 'shape_optimization': False, 'remapping': False, "    \
    "'arithmetic_optimization': False, 'dependency_optimization': False, 'loop_optimization': False, "           \
    "'function_optimization': False, 'debug_stripper': False, 'scoped_allocator_optimization': False, "          \
    "'pin_to_host_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': False, "       \
    "'common_subgraph_elimination': False, 'auto_parallel': False, 'disable_model_pruning': True, 'min_graph_nodes': -1}"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_layout FILE.pb [REPEAT] [TARGET]\n");
        return 2;
    }
    const char *file = argv[1];
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    const char *target = argc > 3 ? argv[3] : "gpu:sm_90";
    if (repeat < 1) repeat = 1;
    char err[512];
    gn_options o;
    gn_options_init(&o);
    if (gn_options_parse(&o, LAYOUT_ALONE, err, sizeof err) != GN_OK) {
        fprintf(stderr, "options: %s\n", err);
        return 1;
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    if (gn_target_parse(target, &p.target, err, sizeof err) != GN_OK) {
        fprintf(stderr, "target: %s\n", err);
        return 1;
    }
    double best_layout = -1, best_total = -1, best_cpu = -1;
    size_t nodes = 0, after = 0, transposes = 0;
    for (int r = 0; r < repeat; r++) {
        gn_graph *g = NULL;
        if (gn_graph_load(file, NULL, &g) != GN_OK) {
            fprintf(stderr, "load %s: %s\n", file, g ? gn_graph_errmsg(g) : "out of memory");
            gn_graph_free(g);
            return 1;
        }
        nodes = gn_graph_node_count(g);
        gn_report *rep = NULL;
        double t0 = now_ms(), c0 = cpu_ms();
        gn_status s = gn_optimize(g, &o, &p, &rep);
        double t1 = now_ms(), c1 = cpu_ms();
        if (s != GN_OK) {
            fprintf(stderr, "optimize: %s\n", gn_graph_errmsg(g));
            gn_report_free(rep);
            gn_graph_free(g);
            return 1;
        }
        double layout = 0;
        for (size_t i = 0; i < gn_report_pass_count(rep); i++)
            if (!strcmp(gn_report_pass_name(rep, i), "layout")) layout += (double)gn_report_pass_micros(rep, i) / 1e3;
        if (best_layout < 0 || layout < best_layout) best_layout = layout;
        if (best_total < 0 || t1 - t0 < best_total) best_total = t1 - t0;
        if (best_cpu < 0 || c1 - c0 < best_cpu) best_cpu = c1 - c0;
        after = gn_graph_node_count(g);
        transposes = 0;
        for (size_t i = 0; i < after; i++)
            if (!strcmp(gn_graph_node_op(g, i), "Transpose")) transposes++;
        gn_report_free(rep);
        gn_graph_free(g);
    }
    double per = (double)(nodes ? nodes : 1);
    printf("file=%s nodes=%zu layout_ms=%.3f layout_ns_per_node=%.1f optimize_ms=%.3f optimize_cpu_ms=%.3f "
           "cpu_ns_per_node=%.1f transposes=%zu nodes_after=%zu\n",
           file, nodes, best_layout, best_layout * 1e6 / per, best_total, best_cpu, best_cpu * 1e6 / per, transposes,
           after);
    return 0;
}
