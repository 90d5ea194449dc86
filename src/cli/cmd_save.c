/* grapnel save IN DIR: write a GraphDef or SavedModel as a SavedModel, with
 * tf.saved_model.SaveOptions given as Python dict text. Uses only the public
 * API (include/grapnel).
 *
 *   grapnel save IN DIR [--feed NAME ...] [--fetch NAME ...] [--signature KEY]
 *                       [--tag TAGS] [--save-options "{...}"] [--chunk-max-size BYTES]
 *
 * --chunk-max-size: with experimental_image_format, the proto splitter's
 * maximum size (TensorFlow's debug_set_max_size; default 1 GiB). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grapnel/grapnel.h"

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "grapnel save: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see grapnel save --help)\n");
    return EXIT_USAGE;
}

/* "--opt VALUE" or "--opt=VALUE"; NULL when argv[*i] is not opt. *missing
 * is set when the value is absent. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, int *missing)
{
    size_t ol = strlen(opt);
    const char *a = argv[*i];
    *missing = 0;
    if (strncmp(a, opt, ol) != 0) return NULL;
    if (a[ol] == '=') return a + ol + 1;
    if (a[ol] != 0) return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return a;
    }
    return argv[++*i];
}

int gn_cli_save(int argc, char **argv)
{
    const char *in = NULL, *dir = NULL, *sig = NULL, *tags = NULL, *opts_text = NULL;
    int no_validate = 0;
    long long chunk_max = 0;
    const char **feeds = calloc((size_t)argc + 1, sizeof *feeds);
    const char **fetches = calloc((size_t)argc + 1, sizeof *fetches);
    size_t nfeeds = 0, nfetches = 0;
    int rc = 0;
    if (!feeds || !fetches) {
        fprintf(stderr, "grapnel: out of memory\n");
        rc = 1;
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        const char *v;
        int missing;
        if ((v = opt_value(argc, argv, &i, "--feed", &missing))) {
            if (missing || !*v) { rc = usage("%s needs a tensor NAME", "--feed"); goto out; }
            feeds[nfeeds++] = v;
        } else if ((v = opt_value(argc, argv, &i, "--fetch", &missing))) {
            if (missing || !*v) { rc = usage("%s needs a tensor NAME", "--fetch"); goto out; }
            fetches[nfetches++] = v;
        } else if ((v = opt_value(argc, argv, &i, "--signature", &missing))) {
            if (missing || !*v) { rc = usage("%s needs a KEY", "--signature"); goto out; }
            sig = v;
        } else if ((v = opt_value(argc, argv, &i, "--tag", &missing)) ||
                   (v = opt_value(argc, argv, &i, "--tags", &missing))) {
            if (missing) { rc = usage("%s needs TAGS", "--tag"); goto out; }
            tags = v;
        } else if ((v = opt_value(argc, argv, &i, "--save-options", &missing))) {
            if (missing) { rc = usage("%s needs a dict text", "--save-options"); goto out; }
            opts_text = v;
        } else if ((v = opt_value(argc, argv, &i, "--chunk-max-size", &missing))) {
            char *end = NULL;
            chunk_max = missing ? -1 : strtoll(v, &end, 10);
            if (missing || !end || *end || chunk_max <= 0) { rc = usage("%s needs a positive BYTES", "--chunk-max-size"); goto out; }
        } else if (strcmp(argv[i], "--no-validate") == 0) {
            no_validate = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = gn_cli_unknown_option("save", argv[i]);
            goto out;
        } else if (!in) {
            in = argv[i];
        } else if (!dir) {
            dir = argv[i];
        } else {
            rc = usage("unexpected argument '%s'", argv[i]);
            goto out;
        }
    }
    if (!in || !dir) {
        rc = usage("%s", "IN and DIR are required");
        goto out;
    }

    gn_save_options so;
    gn_save_options_init(&so);
    if (opts_text) {
        char err[512];
        if (gn_save_options_parse(&so, opts_text, err, sizeof err) != GN_OK) {
            gn_save_options d;
            gn_save_options_init(&d);
            char *defaults = gn_save_options_to_string(&d);
            gn_cli_key_hint(err, sizeof err, defaults);
            gn_free(defaults);
            gn_save_options_clear(&d);
            fprintf(stderr, "grapnel save: --save-options: %s\n", err[0] ? err : "invalid text");
            gn_save_options_clear(&so);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = tags;
    lo.validate = !no_validate;
    gn_graph *g = NULL;
    gn_status s = gn_graph_load(in, &lo, &g);
    if (s != GN_OK) {
        fprintf(stderr, "grapnel: %s\n", g ? gn_graph_errmsg(g) : gn_status_str(s));
        rc = 1;
    } else {
        gn_cli_graph_env(g);
        gn_save_params sp;
        gn_save_params_init(&sp);
        sp.feeds = feeds;
        sp.n_feeds = nfeeds;
        sp.fetches = fetches;
        sp.n_fetches = nfetches;
        sp.signature_key = sig;
        sp.tags = tags;
        sp.chunk_max_size = chunk_max;
        s = gn_savedmodel_save(g, dir, &so, &sp);
        if (s != GN_OK) {
            fprintf(stderr, "grapnel: %s\n", gn_graph_errmsg(g));
            rc = 1;
        }
    }
    gn_graph_free(g);
    gn_save_options_clear(&so);
out:
    free(feeds);
    free(fetches);
    return rc;
}
