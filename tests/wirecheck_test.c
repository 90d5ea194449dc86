/* Tests for src/io/wirecheck.c: the framing validator run before
 * protobuf_c_message_unpack. Messages are built by hand, byte by byte, where
 * the point is a malformed encoding, and through the text reader otherwise. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "io/textformat.h"
#include "io/wirecheck.h"
#include "tensorflow/core/framework/function.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

/* ---- building bytes ---------------------------------------------------------------- */

static void w_bytes(gn__buf *w, const void *p, size_t n) { gn__buf_append(w, p, n); }

static void w_varint(gn__buf *w, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) c |= 0x80;
        gn__buf_append(w, &c, 1);
    } while (v);
}

static void w_tag(gn__buf *w, uint32_t field, unsigned wt) { w_varint(w, (uint64_t)field << 3 | wt); }

static void w_ld(gn__buf *w, uint32_t field, const void *p, size_t n)
{
    w_tag(w, field, 2);
    w_varint(w, n);
    w_bytes(w, p, n);
}

static void w_str(gn__buf *w, uint32_t field, const char *s) { w_ld(w, field, s, strlen(s)); }

/* Writes inner as a length-delimited field and frees it. */
static void w_msg(gn__buf *w, uint32_t field, gn__buf *inner)
{
    w_ld(w, field, inner->data, inner->len);
    gn__buf_free(inner);
}

static size_t find(const gn__buf *w, const void *pat, size_t n)
{
    for (size_t i = 0; i + n <= w->len; i++)
        if (memcmp(w->data + i, pat, n) == 0) return i;
    fail_msg("pattern not found");
    return 0;
}

/* ---- checking ------------------------------------------------------------------------ */

/* Checks an exact-size heap copy (nothing after it, for ASan). */
static gn_status check(const ProtobufCMessageDescriptor *d, const void *p, size_t n,
                       unsigned max_depth, gn__err *e)
{
    uint8_t *b = malloc(n ? n : 1);
    assert_non_null(b);
    if (n) memcpy(b, p, n);
    gn__err_clear(e);
    gn_status s = gn__wire_check(d, b, n, max_depth, e);
    free(b);
    return s;
}

static void expect_ok(const ProtobufCMessageDescriptor *d, const void *p, size_t n)
{
    gn__err e;
    if (check(d, p, n, 100, &e) != GN_OK) fail_msg("unexpected failure: %s", e.msg);
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, n, p);
    assert_non_null(m);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void expect_fail(const ProtobufCMessageDescriptor *d, const void *p, size_t n,
                        const char *want)
{
    gn__err e;
    gn_status s = check(d, p, n, 100, &e);
    if (s != GN_ERR_PARSE || strcmp(e.msg, want) != 0)
        fail_msg("expected: %s\n     got (%d): %s", want, (int)s, e.msg);
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(protobuf_c_message_pack(m, b), *n);
    return b;
}

static const char small_graph[] =
    "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
    "  attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 3 } } } } }\n"
    "node { name: 'conv1/weights' op: 'Const'\n"
    "  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }\n"
    "    float_val: [1, 2.5, -3] int_val: [1, 300, -1] tensor_content: '\\001\\002\\003\\004' } } }\n"
    "  attr { key: 'l' value { list { s: ['x', 'yy'] i: [1, -2] b: true } } } }\n"
    "node { name: 'add' op: 'AddV2' input: ['a', 'conv1/weights'] device: '/cpu:0' }\n"
    "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT } }\n"
    "  node_def { name: 'id' op: 'Identity' input: 'x' } ret { key: 'y' value: 'id:output:0' }\n"
    "  arg_attr { key: 3 value { attr { key: 'k' value { i: 7 } } } } } }\n"
    "versions { producer: 1087 min_consumer: 12 }\n";

static uint8_t *small_graph_bytes(size_t *n)
{
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(&a, &pa);
    ProtobufCMessage *m = NULL;
    gn__err e;
    if (gn__text_parse(&tensorflow__graph_def__descriptor, small_graph, strlen(small_graph), &pa,
                       &m, &e) != GN_OK)
        fail_msg("%s", e.msg);
    uint8_t *b = pack(m, n);
    gn__arena_free(&a);
    return b;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_valid_messages(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = small_graph_bytes(&n);
    expect_ok(&tensorflow__graph_def__descriptor, b, n);
    free(b);
    expect_ok(&tensorflow__graph_def__descriptor, "", 0);
    gn__err e;
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, NULL, 0, 100, &e), GN_OK);
    /* unknown fields of every wire type are skipped */
    static const uint8_t unk[] = {0x98, 0x06, 0x96, 0x01, 0x99, 0x06, 1, 2, 3, 4, 5, 6, 7, 8,
                                  0x9a, 0x06, 3, 'a', 'b', 'c', 0x9d, 0x06, 1, 2, 3, 4};
    expect_ok(&tensorflow__graph_def__descriptor, unk, sizeof unk);
    /* a packable repeated field may come unpacked, and a packed one packed */
    static const uint8_t fv[] = {0x2d, 0, 0, 0x80, 0x3f, 0x2a, 4, 0, 0, 0, 0x40,
                                 0x38, 0x05, 0x3a, 0x03, 0x01, 0xac, 0x02, 0x5a, 2, 1, 0};
    expect_ok(&tensorflow__tensor_proto__descriptor, fv, sizeof fv);
}

/* Every prefix of a serialized GraphDef either is a valid shorter message or
 * fails with a byte offset; and the checker agrees with protobuf-c's unpack. */
static void test_truncation_every_offset(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = small_graph_bytes(&n);
    int ok = 0, bad = 0;
    for (size_t len = 0; len < n; len++) {
        gn__err e;
        gn_status s = check(&tensorflow__graph_def__descriptor, b, len, 100, &e);
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, b, len);
        ProtobufCMessage *m = protobuf_c_message_unpack(&tensorflow__graph_def__descriptor, NULL, len, copy);
        free(copy);
        if (s == GN_OK) {
            ok++;
            if (!m) fail_msg("prefix of %zu bytes passes the check but does not unpack", len);
        } else {
            bad++;
            assert_int_equal(s, GN_ERR_PARSE);
            if (strncmp(e.msg, "byte ", 5) != 0) fail_msg("prefix %zu: %s", len, e.msg);
            if (m) fail_msg("prefix of %zu bytes unpacks but fails the check: %s", len, e.msg);
        }
        protobuf_c_message_free_unpacked(m, NULL);
    }
    print_message("%zu prefixes: %d valid shorter messages, %d rejected\n", n, ok, bad);
    assert_true(ok >= 5);
    free(b);

    /* one exactly: cut inside the second node */
    b = small_graph_bytes(&n);
    size_t second = 2 + b[1];   /* node[0]: tag 0x0a, one-byte length */
    assert_int_equal(b[second], 0x0a);
    size_t hdr = 1, l = 0;
    for (unsigned sh = 0;; sh += 7) {
        l |= (size_t)(b[second + hdr] & 0x7f) << sh;
        if (!(b[second + hdr++] & 0x80)) break;
    }
    char want[256];
    snprintf(want, sizeof want,
             "byte %zu: truncated length-delimited field 1 (node) of tensorflow.GraphDef: "
             "length %zu, only 10 bytes left",
             second, l);
    expect_fail(&tensorflow__graph_def__descriptor, b, second + hdr + 10, want);
    free(b);
}

/* Random byte edits: never a crash, and whatever passes the check unpacks. */
static void test_mutations(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = small_graph_bytes(&n);
    uint8_t *m = malloc(n);
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    int passed = 0, unpack_only = 0;
    for (int it = 0; it < 30000; it++) {
        memcpy(m, b, n);
        for (int k = 0; k < 1 + it % 4; k++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            m[rng % n] = (uint8_t)(rng >> 32);
        }
        gn__err e;
        gn_status s = gn__wire_check(&tensorflow__graph_def__descriptor, m, n, 100, &e);
        ProtobufCMessage *u = protobuf_c_message_unpack(&tensorflow__graph_def__descriptor, NULL, n, m);
        if (s == GN_OK) {
            passed++;
            if (!u) fail_msg("iteration %d passes the check but does not unpack", it);
        } else {
            assert_int_equal(s, GN_ERR_PARSE);
            assert_memory_equal(e.msg, "byte ", 5);
            /* protobuf-c 1.4.1 is laxer than the checker in two places only:
             * it reads a bool from any wire type, and packed bools > 1 */
            if (u) {
                unpack_only++;
                if (!strstr(e.msg, "packed bool byte") && !strstr(e.msg, "for bool in field") &&
                    !strstr(e.msg, "for repeated bool in field"))
                    fail_msg("iteration %d unpacks but fails the check: %s", it, e.msg);
            }
        }
        protobuf_c_message_free_unpacked(u, NULL);
    }
    print_message("30000 mutations: %d pass; %d rejected for bools that protobuf-c 1.4.1 takes\n", passed,
                  unpack_only);
    free(m);
    free(b);
}

static void test_framing_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *g = &tensorflow__graph_def__descriptor;
    expect_fail(g, "\x00", 1, "byte 0: invalid field number 0 in tensorflow.GraphDef");
    expect_fail(g, "\x80", 1, "byte 0: truncated tag in tensorflow.GraphDef");
    expect_fail(g, "\x80\x80\x80\x80\x80\x01", 6,
                "byte 0: malformed tag (over 5 bytes or 32 bits) in tensorflow.GraphDef");
    expect_fail(g, "\x9b\x06", 2,
                "byte 0: group (wire type 3) in field 99 of tensorflow.GraphDef: protobuf-c does "
                "not read groups");
    expect_fail(g, "\x9c\x06", 2,
                "byte 0: end of group (wire type 4) in field 99 of tensorflow.GraphDef: protobuf-c "
                "does not read groups");
    expect_fail(g, "\x9e\x06", 2, "byte 0: invalid wire type 6 in field 99 of tensorflow.GraphDef");
    expect_fail(g, "\x99\x06\x01\x02\x03", 5,
                "byte 0: truncated 64-bit value in field 99 of tensorflow.GraphDef");
    expect_fail(g, "\x9d\x06\x01", 3,
                "byte 0: truncated 32-bit value in field 99 of tensorflow.GraphDef");
    expect_fail(g, "\x98\x06\x80", 3, "byte 0: truncated varint in field 99 of tensorflow.GraphDef");
    expect_fail(g, "\x0a\x80", 2, "byte 0: truncated length in field 1 (node) of tensorflow.GraphDef");
    expect_fail(g, "\x0a\x80\x80\x80\x80\x80\x00", 7,
                "byte 0: length varint longer than 5 bytes in field 1 (node) of tensorflow.GraphDef");
    expect_fail(g, "\x0a\x05\x0a\x01", 4,
                "byte 0: truncated length-delimited field 1 (node) of tensorflow.GraphDef: length "
                "5, only 2 bytes left");
    expect_fail(g, "\x22\x0d\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 15,
                "byte 2: varint longer than 10 bytes in field 1 (producer) of "
                "tensorflow.VersionDef at versions");
    expect_fail(g, "\x22\x02\x08\xff", 4,
                "byte 2: truncated varint in field 1 (producer) of tensorflow.VersionDef at versions");
    /* a length that fits its parent but not the child's own bounds */
    expect_fail(g, "\x22\x03\x0a\x05\x00", 5,
                "byte 2: wrong wire type 2 (length-delimited) for int32 in field 1 (producer) "
                "of tensorflow.VersionDef at versions");
    expect_fail(g, "\x0a\x04\x0a\x05\x61\x62", 6,
                "byte 2: truncated length-delimited field 1 (name) of tensorflow.NodeDef at "
                "node[0]: length 5, only 2 bytes left");
}

static void test_wrong_wire_type(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *g = &tensorflow__graph_def__descriptor;
    expect_fail(g, "\x0a\x02\x08\x05", 4,
                "byte 2: wrong wire type 0 (varint) for string in field 1 (name) of "
                "tensorflow.NodeDef at node[0]");
    expect_fail(g, "\x0a\x03\x0a\x01x\x0a\x02\x18\x01", 9,
                "byte 7: wrong wire type 0 (varint) for repeated string in field 3 (input) of "
                "tensorflow.NodeDef at node[1]");
    expect_fail(g, "\x08\x01", 2,
                "byte 0: wrong wire type 0 (varint) for repeated message in field 1 (node) of "
                "tensorflow.GraphDef");
    expect_fail(&tensorflow__tensor_proto__descriptor, "\x29\x00\x00\x00\x00\x00\x00\x00\x00", 9,
                "byte 0: wrong wire type 1 (64-bit) for repeated float in field 5 (float_val) of "
                "tensorflow.TensorProto");
    expect_fail(&tensorflow__tensor_proto__descriptor, "\x22\x00\x20\x01", 4,
                "byte 2: wrong wire type 0 (varint) for bytes in field 4 (tensor_content) of "
                "tensorflow.TensorProto");
}

static void test_packed_fields(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *t = &tensorflow__tensor_proto__descriptor;
    expect_fail(t, "\x2a\x07\x00\x00\x80\x3f\x00\x00\x80", 9,
                "byte 0: packed length 7 is not a multiple of 4 in field 5 (float_val) of "
                "tensorflow.TensorProto");
    expect_fail(t, "\x32\x04\x00\x00\x00\x00", 6,
                "byte 0: packed length 4 is not a multiple of 8 in field 6 (double_val) of "
                "tensorflow.TensorProto");
    expect_fail(t, "\x5a\x02\x01\x02", 4,
                "byte 3: packed bool byte 0x02 is not 0 or 1 in field 11 (bool_val) of "
                "tensorflow.TensorProto");
    expect_fail(t, "\x3a\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 13,
                "byte 2: varint longer than 10 bytes in field 7 (int_val) of tensorflow.TensorProto "
                "(packed)");
    expect_fail(t, "\x3a\x02\x01\x80", 4,
                "byte 3: truncated varint in field 7 (int_val) of tensorflow.TensorProto (packed)");
    static const uint8_t ok[] = {0x3a, 0x04, 0x01, 0xac, 0x02, 0x00, 0x5a, 0x00};
    expect_ok(t, ok, sizeof ok);
}

/* The path names repeated elements by index, map entries by key, and the
 * NodeDef by name. */
static void test_path_and_node_name(void **state)
{
    (void)state;
    gn__buf tensor, av, entry, node, g;
    gn__buf_init(&tensor);
    gn__buf_init(&av);
    gn__buf_init(&entry);
    gn__buf_init(&node);
    gn__buf_init(&g);
    w_tag(&tensor, 1, 0);
    w_varint(&tensor, 1);
    w_ld(&tensor, 5, "\x00\x00\x80\x3f\x00\x00\x80", 7);   /* 7 bytes of packed float */
    w_msg(&av, 8, &tensor);
    w_str(&entry, 1, "value");
    w_msg(&entry, 2, &av);
    w_str(&node, 1, "conv1/weights");
    w_str(&node, 2, "Const");
    gn__buf e2;
    gn__buf_init(&e2);
    w_str(&e2, 1, "dtype");
    w_ld(&e2, 2, "\x30\x01", 2);
    w_msg(&node, 5, &e2);
    w_msg(&node, 5, &entry);
    gn__buf n0;
    gn__buf_init(&n0);
    w_str(&n0, 1, "a");
    w_msg(&g, 1, &n0);
    w_msg(&g, 1, &node);
    size_t off = find(&g, "\x2a\x07\x00\x00\x80\x3f", 6);
    char want[512];
    snprintf(want, sizeof want,
             "byte %zu: packed length 7 is not a multiple of 4 in field 5 (float_val) of "
             "tensorflow.TensorProto at node[1].attr['value'].tensor (node 'conv1/weights')",
             off);
    expect_fail(&tensorflow__graph_def__descriptor, g.data, g.len, want);

    /* a 3 GiB length inside the tensor: the 2 GiB limit, with the hint */
    gn__buf_init(&tensor);
    w_tag(&tensor, 4, 2);
    w_varint(&tensor, 3221225472u);
    gn__buf_init(&av);
    w_msg(&av, 8, &tensor);
    gn__buf_init(&entry);
    w_str(&entry, 1, "value");
    w_msg(&entry, 2, &av);
    gn__buf_init(&node);
    w_str(&node, 1, "big");
    w_msg(&node, 5, &entry);
    gn__buf_free(&g);
    w_msg(&g, 1, &node);
    off = find(&g, "\x22\x80\x80\x80\x80\x0c", 6);
    snprintf(want, sizeof want,
             "byte %zu: length 3221225472 exceeds the 2 GiB protobuf limit in field 4 "
             "(tensor_content) of tensorflow.TensorProto at node[0].attr['value'].tensor "
             "(node 'big') (keep large constants out of the graph, e.g. as SavedModel variables)",
             off);
    expect_fail(&tensorflow__graph_def__descriptor, g.data, g.len, want);
    /* at the top */
    expect_fail(&tensorflow__graph_def__descriptor, "\x0a\x80\x80\x80\x80\x0c", 6,
                "byte 0: length 3221225472 exceeds the 2 GiB protobuf limit in field 1 (node) of "
                "tensorflow.GraphDef (keep large constants out of the graph, e.g. as SavedModel "
                "variables)");
    gn__err e;
    uint8_t one = 0;
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, &one, (size_t)3 << 30, 100, &e),
                     GN_ERR_PARSE);
    assert_string_equal(e.msg, "byte 0: tensorflow.GraphDef of 3221225472 bytes exceeds the 2 GiB "
                               "protobuf limit (keep large constants out of the graph, e.g. as "
                               "SavedModel variables)");

    /* inside a function: library.function[0].node_def[1], uint32 map key */
    gn__buf fn, lib, nd0, nd1, aa, aattrs, aentry, bad;
    gn__buf_init(&fn);
    gn__buf_init(&lib);
    gn__buf_init(&nd0);
    gn__buf_init(&nd1);
    gn__buf_init(&aa);
    gn__buf_init(&aattrs);
    gn__buf_init(&aentry);
    gn__buf_init(&bad);
    gn__buf_free(&g);
    w_str(&nd0, 1, "x");
    w_str(&nd1, 1, "inner/op");
    w_ld(&nd1, 3, "\x01", 1);
    w_ld(&nd1, 3, "\x01", 1);
    w_tag(&nd1, 4, 0);   /* device as a varint */
    w_varint(&nd1, 1);
    w_msg(&fn, 3, &nd0);
    w_msg(&fn, 3, &nd1);
    w_msg(&lib, 1, &fn);
    w_msg(&g, 2, &lib);
    off = find(&g, "\x20\x01", 2);
    snprintf(want, sizeof want,
             "byte %zu: wrong wire type 0 (varint) for string in field 4 (device) of "
             "tensorflow.NodeDef at library.function[0].node_def[1] (node 'inner/op')",
             off);
    expect_fail(&tensorflow__graph_def__descriptor, g.data, g.len, want);

    gn__buf_init(&fn);
    w_tag(&bad, 3, 0);                 /* AttrValue.i, then a truncated varint */
    w_bytes(&bad, "\xff\xff", 2);
    w_str(&aentry, 1, "k");
    w_msg(&aentry, 2, &bad);
    w_msg(&aattrs, 1, &aentry);
    w_tag(&aa, 1, 0);
    w_varint(&aa, 3);
    w_msg(&aa, 2, &aattrs);
    w_msg(&fn, 7, &aa);
    off = find(&fn, "\x18\xff\xff", 3);
    snprintf(want, sizeof want,
             "byte %zu: truncated varint in field 3 (i) of tensorflow.AttrValue at "
             "arg_attr[3].attr['k']",
             off);
    expect_fail(&tensorflow__function_def__descriptor, fn.data, fn.len, want);
    gn__buf_free(&fn);
    gn__buf_free(&g);
}

/* 200,000 levels of AttrValue.func.attr, built by hand: the checker stops at
 * max_depth with the path, and walks all of it without recursion when
 * allowed. protobuf-c's unpack is never run on it (it would overflow the C
 * stack). */
static void test_deep_nesting(void **state)
{
    (void)state;
    enum { LEVELS = 200000 };
    /* sizes inside out: av[i] = size of the AttrValue at level i (0 = innermost) */
    size_t *av = malloc(sizeof *av * (LEVELS + 1));
    size_t *nal = malloc(sizeof *nal * (LEVELS + 1));
    size_t *ent = malloc(sizeof *ent * (LEVELS + 1));
    av[0] = 0;
    for (size_t i = 1; i <= LEVELS; i++) {
        gn__buf t;
        gn__buf_init(&t);
        w_varint(&t, av[i - 1]);
        ent[i] = 3 + 1 + t.len + av[i - 1];     /* key "a", value tag, length, AttrValue */
        t.len = 0;
        w_varint(&t, ent[i]);
        nal[i] = 1 + t.len + ent[i];            /* attr tag, length, entry */
        t.len = 0;
        w_varint(&t, nal[i]);
        av[i] = 1 + t.len + nal[i];             /* func tag (0x52), length, NameAttrList */
        gn__buf_free(&t);
    }
    /* outside in: GraphDef { node { name: "deep" attr { key "a" value <av[LEVELS]> } } } */
    gn__buf g, hdr;
    gn__buf_init(&g);
    gn__buf_init(&hdr);
    gn__buf_reserve(&g, av[LEVELS] + 64);
    gn__buf outer_entry;
    gn__buf_init(&outer_entry);
    w_str(&outer_entry, 1, "a");
    w_tag(&outer_entry, 2, 2);
    w_varint(&outer_entry, av[LEVELS]);
    gn__buf node;
    gn__buf_init(&node);
    w_str(&node, 1, "deep");
    w_tag(&node, 5, 2);
    w_varint(&node, outer_entry.len + av[LEVELS]);
    w_bytes(&node, outer_entry.data, outer_entry.len);
    size_t node_len = node.len + av[LEVELS];
    w_tag(&g, 1, 2);
    w_varint(&g, node_len);
    w_bytes(&g, node.data, node.len);
    gn__buf_free(&node);
    gn__buf_free(&outer_entry);
    /* depth: GraphDef 0, NodeDef 1, entry 2, AttrValue 3, then per level
     * NameAttrList, entry, AttrValue; level 101 is the entry inside the 32nd
     * NameAttrList below the first AttrValue (depth 100) */
    size_t fail_off = 0;
    for (size_t i = LEVELS; i >= 1; i--) {
        size_t k = LEVELS - i;      /* 0 for the outermost AttrValue */
        w_tag(&g, 10, 2);
        w_varint(&g, nal[i]);
        if (k == 32) fail_off = g.len;
        w_tag(&g, 2, 2);
        w_varint(&g, ent[i]);
        w_str(&g, 1, "a");
        w_tag(&g, 2, 2);
        w_varint(&g, av[i - 1]);
    }
    assert_false(g.oom);
    char want[512];
    snprintf(want, sizeof want,
             "byte %zu: nesting deeper than 100 levels in field 2 (attr) of "
             "tensorflow.NameAttrList at node[0].attr['a'].[93 more levels].func.attr['a']."
             "func (node 'deep')",
             fail_off);
    gn__err e;
    gn__err_clear(&e);
    double t0 = (double)clock();
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)g.data,
                                    g.len, 100, &e),
                     GN_ERR_PARSE);
    assert_string_equal(e.msg, want);
    /* with room for all of it: passes, without recursion */
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)g.data,
                                    g.len, 1000000, &e),
                     GN_OK);
    /* one level short of what it needs */
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)g.data,
                                    g.len, 3 + 3 * LEVELS - 1, &e),
                     GN_ERR_PARSE);
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)g.data,
                                    g.len, 3 + 3 * LEVELS, &e),
                     GN_OK);
    print_message("%zu bytes, %d levels: %.1f ms for four checks\n", g.len, 3 + 3 * LEVELS,
                  ((double)clock() - t0) * 1e3 / CLOCKS_PER_SEC);
    gn__buf_free(&g);
    gn__buf_free(&hdr);
    free(av);
    free(nal);
    free(ent);
}

/* Throughput on a large synthetic GraphDef: many small nodes and big
 * tensors, the two shapes real graphs have. */
static void test_speed(void **state)
{
    (void)state;
    gn__buf g;
    gn__buf_init(&g);
    static uint8_t payload[1 << 16];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7);
    char name[64];
    for (int i = 0; i < 200000; i++) {
        gn__buf node, e1, a1;
        gn__buf_init(&node);
        gn__buf_init(&e1);
        gn__buf_init(&a1);
        snprintf(name, sizeof name, "block%d/conv/Conv2D", i);
        w_str(&node, 1, name);
        w_str(&node, 2, "Conv2D");
        w_str(&node, 3, "input:0");
        w_str(&node, 3, "weights");
        w_str(&node, 4, "/device:GPU:0");
        w_tag(&a1, 6, 0);
        w_varint(&a1, 1);
        w_str(&e1, 1, "T");
        w_msg(&e1, 2, &a1);
        w_msg(&node, 5, &e1);
        if (i % 1000 == 0) {
            gn__buf t, av, e2;
            gn__buf_init(&t);
            gn__buf_init(&av);
            gn__buf_init(&e2);
            w_ld(&t, 4, payload, sizeof payload);
            w_msg(&av, 8, &t);
            w_str(&e2, 1, "value");
            w_msg(&e2, 2, &av);
            w_msg(&node, 5, &e2);
        }
        w_msg(&g, 1, &node);
    }
    assert_false(g.oom);
    gn__err e;
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)g.data,
                                        g.len, 100, &e),
                         GN_OK);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
        if (ms < best) best = ms;
    }
    print_message("%.1f MiB GraphDef (200000 nodes): %.2f ms, %.0f MiB/s\n", g.len / 1048576.0,
                  best, g.len / 1048576.0 / (best / 1e3));
    gn__buf_free(&g);
}

static void test_corpus_binaries(void **state)
{
    (void)state;
    static const char *const files[] = {
        "ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb",
        "onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb",
        "tensorflow__rust/examples__addition__model.pb",
        "tensorflow__tensorflow/tensorflow__core__graph__regularization__testdata__bert1/saved_model.pb",
    };
    char path[1024];
    int seen = 0;
    for (size_t i = 0; i < GN__ARRAY_LEN(files); i++) {
        if (!gn_test_corpus(files[i], path, sizeof path)) continue;
        size_t n;
        unsigned char *b = gn_test_slurp(path, &n);
        assert_non_null(b);
        const ProtobufCMessageDescriptor *d = strstr(files[i], "saved_model.pb")
                                                  ? &tensorflow__saved_model__descriptor
                                                  : &tensorflow__graph_def__descriptor;
        expect_ok(d, b, n);
        /* and every truncation of the first 4 KiB is caught or valid */
        for (size_t len = 0; len < n && len < 4096; len += 7) {
            gn__err e;
            gn_status s = gn__wire_check(d, b, len, 100, &e);
            if (s != GN_OK) assert_memory_equal(e.msg, "byte ", 5);
        }
        free(b);
        seen++;
    }
    if (!seen) {
        print_message("corpus %s absent: skipped\n", GN_CORPUS_DIR);
        skip();
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gn__err e;
    assert_int_equal(gn__wire_check(NULL, (const uint8_t *)"", 0, 100, &e), GN_ERR_ARG);
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, NULL, 5, 100, &e), GN_ERR_ARG);
    /* max_depth 0: the root only */
    assert_int_equal(gn__wire_check(&tensorflow__graph_def__descriptor, (const uint8_t *)"\x0a\x00", 2, 0, &e),
                     GN_ERR_PARSE);
    assert_string_equal(e.msg, "byte 0: nesting deeper than 0 levels in field 1 (node) of tensorflow.GraphDef");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_messages),
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_framing_errors),
        cmocka_unit_test(test_wrong_wire_type),
        cmocka_unit_test(test_packed_fields),
        cmocka_unit_test(test_path_and_node_name),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_speed),
        cmocka_unit_test(test_corpus_binaries),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
