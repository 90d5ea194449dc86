/* gzip input (src/io/gunzip.c): libdeflate's one-call decoder, when installed,
 * and zlib's inflate give the same bytes and the same errors; what libdeflate
 * does not take (several members, a trailer whose size is not the data's) is
 * left to zlib; a large file is read in parallel parts and comes out whole;
 * a large literal of a text graph the load owns is given back once decoded,
 * with the same graph and messages as from a caller's buffer. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/common.h"
#include "grapnel/grapnel.h"
#include "io/graphdef.h"
#include "testutil.h"

/* A gzip member of data (zlib's deflate with the gzip wrapper). */
static uint8_t *gzip_bytes(const uint8_t *data, size_t n, size_t *out_n)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)n) + 64;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_n = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* A text graph of about n bytes: tensor_content as TensorFlow prints it
 * (octal escapes), the content of the zoo's text graphs. */
static uint8_t *text_graph(size_t want, size_t *n)
{
    size_t cap = want + 4096;
    char *t = malloc(cap);
    assert_non_null(t);
    size_t floats = want / 16;   /* 4 bytes each, 4 characters a byte */
    size_t k = (size_t)snprintf(t, cap,
                                "node {\n  name: \"c\"\n  op: \"Const\"\n"
                                "  attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
                                "  attr { key: \"value\" value { tensor { dtype: DT_FLOAT"
                                " tensor_shape { dim { size: %zu } } tensor_content: \"",
                                floats);
    uint32_t x = 12345;
    for (size_t i = 0; i < floats * 4; i++) {
        x = x * 1103515245u + 12345u;
        k += (size_t)snprintf(t + k, cap - k, "\\%03o", (x >> 16) & 0xff);
    }
    k += (size_t)snprintf(t + k, cap - k, "\" } } }\n}\n");
    *n = k;
    return (uint8_t *)t;
}

/* Whether libdeflate is mapped in this process (the library opens it with
 * RTLD_NODELETE: once used, it stays). */
static bool libdeflate_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, "libdeflate") != NULL;
    fclose(f);
    return found;
}

static bool have_libdeflate(void)
{
    void *lib = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib) {
        dlclose(lib);
        return true;
    }
    lib = dlopen("libdeflate.so.0", RTLD_LAZY | RTLD_LOCAL);
    if (lib) dlclose(lib);
    return lib != NULL;
}

/* Both roads, the same bytes; and the graph they hold loads. */
static void test_fast_and_zlib_agree(void **state)
{
    (void)state;
    bool fast_there = have_libdeflate();
    if (!fast_there) print_message("    libdeflate is not installed: both roads are zlib's\n");
    size_t n = 0, zn = 0;
    uint8_t *text = text_graph((size_t)3 << 20, &n);
    uint8_t *gz = gzip_bytes(text, n, &zn);
    uint8_t *a = NULL, *b = NULL;
    size_t an = 0, bn = 0;
    gn__err e = {0};
    assert_int_equal(gn__gunzip(gz, zn, false, &b, &bn, &e), GN_OK);
    assert_false(libdeflate_mapped());   /* zlib's road alone does not open it */
    assert_int_equal(gn__gunzip(gz, zn, true, &a, &an, &e), GN_OK);
    if (fast_there) assert_true(libdeflate_mapped());   /* the fast road was taken */
    assert_int_equal(an, n);
    assert_int_equal(bn, n);
    assert_memory_equal(a, text, n);
    assert_memory_equal(b, text, n);
    assert_int_equal(a[an], 0);   /* NUL-terminated, as the text parser wants */
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(gz, zn, "t.pbtxt.gz", NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(gn_graph_node_count(g), 1);
    gn_graph_free(g);
    free(a);
    free(b);
    free(gz);
    free(text);
}

/* Two members: the trailer's size is the second's, smaller than the first:
 * libdeflate cannot take it; zlib decodes the first member, as before. */
static void test_several_members(void **state)
{
    (void)state;
    const char *first = "node { name: \"a\" op: \"NoOp\" }\nnode { name: \"b\" op: \"NoOp\" }\n";
    const char *second = "# x\n";
    size_t n1 = 0, n2 = 0;
    uint8_t *g1 = gzip_bytes((const uint8_t *)first, strlen(first), &n1);
    uint8_t *g2 = gzip_bytes((const uint8_t *)second, strlen(second), &n2);
    uint8_t *both = malloc(n1 + n2);
    assert_non_null(both);
    memcpy(both, g1, n1);
    memcpy(both + n1, g2, n2);
    for (int fast = 0; fast < 2; fast++) {
        uint8_t *o = NULL;
        size_t on = 0;
        gn__err e = {0};
        assert_int_equal(gn__gunzip(both, n1 + n2, fast, &o, &on, &e), GN_OK);
        assert_int_equal(on, strlen(first));
        assert_memory_equal(o, first, on);
        free(o);
    }
    free(both);
    free(g1);
    free(g2);
}

/* A trailer whose size is not the data's (larger, smaller): the bytes are
 * still the data's. */
static void test_trailer_size_wrong(void **state)
{
    (void)state;
    size_t n = 0, zn = 0;
    uint8_t *text = text_graph(64 << 10, &n);
    uint8_t *gz = gzip_bytes(text, n, &zn);
    const uint32_t sizes[] = {(uint32_t)n + 100, (uint32_t)n - 100};
    for (size_t i = 0; i < 2; i++) {
        uint32_t v = sizes[i];
        for (int k = 0; k < 4; k++) gz[zn - 4 + (size_t)k] = (uint8_t)(v >> (8 * k));
        uint8_t *o = NULL;
        size_t on = 0;
        gn__err e = {0};
        /* zlib checks ISIZE too: a wrong one is corrupt data for both roads */
        gn_status sf = gn__gunzip(gz, zn, true, &o, &on, &e);
        char fast_msg[sizeof e.msg];
        snprintf(fast_msg, sizeof fast_msg, "%s", e.msg);
        free(o);
        o = NULL;
        gn__err ez = {0};
        gn_status sz = gn__gunzip(gz, zn, false, &o, &on, &ez);
        free(o);
        assert_int_equal(sf, sz);
        assert_string_equal(fast_msg, ez.msg);
        assert_int_equal(sf, GN_ERR_PARSE);
        assert_non_null(strstr(fast_msg, "corrupt gzip data"));
    }
    free(gz);
    free(text);
}

/* Corrupt and truncated files: the same message by either road. */
static void test_errors_the_same(void **state)
{
    (void)state;
    size_t n = 0, zn = 0;
    uint8_t *text = text_graph(256 << 10, &n);
    uint8_t *gz = gzip_bytes(text, n, &zn);
    for (int c = 0; c < 3; c++) {
        uint8_t *bad = malloc(zn);
        assert_non_null(bad);
        memcpy(bad, gz, zn);
        size_t bn = zn;
        if (c == 0) bad[zn / 2] ^= 0x5a;        /* a flipped byte in the middle */
        else if (c == 1) bn = zn / 2;           /* cut in half */
        else bad[zn - 6] ^= 1;                  /* the CRC */
        uint8_t *o = NULL;
        size_t on = 0;
        gn__err ef = {0}, ez = {0};
        gn_status sf = gn__gunzip(bad, bn, true, &o, &on, &ef);
        free(o);
        o = NULL;
        gn_status sz = gn__gunzip(bad, bn, false, &o, &on, &ez);
        free(o);
        assert_int_equal(sf, GN_ERR_PARSE);
        assert_int_equal(sz, GN_ERR_PARSE);
        assert_string_equal(ef.msg, ez.msg);
        free(bad);
    }
    free(gz);
    free(text);
}

/* A file over the parallel-read threshold comes back whole and in order, by
 * gn__read_file and by gn_graph_load; and gn__pread_full stops at the end of
 * a file shorter than asked. */
static void test_parallel_read_whole(void **state)
{
    (void)state;
    size_t n = (size_t)40 << 20;   /* four parts of 10 MiB where there are 4 cores, else 2 */
    uint8_t *d = malloc(n);
    assert_non_null(d);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(d + i, &x, 8);
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/parallel_read.bin", gn_test_tmpdir());
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    uint8_t *r = NULL;
    size_t rn = 0;
    gn__err e = {0};
    assert_int_equal(gn__read_file(p, &r, &rn, &e), GN_OK);
    assert_int_equal(rn, n);
    assert_memory_equal(r, d, n);
    free(r);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    uint8_t *buf = malloc(n + 100);
    assert_non_null(buf);
    int err = -1;
    assert_int_equal(gn__pread_full(fd, buf, n + 100, 0, &err), n);   /* past the end: what there is */
    assert_int_equal(err, 0);
    assert_memory_equal(buf, d, n);
    assert_int_equal(gn__pread_full(fd, buf, n - 4096, 4096, &err), n - 4096);
    assert_memory_equal(buf, d + 4096, n - 4096);
    close(fd);
    free(buf);
    unlink(p);
    free(d);
}

/* A text graph holding a tensor_content literal of several MiB, then a node
 * with an error: loaded from a file and from a gzip of it (text the load owns:
 * the literal's pages are given back once decoded) and from a caller's buffer
 * (left as it was), the same graph and the same message, position included. */
static void test_large_literal_given_back(void **state)
{
    (void)state;
    size_t n = 0, zn = 0;
    uint8_t *good = text_graph((size_t)6 << 20, &n);
    const char *tail = "node {\n  name: \"y\"\n  op: \"Identity\"\n  input: \"nowhere\"\n"
                       "  attr { key: \"T\" value { type: DT_FLOAT } }\n}\n";
    size_t tl = strlen(tail);
    uint8_t *bad = malloc(n + tl);
    assert_non_null(bad);
    memcpy(bad, good, n);
    memcpy(bad + n, tail, tl);
    char p[1024], pz[1024];
    snprintf(p, sizeof p, "%s/big_literal.pbtxt", gn_test_tmpdir());
    snprintf(pz, sizeof pz, "%s/big_literal.pbtxt.gz", gn_test_tmpdir());
    for (int with_error = 0; with_error < 2; with_error++) {
        const uint8_t *text = with_error ? bad : good;
        size_t len = with_error ? n + tl : n;
        uint8_t *gz = gzip_bytes(text, len, &zn);
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        f = fopen(pz, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(gz, 1, zn, f), zn);
        assert_int_equal(fclose(f), 0);
        uint8_t *copy = malloc(len);
        assert_non_null(copy);
        memcpy(copy, text, len);
        gn_graph *gb = NULL, *gf = NULL, *gzg = NULL;
        gn_status sb = gn_graph_load_buffer(copy, len, "big_literal.pbtxt", NULL, &gb);
        assert_memory_equal(copy, text, len);   /* a caller's buffer is not touched */
        gn_status sf = gn_graph_load(p, NULL, &gf), sz = gn_graph_load(pz, NULL, &gzg);
        if (!with_error) {
            assert_int_equal(sb, GN_OK);
            assert_int_equal(sf, GN_OK);
            assert_int_equal(sz, GN_OK);
            void *db = NULL, *df = NULL, *dz = NULL;
            size_t nb = 0, nf = 0, nz = 0;
            assert_int_equal(gn_graph_serialize(gb, GN_FORMAT_BINARY, &db, &nb), GN_OK);
            assert_int_equal(gn_graph_serialize(gf, GN_FORMAT_BINARY, &df, &nf), GN_OK);
            assert_int_equal(gn_graph_serialize(gzg, GN_FORMAT_BINARY, &dz, &nz), GN_OK);
            assert_true(nb > ((size_t)6 << 20) / 4);
            assert_int_equal(nf, nb);
            assert_int_equal(nz, nb);
            assert_memory_equal(df, db, nb);
            assert_memory_equal(dz, db, nb);
            gn_free(db);
            gn_free(df);
            gn_free(dz);
        } else {
            assert_int_not_equal(sb, GN_OK);
            assert_int_equal(sf, sb);
            assert_int_equal(sz, sb);
            /* the same words and position; only the file name differs */
            const char *mb = strchr(gn_graph_errmsg(gb), ':'), *mf = strchr(gn_graph_errmsg(gf), ':'),
                       *mz = strchr(gn_graph_errmsg(gzg), ':');
            assert_non_null(mb);
            assert_non_null(strstr(mb, "line "));
            assert_string_equal(mf, mb);
            assert_string_equal(mz, mb);
        }
        gn_graph_free(gb);
        gn_graph_free(gf);
        gn_graph_free(gzg);
        free(copy);
        free(gz);
    }
    unlink(p);
    unlink(pz);
    free(bad);
    free(good);
}

/* A literal of several MiB broken by a raw newline (taken by the direct
 * decode, which fails half way): from a file and from a buffer the same
 * error, at the literal's start, and no graph. */
static void test_large_literal_unterminated(void **state)
{
    (void)state;
    size_t n = 0;
    uint8_t *text = text_graph((size_t)4 << 20, &n);
    uint8_t *q = (uint8_t *)strstr((char *)text, "tensor_content: \"");
    assert_non_null(q);
    q[17 + (2u << 20)] = '\n';   /* inside the literal, 2 MiB in */
    char p[1024];
    snprintf(p, sizeof p, "%s/broken_literal.pbtxt", gn_test_tmpdir());
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    gn_graph *gb = NULL, *gf = NULL;
    assert_int_equal(gn_graph_load_buffer(text, n, "broken_literal.pbtxt", NULL, &gb), GN_ERR_PARSE);
    assert_int_equal(gn_graph_load(p, NULL, &gf), GN_ERR_PARSE);
    const char *mb = strchr(gn_graph_errmsg(gb), ':'), *mf = strchr(gn_graph_errmsg(gf), ':');
    assert_non_null(mb);
    assert_non_null(strstr(mb, "unterminated string"));
    assert_non_null(strstr(mb, "line 5:"));   /* where the literal starts */
    assert_string_equal(mf, mb);
    gn_graph_free(gb);
    gn_graph_free(gf);
    unlink(p);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_and_zlib_agree),
        cmocka_unit_test(test_several_members),
        cmocka_unit_test(test_trailer_size_wrong),
        cmocka_unit_test(test_errors_the_same),
        cmocka_unit_test(test_parallel_read_whole),
        cmocka_unit_test(test_large_literal_given_back),
        cmocka_unit_test(test_large_literal_unterminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
