/* gzip input (src/io/graphdef.h: gn__maybe_gunzip).
 *
 * A gzip member whose trailer gives a believable size is decoded in one call
 * by libdeflate when it is installed: opened at run time, as the CPU backend
 * opens OpenBLAS (src/ops/blas.c), so that it is neither a build nor a link
 * dependency. On a 73 MB text graph it decodes, CRC included, in about a third
 * of zlib's time. Everything else, and every member libdeflate does not
 * accept, goes through zlib's inflate, which also words the errors: a corrupt
 * or truncated file gets the same message by either road. */
#define _GNU_SOURCE   /* RTLD_NODELETE */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "io/graphdef.h"

/* ISIZE, the last four bytes: the uncompressed size mod 2^32 of the last
 * member. SIZE_MAX when the file is too short to have one or when no deflate
 * stream could expand to it (at most 1032 to 1). */
static size_t trailer_size(const uint8_t *data, size_t len)
{
    if (len < 18) return SIZE_MAX;
    size_t isize = (size_t)data[len - 4] | (size_t)data[len - 3] << 8 | (size_t)data[len - 2] << 16 |
                   (size_t)data[len - 1] << 24;
    return isize / 1032 <= len ? isize : SIZE_MAX;
}

static gn_status gunzip_zlib(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, gn__err *err)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return gn__fail(err, GN_ERR_NOMEM, "cannot start gzip decoder");
    /* the trailer's ISIZE (the size mod 2^32) sizes the buffer once when it is
     * believable: deflate expands at most 1032 to 1 */
    size_t cap = len * 4 + 4096, n = 0, isize = trailer_size(data, len);
    if (isize != SIZE_MAX && isize > cap) cap = isize + 64; /* room for the end to be seen */
    uint8_t *buf = malloc(cap + 1);
    if (!buf) {
        inflateEnd(&zs);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    const uint8_t *in = data;
    size_t left = len;
    int r = Z_OK;
    while (r != Z_STREAM_END) {
        if (n == cap) {
            if (cap > ((size_t)4 << 30)) {
                free(buf);
                inflateEnd(&zs);
                return gn__fail(err, GN_ERR_PARSE, "gzip data expands past 4 GiB");
            }
            uint8_t *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                inflateEnd(&zs);
                return gn__fail(err, GN_ERR_NOMEM, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        uInt chunk_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
        size_t room = cap - n;
        uInt chunk_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        zs.next_in = (Bytef *)in;
        zs.avail_in = chunk_in;
        zs.next_out = buf + n;
        zs.avail_out = chunk_out;
        r = inflate(&zs, Z_NO_FLUSH);
        size_t used_in = chunk_in - zs.avail_in;
        in += used_in;
        left -= used_in;
        n += chunk_out - zs.avail_out;
        if (r == Z_STREAM_END) break;
        if (r != Z_OK && r != Z_BUF_ERROR) {
            size_t pos = (size_t)(in - data);
            free(buf);
            inflateEnd(&zs);
            return gn__fail(err, GN_ERR_PARSE, "byte %zu: corrupt gzip data (%s)", pos, zs.msg ? zs.msg : "inflate failed");
        }
        if (r == Z_BUF_ERROR && left == 0 && zs.avail_out != 0) {
            free(buf);
            inflateEnd(&zs);
            return gn__fail(err, GN_ERR_PARSE, "byte %zu: truncated gzip data", len);
        }
    }
    inflateEnd(&zs);
    buf[n] = 0;
    *out = buf;
    *out_len = n;
    return GN_OK;
}

/* libdeflate's API, as declared in its libdeflate.h (stable since 1.0;
 * gzip_decompress_ex since 1.5) */
typedef void *(*ld_alloc_fn)(void);
typedef int (*ld_gzip_fn)(void *d, const void *in, size_t in_n, void *out, size_t out_avail, size_t *in_used,
                          size_t *out_n);
typedef void (*ld_free_fn)(void *d);

/* True with *out set when libdeflate decoded the first member into exactly
 * the trailer's size; false (nothing allocated) when it is not installed, on
 * allocation failure, or when it refused the data: the caller then runs zlib. */
static bool gunzip_libdeflate(const uint8_t *data, size_t len, size_t isize, uint8_t **out, size_t *out_len)
{
    void *lib = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return false;
    void *a = dlsym(lib, "libdeflate_alloc_decompressor"), *g = dlsym(lib, "libdeflate_gzip_decompress_ex"),
         *f = dlsym(lib, "libdeflate_free_decompressor");
    bool ok = false;
    if (a && g && f) {
        ld_alloc_fn alloc;
        ld_gzip_fn gzip;
        ld_free_fn free_dec;
        /* object pointer to function pointer: POSIX dlsym's documented use */
        memcpy(&alloc, &a, sizeof a);
        memcpy(&gzip, &g, sizeof g);
        memcpy(&free_dec, &f, sizeof f);
        void *dec = alloc();
        uint8_t *buf = dec ? malloc(isize + 1) : NULL;
        if (buf) {
            gn__populate(buf, isize);   /* all of it is written: faulted in at once */
            size_t used = 0, n = 0;
            /* 0 is LIBDEFLATE_SUCCESS; a first member larger than the last
             * one's ISIZE (several members) is INSUFFICIENT_SPACE */
            if (gzip(dec, data, len, buf, isize, &used, &n) == 0 && n == isize) {
                buf[n] = 0;
                *out = buf;
                *out_len = n;
                ok = true;
            } else {
                free(buf);
            }
        }
        if (dec) free_dec(dec);
    }
    dlclose(lib);
    return ok;
}

gn_status gn__gunzip(const uint8_t *data, size_t len, bool fast, uint8_t **out, size_t *out_len, gn__err *err)
{
    *out = NULL;
    *out_len = 0;
    size_t isize = trailer_size(data, len);
    if (fast && isize != SIZE_MAX && gunzip_libdeflate(data, len, isize, out, out_len)) return GN_OK;
    return gunzip_zlib(data, len, out, out_len, err);
}

gn_status gn__maybe_gunzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, gn__err *err)
{
    *out = NULL;
    *out_len = 0;
    if (len < 2 || data[0] != 0x1f || data[1] != 0x8b) return GN_OK;
    return gn__gunzip(data, len, true, out, out_len, err);
}
