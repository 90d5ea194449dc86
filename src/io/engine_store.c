/* The engine store (engines built ahead of time by gn_engines_build,
 * src/convert/engine_build.c) and the engine assets of a SavedModel: see
 * engine_store.h for the file format. */
#include "io/engine_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "io/bundle.h"
#include "common/farmhash.h"
#include "io/graphdef.h"
#include "io/pbcanon.h"
#include "io/savedmodel.h"
#include "ops/kernel.h"

static const char *const k_backend[] = {"cpu", "cuda"};   /* by gn__engine_backend */
static const char *const k_device[] = {"host", "gpu"};

/* ---- the store ----------------------------------------------------------------------------- */
void gn__engine_shapes_free(gn__engine_shapes *s)
{
    if (!s) return;
    free(s->rank);
    free(s->dims);
    memset(s, 0, sizeof *s);
}

void gn__engine_store_free(gn__engine_store *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->n; i++) {
        for (uint32_t k = 0; k < s->ent[i].n; k++) gn__engine_shapes_free(&s->ent[i].e[k]);
        free(s->ent[i].e);
        free(s->ent[i].engine);
    }
    free(s->ent);
    free(s);
}

bool gn__engine_shapes_alloc(gn__engine_shapes *s, uint32_t n_in)
{
    s->n_in = n_in;
    s->rank = calloc(n_in + 1, sizeof *s->rank);
    s->dims = calloc((size_t)(n_in + 1) * GN__MAX_DIMS, sizeof *s->dims);
    if (s->rank && s->dims) return true;
    gn__engine_shapes_free(s);
    return false;
}

static bool shapes_equal(const gn__engine_shapes *a, const gn__engine_shapes *b)
{
    if (a->n_in != b->n_in || a->backend != b->backend) return false;
    for (uint32_t i = 0; i < a->n_in; i++) {
        if (a->rank[i] != b->rank[i]) return false;
        for (int32_t d = 0; d < a->rank[i]; d++)
            if (a->dims[i * GN__MAX_DIMS + (uint32_t)d] != b->dims[i * GN__MAX_DIMS + (uint32_t)d]) return false;
    }
    return true;
}

static bool shapes_copy(gn__engine_shapes *dst, const gn__engine_shapes *src)
{
    if (!gn__engine_shapes_alloc(dst, src->n_in)) return false;
    dst->backend = src->backend;
    memcpy(dst->rank, src->rank, src->n_in * sizeof *src->rank);
    memcpy(dst->dims, src->dims, (size_t)src->n_in * GN__MAX_DIMS * sizeof *src->dims);
    return true;
}

const gn__engine_store_entry *gn__engine_store_find(const gn__engine_store *s, const char *engine)
{
    for (uint32_t i = 0; s && i < s->n; i++)
        if (!strcmp(s->ent[i].engine, engine)) return &s->ent[i];
    return NULL;
}

static void store_free(void *s) { gn__engine_store_free(s); }

bool gn__engine_store_add(gn_graph *g, const char *engine, gn__engine_shapes *sh, uint32_t max)
{
    gn__engine_store *s = gn__graph_engines(g);
    if (!s) {
        if (!(s = calloc(1, sizeof *s))) return false;
        gn__attachment_set(&g->engines, s, store_free, NULL);
    }
    gn__engine_store_entry *en = (gn__engine_store_entry *)gn__engine_store_find(s, engine);
    if (!en) {
        gn__engine_store_entry *ne = realloc(s->ent, (s->n + 1) * sizeof *ne);
        if (!ne) return false;
        s->ent = ne;
        en = &s->ent[s->n];
        memset(en, 0, sizeof *en);
        if (!(en->engine = strdup(engine))) return false;
        s->n++;
    }
    for (uint32_t k = 0; k < en->n; k++)
        if (shapes_equal(&en->e[k], sh)) {
            gn__engine_shapes_free(&en->e[k]);
            memmove(&en->e[k], &en->e[k + 1], (en->n - k - 1) * sizeof *en->e);
            en->n--;
            break;
        }
    gn__engine_shapes *ne = realloc(en->e, (en->n + 1) * sizeof *ne);
    if (!ne) return false;
    en->e = ne;
    en->e[en->n++] = *sh;
    memset(sh, 0, sizeof *sh);
    while (en->n > max) {
        gn__engine_shapes_free(&en->e[0]);
        memmove(&en->e[0], &en->e[1], (en->n - 1) * sizeof *en->e);
        en->n--;
    }
    return true;
}

/* ---- what a record must match ---------------------------------------------------------------- */
static const char *precision_of(const gn_graph *g, gn_id node)
{
    const char *v;
    size_t n;
    if (gn__attr_get_string(g, node, "precision_mode", &v, &n)) {
        if (n == 4 && !strncasecmp(v, "FP16", 4)) return "FP16";
        if (n == 4 && !strncasecmp(v, "INT8", 4)) return "INT8";
    }
    return "FP32";
}

static uint64_t fp_str(uint64_t h, const char *s, size_t n)
{
    return gn__fingerprint_cat64(h, gn__fingerprint64(s, n));
}

/* Fingerprint of a function body's deterministic GraphDef. */
static gn_status digest_function(const gn_graph *top, const char *name, uint64_t *h, gn__err *err)
{
    const gn__function *fn = gn__graph_find_function(top, name);
    if (!fn || !fn->body) return gn__fail(err, GN_ERR_GRAPH, "function '%s' is not in the library", name);
    gn__arena a;
    gn__arena_init(&a, 16 * 1024);
    Tensorflow__GraphDef *gd = NULL;
    uint8_t *bytes = NULL;
    size_t nb = 0;
    gn_status s = gn__graph_to_graphdef(fn->body, &a, &gd, err);
    if (s == GN_OK) s = gn__pack_deterministic(&gd->base, &bytes, &nb, err);
    if (s == GN_OK) {
        *h = fp_str(*h, name, strlen(name));
        *h = gn__fingerprint_cat64(*h, gn__fingerprint64(bytes, nb));
    }
    free(bytes);
    gn__arena_free(&a);
    return s;
}

static const char *func_attr(const gn_graph *g, gn_id node, const char *key)
{
    const Tensorflow__AttrValue *f = gn__node_attr(g, node, key);
    if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !f->func || !f->func->name) return NULL;
    return f->func->name;
}

static gn_status engine_digest(const gn_graph *top, const gn_graph *g, gn_id node, uint64_t *out, gn__err *err)
{
    const char *prec = precision_of(g, node);
    uint64_t h = gn__fingerprint64(prec, strlen(prec));
    const char *seg = func_attr(g, node, "segment_func");
    if (!seg) return gn__fail(err, GN_ERR_GRAPH, "attr 'segment_func' is missing or not a function");
    gn_status s = digest_function(top, seg, &h, err);
    const char *ef = func_attr(g, node, "_engine_func");
    if (s == GN_OK && ef) s = digest_function(top, ef, &h, err);
    if (s == GN_OK && !strcmp(prec, "INT8")) {
        const char *tab = NULL;
        size_t tl = 0;
        (void)gn__attr_get_string(g, node, "calibration_data", &tab, &tl);
        h = fp_str(h, tab ? tab : "", tl);
    }
    *out = h;
    return s;
}

/* ---- records ---------------------------------------------------------------------------------- */
static void put_u32(gn__buf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
    gn__buf_append(b, x, 4);
}

static void put_u64(gn__buf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
    gn__buf_append(b, x, 8);
}

static void put_str(gn__buf *b, const char *s)
{
    put_u32(b, (uint32_t)strlen(s));
    gn__buf_append(b, s, strlen(s));
}

static void encode_record(gn__buf *out, const char *prec, uint64_t digest, const gn__engine_shapes *sh)
{
    gn__buf p;
    gn__buf_init(&p);
    gn__buf_append(&p, GN__ENGINE_RECORD_MAGIC, 8);
    put_u32(&p, GN__ENGINE_RECORD_FORMAT);
    put_str(&p, k_backend[sh->backend]);
    put_str(&p, k_device[sh->backend]);
    put_str(&p, GN_VERSION_STRING);
    put_str(&p, prec);
    put_u64(&p, digest);
    put_u32(&p, sh->n_in);
    for (uint32_t i = 0; i < sh->n_in; i++) {
        put_u32(&p, (uint32_t)sh->rank[i]);
        for (int32_t d = 0; d < sh->rank[i]; d++) put_u64(&p, (uint64_t)sh->dims[i * GN__MAX_DIMS + (uint32_t)d]);
    }
    if (p.oom) {
        out->oom = true;
    } else {
        /* TFRecord framing */
        gn__buf len;
        gn__buf_init(&len);
        put_u64(&len, (uint64_t)p.len);
        if (len.oom) out->oom = true;
        else {
            gn__buf_append(out, len.data, 8);
            put_u32(out, gn__crc32c_mask(gn__crc32c(0, len.data, 8)));
            gn__buf_append(out, p.data, p.len);
            put_u32(out, gn__crc32c_mask(gn__crc32c(0, p.data, p.len)));
        }
        gn__buf_free(&len);
    }
    gn__buf_free(&p);
}

typedef struct rd {
    const uint8_t *p;
    size_t n, o;
    bool bad;
} rd;

static uint64_t get_le(rd *r, int bytes)
{
    if (r->bad || r->n - r->o < (size_t)bytes) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)r->p[r->o + (size_t)i] << (8 * i);
    r->o += (size_t)bytes;
    return v;
}

/* A string field compared with want; false when it differs (or is malformed). */
static bool get_str_is(rd *r, const char *want)
{
    uint64_t l = get_le(r, 4);
    if (r->bad || r->n - r->o < l) {
        r->bad = true;
        return false;
    }
    bool eq = l == strlen(want) && !memcmp(r->p + r->o, want, (size_t)l);
    r->o += (size_t)l;
    return eq;
}

/* A string field that is one of want[0..n): its index, or -1 (also when malformed). */
static int get_str_of(rd *r, const char *const *want, int n)
{
    uint64_t l = get_le(r, 4);
    if (r->bad || r->n - r->o < l) {
        r->bad = true;
        return -1;
    }
    int found = -1;
    for (int i = 0; i < n && found < 0; i++)
        if (l == strlen(want[i]) && !memcmp(r->p + r->o, want[i], (size_t)l)) found = i;
    r->o += (size_t)l;
    return found;
}

/* One payload: GN_OK with *usable (and *sh filled when usable: the shapes and
 * the backend it names), or GN_ERR_PARSE. */
static gn_status decode_payload(const uint8_t *p, size_t n, const char *prec, uint64_t digest, bool *usable,
                                gn__engine_shapes *sh, const char *path, uint32_t rec, gn__err *err)
{
    rd r = {p, n, 0, false};
    *usable = false;
    if (n < 12 || memcmp(p, GN__ENGINE_RECORD_MAGIC, 8) != 0)
        return gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u: not a grapnel engine record (no '%s')",
                        path, rec, GN__ENGINE_RECORD_MAGIC);
    r.o = 8;
    if (get_le(&r, 4) != GN__ENGINE_RECORD_FORMAT) return GN_OK;   /* another format: stale */
    int be = get_str_of(&r, k_backend, (int)GN__ARRAY_LEN(k_backend));
    bool ok = be >= 0;
    ok = get_str_is(&r, k_device[be >= 0 ? be : 0]) && ok;
    ok = get_str_is(&r, GN_VERSION_STRING) && ok;
    ok = get_str_is(&r, prec) && ok;
    ok = get_le(&r, 8) == digest && ok;
    uint64_t n_in = get_le(&r, 4);
    if (!r.bad && n_in > (n - r.o) / 4) r.bad = true;
    if (!r.bad && !gn__engine_shapes_alloc(sh, (uint32_t)n_in)) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; !r.bad && i < n_in; i++) {
        uint64_t rank = get_le(&r, 4);
        if (rank > GN__MAX_DIMS) {
            gn__engine_shapes_free(sh);
            return gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u: input %u has rank %llu (at most %d)",
                            path, rec, i, (unsigned long long)rank, GN__MAX_DIMS);
        }
        sh->rank[i] = (int32_t)rank;
        for (uint64_t d = 0; d < rank; d++) {
            int64_t v = (int64_t)get_le(&r, 8);
            if (v < 0) r.bad = true;
            sh->dims[i * GN__MAX_DIMS + d] = v;
        }
    }
    if (r.bad || r.o != n) {
        gn__engine_shapes_free(sh);
        return gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u: malformed payload (%zu bytes, byte %zu)",
                        path, rec, n, r.o);
    }
    if (!ok) gn__engine_shapes_free(sh);
    else sh->backend = (gn__engine_backend)be;
    *usable = ok;
    return GN_OK;
}

gn_status gn__engine_asset_parse(const uint8_t *d, size_t n, const char *path, const char *prec, uint64_t digest,
                                 gn__engine_backend be, gn__engine_shapes **out, uint32_t *n_out, uint32_t *n_stale,
                                 gn__err *err)
{
    size_t o = 0;
    uint32_t rec = 0;
    *out = NULL;
    *n_out = 0;
    gn_status s = GN_OK;
    while (s == GN_OK && o < n) {
        rec++;
        if (n - o < 12) {
            s = gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u: truncated header (%zu of 12 bytes)", path,
                         rec, n - o);
            break;
        }
        rd r = {d, n, o, false};
        uint64_t len = get_le(&r, 8);
        uint32_t lcrc = (uint32_t)get_le(&r, 4);
        if (gn__crc32c_unmask(lcrc) != gn__crc32c(0, d + o, 8)) {
            s = gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u (byte %zu): length CRC mismatch", path,
                         rec, o);
            break;
        }
        if (n - r.o < 4 || len > n - r.o - 4) {
            s = gn__fail(err, GN_ERR_PARSE,
                         "engine asset '%s': record %u (byte %zu): truncated (%llu payload bytes, %zu left)", path,
                         rec, o, (unsigned long long)len, n - r.o);
            break;
        }
        const uint8_t *p = d + r.o;
        r.o += (size_t)len;
        uint32_t pcrc = (uint32_t)get_le(&r, 4);
        if (gn__crc32c_unmask(pcrc) != gn__crc32c(0, p, (size_t)len)) {
            s = gn__fail(err, GN_ERR_PARSE, "engine asset '%s': record %u (byte %zu): payload CRC mismatch", path,
                         rec, o);
            break;
        }
        o = r.o;
        gn__engine_shapes sh;
        memset(&sh, 0, sizeof sh);
        bool usable = false;
        s = decode_payload(p, (size_t)len, prec, digest, &usable, &sh, path, rec, err);
        if (s != GN_OK) break;
        if (usable && sh.backend != be) { /* well-formed, but built for another backend */
            gn__engine_shapes_free(&sh);
            usable = false;
        }
        if (!usable) {
            (*n_stale)++;
            continue;
        }
        gn__engine_shapes *ne = realloc(*out, (*n_out + 1) * sizeof *ne);
        if (!ne) {
            gn__engine_shapes_free(&sh);
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        *out = ne;
        ne[(*n_out)++] = sh;
    }
    if (s != GN_OK) {
        for (uint32_t i = 0; i < *n_out; i++) gn__engine_shapes_free(&(*out)[i]);
        free(*out);
        *out = NULL;
        *n_out = 0;
    }
    return s;
}

/* dir/assets/grapnel-engine.<name>, '/' in the name written as '_' (heap). */
static char *asset_path(const char *dir, const char *engine)
{
    size_t l = strlen(dir) + strlen(engine) + sizeof "/assets/" GN__ENGINE_ASSET_PREFIX + 1;
    char *p = malloc(l);
    if (!p) return NULL;
    int at = snprintf(p, l, "%s/assets/%s", dir, GN__ENGINE_ASSET_PREFIX);
    for (size_t i = 0; engine[i]; i++) p[(size_t)at + i] = engine[i] == '/' ? '_' : engine[i];
    p[(size_t)at + strlen(engine)] = 0;
    return p;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

gn_status gn__engine_seeds(const gn_graph *top, const gn_graph *g, gn_id node, gn__engine_backend be, uint32_t max,
                           gn__engine_shapes **out, uint32_t *n_out, uint32_t *n_stale, gn__err *err)
{
    *out = NULL;
    *n_out = 0;
    *n_stale = 0;
    if (g != top || max == 0) return GN_OK;
    const char *name = gn__node_name(g, node);
    const gn__engine_store_entry *en = gn__engine_store_find(gn__graph_engines(top), name);
    gn_status s = GN_OK;
    if (en && en->n) {
        /* the most recent `max` built for this backend; the others are stale here */
        uint32_t mine = 0;
        for (uint32_t k = 0; k < en->n; k++) mine += en->e[k].backend == be;
        *n_stale = en->n - mine;
        uint32_t skip = mine > max ? mine - max : 0;
        *out = calloc(mine - skip + 1, sizeof **out);
        if (!*out) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; k < en->n; k++) {
            if (en->e[k].backend != be) continue;
            if (skip) {
                skip--;
                continue;
            }
            if (!shapes_copy(&(*out)[*n_out], &en->e[k])) {
                s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
                break;
            }
            (*n_out)++;
        }
    } else if (gn__graph_saved(top) && gn__graph_saved(top)->dir) {
        char *path = asset_path(gn__graph_saved(top)->dir, name);
        if (!path) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        if (file_exists(path)) {
            uint64_t digest = 0;
            uint8_t *d = NULL;
            size_t n = 0;
            s = engine_digest(top, g, node, &digest, err);
            if (s == GN_OK) s = gn__read_file(path, &d, &n, err);
            if (s == GN_OK)
                s = gn__engine_asset_parse(d, n, path, precision_of(g, node), digest, be, out, n_out, n_stale, err);
            free(d);
            /* the most recent `max` (the file lists them oldest first) */
            if (s == GN_OK && *n_out > max) {
                uint32_t drop = *n_out - max;
                for (uint32_t i = 0; i < drop; i++) gn__engine_shapes_free(&(*out)[i]);
                memmove(*out, *out + drop, max * sizeof **out);
                *n_out = max;
            }
        }
        free(path);
    }
    if (s != GN_OK) {
        for (uint32_t i = 0; i < *n_out; i++) gn__engine_shapes_free(&(*out)[i]);
        free(*out);
        *out = NULL;
        *n_out = 0;
    }
    return s;
}

/* ---- writing (gn_savedmodel_save's hook) ------------------------------------------------------- */
static gn_status ensure_dir(const char *path, gn__err *err)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return GN_OK;
    return gn__fail(err, GN_ERR_IO, "%s: %s", path, strerror(errno));
}

gn_status gn__engine_assets_write(const gn_graph *src, const gn_graph *saved, const char *dir, gn__err *err)
{
    gn_status s = GN_OK;
    bool made = false;
    size_t dl = strlen(dir);
    char *adir = malloc(dl + sizeof "/assets");
    if (!adir) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    snprintf(adir, dl + sizeof "/assets", "%s/assets", dir);
    for (gn_id id = 0; s == GN_OK && id < saved->n_nodes; id++) {
        if (!gn__node_live(saved, id) || strcmp(gn__node_op(saved, id), GN__ENGINE_OP) != 0) continue;
        const char *name = gn__node_name(saved, id);
        const gn__engine_store_entry *en = gn__engine_store_find(gn__graph_engines(src), name);
        gn__buf b;
        gn__buf_init(&b);
        if (en && en->n) {
            uint64_t digest = 0;
            s = engine_digest(saved, saved, id, &digest, err);
            for (uint32_t k = 0; s == GN_OK && k < en->n; k++)
                encode_record(&b, precision_of(saved, id), digest, &en->e[k]);
        } else if (gn__graph_saved(src) && gn__graph_saved(src)->dir) {
            char *from = asset_path(gn__graph_saved(src)->dir, name);
            if (!from) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            else if (file_exists(from)) {
                uint8_t *d = NULL;
                size_t n = 0;
                s = gn__read_file(from, &d, &n, err);
                if (s == GN_OK) gn__buf_append(&b, d, n);
                free(d);
            }
            free(from);
        }
        if (s == GN_OK && b.oom) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        if (s == GN_OK && b.len) {
            if (!made) s = ensure_dir(adir, err);
            made = true;
            char *to = asset_path(dir, name);
            if (!to) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            if (s == GN_OK) s = gn__write_file_atomic(to, b.data, b.len, src->fsync_writes || (saved && saved->fsync_writes), err);
            free(to);
        }
        gn__buf_free(&b);
    }
    free(adir);
    return s;
}
