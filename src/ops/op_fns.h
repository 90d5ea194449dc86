/* The function columns of the op list (src/opdef/ops.def): each op's shape
 * function and CPU kernel. Every function those columns name is declared
 * here, from the list, so a kernel or shape function needs no prototype of
 * its own; src/ops/op_fns.c makes the table that gn__shape_fn_for
 * (ops/shape.h) and gn__kernel_for (ops/kernel.h) search. Included by the
 * kernel files (src/ops/kernels/) and the shape functions (ops/shape_fn.h). */
#ifndef GN_OPS_OP_FNS_H
#define GN_OPS_OP_FNS_H

#include "ops/kernel.h"
#include "ops/shape.h"

/* One row of the list, the function columns: NULL where the list says
 * GN__NO_SHAPE / GN__NO_KERNEL. */
typedef struct gn__op_fns {
    const char *name;
    gn__shape_fn shape;
    gn__kernel_fn kernel;
} gn__op_fns;

/* The row of op (one binary search), NULL when the list has none. */
const gn__op_fns *gn__op_fns_find(const char *op);
/* The rows in list order (sorted by name), for tests and tools. */
uint32_t gn__op_fns_count(void);
const gn__op_fns *gn__op_fns_at(uint32_t i);

/* Every shape function and kernel of the list. A missing one declares a
 * placeholder that nothing defines or uses. */
#define GN__NO_SHAPE gn__op_list_no_shape
#define GN__NO_KERNEL gn__op_list_no_kernel
#define GN_OP(name, traits, amp, shape, kernel)                                                      \
    gn_status shape(gn__shape_ctx *c);                                                             \
    gn_status kernel(gn__kctx *c);
#include "opdef/ops.def"
#undef GN_OP
#undef GN__NO_KERNEL
#undef GN__NO_SHAPE

#endif
