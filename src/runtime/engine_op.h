/* A Grapnel>EngineOp node as the backends that run it read it (private):
 * the same attrs, with the same defaults, for the CPU backend's engine cache
 * (cpu/exec.c) and the CUDA backend's (cuda/engine_op.c). */
#ifndef GN_RUNTIME_ENGINE_OP_H
#define GN_RUNTIME_ENGINE_OP_H

#include "graph/ir.h"

typedef struct gn__engine_op_cfg {
    const char *segment_fn;       /* segment_func: the native segment (NULL: missing or not a function) */
    const char *engine_fn;        /* what an engine runs: _engine_func when the conversion made one (FP16),
                                   * else the segment; an INT8 engine is built from the segment */
    bool int8;                    /* precision_mode INT8 */
    const char *table;            /* INT8: calibration_data (NULL, 0: not calibrated yet) */
    size_t table_len;
    bool allow;                   /* allow_build_at_runtime (default true) */
    uint32_t max;                 /* max_cached_engines_count, at least 1 (default 1) */
} gn__engine_op_cfg;

void gn__engine_op_read(const gn_graph *g, gn_id node, gn__engine_op_cfg *cfg);

#endif
