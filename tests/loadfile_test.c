/* Model files are read whole (gn__read_file) or, when large, mapped
 * (gn__load_file): a mapped file gives the same graph, byte for byte, as the
 * same content read into memory, for text (which relies on the byte after the
 * end reading 0) and binary input; a file whose size is a multiple of the page
 * size is read, not mapped; a truncated large file fails as a small one does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "grapnel/grapnel.h"
#include "testutil.h"
#include "wirebuild.h"

#define BIG ((size_t)9 << 20) /* over gn__load_file's 8 MiB threshold */

static const char k_graph_text[] =
    "node { name: \"a\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
    "  attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2.5 } } } }\n"
    "node { name: \"b\" op: \"Identity\" input: \"a\" attr { key: \"T\" value { type: DT_FLOAT } } }";

static char *tmp_path(const char *name)
{
    static char buf[4][4096];
    static int k;
    char *p = buf[k++ & 3];
    snprintf(p, 4096, "%s/%s", gn_test_tmpdir(), name);
    return p;
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Comment lines up to `size` bytes in all, then the graph, with no newline
 * after its last brace: the text reader stops at the byte after the end. */
static char *padded_text(size_t size)
{
    size_t g = strlen(k_graph_text);
    assert_true(size > g + 2);
    char *t = malloc(size);
    assert_non_null(t);
    size_t pad = size - g;
    for (size_t i = 0; i < pad; i += 64) {
        size_t line = pad - i < 64 ? pad - i : 64;
        t[i] = '#';
        memset(t + i + 1, 'x', line - 1);
        t[i + line - 1] = '\n';
    }
    memcpy(t + pad, k_graph_text, g);
    return t;
}

/* The binary serialization of the graph in file `path`. */
static void *saved_binary(const char *path, size_t *n)
{
    gn_graph *g = NULL;
    gn_status s = gn_graph_load(path, NULL, &g);
    if (s != GN_OK) fail_msg("%s: %s", path, g ? gn_graph_errmsg(g) : "no graph");
    void *out = NULL;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &out, n), GN_OK);
    gn_graph_free(g);
    return out;
}

static void check_loads_like_small(const char *big_path)
{
    const char *small = tmp_path("small.pbtxt");
    write_bytes(small, k_graph_text, strlen(k_graph_text));
    size_t na = 0, nb = 0;
    void *a = saved_binary(small, &na), *b = saved_binary(big_path, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    gn_free(a);
    gn_free(b);
}

static void test_large_text_is_mapped(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    size_t size = BIG + 123;
    assert_true(size % (size_t)page != 0);
    char *t = padded_text(size);
    const char *path = tmp_path("big.pbtxt");
    write_bytes(path, t, size);
    free(t);

    uint8_t *data = NULL;
    size_t n = 0;
    bool mapped = false;
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__load_file(path, &data, &n, &mapped, &e), GN_OK);
    assert_true(mapped);
    assert_int_equal(n, size);
    assert_int_equal(data[n - 1], '}');
    assert_int_equal(data[n], 0); /* the rest of the last page */
    gn__release_file(data, n, mapped);

    check_loads_like_small(path);
}

static void test_page_multiple_is_read(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    size_t size = BIG;
    assert_true(size % (size_t)page == 0);
    char *t = padded_text(size);
    const char *path = tmp_path("pages.pbtxt");
    write_bytes(path, t, size);
    free(t);

    uint8_t *data = NULL;
    size_t n = 0;
    bool mapped = true;
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__load_file(path, &data, &n, &mapped, &e), GN_OK);
    assert_false(mapped);
    assert_int_equal(n, size);
    assert_int_equal(data[n], 0);
    gn__release_file(data, n, mapped);

    check_loads_like_small(path);
}

/* A binary GraphDef of one Const with a float tensor of `count` elements. */
static wb big_binary(size_t count)
{
    float *v = malloc(count * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < count; i++) v[i] = (float)(i % 1000) * 0.5f;
    wb dim = {0}, shape = {0}, tensor = {0}, val = {0}, dt = {0}, node = {0}, graph = {0};
    wb_varint(&dim, 8); /* TensorShapeProto.Dim.size = field 1, varint */
    wb_varint(&dim, count);
    wb_msg(&shape, 2, &dim);
    wb_varint(&tensor, 8); /* TensorProto.dtype = 1 (DT_FLOAT) */
    wb_varint(&tensor, 1);
    wb_msg(&tensor, 2, &shape);
    wb_ld(&tensor, 4, v, count * sizeof *v);
    wb_msg(&val, 8, &tensor); /* AttrValue.tensor */
    wb_varint(&dt, 6 << 3);   /* AttrValue.type */
    wb_varint(&dt, 1);
    wb_str(&node, 1, "w");
    wb_str(&node, 2, "Const");
    wb_attr(&node, "dtype", &dt);
    wb_attr(&node, "value", &val);
    wb_msg(&graph, 1, &node);
    free(v);
    free(dim.p);
    free(shape.p);
    free(tensor.p);
    free(val.p);
    free(dt.p);
    free(node.p);
    return graph;
}

static void test_large_binary_is_mapped(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    size_t count = BIG / 4 + 7;
    wb g = big_binary(count);
    if (g.n % (size_t)page == 0) {
        free(g.p);
        g = big_binary(count + 1);
    }
    const char *path = tmp_path("big.pb");
    write_bytes(path, g.p, g.n);

    uint8_t *data = NULL;
    size_t n = 0;
    bool mapped = false;
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__load_file(path, &data, &n, &mapped, &e), GN_OK);
    assert_true(mapped);
    assert_int_equal(n, g.n);
    assert_memory_equal(data, g.p, n);
    gn__release_file(data, n, mapped);

    /* the same bytes from memory and from the mapped file: the same graph */
    gn_graph *a = NULL, *b = NULL;
    assert_int_equal(gn_graph_load_buffer(g.p, g.n, "big.pb", NULL, &a), GN_OK);
    assert_int_equal(gn_graph_load(path, NULL, &b), GN_OK);
    assert_int_equal(gn_graph_node_count(b), 1);
    void *sa = NULL, *sb = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(gn_graph_serialize(a, GN_FORMAT_BINARY, &sa, &la), GN_OK);
    assert_int_equal(gn_graph_serialize(b, GN_FORMAT_BINARY, &sb, &lb), GN_OK);
    assert_int_equal(la, lb);
    assert_memory_equal(sa, sb, la);
    assert_int_equal(lb, g.n); /* our writer's bytes are the ones built above */
    assert_memory_equal(sb, g.p, lb);
    gn_free(sa);
    gn_free(sb);
    gn_graph_free(a);
    gn_graph_free(b);

    /* cut in the tensor: the error a read file gives, naming the file */
    const char *cut = tmp_path("cut.pb");
    write_bytes(cut, g.p, g.n - 1001);
    gn_graph *c = NULL;
    assert_int_not_equal(gn_graph_load(cut, NULL, &c), GN_OK);
    const char *msg = c ? gn_graph_errmsg(c) : "";
    assert_non_null(strstr(msg, "cut.pb"));
    gn_graph_free(c);
    free(g.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_text_is_mapped),
        cmocka_unit_test(test_page_multiple_is_read),
        cmocka_unit_test(test_large_binary_is_mapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
