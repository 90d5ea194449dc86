/* grapnel: a Grappler-style optimizer for TensorFlow graphs. The only header an
 * FFI binding needs. */
#ifndef GRAPNEL_H
#define GRAPNEL_H

#include "grapnel/status.h"
#include "grapnel/graph.h"
#include "grapnel/inspect.h"
#include "grapnel/runtime.h"
#include "grapnel/options.h"
#include "grapnel/optimizer.h"
#include "grapnel/savedmodel.h"
#include "grapnel/save.h"
#include "grapnel/version.h"

#ifdef __cplusplus
extern "C" {
#endif
/* GN_VERSION_STRING of the library actually linked (include/grapnel/version.h). */
GN_API const char *gn_version(void);
#ifdef __cplusplus
}
#endif
#endif
