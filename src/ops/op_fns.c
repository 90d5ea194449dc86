/* The function columns of the op list (src/opdef/ops.def) as one sorted
 * table: one binary search gives an op's shape function and CPU kernel. */
#include "ops/op_fns.h"

#include <string.h>

#define GN__NO_SHAPE NULL
#define GN__NO_KERNEL NULL
#define GN_OP(name, traits, amp, shape, kernel) {name, shape, kernel},
static const gn__op_fns op_fns[] = {
#include "opdef/ops.def"
};
#undef GN_OP
#undef GN__NO_KERNEL
#undef GN__NO_SHAPE

const gn__op_fns *gn__op_fns_find(const char *op)
{
    size_t lo = 0, hi = GN__ARRAY_LEN(op_fns);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(op_fns[mid].name, op);
        if (cmp == 0) return &op_fns[mid];
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

uint32_t gn__op_fns_count(void) { return (uint32_t)GN__ARRAY_LEN(op_fns); }

const gn__op_fns *gn__op_fns_at(uint32_t i) { return i < GN__ARRAY_LEN(op_fns) ? &op_fns[i] : NULL; }

gn__shape_fn gn__shape_fn_for(const char *op)
{
    const gn__op_fns *r = gn__op_fns_find(op);
    return r ? r->shape : NULL;
}

gn__kernel_fn gn__kernel_for(const char *op)
{
    const gn__op_fns *r = gn__op_fns_find(op);
    return r ? r->kernel : NULL;
}
