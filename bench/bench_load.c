/* bench_load: times grapnel's front end on one GraphDef.
 *
 *   bench_load [--save PATH] FILE.pb [REPEAT]
 *
 * Phases, each timed with CLOCK_MONOTONIC:
 *   load      gn_graph_load with validation off: read the file, check its
 *             framing, decode the NodeDefs straight into the IR (attr
 *             values unpacked once per distinct encoding), fanouts
 *   validate  gn_graph_validate: topological order, arity, attrs, tensors
 *   shapes    gn_graph_infer_shapes: dtypes and shapes of every output
 *   write     gn_graph_serialize (binary): IR back to GraphDef bytes in memory
 *   save      only with --save: gn_graph_save to PATH (atomic write to disk),
 *             reported on its own and not part of total
 * total is load + validate + shapes + write; cpu_ms is the process CPU time
 * over the same span (close to total on an idle machine; lower when other
 * processes compete for the cores) and faults the minor page faults in it
 * (first touches of fresh memory). With REPEAT > 1 the whole
 * sequence runs REPEAT times (graph freed in between) and the run with the
 * lowest total is reported. Peak RSS (getrusage ru_maxrss) is for the whole
 * process, so run one file per process to attribute it.
 *
 * Prints one line:
 *   file=F nodes=N bytes=B load_ms=.. validate_ms=.. shapes_ms=.. write_ms=..
 *   total_ms=.. cpu_ms=.. ns_per_node=.. faults=.. peak_rss_mb=.. rss_loaded_mb=..
 *   rss_inferred_mb=..
 *   out_bytes=.. out_shape=[..]
 *   cpu_load_ms=.. cpu_validate_ms=.. cpu_shapes_ms=.. cpu_write_ms=..
 *   [save_ms=..]
 * Exits 1, naming the phase and grapnel's message, when a phase fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grapnel/grapnel.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of the process: unlike wall time, not inflated when other
 * processes share the cores. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

enum { P_LOAD, P_VALIDATE, P_SHAPES, P_WRITE, P_SAVE, P_COUNT };

/* Resident set size now, in MB (Linux /proc/self/statm); -1 when unknown. */
static double rss_now_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1.0;
    unsigned long long size = 0, resident = 0;
    int ok = fscanf(f, "%llu %llu", &size, &resident) == 2;
    fclose(f);
    if (!ok) return -1.0;
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

typedef struct run {
    double ms[P_COUNT];
    double total;
    double cpu;        /* CPU ms over the four phases */
    double cpu_ph[P_COUNT]; /* CPU ms per phase */
    long faults;       /* minor page faults over the four phases */
    size_t nodes;
    size_t out_bytes;
    double rss_loaded, rss_inferred; /* MB resident after load, after shape inference */
    char out_shape[160];
} run;

static int fail(const char *file, const char *phase, gn_status s, gn_graph *g)
{
    fprintf(stderr, "bench_load: %s: %s failed: %s: %s\n", file, phase, gn_status_str(s),
            g ? gn_graph_errmsg(g) : "(no handle)");
    gn_graph_free(g);
    return 1;
}

/* Shape of output 0 of the last node, as "[1,32,32,16]" ("?" per unknown dim,
 * "<unknown>" for an unknown rank): shows that inference reached the end. */
static void last_shape(const gn_graph *g, size_t n, char *buf, size_t len)
{
    int64_t dims[16];
    snprintf(buf, len, "<none>");
    if (n == 0 || gn_graph_node_output_count(g, n - 1) < 1) return;
    int32_t rank = gn_graph_node_output_shape(g, n - 1, 0, dims, 16);
    if (rank < 0) {
        snprintf(buf, len, "<unknown>");
        return;
    }
    size_t o = 0;
    o += (size_t)snprintf(buf + o, len - o, "[");
    for (int32_t i = 0; i < rank && i < 16 && o < len; i++) {
        if (dims[i] < 0)
            o += (size_t)snprintf(buf + o, len - o, "%s?", i ? "," : "");
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (o < len) snprintf(buf + o, len - o, "]");
}

static int one_run(const char *file, const char *save_path, run *r)
{
    memset(r, 0, sizeof *r);
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.validate = 0;
    gn_graph *g = NULL;
    double c0 = cpu_ms();
    long f0 = minor_faults();

    double t0 = now_ms();
    gn_status s = gn_graph_load(file, &lo, &g);
    double t1 = now_ms();
    double c1 = cpu_ms();
    r->cpu_ph[P_LOAD] = c1 - c0;
    if (s != GN_OK) return fail(file, "load", s, g);
    r->ms[P_LOAD] = t1 - t0;
    r->nodes = gn_graph_node_count(g);
    r->rss_loaded = rss_now_mb();

    t0 = now_ms();
    s = gn_graph_validate(g);
    t1 = now_ms();
    r->cpu_ph[P_VALIDATE] = cpu_ms() - c1;
    c1 = cpu_ms();
    if (s != GN_OK) return fail(file, "validate", s, g);
    r->ms[P_VALIDATE] = t1 - t0;

    t0 = now_ms();
    s = gn_graph_infer_shapes(g);
    t1 = now_ms();
    r->cpu_ph[P_SHAPES] = cpu_ms() - c1;
    if (s != GN_OK) return fail(file, "shape inference", s, g);
    r->ms[P_SHAPES] = t1 - t0;
    r->rss_inferred = rss_now_mb();
    last_shape(g, r->nodes, r->out_shape, sizeof r->out_shape);

    void *data = NULL;
    size_t size = 0;
    c1 = cpu_ms();
    t0 = now_ms();
    s = gn_graph_serialize(g, GN_FORMAT_BINARY, &data, &size);
    t1 = now_ms();
    r->cpu_ph[P_WRITE] = cpu_ms() - c1;
    if (s != GN_OK) return fail(file, "write", s, g);
    r->ms[P_WRITE] = t1 - t0;
    r->out_bytes = size;
    gn_free(data);
    r->cpu = cpu_ms() - c0;
    r->faults = minor_faults() - f0;

    if (save_path) {
        t0 = now_ms();
        s = gn_graph_save(g, save_path, GN_FORMAT_BINARY);
        t1 = now_ms();
        if (s != GN_OK) return fail(file, "save", s, g);
        r->ms[P_SAVE] = t1 - t0;
    }
    r->total = r->ms[P_LOAD] + r->ms[P_VALIDATE] + r->ms[P_SHAPES] + r->ms[P_WRITE];
    gn_graph_free(g);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_load [--save PATH] FILE.pb [REPEAT]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *save_path = NULL;
    int i = 1;
    if (i < argc && !strcmp(argv[i], "--save")) {
        if (i + 1 >= argc) usage();
        save_path = argv[i + 1];
        i += 2;
    }
    if (i >= argc || argc - i > 2) usage();
    const char *file = argv[i];
    int repeat = 1;
    if (argc - i == 2) {
        repeat = atoi(argv[i + 1]);
        if (repeat < 1) usage();
    }
    struct stat st;
    if (stat(file, &st) != 0) {
        perror(file);
        return 1;
    }

    run best, r;
    memset(&best, 0, sizeof best);
    for (int k = 0; k < repeat; k++) {
        if (one_run(file, save_path, &r) != 0) return 1;
        if (k == 0 || r.total < best.total) best = r;
    }

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss_mb = (double)ru.ru_maxrss / 1024.0; /* Linux: kilobytes */
    double ns_per_node = best.nodes ? best.total * 1e6 / (double)best.nodes : 0.0;
    printf("file=%s nodes=%zu bytes=%lld load_ms=%.1f validate_ms=%.1f shapes_ms=%.1f write_ms=%.1f "
           "total_ms=%.1f cpu_ms=%.1f ns_per_node=%.0f faults=%ld peak_rss_mb=%.1f rss_loaded_mb=%.1f rss_inferred_mb=%.1f out_bytes=%zu "
           "out_shape=%s",
           file, best.nodes, (long long)st.st_size, best.ms[P_LOAD], best.ms[P_VALIDATE], best.ms[P_SHAPES],
           best.ms[P_WRITE], best.total, best.cpu, ns_per_node, best.faults, rss_mb, best.rss_loaded, best.rss_inferred, best.out_bytes,
           best.out_shape);
    printf(" cpu_load_ms=%.1f cpu_validate_ms=%.1f cpu_shapes_ms=%.1f cpu_write_ms=%.1f", best.cpu_ph[P_LOAD],
           best.cpu_ph[P_VALIDATE], best.cpu_ph[P_SHAPES], best.cpu_ph[P_WRITE]);
    if (save_path) printf(" save_ms=%.1f", best.ms[P_SAVE]);
    printf("\n");
    return 0;
}
