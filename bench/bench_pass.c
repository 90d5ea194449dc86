/* bench_pass: times one optimizer pass alone on one GraphDef.
 *
 *   bench_pass PASS FILE.pb [REPEAT] [TARGET]
 *
 * PASS is a pass id of `grapnel optimize --list-passes` whose option key is a
 * toggle (remap, layout, auto_mixed_precision, function, loop, constfold,
 * arithmetic, ...). Every other pass is off (model pruning too), the pass is
 * ON, TARGET (default gpu:sm_90) is the target. The graph is loaded afresh for
 * each of REPEAT runs (default 3) and the fastest is reported:
 *   file=F pass=P nodes=N pass_ms=.. pass_ns_per_node=.. optimize_ms=..
 *   optimize_cpu_ms=.. nodes_after=.. transposes=.. fused=.. casts=..
 * pass_ms is the pass's own time from the report; optimize_* cover the whole
 * gn_optimize call (cpu: process CPU time, the fairer figure on a busy
 * machine). Exits 1 with grapnel's message when a step fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"

/* every toggle off, pruning off; the pass's own key is then set ON */
#define ALL_OFF                                                                                                  \
    "{'layout_optimizer': False, 'constant_folding': False, 'shape_optimization': False, 'remapping': False, "    \
    "'arithmetic_optimization': False, 'dependency_optimization': False, 'loop_optimization': False, "           \
    "'function_optimization': False, 'debug_stripper': False, 'scoped_allocator_optimization': False, "          \
    "'pin_to_host_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': False, "       \
    "'common_subgraph_elimination': False, 'auto_parallel': False, 'disable_model_pruning': True}"

static const struct {
    const char *pass, *key;
} k_keys[] = {
    {"layout", "layout_optimizer"},          {"constfold", "constant_folding"},
    {"shape", "shape_optimization"},         {"remap", "remapping"},
    {"arithmetic", "arithmetic_optimization"}, {"dependency", "dependency_optimization"},
    {"loop", "loop_optimization"},           {"function", "function_optimization"},
    {"debug_stripper", "debug_stripper"},    {"pin_to_host", "pin_to_host_optimization"},
    {"implementation_selector", "implementation_selector"}, {"auto_mixed_precision", "auto_mixed_precision"},
    {"common_subgraph_elimination", "common_subgraph_elimination"},
};

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_pass PASS FILE.pb [REPEAT] [TARGET]\n");
        return 2;
    }
    const char *pass = argv[1], *file = argv[2];
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    const char *target = argc > 4 ? argv[4] : "gpu:sm_90";
    if (repeat < 1) repeat = 1;
    const char *key = NULL;
    for (size_t i = 0; i < sizeof k_keys / sizeof k_keys[0]; i++)
        if (!strcmp(k_keys[i].pass, pass)) key = k_keys[i].key;
    if (!key) {
        fprintf(stderr, "bench_pass: no toggle pass named '%s'\n", pass);
        return 2;
    }
    char err[512];
    gn_options o;
    gn_options_init(&o);
    if (gn_options_parse(&o, ALL_OFF, err, sizeof err) != GN_OK ||
        gn_options_set(&o, key, "ON", err, sizeof err) != GN_OK) {
        fprintf(stderr, "options: %s\n", err);
        return 1;
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    if (gn_target_parse(target, &p.target, err, sizeof err) != GN_OK) {
        fprintf(stderr, "target: %s\n", err);
        return 1;
    }
    double best_pass = -1, best_total = -1, best_cpu = -1;
    size_t nodes = 0, after = 0, transposes = 0, fused = 0, casts = 0;
    for (int r = 0; r < repeat; r++) {
        gn_graph *g = NULL;
        if (gn_graph_load(file, NULL, &g) != GN_OK) {
            fprintf(stderr, "load %s: %s\n", file, g ? gn_graph_errmsg(g) : "out of memory");
            gn_graph_free(g);
            return 1;
        }
        nodes = gn_graph_node_count(g);
        gn_report *rep = NULL;
        double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        gn_status s = gn_optimize(g, &o, &p, &rep);
        double t1 = clock_ms(CLOCK_MONOTONIC), c1 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (s != GN_OK) {
            fprintf(stderr, "optimize: %s\n", gn_graph_errmsg(g));
            gn_report_free(rep);
            gn_graph_free(g);
            return 1;
        }
        double ms = 0;
        for (size_t i = 0; i < gn_report_pass_count(rep); i++)
            if (!strcmp(gn_report_pass_name(rep, i), pass)) ms += (double)gn_report_pass_micros(rep, i) / 1e3;
        if (best_pass < 0 || ms < best_pass) best_pass = ms;
        if (best_total < 0 || t1 - t0 < best_total) best_total = t1 - t0;
        if (best_cpu < 0 || c1 - c0 < best_cpu) best_cpu = c1 - c0;
        after = gn_graph_node_count(g);
        transposes = fused = casts = 0;
        for (size_t i = 0; i < after; i++) {
            const char *op = gn_graph_node_op(g, i);
            transposes += !strcmp(op, "Transpose");
            fused += !strncmp(op, "_Fused", 6);
            casts += !strcmp(op, "Cast");
        }
        gn_report_free(rep);
        gn_graph_free(g);
    }
    printf("file=%s pass=%s nodes=%zu pass_ms=%.3f pass_ns_per_node=%.1f optimize_ms=%.3f optimize_cpu_ms=%.3f "
           "nodes_after=%zu transposes=%zu fused=%zu casts=%zu\n",
           file, pass, nodes, best_pass, best_pass * 1e6 / (double)(nodes ? nodes : 1), best_total, best_cpu, after,
           transposes, fused, casts);
    return 0;
}
