/* Random ops (TensorFlow's random_op.cc, stateless_random_ops.cc,
 * stateless_random_ops_v2.cc, lib/random/philox_random.h and
 * random_distributions.h).
 *
 * Philox4x32-10 with TensorFlow's constants, key / counter layout and
 * distributions: output group g (4 floats, 2 doubles, ...) is drawn from the
 * generator skipped by g, so values do not depend on how work is split.
 * Stateful ops (RandomUniform, ...) seed the generator from their seed /
 * seed2 attrs as TensorFlow's GuardedPhiloxRandom does on a session's first
 * run; when both are 0 (TensorFlow would pick a random seed) they derive one
 * from the run seed (ctx->seed) and the node's name, so a run is
 * deterministic for a given run seed and two graphs sharing node names draw
 * the same numbers. Stateless ops derive key and counter from their seed
 * input as TensorFlow's GenerateKey does. Bit-equality with TensorFlow is not
 * promised, but the streams follow the same construction. */
#include "ops/kernels/math_internal.h"

#include "graph/tensor.h"
#include "opdef/registry.h"

/* ---- Philox4x32-10 ------------------------------------------------------------------- */
typedef struct philox {
    uint32_t ctr[4];
    uint32_t key[2];
} philox;

#define PH_M0 0xD2511F53u
#define PH_M1 0xCD9E8D57u
#define PH_W0 0x9E3779B9u
#define PH_W1 0xBB67AE85u

static void philox_block(const uint32_t in_ctr[4], const uint32_t in_key[2], uint32_t out[4])
{
    uint32_t c0 = in_ctr[0], c1 = in_ctr[1], c2 = in_ctr[2], c3 = in_ctr[3];
    uint32_t k0 = in_key[0], k1 = in_key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)PH_M0 * c0, p1 = (uint64_t)PH_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += PH_W0;
        k1 += PH_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* 128-bit counter += n */
static void philox_skip(philox *g, uint64_t n)
{
    uint64_t lo = ((uint64_t)g->ctr[1] << 32 | g->ctr[0]), nlo = lo + n;
    g->ctr[0] = (uint32_t)nlo;
    g->ctr[1] = (uint32_t)(nlo >> 32);
    if (nlo < lo) {
        uint64_t hi = ((uint64_t)g->ctr[3] << 32 | g->ctr[2]) + 1;
        g->ctr[2] = (uint32_t)hi;
        g->ctr[3] = (uint32_t)(hi >> 32);
    }
}

static void philox_next(philox *g, uint32_t out[4])
{
    philox_block(g->ctr, g->key, out);
    philox_skip(g, 1);
}

/* TensorFlow's PhiloxRandom(seed_lo, seed_hi) */
static void philox_seed(philox *g, uint64_t seed_lo, uint64_t seed_hi)
{
    g->key[0] = (uint32_t)seed_lo;
    g->key[1] = (uint32_t)(seed_lo >> 32);
    g->ctr[0] = 0;
    g->ctr[1] = 0;
    g->ctr[2] = (uint32_t)seed_hi;
    g->ctr[3] = (uint32_t)(seed_hi >> 32);
}

/* ---- conversions (random_distributions.h) -------------------------------------------------- */
static float u32_to_float(uint32_t x)
{
    uint32_t v = (127u << 23) | (x & 0x7fffffu);
    float f;
    memcpy(&f, &v, 4);
    return f - 1.0f;
}

static double u64_to_double(uint32_t x0, uint32_t x1)
{
    uint64_t man = ((uint64_t)(x0 & 0xfffffu) << 32) | x1;
    uint64_t v = (1023ull << 52) | man;
    double d;
    memcpy(&d, &v, 8);
    return d - 1.0;
}

static gn__f16 u16_to_half(uint32_t x)
{
    uint16_t v = (uint16_t)((15u << 10) | (x & 0x3ffu));
    gn__f16 h;
    memcpy(&h, &v, 2);
    return (gn__f16)((float)h - 1.0f);
}

/* Box-Muller on float (TensorFlow's BoxMullerFloat); the reference path
 * evaluates log / sin / cos in double. */
static void box_muller_f(uint32_t x0, uint32_t x1, bool ref, float *f0, float *f1)
{
    const float eps = 1.0e-7f;
    float u1 = u32_to_float(x0);
    if (u1 < eps) u1 = eps;
    float v1 = 2.0f * 3.14159265358979323846f * u32_to_float(x1);
    if (ref) {
        double u2 = sqrt(-2.0 * log((double)u1));
        *f0 = (float)(sin((double)v1) * u2);
        *f1 = (float)(cos((double)v1) * u2);
    } else {
        float u2 = sqrtf(-2.0f * logf(u1));
        *f0 = sinf(v1) * u2;
        *f1 = cosf(v1) * u2;
    }
}

static void box_muller_d(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double *d0, double *d1)
{
    const double eps = 1.0e-7;
    double u1 = u64_to_double(x0, x1);
    if (u1 < eps) u1 = eps;
    double v1 = 2 * 3.14159265358979323846 * u64_to_double(x2, x3);
    double u2 = sqrt(-2.0 * log(u1));
    *d0 = sin(v1) * u2;
    *d1 = cos(v1) * u2;
}

/* ---- distributions -------------------------------------------------------------------------- */
typedef enum { DIST_UNIFORM, DIST_NORMAL, DIST_TRUNCATED, DIST_INT, DIST_FULL_INT } dist_kind;

typedef struct dist {
    dist_kind kind;
    int32_t dtype;
    bool ref;
    int64_t lo;       /* DIST_INT */
    uint64_t range;   /* DIST_INT: maxval - minval */
} dist;

/* Elements per Philox group for the distribution. */
static int64_t group_size(const dist *d)
{
    bool wide = d->dtype == GN_DT_F64 || d->dtype == GN_DT_I64 || d->dtype == GN_DT_U64;
    return wide ? 2 : 4;
}

static void store_float(int32_t dt, void *o, int64_t i, double v)
{
    if (dt == GN_DT_F32) ((float *)o)[i] = (float)v;
    else if (dt == GN_DT_F64) ((double *)o)[i] = v;
    else ((gn__f16 *)o)[i] = (gn__f16)(float)v;
}

/* Fills group g (elements [g*k, g*k + len)) from generator gen (already
 * skipped to the group's start). */
static void fill_group(const dist *d, philox *gen, void *o, int64_t first, int64_t len)
{
    uint32_t s[4];
    int32_t dt = d->dtype;
    switch (d->kind) {
    case DIST_UNIFORM:
        philox_next(gen, s);
        for (int64_t j = 0; j < len; j++) {
            if (dt == GN_DT_F32) ((float *)o)[first + j] = u32_to_float(s[j]);
            else if (dt == GN_DT_F16) ((gn__f16 *)o)[first + j] = u16_to_half(s[j]);
            else ((double *)o)[first + j] = u64_to_double(s[2 * j], s[2 * j + 1]);
        }
        break;
    case DIST_NORMAL: {
        philox_next(gen, s);
        if (dt == GN_DT_F64) {
            double v[2];
            box_muller_d(s[0], s[1], s[2], s[3], &v[0], &v[1]);
            for (int64_t j = 0; j < len; j++) ((double *)o)[first + j] = v[j];
        } else {
            float v[4];
            box_muller_f(s[0], s[1], d->ref, &v[0], &v[1]);
            box_muller_f(s[2], s[3], d->ref, &v[2], &v[3]);
            for (int64_t j = 0; j < len; j++) store_float(dt, o, first + j, v[j]);
        }
        break;
    }
    case DIST_TRUNCATED: {
        /* draw normal pairs, keep |z| < 2, one 32-bit sample at a time */
        uint32_t buf[4];
        int used = 4;
        int64_t filled = 0;
        while (filled < len) {
            uint32_t x[4];
            int need = dt == GN_DT_F64 ? 4 : 2;
            for (int k = 0; k < need; k++) {
                if (used == 4) {
                    philox_next(gen, buf);
                    used = 0;
                }
                x[k] = buf[used++];
            }
            double z[2];
            if (dt == GN_DT_F64) {
                box_muller_d(x[0], x[1], x[2], x[3], &z[0], &z[1]);
            } else {
                float f0, f1;
                box_muller_f(x[0], x[1], d->ref, &f0, &f1);
                z[0] = f0;
                z[1] = f1;
            }
            for (int k = 0; k < 2 && filled < len; k++)
                if (fabs(z[k]) < 2.0) store_float(dt, o, first + filled++, z[k]);
        }
        break;
    }
    case DIST_INT:
        philox_next(gen, s);
        for (int64_t j = 0; j < len; j++) {
            if (dt == GN_DT_I64) {
                uint64_t bits = (uint64_t)s[2 * j] | (uint64_t)s[2 * j + 1] << 32;
                ((int64_t *)o)[first + j] = (int64_t)((uint64_t)d->lo + bits % d->range);
            } else {
                ((int32_t *)o)[first + j] = (int32_t)(uint32_t)((uint32_t)d->lo + s[j] % (uint32_t)d->range);
            }
        }
        break;
    case DIST_FULL_INT:
        philox_next(gen, s);
        for (int64_t j = 0; j < len; j++) {
            if (dt == GN_DT_I64 || dt == GN_DT_U64) {
                uint64_t bits = (uint64_t)s[2 * j] | (uint64_t)s[2 * j + 1] << 32;
                ((uint64_t *)o)[first + j] = bits;
            } else {
                ((uint32_t *)o)[first + j] = s[j];
            }
        }
        break;
    }
}

/* TensorFlow's FillPhiloxRandom: group g uses the generator skipped by g;
 * the truncated normal consumes a variable number of samples and reserves 256
 * per output (k * 256 / 4 Philox calls per group). */
static void fill(const dist *d, const philox *base, void *o, int64_t n)
{
    int64_t k = group_size(d);
    uint64_t skip = d->kind == DIST_TRUNCATED ? (uint64_t)k * 64 : 1;
    for (int64_t g = 0; g * k < n; g++) {
        philox gen = *base;
        philox_skip(&gen, (uint64_t)g * skip);
        int64_t len = n - g * k < k ? n - g * k : k;
        fill_group(d, &gen, o, g * k, len);
    }
}

/* ---- seeds ----------------------------------------------------------------------------------- */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Stateful ops: seed / seed2 attrs, or (both 0) the run seed and node name. */
static void stateful_gen(const gn__kctx *c, philox *g)
{
    uint64_t seed = (uint64_t)gn__km_attr_int(c, "seed", 0), seed2 = (uint64_t)gn__km_attr_int(c, "seed2", 0);
    if (seed == 0 && seed2 == 0) {
        const char *name = gn__node_name(c->g, c->node);
        uint64_t h = gn__hash_bytes(name, strlen(name));
        seed = splitmix64(c->seed ^ h);
        seed2 = splitmix64(seed ^ 0x5851F42D4C957F2Dull);
    }
    philox_seed(g, seed, seed2);
}

/* TensorFlow's GenerateKey: scramble the two seed values through one Philox call. */
static void key_from_seeds(uint64_t s0, uint64_t s1, philox *g)
{
    uint32_t ctr[4] = {(uint32_t)s0, (uint32_t)(s0 >> 32), (uint32_t)s1, (uint32_t)(s1 >> 32)};
    uint32_t key[2] = {0x3ec8f720u, 0x02461e29u};
    uint32_t mix[4];
    philox_block(ctr, key, mix);
    g->key[0] = mix[0];
    g->key[1] = mix[1];
    g->ctr[0] = 0;
    g->ctr[1] = 0;
    g->ctr[2] = mix[2];
    g->ctr[3] = mix[3];
}

static gn_status stateless_gen(gn__kctx *c, const gn__tensor *seed, philox *g)
{
    if ((seed->dtype != GN_DT_I32 && seed->dtype != GN_DT_I64) || seed->rank != 1 || seed->dims[0] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "seed must be an int32 or int64 vector of 2 values");
    key_from_seeds((uint64_t)gn__km_int_at(seed, 0), (uint64_t)gn__km_int_at(seed, 1), g);
    return GN_OK;
}

/* V2 ops: key [1] uint64, counter [>= 2] uint64, alg (1 Philox, 3 auto). */
static gn_status v2_gen(gn__kctx *c, const gn__tensor *key, const gn__tensor *ctr, const gn__tensor *alg, philox *g)
{
    if (alg->dtype != GN_DT_I32 || gn__tensor_numel(alg) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "alg must be an int32 scalar");
    int32_t a = *(const int32_t *)alg->data;
    if (a != 1 && a != 3)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "random algorithm %d is not supported (only Philox)", a);
    if (key->dtype != GN_DT_U64 || gn__tensor_numel(key) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "key must be a uint64 vector of 1 value");
    if (ctr->dtype != GN_DT_U64 || gn__tensor_numel(ctr) < 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "counter must be a uint64 vector of at least 2 values");
    uint64_t k = *(const uint64_t *)key->data;
    const uint64_t *cv = ctr->data;
    g->key[0] = (uint32_t)k;
    g->key[1] = (uint32_t)(k >> 32);
    g->ctr[0] = (uint32_t)cv[0];
    g->ctr[1] = (uint32_t)(cv[0] >> 32);
    g->ctr[2] = (uint32_t)cv[1];
    g->ctr[3] = (uint32_t)(cv[1] >> 32);
    return GN_OK;
}

/* ---- kernels ---------------------------------------------------------------------------------- */
static bool float_dtype(int32_t dt)
{
    return dt == GN_DT_F32 || dt == GN_DT_F64 || dt == GN_DT_F16;
}

static gn_status run(gn__kctx *c, const gn__tensor *shape, dist *d, const philox *g)
{
    int32_t rank;
    int64_t dims[GN__MAX_DIMS];
    GN_TRY(gn__km_read_shape(c, shape, "shape", &rank, dims));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, d->dtype, rank, dims, &o));
    d->ref = (c->flags & GN__K_EXACT_MATH) != 0;
    fill(d, g, o->data, gn__tensor_numel(o));
    return GN_OK;
}

/* Reads scalar minval / maxval of the integer distributions. */
static gn_status int_range(gn__kctx *c, const gn__tensor *lo, const gn__tensor *hi, dist *d)
{
    if (lo->dtype != d->dtype || hi->dtype != d->dtype || gn__tensor_numel(lo) != 1 || gn__tensor_numel(hi) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "minval and maxval must be %s scalars", gn__dtype_name(d->dtype));
    int64_t a = gn__km_int_at(lo, 0), b = gn__km_int_at(hi, 0);
    if (a >= b)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "need minval < maxval: %lld >= %lld", (long long)a, (long long)b);
    d->lo = a;
    d->range = (uint64_t)b - (uint64_t)a;
    return GN_OK;
}

static gn_status stateful(gn__kctx *c, dist_kind kind)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    dist d = {kind, gn__km_attr_type(c, "dtype", GN_DT_F32), false, 0, 0};
    if (!float_dtype(d.dtype)) return gn__km_bad_dtype(c, d.dtype);
    philox g;
    stateful_gen(c, &g);
    return run(c, &c->in[0], &d, &g);
}

gn_status gn__km_RandomUniform(gn__kctx *c) { return stateful(c, DIST_UNIFORM); }
gn_status gn__km_RandomStandardNormal(gn__kctx *c) { return stateful(c, DIST_NORMAL); }
gn_status gn__km_TruncatedNormal(gn__kctx *c) { return stateful(c, DIST_TRUNCATED); }

gn_status gn__km_RandomUniformInt(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 3));
    dist d = {DIST_INT, gn__km_attr_type(c, "Tout", c->in[1].dtype), false, 0, 0};
    if (d.dtype != GN_DT_I32 && d.dtype != GN_DT_I64) return gn__km_bad_dtype(c, d.dtype);
    GN_TRY(int_range(c, &c->in[1], &c->in[2], &d));
    philox g;
    stateful_gen(c, &g);
    return run(c, &c->in[0], &d, &g);
}

static gn_status stateless(gn__kctx *c, dist_kind kind)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    dist d = {kind, gn__km_attr_type(c, "dtype", GN_DT_F32), false, 0, 0};
    if (!float_dtype(d.dtype)) return gn__km_bad_dtype(c, d.dtype);
    philox g;
    GN_TRY(stateless_gen(c, &c->in[1], &g));
    return run(c, &c->in[0], &d, &g);
}

gn_status gn__km_StatelessRandomUniform(gn__kctx *c) { return stateless(c, DIST_UNIFORM); }
gn_status gn__km_StatelessRandomNormal(gn__kctx *c) { return stateless(c, DIST_NORMAL); }
gn_status gn__km_StatelessTruncatedNormal(gn__kctx *c) { return stateless(c, DIST_TRUNCATED); }

gn_status gn__km_StatelessRandomUniformInt(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 4));
    dist d = {DIST_INT, gn__km_attr_type(c, "dtype", c->in[2].dtype), false, 0, 0};
    if (d.dtype != GN_DT_I32 && d.dtype != GN_DT_I64) return gn__km_bad_dtype(c, d.dtype);
    GN_TRY(int_range(c, &c->in[2], &c->in[3], &d));
    philox g;
    GN_TRY(stateless_gen(c, &c->in[1], &g));
    return run(c, &c->in[0], &d, &g);
}

static gn_status full_int_dtype(gn__kctx *c, dist *d)
{
    d->kind = DIST_FULL_INT;
    d->dtype = gn__km_attr_type(c, "dtype", GN_DT_U64);
    if (d->dtype != GN_DT_I32 && d->dtype != GN_DT_I64 && d->dtype != GN_DT_U32 && d->dtype != GN_DT_U64)
        return gn__km_bad_dtype(c, d->dtype);
    return GN_OK;
}

gn_status gn__km_StatelessRandomUniformFullInt(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 2));
    dist d = {0};
    GN_TRY(full_int_dtype(c, &d));
    philox g;
    GN_TRY(stateless_gen(c, &c->in[1], &g));
    return run(c, &c->in[0], &d, &g);
}

static gn_status stateless_v2(gn__kctx *c, dist_kind kind)
{
    GN_TRY(gn__km_need_inputs(c, 4));
    dist d = {kind, gn__km_attr_type(c, "dtype", GN_DT_F32), false, 0, 0};
    if (!float_dtype(d.dtype)) return gn__km_bad_dtype(c, d.dtype);
    philox g;
    GN_TRY(v2_gen(c, &c->in[1], &c->in[2], &c->in[3], &g));
    return run(c, &c->in[0], &d, &g);
}

gn_status gn__km_StatelessRandomUniformV2(gn__kctx *c) { return stateless_v2(c, DIST_UNIFORM); }
gn_status gn__km_StatelessRandomNormalV2(gn__kctx *c) { return stateless_v2(c, DIST_NORMAL); }
gn_status gn__km_StatelessTruncatedNormalV2(gn__kctx *c) { return stateless_v2(c, DIST_TRUNCATED); }

gn_status gn__km_StatelessRandomUniformIntV2(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 6));
    dist d = {DIST_INT, gn__km_attr_type(c, "dtype", c->in[4].dtype), false, 0, 0};
    if (d.dtype != GN_DT_I32 && d.dtype != GN_DT_I64) return gn__km_bad_dtype(c, d.dtype);
    GN_TRY(int_range(c, &c->in[4], &c->in[5], &d));
    philox g;
    GN_TRY(v2_gen(c, &c->in[1], &c->in[2], &c->in[3], &g));
    return run(c, &c->in[0], &d, &g);
}

gn_status gn__km_StatelessRandomUniformFullIntV2(gn__kctx *c)
{
    GN_TRY(gn__km_need_inputs(c, 4));
    dist d = {0};
    GN_TRY(full_int_dtype(c, &d));
    philox g;
    GN_TRY(v2_gen(c, &c->in[1], &c->in[2], &c->in[3], &g));
    return run(c, &c->in[0], &d, &g);
}

/* key / counter / alg from a seed (outputs: key [1] uint64, counter [2] uint64, alg int32) */
static gn_status key_counter(gn__kctx *c, bool with_alg)
{
    GN_TRY(gn__km_need_inputs(c, 1));
    philox g;
    GN_TRY(stateless_gen(c, &c->in[0], &g));
    if (c->n_out < (with_alg ? 3u : 2u)) return gn__kctx_fail(c, GN_ERR_INTERNAL, "too few output slots");
    int64_t one = 1, two = 2;
    gn__tensor *k, *ct;
    GN_TRY(gn__kctx_output(c, 0, GN_DT_U64, 1, &one, &k));
    ((uint64_t *)k->data)[0] = (uint64_t)g.key[1] << 32 | g.key[0];
    GN_TRY(gn__kctx_output(c, 1, GN_DT_U64, 1, &two, &ct));
    ((uint64_t *)ct->data)[0] = (uint64_t)g.ctr[1] << 32 | g.ctr[0];
    ((uint64_t *)ct->data)[1] = (uint64_t)g.ctr[3] << 32 | g.ctr[2];
    if (with_alg) {
        gn__tensor *a;
        GN_TRY(gn__kctx_output(c, 2, GN_DT_I32, 0, NULL, &a));
        *(int32_t *)a->data = 1;
    }
    return GN_OK;
}

gn_status gn__km_StatelessRandomGetKeyCounter(gn__kctx *c) { return key_counter(c, false); }
gn_status gn__km_StatelessRandomGetKeyCounterAlg(gn__kctx *c) { return key_counter(c, true); }

gn_status gn__km_StatelessRandomGetAlg(gn__kctx *c)
{
    gn__tensor *a;
    GN_TRY(gn__kctx_output(c, 0, GN_DT_I32, 0, NULL, &a));
    *(int32_t *)a->data = 1;
    return GN_OK;
}
