/* Killed writes: the CLI killed with SIGKILL at pseudo-random points (fixed
 * seed) while it writes `optimize -o` (a GraphDef, and a SavedModel directory),
 * `convert`, `save` (a SavedModel with variables and an asset) and `segment`.
 * After every kill the destination holds the old file (or, for a directory,
 * nothing or the empty directory it was) or the complete new one, byte for byte
 * what an undisturbed run writes, never a part. What a kill may leave besides
 * is the writer's temporary, named DEST.tmp-XXXXXX beside DEST (removed here
 * between runs and counted); nothing else appears in the directory.
 * docs/hardening.md, "Killed writes and full disks". */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 40
#define SEED 0x9e3779b97f4a7c15ull

typedef struct wcase {
    const char *name;
    const char *cmd;      /* CLI command */
    const char *in;       /* under tests/data */
    const char *out;      /* destination name */
    bool dash_o;          /* OUT given with -o */
    bool dir;             /* the destination is a SavedModel directory */
} wcase;

static const wcase cases[] = {
    {"optimize -o GraphDef", "optimize", "golden/mobilenet_v2.pb", "out.pb", true, false},
    {"optimize -o SavedModel", "optimize", "killed/half_plus_two_cpu", "out_sm", true, true},
    {"convert", "convert", "golden/transformer.pb", "out.pbtxt", false, false},
    {"save", "save", "killed/half_plus_two_cpu", "saved", false, true},
    {"segment -o", "segment", "golden/cnn_bn_residual.pb", "out.pb", true, false},
};

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The CLI on c, writing dest; SIGKILL after delay_s (< 0: never). Returns the wait status. */
static int run_cli(const wcase *c, const char *dest, double delay_s)
{
    char in[2048];
    gn_test_data(c->in, in, sizeof in);
    const char *argv[8];
    int n = 0;
    argv[n++] = GN_CLI_PATH;
    argv[n++] = c->cmd;
    argv[n++] = in;
    if (c->dash_o) argv[n++] = "-o";
    argv[n++] = dest;
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execv(GN_CLI_PATH, (char *const *)argv);
        _exit(127);
    }
    if (delay_s >= 0) {
        struct timespec d = {(time_t)delay_s, (long)((delay_s - (double)(time_t)delay_s) * 1e9)};
        while (nanosleep(&d, &d) != 0 && errno == EINTR) {}
        kill(pid, SIGKILL);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return st;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Entries of dir besides `name`: DEST.tmp-* ones are counted (and removed
 * when remove is set), anything else fails. */
static int sweep_temporaries(const char *dir, const char *name, const char *what, bool remove)
{
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s.tmp-", name);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, name)) continue;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) fail_msg("%s: unexpected '%s' beside the output", what, e->d_name);
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (remove) gn_test_rm_tree(p);
        left++;
    }
    closedir(d);
    return left;
}

/* A temporary directory as the SavedModel writer names it, for process pid
 * on this host, with one file in it. */
static void plant_temporary(const char *dest, long pid, char *path, size_t n)
{
    char h[256] = "", host[40];
    if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "host");
    size_t k = 0;
    for (const char *p = h; *p && k < 32; p++)
        host[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.'
                               ? *p
                               : '_');
    host[k] = 0;
    snprintf(path, n, "%s.tmp-%s-%ld-Ab12Cd", dest, host, pid);
    assert_int_equal(mkdir(path, 0755), 0);
    char f[4200];
    snprintf(f, sizeof f, "%s/saved_model.pb", path);
    write_bytes(f, "partial", 7);
}

static void killed_writes(const wcase *c, uint64_t seed)
{
    char work[2048], dest[2400], ref[2400], why[4096];
    snprintf(work, sizeof work, "%s/killed_%s_%s", gn_test_tmpdir(), c->cmd, c->out);
    gn_test_rm_tree(work);
    assert_int_equal(mkdir(work, 0755), 0);
    snprintf(dest, sizeof dest, "%s/%s", work, c->out);
    snprintf(ref, sizeof ref, "%s/reference_%s", gn_test_tmpdir(), c->out);
    gn_test_rm_tree(ref);

    /* the complete write, and how long a run takes */
    double t0 = now_s();
    int st = run_cli(c, ref, -1);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    double t = now_s() - t0;
    for (int i = 0; i < 2; i++) {
        gn_test_rm_tree(dest);
        t0 = now_s();
        st = run_cli(c, dest, -1);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (now_s() - t0 > t) t = now_s() - t0;
        if (!gn_test_same_tree(dest, ref, why, sizeof why)) fail_msg("%s: two runs differ: %s", c->name, why);
    }
    /* the old content: a different file, or no directory / an empty one */
    static const char old[] = "the file as it was before the command ran\n";

    uint64_t rng = seed;
    int n_old = 0, n_new = 0, n_killed = 0, n_tmp = 0;
    for (int run = 0; run < RUNS; run++) {
        gn_test_rm_tree(dest);
        if (!c->dir) write_bytes(dest, old, sizeof old - 1);
        else if (run % 2) assert_int_equal(mkdir(dest, 0755), 0);
        /* even runs: anywhere in the run; odd runs: its second half, where it writes */
        double u = (double)(next_rand(&rng) >> 11) / 9007199254740992.0;
        double delay = run % 2 ? t * (0.5 + 0.7 * u) : t * 1.2 * u;
        st = run_cli(c, dest, delay);
        bool killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
            fail_msg("%s: run %d: neither killed nor a success (status 0x%x)", c->name, run, st);
        n_killed += killed;
        /* a killed SavedModel write leaves its DIR.tmp-HOST-PID-XXXXXX: the next
         * save to DIR removes it (checked after the loop) */
        if (!c->dir) n_tmp += sweep_temporaries(work, c->out, c->name, true);
        struct stat sb;
        bool exists = lstat(dest, &sb) == 0;
        bool is_old;
        if (!c->dir) {
            size_t n = 0;
            unsigned char *d = exists ? gn_test_slurp(dest, &n) : NULL;
            is_old = d && n == sizeof old - 1 && memcmp(d, old, n) == 0;
            free(d);
        } else {
            is_old = run % 2 ? exists && S_ISDIR(sb.st_mode) && gn_test_dir_entries(dest) == 0 : !exists;
        }
        if (is_old && !killed) fail_msg("%s: run %d succeeded and left the old content", c->name, run);
        if (is_old) {
            n_old++;
        } else {
            if (!gn_test_same_tree(dest, ref, why, sizeof why))
                fail_msg("%s: run %d (killed after %.1f ms): neither the old content nor the new: %s", c->name, run,
                         delay * 1e3, why);
            n_new++;
        }
    }
    if (c->dir) {
        /* the temporaries the last killed runs left, then one complete save: none left */
        n_tmp = sweep_temporaries(work, c->out, c->name, false);
        gn_test_rm_tree(dest);
        /* one of a process that is gone (removed), one of a live one (kept) */
        pid_t gone = fork();
        if (gone == 0) _exit(0);
        assert_true(gone > 0);
        assert_int_equal(waitpid(gone, NULL, 0), gone);
        char stale[4096], live[4096];
        plant_temporary(dest, (long)gone, stale, sizeof stale);
        plant_temporary(dest, (long)getpid(), live, sizeof live);
        st = run_cli(c, dest, -1);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        struct stat sb;
        if (lstat(stale, &sb) == 0) fail_msg("%s: the temporary of a finished process survived a save", c->name);
        if (lstat(live, &sb) != 0) fail_msg("%s: a save removed the temporary of a live process", c->name);
        int after = sweep_temporaries(work, c->out, c->name, true);
        if (after != 1) fail_msg("%s: %d temporaries beside the output after a complete save (want 1, the live one)",
                                 c->name, after);
    }
    print_message("    %-24s %d runs (%.0f ms each), %d killed: %d left the old content, %d the new, %d a temporary%s\n",
                  c->name, RUNS, t * 1e3, n_killed, n_old, n_new, n_tmp,
                  c->dir ? " (removed by the next save)" : "");
    assert_int_equal(n_old + n_new, RUNS);
    gn_test_rm_tree(work);
    gn_test_rm_tree(ref);
}

static void test_case(void **state)
{
    const wcase *c = *state;
    killed_writes(c, SEED ^ (uint64_t)(c - cases + 1));
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    struct CMUnitTest tests[sizeof cases / sizeof cases[0]];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        tests[i] = (struct CMUnitTest){cases[i].name, test_case, NULL, NULL, (void *)&cases[i]};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
