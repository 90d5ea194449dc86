/* The op registry (private): the op-definition layer, below the IR. It
 * knows op definitions, dtypes and attr values, never a graph: what it reads
 * of a node comes through an attribute view (gn__attr_view) that the IR
 * supplies (gn__node_attr_view, src/graph/ir.h), and the IR's gn__op_*
 * calls take a graph and a node and pass their view here.
 *
 * One entry per op: TensorFlow's public ops come from its op list
 * (tensorflow/core/ops/ops.pbtxt of the TensorFlow source tree) through
 * tools/gen_ops.py, which writes
 * src/opdef/op_table.inc (generated, committed); the internal ops the passes
 * produce (_FusedConv2D, _FusedMatMul, _Arg, _Retval, ...) are added by hand
 * in src/opdef/internal_ops.inc. Traits come from the op list src/opdef/ops.def,
 * whose other columns (shape functions, CPU kernels) the ops layer reads
 * (src/ops/op_fns.c). The table is constant data: no global mutable state. */
#ifndef GN_OPDEF_REGISTRY_H
#define GN_OPDEF_REGISTRY_H

#include "common/common.h"
#include "opdef/dtype.h"   /* gn__dtype_name and the other DataType facts */
#include "tensorflow/core/framework/attr_value.pb-c.h"

/* The attrs of one node as the registry reads them: get(ctx, node, key) is
 * the node's value of attr `key` (NULL when the node has none: the op's
 * default applies), name(ctx, node) its name for messages. */
typedef struct gn__attr_view {
    const void *ctx;
    uint32_t node;
    const Tensorflow__AttrValue *(*get)(const void *ctx, uint32_t node, const char *key);
    const char *(*name)(const void *ctx, uint32_t node);
} gn__attr_view;

typedef struct gn__argdef {
    const char *name;
    int32_t type;                /* fixed DataType (TENSORFLOW__DATA_TYPE__DT_*), 0 if by attr */
    const char *type_attr;       /* NULL if none */
    const char *number_attr;     /* NULL if none: then one tensor (or a type list) */
    const char *type_list_attr;  /* NULL if none */
    bool is_ref;
} gn__argdef;

typedef enum gn__attr_kind {
    GN__ATTR_STRING, GN__ATTR_INT, GN__ATTR_FLOAT, GN__ATTR_BOOL, GN__ATTR_TYPE,
    GN__ATTR_SHAPE, GN__ATTR_TENSOR, GN__ATTR_FUNC, GN__ATTR_ANY,
    GN__ATTR_LIST_STRING, GN__ATTR_LIST_INT, GN__ATTR_LIST_FLOAT, GN__ATTR_LIST_BOOL,
    GN__ATTR_LIST_TYPE, GN__ATTR_LIST_SHAPE, GN__ATTR_LIST_TENSOR, GN__ATTR_LIST_FUNC,
} gn__attr_kind;

typedef struct gn__attrdef {
    const char *name;
    gn__attr_kind kind;
    const char *type;            /* TensorFlow's spelling: "int", "list(type)", ... */
    /* Default value, serialized AttrValue bytes (NULL/0 when there is none). */
    const uint8_t *default_pb;
    uint32_t default_len;
    bool has_minimum;
    int64_t minimum;
    /* Allowed values, serialized AttrValue bytes (NULL/0 when unrestricted). */
    const uint8_t *allowed_pb;
    uint32_t allowed_len;
} gn__attrdef;

/* OpDef flags */
enum {
    GN__OPF_STATEFUL = 1u << 0,
    GN__OPF_COMMUTATIVE = 1u << 1,
    GN__OPF_AGGREGATE = 1u << 2,
    GN__OPF_ALLOWS_UNINIT = 1u << 3,
    GN__OPF_DISTRIBUTED_COMM = 1u << 4,
    GN__OPF_INTERNAL = 1u << 5,     /* added by hand, not in TensorFlow's public list */
};

/* Traits the passes reason about (src/opdef/ops.def). */
enum {
    GN__T_ELEMENTWISE = 1u << 0,      /* output[i] depends on input[i] only (after broadcast) */
    GN__T_UNARY = 1u << 1,
    GN__T_BINARY = 1u << 2,
    GN__T_COMMUTATIVE = 1u << 3,
    GN__T_ASSOCIATIVE = 1u << 4,
    GN__T_IDEMPOTENT = 1u << 5,       /* f(f(x)) = f(x) */
    GN__T_INVOLUTION = 1u << 6,       /* f(f(x)) = x */
    GN__T_LAYOUT_SENSITIVE = 1u << 7, /* has data_format / depends on NHWC vs NCHW */
    GN__T_LAYOUT_AGNOSTIC = 1u << 8,  /* can run on any layout if its params are permuted */
    GN__T_HOST_FRIENDLY = 1u << 9,    /* cheap integer/shape work: fine on the host */
    GN__T_IDENTITY_LIKE = 1u << 10,   /* Identity, Snapshot, StopGradient, ... */
    GN__T_CONTROL_FLOW = 1u << 11,    /* Switch, Merge, Enter, Exit, NextIteration, LoopCond, If, While, ... */
    GN__T_SOURCE = 1u << 12,          /* Const, Placeholder, _Arg, variables */
    GN__T_DEBUG = 1u << 13,           /* Assert, CheckNumerics, Print, PrintV2 (debug_stripper) */
    GN__T_FUNCTION_CALL = 1u << 14,   /* PartitionedCall, StatefulPartitionedCall, ... */
};

/* Mixed-precision lists (docs/reference_grappler.md §3.8) */
typedef enum gn__amp_list {
    GN__AMP_NONE = 0, GN__AMP_ALLOW, GN__AMP_INFER, GN__AMP_CLEAR, GN__AMP_DENY,
} gn__amp_list;

struct gn__shape_ctx;
typedef gn_status (*gn__shape_fn)(struct gn__shape_ctx *c);

typedef struct gn__opdef {
    const char *name;
    const gn__argdef *inputs;
    const gn__argdef *outputs;
    const gn__attrdef *attrs;
    uint16_t n_inputs, n_outputs, n_attrs;
    uint32_t flags;              /* GN__OPF_* */
    uint32_t traits;             /* GN__T_* */
    gn__amp_list amp;
    gn__shape_fn shape;          /* NULL: outputs of unknown shape (dtype still inferred from args) */
} gn__opdef;

/* Number of ops in the registry, and entry i (sorted by name). */
uint32_t gn__op_count(void);
const gn__opdef *gn__op_at(uint32_t i);
/* Index of op `name` (binary search), -1 when absent. */
int32_t gn__op_find(const char *name, size_t len);
const gn__attrdef *gn__opdef_attr(const gn__opdef *op, const char *name);

/* Builds the default AttrValue of attr `a` with alloc (NULL: no default). */
gn_status gn__attrdef_default(const gn__attrdef *a, ProtobufCAllocator *alloc,
                              Tensorflow__AttrValue **out);

/* Flattened arity of a node of op `op`, resolving number_attr / type_list_attr
 * against the node's attrs (defaults when absent). For arg i, *start and
 * *count give its range of flat tensors. Fail with GN_ERR_GRAPH, naming the
 * attr, when an attr needed is missing or has the wrong kind; with
 * GN_ERR_UNSUPPORTED when it is a function-body placeholder ("$N"). v may be
 * NULL: a node with no attrs (defaults only). */
gn_status gn__opdef_input_range(const gn__opdef *op, const gn__attr_view *view, uint32_t arg, uint32_t *start,
                                uint32_t *count, gn__err *err);
gn_status gn__opdef_output_range(const gn__opdef *op, const gn__attr_view *view, uint32_t arg, uint32_t *start,
                                 uint32_t *count, gn__err *err);
gn_status gn__opdef_num_inputs(const gn__opdef *op, const gn__attr_view *view, uint32_t *n, gn__err *err);
gn_status gn__opdef_num_outputs(const gn__opdef *op, const gn__attr_view *view, uint32_t *n, gn__err *err);
/* DataType of flat output k (resolving type_attr / type_list_attr); 0 if unknown. */
int32_t gn__opdef_output_dtype(const gn__opdef *op, const gn__attr_view *view, uint32_t k);
int32_t gn__opdef_input_dtype(const gn__opdef *op, const gn__attr_view *view, uint32_t k);
/* Index of the input / output arg named `name`, -1 when none. */
int32_t gn__op_output_arg(const gn__opdef *op, const char *name, size_t len);
int32_t gn__op_input_arg(const gn__opdef *op, const char *name, size_t len);

/* Builds a registry entry from an OpDef message (a library function's
 * signature), allocated in arena; traits 0, no shape function. */
struct Tensorflow__OpDef;
gn_status gn__opdef_from_proto(const struct Tensorflow__OpDef *p, gn__arena *arena,
                               gn__opdef **out, gn__err *err);

/* Checks one attr value against its def (kind, allowed values, minimum).
 * GN_ERR_GRAPH with e.g. "attr 'T' has a string value; Conv2D expects type",
 * "attr 'N' is 0, below its minimum 1", "attr 'T' is int64, not allowed for
 * Relu (allowed: float, double, ...)". An empty list (`list {}`) matches every
 * list kind; a placeholder matches every kind. */
gn_status gn__attr_check(const gn__opdef *op, const gn__attrdef *a, const Tensorflow__AttrValue *v, gn__err *err);

#endif
