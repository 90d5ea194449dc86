/* CPU kernels of src/ops/kernels/image.c: NonMaxSuppressionV3/V4/V5,
 * CombinedNonMaxSuppression, CropAndResize, ResizeBicubic, ResizeArea.
 *
 * Each kernel test builds a one-node graph from pbtxt (for the attrs) and
 * calls the kernel through gn__kernel_for. Small cases are worked by hand;
 * the rest are compared with TensorFlow's own outputs, made by
 * tools/make_image_goldens.py into tests/data/image/. Tolerances:
 *   NMS selected indices and valid_outputs: exact
 *   NMS selected_scores: float32 within 1e-6 * (1 + |ref|); float16 exact
 *   CropAndResize, ResizeBicubic, ResizeArea (float32 out): within
 *     1e-5 * (1 + |ref|) (the same arithmetic; the bound leaves room for a
 *     compiler's different contraction of a * b + c)
 *   CombinedNonMaxSuppression: every output exact (boxes, scores and classes
 *     are copies of inputs; the order of equal scores is TensorFlow's)
 *   hand-worked cases: exact, or within 1e-6 where a value is a formula
 * Then a session runs a graph of all six ops, and gn_optimize with the
 * default options folds the all-Const graph to the same values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "ops/op_fns.h"
#include "testutil.h"
#include "passtest.h"

#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_U8 TENSORFLOW__DATA_TYPE__DT_UINT8


static gn_graph *graph1(const char *op, int n_in, const char *const *dts, const char *attrs)
{
    return gn_pt_kgraph(op, n_in, dts, attrs, 1);
}

static const char *const NMS3_DT[5] = {"DT_FLOAT", "DT_FLOAT", "DT_INT32", "DT_FLOAT", "DT_FLOAT"};
static const char *const NMS5_DT[6] = {"DT_FLOAT", "DT_FLOAT", "DT_INT32", "DT_FLOAT", "DT_FLOAT", "DT_FLOAT"};
static const char *const NMS5H_DT[6] = {"DT_HALF", "DT_HALF", "DT_INT32", "DT_HALF", "DT_HALF", "DT_HALF"};
static const char *const CROP_DT[4] = {"DT_FLOAT", "DT_FLOAT", "DT_INT32", "DT_INT32"};
static const char *const RS_DT[2] = {"DT_FLOAT", "DT_INT32"};


static gn__tensor tens(int32_t dt, int rank, const int64_t *dims, const void *data)
{
    return gn_pt_ktensor(dt, rank, dims, data);
}

static gn__tensor scalar_i(const int32_t *v)
{
    return tens(DT_I32, 0, NULL, v);
}

static gn__tensor scalar_f(const float *v)
{
    return tens(DT_F32, 0, NULL, v);
}


static void run_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out)
{
    gn_pt_krun_ok(g, in, n_in, out, n_out, GN__K_REFERENCE);
}


static void expect_error(gn_graph *g, const gn__tensor *in, uint32_t n_in, uint32_t n_out, gn_status code,
                         const char *msg)
{
    gn_pt_kexpect_error(g, in, n_in, n_out, code, msg);
    gn_graph_free(g);
}

/* ---- goldens ------------------------------------------------------------------------- */
typedef struct {
    gn_tensor t;
    gn__tensor k;   /* borrowed view for kernels */
} golden;

static void gold(const char *name, golden *gd)
{
    char rel[128], path[1024], err[256];
    snprintf(rel, sizeof rel, "image/%s.npy", name);
    gn_test_data(rel, path, sizeof path);
    if (gn_npy_read(path, &gd->t, err, sizeof err) != GN_OK) fail_msg("%s", err);
    memset(&gd->k, 0, sizeof gd->k);
    gd->k.dtype = gd->t.dtype;
    gd->k.rank = gd->t.rank;
    for (int i = 0; i < gd->t.rank; i++) gd->k.dims[i] = gd->t.dims[i];
    gd->k.data = gd->t.data;
    gd->k.nbytes = gd->t.nbytes;
}

static void expect_shape(const gn__tensor *got, const gn_tensor *want, const char *what)
{
    bool same = got->rank == want->rank && got->dtype == want->dtype;
    for (int i = 0; same && i < got->rank; i++) same = got->dims[i] == want->dims[i];
    if (!same) fail_msg("%s: dtype/shape differs from TensorFlow's", what);
}

static void expect_ints(const gn__tensor *got, const char *name)
{
    golden w;
    gold(name, &w);
    expect_shape(got, &w.t, name);
    const int32_t *a = got->data, *b = w.t.data;
    for (int64_t i = 0; i < gn__tensor_numel(got); i++)
        if (a[i] != b[i]) fail_msg("%s: element %lld is %d, TensorFlow gives %d", name, (long long)i, a[i], b[i]);
    gn_tensor_free(&w.t);
}

static float elt(const void *p, int32_t dt, int64_t i)
{
    return dt == DT_F16 ? (float)((const gn__f16 *)p)[i] : ((const float *)p)[i];
}

static void expect_floats(const gn__tensor *got, const char *name, double tol)
{
    golden w;
    gold(name, &w);
    expect_shape(got, &w.t, name);
    double worst = 0;
    for (int64_t i = 0; i < gn__tensor_numel(got); i++) {
        double a = elt(got->data, got->dtype, i), b = elt(w.t.data, w.t.dtype, i);
        double e = fabs(a - b);
        if (e > worst) worst = e;
        if (!(e <= tol * (1.0 + fabs(b))))
            fail_msg("%s: element %lld is %.9g, TensorFlow gives %.9g", name, (long long)i, a, b);
    }
    print_message("%-28s max |err| %.3g\n", name, worst);
    gn_tensor_free(&w.t);
}

/* ---- table -------------------------------------------------------------------------- */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("CropAndResize"), gn__image_k_crop_and_resize);
    const char *want[] = {"NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
                          "CropAndResize",       "ResizeBicubic",       "ResizeArea",
                          "CombinedNonMaxSuppression"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_non_null(gn__kernel_for(want[i]));
}

/* ---- NMS by hand ------------------------------------------------------------------------ */
/* 0: unit box .9; 1, 2: shifted by +-0.1 in x (IoU with 0 = 0.9/1.1), .75 and .6;
 * 3: far away, .95; 4: box 0 given by its other corners, .5; 5: far, .3;
 * 6: far, .9 (ties with 0: the lower index goes first). */
static const float HB[7][4] = {{0, 0, 1, 1},       {0, 0.1f, 1, 1.1f},   {0, -0.1f, 1, 0.9f}, {0, 10, 1, 11},
                               {1, 1, 0, 0},       {0, 100, 1, 101},     {0, 200, 1, 201}};
static const float HS[7] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.9f};

static void nms_hand(const char *op, int32_t max, float iou, float sthr, bool pad, const int32_t *want, int64_t n_want,
                     int32_t valid)
{
    char attrs[256];
    snprintf(attrs, sizeof attrs, "%s", pad ? "attr { key: 'pad_to_max_output_size' value { b: true } }" : "");
    bool v3 = !strcmp(op, "NonMaxSuppressionV3");
    gn_graph *g = graph1(op, 5, NMS3_DT, attrs);
    int64_t db[2] = {7, 4}, ds[1] = {7};
    gn__tensor in[5] = {tens(DT_F32, 2, db, HB), tens(DT_F32, 1, ds, HS), scalar_i(&max), scalar_f(&iou),
                        scalar_f(&sthr)};
    gn__tensor out[2];
    run_ok(g, in, 5, out, v3 ? 1 : 2);
    assert_int_equal(out[0].dtype, DT_I32);
    assert_int_equal(out[0].rank, 1);
    assert_int_equal(out[0].dims[0], n_want);
    for (int64_t i = 0; i < n_want; i++)
        if (((int32_t *)out[0].data)[i] != want[i])
            fail_msg("%s: selected[%lld] is %d, want %d", op, (long long)i, ((int32_t *)out[0].data)[i], want[i]);
    if (!v3) {
        assert_int_equal(out[1].dtype, DT_I32);
        assert_int_equal(out[1].rank, 0);
        assert_int_equal(*(int32_t *)out[1].data, valid);
    }
    gn_pt_krelease(out, v3 ? 1 : 2);
    gn_graph_free(g);
}

static void test_nms_hand(void **state)
{
    (void)state;
    const int32_t a[] = {3, 0, 6, 5};
    nms_hand("NonMaxSuppressionV3", 10, 0.5f, -INFINITY, false, a, 4, 0);
    nms_hand("NonMaxSuppressionV3", 3, 0.5f, -INFINITY, false, a, 3, 0);      /* max_output_size */
    nms_hand("NonMaxSuppressionV3", 10, 0.5f, 0.4f, false, a, 3, 0);          /* score_threshold drops 5 */
    nms_hand("NonMaxSuppressionV3", 0, 0.5f, 0.0f, false, a, 0, 0);
    const int32_t b[] = {3, 0, 6, 1, 2, 5};                                   /* 0.818 <= 0.9 keeps 1 and 2 */
    nms_hand("NonMaxSuppressionV3", 10, 0.9f, 0.0f, false, b, 6, 0);
    const int32_t c[] = {3, 0, 6, 5, 0, 0};
    nms_hand("NonMaxSuppressionV4", 6, 0.5f, 0.0f, true, c, 6, 4);
    nms_hand("NonMaxSuppressionV4", 6, 0.5f, 0.0f, false, c, 4, 4);
    /* iou_threshold 0: any overlap suppresses; the zero-area box never does */
    const float zb[3][4] = {{0, 0, 1, 1}, {0.5f, 0.5f, 0.5f, 0.9f}, {0.9f, 0.9f, 2, 2}};
    const float zs[3] = {0.9f, 0.8f, 0.7f};
    gn_graph *g = graph1("NonMaxSuppressionV3", 5, NMS3_DT, "");
    int64_t db[2] = {3, 4}, ds[1] = {3};
    int32_t max = 5;
    float iou = 0, sthr = -INFINITY;
    gn__tensor in[5] = {tens(DT_F32, 2, db, zb), tens(DT_F32, 1, ds, zs), scalar_i(&max), scalar_f(&iou),
                        scalar_f(&sthr)};
    gn__tensor out[1];
    run_ok(g, in, 5, out, 1);
    assert_int_equal(out[0].dims[0], 2);
    assert_int_equal(((int32_t *)out[0].data)[0], 0);
    assert_int_equal(((int32_t *)out[0].data)[1], 1);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* a NaN score is never above the threshold: box 0 is never selected (and suppresses nothing) */
    const float nsc[3] = {NAN, 0.8f, 0.7f};
    g = graph1("NonMaxSuppressionV3", 5, NMS3_DT, "");
    in[1] = tens(DT_F32, 1, ds, nsc);
    run_ok(g, in, 5, out, 1);
    assert_int_equal(out[0].dims[0], 2);
    assert_int_equal(((int32_t *)out[0].data)[0], 1);
    assert_int_equal(((int32_t *)out[0].data)[1], 2);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    /* soft-NMS: B overlaps A with IoU 1/3; sigma 0.5 scales B by exp(-(1/3)^2 / (2 * 0.5)) */
    const float sb[2][4] = {{0, 0, 1, 1}, {0, 0.5f, 1, 1.5f}};
    const float ss[2] = {0.9f, 0.8f};
    g = graph1("NonMaxSuppressionV5", 6, NMS5_DT, "");
    int64_t db2[2] = {2, 4}, ds2[1] = {2};
    float one = 1.0f, zero = 0.0f, sigma = 0.5f;
    gn__tensor in5[6] = {tens(DT_F32, 2, db2, sb), tens(DT_F32, 1, ds2, ss), scalar_i(&max),
                         scalar_f(&one),           scalar_f(&zero),          scalar_f(&sigma)};
    gn__tensor o5[3];
    run_ok(g, in5, 6, o5, 3);
    assert_int_equal(o5[0].dims[0], 2);
    assert_int_equal(o5[1].dtype, DT_F32);
    assert_int_equal(((int32_t *)o5[0].data)[0], 0);
    assert_int_equal(((int32_t *)o5[0].data)[1], 1);
    assert_true(((float *)o5[1].data)[0] == 0.9f);
    double want = 0.8 * exp(-1.0 / 9.0);
    assert_true(fabs(((float *)o5[1].data)[1] - want) <= 1e-6);
    assert_int_equal(*(int32_t *)o5[2].data, 2);
    gn_pt_krelease(o5, 3);
    /* a score threshold above B's decayed score drops it */
    float sthr2 = 0.75f;
    in5[4] = scalar_f(&sthr2);
    run_ok(g, in5, 6, o5, 3);
    assert_int_equal(o5[0].dims[0], 1);
    assert_int_equal(*(int32_t *)o5[2].data, 1);
    gn_pt_krelease(o5, 3);
    gn_graph_free(g);
}

/* ---- NMS against TensorFlow ----------------------------------------------------------------- */
static void test_nms_golden(void **state)
{
    (void)state;
    golden bx, sc;
    gold("nms_boxes", &bx);
    gold("nms_scores", &sc);
    int32_t max;
    float iou, sthr, sigma;
    gn__tensor in[6] = {bx.k, sc.k, scalar_i(&max), scalar_f(&iou), scalar_f(&sthr), scalar_f(&sigma)};
    gn__tensor out[3];

    gn_graph *g = graph1("NonMaxSuppressionV3", 5, NMS3_DT, "");
    max = 12, iou = 0.5f, sthr = 0.1f;
    run_ok(g, in, 5, out, 1);
    expect_ints(&out[0], "nms_v3");
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    g = graph1("NonMaxSuppressionV4", 5, NMS3_DT, "attr { key: 'pad_to_max_output_size' value { b: true } }");
    max = 30, iou = 0.3f, sthr = -INFINITY;
    run_ok(g, in, 5, out, 2);
    expect_ints(&out[0], "nms_v4_idx");
    expect_ints(&out[1], "nms_v4_valid");
    gn_pt_krelease(out, 2);
    gn_graph_free(g);

    g = graph1("NonMaxSuppressionV5", 6, NMS5_DT, "");
    max = 20, iou = 1.0f, sthr = 0.05f, sigma = 0.5f;
    run_ok(g, in, 6, out, 3);
    expect_ints(&out[0], "nms_v5_idx");
    expect_floats(&out[1], "nms_v5_scores", 1e-6);
    assert_int_equal(*(int32_t *)out[2].data, 20);
    gn_pt_krelease(out, 3);
    gn_graph_free(g);

    /* float16: boxes, scores, thresholds and the soft-NMS arithmetic in half */
    int64_t n = bx.k.dims[0];
    gn__f16 *bh = malloc((size_t)n * 4 * sizeof *bh), *shh = malloc((size_t)n * sizeof *shh);
    assert_true(bh && shh);
    for (int64_t i = 0; i < n * 4; i++) bh[i] = (gn__f16)((float *)bx.k.data)[i];
    for (int64_t i = 0; i < n; i++) shh[i] = (gn__f16)((float *)sc.k.data)[i];
    gn__f16 hiou = (gn__f16)0.6f, hsthr = (gn__f16)0.02f, hsig = (gn__f16)0.3f;
    int32_t hmax = 25;
    int64_t db[2] = {n, 4}, ds[1] = {n};
    gn__tensor inh[6] = {tens(DT_F16, 2, db, bh),    tens(DT_F16, 1, ds, shh),   scalar_i(&hmax),
                         tens(DT_F16, 0, NULL, &hiou), tens(DT_F16, 0, NULL, &hsthr), tens(DT_F16, 0, NULL, &hsig)};
    g = graph1("NonMaxSuppressionV5", 6, NMS5H_DT,
               "attr { key: 'T' value { type: DT_HALF } } attr { key: 'pad_to_max_output_size' value { b: true } }");
    run_ok(g, inh, 6, out, 3);
    expect_ints(&out[0], "nms_v5h_idx");
    expect_floats(&out[1], "nms_v5h_scores", 0);
    expect_ints(&out[2], "nms_v5h_valid");
    gn_pt_krelease(out, 3);
    gn_graph_free(g);
    free(bh);
    free(shh);
    gn_tensor_free(&bx.t);
    gn_tensor_free(&sc.t);
}

/* ---- CombinedNonMaxSuppression ------------------------------------------------------------ */
static const char *const CNMS_DT[6] = {"DT_FLOAT", "DT_FLOAT", "DT_INT32", "DT_INT32", "DT_FLOAT", "DT_FLOAT"};

static gn_graph *cnms_graph(bool pad, bool clip)
{
    char attrs[256];
    snprintf(attrs, sizeof attrs,
             "attr { key: 'pad_per_class' value { b: %s } } attr { key: 'clip_boxes' value { b: %s } }",
             pad ? "true" : "false", clip ? "true" : "false");
    return graph1("CombinedNonMaxSuppression", 6, CNMS_DT, attrs);
}

/* boxes 0 = unit square, 1 = [0,0,0.9,1] (IoU 0.9 with 0), 2 = [0.5,0.5,1.5,1.5] (IoU 1/7 with 0,
 * 0.2/1.7 with 1), shared by both classes (q = 1) */
static const float CB[3][4] = {{0, 0, 1, 1}, {0, 0, 0.9f, 1}, {0.5f, 0.5f, 1.5f, 1.5f}};
/* [box][class]: class 0 .9 .8 .3; class 1 .2 .7 .7 */
static const float CS[3][2] = {{0.9f, 0.2f}, {0.8f, 0.7f}, {0.3f, 0.7f}};

static void cnms_hand(bool pad, bool clip, int32_t mts, int64_t want_n, const float (*wb)[4], const float *wsc,
                      const float *wcl, int32_t want_valid)
{
    gn_graph *g = cnms_graph(pad, clip);
    int64_t db[4] = {1, 3, 1, 4}, ds[3] = {1, 3, 2};
    int32_t mpc = 2;
    float iou = 0.5f, sthr = 0.25f;
    gn__tensor in[6] = {tens(DT_F32, 4, db, CB), tens(DT_F32, 3, ds, CS), scalar_i(&mpc),
                        scalar_i(&mts),          scalar_f(&iou),          scalar_f(&sthr)};
    gn__tensor out[4];
    run_ok(g, in, 6, out, 4);
    assert_int_equal(out[0].rank, 3);
    assert_int_equal(out[0].dims[0], 1);
    assert_int_equal(out[0].dims[1], want_n);
    assert_int_equal(out[0].dims[2], 4);
    for (int k = 1; k < 3; k++) {
        assert_int_equal(out[k].dtype, DT_F32);
        assert_int_equal(out[k].rank, 2);
        assert_int_equal(out[k].dims[1], want_n);
    }
    assert_int_equal(out[3].dtype, DT_I32);
    assert_int_equal(out[3].rank, 1);
    assert_int_equal(out[3].dims[0], 1);
    assert_int_equal(*(int32_t *)out[3].data, want_valid);
    const float *ob = out[0].data, *os = out[1].data, *oc = out[2].data;
    for (int64_t i = 0; i < want_n; i++) {
        for (int d = 0; d < 4; d++)
            if (ob[i * 4 + d] != wb[i][d])
                fail_msg("box %lld[%d] is %g, want %g", (long long)i, d, (double)ob[i * 4 + d], (double)wb[i][d]);
        if (os[i] != wsc[i] || oc[i] != wcl[i])
            fail_msg("detection %lld is score %g class %g, want %g %g", (long long)i, (double)os[i], (double)oc[i],
                     (double)wsc[i], (double)wcl[i]);
    }
    gn_pt_krelease(out, 4);
    gn_graph_free(g);
}

static void test_cnms_hand(void **state)
{
    (void)state;
    /* class 0: 0 (.9) kept, 1 suppressed by 0, 2 (.3) kept; class 1: 1 and 2 tie at .7, the queue
     * gives 1 first, 2 is kept (IoU 0.12). Merged by score: (0,.9,c0) (1,.7,c1) (2,.7,c1) (2,.3,c0) */
    const float wb[5][4] = {{0, 0, 1, 1}, {0, 0, 0.9f, 1}, {0.5f, 0.5f, 1, 1}, {0.5f, 0.5f, 1, 1}, {0, 0, 0, 0}};
    const float ws[5] = {0.9f, 0.7f, 0.7f, 0.3f, 0}, wc[5] = {0, 1, 1, 0, 0};
    cnms_hand(false, true, 5, 5, wb, ws, wc, 4);   /* padded to max_total_size with zeros */
    cnms_hand(false, true, 3, 3, wb, ws, wc, 3);   /* max_total_size cuts */
    /* pad_per_class: min(max_total_size, 2 per class * 2 classes) = 4; no clipping */
    const float wb2[4][4] = {{0, 0, 1, 1}, {0, 0, 0.9f, 1}, {0.5f, 0.5f, 1.5f, 1.5f}, {0.5f, 0.5f, 1.5f, 1.5f}};
    cnms_hand(true, false, 50, 4, wb2, ws, wc, 4);
    cnms_hand(true, false, 2, 2, wb2, ws, wc, 2);
}

/* (name, batch, num_boxes, q, classes, max_per_class, max_total, iou, score_threshold, pad, clip), as in
 * tools/make_image_goldens.py */
typedef struct {
    const char *name;
    int64_t batch, n, q, k;
    int32_t mpc, mts;
    float iou, sthr;
    bool pad, clip;
} cnms_case;

static void test_cnms_golden(void **state)
{
    (void)state;
    const cnms_case cases[] = {
        {"q1", 3, 40, 1, 5, 6, 20, 0.5f, 0.2f, false, true},
        {"qc", 2, 30, 4, 4, 3, 100, 0.4f, 0.1f, true, false},
        {"cut", 2, 40, 1, 6, 8, 10, 0.6f, 0.55f, true, true},
        {"wide", 1, 50, 7, 7, 20, 64, 0.7f, -INFINITY, false, false},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const cnms_case *cc = &cases[ci];
        char nm[64];
        golden bx, sc;
        snprintf(nm, sizeof nm, "cnms_%s_boxes", cc->name);
        gold(nm, &bx);
        snprintf(nm, sizeof nm, "cnms_%s_scores", cc->name);
        gold(nm, &sc);
        assert_int_equal(bx.k.dims[0], cc->batch);
        assert_int_equal(bx.k.dims[2], cc->q);
        assert_int_equal(sc.k.dims[2], cc->k);
        gn_graph *g = cnms_graph(cc->pad, cc->clip);
        gn__tensor in[6] = {bx.k, sc.k, scalar_i(&cc->mpc), scalar_i(&cc->mts), scalar_f(&cc->iou),
                            scalar_f(&cc->sthr)};
        gn__tensor out[4];
        run_ok(g, in, 6, out, 4);
        snprintf(nm, sizeof nm, "cnms_%s_nboxes", cc->name);
        expect_floats(&out[0], nm, 0);
        snprintf(nm, sizeof nm, "cnms_%s_nscores", cc->name);
        expect_floats(&out[1], nm, 0);
        snprintf(nm, sizeof nm, "cnms_%s_nclasses", cc->name);
        expect_floats(&out[2], nm, 0);
        snprintf(nm, sizeof nm, "cnms_%s_valid", cc->name);
        expect_ints(&out[3], nm);
        gn_pt_krelease(out, 4);
        gn_graph_free(g);
        gn_tensor_free(&bx.t);
        gn_tensor_free(&sc.t);
    }
}

static void test_cnms_errors(void **state)
{
    (void)state;
    int64_t db[4] = {1, 3, 1, 4}, ds[3] = {1, 3, 2}, dq[4] = {1, 3, 3, 4}, d3[3] = {1, 3, 4}, d2b[3] = {2, 3, 2};
    int32_t mpc = 2, mts = 5, zero = 0;
    float iou = 0.5f, bad_iou = -0.1f, sthr = 0.0f;
    float big[2 * 3 * 3 * 4] = {0};
    gn__tensor in[6] = {tens(DT_F32, 4, db, CB), tens(DT_F32, 3, ds, CS), scalar_i(&mpc),
                        scalar_i(&zero),         scalar_f(&iou),          scalar_f(&sthr)};
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): max_total_size must be > 0, got 0");
    in[3] = scalar_i(&mts);
    in[2] = scalar_i(&zero);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): max_size_per_class must be positive, got 0");
    in[2] = scalar_i(&mpc);
    in[4] = scalar_f(&bad_iou);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): iou_threshold must be in [0, 1], got -0.1");
    in[4] = scalar_f(&iou);
    in[0] = tens(DT_F32, 4, dq, big);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): third dimension of boxes must be either 1 or num classes, "
                 "got shape [1,3,3,4]");
    in[0] = tens(DT_F32, 3, d3, CB);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): boxes must be 4-D [batch, num_boxes, q, 4], got shape "
                 "[1,3,4]");
    in[0] = tens(DT_F32, 4, db, CB);
    in[1] = tens(DT_F32, 3, d2b, big);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): boxes and scores must have same batch size, got 1 and 2");
    in[1] = tens(DT_F32, 3, ds, CS);
    in[3] = tens(DT_I32, 1, &ds[0], &mts);
    expect_error(cnms_graph(false, true), in, 6, 4, GN_ERR_GRAPH,
                 "node 'n' (CombinedNonMaxSuppression): max_total_size must be 0-D, got shape [1]");
    /* max_size_per_class * num_classes over int32 is capped (no overflow); the output is max_total_size */
    int32_t huge = INT32_MAX;
    in[3] = scalar_i(&mts);
    in[2] = scalar_i(&huge);
    gn_graph *g = cnms_graph(true, true);
    gn__tensor out[4];
    run_ok(g, in, 6, out, 4);
    assert_int_equal(out[0].dims[1], 5);
    assert_int_equal(*(int32_t *)out[3].data, 4);
    gn_pt_krelease(out, 4);
    gn_graph_free(g);
}

/* ---- CropAndResize ------------------------------------------------------------------------- */
static void test_crop_hand(void **state)
{
    (void)state;
    const float img[4] = {1, 2, 3, 4};
    const float box[2][4] = {{0, 0, 1, 1}, {-1, -1, -0.5f, -0.5f}};
    const int32_t bi[2] = {0, 0}, cs[2] = {3, 3};
    int64_t di[4] = {1, 2, 2, 1}, db[2] = {2, 4}, dn[1] = {2};
    gn__tensor in[4] = {tens(DT_F32, 4, di, img), tens(DT_F32, 2, db, box), tens(DT_I32, 1, dn, bi),
                        tens(DT_I32, 1, dn, cs)};
    gn__tensor out[1];
    gn_graph *g = graph1("CropAndResize", 4, CROP_DT,
                         "attr { key: 'T' value { type: DT_FLOAT } } "
                         "attr { key: 'extrapolation_value' value { f: 7 } }");
    run_ok(g, in, 4, out, 1);
    const float bil[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
    assert_int_equal(out[0].rank, 4);
    assert_int_equal(out[0].dims[0], 2);
    assert_int_equal(out[0].dims[1], 3);
    assert_int_equal(out[0].dims[2], 3);
    assert_int_equal(out[0].dims[3], 1);
    for (int i = 0; i < 9; i++) assert_true(((float *)out[0].data)[i] == bil[i]);
    for (int i = 9; i < 18; i++) assert_true(((float *)out[0].data)[i] == 7.0f);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1("CropAndResize", 4, CROP_DT,
               "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'method' value { s: 'nearest' } }");
    run_ok(g, in, 4, out, 1);
    const float nn[9] = {1, 2, 2, 3, 4, 4, 3, 4, 4};   /* roundf(0.5) = 1 */
    for (int i = 0; i < 9; i++) assert_true(((float *)out[0].data)[i] == nn[i]);
    for (int i = 9; i < 18; i++) assert_true(((float *)out[0].data)[i] == 0.0f);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* a float16 image gives the same crops; a NaN coordinate gives extrapolation_value */
    const gn__f16 himg[4] = {1, 2, 3, 4};
    const float nbox[2][4] = {{0, 0, 1, 1}, {NAN, 0, 1, 1}};
    gn__tensor inh[4] = {tens(DT_F16, 4, di, himg), tens(DT_F32, 2, db, nbox), in[2], in[3]};
    const char *hdt[4] = {"DT_HALF", "DT_FLOAT", "DT_INT32", "DT_INT32"};
    g = graph1("CropAndResize", 4, hdt,
               "attr { key: 'T' value { type: DT_HALF } } attr { key: 'extrapolation_value' value { f: -3 } }");
    run_ok(g, inh, 4, out, 1);
    for (int i = 0; i < 9; i++) assert_true(((float *)out[0].data)[i] == bil[i]);
    for (int i = 9; i < 18; i++) assert_true(((float *)out[0].data)[i] == -3.0f);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* no boxes: an empty result */
    int64_t d0[2] = {0, 4}, dz[1] = {0};
    gn__tensor in0[4] = {in[0], tens(DT_F32, 2, d0, box), tens(DT_I32, 1, dz, bi), in[3]};
    g = graph1("CropAndResize", 4, CROP_DT, "attr { key: 'T' value { type: DT_FLOAT } }");
    run_ok(g, in0, 4, out, 1);
    assert_int_equal(out[0].dims[0], 0);
    assert_int_equal(out[0].dims[1], 3);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

static void test_crop_golden(void **state)
{
    (void)state;
    golden img, bx, bi, img8;
    gold("crop_image", &img);
    gold("crop_boxes", &bx);
    gold("crop_box_ind", &bi);
    gold("crop_image_u8", &img8);
    int32_t cs[2];
    int64_t d2[1] = {2};
    gn__tensor in[4] = {img.k, bx.k, bi.k, tens(DT_I32, 1, d2, cs)};
    gn__tensor out[1];
    const char *methods[2] = {"bilinear", "nearest"};
    for (int m = 0; m < 2; m++) {
        char attrs[200], name[64];
        snprintf(attrs, sizeof attrs,
                 "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'method' value { s: '%s' } } "
                 "attr { key: 'extrapolation_value' value { f: 0.5 } }",
                 methods[m]);
        gn_graph *g = graph1("CropAndResize", 4, CROP_DT, attrs);
        cs[0] = 5, cs[1] = 4;
        run_ok(g, in, 4, out, 1);
        snprintf(name, sizeof name, "crop_%s", methods[m]);
        expect_floats(&out[0], name, 1e-5);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
        snprintf(attrs, sizeof attrs,
                 "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'method' value { s: '%s' } } "
                 "attr { key: 'extrapolation_value' value { f: -1 } }",
                 methods[m]);
        g = graph1("CropAndResize", 4, CROP_DT, attrs);
        cs[0] = 1, cs[1] = 1;
        run_ok(g, in, 4, out, 1);
        snprintf(name, sizeof name, "crop_1x1_%s", methods[m]);
        expect_floats(&out[0], name, 1e-5);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
    const char *u8dt[4] = {"DT_UINT8", "DT_FLOAT", "DT_INT32", "DT_INT32"};
    gn_graph *g = graph1("CropAndResize", 4, u8dt, "attr { key: 'T' value { type: DT_UINT8 } }");
    in[0] = img8.k;
    cs[0] = 6, cs[1] = 7;
    run_ok(g, in, 4, out, 1);
    expect_floats(&out[0], "crop_u8_bilinear", 1e-5);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    gn_tensor_free(&img.t);
    gn_tensor_free(&bx.t);
    gn_tensor_free(&bi.t);
    gn_tensor_free(&img8.t);
}

/* ---- ResizeBicubic / ResizeArea ----------------------------------------------------------- */
static void test_resize_hand(void **state)
{
    (void)state;
    const float img[6] = {1, 2, 3, 4, 5, 6};
    int64_t di[4] = {1, 2, 3, 1}, d2[1] = {2};
    int32_t sz[2] = {2, 3};
    gn__tensor in[2] = {tens(DT_F32, 4, di, img), tens(DT_I32, 1, d2, sz)};
    gn__tensor out[1];
    /* the same size with legacy coordinates: weights 0, 1, 0, 0: the identity */
    gn_graph *g = graph1("ResizeBicubic", 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }");
    run_ok(g, in, 2, out, 1);
    for (int i = 0; i < 6; i++) assert_true(((float *)out[0].data)[i] == img[i]);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    /* area: 2x3 -> 1x1 is the mean; 2x3 -> 1x3 the column means */
    g = graph1("ResizeArea", 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }");
    sz[0] = 1, sz[1] = 1;
    run_ok(g, in, 2, out, 1);
    assert_true(fabsf(((float *)out[0].data)[0] - 3.5f) <= 1e-6f);
    gn_pt_krelease(out, 1);
    sz[1] = 3;
    run_ok(g, in, 2, out, 1);
    assert_int_equal(out[0].dims[2], 3);
    for (int i = 0; i < 3; i++) assert_true(((float *)out[0].data)[i] == 2.5f + (float)i);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

static void test_resize_golden(void **state)
{
    (void)state;
    golden img, img8;
    gold("resize_image", &img);
    gold("resize_image_u8", &img8);
    int32_t sz[2];
    int64_t d2[1] = {2};
    gn__tensor in[2] = {img.k, tens(DT_I32, 1, d2, sz)};
    gn__tensor out[1];
    const int32_t sizes[2][2] = {{11, 5}, {4, 13}};
    const char *modes[3] = {"legacy", "align", "half"};
    const char *mattr[3] = {"", "attr { key: 'align_corners' value { b: true } }",
                            "attr { key: 'half_pixel_centers' value { b: true } }"};
    for (int s = 0; s < 2; s++) {
        sz[0] = sizes[s][0], sz[1] = sizes[s][1];
        for (int m = 0; m < 3; m++) {
            char attrs[200], name[64];
            snprintf(attrs, sizeof attrs, "attr { key: 'T' value { type: DT_FLOAT } } %s", mattr[m]);
            gn_graph *g = graph1("ResizeBicubic", 2, RS_DT, attrs);
            run_ok(g, in, 2, out, 1);
            snprintf(name, sizeof name, "bicubic_%s_%dx%d", modes[m], sz[0], sz[1]);
            expect_floats(&out[0], name, 1e-5);
            gn_pt_krelease(out, 1);
            gn_graph_free(g);
            if (m == 2) continue;
            g = graph1("ResizeArea", 2, RS_DT, attrs);
            run_ok(g, in, 2, out, 1);
            snprintf(name, sizeof name, "area_%s_%dx%d", modes[m], sz[0], sz[1]);
            expect_floats(&out[0], name, 1e-5);
            gn_pt_krelease(out, 1);
            gn_graph_free(g);
        }
    }
    const char *u8dt[2] = {"DT_UINT8", "DT_INT32"};
    in[0] = img8.k;
    gn_graph *g = graph1("ResizeBicubic", 2, u8dt,
                         "attr { key: 'T' value { type: DT_UINT8 } } attr { key: 'half_pixel_centers' value { b: true } }");
    sz[0] = 9, sz[1] = 7;
    run_ok(g, in, 2, out, 1);
    expect_floats(&out[0], "bicubic_u8_half", 1e-5);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    g = graph1("ResizeArea", 2, u8dt, "attr { key: 'T' value { type: DT_UINT8 } }");
    sz[0] = 4, sz[1] = 3;
    run_ok(g, in, 2, out, 1);
    expect_floats(&out[0], "area_u8", 1e-5);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
    gn_tensor_free(&img.t);
    gn_tensor_free(&img8.t);
}

/* ---- errors ----------------------------------------------------------------------------- */
static void test_errors(void **state)
{
    (void)state;
    int64_t db[2] = {7, 4}, ds[1] = {7}, d33[2] = {3, 3};
    int32_t max = 5, neg = -1;
    float iou = 0.5f, bad_iou = 1.5f, sthr = 0.0f, sigma = -1.0f;
    gn__tensor in[6] = {tens(DT_F32, 2, db, HB), tens(DT_F32, 1, ds, HS), scalar_i(&max),
                        scalar_f(&bad_iou),      scalar_f(&sthr),         scalar_f(&sigma)};
    expect_error(graph1("NonMaxSuppressionV3", 5, NMS3_DT, ""), in, 5, 1, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV3): iou_threshold must be in [0, 1], got 1.5");
    in[3] = scalar_f(&iou);
    in[2] = scalar_i(&neg);
    expect_error(graph1("NonMaxSuppressionV3", 5, NMS3_DT, ""), in, 5, 1, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV3): output size must be non-negative, got -1");
    in[2] = tens(DT_I32, 1, ds, HS);
    expect_error(graph1("NonMaxSuppressionV3", 5, NMS3_DT, ""), in, 5, 1, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV3): max_output_size must be 0-D, got shape [7]");
    in[2] = scalar_i(&max);
    in[0] = tens(DT_F32, 2, d33, HB);
    expect_error(graph1("NonMaxSuppressionV4", 5, NMS3_DT, ""), in, 5, 2, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV4): boxes must have 4 columns, got shape [3,3]");
    in[0] = tens(DT_F32, 2, db, HB);
    int64_t d6[1] = {6};
    in[1] = tens(DT_F32, 1, d6, HS);
    expect_error(graph1("NonMaxSuppressionV4", 5, NMS3_DT, ""), in, 5, 2, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV4): scores has incompatible shape (Dimensions must be equal, but are "
                 "7 and 6)");
    in[1] = tens(DT_F32, 1, ds, HS);
    expect_error(graph1("NonMaxSuppressionV5", 6, NMS5_DT, ""), in, 6, 3, GN_ERR_GRAPH,
                 "node 'n' (NonMaxSuppressionV5): soft_nms_sigma must be non-negative, got -1");

    /* CropAndResize */
    const float img[4] = {1, 2, 3, 4};
    const float box[4] = {0, 0, 1, 1};
    int32_t bi[1] = {5}, cs[2] = {2, 2};
    int64_t di[4] = {1, 2, 2, 1}, d14[2] = {1, 4}, d1[1] = {1}, d2[1] = {2};
    gn__tensor ci[4] = {tens(DT_F32, 4, di, img), tens(DT_F32, 2, d14, box), tens(DT_I32, 1, d1, bi),
                        tens(DT_I32, 1, d2, cs)};
    expect_error(graph1("CropAndResize", 4, CROP_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ci, 4, 1,
                 GN_ERR_GRAPH,
                 "node 'n' (CropAndResize): box_index has values outside [0, batch_size): box_index[0] = 5");
    bi[0] = 0;
    cs[1] = 0;
    expect_error(graph1("CropAndResize", 4, CROP_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ci, 4, 1,
                 GN_ERR_GRAPH, "node 'n' (CropAndResize): crop dimensions must be positive, got [2,0]");
    cs[1] = 2;
    ci[1] = tens(DT_F32, 1, d2, box);
    expect_error(graph1("CropAndResize", 4, CROP_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ci, 4, 1,
                 GN_ERR_GRAPH, "node 'n' (CropAndResize): boxes must be 2-D, got shape [2]");

    /* ResizeBicubic / ResizeArea */
    int32_t sz[2] = {3, 3};
    gn__tensor ri[2] = {tens(DT_F32, 4, di, img), tens(DT_I32, 1, d2, sz)};
    expect_error(graph1("ResizeBicubic", 2, RS_DT,
                        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'align_corners' value { b: true } } "
                        "attr { key: 'half_pixel_centers' value { b: true } }"),
                 ri, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (ResizeBicubic): If half_pixel_centers is True, align_corners must be False.");
    ri[0] = tens(DT_F32, 2, d14, img);
    expect_error(graph1("ResizeBicubic", 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ri, 2, 1,
                 GN_ERR_GRAPH, "node 'n' (ResizeBicubic): input must be 4-dimensional, got shape [1,4]");
    ri[0] = tens(DT_F32, 4, di, img);
    sz[0] = 0;
    expect_error(graph1("ResizeArea", 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ri, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (ResizeArea): output dimensions must be positive, got [0,3]");
    /* a product of sizes past int64 is refused before anything is allocated */
    int64_t dbig[4] = {INT64_C(1) << 40, 1, 1, INT64_C(1) << 20};
    sz[0] = INT32_MAX, sz[1] = INT32_MAX;
    ri[0] = tens(DT_F32, 4, di, img);
    ri[0].dims[0] = dbig[0];
    ri[0].dims[3] = dbig[3];
    expect_error(graph1("ResizeArea", 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }"), ri, 2, 1, GN_ERR_GRAPH,
                 "node 'n' (ResizeArea): output is too large");
}

/* ---- hostile values: no crash, no read outside the inputs, the same bits every run ----------- */
static void test_hostile(void **state)
{
    (void)state;
    const float hb[4][4] = {{NAN, 0, 1, 1}, {0, 0, INFINITY, 1}, {-1e30f, -1e30f, 1e30f, 1e30f}, {0, 0, 1, 1}};
    const float hs[4] = {INFINITY, 0.5f, 0.9f, -INFINITY};
    int64_t db[2] = {4, 4}, ds[1] = {4};
    int32_t max = 100;
    float iou = 0.5f, sthr = -INFINITY, sigma = 0.5f;
    gn__tensor in[6] = {tens(DT_F32, 2, db, hb), tens(DT_F32, 1, ds, hs), scalar_i(&max),
                        scalar_f(&iou),          scalar_f(&sthr),         scalar_f(&sigma)};
    gn_graph *g = graph1("NonMaxSuppressionV5", 6, NMS5_DT, "");
    gn__tensor o1[3], o2[3];
    run_ok(g, in, 6, o1, 3);
    run_ok(g, in, 6, o2, 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(o1[k].nbytes, o2[k].nbytes);
        assert_memory_equal(o1[k].data, o2[k].data, o1[k].nbytes);
    }
    int32_t nsel = *(int32_t *)o1[2].data;
    assert_true(nsel >= 1 && nsel <= 4);
    assert_int_equal(((int32_t *)o1[0].data)[0], 0);   /* the +inf score goes first */
    gn_pt_krelease(o1, 3);
    gn_pt_krelease(o2, 3);
    gn_graph_free(g);

    /* crops from boxes far outside, of infinite and NaN extent */
    const float img[6] = {1, 2, 3, 4, 5, 6};
    int64_t di[4] = {1, 2, 3, 1}, d2[1] = {2};
    int32_t bi[4] = {0, 0, 0, 0}, cs[2] = {3, 4};
    gn__tensor ci[4] = {tens(DT_F32, 4, di, img), tens(DT_F32, 2, db, hb), tens(DT_I32, 1, ds, bi),
                        tens(DT_I32, 1, d2, cs)};
    for (int m = 0; m < 2; m++) {
        g = graph1("CropAndResize", 4, CROP_DT,
                   m ? "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'method' value { s: 'nearest' } }"
                     : "attr { key: 'T' value { type: DT_FLOAT } }");
        run_ok(g, ci, 4, o1, 1);
        assert_int_equal(gn__tensor_numel(&o1[0]), 4 * 3 * 4);
        for (int64_t i = 0; i < 12; i++) assert_true(((float *)o1[0].data)[i] == 0.0f);   /* NaN row: extrapolated */
        gn_pt_krelease(o1, 1);
        gn_graph_free(g);
    }
    /* an empty batch resizes to an empty result whatever the size asked */
    int64_t de[4] = {0, 2, 3, 1};
    int32_t big[2] = {INT32_MAX, INT32_MAX};
    gn__tensor ri[2] = {tens(DT_F32, 4, de, img), tens(DT_I32, 1, d2, big)};
    const char *ops[2] = {"ResizeBicubic", "ResizeArea"};
    for (int k = 0; k < 2; k++) {
        g = graph1(ops[k], 2, RS_DT, "attr { key: 'T' value { type: DT_FLOAT } }");
        run_ok(g, ri, 2, o1, 1);
        assert_int_equal(o1[0].dims[0], 0);
        assert_int_equal(o1[0].dims[1], INT32_MAX);
        gn_pt_krelease(o1, 1);
        gn_graph_free(g);
    }
}

/* ---- a session, and constant folding ------------------------------------------------------ */
#define CONST_F(name, shape, vals)                                                                                     \
    "node { name: '" name "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "                              \
    "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"
#define CONST_I(name, shape, vals)                                                                                     \
    "node { name: '" name "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "                              \
    "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { " shape " } " vals " } } } }\n"
#define D(n) "dim { size: " #n " } "
#define ID(name, in, dt)                                                                                               \
    "node { name: '" name "' op: 'Identity' input: '" in "' attr { key: 'T' value { type: " dt " } } }\n"

static const char *const E2E =
    CONST_F("img", D(1) D(3) D(4) D(1),
            "float_val: 1 float_val: 5 float_val: 2 float_val: 8 float_val: 3 float_val: 9 float_val: 4 "
            "float_val: 0 float_val: 7 float_val: 6 float_val: 1 float_val: 2")
    CONST_I("size", D(2), "int_val: 5 int_val: 6")
    CONST_F("boxes", D(3) D(4),
            "float_val: 0 float_val: 0 float_val: 1 float_val: 1 float_val: 0.1 float_val: 0.1 float_val: 0.9 "
            "float_val: 1.2 float_val: 1 float_val: 1 float_val: 0.5 float_val: 0.2")
    CONST_F("scores", D(3), "float_val: 0.7 float_val: 0.9 float_val: 0.4")
    CONST_I("box_ind", D(3), "int_val: 0")
    CONST_I("crop", D(2), "int_val: 3 int_val: 2")
    CONST_I("max", "", "int_val: 3")
    CONST_F("iou", "", "float_val: 0.5")
    CONST_F("sthr", "", "float_val: 0.1")
    CONST_F("sigma", "", "float_val: 0.4")
    "node { name: 'bicubic' op: 'ResizeBicubic' input: 'img' input: 'size' "
    "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'half_pixel_centers' value { b: true } } }\n"
    "node { name: 'area' op: 'ResizeArea' input: 'bicubic' input: 'size' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'crops' op: 'CropAndResize' input: 'area' input: 'boxes' input: 'box_ind' input: 'crop' "
    "attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'nms3' op: 'NonMaxSuppressionV3' input: 'boxes' input: 'scores' input: 'max' input: 'iou' "
    "input: 'sthr' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'T_threshold' value { type: DT_FLOAT } } }\n"
    "node { name: 'nms4' op: 'NonMaxSuppressionV4' input: 'boxes' input: 'scores' input: 'max' input: 'iou' "
    "input: 'sthr' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'T_threshold' value { type: DT_FLOAT } } "
    "attr { key: 'pad_to_max_output_size' value { b: true } } }\n"
    "node { name: 'nms5' op: 'NonMaxSuppressionV5' input: 'boxes' input: 'scores' input: 'max' input: 'iou' "
    "input: 'sthr' input: 'sigma' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    ID("v4_idx", "nms4", "DT_INT32") ID("v4_n", "nms4:1", "DT_INT32") ID("v5_idx", "nms5", "DT_INT32")
    ID("v5_sc", "nms5:1", "DT_FLOAT") ID("v5_n", "nms5:2", "DT_INT32");

/* (a fetched node with several outputs is kept, as Grappler keeps it; its outputs are fetched
 * through Identity nodes so that it can fold) */
#define N_FETCH 7
static const char *const FETCH[N_FETCH] = {"crops", "nms3", "v4_idx", "v4_n", "v5_idx", "v5_sc", "v5_n"};

static void run_graph(gn_graph *g, gn_tensor *out)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, NULL, NULL, 0, FETCH, out, N_FETCH) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void test_session_and_folding(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kload(E2E, 1);
    gn_tensor a[N_FETCH], b[N_FETCH];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    run_graph(g, a);
    /* by hand: boxes 0 and 1 overlap with IoU 0.72 / 1.16 = 0.62 > 0.5, so 1 (score 0.9)
     * suppresses 0; box 2 is [0.5,0.2,1,1] given by its other corners, IoU 1/3 with box 1 */
    assert_int_equal(a[0].rank, 4);
    assert_int_equal(a[0].dims[0], 3);
    assert_int_equal(a[0].dims[1], 3);
    assert_int_equal(a[0].dims[2], 2);
    assert_int_equal(a[1].dims[0], 2);
    assert_int_equal(((int32_t *)a[1].data)[0], 1);
    assert_int_equal(((int32_t *)a[1].data)[1], 2);
    assert_int_equal(a[2].dims[0], 3);
    assert_int_equal(((int32_t *)a[2].data)[2], 0);
    assert_int_equal(*(int32_t *)a[3].data, 2);
    assert_int_equal(a[4].dims[0], 3);   /* soft-NMS keeps all three, decayed */
    assert_int_equal(((int32_t *)a[4].data)[0], 1);
    assert_true(((float *)a[5].data)[0] == 0.9f);
    assert_int_equal(*(int32_t *)a[6].data, 3);

    gn_options o;
    gn_options_init(&o);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = FETCH;
    p.n_fetches = N_FETCH;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    gn_report_free(r);
    /* every computed node is folded: only constants remain */
    for (size_t i = 0; i < gn_graph_node_count(g); i++)
        if (strcmp(gn_graph_node_op(g, i), "Const") != 0)
            fail_msg("node %zu is still %s after constant folding", i, gn_graph_node_op(g, i));
    run_graph(g, b);
    for (int k = 0; k < N_FETCH; k++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b[k], &a[k], 1e-12, &cr), GN_OK);
        if (!cr.match || cr.n_diff) fail_msg("fetch %s differs after folding: %s", FETCH[k], cr.why);
        gn_tensor_free(&a[k]);
        gn_tensor_free(&b[k]);
    }
    gn_graph_free(g);
}

static const char *const CNMS_E2E =
    CONST_F("boxes", D(1) D(3) D(1) D(4),
            "float_val: 0 float_val: 0 float_val: 1 float_val: 1 float_val: 0 float_val: 0 float_val: 0.9 "
            "float_val: 1 float_val: 0.5 float_val: 0.5 float_val: 1.5 float_val: 1.5")
    CONST_F("scores", D(1) D(3) D(2),
            "float_val: 0.9 float_val: 0.2 float_val: 0.8 float_val: 0.7 float_val: 0.3 float_val: 0.7")
    CONST_I("mpc", "", "int_val: 2")
    CONST_I("mts", "", "int_val: 5")
    CONST_F("iou", "", "float_val: 0.5")
    CONST_F("sthr", "", "float_val: 0.25")
    "node { name: 'cnms' op: 'CombinedNonMaxSuppression' input: 'boxes' input: 'scores' input: 'mpc' "
    "input: 'mts' input: 'iou' input: 'sthr' attr { key: 'clip_boxes' value { b: true } } "
    "attr { key: 'pad_per_class' value { b: false } } }\n"
    ID("nb", "cnms", "DT_FLOAT") ID("ns", "cnms:1", "DT_FLOAT") ID("nc", "cnms:2", "DT_FLOAT")
    ID("nv", "cnms:3", "DT_INT32");

static const char *const CNMS_FETCH[4] = {"nb", "ns", "nc", "nv"};

static void cnms_run_graph(gn_graph *g, gn_tensor *out)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, NULL, NULL, 0, CNMS_FETCH, out, 4) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    gn_session_free(s);
}

static void test_cnms_session_and_folding(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kload(CNMS_E2E, 1);
    gn_tensor a[4], b[4];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    cnms_run_graph(g, a);
    /* the hand-worked case of test_cnms_hand */
    assert_int_equal(a[0].rank, 3);
    assert_int_equal(a[0].dims[1], 5);
    const float ws[5] = {0.9f, 0.7f, 0.7f, 0.3f, 0}, wc[5] = {0, 1, 1, 0, 0};
    for (int i = 0; i < 5; i++) {
        assert_true(((float *)a[1].data)[i] == ws[i]);
        assert_true(((float *)a[2].data)[i] == wc[i]);
    }
    assert_true(((float *)a[0].data)[2 * 4 + 2] == 1.0f);   /* clipped */
    assert_int_equal(*(int32_t *)a[3].data, 4);

    gn_options o;
    gn_options_init(&o);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = CNMS_FETCH;
    p.n_fetches = 4;
    gn_report *r = NULL;
    assert_int_equal(gn_optimize(g, &o, &p, &r), GN_OK);
    gn_report_free(r);
    for (size_t i = 0; i < gn_graph_node_count(g); i++)
        if (strcmp(gn_graph_node_op(g, i), "Const") != 0)
            fail_msg("node %zu is still %s after constant folding", i, gn_graph_node_op(g, i));
    cnms_run_graph(g, b);
    for (int k = 0; k < 4; k++) {
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&b[k], &a[k], 0, &cr), GN_OK);
        if (!cr.match || cr.n_diff) fail_msg("fetch %s differs after folding: %s", CNMS_FETCH[k], cr.why);
        gn_tensor_free(&a[k]);
        gn_tensor_free(&b[k]);
    }
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_nms_hand),
        cmocka_unit_test(test_nms_golden),    cmocka_unit_test(test_crop_hand),
        cmocka_unit_test(test_crop_golden),   cmocka_unit_test(test_resize_hand),
        cmocka_unit_test(test_resize_golden), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_hostile),       cmocka_unit_test(test_session_and_folding),
        cmocka_unit_test(test_cnms_hand),     cmocka_unit_test(test_cnms_golden),
        cmocka_unit_test(test_cnms_errors),   cmocka_unit_test(test_cnms_session_and_folding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
