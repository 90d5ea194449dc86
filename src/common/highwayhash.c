/* HighwayHash-64, portable: 4 lanes of 64 bits, 32-byte packets, a
 * remainder packet built from the last size % 32 bytes, 4 permute-and-update
 * rounds to finish. */
#include "common/highwayhash.h"

#include <stddef.h>
#include <string.h>

const uint64_t gn__riegeli_hash_key[4] = {0x2f696c6567656952ull, 0x0a7364726f636572ull, 0x2f696c6567656952ull,
                                          0x0a7364726f636572ull};

static uint64_t swap32(uint64_t x) { return (x >> 32) | (x << 32); }

void gn__hh_start(gn__hh *s, const uint64_t key[4])
{
    static const uint64_t m0[4] = {0xdbe6d5d5fe4cce2full, 0xa4093822299f31d0ull, 0x13198a2e03707344ull,
                                   0x243f6a8885a308d3ull};
    static const uint64_t m1[4] = {0x3bd39e10cb0ef593ull, 0xc0acf169b5f18a8cull, 0xbe5466cf34e90c6cull,
                                   0x452821e638d01377ull};
    for (int i = 0; i < 4; i++) {
        s->mul0[i] = m0[i];
        s->mul1[i] = m1[i];
        s->v0[i] = m0[i] ^ key[i];
        s->v1[i] = m1[i] ^ swap32(key[i]);
    }
    s->num = 0;
}

static void zipper_merge_add(uint64_t v1, uint64_t v0, uint64_t *add1, uint64_t *add0)
{
    *add0 += (((v0 & 0xff000000ull) | (v1 & 0xff00000000ull)) >> 24) |
             (((v0 & 0xff0000000000ull) | (v1 & 0xff000000000000ull)) >> 16) | (v0 & 0xff0000ull) |
             ((v0 & 0xff00ull) << 32) | ((v1 & 0xff00000000000000ull) >> 8) | (v0 << 56);
    *add1 += (((v1 & 0xff000000ull) | (v0 & 0xff00000000ull)) >> 24) | (v1 & 0xff0000ull) |
             ((v1 & 0xff0000000000ull) >> 16) | ((v1 & 0xff00ull) << 24) | ((v0 & 0xff000000000000ull) >> 8) |
             ((v1 & 0xffull) << 48) | (v0 & 0xff00000000000000ull);
}

static void update(gn__hh *s, const uint64_t lanes[4])
{
    for (int i = 0; i < 4; i++) {
        s->v1[i] += s->mul0[i] + lanes[i];
        s->mul0[i] ^= (s->v1[i] & 0xffffffffull) * (s->v0[i] >> 32);
        s->v0[i] += s->mul1[i];
        s->mul1[i] ^= (s->v0[i] & 0xffffffffull) * (s->v1[i] >> 32);
    }
    zipper_merge_add(s->v1[1], s->v1[0], &s->v0[1], &s->v0[0]);
    zipper_merge_add(s->v1[3], s->v1[2], &s->v0[3], &s->v0[2]);
    zipper_merge_add(s->v0[1], s->v0[0], &s->v1[1], &s->v1[0]);
    zipper_merge_add(s->v0[3], s->v0[2], &s->v1[3], &s->v1[2]);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void update_packet(gn__hh *s, const uint8_t *p)
{
    uint64_t lanes[4] = {le64(p), le64(p + 8), le64(p + 16), le64(p + 24)};
    update(s, lanes);
}

static uint32_t rotl32(uint32_t x, unsigned c) { return c ? (x << c) | (x >> (32 - c)) : x; }

static void update_remainder(gn__hh *s, const uint8_t *bytes, size_t size_mod32)
{
    size_t size_mod4 = size_mod32 & 3;
    const uint8_t *rem = bytes + (size_mod32 & ~(size_t)3);
    uint8_t packet[32] = {0};
    for (int i = 0; i < 4; i++) {
        s->v0[i] += ((uint64_t)size_mod32 << 32) + size_mod32;
        uint32_t lo = (uint32_t)s->v1[i], hi = (uint32_t)(s->v1[i] >> 32);
        s->v1[i] = (uint64_t)rotl32(lo, (unsigned)size_mod32) | (uint64_t)rotl32(hi, (unsigned)size_mod32) << 32;
    }
    memcpy(packet, bytes, (size_t)(rem - bytes));
    if (size_mod32 & 16) {
        /* the last 4 bytes of the input (size_mod32 >= 16, so they lie before rem when size_mod4 < 4) */
        for (ptrdiff_t i = 0; i < 4; i++) packet[28 + i] = rem[i + (ptrdiff_t)size_mod4 - 4];
    } else if (size_mod4) {
        packet[16] = rem[0];
        packet[17] = rem[size_mod4 >> 1];
        packet[18] = rem[size_mod4 - 1];
    }
    update_packet(s, packet);
}

void gn__hh_append(gn__hh *s, const void *data, size_t n)
{
    const uint8_t *b = data;
    if (s->num) {
        size_t take = n < 32 - s->num ? n : 32 - s->num;
        memcpy(s->packet + s->num, b, take);
        s->num += take;
        b += take;
        n -= take;
        if (s->num == 32) {
            update_packet(s, s->packet);
            s->num = 0;
        }
    }
    for (; n >= 32; n -= 32, b += 32) update_packet(s, b);
    if (n) {
        memcpy(s->packet, b, n);
        s->num = n;
    }
}

uint64_t gn__hh_finish64(const gn__hh *st)
{
    gn__hh s = *st;
    if (s.num) update_remainder(&s, s.packet, s.num);
    for (int r = 0; r < 4; r++) {
        uint64_t p[4] = {swap32(s.v0[2]), swap32(s.v0[3]), swap32(s.v0[0]), swap32(s.v0[1])};
        update(&s, p);
    }
    return s.v0[0] + s.v1[0] + s.mul0[0] + s.mul1[0];
}

uint64_t gn__highwayhash64(const uint64_t key[4], const void *data, size_t n)
{
    gn__hh s;
    gn__hh_start(&s, key);
    gn__hh_append(&s, data, n);
    return gn__hh_finish64(&s);
}
