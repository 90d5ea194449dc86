/* The fuzz targets (targets.h). Harness code: it may keep a scratch
 * directory per process; the library itself keeps nothing. */
#include "targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"

#include "common/common.h"
#include "io/engine_store.h"
#include "io/bundle.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* A broken property: report it and abort, so the fuzzer keeps the input. */
static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* A failure must carry a message. */
static void need_msg(gn_status s, const char *msg, const char *call)
{
    if (s != GN_OK && (!msg || !*msg)) broken(call, "failed without a message");
}

/* The process's scratch directory (created once, removed by nobody: it is
 * under TMPDIR and holds a few small files). */
static const char *scratch(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/gnfuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) broken("mkdtemp", strerror(errno));
    }
    return dir;
}

static void put_file(const char *path, const uint8_t *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) broken("fopen", path);
    if (n && fwrite(d, 1, n, f) != n) broken("fwrite", path);
    if (fclose(f) != 0) broken("fclose", path);
}

/* NUL-terminated copy of the input (heap). */
static char *as_text(const uint8_t *d, size_t n)
{
    char *t = malloc(n + 1);
    if (!t) broken("malloc", NULL);
    memcpy(t, d, n);
    t[n] = 0;
    return t;
}

/* Splits d at GN_FUZZ_SPLIT into at most max parts; returns the count. */
static size_t split(const uint8_t *d, size_t n, const uint8_t **part, size_t *len, size_t max)
{
    const size_t sl = sizeof GN_FUZZ_SPLIT - 1;
    size_t k = 0, at = 0;
    while (k + 1 < max) {
        const uint8_t *hit = NULL;
        for (size_t i = at; i + sl <= n; i++)
            if (d[i] == '#' && !memcmp(d + i, GN_FUZZ_SPLIT, sl)) {
                hit = d + i;
                break;
            }
        if (!hit) break;
        part[k] = d + at;
        len[k++] = (size_t)(hit - (d + at));
        at = (size_t)(hit - d) + sl;
    }
    part[k] = d + at;
    len[k++] = n - at;
    return k;
}

/* Exercises a loaded graph's read-only surface and checks that it survives a
 * round trip: serialized in `fmt`, loaded again, serialized again: the same bytes. */
static void graph_round_trip(gn_graph *g, gn_format fmt)
{
    gn_status s = gn_graph_infer_shapes(g);
    need_msg(s, gn_graph_errmsg(g), "gn_graph_infer_shapes");
    size_t n = gn_graph_node_count(g);
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        size_t ni = gn_graph_node_input_count(g, i);
        for (size_t k = 0; k < ni; k++) (void)gn_graph_node_input(g, i, k, buf, sizeof buf);
        int32_t no = gn_graph_node_output_count(g, i);
        for (int32_t k = 0; k < no; k++) {
            int64_t dims[8];
            (void)gn_dtype_name(gn_graph_node_output_dtype(g, i, k));
            (void)gn_graph_node_output_shape(g, i, k, dims, 8);
        }
    }
    char *text = NULL;
    s = gn_graph_inspect(g, GN_INSPECT_SHAPES, &text);
    need_msg(s, gn_graph_errmsg(g), "gn_graph_inspect");
    gn_free(text);

    void *a = NULL, *b = NULL;
    size_t an = 0, bn = 0;
    s = gn_graph_serialize(g, fmt, &a, &an);
    need_msg(s, gn_graph_errmsg(g), "gn_graph_serialize");
    if (s != GN_OK) return;
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.format = fmt;
    gn_graph *h = NULL;
    s = gn_graph_load_buffer(a, an, "reserialized", &lo, &h);
    if (s != GN_OK) {
        fprintf(stderr, "fuzz: %s\n", gn_graph_errmsg(h));
        broken("a graph the library wrote does not load again", gn_status_str(s));
    }
    s = gn_graph_serialize(h, fmt, &b, &bn);
    if (s != GN_OK) broken("serializing the reloaded graph", gn_graph_errmsg(h));
    if (an != bn || memcmp(a, b, an) != 0) broken("serialize, load, serialize: different bytes", NULL);
    gn_free(a);
    gn_free(b);
    gn_graph_free(h);
}

/* A binary GraphDef loaded from a file keeps the file's image and points its
 * large tensors into it (moving misaligned ones in place): it must load as the
 * buffer did and write the same bytes. */
static void file_same_as_buffer(const uint8_t *d, size_t n, gn_graph *from_buffer, gn_status sb)
{
    char path[600];
    snprintf(path, sizeof path, "%s/input.pb", scratch());
    put_file(path, d, n);
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.format = GN_FORMAT_BINARY;
    gn_graph *g = NULL;
    gn_status s = gn_graph_load(path, &lo, &g);
    if (!g) {
        if (s != GN_ERR_NOMEM) broken("gn_graph_load: no handle", gn_status_str(s));
        return;
    }
    if ((s == GN_OK) != (sb == GN_OK)) broken("a file and the same bytes in a buffer load differently", gn_graph_errmsg(g));
    if (s == GN_OK) {
        void *a = NULL, *b = NULL;
        size_t an = 0, bn = 0;
        if (gn_graph_serialize(from_buffer, GN_FORMAT_BINARY, &a, &an) != GN_OK ||
            gn_graph_serialize(g, GN_FORMAT_BINARY, &b, &bn) != GN_OK)
            broken("serializing a loaded graph", gn_graph_errmsg(g));
        if (an != bn || memcmp(a, b, an) != 0) broken("loaded from a file and from a buffer: different bytes", NULL);
        gn_free(a);
        gn_free(b);
    }
    gn_graph_free(g);
}

static int graphdef(const uint8_t *d, size_t n, gn_format fmt)
{
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.format = fmt;
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(d, n, "input", &lo, &g);
    if (!g) {
        if (s != GN_ERR_NOMEM) broken("gn_graph_load_buffer: no handle", gn_status_str(s));
        return 0;
    }
    need_msg(s, gn_graph_errmsg(g), "gn_graph_load_buffer");
    if (s == GN_OK) graph_round_trip(g, fmt);
    if (fmt == GN_FORMAT_BINARY && n >= 4096) file_same_as_buffer(d, n, g, s);
    gn_graph_free(g);
    return 0;
}

/* ---- targets ------------------------------------------------------------------------------- */

static int fuzz_graphdef_binary(const uint8_t *d, size_t n) { return graphdef(d, n, GN_FORMAT_BINARY); }

static int fuzz_graphdef_text(const uint8_t *d, size_t n) { return graphdef(d, n, GN_FORMAT_TEXT); }

/* saved_model.pb GN_FUZZ_SPLIT variables.index GN_FUZZ_SPLIT variables.data-00000-of-00001 */
static int fuzz_savedmodel(const uint8_t *d, size_t n)
{
    const uint8_t *part[3];
    size_t len[3];
    size_t k = split(d, n, part, len, 3);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/sm", scratch());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/variables", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/saved_model.pb", dir);
    put_file(path, part[0], len[0]);
    snprintf(path, sizeof path, "%s/variables/variables.index", dir);
    if (k > 1) put_file(path, part[1], len[1]);
    else unlink(path);
    snprintf(path, sizeof path, "%s/variables/variables.data-00000-of-00001", dir);
    if (k > 2) put_file(path, part[2], len[2]);
    else unlink(path);

    gn_graph *g = NULL;
    gn_status s = gn_graph_load(dir, NULL, &g);
    if (!g) return 0;
    need_msg(s, gn_graph_errmsg(g), "gn_graph_load");
    if (s == GN_OK) {
        size_t nv = 0;
        s = gn_graph_variable_count(g, &nv);
        need_msg(s, gn_graph_errmsg(g), "gn_graph_variable_count");
        for (size_t i = 0; s == GN_OK && i < nv; i++) {
            gn_variable_info vi;
            s = gn_graph_variable(g, i, &vi);
            need_msg(s, gn_graph_errmsg(g), "gn_graph_variable");
        }
        size_t ns = gn_graph_signature_count(g);
        for (size_t i = 0; i < ns; i++) {
            const char *key = gn_graph_signature_key(g, i);
            for (int32_t out = 0; out < 2; out++) {
                size_t na = 0;
                if (gn_graph_signature_args(g, key, out, &na) != GN_OK) continue;
                for (size_t a = 0; a < na; a++) {
                    gn_signature_arg arg;
                    (void)gn_graph_signature_arg(g, key, out, a, &arg);
                }
            }
        }
        for (size_t i = 0; i < gn_graph_asset_count(g); i++) {
            (void)gn_graph_asset_filename(g, i);
            (void)gn_graph_asset_tensor(g, i);
        }
        gn_graph *f = NULL;
        s = gn_graph_freeze(g, NULL, &f);
        need_msg(s, gn_graph_errmsg(g), "gn_graph_freeze");
        if (s == GN_OK) graph_round_trip(f, GN_FORMAT_BINARY);
        gn_graph_free(f);
    }
    gn_graph_free(g);
    return 0;
}

static int fuzz_bundle_index(const uint8_t *d, size_t n)
{
    char prefix[600], path[700];
    snprintf(prefix, sizeof prefix, "%s/idx", scratch());
    snprintf(path, sizeof path, "%s.index", prefix);
    put_file(path, d, n);
    gn__err err;
    gn__err_clear(&err);
    gn__bundle *b = NULL;
    gn_status s = gn__bundle_open(prefix, &b, &err);
    need_msg(s, err.msg, "gn__bundle_open");
    if (s != GN_OK) return 0;
    const Tensorflow__BundleHeaderProto *h = gn__bundle_header(b);
    (void)h;
    for (size_t i = 0; i < gn__bundle_count(b); i++) {
        const char *key = gn__bundle_key(b, i);
        if (!key) broken("gn__bundle_key: NULL below the count", NULL);
        if (!gn__bundle_entry(b, key)) broken("gn__bundle_entry: a listed key has no entry", key);
    }
    gn__bundle_close(b);
    return 0;
}

/* The same text through the three dictionary parsers; what parses prints a
 * dictionary that parses again to the same text. */
static int fuzz_dict_text(const uint8_t *d, size_t n)
{
    char *text = as_text(d, n);
    char err[512];

    gn_options o;
    gn_options_init(&o);
    err[0] = 0;
    gn_status s = gn_options_parse(&o, text, err, sizeof err);
    need_msg(s, err, "gn_options_parse");
    if (s == GN_OK) {
        char *a = NULL, *b = NULL;
        if (gn_options_to_string(&o, &a) != GN_OK) broken("gn_options_to_string", NULL);
        gn_options p;
        gn_options_init(&p);
        s = gn_options_parse(&p, a, err, sizeof err);
        if (s != GN_OK) broken("gn_options_to_string's text does not parse", err);
        if (gn_options_to_string(&p, &b) != GN_OK) broken("gn_options_to_string", NULL);
        if (strcmp(a, b) != 0) broken("options: print, parse, print: different text", a);
        gn_free(a);
        gn_free(b);
    }

    gn_conversion_params cp;
    gn_conversion_params_init(&cp);
    err[0] = 0;
    s = gn_conversion_params_parse(&cp, text, err, sizeof err);
    need_msg(s, err, "gn_conversion_params_parse");
    if (s == GN_OK) {
        char *a = NULL, *b = NULL;
        if (gn_conversion_params_to_string(&cp, &a) != GN_OK) broken("gn_conversion_params_to_string", NULL);
        gn_conversion_params cq;
        gn_conversion_params_init(&cq);
        s = gn_conversion_params_parse(&cq, a, err, sizeof err);
        if (s != GN_OK) broken("gn_conversion_params_to_string's text does not parse", err);
        if (gn_conversion_params_to_string(&cq, &b) != GN_OK) broken("gn_conversion_params_to_string", NULL);
        if (strcmp(a, b) != 0) broken("conversion params: print, parse, print: different text", a);
        gn_free(a);
        gn_free(b);
    }

    gn_save_options so;
    gn_save_options_init(&so);
    err[0] = 0;
    s = gn_save_options_parse(&so, text, err, sizeof err);
    need_msg(s, err, "gn_save_options_parse");
    if (s == GN_OK) {
        char *a = gn_save_options_to_string(&so);
        if (!a) broken("gn_save_options_to_string", NULL);
        gn_save_options sp;
        gn_save_options_init(&sp);
        s = gn_save_options_parse(&sp, a, err, sizeof err);
        if (s != GN_OK) broken("gn_save_options_to_string's text does not parse", err);
        char *b = gn_save_options_to_string(&sp);
        if (!b) broken("gn_save_options_to_string", NULL);
        if (strcmp(a, b) != 0) broken("save options: print, parse, print: different text", a);
        gn_free(a);
        gn_free(b);
        gn_save_options_clear(&sp);
    }
    gn_save_options_clear(&so);
    free(text);
    return 0;
}

static int fuzz_npy(const uint8_t *d, size_t n)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    char err[512] = "";
    gn_status s = gn_npy_parse(d, n, "input.npy", &t, err, sizeof err);
    need_msg(s, err, "gn_npy_parse");
    if (s != GN_OK) return 0;
    /* what was read writes back, and reads again to the same tensor */
    void *enc = NULL;
    size_t en = 0;
    if (gn_npy_serialize(&t, &enc, &en, err, sizeof err) != GN_OK) broken("gn_npy_serialize", err);
    gn_tensor u;
    memset(&u, 0, sizeof u);
    if (gn_npy_parse(enc, en, "again.npy", &u, err, sizeof err) != GN_OK) broken("re-reading gn_npy_serialize", err);
    gn_compare_result cr;
    if (gn_tensor_compare(&u, &t, 0, &cr) != GN_OK) broken("gn_tensor_compare", NULL);
    /* NaNs compare as matching when in the same places */
    if (!cr.match) broken(".npy: read, write, read: a different tensor", cr.why);
    gn_free(enc);
    gn_tensor_free(&u);
    gn_tensor_free(&t);
    return 0;
}

/* The engine asset records (TFRecord framing and payloads) of an FP32 engine
 * whose digest is the constant below (seeds carry it, so records decode whole). */
#define FUZZ_ENGINE_DIGEST 0x0123456789abcdefull
static int fuzz_engine_asset(const uint8_t *d, size_t n)
{
    gn__err err;
    gn__err_clear(&err);
    for (int be = 0; be < 2; be++) {
        gn__engine_shapes *sh = NULL;
        uint32_t n_out = 0, n_stale = 0;
        gn_status s = gn__engine_asset_parse(d, n, "grapnel-engine.fuzz", "FP32", FUZZ_ENGINE_DIGEST,
                                             (gn__engine_backend)be, &sh, &n_out, &n_stale, &err);
        need_msg(s, err.msg, "gn__engine_asset_parse");
        if (s != GN_OK && (sh || n_out)) broken("gn__engine_asset_parse: output left on failure", NULL);
        for (uint32_t i = 0; i < n_out; i++) {
            for (uint32_t k = 0; k < sh[i].n_in; k++)
                if (sh[i].rank[k] < 0 || sh[i].rank[k] > 8) broken("engine asset: bad rank accepted", NULL);
            gn__engine_shapes_free(&sh[i]);
        }
        free(sh);
    }
    return 0;
}

/* Ops the run target does not run: loops (no step budget in the session yet),
 * and anything that touches files, queues or the clock. */
static bool denied_op(const char *op)
{
    static const char *const deny[] = {"While", "Enter", "Exit", "NextIteration", "LoopCond", "Save", "Restore",
                                       "Write", "File", "Print", "Sleep", "Queue", "Dataset", "Iterator", "Reader",
                                       "Summary", "Call", "If", "Case", "Barrier", "Stage", "Table", "Variable"};
    for (size_t i = 0; i < GN__ARRAY_LEN(deny); i++)
        if (strstr(op, deny[i])) return true;
    return false;
}

/* Loads a graph, runs the default optimize pipeline (every placeholder a feed,
 * every node without consumers a fetch; the report's events kept when the
 * input's last byte is even) and checks the result still validates. */
static int fuzz_optimize(const uint8_t *d, size_t n)
{
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(d, n, "input", NULL, &g);
    if (!g) return 0;
    if (s != GN_OK) {
        need_msg(s, gn_graph_errmsg(g), "gn_graph_load_buffer");
        gn_graph_free(g);
        return 0;
    }
    gn_options o;
    gn_options_init(&o);
    o.min_graph_nodes = -1;   /* small graphs too */
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    /* the report with its events or without (a caller that prints none):
     * the passes skip the walks that find refusals then */
    p.no_report_events = n > 0 && (d[n - 1] & 1);
    gn_report *r = NULL;
    s = gn_optimize(g, &o, &p, &r);
    need_msg(s, gn_graph_errmsg(g), "gn_optimize");
    if (r) {
        char *t = NULL;
        if (gn_report_to_text(r, &t) != GN_OK) broken("gn_report_to_text", NULL);
        gn_free(t);
        gn_report_free(r);
    }
    if (s == GN_OK) {
        s = gn_graph_validate(g);
        if (s != GN_OK) broken("the optimized graph does not validate", gn_graph_errmsg(g));
    }
    gn_graph_free(g);
    return 0;
}

/* Loads a small graph and runs it on the CPU backend: every placeholder fed
 * with zeros of its declared shape, every node's outputs fetched. The session
 * has no step budget, so what may run is bounded instead: no loops or
 * function calls, every tensor's shape known after shape inference and at
 * most 4096 elements. */
#define RUN_MAX_ELEMS 4096
static int fuzz_run(const uint8_t *d, size_t n)
{
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(d, n, "input", NULL, &g);
    if (!g) return 0;
    if (s != GN_OK || gn_graph_function_count(g) > 0 || gn_graph_infer_shapes(g) != GN_OK) goto out;
    size_t nn = gn_graph_node_count(g);
    if (nn > 64) goto out;
    const char *feed_names[64], *fetch_names[64];
    gn_tensor feeds[64], fetches[64];
    size_t n_feeds = 0, n_fetches = 0;
    memset(feeds, 0, sizeof feeds);
    memset(fetches, 0, sizeof fetches);
    for (size_t i = 0; i < nn; i++) {
        const char *op = gn_graph_node_op(g, i);
        if (denied_op(op)) goto out_feeds;
        int32_t no = gn_graph_node_output_count(g, i);
        for (int32_t k = 0; k < no; k++) {
            int64_t dims[8];
            int32_t rank = gn_graph_node_output_shape(g, i, k, dims, 8);
            if (rank < 0 || rank > 8) goto out_feeds;
            int64_t numel = 1;
            for (int32_t j = 0; j < rank; j++) {
                if (dims[j] < 0 || dims[j] > RUN_MAX_ELEMS) goto out_feeds;
                numel *= dims[j];
                if (numel > RUN_MAX_ELEMS) goto out_feeds;
            }
        }
        if (!strcmp(op, "Placeholder")) {
            int64_t dims[8];
            int32_t rank = gn_graph_node_output_shape(g, i, 0, dims, 8);
            int32_t dt = gn_graph_node_output_dtype(g, i, 0);
            if (gn_tensor_alloc(dt, rank, dims, &feeds[n_feeds]) != GN_OK) goto out_feeds;
            feed_names[n_feeds++] = gn_graph_node_name(g, i);
        } else if (no > 0) {
            fetch_names[n_fetches++] = gn_graph_node_name(g, i);
        }
    }
    if (n_fetches) {
        gn_session *ss = NULL;
        s = gn_session_new(g, NULL, &ss);
        if (ss) {
            need_msg(s, gn_session_errmsg(ss), "gn_session_new");
            if (s == GN_OK) {
                s = gn_session_run(ss, feed_names, feeds, n_feeds, fetch_names, fetches, n_fetches);
                need_msg(s, gn_session_errmsg(ss), "gn_session_run");
                for (size_t j = 0; j < n_fetches; j++) gn_tensor_free(&fetches[j]);
            }
            gn_session_free(ss);
        }
    }
out_feeds:
    for (size_t j = 0; j < n_feeds; j++) gn_tensor_free(&feeds[j]);
out:
    gn_graph_free(g);
    return 0;
}

/* The regex kernels (src/ops/kernels/regex.c): the input is a pattern, then
 * (after GN_FUZZ_SPLIT) a rewrite, then a text; the pattern is fed to
 * RegexReplace (global and not) and RegexFullMatch as a tensor. A pattern
 * refused must come back with a message; any other is run on the text. */
static const char REGEX_GRAPH[] =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
    "node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
    "node { name: 'r' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
    "node { name: 'g' op: 'RegexReplace' input: 'x' input: 'p' input: 'r' }\n"
    "node { name: 'f' op: 'RegexReplace' input: 'x' input: 'p' input: 'r' "
    "attr { key: 'replace_global' value { b: false } } }\n"
    "node { name: 'm' op: 'RegexFullMatch' input: 'x' input: 'p' }\n";

static const char *find_split(const char *p, const char *end)
{
    size_t sl = strlen(GN_FUZZ_SPLIT);
    for (; (size_t)(end - p) >= sl; p++)
        if (!memcmp(p, GN_FUZZ_SPLIT, sl)) return p;
    return NULL;
}

static int fuzz_regex(const uint8_t *d, size_t n)
{
    const char *parts[3] = {"", "", ""};
    size_t lens[3] = {0, 0, 0}, k = 0, sl = strlen(GN_FUZZ_SPLIT);
    const char *p = (const char *)d, *end = p + n;
    while (k < 3) {
        const char *q = k < 2 ? find_split(p, end) : NULL;
        parts[k] = p;
        lens[k] = q ? (size_t)(q - p) : (size_t)(end - p);
        k++;
        if (!q) break;
        p = q + sl;
    }
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(REGEX_GRAPH, sizeof REGEX_GRAPH - 1, "regex.pbtxt", NULL, &g);
    if (s != GN_OK) broken("loading the regex graph", g ? gn_graph_errmsg(g) : NULL);
    gn_session *ss = NULL;
    s = gn_session_new(g, NULL, &ss);
    if (s != GN_OK) broken("gn_session_new", ss ? gn_session_errmsg(ss) : NULL);
    gn_string str[3];
    gn_tensor feeds[3];
    memset(feeds, 0, sizeof feeds);
    for (int i = 0; i < 3; i++) {
        int j = i == 0 ? 2 : i == 1 ? 0 : 1;   /* x: the text, p: the pattern, r: the rewrite */
        str[i] = (gn_string){parts[j], lens[j]};
        feeds[i].dtype = 7;
        feeds[i].rank = i == 0 ? 1 : 0;
        feeds[i].dims[0] = 1;
        feeds[i].data = &str[i];
        feeds[i].nbytes = sizeof str[i];
    }
    const char *fn[3] = {"x", "p", "r"}, *on[3] = {"g", "f", "m"};
    gn_tensor out[3];
    memset(out, 0, sizeof out);
    s = gn_session_run(ss, fn, feeds, 3, on, out, 3);
    need_msg(s, gn_session_errmsg(ss), "gn_session_run");
    for (int i = 0; i < 3; i++) gn_tensor_free(&out[i]);
    gn_session_free(ss);
    gn_graph_free(g);
    return 0;
}

/* ParseExampleV2 (src/ops/kernels/example.c) on serialized examples: the input
 * split at GN_FUZZ_SPLIT into up to 4 examples, parsed for a dense float [2]
 * with a default, a dense int64 [-1] sequence, a sparse string key and a
 * ragged int64 key. Bytes that are no Example, or features of the wrong kind or
 * count, must be refused with a message. */
static const char EXAMPLE_GRAPH[] =
    "node { name: 's' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } } }\n"
    "node { name: 'names' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
    "tensor { dtype: DT_STRING tensor_shape { dim { size: 0 } } } } } }\n"
    "node { name: 'sk' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
    "tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: 'w' } } } }\n"
    "node { name: 'dk' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
    "tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: 'x' string_val: 'q' } } } }\n"
    "node { name: 'rk' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
    "tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: 'r' } } } }\n"
    "node { name: 'dx' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
    "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 9 } } } }\n"
    "node { name: 'dq' op: 'Const' attr { key: 'dtype' value { type: DT_INT64 } } attr { key: 'value' value { "
    "tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }\n"
    "node { name: 'p' op: 'ParseExampleV2' input: 's' input: 'names' input: 'sk' input: 'dk' input: 'rk' "
    "input: 'dx' input: 'dq' attr { key: 'Tdense' value { list { type: DT_FLOAT type: DT_INT64 } } } "
    "attr { key: 'num_sparse' value { i: 1 } } attr { key: 'sparse_types' value { list { type: DT_STRING } } } "
    "attr { key: 'ragged_value_types' value { list { type: DT_INT64 } } } "
    "attr { key: 'ragged_split_types' value { list { type: DT_INT64 } } } "
    "attr { key: 'dense_shapes' value { list { shape { dim { size: 2 } } shape { dim { size: -1 } } } } } }\n";

static int fuzz_example(const uint8_t *d, size_t n)
{
    gn_string ex[4];
    size_t k = 0;
    const char *p = (const char *)d, *end = p + n;
    while (k < 4) {
        const char *q = k < 3 ? find_split(p, end) : NULL;
        ex[k++] = (gn_string){p, q ? (size_t)(q - p) : (size_t)(end - p)};
        if (!q) break;
        p = q + strlen(GN_FUZZ_SPLIT);
    }
    gn_graph *g = NULL;
    gn_status s = gn_graph_load_buffer(EXAMPLE_GRAPH, sizeof EXAMPLE_GRAPH - 1, "example.pbtxt", NULL, &g);
    if (s != GN_OK) broken("loading the example graph", g ? gn_graph_errmsg(g) : NULL);
    gn_session *ss = NULL;
    s = gn_session_new(g, NULL, &ss);
    if (s != GN_OK) broken("gn_session_new", ss ? gn_session_errmsg(ss) : NULL);
    gn_tensor feed;
    memset(&feed, 0, sizeof feed);
    feed.dtype = 7;
    feed.rank = 1;
    feed.dims[0] = (int64_t)k;
    feed.data = ex;
    feed.nbytes = k * sizeof ex[0];
    const char *fn[1] = {"s"}, *on[7] = {"p:0", "p:1", "p:2", "p:3", "p:4", "p:5", "p:6"};
    gn_tensor out[7];
    memset(out, 0, sizeof out);
    s = gn_session_run(ss, fn, &feed, 1, on, out, 7);
    need_msg(s, gn_session_errmsg(ss), "gn_session_run");
    for (int i = 0; i < 7; i++) gn_tensor_free(&out[i]);
    gn_session_free(ss);
    gn_graph_free(g);
    return 0;
}

const gn_fuzz_target gn_fuzz_targets[] = {
    {"graphdef_binary", fuzz_graphdef_binary, 1u << 20},
    {"graphdef_text", fuzz_graphdef_text, 1u << 20},
    {"savedmodel", fuzz_savedmodel, 1u << 20},
    {"bundle_index", fuzz_bundle_index, 1u << 18},
    {"dict_text", fuzz_dict_text, 1u << 12},
    {"npy", fuzz_npy, 1u << 16},
    {"engine_asset", fuzz_engine_asset, 1u << 14},
    {"optimize", fuzz_optimize, 1u << 18},
    {"run", fuzz_run, 1u << 16},
    {"regex", fuzz_regex, 1u << 12},
    {"example", fuzz_example, 1u << 14},
    {NULL, NULL, 0},
};

const gn_fuzz_target *gn_fuzz_find(const char *name)
{
    for (const gn_fuzz_target *t = gn_fuzz_targets; t->name; t++)
        if (!strcmp(t->name, name)) return t;
    return NULL;
}
