/* FarmHash Fingerprint64 (farmhashna::Hash64), as
 * TensorFlow's tensorflow/core/platform/fingerprint.h computes them (private).
 * Used for fingerprint.pb (docs/reference_formats.md §B9). */
#ifndef GN_COMMON_FARMHASH_H
#define GN_COMMON_FARMHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t gn__fingerprint64(const void *data, size_t len);
/* TensorFlow's FingerprintCat64(fp1, fp2): two fingerprints combined (order matters). */
uint64_t gn__fingerprint_cat64(uint64_t fp1, uint64_t fp2);

#endif
