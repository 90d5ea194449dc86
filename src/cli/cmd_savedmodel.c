/* SavedModel commands: the SavedModel part of `grapnel inspect`, and
 * `grapnel freeze DIR -o OUT.pb [--signature NAME] [--tag T]`. Public API only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"

#define EXIT_USAGE 2

int gn_cli_freeze(int argc, char **argv);
int gn_cli_savedmodel_inspect(gn_graph *g, FILE *out);
int gn_cli_is_savedmodel(const gn_graph *g);

int gn_cli_is_savedmodel(const gn_graph *g)
{
    return gn_graph_signature_count(g) > 0 || gn_graph_tags(g)[0] != 0;
}

static void print_shape(FILE *out, int32_t rank, const int64_t *dims)
{
    if (rank < 0) {
        fputs("<unknown>", out);
        return;
    }
    fputc('[', out);
    for (int32_t d = 0; d < rank; d++) {
        if (d) fputs(", ", out);
        if (dims[d] < 0) fputc('?', out);
        else fprintf(out, "%" PRId64, dims[d]);
    }
    fputc(']', out);
}

static const char *dtype_str(int32_t dt)
{
    const char *n = gn_dtype_name(dt);
    return n ? n : "?";
}

/* Tags, signatures, variables, assets and functions of a SavedModel; 0 or 1
 * (an error reading the variables, printed). */
int gn_cli_savedmodel_inspect(gn_graph *g, FILE *out)
{
    fprintf(out, "SavedModel tags: %s\n", gn_graph_tags(g)[0] ? gn_graph_tags(g) : "(none)");
    size_t ns = gn_graph_signature_count(g);
    fprintf(out, "signatures: %zu\n", ns);
    for (size_t i = 0; i < ns; i++) {
        const char *key = gn_graph_signature_key(g, i);
        const char *m = gn_graph_signature_method(g, key);
        fprintf(out, "  %s%s%s%s\n", key, m && m[0] ? " (" : "", m && m[0] ? m : "", m && m[0] ? ")" : "");
        for (int32_t o = 0; o <= 1; o++) {
            size_t n = 0;
            if (gn_graph_signature_args(g, key, o, &n) != GN_OK) continue;
            for (size_t k = 0; k < n; k++) {
                gn_signature_arg a;
                if (gn_graph_signature_arg(g, key, o, k, &a) != GN_OK) continue;
                fprintf(out, "    %s %s: %s %s ", o ? "output" : "input ", a.key, a.tensor[0] ? a.tensor : "(composite)",
                        dtype_str(a.dtype));
                print_shape(out, a.rank, a.dims);
                fputc('\n', out);
            }
        }
    }
    int rc = 0;
    size_t nv = 0;
    if (gn_graph_variable_count(g, &nv) != GN_OK) {
        fprintf(stderr, "grapnel inspect: %s\n", gn_graph_errmsg(g));
        rc = 1;
    } else {
        uint64_t total = 0;
        for (size_t i = 0; i < nv; i++) {
            gn_variable_info v;
            if (gn_graph_variable(g, i, &v) == GN_OK) total += v.bytes;
        }
        fprintf(out, "variables: %zu (%" PRIu64 " bytes)\n", nv, total);
        for (size_t i = 0; i < nv; i++) {
            gn_variable_info v;
            if (gn_graph_variable(g, i, &v) != GN_OK) {
                fprintf(stderr, "grapnel inspect: %s\n", gn_graph_errmsg(g));
                rc = 1;
                break;
            }
            fprintf(out, "  %s %s ", v.name, dtype_str(v.dtype));
            print_shape(out, v.rank, v.dims);
            fprintf(out, " %" PRIu64 " bytes\n", v.bytes);
        }
    }
    size_t na = gn_graph_asset_count(g);
    fprintf(out, "assets: %zu\n", na);
    for (size_t i = 0; i < na; i++)
        fprintf(out, "  %s <- %s\n", gn_graph_asset_filename(g, i), gn_graph_asset_tensor(g, i));
    size_t nf = gn_graph_function_count(g);
    fprintf(out, "functions: %zu\n", nf);
    for (size_t i = 0; i < nf; i++)
        fprintf(out, "  %s (%zu nodes)\n", gn_graph_function_name(g, i), gn_graph_function_node_count(g, i));
    return rc;
}

/* ---- freeze ---------------------------------------------------------------------------- */
static int freeze_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "grapnel freeze: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see grapnel freeze --help)\n");
    return EXIT_USAGE;
}

int gn_cli_freeze(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *sig = NULL, *tags = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--signature") == 0 || strcmp(a, "--tag") == 0 ||
             strcmp(a, "--tags") == 0) &&
            i + 1 >= argc)
            return freeze_usage("%s needs a value", a);
        if (strcmp(a, "-o") == 0) out = argv[++i];
        else if (strcmp(a, "--signature") == 0) sig = argv[++i];
        else if (strncmp(a, "--signature=", 12) == 0) sig = a + 12;
        else if (strcmp(a, "--tag") == 0 || strcmp(a, "--tags") == 0) tags = argv[++i];
        else if (strncmp(a, "--tag=", 6) == 0) tags = a + 6;
        else if (a[0] == '-' && a[1]) return freeze_usage("unknown option '%s'", a);
        else if (!in) in = a;
        else return freeze_usage("unexpected argument '%s'", a);
    }
    if (!in) return freeze_usage("%s", "a SavedModel directory is required");
    if (!out) return freeze_usage("%s", "-o OUT.pb is required");
    size_t n = strlen(out);
    gn_format fmt = n >= 6 && strcmp(out + n - 6, ".pbtxt") == 0 ? GN_FORMAT_TEXT : GN_FORMAT_BINARY;
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = tags;
    gn_graph *g = NULL;
    if (gn_graph_load(in, &lo, &g) != GN_OK) {
        fprintf(stderr, "grapnel freeze: %s\n", g ? gn_graph_errmsg(g) : "out of memory");
        gn_graph_free(g);
        return 1;
    }
    int rc = 0;
    gn_graph *fz = NULL;
    if (!gn_cli_is_savedmodel(g)) {
        fprintf(stderr, "grapnel freeze: %s: not a SavedModel\n", in);
        rc = 1;
    } else if (gn_graph_freeze(g, sig, &fz) != GN_OK) {
        fprintf(stderr, "grapnel freeze: %s\n", gn_graph_errmsg(g));
        rc = 1;
    } else if (gn_graph_save(fz, out, fmt) != GN_OK) {
        fprintf(stderr, "grapnel freeze: %s\n", gn_graph_errmsg(fz));
        rc = 1;
    } else {
        const char *key = sig ? sig : gn_graph_default_signature(g);
        printf("froze signature '%s' of %s: %zu nodes -> %s\n", key, in, gn_graph_node_count(fz), out);
        for (int32_t o = 0; o <= 1; o++) {
            size_t na = 0;
            gn_graph_signature_args(g, key, o, &na);
            for (size_t k = 0; k < na; k++) {
                gn_signature_arg a;
                if (gn_graph_signature_arg(g, key, o, k, &a) == GN_OK)
                    printf("  %s %s: %s\n", o ? "fetch" : "feed ", a.key, a.tensor);
            }
        }
    }
    gn_graph_free(fz);
    gn_graph_free(g);
    return rc;
}
