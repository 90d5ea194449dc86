/* Helpers shared by the CLI's commands: flag suggestions, JSON output, timing
 * statistics and progress. Public API only (include/grapnel). */
#include "cli.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- suggestions ------------------------------------------------------------------- */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 256 || lb > 256) return SIZE_MAX;
    size_t row[257];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *gn_cli_suggest(const char *word, const char *const *cands, size_t n)
{
    const char *w = word;
    while (*w == '-') w++;
    size_t wl = strlen(w);
    /* an abbreviation: a candidate that begins with the word ("--sig": "--signature") */
    if (wl >= 3)
        for (size_t i = 0; i < n; i++) {
            const char *c = cands[i];
            while (*c == '-') c++;
            if (strncmp(c, w, wl) == 0) return cands[i];
        }
    /* a misspelling: the nearest within max(1, len/4) edits (none for words under 3) */
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    size_t limit = wl < 3 ? 0 : wl / 4 > 1 ? wl / 4 : 1;
    if (best && best_d <= limit) return best;
    /* a longer word that begins with a candidate ("--tolerance": "--tol") */
    for (size_t i = 0; i < n; i++) {
        const char *c = cands[i];
        while (*c == '-') c++;
        if (strlen(c) >= 3 && strncmp(w, c, strlen(c)) == 0) return cands[i];
    }
    return NULL;
}

/* The flags of a help text: every "--name" (and "-o"), once each. */
static size_t help_flags(const char *text, char flags[][40], size_t max)
{
    size_t n = 0;
    for (const char *p = text; p && *p && n < max; p++) {
        if (*p != '-' || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))) continue;
        size_t len = 1;
        while (p[len] == '-') len++;
        if (len > 2 || !isalpha((unsigned char)p[len])) continue;
        while (isalnum((unsigned char)p[len]) || p[len] == '-' || p[len] == '_') len++;
        if (len >= 40) continue;
        char f[40];
        memcpy(f, p, len);
        f[len] = 0;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = strcmp(flags[k], f) == 0;
        if (!seen) memcpy(flags[n++], f, len + 1);
        p += len - 1;
    }
    return n;
}

int gn_cli_unknown_option(const char *cmd, const char *arg)
{
    char flags[128][40];
    const char *cands[128];
    size_t n = help_flags(gn_cli_usage(cmd), flags, 128);
    for (size_t i = 0; i < n; i++) cands[i] = flags[i];
    /* --name=value: the name is what is misspelt */
    char name[256];
    snprintf(name, sizeof name, "%s", arg);
    char *eq = strchr(name, '=');
    if (eq) *eq = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cands[i], arg)) {   /* a known flag at the end of the line */
            fprintf(stderr, "grapnel %s: %s needs a value\n(see grapnel %s --help)\n", cmd, arg, cmd);
            return EXIT_USAGE;
        }
    const char *s = gn_cli_suggest(name, cands, n);
    fprintf(stderr, "grapnel %s: unknown option '%s'", cmd, arg);
    if (s) fprintf(stderr, "; did you mean '%s'?", s);
    fprintf(stderr, "\n(see grapnel %s --help)\n", cmd);
    return EXIT_USAGE;
}

void gn_cli_key_hint(char *err, size_t errlen, const char *defaults)
{
    if (!err || !defaults || strstr(err, "did you mean")) return;
    const char *u = strstr(err, "unknown ");
    const char *q = u ? strchr(u, '\'') : NULL;
    const char *qe = q ? strchr(q + 1, '\'') : NULL;
    if (!qe || qe - q - 1 >= 256) return;
    char key[256];
    memcpy(key, q + 1, (size_t)(qe - q - 1));
    key[qe - q - 1] = 0;
    /* the keys of the defaults: a quoted name after "{" or ", " and before ':' */
    char names[64][64];
    const char *cands[64];
    size_t n = 0;
    for (const char *p = defaults; *p && n < 64; p++) {
        if (*p != '\'' || !(p == defaults + 1 || (p >= defaults + 2 && p[-2] == ',' && p[-1] == ' '))) continue;
        const char *e = strchr(p + 1, '\'');
        if (!e) break;
        if (e[1] == ':' && e - p - 1 < 64) {
            memcpy(names[n], p + 1, (size_t)(e - p - 1));
            names[n][e - p - 1] = 0;
            cands[n] = names[n];
            n++;
        }
        p = e;
    }
    const char *near = gn_cli_suggest(key, cands, n);
    if (!near || !strcmp(near, key)) return;
    size_t at = (size_t)(qe + 1 - err);
    char tail[1024];
    snprintf(tail, sizeof tail, "%s", err + at);
    snprintf(err + at, errlen - at, "; did you mean '%s'?%s", near, tail);
}

/* ---- JSON -------------------------------------------------------------------------- */
void gn_json_init(gn_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->first = true;
}

static void indent(gn_json *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
}

/* Before a value or a key: the comma and the line break. */
static void sep(gn_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0) return;
    if (j->inline_depth && j->depth >= j->inline_depth) {
        if (!j->first) fputs(", ", j->f);
        j->first = false;
        return;
    }
    if (!j->first) fputc(',', j->f);
    indent(j);
    j->first = false;
}

void gn_json_begin(gn_json *j, char bracket)
{
    sep(j);
    fputc(bracket, j->f);
    j->depth++;
    j->first = true;
}

void gn_json_begin_inline(gn_json *j, char bracket)
{
    gn_json_begin(j, bracket);
    if (!j->inline_depth) j->inline_depth = j->depth;
}

void gn_json_end(gn_json *j, char bracket)
{
    bool in_line = j->inline_depth && j->depth >= j->inline_depth;
    j->depth--;
    if (j->inline_depth > j->depth) j->inline_depth = 0;
    if (!j->first && !in_line) indent(j);
    fputc(bracket, j->f);
    j->first = false;
    if (j->depth == 0) fputc('\n', j->f);
}

void gn_json_strn(gn_json *j, const char *s, size_t n)
{
    sep(j);
    fputc('"', j->f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(j->f, "\\%c", c);
        else if (c == '\n') fputs("\\n", j->f);
        else if (c == '\t') fputs("\\t", j->f);
        else if (c == '\r') fputs("\\r", j->f);
        else if (c < 0x20 || c == 0x7f) fprintf(j->f, "\\u%04x", c);
        else if (c < 0x80) fputc(c, j->f);
        else {
            /* UTF-8 passes when well formed; other bytes as the code point of the byte */
            size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
            bool ok = len && i + len <= n;
            for (size_t k = 1; ok && k < len; k++) ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
            if (ok) {
                fwrite(s + i, 1, len, j->f);
                i += len - 1;
            } else {
                fprintf(j->f, "\\u%04x", c);
            }
        }
    }
    fputc('"', j->f);
}

void gn_json_str(gn_json *j, const char *s)
{
    if (!s) gn_json_null(j);
    else gn_json_strn(j, s, strlen(s));
}

void gn_json_key(gn_json *j, const char *key)
{
    gn_json_str(j, key);
    fputs(": ", j->f);
    j->after_key = true;
}

void gn_json_int(gn_json *j, int64_t v)
{
    sep(j);
    fprintf(j->f, "%" PRId64, v);
}

void gn_json_uint(gn_json *j, uint64_t v)
{
    sep(j);
    fprintf(j->f, "%" PRIu64, v);
}

void gn_json_num(gn_json *j, double v)
{
    sep(j);
    if (isnan(v)) fputs("NaN", j->f);
    else if (isinf(v)) fputs(v < 0 ? "-Infinity" : "Infinity", j->f);
    else if (fabs(v) < 1e15 && v == (double)(int64_t)v) fprintf(j->f, "%.1f", v);   /* integral: no floor(), no libm */
    else fprintf(j->f, "%.17g", v);
}

void gn_json_float(gn_json *j, float v)
{
    if (!isfinite(v)) {
        gn_json_num(j, v);
        return;
    }
    sep(j);
    char b[32];
    for (int p = 6; p <= 9; p++) {
        snprintf(b, sizeof b, "%.*g", p, (double)v);
        if (strtof(b, NULL) == v) break;
    }
    fputs(b, j->f);
}

void gn_json_bool(gn_json *j, bool v)
{
    sep(j);
    fputs(v ? "true" : "false", j->f);
}

void gn_json_null(gn_json *j)
{
    sep(j);
    fputs("null", j->f);
}

void gn_json_raw(gn_json *j, const char *json)
{
    sep(j);
    fputs(json, j->f);
}

/* ---- Python literals to JSON ---------------------------------------------------------- */
typedef struct pylit {
    const char *s;
    size_t i;
} pylit;

static void py_space(pylit *p)
{
    while (isspace((unsigned char)p->s[p->i])) p->i++;
}

static bool py_value(gn_json *j, pylit *p, bool as_key);

/* A quoted string ('...' or "..."), Python escapes \\ \' \" \n \t \r \xNN */
static bool py_string(gn_json *j, pylit *p, bool as_key)
{
    char q = p->s[p->i++];
    size_t cap = 64, n = 0;
    char *b = malloc(cap);
    if (!b) return false;
    while (p->s[p->i] && p->s[p->i] != q) {
        char c = p->s[p->i++];
        if (c == '\\' && p->s[p->i]) {
            char e = p->s[p->i++];
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == 'r') c = '\r';
            else if (e == 'x' && isxdigit((unsigned char)p->s[p->i]) && isxdigit((unsigned char)p->s[p->i + 1])) {
                char hex[3] = {p->s[p->i], p->s[p->i + 1], 0};
                c = (char)strtol(hex, NULL, 16);
                p->i += 2;
            } else c = e;
        }
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                return false;
            }
            b = nb;
        }
        b[n++] = c;
    }
    if (p->s[p->i] != q) {
        free(b);
        return false;
    }
    p->i++;
    if (as_key) {
        b[n] = 0;
        gn_json_key(j, b);
    } else {
        gn_json_strn(j, b, n);
    }
    free(b);
    return true;
}

static bool py_seq(gn_json *j, pylit *p, char close, bool dict)
{
    p->i++;
    gn_json_begin(j, dict ? '{' : '[');
    py_space(p);
    while (p->s[p->i] && p->s[p->i] != close) {
        if (dict) {
            py_space(p);
            if (!py_value(j, p, true)) return false;
            py_space(p);
            if (p->s[p->i++] != ':') return false;
        }
        py_space(p);
        if (!py_value(j, p, false)) return false;
        py_space(p);
        if (p->s[p->i] == ',') p->i++;
        else if (p->s[p->i] != close) return false;
        py_space(p);
    }
    if (p->s[p->i] != close) return false;
    p->i++;
    gn_json_end(j, dict ? '}' : ']');
    return true;
}

static bool py_value(gn_json *j, pylit *p, bool as_key)
{
    py_space(p);
    char c = p->s[p->i];
    if (c == '\'' || c == '"') return py_string(j, p, as_key);
    if (as_key) return false;
    if (c == '{') return py_seq(j, p, '}', true);
    if (c == '[') return py_seq(j, p, ']', false);
    if (c == '(') return py_seq(j, p, ')', false);
    size_t start = p->i;
    if (c == '-' || c == '+' || isdigit((unsigned char)c)) {
        char *end;
        double v = strtod(p->s + p->i, &end);
        size_t len = (size_t)(end - (p->s + p->i));
        if (!len) return false;
        bool integer = true;
        for (size_t k = 0; k < len; k++)
            if (strchr(".eE", p->s[p->i + k])) integer = false;
        if (integer) gn_json_int(j, strtoll(p->s + p->i, NULL, 10));
        else gn_json_num(j, v);
        p->i += len;
        return true;
    }
    while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_' || p->s[p->i] == '.') p->i++;
    size_t len = p->i - start;
    if (!len) return false;
    if (p->s[p->i] == '(') {   /* a call, e.g. MaxShardSizePolicy(100): as its text */
        int depth = 0;
        do {
            if (p->s[p->i] == '(') depth++;
            else if (p->s[p->i] == ')') depth--;
            p->i++;
        } while (p->s[p->i] && depth > 0);
        gn_json_strn(j, p->s + start, p->i - start);
        return true;
    }
    if (len == 4 && !strncmp(p->s + start, "True", 4)) gn_json_bool(j, true);
    else if (len == 5 && !strncmp(p->s + start, "False", 5)) gn_json_bool(j, false);
    else if (len == 4 && !strncmp(p->s + start, "None", 4)) gn_json_null(j);
    else gn_json_strn(j, p->s + start, len);   /* VariablePolicy.NONE and the like */
    return true;
}

bool gn_json_pyliteral(gn_json *j, const char *text)
{
    pylit p = {text, 0};
    return text && py_value(j, &p, false);
}

void gn_json_header(gn_json *j, const char *command)
{
    gn_json_begin(j, '{');
    gn_json_key(j, "schema");
    gn_json_int(j, GN_CLI_JSON_SCHEMA);
    gn_json_key(j, "command");
    gn_json_str(j, command);
    gn_json_key(j, "options");
    gn_json_begin(j, '{');
}

void gn_json_shape(gn_json *j, int32_t rank, const int64_t *dims)
{
    if (rank < 0) {
        gn_json_null(j);
        return;
    }
    gn_json_begin_inline(j, '[');
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) gn_json_null(j);
        else gn_json_int(j, dims[d]);
    }
    gn_json_end(j, ']');
}

void gn_json_strs(gn_json *j, const char *const *s, size_t n)
{
    gn_json_begin_inline(j, '[');
    for (size_t i = 0; i < n; i++) gn_json_str(j, s[i]);
    gn_json_end(j, ']');
}

/* ---- timing --------------------------------------------------------------------------- */
double gn_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void gn_timing_from(gn_timing *t, double *lat_s, int n, int warmup)
{
    memset(t, 0, sizeof *t);
    t->runs = n;
    t->warmup = warmup;
    if (n <= 0) return;
    qsort(lat_s, (size_t)n, sizeof *lat_s, cmp_double);
    for (int i = 0; i < n; i++) t->total_s += lat_s[i];
    t->min_ms = lat_s[0] * 1e3;
    t->max_ms = lat_s[n - 1] * 1e3;
    t->median_ms = (n % 2 ? lat_s[n / 2] : (lat_s[n / 2 - 1] + lat_s[n / 2]) / 2) * 1e3;
    int rank = (9 * n + 9) / 10;   /* ceil(0.9 n) */
    t->p90_ms = lat_s[rank - 1] * 1e3;
    t->mean_ms = t->total_s / n * 1e3;
    t->throughput = t->total_s > 0 ? n / t->total_s : 0;
}

void gn_timing_print(const gn_timing *t, const char *cmd, FILE *f)
{
    fprintf(f, "grapnel %s: %d runs after %d warmup\n", cmd, t->runs, t->warmup);
    fprintf(f, "  latency (ms): min %.3f  median %.3f  p90 %.3f  max %.3f  mean %.3f\n", t->min_ms, t->median_ms,
            t->p90_ms, t->max_ms, t->mean_ms);
    fprintf(f, "  throughput: %.1f runs/s\n", t->throughput);
}

void gn_timing_json(gn_json *j, const gn_timing *t)
{
    gn_json_begin(j, '{');
    gn_json_key(j, "runs");
    gn_json_int(j, t->runs);
    gn_json_key(j, "warmup");
    gn_json_int(j, t->warmup);
    gn_json_key(j, "latency_ms");
    gn_json_begin(j, '{');
    gn_json_key(j, "min");
    gn_json_num(j, t->min_ms);
    gn_json_key(j, "median");
    gn_json_num(j, t->median_ms);
    gn_json_key(j, "p90");
    gn_json_num(j, t->p90_ms);
    gn_json_key(j, "max");
    gn_json_num(j, t->max_ms);
    gn_json_key(j, "mean");
    gn_json_num(j, t->mean_ms);
    gn_json_end(j, '}');
    gn_json_key(j, "throughput_per_s");
    gn_json_num(j, t->throughput);
    gn_json_end(j, '}');
}

/* ---- progress ------------------------------------------------------------------------- */
bool gn_cli_progress_on(bool big)
{
    const char *e = getenv("GRAPNEL_PROGRESS");
    if (e && strcmp(e, "1") == 0) return true;
    if (e && strcmp(e, "0") == 0) return false;
    return big && isatty(STDERR_FILENO);
}

/* Bytes of a model: the file, or a SavedModel directory's saved_model.pb and variables. */
static uint64_t model_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return (uint64_t)st.st_size;
    uint64_t total = 0;
    const char *parts[] = {"saved_model.pb", "variables/variables.data-00000-of-00001"};
    for (size_t i = 0; i < 2; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, parts[i]);
        if (stat(p, &st) == 0) total += (uint64_t)st.st_size;
    }
    return total;
}

gn_graph *gn_cli_load(const char *cmd, const char *path, const gn_load_options *lo)
{
    uint64_t bytes = model_bytes(path);
    bool progress = gn_cli_progress_on(bytes > (64u << 20));
    double t0 = gn_cli_now();
    if (progress) fprintf(stderr, "grapnel: loading %s (%.1f MiB)...\n", path, (double)bytes / (1 << 20));
    gn_graph *g = NULL;
    gn_status s = gn_graph_load(path, lo, &g);
    if (s != GN_OK) {
        fprintf(stderr, "grapnel%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", g ? gn_graph_errmsg(g) : gn_status_str(s));
        gn_graph_free(g);
        return NULL;
    }
    if (progress) fprintf(stderr, "grapnel: loaded %zu nodes in %.2f s\n", gn_graph_node_count(g), gn_cli_now() - t0);
    gn_cli_graph_env(g);
    return g;
}

void gn_cli_graph_env(gn_graph *g)
{
    const char *e = getenv("GRAPNEL_FSYNC");
    gn_graph_set_fsync(g, e && strcmp(e, "1") == 0);
}
