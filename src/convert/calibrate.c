/* INT8 calibration (docs/reference_formats.md §A8; TF-TRT's calibration run):
 * the segmented graph runs on the CPU backend over the caller's batches, the
 * INT8 engine ops being calibrated running their native segments; each such
 * op's native segment then runs on the inputs it received with every float
 * tensor fetched, and max |x| per tensor over all batches becomes the op's
 * table (src/runtime/quant.h gives the format), stored in its
 * calibration_data attr. Engines are then built from the table, never by
 * calibrating again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grapnel/convert.h"
#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "opdef/registry.h"
#include "runtime/quant.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT

typedef struct cal_engine {
    gn_id node;
    const gn_graph *body;
    uint32_t n_in;
    char **in_name;        /* outer tensors read ("node:k") */
    int32_t *in_feed;      /* index of the caller's feed it is, or -1 */
    uint32_t *in_fetch;    /* else: index in the outer fetch list */
    uint32_t n_t;          /* body tensors recorded */
    char **t_name;         /* "node:k" in the body */
    float *amax;           /* n_in inputs, then n_t body tensors */
    char *skip;            /* why it cannot be calibrated (its inputs cannot be fetched), or NULL */
} cal_engine;

static char *tensor_name(const gn_graph *g, gn__edge e)
{
    const char *n = gn__node_name(g, e.node);
    size_t l = strlen(n) + 16;
    char *s = malloc(l);
    if (s) snprintf(s, l, "%s:%u", n, e.index);
    return s;
}

/* "x" and "x:0" name the same tensor */
static bool same_tensor(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 2 && !strcmp(a + la - 2, ":0")) la -= 2;
    if (lb > 2 && !strcmp(b + lb - 2, ":0")) lb -= 2;
    return la == lb && !strncmp(a, b, la);
}

static float tensor_amax(const gn_tensor *t)
{
    if (t->dtype != DT_F32) return 0;
    const float *x = t->data;
    int64_t n = gn_tensor_numel(t);
    float m = 0;
    for (int64_t i = 0; i < n; i++) {
        float v = fabsf(x[i]);
        if (v > m && isfinite(v)) m = v;
    }
    return m;
}

static void cal_free(cal_engine *c)
{
    for (uint32_t i = 0; i < c->n_in; i++) free(c->in_name[i]);
    for (uint32_t i = 0; i < c->n_t; i++) free(c->t_name[i]);
    free(c->in_name);
    free(c->in_feed);
    free(c->in_fetch);
    free(c->t_name);
    free(c->amax);
    free(c->skip);
}

static bool wants_calibration(const gn_graph *g, gn_id id)
{
    const char *pm;
    size_t pl;
    bool cal = true;
    (void)gn__attr_get_bool(g, id, "use_calibration", &cal);
    return !strcmp(gn__node_op(g, id), "Grapnel>EngineOp") && cal &&
           gn__attr_get_string(g, id, "precision_mode", &pm, &pl) && pl == 4 && !strncasecmp(pm, "INT8", 4);
}

static gn_status set_table(gn_graph *g, gn_id id, const char *text)
{
    Tensorflow__AttrValue *v = gn__attr_new_string(g, text, strlen(text));
    if (!v) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    return gn__node_set_attr(g, id, "calibration_data", v);
}

/* Sets up engine c: its outer inputs and the body tensors to record. */
static gn_status cal_init(gn_graph *g, cal_engine *c, gn_id id, const char *const *feed_names, size_t n_feeds)
{
    memset(c, 0, sizeof *c);
    c->node = id;
    const Tensorflow__AttrValue *f = gn__node_attr(g, id, "segment_func");
    const gn__function *fn = f && f->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && f->func && f->func->name
                                 ? gn__graph_find_function(g, f->func->name)
                                 : NULL;
    if (!fn)
        return gn__fail(&g->err, GN_ERR_GRAPH, "calibrate: engine '%s': its native segment function is missing",
                        gn__node_name(g, id));
    c->body = fn->body;
    const gn__node *nd = &g->nodes[id];
    c->n_in = nd->n_in;
    const gn_graph *b = c->body;
    c->in_name = calloc(c->n_in + 1, sizeof *c->in_name);
    c->in_feed = calloc(c->n_in + 1, sizeof *c->in_feed);
    c->in_fetch = calloc(c->n_in + 1, sizeof *c->in_fetch);
    c->t_name = calloc(b->n_nodes + 1, sizeof *c->t_name);
    uint32_t cap_t = b->n_nodes + 1;
    if (!c->in_name || !c->in_feed || !c->in_fetch || !c->t_name) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (!(c->in_name[i] = tensor_name(g, nd->in[i]))) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
        c->in_feed[i] = -1;
        for (size_t k = 0; k < n_feeds; k++)
            if (same_tensor(c->in_name[i], feed_names[k])) c->in_feed[i] = (int32_t)k;
    }
    for (gn_id x = 0; x < b->n_nodes; x++) {
        if (!gn__node_live(b, x) || (b->nodes[x].flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET))) continue;
        if (!strcmp(gn__node_op(b, x), "Const")) continue;
        const gn__opdef *op = gn__node_opdef(b, x);
        int32_t no = gn__node_num_outputs(b, x);
        for (int32_t k = 0; op && k < no; k++) {
            if (gn__op_output_dtype(op, b, x, (uint32_t)k) != DT_F32) continue;
            if (c->n_t == cap_t) {
                char **nn = realloc(c->t_name, (cap_t *= 2) * sizeof *nn);
                if (!nn) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
                c->t_name = nn;
            }
            if (!(c->t_name[c->n_t++] = tensor_name(b, (gn__edge){x, (uint32_t)k})))
                return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
        }
    }
    c->amax = calloc(c->n_in + c->n_t + 1, sizeof *c->amax);
    if (!c->amax) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    return GN_OK;
}

/* One batch through engine c's native segment: its inputs are ins. */
static gn_status cal_batch(gn_graph *g, cal_engine *c, const gn_tensor *ins)
{
    const gn_graph *b = c->body;
    const char **fn = calloc(c->n_in + 1, sizeof *fn);
    char (*argn)[32] = calloc(c->n_in + 1, sizeof *argn);
    gn_tensor *outs = calloc(c->n_t + 1, sizeof *outs);
    gn_session *s = NULL;
    gn_status st = fn && argn && outs ? GN_OK : gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    /* the arguments by index */
    for (gn_id x = 0; st == GN_OK && x < b->n_nodes; x++) {
        if (!gn__node_live(b, x) || !(b->nodes[x].flags & GN__NODE_FN_ARG)) continue;
        uint32_t i = b->nodes[x].orig_index;
        if (i < c->n_in) snprintf(argn[i], sizeof argn[i], "%.31s", gn__node_name(b, x));
    }
    for (uint32_t i = 0; st == GN_OK && i < c->n_in; i++) {
        fn[i] = argn[i];
        float m = tensor_amax(&ins[i]);
        if (m > c->amax[i]) c->amax[i] = m;
    }
    if (st == GN_OK && c->n_t) {
        st = gn_session_new(b, NULL, &s);
        if (st == GN_OK) st = gn_session_run(s, fn, ins, c->n_in, (const char *const *)c->t_name, outs, c->n_t);
        if (st != GN_OK)
            st = gn__fail(&g->err, st, "calibrate: engine '%s': native segment: %s", gn__node_name(g, c->node),
                          s ? gn_session_errmsg(s) : "out of memory");
        for (uint32_t k = 0; st == GN_OK && k < c->n_t; k++) {
            float m = tensor_amax(&outs[k]);
            if (m > c->amax[c->n_in + k]) c->amax[c->n_in + k] = m;
        }
        for (uint32_t k = 0; k < c->n_t; k++) gn_tensor_free(&outs[k]);
    }
    gn_session_free(s);
    free(fn);
    free(argn);
    free(outs);
    return st;
}

gn_status gn_calibrate(gn_graph *g, const char *const *feed_names, size_t n_feeds, const gn_tensor *batches,
                       size_t n_batches, char **report)
{
    if (report) *report = NULL;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    if ((n_feeds && (!feed_names || !batches)) || !n_batches)
        return gn__fail(&g->err, GN_ERR_ARG, "calibrate: need feed names and at least one batch");
    uint32_t ne = 0;
    for (gn_id id = 0; id < g->n_nodes; id++) ne += gn__node_live(g, id) && wants_calibration(g, id);
    if (!ne)
        return gn__fail(&g->err, GN_ERR_ARG,
                        "calibrate: the graph has no Grapnel>EngineOp with precision_mode INT8 and use_calibration "
                        "(segment with {'precision_mode': 'INT8'} first)");
    cal_engine *es = calloc(ne, sizeof *es);
    if (!es) return gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    const Tensorflow__AttrValue **old = calloc(ne, sizeof *old);
    gn_status st = old ? GN_OK : gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    uint32_t k = 0;
    for (gn_id id = 0; id < g->n_nodes && st == GN_OK; id++)
        if (gn__node_live(g, id) && wants_calibration(g, id)) {
            old[k] = gn__node_attr(g, id, "calibration_data");
            st = cal_init(g, &es[k++], id, feed_names, n_feeds);
            /* the engines being calibrated run their native segments meanwhile */
            if (st == GN_OK) st = set_table(g, id, "");
        }
    /* an engine whose inputs cannot be fetched (inside a v1 loop frame) is left
     * uncalibrated: tried alone on the first batch */
    gn_session *sess = NULL;
    if (st == GN_OK) {
        st = gn_session_new(g, NULL, &sess);
        if (st != GN_OK)
            st = gn__fail(&g->err, st, "calibrate: %s", sess ? gn_session_errmsg(sess) : "out of memory");
    }
    for (uint32_t i = 0; st == GN_OK && i < k; i++) {
        const char **one = calloc(es[i].n_in + 1, sizeof *one);
        gn_tensor *vals = calloc(es[i].n_in + 1, sizeof *vals);
        uint32_t n1 = 0;
        for (uint32_t j = 0; one && j < es[i].n_in; j++)
            if (es[i].in_feed[j] < 0) one[n1++] = es[i].in_name[j];
        if (!one || !vals) st = gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
        else if (n1 && gn_session_run(sess, feed_names, batches, n_feeds, one, vals, n1) != GN_OK) {
            const char *m = gn_session_errmsg(sess);
            es[i].skip = malloc(strlen(m) + 1);
            if (!es[i].skip) st = gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
            else memcpy(es[i].skip, m, strlen(m) + 1);
        }
        for (uint32_t j = 0; vals && j < n1; j++) gn_tensor_free(&vals[j]);
        free(one);
        free(vals);
    }
    /* the outer tensors to fetch: engine inputs that are not feeds */
    uint32_t nf = 0;
    for (uint32_t i = 0; i < k; i++) nf += es[i].n_in;
    const char **fetch = calloc(nf + 1, sizeof *fetch);
    gn_tensor *got = calloc(nf + 1, sizeof *got);
    gn_tensor *ins = NULL;
    uint32_t n_fetch = 0, max_in = 0;
    if (st == GN_OK && (!fetch || !got)) st = gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    for (uint32_t i = 0; st == GN_OK && i < k; i++) {
        if (es[i].skip) continue;
        if (es[i].n_in > max_in) max_in = es[i].n_in;
        for (uint32_t j = 0; j < es[i].n_in; j++) {
            if (es[i].in_feed[j] >= 0) continue;
            uint32_t f = 0;
            while (f < n_fetch && strcmp(fetch[f], es[i].in_name[j])) f++;
            if (f == n_fetch) fetch[n_fetch++] = es[i].in_name[j];
            es[i].in_fetch[j] = f;
        }
    }
    if (st == GN_OK && !(ins = calloc(max_in + 1, sizeof *ins))) st = gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    for (size_t bt = 0; st == GN_OK && bt < n_batches; bt++) {
        const gn_tensor *feeds = batches + bt * n_feeds;
        if (n_fetch) {
            st = gn_session_run(sess, feed_names, feeds, n_feeds, fetch, got, n_fetch);
            if (st != GN_OK)
                st = gn__fail(&g->err, st, "calibrate: batch %zu: %s", bt, gn_session_errmsg(sess));
        }
        for (uint32_t i = 0; st == GN_OK && i < k; i++) {
            if (es[i].skip) continue;
            for (uint32_t j = 0; j < es[i].n_in; j++)
                ins[j] = es[i].in_feed[j] >= 0 ? feeds[es[i].in_feed[j]] : got[es[i].in_fetch[j]];
            st = cal_batch(g, &es[i], ins);
            if (st != GN_OK) gn__err_prefix(&g->err, "batch %zu", bt);
        }
        for (uint32_t f = 0; f < n_fetch; f++) gn_tensor_free(&got[f]);
    }
    gn_session_free(sess);
    /* the tables */
    gn__buf rep;
    gn__buf_init(&rep);
    for (uint32_t i = 0; st == GN_OK && i < k; i++) {
        if (es[i].skip) {
            gn__buf_printf(&rep, "engine %s: not calibrated (it runs its native segment): %s\n",
                           gn__node_name(g, es[i].node), es[i].skip);
            continue;
        }
        gn__buf tb;
        gn__buf_init(&tb);
        gn__buf_printf(&tb, "%s\n# calibration: max |x| over %zu batch(es)\n", GN__CALIB_MAGIC, n_batches);
        for (uint32_t j = 0; j < es[i].n_in; j++) gn__buf_printf(&tb, "GrapnelInputPH_%u:0 %.9g\n", j, (double)es[i].amax[j]);
        for (uint32_t j = 0; j < es[i].n_t; j++)
            gn__buf_printf(&tb, "%s %.9g\n", es[i].t_name[j], (double)es[i].amax[es[i].n_in + j]);
        char *text = gn__buf_take(&tb);
        gn__buf_free(&tb);
        st = text ? set_table(g, es[i].node, text) : gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
        free(text);
        gn__buf_printf(&rep, "engine %s: %u tensor range(s) over %zu batch(es)\n", gn__node_name(g, es[i].node),
                       es[i].n_in + es[i].n_t, n_batches);
    }
    if (st == GN_OK && report) {
        *report = gn__buf_take(&rep);
        if (!*report) st = gn__fail(&g->err, GN_ERR_NOMEM, "calibrate: out of memory");
    }
    gn__buf_free(&rep);
    /* a failed calibration leaves the tables as they were (a skipped engine's too) */
    for (uint32_t i = 0; old && i < k; i++)
        if (old[i] && (st != GN_OK || es[i].skip)) (void)gn__node_set_attr(g, es[i].node, "calibration_data", old[i]);
    free(old);
    for (uint32_t i = 0; i < k; i++) cal_free(&es[i]);
    free(es);
    free(fetch);
    free(got);
    free(ins);
    return st;
}
