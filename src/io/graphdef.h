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

/* Builds g (a fresh top-level graph) from a decoded GraphDef whose storage is
 * owned by blob (g takes a reference). Errors name the node and, through src,
 * its byte offset or line. */
gn_status gn__graph_from_graphdef(gn_graph *g, const Tensorflow__GraphDef *gd, gn__blob *blob,
                                  const gn__source *src);

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

/* Position of the k-th `node` element (field 1) of a GraphDef, for messages:
 * "byte N" or "line L:C"; writes "" when it cannot be found. */
void gn__graphdef_node_pos(const gn__source *src, uint32_t k, char *buf, size_t buflen);

#define GN__MAX_PROTO_DEPTH 100

#endif
