/* The backend interface (private for now; docs/architecture.md "Runtime"): a const
 * table of function pointers plus a context, the same for CPU and CUDA.
 * A backend says which nodes it supports (with a reason when not), compiles
 * a graph into an engine, executes an engine on input tensors, and frees it.
 * compile() gets the whole graph and a signature: it runs only what the
 * fetches and targets need, cutting the graph at the feeds
 * (gn__runtime_prune in src/runtime/prune.h), and fails before anything runs
 * when a needed node cannot run there. */
#ifndef GN_RUNTIME_BACKEND_H
#define GN_RUNTIME_BACKEND_H

#include "graph/ir.h"
#include "grapnel/runtime.h"
#include "ops/kernel.h"

#define GN__BACKEND_API_VERSION 1

typedef struct gn__engine gn__engine;   /* backend-defined */

/* What an engine computes: `graph` with its inputs cut at `feeds` (which the
 * caller provides at execute time, in this order) and producing `fetches`. */
typedef struct gn__engine_sig {
    uint32_t n_feeds;
    const gn__edge *feeds;
    uint32_t n_fetches;
    const gn__edge *fetches;
    /* ---- runtime additions: nodes that must run though nothing is fetched
     * from them (a function's control outputs); may be 0/NULL ---- */
    uint32_t n_targets;
    const gn_id *targets;
} gn__engine_sig;

/* Counters an engine keeps about its runs (tests, reports). "Last run"
 * counts are reset at the start of each execute. */
typedef struct gn__engine_stats {
    uint64_t runs;             /* executes so far */
    uint32_t n_plans;          /* memory plans held (one per input-shape set) */
    bool planned;              /* the last run placed outputs in a planned arena */
    size_t arena_bytes;        /* that arena's size (0 when the last run was dynamic) */
    size_t planned_bytes;      /* the planned buffers' sizes added up (what the arena saves on) */
    uint64_t arena_allocs;     /* last run: output buffers placed in the arena */
    uint64_t dynamic_allocs;   /* last run: output buffers taken from the heap */
    uint64_t plan_misses;      /* last run: planned outputs that had to go to the heap */
    uint64_t nodes_run;        /* last run: kernels executed (dead nodes not counted) */
    /* Grapnel>EngineOp nodes (src/convert/), totals since the engine was
     * compiled, over every engine op it ran: */
    uint64_t eng_hits;         /* input shapes found in the op's engine cache */
    uint64_t eng_builds;       /* engines built (cache misses with allow_build_at_runtime) */
    uint64_t eng_evictions;    /* least recently used engines dropped to make room */
    uint64_t eng_fallbacks;    /* misses that ran the native segment instead */
    uint64_t eng_prebuilt;     /* engines a cache started with: built ahead of time
                                  (gn_engines_build) or read from a SavedModel's assets */
    uint64_t eng_stale;        /* engine asset records refused: made for another backend,
                                  device, library version, precision or segment */
    /* ---- the scoped allocator's ops (CPU backend), last run ---- */
    uint64_t sa_in_place;      /* _ScopedAllocatorConcat inputs a producer wrote into the buffer */
    uint64_t sa_copied;        /* _ScopedAllocatorConcat inputs copied into the buffer */
    /* ---- CUDA Graph replay (gn__backend_config.cuda_graph; 0 elsewhere) ---- */
    bool graph_replayed;       /* the last run launched a captured CUDA Graph */
    uint64_t graph_captures;   /* plans captured into a CUDA Graph so far */
    uint64_t graph_ineligible; /* plans found impossible to capture so far (run normally) */
    char graph_why[160];       /* why the last plan could not be captured ("" when it could) */
} gn__engine_stats;

/* Settings a session passes to its backend after opening it
 * (gn_session_options); a backend may ignore any of them. */
typedef struct gn__backend_config {
    bool cuda_graph;               /* capture runs into CUDA Graphs and replay them */
    size_t workspace_limit_bytes;  /* cuDNN workspace bound; 0: the backend's default */
    /* resource bounds of a run (gn_session_options; CPU backend), resolved:
     * 0 here means no bound */
    size_t max_tensor_bytes;       /* the most bytes one output a kernel makes may take */
    uint64_t step_limit;           /* node executions per run */
    uint64_t time_limit_ms;        /* wall clock per run */
} gn__backend_config;

typedef struct gn__backend_iface {
    uint32_t api_version;
    const char *name;
    /* may node run here? when not, why[] says so (segmenter, report) */
    bool (*supports)(void *self, const gn_graph *g, gn_id node, char *why, size_t why_len);
    gn_status (*compile)(void *self, const gn_graph *g, const gn__engine_sig *sig, gn__engine **out, gn__err *err);
    /* in: n_feeds tensors (borrowed); out: n_fetches tensors, zeroed by the
     * caller, filled with owned references */
    gn_status (*execute)(void *self, gn__engine *e, const gn__tensor *in, gn__tensor *out, uint64_t seed,
                         gn__err *err);
    void (*engine_free)(void *self, gn__engine *e);
    void (*free)(void *self);
    /* optional (NULL): counters of an engine */
    void (*engine_stats)(void *self, const gn__engine *e, gn__engine_stats *out);
    /* optional (NULL: the backend takes no settings): applied once, right
     * after the backend is opened, before anything is compiled */
    gn_status (*configure)(void *self, const gn__backend_config *cfg, gn__err *err);
} gn__backend_iface;

typedef struct gn__backend {
    const gn__backend_iface *iface;
    void *self;
} gn__backend;

/* Built-in backends by name ("cpu", "cuda"); GN_ERR_NOT_FOUND / GN_ERR_UNSUPPORTED
 * with a reason (e.g. no GPU present) otherwise. */
gn_status gn__backend_open(const char *name, int32_t num_threads, gn__backend *out, gn__err *err);
void gn__backend_close(gn__backend *b);

/* The CPU reference backend (src/runtime/cpu/). */
gn_status gn__cpu_backend_open(int32_t num_threads, gn__backend *out, gn__err *err);

#endif
