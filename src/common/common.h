/* Private helpers shared by every module: error records, arenas, growable
 * buffers, hashing. Nothing here is global: every object hangs off a handle. */
#ifndef GN_COMMON_H
#define GN_COMMON_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "grapnel/status.h"

#define GN__ERRMSG_MAX 1024

#if defined(__GNUC__)
#define GN__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GN__UNUSED __attribute__((unused))
/* a read hint for memory needed soon; no effect on the result */
#define GN__PREFETCH(p) __builtin_prefetch(p)
#else
#define GN__PRINTF(f, a)
#define GN__UNUSED
#define GN__PREFETCH(p) ((void)(p))
#endif

#define GN__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GN_TRY(expr)                                                           \
    do {                                                                       \
        gn_status gn__s_ = (expr);                                             \
        if (gn__s_ != GN_OK) return gn__s_;                                    \
    } while (0)

/* ---- error record: the last failure on a handle ----------------------------- */
typedef struct gn__err {
    gn_status code;
    char msg[GN__ERRMSG_MAX];
} gn__err;

void gn__err_clear(gn__err *e);
/* Records the failure and returns code, so call sites are one line. A NULL err
 * is allowed (the message is dropped). */
gn_status gn__fail(gn__err *e, gn_status code, const char *fmt, ...) GN__PRINTF(3, 4);
gn_status gn__vfail(gn__err *e, gn_status code, const char *fmt, va_list ap);
/* Prefixes the current message with "prefix: " (adds context on the way up). */
void gn__err_prefix(gn__err *e, const char *fmt, ...) GN__PRINTF(2, 3);

/* ---- arena: bump allocation, freed all at once -------------------------------- */
typedef struct gn__arena_block gn__arena_block;
typedef struct gn__arena {
    gn__arena_block *head;
    size_t block_size;    /* size of the next ordinary block */
    size_t used;          /* bytes handed out, for statistics */
    size_t reserved;      /* bytes obtained from malloc */
    bool oom;             /* sticky: an allocation failed (tells "no memory" from "bad
                             message" after protobuf-c's unpack returns NULL) */
} gn__arena;

void gn__arena_init(gn__arena *a, size_t first_block);
void gn__arena_free(gn__arena *a);
/* NULL when out of memory. Memory is uninitialised. align is a power of two. */
void *gn__arena_alloc(gn__arena *a, size_t bytes, size_t align);
void *gn__arena_zalloc(gn__arena *a, size_t bytes, size_t align);
char *gn__arena_strndup(gn__arena *a, const char *s, size_t n);
char *gn__arena_strdup(gn__arena *a, const char *s);
void *gn__arena_memdup(gn__arena *a, const void *p, size_t n);
/* Does [p, p + n) lie inside one of a's blocks? */
bool gn__arena_holds(const gn__arena *a, const void *p, size_t n);
/* A ProtobufCAllocator whose alloc bumps the arena and whose free is a no-op. */
void gn__arena_pb_allocator(gn__arena *a, ProtobufCAllocator *out);

/* ---- refcounted arena: shared, immutable payloads (tensor values, attrs) ---- */
typedef struct gn__blob {
    _Atomic uint32_t refs;   /* clones in other threads share a blob: counted atomically */
    gn__arena arena;
} gn__blob;

gn__blob *gn__blob_new(size_t first_block);   /* refs = 1; NULL on OOM */
gn__blob *gn__blob_ref(gn__blob *b);
void gn__blob_unref(gn__blob *b);

/* ---- growable byte buffer (heap) --------------------------------------------- */
typedef struct gn__buf {
    char *data;
    size_t len, cap;
    bool oom;             /* sticky: an append failed */
} gn__buf;

void gn__buf_init(gn__buf *b);
void gn__buf_free(gn__buf *b);
bool gn__buf_reserve(gn__buf *b, size_t extra);
void gn__buf_append(gn__buf *b, const void *p, size_t n);
void gn__buf_puts(gn__buf *b, const char *s);
void gn__buf_putc(gn__buf *b, char c);
void gn__buf_printf(gn__buf *b, const char *fmt, ...) GN__PRINTF(2, 3);
/* NUL-terminates and hands the heap string over (caller frees); NULL on OOM. */
char *gn__buf_take(gn__buf *b);
/* A ProtobufCBuffer that appends into b (for protobuf_c_message_pack_to_buffer). */
typedef struct gn__pb_buffer {
    ProtobufCBuffer base;
    gn__buf *buf;
} gn__pb_buffer;
void gn__pb_buffer_init(gn__pb_buffer *pb, gn__buf *b);

/* Gives back the whole pages inside p[0..n) of private anonymous memory that
 * will not be read again before being written (a given-up buffer's unused
 * tail): they read as zeros afterwards. */
void gn__release_pages(void *p, size_t n);

/* ---- hashing ----------------------------------------------------------------- */
uint64_t gn__hash_bytes(const void *p, size_t n);

/* ---- files ------------------------------------------------------------------- */
/* Reads a whole file (heap; caller frees). On failure fills err with
 * "<path>: <strerror>" and returns GN_ERR_IO. */
gn_status gn__read_file(const char *path, uint8_t **data, size_t *size, gn__err *err);
/* Reads len bytes at off into buf (pread, EINTR retried), a large read in
 * parts on several threads; returns the bytes read without a gap from the
 * start (fewer at the end of the file), *err an errno or 0. */
size_t gn__pread_full(int fd, void *buf, size_t len, int64_t off, int *err);
/* Faults in the whole pages inside p[0..n) for writing, on several threads
 * when large (as gn__pread_full's parts): for memory about to be filled.
 * Advice only; small ranges are left to fault as they are written. */
void gn__populate(void *p, size_t n);
/* One memmove of a batch for gn__move_all. */
typedef struct gn__move {
    void *dst;
    const void *src;
    size_t n;
} gn__move;
/* Does every move of m[0..n) (no two touching the same bytes), in two
 * parts of about equal bytes on two threads (the caller's and one more)
 * when they are many megabytes and there are two cores; in order on the
 * caller's thread otherwise, or when no thread can be started. */
void gn__move_all(const gn__move *m, size_t n);
/* Writes atomically: the data in a file of no name in path's directory
 * (O_TMPFILE; a named temporary where the file system has none), then
 * linked as path.tmp-XXXXXX and renamed over path. On any failure nothing is
 * left but what was at path; a process killed meanwhile leaves path as it was,
 * and a temporary only when killed between the link and the rename. durable:
 * the data is also flushed to the disk (fsync) before the rename, so that it
 * survives a power loss or system crash too (gn_graph_set_fsync); without,
 * as TensorFlow's own writers, it is left to the kernel's writeback. */
gn_status gn__write_file_atomic(const char *path, const void *data, size_t size, bool durable, gn__err *err);
/* The same for the bytes of iov[0..n) in order, written with gathered writes. */
struct iovec;
gn_status gn__write_file_atomicv(const char *path, const struct iovec *iov, size_t n, bool durable, gn__err *err);
/* fsync of the directory path is in (its entries: a rename into it made
 * durable); GN_ERR_IO naming path when it fails. */
gn_status gn__sync_parent_dir(const char *path, gn__err *err);

#endif
