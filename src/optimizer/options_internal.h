/* Private helpers around gn_options (src/optimizer/options.c) for the
 * meta-optimizer, the report and the CLI.
 *
 * Thread-safety: no shared state. */
#ifndef GN_OPTIMIZER_OPTIONS_INTERNAL_H
#define GN_OPTIMIZER_OPTIONS_INTERNAL_H

#include <stdint.h>

#include "grapnel/options.h"

/* RewriterConfig.Toggle's name for t: "DEFAULT", "ON", "OFF", "AGGRESSIVE",
 * "EXPERIMENTAL_MLIR", "EXPERIMENTAL_BOTH"; "UNKNOWN" for any other number.
 * Never NULL; static storage. */
const char *gn__toggle_name(int32_t t);

#endif
