/* Private pieces of the function optimizer (function.c). */
#ifndef GN_OPTIMIZER_PASSES_FUNCTION_IMPL_H
#define GN_OPTIMIZER_PASSES_FUNCTION_IMPL_H

#include "optimizer/pass.h"

/* function.lower_if / function.lower_while (function_lower.c). */
gn_status gn__fn_lower_control_flow(gn__pass_ctx *c, gn_graph *g);
/* function.specialize (function_specialize.c); top level only. */
gn_status gn__fn_specialize(gn__pass_ctx *c, gn_graph *g);

/* A copy of FunctionDef od named `name` whose signature keeps the inputs keep_in marks
 * (nin of them) and the outputs keep_out marks (nout), arg_attr and
 * resource_arg_unique_id re-keyed to the new input indices; built in g's values.
 * NULL when out of memory. */
Tensorflow__FunctionDef *gn__fn_def_cut(gn_graph *g, const Tensorflow__FunctionDef *od, const char *name,
                                        const uint8_t *keep_in, size_t nin, const uint8_t *keep_out, size_t nout);
/* A clone of fn's body in which input i's _Arg becomes a Const of the same name
 * with the value of Const node consts[i] of g (GN_NONE: the input stays), the
 * _Retval of output i goes unless keep_out[i], and the remaining _Arg /
 * _Retval are renumbered. Errors name `what`. */
gn_status gn__fn_body_cut(gn__pass_ctx *c, gn_graph *g, const gn__function *fn, const gn_id *consts,
                          const uint8_t *keep_out, const char *what, gn_graph **out);

#endif
