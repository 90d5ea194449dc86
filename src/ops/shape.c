/* Shape and dtype inference: the driver (see shape.h).
 *
 * One linear walk over a deterministic topological order per graph. For each
 * node the inputs' records are gathered into a scratch array (no per-node
 * malloc: outputs, dims and values live in the table's arena), output dtypes
 * are pre-filled from the op's output args, and the op's shape function,
 * resolved once per distinct op (cached by interned op id), fills in shapes.
 *
 * Loops (v1): NextIteration edges are ignored by the topological order, so a
 * Merge is first visited with its back-edge input pending; it takes the shape
 * of the inputs it has. Every node downstream of such a Merge is "tainted".
 * After the pass, if some Merge's back-edge input is not covered by what the
 * Merge produced, tainted nodes are inferred again with the Merge taking the
 * join of all its inputs (one relaxation pass); if that still moves, a last
 * pass widens those Merges to an unknown shape. Errors raised by tainted nodes
 * are held back until the loop state is a fixpoint, so a first visit that sees
 * only the loop's initial values never causes a spurious error.
 *
 * Function calls are inferred by running the callee's body on the caller's
 * input records, with a depth limit, a guard against recursion and a budget
 * of node visits; past those, dtypes come from the op's args and shapes from
 * the `_output_shapes` attr.
 *
 * Nothing here recurses over graph depth; the only recursion is over the
 * nesting of function calls, bounded by MAX_CALL_DEPTH. */
#include "ops/shape.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_CALL_DEPTH 8
#define MAX_SPECIALIZE_NODES 50000u
#define SPECIALIZE_BUDGET 4000000
#define MAX_OUTPUTS (1u << 20)

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

/* per node, during one inference */
enum { NF_VISITED = 1, NF_TAINT = 2, NF_WIDEN = 4, NF_HEAD = 8 };

typedef enum { K_FN, K_ARG, K_CALL, K_PCALL, K_IF, K_WHILE, K_CASE } op_kind;

#define FAST_OUTS 4
typedef struct op_ent {
    uint32_t op;               /* interned op id + 1; 0 = empty slot */
    uint8_t kind;
    bool merge;                /* Merge / RefMerge */
    bool fast;                 /* a fixed number of outputs, each of one dtype */
    uint8_t n_out;             /* when fast */
    gn__shape_fn fn;
    const gn__function *callee;
    const gn__opdef *def;      /* registry entry, or the callee's signature */
    int32_t dt[FAST_OUTS];     /* when fast: the output's fixed dtype, or 0 */
    uint32_t dt_key[FAST_OUTS];/* when fast and !dt: its type attr (interned), UINT32_MAX */
} op_ent;

/* What is known of the calls of one library function, over the call sites of
 * the graphs inferred on their own (not those of call-site inference). */
typedef struct fn_calls {
    uint32_t n_sites;
    bool external;             /* referenced otherwise, recursive, or sites disagree */
    bool from_top;             /* called from the top-level graph */
    uint32_t *deps;            /* graphs its joined arguments come from (library index; n_fns: top) */
    uint32_t n_deps;
    uint32_t n_args;
    gn__tinfo *args;           /* join over the sites (run arena) */
} fn_calls;

typedef struct infer_run {
    const gn_graph *lib;
    fn_calls *calls;           /* per library function; NULL when the library is empty */
    uint32_t *caller_first;    /* callers of function f: caller_adj[caller_first[f] .. caller_first[f+1]) */
    uint32_t *caller_adj;
    gn__arena arena;
    int64_t budget;            /* node visits left for call-site inference */
    uint32_t depth;
    const gn__function *stack[MAX_CALL_DEPTH];
    gn_id **topo;              /* per library function: its body's order, lazily */
    uint32_t *topo_n;
} infer_run;

typedef struct ginfer {
    infer_run *run;
    gn_graph *g;
    gn__shape_table *t;
    const gn__function *fn;    /* g is this function's body; NULL at the top level */
    const gn__tinfo *args;     /* the arguments' records (NULL: from the _Arg nodes' attrs) */
    uint32_t n_args;
    bool specialized;          /* a call-site inference (temporary) */

    op_ent *cache;
    uint32_t cache_cap, cache_n;
    uint32_t key_output_shapes; /* interned "_output_shapes", UINT32_MAX when absent */

    gn__tinfo *in;
    uint8_t *ready;
    uint32_t in_cap;
    uint8_t *nf;
    int32_t *maxuse;           /* highest output index consumed, per node (lazily) */
    gn_id *heads;              /* nodes visited with a pending input */
    uint32_t n_heads, cap_heads;

    gn__err nerr;              /* the current node's failure */
    gn__err deferred;          /* first failure of a tainted node in this pass */
    bool has_deferred;
    gn__err *err;              /* where failures are reported */
} ginfer;

static gn_status infer_graph(ginfer *gi, const gn_id *order, uint32_t n_order);

/* ---- helpers ------------------------------------------------------------------- */
gn_status gn__shape_fail(gn__shape_ctx *c, const char *fmt, ...)
{
    char msg[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gn__fail(c->err, GN_ERR_GRAPH, "node '%s' (%s): %s", gn__node_name(c->g, c->node),
                    gn__node_op(c->g, c->node), msg);
}

gn_status gn__shape_nomem(gn__shape_ctx *c) { return gn__fail(c->err, GN_ERR_NOMEM, "out of memory"); }

bool gn__shape_alloc(gn__arena *a, int32_t rank, gn__shape *out)
{
    out->rank = rank;
    out->dims = NULL;
    if (rank <= 0) return true;
    out->dims = gn__arena_alloc(a, (size_t)rank * sizeof *out->dims, _Alignof(int64_t));
    if (!out->dims) return false;
    for (int32_t i = 0; i < rank; i++) out->dims[i] = -1;
    return true;
}

int64_t gn__shape_num_elements(const gn__shape *s)
{
    if (s->rank < 0) return -1;
    int64_t n = 1;
    bool unknown = false;
    for (int32_t i = 0; i < s->rank; i++) {
        int64_t d = s->dims[i];
        if (d < 0) {
            unknown = true;
            continue;
        }
        if (d == 0) return 0;
        if (!unknown && n > INT64_MAX / d) return -2;
        if (!unknown) n *= d;
    }
    return unknown ? -1 : n;
}

bool gn__shape_fully_defined(const gn__shape *s)
{
    if (s->rank < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->dims[i] < 0) return false;
    return true;
}

bool gn__shape_equal(const gn__shape *a, const gn__shape *b)
{
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

bool gn__shape_join(gn__arena *arena, const gn__shape *a, const gn__shape *b, gn__shape *out)
{
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        *out = gn__shape_unknown();
        return true;
    }
    bool same = true;
    for (int32_t i = 0; i < a->rank && same; i++) same = a->dims[i] == b->dims[i];
    if (same) {
        *out = *a;
        return true;
    }
    if (!gn__shape_alloc(arena, a->rank, out)) return false;
    for (int32_t i = 0; i < a->rank; i++) out->dims[i] = a->dims[i] == b->dims[i] ? a->dims[i] : -1;
    return true;
}

bool gn__shape_from_proto(const Tensorflow__TensorShapeProto *p, gn__arena *arena, gn__shape *out)
{
    if (!p || p->unknown_rank || p->n_dim > GN__MAX_RANK) {
        *out = gn__shape_unknown();
        return true;
    }
    if (!gn__shape_alloc(arena, (int32_t)p->n_dim, out)) return false;
    for (size_t i = 0; i < p->n_dim; i++) {
        int64_t d = p->dim[i] ? p->dim[i]->size : -1;
        out->dims[i] = d < 0 ? -1 : d;
    }
    return true;
}

const char *gn__shape_str(const gn__shape *s, char *buf, size_t n)
{
    if (!n) return buf;
    if (s->rank < 0) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, n - len, "[");
    for (int32_t i = 0; i < s->rank && len < n; i++) {
        if (s->dims[i] < 0) len += (size_t)snprintf(buf + len, n - len, "%s?", i ? "," : "");
        else len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
    if (len < n) snprintf(buf + len, n - len, "]");
    return buf;
}

bool gn__value_equal(const gn__partial_value *a, const gn__partial_value *b)
{
    if (a == b) return true;
    if (!a || !b || a->n != b->n || a->shape.rank != b->shape.rank) return false;
    for (int64_t i = 0; i < a->n; i++) {
        if ((a->known[i] != 0) != (b->known[i] != 0)) return false;
        if (a->known[i] && a->v[i] != b->v[i]) return false;
    }
    return true;
}

static bool handle_equal(const gn__handle_data *a, const gn__handle_data *b)
{
    if (a == b) return true;
    if (!a || !b) return false;
    return a->dtype == b->dtype && gn__shape_equal(&a->shape, &b->shape);
}

static bool shape_copy(gn__arena *arena, gn__shape *dst, const gn__shape *src)
{
    if (!gn__shape_alloc(arena, src->rank, dst)) return false;
    for (int32_t i = 0; i < src->rank; i++) dst->dims[i] = src->dims[i];
    return true;
}

bool gn__tinfo_copy(gn__arena *arena, gn__tinfo *dst, const gn__tinfo *src)
{
    dst->dtype = src->dtype;
    dst->value = NULL;
    dst->handle = NULL;
    if (!shape_copy(arena, &dst->shape, &src->shape)) return false;
    if (src->value) {
        const gn__partial_value *v = src->value;
        gn__partial_value *nv = gn__arena_alloc(arena, sizeof *nv, _Alignof(gn__partial_value));
        if (!nv || !shape_copy(arena, &nv->shape, &v->shape)) return false;
        nv->n = v->n;
        nv->v = gn__arena_memdup(arena, v->v, (size_t)v->n * sizeof *v->v);
        nv->known = gn__arena_memdup(arena, v->known, (size_t)v->n);
        if (!nv->v || !nv->known) return false;
        dst->value = nv;
    }
    if (src->handle) {
        gn__handle_data *h = gn__arena_alloc(arena, sizeof *h, _Alignof(gn__handle_data));
        if (!h || !shape_copy(arena, &h->shape, &src->handle->shape)) return false;
        h->dtype = src->handle->dtype;
        dst->handle = h;
    }
    return true;
}

/* a covers b: joining b into a leaves a as it is */
static bool tinfo_covers(const gn__tinfo *a, const gn__tinfo *b)
{
    if (a->shape.rank >= 0) {
        if (b->shape.rank != a->shape.rank) return false;
        for (int32_t i = 0; i < a->shape.rank; i++)
            if (a->shape.dims[i] >= 0 && a->shape.dims[i] != b->shape.dims[i]) return false;
    }
    if (a->value && !gn__value_equal(a->value, b->value)) return false;
    if (a->handle && !handle_equal(a->handle, b->handle)) return false;
    return true;
}

static bool tinfo_join(gn__arena *arena, const gn__tinfo *a, const gn__tinfo *b, gn__tinfo *out)
{
    gn__tinfo r;
    r.dtype = a->dtype ? a->dtype : b->dtype;
    if (!gn__shape_join(arena, &a->shape, &b->shape, &r.shape)) return false;
    r.value = gn__value_equal(a->value, b->value) ? a->value : NULL;
    r.handle = handle_equal(a->handle, b->handle) ? a->handle : NULL;
    *out = r;
    return true;
}

/* ---- the table ---------------------------------------------------------------- */
static gn__shape_table *table_new(uint32_t n_nodes)
{
    gn__shape_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    gn__arena_init(&t->arena, n_nodes > 4096 ? (size_t)1 << 20 : 16384);
    t->n_nodes = n_nodes;
    size_t n = n_nodes ? n_nodes : 1;
    t->n_out = gn__arena_zalloc(&t->arena, n * sizeof *t->n_out, _Alignof(uint32_t));
    t->out = gn__arena_zalloc(&t->arena, n * sizeof *t->out, _Alignof(gn__tinfo *));
    if (!t->n_out || !t->out) {
        gn__arena_free(&t->arena);
        free(t);
        return NULL;
    }
    return t;
}

void gn__shape_table_free(gn__shape_table *t)
{
    if (!t) return;
    free(t->order);
    gn__arena_free(&t->arena);
    free(t);
}

bool gn__shape_table_order(const gn__shape_table *t, gn_id **order, uint32_t *n)
{
    *order = NULL;
    *n = 0;
    if (!t || !t->order) return false;
    gn_id *o = malloc((t->n_order ? t->n_order : 1) * sizeof *o);
    if (!o) return false;
    memcpy(o, t->order, (size_t)t->n_order * sizeof *o);
    *order = o;
    *n = t->n_order;
    return true;
}

static void shape_table_free_cb(void *t) { gn__shape_table_free(t); }

void gn__graph_put_shapes(gn_graph *g, gn__shape_table *t)
{
    gn__attachment_set(&g->shapes, t, shape_table_free_cb, NULL);
}

gn__shape_table *gn__graph_take_shapes(gn_graph *g)
{
    gn__shape_table *t = gn__graph_shapes(g);
    g->shapes.ptr = NULL;
    return t;
}

static bool table_current(const gn__shape_table *t)
{
    for (uint32_t i = 0; i < t->n_deps; i++)
        if (gn__graph_shapes(t->dep_graph[i]) != t->dep_table[i]) return false;
    return true;
}

const gn__tinfo *gn__shape_of(const gn_graph *g, gn_id id, uint32_t k)
{
    const gn__shape_table *t = g ? gn__graph_shapes(g) : NULL;
    if (!t) return NULL;
    if (t->n_deps && !table_current(t)) return NULL;
    if (id >= t->n_nodes || !t->out[id] || k >= t->n_out[id]) return NULL;
    return &t->out[id][k];
}

uint32_t gn__shape_num_outputs(const gn_graph *g, gn_id id)
{
    const gn__shape_table *t = g ? gn__graph_shapes(g) : NULL;
    if (!t || id >= t->n_nodes) return 0;
    if (t->n_deps && !table_current(t)) return 0;
    return t->n_out[id];
}

/* ---- op resolution, cached per interned op id ---------------------------------- */
static op_kind call_kind(const char *op)
{
    switch (op[0]) {
    case 'C': if (strcmp(op, "Case") == 0) return K_CASE; break;
    case 'I': if (strcmp(op, "If") == 0) return K_IF; break;
    case 'P': if (strcmp(op, "PartitionedCall") == 0) return K_PCALL; break;
    case 'S':
        if (strcmp(op, "StatefulPartitionedCall") == 0) return K_PCALL;
        if (strcmp(op, "StatelessIf") == 0) return K_IF;
        if (strcmp(op, "StatelessWhile") == 0) return K_WHILE;
        if (strcmp(op, "StatelessCase") == 0) return K_CASE;
        break;
    case 'W': if (strcmp(op, "While") == 0) return K_WHILE; break;
    case '_': if (strcmp(op, "_Arg") == 0) return K_ARG; break;
    default: break;
    }
    return K_FN;
}

static const op_ent *op_lookup(ginfer *gi, gn_id id)
{
    const gn_graph *g = gi->g;
    const gn__node *n = &g->nodes[id];
    uint32_t key = n->op + 1;
    if (gi->cache_cap) {
        uint32_t mask = gi->cache_cap - 1;
        for (uint32_t h = (key * 2654435761u) & mask;; h = (h + 1) & mask) {
            if (gi->cache[h].op == key) return &gi->cache[h];
            if (gi->cache[h].op == 0) break;
        }
    }
    if ((gi->cache_n + 1) * 2 > gi->cache_cap) {
        uint32_t ncap = gi->cache_cap ? gi->cache_cap * 2 : 64;
        op_ent *nc = calloc(ncap, sizeof *nc);
        if (!nc) return NULL;
        for (uint32_t i = 0; i < gi->cache_cap; i++) {
            if (!gi->cache[i].op) continue;
            uint32_t h = (gi->cache[i].op * 2654435761u) & (ncap - 1);
            while (nc[h].op) h = (h + 1) & (ncap - 1);
            nc[h] = gi->cache[i];
        }
        free(gi->cache);
        gi->cache = nc;
        gi->cache_cap = ncap;
    }
    op_ent e;
    memset(&e, 0, sizeof e);
    e.op = key;
    const char *op = gn__str(g, n->op);
    e.kind = (uint8_t)call_kind(op);
    e.merge = strcmp(op, "Merge") == 0 || strcmp(op, "RefMerge") == 0;
    if (n->opdef >= 0) {
        const gn__opdef *d = gn__op_at((uint32_t)n->opdef);
        e.def = d;
        if (d && d->n_outputs <= FAST_OUTS) {
            e.fast = true;
            e.n_out = (uint8_t)d->n_outputs;
            for (uint16_t k = 0; k < d->n_outputs && e.fast; k++) {
                const gn__argdef *a = &d->outputs[k];
                if (a->number_attr || a->type_list_attr) e.fast = false;
                e.dt[k] = a->type;
                e.dt_key[k] = !a->type && a->type_attr ? gn__intern_find(g, a->type_attr, strlen(a->type_attr))
                                                       : UINT32_MAX;
            }
        }
        e.fn = gn__shape_fn_for(op);
        if (!e.fn) {
            if (d && (d->traits & GN__T_ELEMENTWISE)) {
                if (d->traits & GN__T_BINARY) e.fn = gn__shape_fn_broadcast;
                else if (d->traits & GN__T_UNARY) e.fn = gn__shape_fn_unary;
            }
        }
    } else if (e.kind == K_FN) {
        e.callee = gi->run->lib->n_fns ? gn__graph_find_function(gi->run->lib, op) : NULL;
        if (e.callee) {
            e.kind = K_CALL;
            e.def = e.callee->sig;
        } else {
            e.fn = gn__shape_fn_for(op); /* internal ops the registry may not list */
        }
    }
    uint32_t mask = gi->cache_cap - 1;
    uint32_t h = (key * 2654435761u) & mask;
    while (gi->cache[h].op) h = (h + 1) & mask;
    gi->cache[h] = e;
    gi->cache_n++;
    return &gi->cache[h];
}

/* ---- attrs by interned key (no string compares in the hot loop) ---------------- */
static const Tensorflow__AttrValue *attr_by_key(const gn_graph *g, gn_id id, uint32_t key)
{
    if (key == UINT32_MAX) return NULL;
    const gn__node *n = &g->nodes[id];
    for (uint32_t i = 0; i < n->n_attr; i++)
        if (n->attr[i].key == key) return n->attr[i].value;
    return NULL;
}

static const Tensorflow__TensorShapeProto *list_shape_at(const Tensorflow__AttrValue *v, uint32_t k)
{
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) return NULL;
    if (k >= v->list->n_shape) return NULL;
    return v->list->shape[k];
}

/* Fills what `out` does not know from hint (same rank only). */
static bool refine_with_hint(gn__arena *arena, gn__tinfo *out, const Tensorflow__TensorShapeProto *hint)
{
    if (!hint || hint->unknown_rank || hint->n_dim > GN__MAX_RANK) return true;
    int32_t r = (int32_t)hint->n_dim;
    if (out->shape.rank >= 0 && out->shape.rank != r) return true;
    bool better = out->shape.rank < 0;
    for (int32_t i = 0; i < r && !better; i++)
        better = out->shape.dims[i] < 0 && hint->dim[i] && hint->dim[i]->size >= 0;
    if (!better) return true;
    gn__shape s;
    if (!gn__shape_alloc(arena, r, &s)) return false;
    for (int32_t i = 0; i < r; i++) {
        int64_t mine = out->shape.rank >= 0 ? out->shape.dims[i] : -1;
        int64_t h = hint->dim[i] ? hint->dim[i]->size : -1;
        s.dims[i] = mine >= 0 ? mine : (h >= 0 ? h : -1);
    }
    out->shape = s;
    return true;
}

/* ---- outputs count for a node ---------------------------------------------------- */
static gn_status compute_maxuse(ginfer *gi)
{
    const gn_graph *g = gi->g;
    gi->maxuse = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *gi->maxuse);
    if (!gi->maxuse) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < g->n_nodes; i++) gi->maxuse[i] = -1;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_in; k++) {
            gn__edge e = n->in[k];
            if (e.node < g->n_nodes && (int32_t)e.index > gi->maxuse[e.node]) gi->maxuse[e.node] = (int32_t)e.index;
        }
    }
    return GN_OK;
}

static gn_status node_num_outputs(ginfer *gi, gn_id id, uint32_t *out)
{
    int32_t k = gn__node_num_outputs(gi->g, id);
    if (k >= 0) {
        *out = (uint32_t)k;
        return GN_OK;
    }
    if (!gi->maxuse) GN_TRY(compute_maxuse(gi));
    uint32_t n = (uint32_t)(gi->maxuse[id] + 1);
    const Tensorflow__AttrValue *h = attr_by_key(gi->g, id, gi->key_output_shapes);
    if (h && h->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && h->list && h->list->n_shape > n &&
        h->list->n_shape < 65536)
        n = (uint32_t)h->list->n_shape;
    *out = n;
    return GN_OK;
}

/* ---- _Arg ---------------------------------------------------------------------- */
static const Tensorflow__AttrValue *arg_attr(const gn__function *fn, int64_t index, const char *key)
{
    if (!fn || !fn->def) return NULL;
    const Tensorflow__FunctionDef *d = fn->def;
    for (size_t i = 0; i < d->n_arg_attr; i++) {
        const Tensorflow__FunctionDef__ArgAttrEntry *e = d->arg_attr[i];
        if (!e || (int64_t)e->key != index || !e->value) continue;
        const Tensorflow__FunctionDef__ArgAttrs *a = e->value;
        for (size_t j = 0; j < a->n_attr; j++)
            if (a->attr[j] && a->attr[j]->key && strcmp(a->attr[j]->key, key) == 0) return a->attr[j]->value;
    }
    return NULL;
}

static gn_status infer_arg(ginfer *gi, gn__shape_ctx *c)
{
    int64_t index = -1;
    gn__attr_get_int(c->g, c->node, "index", &index);
    if (c->n_out < 1) return GN_OK;
    gn__tinfo *o = &c->out[0];
    if (gi->args && index >= 0 && (uint64_t)index < gi->n_args) {
        int32_t dt = o->dtype;
        /* a temporary run may point into the caller's records; a lasting one copies */
        if (gi->specialized) *o = gi->args[index];
        else if (!gn__tinfo_copy(c->arena, o, &gi->args[index])) return gn__shape_nomem(c);
        if (dt) o->dtype = dt;
    }
    /* what the function's signature says (arg_attr) fills the gaps */
    if (gi->fn && index >= 0 && !gn__shape_fully_defined(&o->shape)) {
        const Tensorflow__AttrValue *v = arg_attr(gi->fn, index, "_output_shapes");
        if (!refine_with_hint(c->arena, o, list_shape_at(v, 0))) return gn__shape_nomem(c);
    }
    if (o->handle) return GN_OK;
    /* what a resource argument refers to */
    const Tensorflow__AttrValue *hd = gn__node_attr(c->g, c->node, "_handle_dtypes");
    const Tensorflow__AttrValue *hs = gn__node_attr(c->g, c->node, "_handle_shapes");
    if (!hd && gi->fn && index >= 0) {
        hd = arg_attr(gi->fn, index, "_handle_dtypes");
        hs = arg_attr(gi->fn, index, "_handle_shapes");
    }
    if (hd && hd->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && hd->list && hd->list->n_type == 1) {
        gn__handle_data *h = gn__arena_alloc(c->arena, sizeof *h, _Alignof(gn__handle_data));
        if (!h) return gn__shape_nomem(c);
        h->dtype = hd->list->type[0];
        if (!gn__shape_from_proto(list_shape_at(hs, 0), c->arena, &h->shape)) return gn__shape_nomem(c);
        o->handle = h;
    }
    return GN_OK;
}

/* ---- function calls ------------------------------------------------------------ */
static gn_status body_order(ginfer *gi, const gn__function *f, const gn_id **order, uint32_t *n)
{
    infer_run *run = gi->run;
    const gn_graph *lib = run->lib;
    uint32_t fi = (uint32_t)(f - lib->fns);
    if (fi >= lib->n_fns) return gn__fail(gi->err, GN_ERR_INTERNAL, "function outside the library");
    if (!run->topo) {
        run->topo = calloc(lib->n_fns, sizeof *run->topo);
        run->topo_n = calloc(lib->n_fns, sizeof *run->topo_n);
        if (!run->topo || !run->topo_n) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    }
    if (!run->topo[fi]) {
        gn_status s = gn__graph_topo(f->body, &run->topo[fi], &run->topo_n[fi]);
        if (s != GN_OK) {
            /* a body with a cycle: leave the call unknown */
            gn__err_clear(&f->body->err);
            return s == GN_ERR_NOMEM ? gn__fail(gi->err, s, "out of memory") : s;
        }
    }
    *order = run->topo[fi];
    *n = run->topo_n[fi];
    return GN_OK;
}

static void ginfer_free(ginfer *gi)
{
    free(gi->cache);
    free(gi->in);
    free(gi->ready);
    free(gi->nf);
    free(gi->maxuse);
    free(gi->heads);
}

/* Runs f's body on args; on success *ok and res[0..n_res) hold its results
 * (copied into arena; unknown where the body says nothing). GN_OK with !*ok
 * when the call is too deep, recursive, too large or inconsistent. */
static gn_status call_body(ginfer *gi, const gn__function *f, const gn__tinfo *args, uint32_t n_args,
                           gn__arena *arena, gn__tinfo *res, uint32_t n_res, bool *ok)
{
    infer_run *run = gi->run;
    *ok = false;
    for (uint32_t k = 0; k < n_res; k++) res[k] = (gn__tinfo){0, {-1, NULL}, NULL, NULL};
    if (!f || !f->body) return GN_OK;
    gn_graph *body = f->body;
    if (run->depth >= MAX_CALL_DEPTH || body->n_live > MAX_SPECIALIZE_NODES ||
        run->budget < (int64_t)body->n_nodes)
        return GN_OK;
    for (uint32_t d = 0; d < run->depth; d++)
        if (run->stack[d] == f) return GN_OK;
    const gn_id *order = NULL;
    uint32_t n_order = 0;
    gn_status s = body_order(gi, f, &order, &n_order);
    if (s == GN_ERR_NOMEM) return s;
    if (s != GN_OK) return GN_OK;
    run->budget -= body->n_nodes;

    ginfer sub;
    memset(&sub, 0, sizeof sub);
    gn__err serr;
    gn__err_clear(&serr);
    sub.run = run;
    sub.g = body;
    sub.fn = f;
    sub.args = args;
    sub.n_args = n_args;
    sub.specialized = true;
    sub.err = &serr;
    sub.t = table_new(body->n_nodes);
    if (!sub.t) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    run->stack[run->depth++] = f;
    s = infer_graph(&sub, order, n_order);
    run->depth--;
    if (s == GN_OK) {
        *ok = true;
        for (gn_id i = 0; i < body->n_nodes && s == GN_OK; i++) {
            const gn__node *n = &body->nodes[i];
            if (!(n->flags & GN__NODE_FN_RET) || (n->flags & GN__NODE_DEAD) || n->n_in < 1) continue;
            int64_t index = -1;
            if (!gn__attr_get_int(body, i, "index", &index) || index < 0 || (uint64_t)index >= n_res) continue;
            gn__edge e = n->in[0];
            if (e.node >= body->n_nodes || !sub.t->out[e.node] || e.index >= sub.t->n_out[e.node]) continue;
            if (!gn__tinfo_copy(arena, &res[index], &sub.t->out[e.node][e.index]))
                s = gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        }
    } else if (s == GN_ERR_NOMEM) {
        gn__fail(gi->err, s, "out of memory");
    } else {
        s = GN_OK; /* inconsistent for these inputs: fall back on the attrs */
    }
    gn__shape_table_free(sub.t);
    ginfer_free(&sub);
    return s;
}

/* Joins args into what f's body will be inferred with (graphs inferred on
 * their own only). */
static gn_status record_call(ginfer *gi, const gn__function *f, const gn__tinfo *args, uint32_t n)
{
    infer_run *run = gi->run;
    if (gi->specialized || !f || !run->calls) return GN_OK;
    fn_calls *fc = &run->calls[f - run->lib->fns];
    if (fc->external) return GN_OK;
    if (fc->n_sites == 0) {
        fc->n_args = n;
        fc->args = n ? gn__arena_alloc(&run->arena, (size_t)n * sizeof *fc->args, _Alignof(gn__tinfo)) : NULL;
        if (n && !fc->args) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; k < n; k++)
            if (!gn__tinfo_copy(&run->arena, &fc->args[k], &args[k])) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    } else if (fc->n_args != n) {
        fc->external = true;
    } else {
        for (uint32_t k = 0; k < n; k++) {
            if (tinfo_covers(&fc->args[k], &args[k])) continue;
            /* the join shares fc's dims/value/handle or allocates in the run arena */
            if (!tinfo_join(&run->arena, &fc->args[k], &args[k], &fc->args[k]))
                return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        }
    }
    fc->n_sites++;
    return GN_OK;
}

/* the inputs' dtypes, shapes unknown */
static gn__tinfo *unknown_like(gn__arena *arena, const gn__tinfo *in, uint32_t n)
{
    gn__tinfo *t = gn__arena_alloc(arena, (n ? n : 1) * sizeof *t, _Alignof(gn__tinfo));
    if (!t) return NULL;
    for (uint32_t k = 0; k < n; k++) t[k] = (gn__tinfo){in[k].dtype, {-1, NULL}, NULL, NULL};
    return t;
}

static const gn__function *func_attr(ginfer *gi, const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !v->func || !v->func->name) return NULL;
    return gn__graph_find_function(gi->run->lib, v->func->name);
}

/* out[k] takes r[k]'s shape, value and handle; its pre-filled dtype stays. */
static void take_results(gn__shape_ctx *c, const gn__tinfo *r, uint32_t n)
{
    for (uint32_t k = 0; k < n && k < c->n_out; k++) {
        int32_t dt = c->out[k].dtype;
        c->out[k] = r[k];
        if (dt) c->out[k].dtype = dt;
    }
}

static gn_status infer_call_body(ginfer *gi, const op_ent *e, gn__shape_ctx *c);

static gn_status infer_call(ginfer *gi, const op_ent *e, gn__shape_ctx *c)
{
    GN_TRY(infer_call_body(gi, e, c));
    /* If and Case may carry the shapes TensorFlow gave them */
    if (e->kind == K_IF || e->kind == K_CASE) {
        const Tensorflow__AttrValue *os = gn__node_attr(c->g, c->node, "output_shapes");
        for (uint32_t k = 0; os && k < c->n_out; k++)
            if (!refine_with_hint(c->arena, &c->out[k], list_shape_at(os, k))) return gn__shape_nomem(c);
    }
    return GN_OK;
}

static gn_status infer_call_body(ginfer *gi, const op_ent *e, gn__shape_ctx *c)
{
    const gn_graph *g = c->g;
    gn_id id = c->node;
    uint32_t n_out = c->n_out;
    /* (a call without outputs still counts as a call site) */
    gn__tinfo *res = gn__arena_alloc(c->arena, 2 * ((size_t)n_out + 1) * sizeof *res, _Alignof(gn__tinfo));
    if (!res) return gn__shape_nomem(c);
    gn__tinfo *res2 = res + n_out;
    bool ok = false, ok2 = false;
    switch ((op_kind)e->kind) {
    case K_CALL:
        GN_TRY(record_call(gi, e->callee, c->in, c->n_in));
        GN_TRY(call_body(gi, e->callee, c->in, c->n_in, c->arena, res, n_out, &ok));
        if (ok) take_results(c, res, n_out);
        return GN_OK;
    case K_PCALL: {
        const gn__function *f = func_attr(gi, g, id, "f");
        GN_TRY(record_call(gi, f, c->in, c->n_in));
        GN_TRY(call_body(gi, f, c->in, c->n_in, c->arena, res, n_out, &ok));
        if (ok) take_results(c, res, n_out);
        return GN_OK;
    }
    case K_IF: {
        if (c->n_in < 1) return GN_OK;
        const gn__function *ft = func_attr(gi, g, id, "then_branch"), *fe = func_attr(gi, g, id, "else_branch");
        GN_TRY(record_call(gi, ft, c->in + 1, c->n_in - 1));
        GN_TRY(record_call(gi, fe, c->in + 1, c->n_in - 1));
        GN_TRY(call_body(gi, ft, c->in + 1, c->n_in - 1, c->arena, res, n_out, &ok));
        if (!ok) return GN_OK;
        GN_TRY(call_body(gi, fe, c->in + 1, c->n_in - 1, c->arena, res2, n_out, &ok2));
        if (!ok2) return GN_OK;
        for (uint32_t k = 0; k < n_out; k++)
            if (!tinfo_join(c->arena, &res[k], &res2[k], &res[k])) return gn__shape_nomem(c);
        take_results(c, res, n_out);
        return GN_OK;
    }
    case K_CASE: {
        if (c->n_in < 1) return GN_OK;
        const Tensorflow__AttrValue *v = gn__node_attr(g, id, "branches");
        if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list || !v->list->n_func) return GN_OK;
        for (size_t b = 0; b < v->list->n_func; b++) {
            const Tensorflow__NameAttrList *fa = v->list->func[b];
            const gn__function *f = fa && fa->name ? gn__graph_find_function(gi->run->lib, fa->name) : NULL;
            GN_TRY(record_call(gi, f, c->in + 1, c->n_in - 1));
        }
        for (size_t b = 0; b < v->list->n_func; b++) {
            const Tensorflow__NameAttrList *fa = v->list->func[b];
            const gn__function *f = fa && fa->name ? gn__graph_find_function(gi->run->lib, fa->name) : NULL;
            GN_TRY(call_body(gi, f, c->in + 1, c->n_in - 1, c->arena, b ? res2 : res, n_out, &ok));
            if (!ok) return GN_OK;
            if (b)
                for (uint32_t k = 0; k < n_out; k++)
                    if (!tinfo_join(c->arena, &res[k], &res2[k], &res[k])) return gn__shape_nomem(c);
        }
        take_results(c, res, n_out);
        return GN_OK;
    }
    case K_WHILE: {
        const gn__function *body = func_attr(gi, g, id, "body"), *cond = func_attr(gi, g, id, "cond");
        /* output_shapes, when given, is what TensorFlow uses */
        const Tensorflow__AttrValue *os = gn__node_attr(g, id, "output_shapes");
        if (os && os->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && os->list && os->list->n_shape == n_out &&
            c->n_in == n_out) {
            for (uint32_t k = 0; k < n_out; k++) {
                if (!gn__shape_from_proto(os->list->shape[k], c->arena, &c->out[k].shape)) return gn__shape_nomem(c);
                /* a loop variable whose shape never changes keeps its handle */
                c->out[k].handle = c->in[k].handle;
                if (!c->out[k].dtype) c->out[k].dtype = c->in[k].dtype;
            }
            GN_TRY(record_call(gi, body, c->out, n_out));
            GN_TRY(record_call(gi, cond, c->out, n_out));
            return GN_OK;
        }
        if (c->n_in != n_out) {
            gn__tinfo *u = unknown_like(c->arena, c->in, c->n_in);
            if (!u) return gn__shape_nomem(c);
            GN_TRY(record_call(gi, body, u, c->n_in));
            GN_TRY(record_call(gi, cond, u, c->n_in));
            return GN_OK;
        }
        /* state = inputs; state = join(state, body(state)) until it stops moving */
        gn__tinfo *st = gn__arena_alloc(c->arena, (size_t)n_out * sizeof *st, _Alignof(gn__tinfo));
        if (!st) return gn__shape_nomem(c);
        for (uint32_t k = 0; k < n_out; k++) st[k] = c->in[k];
        bool stable = false;
        for (int it = 0; it < 3 && !stable; it++) {
            GN_TRY(call_body(gi, body, st, n_out, c->arena, res, n_out, &ok));
            if (!ok) break;
            stable = true;
            for (uint32_t k = 0; k < n_out; k++) {
                if (tinfo_covers(&st[k], &res[k])) continue;
                stable = false;
                if (!tinfo_join(c->arena, &st[k], &res[k], &st[k])) return gn__shape_nomem(c);
            }
        }
        if (!stable) {
            st = unknown_like(c->arena, c->in, n_out);
            if (!st) return gn__shape_nomem(c);
        } else {
            take_results(c, st, n_out);
        }
        GN_TRY(record_call(gi, body, st, n_out));
        GN_TRY(record_call(gi, cond, st, n_out));
        return GN_OK;
    }
    default:
        return GN_OK;
    }
}

/* ---- one node ------------------------------------------------------------------ */
static bool dtype_has_values(int32_t dt) { return dt == 0 || dt == DT_INT32 || dt == DT_INT64; }

static gn_status ensure_in_cap(ginfer *gi, uint32_t n)
{
    if (n <= gi->in_cap) return GN_OK;
    uint32_t ncap = gi->in_cap ? gi->in_cap : 16;
    while (ncap < n) ncap *= 2;
    gn__tinfo *ni = realloc(gi->in, (size_t)ncap * sizeof *ni);
    if (ni) gi->in = ni;
    uint8_t *nr = realloc(gi->ready, ncap);
    if (nr) gi->ready = nr;
    if (!ni || !nr) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    gi->in_cap = ncap;
    return GN_OK;
}

static gn_status add_head(ginfer *gi, gn_id id)
{
    if (gi->n_heads == gi->cap_heads) {
        uint32_t ncap = gi->cap_heads ? gi->cap_heads * 2 : 16;
        gn_id *nh = realloc(gi->heads, (size_t)ncap * sizeof *nh);
        if (!nh) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        gi->heads = nh;
        gi->cap_heads = ncap;
    }
    gi->heads[gi->n_heads++] = id;
    return GN_OK;
}

static gn_status process(ginfer *gi, gn_id id, uint32_t pass)
{
    gn_graph *g = gi->g;
    gn__shape_table *t = gi->t;
    const gn__node *n = &g->nodes[id];
    const op_ent *e = op_lookup(gi, id);
    if (!e) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");

    /* outputs */
    bool fast = e->fast && !(n->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET));
    uint32_t n_out;
    gn__tinfo *out;
    if (!(gi->nf[id] & NF_VISITED)) {
        if (fast) n_out = e->n_out;
        else GN_TRY(node_num_outputs(gi, id, &n_out));
        if (n_out > MAX_OUTPUTS)
            return gn__fail(gi->err, GN_ERR_GRAPH, "node '%s' (%s): %u outputs, more than %u", gn__node_name(g, id),
                            gn__node_op(g, id), n_out, MAX_OUTPUTS);
        out = NULL;
        if (n_out) {
            out = gn__arena_alloc(&t->arena, (size_t)n_out * sizeof *out, _Alignof(gn__tinfo));
            if (!out) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        }
        t->n_out[id] = n_out;
        t->out[id] = out;
    } else {
        n_out = t->n_out[id];
        out = t->out[id];
    }
    const gn__opdef *op = e->def; /* what gn__node_opdef answers, resolved once per op */
    for (uint32_t k = 0; k < n_out; k++) {
        out[k] = (gn__tinfo){0, {-1, NULL}, NULL, NULL};
        if (!op) continue;
        if (fast) {
            if (e->dt[k]) {
                out[k].dtype = e->dt[k];
                continue;
            }
            const Tensorflow__AttrValue *v = attr_by_key(g, id, e->dt_key[k]);
            if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE) {
                out[k].dtype = v->type;
                continue;
            }
        }
        out[k].dtype = gn__op_output_dtype(op, g, id, k);
    }

    /* inputs */
    GN_TRY(ensure_in_cap(gi, n->n_in));
    bool taint = false, pending = false;
    for (uint32_t i = 0; i < n->n_in; i++) {
        gn__edge ed = n->in[i];
        if (ed.node < g->n_nodes && (gi->nf[ed.node] & NF_VISITED) && ed.index < t->n_out[ed.node]) {
            gi->in[i] = t->out[ed.node][ed.index];
            gi->ready[i] = 1;
            if (gi->nf[ed.node] & NF_TAINT) taint = true;
        } else {
            gi->in[i] = (gn__tinfo){0, {-1, NULL}, NULL, NULL};
            gi->ready[i] = 0;
            pending = true;
        }
    }
    if (pass == 1 && pending) {
        gi->nf[id] |= NF_HEAD;
        if (!e->merge) gi->nf[id] |= NF_WIDEN; /* not a loop head TensorFlow makes: give up on it */
        GN_TRY(add_head(gi, id));
    }
    if (gi->nf[id] & NF_HEAD) taint = true;

    gn__shape_ctx c;
    c.g = g;
    c.node = id;
    c.op = op;
    c.n_in = n->n_in;
    c.in = gi->in;
    c.n_out = n_out;
    c.out = out;
    c.arena = &t->arena;
    c.err = &gi->nerr;
    c.in_ready = gi->ready;
    c.lib = gi->run->lib;
    c.pass = pass;

    gn_status s = GN_OK;
    switch ((op_kind)e->kind) {
    case K_FN:
        if (e->fn && n_out) s = e->fn(&c);
        break;
    case K_ARG:
        s = infer_arg(gi, &c);
        break;
    default:
        gi->nerr.code = GN_OK;
        s = infer_call(gi, e, &c);
        if (s != GN_OK && gi->nerr.code == GN_OK) {
            /* failure recorded on gi->err by the call machinery */
            return s;
        }
        break;
    }
    if (s == GN_ERR_GRAPH && taint) {
        if (!gi->has_deferred) {
            gi->deferred = gi->nerr;
            gi->has_deferred = true;
        }
        for (uint32_t k = 0; k < n_out; k++) {
            out[k].shape = gn__shape_unknown();
            out[k].value = NULL;
            out[k].handle = NULL;
        }
        s = GN_OK;
    }
    if (s != GN_OK) {
        if (gi->err != &gi->nerr) *gi->err = gi->nerr;
        return s;
    }

    if (gi->nf[id] & NF_WIDEN) {
        for (uint32_t k = 0; k < n_out; k++) {
            out[k].shape = gn__shape_unknown();
            out[k].value = NULL;
        }
    }

    const Tensorflow__AttrValue *hint = NULL;
    bool hint_looked = false;
    for (uint32_t k = 0; k < n_out; k++) {
        gn__tinfo *o = &out[k];
        if (!gn__shape_fully_defined(&o->shape) && !(gi->nf[id] & NF_WIDEN)) {
            if (!hint_looked) {
                hint = attr_by_key(g, id, gi->key_output_shapes);
                hint_looked = true;
            }
            if (hint && !refine_with_hint(&t->arena, o, list_shape_at(hint, k)))
                return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
        }
        if (o->shape.rank > GN__MAX_RANK) o->shape = gn__shape_unknown();
        for (int32_t d = 0; d < o->shape.rank; d++)
            if (o->shape.dims[d] < -1)
                return gn__fail(gi->err, GN_ERR_INTERNAL, "node '%s' (%s): output %u: dimension %lld",
                                gn__node_name(g, id), gn__node_op(g, id), k, (long long)o->shape.dims[d]);
        int64_t ne = gn__shape_num_elements(&o->shape);
        if (ne == -2) {
            char sb[256];
            gn__err *dst = taint ? &gi->nerr : gi->err;
            gn__fail(dst, GN_ERR_GRAPH, "node '%s' (%s): output %u: shape %s has more elements than int64 can count",
                     gn__node_name(g, id), gn__node_op(g, id), k, gn__shape_str(&o->shape, sb, sizeof sb));
            if (!taint) return GN_ERR_GRAPH;
            if (!gi->has_deferred) {
                gi->deferred = gi->nerr;
                gi->has_deferred = true;
            }
            o->shape = gn__shape_unknown();
        }
        if (o->value && (!dtype_has_values(o->dtype) || (ne >= 0 && ne != o->value->n))) o->value = NULL;
    }

    gi->nf[id] |= NF_VISITED;
    if (taint) gi->nf[id] |= NF_TAINT;
    return GN_OK;
}

/* Whether loop heads (Merges visited with a pending back-edge) cover what
 * their inputs now carry; marks those that do not with NF_WIDEN when widen. */
static bool loops_settled(ginfer *gi, bool widen)
{
    const gn_graph *g = gi->g;
    const gn__shape_table *t = gi->t;
    bool settled = true;
    for (uint32_t h = 0; h < gi->n_heads; h++) {
        gn_id id = gi->heads[h];
        if (gi->nf[id] & NF_WIDEN) continue;
        if (!t->n_out[id]) continue;
        const gn__tinfo *m = &t->out[id][0];
        const gn__node *n = &g->nodes[id];
        bool ok = true;
        for (uint32_t i = 0; i < n->n_in && ok; i++) {
            gn__edge ed = n->in[i];
            if (ed.node >= g->n_nodes || !(gi->nf[ed.node] & NF_VISITED) || ed.index >= t->n_out[ed.node]) continue;
            ok = tinfo_covers(m, &t->out[ed.node][ed.index]);
        }
        if (!ok) {
            settled = false;
            if (widen) gi->nf[id] |= NF_WIDEN;
        }
    }
    return settled;
}

static gn_status infer_graph(ginfer *gi, const gn_id *order, uint32_t n_order)
{
    gn_graph *g = gi->g;
    gi->key_output_shapes = gn__intern_find(g, "_output_shapes", 14);
    gi->nf = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    if (!gi->nf) return gn__fail(gi->err, GN_ERR_NOMEM, "out of memory");
    gn__err_clear(&gi->nerr);

    for (uint32_t pass = 1; pass <= 3; pass++) {
        gi->has_deferred = false;
        for (uint32_t i = 0; i < n_order; i++) {
            /* the order is known ahead: fetch the records the next nodes read,
             * then their arrays, then their inputs' entries (a cache miss per
             * node otherwise on large graphs; a node here is quick, so the
             * distances are longer than gn__prefetch_ahead's) */
            if (pass == 1 && i + 32 < n_order) gn__prefetch_record(g, order[i + 32]);
            if (pass == 1 && i + 16 < n_order) gn__prefetch_arrays(g, order[i + 16]);
            if (pass == 1 && i + 8 < n_order) {
                const gn__node *a = &g->nodes[order[i + 8]];
                for (uint32_t k = 0; k < a->n_in && k < 4; k++) GN__PREFETCH(&gi->t->out[a->in[k].node]);
            }
            gn_id id = order[i];
            if (pass > 1 && !(gi->nf[id] & NF_TAINT)) continue;
            GN_TRY(process(gi, id, pass));
        }
        if (!gi->n_heads) break;
        if (pass == 3 || loops_settled(gi, pass == 2)) break;
    }
    if (gi->has_deferred) {
        *gi->err = gi->deferred;
        return gi->deferred.code;
    }
    return GN_OK;
}

/* ---- entry points ------------------------------------------------------------- */
static gn_status infer_one(infer_run *run, gn_graph *g, const gn__function *fn, const gn__tinfo *args,
                           uint32_t n_args, gn__err *err)
{
    gn_id *order = NULL;
    uint32_t n_order = 0;
    gn_status s = gn__graph_topo(g, &order, &n_order);
    if (s != GN_OK) {
        if (err != &g->err) *err = g->err;
        return s;
    }
    gn__shape_table *t = table_new(g->n_nodes);
    if (!t) {
        free(order);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    ginfer gi;
    memset(&gi, 0, sizeof gi);
    gi.run = run;
    gi.g = g;
    gi.t = t;
    gi.fn = fn;
    gi.args = args;
    gi.n_args = n_args;
    gi.err = err;
    s = infer_graph(&gi, order, n_order);
    ginfer_free(&gi);
    if (s != GN_OK) {
        free(order);
        gn__shape_table_free(t);
        return s;
    }
    t->order = order;
    t->n_order = n_order;
    gn__graph_put_shapes(g, t);
    return GN_OK;
}

/* ---- the library: who calls what ------------------------------------------------ */
typedef struct call_edge {
    uint32_t from, to;         /* library function indices */
} call_edge;

typedef struct call_scan {
    infer_run *run;
    call_edge *e;
    uint32_t n, cap;
} call_scan;

static bool scan_edge(call_scan *cs, int64_t from, const gn__function *to)
{
    if (from < 0) {
        /* the top level is inferred first anyway */
        cs->run->calls[to - cs->run->lib->fns].from_top = true;
        return true;
    }
    if (cs->n == cs->cap) {
        uint32_t ncap = cs->cap ? cs->cap * 2 : 64;
        call_edge *ne = realloc(cs->e, (size_t)ncap * sizeof *ne);
        if (!ne) return false;
        cs->e = ne;
        cs->cap = ncap;
    }
    cs->e[cs->n++] = (call_edge){(uint32_t)from, (uint32_t)(to - cs->run->lib->fns)};
    return true;
}

static bool is_call_attr(op_kind k, const char *key)
{
    switch (k) {
    case K_PCALL: return strcmp(key, "f") == 0;
    case K_IF: return strcmp(key, "then_branch") == 0 || strcmp(key, "else_branch") == 0;
    case K_WHILE: return strcmp(key, "cond") == 0 || strcmp(key, "body") == 0;
    case K_CASE: return strcmp(key, "branches") == 0;
    default: return false;
    }
}

/* Call edges out of graph g (owned by function `from`, -1 for the top level);
 * functions referenced other than by a call we infer become external. */
static bool scan_calls(call_scan *cs, const gn_graph *g, int64_t from)
{
    const gn_graph *lib = cs->run->lib;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->opdef < 0) {
            const gn__function *f = gn__graph_find_function(lib, gn__str(g, n->op));
            if (f && !scan_edge(cs, from, f)) return false;
        }
        op_kind kind = K_FN;
        bool kind_known = false;
        for (uint32_t a = 0; a < n->n_attr; a++) {
            const Tensorflow__AttrValue *v = n->attr[a].value;
            if (!v) continue;
            Tensorflow__NameAttrList *one = NULL;
            Tensorflow__NameAttrList *const *many = NULL;
            size_t nm = 0;
            if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC) {
                one = v->func;
                many = &one;
                nm = one ? 1 : 0;
            } else if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list && v->list->n_func) {
                many = v->list->func;
                nm = v->list->n_func;
            }
            if (!nm) continue;
            if (!kind_known) {
                kind = call_kind(gn__str(g, n->op));
                kind_known = true;
            }
            bool known = is_call_attr(kind, gn__str(g, n->attr[a].key));
            for (size_t j = 0; j < nm; j++) {
                const gn__function *f = many[j] && many[j]->name ? gn__graph_find_function(lib, many[j]->name) : NULL;
                if (!f) continue;
                if (!known) cs->run->calls[f - lib->fns].external = true;
                else if (!scan_edge(cs, from, f)) return false;
            }
        }
    }
    return true;
}

/* Library functions in an order where callers come before callees (those on
 * a call cycle last, and external: their arguments cannot be joined). */
static gn_status call_order(infer_run *run, gn__err *err, uint32_t **out)
{
    const gn_graph *lib = run->lib;
    uint32_t nf = lib->n_fns;
    call_scan cs = {run, NULL, 0, 0};
    bool ok = scan_calls(&cs, lib, -1);
    for (uint32_t i = 0; ok && i < nf; i++)
        if (lib->fns[i].body) ok = scan_calls(&cs, lib->fns[i].body, i);
    uint32_t *order = malloc((size_t)nf * sizeof *order);
    uint32_t *indeg = calloc(nf, sizeof *indeg);
    uint32_t *first = calloc((size_t)nf + 1, sizeof *first);
    uint32_t *adj = malloc(((size_t)cs.n + 1) * sizeof *adj);
    uint8_t *placed = calloc(nf, 1);
    if (!ok || !order || !indeg || !first || !adj || !placed) {
        free(cs.e);
        free(order);
        free(indeg);
        free(first);
        free(adj);
        free(placed);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    /* who calls whom: callers of each function (for the tables' dependencies) */
    run->caller_first = calloc((size_t)nf + 1, sizeof *run->caller_first);
    run->caller_adj = malloc(((size_t)cs.n + 1) * sizeof *run->caller_adj);
    if (!run->caller_first || !run->caller_adj) {
        free(cs.e);
        free(order);
        free(indeg);
        free(first);
        free(adj);
        free(placed);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t k = 0; k < cs.n; k++) run->caller_first[cs.e[k].to + 1]++;
    for (uint32_t i = 0; i < nf; i++) run->caller_first[i + 1] += run->caller_first[i];
    for (uint32_t k = 0; k < cs.n; k++) run->caller_adj[run->caller_first[cs.e[k].to]++] = cs.e[k].from;
    for (uint32_t i = nf; i > 0; i--) run->caller_first[i] = run->caller_first[i - 1];
    run->caller_first[0] = 0;
    /* adjacency by caller */
    for (uint32_t k = 0; k < cs.n; k++) {
        first[cs.e[k].from + 1]++;
        indeg[cs.e[k].to]++;
    }
    for (uint32_t i = 0; i < nf; i++) first[i + 1] += first[i];
    for (uint32_t k = 0; k < cs.n; k++) adj[first[cs.e[k].from]++] = cs.e[k].to;
    for (uint32_t i = nf; i > 0; i--) first[i] = first[i - 1];
    first[0] = 0;
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < nf; i++)
        if (!indeg[i]) {
            order[tail++] = i;
            placed[i] = 1;
        }
    while (head < tail) {
        uint32_t f = order[head++];
        for (uint32_t k = first[f]; k < first[f + 1]; k++)
            if (--indeg[adj[k]] == 0) {
                order[tail++] = adj[k];
                placed[adj[k]] = 1;
            }
    }
    for (uint32_t i = 0; i < nf; i++)
        if (!placed[i]) {
            order[tail++] = i;
            run->calls[i].external = true;
        }
    free(cs.e);
    free(indeg);
    free(first);
    free(adj);
    free(placed);
    *out = order;
    return GN_OK;
}

static bool dep_add(fn_calls *fc, uint32_t *stamp, uint32_t me, uint32_t d, uint32_t *cap)
{
    if (stamp[d] == me) return true;
    stamp[d] = me;
    if (fc->n_deps == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        uint32_t *nd = realloc(fc->deps, (size_t)ncap * sizeof *nd);
        if (!nd) return false;
        fc->deps = nd;
        *cap = ncap;
    }
    fc->deps[fc->n_deps++] = d;
    return true;
}

/* Function f's body was inferred with its callers' arguments: it depends on
 * the tables of its callers and, through them, of theirs (callers come
 * first in the order, so theirs are known). */
static gn_status set_deps(infer_run *run, uint32_t f, uint32_t *stamp, gn__err *err)
{
    const gn_graph *lib = run->lib;
    uint32_t nf = lib->n_fns, cap = 0;
    fn_calls *fc = &run->calls[f];
    bool ok = true;
    if (fc->from_top) ok = dep_add(fc, stamp, f, nf, &cap);
    for (uint32_t k = run->caller_first[f]; ok && k < run->caller_first[f + 1]; k++) {
        uint32_t a = run->caller_adj[k];
        ok = dep_add(fc, stamp, f, a, &cap);
        for (uint32_t j = 0; ok && j < run->calls[a].n_deps; j++) ok = dep_add(fc, stamp, f, run->calls[a].deps[j], &cap);
    }
    gn__shape_table *t = gn__graph_shapes(lib->fns[f].body);
    if (ok && fc->n_deps) {
        t->dep_graph = gn__arena_alloc(&t->arena, fc->n_deps * sizeof *t->dep_graph, _Alignof(gn_graph *));
        t->dep_table = gn__arena_alloc(&t->arena, fc->n_deps * sizeof *t->dep_table, _Alignof(gn__shape_table *));
        ok = t->dep_graph && t->dep_table;
        for (uint32_t i = 0; ok && i < fc->n_deps; i++) {
            uint32_t d = fc->deps[i];
            const gn_graph *dg = d == nf ? lib : lib->fns[d].body;
            t->dep_graph[i] = dg;
            t->dep_table[i] = gn__graph_shapes(dg);
        }
        if (ok) t->n_deps = fc->n_deps;
    }
    return ok ? GN_OK : gn__fail(err, GN_ERR_NOMEM, "out of memory");
}

gn_status gn__graph_infer_shapes(gn_graph *g)
{
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    gn__attachment_drop(&g->shapes);
    infer_run run;
    memset(&run, 0, sizeof run);
    run.lib = g->lib ? g->lib : g;
    run.budget = SPECIALIZE_BUDGET + 4 * (int64_t)g->n_nodes;
    gn__arena_init(&run.arena, 16384);
    gn__err err;
    gn__err_clear(&err);
    gn_status s = GN_OK;
    uint32_t *order = NULL;
    bool library = g->kind == GN__GRAPH_TOP && g->n_fns > 0;
    if (library) {
        run.calls = calloc(g->n_fns, sizeof *run.calls);
        if (!run.calls) s = gn__fail(&err, GN_ERR_NOMEM, "out of memory");
        /* the gradient functions of the library are called by machinery we do not see */
        const Tensorflow__FunctionDefLibrary *le = g->lib_extra;
        for (size_t i = 0; s == GN_OK && le && i < le->n_gradient; i++) {
            const Tensorflow__GradientDef *gd = le->gradient[i];
            const gn__function *f = gd && gd->gradient_func ? gn__graph_find_function(g, gd->gradient_func) : NULL;
            if (f) run.calls[f - g->fns].external = true;
        }
        if (s == GN_OK) s = call_order(&run, &err, &order);
    }
    uint32_t *stamp = library ? malloc(((size_t)g->n_fns + 1) * sizeof *stamp) : NULL;
    if (library && !stamp && s == GN_OK) s = gn__fail(&err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; stamp && i <= g->n_fns; i++) stamp[i] = UINT32_MAX;
    if (s == GN_OK) s = infer_one(&run, g, NULL, NULL, 0, &err);
    for (uint32_t j = 0; s == GN_OK && library && j < g->n_fns; j++) {
        gn__function *f = &g->fns[order[j]];
        if (!f->body) continue;
        gn__attachment_drop(&f->body->shapes);
        /* a body called only from call sites we saw is inferred with the join
         * of their arguments; others (entry points) with what their _Arg say */
        fn_calls *fc = &run.calls[order[j]];
        bool joined = !fc->external && fc->n_sites > 0;
        s = infer_one(&run, f->body, f, joined ? fc->args : NULL, joined ? fc->n_args : 0, &err);
        if (s != GN_OK) gn__err_prefix(&err, "function '%s'", gn__str(g, f->name));
        if (s == GN_OK && joined) s = set_deps(&run, order[j], stamp, &err);
    }
    if (run.topo) {
        for (uint32_t i = 0; i < run.lib->n_fns; i++) free(run.topo[i]);
    }
    free(run.topo);
    free(run.topo_n);
    for (uint32_t i = 0; run.calls && i < g->n_fns; i++) free(run.calls[i].deps);
    free(run.calls);
    free(run.caller_first);
    free(run.caller_adj);
    free(stamp);
    free(order);
    gn__arena_free(&run.arena);
    if (s != GN_OK) {
        g->err = err;
        gn__attachment_drop(&g->shapes);
        for (uint32_t i = 0; g->kind == GN__GRAPH_TOP && i < g->n_fns; i++) {
            if (g->fns[i].body) gn__attachment_drop(&g->fns[i].body->shapes);
        }
    }
    return s;
}
