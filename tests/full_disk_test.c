/* Full disks: every write the library makes goes through this test's hooks
 * (the binary links the static library with -Wl,--wrap=write,--wrap=writev,
 * --wrap=fsync,--wrap=fwrite), which give it a budget of bytes: a write that meets the end
 * of the budget writes what fits, the next one fails with ENOSPC (as a full
 * file system does); fsync can be made to fail with ENOSPC too (the error a
 * file system with delayed allocation reports there).
 *
 * For each output (gn_graph_save binary and text, as `optimize -o` and
 * `convert` write; a segmented graph, as `segment -o`; gn_savedmodel_save of a
 * SavedModel with variables and an asset, plain and in the chunked image
 * format; gn_npy_write), with the budget ending at every file boundary, one byte
 * after it and in the middle of each file, and with each fsync failing in turn:
 *   - the call returns GN_ERR_IO and the message names the file and says
 *     "No space left on device";
 *   - the destination holds the old file (a file) or nothing (a directory);
 *   - nothing else is left in the directory: no temporary file or directory;
 * and without a failure the same call writes the bytes of a reference write.
 * docs/hardening.md, "Killed writes and full disks". */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "grapnel/convert.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "grapnel/save.h"

/* ---- the hooks --------------------------------------------------------------------------- */
static long long budget = -1;   /* bytes that still fit; -1: no limit (and nothing recorded) */
static int fsync_fail_at;        /* k > 0: the k-th fsync fails */
static int n_fsync;
static bool failed_on_dir;       /* the fsync made to fail was a directory's */
#define MAX_CALLS 256
static long long call_bytes[MAX_CALLS];   /* the bytes of each write call, while recording */
static int n_calls;
static bool recording;

ssize_t __real_write(int fd, const void *p, size_t n);
ssize_t __wrap_write(int fd, const void *p, size_t n);
ssize_t __real_writev(int fd, const struct iovec *iov, int n);
ssize_t __wrap_writev(int fd, const struct iovec *iov, int n);
int __real_fsync(int fd);
int __wrap_fsync(int fd);
size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);
size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f);

static size_t fits(size_t n)
{
    if (recording && n_calls < MAX_CALLS) call_bytes[n_calls++] = (long long)n;
    if (budget < 0) return n;
    return (unsigned long long)budget < n ? (size_t)budget : n;
}

ssize_t __wrap_write(int fd, const void *p, size_t n)
{
    if (fd <= 2) return __real_write(fd, p, n);
    size_t k = fits(n);
    if (n && !k) {
        errno = ENOSPC;
        return -1;
    }
    ssize_t w = __real_write(fd, p, k);
    if (w > 0 && budget >= 0) budget -= w;
    return w;
}

/* A gathered write (gn_graph_save of a binary GraphDef): the same budget over
 * the bytes of all its pieces. */
ssize_t __wrap_writev(int fd, const struct iovec *iov, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    if (fd <= 2) return __real_writev(fd, iov, n);
    size_t k = fits(total);
    if (total && !k) {
        errno = ENOSPC;
        return -1;
    }
    struct iovec cut[64];
    int m = 0;
    for (size_t left = k; m < n && m < 64 && left; m++) {
        cut[m] = iov[m];
        if (cut[m].iov_len > left) cut[m].iov_len = left;
        left -= cut[m].iov_len;
    }
    ssize_t w = m ? __real_writev(fd, cut, m) : 0;
    if (w > 0 && budget >= 0) budget -= w;
    return w;
}

size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    if (!size || !n) return __real_fwrite(p, size, n, f);
    size_t k = fits(size * n) / size;
    size_t w = k ? __real_fwrite(p, size, k, f) : 0;
    if (budget >= 0) budget -= (long long)(w * size);
    if (w < n) errno = ENOSPC;
    return w;
}

int __wrap_fsync(int fd)
{
    if (++n_fsync == fsync_fail_at) {
        struct stat st;
        failed_on_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
        errno = ENOSPC;
        return -1;
    }
    return __real_fsync(fd);
}

/* ---- the outputs ---------------------------------------------------------------------------- */
typedef struct writer {
    const char *name;
    const char *out;         /* destination name */
    bool dir;                /* a SavedModel directory */
    int kind;                /* W_* */
    bool durable;            /* gn_graph_set_fsync on */
} writer;

enum { W_BINARY, W_TEXT, W_SEGMENTED, W_SAVEDMODEL, W_SAVEDMODEL_CHUNKED, W_NPY };

static gn_graph *graph, *segmented, *savedmodel;
static gn_tensor tensor;

/* Writes dest; the message into msg. */
static gn_status write_out(const writer *w, const char *dest, char *msg, size_t msglen)
{
    gn_status s;
    const gn_graph *g = NULL;
    msg[0] = 0;
    gn_graph_set_fsync(graph, w->durable);
    gn_graph_set_fsync(segmented, w->durable);
    gn_graph_set_fsync(savedmodel, w->durable);
    switch (w->kind) {
    case W_BINARY:
    case W_TEXT:
        s = gn_graph_save(graph, dest, w->kind == W_TEXT ? GN_FORMAT_TEXT : GN_FORMAT_BINARY);
        g = graph;
        break;
    case W_SEGMENTED:
        s = gn_graph_save(segmented, dest, GN_FORMAT_BINARY);
        g = segmented;
        break;
    case W_SAVEDMODEL:
        s = gn_savedmodel_save(savedmodel, dest, NULL, NULL);
        g = savedmodel;
        break;
    case W_SAVEDMODEL_CHUNKED: {
        gn_save_options o;
        gn_save_options_init(&o);
        o.experimental_image_format = 1;
        gn_save_params p;
        gn_save_params_init(&p);
        p.chunk_max_size = 2048;   /* the 12 kB graph in several chunks */
        s = gn_savedmodel_save(savedmodel, dest, &o, &p);
        g = savedmodel;
        break;
    }
    default:
        return gn_npy_write(dest, &tensor, msg, msglen);
    }
    snprintf(msg, msglen, "%s", gn_graph_errmsg(g));
    return s;
}

static const char old_bytes[] = "the file as it was before the call\n";

static void reset(const writer *w, const char *dest)
{
    gn_test_rm_tree(dest);
    if (w->dir) return;
    FILE *f = fopen(dest, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(old_bytes, 1, sizeof old_bytes - 1, f), sizeof old_bytes - 1);
    assert_int_equal(fclose(f), 0);
}

/* The call failed as a full disk makes it fail, and left things as they were. */
static void check_failed(const writer *w, const char *dir, const char *dest, gn_status s, const char *msg,
                         const char *when)
{
    if (s != GN_ERR_IO) fail_msg("%s, %s: status %d (%s), not GN_ERR_IO", w->name, when, (int)s, msg);
    char want_d[4096];
    snprintf(want_d, sizeof want_d, "%s: fsync of its directory failed: No space left on device", dest);
    if (failed_on_dir && !strcmp(msg, want_d)) {
        /* the last step, after the rename: the output is in place, only not
         * known to be on the disk; the caller is told */
        if (gn_test_dir_entries(dir) != 1) fail_msg("%s, %s: something besides the output is left", w->name, when);
        return;
    }
    if (!strstr(msg, "No space left on device") || strncmp(msg, dest, strlen(dest)) != 0)
        fail_msg("%s, %s: message '%s' does not name the destination and say the disk is full", w->name, when, msg);
    if (!w->dir) {
        /* a file: exactly "DEST: write failed: ..." or "DEST: fsync failed: ..." */
        char want_w[4096], want_f[4096];
        snprintf(want_w, sizeof want_w, "%s: write failed: No space left on device", dest);
        snprintf(want_f, sizeof want_f, "%s: fsync failed: No space left on device", dest);
        if (strcmp(msg, want_w) && strcmp(msg, want_f)) fail_msg("%s, %s: message '%s'", w->name, when, msg);
        size_t n = 0;
        unsigned char *d = gn_test_slurp(dest, &n);
        bool old = d && n == sizeof old_bytes - 1 && !memcmp(d, old_bytes, n);
        free(d);
        if (!old) fail_msg("%s, %s: the old file is gone or changed", w->name, when);
        if (gn_test_dir_entries(dir) != 1) fail_msg("%s, %s: something besides the old file is left", w->name, when);
    } else {
        /* a directory: "DEST/FILE: ..." naming the file as it would have been in DEST */
        const char *file = msg + strlen(dest);
        if (file[0] != '/' || !strchr(file, ':') || strstr(msg, ".tmp-"))
            fail_msg("%s, %s: message '%s' does not name a file of the destination", w->name, when, msg);
        if (gn_test_dir_entries(dir) != 0) fail_msg("%s, %s: something is left where nothing was", w->name, when);
        if (w->kind == W_SAVEDMODEL && strstr(when, "after 0 of")) {
            char want[4096];
            snprintf(want, sizeof want, "%s/variables/variables.data-00000-of-00001: write failed: No space left on device",
                     dest);
            assert_string_equal(msg, want);
        }
    }
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void full_disk(const writer *w)
{
    char base[2048], dir[2100], dest[2400], ref[2400], msg[4096], why[4096];
    snprintf(base, sizeof base, "%s/full_%d", gn_test_tmpdir(), w->kind);
    gn_test_rm_tree(base);
    snprintf(dir, sizeof dir, "%s/dst", base);
    assert_int_equal(mkdir(base, 0755), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(dest, sizeof dest, "%s/%s", dir, w->out);
    snprintf(ref, sizeof ref, "%s/%s", base, w->out);

    /* the reference write: its write calls and fsyncs */
    recording = true;
    n_calls = n_fsync = 0;
    gn_status s = write_out(w, ref, msg, sizeof msg);
    recording = false;
    if (s != GN_OK) fail_msg("%s: %s", w->name, msg);
    assert_true(n_calls > 0 && n_calls < MAX_CALLS);
    int calls = n_calls, fsyncs = n_fsync;
    /* without gn_graph_set_fsync nothing waits for the disk, as TensorFlow's
     * writers; with it, every file and the directory it was renamed in */
    if (w->durable ? fsyncs < 2 : fsyncs != 0)
        fail_msg("%s: %d fsync calls in the reference write", w->name, fsyncs);
    long long total = 0;

    /* budgets: at each call's start, one byte in, half way through, and one byte short of the end */
    long long points[4 * MAX_CALLS];
    int np = 0;
    for (int i = 0; i < calls; i++) {
        points[np++] = total;
        if (call_bytes[i] > 1) points[np++] = total + 1;
        if (call_bytes[i] > 2) points[np++] = total + call_bytes[i] / 2;
        if (call_bytes[i] > 3) points[np++] = total + call_bytes[i] - 1;
        total += call_bytes[i];
    }
    qsort(points, (size_t)np, sizeof points[0], cmp_ll);
    int tried = 0, dir_failures = 0;
    for (int i = 0; i < np; i++) {
        if (i && points[i] == points[i - 1]) continue;
        reset(w, dest);
        char when[64];
        snprintf(when, sizeof when, "the disk full after %lld of %lld bytes", points[i], total);
        budget = points[i];
        s = write_out(w, dest, msg, sizeof msg);
        budget = -1;
        check_failed(w, dir, dest, s, msg, when);
        tried++;
    }
    for (int k = 1; k <= fsyncs; k++) {
        reset(w, dest);
        char when[64];
        snprintf(when, sizeof when, "fsync %d of %d failing", k, fsyncs);
        n_fsync = 0;
        fsync_fail_at = k;
        s = write_out(w, dest, msg, sizeof msg);
        fsync_fail_at = 0;
        check_failed(w, dir, dest, s, msg, when);
        if (failed_on_dir && strstr(msg, ": fsync of its directory failed") == msg + strlen(dest)) {
            /* the output complete in place (check_failed) and as the reference */
            if (!gn_test_same_tree(dest, ref, why, sizeof why)) fail_msg("%s, %s: %s", w->name, when, why);
            dir_failures++;
        }
        failed_on_dir = false;
    }
    /* room again: the complete output */
    reset(w, dest);
    s = write_out(w, dest, msg, sizeof msg);
    if (s != GN_OK) fail_msg("%s: with room again: %s", w->name, msg);
    if (!gn_test_same_tree(dest, ref, why, sizeof why)) fail_msg("%s: %s", w->name, why);
    print_message("    %-34s %d write calls, %lld bytes: %d full-disk points and %d fsync failures, each left %s"
                  " (%d of a directory after the rename: the output in place)\n",
                  w->name, calls, total, tried, fsyncs, w->dir ? "nothing" : "the old file alone", dir_failures);
    gn_test_rm_tree(base);
}

static const writer writers[] = {
    {"gn_graph_save binary", "out.pb", false, W_BINARY, false},
    {"gn_graph_save text", "out.pbtxt", false, W_TEXT, false},
    {"segmented graph", "seg.pb", false, W_SEGMENTED, false},
    {"gn_savedmodel_save", "saved", true, W_SAVEDMODEL, false},
    {"gn_savedmodel_save chunked", "chunked", true, W_SAVEDMODEL_CHUNKED, false},
    {"gn_npy_write", "t.npy", false, W_NPY, false},
    {"gn_graph_save binary, fsync", "out.pb", false, W_BINARY, true},
    {"gn_graph_save text, fsync", "out.pbtxt", false, W_TEXT, true},
    {"segmented graph, fsync", "seg.pb", false, W_SEGMENTED, true},
    {"gn_savedmodel_save, fsync", "saved", true, W_SAVEDMODEL, true},
    {"gn_savedmodel_save chunked, fsync", "chunked", true, W_SAVEDMODEL_CHUNKED, true},
};

static void test_writer(void **state) { full_disk(*state); }

static int setup(void **state)
{
    (void)state;
    char p[2048];
    if (gn_graph_load(gn_test_data("golden/mobilenet_v2.pb", p, sizeof p), NULL, &graph) != GN_OK) return -1;
    if (gn_optimize(graph, NULL, NULL, NULL) != GN_OK) return -1;
    if (gn_graph_load(gn_test_data("golden/cnn_bn_residual.pb", p, sizeof p), NULL, &segmented) != GN_OK) return -1;
    if (gn_segment(segmented, NULL, NULL, NULL, NULL) != GN_OK) return -1;
    if (gn_graph_load(gn_test_data("killed/half_plus_two_cpu", p, sizeof p), NULL, &savedmodel) != GN_OK) return -1;
    int64_t dims[2] = {3, 5};
    if (gn_tensor_alloc(1, 2, dims, &tensor) != GN_OK) return -1;
    for (int i = 0; i < 15; i++) ((float *)tensor.data)[i] = (float)i * 0.5f;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gn_graph_free(graph);
    gn_graph_free(segmented);
    gn_graph_free(savedmodel);
    gn_tensor_free(&tensor);
    return 0;
}

int main(void)
{
    struct CMUnitTest tests[sizeof writers / sizeof writers[0]];
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        tests[i] = (struct CMUnitTest){writers[i].name, test_writer, NULL, NULL, (void *)&writers[i]};
    return cmocka_run_group_tests(tests, setup, teardown);
}
