/* The CUDA backend as a run-time module (src/runtime/backend.c,
 * src/runtime/cuda/module.h): libgrapnel.so and the programs linked with
 * libgrapnel.a need no CUDA library (readelf -d), the module needs the CUDA
 * runtime and not libgrapnel, and where the module is absent, or is not one,
 * asking for "cuda" fails with a message saying so while "cpu" runs.
 * Needs no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "passtest.h"
#include "testutil.h"

#define DT_FLOAT 1

static gn_graph *relu_graph(void)
{
    static const char text[] =
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'y' op: 'Relu' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(text, strlen(text), "t.pbtxt", NULL, &g) != GN_OK) fail_msg("load: %s", gn_graph_errmsg(g));
    return g;
}

/* Opens a session on `backend`; its status, and its message in msg. */
static gn_status open_on(const char *backend, char *msg, size_t cap)
{
    gn_graph *g = relu_graph();
    gn_session_options o;
    gn_session_options_init(&o);
    o.backend = backend;
    gn_session *s = NULL;
    gn_status st = gn_session_new(g, &o, &s);
    snprintf(msg, cap, "%s", st == GN_OK ? "" : gn_session_errmsg(s));
    gn_session_free(s);
    gn_graph_free(g);
    return st;
}

/* Relu on the CPU backend: "0 0 2" when it works. */
static void run_cpu(char *out, size_t cap)
{
    gn_graph *g = relu_graph();
    gn_session_options o;
    gn_session_options_init(&o);
    gn_session *s = NULL;
    float v[3] = {-1, 0, 2};
    gn_tensor in = {.dtype = DT_FLOAT, .rank = 1, .dims = {3}, .data = v, .nbytes = sizeof v}, y;
    const char *feed[1] = {"x"}, *fetch[1] = {"y"};
    if (gn_session_new(g, &o, &s) != GN_OK || gn_session_run(s, feed, &in, 1, fetch, &y, 1) != GN_OK) {
        snprintf(out, cap, "cpu failed: %s", gn_session_errmsg(s));
    } else {
        const float *r = y.data;
        snprintf(out, cap, "%g %g %g", (double)r[0], (double)r[1], (double)r[2]);
        gn_tensor_free(&y);
    }
    gn_session_free(s);
    gn_graph_free(g);
}

/* The NEEDED entries of an ELF file, one per line. */
static char *needed(const char *path)
{
    char *out = NULL;
    int rc = gn_test_sh(&out, "readelf -d '%s' | awk '/NEEDED/ {print $NF}' | tr -d '[]'", path);
    if (rc != 0) fail_msg("readelf -d %s: rc %d: %s", path, rc, out ? out : "");
    return out;
}

static void assert_no_cuda_needed(const char *what, const char *path)
{
    char *n = needed(path);
    assert_non_null(strstr(n, "libc.so.6"));   /* readelf did read it */
    static const char *const cuda_libs[] = {"libcudart", "libcuda.", "libcublas", "libcudnn", "libnvrtc", "libnvJit"};
    for (size_t i = 0; i < sizeof cuda_libs / sizeof *cuda_libs; i++)
        if (strstr(n, cuda_libs[i])) fail_msg("%s (%s) needs %s:\n%s", what, path, cuda_libs[i], n);
    free(n);
}

static void test_library_needs_no_cuda(void **state)
{
    (void)state;
    assert_no_cuda_needed("libgrapnel.so", GN_LIB_PATH);
    /* this program is linked with libgrapnel.a */
    assert_no_cuda_needed("a program linked with libgrapnel.a", "/proc/self/exe");
}

static void test_module_layout(void **state)
{
    (void)state;
#ifdef GN_HAVE_CUDA
    char *n = needed(GN_CUDA_MODULE_PATH);
    assert_non_null(strstr(n, "libcudart.so"));
    assert_null(strstr(n, "libgrapnel"));   /* it calls the library through its table, whichever copy loaded it */
    free(n);
    char *syms = NULL;
    assert_int_equal(gn_test_sh(&syms, "nm -D --defined-only '%s' | awk '{print $NF}'", GN_CUDA_MODULE_PATH), 0);
    assert_string_equal(syms, "gn__cuda_module_open\n");
    free(syms);
#else
    print_message("skipped: built without the CUDA backend (no module)\n");
    skip();
#endif
}

/* GRAPNEL_CUDA_MODULE names a file that is not there. */
static void test_module_absent_env(void **state)
{
    (void)state;
    char path[1200], want[4096], msg[2048], y[256];
    snprintf(path, sizeof path, "%s/absent/libgrapnel_cuda.so", gn_test_tmpdir());
    assert_int_equal(setenv("GRAPNEL_CUDA_MODULE", path, 1), 0);
    assert_int_equal(open_on("cuda", msg, sizeof msg), GN_ERR_UNSUPPORTED);
#ifdef GN_HAVE_CUDA
    snprintf(want, sizeof want,
             "no CUDA backend: cannot load GRAPNEL_CUDA_MODULE=%s: %s: cannot open shared object file: No such file "
             "or directory",
             path, path);
#else
    snprintf(want, sizeof want, "the CUDA backend is not built in");
#endif
    assert_string_equal(msg, want);
    run_cpu(y, sizeof y);
    assert_string_equal(y, "0 0 2");
    unsetenv("GRAPNEL_CUDA_MODULE");
}

/* GRAPNEL_CUDA_MODULE names a shared object that is not a CUDA module (libgrapnel.so itself). */
static void test_module_not_a_module(void **state)
{
    (void)state;
#ifdef GN_HAVE_CUDA
    char want[4096], msg[2048];
    assert_int_equal(setenv("GRAPNEL_CUDA_MODULE", GN_LIB_PATH, 1), 0);
    assert_int_equal(open_on("cuda", msg, sizeof msg), GN_ERR_UNSUPPORTED);
    snprintf(want, sizeof want, "no CUDA backend: %s is not a grapnel CUDA module (no gn__cuda_module_open)",
             GN_LIB_PATH);
    assert_string_equal(msg, want);
    unsetenv("GRAPNEL_CUDA_MODULE");
#else
    print_message("skipped: built without the CUDA backend\n");
    skip();
#endif
}

/* This program copied to a directory without the module: "cpu" runs, "cuda"
 * says where the module was looked for. (The copy runs child_main.) */
static void test_module_absent_copy(void **state)
{
    (void)state;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/nomodule", gn_test_tmpdir());
    char *out = NULL;
    int rc = gn_test_sh(&out,
                        "mkdir -p '%s' && cp /proc/%d/exe '%s/cuda_module_test' && "
                        "env -u LD_LIBRARY_PATH -u GRAPNEL_CUDA_MODULE '%s/cuda_module_test' --child",
                        dir, (int)getpid(), dir, dir);
    char want[4096];
#ifdef GN_HAVE_CUDA
    snprintf(want, sizeof want,
             "cpu: 0 0 2\ncuda: %d: no CUDA backend: the module libgrapnel_cuda.so is neither in %s/ nor found by the "
             "system loader (libgrapnel_cuda.so: cannot open shared object file: No such file or directory); set "
             "GRAPNEL_CUDA_MODULE to its path\n",
             (int)GN_ERR_UNSUPPORTED, dir);
#else
    snprintf(want, sizeof want, "cpu: 0 0 2\ncuda: %d: the CUDA backend is not built in\n", (int)GN_ERR_UNSUPPORTED);
#endif
    assert_int_equal(rc, 0);
    assert_string_equal(out, want);
    free(out);
}

/* A found module: next to this program in the build directory. Without a
 * GPU it opens and reports the missing device (or driver). */
static void test_module_next_to_program(void **state)
{
    (void)state;
#ifdef GN_HAVE_CUDA
    char msg[2048];
    unsetenv("GRAPNEL_CUDA_MODULE");
    gn_status st = open_on("cuda", msg, sizeof msg);
    if (st == GN_OK) return;   /* a GPU */
    assert_int_equal(st, GN_ERR_UNSUPPORTED);
    if (strncmp(msg, "no CUDA device: ", 16) != 0) fail_msg("unexpected: %s", msg);
#else
    print_message("skipped: built without the CUDA backend\n");
    skip();
#endif
}

static int child_main(void)
{
    char y[256], msg[2048];
    run_cpu(y, sizeof y);
    printf("cpu: %s\n", y);
    gn_status st = open_on("cuda", msg, sizeof msg);
    printf("cuda: %d: %s\n", (int)st, msg);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--child") == 0) return child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_needs_no_cuda), cmocka_unit_test(test_module_layout),
        cmocka_unit_test(test_module_absent_env),     cmocka_unit_test(test_module_not_a_module),
        cmocka_unit_test(test_module_absent_copy),    cmocka_unit_test(test_module_next_to_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
