/* CPU backend: running a program (see cpu.h).
 *
 * TensorFlow's executor semantics on one thread. A node instance is (node,
 * frame instance, iteration). Each iteration keeps, per node of its frame, a
 * pending count and a dead count, and the node's input slots. A node is
 * ready when its pending count reaches 0 (Merge: when all control inputs
 * arrived and either a live data input arrived or all data inputs are dead).
 * A node with a dead input produces dead outputs without running (Merge,
 * ControlTrigger excepted). Enter starts (or joins) a child frame, Exit
 * returns to the parent frame, NextIteration moves to the next iteration,
 * which starts at once unless parallel_iterations are already outstanding
 * (then it is deferred until the oldest finishes). Loop invariants (constant
 * Enter) reach every iteration. A frame is done when all its Enters arrived
 * and all its iterations finished; the Exits that stayed dead then reach the
 * parent as dead tensors. All of it after
 * tensorflow/core/common_runtime/propagator_state.cc, iteratively: the only
 * recursion is a function call running a nested program.
 *
 * Tensors are refcounted: an input slot holds a reference until its node
 * ran, so a buffer is released as soon as its last consumer ran. */
#include <stdio.h>
#include <stdlib.h>

#include <strings.h>
#include <time.h>

#include "opdef/registry.h"
#include "ops/kernels/scoped_alloc.h"
#include "runtime/cpu/cpu.h"
#include "io/engine_store.h"
#include "runtime/cpu/int8.h"
#include "runtime/engine_op.h"

#define MAX_CALL_DEPTH 256

typedef struct xiter {
    int64_t num;
    int64_t outstanding_ops, outstanding_frames;
    int32_t *pending, *dead;
    gn__tensor *slots;
} xiter;

typedef struct held {
    uint32_t node;
    bool dead;
    gn__tensor t;
} held;

typedef struct xfinst xfinst;

typedef struct child_ref {
    int64_t iter;
    uint32_t sframe;
    xfinst *f;
} child_ref;

struct xfinst {
    uint32_t sframe;
    xfinst *parent;
    int64_t parent_iter;
    int64_t pending_inputs, iteration_count, outstanding_iters;
    int64_t max_par;
    uint32_t ring;
    xiter **iters;
    uint32_t *dead_exits;
    uint32_t n_dead_exits, cap_dead_exits;
    held *next_roots;
    uint32_t n_next, cap_next;
    held *invs;
    uint32_t n_invs, cap_invs;
    child_ref *children;
    uint32_t n_children, cap_children;
    xfinst *prev_all, *next_all;
};

typedef struct tagged {
    uint32_t node;
    bool dead;
    xfinst *f;
    int64_t iter;
} tagged;

typedef struct resource {
    void *obj;
    void (*free_fn)(void *obj);
} resource;

/* State shared by a run and every function call nested in it. */
typedef struct xshared {
    uint64_t seed;
    gn__engine_stats *stats;
    resource *res;
    uint32_t n_res, cap_res;
    uint32_t depth;
    /* resource bounds (cpu_exec_opts; 0: none) and what the run used of them */
    size_t max_tensor_bytes;
    const gn__blas *blas;         /* the gemms' library (NULL: the reference gemm) */
    uint64_t step_limit, steps;
    uint64_t time_limit_ms;
    uint64_t deadline_ns;         /* CLOCK_MONOTONIC; 0: no time limit */
} xshared;

typedef struct xrun {
    struct gn__run base;      /* first: kernels see &base */
    xprog *p;
    xshared *sh;
    cpu_alloc *alloc;
    cpu_rec *rec;
    const gn__tensor *feeds;
    gn__tensor *results;
    uint8_t *got;             /* per fetch: 0 not yet, 1 value, 2 dead */
    tagged *q;
    size_t qhead, qlen, qcap;
    xfinst *all;
    xfinst *root;
    gn__tensor *out;          /* scratch outputs of the node running */
    uint64_t step;
    gn__err *err;
} xrun;

static const gn__tensor k_dead = {.dead = true};

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t esz)
{
    if (need <= *cap) return true;
    uint32_t nc = *cap ? *cap * 2 : 8;
    while (nc < need) nc *= 2;
    void *p = realloc(*arr, (size_t)nc * esz);
    if (!p) return false;
    *arr = p;
    *cap = nc;
    return true;
}

static gn_status nomem(xrun *r)
{
    return gn__fail(r->err, GN_ERR_NOMEM, "out of memory");
}

static const char *node_name(const xrun *r, uint32_t n)
{
    gn_id id = r->p->nodes[n].gid;
    return id == GN_NONE ? "(feed/fetch)" : gn__node_name(r->p->g, id);
}

static const char *node_op(const xrun *r, uint32_t n)
{
    gn_id id = r->p->nodes[n].gid;
    return id == GN_NONE ? "" : gn__node_op(r->p->g, id);
}

/* ---- iterations and frames ----------------------------------------------------------- */
static xiter *iter_new(const xframe *sf, int64_t num)
{
    xiter *it = calloc(1, sizeof *it);
    if (!it) return NULL;
    it->num = num;
    it->pending = malloc((sf->n_nodes + 1) * sizeof *it->pending);
    it->dead = calloc(sf->n_nodes + 1, sizeof *it->dead);
    it->slots = calloc(sf->n_slots + 1, sizeof *it->slots);
    if (!it->pending || !it->dead || !it->slots) {
        free(it->pending);
        free(it->dead);
        free(it->slots);
        free(it);
        return NULL;
    }
    if (sf->n_nodes) memcpy(it->pending, sf->pending_init, sf->n_nodes * sizeof *it->pending);
    return it;
}

static void iter_free(xiter *it, const xframe *sf)
{
    if (!it) return;
    for (uint32_t i = 0; i < sf->n_slots; i++) gn__tensor_release(&it->slots[i]);
    free(it->pending);
    free(it->dead);
    free(it->slots);
    free(it);
}

static xiter *get_iter(const xfinst *f, int64_t i)
{
    xiter *it = f->iters[(uint64_t)i % f->ring];
    return it && it->num == i ? it : NULL;
}

static void set_iter(xfinst *f, int64_t i, xiter *it)
{
    f->iters[(uint64_t)i % f->ring] = it;
}

static xiter *iter_slot(const xfinst *f, uint32_t k)
{
    return f->iters[k];
}

static void frame_free(xrun *r, xfinst *f)
{
    const xframe *sf = &r->p->frames[f->sframe];
    if (f->iters)
        for (uint32_t i = 0; i < f->ring; i++) iter_free(iter_slot(f, i), sf);
    free(f->iters);
    for (uint32_t i = 0; i < f->n_next; i++) gn__tensor_release(&f->next_roots[i].t);
    for (uint32_t i = 0; i < f->n_invs; i++) gn__tensor_release(&f->invs[i].t);
    free(f->next_roots);
    free(f->invs);
    free(f->dead_exits);
    free(f->children);
    /* unlink */
    if (f->prev_all) f->prev_all->next_all = f->next_all;
    else r->all = f->next_all;
    if (f->next_all) f->next_all->prev_all = f->prev_all;
    free(f);
}

static xfinst *frame_new(xrun *r, uint32_t sframe, xfinst *parent, int64_t parent_iter, int64_t max_par)
{
    const xframe *sf = &r->p->frames[sframe];
    xfinst *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->sframe = sframe;
    f->parent = parent;
    f->parent_iter = parent_iter;
    f->pending_inputs = parent ? sf->n_enters : 0;
    f->max_par = max_par < 1 ? 1 : max_par;
    f->ring = (uint32_t)(f->max_par + 1);
    f->outstanding_iters = 1;
    /* link first so that a failure below is cleaned up by frame_free */
    f->next_all = r->all;
    if (r->all) r->all->prev_all = f;
    r->all = f;
    f->iters = calloc(f->ring, sizeof *f->iters);
    if (!f->iters) {
        frame_free(r, f);
        return NULL;
    }
    xiter *it = iter_new(sf, 0);
    if (!it) {
        frame_free(r, f);
        return NULL;
    }
    set_iter(f, 0, it);
    return f;
}

/* ---- the ready queue ------------------------------------------------------------------ */
static gn_status push_ready(xrun *r, uint32_t node, xfinst *f, int64_t iter, bool dead)
{
    if (r->qlen == r->qcap) {
        size_t nc = r->qcap ? r->qcap * 2 : 256;
        tagged *q = malloc(nc * sizeof *q);
        if (!q) return nomem(r);
        for (size_t i = 0; i < r->qlen; i++) q[i] = r->q[(r->qhead + i) % r->qcap];
        free(r->q);
        r->q = q;
        r->qhead = 0;
        r->qcap = nc;
    }
    r->q[(r->qhead + r->qlen) % r->qcap] = (tagged){node, dead, f, iter};
    r->qlen++;
    get_iter(f, iter)->outstanding_ops++;
    return GN_OK;
}

/* ---- activation (TensorFlow's ActivateNodes, one edge) -------------------------------- */
static void store(gn__tensor *slot, const gn__tensor *v)
{
    gn__tensor_release(slot);
    gn__tensor_copy_ref(slot, v);
    slot->dead = false;
}

static gn_status activate(xrun *r, xfinst *f, int64_t iter, bool src_is_enter, const xedge *e, const gn__tensor *val,
                          bool src_dead)
{
    const xnode *d = &r->p->nodes[e->dst];
    xiter *I = get_iter(f, iter);
    if (!I) return gn__fail(r->err, GN_ERR_INTERNAL, "node '%s': iteration %lld of its frame is gone", node_name(r, e->dst),
                            (long long)iter);
    uint32_t loc = d->local;
    bool ctrl = e->slot < 0, ready, dead;
    if (!ctrl && !val) val = &k_dead;
    if (d->flags & XN_MERGE) {
        if (ctrl) {
            I->pending[loc] -= 2;
            int32_t cnt = I->pending[loc];
            dead = I->dead[loc] == (int32_t)d->n_in;
            ready = cnt == 0 || (cnt == 1 && dead);
        } else if (!src_dead && !val->dead) {
            int32_t cnt = I->pending[loc];
            I->pending[loc] &= ~1;
            ready = cnt == 1;
            dead = false;
            if (cnt & 1) store(&I->slots[d->in_off + (uint32_t)e->slot], val);
        } else {
            I->dead[loc]++;
            dead = I->dead[loc] == (int32_t)d->n_in || src_is_enter;
            ready = I->pending[loc] == 1 && dead;
        }
    } else {
        bool inc_dead = src_dead || (!ctrl && val->dead);
        if (!ctrl && !inc_dead) store(&I->slots[d->in_off + (uint32_t)e->slot], val);
        I->pending[loc]--;
        if (inc_dead) I->dead[loc]++;
        dead = I->dead[loc] > 0;
        ready = I->pending[loc] == 0;
    }
    if (!ready) return GN_OK;
    if (d->flags & XN_CONTROL_TRIGGER) dead = false;
    return push_ready(r, e->dst, f, iter, dead);
}

static gn_status activate_all(xrun *r, xfinst *f, int64_t iter, uint32_t src, const gn__tensor *outs, bool dead)
{
    const xnode *x = &r->p->nodes[src];
    bool enter = (x->flags & XN_ENTER) != 0;
    for (uint32_t k = x->e_begin; k < x->e_begin + x->e_count; k++) {
        const xedge *e = &r->p->edges[k];
        const gn__tensor *v = e->slot < 0 ? NULL : (outs ? &outs[e->src_out] : &k_dead);
        if (v && !v->dead && !v->dtype && !dead)
            return gn__fail(r->err, GN_ERR_INTERNAL, "node '%s' (%s): the kernel did not produce output %u",
                            node_name(r, src), node_op(r, src), e->src_out);
        GN_TRY(activate(r, f, iter, enter, e, v, dead));
    }
    return GN_OK;
}

/* ---- frames: iterations, completion ------------------------------------------------- */
static gn_status increment_iteration(xrun *r, xfinst *f)
{
    const xframe *sf = &r->p->frames[f->sframe];
    f->iteration_count++;
    xiter *it = iter_new(sf, f->iteration_count);
    if (!it) return nomem(r);
    set_iter(f, f->iteration_count, it);
    f->outstanding_iters++;
    f->n_dead_exits = 0;
    int64_t now = f->iteration_count;
    /* deferred NextIteration values */
    uint32_t n = f->n_next;
    gn_status s = GN_OK;
    for (uint32_t i = 0; i < n; i++) {
        if (s == GN_OK) s = activate_all(r, f, now, f->next_roots[i].node, &f->next_roots[i].t, false);
        gn__tensor_release(&f->next_roots[i].t);
    }
    f->n_next = 0;
    GN_TRY(s);
    /* loop invariants */
    for (uint32_t i = 0; i < f->n_invs; i++)
        GN_TRY(activate_all(r, f, now, f->invs[i].node, &f->invs[i].t, f->invs[i].dead));
    return GN_OK;
}

static bool iteration_done(const xfinst *f, const xiter *I)
{
    if (!I || I->outstanding_ops != 0 || I->outstanding_frames != 0) return false;
    if (I->num == 0) return f->pending_inputs == 0;
    return get_iter(f, I->num - 1) == NULL;
}

static gn_status cleanup_iterations(xrun *r, xfinst *f, int64_t iter, bool *frame_done)
{
    const xframe *sf = &r->p->frames[f->sframe];
    int64_t curr = iter;
    xiter *I = get_iter(f, curr);
    while (curr <= f->iteration_count && iteration_done(f, I)) {
        iter_free(I, sf);
        set_iter(f, curr, NULL);
        f->outstanding_iters--;
        curr++;
        if (f->n_next) GN_TRY(increment_iteration(r, f));
        if (curr <= f->iteration_count) I = get_iter(f, curr);
    }
    *frame_done = f->pending_inputs == 0 && f->outstanding_iters == 0;
    return GN_OK;
}

/* f is done: hand its dead exits to the parent, delete it, and go on up
 * while parents finish too. */
static gn_status delete_frames(xrun *r, xfinst *f)
{
    while (f != r->root) {
        xfinst *parent = f->parent;
        int64_t pit = f->parent_iter;
        gn_status s = GN_OK;
        for (uint32_t i = 0; i < f->n_dead_exits && s == GN_OK; i++)
            s = activate_all(r, parent, pit, f->dead_exits[i], NULL, true);
        for (uint32_t i = 0; i < parent->n_children; i++) {
            if (parent->children[i].f == f) {
                parent->children[i] = parent->children[--parent->n_children];
                break;
            }
        }
        frame_free(r, f);
        GN_TRY(s);
        xiter *P = get_iter(parent, pit);
        if (P) P->outstanding_frames--;
        if (parent == r->root) return GN_OK;
        bool done = false;
        GN_TRY(cleanup_iterations(r, parent, pit, &done));
        if (!done) return GN_OK;
        f = parent;
    }
    return GN_OK;
}

static gn_status decrement_outstanding(xrun *r, xfinst *f, int64_t iter)
{
    xiter *I = get_iter(f, iter);
    if (--I->outstanding_ops != 0 || f == r->root) return GN_OK;
    bool done = false;
    GN_TRY(cleanup_iterations(r, f, iter, &done));
    if (done) return delete_frames(r, f);
    return GN_OK;
}

static gn_status find_or_create_child(xrun *r, xfinst *f, int64_t iter, const xnode *enter, xfinst **out)
{
    for (uint32_t i = 0; i < f->n_children; i++) {
        if (f->children[i].iter == iter && f->children[i].sframe == enter->child) {
            *out = f->children[i].f;
            return GN_OK;
        }
    }
    if (!grow((void **)&f->children, &f->cap_children, f->n_children + 1, sizeof *f->children)) return nomem(r);
    xfinst *c = frame_new(r, enter->child, f, iter, r->p->frames[enter->child].parallel);
    if (!c) return nomem(r);
    f->children[f->n_children++] = (child_ref){iter, enter->child, c};
    get_iter(f, iter)->outstanding_frames++;
    *out = c;
    return GN_OK;
}

/* ---- propagation (TensorFlow's PropagateOutputs) ------------------------------------------ */
static gn_status propagate(xrun *r, uint32_t n, xfinst *f, int64_t iter, const gn__tensor *outs, bool dead)
{
    const xnode *x = &r->p->nodes[n];
    if (x->flags & XN_ENTER) {
        xfinst *child = NULL;
        GN_TRY(find_or_create_child(r, f, iter, x, &child));
        if (x->flags & XN_CONST_ENTER) {
            if (!grow((void **)&child->invs, &child->cap_invs, child->n_invs + 1, sizeof *child->invs)) return nomem(r);
            held *h = &child->invs[child->n_invs++];
            h->node = n;
            h->dead = dead;
            memset(&h->t, 0, sizeof h->t);
            if (!dead) gn__tensor_copy_ref(&h->t, &outs[0]);
            else h->t.dead = true;
            for (int64_t i = 0; i <= child->iteration_count; i++)
                if (get_iter(child, i)) GN_TRY(activate_all(r, child, i, n, &h->t, dead));
        } else {
            GN_TRY(activate_all(r, child, 0, n, outs, dead));
        }
        child->pending_inputs--;
        if (child->pending_inputs == 0) {
            bool done = false;
            GN_TRY(cleanup_iterations(r, child, 0, &done));
            if (done) GN_TRY(delete_frames(r, child));
        }
    } else if (x->flags & XN_EXIT) {
        if (dead) {
            if (iter == f->iteration_count) {
                if (!grow((void **)&f->dead_exits, &f->cap_dead_exits, f->n_dead_exits + 1, sizeof *f->dead_exits))
                    return nomem(r);
                f->dead_exits[f->n_dead_exits++] = n;
            }
        } else {
            GN_TRY(activate_all(r, f->parent, f->parent_iter, n, outs, false));
        }
    } else if (x->flags & XN_NEXT) {
        if (!dead) {
            if (iter == f->iteration_count && f->outstanding_iters == f->max_par) {
                if (!grow((void **)&f->next_roots, &f->cap_next, f->n_next + 1, sizeof *f->next_roots)) return nomem(r);
                held *h = &f->next_roots[f->n_next++];
                h->node = n;
                h->dead = false;
                gn__tensor_copy_ref(&h->t, &outs[0]);
            } else {
                if (iter == f->iteration_count) GN_TRY(increment_iteration(r, f));
                GN_TRY(activate_all(r, f, iter + 1, n, outs, false));
            }
        }
    } else {
        GN_TRY(activate_all(r, f, iter, n, outs, dead));
    }
    return decrement_outstanding(r, f, iter);
}

/* ---- one node ---------------------------------------------------------------------------- */
static gn_status process(xrun *r, tagged t)
{
    xprog *p = r->p;
    const xnode *x = &p->nodes[t.node];
    xiter *I = get_iter(t.f, t.iter);
    gn__tensor *in = I->slots + x->in_off;
    gn__tensor *out = r->out;
    memset(out, 0, (size_t)x->n_out * sizeof *out);
    bool dead = t.dead;
    gn_status s = GN_OK;
    if (x->flags & XN_FEED) {
        gn__tensor_copy_ref(&out[0], &r->feeds[x->io]);
        out[0].dead = false;
        dead = false;
    } else if (x->flags & XN_FETCH) {
        if (dead || in[0].dtype == 0 || in[0].dead) {
            r->got[x->io] = 2;
        } else {
            gn__tensor_release(&r->results[x->io]);
            gn__tensor_copy_ref(&r->results[x->io], &in[0]);
            r->got[x->io] = 1;
        }
    } else if (dead) {
        for (uint32_t k = 0; k < x->n_out; k++) out[k].dead = true;
    } else {
        r->alloc->node = t.node;
        gn__kctx c = {0};
        c.g = p->g;
        c.node = x->gid;
        c.n_in = x->n_in;
        c.in = in;
        c.n_out = x->n_out;
        c.out = out;
        c.err = r->err;
        c.run = &r->base;
        c.alloc = gn__plan_alloc;
        c.alloc_user = r->alloc;
        c.seed = r->sh->seed;
        c.max_output_bytes = r->sh->max_tensor_bytes;
        c.blas = r->sh->blas;
        if ((x->flags & XN_SA_CONCAT) && r->sh->stats)
            for (uint32_t i = 1; i < x->n_in; i++) {
                if (gn__sa_concat_in_place(in, i)) r->sh->stats->sa_in_place++;
                else r->sh->stats->sa_copied++;
            }
        s = x->fn(&c);
        if (s == GN_OK && (x->flags & XN_SA_ALLOC) && !gn__sa_register(r->alloc, p->g, x->gid, &out[0])) s = nomem(r);
        if (r->sh->stats) r->sh->stats->nodes_run++;
        if (s == GN_OK && (x->flags & XN_MAY_BE_DEAD))
            for (uint32_t k = 0; k < x->n_out; k++)
                if (!out[k].dtype) out[k].dead = true;
    }
    for (uint32_t i = 0; i < x->n_in; i++) gn__tensor_release(&in[i]);
    if (s == GN_OK) s = propagate(r, t.node, t.f, t.iter, out, dead);
    for (uint32_t k = 0; k < x->n_out; k++) gn__tensor_release(&out[k]);
    return s;
}

/* ---- executor services for kernels -------------------------------------------------------- */
static gn_status xrun_exec(xprog *p, const gn__tensor *in, gn__tensor *out, xshared *sh, cpu_alloc *alloc,
                           cpu_rec *rec, gn__err *err);

static gn_status run_call(struct gn__run *rb, gn__kctx *c, const char *fn, const gn__tensor *in, uint32_t n_in,
                          gn__tensor *out, uint32_t n_out)
{
    xrun *r = (xrun *)rb;
    const gn__function *f = gn__graph_find_function(c->g, fn);
    if (!f) return gn__kctx_fail(c, GN_ERR_GRAPH, "function '%s' is not in the library", fn);
    if (!r->p->lib) return gn__kctx_fail(c, GN_ERR_INTERNAL, "no function library");
    if (r->sh->depth >= MAX_CALL_DEPTH)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "function calls nested deeper than %d", MAX_CALL_DEPTH);
    xprog *bp;
    gn_status s = gn__xprog_function(r->p->lib, f, &bp, c->err);
    if (s != GN_OK) {
        gn__err_prefix(c->err, "node '%s' (%s)", gn__node_name(c->g, c->node), gn__node_op(c->g, c->node));
        return s;
    }
    if (n_in != bp->n_feeds)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "function '%s' takes %u arguments, %u given", fn, bp->n_feeds, n_in);
    if (n_out != bp->n_fetches)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "function '%s' returns %u values, %u expected", fn, bp->n_fetches, n_out);
    for (uint32_t i = 0; bp->feed_dtype && i < n_in; i++)
        if (bp->feed_dtype[i] && in[i].dtype != bp->feed_dtype[i])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "function '%s': argument %u ('%s') is %s, %s given", fn, i,
                                 bp->feed_arg[i], gn__dtype_name(bp->feed_dtype[i]), gn__dtype_name(in[i].dtype));
    cpu_alloc a = {NULL, NULL, bp, 0, r->sh->stats, NULL, 0, 0};
    r->sh->depth++;
    s = xrun_exec(bp, in, out, r->sh, &a, NULL, c->err);
    gn__sa_release(&a);
    r->sh->depth--;
    if (s != GN_OK)
        gn__err_prefix(c->err, "node '%s' (%s): function '%s'", gn__node_name(c->g, c->node),
                       gn__node_op(c->g, c->node), fn);
    return s;
}

static gn_status run_own(struct gn__run *rb, void *obj, void (*free_fn)(void *obj))
{
    xrun *r = (xrun *)rb;
    xshared *sh = r->sh;
    if (!grow((void **)&sh->res, &sh->cap_res, sh->n_res + 1, sizeof *sh->res)) {
        free_fn(obj);
        return nomem(r);
    }
    sh->res[sh->n_res++] = (resource){obj, free_fn};
    return GN_OK;
}

/* ---- Grapnel>EngineOp: the engine cache ------------------------------------------------------ */
static void int8_free(void *ctx, void *engine)
{
    (void)ctx;
    gn__int8_engine_free(engine);
}

static cpu_engine_cache *engine_cache(cpu_lib *lib, const gn_graph *g, gn_id node)
{
    for (uint32_t i = 0; i < lib->n_ec; i++)
        if (lib->ec[i].g == g && lib->ec[i].node == node) return &lib->ec[i];
    if (!grow((void **)&lib->ec, &lib->cap_ec, lib->n_ec + 1, sizeof *lib->ec)) return NULL;
    cpu_engine_cache *c = &lib->ec[lib->n_ec++];
    memset(c, 0, sizeof *c);
    c->g = g;
    c->node = node;
    c->cache.free_engine = int8_free;
    return c;
}

/* An INT8 engine op's engine: built from its native segment and calibration
 * table (int8.h) into entry k. A failed build leaves k->failed (the native
 * segment runs). */
static void build_int8(gn__kctx *c, const char *segment_fn, gn__engine_cache_entry *k)
{
    const char *tab = NULL;
    size_t tl = 0;
    const gn__function *fn = gn__graph_find_function(c->g, segment_fn);
    gn__err e2;
    memset(&e2, 0, sizeof e2);
    gn__int8_engine *eng = NULL;
    if (!fn || !gn__attr_get_string(c->g, c->node, "calibration_data", &tab, &tl) || !tl ||
        gn__int8_engine_build(fn->body, tab, tl, &eng, &e2) != GN_OK)
        k->failed = true;
    k->engine = eng;
    gn__err_clear(&e2);
}

/* A new cache starts with the engines built ahead of time (gn_engines_build)
 * or saved in the SavedModel's assets (io/engine_store.h): each is
 * built now, for its input shapes (counted as prebuilt; stale asset records
 * are counted and left out). */
static gn_status seed_cache(xrun *r, cpu_engine_cache *ec, gn__kctx *c, const gn__engine_op_cfg *op)
{
    const char *segment_fn = op->segment_fn;
    const bool int8 = op->int8;
    cpu_lib *lib = r->p->lib;
    gn__engine_shapes *sh = NULL;
    uint32_t n = 0, stale = 0;
    gn_status s = gn__engine_seeds(lib->top, c->g, c->node, GN__ENGINE_CPU, op->max, &sh, &n, &stale, c->err);
    if (s != GN_OK) {
        gn__err_prefix(c->err, "node '%s' (Grapnel>EngineOp)", gn__node_name(c->g, c->node));
        return s;
    }
    lib->eng_stale += stale;
    if (n && !int8) {
        /* on this backend an FP32/FP16 engine is its function compiled (once per program) */
        const char *fname = op->engine_fn;
        const gn__function *fn = gn__graph_find_function(c->g->lib ? c->g->lib : c->g, fname);
        xprog *bp = NULL;
        if (!fn) s = gn__kctx_fail(c, GN_ERR_GRAPH, "function '%s' is not in the library", fname);
        else s = gn__xprog_function(lib, fn, &bp, c->err);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (s != GN_OK) {
            gn__engine_shapes_free(&sh[i]);
            continue;
        }
        gn__engine_key key = {sh[i].n_in, NULL, sh[i].rank, sh[i].dims};
        sh[i].rank = NULL;
        sh[i].dims = NULL;
        bool evicted;   /* never: the seeds are at most max */
        gn__engine_cache_entry *k = gn__engine_cache_insert(&ec->cache, op->max, &key, NULL, ++lib->clock, &evicted);
        gn__engine_shapes_free(&sh[i]);
        if (!k) {
            s = nomem(r);
            continue;
        }
        if (int8) build_int8(c, segment_fn, k);
        if (!k->failed) lib->eng_prebuilt++;
    }
    free(sh);
    return s;
}

static gn_status run_engine(struct gn__run *rb, gn__kctx *c, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                            uint32_t n_out)
{
    xrun *r = (xrun *)rb;
    cpu_lib *lib = r->p->lib;
    gn__engine_op_cfg op;
    gn__engine_op_read(c->g, c->node, &op);
    const char *seg = op.segment_fn;
    if (!seg) return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'segment_func' is missing or not a function");
    if (!lib) return run_call(rb, c, seg, in, n_in, out, n_out);
    if (op.int8 && !op.table_len) {
        /* INT8 with use_calibration and no table yet: not calibrated (gn_calibrate),
         * so no engine can be built; the native segment runs */
        lib->eng_fallbacks++;
        return run_call(rb, c, seg, in, n_in, out, n_out);
    }
    cpu_engine_cache *ec = engine_cache(lib, c->g, c->node);
    if (!ec) return nomem(r);
    if (!ec->seeded) {
        ec->seeded = true;
        gn_status s = seed_cache(r, ec, c, &op);
        if (s != GN_OK) {
            /* nothing was added (a malformed asset): the next run reports it again */
            if (!ec->cache.n) ec->seeded = false;
            return s;
        }
    }
    lib->clock++;
    gn__engine_cache_entry *hit = gn__engine_cache_find(&ec->cache, in, n_in);
    if (hit) {
        hit->last_use = lib->clock;
        if (!hit->failed) lib->eng_hits++;
    } else if (op.allow) {
        /* build: on this backend an engine is the segment compiled and planned for
         * these shapes (FP32, FP16), or the int8 program made from it (INT8) */
        gn__engine_key key;
        bool evicted;
        if (!gn__engine_key_of(&key, in, n_in, false)) return nomem(r);
        hit = gn__engine_cache_insert(&ec->cache, op.max, &key, NULL, lib->clock, &evicted);
        if (evicted) lib->eng_evictions++;
        if (!hit) return nomem(r);
        if (op.int8) build_int8(c, seg, hit);
        if (!hit->failed) lib->eng_builds++;
    } else {
        lib->eng_fallbacks++;
        return run_call(rb, c, seg, in, n_in, out, n_out);
    }
    if (hit->failed) {
        lib->eng_fallbacks++;
        return run_call(rb, c, seg, in, n_in, out, n_out);
    }
    if (hit->engine) {
        gn_status s = gn__int8_engine_run(hit->engine, in, n_in, out, n_out, c->err);
        if (s != GN_OK) gn__err_prefix(c->err, "node '%s' (Grapnel>EngineOp)", gn__node_name(c->g, c->node));
        return s;
    }
    /* an engine: its own function when the conversion made one (FP16), else the segment */
    return run_call(rb, c, op.engine_fn, in, n_in, out, n_out);
}

static const struct gn__run_ops run_ops = {run_call, run_own, run_engine};

/* ---- a run ------------------------------------------------------------------------------- */
static const char *fetch_name(const xprog *p, uint32_t i, char *buf, size_t n)
{
    gn__edge e = p->fetch_edge[i];
    if (e.index) snprintf(buf, n, "%s:%u", gn__node_name(p->g, e.node), e.index);
    else snprintf(buf, n, "%s", gn__node_name(p->g, e.node));
    return buf;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The run's step and time bounds, before node n runs (the clock is read
 * every 64 steps). The message names the node that would have run next;
 * a function call's caller prefixes its own node (run_call). */
static gn_status check_bounds(xrun *r, uint32_t n)
{
    xshared *sh = r->sh;
    sh->steps++;
    bool over_steps = sh->step_limit && sh->steps > sh->step_limit;
    if (!over_steps && !(sh->deadline_ns && (sh->steps & 63) == 0 && now_ns() > sh->deadline_ns)) return GN_OK;
    char at[600] = "";
    if (r->p->nodes[n].gid != GN_NONE) snprintf(at, sizeof at, "node '%s' (%s): ", node_name(r, n), node_op(r, n));
    if (over_steps)
        return gn__fail(r->err, GN_ERR_LIMIT, "%sthe run reached the session's step limit of %llu node executions", at,
                        (unsigned long long)sh->step_limit);
    return gn__fail(r->err, GN_ERR_LIMIT, "%sthe run went past the session's time limit of %llu ms", at,
                    (unsigned long long)sh->time_limit_ms);
}

static gn_status xrun_exec(xprog *p, const gn__tensor *in, gn__tensor *out, xshared *sh, cpu_alloc *alloc,
                           cpu_rec *rec, gn__err *err)
{
    xrun r;
    memset(&r, 0, sizeof r);
    r.base.ops = &run_ops;
    r.p = p;
    r.sh = sh;
    r.alloc = alloc;
    r.rec = rec;
    r.feeds = in;
    r.err = err;
    gn_status s = GN_OK;
    r.results = calloc(p->n_fetches + 1, sizeof *r.results);
    r.got = calloc(p->n_fetches + 1, 1);
    r.out = calloc(p->max_out + 1, sizeof *r.out);
    if (!r.results || !r.got || !r.out) s = nomem(&r);
    if (s == GN_OK) {
        r.root = frame_new(&r, 0, NULL, 0, 1);
        if (!r.root) s = nomem(&r);
    }
    for (uint32_t i = 0; s == GN_OK && i < p->n_roots; i++) s = push_ready(&r, p->roots[i], r.root, 0, false);
    while (s == GN_OK && r.qlen) {
        tagged t = r.q[r.qhead];
        r.qhead = (r.qhead + 1) % r.qcap;
        r.qlen--;
        s = check_bounds(&r, t.node);
        if (s != GN_OK) break;
        if (rec) gn__rec_step(rec, r.step);
        s = process(&r, t);
        r.step++;
    }
    if (rec) gn__rec_step(rec, r.step);
    for (uint32_t i = 0; s == GN_OK && i < p->n_fetches; i++) {
        char nm[600];
        if (r.got[i] == 2)
            s = gn__fail(err, GN_ERR_GRAPH, "fetch '%s' is dead: it is on the untaken branch of a Switch",
                         fetch_name(p, i, nm, sizeof nm));
        else if (r.got[i] == 0)
            s = gn__fail(err, GN_ERR_GRAPH, "fetch '%s' was never computed: the run stopped with nodes still waiting for inputs",
                         fetch_name(p, i, nm, sizeof nm));
    }
    /* teardown: every frame, every slot */
    while (r.all) frame_free(&r, r.all);
    for (uint32_t i = 0; r.results && i < p->n_fetches; i++) {   /* NULL: its own allocation failed */
        if (s == GN_OK) out[i] = r.results[i];
        else gn__tensor_release(&r.results[i]);
    }
    free(r.results);
    free(r.got);
    free(r.out);
    free(r.q);
    return s;
}

gn_status gn__xprog_run(xprog *p, const gn__tensor *in, gn__tensor *out, const cpu_exec_opts *o, gn__err *err)
{
    xshared sh;
    memset(&sh, 0, sizeof sh);
    sh.seed = o->seed;
    sh.stats = o->stats;
    sh.max_tensor_bytes = o->max_tensor_bytes;
    sh.blas = o->blas;
    sh.step_limit = o->step_limit;
    sh.time_limit_ms = o->time_limit_ms;
    if (o->time_limit_ms) {
        uint64_t t0 = now_ns(), span = o->time_limit_ms > UINT64_MAX / 1000000u ? UINT64_MAX : o->time_limit_ms * 1000000u;
        sh.deadline_ns = span > UINT64_MAX - t0 ? UINT64_MAX : t0 + span;
    }
    cpu_alloc a = {o->plan, NULL, p, 0, o->stats, NULL, 0, 0};
    if (o->plan && gn__plan_state(o->plan) == PLAN_RECORD) {
        a.rec = gn__rec_new(p);   /* NULL (out of memory): the run is simply not recorded */
    }
    gn_status s = xrun_exec(p, in, out, &sh, &a, a.rec, err);
    gn__sa_release(&a);
    /* resources die with the outermost run, before the recording closes */
    for (uint32_t i = sh.n_res; i-- > 0;) sh.res[i].free_fn(sh.res[i].obj);
    free(sh.res);
    if (a.rec) gn__rec_finish(a.rec, o->plan, s == GN_OK);
    return s;
}
