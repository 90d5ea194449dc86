/* CRC-32C (Castagnoli) and LevelDB's mask: the checksums of tensor bundles,
 * TFRecord files and fingerprints (private). */
#ifndef GN_COMMON_CRC32C_H
#define GN_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t gn__crc32c(uint32_t crc, const void *data, size_t n);
static inline uint32_t gn__crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
static inline uint32_t gn__crc32c_unmask(uint32_t m)
{
    uint32_t r = m - 0xa282ead8u;
    return (r >> 17) | (r << 15);
}

#endif
