/* gen_graph: writes a synthetic TensorFlow GraphDef for the benchmarks.
 *
 *   gen_graph KIND NODES OUT.pb [SEED]
 *
 * KIND is one of
 *   conv         ResNet-style chain of conv blocks on [1,32,32,16] NHWC:
 *                Const kernel, Conv2D, Const bias, BiasAdd, four Const BN
 *                params, FusedBatchNormV3 (inference), Relu, and a residual
 *                AddV2 every other block.
 *   transformer  pre-LN transformer blocks on [8,128,64]: layer norm from
 *                Mean / SquaredDifference / Rsqrt, Q/K/V/O MatMuls with
 *                Reshape / Transpose / BatchMatMulV2 / Softmax, an MLP with
 *                the tanh approximation of Gelu, residual AddV2s.
 *   dag          random DAG of elementwise float ops (AddV2, Mul, Maximum,
 *                Relu, Tanh, Identity, AddN) over four Placeholders, with hub
 *                nodes consumed by hundreds of others and some control edges.
 *   chain        one long chain of Identity / Relu / AddV2-with-a-Const: the
 *                longest path is about 8/9 of the node count.
 *
 * The graph has exactly NODES nodes (blocks are topped up with Identity nodes
 * at the end) and is a valid GraphDef as TensorFlow writes it: every node has
 * the attrs TensorFlow would record, attrs sorted by key, nodes in creation
 * (topological) order. Output is deterministic for a given (KIND, NODES, SEED).
 *
 * Nodes are packed one at a time with protobuf_c_message_pack and written as
 * GraphDef field 1 records, followed by the VersionDef (field 4): the bytes
 * are exactly those of packing the whole GraphDef, without holding it in
 * memory. Weight matrices use the short form of TensorProto (one float_val
 * meaning "repeat"), small vectors use tensor_content, so 10^6 nodes take
 * 60-145 MB.
 *
 * Prints one line: kind, nodes, longest path (in nodes), edges, bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/framework/types.pb-c.h"
#include "tensorflow/core/framework/versions.pb-c.h"

#define MAX_IN 64
#define MAX_ATTR 12

/* ---- small helpers ------------------------------------------------------------ */

static void die(const char *msg)
{
    fprintf(stderr, "gen_graph: %s\n", msg);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* splitmix64: deterministic and identical on every platform */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(uint64_t *s, uint32_t n) { return (uint32_t)(rng_next(s) % n); }

static float rng_float(uint64_t *s) /* in [-1, 1) */
{
    return (float)((double)(rng_next(s) >> 40) / (double)(1ull << 23) - 1.0);
}

/* ---- the generator state ------------------------------------------------------ */

typedef struct gen {
    FILE *f;
    const char *path;
    uint64_t rng;
    uint32_t target;          /* nodes wanted */
    uint32_t n;               /* nodes written */
    uint64_t edges;           /* data + control */
    uint64_t bytes;
    /* names of all nodes written (inputs refer to any earlier node) */
    char *names;
    size_t names_len, names_cap;
    uint32_t *name_off;
    /* longest path ending at each node, in nodes */
    uint32_t *depth;
    uint32_t max_depth;
    uint8_t *buf;
    size_t buf_cap;
} gen;

typedef struct ref {
    uint32_t id;
    uint32_t port;
} ref;

static ref R(uint32_t id) { ref r = {id, 0}; return r; }

static const char *node_name(const gen *g, uint32_t id) { return g->names + g->name_off[id]; }

static void put_bytes(gen *g, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, g->f) != n) die("write failed");
    g->bytes += n;
}

static void put_varint(gen *g, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    put_bytes(g, b, n);
}

/* Writes `m` as field `field` (length-delimited) of the enclosing GraphDef. */
static void put_message(gen *g, uint32_t field, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > g->buf_cap) {
        g->buf_cap = n * 2;
        g->buf = xrealloc(g->buf, g->buf_cap);
    }
    size_t w = protobuf_c_message_pack(m, g->buf);
    if (w != n) die("protobuf_c_message_pack wrote an unexpected size");
    put_varint(g, ((uint64_t)field << 3) | 2);
    put_varint(g, n);
    put_bytes(g, g->buf, n);
}

static int cmp_attr(const void *a, const void *b)
{
    const Tensorflow__NodeDef__AttrEntry *x = *(Tensorflow__NodeDef__AttrEntry *const *)a;
    const Tensorflow__NodeDef__AttrEntry *y = *(Tensorflow__NodeDef__AttrEntry *const *)b;
    return strcmp(x->key, y->key);
}

/* Writes one node and returns its id. Data inputs first, then control inputs
 * ("^name"), as TensorFlow orders them; attrs sorted by key (TensorFlow's
 * deterministic map order). */
static uint32_t emit(gen *g, const char *name, const char *op, const ref *in, size_t n_in, const uint32_t *ctl,
                     size_t n_ctl, Tensorflow__NodeDef__AttrEntry *const *attrs, size_t n_attrs)
{
    if (g->n >= g->target) die("internal: more nodes than asked for");
    if (n_in + n_ctl > MAX_IN || n_attrs > MAX_ATTR) die("internal: too many inputs or attrs");
    char inbuf[MAX_IN][192];
    char *inputs[MAX_IN];
    uint32_t d = 0;
    for (size_t i = 0; i < n_in; i++) {
        if (in[i].port)
            snprintf(inbuf[i], sizeof inbuf[i], "%s:%u", node_name(g, in[i].id), in[i].port);
        else
            snprintf(inbuf[i], sizeof inbuf[i], "%s", node_name(g, in[i].id));
        inputs[i] = inbuf[i];
        if (g->depth[in[i].id] > d) d = g->depth[in[i].id];
    }
    for (size_t i = 0; i < n_ctl; i++) {
        snprintf(inbuf[n_in + i], sizeof inbuf[0], "^%s", node_name(g, ctl[i]));
        inputs[n_in + i] = inbuf[n_in + i];
        if (g->depth[ctl[i]] > d) d = g->depth[ctl[i]];
    }
    Tensorflow__NodeDef__AttrEntry *sorted[MAX_ATTR];
    memcpy(sorted, attrs, n_attrs * sizeof *sorted);
    qsort(sorted, n_attrs, sizeof *sorted, cmp_attr);

    Tensorflow__NodeDef nd = TENSORFLOW__NODE_DEF__INIT;
    nd.name = (char *)name;
    nd.op = (char *)op;
    nd.n_input = n_in + n_ctl;
    nd.input = inputs;
    nd.n_attr = n_attrs;
    nd.attr = sorted;
    put_message(g, 1, &nd.base);

    uint32_t id = g->n++;
    size_t len = strlen(name) + 1;
    if (g->names_len + len > g->names_cap) {
        g->names_cap = (g->names_len + len) * 2;
        g->names = xrealloc(g->names, g->names_cap);
    }
    memcpy(g->names + g->names_len, name, len);
    g->name_off[id] = (uint32_t)g->names_len;
    g->names_len += len;
    g->depth[id] = d + 1;
    if (d + 1 > g->max_depth) g->max_depth = d + 1;
    g->edges += n_in + n_ctl;
    return id;
}

static uint32_t left(const gen *g) { return g->target - g->n; }

/* ---- attrs shared by many nodes (built once) ------------------------------------ */

static Tensorflow__NodeDef__AttrEntry *entry(const char *key)
{
    Tensorflow__NodeDef__AttrEntry *e = xmalloc(sizeof *e);
    Tensorflow__AttrValue *v = xmalloc(sizeof *v);
    tensorflow__node_def__attr_entry__init(e);
    tensorflow__attr_value__init(v);
    e->key = (char *)key;
    e->value = v;
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_type(const char *key, Tensorflow__DataType t)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    e->value->type = t;
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_str(const char *key, const char *s)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    e->value->s.data = (uint8_t *)s;
    e->value->s.len = strlen(s);
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_bool(const char *key, int b)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
    e->value->b = b != 0;
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_int(const char *key, int64_t i)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
    e->value->i = i;
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_float(const char *key, float f)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
    e->value->f = f;
    return e;
}

static Tensorflow__NodeDef__AttrEntry *a_ints(const char *key, const int64_t *v, size_t n)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    Tensorflow__AttrValue__ListValue *l = xmalloc(sizeof *l);
    tensorflow__attr_value__list_value__init(l);
    l->n_i = n;
    l->i = xmalloc(n * sizeof *l->i);
    if (n) memcpy(l->i, v, n * sizeof *v);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    e->value->list = l;
    return e;
}

static Tensorflow__TensorShapeProto *shape_proto(const int64_t *dims, size_t n)
{
    Tensorflow__TensorShapeProto *s = xmalloc(sizeof *s);
    tensorflow__tensor_shape_proto__init(s);
    s->n_dim = n;
    s->dim = xmalloc(n * sizeof *s->dim);
    for (size_t i = 0; i < n; i++) {
        s->dim[i] = xmalloc(sizeof *s->dim[i]);
        tensorflow__tensor_shape_proto__dim__init(s->dim[i]);
        s->dim[i]->size = dims[i];
    }
    return s;
}

static Tensorflow__NodeDef__AttrEntry *a_shape(const char *key, const int64_t *dims, size_t n)
{
    Tensorflow__NodeDef__AttrEntry *e = entry(key);
    e->value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    e->value->shape = shape_proto(dims, n);
    return e;
}

static void free_entry(Tensorflow__NodeDef__AttrEntry *e)
{
    Tensorflow__AttrValue *v = e->value;
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST) {
        free(v->list->i);
        free(v->list);
    } else if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE) {
        for (size_t i = 0; i < v->shape->n_dim; i++) free(v->shape->dim[i]);
        free(v->shape->dim);
        free(v->shape);
    }
    free(v);
    free(e);
}

/* The attr sets, by op. */
enum { A_T_F32, A_DTYPE_F32, A_DTYPE_I32, A_NHWC, A_STRIDES1, A_DIL1, A_EXPLPAD, A_SAME, A_CUDNN, A_U_F32,
       A_EPS, A_EXPAVG, A_TRAIN0, A_TIDX_I32, A_KEEP1, A_TSHAPE_I32, A_TPERM_I32, A_FALSE_TA, A_FALSE_TB,
       A_GRAD_A, A_GRAD_B, A_ADJX0, A_ADJY0, A_ADJY1, A_N2, A_N3, A_N4, A_N5, A_COUNT };

static Tensorflow__NodeDef__AttrEntry *A[A_COUNT];

static void attrs_init(void)
{
    static const int64_t ones4[4] = {1, 1, 1, 1};
    A[A_T_F32] = a_type("T", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    A[A_DTYPE_F32] = a_type("dtype", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    A[A_DTYPE_I32] = a_type("dtype", TENSORFLOW__DATA_TYPE__DT_INT32);
    A[A_NHWC] = a_str("data_format", "NHWC");
    A[A_STRIDES1] = a_ints("strides", ones4, 4);
    A[A_DIL1] = a_ints("dilations", ones4, 4);
    A[A_EXPLPAD] = a_ints("explicit_paddings", NULL, 0);
    A[A_SAME] = a_str("padding", "SAME");
    A[A_CUDNN] = a_bool("use_cudnn_on_gpu", 1);
    A[A_U_F32] = a_type("U", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    A[A_EPS] = a_float("epsilon", 0.001f);
    A[A_EXPAVG] = a_float("exponential_avg_factor", 1.0f);
    A[A_TRAIN0] = a_bool("is_training", 0);
    A[A_TIDX_I32] = a_type("Tidx", TENSORFLOW__DATA_TYPE__DT_INT32);
    A[A_KEEP1] = a_bool("keep_dims", 1);
    A[A_TSHAPE_I32] = a_type("Tshape", TENSORFLOW__DATA_TYPE__DT_INT32);
    A[A_TPERM_I32] = a_type("Tperm", TENSORFLOW__DATA_TYPE__DT_INT32);
    A[A_FALSE_TA] = a_bool("transpose_a", 0);
    A[A_FALSE_TB] = a_bool("transpose_b", 0);
    A[A_GRAD_A] = a_bool("grad_a", 0);
    A[A_GRAD_B] = a_bool("grad_b", 0);
    A[A_ADJX0] = a_bool("adj_x", 0);
    A[A_ADJY0] = a_bool("adj_y", 0);
    A[A_ADJY1] = a_bool("adj_y", 1);
    A[A_N2] = a_int("N", 2);
    A[A_N3] = a_int("N", 3);
    A[A_N4] = a_int("N", 4);
    A[A_N5] = a_int("N", 5);
}

static void attrs_free(void)
{
    for (int i = 0; i < A_COUNT; i++) free_entry(A[i]);
}

/* ---- node builders --------------------------------------------------------------- */

static uint32_t placeholder(gen *g, const char *name, const int64_t *dims, size_t n)
{
    Tensorflow__NodeDef__AttrEntry *sh = a_shape("shape", dims, n);
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_DTYPE_F32], sh};
    uint32_t id = emit(g, name, "Placeholder", NULL, 0, NULL, 0, at, 2);
    free_entry(sh);
    return id;
}

/* How a float Const stores its values. */
typedef enum { VAL_CONTENT, VAL_SHORT } valmode;

/* A float Const of shape dims: VAL_CONTENT writes every value in
 * tensor_content (little-endian float32, as TensorFlow does), VAL_SHORT one
 * float_val (TensorFlow's "fewer values than elements: repeat the last"). */
static uint32_t const_f32(gen *g, const char *name, const int64_t *dims, size_t n, valmode mode)
{
    int64_t count = 1;
    for (size_t i = 0; i < n; i++) count *= dims[i];
    Tensorflow__TensorShapeProto__Dim dimv[8], *dimp[8];
    Tensorflow__TensorShapeProto shp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    for (size_t i = 0; i < n; i++) {
        tensorflow__tensor_shape_proto__dim__init(&dimv[i]);
        dimv[i].size = dims[i];
        dimp[i] = &dimv[i];
    }
    shp.n_dim = n;
    shp.dim = dimp;
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    t.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    t.tensor_shape = &shp;
    float one;
    uint8_t *content = NULL;
    if (mode == VAL_CONTENT && count > 1) {
        content = xmalloc((size_t)count * 4);
        for (int64_t i = 0; i < count; i++) {
            float v = rng_float(&g->rng);
            uint32_t u;
            memcpy(&u, &v, 4);
            content[4 * i + 0] = (uint8_t)u;
            content[4 * i + 1] = (uint8_t)(u >> 8);
            content[4 * i + 2] = (uint8_t)(u >> 16);
            content[4 * i + 3] = (uint8_t)(u >> 24);
        }
        t.tensor_content.data = content;
        t.tensor_content.len = (size_t)count * 4;
    } else {
        one = 0.05f + 0.01f * rng_float(&g->rng);
        t.n_float_val = 1;
        t.float_val = &one;
    }
    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    v.tensor = &t;
    Tensorflow__NodeDef__AttrEntry e = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    e.key = "value";
    e.value = &v;
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_DTYPE_F32], &e};
    uint32_t id = emit(g, name, "Const", NULL, 0, NULL, 0, at, 2);
    free(content);
    return id;
}

static uint32_t const_scalar_f32(gen *g, const char *name, float val)
{
    Tensorflow__TensorShapeProto shp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    t.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    t.tensor_shape = &shp;
    t.n_float_val = 1;
    t.float_val = &val;
    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    v.tensor = &t;
    Tensorflow__NodeDef__AttrEntry e = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    e.key = "value";
    e.value = &v;
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_DTYPE_F32], &e};
    return emit(g, name, "Const", NULL, 0, NULL, 0, at, 2);
}

/* An int32 vector Const in tensor_content (as tf.constant writes it). */
static uint32_t const_i32(gen *g, const char *name, const int32_t *vals, size_t n)
{
    Tensorflow__TensorShapeProto__Dim dim = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
    Tensorflow__TensorShapeProto__Dim *dimp = &dim;
    dim.size = (int64_t)n;
    Tensorflow__TensorShapeProto shp = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    shp.n_dim = 1;
    shp.dim = &dimp;
    uint8_t content[4 * 16];
    if (n > 16) die("internal: int32 const too long");
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)vals[i];
        content[4 * i + 0] = (uint8_t)u;
        content[4 * i + 1] = (uint8_t)(u >> 8);
        content[4 * i + 2] = (uint8_t)(u >> 16);
        content[4 * i + 3] = (uint8_t)(u >> 24);
    }
    Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
    t.dtype = TENSORFLOW__DATA_TYPE__DT_INT32;
    t.tensor_shape = &shp;
    t.tensor_content.data = content;
    t.tensor_content.len = 4 * n;
    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    v.tensor = &t;
    Tensorflow__NodeDef__AttrEntry e = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    e.key = "value";
    e.value = &v;
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_DTYPE_I32], &e};
    return emit(g, name, "Const", NULL, 0, NULL, 0, at, 2);
}

/* An op whose only attr is T=float. */
static uint32_t op_t(gen *g, const char *name, const char *op, const ref *in, size_t n_in)
{
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32]};
    return emit(g, name, op, in, n_in, NULL, 0, at, 1);
}

static uint32_t unary(gen *g, const char *name, const char *op, uint32_t x)
{
    ref in[] = {R(x)};
    return op_t(g, name, op, in, 1);
}

static uint32_t binary(gen *g, const char *name, const char *op, uint32_t x, uint32_t y)
{
    ref in[] = {R(x), R(y)};
    return op_t(g, name, op, in, 2);
}

static uint32_t mean_keep(gen *g, const char *name, uint32_t x, uint32_t axes)
{
    ref in[] = {R(x), R(axes)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_TIDX_I32], A[A_KEEP1]};
    return emit(g, name, "Mean", in, 2, NULL, 0, at, 3);
}

static uint32_t reshape(gen *g, const char *name, uint32_t x, uint32_t shape)
{
    ref in[] = {R(x), R(shape)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_TSHAPE_I32]};
    return emit(g, name, "Reshape", in, 2, NULL, 0, at, 2);
}

static uint32_t transpose(gen *g, const char *name, uint32_t x, uint32_t perm)
{
    ref in[] = {R(x), R(perm)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_TPERM_I32]};
    return emit(g, name, "Transpose", in, 2, NULL, 0, at, 2);
}

static uint32_t matmul(gen *g, const char *name, uint32_t a, uint32_t b)
{
    ref in[] = {R(a), R(b)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_FALSE_TA], A[A_FALSE_TB], A[A_GRAD_A], A[A_GRAD_B]};
    return emit(g, name, "MatMul", in, 2, NULL, 0, at, 5);
}

static uint32_t batch_matmul(gen *g, const char *name, uint32_t a, uint32_t b, int adj_y)
{
    ref in[] = {R(a), R(b)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_ADJX0], A[adj_y ? A_ADJY1 : A_ADJY0]};
    return emit(g, name, "BatchMatMulV2", in, 2, NULL, 0, at, 3);
}

static uint32_t bias_add(gen *g, const char *name, uint32_t x, uint32_t b)
{
    ref in[] = {R(x), R(b)};
    Tensorflow__NodeDef__AttrEntry *at[] = {A[A_T_F32], A[A_NHWC]};
    return emit(g, name, "BiasAdd", in, 2, NULL, 0, at, 2);
}

/* Tops the graph up to exactly the node count with an Identity chain. */
static uint32_t fill(gen *g, uint32_t x)
{
    char name[64];
    for (uint32_t i = 0; left(g) > 0; i++) {
        if (left(g) == 1)
            snprintf(name, sizeof name, "output");
        else
            snprintf(name, sizeof name, "tail/Identity_%u", i);
        x = unary(g, name, "Identity", x);
    }
    return x;
}

/* ---- conv ------------------------------------------------------------------------- */

#define CONV_BLOCK 11 /* nodes in a block with its residual add */

static void gen_conv(gen *g)
{
    static const int64_t in_dims[4] = {1, 32, 32, 16};
    static const int64_t k_dims[4] = {3, 3, 16, 16};
    static const int64_t c_dims[1] = {16};
    uint32_t x = placeholder(g, "input", in_dims, 4);
    uint32_t residual = x;
    char p[48], name[96];
    for (uint32_t b = 0; left(g) > CONV_BLOCK + 1; b++) {
        snprintf(p, sizeof p, "block_%u", b);
#define NM(s) (snprintf(name, sizeof name, "%s/%s", p, s), name)
        uint32_t kernel = const_f32(g, NM("conv/kernel"), k_dims, 4, VAL_SHORT);
        ref cin[] = {R(x), R(kernel)};
        Tensorflow__NodeDef__AttrEntry *cat[] = {A[A_T_F32], A[A_NHWC], A[A_DIL1], A[A_EXPLPAD],
                                                 A[A_SAME], A[A_STRIDES1], A[A_CUDNN]};
        uint32_t conv = emit(g, NM("conv/Conv2D"), "Conv2D", cin, 2, NULL, 0, cat, 7);
        uint32_t bias = const_f32(g, NM("conv/bias"), c_dims, 1, VAL_CONTENT);
        uint32_t ba = bias_add(g, NM("conv/BiasAdd"), conv, bias);
        uint32_t gamma = const_f32(g, NM("bn/gamma"), c_dims, 1, VAL_CONTENT);
        uint32_t beta = const_f32(g, NM("bn/beta"), c_dims, 1, VAL_CONTENT);
        uint32_t mean = const_f32(g, NM("bn/moving_mean"), c_dims, 1, VAL_SHORT);
        uint32_t var = const_f32(g, NM("bn/moving_variance"), c_dims, 1, VAL_SHORT);
        ref bin[] = {R(ba), R(gamma), R(beta), R(mean), R(var)};
        Tensorflow__NodeDef__AttrEntry *bat[] = {A[A_T_F32], A[A_U_F32], A[A_NHWC],
                                                 A[A_EPS], A[A_EXPAVG], A[A_TRAIN0]};
        uint32_t bn = emit(g, NM("bn/FusedBatchNormV3"), "FusedBatchNormV3", bin, 5, NULL, 0, bat, 6);
        x = unary(g, NM("Relu"), "Relu", bn);
        if (b % 2 == 1) {
            x = binary(g, NM("add"), "AddV2", x, residual);
            residual = x;
        }
#undef NM
    }
    fill(g, x);
}

/* ---- transformer ------------------------------------------------------------------- */

#define TF_B 8
#define TF_T 128
#define TF_D 64
#define TF_H 4
#define TF_FF 256
#define TF_BLOCK 92 /* upper bound on nodes per block */

static uint32_t layer_norm(gen *g, const char *p, uint32_t x)
{
    static const int64_t d_dims[1] = {TF_D};
    static const int32_t axis[1] = {2};
    char name[96];
#define NM(s) (snprintf(name, sizeof name, "%s/%s", p, s), name)
    uint32_t axes = const_i32(g, NM("moments/reduction_indices"), axis, 1);
    uint32_t mean = mean_keep(g, NM("moments/mean"), x, axes);
    uint32_t sq = binary(g, NM("moments/SquaredDifference"), "SquaredDifference", x, mean);
    uint32_t var = mean_keep(g, NM("moments/variance"), sq, axes);
    uint32_t eps = const_scalar_f32(g, NM("batchnorm/add/y"), 1e-6f);
    uint32_t ve = binary(g, NM("batchnorm/add"), "AddV2", var, eps);
    uint32_t rs = unary(g, NM("batchnorm/Rsqrt"), "Rsqrt", ve);
    uint32_t gamma = const_f32(g, NM("gamma"), d_dims, 1, VAL_CONTENT);
    uint32_t sc = binary(g, NM("batchnorm/mul"), "Mul", rs, gamma);
    uint32_t xs = binary(g, NM("batchnorm/mul_1"), "Mul", x, sc);
    uint32_t ms = binary(g, NM("batchnorm/mul_2"), "Mul", mean, sc);
    uint32_t beta = const_f32(g, NM("beta"), d_dims, 1, VAL_CONTENT);
    uint32_t sub = binary(g, NM("batchnorm/sub"), "Sub", beta, ms);
    return binary(g, NM("batchnorm/add_1"), "AddV2", xs, sub);
#undef NM
}

static void gen_transformer(gen *g)
{
    static const int64_t in_dims[3] = {TF_B, TF_T, TF_D};
    static const int64_t w_dims[2] = {TF_D, TF_D};
    static const int64_t w1_dims[2] = {TF_D, TF_FF};
    static const int64_t w2_dims[2] = {TF_FF, TF_D};
    static const int64_t b1_dims[1] = {TF_FF};
    static const int64_t b2_dims[1] = {TF_D};
    static const int32_t flat[2] = {TF_B * TF_T, TF_D};
    static const int32_t flat_ff[2] = {TF_B * TF_T, TF_FF};
    static const int32_t heads[4] = {TF_B, TF_T, TF_H, TF_D / TF_H};
    static const int32_t perm[4] = {0, 2, 1, 3};
    static const int32_t seq[3] = {TF_B, TF_T, TF_D};
    static const int32_t seq_ff[3] = {TF_B, TF_T, TF_FF};
    uint32_t x = placeholder(g, "input", in_dims, 3);
    char p[48], q[64], name[256];
    for (uint32_t b = 0; left(g) > TF_BLOCK + 1; b++) {
        snprintf(p, sizeof p, "encoder/layer_%u", b);
#define NM(s) (snprintf(name, sizeof name, "%s/%s", p, s), name)
        snprintf(q, sizeof q, "%s/ln_1", p);
        uint32_t h = layer_norm(g, q, x);
        /* attention */
        uint32_t s_flat = const_i32(g, NM("attention/Reshape/shape"), flat, 2);
        uint32_t hf = reshape(g, NM("attention/Reshape"), h, s_flat);
        uint32_t s_heads = const_i32(g, NM("attention/split_heads/shape"), heads, 4);
        uint32_t s_perm = const_i32(g, NM("attention/split_heads/perm"), perm, 4);
        uint32_t qkv[3];
        static const char *qkv_names[3] = {"query", "key", "value"};
        for (int i = 0; i < 3; i++) {
            char sub[64];
            snprintf(sub, sizeof sub, "attention/%s/kernel", qkv_names[i]);
            uint32_t w = const_f32(g, NM(sub), w_dims, 2, VAL_SHORT);
            snprintf(sub, sizeof sub, "attention/%s/MatMul", qkv_names[i]);
            uint32_t m = matmul(g, NM(sub), hf, w);
            snprintf(sub, sizeof sub, "attention/%s/Reshape", qkv_names[i]);
            uint32_t r = reshape(g, NM(sub), m, s_heads);
            snprintf(sub, sizeof sub, "attention/%s/transpose", qkv_names[i]);
            qkv[i] = transpose(g, NM(sub), r, s_perm);
        }
        uint32_t scores = batch_matmul(g, NM("attention/scores/MatMul"), qkv[0], qkv[1], 1);
        uint32_t scale = const_scalar_f32(g, NM("attention/scores/Mul/y"), 0.25f);
        uint32_t scaled = binary(g, NM("attention/scores/Mul"), "Mul", scores, scale);
        uint32_t probs = unary(g, NM("attention/Softmax"), "Softmax", scaled);
        uint32_t ctx = batch_matmul(g, NM("attention/context/MatMul"), probs, qkv[2], 0);
        uint32_t ct = transpose(g, NM("attention/context/transpose"), ctx, s_perm);
        uint32_t cf = reshape(g, NM("attention/context/Reshape"), ct, s_flat);
        uint32_t wo = const_f32(g, NM("attention/output/kernel"), w_dims, 2, VAL_SHORT);
        uint32_t o = matmul(g, NM("attention/output/MatMul"), cf, wo);
        uint32_t bo = const_f32(g, NM("attention/output/bias"), b2_dims, 1, VAL_CONTENT);
        o = bias_add(g, NM("attention/output/BiasAdd"), o, bo);
        uint32_t s_seq = const_i32(g, NM("attention/output/Reshape/shape"), seq, 3);
        o = reshape(g, NM("attention/output/Reshape"), o, s_seq);
        x = binary(g, NM("attention/residual"), "AddV2", x, o);
        /* MLP with the tanh approximation of Gelu */
        snprintf(q, sizeof q, "%s/ln_2", p);
        h = layer_norm(g, q, x);
        hf = reshape(g, NM("mlp/Reshape"), h, s_flat);
        uint32_t w1 = const_f32(g, NM("mlp/dense_1/kernel"), w1_dims, 2, VAL_SHORT);
        uint32_t f = matmul(g, NM("mlp/dense_1/MatMul"), hf, w1);
        uint32_t b1 = const_f32(g, NM("mlp/dense_1/bias"), b1_dims, 1, VAL_SHORT);
        f = bias_add(g, NM("mlp/dense_1/BiasAdd"), f, b1);
        uint32_t s_seq_ff = const_i32(g, NM("mlp/gelu/Reshape/shape"), seq_ff, 3);
        f = reshape(g, NM("mlp/gelu/Reshape"), f, s_seq_ff);
        uint32_t three = const_scalar_f32(g, NM("mlp/gelu/Pow/y"), 3.0f);
        uint32_t x3 = binary(g, NM("mlp/gelu/Pow"), "Pow", f, three);
        uint32_t c1 = const_scalar_f32(g, NM("mlp/gelu/mul/x"), 0.044715f);
        uint32_t t = binary(g, NM("mlp/gelu/mul"), "Mul", c1, x3);
        t = binary(g, NM("mlp/gelu/add"), "AddV2", f, t);
        uint32_t c2 = const_scalar_f32(g, NM("mlp/gelu/mul_1/x"), 0.7978845608f);
        t = binary(g, NM("mlp/gelu/mul_1"), "Mul", c2, t);
        t = unary(g, NM("mlp/gelu/Tanh"), "Tanh", t);
        uint32_t one = const_scalar_f32(g, NM("mlp/gelu/add_1/x"), 1.0f);
        t = binary(g, NM("mlp/gelu/add_1"), "AddV2", one, t);
        uint32_t half = const_scalar_f32(g, NM("mlp/gelu/mul_2/x"), 0.5f);
        uint32_t hx = binary(g, NM("mlp/gelu/mul_2"), "Mul", half, f);
        t = binary(g, NM("mlp/gelu/mul_3"), "Mul", hx, t);
        uint32_t s_flat_ff = const_i32(g, NM("mlp/dense_2/Reshape/shape"), flat_ff, 2);
        t = reshape(g, NM("mlp/dense_2/Reshape"), t, s_flat_ff);
        uint32_t w2 = const_f32(g, NM("mlp/dense_2/kernel"), w2_dims, 2, VAL_SHORT);
        t = matmul(g, NM("mlp/dense_2/MatMul"), t, w2);
        uint32_t b2 = const_f32(g, NM("mlp/dense_2/bias"), b2_dims, 1, VAL_CONTENT);
        t = bias_add(g, NM("mlp/dense_2/BiasAdd"), t, b2);
        t = reshape(g, NM("mlp/Reshape_1"), t, s_seq);
        x = binary(g, NM("mlp/residual"), "AddV2", x, t);
#undef NM
    }
    fill(g, x);
}

/* ---- dag ---------------------------------------------------------------------------- */

#define DAG_PH 4
#define DAG_HUB_EVERY 1000 /* a new hub every this many nodes ... */
#define DAG_HUB_PCT 25     /* ... picked for this share of inputs: ~450-500 consumers each */

static void gen_dag(gen *g)
{
    static const int64_t dims[2] = {64, 64};
    static const char *unary_ops[] = {"Relu", "Tanh", "Identity"};
    static const char *binary_ops[] = {"AddV2", "Mul", "Maximum"};
    char name[64];
    uint32_t hub = 0;
    for (uint32_t i = 0; i < DAG_PH && left(g) > 1; i++) {
        snprintf(name, sizeof name, "input_%u", i);
        hub = placeholder(g, name, dims, 2);
    }
    while (left(g) > 1) {
        uint32_t i = g->n;
        if (i % DAG_HUB_EVERY == 0) hub = i - 1; /* the previous node becomes the hub */
        uint32_t r = rng_below(&g->rng, 100);
        uint32_t arity;
        const char *op;
        Tensorflow__NodeDef__AttrEntry *at[2] = {A[A_T_F32], NULL};
        size_t n_at = 1;
        if (r < 30) {
            op = unary_ops[rng_below(&g->rng, 3)];
            arity = 1;
        } else if (r < 90) {
            op = binary_ops[rng_below(&g->rng, 3)];
            arity = 2;
        } else {
            op = "AddN";
            arity = 2 + rng_below(&g->rng, 4);
            at[1] = A[A_N2 + (arity - 2)];
            n_at = 2;
        }
        ref in[8];
        for (uint32_t k = 0; k < arity; k++) {
            uint32_t c = rng_below(&g->rng, 100);
            uint32_t src;
            if (c < DAG_HUB_PCT)
                src = hub;
            else if (c < 85) /* recent: a window of 64 */
                src = i - 1 - rng_below(&g->rng, i < 64 ? i : 64);
            else /* anywhere before */
                src = rng_below(&g->rng, i);
            in[k] = R(src);
        }
        uint32_t ctl[1];
        size_t n_ctl = 0;
        if (i > 16 && rng_below(&g->rng, 100) < 5) ctl[n_ctl++] = rng_below(&g->rng, i - 8);
        snprintf(name, sizeof name, "dag/%s_%u", op, i);
        emit(g, name, op, in, arity, ctl, n_ctl, at, n_at);
    }
    /* one sink that depends on the last node */
    if (left(g) == 1) unary(g, "output", "Identity", g->n - 1);
}

/* ---- chain -------------------------------------------------------------------------- */

static void gen_chain(gen *g)
{
    static const int64_t dims[2] = {1, 1024};
    static const int64_t c_dims[1] = {1024};
    char name[64];
    uint32_t x = placeholder(g, "input", dims, 2);
    for (uint32_t i = 0; left(g) > 3; i++) {
        switch (i % 8) {
        case 7: {
            snprintf(name, sizeof name, "chain/add_%u/y", i);
            uint32_t c = const_f32(g, name, c_dims, 1, VAL_SHORT);
            snprintf(name, sizeof name, "chain/add_%u", i);
            x = binary(g, name, "AddV2", x, c);
            break;
        }
        case 1:
        case 4:
            snprintf(name, sizeof name, "chain/Relu_%u", i);
            x = unary(g, name, "Relu", x);
            break;
        default:
            snprintf(name, sizeof name, "chain/Identity_%u", i);
            x = unary(g, name, "Identity", x);
            break;
        }
    }
    fill(g, x);
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr, "usage: gen_graph conv|transformer|dag|chain NODES OUT.pb [SEED]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) usage();
    const char *kind = argv[1];
    char *end;
    unsigned long long nodes = strtoull(argv[2], &end, 10);
    if (*end == 'e' || *end == 'E') { /* 1e6 */
        unsigned long long mant = nodes;
        long ex = strtol(end + 1, &end, 10);
        nodes = mant;
        while (ex-- > 0) nodes *= 10;
    }
    if (*end || nodes < 16 || nodes > 100000000ull) {
        fprintf(stderr, "gen_graph: NODES must be a number from 16 to 10^8\n");
        return 2;
    }
    uint64_t seed = 1;
    if (argc == 5) seed = strtoull(argv[4], NULL, 10);

    void (*fn)(gen *) = NULL;
    if (!strcmp(kind, "conv")) fn = gen_conv;
    else if (!strcmp(kind, "transformer")) fn = gen_transformer;
    else if (!strcmp(kind, "dag")) fn = gen_dag;
    else if (!strcmp(kind, "chain")) fn = gen_chain;
    else usage();
    if (!strcmp(kind, "transformer") && nodes < TF_BLOCK + 4) {
        fprintf(stderr, "gen_graph: transformer needs at least %d nodes\n", TF_BLOCK + 4);
        return 2;
    }

    gen g;
    memset(&g, 0, sizeof g);
    g.path = argv[3];
    g.rng = seed * 0x2545f4914f6cdd1dull + 7;
    g.target = (uint32_t)nodes;
    g.name_off = xmalloc(sizeof *g.name_off * g.target);
    g.depth = xmalloc(sizeof *g.depth * g.target);
    g.f = fopen(g.path, "wb");
    if (!g.f) {
        perror(g.path);
        return 1;
    }
    static char iobuf[1 << 20];
    setvbuf(g.f, iobuf, _IOFBF, sizeof iobuf);
    attrs_init();

    fn(&g);
    if (g.n != g.target) die("internal: node count differs from the one asked for");

    /* versions {producer: 1645 min_consumer: 12}: TensorFlow 2.15's numbers */
    Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
    ver.producer = 1645;
    ver.min_consumer = 12;
    put_message(&g, 4, &ver.base);
    if (fclose(g.f) != 0) die("close failed");

    printf("kind=%s nodes=%u depth=%u edges=%llu bytes=%llu seed=%llu\n", kind, g.n, g.max_depth,
           (unsigned long long)g.edges, (unsigned long long)g.bytes, (unsigned long long)seed);
    attrs_free();
    free(g.names);
    free(g.name_off);
    free(g.depth);
    free(g.buf);
    return 0;
}
