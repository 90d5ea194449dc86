/* Pin to host (Grappler's pin_to_host_optimizer, docs/reference_grappler.md
 * §3.9): on a GPU
 * target, small integer / shape computations move to the host CPU of the same
 * job/replica/task, so no tiny GPU kernels and host-device copies run.
 *
 * As PinToHostOptimizer::Optimize, in topological order:
 *  - a node already on a CPU device is a candidate (and stays);
 *  - collective ops, control flow ops and NoOp never move, nor ops the CPU
 *    backend has no kernel for;
 *  - every data input must be "host friendly": produced on a CPU device, or
 *    by an output the producer's GPU kernel keeps in host memory (Shape,
 *    ShapeN, Size, Rank; int32 Const; the int32 kernels of host-friendly ops
 *    such as Add, Pack, StridedSlice, ConcatV2), or through Identity of such
 *    (and the tensor is small);
 *  - every output is small (IsTensorSmall): a string, or an int32 / int64 /
 *    float tensor of fully known shape with at most 64 elements;
 *  - then the device becomes "/device:CPU:0" (unplaced), or the GPU device
 *    name with its "GPU:<k>" part replaced by "CPU:0".
 * Afterwards a Const that moved goes back to its device when one of its
 * consumers does not take that input in host memory (IsNodeInputPortHostFriendly).
 * The host-memory arguments of TensorFlow's GPU kernels are a table here
 * (hm_inputs); shapes come from gn__graph_infer_shapes. Runs on the top-level
 * graph (function bodies are left as they are). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_pin_to_host[] = {
    {"pin_to_host.pin", "small integer/shape computations placed on the host CPU"},
    {NULL, NULL},
};

#define MAX_SMALL 64

/* Inputs TensorFlow's GPU kernels take in host memory ("Op:arg"). */
static const char *const hm_inputs[] = {
    "All:reduction_indices", "Any:reduction_indices", "ArgMax:dimension", "ArgMin:dimension",
    "BroadcastTo:shape", "Concat:concat_dim", "ConcatV2:axis", "Conv2DBackpropFilter:filter_sizes",
    "Conv2DBackpropInput:input_sizes", "Cumprod:axis", "Cumsum:axis", "Empty:shape", "ExpandDims:dim",
    "Fill:dims", "GatherV2:axis", "Max:reduction_indices", "Mean:reduction_indices", "Min:reduction_indices",
    "MirrorPad:paddings", "OneHot:depth", "Pad:paddings", "PadV2:paddings", "Prod:reduction_indices",
    "RandomStandardNormal:shape", "RandomUniform:shape", "Range:delta", "Range:limit", "Range:start",
    "Reshape:shape", "ResizeBilinear:size", "ResizeNearestNeighbor:size", "Reverse:dims", "ReverseV2:axis",
    "Slice:begin", "Slice:size", "Split:split_dim", "SplitV:size_splits", "SplitV:split_dim",
    "StridedSlice:begin", "StridedSlice:end", "StridedSlice:strides", "Sum:reduction_indices", "Tile:multiples",
    "TopKV2:k", "Transpose:perm", "TruncatedNormal:shape",
};

typedef struct pin {
    gn__pass_ctx *c;
    gn_graph *g;
    uint32_t n;
    uint32_t *off;      /* per node into small[] */
    uint8_t *small;     /* per output: small tensor */
    uint8_t *all_small; /* per node */
} pin;

static bool on_cpu(const gn_graph *g, gn_id id)
{
    return strstr(gn__str(g, gn__node_at(g, id)->device), "CPU") != NULL;
}

static bool blacklisted(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    const gn__opdef *d = gn__node_opdef(g, id);
    return strstr(op, "Collective") != NULL || strcmp(op, "NoOp") == 0 ||
           (d && (d->traits & GN__T_CONTROL_FLOW));
}

static bool is_small(const gn__tinfo *t)
{
    if (!t) return false;
    if (t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING) return true;
    if (t->dtype != TENSORFLOW__DATA_TYPE__DT_INT32 && t->dtype != TENSORFLOW__DATA_TYPE__DT_INT64 &&
        t->dtype != TENSORFLOW__DATA_TYPE__DT_FLOAT)
        return false;
    if (!gn__shape_fully_defined(&t->shape)) return false;
    int64_t n = gn__shape_num_elements(&t->shape);
    return n >= 0 && n <= MAX_SMALL;
}

/* int32 kernels of host-friendly ops keep every argument in host memory on the GPU. */
static bool int32_host_kernel(const gn_graph *g, gn_id id)
{
    const gn__opdef *d = gn__node_opdef(g, id);
    if (!d || !(d->traits & GN__T_HOST_FRIENDLY)) return false;
    int dt;
    if (gn__attr_get_type(g, id, "T", &dt) || gn__attr_get_type(g, id, "dtype", &dt) ||
        gn__attr_get_type(g, id, "DstT", &dt))
        return dt == TENSORFLOW__DATA_TYPE__DT_INT32;
    return false;
}

static bool host_output(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    if (!strcmp(op, "Shape") || !strcmp(op, "ShapeN") || !strcmp(op, "Size") || !strcmp(op, "Rank") ||
        !strcmp(op, "HostConst"))
        return true;
    return int32_host_kernel(g, id);
}

/* Input slot `slot` of node id: does its (GPU) kernel take it in host memory? */
static bool input_host_friendly(const gn_graph *g, gn_id id, uint32_t slot)
{
    if (on_cpu(g, id)) return true;
    const gn__node *nd = gn__node_at(g, id);
    if (nd->opdef < 0) return false;
    if (int32_host_kernel(g, id)) return true;
    const gn__opdef *op = gn__op_at((uint32_t)nd->opdef);
    gn__err e = {0};
    for (uint32_t a = 0; a < op->n_inputs; a++) {
        uint32_t start, count;
        if (gn__op_input_range(op, g, id, a, &start, &count, &e) != GN_OK) return false;
        if (slot < start || slot >= start + count) continue;
        char key[160];
        snprintf(key, sizeof key, "%s:%s", op->name, op->inputs[a].name);
        for (size_t i = 0; i < sizeof hm_inputs / sizeof hm_inputs[0]; i++)
            if (strcmp(hm_inputs[i], key) == 0) return true;
        return false;
    }
    return false;
}

static bool port_small(const pin *p, gn__edge e)
{
    uint32_t k = p->off[e.node] + e.index;
    return k < p->off[e.node + 1] && p->small[k];
}

/* IsNodeOutputPortHostFriendly; Identity chains are followed iteratively. */
static bool output_host_friendly(const pin *p, gn__edge e)
{
    const gn_graph *g = p->g;
    for (uint32_t guard = 0; guard < p->n + 1; guard++) {
        if (blacklisted(g, e.node) || !port_small(p, e)) return false;
        const char *op = gn__node_op(g, e.node);
        const gn__node *nd = gn__node_at(g, e.node);
        if ((strcmp(op, "Identity") == 0 || (strcmp(op, "IdentityN") == 0 && nd->n_in == 1)) && nd->n_in == 1) {
            e = nd->in[0];
            continue;
        }
        return on_cpu(g, e.node) || host_output(g, e.node);
    }
    return false;
}

static void host_device(const char *dev, char *buf, size_t len)
{
    const char *gpu = NULL;
    for (const char *s = strstr(dev, "GPU"); s; s = strstr(s + 1, "GPU")) gpu = s;
    if (!dev[0] || !gpu)
        snprintf(buf, len, "/device:CPU:0");
    else
        snprintf(buf, len, "%.*sCPU:0", (int)(gpu - dev), dev);
}

gn_status gn__pass_pin_to_host(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, "pin_to_host.pin") || c->fn_name) return GN_OK;
    if (c->target->kind != GN_TARGET_GPU) {
        gn__pass_refused(c, "pin_to_host.pin", g, GN_NONE, "no GPU in the target (cpu): everything runs on the host");
        return GN_OK;
    }
    if (gn__graph_infer_shapes(g) != GN_OK) {
        gn__pass_refused(c, "pin_to_host.pin", g, GN_NONE, "shape inference failed: %s", g->err.msg);
        return GN_OK;
    }
    pin p = {c, g, g->n_nodes, NULL, NULL, NULL};
    gn_status s = GN_OK;
    gn_id *order = NULL, *consts = NULL;
    uint32_t n_order = 0, n_consts = 0;
    uint32_t *old_dev = NULL;
    p.off = malloc(((size_t)p.n + 1) * sizeof *p.off);
    p.all_small = calloc((size_t)p.n + 1, 1);
    if (!p.off || !p.all_small) goto nomem;
    size_t total = 0;
    for (gn_id id = 0; id < p.n; id++) {
        p.off[id] = (uint32_t)total;
        if (gn__node_live(g, id)) total += gn__shape_num_outputs(g, id);
    }
    p.off[p.n] = (uint32_t)total;
    p.small = calloc(total + 1, 1);
    if (!p.small) goto nomem;
    for (gn_id id = 0; id < p.n; id++) {
        if (!gn__node_live(g, id)) continue;
        bool all = true;
        for (uint32_t k = 0; k < p.off[id + 1] - p.off[id]; k++) {
            p.small[p.off[id] + k] = is_small(gn__shape_of(g, id, k));
            if (!p.small[p.off[id] + k]) all = false;
        }
        if (gn__node_num_outputs(g, id) < 0) all = false;
        p.all_small[id] = all;
    }
    if ((s = gn__graph_topo(g, &order, &n_order)) != GN_OK) {
        s = gn__fail(c->err, s, "pin_to_host: %s", g->err.msg);
        goto done;
    }
    consts = malloc(((size_t)n_order + 1) * sizeof *consts);
    old_dev = calloc((size_t)n_order + 1, sizeof *old_dev);
    if (!consts || !old_dev) goto nomem;
    char dev[512];
    for (uint32_t i = 0; i < n_order; i++) {
        gn_id id = order[i];
        const gn__node *nd = gn__node_at(g, id);
        if ((nd->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) || on_cpu(g, id) || blacklisted(g, id)) continue;
        if (!p.all_small[id]) continue;
        const char *op = gn__node_op(g, id);
        if (!gn__kernel_for(op)) {
            gn__pass_refused(c, "pin_to_host.pin", g, id, "'%s' (%s) stays: no CPU kernel", gn__node_name(g, id), op);
            continue;
        }
        uint32_t bad = UINT32_MAX;
        for (uint32_t k = 0; k < nd->n_in && bad == UINT32_MAX; k++)
            if (!output_host_friendly(&p, nd->in[k])) bad = k;
        if (bad != UINT32_MAX) {
            gn__pass_refused(c, "pin_to_host.pin", g, id, "'%s' (%s) stays: input %u from '%s' is not host friendly",
                             gn__node_name(g, id), op, bad, gn__node_name(g, nd->in[bad].node));
            continue;
        }
        const char *cur = gn__str(g, nd->device);
        host_device(cur, dev, sizeof dev);
        if (strcmp(op, "Const") == 0) {
            old_dev[n_consts] = nd->device;
            consts[n_consts++] = id;
        }
        gn__node_set_device(g, id, dev);
        if (strcmp(op, "Const") != 0) c->changed = true;
        if (strcmp(op, "Const") != 0)
            gn__pass_rewrote(c, "pin_to_host.pin", g, id, "'%s' (%s) placed on %s: small outputs, host-friendly inputs",
                             gn__node_name(g, id), op, dev);
    }
    /* a moved Const goes back when a consumer does not take it in host memory */
    for (uint32_t i = 0; i < n_consts; i++) {
        gn_id id = consts[i];
        const gn__node *nd = gn__node_at(g, id);
        uint32_t bad = UINT32_MAX;
        for (uint32_t u = 0; u < nd->n_use && bad == UINT32_MAX; u++)
            if (!input_host_friendly(g, nd->use[u].node, nd->use[u].slot)) bad = u;
        if (bad != UINT32_MAX) {
            gn__use use = nd->use[bad];
            gn__node_set_device(g, id, gn__str(g, old_dev[i]));
            gn__pass_refused(c, "pin_to_host.pin", g, id, "Const '%s' stays: '%s' (%s) takes input %u in device memory",
                             gn__node_name(g, id), gn__node_name(g, use.node), gn__node_op(g, use.node), use.slot);
        } else {
            c->changed = true;
            gn__pass_rewrote(c, "pin_to_host.pin", g, id, "'%s' (Const) placed on %s: small output, host-memory consumers",
                             gn__node_name(g, id), gn__str(g, nd->device));
        }
    }
    goto done;
nomem:
    s = gn__fail(c->err, GN_ERR_NOMEM, "pin_to_host: out of memory");
done:
    free(old_dev);
    free(consts);
    free(order);
    free(p.off);
    free(p.small);
    free(p.all_small);
    return s;
}
