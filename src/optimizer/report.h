/* The optimizer's report (gn_report, include/grapnel/optimizer.h) inside
 * (private): the meta-optimizer (meta.c) fills the runs and notes, the passes
 * the events (gn__pass_rewrote / gn__pass_refused, pass.c). */
#ifndef GN_OPTIMIZER_REPORT_H
#define GN_OPTIMIZER_REPORT_H

#include "common/common.h"
#include "grapnel/optimizer.h"

typedef struct run_entry {
    char *item;                 /* "main" or the function name */
    char *pass;
    int32_t iteration;
    int64_t micros;
    int64_t cpu_micros;         /* CPU time of the calling thread in the pass */
    uint32_t nodes_before, nodes_after;
    uint64_t edges_before, edges_after;
    gn_status status;
    bool changed, rolled_back;
    bool skipped;               /* not run: the item was as the pass's last run left it */
    char *message;              /* on failure */
} run_entry;

typedef struct event {
    char *item;
    char *pattern;
    char *node;
    char *detail;
    int32_t iteration;
    bool refused;
} event;

struct gn_report {
    run_entry *runs;
    size_t n_runs, cap_runs;
    event *events;
    size_t n_events, cap_events;
    char **notes;
    size_t n_notes, cap_notes;
    int64_t total_micros;
    int64_t total_cpu_micros;   /* CPU time of the calling thread in gn_optimize */
    gn__arena strings;          /* the events' strings (a graph of 10^6 nodes can give 10^5 events) */
    bool no_events;             /* record no events (gn_optimize_params.no_report_events) */
    size_t n_grapnel_only;      /* rewrites marked "[grapnel-only: ...]", events or not */
    bool oom;
};

#endif
