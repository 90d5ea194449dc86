/* The CUDA backend: compile: the nodes in topological order, parsed and
 * checked, weights uploaded once; the plans kept per set of input shapes, most
 * recently used first. */
#include "runtime/cuda/backend_impl.h"

static gn_status topo(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, const uint8_t *keep,
                      gn_id *order, uint32_t *n_order, gn__err *err)
{
    uint32_t nn = g->n_nodes, cnt = 0;
    uint8_t *state = calloc(nn + 1, 1);
    gn_id *stack = malloc((nn + 1) * sizeof *stack);
    uint32_t *next = calloc(nn + 1, sizeof *next);
    gn_status s = GN_OK;
    if (!state || !stack || !next) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id root = 0; s == GN_OK && root < nn; root++) {
        if (!keep[root] || state[root]) continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        state[root] = 1;
        while (sp && s == GN_OK) {
            gn_id id = stack[sp - 1];
            const gn__node *nd = gn__node_at(g, id);
            uint32_t i = next[id], total = nd->n_in + nd->n_ctrl;
            gn_id dep = GN_NONE;
            for (; i < total && dep == GN_NONE; i++) {
                if (i < nd->n_in) {
                    if (gn__sig_feed_index(sig, has_feed, nd->in[i]) >= 0) continue;
                    dep = nd->in[i].node;
                } else {
                    gn_id c = nd->ctrl[i - nd->n_in];
                    if (gn__sig_control_feed(g, sig, has_feed, c) >= 0) continue;
                    dep = c;
                }
                if (!keep[dep] || state[dep] == 2) dep = GN_NONE;
            }
            next[id] = i;
            if (dep != GN_NONE) {
                if (state[dep] == 1) s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' is in a cycle (loops are not supported on the CUDA backend)", gn__node_name(g, dep));
                else {
                    state[dep] = 1;
                    stack[sp++] = dep;
                }
                continue;
            }
            state[id] = 2;
            order[cnt++] = id;
            sp--;
        }
    }
    free(state);
    free(stack);
    free(next);
    *n_order = cnt;
    return s;
}

static gn_status build_engine(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, gn__engine *e,
                              const uint8_t *has_feed, const uint8_t *keep, uint32_t n_keep, gn__err *err)
{
    gn_id *order = malloc((n_keep + 1) * sizeof *order);
    uint32_t *val_of = malloc((g->n_nodes + 1) * sizeof *val_of);   /* node -> value of output 0 */
    uint32_t *nout_of = calloc(g->n_nodes + 1, sizeof *nout_of);    /* node -> outputs computed */
    uint8_t *host = calloc(g->n_nodes + 1, 1);                       /* node -> known on the host at plan time */
    uint32_t n_order = 0;
    size_t cap = sig->n_feeds;
    gn_status s = GN_OK;
    if (!order || !val_of || !nout_of || !host) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GN_OK && i < g->n_nodes; i++) val_of[i] = UINT32_MAX;
    if (s == GN_OK) s = topo(g, sig, has_feed, keep, order, &n_order, err);
    for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
        int32_t k = gn__node_num_outputs(g, order[i]);
        cap += k > 1 ? (size_t)k : 1;
    }
    hctx hc = {sig, has_feed, host};
    if (s == GN_OK) {
        e->vals = calloc(cap + 1, sizeof *e->vals);
        e->nodes = calloc(n_order + 1, sizeof *e->nodes);
        e->fetch_val = calloc(sig->n_fetches + 1, sizeof *e->fetch_val);
        if (!e->vals || !e->nodes || !e->fetch_val) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; s == GN_OK && i < sig->n_feeds; i++) {
        e->vals[e->n_vals].kind = V_FEED;
        e->vals[e->n_vals++].feed = i;
    }
    char why[512];
    size_t wbytes = 0;
    for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
        gn_id id = order[i];
        const char *op = gn__node_op(g, id);
        if (!strcmp(op, "Const") || !strcmp(op, "HostConst")) {
            const Tensorflow__AttrValue *a = gn__node_attr(g, id, "value");
            cval *c = &e->vals[e->n_vals];
            if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR) {
                s = gn__fail(err, GN_ERR_GRAPH, "node '%s' (Const): no value", gn__node_name(g, id));
                break;
            }
            s = gn__tensor_from_proto(a->tensor, &c->host, err);
            if (s != GN_OK) {
                gn__err_prefix(err, "node '%s' (Const)", gn__node_name(g, id));
                break;
            }
            if (!gn_dtype_size(c->host.dtype)) {
                s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (Const): not supported on the CUDA backend: dtype %s",
                             gn__node_name(g, id), gn_dtype_numpy_name(c->host.dtype));
                break;
            }
            c->kind = V_CONST;
            c->dev_off = wbytes;
            wbytes += gn__cuda_align_up(c->host.nbytes ? c->host.nbytes : 1);
            val_of[id] = e->n_vals++;
            nout_of[id] = 1;
            host[id] = 1;
            continue;
        }
        cnode *n = &e->nodes[e->n_nodes];
        if (!strcmp(op, "Placeholder") || !strcmp(op, "PlaceholderV2")) {
            s = gn__fail(err, GN_ERR_ARG, "node '%s' (%s): the placeholder is needed but not fed", gn__node_name(g, id), op);
            break;
        }
        const gn__node *nd = gn__node_at(g, id);
        bool on_host = gn__cuda_is_host_op(op);
        for (uint32_t j = 0; on_host && !gn__cuda_is_shape_op(op) && j < nd->n_in; j++) on_host = gn__cuda_input_on_host(g, id, j, &hc);
        if (on_host) {
            memset(n, 0, sizeof *n);
            n->id = id;
            n->op = &gn__cuda_host_info;
            n->fuse_root = -1;
            int32_t no = gn__node_num_outputs(g, id);
            n->n_out = no > 1 ? (uint32_t)no : 1;
            host[id] = 1;
        } else if (!gn__cuda_parse_node(b, g, id, n, &hc, why, sizeof why)) {
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (%s): not supported on the CUDA backend: %s",
                         gn__node_name(g, id), op, why);
            break;
        }
        uint32_t min_in = 0, max_in = UINT32_MAX;
        if (!on_host) gn__cuda_arity(n, &min_in, &max_in);
        if (nd->n_in < min_in || nd->n_in > max_in) {
            s = gn__fail(err, GN_ERR_GRAPH, "node '%s' (%s): %u inputs, expected %u", gn__node_name(g, id), op, nd->n_in, min_in);
            break;
        }
        n->n_in = nd->n_in;
        n->in = calloc(nd->n_in + 1, sizeof *n->in);
        if (!n->in) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        e->n_nodes++;
        for (uint32_t j = 0; s == GN_OK && j < nd->n_in; j++) {
            gn__edge in = nd->in[j];
            int32_t fi = gn__sig_feed_index(sig, has_feed, in);
            if (fi >= 0) n->in[j] = (uint32_t)fi;
            else if (val_of[in.node] == UINT32_MAX || in.index >= nout_of[in.node])
                s = gn__fail(err, GN_ERR_UNSUPPORTED, "node '%s' (%s): not supported on the CUDA backend: input %u is output %u of '%s' (%s), which the CUDA backend does not compute",
                             gn__node_name(g, id), op, j, in.index, gn__node_name(g, in.node), gn__node_op(g, in.node));
            else n->in[j] = val_of[in.node] + in.index;
        }
        /* an INT8 engine: the nodes the CPU reference runs in int8 do here too */
        if (s == GN_OK && e->q8_table && !on_host && (n->op->kind == OP_CONV || n->op->kind == OP_MATMUL) &&
            gn__int8_node_info(g, id, &n->q8)) {
            gn__edge xe = nd->in[0];
            float amax = gn__calib_find(e->q8_table, gn__node_name(g, xe.node), xe.index);
            if (amax < 0) {
                s = gn__fail(err, GN_ERR_GRAPH,
                             "INT8 engine: no range for tensor '%s:%u' (input of %s '%s') in the calibration table",
                             gn__node_name(g, xe.node), xe.index, op, gn__node_name(g, id));
                break;
            }
            n->is_q8 = true;
            n->q8_sx = gn__q8_scale(amax);
        }
        if (n->op->kind == OP_NOOP) continue;
        if (s == GN_OK && e->n_vals + n->n_out > cap) {
            s = gn__fail(err, GN_ERR_INTERNAL, "node '%s' (%s): %u outputs, more than its op declares", gn__node_name(g, id), op, n->n_out);
            break;
        }
        n->out = e->n_vals;
        for (uint32_t k = 0; k < n->n_out; k++) e->vals[e->n_vals++].kind = V_NODE;
        val_of[id] = n->out;
        nout_of[id] = n->n_out;
    }
    e->n_fetches = sig->n_fetches;
    for (uint32_t f = 0; s == GN_OK && f < sig->n_fetches; f++) {
        gn__edge fe = sig->fetches[f];
        int32_t fi = gn__sig_feed_index(sig, has_feed, fe);
        if (fi >= 0) e->fetch_val[f] = (uint32_t)fi;
        else if (!keep[fe.node] || val_of[fe.node] == UINT32_MAX || fe.index >= nout_of[fe.node])
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "fetch %u: output %u of '%s' (%s) cannot be fetched from the CUDA backend",
                         f, fe.index, gn__node_name(g, fe.node), gn__node_op(g, fe.node));
        else e->fetch_val[f] = val_of[fe.node] + fe.index;
    }
    if (s == GN_OK) s = gn__cuda_match_layernorms(e, err);
    if (s == GN_OK) s = gn__cuda_fuse_elementwise(e, err);
    /* weights: uploaded once */
    if (s == GN_OK) {
        e->weights_bytes = wbytes;
        cudaError_t ce = cudaMalloc(&e->weights, wbytes ? wbytes : ALIGN);
        if (ce != cudaSuccess) {
            e->weights = NULL;
            s = gn__cuda_fail(err, "cudaMalloc (weights)", ce);
        }
        for (uint32_t v = 0; s == GN_OK && v < e->n_vals; v++) {
            const cval *c = &e->vals[v];
            if (c->kind != V_CONST || !c->host.nbytes) continue;
            ce = cudaMemcpyAsync((char *)e->weights + c->dev_off, c->host.data, c->host.nbytes, cudaMemcpyHostToDevice,
                                 b->stream);
            if (ce != cudaSuccess) s = gn__cuda_fail(err, "cudaMemcpyAsync (weights)", ce);
        }
        if (s == GN_OK && (ce = cudaStreamSynchronize(b->stream)) != cudaSuccess) s = gn__cuda_fail(err, "cudaStreamSynchronize", ce);
    }
    free(order);
    free(val_of);
    free(nout_of);
    free(host);
    return s;
}

gn_status gn__cuda_compile_depth(cu_backend *b, const gn_graph *g, const gn__engine_sig *sig, uint32_t depth,
                               const gn__calib_table *q8, gn__engine **out, gn__err *err)
{
    *out = NULL;
    uint8_t *has_feed = NULL, *keep = NULL;
    uint32_t n_keep = 0;
    gn_status s = gn__runtime_compile_start(g, sig, &has_feed, &keep, &n_keep, err);
    gn__engine *e = NULL;
    if (s == GN_OK && !(e = calloc(1, sizeof *e))) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        e->b = b;
        e->g = g;
        e->n_feeds = sig->n_feeds;
        e->depth = depth;
        e->q8_table = q8;
        s = build_engine(b, g, sig, e, has_feed, keep, n_keep, err);
        e->q8_table = NULL;
    }
    if (s == GN_OK) s = gn__cuda_engines_init(e, err);
    free(has_feed);
    free(keep);
    if (s != GN_OK) {
        gn__cuda_engine_free(b, e);
        return s;
    }
    *out = e;
    return GN_OK;
}

gn_status gn__cuda_compile(void *self, const gn_graph *g, const gn__engine_sig *sig, gn__engine **out, gn__err *err)
{
    return gn__cuda_compile_depth(self, g, sig, 0, NULL, out, err);
}

void gn__cuda_plan_drop(void *e, void *p) { gn__cuda_plan_free(e, p); }

static bool plan_matches(void *e, const void *p, const gn__tensor *in) { return gn__cuda_plan_matches(e, p, in); }

gn_status gn__cuda_plan_for(gn__engine *e, const gn__tensor *in, cplan **out, gn__err *err)
{
    *out = gn__plan_cache_find(&e->plans, plan_matches, e, in);
    if (*out) return GN_OK;
    cplan *p = NULL;
    GN_TRY(gn__cuda_plan_new(e, in, &p, err));
    gn__plan_cache_add(&e->plans, p, gn__cuda_plan_drop, e);
    *out = p;
    return GN_OK;
}
