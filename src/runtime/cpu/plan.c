/* CPU backend: memory plans (see cpu.h).
 *
 * A plan belongs to one set of input shapes. The first run with the set
 * records every output buffer the kernels allocate: which output (program
 * node and output index), its size, the step at which it was allocated and
 * the step at which its last reference went away. Buffers still referenced
 * when the run ends (fetched outputs, or anything else that escapes) are left
 * out. If the program has no loops, the recorded buffers are laid out in one
 * arena by greedy first fit in allocation order: a buffer may share bytes
 * with another only when their lifetimes do not overlap. Later runs hand out
 * arena space through the kctx->alloc hook, with buffers whose release does
 * nothing but mark the space free.
 *
 * A later run may differ (a Switch takes the other branch, a data-dependent
 * shape grows): each allocation is checked (the output was planned, is not
 * larger than planned, and no buffer sharing its bytes is still alive), and
 * anything that fails the check goes to the heap instead. A plan never makes
 * a run wrong; at worst it does not help. */
#include <stdlib.h>

#include "ops/kernels/scoped_alloc.h"
#include "graph/tensor.h"
#include "runtime/cpu/cpu.h"

#define MAX_PLANNED 50000u
#define ALIGN 64u

/* ---- recording ---------------------------------------------------------------------------- */
typedef struct rec_ent {
    uint32_t key;            /* out_base + output */
    size_t size;
    uint64_t t0, t1;
    bool live, dup;
    struct rec_buf *buf;     /* while live */
} rec_ent;

struct cpu_rec {
    rec_ent *e;
    uint32_t n, cap;
    uint32_t n_keys;
    uint32_t *first;         /* per key: entry index + 1, 0 none */
    uint64_t now;
    bool oom;
};

typedef struct rec_buf {
    gn__buffer b;
    cpu_rec *rec;            /* NULL once detached */
    uint32_t idx;
} rec_buf;

cpu_rec *gn__rec_new(const xprog *p)
{
    cpu_rec *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->n_keys = p->n_outputs;
    r->first = calloc(r->n_keys + 1, sizeof *r->first);
    if (!r->first) {
        free(r);
        return NULL;
    }
    return r;
}

void gn__rec_step(cpu_rec *r, uint64_t step)
{
    r->now = step;
}

static void rec_release(gn__buffer *b)
{
    rec_buf *rb = (rec_buf *)b;
    if (rb->rec) {
        rec_ent *e = &rb->rec->e[rb->idx];
        e->t1 = rb->rec->now;
        e->live = false;
        e->buf = NULL;
    }
    free(b->data);
    free(rb);
}

static gn__buffer *rec_alloc(cpu_rec *r, uint32_t key, size_t bytes)
{
    if (r->oom || key >= r->n_keys) return NULL;
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 256;
        rec_ent *e = realloc(r->e, (size_t)cap * sizeof *e);
        if (!e) {
            r->oom = true;
            return NULL;
        }
        r->e = e;
        r->cap = cap;
    }
    size_t sz = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (sz < bytes) return NULL;
    rec_buf *rb = malloc(sizeof *rb);
    void *data = aligned_alloc(ALIGN, sz ? sz : ALIGN);
    if (!rb || !data) {
        free(rb);
        free(data);
        return NULL;
    }
    uint32_t idx = r->n++;
    rec_ent *e = &r->e[idx];
    memset(e, 0, sizeof *e);
    e->key = key;
    e->size = bytes;
    e->t0 = r->now;
    e->live = true;
    e->buf = rb;
    if (r->first[key]) {
        e->dup = true;
        r->e[r->first[key] - 1].dup = true;
    } else {
        r->first[key] = idx + 1;
    }
    rb->b.refs = 1;
    rb->b.flags = 0;
    rb->b.size = bytes;
    rb->b.data = data;
    rb->b.release = rec_release;
    rb->b.owner = NULL;
    rb->rec = r;
    rb->idx = idx;
    return &rb->b;
}

/* ---- plans ---------------------------------------------------------------------------------- */
typedef struct pslot {
    gn__buffer hdr;          /* handed out; release marks the slot free */
    size_t size, off;
    uint32_t conf_begin, conf_n;
    bool used, live;
} pslot;

struct cpu_plan {
    cpu_plan_state state;
    uint32_t n_in;
    int32_t *dtype, *rank;
    int64_t *dims;           /* n_in * GN__MAX_DIMS */
    uint32_t n_keys;
    int32_t *slot_of;        /* per key: slot or -1 */
    uint32_t n_slots;
    pslot *slots;
    uint32_t *conf;          /* slots sharing bytes with a slot */
    uint8_t *arena;
    size_t arena_bytes;
    size_t planned_bytes;
};

cpu_plan *gn__plan_new(const xprog *p, const gn__tensor *in, uint32_t n_in)
{
    cpu_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return NULL;
    pl->state = p->has_loops ? PLAN_DYNAMIC : PLAN_RECORD;
    pl->n_in = n_in;
    pl->dtype = calloc(n_in + 1, sizeof *pl->dtype);
    pl->rank = calloc(n_in + 1, sizeof *pl->rank);
    pl->dims = calloc((size_t)n_in * GN__MAX_DIMS + 1, sizeof *pl->dims);
    if (!pl->dtype || !pl->rank || !pl->dims) {
        gn__plan_free(pl);
        return NULL;
    }
    for (uint32_t i = 0; i < n_in; i++) {
        pl->dtype[i] = in[i].dtype;
        pl->rank[i] = in[i].rank;
        for (int32_t d = 0; d < in[i].rank && d < GN__MAX_DIMS; d++) pl->dims[(size_t)i * GN__MAX_DIMS + d] = in[i].dims[d];
    }
    return pl;
}

void gn__plan_free(cpu_plan *pl)
{
    if (!pl) return;
    free(pl->dtype);
    free(pl->rank);
    free(pl->dims);
    free(pl->slot_of);
    free(pl->slots);
    free(pl->conf);
    free(pl->arena);
    free(pl);
}

bool gn__plan_matches(const cpu_plan *pl, const gn__tensor *in, uint32_t n_in)
{
    if (n_in != pl->n_in) return false;
    for (uint32_t i = 0; i < n_in; i++) {
        if (in[i].dtype != pl->dtype[i] || in[i].rank != pl->rank[i]) return false;
        for (int32_t d = 0; d < in[i].rank && d < GN__MAX_DIMS; d++)
            if (in[i].dims[d] != pl->dims[(size_t)i * GN__MAX_DIMS + d]) return false;
    }
    return true;
}

cpu_plan_state gn__plan_state(const cpu_plan *pl)
{
    return pl->state;
}

size_t gn__plan_arena_bytes(const cpu_plan *pl)
{
    return pl->state == PLAN_READY ? pl->arena_bytes : 0;
}

size_t gn__plan_planned_bytes(const cpu_plan *pl)
{
    return pl->state == PLAN_READY ? pl->planned_bytes : 0;
}

static void arena_release(gn__buffer *b)
{
    pslot *s = b->owner;
    s->live = false;
}

bool gn__plan_owns(const gn__buffer *b)
{
    return b && b->release == arena_release;
}

void gn__plan_end_run(cpu_plan *pl)
{
    if (!pl || pl->state != PLAN_READY) return;
    for (uint32_t i = 0; i < pl->n_slots; i++) pl->slots[i].used = false;
}

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

typedef struct placed {
    size_t off, size;
} placed;

static int cmp_placed(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static bool overlap_t(const rec_ent *a, const rec_ent *b)
{
    return a->t0 <= b->t1 && b->t0 <= a->t1;
}

/* Lays the recorded buffers out; false on out of memory (the plan then
 * stays dynamic). */
static bool build(cpu_plan *pl, cpu_rec *r)
{
    uint32_t *cand = malloc((r->n + 1) * sizeof *cand);
    if (!cand) return false;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (!r->e[i].dup && !r->e[i].live) cand[n++] = i;
    if (n > MAX_PLANNED) {
        free(cand);
        return false;
    }
    pl->slots = calloc(n + 1, sizeof *pl->slots);
    pl->slot_of = malloc((r->n_keys + 1) * sizeof *pl->slot_of);
    placed *tmp = malloc((n + 1) * sizeof *tmp);
    uint32_t *nconf = calloc(n + 1, sizeof *nconf);
    if (!pl->slots || !pl->slot_of || !tmp || !nconf) {
        free(cand);
        free(tmp);
        free(nconf);
        return false;
    }
    for (uint32_t k = 0; k < r->n_keys; k++) pl->slot_of[k] = -1;
    size_t peak = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rec_ent *e = &r->e[cand[i]];
        size_t sz = round_up(e->size);
        uint32_t m = 0;
        for (uint32_t j = 0; j < i; j++) {
            const rec_ent *o = &r->e[cand[j]];
            if (pl->slots[j].size && overlap_t(e, o)) tmp[m++] = (placed){pl->slots[j].off, round_up(pl->slots[j].size)};
        }
        qsort(tmp, m, sizeof *tmp, cmp_placed);
        size_t off = 0;
        for (uint32_t j = 0; j < m && sz; j++) {
            if (off + sz <= tmp[j].off) break;
            if (tmp[j].off + tmp[j].size > off) off = tmp[j].off + tmp[j].size;
        }
        pslot *s = &pl->slots[i];
        s->size = e->size;
        s->off = sz ? off : 0;
        pl->planned_bytes += sz;
        if (s->off + sz > peak) peak = s->off + sz;
        pl->slot_of[e->key] = (int32_t)i;
    }
    free(tmp);
    /* conflicts: slots sharing bytes */
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t a0 = pl->slots[i].off, a1 = a0 + round_up(pl->slots[i].size);
        if (a1 == a0) continue;
        for (uint32_t j = i + 1; j < n; j++) {
            size_t b0 = pl->slots[j].off, b1 = b0 + round_up(pl->slots[j].size);
            if (b1 != b0 && a0 < b1 && b0 < a1) {
                nconf[i]++;
                nconf[j]++;
                total += 2;
            }
        }
    }
    if (total > UINT32_MAX) {
        free(cand);
        free(nconf);
        return false;
    }
    pl->conf = malloc((size_t)(total + 1) * sizeof *pl->conf);
    pl->arena = aligned_alloc(ALIGN, peak ? round_up(peak) : ALIGN);
    if (!pl->conf || !pl->arena) {
        free(cand);
        free(nconf);
        return false;
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        pl->slots[i].conf_begin = at;
        at += nconf[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        size_t a0 = pl->slots[i].off, a1 = a0 + round_up(pl->slots[i].size);
        if (a1 == a0) continue;
        for (uint32_t j = i + 1; j < n; j++) {
            size_t b0 = pl->slots[j].off, b1 = b0 + round_up(pl->slots[j].size);
            if (b1 != b0 && a0 < b1 && b0 < a1) {
                pl->conf[pl->slots[i].conf_begin + pl->slots[i].conf_n++] = j;
                pl->conf[pl->slots[j].conf_begin + pl->slots[j].conf_n++] = i;
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        pslot *s = &pl->slots[i];
        s->hdr.release = arena_release;
        s->hdr.owner = s;
        s->hdr.data = pl->arena + s->off;
    }
    pl->n_slots = n;
    pl->n_keys = r->n_keys;
    pl->arena_bytes = peak;
    free(cand);
    free(nconf);
    return true;
}

void gn__rec_finish(cpu_rec *r, cpu_plan *pl, bool ok)
{
    for (uint32_t i = 0; i < r->n; i++) {
        if (r->e[i].live && r->e[i].buf) r->e[i].buf->rec = NULL;   /* escapes: detached */
    }
    if (pl && pl->state == PLAN_RECORD && ok) {
        if (!r->oom && build(pl, r)) {
            pl->state = PLAN_READY;
        } else {
            free(pl->slots);
            free(pl->slot_of);
            free(pl->conf);
            free(pl->arena);
            pl->slots = NULL;
            pl->slot_of = NULL;
            pl->conf = NULL;
            pl->arena = NULL;
            pl->n_slots = 0;
            pl->state = PLAN_DYNAMIC;
        }
    }
    free(r->e);
    free(r->first);
    free(r);
}

/* ---- the allocation hook ---------------------------------------------------------------------- */
static gn__buffer *heap(cpu_alloc *a, size_t bytes)
{
    if (a->stats) a->stats->dynamic_allocs++;
    return gn__buffer_new(bytes);
}

/* The field of a registered _ScopedAllocator buffer that output `output` of
 * producer x is to take (its _scoped_allocator attr: pairs [output, id]), as
 * a view; NULL when there is none or it does not fit. */
static gn__buffer *sa_field(cpu_alloc *a, const xnode *x, uint32_t output, size_t bytes)
{
    const Tensorflow__AttrValue *v = gn__node_attr(a->prog->g, x->gid, "_scoped_allocator");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) return NULL;
    for (size_t k = 0; k + 1 < v->list->n_i; k += 2) {
        if (v->list->i[k] != (int64_t)output) continue;
        for (uint32_t f = a->n_sa; f-- > 0;)
            if (a->sa[f].id == v->list->i[k + 1])
                return bytes == a->sa[f].bytes ? gn__buffer_view(a->sa[f].buf, a->sa[f].offset, bytes) : NULL;
    }
    return NULL;
}

bool gn__sa_register(cpu_alloc *a, const gn_graph *g, gn_id node, const gn__tensor *t)
{
    const Tensorflow__AttrValue *sh = gn__node_attr(g, node, "shapes");
    int64_t id = 0;
    if (!t->buf || !sh || sh->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !sh->list ||
        !gn__attr_get_int(g, node, "id", &id))
        return true; /* nothing to hand out: the Concat copies */
    size_t esz = gn__dtype_size(t->dtype), off = 0;
    for (size_t i = 0; i < sh->list->n_shape; i++) {
        const Tensorflow__TensorShapeProto *p = sh->list->shape[i];
        int64_t n = 1;
        for (size_t d = 0; d < p->n_dim; d++) n *= p->dim[d]->size < 0 ? 0 : p->dim[d]->size;
        size_t bytes = (size_t)n * esz;
        if (off + bytes > t->nbytes) break;
        if (a->n_sa == a->cap_sa) {
            uint32_t nc = a->cap_sa ? a->cap_sa * 2 : 8;
            cpu_sa_field *ns = realloc(a->sa, (size_t)nc * sizeof *ns);
            if (!ns) return false;
            a->sa = ns;
            a->cap_sa = nc;
        }
        a->sa[a->n_sa++] = (cpu_sa_field){id + 1 + (int64_t)i, gn__buffer_ref(t->buf), off, bytes};
        off = gn__sa_align(off + bytes);
    }
    return true;
}

void gn__sa_release(cpu_alloc *a)
{
    for (uint32_t i = 0; i < a->n_sa; i++) gn__buffer_unref(a->sa[i].buf);
    free(a->sa);
    a->sa = NULL;
    a->n_sa = a->cap_sa = 0;
}

gn__buffer *gn__plan_alloc(void *user, uint32_t output, size_t bytes)
{
    cpu_alloc *a = user;
    const xnode *x = &a->prog->nodes[a->node];
    uint32_t key = x->out_base + output;
    /* the scoped allocator's buffers stay off the arena (their fields outlive
     * the allocator node's own output), and its producers write into them */
    if (x->flags & XN_SA_ALLOC) return heap(a, bytes);
    if ((x->flags & XN_SA_PRODUCER) && a->n_sa) {
        gn__buffer *b = sa_field(a, x, output, bytes);
        if (b) return b;
    }
    if (a->rec) {
        gn__buffer *b = rec_alloc(a->rec, key, bytes);
        if (b) {
            if (a->stats) a->stats->dynamic_allocs++;
            return b;
        }
        return heap(a, bytes);
    }
    cpu_plan *pl = a->plan;
    if (!pl || pl->state != PLAN_READY || key >= pl->n_keys || pl->slot_of[key] < 0) return heap(a, bytes);
    pslot *s = &pl->slots[pl->slot_of[key]];
    bool ok = !s->used && bytes <= s->size;
    for (uint32_t i = 0; ok && i < s->conf_n; i++)
        if (pl->slots[pl->conf[s->conf_begin + i]].live) ok = false;
    if (!ok) {
        if (a->stats) a->stats->plan_misses++;
        return heap(a, bytes);
    }
    s->used = s->live = true;
    s->hdr.refs = 1;
    s->hdr.flags = 0;
    s->hdr.size = bytes;
    if (a->stats) a->stats->arena_allocs++;
    return &s->hdr;
}
