/* CPU kernels of src/ops/kernels/ctc.c: CTCGreedyDecoder and
 * CTCBeamSearchDecoder against TensorFlow 2.21.
 *
 * Each case runs one node on the same input (max_time 6, batch 2, 5 classes,
 * multiples of 0.5 so that rows hold equal maxima and beam entries equal
 * probabilities) and checks the sparse outputs (indices, values, shape of
 * every path) exactly and log_probability against TensorFlow's numbers,
 * printed by tools/make_ctc_op_values.py:
 *   greedy (sums of the inputs): exact
 *   beam search, float32: within 1e-6 * max(1, |ref|)
 *   beam search, float64: within 1e-12 * max(1, |ref|)
 * The bad inputs fail with TensorFlow's messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/kernel.h"
#include "ops/shape.h"
#include "testutil.h"
#include "passtest.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64
#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* [max_time 6][batch 2][classes 5] (tools/make_ctc_op_values.py's X) */
static const double X[60] = {
    1.0, 0.5, 0.5, 0.0, 1.0, 0.0, 2.0, 2.0, 0.5, 1.0, /* t = 0 */
    2.0, 0.0, 0.5, 0.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0.5, /* t = 1 */
    2.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0, 2.5, 0.0, 2.5, /* t = 2 */
    0.0, 1.5, 1.5, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.5, /* t = 3 */
    0.5, 0.5, 0.0, 2.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, /* t = 4 */
    0.0, 0.0, 0.5, 2.0, 0.0, 0.0, 1.0, 0.5, 1.5, 1.5, /* t = 5 */
};
static const int32_t LENS[2] = {6, 4}, LENS_0_NEG[2] = {0, -1}, LENS_NEG_2[2] = {-1, 2};

typedef struct path {
    int64_t n;             /* decoded labels over the batch */
    const int64_t *ind;    /* [n, 2] */
    const int64_t *val;    /* [n] */
    int64_t shape[2];
} path;

typedef struct ccase {
    const char *name;
    bool beam;
    int32_t dt;
    bool merge;
    int blank;             /* greedy: blank_index */
    int width, top;        /* beam search */
    const int32_t *lens;
    path p[3];
    double lp[6];          /* log_probability [2, top] */
} ccase;

/* TensorFlow 2.21's outputs (tools/make_ctc_op_values.py) */
static const ccase CASES[] = {
    {"greedy float32 merge=False", false, DT_F32, false, -1, 0, 1, LENS,
     {
         {10, I64(0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 1, 0, 1, 1, 1, 2, 1, 3), I64(0, 0, 0, 1, 3, 3, 1, 0, 2, 1), {2, 6}},
     },
     {-10.5, -6}},
    {"greedy float32 merge=True", false, DT_F32, true, -1, 0, 1, LENS,
     {
         {7, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 1, 3), I64(0, 1, 3, 1, 0, 2, 1), {2, 4}},
     },
     {-10.5, -6}},
    {"greedy float32 merge=True blank_index=0", false, DT_F32, true, 0, 0, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 1, 0, 1, 1, 1, 2), I64(1, 3, 1, 2, 1), {2, 3}},
     },
     {-10.5, -6}},
    {"greedy float32 merge=False blank_index=-3", false, DT_F32, false, -3, 0, 1, LENS,
     {
         {9, I64(0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 1, 0, 1, 1, 1, 2), I64(0, 0, 0, 1, 3, 3, 1, 0, 1), {2, 6}},
     },
     {-10.5, -6}},
    {"beam float32 width=1 top=1 merge=True", true, DT_F32, true, -1, 1, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 1, 3, 1, 3), {2, 3}},
     },
     {-4.90432358, -3.95584893}},
    {"beam float32 width=1 top=1 merge=False", true, DT_F32, false, -1, 1, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 1, 3, 1, 3), {2, 3}},
     },
     {-4.90432358, -3.95584893}},
    {"beam float32 width=4 top=1 merge=True", true, DT_F32, true, -1, 4, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
     },
     {-2.88506722, -3.12047219}},
    {"beam float32 width=4 top=1 merge=False", true, DT_F32, false, -1, 4, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
     },
     {-2.88506722, -3.12047219}},
    {"beam float32 width=4 top=3 merge=True", true, DT_F32, true, -1, 4, 3, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 1, 3, 1, 2, 1), {2, 3}},
         {5, I64(0, 0, 0, 1, 1, 0, 1, 1, 1, 2), I64(0, 2, 1, 2, 3), {2, 3}},
     },
     {-2.88506722, -3.21647692, -5.22863865, -3.12047219, -3.21494126, -3.21494126}},
    {"beam float32 width=4 top=3 merge=False", true, DT_F32, false, -1, 4, 3, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 1, 3, 1, 2, 1), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 2, 2, 1, 2, 3), {2, 3}},
     },
     {-2.88506722, -3.21647692, -5.22863865, -3.12047219, -3.21494126, -3.21494126}},
    {"greedy float64 merge=False", false, DT_F64, false, -1, 0, 1, LENS,
     {
         {10, I64(0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 1, 0, 1, 1, 1, 2, 1, 3), I64(0, 0, 0, 1, 3, 3, 1, 0, 2, 1), {2, 6}},
     },
     {-10.5, -6.0}},
    {"greedy float64 merge=True", false, DT_F64, true, -1, 0, 1, LENS,
     {
         {7, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 1, 3), I64(0, 1, 3, 1, 0, 2, 1), {2, 4}},
     },
     {-10.5, -6.0}},
    {"greedy float64 merge=True blank_index=0", false, DT_F64, true, 0, 0, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 1, 0, 1, 1, 1, 2), I64(1, 3, 1, 2, 1), {2, 3}},
     },
     {-10.5, -6.0}},
    {"greedy float64 merge=False blank_index=-3", false, DT_F64, false, -3, 0, 1, LENS,
     {
         {9, I64(0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 1, 0, 1, 1, 1, 2), I64(0, 0, 0, 1, 3, 3, 1, 0, 1), {2, 6}},
     },
     {-10.5, -6.0}},
    {"beam float64 width=1 top=1 merge=True", true, DT_F64, true, -1, 1, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 1, 3, 1, 3), {2, 3}},
     },
     {-4.904322969217901, -3.955849106890469}},
    {"beam float64 width=1 top=1 merge=False", true, DT_F64, false, -1, 1, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 1, 3, 1, 3), {2, 3}},
     },
     {-4.904322969217901, -3.955849106890469}},
    {"beam float64 width=4 top=1 merge=True", true, DT_F64, true, -1, 4, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
     },
     {-2.8850665748614115, -3.120472367388516}},
    {"beam float64 width=4 top=1 merge=False", true, DT_F64, false, -1, 4, 1, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
     },
     {-2.8850665748614115, -3.120472367388516}},
    {"beam float64 width=4 top=3 merge=True", true, DT_F64, true, -1, 4, 3, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 1, 3, 1, 2, 1), {2, 3}},
         {5, I64(0, 0, 0, 1, 1, 0, 1, 1, 1, 2), I64(0, 2, 1, 2, 3), {2, 3}},
     },
     {-2.8850665748614115, -3.2164764911431116, -5.228637772102957, -3.120472367388516, -3.214941259009152, -3.214941259009152}},
    {"beam float64 width=4 top=3 merge=False", true, DT_F64, false, -1, 4, 3, LENS,
     {
         {5, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1), I64(0, 2, 3, 1, 2), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 1, 3, 1, 2, 1), {2, 3}},
         {6, I64(0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2), I64(0, 2, 2, 1, 2, 3), {2, 3}},
     },
     {-2.8850665748614115, -3.2164764911431116, -5.228637772102957, -3.120472367388516, -3.214941259009152, -3.214941259009152}},
    {"greedy lens [0,-1]", false, DT_F32, false, -1, 0, 1, LENS_0_NEG,
     {
         {0, NULL, NULL, {2, 0}},
     },
     {0, 0}},
    {"beam width=2 top=1 lens [-1,2]", true, DT_F32, true, -1, 2, 1, LENS_NEG_2,
     {
         {1, I64(1, 0), I64(2), {2, 1}},
     },
     {0, -1.91925263}},
};

static gn_graph *ctc_graph(bool beam, int32_t dt, bool merge, int blank, int width, int top)
{
    char attrs[512];
    const char *t = dt == DT_F64 ? "DT_DOUBLE" : "DT_FLOAT";
    if (beam)
        snprintf(attrs, sizeof attrs,
                 "attr { key: 'T' value { type: %s } } attr { key: 'merge_repeated' value { b: %s } } "
                 "attr { key: 'beam_width' value { i: %d } } attr { key: 'top_paths' value { i: %d } }",
                 t, merge ? "true" : "false", width, top);
    else
        snprintf(attrs, sizeof attrs,
                 "attr { key: 'T' value { type: %s } } attr { key: 'merge_repeated' value { b: %s } } "
                 "attr { key: 'blank_index' value { i: %d } }",
                 t, merge ? "true" : "false", blank);
    return gn_pt_kgraph(beam ? "CTCBeamSearchDecoder" : "CTCGreedyDecoder", 2,
                        (const char *const[]){t, "DT_INT32"}, attrs, 1);
}

static void expect_i64(const char *name, const char *what, const gn__tensor *t, int32_t rank, const int64_t *dims,
                       const int64_t *want)
{
    if (t->dtype != DT_I64 || t->rank != rank) fail_msg("%s: %s has dtype %d rank %d", name, what, t->dtype, t->rank);
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (t->dims[d] != dims[d])
            fail_msg("%s: %s dim %d is %lld, want %lld", name, what, d, (long long)t->dims[d], (long long)dims[d]);
        n *= dims[d];
    }
    for (int64_t i = 0; i < n; i++)
        if (((const int64_t *)t->data)[i] != want[i])
            fail_msg("%s: %s[%lld] = %lld, want %lld", name, what, (long long)i,
                     (long long)((const int64_t *)t->data)[i], (long long)want[i]);
}

static void run_case(const ccase *c)
{
    gn_graph *g = ctc_graph(c->beam, c->dt, c->merge, c->blank, c->width, c->top);
    float xf[60];
    for (int i = 0; i < 60; i++) xf[i] = (float)X[i];
    gn__tensor in[2] = {gn_pt_ktensor(c->dt, 3, I64(6, 2, 5), c->dt == DT_F64 ? (const void *)X : (const void *)xf),
                        gn_pt_ktensor(DT_I32, 1, I64(2), c->lens)};
    uint32_t n_out = (uint32_t)(3 * c->top + 1);
    gn__tensor out[10];
    gn_pt_krun_ok(g, in, 2, out, n_out, GN__K_REFERENCE);
    for (int p = 0; p < c->top; p++) {
        const path *w = &c->p[p];
        expect_i64(c->name, "decoded_indices", &out[p], 2, I64(w->n, 2), w->ind);
        expect_i64(c->name, "decoded_values", &out[c->top + p], 1, I64(w->n), w->val);
        expect_i64(c->name, "decoded_shape", &out[2 * c->top + p], 1, I64(2), w->shape);
    }
    const gn__tensor *lp = &out[3 * c->top];
    assert_int_equal(lp->dtype, c->dt);
    assert_int_equal(lp->rank, 2);
    assert_int_equal(lp->dims[0], 2);
    assert_int_equal(lp->dims[1], c->top);
    double tol = !c->beam ? 0 : c->dt == DT_F32 ? 1e-6 : 1e-12;
    for (int i = 0; i < 2 * c->top; i++) {
        double got = c->dt == DT_F32 ? (double)((const float *)lp->data)[i] : ((const double *)lp->data)[i];
        double want = c->dt == DT_F32 ? (double)(float)c->lp[i] : c->lp[i];
        if (fabs(got - want) > tol * fmax(1.0, fabs(want)))
            fail_msg("%s: log_probability[%d] = %.17g, want %.17g", c->name, i, got, want);
    }
    gn_pt_krelease(out, n_out);
    gn_graph_free(g);
}

static void test_tensorflow_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) run_case(&CASES[i]);
}

/* The kernel fails with code and exactly msg. */
static void expect_err(gn_graph *g, const gn__tensor *in, uint32_t n_out, const char *msg)
{
    gn__tensor out[10];
    gn__err err;
    gn_status s = gn_pt_krun(g, in, 2, out, n_out, GN__K_REFERENCE, &err);
    gn_pt_krelease(out, n_out);
    if (s != GN_ERR_GRAPH || strcmp(err.msg, msg)) fail_msg("got (%d) '%s'\nwant '%s'", s, err.msg, msg);
}

/* TensorFlow 2.21's messages (tools/make_ctc_op_values.py) */
static void test_bad_inputs(void **state)
{
    (void)state;
    static const float z[24] = {0};
    gn_graph *gg = ctc_graph(false, DT_F32, false, -1, 0, 1);
    gn__tensor in[2] = {gn_pt_ktensor(DT_F32, 3, I64(3, 2, 4), z), gn_pt_ktensor(DT_I32, 1, I64(3), (int32_t[]){1, 2, 3})};
    expect_err(gg, in, 4,
               "node 'n' (CTCGreedyDecoder): len(sequence_length) != batch_size.  len(sequence_length):  3 batch_size: 2");
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){1, 4});
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): sequence_length(1) <= 3");
    in[1] = gn_pt_ktensor(DT_I32, 2, I64(1, 2), (int32_t[]){1, 1});
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): sequence_length is not a vector");
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){1, 1});
    in[0] = gn_pt_ktensor(DT_F32, 2, I64(2, 4), z);
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): inputs is not a 3-Tensor");
    in[0] = gn_pt_ktensor(DT_F32, 3, I64(0, 2, 4), z);
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){0, 0});
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): inputs must not be empty");
    gn_graph_free(gg);
    in[0] = gn_pt_ktensor(DT_F32, 3, I64(3, 2, 4), z);
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){1, 1});
    gg = ctc_graph(false, DT_F32, false, 4, 0, 1);
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): blank_index expected to be between -4 and 3 but was 4");
    gn_graph_free(gg);
    gg = ctc_graph(false, DT_F32, false, -5, 0, 1);
    expect_err(gg, in, 4, "node 'n' (CTCGreedyDecoder): blank_index expected to be between -4 and 3 but was -5");
    gn_graph_free(gg);

    gn_graph *gb = ctc_graph(true, DT_F32, true, -1, 2, 1);
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){4, 1});
    expect_err(gb, in, 4, "node 'n' (CTCBeamSearchDecoder): sequence_length(0) <= 3");
    gn_graph_free(gb);
    gb = ctc_graph(true, DT_F32, true, -1, 2, 3);
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){1, 1});
    expect_err(gb, in, 10, "node 'n' (CTCBeamSearchDecoder): requested more paths than the beam width.");
    gn_graph_free(gb);
    /* a zero length leaves the root alone: one leaf for three paths */
    gb = ctc_graph(true, DT_F32, true, -1, 4, 3);
    in[1] = gn_pt_ktensor(DT_I32, 1, I64(2), (int32_t[]){1, 0});
    expect_err(gb, in, 10, "node 'n' (CTCBeamSearchDecoder): Less leaves in the beam search than requested.");
    gn_graph_free(gb);
}

/* Shapes: every path [?, 2], [?], [2]; log_probability [batch, top_paths]. */
static void test_shapes(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value "
        "{ shape { dim { size: 6 } dim { size: -1 } dim { size: 5 } } } } } "
        "node { name: 'n' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' "
        "value { shape { dim { size: 2 } } } } } "
        "node { name: 'b' op: 'CTCBeamSearchDecoder' input: 'x' input: 'n' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'beam_width' value { i: 4 } } attr { key: 'top_paths' value { i: 3 } } "
        "attr { key: 'merge_repeated' value { b: true } } } "
        "node { name: 'g' op: 'CTCGreedyDecoder' input: 'x' input: 'n' attr { key: 'T' value { type: DT_FLOAT } } "
        "attr { key: 'merge_repeated' value { b: true } } }");
    assert_int_equal(gn__graph_infer_shapes(g), GN_OK);
    char buf[128];
    gn_id b = gn__graph_find(g, "b"), gr = gn__graph_find(g, "g");
    assert_int_equal(gn__shape_num_outputs(g, b), 10);
    for (uint32_t p = 0; p < 3; p++) {
        assert_string_equal(gn__shape_str(&gn__shape_of(g, b, p)->shape, buf, sizeof buf), "[?,2]");
        assert_string_equal(gn__shape_str(&gn__shape_of(g, b, 3 + p)->shape, buf, sizeof buf), "[?]");
        assert_string_equal(gn__shape_str(&gn__shape_of(g, b, 6 + p)->shape, buf, sizeof buf), "[2]");
        assert_int_equal(gn__shape_of(g, b, p)->dtype, DT_I64);
    }
    assert_string_equal(gn__shape_str(&gn__shape_of(g, b, 9)->shape, buf, sizeof buf), "[2,3]");
    assert_int_equal(gn__shape_of(g, b, 9)->dtype, DT_F32);
    assert_int_equal(gn__shape_num_outputs(g, gr), 4);
    assert_string_equal(gn__shape_str(&gn__shape_of(g, gr, 0)->shape, buf, sizeof buf), "[?,2]");
    assert_string_equal(gn__shape_str(&gn__shape_of(g, gr, 1)->shape, buf, sizeof buf), "[?]");
    assert_string_equal(gn__shape_str(&gn__shape_of(g, gr, 2)->shape, buf, sizeof buf), "[2]");
    assert_string_equal(gn__shape_str(&gn__shape_of(g, gr, 3)->shape, buf, sizeof buf), "[2,1]");
    gn_graph_free(g);

    /* the batch of inputs and the length of sequence_length must agree */
    g = gn_pt_load_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value "
        "{ shape { dim { size: 6 } dim { size: 3 } dim { size: 5 } } } } } "
        "node { name: 'n' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' "
        "value { shape { dim { size: 2 } } } } } "
        "node { name: 'g' op: 'CTCGreedyDecoder' input: 'x' input: 'n' attr { key: 'T' value { type: DT_FLOAT } } }");
    assert_int_equal(gn__graph_infer_shapes(g), GN_ERR_GRAPH);
    assert_non_null(strstr(gn_graph_errmsg(g), "node 'g' (CTCGreedyDecoder): inputs' batch 3 and sequence_length's 2 differ"));
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensorflow_values),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
