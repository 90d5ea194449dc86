/* Shape and dtype inference (private).
 *
 * gn__graph_infer_shapes() walks a graph in topological order (function
 * bodies too) and records, for every output of every node, its dtype and a
 * partial shape: rank -1 when unknown, dim -1 when unknown. Small integer
 * tensors whose values are known (Const, Shape of a known shape, their
 * slices, packs, casts, arithmetic) are propagated as partial values so that
 * Reshape, Fill, Tile, StridedSlice ... get exact output shapes, as
 * TensorFlow's shape refiner does. Ops without a shape function, and ops
 * not in the registry, get unknown shapes; their dtypes come from the op's
 * args when known; a node's `_output_shapes` attr fills what inference leaves
 * unknown (never overrides it). Loops (NextIteration back-edges) and v1
 * control flow are handled with a merge of the shapes seen on each input
 * (dims that differ become -1), relaxed until the loop state settles.
 *
 * Records are immutable once written and live in the table's arena: an
 * output may share its input's dims (Identity, elementwise ops), so never
 * write through a record's pointers. Everything a gn__shape_of answer points
 * to is borrowed until the graph (or, for a body inferred from its callers'
 * arguments, a caller) changes. */
#ifndef GN_OPS_SHAPE_H
#define GN_OPS_SHAPE_H

#include "graph/ir.h"
#include "opdef/registry.h"

#define GN__MAX_RANK 64

typedef struct gn__shape {
    int32_t rank;            /* -1 unknown */
    int64_t *dims;           /* rank entries, -1 unknown; NULL when rank <= 0 */
} gn__shape;

/* Known values of a small int32/int64 tensor (a "shape tensor", at most 64
 * elements, row-major); element i is known when known[i]. A record's value is
 * NULL when nothing is known. */
typedef struct gn__partial_value {
    gn__shape shape;         /* of the value itself (rank 0 or 1 but for Const, e.g. Pad's [r, 2]) */
    int64_t n;               /* elements */
    int64_t *v;
    uint8_t *known;          /* n flags */
} gn__partial_value;

/* What a resource (or variant) handle refers to: a variable's dtype and shape. */
typedef struct gn__handle_data {
    int32_t dtype;           /* 0 unknown */
    gn__shape shape;
} gn__handle_data;

typedef struct gn__tinfo {
    int32_t dtype;           /* DataType, 0 unknown */
    gn__shape shape;
    const gn__partial_value *value;   /* may be NULL */
    const gn__handle_data *handle;    /* resource handles (VarHandleOp ...): may be NULL */
} gn__tinfo;

typedef struct gn__shape_table {
    gn__arena arena;
    uint32_t n_nodes;
    uint32_t *n_out;         /* per node */
    gn__tinfo **out;         /* per node: n_out[i] entries */
    /* A function body inferred with its callers' arguments holds only while
     * the callers' tables it was derived from are still their graphs' tables
     * (a mutation of a caller drops the caller's table, not this one):
     * gn__shape_of answers NULL once one of them is gone. */
    uint32_t n_deps;
    const gn_graph **dep_graph;
    const struct gn__shape_table **dep_table;
    /* The topological order the table was inferred in (gn__graph_topo's), as
     * true as the table itself: while the table is current, a pass reading it
     * takes this order instead of computing it again. */
    gn_id *order;
    uint32_t n_order;
} gn__shape_table;

/* Context handed to an op's shape function. */
typedef struct gn__shape_ctx {
    const gn_graph *g;
    gn_id node;
    const gn__opdef *op;
    uint32_t n_in;
    const gn__tinfo *in;     /* data inputs */
    uint32_t n_out;
    gn__tinfo *out;          /* dtypes pre-filled from the op's args; fill shapes (and values) */
    gn__arena *arena;        /* for dims and values */
    gn__err *err;
    /* Per data input: 0 when its producer has not been visited yet in this
     * pass (a NextIteration back-edge on the first pass); in[i] is then
     * unknown. Merge uses it. */
    const uint8_t *in_ready;
    const gn_graph *lib;     /* the graph holding the function library */
    uint32_t pass;           /* 1, then 2 (and 3) when loops are relaxed */
} gn__shape_ctx;

/* Infers g (the top-level graph), then every function body of its library,
 * callers before callees. A call site (PartitionedCall,
 * StatefulPartitionedCall, If/While/Case and their Stateless forms, a node
 * whose op is a library function) is inferred by running the callee's body on
 * the caller's input records where that is cheap (depth, size and a budget of
 * node visits; never recursively), else from the op's args and the node's
 * `_output_shapes`. A body whose every use is such a call is then inferred
 * with the join of its call sites' arguments; other bodies (entry points,
 * functions named by other attrs, gradients, recursion) with what their
 * _Arg nodes and the signature's arg_attr say. Results go to g's and each
 * body's shapes attachment (gn__graph_shapes). Errors are GN_ERR_GRAPH with "node 'n' (Op): what" in g's
 * message (prefixed "function 'f': " inside a body); unknown dims never cause
 * errors, nor does a loop's first visit (see shape.c). */
gn_status gn__graph_infer_shapes(gn_graph *g);

/* A copy of t's topological order into *order (malloc'd, the caller frees);
 * false when t kept none or memory is short (then compute it). */
bool gn__shape_table_order(const gn__shape_table *t, gn_id **order, uint32_t *n);
/* Results for node id output k (borrowed); NULL when not inferred, or no
 * longer valid: the graph changed or, for a body inferred from its callers'
 * arguments, one of those callers did. */
const gn__tinfo *gn__shape_of(const gn_graph *g, gn_id id, uint32_t k);
/* Number of outputs recorded for node id (0 when not inferred). */
uint32_t gn__shape_num_outputs(const gn_graph *g, gn_id id);
void gn__shape_table_free(gn__shape_table *t);

/* The graph's inferred shapes (its `shapes` attachment), NULL when none. */
static inline gn__shape_table *gn__graph_shapes(const gn_graph *g) { return (gn__shape_table *)g->shapes.ptr; }
/* Hangs t on g (g then frees it), dropping the table g had. */
void gn__graph_put_shapes(gn_graph *g, gn__shape_table *t);
/* Takes g's table away from it (the caller frees it or puts it back); NULL when none. */
gn__shape_table *gn__graph_take_shapes(gn_graph *g);

/* ---- shape functions (named by the op list src/opdef/ops.def; functions: src/ops/shape_<family>.c) ---- */
/* The shape function of an op (src/ops/op_fns.c: one binary search in the
 * list); NULL when we have none. The driver caches the answer per op. */
gn__shape_fn gn__shape_fn_for(const char *op);
/* Generic functions the driver falls back on for ops the registry marks
 * elementwise: output 0 = input 0's shape, and numpy broadcasting of inputs
 * 0 and 1. */
gn_status gn__shape_fn_unary(gn__shape_ctx *c);
gn_status gn__shape_fn_broadcast(gn__shape_ctx *c);

/* ---- helpers (src/ops/shape.c) ----------------------------------------------- */
/* GN_ERR_GRAPH with "node '<name>' (<Op>): <message>". */
gn_status gn__shape_fail(gn__shape_ctx *c, const char *fmt, ...) GN__PRINTF(2, 3);
gn_status gn__shape_nomem(gn__shape_ctx *c);
static inline gn__shape gn__shape_unknown(void) { gn__shape s = {-1, NULL}; return s; }
/* Allocates rank dims (all -1) in arena; false on OOM. rank may be 0. */
bool gn__shape_alloc(gn__arena *a, int32_t rank, gn__shape *out);
/* Product of the dims: 0 when a dim is 0, else -1 when a dim or the rank is
 * unknown, -2 on int64 overflow. */
int64_t gn__shape_num_elements(const gn__shape *s);
bool gn__shape_fully_defined(const gn__shape *s);
/* Same rank and same dims (unknowns included). */
bool gn__shape_equal(const gn__shape *a, const gn__shape *b);
/* Least specific shape describing both (ranks differ: unknown rank; dims
 * differ: -1). Shares a's dims when the result is a; false on OOM. */
bool gn__shape_join(gn__arena *arena, const gn__shape *a, const gn__shape *b, gn__shape *out);
/* From a TensorShapeProto (NULL or unknown_rank: unknown; size < 0: -1);
 * false on OOM. Ranks above GN__MAX_RANK give an unknown shape. */
bool gn__shape_from_proto(const Tensorflow__TensorShapeProto *p, gn__arena *arena, gn__shape *out);
/* "[2,?,3]", "[]" for a scalar, "<unknown>" for an unknown rank (truncated to n). */
const char *gn__shape_str(const gn__shape *s, char *buf, size_t n);
bool gn__value_equal(const gn__partial_value *a, const gn__partial_value *b);
/* Deep copy of t (dims, value, handle) into arena; false on OOM. */
bool gn__tinfo_copy(gn__arena *arena, gn__tinfo *dst, const gn__tinfo *src);

#endif
