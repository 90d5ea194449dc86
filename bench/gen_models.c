/* gen_models: the GPU benchmark's models as frozen TensorFlow GraphDefs with
 * random weights (float32, as Keras would export them; our passes then
 * fold, fuse, change the layout and cast to float16).
 *
 *   gen_models resnet50 OUT.pb [SEED]
 *       ResNet-50 v1.5 (torchvision's layout: stride in the 3x3 conv) on
 *       input [?, 224, 224, 3] NHWC: Conv2D + FusedBatchNormV3 (inference)
 *       + Relu, MaxPool, bottleneck blocks [3, 4, 6, 3] with projection
 *       shortcuts, AddV2 + Relu, Mean over H and W, MatMul + BiasAdd to
 *       1000 logits. Fetch: logits.
 *   gen_models bert OUT.pb [SEED]
 *       A BERT-base-sized encoder (12 layers, hidden 768, 12 heads, FFN
 *       3072, post-layer-norm) on input [?, 128, 768] (the embeddings'
 *       output): per layer Q/K/V/O MatMul + BiasAdd, Reshape / Transpose,
 *       BatchMatMulV2, scale, Softmax, residual AddV2, layer norm written
 *       out (Mean, SquaredDifference, AddV2, Rsqrt, Mul, Sub), an FFN with
 *       the erf form of Gelu. Fetch: output.
 *
 * The batch dimension is unknown (-1), so one file serves every batch
 * size. Weights are uniform in [-a, a] with a = sqrt(3 / fan_in) (unit
 * variance through each layer), batch-norm statistics near identity.
 * Prints one line: model, nodes, parameters, bytes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#include "tensorflow/core/framework/attr_value.pb-c.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/framework/node_def.pb-c.h"
#include "tensorflow/core/framework/tensor.pb-c.h"
#include "tensorflow/core/framework/tensor_shape.pb-c.h"
#include "tensorflow/core/framework/types.pb-c.h"
#include "tensorflow/core/framework/versions.pb-c.h"

/* ---- allocation: everything is kept in one list and freed at the end ------------------ */
typedef struct gen {
    void **mem;
    size_t n_mem, cap_mem;
    Tensorflow__NodeDef **nodes;
    size_t n, cap;
    uint64_t rng;
    uint64_t params;
} gen;

static void die(const char *msg)
{
    fprintf(stderr, "gen_models: %s\n", msg);
    exit(1);
}

/* snprintf that refuses to truncate */
static void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int k = vsnprintf(buf, n, f, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= n) die("name too long");
}

static void *keep(gen *g, void *p)
{
    if (!p) die("out of memory");
    if (g->n_mem == g->cap_mem) {
        g->cap_mem = g->cap_mem ? 2 * g->cap_mem : 1024;
        void **m = realloc(g->mem, g->cap_mem * sizeof *m);
        if (!m) die("out of memory");
        g->mem = m;
    }
    g->mem[g->n_mem++] = p;
    return p;
}

static void *alloc(gen *g, size_t n)
{
    return keep(g, calloc(1, n ? n : 1));
}

static char *str(gen *g, const char *s)
{
    return strcpy(alloc(g, strlen(s) + 1), s);
}

static float urand(gen *g)   /* in [-1, 1) */
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return (float)((g->rng >> 40) * (1.0 / 8388608.0)) - 1.0f;
}

/* ---- nodes and attrs ---------------------------------------------------------------- */
static Tensorflow__NodeDef *node(gen *g, const char *name, const char *op, size_t n_in, const char *const *in)
{
    Tensorflow__NodeDef *nd = alloc(g, sizeof *nd);
    tensorflow__node_def__init(nd);
    nd->name = str(g, name);
    nd->op = str(g, op);
    nd->n_input = n_in;
    nd->input = alloc(g, n_in * sizeof *nd->input);
    for (size_t i = 0; i < n_in; i++) nd->input[i] = str(g, in[i]);
    nd->attr = alloc(g, 12 * sizeof *nd->attr);
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        Tensorflow__NodeDef **m = realloc(g->nodes, g->cap * sizeof *m);
        if (!m) die("out of memory");
        g->nodes = m;
    }
    g->nodes[g->n++] = nd;
    return nd;
}

static Tensorflow__AttrValue *attr(gen *g, Tensorflow__NodeDef *nd, const char *key)
{
    if (nd->n_attr == 12) die("too many attrs");
    Tensorflow__NodeDef__AttrEntry *e = alloc(g, sizeof *e);
    tensorflow__node_def__attr_entry__init(e);
    e->key = str(g, key);
    e->value = alloc(g, sizeof *e->value);
    tensorflow__attr_value__init(e->value);
    nd->attr[nd->n_attr++] = e;
    return e->value;
}

static void a_type(gen *g, Tensorflow__NodeDef *nd, const char *key, Tensorflow__DataType t)
{
    Tensorflow__AttrValue *v = attr(g, nd, key);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v->type = t;
}

static void a_str(gen *g, Tensorflow__NodeDef *nd, const char *key, const char *s)
{
    Tensorflow__AttrValue *v = attr(g, nd, key);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    v->s.data = (uint8_t *)str(g, s);
    v->s.len = strlen(s);
}

static void a_bool(gen *g, Tensorflow__NodeDef *nd, const char *key, int b)
{
    Tensorflow__AttrValue *v = attr(g, nd, key);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
    v->b = b;
}

static void a_float(gen *g, Tensorflow__NodeDef *nd, const char *key, float f)
{
    Tensorflow__AttrValue *v = attr(g, nd, key);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
    v->f = f;
}

static void a_ints(gen *g, Tensorflow__NodeDef *nd, const char *key, const int64_t *x, size_t n)
{
    Tensorflow__AttrValue *v = attr(g, nd, key);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    v->list = alloc(g, sizeof *v->list);
    tensorflow__attr_value__list_value__init(v->list);
    v->list->n_i = n;
    v->list->i = alloc(g, n * sizeof(int64_t));
    memcpy(v->list->i, x, n * sizeof(int64_t));
}

static Tensorflow__TensorShapeProto *shape(gen *g, const int64_t *dims, size_t n)
{
    Tensorflow__TensorShapeProto *s = alloc(g, sizeof *s);
    tensorflow__tensor_shape_proto__init(s);
    s->n_dim = n;
    s->dim = alloc(g, n * sizeof *s->dim);
    for (size_t i = 0; i < n; i++) {
        s->dim[i] = alloc(g, sizeof *s->dim[i]);
        tensorflow__tensor_shape_proto__dim__init(s->dim[i]);
        s->dim[i]->size = dims[i];
    }
    return s;
}

/* A Const of dtype t with n elements of esize bytes at data (copied). */
static void constant(gen *g, const char *name, Tensorflow__DataType t, const int64_t *dims, size_t rank,
                     const void *data, size_t bytes)
{
    Tensorflow__NodeDef *nd = node(g, name, "Const", 0, NULL);
    a_type(g, nd, "dtype", t);
    Tensorflow__AttrValue *v = attr(g, nd, "value");
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = alloc(g, sizeof *v->tensor);
    tensorflow__tensor_proto__init(v->tensor);
    v->tensor->dtype = t;
    v->tensor->tensor_shape = shape(g, dims, rank);
    v->tensor->tensor_content.len = bytes;
    v->tensor->tensor_content.data = alloc(g, bytes);
    memcpy(v->tensor->tensor_content.data, data, bytes);
}

/* Random float32 weights, uniform in [-a, a] (plus base). */
static void weights(gen *g, const char *name, const int64_t *dims, size_t rank, float a, float base)
{
    size_t n = 1;
    for (size_t i = 0; i < rank; i++) n *= (size_t)dims[i];
    float *w = malloc(n * sizeof *w + 1);
    if (!w) die("out of memory");
    for (size_t i = 0; i < n; i++) w[i] = base + a * urand(g);
    constant(g, name, TENSORFLOW__DATA_TYPE__DT_FLOAT, dims, rank, w, n * sizeof *w);
    free(w);
    g->params += n;
}

static void scalar(gen *g, const char *name, float v)
{
    constant(g, name, TENSORFLOW__DATA_TYPE__DT_FLOAT, NULL, 0, &v, sizeof v);
}

static void ints(gen *g, const char *name, const int32_t *v, size_t n)
{
    int64_t d = (int64_t)n;
    constant(g, name, TENSORFLOW__DATA_TYPE__DT_INT32, &d, 1, v, n * sizeof *v);
}

static Tensorflow__NodeDef *op_t(gen *g, const char *name, const char *op, size_t n_in, const char *const *in)
{
    Tensorflow__NodeDef *nd = node(g, name, op, n_in, in);
    a_type(g, nd, "T", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    return nd;
}

static void op1(gen *g, const char *name, const char *op, const char *x)
{
    const char *in[1] = {x};
    op_t(g, name, op, 1, in);
}

static void op2(gen *g, const char *name, const char *op, const char *x, const char *y)
{
    const char *in[2] = {x, y};
    op_t(g, name, op, 2, in);
}

static void placeholder(gen *g, const char *name, const int64_t *dims, size_t rank)
{
    Tensorflow__NodeDef *nd = node(g, name, "Placeholder", 0, NULL);
    a_type(g, nd, "dtype", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    Tensorflow__AttrValue *v = attr(g, nd, "shape");
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    v->shape = shape(g, dims, rank);
}

#define NM(...) (fmt(nm, sizeof nm, __VA_ARGS__), nm)

/* ---- ResNet-50 ---------------------------------------------------------------------------- */
/* conv (k x k, stride s, SAME) + batch norm (+ Relu); returns the output's name in out. */
static void conv_bn(gen *g, const char *pre, const char *x, int64_t cin, int64_t cout, int64_t k, int64_t s, int relu,
                    char *out, size_t out_len)
{
    char nm[256], w[256], conv[256], bn[256];
    int64_t wd[4] = {k, k, cin, cout}, cd[1] = {cout};
    fmt(w, sizeof w, "%s/kernel", pre);
    weights(g, w, wd, 4, sqrtf(3.0f / (float)(k * k * cin)), 0.0f);
    fmt(conv, sizeof conv, "%s/Conv2D", pre);
    const char *in[5] = {x, w};
    Tensorflow__NodeDef *c = op_t(g, conv, "Conv2D", 2, in);
    int64_t st[4] = {1, s, s, 1}, dl[4] = {1, 1, 1, 1};
    a_ints(g, c, "strides", st, 4);
    a_ints(g, c, "dilations", dl, 4);
    a_str(g, c, "padding", "SAME");
    a_str(g, c, "data_format", "NHWC");
    a_bool(g, c, "use_cudnn_on_gpu", 1);
    static const char *const parts[4] = {"gamma", "beta", "moving_mean", "moving_variance"};
    static const float base[4] = {1.0f, 0.0f, 0.0f, 1.0f}, amp[4] = {0.1f, 0.1f, 0.1f, 0.05f};
    char pn[4][256];
    for (int i = 0; i < 4; i++) {
        fmt(pn[i], sizeof pn[i], "%s/bn/%s", pre, parts[i]);
        weights(g, pn[i], cd, 1, amp[i], base[i]);
    }
    fmt(bn, sizeof bn, "%s/bn/FusedBatchNormV3", pre);
    const char *bin[5] = {conv, pn[0], pn[1], pn[2], pn[3]};
    Tensorflow__NodeDef *b = op_t(g, bn, "FusedBatchNormV3", 5, bin);
    a_type(g, b, "U", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    a_float(g, b, "epsilon", 1.001e-5f);
    a_str(g, b, "data_format", "NHWC");
    a_bool(g, b, "is_training", 0);
    a_float(g, b, "exponential_avg_factor", 1.0f);
    if (relu) {
        op1(g, NM("%s/Relu", pre), "Relu", bn);
        fmt(out, out_len, "%s", nm);
    } else {
        fmt(out, out_len, "%s", bn);
    }
}

static void resnet50(gen *g)
{
    char nm[256], x[256], y[256], sc[256];
    int64_t in_dims[4] = {-1, 224, 224, 3};
    placeholder(g, "input", in_dims, 4);
    conv_bn(g, "conv1", "input", 3, 64, 7, 2, 1, x, sizeof x);
    Tensorflow__NodeDef *mp = NULL;
    {
        const char *in[1] = {x};
        mp = op_t(g, "pool1/MaxPool", "MaxPool", 1, in);
        int64_t ks[4] = {1, 3, 3, 1}, st[4] = {1, 2, 2, 1};
        a_ints(g, mp, "ksize", ks, 4);
        a_ints(g, mp, "strides", st, 4);
        a_str(g, mp, "padding", "SAME");
        a_str(g, mp, "data_format", "NHWC");
        fmt(x, sizeof x, "pool1/MaxPool");
    }
    static const int blocks[4] = {3, 4, 6, 3};
    int64_t cin = 64;
    for (int s = 0; s < 4; s++) {
        int64_t w = 64 << s, cout = w * 4;
        for (int bi = 0; bi < blocks[s]; bi++) {
            char pre[128];
            int64_t stride = (bi == 0 && s > 0) ? 2 : 1;
            fmt(pre, sizeof pre, "stage%d/block%d", s + 1, bi + 1);
            if (bi == 0) conv_bn(g, NM("%s/shortcut", pre), x, cin, cout, 1, stride, 0, sc, sizeof sc);
            else fmt(sc, sizeof sc, "%s", x);
            conv_bn(g, NM("%s/conv1", pre), x, cin, w, 1, 1, 1, y, sizeof y);
            conv_bn(g, NM("%s/conv2", pre), y, w, w, 3, stride, 1, y, sizeof y);
            conv_bn(g, NM("%s/conv3", pre), y, w, cout, 1, 1, 0, y, sizeof y);
            op2(g, NM("%s/add", pre), "AddV2", y, sc);
            char add[256];
            fmt(add, sizeof add, "%s", nm);
            op1(g, NM("%s/out", pre), "Relu", add);
            fmt(x, sizeof x, "%s", nm);
            cin = cout;
        }
    }
    int32_t axes[2] = {1, 2};
    ints(g, "avg_pool/axes", axes, 2);
    {
        const char *in[2] = {x, "avg_pool/axes"};
        Tensorflow__NodeDef *m = op_t(g, "avg_pool/Mean", "Mean", 2, in);
        a_type(g, m, "Tidx", TENSORFLOW__DATA_TYPE__DT_INT32);
        a_bool(g, m, "keep_dims", 0);
    }
    int64_t wd[2] = {2048, 1000}, bd[1] = {1000};
    weights(g, "fc/kernel", wd, 2, sqrtf(3.0f / 2048.0f), 0.0f);
    weights(g, "fc/bias", bd, 1, 0.01f, 0.0f);
    {
        const char *in[2] = {"avg_pool/Mean", "fc/kernel"};
        Tensorflow__NodeDef *m = op_t(g, "fc/MatMul", "MatMul", 2, in);
        a_bool(g, m, "transpose_a", 0);
        a_bool(g, m, "transpose_b", 0);
    }
    {
        const char *in[2] = {"fc/MatMul", "fc/bias"};
        Tensorflow__NodeDef *b = op_t(g, "fc/BiasAdd", "BiasAdd", 2, in);
        a_str(g, b, "data_format", "NHWC");
    }
    op1(g, "logits", "Identity", "fc/BiasAdd");
}

/* ---- BERT-base encoder ---------------------------------------------------------------------- */
enum { SEQ = 128, HID = 768, HEADS = 12, DH = 64, FFN = 3072, LAYERS = 12 };

/* x2 [?, in] -> MatMul + BiasAdd [?, out] */
static void dense(gen *g, const char *pre, const char *x, int64_t in, int64_t out)
{
    char nm[256], w[256], b[256], mm[256];
    int64_t wd[2] = {in, out}, bd[1] = {out};
    fmt(w, sizeof w, "%s/kernel", pre);
    fmt(b, sizeof b, "%s/bias", pre);
    weights(g, w, wd, 2, sqrtf(3.0f / (float)in), 0.0f);
    weights(g, b, bd, 1, 0.02f, 0.0f);
    fmt(mm, sizeof mm, "%s/MatMul", pre);
    const char *in2[2] = {x, w};
    Tensorflow__NodeDef *m = op_t(g, mm, "MatMul", 2, in2);
    a_bool(g, m, "transpose_a", 0);
    a_bool(g, m, "transpose_b", 0);
    const char *bin[2] = {mm, b};
    Tensorflow__NodeDef *ba = op_t(g, NM("%s/BiasAdd", pre), "BiasAdd", 2, bin);
    a_str(g, ba, "data_format", "NHWC");
}

static void reshape(gen *g, const char *name, const char *x, const char *shape_const)
{
    const char *in[2] = {x, shape_const};
    Tensorflow__NodeDef *r = op_t(g, name, "Reshape", 2, in);
    a_type(g, r, "Tshape", TENSORFLOW__DATA_TYPE__DT_INT32);
}

static void transpose(gen *g, const char *name, const char *x, const char *perm_const)
{
    const char *in[2] = {x, perm_const};
    Tensorflow__NodeDef *t = op_t(g, name, "Transpose", 2, in);
    a_type(g, t, "Tperm", TENSORFLOW__DATA_TYPE__DT_INT32);
}

static void mean_last(gen *g, const char *name, const char *x)
{
    const char *in[2] = {x, "c/last_axis"};
    Tensorflow__NodeDef *m = op_t(g, name, "Mean", 2, in);
    a_type(g, m, "Tidx", TENSORFLOW__DATA_TYPE__DT_INT32);
    a_bool(g, m, "keep_dims", 1);
}

/* layer norm over the last axis, written out as Keras does */
static void layer_norm(gen *g, const char *pre, const char *x, char *out, size_t out_len)
{
    char nm[256], mean[256], var[256], rs[256], sc[256];
    int64_t d[1] = {HID};
    char gamma[256], beta[256];
    fmt(gamma, sizeof gamma, "%s/gamma", pre);
    fmt(beta, sizeof beta, "%s/beta", pre);
    weights(g, gamma, d, 1, 0.05f, 1.0f);
    weights(g, beta, d, 1, 0.05f, 0.0f);
    fmt(mean, sizeof mean, "%s/mean", pre);
    mean_last(g, mean, x);
    op2(g, NM("%s/sqd", pre), "SquaredDifference", x, mean);
    fmt(var, sizeof var, "%s/variance", pre);
    mean_last(g, var, nm);
    op2(g, NM("%s/add_eps", pre), "AddV2", var, "c/ln_eps");
    fmt(rs, sizeof rs, "%s/Rsqrt", pre);
    op1(g, rs, "Rsqrt", nm);
    fmt(sc, sizeof sc, "%s/scale", pre);
    op2(g, sc, "Mul", rs, gamma);
    char xs[256], ms[256], sh[256];
    fmt(xs, sizeof xs, "%s/x_scaled", pre);
    op2(g, xs, "Mul", x, sc);
    fmt(ms, sizeof ms, "%s/mean_scaled", pre);
    op2(g, ms, "Mul", mean, sc);
    fmt(sh, sizeof sh, "%s/shift", pre);
    op2(g, sh, "Sub", beta, ms);
    op2(g, NM("%s/out", pre), "AddV2", xs, sh);
    fmt(out, out_len, "%s", nm);
}

static void bert(gen *g)
{
    char nm[256], x[256];
    int64_t in_dims[3] = {-1, SEQ, HID};
    placeholder(g, "input", in_dims, 3);
    int32_t flat[2] = {-1, HID}, heads[4] = {-1, SEQ, HEADS, DH}, seq3[3] = {-1, SEQ, HID};
    int32_t p_bhsd[4] = {0, 2, 1, 3}, p_bhds[4] = {0, 2, 3, 1}, last[1] = {-1};
    ints(g, "c/flat", flat, 2);
    ints(g, "c/heads", heads, 4);
    ints(g, "c/seq3", seq3, 3);
    ints(g, "c/perm_bhsd", p_bhsd, 4);
    ints(g, "c/perm_bhds", p_bhds, 4);
    ints(g, "c/last_axis", last, 1);
    scalar(g, "c/ln_eps", 1e-12f);
    scalar(g, "c/att_scale", 1.0f / sqrtf((float)DH));
    scalar(g, "c/half", 0.5f);
    scalar(g, "c/one", 1.0f);
    scalar(g, "c/inv_sqrt2", 0.70710678118654752f);
    reshape(g, "encoder/flat_input", "input", "c/flat");
    fmt(x, sizeof x, "encoder/flat_input");
    for (int l = 0; l < LAYERS; l++) {
        char pre[64], q[256], k[256], v[256], ctx[256], h[256], a[256], b[256], probs[256], act[256];
        fmt(pre, sizeof pre, "encoder/layer_%d", l);
        static const char *const qkv[3] = {"query", "key", "value"};
        char *dst[3] = {q, k, v};
        for (int i = 0; i < 3; i++) {
            fmt(a, sizeof a, "%s/attention/%s", pre, qkv[i]);
            dense(g, a, x, HID, HID);
            fmt(a, sizeof a, "%s/attention/%s/BiasAdd", pre, qkv[i]);
            fmt(b, sizeof b, "%s/attention/%s_heads", pre, qkv[i]);
            reshape(g, b, a, "c/heads");
            fmt(dst[i], 256, "%s/attention/%s_t", pre, qkv[i]);
            transpose(g, dst[i], b, i == 1 ? "c/perm_bhds" : "c/perm_bhsd");
        }
        {
            const char *in[2] = {q, k};
            Tensorflow__NodeDef *bm = op_t(g, NM("%s/attention/scores", pre), "BatchMatMulV2", 2, in);
            a_bool(g, bm, "adj_x", 0);
            a_bool(g, bm, "adj_y", 0);
        }
        fmt(a, sizeof a, "%s", nm);
        op2(g, NM("%s/attention/scaled", pre), "Mul", a, "c/att_scale");
        fmt(a, sizeof a, "%s", nm);
        fmt(probs, sizeof probs, "%s/attention/probs", pre);
        op1(g, probs, "Softmax", a);
        {
            const char *in[2] = {probs, v};
            Tensorflow__NodeDef *bm = op_t(g, NM("%s/attention/context", pre), "BatchMatMulV2", 2, in);
            a_bool(g, bm, "adj_x", 0);
            a_bool(g, bm, "adj_y", 0);
        }
        fmt(a, sizeof a, "%s", nm);
        fmt(b, sizeof b, "%s/attention/context_t", pre);
        transpose(g, b, a, "c/perm_bhsd");
        fmt(ctx, sizeof ctx, "%s/attention/context_flat", pre);
        reshape(g, ctx, b, "c/flat");
        fmt(a, sizeof a, "%s/attention/output", pre);
        dense(g, a, ctx, HID, HID);
        fmt(a, sizeof a, "%s/attention/output/BiasAdd", pre);
        fmt(b, sizeof b, "%s/attention/residual", pre);
        op2(g, b, "AddV2", a, x);
        fmt(a, sizeof a, "%s/attention/ln", pre);
        layer_norm(g, a, b, h, sizeof h);
        /* FFN with Gelu, erf form: (x * 0.5) * (1 + erf(x / sqrt 2)) */
        fmt(a, sizeof a, "%s/ffn/intermediate", pre);
        dense(g, a, h, HID, FFN);
        char pre_act[256], sc[256], er[256], op_[256], hx[256];
        fmt(pre_act, sizeof pre_act, "%s/ffn/intermediate/BiasAdd", pre);
        fmt(sc, sizeof sc, "%s/ffn/gelu/scaled", pre);
        fmt(er, sizeof er, "%s/ffn/gelu/Erf", pre);
        fmt(op_, sizeof op_, "%s/ffn/gelu/one_plus", pre);
        fmt(hx, sizeof hx, "%s/ffn/gelu/half_x", pre);
        fmt(act, sizeof act, "%s/ffn/gelu/out", pre);
        op2(g, sc, "Mul", pre_act, "c/inv_sqrt2");
        op1(g, er, "Erf", sc);
        op2(g, op_, "AddV2", er, "c/one");
        op2(g, hx, "Mul", pre_act, "c/half");
        op2(g, act, "Mul", hx, op_);
        fmt(a, sizeof a, "%s/ffn/output", pre);
        dense(g, a, act, FFN, HID);
        fmt(a, sizeof a, "%s/ffn/output/BiasAdd", pre);
        fmt(b, sizeof b, "%s/ffn/residual", pre);
        op2(g, b, "AddV2", a, h);
        fmt(a, sizeof a, "%s/ffn/ln", pre);
        layer_norm(g, a, b, x, sizeof x);
    }
    reshape(g, "encoder/output3", x, "c/seq3");
    op1(g, "output", "Identity", "encoder/output3");
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "resnet50") && strcmp(argv[1], "bert"))) {
        fprintf(stderr, "usage: gen_models resnet50|bert OUT.pb [SEED]\n");
        return 2;
    }
    gen g;
    memset(&g, 0, sizeof g);
    g.rng = 0x9E3779B97F4A7C15ull ^ (argc == 4 ? strtoull(argv[3], NULL, 10) : 1);
    if (!g.rng) g.rng = 1;
    if (!strcmp(argv[1], "resnet50")) resnet50(&g);
    else bert(&g);
    Tensorflow__GraphDef gd;
    tensorflow__graph_def__init(&gd);
    Tensorflow__VersionDef ver;
    tensorflow__version_def__init(&ver);
    ver.producer = 1994;
    gd.versions = &ver;
    gd.n_node = g.n;
    gd.node = g.nodes;
    size_t bytes = tensorflow__graph_def__get_packed_size(&gd);
    uint8_t *buf = malloc(bytes + 1);
    if (!buf) die("out of memory");
    tensorflow__graph_def__pack(&gd, buf);
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(buf, 1, bytes, f) != bytes || fclose(f) != 0) die("cannot write the output file");
    printf("%s nodes %zu params %llu bytes %zu\n", argv[1], g.n, (unsigned long long)g.params, bytes);
    free(buf);
    for (size_t i = 0; i < g.n_mem; i++) free(g.mem[i]);
    free(g.mem);
    free(g.nodes);
    return 0;
}
