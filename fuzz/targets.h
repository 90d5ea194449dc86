/* The fuzz targets' bodies, shared by the libFuzzer binaries (fuzz_main.c,
 * one binary per target) and the regression suite (tests/fuzz_regress_test.c),
 * which replays every input kept under tests/data/fuzz/<target>/.
 *
 * Each body takes one input, drives the library with it and returns 0. An
 * input the library refuses is fine (it must come back as a status with a
 * message); a crash, a sanitizer report, a leak, or a broken property (a
 * round trip that does not give the same bytes, a failure without a message)
 * ends in abort(), which both libFuzzer and cmocka report. */
#ifndef GN_FUZZ_TARGETS_H
#define GN_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* Separates the parts of an input that holds several files (the SavedModel
 * target: saved_model.pb, variables.index, the data shard). */
#define GN_FUZZ_SPLIT "#GNSPLIT#"

typedef int (*gn_fuzz_fn)(const uint8_t *data, size_t size);

typedef struct gn_fuzz_target {
    const char *name;
    gn_fuzz_fn fn;
    size_t max_len;   /* inputs longer than this are ignored (libFuzzer's -max_len) */
} gn_fuzz_target;

/* Every target, NULL-terminated. */
extern const gn_fuzz_target gn_fuzz_targets[];
const gn_fuzz_target *gn_fuzz_find(const char *name);

#endif
