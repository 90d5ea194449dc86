/* CPU kernels of src/ops/kernels/misc.c: segment reductions, TensorScatter*,
 * Roll, Bucketize, Unique/UniqueV2, Bincount/DenseBincount, L2Loss,
 * MatrixDiagV3/MatrixDiagPartV3, Assert, Print, PrintV2 and StringFormat.
 *
 * Each kernel test builds a one-node graph from pbtxt (for the attrs) and
 * calls the kernel through gn__kernel_for. Small cases are worked by hand and
 * checked exactly; the others compare with TensorFlow's own outputs saved by
 * tools/make_misc_goldens.py under tests/data/misc/. Tolerances: integer
 * outputs, copies (scatter update, roll, unique, diag) and float max/min are
 * exact; float32 sums, means, products and L2Loss within relative L2 1e-6
 * (TensorFlow sums in another order). Strings (StringFormat, Assert's
 * message) are compared byte for byte with what TensorFlow 2.21 printed. */
#include <float.h>
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
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_STR TENSORFLOW__DATA_TYPE__DT_STRING


static gn_graph *graph1(const char *op, int n_in, const char *attrs)
{
    return gn_pt_kgraph(op, n_in, NULL, attrs, 0);
}


static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    return gn_pt_ktensor(dt, rank, dims, data);
}

static gn_status run_k(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out, gn__err *err)
{
    return gn_pt_krun(g, in, n_in, out, n_out, GN__K_REFERENCE, err);
}

static void run_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out)
{
    gn_pt_krun_ok(g, in, n_in, out, n_out, GN__K_REFERENCE);
}


/* One-node graph of op with attrs; runs it on in and requires code and the exact message. */
static void expect_error(const char *op, const char *attrs, const gn__tensor *in, uint32_t n_in, uint32_t n_out,
                         gn_status code, const char *msg)
{
    gn_graph *g = graph1(op, (int)n_in, attrs);
    gn__tensor out[4];
    gn__err err;
    gn_status s = run_k(g, in, n_in, out, n_out, &err);
    gn_pt_krelease(out, n_out);
    gn_graph_free(g);
    if (s != code || strcmp(err.msg, msg)) fail_msg("%s: got (%d) '%s'\nwant (%d) '%s'", op, s, err.msg, code, msg);
}

static void expect_shape(const gn__tensor *t, int32_t dt, int rank, const int64_t *dims)
{
    assert_int_equal(t->dtype, dt);
    assert_int_equal(t->rank, rank);
    for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], dims[i]);
}

static void expect_i32(const gn__tensor *t, const int32_t *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++)
        if (((const int32_t *)t->data)[i] != want[i])
            fail_msg("element %lld is %d, want %d", (long long)i, ((const int32_t *)t->data)[i], want[i]);
}

static void expect_f32(const gn__tensor *t, const float *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&((const float *)t->data)[i], &want[i], sizeof(float)))
            fail_msg("element %lld is %.9g, want exactly %.9g", (long long)i, ((const float *)t->data)[i], want[i]);
}

static void expect_str(const gn__tensor *t, const char *want)
{
    assert_int_equal(t->dtype, DT_STR);
    assert_int_equal(t->rank, 0);
    const gn__tstring *s = t->data;
    if (s->len != strlen(want) || memcmp(s->ptr, want, s->len))
        fail_msg("got '%.*s'\nwant '%s'", (int)s->len, s->ptr, want);
}

/* ---- TensorFlow goldens ---------------------------------------------------------------- */
typedef struct golden_case {
    const char *name; /* file prefix under tests/data/misc */
    const char *op;
    const char *attrs;
    uint32_t n_in, n_out;
    double tol; /* 0: exact */
} golden_case;

static const golden_case goldens[] = {
    {"SegmentSum", "SegmentSum", "", 2, 1, 1e-6},
    {"SegmentMean", "SegmentMean", "", 2, 1, 1e-6},
    {"SegmentMax", "SegmentMax", "", 2, 1, 0},
    {"SegmentMin", "SegmentMin", "", 2, 1, 0},
    {"SegmentMean_i32", "SegmentMean", "", 2, 1, 0},
    {"UnsortedSegmentSum", "UnsortedSegmentSum", "", 3, 1, 1e-6},
    {"UnsortedSegmentMax", "UnsortedSegmentMax", "", 3, 1, 0},
    {"UnsortedSegmentMin", "UnsortedSegmentMin", "", 3, 1, 0},
    {"UnsortedSegmentProd", "UnsortedSegmentProd", "", 3, 1, 1e-6},
    {"UnsortedSegmentProd_i64", "UnsortedSegmentProd", "", 3, 1, 0},
    {"TensorScatterAdd", "TensorScatterAdd", "", 3, 1, 1e-6},
    {"TensorScatterSub", "TensorScatterSub", "", 3, 1, 1e-6},
    {"TensorScatterMax", "TensorScatterMax", "", 3, 1, 0},
    {"TensorScatterMin", "TensorScatterMin", "", 3, 1, 0},
    {"TensorScatterUpdate", "TensorScatterUpdate", "", 3, 1, 0},
    {"Roll", "Roll", "", 3, 1, 0},
    {"Roll_f32", "Roll", "", 3, 1, 0},
    {"UniqueV2", "UniqueV2", "attr { key: 'out_idx' value { type: DT_INT32 } }", 2, 2, 0},
    {"Unique", "Unique", "attr { key: 'out_idx' value { type: DT_INT64 } }", 1, 2, 0},
    {"DenseBincount", "DenseBincount", "", 3, 1, 1e-6},
    {"Bincount", "Bincount", "", 3, 1, 0},
    {"L2Loss", "L2Loss", "", 1, 1, 1e-6},
    {"MatrixDiagV3_RIGHT_LEFT", "MatrixDiagV3", "attr { key: 'align' value { s: 'RIGHT_LEFT' } }", 5, 1, 0},
    {"MatrixDiagV3_LEFT_RIGHT", "MatrixDiagV3", "attr { key: 'align' value { s: 'LEFT_RIGHT' } }", 5, 1, 0},
    {"MatrixDiagV3_LEFT_LEFT", "MatrixDiagV3", "attr { key: 'align' value { s: 'LEFT_LEFT' } }", 5, 1, 0},
    {"MatrixDiagV3_RIGHT_RIGHT", "MatrixDiagV3", "attr { key: 'align' value { s: 'RIGHT_RIGHT' } }", 5, 1, 0},
    {"MatrixDiagPartV3_RIGHT_LEFT", "MatrixDiagPartV3", "attr { key: 'align' value { s: 'RIGHT_LEFT' } }", 3, 1, 0},
    {"MatrixDiagPartV3_LEFT_RIGHT", "MatrixDiagPartV3", "attr { key: 'align' value { s: 'LEFT_RIGHT' } }", 3, 1, 0},
    {"MatrixDiagPartV3_LEFT_LEFT", "MatrixDiagPartV3", "attr { key: 'align' value { s: 'LEFT_LEFT' } }", 3, 1, 0},
    {"MatrixDiagPartV3_RIGHT_RIGHT", "MatrixDiagPartV3", "attr { key: 'align' value { s: 'RIGHT_RIGHT' } }", 3, 1, 0},
    {"Bucketize", "Bucketize", "attr { key: 'boundaries' value { list { f: -2 f: 0 f: 1 f: 2.5 } } }", 1, 1, 0},
};

static void read_npy(const char *name, const char *kind, uint32_t k, gn_tensor *t)
{
    char rel[256], path[4096], err[512];
    snprintf(rel, sizeof rel, "misc/%s_%s%u.npy", name, kind, k);
    gn_test_data(rel, path, sizeof path);
    if (gn_npy_read(path, t, err, sizeof err) != GN_OK) fail_msg("%s", err);
}

static void test_goldens(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < GN__ARRAY_LEN(goldens); ci++) {
        const golden_case *gc = &goldens[ci];
        gn_tensor fin[5];
        gn__tensor in[5];
        for (uint32_t k = 0; k < gc->n_in; k++) {
            read_npy(gc->name, "in", k, &fin[k]);
            in[k] = tens(fin[k].dtype, fin[k].rank, fin[k].dims, fin[k].data);
        }
        gn_graph *g = graph1(gc->op, (int)gc->n_in, gc->attrs);
        gn__tensor out[2];
        run_ok(g, in, gc->n_in, out, gc->n_out);
        for (uint32_t k = 0; k < gc->n_out; k++) {
            gn_tensor ref, got;
            read_npy(gc->name, "out", k, &ref);
            memset(&got, 0, sizeof got);
            got.dtype = out[k].dtype;
            got.rank = out[k].rank;
            memcpy(got.dims, out[k].dims, sizeof got.dims);
            got.data = out[k].data;
            got.nbytes = out[k].nbytes;
            gn_compare_result r;
            assert_int_equal(gn_tensor_compare(&got, &ref, gc->tol, &r), GN_OK);
            if (!r.match) fail_msg("%s output %u: %s (rel L2 %g)", gc->name, k, r.why, r.rel_l2_err);
            if (gc->tol == 0 && r.n_diff)
                fail_msg("%s output %u: %lld elements differ", gc->name, k, (long long)r.n_diff);
            gn_tensor_free(&ref);
        }
        gn_pt_krelease(out, gc->n_out);
        gn_graph_free(g);
        for (uint32_t k = 0; k < gc->n_in; k++) gn_tensor_free(&fin[k]);
    }
}

/* ---- hand-worked cases ------------------------------------------------------------------- */
static void test_segments(void **state)
{
    (void)state;
    /* sorted: ids 0,0,2 -> segment 1 is empty: 0 for every reduction */
    float x[6] = {1, -2, 3, 4, -5, 6};
    int32_t ids[3] = {0, 0, 2};
    int64_t d32[2] = {3, 2}, d3[1] = {3}, d0[1] = {0};
    gn__tensor in[3] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 1, d3, ids)};
    gn__tensor out[1];
    const char *ops[4] = {"SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin"};
    const float want[4][6] = {{4, 2, 0, 0, -5, 6}, {2, 1, 0, 0, -5, 6}, {3, 4, 0, 0, -5, 6}, {1, -2, 0, 0, -5, 6}};
    for (int k = 0; k < 4; k++) {
        gn_graph *g = graph1(ops[k], 2, "");
        run_ok(g, in, 2, out, 1);
        expect_shape(&out[0], DT_F32, 2, d32);
        expect_f32(&out[0], want[k], 6);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    /* no rows: no segments */
    gn__tensor e[2] = {tens(DT_F32, 2, (int64_t[]){0, 2}, x), tens(DT_I32, 1, d0, ids)};
    gn_graph *g = graph1("SegmentSum", 2, "");
    run_ok(g, e, 2, out, 1);
    expect_shape(&out[0], DT_F32, 2, (int64_t[]){0, 2});
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* unsorted: empty segments get the identity (lowest / highest / 1 / 0); -1 is dropped */
    int32_t uids[3] = {2, -1, 2};
    int32_t ns = 3;
    gn__tensor u[3] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 1, d3, uids), tens(DT_I32, 0, NULL, &ns)};
    const char *uops[4] = {"UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax", "UnsortedSegmentMin"};
    const float uw[4][6] = {{0, 0, 0, 0, -4, 4},
                            {1, 1, 1, 1, -5, -12},
                            {-FLT_MAX, -FLT_MAX, -FLT_MAX, -FLT_MAX, 1, 6},
                            {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX, -5, -2}};
    for (int k = 0; k < 4; k++) {
        g = graph1(uops[k], 3, "");
        run_ok(g, u, 3, out, 1);
        expect_f32(&out[0], uw[k], 6);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    /* a huge num_segments with empty rows: an empty [huge, 0] result, no per-segment work */
    int64_t hn = INT64_MAX;
    gn__tensor hz[3] = {tens(DT_F32, 2, (int64_t[]){3, 0}, x), tens(DT_I32, 1, d3, uids), tens(DT_I64, 0, NULL, &hn)};
    g = graph1("UnsortedSegmentMax", 3, "");
    run_ok(g, hz, 3, out, 1);
    expect_shape(&out[0], DT_F32, 2, (int64_t[]){INT64_MAX, 0});
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* int32 sum wraps instead of overflowing */
    int32_t big[2] = {INT32_MAX, 1}, z[2] = {0, 0};
    int32_t one = 1;
    gn__tensor w[3] = {tens(DT_I32, 1, (int64_t[]){2}, big), tens(DT_I32, 1, (int64_t[]){2}, z),
                       tens(DT_I32, 0, NULL, &one)};
    g = graph1("UnsortedSegmentSum", 3, "");
    run_ok(g, w, 3, out, 1);
    expect_i32(&out[0], (int32_t[]){INT32_MIN}, 1);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

static void test_scatter_roll_unique(void **state)
{
    (void)state;
    /* TensorScatterUpdate: the later duplicate wins */
    float t[4] = {1, 2, 3, 4}, up[3] = {10, 20, 30};
    int32_t ix[3] = {1, 3, 1};
    gn__tensor in[3] = {tens(DT_F32, 1, (int64_t[]){4}, t), tens(DT_I32, 2, (int64_t[]){3, 1}, ix),
                        tens(DT_F32, 1, (int64_t[]){3}, up)};
    gn__tensor out[2];
    gn_graph *g = graph1("TensorScatterUpdate", 3, "");
    run_ok(g, in, 3, out, 1);
    expect_f32(&out[0], (float[]){1, 30, 3, 20}, 4);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1("TensorScatterAdd", 3, "");
    run_ok(g, in, 3, out, 1);
    expect_f32(&out[0], (float[]){1, 42, 3, 24}, 4);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* Roll a 2x3 by (1, -1) */
    int32_t r[6] = {0, 1, 2, 3, 4, 5}, sh[2] = {1, -1}, ax[2] = {0, 1};
    gn__tensor ri[3] = {tens(DT_I32, 2, (int64_t[]){2, 3}, r), tens(DT_I32, 1, (int64_t[]){2}, sh),
                        tens(DT_I32, 1, (int64_t[]){2}, ax)};
    g = graph1("Roll", 3, "");
    run_ok(g, ri, 3, out, 1);
    expect_i32(&out[0], (int32_t[]){4, 5, 3, 1, 2, 0}, 6);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* Unique of strings, first-occurrence order */
    gn__tstring s[5] = {{"b", 1}, {"a", 1}, {"b", 1}, {"", 0}, {"a", 1}};
    gn__tensor ui[1] = {tens(DT_STR, 1, (int64_t[]){5}, s)};
    g = graph1("Unique", 1, "");
    run_ok(g, ui, 1, out, 2);
    expect_shape(&out[0], DT_STR, 1, (int64_t[]){3});
    const gn__tstring *ys = out[0].data;
    assert_true(ys[0].len == 1 && ys[0].ptr[0] == 'b' && ys[1].len == 1 && ys[1].ptr[0] == 'a' && ys[2].len == 0);
    expect_i32(&out[1], (int32_t[]){0, 1, 0, 2, 1}, 5);
    gn_pt_krelease(out, 2);
    gn_graph_free(g);
    /* Unique floats: -0 equals 0, NaN is never equal to itself */
    float uf[5] = {0.0f, -0.0f, NAN, 1, NAN};
    gn__tensor ufi[1] = {tens(DT_F32, 1, (int64_t[]){5}, uf)};
    g = graph1("Unique", 1, "");
    run_ok(g, ufi, 1, out, 2);
    expect_shape(&out[0], DT_F32, 1, (int64_t[]){4});
    expect_i32(&out[1], (int32_t[]){0, 0, 1, 2, 3}, 5);
    gn_pt_krelease(out, 2);
    gn_graph_free(g);
}

static void test_bincount_l2_diag_bucketize(void **state)
{
    (void)state;
    gn__tensor out[1];
    /* DenseBincount with binary_output: 1 where present; values >= size ignored */
    int32_t arr[6] = {1, 1, 3, 0, 7, 1}, size = 4;
    float w[6] = {9, 9, 9, 9, 9, 9};
    gn__tensor in[3] = {tens(DT_I32, 2, (int64_t[]){2, 3}, arr), tens(DT_I32, 0, NULL, &size),
                        tens(DT_F32, 2, (int64_t[]){2, 3}, w)};
    gn_graph *g = graph1("DenseBincount", 3, "attr { key: 'binary_output' value { b: true } }");
    run_ok(g, in, 3, out, 1);
    expect_shape(&out[0], DT_F32, 2, (int64_t[]){2, 4});
    expect_f32(&out[0], (float[]){0, 1, 0, 1, 1, 1, 0, 0}, 8);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* Bincount with empty int32 weights counts */
    gn__tensor bi[3] = {tens(DT_I32, 1, (int64_t[]){6}, arr), tens(DT_I32, 0, NULL, &size),
                        tens(DT_I32, 1, (int64_t[]){0}, arr)};
    g = graph1("Bincount", 3, "");
    run_ok(g, bi, 3, out, 1);
    expect_i32(&out[0], (int32_t[]){1, 3, 0, 1}, 4);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* L2Loss(1, 2, 3) = 7 */
    float l[3] = {1, 2, 3};
    gn__tensor li[1] = {tens(DT_F32, 1, (int64_t[]){3}, l)};
    g = graph1("L2Loss", 1, "");
    run_ok(g, li, 1, out, 1);
    expect_shape(&out[0], DT_F32, 0, NULL);
    expect_f32(&out[0], (float[]){7}, 1);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* MatrixDiagV3 of [1,2] on the main diagonal of a 3x2 filled with 0 */
    float dg[2] = {1, 2}, pad = 0;
    int32_t k = 0, nr = 3, nc = -1;
    gn__tensor di[5] = {tens(DT_F32, 1, (int64_t[]){2}, dg), tens(DT_I32, 0, NULL, &k), tens(DT_I32, 0, NULL, &nr),
                        tens(DT_I32, 0, NULL, &nc), tens(DT_F32, 0, NULL, &pad)};
    g = graph1("MatrixDiagV3", 5, "");
    run_ok(g, di, 5, out, 1);
    expect_shape(&out[0], DT_F32, 2, (int64_t[]){3, 2});
    expect_f32(&out[0], (float[]){1, 0, 0, 2, 0, 0}, 6);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* MatrixDiagPartV3 k=(-1,1) of a 2x3, default RIGHT_LEFT, padding 9 */
    float m[6] = {1, 2, 3, 4, 5, 6}, p9 = 9;
    int32_t kk[2] = {-1, 1};
    gn__tensor pi[3] = {tens(DT_F32, 2, (int64_t[]){2, 3}, m), tens(DT_I32, 1, (int64_t[]){2}, kk),
                        tens(DT_F32, 0, NULL, &p9)};
    g = graph1("MatrixDiagPartV3", 3, "");
    run_ok(g, pi, 3, out, 1);
    expect_shape(&out[0], DT_F32, 2, (int64_t[]){3, 2});
    expect_f32(&out[0], (float[]){2, 6, 1, 5, 4, 9}, 6);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* Bucketize: a value equal to a boundary goes to the bucket above it */
    int32_t bx[5] = {-5, 0, 1, 2, 10};
    gn__tensor bxi[1] = {tens(DT_I32, 1, (int64_t[]){5}, bx)};
    g = graph1("Bucketize", 1, "attr { key: 'boundaries' value { list { f: 0 f: 2 f: 5 } } }");
    run_ok(g, bxi, 1, out, 1);
    expect_i32(&out[0], (int32_t[]){0, 1, 1, 2, 3}, 5);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

/* Strings and messages as TensorFlow 2.21 wrote them for the same tensors. */
static void test_format_assert_print(void **state)
{
    (void)state;
    gn__tensor out[1];
    float a[4] = {1.5f, 2.0f / 3.0f, 3, 4};
    gn__tensor fi[1] = {tens(DT_F32, 2, (int64_t[]){2, 2}, a)};
    gn_graph *g = graph1("StringFormat", 1,
                         "attr { key: 'template' value { s: '{}' } } "
                         "attr { key: 'placeholder' value { s: '{}' } }");
    run_ok(g, fi, 1, out, 1);
    expect_str(&out[0], "[[1.5 0.666666687]\n [3 4]]");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    int32_t r10[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    gn__tstring xs = {"x", 1};
    gn__tensor f2[2] = {tens(DT_I32, 1, (int64_t[]){10}, r10), tens(DT_STR, 0, NULL, &xs)};
    g = graph1("StringFormat", 2,
               "attr { key: 'template' value { s: 'a{}b{}' } } "
               "attr { key: 'placeholder' value { s: '{}' } } attr { key: 'summarize' value { i: 2 } }");
    run_ok(g, f2, 2, out, 1);
    expect_str(&out[0], "a[0 1 ... 8 9]b\"x\"");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    float r24[24];
    for (int i = 0; i < 24; i++) r24[i] = (float)i;
    gn__tensor f3[1] = {tens(DT_F32, 3, (int64_t[]){2, 3, 4}, r24)};
    g = graph1("StringFormat", 1, "attr { key: 'summarize' value { i: 1 } }");
    run_ok(g, f3, 1, out, 1);
    expect_str(&out[0], "[[[0 ... 3]\n  ...\n  [8 ... 11]]\n\n [[12 ... 15]\n  ...\n  [20 ... 23]]]");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    float sp[5] = {1e-7f, 1e20f, 0.1f, NAN, INFINITY};
    gn__tensor f4[1] = {tens(DT_F32, 1, (int64_t[]){5}, sp)};
    g = graph1("StringFormat", 1, "attr { key: 'summarize' value { i: -1 } }");
    run_ok(g, f4, 1, out, 1);
    expect_str(&out[0], "[1e-07 1e+20 0.1 nan inf]");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* Assert: the kernel's InvalidArgument message */
    bool no = false, yes = true;
    float f10[10];
    for (int i = 0; i < 10; i++) f10[i] = (float)i;
    gn__tstring hi = {"hi\n", 3};
    gn__tensor ai[3] = {tens(DT_BOOL, 0, NULL, &no), tens(DT_F32, 1, (int64_t[]){10}, f10), tens(DT_STR, 0, NULL, &hi)};
    expect_error("Assert", "attr { key: 'summarize' value { i: 2 } }", ai, 3, 0, GN_ERR_ARG,
                 "node 'n' (Assert): assertion failed: [0 1...] [hi\\n]");
    int32_t r12[12];
    for (int i = 0; i < 12; i++) r12[i] = i;
    bool tf[2] = {true, false};
    gn__tensor a2[3] = {tens(DT_BOOL, 0, NULL, &no), tens(DT_I32, 2, (int64_t[]){3, 4}, r12),
                        tens(DT_BOOL, 1, (int64_t[]){2}, tf)};
    expect_error("Assert", "attr { key: 'summarize' value { i: 5 } }", a2, 3, 0, GN_ERR_ARG,
                 "node 'n' (Assert): assertion failed: [[0 1 2 3][4...]...] [1 0]");
    int64_t r8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gn__tensor a3[2] = {tens(DT_BOOL, 0, NULL, &no), tens(DT_I64, 3, (int64_t[]){2, 2, 2}, r8)};
    expect_error("Assert", "", a3, 2, 0, GN_ERR_ARG, "node 'n' (Assert): assertion failed: [[[0 1][2...]]...]");
    /* true: nothing */
    ai[0] = tens(DT_BOOL, 0, NULL, &yes);
    g = graph1("Assert", 3, "");
    run_ok(g, ai, 3, out, 0);
    gn_graph_free(g);

    /* Print passes input 0 through (nothing is written); PrintV2 has no outputs */
    gn__tensor pi[2] = {tens(DT_F32, 1, (int64_t[]){4}, a), tens(DT_I32, 1, (int64_t[]){10}, r10)};
    g = graph1("Print", 2, "attr { key: 'message' value { s: 'm' } }");
    run_ok(g, pi, 2, out, 1);
    expect_f32(&out[0], a, 4);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    gn__tensor pv[1] = {tens(DT_STR, 0, NULL, &xs)};
    g = graph1("PrintV2", 1, "");
    run_ok(g, pv, 1, out, 0);
    gn_graph_free(g);
}

static void test_errors(void **state)
{
    (void)state;
    float x[8] = {0};
    int32_t i3[3] = {0, 2, 1}, i4[4] = {0, 3, 1, 3}, big[3] = {0, 0, 9}, neg[2] = {-1, 0};
    int32_t n4 = 4, nneg = -2;
    int64_t d3[1] = {3}, d32[2] = {3, 2};
    gn__tensor s1[2] = {tens(DT_F32, 2, (int64_t[]){4, 2}, x), tens(DT_I32, 1, (int64_t[]){4}, i4)};
    expect_error("SegmentSum", "", s1, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (SegmentSum): segment ids are not increasing: segment_ids[2] = 1 after 3");
    s1[1] = tens(DT_I32, 1, (int64_t[]){2}, neg);
    expect_error("SegmentMean", "", (gn__tensor[]){tens(DT_F32, 1, (int64_t[]){2}, x), s1[1]}, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (SegmentMean): Segment id -1 out of range [0, 1), possibly because 'segment_ids' input is "
                 "not sorted.");
    expect_error("SegmentMax", "", (gn__tensor[]){tens(DT_F32, 1, (int64_t[]){2}, x), tens(DT_I32, 1, d3, i3)}, 2, 1,
                 GN_ERR_GRAPH,
                 "node 'n' (SegmentMax): segment_ids should be the same size as dimension 0 of input: 3 vs 2");
    expect_error("SegmentMin", "", (gn__tensor[]){tens(DT_F32, 0, NULL, x), tens(DT_I32, 1, d3, i3)}, 2, 1,
                 GN_ERR_GRAPH, "node 'n' (SegmentMin): input must be at least rank 1");
    gn__tensor u1[3] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 1, d3, big), tens(DT_I32, 0, NULL, &n4)};
    expect_error("UnsortedSegmentSum", "", u1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (UnsortedSegmentSum): segment_ids[2] = 9 is out of range [0, 4)");
    u1[2] = tens(DT_I32, 0, NULL, &nneg);
    expect_error("UnsortedSegmentMax", "", u1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (UnsortedSegmentMax): Input num_segments == -2 must not be negative.");
    u1[1] = tens(DT_I32, 1, (int64_t[]){2}, i3);
    u1[2] = tens(DT_I32, 0, NULL, &n4);
    expect_error("UnsortedSegmentMin", "", u1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (UnsortedSegmentMin): data.shape = [3,2] does not start with segment_ids.shape = [2]");
    u1[1] = tens(DT_F32, 1, d3, x);
    expect_error("UnsortedSegmentProd", "", u1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (UnsortedSegmentProd): segment_ids must be int32 or int64, got float");

    /* scatter */
    int32_t ix[4] = {0, 1, 2, 5};
    gn__tensor t1[3] = {tens(DT_F32, 2, (int64_t[]){3, 2}, x), tens(DT_I32, 2, (int64_t[]){2, 2}, ix),
                        tens(DT_F32, 1, (int64_t[]){2}, x)};
    expect_error("TensorScatterUpdate", "", t1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterUpdate): indices[1] = [2, 5] does not index into shape [3,2]");
    expect_error("TensorScatterAdd", "", t1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterAdd): indices[1] = [2, 5] does not index into shape [3,2]");
    t1[2] = tens(DT_F32, 1, (int64_t[]){3}, x);
    expect_error("TensorScatterSub", "", t1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterSub): updates shape [3] must be indices.shape[:-1] + tensor.shape[2:] = [2]");
    t1[1] = tens(DT_I32, 2, (int64_t[]){1, 3}, ix);
    expect_error("TensorScatterMax", "", t1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterMax): Index innermost dimension length must be <= tensor rank; saw: 3 vs. 2");
    t1[1] = tens(DT_I32, 0, NULL, ix);
    expect_error("TensorScatterMin", "", t1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterMin): Indices shape must have rank at least one. Found: []");

    /* Roll, Bucketize, Unique */
    int32_t sh = 1, ax = 2;
    gn__tensor r1[3] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 0, NULL, &sh), tens(DT_I32, 0, NULL, &ax)};
    expect_error("Roll", "", r1, 3, 1, GN_ERR_GRAPH, "node 'n' (Roll): axis 2 is out of range for input of rank 2");
    gn__tensor b1[1] = {tens(DT_F32, 1, d3, x)};
    expect_error("Bucketize", "attr { key: 'boundaries' value { list { f: 1 f: 0 } } }", b1, 1, 1, GN_ERR_GRAPH,
                 "node 'n' (Bucketize): Expected sorted boundaries");
    expect_error("Unique", "", (gn__tensor[]){tens(DT_F32, 2, d32, x)}, 1, 2, GN_ERR_GRAPH,
                 "node 'n' (Unique): unique expects a 1D vector.");
    int64_t a3 = 3;
    expect_error("UniqueV2", "", (gn__tensor[]){tens(DT_F32, 2, d32, x), tens(DT_I64, 1, (int64_t[]){1}, &a3)}, 2, 2,
                 GN_ERR_GRAPH, "node 'n' (UniqueV2): axis has to be between [0, 2), got 3");

    /* Bincount */
    int32_t arr[3] = {1, -4, 0}, sz = 3;
    gn__tensor c1[3] = {tens(DT_I32, 1, d3, arr), tens(DT_I32, 0, NULL, &sz), tens(DT_F32, 1, (int64_t[]){0}, x)};
    expect_error("Bincount", "", c1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (Bincount): Input arr must be non-negative! arr[1] = -4");
    c1[1] = tens(DT_I32, 0, NULL, &nneg);
    expect_error("DenseBincount", "", c1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (DenseBincount): size (-2) must be non-negative");
    c1[1] = tens(DT_I32, 0, NULL, &sz);
    c1[2] = tens(DT_F32, 1, (int64_t[]){2}, x);
    expect_error("DenseBincount", "", c1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (DenseBincount): weights shape [2] must equal input shape [3] (or weights be empty)");

    /* L2Loss, diag */
    expect_error("L2Loss", "", (gn__tensor[]){tens(DT_I32, 1, d3, arr)}, 1, 1, GN_ERR_UNSUPPORTED,
                 "node 'n' (L2Loss): input of dtype int32");
    int32_t k2[2] = {1, -1}, nr = 1, nc = -1;
    float pad = 0;
    gn__tensor m1[5] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 1, (int64_t[]){2}, k2), tens(DT_I32, 0, NULL, &nr),
                        tens(DT_I32, 0, NULL, &nc), tens(DT_F32, 0, NULL, &pad)};
    expect_error("MatrixDiagV3", "", m1, 5, 1, GN_ERR_GRAPH,
                 "node 'n' (MatrixDiagV3): lower_diag_index must not be larger than upper_diag_index: 1 > -1");
    int32_t k0 = 0;
    m1[1] = tens(DT_I32, 0, NULL, &k0);
    m1[0] = tens(DT_F32, 1, (int64_t[]){3}, x);
    expect_error("MatrixDiagV3", "", m1, 5, 1, GN_ERR_GRAPH,
                 "node 'n' (MatrixDiagV3): The number of rows is too small: 1 < 3");
    m1[2] = tens(DT_I32, 0, NULL, &nc);
    expect_error(
        "MatrixDiagV3", "attr { key: 'align' value { s: 'UP' } }", m1, 5, 1, GN_ERR_GRAPH,
        "node 'n' (MatrixDiagV3): attr 'align' is 'UP'; expected LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT or RIGHT_RIGHT");
    int32_t k5 = 5;
    gn__tensor p1[3] = {tens(DT_F32, 2, d32, x), tens(DT_I32, 0, NULL, &k5), tens(DT_F32, 0, NULL, &pad)};
    expect_error("MatrixDiagPartV3", "", p1, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (MatrixDiagPartV3): lower_diag_index is out of bound: 5 for a 3x2 matrix");

    /* logging ops */
    bool cond[2] = {true, false};
    expect_error("Assert", "", (gn__tensor[]){tens(DT_BOOL, 1, (int64_t[]){2}, cond)}, 1, 0, GN_ERR_GRAPH,
                 "node 'n' (Assert): condition should be a bool scalar, got bool [2]");
    expect_error("PrintV2", "", (gn__tensor[]){tens(DT_F32, 0, NULL, x)}, 1, 0, GN_ERR_GRAPH,
                 "node 'n' (PrintV2): input must be a string scalar, got float of rank 0");
    expect_error("StringFormat", "attr { key: 'template' value { s: '%s and %s' } }",
                 (gn__tensor[]){tens(DT_F32, 0, NULL, x)}, 1, 1, GN_ERR_GRAPH,
                 "node 'n' (StringFormat): num placeholders in template and num inputs must match: 2 vs. 1");
}

/* float16 / float64 / int64 paths and TensorScatter's bad_indices_policy. */
static void test_dtypes_and_policy(void **state)
{
    (void)state;
    gn__tensor out[1];
    double t[3] = {1, 2, 3}, up[3] = {1, 1, 1};
    int32_t ix[3] = {0, 5, 2};
    gn__tensor si[3] = {tens(DT_F64, 1, (int64_t[]){3}, t), tens(DT_I32, 2, (int64_t[]){3, 1}, ix),
                        tens(DT_F64, 1, (int64_t[]){3}, up)};
    gn_graph *g = graph1("TensorScatterAdd", 3, "attr { key: 'bad_indices_policy' value { s: 'IGNORE' } }");
    run_ok(g, si, 3, out, 1);
    const double want_d[3] = {2, 2, 4};
    assert_memory_equal(out[0].data, want_d, sizeof want_d);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    expect_error("TensorScatterAdd", "attr { key: 'bad_indices_policy' value { s: 'ERROR' } }", si, 3, 1, GN_ERR_GRAPH,
                 "node 'n' (TensorScatterAdd): indices[1] = [5] does not index into shape [3]");

    gn__f16 h[3] = {(gn__f16)1.0f, (gn__f16)2.5f, (gn__f16)3.0f};
    int64_t hid[3] = {0, 0, 1}, n2 = 2;
    gn__tensor hi[3] = {tens(DT_F16, 1, (int64_t[]){3}, h), tens(DT_I64, 1, (int64_t[]){3}, hid),
                        tens(DT_I64, 0, NULL, &n2)};
    g = graph1("UnsortedSegmentSum", 3, "");
    run_ok(g, hi, 3, out, 1);
    assert_int_equal(out[0].dtype, DT_F16);
    assert_true((float)((gn__f16 *)out[0].data)[0] == 3.5f && (float)((gn__f16 *)out[0].data)[1] == 3.0f);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    int64_t v[3] = {1, 2, 4}, z[3] = {0, 0, 0};
    gn__tensor mi[2] = {tens(DT_I64, 1, (int64_t[]){3}, v), tens(DT_I64, 1, (int64_t[]){3}, z)};
    g = graph1("SegmentMean", 2, "");
    run_ok(g, mi, 2, out, 1);
    assert_int_equal(out[0].dtype, DT_I64);
    assert_int_equal(((int64_t *)out[0].data)[0], 2); /* 7 / 3, integer division */
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    double l[2] = {3, 4};
    gn__tensor li[1] = {tens(DT_F64, 1, (int64_t[]){2}, l)};
    g = graph1("L2Loss", 1, "");
    run_ok(g, li, 1, out, 1);
    assert_true(*(double *)out[0].data == 12.5);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* TensorFlow: '[0 0.333251953 0.666503906 1 1.33300781 1.66699219]' and '[0.1]' */
    gn__f16 h6[6];
    for (int i = 0; i < 6; i++) h6[i] = (gn__f16)((double)i / 3.0);
    double d01 = 0.1;
    gn__tensor fi[2] = {tens(DT_F16, 1, (int64_t[]){6}, h6), tens(DT_F64, 1, (int64_t[]){1}, &d01)};
    g = graph1("StringFormat", 2,
               "attr { key: 'template' value { s: '%s|%s' } } attr { key: 'summarize' value { i: 3 } }");
    run_ok(g, fi, 2, out, 1);
    expect_str(&out[0], "[0 0.333251953 0.666503906 1 1.33300781 1.66699219]|[0.1]");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

/* A false Assert that a fetched node depends on fails the session run with its message. */
static void test_assert_in_session(void **state)
{
    (void)state;
    gn_graph *g =
        gn_pt_kload("node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' value { "
             "tensor {"
             " dtype: DT_BOOL tensor_shape { } bool_val: false } } } }\n"
             "node { name: 'd' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
             "tensor {"
             " dtype: DT_INT32 tensor_shape { dim { size: 5 } } int_val: [1, 2, 3, 4, 5] } } } }\n"
             "node { name: 'a' op: 'Assert' input: 'c' input: 'd' attr { key: 'T' value { list { type: DT_INT32 } } }"
             " attr { key: 'summarize' value { i: 2 } } }\n"
             "node { name: 'y' op: 'Identity' input: 'd' input: '^a' attr { key: 'T' value { type: DT_INT32 } } }\n",
             1);
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    const char *fetch[1] = {"y"};
    gn_tensor out[1];
    memset(out, 0, sizeof out);
    assert_int_not_equal(gn_session_run(s, NULL, NULL, 0, fetch, out, 1), GN_OK);
    const char *m = gn_session_errmsg(s);
    if (!strstr(m, "node 'a' (Assert): assertion failed: [1 2...]")) fail_msg("message: %s", m);
    gn_session_free(s);
    gn_graph_free(g);
}

/* A graph whose misc ops read only constants runs through a session, and the
 * default optimizer folds it to Consts holding the same values. */
static const char *E2E =
    "node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor {"
    " dtype: DT_FLOAT tensor_shape { dim { size: 4 } dim { size: 2 } } float_val: [1, 2, 3, 4, 5, 6, 7, 8] } } } }\n"
    "node { name: 'ids' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: [2, 0, 2, 1] } } } }\n"
    "node { name: 'ns' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }\n"
    "node { name: 'sh' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor {"
    " dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: 'seg' op: 'UnsortedSegmentSum' input: 'x' input: 'ids' input: 'ns'"
    " attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } }"
    " attr { key: 'Tnumsegments' value { type: DT_INT32 } } }\n"
    "node { name: 'roll' op: 'Roll' input: 'seg' input: 'sh' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } }"
    " attr { key: 'Tshift' value { type: DT_INT32 } } attr { key: 'Taxis' value { type: DT_INT32 } } }\n"
    "node { name: 'l2' op: 'L2Loss' input: 'roll' attr { key: 'T' value { type: DT_FLOAT } } }\n";

static void run_fetch(const gn_graph *g, const char *const *fetch, gn_tensor *out, size_t n)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, NULL, NULL, 0, fetch, out, n) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void test_session_and_constfold(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kload(E2E, 1);
    const char *fetch[2] = {"roll", "l2"};
    gn_tensor before[2], after[2];
    run_fetch(g, fetch, before, 2);
    /* seg = [[3,4],[7,8],[6,8]] (rows 1 / 3 / 0+2), rolled by 1 row; l2 = 238 / 2 */
    const float want[6] = {6, 8, 3, 4, 7, 8};
    assert_int_equal(before[0].rank, 2);
    assert_int_equal(before[0].dims[0], 3);
    assert_memory_equal(before[0].data, want, sizeof want);
    assert_true(*(const float *)before[1].data == 119.0f);

    gn_options o;
    gn_options_init(&o);
    char err[256];
    assert_int_equal(gn_options_parse(&o, "{'min_graph_nodes': -1}", err, sizeof err), GN_OK);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fetch;
    p.n_fetches = 2;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    gn_report_free(r);
    /* both fetches are now constants */
    for (int k = 0; k < 2; k++) {
        gn_id id = gn__graph_find(g, fetch[k]);
        assert_int_not_equal(id, GN_NONE);
        if (strcmp(gn__node_op(g, id), "Const"))
            fail_msg("%s is %s after optimize, not folded", fetch[k], gn__node_op(g, id));
    }
    run_fetch(g, fetch, after, 2);
    for (int k = 0; k < 2; k++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&after[k], &before[k], 0, &cr), GN_OK);
        if (!cr.match || cr.n_diff) fail_msg("%s differs after folding: %s", fetch[k], cr.why);
        gn_tensor_free(&before[k]);
        gn_tensor_free(&after[k]);
    }
    gn_graph_free(g);
}

/* The op list (src/opdef/ops.def) names these kernels; the whole list is
 * checked in op_list_test.c. */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("UnsortedSegmentSum"), gn__misc_k_unsorted_segment_sum);
    assert_ptr_equal(gn__kernel_for("TensorScatterUpdate"), gn__misc_k_tensor_scatter_update);
    assert_null(gn__kernel_for("LogicalXor"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_scatter_roll_unique),
        cmocka_unit_test(test_bincount_l2_diag_bucketize),
        cmocka_unit_test(test_format_assert_print),
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_session_and_constfold),
        cmocka_unit_test(test_dtypes_and_policy),
        cmocka_unit_test(test_assert_in_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
