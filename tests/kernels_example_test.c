/* CPU kernels of src/ops/kernels/example.c (ParseExampleV2) and
 * src/ops/kernels/sparse_segment.c (SparseSegmentSum / Mean / SqrtN,
 * SparseReshape, SparseFillEmptyRows, SparseReduceSum).
 *
 * The examples are written byte by byte here (tf.train.Example's wire
 * format: Example.features = 1, Features.feature = 1 as map entries of key = 1
 * and value = 2, Feature's lists bytes = 1, float = 2, int64 = 3). Every
 * expected value and message was printed by TensorFlow 2.21 for the same
 * examples (tf.io.parse_example, tf.raw_ops.SparseSegment*), quoted beside
 * each. A whole Serving signature over them is checked against TensorFlow in
 * tests/savedmodel_test.c (parse_example). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* ---- a tiny protobuf writer ------------------------------------------------------------------ */
typedef struct pbuf {
    uint8_t b[512];
    size_t n;
} pbuf;

static void put_varint(pbuf *p, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        p->b[p->n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
}

static void put_ld(pbuf *p, int field, const void *d, size_t n)
{
    put_varint(p, ((uint64_t)field << 3) | 2);
    put_varint(p, n);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

/* One map entry of Features: key -> a Feature whose list `kind` (1 bytes, 2
 * float, 3 int64) holds the packed payload (bytes: each value one field). */
static void feature(pbuf *features, const char *key, int kind, const void *payload, size_t n)
{
    pbuf list = {.n = 0}, feat = {.n = 0}, entry = {.n = 0};
    if (kind == 1) {
        const char *const *s = payload;
        for (size_t i = 0; i < n; i++) put_ld(&list, 1, s[i], strlen(s[i]));
    } else if (kind == 2) {
        put_ld(&list, 1, payload, n * 4);
    } else {
        pbuf packed = {.n = 0};
        for (size_t i = 0; i < n; i++) put_varint(&packed, (uint64_t)((const int64_t *)payload)[i]);
        put_ld(&list, 1, packed.b, packed.n);
    }
    put_ld(&feat, kind, list.b, list.n);
    put_ld(&entry, 1, key, strlen(key));
    put_ld(&entry, 2, feat.b, feat.n);
    put_ld(features, 1, entry.b, entry.n);
}

/* Example bytes from Features bytes. */
static void example(pbuf *out, const pbuf *features)
{
    out->n = 0;
    put_ld(out, 1, features->b, features->n);
}

/* ParseExampleV2 with dense x: float [2] (default [9, 9] or required) and n:
 * int64 [] (required), or sparse ids: int64. */
#define PE_DENSE(xdefault)                                                                                          \
    "node { name: 'n' op: 'ParseExampleV2' input: 's' input: 'names' input: 'sk' input: 'dk' input: 'rk' "       \
    "input: 'dx' input: 'dn' attr { key: 'Tdense' value { list { type: DT_FLOAT type: DT_INT64 } } } "           \
    "attr { key: 'num_sparse' value { i: 0 } } attr { key: 'sparse_types' value { list { } } } "                \
    "attr { key: 'ragged_value_types' value { list { } } } attr { key: 'ragged_split_types' value { list { } } } " \
    "attr { key: 'dense_shapes' value { list { shape { dim { size: 2 } } shape { } } } } }\n"

static gn_graph *pe_graph(const char *node)
{
    char text[4096];
    snprintf(text, sizeof text,
             "node { name: 's' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
             "node { name: 'names' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
             "node { name: 'sk' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
             "node { name: 'dk' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
             "node { name: 'rk' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
             "node { name: 'dx' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
             "node { name: 'dn' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT64 } } }\n%s",
             node);
    return gn_pt_kload(text, 0);
}

typedef struct pe_in {
    gn__tstring ser[2], names, dk[2], sk[1];
    float xdef[2];
    int64_t ndef;
    gn__tensor t[7];
} pe_in;

/* Inputs for PE_DENSE over the examples (x's default given or empty). */
static void pe_inputs(pe_in *in, const pbuf *ex, int64_t n_ex, bool xdefault)
{
    for (int64_t i = 0; i < n_ex; i++) in->ser[i] = (gn__tstring){(const char *)ex[i].b, ex[i].n};
    in->dk[0] = (gn__tstring){"x", 1};
    in->dk[1] = (gn__tstring){"n", 1};
    in->xdef[0] = in->xdef[1] = 9.0f;
    int64_t zero = 0, two = 2;
    in->t[0] = gn_pt_ktensor(DT_STRING, 1, &n_ex, in->ser);
    in->t[1] = gn_pt_ktensor(DT_STRING, 1, &zero, &in->names);
    in->t[2] = gn_pt_ktensor(DT_STRING, 1, &zero, in->sk);
    in->t[3] = gn_pt_ktensor(DT_STRING, 1, &two, in->dk);
    in->t[4] = gn_pt_ktensor(DT_STRING, 1, &zero, in->sk);
    in->t[5] = xdefault ? gn_pt_ktensor(DT_FLOAT, 1, &two, in->xdef) : gn_pt_ktensor(DT_FLOAT, 1, &zero, in->xdef);
    in->t[6] = gn_pt_ktensor(DT_INT64, 1, &zero, &in->ndef);
}

/*   tf.io.parse_example([ex(x=[1., 2.], n=[5]), ex(n=[6])],
 *       {"x": FixedLenFeature([2], tf.float32, default_value=[9., 9.]), "n": FixedLenFeature([], tf.int64)})
 *   = {'n': [5, 6], 'x': [[1.0, 2.0], [9.0, 9.0]]}
 * and the messages for an int64 x, a missing n, three values of x, bytes that
 * are no Example. */
static void test_parse_dense(void **state)
{
    (void)state;
    gn_graph *g = pe_graph(PE_DENSE(1));
    const float x12[2] = {1, 2}, x123[3] = {1, 2, 3};
    const int64_t n5 = 5, n6 = 6, i12[2] = {1, 2};
    pbuf f0 = {.n = 0}, f1 = {.n = 0}, ex[2];
    feature(&f0, "x", 2, x12, 2);
    feature(&f0, "n", 3, &n5, 1);
    feature(&f1, "n", 3, &n6, 1);
    example(&ex[0], &f0);
    example(&ex[1], &f1);
    pe_in in;
    pe_inputs(&in, ex, 2, true);
    gn__tensor out[2];
    gn_pt_krun_ok(g, in.t, 7, out, 2, 0);
    assert_int_equal(out[0].rank, 2);
    assert_int_equal(out[0].dims[0], 2);
    assert_int_equal(out[0].dims[1], 2);
    const float wx[4] = {1, 2, 9, 9};
    assert_memory_equal(out[0].data, wx, sizeof wx);
    assert_int_equal(out[1].rank, 1);
    const int64_t wn[2] = {5, 6};
    assert_memory_equal(out[1].data, wn, sizeof wn);
    gn_pt_krelease(out, 2);

    pbuf bad = {.n = 0};
    feature(&bad, "x", 3, i12, 2);
    feature(&bad, "n", 3, &n5, 1);
    example(&ex[0], &bad);
    pe_inputs(&in, ex, 1, true);
    gn_pt_kexpect_error(g, in.t, 7, 2, GN_ERR_GRAPH,
                        "node 'n' (ParseExampleV2): Name: <unknown>, Key: x, Index: 0.  Data types don't match. Data "
                        "type: int64 but expected type: float");
    pbuf nox = {.n = 0};
    feature(&nox, "x", 2, x12, 2);
    example(&ex[0], &nox);
    pe_inputs(&in, ex, 1, true);
    gn_pt_kexpect_error(g, in.t, 7, 2, GN_ERR_GRAPH,
                        "node 'n' (ParseExampleV2): Name: <unknown>, Feature: n (data type: int64) is required but "
                        "could not be found.");
    pbuf three = {.n = 0};
    feature(&three, "x", 2, x123, 3);
    feature(&three, "n", 3, &n5, 1);
    example(&ex[0], &three);
    pe_inputs(&in, ex, 1, true);
    gn_pt_kexpect_error(g, in.t, 7, 2, GN_ERR_GRAPH,
                        "node 'n' (ParseExampleV2): Name: <unknown>, Key: x, Index: 0.  Number of float values != "
                        "expected.  Values size: 3 but output shape: [2]");
    ex[0].n = 2;
    ex[0].b[0] = ex[0].b[1] = 0xff;
    pe_inputs(&in, ex, 1, true);
    gn_pt_kexpect_error(g, in.t, 7, 2, GN_ERR_GRAPH,
                        "node 'n' (ParseExampleV2): Could not parse example input, value: example 0 is not a "
                        "tf.train.Example");
    gn_graph_free(g);
}

/*   tf.io.parse_example([ex(ids=[3, 4, 5]), ex(x=[1., 2.])], {"ids": VarLenFeature(tf.int64)})
 *   = indices [[0,0],[0,1],[0,2]], values [3,4,5], dense_shape [2,3]
 * (strings as a second sparse key: bytes lists, "a", "bc" and none). */
static void test_parse_sparse(void **state)
{
    (void)state;
    gn_graph *g = pe_graph(
        "node { name: 'n' op: 'ParseExampleV2' input: 's' input: 'names' input: 'sk' input: 'dk' input: 'rk' "
        "attr { key: 'Tdense' value { list { } } } attr { key: 'num_sparse' value { i: 2 } } "
        "attr { key: 'sparse_types' value { list { type: DT_INT64 type: DT_STRING } } } "
        "attr { key: 'ragged_value_types' value { list { } } } attr { key: 'ragged_split_types' value { list { } } } "
        "attr { key: 'dense_shapes' value { list { } } } }\n");
    const int64_t ids[3] = {3, 4, 5};
    const float x12[2] = {1, 2};
    const char *const words[2] = {"a", "bc"};
    pbuf f0 = {.n = 0}, f1 = {.n = 0}, ex[2];
    feature(&f0, "ids", 3, ids, 3);
    feature(&f0, "w", 1, words, 2);
    feature(&f1, "x", 2, x12, 2);
    example(&ex[0], &f0);
    example(&ex[1], &f1);
    gn__tstring ser[2] = {{(const char *)ex[0].b, ex[0].n}, {(const char *)ex[1].b, ex[1].n}}, none;
    gn__tstring sk[2] = {{"ids", 3}, {"w", 1}};
    int64_t two = 2, zero = 0;
    gn__tensor in[5] = {gn_pt_ktensor(DT_STRING, 1, &two, ser), gn_pt_ktensor(DT_STRING, 1, &zero, &none),
                        gn_pt_ktensor(DT_STRING, 1, &two, sk), gn_pt_ktensor(DT_STRING, 1, &zero, &none),
                        gn_pt_ktensor(DT_STRING, 1, &zero, &none)};
    gn__tensor out[6];
    gn_pt_krun_ok(g, in, 5, out, 6, 0);
    const int64_t wi[6] = {0, 0, 0, 1, 0, 2}, wv[3] = {3, 4, 5}, ws[2] = {2, 3};
    assert_int_equal(out[0].dims[0], 3);
    assert_int_equal(out[0].dims[1], 2);
    assert_memory_equal(out[0].data, wi, sizeof wi);
    assert_memory_equal(out[2].data, wv, sizeof wv);
    assert_memory_equal(out[4].data, ws, sizeof ws);
    const gn__tstring *sv = out[3].data;
    assert_int_equal(out[3].dims[0], 2);
    assert_true(sv[0].len == 1 && sv[0].ptr[0] == 'a' && sv[1].len == 2 && !memcmp(sv[1].ptr, "bc", 2));
    const int64_t ws2[2] = {2, 2};
    assert_memory_equal(out[5].data, ws2, sizeof ws2);
    gn_pt_krelease(out, 6);
    gn_graph_free(g);
}

/*   tf.raw_ops.SparseSegmentMean(data=[[1,2],[3,4],[5,6]], indices=[0,2,1], segment_ids=[0,0,2])
 *   = [[3,4],[0,0],[3,4]]; SqrtN = [[4.2426405,5.656854],[0,0],[3,4]]
 *   segment_ids [1,0]: "segment ids are not increasing"; indices [0,5] of 2 rows:
 *   "Bad: indices[1] == 5 out of range [0, 2)" */
static void test_sparse_segment(void **state)
{
    (void)state;
    const char *tys[3] = {"DT_FLOAT", "DT_INT32", "DT_INT32"};
    const char *attrs = "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tidx' value { type: DT_INT32 } } "
                        "attr { key: 'Tsegmentids' value { type: DT_INT32 } }";
    float data[6] = {1, 2, 3, 4, 5, 6};
    int32_t idx[3] = {0, 2, 1}, seg[3] = {0, 0, 2};
    int64_t dd[2] = {3, 2}, three = 3;
    gn__tensor in[3] = {gn_pt_ktensor(DT_FLOAT, 2, dd, data), gn_pt_ktensor(DT_INT32, 1, &three, idx),
                        gn_pt_ktensor(DT_INT32, 1, &three, seg)};
    gn__tensor out;
    gn_graph *g = gn_pt_kgraph("SparseSegmentMean", 3, tys, attrs, 0);
    gn_pt_krun_ok(g, in, 3, &out, 1, 0);
    const float wm[6] = {3, 4, 0, 0, 3, 4};
    assert_memory_equal(out.data, wm, sizeof wm);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
    g = gn_pt_kgraph("SparseSegmentSqrtN", 3, tys, attrs, 0);
    gn_pt_krun_ok(g, in, 3, &out, 1, 0);
    const float *y = out.data;
    assert_float_equal(y[0], 4.2426405f, 1e-6);
    assert_float_equal(y[1], 5.656854f, 1e-6);
    assert_float_equal(y[4], 3.0f, 0);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
    g = gn_pt_kgraph("SparseSegmentSum", 3, tys, attrs, 0);
    int32_t unsorted[2] = {1, 0}, two_idx[2] = {0, 1}, far[2] = {0, 5}, zeros[2] = {0, 0};
    int64_t two = 2, d2[2] = {2, 2};
    gn__tensor bad[3] = {gn_pt_ktensor(DT_FLOAT, 2, d2, data), gn_pt_ktensor(DT_INT32, 1, &two, two_idx),
                         gn_pt_ktensor(DT_INT32, 1, &two, unsorted)};
    gn_pt_kexpect_error(g, bad, 3, 1, GN_ERR_GRAPH, "node 'n' (SparseSegmentSum): segment ids are not increasing");
    bad[1] = gn_pt_ktensor(DT_INT32, 1, &two, far);
    bad[2] = gn_pt_ktensor(DT_INT32, 1, &two, zeros);
    gn_pt_kexpect_error(g, bad, 3, 1, GN_ERR_GRAPH,
                        "node 'n' (SparseSegmentSum): Bad: indices[1] == 5 out of range [0, 2)");
    gn_graph_free(g);
}

/*   tf.raw_ops.SparseReshape([[0,1],[1,2],[2,3]], [3,4], [2,-1]) = indices [[0,1],[1,0],[1,5]], shape [2,6]
 *   tf.raw_ops.SparseFillEmptyRows([[0,1],[2,0],[0,0],[2,2]], [1,2,3,4], [4,3], -1)
 *     = indices [[0,1],[0,0],[1,0],[2,0],[2,2],[3,0]], values [1,3,-1,2,4,-1],
 *       empty [F,T,F,T], reverse_index_map [0,3,1,4]
 *   strings: ([[1,0]], ["ab"], [3,2], "z") = [[0,0],[1,0],[2,0]], ["z","ab","z"], [T,F,T], [1] */
static void test_sparse_reshape_and_fill(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("SparseReshape", 3, (const char *const[]){"DT_INT64", "DT_INT64", "DT_INT64"}, "", 0);
    int64_t ix[6] = {0, 1, 1, 2, 2, 3}, ish[2] = {3, 4}, nsh[2] = {2, -1}, d32[2] = {3, 2}, two = 2;
    gn__tensor in[3] = {gn_pt_ktensor(DT_INT64, 2, d32, ix), gn_pt_ktensor(DT_INT64, 1, &two, ish),
                        gn_pt_ktensor(DT_INT64, 1, &two, nsh)};
    gn__tensor out[4];
    gn_pt_krun_ok(g, in, 3, out, 2, 0);
    const int64_t wi[6] = {0, 1, 1, 0, 1, 5}, ws[2] = {2, 6};
    assert_memory_equal(out[0].data, wi, sizeof wi);
    assert_memory_equal(out[1].data, ws, sizeof ws);
    gn_pt_krelease(out, 2);
    int64_t five[2] = {5, -1};
    in[2] = gn_pt_ktensor(DT_INT64, 1, &two, five);
    gn_pt_kexpect_error(g, in, 3, 2, GN_ERR_GRAPH,
                        "node 'n' (SparseReshape): Input to reshape is a SparseTensor with 12 dense values, but the "
                        "requested shape requires a multiple of 5");
    int64_t huge[2] = {INT64_MAX / 2, 3}, outside[6] = {0, 1, 1, 7, 2, 3};
    in[1] = gn_pt_ktensor(DT_INT64, 1, &two, huge);
    gn_pt_kexpect_error(g, in, 3, 2, GN_ERR_GRAPH,
                        "node 'n' (SparseReshape): input_shape dimension 1 is negative or the shape overflows");
    in[0] = gn_pt_ktensor(DT_INT64, 2, d32, outside);
    in[1] = gn_pt_ktensor(DT_INT64, 1, &two, ish);
    in[2] = gn_pt_ktensor(DT_INT64, 1, &two, nsh);
    gn_pt_kexpect_error(g, in, 3, 2, GN_ERR_GRAPH,
                        "node 'n' (SparseReshape): index 7 of entry 1 is outside input_shape");
    gn_graph_free(g);

    g = gn_pt_kgraph("SparseFillEmptyRows", 4, (const char *const[]){"DT_INT64", "DT_FLOAT", "DT_INT64", "DT_FLOAT"},
                     "attr { key: 'T' value { type: DT_FLOAT } }", 0);
    int64_t fi[8] = {0, 1, 2, 0, 0, 0, 2, 2}, fd[2] = {4, 2}, dsh[2] = {4, 3}, four = 4;
    float fv[4] = {1, 2, 3, 4}, dflt = -1;
    gn__tensor fin[4] = {gn_pt_ktensor(DT_INT64, 2, fd, fi), gn_pt_ktensor(DT_FLOAT, 1, &four, fv),
                         gn_pt_ktensor(DT_INT64, 1, &two, dsh), gn_pt_ktensor(DT_FLOAT, 0, NULL, &dflt)};
    gn_pt_krun_ok(g, fin, 4, out, 4, 0);
    const int64_t wfi[12] = {0, 1, 0, 0, 1, 0, 2, 0, 2, 2, 3, 0}, wrev[4] = {0, 3, 1, 4};
    const float wfv[6] = {1, 3, -1, 2, 4, -1};
    const uint8_t wempty[4] = {0, 1, 0, 1};
    assert_int_equal(out[0].dims[0], 6);
    assert_memory_equal(out[0].data, wfi, sizeof wfi);
    assert_memory_equal(out[1].data, wfv, sizeof wfv);
    assert_memory_equal(out[2].data, wempty, sizeof wempty);
    assert_memory_equal(out[3].data, wrev, sizeof wrev);
    gn_pt_krelease(out, 4);
    gn_graph_free(g);

    g = gn_pt_kgraph("SparseFillEmptyRows", 4, (const char *const[]){"DT_INT64", "DT_STRING", "DT_INT64", "DT_STRING"},
                     "attr { key: 'T' value { type: DT_STRING } }", 0);
    int64_t si[2] = {1, 0}, sd[2] = {1, 2}, ssh[2] = {3, 2}, one = 1;
    gn__tstring sv = {"ab", 2}, sdef = {"z", 1};
    gn__tensor sin[4] = {gn_pt_ktensor(DT_INT64, 2, sd, si), gn_pt_ktensor(DT_STRING, 1, &one, &sv),
                         gn_pt_ktensor(DT_INT64, 1, &two, ssh), gn_pt_ktensor(DT_STRING, 0, NULL, &sdef)};
    gn_pt_krun_ok(g, sin, 4, out, 4, 0);
    const gn__tstring *o = out[1].data;
    assert_int_equal(out[1].dims[0], 3);
    assert_true(o[0].len == 1 && o[0].ptr[0] == 'z' && o[1].len == 2 && !memcmp(o[1].ptr, "ab", 2) && o[2].len == 1 &&
                o[2].ptr[0] == 'z');
    assert_int_equal(((const int64_t *)out[3].data)[0], 1);
    gn_pt_krelease(out, 4);
    gn_graph_free(g);
}

/*   tf.raw_ops.SparseReduceSum([[0,1],[1,0],[1,2],[0,1]], [1,2,3,4], [2,3], axes [1]) = [5, 5]
 *   axes -2 with keep_dims = [[2, 5, 3]]; axes [0, 1] = 10; axis 2:
 *   "Invalid reduction dimension 2, for input with 2 dimensions." */
static void test_sparse_reduce_sum(void **state)
{
    (void)state;
    const char *tys[4] = {"DT_INT64", "DT_FLOAT", "DT_INT64", "DT_INT32"};
    int64_t ix[8] = {0, 1, 1, 0, 1, 2, 0, 1}, d42[2] = {4, 2}, sh[2] = {2, 3}, two = 2, four = 4, one = 1;
    float v[4] = {1, 2, 3, 4};
    int32_t ax1 = 1, axm2 = -2, ax01[2] = {0, 1}, ax2 = 2;
    gn__tensor in[4] = {gn_pt_ktensor(DT_INT64, 2, d42, ix), gn_pt_ktensor(DT_FLOAT, 1, &four, v),
                        gn_pt_ktensor(DT_INT64, 1, &two, sh), gn_pt_ktensor(DT_INT32, 1, &one, &ax1)};
    gn__tensor out;
    gn_graph *g = gn_pt_kgraph("SparseReduceSum", 4, tys, "attr { key: 'keep_dims' value { b: false } }", 0);
    gn_pt_krun_ok(g, in, 4, &out, 1, 0);
    const float w1[2] = {5, 5};
    assert_int_equal(out.rank, 1);
    assert_memory_equal(out.data, w1, sizeof w1);
    gn_pt_krelease(&out, 1);
    in[3] = gn_pt_ktensor(DT_INT32, 1, &two, ax01);
    gn_pt_krun_ok(g, in, 4, &out, 1, 0);
    assert_int_equal(out.rank, 0);
    assert_true(((const float *)out.data)[0] == 10.0f);
    gn_pt_krelease(&out, 1);
    in[3] = gn_pt_ktensor(DT_INT32, 0, NULL, &ax2);
    gn_pt_kexpect_error(g, in, 4, 1, GN_ERR_GRAPH,
                        "node 'n' (SparseReduceSum): Invalid reduction dimension 2, for input with 2 dimensions.");
    gn_graph_free(g);
    g = gn_pt_kgraph("SparseReduceSum", 4, tys, "attr { key: 'keep_dims' value { b: true } }", 0);
    in[3] = gn_pt_ktensor(DT_INT32, 0, NULL, &axm2);
    gn_pt_krun_ok(g, in, 4, &out, 1, 0);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.dims[0], 1);
    assert_int_equal(out.dims[1], 3);
    const float w2[3] = {2, 5, 3};
    assert_memory_equal(out.data, w2, sizeof w2);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_dense),
        cmocka_unit_test(test_parse_sparse),
        cmocka_unit_test(test_sparse_segment),
        cmocka_unit_test(test_sparse_reshape_and_fill),
        cmocka_unit_test(test_sparse_reduce_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
