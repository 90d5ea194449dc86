/* Private pieces of the function optimizer (function.c). */
#ifndef GN_OPTIMIZER_PASSES_FUNCTION_IMPL_H
#define GN_OPTIMIZER_PASSES_FUNCTION_IMPL_H

#include "optimizer/pass.h"

/* function.lower_if / function.lower_while (function_lower.c). */
gn_status gn__fn_lower_control_flow(gn__pass_ctx *c, gn_graph *g);
/* function.specialize (function_specialize.c); top level only. */
gn_status gn__fn_specialize(gn__pass_ctx *c, gn_graph *g);

#endif
