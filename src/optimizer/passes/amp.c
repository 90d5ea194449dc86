/* Auto mixed precision (Grappler's auto_mixed_precision in CUDA mode,
 * docs/reference_grappler.md §3.8): float16 for numerically safe, compute-heavy work on GPUs of
 * compute capability 7.0 and newer.
 *
 * As TensorFlow's AutoMixedPrecisionImpl::Optimize:
 *  - Candidates ("processed" nodes): GPU-placed (gn__pass_on_gpu), not
 *    preserved (fetches and feeds keep their float32 outputs: a CastToFp32
 *    feeds them), not a function body's _Arg/_Retval, not named in
 *    amp.keep_float32. On a CPU target, or a GPU below sm_70, nothing is done
 *    and the report says why (amp.target).
 *  - FusedBatchNorm / FusedBatchNormGrad become their V2 forms (U = float).
 *  - A "type attribute graph": one vertex per (node, single type attr) of
 *    the op's arguments, edges along data edges between the attrs that govern
 *    the producer's output and the consumer's input.
 *  - The lists (allow / infer / clear / deny) are the registry's table
 *    (src/opdef/ops.def, AutoMixedPrecisionListsFp16 in CUDA mode) edited by
 *    the options amp.<list>_add / amp.<list>_remove (TensorFlow reads the
 *    same edits from TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_* environment
 *    variables); an op named in an _add option leaves its table list (an op in
 *    two _add options is refused). Disabling the pattern amp.infer, amp.clear
 *    or amp.deny empties that list.
 *  - Painting, TensorFlow's passes in order: AddAllowlistOps (amp.allow);
 *    PropagateDenyFwdThroughClearAndInfer; AddClearAndInferToAllowIfBetweenAllow;
 *    AddInferToAllowIfFollowAllow (an infer node with an allow fanin and no
 *    deny fanin; TensorFlow 2.21 runs it in CUDA mode too, visiting the nodes
 *    in graph order, which after its earlier passes is topological, so chains
 *    of infer ops after an allow op are painted: we visit in topological
 *    order); PropagateAllowThroughClear; RemoveAllowsetWithFp32 (ops whose attr does
 *    not accept half); ForceColorMatchOnRecurrentEdges (NextIteration and its
 *    Merge nodes share a colour); MakeCastsAllowIfAllOutputsAllow.
 *  - Painted float32 attrs become DT_HALF; at every float32 edge whose ends
 *    differ a Cast is inserted after the producer's output, one per output
 *    and shared, named "<node>-<port>-CastToFp16-AutoMixedPrecision" or
 *    "...-CastToFp32-AutoMixedPrecision", on the producer's device. A float
 *    Const (no control inputs) that only needs a CastToFp16 is converted at
 *    compile time instead: the node of that name is a DT_HALF Const (amp.const),
 *    and the float Const goes when nothing else reads it. A CastToFp16 after a
 *    user Cast(half -> float) is not made: its float16 consumers read the
 *    Cast's half input (an exact round trip).
 *  - AGGRESSIVE behaves as ON: TensorFlow only uses the toggle to enable the
 *    pass (meta_optimizer.cc AutoMixedPrecisionEnabled).
 *  - TensorList ops (TensorFlow's FindFloat32TensorListOpClustersAndDenylistUnsafe,
 *    FindTensorListImplicitFloat32Edges, ForceColorMatchBetweenTensorListOps):
 *    the float32 TensorList ops linked through their list handles (DT_VARIANT
 *    edges, through Enter/Merge/Switch/NextIteration/Exit/Identity of a v1
 *    loop) form a cluster whose element_dtype attrs get one colour; each
 *    writer (TensorListFromTensor, SetItem, PushBack, Scatter, Split, ...)
 *    gets an edge to each reader (GetItem, Stack, Gather, PopBack, Concat)
 *    that reads its list, so painting flows from the element written to the
 *    element read. A cluster with an unprocessed TensorList op, or whose
 *    handle reaches a graph boundary (_Arg, _Retval, Placeholder, a function
 *    call) stays float32 (amp.tensor_list). Unlike TensorFlow, a functional
 *    While/If/Case on the handle is a boundary too: its body is optimized on
 *    its own, where the list comes from an _Arg and its TensorList ops stay
 *    float32, so they would read and write float32 elements of a list painted
 *    float16 outside (TensorFlow makes that graph, which then fails at run
 *    time on the element dtype check).
 * Left out (a node that would need them stays float32): attrs of list type
 * (IdentityN). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "ops/kernels/math_internal.h"
#include "opdef/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_amp[] = {
    {"amp.allow", "allow-list ops (Tensor Core work) run in float16"},
    {"amp.infer", "infer-list ops between float16 ops run in float16"},
    {"amp.clear", "clear-list (data movement) ops next to float16 ops run in float16"},
    {"amp.deny", "deny-list ops and what they feed through infer/clear ops stay float32"},
    {"amp.keep_float32", "nodes named in amp.keep_float32 stay float32"},
    {"amp.cast", "Cast nodes at float16 / float32 boundaries"},
    {"amp.const", "float32 constants feeding float16 ops converted at compile time"},
    {"amp.tensor_list", "TensorList ops sharing a list handle get one element dtype"},
    {"amp.target", "the target must be a GPU of compute capability 7.0 or newer"},
    {NULL, NULL},
};

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_VARIANT TENSORFLOW__DATA_TYPE__DT_VARIANT
#define OUT_BIT 0x80000000u

enum { V_ALLOW = 1, V_DENY = 2, V_UP = 4, V_DOWN = 8, V_UPA = 16, V_CLEARP = 32, V_DENYROOT = 64, V_FOLLOW = 128 };

typedef struct vtx {
    gn_id node;
    const char *attr;   /* the opdef's attr name (static text) */
    int32_t dtype;      /* the attr's value before the pass */
    uint8_t flags;
} vtx;

typedef struct amp {
    gn__pass_ctx *c;
    gn_graph *g;
    uint32_t n;            /* nodes */
    uint8_t *list;         /* per node: gn__amp_list (effective) */
    uint8_t *proc;         /* per node: processed */
    uint8_t *op_list;      /* per interned op: list + 1 (0: not computed) */
    uint32_t n_ops;
    uint32_t *in_off, *out_off;  /* per node, into islot / oslot (n + 1 entries) */
    int32_t *islot, *oslot;      /* vertex of each input slot / output port, -1 */
    vtx *v;
    uint32_t nv, capv;
    uint32_t *fo_off, *fi_off;   /* CSR over vertices */
    uint32_t *fo, *fi;
    uint32_t *vbeg, *vend;       /* per node: its vertices [vbeg, vend) */
    gn_id *topo;                 /* the nodes in topological order */
    uint32_t n_topo;
    uint32_t *stamp;
    uint32_t gen;
    uint32_t *stack;
    uint32_t n_stack, cap_stack;
    /* TensorList clusters */
    int32_t *elem_v;             /* per node: the vertex of a TensorList op's element_dtype, -1 */
    uint32_t *cl;                /* per node: its TensorList cluster (1-based), 0 */
    uint32_t n_cl;
    gn_id *cl_bound;             /* per cluster: the boundary node that makes it unsafe, GN_NONE */
    uint8_t *cl_fl;              /* per cluster: scratch flags */
    uint32_t *pin, *pout, *nstamp; /* per input slot / output port / node: walk stamps */
    uint32_t lgen;
    struct pref { gn_id node; uint32_t code; } *ps; /* walk stack: (node, slot or OUT_BIT | port) */
    uint32_t n_ps, cap_ps;
    uint32_t *ee;                /* implicit writer -> reader edges, pairs of vertices */
    uint32_t n_ee, cap_ee;
} amp;

static gn_status nomem(amp *a)
{
    return gn__fail(a->c->err, GN_ERR_NOMEM, "auto_mixed_precision: out of memory");
}

static gn_status from_graph(amp *a, gn_status s)
{
    if (s == GN_OK) return s;
    return gn__fail(a->c->err, s, "auto_mixed_precision: %s", a->g->err.msg);
}

/* ---- lists -------------------------------------------------------------------------------- */
static const char *list_name(int l)
{
    switch (l) {
    case GN__AMP_ALLOW: return "allow";
    case GN__AMP_INFER: return "infer";
    case GN__AMP_CLEAR: return "clear";
    case GN__AMP_DENY: return "deny";
    default: return "no";
    }
}

static const char *add_opt(const gn_options *o, int l)
{
    switch (l) {
    case GN__AMP_ALLOW: return o->amp_allowlist_add;
    case GN__AMP_INFER: return o->amp_inferlist_add;
    case GN__AMP_CLEAR: return o->amp_clearlist_add;
    default: return o->amp_denylist_add;
    }
}

static const char *remove_opt(const gn_options *o, int l)
{
    switch (l) {
    case GN__AMP_ALLOW: return o->amp_allowlist_remove;
    case GN__AMP_INFER: return o->amp_inferlist_remove;
    case GN__AMP_CLEAR: return o->amp_clearlist_remove;
    default: return o->amp_denylist_remove;
    }
}

/* An op named in two _add options: its name in buf, the two lists in *l1, *l2. */
static bool list_conflict(const gn_options *o, char *buf, size_t len, int *l1, int *l2)
{
    for (int x = GN__AMP_ALLOW; x <= GN__AMP_DENY; x++) {
        const char *s = add_opt(o, x);
        while (*s) {
            const char *e = strchr(s, ',');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            if (n && n < len) {
                memcpy(buf, s, n);
                buf[n] = 0;
                for (int y = x + 1; y <= GN__AMP_DENY; y++)
                    if (gn__list_has(add_opt(o, y), buf)) {
                        *l1 = x;
                        *l2 = y;
                        return true;
                    }
            }
            s += n;
            if (*s == ',') s++;
        }
    }
    return false;
}

static int effective_list(amp *a, gn_id id)
{
    const gn__node *nd = gn__node_at(a->g, id);
    if (nd->op < a->n_ops && a->op_list[nd->op]) return a->op_list[nd->op] - 1;
    const char *op = gn__str(a->g, nd->op);
    const gn_options *o = a->c->opts;
    int l = GN__AMP_NONE;
    if (nd->opdef >= 0) l = (int)gn__op_at((uint32_t)nd->opdef)->amp;
    int added = GN__AMP_NONE;
    for (int x = GN__AMP_ALLOW; x <= GN__AMP_DENY; x++)
        if (add_opt(o, x)[0] && gn__list_has(add_opt(o, x), op)) added = x;
    if (added != GN__AMP_NONE)
        l = added;
    else if (l != GN__AMP_NONE && remove_opt(o, l)[0] && gn__list_has(remove_opt(o, l), op))
        l = GN__AMP_NONE;
    if ((l == GN__AMP_INFER && !gn__pattern_enabled(a->c, "amp.infer")) ||
        (l == GN__AMP_CLEAR && !gn__pattern_enabled(a->c, "amp.clear")) ||
        (l == GN__AMP_DENY && !gn__pattern_enabled(a->c, "amp.deny")))
        l = GN__AMP_NONE;
    if (nd->op < a->n_ops) a->op_list[nd->op] = (uint8_t)(l + 1);
    return l;
}

/* ---- allowed types: a scan of the serialized AttrValue (list { type: ... }) ----------------- */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int sh = 0; *p < end && sh < 64; sh += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static bool skip_field(const uint8_t **p, const uint8_t *end, uint32_t wt)
{
    uint64_t v;
    switch (wt) {
    case 0: return varint(p, end, &v);
    case 1: if (end - *p < 8) return false; *p += 8; return true;
    case 5: if (end - *p < 4) return false; *p += 4; return true;
    case 2:
        if (!varint(p, end, &v) || v > (uint64_t)(end - *p)) return false;
        *p += v;
        return true;
    default: return false;
    }
}

/* Does the attr's allowed-values list admit dt (no list: every type)? */
static bool allowed_has(const gn__attrdef *ad, int32_t dt)
{
    if (!ad || !ad->allowed_pb || !ad->allowed_len) return true;
    const uint8_t *p = ad->allowed_pb, *end = p + ad->allowed_len;
    bool any = false;
    while (p < end) {
        uint64_t tag;
        if (!varint(&p, end, &tag)) return false;
        if ((tag >> 3) == 1 && (tag & 7) == 2) {
            uint64_t len;
            if (!varint(&p, end, &len) || len > (uint64_t)(end - p)) return false;
            const uint8_t *q = p, *qe = p + len;
            p = qe;
            while (q < qe) {
                uint64_t t2, v;
                if (!varint(&q, qe, &t2)) return false;
                if ((t2 >> 3) == 6 && (t2 & 7) == 0) {
                    if (!varint(&q, qe, &v)) return false;
                    any = true;
                    if ((int64_t)v == dt) return true;
                } else if ((t2 >> 3) == 6 && (t2 & 7) == 2) {
                    uint64_t l2;
                    if (!varint(&q, qe, &l2) || l2 > (uint64_t)(qe - q)) return false;
                    const uint8_t *r = q, *re = q + l2;
                    q = re;
                    while (r < re) {
                        if (!varint(&r, re, &v)) return false;
                        any = true;
                        if ((int64_t)v == dt) return true;
                    }
                } else if (!skip_field(&q, qe, (uint32_t)(t2 & 7)))
                    return false;
            }
        } else if (!skip_field(&p, end, (uint32_t)(tag & 7)))
            return false;
    }
    return !any;
}

static bool supports_f16(const amp *a, const vtx *v)
{
    const gn__node *nd = gn__node_at(a->g, v->node);
    if (nd->opdef < 0) return false;
    return allowed_has(gn__opdef_attr(gn__op_at((uint32_t)nd->opdef), v->attr), DT_HALF);
}

/* ---- the type-attribute graph ----------------------------------------------------------------- */
static int32_t vertex_for(amp *a, gn_id id, uint32_t first, const char *attr)
{
    for (uint32_t i = first; i < a->nv; i++)
        if (strcmp(a->v[i].attr, attr) == 0) return (int32_t)i;
    if (a->nv == a->capv) {
        uint32_t nc = a->capv ? a->capv * 2 : 1024;
        vtx *nvx = realloc(a->v, (size_t)nc * sizeof *nvx);
        if (!nvx) return -2;
        a->v = nvx;
        a->capv = nc;
    }
    vtx *v = &a->v[a->nv];
    v->node = id;
    v->attr = attr;
    v->dtype = 0;
    int dt;
    if (gn__attr_get_type(a->g, id, attr, &dt)) v->dtype = dt;
    v->flags = 0;
    return (int32_t)a->nv++;
}

static bool is_tensor_list_op(const char *op)
{
    return strstr(op, "TensorList") != NULL;
}

static bool in_set(const char *op, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(op, *set) == 0) return true;
    return false;
}

static bool is_tl_reader(const char *op)
{
    static const char *const k[] = {"TensorListConcat",  "TensorListConcatV2", "TensorListGather",
                                    "TensorListGetItem", "TensorListPopBack",  "TensorListStack", NULL};
    return in_set(op, k);
}

static bool is_tl_writer(const char *op)
{
    static const char *const k[] = {"TensorListFromTensor", "TensorListPushBack",  "TensorListPushBackBatch",
                                    "TensorListScatter",    "TensorListScatterV2", "TensorListScatterIntoExistingList",
                                    "TensorListSetItem",    "TensorListSplit",     NULL};
    return in_set(op, k);
}

/* Where a list handle leaves what this pass can follow: TensorFlow's
 * IsSourceOrSinkOp, plus the functional control flow whose bodies this pass
 * does not rewrite. */
static bool is_list_boundary(const amp *a, gn_id id)
{
    static const char *const k[] = {"_Arg", "_Retval", "OptionalFromValue", "OptionalGetValue", "PartitionedCall",
                                    "Placeholder", "StatefulPartitionedCall", "While", "StatelessWhile", "If",
                                    "StatelessIf", "Case", "StatelessCase", NULL};
    const gn__node *nd = gn__node_at(a->g, id);
    return nd->opdef < 0 || (nd->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) || in_set(gn__node_op(a->g, id), k);
}

/* A TensorList op whose element_dtype is float32. */
static bool tl_float(const amp *a, gn_id id)
{
    int32_t v = a->elem_v[id];
    return v >= 0 && a->v[v].dtype == DT_FLOAT && is_tensor_list_op(gn__node_op(a->g, id));
}

/* ---- TensorList clusters ---------------------------------------------------------------------- */
static int32_t port_dtype(const amp *a, gn_id id, uint32_t port);

/* The type group of a port (input slot, or OUT_BIT | output port): the
 * argument's type attr (with the index in a type list), or its fixed type.
 * Ports of one group are one vertex of TensorFlow's type graph. */
static bool port_group(const amp *a, gn_id id, uint32_t code, const char **attr, int32_t *index)
{
    const gn__opdef *op = gn__node_opdef(a->g, id);
    if (!op) return false;
    bool out = (code & OUT_BIT) != 0;
    uint32_t k = code & ~OUT_BIT, n = out ? op->n_outputs : op->n_inputs;
    gn__err e = {0};
    for (uint32_t arg = 0; arg < n; arg++) {
        const gn__argdef *ad = out ? &op->outputs[arg] : &op->inputs[arg];
        uint32_t start, count;
        gn_status s = out ? gn__op_output_range(op, a->g, id, arg, &start, &count, &e)
                          : gn__op_input_range(op, a->g, id, arg, &start, &count, &e);
        if (s != GN_OK) return false;
        if (k < start || k >= start + count) continue;
        if (ad->type_list_attr) {
            *attr = ad->type_list_attr;
            *index = (int32_t)(k - start);
        } else if (ad->type_attr) {
            *attr = ad->type_attr;
            *index = -1;
        } else {
            *attr = NULL;
            *index = ad->type;
        }
        return true;
    }
    return false;
}

static bool ps_push(amp *a, gn_id node, uint32_t code)
{
    if (a->n_ps == a->cap_ps) {
        uint32_t nc = a->cap_ps ? a->cap_ps * 2 : 256;
        struct pref *p = realloc(a->ps, (size_t)nc * sizeof *p);
        if (!p) return false;
        a->ps = p;
        a->cap_ps = nc;
    }
    a->ps[a->n_ps].node = node;
    a->ps[a->n_ps].code = code;
    a->n_ps++;
    return true;
}

/* Is output port `port` of node id one the slot arrays cover? */
static bool out_ok(const amp *a, gn_id id, uint32_t port)
{
    return id < a->n && port < a->out_off[id + 1] - a->out_off[id];
}

/* Does input slot s of node id read a list handle? */
static bool reads_variant(const amp *a, gn_id id, uint32_t s)
{
    gn__edge e = gn__node_at(a->g, id)->in[s];
    return out_ok(a, e.node, e.index) && port_dtype(a, e.node, e.index) == DT_VARIANT;
}

static uint32_t *port_stamp(amp *a, gn_id id, uint32_t code)
{
    return (code & OUT_BIT) ? &a->pout[a->out_off[id] + (code & ~OUT_BIT)] : &a->pin[a->in_off[id] + code];
}

/* Called once per node a walk reaches; false: do not go on through it. */
typedef bool (*list_visit)(amp *a, gn_id id, gn_id from);

/* Follows list handles (DT_VARIANT edges) from the variant ports of root
 * through the type groups of the nodes reached: inputs only, or both ways. */
static gn_status list_walk(amp *a, gn_id root, bool both, list_visit visit)
{
    gn_graph *g = a->g;
    a->lgen++;
    a->n_ps = 0;
    const gn__node *rn = gn__node_at(g, root);
    a->nstamp[root] = a->lgen;
    if (!visit(a, root, root)) return GN_OK;
    for (uint32_t s = 0; s < rn->n_in; s++)
        if (reads_variant(a, root, s) && !ps_push(a, root, s)) return nomem(a);
    if (both)
        for (uint32_t p = 0; p < a->out_off[root + 1] - a->out_off[root]; p++)
            if (port_dtype(a, root, p) == DT_VARIANT && !ps_push(a, root, OUT_BIT | p)) return nomem(a);
    while (a->n_ps) {
        struct pref pr = a->ps[--a->n_ps];
        gn_id id = pr.node;
        if (*port_stamp(a, id, pr.code) == a->lgen) continue;
        if (a->nstamp[id] != a->lgen) {
            a->nstamp[id] = a->lgen;
            if (!visit(a, id, root)) {
                *port_stamp(a, id, pr.code) = a->lgen;
                continue;
            }
        }
        const char *gattr;
        int32_t gidx;
        if (!port_group(a, id, pr.code, &gattr, &gidx)) {
            *port_stamp(a, id, pr.code) = a->lgen;
            continue;
        }
        const gn__node *nd = gn__node_at(g, id);
        uint32_t nout = a->out_off[id + 1] - a->out_off[id];
        for (uint32_t k = 0; k < nd->n_in + nout; k++) {
            uint32_t code = k < nd->n_in ? k : (OUT_BIT | (k - nd->n_in));
            uint32_t *st = port_stamp(a, id, code);
            if (*st == a->lgen) continue;
            const char *ka;
            int32_t ki;
            if (!port_group(a, id, code, &ka, &ki) || ki != gidx || (ka == NULL) != (gattr == NULL) ||
                (ka && strcmp(ka, gattr) != 0))
                continue;
            *st = a->lgen;
            if (!(code & OUT_BIT)) {
                gn__edge e = nd->in[k];
                if (reads_variant(a, id, k) && *port_stamp(a, e.node, OUT_BIT | e.index) != a->lgen &&
                    !ps_push(a, e.node, OUT_BIT | e.index))
                    return nomem(a);
            } else if (both && port_dtype(a, id, code & ~OUT_BIT) == DT_VARIANT) {
                for (uint32_t u = 0; u < nd->n_use; u++) {
                    gn__use use = nd->use[u];
                    if (gn__node_at(g, use.node)->in[use.slot].index != (code & ~OUT_BIT)) continue;
                    if (*port_stamp(a, use.node, use.slot) != a->lgen && !ps_push(a, use.node, use.slot))
                        return nomem(a);
                }
            }
        }
    }
    return GN_OK;
}

static bool visit_cluster(amp *a, gn_id id, gn_id root)
{
    uint32_t c = a->cl[root];
    if (tl_float(a, id)) {
        if (!a->cl[id]) a->cl[id] = c;
        if (!a->proc[id] && a->cl_bound[c - 1] == GN_NONE) a->cl_bound[c - 1] = id;
        return true;
    }
    if (is_list_boundary(a, id)) {
        if (a->cl_bound[c - 1] == GN_NONE) a->cl_bound[c - 1] = id;
        return false;
    }
    return true;
}

static bool visit_writers(amp *a, gn_id id, gn_id root)
{
    if (!a->proc[id] || (id != root && is_list_boundary(a, id))) return false;
    if (id != root && tl_float(a, id) && is_tl_writer(gn__node_op(a->g, id))) {
        if (a->n_ee == a->cap_ee) {
            uint32_t nc = a->cap_ee ? a->cap_ee * 2 : 64;
            uint32_t *e = realloc(a->ee, (size_t)nc * 2 * sizeof *e);
            if (!e) {
                a->n_ee = UINT32_MAX; /* out of memory: reported by the caller */
                return false;
            }
            a->ee = e;
            a->cap_ee = nc;
        }
        if (a->n_ee != UINT32_MAX) {
            a->ee[2 * a->n_ee] = (uint32_t)a->elem_v[id];
            a->ee[2 * a->n_ee + 1] = (uint32_t)a->elem_v[root];
            a->n_ee++;
        }
    }
    return true;
}

/* The clusters of float32 TensorList ops linked by their handles, the unsafe
 * ones denied, and the implicit writer -> reader edges. */
static gn_status find_tensor_lists(amp *a)
{
    gn_graph *g = a->g;
    uint32_t n = a->n;
    bool any = false;
    for (gn_id id = 0; id < n && !any; id++) any = gn__node_live(g, id) && tl_float(a, id) && a->proc[id];
    if (!any) return GN_OK;
    a->cl = calloc((size_t)n + 1, sizeof *a->cl);
    a->cl_bound = malloc(((size_t)n + 1) * sizeof *a->cl_bound);
    a->cl_fl = calloc((size_t)n + 1, 1);
    a->pin = calloc((size_t)a->in_off[n] + 1, sizeof *a->pin);
    a->pout = calloc((size_t)a->out_off[n] + 1, sizeof *a->pout);
    a->nstamp = calloc((size_t)n + 1, sizeof *a->nstamp);
    if (!a->cl || !a->cl_bound || !a->cl_fl || !a->pin || !a->pout || !a->nstamp) return nomem(a);
    gn_status s;
    for (gn_id id = 0; id < n; id++) {
        if (!gn__node_live(g, id) || !tl_float(a, id) || !a->proc[id] || a->cl[id]) continue;
        a->cl[id] = ++a->n_cl;
        a->cl_bound[a->n_cl - 1] = GN_NONE;
        if ((s = list_walk(a, id, true, visit_cluster)) != GN_OK) return s;
    }
    for (gn_id id = 0; id < n; id++) {
        if (!gn__node_live(g, id) || !a->cl[id]) continue;
        gn_id b = a->cl_bound[a->cl[id] - 1];
        if (b != GN_NONE) {
            a->v[a->elem_v[id]].flags |= V_DENY;
            gn__pass_refused(a->c, "amp.tensor_list", g, id, "%s '%s' kept float32: its list reaches %s '%s'",
                             gn__node_op(g, id), gn__node_name(g, id), gn__node_op(g, b), gn__node_name(g, b));
        }
        if (!a->proc[id] || !is_tl_reader(gn__node_op(g, id))) continue;
        if ((s = list_walk(a, id, false, visit_writers)) != GN_OK) return s;
        if (a->n_ee == UINT32_MAX) return nomem(a);
    }
    return GN_OK;
}

/* All element dtypes of a cluster get one colour: float32 when one is denied,
 * else float16 when one is painted (ForceColorMatchBetweenTensorListOps). */
static void tl_color_match(amp *a)
{
    if (!a->n_cl) return;
    memset(a->cl_fl, 0, a->n_cl);
    for (gn_id id = 0; id < a->n; id++) {
        if (!a->cl || !a->cl[id]) continue;
        uint8_t f = a->v[a->elem_v[id]].flags;
        a->cl_fl[a->cl[id] - 1] |= (uint8_t)((f & V_DENY) ? 2 : (f & V_ALLOW) ? 1 : 0);
    }
    for (gn_id id = 0; id < a->n; id++) {
        if (!a->cl[id]) continue;
        vtx *v = &a->v[a->elem_v[id]];
        uint8_t f = a->cl_fl[a->cl[id] - 1];
        if (f & 2) {
            v->flags &= (uint8_t)~V_ALLOW;
            v->flags |= V_DENY;
        } else if (f & 1)
            v->flags |= V_ALLOW;
    }
}

static gn_status build_vertices(amp *a)
{
    gn_graph *g = a->g;
    uint32_t n = a->n;
    /* slot arrays sized from the nodes' input counts and known output counts */
    size_t ni = 0, no = 0;
    a->in_off = malloc((size_t)(n + 1) * sizeof *a->in_off);
    a->out_off = malloc((size_t)(n + 1) * sizeof *a->out_off);
    if (!a->in_off || !a->out_off) return nomem(a);
    for (gn_id id = 0; id < n; id++) {
        a->in_off[id] = (uint32_t)ni;
        a->out_off[id] = (uint32_t)no;
        if (!gn__node_live(g, id)) continue;
        ni += gn__node_at(g, id)->n_in;
        int32_t k = gn__node_num_outputs(g, id);
        if (k > 0) no += (size_t)k;
    }
    a->in_off[n] = (uint32_t)ni;
    a->out_off[n] = (uint32_t)no;
    a->islot = malloc((ni + 1) * sizeof *a->islot);
    a->oslot = malloc((no + 1) * sizeof *a->oslot);
    if (!a->islot || !a->oslot) return nomem(a);
    for (size_t i = 0; i < ni; i++) a->islot[i] = -1;
    for (size_t i = 0; i < no; i++) a->oslot[i] = -1;
    a->vbeg = calloc((size_t)n + 1, sizeof *a->vbeg);
    a->vend = calloc((size_t)n + 1, sizeof *a->vend);
    a->elem_v = malloc(((size_t)n + 1) * sizeof *a->elem_v);
    if (!a->vbeg || !a->vend || !a->elem_v) return nomem(a);
    for (gn_id id = 0; id <= n; id++) a->elem_v[id] = -1;
    gn__err e = {0};
    for (gn_id id = 0; id < n; id++) {
        if (!gn__node_live(g, id)) continue;
        const gn__node *nd = gn__node_at(g, id);
        a->vbeg[id] = a->vend[id] = a->nv;
        if (nd->opdef < 0) continue; /* function calls and unknown ops: no type vertices */
        const gn__opdef *op = gn__op_at((uint32_t)nd->opdef);
        uint32_t first = a->nv;
        for (uint32_t arg = 0; arg < op->n_inputs; arg++) {
            const gn__argdef *ad = &op->inputs[arg];
            if (!ad->type_attr || ad->type_list_attr) continue;
            uint32_t start, count;
            if (gn__op_input_range(op, g, id, arg, &start, &count, &e) != GN_OK) continue;
            int32_t v = vertex_for(a, id, first, ad->type_attr);
            if (v == -2) return nomem(a);
            for (uint32_t s = start; s < start + count && s < nd->n_in; s++) a->islot[a->in_off[id] + s] = v;
        }
        uint32_t nout = a->out_off[id + 1] - a->out_off[id];
        for (uint32_t arg = 0; arg < op->n_outputs; arg++) {
            const gn__argdef *ad = &op->outputs[arg];
            if (!ad->type_attr || ad->type_list_attr) continue;
            uint32_t start, count;
            if (gn__op_output_range(op, g, id, arg, &start, &count, &e) != GN_OK) continue;
            int32_t v = vertex_for(a, id, first, ad->type_attr);
            if (v == -2) return nomem(a);
            for (uint32_t s = start; s < start + count && s < nout; s++) a->oslot[a->out_off[id] + s] = v;
        }
        int edt;
        if (is_tensor_list_op(gn__node_op(g, id)) && gn__attr_get_type(g, id, "element_dtype", &edt)) {
            /* TensorListReserve's element_dtype governs no argument: a vertex of its own */
            int32_t v = vertex_for(a, id, first, "element_dtype");
            if (v == -2) return nomem(a);
            a->elem_v[id] = v;
        }
        a->vend[id] = a->nv;
    }
    gn_status ts = find_tensor_lists(a);
    if (ts != GN_OK) return ts;
    /* edges: CSR both ways */
    uint32_t nv = a->nv;
    a->fo_off = calloc((size_t)nv + 1, sizeof *a->fo_off);
    a->fi_off = calloc((size_t)nv + 1, sizeof *a->fi_off);
    a->stamp = calloc((size_t)nv + 1, sizeof *a->stamp);
    if (!a->fo_off || !a->fi_off || !a->stamp) return nomem(a);
    size_t ne = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (gn_id id = 0; id < n; id++) {
            if (!gn__node_live(g, id)) continue;
            const gn__node *nd = gn__node_at(g, id);
            for (uint32_t s = 0; s < nd->n_in; s++) {
                int32_t dv = a->islot[a->in_off[id] + s];
                if (dv < 0) continue;
                gn__edge src = nd->in[s];
                if (a->out_off[src.node] + src.index >= a->out_off[src.node + 1]) continue;
                int32_t sv = a->oslot[a->out_off[src.node] + src.index];
                if (sv < 0) continue;
                if (pass == 0) {
                    a->fo_off[sv + 1]++;
                    a->fi_off[dv + 1]++;
                    ne++;
                } else {
                    a->fo[a->fo_off[sv]++] = (uint32_t)dv;
                    a->fi[a->fi_off[dv]++] = (uint32_t)sv;
                }
            }
        }
        for (uint32_t k = 0; k < a->n_ee; k++) {
            uint32_t sv = a->ee[2 * k], dv = a->ee[2 * k + 1];
            if (pass == 0) {
                a->fo_off[sv + 1]++;
                a->fi_off[dv + 1]++;
                ne++;
            } else {
                a->fo[a->fo_off[sv]++] = dv;
                a->fi[a->fi_off[dv]++] = sv;
            }
        }
        if (pass == 0) {
            for (uint32_t i = 0; i < nv; i++) {
                a->fo_off[i + 1] += a->fo_off[i];
                a->fi_off[i + 1] += a->fi_off[i];
            }
            a->fo = malloc((ne + 1) * sizeof *a->fo);
            a->fi = malloc((ne + 1) * sizeof *a->fi);
            if (!a->fo || !a->fi) return nomem(a);
        } else {
            /* offsets were advanced to the ends: shift back */
            for (uint32_t i = nv; i > 0; i--) {
                a->fo_off[i] = a->fo_off[i - 1];
                a->fi_off[i] = a->fi_off[i - 1];
            }
            a->fo_off[0] = a->fi_off[0] = 0;
        }
    }
    return GN_OK;
}

/* ---- traversal (TensorFlow's DfsTypeTraversal; set semantics only) ----------------------------- */
enum { FOLLOW_IN = 1, FOLLOW_OUT = 2 };
typedef bool (*enter_fn)(amp *a, uint32_t v, uint32_t root);
typedef void (*visit_fn)(amp *a, uint32_t v);

static bool push(amp *a, uint32_t v)
{
    if (a->n_stack == a->cap_stack) {
        uint32_t nc = a->cap_stack ? a->cap_stack * 2 : 256;
        uint32_t *s = realloc(a->stack, (size_t)nc * sizeof *s);
        if (!s) return false;
        a->stack = s;
        a->cap_stack = nc;
    }
    a->stack[a->n_stack++] = v;
    return true;
}

static gn_status dfs(amp *a, uint32_t root, int dir, enter_fn enter, visit_fn visit)
{
    a->gen++;
    a->n_stack = 0;
    if (!push(a, root)) return nomem(a);
    while (a->n_stack) {
        uint32_t v = a->stack[--a->n_stack];
        if (a->stamp[v] == a->gen) continue;
        a->stamp[v] = a->gen;
        if (v != root && !enter(a, v, root)) continue;
        visit(a, v);
        if (dir & FOLLOW_IN)
            for (uint32_t i = a->fi_off[v]; i < a->fi_off[v + 1]; i++)
                if (a->stamp[a->fi[i]] != a->gen && !push(a, a->fi[i])) return nomem(a);
        if (dir & FOLLOW_OUT)
            for (uint32_t i = a->fo_off[v]; i < a->fo_off[v + 1]; i++)
                if (a->stamp[a->fo[i]] != a->gen && !push(a, a->fo[i])) return nomem(a);
    }
    return GN_OK;
}

static int vlist(const amp *a, uint32_t v) { return a->list[a->v[v].node]; }
static bool vproc(const amp *a, uint32_t v) { return a->proc[a->v[v].node]; }

/* Identity of a Variable/VariableV2, or an Enter of such (NodeImplicitlyReadsNonResourceVariable). */
static bool reads_ref_variable(const amp *a, gn_id id)
{
    for (uint32_t guard = 0; guard < 1u << 20; guard++) {
        const char *op = gn__node_op(a->g, id);
        bool ident = strcmp(op, "Identity") == 0, enter = strcmp(op, "Enter") == 0;
        if ((!ident && !enter) || gn__node_at(a->g, id)->n_in == 0) return false;
        gn_id in = gn__node_at(a->g, id)->in[0].node;
        const char *iop = gn__node_op(a->g, in);
        if (ident) return strcmp(iop, "Variable") == 0 || strcmp(iop, "VariableV2") == 0;
        id = in;
    }
    return false;
}

static bool enter_up_deny_infer(amp *a, uint32_t v, uint32_t root)
{
    (void)root;
    return !(a->v[v].flags & V_UP) && vlist(a, v) == GN__AMP_CLEAR;
}
static void visit_up(amp *a, uint32_t v) { a->v[v].flags |= V_UP; }

static bool enter_deny(amp *a, uint32_t v, uint32_t root)
{
    (void)root;
    return !(a->v[v].flags & V_DENY) && (a->v[v].flags & V_UP);
}
static void visit_deny(amp *a, uint32_t v) { a->v[v].flags |= V_DENY; }

static bool enter_down_allow(amp *a, uint32_t v, uint32_t root)
{
    (void)root;
    int l = vlist(a, v);
    return !(a->v[v].flags & (V_DOWN | V_DENY)) && l != GN__AMP_ALLOW && vproc(a, v) && a->v[v].dtype == DT_FLOAT &&
           (l == GN__AMP_CLEAR || l == GN__AMP_INFER) && supports_f16(a, &a->v[v]);
}
static void visit_down(amp *a, uint32_t v) { a->v[v].flags |= V_DOWN; }

static bool enter_up_allow(amp *a, uint32_t v, uint32_t root)
{
    (void)root;
    return !(a->v[v].flags & V_UPA) && (a->v[v].flags & V_DOWN);
}
static void visit_upa(amp *a, uint32_t v) { a->v[v].flags |= V_UPA | V_ALLOW; }

static bool enter_clear(amp *a, uint32_t v, uint32_t root)
{
    (void)root;
    return !(a->v[v].flags & (V_ALLOW | V_DENY)) && vproc(a, v) && a->v[v].dtype == DT_FLOAT &&
           vlist(a, v) == GN__AMP_CLEAR && supports_f16(a, &a->v[v]) && !reads_ref_variable(a, a->v[v].node);
}
static void visit_clear(amp *a, uint32_t v) { a->v[v].flags |= V_CLEARP | V_ALLOW; }

static gn_status paint(amp *a)
{
    gn_status s;
    uint32_t nv = a->nv;
    /* pass 2: deny forward through clear/infer nodes upstream of deny/infer ones */
    for (uint32_t r = 0; r < nv; r++) {
        int l = vlist(a, r);
        if (l != GN__AMP_DENY && l != GN__AMP_INFER) continue;
        if ((s = dfs(a, r, FOLLOW_IN, enter_up_deny_infer, visit_up)) != GN_OK) return s;
    }
    for (uint32_t r = 0; r < nv; r++) {
        if ((a->v[r].flags & V_DENY) || vlist(a, r) != GN__AMP_DENY) continue;
        a->v[r].flags |= V_DENYROOT;
        if ((s = dfs(a, r, FOLLOW_OUT, enter_deny, visit_deny)) != GN_OK) return s;
    }
    tl_color_match(a);
    /* pass 3: clear/infer between allow nodes */
    for (uint32_t r = 0; r < nv; r++) {
        if (!vproc(a, r) || vlist(a, r) != GN__AMP_ALLOW) continue;
        if ((s = dfs(a, r, FOLLOW_OUT, enter_down_allow, visit_down)) != GN_OK) return s;
    }
    for (uint32_t r = 0; r < nv; r++) {
        if (!vproc(a, r) || (a->v[r].flags & V_UPA) || vlist(a, r) != GN__AMP_ALLOW) continue;
        if ((s = dfs(a, r, FOLLOW_IN, enter_up_allow, visit_upa)) != GN_OK) return s;
    }
    /* pass 4: infer nodes fed directly by an allow node (and by no deny one),
       in topological order, so that a chain of infer ops after an allow op
       (MatMul -> BiasAdd -> Tanh) is painted whole; clear nodes are painted
       only after this, so an infer op behind a clear one is not taken */
    for (uint32_t k = 0; k < a->n_topo; k++) {
        gn_id id = a->topo[k];
        if (id >= a->n || !a->proc[id] || a->list[id] != GN__AMP_INFER) continue;
        for (uint32_t r = a->vbeg[id]; r < a->vend[id]; r++) {
            if ((a->v[r].flags & (V_ALLOW | V_DENY)) || a->v[r].dtype != DT_FLOAT || !supports_f16(a, &a->v[r])) continue;
            bool allow_in = false;
            for (uint32_t i = a->fi_off[r]; i < a->fi_off[r + 1]; i++) {
                uint8_t fl = a->v[a->fi[i]].flags;
                if (fl & V_DENY) {
                    allow_in = false;
                    break;
                }
                if (fl & V_ALLOW) allow_in = true;
            }
            if (allow_in) a->v[r].flags |= V_ALLOW | V_FOLLOW;
        }
    }
    /* pass 5: allow through clear nodes */
    for (uint32_t r = 0; r < nv; r++) {
        if (!vproc(a, r) || (a->v[r].flags & V_CLEARP) || !(a->v[r].flags & V_ALLOW)) continue;
        if ((s = dfs(a, r, FOLLOW_IN | FOLLOW_OUT, enter_clear, visit_clear)) != GN_OK) return s;
    }
    /* pass 6: allow-list attrs that do not accept half */
    for (uint32_t r = 0; r < nv; r++)
        if (vlist(a, r) == GN__AMP_ALLOW && (a->v[r].flags & V_ALLOW) && !supports_f16(a, &a->v[r]))
            a->v[r].flags &= (uint8_t)~V_ALLOW;
    tl_color_match(a);
    return GN_OK;
}

/* The vertex of attr `attr` of node id, -1 when none. */
static int32_t find_vertex(const amp *a, gn_id id, const char *attr)
{
    for (uint32_t k = a->out_off[id]; k < a->out_off[id + 1]; k++) {
        int32_t v = a->oslot[k];
        if (v >= 0 && strcmp(a->v[v].attr, attr) == 0) return v;
    }
    for (uint32_t k = a->in_off[id]; k < a->in_off[id + 1]; k++) {
        int32_t v = a->islot[k];
        if (v >= 0 && strcmp(a->v[v].attr, attr) == 0) return v;
    }
    return -1;
}

/* NextIteration -> Merge: all allow or none (ForceColorMatchOnRecurrentEdges). */
static void recurrent_edges(amp *a)
{
    gn_graph *g = a->g;
    for (gn_id id = 0; id < a->n; id++) {
        if (!gn__node_live(g, id) || strcmp(gn__node_op(g, id), "NextIteration") != 0) continue;
        int32_t nv = find_vertex(a, id, "T");
        if (nv < 0) continue;
        const gn__node *nd = gn__node_at(g, id);
        bool any_not = false;
        for (uint32_t u = 0; u < nd->n_use; u++) {
            int32_t mv = find_vertex(a, nd->use[u].node, "T");
            if (mv < 0 || !(a->v[mv].flags & V_ALLOW)) any_not = true;
        }
        if (any_not) {
            for (uint32_t u = 0; u < nd->n_use; u++) {
                int32_t mv = find_vertex(a, nd->use[u].node, "T");
                if (mv >= 0) a->v[mv].flags &= (uint8_t)~V_ALLOW;
            }
            a->v[nv].flags &= (uint8_t)~V_ALLOW;
        } else
            a->v[nv].flags |= V_ALLOW;
    }
}

/* An existing Cast to float32 whose consumers are all allow becomes a Cast to half. */
static void casts_to_allow(amp *a)
{
    gn_graph *g = a->g;
    for (gn_id id = 0; id < a->n; id++) {
        if (!gn__node_live(g, id) || !a->proc[id] || strcmp(gn__node_op(g, id), "Cast") != 0) continue;
        int32_t dv = find_vertex(a, id, "DstT");
        if (dv < 0 || a->v[dv].dtype != DT_FLOAT) continue;
        const gn__node *nd = gn__node_at(g, id);
        bool all = nd->n_use > 0;
        for (uint32_t u = 0; u < nd->n_use && all; u++) {
            gn__use use = nd->use[u];
            int32_t cv = a->islot[a->in_off[use.node] + use.slot];
            if (cv < 0 || !(a->v[cv].flags & V_ALLOW)) all = false;
        }
        if (all) a->v[dv].flags |= V_ALLOW;
    }
}

/* ---- rewriting -------------------------------------------------------------------------------- */
static gn_status set_type(amp *a, gn_id id, const char *attr, int32_t dt)
{
    return from_graph(a, gn__node_set_attr_type(a->g, id, attr, dt));
}

/* "<node>-<port>-CastToFp16-AutoMixedPrecision", made unique with "_k" when taken. */
static void cast_name(const gn_graph *g, gn_id src, uint32_t port, bool to_f16, char *buf, size_t len)
{
    int w = snprintf(buf, len, "%s-%u-%s-AutoMixedPrecision", gn__node_name(g, src), port,
                     to_f16 ? "CastToFp16" : "CastToFp32");
    if (w < 0 || (size_t)w >= len) buf[len - 1] = 0;
    if (gn__graph_find(g, buf) == GN_NONE) return;
    size_t base = strlen(buf);
    for (uint32_t k = 1;; k++) {
        snprintf(buf + base, len - base, "_%u", k);
        if (gn__graph_find(g, buf) == GN_NONE) return;
    }
}

/* A DT_HALF copy of float Const `src` (its value converted) named name. */
static gn_status half_const(amp *a, gn_id src, const char *name, gn_id *out)
{
    gn_graph *g = a->g;
    const Tensorflow__AttrValue *val = gn__node_attr(g, src, "value");
    if (!val || val->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !val->tensor) return GN_ERR_UNSUPPORTED;
    gn__tensor t = {0}, h = {0};
    gn__err e = {0};
    if (gn__tensor_from_proto(val->tensor, &t, &e) != GN_OK || t.dtype != DT_FLOAT) {
        gn__tensor_release(&t);
        return GN_ERR_UNSUPPORTED;
    }
    int64_t n = gn__tensor_numel(&t);
    h.dtype = DT_HALF;
    h.rank = t.rank;
    memcpy(h.dims, t.dims, sizeof h.dims);
    h.buf = gn__buffer_new((size_t)n * sizeof(gn__f16) + 1);
    if (!h.buf) {
        gn__tensor_release(&t);
        return nomem(a);
    }
    h.data = h.buf->data;
    h.nbytes = (size_t)n * sizeof(gn__f16);
    /* bit conversion (round to nearest even), not the compiler's library call */
    for (int64_t i = 0; i < n; i++) ((uint16_t *)h.data)[i] = gn__km_f2h(((const float *)t.data)[i]);
    Tensorflow__TensorProto *tp = NULL;
    gn_status s = gn__tensor_to_proto(&h, gn__graph_value_allocator(g), &tp, &e);
    gn__tensor_release(&t);
    gn__tensor_release(&h);
    if (s != GN_OK) return gn__fail(a->c->err, s, "auto_mixed_precision: %s", e.msg);
    gn_id id;
    if ((s = gn__node_add(g, name, "Const", &id)) != GN_OK) return from_graph(a, s);
    gn__node_set_device(g, id, gn__str(g, gn__node_at(g, src)->device));
    if ((s = gn__node_set_attr_tensor(g, id, "value", tp)) != GN_OK) return from_graph(a, s);
    if ((s = set_type(a, id, "dtype", DT_HALF)) != GN_OK) return s;
    *out = id;
    return GN_OK;
}

static gn_status add_cast(amp *a, gn_id src, uint32_t port, bool to_f16, const char *name, gn_id *out)
{
    gn_graph *g = a->g;
    gn_id id;
    gn_status s = gn__node_add(g, name, "Cast", &id);
    if (s != GN_OK) return from_graph(a, s);
    gn__node_set_device(g, id, gn__str(g, gn__node_at(g, src)->device));
    if ((s = gn__node_add_input(g, id, (gn__edge){src, port})) != GN_OK) return from_graph(a, s);
    if ((s = set_type(a, id, "SrcT", to_f16 ? DT_FLOAT : DT_HALF)) != GN_OK) return s;
    if ((s = set_type(a, id, "DstT", to_f16 ? DT_HALF : DT_FLOAT)) != GN_OK) return s;
    if ((s = gn__node_set_attr_bool(g, id, "Truncate", false)) != GN_OK) return from_graph(a, s);
    *out = id;
    return GN_OK;
}

static bool is_allow_slot(const amp *a, gn_id id, uint32_t slot)
{
    int32_t v = a->islot[a->in_off[id] + slot];
    return v >= 0 && (a->v[v].flags & V_ALLOW) && a->v[v].dtype == DT_FLOAT;
}

/* Output port dtype before the pass: the vertex's, or what the op says. */
static int32_t port_dtype(const amp *a, gn_id id, uint32_t port)
{
    int32_t v = a->oslot[a->out_off[id] + port];
    if (v >= 0) return a->v[v].dtype;
    const gn__opdef *op = gn__node_opdef(a->g, id);
    return op ? gn__op_output_dtype(op, a->g, id, port) : 0;
}

static gn_status insert_casts(amp *a, uint32_t *n_casts16, uint32_t *n_cast_nodes, uint32_t *n_consts)
{
    gn_graph *g = a->g;
    char name[1024];
    gn__use *uses = NULL;
    uint32_t cap = 0;
    gn_status s = GN_OK;
    for (gn_id id = 0; id < a->n && s == GN_OK; id++) {
        if (!gn__node_live(g, id)) continue;
        uint32_t nout = a->out_off[id + 1] - a->out_off[id];
        for (uint32_t port = 0; port < nout && s == GN_OK; port++) {
            if (port_dtype(a, id, port) != DT_FLOAT) continue;
            int32_t sv = a->oslot[a->out_off[id] + port];
            bool src_allow = sv >= 0 && (a->v[sv].flags & V_ALLOW);
            /* the consumers of this port that need a cast (copied: rewiring edits the fanouts) */
            const gn__node *nd = gn__node_at(g, id);
            uint32_t k = 0;
            if (cap < nd->n_use) {
                gn__use *nu = realloc(uses, (size_t)nd->n_use * sizeof *nu);
                if (!nu) {
                    s = nomem(a);
                    break;
                }
                uses = nu;
                cap = nd->n_use;
            }
            for (uint32_t u = 0; u < nd->n_use; u++) {
                gn__use use = nd->use[u];
                if (gn__node_at(g, use.node)->in[use.slot].index != port) continue;
                if (is_allow_slot(a, use.node, use.slot) != src_allow) uses[k++] = use;
            }
            if (!k) continue;
            bool to_f16 = !src_allow;
            int srct;
            if (to_f16 && strcmp(gn__node_op(g, id), "Cast") == 0 && nd->n_in == 1 &&
                gn__attr_get_type(g, id, "SrcT", &srct) && srct == DT_HALF) {
                /* Cast(half -> float) then CastToFp16: an exact round trip; read the half tensor */
                gn__edge half_in = nd->in[0];
                for (uint32_t u = 0; u < k && s == GN_OK; u++)
                    s = from_graph(a, gn__node_set_input(g, uses[u].node, uses[u].slot, half_in));
                if (s == GN_OK)
                    gn__pass_rewrote(a->c, "amp.cast", g, id,
                                     "%u consumer(s) of Cast '%s' read its float16 input '%s' instead of a cast back",
                                     k, gn__node_name(g, id), gn__node_name(g, half_in.node));
                continue;
            }
            cast_name(g, id, port, to_f16, name, sizeof name);
            gn_id cast = GN_NONE;
            const gn__node *sn = gn__node_at(g, id);
            if (to_f16 && strcmp(gn__node_op(g, id), "Const") == 0 && sn->n_ctrl == 0 &&
                gn__pattern_enabled(a->c, "amp.const")) {
                gn_status hs = half_const(a, id, name, &cast);
                if (hs == GN_OK) {
                    (*n_consts)++;
                    gn__pass_rewrote(a->c, "amp.const", g, cast, "float32 Const '%s' converted to float16 as '%s'",
                                     gn__node_name(g, id), name);
                } else if (hs != GN_ERR_UNSUPPORTED) {
                    s = hs;
                    break;
                } else
                    cast = GN_NONE;
            }
            if (cast == GN_NONE) {
                if ((s = add_cast(a, id, port, to_f16, name, &cast)) != GN_OK) break;
                (*n_cast_nodes)++;
                const char *op = gn__node_op(g, id);
                if (to_f16 && strcmp(op, "Const") != 0 && strcmp(op, "VariableV2") != 0 && strcmp(op, "Variable") != 0 &&
                    !reads_ref_variable(a, id))
                    (*n_casts16)++;
            }
            for (uint32_t u = 0; u < k && s == GN_OK; u++)
                s = from_graph(a, gn__node_set_input(g, uses[u].node, uses[u].slot, (gn__edge){cast, 0}));
            /* a Const converted for all its consumers goes (constant folding would drop it too) */
            sn = gn__node_at(g, id);
            if (s == GN_OK && strcmp(gn__node_op(g, cast), "Const") == 0 && sn->n_use == 0 && sn->n_cuse == 0 &&
                !(sn->flags & GN__NODE_PRESERVE))
                s = from_graph(a, gn__node_remove(g, id));
        }
    }
    free(uses);
    return s;
}

/* ---- the pass -------------------------------------------------------------------------------- */
static void amp_free(amp *a)
{
    free(a->list);
    free(a->proc);
    free(a->op_list);
    free(a->in_off);
    free(a->out_off);
    free(a->islot);
    free(a->oslot);
    free(a->v);
    free(a->fo_off);
    free(a->fi_off);
    free(a->fo);
    free(a->fi);
    free(a->vbeg);
    free(a->vend);
    free(a->topo);
    free(a->stamp);
    free(a->stack);
    free(a->elem_v);
    free(a->cl);
    free(a->cl_bound);
    free(a->cl_fl);
    free(a->pin);
    free(a->pout);
    free(a->nstamp);
    free(a->ps);
    free(a->ee);
}

static gn_status convert_batch_norm(amp *a)
{
    gn_graph *g = a->g;
    for (gn_id id = 0; id < a->n; id++) {
        if (!gn__node_live(g, id) || !a->proc[id]) continue;
        const char *op = gn__node_op(g, id);
        const char *to = strcmp(op, "FusedBatchNorm") == 0       ? "FusedBatchNormV2"
                         : strcmp(op, "FusedBatchNormGrad") == 0 ? "FusedBatchNormGradV2"
                                                                 : NULL;
        if (!to) continue;
        gn_status s = from_graph(a, gn__node_set_op(g, id, to));
        if (s == GN_OK) s = set_type(a, id, "U", DT_FLOAT);
        if (s != GN_OK) return s;
        a->c->changed = true;
    }
    return GN_OK;
}

static void report_nodes(amp *a)
{
    gn_graph *g = a->g;
    for (gn_id id = 0; id < a->n; id++) {
        if (!gn__node_live(g, id) || !a->proc[id]) continue;
        int l = a->list[id];
        bool painted = false, f32 = false, denied = false;
        for (uint32_t v = a->vbeg[id]; v < a->vend[id]; v++) {
            if (a->v[v].dtype != DT_FLOAT) continue;
            f32 = true;
            if (a->v[v].flags & V_ALLOW) painted = true;
            if (a->v[v].flags & V_DENY) denied = true;
        }
        const char *op = gn__node_op(g, id);
        if (painted && a->cl && a->cl[id]) {
            gn__pass_rewrote(a->c, "amp.tensor_list", g, id, "%s '%s' runs in float16 (its list's cluster)", op,
                             gn__node_name(g, id));
            continue;
        }
        if (painted) {
            const char *pat = l == GN__AMP_ALLOW ? "amp.allow" : l == GN__AMP_INFER ? "amp.infer" : "amp.clear";
            if (strcmp(op, "NextIteration") == 0 || strcmp(op, "Cast") == 0) pat = "amp.clear";
            bool follow = false;
            for (uint32_t r = a->vbeg[id]; r < a->vend[id]; r++) follow = follow || (a->v[r].flags & V_FOLLOW);
            gn__pass_rewrote(a->c, pat, g, id, "%s '%s' runs in float16 (%s list%s)", op, gn__node_name(g, id),
                             l == GN__AMP_NONE ? "matching its neighbours, not on a" : list_name(l),
                             follow ? ", fed by a float16 op" : "");
            continue;
        }
        if (!f32) continue;
        if (a->cl && a->cl[id] && a->cl_bound[a->cl[id] - 1] != GN_NONE) continue; /* reported as amp.tensor_list */
        if (l == GN__AMP_DENY)
            gn__pass_refused(a->c, "amp.deny", g, id, "%s '%s' kept float32: deny list", op, gn__node_name(g, id));
        else if (denied)
            gn__pass_refused(a->c, "amp.deny", g, id, "%s '%s' kept float32: fed by a deny-list op through %s-list ops",
                             op, gn__node_name(g, id), list_name(l));
        else if (l == GN__AMP_ALLOW)
            gn__pass_refused(a->c, "amp.allow", g, id, "%s '%s' kept float32: its type attr does not accept half", op,
                             gn__node_name(g, id));
        else if (l == GN__AMP_INFER)
            gn__pass_refused(a->c, "amp.infer", g, id, "%s '%s' kept float32: not between float16 ops", op,
                             gn__node_name(g, id));
        else if (l == GN__AMP_CLEAR)
            gn__pass_refused(a->c, "amp.clear", g, id, "%s '%s' kept float32: no float16 neighbour", op,
                             gn__node_name(g, id));
    }
}

gn_status gn__pass_amp(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, "amp.allow")) return GN_OK;
    if (c->target->kind != GN_TARGET_GPU) {
        if (!c->fn_name)
            gn__pass_refused(c, "amp.target", g, GN_NONE, "no GPU in the target (cpu): float16 is only used on GPUs");
        return GN_OK;
    }
    if (c->target->compute_capability < 70) {
        if (!c->fn_name)
            gn__pass_refused(c, "amp.target", g, GN_NONE,
                             "GPU compute capability %d.%d is below 7.0: no fast float16 (Tensor Cores)",
                             c->target->compute_capability / 10, c->target->compute_capability % 10);
        return GN_OK;
    }
    char op[256];
    int l1, l2;
    if (list_conflict(c->opts, op, sizeof op, &l1, &l2)) {
        gn__pass_refused(c, "amp.target", g, GN_NONE, "op '%s' is added to both the %s and the %s list", op,
                         list_name(l1), list_name(l2));
        return GN_OK;
    }
    amp a = {0};
    a.c = c;
    a.g = g;
    a.n = g->n_nodes;
    a.n_ops = g->names.n;
    gn_status s = GN_OK;
    a.list = calloc((size_t)a.n + 1, 1);
    a.proc = calloc((size_t)a.n + 1, 1);
    a.op_list = calloc((size_t)a.n_ops + 1, 1);
    if (!a.list || !a.proc || !a.op_list) {
        s = nomem(&a);
        goto done;
    }
    const char *keep = c->opts->amp_keep_float32;
    for (gn_id id = 0; id < a.n; id++) {
        if (!gn__node_live(g, id)) continue;
        const gn__node *nd = gn__node_at(g, id);
        if ((nd->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) || !gn__pass_on_gpu(c, g, id))
            continue;
        if (keep[0] && gn__list_has(keep, gn__node_name(g, id))) {
            gn__pass_refused(c, "amp.keep_float32", g, id, "'%s' kept float32: named in amp.keep_float32",
                             gn__node_name(g, id));
            continue;
        }
        a.proc[id] = 1;
    }
    for (gn_id id = 0; id < a.n; id++)
        if (gn__node_live(g, id)) a.list[id] = (uint8_t)effective_list(&a, id);
    if ((s = convert_batch_norm(&a)) != GN_OK) goto done;
    for (gn_id id = 0; id < a.n; id++) /* V2 forms are on the infer list */
        if (gn__node_live(g, id) && a.proc[id]) a.list[id] = (uint8_t)effective_list(&a, id);
    if ((s = build_vertices(&a)) != GN_OK) goto done;
    if ((s = from_graph(&a, gn__graph_topo(g, &a.topo, &a.n_topo))) != GN_OK) goto done;
    bool any = false;
    for (uint32_t v = 0; v < a.nv; v++)
        if (vproc(&a, v) && vlist(&a, v) == GN__AMP_ALLOW) {
            a.v[v].flags |= V_ALLOW;
            any = true;
        }
    if (!any) {
        if (!c->fn_name) gn__pass_refused(c, "amp.allow", g, GN_NONE, "no allow-list ops on the GPU: nothing to do");
        goto done;
    }
    if ((s = paint(&a)) != GN_OK) goto done;
    recurrent_edges(&a);
    casts_to_allow(&a);
    report_nodes(&a);
    /* change the attrs */
    uint32_t n_changed = 0, n_casts16 = 0, n_cast_nodes = 0, n_consts = 0, n_before = g->n_live;
    gn_id last = GN_NONE;
    for (uint32_t v = 0; v < a.nv; v++) {
        if (!(a.v[v].flags & V_ALLOW) || a.v[v].dtype != DT_FLOAT) continue;
        if ((s = set_type(&a, a.v[v].node, a.v[v].attr, DT_HALF)) != GN_OK) goto done;
        if (a.v[v].node != last) n_changed++; /* a node's vertices are consecutive */
        last = a.v[v].node;
    }
    if (!n_changed) goto done;
    c->changed = true;
    if ((s = insert_casts(&a, &n_casts16, &n_cast_nodes, &n_consts)) != GN_OK) goto done;
    gn__pass_rewrote(c, "amp.cast", g, GN_NONE,
                     "converted %u/%u nodes to float16 using %u cast(s) to float16 (excluding Const and "
                     "Variable casts); %u Cast node(s) in all, %u constant(s) converted",
                     n_changed, n_before, n_casts16, n_cast_nodes, n_consts);
done:
    amp_free(&a);
    return s;
}
