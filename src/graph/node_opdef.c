/* The registry's calls on a node of a graph: the IR gives the op-definition
 * layer (src/opdef/registry.h), which knows no graph, a view of the node's
 * attrs and its name. */
#include "graph/ir.h"

static const Tensorflow__AttrValue *view_get(const void *ctx, uint32_t node, const char *key)
{
    return gn__node_attr(ctx, node, key);
}

static const char *view_name(const void *ctx, uint32_t node) { return gn__node_name(ctx, node); }

gn__attr_view gn__node_attr_view(const gn_graph *g, gn_id id)
{
    return (gn__attr_view){.ctx = g, .node = id, .get = view_get, .name = view_name};
}

gn_status gn__op_input_range(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t arg, uint32_t *start,
                             uint32_t *count, gn__err *err)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_input_range(op, g ? &v : NULL, arg, start, count, err);
}

gn_status gn__op_output_range(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t arg, uint32_t *start,
                              uint32_t *count, gn__err *err)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_output_range(op, g ? &v : NULL, arg, start, count, err);
}

gn_status gn__op_num_inputs(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t *n, gn__err *err)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_num_inputs(op, g ? &v : NULL, n, err);
}

gn_status gn__op_num_outputs(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t *n, gn__err *err)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_num_outputs(op, g ? &v : NULL, n, err);
}

int32_t gn__op_output_dtype(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t k)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_output_dtype(op, g ? &v : NULL, k);
}

int32_t gn__op_input_dtype(const gn__opdef *op, const gn_graph *g, gn_id node, uint32_t k)
{
    gn__attr_view v = gn__node_attr_view(g, node);
    return gn__opdef_input_dtype(op, g ? &v : NULL, k);
}
