/* The caches a backend keeps per engine (private), one home for the CPU
 * backend (cpu/exec.c, cpu/backend.c) and the CUDA backend
 * (cuda/engine_op.c, cuda/compile.c; the module calls these through its host
 * table, cuda/module.h).
 *
 * The engine cache of one Grapnel>EngineOp node, as TF-TRT's per-op
 * LRUCache: one engine per input signature (the key: each input's rank and
 * dims, and its dtype where the backend keys on it), at most
 * max_cached_engines_count of them (runtime/engine_op.h, at least 1); a miss
 * that adds an engine to a full cache first evicts the engine used least
 * recently (the entry with the smallest last_use; the first such entry on a
 * tie). The backend keeps the clock: last_use is its time of the last run
 * that used the engine.
 *
 * The plan cache of one compiled program: its plans for the input shapes
 * seen last, most recently used first, at most GN__PLAN_CACHE_MAX; a new
 * plan for a full cache drops the one used longest ago. */
#ifndef GN_RUNTIME_ENGINE_CACHE_H
#define GN_RUNTIME_ENGINE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/kernel.h"

/* An engine's key: per input its rank and dims, and its dtype where the
 * backend keys on it. */
typedef struct gn__engine_key {
    uint32_t n_in;
    int32_t *dtype;               /* per input; NULL: dtypes are not part of the key */
    int32_t *rank;                /* per input */
    int64_t *dims;                /* n_in * GN__MAX_DIMS; dims past an input's rank are not compared */
} gn__engine_key;

/* Room for a key of n_in inputs (zeroed; with dtypes or not); false when memory is short (*k zeroed). */
bool gn__engine_key_alloc(gn__engine_key *k, uint32_t n_in, bool with_dtype);
/* The key of tensors in (their ranks and dims; their dtypes when with_dtype). */
bool gn__engine_key_of(gn__engine_key *k, const gn__tensor *in, uint32_t n_in, bool with_dtype);
bool gn__engine_key_copy(gn__engine_key *dst, const gn__engine_key *src);
void gn__engine_key_free(gn__engine_key *k);
/* Same inputs, ranks and dims; and dtypes, when both keys have them. */
bool gn__engine_key_equal(const gn__engine_key *a, const gn__engine_key *b);

/* Frees a backend's engine (or plan); ctx as given to the cache. */
typedef void (*gn__engine_free_fn)(void *ctx, void *engine);

typedef struct gn__engine_cache_entry {
    gn__engine_key key;
    void *engine;                 /* the backend's (NULL: none, e.g. the segment compiled once per program) */
    bool failed;                  /* its build failed: the native segment runs (TF-TRT's empty entry) */
    uint64_t last_use;
} gn__engine_cache_entry;

typedef struct gn__engine_cache {
    gn__engine_cache_entry *e;
    uint32_t n, cap;
    gn__engine_free_fn free_engine;   /* frees an entry's engine (NULL: nothing to free) */
    void *ctx;
} gn__engine_cache;

/* The entry for tensors in (the key of gn__engine_key_of: rank and dims; the
 * dtype where entries have one); NULL when none. */
gn__engine_cache_entry *gn__engine_cache_find(const gn__engine_cache *c, const gn__tensor *in, uint32_t n_in);
/* The entry whose key equals k (gn__engine_key_equal); NULL when none. */
gn__engine_cache_entry *gn__engine_cache_find_key(const gn__engine_cache *c, const gn__engine_key *k);
/* The entry holding engine; NULL when none (evicted, or never added). */
gn__engine_cache_entry *gn__engine_cache_find_engine(const gn__engine_cache *c, const void *engine);
/* Adds an entry for *key (taken: the cache frees it, on failure too; *key is
 * zeroed) holding engine, last used at now. A cache of max (>= 1) entries or
 * more first evicts its least recently used entry (its engine freed) and
 * sets *evicted. NULL when memory is short (engine not taken). */
gn__engine_cache_entry *gn__engine_cache_insert(gn__engine_cache *c, uint32_t max, gn__engine_key *key, void *engine,
                                                uint64_t now, bool *evicted);
/* Frees every entry (each engine once, with free_engine) and the array. */
void gn__engine_cache_free(gn__engine_cache *c);

#define GN__PLAN_CACHE_MAX 8

typedef struct gn__plan_cache {
    void *p[GN__PLAN_CACHE_MAX];  /* most recently used first */
    uint32_t n;
} gn__plan_cache;

/* Whether plan was made for inputs in; ctx as given. */
typedef bool (*gn__plan_match_fn)(void *ctx, const void *plan, const gn__tensor *in);

/* The plan that matches in, moved first; NULL when none. */
void *gn__plan_cache_find(gn__plan_cache *c, gn__plan_match_fn match, void *ctx, const gn__tensor *in);
/* Puts plan first; a full cache first frees its last plan (free_plan(ctx, plan)). */
void gn__plan_cache_add(gn__plan_cache *c, void *plan, gn__engine_free_fn free_plan, void *ctx);
/* Frees every plan. */
void gn__plan_cache_free(gn__plan_cache *c, gn__engine_free_fn free_plan, void *ctx);

#endif
