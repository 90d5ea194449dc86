/* The backends' shared caches (src/runtime/engine_cache.c): an engine op's
 * engine cache (keys by input ranks, dims and dtypes; the least recently
 * used entry evicted past max_cached_engines_count; each engine freed once,
 * on eviction or with the cache) and a program's plan cache (most recently
 * used first, at most GN__PLAN_CACHE_MAX). */
#include <string.h>

#include "runtime/engine_cache.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_INT32 3

/* engines are small integers 1..15 (as pointers); frees counted per engine */
typedef struct frees {
    int n[16];
    int order[32], n_order;
} frees;

static void count_free(void *ctx, void *engine)
{
    frees *f = ctx;
    intptr_t id = (intptr_t)engine;
    assert_true(id > 0 && id < 16);
    f->n[id]++;
    f->order[f->n_order++] = (int)id;
}

static void *eng(intptr_t id) { return (void *)id; }

/* a key of one input: dtype (0: no dtypes in the key), rank, dims */
static gn__engine_key key1(int32_t dtype, int32_t rank, const int64_t *dims)
{
    gn__engine_key k;
    assert_true(gn__engine_key_alloc(&k, 1, dtype != 0));
    if (dtype) k.dtype[0] = dtype;
    k.rank[0] = rank;
    for (int32_t d = 0; d < rank; d++) k.dims[d] = dims[d];
    return k;
}

static gn__tensor tensor(int32_t dtype, int32_t rank, const int64_t *dims)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
    return t;
}

static void test_key_equality(void **state)
{
    (void)state;
    const int64_t d4[1] = {4}, d41[2] = {4, 1}, d14[2] = {1, 4}, d5[1] = {5};
    gn__engine_key a = key1(0, 1, d4), b = key1(0, 1, d4), c = key1(0, 2, d41), d = key1(0, 2, d14), e = key1(0, 1, d5);
    assert_true(gn__engine_key_equal(&a, &b));
    assert_false(gn__engine_key_equal(&a, &c));   /* another rank, same elements */
    assert_false(gn__engine_key_equal(&c, &d));   /* same rank, dims in another order */
    assert_false(gn__engine_key_equal(&a, &e));   /* same rank, another dim */
    /* dims past the rank do not count */
    b.dims[3] = 99;
    assert_true(gn__engine_key_equal(&a, &b));
    /* a scalar is not a vector of one */
    const int64_t d1[1] = {1};
    gn__engine_key s = key1(0, 0, NULL), v = key1(0, 1, d1);
    assert_false(gn__engine_key_equal(&s, &v));
    /* another number of inputs */
    gn__engine_key two;
    assert_true(gn__engine_key_alloc(&two, 2, false));
    two.rank[0] = 1;
    two.dims[0] = 4;
    assert_false(gn__engine_key_equal(&a, &two));
    /* dtypes count when both keys have them */
    gn__engine_key fa = key1(DT_FLOAT, 1, d4), fb = key1(DT_FLOAT, 1, d4), ia = key1(DT_INT32, 1, d4);
    assert_true(gn__engine_key_equal(&fa, &fb));
    assert_false(gn__engine_key_equal(&fa, &ia));
    assert_true(gn__engine_key_equal(&a, &ia));
    /* a copy is equal and owns its arrays */
    gn__engine_key cp;
    assert_true(gn__engine_key_copy(&cp, &ia));
    assert_true(cp.dtype != ia.dtype && cp.rank != ia.rank && cp.dims != ia.dims);
    assert_true(gn__engine_key_equal(&cp, &ia) && gn__engine_key_equal(&cp, &fa) == false);
    gn__engine_key *all[] = {&a, &b, &c, &d, &e, &s, &v, &two, &fa, &fb, &ia, &cp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) gn__engine_key_free(all[i]);
    assert_null(a.rank);
}

static void test_find(void **state)
{
    (void)state;
    frees f = {{0}, {0}, 0};
    gn__engine_cache c = {NULL, 0, 0, count_free, &f};
    const int64_t d23[2] = {2, 3}, d32[2] = {3, 2}, d6[1] = {6};
    bool ev;
    gn__engine_key k = key1(0, 2, d23);
    gn__engine_cache_entry *e1 = gn__engine_cache_insert(&c, 4, &k, eng(1), 1, &ev);
    assert_non_null(e1);
    assert_false(ev);
    assert_null(k.rank);   /* the key is the cache's now */
    k = key1(0, 1, d6);
    assert_non_null(gn__engine_cache_insert(&c, 4, &k, eng(2), 2, &ev));
    /* by tensors: rank and dims; no dtype in these keys, so any dtype matches */
    gn__tensor t23 = tensor(DT_INT32, 2, d23), t32 = tensor(DT_FLOAT, 2, d32), t6 = tensor(DT_FLOAT, 1, d6);
    assert_ptr_equal(gn__engine_cache_find(&c, &t23, 1)->engine, eng(1));
    assert_ptr_equal(gn__engine_cache_find(&c, &t6, 1)->engine, eng(2));
    assert_null(gn__engine_cache_find(&c, &t32, 1));
    gn__tensor two[2] = {t23, t23};
    assert_null(gn__engine_cache_find(&c, two, 2));
    /* by key and by engine */
    gn__engine_key probe;
    assert_true(gn__engine_key_of(&probe, &t6, 1, true));
    assert_int_equal(probe.dtype[0], DT_FLOAT);
    assert_ptr_equal(gn__engine_cache_find_key(&c, &probe)->engine, eng(2));
    gn__engine_key_free(&probe);
    assert_int_equal(gn__engine_cache_find_engine(&c, eng(2))->last_use, 2);
    assert_null(gn__engine_cache_find_engine(&c, eng(3)));
    /* keys with dtypes match tensors of that dtype only */
    k = key1(DT_FLOAT, 2, d32);
    assert_non_null(gn__engine_cache_insert(&c, 4, &k, eng(3), 3, &ev));
    assert_ptr_equal(gn__engine_cache_find(&c, &t32, 1)->engine, eng(3));
    gn__tensor t32i = tensor(DT_INT32, 2, d32);
    assert_null(gn__engine_cache_find(&c, &t32i, 1));
    gn__engine_cache_free(&c);
    assert_int_equal(f.n[1] + f.n[2] + f.n[3], 3);
    assert_int_equal(f.n[1] * f.n[2] * f.n[3], 1);
    assert_null(c.e);
    assert_int_equal(c.n, 0);
}

/* max 3: the least recently used entry goes first; last_use is the caller's clock */
static void test_eviction_order(void **state)
{
    (void)state;
    frees f = {{0}, {0}, 0};
    gn__engine_cache c = {NULL, 0, 0, count_free, &f};
    bool ev;
    for (intptr_t i = 1; i <= 3; i++) {
        const int64_t d[1] = {i};
        gn__engine_key k = key1(0, 1, d);
        assert_non_null(gn__engine_cache_insert(&c, 3, &k, eng(i), (uint64_t)i, &ev));
        assert_false(ev);
    }
    /* engine 1 used again at time 4: engine 2 is now the least recently used */
    gn__engine_cache_find_engine(&c, eng(1))->last_use = 4;
    const int64_t d4[1] = {4}, d5[1] = {5}, d6[1] = {6};
    gn__engine_key k = key1(0, 1, d4);
    assert_non_null(gn__engine_cache_insert(&c, 3, &k, eng(4), 5, &ev));
    assert_true(ev);
    assert_int_equal(c.n, 3);
    assert_int_equal(f.n_order, 1);
    assert_int_equal(f.order[0], 2);
    assert_null(gn__engine_cache_find_engine(&c, eng(2)));
    k = key1(0, 1, d5);
    assert_non_null(gn__engine_cache_insert(&c, 3, &k, eng(5), 6, &ev));
    assert_true(ev);
    assert_int_equal(f.order[1], 3);
    /* a tie: the first entry of the smallest last_use goes */
    gn__engine_cache_find_engine(&c, eng(4))->last_use = 1;
    gn__engine_cache_find_engine(&c, eng(5))->last_use = 1;
    gn__engine_cache_entry *first = NULL;
    for (uint32_t i = 0; i < c.n && !first; i++)
        if (c.e[i].last_use == 1) first = &c.e[i];
    intptr_t want = (intptr_t)first->engine;
    k = key1(0, 1, d6);
    assert_non_null(gn__engine_cache_insert(&c, 3, &k, eng(6), 7, &ev));
    assert_true(ev);
    assert_int_equal(f.order[2], (int)want);
    /* what is left: engine 1 and the other of 4 and 5, and 6 */
    assert_non_null(gn__engine_cache_find_engine(&c, eng(1)));
    assert_non_null(gn__engine_cache_find_engine(&c, eng(6)));
    gn__engine_cache_free(&c);
    /* every engine freed exactly once, on eviction or with the cache */
    for (int i = 1; i <= 6; i++) assert_int_equal(f.n[i], 1);
    assert_int_equal(f.n_order, 6);
}

/* max_cached_engines_count 1 (the default): each new shape replaces the engine */
static void test_max_one(void **state)
{
    (void)state;
    frees f = {{0}, {0}, 0};
    gn__engine_cache c = {NULL, 0, 0, count_free, &f};
    bool ev;
    for (intptr_t i = 1; i <= 5; i++) {
        const int64_t d[1] = {i};
        gn__engine_key k = key1(0, 1, d);
        assert_non_null(gn__engine_cache_insert(&c, 1, &k, eng(i), (uint64_t)i, &ev));
        assert_int_equal(ev, i > 1);
        assert_int_equal(c.n, 1);
        assert_ptr_equal(c.e[0].engine, eng(i));
    }
    /* entries without an engine (a failed build, or the CPU's FP32 engines) free nothing */
    const int64_t d9[1] = {9};
    gn__engine_key k = key1(0, 1, d9);
    gn__engine_cache_entry *e = gn__engine_cache_insert(&c, 1, &k, NULL, 6, &ev);
    e->failed = true;
    gn__engine_cache_free(&c);
    for (int i = 1; i <= 5; i++) assert_int_equal(f.n[i], 1);
    assert_int_equal(f.n_order, 5);
}

/* plans: most recently used first; a ninth drops the one used longest ago */
static bool plan_is(void *ctx, const void *plan, const gn__tensor *in)
{
    (void)ctx;
    return (intptr_t)plan == (intptr_t)in->dims[0];
}

static void test_plan_cache(void **state)
{
    (void)state;
    frees f = {{0}, {0}, 0};
    gn__plan_cache c;
    memset(&c, 0, sizeof c);
    for (intptr_t i = 1; i <= GN__PLAN_CACHE_MAX; i++) gn__plan_cache_add(&c, eng(i), count_free, &f);
    assert_int_equal(c.n, GN__PLAN_CACHE_MAX);
    assert_ptr_equal(c.p[0], eng(GN__PLAN_CACHE_MAX));
    const int64_t d3[1] = {3}, d12[1] = {12};
    gn__tensor t3 = tensor(DT_FLOAT, 1, d3), t12 = tensor(DT_FLOAT, 1, d12);
    assert_ptr_equal(gn__plan_cache_find(&c, plan_is, NULL, &t3), eng(3));
    assert_ptr_equal(c.p[0], eng(3));
    assert_null(gn__plan_cache_find(&c, plan_is, NULL, &t12));
    /* order now 3, 8, 7, 6, 5, 4, 2, 1: the next plan drops 1, the one after 2 */
    gn__plan_cache_add(&c, eng(9), count_free, &f);
    assert_int_equal(f.n_order, 1);
    assert_int_equal(f.order[0], 1);
    gn__plan_cache_add(&c, eng(10), count_free, &f);
    assert_int_equal(f.order[1], 2);
    assert_ptr_equal(c.p[0], eng(10));
    assert_ptr_equal(c.p[1], eng(9));
    assert_ptr_equal(c.p[2], eng(3));
    gn__plan_cache_free(&c, count_free, &f);
    assert_int_equal(c.n, 0);
    for (int i = 1; i <= 10; i++) assert_int_equal(f.n[i], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_equality), cmocka_unit_test(test_find),     cmocka_unit_test(test_eviction_order),
        cmocka_unit_test(test_max_one),      cmocka_unit_test(test_plan_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
