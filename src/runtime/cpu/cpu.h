/* The CPU reference backend (private).
 *
 * compile.c  turns (graph, signature) into a program: the pruned nodes in a
 *            topological order, with pseudo-nodes for the feeds (sources)
 *            and fetches (sinks), out-edge lists, kernels, and the static
 *            frames of v1 loops (TensorFlow's ControlFlowInfo).
 * exec.c     runs a program: TensorFlow's dataflow executor, iterative, one
 *            thread. A ready queue; pending and dead counts per node per
 *            frame iteration; dead tensors; Enter/Exit/NextIteration with
 *            frames, iterations and loop invariants exactly as
 *            tensorflow/core/common_runtime/propagator_state.cc. Function
 *            calls run a nested program (recursion over call nesting only).
 * plan.c     memory plans: the first run with a set of input shapes records
 *            every output buffer's size and lifetime; later runs place the
 *            outputs in one arena by lifetime (greedy first fit), with a
 *            check at each allocation that keeps a changed run safe.
 * backend.c  the backend interface over the above. */
#ifndef GN_RUNTIME_CPU_H
#define GN_RUNTIME_CPU_H

#include "runtime/backend.h"
#include "ops/blas.h"
#include "runtime/engine_cache.h"
#include "ops/executor.h"

enum {
    XN_FEED = 1u << 0,            /* pseudo-node: a fed tensor */
    XN_FETCH = 1u << 1,           /* pseudo-node: a fetched tensor */
    XN_MERGE = 1u << 2,
    XN_ENTER = 1u << 3,
    XN_EXIT = 1u << 4,
    XN_NEXT = 1u << 5,            /* NextIteration */
    XN_CONST_ENTER = 1u << 6,     /* Enter with is_constant */
    XN_CONTROL_TRIGGER = 1u << 7,
    XN_MAY_BE_DEAD = 1u << 8,     /* kernel may leave outputs dead (Switch, _SwitchN, Merge) */
    XN_SA_ALLOC = 1u << 9,        /* _ScopedAllocator: its buffer's fields are handed to producers */
    XN_SA_PRODUCER = 1u << 10,    /* has _scoped_allocator: an output goes in such a field */
    XN_SA_CONCAT = 1u << 11,      /* _ScopedAllocatorConcat (counted in the stats) */
};

typedef struct xedge {
    uint32_t dst;                 /* program node */
    int32_t slot;                 /* input slot of dst; -1 for a control edge */
    uint32_t src_out;             /* output of the source (data edges) */
} xedge;

typedef struct xnode {
    gn_id gid;                    /* graph node; GN_NONE for feed/fetch pseudo-nodes */
    uint32_t flags;               /* XN_* */
    gn__kernel_fn fn;
    uint32_t n_in, n_ctrl, n_out;
    uint32_t frame;               /* static frame the node runs in */
    uint32_t local;               /* index among its frame's nodes */
    uint32_t in_off;              /* first input slot in its frame's slot array */
    uint32_t child;               /* Enter: the static frame it enters */
    uint32_t e_begin, e_count;    /* out-edges in prog->edges (data first, then control) */
    uint32_t out_base;            /* first of its outputs in the program's output numbering */
    uint32_t io;                  /* feed or fetch index of a pseudo-node */
    int32_t pending_init;         /* TensorFlow's initial pending count */
} xnode;

typedef struct xframe {
    char *name;                   /* frame_name ("" for the root; heap) */
    uint32_t parent;              /* static parent frame (root: itself) */
    uint32_t n_nodes, n_slots;
    uint32_t n_enters;            /* Enter nodes into this frame (its pending inputs) */
    int32_t parallel;             /* parallel_iterations */
    int32_t *pending_init;        /* per local node */
} xframe;

struct cpu_lib;

typedef struct xprog {
    const gn_graph *g;
    struct cpu_lib *lib;          /* function bodies, shared with the top-level program */
    uint32_t n_nodes;
    xnode *nodes;
    xedge *edges;
    uint32_t n_edges;
    uint32_t n_frames;
    xframe *frames;
    uint32_t n_feeds, n_fetches;
    uint32_t *feed_node, *fetch_node;   /* program nodes */
    gn__edge *fetch_edge;         /* the fetched tensors (for messages) */
    int32_t *feed_dtype;          /* function bodies: declared argument dtypes (0: any); else NULL */
    const char **feed_arg;        /* function bodies: argument names (borrowed from the FunctionDef) */
    uint32_t n_roots;
    uint32_t *roots;              /* root-frame nodes with no inputs, in order */
    uint32_t n_outputs;           /* total outputs over nodes (out_base numbering) */
    uint32_t max_out;
    bool has_loops;
} xprog;

/* Compiled function bodies, keyed by function, shared by a top-level
 * program and every program nested in it. */
typedef struct cpu_lib_entry {
    const gn__function *fn;
    xprog *prog;                  /* NULL until compiled */
    bool compiling;
} cpu_lib_entry;

/* The engine cache of one Grapnel>EngineOp node (runtime/engine_cache.h):
 * an entry per input shapes built, its engine the INT8 program of an INT8
 * engine op (int8.h; NULL otherwise: the FP32/FP16 engine is the function
 * compiled once per program). */
typedef struct cpu_engine_cache {
    const gn_graph *g;
    gn_id node;
    gn__engine_cache cache;
    bool seeded;                  /* engines built ahead of time / from an asset added (exec.c) */
} cpu_engine_cache;

typedef struct cpu_lib {
    const gn_graph *top;
    uint32_t n, cap;
    cpu_lib_entry *e;
    /* Grapnel>EngineOp caches, and their counters (gn__engine_stats eng_*) */
    cpu_engine_cache *ec;
    uint32_t n_ec, cap_ec;
    uint64_t clock;
    uint64_t eng_hits, eng_builds, eng_evictions, eng_fallbacks;
    uint64_t eng_prebuilt, eng_stale;
} cpu_lib;

/* compile.c */
gn_status gn__xprog_compile(const gn_graph *g, const gn__engine_sig *sig, cpu_lib *lib, xprog **out, gn__err *err);
/* The compiled body of fn (compiling it on first use). */
gn_status gn__xprog_function(cpu_lib *lib, const gn__function *fn, xprog **out, gn__err *err);
void gn__xprog_free(xprog *p);
void gn__cpu_lib_free(cpu_lib *lib);
/* Why node id cannot run on the CPU backend; NULL when it can (why gets the text). */
bool gn__cpu_node_supported(const gn_graph *g, gn_id id, char *why, size_t why_len);

/* plan.c: memory plans */
typedef struct cpu_plan cpu_plan;
typedef struct cpu_rec cpu_rec;

/* exec.c: one run of a program */
typedef struct cpu_exec_opts {
    uint64_t seed;
    cpu_plan *plan;               /* NULL: no planning (nested runs) */
    gn__engine_stats *stats;      /* may be NULL */
    /* resource bounds (gn__backend_config; 0: none) */
    size_t max_tensor_bytes;      /* per output a kernel makes */
    uint64_t step_limit;          /* node executions, nested calls included */
    uint64_t time_limit_ms;       /* wall clock from the start of the run */
    const gn__blas *blas;         /* the gemms' library (NULL: the reference gemm) */
} cpu_exec_opts;

/* in: n_feeds borrowed tensors; out: n_fetches zeroed tensors, filled with
 * owned references on success. */
gn_status gn__xprog_run(xprog *p, const gn__tensor *in, gn__tensor *out, const cpu_exec_opts *o, gn__err *err);

/* ---- plan.c ---- */
typedef enum { PLAN_RECORD = 0, PLAN_READY = 1, PLAN_DYNAMIC = 2 } cpu_plan_state;

cpu_plan *gn__plan_new(const xprog *p, const gn__tensor *in, uint32_t n_in);
void gn__plan_free(cpu_plan *pl);
bool gn__plan_matches(const cpu_plan *pl, const gn__tensor *in, uint32_t n_in);
cpu_plan_state gn__plan_state(const cpu_plan *pl);
size_t gn__plan_arena_bytes(const cpu_plan *pl);
size_t gn__plan_planned_bytes(const cpu_plan *pl);

/* Allocation hook state for one run (exec.c owns it; it must outlive every
 * buffer handed out while recording, or gn__rec_finish detaches them). */
/* A field of a _ScopedAllocator's buffer that a producer's output may take. */
typedef struct cpu_sa_field {
    int64_t id;                   /* the field's scope id (the allocator's id + 1 + i) */
    gn__buffer *buf;              /* a reference on the backing buffer */
    size_t offset, bytes;
} cpu_sa_field;

typedef struct cpu_alloc {
    cpu_plan *plan;               /* NULL or not PLAN_READY: heap */
    cpu_rec *rec;                 /* recording (plan in PLAN_RECORD) */
    const xprog *prog;
    uint32_t node;                /* program node running now */
    gn__engine_stats *stats;      /* may be NULL */
    cpu_sa_field *sa;             /* the fields of the _ScopedAllocators run so far (heap) */
    uint32_t n_sa, cap_sa;
} cpu_alloc;
/* Registers the fields of the buffer _ScopedAllocator node x just made;
 * false on OOM. */
bool gn__sa_register(cpu_alloc *a, const gn_graph *g, gn_id node, const gn__tensor *buf);
void gn__sa_release(cpu_alloc *a);

/* The kctx->alloc hook (user: a cpu_alloc). */
gn__buffer *gn__plan_alloc(void *user, uint32_t output, size_t bytes);
/* Recording: start, advance the clock (one step per node processed), and
 * finish (builds the plan in pl when the run succeeded; buffers still alive
 * are left out of the plan and detached). */
cpu_rec *gn__rec_new(const xprog *p);
void gn__rec_step(cpu_rec *r, uint64_t step);
void gn__rec_finish(cpu_rec *r, cpu_plan *pl, bool ok);
/* True when b lives in a plan's arena (must not escape to the caller). */
bool gn__plan_owns(const gn__buffer *b);
/* End of a planned run: every arena buffer must have been released. */
void gn__plan_end_run(cpu_plan *pl);

#endif
