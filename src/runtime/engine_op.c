/* A Grapnel>EngineOp node as the backends read it: see engine_op.h. */
#include "runtime/engine_op.h"

#include <strings.h>

static const char *func_attr(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func && a->func->name ? a->func->name : NULL;
}

void gn__engine_op_read(const gn_graph *g, gn_id node, gn__engine_op_cfg *cfg)
{
    cfg->segment_fn = func_attr(g, node, "segment_func");
    cfg->engine_fn = func_attr(g, node, "_engine_func");
    if (!cfg->engine_fn) cfg->engine_fn = cfg->segment_fn;
    const char *pm = NULL;
    size_t pl = 0;
    cfg->int8 = gn__attr_get_string(g, node, "precision_mode", &pm, &pl) && pl == 4 && !strncasecmp(pm, "INT8", 4);
    cfg->table = NULL;
    cfg->table_len = 0;
    if (cfg->int8 && !gn__attr_get_string(g, node, "calibration_data", &cfg->table, &cfg->table_len))
        cfg->table = NULL, cfg->table_len = 0;
    if (cfg->int8) cfg->engine_fn = cfg->segment_fn;
    cfg->allow = true;
    (void)gn__attr_get_bool(g, node, "allow_build_at_runtime", &cfg->allow);
    int64_t max = 1;
    (void)gn__attr_get_int(g, node, "max_cached_engines_count", &max);
    cfg->max = max < 1 ? 1 : max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
}
