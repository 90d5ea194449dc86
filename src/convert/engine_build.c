/* gn_engines_build: runs a session on the graph with the given feeds so that
 * every Grapnel>EngineOp builds its engines for the shapes it sees, and keeps
 * those shapes in the graph's engine store (src/io/engine_store.h), which a
 * later session starts from and gn_savedmodel_save writes as assets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "io/engine_store.h"
#include "ops/kernel.h"

/* ---- gn_engines_build ------------------------------------------------------------------------- */
/* "node" / "node:k" -> the edge (false when no such node). */
static bool parse_tensor(const gn_graph *g, const char *name, gn__edge *e)
{
    size_t base = strlen(name);
    uint32_t idx = 0;
    const char *colon = strrchr(name, ':');
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) && strlen(colon + 1) < 9) {
        idx = (uint32_t)strtoul(colon + 1, NULL, 10);
        base = (size_t)(colon - name);
    }
    gn_id id = gn__graph_find_n(g, name, base);
    if (id == GN_NONE || !gn__node_live(g, id)) return false;
    e->node = id;
    e->index = idx;
    return true;
}

static char *edge_name(const gn_graph *g, gn__edge e)
{
    const char *n = gn__node_name(g, e.node);
    size_t l = strlen(n) + 16;
    char *s = malloc(l);
    if (s) snprintf(s, l, "%s:%u", n, e.index);
    return s;
}

static void shapes_print(gn__buf *b, const gn__engine_shapes *sh)
{
    for (uint32_t i = 0; i < sh->n_in; i++) {
        gn__buf_puts(b, i ? " [" : "[");
        for (int32_t d = 0; d < sh->rank[i]; d++)
            gn__buf_printf(b, "%s%lld", d ? "," : "", (long long)sh->dims[i * GN__MAX_DIMS + (uint32_t)d]);
        gn__buf_putc(b, ']');
    }
    if (!sh->n_in) gn__buf_puts(b, "(no inputs)");
}

gn_status gn_engines_build(gn_graph *g, const char *backend, const char *const *feed_names, const gn_tensor *feeds,
                           size_t n_feeds, char **report)
{
    if (report) *report = NULL;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    if (g->kind != GN__GRAPH_TOP) return gn__fail(&g->err, GN_ERR_ARG, "engines build: not a top-level graph");
    if (n_feeds && (!feed_names || !feeds)) return gn__fail(&g->err, GN_ERR_ARG, "engines build: feeds are NULL");
    /* the engine ops and the tensors to fetch: each op's inputs (a fed one is read from its feed), then its output 0 */
    uint32_t n_ops = 0, n_fetch = 0;
    for (gn_id id = 0; id < g->n_nodes; id++)
        if (gn__node_live(g, id) && !strcmp(gn__node_op(g, id), GN__ENGINE_OP)) {
            n_ops++;
            n_fetch += g->nodes[id].n_in + 1;
        }
    if (!n_ops) return gn__fail(&g->err, GN_ERR_ARG, "engines build: the graph has no %s", GN__ENGINE_OP);
    gn__edge *fe = calloc(n_feeds + 1, sizeof *fe);
    gn_id *ops = calloc(n_ops, sizeof *ops);
    char **fetch = calloc(n_fetch, sizeof *fetch);
    int64_t *src = calloc(n_fetch, sizeof *src);   /* per fetch: >= 0 the feed index, else -1 - fetch slot */
    gn_tensor *got = calloc(n_fetch, sizeof *got);
    gn_status s = fe && ops && fetch && src && got ? GN_OK : gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GN_OK && i < n_feeds; i++)
        if (!feed_names[i] || !parse_tensor(g, feed_names[i], &fe[i]))
            s = gn__fail(&g->err, GN_ERR_NOT_FOUND, "engines build: no tensor '%s' in the graph",
                         feed_names[i] ? feed_names[i] : "(null)");
    uint32_t k = 0, nf = 0, o = 0;
    for (gn_id id = 0; s == GN_OK && id < g->n_nodes; id++) {
        if (!gn__node_live(g, id) || strcmp(gn__node_op(g, id), GN__ENGINE_OP) != 0) continue;
        ops[o++] = id;
        const gn__node *nd = &g->nodes[id];
        for (uint32_t i = 0; s == GN_OK && i <= nd->n_in; i++) {
            gn__edge e = i < nd->n_in ? nd->in[i] : (gn__edge){id, 0};
            int64_t from = -1;
            for (size_t f = 0; f < n_feeds && from < 0; f++)
                if (fe[f].node == e.node && fe[f].index == e.index) from = (int64_t)f;
            if (from >= 0 && i < nd->n_in) {
                src[k++] = from;
                continue;
            }
            if (!(fetch[nf] = edge_name(g, e))) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            src[k++] = -1 - (int64_t)nf++;
        }
    }
    gn_session *sess = NULL;
    if (s == GN_OK) {
        gn_session_options so;
        gn_session_options_init(&so);
        if (backend) so.backend = backend;
        s = gn_session_new(g, &so, &sess);
        if (s == GN_OK)
            s = gn_session_run(sess, feed_names, feeds, n_feeds, (const char *const *)fetch, got, nf);
        if (s != GN_OK)
            s = gn__fail(&g->err, s, "engines build: %s", sess ? gn_session_errmsg(sess) : "out of memory");
    }
    gn__buf rep;
    gn__buf_init(&rep);
    k = 0;
    for (uint32_t op = 0; s == GN_OK && op < n_ops; op++) {
        gn_id id = ops[op];
        uint32_t n_in = g->nodes[id].n_in;
        gn__engine_shapes sh;
        if (!gn__engine_shapes_alloc(&sh, n_in)) {
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        sh.backend = backend && !strcmp(backend, "cuda") ? GN__ENGINE_CUDA : GN__ENGINE_CPU;
        for (uint32_t i = 0; i < n_in; i++) {
            int64_t from = src[k++];
            const gn_tensor *t = from >= 0 ? &feeds[from] : &got[-1 - from];
            sh.rank[i] = t->rank;
            for (int32_t d = 0; d < t->rank && d < GN__MAX_DIMS; d++) sh.dims[i * GN__MAX_DIMS + (uint32_t)d] = t->dims[d];
        }
        k++;   /* the op's output */
        int64_t max = 1;
        (void)gn__attr_get_int(g, id, "max_cached_engines_count", &max);
        if (max < 1) max = 1;
        gn__buf_printf(&rep, "%s: ", gn__node_name(g, id));
        shapes_print(&rep, &sh);
        if (!gn__engine_store_add(g, gn__node_name(g, id), &sh, (uint32_t)(max > UINT32_MAX ? UINT32_MAX : max))) {
            gn__engine_shapes_free(&sh);
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        const gn__engine_store_entry *en = gn__engine_store_find(gn__graph_engines(g), gn__node_name(g, id));
        gn__buf_printf(&rep, " (%u engine%s cached for it, at most %lld)\n", en->n, en->n == 1 ? "" : "s",
                       (long long)max);
    }
    if (s == GN_OK && report) {
        *report = gn__buf_take(&rep);
        if (!*report) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    gn__buf_free(&rep);
    gn_session_free(sess);
    for (uint32_t i = 0; got && i < nf; i++) gn_tensor_free(&got[i]);
    for (uint32_t i = 0; fetch && i < nf; i++) free(fetch[i]);
    free(fe);
    free(ops);
    free(fetch);
    free(src);
    free(got);
    return s;
}
