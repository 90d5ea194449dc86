#include "testutil.h"

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
