/* Engines built ahead of time (gn_engines_build) and saved into a
 * SavedModel's assets, then reloaded (docs/reference_formats.md §A9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "grapnel/save.h"
#include "io/engine_store.h"
#include "graph/ir.h"
#include "io/bundle.h"
#include "runtime/backend.h"
#include "runtime/session.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1
#define MM(n, a, b) "node { name: '" n "' op: 'MatMul' input: '" a "' input: '" b "' " TF "}\n"
#define SCAL(n, v)                                                                                                   \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"
#define FQV(n, in, mn, mx)                                                                                           \
    "node { name: '" n "' op: 'FakeQuantWithMinMaxVars' input: '" in "' input: '" mn "' input: '" mx "' }\n"
#define MAT22(n, a, b, c, d)                                                                                         \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: [" a ", " b ", " c ", " d \
    "] } } } }\n"

/* x [N,2] -> m1 = x W1 -> r = Relu(m1) -> m2 = r W2 -> t = -m2 -> y: one engine of 4 nodes */
static const char *k_mlp = PH("x") MAT22("w1", "1", "-2", "0.25", "1.5") MAT22("w2", "2", "0.25", "-1.5", "1")
    MM("m1", "x", "w1") UN("r", "Relu", "m1") MM("m2", "r", "w2") UN("t", "Neg", "m2") UN("y", "Identity", "t");

#define ENGINE "GrapnelEngineOp_000_000"
#define ASSET "assets/grapnel-engine." ENGINE

static gn_graph *segmented_text(const char *text, const char *params)
{
    gn_graph *g = gn_pt_load_text(text);
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char err[256];
    assert_int_equal(gn_conversion_params_parse(&p, params, err, sizeof err), GN_OK);
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    const char *keep[2] = {"x", "y"};
    sp.preserve = keep;
    sp.n_preserve = 2;
    size_t n = 0;
    if (gn_segment(g, &p, &sp, NULL, &n) != GN_OK) fail_msg("gn_segment: %s", gn_graph_errmsg(g));
    assert_int_equal(n, 1);
    return g;
}

static gn_graph *segmented(const char *params)
{
    return segmented_text(k_mlp, params);
}

/* x of shape [rows,2]: 0.5, -1, 1.5, -2, ... */
static gn_tensor input(int64_t rows)
{
    gn_tensor t;
    int64_t dims[2] = {rows, 2};
    assert_int_equal(gn_tensor_alloc(DT_FLOAT, 2, dims, &t), GN_OK);
    float *v = t.data;
    for (int64_t i = 0; i < rows * 2; i++) v[i] = (float)(i + 1) * 0.5f * (i % 2 ? -1.0f : 1.0f);
    return t;
}

/* Runs y on s with x of `rows` rows; returns the status (y freed). */
static gn_status run_rows(gn_session *s, int64_t rows, gn_tensor *keep)
{
    gn_tensor x = input(rows), y;
    memset(&y, 0, sizeof y);
    const char *fn[1] = {"x"}, *xn[1] = {"y"};
    gn_status st = gn_session_run(s, fn, &x, 1, xn, &y, 1);
    if (keep) *keep = y;
    else gn_tensor_free(&y);
    gn_tensor_free(&x);
    return st;
}

static gn__engine_stats stats(gn_session *s)
{
    gn__engine_stats st;
    uint32_t ne = 0;
    assert_int_equal(gn__session_stats(s, &st, &ne), GN_OK);
    return st;
}

#define EXPECT_STATS(st, prebuilt, hits, builds, evictions, fallbacks, stale)                                      \
    do {                                                                                                           \
        assert_int_equal((st).eng_prebuilt, prebuilt);                                                            \
        assert_int_equal((st).eng_hits, hits);                                                                    \
        assert_int_equal((st).eng_builds, builds);                                                                \
        assert_int_equal((st).eng_evictions, evictions);                                                          \
        assert_int_equal((st).eng_fallbacks, fallbacks);                                                          \
        assert_int_equal((st).eng_stale, stale);                                                                  \
    } while (0)

static void build(gn_graph *g, int64_t rows, const char *want_report)
{
    gn_tensor x = input(rows);
    const char *fn[1] = {"x"};
    char *rep = NULL;
    if (gn_engines_build(g, "cpu", fn, &x, 1, &rep) != GN_OK) fail_msg("gn_engines_build: %s", gn_graph_errmsg(g));
    assert_string_equal(rep, want_report);
    gn_free(rep);
    gn_tensor_free(&x);
}

static void test_build_then_hit(void **state)
{
    (void)state;
    gn_graph *g = segmented("{'maximum_cached_engines': 2}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 2)\n");
    build(g, 3, ENGINE ": [3,2] (2 engines cached for it, at most 2)\n");
    build(g, 4, ENGINE ": [4,2] (2 engines cached for it, at most 2)\n");
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    gn_tensor y;
    assert_int_equal(run_rows(s, 4, &y), GN_OK);
    EXPECT_STATS(stats(s), 2, 1, 0, 0, 0, 0);
    assert_int_equal(run_rows(s, 3, NULL), GN_OK);
    EXPECT_STATS(stats(s), 2, 2, 0, 0, 0, 0);
    /* a third shape: built at run time, evicting the least recently used */
    assert_int_equal(run_rows(s, 5, NULL), GN_OK);
    EXPECT_STATS(stats(s), 2, 2, 1, 1, 0, 0);
    gn_session_free(s);
    /* the values are the graph's: row 0 of x = [0.5, -1] -> m1 = [0.25, -2.5] -> r = [0.25, 0]
     * -> m2 = [0.5, 0.0625] -> y = [-0.5, -0.0625] */
    const float *v = y.data;
    assert_float_equal(v[0], -0.5f, 1e-6);
    assert_float_equal(v[1], -0.0625f, 1e-6);
    gn_tensor_free(&y);
    /* no engine op: an error */
    gn_graph *plain = gn_pt_load_text(k_mlp);
    gn_tensor x = input(1);
    const char *fn[1] = {"x"};
    assert_int_equal(gn_engines_build(plain, NULL, fn, &x, 1, NULL), GN_ERR_ARG);
    assert_non_null(strstr(gn_graph_errmsg(plain), "no Grapnel>EngineOp"));
    gn_tensor_free(&x);
    gn_graph_free(plain);
    gn_graph_free(g);
}

/* Saves g (x -> y) as a SavedModel in a fresh directory; returns its path (heap). */
static char *save(gn_graph *g, const char *name)
{
    char *dir = malloc(4096);
    snprintf(dir, 4096, "%s/engine_asset_%s", gn_test_tmpdir(), name);
    char *out = NULL;
    gn_test_sh(&out, "rm -rf '%s'", dir);
    free(out);
    gn_save_params p;
    gn_save_params_init(&p);
    const char *feeds[1] = {"x"}, *fetches[1] = {"y"};
    p.n_feeds = 1;
    p.feeds = feeds;
    p.n_fetches = 1;
    p.fetches = fetches;
    if (gn_savedmodel_save(g, dir, NULL, &p) != GN_OK) fail_msg("save: %s", gn_graph_errmsg(g));
    return dir;
}

static char *asset_of(const char *dir)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/" ASSET, dir);
    return p;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void test_save_load_hit(void **state)
{
    (void)state;
    gn_graph *g = segmented("{}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    char *dir = save(g, "hit");
    char *asset = asset_of(dir);
    /* one TFRecord: length, masked CRC of it, payload, masked CRC of the payload */
    size_t n = 0;
    unsigned char *d = gn_test_slurp(asset, &n);
    assert_non_null(d);
    assert_true(n > 16);
    uint64_t len = le(d, 8);
    assert_int_equal(n, 8 + 4 + len + 4);
    assert_int_equal(gn__crc32c_unmask((uint32_t)le(d + 8, 4)), gn__crc32c(0, d, 8));
    assert_int_equal(gn__crc32c_unmask((uint32_t)le(d + 12 + len, 4)), gn__crc32c(0, d + 12, (size_t)len));
    assert_memory_equal(d + 12, "GNENGINE", 8);
    free(d);

    gn_graph *g2 = gn_test_load(dir);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    gn_tensor y;
    assert_int_equal(run_rows(s, 4, &y), GN_OK);
    EXPECT_STATS(stats(s), 1, 1, 0, 0, 0, 0);
    assert_float_equal(((float *)y.data)[0], -0.5f, 1e-6);
    gn_tensor_free(&y);
    gn_session_free(s);

    /* saved again from the loaded graph: the asset is carried over */
    char *dir2 = save(g2, "hit_again");
    char *asset2 = asset_of(dir2);
    size_t n2 = 0;
    unsigned char *d2 = gn_test_slurp(asset2, &n2);
    assert_non_null(d2);
    assert_int_equal(n2, n);
    free(d2);
    /* a graph without engines built writes no asset */
    gn_graph *g3 = segmented("{}");
    char *dir3 = save(g3, "none");
    char *asset3 = asset_of(dir3);
    assert_false(gn_test_file_exists(asset3));
    free(asset3);
    free(dir3);
    gn_graph_free(g3);
    free(asset2);
    free(dir2);
    gn_graph_free(g2);
    free(asset);
    free(dir);
    gn_graph_free(g);
}

/* In the asset's single record, replaces the n bytes `from` (at payload
 * offset `at`, or the last place they occur when at < 0) with `to`, then fixes
 * the payload CRC and writes the file back. */
static void rewrite_record(const char *asset, long at, const void *from, const void *to, size_t n)
{
    size_t size = 0;
    unsigned char *d = gn_test_slurp(asset, &size);
    assert_non_null(d);
    size_t len = (size_t)le(d, 8);
    unsigned char *p = NULL;
    if (at >= 0) p = d + 12 + at;
    else
        for (size_t i = 12; i + n <= 12 + len; i++)
            if (!memcmp(d + i, from, n)) p = d + i;
    assert_non_null(p);
    assert_memory_equal(p, from, n);
    memcpy(p, to, n);
    uint32_t c = gn__crc32c_mask(gn__crc32c(0, d + 12, len));
    for (int i = 0; i < 4; i++) d[12 + len + (size_t)i] = (unsigned char)(c >> (8 * i));
    FILE *f = fopen(asset, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, size, f), size);
    fclose(f);
    free(d);
}

/* Replaces the library version "0.1.0" in the asset's single record. */
static void rewrite_version(const char *asset) { rewrite_record(asset, -1, "0.1.0", "9.9.9", 5); }

/* A fresh session on g runs 4 rows once: the counters are these, and y is the graph's value. */
static void run_once_expect(gn_graph *g, int prebuilt, int hits, int builds, int evictions, int fallbacks, int stale)
{
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    gn_tensor y;
    assert_int_equal(run_rows(s, 4, &y), GN_OK);
    EXPECT_STATS(stats(s), prebuilt, hits, builds, evictions, fallbacks, stale);
    assert_float_equal(((float *)y.data)[0], -0.5f, 1e-6);
    gn_tensor_free(&y);
    gn_session_free(s);
}

static void test_version_mismatch(void **state)
{
    (void)state;
    /* allow_build_at_runtime: the stale engine is refused and built at run time */
    gn_graph *g = segmented("{}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    char *dir = save(g, "stale");
    char *asset = asset_of(dir);
    rewrite_version(asset);
    gn_graph *g2 = gn_test_load(dir);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 4, NULL), GN_OK);
    EXPECT_STATS(stats(s), 0, 0, 1, 0, 0, 1);
    assert_int_equal(run_rows(s, 4, NULL), GN_OK);
    EXPECT_STATS(stats(s), 0, 1, 1, 0, 0, 1);
    gn_session_free(s);
    gn_graph_free(g2);
    free(asset);
    free(dir);
    gn_graph_free(g);

    /* without allow_build_at_runtime: the native segment runs, counted as a fallback */
    g = segmented("{'allow_build_at_runtime': False}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    dir = save(g, "stale_native");
    asset = asset_of(dir);
    g2 = gn_test_load(dir);
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 4, NULL), GN_OK);   /* intact: a hit, nothing built */
    EXPECT_STATS(stats(s), 1, 1, 0, 0, 0, 0);
    gn_session_free(s);
    gn_graph_free(g2);
    rewrite_version(asset);
    g2 = gn_test_load(dir);
    run_once_expect(g2, 0, 0, 0, 0, 1, 1);
    gn_graph_free(g2);
    free(asset);
    free(dir);
    gn_graph_free(g);
}

/* The engines a cache on backend `be` would start with: how many, how many refused. */
static void expect_seeds(gn_graph *g, gn__engine_backend be, uint32_t want, uint32_t want_stale)
{
    gn_id id = gn__graph_find(g, ENGINE);
    assert_int_not_equal(id, GN_NONE);
    gn__engine_shapes *sh = NULL;
    uint32_t n = 0, stale = 0;
    gn__err e;
    gn__err_clear(&e);
    assert_int_equal(gn__engine_seeds(g, g, id, be, 4, &sh, &n, &stale, &e), GN_OK);
    assert_int_equal(n, want);
    assert_int_equal(stale, want_stale);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(sh[i].backend, be);
        assert_int_equal(sh[i].n_in, 1);
        assert_int_equal(sh[i].rank[0], 2);
        assert_int_equal(sh[i].dims[0], 4);
        assert_int_equal(sh[i].dims[1], 2);
        gn__engine_shapes_free(&sh[i]);
    }
    free(sh);
}

/* Rewrites the record's backend and device strings, "cpu" "host" -> "cuda" "gpu"
 * (the same 15 bytes with their lengths; the payload starts "GNENGINE", u32
 * format, then the backend and the device). */
static void rewrite_backend_to_cuda(const char *asset)
{
    static const unsigned char from[15] = {3, 0, 0, 0, 'c', 'p', 'u', 4, 0, 0, 0, 'h', 'o', 's', 't'};
    static const unsigned char to[15] = {4, 0, 0, 0, 'c', 'u', 'd', 'a', 3, 0, 0, 0, 'g', 'p', 'u'};
    rewrite_record(asset, 12, from, to, sizeof from);
}

static void test_backend_mismatch(void **state)
{
    (void)state;
    /* built on the CPU: a CUDA cache does not start with it (counted stale) */
    gn_graph *g = segmented("{}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    expect_seeds(g, GN__ENGINE_CPU, 1, 0);
    expect_seeds(g, GN__ENGINE_CUDA, 0, 1);
    /* the same through the saved asset, whose record names "cpu" and "host" */
    char *dir = save(g, "backend");
    char *asset = asset_of(dir);
    gn_graph *g2 = gn_test_load(dir);
    expect_seeds(g2, GN__ENGINE_CPU, 1, 0);
    expect_seeds(g2, GN__ENGINE_CUDA, 0, 1);
    gn_graph_free(g2);
    /* a record built for CUDA: refused on the CPU, which builds at run time */
    rewrite_backend_to_cuda(asset);
    g2 = gn_test_load(dir);
    expect_seeds(g2, GN__ENGINE_CPU, 0, 1);
    expect_seeds(g2, GN__ENGINE_CUDA, 1, 0);
    run_once_expect(g2, 0, 0, 1, 0, 0, 1);
    gn_graph_free(g2);
    free(asset);
    free(dir);
    gn_graph_free(g);
}

/* The same graph with another weight: another segment digest. */
static const char *k_mlp2 = PH("x") MAT22("w1", "1", "-2", "0.25", "1.75") MAT22("w2", "2", "0.25", "-1.5", "1")
    MM("m1", "x", "w1") UN("r", "Relu", "m1") MM("m2", "r", "w2") UN("t", "Neg", "m2") UN("y", "Identity", "t");

static void test_segment_mismatch(void **state)
{
    (void)state;
    gn_graph *g = segmented("{}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    char *dir = save(g, "seg_a");
    gn_graph *other = segmented_text(k_mlp2, "{}");
    char *dir2 = save(other, "seg_b");
    char *a = asset_of(dir), *b = asset_of(dir2);
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "mkdir -p '%s/assets' && cp '%s' '%s'", dir2, a, b), 0);
    free(out);
    gn_graph *g2 = gn_test_load(dir2);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 4, NULL), GN_OK);
    EXPECT_STATS(stats(s), 0, 0, 1, 0, 0, 1);
    gn_session_free(s);
    gn_graph_free(g2);
    free(a);
    free(b);
    free(dir);
    free(dir2);
    gn_graph_free(other);
    gn_graph_free(g);
}

/* INT8 (ranges from FakeQuant nodes): the engine comes back from the asset,
 * rebuilt from the calibration table, with the results of one built at run time. */
static void test_int8_reload(void **state)
{
    (void)state;
    const char *text = PH("x") MAT22("w1", "1", "-2", "0.5", "1") MAT22("w2", "2", "0.25", "-1", "1")
        SCAL("a0", "-3") SCAL("a1", "2") SCAL("b0", "-8") SCAL("b1", "8") FQV("q1", "x", "a0", "a1")
        MM("m1", "q1", "w1") UN("r", "Relu", "m1") FQV("q2", "r", "b0", "b1") MM("m2", "q2", "w2")
        UN("y", "Identity", "m2");
    gn_graph *g = segmented_text(text, "{'precision_mode': 'INT8', 'use_calibration': False}");
    /* reference: an engine built at run time */
    gn_session *s = NULL;
    gn_tensor want, got;
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 2, &want), GN_OK);
    EXPECT_STATS(stats(s), 0, 0, 1, 0, 0, 0);
    gn_session_free(s);
    build(g, 2, ENGINE ": [2,2] (1 engine cached for it, at most 1)\n");
    char *dir = save(g, "int8");
    gn_graph *g2 = gn_test_load(dir);
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    if (run_rows(s, 2, &got) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    EXPECT_STATS(stats(s), 1, 1, 0, 0, 0, 0);
    assert_int_equal(got.nbytes, want.nbytes);
    assert_memory_equal(got.data, want.data, want.nbytes);
    gn_session_free(s);
    gn_tensor_free(&got);
    gn_tensor_free(&want);
    gn_graph_free(g2);
    free(dir);
    gn_graph_free(g);
}

static void test_truncated_asset(void **state)
{
    (void)state;
    gn_graph *g = segmented("{}");
    build(g, 4, ENGINE ": [4,2] (1 engine cached for it, at most 1)\n");
    char *dir = save(g, "truncated");
    char *asset = asset_of(dir);
    size_t n = 0;
    unsigned char *d = gn_test_slurp(asset, &n);
    assert_non_null(d);
    FILE *f = fopen(asset, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n - 3, f), n - 3);
    fclose(f);
    free(d);
    gn_graph *g2 = gn_test_load(dir);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 4, NULL), GN_ERR_PARSE);
    const char *m = gn_session_errmsg(s);
    assert_non_null(strstr(m, "grapnel-engine." ENGINE "': record 1 (byte 0): truncated"));
    assert_non_null(strstr(m, ENGINE));
    /* and again on the next run: nothing is built past a bad asset */
    assert_int_equal(run_rows(s, 4, NULL), GN_ERR_PARSE);
    EXPECT_STATS(stats(s), 0, 0, 0, 0, 0, 0);
    gn_session_free(s);
    gn_graph_free(g2);
    free(asset);
    free(dir);

    /* a flipped payload byte: the CRC names the record */
    dir = save(g, "corrupt");
    asset = asset_of(dir);
    d = gn_test_slurp(asset, &n);
    assert_non_null(d);
    d[20] ^= 0x40;
    f = fopen(asset, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    fclose(f);
    free(d);
    g2 = gn_test_load(dir);
    assert_int_equal(gn_session_new(g2, NULL, &s), GN_OK);
    assert_int_equal(run_rows(s, 4, NULL), GN_ERR_PARSE);
    assert_non_null(strstr(gn_session_errmsg(s), "grapnel-engine." ENGINE "': record 1 (byte 0): payload CRC mismatch"));
    gn_session_free(s);
    gn_graph_free(g2);
    free(asset);
    free(dir);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_then_hit),
        cmocka_unit_test(test_save_load_hit),
        cmocka_unit_test(test_version_mismatch),
        cmocka_unit_test(test_backend_mismatch),
        cmocka_unit_test(test_segment_mismatch),
        cmocka_unit_test(test_int8_reload),
        cmocka_unit_test(test_truncated_asset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
