/* grapnel: the command-line tool. Exit codes: 0 ok, 1 failure, 2 usage.
 * Uses only the public API (include/grapnel). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "grapnel/grapnel.h"

typedef struct command {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
} command;

static const command *find_command(const char *name);

static int cmd_verify(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--bisect") == 0) return gn_cli_verify_bisect(argc, argv);
    return gn_cli_verify(argc, argv);
}

/* ---- common option parsing ---------------------------------------------------------- */
typedef struct common_opts {
    const char *tags;
    gn_format in_format;
    int no_validate;
} common_opts;

/* Handles options shared by commands that load a model; returns 1 when argv[*i]
 * was consumed, 0 when not ours, -1 on a usage error. */
static int parse_common(int argc, char **argv, int *i, common_opts *o)
{
    const char *a = argv[*i];
    if (strcmp(a, "--tag") == 0 || strcmp(a, "--tags") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "grapnel: %s needs a value\n", a);
            return -1;
        }
        o->tags = argv[++*i];
        return 1;
    }
    if (strncmp(a, "--tag=", 6) == 0) {
        o->tags = a + 6;
        return 1;
    }
    if (strcmp(a, "--input-format") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "grapnel: %s needs a value\n", a);
            return -1;
        }
        const char *v = argv[++*i];
        if (strcmp(v, "pb") == 0 || strcmp(v, "binary") == 0) o->in_format = GN_FORMAT_BINARY;
        else if (strcmp(v, "pbtxt") == 0 || strcmp(v, "text") == 0) o->in_format = GN_FORMAT_TEXT;
        else if (strcmp(v, "auto") == 0) o->in_format = GN_FORMAT_AUTO;
        else {
            fprintf(stderr, "grapnel: --input-format: '%s' is not one of auto, pb, pbtxt\n", v);
            return -1;
        }
        return 1;
    }
    if (strcmp(a, "--no-validate") == 0) {
        o->no_validate = 1;
        return 1;
    }
    return 0;
}

static gn_graph *load_or_report(const char *path, const common_opts *co)
{
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = co->tags;
    lo.format = co->in_format;
    lo.validate = !co->no_validate;
    return gn_cli_load(NULL, path, &lo);
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "grapnel %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", find_command(cmd)->usage);
    return EXIT_USAGE;
}

static int write_text(const char *path, const char *text)
{
    if (!path || strcmp(path, "-") == 0) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return 1;
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int rc = 0;
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "grapnel: %s: %s\n", path, strerror(errno));
        remove(tmp);
        rc = 1;
    }
    free(tmp);
    return rc;
}

/* ---- inspect ---------------------------------------------------------------------- */
static int is_input_op(const char *op)
{
    return !strcmp(op, "Placeholder") || !strcmp(op, "PlaceholderV2") || !strcmp(op, "PlaceholderWithDefault") ||
           !strcmp(op, "_Arg");
}

typedef struct op_count {
    const char *op;
    size_t n;
} op_count;

static int cmp_op_count(const void *x, const void *y)
{
    const op_count *a = x, *b = y;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    return strcmp(a->op, b->op);
}

typedef struct node_ref {
    const char *name;
    size_t index;
} node_ref;

static int cmp_node_ref(const void *x, const void *y)
{
    return strcmp(((const node_ref *)x)->name, ((const node_ref *)y)->name);
}

/* The graph part of `inspect --json`: the same facts as the text. */
static int inspect_json_graph(gn_json *j, gn_graph *g, int shapes)
{
    size_t n = gn_graph_node_count(g);
    gn_graph_infer_shapes(g);   /* partial results still give the placeholders' shapes */
    op_count *ops = calloc(n + 1, sizeof *ops);
    unsigned char *used = calloc(n + 1, 1);
    node_ref *by_name = calloc(n + 1, sizeof *by_name);
    if (!ops || !used || !by_name) {
        free(ops);
        free(used);
        free(by_name);
        return 1;
    }
    for (size_t i = 0; i < n; i++) by_name[i] = (node_ref){gn_graph_node_name(g, i), i};
    qsort(by_name, n, sizeof *by_name, cmp_node_ref);
    size_t nops = 0, edges = 0, ctrl = 0;
    char buf[4096];
    for (size_t i = 0; i < n; i++) {
        const char *op = gn_graph_node_op(g, i);
        size_t k = 0;
        while (k < nops && strcmp(ops[k].op, op)) k++;
        if (k == nops) ops[nops++] = (op_count){op, 0};
        ops[k].n++;
        for (size_t e = 0; e < gn_graph_node_input_count(g, i); e++) {
            if (gn_graph_node_input(g, i, e, buf, sizeof buf) != GN_OK) continue;
            if (buf[0] == '^') {
                ctrl++;
                node_ref key = {buf + 1, 0}, *hit = bsearch(&key, by_name, n, sizeof *by_name, cmp_node_ref);
                if (hit && !used[hit->index]) used[hit->index] = 2;   /* an anchor, unless data reads it too */
                continue;
            }
            edges++;
            char *colon = strrchr(buf, ':');
            if (colon) *colon = 0;
            node_ref key = {buf, 0}, *hit = bsearch(&key, by_name, n, sizeof *by_name, cmp_node_ref);
            if (hit) used[hit->index] = 1;
        }
    }
    qsort(ops, nops, sizeof *ops, cmp_op_count);
    gn_json_key(j, "nodes");
    gn_json_uint(j, n);
    gn_json_key(j, "edges");
    gn_json_begin(j, '{');
    gn_json_key(j, "data");
    gn_json_uint(j, edges);
    gn_json_key(j, "control");
    gn_json_uint(j, ctrl);
    gn_json_end(j, '}');
    gn_json_key(j, "ops");
    gn_json_begin(j, '{');
    for (size_t k = 0; k < nops; k++) {
        gn_json_key(j, ops[k].op);
        gn_json_uint(j, ops[k].n);
    }
    gn_json_end(j, '}');
    int64_t dims[GN_TENSOR_MAX_DIMS];
    gn_json_key(j, "inputs");
    gn_json_begin(j, '[');
    for (size_t i = 0; i < n; i++) {
        if (!is_input_op(gn_graph_node_op(g, i))) continue;
        gn_json_begin(j, '{');
        gn_json_key(j, "name");
        gn_json_str(j, gn_graph_node_name(g, i));
        gn_json_key(j, "op");
        gn_json_str(j, gn_graph_node_op(g, i));
        int32_t dt = gn_graph_node_output_dtype(g, i, 0);
        gn_json_key(j, "dtype");
        gn_json_str(j, dt ? gn_dtype_name(dt) : NULL);
        gn_json_key(j, "shape");
        gn_json_shape(j, gn_graph_node_output_shape(g, i, 0, dims, GN_TENSOR_MAX_DIMS), dims);
        gn_json_end(j, '}');
    }
    gn_json_end(j, ']');
    /* as gn_graph_inspect and `grapnel run`'s default fetches: nodes nothing
     * consumes, anchors (only control edges consume them) when there are no others */
    gn_json_key(j, "outputs");
    gn_json_begin(j, '[');
    for (int pass = 0, found = 0; pass < 2 && !found; pass++)
        for (size_t i = 0; i < n; i++)
            if ((!used[i] || (used[i] == 2 && pass == 1)) && strcmp(gn_graph_node_op(g, i), "NoOp") &&
                gn_graph_node_output_count(g, i) != 0 && !is_input_op(gn_graph_node_op(g, i))) {
                gn_json_str(j, gn_graph_node_name(g, i));
                found = 1;
            }
    gn_json_end(j, ']');
    gn_json_key(j, "functions");
    gn_json_begin(j, '[');
    for (size_t i = 0; i < gn_graph_function_count(g); i++) {
        gn_json_begin(j, '{');
        gn_json_key(j, "name");
        gn_json_str(j, gn_graph_function_name(g, i));
        gn_json_key(j, "nodes");
        gn_json_uint(j, gn_graph_function_node_count(g, i));
        gn_json_end(j, '}');
    }
    gn_json_end(j, ']');
    if (shapes) {
        gn_json_key(j, "node_outputs");
        gn_json_begin(j, '[');
        for (size_t i = 0; i < n; i++) {
            gn_json_begin(j, '{');
            gn_json_key(j, "name");
            gn_json_str(j, gn_graph_node_name(g, i));
            gn_json_key(j, "op");
            gn_json_str(j, gn_graph_node_op(g, i));
            gn_json_key(j, "outputs");
            gn_json_begin(j, '[');
            for (int32_t k = 0; k < gn_graph_node_output_count(g, i); k++) {
                int32_t dt = gn_graph_node_output_dtype(g, i, k);
                gn_json_begin(j, '{');
                gn_json_key(j, "dtype");
                gn_json_str(j, dt ? gn_dtype_name(dt) : NULL);
                gn_json_key(j, "shape");
                gn_json_shape(j, gn_graph_node_output_shape(g, i, k, dims, GN_TENSOR_MAX_DIMS), dims);
                gn_json_end(j, '}');
            }
            gn_json_end(j, ']');
            gn_json_end(j, '}');
        }
        gn_json_end(j, ']');
    }
    free(ops);
    free(used);
    free(by_name);
    return 0;
}

static int cmd_inspect(int argc, char **argv)
{
    common_opts co = {0};
    uint32_t flags = 0;
    int json = 0, sigs_only = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        int r = parse_common(argc, argv, &i, &co);
        if (r < 0) return EXIT_USAGE;
        if (r) continue;
        if (strcmp(argv[i], "--shapes") == 0) flags |= GN_INSPECT_SHAPES;
        else if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--signatures") == 0) sigs_only = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return gn_cli_unknown_option("inspect", argv[i]);
        else if (path) return usage_error("inspect", "unexpected argument '%s'", argv[i]);
        else path = argv[i];
    }
    if (!path) return usage_error("inspect", "%s", "a model path is required");
    gn_graph *g = load_or_report(path, &co);
    if (!g) return 1;
    int saved = gn_cli_is_savedmodel(g), rc = 0;
    if (sigs_only && !saved) {
        fprintf(stderr, "grapnel inspect: --signatures: %s is not a SavedModel\n", path);
        gn_graph_free(g);
        return 1;
    }
    if (json) {
        gn_json j;
        gn_json_init(&j, stdout);
        gn_json_header(&j, "inspect");
        gn_json_key(&j, "model");
        gn_json_str(&j, path);
        gn_json_key(&j, "tags");
        gn_json_str(&j, co.tags);
        gn_json_key(&j, "shapes");
        gn_json_bool(&j, flags & GN_INSPECT_SHAPES);
        gn_json_key(&j, "signatures_only");
        gn_json_bool(&j, sigs_only);
        gn_json_key(&j, "validate");
        gn_json_bool(&j, !co.no_validate);
        gn_json_end(&j, '}');
        gn_json_key(&j, "savedmodel");
        gn_json_bool(&j, saved);
        if (saved) rc = gn_cli_savedmodel_json(&j, g, !sigs_only);
        if (!sigs_only && !rc) rc = inspect_json_graph(&j, g, flags & GN_INSPECT_SHAPES);
        gn_json_end(&j, '}');
    } else {
        if (saved) rc = gn_cli_savedmodel_inspect_head(g, stdout);
        char *text = NULL;
        if (!sigs_only && !rc) {
            if (gn_graph_inspect(g, flags, &text) != GN_OK) {
                fprintf(stderr, "grapnel: %s: %s\n", path, gn_graph_errmsg(g));
                rc = 1;
            } else {
                fputs(text, stdout);
                if (saved) rc = gn_cli_savedmodel_inspect_tail(g, stdout);
            }
        }
        gn_free(text);
    }
    if (fflush(stdout) != 0) rc = 1;
    gn_graph_free(g);
    return rc;
}

/* ---- convert ---------------------------------------------------------------------- */
static int cmd_convert(int argc, char **argv)
{
    common_opts co = {0};
    const char *in = NULL, *out = NULL;
    gn_format fmt = GN_FORMAT_AUTO;
    for (int i = 1; i < argc; i++) {
        int r = parse_common(argc, argv, &i, &co);
        if (r < 0) return EXIT_USAGE;
        if (r) continue;
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "pb") == 0) fmt = GN_FORMAT_BINARY;
            else if (strcmp(v, "pbtxt") == 0) fmt = GN_FORMAT_TEXT;
            else return usage_error("convert", "--format: '%s' is not one of pb, pbtxt", v);
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            if (out) return usage_error("convert", "%s", "more than one output");
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return gn_cli_unknown_option("convert", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            return usage_error("convert", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!in || !out) return usage_error("convert", "%s", "IN and OUT are required");
    if (fmt == GN_FORMAT_AUTO) {
        size_t n = strlen(out);
        if (n >= 6 && strcmp(out + n - 6, ".pbtxt") == 0) fmt = GN_FORMAT_TEXT;
        else if (n >= 3 && strcmp(out + n - 3, ".pb") == 0) fmt = GN_FORMAT_BINARY;
        else return usage_error("convert", "cannot tell the format of '%s' (use .pb or .pbtxt, or --format)", out);
    }
    gn_graph *g = load_or_report(in, &co);
    if (!g) return 1;
    gn_status s = gn_graph_save(g, out, fmt);
    int rc = 0;
    if (s != GN_OK) {
        fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
        rc = 1;
    }
    gn_graph_free(g);
    return rc;
}

/* ---- dot -------------------------------------------------------------------------- */
static int cmd_dot(int argc, char **argv)
{
    common_opts co = {0};
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        int r = parse_common(argc, argv, &i, &co);
        if (r < 0) return EXIT_USAGE;
        if (r) continue;
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) return gn_cli_unknown_option("dot", argv[i]);
        else if (!in) in = argv[i];
        else return usage_error("dot", "unexpected argument '%s'", argv[i]);
    }
    if (!in) return usage_error("dot", "%s", "a model path is required");
    gn_graph *g = load_or_report(in, &co);
    if (!g) return 1;
    char *text = NULL;
    int rc = 0;
    if (gn_graph_to_dot(g, &text) != GN_OK) {
        fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
        rc = 1;
    } else {
        rc = write_text(out, text);
    }
    gn_free(text);
    gn_graph_free(g);
    return rc;
}

/* ---- table ------------------------------------------------------------------------ */
#define MODEL_OPTS                                                                                  \
    "  --tag TAGS           SavedModel: the MetaGraphDef with this tag set (comma-separated)\n"    \
    "  --input-format F     auto (default: from the content), pb or pbtxt\n"                       \
    "  --no-validate        skip validation after loading\n"

static const command commands[] = {
    {"inspect", "summarize a model: nodes, ops, dtypes, inputs, outputs, functions",
     "usage: grapnel inspect MODEL [--shapes] [--signatures] [--json] [--tag TAGS]\n"
     "  MODEL is a .pb, .pbtxt (optionally .gz) or a SavedModel directory. A SavedModel's\n"
     "  tags, signatures and init op come first, its variables and assets last.\n"
     "  --shapes             also infer and print every node's output dtypes and shapes\n"
     "  --signatures         SavedModel: only the tags, signatures and init op\n"
     "  --json               one JSON document (docs/cli_json.md)\n" MODEL_OPTS,
     cmd_inspect},
    {"convert", "convert between binary and text GraphDef",
     "usage: grapnel convert IN OUT [--format pb|pbtxt] [--tag TAGS]\n"
     "  The output format comes from OUT's extension (.pb or .pbtxt) unless --format is given.\n"
     "  The file is written atomically; on failure nothing is left at OUT.\n" MODEL_OPTS,
     cmd_convert},
    {"dot", "write the graph in Graphviz dot form",
     "usage: grapnel dot MODEL [-o OUT.dot] [--tag TAGS]\n"
     "  Writes to standard output unless -o is given.\n" MODEL_OPTS,
     cmd_dot},
    {"run", "run a graph on the CPU: feeds from .npy, fetches printed or written to .npy",
     "usage: grapnel run MODEL [--feed NAME[=FILE.npy] ...] [--fetch NAME[=FILE.npy] ...]\n"
     "                   [--seed S] [--dim N] [--shape NAME=DIMS ...] [--tag TAGS]\n"
     "  NAME is a tensor, 'node' or 'node:k'. Feeding any tensor cuts the graph there.\n"
     "  --feed NAME=FILE.npy   feed a tensor from a .npy file; a bare NAME feeds it random values\n"
     "                         (of its inferred dtype and shape; --shape says otherwise)\n"
     "  --fetch NAME[=FILE]    fetch a tensor: print it (numpy style) or write it as .npy;\n"
     "                         default: the graph's outputs (nodes nothing consumes; docs/cli.md)\n"
     "  --seed S               seed of the random feeds and of random ops (default 0)\n"
     "  --dim N                size of unknown placeholder dimensions in random feeds (default 1)\n"
     "  --shape NAME=DIMS      shape of a random feed, e.g. x=2x784 (for placeholders without one);\n"
     "                         an empty DIMS (x=) or 'scalar' makes a scalar\n"
     "  --tag TAGS             SavedModel: the MetaGraphDef with this tag set\n"
     "  --backend NAME         cpu (default) or cuda\n"
     "  --signature NAME       SavedModel: freeze and run this signature (default serving_default);\n"
     "                         --feed/--input and --fetch then also take its input and output keys,\n"
     "                         and without --fetch every output is fetched, labelled by its key\n"
     "  --input KEY=FILE.npy   the same as --feed\n"
     "  --output-dir DIR       with a signature: write each output as DIR/<key>.npy\n"
     "  --repeat N             time N runs (after the warmup): latency min, median, p90, max and\n"
     "                         throughput on stderr (in the document with --json)\n"
     "  --warmup K             untimed runs before the timed ones (default 1 with --repeat)\n"
     "  --json                 one JSON document: the options, every fetch (values unless written\n"
     "                         to a file) and the timing (docs/cli_json.md)\n"
     "  --memory-limit SIZE    the most one tensor may take, e.g. 4G, 512M (default: a quarter of\n"
     "                         physical memory; none: no limit)\n"
     "  --step-limit N         the most node executions per run, loop iterations included\n"
     "                         (default 268435456; none: no limit)\n"
     "  --time-limit T         wall-clock limit per run, e.g. 30s, 500ms, 2m (default none)\n"
     "  Placeholders not fed get random values: floats uniform in [-1, 1), integers in [0, 10).\n",
     gn_cli_run},
    {"verify", "run two graphs on the same inputs and compare their outputs",
     "usage: grapnel verify A B [--feed NAME[=FILE.npy] ...] [--fetch NAME ...] [--seed S] [--dim N]\n"
     "                      [--shape NAME=DIMS ...] [--tol X] [--tag TAGS]\n"
     "  Runs A and B on the same feeds (random ones are made once) with random ops seeded\n"
     "  alike, and prints, per fetch, the max absolute error and the relative L2 error of B\n"
     "  against A. Fetches default to A's outputs.\n"
     "  --backend NAME         A's backend, cpu (default) or cuda; --backend-b NAME: B's (default: A's),\n"
     "                         so `verify M M --backend cpu --backend-b cuda` compares two backends\n"
     "  --memory-limit SIZE, --step-limit N, --time-limit T  resource bounds of each run, as for run\n"
     "  --tol X                relative L2 tolerance (default by dtype: float32 1e-5, float16 1e-2;\n"
     "                         against an all-zero reference the absolute L2 error is used)\n"
     "  exit status: 0 all fetches match; 1 a fetch differs (integer and bool fetches must be\n"
     "  equal, NaNs in the same places) or either graph fails to run; 2 usage error\n"
     "  --bisect [--options TEXT|@FILE]  re-run the optimizer on A pass by pass and name the\n"
     "                         first pass whose output disagrees with A (B is not used)\n"
     "  --target T             with --bisect: the optimizer's target (cpu, gpu, gpu:sm_90, gpu:sm_90x4, auto)\n"
     "  --report html --report-file FILE.html  with --bisect: a page with the graphs before and after\n"
     "                         the first disagreeing pass and what it changed (docs/html_report.md)\n"
     "  --signature NAME       a SavedModel A (or B) is frozen at this signature (default serving_default)\n"
     "  --json                 one JSON document: the options and each fetch's errors (docs/cli_json.md)\n",
     cmd_verify},
    {"optimize", "rewrite a model with the optimizer passes (Grappler's pipeline)",
     "usage: grapnel optimize IN -o OUT [--options TEXT|@FILE] [--fetch NAME ...] [--feed NAME[=F.npy] ...]\n"
     "                        [--report text|json|html] [--report-file FILE] [--dump-dir DIR] [--verify [--tol X]]\n"
     "       grapnel optimize --list-passes\n"
     "  --options TEXT|@FILE  TensorFlow's optimizer dictionary, e.g. \"{'constant_folding': True}\",\n"
     "                        or key=value,...; @FILE: that text or a RewriterConfig (binary or text).\n"
     "                        GRAPNEL_OPTIONS in the environment is applied first\n"
     "  --fetch NAME          a tensor that must be computed (preserved); repeatable\n"
     "  --feed NAME[=FILE.npy]  a tensor supplied at run time (preserved); repeatable; --verify\n"
     "                        feeds it from FILE (random values without one)\n"
     "  --report text|json    print the report (to --report-file FILE when given); the JSON report\n"
     "                        carries schema, command and the options in force (docs/cli_json.md)\n"
     "  --report html         with --report-file FILE.html: one self-contained page, the graph before\n"
     "                        and after with every rewrite drawn on it (docs/html_report.md)\n"
     "  --dump-dir DIR        write the graph after every pass as NNNN_itK_<pass>.pbtxt\n"
     "  --disable IDS         comma-separated pattern ids (or pass ids) to turn off,\n"
     "                        e.g. arithmetic.remove_redundant_reshape,constfold\n"
     "  --verify              run input and result on the same random inputs (at the --feed tensors\n"
     "                        too); fail when they disagree\n"
     "  --tol X               --verify's relative L2 tolerance (default verify's: float32 1e-5; 5e-2\n"
     "                        when auto_mixed_precision changed the graph)\n"
     "  --checked             validate the graph after every pass (the 'checked' option; docs/hardening.md)\n"
     "  --list-passes         every pass with its option key and pattern ids\n"
     "  --target T            cpu (default), gpu, gpu:sm_90, gpu:sm_90x4 (four GPUs) or auto\n"
     "  --signature NAME      SavedModel IN: the signature frozen, then optimized with its outputs as\n"
     "                        fetches and inputs as feeds (default serving_default)\n"
     "  OUT ending in .pb/.pbtxt is a GraphDef; any other OUT a SavedModel directory (from a\n"
     "  SavedModel IN: the signature's key and its argument keys kept)\n",
     gn_cli_optimize},
    {"freeze", "freeze a SavedModel signature into a self-contained GraphDef",
     "usage: grapnel freeze DIR -o OUT.pb [--signature NAME] [--tag TAGS]\n"
     "  Variables become constants (values from DIR/variables), function calls are inlined, and the\n"
     "  graph is pruned to the signature's outputs; its feeds and fetches are the signature's tensors.\n"
     "  --signature NAME     default: serving_default (or the only signature)\n"
     "  -o OUT               .pb (binary) or .pbtxt (text)\n"
     "  --tag TAGS           the MetaGraphDef with this tag set (comma-separated)\n",
     gn_cli_freeze},
    {"save", "write a GraphDef or SavedModel as a SavedModel, with tf.saved_model.SaveOptions",
     "usage: grapnel save IN DIR [--feed NAME ...] [--fetch NAME ...] [--signature KEY] [--tag TAGS]\n"
     "                   [--save-options \"{...}\"] [--chunk-max-size BYTES]\n"
     "  IN is a GraphDef (.pb/.pbtxt) or a SavedModel directory; DIR must not exist or be empty.\n"
     "  --fetch NAME          a signature output (GraphDef input: required); repeatable\n"
     "  --feed NAME           a signature input (default: every Placeholder); repeatable\n"
     "  --signature KEY       the signature written from --feed/--fetch (default serving_default)\n"
     "  --tag TAGS            SavedModel input: the MetaGraphDef to load; the tags written\n"
     "  --save-options TEXT   SaveOptions as a Python dict, e.g.\n"
     "                        \"{'save_debug_info': True, 'namespace_whitelist': ['Custom']}\"\n"
     "  --chunk-max-size BYTES  with experimental_image_format: the size above which the\n"
     "                        proto splitter chunks (default 1 GiB, TensorFlow's limit)\n"
     "  On failure nothing is left at DIR.\n",
     gn_cli_save},
    {"segment", "replace supported subgraphs with engine ops, as TF-TRT (ConversionParams)",
     "usage: grapnel segment IN -o OUT [--params TEXT] [--backend cpu|cuda] [--fetch NAME ...]\n"
     "                       [--feed NAME ...] [--dry-run] [--tag TAGS] [--calibrate F.npy ...]\n"
     "                       [--build-shape NAME=DIMS ...] [--saved-model] [--json]\n"
     "                       [--report html --report-file F]\n"
     "  --params TEXT   ConversionParams as a dictionary, e.g. \"{'precision_mode': 'FP16',\n"
     "                  'minimum_segment_size': 5}\" (fields and defaults of\n"
     "                  tf.experimental.tensorrt.ConversionParams)\n"
     "  --backend NAME  whose support decides the segments (default cpu)\n"
     "  --fetch/--feed  tensors that stay outside every engine (the graph's outputs and inputs)\n"
     "  --dry-run       print the segments and, per refused node, why; write nothing\n"
     "  --report html --report-file FILE.html  a page with the engines as coloured regions and\n"
     "                  each node left out with its reason (docs/html_report.md)\n"
     "  --json          the parameters, the report and the calibration and build results as\n"
     "                  one JSON document (docs/cli_json.md)\n"
     "  --calibrate F.npy ...  INT8 with use_calibration: one .npy per graph input (the --feed\n"
     "                  names in order, else the placeholders), batch after batch; each INT8\n"
     "                  engine's calibration table (tensor ranges) is stored in the engine op\n"
     "  --build-shape NAME=DIMS  build the engines ahead of time (TF-TRT's build()): runs the\n"
     "                  converted graph once with a zero tensor of shape DIMS (e.g. x=1x49x10;\n"
     "                  x= for a scalar) fed to NAME, one --build-shape per graph input\n"
     "  --saved-model   write OUT as a SavedModel directory (signature from --feed/--fetch);\n"
     "                  engines built ahead of time are saved in its\n"
     "                  assets/grapnel-engine.<engine> and reloaded by sessions on it\n"
     "  Prints the parameters, one line per engine with its members, one line per node not\n"
     "  converted with the reason, and the segments left native by minimum_segment_size.\n"
     "  Engines are built per set of input shapes when the graph runs (FP32, FP16, INT8\n"
     "  from the calibration table), up to maximum_cached_engines of them.\n",
     gn_cli_segment},
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

const char *gn_cli_usage(const char *cmd)
{
    const command *c = find_command(cmd);
    return c ? c->usage : NULL;
}

static void main_usage(FILE *f)
{
    fprintf(f, "usage: grapnel COMMAND [ARGS]   (grapnel COMMAND --help for details)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit status: 0 ok; 1 failure (a file, the model, a name it lacks, a mismatch);\n"
               "2 usage error (an unknown flag, a bad value, an unknown key in a dictionary)\n"
               "\nenvironment: GRAPNEL_OPTIONS (optimize's options, applied first); GRAPNEL_PROGRESS=1|0\n"
               "(progress lines on stderr always, never); GRAPNEL_FSYNC=1 (each file written is flushed\n"
               "to the disk before it is renamed into place: it survives a power loss)\n");
}

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* One process per command: memory the library frees (a pass's scratch and
     * snapshot, the text parser's tree) is kept for its next allocations, not
     * given back to the kernel and faulted in again. Blocks of 32 MiB or more
     * (a large model's weights) are still mapped on their own. The text
     * keras_imagenet graph: 1,360 -> 1,140 page faults, about 0.6 ms. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    if (argc < 2) {
        main_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        main_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("grapnel %s\n", gn_version());
        return 0;
    }
    const command *c = find_command(argv[1]);
    if (!c) {
        const char *names[sizeof commands / sizeof commands[0]];
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
        const char *near = gn_cli_suggest(argv[1], names, sizeof commands / sizeof commands[0]);
        fprintf(stderr, "grapnel: unknown command '%s'", argv[1]);
        if (near) fprintf(stderr, "; did you mean '%s'?", near);
        fputc('\n', stderr);
        main_usage(stderr);
        return EXIT_USAGE;
    }
    if (wants_help(argc - 1, argv + 1)) {
        fputs(c->usage, stdout);
        return 0;
    }
    return c->run(argc - 1, argv + 1);
}
