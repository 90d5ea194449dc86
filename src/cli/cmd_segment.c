/* grapnel segment: engine conversion (include/grapnel/convert.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "grapnel/report_html.h"
#include "grapnel/save.h"

#define MAX_NAMES 256

/* --build-shape NAME=DIMS: a zero tensor of NAME's dtype (float32 when the
 * graph does not say) and shape DIMS ("1x49x10"; "" for a scalar). */
static int build_feed(gn_graph *g, const char *spec, char **name, gn_tensor *t)
{
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec) {
        fprintf(stderr, "grapnel segment: --build-shape '%s': expected NAME=DIMS, e.g. x=1x49x10\n", spec);
        return 2;
    }
    *name = strndup(spec, (size_t)(eq - spec));
    if (!*name) return 1;
    int64_t dims[GN_TENSOR_MAX_DIMS];
    int32_t rank = 0;
    const char *p = eq + 1;
    while (*p) {
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || rank == GN_TENSOR_MAX_DIMS || (*end && *end != 'x')) {
            fprintf(stderr, "grapnel segment: --build-shape '%s': bad dimensions (want e.g. 1x49x10)\n", spec);
            return 2;
        }
        dims[rank++] = v;
        p = *end ? end + 1 : end;
    }
    /* the dtype: output k of the node named */
    int32_t dtype = 1;
    const char *colon = strrchr(*name, ':');
    size_t base = colon ? (size_t)(colon - *name) : strlen(*name);
    int32_t k = colon ? atoi(colon + 1) : 0;
    (void)gn_graph_infer_shapes(g);
    for (size_t i = 0; i < gn_graph_node_count(g); i++) {
        const char *nm = gn_graph_node_name(g, i);
        if (strlen(nm) != base || strncmp(nm, *name, base) != 0) continue;
        int32_t dt = gn_graph_node_output_dtype(g, i, k);
        if (dt > 0) dtype = dt;
        break;
    }
    if (gn_tensor_alloc(dtype, rank, dims, t) != GN_OK) {
        fprintf(stderr, "grapnel segment: --build-shape '%s': cannot make a %s tensor of that shape\n", spec,
                gn_dtype_name(dtype));
        return 2;
    }
    return 0;
}

int gn_cli_segment(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *params = NULL, *backend = "cpu", *tags = NULL, *report = NULL, *report_file = NULL;
    const char *keep[MAX_NAMES], *feeds[MAX_NAMES], *cal[MAX_NAMES], *bshape[MAX_NAMES], *fetches[MAX_NAMES];
    char *own[MAX_NAMES];
    size_t nk = 0, nfeed = 0, ncal = 0, nown = 0, nbs = 0, nfetch = 0, nfeed_given = 0;
    int dry = 0, as_saved = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "-o") && more) out = argv[++i];
        else if (!strcmp(a, "--params") && more) params = argv[++i];
        else if (!strcmp(a, "--backend") && more) backend = argv[++i];
        else if (!strcmp(a, "--tag") && more) tags = argv[++i];
        else if (!strcmp(a, "--feed") && more && nk < MAX_NAMES && nfeed < MAX_NAMES) keep[nk++] = feeds[nfeed++] = argv[++i];
        else if (!strcmp(a, "--fetch") && more && nk < MAX_NAMES) keep[nk++] = fetches[nfetch++] = argv[++i];
        else if (!strcmp(a, "--build-shape") && more && nbs < MAX_NAMES) bshape[nbs++] = argv[++i];
        else if (!strcmp(a, "--saved-model")) as_saved = 1;
        else if (!strcmp(a, "--report") && more) report = argv[++i];
        else if (!strcmp(a, "--report-file") && more) report_file = argv[++i];
        else if (!strcmp(a, "--calibrate") && more && ncal < MAX_NAMES) {
            cal[ncal++] = argv[++i];
            while (i + 1 < argc && argv[i + 1][0] != '-' && ncal < MAX_NAMES) cal[ncal++] = argv[++i];
        }
        else if (!strcmp(a, "--dry-run")) dry = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (a[0] != '-' && !in) in = a;
        else if (a[0] == '-' && a[1]) return gn_cli_unknown_option("segment", a);
        else {
            fprintf(stderr, "grapnel segment: unexpected argument '%s' (see grapnel segment --help)\n", a);
            return 2;
        }
    }
    if (!in || (!out && !dry)) {
        fprintf(stderr, "grapnel segment: need IN and -o OUT (or --dry-run); see grapnel segment --help\n");
        return 2;
    }
    if ((report && strcmp(report, "html") != 0) || (report && !report_file) || (!report && report_file)) {
        fprintf(stderr, "grapnel segment: the report is --report html --report-file FILE.html\n");
        return 2;
    }
    gn_conversion_params p;
    gn_conversion_params_init(&p);
    char err[1024];
    if (params && gn_conversion_params_parse(&p, params, err, sizeof err) != GN_OK) {
        char *defaults = NULL;
        gn_conversion_params d;
        gn_conversion_params_init(&d);
        if (gn_conversion_params_to_string(&d, &defaults) == GN_OK) gn_cli_key_hint(err, sizeof err, defaults);
        gn_free(defaults);
        fprintf(stderr, "grapnel segment: --params: %s\n", err);
        return 2;
    }
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = tags;
    nfeed_given = nfeed;
    gn_graph *g = gn_cli_load("segment", in, &lo);
    if (!g) return 1;
    /* calibration feeds: --feed in order, else the graph's placeholders in node order */
    if (ncal && !nfeed) {
        for (size_t i = 0; i < gn_graph_node_count(g) && nfeed < MAX_NAMES; i++)
            if (!strcmp(gn_graph_node_op(g, i), "Placeholder")) {
                char *nm = strdup(gn_graph_node_name(g, i));
                if (!nm) break;
                own[nown++] = nm;
                feeds[nfeed++] = nm;
                if (nk < MAX_NAMES) keep[nk++] = nm;
            }
    }
    if (ncal && (!nfeed || ncal % nfeed)) {
        fprintf(stderr, "grapnel segment: --calibrate: %zu file(s) for %zu input(s): give one .npy per input (in --feed "
                        "order), batch after batch\n", ncal, nfeed);
        gn_graph_free(g);
        for (size_t i = 0; i < nown; i++) free(own[i]);
        return 2;
    }
    if (gn_cli_check_tensor_names("segment", g, feeds, nfeed, fetches, nfetch)) {
        gn_graph_free(g);
        for (size_t i = 0; i < nown; i++) free(own[i]);
        return 1;
    }
    gn_segment_params sp;
    gn_segment_params_init(&sp);
    sp.backend = backend;
    sp.preserve = keep;
    sp.n_preserve = nk;
    sp.dry_run = dry;
    char *rep = NULL, *crep = NULL, *brep = NULL;
    size_t n = 0;
    int rc = 0;
    gn_graph *before = NULL;
    if (report && gn_graph_clone(g, &before) != GN_OK) {
        fprintf(stderr, "grapnel segment: out of memory keeping the graph for the HTML report\n");
        rc = 1;
    } else if (gn_segment(g, &p, &sp, &rep, &n) != GN_OK) {
        fprintf(stderr, "grapnel segment: %s\n", gn_graph_errmsg(g));
        rc = 1;
    } else {
        char *pt = NULL;
        if (!json && gn_conversion_params_to_string(&p, &pt) == GN_OK) printf("params: %s\n", pt);
        gn_free(pt);
        if (!json) fputs(rep, stdout);
        if (ncal && !dry && n) {
            gn_tensor *bt = calloc(ncal, sizeof *bt);
            for (size_t i = 0; bt && i < ncal && !rc; i++)
                if (gn_npy_read(cal[i], &bt[i], err, sizeof err) != GN_OK) {
                    fprintf(stderr, "grapnel segment: --calibrate: %s\n", err);
                    rc = 1;
                }
            if (!bt) rc = 1;
            /* names held by the graph change with it: copy them first */
            char **fn = calloc(nfeed + 1, sizeof *fn);
            for (size_t i = 0; fn && i < nfeed; i++) fn[i] = strdup(feeds[i]);
            bool progress = gn_cli_progress_on(true);
            double t0 = gn_cli_now();
            if (!rc && fn && progress) fprintf(stderr, "grapnel: calibrating on %zu batches...\n", ncal / nfeed);
            if (!rc && fn && gn_calibrate(g, (const char *const *)fn, nfeed, bt, ncal / nfeed, &crep) != GN_OK) {
                fprintf(stderr, "grapnel segment: %s\n", gn_graph_errmsg(g));
                rc = 1;
            } else if (!rc && fn && progress) {
                fprintf(stderr, "grapnel: calibrated in %.2f s\n", gn_cli_now() - t0);
            }
            if (crep && !json) fputs(crep, stdout);
            for (size_t i = 0; bt && i < ncal; i++) gn_tensor_free(&bt[i]);
            for (size_t i = 0; fn && i < nfeed; i++) free(fn[i]);
            free(fn);
            free(bt);
        }
        if (nbs && !dry && !rc) {
            /* build ahead of time: a zero tensor per --build-shape */
            gn_tensor *bt = calloc(nbs, sizeof *bt);
            char **bn = calloc(nbs, sizeof *bn);
            if (!bt || !bn) rc = 1;
            for (size_t i = 0; !rc && i < nbs; i++) rc = build_feed(g, bshape[i], &bn[i], &bt[i]);
            if (!rc && gn_engines_build(g, backend, (const char *const *)bn, bt, nbs, &brep) != GN_OK) {
                fprintf(stderr, "grapnel segment: %s\n", gn_graph_errmsg(g));
                rc = 1;
            }
            if (brep && !json) printf("built ahead of time:\n%s", brep);
            for (size_t i = 0; bt && bn && i < nbs; i++) {
                gn_tensor_free(&bt[i]);
                free(bn[i]);
            }
            free(bt);
            free(bn);
        }
        if (!rc && !dry && as_saved) {
            gn_save_params svp;
            gn_save_params_init(&svp);
            svp.feeds = feeds;
            svp.n_feeds = nfeed_given;
            svp.fetches = fetches;
            svp.n_fetches = nfetch;
            if (gn_savedmodel_save(g, out, NULL, &svp) != GN_OK) {
                fprintf(stderr, "grapnel segment: %s\n", gn_graph_errmsg(g));
                rc = 1;
            }
        } else if (!rc && !dry && gn_graph_save(g, out, GN_FORMAT_AUTO) != GN_OK) {
            fprintf(stderr, "grapnel segment: %s\n", gn_graph_errmsg(g));
            rc = 1;
        }
    }
    if (before && rep) {
        gn_html_params hp;
        gn_html_params_init(&hp);
        hp.kind = GN_HTML_SEGMENT;
        hp.title = in;
        hp.segment_report = rep;
        if (gn_report_write_html(before, dry ? NULL : g, &hp, report_file, err, sizeof err) != GN_OK) {
            fprintf(stderr, "grapnel segment: HTML report: %s\n", err);
            rc = 1;
        }
    }
    gn_graph_free(before);
    if (json && !rc) {
        gn_json j;
        gn_json_init(&j, stdout);
        gn_json_header(&j, "segment");
        gn_json_key(&j, "input");
        gn_json_str(&j, in);
        gn_json_key(&j, "output");
        gn_json_str(&j, dry ? NULL : out);
        gn_json_key(&j, "params");
        char *pt = NULL;
        if (gn_conversion_params_to_string(&p, &pt) != GN_OK || !gn_json_pyliteral(&j, pt)) gn_json_null(&j);
        gn_free(pt);
        gn_json_key(&j, "backend");
        gn_json_str(&j, backend);
        gn_json_key(&j, "feeds");
        gn_json_strs(&j, feeds, nfeed_given);
        gn_json_key(&j, "fetches");
        gn_json_strs(&j, fetches, nfetch);
        gn_json_key(&j, "dry_run");
        gn_json_bool(&j, dry);
        gn_json_key(&j, "saved_model");
        gn_json_bool(&j, as_saved);
        gn_json_key(&j, "calibrate");
        gn_json_strs(&j, cal, ncal);
        gn_json_key(&j, "build_shapes");
        gn_json_strs(&j, bshape, nbs);
        gn_json_key(&j, "tags");
        gn_json_str(&j, tags);
        gn_json_end(&j, '}');
        gn_json_key(&j, "engines");
        gn_json_uint(&j, n);
        const char *texts[3] = {rep, crep, brep}, *keys[3] = {"report", "calibration", "built"};
        for (int t = 0; t < 3; t++) {
            gn_json_key(&j, keys[t]);
            if (!texts[t]) {
                gn_json_null(&j);
                continue;
            }
            gn_json_begin(&j, '[');   /* one string per line */
            for (const char *l = texts[t]; *l;) {
                const char *e = strchr(l, '\n');
                size_t len = e ? (size_t)(e - l) : strlen(l);
                gn_json_strn(&j, l, len);
                l += len + (e ? 1 : 0);
            }
            gn_json_end(&j, ']');
        }
        gn_json_end(&j, '}');
    }
    gn_free(rep);
    gn_free(crep);
    gn_free(brep);
    gn_graph_free(g);
    for (size_t i = 0; i < nown; i++) free(own[i]);
    return rc;
}
