/* The BLAS library is opened by a CPU session, not linked (src/ops/blas.h):
 * loading and optimizing a graph leaves it unloaded, a session loads it and
 * computes with it, and the session's gemm gives the product. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "ops/blas.h"
#include "testutil.h"

/* Whether a library whose file name contains `part` is mapped in this process. */
static bool mapped(const char *part)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, part) != NULL;
    fclose(f);
    return found;
}

static const char *const MATMUL =
    "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
    " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } }"
    " float_val: 1 float_val: 2 float_val: 3 float_val: 4 float_val: 5 float_val: 6 } } } }\n"
    "node { name: 'm' op: 'MatMul' input: 'a' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n";

static void test_session_opens_blas(void **state)
{
    (void)state;
    /* nothing so far has opened it: this program does not link it */
    assert_false(mapped("libopenblas"));
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(MATMUL, strlen(MATMUL), "matmul.pbtxt", NULL, &g), GN_OK);
    gn_options o;
    gn_options_init(&o);
    assert_int_equal(gn_optimize(g, &o, NULL, NULL), GN_OK);
    assert_false(mapped("libopenblas"));

    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    assert_true(mapped("libopenblas")); /* scripts/install-deps.sh installs it */
    float av[2 * 3] = {1, 0, -1, 0.5f, 2, 0.25f};
    gn_tensor a;
    memset(&a, 0, sizeof a);
    a.dtype = 1;
    a.rank = 2;
    a.dims[0] = 2;
    a.dims[1] = 3;
    a.data = av;
    a.nbytes = sizeof av;
    const char *fn[1] = {"a"}, *xn[1] = {"m"};
    gn_tensor out[1];
    memset(out, 0, sizeof out);
    assert_int_equal(gn_session_run(s, fn, &a, 1, xn, out, 1), GN_OK);
    const float want[4] = {1 * 1 + 0 * 3 - 1 * 5, 1 * 2 + 0 * 4 - 1 * 6, 0.5f * 1 + 2 * 3 + 0.25f * 5,
                           0.5f * 2 + 2 * 4 + 0.25f * 6};
    assert_int_equal(out[0].nbytes, sizeof want);
    assert_memory_equal(out[0].data, want, sizeof want);
    gn_tensor_free(&out[0]);
    gn_session_free(s);
    gn_graph_free(g);
}

/* The loader's own table: a product, transposes, the thread count. */
static void test_blas_table(void **state)
{
    (void)state;
    gn__blas b;
    assert_true(gn__blas_open(&b));
    assert_non_null(b.lib);
    assert_non_null(b.sgemm);
    assert_non_null(b.dgemm);
    assert_true(gn__blas_threads(&b) >= 1);
    assert_int_equal(gn__blas_threads(NULL), 1);
    /* C[2,2] = A[2,3] * B^T where B[2,3] */
    const float a[6] = {1, 2, 3, 4, 5, 6}, bt[6] = {1, 0, 1, 0, 1, 0};
    float c[4] = {-1, -1, -1, -1};
    b.sgemm(GN__CBLAS_ROW_MAJOR, GN__CBLAS_NO_TRANS, GN__CBLAS_TRANS, 2, 2, 3, 1.0f, a, 3, bt, 3, 0.0f, c, 2);
    const float want[4] = {4, 2, 10, 5};
    assert_memory_equal(c, want, sizeof want);
    const double ad[4] = {1, 2, 3, 4};
    double cd[4];
    b.dgemm(GN__CBLAS_ROW_MAJOR, GN__CBLAS_TRANS, GN__CBLAS_NO_TRANS, 2, 2, 2, 1.0, ad, 2, ad, 2, 0.0, cd, 2);
    const double wantd[4] = {10, 14, 14, 20};
    assert_memory_equal(cd, wantd, sizeof wantd);
    gn__blas_close(&b);
    assert_null(b.lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_opens_blas),
        cmocka_unit_test(test_blas_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
