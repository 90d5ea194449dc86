/* Lookup-table kernels on the CPU backend (src/ops/kernels/lookup.c) and the
 * feature ops around them (src/ops/kernels/feature.c), through sessions on
 * small text-format graphs: a hit, a miss (the default, scalar or one per
 * key), the size, TensorFlow's re-initialization rules, a key of the wrong
 * dtype, a key given two values, a table never initialized, the text-file
 * initializer (columns, line numbers, CRLF, vocab_size, bad lines), and
 * SparseToDense / StringToHashBucketFast / BoostedTreesBucketize /
 * LowerBound / UpperBound. Expected
 * values are TensorFlow 2.21's (StringToHashBucketFast: its Fingerprint64). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define DT_INT32 3
#define DT_STRING 7
#define DT_INT64 9

#define ATTR_T(k, t) "attr { key: \"" k "\" value { type: " t " } } "
#define TABLE(name, kt, vt)                                                                                        \
    "node { name: \"" name "\" op: \"HashTableV2\" " ATTR_T("key_dtype", kt) ATTR_T("value_dtype", vt)            \
    "attr { key: \"shared_name\" value { s: \"" name "\" } } }\n"
#define CONST_S(name, n, vals)                                                                                     \
    "node { name: \"" name "\" op: \"Const\" " ATTR_T("dtype", "DT_STRING")                                        \
    "attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { dim { size: " n " } } " vals " } } } }\n"
#define CONST_I64(name, shape, vals)                                                                               \
    "node { name: \"" name "\" op: \"Const\" " ATTR_T("dtype", "DT_INT64")                                         \
    "attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { " shape " } " vals " } } } }\n"
#define INIT(name, table, k, v, kt, vt, ctrl)                                                                      \
    "node { name: \"" name "\" op: \"InitializeTableV2\" input: \"" table "\" input: \"" k "\" input: \"" v "\" " ctrl \
    ATTR_T("Tkey", kt) ATTR_T("Tval", vt) "}\n"
#define FIND(name, table, keys, dflt, kt, vt, ctrl)                                                                \
    "node { name: \"" name "\" op: \"LookupTableFindV2\" input: \"" table "\" input: \"" keys "\" input: \"" dflt   \
    "\" " ctrl ATTR_T("Tin", kt) ATTR_T("Tout", vt) "}\n"
#define PH_DT(name, t) "node { name: \"" name "\" op: \"Placeholder\" " ATTR_T("dtype", t) "}\n"

static gn_tensor strings(gn_string *s, int64_t n)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT_STRING;
    t.rank = 1;
    t.dims[0] = n;
    t.data = s;
    t.nbytes = (size_t)n * sizeof *s;
    return t;
}

static gn_tensor vec(int32_t dtype, void *data, int64_t n)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = 1;
    t.dims[0] = n;
    t.data = data;
    t.nbytes = (size_t)n * gn_dtype_size(dtype);
    return t;
}

/* Runs g; returns the status; session message in msg. */
static gn_status run(gn_graph *g, const char **fn, const gn_tensor *ft, size_t nf, const char **on, gn_tensor *ot,
                     size_t no, char *msg, size_t msg_n)
{
    gn_session *s = NULL;
    gn_status st = gn_session_new(g, NULL, &s);
    if (st == GN_OK) st = gn_session_run(s, fn, ft, nf, on, ot, no);
    snprintf(msg, msg_n, "%s", s ? gn_session_errmsg(s) : "");
    gn_session_free(s);
    return st;
}

static void expect_i64(const gn_tensor *t, const int64_t *want, int64_t n)
{
    assert_int_equal(t->dtype, DT_INT64);
    assert_int_equal(gn_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++)
        if (((const int64_t *)t->data)[i] != want[i])
            fail_msg("element %lld: %lld, want %lld", (long long)i, (long long)((const int64_t *)t->data)[i],
                     (long long)want[i]);
}

static void expect_err(gn_status got, const char *msg, gn_status want, const char *want_msg)
{
    if (got != want || strcmp(msg, want_msg) != 0)
        fail_msg("status %d (want %d)\n  got:  %s\n  want: %s", got, want, msg, want_msg);
}

/* string -> int64: {a: 1, b: 2, c: 3} */
static const char BASIC[] =
    TABLE("table", "DT_STRING", "DT_INT64")
    CONST_S("k", "3", "string_val: \"a\" string_val: \"b\" string_val: \"c\"")
    CONST_I64("v", "dim { size: 3 }", "int64_val: 1 int64_val: 2 int64_val: 3")
    INIT("init", "table", "k", "v", "DT_STRING", "DT_INT64", "")
    PH_DT("keys", "DT_STRING") PH_DT("dflt", "DT_INT64")
    FIND("find", "table", "keys", "dflt", "DT_STRING", "DT_INT64", "input: \"^init\"")
    "node { name: \"size\" op: \"LookupTableSizeV2\" input: \"table\" input: \"^init\" }\n";

static void test_hit_miss_default_size(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(BASIC, 1);
    gn_string ks[4] = {{"b", 1}, {"zz", 2}, {"a", 1}, {"", 0}};
    int64_t d = -1, dfull[4] = {10, 20, 30, 40};
    gn_tensor in[2] = {strings(ks, 4), vec(DT_INT64, &d, 1)};
    in[1].rank = 0;
    const char *fn[2] = {"keys", "dflt"}, *on[2] = {"find", "size"};
    gn_tensor out[2];
    memset(out, 0, sizeof out);
    char msg[512];
    if (run(g, fn, in, 2, on, out, 2, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t want[4] = {2, -1, 1, -1}, size = 3;
    expect_i64(&out[0], want, 4);
    assert_int_equal(out[0].rank, 1);
    expect_i64(&out[1], &size, 1);
    assert_int_equal(out[1].rank, 0);
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    /* one default per key */
    in[1] = vec(DT_INT64, dfull, 4);
    if (run(g, fn, in, 2, on, out, 1, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t want2[4] = {2, 20, 1, 40};
    expect_i64(&out[0], want2, 4);
    gn_tensor_free(&out[0]);
    /* a default of another shape */
    in[1] = vec(DT_INT64, dfull, 3);
    expect_err(run(g, fn, in, 2, on, out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'find' (LookupTableFindV2): Expected shape [] or [4] for default value, got [3]");
    gn_graph_free(g);
}

static void test_bad_key_dtype(void **state)
{
    (void)state;
    /* int64 keys looked up in a string-keyed table */
    gn_graph *g = gn_test_load_text(TABLE("table", "DT_STRING", "DT_INT64")
                        CONST_S("k", "1", "string_val: \"a\"")
                        CONST_I64("v", "dim { size: 1 }", "int64_val: 1")
                        INIT("init", "table", "k", "v", "DT_STRING", "DT_INT64", "")
                        PH_DT("keys", "DT_INT64") CONST_I64("dflt", "", "int64_val: -1")
                        FIND("find", "table", "keys", "dflt", "DT_INT64", "DT_INT64", "input: \"^init\""), 1);
    int64_t k[2] = {1, 2};
    gn_tensor in = vec(DT_INT64, k, 2);
    const char *fn = "keys", *on = "find";
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[512];
    expect_err(run(g, &fn, &in, 1, &on, &out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'find' (LookupTableFindV2): Signature mismatch, have: resource, int64, int64->int64 expected: "
               "resource, string, int64->int64");
    gn_graph_free(g);
}

/* init2 runs after init (control edge), find after both */
#define REINIT(n2, kvals, vvals)                                                                                   \
    TABLE("table", "DT_STRING", "DT_INT64")                                                                         \
    CONST_S("k", "2", "string_val: \"a\" string_val: \"b\"")                                                       \
    CONST_I64("v", "dim { size: 2 }", "int64_val: 1 int64_val: 2")                                                 \
    INIT("init", "table", "k", "v", "DT_STRING", "DT_INT64", "")                                                    \
    CONST_S("k2", n2, kvals) CONST_I64("v2", "dim { size: " n2 " }", vvals)                                         \
    INIT("init2", "table", "k2", "v2", "DT_STRING", "DT_INT64", "input: \"^init\"")                                 \
    CONST_S("keys", "3", "string_val: \"a\" string_val: \"b\" string_val: \"x\"")                                  \
    CONST_I64("dflt", "", "int64_val: 0")                                                                           \
    FIND("find", "table", "keys", "dflt", "DT_STRING", "DT_INT64", "input: \"^init2\"")

static void test_reinitialize(void **state)
{
    (void)state;
    const char *on = "find";
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[512];
    /* as many entries: accepted, the first contents stay (TF's AreEntriesSame) */
    gn_graph *g = gn_test_load_text(REINIT("2", "string_val: \"x\" string_val: \"y\"", "int64_val: 7 int64_val: 8"), 1);
    if (run(g, NULL, NULL, 0, &on, &out, 1, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t want[3] = {1, 2, 0};
    expect_i64(&out, want, 3);
    gn_tensor_free(&out);
    gn_graph_free(g);
    /* a different count */
    g = gn_test_load_text(REINIT("1", "string_val: \"a\"", "int64_val: 1"), 1);
    expect_err(run(g, NULL, NULL, 0, &on, &out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'init2' (InitializeTableV2): Table was already initialized with different data.");
    gn_graph_free(g);
}

static void test_not_initialized_and_conflicts(void **state)
{
    (void)state;
    const char *on = "find";
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[512];
    gn_graph *g = gn_test_load_text(TABLE("table", "DT_STRING", "DT_INT64")
                        CONST_S("keys", "1", "string_val: \"a\"") CONST_I64("dflt", "", "int64_val: 0")
                        FIND("find", "table", "keys", "dflt", "DT_STRING", "DT_INT64", ""), 1);
    expect_err(run(g, NULL, NULL, 0, &on, &out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'find' (LookupTableFindV2): Table not initialized.");
    gn_graph_free(g);
    /* the same key twice: the same value is fine, another is not */
    g = gn_test_load_text(TABLE("table", "DT_STRING", "DT_INT64")
              CONST_S("k", "3", "string_val: \"a\" string_val: \"b\" string_val: \"a\"")
              CONST_I64("v", "dim { size: 3 }", "int64_val: 1 int64_val: 2 int64_val: 5")
              INIT("init", "table", "k", "v", "DT_STRING", "DT_INT64", "")
              CONST_S("keys", "1", "string_val: \"a\"") CONST_I64("dflt", "", "int64_val: 0")
              FIND("find", "table", "keys", "dflt", "DT_STRING", "DT_INT64", "input: \"^init\""), 1);
    expect_err(run(g, NULL, NULL, 0, &on, &out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'init' (InitializeTableV2): HashTable has different value for same key. Key a has 1 and "
               "trying to add value 5");
    gn_graph_free(g);
}

/* int64 -> float through LookupTableImportV2 */
static void test_int64_to_float_import(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(TABLE("table", "DT_INT64", "DT_FLOAT")
                        CONST_I64("k", "dim { size: 3 }", "int64_val: 5 int64_val: -7 int64_val: 1099511627776")
                        "node { name: \"v\" op: \"Const\" " ATTR_T("dtype", "DT_FLOAT")
                        "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } "
                        "float_val: 0.5 float_val: -2.25 float_val: 3e10 } } } }\n"
                        "node { name: \"imp\" op: \"LookupTableImportV2\" input: \"table\" input: \"k\" input: \"v\" "
                        ATTR_T("Tin", "DT_INT64") ATTR_T("Tout", "DT_FLOAT") "}\n"
                        PH_DT("keys", "DT_INT64")
                        "node { name: \"dflt\" op: \"Const\" " ATTR_T("dtype", "DT_FLOAT")
                        "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 9 } } } }\n"
                        FIND("find", "table", "keys", "dflt", "DT_INT64", "DT_FLOAT", "input: \"^imp\""), 1);
    int64_t k[2][2] = {{1099511627776LL, 0}, {-7, 5}};
    gn_tensor in = vec(DT_INT64, k, 4);
    in.rank = 2;
    in.dims[0] = in.dims[1] = 2;
    const char *fn = "keys", *on = "find";
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[512];
    if (run(g, &fn, &in, 1, &on, &out, 1, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    assert_int_equal(out.dtype, DT_FLOAT);
    assert_int_equal(out.rank, 2);
    const float want[4] = {3e10f, 9.0f, -2.25f, 0.5f};
    assert_memory_equal(out.data, want, sizeof want);
    gn_tensor_free(&out);
    gn_graph_free(g);
}

/* ---- the text-file initializer ----------------------------------------------------------- */
static char *text_file(const char *name, const char *content)
{
    static char path[8][1024];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 1024, "%s/%s", gn_test_tmpdir(), name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    return p;
}

/* A string -> value table from a file: key_index, value_index, vocab_size, delimiter. */
static gn_status run_file(const char *path, const char *vt, int ki, int vi, int vocab, const char *keys_vals,
                          int nk, gn_tensor *out, char *msg, size_t msg_n)
{
    char text[4096];
    snprintf(text, sizeof text,
             TABLE("table", "DT_STRING", "%s")
             "node { name: \"fname\" op: \"Const\" " ATTR_T("dtype", "DT_STRING")
             "attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { } string_val: \"%s\" } } } }\n"
             "node { name: \"init\" op: \"InitializeTableFromTextFileV2\" input: \"table\" input: \"fname\" "
             "attr { key: \"key_index\" value { i: %d } } attr { key: \"value_index\" value { i: %d } } "
             "attr { key: \"vocab_size\" value { i: %d } } attr { key: \"delimiter\" value { s: \",\" } } "
             "attr { key: \"offset\" value { i: 100 } } }\n"
             "node { name: \"keys\" op: \"Const\" " ATTR_T("dtype", "DT_STRING")
             "attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { dim { size: %d } } %s } } } }\n"
             "node { name: \"dflt\" op: \"Const\" attr { key: \"dtype\" value { type: %s } } "
             "attr { key: \"value\" value { tensor { dtype: %s tensor_shape { } %s } } } }\n"
             "node { name: \"find\" op: \"LookupTableFindV2\" input: \"table\" input: \"keys\" input: \"dflt\" "
             "input: \"^init\" " ATTR_T("Tin", "DT_STRING") "attr { key: \"Tout\" value { type: %s } } }\n",
             vt, path, ki, vi, vocab, nk, keys_vals, vt, vt,
             strcmp(vt, "DT_STRING") == 0 ? "string_val: \"?\"" : strcmp(vt, "DT_FLOAT") == 0 ? "float_val: -1"
                                                                                               : "int64_val: -1",
             vt);
    gn_graph *g = gn_test_load_text(text, 1);
    const char *on = "find";
    gn_status st = run(g, NULL, NULL, 0, &on, out, 1, msg, msg_n);
    gn_graph_free(g);
    return st;
}

#define KEYS3 "string_val: \"apple\" string_val: \"cherry\" string_val: \"kiwi\""

static void test_text_file(void **state)
{
    (void)state;
    gn_tensor out;
    memset(&out, 0, sizeof out);
    char msg[1024], want[2048];
    /* CRLF lines, the last without a newline; whole line -> line number + offset */
    const char *p = text_file("words.txt", "apple\r\nbanana\r\ncherry");
    if (run_file(p, "DT_INT64", -2, -1, -1, KEYS3, 3, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t w1[3] = {100, 102, -1};
    expect_i64(&out, w1, 3);
    gn_tensor_free(&out);
    /* columns: key 1, value 0 (int64) */
    p = text_file("cols.txt", "10,apple,x\n20,banana,y\n30,cherry,z\n");
    if (run_file(p, "DT_INT64", 1, 0, -1, KEYS3, 3, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t w2[3] = {10, 30, -1};
    expect_i64(&out, w2, 3);
    gn_tensor_free(&out);
    /* string values from column 2; vocab_size 2 keeps the first two lines */
    if (run_file(p, "DT_STRING", 1, 2, 2, KEYS3, 3, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    assert_int_equal(out.dtype, DT_STRING);
    const gn_string *s = out.data;
    assert_true(s[0].len == 1 && s[0].data[0] == 'x');
    assert_true(s[1].len == 1 && s[1].data[0] == '?');   /* cherry is line 2: cut off */
    gn_tensor_free(&out);
    /* float values */
    if (run_file(p, "DT_FLOAT", 1, 0, -1, KEYS3, 3, &out, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const float wf[3] = {10.0f, 30.0f, -1.0f};
    assert_memory_equal(out.data, wf, sizeof wf);
    gn_tensor_free(&out);
    /* errors, as TensorFlow words them */
    snprintf(want, sizeof want,
             "node 'init' (InitializeTableFromTextFileV2): Invalid vocab_size in %s: expected 5 but got 3", p);
    expect_err(run_file(p, "DT_INT64", 1, 0, 5, KEYS3, 3, &out, msg, sizeof msg), msg, GN_ERR_GRAPH, want);
    snprintf(want, sizeof want,
             "node 'init' (InitializeTableFromTextFileV2): Invalid number of columns in %s line 0 (10,apple,x) : "
             "expected at least 4 got 3", p);
    expect_err(run_file(p, "DT_INT64", 3, 0, -1, KEYS3, 3, &out, msg, sizeof msg), msg, GN_ERR_GRAPH, want);
    snprintf(want, sizeof want,
             "node 'init' (InitializeTableFromTextFileV2): %s: Field x in line 0 is not a valid int64.", p);
    expect_err(run_file(p, "DT_INT64", 1, 2, -1, KEYS3, 3, &out, msg, sizeof msg), msg, GN_ERR_GRAPH, want);
    p = text_file("gap.txt", "apple\n\ncherry\n");
    snprintf(want, sizeof want,
             "node 'init' (InitializeTableFromTextFileV2): Invalid content in %s: empty line found at position 7.", p);
    expect_err(run_file(p, "DT_INT64", -2, -1, -1, KEYS3, 3, &out, msg, sizeof msg), msg, GN_ERR_GRAPH, want);
    expect_err(run_file(p, "DT_FLOAT", -2, -1, -1, KEYS3, 3, &out, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'init' (InitializeTableFromTextFileV2): Value index for line number requires table value dtype "
               "of int64, got float");
}

/* ---- feature ops --------------------------------------------------------------------------- */
/* LowerBound / UpperBound (searchsorted): per row, std::lower_bound and
 * std::upper_bound positions, int32 and int64 outputs; rows of different
 * counts are refused with TensorFlow's message. */
static void test_search_sorted(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(PH_DT("s", "DT_FLOAT") PH_DT("v", "DT_FLOAT")
                        "node { name: \"lo\" op: \"LowerBound\" input: \"s\" input: \"v\" " ATTR_T("T", "DT_FLOAT")
                            ATTR_T("out_type", "DT_INT32") "}\n"
                        "node { name: \"up\" op: \"UpperBound\" input: \"s\" input: \"v\" " ATTR_T("T", "DT_FLOAT")
                            ATTR_T("out_type", "DT_INT64") "}\n", 1);
    float sv[8] = {1, 2, 2, 5, 0, 0, 3, 9}, vv[6] = {2, 0, 6, 0, 3, 10};
    gn_tensor in[2];
    in[0] = vec(DT_FLOAT, sv, 8);
    in[0].rank = 2;
    in[0].dims[0] = 2;
    in[0].dims[1] = 4;
    in[1] = vec(DT_FLOAT, vv, 6);
    in[1].rank = 2;
    in[1].dims[0] = 2;
    in[1].dims[1] = 3;
    const char *fn[2] = {"s", "v"}, *on[2] = {"lo", "up"};
    gn_tensor out[2];
    memset(out, 0, sizeof out);
    char msg[512];
    if (run(g, fn, in, 2, on, out, 2, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    assert_int_equal(out[0].dtype, DT_INT32);
    assert_int_equal(out[1].dtype, DT_INT64);
    assert_int_equal(out[0].rank, 2);
    assert_int_equal(out[0].dims[1], 3);
    const int32_t lo[6] = {1, 0, 4, 0, 2, 4};
    const int64_t up[6] = {3, 0, 4, 2, 3, 4};
    assert_memory_equal(out[0].data, lo, sizeof lo);
    assert_memory_equal(out[1].data, up, sizeof up);
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    memset(out, 0, sizeof out);
    in[1].dims[0] = 1;
    in[1].dims[1] = 6;
    assert_int_equal(run(g, fn, in, 2, on, out, 2, msg, sizeof msg), GN_ERR_GRAPH);
    if (!strstr(msg, "Leading dim_size of both tensors must match.")) fail_msg("message: %s", msg);
    gn_graph_free(g);
}

static void test_feature_ops(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        PH_DT("s", "DT_STRING")
        "node { name: \"h\" op: \"StringToHashBucketFast\" input: \"s\" "
        "attr { key: \"num_buckets\" value { i: 1000 } } }\n"
        PH_DT("x", "DT_FLOAT")
        "node { name: \"bd\" op: \"Const\" " ATTR_T("dtype", "DT_FLOAT")
        "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 0 "
        "float_val: 1 float_val: 2 } } } }\n"
        "node { name: \"b\" op: \"BoostedTreesBucketize\" input: \"x\" input: \"bd\" "
        "attr { key: \"num_features\" value { i: 1 } } }\n"
        CONST_I64("ix", "dim { size: 2 } dim { size: 2 }", "int64_val: 0 int64_val: 1 int64_val: 2 int64_val: 0")
        CONST_I64("shape", "dim { size: 2 }", "int64_val: 3 int64_val: 2")
        CONST_S("vals", "2", "string_val: \"x\" string_val: \"yy\"")
        "node { name: \"d\" op: \"Const\" " ATTR_T("dtype", "DT_STRING")
        "attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { } string_val: \"d\" } } } }\n"
        "node { name: \"dense\" op: \"SparseToDense\" input: \"ix\" input: \"shape\" input: \"vals\" input: \"d\" "
        ATTR_T("T", "DT_STRING") ATTR_T("Tindices", "DT_INT64") "}\n", 1);
    gn_string ss[4] = {{"", 0}, {"a", 1}, {"Flash Cab", 9}, {"hello world", 11}};
    float xs[6] = {-5, 0, 0.5f, 1, 2, 99};
    gn_tensor in[2] = {strings(ss, 4), vec(DT_FLOAT, xs, 6)};
    const char *fn[2] = {"s", "x"}, *on[3] = {"h", "b", "dense"};
    gn_tensor out[3];
    memset(out, 0, sizeof out);
    char msg[512];
    if (run(g, fn, in, 2, on, out, 3, msg, sizeof msg) != GN_OK) fail_msg("%s", msg);
    const int64_t hw[4] = {263, 939, 218, 11};   /* tf.strings.to_hash_bucket_fast(..., 1000) */
    expect_i64(&out[0], hw, 4);
    /* lower_bound in the boundaries, the last index at the end */
    const int32_t bw[6] = {0, 0, 1, 1, 2, 2};
    assert_int_equal(out[1].dtype, DT_INT32);
    assert_memory_equal(out[1].data, bw, sizeof bw);
    assert_int_equal(out[2].rank, 2);
    assert_int_equal(out[2].dims[0], 3);
    assert_int_equal(out[2].dims[1], 2);
    const char *dw[6] = {"d", "x", "d", "d", "yy", "d"};
    const gn_string *ds = out[2].data;
    for (int i = 0; i < 6; i++)
        if (ds[i].len != strlen(dw[i]) || memcmp(ds[i].data, dw[i], ds[i].len) != 0)
            fail_msg("dense[%d] = '%.*s', want '%s'", i, (int)ds[i].len, ds[i].data, dw[i]);
    for (int i = 0; i < 3; i++) gn_tensor_free(&out[i]);
    gn_graph_free(g);
    /* out of bounds, out of order */
    g = gn_test_load_text(CONST_I64("ix", "dim { size: 2 } dim { size: 2 }", "int64_val: 2 int64_val: 0 int64_val: 0 int64_val: 1")
              CONST_I64("shape", "dim { size: 2 }", "int64_val: 3 int64_val: 2")
              CONST_I64("vals", "dim { size: 2 }", "int64_val: 4 int64_val: 5") CONST_I64("d", "", "int64_val: 0")
              "node { name: \"dense\" op: \"SparseToDense\" input: \"ix\" input: \"shape\" input: \"vals\" "
              "input: \"d\" "
              ATTR_T("T", "DT_INT64") ATTR_T("Tindices", "DT_INT64") "}\n", 1);
    const char *od = "dense";
    expect_err(run(g, NULL, NULL, 0, &od, out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'dense' (SparseToDense): indices[1] = [0,1] is out of order");
    gn_graph_free(g);
    g = gn_test_load_text(CONST_I64("ix", "dim { size: 1 } dim { size: 2 }", "int64_val: 0 int64_val: 2")
              CONST_I64("shape", "dim { size: 2 }", "int64_val: 3 int64_val: 2")
              CONST_I64("vals", "dim { size: 1 }", "int64_val: 4") CONST_I64("d", "", "int64_val: 0")
              "node { name: \"dense\" op: \"SparseToDense\" input: \"ix\" input: \"shape\" input: \"vals\" "
              "input: \"d\" "
              ATTR_T("T", "DT_INT64") ATTR_T("Tindices", "DT_INT64") "}\n", 1);
    expect_err(run(g, NULL, NULL, 0, &od, out, 1, msg, sizeof msg), msg, GN_ERR_GRAPH,
               "node 'dense' (SparseToDense): indices[0] = [0,2] is out of bounds: need 0 <= index < [3,2]");
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_miss_default_size),
        cmocka_unit_test(test_bad_key_dtype),
        cmocka_unit_test(test_reinitialize),
        cmocka_unit_test(test_not_initialized_and_conflicts),
        cmocka_unit_test(test_int64_to_float_import),
        cmocka_unit_test(test_text_file),
        cmocka_unit_test(test_feature_ops),
        cmocka_unit_test(test_search_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
