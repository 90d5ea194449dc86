/* The CUDA backend: Grapnel>EngineOp: the engines an engine op runs, kept per
 * op in a least-recently-used cache. */
#include "runtime/cuda/backend_impl.h"

#define MAX_ENGINE_DEPTH 4

void gn__cuda_ceng_release(cu_backend *b, ceng *c)
{
    if (!c || --c->refs) return;
    gn__cuda_engine_free(b, c->sub);
    gn__engine_key_free(&c->key);
    free(c);
}

/* the cache's reference to an engine dropped (ctx: the backend) */
static void ceng_drop(void *b, void *c) { gn__cuda_ceng_release(b, c); }

void gn__cuda_cengop_free(cu_backend *b, cengop *op)
{
    (void)b;
    if (!op) return;
    gn__engine_cache_free(&op->cache);
    free(op);
}

/* Compiles function fname for op n and plans it for the inputs of key (their
 * dtypes and shapes; an INT8 engine, unless fallback, when op has a
 * calibration table); *out gets one reference. */
static gn_status ceng_build(gn__engine *e, const cnode *n, const char *fname, bool fallback, const cengop *op,
                            const gn__engine_key *key, ceng **out, gn__err *err)
{
    *out = NULL;
    const gn_graph *g = e->g;
    uint32_t n_in = n->n_in;
    if (e->depth + 1 >= MAX_ENGINE_DEPTH)
        return gn__cuda_node_fail(e, n, err, GN_ERR_UNSUPPORTED, "engine ops nested more than %d deep", MAX_ENGINE_DEPTH);
    const gn__function *fn = gn__graph_find_function(g->lib ? g->lib : g, fname);
    const Tensorflow__OpDef *sd = fn && fn->def ? fn->def->signature : NULL;
    if (!fn || !fn->body || !sd) return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "function '%s' is not in the library", fname);
    if (sd->n_input_arg != n_in || sd->n_output_arg != n->n_out)
        return gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "function '%s' takes %zu inputs and returns %zu, the op has %u and %u",
                         fname, sd->n_input_arg, sd->n_output_arg, n_in, n->n_out);
    ceng *c = calloc(1, sizeof *c);
    gn__edge *feeds = calloc(n_in + 1, sizeof *feeds), *fetches = calloc(n->n_out + 1, sizeof *fetches);
    gn__tensor *tin = calloc(n_in + 1, sizeof *tin);
    if (c) c->refs = 1;
    gn_status s = GN_OK;
    if (!c || !feeds || !fetches || !tin || !gn__engine_key_copy(&c->key, key)) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    const int32_t *dtype = key->dtype;
    for (uint32_t i = 0; s == GN_OK && i < n_in; i++) {
        tin[i].dtype = dtype[i];
        tin[i].rank = key->rank[i];
        memcpy(tin[i].dims, &key->dims[(size_t)i * GN__MAX_DIMS], sizeof(int64_t) * GN__MAX_DIMS);
        gn_id a = gn__graph_find(fn->body, sd->input_arg[i]->name);
        if (a == GN_NONE || !(gn__node_at(fn->body, a)->flags & GN__NODE_FN_ARG))
            s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "function '%s': no node for input argument '%s'", fname, sd->input_arg[i]->name);
        else if ((int32_t)sd->input_arg[i]->type != dtype[i])
            s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "input %u is %s, function '%s' takes %s", i, gn_dtype_numpy_name(dtype[i]),
                          fname, gn_dtype_numpy_name((int32_t)sd->input_arg[i]->type));
        else feeds[i] = (gn__edge){a, 0};
    }
    for (uint32_t i = 0; s == GN_OK && i < n->n_out; i++) {
        char name[1024];
        snprintf(name, sizeof name, "_retval:%s", sd->output_arg[i]->name);
        gn_id r = gn__graph_find(fn->body, name);
        if (r == GN_NONE || gn__node_at(fn->body, r)->n_in < 1)
            s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "function '%s': output argument '%s' is not returned", fname, sd->output_arg[i]->name);
        else fetches[i] = gn__node_at(fn->body, r)->in[0];
    }
    gn__calib_table tab;
    memset(&tab, 0, sizeof tab);
    bool q8 = !fallback && op && op->cfg.int8 && op->cfg.table_len;
    if (s == GN_OK && q8) s = gn__calib_parse(op->cfg.table, op->cfg.table_len, &tab, err);
    if (s == GN_OK) {
        c->fallback = fallback;
        gn__engine_sig sig = {n_in, feeds, n->n_out, fetches, fn->n_control_ret, fn->control_ret_node};
        s = gn__cuda_compile_depth(e->b, fn->body, &sig, e->depth + 1, q8 ? &tab : NULL, &c->sub, err);
        if (s == GN_OK) s = gn__cuda_plan_new(c->sub, tin, &c->sp, err);
        if (s == GN_OK) gn__plan_cache_add(&c->sub->plans, c->sp, gn__cuda_plan_drop, c->sub);
        if (s != GN_OK) gn__err_prefix(err, NODE_FMT "function '%s'", NODE_ARGS(e, n), fname);
    }
    gn__calib_free(&tab);
    free(feeds);
    free(fetches);
    free(tin);
    if (s != GN_OK) {
        if (c) {
            c->refs = 1;
            gn__cuda_ceng_release(e->b, c);
        }
        return s;
    }
    *out = c;
    return GN_OK;
}

/* Puts c into op's cache (a new reference), first dropping the least
 * recently used engine when the cache is full. */
static gn_status cache_insert(gn__engine *e, cengop *op, ceng *c, gn__err *err)
{
    gn__engine_key key;
    bool evicted = false;
    if (!gn__engine_key_copy(&key, &c->key)) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    c->refs++;
    gn__engine_cache_entry *ent = gn__engine_cache_insert(&op->cache, op->cfg.max, &key, c, e->eng_clock + 1, &evicted);
    if (evicted) e->stats.eng_evictions++;
    if (!ent) {
        c->refs--;
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    e->eng_clock++;
    return GN_OK;
}

/* At compile: each engine op's cache, started with the engines built ahead
 * of time (the session's own graph only). */
gn_status gn__cuda_engines_init(gn__engine *e, gn__err *err)
{
    const gn_graph *g = e->g;
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        cnode *n = &e->nodes[k];
        if (n->op->kind != OP_ENGINE) continue;
        cengop *op = n->eng = calloc(1, sizeof *op);
        if (!op) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        op->cache.free_engine = ceng_drop;
        op->cache.ctx = e->b;
        gn__engine_op_read(g, n->id, &op->cfg);
        if (e->depth) continue;
        gn__engine_shapes *sh = NULL;
        uint32_t ns = 0, stale = 0;
        gn_status s = gn__engine_seeds(g, g, n->id, GN__ENGINE_CUDA, op->cfg.max, &sh, &ns, &stale, err);
        if (s != GN_OK) {
            gn__err_prefix(err, NODE_FMT "engine assets", NODE_ARGS(e, n));
            return s;
        }
        e->stats.eng_stale += stale;
        const Tensorflow__AttrValue__ListValue *it = gn__cuda_attr_list(g, n->id, "InT");
        int32_t *dt = calloc(n->n_in + 1, sizeof *dt);
        if (!dt) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t i = 0; s == GN_OK && ns && i < n->n_in; i++) {
            if (!it || it->n_type != n->n_in) s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "attr InT must list %u types", n->n_in);
            else dt[i] = (int32_t)it->type[i];
        }
        /* INT8 without a table: no engine can be built (the native segment runs) */
        bool native = op->cfg.int8 && !op->cfg.table_len;
        for (uint32_t i = 0; i < ns; i++) {
            ceng *c = NULL;
            if (s == GN_OK && !native && sh[i].n_in != n->n_in)
                s = gn__cuda_node_fail(e, n, err, GN_ERR_GRAPH, "a prebuilt engine has %u inputs, the op %u", sh[i].n_in, n->n_in);
            if (s == GN_OK && !native) {
                const gn__engine_key key = {n->n_in, dt, sh[i].rank, sh[i].dims};
                s = ceng_build(e, n, op->cfg.engine_fn, false, op, &key, &c, err);
                if (s != GN_OK && op->cfg.int8) {   /* as on the CPU backend: not prebuilt, the segment runs */
                    gn__err_clear(err);
                    s = GN_OK;
                }
            }
            if (s == GN_OK && c) s = cache_insert(e, op, c, err);
            if (c) {
                c->counted = true;
                e->stats.eng_prebuilt += s == GN_OK;
                gn__cuda_ceng_release(e->b, c);   /* the cache keeps it */
            }
            gn__engine_shapes_free(&sh[i]);
        }
        free(sh);
        free(dt);
        if (s != GN_OK) return s;
    }
    return GN_OK;
}

/* At plan time: the engine op's engine for the plan's input shapes (from the
 * cache, built, or the native segment), and its output shapes. */
gn_status gn__cuda_plan_engine(gn__engine *e, cplan *p, uint32_t k, gn__err *err)
{
    cnode *n = &e->nodes[k];
    cengop *op = n->eng;
    if (!op) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no engine cache");
    /* the key: the inputs' dtypes and shapes in this plan */
    gn__engine_key key;
    if (!gn__engine_key_alloc(&key, n->n_in, true)) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t j = 0; j < n->n_in; j++) {
        uint32_t v = n->in[j];
        key.dtype[j] = p->dtype[v];
        key.rank[j] = p->rank[v];
        memcpy(&key.dims[(size_t)j * GN__MAX_DIMS], gn__cuda_vdims(p, v), sizeof(int64_t) * GN__MAX_DIMS);
    }
    bool native = op->cfg.int8 && !op->cfg.table_len;   /* INT8 not calibrated: no engine can be built */
    gn__engine_cache_entry *hit = native ? NULL : gn__engine_cache_find_key(&op->cache, &key);
    ceng *c = hit ? hit->engine : NULL;
    gn_status s = GN_OK;
    if (c) {
        c->refs++;
    } else {
        bool fb = native || !op->cfg.allow;
        s = ceng_build(e, n, fb ? op->cfg.segment_fn : op->cfg.engine_fn, fb, op, &key, &c, err);
        if (s != GN_OK && op->cfg.int8 && !fb) {   /* as on the CPU backend: an INT8 engine that cannot be built */
            gn__err_clear(err);               /* runs the native segment, counted as a fallback */
            fb = true;
            s = ceng_build(e, n, op->cfg.segment_fn, true, op, &key, &c, err);
        }
        if (s == GN_OK && !fb) s = cache_insert(e, op, c, err);
        if (s != GN_OK) gn__cuda_ceng_release(e->b, c);
    }
    gn__engine_key_free(&key);
    if (s != GN_OK) return s;
    p->eng[k] = c;
    for (uint32_t f = 0; f < n->n_out; f++) {
        uint32_t v = n->out + f, sv = c->sub->fetch_val[f];
        p->root[v] = v;
        p->dtype[v] = c->sp->dtype[sv];
        p->rank[v] = c->sp->rank[sv];
        memcpy(gn__cuda_vdims(p, v), gn__cuda_vdims(c->sp, sv), sizeof(int64_t) * GN__MAX_DIMS);
    }
    return GN_OK;
}

/* Per run (also when a captured graph replays): the engine ops' counters
 * and least-recently-used order, as the CPU backend keeps them. */
gn_status gn__cuda_engines_account(gn__engine *e, cplan *p, gn__err *err)
{
    for (uint32_t k = 0; k < e->n_nodes; k++) {
        ceng *c = p->eng[k];
        if (!c) continue;
        e->eng_clock++;
        if (c->fallback) {
            e->stats.eng_fallbacks++;
            continue;
        }
        gn__engine_cache *cache = &e->nodes[k].eng->cache;
        gn__engine_cache_entry *ent = gn__engine_cache_find_engine(cache, c);
        if (!ent) {   /* evicted since the plan was made: built again */
            GN_TRY(cache_insert(e, e->nodes[k].eng, c, err));
            ent = gn__engine_cache_find_engine(cache, c);
            e->stats.eng_builds++;
            c->counted = true;
        } else if (!c->counted) {
            e->stats.eng_builds++;
            c->counted = true;
        } else {
            e->stats.eng_hits++;
        }
        ent->last_use = e->eng_clock;
    }
    return GN_OK;
}

/* An engine op's run: its inputs copied into the engine's plan, the
 * engine's kernels, its outputs copied out (all on the stream). */
gn_status gn__cuda_run_engine_node(gn__engine *e, cplan *p, const cnode *n, uint32_t k, gn__err *err)
{
    ceng *c = p->eng[k];
    if (!c) return gn__cuda_node_fail(e, n, err, GN_ERR_INTERNAL, "no engine planned");
    gn__engine *sub = c->sub;
    cplan *sp = c->sp;
    cudaStream_t s = e->b->stream;
    for (uint32_t i = 0; i < n->n_in; i++) {
        uint32_t v = n->in[i];
        size_t bytes = (size_t)gn__cuda_numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        if (bytes) CK_CUDA(cudaMemcpyAsync(gn__cuda_vptr(sub, sp, i), gn__cuda_vptr(e, p, v), bytes, cudaMemcpyDeviceToDevice, s));
    }
    gn_status st = gn__cuda_run_all(sub, sp, err);
    if (st != GN_OK) {
        gn__err_prefix(err, NODE_FMT "%s", NODE_ARGS(e, n), c->fallback ? "native segment" : "engine");
        return st;
    }
    for (uint32_t f = 0; f < n->n_out; f++) {
        uint32_t v = n->out + f;
        size_t bytes = (size_t)gn__cuda_numel_of(p, v) * gn_dtype_size(p->dtype[v]);
        if (bytes)
            CK_CUDA(cudaMemcpyAsync(gn__cuda_vptr(e, p, v), gn__cuda_vptr(sub, sp, sub->fetch_val[f]), bytes, cudaMemcpyDeviceToDevice, s));
    }
    return GN_OK;
}
