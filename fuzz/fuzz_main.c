/* One libFuzzer binary per target: GN_FUZZ_TARGET names it (targets.c). */
#include <stdio.h>
#include <stdlib.h>

#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const gn_fuzz_target *t;
    if (!t) {
        t = gn_fuzz_find(GN_FUZZ_TARGET);
        if (!t) {
            fprintf(stderr, "fuzz: no target '%s'\n", GN_FUZZ_TARGET);
            abort();
        }
    }
    if (size > t->max_len) return 0;
    return t->fn(data, size);
}
