/* What may be shared between threads, exactly as the headers say it
 * (include/grapnel/graph.h, runtime.h, options.h; docs/hardening.md "Threads").
 * Built and run under ThreadSanitizer by `make tsan` (build-tsan); in the
 * Release and ASan suites it checks the results alone.
 *
 *   - eight threads, each with its own graphs: load (GraphDef or SavedModel with
 *     variables, frozen), run, optimize, segment, serialize and reload, sharing
 *     one gn_options and one gn_conversion_params (read only);
 *   - one graph no call changes, shared by eight threads: each makes its own
 *     session on it and runs it, clones it and optimizes the clone, and reads
 *     it with the inspection calls; one feed tensor shared by every run;
 *   - eight clones of one SavedModel (they share its file data and the
 *     variables' bundle), one per thread, each frozen and run;
 *   - one session used by eight threads in turn (a mutex between them).
 *
 * cmocka's assertions are made on the main thread only: the threads record
 * what went wrong as text. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/convert.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/runtime.h"
#include "grapnel/savedmodel.h"

#define N_THREADS 8
#define ERRLEN 1024

/* Relative L2 error allowed: the reference run against TensorFlow's output (as
 * tests/golden_test.c), and every rewritten graph against the original. */
#define TOL_GOLDEN 1e-5
#define TOL_REWRITE 1e-5

typedef struct model {
    const char *path;        /* under tests/data */
    const char *sig;         /* SavedModel: the signature frozen (its only input and output) */
    const char *feed;        /* GraphDef: the tensor fed */
    const char *fetch;       /* GraphDef: the tensor fetched */
    const char *feed_file;   /* .npy under tests/data; NULL: feed_dims, values i * 0.37 mod 2 - 1 */
    int32_t feed_rank;
    int64_t feed_dims[4];
    const char *want_file;   /* TensorFlow's output (.npy under tests/data), or NULL */
} model;

static const model models[N_THREADS] = {
    {"golden/cnn_bn_residual.pb", NULL, "x:0", "Identity:0", "golden/cnn_bn_residual.in0.npy", 0, {0},
     "golden/cnn_bn_residual.out0.npy"},
    {"golden/mobilenet_v2.pb", NULL, "x:0", "Identity:0", "golden/mobilenet_v2.in0.npy", 0, {0},
     "golden/mobilenet_v2.out0.npy"},
    {"golden/lstm.pb", NULL, "x:0", "Identity:0", "golden/lstm.in0.npy", 0, {0}, "golden/lstm.out0.npy"},
    {"golden/lstm_v1.pb", NULL, "x:0", "Identity:0", "golden/lstm_v1.in0.npy", 0, {0}, "golden/lstm_v1.out0.npy"},
    {"golden/transformer.pb", NULL, "x:0", "Identity:0", "golden/transformer.in0.npy", 0, {0},
     "golden/transformer.out0.npy"},
    {"nomem/dense.pb", NULL, "x", "am", NULL, 2, {4, 3}, NULL},
    {"nomem/conv.pbtxt", NULL, "x", "t", NULL, 4, {1, 5, 5, 2}, NULL},
    {"savedmodel_sharding/plain", "serving_default", NULL, NULL, "saved_by_grapnel/max_shard_200.serving_default.x.in.npy",
     0, {0}, "saved_by_grapnel/max_shard_200.v2.serving_default.y.npy"},
};

/* What every thread shares, read only. */
static gn_options shared_opts;
static gn_conversion_params shared_params;
static pthread_barrier_t start_line;

static void fail_at(char *err, const char *what, const char *msg)
{
    if (!err[0]) snprintf(err, ERRLEN, "%s: %s", what, msg);
}

static gn_status read_npy(const char *rel, gn_tensor *t, char *err)
{
    char p[2048], e[512];
    gn_test_data(rel, p, sizeof p);
    gn_status s = gn_npy_read(p, t, e, sizeof e);
    if (s != GN_OK) fail_at(err, "npy", e);
    return s;
}

static bool same(const gn_tensor *a, const gn_tensor *ref, double tol, const char *what, char *err)
{
    gn_compare_result c;
    if (gn_tensor_compare(a, ref, tol, &c) != GN_OK) {
        fail_at(err, what, "gn_tensor_compare failed");
        return false;
    }
    if (!c.match) {
        char m[512];
        snprintf(m, sizeof m, "%s (rel L2 %.3e, max abs %.3e, tol %.0e)", c.why[0] ? c.why : "values differ",
                 c.rel_l2_err, c.max_abs_err, tol);
        fail_at(err, what, m);
    }
    return c.match != 0;
}

/* One run of g on a fresh session: feed -> *out. */
static bool run_once(const gn_graph *g, int32_t num_threads, const char *feed, const gn_tensor *x, const char *fetch,
                     gn_tensor *out, const char *what, char *err)
{
    gn_session_options so;
    gn_session_options_init(&so);
    so.num_threads = num_threads;
    gn_session *s = NULL;
    bool ok = gn_session_new(g, &so, &s) == GN_OK && gn_session_run(s, &feed, x, 1, &fetch, out, 1) == GN_OK;
    if (!ok) fail_at(err, what, gn_session_errmsg(s));
    gn_session_free(s);
    return ok;
}

/* A hash of what the inspection calls say about g. */
static uint64_t inspect_hash(const gn_graph *g)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(str)                                                            \
    do {                                                                    \
        for (const char *q_ = (str); q_ && *q_; q_++) h = (h ^ (uint8_t)*q_) * 1099511628211ull; \
        h = (h ^ 0xff) * 1099511628211ull;                                  \
    } while (0)
    size_t n = gn_graph_node_count(g);
    for (size_t i = 0; i < n; i++) {
        MIX(gn_graph_node_name(g, i));
        MIX(gn_graph_node_op(g, i));
        MIX(gn_graph_node_device(g, i));
        for (size_t k = 0; k < gn_graph_node_input_count(g, i); k++) {
            char in[512];
            if (gn_graph_node_input(g, i, k, in, sizeof in) == GN_OK) MIX(in);
        }
        int32_t no = gn_graph_node_output_count(g, i);
        for (int32_t k = 0; k < no; k++) {
            int64_t dims[8];
            int32_t rank = gn_graph_node_output_shape(g, i, k, dims, 8);
            h = (h ^ (uint64_t)gn_graph_node_output_dtype(g, i, k)) * 1099511628211ull;
            h = (h ^ (uint64_t)(int64_t)rank) * 1099511628211ull;
            for (int32_t d = 0; d < rank && d < 8; d++) h = (h ^ (uint64_t)dims[d]) * 1099511628211ull;
        }
    }
    for (size_t f = 0; f < gn_graph_function_count(g); f++) {
        MIX(gn_graph_function_name(g, f));
        h ^= gn_graph_function_node_count(g, f);
    }
#undef MIX
    return h;
}

/* ---- eight threads, eight graphs ------------------------------------------------------------- */
typedef struct own_job {
    const model *m;
    char err[ERRLEN];
    size_t optimized_nodes, engines;
} own_job;

static void own_graphs(own_job *j)
{
    const model *m = j->m;
    char *err = j->err, p[2048];
    gn_graph *loaded = NULL, *g = NULL, *opt = NULL, *seg = NULL, *back = NULL;
    gn_tensor x = {0}, want = {0}, ref = {0}, got = {0};
    void *bytes = NULL;
    size_t nbytes = 0;
    const char *feed = m->feed, *fetch = m->fetch;

    if (gn_graph_load(gn_test_data(m->path, p, sizeof p), NULL, &loaded) != GN_OK) {
        fail_at(err, "load", gn_graph_errmsg(loaded));
        goto out;
    }
    if (m->sig) {
        size_t nv = 0;
        gn_signature_arg in, outa;
        if (gn_graph_variable_count(loaded, &nv) != GN_OK || nv == 0 ||
            gn_graph_signature_arg(loaded, m->sig, 0, 0, &in) != GN_OK ||
            gn_graph_signature_arg(loaded, m->sig, 1, 0, &outa) != GN_OK) {
            fail_at(err, "SavedModel", nv ? gn_graph_errmsg(loaded) : "no variables");
            goto out;
        }
        feed = in.tensor;
        fetch = outa.tensor;
        if (gn_graph_freeze(loaded, m->sig, &g) != GN_OK) {
            fail_at(err, "freeze", gn_graph_errmsg(loaded));
            goto out;
        }
    } else {
        g = loaded;
        loaded = NULL;
    }
    if (m->feed_file) {
        if (read_npy(m->feed_file, &x, err) != GN_OK) goto out;
    } else {
        if (gn_tensor_alloc(1, m->feed_rank, m->feed_dims, &x) != GN_OK) {
            fail_at(err, "feed", "gn_tensor_alloc failed");
            goto out;
        }
        float *v = x.data;
        for (int64_t i = 0; i < gn_tensor_numel(&x); i++) v[i] = fmodf((float)i * 0.37f, 2.0f) - 1.0f;
    }
    if (!run_once(g, 0, feed, &x, fetch, &ref, "run", err)) goto out;
    if (m->want_file) {
        if (read_npy(m->want_file, &want, err) != GN_OK) goto out;
        if (!same(&ref, &want, TOL_GOLDEN, "the original graph against TensorFlow", err)) goto out;
    }

    /* optimized (the shared options), run with two threads */
    gn_optimize_params op;
    gn_optimize_params_init(&op);
    op.feeds = &feed;
    op.n_feeds = 1;
    op.fetches = &fetch;
    op.n_fetches = 1;
    if (gn_graph_clone(g, &opt) != GN_OK || gn_optimize(opt, &shared_opts, &op, NULL) != GN_OK) {
        fail_at(err, "optimize", opt ? gn_graph_errmsg(opt) : "clone failed");
        goto out;
    }
    j->optimized_nodes = gn_graph_node_count(opt);
    if (!run_once(opt, 2, feed, &x, fetch, &got, "run optimized", err)) goto out;
    if (!same(&got, &ref, TOL_REWRITE, "optimized against the original", err)) goto out;
    gn_tensor_free(&got);

    /* segmented (the shared conversion parameters) */
    const char *keep[2] = {feed, fetch};
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.preserve = keep;
    sp.n_preserve = 2;
    if (gn_graph_clone(g, &seg) != GN_OK || gn_segment(seg, &shared_params, &sp, NULL, &j->engines) != GN_OK) {
        fail_at(err, "segment", seg ? gn_graph_errmsg(seg) : "clone failed");
        goto out;
    }
    if (!run_once(seg, 0, feed, &x, fetch, &got, "run segmented", err)) goto out;
    if (!same(&got, &ref, TOL_REWRITE, "segmented against the original", err)) goto out;
    gn_tensor_free(&got);

    /* serialized and loaded back */
    if (gn_graph_serialize(opt, GN_FORMAT_BINARY, &bytes, &nbytes) != GN_OK ||
        gn_graph_load_buffer(bytes, nbytes, "optimized", NULL, &back) != GN_OK) {
        fail_at(err, "serialize and reload", back ? gn_graph_errmsg(back) : gn_graph_errmsg(opt));
        goto out;
    }
    void *again = NULL;
    size_t nagain = 0;
    if (gn_graph_serialize(back, GN_FORMAT_BINARY, &again, &nagain) != GN_OK || nagain != nbytes ||
        memcmp(again, bytes, nbytes) != 0)
        fail_at(err, "reload", "the graph loaded back serializes to other bytes");
    gn_free(again);
out:
    gn_free(bytes);
    gn_tensor_free(&x);
    gn_tensor_free(&want);
    gn_tensor_free(&ref);
    gn_tensor_free(&got);
    gn_graph_free(back);
    gn_graph_free(seg);
    gn_graph_free(opt);
    gn_graph_free(g);
    gn_graph_free(loaded);
}

static void *own_thread(void *arg)
{
    pthread_barrier_wait(&start_line);
    own_graphs(arg);
    return NULL;
}

static void start_and_join(void *(*fn)(void *), void *jobs, size_t job_size)
{
    pthread_t t[N_THREADS];
    assert_int_equal(pthread_barrier_init(&start_line, NULL, N_THREADS), 0);
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, fn, (char *)jobs + (size_t)i * job_size), 0);
    for (int i = 0; i < N_THREADS; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start_line);
}

static void test_own_graphs(void **state)
{
    (void)state;
    own_job jobs[N_THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N_THREADS; i++) jobs[i].m = &models[i];
    start_and_join(own_thread, jobs, sizeof jobs[0]);
    for (int i = 0; i < N_THREADS; i++) {
        if (jobs[i].err[0]) fail_msg("thread %d (%s): %s", i, models[i].path, jobs[i].err);
        print_message("    %-28s optimized to %zu nodes, %zu engine(s)\n", models[i].path, jobs[i].optimized_nodes,
                      jobs[i].engines);
    }
}

/* ---- one graph, eight threads ------------------------------------------------------------------ */
typedef struct shared_job {
    const gn_graph *g;
    const gn_tensor *x, *want;   /* shared by every thread */
    uint64_t inspect_want;
    int index;
    char err[ERRLEN];
} shared_job;

static void *shared_thread(void *arg)
{
    shared_job *j = arg;
    char *err = j->err;
    const char *feed = "x:0", *fetch = "Identity:0";
    gn_session *s = NULL;
    gn_graph *c = NULL;
    gn_tensor got = {0};
    pthread_barrier_wait(&start_line);

    gn_session_options so;
    gn_session_options_init(&so);
    so.num_threads = 1 + j->index % 2;
    so.seed = (uint64_t)j->index;
    if (gn_session_new(j->g, &so, &s) != GN_OK) {
        fail_at(err, "session", gn_session_errmsg(s));
        goto out;
    }
    for (int run = 0; run < 3; run++) {
        if (gn_session_run(s, &feed, j->x, 1, &fetch, &got, 1) != GN_OK) {
            fail_at(err, "run", gn_session_errmsg(s));
            goto out;
        }
        if (!same(&got, j->want, TOL_GOLDEN, "run against TensorFlow", err)) goto out;
        gn_tensor_free(&got);
        if (inspect_hash(j->g) != j->inspect_want) {
            fail_at(err, "inspect", "the shared graph reads differently");
            goto out;
        }
    }
    gn_optimize_params op;
    gn_optimize_params_init(&op);
    op.feeds = &feed;
    op.n_feeds = 1;
    op.fetches = &fetch;
    op.n_fetches = 1;
    if (gn_graph_clone(j->g, &c) != GN_OK || gn_optimize(c, &shared_opts, &op, NULL) != GN_OK) {
        fail_at(err, "optimize a clone", c ? gn_graph_errmsg(c) : "clone failed");
        goto out;
    }
    if (!run_once(c, 0, feed, j->x, fetch, &got, "run the optimized clone", err)) goto out;
    same(&got, j->want, TOL_GOLDEN, "the optimized clone against TensorFlow", err);
out:
    gn_tensor_free(&got);
    gn_graph_free(c);
    gn_session_free(s);
    return NULL;
}

static void test_shared_graph(void **state)
{
    (void)state;
    char p[2048], err[ERRLEN] = "";
    gn_graph *g = NULL;
    gn_tensor x = {0}, want = {0};
    if (gn_graph_load(gn_test_data("golden/cnn_bn_residual.pb", p, sizeof p), NULL, &g) != GN_OK)
        fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(gn_graph_infer_shapes(g), GN_OK);   /* before it is shared: it changes the graph */
    assert_int_equal(read_npy("golden/cnn_bn_residual.in0.npy", &x, err), GN_OK);
    assert_int_equal(read_npy("golden/cnn_bn_residual.out0.npy", &want, err), GN_OK);
    size_t xi = 0;
    while (xi < gn_graph_node_count(g) && strcmp(gn_graph_node_name(g, xi), "x")) xi++;
    int64_t dims[8];
    assert_int_equal(gn_graph_node_output_shape(g, xi, 0, dims, 8), 4);   /* x: the shapes are there to read */
    uint64_t h = inspect_hash(g);
    size_t n = gn_graph_node_count(g);
    shared_job jobs[N_THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N_THREADS; i++) jobs[i] = (shared_job){.g = g, .x = &x, .want = &want, .inspect_want = h, .index = i};
    start_and_join(shared_thread, jobs, sizeof jobs[0]);
    for (int i = 0; i < N_THREADS; i++)
        if (jobs[i].err[0]) fail_msg("thread %d: %s", i, jobs[i].err);
    /* nothing changed it */
    assert_int_equal(gn_graph_node_count(g), n);
    assert_true(inspect_hash(g) == h);
    gn_tensor_free(&x);
    gn_tensor_free(&want);
    gn_graph_free(g);
}

/* ---- clones of one SavedModel, one per thread ------------------------------------------------------ */
typedef struct clone_job {
    gn_graph *g;                 /* this thread's clone (freed by it) */
    const gn_tensor *x, *want;
    char err[ERRLEN];
} clone_job;

static void *clone_thread(void *arg)
{
    clone_job *j = arg;
    gn_graph *f = NULL;
    gn_tensor got = {0};
    gn_signature_arg in, outa;
    size_t nv = 0;
    pthread_barrier_wait(&start_line);
    if (gn_graph_variable_count(j->g, &nv) != GN_OK || nv == 0) {
        fail_at(j->err, "variables", gn_graph_errmsg(j->g));
        goto out;
    }
    if (gn_graph_signature_arg(j->g, "serving_default", 0, 0, &in) != GN_OK ||
        gn_graph_signature_arg(j->g, "serving_default", 1, 0, &outa) != GN_OK ||
        gn_graph_freeze(j->g, "serving_default", &f) != GN_OK) {
        fail_at(j->err, "freeze", gn_graph_errmsg(j->g));
        goto out;
    }
    char feed[256], fetch[256];   /* the names are the clone's: copied before it goes */
    snprintf(feed, sizeof feed, "%s", in.tensor);
    snprintf(fetch, sizeof fetch, "%s", outa.tensor);
    gn_graph_free(j->g);   /* the frozen graph outlives the clone it came from */
    j->g = NULL;
    if (!run_once(f, 0, feed, j->x, fetch, &got, "run", j->err)) goto out;
    same(&got, j->want, TOL_GOLDEN, "the frozen clone against TensorFlow", j->err);
out:
    gn_tensor_free(&got);
    gn_graph_free(f);
    gn_graph_free(j->g);
    j->g = NULL;
    return NULL;
}

static void test_savedmodel_clones(void **state)
{
    (void)state;
    char p[2048], err[ERRLEN] = "";
    gn_graph *g = NULL;
    gn_tensor x = {0}, want = {0};
    if (gn_graph_load(gn_test_data("savedmodel_sharding/plain", p, sizeof p), NULL, &g) != GN_OK)
        fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(read_npy("saved_by_grapnel/max_shard_200.serving_default.x.in.npy", &x, err), GN_OK);
    assert_int_equal(read_npy("saved_by_grapnel/max_shard_200.v2.serving_default.y.npy", &want, err), GN_OK);
    clone_job jobs[N_THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N_THREADS; i++) {
        jobs[i].x = &x;
        jobs[i].want = &want;
        assert_int_equal(gn_graph_clone(g, &jobs[i].g), GN_OK);
    }
    gn_graph_free(g);   /* the clones keep what they share */
    start_and_join(clone_thread, jobs, sizeof jobs[0]);
    for (int i = 0; i < N_THREADS; i++)
        if (jobs[i].err[0]) fail_msg("thread %d: %s", i, jobs[i].err);
    gn_tensor_free(&x);
    gn_tensor_free(&want);
}

/* ---- one session, eight threads in turn -------------------------------------------------------------- */
typedef struct turn_job {
    gn_session *s;
    pthread_mutex_t *lock;
    const gn_tensor *x, *want;
    const char *konst;           /* a Const node, fetched too */
    size_t konst_bytes;
    char err[ERRLEN];
} turn_job;

static void *turn_thread(void *arg)
{
    turn_job *j = arg;
    const char *feed = "x:0", *fetch[2] = {"Identity:0", j->konst};
    pthread_barrier_wait(&start_line);
    for (int run = 0; run < 3 && !j->err[0]; run++) {
        gn_tensor got[2] = {{0}, {0}};
        pthread_mutex_lock(j->lock);
        if (gn_session_run(j->s, &feed, j->x, 1, fetch, got, 2) != GN_OK) fail_at(j->err, "run", gn_session_errmsg(j->s));
        pthread_mutex_unlock(j->lock);
        if (!j->err[0]) same(&got[0], j->want, TOL_GOLDEN, "run against TensorFlow", j->err);
        if (!j->err[0] && got[1].nbytes != j->konst_bytes) fail_at(j->err, j->konst, "the constant's size changed");
        /* fetches belong to their caller: read and freed outside the lock */
        gn_tensor_free(&got[0]);
        gn_tensor_free(&got[1]);
    }
    return NULL;
}

static void test_session_in_turn(void **state)
{
    (void)state;
    char p[2048], err[ERRLEN] = "";
    gn_graph *g = NULL;
    gn_session *s = NULL;
    gn_tensor x = {0}, want = {0};
    if (gn_graph_load(gn_test_data("golden/lstm.pb", p, sizeof p), NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(read_npy("golden/lstm.in0.npy", &x, err), GN_OK);
    assert_int_equal(read_npy("golden/lstm.out0.npy", &want, err), GN_OK);
    assert_int_equal(gn_session_new(g, NULL, &s), GN_OK);
    const char *konst = NULL;   /* the first Const */
    for (size_t i = 0; i < gn_graph_node_count(g) && !konst; i++)
        if (!strcmp(gn_graph_node_op(g, i), "Const"))
            konst = gn_graph_node_name(g, i);
    assert_non_null(konst);
    const char *fetch[2] = {"Identity:0", konst}, *feed = "x:0";
    gn_tensor first[2] = {{0}, {0}};
    assert_int_equal(gn_session_run(s, &feed, &x, 1, fetch, first, 2), GN_OK);
    assert_true(first[1].nbytes > 0);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    turn_job jobs[N_THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < N_THREADS; i++)
        jobs[i] = (turn_job){.s = s, .lock = &lock, .x = &x, .want = &want, .konst = konst, .konst_bytes = first[1].nbytes};
    start_and_join(turn_thread, jobs, sizeof jobs[0]);
    for (int i = 0; i < N_THREADS; i++)
        if (jobs[i].err[0]) fail_msg("thread %d: %s", i, jobs[i].err);
    gn_tensor_free(&first[0]);
    gn_tensor_free(&first[1]);
    gn_session_free(s);
    gn_tensor_free(&x);
    gn_tensor_free(&want);
    gn_graph_free(g);
}

static int setup(void **state)
{
    (void)state;
    gn_options_init(&shared_opts);
    shared_opts.min_graph_nodes = -1;
    shared_opts.fail_on_optimizer_errors = 1;
    gn_conversion_params_init(&shared_params);
    shared_params.minimum_segment_size = 2;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_graphs),
        cmocka_unit_test(test_shared_graph),
        cmocka_unit_test(test_savedmodel_clones),
        cmocka_unit_test(test_session_in_turn),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
