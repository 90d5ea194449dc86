/* bench_floor: what any optimizer that reads a model into its own memory,
 * changes its weights and writes it back must spend on the file's bytes
 * alone, with none of the work on the graph.
 *
 *   bench_floor [--fold] FILE OUT
 *
 * Reads FILE whole into fresh memory with the library's read (gn__read_file:
 * the parallel, populated pread the loader uses), then with --fold
 * multiplies every whole float32 of the buffer by a constant in place on two
 * threads (each half on one: one pass of reads and writes over every byte,
 * as folding a scale into every weight does, and as constant folding's
 * in-place batch runs), then writes the buffer to OUT with the library's
 * atomic gathered write (gn__write_file_atomicv, 2 MiB per call, no fsync:
 * a file of no name, linked and renamed over OUT).
 *
 * Timed from outside (bench/vs_grappler.py) as a whole process, next to `cp`
 * and `grapnel optimize`: process start and exit count for all three. Also
 * prints one line on stderr:
 *   read_ms=.. fold_ms=.. write_ms=.. bytes=..
 * Exits 1 with the library's message when the read or the write fails. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "common/common.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

typedef struct half {
    float *p;
    size_t n;
} half;

static void *scale_half(void *u)
{
    half *h = u;
    for (size_t i = 0; i < h->n; i++) h->p[i] *= 1.0009765625f;
    return NULL;
}

int main(int argc, char **argv)
{
    bool fold = argc > 1 && strcmp(argv[1], "--fold") == 0;
    if (argc != 3 + (fold ? 1 : 0)) {
        fprintf(stderr, "usage: bench_floor [--fold] FILE OUT\n");
        return 2;
    }
    const char *in = argv[1 + fold], *out = argv[2 + fold];
    gn__err err = {0};
    double t0 = now_ms();
    uint8_t *data;
    size_t size;
    if (gn__read_file(in, &data, &size, &err) != GN_OK) {
        fprintf(stderr, "bench_floor: %s\n", err.msg);
        return 1;
    }
    double t1 = now_ms();
    if (fold) {
        /* malloc's buffer is 16-byte aligned: the floats start at data */
        size_t nf = size / sizeof(float);
        half a = {(float *)(void *)data, nf / 2}, b = {(float *)(void *)data + nf / 2, nf - nf / 2};
        pthread_t t;
        bool started = pthread_create(&t, NULL, scale_half, &b) == 0;
        scale_half(&a);
        if (started) pthread_join(t, NULL);
        else scale_half(&b);
    }
    double t2 = now_ms();
    struct iovec iov = {data, size};
    gn_status s = gn__write_file_atomicv(out, &iov, 1, false, &err);
    double t3 = now_ms();
    free(data);
    if (s != GN_OK) {
        fprintf(stderr, "bench_floor: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "read_ms=%.2f fold_ms=%.2f write_ms=%.2f bytes=%zu\n", t1 - t0, t2 - t1, t3 - t2, size);
    return 0;
}
