/* Protocol buffer text format for any protobuf-c message (private).
 *
 * protobuf-c has no text format; this is a descriptor-driven reader and
 * printer compatible with what C++ protobuf's TextFormat (and therefore
 * TensorFlow's .pbtxt files) writes and reads. Both work for any message:
 * GraphDef, SavedModel, RewriterConfig, ...
 *
 * Thread-safety: no shared state; distinct calls are independent. */
#ifndef GN_IO_TEXTFORMAT_H
#define GN_IO_TEXTFORMAT_H

#include "common/common.h"

/* Deepest message nesting the reader accepts and the printer prints (C++
 * protobuf's default recursion limit). */
#define GN__TEXT_MAX_DEPTH 100

/* gn__text_parse: parses text (len bytes, need not be NUL-terminated; never
 * read past len) into a new message of descriptor d.
 *   alloc  borrowed; every allocation of the result is made with it (normally
 *          gn__arena_pb_allocator, so nothing needs freeing). With an allocator
 *          that really frees, the result is released with
 *          protobuf_c_message_free_unpacked(*out, alloc), and on failure the
 *          partial message is released before returning.
 *   out    receives the message (owned as above); NULL on failure.
 * Strings are NUL-terminated char *, bytes ProtobufCBinaryData; every message
 * is initialised with protobuf_c_message_init. Map fields are the repeated
 * entry messages protobuf-c uses, kept in the order given.
 * Returns GN_OK; GN_ERR_PARSE with err = "line L:C: <what>" (1-based line and
 * byte column of the offending token), e.g.
 * "line 12:7: unknown field 'nmae' in tensorflow.NodeDef"; GN_ERR_NOMEM;
 * GN_ERR_ARG when d, alloc or out is NULL (or text is NULL with len > 0). */
gn_status gn__text_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
                         ProtobufCAllocator *alloc, ProtobufCMessage **out, gn__err *err);
/* The same, for text in private memory of the caller's own that the parser
 * may change: the whole pages inside a bytes literal of 1 MiB or more are
 * given back once it is decoded, and the rest of that literal is overwritten
 * with '0' (same length, same quotes, no newline: positions computed on the
 * text afterwards do not move). For a file's image or a gunzipped buffer,
 * never for a caller's buffer. */
gn_status gn__text_parse_owned(const ProtobufCMessageDescriptor *d, char *text, size_t len,
                               ProtobufCAllocator *alloc, ProtobufCMessage **out, gn__err *err);

/* gn__text_print: appends the text form of m to out, in C++ TextFormat's
 * default style: fields in field-number order, `name: value` lines,
 * `name {` ... `}` for messages with contents indented by 2, one line per
 * element of a repeated field, strings and bytes double-quoted with C++'s
 * CEscape (octal for bytes outside printable ASCII), floats and doubles in
 * the shortest of %.6g/%.9g (%.15g/%.17g) that reads back to the same value,
 * enums by name (number when unnamed). A field is printed exactly when
 * protobuf-c would serialise it; unknown fields are not printed. Map entries
 * keep their stored order (C++ sorts them by key; keeping the order makes
 * print then parse pack to the same bytes). Deterministic.
 *   m    borrowed.   out  borrowed; appended to.
 * Returns GN_OK; GN_ERR_PARSE when messages nest deeper than
 * GN__TEXT_MAX_DEPTH; GN_ERR_NOMEM when out could not grow; GN_ERR_ARG on
 * NULL m or out. */
gn_status gn__text_print(const ProtobufCMessage *m, gn__buf *out, gn__err *err);

#endif
