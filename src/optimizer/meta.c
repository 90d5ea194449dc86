/* The meta-optimizer: runs the enabled passes in Grappler's order over the
 * main graph and then every function body, for the configured iterations,
 * with timing, rollback and an optional validation after every pass; and the
 * report. After tensorflow/core/grappler/optimizers/meta_optimizer.cc
 * (docs/reference_grappler.md §2). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "opdef/registry.h"
#include "optimizer/colocation.h"
#include "optimizer/pass.h"
#include "optimizer/report.h"

/* ---- report ------------------------------------------------------------------- */
static char *dupstr(const char *s) { return s ? strdup(s) : NULL; }

static void report_note(gn_report *r, const char *fmt, ...) GN__PRINTF(2, 3);
static void report_note(gn_report *r, const char *fmt, ...)
{
    if (!r) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->n_notes == r->cap_notes) {
        size_t nc = r->cap_notes ? r->cap_notes * 2 : 8;
        char **nn = realloc(r->notes, nc * sizeof *nn);
        if (!nn) {
            r->oom = true;
            return;
        }
        r->notes = nn;
        r->cap_notes = nc;
    }
    r->notes[r->n_notes] = dupstr(buf);
    if (r->notes[r->n_notes]) r->n_notes++;
}

static run_entry *report_run(gn_report *r)
{
    if (!r) return NULL;
    if (r->n_runs == r->cap_runs) {
        size_t nc = r->cap_runs ? r->cap_runs * 2 : 32;
        run_entry *nr = realloc(r->runs, nc * sizeof *nr);
        if (!nr) {
            r->oom = true;
            return NULL;
        }
        r->runs = nr;
        r->cap_runs = nc;
    }
    run_entry *e = &r->runs[r->n_runs++];
    memset(e, 0, sizeof *e);
    return e;
}

void gn_report_free(gn_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_runs; i++) {
        free(r->runs[i].item);
        free(r->runs[i].pass);
        free(r->runs[i].message);
    }
    gn__arena_free(&r->strings);
    for (size_t i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->runs);
    free(r->events);
    free(r->notes);
    free(r);
}

/* ---- timing -------------------------------------------------------------------------- */
/* CPU time of the calling thread, so that figures stay meaningful on a loaded
 * machine (several optimize calls may run on several threads at once). */
static int64_t cpu_now_us(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the pass table ------------------------------------------------------------------- */
enum { RULE_DEFAULT_ON, RULE_ON_ONLY, RULE_AMP, RULE_PRUNING, RULE_BOOL };

typedef struct pass_row {
    const char *name;
    const char *key;
    int rule;
    bool run_once;
    gn__pass_fn fn;
    const gn__pattern *patterns;
    const char *help;
    size_t key_offset;
} pass_row;

static const pass_row pass_table[] = {
#define GN_PASS(ID, name, key, rule, run_once, fn, patterns, help) \
    {name, #key, RULE_##rule, run_once, fn, patterns, help, offsetof(gn_options, key)},
#include "optimizer/passes/passes.def"
#undef GN_PASS
};

static int32_t opt_value(const gn_options *o, const pass_row *p)
{
    return *(const int32_t *)((const char *)o + p->key_offset);
}

/* Grappler's three toggle rules (docs/reference_grappler.md §1.2). */
static bool pass_enabled(const gn_options *o, const pass_row *p, size_t idx)
{
    int32_t v = opt_value(o, p);
    switch (p->rule) {
    case RULE_DEFAULT_ON:
        if (idx == GN__PASS_CSE && (o->arithmetic_optimization == GN_TOGGLE_OFF ||
                                    o->arithmetic_optimization == GN_TOGGLE_EXPERIMENTAL_MLIR))
            return false;
        return v != GN_TOGGLE_OFF && v != GN_TOGGLE_EXPERIMENTAL_MLIR;
    case RULE_ON_ONLY: return v == GN_TOGGLE_ON;
    case RULE_AMP: return v == GN_TOGGLE_ON || v == GN_TOGGLE_AGGRESSIVE;
    case RULE_PRUNING: return !v;
    case RULE_BOOL: return v != 0;
    }
    return false;
}

gn_status gn_optimizer_list_passes(char **text)
{
    if (!text) return GN_ERR_ARG;
    gn__buf b;
    gn__buf_init(&b);
    for (size_t i = 0; i < GN__ARRAY_LEN(pass_table); i++) {
        const pass_row *p = &pass_table[i];
        gn__buf_printf(&b, "%-28s %-30s %s%s\n", p->name, p->key, p->help, p->fn ? "" : " (not built yet)");
        for (const gn__pattern *q = p->patterns; q && q->id; q++) gn__buf_printf(&b, "    %-44s %s\n", q->id, q->help);
    }
    *text = gn__buf_take(&b);
    return *text ? GN_OK : GN_ERR_NOMEM;
}

/* ---- graph bookkeeping ------------------------------------------------------------- */
/* Nodes (as count_nodes) and edges in one sweep. */
static void count_both(const gn_graph *g, uint32_t *nodes, uint64_t *edges)
{
    uint32_t n = 0;
    uint64_t e = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *x = &g->nodes[i];
        if (x->flags & GN__NODE_DEAD) continue;
        e += (uint64_t)x->n_in + x->n_ctrl;
        n += !(x->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET));
    }
    *nodes = n;
    *edges = e;
}

static uint32_t count_nodes(const gn_graph *g)
{
    uint32_t n = 0;
    for (gn_id i = 0; i < g->n_nodes; i++)
        n += !(g->nodes[i].flags & (GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET));
    return n;
}

/* Exchanges the contents of two graph handles (rollback), keeping each
 * handle's library links pointing at itself. */
static void swap_graphs(gn_graph *a, gn_graph *b)
{
    gn_graph t = *a;
    *a = *b;
    *b = t;
    if (a->kind == GN__GRAPH_TOP) {
        a->lib = a;
        b->lib = b;
        for (uint32_t f = 0; f < a->n_fns; f++)
            if (a->fns[f].body) a->fns[f].body->lib = a;
        for (uint32_t f = 0; f < b->n_fns; f++)
            if (b->fns[f].body) b->fns[f].body->lib = b;
    } else {
        const gn_graph *lib = b->lib;
        b->lib = a->lib;
        a->lib = lib;
    }
}

static gn_status clone_item(const gn_graph *g, gn_graph **out)
{
    GN_TRY(gn__graph_clone(g, out));
    if (g->kind == GN__GRAPH_FUNCTION) (*out)->lib = g->lib;
    return GN_OK;
}

/* ---- preservation ------------------------------------------------------------------------ */
static gn_status mark_name(gn_graph *g, const char *tensor, const char *what, gn__err *err)
{
    const char *colon = strrchr(tensor, ':');
    size_t n = strlen(tensor);
    if (colon && colon[1]) {
        bool digits = true;
        for (const char *p = colon + 1; *p; p++) digits &= *p >= '0' && *p <= '9';
        if (digits) n = (size_t)(colon - tensor);
    }
    if (tensor[0] == '^') {
        tensor++;
        n--;
    }
    gn_id id = gn__graph_find_n(g, tensor, n);
    if (id == GN_NONE) return gn__fail(err, GN_ERR_NOT_FOUND, "%s '%s': no such node in the graph", what, tensor);
    g->nodes[id].flags |= GN__NODE_PRESERVE;
    if (strcmp(what, "feed") == 0) g->nodes[id].flags |= GN__NODE_FED;
    return GN_OK;
}

static bool is_stateful(const gn_graph *g, gn_id id)
{
    const gn__opdef *op = gn__node_opdef(g, id);
    if (!op) return true; /* unknown ops: assume side effects */
    return (op->flags & GN__OPF_STATEFUL) != 0;
}

/* Clears every mark, then marks the graph's outputs and stateful nodes (one
 * sweep: on large graphs each sweep is a read of the whole node array). */
static void mark_default_preserved(gn_graph *g)
{
    for (gn_id i = 0; i < g->n_nodes; i++) {
        gn__node *n = &g->nodes[i];
        n->flags &= ~(uint32_t)(GN__NODE_PRESERVE | GN__NODE_FED);
        if (n->flags & GN__NODE_DEAD) continue;
        if ((n->n_use == 0 && n->n_cuse == 0) || is_stateful(g, i) || (n->flags & GN__NODE_FN_RET))
            n->flags |= GN__NODE_PRESERVE;
    }
}

static void clear_preserved(gn_graph *g)
{
    for (gn_id i = 0; i < g->n_nodes; i++) g->nodes[i].flags &= ~(uint32_t)(GN__NODE_PRESERVE | GN__NODE_FED);
}

/* ---- dumps -------------------------------------------------------------------------------- */
static void dump_graph(gn_graph *top, const char *dir, uint32_t *seq, int32_t it, const char *what, gn_report *r)
{
    if (!dir) return;
    mkdir(dir, 0755);
    char path[4096];
    snprintf(path, sizeof path, "%s/%04u_it%d_%s.pbtxt", dir, (*seq)++, it, what);
    gn__err saved = top->err;
    if (gn_graph_save(top, path, GN_FORMAT_TEXT) != GN_OK) report_note(r, "dump %s failed: %s", path, top->err.msg);
    top->err = saved;
}

/* ---- the driver ----------------------------------------------------------------------------- */
typedef struct run_state {
    gn_graph *top;
    const gn_options *o;
    const gn_optimize_params *p;
    gn_report *r;
    int64_t deadline;
    bool timed_out;
    uint32_t dump_seq;
    gn__err *err;
    gn_target target;
    bool guard_hit;         /* the last exec_pass was stopped by the guard */
    /* The colocation entries of coloc_item as they were before the last pass,
     * kept while passes change nothing: collecting them is a walk over the
     * whole graph, before every pass. Dropped (coloc_item NULL) whenever the
     * item may have changed: a pass that says so, a failed one, a rollback. */
    gn__coloc coloc;
    const gn_graph *coloc_item;
} run_state;

static void coloc_drop(run_state *st)
{
    gn__coloc_free(&st->coloc);
    st->coloc_item = NULL;
}

/* The guard (docs/hardening.md): a pass run may leave the graph with at most
 * GUARD_GROWTH times the nodes it started with (the top level counts its
 * function bodies too, which inlining copies) plus GUARD_SLACK, tombstones
 * included, and may poll its loop heads at most GUARD_POLLS times; past
 * either it stops with GN_ERR_LIMIT, and the optimization ends with an error
 * naming the pass. Legitimate passes stay far below both. */
#define GUARD_GROWTH 8u
#define GUARD_SLACK 100000u
#define GUARD_POLLS (1u << 20)

static uint32_t guard_node_cap(const gn_graph *item, uint32_t *start)
{
    uint64_t n = item->n_nodes;
    if (item->kind == GN__GRAPH_TOP)
        for (uint32_t f = 0; f < item->n_fns; f++)
            if (item->fns[f].body) n += item->fns[f].body->n_nodes;
    *start = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    uint64_t cap = n * GUARD_GROWTH + GUARD_SLACK;
    return cap > UINT32_MAX - 2 ? UINT32_MAX - 2 : (uint32_t)cap;
}

/* Marks what passes must keep: fetches and feeds (top level), else the graph's
 * outputs and stateful nodes; in function bodies returns, control returns and
 * stateful nodes. Recomputed before every pass, so that a node a pass made
 * stateless (an Assert stripped to a NoOp) is not kept by an earlier mark,
 * and a second optimize has nothing left to do. */
static gn_status mark_preserved(run_state *st, gn_graph *item)
{
    if (item->kind == GN__GRAPH_FUNCTION) {
        mark_default_preserved(item);
        const gn_graph *top = item->lib;
        for (uint32_t f = 0; f < top->n_fns; f++) {
            const gn__function *fn = &top->fns[f];
            if (fn->body != item) continue;
            for (uint32_t k = 0; k < fn->n_control_ret; k++)
                if (fn->control_ret_node[k] != GN_NONE) item->nodes[fn->control_ret_node[k]].flags |= GN__NODE_PRESERVE;
        }
        return GN_OK;
    }
    const gn_optimize_params *p = st->p;
    if (!p || p->n_fetches == 0) mark_default_preserved(item);
    else clear_preserved(item);
    for (size_t i = 0; p && i < p->n_fetches; i++) GN_TRY(mark_name(item, p->fetches[i], "fetch", st->err));
    for (size_t i = 0; p && i < p->n_feeds; i++) GN_TRY(mark_name(item, p->feeds[i], "feed", st->err));
    return GN_OK;
}

/* Rollback. The snapshot is a copy of the item taken before some pass; the
 * built-in passes that ran since (in order, each with whether the marks were
 * recomputed before it) are listed in `redo`. A pass that fails is undone by
 * going back to the copy and running those passes again: built-in passes are
 * deterministic (same graph, same options, no time budget: same result), so
 * this gives the graph as it was before the failed pass, and a copy is taken
 * once for many passes instead of after every pass that changed something.
 * With a time budget (a cut run is not repeatable), after a custom pass (user
 * code, which may not be) that ran while passes were listed or changed the
 * item, or when the list is full, the copy is dropped and the next pass takes
 * a new one, as it does after a rollback. A custom pass that fails is rolled
 * back the same way.
 *
 * `cur` says that the item is as its marks and counts (nodes, edges) were
 * taken: no pass changed it since. */
#define REDO_MAX 32

typedef struct redo {
    gn__pass_fn fn;
    const char *name;
    int32_t toggle;
    uint32_t it;
    bool marked;        /* mark_preserved ran before it */
} redo;

typedef struct snapshot {
    gn_graph *g;
    uint32_t nodes;
    uint64_t edges;
    bool cur;
    redo redo[REDO_MAX];
    uint32_t n_redo;
    bool given_up;      /* the running pass gave the copy up (gn__pass_claim_bytes): a copy
                           there now is of the item partway through that pass */
} snapshot;

static void snapshot_drop(snapshot *b)
{
    gn_graph_free(b->g);
    b->g = NULL;
    b->n_redo = 0;
}

/* The pass's hooks on the copy (gn__pass_snapshot, optimizer/pass.h). */
static bool snap_holds(void *user, const void *p, size_t n)
{
    const snapshot *b = user;
    return b->g && gn__graph_bytes_holders(b->g, p, n) == 2;
}

static void snap_give_up(void *user)
{
    snapshot *b = user;
    snapshot_drop(b);
    b->given_up = true;
}

static bool snap_again(void *user, const gn_graph *g)
{
    snapshot *b = user;
    if (b->g) return true;
    gn_graph *copy = NULL;
    if (clone_item(g, &copy) != GN_OK) {
        gn_graph_free(copy);
        return false;
    }
    b->g = copy;
    b->n_redo = 0;
    return true;
}

/* One pass over the item, as the driver runs it: the pass, compaction, the
 * checked-mode validation, and the shape table dropped after a change. */
static gn_status exec_pass(run_state *st, gn_graph *item, snapshot *backup, gn_report *report,
                           const char *item_name, const char *pass_name, int32_t toggle, gn__pass_fn fn,
                           const gn_custom_pass *custom, uint32_t it, gn__err *perr, bool *changed)
{
    gn_status s;
    *changed = false;
    /* the colocation entries the pass may leave naming a renamed node: those
     * of the last pass when it changed nothing, else collected now */
    if (st->coloc_item != item) {
        coloc_drop(st);
        if ((s = gn__coloc_collect(item, &st->coloc, perr)) != GN_OK) return s;
        st->coloc_item = item;
    }
    /* checked mode: a graph whose loop frames hold before the pass must
     * hold after it (TensorFlow refuses a node fed from two frames) */
    bool frames_ok = false;
    if (st->o->checked) {
        frames_ok = gn__graph_check_frames(item) == GN_OK;
        gn__err_clear(&item->err);
    }
    uint32_t start_nodes;
    gn__pass_guard guard = {0, GUARD_POLLS, false};
    item->node_cap = guard_node_cap(item, &start_nodes);
    item->node_cap_hit = false;
    st->guard_hit = false;
    if (fn) {
        gn__pass_ctx c;
        memset(&c, 0, sizeof c);
        c.opts = st->o;
        c.target = &st->target;
        c.report = report && !report->no_events ? report : NULL;
        c.n_grapnel_only = report ? &report->n_grapnel_only : NULL;
        c.pass_id = pass_name;
        c.toggle = toggle;
        c.iteration = it;
        c.fn_name = item->kind == GN__GRAPH_FUNCTION ? item_name : NULL;
        c.lib = st->top;
        c.deadline_us = st->deadline;
        c.err = perr;
        c.guard = &guard;
        gn__pass_snapshot hooks = {backup, snap_holds, snap_give_up, snap_again};
        c.snapshot = st->o->checked || !backup ? NULL : &hooks;
        if (st->p && item == st->top) {
            c.fetches = st->p->fetches;
            c.n_fetches = st->p->n_fetches;
        }
        s = fn(&c, item);
        *changed = c.changed;
    } else {
        int32_t ch = 0;
        char msg[GN__ERRMSG_MAX] = "";
        /* callers' code sees node ids 0..n-1, every one live */
        if ((s = gn__graph_compact(item)) != GN_OK) {
            item->node_cap = 0;
            coloc_drop(st);
            return s;
        }
        s = custom->run(custom->user, item, &ch, msg, sizeof msg);
        *changed = ch != 0;
        if (s != GN_OK) gn__fail(perr, s, "%s", msg[0] ? msg : gn_status_str(s));
    }
    uint32_t cap = item->node_cap;
    item->node_cap = 0;
    if (item->node_cap_hit || guard.tripped) {
        st->guard_hit = true;
        item->node_cap_hit = false;
        if (guard.tripped)
            s = gn__fail(perr, GN_ERR_LIMIT,
                         "stopped by the optimizer's guard: the pass ran past its step budget (%u checks of its work "
                         "lists)",
                         GUARD_POLLS);
        else
            s = gn__fail(perr, GN_ERR_LIMIT,
                         "stopped by the optimizer's guard: the pass grew the graph from %u to %u nodes, the limit (%u "
                         "x %u + %u)",
                         start_nodes, cap, GUARD_GROWTH, start_nodes, GUARD_SLACK);
        coloc_drop(st);
        return s;
    }
    if (s == GN_OK && *changed) {
        bool moved = false;
        s = gn__coloc_fix(item, &st->coloc, &moved, perr);
        if (s != GN_OK && !perr->msg[0]) gn__fail(perr, s, "colocation attrs: %s", item->err.msg);
    }
    if (s != GN_OK || *changed) coloc_drop(st);
    /* Removed nodes stay as tombstones, which every pass skips, until they
     * are a fifth of the array: renumbering a large graph after every pass
     * costs more than stepping over them. optimize_item compacts at the end. */
    if (s == GN_OK && (custom || (item->n_nodes - item->n_live) * 5 > item->n_nodes)) s = gn__graph_compact(item);
    if (s == GN_OK && st->o->checked) {
        s = gn__graph_validate(item);
        if (s == GN_OK) s = gn__graph_check_fanouts(item);
        if (s == GN_OK && frames_ok) s = gn__graph_check_frames(item);
        if (s != GN_OK) {
            gn__fail(perr, s, "graph invalid after the pass: %s", item->err.msg);
        }
    }
    return s;
}

/* After a failed pass: the item goes back to the snapshot and the listed
 * passes run again (their report entries and events are not repeated). Where
 * that cannot be done (no memory for a spare copy, or a pass failing the
 * second time), the item is left as the snapshot, a valid graph, and the
 * report says which passes were lost. */
static void roll_back(run_state *st, gn_graph *item, snapshot *backup, const char *item_name, const char *pass_name,
                      bool marked)
{
    swap_graphs(item, backup->g); /* backup->g now holds what the failed pass left */
    gn__attachment_drop(&item->shapes);
    coloc_drop(st);
    if (!backup->n_redo) return;
    gn_graph *spare = NULL;
    gn_report *scratch = calloc(1, sizeof *scratch);
    if (scratch) {
        gn__arena_init(&scratch->strings, 1 << 12);
        scratch->no_events = st->r->no_events;
    }
    gn_status s = scratch ? clone_item(item, &spare) : GN_ERR_NOMEM;
    const char *failed = NULL;
    if (s == GN_OK) {
        for (uint32_t k = 0; k < backup->n_redo && s == GN_OK; k++) {
            const redo *r = &backup->redo[k];
            gn__err perr;
            gn__err_clear(&perr);
            bool ch = false;
            failed = r->name;
            if (r->marked) s = mark_preserved(st, item);
            if (s == GN_OK) s = exec_pass(st, item, NULL, scratch, item_name, r->name, r->toggle, r->fn, NULL, r->it, &perr, &ch);
            if (ch || s != GN_OK) gn__attachment_drop(&item->shapes);
        }
        /* the marks the failed pass started from */
        if (s == GN_OK && marked) s = mark_preserved(st, item);
        if (s != GN_OK) {
            swap_graphs(item, spare);
            gn__attachment_drop(&item->shapes);
            coloc_drop(st);
        }
    }
    if (s != GN_OK)
        report_note(st->r,
                    "%s: rolling back pass '%s' needed the %u pass%s since the last snapshot run again, and %s: the "
                    "graph is as it was before pass '%s'",
                    item_name, pass_name, backup->n_redo, backup->n_redo == 1 ? "" : "es",
                    failed ? "one of them failed" : "there was no memory for it", backup->redo[0].name);
    gn_graph_free(spare);
    gn_report_free(scratch);
}

/* Runs one pass (built-in or custom) over one item; rolls back on failure. */
static gn_status run_one(run_state *st, gn_graph *item, snapshot *backup, const char *item_name, const char *pass_name,
                         int32_t toggle, gn__pass_fn fn, const gn_custom_pass *custom, uint32_t it, bool *changed,
                         bool *rolled_back)
{
    *changed = false;
    *rolled_back = false;
    uint32_t nb;
    uint64_t eb;
    gn_status s;
    bool marked = !backup->cur;
    if (backup->cur) {
        nb = backup->nodes;
        eb = backup->edges;
    } else {
        GN_TRY(mark_preserved(st, item));
        count_both(item, &nb, &eb);
        backup->nodes = nb;
        backup->edges = eb;
        backup->cur = true;
    }
    /* under a time budget the copy must be the item itself */
    if (backup->g && backup->n_redo && st->deadline) snapshot_drop(backup);
    if (!backup->g) {
        s = clone_item(item, &backup->g);
        if (s != GN_OK) return gn__fail(st->err, s, "cannot snapshot the graph before pass '%s'", pass_name);
    }
    run_entry *e = report_run(st->r);
    gn__err perr;
    gn__err_clear(&perr);
    int64_t t0 = gn__now_us(), c0 = cpu_now_us();
    backup->given_up = false;
    s = exec_pass(st, item, backup, st->r, item_name, pass_name, toggle, fn, custom, it, &perr, changed);
    bool guard = st->guard_hit;
    int64_t dt = gn__now_us() - t0, dc = cpu_now_us() - c0;
    bool rolled = false;
    /* a pass that wrote over bytes the copy shared goes back, when it fails,
     * to the copy it took after its last such write (gn__pass_snapshot_again),
     * partway through it; without one, its failure fails the run */
    bool stuck = s != GN_OK && backup->given_up && !backup->g;
    if (s != GN_OK && !perr.msg[0]) gn__fail(&perr, s, "%s", item->err.msg[0] ? item->err.msg : gn_status_str(s));
    if (stuck) backup->cur = false;
    if (s != GN_OK && backup->given_up && backup->g)
        report_note(st->r, "%s: pass '%s' failed after writing constants in place: the graph is as the pass left it "
                    "after its last such write",
                    item_name, pass_name);
    if (s != GN_OK && !stuck) {
        roll_back(st, item, backup, item_name, pass_name, marked);
        rolled = true;
        *rolled_back = true;
        *changed = false;
        snapshot_drop(backup); /* it holds what the failed pass left */
        backup->cur = false;
    }
    /* a pass that edited the node arrays itself may have left the inferred
     * shapes behind; only an unchanged graph keeps them */
    if (*changed || rolled || stuck) gn__attachment_drop(&item->shapes);
    /* a built-in pass that says it changed nothing left the counts as they
     * were (callers' passes are counted) */
    uint32_t na = nb;
    uint64_t ea = eb;
    if (!fn || *changed || rolled) count_both(item, &na, &ea);
    if (!rolled && backup->given_up) snapshot_drop(backup); /* a copy from partway through the pass */
    if (!rolled) {
        if (*changed || na != backup->nodes || ea != backup->edges) backup->cur = false;
        if (backup->g && (backup->n_redo || !backup->cur)) {
            /* the item is no longer the copy: list the pass, or give the copy up */
            if (fn && !st->deadline && backup->n_redo < REDO_MAX)
                backup->redo[backup->n_redo++] = (redo){fn, pass_name, toggle, it, marked};
            else
                snapshot_drop(backup);
        }
    }
    if (e) {
        e->item = dupstr(item_name);
        e->pass = dupstr(pass_name);
        e->iteration = (int32_t)it;
        e->micros = dt;
        e->cpu_micros = dc;
        e->nodes_before = nb;
        e->edges_before = eb;
        e->nodes_after = na;
        e->edges_after = ea;
        e->status = s;
        e->changed = *changed;
        e->rolled_back = rolled;
        e->message = s != GN_OK ? dupstr(perr.msg) : NULL;
    }
    if (stuck)
        return gn__fail(st->err, s,
                        "pass '%s' failed on %s after writing constants in place, so it cannot be rolled back: %s",
                        pass_name, item_name, perr.msg);
    if (s != GN_OK && (st->o->fail_on_optimizer_errors || guard))
        return gn__fail(st->err, s, "pass '%s' failed on %s: %s", pass_name, item_name, perr.msg);
    return GN_OK;
}

static uint32_t num_iterations(const gn_options *o)
{
    return o->meta_optimizer_iterations == GN_ITERS_ONE ? 1 : 2;
}

static gn_status optimize_item(run_state *st, gn_graph *item, const char *item_name)
{
    int64_t min_nodes = st->o->min_graph_nodes == 0 ? 4 : st->o->min_graph_nodes;
    uint32_t iters = num_iterations(st->o);
    snapshot backup;
    memset(&backup, 0, sizeof backup);
    gn_status s = GN_OK;
    /* A pass that changed nothing, on an item no pass has changed since, would
     * change nothing again (passes are deterministic and do not depend on the
     * iteration): a later iteration skips it. changes counts the runs that
     * changed the item; clean_at[i] is its value after pass i ran and changed
     * nothing (0: never). Not with a time budget, which may have cut a run. */
    uint64_t changes = 1, clean_at[GN__ARRAY_LEN(pass_table)];
    memset(clean_at, 0, sizeof clean_at);
    coloc_drop(st);   /* kept for this item's passes only */
    for (uint32_t it = 0; it < iters && s == GN_OK; it++) {
        if (min_nodes > 0 && (int64_t)count_nodes(item) < min_nodes) {
            report_note(st->r, "%s: %u nodes, fewer than min_graph_nodes (%lld): not optimized", item_name,
                        count_nodes(item), (long long)min_nodes);
            break;
        }
        bool any = false;
        for (size_t i = 0; i < GN__ARRAY_LEN(pass_table) && s == GN_OK; i++) {
            const pass_row *p = &pass_table[i];
            if (!pass_enabled(st->o, p, i) || !p->fn) continue;
            if (it > 0 && p->run_once) continue;
            if (i == GN__PASS_SCOPED_ALLOCATOR) continue; /* Grappler: last, once, after the iterations */
            if (st->deadline && gn__now_us() > st->deadline) {
                st->timed_out = true;
                report_note(st->r, "meta_optimizer_timeout_ms (%lld ms) cut work: %s iteration %u stopped before '%s'",
                            (long long)st->o->meta_optimizer_timeout_ms, item_name, it + 1, p->name);
                snapshot_drop(&backup);
                coloc_drop(st);
                return gn__graph_compact(item);
            }
            bool ch, rb;
            if (!st->deadline && clean_at[i] == changes) {
                run_entry *e = report_run(st->r);
                if (e) {
                    memset(e, 0, sizeof *e);
                    e->item = dupstr(item_name);
                    e->pass = dupstr(p->name);
                    e->iteration = (int32_t)it;
                    if (backup.cur) {
                        e->nodes_before = backup.nodes;
                        e->edges_before = backup.edges;
                    } else {
                        count_both(item, &e->nodes_before, &e->edges_before);
                    }
                    e->nodes_after = e->nodes_before;
                    e->edges_after = e->edges_before;
                    e->skipped = true;
                }
                if (item == st->top)
                    dump_graph(st->top, st->p ? st->p->dump_dir : NULL, &st->dump_seq, (int32_t)it + 1, p->name, st->r);
                continue;
            }
            s = run_one(st, item, &backup, item_name, p->name, opt_value(st->o, p), p->fn, NULL, it, &ch, &rb);
            if (ch) changes++;
            else if (!rb) clean_at[i] = changes; /* a failed run is tried again */
            any |= ch;
            if (s == GN_OK && item == st->top)
                dump_graph(st->top, st->p ? st->p->dump_dir : NULL, &st->dump_seq, (int32_t)it + 1, p->name, st->r);
        }
        for (size_t k = 0; s == GN_OK && st->p && k < st->p->n_custom_passes; k++) {
            bool ch, rb;
            const gn_custom_pass *cp = &st->p->custom_passes[k];
            s = run_one(st, item, &backup, item_name, cp->name ? cp->name : "custom", 0, NULL, cp, it, &ch, &rb);
            if (ch) changes++;
            any |= ch;
        }
        if (!any) break; /* an iteration that changed nothing ends the loop */
    }
    const pass_row *sa = &pass_table[GN__PASS_SCOPED_ALLOCATOR];
    if (s == GN_OK && pass_enabled(st->o, sa, GN__PASS_SCOPED_ALLOCATOR) && sa->fn &&
        !(min_nodes > 0 && (int64_t)count_nodes(item) < min_nodes) && !(st->deadline && gn__now_us() > st->deadline)) {
        bool ch, rb;
        s = run_one(st, item, &backup, item_name, sa->name, opt_value(st->o, sa), sa->fn, NULL, iters - 1, &ch, &rb);
        if (s == GN_OK && item == st->top)
            dump_graph(st->top, st->p ? st->p->dump_dir : NULL, &st->dump_seq, (int32_t)iters, sa->name, st->r);
    }
    snapshot_drop(&backup);
    coloc_drop(st);
    if (s == GN_OK) s = gn__graph_compact(item);
    return s;
}

void gn_optimize_params_init(gn_optimize_params *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->target.kind = GN_TARGET_CPU;
}

/* ---- target ------------------------------------------------------------------------------- */
/* "auto": the CUDA driver, loaded at run time so the library needs no driver. */
static void target_auto(gn_target *t)
{
    t->kind = GN_TARGET_CPU;
    t->compute_capability = 0;
    t->num_gpus = 0;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    typedef int (*init_fn)(unsigned);
    typedef int (*count_fn)(int *);
    typedef int (*get_fn)(int *, int);
    typedef int (*attr_fn)(int *, int, int);
    init_fn cu_init = (init_fn)dlsym(h, "cuInit");
    count_fn cu_count = (count_fn)dlsym(h, "cuDeviceGetCount");
    get_fn cu_get = (get_fn)dlsym(h, "cuDeviceGet");
    attr_fn cu_attr = (attr_fn)dlsym(h, "cuDeviceGetAttribute");
    int n = 0, dev = 0, major = 0, minor = 0;
    /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75, _MINOR 76 */
    if (cu_init && cu_count && cu_get && cu_attr && cu_init(0) == 0 && cu_count(&n) == 0 && n > 0 &&
        cu_get(&dev, 0) == 0 && cu_attr(&major, 75, dev) == 0 && cu_attr(&minor, 76, dev) == 0) {
        t->kind = GN_TARGET_GPU;
        t->compute_capability = major * 10 + minor;
        t->num_gpus = n;
    }
    dlclose(h);
}

gn_status gn_target_parse(const char *text, gn_target *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return GN_ERR_ARG;
    gn_target t = {GN_TARGET_CPU, 0, 0};
    const char *bad = NULL;
    if (!text) {
        bad = "(null)";
    } else if (!strcmp(text, "cpu")) {
    } else if (!strcmp(text, "auto")) {
        target_auto(&t);
    } else if (!strncmp(text, "gpu", 3) && (text[3] == '\0' || text[3] == ':')) {
        t.kind = GN_TARGET_GPU;
        t.compute_capability = 90;
        t.num_gpus = 1;
        if (text[3] == ':') {
            const char *p = text + 4;
            if (strncmp(p, "sm_", 3) != 0) {
                bad = text;
            } else {
                char *e = NULL;
                long cc = strtol(p + 3, &e, 10);
                long n = 1;
                if (e && *e == 'x') n = strtol(e + 1, &e, 10);
                if (e == p + 3 || !e || *e || cc < 10 || cc > 999 || n < 1 || n > 1024) bad = text;
                t.compute_capability = (int32_t)cc;
                t.num_gpus = (int32_t)n;
            }
        }
    } else {
        bad = text;
    }
    if (bad) {
        if (err && errlen)
            snprintf(err, errlen, "target '%s' is not one of cpu, gpu, gpu:sm_NN, gpu:sm_NNxK, auto", bad);
        return GN_ERR_ARG;
    }
    *out = t;
    return GN_OK;
}

void gn_target_to_string(const gn_target *t, char *buf, size_t buflen)
{
    if (!buf || !buflen) return;
    if (!t || t->kind != GN_TARGET_GPU) snprintf(buf, buflen, "cpu");
    else if (t->num_gpus > 1) snprintf(buf, buflen, "gpu:sm_%dx%d", t->compute_capability, t->num_gpus);
    else snprintf(buf, buflen, "gpu:sm_%d", t->compute_capability);
}

static void note_unbuilt(const gn_options *o, gn_report *r)
{
    for (size_t i = 0; i < GN__ARRAY_LEN(pass_table); i++) {
        const pass_row *p = &pass_table[i];
        if (pass_enabled(o, p, i) && !p->fn)
            report_note(r, "%s: enabled by %s but not built yet: nothing was done", p->name, p->key);
    }
    if (o->auto_mixed_precision_mkl == GN_TOGGLE_ON || o->auto_mixed_precision_onednn_bfloat16 == GN_TOGGLE_ON)
        report_note(r, "auto_mixed_precision_mkl / auto_mixed_precision_onednn_bfloat16: not applicable (no oneDNN backend)");
    if (o->auto_mixed_precision_cpu == GN_TOGGLE_ON)
        report_note(r, "auto_mixed_precision_cpu: not applicable (float16 emulation on CPU is not offered)");
    if (o->use_plugin_optimizers == GN_TOGGLE_ON) report_note(r, "use_plugin_optimizers: no plugin optimizers exist here");
}

gn_status gn_optimize(gn_graph *g, const gn_options *o, const gn_optimize_params *params, gn_report **report)
{
    if (report) *report = NULL;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    gn_options defaults;
    if (!o) {
        gn_options_init(&defaults);
        o = &defaults;
    }
    gn_report *r = calloc(1, sizeof *r);
    if (!r) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    gn__arena_init(&r->strings, 64 * 1024);
    if (report) *report = r;
    int64_t t0 = gn__now_us(), c0 = cpu_now_us();
    run_state st = {g, o, params, r, 0, false, 0, &g->err, {GN_TARGET_CPU, 0, 0}, false};
    if (params && params->struct_size >= offsetof(gn_optimize_params, target) + sizeof params->target)
        st.target = params->target;
    /* events only for a caller that will read them */
    r->no_events = !report || (params &&
                               params->struct_size >= offsetof(gn_optimize_params, no_report_events) +
                                                          sizeof params->no_report_events &&
                               params->no_report_events);
    if (st.target.kind == GN_TARGET_GPU && st.target.num_gpus < 1) st.target.num_gpus = 1;
    if (st.target.kind == GN_TARGET_GPU && st.target.compute_capability <= 0) st.target.compute_capability = 90;
    if (o->meta_optimizer_timeout_ms > 0) st.deadline = t0 + o->meta_optimizer_timeout_ms * 1000;
    gn_status s = GN_OK;
    if (o->disable_meta_optimizer) {
        report_note(r, "disable_meta_optimizer is set: the graph was not optimized");
        goto done;
    }
    note_unbuilt(o, r);
    /* check the fetch and feed names once, before any pass runs */
    s = mark_preserved(&st, g);
    if (s != GN_OK) goto done;
    dump_graph(g, params ? params->dump_dir : NULL, &st.dump_seq, 0, "input", r);
    s = optimize_item(&st, g, "main");
    for (uint32_t f = 0; f < g->n_fns && s == GN_OK && !st.timed_out; f++) {
        if (!g->fns[f].body) continue;
        char name[512];
        snprintf(name, sizeof name, "%s", gn__str(g, g->fns[f].name));
        s = optimize_item(&st, g->fns[f].body, name);
    }
    clear_preserved(g);
    for (uint32_t f = 0; f < g->n_fns; f++)
        if (g->fns[f].body) clear_preserved(g->fns[f].body);
done:;
    coloc_drop(&st);
    /* the fusions remap.policy 'grapnel' wrote beyond the output's contract */
    size_t only = r->n_grapnel_only;
    if (only)
        report_note(r, "the output is grapnel-only: %zu fusion(s) TensorFlow cannot run (remap.policy 'grapnel'; "
                    "the rewrites marked [grapnel-only: ...] say why)", only);
    r->total_micros = gn__now_us() - t0;
    r->total_cpu_micros = cpu_now_us() - c0;
    if (!report) gn_report_free(r);
    return s;
}

/* ---- report output -------------------------------------------------------------------------- */
size_t gn_report_pass_count(const gn_report *r) { return r ? r->n_runs : 0; }
const char *gn_report_pass_name(const gn_report *r, size_t i) { return r && i < r->n_runs ? r->runs[i].pass : NULL; }
int32_t gn_report_pass_iteration(const gn_report *r, size_t i) { return r && i < r->n_runs ? r->runs[i].iteration : -1; }
int64_t gn_report_pass_micros(const gn_report *r, size_t i) { return r && i < r->n_runs ? r->runs[i].micros : -1; }
int32_t gn_report_pass_changed(const gn_report *r, size_t i) { return r && i < r->n_runs ? r->runs[i].changed : 0; }
int64_t gn_report_total_micros(const gn_report *r) { return r ? r->total_micros : 0; }

gn_status gn_report_to_text(const gn_report *r, char **text)
{
    if (!r || !text) return GN_ERR_ARG;
    gn__buf b;
    gn__buf_init(&b);
    const char *cur = NULL;
    for (size_t i = 0; i < r->n_runs; i++) {
        const run_entry *e = &r->runs[i];
        if (!cur || strcmp(cur, e->item) != 0) {
            gn__buf_printf(&b, "Optimization results for grappler item: %s\n", e->item);
            cur = e->item;
        }
        if (e->skipped)
            gn__buf_printf(&b, "  %s: skipped: the graph is as its last run left it.\n", e->pass);
        else if (e->status != GN_OK)
            gn__buf_printf(&b, "  %s: %s (rolled back), time = %.3fms.\n", e->pass, e->message ? e->message : "",
                           (double)e->micros / 1000.0);
        else if (!e->changed)
            gn__buf_printf(&b, "  %s: %s did nothing. time = %.3fms.\n", e->pass, e->pass, (double)e->micros / 1000.0);
        else
            gn__buf_printf(&b, "  %s: Graph size after: %u nodes (%lld), %llu edges (%lld), time = %.3fms.\n", e->pass,
                           e->nodes_after, (long long)e->nodes_after - (long long)e->nodes_before,
                           (unsigned long long)e->edges_after,
                           (long long)e->edges_after - (long long)e->edges_before, (double)e->micros / 1000.0);
    }
    if (r->n_events) {
        size_t nrw = 0, nrf = 0;
        for (size_t i = 0; i < r->n_events; i++) {
            if (r->events[i].refused) nrf++;
            else nrw++;
        }
        gn__buf_printf(&b, "Rewrites (%zu):\n", nrw);
        for (size_t i = 0; i < r->n_events; i++) {
            const event *e = &r->events[i];
            if (e->refused) continue;
            gn__buf_printf(&b, "  [%s it%d] %s: %s%s%s\n", e->item, e->iteration + 1, e->pattern, e->node,
                           e->node[0] ? ": " : "", e->detail);
        }
        gn__buf_printf(&b, "Refused (%zu):\n", nrf);
        for (size_t i = 0; i < r->n_events; i++) {
            const event *e = &r->events[i];
            if (!e->refused) continue;
            gn__buf_printf(&b, "  [%s it%d] %s: %s%s%s\n", e->item, e->iteration + 1, e->pattern, e->node,
                           e->node[0] ? ": " : "", e->detail);
        }
    }
    for (size_t i = 0; i < r->n_notes; i++) gn__buf_printf(&b, "note: %s\n", r->notes[i]);
    gn__buf_printf(&b, "Total time: %.3fms\n", (double)r->total_micros / 1000.0);
    *text = gn__buf_take(&b);
    return *text ? GN_OK : GN_ERR_NOMEM;
}

static void json_str(gn__buf *b, const char *s)
{
    gn__buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            gn__buf_putc(b, '\\');
            gn__buf_putc(b, (char)*p);
        } else if (*p < 0x20) {
            gn__buf_printf(b, "\\u%04x", *p);
        } else {
            gn__buf_putc(b, (char)*p);
        }
    }
    gn__buf_putc(b, '"');
}

gn_status gn_report_to_json(const gn_report *r, char **json)
{
    if (!r || !json) return GN_ERR_ARG;
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_printf(&b, "{\"total_micros\": %lld, \"total_cpu_micros\": %lld, \"passes\": [", (long long)r->total_micros,
                   (long long)r->total_cpu_micros);
    for (size_t i = 0; i < r->n_runs; i++) {
        const run_entry *e = &r->runs[i];
        gn__buf_puts(&b, i ? ",\n  {" : "\n  {");
        gn__buf_puts(&b, "\"item\": ");
        json_str(&b, e->item);
        gn__buf_puts(&b, ", \"pass\": ");
        json_str(&b, e->pass);
        gn__buf_printf(&b,
                       ", \"iteration\": %d, \"micros\": %lld, \"cpu_micros\": %lld, \"nodes_before\": %u, \"nodes_after\": %u, "
                       "\"edges_before\": %llu, \"edges_after\": %llu, \"changed\": %s, \"rolled_back\": %s, "
                       "\"status\": ",
                       e->iteration + 1, (long long)e->micros, (long long)e->cpu_micros, e->nodes_before, e->nodes_after,
                       (unsigned long long)e->edges_before, (unsigned long long)e->edges_after,
                       e->changed ? "true" : "false", e->rolled_back ? "true" : "false");
        json_str(&b, gn_status_str(e->status));
        if (e->skipped) gn__buf_puts(&b, ", \"skipped\": true");
        if (e->message) {
            gn__buf_puts(&b, ", \"message\": ");
            json_str(&b, e->message);
        }
        gn__buf_putc(&b, '}');
    }
    gn__buf_puts(&b, "],\n \"events\": [");
    for (size_t i = 0; i < r->n_events; i++) {
        const event *e = &r->events[i];
        gn__buf_puts(&b, i ? ",\n  {" : "\n  {");
        gn__buf_puts(&b, "\"item\": ");
        json_str(&b, e->item);
        gn__buf_printf(&b, ", \"iteration\": %d, \"kind\": \"%s\", \"pattern\": ", e->iteration + 1,
                       e->refused ? "refused" : "rewrote");
        json_str(&b, e->pattern);
        gn__buf_puts(&b, ", \"node\": ");
        json_str(&b, e->node);
        gn__buf_puts(&b, ", \"detail\": ");
        json_str(&b, e->detail);
        gn__buf_putc(&b, '}');
    }
    gn__buf_puts(&b, "],\n \"notes\": [");
    for (size_t i = 0; i < r->n_notes; i++) {
        if (i) gn__buf_puts(&b, ", ");
        json_str(&b, r->notes[i]);
    }
    gn__buf_puts(&b, "]}\n");
    *json = gn__buf_take(&b);
    return *json ? GN_OK : GN_ERR_NOMEM;
}
