/* CPU kernels of src/ops/kernels/regex.c (RegexReplace, StaticRegexReplace,
 * RegexFullMatch, StaticRegexFullMatch) and src/ops/kernels/ragged.c
 * (RaggedTensorToTensor, RaggedRange), UnsortedSegmentJoin and Equal /
 * NotEqual on strings.
 *
 * The regex cases are TensorFlow's (tools/make_regex_cases.py writes
 * tests/data/misc/regex_cases.tsv: RE2 through tf.raw_ops): every pattern
 * on every text, compared byte for byte, and the patterns TensorFlow
 * refuses refused. The ragged cases were printed by TensorFlow 2.21 too
 * (RaggedTensor.to_tensor, quoted beside each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "testutil.h"
#include "passtest.h"

#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

/* hex ("-": empty) into a malloc'd buffer; its length in *n */
static char *unhex(const char *h, size_t *n)
{
    if (!strcmp(h, "-")) {
        *n = 0;
        return calloc(1, 1);
    }
    size_t l = strlen(h) / 2;
    char *b = malloc(l + 1);
    assert_non_null(b);
    for (size_t i = 0; i < l; i++) {
        unsigned v;
        assert_int_equal(sscanf(h + 2 * i, "%2x", &v), 1);
        b[i] = (char)v;
    }
    b[l] = 0;
    *n = l;
    return b;
}

static gn__tensor str1(gn__tstring *buf, const char *s, size_t n, int rank)
{
    int64_t one = 1;
    *buf = (gn__tstring){s, n};
    return gn_pt_ktensor(DT_STRING, rank, &one, buf);
}

static void test_regex_cases_against_tensorflow(void **state)
{
    (void)state;
    char path[4096];
    gn_test_data("misc/regex_cases.tsv", path, sizeof path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    gn_graph *rep[2] = {
        gn_pt_kgraph("RegexReplace", 3, (const char *const[]){"DT_STRING", "DT_STRING", "DT_STRING"},
                     "attr { key: 'replace_global' value { b: false } }", 0),
        gn_pt_kgraph("RegexReplace", 3, (const char *const[]){"DT_STRING", "DT_STRING", "DT_STRING"},
                     "attr { key: 'replace_global' value { b: true } }", 0)};
    gn_graph *full = gn_pt_kgraph("RegexFullMatch", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, "", 0);
    char line[65536];
    size_t cases = 0, refused = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *fld[6];
        char *save = NULL;
        int nf = 0;
        for (char *t = strtok_r(line, "\t", &save); t && nf < 6; t = strtok_r(NULL, "\t", &save)) fld[nf++] = t;
        assert_int_equal(nf, 6);
        size_t pl, rl, il;
        char *pat = unhex(fld[1], &pl), *rw = unhex(fld[2], &rl), *in = unhex(fld[4], &il);
        gn__tstring b[3];
        gn__tensor x[3] = {str1(&b[0], in, il, 1), str1(&b[1], pat, pl, 0), str1(&b[2], rw, rl, 0)};
        bool is_full = !strcmp(fld[0], "full");
        gn_graph *g = is_full ? full : rep[fld[3][0] == '1'];
        gn__tensor out;
        gn__err err = {0};
        gn_status st = gn_pt_krun(g, x, is_full ? 2 : 3, &out, 1, 0, &err);
        if (!strcmp(fld[5], "ERR")) {
            if (st == GN_OK) gn_pt_krelease(&out, 1);
            if (st == GN_OK) fail_msg("pattern '%s' (hex %s): TensorFlow refuses it, grapnel ran it", pat, fld[1]);
            assert_int_equal(st, GN_ERR_GRAPH);
            refused++;
        } else {
            if (st != GN_OK) fail_msg("pattern '%s' on '%s': %s", pat, in, err.msg);
            if (is_full) {
                assert_int_equal(out.dtype, DT_BOOL);
                if (((const uint8_t *)out.data)[0] != (fld[5][0] == '1'))
                    fail_msg("full match of '%s' on '%s': got %d, TensorFlow %s", pat, in,
                             ((const uint8_t *)out.data)[0], fld[5]);
            } else {
                size_t wl;
                char *want = unhex(fld[5], &wl);
                const gn__tstring *o = out.data;
                if (o->len != wl || memcmp(o->ptr, want, wl))
                    fail_msg("'%s' -> '%s' (global %s) on '%s': got '%.*s', TensorFlow '%s'", pat, rw, fld[3], in,
                             (int)o->len, o->ptr, want);
                free(want);
            }
            gn_pt_krelease(&out, 1);
        }
        free(pat);
        free(rw);
        free(in);
        cases++;
    }
    fclose(f);
    print_message("%zu cases, %zu patterns refused as TensorFlow refuses them\n", cases, refused);
    assert_true(cases > 700);
    assert_int_equal(refused, 3);
    gn_graph_free(rep[0]);
    gn_graph_free(rep[1]);
    gn_graph_free(full);
}

/* The static ops take the pattern and rewrite as attrs; Keras'
 * TextVectorization strips punctuation so. What RE2 has and grapnel does
 * not is refused with the pattern named: Unicode classes. */
static void test_static_ops_and_refusals(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("StaticRegexReplace", 1, (const char *const[]){"DT_STRING"},
                               "attr { key: 'pattern' value { s: '[[:punct:]]+' } } "
                               "attr { key: 'rewrite' value { s: ' ' } } attr { key: 'replace_global' value { b: true } }",
                               0);
    gn__tstring b[2];
    const char *in = "Hi, there... (you)!";
    gn__tensor x = str1(&b[0], in, strlen(in), 1), out;
    gn_pt_krun_ok(g, &x, 1, &out, 1, 0);
    const gn__tstring *o = out.data;
    assert_int_equal(o->len, strlen("Hi  there   you "));
    assert_memory_equal(o->ptr, "Hi  there   you ", o->len);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);

    g = gn_pt_kgraph("StaticRegexFullMatch", 1, (const char *const[]){"DT_STRING"},
                     "attr { key: 'pattern' value { s: '[a-z]+\\\\d?' } }", 0);
    const char *texts[3] = {"abc7", "abc77", ""};
    for (int i = 0; i < 3; i++) {
        x = str1(&b[0], texts[i], strlen(texts[i]), 1);
        gn_pt_krun_ok(g, &x, 1, &out, 1, 0);
        assert_int_equal(((const uint8_t *)out.data)[0], i == 0);
        gn_pt_krelease(&out, 1);
    }
    gn_graph_free(g);

    g = gn_pt_kgraph("StaticRegexReplace", 1, (const char *const[]){"DT_STRING"},
                     "attr { key: 'pattern' value { s: '\\\\pL+' } } attr { key: 'rewrite' value { s: '' } }", 0);
    x = str1(&b[0], in, strlen(in), 1);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH,
                        "node 'n' (StaticRegexReplace): invalid pattern '\\pL+' at offset 2: Unicode classes (\\p) are "
                        "not supported");
    gn_graph_free(g);
}

/* Nested repetitions whose program would pass RE2's memory budget are
 * refused; a pattern that backtracking engines take exponential time on
 * runs in linear time here. */
static void test_big_and_pathological_patterns(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("RegexFullMatch", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, "", 0);
    gn__tstring b[2];
    const char *big = "((a{1000}){1000}){1000}";
    gn__tensor x[2] = {str1(&b[0], "a", 1, 1), str1(&b[1], big, strlen(big), 0)};
    gn_pt_kexpect_error(g, x, 2, 1, GN_ERR_GRAPH,
                        "node 'n' (RegexFullMatch): invalid pattern '((a{1000}){1000}){1000}' at offset 23: pattern "
                        "too large");
    char text[64];
    memset(text, 'a', 40);
    text[40] = 'b';
    const char *evil = "(a*)*(a|aa)*c";
    x[0] = str1(&b[0], text, 41, 1);
    x[1] = str1(&b[1], evil, strlen(evil), 0);
    gn__tensor out;
    gn_pt_krun_ok(g, x, 2, &out, 1, 0);
    assert_int_equal(((const uint8_t *)out.data)[0], 0);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
}

/* Equal / NotEqual on strings, broadcast: TensorFlow's tstring comparison. */
static void test_string_equal(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("Equal", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, "", 0);
    gn_graph *ne = gn_pt_kgraph("NotEqual", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, "", 0);
    gn__tstring a[4] = {{"", 0}, {"ab", 2}, {"a\0b", 3}, {"abc", 3}}, e = {"ab", 2};
    int64_t four = 4, one = 1;
    gn__tensor x[2] = {gn_pt_ktensor(DT_STRING, 1, &four, a), gn_pt_ktensor(DT_STRING, 0, &one, &e)};
    gn__tensor out;
    gn_pt_krun_ok(g, x, 2, &out, 1, 0);
    const uint8_t want[4] = {0, 1, 0, 0};
    assert_memory_equal(out.data, want, 4);
    gn_pt_krelease(&out, 1);
    gn_pt_krun_ok(ne, x, 2, &out, 1, 0);
    const uint8_t want_ne[4] = {1, 0, 1, 1};
    assert_memory_equal(out.data, want_ne, 4);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
    gn_graph_free(ne);
}

#define RT_ATTRS(types, n)                                                                                        \
    "attr { key: 'T' value { type: DT_INT64 } } attr { key: 'Tindex' value { type: DT_INT64 } } "              \
    "attr { key: 'Tshape' value { type: DT_INT64 } } attr { key: 'num_row_partition_tensors' value { i: " n " } } " \
    "attr { key: 'row_partition_types' value { list { " types " } } }"

/* RaggedTensorToTensor, as TensorFlow 2.21 computes it:
 *   tf.RaggedTensor.from_value_rowids([1,2,3,4,5,6], [0,0,2,2,2,3], nrows=5)
 *     .to_tensor(default_value=-1, shape=[None, 2])
 *   = [[1,2],[-1,-1],[3,4],[6,-1],[-1,-1]]   (row 2 cut to 2)
 *   tf.RaggedTensor.from_nested_row_splits([1..7], [[0,2,4],[0,1,1,4,7]]).to_tensor()
 *   = [[[1,0,0],[0,0,0]],[[2,3,4],[5,6,7]]]
 * and value_rowids out of order refused. */
static void test_ragged_to_tensor(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("RaggedTensorToTensor", 5,
                               (const char *const[]){"DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64"},
                               RT_ATTRS("s: 'FIRST_DIM_SIZE' s: 'VALUE_ROWIDS'", "2"), 0);
    int64_t shape[2] = {-1, 2}, vals[6] = {1, 2, 3, 4, 5, 6}, dflt = -1, nrows = 5, ids[6] = {0, 0, 2, 2, 2, 3};
    int64_t two = 2, six = 6;
    gn__tensor x[5] = {gn_pt_ktensor(DT_INT64, 1, &two, shape), gn_pt_ktensor(DT_INT64, 1, &six, vals),
                       gn_pt_ktensor(DT_INT64, 0, NULL, &dflt), gn_pt_ktensor(DT_INT64, 0, NULL, &nrows),
                       gn_pt_ktensor(DT_INT64, 1, &six, ids)};
    gn__tensor out;
    gn_pt_krun_ok(g, x, 5, &out, 1, 0);
    assert_int_equal(out.rank, 2);
    assert_int_equal(out.dims[0], 5);
    assert_int_equal(out.dims[1], 2);
    const int64_t want[10] = {1, 2, -1, -1, 3, 4, 6, -1, -1, -1};
    assert_memory_equal(out.data, want, sizeof want);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);

    /* two ragged dimensions by row splits, the natural shape */
    g = gn_pt_kgraph("RaggedTensorToTensor", 5,
                     (const char *const[]){"DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64"},
                     RT_ATTRS("s: 'ROW_SPLITS' s: 'ROW_SPLITS'", "2"), 0);
    int64_t sh = -1, v7[7] = {1, 2, 3, 4, 5, 6, 7}, zero = 0, s0[3] = {0, 2, 4}, s1[5] = {0, 1, 1, 4, 7};
    int64_t seven = 7, three = 3, five = 5;
    gn__tensor y[5] = {gn_pt_ktensor(DT_INT64, 0, NULL, &sh), gn_pt_ktensor(DT_INT64, 1, &seven, v7),
                       gn_pt_ktensor(DT_INT64, 0, NULL, &zero), gn_pt_ktensor(DT_INT64, 1, &three, s0),
                       gn_pt_ktensor(DT_INT64, 1, &five, s1)};
    gn_pt_krun_ok(g, y, 5, &out, 1, 0);
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.dims[0], 2);
    assert_int_equal(out.dims[1], 2);
    assert_int_equal(out.dims[2], 3);
    const int64_t want3[12] = {1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 6, 7};
    assert_memory_equal(out.data, want3, sizeof want3);
    gn_pt_krelease(&out, 1);
    gn_graph_free(g);
    /* value_rowids out of order */
    g = gn_pt_kgraph("RaggedTensorToTensor", 5,
                     (const char *const[]){"DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64", "DT_INT64"},
                     RT_ATTRS("s: 'FIRST_DIM_SIZE' s: 'VALUE_ROWIDS'", "2"), 0);
    int64_t bad[6] = {0, 2, 1, 2, 2, 3};
    x[4] = gn_pt_ktensor(DT_INT64, 1, &six, bad);
    gn_pt_kexpect_error(g, x, 5, 1, GN_ERR_GRAPH,
                        "node 'n' (RaggedTensorToTensor): value_rowids 1: entry 2 is 1 (the ids must be sorted and "
                        "below 5)");
    gn_graph_free(g);
}

/*   tf.raw_ops.RaggedRange(starts=[0,5,2], limits=[3,0,2], deltas=[1,-2,1]) (int64)
 *   = splits [0,3,6,6], values [0,1,2,5,3,1]
 *   RaggedRange(0.5, [2.0, 1.0], 0.5, Tsplits=int32) = [0,3,4], [0.5,1.0,1.5,0.5]; delta 0: "Requires delta != 0"
 *   tf.raw_ops.UnsortedSegmentJoin([["a","b"],["c","d"],["e","f"]], [1,0,1], 3, separator="-")
 *   = [["c","d"],["a-e","b-f"],["",""]]; an id of 5: TensorFlow's message */
static void test_ragged_range_and_segment_join(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kgraph("RaggedRange", 3, (const char *const[]){"DT_INT64", "DT_INT64", "DT_INT64"},
                               "attr { key: 'T' value { type: DT_INT64 } } attr { key: 'Tsplits' value { type: DT_INT64 } }", 0);
    int64_t st[3] = {0, 5, 2}, li[3] = {3, 0, 2}, de[3] = {1, -2, 1}, three = 3;
    gn__tensor in[3] = {gn_pt_ktensor(DT_INT64, 1, &three, st), gn_pt_ktensor(DT_INT64, 1, &three, li),
                        gn_pt_ktensor(DT_INT64, 1, &three, de)};
    gn__tensor out[2];
    gn_pt_krun_ok(g, in, 3, out, 2, 0);
    const int64_t ws[4] = {0, 3, 6, 6}, wv[6] = {0, 1, 2, 5, 3, 1};
    assert_memory_equal(out[0].data, ws, sizeof ws);
    assert_int_equal(out[1].dims[0], 6);
    assert_memory_equal(out[1].data, wv, sizeof wv);
    gn_pt_krelease(out, 2);
    int64_t zero[3] = {0, 0, 0};
    in[2] = gn_pt_ktensor(DT_INT64, 1, &three, zero);
    gn_pt_kexpect_error(g, in, 3, 2, GN_ERR_GRAPH, "node 'n' (RaggedRange): Requires delta != 0");
    gn_graph_free(g);
    g = gn_pt_kgraph("RaggedRange", 3, (const char *const[]){"DT_FLOAT", "DT_FLOAT", "DT_FLOAT"},
                     "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tsplits' value { type: DT_INT32 } }", 0);
    float fs = 0.5f, fl[2] = {2.0f, 1.0f}, fd = 0.5f;
    int64_t two = 2;
    gn__tensor fin[3] = {gn_pt_ktensor(DT_FLOAT, 0, NULL, &fs), gn_pt_ktensor(DT_FLOAT, 1, &two, fl),
                         gn_pt_ktensor(DT_FLOAT, 0, NULL, &fd)};
    gn_pt_krun_ok(g, fin, 3, out, 2, 0);
    const int32_t fws[3] = {0, 3, 4};
    const float fwv[4] = {0.5f, 1.0f, 1.5f, 0.5f};
    assert_memory_equal(out[0].data, fws, sizeof fws);
    assert_memory_equal(out[1].data, fwv, sizeof fwv);
    gn_pt_krelease(out, 2);
    gn_graph_free(g);

    g = gn_pt_kgraph("UnsortedSegmentJoin", 3, (const char *const[]){"DT_STRING", "DT_INT32", "DT_INT32"},
                     "attr { key: 'separator' value { s: '-' } } attr { key: 'Tindices' value { type: DT_INT32 } } "
                     "attr { key: 'Tnumsegments' value { type: DT_INT32 } }", 0);
    gn__tstring words[6] = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}};
    int32_t ids[3] = {1, 0, 1}, nseg = 3, bad[3] = {5, 0, 1};
    int64_t wd[2] = {3, 2};
    gn__tensor jin[3] = {gn_pt_ktensor(DT_STRING, 2, wd, words), gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 1, &three, ids),
                         gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 0, NULL, &nseg)};
    gn__tensor jo;
    gn_pt_krun_ok(g, jin, 3, &jo, 1, 0);
    const char *want[6] = {"c", "d", "a-e", "b-f", "", ""};
    const gn__tstring *o = jo.data;
    assert_int_equal(jo.dims[0], 3);
    assert_int_equal(jo.dims[1], 2);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(o[i].len, strlen(want[i]));
        assert_memory_equal(o[i].ptr, want[i], o[i].len);
    }
    gn_pt_krelease(&jo, 1);
    jin[1] = gn_pt_ktensor(TENSORFLOW__DATA_TYPE__DT_INT32, 1, &three, bad);
    gn_pt_kexpect_error(g, jin, 3, 1, GN_ERR_GRAPH,
                        "node 'n' (UnsortedSegmentJoin): segment_ids are not allowed to exceed num_segments or to "
                        "have negative values.");
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regex_cases_against_tensorflow),
        cmocka_unit_test(test_static_ops_and_refusals),
        cmocka_unit_test(test_big_and_pathological_patterns),
        cmocka_unit_test(test_string_equal),
        cmocka_unit_test(test_ragged_to_tensor),
        cmocka_unit_test(test_ragged_range_and_segment_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
