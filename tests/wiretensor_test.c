/* Const tensors decoded by the binary GraphDef loader without protobuf-c
 * (src/io/wiregraph.c, fast_tensor_value): for every encoding below, shortest
 * and not, the decoded value is the one protobuf-c unpacks from the same
 * bytes (compared field by field and through protobuf_c_message_pack); the
 * loaded bytes are kept for the writer exactly when they are protobuf-c's
 * own encoding of the value; the writer's output is protobuf-c's, also after
 * a value is replaced; truncations and corruptions of every tensor give the
 * loader's usual errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "io/graphdef.h"
#include "testutil.h"
#include "wirebuild.h"

/* ---- building wire bytes ----------------------------------------------------------- */
/* wb, wb_varint, wb_ld, wb_str, wb_msg, wb_attr: tests/wirebuild.h */

/* A varint padded to `width` bytes (not the shortest form when width is larger). */
static void wb_varint_wide(wb *w, uint64_t v, size_t width)
{
    for (size_t k = 0; k + 1 < width; k++) {
        uint8_t c = (uint8_t)((v & 0x7f) | 0x80);
        wb_bytes(w, &c, 1);
        v >>= 7;
    }
    uint8_t c = (uint8_t)v;
    wb_bytes(w, &c, 1);
}


/* TensorShapeProto with the given dims (no unknown_rank) */
static wb shape_of(const int64_t *dims, size_t n)
{
    wb sh = {0};
    for (size_t i = 0; i < n; i++) {
        wb d = {0};
        if (dims[i]) {
            wb_varint(&d, 1 << 3);
            wb_varint(&d, (uint64_t)dims[i]);
        }
        wb_msg(&sh, 2, &d);
        free(d.p);
    }
    return sh;
}

/* The AttrValue {tensor: t} */
static wb tensor_attr(const wb *t)
{
    wb v = {0};
    wb_msg(&v, 8, t);
    return v;
}

/* ---- the tensors ------------------------------------------------------------------- */
enum { N_CASES = 24 };

typedef struct tcase {
    const char *what;
    bool canonical;   /* protobuf-c packs exactly these bytes */
} tcase;

/* Case k's TensorProto bytes; *c describes it. */
static wb tensor_case(int k, tcase *c)
{
    wb t = {0}, sh = {0};
    int64_t d2[2] = {2, 3}, d1[1] = {4}, dneg[2] = {-1, 5};
    float fv[4] = {1.5f, -2.0f, 0.0f, 3.25f};
    double dv[2] = {0.5, -1e300};
    c->canonical = true;
    switch (k) {
    case 0:
        c->what = "float_val, one value (short form)";
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(d2, 2), wb_msg(&t, 2, &sh);
        wb_ld(&t, 5, fv, 4);
        break;
    case 1:
        c->what = "tensor_content";
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(d1, 1), wb_msg(&t, 2, &sh);
        wb_ld(&t, 4, fv, sizeof fv);
        break;
    case 2:
        c->what = "scalar (empty shape)";
        wb_varint(&t, 1 << 3), wb_varint(&t, 3);
        wb_msg(&t, 2, &sh);
        wb_varint(&t, 7 << 3 | 2), wb_varint(&t, 1), wb_varint(&t, 42);
        break;
    case 3:
        c->what = "int_val with negative values (ten bytes each)";
        wb_varint(&t, 1 << 3), wb_varint(&t, 3);
        sh = shape_of(d1, 1), wb_msg(&t, 2, &sh);
        {
            wb p = {0};
            wb_varint(&p, (uint64_t)(int64_t)-1);
            wb_varint(&p, 7);
            wb_varint(&p, (uint64_t)(int64_t)INT32_MIN);
            wb_varint(&p, 300);
            wb_msg(&t, 7, &p);
            free(p.p);
        }
        break;
    case 4:
        c->what = "int64_val";
        wb_varint(&t, 1 << 3), wb_varint(&t, 9);
        sh = shape_of(d1, 1), wb_msg(&t, 2, &sh);
        {
            wb p = {0};
            wb_varint(&p, (uint64_t)INT64_MIN);
            wb_varint(&p, 1);
            wb_varint(&p, (uint64_t)1 << 40);
            wb_varint(&p, 0);
            wb_msg(&t, 10, &p);
            free(p.p);
        }
        break;
    case 5:
        c->what = "bool_val";
        wb_varint(&t, 1 << 3), wb_varint(&t, 10);
        {
            uint8_t b[3] = {1, 0, 1};
            wb_ld(&t, 11, b, 3);
        }
        break;
    case 6:
        c->what = "half_val";
        wb_varint(&t, 1 << 3), wb_varint(&t, 19);
        {
            wb p = {0};
            wb_varint(&p, 0x3c00);
            wb_varint(&p, 0xbc00);
            wb_msg(&t, 13, &p);
            free(p.p);
        }
        break;
    case 7:
        c->what = "double_val";
        wb_varint(&t, 1 << 3), wb_varint(&t, 2);
        wb_ld(&t, 6, dv, sizeof dv);
        break;
    case 8:
        c->what = "unknown dim and version_number";
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(dneg, 2), wb_msg(&t, 2, &sh);
        wb_varint(&t, 3 << 3), wb_varint(&t, 5);
        wb_ld(&t, 5, fv, 8);
        break;
    case 9:
        c->what = "unknown rank";
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        wb_varint(&sh, 3 << 3), wb_varint(&sh, 1);
        wb_msg(&t, 2, &sh);
        break;
    case 10:
        c->what = "empty TensorProto";
        break;
    case 11:
        c->what = "dim of size 0 (empty Dim message)";
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        {
            int64_t dz[2] = {0, 3};
            sh = shape_of(dz, 2);
        }
        wb_msg(&t, 2, &sh);
        break;
    /* decoded here, but not protobuf-c's bytes: the writer packs them again */
    case 12:
        c->what = "dim size 0 written out";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        {
            wb d = {0};
            wb_varint(&d, 1 << 3), wb_varint(&d, 0);
            wb_msg(&sh, 2, &d);
            free(d.p);
        }
        wb_msg(&t, 2, &sh);
        break;
    case 13:
        c->what = "dtype as a two-byte varint";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint_wide(&t, 1, 2);
        wb_ld(&t, 5, fv, 4);
        break;
    case 14:
        c->what = "dtype 0 written out";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 0);
        wb_ld(&t, 5, fv, 4);
        break;
    case 15:
        c->what = "int_val -1 in five bytes";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 3);
        {
            wb p = {0};
            wb_varint(&p, 0xffffffffu);
            wb_msg(&t, 7, &p);
            free(p.p);
        }
        break;
    case 16:
        c->what = "int64_val 5 in three bytes";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 9);
        {
            wb p = {0};
            wb_varint_wide(&p, 5, 3);
            wb_msg(&t, 10, &p);
            free(p.p);
        }
        break;
    case 17:
        c->what = "unknown_rank false written out";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        wb_varint(&sh, 3 << 3), wb_varint(&sh, 0);
        wb_msg(&t, 2, &sh);
        break;
    case 18:
        c->what = "shape length as a two-byte varint";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(d1, 1);
        wb_varint(&t, 2 << 3 | 2), wb_varint_wide(&t, sh.n, 2), wb_bytes(&t, sh.p, sh.n);
        break;
    /* left to protobuf-c: the same value whoever decodes it */
    case 19:
        c->what = "fields out of order";
        c->canonical = false;
        wb_ld(&t, 5, fv, 4);
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        break;
    case 20:
        c->what = "float_val not packed, twice";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        wb_varint(&t, 5 << 3 | 5), wb_bytes(&t, &fv[0], 4);
        wb_varint(&t, 5 << 3 | 5), wb_bytes(&t, &fv[1], 4);
        break;
    case 21:
        c->what = "named dim and string_val";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 7);
        {
            wb d = {0};
            wb_varint(&d, 1 << 3), wb_varint(&d, 1);
            wb_str(&d, 2, "batch");
            wb_msg(&sh, 2, &d);
            free(d.p);
        }
        wb_msg(&t, 2, &sh);
        wb_str(&t, 8, "hello");
        break;
    case 22:
        c->what = "tensor_shape twice (merged)";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(d1, 1), wb_msg(&t, 2, &sh), wb_msg(&t, 2, &sh);
        break;
    default:
        c->what = "unknown field";
        c->canonical = false;
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        wb_varint(&t, 99 << 3), wb_varint(&t, 1);
        break;
    }
    free(sh.p);
    return t;
}

/* A graph of one Const per case, each under the attr "value", plus an
 * Identity reading every one of them. */
static wb cases_graph(void)
{
    wb g = {0};
    char name[32];
    wb id = {0};
    wb_str(&id, 1, "all");
    wb_str(&id, 2, "IdentityN");
    for (int k = 0; k < N_CASES; k++) {
        tcase c;
        wb t = tensor_case(k, &c), v = tensor_attr(&t), n = {0}, ty = {0};
        snprintf(name, sizeof name, "c%d", k);
        wb_str(&n, 1, name);
        wb_str(&n, 2, "Const");
        wb_varint(&ty, 6 << 3), wb_varint(&ty, 1);
        wb_attr(&n, "dtype", &ty);
        wb_attr(&n, "value", &v);
        wb_msg(&g, 1, &n);
        wb_str(&id, 3, name);
        free(t.p), free(v.p), free(n.p), free(ty.p);
    }
    wb_msg(&g, 1, &id);
    free(id.p);
    return g;
}

/* ---- reference ----------------------------------------------------------------- */
static gn_status load(const uint8_t *d, size_t n, gn_graph **out)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = 0;
    o.format = GN_FORMAT_BINARY;
    return gn_graph_load_buffer(d, n, "t.pb", &o, out);
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(protobuf_c_message_pack(m, b), *n);
    return b;
}

static void same_floats(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) assert_memory_equal(&a[i], &b[i], sizeof *a);
}

/* The decoded value v and protobuf-c's unpack of the same bytes agree field by field. */
static void same_tensor(const Tensorflow__TensorProto *a, const Tensorflow__TensorProto *b, const char *what)
{
    if (a->dtype != b->dtype || a->version_number != b->version_number) fail_msg("%s: dtype/version differ", what);
    if (!a->tensor_shape != !b->tensor_shape) fail_msg("%s: tensor_shape presence differs", what);
    if (a->tensor_shape) {
        const Tensorflow__TensorShapeProto *x = a->tensor_shape, *y = b->tensor_shape;
        if (x->n_dim != y->n_dim || x->unknown_rank != y->unknown_rank) fail_msg("%s: shape differs", what);
        for (size_t i = 0; i < x->n_dim; i++) {
            assert_int_equal(x->dim[i]->size, y->dim[i]->size);
            assert_string_equal(x->dim[i]->name, y->dim[i]->name);
        }
    }
    assert_int_equal(a->tensor_content.len, b->tensor_content.len);
    if (a->tensor_content.len) assert_memory_equal(a->tensor_content.data, b->tensor_content.data, a->tensor_content.len);
    assert_int_equal(a->n_float_val, b->n_float_val);
    same_floats(a->float_val, b->float_val, a->n_float_val);
    assert_int_equal(a->n_double_val, b->n_double_val);
    if (a->n_double_val) assert_memory_equal(a->double_val, b->double_val, a->n_double_val * sizeof(double));
    assert_int_equal(a->n_int_val, b->n_int_val);
    for (size_t i = 0; i < a->n_int_val; i++) assert_int_equal(a->int_val[i], b->int_val[i]);
    assert_int_equal(a->n_half_val, b->n_half_val);
    for (size_t i = 0; i < a->n_half_val; i++) assert_int_equal(a->half_val[i], b->half_val[i]);
    assert_int_equal(a->n_int64_val, b->n_int64_val);
    for (size_t i = 0; i < a->n_int64_val; i++) assert_int_equal(a->int64_val[i], b->int64_val[i]);
    assert_int_equal(a->n_bool_val, b->n_bool_val);
    for (size_t i = 0; i < a->n_bool_val; i++) assert_int_equal(a->bool_val[i], b->bool_val[i]);
    assert_int_equal(a->n_string_val, b->n_string_val);
    assert_int_equal(a->base.n_unknown_fields, b->base.n_unknown_fields);
}

/* ---- tests ------------------------------------------------------------------------- */
static void test_values_match_protobuf_c(void **state)
{
    (void)state;
    wb gb = cases_graph();
    gn_graph *g = NULL;
    if (load(gb.p, gb.n, &g) != GN_OK) fail_msg("load: %s", gn_graph_errmsg(g));
    int kept = 0;
    for (int k = 0; k < N_CASES; k++) {
        tcase c;
        wb t = tensor_case(k, &c), v = tensor_attr(&t);
        char name[32];
        snprintf(name, sizeof name, "c%d", k);
        gn_id id = gn__graph_find(g, name);
        assert_true(id != GN_NONE);
        const gn__node *n = &g->nodes[id];
        const gn__attr *a = NULL;
        for (uint32_t i = 0; i < n->n_attr; i++)
            if (!strcmp(gn__str(g, n->attr[i].key), "value")) a = &n->attr[i];
        assert_non_null(a);
        Tensorflow__AttrValue *ref =
            tensorflow__attr_value__unpack(NULL, v.n, v.p);
        assert_non_null(ref);
        assert_int_equal(a->value->value_case, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
        same_tensor(a->value->tensor, ref->tensor, c.what);
        size_t n1, n2;
        uint8_t *x = pack(&a->value->base, &n1), *y = pack(&ref->base, &n2);
        if (n1 != n2 || memcmp(x, y, n1) != 0) fail_msg("%s: packs to other bytes than protobuf-c's value", c.what);
        /* the loaded bytes are kept exactly when they are protobuf-c's */
        bool has_enc = a->enc && a->enc < g->n_encs && g->encs[a->enc].value == a->value;
        if (has_enc != c.canonical) fail_msg("%s: bytes kept: %d, expected %d", c.what, has_enc, c.canonical);
        if (has_enc) {
            kept++;
            assert_int_equal(g->encs[a->enc].len, n1);
            assert_memory_equal(g->encs[a->enc].bytes, x, n1);
            assert_int_equal(n1, v.n);
        }
        free(x), free(y), free(t.p), free(v.p);
        tensorflow__attr_value__free_unpacked(ref, NULL);
    }
    assert_int_equal(kept, 12);

    /* the writer gives protobuf-c's bytes for the whole graph */
    gn__arena ar;
    gn__arena_init(&ar, 4096);
    Tensorflow__GraphDef *gd = NULL;
    assert_int_equal(gn__graph_to_graphdef(g, &ar, &gd, &g->err), GN_OK);
    size_t rn, wn;
    uint8_t *r = pack(&gd->base, &rn);
    void *w = NULL;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &w, &wn), GN_OK);
    assert_int_equal(wn, rn);
    assert_memory_equal(w, r, rn);
    free(r);
    gn_free(w);
    gn__arena_free(&ar);

    /* replacing a value whose bytes were kept: the writer packs the new one */
    gn_id c0 = gn__graph_find(g, "c0"), c1 = gn__graph_find(g, "c1");
    const Tensorflow__AttrValue *v1 = gn__node_attr(g, c1, "value");
    assert_int_equal(gn__node_set_attr(g, c0, "value", v1), GN_OK);
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &w, &wn), GN_OK);
    gn_graph *back = NULL;
    assert_int_equal(load(w, wn, &back), GN_OK);
    const Tensorflow__AttrValue *b0 = gn__node_attr(back, gn__graph_find(back, "c0"), "value");
    assert_int_equal(b0->tensor->tensor_content.len, 16);
    assert_int_equal(b0->tensor->n_float_val, 0);
    gn_graph_free(back);
    gn_free(w);

    /* a clone keeps the bytes, and writes the same */
    gn_graph *cl = NULL;
    assert_int_equal(gn__graph_clone(g, &cl), GN_OK);
    assert_int_equal(cl->n_encs, g->n_encs);
    void *w1 = NULL, *w2 = NULL;
    size_t n1, n2;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &w1, &n1), GN_OK);
    assert_int_equal(gn_graph_serialize(cl, GN_FORMAT_BINARY, &w2, &n2), GN_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(w1, w2, n1);
    gn_free(w1), gn_free(w2);
    gn_graph_free(cl);
    gn_graph_free(g);
    free(gb.p);
}

/* Values shared between nodes keep one encoding, and distinct Consts in a
 * graph of many round-trip byte for byte. */
static void test_many_consts_round_trip(void **state)
{
    (void)state;
    wb g = {0};
    char name[32];
    for (int k = 0; k < 2000; k++) {
        wb t = {0}, sh = {0}, v = {0}, n = {0};
        int j = k % 1000; /* every value twice */
        int64_t dims[2] = {j % 7 + 1, 2};
        wb_varint(&t, 1 << 3), wb_varint(&t, 1);
        sh = shape_of(dims, 2), wb_msg(&t, 2, &sh);
        float f = (float)j * 0.25f;
        if (j % 3) wb_ld(&t, 5, &f, 4);
        else {
            float content[14];
            for (int i = 0; i < 14; i++) content[i] = f + (float)i;
            wb_ld(&t, 4, content, (size_t)dims[0] * 2 * 4);
        }
        v = tensor_attr(&t);
        snprintf(name, sizeof name, "k%d", k);
        wb_str(&n, 1, name);
        wb_str(&n, 2, "Const");
        wb_attr(&n, "value", &v);
        wb_msg(&g, 1, &n);
        free(t.p), free(sh.p), free(v.p), free(n.p);
    }
    gn_graph *gr = NULL;
    if (load(g.p, g.n, &gr) != GN_OK) fail_msg("load: %s", gn_graph_errmsg(gr));
    const Tensorflow__AttrValue *a = gn__node_attr(gr, gn__graph_find(gr, "k1"), "value");
    const Tensorflow__AttrValue *b = gn__node_attr(gr, gn__graph_find(gr, "k1001"), "value");
    assert_ptr_equal(a, b); /* the same bytes: one value */
    assert_true(fabsf(a->tensor->float_val[0] - 0.25f) == 0.0f);
    /* one shape per distinct shape bytes, shared */
    const Tensorflow__AttrValue *c = gn__node_attr(gr, gn__graph_find(gr, "k8"), "value");
    assert_ptr_equal(a->tensor->tensor_shape, c->tensor->tensor_shape);
    void *w = NULL;
    size_t wn;
    assert_int_equal(gn_graph_serialize(gr, GN_FORMAT_BINARY, &w, &wn), GN_OK);
    assert_int_equal(wn, g.n);
    assert_memory_equal(w, g.p, g.n);
    gn_free(w);
    gn_graph_free(gr);
    free(g.p);
}

/* Every truncation of each tensor (the AttrValue length kept, so the damage
 * stays inside it) and every single-byte change: the loader gives the error
 * or graph that protobuf-c's decoding gives. */
static void test_damaged_tensors(void **state)
{
    (void)state;
    for (int k = 0; k < N_CASES; k++) {
        tcase c;
        wb t = tensor_case(k, &c);
        for (size_t cut = 0; cut <= t.n; cut++) {
            for (int flip = -1; flip < (int)cut && flip < 24; flip++) {
                wb tt = {0};
                wb_bytes(&tt, t.p, cut);
                if (flip >= 0) tt.p[flip] ^= (uint8_t)(0x80 | (flip * 37));
                wb v = tensor_attr(&tt), n = {0};
                wb_str(&n, 1, "c");
                wb_str(&n, 2, "Const");
                wb_attr(&n, "value", &v);
                wb gb = {0};
                wb_msg(&gb, 1, &n);
                /* reference: the whole file through protobuf-c */
                gn_graph *ref = gn__graph_new(GN__GRAPH_TOP);
                assert_non_null(ref);
                gn__blob *blob = gn__blob_new(4096);
                Tensorflow__GraphDef *gd = NULL;
                gn_status sr = gn__decode_graphdef(gb.p, gb.n, false, blob, &gd, &ref->err);
                if (sr == GN_OK) {
                    gn__source src = {"t.pb", gb.p, gb.n, false};
                    sr = gn__graph_from_graphdef(ref, gd, blob, &src);
                } else {
                    gn__err_prefix(&ref->err, "%s", "t.pb");
                }
                gn__blob_unref(blob);
                gn_graph *g = NULL;
                gn_status s = load(gb.p, gb.n, &g);
                if (s != sr)
                    fail_msg("%s cut %zu flip %d: status %d, protobuf-c %d (%s | %s)", c.what, cut, flip, s, sr,
                             gn_graph_errmsg(g), gn_graph_errmsg(ref));
                if (s != GN_OK) {
                    assert_string_equal(gn_graph_errmsg(g), gn_graph_errmsg(ref));
                } else {
                    const Tensorflow__AttrValue *x = gn__node_attr(g, 0, "value");
                    const Tensorflow__AttrValue *y = gn__node_attr(ref, 0, "value");
                    size_t n1, n2;
                    uint8_t *px = pack(&x->base, &n1), *py = pack(&y->base, &n2);
                    if (n1 != n2 || memcmp(px, py, n1) != 0) fail_msg("%s cut %zu flip %d: values differ", c.what, cut, flip);
                    if (x->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR && y->tensor)
                        same_tensor(x->tensor, y->tensor, c.what);
                    void *w = NULL;
                    size_t wn;
                    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &w, &wn), GN_OK);
                    gn__arena ar;
                    gn__arena_init(&ar, 4096);
                    Tensorflow__GraphDef *rd = NULL;
                    assert_int_equal(gn__graph_to_graphdef(ref, &ar, &rd, &ref->err), GN_OK);
                    uint8_t *rp = pack(&rd->base, &n2);
                    if (wn != n2 || memcmp(w, rp, wn) != 0) fail_msg("%s cut %zu flip %d: written bytes differ", c.what, cut, flip);
                    free(rp), gn_free(w), free(px), free(py);
                    gn__arena_free(&ar);
                }
                gn_graph_free(g);
                gn_graph_free(ref);
                free(tt.p), free(v.p), free(n.p), free(gb.p);
            }
        }
        free(t.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_match_protobuf_c),
        cmocka_unit_test(test_many_consts_round_trip),
        cmocka_unit_test(test_damaged_tensors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
