/* remap pass: being written; does nothing yet. */
#include "optimizer/pass.h"

const gn__pattern gn__patterns_remap[] = {
    {NULL, NULL},
};

gn_status gn__pass_remap(gn__pass_ctx *c, gn_graph *g)
{
    (void)c;
    (void)g;
    return GN_OK;
}
