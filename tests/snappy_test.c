/* Snappy block decoding (src/io/snappy.c): what Snappy's own compressor
 * writes decodes to the same bytes (text, runs, random bytes, weights-like
 * floats, lengths around the literal and copy encodings' limits); hand-made
 * blocks reach each element kind and each way a block can be corrupt; no
 * prefix of a valid block and no single-byte change of one is read or written
 * out of bounds (ASan), and a prefix is always refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

#include "io/snappy.h"

static uint32_t rnd(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return (uint32_t)(*r >> 11);
}

/* Compresses data with Snappy, decodes it with the library's decoder into a
 * buffer of exactly the stated size, and compares. Returns the block. */
static char *roundtrip(const uint8_t *data, size_t n, size_t *bn)
{
    size_t cap = snappy_max_compressed_length(n);
    char *c = malloc(cap);
    assert_non_null(c);
    *bn = cap;
    assert_int_equal(snappy_compress((const char *)data, n, c, bn), SNAPPY_OK);
    size_t ulen = 0;
    assert_true(gn__snappy_length((const uint8_t *)c, *bn, &ulen));
    assert_int_equal(ulen, n);
    uint8_t *out = malloc(n ? n : 1);
    assert_non_null(out);
    assert_true(gn__snappy_decode((const uint8_t *)c, *bn, out, n));
    if (n) assert_memory_equal(out, data, n);
    free(out);
    return c;
}

static void fill(uint8_t *d, size_t n, int kind)
{
    uint64_t r = 0x9e3779b97f4a7c15ull + (uint64_t)n;
    static const char words[] = "the quick brown fox jumps over the lazy dog; conv2d/kernel:0 ";
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: d[i] = (uint8_t)words[(i * 7 + i / 61) % (sizeof words - 1)]; break; /* text-like */
        case 1: d[i] = (uint8_t)(i / 1000); break;                                 /* long runs */
        case 2: d[i] = (uint8_t)rnd(&r); break;                                      /* incompressible */
        default: {                                                                 /* small floats */
            float f = (float)(int)(rnd(&r) % 64) / 16.0f;
            memcpy(d + (i & ~(size_t)3), &f, n - (i & ~(size_t)3) < 4 ? n - (i & ~(size_t)3) : 4);
            i |= 3;
        }
        }
    }
}

static void test_compressor_blocks(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 3, 4, 59, 60, 61, 255, 256, 257, 2047, 2048, 2049, 65535, 65536,
                                   65537, 1 << 20, (1 << 24) + 5};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        uint8_t *d = malloc(sizes[s] ? sizes[s] : 1);
        assert_non_null(d);
        for (int kind = 0; kind < 4; kind++) {
            fill(d, sizes[s], kind);
            size_t bn = 0;
            free(roundtrip(d, sizes[s], &bn));
        }
        free(d);
    }
}

/* Every prefix of a valid block is refused; every single-byte change is
 * either refused or decoded within bounds (ASan watches). */
static void test_prefixes_and_changes(void **state)
{
    (void)state;
    size_t n = 5000, bn = 0;
    uint8_t *d = malloc(n), *out = malloc(n);
    assert_non_null(d);
    assert_non_null(out);
    fill(d, n, 0);
    uint64_t r = 12345;
    for (size_t i = 2000; i < 2600; i++) d[i] = (uint8_t)rnd(&r); /* literals among the copies */
    char *c = roundtrip(d, n, &bn);
    for (size_t k = 0; k < bn; k++) {
        uint8_t *pre = malloc(k ? k : 1); /* its own allocation, so ASan sees a read past it */
        assert_non_null(pre);
        memcpy(pre, c, k);
        assert_false(gn__snappy_decode(pre, k, out, n));
        free(pre);
    }
    uint8_t *m = malloc(bn);
    assert_non_null(m);
    for (size_t k = 0; k < bn; k++) {
        static const uint8_t flips[] = {0x01, 0x02, 0x03, 0x80, 0xff, 0xfc};
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(m, c, bn);
            m[k] ^= flips[f];
            size_t ulen = 0;
            if (!gn__snappy_length(m, bn, &ulen) || ulen > 2 * n) continue;
            uint8_t *o = malloc(ulen ? ulen : 1);
            assert_non_null(o);
            (void)gn__snappy_decode(m, bn, o, ulen);
            free(o);
        }
    }
    free(m);
    free(c);
    free(d);
    free(out);
}

static bool dec(const uint8_t *b, size_t n, uint8_t *out, size_t ulen) { return gn__snappy_decode(b, n, out, ulen); }

static void test_hand_made_blocks(void **state)
{
    (void)state;
    uint8_t out[300];
    /* literal "ab", then a 1-byte-offset copy of 6 at offset 2 (overlapping): abababab */
    static const uint8_t b1[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 4) << 2) | 1, 2};
    assert_true(dec(b1, sizeof b1, out, 8));
    assert_memory_equal(out, "abababab", 8);
    /* the same copy with a 2-byte and a 4-byte offset */
    static const uint8_t b2[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 1) << 2) | 2, 2, 0};
    assert_true(dec(b2, sizeof b2, out, 8));
    assert_memory_equal(out, "abababab", 8);
    static const uint8_t b3[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 1) << 2) | 3, 2, 0, 0, 0};
    assert_true(dec(b3, sizeof b3, out, 8));
    assert_memory_equal(out, "abababab", 8);
    /* a literal of 100 bytes, its length in one byte after the tag (60 << 2) */
    uint8_t b4[2 + 2 + 100];
    b4[0] = 100;
    b4[1] = 60 << 2;
    b4[2] = 99;
    for (int i = 0; i < 100; i++) b4[3 + i] = (uint8_t)i;
    assert_true(dec(b4, 103, out, 100));
    for (int i = 0; i < 100; i++) assert_int_equal(out[i], i);
    /* the same with its length in two, three, four bytes */
    uint8_t b5[8 + 100];
    for (unsigned k = 2; k <= 4; k++) {
        b5[0] = 100;
        b5[1] = (uint8_t)((59 + k) << 2);
        memset(b5 + 2, 0, k);
        b5[2] = 99;
        memcpy(b5 + 2 + k, b4 + 3, 100);
        assert_true(dec(b5, 2 + k + 100, out, 100));
        assert_memory_equal(out, b4 + 3, 100);
    }
    /* the empty block */
    static const uint8_t e[] = {0};
    assert_true(dec(e, 1, out, 0));
    /* corrupt: copy at offset 0, copy before the start, more or fewer bytes than stated */
    static const uint8_t z0[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 4) << 2) | 1, 0};
    assert_false(dec(z0, sizeof z0, out, 8));
    static const uint8_t z1[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 4) << 2) | 1, 3};
    assert_false(dec(z1, sizeof z1, out, 8));
    static const uint8_t z2[] = {7, (1 << 2) | 0, 'a', 'b', ((6 - 4) << 2) | 1, 2};
    assert_false(dec(z2, sizeof z2, out, 7));
    static const uint8_t z3[] = {9, (1 << 2) | 0, 'a', 'b', ((6 - 4) << 2) | 1, 2};
    assert_false(dec(z3, sizeof z3, out, 9));
    /* a stated length other than the buffer's, a length varint longer than 32 bits or cut */
    assert_false(dec(b1, sizeof b1, out, 9));
    static const uint8_t v6[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    size_t ulen = 0;
    assert_false(gn__snappy_length(v6, sizeof v6, &ulen));
    static const uint8_t v33[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    assert_false(gn__snappy_length(v33, sizeof v33, &ulen));
    static const uint8_t v32[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    assert_true(gn__snappy_length(v32, sizeof v32, &ulen));
    assert_int_equal(ulen, UINT32_MAX);
    assert_false(gn__snappy_length(v6, 2, &ulen));
    /* a literal running past the block, a copy's offset bytes cut */
    static const uint8_t l1[] = {4, (3 << 2) | 0, 'a', 'b'};
    assert_false(dec(l1, sizeof l1, out, 4));
    static const uint8_t c1[] = {8, (1 << 2) | 0, 'a', 'b', ((6 - 1) << 2) | 3, 2, 0};
    assert_false(dec(c1, sizeof c1, out, 8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compressor_blocks),
        cmocka_unit_test(test_prefixes_and_changes),
        cmocka_unit_test(test_hand_made_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
