/* gn_session: running a graph on a backend (include/grapnel/runtime.h).
 *
 * A run resolves its feed and fetch names to tensors of the graph, finds (or
 * compiles, once) the backend engine for that feed/fetch signature, checks
 * the feeds, and executes. The engine keeps the memory plans per set of input
 * shapes. Results are copied out of anything the library does not own
 * outright (graph constants, caller feeds, string payloads). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/tensor.h"
#include "opdef/registry.h"
#include "runtime/session.h"

#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

typedef struct sess_engine {
    uint32_t n_feeds, n_fetches;
    gn__edge *feeds, *fetches;
    gn__engine *e;
} sess_engine;

struct gn_session {
    gn__err err;
    const gn_graph *g;
    gn__backend be;
    uint64_t seed;
    sess_engine *eng;
    uint32_t n_eng, cap_eng;
    int32_t last;
};

/* ---- tensors ------------------------------------------------------------------------------ */
void gn_tensor_free(gn_tensor *t)
{
    if (!t || !t->internal) return;
    gn__buffer_unref(t->internal);
    memset(t, 0, sizeof *t);
}

int64_t gn_tensor_numel(const gn_tensor *t)
{
    if (!t) return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank && i < GN_TENSOR_MAX_DIMS; i++) n *= t->dims[i];
    return n;
}

gn_status gn_tensor_alloc(int32_t dtype, int32_t rank, const int64_t *dims, gn_tensor *out)
{
    if (!out) return GN_ERR_ARG;
    memset(out, 0, sizeof *out);
    size_t esz = gn__dtype_size(dtype);
    if (!esz || rank < 0 || rank > GN_TENSOR_MAX_DIMS || (rank && !dims)) return GN_ERR_ARG;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return GN_ERR_ARG;
        if (dims[i] && n > INT64_MAX / dims[i]) return GN_ERR_ARG;
        n *= dims[i];
    }
    if ((uint64_t)n > SIZE_MAX / esz) return GN_ERR_NOMEM;
    gn__buffer *b = gn__buffer_new((size_t)n * esz);
    if (!b) return GN_ERR_NOMEM;
    memset(b->data, 0, (size_t)n * esz);
    out->dtype = dtype;
    out->rank = rank;
    for (int32_t i = 0; i < rank; i++) out->dims[i] = dims[i];
    out->data = b->data;
    out->nbytes = (size_t)n * esz;
    out->internal = b;
    return GN_OK;
}

/* ---- options and lifetime -------------------------------------------------------------------- */
/* memory_limit_bytes 0: a quarter of physical memory, so that a tensor at the
 * limit and a consumer's output of the same size (the elementwise pattern)
 * stay within half of it; 4 GiB when the size cannot be read. */
static uint64_t default_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page) return (uint64_t)4 << 30;
    uint64_t q = (uint64_t)pages * (uint64_t)page / 4;
    return q ? q : (uint64_t)4 << 30;
}

void gn_session_options_init(gn_session_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->backend = "cpu";
}

gn_status gn_session_new(const gn_graph *g, const gn_session_options *o, gn_session **out)
{
    if (!out) return GN_ERR_ARG;
    *out = NULL;
    gn_session *s = calloc(1, sizeof *s);
    if (!s) return GN_ERR_NOMEM;
    *out = s;
    s->last = -1;
    if (!g) return gn__fail(&s->err, GN_ERR_ARG, "gn_session_new: graph is NULL");
    gn_session_options d;
    gn_session_options_init(&d);
    if (o) {
        if (o->struct_size < offsetof(gn_session_options, num_threads) + sizeof o->num_threads ||
            o->struct_size > sizeof *o)
            return gn__fail(&s->err, GN_ERR_ARG,
                            "gn_session_new: options struct_size %u is not one this library knows (call "
                            "gn_session_options_init)",
                            o->struct_size);
        memcpy(&d, o, o->struct_size);   /* an older caller's struct is shorter: the rest keeps the defaults */
    }
    s->g = g;
    s->seed = d.seed;
    GN_TRY(gn__backend_open(d.backend, d.num_threads, &s->be, &s->err));
    if (s->be.iface->configure) {
        gn__backend_config cfg = {.cuda_graph = d.cuda_graph, .workspace_limit_bytes = (size_t)d.workspace_limit_bytes};
        uint64_t mem = d.memory_limit_bytes ? d.memory_limit_bytes : default_memory_limit();
        cfg.max_tensor_bytes = mem == UINT64_MAX || mem > SIZE_MAX ? 0 : (size_t)mem;
        cfg.step_limit = d.step_limit == UINT64_MAX ? 0 : d.step_limit ? d.step_limit : GN_SESSION_DEFAULT_STEP_LIMIT;
        cfg.time_limit_ms = d.time_limit_ms;
        GN_TRY(s->be.iface->configure(s->be.self, &cfg, &s->err));
    }
    return GN_OK;
}

void gn_session_free(gn_session *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->n_eng; i++) {
        if (s->be.iface) s->be.iface->engine_free(s->be.self, s->eng[i].e);
        free(s->eng[i].feeds);
        free(s->eng[i].fetches);
    }
    free(s->eng);
    gn__backend_close(&s->be);
    free(s);
}

const char *gn_session_errmsg(const gn_session *s)
{
    if (!s) return "out of memory";
    return s->err.code == GN_OK ? "" : s->err.msg;
}

gn_status gn__session_stats(const gn_session *s, gn__engine_stats *out, uint32_t *n_engines)
{
    memset(out, 0, sizeof *out);
    if (n_engines) *n_engines = s->n_eng;
    if (s->last < 0 || !s->be.iface || !s->be.iface->engine_stats) return GN_OK;
    s->be.iface->engine_stats(s->be.self, s->eng[s->last].e, out);
    return GN_OK;
}

/* ---- names ------------------------------------------------------------------------------------ */
static const char *shape_str(int32_t rank, const int64_t *dims, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int32_t i = 0; i < rank && o < n; i++) {
        if (dims[i] < 0) o += (size_t)snprintf(buf + o, n - o, "%s?", i ? "," : "");
        else o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static gn_status resolve(gn_session *s, const char *name, gn__edge *out)
{
    const gn_graph *g = s->g;
    if (!name) return gn__fail(&s->err, GN_ERR_ARG, "a feed or fetch name is NULL");
    size_t base = strlen(name);
    uint64_t idx = 0;
    const char *colon = strrchr(name, ':');
    if (colon && colon[1]) {
        const char *q = colon + 1;
        bool digits = true;
        for (; *q; q++)
            if (*q < '0' || *q > '9') digits = false;
        if (digits && strlen(colon + 1) < 10) {
            idx = strtoull(colon + 1, NULL, 10);
            base = (size_t)(colon - name);
        }
    }
    gn_id id = gn__graph_find_n(g, name, base);
    if (id == GN_NONE || !gn__node_live(g, id))
        return gn__fail(&s->err, GN_ERR_NOT_FOUND, "no tensor '%s' in the graph", name);
    int32_t no = gn__node_num_outputs(g, id);
    if (no >= 0 && idx >= (uint64_t)no) {
        if (no == 0)
            return gn__fail(&s->err, GN_ERR_NOT_FOUND, "no tensor '%s' in the graph: node '%.*s' has no outputs", name,
                            (int)base, name);
        return gn__fail(&s->err, GN_ERR_NOT_FOUND, "no tensor '%s' in the graph: node '%.*s' has %d output%s", name,
                        (int)base, name, no, no == 1 ? "" : "s");
    }
    out->node = id;
    out->index = (uint32_t)idx;
    return GN_OK;
}

/* The dtype the graph gives tensor e, 0 when unknown. */
static int32_t tensor_dtype(const gn_graph *g, gn__edge e)
{
    const struct gn__opdef *op = gn__node_opdef(g, e.node);
    if (!op) return 0;
    return gn__op_output_dtype(op, g, e.node, e.index);
}

static gn_status check_feed(gn_session *s, const char *name, gn__edge e, const gn_tensor *t)
{
    const gn_graph *g = s->g;
    if (!t) return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': tensor is NULL", name);
    if (t->rank < 0 || t->rank > GN_TENSOR_MAX_DIMS)
        return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': rank %d is outside 0..%d", name, t->rank, GN_TENSOR_MAX_DIMS);
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': dimension %d is %lld", name, i, (long long)t->dims[i]);
        if (t->dims[i] && n > INT64_MAX / t->dims[i])
            return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': element count overflows", name);
        n *= t->dims[i];
    }
    int32_t want = tensor_dtype(g, e);
    if (want && t->dtype != want)
        return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': %s given, %s expected", name, gn_dtype_numpy_name(t->dtype),
                        gn_dtype_numpy_name(want));
    size_t esz = gn__dtype_size(t->dtype);
    if (t->dtype == DT_STRING) {
        if (n && !t->data) return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': data is NULL", name);
    } else if (!esz) {
        return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': dtype %s cannot be fed", name, gn_dtype_numpy_name(t->dtype));
    } else {
        if ((uint64_t)n > SIZE_MAX / esz || t->nbytes != (size_t)n * esz) {
            char sh[256];
            return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': %zu bytes given, %s %s needs %llu", name, t->nbytes,
                            gn_dtype_numpy_name(t->dtype), shape_str(t->rank, t->dims, sh, sizeof sh),
                            (unsigned long long)((uint64_t)n * esz));
        }
        if (n && !t->data) return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': data is NULL", name);
    }
    /* a placeholder's declared shape */
    const char *op = gn__node_op(g, e.node);
    if (e.index == 0 && (strcmp(op, "Placeholder") == 0 || strcmp(op, "PlaceholderV2") == 0 ||
                         strcmp(op, "PlaceholderWithDefault") == 0)) {
        const Tensorflow__AttrValue *v = gn__node_attr(g, e.node, "shape");
        if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE && v->shape && !v->shape->unknown_rank &&
            v->shape->n_dim <= GN_TENSOR_MAX_DIMS) {
            int64_t want_dims[GN_TENSOR_MAX_DIMS];
            int32_t r = (int32_t)v->shape->n_dim;
            bool ok = r == t->rank;
            for (int32_t i = 0; i < r; i++) {
                want_dims[i] = v->shape->dim[i]->size;
                if (ok && want_dims[i] >= 0 && want_dims[i] != t->dims[i]) ok = false;
            }
            /* a rank-0 shape meant "unconstrained" in graphs before version 21 */
            if (!ok && r > 0) {
                char a[256], b[256];
                return gn__fail(&s->err, GN_ERR_ARG, "feed '%s': shape %s given, %s expected", name,
                                shape_str(t->rank, t->dims, a, sizeof a), shape_str(r, want_dims, b, sizeof b));
            }
        }
    }
    return GN_OK;
}

static bool edges_equal(const gn__edge *a, const gn__edge *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i].node != b[i].node || a[i].index != b[i].index) return false;
    return true;
}

static gn_status to_caller(gn_session *s, const char *name, gn__tensor *t, gn_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (t->dtype == TENSORFLOW__DATA_TYPE__DT_RESOURCE || t->dtype == TENSORFLOW__DATA_TYPE__DT_VARIANT)
        return gn__fail(&s->err, GN_ERR_UNSUPPORTED, "fetch '%s': a %s tensor cannot be fetched", name,
                        gn_dtype_numpy_name(t->dtype));
    int64_t n = gn__tensor_numel(t);
    out->dtype = t->dtype;
    out->rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) out->dims[i] = t->dims[i];
    gn__buffer *b = NULL;
    if (t->dtype == DT_STRING) {
        const gn__tstring *src = t->data;
        size_t bytes = 0;
        for (int64_t i = 0; i < n; i++) bytes += src[i].len;
        size_t head = (size_t)n * sizeof(gn_string);
        b = gn__buffer_new(head + bytes + 1);
        if (!b) return gn__fail(&s->err, GN_ERR_NOMEM, "out of memory");
        gn_string *dst = b->data;
        char *p = (char *)b->data + head;
        for (int64_t i = 0; i < n; i++) {
            if (src[i].len) memcpy(p, src[i].ptr, src[i].len);
            dst[i].data = p;
            dst[i].len = src[i].len;
            p += src[i].len;
        }
        out->nbytes = head;
    } else if (!t->buf) {
        b = gn__buffer_new(t->nbytes);
        if (!b) return gn__fail(&s->err, GN_ERR_NOMEM, "out of memory");
        if (t->nbytes) memcpy(b->data, t->data, t->nbytes);
        out->nbytes = t->nbytes;
    }
    if (b) {
        out->data = b->data;
        out->internal = b;
        gn__tensor_release(t);
    } else {
        out->data = t->data;
        out->nbytes = t->nbytes;
        out->internal = t->buf;   /* the reference moves to the caller */
        memset(t, 0, sizeof *t);
    }
    return GN_OK;
}

gn_status gn_session_run(gn_session *s, const char *const *feed_names, const gn_tensor *feeds, size_t n_feeds,
                         const char *const *fetch_names, gn_tensor *fetches, size_t n_fetches)
{
    if (!s) return GN_ERR_ARG;
    gn__err_clear(&s->err);
    if (fetches)
        for (size_t i = 0; i < n_fetches; i++) memset(&fetches[i], 0, sizeof fetches[i]);
    if (!s->g || !s->be.iface) return gn__fail(&s->err, GN_ERR_MISUSE, "the session could not be created");
    if ((n_feeds && (!feed_names || !feeds)) || (n_fetches && (!fetch_names || !fetches)))
        return gn__fail(&s->err, GN_ERR_ARG, "gn_session_run: NULL names or tensors");
    if (n_feeds > UINT32_MAX / 2 || n_fetches > UINT32_MAX / 2)
        return gn__fail(&s->err, GN_ERR_ARG, "gn_session_run: too many feeds or fetches");
    gn__edge *fe = calloc(n_feeds + 1, sizeof *fe), *fx = calloc(n_fetches + 1, sizeof *fx);
    gn__tensor *in = calloc(n_feeds + 1, sizeof *in), *out = calloc(n_fetches + 1, sizeof *out);
    gn_status st = GN_OK;
    if (!fe || !fx || !in || !out) st = gn__fail(&s->err, GN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == GN_OK && i < n_feeds; i++) {
        st = resolve(s, feed_names[i], &fe[i]);
        for (size_t j = 0; st == GN_OK && j < i; j++)
            if (fe[j].node == fe[i].node && fe[j].index == fe[i].index)
                st = gn__fail(&s->err, GN_ERR_ARG, "feed '%s' is given twice", feed_names[i]);
        if (st == GN_OK) st = check_feed(s, feed_names[i], fe[i], &feeds[i]);
        if (st == GN_OK) {
            const gn_tensor *t = &feeds[i];
            in[i].dtype = t->dtype;
            in[i].rank = t->rank;
            for (int32_t d = 0; d < t->rank; d++) in[i].dims[d] = t->dims[d];
            in[i].data = t->data;
            in[i].nbytes = t->nbytes;
            in[i].buf = NULL;   /* borrowed for the call */
        }
    }
    for (size_t i = 0; st == GN_OK && i < n_fetches; i++) st = resolve(s, fetch_names[i], &fx[i]);
    /* the engine for this signature */
    int32_t ei = -1;
    for (uint32_t i = 0; st == GN_OK && i < s->n_eng && ei < 0; i++) {
        sess_engine *se = &s->eng[i];
        if (se->n_feeds == n_feeds && se->n_fetches == n_fetches && edges_equal(se->feeds, fe, se->n_feeds) &&
            edges_equal(se->fetches, fx, se->n_fetches))
            ei = (int32_t)i;
    }
    if (st == GN_OK && ei < 0) {
        if (s->n_eng == s->cap_eng) {
            uint32_t cap = s->cap_eng ? s->cap_eng * 2 : 4;
            sess_engine *ne = realloc(s->eng, cap * sizeof *ne);
            if (!ne) st = gn__fail(&s->err, GN_ERR_NOMEM, "out of memory");
            else {
                s->eng = ne;
                s->cap_eng = cap;
            }
        }
        if (st == GN_OK) {
            gn__engine_sig sig = {(uint32_t)n_feeds, fe, (uint32_t)n_fetches, fx, 0, NULL};
            gn__engine *e = NULL;
            st = s->be.iface->compile(s->be.self, s->g, &sig, &e, &s->err);
            if (st == GN_OK) {
                sess_engine *se = &s->eng[s->n_eng];
                se->n_feeds = (uint32_t)n_feeds;
                se->n_fetches = (uint32_t)n_fetches;
                se->feeds = fe;
                se->fetches = fx;
                se->e = e;
                fe = fx = NULL;   /* kept by the entry */
                ei = (int32_t)s->n_eng++;
            }
        }
    }
    if (st == GN_OK) {
        s->last = ei;
        st = s->be.iface->execute(s->be.self, s->eng[ei].e, in, out, s->seed, &s->err);
    }
    size_t done = 0;
    for (; st == GN_OK && done < n_fetches; done++) st = to_caller(s, fetch_names[done], &out[done], &fetches[done]);
    if (st != GN_OK) {
        for (size_t i = 0; i < done && fetches; i++) gn_tensor_free(&fetches[i]);
        for (size_t i = 0; i < n_fetches && out; i++) gn__tensor_release(&out[i]);
    }
    free(fe);
    free(fx);
    free(in);
    free(out);
    return st;
}
