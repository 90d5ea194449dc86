/* Snappy block decompression: see snappy.h. */
#include "io/snappy.h"

#include <string.h>

/* The varint at in[*pos..n), at most 5 bytes and 32 bits. */
static bool get_len(const uint8_t *in, size_t n, size_t *pos, uint32_t *v)
{
    uint64_t x = 0;
    for (unsigned k = 0; k < 5; k++) {
        if (*pos >= n) return false;
        uint8_t c = in[(*pos)++];
        x |= (uint64_t)(c & 0x7f) << (7 * k);
        if (c < 0x80) {
            if (x > UINT32_MAX) return false;
            *v = (uint32_t)x;
            return true;
        }
    }
    return false;
}

bool gn__snappy_length(const uint8_t *in, size_t n, size_t *ulen)
{
    size_t pos = 0;
    uint32_t v = 0;
    if (!get_len(in, n, &pos, &v)) return false;
    *ulen = v;
    return true;
}

/* k little-endian bytes at p (1 <= k <= 4) */
static inline uint32_t le(const uint8_t *p, unsigned k)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < k; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

bool gn__snappy_decode(const uint8_t *in, size_t n, uint8_t *out, size_t ulen)
{
    size_t pos = 0, o = 0;
    uint32_t stated = 0;
    if (!get_len(in, n, &pos, &stated) || stated != ulen) return false;
    while (pos < n) {
        uint8_t tag = in[pos++];
        size_t len, off;
        switch (tag & 3) {
        case 0: { /* literal */
            len = (size_t)(tag >> 2);
            if (len >= 60) {
                unsigned k = (unsigned)len - 59;
                if (n - pos < k) return false;
                len = le(in + pos, k);
                pos += k;
            }
            len += 1;
            if (n - pos < len || ulen - o < len) return false;
            memcpy(out + o, in + pos, len);
            pos += len;
            o += len;
            continue;
        }
        case 1: /* copy, 11-bit offset */
            if (n - pos < 1) return false;
            len = 4 + ((tag >> 2) & 7);
            off = ((size_t)(tag >> 5) << 8) | in[pos];
            pos += 1;
            break;
        case 2: /* copy, 16-bit offset */
            if (n - pos < 2) return false;
            len = 1 + (size_t)(tag >> 2);
            off = le(in + pos, 2);
            pos += 2;
            break;
        default: /* copy, 32-bit offset */
            if (n - pos < 4) return false;
            len = 1 + (size_t)(tag >> 2);
            off = le(in + pos, 4);
            pos += 4;
            break;
        }
        if (off == 0 || off > o || ulen - o < len) return false;
        const uint8_t *src = out + o - off;
        if (off >= len) {
            memcpy(out + o, src, len);
        } else {
            for (size_t i = 0; i < len; i++) out[o + i] = src[i]; /* overlapping: a byte at a time */
        }
        o += len;
    }
    return o == ulen;
}
