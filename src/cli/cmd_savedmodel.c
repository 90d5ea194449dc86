/* SavedModel commands: the SavedModel part of `grapnel inspect`, and
 * `grapnel freeze DIR -o OUT.pb [--signature NAME] [--tag T]`. Public API only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "grapnel/grapnel.h"

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

#define INIT_OP_KEY "__saved_model_init_op"

/* The node the SavedModel runs once when it loads (TensorFlow's
 * __saved_model_init_op: table and asset initializers); NULL when none. */
static const char *init_op(const gn_graph *g)
{
    gn_signature_arg a;
    size_t n = 0;
    if (!gn_graph_signature_method(g, INIT_OP_KEY) || gn_graph_signature_args(g, INIT_OP_KEY, 1, &n) != GN_OK || !n ||
        gn_graph_signature_arg(g, INIT_OP_KEY, 1, 0, &a) != GN_OK)
        return NULL;
    return a.tensor;
}

/* Tags, signatures (the init op apart) and the init op: what `inspect` prints
 * first on a SavedModel, and all that `inspect --signatures` prints. */
int gn_cli_savedmodel_inspect_head(gn_graph *g, FILE *out)
{
    fprintf(out, "SavedModel tags: %s\n", gn_graph_tags(g)[0] ? gn_graph_tags(g) : "(none)");
    size_t ns = gn_graph_signature_count(g), shown = 0;
    for (size_t i = 0; i < ns; i++) shown += strcmp(gn_graph_signature_key(g, i), INIT_OP_KEY) != 0;
    fprintf(out, "signatures: %zu\n", shown);
    for (size_t i = 0; i < ns; i++) {
        const char *key = gn_graph_signature_key(g, i);
        if (!strcmp(key, INIT_OP_KEY)) continue;
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
    const char *init = init_op(g);
    fprintf(out, "init op: %s\n", init ? init : "(none)");
    return 0;
}

/* Variables, assets and the function count: printed after the graph's summary. */
int gn_cli_savedmodel_inspect_tail(gn_graph *g, FILE *out)
{
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
    fprintf(out, "functions: %zu\n", gn_graph_function_count(g));
    return rc;
}

static void json_arg(gn_json *j, const gn_signature_arg *a)
{
    gn_json_begin(j, '{');
    gn_json_key(j, "key");
    gn_json_str(j, a->key);
    gn_json_key(j, "tensor");
    gn_json_str(j, a->tensor[0] ? a->tensor : NULL);
    gn_json_key(j, "dtype");
    gn_json_str(j, a->dtype ? gn_dtype_name(a->dtype) : NULL);
    gn_json_key(j, "shape");
    gn_json_shape(j, a->rank, a->dims);
    gn_json_end(j, '}');
}

int gn_cli_savedmodel_json(gn_json *j, gn_graph *g, int full)
{
    gn_json_key(j, "tags");
    gn_json_str(j, gn_graph_tags(g));
    gn_json_key(j, "signatures");
    gn_json_begin(j, '{');
    for (size_t i = 0; i < gn_graph_signature_count(g); i++) {
        const char *key = gn_graph_signature_key(g, i);
        if (!strcmp(key, INIT_OP_KEY)) continue;
        gn_json_key(j, key);
        gn_json_begin(j, '{');
        gn_json_key(j, "method");
        gn_json_str(j, gn_graph_signature_method(g, key));
        for (int32_t o = 0; o <= 1; o++) {
            size_t n = 0;
            gn_json_key(j, o ? "outputs" : "inputs");
            gn_json_begin(j, '[');
            if (gn_graph_signature_args(g, key, o, &n) == GN_OK)
                for (size_t k = 0; k < n; k++) {
                    gn_signature_arg a;
                    if (gn_graph_signature_arg(g, key, o, k, &a) == GN_OK) json_arg(j, &a);
                }
            gn_json_end(j, ']');
        }
        gn_json_end(j, '}');
    }
    gn_json_end(j, '}');
    gn_json_key(j, "init_op");
    gn_json_str(j, init_op(g));
    if (!full) return 0;
    size_t nv = 0;
    if (gn_graph_variable_count(g, &nv) != GN_OK) {
        fprintf(stderr, "grapnel inspect: %s\n", gn_graph_errmsg(g));
        return 1;
    }
    gn_json_key(j, "variables");
    gn_json_begin(j, '[');
    for (size_t i = 0; i < nv; i++) {
        gn_variable_info v;
        if (gn_graph_variable(g, i, &v) != GN_OK) {
            gn_json_end(j, ']');
            fprintf(stderr, "grapnel inspect: %s\n", gn_graph_errmsg(g));
            return 1;
        }
        gn_json_begin(j, '{');
        gn_json_key(j, "name");
        gn_json_str(j, v.name);
        gn_json_key(j, "dtype");
        gn_json_str(j, v.dtype ? gn_dtype_name(v.dtype) : NULL);
        gn_json_key(j, "shape");
        gn_json_shape(j, v.rank, v.dims);
        gn_json_key(j, "bytes");
        gn_json_uint(j, v.bytes);
        gn_json_end(j, '}');
    }
    gn_json_end(j, ']');
    gn_json_key(j, "assets");
    gn_json_begin(j, '[');
    for (size_t i = 0; i < gn_graph_asset_count(g); i++) {
        gn_json_begin(j, '{');
        gn_json_key(j, "file");
        gn_json_str(j, gn_graph_asset_filename(g, i));
        gn_json_key(j, "tensor");
        gn_json_str(j, gn_graph_asset_tensor(g, i));
        gn_json_end(j, '}');
    }
    gn_json_end(j, ']');
    return 0;
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
        else if (a[0] == '-' && a[1]) return gn_cli_unknown_option("freeze", a);
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
    gn_cli_graph_env(g);
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
