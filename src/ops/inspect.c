/* Human-readable summaries of a graph: `grapnel inspect` and `grapnel dot`,
 * and the public shape accessors. */
#include <stdio.h>
#include <stdlib.h>

#include "graph/ir.h"
#include "grapnel/inspect.h"
#include "opdef/registry.h"
#include "ops/shape.h"

/* ---- shapes (public) -------------------------------------------------------------- */
gn_status gn_graph_infer_shapes(gn_graph *g)
{
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    return gn__graph_infer_shapes(g);
}

int32_t gn_graph_node_output_count(const gn_graph *g, size_t i)
{
    if (!g || i >= g->n_nodes) return -1;
    const gn__shape_table *t = gn__graph_shapes(g);
    if (t && i < t->n_nodes) return (int32_t)t->n_out[i];
    return gn__node_num_outputs(g, (gn_id)i);
}

int32_t gn_graph_node_output_dtype(const gn_graph *g, size_t i, int32_t k)
{
    if (!g || i >= g->n_nodes || k < 0) return 0;
    const gn__tinfo *t = gn__shape_of(g, (gn_id)i, (uint32_t)k);
    return t ? t->dtype : 0;
}

int32_t gn_graph_node_output_shape(const gn_graph *g, size_t i, int32_t k, int64_t *dims, int32_t maxdims)
{
    if (!g || i >= g->n_nodes || k < 0) return -1;
    const gn__tinfo *t = gn__shape_of(g, (gn_id)i, (uint32_t)k);
    if (!t || t->shape.rank < 0) return -1;
    for (int32_t d = 0; d < t->shape.rank && d < maxdims; d++) dims[d] = t->shape.dims[d];
    return t->shape.rank;
}

/* ---- helpers ------------------------------------------------------------------------ */
static void put_shape(gn__buf *b, const gn__shape *s)
{
    if (s->rank < 0) {
        gn__buf_puts(b, "<unknown>");
        return;
    }
    gn__buf_putc(b, '[');
    for (int32_t d = 0; d < s->rank; d++) {
        if (d) gn__buf_putc(b, ',');
        if (s->dims[d] < 0) gn__buf_putc(b, '?');
        else gn__buf_printf(b, "%lld", (long long)s->dims[d]);
    }
    gn__buf_putc(b, ']');
}

static bool is_graph_input(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    return strcmp(op, "Placeholder") == 0 || strcmp(op, "PlaceholderV2") == 0 ||
           strcmp(op, "PlaceholderWithDefault") == 0 || (g->nodes[id].flags & GN__NODE_FN_ARG) ||
           strcmp(op, "_Arg") == 0;
}

/* A graph output: a node nothing consumes by a data edge (NoOps, function
 * returns, inputs and nodes without outputs aside); with anchors false, not
 * by a control edge either: a node only control edges consume is an anchor
 * (a frozen ReadVariableOp's Identity, a TF2 loop's loop_body_control), not a
 * result. The outputs are the nodes of the strict rule, or of the other when
 * it finds none, as `grapnel run` picks its default fetches. */
static bool is_graph_output_rule(const gn_graph *g, gn_id id, bool anchors)
{
    const gn__node *n = &g->nodes[id];
    if (n->n_use || (!anchors && n->n_cuse) || is_graph_input(g, id)) return false;
    const char *op = gn__node_op(g, id);
    if (strcmp(op, "NoOp") == 0 || (n->flags & GN__NODE_FN_RET)) return false;
    int32_t no = gn__node_num_outputs(g, id);
    return no != 0;
}

typedef struct hist {
    uint32_t key;
    uint32_t count;
} hist;

static int cmp_hist(const void *a, const void *b)
{
    const hist *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static void hist_add(hist **h, uint32_t *n, uint32_t *cap, uint32_t key)
{
    for (uint32_t i = 0; i < *n; i++)
        if ((*h)[i].key == key) {
            (*h)[i].count++;
            return;
        }
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 32;
        hist *nh = realloc(*h, nc * sizeof *nh);
        if (!nh) return;
        *h = nh;
        *cap = nc;
    }
    (*h)[(*n)++] = (hist){key, 1};
}

static void sort_hist_by_name(const gn_graph *g, hist *h, uint32_t n)
{
    /* stable order for equal counts: by name (insertion sort on ties after qsort) */
    qsort(h, n, sizeof *h, cmp_hist);
    for (uint32_t i = 1; i < n; i++) {
        hist x = h[i];
        uint32_t j = i;
        while (j > 0 && h[j - 1].count == x.count && strcmp(gn__str(g, h[j - 1].key), gn__str(g, x.key)) > 0) {
            h[j] = h[j - 1];
            j--;
        }
        h[j] = x;
    }
}

static void summarize(const gn_graph *g, gn__buf *b, const char *indent)
{
    hist *ops = NULL;
    uint32_t nops = 0, capops = 0;
    uint32_t dtcount[256] = {0};
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) continue;
        hist_add(&ops, &nops, &capops, n->op);
        for (uint32_t k = 0; k < n->n_attr; k++) {
            const Tensorflow__AttrValue *v = n->attr[k].value;
            if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE && v->type >= 0 && v->type < 256) {
                dtcount[v->type]++;
            } else if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list) {
                for (size_t t = 0; t < v->list->n_type; t++)
                    if (v->list->type[t] >= 0 && v->list->type[t] < 256) dtcount[v->list->type[t]]++;
            }
        }
    }
    sort_hist_by_name(g, ops, nops);
    gn__buf_printf(b, "%sops (%u distinct):\n", indent, nops);
    for (uint32_t i = 0; i < nops; i++)
        gn__buf_printf(b, "%s  %-32s %u\n", indent, gn__str(g, ops[i].key), ops[i].count);
    free(ops);
    gn__buf_printf(b, "%sdtypes (attr uses):", indent);
    bool any = false;
    for (int t = 0; t < 256; t++)
        if (dtcount[t]) {
            gn__buf_printf(b, "%s %s=%u", any ? "," : "", gn_dtype_name(t), dtcount[t]);
            any = true;
        }
    gn__buf_puts(b, any ? "\n" : " none\n");
}

static void put_node_io(const gn_graph *g, gn__buf *b, gn_id id, bool shapes)
{
    const gn__node *n = &g->nodes[id];
    const char *name = gn__str(g, n->name);
    if (n->flags & GN__NODE_FN_RET) name += 8;
    gn__buf_printf(b, "  %s (%s", name, gn__str(g, n->op));
    int dt;
    if (gn__attr_get_type(g, id, "dtype", &dt) || gn__attr_get_type(g, id, "T", &dt))
        gn__buf_printf(b, ", %s", gn_dtype_name(dt));
    const Tensorflow__AttrValue *sh = gn__node_attr(g, id, "shape");
    if (sh && sh->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE && sh->shape) {
        gn__buf_puts(b, ", ");
        if (sh->shape->unknown_rank) gn__buf_puts(b, "<unknown>");
        else {
            gn__buf_putc(b, '[');
            for (size_t d = 0; d < sh->shape->n_dim; d++) {
                if (d) gn__buf_putc(b, ',');
                if (sh->shape->dim[d]->size < 0) gn__buf_putc(b, '?');
                else gn__buf_printf(b, "%lld", (long long)sh->shape->dim[d]->size);
            }
            gn__buf_putc(b, ']');
        }
    } else if (shapes) {
        const gn__tinfo *t = gn__shape_of(g, id, 0);
        if (t) {
            gn__buf_puts(b, ", ");
            put_shape(b, &t->shape);
        }
    }
    gn__buf_puts(b, ")\n");
}

gn_status gn_graph_inspect(gn_graph *g, uint32_t flags, char **text)
{
    if (!g || !text) return GN_ERR_ARG;
    *text = NULL;
    gn__err_clear(&g->err);
    bool shapes = flags & GN_INSPECT_SHAPES;
    if (shapes) GN_TRY(gn__graph_infer_shapes(g));
    gn__buf b;
    gn__buf_init(&b);
    if (g->source) gn__buf_printf(&b, "model: %s\n", g->source);
    gn__buf_printf(&b, "nodes: %u\n", g->n_live);
    uint64_t edges = 0, ctrl = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].flags & GN__NODE_DEAD) continue;
        edges += g->nodes[i].n_in;
        ctrl += g->nodes[i].n_ctrl;
    }
    gn__buf_printf(&b, "edges: %llu data, %llu control\n", (unsigned long long)edges, (unsigned long long)ctrl);
    if (g->versions) {
        gn__buf_printf(&b, "versions: producer %d, min_consumer %d", g->versions->producer, g->versions->min_consumer);
        if (g->versions->n_bad_consumers) {
            gn__buf_puts(&b, ", bad_consumers");
            for (size_t i = 0; i < g->versions->n_bad_consumers; i++)
                gn__buf_printf(&b, " %d", g->versions->bad_consumers[i]);
        }
        gn__buf_putc(&b, '\n');
    } else {
        gn__buf_puts(&b, "versions: none\n");
    }
    summarize(g, &b, "");
    uint32_t nin = 0, nout = 0;
    bool anchors = false;
    for (int pass = 0; pass < 2 && nout == 0; pass++) {
        anchors = pass == 1;
        nin = 0;
        for (gn_id i = 0; i < g->n_nodes; i++) {
            if (g->nodes[i].flags & GN__NODE_DEAD) continue;
            nin += is_graph_input(g, i);
            nout += is_graph_output_rule(g, i, anchors);
        }
    }
    gn__buf_printf(&b, "inputs (%u):\n", nin);
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (!(g->nodes[i].flags & GN__NODE_DEAD) && is_graph_input(g, i)) put_node_io(g, &b, i, shapes);
    gn__buf_printf(&b, "outputs (%u):\n", nout);
    for (gn_id i = 0; i < g->n_nodes; i++)
        if (!(g->nodes[i].flags & GN__NODE_DEAD) && is_graph_output_rule(g, i, anchors)) put_node_io(g, &b, i, shapes);
    gn__buf_printf(&b, "functions (%u):\n", g->n_fns);
    for (uint32_t f = 0; f < g->n_fns; f++) {
        const gn__function *fn = &g->fns[f];
        const Tensorflow__OpDef *sig = fn->def ? fn->def->signature : NULL;
        gn__buf_printf(&b, "  %s: %zu nodes, %zu inputs, %zu outputs\n", gn__str(g, fn->name),
                       gn_graph_function_node_count(g, f), sig ? sig->n_input_arg : 0, sig ? sig->n_output_arg : 0);
    }
    if (shapes) {
        gn__buf_puts(&b, "shapes:\n");
        for (gn_id i = 0; i < g->n_nodes; i++) {
            if (g->nodes[i].flags & GN__NODE_DEAD) continue;
            gn__buf_printf(&b, "  %s (%s):", gn__node_name(g, i), gn__node_op(g, i));
            const gn__shape_table *st = gn__graph_shapes(g);
            uint32_t no = st && i < st->n_nodes ? st->n_out[i] : 0;
            if (!no) gn__buf_puts(&b, " no outputs");
            for (uint32_t k = 0; k < no; k++) {
                const gn__tinfo *t = gn__shape_of(g, i, k);
                gn__buf_printf(&b, "%s %s ", k ? "," : "", t && t->dtype ? gn_dtype_name(t->dtype) : "?");
                if (t) put_shape(&b, &t->shape);
            }
            gn__buf_putc(&b, '\n');
        }
    }
    if (b.oom) {
        gn__buf_free(&b);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    *text = gn__buf_take(&b);
    return *text ? GN_OK : gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
}

/* ---- Graphviz ----------------------------------------------------------------------- */
static void dot_quote(gn__buf *b, const char *s)
{
    gn__buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') gn__buf_putc(b, '\\');
        gn__buf_putc(b, *s);
    }
    gn__buf_putc(b, '"');
}

static void dot_graph(const gn_graph *g, gn__buf *b, const char *prefix)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        gn__buf_printf(b, "  n%s%u [label=", prefix, i);
        char label[1024];
        snprintf(label, sizeof label, "%s\\n%s", gn__str(g, n->name), gn__str(g, n->op));
        gn__buf_putc(b, '"');
        for (const char *s = label; *s; s++) {
            if (*s == '"') gn__buf_putc(b, '\\');
            gn__buf_putc(b, *s);
        }
        gn__buf_putc(b, '"');
        const char *op = gn__str(g, n->op);
        if (strcmp(op, "Const") == 0) gn__buf_puts(b, ", shape=box, style=filled, fillcolor=\"#eeeeee\"");
        else if (is_graph_input(g, i)) gn__buf_puts(b, ", shape=invhouse, style=filled, fillcolor=\"#cce5ff\"");
        gn__buf_puts(b, "];\n");
    }
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_in; k++) {
            gn__buf_printf(b, "  n%s%u -> n%s%u", prefix, n->in[k].node, prefix, i);
            if (n->in[k].index) gn__buf_printf(b, " [label=\"%u\"]", n->in[k].index);
            gn__buf_puts(b, ";\n");
        }
        for (uint32_t k = 0; k < n->n_ctrl; k++)
            gn__buf_printf(b, "  n%s%u -> n%s%u [style=dashed];\n", prefix, n->ctrl[k], prefix, i);
    }
}

gn_status gn_graph_to_dot(gn_graph *g, char **text)
{
    if (!g || !text) return GN_ERR_ARG;
    *text = NULL;
    gn__err_clear(&g->err);
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_puts(&b, "digraph ");
    dot_quote(&b, g->source ? g->source : "graph");
    gn__buf_puts(&b, " {\n  rankdir=TB;\n  node [fontsize=10];\n");
    dot_graph(g, &b, "");
    for (uint32_t f = 0; f < g->n_fns; f++) {
        if (!g->fns[f].body) continue;
        char prefix[32];
        snprintf(prefix, sizeof prefix, "f%u_", f);
        gn__buf_printf(&b, "  subgraph cluster_%u {\n  label=", f);
        dot_quote(&b, gn__str(g, g->fns[f].name));
        gn__buf_puts(&b, ";\n");
        dot_graph(g->fns[f].body, &b, prefix);
        gn__buf_puts(&b, "  }\n");
    }
    gn__buf_puts(&b, "}\n");
    if (b.oom) {
        gn__buf_free(&b);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    *text = gn__buf_take(&b);
    return *text ? GN_OK : gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
}
