/* The pass interface (private). One file per pass under src/optimizer/passes/,
 * each exporting `gn_status gn__pass_<id>(gn__pass_ctx *, gn_graph *)` and its
 * pattern table `gn__patterns_<id>[]` / `gn__patterns_<id>_count`, listed in
 * src/optimizer/passes/passes.def.
 *
 * A pass:
 *  - rewrites g in place through the IR's mutation API (src/graph/ir.h), which
 *    keeps fanouts current; it may leave tombstones (the meta-optimizer
 *    compacts after each pass);
 *  - never removes, renames or changes the meaning of a node flagged
 *    GN__NODE_PRESERVE (fetches, feeds, and what the caller marks), and never
 *    changes what a function body's _Arg / _Retval nodes (GN__NODE_FN_ARG /
 *    GN__NODE_FN_RET) mean;
 *  - leaves ops it does not know alone; keeps v1 control flow frames intact
 *    (nothing moves across Enter/Exit);
 *  - records every rewrite with gn__pass_rewrote and every candidate it
 *    refused with gn__pass_refused (the reason), under a pattern id
 *    "<pass>.<pattern>" from its table, and checks gn__pattern_enabled first;
 *  - sets c->changed when it changed anything ("nothing changed" is GN_OK);
 *  - names new nodes deterministically from the nodes they replace
 *    (gn__pass_unique_name), never from addresses or clocks.
 * The meta-optimizer runs every pass over the top-level graph and over every
 * function body (c->fn_name set, c->lib the top-level graph). */
#ifndef GN_OPTIMIZER_PASS_H
#define GN_OPTIMIZER_PASS_H

#include "graph/ir.h"
#include "grapnel/optimizer.h"

typedef struct gn__pattern {
    const char *id;       /* "constfold.fold" */
    const char *help;     /* one line */
} gn__pattern;

typedef struct gn__pass_ctx {
    const gn_options *opts;
    const gn_target *target;  /* never NULL (cpu by default) */
    gn_report *report;        /* NULL: no events wanted (passes skip finding them) */
    size_t *n_grapnel_only;   /* counts the rewrites marked "[grapnel-only: ...]"; NULL: none */
    const char *pass_id;      /* "constfold" */
    int32_t toggle;           /* the pass's gn_toggle (AGGRESSIVE changes some passes) */
    uint32_t iteration;       /* 0-based */
    const char *fn_name;      /* function body being optimized, NULL at top level */
    const gn_graph *lib;      /* the top-level graph (function library) */
    int64_t deadline_us;      /* monotonic microseconds; 0: none */
    gn__err *err;
    bool changed;
    struct gn__pass_guard *guard; /* the step budget (meta.c); NULL: none */
    /* The caller's fetches ("x", "x:1", "^x"), top level only; NULL/0: none
     * given (auto_parallel needs them, as Grappler's item.fetch). */
    const char *const *fetches;
    size_t n_fetches;
    /* The meta-optimizer's copy of the graph from before the pass (for
     * rollback), which gn__pass_claim_bytes may give up; NULL when there is
     * none to give up (checked mode keeps it; a caller that runs the pass
     * alone has none). */
    const struct gn__pass_snapshot *snapshot;
} gn__pass_ctx;

/* The meta-optimizer's hooks on its copy (see gn__pass_may_claim_bytes):
 * holds: the copy holds the blob of [p, p + n); give_up: frees it; again:
 * takes a new copy of g (false: out of memory). */
typedef struct gn__pass_snapshot {
    void *user;
    bool (*holds)(void *user, const void *p, size_t n);
    void (*give_up)(void *user);
    bool (*again)(void *user, const gn_graph *g);
} gn__pass_snapshot;

/* The optimizer's guard on one pass run: gn__pass_deadline_passed counts its
 * calls (passes make one every few hundred or thousand steps of their work
 * lists) and answers true once `polls` passes `poll_limit`, as for a spent
 * time budget; the meta-optimizer then fails the pass (GN_ERR_LIMIT). */
typedef struct gn__pass_guard {
    uint64_t polls, poll_limit;
    bool tripped;
} gn__pass_guard;

typedef gn_status (*gn__pass_fn)(gn__pass_ctx *c, gn_graph *g);

/* Is pattern (or its whole pass) enabled (not listed in opts->disabled_patterns)? */
bool gn__pattern_enabled(const gn__pass_ctx *c, const char *pattern);
/* Report entries: node is the node rewritten or refused (GN_NONE: none). */
void gn__pass_rewrote(gn__pass_ctx *c, const char *pattern, const gn_graph *g, gn_id node, const char *fmt, ...)
    GN__PRINTF(5, 6);
void gn__pass_refused(gn__pass_ctx *c, const char *pattern, const gn_graph *g, gn_id node, const char *fmt, ...)
    GN__PRINTF(5, 6);
/* Values written over in place (constant folding's results over their input
 * Consts' bytes). gn__pass_may_claim_bytes: may the pass write over the bytes
 * [p, p + n) of a value of g? True when they lie in memory of g that nothing
 * else holds but, possibly, the meta-optimizer's copy of the graph from before
 * the pass (its snapshot for rollback): no clone, no function body. The caller
 * also makes sure that nothing in g points at them but the value it rewrites.
 * Then, with every fallible step done, gn__pass_claim_bytes gives the copy up
 * (no failure possible), the pass writes, and gn__pass_snapshot_again takes a
 * copy of g as it is now, which a failure later in the pass goes back to
 * (false, out of memory: the pass stops, leaving the graph as it is). Checked
 * mode keeps its copy: nothing may be claimed that it holds. */
bool gn__pass_may_claim_bytes(const gn__pass_ctx *c, const gn_graph *g, const void *p, size_t n);
void gn__pass_claim_bytes(gn__pass_ctx *c);
bool gn__pass_snapshot_again(gn__pass_ctx *c, const gn_graph *g);
/* True once the time budget or the guard's step budget is spent (passes check
 * it at loop heads and stop cleanly, leaving a valid graph). */
bool gn__pass_deadline_passed(const gn__pass_ctx *c);
/* A fresh node name "<base>/<suffix>" or, when taken, "<base>/<suffix>_<k>"
 * with the smallest free k; written into buf. */
void gn__pass_unique_name(const gn_graph *g, const char *base, const char *suffix, char *buf, size_t buflen);
/* Is node id GPU-placed? Its device names a GPU ("/device:GPU:0",
 * "/job:x/replica:0/task:0/device:GPU:1", "/gpu:0"), or it is empty and the
 * target is a GPU. A node placed on a CPU stays there whatever the target. */
bool gn__pass_on_gpu(const gn__pass_ctx *c, const gn_graph *g, gn_id id);
/* Is a comma-separated list (an option value) naming s (exact match)? */
bool gn__list_has(const char *list, const char *s);
/* Monotonic clock in microseconds. */
int64_t gn__now_us(void);

/* Each built-in pass's function and pattern table, declared from passes.def
 * (the one list); a pattern table ends with a {NULL, NULL} entry. */
#define GN_PASS(ID, name, key, rule, run_once, fn, patterns, help) \
    gn_status fn(gn__pass_ctx *c, gn_graph *g);                    \
    extern const gn__pattern patterns[];
#include "optimizer/passes/passes.def"
#undef GN_PASS

/* The built-in passes, in Grappler's order (passes.def). */
#define GN_PASS(ID, name, key, rule, run_once, fn, patterns, help) ID,
typedef enum gn__pass_id {
#include "optimizer/passes/passes.def"
    GN__PASS_COUNT
} gn__pass_id;
#undef GN_PASS

#endif
