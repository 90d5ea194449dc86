/* The attrs of TensorFlow's XLA ops (tf2xla) that are not plain values
 * (private): serialized xla protos in string attrs (GatherDimensionNumbers,
 * ScatterDimensionNumbers, DotDimensionNumbers, PrecisionConfig, OpSharding) and the computations TensorFlow stores as func
 * attrs naming library functions (reducers, comparators, update / select /
 * scatter computations).
 *
 * The proto reader is a minimal protobuf wire-format walker (no dependency on
 * xla's .proto files): it takes the int64 fields it knows, skips well-formed
 * unknown fields and refuses a blob that is not valid wire format. A
 * computation is recognised by its body: one op applied to the arguments
 * (through Identity), the forms docs/xla_ops.md lists.
 *
 * Every reader fills `why` (a message naming the attr and what it holds,
 * without the node, which the caller prefixes) and returns false on a bad or
 * unsupported attr. Used by the shape functions and the CPU kernels, so both
 * give the same message. */
#ifndef GN_OPS_XLA_ATTRS_H
#define GN_OPS_XLA_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/ir.h"

#define GN__XLA_MAXN 16   /* entries of one repeated dims field */
#define GN__XLA_WHY 320

typedef struct gn__xla_ints {
    int32_t n;
    int64_t v[GN__XLA_MAXN];
} gn__xla_ints;

/* xla_data.proto GatherDimensionNumbers (fields 1..6). */
typedef struct gn__xla_gather_dims {
    gn__xla_ints offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
        start_indices_batching_dims;
    int64_t index_vector_dim;
} gn__xla_gather_dims;

/* A gather's output: dims and, per output dim, the operand dim it walks (an
 * offset dim, >= 0) or -1 - the start_indices dim it takes (a batch dim). */
typedef struct gn__xla_gather_geom {
    int32_t out_rank;
    int64_t out_dims[GN__XLA_MAXN];
    int32_t out_map[GN__XLA_MAXN];
} gn__xla_gather_geom;
/* The output of a gather with dims d of an operand (rank r, dims xd) by
 * start_indices (rank ir, dims id) and slice_sizes ss (r entries): checks the
 * index vector against start_index_map and the slice sizes against the
 * operand (collapsed dims 1). False with why (without the node). */
bool gn__xla_gather_shape(const gn__xla_gather_dims *d, int32_t r, const int64_t *xd, int32_t ir, const int64_t *id,
                          const int64_t *ss, gn__xla_gather_geom *g, char *why);

/* ScatterDimensionNumbers (fields 1..6). */
typedef struct gn__xla_scatter_dims {
    gn__xla_ints update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, input_batching_dims,
        scatter_indices_batching_dims;
    int64_t index_vector_dim;
} gn__xla_scatter_dims;

/* DotDimensionNumbers (fields 1..4). */
typedef struct gn__xla_dot_dims {
    gn__xla_ints lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
} gn__xla_dot_dims;

/* Readers of the string attr `key` of node id. Structural checks only (field
 * wire types, counts, repeated entries, ranges against the given ranks where
 * the caller passes them: a rank < 0 skips the range checks). */
bool gn__xla_gather_attr(const gn_graph *g, gn_id id, int32_t operand_rank, int32_t indices_rank,
                         gn__xla_gather_dims *d, char *why);
bool gn__xla_scatter_attr(const gn_graph *g, gn_id id, int32_t operand_rank, int32_t indices_rank,
                          int32_t updates_rank, gn__xla_scatter_dims *d, char *why);
bool gn__xla_dot_attr(const gn_graph *g, gn_id id, int32_t lhs_rank, int32_t rhs_rank, gn__xla_dot_dims *d,
                      char *why);
/* A string attr that must hold a valid message (PrecisionConfig, OpSharding):
 * only well-formedness is checked; absent or empty is fine. */
bool gn__xla_proto_attr_ok(const gn_graph *g, gn_id id, const char *key, const char *msg_name, char *why);

/* What a computation attr does. */
typedef enum {
    GN__XLA_FN_ADD, GN__XLA_FN_MUL, GN__XLA_FN_MAX, GN__XLA_FN_MIN, GN__XLA_FN_AND, GN__XLA_FN_OR,
    GN__XLA_FN_REPLACE,      /* returns its second argument (scatter: the update) */
    GN__XLA_FN_LESS, GN__XLA_FN_GREATER, GN__XLA_FN_LE, GN__XLA_FN_GE,   /* comparators */
} gn__xla_fn_kind;

typedef struct gn__xla_fn {
    gn__xla_fn_kind kind;
    int32_t operand;         /* comparators: the operand compared (args 2k, 2k+1) */
    int32_t n_args;          /* the function's argument count */
} gn__xla_fn;

/* Recognises the func attr `key` of node id as a binary computation over
 * args (0, 1) (reducers, update and scatter computations: kinds ADD .. REPLACE)
 * or, with comparator, a comparison of args (2k, 2k+1) (kinds LESS .. GE).
 * Refuses other bodies naming the op in the body. */
bool gn__xla_fn_attr(const gn_graph *g, gn_id id, const char *key, bool comparator, gn__xla_fn *f, char *why);
const char *gn__xla_fn_name(gn__xla_fn_kind k);
/* A variadic reducer of n_ops operands (XlaVariadicReduceV2): 2 * n_ops
 * arguments (accumulators, then values) and n_ops results, result k one op of
 * ADD .. OR applied to arguments k and n_ops + k; kinds[k] gets it. */
bool gn__xla_variadic_fn_attr(const gn_graph *g, gn_id id, const char *key, int32_t n_ops, gn__xla_fn_kind *kinds,
                              char *why);

/* ConvolutionDimensionNumbers (fields 3..12), checked against the ranks
 * (lhs rank = rhs rank = spatial dims + 2; every dim used once). */
typedef struct gn__xla_conv_dims {
    int64_t in_batch, in_feature, k_in_feature, k_out_feature, out_batch, out_feature;
    gn__xla_ints in_spatial, k_spatial, out_spatial;
} gn__xla_conv_dims;
bool gn__xla_conv_attr(const gn_graph *g, gn_id id, int32_t lhs_rank, int32_t rhs_rank, gn__xla_conv_dims *d,
                       char *why);

#endif
