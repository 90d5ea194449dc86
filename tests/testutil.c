#define _XOPEN_SOURCE 700   /* nftw */
#include "testutil.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *gn_test_data(const char *rel, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", GN_TEST_DATA, rel);
    return out;
}

bool gn_test_corpus(const char *rel, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%s", GN_CORPUS_DIR, rel);
    struct stat st;
    return stat(out, &st) == 0;
}

const char *gn_test_tmpdir(void)
{
    static char dir[1024];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/%d", GN_TMP_DIR, (int)getpid());
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "cannot create %s\n", dir);
    }
    return dir;
}

int gn_test_sh(char **output, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8300];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        pclose(p);
        return -1;
    }
    size_t r;
    while ((r = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += r;
        if (cap - len < 2) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) break;
            buf = nb;
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    if (output) *output = buf;
    else free(buf);
    if (st == -1) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

unsigned char *gn_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

bool gn_test_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

void gn_test_rm_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

bool gn_test_same_tree(const char *a, const char *b, char *why, size_t whylen)
{
    struct stat sa, sb;
    if (lstat(a, &sa) != 0 || lstat(b, &sb) != 0) {
        snprintf(why, whylen, "%s or %s is missing", a, b);
        return false;
    }
    if (S_ISDIR(sa.st_mode) != S_ISDIR(sb.st_mode)) {
        snprintf(why, whylen, "%s: a file against a directory", a);
        return false;
    }
    if (!S_ISDIR(sa.st_mode)) {
        size_t na = 0, nb = 0;
        unsigned char *da = gn_test_slurp(a, &na), *db = gn_test_slurp(b, &nb);
        bool ok = da && db && na == nb && memcmp(da, db, na) == 0;
        if (!ok) snprintf(why, whylen, "%s: %zu bytes, not the %zu of %s", a, na, nb, b);
        free(da);
        free(db);
        return ok;
    }
    struct dirent **la = NULL, **lb = NULL;
    int n = scandir(a, &la, NULL, alphasort), m = scandir(b, &lb, NULL, alphasort);
    bool ok = n == m && n >= 0;
    if (!ok) snprintf(why, whylen, "%s: %d entries, %s has %d", a, n - 2, b, m - 2);
    for (int i = 0; ok && i < n; i++) {
        if (strcmp(la[i]->d_name, lb[i]->d_name) != 0) {
            snprintf(why, whylen, "%s: '%s' where %s has '%s'", a, la[i]->d_name, b, lb[i]->d_name);
            ok = false;
        } else if (strcmp(la[i]->d_name, ".") && strcmp(la[i]->d_name, "..")) {
            char pa[4096], pb[4096];
            snprintf(pa, sizeof pa, "%s/%s", a, la[i]->d_name);
            snprintf(pb, sizeof pb, "%s/%s", b, lb[i]->d_name);
            ok = gn_test_same_tree(pa, pb, why, whylen);
        }
    }
    for (int i = 0; i < n; i++) free(la[i]);
    for (int i = 0; i < m; i++) free(lb[i]);
    free(la);
    free(lb);
    return ok;
}

int gn_test_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* ---- loading ------------------------------------------------------------------------------- */
gn_graph *gn_test_load_text(const char *text, int validate)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.validate = validate;
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(text, strlen(text), "t.pbtxt", &o, &g) != GN_OK)
        fail_msg("load: %s", g ? gn_graph_errmsg(g) : "out of memory");
    return g;
}

gn_graph *gn_test_load(const char *path)
{
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("load %s: %s", path, g ? gn_graph_errmsg(g) : "out of memory");
    return g;
}

gn_graph *gn_test_load_data(const char *rel)
{
    char path[2048];
    gn_test_data(rel, path, sizeof path);
    return gn_test_load(path);
}

gn_graph *gn_test_load_corpus(const char *rel)
{
    char path[2048];
    if (!gn_test_corpus(rel, path, sizeof path)) return NULL;
    return gn_test_load(path);
}

/* ---- the golden manifest ---------------------------------------------------------------- */
/* Copies the word starting at *p (up to a space or the end) into out;
 * returns 0, or -1 when the word is empty or too long. */
static int manifest_word(const char **p, char *out, size_t outlen)
{
    const char *s = *p;
    while (*s == ' ') s++;
    size_t n = 0;
    while (s[n] && s[n] != ' ') n++;
    if (n == 0 || n >= outlen) return -1;
    memcpy(out, s, n);
    out[n] = '\0';
    *p = s + n;
    return 0;
}

static int manifest_blank(const char *p)
{
    while (*p == ' ') p++;
    return *p == '\0';
}

int gn_test_read_manifest(gn_test_manifest *m, char *err, size_t errlen)
{
    char path[2048];
    gn_test_data("golden/manifest.txt", path, sizeof path);
    memset(m, 0, sizeof *m);
    size_t len = 0;
    unsigned char *text = gn_test_slurp(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read (run tools/make_goldens.py)", path);
        return -1;
    }
    gn_test_golden *cur = NULL;
    char e[512] = "";
    size_t lineno = 0;
    char line[2048];
    size_t pos = 0;
    while (pos < len && !e[0]) {
        size_t n = 0;
        while (pos + n < len && text[pos + n] != '\n') n++;
        lineno++;
        if (n >= sizeof line) {
            snprintf(e, sizeof e, "line %zu: too long", lineno);
            break;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        if (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
        if (line[0] == '#' || manifest_blank(line)) continue;
        const char *p = line;
        char key[32], a[GN_TEST_NAME_LEN], b[GN_TEST_NAME_LEN];
        if (manifest_word(&p, key, sizeof key)) {
            snprintf(e, sizeof e, "line %zu: bad line '%.200s'", lineno, line);
        } else if (strcmp(key, "model") == 0) {
            if (cur) snprintf(e, sizeof e, "line %zu: model inside model '%s' (missing end)", lineno, cur->name);
            else if (m->n == GN_TEST_MAX_MODELS) snprintf(e, sizeof e, "line %zu: more than %d models", lineno, GN_TEST_MAX_MODELS);
            else if (manifest_word(&p, a, sizeof a) || !manifest_blank(p))
                snprintf(e, sizeof e, "line %zu: expected 'model NAME'", lineno);
            else {
                cur = &m->models[m->n++];
                snprintf(cur->name, sizeof cur->name, "%s", a);
            }
        } else if (!cur) {
            snprintf(e, sizeof e, "line %zu: '%s' outside a model block", lineno, key);
        } else if (strcmp(key, "graph") == 0) {
            if (manifest_word(&p, cur->graph, sizeof cur->graph) || !manifest_blank(p))
                snprintf(e, sizeof e, "line %zu: expected 'graph PATH'", lineno);
        } else if (strcmp(key, "freeze") == 0) {
            /* free text: how the model was frozen */
        } else if (strcmp(key, "tol") == 0) {
            char *end = NULL;
            if (manifest_word(&p, a, sizeof a) || !manifest_blank(p) || (cur->tol = strtod(a, &end), *end) ||
                !(cur->tol > 0))
                snprintf(e, sizeof e, "line %zu: expected 'tol X' with X > 0", lineno);
            cur->has_tol = 1;
        } else if (strcmp(key, "feed") == 0 || strcmp(key, "fetch") == 0) {
            int feed = key[1] == 'e' && key[2] == 'e';
            size_t *cnt = feed ? &cur->n_feeds : &cur->n_fetches;
            gn_test_golden_io *io = feed ? cur->feeds : cur->fetches;
            if (manifest_word(&p, a, sizeof a) || manifest_word(&p, b, sizeof b) || !manifest_blank(p))
                snprintf(e, sizeof e, "line %zu: expected '%s TENSOR FILE.npy'", lineno, key);
            else if (*cnt == (feed ? GN_TEST_MAX_IO : GN_TEST_MAX_IO))
                snprintf(e, sizeof e, "line %zu: too many %ses", lineno, key);
            else {
                snprintf(io[*cnt].tensor, sizeof io[*cnt].tensor, "%s", a);
                snprintf(io[*cnt].file, sizeof io[*cnt].file, "%s", b);
                (*cnt)++;
            }
        } else if (strcmp(key, "end") == 0) {
            if (!cur->graph[0] || !cur->has_tol || cur->n_feeds == 0 || cur->n_fetches == 0)
                snprintf(e, sizeof e, "line %zu: model '%s' lacks graph, tol, a feed or a fetch", lineno,
                         cur->name);
            cur = NULL;
        } else {
            snprintf(e, sizeof e, "line %zu: unknown key '%s'", lineno, key);
        }
    }
    if (!e[0] && cur) snprintf(e, sizeof e, "model '%s' has no end", cur->name);
    free(text);
    if (!e[0]) return 0;
    snprintf(err, errlen, "%s: %s", path, e);
    return -1;
}
