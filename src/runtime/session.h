/* Session internals for tests and reports (private). */
#ifndef GN_RUNTIME_SESSION_H
#define GN_RUNTIME_SESSION_H

#include "grapnel/runtime.h"
#include "runtime/backend.h"

/* Counters of the engine the last gn_session_run used (zeroed when there
 * was none); *n_engines gets the number of compiled engines the session
 * holds (one per feed/fetch signature). */
gn_status gn__session_stats(const gn_session *s, gn__engine_stats *out, uint32_t *n_engines);

#endif
