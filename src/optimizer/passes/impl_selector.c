/* impl_selector pass: being written; does nothing yet. */
#include "optimizer/pass.h"

const gn__pattern gn__patterns_impl_selector[] = {
    {NULL, NULL},
};

gn_status gn__pass_impl_selector(gn__pass_ctx *c, gn_graph *g)
{
    (void)c;
    (void)g;
    return GN_OK;
}
