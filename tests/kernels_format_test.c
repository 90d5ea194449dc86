/* DataFormatDimMap and DataFormatVecPermute (src/ops/kernels/array_format.c):
 * one-node graphs, a kernel context set up by hand, the exact outputs (the
 * values TensorFlow's data_format_ops give) and the exact error messages.
 * Also each op evaluated by constant folding's path through the registry's
 * shape function agrees with its kernel. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "grapnel/graph.h"
#include "graph/ir.h"
#include "graph/tensor.h"
#include "ops/kernel.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

typedef struct kt {
    gn_graph *g;
    gn__err err;
    gn__tensor in;
    gn__tensor out;
    gn__kctx c;
} kt;

/* Node "n" of `op` reading a placeholder, with raw attr text. */
static kt *kt_op(const char *op, const char *attrs)
{
    kt *k = calloc(1, sizeof *k);
    assert_non_null(k);
    char text[4096];
    snprintf(text, sizeof text,
             "node { name: \"i\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n"
             "node { name: \"n\" op: \"%s\" input: \"i\" %s }\n",
             op, attrs ? attrs : "");
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = 0;
    gn_status s = gn_graph_load_buffer(text, strlen(text), "t.pbtxt", &o, &k->g);
    if (s != GN_OK) fprintf(stderr, "load: %s\n%s\n", gn_graph_errmsg(k->g), text);
    assert_int_equal(s, GN_OK);
    return k;
}

static void kt_free(kt *k)
{
    gn__tensor_release(&k->in);
    gn__tensor_release(&k->out);
    gn_graph_free(k->g);
    free(k);
}

static gn_status kt_run(kt *k)
{
    gn_id id = gn__graph_find(k->g, "n");
    assert_int_not_equal(id, GN_NONE);
    gn__tensor_release(&k->out);
    memset(&k->c, 0, sizeof k->c);
    k->c.g = k->g;
    k->c.node = id;
    k->c.n_in = 1;
    k->c.in = &k->in;
    k->c.n_out = 1;
    k->c.out = &k->out;
    k->c.err = &k->err;
    gn__kernel_fn fn = gn__kernel_for(gn__node_op(k->g, id));
    assert_non_null(fn);
    gn__err_clear(&k->err);
    gn_status s = fn(&k->c);
    if (s != GN_OK) gn__tensor_release(&k->out);
    return s;
}

static gn__tensor mk(int32_t dt, int32_t rank, const int64_t *dims, const void *data)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    for (int i = 0; i < rank; i++) t.dims[i] = dims[i];
    int64_t n = gn__tensor_numel(&t);
    size_t esz = gn__dtype_size(dt);
    gn__buffer *b = gn__buffer_new((size_t)(n ? n : 1) * esz);
    assert_non_null(b);
    if (n) memcpy(b->data, data, (size_t)n * esz);
    t.data = b->data;
    t.nbytes = (size_t)n * esz;
    t.buf = b;
    return t;
}

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define I32(r, d, ...) mk(DT_INT32, r, d, (const int32_t[]){__VA_ARGS__})
#define I64(r, d, ...) mk(DT_INT64, r, d, (const int64_t[]){__VA_ARGS__})
#define FMTS(s, d) "attr { key: 'src_format' value { s: '" s "' } } attr { key: 'dst_format' value { s: '" d "' } } "

/* runs k on input t (taken) and compares the output with want (same dtype and shape) */
static void expect(kt *k, gn__tensor t, gn__tensor want)
{
    gn__tensor_release(&k->in);
    k->in = t;
    gn_status s = kt_run(k);
    if (s != GN_OK) fail_msg("kernel failed: %s", k->err.msg);
    assert_int_equal(k->out.dtype, want.dtype);
    assert_int_equal(k->out.rank, want.rank);
    for (int i = 0; i < want.rank; i++) assert_int_equal(k->out.dims[i], want.dims[i]);
    assert_int_equal(k->out.nbytes, want.nbytes);
    if (want.nbytes) assert_memory_equal(k->out.data, want.data, want.nbytes);
    gn__tensor_release(&want);
}

static void expect_err(kt *k, gn__tensor t, const char *msg)
{
    gn__tensor_release(&k->in);
    k->in = t;
    assert_int_equal(kt_run(k), GN_ERR_GRAPH);
    assert_string_equal(k->err.msg, msg);
}

static void test_vec_permute_vectors(void **state)
{
    (void)state;
    /* defaults: NHWC to NCHW */
    kt *k = kt_op("DataFormatVecPermute", NULL);
    expect(k, I32(1, D(4), 1, 2, 3, 4), I32(1, D(4), 1, 4, 2, 3));
    expect(k, I64(1, D(4), 10, 20, 30, 40), I64(1, D(4), 10, 40, 20, 30));
    /* two values: the spatial dimensions (H, W in both formats: unchanged) */
    expect(k, I32(1, D(2), 7, 9), I32(1, D(2), 7, 9));
    kt_free(k);

    k = kt_op("DataFormatVecPermute", FMTS("NCHW", "NHWC"));
    expect(k, I32(1, D(4), 1, 2, 3, 4), I32(1, D(4), 1, 3, 4, 2));
    expect(k, I64(1, D(4), -1, 5, 6, 7), I64(1, D(4), -1, 6, 7, 5));
    kt_free(k);

    /* W before H in the destination: the spatial pair swaps */
    k = kt_op("DataFormatVecPermute", FMTS("NHWC", "NWHC"));
    expect(k, I32(1, D(2), 7, 9), I32(1, D(2), 9, 7));
    expect(k, I64(1, D(4), 1, 2, 3, 4), I64(1, D(4), 1, 3, 2, 4));
    kt_free(k);

    /* 5-D formats */
    k = kt_op("DataFormatVecPermute", FMTS("NDHWC", "NCDHW"));
    expect(k, I32(1, D(5), 1, 2, 3, 4, 5), I32(1, D(5), 1, 5, 2, 3, 4));
    kt_free(k);
}

static void test_vec_permute_pairs(void **state)
{
    (void)state;
    /* [4, 2] paddings */
    kt *k = kt_op("DataFormatVecPermute", NULL);
    expect(k, I32(2, D(4, 2), 0, 0, 1, 2, 3, 4, 5, 6), I32(2, D(4, 2), 0, 0, 5, 6, 1, 2, 3, 4));
    expect(k, I64(2, D(4, 2), 9, 8, 1, 2, 3, 4, 5, 6), I64(2, D(4, 2), 9, 8, 5, 6, 1, 2, 3, 4));
    /* [2, 2]: spatial pairs, H and W keep their order here */
    expect(k, I32(2, D(2, 2), 1, 2, 3, 4), I32(2, D(2, 2), 1, 2, 3, 4));
    kt_free(k);

    k = kt_op("DataFormatVecPermute", FMTS("NCHW", "NHWC"));
    expect(k, I32(2, D(4, 2), 0, 0, 1, 2, 3, 4, 5, 6), I32(2, D(4, 2), 0, 0, 3, 4, 5, 6, 1, 2));
    kt_free(k);

    /* TensorFlow's own case (nn_test.py): NHWC to HWNC */
    k = kt_op("DataFormatVecPermute", FMTS("NHWC", "HWNC"));
    expect(k, I32(2, D(4, 2), 7, 4, 9, 3, 4, 5, 5, 1), I32(2, D(4, 2), 9, 3, 4, 5, 7, 4, 5, 1));
    kt_free(k);

    k = kt_op("DataFormatVecPermute", FMTS("NHWC", "NWHC"));
    expect(k, I64(2, D(2, 2), 1, 2, 3, 4), I64(2, D(2, 2), 3, 4, 1, 2));
    kt_free(k);
}

static void test_vec_permute_errors(void **state)
{
    (void)state;
    kt *k = kt_op("DataFormatVecPermute", NULL);
    expect_err(k, I32(1, D(3), 1, 2, 3),
               "node 'n' (DataFormatVecPermute): 1D input must be of size 2 or 4, but got shape [3]");
    expect_err(k, I32(2, D(4, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
               "node 'n' (DataFormatVecPermute): Second dimension of 2D input must be of size 2, but got shape [4,3]");
    expect_err(k, I32(2, D(3, 2), 0, 0, 0, 0, 0, 0),
               "node 'n' (DataFormatVecPermute): First dimension of 2D input must be of size 2 or 4, but got shape "
               "[3,2]");
    expect_err(k, I32(3, D(4, 2, 1), 0, 0, 0, 0, 0, 0, 0, 0),
               "node 'n' (DataFormatVecPermute): input must be a vector or 2D tensor, but got shape [4,2,1]");
    expect_err(k, I32(0, NULL, 3), "node 'n' (DataFormatVecPermute): input must be a vector or 2D tensor, but got shape []");
    expect_err(k, mk(DT_FLOAT, 1, D(4), (const float[]){1, 2, 3, 4}),
               "node 'n' (DataFormatVecPermute): x must be int32 or int64, not float");
    kt_free(k);

    k = kt_op("DataFormatVecPermute", FMTS("NHW", "NCHW"));
    expect_err(k, I32(1, D(4), 1, 2, 3, 4),
               "node 'n' (DataFormatVecPermute): Source format must be of length 4 or 5, received src_format = NHW");
    kt_free(k);
    k = kt_op("DataFormatVecPermute", FMTS("NHWC", "NCHWD"));
    expect_err(k, I32(1, D(4), 1, 2, 3, 4),
               "node 'n' (DataFormatVecPermute): Destination and source format must determine a permutation, got "
               "NHWC and NCHWD");
    kt_free(k);
    k = kt_op("DataFormatVecPermute", FMTS("NHWC", "NHHC"));
    expect_err(k, I32(1, D(4), 1, 2, 3, 4),
               "node 'n' (DataFormatVecPermute): Destination and source format must determine a permutation, got "
               "NHWC and NHHC");
    kt_free(k);
    k = kt_op("DataFormatVecPermute", FMTS("NHHC", "NHHC"));
    expect_err(k, I32(1, D(4), 1, 2, 3, 4),
               "node 'n' (DataFormatVecPermute): Destination and source format must determine a permutation, got "
               "NHHC and NHHC");
    kt_free(k);
    /* two values need H and W in the formats */
    k = kt_op("DataFormatVecPermute", FMTS("ABCD", "DCBA"));
    expect(k, I32(1, D(4), 1, 2, 3, 4), I32(1, D(4), 4, 3, 2, 1));
    expect_err(k, I32(1, D(2), 1, 2),
               "node 'n' (DataFormatVecPermute): Format specifier must contain H and W for 2D case");
    kt_free(k);
}

static void test_dim_map(void **state)
{
    (void)state;
    kt *k = kt_op("DataFormatDimMap", NULL);
    /* NHWC to NCHW: N->0, H->2, W->3, C->1, negative axes counted from the end */
    expect(k, I32(1, D(8), -4, -3, -2, -1, 0, 1, 2, 3), I32(1, D(8), 0, 2, 3, 1, 0, 2, 3, 1));
    expect(k, I64(0, NULL, 3), I64(0, NULL, 1));
    expect(k, I32(2, D(2, 2), 1, 2, -1, 0), I32(2, D(2, 2), 2, 3, 1, 0));
    /* outside [-4, 4): as TensorFlow's select chain, (x + 4) % 4, and a
     * negative remainder picks the last entry */
    expect(k, I32(1, D(3), 4, 5, -5), I32(1, D(3), 0, 2, 1));
    expect(k, I32(1, D(2), 2147483647, -2147483647 - 1), I32(1, D(2), 1, 0));
    expect(k, I64(1, D(2), INT64_MAX, INT64_MIN), I64(1, D(2), 1, 0));
    expect(k, I32(1, D(0), 0), I32(1, D(0), 0));
    expect_err(k, mk(DT_FLOAT, 0, NULL, (const float[]){1}), "node 'n' (DataFormatDimMap): x must be int32 or int64, not float");
    kt_free(k);

    k = kt_op("DataFormatDimMap", FMTS("NCHW", "NHWC"));
    expect(k, I32(1, D(4), 0, 1, 2, 3), I32(1, D(4), 0, 3, 1, 2));
    expect(k, I64(1, D(2), -3, -1), I64(1, D(2), 3, 2));
    kt_free(k);

    k = kt_op("DataFormatDimMap", FMTS("NDHWC", "NCDHW"));
    expect(k, I32(1, D(6), 0, 1, 2, 3, 4, -1), I32(1, D(6), 0, 2, 3, 4, 1, 1));
    kt_free(k);

    k = kt_op("DataFormatDimMap", FMTS("NHWC", "NCHWX"));
    expect_err(k, I32(0, NULL, 1),
               "node 'n' (DataFormatDimMap): Destination and source format must determine a permutation, got NHWC "
               "and NCHWX");
    kt_free(k);
    k = kt_op("DataFormatDimMap", FMTS("NHWC", "NCHWXY"));
    expect_err(k, I32(0, NULL, 1),
               "node 'n' (DataFormatDimMap): Destination format must be of length 4 or 5, received dst_format = "
               "NCHWXY");
    kt_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vec_permute_vectors),
        cmocka_unit_test(test_vec_permute_pairs),
        cmocka_unit_test(test_vec_permute_errors),
        cmocka_unit_test(test_dim_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
