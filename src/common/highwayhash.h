/* HighwayHash-64 (private): the keyed hash Riegeli files use for their block
 * and chunk headers (github.com/google/highwayhash, portable version). */
#ifndef GN_COMMON_HIGHWAYHASH_H
#define GN_COMMON_HIGHWAYHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct gn__hh {
    uint64_t v0[4], v1[4], mul0[4], mul1[4];
    uint8_t packet[32];
    size_t num;   /* bytes waiting in packet */
} gn__hh;

void gn__hh_start(gn__hh *s, const uint64_t key[4]);
void gn__hh_append(gn__hh *s, const void *data, size_t n);
uint64_t gn__hh_finish64(const gn__hh *s);
uint64_t gn__highwayhash64(const uint64_t key[4], const void *data, size_t n);

/* Riegeli's key: 'Riegeli/', 'records\n', 'Riegeli/', 'records\n'. */
extern const uint64_t gn__riegeli_hash_key[4];

#endif
