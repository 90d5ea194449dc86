/* Error records, arenas, buffers, hashing and file helpers (see common.h). */
#define _GNU_SOURCE   /* O_TMPFILE */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

const char *gn_status_str(gn_status s)
{
    switch (s) {
#define GN_STATUS(name, value, text) case name: return text;
#include "grapnel/status.def"
#undef GN_STATUS
    }
    return "unknown status";
}

void gn_free(void *p) { free(p); }

/* ---- errors ------------------------------------------------------------------ */

/* madvise(advice) over the whole pages inside p[0..n); advice only. */
static void advise_whole_pages(void *p, size_t n, int advice)
{
    const uintptr_t page = 4096;
    if (!p) return;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (e > a) (void)madvise((void *)a, e - a, advice);
}

void gn__release_pages(void *p, size_t n)
{
#if defined(MADV_DONTNEED)
    advise_whole_pages(p, n, MADV_DONTNEED);
#else
    (void)p;
    (void)n;
#endif
}

void gn__err_clear(gn__err *e)
{
    if (!e) return;
    e->code = GN_OK;
    e->msg[0] = '\0';
}

gn_status gn__vfail(gn__err *e, gn_status code, const char *fmt, va_list ap)
{
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    }
    return code;
}

gn_status gn__fail(gn__err *e, gn_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gn__vfail(e, code, fmt, ap);
    va_end(ap);
    return code;
}

void gn__err_prefix(gn__err *e, const char *fmt, ...)
{
    if (!e) return;
    char pre[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre / 2, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t pl = strlen(pre);
    pre[pl++] = ':';
    pre[pl++] = ' ';
    size_t ml = strlen(e->msg);
    if (pl + ml >= sizeof e->msg) ml = sizeof e->msg - pl - 1;
    memmove(e->msg + pl, e->msg, ml);
    memcpy(e->msg, pre, pl);
    e->msg[pl + ml] = '\0';
}

/* ---- arena ------------------------------------------------------------------- */
struct gn__arena_block {
    gn__arena_block *next;
    size_t size, off;
    /* data follows, max_align_t aligned */
    _Alignas(max_align_t) unsigned char data[];
};

void gn__arena_init(gn__arena *a, size_t first_block)
{
    a->head = NULL;
    a->block_size = first_block ? first_block : 4096;
    a->used = 0;
    a->reserved = 0;
    a->oom = false;
}

void gn__arena_free(gn__arena *a)
{
    gn__arena_block *b = a->head;
    while (b) {
        gn__arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
    a->used = a->reserved = 0;
}

bool gn__arena_holds(const gn__arena *a, const void *p, size_t n)
{
    uintptr_t lo = (uintptr_t)p;
    for (const gn__arena_block *b = a->head; b; b = b->next) {
        uintptr_t d = (uintptr_t)b->data;
        if (lo >= d && lo - d <= b->size && n <= b->size - (lo - d)) return true;
    }
    return false;
}

static void *arena_alloc(gn__arena *a, size_t bytes, size_t align)
{
    if (align < 1) align = 1;
    gn__arena_block *b = a->head;
    if (b) {
        size_t off = (b->off + align - 1) & ~(align - 1);
        if (off <= b->size && bytes <= b->size - off) {
            b->off = off + bytes;
            a->used += bytes;
            return b->data + off;
        }
    }
    size_t need = bytes + align;
    if (need < bytes) return NULL;
    size_t size = a->block_size;
    if (need > size / 4) {
        /* large request: a block of its own, put behind the head so the
         * current block keeps serving small requests */
        size = need;
        gn__arena_block *nb = malloc(sizeof *nb + size);
        if (!nb) return NULL;
        nb->size = size;
        size_t off = ((size_t)0 + align - 1) & ~(align - 1);
        nb->off = off + bytes;
        if (b) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = NULL;
            a->head = nb;
        }
        a->used += bytes;
        a->reserved += size;
        return nb->data + off;
    }
    gn__arena_block *nb = malloc(sizeof *nb + size);
    if (!nb) return NULL;
    nb->size = size;
    nb->off = bytes;
    nb->next = b;
    a->head = nb;
    a->used += bytes;
    a->reserved += size;
    if (a->block_size < ((size_t)8 << 20)) a->block_size *= 2;
    return nb->data;
}

void *gn__arena_alloc(gn__arena *a, size_t bytes, size_t align)
{
    void *p = arena_alloc(a, bytes, align);
    if (!p) a->oom = true;
    return p;
}

void *gn__arena_zalloc(gn__arena *a, size_t bytes, size_t align)
{
    void *p = gn__arena_alloc(a, bytes, align);
    if (p) memset(p, 0, bytes);
    return p;
}

char *gn__arena_strndup(gn__arena *a, const char *s, size_t n)
{
    char *p = gn__arena_alloc(a, n + 1, 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *gn__arena_strdup(gn__arena *a, const char *s) { return gn__arena_strndup(a, s, strlen(s)); }

void *gn__arena_memdup(gn__arena *a, const void *p, size_t n)
{
    void *q = gn__arena_alloc(a, n ? n : 1, 16);
    if (q && n) memcpy(q, p, n);
    return q;
}

static void *arena_pb_alloc(void *ctx, size_t size)
{
    return gn__arena_alloc(ctx, size ? size : 1, _Alignof(max_align_t));
}

static void arena_pb_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

void gn__arena_pb_allocator(gn__arena *a, ProtobufCAllocator *out)
{
    out->alloc = arena_pb_alloc;
    out->free = arena_pb_free;
    out->allocator_data = a;
}

/* ---- blobs ------------------------------------------------------------------- */
gn__blob *gn__blob_new(size_t first_block)
{
    gn__blob *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->refs = 1;
    gn__arena_init(&b->arena, first_block);
    return b;
}

gn__blob *gn__blob_ref(gn__blob *b)
{
    if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void gn__blob_unref(gn__blob *b)
{
    if (!b) return;
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        gn__arena_free(&b->arena);
        free(b);
    }
}

/* ---- buffers ----------------------------------------------------------------- */
void gn__buf_init(gn__buf *b) { memset(b, 0, sizeof *b); }

void gn__buf_free(gn__buf *b)
{
    free(b->data);
    gn__buf_init(b);
}

bool gn__buf_reserve(gn__buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void gn__buf_append(gn__buf *b, const void *p, size_t n)
{
    if (!gn__buf_reserve(b, n)) return;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void gn__buf_puts(gn__buf *b, const char *s) { gn__buf_append(b, s, strlen(s)); }
void gn__buf_putc(gn__buf *b, char c) { gn__buf_append(b, &c, 1); }

void gn__buf_printf(gn__buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        gn__buf_append(b, small, (size_t)n);
        return;
    }
    if (!gn__buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *gn__buf_take(gn__buf *b)
{
    if (!gn__buf_reserve(b, 0)) {
        gn__buf_free(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    char *p = b->data;
    gn__buf_init(b);
    return p;
}

static void pb_buffer_append(ProtobufCBuffer *base, size_t len, const uint8_t *data)
{
    gn__pb_buffer *pb = (gn__pb_buffer *)base;
    gn__buf_append(pb->buf, data, len);
}

void gn__pb_buffer_init(gn__pb_buffer *pb, gn__buf *b)
{
    pb->base.append = pb_buffer_append;
    pb->buf = b;
}

/* ---- hashing: 8 bytes at a time, multiply-xorshift mixing ------------------------- */
static inline uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t gn__hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n * 0x100000001b3ull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ mix64(w)) * 0x9e3779b97f4a7c15ull;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)s[i] << (8 * i);
    h = (h ^ mix64(w ^ 0x5bd1e995u)) * 0x9e3779b97f4a7c15ull;
    return mix64(h);
}

/* ---- files ------------------------------------------------------------------- */
/* A large file is read in parts, one thread each (the caller's and up to
 * GN__READ_PARTS - 1 more, joined before returning): most of a read's time is
 * the faulting in of the fresh pages it fills, which runs in parallel, and
 * each part's pages are populated in one call (MADV_POPULATE_WRITE) before
 * its read, which takes about two thirds of the time of faulting them one by
 * one. The 95 MB ResNet-50 graph on a 2-core machine: 62-69 ms read whole,
 * 33-40 ms in two halves (bench/SPEED.md). gn__populate does the populating
 * alone, for memory about to be filled (constant folding's results). */
#define GN__READ_PARTS 4
#define GN__READ_PART_MIN ((size_t)2 << 20)

typedef struct read_part {
    int fd, err;          /* fd < 0: populate only */
    uint8_t *buf;
    size_t len, got;
    off_t off;
} read_part;

/* The whole pages inside p[0..n) faulted in for writing, in one call; advice
 * only (kernels before 5.14 have no MADV_POPULATE_WRITE: nothing happens). */
static void populate_pages(uint8_t *p, size_t n)
{
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    advise_whole_pages(p, n, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

static void *read_part_run(void *arg)
{
    read_part *p = arg;
    populate_pages(p->buf, p->len);
    if (p->fd < 0) return NULL;
    while (p->got < p->len) {
        ssize_t r = pread(p->fd, p->buf + p->got, p->len - p->got, p->off + (off_t)p->got);
        if (r < 0) {
            if (errno == EINTR) continue;
            p->err = errno;
            break;
        }
        if (r == 0) break;
        p->got += (size_t)r;
    }
    return NULL;
}

/* buf[0..len) in parts, each run by read_part_run on its own thread (the
 * caller's for the first); the parts' results in part[]. */
static size_t run_parts(int fd, void *buf, size_t len, int64_t off, read_part *part)
{
    size_t parts = len / GN__READ_PART_MIN;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && parts > (size_t)cpus) parts = (size_t)cpus;
    if (parts > GN__READ_PARTS) parts = GN__READ_PARTS;
    if (parts < 1) parts = 1;
    pthread_t tid[GN__READ_PARTS];
    bool started[GN__READ_PARTS] = {false};
    size_t each = (len / parts + 4095) & ~(size_t)4095;
    for (size_t i = 0; i < parts; i++) {
        size_t at = each * i < len ? each * i : len;
        size_t n = i + 1 == parts ? len - at : (each < len - at ? each : len - at);
        part[i] = (read_part){fd, 0, (uint8_t *)buf + at, n, 0, (off_t)off + (off_t)at};
    }
    /* a part whose thread cannot start is run by the caller */
    for (size_t i = 1; i < parts; i++) started[i] = pthread_create(&tid[i], NULL, read_part_run, &part[i]) == 0;
    read_part_run(&part[0]);
    for (size_t i = 1; i < parts; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else read_part_run(&part[i]);
    }
    return parts;
}

size_t gn__pread_full(int fd, void *buf, size_t len, int64_t off, int *err)
{
    *err = 0;
    read_part part[GN__READ_PARTS];
    size_t parts = run_parts(fd, buf, len, off, part);
    /* the bytes read without a gap from the start; the first error */
    size_t got = 0;
    for (size_t i = 0; i < parts; i++) {
        if (part[i].err && !*err) *err = part[i].err;
        got += part[i].got;
        if (part[i].got < part[i].len) break;
    }
    return got;
}

void gn__populate(void *p, size_t n)
{
    read_part part[GN__READ_PARTS];
    if (p && n >= 64 * 4096) (void)run_parts(-1, p, n, 0, part);
}

typedef struct move_part {
    const gn__move *m;
    size_t n;
} move_part;

static void *move_part_run(void *arg)
{
    const move_part *p = arg;
    for (size_t i = 0; i < p->n; i++) memmove(p->m[i].dst, p->m[i].src, p->m[i].n);
    return NULL;
}

void gn__move_all(const gn__move *m, size_t n)
{
    if (n == 0) return;   /* m may be NULL then */
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += m[i].n;
    size_t split = n;   /* m[0..split) on this thread, the rest on another */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 1 && n > 1 && total >= 2 * GN__READ_PART_MIN) {
        size_t acc = 0;
        split = 0;
        while (split < n - 1 && acc + m[split].n <= total / 2) acc += m[split++].n;
        if (split == 0) split = 1;
    }
    move_part a = {m, split}, b = {m + split, n - split};
    pthread_t t;
    bool started = b.n && pthread_create(&t, NULL, move_part_run, &b) == 0;
    move_part_run(&a);
    if (started) pthread_join(t, NULL);
    else move_part_run(&b);
}

gn_status gn__read_file(const char *path, uint8_t **data, size_t *size, gn__err *err)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return gn__fail(err, GN_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return gn__fail(err, GN_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return gn__fail(err, GN_ERR_IO, "%s: is a directory", path);
    }
    /* one byte more than the size, so the read that finds the end needs no
     * larger buffer (a regular file is read with no copy) */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
    uint8_t *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        return gn__fail(err, GN_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, cap);
    }
    size_t len = 0;
    if (S_ISREG(st.st_mode) && cap > (size_t)st.st_size) {
        int e = 0;
        len = gn__pread_full(fileno(f), buf, (size_t)st.st_size, 0, &e);
        if (e || fseeko(f, (off_t)len, SEEK_SET) != 0) {
            if (!e) e = errno;
            free(buf);
            fclose(f);
            return gn__fail(err, GN_ERR_IO, "%s: read error: %s", path, strerror(e));
        }
    }
    for (;;) {
        if (len == cap) {
            size_t ncap = cap * 2;
            uint8_t *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return gn__fail(err, GN_ERR_IO, "%s: read error: %s", path, strerror(e));
    }
    fclose(f);
    buf[len] = 0;
    *data = buf;
    *size = len;
    return GN_OK;
}

/* Every byte of iov[0..n), writev at most IOV_MAX entries at a time. */
/* Bytes per writev. For a durable write, after each the kernel is asked to
 * start writing them to the disk (sync_file_range, which does not wait), so
 * that the disk works while the rest is still being copied into the page cache
 * and the fsync at the end has less left to wait for (`grapnel optimize` of the
 * 88 MB Inception-V3 graph: 141 ms end to end before, 110-120 ms after). */
#define GN__WRITE_CHUNK ((size_t)2 << 20)

static bool write_all(int fd, const struct iovec *iov, size_t n, bool durable)
{
    size_t i = 0, done = 0;   /* bytes of iov[i] already written */
    off_t written = 0;
    while (i < n) {
        if (iov[i].iov_len == done) {
            i++;
            done = 0;
            continue;
        }
        struct iovec v[64];
        size_t k = 0, bytes = iov[i].iov_len - done;
        v[k++] = (struct iovec){(char *)iov[i].iov_base + done, bytes};
        for (size_t j = i + 1; j < n && k < GN__ARRAY_LEN(v) && bytes < GN__WRITE_CHUNK; j++)
            if (iov[j].iov_len) {
                v[k++] = iov[j];
                bytes += iov[j].iov_len;
            }
        if (bytes > GN__WRITE_CHUNK && v[k - 1].iov_len > bytes - GN__WRITE_CHUNK) {
            v[k - 1].iov_len -= bytes - GN__WRITE_CHUNK;
            bytes = GN__WRITE_CHUNK;
        }
        ssize_t w = writev(fd, v, (int)k);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (w == 0) {
            errno = EIO;
            return false;
        }
#ifdef SYNC_FILE_RANGE_WRITE
        /* advice only: the fsync that follows reports any failure */
        if (durable) (void)sync_file_range(fd, written, (off_t)w, SYNC_FILE_RANGE_WRITE);
#endif
        written += (off_t)w;
        size_t left = (size_t)w;
        while (left && i < n) {
            size_t in_i = iov[i].iov_len - done;
            if (left < in_i) {
                done += left;
                left = 0;
            } else {
                left -= in_i;
                i++;
                done = 0;
            }
        }
    }
    return true;
}

/* The data in a file of no name (O_TMPFILE) in path's directory, linked under
 * a fresh path.tmp-XXXXXX (in tmp) once complete: a process killed before it
 * leaves nothing behind. -1 with errno when the file system cannot do it, or
 * cannot link it (no /proc): the caller falls back to mkstemp. A write or
 * fsync failure is reported as it is (*stage names it), the file gone. */
static int write_anonymous(const char *path, const struct iovec *iov, size_t n_iov, bool durable, char *tmp,
                           size_t tmplen, const char **stage)
{
#ifdef O_TMPFILE
    *stage = NULL;
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(tmp, tmplen, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else snprintf(tmp, tmplen, ".");
    int fd = open(tmp, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    int e = 0;
    if (!write_all(fd, iov, n_iov, durable)) *stage = "write", e = errno;
    else if (durable && fsync(fd) != 0 && errno != EINVAL) *stage = "fsync", e = errno;
    if (*stage) {
        close(fd);
        errno = e;
        return -1;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    /* a name no other writer has: from the clock, the process and the file */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed[3] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30), (uint64_t)getpid(), (uint64_t)fd};
    for (uint32_t attempt = 0; attempt < 64; attempt++) {
        seed[2] += (uint64_t)attempt << 32;
        snprintf(tmp, tmplen, "%s.tmp-%06llx", path, (unsigned long long)(gn__hash_bytes(seed, sizeof seed) & 0xffffff));
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) return fd;
        if (errno != EEXIST) break;
    }
    close(fd);
    errno = EOPNOTSUPP;
    return -1;
#else
    (void)path, (void)iov, (void)n_iov, (void)durable, (void)tmp, (void)tmplen;
    *stage = NULL;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

gn_status gn__write_file_atomic(const char *path, const void *data, size_t size, bool durable, gn__err *err)
{
    struct iovec v = {(void *)(uintptr_t)data, size};
    return gn__write_file_atomicv(path, &v, 1, durable, err);
}

gn_status gn__write_file_atomicv(const char *path, const struct iovec *iov, size_t n_iov, bool durable, gn__err *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 32);
    if (!tmp) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
    const char *stage = NULL;
    int fd = write_anonymous(path, iov, n_iov, durable, tmp, n + 32, &stage);
    if (fd < 0 && stage) {
        int e = errno;
        free(tmp);
        return gn__fail(err, GN_ERR_IO, "%s: %s failed: %s", path, stage, strerror(e));
    }
    if (fd < 0) {   /* a named temporary from the start */
        snprintf(tmp, n + 32, "%s.tmp-XXXXXX", path);
        fd = mkstemp(tmp);
        if (fd < 0) {
            int e = errno;
            free(tmp);
            return gn__fail(err, GN_ERR_IO, "%s: cannot create temporary file: %s", path, strerror(e));
        }
        if (!write_all(fd, iov, n_iov, durable)) stage = "write";
        else if (durable && fsync(fd) != 0 && errno != EINVAL) stage = "fsync";
        if (stage) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return gn__fail(err, GN_ERR_IO, "%s: %s failed: %s", path, stage, strerror(e));
        }
    }
    if (fchmod(fd, 0644) != 0) { /* mkstemp makes 0600; models are ordinary files */ }
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return gn__fail(err, GN_ERR_IO, "%s: close failed: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return gn__fail(err, GN_ERR_IO, "%s: rename failed: %s", path, strerror(e));
    }
    free(tmp);
    return durable ? gn__sync_parent_dir(path, err) : GN_OK;
}

gn_status gn__sync_parent_dir(const char *path, gn__err *err)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = 0;
    if (dfd < 0 || (fsync(dfd) != 0 && errno != EINVAL)) e = errno;
    if (dfd >= 0) close(dfd);
    free(dir);
    if (e) return gn__fail(err, GN_ERR_IO, "%s: fsync of its directory failed: %s", path, strerror(e));
    return GN_OK;
}
