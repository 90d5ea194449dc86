/* The engine cache and the plan cache of the backends: see engine_cache.h. */
#include <stdlib.h>
#include <string.h>

#include "runtime/engine_cache.h"

bool gn__engine_key_alloc(gn__engine_key *k, uint32_t n_in, bool with_dtype)
{
    memset(k, 0, sizeof *k);
    k->n_in = n_in;
    k->rank = calloc(n_in + 1, sizeof *k->rank);
    k->dims = calloc((size_t)(n_in + 1) * GN__MAX_DIMS, sizeof *k->dims);
    if (with_dtype) k->dtype = calloc(n_in + 1, sizeof *k->dtype);
    if (k->rank && k->dims && (!with_dtype || k->dtype)) return true;
    gn__engine_key_free(k);
    return false;
}

bool gn__engine_key_of(gn__engine_key *k, const gn__tensor *in, uint32_t n_in, bool with_dtype)
{
    if (!gn__engine_key_alloc(k, n_in, with_dtype)) return false;
    for (uint32_t i = 0; i < n_in; i++) {
        if (k->dtype) k->dtype[i] = in[i].dtype;
        k->rank[i] = in[i].rank;
        for (int32_t d = 0; d < in[i].rank && d < GN__MAX_DIMS; d++) k->dims[(size_t)i * GN__MAX_DIMS + (size_t)d] = in[i].dims[d];
    }
    return true;
}

bool gn__engine_key_copy(gn__engine_key *dst, const gn__engine_key *src)
{
    if (!gn__engine_key_alloc(dst, src->n_in, src->dtype != NULL)) return false;
    if (src->dtype) memcpy(dst->dtype, src->dtype, src->n_in * sizeof *dst->dtype);
    memcpy(dst->rank, src->rank, src->n_in * sizeof *dst->rank);
    memcpy(dst->dims, src->dims, (size_t)src->n_in * GN__MAX_DIMS * sizeof *dst->dims);
    return true;
}

void gn__engine_key_free(gn__engine_key *k)
{
    free(k->dtype);
    free(k->rank);
    free(k->dims);
    memset(k, 0, sizeof *k);
}

/* input i of key k against dtype (< 0: not compared), rank and dims */
static bool input_is(const gn__engine_key *k, uint32_t i, int32_t dtype, int32_t rank, const int64_t *dims)
{
    if (k->rank[i] != rank || (dtype >= 0 && k->dtype && k->dtype[i] != dtype)) return false;
    for (int32_t d = 0; d < rank && d < GN__MAX_DIMS; d++)
        if (k->dims[(size_t)i * GN__MAX_DIMS + (size_t)d] != dims[d]) return false;
    return true;
}

bool gn__engine_key_equal(const gn__engine_key *a, const gn__engine_key *b)
{
    if (a->n_in != b->n_in) return false;
    for (uint32_t i = 0; i < a->n_in; i++)
        if (!input_is(a, i, b->dtype ? b->dtype[i] : -1, b->rank[i], &b->dims[(size_t)i * GN__MAX_DIMS])) return false;
    return true;
}

gn__engine_cache_entry *gn__engine_cache_find(const gn__engine_cache *c, const gn__tensor *in, uint32_t n_in)
{
    for (uint32_t k = 0; k < c->n; k++) {
        const gn__engine_key *key = &c->e[k].key;
        bool same = key->n_in == n_in;
        for (uint32_t i = 0; same && i < n_in; i++) same = input_is(key, i, in[i].dtype, in[i].rank, in[i].dims);
        if (same) return &c->e[k];
    }
    return NULL;
}

gn__engine_cache_entry *gn__engine_cache_find_key(const gn__engine_cache *c, const gn__engine_key *k)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (gn__engine_key_equal(&c->e[i].key, k)) return &c->e[i];
    return NULL;
}

gn__engine_cache_entry *gn__engine_cache_find_engine(const gn__engine_cache *c, const void *engine)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->e[i].engine == engine) return &c->e[i];
    return NULL;
}

static void entry_free(gn__engine_cache *c, gn__engine_cache_entry *e)
{
    gn__engine_key_free(&e->key);
    if (e->engine && c->free_engine) c->free_engine(c->ctx, e->engine);
    e->engine = NULL;
}

gn__engine_cache_entry *gn__engine_cache_insert(gn__engine_cache *c, uint32_t max, gn__engine_key *key, void *engine,
                                                uint64_t now, bool *evicted)
{
    *evicted = false;
    if (c->n && c->n >= max) {
        uint32_t lru = 0;
        for (uint32_t i = 1; i < c->n; i++)
            if (c->e[i].last_use < c->e[lru].last_use) lru = i;
        entry_free(c, &c->e[lru]);
        c->e[lru] = c->e[--c->n];
        *evicted = true;
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 4;
        gn__engine_cache_entry *e = realloc(c->e, cap * sizeof *e);
        if (!e) {
            gn__engine_key_free(key);
            return NULL;
        }
        c->e = e;
        c->cap = cap;
    }
    gn__engine_cache_entry *e = &c->e[c->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    memset(key, 0, sizeof *key);
    e->engine = engine;
    e->last_use = now;
    return e;
}

void gn__engine_cache_free(gn__engine_cache *c)
{
    for (uint32_t i = 0; i < c->n; i++) entry_free(c, &c->e[i]);
    free(c->e);
    c->e = NULL;
    c->n = c->cap = 0;
}

void *gn__plan_cache_find(gn__plan_cache *c, gn__plan_match_fn match, void *ctx, const gn__tensor *in)
{
    for (uint32_t i = 0; i < c->n; i++) {
        if (!match(ctx, c->p[i], in)) continue;
        void *p = c->p[i];
        memmove(&c->p[1], &c->p[0], i * sizeof *c->p);
        c->p[0] = p;
        return p;
    }
    return NULL;
}

void gn__plan_cache_add(gn__plan_cache *c, void *plan, gn__engine_free_fn free_plan, void *ctx)
{
    if (c->n == GN__PLAN_CACHE_MAX) free_plan(ctx, c->p[--c->n]);
    memmove(&c->p[1], &c->p[0], c->n * sizeof *c->p);
    c->p[0] = plan;
    c->n++;
}

void gn__plan_cache_free(gn__plan_cache *c, gn__engine_free_fn free_plan, void *ctx)
{
    for (uint32_t i = 0; i < c->n; i++) free_plan(ctx, c->p[i]);
    c->n = 0;
}
