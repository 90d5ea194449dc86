/* CPU backend: the backend interface (see cpu.h and runtime/backend.h). */
#include <stdlib.h>

#include "runtime/cpu/cpu.h"

struct gn__engine {
    xprog *prog;
    cpu_lib *lib;
    gn__plan_cache plans;         /* its plans per input shapes (runtime/engine_cache.h) */
    gn__engine_stats stats;
};

typedef struct cpu_backend {
    int32_t num_threads;
    gn__backend_config cfg;       /* the resource bounds of each run */
    gn__blas blas;                /* loaded when the backend opens (none: reference gemms) */
} cpu_backend;

static gn_status cpu_configure(void *self, const gn__backend_config *cfg, gn__err *err)
{
    (void)err;
    ((cpu_backend *)self)->cfg = *cfg;
    return GN_OK;
}

static bool cpu_supports(void *self, const gn_graph *g, gn_id node, char *why, size_t why_len)
{
    (void)self;
    return gn__cpu_node_supported(g, node, why, why_len);
}

static gn_status cpu_compile(void *self, const gn_graph *g, const gn__engine_sig *sig, gn__engine **out,
                             gn__err *err)
{
    (void)self;
    *out = NULL;
    gn__engine *e = calloc(1, sizeof *e);
    cpu_lib *lib = calloc(1, sizeof *lib);
    if (!e || !lib) {
        free(e);
        free(lib);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    lib->top = g->lib ? g->lib : g;
    e->lib = lib;
    gn_status s = gn__xprog_compile(g, sig, lib, &e->prog, err);
    if (s != GN_OK) {
        gn__cpu_lib_free(lib);
        free(e);
        return s;
    }
    *out = e;
    return GN_OK;
}

static bool plan_matches(void *ctx, const void *plan, const gn__tensor *in)
{
    return gn__plan_matches(plan, in, ((gn__engine *)ctx)->prog->n_feeds);
}

static void plan_free(void *ctx, void *plan)
{
    (void)ctx;
    gn__plan_free(plan);
}

static cpu_plan *plan_for(gn__engine *e, const gn__tensor *in)
{
    cpu_plan *pl = gn__plan_cache_find(&e->plans, plan_matches, e, in);
    if (pl) return pl;
    pl = gn__plan_new(e->prog, in, e->prog->n_feeds);
    if (pl) gn__plan_cache_add(&e->plans, pl, plan_free, NULL);
    return pl;
}

static gn_status cpu_execute(void *self, gn__engine *e, const gn__tensor *in, gn__tensor *out, uint64_t seed,
                             gn__err *err)
{
    const cpu_backend *be = self;
    gn__engine_stats *st = &e->stats;
    st->runs++;
    st->arena_allocs = st->dynamic_allocs = st->plan_misses = st->nodes_run = 0;
    st->sa_in_place = st->sa_copied = 0;
    cpu_plan *pl = plan_for(e, in);   /* NULL (out of memory): run without a plan */
    st->n_plans = e->plans.n;
    st->planned = pl && gn__plan_state(pl) == PLAN_READY;
    st->arena_bytes = pl ? gn__plan_arena_bytes(pl) : 0;
    st->planned_bytes = pl ? gn__plan_planned_bytes(pl) : 0;
    cpu_exec_opts o = {seed, pl, st, be->cfg.max_tensor_bytes, be->cfg.step_limit, be->cfg.time_limit_ms,
                       be->blas.lib ? &be->blas : NULL};
    gn_status s = gn__xprog_run(e->prog, in, out, &o, err);
    /* nothing handed to the caller may live in an arena */
    for (uint32_t i = 0; s == GN_OK && i < e->prog->n_fetches; i++) {
        gn__tensor *t = &out[i];
        if (!gn__plan_owns(t->buf)) continue;
        gn__buffer *b = gn__buffer_new(t->nbytes);
        if (!b) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(b->data, t->data, t->nbytes);
        gn__buffer_unref(t->buf);
        t->buf = b;
        t->data = b->data;
    }
    if (s != GN_OK)
        for (uint32_t i = 0; i < e->prog->n_fetches; i++) gn__tensor_release(&out[i]);
    if (pl) gn__plan_end_run(pl);
    return s;
}

static void cpu_engine_free(void *self, gn__engine *e)
{
    (void)self;
    if (!e) return;
    gn__plan_cache_free(&e->plans, plan_free, NULL);
    gn__xprog_free(e->prog);
    gn__cpu_lib_free(e->lib);
    free(e);
}

static void cpu_engine_stats(void *self, const gn__engine *e, gn__engine_stats *out)
{
    (void)self;
    *out = e->stats;
    out->eng_hits = e->lib->eng_hits;
    out->eng_builds = e->lib->eng_builds;
    out->eng_evictions = e->lib->eng_evictions;
    out->eng_fallbacks = e->lib->eng_fallbacks;
    out->eng_prebuilt = e->lib->eng_prebuilt;
    out->eng_stale = e->lib->eng_stale;
}

static void cpu_free(void *self)
{
    cpu_backend *b = self;
    if (b) gn__blas_close(&b->blas);
    free(b);
}

static const gn__backend_iface cpu_iface = {
    .api_version = GN__BACKEND_API_VERSION,
    .name = "cpu",
    .supports = cpu_supports,
    .compile = cpu_compile,
    .execute = cpu_execute,
    .engine_free = cpu_engine_free,
    .free = cpu_free,
    .engine_stats = cpu_engine_stats,
    .configure = cpu_configure,
};

gn_status gn__cpu_backend_open(int32_t num_threads, gn__backend *out, gn__err *err)
{
    cpu_backend *b = calloc(1, sizeof *b);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    b->num_threads = num_threads;
    gn__blas_open(&b->blas);
    out->iface = &cpu_iface;
    out->self = b;
    return GN_OK;
}
