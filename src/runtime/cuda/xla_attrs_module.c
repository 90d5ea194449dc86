/* The readers of the XLA ops' attrs (src/ops/xla_attrs.c) built into the CUDA
 * module too: the module does not link libgrapnel, and the graph functions
 * those readers call come through the module's table (module.h). One source,
 * so the CUDA backend checks a gather's dimension numbers with the CPU
 * kernels' code and messages. */
#include "ops/xla_attrs.c"
