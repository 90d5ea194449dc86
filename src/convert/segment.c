/* The segmenter (docs/reference_formats.md §A4, §A5; TF-TRT's segment.cc and
 * convert_graph.cc), with a backend's `supports` as the candidate test.
 *
 * 1. Candidates: live nodes the backend supports, not preserved, placed on
 *    the backend's device kind (or unplaced), of an op that may sit inside an
 *    engine (no control flow, calls, stateful ops, graph inputs, Consts: a
 *    Const input is copied into the segment instead), with every output of a
 *    dtype engines take (float, half, int32, int8, bool). Every refusal is
 *    reported with its reason.
 * 2. Clusters grow with union-find, visiting nodes in reverse topological
 *    order (from the outputs toward the inputs): a candidate absorbs the
 *    cluster of each candidate consumer unless that would make a cycle, i.e.
 *    unless some path leaves its cluster and re-enters the consumer's (a
 *    depth-first search bounded by topological position), or the merged
 *    cluster could pass 65535 inputs or outputs (counted as boundary edges).
 * 3. Clusters with fewer than minimum_segment_size effective nodes (Identity,
 *    Snapshot and StopGradient do not count), without a data input from
 *    outside, or with more boundary edges than an op signature holds (65535
 *    inputs or outputs), stay native.
 * 4. Each remaining cluster becomes a Grapnel>EngineOp node named
 *    GrapnelEngineOp_000_<k> whose inputs are the outside tensors the cluster
 *    reads (first-seen order, members in topological order) and whose outputs
 *    are the member outputs read outside; the members go into the library
 *    function "<engine>_native_segment" (GrapnelInputPH_<k> / GrapnelOutputPH_<k>
 *    arguments, Const inputs copied in), control edges across the boundary
 *    move to the engine node (not those from Consts). */
#include <inttypes.h>
#include <math.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>

#include "optimizer/colocation.h"
#include "grapnel/convert.h"
#include "graph/ir.h"
#include "opdef/registry.h"
#include "ops/kernel.h"
#include "runtime/backend.h"
#include "runtime/quant.h"

/* A cluster's producer list is a chain of chunks of one cache line each: a
 * walk over it loads one line per EXT_CHUNK entries and can ask for all of
 * their nodes at once, where a list of single entries waits for each. A
 * chunk's entries are in list order from node[0]; merges link whole chains
 * (partly filled chunks can then sit mid-chain), a walk packs the entries it
 * keeps into the fewest chunks and frees the others. No chain holds an empty
 * chunk, so the last entry of a list is the last one of its tail chunk. */
#define EXT_CHUNK 14u

typedef struct ext_chunk {
    uint32_t next;         /* next chunk of the list (GN_NONE ends) */
    uint32_t n;            /* entries used */
    gn_id node[EXT_CHUNK];
} ext_chunk;

/* What the growth reads of a node, together: a cycle search step or a
 * union-find step on a node far from the last one is one cache miss, not one
 * per array. */
typedef struct seg_node {
    uint32_t parent;       /* union-find */
    uint32_t pos;          /* topological position */
    uint32_t stamp;        /* DFS visit marks (of the node, and of a cluster at its root) */
    uint8_t cand;          /* 1: candidate */
    uint8_t konst;         /* 1: a Const (set in topological order, before any consumer reads it) */
} seg_node;

typedef struct seg {
    gn_graph *g;
    gn__err *err;
    const gn_conversion_params *p;
    bool cuda;
    uint32_t n;            /* node count at the start */
    seg_node *nd;          /* per node: union-find parent, position, visit mark, candidate */
    uint32_t *next;        /* member lists: next member of the same cluster (GN_NONE ends) */
    uint32_t *tail;        /* per root: last member */
    uint32_t *minpos;      /* per root: smallest topological position of a member */
    /* per root: the producers its members read (data and control) that the
     * growth has already passed (a producer's entries are added when the
     * reverse sweep reaches it: one placed before the node being grown is on
     * no path out of its cluster), a chain of chunks (ext_chunk) linked on
     * merges and packed as entries become internal */
    uint32_t *ext_head, *ext_tail; /* chunks (GN_NONE: empty list) */
    ext_chunk *ext;
    uint32_t n_ext_cap;    /* entries ever added, at most (one per fanout) */
    uint32_t n_chunks;     /* chunks handed out from ext[], freed ones excluded */
    uint32_t free_chunk;   /* freed chunks, chained by next (GN_NONE: none) */
    /* per root: upper bounds of the data edges entering (from non-Consts) and
     * leaving the cluster: its engine's inputs and outputs */
    uint64_t *bnd_in, *bnd_out;
    uint32_t n_ext;        /* entries ever added */
    /* build_engine's lookups by node id (zero between engines): a Const
     * copied in (its index + 1), a member (its index + 1) */
    uint32_t *const_ix, *member_ix;
    uint32_t stamp_now;
    gn_id *stack;
    float *range0;         /* INT8 without calibration: amax of each node's output 0 (< 0: none) */
    gn__buf rep;
    /* interned op names (UINT32_MAX: not in the graph), compared as ids */
    uint32_t op_const, op_identity, op_snapshot, op_stop_gradient;
} seg;

static uint32_t find(seg *S, uint32_t x)
{
    while (S->nd[x].parent != x) {
        S->nd[x].parent = S->nd[S->nd[x].parent].parent;
        x = S->nd[x].parent;
    }
    return x;
}

static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

/* A node of the start has its mark in seg.nd, next to its union-find entry
 * (one cache line, where the node record is another); engines, made later,
 * are not Consts. */
static bool is_const(const seg *S, gn_id id) { return id < S->n ? S->nd[id].konst : S->g->nodes[id].op == S->op_const; }

/* Is id (possibly a node made after the start: an engine) a member of cluster root? */
static bool in_seg(seg *S, gn_id id, uint32_t root) { return id < S->n && S->nd[id].cand && find(S, id) == root; }

static bool dtype_ok(int32_t dt)
{
    switch (dt) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT:
    case TENSORFLOW__DATA_TYPE__DT_HALF:
    case TENSORFLOW__DATA_TYPE__DT_INT32:
    case TENSORFLOW__DATA_TYPE__DT_INT8:
    case TENSORFLOW__DATA_TYPE__DT_BOOL: return true;
    default: return false;
    }
}

/* Device kind of a placement: 'G' GPU, 'C' CPU, 0 none. */
static char device_kind(const char *d)
{
    if (!d[0]) return 0;
    const char *p = strstr(d, "device:");
    p = p ? p + 7 : (d[0] == '/' ? d + 1 : d);
    if (!strncasecmp(p, "GPU", 3)) return 'G';
    if (!strncasecmp(p, "CPU", 3)) return 'C';
    return '?';
}

/* Why node id cannot be in a segment, or NULL. */
static const char *refusal(seg *S, const gn__backend *b, gn_id id, char *buf, size_t len)
{
    const gn_graph *g = S->g;
    const gn__node *n = &g->nodes[id];
    if (n->flags & GN__NODE_PRESERVE) return "is a graph input or output (preserved)";
    char k = device_kind(gn__str(g, n->device));
    if (k && k != (S->cuda ? 'G' : 'C')) {
        snprintf(buf, len, "placed on '%s', not on the %s backend's device", gn__str(g, n->device),
                 S->cuda ? "cuda" : "cpu");
        return buf;
    }
    const gn__opdef *op = gn__node_opdef(g, id);
    if (!op) {
        snprintf(buf, len, "op %s is not known", gn__node_op(g, id));
        return buf;
    }
    if (op_is(g, id, "Const") || op_is(g, id, "HostConst")) return "a Const is copied into segments, not clustered";
    if (op->traits & (GN__T_CONTROL_FLOW | GN__T_FUNCTION_CALL)) return "control flow and calls stay outside engines";
    if ((op->flags & GN__OPF_STATEFUL) || (op->traits & GN__T_SOURCE)) return "stateful ops and graph inputs stay outside engines";
    if (gn__graph_find_function(g, gn__node_op(g, id))) return "control flow and calls stay outside engines";
    if (n->n_in == 0) return "has no inputs";
    int32_t nout = gn__node_num_outputs(g, id);
    if (nout < 0) return "its outputs are not known";
    for (int32_t k2 = 0; k2 < nout; k2++) {
        int32_t dt = gn__op_output_dtype(op, g, id, (uint32_t)k2);
        if (!dtype_ok(dt)) {
            snprintf(buf, len, "output %d is %s, which engines do not take", k2, gn__dtype_name(dt));
            return buf;
        }
    }
    for (uint32_t k2 = 0; k2 < n->n_in; k2++) {
        int32_t dt = gn__op_input_dtype(op, g, id, k2);
        if (dt && !dtype_ok(dt)) {
            snprintf(buf, len, "input %u is %s, which engines do not take", k2, gn__dtype_name(dt));
            return buf;
        }
    }
    char why[512] = "";
    if (!b->iface->supports(b->self, g, id, why, sizeof why)) {
        snprintf(buf, len, "%s", why[0] ? why : "the backend does not support it");
        return buf;
    }
    return NULL;
}

/* Would merging cluster a (holding a producer) with cluster c (its consumer)
 * make a cycle: is there a path from a member of a through a node outside
 * both into c? Searched backwards from the producers c reads that are in
 * neither cluster, over nodes placed after a's first member (a path out of a
 * only reaches those). a's first member is the node the growth is at, so the
 * producer lists hold only such nodes (see seg.ext_head): the search never
 * walks over producers placed before it, and c's list drops the entries that
 * have become internal, so each edge is scanned a bounded number of times. */
#define CYCLE_SEARCH_BUDGET 512u

/* The walk will read every node of the chunk and the next chunk: asks for
 * them all before waiting for the first. */
static void chunk_prefetch(const seg *S, const ext_chunk *ch)
{
    if (ch->next != GN_NONE) GN__PREFETCH(&S->ext[ch->next]);
    for (uint32_t k = 0; k < ch->n; k++) GN__PREFETCH(&S->nd[ch->node[k]]);
}

static void chunk_free(seg *S, uint32_t ci)
{
    S->ext[ci].next = S->free_chunk;
    S->free_chunk = ci;
}

/* A walk's write cursor: kept entries are packed from the list's first chunk
 * on, in order. It never passes the entry being read (a chunk holds at most
 * EXT_CHUNK entries), and chunk links change only when the walk ends. */
typedef struct ext_cursor {
    uint32_t wc, wn;       /* chunk written, entries written in it */
} ext_cursor;

static void cursor_put(seg *S, ext_cursor *w, gn_id p)
{
    if (w->wn == EXT_CHUNK) {
        S->ext[w->wc].n = EXT_CHUNK;
        w->wc = S->ext[w->wc].next;
        w->wn = 0;
    }
    S->ext[w->wc].node[w->wn++] = p;
}

/* The walk of root's list stops while reading chunk rc (n entries) at entry
 * k: the entries from k on and the chunks after rc stay after the kept ones;
 * the chunks emptied by the packing are freed. */
static void walk_stop(seg *S, uint32_t root, ext_cursor *w, uint32_t rc, uint32_t n, uint32_t k)
{
    uint32_t next = S->ext[rc].next;
    for (; k < n; k++) cursor_put(S, w, S->ext[rc].node[k]);
    if (w->wc != rc) {
        for (uint32_t x = S->ext[w->wc].next;;) {
            uint32_t y = S->ext[x].next;
            chunk_free(S, x);
            if (x == rc) break;
            x = y;
        }
        S->ext[w->wc].next = next;
    }
    S->ext[w->wc].n = w->wn;
    if (next == GN_NONE) S->ext_tail[root] = w->wc;
}

/* Walks root's producer list in order, dropping the entries that have become
 * internal to root (the rest packed into the fewest chunks) and pushing onto
 * the search stack those not yet visited and placed at lo or after. With a
 * budget (root is the consumer cluster c): one step per entry, none pushed
 * from cluster a. Without (root is another cluster met by the search): an
 * entry in a means a cycle. True: a cycle, or the budget ran out. */
static bool walk_list(seg *S, uint32_t root, uint32_t a, uint32_t lo, uint32_t *top, uint32_t *budget)
{
    uint32_t head = S->ext_head[root];
    ext_cursor w = {head, 0};
    for (uint32_t rc = head; rc != GN_NONE;) {
        ext_chunk *ch = &S->ext[rc];
        chunk_prefetch(S, ch);
        uint32_t n = ch->n, next = ch->next;
        for (uint32_t k = 0; k < n; k++) {
            /* past the budget the merge is refused as if it made a cycle: segments
             * may come out smaller on graphs with many long edges, never wrong,
             * and the segmenter stays linear */
            if (budget && !(*budget)--) {
                walk_stop(S, root, &w, rc, n, k);
                return true;
            }
            gn_id p = ch->node[k];
            uint32_t r = S->nd[p].cand ? find(S, p) : GN_NONE;
            if (r == root) continue; /* internal now: dropped */
            cursor_put(S, &w, p);
            if (budget) {
                if (r == a || S->nd[p].pos < lo || S->nd[p].stamp == S->stamp_now) continue;
            } else {
                if (S->nd[p].stamp == S->stamp_now) continue;
                if (r == a) {
                    walk_stop(S, root, &w, rc, n, k + 1);
                    return true;
                }
                if (S->nd[p].pos < lo) continue;
            }
            S->nd[p].stamp = S->stamp_now;
            S->stack[(*top)++] = p;
        }
        rc = next;
    }
    /* the whole list read: the chunks after the last one written go */
    uint32_t x = w.wn ? S->ext[w.wc].next : head;
    while (x != GN_NONE) {
        uint32_t y = S->ext[x].next;
        chunk_free(S, x);
        x = y;
    }
    if (w.wn) {
        S->ext[w.wc].next = GN_NONE;
        S->ext[w.wc].n = w.wn;
        S->ext_tail[root] = w.wc;
    } else {
        S->ext_head[root] = S->ext_tail[root] = GN_NONE;
    }
    return false;
}

static bool makes_cycle(seg *S, uint32_t a, uint32_t c)
{
    const gn_graph *g = S->g;
    uint32_t lo = S->minpos[a];
    uint32_t top = 0;
    if (S->ext_head[c] == GN_NONE) return false;
    if (++S->stamp_now == 0) {
        for (uint32_t i = 0; i < S->n; i++) S->nd[i].stamp = 0;
        S->stamp_now = 1;
    }
    uint32_t budget = CYCLE_SEARCH_BUDGET;
    if (walk_list(S, c, a, lo, &top, &budget)) return true;
    while (top) {
        if (!budget--) return true;
        gn_id x = S->stack[--top];
        uint32_t r = S->nd[x].cand ? find(S, x) : GN_NONE;
        if (r == a) return true;
        if (r == c) continue;
        if (r != GN_NONE) {
            /* another cluster is one node to the search (it becomes one engine):
             * go on from every producer of its members, once */
            if (S->nd[r].stamp == S->stamp_now && r != x) continue;
            S->nd[r].stamp = S->stamp_now;
            if (walk_list(S, r, a, lo, &top, NULL)) return true;
            continue;
        }
        const gn__node *nd = &g->nodes[x];
        for (uint32_t k = 0; k < nd->n_in + nd->n_ctrl; k++) {
            gn_id p = k < nd->n_in ? nd->in[k].node : nd->ctrl[k - nd->n_in];
            /* before lo: neither in a nor on a path out of it */
            if (p >= S->n || S->nd[p].pos < lo || S->nd[p].stamp == S->stamp_now) continue;
            if (S->nd[p].cand && find(S, p) == a) return true;
            S->nd[p].stamp = S->stamp_now;
            S->stack[top++] = p;
        }
    }
    return false;
}

/* The growth has reached x: before x joins any cluster, x enters the producer
 * list of each candidate consumer's cluster (at most n_use + n_cuse entries).
 * A producer without inputs (Const, Placeholder) is on no path out of a
 * cluster and enters none. */
static void add_producer(seg *S, gn_id x)
{
    const gn__node *nd = &S->g->nodes[x];
    if (!nd->n_in && !nd->n_ctrl) return;
    uint32_t own = S->nd[x].cand ? find(S, x) : GN_NONE;
    for (uint32_t k = 0; k < nd->n_use + nd->n_cuse; k++) {
        gn_id u = k < nd->n_use ? nd->use[k].node : nd->cuse[k - nd->n_use];
        if (u >= S->n || !S->nd[u].cand) continue;
        uint32_t r = find(S, u);
        if (r == own || S->n_ext == S->n_ext_cap) continue; /* the cap: one entry per use at most */
        /* a consumer reading x twice: one entry (its last one is x) */
        uint32_t t = S->ext_tail[r];
        if (t != GN_NONE && S->ext[t].node[S->ext[t].n - 1] == x) continue;
        S->n_ext++;
        if (t == GN_NONE || S->ext[t].n == EXT_CHUNK) {
            /* a new chunk: a freed one, or the next unused (live chunks hold at
             * least one entry each, so there are never more than n_ext_cap) */
            uint32_t ci = S->free_chunk;
            if (ci != GN_NONE) S->free_chunk = S->ext[ci].next;
            else ci = S->n_chunks++;
            S->ext[ci].next = GN_NONE;
            S->ext[ci].n = 0;
            if (t == GN_NONE) S->ext_head[r] = ci;
            else S->ext[t].next = ci;
            S->ext_tail[r] = t = ci;
        }
        S->ext[t].node[S->ext[t].n++] = x;
    }
}

static void merge(seg *S, uint32_t a, uint32_t c)
{
    /* c joins a: a stays the root */
    S->nd[c].parent = a;
    S->next[S->tail[a]] = c;
    S->tail[a] = S->tail[c];
    if (S->minpos[c] < S->minpos[a]) S->minpos[a] = S->minpos[c];
    if (S->ext_head[c] != GN_NONE) {
        if (S->ext_head[a] == GN_NONE) S->ext_head[a] = S->ext_head[c];
        else S->ext[S->ext_tail[a]].next = S->ext_head[c];
        S->ext_tail[a] = S->ext_tail[c];
    }
}

static bool effective(const seg *S, gn_id id)
{
    uint32_t op = S->g->nodes[id].op;
    return op != S->op_identity && op != S->op_snapshot && op != S->op_stop_gradient;
}

/* ---- building one engine ------------------------------------------------------------ */
/* The distinct tensors (producer, output index) a segment reads or exposes,
 * in first-seen order, with a hash index: a producer can have thousands of
 * outputs (an engine built before, read by a later segment), so a per-node
 * list would be walked once per read. Sized once from a bound on the entries. */
typedef struct edge_set {
    gn__edge *e;
    uint32_t n;
    uint32_t *slot;      /* entry index + 1; 0: empty */
    uint32_t mask;
} edge_set;

static bool edge_set_init(edge_set *t, size_t bound)
{
    size_t cap = 2;
    while (cap < 2 * bound + 2) cap *= 2;
    t->n = 0;
    t->mask = (uint32_t)(cap - 1);
    t->e = malloc((bound ? bound : 1) * sizeof *t->e);
    t->slot = calloc(cap, sizeof *t->slot);
    return t->e && t->slot;
}

static void edge_set_free(edge_set *t)
{
    free(t->e);
    free(t->slot);
}

/* The index of e, added at the end when new (within the bound given). */
static uint32_t edge_set_put(edge_set *t, gn__edge e)
{
    uint64_t k = (((uint64_t)e.node << 32) | e.index) * 0x9E3779B97F4A7C15ull;
    for (uint32_t h = (uint32_t)(k >> 32) & t->mask;; h = (h + 1) & t->mask) {
        uint32_t j = t->slot[h];
        if (!j) {
            t->e[t->n] = e;
            t->slot[h] = ++t->n;
            return t->n - 1;
        }
        if (t->e[j - 1].node == e.node && t->e[j - 1].index == e.index) return j - 1;
    }
}

typedef struct engine_io {
    edge_set in;         /* outside tensors read (non-Const) */
    gn_id *consts;       /* outside Consts copied in */
    uint32_t n_consts;
    edge_set out;        /* member outputs read outside */
} engine_io;

static int32_t edge_dtype(const gn_graph *g, gn__edge e)
{
    const gn__opdef *op = gn__node_opdef(g, e.node);
    return op ? gn__op_output_dtype(op, g, e.node, e.index) : 0;
}

#define NOMEM(S) gn__fail((S)->err, GN_ERR_NOMEM, "segment: out of memory")
#define GFAIL(S, g, s) ((s) == GN_OK ? GN_OK : gn__fail((S)->err, (s), "segment: %s", (g)->err.msg))

static gn_status add_arg(seg *S, gn_graph *body, const char *name, int32_t dt, uint32_t idx, bool ret, gn__edge in,
                         gn_id *out)
{
    gn_id id;
    GN_TRY(GFAIL(S, body, gn__node_add(body, name, ret ? "_Retval" : "_Arg", &id)));
    if (out) *out = id;
    body->nodes[id].flags |= ret ? GN__NODE_FN_RET : GN__NODE_FN_ARG;
    body->nodes[id].orig_index = idx;
    Tensorflow__AttrValue *t = gn__attr_new_type(body, dt), *ix = gn__attr_new_int(body, idx);
    if (!t || !ix) return NOMEM(S);
    GN_TRY(GFAIL(S, body, gn__node_set_attr(body, id, "T", t)));
    GN_TRY(GFAIL(S, body, gn__node_set_attr(body, id, "index", ix)));
    if (ret) GN_TRY(GFAIL(S, body, gn__node_add_input(body, id, in)));
    return GN_OK;
}

/* Copies node id of g into body under the same name, inputs resolved later. */
static gn_status copy_node(seg *S, gn_graph *body, gn_id id, gn_id *out)
{
    const gn_graph *g = S->g;
    GN_TRY(GFAIL(S, body, gn__node_add(body, gn__node_name(g, id), gn__node_op(g, id), out)));
    gn__node_set_device(body, *out, gn__str(g, g->nodes[id].device));
    for (uint32_t k = 0; k < g->nodes[id].n_attr; k++) {
        const gn__attr *a = &g->nodes[id].attr[k];
        GN_TRY(GFAIL(S, body, gn__node_set_attr(body, *out, gn__str(g, a->key), a->value)));
    }
    return GN_OK;
}

/* ---- FP16 engines: the segment computed in float16 -------------------------------------------- */
#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_F16 TENSORFLOW__DATA_TYPE__DT_HALF

/* Can node id compute in half: every float type attr it has (but FusedBatchNorm's
 * U, which stays float) accepts half in the op's definition? */
static bool half_ok(const gn_graph *b, gn_id id)
{
    if (b->nodes[id].flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) return false;
    if (op_is(b, id, "Const")) return true;
    const gn__opdef *op = gn__node_opdef(b, id);
    if (!op) return false;
    Tensorflow__AttrValue h = gn__attr_type_value(DT_F16);
    bool any = false;
    for (uint32_t k = 0; k < b->nodes[id].n_attr; k++) {
        const char *key = gn__str(b, b->nodes[id].attr[k].key);
        const Tensorflow__AttrValue *v = b->nodes[id].attr[k].value;
        if (!strcmp(key, "U") || key[0] == '_') continue;
        if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list)
            for (size_t i = 0; i < v->list->n_type; i++)
                if (v->list->type[i] == DT_F32) return false; /* type lists: left in float32 */
        if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE || v->type != DT_F32) continue;
        const gn__attrdef *ad = gn__opdef_attr(op, key);
        if (!ad || gn__attr_check(op, ad, &h, NULL) != GN_OK) return false;
        any = true;
    }
    return any;
}

/* Whether flat input k (output k when out) of node id is typed by the attr U:
 * FusedBatchNorm's scale, offset, mean and variance and its statistics
 * outputs, which stay float in a half engine (TensorFlow's kernels take
 * T=half only with U=float). Args are walked while each is one tensor. */
static bool arg_is_u(const gn_graph *b, gn_id id, uint32_t k, bool out)
{
    const gn__opdef *op = gn__node_opdef(b, id);
    if (!op) return false;
    uint16_t n = out ? op->n_outputs : op->n_inputs;
    const gn__argdef *a = out ? op->outputs : op->inputs;
    for (uint32_t i = 0; i < n && i <= k; i++) {
        if (a[i].number_attr || a[i].type_list_attr) return false;
        if (i == k) return a[i].type_attr && !strcmp(a[i].type_attr, "U");
    }
    return false;
}

/* Every float type attr of node id becomes half; a float Const is converted. */
static gn_status node_to_half(seg *S, gn_graph *b, gn_id id)
{
    for (uint32_t k = 0; k < b->nodes[id].n_attr; k++) {
        const char *key = gn__str(b, b->nodes[id].attr[k].key);
        const Tensorflow__AttrValue *v = b->nodes[id].attr[k].value;
        if (!strcmp(key, "U") || key[0] == '_') continue;
        if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE && v->type == DT_F32) {
            Tensorflow__AttrValue *h = gn__attr_new_type(b, DT_F16);
            if (!h) return NOMEM(S);
            GN_TRY(GFAIL(S, b, gn__node_set_attr(b, id, key, h)));
        }
    }
    if (!op_is(b, id, "Const")) return GN_OK;
    const Tensorflow__AttrValue *v = gn__node_attr(b, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor || v->tensor->dtype != DT_F32)
        return GN_OK;
    gn__tensor t32, t16;
    memset(&t32, 0, sizeof t32);
    GN_TRY(gn__tensor_from_proto(v->tensor, &t32, S->err));
    int64_t n = gn__tensor_numel(&t32);
    gn__buffer *buf = gn__buffer_new((size_t)(n > 0 ? n : 1) * sizeof(gn__f16));
    if (!buf) {
        gn__tensor_release(&t32);
        return NOMEM(S);
    }
    t16 = t32;
    t16.buf = buf;
    t16.data = buf->data;
    t16.dtype = DT_F16;
    t16.nbytes = (size_t)n * sizeof(gn__f16);
    for (int64_t i = 0; i < n; i++) ((gn__f16 *)t16.data)[i] = (gn__f16)((const float *)t32.data)[i];
    Tensorflow__TensorProto *tp = NULL;
    gn_status s = gn__tensor_to_proto(&t16, gn__graph_value_allocator(b), &tp, S->err);
    gn__buffer_unref(buf);
    gn__tensor_release(&t32);
    GN_TRY(s);
    return GFAIL(S, b, gn__node_set_attr_tensor(b, id, "value", tp));
}

/* The Cast of tensor e to dtype `to` (made once per tensor and direction). */
static gn_status cast_of(seg *S, gn_graph *b, gn__edge e, int32_t to, gn_id *out)
{
    char name[1200];
    snprintf(name, sizeof name, "%s-%u-CastTo%s", gn__node_name(b, e.node), e.index, to == DT_F16 ? "Fp16" : "Fp32");
    *out = gn__graph_find(b, name);
    if (*out != GN_NONE) return GN_OK;
    GN_TRY(GFAIL(S, b, gn__node_add(b, name, "Cast", out)));
    Tensorflow__AttrValue *src = gn__attr_new_type(b, to == DT_F16 ? DT_F32 : DT_F16), *dst = gn__attr_new_type(b, to),
                          *tr = gn__attr_new_bool(b, false);
    if (!src || !dst || !tr) return NOMEM(S);
    GN_TRY(GFAIL(S, b, gn__node_set_attr(b, *out, "SrcT", src)));
    GN_TRY(GFAIL(S, b, gn__node_set_attr(b, *out, "DstT", dst)));
    GN_TRY(GFAIL(S, b, gn__node_set_attr(b, *out, "Truncate", tr)));
    return GFAIL(S, b, gn__node_add_input(b, *out, e));
}

/* The float16 copy of a segment body: every node that can compute in half
 * does; float tensors crossing between half and float nodes (the arguments
 * and results included, which keep their types) go through Casts. */
static gn_status fp16_body(seg *S, const gn_graph *b32, gn_graph **out)
{
    *out = NULL;
    gn_graph *b = NULL;
    GN_TRY(GFAIL(S, b32, gn__graph_clone(b32, &b)));
    b->lib = b32->lib;
    uint32_t n0 = b->n_nodes;
    uint8_t *conv = calloc(n0 + 1, 1);
    gn_status s = conv ? GN_OK : NOMEM(S);
    for (gn_id id = 0; id < n0 && s == GN_OK; id++) conv[id] = gn__node_live(b, id) && half_ok(b, id);
    /* a Const stays float when nothing reads it in half (FusedBatchNorm's U inputs) */
    for (gn_id c = 0; c < n0 && s == GN_OK; c++) {
        if (!conv[c] || !op_is(b, c, "Const")) continue;
        bool half_use = false;
        for (uint32_t u = 0; u < b->nodes[c].n_use && !half_use; u++) {
            gn__use us = b->nodes[c].use[u];
            half_use = us.node < n0 && conv[us.node] && !arg_is_u(b, us.node, us.slot, false);
        }
        conv[c] = half_use;
    }
    /* the dtype each edge carries, read before any attr changes */
    for (gn_id v = 0; v < n0 && s == GN_OK; v++) {
        if (!gn__node_live(b, v)) continue;
        for (uint32_t k = 0; k < b->nodes[v].n_in && s == GN_OK; k++) {
            gn__edge e = b->nodes[v].in[k];
            if (e.node >= n0) continue;
            bool src_half = conv[e.node] && !arg_is_u(b, e.node, e.index, true);
            bool dst_half = conv[v] && !arg_is_u(b, v, k, false);
            if (src_half == dst_half) continue;
            int32_t dt = edge_dtype(b32, e);
            if (dt != DT_F32) continue;
            gn_id c;
            s = cast_of(S, b, e, dst_half ? DT_F16 : DT_F32, &c);
            if (s == GN_OK) s = GFAIL(S, b, gn__node_set_input(b, v, k, (gn__edge){c, 0}));
        }
    }
    for (gn_id id = 0; id < n0 && s == GN_OK; id++)
        if (conv[id]) s = node_to_half(S, b, id);
    free(conv);
    if (s != GN_OK) {
        gn_graph_free(b);
        return s;
    }
    *out = b;
    return GN_OK;
}

/* ---- INT8 without calibration: ranges from quantization nodes (docs/reference_formats.md §A8) --- */
static bool is_qdq_op(const char *op)
{
    return !strcmp(op, "FakeQuantWithMinMaxVars") || !strcmp(op, "FakeQuantWithMinMaxArgs") ||
           !strcmp(op, "QuantizeAndDequantizeV2") || !strcmp(op, "QuantizeAndDequantizeV3") ||
           !strcmp(op, "QuantizeAndDequantizeV4");
}

/* The float scalar a Const (port 0) holds. */
static bool const_scalar(seg *S, gn__edge e, float *v)
{
    const gn_graph *g = S->g;
    if (e.index != 0 || !op_is(g, e.node, "Const")) return false;
    const Tensorflow__AttrValue *a = gn__node_attr(g, e.node, "value");
    if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !a->tensor) return false;
    gn__tensor t;
    memset(&t, 0, sizeof t);
    gn__err e2;
    memset(&e2, 0, sizeof e2);
    bool ok = gn__tensor_from_proto(a->tensor, &t, &e2) == GN_OK && t.dtype == DT_F32 && gn__tensor_numel(&t) == 1;
    if (ok) *v = *(const float *)t.data;
    gn__tensor_release(&t);
    gn__err_clear(&e2);
    return ok;
}

/* Ops whose output range is their input's (at most). */
static bool keeps_range(const gn_graph *g, gn_id id)
{
    static const char *const ops[] = {"Identity", "Snapshot", "StopGradient", "Relu",    "Relu6",
                                      "MaxPool",  "Reshape",  "Squeeze",      "ExpandDims", "Transpose"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (op_is(g, id, ops[i])) return true;
    return false;
}

/* Each QDQ node gives max(|min|, |max|) to its output and its input tensor;
 * range-keeping ops pass it on (output 0 only). */
static gn_status qdq_ranges(seg *S, const gn_id *order, uint32_t n_order)
{
    const gn_graph *g = S->g;
    S->range0 = malloc((S->n + 1) * sizeof *S->range0);
    if (!S->range0) return NOMEM(S);
    for (uint32_t i = 0; i <= S->n; i++) S->range0[i] = -1.0f;
    for (uint32_t i = 0; i < n_order; i++) {
        gn_id id = order[i];
        const char *op = gn__node_op(g, id);
        if (!is_qdq_op(op) || !g->nodes[id].n_in) continue;
        float mn = -6.0f, mx = 6.0f;
        if (!strcmp(op, "FakeQuantWithMinMaxArgs")) {
            (void)gn__attr_get_float(g, id, "min", &mn);
            (void)gn__attr_get_float(g, id, "max", &mx);
        } else if (g->nodes[id].n_in < 3 || !const_scalar(S, g->nodes[id].in[1], &mn) ||
                   !const_scalar(S, g->nodes[id].in[2], &mx)) {
            continue; /* a range that is not a constant: none */
        }
        float r = fmaxf(fabsf(mn), fabsf(mx));
        S->range0[id] = r;
        gn__edge in = g->nodes[id].in[0];
        if (in.index == 0 && S->range0[in.node] < 0) S->range0[in.node] = r;
    }
    for (uint32_t i = 0; i < n_order; i++) {
        gn_id id = order[i];
        if (S->range0[id] >= 0 || !g->nodes[id].n_in || !keeps_range(g, id)) continue;
        gn__edge in = g->nodes[id].in[0];
        if (in.index != 0 || S->range0[in.node] < 0) continue;
        S->range0[id] = op_is(g, id, "Relu6") ? fminf(S->range0[in.node], 6.0f) : S->range0[in.node];
    }
    return GN_OK;
}

/* Every tensor the INT8 engine of these members will quantize has a range. */
static gn_status check_ranges(seg *S, const gn_id *mem, uint32_t nm)
{
    const gn_graph *g = S->g;
    for (uint32_t i = 0; i < nm; i++) {
        if (!gn__int8_node_quantizable(g, mem[i])) continue;
        gn__edge in = g->nodes[mem[i]].in[0];
        if (in.index == 0 && S->range0[in.node] >= 0) continue;
        return gn__fail(S->err, GN_ERR_GRAPH,
                        "segment: INT8 without calibration: tensor '%s:%u' (input of %s '%s') has no range: no "
                        "FakeQuant or QuantizeAndDequantize node gives one (or use_calibration=True and calibrate)",
                        gn__node_name(g, in.node), in.index, gn__node_op(g, mem[i]), gn__node_name(g, mem[i]));
    }
    return GN_OK;
}

/* For gn__graph_forward_output_if: skips the members of the engine being built. */
static bool member_of(const void *ctx, gn_id id)
{
    const seg *S = ctx;
    return S->member_ix[id] != 0;
}

/* Members: the cluster's nodes in topological order (seg.member_ix is set for
 * them while the engine is built). */
static gn_status build_engine(seg *S, const gn_id *members, uint32_t nm, uint32_t seq)
{
    gn_graph *g = S->g;
    engine_io io = {0};
    gn_status s = GN_OK;
    size_t n_in_edges = 0, n_out_edges = 0;
    for (uint32_t i = 0; i < nm; i++) {
        S->member_ix[members[i]] = i + 1;
        n_in_edges += g->nodes[members[i]].n_in;
        n_out_edges += g->nodes[members[i]].n_use;
    }
    bool ok_in = edge_set_init(&io.in, n_in_edges), ok_out = edge_set_init(&io.out, n_out_edges);
    io.consts = malloc((n_in_edges + 1) * sizeof *io.consts);
    if (!ok_in || !ok_out || !io.consts) s = NOMEM(S);
    /* inputs and outputs, members in topological order */
    for (uint32_t i = 0; i < nm && s == GN_OK; i++) {
        const gn__node *nd = &g->nodes[members[i]];
        for (uint32_t k = 0; k < nd->n_in; k++) {
            gn__edge e = nd->in[k];
            if (S->member_ix[e.node]) continue;
            if (is_const(S, e.node) && e.index == 0) {
                if (!S->const_ix[e.node]) {
                    io.consts[io.n_consts++] = e.node;
                    S->const_ix[e.node] = io.n_consts;
                }
            } else {
                (void)edge_set_put(&io.in, e);
            }
        }
        for (uint32_t k = 0; k < nd->n_use; k++) {
            gn_id u = nd->use[k].node;
            if (S->member_ix[u]) continue;
            (void)edge_set_put(&io.out, (gn__edge){members[i], g->nodes[u].in[nd->use[k].slot].index});
        }
    }
    /* INT8 without calibration: the table from the graph's quantization nodes */
    char *table = NULL;
    if (s == GN_OK && S->range0) {
        gn__buf tb;
        gn__buf_init(&tb);
        gn__buf_printf(&tb, "%s\n# ranges from the graph's FakeQuant / QuantizeAndDequantize nodes\n", GN__CALIB_MAGIC);
        for (uint32_t i = 0; i < io.in.n; i++)
            if (io.in.e[i].index == 0 && S->range0[io.in.e[i].node] >= 0)
                gn__buf_printf(&tb, "GrapnelInputPH_%u:0 %.9g\n", i, (double)S->range0[io.in.e[i].node]);
        for (uint32_t i = 0; i < nm; i++)
            if (S->range0[members[i]] >= 0)
                gn__buf_printf(&tb, "%s:0 %.9g\n", gn__node_name(g, members[i]), (double)S->range0[members[i]]);
        table = gn__buf_take(&tb);
        gn__buf_free(&tb);
        if (!table) s = NOMEM(S);
    }
    char ename[64], fname[128];
    snprintf(ename, sizeof ename, "GrapnelEngineOp_000_%03u", seq);
    for (uint32_t k = 1; gn__graph_find(g, ename) != GN_NONE; k++)
        snprintf(ename, sizeof ename, "GrapnelEngineOp_000_%03u_%u", seq, k);
    snprintf(fname, sizeof fname, "%s_native_segment", ename);
    int32_t *tin = calloc(io.in.n + 1, sizeof *tin), *tout = calloc(io.out.n + 1, sizeof *tout);
    gn_graph *body = gn__graph_new(GN__GRAPH_FUNCTION);
    gn_id *map = calloc(nm + io.n_consts + 1, sizeof *map);
    if (s == GN_OK && (!tin || !tout || !body || !map)) s = NOMEM(S);
    /* a reference input (a VariableV2's output) is read as its value, as TensorFlow
     * dereferences it for any op that takes a plain tensor */
    for (uint32_t i = 0; i < io.in.n && s == GN_OK; i++)
        if ((tin[i] = edge_dtype(g, io.in.e[i])) > 100) tin[i] -= 100;
        else if (!tin[i])
            s = gn__fail(S->err, GN_ERR_GRAPH, "segment: the dtype of '%s:%u' is not known",
                         gn__node_name(g, io.in.e[i].node), io.in.e[i].index);
    for (uint32_t i = 0; i < io.out.n && s == GN_OK; i++)
        if (!(tout[i] = edge_dtype(g, io.out.e[i])))
            s = gn__fail(S->err, GN_ERR_GRAPH, "segment: the dtype of '%s:%u' is not known",
                         gn__node_name(g, io.out.e[i].node), io.out.e[i].index);
    /* ---- the body ---- */
    if (s == GN_OK) {
        body->lib = g;
        for (uint32_t k = 0; k < g->n_blobs && s == GN_OK; k++) s = GFAIL(S, body, gn__graph_adopt_blob(body, g->blobs[k]));
    }
    char nm_buf[64];
    gn_id *ph = s == GN_OK ? malloc((io.in.n + 1) * sizeof *ph) : NULL;
    if (s == GN_OK && !ph) s = NOMEM(S);
    for (uint32_t i = 0; i < io.in.n && s == GN_OK; i++) {
        snprintf(nm_buf, sizeof nm_buf, "GrapnelInputPH_%u", i);
        s = add_arg(S, body, nm_buf, tin[i], i, false, (gn__edge){0, 0}, &ph[i]);
    }
    for (uint32_t i = 0; i < io.n_consts && s == GN_OK; i++) s = copy_node(S, body, io.consts[i], &map[nm + i]);
    for (uint32_t i = 0; i < nm && s == GN_OK; i++) s = copy_node(S, body, members[i], &map[i]);
    for (uint32_t i = 0; i < nm && s == GN_OK; i++) {
        const gn__node *nd = &g->nodes[members[i]];
        for (uint32_t k = 0; k < nd->n_in && s == GN_OK; k++) {
            gn__edge e = nd->in[k], be;
            if (S->member_ix[e.node])
                be = (gn__edge){map[S->member_ix[e.node] - 1], e.index};
            else if (is_const(S, e.node) && e.index == 0)
                be = (gn__edge){map[nm + S->const_ix[e.node] - 1], 0};
            else
                be = (gn__edge){ph[edge_set_put(&io.in, e)], 0}; /* listed above: found */
            s = GFAIL(S, body, gn__node_add_input(body, map[i], be));
        }
        /* control edges among members stay; those from outside go to the engine node */
        for (uint32_t k = 0; k < nd->n_ctrl && s == GN_OK; k++) {
            gn_id d = nd->ctrl[k];
            if (S->member_ix[d]) s = GFAIL(S, body, gn__node_add_control(body, map[i], map[S->member_ix[d] - 1]));
        }
    }
    for (uint32_t i = 0; i < io.out.n && s == GN_OK; i++) {
        char rn[64];
        snprintf(rn, sizeof rn, "_retval:GrapnelOutputPH_%u", i);
        gn__edge be = {map[S->member_ix[io.out.e[i].node] - 1], io.out.e[i].index};
        s = add_arg(S, body, rn, tout[i], i, true, be, NULL);
    }
    /* ---- the FunctionDef (signature) ---- */
    Tensorflow__FunctionDef *fd = NULL;
    if (s == GN_OK) {
        fd = gn__graph_value_alloc(g, sizeof *fd);
        Tensorflow__OpDef *od = gn__graph_value_alloc(g, sizeof *od);
        Tensorflow__OpDef__ArgDef **ia = gn__graph_value_alloc(g, (io.in.n + 1) * sizeof *ia);
        Tensorflow__OpDef__ArgDef **oa = gn__graph_value_alloc(g, (io.out.n + 1) * sizeof *oa);
        char *fn = gn__graph_value_alloc(g, strlen(fname) + 1);
        if (!fd || !od || !ia || !oa || !fn) s = NOMEM(S);
        if (s == GN_OK) {
            tensorflow__function_def__init(fd);
            tensorflow__op_def__init(od);
            memcpy(fn, fname, strlen(fname) + 1);
            od->name = fn;
            for (uint32_t i = 0; i < io.in.n + io.out.n && s == GN_OK; i++) {
                bool out = i >= io.in.n;
                uint32_t j = out ? i - io.in.n : i;
                Tensorflow__OpDef__ArgDef *a = gn__graph_value_alloc(g, sizeof *a);
                char *an = gn__graph_value_alloc(g, 32);
                if (!a || !an) {
                    s = NOMEM(S);
                    break;
                }
                tensorflow__op_def__arg_def__init(a);
                snprintf(an, 32, out ? "GrapnelOutputPH_%u" : "GrapnelInputPH_%u", j);
                a->name = an;
                a->type = (Tensorflow__DataType)(out ? tout[j] : tin[j]);
                if (out) oa[j] = a;
                else ia[j] = a;
            }
            od->n_input_arg = io.in.n;
            od->input_arg = ia;
            od->n_output_arg = io.out.n;
            od->output_arg = oa;
            fd->signature = od;
        }
    }
    /* FP16: the engine's own function, the segment in float16 */
    char hname[160];
    snprintf(hname, sizeof hname, "%s_fp16_segment", ename);
    gn_graph *hbody = NULL;
    Tensorflow__FunctionDef *hfd = NULL;
    if (s == GN_OK && S->p->precision_mode == GN_PRECISION_FP16) {
        s = fp16_body(S, body, &hbody);
        hfd = s == GN_OK ? gn__graph_value_alloc(g, sizeof *hfd) : NULL;
        Tensorflow__OpDef *hod = hfd ? gn__graph_value_alloc(g, sizeof *hod) : NULL;
        char *hn = hod ? gn__graph_value_alloc(g, strlen(hname) + 1) : NULL;
        if (s == GN_OK && !hn) s = NOMEM(S);
        if (s == GN_OK) {
            *hfd = *fd;
            *hod = *fd->signature;
            memcpy(hn, hname, strlen(hname) + 1);
            hod->name = hn;
            hfd->signature = hod;
        }
    }
    if (s == GN_OK) {
        s = GFAIL(S, g, gn__graph_add_function(g, fname, fd, body, NULL));
        if (s == GN_OK) body = NULL; /* owned by g now */
    }
    if (s == GN_OK && hbody) {
        s = GFAIL(S, g, gn__graph_add_function(g, hname, hfd, hbody, NULL));
        if (s == GN_OK) hbody = NULL;
    }
    /* ---- the engine node ---- */
    gn_id en = GN_NONE;
    if (s == GN_OK) s = GFAIL(S, g, gn__node_add(g, ename, "Grapnel>EngineOp", &en));
    for (uint32_t i = 0; i < io.in.n && s == GN_OK; i++) s = GFAIL(S, g, gn__node_add_input(g, en, io.in.e[i]));
    if (s == GN_OK) {
        static const char *const prec[] = {"FP32", "FP16", "INT8"};
        const char *pm = prec[S->p->precision_mode];
        Tensorflow__AttrValue *f = gn__attr_new_func_named(g, fname);
        struct {
            const char *k;
            Tensorflow__AttrValue *v;
        } attrs[] = {
            {"segment_func", f},
            {"InT", gn__attr_new_types(g, tin, io.in.n)},
            {"OutT", gn__attr_new_types(g, tout, io.out.n)},
            {"precision_mode", gn__attr_new_string(g, pm, strlen(pm))},
            {"max_cached_engines_count", gn__attr_new_int(g, S->p->maximum_cached_engines)},
            {"workspace_size_bytes", gn__attr_new_int(g, S->p->max_workspace_size_bytes)},
            {"use_calibration", gn__attr_new_bool(g, S->p->precision_mode == GN_PRECISION_INT8 && S->p->use_calibration)},
            {"allow_build_at_runtime", gn__attr_new_bool(g, S->p->allow_build_at_runtime != 0)},
            {"static_engine", gn__attr_new_bool(g, false)},
            {"calibration_data", gn__attr_new_string(g, table ? table : "", table ? strlen(table) : 0)},
            {"minimum_segment_size", gn__attr_new_int(g, S->p->minimum_segment_size)},
        };
        for (size_t k = 0; k < GN__ARRAY_LEN(attrs) && s == GN_OK; k++)
            s = attrs[k].v ? GFAIL(S, g, gn__node_set_attr(g, en, attrs[k].k, attrs[k].v)) : NOMEM(S);
        if (s == GN_OK && S->p->precision_mode == GN_PRECISION_FP16) {
            /* what a built engine runs; the native segment stays the fallback */
            Tensorflow__AttrValue *hf = gn__attr_new_func_named(g, hname);
            s = hf ? GFAIL(S, g, gn__node_set_attr(g, en, "_engine_func", hf)) : NOMEM(S);
        }
        /* placement: the members' common device, if any */
        if (s == GN_OK) gn__node_set_device(g, en, gn__str(g, g->nodes[members[0]].device));
    }
    /* control edges across the boundary */
    for (uint32_t i = 0; i < nm && s == GN_OK; i++) {
        const gn__node *nd = &g->nodes[members[i]];
        for (uint32_t k = 0; k < nd->n_ctrl && s == GN_OK; k++) {
            gn_id d = nd->ctrl[k];
            if (S->member_ix[d] || is_const(S, d)) continue;
            s = GFAIL(S, g, gn__node_add_control(g, en, d));
        }
        for (uint32_t k = 0; k < nd->n_cuse && s == GN_OK; k++) {
            gn_id u = nd->cuse[k];
            if (S->member_ix[u]) continue;
            s = GFAIL(S, g, gn__node_add_control(g, u, en));
        }
    }
    /* readers outside now read the engine: one sweep over each output's
     * fanouts (a member's outside readers join the engine's in its order) */
    for (uint32_t i = 0; i < io.out.n && s == GN_OK; i++)
        s = GFAIL(S, g, gn__graph_forward_output_if(g, io.out.e[i], (gn__edge){en, i}, member_of, S));
    /* members go, all at once (each producer's fanouts compacted once, however
     * many members it feeds); then the constants only they read */
    if (s == GN_OK) s = GFAIL(S, g, gn__nodes_remove(g, members, nm));
    gn_id *unread = s == GN_OK ? malloc((io.n_consts + 1) * sizeof *unread) : NULL;
    if (s == GN_OK && !unread) s = NOMEM(S);
    uint32_t n_unread = 0;
    for (uint32_t i = 0; i < io.n_consts && s == GN_OK; i++) {
        const gn__node *k = &g->nodes[io.consts[i]];
        if (!k->n_use && !k->n_cuse && !(k->flags & GN__NODE_PRESERVE)) unread[n_unread++] = io.consts[i];
    }
    if (s == GN_OK) s = GFAIL(S, g, gn__nodes_remove(g, unread, n_unread));
    free(unread);
    if (s == GN_OK) {
        gn__buf_printf(&S->rep, "engine %s: %u node(s), %u input(s), %u output(s), %u constant(s) copied in:", ename, nm,
                       io.in.n, io.out.n, io.n_consts);
    }
    gn_graph_free(body);
    gn_graph_free(hbody);
    free(table);
    free(map);
    free(tin);
    free(tout);
    free(ph);
    for (uint32_t i = 0; i < io.n_consts; i++) S->const_ix[io.consts[i]] = 0;
    for (uint32_t i = 0; i < nm; i++) S->member_ix[members[i]] = 0;
    edge_set_free(&io.in);
    edge_set_free(&io.out);
    free(io.consts);
    return s;
}

/* ---- the driver ------------------------------------------------------------------------ */
void gn_segment_params_init(gn_segment_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->backend = "cpu";
}

static gn_status mark_preserved(seg *S, const gn_segment_params *sp)
{
    for (size_t i = 0; i < sp->n_preserve; i++) {
        const char *t = sp->preserve[i];
        if (!t) continue;
        if (t[0] == '^') t++;
        const char *colon = strrchr(t, ':');
        size_t n = colon ? (size_t)(colon - t) : strlen(t);
        gn_id id = gn__graph_find_n(S->g, t, n);
        if (id == GN_NONE && colon) id = gn__graph_find(S->g, t);
        if (id == GN_NONE) return gn__fail(S->err, GN_ERR_NOT_FOUND, "segment: '%s' is not a node of the graph", t);
        S->g->nodes[id].flags |= GN__NODE_PRESERVE;
    }
    return GN_OK;
}

/* Will the segment of these members become an engine (size and input rules of step 3)? */
static bool seg_kept(seg *S, const gn_id *mem, uint32_t nm, uint32_t root)
{
    uint32_t eff = 0;
    bool has_input = false;
    for (uint32_t i = 0; i < nm; i++) {
        eff += effective(S, mem[i]);
        for (uint32_t j = 0; j < S->g->nodes[mem[i]].n_in; j++) {
            gn_id pr = S->g->nodes[mem[i]].in[j].node;
            if (!in_seg(S, pr, root) && !is_const(S, pr)) has_input = true;
        }
    }
    return eff > 0 && (int64_t)eff >= S->p->minimum_segment_size && has_input;
}

/* How many steps ahead a loop over nodes in a known order prefetches. */
#define SWEEP_AHEAD 8u

/* The index k steps after i in a loop over n indices, going down or up; UINT32_MAX: none. */
static uint32_t ahead(uint32_t i, uint32_t k, uint32_t n, bool down)
{
    if (down) return i >= k ? i - k : UINT32_MAX;
    return k < n - i ? i + k : UINT32_MAX;
}

/* A loop over ids (ids[i] now, down or up) reads each node's record, its
 * lists and the entries of its producers (ins) or consumers (uses): where the
 * graph no longer fits in cache, each is a miss, so each is asked for a few
 * steps before it is read (the record first, then the lists, then the
 * neighbours' entries). */
static void prefetch_ahead(const seg *S, const gn_id *ids, uint32_t n, uint32_t i, bool down, bool ins, bool uses)
{
    const gn_graph *g = S->g;
    uint32_t j = ahead(i, 3 * SWEEP_AHEAD, n, down);
    if (j != UINT32_MAX) {
        GN__PREFETCH(&g->nodes[ids[j]]);
        GN__PREFETCH(&S->nd[ids[j]]);
    }
    j = ahead(i, 2 * SWEEP_AHEAD, n, down);
    if (j != UINT32_MAX) {
        const gn__node *f = &g->nodes[ids[j]];
        if (ins) GN__PREFETCH(f->in);
        if (uses) {
            GN__PREFETCH(f->use);
            GN__PREFETCH(f->cuse);
        }
    }
    j = ahead(i, SWEEP_AHEAD, n, down);
    if (j != UINT32_MAX) {
        const gn__node *f = &g->nodes[ids[j]];
        for (uint32_t k = 0; ins && k < f->n_in; k++)
            if (f->in[k].node < S->n) GN__PREFETCH(&S->nd[f->in[k].node]);
        for (uint32_t k = 0; uses && k < f->n_use; k++)
            if (f->use[k].node < S->n) GN__PREFETCH(&S->nd[f->use[k].node]);
        for (uint32_t k = 0; uses && k < f->n_cuse; k++)
            if (f->cuse[k] < S->n) GN__PREFETCH(&S->nd[f->cuse[k]]);
    }
}

typedef struct seg_list {
    uint32_t root;
    uint32_t first_pos;
} seg_list;


gn_status gn_segment(gn_graph *g, const gn_conversion_params *p, const gn_segment_params *sp, char **report,
                     size_t *n_engines)
{
    if (report) *report = NULL;
    if (n_engines) *n_engines = 0;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    gn_conversion_params defp, eff_p;
    gn_segment_params defs;
    if (!p) {
        gn_conversion_params_init(&defp);
        p = &defp;
    }
    if (!sp) {
        gn_segment_params_init(&defs);
        sp = &defs;
    }
    char perr[256];
    if (gn_conversion_params_validate(p, perr, sizeof perr) != GN_OK)
        return gn__fail(&g->err, GN_ERR_ARG, "%s", perr);
    seg S;
    memset(&S, 0, sizeof S);
    S.g = g;
    S.err = &g->err;
    S.p = p;
    S.cuda = sp->backend && strcmp(sp->backend, "cuda") == 0;
    S.op_const = gn__intern_find(g, "Const", 5);
    S.op_identity = gn__intern_find(g, "Identity", 8);
    S.op_snapshot = gn__intern_find(g, "Snapshot", 8);
    S.op_stop_gradient = gn__intern_find(g, "StopGradient", 12);
    gn__buf_init(&S.rep);
    gn__backend b = {0};
    gn_status s = gn__backend_open(sp->backend ? sp->backend : "cpu", 0, &b, &g->err);
    if (s != GN_OK) return s;
    /* preserved marks are the caller's only for this call */
    uint32_t n = g->n_nodes;
    uint8_t *had = malloc(n ? n : 1);
    if (!had) {
        gn__backend_close(&b);
        return gn__fail(&g->err, GN_ERR_NOMEM, "segment: out of memory");
    }
    for (uint32_t i = 0; i < n; i++) had[i] = (g->nodes[i].flags & GN__NODE_PRESERVE) != 0;
    /* the colocation entries that may name a node an engine takes in */
    gn__coloc coloc;
    memset(&coloc, 0, sizeof coloc);
    s = sp->dry_run ? GN_OK : gn__coloc_collect(g, &coloc, &g->err);
    if (s == GN_OK) s = mark_preserved(&S, sp);
    S.n = n;
    S.nd = calloc(n + 1, sizeof *S.nd);
    S.next = malloc((n + 1) * sizeof *S.next);
    S.tail = malloc((n + 1) * sizeof *S.tail);
    S.minpos = malloc((n + 1) * sizeof *S.minpos);
    S.ext_head = malloc((n + 1) * sizeof *S.ext_head);
    S.ext_tail = malloc((n + 1) * sizeof *S.ext_tail);
    size_t n_edges = 0;
    for (uint32_t i = 0; i < n; i++) n_edges += g->nodes[i].n_use + g->nodes[i].n_cuse;
    S.n_ext_cap = n_edges < UINT32_MAX ? (uint32_t)n_edges : UINT32_MAX - 1;
    S.ext = aligned_alloc(sizeof *S.ext, ((size_t)S.n_ext_cap + 1) * sizeof *S.ext); /* a chunk per line */
    S.free_chunk = GN_NONE;
    S.bnd_in = calloc(n + 1, sizeof *S.bnd_in);
    S.bnd_out = calloc(n + 1, sizeof *S.bnd_out);
    /* engines add one node each: ids stay below 2n + 1 */
    S.const_ix = calloc(2 * (size_t)n + 2, sizeof *S.const_ix);
    S.member_ix = calloc(2 * (size_t)n + 2, sizeof *S.member_ix);
    S.stack = malloc((n + 1) * sizeof *S.stack);
    gn_id *order = NULL;
    uint32_t n_order = 0;
    if (s == GN_OK && (!S.nd || !S.next || !S.tail || !S.stack ||
                        !S.minpos || !S.ext_head || !S.ext_tail || !S.ext || !S.bnd_in || !S.bnd_out || !S.const_ix || !S.member_ix))
        s = gn__fail(&g->err, GN_ERR_NOMEM, "segment: out of memory");
    if (s == GN_OK) s = gn__graph_topo(g, &order, &n_order);
    size_t made = 0, dropped = 0;
    if (s == GN_OK) {
        for (uint32_t i = 0; i < n_order; i++) S.nd[order[i]].pos = i;
        /* INT8 without calibration: ranges from the quantization nodes; with none in
         * the whole graph the engines are FP16, as TF-TRT does
         * (docs/reference_formats.md §A3) */
        if (p->precision_mode == GN_PRECISION_INT8 && !p->use_calibration && p->minimum_segment_size != -1) {
            bool any = false;
            for (uint32_t i = 0; i < n_order && !any; i++) any = is_qdq_op(gn__node_op(g, order[i]));
            if (!any) {
                eff_p = *p;
                eff_p.precision_mode = GN_PRECISION_FP16;
                S.p = &eff_p;
                gn__buf_printf(&S.rep, "INT8 without calibration and no FakeQuant or QuantizeAndDequantize node in "
                                       "the graph: engines are FP16 (as TF-TRT does)\n");
            } else {
                s = qdq_ranges(&S, order, n_order);
            }
        }
        /* 1. candidates */
        char buf[600];
        for (uint32_t i = 0; i < n_order; i++) {
            gn_id id = order[i];
            prefetch_ahead(&S, order, n_order, i, false, true, false);
            S.nd[id].parent = id;
            S.next[id] = GN_NONE;
            S.tail[id] = id;
            S.minpos[id] = i;
            S.ext_head[id] = S.ext_tail[id] = GN_NONE;
            S.nd[id].konst = g->nodes[id].op == S.op_const;
            if (p->minimum_segment_size == -1) continue;
            const char *why = refusal(&S, &b, id, buf, sizeof buf);
            if (why) {
                if (!op_is(g, id, "Const") && !op_is(g, id, "NoOp"))
                    gn__buf_printf(&S.rep, "not converted: %s (%s): %s\n", gn__node_name(g, id), gn__node_op(g, id), why);
            } else {
                S.nd[id].cand = 1;
                const gn__node *nd = &g->nodes[id];
                for (uint32_t k = 0; k < nd->n_in; k++) S.bnd_in[id] += !is_const(&S, nd->in[k].node);
                S.bnd_out[id] = nd->n_use;
            }
        }
        /* 2. growth, from the outputs toward the inputs: each candidate joins
         * the clusters of its candidate consumers when no cycle follows */
        for (uint32_t i = n_order; i-- > 0;) {
            gn_id x = order[i];
            const gn__node *nd = &g->nodes[x];
            prefetch_ahead(&S, order, n_order, i, true, false, true);
            /* first: a path out of x's cluster may leave through x itself */
            add_producer(&S, x);
            for (uint32_t k = 0; S.nd[x].cand && k < nd->n_use; k++) {
                gn_id u = nd->use[k].node;
                if (u >= n || !S.nd[u].cand) continue;
                uint32_t a = find(&S, x), c = find(&S, u);
                if (a == c) { /* the edge x -> u is internal */
                    S.bnd_in[a]--;
                    S.bnd_out[a]--;
                    continue;
                }
                /* an engine op takes at most 65535 inputs and outputs (op signature) */
                if (S.bnd_in[a] + S.bnd_in[c] - 1 > UINT16_MAX || S.bnd_out[a] + S.bnd_out[c] - 1 > UINT16_MAX)
                    continue;
                if (makes_cycle(&S, a, c)) continue;
                S.bnd_in[a] += S.bnd_in[c] - 1;
                S.bnd_out[a] += S.bnd_out[c] - 1;
                merge(&S, a, c);
            }
        }
        /* 3. segments, by their first member's position; members bucketed
         * per root in topological order (a counting sort) */
        seg_list *segs = malloc((n + 1) * sizeof *segs);
        uint32_t *seg_of = malloc((n + 1) * sizeof *seg_of);
        uint32_t *start = calloc(n + 2, sizeof *start);
        gn_id *members = malloc((n + 1) * sizeof *members);
        uint32_t ns = 0;
        if (!segs || !seg_of || !start || !members) s = gn__fail(&g->err, GN_ERR_NOMEM, "segment: out of memory");
        for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
            gn_id x = order[i];
            if (!S.nd[x].cand) continue;
            uint32_t r = find(&S, x);
            if (S.minpos[r] == i) { /* the first member met: the segment's slot */
                seg_of[r] = ns;
                segs[ns++] = (seg_list){r, i};
            }
            start[seg_of[r] + 1]++;
        }
        for (uint32_t k = 0; s == GN_OK && k < ns; k++) start[k + 1] += start[k];
        {
            uint32_t *fill = s == GN_OK ? malloc((ns + 1) * sizeof *fill) : NULL;
            if (s == GN_OK && !fill) s = gn__fail(&g->err, GN_ERR_NOMEM, "segment: out of memory");
            for (uint32_t k = 0; s == GN_OK && k < ns; k++) fill[k] = start[k];
            for (uint32_t i = 0; s == GN_OK && i < n_order; i++) {
                gn_id x = order[i];
                if (S.nd[x].cand) members[fill[seg_of[find(&S, x)]]++] = x;
            }
            free(fill);
        }
        /* INT8 without calibration: every range a kept segment needs, before any change */
        for (uint32_t k = 0; S.range0 && k < ns && s == GN_OK; k++)
            if (seg_kept(&S, members + start[k], start[k + 1] - start[k], segs[k].root))
                s = check_ranges(&S, members + start[k], start[k + 1] - start[k]);
        for (uint32_t k = 0; k < ns && s == GN_OK; k++) {
            uint32_t nm = start[k + 1] - start[k], eff = 0;
            gn_id *mem = members + start[k];
            bool has_input = false;
            /* upper bounds of the engine's inputs and outputs: the edges that cross the boundary */
            uint64_t cross_in = 0, cross_out = 0;
            for (uint32_t i = 0; i < nm; i++) {
                gn_id x = mem[i];
                prefetch_ahead(&S, mem, nm, i, false, true, true);
                eff += effective(&S, x);
                for (uint32_t j = 0; j < g->nodes[x].n_in; j++) {
                    gn_id pr = g->nodes[x].in[j].node;
                    if (!in_seg(&S, pr, segs[k].root) && !is_const(&S, pr)) {
                        has_input = true;
                        cross_in++;
                    }
                }
                for (uint32_t j = 0; j < g->nodes[x].n_use; j++)
                    cross_out += !in_seg(&S, g->nodes[x].use[j].node, segs[k].root);
            }
            if ((int64_t)eff < p->minimum_segment_size || eff == 0) {
                gn__buf_printf(&S.rep, "segment of %u node(s) starting at %s stays native: %u effective node(s), "
                                       "minimum_segment_size is %d\n",
                               nm, gn__node_name(g, mem[0]), eff, p->minimum_segment_size);
                dropped++;
                continue;
            }
            if (!has_input) {
                gn__buf_printf(&S.rep, "segment starting at %s stays native: it has no inputs (constant folding "
                                       "should have removed it)\n", gn__node_name(g, mem[0]));
                dropped++;
                continue;
            }
            /* an op signature holds at most 65535 arguments of each kind */
            if (cross_in > UINT16_MAX || cross_out > UINT16_MAX) {
                gn__buf_printf(&S.rep, "segment of %u node(s) starting at %s stays native: up to %" PRIu64
                                       " input(s) and %" PRIu64 " output(s), more than an engine op takes (%u)\n",
                               nm, gn__node_name(g, mem[0]), cross_in, cross_out, (unsigned)UINT16_MAX);
                dropped++;
                continue;
            }
            if (sp->dry_run) {
                gn__buf_printf(&S.rep, "engine GrapnelEngineOp_000_%03zu (dry run): %u node(s):", made, nm);
            } else {
                /* names first: members are removed by build_engine */
                char names[4096];
                size_t o = 0;
                names[0] = '\0';
                for (uint32_t i = 0; i < nm && o + 2 < sizeof names; i++) {
                    int w = snprintf(names + o, sizeof names - o, " %s", gn__node_name(g, mem[i]));
                    if (w < 0) break;
                    o += (size_t)w;
                }
                s = build_engine(&S, mem, nm, (uint32_t)made);
                if (s == GN_OK) gn__buf_printf(&S.rep, "%s\n", names);
                made++;
                continue;
            }
            for (uint32_t i = 0; i < nm; i++) {
                gn__buf_putc(&S.rep, ' ');
                gn__buf_puts(&S.rep, gn__node_name(g, mem[i]));
            }
            gn__buf_putc(&S.rep, '\n');
            made++;
        }
        free(members);
        free(segs);
        free(seg_of);
        free(start);
    }
    /* the caller's preserve marks were for this call only (ids are still those of the start) */
    for (uint32_t i = 0; i < n; i++)
        if (!had[i]) g->nodes[i].flags &= ~GN__NODE_PRESERVE;
    if (s == GN_OK && !sp->dry_run && made) {
        bool moved = false;
        s = gn__coloc_fix(g, &coloc, &moved, &g->err);
    }
    gn__coloc_free(&coloc);
    if (s == GN_OK && !sp->dry_run && made) s = gn__graph_compact(g);
    if (s == GN_OK && !sp->dry_run && made) s = gn__graph_validate(g);
    if (made && S.p->precision_mode == GN_PRECISION_INT8 && S.p->use_calibration)
        gn__buf_printf(&S.rep, "INT8 engines need calibration (gn_calibrate, grapnel segment --calibrate): until "
                               "then they run their native segments\n");
    gn__buf_printf(&S.rep, "%zu engine(s)%s, %zu segment(s) left native\n", made, sp->dry_run ? " (dry run)" : "",
                   dropped);
    if (n_engines) *n_engines = made;
    if (report && s == GN_OK) {
        *report = gn__buf_take(&S.rep);
        if (!*report) s = gn__fail(&g->err, GN_ERR_NOMEM, "segment: out of memory");
    }
    gn__buf_free(&S.rep);
    free(order);
    free(had);
    free(S.nd);
    free(S.next);
    free(S.tail);
    free(S.minpos);
    free(S.ext_head);
    free(S.ext_tail);
    free(S.ext);
    free(S.bnd_in);
    free(S.bnd_out);
    free(S.const_ix);
    free(S.member_ix);
    free(S.stack);
    free(S.range0);
    gn__backend_close(&b);
    return s;
}
