/* The graph IR: construction, interning, mutation with fanouts kept current,
 * attrs, topological order, compaction and clone (see ir.h for invariants).
 * Mirrors what TensorFlow's grappler/utils/graph_view.cc and
 * mutable_graph_view.cc provide, on ids instead of pointers. */
#include "graph/ir.h"

#include <stdio.h>
#include <stdlib.h>

#include "opdef/registry.h"

/* ---- small growable arrays in the arena ------------------------------------- */
/* Grows *arr (elements of size esz, count n, capacity *cap) to hold n+1. Old
 * storage stays in the arena until the graph is compacted or freed. */
static bool grow(gn__arena *a, void **arr, uint32_t n, uint32_t *cap, size_t esz)
{
    if (n < *cap) return true;
    uint32_t ncap = *cap ? *cap * 2 : 2;
    if (ncap < *cap) return false;
    void *p = gn__arena_alloc(a, (size_t)ncap * esz, 8);
    if (!p) return false;
    if (n) memcpy(p, *arr, (size_t)n * esz);
    *arr = p;
    *cap = ncap;
    return true;
}

#define GROW(g, arr, n, cap) grow(&(g)->arena, (void **)&(arr), (n), &(cap), sizeof(*(arr)))

/* ---- interning ----------------------------------------------------------------- */
/* A slot: the high half of the name's hash (compared before the string is
 * read, so a probe past other names touches only the slot array), id + 1. */
#define STR_SLOT(h, id) (((uint64_t)(h) >> 32 << 32) | ((uint64_t)(id) + 1))

static bool intern_rehash(gn_graph *g, uint32_t nslots)
{
    uint64_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return false;
    gn__strtab *t = &g->names;
    for (uint32_t id = 0; id < t->n; id++) {
        uint64_t h = gn__hash_bytes(t->str[id], t->len[id]);
        uint32_t i = (uint32_t)h & (nslots - 1);
        while (slots[i]) i = (i + 1) & (nslots - 1);
        slots[i] = STR_SLOT(h, id);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return true;
}

uint32_t gn__intern_find(const gn_graph *g, const char *s, size_t n)
{
    return gn__intern_find_hashed(g, s, n, gn__hash_bytes(s, n));
}

uint32_t gn__intern_find_hashed(const gn_graph *g, const char *s, size_t n, uint64_t h)
{
    const gn__strtab *t = &g->names;
    if (!t->nslots) return UINT32_MAX;
    uint32_t i = (uint32_t)h & (t->nslots - 1);
    const uint32_t tag = (uint32_t)(h >> 32);
    while (t->slots[i]) {
        uint64_t e = t->slots[i];
        if ((uint32_t)(e >> 32) == tag) {
            uint32_t id = (uint32_t)e - 1;
            if (t->len[id] == n && memcmp(t->str[id], s, n) == 0) return id;
        }
        i = (i + 1) & (t->nslots - 1);
    }
    return UINT32_MAX;
}

uint32_t gn__intern(gn_graph *g, const char *s, size_t n) { return gn__intern_hashed(g, s, n, gn__hash_bytes(s, n)); }

uint32_t gn__intern_hashed(gn_graph *g, const char *s, size_t n, uint64_t h)
{
    gn__strtab *t = &g->names;
    if (n > UINT32_MAX - 1) return UINT32_MAX;
    if ((uint64_t)(t->n + 1) * 2 > t->nslots) {
        if (!intern_rehash(g, t->nslots ? t->nslots * 2 : 1024)) return UINT32_MAX;
    }
    uint32_t i = (uint32_t)h & (t->nslots - 1);
    const uint32_t tag = (uint32_t)(h >> 32);
    while (t->slots[i]) {
        uint64_t e = t->slots[i];
        if ((uint32_t)(e >> 32) == tag) {
            uint32_t id = (uint32_t)e - 1;
            if (t->len[id] == n && memcmp(t->str[id], s, n) == 0) return id;
        }
        i = (i + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) {
        uint32_t ncap = t->cap ? t->cap * 2 : 1024;
        const char **ns = realloc(t->str, (size_t)ncap * sizeof *ns);
        if (!ns) return UINT32_MAX;
        t->str = ns;
        uint32_t *nl = realloc(t->len, (size_t)ncap * sizeof *nl);
        if (!nl) return UINT32_MAX;
        t->len = nl;
        t->cap = ncap;
    }
    char *copy = gn__arena_strndup(&g->arena, s, n);
    if (!copy) return UINT32_MAX;
    uint32_t id = t->n++;
    t->str[id] = copy;
    t->len[id] = (uint32_t)n;
    t->slots[i] = STR_SLOT(h, id);
    return id;
}

uint32_t gn__intern_cstr(gn_graph *g, const char *s) { return gn__intern(g, s, strlen(s)); }

bool gn__intern_reserve(gn_graph *g, uint32_t n)
{
    gn__strtab *t = &g->names;
    if (n > UINT32_MAX / 4 - t->n) return false;
    uint32_t want = t->n + n;
    if (want > t->cap) {
        const char **ns = realloc(t->str, (size_t)want * sizeof *ns);
        if (!ns) return false;
        t->str = ns;
        uint32_t *nl = realloc(t->len, (size_t)want * sizeof *nl);
        if (!nl) return false;
        t->len = nl;
        t->cap = want;
    }
    uint32_t nslots = t->nslots ? t->nslots : 1024;
    while ((uint64_t)(want + 1) * 2 > nslots) nslots *= 2;
    return nslots == t->nslots || intern_rehash(g, nslots);
}

/* ---- construction ------------------------------------------------------------ */
gn_graph *gn__graph_new(gn__graph_kind kind)
{
    gn_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->kind = kind;
    gn__arena_init(&g->arena, 64 * 1024);
    g->lib = g;
    g->own = gn__blob_new(16 * 1024);
    if (!g->own || gn__graph_adopt_blob(g, g->own) != GN_OK) {
        gn__blob_unref(g->own);
        gn__arena_free(&g->arena);
        free(g);
        return NULL;
    }
    gn__blob_unref(g->own); /* adopt took a reference */
    gn__arena_pb_allocator(&g->own->arena, &g->own_alloc);
    if (gn__intern(g, "", 0) != 0) {
        gn_graph_free(g);
        return NULL;
    }
    return g;
}

gn_status gn__graph_adopt_blob(gn_graph *g, gn__blob *b)
{
    for (uint32_t i = 0; i < g->n_blobs; i++)
        if (g->blobs[i] == b) return GN_OK;
    if (g->n_blobs == g->cap_blobs) {
        uint32_t ncap = g->cap_blobs ? g->cap_blobs * 2 : 4;
        gn__blob **nb = realloc(g->blobs, ncap * sizeof *nb);
        if (!nb) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        g->blobs = nb;
        g->cap_blobs = ncap;
    }
    g->blobs[g->n_blobs++] = gn__blob_ref(b);
    return GN_OK;
}

void gn__graph_drop_blob(gn_graph *g, gn__blob *b)
{
    for (uint32_t i = 0; i < g->n_blobs; i++)
        if (g->blobs[i] == b) {
            g->blobs[i] = g->blobs[--g->n_blobs];
            gn__blob_unref(b);
            return;
        }
}

uint32_t gn__graph_bytes_holders(const gn_graph *g, const void *p, size_t n)
{
    for (uint32_t i = 0; i < g->n_blobs; i++)
        if (gn__arena_holds(&g->blobs[i]->arena, p, n))
            return atomic_load_explicit(&g->blobs[i]->refs, memory_order_acquire);
    return 0;
}

void *gn__graph_value_alloc(gn_graph *g, size_t bytes)
{
    return gn__arena_alloc(&g->own->arena, bytes ? bytes : 1, _Alignof(max_align_t));
}

ProtobufCAllocator *gn__graph_value_allocator(gn_graph *g) { return &g->own_alloc; }

void gn_graph_free(gn_graph *g)
{
    if (!g) return;
    gn__attachment_drop(&g->shapes);
    for (uint32_t i = 0; i < g->n_fns; i++) gn_graph_free(g->fns[i].body);
    free(g->fns);
    for (uint32_t i = 0; i < g->n_blobs; i++) gn__blob_unref(g->blobs[i]);
    free(g->blobs);
    free(g->nodes);
    free(g->node_of_name);
    free(g->fn_of_name);
    free(g->opdef_cache);
    free(g->names.str);
    free(g->names.len);
    free(g->names.slots);
    free(g->encs);
    free(g->source);
    gn__attachment_drop(&g->saved);
    gn__attachment_drop(&g->engines);
    gn__arena_free(&g->arena);
    free(g);
}

const char *gn_graph_errmsg(const gn_graph *g)
{
    if (!g) return "out of memory";
    return g->err.msg;
}

gn_status gn_graph_errcode(const gn_graph *g) { return g ? g->err.code : GN_ERR_NOMEM; }

/* ---- name index -------------------------------------------------------------- */
static bool name_index_reserve(gn_graph *g, uint32_t name)
{
    if (name < g->node_of_name_cap) return true;
    uint32_t ncap = g->node_of_name_cap ? g->node_of_name_cap : 1024;
    while (ncap <= name) ncap *= 2;
    gn_id *p = realloc(g->node_of_name, (size_t)ncap * sizeof *p);
    if (!p) return false;
    for (uint32_t i = g->node_of_name_cap; i < ncap; i++) p[i] = GN_NONE;
    g->node_of_name = p;
    g->node_of_name_cap = ncap;
    return true;
}

gn_id gn__graph_find_n(const gn_graph *g, const char *name, size_t n)
{
    uint32_t id = gn__intern_find(g, name, n);
    if (id == UINT32_MAX || id >= g->node_of_name_cap) return GN_NONE;
    gn_id node = g->node_of_name[id];
    if (node != GN_NONE && (g->nodes[node].flags & GN__NODE_DEAD)) return GN_NONE;
    return node;
}

gn_id gn__graph_find(const gn_graph *g, const char *name) { return gn__graph_find_n(g, name, strlen(name)); }

/* ---- nodes ------------------------------------------------------------------- */
/* Registry index of an op name, cached per interned id (-2: not looked up). */
static int32_t resolve_opdef(gn_graph *g, uint32_t op)
{
    if (op >= g->opdef_cache_cap) {
        uint32_t ncap = g->opdef_cache_cap ? g->opdef_cache_cap : 256;
        while (ncap <= op) ncap *= 2;
        int32_t *p = realloc(g->opdef_cache, (size_t)ncap * sizeof *p);
        if (!p) return gn__op_find(gn__str(g, op), gn__strlen(g, op));
        for (uint32_t i = g->opdef_cache_cap; i < ncap; i++) p[i] = -2;
        g->opdef_cache = p;
        g->opdef_cache_cap = ncap;
    }
    if (g->opdef_cache[op] == -2) g->opdef_cache[op] = gn__op_find(gn__str(g, op), gn__strlen(g, op));
    return g->opdef_cache[op];
}

gn_status gn__node_add_interned(gn_graph *g, uint32_t name, uint32_t op, gn_id *out)
{
    if (!name_index_reserve(g, name)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    gn_id prev = g->node_of_name[name];
    if (prev != GN_NONE && !(g->nodes[prev].flags & GN__NODE_DEAD))
        return gn__fail(&g->err, GN_ERR_GRAPH, "duplicate node name '%s'", gn__str(g, name));
    if (g->n_nodes == UINT32_MAX - 1) return gn__fail(&g->err, GN_ERR_GRAPH, "too many nodes");
    if (g->node_cap && g->n_nodes >= g->node_cap) {
        g->node_cap_hit = true;
        return gn__fail(&g->err, GN_ERR_LIMIT, "cannot add node '%s': the graph holds %u nodes, its limit", gn__str(g, name),
                        g->n_nodes);
    }
    if (g->n_nodes == g->cap_nodes) {
        uint32_t ncap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        gn__node *nn = realloc(g->nodes, (size_t)ncap * sizeof *nn);
        if (!nn) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        g->nodes = nn;
        g->cap_nodes = ncap;
    }
    gn_id id = g->n_nodes++;
    gn__node *n = &g->nodes[id];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->op = op;
    n->opdef = resolve_opdef(g, op);
    n->orig_index = id;
    g->node_of_name[name] = id;
    g->n_live++;
    gn__attachment_drop(&g->shapes);
    if (out) *out = id;
    return GN_OK;
}

gn_status gn__node_add(gn_graph *g, const char *name, const char *op, gn_id *out)
{
    uint32_t nm = gn__intern_cstr(g, name), o = gn__intern_cstr(g, op);
    if (nm == UINT32_MAX || o == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    return gn__node_add_interned(g, nm, o, out);
}

void gn__node_set_device(gn_graph *g, gn_id id, const char *device)
{
    uint32_t d = gn__intern_cstr(g, device);
    if (d != UINT32_MAX) g->nodes[id].device = d;
}

gn_status gn__node_set_op(gn_graph *g, gn_id id, const char *op)
{
    uint32_t o = gn__intern_cstr(g, op);
    if (o == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    g->nodes[id].op = o;
    g->nodes[id].opdef = resolve_opdef(g, o);
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

/* ---- fanouts ----------------------------------------------------------------- */
static gn_status use_add(gn_graph *g, gn_id producer, gn_id consumer, uint32_t slot)
{
    gn__node *p = &g->nodes[producer];
    if (!GROW(g, p->use, p->n_use, p->cap_use)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    p->use[p->n_use++] = (gn__use){consumer, slot};
    return GN_OK;
}

static void use_remove(gn_graph *g, gn_id producer, gn_id consumer, uint32_t slot)
{
    gn__node *p = &g->nodes[producer];
    for (uint32_t i = 0; i < p->n_use; i++) {
        if (p->use[i].node == consumer && p->use[i].slot == slot) {
            /* keep order: consumers are listed in the order edges were made */
            memmove(&p->use[i], &p->use[i + 1], (size_t)(p->n_use - i - 1) * sizeof *p->use);
            p->n_use--;
            return;
        }
    }
}

static void use_reslot(gn_graph *g, gn_id producer, gn_id consumer, uint32_t from, uint32_t to)
{
    gn__node *p = &g->nodes[producer];
    for (uint32_t i = 0; i < p->n_use; i++)
        if (p->use[i].node == consumer && p->use[i].slot == from) {
            p->use[i].slot = to;
            return;
        }
}

static gn_status cuse_add(gn_graph *g, gn_id producer, gn_id consumer)
{
    gn__node *p = &g->nodes[producer];
    if (!GROW(g, p->cuse, p->n_cuse, p->cap_cuse)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    p->cuse[p->n_cuse++] = consumer;
    return GN_OK;
}

static void cuse_remove(gn_graph *g, gn_id producer, gn_id consumer)
{
    gn__node *p = &g->nodes[producer];
    for (uint32_t i = 0; i < p->n_cuse; i++)
        if (p->cuse[i] == consumer) {
            memmove(&p->cuse[i], &p->cuse[i + 1], (size_t)(p->n_cuse - i - 1) * sizeof *p->cuse);
            p->n_cuse--;
            return;
        }
}

gn_status gn__graph_build_fanouts(gn_graph *g)
{
    uint32_t *nu = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *nu);
    uint32_t *nc = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *nc);
    if (!nu || !nc) {
        free(nu);
        free(nc);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_in; k++) nu[n->in[k].node]++;
        for (uint32_t k = 0; k < n->n_ctrl; k++) nc[n->ctrl[k]]++;
    }
    size_t tu = 0, tc = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        tu += nu[i];
        tc += nc[i];
    }
    gn__use *ubase = gn__arena_alloc(&g->arena, (tu ? tu : 1) * sizeof *ubase, 8);
    gn_id *cbase = gn__arena_alloc(&g->arena, (tc ? tc : 1) * sizeof *cbase, 8);
    if (!ubase || !cbase) {
        free(nu);
        free(nc);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        n->use = ubase;
        n->cap_use = nu[i];
        n->n_use = 0;
        ubase += nu[i];
        n->cuse = cbase;
        n->cap_cuse = nc[i];
        n->n_cuse = 0;
        cbase += nc[i];
    }
    for (gn_id i = 0; i < g->n_nodes; i++) {
        /* producers are anywhere in memory: ask for the records of those of
         * node i + 8, then for the slots those of node i + 4 will fill */
        if (i + 8 < g->n_nodes && !(g->nodes[i + 8].flags & GN__NODE_DEAD)) {
            const gn__node *a = &g->nodes[i + 8];
            for (uint32_t k = 0; k < a->n_in; k++) GN__PREFETCH(&g->nodes[a->in[k].node].use);
        }
        if (i + 4 < g->n_nodes && !(g->nodes[i + 4].flags & GN__NODE_DEAD)) {
            const gn__node *a = &g->nodes[i + 4];
            for (uint32_t k = 0; k < a->n_in; k++) {
                const gn__node *p = &g->nodes[a->in[k].node];
                GN__PREFETCH(&p->use[p->n_use]);
            }
        }
        gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_in; k++) {
            gn__node *p = &g->nodes[n->in[k].node];
            p->use[p->n_use++] = (gn__use){i, k};
        }
        for (uint32_t k = 0; k < n->n_ctrl; k++) {
            gn__node *p = &g->nodes[n->ctrl[k]];
            p->cuse[p->n_cuse++] = i;
        }
    }
    free(nu);
    free(nc);
    return GN_OK;
}

/* ---- edges ------------------------------------------------------------------- */
static gn_status check_producer(gn_graph *g, gn_id id, gn_id producer)
{
    if (!gn__node_live(g, producer))
        return gn__fail(&g->err, GN_ERR_GRAPH, "node '%s': input names a removed or invalid node",
                        gn__node_name(g, id));
    return GN_OK;
}

gn_status gn__node_add_input(gn_graph *g, gn_id id, gn__edge src)
{
    GN_TRY(check_producer(g, id, src.node));
    gn__node *n = &g->nodes[id];
    if (!GROW(g, n->in, n->n_in, n->cap_in)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    n->in[n->n_in] = src;
    GN_TRY(use_add(g, src.node, id, n->n_in));
    n->n_in++;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

gn_status gn__node_set_input(gn_graph *g, gn_id id, uint32_t slot, gn__edge src)
{
    GN_TRY(check_producer(g, id, src.node));
    gn__node *n = &g->nodes[id];
    if (slot >= n->n_in)
        return gn__fail(&g->err, GN_ERR_ARG, "node '%s': no input %u", gn__node_name(g, id), slot);
    gn__edge old = n->in[slot];
    if (old.node == src.node && old.index == src.index) return GN_OK;
    GN_TRY(use_add(g, src.node, id, slot));
    use_remove(g, old.node, id, slot);
    n->in[slot] = src;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

gn_status gn__node_remove_input(gn_graph *g, gn_id id, uint32_t slot)
{
    gn__node *n = &g->nodes[id];
    if (slot >= n->n_in)
        return gn__fail(&g->err, GN_ERR_ARG, "node '%s': no input %u", gn__node_name(g, id), slot);
    use_remove(g, n->in[slot].node, id, slot);
    for (uint32_t k = slot + 1; k < n->n_in; k++) {
        use_reslot(g, n->in[k].node, id, k, k - 1);
        n->in[k - 1] = n->in[k];
    }
    n->n_in--;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

gn_status gn__node_add_control(gn_graph *g, gn_id id, gn_id dep)
{
    GN_TRY(check_producer(g, id, dep));
    gn__node *n = &g->nodes[id];
    /* id depends on dep exactly when dep lists id as a control consumer: look
     * in the shorter of the two lists (an engine node gathers thousands of
     * control inputs, each of whose producers has a few control consumers) */
    const gn__node *d = &g->nodes[dep];
    if (n->n_ctrl <= d->n_cuse) {
        for (uint32_t k = 0; k < n->n_ctrl; k++)
            if (n->ctrl[k] == dep) return GN_OK;
    } else {
        for (uint32_t k = 0; k < d->n_cuse; k++)
            if (d->cuse[k] == id) return GN_OK;
    }
    if (!GROW(g, n->ctrl, n->n_ctrl, n->cap_ctrl)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(cuse_add(g, dep, id));
    n->ctrl[n->n_ctrl++] = dep;
    return GN_OK;
}

gn_status gn__node_remove_control(gn_graph *g, gn_id id, gn_id dep)
{
    gn__node *n = &g->nodes[id];
    for (uint32_t k = 0; k < n->n_ctrl; k++) {
        if (n->ctrl[k] == dep) {
            memmove(&n->ctrl[k], &n->ctrl[k + 1], (size_t)(n->n_ctrl - k - 1) * sizeof *n->ctrl);
            n->n_ctrl--;
            cuse_remove(g, dep, id);
            return GN_OK;
        }
    }
    return GN_OK;
}

gn_status gn__graph_forward_output(gn_graph *g, gn__edge from, gn__edge to)
{
    return gn__graph_forward_output_if(g, from, to, NULL, NULL);
}

/* true when the use u of output `index` is to be forwarded */
static bool forward_pick(const gn_graph *g, gn__use u, uint32_t index, gn__consumer_pred skip, const void *ctx)
{
    return g->nodes[u.node].in[u.slot].index == index && !(skip && skip(ctx, u.node));
}

gn_status gn__graph_forward_output_if(gn_graph *g, gn__edge from, gn__edge to, gn__consumer_pred skip,
                                      const void *ctx)
{
    GN_TRY(check_producer(g, from.node, to.node));
    if (from.node == to.node && from.index == to.index) return GN_OK;
    /* one sweep over the producer's fanouts: rewire matching consumers, append
     * their uses to `to`, and compact the producer's list in place, so that
     * forwarding k consumers costs O(fanout), never O(k^2) */
    gn__node *p = &g->nodes[from.node];
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n_use; i++) n += forward_pick(g, p->use[i], from.index, skip, ctx);
    if (!n) return GN_OK;
    if (from.node == to.node) {
        /* same producer, another output: the uses stay, only indices change */
        for (uint32_t i = 0; i < p->n_use; i++)
            if (forward_pick(g, p->use[i], from.index, skip, ctx))
                g->nodes[p->use[i].node].in[p->use[i].slot].index = to.index;
        gn__attachment_drop(&g->shapes);
        return GN_OK;
    }
    gn__node *t = &g->nodes[to.node];
    if (t->n_use + n > t->cap_use) {
        uint32_t ncap = t->cap_use ? t->cap_use : 2;
        while (ncap < t->n_use + n) ncap *= 2;
        gn__use *nu = gn__arena_alloc(&g->arena, (size_t)ncap * sizeof *nu, 8);
        if (!nu) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        if (t->n_use) memcpy(nu, t->use, (size_t)t->n_use * sizeof *nu);
        t->use = nu;
        t->cap_use = ncap;
    }
    p = &g->nodes[from.node];
    uint32_t keep = 0;
    for (uint32_t i = 0; i < p->n_use; i++) {
        gn__use u = p->use[i];
        if (forward_pick(g, u, from.index, skip, ctx)) {
            g->nodes[u.node].in[u.slot] = to;
            t->use[t->n_use++] = u;
        } else {
            p->use[keep++] = u;
        }
    }
    p->n_use = keep;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

gn_status gn__graph_forward_control(gn_graph *g, gn_id from, gn_id to)
{
    if (from == to) return GN_OK; /* else each consumer is re-added to from's list forever */
    gn__node *p = &g->nodes[from];
    while (p->n_cuse) {
        gn_id c = p->cuse[p->n_cuse - 1];
        GN_TRY(gn__node_remove_control(g, c, from));
        if (c != to) GN_TRY(gn__node_add_control(g, c, to));
        p = &g->nodes[from];
    }
    return GN_OK;
}

gn_status gn__node_remove(gn_graph *g, gn_id id)
{
    gn__node *n = &g->nodes[id];
    if (n->flags & GN__NODE_DEAD) return GN_OK;
    if (n->n_use) {
        gn_id c = n->use[0].node;
        return gn__fail(&g->err, GN_ERR_GRAPH, "cannot remove node '%s': node '%s' still consumes it",
                        gn__node_name(g, id), gn__node_name(g, c));
    }
    while (n->n_cuse) {
        GN_TRY(gn__node_remove_control(g, n->cuse[n->n_cuse - 1], id));
        n = &g->nodes[id];
    }
    for (uint32_t k = 0; k < n->n_in; k++) use_remove(g, n->in[k].node, id, k);
    for (uint32_t k = 0; k < n->n_ctrl; k++) cuse_remove(g, n->ctrl[k], id);
    n->n_in = n->n_ctrl = 0;
    n->flags |= GN__NODE_DEAD;
    if (g->node_of_name[n->name] == id) g->node_of_name[n->name] = GN_NONE;
    g->n_live--;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

/* A set of node ids (open addressing, GN_NONE empty), for the nodes whose
 * lists a batch removal compacts: each is compacted once however many
 * removed nodes it is linked to. */
typedef struct id_set {
    gn_id *slot;
    uint32_t mask;
} id_set;

/* true when x was not in the set yet */
static bool id_set_add(id_set *s, gn_id x)
{
    uint32_t h = (uint32_t)(x * 2654435761u) & s->mask;
    while (s->slot[h] != GN_NONE) {
        if (s->slot[h] == x) return false;
        h = (h + 1) & s->mask;
    }
    s->slot[h] = x;
    return true;
}

/* The nodes a batch removal takes out: a bitmap over their id range when it
 * is small next to the work already done (a compacted list is then read
 * without touching its consumers' nodes), else their dead marks. */
typedef struct removal {
    const gn_graph *g;
    uint64_t *bits;
    gn_id lo, hi;
} removal;

static bool removing(const removal *r, gn_id id)
{
    if (!r->bits) return (r->g->nodes[id].flags & GN__NODE_DEAD) != 0;
    return id >= r->lo && id <= r->hi && ((r->bits[(id - r->lo) >> 6] >> ((id - r->lo) & 63)) & 1);
}

/* Drops the entries naming removed nodes from a surviving node's fanouts and
 * control inputs, keeping the order of the others. */
static void drop_removed_links(gn_graph *g, const removal *r, gn_id id)
{
    gn__node *n = &g->nodes[id];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->n_use; i++)
        if (!removing(r, n->use[i].node)) n->use[k++] = n->use[i];
    n->n_use = k;
    k = 0;
    for (uint32_t i = 0; i < n->n_cuse; i++)
        if (!removing(r, n->cuse[i])) n->cuse[k++] = n->cuse[i];
    n->n_cuse = k;
    k = 0;
    for (uint32_t i = 0; i < n->n_ctrl; i++)
        if (!removing(r, n->ctrl[i])) n->ctrl[k++] = n->ctrl[i];
    n->n_ctrl = k;
}

gn_status gn__nodes_remove(gn_graph *g, const gn_id *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] >= g->n_nodes)
            return gn__fail(&g->err, GN_ERR_ARG, "cannot remove node id %u: the graph has %u node(s)",
                            (unsigned)ids[i], (unsigned)g->n_nodes);
    /* the live nodes of the set, once each, marked dead from here on (how a
     * repeat is told, and the membership test when there is no bitmap) */
    gn_id *set = malloc((n ? n : 1) * sizeof *set);
    if (!set) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    uint32_t ns = 0;
    size_t links = 0;
    removal r = {g, NULL, GN_NONE, 0};
    for (uint32_t i = 0; i < n; i++) {
        gn__node *x = &g->nodes[ids[i]];
        if (x->flags & GN__NODE_DEAD) continue;
        x->flags |= GN__NODE_DEAD;
        set[ns++] = ids[i];
        links += (size_t)x->n_in + x->n_ctrl + x->n_cuse;
        if (ids[i] < r.lo) r.lo = ids[i];
        if (ids[i] > r.hi) r.hi = ids[i];
    }
    gn_status s = GN_OK;
    /* every data consumer must be removed too (checked before any change) */
    for (uint32_t i = 0; i < ns && s == GN_OK; i++) {
        const gn__node *x = &g->nodes[set[i]];
        for (uint32_t k = 0; k < x->n_use; k++) {
            gn_id c = x->use[k].node;
            if (g->nodes[c].flags & GN__NODE_DEAD) continue;
            s = gn__fail(&g->err, GN_ERR_GRAPH, "cannot remove node '%s': node '%s' still consumes it",
                         gn__node_name(g, set[i]), gn__node_name(g, c));
            break;
        }
    }
    /* the surviving nodes linked to the set (producers, control inputs,
     * control consumers), each compacted once */
    uint32_t cap = 2;
    while (cap < 2 * links + 2 && cap <= UINT32_MAX / 2) cap *= 2;
    id_set touched = {NULL, cap - 1};
    size_t words = ns ? (size_t)(r.hi - r.lo) / 64 + 1 : 0;
    bool bitmap = ns && words <= (size_t)ns + links;
    if (s == GN_OK) {
        touched.slot = malloc((size_t)cap * sizeof(gn_id));
        if (bitmap) r.bits = calloc(words, sizeof *r.bits);
        if (!touched.slot || (bitmap && !r.bits)) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    if (s != GN_OK) {
        for (uint32_t j = 0; j < ns; j++) g->nodes[set[j]].flags &= ~(uint32_t)GN__NODE_DEAD;
        free(touched.slot);
        free(r.bits);
        free(set);
        return s;
    }
    if (r.bits)
        for (uint32_t i = 0; i < ns; i++) r.bits[(set[i] - r.lo) >> 6] |= (uint64_t)1 << ((set[i] - r.lo) & 63);
    memset(touched.slot, 0xff, (size_t)cap * sizeof(gn_id));
    for (uint32_t i = 0; i < ns; i++) {
        const gn__node *x = &g->nodes[set[i]];
        for (uint32_t k = 0; k < x->n_in; k++) {
            gn_id p = x->in[k].node;
            if (!removing(&r, p) && id_set_add(&touched, p)) drop_removed_links(g, &r, p);
        }
        for (uint32_t k = 0; k < x->n_ctrl; k++) {
            gn_id p = x->ctrl[k];
            if (!removing(&r, p) && id_set_add(&touched, p)) drop_removed_links(g, &r, p);
        }
        for (uint32_t k = 0; k < x->n_cuse; k++) {
            gn_id c = x->cuse[k];
            if (!removing(&r, c) && id_set_add(&touched, c)) drop_removed_links(g, &r, c);
        }
    }
    for (uint32_t i = 0; i < ns; i++) {
        gn__node *x = &g->nodes[set[i]];
        x->n_in = x->n_ctrl = x->n_use = x->n_cuse = 0;
        if (g->node_of_name[x->name] == set[i]) g->node_of_name[x->name] = GN_NONE;
    }
    g->n_live -= ns;
    free(touched.slot);
    free(r.bits);
    free(set);
    if (ns) gn__attachment_drop(&g->shapes);
    return GN_OK;
}

/* ---- attrs ------------------------------------------------------------------- */
/* Index of key in the sorted attr list, or -(insertion point)-1. */
static int32_t attr_search(const gn_graph *g, const gn__node *n, const char *key, size_t klen)
{
    int32_t lo = 0, hi = (int32_t)n->n_attr - 1;
    while (lo <= hi) {
        int32_t mid = (lo + hi) / 2;
        const char *s = gn__str(g, n->attr[mid].key);
        uint32_t sl = gn__strlen(g, n->attr[mid].key);
        size_t m = sl < klen ? sl : klen;
        int c = memcmp(s, key, m);
        if (c == 0) c = (sl > klen) - (sl < klen);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -lo - 1;
}

const Tensorflow__AttrValue *gn__node_attr(const gn_graph *g, gn_id id, const char *key)
{
    const gn__node *n = &g->nodes[id];
    int32_t i = attr_search(g, n, key, strlen(key));
    return i >= 0 ? n->attr[i].value : NULL;
}

gn_status gn__node_set_attr(gn_graph *g, gn_id id, const char *key, const Tensorflow__AttrValue *value)
{
    gn__node *n = &g->nodes[id];
    size_t kl = strlen(key);
    int32_t i = attr_search(g, n, key, kl);
    gn__attachment_drop(&g->shapes);
    if (i >= 0) {
        n->attr[i].value = value;
        n->attr[i].enc = 0;
        return GN_OK;
    }
    uint32_t k = gn__intern(g, key, kl);
    if (k == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    uint32_t pos = (uint32_t)(-i - 1);
    if (!GROW(g, n->attr, n->n_attr, n->cap_attr)) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    memmove(&n->attr[pos + 1], &n->attr[pos], (size_t)(n->n_attr - pos) * sizeof *n->attr);
    n->attr[pos] = (gn__attr){.key = k, .value = value};
    n->n_attr++;
    return GN_OK;
}

gn_status gn__node_remove_attr(gn_graph *g, gn_id id, const char *key)
{
    gn__node *n = &g->nodes[id];
    int32_t i = attr_search(g, n, key, strlen(key));
    if (i < 0) return GN_OK;
    memmove(&n->attr[i], &n->attr[i + 1], (size_t)(n->n_attr - (uint32_t)i - 1) * sizeof *n->attr);
    n->n_attr--;
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

bool gn__attr_get_type(const gn_graph *g, gn_id id, const char *key, int *dtype)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE) return false;
    *dtype = (int)v->type;
    return true;
}

bool gn__attr_get_int(const gn_graph *g, gn_id id, const char *key, int64_t *out)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I) return false;
    *out = v->i;
    return true;
}

bool gn__attr_get_float(const gn_graph *g, gn_id id, const char *key, float *out)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_F) return false;
    *out = v->f;
    return true;
}

bool gn__attr_get_bool(const gn_graph *g, gn_id id, const char *key, bool *out)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_B) return false;
    *out = v->b != 0;
    return true;
}

bool gn__attr_get_string(const gn_graph *g, gn_id id, const char *key, const char **s, size_t *n)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S) return false;
    *s = (const char *)v->s.data;
    *n = v->s.len;
    return true;
}

/* ---- functions --------------------------------------------------------------- */
gn__function *gn__graph_find_function(const gn_graph *g, const char *name)
{
    const gn_graph *top = g->lib;
    uint32_t id = gn__intern_find(top, name, strlen(name));
    if (id == UINT32_MAX || id >= top->fn_of_name_cap) return NULL;
    int32_t f = top->fn_of_name[id];
    return f >= 0 ? &top->fns[f] : NULL;
}

gn_status gn__graph_add_function(gn_graph *g, const char *name, const Tensorflow__FunctionDef *def,
                                 gn_graph *body, gn__function **out)
{
    uint32_t id = gn__intern_cstr(g, name);
    if (id == UINT32_MAX) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    if (id >= g->fn_of_name_cap) {
        uint32_t ncap = g->fn_of_name_cap ? g->fn_of_name_cap : 256;
        while (ncap <= id) ncap *= 2;
        int32_t *p = realloc(g->fn_of_name, (size_t)ncap * sizeof *p);
        if (!p) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        for (uint32_t i = g->fn_of_name_cap; i < ncap; i++) p[i] = -1;
        g->fn_of_name = p;
        g->fn_of_name_cap = ncap;
    }
    if (g->fn_of_name[id] >= 0) return gn__fail(&g->err, GN_ERR_GRAPH, "duplicate function '%s'", name);
    if (g->n_fns == g->cap_fns) {
        uint32_t ncap = g->cap_fns ? g->cap_fns * 2 : 16;
        gn__function *nf = realloc(g->fns, (size_t)ncap * sizeof *nf);
        if (!nf) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        g->fns = nf;
        g->cap_fns = ncap;
    }
    gn__function *f = &g->fns[g->n_fns];
    memset(f, 0, sizeof *f);
    f->name = id;
    f->def = def;
    f->body = body;
    if (body) body->lib = g;
    if (def && def->signature) {
        gn__err e;
        gn__err_clear(&e);
        if (gn__opdef_from_proto(def->signature, &g->arena, &f->sig, &e) != GN_OK)
            return gn__fail(&g->err, e.code, "function '%s': %s", name, e.msg);
    }
    g->fn_of_name[id] = (int32_t)g->n_fns++;
    if (out) *out = f;
    return GN_OK;
}

const gn__opdef *gn__node_opdef(const gn_graph *g, gn_id id)
{
    const gn__node *n = &g->nodes[id];
    if (n->opdef >= 0) return gn__op_at((uint32_t)n->opdef);
    const gn_graph *top = g->lib;
    if (!top->n_fns) return NULL;
    gn__function *f = gn__graph_find_function(g, gn__str(g, n->op));
    return f ? f->sig : NULL;
}

int32_t gn__node_num_outputs(const gn_graph *g, gn_id id)
{
    const gn__node *n = &g->nodes[id];
    if (n->flags & GN__NODE_FN_ARG) return 1;
    if (n->flags & GN__NODE_FN_RET) return 0;
    const gn__opdef *op = gn__node_opdef(g, id);
    if (!op) return -1;
    uint32_t k;
    gn__err e;
    if (gn__op_num_outputs(op, g, id, &k, &e) != GN_OK) return -1;
    return (int32_t)k;
}

/* ---- topological order --------------------------------------------------------- */
gn_status gn__graph_topo(gn_graph *g, gn_id **order_out, uint32_t *n_out)
{
    *order_out = NULL;
    *n_out = 0;
    uint32_t N = g->n_nodes;
    uint32_t *indeg = calloc(N ? N : 1, sizeof *indeg);
    gn_id *order = malloc((N ? N : 1) * sizeof *order);
    uint8_t *ni = calloc(N ? N : 1, 1);
    if (!indeg || !order || !ni) {
        free(indeg);
        free(order);
        free(ni);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    uint32_t op_ni = gn__intern_find(g, "NextIteration", 13), op_rni = gn__intern_find(g, "RefNextIteration", 16);
    bool any_ni = false;
    for (gn_id i = 0; (op_ni != UINT32_MAX || op_rni != UINT32_MAX) && i < N; i++) {
        ni[i] = !(g->nodes[i].flags & GN__NODE_DEAD) && (g->nodes[i].op == op_ni || g->nodes[i].op == op_rni);
        any_ni |= ni[i];
    }
    uint32_t head = 0, tail = 0;
    for (gn_id i = 0; i < N; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (!any_ni) {
            /* no back edge to leave out: every input counts (the common
             * case, without a look at the producers) */
            indeg[i] = n->n_in + n->n_ctrl;
        } else {
            for (uint32_t k = 0; k < n->n_in; k++)
                if (!ni[n->in[k].node]) indeg[i]++;
            for (uint32_t k = 0; k < n->n_ctrl; k++)
                if (!ni[n->ctrl[k]]) indeg[i]++;
        }
        if (indeg[i] == 0) order[tail++] = i;
    }
    /* The queue is walked in order, so the memory a node will need is known a
     * few places ahead: its record is fetched when it is queued and its
     * consumer lists PF places before it is reached (the loop is otherwise a
     * cache miss per node on large graphs). */
    enum { PF = 8 };
    for (uint32_t k = 0; k < tail && k < PF; k++) GN__PREFETCH(&g->nodes[order[k]].use);
    while (head < tail) {
        if (head + PF < tail) {
            const gn__node *a = &g->nodes[order[head + PF]];
            GN__PREFETCH(a->use);
            GN__PREFETCH(a->cuse);
        }

        gn_id id = order[head++];
        if (ni[id]) continue; /* its consumers were not counted */
        const gn__node *n = &g->nodes[id];
        for (uint32_t k = 0; k < n->n_use; k++) {
            gn_id c = n->use[k].node;
            if (--indeg[c] == 0) {
                order[tail++] = c;
                GN__PREFETCH(&g->nodes[c].use);
            }
        }
        for (uint32_t k = 0; k < n->n_cuse; k++) {
            gn_id c = n->cuse[k];
            if (--indeg[c] == 0) {
                order[tail++] = c;
                GN__PREFETCH(&g->nodes[c].use);
            }
        }
    }
    if (tail != g->n_live) {
        /* name a node that is on a cycle: walk predecessors that are still
         * blocked until one repeats */
        gn_id start = GN_NONE;
        for (gn_id i = 0; i < N && start == GN_NONE; i++)
            if (!(g->nodes[i].flags & GN__NODE_DEAD) && indeg[i] > 0) start = i;
        uint8_t *seen = calloc(N, 1);
        gn_id cur = start;
        while (seen && cur != GN_NONE && !seen[cur]) {
            seen[cur] = 1;
            const gn__node *n = &g->nodes[cur];
            gn_id next = GN_NONE;
            for (uint32_t k = 0; k < n->n_in && next == GN_NONE; k++)
                if (!ni[n->in[k].node] && indeg[n->in[k].node] > 0) next = n->in[k].node;
            for (uint32_t k = 0; k < n->n_ctrl && next == GN_NONE; k++)
                if (!ni[n->ctrl[k]] && indeg[n->ctrl[k]] > 0) next = n->ctrl[k];
            if (next == GN_NONE) break;
            cur = next;
        }
        free(seen);
        free(indeg);
        free(order);
        free(ni);
        return gn__fail(&g->err, GN_ERR_GRAPH, "node '%s' (%s): cycle in the graph outside a loop",
                        gn__node_name(g, cur), gn__node_op(g, cur));
    }
    free(indeg);
    free(ni);
    *order_out = order;
    *n_out = tail;
    return GN_OK;
}

/* ---- compaction -------------------------------------------------------------- */
gn_status gn__graph_compact(gn_graph *g)
{
    if (g->n_live == g->n_nodes) return GN_OK;
    gn_id *map = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *map);
    if (!map) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    gn_id k = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) map[i] = (g->nodes[i].flags & GN__NODE_DEAD) ? GN_NONE : k++;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (map[i] == GN_NONE) continue;
        gn__node *n = &g->nodes[i];
        for (uint32_t j = 0; j < n->n_in; j++) n->in[j].node = map[n->in[j].node];
        for (uint32_t j = 0; j < n->n_ctrl; j++) n->ctrl[j] = map[n->ctrl[j]];
        for (uint32_t j = 0; j < n->n_use; j++) n->use[j].node = map[n->use[j].node];
        for (uint32_t j = 0; j < n->n_cuse; j++) n->cuse[j] = map[n->cuse[j]];
        g->nodes[map[i]] = *n;
    }
    for (uint32_t i = 0; i < g->node_of_name_cap; i++)
        if (g->node_of_name[i] != GN_NONE) g->node_of_name[i] = map[g->node_of_name[i]];
    if (g->kind == GN__GRAPH_FUNCTION) {
        /* control_ret ids live in the owning function record */
        gn_graph *top = (gn_graph *)g->lib;
        for (uint32_t f = 0; f < top->n_fns; f++) {
            gn__function *fn = &top->fns[f];
            if (fn->body != g) continue;
            for (uint32_t j = 0; j < fn->n_control_ret; j++)
                if (fn->control_ret_node[j] != GN_NONE) fn->control_ret_node[j] = map[fn->control_ret_node[j]];
        }
    }
    g->n_nodes = k;
    free(map);
    gn__attachment_drop(&g->shapes);
    return GN_OK;
}

/* ---- clone ------------------------------------------------------------------- */
/* Copies the interned strings with the same ids, and the hash slots as they
 * are (the slots depend only on the bytes and the table size, never on where
 * the strings live), so no string is hashed again: the strings go into one
 * block of dst's arena. dst holds only "" (id 0). */
static gn_status clone_strtab(const gn_graph *src, gn_graph *dst)
{
    const gn__strtab *s = &src->names;
    gn__strtab *d = &dst->names;
    if (s->n <= 1 || s->nslots == 0) return GN_OK;
    size_t bytes = 0;
    for (uint32_t i = 1; i < s->n; i++) bytes += (size_t)s->len[i] + 1;
    char *block = gn__arena_alloc(&dst->arena, bytes, 1);
    const char **str = malloc((size_t)s->cap * sizeof *str);
    uint32_t *len = malloc((size_t)s->cap * sizeof *len);
    uint64_t *slots = malloc((size_t)s->nslots * sizeof *slots);
    if (!block || !str || !len || !slots) {
        free(str);
        free(len);
        free(slots);
        return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
    }
    str[0] = d->str[0];
    len[0] = 0;
    for (uint32_t i = 1; i < s->n; i++) {
        memcpy(block, s->str[i], (size_t)s->len[i] + 1);
        str[i] = block;
        len[i] = s->len[i];
        block += (size_t)s->len[i] + 1;
    }
    memcpy(slots, s->slots, (size_t)s->nslots * sizeof *slots);
    free(d->str);
    free(d->len);
    free(d->slots);
    d->str = str;
    d->len = len;
    d->slots = slots;
    d->n = s->n;
    d->cap = s->cap;
    d->nslots = s->nslots;
    return GN_OK;
}

static gn_status clone_into(const gn_graph *src, gn_graph *dst)
{
    /* strings: same ids */
    GN_TRY(clone_strtab(src, dst));
    for (uint32_t i = 0; i < src->n_blobs; i++)
        if (src->blobs[i] != src->own) GN_TRY(gn__graph_adopt_blob(dst, src->blobs[i]));
    GN_TRY(gn__graph_adopt_blob(dst, src->own));
    dst->nodes = malloc((src->n_nodes ? src->n_nodes : 1) * sizeof *dst->nodes);
    if (!dst->nodes) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
    dst->cap_nodes = src->n_nodes ? src->n_nodes : 1;
    if (src->node_of_name_cap) {
        dst->node_of_name = malloc(src->node_of_name_cap * sizeof *dst->node_of_name);
        if (!dst->node_of_name) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
        memcpy(dst->node_of_name, src->node_of_name, src->node_of_name_cap * sizeof *dst->node_of_name);
        dst->node_of_name_cap = src->node_of_name_cap;
    }
    /* every node's arrays in one block of the arena, each 8-byte aligned */
    size_t total = 0;
#define GN__CLONE_SZ(cnt, T) ((((size_t)(cnt) * sizeof(T)) + 7) & ~(size_t)7)
    for (gn_id i = 0; i < src->n_nodes; i++) {
        const gn__node *s = &src->nodes[i];
        total += GN__CLONE_SZ(s->n_in, gn__edge) + GN__CLONE_SZ(s->n_ctrl, gn_id) + GN__CLONE_SZ(s->n_attr, gn__attr) +
                 GN__CLONE_SZ(s->n_use, gn__use) + GN__CLONE_SZ(s->n_cuse, gn_id);
    }
    char *block = gn__arena_alloc(&dst->arena, total ? total : 1, 8);
    if (!block) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
    for (gn_id i = 0; i < src->n_nodes; i++) {
        const gn__node *s = &src->nodes[i];
        gn__node *d = &dst->nodes[i];
        *d = *s;
#define GN__CLONE_ARR(field, cnt, T)                                                                                   \
    do {                                                                                                               \
        d->field = (T *)(void *)block;                                                                                 \
        if (cnt) memcpy(block, s->field, (size_t)(cnt) * sizeof(T));                                                   \
        block += GN__CLONE_SZ(cnt, T);                                                                                 \
    } while (0)
        GN__CLONE_ARR(in, s->n_in, gn__edge);
        GN__CLONE_ARR(ctrl, s->n_ctrl, gn_id);
        GN__CLONE_ARR(attr, s->n_attr, gn__attr);
        GN__CLONE_ARR(use, s->n_use, gn__use);
        GN__CLONE_ARR(cuse, s->n_cuse, gn_id);
#undef GN__CLONE_ARR
        d->cap_in = s->n_in;
        d->cap_ctrl = s->n_ctrl;
        d->cap_attr = s->n_attr;
        d->cap_use = s->n_use;
        d->cap_cuse = s->n_cuse;
        if (s->outargs) {
            gn__outarg_map *m = gn__arena_alloc(&dst->arena, sizeof *m, 8);
            if (!m) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
            m->n = s->outargs->n;
            m->name = gn__arena_memdup(&dst->arena, s->outargs->name, m->n * sizeof *m->name);
            m->base = gn__arena_memdup(&dst->arena, s->outargs->base, m->n * sizeof *m->base);
            if (!m->name || !m->base) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
            d->outargs = m;
        }
    }
#undef GN__CLONE_SZ
    dst->n_nodes = src->n_nodes;
    dst->n_live = src->n_live;
    dst->versions = src->versions;
    dst->deprecated_version = src->deprecated_version;
    dst->extra = src->extra;
    dst->lib_extra = src->lib_extra;
    if (src->n_encs) {
        /* the bytes live in the blobs adopted above */
        dst->encs = malloc((size_t)src->n_encs * sizeof *dst->encs);
        if (!dst->encs) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
        memcpy(dst->encs, src->encs, (size_t)src->n_encs * sizeof *dst->encs);
        dst->n_encs = dst->cap_encs = src->n_encs;
    }
    gn__attachment_share(&dst->saved, &src->saved);
    gn__attachment_share(&dst->engines, &src->engines);
    gn__attachment_share(&dst->shapes, &src->shapes);
    if (src->source) {
        dst->source = strdup(src->source);
        if (!dst->source) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t f = 0; f < src->n_fns; f++) {
        const gn__function *sf = &src->fns[f];
        gn_graph *body = NULL;
        if (sf->body) {
            body = gn__graph_new(GN__GRAPH_FUNCTION);
            if (!body) return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
            gn_status s = clone_into(sf->body, body);
            if (s != GN_OK) {
                gn__fail(&dst->err, s, "%s", body->err.msg);
                gn_graph_free(body);
                return s;
            }
        }
        gn__function *df = NULL;
        gn_status s = gn__graph_add_function(dst, gn__str(src, sf->name), sf->def, body, &df);
        if (s != GN_OK) {
            gn_graph_free(body);
            return s;
        }
        df->n_control_ret = sf->n_control_ret;
        if (sf->n_control_ret) {
            df->control_ret_name = gn__arena_memdup(&dst->arena, sf->control_ret_name,
                                                    sf->n_control_ret * sizeof *sf->control_ret_name);
            df->control_ret_node = gn__arena_memdup(&dst->arena, sf->control_ret_node,
                                                    sf->n_control_ret * sizeof *sf->control_ret_node);
            if (!df->control_ret_name || !df->control_ret_node)
                return gn__fail(&dst->err, GN_ERR_NOMEM, "out of memory");
        }
    }
    return GN_OK;
}

gn_status gn__graph_clone(const gn_graph *g, gn_graph **out)
{
    *out = NULL;
    gn_graph *c = gn__graph_new(g->kind);
    if (!c) return GN_ERR_NOMEM;
    gn_status s = clone_into(g, c);
    if (s != GN_OK) {
        gn_graph_free(c);
        return s;
    }
    c->fsync_writes = g->fsync_writes;
    *out = c;
    return GN_OK;
}

void gn_graph_set_fsync(gn_graph *g, int on)
{
    if (g) g->fsync_writes = on != 0;
}

gn_status gn_graph_clone(const gn_graph *g, gn_graph **out)
{
    if (!g || !out) return GN_ERR_ARG;
    return gn__graph_clone(g, out);
}

/* ---- fanout check ------------------------------------------------------------ */
static int cmp_use(const void *a, const void *b)
{
    const gn__use *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

static int cmp_id(const void *a, const void *b)
{
    gn_id x = *(const gn_id *)a, y = *(const gn_id *)b;
    return (x > y) - (x < y);
}

gn_status gn__graph_check_fanouts(gn_graph *g)
{
    /* recount from inputs, compare as sorted multisets per node */
    uint32_t N = g->n_nodes;
    uint32_t *nu = calloc(N ? N : 1, sizeof *nu), *nc = calloc(N ? N : 1, sizeof *nc);
    if (!nu || !nc) {
        free(nu);
        free(nc);
        return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    for (gn_id i = 0; i < N; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_in; k++) nu[n->in[k].node]++;
        for (uint32_t k = 0; k < n->n_ctrl; k++) nc[n->ctrl[k]]++;
    }
    gn_status s = GN_OK;
    for (gn_id i = 0; i < N && s == GN_OK; i++) {
        const gn__node *n = &g->nodes[i];
        if (n->flags & GN__NODE_DEAD) continue;
        if (n->n_use != nu[i] || n->n_cuse != nc[i]) {
            s = gn__fail(&g->err, GN_ERR_INTERNAL, "node '%s': fanout count %u/%u, expected %u/%u",
                         gn__node_name(g, i), n->n_use, n->n_cuse, nu[i], nc[i]);
            break;
        }
        for (uint32_t k = 0; k < n->n_use; k++) {
            gn__use u = n->use[k];
            const gn__node *c = &g->nodes[u.node];
            if (u.slot >= c->n_in || c->in[u.slot].node != i) {
                s = gn__fail(&g->err, GN_ERR_INTERNAL, "node '%s': stale fanout to '%s' slot %u",
                             gn__node_name(g, i), gn__node_name(g, u.node), u.slot);
                break;
            }
        }
        if (s != GN_OK) break;
        /* duplicates in use lists would pass the checks above only if counts
         * also match, which a duplicate breaks unless an edge is missing */
        gn__use *tmp = malloc((n->n_use ? n->n_use : 1) * sizeof *tmp);
        gn_id *tc = malloc((n->n_cuse ? n->n_cuse : 1) * sizeof *tc);
        if (!tmp || !tc) {
            free(tmp);
            free(tc);
            s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        if (n->n_use) memcpy(tmp, n->use, n->n_use * sizeof *tmp);   /* use is NULL on a new node */
        if (n->n_cuse) memcpy(tc, n->cuse, n->n_cuse * sizeof *tc);
        qsort(tmp, n->n_use, sizeof *tmp, cmp_use);
        qsort(tc, n->n_cuse, sizeof *tc, cmp_id);
        for (uint32_t k = 1; k < n->n_use && s == GN_OK; k++)
            if (tmp[k].node == tmp[k - 1].node && tmp[k].slot == tmp[k - 1].slot)
                s = gn__fail(&g->err, GN_ERR_INTERNAL, "node '%s': duplicate fanout", gn__node_name(g, i));
        for (uint32_t k = 0; k < n->n_cuse && s == GN_OK; k++) {
            const gn__node *c = &g->nodes[tc[k]];
            bool found = false;
            for (uint32_t j = 0; j < c->n_ctrl; j++) found |= c->ctrl[j] == i;
            if (!found || (k > 0 && tc[k] == tc[k - 1]))
                s = gn__fail(&g->err, GN_ERR_INTERNAL, "node '%s': stale control fanout to '%s'",
                             gn__node_name(g, i), gn__node_name(g, tc[k]));
        }
        free(tmp);
        free(tc);
    }
    free(nu);
    free(nc);
    return s;
}

/* ---- public inspection -------------------------------------------------------- */
size_t gn_graph_node_count(const gn_graph *g) { return g ? g->n_live : 0; }

static gn_id public_id(const gn_graph *g, size_t i)
{
    /* the public index is the id once compacted; with tombstones, count live ones */
    if (g->n_live == g->n_nodes) return i < g->n_nodes ? (gn_id)i : GN_NONE;
    size_t k = 0;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (g->nodes[id].flags & GN__NODE_DEAD) continue;
        if (k++ == i) return id;
    }
    return GN_NONE;
}

const char *gn_graph_node_name(const gn_graph *g, size_t i)
{
    gn_id id = g ? public_id(g, i) : GN_NONE;
    return id == GN_NONE ? NULL : gn__node_name(g, id);
}

const char *gn_graph_node_op(const gn_graph *g, size_t i)
{
    gn_id id = g ? public_id(g, i) : GN_NONE;
    return id == GN_NONE ? NULL : gn__node_op(g, id);
}

const char *gn_graph_node_device(const gn_graph *g, size_t i)
{
    gn_id id = g ? public_id(g, i) : GN_NONE;
    return id == GN_NONE ? NULL : gn__str(g, g->nodes[id].device);
}

size_t gn_graph_node_input_count(const gn_graph *g, size_t i)
{
    gn_id id = g ? public_id(g, i) : GN_NONE;
    return id == GN_NONE ? 0 : (size_t)g->nodes[id].n_in + g->nodes[id].n_ctrl;
}

gn_status gn_graph_node_input(const gn_graph *g, size_t i, size_t k, char *buf, size_t buflen)
{
    gn_id id = g ? public_id(g, i) : GN_NONE;
    if (id == GN_NONE || !buf || !buflen) return GN_ERR_ARG;
    const gn__node *n = &g->nodes[id];
    if (k < n->n_in) {
        gn__edge e = n->in[k];
        if (e.index == 0) snprintf(buf, buflen, "%s", gn__node_name(g, e.node));
        else snprintf(buf, buflen, "%s:%u", gn__node_name(g, e.node), e.index);
        return GN_OK;
    }
    k -= n->n_in;
    if (k < n->n_ctrl) {
        snprintf(buf, buflen, "^%s", gn__node_name(g, n->ctrl[k]));
        return GN_OK;
    }
    return GN_ERR_ARG;
}

size_t gn_graph_function_count(const gn_graph *g) { return g ? g->n_fns : 0; }

const char *gn_graph_function_name(const gn_graph *g, size_t i)
{
    return g && i < g->n_fns ? gn__str(g, g->fns[i].name) : NULL;
}

size_t gn_graph_function_node_count(const gn_graph *g, size_t i)
{
    if (!g || i >= g->n_fns || !g->fns[i].body) return 0;
    const gn_graph *b = g->fns[i].body;
    size_t n = 0;
    for (gn_id k = 0; k < b->n_nodes; k++)
        n += !(b->nodes[k].flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET));
    return n;
}
