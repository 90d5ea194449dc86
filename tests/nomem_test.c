/* Every allocation failing in turn, as SQLite's malloc tests: for k = 1, 2, ...
 * the k-th allocation the library makes fails, over load + validate + shapes +
 * optimize + serialize + save + run of small models. Each call that meets the
 * failure must return GN_ERR_NOMEM with a message; the handle must stay usable
 * (the same call, made again without the failure, succeeds) and the end
 * result (the optimized graph's bytes, the fetched values) must be the one a
 * run without failures gives. Under the ASan build LeakSanitizer checks that
 * nothing leaks on any path.
 *
 * The allocator hook is link-time wrapping (-Wl,--wrap=malloc,...; see
 * CMakeLists.txt): the library's own objects, linked statically into this
 * binary, call __wrap_malloc; the countdown is this test binary's state, the
 * library has none. Allocations made inside shared libraries (protobuf-c,
 * zlib, OpenBLAS, libc's own) are not counted (docs/hardening.md). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "testutil.h"

/* ---- the hook ----------------------------------------------------------------------------- */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);

static atomic_long countdown;   /* > 0: the allocation that takes it to 0 fails; <= 0: off */
static atomic_long n_allocs;    /* allocations seen while counting */
static atomic_long n_failed;    /* allocations failed */

static int fail_now(void)
{
    atomic_fetch_add(&n_allocs, 1);
    long c = atomic_load(&countdown);
    if (c <= 0) return 0;
    if (atomic_fetch_sub(&countdown, 1) == 1) {
        atomic_fetch_add(&n_failed, 1);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return fail_now() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fail_now() ? NULL : __real_strndup(s, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return fail_now() ? NULL : __real_aligned_alloc(a, n); }

static void arm(long k)
{
    atomic_store(&n_failed, 0);
    atomic_store(&countdown, k);
}
static void disarm(void) { atomic_store(&countdown, 0); }

/* ---- one scenario ------------------------------------------------------------------------- */
typedef struct model {
    const char *path;         /* GraphDef or SavedModel directory */
    const char *signature;    /* SavedModel: the signature frozen and run */
    const char *feed;         /* fed with zeros + 1.5 of feed_dims */
    int32_t feed_rank;
    int64_t feed_dims[4];
    const char *fetch;
} model;

typedef struct result {
    void *bytes;              /* the optimized graph, binary */
    size_t n_bytes;
    gn_tensor out;            /* the fetch */
    long failed_calls;        /* calls that met the failure */
} result;

/* A call that failed: it must say NOMEM with a message. */
static void check_nomem(gn_status s, const char *msg, const char *call, long k)
{
    if (s != GN_ERR_NOMEM)
        fail_msg("allocation %ld failing: %s returned %s (%s), not GN_ERR_NOMEM", k, call, gn_status_str(s),
                 msg ? msg : "");
    if (!msg || !*msg) fail_msg("allocation %ld failing: %s: GN_ERR_NOMEM without a message", k, call);
}

/* Runs `expr` (which sets s); when it fails under the hook, checks the status,
 * then runs it again without the hook: the handle must still be usable. */
#define STEP(call, expr, msgexpr)                                                                               \
    do {                                                                                                        \
        long before_ = atomic_load(&n_failed);                                                                  \
        s = (expr);                                                                                             \
        if (s != GN_OK) {                                                                                       \
            if (atomic_load(&n_failed) == before_) fail_msg("%s failed without an injected failure: %s", call, msgexpr);  \
            check_nomem(s, msgexpr, call, k);                                                                   \
            r->failed_calls++;                                                                                  \
            disarm();                                                                                           \
            s = (expr);                                                                                         \
            if (s != GN_OK) fail_msg("allocation %ld failing: %s again without it: %s", k, call, msgexpr);     \
        }                                                                                                       \
    } while (0)

/* Load + validate + shapes + (freeze) + optimize + serialize + save + run, the
 * k-th allocation failing (k = 0: none). */
static void scenario(const model *m, long k, result *r)
{
    memset(r, 0, sizeof *r);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/nomem_save", gn_test_tmpdir());
    gn_test_sh(NULL, "rm -rf '%s' '%s.pb'", dir, dir);
    gn_status s;
    arm(k);

    /* load: a handle comes back on every failure but its own allocation */
    gn_graph *g = NULL;
    for (;;) {
        long before = atomic_load(&n_failed);
        s = gn_graph_load(m->path, NULL, &g);
        if (s == GN_OK) break;
        if (atomic_load(&n_failed) == before) fail_msg("load failed without an injected failure: %s", gn_graph_errmsg(g));
        if (g) check_nomem(s, gn_graph_errmsg(g), "gn_graph_load", k);
        else assert_int_equal(s, GN_ERR_NOMEM);
        r->failed_calls++;
        gn_graph_free(g);
        g = NULL;
        disarm();
    }
    STEP("gn_graph_validate", gn_graph_validate(g), gn_graph_errmsg(g));
    STEP("gn_graph_infer_shapes", gn_graph_infer_shapes(g), gn_graph_errmsg(g));

    gn_graph *work = g;
    if (m->signature) {
        /* the SavedModel written whole (variables and assets), then its signature frozen */
        gn_save_options so;
        gn_save_options_init(&so);
        for (;;) {
            long before = atomic_load(&n_failed);
            s = gn_savedmodel_save(g, dir, &so, NULL);
            if (s == GN_OK) break;
            if (atomic_load(&n_failed) == before) fail_msg("save failed without an injected failure: %s", gn_graph_errmsg(g));
            check_nomem(s, gn_graph_errmsg(g), "gn_savedmodel_save", k);
            if (gn_test_file_exists(dir)) fail_msg("allocation %ld failing: a failed save left %s", k, dir);
            r->failed_calls++;
            disarm();
        }
        for (;;) {
            long before = atomic_load(&n_failed);
            work = NULL;
            s = gn_graph_freeze(g, m->signature, &work);
            if (s == GN_OK) break;
            if (atomic_load(&n_failed) == before) fail_msg("freeze failed without an injected failure: %s", gn_graph_errmsg(g));
            check_nomem(s, gn_graph_errmsg(g), "gn_graph_freeze", k);
            gn_graph_free(work);
            r->failed_calls++;
            disarm();
        }
    }

    gn_options o;
    gn_options_init(&o);
    o.min_graph_nodes = -1;
    o.fail_on_optimizer_errors = 1;   /* a pass meeting the failure reports it, not rolls back */
    gn_optimize_params op;
    gn_optimize_params_init(&op);
    op.fetches = &m->fetch;
    op.n_fetches = 1;
    op.feeds = &m->feed;
    op.n_feeds = 1;
    for (;;) {
        long before = atomic_load(&n_failed);
        gn_report *rep = NULL;
        s = gn_optimize(work, &o, &op, &rep);
        gn_report_free(rep);
        if (s == GN_OK) break;
        if (atomic_load(&n_failed) == before) fail_msg("optimize failed without an injected failure: %s", gn_graph_errmsg(work));
        check_nomem(s, gn_graph_errmsg(work), "gn_optimize", k);
        r->failed_calls++;
        disarm();
    }
    STEP("gn_graph_serialize", gn_graph_serialize(work, GN_FORMAT_BINARY, &r->bytes, &r->n_bytes),
         gn_graph_errmsg(work));
    char pb[1100];
    snprintf(pb, sizeof pb, "%s.pb", dir);
    STEP("gn_graph_save", gn_graph_save(work, pb, GN_FORMAT_BINARY), gn_graph_errmsg(work));

    gn_tensor x;
    memset(&x, 0, sizeof x);
    for (;;) {
        long before = atomic_load(&n_failed);
        s = gn_tensor_alloc(1 /* float */, m->feed_rank, m->feed_dims, &x);
        if (s == GN_OK) break;
        if (atomic_load(&n_failed) == before) fail_msg("gn_tensor_alloc failed without an injected failure");
        assert_int_equal(s, GN_ERR_NOMEM);   /* no handle, no message: the status says it */
        r->failed_calls++;
        disarm();
    }
    for (int64_t i = 0; i < gn_tensor_numel(&x); i++) ((float *)x.data)[i] = 1.5f + (float)i;

    gn_session_options so;
    gn_session_options_init(&so);
    so.num_threads = 1;
    gn_session *ss = NULL;
    for (;;) {
        long before = atomic_load(&n_failed);
        s = gn_session_new(work, &so, &ss);
        if (s == GN_OK) break;
        if (atomic_load(&n_failed) == before) fail_msg("session failed without an injected failure");
        if (ss) check_nomem(s, gn_session_errmsg(ss), "gn_session_new", k);
        else assert_int_equal(s, GN_ERR_NOMEM);
        r->failed_calls++;
        gn_session_free(ss);
        ss = NULL;
        disarm();
    }
    STEP("gn_session_run", gn_session_run(ss, &m->feed, &x, 1, &m->fetch, &r->out, 1), gn_session_errmsg(ss));
    disarm();
    gn_session_free(ss);
    gn_tensor_free(&x);
    if (work != g) gn_graph_free(work);
    gn_graph_free(g);
}

static void result_free(result *r)
{
    gn_free(r->bytes);
    gn_tensor_free(&r->out);
}

/* k = 1, 2, ... until an iteration meets no failure (every allocation of the
 * scenario has failed once); returns the number of allocations covered. */
static long every_allocation(const model *m)
{
    result ref;
    scenario(m, 0, &ref);
    assert_true(ref.n_bytes > 0);
    /* GN_NOMEM_FROM=K starts at allocation K (to study one failure) */
    const char *from = getenv("GN_NOMEM_FROM");
    long k = from ? atol(from) : 1;
    for (;; k++) {
        if (getenv("GN_NOMEM_TRACE")) fprintf(stderr, "nomem: %s: allocation %ld\n", m->path, k);
        result r;
        scenario(m, k, &r);
        int met = atomic_load(&n_failed) > 0;
        /* met without a failed call: the failure was absorbed by a fallback that needs no
         * memory (allowed, as long as the results below are unchanged) */
        if (r.n_bytes != ref.n_bytes || memcmp(r.bytes, ref.bytes, ref.n_bytes) != 0)
            fail_msg("%s: allocation %ld failing: the optimized graph differs from the one without failures", m->path,
                     k);
        gn_compare_result cr;
        assert_int_equal(gn_tensor_compare(&r.out, &ref.out, 0, &cr), GN_OK);
        if (!cr.match || cr.n_diff)
            fail_msg("%s: allocation %ld failing: fetch differs (%s)", m->path, k, cr.why);
        result_free(&r);
        if (!met) break;
    }
    result_free(&ref);
    print_message("%s: %ld allocations, each failed in turn\n", m->path, k - 1);
    return k - 1;
}

static void test_graphdef_dense(void **state)
{
    (void)state;
    char p[1024];
    model m = {gn_test_data("nomem/dense.pb", p, sizeof p), NULL, "x", 2, {4, 3}, "am"};
    assert_true(every_allocation(&m) > 100);
}

static void test_graphdef_conv(void **state)
{
    (void)state;
    char p[1024];
    model m = {gn_test_data("nomem/conv.pbtxt", p, sizeof p), NULL, "x", 4, {1, 5, 5, 2}, "t"};
    assert_true(every_allocation(&m) > 100);
}

/* A 64 KiB filter times a scale: constant folding writes the product over
 * the filter's bytes (constfold_fold.c), giving up the copy the optimizer
 * keeps for rollback and taking a new one after the write. A failure after
 * it goes back to that copy; a failure to take it stops the pass. The graph
 * optimized again then gives the same bytes. */
static void test_graphdef_fold_in_place(void **state)
{
    (void)state;
    char p[1024];
    model m = {gn_test_data("nomem/fold_in_place.pb", p, sizeof p), NULL, "x", 2, {2, 128}, "y"};
    assert_true(every_allocation(&m) > 100);
}

/* A TF1 SavedModel with variables and an asset: saved whole, then a signature
 * frozen (the variables read from the checkpoint), optimized and run. */
static void test_savedmodel_half_plus_two(void **state)
{
    (void)state;
    char p[1024];
    if (!gn_test_corpus("tensorflow__serving/"
                        "tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123",
                        p, sizeof p))
        skip();
    model m = {p, "regress_x2_to_y3", "x2:0", 2, {3, 1}, "y3:0"};
    assert_true(every_allocation(&m) > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graphdef_dense),
        cmocka_unit_test(test_graphdef_conv),
        cmocka_unit_test(test_graphdef_fold_in_place),
        cmocka_unit_test(test_savedmodel_half_plus_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
