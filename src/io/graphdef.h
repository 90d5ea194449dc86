/* GraphDef <-> IR conversion and the file front end (private). */
#ifndef GN_IO_GRAPHDEF_H
#define GN_IO_GRAPHDEF_H

#include "graph/ir.h"
#include "grapnel/graph.h"

/* Where a source came from, for error messages that name a position. */
typedef struct gn__source {
    const char *name;        /* file name */
    const uint8_t *data;     /* the bytes the message was decoded from */
    size_t len;
    bool text;               /* text format: positions are line:column */
} gn__source;

/* A string that is not NUL-terminated. */
typedef struct gn__strslice {
    const char *p;
    size_t len;
} gn__strslice;

/* Builds g (a fresh top-level graph) from a decoded GraphDef whose storage is
 * owned by blob (g takes a reference). Errors name the node and, through src,
 * its byte offset or line. */
gn_status gn__graph_from_graphdef(gn_graph *g, const Tensorflow__GraphDef *gd, gn__blob *blob,
                                  const gn__source *src);

/* The steps of gn__graph_from_graphdef, for decoders that build nodes
 * themselves (src/io/wiregraph.c):
 * begin: adopts blob, keeps gd's versions, library and unknown fields (gd's
 * nodes are ignored), reserves room for n_nodes nodes, builds the library;
 * add_nodedef: adds the k-th top-level NodeDef (name, op, device, attrs; not
 * its inputs), errors as gn__graph_from_graphdef's;
 * resolve_inputs: sets the data and control inputs of node id (k-th in the
 * source) from its input strings, once every node is added. */
gn_status gn__graph_begin_graphdef(gn_graph *g, const Tensorflow__GraphDef *gd, gn__blob *blob, size_t n_nodes,
                                   const gn__source *src);
gn_status gn__graph_add_nodedef(gn_graph *g, const Tensorflow__NodeDef *nd, uint32_t k, const gn__source *src);
gn_status gn__graph_resolve_inputs(gn_graph *g, gn_id id, const gn__strslice *inputs, uint32_t n_input, uint32_t k,
                                   const gn__source *src);
/* Resolves node id's inputs now, when every one is well formed (no function
 * form) and names a node that find(ctx, name, len) returns: *done true, the
 * same lists gn__graph_resolve_inputs would build. Otherwise *done false and
 * the node is unchanged (gn__graph_resolve_inputs then reports the error
 * later). GN_ERR_NOMEM only. */
typedef gn_id (*gn__name_finder)(void *ctx, const char *name, size_t len);
gn_status gn__graph_try_resolve_inputs(gn_graph *g, gn_id id, const gn__strslice *inputs, uint32_t n_input,
                                       gn__name_finder find, void *ctx, bool *done);

/* Error helper shared with the wire decoder: "<file>: <pos>: node 'x' (Op): <what>". */
gn_status gn__graphdef_node_fail(gn_graph *g, const gn__source *src, uint32_t k, const char *node, const char *op,
                                 gn_status code, const char *fmt, ...) GN__PRINTF(7, 8);

/* Binary GraphDef straight into g (a fresh top-level graph), without a
 * protobuf-c tree for the nodes: NodeDefs are decoded in one pass, attr
 * values are unpacked once per distinct encoding and shared between nodes
 * (values are immutable). Framing errors are those of gn__wire_check on the
 * whole image ("byte N: ..."; *framing set, message not yet prefixed with the
 * file name); graph errors as gn__graph_from_graphdef's. *empty is set when
 * the image has no node and no function. image: NULL, or a blob that owns
 * data[0..len) and keeps it unchanged; g then takes a reference to it and the
 * large Const tensors (over 1 KiB encoded) point into data instead of being
 * copied, their encodings kept for the writer (gn__attr_enc). */
gn_status gn__graph_from_wire(gn_graph *g, const uint8_t *data, size_t len, gn__blob *blob, gn__blob *image,
                              const gn__source *src, bool *framing, bool *empty);

/* One NodeDef of g as protobuf-c objects in arena a (fn: input names in
 * function-body form). */
gn_status gn__node_to_def(const gn_graph *g, gn_id id, gn__arena *a, bool fn, Tensorflow__NodeDef **out);

/* Binary GraphDef of g appended to out: the bytes protobuf_c_message_pack
 * gives for gn__graph_to_graphdef's message, with each distinct attr value
 * packed once. */
gn_status gn__graph_write_binary(gn_graph *g, gn__buf *out);

/* Bytes of the output that already sit in memory: len bytes at p go before
 * out->data[off] (offsets relative to where the output starts in out). */
typedef struct gn__wire_piece {
    size_t off;
    const uint8_t *p;
    size_t len;
} gn__wire_piece;

/* As gn__graph_write_binary, but the large values that are already in memory
 * (loaded encodings kept by the graph, tensor contents of 32 KiB or more) are
 * not copied into out: they are *pieces (increasing off; free(*pieces)), and
 * out holds the other bytes. The same bytes in order once merged, for a
 * gathered write (gn__write_file_atomicv). */
gn_status gn__graph_write_binary_pieces(gn_graph *g, gn__buf *out, gn__wire_piece **pieces, size_t *n_pieces);

/* Builds a GraphDef from g in arena (pointers into g's values). Deterministic. */
gn_status gn__graph_to_graphdef(const gn_graph *g, gn__arena *arena, Tensorflow__GraphDef **out,
                                gn__err *err);

/* Decodes a whole GraphDef file image (binary or text, already gunzipped)
 * into blob's arena, checking framing and nesting first. */
gn_status gn__decode_graphdef(const uint8_t *data, size_t len, bool text, gn__blob *blob,
                              Tensorflow__GraphDef **out, gn__err *err);

/* Content sniffing: true when data looks like protobuf text format. */
bool gn__looks_like_text(const uint8_t *data, size_t len);
/* True when only whitespace and # comments. */
bool gn__is_blank_text(const uint8_t *data, size_t len);
/* gunzips data when it starts with the gzip magic; *out is then a heap copy
 * (caller frees) else NULL. */
gn_status gn__maybe_gunzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, gn__err *err);
/* gunzips a gzip file's first member (src/io/gunzip.c); fast: libdeflate
 * when installed and the trailer's size fits, else zlib alone (tests compare
 * the two). */
gn_status gn__gunzip(const uint8_t *data, size_t len, bool fast, uint8_t **out, size_t *out_len, gn__err *err);

/* Position of the k-th `node` element (field 1) of a GraphDef, for messages:
 * "byte N" or "line L:C"; writes "" when it cannot be found. */
void gn__graphdef_node_pos(const gn__source *src, uint32_t k, char *buf, size_t buflen);

/* gn__graph_to_graphdef without the nodes (library, versions, unknown fields). */
gn_status gn__graph_to_graphdef_rest(const gn_graph *g, gn__arena *arena, Tensorflow__GraphDef **out,
                                     gn__err *err);

#define GN__MAX_PROTO_DEPTH 100

#endif
