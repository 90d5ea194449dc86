/* CPU kernels of src/ops/kernels/nn_3d.c: Conv3D, Conv3DBackpropInputV2,
 * MaxPool3D and AvgPool3D.
 *
 * Each kernel is run directly on a one-node graph (for the attrs) and checked
 *   - on small hand-worked cases: exact values;
 *   - against TensorFlow's own outputs (tests/data/nn3d, written by
 *     tools/make_3d_goldens.py), on both the BLAS path and the reference path
 *     (GN__K_REFERENCE): max |got - tf| <= tol * (1 + |tf|), tol 2e-5 for
 *     float32 convolutions, 1e-6 for average pooling, 0 for max pooling,
 *     1e-12 for float64; float16 Conv3D: 1e-3 (one float16 rounding) against
 *     TensorFlow's float32 result on the same float16 values, and 2e-2
 *     against TensorFlow's float16 kernel, which accumulates in float16;
 *   - NCDHW against the transposed NDHWC result: exact bits;
 *   - the reference path twice: the same bits;
 *   - on bad input: the exact message.
 * A small graph using the four ops runs through a session (exact bits against
 * the kernels run one by one) and is constant-folded by gn_optimize to the same
 * values (the folded graph has no convolution left). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/op_fns.h"
#include "testutil.h"
#include "passtest.h"

#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64


static gn_graph *graph1v(const char *op, int n_in, const char *const *dts, const char *attrs, int validate)
{
    return gn_pt_kgraph(op, n_in, dts, attrs, validate);
}

static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    return gn_pt_ktensor(dt, rank, dims, data);
}

static gn__tensor from_api(const gn_tensor *a)
{
    return tens(a->dtype, a->rank, a->dims, a->data);
}

static gn_status run_k(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t flags, gn__err *err)
{
    return gn_pt_krun(g, in, n_in, out, 1, flags, err);
}

static void run_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t flags)
{
    gn_pt_krun_ok(g, in, n_in, out, 1, flags);
}

static void expect_error(const char *op, int n_in, const char *const *dts, const char *attrs, const gn__tensor *in,
                         gn_status code, const char *msg)
{
    gn_graph *g = graph1v(op, n_in, dts, attrs, 0);
    gn__tensor out;
    gn__err err;
    gn_status s = run_k(g, in, (uint32_t)n_in, &out, 0, &err);
    gn__tensor_release(&out);
    gn_graph_free(g);
    if (s != code || strcmp(err.msg, msg)) fail_msg("got (%d) '%s'\nwant (%d) '%s'", s, err.msg, code, msg);
}

static double elem(const gn__tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_F16: return (double)((const _Float16 *)t->data)[i];
    case DT_F64: return ((const double *)t->data)[i];
    default: return (double)((const float *)t->data)[i];
    }
}

static void expect_shape(const gn__tensor *t, int rank, const int64_t *dims)
{
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

/* max |got - ref| <= tol * (1 + |ref|) elementwise */
static void expect_close(const char *what, const gn__tensor *got, const gn__tensor *ref, double tol)
{
    expect_shape(got, ref->rank, ref->dims);
    assert_int_equal(got->dtype, ref->dtype);
    int64_t n = gn__tensor_numel(ref);
    for (int64_t i = 0; i < n; i++) {
        double a = elem(got, i), b = elem(ref, i);
        if (!(fabs(a - b) <= tol * (1.0 + fabs(b))))
            fail_msg("%s: element %lld: got %.9g, want %.9g (tol %g)", what, (long long)i, a, b, tol);
    }
}

static void expect_bits(const char *what, const gn__tensor *a, const gn__tensor *b)
{
    expect_shape(a, b->rank, b->dims);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->nbytes, b->nbytes);
    if (memcmp(a->data, b->data, a->nbytes)) fail_msg("%s: bits differ", what);
}

static void expect_f32(const gn__tensor *t, int rank, const int64_t *dims, const float *want)
{
    expect_shape(t, rank, dims);
    assert_int_equal(t->dtype, DT_F32);
    for (int64_t i = 0; i < gn__tensor_numel(t); i++)
        if (((const float *)t->data)[i] != want[i])
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, (double)((const float *)t->data)[i],
                     (double)want[i]);
}

/* [N, D, H, W, C] -> [N, C, D, H, W] (to_cf) or back, any 2/4/8-byte dtype. */
static void *permute(const gn__tensor *t, bool to_cf, int64_t *nd)
{
    size_t esz = t->nbytes / (size_t)(gn__tensor_numel(t) ? gn__tensor_numel(t) : 1);
    int64_t n = t->dims[0], c = to_cf ? t->dims[4] : t->dims[1];
    int64_t nc = n * c, sp = gn__tensor_numel(t) / (nc > 0 ? nc : 1);
    char *out = malloc(t->nbytes ? t->nbytes : 1);
    assert_non_null(out);
    for (int64_t b = 0; b < n; b++)
        for (int64_t s = 0; s < sp; s++)
            for (int64_t k = 0; k < c; k++) {
                int64_t last = (b * sp + s) * c + k, first = (b * c + k) * sp + s;
                int64_t src = to_cf ? last : first, dst = to_cf ? first : last;
                memcpy(out + (size_t)dst * esz, (const char *)t->data + (size_t)src * esz, esz);
            }
    if (to_cf) {
        nd[0] = t->dims[0], nd[1] = t->dims[4], nd[2] = t->dims[1], nd[3] = t->dims[2], nd[4] = t->dims[3];
    } else {
        nd[0] = t->dims[0], nd[1] = t->dims[2], nd[2] = t->dims[3], nd[3] = t->dims[4], nd[4] = t->dims[1];
    }
    return out;
}

/* ---- hand-worked cases ------------------------------------------------------------------ */
static const char *const F1[] = {"DT_FLOAT"};
static const char *const F2[] = {"DT_FLOAT", "DT_FLOAT"};
static const char *const BWD[] = {"DT_INT32", "DT_FLOAT", "DT_FLOAT"};
static const char *const BWD64[] = {"DT_INT64", "DT_FLOAT", "DT_FLOAT"};

#define CONV_ATTRS(PAD, S, D, FMT)                                                                             \
    "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'padding' value { s: '" PAD "' } } "               \
    "attr { key: 'strides' value { list { " S " } } } attr { key: 'dilations' value { list { " D " } } } "    \
    "attr { key: 'data_format' value { s: '" FMT "' } }"
#define POOL_ATTRS(PAD, K, S, FMT)                                                                             \
    "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'padding' value { s: '" PAD "' } } "               \
    "attr { key: 'ksize' value { list { " K " } } } attr { key: 'strides' value { list { " S " } } } "        \
    "attr { key: 'data_format' value { s: '" FMT "' } }"
#define ONES5 "i: 1 i: 1 i: 1 i: 1 i: 1"
#define TWOS3 "i: 1 i: 2 i: 2 i: 2 i: 1"

static const float X8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const float W8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
static const int64_t D2[5] = {1, 2, 2, 2, 1}, D2F[5] = {2, 2, 2, 1, 1}, D1[5] = {1, 1, 1, 1, 1};

static void test_conv3d_hand(void **state)
{
    (void)state;
    gn__tensor in[2] = {tens(DT_F32, 5, D2, X8), tens(DT_F32, 5, D2F, W8)}, out;
    gn_graph *g = graph1v("Conv3D", 2, F2, CONV_ATTRS("VALID", ONES5, ONES5, "NDHWC"), 1);
    run_ok(g, in, 2, &out, 0);
    const float v[1] = {36};
    expect_f32(&out, 5, D1, v);
    gn__tensor_release(&out);
    gn_graph_free(g);
    /* SAME: pad 0 before, 1 after; out[z,y,x] = sum of x over [z,z+1] x [y,y+1] x [x,x+1] inside */
    g = graph1v("Conv3D", 2, F2, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), 1);
    run_ok(g, in, 2, &out, GN__K_REFERENCE);
    const float s[8] = {36, 20, 22, 12, 26, 14, 15, 8};
    expect_f32(&out, 5, D2, s);
    gn__tensor_release(&out);
    gn_graph_free(g);
    /* dilation 2 in H with a [1,2,1] filter of {1, 10}: y[z,0,x] = x[z,0,x] + 10 * x[z,2,x] on H = 3 */
    static const float x3[6] = {1, 2, 3, 4, 5, 6}, w2[2] = {1, 10};
    const int64_t dx[5] = {1, 1, 3, 2, 1}, dw[5] = {1, 2, 1, 1, 1}, dy[5] = {1, 1, 1, 2, 1};
    gn__tensor in2[2] = {tens(DT_F32, 5, dx, x3), tens(DT_F32, 5, dw, w2)};
    g = graph1v("Conv3D", 2, F2, CONV_ATTRS("VALID", ONES5, "i: 1 i: 1 i: 2 i: 1 i: 1", "NDHWC"), 1);
    run_ok(g, in2, 2, &out, 0);
    const float d[2] = {51, 62};
    expect_f32(&out, 5, dy, d);
    gn__tensor_release(&out);
    gn_graph_free(g);
}

static void test_pool3d_hand(void **state)
{
    (void)state;
    gn__tensor in[1] = {tens(DT_F32, 5, D2, X8)}, out;
    gn_graph *g = graph1v("MaxPool3D", 1, F1, POOL_ATTRS("VALID", TWOS3, TWOS3, "NDHWC"), 1);
    run_ok(g, in, 1, &out, 0);
    const float m[1] = {8};
    expect_f32(&out, 5, D1, m);
    gn__tensor_release(&out);
    gn_graph_free(g);
    /* AvgPool3D SAME, window 2, stride 1: padding is left out of the count */
    g = graph1v("AvgPool3D", 1, F1, POOL_ATTRS("SAME", TWOS3, ONES5, "NDHWC"), 1);
    run_ok(g, in, 1, &out, 0);
    const float a[8] = {4.5f, 5, 5.5f, 6, 6.5f, 7, 7.5f, 8};
    expect_f32(&out, 5, D2, a);
    gn__tensor_release(&out);
    gn_graph_free(g);
    /* MaxPool3D SAME over the same: padding never wins, even over negatives */
    static const float neg[8] = {-8, -7, -6, -5, -4, -3, -2, -1};
    gn__tensor in2[1] = {tens(DT_F32, 5, D2, neg)};
    g = graph1v("MaxPool3D", 1, F1, POOL_ATTRS("SAME", TWOS3, ONES5, "NDHWC"), 1);
    run_ok(g, in2, 1, &out, 0);
    const float mx[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    expect_f32(&out, 5, D2, mx);
    gn__tensor_release(&out);
    gn_graph_free(g);
}

static void test_backprop_hand(void **state)
{
    (void)state;
    /* input D = 3, filter {1, 2} along D, stride 2, SAME (o = 2, pad 0 before,
     * 1 after): y0 = x0 + 2 x1, y1 = x2; so dx = {dy0, 2 dy0, dy1} */
    static const int32_t sz[5] = {1, 3, 1, 1, 1};
    static const int64_t sz64[5] = {1, 3, 1, 1, 1};
    static const float w[2] = {1, 2}, dy[2] = {1, 10};
    const int64_t d5[1] = {5}, dw[5] = {2, 1, 1, 1, 1}, ddy[5] = {1, 2, 1, 1, 1}, dx[5] = {1, 3, 1, 1, 1};
    gn__tensor in[3] = {tens(DT_I32, 1, d5, sz), tens(DT_F32, 5, dw, w), tens(DT_F32, 5, ddy, dy)}, out;
    gn_graph *g = graph1v("Conv3DBackpropInputV2", 3, BWD, CONV_ATTRS("SAME", "i: 1 i: 2 i: 1 i: 1 i: 1", ONES5, "NDHWC"), 1);
    run_ok(g, in, 3, &out, 0);
    const float want[3] = {1, 2, 10};
    expect_f32(&out, 5, dx, want);
    gn__tensor_release(&out);
    gn_graph_free(g);
    /* int64 input_sizes, reference path */
    in[0] = tens(DT_I64, 1, d5, sz64);
    g = graph1v("Conv3DBackpropInputV2", 3, BWD64,
                CONV_ATTRS("SAME", "i: 1 i: 2 i: 1 i: 1 i: 1", ONES5, "NDHWC") " attr { key: 'Tshape' value { type: DT_INT64 } }",
                1);
    run_ok(g, in, 3, &out, GN__K_REFERENCE);
    expect_f32(&out, 5, dx, want);
    gn__tensor_release(&out);
    gn_graph_free(g);
}

/* ---- TensorFlow goldens ----------------------------------------------------------------- */
typedef struct golden {
    const char *name;        /* file prefix under tests/data/nn3d */
    const char *op;
    const char *dt;          /* T */
    const char *attrs;       /* padding, strides / ksize, dilations (NDHWC order) */
    const char *attrs_cf;    /* the same in NCDHW order, NULL: not checked in NCDHW */
    double tol;
} golden;

#define GA(PAD, S, D) \
    "attr { key: 'padding' value { s: '" PAD "' } } attr { key: 'strides' value { list { " S " } } } " \
    "attr { key: 'dilations' value { list { " D " } } }"
#define GP(PAD, K, S) \
    "attr { key: 'padding' value { s: '" PAD "' } } attr { key: 'ksize' value { list { " K " } } } " \
    "attr { key: 'strides' value { list { " S " } } }"

static const golden GOLDENS[] = {
    {"conv_same", "Conv3D", "DT_FLOAT", GA("SAME", "i: 1 i: 2 i: 1 i: 2 i: 1", ONES5),
     GA("SAME", "i: 1 i: 1 i: 2 i: 1 i: 2", ONES5), 2e-5},
    {"conv_valid", "Conv3D", "DT_FLOAT", GA("VALID", ONES5, ONES5), NULL, 2e-5},
    {"conv_pointwise", "Conv3D", "DT_FLOAT", GA("SAME", ONES5, ONES5), GA("SAME", ONES5, ONES5), 2e-5},
    {"conv_f64", "Conv3D", "DT_DOUBLE", GA("SAME", "i: 1 i: 1 i: 2 i: 1 i: 1", ONES5), NULL, 1e-12},
    {"conv_f16", "Conv3D", "DT_HALF", GA("SAME", ONES5, ONES5), NULL, 1e-3},
    {"conv_dilated", "Conv3D", "DT_FLOAT", GA("SAME", "i: 1 i: 1 i: 1 i: 2 i: 1", "i: 1 i: 2 i: 1 i: 3 i: 1"),
     GA("SAME", "i: 1 i: 1 i: 1 i: 1 i: 2", "i: 1 i: 1 i: 2 i: 1 i: 3"), 2e-5},
    {"conv_grouped", "Conv3D", "DT_FLOAT", GA("VALID", ONES5, ONES5), GA("VALID", ONES5, ONES5), 2e-5},
    {"bwd_same", "Conv3DBackpropInputV2", "DT_FLOAT", GA("SAME", TWOS3, ONES5), GA("SAME", "i: 1 i: 1 i: 2 i: 2 i: 2", ONES5),
     2e-5},
    {"bwd_valid", "Conv3DBackpropInputV2", "DT_FLOAT", GA("VALID", "i: 1 i: 1 i: 2 i: 3 i: 1", ONES5), NULL, 2e-5},
    {"bwd_f64", "Conv3DBackpropInputV2", "DT_DOUBLE", GA("SAME", "i: 1 i: 2 i: 1 i: 2 i: 1", ONES5), NULL, 1e-12},
    {"bwd_dilated", "Conv3DBackpropInputV2", "DT_FLOAT", GA("SAME", ONES5, "i: 1 i: 2 i: 2 i: 1 i: 1"),
     GA("SAME", ONES5, "i: 1 i: 1 i: 2 i: 2 i: 1"), 2e-5},
    {"max_same", "MaxPool3D", "DT_FLOAT", GP("SAME", "i: 1 i: 2 i: 3 i: 2 i: 1", "i: 1 i: 2 i: 2 i: 3 i: 1"),
     GP("SAME", "i: 1 i: 1 i: 2 i: 3 i: 2", "i: 1 i: 1 i: 2 i: 2 i: 3"), 0},
    {"max_valid", "MaxPool3D", "DT_FLOAT", GP("VALID", "i: 1 i: 3 i: 2 i: 2 i: 1", "i: 1 i: 1 i: 2 i: 2 i: 1"), NULL, 0},
    {"avg_same", "AvgPool3D", "DT_FLOAT", GP("SAME", "i: 1 i: 3 i: 3 i: 2 i: 1", TWOS3),
     GP("SAME", "i: 1 i: 1 i: 3 i: 3 i: 2", "i: 1 i: 1 i: 2 i: 2 i: 2"), 1e-6},
    {"avg_valid", "AvgPool3D", "DT_FLOAT", GP("VALID", "i: 1 i: 2 i: 2 i: 3 i: 1", "i: 1 i: 2 i: 1 i: 2 i: 1"), NULL, 1e-6},
};

static void read_npy(const char *name, const char *part, gn_tensor *t)
{
    char rel[256], path[1024], err[512];
    snprintf(rel, sizeof rel, "nn3d/%s_%s.npy", name, part);
    gn_test_data(rel, path, sizeof path);
    if (gn_npy_read(path, t, err, sizeof err) != GN_OK) fail_msg("%s", err);
}

static gn_graph *golden_graph(const golden *c, bool cf)
{
    char attrs[2048];
    snprintf(attrs, sizeof attrs, "attr { key: 'T' value { type: %s } } attr { key: 'data_format' value { s: '%s' } } %s",
             c->dt, cf ? "NCDHW" : "NDHWC", cf ? c->attrs_cf : c->attrs);
    bool bwd = !strcmp(c->op, "Conv3DBackpropInputV2"), conv = !strcmp(c->op, "Conv3D");
    const char *dts[3] = {bwd ? "DT_INT32" : c->dt, c->dt, c->dt};
    if (!conv && !bwd) {
        /* pools have no dilations attr */
        char *d = strstr(attrs, " attr { key: 'dilations'");
        if (d) *d = 0;
    }
    return graph1v(c->op, bwd ? 3 : conv ? 2 : 1, dts, attrs, 1);
}

static void test_goldens(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < sizeof GOLDENS / sizeof GOLDENS[0]; ci++) {
        const golden *c = &GOLDENS[ci];
        bool bwd = !strcmp(c->op, "Conv3DBackpropInputV2"), conv = !strcmp(c->op, "Conv3D");
        const char *parts[3];
        uint32_t n_in;
        const char *refname;
        if (bwd) parts[0] = "sizes", parts[1] = "w", parts[2] = "dy", n_in = 3, refname = "dx";
        else if (conv) parts[0] = "x", parts[1] = "w", n_in = 2, refname = "y";
        else parts[0] = "x", n_in = 1, refname = "y";
        gn_tensor api[3], ref;
        gn__tensor in[3];
        for (uint32_t i = 0; i < n_in; i++) {
            read_npy(c->name, parts[i], &api[i]);
            in[i] = from_api(&api[i]);
        }
        read_npy(c->name, refname, &ref);
        gn__tensor tref = from_api(&ref), out, out_ref, out_ref2;
        gn_graph *g = golden_graph(c, false);
        char what[128];
        run_ok(g, in, n_in, &out, 0);
        snprintf(what, sizeof what, "%s (BLAS path)", c->name);
        expect_close(what, &out, &tref, c->tol);
        run_ok(g, in, n_in, &out_ref, GN__K_REFERENCE);
        snprintf(what, sizeof what, "%s (reference path)", c->name);
        expect_close(what, &out_ref, &tref, c->tol);
        run_ok(g, in, n_in, &out_ref2, GN__K_REFERENCE);
        expect_bits(what, &out_ref, &out_ref2);
        gn_graph_free(g);
        if (c->attrs_cf) {
            /* NCDHW: inputs transposed (input_sizes permuted), output = transposed NDHWC output */
            gn_graph *gc = golden_graph(c, true);
            gn__tensor cin[3];
            void *bufs[3] = {NULL, NULL, NULL};
            int32_t sz_cf[5];
            int64_t nd[5];
            for (uint32_t i = 0; i < n_in; i++) cin[i] = in[i];
            uint32_t act = bwd ? 2 : 0;   /* the activation-like operand */
            bufs[0] = permute(&in[act], true, nd);
            cin[act] = tens(in[act].dtype, 5, nd, bufs[0]);
            if (bwd) {
                const int32_t *s = in[0].data;
                sz_cf[0] = s[0], sz_cf[1] = s[4], sz_cf[2] = s[1], sz_cf[3] = s[2], sz_cf[4] = s[3];
                cin[0] = tens(DT_I32, 1, in[0].dims, sz_cf);
            }
            gn__tensor out_cf;
            run_ok(gc, cin, n_in, &out_cf, 0);
            bufs[1] = permute(&out_cf, false, nd);
            gn__tensor back = tens(out_cf.dtype, 5, nd, bufs[1]);
            snprintf(what, sizeof what, "%s (NCDHW)", c->name);
            expect_bits(what, &back, &out);
            gn__tensor_release(&out_cf);
            free(bufs[0]);
            free(bufs[1]);
            gn_graph_free(gc);
        }
        gn__tensor_release(&out);
        gn__tensor_release(&out_ref);
        gn__tensor_release(&out_ref2);
        for (uint32_t i = 0; i < n_in; i++) gn_tensor_free(&api[i]);
        gn_tensor_free(&ref);
    }
}

/* TensorFlow's own float16 Conv3D accumulates in float16: within 2e-2. */
static void test_golden_f16_native(void **state)
{
    (void)state;
    gn_tensor api[2], ref;
    read_npy("conv_f16", "x", &api[0]);
    read_npy("conv_f16", "w", &api[1]);
    read_npy("conv_f16", "y_tf16", &ref);
    gn__tensor in[2] = {from_api(&api[0]), from_api(&api[1])}, tref = from_api(&ref), out;
    gn_graph *g = golden_graph(&GOLDENS[4], false);
    assert_string_equal(GOLDENS[4].name, "conv_f16");
    run_ok(g, in, 2, &out, 0);
    expect_close("conv_f16 vs TensorFlow's float16 kernel", &out, &tref, 2e-2);
    gn__tensor_release(&out);
    gn_graph_free(g);
    gn_tensor_free(&api[0]);
    gn_tensor_free(&api[1]);
    gn_tensor_free(&ref);
}

/* float16 and float64 on the golden cases without a TensorFlow CPU kernel for
 * them: float16 computes in float and rounds once, so its bits are those of the
 * float32 kernel on the float16 values, rounded; float64 agrees with float32
 * within 2e-5 * (1 + |ref|) (MaxPool3D's op has no float64). */
static gn_graph *retyped(const golden *c, const char *dt)
{
    golden g2 = *c;
    g2.dt = dt;
    return golden_graph(&g2, false);
}

static void test_f16_f64_paths(void **state)
{
    (void)state;
    const char *names[] = {"max_same", "avg_same", "bwd_same", "conv_grouped", "conv_dilated"};
    for (size_t ni = 0; ni < sizeof names / sizeof names[0]; ni++) {
        const golden *c = NULL;
        for (size_t i = 0; i < sizeof GOLDENS / sizeof GOLDENS[0]; i++)
            if (!strcmp(GOLDENS[i].name, names[ni])) c = &GOLDENS[i];
        assert_non_null(c);
        bool bwd = !strcmp(c->op, "Conv3DBackpropInputV2"), conv = !strcmp(c->op, "Conv3D");
        const char *parts[3] = {bwd ? "sizes" : "x", "w", "dy"};
        uint32_t n_in = bwd ? 3 : conv ? 2 : 1;
        gn_tensor api[3];
        gn__tensor in32[3], in16[3], in64[3], o32, o16, o64;
        void *b16[3] = {NULL, NULL, NULL}, *b64[3] = {NULL, NULL, NULL};
        for (uint32_t i = 0; i < n_in; i++) {
            read_npy(c->name, parts[i], &api[i]);
            in32[i] = in16[i] = in64[i] = from_api(&api[i]);
            if (api[i].dtype != DT_F32) continue;
            int64_t n = gn__tensor_numel(&in32[i]);
            _Float16 *h = malloc((size_t)n * sizeof *h);
            double *d = malloc((size_t)n * sizeof *d);
            assert_true(h && d);
            float *f = api[i].data;
            for (int64_t k = 0; k < n; k++) {
                h[k] = (_Float16)f[k];
                f[k] = (float)h[k];   /* the float32 run sees the float16 values */
                d[k] = (double)f[k];
            }
            b16[i] = h;
            b64[i] = d;
            in16[i] = tens(DT_F16, 5, in32[i].dims, h);
            in64[i] = tens(DT_F64, 5, in32[i].dims, d);
        }
        const bool has64 = strcmp(c->op, "MaxPool3D") != 0;
        gn_graph *g32 = golden_graph(c, false), *g16 = retyped(c, "DT_HALF"), *g64 = has64 ? retyped(c, "DT_DOUBLE") : NULL;
        run_ok(g32, in32, n_in, &o32, 0);
        run_ok(g16, in16, n_in, &o16, 0);
        memset(&o64, 0, sizeof o64);
        if (has64) {
            run_ok(g64, in64, n_in, &o64, GN__K_REFERENCE);
            assert_int_equal(o64.dtype, DT_F64);
        }
        int64_t n = gn__tensor_numel(&o32);
        assert_int_equal(o16.dtype, DT_F16);
        for (int64_t k = 0; k < n; k++) {
            float want = ((const float *)o32.data)[k];
            _Float16 got = ((const _Float16 *)o16.data)[k], w16 = (_Float16)want;
            if (memcmp(&got, &w16, sizeof got))
                fail_msg("%s float16: element %lld: got %g, want %g", c->name, (long long)k, (double)got, (double)w16);
            if (!has64) continue;
            double g64v = ((const double *)o64.data)[k];
            if (!(fabs(g64v - want) <= 2e-5 * (1 + fabs(g64v))))
                fail_msg("%s float64: element %lld: got %.12g, float32 %.9g", c->name, (long long)k, g64v, (double)want);
        }
        gn__tensor_release(&o32);
        gn__tensor_release(&o16);
        gn__tensor_release(&o64);
        gn_graph_free(g32);
        gn_graph_free(g16);
        gn_graph_free(g64);
        for (uint32_t i = 0; i < n_in; i++) {
            free(b16[i]);
            free(b64[i]);
            gn_tensor_free(&api[i]);
        }
    }
}

/* ---- errors ------------------------------------------------------------------------------ */
static void test_errors(void **state)
{
    (void)state;
    static const float z[64] = {0};
    const int64_t x5[5] = {1, 2, 2, 2, 4}, w4[4] = {2, 2, 2, 4}, w3c[5] = {1, 1, 1, 3, 2};
    gn__tensor in[3] = {tens(DT_F32, 5, x5, z), tens(DT_F32, 4, w4, z)};
    expect_error("Conv3D", 2, F2, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), in, GN_ERR_GRAPH,
                 "node 'n' (Conv3D): filter must be 5-dimensional: [2,2,2,4]");
    in[1] = tens(DT_F32, 5, w3c, z);
    expect_error("Conv3D", 2, F2, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), in, GN_ERR_GRAPH,
                 "node 'n' (Conv3D): Input depth must be evenly divisible by filter depth: 4 vs 3");
    expect_error("Conv3D", 2, F2, CONV_ATTRS("SAME", "i: 1 i: 1 i: 1 i: 1", ONES5, "NDHWC"), in, GN_ERR_GRAPH,
                 "node 'n' (Conv3D): Sliding window strides field must specify 5 dimensions");
    expect_error("Conv3D", 2, F2, CONV_ATTRS("SAME", ONES5, "i: 1 i: 1 i: 1 i: 1 i: 2", "NDHWC"), in, GN_ERR_UNSUPPORTED,
                 "node 'n' (Conv3D): Current implementation does not yet support dilation rates in the batch and "
                 "depth dimensions.");
    expect_error("Conv3D", 2, F2, CONV_ATTRS("SAME", "i: 1 i: 0 i: 1 i: 1 i: 1", ONES5, "NDHWC"), in, GN_ERR_GRAPH,
                 "node 'n' (Conv3D): Spatial strides should be larger than 0.");
    /* a hostile dilation: (3 - 1) * 2^62 + 1 overflows int64 */
    const int64_t w3[5] = {3, 1, 1, 4, 1};
    in[1] = tens(DT_F32, 5, w3, z);
    expect_error("Conv3D", 2, F2, CONV_ATTRS("VALID", ONES5, "i: 1 i: 4611686018427387904 i: 1 i: 1 i: 1", "NDHWC"), in,
                 GN_ERR_GRAPH, "node 'n' (Conv3D): effective filter size of 3 taps dilated by 4611686018427387904 overflows");
    /* VALID, D = 2, 3 taps: output size 0 (an empty output); 4 taps: negative */
    gn__tensor eo;
    gn__err ee;
    gn_graph *ge = graph1v("Conv3D", 2, F2, CONV_ATTRS("VALID", ONES5, ONES5, "NDHWC"), 1);
    assert_int_equal(run_k(ge, in, 2, &eo, 0, &ee), GN_OK);
    const int64_t e0[5] = {1, 0, 2, 2, 1};
    expect_shape(&eo, 5, e0);
    gn__tensor_release(&eo);
    gn_graph_free(ge);
    const int64_t w4t[5] = {4, 1, 1, 4, 1};
    in[1] = tens(DT_F32, 5, w4t, z);
    expect_error("Conv3D", 2, F2, CONV_ATTRS("VALID", ONES5, ONES5, "NDHWC"), in, GN_ERR_GRAPH,
                 "node 'n' (Conv3D): Computed output size would be negative: -1 [input_size: 2, "
                 "effective_filter_size: 4, stride: 1]");
    /* pools */
    gn__tensor px[1] = {tens(DT_F32, 5, x5, z)};
    expect_error("MaxPool3D", 1, F1, POOL_ATTRS("VALID", "i: 1 i: 1 i: 1 i: 1 i: 2", ONES5, "NDHWC"), px,
                 GN_ERR_UNSUPPORTED, "node 'n' (MaxPool3D): Pooling is not yet supported on the depth dimension.");
    expect_error("AvgPool3D", 1, F1, POOL_ATTRS("VALID", "i: 1 i: 4 i: 1 i: 1 i: 1", ONES5, "NDHWC"), px, GN_ERR_GRAPH,
                 "node 'n' (AvgPool3D): Computed output size would be negative: -1 [input_size: 2, "
                 "effective_filter_size: 4, stride: 1]");
    expect_error("AvgPool3D", 1, F1, POOL_ATTRS("VALID", ONES5, "i: 1 i: 1 i: 1 i: 1", "NDHWC"), px, GN_ERR_GRAPH,
                 "node 'n' (AvgPool3D): Sliding window stride field must specify 5 dimensions");
    px[0] = tens(DT_F32, 4, x5, z);
    expect_error("MaxPool3D", 1, F1, POOL_ATTRS("VALID", ONES5, ONES5, "NDHWC"), px, GN_ERR_GRAPH,
                 "node 'n' (MaxPool3D): tensor_in must be 5-dimensional: [1,2,2,2]");
    /* Conv3DBackpropInputV2 */
    static const int32_t sz_bad[5] = {1, 2, 3, 2, 4}, sz_neg[5] = {1, -2, 2, 2, 4}, sz4[4] = {1, 2, 2, 2};
    static const int64_t sz_huge[5] = {1, (int64_t)1 << 40, (int64_t)1 << 40, 1, 4};
    const int64_t d5[1] = {5}, d4[1] = {4}, wb[5] = {2, 2, 2, 4, 3}, dyb[5] = {1, 2, 2, 2, 3};
    gn__tensor bi[3] = {tens(DT_I32, 1, d5, sz_bad), tens(DT_F32, 5, wb, z), tens(DT_F32, 5, dyb, z)};
    expect_error("Conv3DBackpropInputV2", 3, BWD, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), bi, GN_ERR_GRAPH,
                 "node 'n' (Conv3DBackpropInputV2): Conv3DBackpropInputOp: Size of out_backprop doesn't match "
                 "computed: actual = 2, computed = 3 spatial_dim: 2 input: 3 filter: 2 output: 2 stride: 1 "
                 "dilation: 1");
    bi[0] = tens(DT_I32, 1, d5, sz_neg);
    expect_error("Conv3DBackpropInputV2", 3, BWD, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), bi, GN_ERR_GRAPH,
                 "node 'n' (Conv3DBackpropInputV2): input_sizes: dimension 1 is -2, must be >= 0");
    bi[0] = tens(DT_I32, 1, d4, sz4);
    expect_error("Conv3DBackpropInputV2", 3, BWD, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), bi, GN_ERR_GRAPH,
                 "node 'n' (Conv3DBackpropInputV2): input tensor must have 5 dimensions, input_sizes has 4");
    bi[0] = tens(DT_I64, 1, d5, sz_huge);
    expect_error("Conv3DBackpropInputV2", 3, BWD64, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), bi, GN_ERR_GRAPH,
                 "node 'n' (Conv3DBackpropInputV2): input_sizes: the element count overflows");
    const int64_t wc[5] = {2, 2, 2, 3, 3};
    static const int32_t sz_ok[5] = {1, 2, 2, 2, 4};
    bi[0] = tens(DT_I32, 1, d5, sz_ok);
    bi[1] = tens(DT_F32, 5, wc, z);
    expect_error("Conv3DBackpropInputV2", 3, BWD, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), bi, GN_ERR_GRAPH,
                 "node 'n' (Conv3DBackpropInputV2): input and filter_sizes must have the same number of channels. "
                 "Got 4 for input and 3 for filter_sizes");
    /* dtypes */
    static const int32_t zi[64] = {0};
    gn__tensor ii[2] = {tens(DT_I32, 5, x5, zi), tens(DT_I32, 5, w3c, zi)};
    const char *const I2[] = {"DT_INT32", "DT_INT32"};
    expect_error("Conv3D", 2, I2, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), ii, GN_ERR_UNSUPPORTED,
                 "node 'n' (Conv3D): dtype int32 is not supported");
}

/* Zero-sized dims give empty outputs (no reads, no writes). */
static void test_empty(void **state)
{
    (void)state;
    static const float z[8] = {0};
    const int64_t x0[5] = {0, 2, 2, 2, 1}, w[5] = {1, 1, 1, 1, 3}, y0[5] = {0, 2, 2, 2, 3};
    gn__tensor in[2] = {tens(DT_F32, 5, x0, z), tens(DT_F32, 5, w, z)}, out;
    gn_graph *g = graph1v("Conv3D", 2, F2, CONV_ATTRS("SAME", ONES5, ONES5, "NDHWC"), 1);
    run_ok(g, in, 2, &out, 0);
    expect_shape(&out, 5, y0);
    gn__tensor_release(&out);
    gn_graph_free(g);
    g = graph1v("AvgPool3D", 1, F1, POOL_ATTRS("SAME", "i: 1 i: 1 i: 2 i: 2 i: 2", "i: 1 i: 1 i: 2 i: 2 i: 2", "NCDHW"), 1);
    const int64_t p0[5] = {1, 0, 3, 3, 3}, po[5] = {1, 0, 2, 2, 2};
    gn__tensor pin[1] = {tens(DT_F32, 5, p0, z)};
    run_ok(g, pin, 1, &out, 0);
    expect_shape(&out, 5, po);
    gn__tensor_release(&out);
    gn_graph_free(g);
}

/* ---- the ops in a graph: session and constant folding ------------------------------------ */
static char *const_node(char *p, const char *name, int rank, const int64_t *dims, int64_t n, uint64_t *seed)
{
    p += sprintf(p, "node { name: '%s' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                    "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {", name);
    for (int i = 0; i < rank; i++) p += sprintf(p, " dim { size: %lld }", (long long)dims[i]);
    p += sprintf(p, " }");
    for (int64_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        p += sprintf(p, " float_val: %d", (int)((*seed >> 33) % 17) - 8);
    }
    p += sprintf(p, " } } } }\n");
    return p;
}

#define T_F "attr { key: 'T' value { type: DT_FLOAT } } "
static const char CHAIN[] =
    "node { name: 'c' op: 'Conv3D' input: 'x' input: 'w' " T_F
    "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'strides' value { list { " ONES5 " } } } }\n"
    "node { name: 'm' op: 'MaxPool3D' input: 'c' " T_F "attr { key: 'padding' value { s: 'VALID' } } "
    "attr { key: 'ksize' value { list { " TWOS3 " } } } attr { key: 'strides' value { list { " TWOS3 " } } } }\n"
    "node { name: 'sz' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
    "dtype: DT_INT32 tensor_shape { dim { size: 5 } } int_val: 1 int_val: 4 int_val: 4 int_val: 4 int_val: 2 } } } }\n"
    "node { name: 't' op: 'Conv3DBackpropInputV2' input: 'sz' input: 'wt' input: 'm' " T_F
    "attr { key: 'padding' value { s: 'SAME' } } attr { key: 'strides' value { list { " TWOS3 " } } } }\n"
    "node { name: 'a' op: 'AvgPool3D' input: 't' " T_F "attr { key: 'padding' value { s: 'SAME' } } "
    "attr { key: 'ksize' value { list { i: 1 i: 3 i: 3 i: 3 i: 1 } } } attr { key: 'strides' value { list { " ONES5
    " } } } }\n";

/* x [1,4,4,4,2] -> Conv3D (w [3,3,3,2,3], SAME) -> MaxPool3D 2/2 -> Conv3DBackpropInputV2 (wt [3,3,3,2,3],
 * stride 2, SAME, back to [1,4,4,4,2]) -> AvgPool3D 3, stride 1, SAME. x is a Placeholder or a Const. */
static gn_graph *chain_graph(bool x_const)
{
    static char buf[65536];
    char *p = buf;
    uint64_t seed = 7;
    const int64_t dx[5] = {1, 4, 4, 4, 2}, dw[5] = {3, 3, 3, 2, 3};
    if (x_const) p = const_node(p, "x", 5, dx, 128, &seed);
    else p += sprintf(p, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
    seed = 11;
    p = const_node(p, "w", 5, dw, 162, &seed);
    p = const_node(p, "wt", 5, dw, 162, &seed);
    p += sprintf(p, "%s", CHAIN);
    return gn_pt_kload(buf, 1);
}

static gn__tensor const_value(gn_graph *g, const char *name, gn__tensor *owned)
{
    gn_id id = gn__graph_find(g, name);
    assert_int_not_equal(id, GN_NONE);
    assert_string_equal(gn__node_op(g, id), "Const");
    const Tensorflow__AttrValue *av = gn__node_attr(g, id, "value");
    assert_non_null(av);
    const Tensorflow__TensorProto *tp = av->tensor;
    assert_non_null(tp);
    gn__err err;
    memset(&err, 0, sizeof err);
    if (gn__tensor_from_proto(tp, owned, &err) != GN_OK) fail_msg("%s", err.msg);
    return *owned;
}

/* The kernels one by one on the Const graph's values. */
static void chain_by_hand(gn_graph *g, gn__tensor *res)
{
    gn__tensor x, w, wt, sz, c, m, t;
    const_value(g, "x", &x);
    const_value(g, "w", &w);
    const_value(g, "wt", &wt);
    const_value(g, "sz", &sz);
    gn__kctx k;
    gn__err err;
    struct step {
        const char *node;
        gn__tensor in[3];
        uint32_t n;
        gn__tensor *out;
    } steps[4] = {
        {"c", {x, w}, 2, &c}, {"m", {{0}}, 1, &m}, {"t", {{0}}, 3, &t}, {"a", {{0}}, 1, res}};
    for (int s = 0; s < 4; s++) {
        if (s == 1) steps[1].in[0] = c;
        if (s == 2) steps[2].in[0] = sz, steps[2].in[1] = wt, steps[2].in[2] = m;
        if (s == 3) steps[3].in[0] = t;
        memset(&k, 0, sizeof k);
        memset(&err, 0, sizeof err);
        memset(steps[s].out, 0, sizeof *steps[s].out);
        k.g = g;
        k.node = gn__graph_find(g, steps[s].node);
        k.in = steps[s].in;
        k.n_in = steps[s].n;
        k.out = steps[s].out;
        k.n_out = 1;
        k.err = &err;
        if (gn__kernel_for(gn__node_op(g, k.node))(&k) != GN_OK) fail_msg("%s", err.msg);
    }
    gn__tensor_release(&x);
    gn__tensor_release(&w);
    gn__tensor_release(&wt);
    gn__tensor_release(&sz);
    gn__tensor_release(&c);
    gn__tensor_release(&m);
    gn__tensor_release(&t);
}

static void session_fetch(const gn_graph *g, const gn_tensor *feed, gn_tensor *out)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    const char *fn[1] = {"x"}, *xn[1] = {"a"};
    if (gn_session_run(s, fn, feed, feed ? 1 : 0, xn, out, 1) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void test_session_and_folding(void **state)
{
    (void)state;
    gn_graph *gc = chain_graph(true);
    gn__tensor want, xv;
    chain_by_hand(gc, &want);
    const int64_t dout[5] = {1, 4, 4, 4, 2};
    expect_shape(&want, 5, dout);
    /* the Placeholder graph fed x's value */
    gn_graph *gp = chain_graph(false);
    const_value(gc, "x", &xv);
    gn_tensor feed;
    memset(&feed, 0, sizeof feed);
    feed.dtype = DT_F32;
    feed.rank = 5;
    memcpy(feed.dims, xv.dims, sizeof xv.dims[0] * 5);
    feed.data = xv.data;
    feed.nbytes = xv.nbytes;
    gn_tensor got;
    session_fetch(gp, &feed, &got);
    gn__tensor gt = from_api(&got);
    expect_bits("session", &gt, &want);
    gn_tensor_free(&got);
    /* the Const graph, before and after constant folding */
    session_fetch(gc, NULL, &got);
    gt = from_api(&got);
    expect_bits("session on Consts", &gt, &want);
    gn_tensor_free(&got);
    gn_options o;
    gn_options_init(&o);
    gn_optimize_params pp;
    gn_optimize_params_init(&pp);
    const char *fetch[1] = {"a"};
    pp.fetches = fetch;
    pp.n_fetches = 1;
    assert_int_equal(gn_optimize(gc, &o, &pp, NULL), GN_OK);
    for (gn_id i = 0; i < gc->n_nodes; i++) {
        if (!gn__node_live(gc, i)) continue;
        const char *op = gn__node_op(gc, i);
        if (!strcmp(op, "Conv3D") || !strcmp(op, "MaxPool3D") || !strcmp(op, "Conv3DBackpropInputV2") ||
            !strcmp(op, "AvgPool3D"))
            fail_msg("node '%s' (%s) was not folded", gn__node_name(gc, i), op);
    }
    session_fetch(gc, NULL, &got);
    gt = from_api(&got);
    /* folding runs the reference path; the session the BLAS path: same values within 2e-5 */
    expect_close("after constant folding", &gt, &want, 2e-5);
    gn_tensor_free(&got);
    gn__tensor folded;
    const_value(gc, "a", &folded);
    expect_close("folded Const", &folded, &want, 2e-5);
    gn__tensor_release(&folded);
    gn__tensor_release(&xv);
    gn__tensor_release(&want);
    gn_graph_free(gp);
    gn_graph_free(gc);
}

/* The op list (src/opdef/ops.def) names the 3-D kernels; the whole list is
 * checked in op_list_test.c. */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("Conv3D"), gn__nn3d_k_conv3d);
    assert_ptr_equal(gn__kernel_for("Conv3DBackpropInputV2"), gn__nn3d_k_conv3d_backprop_input_v2);
    assert_ptr_equal(gn__kernel_for("AvgPool3D"), gn__nn3d_k_avg_pool3d);
    assert_ptr_equal(gn__kernel_for("MaxPool3D"), gn__nn3d_k_max_pool3d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv3d_hand),
        cmocka_unit_test(test_pool3d_hand),
        cmocka_unit_test(test_backprop_hand),
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_golden_f16_native),
        cmocka_unit_test(test_f16_f64_paths),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_session_and_folding),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
