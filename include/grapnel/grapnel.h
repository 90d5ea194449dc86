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

#define GN_VERSION_MAJOR 0
#define GN_VERSION_MINOR 1
#define GN_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif
GN_API const char *gn_version(void);
#ifdef __cplusplus
}
#endif
#endif
