/* A preloaded library for tests/cli_test.c: each fsync the process makes is
 * written, as the path of its file descriptor, one per line, to the file
 * $GN_FSYNC_LOG, and then made. It shows which files and directories the CLI
 * flushes, which nothing else a test can see does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fsync(int fd)
{
    const char *log = getenv("GN_FSYNC_LOG");
    if (log) {
        char proc[64], target[4096];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "%s\n", target);
            fclose(f);
        }
    }
    int (*real)(int) = NULL;
    *(void **)&real = dlsym(RTLD_NEXT, "fsync");
    return real ? real(fd) : -1;
}
