/* grapnel run / verify: the random data of the feeds not given (seeded, so
 * both sides of verify and every run see the same values). Public API only. */
#include "run.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int gn_cli_random_fill(gn_tensor *t, uint64_t seed, const char *name)
{
    uint64_t st = seed ^ fnv(name);
    int64_t n = gn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix(&st);
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;   /* [-1, 1) */
        int64_t k = (int64_t)((r >> 33) % 10);
        switch (t->dtype) {
        case DT_FLOAT: ((float *)t->data)[i] = (float)u; break;
        case DT_DOUBLE: ((double *)t->data)[i] = u; break;
        case DT_HALF: ((_Float16 *)t->data)[i] = (_Float16)u; break;
        case DT_INT32: ((int32_t *)t->data)[i] = (int32_t)k; break;
        case DT_INT64: ((int64_t *)t->data)[i] = k; break;
        case DT_INT8: ((int8_t *)t->data)[i] = (int8_t)k; break;
        case DT_INT16: ((int16_t *)t->data)[i] = (int16_t)k; break;
        case DT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(r >> 56); break;
        case DT_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)k; break;
        case DT_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)k; break;
        case DT_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)k; break;
        case DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(r >> 63); break;
        default: return -1;
        }
    }
    return 0;
}
