/* grapnel: status codes.
 *
 * Every fallible call returns a gn_status. The message that goes with a failure
 * is read from the handle the call was made on (gn_graph_errmsg, ...), in the
 * manner of SQLite's errmsg. The codes come from src/common/status.def. */
#ifndef GRAPNEL_STATUS_H
#define GRAPNEL_STATUS_H

#include <stddef.h>
#include <stdint.h>

#if defined(GN_BUILDING_LIBRARY)
#define GN_API __attribute__((visibility("default")))
#else
#define GN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gn_status {
#define GN_STATUS(name, value, text) name = value,
#include "grapnel/status.def"
#undef GN_STATUS
} gn_status;

/* Static English text for a status code; never NULL ("unknown status" for an
 * unknown code). */
GN_API const char *gn_status_str(gn_status s);

/* Releases memory the library returned as "owned: gn_free". NULL is a no-op. */
GN_API void gn_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
