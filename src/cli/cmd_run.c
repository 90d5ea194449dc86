/* grapnel run / grapnel verify: running graphs on the CPU backend from the
 * command line. Uses only the public API (include/grapnel).
 *
 *   grapnel run MODEL --feed NAME=FILE.npy ... --fetch NAME[=FILE.npy] ...
 *   grapnel verify A B [--feed ...] [--fetch ...] [--tol X]
 *
 * Feeds not given are random (seeded), shaped from the placeholder's shape
 * with unknown dims set by --dim (default 1), or by --shape. Fetches default
 * to the graph's outputs. A fetch without a file is printed the way numpy
 * prints an array. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "run.h"

/* ---- options --------------------------------------------------------------------------------- */
typedef struct kv {
    char *name;
    char *value;      /* may be NULL */
} kv;

typedef struct run_opts {
    const char *cmd;
    const char *models[2];
    int n_models;
    kv *feeds;
    int n_feeds;
    kv *fetches;
    int n_fetches;
    kv *shapes;
    int n_shapes;
    uint64_t seed;
    int64_t dim;
    double tol;
    const char *tags;
    const char *backend;
    const char *backend_b;    /* verify: B's backend (default: the same as A's) */
    const char *signature;    /* run: a SavedModel signature */
    const char *output_dir;   /* run --signature: write each output as DIR/<key>.npy */
    char **labels;            /* run --signature: the output key of each fetch (or NULL) */
    char *sig_key;            /* the signature run (NULL: the graph as it is) */
    char *sig_inputs;         /* its input keys, comma-separated (owned) */
    char *sig_outputs;        /* its output keys */
    int repeat, warmup;       /* run --repeat N --warmup K */
    int json;                 /* --json */
    gn_timing timing;         /* run --repeat: the result */
    /* --memory-limit, --step-limit, --time-limit: gn_session_options' resource
     * bounds as given (0: the library's default; UINT64_MAX: none) */
    uint64_t memory_limit, step_limit, time_limit_ms;
} run_opts;

static void opts_free(run_opts *o)
{
    for (int i = 0; i < o->n_feeds; i++) free(o->feeds[i].name);
    for (int i = 0; i < o->n_fetches; i++) free(o->fetches[i].name);
    for (int i = 0; i < o->n_shapes; i++) free(o->shapes[i].name);
    free(o->feeds);
    free(o->fetches);
    free(o->shapes);
    if (o->labels)
        for (int i = 0; i < o->n_fetches; i++) free(o->labels[i]);
    free(o->labels);
    free(o->sig_key);
    free(o->sig_inputs);
    free(o->sig_outputs);
}

static int usage(const run_opts *o, const char *fmt, const char *arg)
{
    fprintf(stderr, "grapnel %s: ", o->cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see grapnel %s --help)\n", o->cmd);
    return EXIT_USAGE;
}

/* NAME=VALUE (value optional when allow_bare) */
static int add_kv(kv **arr, int *n, const char *arg, int allow_bare)
{
    const char *eq = strchr(arg, '=');
    if ((!eq && !allow_bare) || eq == arg || !*arg) return -1;
    kv *a = realloc(*arr, (size_t)(*n + 1) * sizeof *a);
    if (!a) return -1;
    *arr = a;
    char *name = strdup(arg);
    if (!name) return -1;
    a[*n].name = name;
    a[*n].value = NULL;
    if (eq) {
        name[eq - arg] = 0;
        a[*n].value = name + (eq - arg) + 1;
    }
    (*n)++;
    return 0;
}

static const char *opt_value(int argc, char **argv, int *i, const char *opt, const char **inline_val)
{
    size_t ol = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, ol) != 0) return NULL;
    if (a[ol] == '=') {
        *inline_val = a + ol + 1;
        return *inline_val;
    }
    if (a[ol] != 0) return NULL;
    if (*i + 1 >= argc) {
        *inline_val = NULL;
        return "";
    }
    (*i)++;
    return argv[*i];
}

/* A resource bound: "none", or a non-negative integer (a decimal fraction
 * with a unit) followed by one of units[].name (scale units[].mul; the first
 * unit, "" for a plain number, is the default). -1 when malformed, 0 ok. */
typedef struct unit {
    const char *name;
    uint64_t mul;
} unit;

static int parse_bound(const char *v, const unit *units, uint64_t *out)
{
    if (strcmp(v, "none") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    if (*v < '0' || *v > '9') return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || !(x >= 0)) return -1;
    for (const unit *u = units; u->name; u++) {
        if (strcasecmp(end, u->name) != 0) continue;
        double b = x * (double)u->mul;
        if (b >= 18446744073709551615.0) return -1;
        *out = (uint64_t)b;
        return *out ? 0 : -1;   /* 0 would mean "the default": say so with the default's value */
    }
    return -1;
}

static const unit k_bytes[] = {{"", 1},
                               {"B", 1},
                               {"K", 1ull << 10},
                               {"KiB", 1ull << 10},
                               {"M", 1ull << 20},
                               {"MiB", 1ull << 20},
                               {"G", 1ull << 30},
                               {"GiB", 1ull << 30},
                               {"T", 1ull << 40},
                               {"TiB", 1ull << 40},
                               {NULL, 0}};
static const unit k_steps[] = {{"", 1}, {NULL, 0}};
static const unit k_ms[] = {{"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60000}, {"min", 60000}, {NULL, 0}};

static int parse_opts(int argc, char **argv, run_opts *o, int n_models)
{
    o->dim = 1;
    o->tol = 0;
    o->warmup = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v, *iv = (const char *)1;
        if ((v = opt_value(argc, argv, &i, "--feed", &iv)) ||
            (n_models == 1 && (v = opt_value(argc, argv, &i, "--input", &iv)))) {
            if (!iv) return usage(o, "%s needs NAME=FILE.npy", a);
            /* a bare NAME: random data fed at that tensor (its dtype and shape inferred) */
            if (add_kv(&o->feeds, &o->n_feeds, v, 1) ||
                (o->feeds[o->n_feeds - 1].value && !o->feeds[o->n_feeds - 1].value[0]))
                return usage(o, "--feed '%s': expected NAME=FILE.npy or NAME", v);
        } else if ((v = opt_value(argc, argv, &i, "--fetch", &iv))) {
            if (!iv) return usage(o, "%s needs NAME[=FILE.npy]", a);
            if (add_kv(&o->fetches, &o->n_fetches, v, 1)) return usage(o, "--fetch '%s': expected NAME[=FILE.npy]", v);
        } else if ((v = opt_value(argc, argv, &i, "--shape", &iv))) {
            if (!iv) return usage(o, "%s needs NAME=DIMS (e.g. x=2x784)", a);
            if (add_kv(&o->shapes, &o->n_shapes, v, 0)) return usage(o, "--shape '%s': expected NAME=DIMS (e.g. x=2x784)", v);
        } else if ((v = opt_value(argc, argv, &i, "--seed", &iv))) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 0);
            if (!iv || !*v || *end || errno || v[0] == '-') return usage(o, "--seed '%s': expected a non-negative integer", v);
            o->seed = s;
        } else if ((v = opt_value(argc, argv, &i, "--dim", &iv))) {
            char *end;
            errno = 0;
            long long d = strtoll(v, &end, 10);
            if (!iv || !*v || *end || errno || d < 0) return usage(o, "--dim '%s': expected a non-negative integer", v);
            o->dim = d;
        } else if (n_models == 2 && (v = opt_value(argc, argv, &i, "--tol", &iv))) {
            char *end;
            double t = strtod(v, &end);
            if (!iv || !*v || *end || !(t > 0)) return usage(o, "--tol '%s': expected a positive number", v);
            o->tol = t;
        } else if ((v = opt_value(argc, argv, &i, "--tag", &iv)) || (v = opt_value(argc, argv, &i, "--tags", &iv))) {
            if (!iv) return usage(o, "%s needs a value", a);
            o->tags = v;
        } else if ((v = opt_value(argc, argv, &i, "--signature", &iv))) {
            if (!iv || !*v) return usage(o, "%s needs a signature key", a);
            o->signature = v;
        } else if (n_models == 1 && (v = opt_value(argc, argv, &i, "--output-dir", &iv))) {
            if (!iv || !*v) return usage(o, "%s needs a directory", a);
            o->output_dir = v;
        } else if (n_models == 2 && (v = opt_value(argc, argv, &i, "--target", &iv))) {
            return usage(o, "%s: the target is for the optimizer: use it with --bisect (or grapnel optimize)", a);
        } else if (n_models == 2 && (v = opt_value(argc, argv, &i, "--backend-b", &iv))) {
            if (!iv) return usage(o, "%s needs a value", a);
            o->backend_b = v;
        } else if ((v = opt_value(argc, argv, &i, "--backend", &iv))) {
            if (!iv) return usage(o, "%s needs a value", a);
            o->backend = v;
        } else if (n_models == 1 && ((v = opt_value(argc, argv, &i, "--repeat", &iv)) ||
                                     (v = opt_value(argc, argv, &i, "--warmup", &iv)))) {
            char *end;
            errno = 0;
            long long k = iv ? strtoll(v, &end, 10) : -1;
            int is_repeat = strncmp(a, "--repeat", 8) == 0;
            if (!iv || !*v || *end || errno || k < (is_repeat ? 1 : 0) || k > 100000000)
                return usage(o, is_repeat ? "--repeat '%s': expected a positive integer"
                                          : "--warmup '%s': expected a non-negative integer", iv ? v : "");
            if (is_repeat) o->repeat = (int)k;
            else o->warmup = (int)k;
        } else if ((v = opt_value(argc, argv, &i, "--memory-limit", &iv))) {
            if (!iv || parse_bound(v, k_bytes, &o->memory_limit))
                return usage(o, "--memory-limit '%s': expected a size such as 4G, 512M or 1048576, or none",
                             iv ? v : "");
        } else if ((v = opt_value(argc, argv, &i, "--step-limit", &iv))) {
            if (!iv || (strcmp(v, "none") && strspn(v, "0123456789") != strlen(v)) ||
                parse_bound(v, k_steps, &o->step_limit))
                return usage(o, "--step-limit '%s': expected a positive integer, or none", iv ? v : "");
        } else if ((v = opt_value(argc, argv, &i, "--time-limit", &iv))) {
            if (!iv || parse_bound(v, k_ms, &o->time_limit_ms))
                return usage(o, "--time-limit '%s': expected a duration such as 30s, 500ms or 2m, or none",
                             iv ? v : "");
            if (o->time_limit_ms == UINT64_MAX) o->time_limit_ms = 0;   /* none: the library's 0 */
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (a[0] == '-' && a[1]) {
            return gn_cli_unknown_option(o->cmd, a);
        } else if (o->n_models < n_models) {
            o->models[o->n_models++] = a;
        } else {
            return usage(o, "unexpected argument '%s'", a);
        }
    }
    if (o->n_models < n_models)
        return usage(o, "%s", n_models == 1 ? "a model path is required" : "two model paths are required");
    if (o->warmup >= 0 && !o->repeat) return usage(o, "%s", "--warmup goes with --repeat N");
    if (o->warmup < 0) o->warmup = o->repeat ? 1 : 0;
    if (n_models == 2)
        for (int k = 0; k < o->n_fetches; k++)
            if (o->fetches[k].value) return usage(o, "--fetch '%s=...': verify takes fetch names only", o->fetches[k].name);
    return 0;
}

static int parse_dims(const char *s, int32_t *rank, int64_t *dims)
{
    *rank = 0;
    if (!*s || strcmp(s, "scalar") == 0) return 0;
    while (*s) {
        if (*rank >= GN_TENSOR_MAX_DIMS) return -1;
        char *end;
        errno = 0;
        long long d = strtoll(s, &end, 10);
        if (end == s || errno || d < 0) return -1;
        dims[(*rank)++] = d;
        s = end;
        if (*s == 'x' || *s == 'X' || *s == ',') {
            s++;
            if (!*s) return -1;
        } else if (*s) {
            return -1;
        }
    }
    return 0;
}

/* ---- graph helpers (public API only) ------------------------------------------------------------- */
typedef struct named {
    const char *name;
    size_t index;
} named;

typedef struct gview {
    gn_graph *g;
    size_t n;
    named *by_name;   /* nodes sorted by name */
} gview;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static int gview_init(gview *v, gn_graph *g)
{
    v->g = g;
    v->n = gn_graph_node_count(g);
    v->by_name = malloc((v->n + 1) * sizeof *v->by_name);
    if (!v->by_name) return -1;
    for (size_t i = 0; i < v->n; i++) v->by_name[i] = (named){gn_graph_node_name(g, i), i};
    qsort(v->by_name, v->n, sizeof *v->by_name, cmp_name);
    return 0;
}

static long gview_find(const gview *v, const char *name, size_t len)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = v->by_name[mid].name;
        int c = strncmp(m, name, len);
        if (c == 0 && m[len]) c = 1;
        if (c == 0) return (long)v->by_name[mid].index;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* "x" and "x:0" name the same tensor: the canonical form drops ":0". */
static void canon(const char *in, char *out, size_t n)
{
    snprintf(out, n, "%s", in);
    size_t l = strlen(out);
    if (l > 2 && strcmp(out + l - 2, ":0") == 0) out[l - 2] = 0;
}

static int is_placeholder(const char *op)
{
    return strcmp(op, "Placeholder") == 0 || strcmp(op, "PlaceholderV2") == 0 || strcmp(op, "_Arg") == 0;
}

typedef struct namelist {
    char **s;
    int n;
} namelist;

static int nl_has(const namelist *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->s[i], s) == 0) return 1;
    return 0;
}

static int nl_add(namelist *l, const char *s)
{
    char **a = realloc(l->s, (size_t)(l->n + 1) * sizeof *a);
    if (!a) return -1;
    l->s = a;
    if (!(a[l->n] = strdup(s))) return -1;
    l->n++;
    return 0;
}

static void nl_free(namelist *l)
{
    for (int i = 0; i < l->n; i++) free(l->s[i]);
    free(l->s);
    l->s = NULL;
    l->n = 0;
}

/* The graph's outputs: every output of nodes that nothing consumes, by data
 * or control edge (NoOps, placeholders and nodes without outputs excluded;
 * when that leaves none, nodes consumed only by control edges count too);
 * when the graph has _Retval nodes, their inputs. A node only control edges
 * consume is an anchor, not a result: a TF2 loop's loop_body_control Identity
 * (inside the loop's frame, where no tensor can be fetched), a frozen
 * ReadVariableOp's Identity the optimizer rightly removes. */
static int default_fetches(const gview *v, namelist *out)
{
    gn_graph *g = v->g;
    unsigned char *used = calloc(v->n + 1, 1);   /* 1: data consumer; 2: control consumers only */
    if (!used) return -1;
    char buf[2048];
    int have_retval = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(gn_graph_node_op(g, i), "_Retval") == 0) have_retval = 1;
        size_t ni = gn_graph_node_input_count(g, i);
        for (size_t k = 0; k < ni; k++) {
            if (gn_graph_node_input(g, i, k, buf, sizeof buf) != GN_OK) continue;
            int ctl = buf[0] == '^';
            const char *nm = buf + ctl;
            const char *colon = ctl ? NULL : strrchr(nm, ':');
            size_t len = colon ? (size_t)(colon - nm) : strlen(nm);
            long p = gview_find(v, nm, len);
            if (p >= 0 && (!ctl || !used[p])) used[p] = ctl ? 2 : 1;
        }
    }
    int start = out->n;
    for (int pass = 0; pass < 2 && out->n == start; pass++) {
        for (size_t i = 0; i < v->n; i++) {
            const char *op = gn_graph_node_op(g, i);
            if (have_retval) {
                if (strcmp(op, "_Retval") != 0 || gn_graph_node_input_count(g, i) < 1) continue;
                if (gn_graph_node_input(g, i, 0, buf, sizeof buf) != GN_OK || buf[0] == '^') continue;
                char c[2048];
                canon(buf, c, sizeof c);
                if (!nl_has(out, c) && nl_add(out, c)) return free(used), -1;
                continue;
            }
            if (used[i] == 1 || (used[i] && pass == 0) || strcmp(op, "NoOp") == 0 || is_placeholder(op)) continue;
            int32_t no = gn_graph_node_output_count(g, i);
            if (no == 0) continue;
            if (no < 0) no = 1;
            for (int32_t k = 0; k < no; k++) {
                if (k) snprintf(buf, sizeof buf, "%s:%d", gn_graph_node_name(g, i), k);
                else snprintf(buf, sizeof buf, "%s", gn_graph_node_name(g, i));
                if (nl_add(out, buf)) return free(used), -1;
            }
        }
    }
    free(used);
    return 0;
}

/* Placeholders the fetches need, walking back from them and stopping at fed
 * tensors (the CLI's view of the runtime's pruning). */
static int needed_placeholders(const gview *v, const namelist *fetches, const namelist *fed, namelist *out)
{
    gn_graph *g = v->g;
    unsigned char *seen = calloc(v->n + 1, 1);
    size_t *stack = malloc((v->n + 1) * sizeof *stack);
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return -1;
    }
    size_t sp = 0;
    char buf[2048], c[2048];
    for (int i = 0; i < fetches->n; i++) {
        canon(fetches->s[i], c, sizeof c);
        if (nl_has(fed, c)) continue;
        char *colon = strrchr(c, ':');
        long p = gview_find(v, c, colon ? (size_t)(colon - c) : strlen(c));
        if (p >= 0 && !seen[p]) {
            seen[p] = 1;
            stack[sp++] = (size_t)p;
        }
    }
    while (sp) {
        size_t id = stack[--sp];
        const char *op = gn_graph_node_op(g, id);
        if (is_placeholder(op)) {
            if (nl_add(out, gn_graph_node_name(g, id))) {
                free(seen);
                free(stack);
                return -1;
            }
            continue;
        }
        size_t ni = gn_graph_node_input_count(g, id);
        for (size_t k = 0; k < ni; k++) {
            if (gn_graph_node_input(g, id, k, buf, sizeof buf) != GN_OK) continue;
            const char *nm = buf[0] == '^' ? buf + 1 : buf;
            canon(nm, c, sizeof c);
            if (buf[0] != '^' && nl_has(fed, c)) continue;
            char *colon = strrchr(c, ':');
            size_t len = colon ? (size_t)(colon - c) : strlen(c);
            long p = gview_find(v, c, len);
            if (p < 0 || seen[p]) continue;
            if (buf[0] == '^' && is_placeholder(gn_graph_node_op(g, (size_t)p))) {
                char pn[2048];
                snprintf(pn, sizeof pn, "%.*s", (int)len, c);
                if (nl_has(fed, pn)) continue;
            }
            seen[p] = 1;
            stack[sp++] = (size_t)p;
        }
    }
    free(seen);
    free(stack);
    return 0;
}

/* A feed: its name and tensor (owned). */
typedef struct feed {
    char *name;
    gn_tensor t;
} feed;

typedef struct feedset {
    feed *f;
    int n;
} feedset;

static void fs_free(feedset *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->f[i].name);
        gn_tensor_free(&s->f[i].t);
    }
    free(s->f);
    s->f = NULL;
    s->n = 0;
}

static int fs_find(const feedset *s, const char *name)
{
    char a[2048], b[2048];
    canon(name, a, sizeof a);
    for (int i = 0; i < s->n; i++) {
        canon(s->f[i].name, b, sizeof b);
        if (strcmp(a, b) == 0) return i;
    }
    return -1;
}

static feed *fs_add(feedset *s, const char *name)
{
    feed *f = realloc(s->f, (size_t)(s->n + 1) * sizeof *f);
    if (!f) return NULL;
    s->f = f;
    memset(&f[s->n], 0, sizeof f[s->n]);
    f[s->n].name = strdup(name);
    if (!f[s->n].name) return NULL;
    return &f[s->n++];
}

/* Reads the --feed files (their canonical names go to user). Returns 0, or
 * an exit status. */
static int load_feeds(const run_opts *o, feedset *fs, namelist *user)
{
    for (int i = 0; i < o->n_feeds; i++) {
        char c[2048];
        canon(o->feeds[i].name, c, sizeof c);
        if (nl_add(user, c)) return 1;
        if (fs_find(fs, o->feeds[i].name) >= 0) {
            fprintf(stderr, "grapnel %s: feed '%s' is given twice\n", o->cmd, o->feeds[i].name);
            return EXIT_USAGE;
        }
        if (!o->feeds[i].value) continue;   /* random data, made by add_random_feeds */
        feed *f = fs_add(fs, o->feeds[i].name);
        if (!f) return 1;
        char err[1024];
        if (gn_npy_read(o->feeds[i].value, &f->t, err, sizeof err) != GN_OK) {
            fprintf(stderr, "grapnel %s: %s\n", o->cmd, err);
            return 1;
        }
    }
    return 0;
}

static const kv *find_shape(const run_opts *o, const char *name)
{
    char a[2048], b[2048];
    canon(name, a, sizeof a);
    for (int i = 0; i < o->n_shapes; i++) {
        canon(o->shapes[i].name, b, sizeof b);
        if (strcmp(a, b) == 0) return &o->shapes[i];
    }
    return NULL;
}

/* Random data for the tensor name (node or node:k) of v's graph: its
 * inferred dtype and shape (unknown dims o->dim; --shape NAME=DIMS says
 * otherwise), added to fs. what names it in messages ("placeholder",
 * "feed"). Returns 0, or an exit status. */
static int random_feed(const run_opts *o, const gview *v, const char *name, const char *what, feedset *fs)
{
    const char *colon = strrchr(name, ':');
    size_t len = strlen(name);
    int32_t k = 0;
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        k = atoi(colon + 1);
        len = (size_t)(colon - name);
    }
    long id = gview_find(v, name, len);
    if (id < 0 || k >= gn_graph_node_output_count(v->g, (size_t)id)) {
        fprintf(stderr, "grapnel %s: %s '%s': no such tensor in the graph\n", o->cmd, what, name);
        return 1;
    }
    int32_t dtype = gn_graph_node_output_dtype(v->g, (size_t)id, k);
    int64_t dims[GN_TENSOR_MAX_DIMS];
    int32_t rank;
    const kv *sh = find_shape(o, name);
    if (sh) {
        if (parse_dims(sh->value, &rank, dims) != 0) {
            fprintf(stderr, "grapnel %s: --shape %s=%s: expected dimensions such as 2x784\n", o->cmd, sh->name, sh->value);
            return EXIT_USAGE;
        }
    } else {
        rank = gn_graph_node_output_shape(v->g, (size_t)id, k, dims, GN_TENSOR_MAX_DIMS);
        if (rank < 0) {
            fprintf(stderr, "grapnel %s: %s '%s' has no known shape: give one with --shape %s=DIMS (e.g. 2x784) or feed it "
                            "with --feed\n",
                    o->cmd, what, name, name);
            return EXIT_USAGE;
        }
        if (rank > GN_TENSOR_MAX_DIMS) rank = GN_TENSOR_MAX_DIMS;
        for (int32_t d = 0; d < rank; d++)
            if (dims[d] < 0) dims[d] = o->dim;
    }
    if (!dtype) {
        fprintf(stderr, "grapnel %s: %s '%s' has no known dtype: feed it with --feed\n", o->cmd, what, name);
        return 1;
    }
    feed *f = fs_add(fs, name);
    if (!f) return 1;
    if (gn_tensor_alloc(dtype, rank, dims, &f->t) != GN_OK || gn_cli_random_fill(&f->t, o->seed, name) != 0) {
        fprintf(stderr, "grapnel %s: cannot make random %s data for %s '%s': feed it with --feed\n", o->cmd,
                gn_dtype_numpy_name(dtype), what, name);
        return 1;
    }
    return 0;
}

/* Random feeds for the tensors named by a bare --feed NAME, then for the
 * placeholders graph v needs that are not fed yet. Returns 0, or an exit
 * status. */
static int add_random_feeds(const run_opts *o, const gview *v, const namelist *fetches, feedset *fs)
{
    namelist fed = {0}, need = {0};
    int rc = 0;
    char c[2048];
    for (int i = 0; i < o->n_feeds && rc == 0; i++)
        if (!o->feeds[i].value && fs_find(fs, o->feeds[i].name) < 0) rc = random_feed(o, v, o->feeds[i].name, "feed", fs);
    for (int i = 0; i < fs->n && rc == 0; i++) {
        canon(fs->f[i].name, c, sizeof c);
        if (nl_add(&fed, c)) rc = 1;
    }
    if (rc == 0 && needed_placeholders(v, fetches, &fed, &need)) rc = 1;
    for (int i = 0; i < need.n && rc == 0; i++)
        if (fs_find(fs, need.s[i]) < 0) rc = random_feed(o, v, need.s[i], "placeholder", fs);
    nl_free(&fed);
    nl_free(&need);
    return rc;
}

/* ---- SavedModel signatures ---------------------------------------------------------------------------- */
/* The keys of one side of a signature, comma-separated (malloc'd). */
static char *sig_keys(gn_graph *g, const char *sig, int32_t outputs)
{
    size_t n = 0, len = 1;
    gn_signature_arg arg;
    if (gn_graph_signature_args(g, sig, outputs, &n) != GN_OK) n = 0;
    for (size_t k = 0; k < n; k++)
        if (gn_graph_signature_arg(g, sig, outputs, k, &arg) == GN_OK) len += strlen(arg.key) + 2;
    char *s = malloc(len);
    if (!s) return NULL;
    s[0] = 0;
    for (size_t k = 0; k < n; k++)
        if (gn_graph_signature_arg(g, sig, outputs, k, &arg) == GN_OK) {
            if (s[0]) strcat(s, ", ");
            strcat(s, arg.key);
        }
    return s;
}

/* Replaces kv a's name (keeping its value). */
static int kv_rename(kv *a, const char *name)
{
    size_t nl = strlen(name), vl = a->value ? strlen(a->value) : 0;
    char *n = malloc(nl + vl + 2);
    if (!n) return -1;
    memcpy(n, name, nl + 1);
    char *v = NULL;
    if (a->value) {
        v = n + nl + 1;
        memcpy(v, a->value, vl + 1);
    }
    free(a->name);
    a->name = n;
    a->value = v;
    return 0;
}

/* The tensor of signature key's input or output `key`; NULL when none. */
static const char *sig_tensor(gn_graph *g, const char *sig, int32_t outputs, const char *key, gn_signature_arg *arg)
{
    size_t n = 0;
    if (gn_graph_signature_args(g, sig, outputs, &n) != GN_OK) return NULL;
    for (size_t k = 0; k < n; k++)
        if (gn_graph_signature_arg(g, sig, outputs, k, arg) == GN_OK && strcmp(arg->key, key) == 0)
            return arg->tensor;
    return NULL;
}

/* run on a SavedModel: freezes the signature (--signature, default
 * serving_default) and maps feeds and fetches named by the signature's keys to
 * its tensors; without --fetch, every output of the signature is fetched,
 * labelled by its key. *g is replaced by the frozen graph. */
static int use_signature(run_opts *o, gn_graph **g, int side)
{
    const char *sig = NULL;
    if (!gn_cli_is_savedmodel(*g)) {
        if (!o->signature || side > 0) return 0;
        fprintf(stderr, "grapnel %s: --signature: %s is not a SavedModel\n", o->cmd, o->models[0]);
        return 1;
    }
    if (side > 0 && o->labels) goto freeze;   /* names already mapped by the other side */
    if (strcmp(o->cmd, "run") == 0 && !o->signature && o->n_fetches > 0) {
        /* fetches by graph tensor names: run the graph as it is, unless they are signature keys */
        const char *key = gn_graph_default_signature(*g);
        gn_signature_arg arg;
        if (!gn_graph_signature_method(*g, key)) return 0;
        if (!sig_tensor(*g, key, 1, o->fetches[0].name, &arg)) {
            /* a tensor of the graph: run it as it is; neither a tensor nor a
             * key: the signature's keys are what the error lists */
            char c[2048];
            canon(o->fetches[0].name, c, sizeof c);
            char *colon = strrchr(c, ':');
            if (colon) *colon = 0;
            for (size_t i = 0; i < gn_graph_node_count(*g); i++)
                if (!strcmp(gn_graph_node_name(*g, i), c)) return 0;
        }
    }
    sig = o->signature ? o->signature : gn_graph_default_signature(*g);
    size_t n_out = 0;
    if (gn_graph_signature_args(*g, sig, 1, &n_out) != GN_OK) {
        fprintf(stderr, "grapnel %s: %s\n", o->cmd, gn_graph_errmsg(*g));
        return 1;
    }
    gn_signature_arg arg;
    for (int i = 0; i < o->n_feeds; i++)
        if (sig_tensor(*g, sig, 0, o->feeds[i].name, &arg) && kv_rename(&o->feeds[i], arg.tensor)) return 1;
    if (o->n_fetches == 0) {
        o->fetches = calloc(n_out + 1, sizeof *o->fetches);
        o->labels = calloc(n_out + 1, sizeof *o->labels);
        if (!o->fetches || !o->labels) return 1;
        for (size_t k = 0; k < n_out; k++) {
            if (gn_graph_signature_arg(*g, sig, 1, k, &arg) != GN_OK) return 1;
            size_t need = strlen(arg.tensor) + (o->output_dir ? strlen(o->output_dir) + strlen(arg.key) + 8 : 0) + 2;
            char *n = malloc(need);
            o->labels[k] = strdup(arg.key);
            if (!n || !o->labels[k]) {
                free(n);
                return 1;
            }
            o->fetches[k].name = n;
            o->fetches[k].value = NULL;
            o->n_fetches = (int)k + 1;
            strcpy(n, arg.tensor);
            if (o->output_dir) {
                o->fetches[k].value = n + strlen(n) + 1;
                sprintf(o->fetches[k].value, "%s/%s.npy", o->output_dir, arg.key);
            }
        }
    } else {
        o->labels = calloc((size_t)o->n_fetches + 1, sizeof *o->labels);
        if (!o->labels) return 1;
        for (int i = 0; i < o->n_fetches; i++) {
            if (!sig_tensor(*g, sig, 1, o->fetches[i].name, &arg)) continue;
            if (!(o->labels[i] = strdup(arg.key)) || kv_rename(&o->fetches[i], arg.tensor)) return 1;
        }
    }
freeze:;
    gn_graph *fz = NULL;
    if (!sig) sig = o->signature ? o->signature : gn_graph_default_signature(*g);
    if (side == 0 && gn_graph_signature_method(*g, sig)) {
        free(o->sig_key);
        free(o->sig_inputs);
        free(o->sig_outputs);
        o->sig_key = strdup(sig);
        o->sig_inputs = sig_keys(*g, sig, 0);
        o->sig_outputs = sig_keys(*g, sig, 1);
        if (!o->sig_key || !o->sig_inputs || !o->sig_outputs) return 1;
    }
    if (gn_graph_freeze(*g, sig, &fz) != GN_OK) {
        fprintf(stderr, "grapnel %s: %s\n", o->cmd, gn_graph_errmsg(*g));
        gn_graph_free(fz);
        return 1;
    }
    gn_graph_free(*g);
    *g = fz;
    gn_graph_infer_shapes(fz);
    return 0;
}

/* ---- names the graph lacks ------------------------------------------------------------------------------ */
/* A feed or fetch that names no node of the graph: the error says so with the
 * graph's inputs (feeds) or outputs (fetches), or the signature's keys, and
 * the nearest of them. Checked before any file is read or random feed made. */
static int check_names(const run_opts *o, const gview *v)
{
    for (int side = 0; side <= 1; side++) {
        int n = side ? o->n_fetches : o->n_feeds;
        const kv *list = side ? o->fetches : o->feeds;
        for (int i = 0; i < n; i++) {
            char c[2048];
            canon(list[i].name, c, sizeof c);
            char *colon = strrchr(c, ':');
            if (gview_find(v, c, colon ? (size_t)(colon - c) : strlen(c)) >= 0) continue;
            namelist cand = {0};
            int rc = 0;
            const char *keys = side ? o->sig_outputs : o->sig_inputs;
            if (o->sig_key) {
                for (const char *p = keys; *p && !rc;) {
                    const char *e = strstr(p, ", ");
                    size_t len = e ? (size_t)(e - p) : strlen(p);
                    char k[1024];
                    snprintf(k, sizeof k, "%.*s", (int)len, p);
                    rc = nl_add(&cand, k);
                    p += len + (e ? 2 : 0);
                }
            } else if (side) {
                rc = default_fetches(v, &cand);
            } else {
                for (size_t k = 0; k < v->n && !rc; k++)
                    if (is_placeholder(gn_graph_node_op(v->g, k))) rc = nl_add(&cand, gn_graph_node_name(v->g, k));
            }
            const char *near = rc ? NULL : gn_cli_suggest(list[i].name, (const char *const *)cand.s, (size_t)cand.n);
            if (o->sig_key)
                fprintf(stderr, "grapnel %s: '%s' is neither %s key of signature '%s' nor a tensor of the graph", o->cmd,
                        list[i].name, side ? "an output" : "an input", o->sig_key);
            else
                fprintf(stderr, "grapnel %s: no tensor '%s' in the graph", o->cmd, list[i].name);
            if (near) fprintf(stderr, "; did you mean '%s'?", near);
            fprintf(stderr, " (%s:", o->sig_key ? (side ? "output keys" : "input keys") : (side ? "its outputs" : "its inputs"));
            if (!cand.n) fputs(" none", stderr);
            for (int k = 0; k < cand.n; k++) fprintf(stderr, "%s %s", k ? "," : "", cand.s[k]);
            fputs(")\n", stderr);
            nl_free(&cand);
            return 1;
        }
    }
    return 0;
}

int gn_cli_check_tensor_names(const char *cmd, gn_graph *g, const char *const *feeds, size_t n_feeds,
                              const char *const *fetches, size_t n_fetches)
{
    run_opts o;
    memset(&o, 0, sizeof o);
    o.cmd = cmd;
    o.feeds = calloc(n_feeds + 1, sizeof *o.feeds);
    o.fetches = calloc(n_fetches + 1, sizeof *o.fetches);
    gview v = {0};
    int rc = 1;
    if (o.feeds && o.fetches && gview_init(&v, g) == 0) {
        for (size_t i = 0; i < n_feeds; i++) o.feeds[i].name = (char *)feeds[i];
        for (size_t i = 0; i < n_fetches; i++) o.fetches[i].name = (char *)fetches[i];
        o.n_feeds = (int)n_feeds;
        o.n_fetches = (int)n_fetches;
        rc = check_names(&o, &v);
    } else {
        fprintf(stderr, "grapnel %s: out of memory\n", cmd);
    }
    free(v.by_name);
    free(o.feeds);
    free(o.fetches);
    return rc;
}

/* ---- JSON ---------------------------------------------------------------------------------------------- */
/* The options in force, shared by run and verify. */
static void json_options(gn_json *j, const run_opts *o)
{
    gn_json_header(j, o->cmd);
    gn_json_key(j, "models");
    gn_json_strs(j, o->models, (size_t)o->n_models);
    gn_json_key(j, "tags");
    gn_json_str(j, o->tags);
    gn_json_key(j, "signature");
    gn_json_str(j, o->sig_key);
    gn_json_key(j, "backend");
    gn_json_str(j, o->backend ? o->backend : "cpu");
    if (o->n_models == 2) {
        gn_json_key(j, "backend_b");
        gn_json_str(j, o->backend_b ? o->backend_b : o->backend ? o->backend : "cpu");
        gn_json_key(j, "tol");
        if (o->tol > 0) gn_json_num(j, o->tol);
        else gn_json_null(j);
    }
    gn_json_key(j, "seed");
    gn_json_uint(j, o->seed);
    gn_json_key(j, "dim");
    gn_json_int(j, o->dim);
    gn_json_key(j, "feeds");
    gn_json_begin(j, '{');
    for (int i = 0; i < o->n_feeds; i++) {
        gn_json_key(j, o->feeds[i].name);
        gn_json_str(j, o->feeds[i].value);
    }
    gn_json_end(j, '}');
    gn_json_key(j, "shapes");
    gn_json_begin(j, '{');
    for (int i = 0; i < o->n_shapes; i++) {
        gn_json_key(j, o->shapes[i].name);
        gn_json_str(j, o->shapes[i].value);
    }
    gn_json_end(j, '}');
    if (o->n_models == 1) {
        gn_json_key(j, "output_dir");
        gn_json_str(j, o->output_dir);
        gn_json_key(j, "repeat");
        gn_json_int(j, o->repeat);
        gn_json_key(j, "warmup");
        gn_json_int(j, o->warmup);
    }
    gn_json_end(j, '}');
}

/* ---- loading and running ----------------------------------------------------------------------------- */
static gn_graph *load_model(const run_opts *o, const char *path)
{
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = o->tags;
    gn_graph *g = gn_cli_load(o->cmd, path, &lo);
    if (!g) return NULL;
    /* shapes and dtypes of placeholders and outputs; a failure only costs
     * the defaults that need them */
    gn_graph_infer_shapes(g);
    return g;
}

typedef struct side {
    gn_graph *g;
    gview v;
    gn_session *s;
    gn_tensor *out;
} side;

static void side_free(side *sd, int n_fetch)
{
    if (sd->out)
        for (int i = 0; i < n_fetch; i++) gn_tensor_free(&sd->out[i]);
    free(sd->out);
    gn_session_free(sd->s);
    free(sd->v.by_name);
    gn_graph_free(sd->g);
    memset(sd, 0, sizeof *sd);
}

/* The feeds of fs that name tensors of the graph the fetches need (user
 * feeds always go through, so that a bad name is reported). */
static gn_status run_side(const run_opts *o, side *sd, const feedset *fs, const namelist *user, const namelist *fetches,
                          const char *label, const char *backend, gn_timing *timing)
{
    gn_session_options so;
    gn_session_options_init(&so);
    so.seed = o->seed;
    if (backend) so.backend = backend;
    so.memory_limit_bytes = o->memory_limit;
    so.step_limit = o->step_limit;
    so.time_limit_ms = o->time_limit_ms;
    gn_status s = gn_session_new(sd->g, &so, &sd->s);
    if (s != GN_OK) {
        fprintf(stderr, "grapnel %s: %s%s%s\n", o->cmd, label, label[0] ? ": " : "", gn_session_errmsg(sd->s));
        return s;
    }
    const char **fn = calloc((size_t)fs->n + 1, sizeof *fn);
    gn_tensor *ft = calloc((size_t)fs->n + 1, sizeof *ft);
    sd->out = calloc((size_t)fetches->n + 1, sizeof *sd->out);
    if (!fn || !ft || !sd->out) {
        free(fn);
        free(ft);
        return GN_ERR_NOMEM;
    }
    int nf = 0;
    for (int i = 0; i < fs->n; i++) {
        const char *nm = fs->f[i].name;
        char c[2048];
        canon(nm, c, sizeof c);
        char *colon = strrchr(c, ':');
        int known = gview_find(&sd->v, c, colon ? (size_t)(colon - c) : strlen(c)) >= 0;
        if (!known && !nl_has(user, c)) continue;   /* a random feed of the other graph */
        fn[nf] = nm;
        ft[nf] = fs->f[i].t;
        ft[nf].internal = NULL;   /* borrowed view */
        nf++;
    }
    /* --repeat N: K warmup runs, then N timed ones; the outputs are the last run's */
    int timed = timing ? o->repeat : 0, total = timed ? o->warmup + timed : 1;
    double *lat = timed ? calloc((size_t)timed, sizeof *lat) : NULL;
    if (timed && !lat) s = GN_ERR_NOMEM;
    for (int r = 0; r < total && s == GN_OK; r++) {
        if (r)
            for (int i = 0; i < fetches->n; i++) gn_tensor_free(&sd->out[i]);
        double t0 = gn_cli_now();
        s = gn_session_run(sd->s, fn, ft, (size_t)nf, (const char *const *)fetches->s, sd->out, (size_t)fetches->n);
        if (lat && r >= o->warmup) lat[r - o->warmup] = gn_cli_now() - t0;
    }
    if (s == GN_OK && lat) gn_timing_from(timing, lat, timed, o->warmup);
    free(lat);
    if (s != GN_OK)
        fprintf(stderr, "grapnel %s: %s%s%s\n", o->cmd, label, label[0] ? ": " : "", gn_session_errmsg(sd->s));
    free(fn);
    free(ft);
    return s;
}

static int prepare_fetches(const run_opts *o, const gview *v, namelist *fetches)
{
    if (o->n_fetches) {
        for (int i = 0; i < o->n_fetches; i++)
            if (nl_add(fetches, o->fetches[i].name)) return 1;
        return 0;
    }
    if (default_fetches(v, fetches)) return 1;
    if (fetches->n == 0) {
        fprintf(stderr, "grapnel %s: the graph has no outputs to fetch: name them with --fetch\n", o->cmd);
        return 1;
    }
    return 0;
}

int gn_cli_run(int argc, char **argv)
{
    run_opts o = {.cmd = "run"};
    int rc = parse_opts(argc, argv, &o, 1);
    if (rc) {
        opts_free(&o);
        return rc;
    }
    side sd = {0};
    feedset fs = {0};
    namelist fetches = {0}, user = {0};
    sd.g = load_model(&o, o.models[0]);
    if (!sd.g) rc = 1;
    if (!rc) rc = use_signature(&o, &sd.g, 0);
    if (!rc && o.output_dir && !o.labels) {
        fprintf(stderr, "grapnel run: --output-dir writes a SavedModel signature's outputs: %s is run without one\n",
                o.models[0]);
        rc = EXIT_USAGE;
    }
    if (!rc && o.output_dir && mkdir(o.output_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "grapnel run: --output-dir %s: %s\n", o.output_dir, strerror(errno));
        rc = 1;
    }
    if (!rc && gview_init(&sd.v, sd.g)) rc = 1;
    if (!rc) rc = check_names(&o, &sd.v);
    if (!rc) rc = load_feeds(&o, &fs, &user);
    if (!rc) rc = prepare_fetches(&o, &sd.v, &fetches);
    if (!rc) rc = add_random_feeds(&o, &sd.v, &fetches, &fs);
    if (!rc && run_side(&o, &sd, &fs, &user, &fetches, "", o.backend, &o.timing) != GN_OK) rc = 1;
    gn_json j;
    if (!rc && o.json) {
        gn_json_init(&j, stdout);
        json_options(&j, &o);
        gn_json_key(&j, "outputs");
        gn_json_begin(&j, '[');
    }
    for (int i = 0; !rc && i < fetches.n; i++) {
        const gn_tensor *t = &sd.out[i];
        char shp[256];
        gn_cli_shape_tuple(t, shp, sizeof shp);
        const char *file = o.n_fetches ? o.fetches[i].value : NULL;
        const char *label = o.labels && o.labels[i] ? o.labels[i] : fetches.s[i];
        if (file) {
            char err[1024];
            if (gn_npy_write(file, t, err, sizeof err) != GN_OK) {
                fprintf(stderr, "grapnel run: %s\n", err);
                rc = 1;
                break;
            }
            if (!o.json) printf("%s: %s %s -> %s\n", label, gn_dtype_numpy_name(t->dtype), shp, file);
        }
        if (o.json) {
            gn_json_begin(&j, '{');
            gn_json_key(&j, "name");
            gn_json_str(&j, fetches.s[i]);
            gn_json_key(&j, "key");
            gn_json_str(&j, o.labels ? o.labels[i] : NULL);
            gn_json_key(&j, "dtype");
            gn_json_str(&j, gn_dtype_numpy_name(t->dtype));
            gn_json_key(&j, "shape");
            gn_json_shape(&j, t->rank, t->dims);
            gn_json_key(&j, file ? "file" : "values");
            if (file) gn_json_str(&j, file);
            else gn_cli_json_values(&j, t);
            gn_json_end(&j, '}');
        } else if (!file) {
            char *text = gn_cli_format_array(t);
            printf("%s: %s %s\n%s\n", label, gn_dtype_numpy_name(t->dtype), shp, text ? text : "");
            free(text);
        }
    }
    if (!rc && o.json) {
        gn_json_end(&j, ']');
        gn_json_key(&j, "timing");
        if (o.repeat) gn_timing_json(&j, &o.timing);
        else gn_json_null(&j);
        gn_json_end(&j, '}');
    } else if (!rc && o.repeat) {
        gn_timing_print(&o.timing, "run", stderr);
    }
    if (fflush(stdout) != 0) rc = 1;
    side_free(&sd, fetches.n);
    fs_free(&fs);
    nl_free(&user);
    nl_free(&fetches);
    opts_free(&o);
    return rc;
}

int gn_cli_verify(int argc, char **argv)
{
    run_opts o = {.cmd = "verify"};
    int rc = parse_opts(argc, argv, &o, 2);
    if (rc) {
        opts_free(&o);
        return rc;
    }
    side a = {0}, b = {0};
    feedset fs = {0};
    namelist fetches = {0}, user = {0};
    a.g = load_model(&o, o.models[0]);
    if (!a.g || use_signature(&o, &a.g, 0) || gview_init(&a.v, a.g)) rc = 1;
    if (!rc) rc = check_names(&o, &a.v);
    if (!rc) {
        b.g = load_model(&o, o.models[1]);
        if (!b.g || use_signature(&o, &b.g, 1) || gview_init(&b.v, b.g)) rc = 1;
    }
    if (!rc) rc = load_feeds(&o, &fs, &user);
    if (!rc) rc = prepare_fetches(&o, &a.v, &fetches);
    /* random feeds once: A's placeholders, then any more B needs */
    if (!rc) rc = add_random_feeds(&o, &a.v, &fetches, &fs);
    if (!rc) rc = add_random_feeds(&o, &b.v, &fetches, &fs);
    int ran_a = 0, ran_b = 0;
    if (!rc) {
        char la[1100], lb[1100];
        snprintf(la, sizeof la, "%s", o.models[0]);
        snprintf(lb, sizeof lb, "%s", o.models[1]);
        ran_a = run_side(&o, &a, &fs, &user, &fetches, la, o.backend, NULL) == GN_OK;
        ran_b = run_side(&o, &b, &fs, &user, &fetches, lb, o.backend_b ? o.backend_b : o.backend, NULL) == GN_OK;
        if (!ran_a || !ran_b) rc = 1;
    }
    if (!rc && o.json) {
        gn_json j;
        gn_json_init(&j, stdout);
        json_options(&j, &o);
        gn_json_key(&j, "fetches");
        gn_json_begin(&j, '[');
        int bad = 0;
        for (int i = 0; i < fetches.n; i++) {
            gn_compare_result r;
            gn_tensor_compare(&b.out[i], &a.out[i], o.tol, &r);
            bad += !r.match;
            gn_json_begin(&j, '{');
            gn_json_key(&j, "name");
            gn_json_str(&j, fetches.s[i]);
            gn_json_key(&j, "key");
            gn_json_str(&j, o.labels ? o.labels[i] : NULL);
            gn_json_key(&j, "dtype");
            gn_json_str(&j, gn_dtype_numpy_name(a.out[i].dtype));
            gn_json_key(&j, "shape");
            gn_json_shape(&j, a.out[i].rank, a.out[i].dims);
            gn_json_key(&j, "max_abs_err");
            gn_json_num(&j, r.max_abs_err);
            gn_json_key(&j, "rel_l2_err");
            gn_json_num(&j, r.rel_l2_err);
            gn_json_key(&j, "tol");
            gn_json_num(&j, r.tol);
            gn_json_key(&j, "match");
            gn_json_bool(&j, r.match);
            gn_json_key(&j, "why");
            gn_json_str(&j, r.match ? NULL : r.why);
            gn_json_end(&j, '}');
        }
        gn_json_end(&j, ']');
        gn_json_key(&j, "matched");
        gn_json_int(&j, fetches.n - bad);
        gn_json_key(&j, "total");
        gn_json_int(&j, fetches.n);
        gn_json_key(&j, "match");
        gn_json_bool(&j, bad == 0);
        gn_json_end(&j, '}');
        if (bad) rc = 1;
    } else if (!rc) {
        int w = 5;
        for (int i = 0; i < fetches.n; i++)
            if ((int)strlen(fetches.s[i]) > w) w = (int)strlen(fetches.s[i]);
        printf("%-*s  %-8s %-14s %12s %12s  %s\n", w, "fetch", "dtype", "shape", "max_abs_err", "rel_l2_err", "result");
        int bad = 0;
        for (int i = 0; i < fetches.n; i++) {
            gn_compare_result r;
            gn_tensor_compare(&b.out[i], &a.out[i], o.tol, &r);
            char shp[256];
            gn_cli_shape_tuple(&a.out[i], shp, sizeof shp);
            printf("%-*s  %-8s %-14s %12.4g %12.4g  %s", w, fetches.s[i], gn_dtype_numpy_name(a.out[i].dtype), shp,
                   r.max_abs_err, r.rel_l2_err, r.match ? "ok" : "FAIL");
            if (!r.match) {
                printf(": %s", r.why);
                bad++;
            }
            printf("\n");
        }
        printf("%s: %d of %d fetches match\n", bad ? "FAIL" : "ok", fetches.n - bad, fetches.n);
        if (bad) rc = 1;
    }
    if (fflush(stdout) != 0) rc = 1;
    side_free(&a, fetches.n);
    side_free(&b, fetches.n);
    fs_free(&fs);
    nl_free(&user);
    nl_free(&fetches);
    opts_free(&o);
    return rc;
}
