/* CPU backend: compiling (graph, signature) into a program (see cpu.h). */
#include <stdio.h>
#include <stdlib.h>

#include "runtime/cpu/cpu.h"
#include "opdef/registry.h"
#include "runtime/prune.h"

static bool op_is(const char *op, const char *a, const char *b)
{
    return strcmp(op, a) == 0 || (b && strcmp(op, b) == 0);
}

static bool is_placeholder_op(const char *op)
{
    return op_is(op, "Placeholder", "PlaceholderV2");
}

static bool is_next_iteration(const gn_graph *g, gn_id id)
{
    return op_is(gn__node_op(g, id), "NextIteration", "RefNextIteration");
}

bool gn__cpu_node_supported(const gn_graph *g, gn_id id, char *why, size_t why_len)
{
    const char *op = gn__node_op(g, id);
    if (gn__kernel_for(op) || gn__graph_find_function(g, op)) return true;
    if (why && why_len) snprintf(why, why_len, "the CPU backend has no kernel for %s", op);
    return false;
}

/* ---- function library ------------------------------------------------------------------ */
void gn__cpu_lib_free(cpu_lib *lib)
{
    if (!lib) return;
    for (uint32_t i = 0; i < lib->n; i++) gn__xprog_free(lib->e[i].prog);
    free(lib->e);
    for (uint32_t i = 0; i < lib->n_ec; i++) gn__engine_cache_free(&lib->ec[i].cache);
    free(lib->ec);
    free(lib);
}

static cpu_lib_entry *lib_entry(cpu_lib *lib, const gn__function *fn, gn__err *err)
{
    for (uint32_t i = 0; i < lib->n; i++)
        if (lib->e[i].fn == fn) return &lib->e[i];
    if (lib->n == lib->cap) {
        uint32_t cap = lib->cap ? lib->cap * 2 : 8;
        cpu_lib_entry *e = realloc(lib->e, (size_t)cap * sizeof *e);
        if (!e) {
            gn__fail(err, GN_ERR_NOMEM, "out of memory");
            return NULL;
        }
        lib->e = e;
        lib->cap = cap;
    }
    cpu_lib_entry *e = &lib->e[lib->n++];
    memset(e, 0, sizeof *e);
    e->fn = fn;
    return e;
}

static gn_status compile_function(cpu_lib *lib, const gn__function *fn, xprog **out, gn__err *err)
{
    const gn_graph *top = lib->top;
    const char *fname = gn__str(top, fn->name);
    const gn_graph *body = fn->body;
    const Tensorflow__OpDef *sd = fn->def ? fn->def->signature : NULL;
    if (!body || !sd) return gn__fail(err, GN_ERR_GRAPH, "function '%s' has no body or signature", fname);
    uint32_t n_in = (uint32_t)sd->n_input_arg, n_out = (uint32_t)sd->n_output_arg;
    gn__edge *feeds = calloc(n_in + 1, sizeof *feeds);
    gn__edge *fetches = calloc(n_out + 1, sizeof *fetches);
    gn_status s = GN_OK;
    if (!feeds || !fetches) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GN_OK && i < n_in; i++) {
        gn_id a = gn__graph_find(body, sd->input_arg[i]->name);
        if (a == GN_NONE || !(gn__node_at(body, a)->flags & GN__NODE_FN_ARG))
            s = gn__fail(err, GN_ERR_GRAPH, "function '%s': no node for input argument '%s'", fname,
                         sd->input_arg[i]->name);
        else feeds[i] = (gn__edge){a, 0};
    }
    for (uint32_t i = 0; s == GN_OK && i < n_out; i++) {
        char name[1024];
        snprintf(name, sizeof name, "_retval:%s", sd->output_arg[i]->name);
        gn_id r = gn__graph_find(body, name);
        if (r == GN_NONE || gn__node_at(body, r)->n_in < 1)
            s = gn__fail(err, GN_ERR_GRAPH, "function '%s': output argument '%s' is not returned", fname,
                         sd->output_arg[i]->name);
        else fetches[i] = gn__node_at(body, r)->in[0];
    }
    if (s == GN_OK) {
        gn__engine_sig sig = {n_in, feeds, n_out, fetches, fn->n_control_ret, fn->control_ret_node};
        s = gn__xprog_compile(body, &sig, lib, out, err);
        if (s != GN_OK) gn__err_prefix(err, "function '%s'", fname);
        if (s == GN_OK) {
            (*out)->feed_dtype = calloc(n_in + 1, sizeof *(*out)->feed_dtype);
            (*out)->feed_arg = calloc(n_in + 1, sizeof *(*out)->feed_arg);
            if (!(*out)->feed_dtype || !(*out)->feed_arg) {
                gn__xprog_free(*out);
                *out = NULL;
                s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            }
            for (uint32_t i = 0; s == GN_OK && i < n_in; i++) {
                (*out)->feed_dtype[i] = (int32_t)sd->input_arg[i]->type;
                (*out)->feed_arg[i] = sd->input_arg[i]->name;
            }
        }
    }
    free(feeds);
    free(fetches);
    return s;
}

gn_status gn__xprog_function(cpu_lib *lib, const gn__function *fn, xprog **out, gn__err *err)
{
    cpu_lib_entry *e = lib_entry(lib, fn, err);
    if (!e) return GN_ERR_NOMEM;
    if (e->prog) {
        *out = e->prog;
        return GN_OK;
    }
    if (e->compiling)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "function '%s' calls itself", gn__str(lib->top, fn->name));
    e->compiling = true;
    xprog *p = NULL;
    gn_status s = compile_function(lib, fn, &p, err);
    /* entries may have moved while compiling nested functions */
    e = lib_entry(lib, fn, err);
    if (!e) {
        gn__xprog_free(p);
        return GN_ERR_NOMEM;
    }
    e->compiling = false;
    if (s != GN_OK) return s;
    e->prog = p;
    *out = p;
    return GN_OK;
}

/* Compiles every function node id refers to through a func attr or its op. */
static gn_status compile_callees(const gn_graph *g, gn_id id, cpu_lib *lib, gn__err *err)
{
    const gn__node *nd = gn__node_at(g, id);
    const gn__function *f = gn__graph_find_function(g, gn__node_op(g, id));
    xprog *p;
    if (f) {
        cpu_lib_entry *e = lib_entry(lib, f, err);
        if (!e) return GN_ERR_NOMEM;
        if (!e->compiling) GN_TRY(gn__xprog_function(lib, f, &p, err));
    }
    for (uint32_t a = 0; a < nd->n_attr; a++) {
        const Tensorflow__AttrValue *v = nd->attr[a].value;
        const Tensorflow__NameAttrList *one = NULL;
        Tensorflow__NameAttrList **many = NULL;
        size_t n = 0;
        if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC) {
            one = v->func;
            many = (Tensorflow__NameAttrList **)&one;
            n = one ? 1 : 0;
        } else if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list) {
            many = v->list->func;
            n = v->list->n_func;
        }
        for (size_t k = 0; k < n; k++) {
            if (!many[k] || !many[k]->name) continue;
            const gn__function *cf = gn__graph_find_function(g, many[k]->name);
            if (!cf) {
                return gn__fail(err, GN_ERR_GRAPH, "node '%s' (%s): attr '%s' names function '%s', which is not in the library",
                                gn__node_name(g, id), gn__node_op(g, id), gn__str(g, nd->attr[a].key), many[k]->name);
            }
            cpu_lib_entry *e = lib_entry(lib, cf, err);
            if (!e) return GN_ERR_NOMEM;
            if (!e->compiling) GN_TRY(gn__xprog_function(lib, cf, &p, err));
        }
    }
    return GN_OK;
}

/* ---- the program ------------------------------------------------------------------------- */
void gn__xprog_free(xprog *p)
{
    if (!p) return;
    for (uint32_t i = 0; i < p->n_frames; i++) {
        free(p->frames[i].pending_init);
        free(p->frames[i].name);
    }
    free(p->frames);
    free(p->nodes);
    free(p->edges);
    free(p->feed_node);
    free(p->fetch_node);
    free(p->fetch_edge);
    free(p->feed_dtype);
    free((void *)p->feed_arg);
    free(p->roots);
    free(p);
}

static const char *tensor_name(const gn_graph *g, gn__edge e, char *buf, size_t n)
{
    if (e.index) snprintf(buf, n, "%s:%u", gn__node_name(g, e.node), e.index);
    else snprintf(buf, n, "%s", gn__node_name(g, e.node));
    return buf;
}

static const char *shape_attr_str(const gn_graph *g, gn_id id, char *buf, size_t n)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "shape");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE || !v->shape || v->shape->unknown_rank) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    size_t o = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < v->shape->n_dim && o < n; i++) {
        int64_t d = v->shape->dim[i]->size;
        if (d < 0) o += (size_t)snprintf(buf + o, n - o, "%s?", i ? "," : "");
        else o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)d);
    }
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

typedef struct cbuild {
    const gn_graph *g;
    const gn__engine_sig *sig;
    const uint8_t *has_feed;
    uint32_t *map;        /* graph id -> program node, UINT32_MAX when not kept */
    xprog *p;
    gn__err *err;
} cbuild;

static uint32_t src_of_data(const cbuild *b, gn__edge e, uint32_t *src_out)
{
    int32_t f = gn__sig_feed_index(b->sig, b->has_feed, e);
    if (f >= 0) {
        *src_out = 0;
        return b->p->feed_node[f];
    }
    *src_out = e.index;
    return b->map[e.node];
}

static uint32_t src_of_ctrl(const cbuild *b, gn_id c)
{
    int32_t f = gn__sig_control_feed(b->g, b->sig, b->has_feed, c);
    return f >= 0 ? b->p->feed_node[f] : b->map[c];
}

/* Topological order of the kept nodes (edges out of NextIteration ignored). */
static gn_status topo_order(const gn_graph *g, const gn__engine_sig *sig, const uint8_t *has_feed, const uint8_t *keep,
                            uint32_t n_keep, gn_id *order, gn__err *err)
{
    uint32_t N = g->n_nodes;
    uint32_t *indeg = calloc(N ? N : 1, sizeof *indeg);
    if (!indeg) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    for (gn_id id = 0; id < N; id++) {
        if (!keep[id]) continue;
        const gn__node *nd = gn__node_at(g, id);
        for (uint32_t k = 0; k < nd->n_in; k++) {
            gn__edge e = nd->in[k];
            if (gn__sig_feed_index(sig, has_feed, e) >= 0 || is_next_iteration(g, e.node)) continue;
            indeg[id]++;
        }
        for (uint32_t k = 0; k < nd->n_ctrl; k++) {
            gn_id c = nd->ctrl[k];
            if (gn__sig_control_feed(g, sig, has_feed, c) >= 0 || is_next_iteration(g, c)) continue;
            indeg[id]++;
        }
    }
    uint32_t head = 0, tail = 0;
    for (gn_id id = 0; id < N; id++)
        if (keep[id] && indeg[id] == 0) order[tail++] = id;
    while (head < tail) {
        gn_id id = order[head++];
        if (is_next_iteration(g, id)) continue;
        const gn__node *nd = gn__node_at(g, id);
        for (uint32_t u = 0; u < nd->n_use; u++) {
            gn__use use = nd->use[u];
            if (!keep[use.node]) continue;
            const gn__node *cn = gn__node_at(g, use.node);
            if (use.slot >= cn->n_in || gn__sig_feed_index(sig, has_feed, cn->in[use.slot]) >= 0) continue;
            if (--indeg[use.node] == 0) order[tail++] = use.node;
        }
        if (gn__sig_control_feed(g, sig, has_feed, id) >= 0) continue;
        for (uint32_t u = 0; u < nd->n_cuse; u++) {
            gn_id c = nd->cuse[u];
            if (!keep[c]) continue;
            if (--indeg[c] == 0) order[tail++] = c;
        }
    }
    gn_status s = GN_OK;
    if (tail != n_keep) {
        gn_id bad = GN_NONE;
        for (gn_id id = 0; id < N && bad == GN_NONE; id++)
            if (keep[id] && indeg[id]) bad = id;
        s = gn__fail(err, GN_ERR_GRAPH, "node '%s' (%s) is on a cycle that is not a while loop",
                     bad == GN_NONE ? "?" : gn__node_name(g, bad), bad == GN_NONE ? "?" : gn__node_op(g, bad));
    }
    free(indeg);
    return s;
}

static gn_status resolve_kernel(cbuild *b, xnode *x, cpu_lib *lib)
{
    const gn_graph *g = b->g;
    gn_id id = x->gid;
    const char *op = gn__node_op(g, id);
    if (gn__node_at(g, id)->flags & GN__NODE_FN_ARG)
        return gn__fail(b->err, GN_ERR_ARG, "node '%s' (%s): function argument is not fed", gn__node_name(g, id), op);
    if (is_placeholder_op(op) || strcmp(op, "_Arg") == 0) {
        char sh[256];
        int dt = 0;
        if (!gn__attr_get_type(g, id, "dtype", &dt)) gn__attr_get_type(g, id, "T", &dt);
        return gn__fail(b->err, GN_ERR_ARG, "node '%s' (%s): no value fed for this %s (%s, shape %s)",
                        gn__node_name(g, id), op, op[0] == '_' ? "argument" : "placeholder", gn__dtype_name(dt),
                        shape_attr_str(g, id, sh, sizeof sh));
    }
    x->fn = gn__kernel_for(op);
    if (!x->fn && gn__graph_find_function(g, op)) x->fn = gn__kernel_call_op;
    if (!x->fn)
        return gn__fail(b->err, GN_ERR_UNSUPPORTED, "node '%s' (%s): the CPU backend has no kernel for %s",
                        gn__node_name(g, id), op, op);
    if (op_is(op, "Merge", "RefMerge")) x->flags |= XN_MERGE | XN_MAY_BE_DEAD;
    else if (op_is(op, "Switch", "RefSwitch") || op_is(op, "_SwitchN", NULL)) x->flags |= XN_MAY_BE_DEAD;
    else if (op_is(op, "Enter", "RefEnter")) {
        x->flags |= XN_ENTER;
        bool c = false;
        if (gn__attr_get_bool(g, id, "is_constant", &c) && c) x->flags |= XN_CONST_ENTER;
    } else if (op_is(op, "Exit", "RefExit")) x->flags |= XN_EXIT;
    else if (op_is(op, "NextIteration", "RefNextIteration")) x->flags |= XN_NEXT;
    else if (op_is(op, "ControlTrigger", NULL)) x->flags |= XN_CONTROL_TRIGGER;
    else if (op_is(op, "_ScopedAllocator", NULL)) x->flags |= XN_SA_ALLOC;
    else if (op_is(op, "_ScopedAllocatorConcat", NULL)) x->flags |= XN_SA_CONCAT;
    if (gn__node_attr(g, id, "_scoped_allocator")) x->flags |= XN_SA_PRODUCER;
    (void)lib;
    return GN_OK;
}

static uint32_t frame_child(xprog *p, uint32_t parent, const char *name, size_t len, int32_t parallel, gn__err *err)
{
    for (uint32_t i = 1; i < p->n_frames; i++)
        if (p->frames[i].parent == parent && strlen(p->frames[i].name) == len &&
            memcmp(p->frames[i].name, name, len) == 0)
            return i;
    xframe *f = realloc(p->frames, (size_t)(p->n_frames + 1) * sizeof *f);
    if (!f) {
        gn__fail(err, GN_ERR_NOMEM, "out of memory");
        return UINT32_MAX;
    }
    p->frames = f;
    xframe *nf = &f[p->n_frames];
    memset(nf, 0, sizeof *nf);
    nf->name = malloc(len + 1);
    if (!nf->name) {
        gn__fail(err, GN_ERR_NOMEM, "out of memory");
        return UINT32_MAX;
    }
    memcpy(nf->name, name, len);
    nf->name[len] = 0;
    nf->parent = parent;
    nf->parallel = parallel > 0 ? parallel : 10;
    return p->n_frames++;
}

static const char *frame_desc(const xprog *p, uint32_t f, char *buf, size_t n)
{
    if (f == 0) snprintf(buf, n, "the root frame");
    else snprintf(buf, n, "frame '%s'", p->frames[f].name);
    return buf;
}

/* TensorFlow's ControlFlowInfo: the frame each node runs in. */
static gn_status assign_frames(cbuild *b)
{
    xprog *p = b->p;
    const gn_graph *g = b->g;
    uint32_t *outf = malloc((size_t)p->n_nodes * sizeof *outf);
    uint8_t *done = calloc(p->n_nodes ? p->n_nodes : 1, 1);
    if (!outf || !done) {
        free(outf);
        free(done);
        return gn__fail(b->err, GN_ERR_NOMEM, "out of memory");
    }
    p->frames = calloc(1, sizeof *p->frames);
    if (!p->frames) {
        free(outf);
        free(done);
        return gn__fail(b->err, GN_ERR_NOMEM, "out of memory");
    }
    p->n_frames = 1;
    p->frames[0].name = calloc(1, 1);
    if (!p->frames[0].name) {
        free(outf);
        free(done);
        return gn__fail(b->err, GN_ERR_NOMEM, "out of memory");
    }
    p->frames[0].parallel = 1;
    /* in-edges by destination: walk every source's out-edges once, in program order */
    gn_status s = GN_OK;
    uint32_t *first_src = malloc((size_t)p->n_nodes * sizeof *first_src);
    if (!first_src) s = gn__fail(b->err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GN_OK && i < p->n_nodes; i++) first_src[i] = UINT32_MAX;
    for (uint32_t i = 0; s == GN_OK && i < p->n_nodes; i++) {
        xnode *x = &p->nodes[i];
        /* the node's frame: from the first source already placed */
        uint32_t fr = 0;
        if (first_src[i] != UINT32_MAX) fr = outf[first_src[i]];
        x->frame = fr;
        /* its outputs' frame */
        uint32_t of = fr;
        if (x->flags & XN_ENTER) {
            const char *name;
            size_t len;
            if (!gn__attr_get_string(g, x->gid, "frame_name", &name, &len)) {
                s = gn__fail(b->err, GN_ERR_GRAPH, "node '%s' (Enter): attr 'frame_name' is missing", gn__node_name(g, x->gid));
                break;
            }
            int64_t par = 10;
            gn__attr_get_int(g, x->gid, "parallel_iterations", &par);
            of = frame_child(p, fr, name, len, (int32_t)(par > INT32_MAX ? INT32_MAX : par), b->err);
            if (of == UINT32_MAX) {
                s = GN_ERR_NOMEM;
                break;
            }
            p->frames[of].n_enters++;
            x->child = of;
        } else if (x->flags & XN_EXIT) {
            if (fr == 0) {
                s = gn__fail(b->err, GN_ERR_GRAPH, "node '%s' (%s) is not inside a while loop", gn__node_name(g, x->gid),
                             gn__node_op(g, x->gid));
                break;
            }
            of = p->frames[fr].parent;
        }
        outf[i] = of;
        done[i] = 1;
        /* check and propagate to destinations */
        for (uint32_t e = x->e_begin; e < x->e_begin + x->e_count; e++) {
            uint32_t d = p->edges[e].dst;
            if (done[d]) continue;   /* a NextIteration back edge: checked below */
            if (first_src[d] == UINT32_MAX) {
                first_src[d] = i;
            } else if (outf[first_src[d]] != of) {
                char f1[300], f2[300];
                const xnode *dx = &p->nodes[d];
                const char *dn = dx->gid == GN_NONE ? "(fetch)" : gn__node_name(g, dx->gid);
                const char *dop = dx->gid == GN_NONE ? "" : gn__node_op(g, dx->gid);
                uint32_t a = first_src[d];
                s = gn__fail(b->err, GN_ERR_GRAPH, "node '%s' (%s) has inputs from different frames: '%s' in %s and '%s' in %s",
                             dn, dop,
                             p->nodes[a].gid == GN_NONE ? "(feed)" : gn__node_name(g, p->nodes[a].gid),
                             frame_desc(p, outf[a], f1, sizeof f1),
                             x->gid == GN_NONE ? "(feed)" : gn__node_name(g, x->gid), frame_desc(p, of, f2, sizeof f2));
                break;
            }
        }
        if (s != GN_OK) break;
    }
    /* back edges (NextIteration -> Merge): same frame on both ends */
    for (uint32_t i = 0; s == GN_OK && i < p->n_nodes; i++) {
        const xnode *x = &p->nodes[i];
        if (!(x->flags & XN_NEXT)) continue;
        for (uint32_t e = x->e_begin; e < x->e_begin + x->e_count; e++) {
            uint32_t d = p->edges[e].dst;
            if (p->nodes[d].frame != outf[i]) {
                char f1[300], f2[300];
                s = gn__fail(b->err, GN_ERR_GRAPH, "node '%s' (NextIteration) in %s feeds '%s' in %s",
                             gn__node_name(g, x->gid), frame_desc(p, outf[i], f1, sizeof f1),
                             gn__node_name(g, p->nodes[d].gid), frame_desc(p, p->nodes[d].frame, f2, sizeof f2));
                break;
            }
        }
    }
    free(first_src);
    free(outf);
    free(done);
    return s;
}

gn_status gn__xprog_compile(const gn_graph *g, const gn__engine_sig *sig, cpu_lib *lib, xprog **out, gn__err *err)
{
    *out = NULL;
    uint8_t *has_feed = NULL, *keep = NULL;
    uint32_t n_keep = 0;
    gn_status s = gn__runtime_compile_start(g, sig, &has_feed, &keep, &n_keep, err);
    gn_id *order = NULL;
    cbuild b = {g, sig, has_feed, NULL, NULL, err};
    xprog *p = NULL;
    uint32_t *cnt = NULL;
    if (s == GN_OK) {
        order = malloc((n_keep + 1) * sizeof *order);
        b.map = malloc((g->n_nodes + 1) * sizeof *b.map);
        p = calloc(1, sizeof *p);
        if (!order || !b.map || !p) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    if (s == GN_OK) s = topo_order(g, sig, has_feed, keep, n_keep, order, err);
    if (s == GN_OK) {
        b.p = p;
        p->g = g;
        p->lib = lib;
        p->n_feeds = sig->n_feeds;
        p->n_fetches = sig->n_fetches;
        p->n_nodes = sig->n_feeds + n_keep + sig->n_fetches;
        p->nodes = calloc(p->n_nodes + 1, sizeof *p->nodes);
        p->feed_node = calloc(sig->n_feeds + 1, sizeof *p->feed_node);
        p->fetch_node = calloc(sig->n_fetches + 1, sizeof *p->fetch_node);
        p->fetch_edge = calloc(sig->n_fetches + 1, sizeof *p->fetch_edge);
        cnt = calloc(p->n_nodes + 1, sizeof *cnt);
        if (!p->nodes || !p->feed_node || !p->fetch_node || !p->fetch_edge || !cnt)
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        else if (sig->n_fetches) memcpy(p->fetch_edge, sig->fetches, sig->n_fetches * sizeof *p->fetch_edge);
    }
    if (s == GN_OK) {
        for (uint32_t i = 0; i < g->n_nodes; i++) b.map[i] = UINT32_MAX;
        uint32_t k = 0;
        for (uint32_t i = 0; i < sig->n_feeds; i++, k++) {
            xnode *x = &p->nodes[k];
            x->gid = GN_NONE;
            x->flags = XN_FEED;
            x->n_out = 1;
            x->io = i;
            p->feed_node[i] = k;
        }
        for (uint32_t i = 0; i < n_keep; i++, k++) {
            xnode *x = &p->nodes[k];
            const gn__node *nd = gn__node_at(g, order[i]);
            x->gid = order[i];
            x->n_in = nd->n_in;
            x->n_ctrl = nd->n_ctrl;
            int32_t no = gn__node_num_outputs(g, order[i]);
            x->n_out = no > 0 ? (uint32_t)no : 0;
            b.map[order[i]] = k;
        }
        for (uint32_t i = 0; i < sig->n_fetches; i++, k++) {
            xnode *x = &p->nodes[k];
            x->gid = GN_NONE;
            x->flags = XN_FETCH;
            x->n_in = 1;
            x->io = i;
            p->fetch_node[i] = k;
        }
    }
    /* kernels: every needed node must be runnable before anything runs */
    for (uint32_t i = sig->n_feeds; s == GN_OK && i < sig->n_feeds + n_keep; i++) {
        s = resolve_kernel(&b, &p->nodes[i], lib);
        if (s == GN_OK && lib) s = compile_callees(g, p->nodes[i].gid, lib, err);
    }
    /* edges, counted then filled: per source, data edges then control edges */
    if (s == GN_OK) {
        uint32_t *ccnt = calloc(p->n_nodes + 1, sizeof *ccnt);
        if (!ccnt) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t d = 0; s == GN_OK && d < p->n_nodes; d++) {
            xnode *x = &p->nodes[d];
            uint32_t so;
            if (x->flags & XN_FETCH) {
                uint32_t src = src_of_data(&b, sig->fetches[x->io], &so);
                cnt[src]++;
                if (so + 1 > p->nodes[src].n_out) p->nodes[src].n_out = so + 1;
                continue;
            }
            if (x->gid == GN_NONE) continue;
            const gn__node *nd = gn__node_at(g, x->gid);
            for (uint32_t k = 0; k < nd->n_in; k++) {
                uint32_t src = src_of_data(&b, nd->in[k], &so);
                cnt[src]++;
                if (so + 1 > p->nodes[src].n_out) p->nodes[src].n_out = so + 1;
            }
            for (uint32_t k = 0; k < nd->n_ctrl; k++) ccnt[src_of_ctrl(&b, nd->ctrl[k])]++;
        }
        if (s == GN_OK) {
            uint32_t total = 0;
            for (uint32_t i = 0; i < p->n_nodes; i++) {
                p->nodes[i].e_begin = total;
                p->nodes[i].e_count = cnt[i] + ccnt[i];
                total += cnt[i] + ccnt[i];
                ccnt[i] = p->nodes[i].e_begin + cnt[i];   /* next control edge slot */
                cnt[i] = p->nodes[i].e_begin;             /* next data edge slot */
            }
            p->n_edges = total;
            p->edges = malloc((size_t)(total + 1) * sizeof *p->edges);
            if (!p->edges) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        }
        for (uint32_t d = 0; s == GN_OK && d < p->n_nodes; d++) {
            xnode *x = &p->nodes[d];
            uint32_t so;
            if (x->flags & XN_FETCH) {
                uint32_t src = src_of_data(&b, sig->fetches[x->io], &so);
                p->edges[cnt[src]++] = (xedge){d, 0, so};
                continue;
            }
            if (x->gid == GN_NONE) continue;
            const gn__node *nd = gn__node_at(g, x->gid);
            for (uint32_t k = 0; k < nd->n_in; k++) {
                uint32_t src = src_of_data(&b, nd->in[k], &so);
                p->edges[cnt[src]++] = (xedge){d, (int32_t)k, so};
            }
            for (uint32_t k = 0; k < nd->n_ctrl; k++) {
                uint32_t src = src_of_ctrl(&b, nd->ctrl[k]);
                p->edges[ccnt[src]++] = (xedge){d, -1, 0};
            }
        }
        free(ccnt);
    }
    if (s == GN_OK) s = assign_frames(&b);
    /* fetches must be in the root frame */
    for (uint32_t i = 0; s == GN_OK && i < sig->n_fetches; i++) {
        const xnode *x = &p->nodes[p->fetch_node[i]];
        if (x->frame != 0) {
            char tn[600];
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "fetch '%s': the tensor is inside the while loop frame '%s'",
                         tensor_name(g, sig->fetches[i], tn, sizeof tn), p->frames[x->frame].name);
        }
    }
    /* per-frame numbering, pending counts, roots */
    if (s == GN_OK) {
        p->has_loops = p->n_frames > 1;
        p->roots = malloc((p->n_nodes + 1) * sizeof *p->roots);
        if (!p->roots) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        uint32_t outs = 0;
        for (uint32_t i = 0; s == GN_OK && i < p->n_nodes; i++) {
            xnode *x = &p->nodes[i];
            xframe *f = &p->frames[x->frame];
            x->local = f->n_nodes++;
            x->in_off = f->n_slots;
            f->n_slots += x->n_in;
            x->pending_init = (x->flags & XN_MERGE) ? (int32_t)(1 + 2 * x->n_ctrl) : (int32_t)(x->n_in + x->n_ctrl);
            x->out_base = outs;
            outs += x->n_out;
            if (x->n_out > p->max_out) p->max_out = x->n_out;
            if (x->frame == 0 && x->n_in + x->n_ctrl == 0) p->roots[p->n_roots++] = i;
        }
        p->n_outputs = outs;
        for (uint32_t f = 0; s == GN_OK && f < p->n_frames; f++) {
            p->frames[f].pending_init = malloc((p->frames[f].n_nodes + 1) * sizeof(int32_t));
            if (!p->frames[f].pending_init) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        }
        for (uint32_t i = 0; s == GN_OK && i < p->n_nodes; i++) {
            const xnode *x = &p->nodes[i];
            p->frames[x->frame].pending_init[x->local] = x->pending_init;
        }
    }
    free(cnt);
    free(order);
    free(b.map);
    free(keep);
    free(has_feed);
    if (s != GN_OK) {
        gn__xprog_free(p);
        return s;
    }
    *out = p;
    return GN_OK;
}
