/* SpaceToBatchND / BatchToSpaceND kernels (nn_space.c), for the kernel table in nn.c. */
#ifndef GN_OPS_KERNELS_NN_SPACE_H
#define GN_OPS_KERNELS_NN_SPACE_H

#include "ops/kernel.h"

gn_status gn__nn_k_space_to_batch_nd(gn__kctx *c);
gn_status gn__nn_k_batch_to_space_nd(gn__kctx *c);

#endif
