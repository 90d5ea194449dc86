/* Math kernels (src/ops/kernels/math*.c): elementwise binary ops with
 * broadcasting, unary math and activations, Cast, Select, reductions,
 * ArgMax, Softmax, Cumsum and the random ops, called directly through
 * gn__kernel_for on a node loaded from pbtxt.
 *
 * Tolerances: integer results and float results that are exactly
 * representable are compared exactly; transcendental results within 1e-6
 * relative (stated per check). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "graph/tensor.h"
#include "grapnel/graph.h"
#include "ops/op_fns.h"
#include "passtest.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F64 TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_I8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_I32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_I64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_U8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_U64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL

/* ---- harness ------------------------------------------------------------------------------- */
/* One node "x" of the op, fed by placeholders "in0".."inN-1"; inputs are
 * borrowed tensors over caller arrays. */
typedef struct kt {
    gn_graph *g;
    gn__tensor in[8];
    gn__tensor out[4];
    gn__err err;
    gn__kctx c;
} kt;

static void kt_init(kt *t, const char *op, uint32_t n_in, const char *attrs)
{
    memset(t, 0, sizeof *t);
    char text[4096];
    size_t at = 0;
    for (uint32_t i = 0; i < n_in; i++)
        at += (size_t)snprintf(text + at, sizeof text - at,
                               "node { name: \"in%u\" op: \"Placeholder\" "
                               "attr { key: \"dtype\" value { type: DT_FLOAT } } }\n",
                               i);
    at += (size_t)snprintf(text + at, sizeof text - at, "node { name: \"x\" op: \"%s\" ", op);
    for (uint32_t i = 0; i < n_in; i++) at += (size_t)snprintf(text + at, sizeof text - at, "input: \"in%u\" ", i);
    snprintf(text + at, sizeof text - at, "%s }\n", attrs ? attrs : "");
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = 0;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "test.pbtxt", &o, &t->g);
    if (s != GN_OK) fprintf(stderr, "load failed: %s\n%s\n", t->g ? gn_graph_errmsg(t->g) : "", text);
    assert_int_equal(s, GN_OK);
    t->c.g = t->g;
    t->c.node = gn__graph_find(t->g, "x");
    assert_true(t->c.node != GN_NONE);
    t->c.n_in = n_in;
    t->c.in = t->in;
    t->c.n_out = 4;
    t->c.out = t->out;
    t->c.err = &t->err;
}

static void kt_in(kt *t, uint32_t i, int32_t dtype, int32_t rank, const int64_t *dims, const void *data)
{
    gn__tensor *x = &t->in[i];
    memset(x, 0, sizeof *x);
    x->dtype = dtype;
    x->rank = rank;
    for (int32_t d = 0; d < rank; d++) x->dims[d] = dims[d];
    x->data = (void *)data;
    x->nbytes = (size_t)gn__tensor_numel(x) * gn__dtype_size(dtype);
}

static gn_status kt_run(kt *t, const char *op, uint32_t flags)
{
    for (int k = 0; k < 4; k++) gn__tensor_release(&t->out[k]);
    t->c.flags = flags;
    gn__err_clear(&t->err);
    gn__kernel_fn fn = gn__kernel_for(op);
    assert_non_null(fn);
    return fn(&t->c);
}

static void kt_ok(kt *t, const char *op)
{
    gn_status s = kt_run(t, op, 0);
    if (s != GN_OK) fprintf(stderr, "%s failed: %s\n", op, t->err.msg);
    assert_int_equal(s, GN_OK);
}

static void kt_fails(kt *t, const char *op, gn_status code, const char *msg)
{
    gn_status s = kt_run(t, op, 0);
    assert_int_equal(s, code);
    if (strcmp(t->err.msg, msg) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", t->err.msg, msg);
    assert_string_equal(t->err.msg, msg);
}

static void kt_free(kt *t)
{
    for (int k = 0; k < 4; k++) gn__tensor_release(&t->out[k]);
    gn_graph_free(t->g);
    t->g = NULL;
}

static void expect_shape(const gn__tensor *o, int32_t dtype, int32_t rank, const int64_t *dims)
{
    assert_int_equal(o->dtype, dtype);
    assert_int_equal(o->rank, rank);
    for (int32_t i = 0; i < rank; i++) assert_int_equal(o->dims[i], dims[i]);
}

static void expect_f32(const gn__tensor *o, const float *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(o), n);
    const float *v = o->data;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
            assert_true(isnan(v[i]));
            continue;
        }
        if (v[i] != want[i]) fprintf(stderr, "element %lld: got %.9g want %.9g\n", (long long)i, v[i], want[i]);
        assert_true(v[i] == want[i]);
    }
}

/* within rel relative error (abs for |want| < 1) */
static void expect_f32_near(const gn__tensor *o, const double *want, int64_t n, double rel)
{
    assert_int_equal(gn__tensor_numel(o), n);
    const float *v = o->data;
    for (int64_t i = 0; i < n; i++) {
        double tol = rel * (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
        if (fabs(v[i] - want[i]) > tol)
            fprintf(stderr, "element %lld: got %.9g want %.9g\n", (long long)i, v[i], want[i]);
        assert_true(fabs(v[i] - want[i]) <= tol);
    }
}

static void expect_i32(const gn__tensor *o, const int32_t *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(o), n);
    const int32_t *v = o->data;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] != want[i]) fprintf(stderr, "element %lld: got %d want %d\n", (long long)i, v[i], want[i]);
        assert_int_equal(v[i], want[i]);
    }
}

static void expect_i64(const gn__tensor *o, const int64_t *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(o), n);
    for (int64_t i = 0; i < n; i++) assert_int_equal(((const int64_t *)o->data)[i], want[i]);
}

static void expect_u8(const gn__tensor *o, const uint8_t *want, int64_t n)
{
    assert_int_equal(gn__tensor_numel(o), n);
    for (int64_t i = 0; i < n; i++) assert_int_equal(((const uint8_t *)o->data)[i], want[i]);
}

#define A_F(k, v) "attr { key: \"" k "\" value { f: " #v " } } "
#define A_T(k, v) "attr { key: \"" k "\" value { type: " #v " } } "

/* ---- table ---------------------------------------------------------------------------------- */
static void test_table(void **state)
{
    (void)state;
    assert_ptr_equal(gn__kernel_for("Add"), gn__km_Add);
    const char *want[] = {"Add", "AddV2", "Mul", "FloorDiv", "Mean", "ArgMax", "Softmax", "Cast", "Select",
                          "SelectV2", "RandomUniform", "StatelessRandomNormalV2", "Gelu", "_UnaryOpsComposition"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) assert_non_null(gn__kernel_for(want[i]));
}

/* ---- binary ------------------------------------------------------------------------------------ */
static void test_broadcast(void **state)
{
    (void)state;
    kt t;
    /* [2,1,3] + [4,1] -> [2,4,3] */
    kt_init(&t, "Add", 2, A_T("T", DT_FLOAT));
    float a[6] = {1, 2, 3, 4, 5, 6};
    float b[4] = {10, 20, 30, 40};
    int64_t da[3] = {2, 1, 3}, db[2] = {4, 1};
    kt_in(&t, 0, DT_F32, 3, da, a);
    kt_in(&t, 1, DT_F32, 2, db, b);
    kt_ok(&t, "Add");
    int64_t dw[3] = {2, 4, 3};
    expect_shape(&t.out[0], DT_F32, 3, dw);
    float want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) want[(i * 4 + j) * 3 + k] = a[i * 3 + k] + b[j];
    expect_f32(&t.out[0], want, 24);

    /* [N,C] + [C] and the reverse order with Sub */
    float m[6] = {1, 2, 3, 4, 5, 6}, v[3] = {100, 200, 300};
    int64_t dm[2] = {2, 3}, dv[1] = {3};
    kt_in(&t, 0, DT_F32, 2, dm, m);
    kt_in(&t, 1, DT_F32, 1, dv, v);
    kt_ok(&t, "Add");
    float w2[6] = {101, 202, 303, 104, 205, 306};
    expect_f32(&t.out[0], w2, 6);
    kt_in(&t, 0, DT_F32, 1, dv, v);
    kt_in(&t, 1, DT_F32, 2, dm, m);
    kt_ok(&t, "Sub");
    float w3[6] = {99, 198, 297, 96, 195, 294};
    expect_f32(&t.out[0], w3, 6);

    /* many short rows ([1000,3] - [3] and [3] - [1000,3]) cross blocks of rows */
    enum { M = 1000 };
    float many[M * 3];
    for (int i = 0; i < M * 3; i++) many[i] = (float)i;
    int64_t dbig[2] = {M, 3};
    float c3[3] = {0.5f, 1.5f, 2.5f};
    kt_in(&t, 0, DT_F32, 2, dbig, many);
    kt_in(&t, 1, DT_F32, 1, dv, c3);
    kt_ok(&t, "Sub");
    for (int i = 0; i < M * 3; i++) assert_true(((float *)t.out[0].data)[i] == many[i] - c3[i % 3]);
    kt_in(&t, 0, DT_F32, 1, dv, c3);
    kt_in(&t, 1, DT_F32, 2, dbig, many);
    kt_ok(&t, "Sub");
    for (int i = 0; i < M * 3; i++) assert_true(((float *)t.out[0].data)[i] == c3[i % 3] - many[i]);

    /* scalar operands, both sides */
    float s = 2;
    kt_in(&t, 0, DT_F32, 2, dm, m);
    kt_in(&t, 1, DT_F32, 0, NULL, &s);
    kt_ok(&t, "Mul");
    float w4[6] = {2, 4, 6, 8, 10, 12};
    expect_f32(&t.out[0], w4, 6);
    kt_in(&t, 0, DT_F32, 0, NULL, &s);
    kt_in(&t, 1, DT_F32, 2, dm, m);
    kt_ok(&t, "RealDiv");
    float w5[6] = {2, 1, 2.0f / 3, 0.5f, 0.4f, 2.0f / 6};
    expect_f32(&t.out[0], w5, 6);
    kt_in(&t, 1, DT_F32, 0, NULL, &s);
    kt_ok(&t, "Pow");
    float w6[1] = {4};
    assert_int_equal(t.out[0].rank, 0);
    expect_f32(&t.out[0], w6, 1);

    /* [N,1] * [1,M] outer product; int32 */
    int32_t col[3] = {1, 2, 3}, row[4] = {1, -1, 10, 0};
    int64_t dc[2] = {3, 1}, dr[2] = {1, 4};
    kt_in(&t, 0, DT_I32, 2, dc, col);
    kt_in(&t, 1, DT_I32, 2, dr, row);
    kt_ok(&t, "Mul");
    int32_t w7[12] = {1, -1, 10, 0, 2, -2, 20, 0, 3, -3, 30, 0};
    int64_t d7[2] = {3, 4};
    expect_shape(&t.out[0], DT_I32, 2, d7);
    expect_i32(&t.out[0], w7, 12);

    /* int32 wraps like TensorFlow; uint8 too */
    int32_t big[2] = {INT32_MAX, INT32_MIN}, one[2] = {1, 1};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_I32, 1, d2, big);
    kt_in(&t, 1, DT_I32, 1, d2, one);
    kt_ok(&t, "AddV2");
    int32_t w8[2] = {INT32_MIN, INT32_MIN + 1};
    expect_i32(&t.out[0], w8, 2);
    uint8_t u[2] = {250, 3}, u2[2] = {10, 5};
    kt_in(&t, 0, DT_U8, 1, d2, u);
    kt_in(&t, 1, DT_U8, 1, d2, u2);
    kt_ok(&t, "Add");
    uint8_t w9[2] = {4, 8};
    expect_u8(&t.out[0], w9, 2);

    /* float16: computed in float, rounded once */
    gn__f16 h[2] = {(gn__f16)1.0f, (gn__f16)2048.0f}, h2[2] = {(gn__f16)0.0009765625f, (gn__f16)1.0f};
    kt_in(&t, 0, DT_F16, 1, d2, h);
    kt_in(&t, 1, DT_F16, 1, d2, h2);
    kt_ok(&t, "Add");
    assert_int_equal(t.out[0].dtype, DT_F16);
    assert_true((float)((gn__f16 *)t.out[0].data)[0] == 1.0009765625f);
    assert_true((float)((gn__f16 *)t.out[0].data)[1] == 2048.0f); /* 2049 ties to even */

    /* Maximum / Minimum propagate NaN */
    float x1[3] = {1, NAN, 3}, x2[3] = {2, 0, NAN};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_F32, 1, d3, x1);
    kt_in(&t, 1, DT_F32, 1, d3, x2);
    kt_ok(&t, "Maximum");
    float w10[3] = {2, NAN, NAN};
    expect_f32(&t.out[0], w10, 3);
    kt_ok(&t, "Minimum");
    float w11[3] = {1, NAN, NAN};
    expect_f32(&t.out[0], w11, 3);
    kt_free(&t);
}

static void test_bad_broadcast(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Add", 2, NULL);
    float a[6] = {0}, b[4] = {0};
    int64_t da[2] = {2, 3}, db[1] = {4};
    kt_in(&t, 0, DT_F32, 2, da, a);
    kt_in(&t, 1, DT_F32, 1, db, b);
    kt_fails(&t, "Add", GN_ERR_GRAPH, "node 'x' (Add): shapes [2,3] and [4] cannot be broadcast");
    assert_int_equal(t.out[0].dtype, 0);
    int32_t ia[6] = {0};
    kt_in(&t, 0, DT_I32, 2, da, ia);
    kt_fails(&t, "Add", GN_ERR_GRAPH, "node 'x' (Add): input dtypes int32 and float differ");
    kt_free(&t);

    /* Equal with incompatible_shape_error=false gives a scalar false; NotEqual true */
    kt_init(&t, "Equal", 2, AB("incompatible_shape_error", "false"));
    kt_in(&t, 0, DT_F32, 2, da, a);
    kt_in(&t, 1, DT_F32, 1, db, b);
    kt_ok(&t, "Equal");
    assert_int_equal(t.out[0].rank, 0);
    assert_int_equal(*(uint8_t *)t.out[0].data, 0);
    kt_ok(&t, "NotEqual");
    assert_int_equal(*(uint8_t *)t.out[0].data, 1);
    kt_free(&t);
}

static void test_int_division(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "FloorDiv", 2, NULL);
    int32_t x[6] = {-7, 7, -7, 7, INT32_MIN, 6}, y[6] = {2, -2, -2, 2, -1, 3};
    int64_t d[1] = {6};
    kt_in(&t, 0, DT_I32, 1, d, x);
    kt_in(&t, 1, DT_I32, 1, d, y);
    kt_ok(&t, "FloorDiv");
    int32_t fd[6] = {-4, -4, 3, 3, INT32_MIN, 2};
    expect_i32(&t.out[0], fd, 6);
    kt_ok(&t, "FloorMod");
    int32_t fm[6] = {1, -1, -1, 1, 0, 0};
    expect_i32(&t.out[0], fm, 6);
    kt_ok(&t, "TruncateDiv");
    int32_t td[6] = {-3, -3, 3, 3, INT32_MIN, 2};
    expect_i32(&t.out[0], td, 6);
    kt_ok(&t, "Div");
    expect_i32(&t.out[0], td, 6);
    kt_ok(&t, "TruncateMod");
    int32_t tm[6] = {-1, 1, -1, 1, 0, 0};
    expect_i32(&t.out[0], tm, 6);
    kt_ok(&t, "Mod");
    expect_i32(&t.out[0], tm, 6);

    /* int64 and int8 */
    int64_t lx[2] = {-9, 9}, ly[2] = {4, -4};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_I64, 1, d2, lx);
    kt_in(&t, 1, DT_I64, 1, d2, ly);
    kt_ok(&t, "FloorMod");
    int64_t lw[2] = {3, -3};
    expect_i64(&t.out[0], lw, 2);
    int8_t bx[2] = {-128, -7}, by[2] = {-1, 2};
    kt_in(&t, 0, DT_I8, 1, d2, bx);
    kt_in(&t, 1, DT_I8, 1, d2, by);
    kt_ok(&t, "FloorDiv");
    assert_int_equal(((int8_t *)t.out[0].data)[0], -128);
    assert_int_equal(((int8_t *)t.out[0].data)[1], -4);

    /* floats: floor(x / y), fmod adjusted to the divisor's sign */
    float fx[3] = {-7.5f, 7.5f, -1.0f}, fy[3] = {2, -2, 3};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_F32, 1, d3, fx);
    kt_in(&t, 1, DT_F32, 1, d3, fy);
    kt_ok(&t, "FloorMod");
    float fw[3] = {0.5f, -0.5f, 2.0f};
    expect_f32(&t.out[0], fw, 3);
    kt_ok(&t, "FloorDiv");
    float fdw[3] = {-4, -4, -1};
    expect_f32(&t.out[0], fdw, 3);
    kt_ok(&t, "TruncateMod");
    float tmw[3] = {-1.5f, 1.5f, -1.0f};
    expect_f32(&t.out[0], tmw, 3);

    /* integer division by zero is an error; DivNoNan gives 0 */
    int32_t z[6] = {1, 1, 0, 1, 1, 1};
    kt_in(&t, 0, DT_I32, 1, d, x);
    kt_in(&t, 1, DT_I32, 1, d, z);
    kt_fails(&t, "FloorDiv", GN_ERR_GRAPH, "node 'x' (FloorDiv): integer division by zero");
    assert_int_equal(t.out[0].dtype, 0);
    float zf[3] = {0, 2, 0};
    kt_in(&t, 0, DT_F32, 1, d3, fx);
    kt_in(&t, 1, DT_F32, 1, d3, zf);
    kt_ok(&t, "DivNoNan");
    float dnn[3] = {0, 3.75f, 0};
    expect_f32(&t.out[0], dnn, 3);
    /* negative integer powers */
    kt_free(&t);
    kt_init(&t, "Pow", 2, NULL);
    int32_t px[2] = {3, 2}, py[2] = {4, -1};
    kt_in(&t, 0, DT_I32, 1, d2, px);
    kt_in(&t, 1, DT_I32, 1, d2, py);
    kt_fails(&t, "Pow", GN_ERR_GRAPH, "node 'x' (Pow): integers to negative integer powers are not allowed");
    py[1] = 10;
    kt_ok(&t, "Pow");
    int32_t pw[2] = {81, 1024};
    expect_i32(&t.out[0], pw, 2);
    kt_free(&t);
}

static void test_binary_misc(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Atan2", 2, NULL);
    float y[4] = {1, 1, -1, 0}, x[4] = {1, -1, -1, 0};
    int64_t d[1] = {4};
    kt_in(&t, 0, DT_F32, 1, d, y);
    kt_in(&t, 1, DT_F32, 1, d, x);
    kt_ok(&t, "Atan2"); /* atan2(y = input 0, x = input 1) */
    double aw[4] = {M_PI / 4, 3 * M_PI / 4, -3 * M_PI / 4, 0};
    expect_f32_near(&t.out[0], aw, 4, 1e-6);
    kt_ok(&t, "SquaredDifference");
    float sw[4] = {0, 4, 0, 0};
    expect_f32(&t.out[0], sw, 4);
    float xz[4] = {0, 2, 0, 3}, yz[4] = {0, 4, -1, 1};
    kt_in(&t, 0, DT_F32, 1, d, xz);
    kt_in(&t, 1, DT_F32, 1, d, yz);
    kt_ok(&t, "Xlogy"); /* 0 where x == 0, even for log(0) or log(-1) */
    double xw[4] = {0, 2 * log(4.0), 0, 0};
    expect_f32_near(&t.out[0], xw, 4, 1e-6);
    kt_ok(&t, "Xdivy");
    float xdw[4] = {0, 0.5f, 0, 3};
    expect_f32(&t.out[0], xdw, 4);
    kt_ok(&t, "MulNoNan");
    float mnw[4] = {0, 8, -0.0f, 3};
    expect_f32(&t.out[0], mnw, 4);
    float inf[4] = {INFINITY, NAN, 1, 1}, z[4] = {0, 0, 0, 2};
    kt_in(&t, 0, DT_F32, 1, d, inf);
    kt_in(&t, 1, DT_F32, 1, d, z);
    kt_ok(&t, "MulNoNan"); /* y == 0 wins over inf and NaN */
    float mnw2[4] = {0, 0, 0, 2};
    expect_f32(&t.out[0], mnw2, 4);
    /* the exact-math path of Pow is double rounded once */
    float pb[2] = {2, 10}, pe[2] = {0.5f, -1.5f};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_F32, 1, d2, pb);
    kt_in(&t, 1, DT_F32, 1, d2, pe);
    assert_int_equal(kt_run(&t, "Pow", GN__K_EXACT_MATH), GN_OK);
    assert_true(((float *)t.out[0].data)[0] == (float)pow(2.0, 0.5));
    assert_true(((float *)t.out[0].data)[1] == (float)pow(10.0, -1.5));
    kt_free(&t);

    /* float16 Mean accumulates in float; ArgMax picks the first NaN */
    kt_init(&t, "Mean", 2, NULL);
    gn__f16 h[4] = {(gn__f16)2048.0f, (gn__f16)1.0f, (gn__f16)1.0f, (gn__f16)0.0f};
    int32_t ax = 0;
    kt_in(&t, 0, DT_F16, 1, d, h);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "Mean");
    assert_true((float)*(gn__f16 *)t.out[0].data == 512.5f); /* 2050 / 4, not (2048 + 1 + 1 in half) / 4 */
    float nx[4] = {1, NAN, 5, NAN};
    kt_in(&t, 0, DT_F32, 1, d, nx);
    kt_ok(&t, "Max");
    assert_true(isnan(*(float *)t.out[0].data));
    kt_free(&t);
    kt_init(&t, "ArgMax", 2, NULL);
    kt_in(&t, 0, DT_F32, 1, d, nx);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "ArgMax");
    assert_int_equal(*(int64_t *)t.out[0].data, 1);
    kt_free(&t);
}

static void test_bitwise_compare(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "LeftShift", 2, NULL);
    int8_t x[4] = {1, -1, 64, -128}, y[4] = {3, 9, 1, -2};
    int64_t d[1] = {4};
    kt_in(&t, 0, DT_I8, 1, d, x);
    kt_in(&t, 1, DT_I8, 1, d, y);
    kt_ok(&t, "LeftShift");
    int8_t lw[4] = {8, -128, -128, -128}; /* counts clamped to [0, 7], shifted unsigned */
    for (int i = 0; i < 4; i++) assert_int_equal(((int8_t *)t.out[0].data)[i], lw[i]);
    kt_ok(&t, "RightShift");
    int8_t rw[4] = {0, -1, 32, -128};
    for (int i = 0; i < 4; i++) assert_int_equal(((int8_t *)t.out[0].data)[i], rw[i]);
    kt_ok(&t, "BitwiseXor");
    int8_t xw[4] = {2, -10, 65, 126};
    for (int i = 0; i < 4; i++) assert_int_equal(((int8_t *)t.out[0].data)[i], xw[i]);

    gn__f16 a[3] = {(gn__f16)1.0f, (gn__f16)2.0f, (gn__f16)NAN}, b[3] = {(gn__f16)1.0f, (gn__f16)1.5f, (gn__f16)NAN};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_F16, 1, d3, a);
    kt_in(&t, 1, DT_F16, 1, d3, b);
    kt_ok(&t, "Greater");
    uint8_t gw[3] = {0, 1, 0};
    assert_int_equal(t.out[0].dtype, DT_BOOL);
    expect_u8(&t.out[0], gw, 3);
    kt_ok(&t, "Equal");
    uint8_t ew[3] = {1, 0, 0};
    expect_u8(&t.out[0], ew, 3);
    kt_ok(&t, "LessEqual");
    uint8_t lew[3] = {1, 0, 0};
    expect_u8(&t.out[0], lew, 3);
    uint8_t p[4] = {0, 0, 1, 1}, q[4] = {0, 1, 0, 1};
    kt_in(&t, 0, DT_BOOL, 1, d, p);
    kt_in(&t, 1, DT_BOOL, 1, d, q);
    kt_ok(&t, "LogicalAnd");
    uint8_t aw[4] = {0, 0, 0, 1};
    expect_u8(&t.out[0], aw, 4);
    kt_ok(&t, "LogicalOr");
    uint8_t ow[4] = {0, 1, 1, 1};
    expect_u8(&t.out[0], ow, 4);
    kt_ok(&t, "NotEqual");
    uint8_t nw[4] = {0, 1, 1, 0};
    expect_u8(&t.out[0], nw, 4);
    kt_free(&t);
}

/* ---- unary ---------------------------------------------------------------------------------------- */
/* ApproximateEqual: |x - y| <= tolerance in T (TensorFlow's kernel compares
 * with <=, though its doc says <: |2 - 2.5| at tolerance 0.5 is true), no
 * broadcasting; values from tools/make_inference_op_values.py (TensorFlow 2.21). */
static void test_approximate_equal(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "ApproximateEqual", 2, "attr { key: 'tolerance' value { f: 0.5 } }");
    const int64_t d6[1] = {6};
    const float a[6] = {1.0f, 2.0f, 3.0f, 1.5f, -1.0f, NAN}, b[6] = {1.0f, 2.5f, 2.0f, 1.25f, -1.4999f, 1.0f};
    kt_in(&t, 0, DT_F32, 1, d6, a);
    kt_in(&t, 1, DT_F32, 1, d6, b);
    kt_ok(&t, "ApproximateEqual");
    expect_shape(&t.out[0], DT_BOOL, 1, d6);
    expect_u8(&t.out[0], (const uint8_t[]){1, 1, 0, 1, 1, 0}, 6);
    const int64_t d12[2] = {1, 2}, d2[1] = {2};
    kt_in(&t, 0, DT_F32, 2, d12, a);
    kt_in(&t, 1, DT_F32, 1, d2, b);
    kt_fails(&t, "ApproximateEqual", GN_ERR_GRAPH,
             "node 'x' (ApproximateEqual): x and y must be of the same shape. x shape: [1,2]. y shape: [2]");
    kt_free(&t);
    /* double: the float attr 1e-5 widened, so |0 - 1e-5| is not below it */
    kt_init(&t, "ApproximateEqual", 2, "attr { key: 'tolerance' value { f: 1e-05 } }");
    const int64_t d3[1] = {3};
    const double x[3] = {0.0, 0.0, 1.0}, y[3] = {1e-5, 9.9e-6, 1.0};
    kt_in(&t, 0, DT_F64, 1, d3, x);
    kt_in(&t, 1, DT_F64, 1, d3, y);
    kt_ok(&t, "ApproximateEqual");
    expect_u8(&t.out[0], (const uint8_t[]){0, 1, 1}, 3);
    const int32_t xi[3] = {0, 1, 2};
    kt_in(&t, 0, DT_I32, 1, d3, xi);
    kt_in(&t, 1, DT_I32, 1, d3, xi);
    kt_fails(&t, "ApproximateEqual", GN_ERR_UNSUPPORTED, "node 'x' (ApproximateEqual): dtype int32 is not supported");
    kt_free(&t);
}

/* FakeQuantWithMinMaxVarsPerChannel: each channel of the last dimension
 * nudged and quantized on its own range; values from
 * tools/make_inference_op_values.py (TensorFlow 2.21), within 5e-7 (float
 * evaluation order). */
static void test_fake_quant_per_channel(void **state)
{
    (void)state;
    kt t;
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = -3.0f + 6.0f * (float)i / 11.0f;
    const float mn[3] = {-1.0f, -2.5f, 0.3f}, mx[3] = {1.0f, 0.7f, 2.9f};
    const int64_t d43[2] = {4, 3}, d3[1] = {3}, d2[1] = {2};
    kt_init(&t, "FakeQuantWithMinMaxVarsPerChannel", 3, NULL);
    kt_in(&t, 0, DT_F32, 2, d43, x);
    kt_in(&t, 1, DT_F32, 1, d3, mn);
    kt_in(&t, 2, DT_F32, 1, d3, mx);
    kt_ok(&t, "FakeQuantWithMinMaxVarsPerChannel");
    expect_shape(&t.out[0], DT_F32, 2, d43);
    expect_f32_near(&t.out[0],
                    (const double[]){-0.996078491, -2.45960784, 0, -0.996078491, -0.815686285, 0, 0.274509817,
                                     0.70274508, 1.36627448, 1.00392163, 0.70274508, 2.60000014},
                    12, 5e-7);
    kt_in(&t, 1, DT_F32, 1, d2, mn);
    kt_fails(&t, "FakeQuantWithMinMaxVarsPerChannel", GN_ERR_GRAPH,
             "node 'x' (FakeQuantWithMinMaxVarsPerChannel): min has incorrect size, expected 3 was 2");
    kt_in(&t, 1, DT_F32, 1, d3, mn);
    kt_in(&t, 2, DT_F32, 1, d2, mx);
    kt_fails(&t, "FakeQuantWithMinMaxVarsPerChannel", GN_ERR_GRAPH,
             "node 'x' (FakeQuantWithMinMaxVarsPerChannel): max has incorrect size, expected 3 was 2");
    kt_in(&t, 1, DT_F32, 0, NULL, mn);
    kt_fails(&t, "FakeQuantWithMinMaxVarsPerChannel", GN_ERR_GRAPH,
             "node 'x' (FakeQuantWithMinMaxVarsPerChannel): `min` must be rank 1 but is rank 0");
    kt_free(&t);
    kt_init(&t, "FakeQuantWithMinMaxVarsPerChannel", 3,
            "attr { key: 'num_bits' value { i: 4 } } attr { key: 'narrow_range' value { b: true } }");
    kt_in(&t, 0, DT_F32, 2, d43, x);
    kt_in(&t, 1, DT_F32, 1, d3, mn);
    kt_in(&t, 2, DT_F32, 1, d3, mx);
    kt_ok(&t, "FakeQuantWithMinMaxVarsPerChannel");
    expect_f32_near(&t.out[0],
                    (const double[]){-1, -2.5142858, 0, -1, -0.914285719, 0, 0.285714298, 0.685714304, 1.30000007, 1,
                                     0.685714304, 2.60000014},
                    12, 5e-7);
    kt_free(&t);
}

/* Lgamma, Digamma, Erfinv, Ndtri: TensorFlow 2.21's values (printed by
 * tools/make_inference_op_values.py), NaN and +-inf exactly, the rest within
 * 1e-6 relative in float32 (absolute below 1) and 1e-14 in float64. */
static void expect_special(const gn__tensor *o, const double *want, int64_t n, double rel)
{
    assert_int_equal(gn__tensor_numel(o), n);
    for (int64_t i = 0; i < n; i++) {
        double v = o->dtype == DT_F32 ? (double)((const float *)o->data)[i] : ((const double *)o->data)[i];
        if (isnan(want[i]) || isinf(want[i])) {
            if (!(isnan(want[i]) ? isnan(v) : v == want[i]))
                fprintf(stderr, "element %lld: got %.17g want %.17g\n", (long long)i, v, want[i]);
            assert_true(isnan(want[i]) ? isnan(v) : v == want[i]);
            continue;
        }
        double tol = rel * (fabs(want[i]) > 1 ? fabs(want[i]) : 1);
        if (fabs(v - want[i]) > tol) fprintf(stderr, "element %lld: got %.17g want %.17g\n", (long long)i, v, want[i]);
        assert_true(fabs(v - want[i]) <= tol);
    }
}

static void check_special(const char *op, const double *x, int64_t n, const double *want32, const double *want64)
{
    float xf[16];
    const int64_t d[1] = {n};
    assert_true(n <= 16);
    for (int64_t i = 0; i < n; i++) xf[i] = (float)x[i];
    kt t;
    kt_init(&t, op, 1, NULL);
    kt_in(&t, 0, DT_F32, 1, d, xf);
    kt_ok(&t, op);
    expect_shape(&t.out[0], DT_F32, 1, d);
    expect_special(&t.out[0], want32, n, 1e-6);
    kt_in(&t, 0, DT_F64, 1, d, x);
    kt_ok(&t, op);
    expect_shape(&t.out[0], DT_F64, 1, d);
    expect_special(&t.out[0], want64, n, 1e-14);
    kt_free(&t);
}

static void test_special_functions(void **state)
{
    (void)state;
    const double inf = INFINITY, nan = NAN;
    check_special("Lgamma", (const double[]){-3.0, -2.5, -0.5, 0.0, 1e-6, 0.5, 1.0, 2.0, 3.7, 30.5, 1e6, -inf, inf, nan}, 14,
                  (const double[]){inf, -0.0562437139, 1.26551211, inf, 13.8155098, 0.572364926, 0, 0, 1.42807245,
                                   72.9534683, 12815504, inf, inf, nan},
                  (const double[]){inf, -0.05624371649767407, 1.2655121234846454, inf, 13.81550998074943,
                                   0.5723649429247001, 0.0, 0.0, 1.428072326665388, 72.9534711841694,
                                   12815504.569147611, inf, inf, nan});
    /* 1.4616 is near the root: float32 TensorFlow itself is 2e-2 relative off there */
    check_special("Digamma", (const double[]){-3.0, -2.5, -0.5, -1e-4, 0.0, 1e-6, 0.5, 1.0, 1.4616, 3.7, 1e6, -inf, inf},
                  13,
                  (const double[]){nan, 1.10315681, 0.0364899635, 9999.42285, nan, -1000000.56, -1.96351075,
                                   -0.57721591, -3.1709671e-05, 1.1671536, 13.8155098, nan, inf},
                  (const double[]){nan, 1.1031566406452433, 0.03648997397857645, 9999.42261982967, nan,
                                   -1000000.5772140201, -1.9635100260214227, -0.5772156649015323,
                                   -3.1106251230816895e-05, 1.167153539361511, 13.81551005796419, nan, inf});
    check_special("Erfinv", (const double[]){-1.0, -0.999, -0.5, -1e-3, 0.0, 0.3, 0.9, 0.9999, 1.0, 1.5}, 10,
                  (const double[]){-inf, -2.32675624, -0.476936311, -0.000886215654, 0, 0.272462666, 1.16308713,
                                   2.75103498, inf, nan},
                  (const double[]){-inf, -2.3267537655135246, -0.4769362762044699, -0.000886227157466553, 0.0,
                                   0.27246271472675443, 1.1630871536766738, 2.75106390571208, inf, nan});
    check_special("Ndtri", (const double[]){0.0, 1e-30, 1e-6, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999999, 1.0, -0.5}, 11,
                  (const double[]){-inf, -11.4640236, -4.75342417, -1.95996392, -0.524400473, 0, 0.524400473,
                                   1.95996439, 4.75075769, inf, nan},
                  (const double[]){-inf, -11.464024688443613, -4.753424308822899, -1.9599639845400545,
                                   -0.5244005127080409, 0.0, 0.5244005127080407, 1.959963984540054,
                                   4.753424308817087, inf, nan});
    /* integers are not among their dtypes */
    kt t;
    const int64_t d1[1] = {1};
    const int32_t one = 1;
    kt_init(&t, "Lgamma", 1, NULL);
    kt_in(&t, 0, DT_I32, 1, d1, &one);
    kt_fails(&t, "Lgamma", GN_ERR_UNSUPPORTED, "node 'x' (Lgamma): dtype int32 is not supported");
    kt_free(&t);
}

/* SoftmaxCrossEntropyWithLogits (broadcasting) and the sparse op (int32 and
 * int64 labels, TensorFlow's messages); values from
 * tools/make_inference_op_values.py (TensorFlow 2.21), within 1e-6 in float32
 * (TensorFlow flushes exp(-101) to 0, grapnel keeps the subnormal) and 1e-14
 * in float64. */
static void test_softmax_xent(void **state)
{
    (void)state;
    const float lg[12] = {1, 2, 3, 4, -1, 0.5f, 100, 0, 0, 0, 0, 0};
    const float lb[12] = {0, 0, 1, 0, 0.25f, 0.25f, 0.25f, 0.25f, 0.1f, 0.2f, 0.3f, 0.4f};
    const int64_t d34[2] = {3, 4}, d14[2] = {1, 4}, d4[1] = {4}, d23[2] = {2, 3}, d3[1] = {3};
    kt t;
    kt_init(&t, "SoftmaxCrossEntropyWithLogits", 2, NULL);
    kt_in(&t, 0, DT_F32, 2, d34, lg);
    kt_in(&t, 1, DT_F32, 2, d34, lb);
    kt_ok(&t, "SoftmaxCrossEntropyWithLogits");
    expect_shape(&t.out[0], DT_F32, 1, d3);
    expect_shape(&t.out[1], DT_F32, 2, d34);
    expect_special(&t.out[0], (const double[]){1.44018972, 75.125, 1.38629436}, 3, 1e-6);
    expect_special(&t.out[1],
                   (const double[]){0.0320586041, 0.0871443227, -0.763117194, 0.643914282, -0.25, -0.25, 0.75, -0.25,
                                    0.150000006, 0.049999997, -0.0500000119, -0.150000006},
                   12, 1e-6);
    /* labels [4] against logits [3,4] */
    kt_in(&t, 1, DT_F32, 1, d4, lb + 8);
    kt_ok(&t, "SoftmaxCrossEntropyWithLogits");
    expect_shape(&t.out[1], DT_F32, 2, d34);
    expect_special(&t.out[0], (const double[]){1.4401896, 70, 1.38629436}, 3, 1e-6);
    expect_special(&t.out[1],
                   (const double[]){-0.0679413974, -0.11285568, -0.0631171763, 0.243914276, -0.100000001, -0.200000003,
                                    0.699999988, -0.400000006, 0.150000006, 0.049999997, -0.0500000119, -0.150000006},
                   12, 1e-6);
    kt_in(&t, 1, DT_F32, 2, d23, lb);
    kt_fails(&t, "SoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SoftmaxCrossEntropyWithLogits): logits and labels must be broadcastable: logits_size=[3,4] "
             "labels_size=[2,3]");
    kt_in(&t, 0, DT_F32, 1, d4, lg);
    kt_in(&t, 1, DT_F32, 1, d4, lb);
    kt_fails(&t, "SoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SoftmaxCrossEntropyWithLogits): logits and labels must be either 2-dimensional, or broadcasted "
             "to be 2-dimensional");
    /* float64, logits [1,4] against labels [3,4] */
    double lgd[12], lbd[12];
    for (int i = 0; i < 12; i++) {
        lgd[i] = lg[i];
        lbd[i] = lb[i];
    }
    kt_in(&t, 0, DT_F64, 2, d14, lgd);
    kt_in(&t, 1, DT_F64, 2, d34, lbd);
    kt_ok(&t, "SoftmaxCrossEntropyWithLogits");
    expect_shape(&t.out[1], DT_F64, 2, d34);
    expect_special(&t.out[0], (const double[]){1.4401896985611953, 1.9401896985611953, 1.4401897307519436}, 3, 1e-14);
    expect_special(&t.out[1],
                   (const double[]){0.03205860328008499, 0.08714431874203257, -0.7631171819100899, 0.6439142598879724,
                                    -0.21794139671991503, -0.16285568125796743, -0.013117181910089898,
                                    0.39391425988797235, -0.06794139821003113, -0.11285568423819967,
                                    -0.06311719383101885, 0.24391425392750787},
                   12, 1e-14);
    kt_free(&t);

    kt_init(&t, "SparseSoftmaxCrossEntropyWithLogits", 2, NULL);
    const int32_t l32[3] = {2, 0, 3};
    kt_in(&t, 0, DT_F32, 2, d34, lg);
    kt_in(&t, 1, DT_I32, 1, d3, l32);
    kt_ok(&t, "SparseSoftmaxCrossEntropyWithLogits");
    expect_shape(&t.out[0], DT_F32, 1, d3);
    expect_special(&t.out[0], (const double[]){1.44018972, 101, 1.38629436}, 3, 1e-6);
    expect_special(&t.out[1],
                   (const double[]){0.0320586041, 0.0871443227, -0.763117194, 0.643914282, -1, 0, 1, 0, 0.25, 0.25,
                                    0.25, -0.75},
                   12, 1e-6);
    const int32_t bad1[3] = {2, 4, 1}, bad2[3] = {2, -1, 7};
    kt_in(&t, 1, DT_I32, 1, d3, bad1);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): Received a label value of 4 which is outside the valid "
             "range of [0, 4).  Label values: 2 4 1");
    kt_in(&t, 1, DT_I32, 1, d3, bad2);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): Received a label value of -1 which is outside the valid "
             "range of [0, 4).  Label values: 2 -1 7");
    kt_in(&t, 1, DT_I32, 2, d14, bad1);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): labels must be 1-D, but got shape [1,4]");
    kt_in(&t, 1, DT_I32, 1, d4, bad1);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): logits and labels must have the same first dimension, got "
             "logits shape [3,4] and labels shape [4]");
    kt_in(&t, 0, DT_F32, 1, d4, lg);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): logits must be 2-D, but got shape [4]");
    const int64_t d20[2] = {2, 0}, d2[1] = {2};
    const int32_t z2[2] = {0, 0};
    kt_in(&t, 0, DT_F32, 2, d20, lg);
    kt_in(&t, 1, DT_I32, 1, d2, z2);
    kt_fails(&t, "SparseSoftmaxCrossEntropyWithLogits", GN_ERR_GRAPH,
             "node 'x' (SparseSoftmaxCrossEntropyWithLogits): Must have at least one class, but got logits shape [2,0]");
    const int64_t l64[3] = {3, 2, 1};
    kt_in(&t, 0, DT_F64, 2, d34, lgd);
    kt_in(&t, 1, DT_I64, 1, d3, l64);
    kt_ok(&t, "SparseSoftmaxCrossEntropyWithLogits");
    expect_special(&t.out[0], (const double[]){0.44018969856119533, 0.0, 1.3862943611198906}, 3, 1e-14);
    expect_special(&t.out[1],
                   (const double[]){0.03205860328008499, 0.08714431874203257, 0.2368828180899101, -0.35608574011202765,
                                    1.368539471173853e-44, 6.133368390286092e-44, 0.0, 3.7200759760208356e-44, 0.25,
                                    -0.75, 0.25, 0.25},
                   12, 1e-14);
    kt_free(&t);
}

static void test_round(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Round", 1, NULL);
    float x[9] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f, 2.6f, -0.0f};
    int64_t d[1] = {9};
    kt_in(&t, 0, DT_F32, 1, d, x);
    kt_ok(&t, "Round");
    float w[9] = {-2, -2, -0.0f, 0, 2, 2, 2, 3, -0.0f};
    expect_f32(&t.out[0], w, 9);
    assert_true(signbit(((float *)t.out[0].data)[2]));
    kt_ok(&t, "Rint");
    expect_f32(&t.out[0], w, 9);
    kt_ok(&t, "Floor");
    float fw[9] = {-3, -2, -1, 0, 1, 2, 2, 2, -0.0f};
    expect_f32(&t.out[0], fw, 9);
    kt_ok(&t, "Ceil");
    float cw[9] = {-2, -1, -0.0f, 1, 2, 3, 3, 3, -0.0f};
    expect_f32(&t.out[0], cw, 9);
    /* Round on int32 is the identity */
    int32_t ix[2] = {-3, 4};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_I32, 1, d2, ix);
    kt_ok(&t, "Round");
    expect_i32(&t.out[0], ix, 2);
    kt_free(&t);
}

static void test_unary_misc(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Abs", 1, NULL);
    int32_t ix[4] = {-3, 0, 5, INT32_MIN};
    int64_t d4[1] = {4};
    kt_in(&t, 0, DT_I32, 1, d4, ix);
    kt_ok(&t, "Abs");
    int32_t aw[4] = {3, 0, 5, INT32_MIN};
    expect_i32(&t.out[0], aw, 4);
    kt_ok(&t, "Neg");
    int32_t nw[4] = {3, 0, -5, INT32_MIN};
    expect_i32(&t.out[0], nw, 4);
    kt_ok(&t, "Sign");
    int32_t sw[4] = {-1, 0, 1, -1};
    expect_i32(&t.out[0], sw, 4);
    kt_ok(&t, "Square");
    int32_t qw[4] = {9, 0, 25, 0};
    expect_i32(&t.out[0], qw, 4);
    kt_ok(&t, "Invert");
    int32_t iw[4] = {2, -1, -6, INT32_MAX};
    expect_i32(&t.out[0], iw, 4);

    float f[5] = {4, 0.25f, -1, 0, INFINITY};
    int64_t d5[1] = {5};
    kt_in(&t, 0, DT_F32, 1, d5, f);
    kt_ok(&t, "Sqrt");
    float sq[5] = {2, 0.5f, NAN, 0, INFINITY};
    expect_f32(&t.out[0], sq, 5);
    kt_ok(&t, "Rsqrt");
    float rs[5] = {0.5f, 2, NAN, INFINITY, 0};
    expect_f32(&t.out[0], rs, 5);
    kt_ok(&t, "Reciprocal");
    float rc[5] = {0.25f, 4, -1, INFINITY, 0};
    expect_f32(&t.out[0], rc, 5);
    kt_ok(&t, "IsFinite");
    uint8_t fin[5] = {1, 1, 1, 1, 0};
    expect_u8(&t.out[0], fin, 5);
    kt_ok(&t, "IsInf");
    uint8_t inf[5] = {0, 0, 0, 0, 1};
    expect_u8(&t.out[0], inf, 5);
    kt_ok(&t, "Sign");
    float sg[5] = {1, 1, -1, 0, 1};
    expect_f32(&t.out[0], sg, 5);

    /* transcendental: within 1e-6 relative of libm double; the exact-math
     * path is double rounded once, so it matches (float)exp(x) exactly */
    float e[4] = {-1, 0, 0.5f, 3};
    int64_t de[1] = {4};
    kt_in(&t, 0, DT_F32, 1, de, e);
    kt_ok(&t, "Exp");
    double ew[4] = {exp(-1.0), 1, exp(0.5), exp(3.0)};
    expect_f32_near(&t.out[0], ew, 4, 1e-6);
    assert_int_equal(kt_run(&t, "Exp", GN__K_EXACT_MATH), GN_OK);
    for (int i = 0; i < 4; i++) assert_true(((float *)t.out[0].data)[i] == (float)exp((double)e[i]));
    kt_ok(&t, "Sigmoid");
    double sgw[4] = {1 / (1 + exp(1.0)), 0.5, 1 / (1 + exp(-0.5)), 1 / (1 + exp(-3.0))};
    expect_f32_near(&t.out[0], sgw, 4, 1e-6);
    kt_ok(&t, "Tanh");
    double thw[4] = {tanh(-1.0), 0, tanh(0.5), tanh(3.0)};
    expect_f32_near(&t.out[0], thw, 4, 1e-6);
    kt_ok(&t, "Softplus");
    double spw[4] = {log1p(exp(-1.0)), log(2.0), log1p(exp(0.5)), log1p(exp(3.0))};
    expect_f32_near(&t.out[0], spw, 4, 1e-6);
    kt_ok(&t, "Erf");
    double erw[4] = {erf(-1.0), 0, erf(0.5), erf(3.0)};
    expect_f32_near(&t.out[0], erw, 4, 1e-6);

    /* LogicalNot */
    uint8_t b[2] = {0, 1};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_BOOL, 1, d2, b);
    kt_ok(&t, "LogicalNot");
    uint8_t lw[2] = {1, 0};
    expect_u8(&t.out[0], lw, 2);

    /* unsupported dtype: a clear error naming node, op and dtype */
    kt_free(&t);
    kt_init(&t, "Sqrt", 1, NULL);
    kt_in(&t, 0, DT_I32, 1, d4, ix);
    kt_fails(&t, "Sqrt", GN_ERR_UNSUPPORTED, "node 'x' (Sqrt): dtype int32 is not supported");
    kt_free(&t);
    kt_init(&t, "Relu", 1, NULL);
    kt_in(&t, 0, DT_BOOL, 1, d2, b);
    kt_fails(&t, "Relu", GN_ERR_UNSUPPORTED, "node 'x' (Relu): dtype bool is not supported");
    kt_free(&t);
}

/* The non-reference path uses vectorized float approximations for exp, tanh,
 * erf, erfc (and what builds on them): within 5e-7 relative of double libm
 * over a dense range (results below 1e-30 within 1e-36), with the special
 * values exact. The reference path is double libm rounded once. */
static void test_fast_transcendentals(void **state)
{
    (void)state;
    enum { N = 40001 };
    float *x = malloc(sizeof(float) * N);
    assert_non_null(x);
    for (int i = 0; i < N; i++) x[i] = -20.0f + (float)i * 1e-3f;
    const char *ops[] = {"Exp", "Tanh", "Sigmoid", "Erf", "Erfc", "Elu", "Gelu", "Gelu"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        kt t;
        kt_init(&t, ops[k], 1, k == 7 ? AB("approximate", "true") : NULL);
        int64_t d[1] = {N};
        kt_in(&t, 0, DT_F32, 1, d, x);
        for (int ref = 0; ref < 2; ref++) {
            assert_int_equal(kt_run(&t, ops[k], ref ? GN__K_EXACT_MATH : 0), GN_OK);
            const float *o = t.out[0].data;
            double worst = 0, worst_x = 0;
            for (int i = 0; i < N; i++) {
                double v = x[i], w;
                switch (k) {
                case 0: w = exp(v); break;
                case 1: w = tanh(v); break;
                case 2: w = 1 / (1 + exp(-v)); break;
                case 3: w = erf(v); break;
                case 4: w = erfc(v); break;
                case 5: w = v < 0 ? exp(v) - 1 : v; break;
                /* Gelu's tails are ill-conditioned in the argument: the fast
                 * path is checked against double libm at its float argument */
                case 6: w = 0.5 * v * erfc(ref ? -v / sqrt(2.0) : (double)(-x[i] * 0.70710678118654752440f)); break;
                default: {
                    float u = -1.59576912160573071176f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
                    double uref = -2 * sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
                    w = v / (1 + exp(ref ? uref : (double)u));
                } break;
                }
                double err = fabs(o[i] - w);
                if (fabs(w) < 1e-30) { /* near FLT_MIN intermediates lose bits: absolute */
                    if (err > 1e-36) fprintf(stderr, "%s ref=%d x=%g got %g want %g\n", ops[k], ref, v, o[i], w);
                    assert_true(err <= 1e-36);
                    continue;
                }
                /* Elu is TensorFlow's exp(x) - 1: near 0 its error is absolute */
                double rel = k == 5 ? err / (fabs(w) > 1 ? fabs(w) : 1) : err / fabs(w);
                if (rel > worst) {
                    worst = rel;
                    worst_x = v;
                }
            }
            if (worst >= 5e-7) fprintf(stderr, "%s ref=%d: relative error %g at %g\n", ops[k], ref, worst, worst_x);
            assert_true(worst < 5e-7);
        }
        float sp[5] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f};
        int64_t d5[1] = {5};
        kt_in(&t, 0, DT_F32, 1, d5, sp);
        kt_ok(&t, ops[k]);
        const float *o = t.out[0].data;
        double wi[8][2] = {{INFINITY, 0}, {1, -1}, {1, 0}, {1, -1}, {0, 2}, {INFINITY, -1}, {INFINITY, NAN}, {0, 0}};
        if (k < 6) {
            assert_true(o[0] == wi[k][0]);
            assert_true(o[1] == wi[k][1]);
        }
        assert_true(isnan(o[2]));
        double w0 = k == 0 ? 1 : k == 2 ? 0.5 : k == 4 ? 1 : 0;
        assert_true(o[3] == w0 && o[4] == w0);
        kt_free(&t);
    }
    free(x);
}

static void test_activations(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Relu6", 1, NULL);
    float x[6] = {-1, 0, 3, 6, 7, NAN};
    int64_t d[1] = {6};
    kt_in(&t, 0, DT_F32, 1, d, x);
    kt_ok(&t, "Relu6");
    float r6[6] = {0, 0, 3, 6, 6, NAN};
    expect_f32(&t.out[0], r6, 6);
    kt_ok(&t, "Relu");
    float r[6] = {0, 0, 3, 6, 7, NAN};
    expect_f32(&t.out[0], r, 6);
    kt_ok(&t, "Softsign");
    float ss[6] = {-0.5f, 0, 0.75f, 6.0f / 7, 0.875f, NAN};
    expect_f32(&t.out[0], ss, 6);
    kt_free(&t);

    /* LeakyRelu alpha 0.1 (alpha > 1 allowed: select, not max) */
    kt_init(&t, "LeakyRelu", 1, A_F("alpha", 0.1));
    float lx[3] = {-2, 0, 3};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_F32, 1, d3, lx);
    kt_ok(&t, "LeakyRelu");
    float lw[3] = {-2 * 0.1f, 0, 3};
    expect_f32(&t.out[0], lw, 3);
    kt_free(&t);
    kt_init(&t, "LeakyRelu", 1, NULL); /* default alpha 0.2 */
    kt_in(&t, 0, DT_F32, 1, d3, lx);
    kt_ok(&t, "LeakyRelu");
    float lw2[3] = {-2 * 0.2f, 0, 3};
    expect_f32(&t.out[0], lw2, 3);
    kt_free(&t);

    /* Elu, Selu: within 1e-6 relative of the double formula */
    kt_init(&t, "Elu", 1, NULL);
    float ex[3] = {-1, 0, 2};
    kt_in(&t, 0, DT_F32, 1, d3, ex);
    kt_ok(&t, "Elu");
    double ew[3] = {exp(-1.0) - 1, 0, 2};
    expect_f32_near(&t.out[0], ew, 3, 1e-6);
    kt_ok(&t, "Selu");
    const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
    double sw[3] = {scale * alpha * (exp(-1.0) - 1), 0, scale * 2};
    expect_f32_near(&t.out[0], sw, 3, 1e-6);
    kt_free(&t);

    /* Gelu: exact (erf) and approximate (tanh); TensorFlow's documented values */
    kt_init(&t, "Gelu", 1, NULL);
    float gx[5] = {-3, -1, 0, 1, 3};
    int64_t d5[1] = {5};
    kt_in(&t, 0, DT_F32, 1, d5, gx);
    kt_ok(&t, "Gelu");
    double gw[5];
    for (int i = 0; i < 5; i++) gw[i] = 0.5 * gx[i] * (1 + erf(gx[i] / sqrt(2.0)));
    expect_f32_near(&t.out[0], gw, 5, 1e-6);
    assert_true(fabs(((float *)t.out[0].data)[1] - -0.15865529) < 1e-6); /* tf.nn.gelu's documented values */
    assert_true(fabs(((float *)t.out[0].data)[4] - 2.9959507) < 1e-6);
    kt_free(&t);
    kt_init(&t, "Gelu", 1, AB("approximate", "true"));
    kt_in(&t, 0, DT_F32, 1, d5, gx);
    kt_ok(&t, "Gelu");
    double gaw[5];
    for (int i = 0; i < 5; i++) {
        double v = gx[i];
        gaw[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    }
    expect_f32_near(&t.out[0], gaw, 5, 1e-6);
    assert_true(fabs(((float *)t.out[0].data)[1] - -0.15880796) < 1e-6);
    assert_true(fabs(((float *)t.out[0].data)[3] - 0.841192) < 1e-6);
    kt_free(&t);

    /* _UnaryOpsComposition: Relu then Square */
    kt_init(&t, "_UnaryOpsComposition", 1,
            "attr { key: \"op_names\" value { list { s: \"Relu\" s: \"Square\" s: \"Neg\" } } }");
    kt_in(&t, 0, DT_F32, 1, d3, lx);
    kt_ok(&t, "_UnaryOpsComposition");
    float cw[3] = {-0.0f, -0.0f, -9};
    expect_f32(&t.out[0], cw, 3);
    kt_free(&t);
}

static void test_cast(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Cast", 1, A_T("DstT", DT_INT32));
    float x[8] = {1.9f, -1.9f, 2.5f, -0.5f, 3e9f, NAN, -2147483648.0f, 2147483520.0f};
    int64_t d[1] = {8};
    kt_in(&t, 0, DT_F32, 1, d, x);
    kt_ok(&t, "Cast");
    int32_t w[8] = {1, -1, 2, 0, INT32_MIN, INT32_MIN, INT32_MIN, 2147483520};
    expect_i32(&t.out[0], w, 8);
    kt_free(&t);

    /* float -> uint8 goes through int32 then keeps the low byte (x86-64) */
    kt_init(&t, "Cast", 1, A_T("DstT", DT_UINT8));
    float ux[3] = {-1.0f, 255.9f, 256.0f};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_F32, 1, d3, ux);
    kt_ok(&t, "Cast");
    uint8_t uw[3] = {255, 255, 0};
    expect_u8(&t.out[0], uw, 3);
    kt_free(&t);

    /* float -> half rounds to nearest even; Truncate clears the low bits first */
    float hx[5] = {1.0009765625f, 1.00048828125f, 1.000732421875f, 65520.0f, 1.00146484375f};
    int64_t d5[1] = {5};
    kt_init(&t, "Cast", 1, A_T("DstT", DT_HALF));
    kt_in(&t, 0, DT_F32, 1, d5, hx);
    kt_ok(&t, "Cast");
    assert_int_equal(t.out[0].dtype, DT_F16);
    const gn__f16 *h = t.out[0].data;
    assert_true((float)h[0] == 1.0009765625f);  /* exact */
    assert_true((float)h[1] == 1.0f);           /* 1 + 2^-11 ties to even */
    assert_true((float)h[2] == 1.0009765625f);  /* 1 + 3*2^-12 rounds up */
    assert_true(isinf((float)h[3]));            /* 65520 overflows */
    assert_true((float)h[4] == 1.001953125f);   /* 1 + 3*2^-11 ties to even (up) */
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_HALF) AB("Truncate", "true"));
    kt_in(&t, 0, DT_F32, 1, d5, hx);
    kt_ok(&t, "Cast");
    h = t.out[0].data;
    assert_true((float)h[2] == 1.0f);           /* truncated, not rounded */
    assert_true((float)h[4] == 1.0009765625f);
    kt_free(&t);

    /* half -> float exact; int64 -> int8 wraps; bool both ways; same dtype forwards */
    kt_init(&t, "Cast", 1, A_T("DstT", DT_FLOAT));
    gn__f16 hh[2] = {(gn__f16)0.333251953125f, (gn__f16)-2.0f};
    int64_t d2[1] = {2};
    kt_in(&t, 0, DT_F16, 1, d2, hh);
    kt_ok(&t, "Cast");
    float fw[2] = {0.333251953125f, -2.0f};
    expect_f32(&t.out[0], fw, 2);
    kt_in(&t, 0, DT_F32, 1, d2, fw);
    kt_ok(&t, "Cast");
    assert_ptr_equal(t.out[0].data, fw);
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_INT8));
    int64_t lx[3] = {300, -129, 127};
    kt_in(&t, 0, DT_I64, 1, d3, lx);
    kt_ok(&t, "Cast");
    int8_t bw[3] = {44, 127, 127};
    for (int i = 0; i < 3; i++) assert_int_equal(((int8_t *)t.out[0].data)[i], bw[i]);
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_BOOL));
    float bx[3] = {0, -0.5f, NAN};
    kt_in(&t, 0, DT_F32, 1, d3, bx);
    kt_ok(&t, "Cast");
    uint8_t bbw[3] = {0, 1, 1};
    expect_u8(&t.out[0], bbw, 3);
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_FLOAT));
    uint8_t bb[2] = {1, 0};
    kt_in(&t, 0, DT_BOOL, 1, d2, bb);
    kt_ok(&t, "Cast");
    float bfw[2] = {1, 0};
    expect_f32(&t.out[0], bfw, 2);
    kt_free(&t);
    /* every half bit pattern: half -> float is exact, float -> half gives it back */
    kt_init(&t, "Cast", 1, A_T("DstT", DT_FLOAT));
    uint16_t *all = malloc(sizeof(uint16_t) * 65536);
    assert_non_null(all);
    for (uint32_t i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    int64_t dall[1] = {65536};
    kt_in(&t, 0, DT_F16, 1, dall, all);
    kt_ok(&t, "Cast");
    gn__tensor wide = {0};
    gn__tensor_copy_ref(&wide, &t.out[0]);
    for (uint32_t i = 0; i < 65536; i++) {
        gn__f16 hv;
        memcpy(&hv, &all[i], 2);
        float f = ((float *)wide.data)[i];
        assert_true(isnan((float)hv) ? isnan(f) : (f == (float)hv && signbit(f) == signbit((float)hv)));
    }
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_HALF));
    kt_in(&t, 0, DT_F32, 1, dall, wide.data);
    kt_ok(&t, "Cast");
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t back = ((uint16_t *)t.out[0].data)[i];
        if ((all[i] & 0x7c00) == 0x7c00 && (all[i] & 0x3ff)) assert_true((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
        else assert_int_equal(back, all[i]);
    }
    gn__tensor_release(&wide);
    free(all);
    kt_free(&t);
    kt_init(&t, "Cast", 1, A_T("DstT", DT_STRING));
    kt_in(&t, 0, DT_F32, 1, d2, bfw);
    kt_fails(&t, "Cast", GN_ERR_UNSUPPORTED, "node 'x' (Cast): cast from float to string is not supported");
    kt_free(&t);
}

static void test_clip_addn(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "ClipByValue", 3, NULL);
    float x[4] = {-5, 0.5f, 7, NAN}, lo = 0, hi = 1;
    int64_t d[1] = {4};
    kt_in(&t, 0, DT_F32, 1, d, x);
    kt_in(&t, 1, DT_F32, 0, NULL, &lo);
    kt_in(&t, 2, DT_F32, 0, NULL, &hi);
    kt_ok(&t, "ClipByValue");
    float w[4] = {0, 0.5f, 1, NAN};
    expect_f32(&t.out[0], w, 4);
    float his[4] = {1, 0.25f, 10, 1};
    kt_in(&t, 2, DT_F32, 1, d, his);
    kt_ok(&t, "ClipByValue");
    float w2[4] = {0, 0.25f, 7, NAN};
    expect_f32(&t.out[0], w2, 4);
    kt_free(&t);

    kt_init(&t, "AddN", 3, NULL);
    int32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, c[3] = {100, 200, INT32_MAX};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_I32, 1, d3, a);
    kt_in(&t, 1, DT_I32, 1, d3, b);
    kt_in(&t, 2, DT_I32, 1, d3, c);
    kt_ok(&t, "AddN");
    int32_t aw[3] = {111, 222, INT32_MIN + 32};
    expect_i32(&t.out[0], aw, 3);
    int32_t bad[2] = {0, 0};
    int64_t d2[1] = {2};
    kt_in(&t, 2, DT_I32, 1, d2, bad);
    kt_fails(&t, "AddN", GN_ERR_GRAPH, "node 'x' (AddN): input 2 has shape [2], input 0 has [3]");
    kt_free(&t);
}

static void test_select(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Select", 3, NULL);
    /* v1 with a vector condition over the first dim */
    uint8_t cv[2] = {1, 0};
    float te[6] = {1, 2, 3, 4, 5, 6}, el[6] = {-1, -2, -3, -4, -5, -6};
    int64_t dc[1] = {2}, dt[2] = {2, 3};
    kt_in(&t, 0, DT_BOOL, 1, dc, cv);
    kt_in(&t, 1, DT_F32, 2, dt, te);
    kt_in(&t, 2, DT_F32, 2, dt, el);
    kt_ok(&t, "Select");
    float w[6] = {1, 2, 3, -4, -5, -6};
    expect_f32(&t.out[0], w, 6);
    /* elementwise */
    uint8_t ce[6] = {1, 0, 1, 0, 1, 0};
    kt_in(&t, 0, DT_BOOL, 2, dt, ce);
    kt_ok(&t, "Select");
    float w2[6] = {1, -2, 3, -4, 5, -6};
    expect_f32(&t.out[0], w2, 6);
    /* scalar: forwards the chosen input */
    uint8_t cs = 0;
    kt_in(&t, 0, DT_BOOL, 0, NULL, &cs);
    kt_ok(&t, "Select");
    assert_ptr_equal(t.out[0].data, el);
    /* a condition that fits neither rule */
    uint8_t c3[3] = {1, 1, 1};
    int64_t d3[1] = {3};
    kt_in(&t, 0, DT_BOOL, 1, d3, c3);
    kt_fails(&t, "Select", GN_ERR_GRAPH,
             "node 'x' (Select): condition [3] must be a scalar, of the shape [2,3] of 'then', or a vector of its "
             "first dimension");
    /* SelectV2 broadcasts all three: cond [3] against [2,3] and a scalar else */
    float zero = 0;
    uint8_t c3b[3] = {1, 0, 1};
    kt_in(&t, 0, DT_BOOL, 1, d3, c3b);
    kt_in(&t, 2, DT_F32, 0, NULL, &zero);
    kt_ok(&t, "SelectV2");
    float w3[6] = {1, 0, 3, 4, 0, 6};
    int64_t dw[2] = {2, 3};
    expect_shape(&t.out[0], DT_F32, 2, dw);
    expect_f32(&t.out[0], w3, 6);
    kt_free(&t);
}

/* ---- reductions ------------------------------------------------------------------------------------ */
static void test_reductions(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Mean", 2, AB("keep_dims", "true"));
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t dx[2] = {2, 3};
    int32_t ax = -1;
    kt_in(&t, 0, DT_F32, 2, dx, x);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "Mean");
    int64_t dw[2] = {2, 1};
    expect_shape(&t.out[0], DT_F32, 2, dw);
    float w[2] = {2, 5};
    expect_f32(&t.out[0], w, 2);
    int64_t ax2[2] = {0, -1};
    int64_t d2[1] = {2};
    kt_in(&t, 1, DT_I64, 1, d2, ax2);
    kt_ok(&t, "Mean");
    int64_t d11[2] = {1, 1};
    expect_shape(&t.out[0], DT_F32, 2, d11);
    float w2[1] = {3.5f};
    expect_f32(&t.out[0], w2, 1);
    kt_ok(&t, "Sum");
    float w3[1] = {21};
    expect_f32(&t.out[0], w3, 1);
    kt_ok(&t, "Prod");
    float w4[1] = {720};
    expect_f32(&t.out[0], w4, 1);
    kt_ok(&t, "Max");
    float w5[1] = {6};
    expect_f32(&t.out[0], w5, 1);
    int32_t a0 = 0;
    kt_in(&t, 1, DT_I32, 0, NULL, &a0);
    kt_ok(&t, "Min");
    int64_t d13[2] = {1, 3};
    expect_shape(&t.out[0], DT_F32, 2, d13);
    float w6[3] = {1, 2, 3};
    expect_f32(&t.out[0], w6, 3);
    /* axis errors */
    kt_free(&t);
    kt_init(&t, "Sum", 2, NULL);
    kt_in(&t, 0, DT_F32, 2, dx, x);
    int32_t bad = 2;
    kt_in(&t, 1, DT_I32, 0, NULL, &bad);
    kt_fails(&t, "Sum", GN_ERR_GRAPH, "node 'x' (Sum): invalid reduction dimension 2 for input with 2 dimensions");
    int32_t dup[2] = {1, -1};
    kt_in(&t, 1, DT_I32, 1, d2, dup);
    kt_fails(&t, "Sum", GN_ERR_GRAPH, "node 'x' (Sum): axes contain duplicate dimension 1");
    kt_free(&t);

    /* without keep_dims; int32 sum and mean (integer division); empty axis list copies */
    kt_init(&t, "Sum", 2, NULL);
    int32_t ix[6] = {1, 2, 4, -7, 5, 6};
    int32_t ax1 = 1;
    kt_in(&t, 0, DT_I32, 2, dx, ix);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax1);
    kt_ok(&t, "Sum");
    int64_t d2o[1] = {2};
    expect_shape(&t.out[0], DT_I32, 1, d2o);
    int32_t iw[2] = {7, 4};
    expect_i32(&t.out[0], iw, 2);
    kt_ok(&t, "Mean");
    int32_t mw[2] = {2, 1};
    expect_i32(&t.out[0], mw, 2);
    int64_t d0[1] = {0};
    kt_in(&t, 1, DT_I32, 1, d0, &ax1);
    kt_ok(&t, "Sum");
    expect_shape(&t.out[0], DT_I32, 2, dx);
    expect_i32(&t.out[0], ix, 6);
    kt_free(&t);

    /* middle axis of [2,3,2]; EuclideanNorm; empty reductions give identities */
    kt_init(&t, "Sum", 2, NULL);
    float y[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    int64_t dy[3] = {2, 3, 2};
    kt_in(&t, 0, DT_F32, 3, dy, y);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax1);
    kt_ok(&t, "Sum");
    float sw[4] = {9, 12, 27, 30};
    expect_f32(&t.out[0], sw, 4);
    float e[2] = {3, 4};
    int64_t de[1] = {2};
    kt_in(&t, 0, DT_F32, 1, de, e);
    kt_in(&t, 1, DT_I32, 0, NULL, &a0);
    kt_ok(&t, "EuclideanNorm");
    float ew[1] = {5};
    expect_f32(&t.out[0], ew, 1);
    int64_t dz[2] = {0, 2};
    kt_in(&t, 0, DT_F32, 2, dz, e);
    kt_ok(&t, "Max");
    float mx[2] = {-INFINITY, -INFINITY};
    expect_f32(&t.out[0], mx, 2);
    kt_ok(&t, "Prod");
    float pw[2] = {1, 1};
    expect_f32(&t.out[0], pw, 2);
    kt_free(&t);

    /* All / Any on bool */
    kt_init(&t, "All", 2, NULL);
    uint8_t b[4] = {1, 1, 0, 1};
    int64_t db[2] = {2, 2};
    kt_in(&t, 0, DT_BOOL, 2, db, b);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax1);
    kt_ok(&t, "All");
    uint8_t aw[2] = {1, 0};
    expect_u8(&t.out[0], aw, 2);
    kt_ok(&t, "Any");
    uint8_t nw[2] = {1, 1};
    expect_u8(&t.out[0], nw, 2);
    kt_in(&t, 0, DT_F32, 2, db, x);
    kt_fails(&t, "All", GN_ERR_UNSUPPORTED, "node 'x' (All): dtype float is not supported");
    kt_free(&t);
}

/* Float sums are pairwise in a fixed order: the same bits on both paths and
 * close to the exact sum where a naive running sum drifts. */
static void test_sum_order(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    float *x = malloc(sizeof(float) * N);
    assert_non_null(x);
    double exact = 0;
    for (int i = 0; i < N; i++) {
        x[i] = 0.1f + (float)(i % 7) * 1e-3f;
        exact += x[i];
    }
    kt t;
    kt_init(&t, "Sum", 2, NULL);
    int32_t ax = 0;
    int64_t d[1] = {N};
    kt_in(&t, 0, DT_F32, 1, d, x);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "Sum");
    float fast = *(float *)t.out[0].data;
    assert_int_equal(kt_run(&t, "Sum", GN__K_REFERENCE), GN_OK);
    float ref = *(float *)t.out[0].data;
    assert_true(memcmp(&fast, &ref, 4) == 0);
    assert_true(fabs(fast - exact) / exact < 1e-6);
    /* the strided path (reduce axis 0 of [N/4, 4]) is pairwise too */
    int64_t d2[2] = {N / 4, 4};
    kt_in(&t, 0, DT_F32, 2, d2, x);
    kt_ok(&t, "Sum");
    double col[4] = {0, 0, 0, 0};
    for (int i = 0; i < N; i++) col[i % 4] += x[i];
    for (int k = 0; k < 4; k++) assert_true(fabs(((float *)t.out[0].data)[k] - col[k]) / col[k] < 1e-6);
    kt_free(&t);
    free(x);
}

static void test_argmax(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "ArgMax", 2, NULL);
    float x[6] = {1, 3, 3, 5, 5, 0};
    int64_t dx[2] = {2, 3};
    int32_t ax = 1;
    kt_in(&t, 0, DT_F32, 2, dx, x);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "ArgMax");
    int64_t w[2] = {1, 0}; /* ties: the first index */
    assert_int_equal(t.out[0].dtype, DT_I64);
    expect_i64(&t.out[0], w, 2);
    kt_ok(&t, "ArgMin");
    int64_t wm[2] = {0, 2};
    expect_i64(&t.out[0], wm, 2);
    int32_t a0 = -2;
    kt_in(&t, 1, DT_I32, 0, NULL, &a0);
    kt_ok(&t, "ArgMax");
    int64_t w0[3] = {1, 1, 0};
    expect_i64(&t.out[0], w0, 3);
    kt_free(&t);
    kt_init(&t, "ArgMax", 2, A_T("output_type", DT_INT32));
    kt_in(&t, 0, DT_F32, 2, dx, x);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "ArgMax");
    int32_t w32[2] = {1, 0};
    expect_i32(&t.out[0], w32, 2);
    int32_t bad = 2;
    kt_in(&t, 1, DT_I32, 0, NULL, &bad);
    kt_fails(&t, "ArgMax", GN_ERR_GRAPH, "node 'x' (ArgMax): axis 2 is out of range for rank 2");
    kt_free(&t);
}

static void test_softmax(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "Softmax", 1, NULL);
    float x[6] = {0, 1, 2, 1000, 1001, 1002};
    int64_t d[2] = {2, 3};
    kt_in(&t, 0, DT_F32, 2, d, x);
    kt_ok(&t, "Softmax");
    const float *o = t.out[0].data;
    double e0 = 1, e1 = exp(1.0), e2 = exp(2.0), s = e0 + e1 + e2;
    double want[6] = {e0 / s, e1 / s, e2 / s, e0 / s, e1 / s, e2 / s};
    expect_f32_near(&t.out[0], want, 6, 1e-6);
    for (int r = 0; r < 2; r++) assert_true(fabs(o[r * 3] + o[r * 3 + 1] + o[r * 3 + 2] - 1.0) < 1e-6);
    kt_ok(&t, "LogSoftmax");
    double lw[6];
    for (int i = 0; i < 6; i++) lw[i] = log(want[i]);
    expect_f32_near(&t.out[0], lw, 6, 1e-6);
    assert_int_equal(kt_run(&t, "Softmax", GN__K_EXACT_MATH), GN_OK);
    expect_f32_near(&t.out[0], want, 6, 1e-6);
    kt_free(&t);
}

static void test_cumsum(void **state)
{
    (void)state;
    kt t;
    int32_t ax = 1;
    int32_t x[6] = {1, 2, 3, 4, 5, 6};
    int64_t d[2] = {2, 3};
    kt_init(&t, "Cumsum", 2, NULL);
    kt_in(&t, 0, DT_I32, 2, d, x);
    kt_in(&t, 1, DT_I32, 0, NULL, &ax);
    kt_ok(&t, "Cumsum");
    int32_t w[6] = {1, 3, 6, 4, 9, 15};
    expect_i32(&t.out[0], w, 6);
    kt_ok(&t, "Cumprod");
    int32_t wp[6] = {1, 2, 6, 4, 20, 120};
    expect_i32(&t.out[0], wp, 6);
    kt_free(&t);
    kt_init(&t, "Cumsum", 2, AB("exclusive", "true") AB("reverse", "true"));
    kt_in(&t, 0, DT_I32, 2, d, x);
    int32_t a0 = 0;
    kt_in(&t, 1, DT_I32, 0, NULL, &a0);
    kt_ok(&t, "Cumsum");
    int32_t we[6] = {4, 5, 6, 0, 0, 0};
    expect_i32(&t.out[0], we, 6);
    kt_free(&t);
}

/* ---- random ------------------------------------------------------------------------------------------ */
static void run_random(const char *op, const char *attrs, uint64_t seed, uint32_t n_in, const gn__tensor *extra,
                       gn__tensor *out)
{
    kt t;
    kt_init(&t, op, n_in, attrs);
    int32_t shape[1] = {1000};
    int64_t d[1] = {1};
    kt_in(&t, 0, DT_I32, 1, d, shape);
    for (uint32_t i = 1; i < n_in; i++) t.in[i] = extra[i - 1];
    t.c.seed = seed;
    kt_ok(&t, op);
    gn__tensor_copy_ref(out, &t.out[0]);
    kt_free(&t);
}

static bool same_bits(const gn__tensor *a, const gn__tensor *b)
{
    return a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
}

static void test_random(void **state)
{
    (void)state;
    gn__tensor a = {0}, b = {0}, c = {0};
    /* seeded: same bits twice, another seed differs, run seed ignored */
    run_random("RandomUniform", AINT("seed", "1") AINT("seed2", "2"), 0, 1, NULL, &a);
    run_random("RandomUniform", AINT("seed", "1") AINT("seed2", "2"), 99, 1, NULL, &b);
    run_random("RandomUniform", AINT("seed", "3") AINT("seed2", "2"), 0, 1, NULL, &c);
    assert_int_equal(a.dtype, DT_F32);
    assert_int_equal(gn__tensor_numel(&a), 1000);
    assert_true(same_bits(&a, &b));
    assert_false(same_bits(&a, &c));
    double mean = 0;
    for (int i = 0; i < 1000; i++) {
        float v = ((float *)a.data)[i];
        assert_true(v >= 0 && v < 1);
        mean += v / 1000;
    }
    assert_true(fabs(mean - 0.5) < 0.05);
    gn__tensor_release(&a);
    gn__tensor_release(&b);
    gn__tensor_release(&c);

    /* unseeded: the run seed and the node name decide */
    run_random("RandomStandardNormal", NULL, 7, 1, NULL, &a);
    run_random("RandomStandardNormal", NULL, 7, 1, NULL, &b);
    run_random("RandomStandardNormal", NULL, 8, 1, NULL, &c);
    assert_true(same_bits(&a, &b));
    assert_false(same_bits(&a, &c));
    double m = 0, v2 = 0;
    for (int i = 0; i < 1000; i++) {
        double v = ((float *)a.data)[i];
        m += v / 1000;
        v2 += v * v / 1000;
    }
    assert_true(fabs(m) < 0.15 && fabs(v2 - 1) < 0.2);
    gn__tensor_release(&a);
    gn__tensor_release(&b);
    gn__tensor_release(&c);

    /* truncated normal stays in (-2, 2); double output */
    run_random("TruncatedNormal", AINT("seed", "5") A_T("dtype", DT_DOUBLE), 0, 1, NULL, &a);
    assert_int_equal(a.dtype, DT_F64);
    for (int i = 0; i < 1000; i++) assert_true(fabs(((double *)a.data)[i]) < 2);
    gn__tensor_release(&a);

    /* uniform int in [lo, hi) */
    int64_t lo = -3, hi = 4;
    gn__tensor ex[2] = {{0}, {0}};
    ex[0].dtype = ex[1].dtype = DT_I64;
    ex[0].data = &lo;
    ex[1].data = &hi;
    ex[0].nbytes = ex[1].nbytes = 8;
    run_random("RandomUniformInt", AINT("seed", "9") A_T("Tout", DT_INT64), 0, 3, ex, &a);
    int seen[7] = {0};
    for (int i = 0; i < 1000; i++) {
        int64_t v = ((int64_t *)a.data)[i];
        assert_true(v >= -3 && v < 4);
        seen[v + 3] = 1;
    }
    for (int k = 0; k < 7; k++) assert_true(seen[k]);
    gn__tensor_release(&a);

    /* stateless: the seed input decides */
    int32_t s1[2] = {1, 2}, s2[2] = {1, 3};
    gn__tensor seed = {0};
    seed.dtype = DT_I32;
    seed.rank = 1;
    seed.dims[0] = 2;
    seed.nbytes = 8;
    seed.data = s1;
    run_random("StatelessRandomNormal", NULL, 0, 2, &seed, &a);
    run_random("StatelessRandomNormal", NULL, 77, 2, &seed, &b);
    seed.data = s2;
    run_random("StatelessRandomNormal", NULL, 0, 2, &seed, &c);
    assert_true(same_bits(&a, &b));
    assert_false(same_bits(&a, &c));
    gn__tensor_release(&a);
    gn__tensor_release(&b);
    gn__tensor_release(&c);
    run_random("StatelessRandomUniform", A_T("dtype", DT_HALF), 0, 2, &seed, &a);
    assert_int_equal(a.dtype, DT_F16);
    for (int i = 0; i < 1000; i++) {
        float v = (float)((gn__f16 *)a.data)[i];
        assert_true(v >= 0 && v < 1);
    }
    gn__tensor_release(&a);

    /* V2: key / counter from StatelessRandomGetKeyCounter feed the V2 op */
    kt t;
    kt_init(&t, "StatelessRandomGetKeyCounter", 1, NULL);
    kt_in(&t, 0, DT_I32, 1, seed.dims, s2);
    kt_ok(&t, "StatelessRandomGetKeyCounter");
    assert_int_equal(t.out[0].dtype, DT_U64);
    assert_int_equal(t.out[1].dtype, DT_U64);
    gn__tensor key = {0}, ctr = {0};
    gn__tensor_copy_ref(&key, &t.out[0]);
    gn__tensor_copy_ref(&ctr, &t.out[1]);
    kt_free(&t);
    int32_t alg = 1;
    gn__tensor ex3[3] = {key, ctr, {0}};
    ex3[2].dtype = DT_I32;
    ex3[2].data = &alg;
    ex3[2].nbytes = 4;
    run_random("StatelessRandomNormalV2", NULL, 0, 4, ex3, &b);
    seed.data = s2;
    run_random("StatelessRandomNormal", NULL, 0, 2, &seed, &c);
    assert_true(same_bits(&b, &c)); /* v1 and v2 on the same key/counter agree */
    gn__tensor_release(&b);
    gn__tensor_release(&c);
    gn__tensor_release(&key);
    gn__tensor_release(&ctr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_bad_broadcast),
        cmocka_unit_test(test_int_division),
        cmocka_unit_test(test_binary_misc),
        cmocka_unit_test(test_bitwise_compare),
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_unary_misc),
        cmocka_unit_test(test_fast_transcendentals),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_clip_addn),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_sum_order),
        cmocka_unit_test(test_argmax),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_cumsum),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_approximate_equal),
        cmocka_unit_test(test_fake_quant_per_channel),
        cmocka_unit_test(test_special_functions),
        cmocka_unit_test(test_softmax_xent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
