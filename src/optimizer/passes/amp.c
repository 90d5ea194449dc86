/* amp pass: being written; does nothing yet. */
#include "optimizer/pass.h"

const gn__pattern gn__patterns_amp[] = {
    {NULL, NULL},
};

gn_status gn__pass_amp(gn__pass_ctx *c, gn_graph *g)
{
    (void)c;
    (void)g;
    return GN_OK;
}
