/* Array kernels (src/ops/kernels/array*.c) and TensorProto decoding
 * (src/ops/tensor_proto.c): one-node graphs from pbtxt, a kernel context set
 * up by hand, exact outputs and exact error messages. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "grapnel/graph.h"
#include "graph/ir.h"
#include "graph/tensor.h"
#include "ops/op_fns.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_INT16 TENSORFLOW__DATA_TYPE__DT_INT16
#define DT_INT8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_UINT8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_UINT16 TENSORFLOW__DATA_TYPE__DT_UINT16
#define DT_UINT32 TENSORFLOW__DATA_TYPE__DT_UINT32
#define DT_UINT64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_BF16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define DT_C64 TENSORFLOW__DATA_TYPE__DT_COMPLEX64
#define DT_C128 TENSORFLOW__DATA_TYPE__DT_COMPLEX128
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* ---- harness ----------------------------------------------------------------------- */
typedef struct kt {
    gn_graph *g;
    gn__err err;
    gn__tensor in[12];
    gn__tensor out[12];
    gn__kctx c;
} kt;

static kt *kt_new(void)
{
    kt *k = calloc(1, sizeof *k);
    assert_non_null(k);
    return k;
}

static void kt_free(kt *k)
{
    for (int i = 0; i < 12; i++) {
        gn__tensor_release(&k->in[i]);
        gn__tensor_release(&k->out[i]);
    }
    gn_graph_free(k->g);
    free(k);
}

static void kt_load(kt *k, const char *text)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = 0;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "t.pbtxt", &o, &k->g);
    if (s != GN_OK) fprintf(stderr, "load: %s\n%s\n", gn_graph_errmsg(k->g), text);
    assert_int_equal(s, GN_OK);
}

/* Node "n" of `op` with inputs i0..i{n_in-1} (placeholders) and raw attr text. */
static kt *kt_op(const char *op, uint32_t n_in, const char *attrs)
{
    kt *k = kt_new();
    char text[16384];
    size_t n = 0;
    for (uint32_t i = 0; i < n_in; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "node { name: \"i%u\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n",
                              i);
    n += (size_t)snprintf(text + n, sizeof text - n, "node { name: \"n\" op: \"%s\" ", op);
    for (uint32_t i = 0; i < n_in; i++) n += (size_t)snprintf(text + n, sizeof text - n, "input: \"i%u\" ", i);
    snprintf(text + n, sizeof text - n, "%s }\n", attrs ? attrs : "");
    kt_load(k, text);
    return k;
}

static gn_status kt_run(kt *k, uint32_t n_in, uint32_t n_out)
{
    gn_id id = gn__graph_find(k->g, "n");
    assert_int_not_equal(id, GN_NONE);
    for (int i = 0; i < 12; i++) gn__tensor_release(&k->out[i]);
    memset(&k->c, 0, sizeof k->c);
    k->c.g = k->g;
    k->c.node = id;
    k->c.n_in = n_in;
    k->c.in = k->in;
    k->c.n_out = n_out;
    k->c.out = k->out;
    k->c.err = &k->err;
    gn__kernel_fn fn = gn__kernel_for(gn__node_op(k->g, id));
    assert_non_null(fn);
    gn__err_clear(&k->err);
    gn_status s = fn(&k->c);
    if (s != GN_OK) {
        /* a failed kernel's outputs are released by whoever runs it */
        for (int i = 0; i < 12; i++) gn__tensor_release(&k->out[i]);
    }
    return s;
}

static void kt_ok(kt *k, uint32_t n_in, uint32_t n_out)
{
    gn_status s = kt_run(k, n_in, n_out);
    if (s != GN_OK) fprintf(stderr, "kernel failed: %s\n", k->err.msg);
    assert_int_equal(s, GN_OK);
}

static void kt_err(kt *k, uint32_t n_in, uint32_t n_out, gn_status code, const char *msg)
{
    gn_status s = kt_run(k, n_in, n_out);
    assert_int_equal(s, code);
    assert_string_equal(k->err.msg, msg);
}

/* A fresh heap tensor with a copy of data. */
static gn__tensor mk(int32_t dt, int32_t rank, const int64_t *dims, const void *data)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
    int64_t n = gn__tensor_numel(&t);
    size_t esz = gn__dtype_size(dt);
    gn__buffer *b = gn__buffer_new((size_t)n * esz);
    assert_non_null(b);
    if (n && data) memcpy(b->data, data, (size_t)n * esz);
    else if (n) memset(b->data, 0, (size_t)n * esz);
    t.data = b->data;
    t.nbytes = (size_t)n * esz;
    t.buf = b;
    return t;
}

/* A string tensor from C strings. */
static gn__tensor mks(int32_t rank, const int64_t *dims, const char *const *s)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT_STRING;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
    int64_t n = gn__tensor_numel(&t);
    size_t bytes = 0;
    for (int64_t i = 0; i < n; i++) bytes += strlen(s[i]);
    size_t head = (size_t)n * sizeof(gn__tstring);
    gn__buffer *b = gn__buffer_new(head + bytes);
    assert_non_null(b);
    gn__tstring *ts = b->data;
    char *st = (char *)b->data + head;
    for (int64_t i = 0; i < n; i++) {
        size_t l = strlen(s[i]);
        memcpy(st, s[i], l);
        ts[i].ptr = st;
        ts[i].len = l;
        st += l;
    }
    t.data = b->data;
    t.nbytes = head;
    t.buf = b;
    return t;
}

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define F32(r, d, ...) mk(DT_FLOAT, r, d, (const float[]){__VA_ARGS__})
#define I32(r, d, ...) mk(DT_INT32, r, d, (const int32_t[]){__VA_ARGS__})
#define I64(r, d, ...) mk(DT_INT64, r, d, (const int64_t[]){__VA_ARGS__})
#define S32(v) mk(DT_INT32, 0, NULL, (const int32_t[]){v})

static gn__tensor iota32(int32_t rank, const int64_t *dims)
{
    gn__tensor t = mk(DT_INT32, rank, dims, NULL);
    int64_t n = gn__tensor_numel(&t);
    for (int64_t i = 0; i < n; i++) ((int32_t *)t.data)[i] = (int32_t)i;
    return t;
}

static void expect_shape(const gn__tensor *t, int32_t dt, int32_t rank, const int64_t *dims)
{
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

static void expect_data(const gn__tensor *t, const void *v, size_t esz)
{
    size_t n = (size_t)gn__tensor_numel(t) * esz;
    if (n && memcmp(t->data, v, n) != 0) {
        fprintf(stderr, "data differs\n");
        fail();
    }
}

#define EXPECT_F32(t, r, d, ...)                                                                                       \
    do {                                                                                                               \
        expect_shape(t, DT_FLOAT, r, d);                                                                               \
        expect_data(t, (const float[]){__VA_ARGS__}, 4);                                                               \
    } while (0)
#define EXPECT_I32(t, r, d, ...)                                                                                       \
    do {                                                                                                               \
        expect_shape(t, DT_INT32, r, d);                                                                               \
        expect_data(t, (const int32_t[]){__VA_ARGS__}, 4);                                                             \
    } while (0)
#define EXPECT_I64(t, r, d, ...)                                                                                       \
    do {                                                                                                               \
        expect_shape(t, DT_INT64, r, d);                                                                               \
        expect_data(t, (const int64_t[]){__VA_ARGS__}, 8);                                                             \
    } while (0)

static void expect_strings(const gn__tensor *t, int32_t rank, const int64_t *dims, const char *const *s)
{
    expect_shape(t, DT_STRING, rank, dims);
    int64_t n = gn__tensor_numel(t);
    const gn__tstring *ts = t->data;
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(ts[i].len, strlen(s[i]));
        if (ts[i].len) assert_memory_equal(ts[i].ptr, s[i], ts[i].len);
        /* the bytes live in the output's own buffer */
        if (t->buf && ts[i].len) {
            assert_true(ts[i].ptr >= (const char *)t->buf->data);
            assert_true(ts[i].ptr + ts[i].len <= (const char *)t->buf->data + t->buf->size);
        }
    }
}

/* ---- TensorProto / Const -------------------------------------------------------------- */
static kt *const_graph(const char *dtype, const char *tensor)
{
    char attrs[4096];
    snprintf(attrs, sizeof attrs,
             "attr { key: \"dtype\" value { type: %s } } attr { key: \"value\" value { tensor { dtype: %s %s } } }",
             dtype, dtype, tensor);
    return kt_op("Const", 0, attrs);
}

static void test_const_typed_fields(void **state)
{
    (void)state;
    kt *k = const_graph("DT_FLOAT", "tensor_shape { dim { size: 4 } } float_val: 1.5 float_val: 2");
    kt_ok(k, 0, 1);
    EXPECT_F32(&k->out[0], 1, D(4), 1.5f, 2, 2, 2);
    kt_free(k);

    k = const_graph("DT_DOUBLE", "tensor_shape { dim { size: 3 } } double_val: -0.25");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_DOUBLE, 1, D(3));
    expect_data(&k->out[0], (const double[]){-0.25, -0.25, -0.25}, 8);
    kt_free(k);

    /* half_val holds the bits: 1.0 = 0x3c00, 2.0 = 0x4000 */
    k = const_graph("DT_HALF", "tensor_shape { dim { size: 3 } } half_val: 15360 half_val: 16384");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_HALF, 1, D(3));
    const gn__f16 *h = k->out[0].data;
    assert_true(h[0] == (gn__f16)1.0f && h[1] == (gn__f16)2.0f && h[2] == (gn__f16)2.0f);
    kt_free(k);

    k = const_graph("DT_BFLOAT16", "tensor_shape { dim { size: 2 } } half_val: 16256");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_BF16, 1, D(2));
    expect_data(&k->out[0], (const uint16_t[]){0x3f80, 0x3f80}, 2);
    kt_free(k);

    k = const_graph("DT_INT32", "int_val: 7");
    kt_ok(k, 0, 1);
    EXPECT_I32(&k->out[0], 0, NULL, 7);
    kt_free(k);

    k = const_graph("DT_INT16", "tensor_shape { dim { size: 2 } } int_val: -2 int_val: 300");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_INT16, 1, D(2));
    expect_data(&k->out[0], (const int16_t[]){-2, 300}, 2);
    kt_free(k);

    k = const_graph("DT_INT8", "tensor_shape { dim { size: 3 } } int_val: -1 int_val: 5");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_INT8, 1, D(3));
    expect_data(&k->out[0], (const int8_t[]){-1, 5, 5}, 1);
    kt_free(k);

    k = const_graph("DT_UINT8", "tensor_shape { dim { size: 2 } } int_val: 255 int_val: 0");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_UINT8, 1, D(2));
    expect_data(&k->out[0], (const uint8_t[]){255, 0}, 1);
    kt_free(k);

    k = const_graph("DT_UINT16", "tensor_shape { dim { size: 1 } } int_val: 65535");
    kt_ok(k, 0, 1);
    expect_data(&k->out[0], (const uint16_t[]){65535}, 2);
    kt_free(k);

    k = const_graph("DT_INT64", "tensor_shape { dim { size: 3 } } int64_val: -5 int64_val: 1099511627776");
    kt_ok(k, 0, 1);
    EXPECT_I64(&k->out[0], 1, D(3), -5, 1099511627776LL, 1099511627776LL);
    kt_free(k);

    k = const_graph("DT_UINT32", "tensor_shape { dim { size: 2 } } uint32_val: 4294967295");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_UINT32, 1, D(2));
    expect_data(&k->out[0], (const uint32_t[]){4294967295u, 4294967295u}, 4);
    kt_free(k);

    k = const_graph("DT_UINT64", "tensor_shape { dim { size: 1 } } uint64_val: 18446744073709551615");
    kt_ok(k, 0, 1);
    expect_data(&k->out[0], (const uint64_t[]){UINT64_MAX}, 8);
    kt_free(k);

    k = const_graph("DT_BOOL", "tensor_shape { dim { size: 4 } } bool_val: true bool_val: false bool_val: true");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_BOOL, 1, D(4));
    expect_data(&k->out[0], (const uint8_t[]){1, 0, 1, 1}, 1);
    kt_free(k);

    k = const_graph("DT_COMPLEX64", "tensor_shape { dim { size: 3 } } scomplex_val: 1 scomplex_val: 2 "
                                    "scomplex_val: 3 scomplex_val: 4");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_C64, 1, D(3));
    expect_data(&k->out[0], (const float[]){1, 2, 3, 4, 3, 4}, 8);
    kt_free(k);

    k = const_graph("DT_COMPLEX128", "tensor_shape { dim { size: 2 } } dcomplex_val: 0.5 dcomplex_val: -1");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_C128, 1, D(2));
    expect_data(&k->out[0], (const double[]){0.5, -1, 0.5, -1}, 16);
    kt_free(k);

    /* no values: zeros */
    k = const_graph("DT_FLOAT", "tensor_shape { dim { size: 2 } dim { size: 2 } }");
    kt_ok(k, 0, 1);
    EXPECT_F32(&k->out[0], 2, D(2, 2), 0, 0, 0, 0);
    kt_free(k);

    /* zero elements */
    k = const_graph("DT_INT32", "tensor_shape { dim { size: 0 } dim { size: 3 } }");
    kt_ok(k, 0, 1);
    expect_shape(&k->out[0], DT_INT32, 2, D(0, 3));
    kt_free(k);
}

static void test_const_strings_and_content(void **state)
{
    (void)state;
    kt *k = const_graph("DT_STRING", "tensor_shape { dim { size: 3 } } string_val: \"ab\" string_val: \"c\"");
    kt_ok(k, 0, 1);
    expect_strings(&k->out[0], 1, D(3), (const char *const[]){"ab", "c", "c"});
    kt_free(k);

    k = const_graph("DT_STRING", "tensor_shape { dim { size: 2 } }");
    kt_ok(k, 0, 1);
    expect_strings(&k->out[0], 1, D(2), (const char *const[]){"", ""});
    kt_free(k);

    /* varint lengths first (3, 2), then the bytes */
    k = const_graph("DT_STRING", "tensor_shape { dim { size: 2 } } tensor_content: \"\\003\\002abcde\"");
    kt_ok(k, 0, 1);
    expect_strings(&k->out[0], 1, D(2), (const char *const[]){"abc", "de"});
    kt_free(k);

    /* little-endian bytes: 1.0f, -2.0f */
    k = const_graph("DT_FLOAT", "tensor_shape { dim { size: 2 } } tensor_content: \"\\000\\000\\200?\\000\\000\\000\\300\"");
    kt_ok(k, 0, 1);
    EXPECT_F32(&k->out[0], 1, D(2), 1.0f, -2.0f);
    kt_free(k);

    /* a full typed field is aliased (borrowed from the graph), not copied */
    k = const_graph("DT_FLOAT", "tensor_shape { dim { size: 2 } } float_val: 3 float_val: 4");
    kt_ok(k, 0, 1);
    EXPECT_F32(&k->out[0], 1, D(2), 3, 4);
    assert_null(k->out[0].buf);
    const Tensorflow__AttrValue *v = gn__node_attr(k->g, gn__graph_find(k->g, "n"), "value");
    assert_ptr_equal(k->out[0].data, v->tensor->float_val);
    kt_free(k);

    k = kt_op("Const", 0,
              "attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
              "float_val: 1 } } }");
    kt_err(k, 0, 1, GN_ERR_GRAPH, "node 'n' (Const): Type mismatch between value (float) and dtype (int32)");
    kt_free(k);

    /* a malformed payload is reported against the node */
    k = const_graph("DT_FLOAT", "tensor_shape { dim { size: 2 } } tensor_content: \"\\000\\000\\200\"");
    kt_err(k, 0, 1, GN_ERR_GRAPH,
           "node 'n' (Const): attr 'value': tensor_content has 3 bytes; float with 2 elements needs 8");
    kt_free(k);
}

static void test_tensor_proto_errors(void **state)
{
    (void)state;
    gn__err err;
    gn__tensor t;
    Tensorflow__TensorShapeProto__Dim d0 = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    Tensorflow__TensorShapeProto__Dim *dims[1] = {&d0};
    Tensorflow__TensorShapeProto sh = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    sh.n_dim = 1;
    sh.dim = dims;
    d0.size = 3;
    Tensorflow__TensorProto p = TENSORFLOW__TENSOR_PROTO__INIT;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    p.tensor_shape = &sh;
    uint8_t bytes[8] = {0};
    p.tensor_content.data = bytes;
    p.tensor_content.len = 8;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "tensor_content has 8 bytes; float with 3 elements needs 12");

    p.tensor_content.len = 0;
    float fv[4] = {1, 2, 3, 4};
    p.float_val = fv;
    p.n_float_val = 4;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "float_val has 4 values for 3 elements");

    /* repeat-last through the plain API */
    p.n_float_val = 2;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_OK);
    EXPECT_F32(&t, 1, D(3), 1, 2, 2);
    assert_non_null(t.buf);
    gn__tensor_release(&t);

    p.n_float_val = 0;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    uint8_t sbytes[] = {2, 1, 1, 'a', 'b', 'c', 'd'};
    p.tensor_content.data = sbytes;
    p.tensor_content.len = sizeof sbytes;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_OK);
    expect_strings(&t, 1, D(3), (const char *const[]){"ab", "c", "d"});
    gn__tensor_release(&t);
    p.tensor_content.len = sizeof sbytes - 1;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "string tensor_content is malformed: the lengths add up to 4 bytes, 3 follow them");
    p.tensor_content.len = 2;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "string tensor_content is malformed: length 2 of 3 is cut");

    p.tensor_content.len = 0;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_RESOURCE;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "tensors of dtype resource are not supported");
    p.dtype = TENSORFLOW__DATA_TYPE__DT_VARIANT;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_UNSUPPORTED);

    d0.size = -1;
    p.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    assert_int_equal(gn__tensor_from_proto(&p, &t, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "dim 0 is -1");
}

static void roundtrip(const gn__tensor *t)
{
    gn__arena a;
    gn__arena_init(&a, 1024);
    ProtobufCAllocator al;
    gn__arena_pb_allocator(&a, &al);
    gn__err err;
    Tensorflow__TensorProto *p;
    assert_int_equal(gn__tensor_to_proto(t, &al, &p, &err), GN_OK);
    assert_int_equal((int)p->dtype, t->dtype);
    /* through the wire too */
    size_t n = protobuf_c_message_get_packed_size(&p->base);
    uint8_t *buf = malloc(n ? n : 1);
    protobuf_c_message_pack(&p->base, buf);
    Tensorflow__TensorProto *q = tensorflow__tensor_proto__unpack(NULL, n, buf);
    assert_non_null(q);
    gn__tensor back;
    assert_int_equal(gn__tensor_from_proto(q, &back, &err), GN_OK);
    expect_shape(&back, t->dtype, t->rank, t->dims);
    if (t->dtype == DT_STRING) {
        int64_t m = gn__tensor_numel(t);
        const gn__tstring *x = t->data, *y = back.data;
        for (int64_t i = 0; i < m; i++) {
            assert_int_equal(x[i].len, y[i].len);
            if (x[i].len) assert_memory_equal(x[i].ptr, y[i].ptr, x[i].len);
        }
    } else {
        expect_data(&back, t->data, gn__dtype_size(t->dtype));
    }
    gn__tensor_release(&back);
    tensorflow__tensor_proto__free_unpacked(q, NULL);
    free(buf);
    gn__arena_free(&a);
}

static void test_tensor_proto_roundtrip(void **state)
{
    (void)state;
    gn__tensor t = F32(2, D(2, 3), 1, -2, 3.5f, 0, -0.0f, 1e30f);
    roundtrip(&t);
    gn__tensor_release(&t);
    t = mk(DT_HALF, 1, D(3), (const uint16_t[]){0x3c00, 0x7c00, 0xfe00});
    roundtrip(&t);
    gn__tensor_release(&t);
    t = mk(DT_BOOL, 1, D(3), (const uint8_t[]){1, 0, 1});
    roundtrip(&t);
    gn__tensor_release(&t);
    t = I64(0, NULL, -9);
    roundtrip(&t);
    gn__tensor_release(&t);
    t = mk(DT_C128, 1, D(1), (const double[]){1.5, -2.5});
    roundtrip(&t);
    gn__tensor_release(&t);
    t = mk(DT_FLOAT, 2, D(0, 4), NULL);
    roundtrip(&t);
    gn__tensor_release(&t);
    t = mks(2, D(2, 2), (const char *const[]){"x", "", "hello", "\xff\x01"});
    roundtrip(&t);
    gn__tensor_release(&t);
}

/* ---- identities, placeholders --------------------------------------------------------- */
static void test_identity_family(void **state)
{
    (void)state;
    static const char *const ops[] = {"Identity",        "Snapshot",        "StopGradient",   "PreventGradient",
                                      "PlaceholderWithDefault", "GuaranteeConst", "DebugIdentity", "DebugIdentityV2",
                                      "DebugIdentityV3", "DebugGradientIdentity"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        kt *k = kt_op(ops[i], 1, NULL);
        k->in[0] = F32(1, D(2), 1, 2);
        kt_ok(k, 1, 1);
        assert_ptr_equal(k->out[0].buf, k->in[0].buf);
        assert_int_equal(k->in[0].buf->refs, 2);
        EXPECT_F32(&k->out[0], 1, D(2), 1, 2);
        kt_free(k);
    }
    kt *k = kt_op("IdentityN", 2, NULL);
    k->in[0] = F32(1, D(1), 5);
    k->in[1] = S32(3);
    kt_ok(k, 2, 2);
    EXPECT_F32(&k->out[0], 1, D(1), 5);
    EXPECT_I32(&k->out[1], 0, NULL, 3);
    kt_free(k);

    k = kt_op("NoOp", 0, NULL);
    kt_ok(k, 0, 0);
    kt_free(k);

    k = kt_op("Placeholder", 0, "attr { key: \"dtype\" value { type: DT_FLOAT } }");
    kt_err(k, 0, 1, GN_ERR_ARG, "node 'n' (Placeholder): no value fed");
    kt_free(k);
}

static void test_check_numerics_ensure_shape(void **state)
{
    (void)state;
    kt *k = kt_op("CheckNumerics", 1, "attr { key: \"message\" value { s: \"bad x\" } }");
    k->in[0] = F32(1, D(3), 1, 2, 3);
    kt_ok(k, 1, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    gn__tensor_release(&k->in[0]);
    k->in[0] = F32(1, D(2), 1, NAN);
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumerics): bad x : Tensor had NaN values");
    gn__tensor_release(&k->in[0]);
    k->in[0] = F32(1, D(2), INFINITY, NAN);
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumerics): bad x : Tensor had Inf and NaN values");
    gn__tensor_release(&k->in[0]);
    k->in[0] = mk(DT_HALF, 1, D(1), (const uint16_t[]){0xfc00});
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumerics): bad x : Tensor had Inf values");
    kt_free(k);

    k = kt_op("EnsureShape", 1, "attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 3 } } } }");
    k->in[0] = F32(2, D(1, 3), 1, 2, 3);
    kt_ok(k, 1, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    gn__tensor_release(&k->in[0]);
    k->in[0] = F32(2, D(3, 1), 1, 2, 3);
    kt_err(k, 1, 1, GN_ERR_GRAPH,
           "node 'n' (EnsureShape): Shape of tensor i0 [3,1] is not compatible with expected shape [?,3].");
    kt_free(k);
}

/* CheckNumericsV2 tells -Inf from +Inf; the messages are TensorFlow's
 * (tools/make_inference_op_values.py prints them). */
static void test_check_numerics_v2(void **state)
{
    (void)state;
    kt *k = kt_op("CheckNumericsV2", 1, "attr { key: \"message\" value { s: \"msg\" } }");
    k->in[0] = F32(1, D(3), 1, -2, 3);
    kt_ok(k, 1, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    static const struct {
        float a, b, c;
        const char *what;
    } cases[] = {
        {1, INFINITY, 0, "+Inf"},
        {1, -INFINITY, 0, "-Inf"},
        {INFINITY, -INFINITY, 0, "-Inf and +Inf"},
        {NAN, -INFINITY, 0, "-Inf and NaN"},
        {NAN, INFINITY, 0, "+Inf and NaN"},
        {NAN, 0, 0, "NaN"},
        {NAN, INFINITY, -INFINITY, "-Inf, +Inf, and NaN"},
    };
    char want[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gn__tensor_release(&k->in[0]);
        k->in[0] = F32(1, D(3), cases[i].a, cases[i].b, cases[i].c);
        snprintf(want, sizeof want, "node 'n' (CheckNumericsV2): msg : Tensor had %s values", cases[i].what);
        kt_err(k, 1, 1, GN_ERR_GRAPH, want);
    }
    /* float16 and double: the sign bit of each width */
    gn__tensor_release(&k->in[0]);
    k->in[0] = mk(DT_HALF, 1, D(2), (const uint16_t[]){0xfc00, 0x3c00});
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumericsV2): msg : Tensor had -Inf values");
    gn__tensor_release(&k->in[0]);
    k->in[0] = mk(DT_DOUBLE, 1, D(2), (const double[]){1.0, INFINITY});
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumericsV2): msg : Tensor had +Inf values");
    kt_free(k);
    /* v1 keeps its own wording for both signs */
    k = kt_op("CheckNumerics", 1, "attr { key: \"message\" value { s: \"msg\" } }");
    k->in[0] = F32(1, D(2), -INFINITY, INFINITY);
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (CheckNumerics): msg : Tensor had Inf values");
    kt_free(k);
}

/* ReverseSequence: values from tools/make_inference_op_values.py (TensorFlow 2.21). */
static void test_reverse_sequence(void **state)
{
    (void)state;
    kt *k = kt_op("ReverseSequence", 2, "attr { key: 'seq_dim' value { i: 1 } } attr { key: 'batch_dim' value { i: 0 } }");
    k->in[0] = mk(DT_FLOAT, 3, D(3, 4, 2), NULL);
    for (int i = 0; i < 24; i++) ((float *)k->in[0].data)[i] = (float)i;
    k->in[1] = I32(1, D(3), 2, 0, 4);
    kt_ok(k, 2, 1);
    EXPECT_F32(&k->out[0], 3, D(3, 4, 2), 2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 22, 23, 20, 21, 18, 19,
               16, 17);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 2, 5, 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ReverseSequence): seq_lens(1) > input.dims(1)");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 2, -1, 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ReverseSequence): seq_lens(1) < 0");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 2, 1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ReverseSequence): Length of seq_lengths != input.dims(0), (2 vs. 3)");
    kt_free(k);

    /* batch_dim after seq_dim, int64 lengths, an int32 input */
    k = kt_op("ReverseSequence", 2, "attr { key: 'seq_dim' value { i: 0 } } attr { key: 'batch_dim' value { i: 2 } }");
    k->in[0] = iota32(3, D(4, 2, 3));
    k->in[1] = I64(1, D(3), 1, 3, 4);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 3, D(4, 2, 3), 0, 13, 20, 3, 16, 23, 6, 7, 14, 9, 10, 17, 12, 1, 8, 15, 4, 11, 18, 19, 2, 21,
               22, 5);
    /* strings move too */
    gn__tensor_release(&k->in[0]);
    gn__tensor_release(&k->in[1]);
    k->in[0] = mks(3, D(2, 1, 1), (const char *const[]){"a", "bc"});
    k->in[1] = I32(1, D(1), 2);
    kt_ok(k, 2, 1);
    expect_strings(&k->out[0], 3, D(2, 1, 1), (const char *const[]){"bc", "a"});
    kt_free(k);

    k = kt_op("ReverseSequence", 2, "attr { key: 'seq_dim' value { i: 1 } } attr { key: 'batch_dim' value { i: 1 } }");
    k->in[0] = iota32(2, D(2, 2));
    k->in[1] = I32(1, D(2), 1, 1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ReverseSequence): batch_dim == seq_dim == 1");
    kt_free(k);
}

/* DynamicPartition / DynamicStitch / ParallelDynamicStitch: values from
 * tools/make_inference_op_values.py (TensorFlow 2.21). */
static void test_dynamic_partition(void **state)
{
    (void)state;
    kt *k = kt_op("DynamicPartition", 2, "attr { key: 'num_partitions' value { i: 4 } }");
    k->in[0] = mk(DT_FLOAT, 3, D(2, 3, 2), NULL);
    for (int i = 0; i < 12; i++) ((float *)k->in[0].data)[i] = (float)i;
    k->in[1] = I32(2, D(2, 3), 2, 0, 2, 0, 2, 3);
    kt_ok(k, 2, 4);
    EXPECT_F32(&k->out[0], 2, D(2, 2), 2, 3, 6, 7);
    expect_shape(&k->out[1], DT_FLOAT, 2, D(0, 2));
    EXPECT_F32(&k->out[2], 2, D(3, 2), 0, 1, 4, 5, 8, 9);
    EXPECT_F32(&k->out[3], 2, D(1, 2), 10, 11);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 3), 2, 0, 2, 0, 4, 3);
    kt_err(k, 2, 4, GN_ERR_GRAPH, "node 'n' (DynamicPartition): partitions[1,1] = 4 is not in [0, 4)");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 3), 2, 0, -1, 0, 1, 3);
    kt_err(k, 2, 4, GN_ERR_GRAPH, "node 'n' (DynamicPartition): partitions[0,2] = -1 is not in [0, 4)");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 2), 0, 0, 0, 0);
    kt_err(k, 2, 4, GN_ERR_GRAPH,
           "node 'n' (DynamicPartition): data.shape must start with partitions.shape, got data.shape = [2,3,2], "
           "partitions.shape = [2,2]");
    kt_free(k);

    /* scalar partitions; strings */
    k = kt_op("DynamicPartition", 2, "attr { key: 'num_partitions' value { i: 2 } }");
    k->in[0] = F32(0, NULL, 5);
    k->in[1] = S32(1);
    kt_ok(k, 2, 2);
    expect_shape(&k->out[0], DT_FLOAT, 1, D(0));
    EXPECT_F32(&k->out[1], 1, D(1), 5);
    gn__tensor_release(&k->in[0]);
    gn__tensor_release(&k->in[1]);
    k->in[0] = mks(1, D(4), (const char *const[]){"a", "bc", "", "def"});
    k->in[1] = I32(1, D(4), 1, 0, 1, 1);
    kt_ok(k, 2, 2);
    expect_strings(&k->out[0], 1, D(1), (const char *const[]){"bc"});
    expect_strings(&k->out[1], 1, D(3), (const char *const[]){"a", "", "def"});
    kt_free(k);
}

static void test_dynamic_stitch(void **state)
{
    (void)state;
    /* a later index wins (1 and 4 twice), row 2, 3 and 5 are never written: zeros */
    kt *k = kt_op("DynamicStitch", 4, "attr { key: 'N' value { i: 2 } }");
    k->in[0] = I32(1, D(2), 0, 4);
    k->in[1] = I32(2, D(2, 2), 1, 4, 6, 1);
    k->in[2] = F32(2, D(2, 2), 1, 2, 3, 4);
    k->in[3] = F32(3, D(2, 2, 2), 10, 11, 12, 13, 14, 15, 16, 17);
    kt_ok(k, 4, 1);
    EXPECT_F32(&k->out[0], 2, D(7, 2), 1, 2, 16, 17, 0, 0, 0, 0, 12, 13, 0, 0, 14, 15);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 2, -1);
    gn__tensor_release(&k->in[3]);
    k->in[3] = F32(2, D(2, 2), 1, 2, 3, 4);
    kt_err(k, 4, 1, GN_ERR_GRAPH, "node 'n' (DynamicStitch): indices[1] is out of range");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(1), 2);
    gn__tensor_release(&k->in[2]);
    k->in[2] = F32(2, D(2, 3), 1, 2, 3, 4, 5, 6);
    gn__tensor_release(&k->in[3]);
    k->in[3] = F32(2, D(1, 2), 1, 2);
    kt_err(k, 4, 1, GN_ERR_GRAPH,
           "node 'n' (DynamicStitch): Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [2,3], "
           "data[1].shape = [1,2], indices[0].shape = [2], indices[1].shape = [1]");
    kt_free(k);

    k = kt_op("DynamicStitch", 2, "attr { key: 'N' value { i: 1 } }");
    k->in[0] = I32(1, D(2), 0, 1);
    k->in[1] = F32(2, D(3, 2), 1, 2, 3, 4, 5, 6);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (DynamicStitch): data[0].shape = [3,2] does not start with indices[0].shape = [2]");
    kt_free(k);

    /* strings: the unwritten element is empty */
    k = kt_op("DynamicStitch", 4, "attr { key: 'N' value { i: 2 } }");
    k->in[0] = I32(1, D(2), 2, 0);
    k->in[1] = I32(1, D(1), 3);
    k->in[2] = mks(1, D(2), (const char *const[]){"x", "yz"});
    k->in[3] = mks(1, D(1), (const char *const[]){"w"});
    kt_ok(k, 4, 1);
    expect_strings(&k->out[0], 1, D(4), (const char *const[]){"yz", "", "x", "w"});
    kt_free(k);

    k = kt_op("ParallelDynamicStitch", 2, "attr { key: 'N' value { i: 1 } }");
    k->in[0] = I32(1, D(2), 2, 0);
    k->in[1] = I32(2, D(2, 2), 1, 2, 3, 4);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(3, 2), 3, 4, 0, 0, 1, 2);
    kt_free(k);
}

/* StringToNumber: TensorFlow's parse rules and message; values from
 * tools/make_inference_op_values.py (TensorFlow 2.21). */
static void test_string_to_number(void **state)
{
    (void)state;
    kt *k = kt_op("StringToNumber", 1, NULL);
    k->in[0] = mks(1, D(9), (const char *const[]){" 1.5 ", "+1", "-0", "0x10", "1e-50", "3.5e38", "-Infinity", "\t.5\n",
                                                   "2147483647"});
    kt_ok(k, 1, 1);
    EXPECT_F32(&k->out[0], 1, D(9), 1.5f, 1, -0.0f, 16, 0, INFINITY, -INFINITY, 0.5f, 2147483648.0f);
    assert_true(signbit(((const float *)k->out[0].data)[2]));
    static const char *const bad_f[] = {"1 2", "", "+ 1"};
    for (int i = 0; i < 3; i++) {
        gn__tensor_release(&k->in[0]);
        k->in[0] = mks(1, D(1), &bad_f[i]);
        char want[128];
        snprintf(want, sizeof want, "node 'n' (StringToNumber): StringToNumberOp could not correctly convert string: %s",
                 bad_f[i]);
        kt_err(k, 1, 1, GN_ERR_GRAPH, want);
    }
    /* a NUL inside the string is not the end of the number */
    gn__tensor_release(&k->in[0]);
    k->in[0] = mks(1, D(1), (const char *const[]){"1x"});
    ((char *)((gn__tstring *)k->in[0].data)[0].ptr)[1] = 0;
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (StringToNumber): StringToNumberOp could not correctly convert string: 1");
    kt_free(k);

    k = kt_op("StringToNumber", 1, "attr { key: 'out_type' value { type: DT_DOUBLE } }");
    k->in[0] = mks(1, D(5), (const char *const[]){"0.1", "1e400", "3.5e38", "nan(1)", "5."});
    kt_ok(k, 1, 1);
    expect_shape(&k->out[0], TENSORFLOW__DATA_TYPE__DT_DOUBLE, 1, D(5));
    const double *dv = k->out[0].data;
    assert_true(dv[0] == 0.1 && dv[1] == INFINITY && dv[2] == 3.5e38 && isnan(dv[3]) && dv[4] == 5.0);
    gn__tensor_release(&k->in[0]);
    k->in[0] = mks(1, D(1), (const char *const[]){"1e"});
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (StringToNumber): StringToNumberOp could not correctly convert string: 1e");
    kt_free(k);

    k = kt_op("StringToNumber", 1, "attr { key: 'out_type' value { type: DT_INT32 } }");
    k->in[0] = mks(1, D(4), (const char *const[]){" -2147483648", "+7", "0012\v", "2147483647"});
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 1, D(4), INT32_MIN, 7, 12, 2147483647);
    static const char *const bad_i[] = {"2147483648", "1.0"};
    for (int i = 0; i < 2; i++) {
        gn__tensor_release(&k->in[0]);
        k->in[0] = mks(1, D(1), &bad_i[i]);
        char want[128];
        snprintf(want, sizeof want, "node 'n' (StringToNumber): StringToNumberOp could not correctly convert string: %s",
                 bad_i[i]);
        kt_err(k, 1, 1, GN_ERR_GRAPH, want);
    }
    kt_free(k);

    k = kt_op("StringToNumber", 1, "attr { key: 'out_type' value { type: DT_INT64 } }");
    k->in[0] = mks(2, D(1, 3), (const char *const[]){"-9223372036854775808", "9223372036854775807", " 42 "});
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 2, D(1, 3), INT64_MIN, INT64_MAX, 42);
    static const char *const bad_l[] = {"9223372036854775808", "0x10"};
    for (int i = 0; i < 2; i++) {
        gn__tensor_release(&k->in[0]);
        k->in[0] = mks(1, D(1), &bad_l[i]);
        char want[128];
        snprintf(want, sizeof want, "node 'n' (StringToNumber): StringToNumberOp could not correctly convert string: %s",
                 bad_l[i]);
        kt_err(k, 1, 1, GN_ERR_GRAPH, want);
    }
    kt_free(k);
}

/* ---- reshaping ------------------------------------------------------------------------ */
static void test_reshape_squeeze_expand(void **state)
{
    (void)state;
    kt *k = kt_op("Reshape", 2, NULL);
    k->in[0] = iota32(2, D(2, 3));
    k->in[1] = I32(1, D(2), -1, 2);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(3, 2), 0, 1, 2, 3, 4, 5);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(1, D(1), 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Reshape): cannot reshape a tensor with 6 elements to shape [4]");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), -1, 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Reshape): cannot reshape a tensor with 6 elements to shape [-1,4]");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), -1, -1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Reshape): Only one input size may be -1, not both 0 and 1");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(0, NULL, 0);
    gn__tensor_release(&k->in[0]);
    k->in[0] = mk(DT_FLOAT, 1, D(0), NULL);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 0, -1, 5); /* zero elements: as TensorFlow, -1 becomes 1 / 5 = 0 */
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_FLOAT, 3, D(0, 0, 5));
    gn__tensor_release(&k->in[0]);
    k->in[0] = F32(1, D(1), 9);
    gn__tensor_release(&k->in[1]);
    k->in[1] = mk(DT_INT32, 1, D(0), NULL); /* to a scalar */
    kt_ok(k, 2, 1);
    EXPECT_F32(&k->out[0], 0, NULL, 9);
    kt_free(k);

    k = kt_op("Squeeze", 1, NULL);
    k->in[0] = iota32(4, D(1, 2, 1, 3));
    kt_ok(k, 1, 1);
    expect_shape(&k->out[0], DT_INT32, 2, D(2, 3));
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    kt_free(k);
    k = kt_op("Squeeze", 1, "attr { key: \"squeeze_dims\" value { list { i: -2 } } }");
    k->in[0] = iota32(4, D(1, 2, 1, 3));
    kt_ok(k, 1, 1);
    expect_shape(&k->out[0], DT_INT32, 3, D(1, 2, 3));
    kt_free(k);
    k = kt_op("Squeeze", 1, "attr { key: \"squeeze_dims\" value { list { i: 1 } } }");
    k->in[0] = iota32(4, D(1, 2, 1, 3));
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (Squeeze): Can not squeeze dim[1], expected a dimension of 1, got 2");
    kt_free(k);
    k = kt_op("Squeeze", 1, "attr { key: \"squeeze_dims\" value { list { i: 4 } } }");
    k->in[0] = iota32(4, D(1, 2, 1, 3));
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (Squeeze): Tried to squeeze dim index 4 for tensor with 4 dimensions.");
    kt_free(k);

    k = kt_op("ExpandDims", 2, NULL);
    k->in[0] = iota32(2, D(2, 3));
    k->in[1] = S32(-1);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_INT32, 3, D(2, 3, 1));
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(1, D(1), 0);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_INT32, 3, D(1, 2, 3));
    gn__tensor_release(&k->in[1]);
    k->in[1] = S32(4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ExpandDims): Tried to expand dim index 4 for tensor with 2 dimensions.");
    kt_free(k);
}

/* ---- Transpose -------------------------------------------------------------------------- */
/* Reference transpose on any element size. */
static void ref_transpose(const char *src, char *dst, int r, const int64_t *dims, const int64_t *perm, size_t esz)
{
    int64_t istr[8], odims[8], n = 1;
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        istr[i] = s;
        s *= dims[i];
    }
    for (int i = 0; i < r; i++) {
        odims[i] = dims[perm[i]];
        n *= odims[i];
    }
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, off = 0;
        for (int i = r - 1; i >= 0; i--) {
            off += (rem % odims[i]) * istr[perm[i]];
            rem /= odims[i];
        }
        memcpy(dst + o * (int64_t)esz, src + off * (int64_t)esz, esz);
    }
}

static void check_transpose(int32_t dt, int r, const int64_t *dims, const int64_t *perm)
{
    kt *k = kt_op("Transpose", 2, NULL);
    gn__tensor x = mk(dt, r, dims, NULL);
    size_t esz = gn__dtype_size(dt);
    for (size_t i = 0; i < x.nbytes; i++) ((unsigned char *)x.data)[i] = (unsigned char)(i * 7 + 3);
    k->in[0] = x;
    k->in[1] = mk(DT_INT64, 1, D(r), perm);
    kt_ok(k, 2, 1);
    char *ref = malloc(x.nbytes ? x.nbytes : 1);
    ref_transpose(x.data, ref, r, dims, perm, esz);
    assert_int_equal(k->out[0].rank, r);
    for (int i = 0; i < r; i++) assert_int_equal(k->out[0].dims[i], dims[perm[i]]);
    assert_memory_equal(k->out[0].data, ref, x.nbytes);
    free(ref);
    kt_free(k);
}

static void test_transpose(void **state)
{
    (void)state;
    kt *k = kt_op("Transpose", 2, NULL);
    k->in[0] = iota32(2, D(2, 3));
    k->in[1] = I32(1, D(2), 1, 0);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(3, 2), 0, 3, 1, 4, 2, 5);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 0, 1);
    kt_ok(k, 2, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf); /* identity: forwarded */
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 1, 1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Transpose): 0 is missing from {1,1}.");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 0, 2);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Transpose): 2 is out of range [0 .. 2)");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 0, 1, 2);
    kt_err(k, 2, 1, GN_ERR_GRAPH,
           "node 'n' (Transpose): transpose expects a vector of size 2. But input(1) is a vector of size 3");
    kt_free(k);

    /* NHWC <-> NCHW, blocked 2-D, odd sizes, every element size */
    const int32_t dts[] = {DT_UINT8, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_C128};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        check_transpose(dts[i], 4, D(2, 5, 7, 3), D(0, 3, 1, 2));
        check_transpose(dts[i], 4, D(2, 3, 5, 7), D(0, 2, 3, 1));
        check_transpose(dts[i], 2, D(37, 70), D(1, 0));
        check_transpose(dts[i], 3, D(4, 33, 35), D(0, 2, 1));
        check_transpose(dts[i], 3, D(3, 4, 5), D(2, 0, 1));
        check_transpose(dts[i], 5, D(2, 3, 1, 4, 5), D(4, 2, 0, 3, 1));
    }
    check_transpose(DT_FLOAT, 4, D(2, 0, 3, 4), D(3, 2, 1, 0));

    /* ConjugateTranspose negates imaginary parts */
    k = kt_op("ConjugateTranspose", 2, NULL);
    k->in[0] = mk(DT_C64, 1, D(2), (const float[]){1, 2, 3, -4});
    k->in[1] = I32(1, D(1), 0);
    kt_ok(k, 2, 1);
    expect_data(&k->out[0], (const float[]){1, -2, 3, 4}, 8);
    kt_free(k);

    /* strings are copied */
    k = kt_op("Transpose", 2, NULL);
    k->in[0] = mks(2, D(2, 2), (const char *const[]){"a", "bb", "ccc", ""});
    k->in[1] = I32(1, D(2), 1, 0);
    kt_ok(k, 2, 1);
    expect_strings(&k->out[0], 2, D(2, 2), (const char *const[]){"a", "ccc", "bb", ""});
    assert_ptr_not_equal(k->out[0].buf, k->in[0].buf);
    kt_free(k);

    k = kt_op("InvertPermutation", 1, NULL);
    k->in[0] = I32(1, D(4), 2, 0, 3, 1);
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 1, D(4), 1, 3, 0, 2);
    gn__tensor_release(&k->in[0]);
    k->in[0] = I32(1, D(3), 0, 0, 1);
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (InvertPermutation): 0 is duplicated in the input.");
    kt_free(k);
}

/* ---- concat / pack / split --------------------------------------------------------------- */
static void test_concat_pack(void **state)
{
    (void)state;
    kt *k = kt_op("ConcatV2", 3, NULL);
    k->in[0] = iota32(2, D(2, 2));
    k->in[1] = I32(2, D(2, 1), 10, 11);
    k->in[2] = S32(-1);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 0, 1, 10, 2, 3, 11);
    gn__tensor_release(&k->in[2]);
    k->in[2] = I64(0, NULL, -2);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(1, 2), 7, 8);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 2, D(3, 2), 0, 1, 2, 3, 7, 8);
    gn__tensor_release(&k->in[1]);
    k->in[1] = iota32(3, D(2, 2, 1));
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (ConcatV2): ConcatV2 inputs have ranks 2 and 3");
    gn__tensor_release(&k->in[1]);
    k->in[1] = iota32(2, D(2, 3));
    kt_err(k, 3, 1, GN_ERR_GRAPH,
           "node 'n' (ConcatV2): ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,2] vs. shape[1] = "
           "[2,3]");
    gn__tensor_release(&k->in[2]);
    k->in[2] = S32(2);
    kt_err(k, 3, 1, GN_ERR_GRAPH,
           "node 'n' (ConcatV2): ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 2");
    kt_free(k);

    k = kt_op("Concat", 3, NULL);
    k->in[0] = S32(0);
    k->in[1] = mks(1, D(2), (const char *const[]){"x", "yy"});
    k->in[2] = mks(1, D(1), (const char *const[]){"zzz"});
    kt_ok(k, 3, 1);
    expect_strings(&k->out[0], 1, D(3), (const char *const[]){"x", "yy", "zzz"});
    kt_free(k);

    k = kt_op("Pack", 3, "attr { key: \"axis\" value { i: 1 } }");
    k->in[0] = I32(1, D(2), 1, 2);
    k->in[1] = I32(1, D(2), 3, 4);
    k->in[2] = I32(1, D(2), 5, 6);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 1, 3, 5, 2, 4, 6);
    gn__tensor_release(&k->in[2]);
    k->in[2] = I32(1, D(3), 5, 6, 7);
    kt_err(k, 3, 1, GN_ERR_GRAPH,
           "node 'n' (Pack): Shapes of all inputs must match: values[0].shape = [2] != values[2].shape = [3]");
    kt_free(k);

    k = kt_op("Pack", 2, "attr { key: \"axis\" value { i: -1 } }");
    k->in[0] = S32(1);
    k->in[1] = S32(2);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 1, D(2), 1, 2);
    kt_free(k);

    k = kt_op("Unpack", 1, "attr { key: \"num\" value { i: 3 } } attr { key: \"axis\" value { i: -1 } }");
    k->in[0] = iota32(2, D(2, 3));
    kt_ok(k, 1, 3);
    EXPECT_I32(&k->out[0], 1, D(2), 0, 3);
    EXPECT_I32(&k->out[1], 1, D(2), 1, 4);
    EXPECT_I32(&k->out[2], 1, D(2), 2, 5);
    gn__tensor_release(&k->in[0]);
    k->in[0] = iota32(2, D(2, 2));
    kt_err(k, 1, 3, GN_ERR_GRAPH, "node 'n' (Unpack): Input shape axis 1 must equal 3, got shape [2,2]");
    kt_free(k);
}

static void test_split(void **state)
{
    (void)state;
    kt *k = kt_op("Split", 2, "attr { key: \"num_split\" value { i: 2 } }");
    k->in[0] = S32(1);
    k->in[1] = iota32(2, D(2, 4));
    kt_ok(k, 2, 2);
    EXPECT_I32(&k->out[0], 2, D(2, 2), 0, 1, 4, 5);
    EXPECT_I32(&k->out[1], 2, D(2, 2), 2, 3, 6, 7);
    gn__tensor_release(&k->in[1]);
    k->in[1] = iota32(2, D(2, 3));
    kt_err(k, 2, 2, GN_ERR_GRAPH,
           "node 'n' (Split): Number of ways to split should evenly divide the split dimension, but got split_dim 1 (size "
           "= 3) and num_split 2");
    gn__tensor_release(&k->in[0]);
    k->in[0] = S32(-3);
    kt_err(k, 2, 2, GN_ERR_GRAPH, "node 'n' (Split): -input rank(-2) <= split_dim < input rank (2), but got -3");
    kt_free(k);

    k = kt_op("SplitV", 3, "attr { key: \"num_split\" value { i: 3 } }");
    k->in[0] = iota32(2, D(6, 1));
    k->in[1] = I64(1, D(3), 1, -1, 2);
    k->in[2] = S32(0);
    kt_ok(k, 3, 3);
    EXPECT_I32(&k->out[0], 2, D(1, 1), 0);
    EXPECT_I32(&k->out[1], 2, D(3, 1), 1, 2, 3);
    EXPECT_I32(&k->out[2], 2, D(2, 1), 4, 5);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 1, -1, -1);
    kt_err(k, 3, 3, GN_ERR_GRAPH, "node 'n' (SplitV): There can only be one -1 in the input.");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 1, 2, 4);
    kt_err(k, 3, 3, GN_ERR_GRAPH,
           "node 'n' (SplitV): Determined shape must either match input shape along split_dim exactly if fully "
           "specified, or be less than the size of the input along split_dim if not fully specified.  Got: 7");
    kt_free(k);
}

/* ---- Slice / StridedSlice ------------------------------------------------------------------ */
static void test_slice(void **state)
{
    (void)state;
    kt *k = kt_op("Slice", 3, NULL);
    k->in[0] = iota32(2, D(3, 4));
    k->in[1] = I32(1, D(2), 1, 1);
    k->in[2] = I32(1, D(2), -1, 2);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 2), 5, 6, 9, 10);
    gn__tensor_release(&k->in[2]);
    k->in[2] = I32(1, D(2), 1, 4);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (Slice): Expected size[1] in [0, 3], but got 4");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 4, 0);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (Slice): Expected begin[0] in [0, 3], but got 4");
    gn__tensor_release(&k->in[1]);
    gn__tensor_release(&k->in[2]);
    k->in[1] = I64(1, D(2), 0, 0);
    k->in[2] = I64(1, D(2), -1, -1);
    kt_ok(k, 3, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    kt_free(k);
}

typedef struct {
    int64_t start, count, step;
} dspec;

/* x = iota of dims; the output is the processing box given per dim, in row-major order. */
static void ss_case(const char *name, const int64_t *xdims, int xr, const int64_t *b, const int64_t *e,
                    const int64_t *s, int ns, int bm, int em, int elm, int nam, int sam, int fr, const int64_t *fdims,
                    const dspec *box)
{
    char attrs[512];
    snprintf(attrs, sizeof attrs,
             "attr { key: \"begin_mask\" value { i: %d } } attr { key: \"end_mask\" value { i: %d } } "
             "attr { key: \"ellipsis_mask\" value { i: %d } } attr { key: \"new_axis_mask\" value { i: %d } } "
             "attr { key: \"shrink_axis_mask\" value { i: %d } }",
             bm, em, elm, nam, sam);
    kt *k = kt_op("StridedSlice", 4, attrs);
    k->in[0] = iota32(xr, xdims);
    k->in[1] = mk(DT_INT64, 1, D(ns), b);
    k->in[2] = mk(DT_INT64, 1, D(ns), e);
    k->in[3] = mk(DT_INT64, 1, D(ns), s);
    gn_status st = kt_run(k, 4, 1);
    if (st != GN_OK) fprintf(stderr, "%s: %s\n", name, k->err.msg);
    assert_int_equal(st, GN_OK);
    expect_shape(&k->out[0], DT_INT32, fr, fdims);
    int64_t xs[8], n = 1, cnt[8];
    int64_t acc = 1;
    for (int i = xr - 1; i >= 0; i--) {
        xs[i] = acc;
        acc *= xdims[i];
    }
    for (int i = 0; i < xr; i++) {
        cnt[i] = box[i].count;
        n *= cnt[i];
    }
    assert_int_equal(gn__tensor_numel(&k->out[0]), n);
    const int32_t *o = k->out[0].data;
    for (int64_t f = 0; f < n; f++) {
        int64_t rem = f, off = 0;
        for (int i = xr - 1; i >= 0; i--) {
            off += (box[i].start + (rem % cnt[i]) * box[i].step) * xs[i];
            rem /= cnt[i];
        }
        if (o[f] != off) {
            fprintf(stderr, "%s: element %lld is %d, expected %lld\n", name, (long long)f, o[f], (long long)off);
            fail();
        }
    }
    kt_free(k);
}

static void ss_err(const int64_t *xdims, int xr, const int64_t *b, const int64_t *e, const int64_t *s, int ns, int bm,
                   int em, int elm, int nam, int sam, const char *msg)
{
    char attrs[512];
    snprintf(attrs, sizeof attrs,
             "attr { key: \"begin_mask\" value { i: %d } } attr { key: \"end_mask\" value { i: %d } } "
             "attr { key: \"ellipsis_mask\" value { i: %d } } attr { key: \"new_axis_mask\" value { i: %d } } "
             "attr { key: \"shrink_axis_mask\" value { i: %d } }",
             bm, em, elm, nam, sam);
    kt *k = kt_op("StridedSlice", 4, attrs);
    k->in[0] = iota32(xr, xdims);
    k->in[1] = mk(DT_INT32, 1, D(ns), (const int32_t[]){(int32_t)b[0], (int32_t)b[1], (int32_t)b[2], (int32_t)b[3]});
    k->in[2] = mk(DT_INT32, 1, D(ns), (const int32_t[]){(int32_t)e[0], (int32_t)e[1], (int32_t)e[2], (int32_t)e[3]});
    k->in[3] = mk(DT_INT32, 1, D(ns), (const int32_t[]){(int32_t)s[0], (int32_t)s[1], (int32_t)s[2], (int32_t)s[3]});
    kt_err(k, 4, 1, GN_ERR_GRAPH, msg);
    kt_free(k);
}

static void test_strided_slice(void **state)
{
    (void)state;
    const int64_t *X = D(3, 4, 5);
    /* x[1:3, 0:4:2, 1] */
    ss_case("a", X, 3, D(1, 0, 1), D(3, 4, 2), D(1, 2, 1), 3, 0, 0, 0, 0, 4, 2, D(2, 2),
            (const dspec[]){{1, 2, 1}, {0, 2, 2}, {1, 1, 1}});
    /* x[::-1, -1, ::2] */
    ss_case("b", X, 3, D(0, -1, 0), D(0, 0, 0), D(-1, 1, 2), 3, 5, 5, 0, 0, 2, 2, D(3, 3),
            (const dspec[]){{2, 3, -1}, {3, 1, 1}, {0, 3, 2}});
    /* x[..., 1:3] */
    ss_case("c", X, 3, D(0, 1), D(0, 3), D(1, 1), 2, 0, 0, 1, 0, 0, 3, D(3, 4, 2),
            (const dspec[]){{0, 3, 1}, {0, 4, 1}, {1, 2, 1}});
    /* x[newaxis, 1, ..., -2:] */
    ss_case("d", X, 3, D(0, 1, 0, -2), D(0, 2, 0, 0), D(1, 1, 1, 1), 4, 0, 8, 4, 1, 2, 3, D(1, 4, 2),
            (const dspec[]){{1, 1, 1}, {0, 4, 1}, {3, 2, 1}});
    /* x[2:0:-1, 1:, :-1] */
    ss_case("e", X, 3, D(2, 1, 0), D(0, 0, -1), D(-1, 1, 1), 3, 4, 2, 0, 0, 0, 3, D(2, 3, 4),
            (const dspec[]){{2, 2, -1}, {1, 3, 1}, {0, 4, 1}});
    /* x[-100:100, 5:10, :]: clamped, empty */
    ss_case("f", X, 3, D(-100, 5, 0), D(100, 10, 0), D(1, 1, 1), 3, 0, 4, 0, 0, 0, 3, D(3, 0, 5),
            (const dspec[]){{0, 3, 1}, {4, 0, 1}, {0, 5, 1}});
    /* x[-1] */
    ss_case("g", X, 3, D(-1), D(0), D(1), 1, 0, 0, 0, 0, 1, 2, D(4, 5),
            (const dspec[]){{2, 1, 1}, {0, 4, 1}, {0, 5, 1}});
    /* x[1, ::-2, ::-3] */
    ss_case("j", X, 3, D(1, 0, 0), D(2, 0, 0), D(1, -2, -3), 3, 6, 6, 0, 0, 1, 2, D(2, 2),
            (const dspec[]){{1, 1, 1}, {3, 2, -2}, {4, 2, -3}});
    /* x[..., 0] */
    ss_case("n", X, 3, D(0, 0), D(0, 1), D(1, 1), 2, 0, 0, 1, 0, 2, 2, D(3, 4),
            (const dspec[]){{0, 3, 1}, {0, 4, 1}, {0, 1, 1}});
    /* x[1:, ..., newaxis, 2:4] : the new axis after the ellipsis */
    ss_case("o", X, 3, D(1, 0, 0, 2), D(0, 0, 0, 4), D(1, 1, 1, 1), 4, 0, 1, 2, 4, 0, 4, D(2, 4, 1, 2),
            (const dspec[]){{1, 2, 1}, {0, 4, 1}, {2, 2, 1}});
    /* x[:, 3:1:-1, -1:-6:-2] with negative begin/end */
    ss_case("p", X, 3, D(0, 3, -1), D(0, 1, -6), D(1, -1, -2), 3, 1, 1, 0, 0, 0, 3, D(3, 2, 3),
            (const dspec[]){{0, 3, 1}, {3, 2, -1}, {4, 3, -2}});
    /* x[0:2, 1] on a 2-D tensor with stride 2 beyond the end */
    ss_case("q", D(5, 3), 2, D(0, 1), D(5, 2), D(2, 1), 2, 0, 0, 0, 0, 2, 1, D(3),
            (const dspec[]){{0, 3, 2}, {1, 1, 1}});

    /* identity: x[:, :, :] and x[:, newaxis, ..., newaxis] forward the input */
    kt *k = kt_op("StridedSlice", 4,
                  "attr { key: \"begin_mask\" value { i: 1 } } attr { key: \"end_mask\" value { i: 1 } } "
                  "attr { key: \"new_axis_mask\" value { i: 10 } } attr { key: \"ellipsis_mask\" value { i: 4 } }");
    k->in[0] = iota32(3, X);
    k->in[1] = I32(1, D(4), 0, 0, 0, 0);
    k->in[2] = I32(1, D(4), 0, 0, 0, 0);
    k->in[3] = I32(1, D(4), 1, 1, 1, 1);
    kt_ok(k, 4, 1);
    expect_shape(&k->out[0], DT_INT32, 5, D(3, 1, 4, 5, 1));
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    kt_free(k);

    ss_err(X, 3, D(3, 0, 0, 0), D(4, 0, 0, 0), D(1, 1, 1, 1), 1, 0, 0, 0, 0, 1,
           "node 'n' (StridedSlice): slice index 3 of dimension 0 out of bounds.");
    ss_err(X, 3, D(-4, 0, 0, 0), D(0, 0, 0, 0), D(1, 1, 1, 1), 1, 0, 0, 0, 0, 1,
           "node 'n' (StridedSlice): slice index -1 of dimension 0 out of bounds.");
    ss_err(X, 3, D(0, 0, 0, 0), D(1, 0, 0, 0), D(0, 1, 1, 1), 1, 0, 0, 0, 0, 0,
           "node 'n' (StridedSlice): strides[0] must be non-zero");
    ss_err(X, 3, D(0, 0, 0, 0), D(1, 0, 0, 0), D(1, 1, 1, 1), 2, 0, 0, 3, 0, 0,
           "node 'n' (StridedSlice): Multiple ellipses in slice spec not allowed");
    ss_err(X, 3, D(0, 0, 0, 0), D(1, 1, 1, 1), D(1, 1, 1, 1), 4, 0, 0, 0, 0, 0,
           "node 'n' (StridedSlice): Index out of range using input dim 3; input has only 3 dims");
    ss_err(X, 3, D(1, 0, 0, 0), D(2, 0, 0, 0), D(-1, 1, 1, 1), 1, 0, 0, 0, 0, 1,
           "node 'n' (StridedSlice): only stride 1 allowed on non-range indexing.");
}

/* ---- Pad / MirrorPad / Tile / Reverse / BroadcastTo ---------------------------------------------- */
static void test_pad(void **state)
{
    (void)state;
    kt *k = kt_op("Pad", 2, NULL);
    k->in[0] = I32(2, D(2, 2), 1, 2, 3, 4);
    k->in[1] = I32(2, D(2, 2), 1, 0, 0, 1);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(3, 3), 0, 0, 0, 1, 2, 0, 3, 4, 0);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(2, D(2, 2), 0, 0, 0, 0);
    kt_ok(k, 2, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 2), 0, -1, 0, 0);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Pad): Paddings must be non-negative: 0 -1");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(1, 2), 0, 1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Pad): The first dimension of paddings must be the rank of inputs[1,2] [2,2]");
    kt_free(k);

    k = kt_op("PadV2", 3, NULL);
    k->in[0] = F32(1, D(2), 1, 2);
    k->in[1] = I32(2, D(1, 2), 2, 1);
    k->in[2] = mk(DT_FLOAT, 0, NULL, (const float[]){-1});
    kt_ok(k, 3, 1);
    EXPECT_F32(&k->out[0], 1, D(5), -1, -1, 1, 2, -1);
    kt_free(k);

    k = kt_op("PadV2", 3, NULL);
    k->in[0] = mks(1, D(1), (const char *const[]){"a"});
    k->in[1] = I32(2, D(1, 2), 1, 1);
    k->in[2] = mks(0, NULL, (const char *const[]){"-"});
    kt_ok(k, 3, 1);
    expect_strings(&k->out[0], 1, D(3), (const char *const[]){"-", "a", "-"});
    kt_free(k);
}

static void test_mirror_pad(void **state)
{
    (void)state;
    kt *k = kt_op("MirrorPad", 2, "attr { key: \"mode\" value { s: \"REFLECT\" } }");
    k->in[0] = I32(2, D(2, 3), 1, 2, 3, 4, 5, 6);
    k->in[1] = I32(2, D(2, 2), 1, 1, 2, 2);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(4, 7), 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2,
               1);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 2), 2, 0, 0, 0);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (MirrorPad): paddings must be less than the dimension size: 2, 0 not less than 2");
    kt_free(k);

    k = kt_op("MirrorPad", 2, "attr { key: \"mode\" value { s: \"SYMMETRIC\" } }");
    k->in[0] = I32(2, D(2, 3), 1, 2, 3, 4, 5, 6);
    k->in[1] = I32(2, D(2, 2), 1, 1, 2, 2);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(4, 7), 2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6,
               5);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 2), 0, 0, 3, 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH,
           "node 'n' (MirrorPad): paddings must be no greater than the dimension size: 3, 4 greater than 3");
    kt_free(k);

    /* 3-D reflect, uneven pads, against a direct index computation */
    k = kt_op("MirrorPad", 2, "attr { key: \"mode\" value { s: \"REFLECT\" } }");
    k->in[0] = iota32(3, D(3, 4, 5));
    k->in[1] = I32(2, D(3, 2), 2, 1, 0, 3, 4, 2);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_INT32, 3, D(6, 7, 11));
    const int64_t pd[3][2] = {{2, 1}, {0, 3}, {4, 2}}, xd[3] = {3, 4, 5}, od[3] = {6, 7, 11};
    const int32_t *o = k->out[0].data;
    for (int64_t a = 0; a < od[0]; a++)
        for (int64_t b = 0; b < od[1]; b++)
            for (int64_t cc = 0; cc < od[2]; cc++) {
                int64_t idx[3] = {a, b, cc}, src[3];
                for (int d = 0; d < 3; d++) {
                    int64_t j = idx[d] - pd[d][0];
                    if (j < 0) j = -j;
                    if (j >= xd[d]) j = 2 * (xd[d] - 1) - j;
                    src[d] = j;
                }
                assert_int_equal(o[(a * od[1] + b) * od[2] + cc], (src[0] * 4 + src[1]) * 5 + src[2]);
            }
    kt_free(k);
}

static void test_tile_reverse_broadcast(void **state)
{
    (void)state;
    kt *k = kt_op("Tile", 2, NULL);
    k->in[0] = I32(2, D(2, 2), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 2, 3);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(4, 6), 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(1, D(2), 0, 1);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_INT32, 2, D(0, 2));
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 1, -1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Tile): Expected multiples[1] >= 0, but got -1");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(3), 1, 1, 1);
    kt_err(k, 2, 1, GN_ERR_GRAPH,
           "node 'n' (Tile): Expected multiples argument to be a vector of length 2 but got length 3");
    kt_free(k);

    k = kt_op("ReverseV2", 2, NULL);
    k->in[0] = iota32(2, D(2, 3));
    k->in[1] = I32(1, D(1), -1);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 2, 1, 0, 5, 4, 3);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(1, D(2), 0, 1);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 5, 4, 3, 2, 1, 0);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 1, -1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ReverseV2): axis 1 specified more than once.");
    kt_free(k);

    k = kt_op("BroadcastTo", 2, NULL);
    k->in[0] = I32(2, D(2, 1), 1, 2);
    k->in[1] = I32(1, D(3), 2, 2, 3);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 3, D(2, 2, 3), 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(2), 3, 3);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (BroadcastTo): Unable to broadcast tensor of shape [2,1] to tensor of shape [3,3]");
    kt_free(k);

    k = kt_op("BroadcastArgs", 2, NULL);
    k->in[0] = I32(1, D(2), 2, 1);
    k->in[1] = I32(1, D(3), 4, 1, 3);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 1, D(3), 4, 2, 3);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(1), 3);
    gn__tensor_release(&k->in[0]);
    k->in[0] = I32(1, D(1), 2);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (BroadcastArgs): Incompatible shapes: [2] vs. [3]");
    kt_free(k);
}

/* ---- gathers ------------------------------------------------------------------------------- */
static void test_gather(void **state)
{
    (void)state;
    kt *k = kt_op("GatherV2", 3, NULL);
    k->in[0] = iota32(2, D(3, 4));
    k->in[1] = I32(2, D(2, 2), 3, 0, 1, 1);
    k->in[2] = S32(1);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 3, D(3, 2, 2), 3, 0, 1, 1, 7, 4, 5, 5, 11, 8, 9, 9);
    gn__tensor_release(&k->in[2]);
    k->in[2] = S32(0);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (GatherV2): indices[0,0] = 3 is not in [0, 3)");
    gn__tensor_release(&k->in[1]);
    k->in[1] = I64(1, D(4), 0, 1, 2, -1);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (GatherV2): indices[3] = -1 is not in [0, 3)");
    gn__tensor_release(&k->in[2]);
    k->in[2] = S32(2);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (GatherV2): Expected axis in the range [-2, 2), but got 2");
    kt_free(k);

    /* batch_dims = 1: out[b, j] = params[b, indices[b, j]] */
    k = kt_op("GatherV2", 3, "attr { key: \"batch_dims\" value { i: 1 } }");
    k->in[0] = iota32(2, D(2, 5));
    k->in[1] = I32(2, D(2, 3), 4, 0, 2, 1, 1, 3);
    k->in[2] = S32(1);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 4, 0, 2, 6, 6, 8);
    kt_free(k);
    /* batch_dims = 1, axis 2 of params [2, 2, 3] */
    k = kt_op("GatherV2", 3, "attr { key: \"batch_dims\" value { i: -1 } }");
    k->in[0] = iota32(3, D(2, 2, 3));
    k->in[1] = I32(2, D(2, 1), 2, 0);
    k->in[2] = S32(2);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 3, D(2, 2, 1), 2, 5, 6, 9);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(3, 1), 0, 0, 0);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (GatherV2): params.shape[0]: 2 should be equal to indices.shape[0]: 3");
    kt_free(k);

    k = kt_op("Gather", 2, NULL);
    k->in[0] = mks(1, D(3), (const char *const[]){"a", "bc", "def"});
    k->in[1] = I32(1, D(4), 2, 0, 2, 1);
    kt_ok(k, 2, 1);
    expect_strings(&k->out[0], 1, D(4), (const char *const[]){"def", "a", "def", "bc"});
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(1, D(5), 0, 1, 2, 0, 7);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Gather): indices[4] = 7 is not in [0, 3)");
    kt_free(k);

    k = kt_op("GatherNd", 2, NULL);
    k->in[0] = iota32(3, D(2, 3, 2));
    k->in[1] = I32(2, D(2, 2), 1, 2, 0, 1);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 2), 10, 11, 2, 3);
    gn__tensor_release(&k->in[1]);
    k->in[1] = I32(2, D(2, 2), 1, 2, 2, 0);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (GatherNd): indices[1] = [2, 0] does not index into param shape [2,3,2]");
    kt_free(k);

    k = kt_op("ScatterNd", 3, NULL);
    k->in[0] = I32(2, D(3, 1), 1, 3, 1);
    k->in[1] = F32(2, D(3, 2), 1, 2, 3, 4, 10, 20);
    k->in[2] = I32(1, D(2), 4, 2);
    kt_ok(k, 3, 1);
    EXPECT_F32(&k->out[0], 2, D(4, 2), 0, 0, 11, 22, 0, 0, 3, 4);
    gn__tensor_release(&k->in[0]);
    k->in[0] = I32(2, D(3, 1), 1, 4, 1);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (ScatterNd): indices[1] = [4] does not index into shape [4,2]");
    kt_free(k);
}

static void test_one_hot_where_topk(void **state)
{
    (void)state;
    kt *k = kt_op("OneHot", 4, NULL);
    k->in[0] = I64(1, D(3), 0, 2, -1);
    k->in[1] = S32(3);
    k->in[2] = mk(DT_FLOAT, 0, NULL, (const float[]){5});
    k->in[3] = mk(DT_FLOAT, 0, NULL, (const float[]){-1});
    kt_ok(k, 4, 1);
    EXPECT_F32(&k->out[0], 2, D(3, 3), 5, -1, -1, -1, -1, 5, -1, -1, -1);
    kt_free(k);
    k = kt_op("OneHot", 4, "attr { key: \"axis\" value { i: 0 } }");
    k->in[0] = mk(DT_UINT8, 1, D(2), (const uint8_t[]){1, 0});
    k->in[1] = S32(2);
    k->in[2] = I32(0, NULL, 1);
    k->in[3] = I32(0, NULL, 0);
    kt_ok(k, 4, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 2), 0, 1, 1, 0);
    kt_free(k);

    k = kt_op("Where", 1, NULL);
    k->in[0] = mk(DT_BOOL, 2, D(2, 3), (const uint8_t[]){0, 1, 0, 1, 0, 1});
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 2, D(3, 2), 0, 1, 1, 0, 1, 2);
    gn__tensor_release(&k->in[0]);
    k->in[0] = F32(1, D(4), 0, -0.0f, NAN, 2);
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 2, D(2, 1), 2, 3);
    kt_free(k);

    k = kt_op("TopKV2", 2, NULL);
    k->in[0] = F32(2, D(2, 4), 1, 3, 2, 3, -1, -2, 0, 7);
    k->in[1] = S32(2);
    kt_ok(k, 2, 2);
    EXPECT_F32(&k->out[0], 2, D(2, 2), 3, 3, 7, 0);
    EXPECT_I32(&k->out[1], 2, D(2, 2), 1, 3, 3, 2);
    gn__tensor_release(&k->in[1]);
    k->in[1] = S32(5);
    kt_err(k, 2, 2, GN_ERR_GRAPH, "node 'n' (TopKV2): input must have at least k columns. Had 4, needed 5");
    kt_free(k);

    /* TopK (v1, k an attr, int32 indices): TopKV2's values for the same k
     * (tools/make_inference_op_values.py); ties keep the lower index first */
    k = kt_op("TopK", 1, "attr { key: 'k' value { i: 2 } }");
    k->in[0] = F32(2, D(2, 4), 1, 3, 3, 2, 5, 5, 5, 0);
    kt_ok(k, 1, 2);
    EXPECT_F32(&k->out[0], 2, D(2, 2), 3, 3, 5, 5);
    EXPECT_I32(&k->out[1], 2, D(2, 2), 1, 2, 0, 1);
    kt_free(k);
    k = kt_op("TopK", 1, "attr { key: 'k' value { i: 3 } }");
    k->in[0] = I32(2, D(2, 4), 1, 3, 3, 2, 5, 5, 5, 0);
    kt_ok(k, 1, 2);
    EXPECT_I32(&k->out[0], 2, D(2, 3), 3, 3, 2, 5, 5, 5);
    EXPECT_I32(&k->out[1], 2, D(2, 3), 1, 2, 3, 0, 1, 2);
    kt_free(k);
    k = kt_op("TopK", 1, "attr { key: 'k' value { i: 5 } }");
    k->in[0] = F32(2, D(2, 4), 1, 3, 3, 2, 5, 5, 5, 0);
    kt_err(k, 1, 2, GN_ERR_GRAPH, "node 'n' (TopK): input must have at least k columns. Had 4, needed 5");
    kt_free(k);
}

/* ---- generators -------------------------------------------------------------------------- */
static void test_fill_range_shape(void **state)
{
    (void)state;
    kt *k = kt_op("Fill", 2, NULL);
    k->in[0] = I64(1, D(2), 2, 2);
    k->in[1] = mk(DT_HALF, 0, NULL, (const uint16_t[]){0x3c00});
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_HALF, 2, D(2, 2));
    expect_data(&k->out[0], (const uint16_t[]){0x3c00, 0x3c00, 0x3c00, 0x3c00}, 2);
    gn__tensor_release(&k->in[1]);
    k->in[1] = mks(0, NULL, (const char *const[]){"s"});
    kt_ok(k, 2, 1);
    expect_strings(&k->out[0], 2, D(2, 2), (const char *const[]){"s", "s", "s", "s"});
    gn__tensor_release(&k->in[0]);
    k->in[0] = I32(1, D(1), -1);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (Fill): Dimension -1 must be >= 0");
    kt_free(k);

    k = kt_op("Range", 3, NULL);
    k->in[0] = S32(3);
    k->in[1] = S32(-4);
    k->in[2] = S32(-3);
    kt_ok(k, 3, 1);
    EXPECT_I32(&k->out[0], 1, D(3), 3, 0, -3);
    gn__tensor_release(&k->in[2]);
    k->in[2] = S32(1);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (Range): Requires start <= limit when delta > 0: 3/-4");
    gn__tensor_release(&k->in[2]);
    k->in[2] = S32(0);
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (Range): Requires delta != 0: 0");
    kt_free(k);
    k = kt_op("Range", 3, NULL);
    k->in[0] = mk(DT_FLOAT, 0, NULL, (const float[]){0});
    k->in[1] = mk(DT_FLOAT, 0, NULL, (const float[]){1});
    k->in[2] = mk(DT_FLOAT, 0, NULL, (const float[]){0.3f});
    kt_ok(k, 3, 1);
    /* accumulated, as TensorFlow does */
    float v1 = 0.3f, v2 = v1 + 0.3f, v3 = v2 + 0.3f;
    EXPECT_F32(&k->out[0], 1, D(4), 0, v1, v2, v3);
    kt_free(k);

    k = kt_op("LinSpace", 3, NULL);
    k->in[0] = mk(DT_FLOAT, 0, NULL, (const float[]){1});
    k->in[1] = mk(DT_FLOAT, 0, NULL, (const float[]){2});
    k->in[2] = S32(5);
    kt_ok(k, 3, 1);
    EXPECT_F32(&k->out[0], 1, D(5), 1, 1.25f, 1.5f, 1.75f, 2);
    kt_free(k);

    k = kt_op("Shape", 1, "attr { key: \"out_type\" value { type: DT_INT64 } }");
    k->in[0] = iota32(3, D(2, 0, 7));
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 1, D(3), 2, 0, 7);
    kt_free(k);
    k = kt_op("ShapeN", 2, NULL);
    k->in[0] = iota32(2, D(2, 3));
    k->in[1] = S32(1);
    kt_ok(k, 2, 2);
    EXPECT_I32(&k->out[0], 1, D(2), 2, 3);
    expect_shape(&k->out[1], DT_INT32, 1, D(0));
    kt_free(k);
    k = kt_op("Size", 1, "attr { key: \"out_type\" value { type: DT_INT64 } }");
    k->in[0] = iota32(2, D(2, 3));
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 0, NULL, 6);
    kt_free(k);
    k = kt_op("Rank", 1, NULL);
    k->in[0] = iota32(2, D(2, 3));
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 0, NULL, 2);
    kt_free(k);

    k = kt_op("ZerosLike", 1, NULL);
    k->in[0] = F32(1, D(2), 3, 4);
    kt_ok(k, 1, 1);
    EXPECT_F32(&k->out[0], 1, D(2), 0, 0);
    kt_free(k);
    k = kt_op("OnesLike", 1, NULL);
    k->in[0] = mk(DT_BOOL, 1, D(2), (const uint8_t[]){0, 0});
    kt_ok(k, 1, 1);
    expect_data(&k->out[0], (const uint8_t[]){1, 1}, 1);
    gn__tensor_release(&k->in[0]);
    k->in[0] = mk(DT_HALF, 1, D(1), (const uint16_t[]){0});
    kt_ok(k, 1, 1);
    expect_data(&k->out[0], (const uint16_t[]){0x3c00}, 2);
    kt_free(k);
}

/* ---- images ------------------------------------------------------------------------------- */
static void expect_close(const gn__tensor *t, const float *v, int64_t n)
{
    assert_int_equal(gn__tensor_numel(t), n);
    const float *o = t->data;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(o[i] - v[i]) > 1e-5f) {
            fprintf(stderr, "element %lld: %g vs %g\n", (long long)i, o[i], v[i]);
            fail();
        }
}

static void test_resize(void **state)
{
    (void)state;
    kt *k = kt_op("ResizeBilinear", 2, NULL);
    k->in[0] = F32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 3, 3);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_FLOAT, 4, D(1, 3, 3, 1));
    expect_close(&k->out[0], (const float[]){1, 5.f / 3, 2, 7.f / 3, 3, 10.f / 3, 3, 11.f / 3, 4}, 9);
    kt_free(k);
    k = kt_op("ResizeBilinear", 2, "attr { key: \"align_corners\" value { b: true } }");
    k->in[0] = mk(DT_UINT8, 4, D(1, 2, 2, 1), (const uint8_t[]){1, 2, 3, 4});
    k->in[1] = I32(1, D(2), 3, 3);
    kt_ok(k, 2, 1);
    expect_shape(&k->out[0], DT_FLOAT, 4, D(1, 3, 3, 1));
    expect_close(&k->out[0], (const float[]){1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}, 9);
    kt_free(k);
    k = kt_op("ResizeBilinear", 2, "attr { key: \"half_pixel_centers\" value { b: true } }");
    k->in[0] = F32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 4, 4);
    kt_ok(k, 2, 1);
    expect_close(&k->out[0],
                 (const float[]){1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f,
                                 3.75f, 4},
                 16);
    kt_free(k);
    k = kt_op("ResizeBilinear", 2,
              "attr { key: \"half_pixel_centers\" value { b: true } } attr { key: \"align_corners\" value { b: true } }");
    k->in[0] = F32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 4, 4);
    kt_err(k, 2, 1, GN_ERR_GRAPH, "node 'n' (ResizeBilinear): If half_pixel_centers is True, align_corners must be False.");
    kt_free(k);

    k = kt_op("ResizeNearestNeighbor", 2, NULL);
    k->in[0] = I32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 4, 4);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 4, D(1, 4, 4, 1), 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
    kt_free(k);
    k = kt_op("ResizeNearestNeighbor", 2, "attr { key: \"align_corners\" value { b: true } }");
    k->in[0] = I32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 3, 3);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 4, D(1, 3, 3, 1), 1, 2, 2, 3, 4, 4, 3, 4, 4);
    kt_free(k);
    k = kt_op("ResizeNearestNeighbor", 2, "attr { key: \"half_pixel_centers\" value { b: true } }");
    k->in[0] = I32(4, D(1, 2, 2, 1), 1, 2, 3, 4);
    k->in[1] = I32(1, D(2), 3, 3);
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 4, D(1, 3, 3, 1), 1, 2, 2, 3, 4, 4, 3, 4, 4);
    kt_free(k);
}

static void test_space_depth(void **state)
{
    (void)state;
    kt *k = kt_op("SpaceToDepth", 1, "attr { key: \"block_size\" value { i: 2 } }");
    k->in[0] = iota32(4, D(1, 4, 4, 1));
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 4, D(1, 2, 2, 4), 0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    gn__tensor_release(&k->in[0]);
    k->in[0] = iota32(4, D(1, 3, 4, 1));
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (SpaceToDepth): Image width 4 and height 3 should be divisible by block_size: 2");
    kt_free(k);
    k = kt_op("SpaceToDepth", 1,
              "attr { key: \"block_size\" value { i: 2 } } attr { key: \"data_format\" value { s: \"NCHW\" } }");
    k->in[0] = iota32(4, D(1, 1, 4, 4));
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 4, D(1, 4, 2, 2), 0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15);
    kt_free(k);

    /* DepthToSpace inverts SpaceToDepth, both layouts, several channels */
    for (int nchw = 0; nchw < 2; nchw++) {
        char attrs[200];
        snprintf(attrs, sizeof attrs,
                 "attr { key: \"block_size\" value { i: 3 } } attr { key: \"data_format\" value { s: \"%s\" } }",
                 nchw ? "NCHW" : "NHWC");
        kt *a = kt_op("SpaceToDepth", 1, attrs), *b = kt_op("DepthToSpace", 1, attrs);
        a->in[0] = nchw ? iota32(4, D(2, 2, 6, 9)) : iota32(4, D(2, 6, 9, 2));
        kt_ok(a, 1, 1);
        gn__tensor_copy_ref(&b->in[0], &a->out[0]);
        kt_ok(b, 1, 1);
        expect_shape(&b->out[0], DT_INT32, 4, a->in[0].dims);
        expect_data(&b->out[0], a->in[0].data, 4);
        kt_free(a);
        kt_free(b);
    }
    k = kt_op("DepthToSpace", 1, "attr { key: \"block_size\" value { i: 2 } }");
    k->in[0] = iota32(4, D(1, 1, 1, 6));
    kt_err(k, 1, 1, GN_ERR_GRAPH, "node 'n' (DepthToSpace): Input depth dimension 6 should be divisible by: 4");
    kt_free(k);
}

static void test_strings(void **state)
{
    (void)state;
    kt *k = kt_op("StringJoin", 3, "attr { key: \"separator\" value { s: \"-\" } }");
    k->in[0] = mks(1, D(2), (const char *const[]){"a", "b"});
    k->in[1] = mks(0, NULL, (const char *const[]){"x"});
    k->in[2] = mks(1, D(2), (const char *const[]){"", "cd"});
    kt_ok(k, 3, 1);
    expect_strings(&k->out[0], 1, D(2), (const char *const[]){"a-x-", "b-x-cd"});
    gn__tensor_release(&k->in[2]);
    k->in[2] = mks(1, D(3), (const char *const[]){"", "", ""});
    kt_err(k, 3, 1, GN_ERR_GRAPH, "node 'n' (StringJoin): Input shapes do not match: [2] vs. [3]");
    kt_free(k);

    /* string outputs never share the inputs' buffers */
    k = kt_op("Tile", 2, NULL);
    k->in[0] = mks(1, D(2), (const char *const[]){"p", "qq"});
    k->in[1] = I32(1, D(1), 2);
    kt_ok(k, 2, 1);
    expect_strings(&k->out[0], 1, D(4), (const char *const[]){"p", "qq", "p", "qq"});
    gn__tensor_release(&k->in[0]);
    expect_strings(&k->out[0], 1, D(4), (const char *const[]){"p", "qq", "p", "qq"});
    kt_free(k);

    k = kt_op("StridedSlice", 4, "attr { key: \"shrink_axis_mask\" value { i: 1 } }");
    k->in[0] = mks(1, D(3), (const char *const[]){"u", "vv", "www"});
    k->in[1] = I32(1, D(1), -2);
    k->in[2] = I32(1, D(1), -1);
    k->in[3] = I32(1, D(1), 1);
    kt_ok(k, 4, 1);
    expect_strings(&k->out[0], 0, NULL, (const char *const[]){"vv"});
    kt_free(k);

    k = kt_op("ZerosLike", 1, NULL);
    k->in[0] = mks(1, D(2), (const char *const[]){"u", "vv"});
    kt_ok(k, 1, 1);
    expect_strings(&k->out[0], 1, D(2), (const char *const[]){"", ""});
    kt_free(k);
}

static void test_misc_ops(void **state)
{
    (void)state;
    kt *k = kt_op("Reverse", 2, NULL);
    k->in[0] = iota32(2, D(2, 2));
    k->in[1] = mk(DT_BOOL, 1, D(2), (const uint8_t[]){1, 0});
    kt_ok(k, 2, 1);
    EXPECT_I32(&k->out[0], 2, D(2, 2), 2, 3, 0, 1);
    kt_free(k);

    k = kt_op("Bitcast", 1, "attr { key: \"type\" value { type: DT_UINT8 } }");
    k->in[0] = I32(1, D(1), 0x04030201);
    kt_ok(k, 1, 1);
    expect_shape(&k->out[0], DT_UINT8, 2, D(1, 4));
    expect_data(&k->out[0], (const uint8_t[]){1, 2, 3, 4}, 1);
    assert_ptr_equal(k->out[0].buf, k->in[0].buf);
    kt_free(k);
    k = kt_op("Bitcast", 1, "attr { key: \"type\" value { type: DT_INT32 } }");
    k->in[0] = mk(DT_UINT16, 2, D(1, 2), (const uint16_t[]){0x0201, 0x0403});
    kt_ok(k, 1, 1);
    EXPECT_I32(&k->out[0], 1, D(1), 0x04030201);
    kt_free(k);

    k = kt_op("MatrixBandPart", 3, NULL);
    k->in[0] = mk(DT_FLOAT, 2, D(3, 4), (const float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    k->in[1] = I64(0, NULL, -1);
    k->in[2] = I64(0, NULL, 0);
    kt_ok(k, 3, 1);
    EXPECT_F32(&k->out[0], 2, D(3, 4), 1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0);
    gn__tensor_release(&k->in[1]);
    gn__tensor_release(&k->in[2]);
    k->in[1] = I64(0, NULL, 1);
    k->in[2] = I64(0, NULL, 1);
    kt_ok(k, 3, 1);
    EXPECT_F32(&k->out[0], 2, D(3, 4), 1, 2, 0, 0, 5, 6, 7, 0, 0, 10, 11, 12);
    kt_free(k);

    k = kt_op("Empty", 1, "attr { key: \"dtype\" value { type: DT_INT64 } }");
    k->in[0] = I32(1, D(2), 2, 1);
    kt_ok(k, 1, 1);
    EXPECT_I64(&k->out[0], 2, D(2, 1), 0, 0);
    kt_free(k);
}

/* The op list (src/opdef/ops.def) names the array kernels; the whole list
 * is checked in op_list_test.c. */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("StridedSlice"), gn__ak_strided_slice);
    assert_ptr_equal(gn__kernel_for("Fill"), gn__array_k_fill);
    assert_ptr_equal(gn__kernel_for("Snapshot"), gn__array_k_forward);
    assert_ptr_equal(gn__kernel_for("NoOp"), gn__array_k_noop);
    assert_null(gn__kernel_for("NoSuchOp"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_const_typed_fields),
        cmocka_unit_test(test_const_strings_and_content),
        cmocka_unit_test(test_tensor_proto_errors),
        cmocka_unit_test(test_tensor_proto_roundtrip),
        cmocka_unit_test(test_identity_family),
        cmocka_unit_test(test_check_numerics_ensure_shape),
        cmocka_unit_test(test_check_numerics_v2),
        cmocka_unit_test(test_reverse_sequence),
        cmocka_unit_test(test_dynamic_partition),
        cmocka_unit_test(test_dynamic_stitch),
        cmocka_unit_test(test_string_to_number),
        cmocka_unit_test(test_reshape_squeeze_expand),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_concat_pack),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_strided_slice),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_mirror_pad),
        cmocka_unit_test(test_tile_reverse_broadcast),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_one_hot_where_topk),
        cmocka_unit_test(test_fill_range_shape),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_space_depth),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_misc_ops),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
