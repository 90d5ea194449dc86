/* The HTML report (include/grapnel/report_html.h, docs/html_report.md).
 *
 * Writes one page: the viewer's CSS and JavaScript and the layout library
 * (embedded at build time from src/report_html/, see assets.h), and the data
 * as one JSON document in a <script type="application/json"> element:
 *
 *   {"kind": "optimize"|"segment"|"bisect", "title": ..., "bisect_pass": ...,
 *    "before": GRAPH, "after": GRAPH|null, "report": <gn_report_to_json>|null,
 *    "segment_report": text|null}
 *   GRAPH = {"name": [...], "op": [...], "dev": [...], "in": [[...]...],
 *            "out": [...], "attr": [...], "same": [...]}
 *
 * one entry per live node in graph order. "in" lists producer indices:
 * j for output 0 of node j, [j, k] for output k, -(j + 1) for a control
 * input. "out" is "float[1,49,10]; int32[]" (empty when shapes are unknown),
 * "attr" one "key: value" line per attr, values shortened. In "after", an
 * entry whose op, device, attrs and outputs equal those of the node of the
 * same name in "before" has same[i] = that node's index there and empty op,
 * dev, out and attr (the page copies them): most nodes survive an optimize
 * unchanged, so this halves the page.
 *
 * Nothing here runs during gn_optimize: callers write the page afterwards. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/ir.h"
#include "grapnel/report_html.h"
#include "ops/shape.h"
#include "report_html/assets.h"

void gn_html_params_init(gn_html_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
}

/* JSON string for a <script> element: '<' is written \u003c so that no
 * "</script>" can end the element early; control bytes are escaped. At most
 * max bytes of s are written (0: all), cut at a UTF-8 boundary. */
static void put_str_n(gn__buf *b, const char *s, size_t n, size_t max)
{
    if (max && n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    gn__buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            gn__buf_putc(b, '\\');
            gn__buf_putc(b, (char)c);
        } else if (c == '\n') {
            gn__buf_puts(b, "\\n");
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
            gn__buf_printf(b, "\\u%04x", c);
        } else {
            gn__buf_putc(b, (char)c);
        }
    }
    if (max && n == max) gn__buf_puts(b, "\\u2026");
    gn__buf_putc(b, '"');
}

static void put_str(gn__buf *b, const char *s) { put_str_n(b, s ? s : "", s ? strlen(s) : 0, 0); }

/* JSON text made elsewhere (gn_report_to_json), made safe for a <script>
 * element: '<' can occur in it only inside strings, where \u003c means the
 * same. */
static void put_json_text(gn__buf *b, const char *json)
{
    for (const char *p = json; *p; p++) {
        if (*p == '<') gn__buf_puts(b, "\\u003c");
        else gn__buf_putc(b, *p);
    }
}

/* ---- attr values, shortened ------------------------------------------------------ */
enum { ATTR_VALUE_MAX = 160, LIST_SHOWN = 8 };

static void put_shape_proto(gn__buf *b, const Tensorflow__TensorShapeProto *s)
{
    if (!s || s->unknown_rank) {
        gn__buf_puts(b, "<unknown>");
        return;
    }
    gn__buf_putc(b, '[');
    for (size_t d = 0; d < s->n_dim; d++) {
        if (d) gn__buf_putc(b, ',');
        if (s->dim[d]->size < 0) gn__buf_putc(b, '?');
        else gn__buf_printf(b, "%lld", (long long)s->dim[d]->size);
    }
    gn__buf_putc(b, ']');
}

static void put_bytes_text(gn__buf *b, const ProtobufCBinaryData *s)
{
    gn__buf_putc(b, '"');
    size_t n = s->len < 64 ? s->len : 64;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s->data[i];
        if (c >= 0x20 && c < 0x7f) gn__buf_putc(b, (char)c);
        else gn__buf_printf(b, "\\x%02x", c);
    }
    if (s->len > n) gn__buf_puts(b, "...");
    gn__buf_putc(b, '"');
}

static void put_attr_value(gn__buf *b, const Tensorflow__AttrValue *v)
{
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_S: put_bytes_text(b, &v->s); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_I: gn__buf_printf(b, "%lld", (long long)v->i); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_F: gn__buf_printf(b, "%.9g", (double)v->f); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_B: gn__buf_puts(b, v->b ? "true" : "false"); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TYPE: gn__buf_puts(b, gn_dtype_name((int32_t)v->type)); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE: put_shape_proto(b, v->shape); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
        gn__buf_printf(b, "tensor %s ", gn_dtype_name((int32_t)v->tensor->dtype));
        put_shape_proto(b, v->tensor->tensor_shape);
        break;
    case TENSORFLOW__ATTR_VALUE__VALUE_FUNC: gn__buf_printf(b, "func %s", v->func->name); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER: gn__buf_printf(b, "$%s", v->placeholder); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST: {
        const Tensorflow__AttrValue__ListValue *l = v->list;
        size_t n = l->n_s + l->n_i + l->n_f + l->n_b + l->n_type + l->n_shape + l->n_tensor + l->n_func;
        gn__buf_putc(b, '[');
        size_t shown = 0;
        for (size_t i = 0; i < l->n_s && shown < LIST_SHOWN; i++, shown++) {
            if (shown) gn__buf_puts(b, ", ");
            put_bytes_text(b, &l->s[i]);
        }
        for (size_t i = 0; i < l->n_i && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%s%lld", shown ? ", " : "", (long long)l->i[i]);
        for (size_t i = 0; i < l->n_f && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%s%.9g", shown ? ", " : "", (double)l->f[i]);
        for (size_t i = 0; i < l->n_b && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%s%s", shown ? ", " : "", l->b[i] ? "true" : "false");
        for (size_t i = 0; i < l->n_type && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%s%s", shown ? ", " : "", gn_dtype_name((int32_t)l->type[i]));
        for (size_t i = 0; i < l->n_shape && shown < LIST_SHOWN; i++, shown++) {
            if (shown) gn__buf_puts(b, ", ");
            put_shape_proto(b, l->shape[i]);
        }
        for (size_t i = 0; i < l->n_tensor && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%stensor %s", shown ? ", " : "", gn_dtype_name((int32_t)l->tensor[i]->dtype));
        for (size_t i = 0; i < l->n_func && shown < LIST_SHOWN; i++, shown++)
            gn__buf_printf(b, "%sfunc %s", shown ? ", " : "", l->func[i]->name);
        if (n > shown) gn__buf_printf(b, ", ... (%zu)", n);
        gn__buf_putc(b, ']');
        break;
    }
    default: gn__buf_puts(b, "?"); break;
    }
}

/* "key: value" lines of node id into t (reset first). */
static void node_attrs(const gn_graph *g, gn_id id, gn__buf *t, gn__buf *v)
{
    t->len = 0;
    const gn__node *n = &g->nodes[id];
    for (uint32_t k = 0; k < n->n_attr; k++) {
        v->len = 0;
        put_attr_value(v, n->attr[k].value);
        gn__buf_printf(t, "%s%s: ", k ? "\n" : "", gn__str(g, n->attr[k].key));
        size_t len = v->len < ATTR_VALUE_MAX ? v->len : ATTR_VALUE_MAX;
        gn__buf_append(t, v->data, len);
        if (len < v->len) gn__buf_puts(t, "...");
    }
    gn__buf_putc(t, '\0');
    t->len--;
}

/* "float[1,49,10]; int32[]" for node id into t (reset first); empty when
 * shapes are unknown. */
static void node_outputs(const gn_graph *g, gn_id id, gn__buf *t)
{
    t->len = 0;
    uint32_t n_out = gn__graph_shapes(g) ? gn__shape_num_outputs(g, id) : 0;
    for (uint32_t k = 0; k < n_out; k++) {
        const gn__tinfo *ti = gn__shape_of(g, id, k);
        if (!ti) break;
        char sb[256];
        gn__buf_printf(t, "%s%s%s", k ? "; " : "", gn_dtype_name(ti->dtype), gn__shape_str(&ti->shape, sb, sizeof sb));
    }
    gn__buf_putc(t, '\0');
    t->len--;
}

/* ---- graphs --------------------------------------------------------------------- */
typedef struct graph_dump {
    gn_graph *g;
    uint32_t n;          /* live nodes */
    gn_id *ids;          /* live index -> id */
    uint32_t *index;     /* id -> live index (UINT32_MAX: dead) */
} graph_dump;

static gn_status dump_init(graph_dump *d, gn_graph *g)
{
    memset(d, 0, sizeof *d);
    d->g = g;
    d->ids = malloc(((size_t)g->n_nodes + 1) * sizeof *d->ids);
    d->index = malloc(((size_t)g->n_nodes + 1) * sizeof *d->index);
    if (!d->ids || !d->index) return GN_ERR_NOMEM;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        d->index[i] = UINT32_MAX;
        if (!gn__node_live(g, i)) continue;
        d->index[i] = d->n;
        d->ids[d->n++] = i;
    }
    /* shapes for the panel; a graph they cannot be inferred for is drawn without */
    if (gn__graph_infer_shapes(g) != GN_OK) gn__attachment_drop(&g->shapes);
    gn__err_clear(&g->err);
    return GN_OK;
}

static void dump_free(graph_dump *d)
{
    free(d->ids);
    free(d->index);
}

/* Does after's node ia describe the same node as before's node ib (op, device,
 * attrs, outputs)? Compared through the strings the page would show. */
static bool same_node(const graph_dump *a, gn_id ia, const graph_dump *bd, gn_id ib, gn__buf *t1, gn__buf *t2,
                      gn__buf *v)
{
    const gn_graph *ga = a->g, *gb = bd->g;
    if (strcmp(gn__node_op(ga, ia), gn__node_op(gb, ib)) != 0) return false;
    if (strcmp(gn__str(ga, ga->nodes[ia].device), gn__str(gb, gb->nodes[ib].device)) != 0) return false;
    node_outputs(ga, ia, t1);
    node_outputs(gb, ib, t2);
    if (t1->len != t2->len || memcmp(t1->data, t2->data, t1->len) != 0) return false;
    node_attrs(ga, ia, t1, v);
    node_attrs(gb, ib, t2, v);
    return t1->len == t2->len && memcmp(t1->data, t2->data, t1->len) == 0;
}

/* One GRAPH object (see the top of the file); ref is the "before" dump when
 * d is "after" (entries equal to a before node are written as references). */
static void put_graph(gn__buf *b, const graph_dump *d, const graph_dump *ref)
{
    const gn_graph *g = d->g;
    gn__buf t, t2, v;
    gn__buf_init(&t);
    gn__buf_init(&t2);
    gn__buf_init(&v);
    uint32_t *same = NULL;
    if (ref && d->n) {
        same = malloc((size_t)d->n * sizeof *same);
        if (!same) {
            b->oom = true;
            return;
        }
        for (uint32_t i = 0; i < d->n; i++) {
            gn_id id = d->ids[i];
            gn_id rid = gn__graph_find(ref->g, gn__node_name(g, id));
            same[i] = rid != GN_NONE && ref->index[rid] != UINT32_MAX && same_node(d, id, ref, rid, &t, &t2, &v)
                          ? ref->index[rid]
                          : UINT32_MAX;
        }
    }
    gn__buf_puts(b, "{\"name\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        put_str(b, gn__node_name(g, d->ids[i]));
    }
    gn__buf_puts(b, "],\n\"op\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        put_str(b, same && same[i] != UINT32_MAX ? "" : gn__node_op(g, d->ids[i]));
    }
    gn__buf_puts(b, "],\n\"dev\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        put_str(b, same && same[i] != UINT32_MAX ? "" : gn__str(g, g->nodes[d->ids[i]].device));
    }
    gn__buf_puts(b, "],\n\"in\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        const gn__node *n = &g->nodes[d->ids[i]];
        gn__buf_puts(b, i ? ",[" : "[");
        uint32_t k = 0;
        for (uint32_t j = 0; j < n->n_in; j++) {
            uint32_t src = n->in[j].node < g->n_nodes ? d->index[n->in[j].node] : UINT32_MAX;
            if (src == UINT32_MAX) continue;
            if (k++) gn__buf_putc(b, ',');
            if (n->in[j].index) gn__buf_printf(b, "[%u,%u]", src, n->in[j].index);
            else gn__buf_printf(b, "%u", src);
        }
        for (uint32_t j = 0; j < n->n_ctrl; j++) {
            uint32_t src = n->ctrl[j] < g->n_nodes ? d->index[n->ctrl[j]] : UINT32_MAX;
            if (src == UINT32_MAX) continue;
            if (k++) gn__buf_putc(b, ',');
            gn__buf_printf(b, "%lld", -(long long)src - 1);
        }
        gn__buf_putc(b, ']');
    }
    gn__buf_puts(b, "],\n\"out\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        if (same && same[i] != UINT32_MAX) {
            gn__buf_puts(b, "\"\"");
            continue;
        }
        node_outputs(g, d->ids[i], &t);
        put_str_n(b, t.data ? t.data : "", t.len, 0);
    }
    gn__buf_puts(b, "],\n\"attr\": [");
    for (uint32_t i = 0; i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        if (same && same[i] != UINT32_MAX) {
            gn__buf_puts(b, "\"\"");
            continue;
        }
        node_attrs(g, d->ids[i], &t, &v);
        put_str_n(b, t.data ? t.data : "", t.len, 0);
    }
    gn__buf_puts(b, "],\n\"same\": [");
    for (uint32_t i = 0; same && i < d->n; i++) {
        if (i) gn__buf_putc(b, ',');
        if (same[i] == UINT32_MAX) gn__buf_puts(b, "-1");
        else gn__buf_printf(b, "%u", same[i]);
    }
    gn__buf_puts(b, "]}");
    if (t.oom || t2.oom || v.oom) b->oom = true;
    free(same);
    gn__buf_free(&t);
    gn__buf_free(&t2);
    gn__buf_free(&v);
}

static const char *kind_name(int32_t kind)
{
    switch (kind) {
    case GN_HTML_SEGMENT: return "segment";
    case GN_HTML_BISECT: return "bisect";
    default: return "optimize";
    }
}

static void put_html_text(gn__buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': gn__buf_puts(b, "&lt;"); break;
        case '>': gn__buf_puts(b, "&gt;"); break;
        case '&': gn__buf_puts(b, "&amp;"); break;
        case '"': gn__buf_puts(b, "&quot;"); break;
        default: gn__buf_putc(b, *s); break;
        }
    }
}

static gn_status fail(char *err, size_t errlen, gn_status s, const char *fmt, const char *a, const char *b)
{
    if (err && errlen) snprintf(err, errlen, fmt, a, b);
    return s;
}

gn_status gn_report_write_html(gn_graph *before, gn_graph *after, const gn_html_params *p, const char *path,
                               char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!before || !path) return fail(err, errlen, GN_ERR_ARG, "%s%s", "the HTML report needs a graph and a path", "");
    gn_html_params defaults;
    gn_html_params_init(&defaults);
    if (!p) p = &defaults;
    graph_dump db, da;
    memset(&da, 0, sizeof da);
    gn_status s = dump_init(&db, before);
    if (s == GN_OK && after) s = dump_init(&da, after);
    if (s != GN_OK) {
        dump_free(&db);
        dump_free(&da);
        return fail(err, errlen, s, "%s%s", "out of memory writing the HTML report", "");
    }
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>grapnel ");
    gn__buf_puts(&b, kind_name(p->kind));
    gn__buf_puts(&b, " report");
    if (p->title) {
        gn__buf_puts(&b, ": ");
        put_html_text(&b, p->title);
    }
    gn__buf_puts(&b, "</title>\n<style>\n");
    gn__buf_append(&b, gn__html_viewer_css, gn__html_viewer_css_len);
    gn__buf_puts(&b, "</style></head>\n<body>\n");
    gn__buf_append(&b, gn__html_viewer_html, gn__html_viewer_html_len);
    gn__buf_puts(&b, "\n<script type=\"application/json\" id=\"gn-data\">{\"kind\": ");
    put_str(&b, kind_name(p->kind));
    gn__buf_puts(&b, ", \"title\": ");
    put_str(&b, p->title ? p->title : "");
    gn__buf_puts(&b, ", \"bisect_pass\": ");
    if (p->kind == GN_HTML_BISECT && p->bisect_pass) put_str(&b, p->bisect_pass);
    else gn__buf_puts(&b, "null");
    gn__buf_puts(&b, ",\n\"segment_report\": ");
    if (p->segment_report) put_str(&b, p->segment_report);
    else gn__buf_puts(&b, "null");
    gn__buf_puts(&b, ",\n\"report\": ");
    char *json = NULL;
    if (p->report && gn_report_to_json(p->report, &json) == GN_OK && json) put_json_text(&b, json);
    else gn__buf_puts(&b, "null");
    gn_free(json);
    gn__buf_puts(&b, ",\n\"before\": ");
    put_graph(&b, &db, NULL);
    gn__buf_puts(&b, ",\n\"after\": ");
    if (after) put_graph(&b, &da, &db);
    else gn__buf_puts(&b, "null");
    gn__buf_puts(&b, "}</script>\n<script>\n");
    gn__buf_append(&b, gn__html_dagre_js, gn__html_dagre_js_len);
    gn__buf_puts(&b, "\n</script>\n<script>\n");
    gn__buf_append(&b, gn__html_viewer_js, gn__html_viewer_js_len);
    gn__buf_puts(&b, "\n</script>\n</body></html>\n");
    dump_free(&db);
    dump_free(&da);
    if (b.oom) {
        gn__buf_free(&b);
        return fail(err, errlen, GN_ERR_NOMEM, "%s%s", "out of memory writing the HTML report", "");
    }
    /* atomically: a temporary file beside path, renamed at the end */
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp) {
        gn__buf_free(&b);
        return fail(err, errlen, GN_ERR_NOMEM, "%s%s", "out of memory writing the HTML report", "");
    }
    snprintf(tmp, pl + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd >= 0) (void)fchmod(fd, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    bool ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    int e = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    } else if (!f && fd >= 0) {
        close(fd);
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok && fd >= 0) unlink(tmp);
    free(tmp);
    gn__buf_free(&b);
    if (!ok) return fail(err, errlen, GN_ERR_IO, "%s: %s", path, strerror(e));
    return GN_OK;
}
