/* Loading and writing: formats, and every kind of bad input getting a clear
 * error that names the file, the position and the node, with no crash and no
 * output file left behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "testutil.h"

/* Loads text from memory; returns the status and copies the message. */
static gn_status load_text(const char *text, char *msg, size_t msglen)
{
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "t.pbtxt", NULL, &g);
    snprintf(msg, msglen, "%s", gn_graph_errmsg(g));
    gn_graph_free(g);
    return s;
}

static void expect_error(const char *text, gn_status code, const char *want)
{
    char msg[2048];
    gn_status s = load_text(text, msg, sizeof msg);
    if (s != code || !strstr(msg, want))
        fail_msg("status %d (want %d), message:\n  %s\nwanted it to contain:\n  %s", s, code, msg, want);
}

static size_t varint_len(size_t v)
{
    size_t n = 1;
    while (v > 0x7f) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t put_varint(unsigned char *p, size_t v)
{
    size_t n = 0;
    do {
        p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

#define CONST_F32 \
    "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }" \
    " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 } } } }\n"

static void test_good_text_and_defaults(void **state)
{
    (void)state;
    const char *t = "# a comment\n" CONST_F32
                    "node { name: 'r' op: 'Relu' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                    "versions { producer: 27 }\n";
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(t, strlen(t), "t.pbtxt", NULL, &g), GN_OK);
    assert_int_equal(gn_graph_node_count(g), 2);
    assert_string_equal(gn_graph_node_op(g, 1), "Relu");
    char in[64];
    assert_int_equal(gn_graph_node_input(g, 1, 0, in, sizeof in), GN_OK);
    assert_string_equal(in, "c");
    /* exact text written back: attrs sorted, strings double-quoted */
    void *txt;
    size_t n;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_TEXT, &txt, &n), GN_OK);
    const char *want =
        "node {\n  name: \"c\"\n  op: \"Const\"\n  attr {\n    key: \"dtype\"\n    value {\n      type: DT_FLOAT\n"
        "    }\n  }\n  attr {\n    key: \"value\"\n    value {\n      tensor {\n        dtype: DT_FLOAT\n"
        "        tensor_shape {\n          dim {\n            size: 2\n          }\n        }\n"
        "        float_val: 1\n      }\n    }\n  }\n}\n"
        "node {\n  name: \"r\"\n  op: \"Relu\"\n  input: \"c\"\n  attr {\n    key: \"T\"\n    value {\n"
        "      type: DT_FLOAT\n    }\n  }\n}\nversions {\n  producer: 27\n}\n";
    assert_string_equal((char *)txt, want);
    gn_free(txt);
    gn_graph_free(g);
}

static void test_empty_inputs(void **state)
{
    (void)state;
    expect_error("", GN_ERR_PARSE, "t.pbtxt: empty model");
    expect_error("   \n\t\n", GN_ERR_PARSE, "t.pbtxt: empty model");
    expect_error("# only a comment\n# and another\n", GN_ERR_PARSE, "t.pbtxt: empty model");
    expect_error("versions { producer: 1 }\n", GN_ERR_PARSE, "t.pbtxt: empty model: no nodes and no functions");
}

static void test_graph_errors(void **state)
{
    (void)state;
    expect_error(CONST_F32 "node { name: 'r' op: 'Relu' input: 'missing' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                 GN_ERR_GRAPH, "t.pbtxt: line 2:1: node 'r' (Relu): input 0 names missing node 'missing'");
    expect_error(CONST_F32 "node { name: 'r' op: 'Relu' input: 'c:3' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                 GN_ERR_GRAPH, "t.pbtxt: line 2:1: node 'r' (Relu): input 0 refers to output 3 of 'c' (Const), which has 1 output");
    expect_error(CONST_F32 CONST_F32, GN_ERR_GRAPH, "t.pbtxt: line 2:1: node 'c' (Const): duplicate node name");
    expect_error("node { name: 'a' op: 'Identity' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                 "node { name: 'b' op: 'Identity' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                 GN_ERR_GRAPH, "cycle in the graph outside a loop");
    expect_error(CONST_F32 "node { name: 'r' op: 'Relu' input: 'c' attr { key: 'T' value { s: 'float' } } }\n",
                 GN_ERR_GRAPH, "t.pbtxt: line 2:1: node 'r' (Relu): attr 'T'");
    expect_error("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
                 " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }"
                 " tensor_content: '\\000\\000\\200\\077' } } } }\n",
                 GN_ERR_GRAPH, "node 'c' (Const): attr 'value': tensor_content has 4 bytes; DT_FLOAT with 3 elements needs 12");
    /* more typed values than elements: the field named, float8 (one byte each) as the others */
    expect_error("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
                 " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }"
                 " float_val: 1 float_val: 2 float_val: 3 } } } }\n",
                 GN_ERR_GRAPH, "node 'c' (Const): attr 'value': float_val has 3 values for 2 elements");
    expect_error("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT8_E4M3FN } }"
                 " attr { key: 'value' value { tensor { dtype: DT_FLOAT8_E4M3FN tensor_shape { dim { size: 2 } }"
                 " float8_val: '\\001\\002\\003' } } } }\n",
                 GN_ERR_GRAPH, "node 'c' (Const): attr 'value': float8_val has 3 values for 2 elements");
    expect_error("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
                 " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4294967296 }"
                 " dim { size: 4294967296 } } } } } }\n",
                 GN_ERR_GRAPH, "node 'c' (Const): attr 'value': element count of the shape overflows int64");
    expect_error("node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }"
                 " attr { key: 'shape' value { shape { dim { size: -5 } } } } }\n",
                 GN_ERR_GRAPH, "node 'p' (Placeholder): attr 'shape': dim 0 is -5");
    expect_error(CONST_F32 "node { name: 'a' op: 'AddV2' input: '^c' input: 'c' input: 'c'"
                 " attr { key: 'T' value { type: DT_FLOAT } } }\n",
                 GN_ERR_GRAPH, "t.pbtxt: line 2:1: node 'a' (AddV2): data input 1 'c' comes after a control input");
    expect_error(CONST_F32 "node { name: 'a' op: 'AddV2' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                 GN_ERR_GRAPH, "node 'a' (AddV2): has 1 data input, AddV2 takes 2");
}

static void test_text_syntax_errors(void **state)
{
    (void)state;
    expect_error("node { name: 'a' op: 'NoOp' }\nnode { nmae: 'b' }\n", GN_ERR_PARSE, "t.pbtxt: line 2:8: unknown field 'nmae'");
    expect_error("node { name: 'a' op: 'NoOp'\n", GN_ERR_PARSE, "t.pbtxt: line 2:");
    expect_error("node { name: \"unterminated }\n", GN_ERR_PARSE, "t.pbtxt: line 1:");
    /* nesting deep enough to overflow a naive recursive parser */
    size_t depth = 200000;
    const char *open = "attr { key: 'a' value { func { ";
    size_t ol = strlen(open);
    char *t = malloc(depth * (ol + 4) + 128);
    assert_non_null(t);
    size_t n = (size_t)sprintf(t, "node { name: 'x' op: 'NoOp' ");
    for (size_t i = 0; i < depth; i++) {
        memcpy(t + n, open, ol);
        n += ol;
    }
    t[n] = 0;
    expect_error(t, GN_ERR_PARSE, "nesting deeper than 100");
    free(t);
}

/* binary: a small valid GraphDef, truncated at every offset */
static void test_binary_truncation_and_garbage(void **state)
{
    (void)state;
    const char *t = CONST_F32 "node { name: 'r' op: 'Relu' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(t, strlen(t), "t.pbtxt", NULL, &g), GN_OK);
    void *bin;
    size_t n;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &bin, &n), GN_OK);
    gn_graph_free(g);
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.format = GN_FORMAT_BINARY;
    int errors = 0;
    for (size_t cut = 0; cut < n; cut++) {
        gn_graph *h = NULL;
        gn_status s = gn_graph_load_buffer(bin, cut, "cut.pb", &lo, &h);
        if (s != GN_OK) {
            errors++;
            const char *m = gn_graph_errmsg(h);
            if (strncmp(m, "cut.pb: ", 8) != 0) fail_msg("cut at %zu: message without the file name: %s", cut, m);
        }
        gn_graph_free(h);
    }
    assert_true(errors > (int)n / 2);
    free(bin);
    /* random bytes */
    unsigned seed = 12345;
    unsigned char junk[4096];
    for (int round = 0; round < 200; round++) {
        size_t len = (size_t)(round * 20 + 1);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            junk[i] = (unsigned char)(seed >> 16);
        }
        gn_graph *h = NULL;
        gn_status s = gn_graph_load_buffer(junk, len, "junk.pb", &lo, &h);
        if (s == GN_OK) assert_true(gn_graph_node_count(h) > 0 || gn_graph_function_count(h) > 0);
        else assert_true(strncmp(gn_graph_errmsg(h), "junk.pb: ", 9) == 0);
        gn_graph_free(h);
    }
}

static void test_binary_huge_length_and_deep_nesting(void **state)
{
    (void)state;
    /* field 1 (node), length 3 GiB, no payload */
    const unsigned char huge[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x0c};
    gn_graph *g = NULL;
    assert_int_not_equal(gn_graph_load_buffer(huge, sizeof huge, "huge.pb", NULL, &g), GN_OK);
    const char *m = gn_graph_errmsg(g);
    if (!strstr(m, "huge.pb: byte 0") && !strstr(m, "huge.pb: byte 1"))
        fail_msg("message: %s", m);
    gn_graph_free(g);

    /* NodeDef.attr -> AttrValue.func -> NameAttrList.attr -> ... 200,000 deep,
     * built inside out: each level is
     * AttrValue{ func(10): NameAttrList{ attr(2): entry{ key(1): "a", value(2): <prev> } } } */
    size_t depth = 200000;
    /* sizes inside out, then the bytes outside in: linear time */
    size_t *inner = malloc((depth + 1) * sizeof *inner);
    assert_non_null(inner);
    inner[0] = 0;
    for (size_t i = 0; i < depth; i++) {
        size_t el = 3 + 1 + varint_len(inner[i]) + inner[i];
        size_t nl = 1 + varint_len(el) + el;
        inner[i + 1] = 1 + varint_len(nl) + nl;
    }
    size_t n = inner[depth];
    unsigned char *buf = malloc(n + 16);
    assert_non_null(buf);
    size_t w = 0;
    for (size_t i = depth; i-- > 0;) {
        size_t el = 3 + 1 + varint_len(inner[i]) + inner[i];
        size_t nl = 1 + varint_len(el) + el;
        buf[w++] = 0x52;
        w += put_varint(buf + w, nl);
        buf[w++] = 0x12;
        w += put_varint(buf + w, el);
        buf[w++] = 0x0a;
        buf[w++] = 0x01;
        buf[w++] = 'a';
        buf[w++] = 0x12;
        w += put_varint(buf + w, inner[i]);
    }
    assert_int_equal(w, n);
    free(inner);
    /* GraphDef{ node(1): NodeDef{ name:"x" op:"NoOp" attr(5): entry{ key:"a" value: <chain> } } } */
    size_t entry_len = 3 + 1 + varint_len(n) + n;
    size_t node_len = 3 + 6 + 1 + varint_len(entry_len) + entry_len;
    size_t total = 1 + varint_len(node_len) + node_len;
    unsigned char *full = malloc(total);
    assert_non_null(full);
    size_t k = 0;
    full[k++] = 0x0a;
    k += put_varint(full + k, node_len);
    memcpy(full + k, "\x0a\x01x\x12\x04NoOp", 9);
    k += 9;
    full[k++] = 0x2a;
    k += put_varint(full + k, entry_len);
    memcpy(full + k, "\x0a\x01" "a" "\x12", 4);
    k += 4;
    k += put_varint(full + k, n);
    memcpy(full + k, buf, n);
    k += n;
    assert_int_equal(k, total);
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.format = GN_FORMAT_BINARY;
    g = NULL;
    assert_int_equal(gn_graph_load_buffer(full, total, "deep.pb", &lo, &g), GN_ERR_PARSE);
    m = gn_graph_errmsg(g);
    if (!strstr(m, "deep.pb: byte ") || !strstr(m, "nesting deeper than 100")) fail_msg("message: %s", m);
    gn_graph_free(g);
    free(full);
    free(buf);
}

/* The CLI: exit 1 and a one-line error, no output file left behind. */
static void test_cli_bad_input_leaves_nothing(void **state)
{
    (void)state;
    const char *tmp = gn_test_tmpdir();
    char bad[1024], out[1024];
    snprintf(bad, sizeof bad, "%s/bad.pbtxt", tmp);
    snprintf(out, sizeof out, "%s/never.pb", tmp);
    const char *t = CONST_F32 "node { name: 'r' op: 'Relu' input: 'nowhere' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    write_file(bad, t, strlen(t));
    char *o = NULL;
    int rc = gn_test_sh(&o, "'%s' convert '%s' '%s'", GN_CLI_PATH, bad, out);
    assert_int_equal(rc, 1);
    char want[2048];
    snprintf(want, sizeof want, "grapnel: %s: line 2:1: node 'r' (Relu): input 0 names missing node 'nowhere'\n", bad);
    assert_string_equal(o, want);
    free(o);
    assert_false(gn_test_file_exists(out));
    /* usage errors exit 2 */
    rc = gn_test_sh(&o, "'%s' convert only-one-arg", GN_CLI_PATH);
    assert_int_equal(rc, 2);
    free(o);
    rc = gn_test_sh(&o, "'%s' frobnicate", GN_CLI_PATH);
    assert_int_equal(rc, 2);
    free(o);
    rc = gn_test_sh(&o, "'%s' inspect --help", GN_CLI_PATH);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(o, "usage: grapnel inspect"));
    free(o);
    /* a missing file */
    rc = gn_test_sh(&o, "'%s' inspect '%s/nope.pb'", GN_CLI_PATH, tmp);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(o, "nope.pb: No such file or directory"));
    free(o);
}

/* A failed write leaves nothing: writing into a missing directory. */
static void test_atomic_write(void **state)
{
    (void)state;
    const char *t = CONST_F32;
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(t, strlen(t), "t.pbtxt", NULL, &g), GN_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/no/such/dir/x.pb", gn_test_tmpdir());
    assert_int_equal(gn_graph_save(g, path, GN_FORMAT_AUTO), GN_ERR_IO);
    assert_non_null(strstr(gn_graph_errmsg(g), "x.pb: cannot create temporary file"));
    /* and a good write is deterministic */
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/d1.pb", gn_test_tmpdir());
    snprintf(p2, sizeof p2, "%s/d2.pb", gn_test_tmpdir());
    assert_int_equal(gn_graph_save(g, p1, GN_FORMAT_AUTO), GN_OK);
    assert_int_equal(gn_graph_save(g, p2, GN_FORMAT_AUTO), GN_OK);
    size_t n1, n2;
    unsigned char *a = gn_test_slurp(p1, &n1), *b = gn_test_slurp(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
    gn_graph_free(g);
}

/* Large tensors: a binary GraphDef's large Const tensors point into the file's
 * bytes, read once into memory of the graph's own; the file changed or cut
 * after the load changes nothing. Saving writes the large values from where
 * they are (gathered writes): the same bytes as gn_graph_serialize. Covered:
 * a value kept whole from the file (its encoding), a tensor_content and a
 * float_val tensor packed from the graph's own memory, each over 32 KiB. */
static void test_large_tensors_borrowed_and_gathered(void **state)
{
    (void)state;
    enum { NF = 12000, NB = 50000 };
    size_t cap = (size_t)NF * 24 + (size_t)NB * 4 + 4096, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    n += (size_t)snprintf(t + n, cap - n,
                          "node { name: 'f' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
                          " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: %d } }",
                          NF);
    for (int i = 0; i < NF; i++) n += (size_t)snprintf(t + n, cap - n, " float_val: %d.5", i % 977);
    n += (size_t)snprintf(t + n, cap - n,
                          " } } } }\nnode { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_UINT8 } }"
                          " attr { key: 'value' value { tensor { dtype: DT_UINT8 tensor_shape { dim { size: %d } }"
                          " tensor_content: '",
                          NB);
    for (int i = 0; i < NB; i++) n += (size_t)snprintf(t + n, cap - n, "\\%03o", (unsigned)(i * 7 + 3) & 0xff);
    n += (size_t)snprintf(t + n, cap - n, "' } } } }\n");
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(t, n, "big.pbtxt", NULL, &g), GN_OK);
    free(t);
    void *want = NULL;
    size_t want_len = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &want, &want_len), GN_OK);
    assert_true(want_len > (size_t)NF * 4 + NB);
    char p1[1024], p2[1024];
    snprintf(p1, sizeof p1, "%s/big1.pb", gn_test_tmpdir());
    snprintf(p2, sizeof p2, "%s/big2.pb", gn_test_tmpdir());
    /* packed from the graph's own memory, gathered */
    assert_int_equal(gn_graph_save(g, p1, GN_FORMAT_BINARY), GN_OK);
    gn_graph_free(g);
    size_t n1;
    unsigned char *b1 = gn_test_slurp(p1, &n1);
    assert_int_equal(n1, want_len);
    assert_memory_equal(b1, want, want_len);
    free(b1);
    /* loaded from the file; then the file is overwritten in place and cut */
    assert_int_equal(gn_graph_load(p1, NULL, &g), GN_OK);
    FILE *f = fopen(p1, "r+b");
    assert_non_null(f);
    unsigned char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    for (size_t off = 0; off < want_len; off += sizeof junk) fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    assert_int_equal(truncate(p1, 10), 0);
    void *again = NULL;
    size_t again_len = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &again, &again_len), GN_OK);
    assert_int_equal(again_len, want_len);
    assert_memory_equal(again, want, want_len);
    free(again);
    /* the loaded encodings and tensor_content, gathered */
    assert_int_equal(gn_graph_save(g, p2, GN_FORMAT_BINARY), GN_OK);
    size_t n2;
    unsigned char *b2 = gn_test_slurp(p2, &n2);
    assert_int_equal(n2, want_len);
    assert_memory_equal(b2, want, want_len);
    free(b2);
    /* a clone shares the bytes and outlives the graph they were loaded into */
    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    gn_graph_free(g);
    assert_int_equal(gn_graph_serialize(c, GN_FORMAT_BINARY, &again, &again_len), GN_OK);
    assert_int_equal(again_len, want_len);
    assert_memory_equal(again, want, want_len);
    free(again);
    gn_graph_free(c);
    free(want);

    /* a large tensor in a file of mostly small nodes: its bytes are copied
     * and the file's image is let go; the same bytes either way */
    cap = 64 * 1024 + 400 * 128;
    t = malloc(cap);
    assert_non_null(t);
    n = (size_t)snprintf(t, cap,
                         "node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_UINT8 } }"
                         " attr { key: 'value' value { tensor { dtype: DT_UINT8 tensor_shape { dim { size: 1500 } }"
                         " tensor_content: '");
    for (int i = 0; i < 1500; i++) n += (size_t)snprintf(t + n, cap - n, "\\%03o", (unsigned)(i * 5 + 1) & 0xff);
    n += (size_t)snprintf(t + n, cap - n, "' } } } }\n");
    for (int i = 0; i < 400; i++)
        n += (size_t)snprintf(t + n, cap - n, "node { name: 'a_rather_long_node_name_%04d' op: 'NoOp' }\n", i);
    assert_int_equal(gn_graph_load_buffer(t, n, "mixed.pbtxt", NULL, &g), GN_OK);
    free(t);
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &want, &want_len), GN_OK);
    assert_int_equal(gn_graph_save(g, p1, GN_FORMAT_BINARY), GN_OK);
    gn_graph_free(g);
    assert_int_equal(gn_graph_load(p1, NULL, &g), GN_OK);
    assert_int_equal(truncate(p1, 0), 0);
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &again, &again_len), GN_OK);
    assert_int_equal(again_len, want_len);
    assert_memory_equal(again, want, want_len);
    free(again);
    free(want);
    gn_graph_free(g);
}

/* gzip input is detected from the content */
static void test_gzip(void **state)
{
    (void)state;
    const char *tmp = gn_test_tmpdir();
    char p[1024];
    snprintf(p, sizeof p, "%s/z.pbtxt", tmp);
    write_file(p, CONST_F32, strlen(CONST_F32));
    char *o = NULL;
    assert_int_equal(gn_test_sh(&o, "gzip -kf '%s' && '%s' inspect '%s.gz'", p, GN_CLI_PATH, p), 0);
    assert_non_null(strstr(o, "nodes: 1\n"));
    free(o);
}

/* gn_version() is made from the macros of include/grapnel/version.h, and CMake's
 * project version (the shared library's, grapnel.pc's) is read from the same file. */
static void test_version_is_the_macros(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", GN_VERSION_MAJOR, GN_VERSION_MINOR, GN_VERSION_PATCH);
    assert_string_equal(gn_version(), want);
    assert_string_equal(GN_VERSION_STRING, want);
    assert_string_equal(gn_version(), GN_PROJECT_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_text_and_defaults),
        cmocka_unit_test(test_empty_inputs),
        cmocka_unit_test(test_graph_errors),
        cmocka_unit_test(test_text_syntax_errors),
        cmocka_unit_test(test_binary_truncation_and_garbage),
        cmocka_unit_test(test_binary_huge_length_and_deep_nesting),
        cmocka_unit_test(test_cli_bad_input_leaves_nothing),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_large_tensors_borrowed_and_gathered),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_version_is_the_macros),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
