/* CPU kernels of src/ops/kernels/strings.c: AsString, StringToHashBucket,
 * StringToHashBucketStrong, StringLower, StringUpper, StringStrip and
 * StringSplitV2.
 *
 * Each kernel runs on a one-node graph (for its attrs); every expected value
 * below was printed by TensorFlow 2.21 (tools/make_string_op_values.py) and is
 * compared exactly: strings byte for byte, indices and buckets as integers.
 * Bad attrs and inputs give TensorFlow's message. A graph of the ops runs
 * through a session, before and after gn_optimize (which folds AsString). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "ops/op_fns.h"
#include "ops/shape.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_BF16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define DT_C64 TENSORFLOW__DATA_TYPE__DT_COMPLEX64
#define DT_INT8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_UINT8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_UINT64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A borrowed string tensor of rank 1 (rank 0 when scalar) over the literals s. */
static gn__tensor strs(gn__tstring *buf, const char *const *s, int64_t n, bool scalar)
{
    for (int64_t i = 0; i < n; i++) buf[i] = (gn__tstring){s[i], strlen(s[i])};
    return gn_pt_ktensor(DT_STRING, scalar ? 0 : 1, &n, buf);
}

static void expect_strs(const gn__tensor *t, const char *const *want, int64_t n)
{
    assert_int_equal(t->dtype, DT_STRING);
    assert_int_equal(t->rank, 1);
    assert_int_equal(t->dims[0], n);
    const gn__tstring *s = t->data;
    for (int64_t i = 0; i < n; i++) {
        size_t wl = strlen(want[i]);
        if (s[i].len != wl || memcmp(s[i].ptr, want[i], wl))
            fail_msg("element %lld: got '%.*s', want '%s'", (long long)i, (int)s[i].len, s[i].ptr, want[i]);
    }
}

static void expect_i64(const gn__tensor *t, int32_t rank, const int64_t *dims, const int64_t *want)
{
    assert_int_equal(t->dtype, DT_INT64);
    assert_int_equal(t->rank, rank);
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        assert_int_equal(t->dims[d], dims[d]);
        n *= dims[d];
    }
    const int64_t *v = t->data;
    for (int64_t i = 0; i < n; i++)
        if (v[i] != want[i]) fail_msg("element %lld: got %lld, want %lld", (long long)i, (long long)v[i], (long long)want[i]);
}

/* Runs the one-input op on x with attrs and checks the strings (both kernel paths). */
static void as_string_case(const char *attrs, const gn__tensor *x, const char *const *want, int64_t n)
{
    const char *dt = gn_dtype_name(x->dtype);
    char dts[32], all[512];
    snprintf(dts, sizeof dts, "DT_%s", dt);
    for (char *p = dts; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    snprintf(all, sizeof all, "attr { key: 'T' value { type: %s } } %s", dts, attrs);
    const char *dtl[1] = {dts};
    gn_graph *g = gn_pt_kgraph("AsString", 1, dtl, all, 0);
    gn__tensor out[1];
    for (uint32_t flags = 0; flags <= GN__K_REFERENCE; flags += GN__K_REFERENCE) {
        gn_pt_krun_ok(g, x, 1, out, 1, flags);
        expect_strs(&out[0], want, n);
        gn_pt_krelease(out, 1);
    }
    gn_graph_free(g);
}

static void as_string_error(int32_t dtype, const char *attrs, const char *msg)
{
    const char *dtl[1] = {dtype == DT_INT32 ? "DT_INT32" : "DT_FLOAT"};
    gn_graph *g = gn_pt_kgraph("AsString", 1, dtl, attrs, 0);
    int32_t iv = 1;
    float fv = 1;
    int64_t one = 1;
    gn__tensor x = gn_pt_ktensor(dtype, 1, &one, dtype == DT_INT32 ? (const void *)&iv : (const void *)&fv);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH, msg);
    gn_graph_free(g);
}

/* AsString of float32: the default %f, shortest %g, scientific %e, the fills
 * (0 - + # space) with widths and precisions, on negative, inf, nan, huge and
 * tiny values. */
static void test_as_string_float(void **state)
{
    (void)state;
    static const float xv[9] = {1.5f, -2.25f, INFINITY, NAN, -INFINITY, 1e20f, 1e-7f, 0.0f, 123.456f};
    int64_t n9 = 9;
    gn__tensor x = gn_pt_ktensor(DT_FLOAT, 1, &n9, xv);
    as_string_case("", &x,
                   (const char *const[]){"1.500000", "-2.250000", "inf", "nan", "-inf", "100000002004087734272.000000",
                                         "0.000000", "0.000000", "123.456001"}, 9);
    as_string_case(AB("shortest", "true"), &x,
                   (const char *const[]){"1.5", "-2.25", "inf", "nan", "-inf", "1e+20", "1e-07", "0", "123.456"}, 9);
    as_string_case(AB("scientific", "true") AINT("precision", "3"), &x,
                   (const char *const[]){"1.500e+00", "-2.250e+00", "inf", "nan", "-inf", "1.000e+20", "1.000e-07",
                                         "0.000e+00", "1.235e+02"}, 9);
    as_string_case(AINT("precision", "2") AINT("width", "12") AS("fill", "0"), &x,
                   (const char *const[]){"000000001.50", "-00000002.25", "         inf", "         nan", "        -inf",
                                         "100000002004087734272.00", "000000000.00", "000000000.00", "000000123.46"}, 9);
    as_string_case(AINT("precision", "2") AINT("width", "12") AS("fill", "-"), &x,
                   (const char *const[]){"1.50        ", "-2.25       ", "inf         ", "nan         ", "-inf        ",
                                         "100000002004087734272.00", "0.00        ", "0.00        ", "123.46      "}, 9);
    as_string_case(AINT("width", "12") AS("fill", "+"), &x,
                   (const char *const[]){"   +1.500000", "   -2.250000", "        +inf", "        +nan", "        -inf",
                                         "+100000002004087734272.000000", "   +0.000000", "   +0.000000",
                                         " +123.456001"}, 9);
    as_string_case(AINT("width", "12") AS("fill", "#") AINT("precision", "0"), &x,
                   (const char *const[]){"          2.", "         -2.", "         inf", "         nan", "        -inf",
                                         "100000002004087734272.", "          0.", "          0.", "        123."}, 9);
    as_string_case(AINT("width", "12") AS("fill", " ") AINT("precision", "1"), &x,
                   (const char *const[]){"         1.5", "        -2.2", "         inf", "         nan", "        -inf",
                                         " 100000002004087734272.0", "         0.0", "         0.0", "       123.5"}, 9);
    as_string_case(AINT("width", "10") AB("shortest", "true") AINT("precision", "3") AS("fill", "-"), &x,
                   (const char *const[]){"1.5       ", "-2.25     ", "inf       ", "nan       ", "-inf      ",
                                         "1e+20     ", "1e-07     ", "0         ", "123       "}, 9);
}

/* AsString of double, half, bfloat16, complex64. */
static void test_as_string_other_floats(void **state)
{
    (void)state;
    static const double dv[3] = {0.1, -1e300, 2.5e-310};
    int64_t n3 = 3, n2 = 2;
    gn__tensor x = gn_pt_ktensor(DT_DOUBLE, 1, &n3, dv);
    /* TensorFlow prints "0" for the subnormal 2.5e-310: its CPU threads flush
     * subnormals to zero, grapnel's kernels read them as they are
     * (docs/inference_op_kernels.md) */
    as_string_case(AB("shortest", "true"), &x, (const char *const[]){"0.1", "-1e+300", "2.5e-310"}, 3);
    /* float16 1.5, -0.1, 65504 and bfloat16 1.5, -0.1, 3e38 (round to nearest even) */
    static const uint16_t hv[3] = {0x3e00, 0xae66, 0x7bff}, bv[3] = {0x3fc0, 0xbdcd, 0x7f62};
    x = gn_pt_ktensor(DT_HALF, 1, &n3, hv);
    as_string_case(AINT("precision", "4"), &x, (const char *const[]){"1.5000", "-0.1000", "65504.0000"}, 3);
    x = gn_pt_ktensor(DT_BF16, 1, &n3, bv);
    as_string_case("", &x,
                   (const char *const[]){"1.500000", "-0.100098", "300405527047390987276260395623357874176.000000"}, 3);
    static const float cv[4] = {1.5f, 2.0f, -1.0f, -0.5f};
    x = gn_pt_ktensor(DT_C64, 1, &n2, cv);
    as_string_case(AINT("precision", "1") AINT("width", "6"), &x, (const char *const[]){"(   1.5,   2.0)", "(  -1.0,  -0.5)"},
                   2);
}

/* AsString of integers, bools and strings; the attr errors. */
static void test_as_string_ints_bools_strings(void **state)
{
    (void)state;
    int64_t n4 = 4, n2 = 2, n3 = 3;
    static const int8_t i8[4] = {-42, 0, 42, 127};
    static const int32_t i32[4] = {-42, 0, 42, 127};
    static const int64_t i64[4] = {-42, 0, 42, 127};
    static const uint8_t u8[4] = {214, 0, 42, 127};
    static const uint64_t u64[4] = {18446744073709551574ull, 0, 42, 127};
    const char *const plain[4] = {"-42", "0", "42", "127"};
    const char *const zero5[4] = {"-0042", "00000", "00042", "00127"};
    gn__tensor x = gn_pt_ktensor(DT_INT8, 1, &n4, i8);
    as_string_case("", &x, plain, 4);
    as_string_case(AINT("width", "5") AS("fill", "0"), &x, zero5, 4);
    x = gn_pt_ktensor(DT_INT64, 1, &n4, i64);
    as_string_case("", &x, plain, 4);
    as_string_case(AINT("width", "5") AS("fill", "0"), &x, zero5, 4);
    x = gn_pt_ktensor(DT_INT32, 1, &n4, i32);
    as_string_case(AINT("width", "5") AS("fill", "0"), &x, zero5, 4);
    as_string_case(AINT("width", "5") AS("fill", "+"), &x, (const char *const[]){"  -42", "   +0", "  +42", " +127"}, 4);
    as_string_case(AINT("width", "5") AS("fill", "-"), &x, (const char *const[]){"-42  ", "0    ", "42   ", "127  "}, 4);
    as_string_case(AINT("width", "5") AS("fill", "#"), &x, (const char *const[]){"  -42", "    0", "   42", "  127"}, 4);
    x = gn_pt_ktensor(DT_UINT8, 1, &n4, u8);
    as_string_case("", &x, (const char *const[]){"214", "0", "42", "127"}, 4);
    as_string_case(AINT("width", "5") AS("fill", "+"), &x, (const char *const[]){"  214", "    0", "   42", "  127"}, 4);
    x = gn_pt_ktensor(DT_UINT64, 1, &n4, u64);
    as_string_case(AINT("width", "5") AS("fill", "0"), &x,
                   (const char *const[]){"18446744073709551574", "00000", "00042", "00127"}, 4);
    static const uint8_t bv[2] = {1, 0};
    x = gn_pt_ktensor(DT_BOOL, 1, &n2, bv);
    as_string_case(AINT("width", "8"), &x, (const char *const[]){"true", "false"}, 2);

    gn__tstring sb[3];
    x = strs(sb, (const char *const[]){"ab", "", "hello world"}, n3, false);
    as_string_case(AINT("width", "6"), &x, (const char *const[]){"    ab", "      ", "hello world"}, 3);
    as_string_case(AINT("width", "6") AS("fill", "-"), &x, (const char *const[]){"ab    ", "      ", "hello world"}, 3);
    as_string_case(AINT("width", "6") AS("fill", "0") AINT("precision", "3"), &x,
                   (const char *const[]){"    ab", "      ", "   hel"}, 3);
    /* no width: the input itself */
    gn_graph *g = gn_pt_kgraph("AsString", 1, (const char *const[]){"DT_STRING"}, AT("T", "DT_STRING"), 0);
    gn__tensor out[1];
    gn_pt_krun_ok(g, &x, 1, out, 1, 0);
    assert_ptr_equal(out[0].data, x.data);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);

    as_string_error(DT_INT32, AINT("precision", "2"), "node 'n' (AsString): precision not supported for datatype int32");
    as_string_error(DT_INT32, AB("shortest", "true"),
                    "node 'n' (AsString): scientific and shortest format not supported for datatype int32");
    as_string_error(DT_FLOAT, AS("fill", "ab"), "node 'n' (AsString): Fill string must be one or fewer characters");
    as_string_error(DT_FLOAT, AB("scientific", "true") AB("shortest", "true"),
                    "node 'n' (AsString): Cannot select both scientific and shortest notation");
    as_string_error(DT_FLOAT, AS("fill", "x"), "node 'n' (AsString): Fill argument not supported: \"x\"");
    as_string_error(DT_FLOAT, AS("fill", "%"), "node 'n' (AsString): Fill argument not supported: \"%\"");
}

static const char *const WORDS[6] = {"", "a", "hello", "Hello World", "feature_column_value_42", "\303\251t\303\251"};

static void bucket_case(const char *op, const char *attrs, const int64_t *want)
{
    gn_graph *g = gn_pt_kgraph(op, 1, (const char *const[]){"DT_STRING"}, attrs, 0);
    gn__tstring sb[6];
    gn__tensor x = strs(sb, WORDS, 6, false), out[1];
    gn_pt_krun_ok(g, &x, 1, out, 1, 0);
    int64_t d6 = 6;
    expect_i64(&out[0], 1, &d6, want);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

/* StringToHashBucket: TensorFlow's Hash64 (seed 0xDECAFCAFFE) mod
 * num_buckets; StringToHashBucketStrong: SipHash-2-4 under the key attr. A
 * bucket count of 2^62 shows (nearly) the whole hash. */
static void test_hash_buckets(void **state)
{
    (void)state;
    bucket_case("StringToHashBucket", AINT("num_buckets", "1"), (const int64_t[]){0, 0, 0, 0, 0, 0});
    bucket_case("StringToHashBucket", AINT("num_buckets", "10"), (const int64_t[]){9, 8, 8, 4, 5, 2});
    bucket_case("StringToHashBucket", AINT("num_buckets", "1000"), (const int64_t[]){899, 868, 938, 944, 815, 722});
    bucket_case("StringToHashBucket", AINT("num_buckets", "4611686018427387904"),
                (const int64_t[]){105434511174508091, 2996632905371535868, 1331861223480393034, 1368950881848010944,
                                  4101749576732412911, 3287882255489415818});
    bucket_case("StringToHashBucketStrong", AINT("num_buckets", "1000") AL("key", "i: 0 i: 0"),
                (const int64_t[]){367, 905, 361, 113, 668, 801});
    bucket_case("StringToHashBucketStrong", AINT("num_buckets", "4611686018427387904") AL("key", "i: 0 i: 0"),
                (const int64_t[]){2202906307356721367, 1639882426175169097, 919118455976186553, 186589887572802401,
                                  2864132145502979860, 2219932458103313089});
    bucket_case("StringToHashBucketStrong", AINT("num_buckets", "1000") AL("key", "i: 1 i: 2"),
                (const int64_t[]){435, 646, 622, 362, 924, 269});
    bucket_case("StringToHashBucketStrong", AINT("num_buckets", "4611686018427387904") AL("key", "i: 1 i: 2"),
                (const int64_t[]){443797209252341627, 546566331822570742, 2957200328589801622, 2501355908134423362,
                                  3457757082239385116, 25632369123002269});
    bucket_case("StringToHashBucketStrong", AINT("num_buckets", "1000") AL("key", "i: 81985529216486895 i: -1"),
                (const int64_t[]){458, 875, 346, 143, 648, 591});
    bucket_case("StringToHashBucketStrong",
                AINT("num_buckets", "4611686018427387904") AL("key", "i: 81985529216486895 i: -1"),
                (const int64_t[]){86517150037914554, 2813326286591498163, 4517926407528818634, 3487934534611230239,
                                  3268804788032870936, 225344006376834591});
    /* bad attrs */
    gn_graph *g = gn_pt_kgraph("StringToHashBucketStrong", 1, (const char *const[]){"DT_STRING"},
                               AINT("num_buckets", "10") AL("key", "i: 1"), 0);
    gn__tstring sb[1];
    gn__tensor x = strs(sb, WORDS, 1, false);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH, "node 'n' (StringToHashBucketStrong): Key must have 2 elements");
    gn_graph_free(g);
    g = gn_pt_kgraph("StringToHashBucket", 1, (const char *const[]){"DT_STRING"}, AINT("num_buckets", "0"), 0);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH, "node 'n' (StringToHashBucket): attr 'num_buckets' must be >= 1");
    gn_graph_free(g);
}

static void unary_case(const char *op, const char *attrs, const char *const *in, const char *const *want, int64_t n)
{
    gn_graph *g = gn_pt_kgraph(op, 1, (const char *const[]){"DT_STRING"}, attrs, 0);
    gn__tstring sb[8];
    gn__tensor x = strs(sb, in, n, false), out[1];
    gn_pt_krun_ok(g, &x, 1, out, 1, 0);
    expect_strs(&out[0], want, n);
    gn_pt_krelease(out, 1);
    gn_graph_free(g);
}

/* StringLower / StringUpper: ASCII letters only with encoding '', Unicode
 * letters with 'utf-8'.
 * StringStrip: ASCII whitespace at both ends (not U+00A0's byte). */
static void test_case_and_strip(void **state)
{
    (void)state;
    const char *const in[4] = {"Hello World", "MiXeD 123 _-", "", "caf\303\251 \303\211T\303\211"};
    unary_case("StringLower", AS("encoding", ""), in,
               (const char *const[]){"hello world", "mixed 123 _-", "", "caf\303\251 \303\211t\303\211"}, 4);
    unary_case("StringUpper", AS("encoding", ""), in,
               (const char *const[]){"HELLO WORLD", "MIXED 123 _-", "", "CAF\303\251 \303\211T\303\211"}, 4);
    unary_case("StringLower", AS("encoding", "utf-8"), in,
               (const char *const[]){"hello world", "mixed 123 _-", "", "caf\303\251 \303\251t\303\251"}, 4);
    unary_case("StringUpper", AS("encoding", "utf-8"), in,
               (const char *const[]){"HELLO WORLD", "MIXED 123 _-", "", "CAF\303\211 \303\211T\303\211"}, 4);
    gn_graph *g = gn_pt_kgraph("StringLower", 1, (const char *const[]){"DT_STRING"}, AS("encoding", "latin1"), 0);
    gn__tstring sb[4];
    gn__tensor x = strs(sb, in, 4, false);
    gn_pt_kexpect_error(g, &x, 1, 1, GN_ERR_GRAPH,
                        "node 'n' (StringLower): only utf-8 or '' (no encoding) is supported, received latin1");
    gn_graph_free(g);
    unary_case("StringStrip", "",
               (const char *const[]){"  a b  ", "\t\n\v\f\rx\r\n", "   ", "", "none", "\240y\240"},
               (const char *const[]){"a b", "x", "", "", "none", "\240y\240"}, 6);
}

/* encoding 'utf-8': ICU's full case mapping as TensorFlow applies it
 * (tools/make_string_op_values.py, "unicode"): ß -> SS, the ligature fi ->
 * FI, İ -> i + U+0307, Greek final sigma by context (after a letter, not
 * before one, an apostrophe or a combining accent skipped), Armenian, Cyrillic,
 * Cherokee, Deseret (4-byte), emoji kept, the text cut at its first NUL, and
 * one U+FFFD per maximal subpart of each ill-formed sequence. */
#define S(lit) {lit, sizeof(lit) - 1}
static const gn__tstring UNI_IN[10] = {
    S("Stra\303\237e \307\205 \357\254\201x"),
    S("\316\237\316\224\316\237\316\243 \316\243\316\221\316\243. \316\243 \316\221\316\243' \316\243-\316\221 \316\221\316\243\314\201"),
    S("\304\260stanbul I\304\236DIR"),
    S("\320\237\321\200\320\270\320\262\320\265\321\202, \320\234\320\230\320\240 \321\221\320\201"),
    S("\326\207 \324\265\325\222"),
    S("\316\220 \316\260 \341\276\263 \341\276\274"),
    S("\341\216\240 \352\255\260 \360\220\220\200 \360\220\220\250 \360\237\230\200"),
    S("\307\260 \305\211 \341\272\236 \303\237"),
    S("ab\000CD"),
    S("\340\200\200A\355\240\200b\360\237\230c\364\220\200\200d\300\257e\341\200f\377"),
};
static const gn__tstring UNI_LOWER[10] = {
    S("stra\303\237e \307\206 \357\254\201x"),
    S("\316\277\316\264\316\277\317\202 \317\203\316\261\317\202. \317\203 \316\261\317\202' \317\203-\316\261 \316\261\317\202\314\201"),
    S("i\314\207stanbul i\304\237dir"),
    S("\320\277\321\200\320\270\320\262\320\265\321\202, \320\274\320\270\321\200 \321\221\321\221"),
    S("\326\207 \325\245\326\202"),
    S("\316\220 \316\260 \341\276\263 \341\276\263"),
    S("\352\255\260 \352\255\260 \360\220\220\250 \360\220\220\250 \360\237\230\200"),
    S("\307\260 \305\211 \303\237 \303\237"),
    S("ab"),
    S("\357\277\275\357\277\275\357\277\275a\357\277\275\357\277\275\357\277\275b\357\277\275c\357\277\275\357\277\275\357\277\275\357\277\275d\357\277\275\357\277\275e\357\277\275f\357\277\275"),
};
static const gn__tstring UNI_UPPER[10] = {
    S("STRASSE \307\204 FIX"),
    S("\316\237\316\224\316\237\316\243 \316\243\316\221\316\243. \316\243 \316\221\316\243' \316\243-\316\221 \316\221\316\243\314\201"),
    S("\304\260STANBUL I\304\236DIR"),
    S("\320\237\320\240\320\230\320\222\320\225\320\242, \320\234\320\230\320\240 \320\201\320\201"),
    S("\324\265\325\222 \324\265\325\222"),
    S("\316\231\314\210\314\201 \316\245\314\210\314\201 \316\221\316\231 \316\221\316\231"),
    S("\341\216\240 \341\216\240 \360\220\220\200 \360\220\220\200 \360\237\230\200"),
    S("J\314\214 \312\274N \341\272\236 SS"),
    S("AB"),
    S("\357\277\275\357\277\275\357\277\275A\357\277\275\357\277\275\357\277\275B\357\277\275C\357\277\275\357\277\275\357\277\275\357\277\275D\357\277\275\357\277\275E\357\277\275F\357\277\275"),
};
#undef S
static void test_unicode_case(void **state)
{
    (void)state;
    int64_t n = (int64_t)(sizeof UNI_IN / sizeof UNI_IN[0]);
    for (int up = 0; up < 2; up++) {
        gn_graph *g = gn_pt_kgraph(up ? "StringUpper" : "StringLower", 1, (const char *const[]){"DT_STRING"},
                                   AS("encoding", "utf-8"), 0);
        gn__tensor x = gn_pt_ktensor(DT_STRING, 1, &n, UNI_IN), out[1];
        gn_pt_krun_ok(g, &x, 1, out, 1, 0);
        const gn__tstring *want = up ? UNI_UPPER : UNI_LOWER, *got = out[0].data;
        assert_int_equal(out[0].dims[0], n);
        for (int64_t i = 0; i < n; i++)
            if (got[i].len != want[i].len || memcmp(got[i].ptr, want[i].ptr, want[i].len))
                fail_msg("%s element %lld: got %zu bytes '%.*s'", up ? "upper" : "lower", (long long)i, got[i].len,
                         (int)got[i].len, got[i].ptr);
        gn_pt_krelease(out, 1);
        gn_graph_free(g);
    }
}

static const char *const SPLIT_IN[9] = {"pigs on the wing", "  4  5    6  ", "", "a,b,,c,", ",lead",
                                        "trail,", "1<>2<>3", "   ", "one\ttwo\nthree"};

static void split_case(const char *sep, int maxsplit, int64_t n, const int64_t *ix, const char *const *vals,
                       int64_t width)
{
    char attrs[64];
    snprintf(attrs, sizeof attrs, "attr { key: 'maxsplit' value { i: %d } }", maxsplit);
    gn_graph *g = gn_pt_kgraph("StringSplitV2", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, attrs, 0);
    gn__tstring sb[9], sp[1];
    gn__tensor in[2] = {strs(sb, SPLIT_IN, 9, false), strs(sp, &sep, 1, true)}, out[3];
    for (uint32_t flags = 0; flags <= GN__K_REFERENCE; flags += GN__K_REFERENCE) {
        gn_pt_krun_ok(g, in, 2, out, 3, flags);
        expect_i64(&out[0], 2, (const int64_t[]){n, 2}, ix);
        expect_strs(&out[1], vals, n);
        expect_i64(&out[2], 1, (const int64_t[]){2}, (const int64_t[]){9, width});
        gn_pt_krelease(out, 3);
    }
    gn_graph_free(g);
}

/* StringSplitV2: Python's str.split with a separator (empty tokens kept,
 * leading / trailing separators give empty tokens, "" gives [""]) and without
 * (runs of ASCII whitespace; the rest after maxsplit splits keeps its
 * inner whitespace and may be empty); maxsplit 0: the whole string. */
static void test_split_v2(void **state)
{
    (void)state;
    split_case("", -1, 14,
               (const int64_t[]){0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 3, 0, 4, 0, 5, 0, 6, 0, 8, 0, 8, 1, 8, 2},
               (const char *const[]){"pigs", "on", "the", "wing", "4", "5", "6", "a,b,,c,", ",lead", "trail,", "1<>2<>3",
                                     "one", "two", "three"}, 4);
    split_case("", 0, 9, (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 0}, SPLIT_IN, 1);
    split_case("", 1, 14,
               (const int64_t[]){0, 0, 0, 1, 1, 0, 1, 1, 3, 0, 3, 1, 4, 0, 4, 1, 5, 0, 5, 1, 6, 0, 6, 1, 8, 0, 8, 1},
               (const char *const[]){"pigs", "on the wing", "4", "5    6  ", "a,b,,c,", "", ",lead", "", "trail,", "",
                                     "1<>2<>3", "", "one", "two\nthree"}, 2);
    split_case("", 2, 13,
               (const int64_t[]){0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2, 3, 0, 4, 0, 5, 0, 6, 0, 8, 0, 8, 1, 8, 2},
               (const char *const[]){"pigs", "on", "the wing", "4", "5", "6  ", "a,b,,c,", ",lead", "trail,", "1<>2<>3",
                                     "one", "two", "three"}, 3);
    split_case(",", -1, 15,
               (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 3, 1, 3, 2, 3, 3, 3, 4, 4, 0, 4, 1, 5, 0, 5, 1, 6, 0, 7, 0, 8, 0},
               (const char *const[]){"pigs on the wing", "  4  5    6  ", "", "a", "b", "", "c", "", "", "lead", "trail",
                                     "", "1<>2<>3", "   ", "one\ttwo\nthree"}, 5);
    split_case(",", 1, 12, (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 3, 1, 4, 0, 4, 1, 5, 0, 5, 1, 6, 0, 7, 0, 8, 0},
               (const char *const[]){"pigs on the wing", "  4  5    6  ", "", "a", "b,,c,", "", "lead", "trail", "",
                                     "1<>2<>3", "   ", "one\ttwo\nthree"}, 2);
    split_case(",", 2, 13,
               (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 3, 1, 3, 2, 4, 0, 4, 1, 5, 0, 5, 1, 6, 0, 7, 0, 8, 0},
               (const char *const[]){"pigs on the wing", "  4  5    6  ", "", "a", "b", ",c,", "", "lead", "trail", "",
                                     "1<>2<>3", "   ", "one\ttwo\nthree"}, 3);
    split_case("<>", -1, 11, (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 6, 1, 6, 2, 7, 0, 8, 0},
               (const char *const[]){"pigs on the wing", "  4  5    6  ", "", "a,b,,c,", ",lead", "trail,", "1", "2", "3",
                                     "   ", "one\ttwo\nthree"}, 3);
    split_case("<>", 1, 10, (const int64_t[]){0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 6, 1, 7, 0, 8, 0},
               (const char *const[]){"pigs on the wing", "  4  5    6  ", "", "a,b,,c,", ",lead", "trail,", "1", "2<>3",
                                     "   ", "one\ttwo\nthree"}, 2);
    split_case(" ", -1, 25,
               (const int64_t[]){0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2, 1, 3, 1, 4, 1, 5, 1, 6, 1, 7, 1, 8,
                                 1, 9, 1, 10, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 7, 1, 7, 2, 7, 3, 8, 0},
               (const char *const[]){"pigs", "on", "the", "wing", "", "", "4", "", "5", "", "", "", "6", "", "", "",
                                     "a,b,,c,", ",lead", "trail,", "1<>2<>3", "", "", "", "", "one\ttwo\nthree"}, 11);
    split_case(" ", 1, 12, (const int64_t[]){0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 7, 1, 8, 0},
               (const char *const[]){"pigs", "on the wing", "", " 4  5    6  ", "", "a,b,,c,", ",lead", "trail,",
                                     "1<>2<>3", "", "  ", "one\ttwo\nthree"}, 2);

    /* bad shapes: TensorFlow's messages */
    gn_graph *g = gn_pt_kgraph("StringSplitV2", 2, (const char *const[]){"DT_STRING", "DT_STRING"}, "", 0);
    gn__tstring sb[1], sp[1];
    int64_t d11[2] = {1, 1};
    const char *a = "a", *comma = ",";
    gn__tensor in[2] = {strs(sb, &a, 1, false), strs(sp, &comma, 1, false)};
    gn_pt_kexpect_error(g, in, 2, 3, GN_ERR_GRAPH, "node 'n' (StringSplitV2): sep must be a scalar, got shape: [1]");
    in[1].rank = 0;
    in[0].rank = 2;
    in[0].dims[0] = d11[0];
    in[0].dims[1] = d11[1];
    gn_pt_kexpect_error(g, in, 2, 3, GN_ERR_GRAPH, "node 'n' (StringSplitV2): input must be a vector, got shape: [1,1]");
    gn_graph_free(g);
}

/* Strip -> Lower -> StringSplitV2 on a Const, and AsString -> StringToHashBucketStrong:
 * a session gives TensorFlow's values (tools/make_string_op_values.py, "chain"),
 * and so does the graph gn_optimize rewrites (AsString folded to a Const). */
#define SCONST(n, vals)                                                                                                \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } "                             \
    "attr { key: 'value' value { tensor { dtype: DT_STRING " vals " } } } }\n"
static const char CHAIN[] =
    SCONST("x", "tensor_shape { dim { size: 3 } } string_val: '  Pigs ON the Wing ' string_val: '\\tA,b ' "
                "string_val: ''")
    SCONST("sep", "tensor_shape { } string_val: ' '")
    "node { name: 'strip' op: 'StringStrip' input: 'x' }\n"
    "node { name: 'lower' op: 'StringLower' input: 'strip' attr { key: 'encoding' value { s: '' } } }\n"
    "node { name: 'split' op: 'StringSplitV2' input: 'lower' input: 'sep' attr { key: 'maxsplit' value { i: -1 } } }\n"
    "node { name: 'f' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
    "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.5 "
    "float_val: -2.25 } } } }\n"
    "node { name: 'str' op: 'AsString' input: 'f' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'precision' value { i: 1 } } attr { key: 'scientific' value { b: false } } "
    "attr { key: 'shortest' value { b: false } } attr { key: 'width' value { i: -1 } } "
    "attr { key: 'fill' value { s: '' } } }\n"
    "node { name: 'h' op: 'StringToHashBucketStrong' input: 'str' attr { key: 'num_buckets' value { i: 1000 } } "
    "attr { key: 'key' value { list { i: 1 i: 2 } } } }\n";

static void chain_expect(gn_graph *g, const char *when)
{
    gn_session *s = NULL;
    if (gn_session_new(g, NULL, &s) != GN_OK) fail_msg("%s: session: %s", when, gn_session_errmsg(s));
    const char *fetch[5] = {"split:0", "split:1", "split:2", "str", "h"};
    gn_tensor out[5];
    memset(out, 0, sizeof out);
    if (gn_session_run(s, NULL, NULL, 0, fetch, out, 5) != GN_OK) fail_msg("%s: run: %s", when, gn_session_errmsg(s));
    static const int64_t ix[] = {0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 2, 0};
    static const char *const vals[] = {"pigs", "on", "the", "wing", "a,b", ""};
    static const char *const strs2[] = {"1.5", "-2.2"};
    assert_int_equal(out[0].rank, 2);
    assert_int_equal(out[0].dims[0], 6);
    assert_memory_equal(out[0].data, ix, sizeof ix);
    for (int k = 1; k < 4; k += 2) {
        const gn_string *sv = out[k].data;
        int64_t n = k == 1 ? 6 : 2;
        assert_int_equal(out[k].dims[0], n);
        for (int64_t i = 0; i < n; i++) {
            const char *w = k == 1 ? vals[i] : strs2[i];
            if (sv[i].len != strlen(w) || memcmp(sv[i].data, w, sv[i].len))
                fail_msg("%s: %s[%lld] is '%.*s', want '%s'", when, fetch[k], (long long)i, (int)sv[i].len, sv[i].data,
                         w);
        }
    }
    assert_memory_equal(out[2].data, ((const int64_t[]){3, 4}), 16);
    assert_memory_equal(out[4].data, ((const int64_t[]){517, 847}), 16);
    for (int k = 0; k < 5; k++) gn_tensor_free(&out[k]);
    gn_session_free(s);
}

static void test_session_and_folding(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_kload(CHAIN, 1);
    /* StringSplitV2's shape function: [?,2], [?], [2] as TensorFlow's */
    assert_int_equal(gn__graph_infer_shapes(g), GN_OK);
    gn_id sp = gn__graph_find(g, "split");
    const gn__tinfo *t0 = gn__shape_of(g, sp, 0), *t1 = gn__shape_of(g, sp, 1), *t2 = gn__shape_of(g, sp, 2);
    assert_non_null(t0);
    assert_non_null(t1);
    assert_non_null(t2);
    assert_true(t0->shape.rank == 2 && t0->shape.dims[0] == -1 && t0->shape.dims[1] == 2);
    assert_true(t1->shape.rank == 1 && t1->shape.dims[0] == -1);
    assert_true(t2->shape.rank == 1 && t2->shape.dims[0] == 2);
    chain_expect(g, "session");
    gn_options o;
    gn_options_init(&o);
    gn_optimize_params pp;
    gn_optimize_params_init(&pp);
    const char *fetch[5] = {"split:0", "split:1", "split:2", "str", "h"};
    pp.fetches = fetch;
    pp.n_fetches = 5;
    assert_int_equal(gn_optimize(g, &o, &pp, NULL), GN_OK);
    /* Grappler folds no node with a string Const input: AsString (of a float
     * Const) becomes a Const, the ops reading strings stay */
    bool as_string_left = false, split_left = false;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i)) continue;
        as_string_left |= strcmp(gn__node_op(g, i), "AsString") == 0;
        split_left |= strcmp(gn__node_op(g, i), "StringSplitV2") == 0;
    }
    assert_false(as_string_left);
    assert_true(split_left);
    chain_expect(g, "after constant folding");
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_as_string_float),
        cmocka_unit_test(test_as_string_other_floats),
        cmocka_unit_test(test_as_string_ints_bools_strings),
        cmocka_unit_test(test_hash_buckets),
        cmocka_unit_test(test_case_and_strip),
        cmocka_unit_test(test_unicode_case),
        cmocka_unit_test(test_split_v2),
        cmocka_unit_test(test_session_and_folding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
