/* The binary GraphDef decoder and writer of src/io/wiregraph.c against the
 * protobuf-c path they replace: the same graph (compared through its bytes),
 * the same error for every truncation and corruption, the same output bytes
 * as protobuf_c_message_pack of gn__graph_to_graphdef, attr values shared
 * between nodes, unknown fields kept. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "io/graphdef.h"
#include "testutil.h"
#include "wirebuild.h"

/* ---- reference paths ----------------------------------------------------------- */
/* The loader as it was: protobuf-c unpack of the whole file, then the IR. */
static gn_status old_load(const uint8_t *d, size_t n, const char *name, gn_graph **out)
{
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    *out = g;
    gn__blob *blob = gn__blob_new(64 << 10);
    assert_non_null(blob);
    Tensorflow__GraphDef *gd = NULL;
    gn_status s = gn__decode_graphdef(d, n, false, blob, &gd, &g->err);
    if (s != GN_OK) {
        gn__err_prefix(&g->err, "%s", name);
    } else if (gd->n_node == 0 && (!gd->library || gd->library->n_function == 0)) {
        s = gn__fail(&g->err, GN_ERR_PARSE, "%s: empty model: no nodes and no functions", name);
    } else {
        gn__source src = {name, d, n, false};
        s = gn__graph_from_graphdef(g, gd, blob, &src);
    }
    gn__blob_unref(blob);
    return s;
}

static gn_status new_load(const uint8_t *d, size_t n, const char *name, gn_graph **out)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = 0;
    o.format = GN_FORMAT_BINARY;
    return gn_graph_load_buffer(d, n, name, &o, out);
}

/* protobuf_c_message_pack of gn__graph_to_graphdef's message. */
static uint8_t *ref_pack(gn_graph *g, size_t *n)
{
    gn__arena a;
    gn__arena_init(&a, 4096);
    Tensorflow__GraphDef *gd = NULL;
    assert_int_equal(gn__graph_to_graphdef(g, &a, &gd, &g->err), GN_OK);
    *n = protobuf_c_message_get_packed_size(&gd->base);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(protobuf_c_message_pack(&gd->base, b), *n);
    gn__arena_free(&a);
    return b;
}

static uint8_t *new_pack(gn_graph *g, size_t *n)
{
    void *b = NULL;
    if (gn_graph_serialize(g, GN_FORMAT_BINARY, &b, n) != GN_OK) fail_msg("serialize: %s", gn_graph_errmsg(g));
    return b;
}

/* The writer gives protobuf-c's bytes. */
static void check_writer(gn_graph *g, const char *what)
{
    size_t n1, n2;
    uint8_t *a = ref_pack(g, &n1);
    uint8_t *b = new_pack(g, &n2);
    if (n1 != n2 || memcmp(a, b, n1) != 0) fail_msg("%s: writer gives %zu bytes, protobuf-c %zu (or other bytes)", what, n2, n1);
    free(a);
    gn_free(b);
}

/* Old and new loaders agree: the same status and message, or graphs that
 * write the same bytes. */
static void check_same(const uint8_t *d, size_t n, const char *what)
{
    gn_graph *a = NULL, *b = NULL;
    gn_status sa = old_load(d, n, "x.pb", &a);
    gn_status sb = new_load(d, n, "x.pb", &b);
    if (sa != sb) fail_msg("%s: status %d, was %d (%s | %s)", what, sb, sa, gn_graph_errmsg(b), gn_graph_errmsg(a));
    if (sa != GN_OK) {
        if (strcmp(gn_graph_errmsg(a), gn_graph_errmsg(b)) != 0)
            fail_msg("%s:\n new: %s\n old: %s", what, gn_graph_errmsg(b), gn_graph_errmsg(a));
    } else {
        assert_int_equal(gn_graph_node_count(a), gn_graph_node_count(b));
        size_t n1, n2;
        uint8_t *x = ref_pack(a, &n1), *y = ref_pack(b, &n2);
        if (n1 != n2 || memcmp(x, y, n1) != 0) fail_msg("%s: decoded graphs differ", what);
        free(x);
        free(y);
        check_writer(b, what);
    }
    gn_graph_free(a);
    gn_graph_free(b);
}

/* ---- building wire bytes ----------------------------------------------------------- */
/* wb, wb_varint, wb_ld, wb_str, wb_msg, wb_attr: tests/wirebuild.h */

/* AttrValue {type: t} */
static wb attr_type(int t)
{
    wb v = {0};
    wb_varint(&v, 6 << 3 | 0);
    wb_varint(&v, (uint64_t)t);
    return v;
}

/* A small graph: Placeholder, Const (a float tensor), AddV2, Identity with a
 * control input; attrs in TensorFlow's order. */
static wb small_graph(void)
{
    wb g = {0}, n = {0};
    wb f32 = attr_type(1);
    wb shape = {0};
    { /* shape { dim { size: 2 } } */
        wb dim = {0}, sh = {0};
        wb_varint(&dim, 1 << 3);
        wb_varint(&dim, 2);
        wb_msg(&sh, 2, &dim);
        wb_msg(&shape, 7, &sh);
        free(dim.p);
        free(sh.p);
    }
    wb_str(&n, 1, "x");
    wb_str(&n, 2, "Placeholder");
    wb_attr(&n, "dtype", &f32);
    wb_attr(&n, "shape", &shape);
    wb_msg(&g, 1, &n);
    n.n = 0;
    wb tensor = {0};
    { /* value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.5 } } */
        wb t = {0}, dim = {0}, sh = {0};
        wb_varint(&t, 1 << 3);
        wb_varint(&t, 1);
        wb_varint(&dim, 1 << 3);
        wb_varint(&dim, 2);
        wb_msg(&sh, 2, &dim);
        wb_msg(&t, 2, &sh);
        float f = 1.5f;
        wb_ld(&t, 5, &f, 4); /* packed, as proto3 writes it */
        wb_msg(&tensor, 8, &t);
        free(t.p);
        free(dim.p);
        free(sh.p);
    }
    wb_str(&n, 1, "c");
    wb_str(&n, 2, "Const");
    wb_attr(&n, "dtype", &f32);
    wb_attr(&n, "value", &tensor);
    wb_msg(&g, 1, &n);
    n.n = 0;
    wb_str(&n, 1, "add");
    wb_str(&n, 2, "AddV2");
    wb_str(&n, 3, "x");
    wb_str(&n, 3, "c:1");
    wb_str(&n, 4, "/device:CPU:0");
    wb_attr(&n, "T", &f32);
    wb_msg(&g, 1, &n);
    n.n = 0;
    wb_str(&n, 1, "out");
    wb_str(&n, 2, "Identity");
    wb_str(&n, 3, "add");
    wb_str(&n, 3, "^c");
    wb_attr(&n, "T", &f32);
    wb_msg(&g, 1, &n);
    wb v = {0};
    wb_varint(&v, 1 << 3);
    wb_varint(&v, 1645);
    wb_varint(&v, 2 << 3);
    wb_varint(&v, 12);
    wb_msg(&g, 4, &v);
    free(v.p);
    free(n.p);
    free(f32.p);
    free(shape.p);
    free(tensor.p);
    return g;
}

/* ---- tests ------------------------------------------------------------------------- */
static void test_small_graph(void **state)
{
    (void)state;
    wb g = small_graph();
    check_same(g.p, g.n, "small");
    gn_graph *a = NULL;
    assert_int_equal(new_load(g.p, g.n, "x.pb", &a), GN_OK);
    assert_int_equal(gn_graph_node_count(a), 4);
    /* one AttrValue for the three equal "T"/"dtype" encodings */
    gn_id x = gn__graph_find(a, "x"), add = gn__graph_find(a, "add"), out = gn__graph_find(a, "out");
    assert_ptr_equal(gn__node_attr(a, x, "dtype"), gn__node_attr(a, add, "T"));
    assert_ptr_equal(gn__node_attr(a, add, "T"), gn__node_attr(a, out, "T"));
    assert_int_equal(gn__node_attr(a, out, "T")->type, 1);
    /* edges, device, control input */
    const gn__node *n = &a->nodes[add];
    assert_int_equal(n->n_in, 2);
    assert_int_equal(n->in[0].node, x);
    assert_int_equal(n->in[1].node, gn__graph_find(a, "c"));
    assert_string_equal(gn__str(a, n->device), "/device:CPU:0");
    assert_int_equal(a->nodes[out].n_ctrl, 1);
    /* canonical input: written back byte for byte */
    size_t m;
    uint8_t *b = new_pack(a, &m);
    assert_int_equal(m, g.n);
    assert_memory_equal(b, g.p, m);
    gn_free(b);
    gn_graph_free(a);
    free(g.p);
}

/* Every truncation, and every single-byte corruption of a few kinds, gives
 * the old loader's status and message. */
static void test_truncation_and_corruption(void **state)
{
    (void)state;
    wb g = small_graph();
    char what[64];
    for (size_t k = 0; k < g.n; k++) {
        snprintf(what, sizeof what, "truncated at %zu", k);
        check_same(g.p, k, what);
    }
    uint8_t *c = malloc(g.n);
    assert_non_null(c);
    static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x07, 0x0a, 0x12, 0x1a, 0x2a, 0x3a, 0x5e, 0x7f, 0x80, 0xff};
    for (size_t k = 0; k < g.n; k++) {
        for (size_t v = 0; v < sizeof vals; v++) {
            memcpy(c, g.p, g.n);
            c[k] = vals[v];
            snprintf(what, sizeof what, "byte %zu set to 0x%02x", k, vals[v]);
            check_same(c, g.n, what);
        }
    }
    free(c);
    free(g.p);
}

/* NodeDefs the fast path hands to protobuf-c, and graph errors. */
static void test_unusual_nodes(void **state)
{
    (void)state;
    wb f32 = attr_type(1), i32 = attr_type(3);
    for (int kase = 0; kase < 15; kase++) {
        wb g = {0}, n = {0};
        wb_str(&n, 1, "x");
        wb_str(&n, 2, "Placeholder");
        wb_attr(&n, "dtype", &f32);
        wb_msg(&g, 1, &n);
        n.n = 0;
        switch (kase) {
        case 0: /* unknown varint field in a NodeDef, kept */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            wb_attr(&n, "T", &f32);
            wb_varint(&n, 99 << 3);
            wb_varint(&n, 7);
            break;
        case 1: /* experimental_debug_info */
        {
            wb dbg = {0};
            wb_str(&dbg, 1, "orig");
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            wb_attr(&n, "T", &f32);
            wb_msg(&n, 6, &dbg);
            free(dbg.p);
            break;
        }
        case 2: /* attrs out of order */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Cast");
            wb_str(&n, 3, "x");
            wb_attr(&n, "Truncate", &f32);
            wb_attr(&n, "SrcT", &f32);
            wb_attr(&n, "DstT", &i32);
            break;
        case 3: /* the same attr twice */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            wb_attr(&n, "T", &f32);
            wb_attr(&n, "T", &i32);
            break;
        case 4: /* duplicate node name */
            wb_str(&n, 1, "x");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            break;
        case 5: /* empty name */
            wb_str(&n, 2, "Identity");
            break;
        case 6: /* empty op */
            wb_str(&n, 1, "y");
            break;
        case 7: /* missing input */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "nowhere:1");
            break;
        case 8: /* data input after a control input */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "AddV2");
            wb_str(&n, 3, "^x");
            wb_str(&n, 3, "x");
            break;
        case 9: /* a NUL inside the name */
            wb_ld(&n, 1, "y\0z", 3);
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            break;
        case 10: /* name given twice: the last one counts */
            wb_str(&n, 1, "first");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 1, "y");
            wb_str(&n, 3, "x");
            break;
        case 11: /* attr entry without a value */
        {
            wb e = {0};
            wb_str(&e, 1, "T");
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            wb_msg(&n, 5, &e);
            free(e.p);
            break;
        }
        case 12: /* malformed input name */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x:z");
            break;
        case 14: /* output indices of several digits, written back as read */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "AddN");
            wb_str(&n, 3, "x:7");
            wb_str(&n, 3, "x:12");
            wb_str(&n, 3, "x:4096");
            wb_str(&n, 3, "^x");
            wb_attr(&n, "T", &f32);
            break;
        case 13: /* an unknown field in the GraphDef between the nodes, kept (written last) */
            wb_str(&n, 1, "y");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "x");
            wb_msg(&g, 1, &n);
            n.n = 0;
            wb_str(&g, 77, "kept");
            wb_str(&n, 1, "z");
            wb_str(&n, 2, "Identity");
            wb_str(&n, 3, "y");
            break;
        }
        wb_msg(&g, 1, &n);
        char what[32];
        snprintf(what, sizeof what, "case %d", kase);
        check_same(g.p, g.n, what);
        if (kase == 13) { /* canonical order: the unknown field after the nodes */
            static const uint8_t kept[7] = {0xea, 0x04, 0x04, 'k', 'e', 'p', 't'};
            size_t at = 0;
            while (at + 7 <= g.n && memcmp(g.p + at, kept, 7) != 0) at++;
            assert_true(at + 7 <= g.n);
            memmove(g.p + at, g.p + at + 7, g.n - at - 7);
            memcpy(g.p + g.n - 7, kept, 7);
        }
        if (kase == 0 || kase == 13 || kase == 14) {
            gn_graph *a = NULL;
            assert_int_equal(new_load(g.p, g.n, "x.pb", &a), GN_OK);
            size_t m;
            uint8_t *b = new_pack(a, &m);
            assert_int_equal(m, g.n); /* unknown fields survive */
            assert_memory_equal(b, g.p, m);
            gn_free(b);
            gn_graph_free(a);
        }
        free(n.p);
        free(g.p);
    }
    free(f32.p);
    free(i32.p);
}

/* Deeply nested AttrValue.func: refused by the depth check before protobuf-c
 * recurses, with the old message. */
static void test_deep_attr(void **state)
{
    (void)state;
    const int depth = 150;
    /* AttrValue{func: NameAttrList{attr: {key: "a", value: AttrValue{func: ...}}}} */
    wb v = {0};
    for (int i = 0; i < depth; i++) {
        wb e = {0}, nl = {0}, nv = {0};
        wb_str(&e, 1, "a");
        wb_msg(&e, 2, &v);
        wb_msg(&nl, 2, &e);
        wb_msg(&nv, 10, &nl);
        free(e.p);
        free(nl.p);
        free(v.p);
        v = nv;
    }
    wb g = {0}, n = {0};
    wb_str(&n, 1, "x");
    wb_str(&n, 2, "NoOp");
    wb_attr(&n, "f", &v);
    wb_msg(&g, 1, &n);
    gn_graph *a = NULL;
    assert_int_equal(new_load(g.p, g.n, "deep.pb", &a), GN_ERR_PARSE);
    assert_non_null(strstr(gn_graph_errmsg(a), "deep.pb: byte "));
    assert_non_null(strstr(gn_graph_errmsg(a), "nesting deeper than 100 levels"));
    assert_non_null(strstr(gn_graph_errmsg(a), "(node 'x')"));
    gn_graph_free(a);
    check_same(g.p, g.n, "deep");
    free(v.p);
    free(n.p);
    free(g.p);
}

/* Every model of the corpus: binary GraphDefs decode as before; every
 * model (binary, text, SavedModel) writes protobuf-c's bytes. */
static void walk(const char *dir, int *files)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            char sm[4200];
            snprintf(sm, sizeof sm, "%s/saved_model.pb", p);
            if (gn_test_file_exists(sm)) {
                gn_graph *g = NULL;
                if (gn_graph_load(p, NULL, &g) == GN_OK) {
                    check_writer(g, p);
                    ++*files;
                }
                gn_graph_free(g);
            } else {
                walk(p, files);
            }
            continue;
        }
        size_t l = strlen(e->d_name);
        bool pb = l > 3 && strcmp(e->d_name + l - 3, ".pb") == 0;
        bool txt = strstr(e->d_name, ".pbtxt") != NULL;
        if (!pb && !txt) continue;
        if (pb && strcmp(e->d_name, "saved_model.pb") == 0) continue;
        if (pb) {
            size_t n = 0;
            unsigned char *data = gn_test_slurp(p, &n);
            assert_non_null(data);
            check_same(data, n, p);
            free(data);
        } else {
            gn_graph *g = NULL;
            if (gn_graph_load(p, NULL, &g) == GN_OK) check_writer(g, p);
            gn_graph_free(g);
        }
        ++*files;
    }
    closedir(d);
}

static void test_corpus(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    int files = 0;
    walk(path, &files);
    assert_true(files >= 40);
}

/* Large tensor_content that the file puts at an offset not aligned for the
 * element type: loaded from a file, the bytes are moved to the aligned address
 * just below (over their own framing, in the graph's copy of the file), so
 * kernels and constant folding read them in place; the graph still writes the
 * file's bytes. */
static void test_misaligned_content_aligned_in_place(void **state)
{
    (void)state;
    enum { NC = 6 };
    static const char *const names[NC] = {"a", "bb", "ccc", "dddd", "dbl", "half"};
    static const int counts[NC] = {1500, 1501, 1502, 1503, 777, 3000};
    size_t cap = 200000, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    for (int c = 0; c < NC; c++) {
        const char *dt = c == 4 ? "DT_DOUBLE" : c == 5 ? "DT_HALF" : "DT_FLOAT";
        size_t esz = c == 4 ? 8 : c == 5 ? 2 : 4;
        n += (size_t)snprintf(t + n, cap - n,
                              "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: %s } }"
                              " attr { key: 'value' value { tensor { dtype: %s tensor_shape { dim { size: %d } }"
                              " tensor_content: '",
                              names[c], dt, dt, counts[c]);
        for (size_t i = 0; i < (size_t)counts[c] * esz; i++)
            n += (size_t)snprintf(t + n, cap - n, "\\%03o", (unsigned)(i * 13 + (size_t)c * 7 + 1) & 0x3f);
        n += (size_t)snprintf(t + n, cap - n, "' } } } }\n");
    }
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(t, n, "mis.pbtxt", NULL, &g), GN_OK);
    free(t);
    void *want = NULL;
    size_t want_len = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &want, &want_len), GN_OK);
    gn_graph_free(g);
    char path[1024], path2[1024];
    snprintf(path, sizeof path, "%s/misaligned.pb", gn_test_tmpdir());
    snprintf(path2, sizeof path2, "%s/misaligned2.pb", gn_test_tmpdir());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(want, 1, want_len, f), want_len);
    fclose(f);

    assert_int_equal(gn_graph_load(path, NULL, &g), GN_OK);
    int moved = 0;
    for (int c = 0; c < NC; c++) {
        size_t esz = c == 4 ? 8 : c == 5 ? 2 : 4, bytes = (size_t)counts[c] * esz;
        const Tensorflow__TensorProto *tp = gn__node_attr(g, gn__graph_find(g, names[c]), "value")->tensor;
        assert_int_equal(tp->tensor_content.len, bytes);
        /* where the file has the content */
        const uint8_t *fc = NULL;
        for (size_t o = 0; o + bytes <= want_len && !fc; o++)
            if (memcmp((const uint8_t *)want + o, tp->tensor_content.data, bytes) == 0) fc = (const uint8_t *)want + o;
        assert_non_null(fc);
        if ((size_t)(fc - (const uint8_t *)want) % esz) moved++;
        assert_int_equal((uintptr_t)tp->tensor_content.data % esz, 0);
    }
    assert_true(moved >= 3); /* the file does put some at odd offsets */
    void *again = NULL;
    size_t again_len = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &again, &again_len), GN_OK);
    assert_int_equal(again_len, want_len);
    assert_memory_equal(again, want, want_len);
    free(again);
    assert_int_equal(gn_graph_save(g, path2, GN_FORMAT_BINARY), GN_OK);
    size_t n2;
    unsigned char *b2 = gn_test_slurp(path2, &n2);
    assert_int_equal(n2, want_len);
    assert_memory_equal(b2, want, want_len);
    free(b2);
    gn_graph_free(g);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_graph),
        cmocka_unit_test(test_truncation_and_corruption),
        cmocka_unit_test(test_unusual_nodes),
        cmocka_unit_test(test_deep_attr),
        cmocka_unit_test(test_misaligned_content_aligned_in_place),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
