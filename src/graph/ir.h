/* The in-memory graph IR (private).
 *
 * Nodes live in one array indexed by 32-bit ids. Names are interned per graph
 * (dense ids); a name id maps to its node id through an array, so lookup by
 * name is one hash probe plus one load. An edge is (producer id, output index);
 * control edges are kept separately. Every node keeps its fanouts (data
 * consumers as (consumer, input slot) pairs, control consumers as ids) and the
 * mutation calls below keep them current, so a rewrite costs O(edges touched).
 * Removing a node marks a tombstone; gn__graph_compact() drops tombstones and
 * renumbers once per pass.
 *
 * Attribute values are protobuf-c AttrValue messages, immutable once attached
 * and owned by refcounted blobs (gn__blob) that a structural clone shares: that
 * is how large tensor payloads are shared between a graph and its clones.
 * New values are built in the graph's own value blob (gn__graph_value_alloc).
 *
 * A function body is a gn_graph too (kind GN__GRAPH_FUNCTION): each input
 * argument is a node of op "_Arg" named after the argument (flag
 * GN__NODE_FN_ARG) and each output argument a node of op "_Retval" (flag
 * GN__NODE_FN_RET) whose name is "_retval:" + the output argument's name (a
 * colon cannot occur in a TensorFlow node name, so it never collides) and whose
 * single input is the returned tensor.
 *
 * No function here recurses over graph depth. */
#ifndef GN_GRAPH_IR_H
#define GN_GRAPH_IR_H

#include "common/common.h"
#include "grapnel/graph.h"
#include "opdef/registry.h"
#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/op_def.pb-c.h"
#include "tensorflow/core/framework/versions.pb-c.h"

typedef uint32_t gn_id;
#define GN_NONE ((gn_id)UINT32_MAX)

typedef struct gn__edge {
    gn_id node;       /* producer */
    uint32_t index;   /* output index of the producer */
} gn__edge;

typedef struct gn__use {
    gn_id node;       /* consumer */
    uint32_t slot;    /* input position in the consumer */
} gn__use;

/* Something a layer above the IR hangs on a graph: the SavedModel it was
 * loaded from (src/io/savedmodel.h), the engines built for it
 * (src/io/engine_store.h), its inferred shapes (src/ops/shape.h). The IR knows
 * none of their types: it frees an attachment with the graph, and gives a
 * clone a share of it, through the callbacks its owner filled in (each owner's
 * header has the typed getter and setter). */
typedef struct gn__attachment {
    void *ptr;                     /* NULL: none */
    void (*free)(void *ptr);       /* drops this graph's hold */
    void *(*share)(void *ptr);     /* a hold for a clone; NULL: clones start without */
} gn__attachment;

/* Drops what a holds (a->free) and empties it. */
static inline void gn__attachment_drop(gn__attachment *a)
{
    if (a->ptr) a->free(a->ptr);
    a->ptr = NULL;
}

/* Drops what a held, then holds ptr (may be NULL) with its owner's callbacks. */
static inline void gn__attachment_set(gn__attachment *a, void *ptr, void (*free_fn)(void *),
                                      void *(*share)(void *))
{
    gn__attachment_drop(a);
    *a = (gn__attachment){.ptr = ptr, .free = free_fn, .share = share};
}

/* Gives dst a share of what src holds when its owner shares it with clones
 * (dst then holds nothing else); otherwise leaves dst as it is. */
static inline void gn__attachment_share(gn__attachment *dst, const gn__attachment *src)
{
    if (src->ptr && src->share) gn__attachment_set(dst, src->share(src->ptr), src->free, src->share);
}

typedef struct gn__attr {
    uint32_t key;                        /* interned attr name */
    uint32_t enc;                        /* index in the graph's encs, 0: none (see below) */
    const Tensorflow__AttrValue *value;  /* immutable; owned by a blob of the graph */
} gn__attr;

/* The wire bytes a loaded attr value came from, when they are exactly what
 * protobuf_c_message_pack gives for it, so a writer can copy them instead of
 * packing the value again. An attr's enc holds only while
 * encs[enc].value == attr.value (a replaced value no longer matches). */
typedef struct gn__attr_enc {
    const Tensorflow__AttrValue *value;
    const uint8_t *bytes;                /* in a blob of the graph */
    size_t len;
} gn__attr_enc;

enum {
    GN__NODE_DEAD = 1u << 0,      /* tombstone */
    GN__NODE_PRESERVE = 1u << 1,  /* fetch/feed or marked by the caller: passes keep it */
    GN__NODE_FN_ARG = 1u << 2,    /* function body input argument */
    GN__NODE_FN_RET = 1u << 3,    /* function body output argument */
    GN__NODE_FED = 1u << 4,       /* fed at run time (set with GN__NODE_PRESERVE): its value is not its op's */
};

/* Output argument names seen on a node whose op is not known (function bodies
 * only): "node:out_arg:k" is mapped to base[i] + k, in order of first use, so
 * the names print back exactly. */
typedef struct gn__outarg_map {
    uint32_t n;
    uint32_t *name;   /* interned out_arg names */
    uint32_t *base;   /* first flat output index of each */
} gn__outarg_map;

typedef struct gn__node {
    uint32_t name;            /* interned */
    uint32_t op;              /* interned op type string */
    uint32_t device;          /* interned; 0 is "" */
    int32_t opdef;            /* index in the op registry, -1 if not an op we know */
    uint32_t flags;
    uint32_t orig_index;      /* position in the source; ordering tie-breaker */

    uint32_t n_in, cap_in;
    gn__edge *in;             /* data inputs */
    uint32_t n_ctrl, cap_ctrl;
    gn_id *ctrl;              /* control inputs */
    uint32_t n_attr, cap_attr;
    gn__attr *attr;           /* sorted by key string */

    uint32_t n_use, cap_use;
    gn__use *use;             /* data consumers (any output) */
    uint32_t n_cuse, cap_cuse;
    gn_id *cuse;              /* control consumers */

    /* Fields of the source NodeDef the IR does not model (experimental_debug_info,
     * experimental_type, unknown fields); NULL for new nodes. Immutable, blob-owned. */
    const Tensorflow__NodeDef *extra;
    gn__outarg_map *outargs;  /* function bodies: see above; NULL otherwise */
} gn__node;

/* A library function: signature and the body as a graph. */
struct gn__opdef;
typedef struct gn__function {
    uint32_t name;                          /* interned in the owning graph */
    struct gn__opdef *sig;                  /* the signature as a registry entry (arena) */
    const Tensorflow__FunctionDef *def;     /* signature, attr, arg_attr, resource ids,
                                               control_ret names (source of truth for
                                               everything but node_def and ret); immutable */
    gn_graph *body;
    uint32_t n_control_ret;
    uint32_t *control_ret_name;             /* interned in body */
    gn_id *control_ret_node;                /* node ids in body */
} gn__function;

typedef enum { GN__GRAPH_TOP = 0, GN__GRAPH_FUNCTION = 1 } gn__graph_kind;

/* Interned strings: dense ids, 0 is always "". */
typedef struct gn__strtab {
    const char **str;       /* id -> string (NUL-terminated, in the graph arena) */
    uint32_t *len;
    uint32_t n, cap;
    uint64_t *slots;        /* open addressing: (hash >> 32) << 32 | (id + 1); 0 = empty */
    uint32_t nslots;        /* power of two */
} gn__strtab;

struct gn_graph {
    gn__err err;
    gn__graph_kind kind;
    gn__arena arena;          /* structure: nodes' arrays, strings */
    gn__strtab names;
    gn_id *node_of_name;      /* indexed by interned id; GN_NONE if not a node name */
    uint32_t node_of_name_cap;

    gn__node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t n_live;
    /* The optimizer's guard: while node_cap is set, adding a node past it
     * fails (GN_ERR_LIMIT) and sets node_cap_hit. 0: no cap. */
    uint32_t node_cap;
    bool node_cap_hit;
    /* gn_graph_set_fsync: the files written for this graph are fsynced */
    bool fsync_writes;

    /* blobs holding attr values and tensor payloads this graph refers to */
    gn__blob **blobs;
    uint32_t n_blobs, cap_blobs;
    gn__blob *own;            /* where new values are built (also in blobs[]) */
    ProtobufCAllocator own_alloc;

    /* top-level only */
    const Tensorflow__VersionDef *versions;   /* may be NULL */
    int32_t deprecated_version;
    const Tensorflow__GraphDef *extra;        /* unknown fields, debug_info of the source */
    gn__function *fns;
    uint32_t n_fns, cap_fns;
    const Tensorflow__FunctionDefLibrary *lib_extra; /* gradients, registered_gradients, unknown */

    char *source;             /* file name for messages; may be NULL */
    const gn_graph *lib;      /* the graph whose library calls resolve against:
                                 itself for the top level, the owner for a body */
    int32_t *fn_of_name;      /* top level: interned id -> function index, -1 */
    uint32_t fn_of_name_cap;
    int32_t *opdef_cache;     /* interned op id -> registry index (-2: not looked up) */
    uint32_t opdef_cache_cap;

    /* Top level, loaded from a SavedModel: its MetaGraphDef and directory
     * (gn__graph_saved, src/io/savedmodel.h), shared with clones; none otherwise. */
    gn__attachment saved;

    /* Top level: engines built ahead of time by gn_engines_build
     * (gn__graph_engines, src/io/engine_store.h); none when none. */
    gn__attachment engines;

    /* Inferred output dtypes and shapes (gn__graph_shapes, src/ops/shape.h),
     * none until gn_graph_infer_shapes; dropped by any mutation. */
    gn__attachment shapes;

    /* Encodings of attr values kept by the binary loader (gn__attr.enc);
     * entry 0 unused. NULL when none. */
    gn__attr_enc *encs;
    uint32_t n_encs, cap_encs;
};


/* ---- construction ------------------------------------------------------------ */
gn_graph *gn__graph_new(gn__graph_kind kind);        /* NULL on OOM */
/* Keeps a reference to b (values in b may then be attached to this graph). */
gn_status gn__graph_adopt_blob(gn_graph *g, gn__blob *b);
/* Drops the graph's reference to b (nothing of the graph may point into it any more). */
void gn__graph_drop_blob(gn_graph *g, gn__blob *b);
/* How many holders the blob of g that holds the bytes [p, p + n) has (g,
 * its clones and snapshots, function bodies that share it); 0 when no blob
 * of g holds them. 1: g alone, and g may write them. */
uint32_t gn__graph_bytes_holders(const gn_graph *g, const void *p, size_t n);
/* Allocates in the graph's own value blob (for new attr values / tensors). */
void *gn__graph_value_alloc(gn_graph *g, size_t bytes);
ProtobufCAllocator *gn__graph_value_allocator(gn_graph *g);

/* ---- strings ----------------------------------------------------------------- */
/* Interns s[0..n); returns the id, or UINT32_MAX on OOM. */
uint32_t gn__intern(gn_graph *g, const char *s, size_t n);
uint32_t gn__intern_cstr(gn_graph *g, const char *s);
/* Makes room for n more interned strings (loaders that know the count). */
bool gn__intern_reserve(gn_graph *g, uint32_t n);
/* Looks s up without adding; UINT32_MAX when absent. */
uint32_t gn__intern_find(const gn_graph *g, const char *s, size_t n);
/* The same, given h = gn__hash_bytes(s, n) (callers that hash a name once
 * and look it up more than once). */
uint32_t gn__intern_hashed(gn_graph *g, const char *s, size_t n, uint64_t h);
uint32_t gn__intern_find_hashed(const gn_graph *g, const char *s, size_t n, uint64_t h);
static inline const char *gn__str(const gn_graph *g, uint32_t id) { return g->names.str[id]; }
static inline uint32_t gn__strlen(const gn_graph *g, uint32_t id) { return g->names.len[id]; }

/* ---- nodes ------------------------------------------------------------------- */
static inline gn__node *gn__node_at(const gn_graph *g, gn_id id) { return &g->nodes[id]; }
static inline bool gn__node_live(const gn_graph *g, gn_id id)
{
    return id < g->n_nodes && !(g->nodes[id].flags & GN__NODE_DEAD);
}
static inline const char *gn__node_name(const gn_graph *g, gn_id id) { return gn__str(g, g->nodes[id].name); }
static inline const char *gn__node_op(const gn_graph *g, gn_id id) { return gn__str(g, g->nodes[id].op); }

/* Software prefetch for loops that visit nodes in an order known ahead (a
 * topological order, a work list): on graphs far larger than the caches each
 * visit is otherwise a miss on the record, then on each of its arrays.
 * gn__prefetch_ahead(g, order, i, n) at step i asks for the record of
 * order[i + 16] and the arrays of order[i + 8] (whose record the earlier step
 * asked for). Hints only: no effect on any result. */
static inline void gn__prefetch_record(const gn_graph *g, gn_id id)
{
    const char *p = (const char *)&g->nodes[id];
    GN__PREFETCH(p);
    GN__PREFETCH(p + 64);
    GN__PREFETCH(p + sizeof(gn__node) - 1);
}
static inline void gn__prefetch_arrays(const gn_graph *g, gn_id id)
{
    const gn__node *n = &g->nodes[id];
    GN__PREFETCH(n->in);
    GN__PREFETCH(n->attr);
    GN__PREFETCH(n->use);
}
static inline void gn__prefetch_ahead(const gn_graph *g, const gn_id *order, uint32_t i, uint32_t n)
{
    if (i + 16 < n) gn__prefetch_record(g, order[i + 16]);
    if (i + 8 < n) gn__prefetch_arrays(g, order[i + 8]);
}
/* Node id by name, GN_NONE when none. */
gn_id gn__graph_find(const gn_graph *g, const char *name);
gn_id gn__graph_find_n(const gn_graph *g, const char *name, size_t n);

/* Adds a node with no inputs/attrs. Fails (GN_ERR_GRAPH) if the name is taken. */
gn_status gn__node_add(gn_graph *g, const char *name, const char *op, gn_id *out);
gn_status gn__node_add_interned(gn_graph *g, uint32_t name, uint32_t op, gn_id *out);
/* Marks a node dead: its inputs and control inputs are dropped (fanouts of its
 * producers updated), and so are the control dependencies others have on it.
 * Its data consumers must have been rewired first, else GN_ERR_GRAPH (the
 * message names a remaining consumer). */
gn_status gn__node_remove(gn_graph *g, gn_id id);
/* Removes the nodes ids[0..n) at once (ids of dead nodes and repeats are
 * skipped): the same graph as removing them one by one, consumers first,
 * fanout and control lists in the same order, but each surviving node linked
 * to the set has its lists compacted once, so the cost is O(links of the set
 * + lists of the nodes they touch), not a search per removed edge. Every data
 * consumer of a node in the set must be in the set too (or rewired first),
 * else GN_ERR_GRAPH naming one, and nothing changes; an id past the node
 * count is GN_ERR_ARG. */
gn_status gn__nodes_remove(gn_graph *g, const gn_id *ids, uint32_t n);
void gn__node_set_device(gn_graph *g, gn_id id, const char *device);
/* Re-resolves the op registry entry after the op string changed. */
gn_status gn__node_set_op(gn_graph *g, gn_id id, const char *op);

/* ---- edges (fanouts kept current) --------------------------------------------- */
gn_status gn__node_add_input(gn_graph *g, gn_id id, gn__edge src);
gn_status gn__node_set_input(gn_graph *g, gn_id id, uint32_t slot, gn__edge src);
/* Removes input `slot`; later inputs shift down. */
gn_status gn__node_remove_input(gn_graph *g, gn_id id, uint32_t slot);
gn_status gn__node_add_control(gn_graph *g, gn_id id, gn_id dep);   /* no duplicate */
gn_status gn__node_remove_control(gn_graph *g, gn_id id, gn_id dep); /* absent: no-op */
/* Every data consumer of `from` is rewired to `to`. */
gn_status gn__graph_forward_output(gn_graph *g, gn__edge from, gn__edge to);
/* The same, except the consumers for which skip(ctx, consumer) is true (NULL:
 * none); skip must not change the graph. `to` lists the rewired consumers
 * after its own, in the order `from` listed them; O(fanout of from). */
typedef bool (*gn__consumer_pred)(const void *ctx, gn_id consumer);
gn_status gn__graph_forward_output_if(gn_graph *g, gn__edge from, gn__edge to, gn__consumer_pred skip,
                                      const void *ctx);
/* Every control consumer of `from` now depends on `to` instead. */
gn_status gn__graph_forward_control(gn_graph *g, gn_id from, gn_id to);

/* ---- attrs ------------------------------------------------------------------- */
const Tensorflow__AttrValue *gn__node_attr(const gn_graph *g, gn_id id, const char *key);
/* Attaches value (which must live in one of the graph's blobs) under key. */
gn_status gn__node_set_attr(gn_graph *g, gn_id id, const char *key, const Tensorflow__AttrValue *value);
gn_status gn__node_remove_attr(gn_graph *g, gn_id id, const char *key);
/* Convenience readers: false when absent or of another kind. */
bool gn__attr_get_type(const gn_graph *g, gn_id id, const char *key, int *dtype);
bool gn__attr_get_int(const gn_graph *g, gn_id id, const char *key, int64_t *v);
bool gn__attr_get_float(const gn_graph *g, gn_id id, const char *key, float *v);
bool gn__attr_get_bool(const gn_graph *g, gn_id id, const char *key, bool *v);
bool gn__attr_get_string(const gn_graph *g, gn_id id, const char *key, const char **s, size_t *n);

/* Typed attr values (src/graph/attr_value.c), built in the graph's value blob
 * as gn__node_set_attr wants them; NULL on OOM (g->err untouched). Strings
 * and arrays are copied (strings NUL-terminated past their length). */
Tensorflow__AttrValue *gn__attr_new(gn_graph *g, Tensorflow__AttrValue__ValueCase kind);
Tensorflow__AttrValue *gn__attr_new_int(gn_graph *g, int64_t i);
Tensorflow__AttrValue *gn__attr_new_float(gn_graph *g, float f);
Tensorflow__AttrValue *gn__attr_new_bool(gn_graph *g, bool b);
Tensorflow__AttrValue *gn__attr_new_type(gn_graph *g, int32_t dtype);
Tensorflow__AttrValue *gn__attr_new_string(gn_graph *g, const char *s, size_t n);
Tensorflow__AttrValue *gn__attr_new_tensor(gn_graph *g, Tensorflow__TensorProto *t);   /* shares t */
Tensorflow__AttrValue *gn__attr_new_func(gn_graph *g, Tensorflow__NameAttrList *f);    /* shares f */
/* A func value naming function `name` (copied), with no attrs. */
Tensorflow__AttrValue *gn__attr_new_func_named(gn_graph *g, const char *name);
/* A shape of rank dims (rank < 0: unknown rank). */
Tensorflow__AttrValue *gn__attr_new_shape(gn_graph *g, int32_t rank, const int64_t *dims);
/* A list value with an empty list, for the caller to fill (arrays from
 * gn__graph_value_alloc). */
Tensorflow__AttrValue *gn__attr_new_list(gn_graph *g);
Tensorflow__AttrValue *gn__attr_new_ints(gn_graph *g, const int64_t *v, size_t n);
Tensorflow__AttrValue *gn__attr_new_types(gn_graph *g, const int32_t *t, size_t n);
Tensorflow__AttrValue *gn__attr_new_strings(gn_graph *g, const char *const *s, size_t n);
/* A TensorShapeProto of rank dims in the value blob (rank < 0: unknown rank). */
Tensorflow__TensorShapeProto *gn__shape_proto_new(gn_graph *g, int32_t rank, const int64_t *dims);
/* A type value on the stack (for checks against an op's definition). */
static inline Tensorflow__AttrValue gn__attr_type_value(int32_t dtype)
{
    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v.type = (Tensorflow__DataType)dtype;
    return v;
}
/* Typed setters: the value above attached under key; GN_ERR_NOMEM with
 * "out of memory" in g->err when it cannot be built. */
gn_status gn__node_set_attr_int(gn_graph *g, gn_id id, const char *key, int64_t i);
gn_status gn__node_set_attr_float(gn_graph *g, gn_id id, const char *key, float f);
gn_status gn__node_set_attr_bool(gn_graph *g, gn_id id, const char *key, bool b);
gn_status gn__node_set_attr_type(gn_graph *g, gn_id id, const char *key, int32_t dtype);
gn_status gn__node_set_attr_string(gn_graph *g, gn_id id, const char *key, const char *s);   /* C string */
gn_status gn__node_set_attr_tensor(gn_graph *g, gn_id id, const char *key, Tensorflow__TensorProto *t);
gn_status gn__node_set_attr_func(gn_graph *g, gn_id id, const char *key, Tensorflow__NameAttrList *f);
gn_status gn__node_set_attr_shape(gn_graph *g, gn_id id, const char *key, int32_t rank, const int64_t *dims);
gn_status gn__node_set_attr_ints(gn_graph *g, gn_id id, const char *key, const int64_t *v, size_t n);
gn_status gn__node_set_attr_types(gn_graph *g, gn_id id, const char *key, const int32_t *t, size_t n);
gn_status gn__node_set_attr_strings(gn_graph *g, gn_id id, const char *key, const char *const *s, size_t n);

/* ---- whole graph ------------------------------------------------------------- */
/* Number of outputs a producer is known to have: from the op registry and the
 * node's attrs, or for function calls from the function's signature; -1 when
 * unknown (op we do not know). */
int32_t gn__node_num_outputs(const gn_graph *g, gn_id id);
/* Deterministic topological order of live nodes (data and control edges;
 * edges out of NextIteration are ignored, as TensorFlow's loops need): Kahn's
 * algorithm, nodes ready at the start taken in id order, then first-in
 * first-out, so the same graph always gives the same order. *order is heap-allocated (caller frees); *n gets its
 * length. Fails with GN_ERR_GRAPH naming a node on a cycle. */
gn_status gn__graph_topo(gn_graph *g, gn_id **order, uint32_t *n);
/* Drops tombstones and renumbers ids densely, keeping the relative order. */
gn_status gn__graph_compact(gn_graph *g);
/* Structural copy: same nodes and functions, attr values and tensors shared. */
gn_status gn__graph_clone(const gn_graph *g, gn_graph **out);
/* Checks structure: dangling input, output index past the producer's outputs,
 * duplicate name, cycle outside a loop, attr types against the registry,
 * tensors whose bytes do not match dtype and shape; function bodies too.
 * Messages name the node: "node 'x' (Conv2D): input 1 names missing node 'y'". */
gn_status gn__graph_validate(gn_graph *g);
/* Recomputes fanouts from scratch and compares with the maintained ones
 * (checked mode); GN_ERR_INTERNAL on a mismatch. */
gn_status gn__graph_check_fanouts(gn_graph *g);
/* TF1 while-loop frames, as TensorFlow's executor checks them: every node's
 * inputs (data and control) come from one frame (an Enter's output is in
 * the child frame its frame_name names, an Exit's in the parent, a
 * NextIteration's in the frame of the Merge it feeds). GN_ERR_GRAPH naming
 * the node and the two frames. Not part of gn__graph_validate (TensorFlow
 * checks only what a run executes); the optimizer's checked mode runs it
 * after every pass on a graph that passed it before. */
gn_status gn__graph_check_frames(gn_graph *g);

gn__function *gn__graph_find_function(const gn_graph *g, const char *name);
/* Adds a function (body already built, def retained). Name must be new. */
gn_status gn__graph_add_function(gn_graph *g, const char *name, const Tensorflow__FunctionDef *def,
                                 gn_graph *body, gn__function **out);
/* The op definition of a node: the registry entry, or for a call of a library
 * function by name, that function's signature; NULL when unknown. */
const struct gn__opdef *gn__node_opdef(const gn_graph *g, gn_id id);

/* ---- the registry on a node (src/opdef/registry.h; src/graph/node_opdef.c) ---- */
/* The node's attrs as the registry reads them. */
gn__attr_view gn__node_attr_view(const gn_graph *g, gn_id id);
/* The registry's arity and dtype calls (gn__opdef_*) on node `node` of g; g may
 * be NULL: a node with no attrs (defaults only). */
gn_status gn__op_input_range(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t arg, uint32_t *start,
                             uint32_t *count, gn__err *err);
gn_status gn__op_output_range(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t arg, uint32_t *start,
                              uint32_t *count, gn__err *err);
gn_status gn__op_num_inputs(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t *n, gn__err *err);
gn_status gn__op_num_outputs(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t *n, gn__err *err);
int32_t gn__op_output_dtype(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t k);
int32_t gn__op_input_dtype(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t k);
/* Builds every node's fanouts from its inputs in one sweep (loaders). */
gn_status gn__graph_build_fanouts(gn_graph *g);

#endif
