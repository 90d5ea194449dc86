/* pin_to_host pass: being written; does nothing yet. */
#include "optimizer/pass.h"

const gn__pattern gn__patterns_pin_to_host[] = {
    {NULL, NULL},
};

gn_status gn__pass_pin_to_host(gn__pass_ctx *c, gn_graph *g)
{
    (void)c;
    (void)g;
    return GN_OK;
}
