/* grapnel optimize, and grapnel verify --bisect. Public API only. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/report_html.h"

static const char optimize_usage[] = "(see grapnel optimize --help)\n";

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b) b[n] = 0;
    if (len) *len = n;
    return b;
}

/* Applies --options TEXT or @FILE to o; prints the error and returns 1 (the
 * file cannot be read) or EXIT_USAGE (a bad key or value). */
static int apply_options(gn_options *o, const char *arg)
{
    char err[2048] = "";
    gn_status s;
    if (arg[0] == '@') {
        size_t n;
        char *text = read_all(arg + 1, &n);
        if (!text) {
            fprintf(stderr, "grapnel: %s: %s\n", arg + 1, strerror(errno));
            return 1;
        }
        /* a dictionary or key=value text, else a RewriterConfig */
        const char *p = text;
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
        bool dict_like = *p == '{' || (strchr(text, '=') && !strchr(text, ':'));
        s = dict_like ? gn_options_parse(o, text, err, sizeof err)
                      : gn_options_from_rewriter_config(o, text, n, err, sizeof err);
        free(text);
        if (s != GN_OK) {
            fprintf(stderr, "grapnel: %s: %s\n", arg + 1, err);
            return EXIT_USAGE;
        }
        return 0;
    }
    s = gn_options_parse(o, arg, err, sizeof err);
    if (s != GN_OK) {
        fprintf(stderr, "grapnel: --options: %s\n", err);
        return EXIT_USAGE;
    }
    return 0;
}

typedef struct opt_args {
    const char *in, *out, *options, *report, *report_file, *dump_dir, *tags, *disable;
    const char *target, *signature;
    const char *tol;   /* --tol, for --verify */
    const char **fetches, **feeds;
    int n_fetches, n_feeds;
    /* --feed NAME=FILE.npy: the file, for --verify (NULL for a bare NAME), by
     * the index of the feed among the first n_user_feeds */
    const char **feed_files;
    int n_user_feeds;
    int verify, list, checked;
    /* a SavedModel input's signature arguments as "key=tensor", for the
     * SavedModel written: its signature keeps the input's keys */
    const char **save_fetches, **save_feeds;
    int n_save_fetches, n_save_feeds;
    const char *save_tags;   /* and its tags (the input's MetaGraphDef's) */
} opt_args;

static int parse_args(int argc, char **argv, opt_args *a)
{
    a->fetches = calloc((size_t)argc, sizeof *a->fetches);
    a->feeds = calloc((size_t)argc, sizeof *a->feeds);
    a->feed_files = calloc((size_t)argc, sizeof *a->feed_files);
    if (!a->fetches || !a->feeds || !a->feed_files) return 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
#define NEED_VALUE                                                                   \
    if (i + 1 >= argc) {                                                             \
        fprintf(stderr, "grapnel optimize: %s needs a value\n%s", s, optimize_usage); \
        return EXIT_USAGE;                                                           \
    }
        if (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0) {
            NEED_VALUE a->out = argv[++i];
        } else if (strcmp(s, "--options") == 0) {
            NEED_VALUE a->options = argv[++i];
        } else if (strcmp(s, "--fetch") == 0) {
            NEED_VALUE a->fetches[a->n_fetches++] = argv[++i];
        } else if (strcmp(s, "--feed") == 0) {
            NEED_VALUE;
            char *v = argv[++i], *eq = strchr(v, '=');
            if (eq && (eq == v || !eq[1])) {
                fprintf(stderr, "grapnel optimize: --feed '%s': expected NAME or NAME=FILE.npy\n%s", v, optimize_usage);
                return EXIT_USAGE;
            }
            if (eq) *eq = '\0';   /* the name is what is optimized as fed; the file is --verify's */
            a->feed_files[a->n_feeds] = eq ? eq + 1 : NULL;
            a->feeds[a->n_feeds++] = v;
            a->n_user_feeds = a->n_feeds;
        } else if (strcmp(s, "--report") == 0) {
            NEED_VALUE a->report = argv[++i];
            if (strcmp(a->report, "text") != 0 && strcmp(a->report, "json") != 0 && strcmp(a->report, "html") != 0) {
                fprintf(stderr, "grapnel optimize: --report: '%s' is not one of text, json, html\n", a->report);
                return EXIT_USAGE;
            }
        } else if (strcmp(s, "--report-file") == 0) {
            NEED_VALUE a->report_file = argv[++i];
        } else if (strcmp(s, "--disable") == 0) {
            NEED_VALUE a->disable = argv[++i];
        } else if (strcmp(s, "--dump-dir") == 0) {
            NEED_VALUE a->dump_dir = argv[++i];
        } else if (strcmp(s, "--tag") == 0 || strcmp(s, "--tags") == 0) {
            NEED_VALUE a->tags = argv[++i];
        } else if (strcmp(s, "--target") == 0) {
            NEED_VALUE a->target = argv[++i];
        } else if (strcmp(s, "--signature") == 0) {
            NEED_VALUE a->signature = argv[++i];
        } else if (strcmp(s, "--verify") == 0) {
            a->verify = 1;
        } else if (strcmp(s, "--tol") == 0) {
            NEED_VALUE a->tol = argv[++i];
        } else if (strcmp(s, "--checked") == 0) {
            a->checked = 1;
        } else if (strcmp(s, "--list-passes") == 0) {
            a->list = 1;
        } else if (s[0] == '-' && s[1]) {
            return gn_cli_unknown_option("optimize", s);
        } else if (!a->in) {
            a->in = s;
        } else {
            fprintf(stderr, "grapnel optimize: unexpected argument '%s'\n%s", s, optimize_usage);
            return EXIT_USAGE;
        }
#undef NEED_VALUE
    }
    return 0;
}

static int load_options(gn_options *o, const char *arg)
{
    gn_options_init(o);
    const char *env = getenv("GRAPNEL_OPTIONS");
    if (env && env[0]) {
        char err[2048];
        if (gn_options_parse(o, env, err, sizeof err) != GN_OK) {
            fprintf(stderr, "grapnel: GRAPNEL_OPTIONS: %s\n", err);
            return EXIT_USAGE;
        }
    }
    return arg ? apply_options(o, arg) : 0;
}

static int write_text_to(const char *path, const char *text)
{
    if (!path) {
        fputs(text, stdout);
        return 0;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "grapnel: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* The HTML report (include/grapnel/report_html.h); prints the error. */
static int write_html_report(int32_t kind, gn_graph *before, gn_graph *after, const gn_report *r, const char *title,
                             const char *bisect_pass, const char *path)
{
    gn_html_params hp;
    gn_html_params_init(&hp);
    hp.kind = kind;
    hp.title = title;
    hp.report = r;
    hp.bisect_pass = bisect_pass;
    char err[1024];
    if (gn_report_write_html(before, after, &hp, path, err, sizeof err) != GN_OK) {
        fprintf(stderr, "grapnel: HTML report: %s\n", err);
        return 1;
    }
    return 0;
}

/* The JSON report with "schema", "command" and the options in force ahead of
 * the library's own keys (gn_report_to_json). */
static int write_json_report(const char *path, const char *report, const opt_args *a, const gn_options *o,
                             const char *sig)
{
    FILE *f = path ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "grapnel: %s: %s\n", path, strerror(errno));
        return 1;
    }
    gn_json j;
    gn_json_init(&j, f);
    gn_json_header(&j, "optimize");
    gn_json_key(&j, "input");
    gn_json_str(&j, a->in);
    gn_json_key(&j, "output");
    gn_json_str(&j, a->out);
    gn_json_key(&j, "optimizer");
    char *text = NULL;
    if (gn_options_to_string(o, &text) != GN_OK || !gn_json_pyliteral(&j, text)) gn_json_null(&j);
    gn_free(text);
    gn_json_key(&j, "target");
    gn_json_str(&j, a->target ? a->target : "cpu");
    gn_json_key(&j, "fetches");
    gn_json_strs(&j, a->fetches, (size_t)a->n_fetches);
    gn_json_key(&j, "feeds");
    gn_json_strs(&j, a->feeds, (size_t)a->n_feeds);
    gn_json_key(&j, "signature");
    gn_json_str(&j, sig);
    gn_json_key(&j, "tags");
    gn_json_str(&j, a->tags);
    gn_json_key(&j, "disable");
    gn_json_str(&j, a->disable);
    gn_json_key(&j, "dump_dir");
    gn_json_str(&j, a->dump_dir);
    gn_json_key(&j, "verify");
    gn_json_bool(&j, a->verify);
    gn_json_end(&j, '}');
    /* the report's own keys follow in the same object */
    const char *rest = strchr(report, '{');
    fprintf(f, ",\n  %s", rest ? rest + 1 : "}\n");
    size_t n = strlen(report);
    if (n && report[n - 1] != '\n') fputc('\n', f);
    int rc = 0;
    if (path ? fclose(f) != 0 : fflush(f) != 0) {
        fprintf(stderr, "grapnel: %s: %s\n", path ? path : "stdout", strerror(errno));
        rc = 1;
    }
    return rc;
}

static gn_format out_format(const char *out)
{
    size_t n = strlen(out);
    if (n >= 6 && strcmp(out + n - 6, ".pbtxt") == 0) return GN_FORMAT_TEXT;
    return GN_FORMAT_BINARY;
}

/* --target TEXT into t (default cpu); prints the error. */
static int parse_target(const char *cmd, const char *text, gn_target *t)
{
    char err[512];
    if (gn_target_parse(text ? text : "cpu", t, err, sizeof err) != GN_OK) {
        fprintf(stderr, "grapnel %s: --target: %s\n", cmd, err);
        return EXIT_USAGE;
    }
    return 0;
}

/* OUT names a SavedModel directory unless it ends in .pb or .pbtxt. */
static bool out_is_dir(const char *out)
{
    size_t n = strlen(out);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) return true;
    return !((n >= 3 && strcmp(out + n - 3, ".pb") == 0) || (n >= 6 && strcmp(out + n - 6, ".pbtxt") == 0));
}

/* A SavedModel input: *g becomes the frozen graph of the signature, and
 * without --fetch/--feed the signature's outputs and inputs are the fetches and
 * feeds (their names go to names, owned by the caller), and, as "key=tensor",
 * the SavedModel's signature arguments when OUT is one (the keys kept). */
static int freeze_input(const char *cmd, opt_args *a, gn_graph **g, char ***names, const char **sig_out)
{
    const char *sig = a->signature ? a->signature : gn_graph_default_signature(*g);
    size_t n_in = 0, n_out = 0;
    if (gn_graph_signature_args(*g, sig, 0, &n_in) != GN_OK || gn_graph_signature_args(*g, sig, 1, &n_out) != GN_OK) {
        fprintf(stderr, "grapnel %s: %s\n", cmd, gn_graph_errmsg(*g));
        return 1;
    }
    *names = calloc(4 * (n_in + n_out) + 3, sizeof **names);
    if (!*names) return 1;
    /* the key and the tags outlive the graph they come from (freed below) */
    size_t k = 0;
    if (!((*names)[k++] = strdup(sig)) || !((*names)[k++] = strdup(gn_graph_tags(*g)))) return 1;
    *sig_out = (*names)[0];
    a->save_tags = (*names)[1][0] ? (*names)[1] : NULL;
    a->save_feeds = calloc(n_in + 1, sizeof *a->save_feeds);
    a->save_fetches = calloc(n_out + 1, sizeof *a->save_fetches);
    if (!a->save_feeds || !a->save_fetches) return 1;
    /* the feed and fetch arrays were sized for the command line; a signature
     * can name more tensors than that */
    const char **fe = realloc(a->feeds, ((size_t)a->n_feeds + 3 * n_in + 1) * sizeof *fe);
    if (fe) a->feeds = fe;
    const char **ft = realloc(a->fetches, ((size_t)a->n_fetches + 3 * n_out + 1) * sizeof *ft);
    if (ft) a->fetches = ft;
    if (!fe || !ft) return 1;
    for (int32_t o = 0; o <= 1; o++) {
        size_t n = o ? n_out : n_in;
        bool want = o ? a->n_fetches == 0 : a->n_feeds == 0;
        for (size_t j = 0; want && j < n; j++) {
            gn_signature_arg arg;
            if (gn_graph_signature_arg(*g, sig, o, j, &arg) != GN_OK || !((*names)[k] = strdup(arg.tensor))) return 1;
            if (o) a->fetches[a->n_fetches++] = (*names)[k];
            else a->feeds[a->n_feeds++] = (*names)[k];
            k++;
            /* a key with '=' cannot be given so: the tensor's name is its key then;
             * a sparse argument is its values, indices and dense shape */
            const char *ind = NULL, *shp = NULL;
            if (gn_graph_signature_arg_sparse(*g, sig, o, j, &ind, &shp) != GN_OK) return 1;
            size_t len = strlen(arg.key) + strlen(arg.tensor) + (ind ? strlen(ind) + strlen(shp) + 2 : 0) + 2;
            if (!((*names)[k] = malloc(len))) return 1;
            snprintf((*names)[k], len, "%s%s%s%s%s%s%s", strchr(arg.key, '=') ? "" : arg.key,
                     strchr(arg.key, '=') ? "" : "=", arg.tensor, ind ? "," : "", ind ? ind : "", ind ? "," : "",
                     shp ? shp : "");
            if (o) a->save_fetches[a->n_save_fetches++] = (*names)[k];
            else a->save_feeds[a->n_save_feeds++] = (*names)[k];
            k++;
            /* the sparse argument's indices and dense shape are feeds (fetches) too */
            for (int p = 0; ind && p < 2; p++) {
                if (!((*names)[k] = strdup(p ? shp : ind))) return 1;
                if (o) a->fetches[a->n_fetches++] = (*names)[k];
                else a->feeds[a->n_feeds++] = (*names)[k];
                k++;
            }
        }
    }
    gn_graph *fz = NULL;
    if (gn_graph_freeze(*g, sig, &fz) != GN_OK) {
        fprintf(stderr, "grapnel %s: %s\n", cmd, gn_graph_errmsg(*g));
        gn_graph_free(fz);
        return 1;
    }
    gn_graph_free(*g);
    *g = fz;
    return 0;
}

int gn_cli_optimize(int argc, char **argv)
{
    opt_args a = {0};
    char **sig_names = NULL;
    int rc = parse_args(argc, argv, &a);
    if (rc) goto out;
    if (a.list) {
        char *text = NULL;
        if (gn_optimizer_list_passes(&text) != GN_OK) rc = 1;
        else fputs(text, stdout);
        gn_free(text);
        goto out;
    }
    if (!a.in || !a.out) {
        fprintf(stderr, "grapnel optimize: IN and -o OUT are required\n%s", optimize_usage);
        rc = EXIT_USAGE;
        goto out;
    }
    bool html = a.report && strcmp(a.report, "html") == 0;
    if (html && !a.report_file) {
        fprintf(stderr, "grapnel optimize: --report html needs --report-file FILE.html\n%s", optimize_usage);
        rc = EXIT_USAGE;
        goto out;
    }
    gn_target target;
    if ((rc = parse_target("optimize", a.target, &target))) goto out;
    gn_options o;
    if ((rc = load_options(&o, a.options))) goto out;
    if (a.disable) o.disabled_patterns = a.disable;
    if (a.checked) o.checked = 1;
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = a.tags;
    gn_graph *g = gn_cli_load(NULL, a.in, &lo);
    if (!g) {
        rc = 1;
        goto out;
    }
    const char *sig = NULL;
    if (gn_cli_is_savedmodel(g)) {
        if (freeze_input("optimize", &a, &g, &sig_names, &sig)) {
            gn_graph_free(g);
            rc = 1;
            goto out;
        }
    } else if (a.signature) {
        fprintf(stderr, "grapnel optimize: --signature: %s is not a SavedModel\n", a.in);
        gn_graph_free(g);
        rc = EXIT_USAGE;
        goto out;
    }
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.target = target;
    p.fetches = a.fetches;
    p.n_fetches = (size_t)a.n_fetches;
    p.feeds = a.feeds;
    p.n_feeds = (size_t)a.n_feeds;
    p.dump_dir = a.dump_dir;
    /* no report printed: the passes' records only (the float16 check below) */
    p.no_report_events = !html && !a.report && !a.report_file;
    gn_report *r = NULL;
    gn_graph *before = NULL;
    if (html && gn_graph_clone(g, &before) != GN_OK) {
        fprintf(stderr, "grapnel optimize: out of memory keeping the graph for the HTML report\n");
        gn_graph_free(g);
        rc = 1;
        goto out;
    }
    size_t n_before = gn_graph_node_count(g);
    bool progress = gn_cli_progress_on(n_before > 100000);
    double t0 = gn_cli_now();
    if (progress) fprintf(stderr, "grapnel: optimizing %zu nodes...\n", n_before);
    gn_status s = gn_optimize(g, &o, &p, &r);
    if (progress)
        fprintf(stderr, "grapnel: optimized in %.2f s: %zu -> %zu nodes\n", gn_cli_now() - t0, n_before,
                gn_graph_node_count(g));
    if (html) {
        rc |= write_html_report(GN_HTML_OPTIMIZE, before, g, r, a.in, NULL, a.report_file);
        gn_graph_free(before);
    } else if (r && (a.report || a.report_file)) {
        char *text = NULL;
        bool json = a.report && strcmp(a.report, "json") == 0;
        if ((json ? gn_report_to_json(r, &text) : gn_report_to_text(r, &text)) == GN_OK)
            rc |= json ? write_json_report(a.report_file, text, &a, &o, sig) : write_text_to(a.report_file, text);
        gn_free(text);
    }
    /* float16 inside (the auto_mixed_precision pass changed the graph): --verify
     * compares at float16's level, as tools/zoo_check.sh does, unless --tol says */
    bool amp = false;
    for (size_t i = 0; r && i < gn_report_pass_count(r); i++)
        if (strcmp(gn_report_pass_name(r, i), "auto_mixed_precision") == 0 && gn_report_pass_changed(r, i)) amp = true;
    if (a.verify && !a.tol && amp) a.tol = "5e-2";
    gn_report_free(r);
    if (s != GN_OK) {
        fprintf(stderr, "grapnel: %s: %s\n", a.in, gn_graph_errmsg(g));
        gn_graph_free(g);
        rc = 1;
        goto out;
    }
    if (out_is_dir(a.out)) {
        /* a SavedModel: the serving signature from the fetches and feeds */
        gn_save_params sp;
        gn_save_params_init(&sp);
        sp.feeds = a.n_save_feeds ? a.save_feeds : a.feeds;
        sp.n_feeds = (size_t)(a.n_save_feeds ? a.n_save_feeds : a.n_feeds);
        sp.fetches = a.n_save_fetches ? a.save_fetches : a.fetches;
        sp.n_fetches = (size_t)(a.n_save_fetches ? a.n_save_fetches : a.n_fetches);
        sp.signature_key = sig;
        sp.tags = a.save_tags;
        if (gn_savedmodel_save(g, a.out, NULL, &sp) != GN_OK) {
            fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
            rc = 1;
        }
    } else if (gn_graph_save(g, a.out, out_format(a.out)) != GN_OK) {
        fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
        rc = 1;
    }
    gn_graph_free(g);
    if (!rc && a.verify) {
        /* grapnel verify IN OUT [--fetch ...] */
        char **vargv = calloc((size_t)(2 * a.n_fetches + 2 * a.n_feeds + 10), sizeof *vargv);
        if (!vargv) {
            rc = 1;
            goto out;
        }
        int k = 0;
        vargv[k++] = "verify";
        vargv[k++] = (char *)a.in;
        vargv[k++] = (char *)a.out;
        if (sig) {
            vargv[k++] = "--signature";
            vargv[k++] = (char *)sig;
        }
        if (a.tags) {
            vargv[k++] = "--tag";
            vargv[k++] = (char *)a.tags;
        }
        for (int i = 0; i < a.n_fetches; i++) {
            vargv[k++] = "--fetch";
            vargv[k++] = (char *)a.fetches[i];
        }
        /* the tensors optimized as fed: fed there (the graph cut as optimized), from
         * the file given as --feed NAME=FILE.npy, else random values */
        char **feed_args = calloc((size_t)a.n_feeds + 1, sizeof *feed_args);
        for (int i = 0; feed_args && i < a.n_feeds; i++) {
            const char *file = i < a.n_user_feeds ? a.feed_files[i] : NULL;
            size_t n = strlen(a.feeds[i]) + (file ? strlen(file) + 2 : 1);
            if (!(feed_args[i] = malloc(n))) break;
            if (file) snprintf(feed_args[i], n, "%s=%s", a.feeds[i], file);
            else snprintf(feed_args[i], n, "%s", a.feeds[i]);
            vargv[k++] = "--feed";
            vargv[k++] = feed_args[i];
        }
        if (a.tol) {
            vargv[k++] = "--tol";
            vargv[k++] = (char *)a.tol;
        }
        rc = feed_args && (a.n_feeds == 0 || feed_args[a.n_feeds - 1]) ? (gn_cli_verify(k, vargv) ? 1 : 0) : 1;
        for (int i = 0; feed_args && i < a.n_feeds; i++) free(feed_args[i]);
        free(feed_args);
        free(vargv);
    }
out:
    if (sig_names)
        for (size_t i = 0; sig_names[i]; i++) free(sig_names[i]);
    free(sig_names);
    free(a.fetches);
    free(a.feeds);
    free(a.feed_files);
    free(a.save_fetches);
    free(a.save_feeds);
    return rc;
}

/* grapnel verify A B --bisect [--options ...] [verify options]: optimizes A
 * with a dump after every pass, then verifies A against each dump in order
 * and names the first pass whose output disagrees. */
static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

int gn_cli_verify_bisect(int argc, char **argv)
{
    const char *options = NULL, *a_path = NULL, *tags = NULL, *target_text = NULL, *signature = NULL;
    const char *report = NULL, *report_file = NULL;
    char **rest = calloc((size_t)argc + 4, sizeof *rest);
    if (!rest) return 1;
    int nrest = 0, npos = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bisect") == 0) continue;
        if (strcmp(argv[i], "--options") == 0 && i + 1 < argc) {
            options = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
            target_text = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) {
            report = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--report-file") == 0 && i + 1 < argc) {
            report_file = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--signature") == 0 && i + 1 < argc) signature = argv[i + 1];
        if ((strcmp(argv[i], "--tag") == 0 || strcmp(argv[i], "--tags") == 0) && i + 1 < argc) tags = argv[i + 1];
        if (argv[i][0] != '-' && npos < 2 && (i == 1 || argv[i - 1][0] != '-' || strchr(argv[i - 1], '=') ||
                                              strcmp(argv[i - 1], "--bisect") == 0)) {
            if (npos++ == 0) a_path = argv[i];
            continue; /* B is ignored: the pipeline is re-run on A */
        }
        rest[nrest++] = argv[i];
    }
    if (!a_path) {
        fprintf(stderr, "grapnel verify --bisect: model A is required\n");
        free(rest);
        return EXIT_USAGE;
    }
    if ((report && strcmp(report, "html") != 0) || (report && !report_file) || (!report && report_file)) {
        fprintf(stderr, "grapnel verify --bisect: the report is --report html --report-file FILE.html\n");
        free(rest);
        return EXIT_USAGE;
    }
    gn_target target;
    if (parse_target("verify", target_text, &target)) {
        free(rest);
        return EXIT_USAGE;
    }
    gn_options o;
    int orc = load_options(&o, options);
    if (orc) {
        free(rest);
        return orc;
    }
    const char *tmpdir = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/grapnel-bisect-XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "grapnel verify --bisect: cannot create a temporary directory: %s\n", strerror(errno));
        free(rest);
        return 1;
    }
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = tags;
    gn_graph *g = NULL;
    gn_report *rep = NULL;
    int rc = 0;
    if (gn_graph_load(a_path, &lo, &g) != GN_OK) {
        fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
        rc = 1;
    } else {
        gn_cli_graph_env(g);
    }
    if (!rc && gn_cli_is_savedmodel(g)) {
        /* the frozen signature is what is optimized (and what verify runs) */
        gn_graph *fz = NULL;
        if (gn_graph_freeze(g, signature, &fz) != GN_OK) {
            fprintf(stderr, "grapnel verify: %s\n", gn_graph_errmsg(g));
            rc = 1;
        }
        gn_graph_free(g);
        g = fz;
    }
    if (!rc) {
        gn_optimize_params p;
        gn_optimize_params_init(&p);
        p.target = target;
        p.dump_dir = dir;
        if (gn_optimize(g, &o, &p, report ? &rep : NULL) != GN_OK) {
            fprintf(stderr, "grapnel: %s: %s\n", a_path, gn_graph_errmsg(g));
            rc = 1;
        }
    }
    gn_graph_free(g);
    char **files = NULL;
    size_t nfiles = 0;
    if (!rc) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char **nf = realloc(files, (nfiles + 1) * sizeof *nf);
            if (!nf) break;
            files = nf;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            files[nfiles] = malloc(n);
            if (!files[nfiles]) break;
            snprintf(files[nfiles++], n, "%s/%s", dir, e->d_name);
        }
        if (d) closedir(d);
        qsort(files, nfiles, sizeof *files, cmp_str);
    }
    const char *culprit = NULL;
    size_t culprit_at = 0;
    for (size_t i = 0; !rc && i < nfiles && !culprit; i++) {
        const char *base = strrchr(files[i], '/') + 1;
        if (strstr(base, "_input.")) continue; /* the graph before the first pass */
        printf("== after %s\n", base);
        fflush(stdout);
        char **vargv = calloc((size_t)nrest + 4, sizeof *vargv);
        if (!vargv) {
            rc = 1;
            break;
        }
        int k = 0;
        vargv[k++] = "verify";
        vargv[k++] = (char *)a_path;
        vargv[k++] = files[i];
        for (int j = 0; j < nrest; j++) vargv[k++] = rest[j];
        int v = gn_cli_verify(k, vargv);
        free(vargv);
        if (v == 2) rc = EXIT_USAGE;
        else if (v != 0) {
            culprit = base;
            culprit_at = i;
        }
    }
    if (!rc && report) {
        /* the graphs before and after the first disagreeing pass (else before and after all of them) */
        size_t ia = culprit ? culprit_at : nfiles - 1, ib = culprit && culprit_at > 0 ? culprit_at - 1 : 0;
        gn_graph *gb = NULL, *ga = NULL;
        char name[256] = "";
        if (culprit) {
            snprintf(name, sizeof name, "%s", culprit);
            char *dot = strrchr(name, '.');
            if (dot) *dot = 0;
        }
        if (nfiles == 0 || gn_graph_load(files[ib], NULL, &gb) != GN_OK || gn_graph_load(files[ia], NULL, &ga) != GN_OK) {
            fprintf(stderr, "grapnel verify --bisect: HTML report: %s\n",
                    nfiles == 0 ? "the optimizer wrote no graph" : gn_graph_errmsg(ga ? ga : gb));
            rc = 1;
        } else {
            rc |= write_html_report(GN_HTML_BISECT, gb, ga, rep, a_path, culprit ? name : NULL, report_file);
        }
        gn_graph_free(gb);
        gn_graph_free(ga);
    }
    gn_report_free(rep);
    if (!rc) {
        if (culprit) {
            printf("first disagreeing pass: %s\n", culprit);
            rc = 1;
        } else {
            printf("every pass agrees with %s (%zu graphs checked)\n", a_path, nfiles);
        }
    }
    for (size_t i = 0; i < nfiles; i++) {
        unlink(files[i]);
        free(files[i]);
    }
    free(files);
    rmdir(dir);
    free(rest);
    return rc;
}
