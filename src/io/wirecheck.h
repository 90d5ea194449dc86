/* Protobuf wire-format framing validator (private).
 *
 * protobuf_c_message_unpack says only "NULL" when it fails, and recurses once
 * per nesting level (a crafted file of ~200,000 nested messages overflows the
 * C stack). gn__wire_check walks the bytes first, without recursion and
 * without allocating per field, so a load error can name the byte offset, the
 * field, the path to it and the node, and unpack only ever sees framing it
 * accepts.
 *
 * Thread-safety: no shared state; distinct calls are independent. */
#ifndef GN_IO_WIRECHECK_H
#define GN_IO_WIRECHECK_H

#include "common/common.h"

/* protobuf's limit on one serialized message (INT32_MAX bytes). */
#define GN__WIRE_MAX_LEN ((size_t)0x7fffffff)

/* gn__wire_check: walks buf (len bytes) as a serialized message of
 * descriptor d. Checks every tag (field number 1..2^29-1, at most 5 bytes),
 * varint (at most 10 bytes), fixed32/fixed64 and length (at most 5 bytes),
 * that each length stays inside its parent, that the wire type of a known
 * field matches its type (a repeated scalar may also come packed), that a
 * packed field holds whole elements (and packed bools are 0 or 1), that
 * messages nest at most max_depth levels below the root, that no message
 * has more fields than protobuf-c's unpack takes (134,217,712), and that
 * no length (nor len itself) exceeds 2 GiB. Unknown fields are skipped, their
 * framing checked. Groups (wire types 3 and 4) are rejected: protobuf-c cannot
 * unpack them. String and bytes payloads are not looked at (no UTF-8 check:
 * TensorFlow files sometimes hold other bytes in string fields).
 * What it accepts, protobuf_c_message_unpack accepts (memory permitting), for
 * messages without proto2 required fields (those are not checked). It is
 * stricter than protobuf-c 1.4.1 in two places where that reads what C++
 * reads otherwise: a bool sent with a non-varint wire type, and packed bool
 * bytes other than 0 and 1.
 *   d, buf  borrowed.
 * Returns GN_OK; GN_ERR_PARSE with err =
 *   "byte <offset>: <what> in field <n> (<name>) of <message>[ at <path>]
 *    [ (node '<name>')]", e.g.
 *   "byte 1832: truncated length-delimited field 1 (node) of tensorflow.GraphDef:
 *    length 500, only 20 bytes left"
 *   "byte 210: packed length 7 is not a multiple of 4 in field 5 (float_val) of
 *    tensorflow.TensorProto at node[1].attr['value'].tensor (node 'conv1/weights')"
 * where <offset> is where the offending field's tag starts (an element's
 * offset for packed-element errors), <path> leads from the root to the
 * message holding that field (repeated fields indexed, map entries by key,
 * which stands for the entry's value; a long path keeps its first and last
 * levels) and the names of enclosing NodeDefs (and other messages whose field
 * 1 is a string `name`) already read are given; GN_ERR_NOMEM when the stack
 * for more than 64 levels cannot be allocated;
 * GN_ERR_ARG on NULL d (or NULL buf with len > 0). */
gn_status gn__wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                         unsigned max_depth, gn__err *err);

#endif
