/* Constant folding: materialization from inferred shapes
 * (docs/reference_grappler.md §3.6.3) and folding by evaluation (§3.6.4, §3.6.5). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "graph/tensor.h"
#include "optimizer/passes/constfold_impl.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

static gn_status nomem(cf_state *s) { return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory"); }

static int32_t out_type(cf_state *s, gn_id id, uint32_t k)
{
    gn__tinfo o = gn__cf_out_info(s, id, k);
    if (o.dtype) return o.dtype;
    int dt = 0;
    if (gn__attr_get_type(s->g, id, "out_type", &dt)) return dt;
    return DT(INT32);
}

/* A rank-1 (vector) or rank-0 (scalar) int32/int64 tensor proto as TensorFlow's
 * AsProtoTensorContent writes it. */
static gn_status int_proto(cf_state *s, int32_t dt, bool vector, const int64_t *v, int64_t n,
                           Tensorflow__TensorProto **out)
{
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = vector ? 1 : 0;
    t.dims[0] = n;
    size_t esz = dt == DT(INT64) ? 8 : 4;
    void *buf = gn__arena_alloc(&s->arena, (size_t)(n ? n : 1) * esz, 8);
    if (!buf) return nomem(s);
    for (int64_t i = 0; i < n; i++) {
        if (dt == DT(INT64)) ((int64_t *)buf)[i] = v[i];
        else ((int32_t *)buf)[i] = (int32_t)v[i];
    }
    t.data = buf;
    t.nbytes = (size_t)n * esz;
    gn__err e;
    gn__err_clear(&e);
    gn_status st = gn__tensor_to_proto(&t, gn__graph_value_allocator(s->g), out, &e);
    if (st != GN_OK) return gn__fail(s->c->err, st, "%s", e.msg);
    return GN_OK;
}

static bool fits(int32_t dt, int64_t v) { return dt == DT(INT64) || v < INT32_MAX; }

/* ---- Shape / Size / Rank ------------------------------------------------------------ */
static gn_status mat_shape(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    const gn__node *n = gn__node_at(s->g, id);
    if (!s->en[CF_P_MAT_SHAPE] || n->n_in < 1) return GN_OK;
    gn__tinfo in = gn__cf_in_info(s, id, 0);
    int32_t dt = out_type(s, id, 0);
    if (dt != DT(INT32) && dt != DT(INT64)) return GN_OK;
    int64_t vals[GN__MAX_RANK];
    int64_t nv = 1;
    bool vector = false;
    if (k == K_RANK) {
        if (in.shape.rank < 0) return GN_OK;
        vals[0] = in.shape.rank;
    } else {
        if (!gn__shape_fully_defined(&in.shape)) return GN_OK;
        if (k == K_SHAPE) {
            /* current Grappler: a leading 0 is left to run time */
            if (in.shape.rank > 0 && in.shape.dims[0] == 0) return GN_OK;
            vector = true;
            nv = in.shape.rank;
            for (int32_t i = 0; i < in.shape.rank; i++) vals[i] = in.shape.dims[i];
        } else {
            int64_t ne = gn__shape_num_elements(&in.shape);
            if (ne < 0) return GN_OK;
            vals[0] = ne;
        }
    }
    for (int64_t i = 0; i < nv; i++)
        if (!fits(dt, vals[i])) {
            gn__cf_refused(s, CF_P_MAT_SHAPE, id, "value %lld does not fit int32", (long long)vals[i]);
            return GN_OK;
        }
    Tensorflow__TensorProto *p;
    GN_TRY(int_proto(s, dt, vector, vals, nv, &p));
    /* the data input becomes a control input: the constant runs only when the
     * original would have */
    GN_TRY(gn__cf_inputs_to_controls(s, id, 0));
    GN_TRY(gn__cf_make_const(s, id, dt, p, true));
    gn__cf_rewrote(s, CF_P_MAT_SHAPE, id, "%s of a known shape became a Const", k == K_RANK ? "Rank" : k == K_SIZE ? "Size" : "Shape");
    gn__cf_enqueue_consumers(s, id);
    *done = true;
    return GN_OK;
}

/* ---- ShapeN ------------------------------------------------------------------------------ */
static gn_status mat_shape_n(cf_state *s, gn_id id, bool *done)
{
    if (!s->en[CF_P_MAT_SHAPE_N]) return GN_OK;
    uint32_t nin = gn__node_at(s->g, id)->n_in;
    uint32_t made = 0;
    for (uint32_t port = 0; port < nin; port++) {
        const gn__node *n = gn__node_at(s->g, id);
        bool used = false;
        for (uint32_t u = 0; u < n->n_use && !used; u++)
            used = s->g->nodes[n->use[u].node].in[n->use[u].slot].index == port;
        if (!used) continue;
        gn__tinfo in = gn__cf_in_info(s, id, port);
        if (!gn__shape_fully_defined(&in.shape)) continue;
        int32_t dt = out_type(s, id, port);
        if (dt != DT(INT32) && dt != DT(INT64)) continue;
        bool ok = true;
        for (int32_t i = 0; i < in.shape.rank; i++) ok &= fits(dt, in.shape.dims[i]);
        if (!ok) continue;
        Tensorflow__TensorProto *p;
        GN_TRY(int_proto(s, dt, true, in.shape.dims, in.shape.rank, &p));
        char suffix[40];
        snprintf(suffix, sizeof suffix, "-matshapes-%u", port);
        gn_id c;
        GN_TRY(gn__cf_new_const(s, gn__node_name(s->g, id), suffix, gn__node_at(s->g, id)->device, dt, p, &c));
        gn_id a;
        GN_TRY(gn__cf_ctrl_anchor(s, (gn__edge){id, 0}, &a));
        GN_TRY(gn__node_add_control(s->g, c, a));
        GN_TRY(gn__cf_rewire_port(s, id, port, (gn__edge){c, 0}));
        made++;
    }
    if (made) {
        gn__cf_rewrote(s, CF_P_MAT_SHAPE_N, id, "%u output(s) of a known shape became Consts", made);
        *done = true;
    }
    return GN_OK;
}

/* ---- BroadcastGradientArgs ------------------------------------------------------------------ */
/* The shape a Shape node or a constant stands for; unknown dims stay -1. */
static bool extract_shape(cf_state *s, gn_id p, int64_t *dims, int32_t *rank)
{
    if (gn__cf_kind(s, p) == K_SHAPE) {
        const gn__node *n = gn__node_at(s->g, p);
        if (n->n_in < 1) return false;
        gn__tinfo t = gn__cf_in_info(s, p, 0);
        if (t.shape.rank < 0) return false;
        *rank = t.shape.rank;
        for (int32_t i = 0; i < t.shape.rank; i++) dims[i] = t.shape.dims[i] < 0 ? -1 : t.shape.dims[i];
        return true;
    }
    int64_t *v, nv;
    if (!gn__cf_const_ints(s, p, &v, &nv, GN__MAX_RANK)) return false;
    *rank = (int32_t)nv;
    if (nv) memcpy(dims, v, (size_t)nv * sizeof *v);
    return true;
}

static gn_status mat_bcast(cf_state *s, gn_id id, bool *done)
{
    const gn__node *n = gn__node_at(s->g, id);
    if (!s->en[CF_P_MAT_BCAST] || n->n_in < 2 || n->n_use == 0) return GN_OK;
    gn_id p0 = n->in[0].node, p1 = n->in[1].node;
    bool ok0 = gn__cf_kind(s, p0) == K_SHAPE || gn__cf_really_const(s, p0);
    bool ok1 = gn__cf_kind(s, p1) == K_SHAPE || gn__cf_really_const(s, p1);
    if (!ok0 || !ok1) return GN_OK;
    int64_t a[GN__MAX_RANK], b[GN__MAX_RANK];
    int32_t ra, rb;
    if (!extract_shape(s, p0, a, &ra) || !extract_shape(s, p1, b, &rb)) return GN_OK;
    int64_t min_id = 0;
    for (int32_t i = 0; i < ra; i++)
        if (a[i] < min_id) min_id = a[i];
    for (int32_t i = 0; i < rb; i++)
        if (b[i] < min_id) min_id = b[i];
    /* distinct unknown dims must not compare equal */
    for (int32_t i = 0; i < ra; i++)
        if (a[i] == -1) a[i] = --min_id;
    for (int32_t i = 0; i < rb; i++)
        if (b[i] == -1) b[i] = --min_id;
    /* Grappler compares the shapes front-aligned here (common_dims = min rank) */
    int32_t common = ra < rb ? ra : rb;
    for (int32_t i = 0; i < common; i++) {
        if (a[i] >= 0 && b[i] >= 0) continue;
        if (a[i] != b[i]) return GN_OK;
    }
    for (int32_t i = common; i < ra; i++)
        if (a[i] < 0) return GN_OK;
    for (int32_t i = common; i < rb; i++)
        if (b[i] < 0) return GN_OK;
    /* BCast: right-aligned; an input is reduced along every output dim where its
     * (1-padded) dim is 1 */
    int32_t R = ra > rb ? ra : rb;
    int64_t ra_idx[GN__MAX_RANK], rb_idx[GN__MAX_RANK];
    int64_t na = 0, nb = 0;
    for (int32_t i = 0; i < R; i++) {
        int64_t da = i < R - ra ? 1 : a[i - (R - ra)];
        int64_t db = i < R - rb ? 1 : b[i - (R - rb)];
        if (da != 1 && db != 1 && da != db) return GN_OK; /* invalid broadcast */
        if (da == 1) ra_idx[na++] = i;
        if (db == 1) rb_idx[nb++] = i;
    }
    int dt = 0;
    if (!gn__attr_get_type(s->g, id, "T", &dt)) return GN_OK;
    if (dt != DT(INT32) && dt != DT(INT64)) return GN_OK;
    gn_id cs[2];
    for (int j = 0; j < 2; j++) {
        Tensorflow__TensorProto *p;
        GN_TRY(int_proto(s, dt, true, j ? rb_idx : ra_idx, j ? nb : na, &p));
        char suffix[32];
        snprintf(suffix, sizeof suffix, "-bcastargs-%d", j);
        GN_TRY(gn__cf_new_const(s, gn__node_name(s->g, id), suffix, gn__node_at(s->g, id)->device, dt, p, &cs[j]));
        gn_id anc;
        GN_TRY(gn__cf_ctrl_anchor(s, (gn__edge){id, 0}, &anc));
        GN_TRY(gn__node_add_control(s->g, cs[j], anc));
    }
    for (int j = 0; j < 2; j++) GN_TRY(gn__cf_rewire_port(s, id, (uint32_t)j, (gn__edge){cs[j], 0}));
    gn__cf_rewrote(s, CF_P_MAT_BCAST, id, "reduction indices of known shapes became Consts");
    *done = true;
    return GN_OK;
}

/* ---- reduction indices ------------------------------------------------------------------------ */
static gn_status mat_reduction(cf_state *s, gn_id id, bool *done)
{
    const gn__node *n = gn__node_at(s->g, id);
    if (!s->en[CF_P_MAT_REDUCTION] || n->n_in < 2) return GN_OK;
    gn__edge idx = n->in[1];
    if (gn__cf_really_const(s, idx.node)) return GN_OK;
    gn__tinfo in = gn__cf_in_info(s, id, 0), ii = gn__cf_in_info(s, id, 1), out = gn__cf_out_info(s, id, 0);
    if (in.shape.rank < 1) return GN_OK;
    int32_t rank = in.shape.rank;
    int32_t dt = ii.dtype;
    if (!dt) {
        int t = 0;
        dt = gn__attr_get_type(s->g, id, "Tidx", &t) ? t : DT(INT32);
    }
    if (dt != DT(INT32) && dt != DT(INT64)) return GN_OK;
    int64_t nidx = gn__shape_num_elements(&ii.shape);
    bool full = out.shape.rank == 0 || nidx == rank;
    if (!full) {
        /* every consumer reshapes the result to one element */
        if (n->n_use == 0) return GN_OK;
        for (uint32_t u = 0; u < n->n_use; u++) {
            gn_id c = n->use[u].node;
            if (gn__cf_kind(s, c) != K_RESHAPE) return GN_OK;
            gn__tinfo r = gn__cf_out_info(s, c, 0);
            if (gn__shape_num_elements(&r.shape) != 1) return GN_OK;
        }
    }
    const char *nm = gn__node_name(s->g, id);
    size_t need = strlen(nm) + 64;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return nomem(s);
    snprintf(want, need, "ConstantFolding/%s-reduction_indices", nm);
    if (gn__graph_find(s->g, want) != GN_NONE) return GN_OK;
    int64_t vals[GN__MAX_RANK];
    for (int32_t i = 0; i < rank; i++) vals[i] = i;
    Tensorflow__TensorProto *p;
    GN_TRY(int_proto(s, dt, true, vals, rank, &p));
    gn_id c, a;
    GN_TRY(gn__cf_new_const(s, nm, "-reduction_indices", gn__node_at(s->g, id)->device, dt, p, &c));
    GN_TRY(gn__cf_ctrl_anchor(s, idx, &a));
    GN_TRY(gn__node_add_control(s->g, c, a));
    GN_TRY(gn__node_set_input(s->g, id, 1, (gn__edge){c, 0}));
    gn__cf_rewrote(s, CF_P_MAT_REDUCTION, id, "full reduction over a rank-%d input: constant indices", rank);
    gn__cf_enqueue(s, idx.node);
    gn__cf_enqueue(s, id); /* may now fold or simplify */
    *done = true;
    return GN_OK;
}

/* ---- Fill / ZerosLike / OnesLike ----------------------------------------------------------------- */
static gn_status mat_fill(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    if (!s->en[CF_P_MAT_FILL]) return GN_OK;
    gn__tinfo out = gn__cf_out_info(s, id, 0);
    if (!gn__shape_fully_defined(&out.shape)) return GN_OK;
    const gn__node *n = gn__node_at(s->g, id);
    if (k != K_FILL) {
        if (n->n_in < 1) return GN_OK;
        GN_TRY(gn__cf_to_constant(s, id, k == K_ONES_LIKE ? 1.0 : 0.0, &out.shape, done));
        if (*done) gn__cf_rewrote(s, CF_P_MAT_FILL, id, "%s of a known shape became a Const", k == K_ONES_LIKE ? "OnesLike" : "ZerosLike");
        return GN_OK;
    }
    if (n->n_in < 2 || !gn__cf_really_const(s, n->in[0].node) || !gn__cf_really_const(s, n->in[1].node)) return GN_OK;
    const Tensorflow__TensorProto *vp = gn__cf_const_value(s, n->in[1].node);
    if (!vp) return GN_OK;
    gn__tensor v;
    memset(&v, 0, sizeof v);
    gn__err e;
    if (gn__tensor_from_proto(vp, &v, &e) != GN_OK) return GN_OK;
    int32_t dt = out.dtype ? out.dtype : v.dtype;
    Tensorflow__TensorProto *p = NULL;
    gn_status st = dt == v.dtype ? gn__cf_encode_single(s, &v, &out.shape, &p) : GN_ERR_UNSUPPORTED;
    gn__tensor_release(&v);
    if (st == GN_ERR_UNSUPPORTED) return GN_OK; /* evaluation will fold it */
    GN_TRY(st);
    /* inputs become (plain) control inputs, T and index_type go, other attrs stay */
    GN_TRY(gn__cf_inputs_to_controls(s, id, 0));
    GN_TRY(gn__node_remove_attr(s->g, id, "T"));
    GN_TRY(gn__node_remove_attr(s->g, id, "index_type"));
    GN_TRY(gn__cf_make_const(s, id, dt, p, true));
    gn__cf_rewrote(s, CF_P_MAT_FILL, id, "Fill of a known shape became a compressed Const");
    gn__cf_enqueue_consumers(s, id);
    *done = true;
    return GN_OK;
}

gn_status gn__cf_materialize(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    *done = false;
    switch (k) {
    case K_SHAPE:
    case K_SIZE:
    case K_RANK: return mat_shape(s, id, k, done);
    case K_SHAPE_N: return mat_shape_n(s, id, done);
    case K_BCAST_GRAD_ARGS: return mat_bcast(s, id, done);
    case K_SUM:
    case K_PROD:
    case K_MIN:
    case K_MAX:
    case K_MEAN:
    case K_ANY:
    case K_ALL: return mat_reduction(s, id, done);
    case K_FILL:
    case K_ZEROS_LIKE:
    case K_ONES_LIKE: return mat_fill(s, id, k, done);
    default: return GN_OK;
    }
}

/* ---- foldability ------------------------------------------------------------------------------------ */
static bool op_has(const char *op, const char *part) { return strstr(op, part) != NULL; }

/* MaybeFoldable: NULL when the node may be folded, else why not. *silent: not
 * worth a report entry (structural exclusions met all over real graphs:
 * control flow, stateful ops, placeholders); *retry: may change later. */
static const char *maybe_foldable(cf_state *s, gn_id id, cf_kind k, bool *silent, bool *retry)
{
    const gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    const char *op = gn__node_op(g, id);
    *silent = true;
    *retry = false;
    if (k == K_CONST || k == K_HOST_CONST) return "constant";
    if (k == K_PLACEHOLDER || k == K_PLACEHOLDER_V2 || k == K_PLACEHOLDER_WITH_DEFAULT) return "placeholder";
    if (k == K_ENTER || k == K_REF_ENTER || k == K_EXIT || k == K_REF_EXIT || k == K_NEXT_ITERATION ||
        k == K_REF_NEXT_ITERATION)
        return "control flow that changes frames";
    if (k == K_LOOP_COND) return "LoopCond";
    if (k == K_FAKE_PARAM) return "FakeParam";
    if (k == K_ACCUMULATE_N) return "AccumulateNV2 has no kernel of its own";
    *silent = false;
    if (n->opdef < 0) return gn__node_opdef(g, id) ? "function call" : "op is not registered";
    const gn__opdef *od = gn__op_at((uint32_t)n->opdef);
    *silent = true;
    if (od->flags & GN__OPF_STATEFUL) return "stateful op";
    for (uint16_t i = 0; i < od->n_inputs; i++)
        if (od->inputs[i].is_ref) return "has reference inputs";
    if (op_has(op, "Queue") || strcmp(op, "_Send") == 0 || strcmp(op, "_HostSend") == 0 || op_has(op, "Inplace"))
        return "side effects";
    if ((od->traits & GN__T_FUNCTION_CALL) ||
        ((od->traits & GN__T_CONTROL_FLOW) && k != K_SWITCH && k != K_REF_SWITCH && k != K_MERGE &&
         k != K_REF_MERGE && strcmp(op, "_SwitchN") != 0))
        return "control flow or function call";
    int32_t nout = gn__node_num_outputs(g, id);
    if (nout < 1) return "no outputs";
    *silent = false;
    bool allow = (n->flags & GN__NODE_PRESERVE) && nout == 1;
    if ((n->flags & GN__NODE_PRESERVE) && !allow) return "preserved node with several outputs";
    if (op_has(op, "Save") || op_has(op, "Restore") || op_has(op, "Reader") || op_has(op, "Quantized") ||
        strncmp(op, "Sparse", 6) == 0)
        return "op excluded by name (Save/Restore/Reader/Quantized/Sparse*)";
    if (gn__cf_has_tpu_attr(g, id)) return "has _tpu_ attributes";
    for (uint16_t i = 0; i < od->n_outputs; i++)
        if (od->outputs[i].type == DT(VARIANT)) return "variant output";
    for (int32_t i = 0; i < nout; i++) {
        int32_t dt = gn__op_output_dtype(od, g, id, (uint32_t)i);
        if (dt == DT(VARIANT) || dt == DT(RESOURCE)) return "variant or resource output";
    }
    if (n->n_use == 0 && n->n_cuse == 0 && !allow) {
        *silent = true;
        *retry = true;
        return "no consumers";
    }
    return NULL;
}

static void refuse_once(cf_state *s, int pat, gn_id id, const char *why)
{
    if (s->fl[id] & CF_REPORTED) return;
    s->fl[id] |= CF_REPORTED;
    gn__cf_refused(s, pat, id, "%s", why);
}

/* ---- Merge ------------------------------------------------------------------------------------------- */
static gn_status fold_merge(cf_state *s, gn_id id, bool *done)
{
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    /* nothing reads its value or index any more (done before): nothing to do */
    if (n->n_use == 0) {
        s->fl[id] |= CF_NOFOLD;
        return GN_OK;
    }
    for (uint32_t i = 0; i < n->n_in; i++) {
        gn_id p = n->in[i].node;
        if (!gn__cf_really_const(s, p)) continue;
        const gn__node *pn = gn__node_at(g, p);
        if (pn->n_in || pn->n_ctrl) continue;
        const char *nm = gn__node_name(g, id);
        size_t need = strlen(nm) + 48;
        char *a = gn__arena_alloc(&s->arena, need, 1), *b = gn__arena_alloc(&s->arena, need, 1);
        if (!a || !b) return nomem(s);
        snprintf(a, need, "ConstantFolding/%s_const", nm);
        snprintf(b, need, "ConstantFolding/%s_index", nm);
        if (gn__graph_find(g, a) != GN_NONE || gn__graph_find(g, b) != GN_NONE) return GN_OK;
        uint32_t dev = gn__node_at(g, id)->device;
        gn_id cv, ci;
        GN_TRY(gn__node_add(g, a, gn__node_op(g, p), &cv));
        GN_TRY(gn__node_add(g, b, "Const", &ci));
        if (!gn__cf_reserve(s)) return nomem(s);
        s->fl[cv] |= CF_NEW;
        s->fl[ci] |= CF_NEW;
        gn__node_at(g, cv)->device = dev;
        gn__node_at(g, ci)->device = dev;
        pn = gn__node_at(g, p);
        for (uint32_t k = 0; k < pn->n_attr; k++) {
            GN_TRY(gn__node_set_attr(g, cv, gn__str(g, pn->attr[k].key), pn->attr[k].value));
            pn = gn__node_at(g, p);
        }
        int64_t iv = i;
        Tensorflow__TensorProto *ip;
        GN_TRY(int_proto(s, DT(INT32), false, &iv, 1, &ip));
        Tensorflow__AttrValue *ta = gn__cf_attr_type(s, DT(INT32)), *va = gn__cf_attr_tensor(s, ip);
        if (!ta || !va) return nomem(s);
        GN_TRY(gn__node_set_attr(g, ci, "dtype", ta));
        GN_TRY(gn__node_set_attr(g, ci, "value", va));
        GN_TRY(gn__node_add_control(g, cv, id));
        GN_TRY(gn__node_add_control(g, ci, id));
        GN_TRY(gn__cf_rewire_port(s, id, 0, (gn__edge){cv, 0}));
        GN_TRY(gn__cf_rewire_port(s, id, 1, (gn__edge){ci, 0}));
        s->fl[id] |= CF_NOFOLD;
        gn__cf_rewrote(s, CF_P_FOLD_MERGE, id, "input %u is a constant: value and index became Consts", i);
        *done = true;
        return GN_OK;
    }
    return GN_OK;
}

/* ---- evaluation ----------------------------------------------------------------------------------------- */
/* A Const proto from the value shape inference gave (small int tensors). */
static bool inferred_value(cf_state *s, gn_id id, int32_t *dt, Tensorflow__TensorProto **out)
{
    gn__tinfo o = gn__cf_out_info(s, id, 0);
    if (!o.value || (o.dtype != DT(INT32) && o.dtype != DT(INT64))) return false;
    if (!gn__shape_fully_defined(&o.shape) || o.shape.rank > 1) return false;
    const gn__partial_value *v = o.value;
    if (v->n != gn__shape_num_elements(&o.shape)) return false;
    for (int64_t i = 0; i < v->n; i++)
        if (!v->known[i] || !fits(o.dtype, v->v[i])) return false;
    if (int_proto(s, o.dtype, o.shape.rank == 1, v->v, v->n, out) != GN_OK) return false;
    *dt = o.dtype;
    return true;
}

static gn_status collect_controls(cf_state *s, gn_id id, gn_id **list, uint32_t *n_list)
{
    const gn__node *n = gn__node_at(s->g, id);
    uint32_t cap = n->n_ctrl;
    for (uint32_t i = 0; i < n->n_in; i++) cap += gn__node_at(s->g, n->in[i].node)->n_ctrl;
    gn_id *l = gn__arena_alloc(&s->arena, (cap ? cap : 1) * sizeof *l, _Alignof(gn_id));
    if (!l) return nomem(s);
    uint32_t m = 0;
    /* Grappler's order: the constant inputs' control inputs, then the node's own */
    for (uint32_t i = 0; i < n->n_in; i++) {
        const gn__node *p = gn__node_at(s->g, n->in[i].node);
        for (uint32_t k = 0; k < p->n_ctrl; k++) {
            bool dup = false;
            for (uint32_t j = 0; j < m && !dup; j++) dup = l[j] == p->ctrl[k];
            if (!dup) l[m++] = p->ctrl[k];
        }
    }
    for (uint32_t k = 0; k < n->n_ctrl; k++) {
        bool dup = false;
        for (uint32_t j = 0; j < m && !dup; j++) dup = l[j] == n->ctrl[k];
        if (!dup) l[m++] = n->ctrl[k];
    }
    *list = l;
    *n_list = m;
    return GN_OK;
}

/* In place: node id becomes Const(value) whose inputs are the control list. */
static gn_status const_in_place(cf_state *s, gn_id id, int32_t dt, Tensorflow__TensorProto *p)
{
    gn_id *ctl;
    uint32_t nc;
    GN_TRY(collect_controls(s, id, &ctl, &nc));
    gn_graph *g = s->g;
    while (gn__node_at(g, id)->n_in) GN_TRY(gn__node_remove_input(g, id, gn__node_at(g, id)->n_in - 1));
    while (gn__node_at(g, id)->n_ctrl) GN_TRY(gn__node_remove_control(g, id, gn__node_at(g, id)->ctrl[0]));
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_control(g, id, ctl[i]));
    return gn__cf_make_const(s, id, dt, p, false);
}

static void release_all(gn__tensor *t, uint32_t n)
{
    for (uint32_t i = 0; t && i < n; i++) gn__tensor_release(&t[i]);
}

/* Someone reads a live output, or depends on the node by control. */
static bool live_consumers(const gn_graph *g, gn_id id, const gn__tensor *out, int32_t nout)
{
    const gn__node *n = gn__node_at(g, id);
    if (n->n_cuse) return true;
    for (uint32_t u = 0; u < n->n_use; u++) {
        uint32_t port = g->nodes[n->use[u].node].in[n->use[u].slot].index;
        if ((int32_t)port < nout && !out[port].dead && out[port].dtype) return true;
    }
    return false;
}

/* Kernel outputs of a fold that will likely become a Const's value are written
 * straight into graph memory (kept for the graph's life), so that the Const's
 * typed field can point at them instead of holding a copy: results of a dtype
 * whose typed field stores elements as themselves, not so small that a copy
 * costs nothing, and not so large that the size rule could still refuse them
 * (what a refused or failed fold leaves there is kept with the graph). */
typedef struct cf_out_alloc {
    cf_state *s;
    gn_id id;
    size_t in_bytes;
    gn__buffer *over;       /* output 0's buffer, given: a result written over an input */
} cf_out_alloc;

#define CF_GRAPH_OUTPUT_MIN ((size_t)4096)
/* Results are carved from slabs (one allocation instead of one per result);
 * a large result's pages are faulted in at once before the kernel writes it
 * (gn__populate: in parallel parts, one call each instead of a fault per page;
 * Inception-V3 folds about 80 MB of weights).
 * A slab is as large as what the invocation has put there so far, from
 * CF_SLAB_MIN to CF_SLAB_MAX, so that the unused tail of the last one stays
 * within that; results over half a slab get an allocation of their own. The
 * whole pages of a slab's tail given up are given back to the system: where
 * transparent huge pages are on for every mapping, the first result in a slab
 * brings in the whole 2 MiB page around it, and on a model whose folded weights
 * are a few MiB each those tails were 10-20 MiB of the peak. */
#define CF_SLAB_MIN ((size_t)256 << 10)
#define CF_SLAB_MAX ((size_t)8 << 20)

static void *graph_output(cf_state *s, size_t bytes)
{
    size_t need = (bytes + 63) & ~(size_t)63;
    size_t slab = CF_SLAB_MIN;
    while (slab < CF_SLAB_MAX && slab < s->out_bytes) slab *= 2;
    s->out_bytes += need;
    if (need > s->slab_left && need > slab / 2) {
        void *own = gn__graph_value_alloc(s->g, bytes);
        gn__populate(own, bytes);
        return own;
    }
    if (need > s->slab_left) {
        if (s->slab_left) gn__release_pages(s->slab, s->slab_left);
        char *p = gn__graph_value_alloc(s->g, slab);
        if (!p) return NULL;
        uintptr_t a = ((uintptr_t)p + 63) & ~(uintptr_t)63;
        s->slab = (char *)a;
        s->slab_left = slab - (size_t)(a - (uintptr_t)p);
    }
    void *p = s->slab;
    s->slab += need;
    s->slab_left -= need;
    gn__populate(p, bytes);   /* only what this result takes: no resident tail */
    return p;
}

static void graph_buffer_release(gn__buffer *b) { free(b); }

/* ---- results written over an input --------------------------------------------------
 * A fold whose result is as large as one of its inputs, that input being the
 * value of a Const only this node reads, writes the result over that value
 * instead of into new memory. Inception-V3 multiplies 80 MB of convolution
 * filters by their batch norms' scales: over the filters, its peak RSS is
 * about the file's size instead of twice it, and no fresh page is faulted in
 * for them (bench/SPEED.md). The conditions, each needed:
 *  - an elementwise float op whose kernel (math_binary.c) computes element k of
 *    the result from element k of that input (same size: not broadcast) and
 *    reads it before writing it, and cannot fail once it writes;
 *  - the Const has one consumer, this node, and is not preserved, and the
 *    fetches are known: nothing reads its value after the fold. The pass
 *    drops it at its end (drop_unused), or, when it has control consumers
 *    (a frozen Keras graph's variable reads drive a NoOp), it has no inputs
 *    and the dependency pass deletes it (dependency.const_control), as
 *    Grappler's does; left in the graph, it holds the result, a value that
 *    only drives control edges;
 *  - its bytes lie in graph memory that nothing else holds but the
 *    meta-optimizer's copy for rollback (no clone, no function body:
 *    gn__pass_may_claim_bytes), and no other value of the graph or its
 *    function bodies points into them, but those of Consts nothing reads
 *    either (a folded Identity shares its input's bytes: in a frozen Keras
 *    graph each ReadVariableOp shares its '/resource' Const's). This check
 *    visits every node; once CF_ALIAS_BUDGET visits are spent in one run of
 *    the pass, nothing more is done in place;
 *  - the result has CF_INPLACE_MIN bytes or more, and CF_INPLACE_PER_NODE
 *    bytes per node of the graph.
 * Under the meta-optimizer such folds are listed and done together at the
 * end of the pass's walk (gn__cf_fold_deferred): every fallible step first,
 * then the copy for rollback given up, the kernels run, and a new copy
 * taken, once for the whole list instead of once per result. */
/* A Const of the pass's graph whose value nothing reads: not preserved (the
 * fetches are known), no data consumer, and no control consumer unless it has
 * no inputs (see above). */
static bool const_unread(cf_state *s, gn_id id)
{
    const gn__node *n = gn__node_at(s->g, id);
    return n->n_use == 0 && (!n->n_cuse || (!n->n_in && !n->n_ctrl)) &&
           !(n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) && gn__cf_really_const(s, id);
}

/* The byte ranges results would be written over, checked together against
 * every value of the graph and its function bodies in one walk. */
typedef struct alias_cand {
    uintptr_t lo, hi;
    gn_id owner;        /* the Const (of the pass's graph) whose value they are */
    bool shared;        /* another value points into them */
} alias_cand;

typedef struct alias_set {
    alias_cand **by_lo;  /* sorted by lo */
    uintptr_t *max_hi;   /* max_hi[j]: the largest hi of by_lo[0..j] */
    uint32_t n;
    bool all;            /* a value could not be looked into, or the budget ran out: all shared */
} alias_set;

static int cmp_cand_lo(const void *a, const void *b)
{
    const alias_cand *x = *(alias_cand *const *)a, *y = *(alias_cand *const *)b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Marks the candidates that [p, p + n), a value of node `node` of g, overlaps. */
static void span_mark(cf_state *s, alias_set *a, const gn_graph *g, gn_id node, const void *p, size_t n)
{
    if (!p || !n) return;
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    uint32_t l = 0, r = a->n; /* the first candidate starting at or after hi */
    while (l < r) {
        uint32_t m = l + (r - l) / 2;
        if (a->by_lo[m]->lo < hi) l = m + 1;
        else r = m;
    }
    for (uint32_t j = l; j-- > 0 && a->max_hi[j] > lo;) {
        alias_cand *c = a->by_lo[j];
        if (c->hi > lo && !(g == s->g && (node == c->owner || const_unread(s, node)))) c->shared = true;
    }
}

static void tensor_mark(cf_state *s, alias_set *a, const gn_graph *g, gn_id node, const Tensorflow__TensorProto *t,
                        int depth)
{
    if (!t) return;
    if (depth > 8) { /* nested too deep to look: assume it points anywhere */
        a->all = true;
        return;
    }
#define GN__SPAN(ptr, cnt) span_mark(s, a, g, node, (ptr), (cnt) * sizeof *(ptr))
    span_mark(s, a, g, node, t->tensor_content.data, t->tensor_content.len);
    GN__SPAN(t->half_val, t->n_half_val);
    GN__SPAN(t->float_val, t->n_float_val);
    GN__SPAN(t->double_val, t->n_double_val);
    GN__SPAN(t->int_val, t->n_int_val);
    GN__SPAN(t->int64_val, t->n_int64_val);
    GN__SPAN(t->uint32_val, t->n_uint32_val);
    GN__SPAN(t->uint64_val, t->n_uint64_val);
    GN__SPAN(t->bool_val, t->n_bool_val);
    GN__SPAN(t->scomplex_val, t->n_scomplex_val);
    GN__SPAN(t->dcomplex_val, t->n_dcomplex_val);
#undef GN__SPAN
    span_mark(s, a, g, node, t->float8_val.data, t->float8_val.len);
    for (size_t i = 0; i < t->n_string_val; i++) span_mark(s, a, g, node, t->string_val[i].data, t->string_val[i].len);
    for (size_t i = 0; i < t->n_variant_val; i++) {
        const Tensorflow__VariantTensorDataProto *v = t->variant_val[i];
        if (!v) continue;
        span_mark(s, a, g, node, v->metadata.data, v->metadata.len);
        for (size_t k = 0; k < v->n_tensors; k++) tensor_mark(s, a, g, node, v->tensors[k], depth + 1);
    }
}

static void attr_mark(cf_state *s, alias_set *a, const gn_graph *g, gn_id node, const Tensorflow__AttrValue *v)
{
    if (!v) return;
    switch (v->value_case) {
    case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR: tensor_mark(s, a, g, node, v->tensor, 0); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_S: span_mark(s, a, g, node, v->s.data, v->s.len); break;
    case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
        if (!v->list) break;
        for (size_t i = 0; i < v->list->n_tensor; i++) tensor_mark(s, a, g, node, v->list->tensor[i], 0);
        for (size_t i = 0; i < v->list->n_s; i++) span_mark(s, a, g, node, v->list->s[i].data, v->list->s[i].len);
        break;
    default: break;
    }
}

static void graph_mark(cf_state *s, alias_set *a, const gn_graph *g)
{
    if (s->alias_budget < g->n_nodes) {
        s->alias_budget = 0;
        a->all = true;
        return;
    }
    s->alias_budget -= g->n_nodes;
    for (gn_id i = 0; i < g->n_nodes && !a->all; i++) {
        const gn__node *n = gn__node_at(g, i);
        if (n->flags & GN__NODE_DEAD) continue;
        for (uint32_t k = 0; k < n->n_attr; k++) attr_mark(s, a, g, i, n->attr[k].value);
    }
}

/* Sets cand[k].shared for every candidate some value of the graph or its
 * function bodies points into, but those of its owner and of Consts nothing
 * reads (a folded Identity shares its input's bytes: in a frozen Keras graph
 * each ReadVariableOp shares its '/resource' Const's). One walk over every
 * node for all of them; once CF_ALIAS_BUDGET visits are spent in one run of
 * the pass, every candidate is taken as shared. */
static gn_status mark_shared(cf_state *s, alias_cand *cand, uint32_t n)
{
    if (!n) return GN_OK;
    alias_set a = {malloc(n * sizeof *a.by_lo), malloc(n * sizeof *a.max_hi), n, false};
    if (!a.by_lo || !a.max_hi) {
        free(a.by_lo);
        free(a.max_hi);
        return nomem(s);
    }
    for (uint32_t k = 0; k < n; k++) a.by_lo[k] = &cand[k];
    qsort(a.by_lo, n, sizeof *a.by_lo, cmp_cand_lo);
    for (uint32_t k = 0; k < n; k++) a.max_hi[k] = k && a.max_hi[k - 1] > a.by_lo[k]->hi ? a.max_hi[k - 1] : a.by_lo[k]->hi;
    const gn_graph *top = s->c->lib ? s->c->lib : s->g;
    bool seen = s->g == top;
    graph_mark(s, &a, top);
    for (uint32_t f = 0; f < top->n_fns && !a.all; f++) {
        const gn_graph *body = top->fns[f].body;
        seen |= body == s->g;
        if (body) graph_mark(s, &a, body);
    }
    if (!seen && !a.all) graph_mark(s, &a, s->g);
    if (a.all)
        for (uint32_t k = 0; k < n; k++) cand[k].shared = true;
    free(a.by_lo);
    free(a.max_hi);
    return GN_OK;
}

static bool inplace_op(const char *op)
{
    static const char *const ops[] = {"Mul", "Add", "AddV2", "Sub", "RealDiv", "Maximum", "Minimum"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (!strcmp(op, ops[i])) return true;
    return false;
}

static gn__buffer *alloc_output(void *user, uint32_t k, size_t bytes)
{
    cf_out_alloc *a = user;
    if (a->over) {
        gn__buffer *b = a->over;
        a->over = NULL;
        if (k == 0 && bytes == b->size) return b; /* sized beforehand: always */
        graph_buffer_release(b);
        return NULL;
    }
    int32_t dt = gn__cf_out_info(a->s, a->id, k).dtype;
    int t = 0;
    if (!dt && gn__node_num_outputs(a->s->g, a->id) == 1 && gn__attr_get_type(a->s->g, a->id, "T", &t))
        dt = t; /* a node this pass made has no inferred shapes: its type attr */
    bool stored_as_is = dt == DT(FLOAT) || dt == DT(DOUBLE) || dt == DT(INT32) || dt == DT(INT64) ||
                        dt == DT(UINT32) || dt == DT(UINT64);
    if (!stored_as_is || bytes < CF_GRAPH_OUTPUT_MIN || (bytes > a->in_bytes && bytes >= CF_MAX_CONSTANT_SIZE))
        return gn__buffer_new(bytes);
    gn__buffer *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->data = graph_output(a->s, bytes);
    if (!b->data) {
        free(b);
        return NULL;
    }
    b->refs = 1;
    b->flags = 0;
    b->size = bytes;
    b->release = graph_buffer_release;
    b->owner = NULL;
    return b;
}

/* Output t is graph memory that nothing else will write: (part of) the bytes of
 * an input that borrows a constant's value (an Identity, a Reshape), or an
 * output written there by alloc_output. An encoding may point at them rather
 * than copy them. */
static bool borrows_input(const gn__tensor *t, const gn__tensor *in, uint32_t nin)
{
    if (t->buf && t->buf->release == graph_buffer_release && t->data) return true;
    if (t->buf || !t->data) return false;
    const char *d = t->data;
    for (uint32_t i = 0; i < nin; i++) {
        const char *b = in[i].data;
        if (!in[i].buf && b && d >= b && t->nbytes <= in[i].nbytes && (size_t)(d - b) <= in[i].nbytes - t->nbytes)
            return true;
    }
    return false;
}

/* Runs node id's kernel on in, out[0..nout) receiving the results, each
 * allocated by alloc_output with a. */
static gn_status run_kernel(cf_state *s, gn_id id, gn__kernel_fn fn, gn__tensor *in, uint32_t nin, gn__tensor *out,
                            uint32_t nout, cf_out_alloc *a, gn__err *e)
{
    gn__kctx kc;
    memset(&kc, 0, sizeof kc);
    kc.g = s->g;
    kc.node = id;
    kc.n_in = nin;
    kc.in = in;
    kc.n_out = nout;
    kc.out = out;
    /* no BLAS, fixed-order gemms; transcendentals as the CPU backend computes them */
    kc.flags = GN__K_REFERENCE;
    kc.err = e;
    /* no output past what the size check below would keep: a Fill, Tile or
     * Range asking for terabytes fails here without allocating */
    kc.max_output_bytes = a->in_bytes > SIZE_MAX - CF_MAX_CONSTANT_SIZE ? SIZE_MAX : a->in_bytes + CF_MAX_CONSTANT_SIZE;
    kc.alloc = alloc_output;
    kc.alloc_user = a;
    gn__err_clear(e);
    return fn(&kc);
}

/* The dims two shapes broadcast to, and their rank; -1 when they do not. */
static int32_t broadcast_dims(const gn__tensor *a, const gn__tensor *b, int64_t *dims)
{
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    if (a->rank < 0 || b->rank < 0 || r > GN__MAX_DIMS) return -1;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = a->rank - r + i, ib = b->rank - r + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        dims[i] = da == 1 ? db : da;
    }
    return r;
}

/* A result that may be written over one of its inputs: its dtype, rank,
 * dims, element count and size, the inputs whose bytes qualify so far (opt,
 * those of the conditions above that a look at the node and its inputs
 * decides), and the one chosen (inplace_choose). */
typedef struct inplace_plan {
    int32_t dt, rank;
    int64_t dims[GN__MAX_DIMS];
    int64_t numel;
    size_t bytes;
    uint32_t n_opt, opt[2];
    uint32_t input;
} inplace_plan;

static bool inplace_check(cf_state *s, gn_id id, const gn__tensor *in, uint32_t nin, inplace_plan *ip)
{
    gn_graph *g = s->g;
    if (nin != 2 || s->no_copy || !s->has_fetch || !s->en[CF_P_DROP] || !s->alias_budget ||
        (s->fl[id] & CF_NOINPLACE) || gn__node_num_outputs(g, id) != 1 || !inplace_op(gn__node_op(g, id)))
        return false;
    int32_t dt = in[0].dtype;
    if (in[1].dtype != dt || (dt != DT(FLOAT) && dt != DT(DOUBLE))) return false;
    int32_t rank = broadcast_dims(&in[0], &in[1], ip->dims);
    if (rank < 0) return false;
    int64_t numel = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (ip->dims[i] > 0 && numel > INT32_MAX / ip->dims[i]) return false;
        numel *= ip->dims[i];
    }
    size_t esz = gn__dtype_size(dt);
    /* each result is checked against every node's values (mark_shared):
     * worth it for CF_INPLACE_PER_NODE bytes a node or more */
    if (numel <= 4 || (size_t)numel * esz < CF_INPLACE_MIN || (size_t)numel * esz / CF_INPLACE_PER_NODE < g->n_nodes)
        return false;
    size_t bytes = (size_t)numel * esz;
    const gn__node *n = gn__node_at(g, id);
    ip->dt = dt;
    ip->rank = rank;
    ip->numel = numel;
    ip->bytes = bytes;
    ip->n_opt = 0;
    for (uint32_t i = 0; i < 2; i++) {
        const gn__tensor *t = &in[i];
        /* the result's size: this operand is not broadcast */
        if (t->buf || !t->data || t->nbytes != bytes || (uintptr_t)t->data % esz) continue;
        gn_id p = n->in[i].node;
        const gn__node *pn = gn__node_at(g, p);
        if (pn->n_use != 1 || (pn->n_cuse && (pn->n_in || pn->n_ctrl)) ||
            (pn->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) || !gn__cf_really_const(s, p) ||
            !gn__pass_may_claim_bytes(s->c, g, t->data, bytes))
            continue;
        ip->opt[ip->n_opt++] = i;
    }
    return ip->n_opt > 0;
}

/* Candidates for mark_shared: one per qualifying input of the plan. */
static uint32_t plan_cands(cf_state *s, gn_id id, const gn__tensor *in, const inplace_plan *ip, alias_cand *c)
{
    for (uint32_t k = 0; k < ip->n_opt; k++) {
        uintptr_t lo = (uintptr_t)in[ip->opt[k]].data;
        c[k] = (alias_cand){lo, lo + ip->bytes, gn__node_at(s->g, id)->in[ip->opt[k]].node, false};
    }
    return ip->n_opt;
}

/* The first input of the plan whose bytes nothing else points into
 * (c: its candidates, from plan_cands and mark_shared); false: none. */
static bool inplace_choose(inplace_plan *ip, const alias_cand *c)
{
    for (uint32_t k = 0; k < ip->n_opt; k++)
        if (!c[k].shared) {
            ip->input = ip->opt[k];
            return true;
        }
    return false;
}

/* One result to be written over its input: every step that can fail done
 * (the result's encoding, pointing at the input's bytes; the node made a
 * Const of it, its value still the input's bytes), the kernel not run yet. */
typedef struct inplace_job {
    gn_id id;
    gn__kernel_fn fn;
    gn__tensor in[2];
    Tensorflow__TensorProto *proto;
    gn__buffer *b;
} inplace_job;

static gn_status inplace_prepare(cf_state *s, gn_id id, gn__kernel_fn fn, const gn__tensor *in,
                                 const inplace_plan *ip, inplace_job *j)
{
    void *data = in[ip->input].data;
    Tensorflow__TensorProto *proto = gn__cf_encode_view(s, ip->dt, ip->rank, ip->dims, data, ip->numel);
    gn__buffer *b = proto ? malloc(sizeof *b) : NULL;
    if (!b) return nomem(s);
    b->data = data;
    b->refs = 1;
    b->flags = 0;
    b->size = ip->bytes;
    b->release = graph_buffer_release;
    b->owner = NULL;
    gn_status st = const_in_place(s, id, ip->dt, proto);
    if (st != GN_OK) {
        free(b);
        return st;
    }
    j->id = id;
    j->fn = fn;
    j->in[0] = in[0];
    j->in[1] = in[1];
    j->proto = proto;
    j->b = b;
    return GN_OK;
}

/* Jobs jobs[0..n) of a batch, their kernels run by one thread: the first
 * failure (not expected: see inplace_run) kept with the node it names. */
typedef struct inplace_part {
    cf_state *s;
    inplace_job *jobs;
    uint32_t n;
    gn_status st;
    gn_id bad;
    gn__err e;
} inplace_part;

static void *inplace_part_run(void *arg)
{
    inplace_part *p = arg;
    for (uint32_t k = 0; k < p->n; k++) {
        inplace_job *j = &p->jobs[k];
        gn__tensor out;
        memset(&out, 0, sizeof out);
        cf_out_alloc oa = {p->s, j->id, SIZE_MAX, j->b};
        gn__err e;
        /* the kernel reads no attr of these ops: the node is a Const by now;
         * alloc_output hands it the buffer given, touching nothing shared */
        gn_status ks = run_kernel(p->s, j->id, j->fn, j->in, 2, &out, 1, &oa, &e);
        gn__tensor_release(&out);
        if (oa.over) graph_buffer_release(oa.over);
        j->b = NULL;
        if (ks != GN_OK && p->st == GN_OK) {
            p->st = ks;
            p->bad = j->id;
            p->e = e;
        }
    }
    return NULL;
}

/* Batches of at least this many bytes are split between two threads. */
#define CF_INPLACE_SPLIT_MIN ((size_t)4 << 20)

/* The prepared jobs' kernels run (after the copy for rollback is given up:
 * none can fail, the operands' dtypes and shapes having been checked, the
 * output buffers given), their encodings' element counts set from the
 * values, a new copy taken (without one, out of memory, the pass stops
 * there), and each fold reported. The kernels of a large batch run on two
 * threads, each job's on one: a job reads its own operands and writes only
 * the bytes of its own exclusive input, and the rest of the graph is not
 * written meanwhile (the folds of Inception-V3's batch norms into its
 * filters, 80 MB read and written: bench/SPEED.md). */
static gn_status inplace_run(cf_state *s, inplace_job *jobs, uint32_t n)
{
    gn__pass_claim_bytes(s->c);
    size_t total = 0;
    for (uint32_t k = 0; k < n; k++) total += jobs[k].b->size;
    uint32_t split = n; /* jobs[0..split) on this thread, the rest on another */
    if (n > 1 && total >= CF_INPLACE_SPLIT_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
        size_t acc = 0;
        split = 0;
        while (split < n - 1 && acc + jobs[split].b->size <= total / 2) acc += jobs[split++].b->size;
        if (split == 0) split = 1;
    }
    inplace_part a = {s, jobs, split, GN_OK, 0, {0}}, b = {s, jobs + split, n - split, GN_OK, 0, {0}};
    pthread_t t;
    bool started = b.n && pthread_create(&t, NULL, inplace_part_run, &b) == 0;
    inplace_part_run(&a);
    if (started) pthread_join(t, NULL);
    else inplace_part_run(&b);
    for (uint32_t k = 0; k < n; k++) gn__cf_encode_view_finish(jobs[k].proto);
    /* not reached: the checks are the kernel's */
    const inplace_part *f = a.st != GN_OK ? &a : b.st != GN_OK ? &b : NULL;
    gn_status st = GN_OK;
    if (f) st = gn__fail(s->c->err, GN_ERR_INTERNAL, "%s: folding in place: %s", gn__node_name(s->g, f->bad), f->e.msg);
    if (st != GN_OK) return st;
    if (!gn__pass_snapshot_again(s->c, s->g)) {
        /* a failure from here on could not be rolled back: stop, the graph
         * as it is (valid, its values right) */
        s->no_copy = true;
        s->max_steps = s->steps;
    }
    for (uint32_t k = 0; k < n; k++) {
        gn__cf_rewrote(s, CF_P_FOLD, jobs[k].id, "folded into a Const");
        gn__cf_enqueue_consumers(s, jobs[k].id);
    }
    return GN_OK;
}

/* Folds node id over one of its inputs when the conditions above hold
 * (*over: done). Under the meta-optimizer (a copy for rollback to give up)
 * the fold is deferred: the node is listed and left as it is, and
 * gn__cf_fold_deferred folds the whole list at once, with one copy given up
 * and one taken again instead of one per result. Alone (no copy), it is
 * folded now. */
static gn_status fold_in_place(cf_state *s, gn_id id, gn__kernel_fn fn, gn__tensor *in, uint32_t nin, bool *over)
{
    *over = false;
    if (s->fl[id] & CF_DEFER) {
        *over = true; /* listed already */
        return GN_OK;
    }
    inplace_plan ip;
    if (!inplace_check(s, id, in, nin, &ip)) return GN_OK;
    if (s->c->snapshot) {
        if (s->n_deferred == s->cap_deferred) {
            uint32_t ncap = s->cap_deferred ? s->cap_deferred * 2 : 64;
            gn_id *nd = realloc(s->deferred, ncap * sizeof *nd);
            if (!nd) return nomem(s);
            s->deferred = nd;
            s->cap_deferred = ncap;
        }
        s->deferred[s->n_deferred++] = id;
        s->fl[id] |= CF_DEFER;
        *over = true;
        return GN_OK;
    }
    alias_cand c[2];
    uint32_t nc = plan_cands(s, id, in, &ip, c);
    GN_TRY(mark_shared(s, c, nc));
    if (!inplace_choose(&ip, c)) return GN_OK;
    inplace_job j;
    GN_TRY(inplace_prepare(s, id, fn, in, &ip, &j));
    *over = true;
    return inplace_run(s, &j, 1);
}

gn_status gn__cf_fold_deferred(cf_state *s)
{
    gn_graph *g = s->g;
    gn_id *ids = s->deferred;
    uint32_t n = s->n_deferred;
    s->deferred = NULL;
    s->n_deferred = s->cap_deferred = 0;
    inplace_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    inplace_plan *plans = calloc(n ? n : 1, sizeof *plans);
    alias_cand *cand = calloc(2 * (size_t)(n ? n : 1), sizeof *cand);
    uint32_t *first = calloc(n ? n : 1, sizeof *first);
    if (!jobs || !plans || !cand || !first) {
        free(jobs);
        free(plans);
        free(cand);
        free(first);
        free(ids);
        return nomem(s);
    }
    /* the graph may have changed since a node was listed: everything is
     * checked again, and a node that no longer qualifies is queued to be
     * folded the usual way */
    uint32_t nj = 0, nc = 0;
    for (uint32_t k = 0; k < n; k++) {
        gn_id id = ids[k];
        s->fl[id] &= (uint16_t)~CF_DEFER;
        if (!gn__node_live(g, id)) continue;
        const gn__node *nd = gn__node_at(g, id);
        inplace_job *j = &jobs[nj];
        j->fn = gn__kernel_for(gn__node_op(g, id));
        bool ok = j->fn && nd->n_in == 2;
        for (uint32_t i = 0; ok && i < 2; i++) {
            const Tensorflow__TensorProto *p =
                gn__cf_really_const(s, nd->in[i].node) ? gn__cf_const_value(s, nd->in[i].node) : NULL;
            gn__err e;
            ok = p && gn__tensor_view_proto(p, &j->in[i], &e) == GN_OK;
        }
        if (ok && inplace_check(s, id, j->in, 2, &plans[nj])) {
            j->id = id;
            first[nj] = nc;
            nc += plan_cands(s, id, j->in, &plans[nj], &cand[nc]);
            nj++;
            continue;
        }
        release_all(j->in, 2);
        memset(j, 0, sizeof *j);
        s->fl[id] |= CF_NOINPLACE;
        gn__cf_enqueue(s, id);
    }
    gn_status st = mark_shared(s, cand, nc);
    /* every fallible step, for each node that still qualifies */
    uint32_t np = 0;
    for (uint32_t k = 0; k < nj && st == GN_OK; k++) {
        inplace_job *j = &jobs[k];
        if (!inplace_choose(&plans[k], &cand[first[k]])) {
            s->fl[j->id] |= CF_NOINPLACE;
            gn__cf_enqueue(s, j->id);
            release_all(j->in, 2);
            memset(j, 0, sizeof *j);
            continue;
        }
        inplace_job prepared;
        st = inplace_prepare(s, j->id, j->fn, j->in, &plans[k], &prepared);
        if (st == GN_OK) {
            memset(j, 0, sizeof *j);
            jobs[np++] = prepared;   /* np <= k: the slot is done with */
        }
    }
    if (st == GN_OK && np) st = inplace_run(s, jobs, np);
    for (uint32_t k = 0; k < nj; k++) {
        release_all(jobs[k].in, 2);
        if (jobs[k].b) graph_buffer_release(jobs[k].b);
    }
    free(jobs);
    free(plans);
    free(cand);
    free(first);
    free(ids);
    return st;
}

static gn_status evaluate(cf_state *s, gn_id id, bool *done)
{
    gn_graph *g = s->g;
    const char *op = gn__node_op(g, id);
    int32_t nout = gn__node_num_outputs(g, id);
    gn__kernel_fn fn = gn__kernel_for(op);
    if (!fn) {
        int32_t dt;
        Tensorflow__TensorProto *p;
        if (nout == 1 && inferred_value(s, id, &dt, &p)) {
            GN_TRY(const_in_place(s, id, dt, p));
            gn__cf_rewrote(s, CF_P_FOLD, id, "%s: value known from shape inference", op);
            gn__cf_enqueue_consumers(s, id);
            *done = true;
            return GN_OK;
        }
        s->fl[id] |= CF_NOFOLD;
        char why[160];
        snprintf(why, sizeof why, "no kernel for %.120s", op);
        refuse_once(s, CF_P_FOLD, id, why);
        return GN_OK;
    }
    const gn__node *n = gn__node_at(g, id);
    if (nout > 1) {
        /* folded before (a dead output still reads it): the names are taken */
        const char *nm = gn__node_name(g, id);
        size_t need = strlen(nm) + 64;
        char *want = gn__arena_alloc(&s->arena, need, 1);
        if (!want) return nomem(s);
        for (int32_t k = 0; k < nout; k++) {
            snprintf(want, need, "ConstantFolding/%s-folded-%d", nm, k);
            if (gn__graph_find(g, want) != GN_NONE) {
                s->fl[id] |= CF_NOFOLD;
                return GN_OK;
            }
        }
    }
    uint32_t nin = n->n_in;
    gn__tensor *in = calloc(nin ? nin : 1, sizeof *in);
    gn__tensor *out = calloc((size_t)nout, sizeof *out);
    Tensorflow__TensorProto **protos = calloc((size_t)nout, sizeof *protos);
    if (!in || !out || !protos) {
        free(in);
        free(out);
        free(protos);
        return nomem(s);
    }
    gn_status st = GN_OK;
    size_t in_bytes = 0;
    gn__err e;
    gn__err_clear(&e);
    const char *why = NULL;
    char whybuf[600];
    /* an op that forwards its first input (Identity, Snapshot, ...): when that
     * input needs an aligned copy, the copy is made where the folded result
     * may keep it, so the result shares it instead of being copied again */
    int32_t opi = gn__op_find(op, strlen(op));
    bool forwards = opi >= 0 && (gn__op_at((uint32_t)opi)->traits & GN__T_IDENTITY_LIKE) && nout == 1;
    for (uint32_t i = 0; i < nin && !why; i++) {
        const Tensorflow__TensorProto *p = gn__cf_const_value(s, gn__node_at(g, id)->in[i].node);
        cf_out_alloc fa = {s, id, SIZE_MAX, NULL};
        if (!p) {
            why = "an input constant has no value";
        } else if ((forwards && i == 0 ? gn__tensor_view_proto_alloc(p, alloc_output, &fa, &in[i], &e)
                                       : gn__tensor_view_proto(p, &in[i], &e)) != GN_OK) {
            snprintf(whybuf, sizeof whybuf, "cannot decode input %u: %.500s", i, e.msg);
            why = whybuf;
        } else {
            in_bytes += in[i].nbytes;
        }
    }
    if (!why) {
        bool over = false;
        st = fold_in_place(s, id, fn, in, nin, &over);
        if (st != GN_OK || over) {
            release_all(in, nin);
            free(in);
            free(out);
            free(protos);
            if (over) *done = true;
            return st;
        }
    }
    if (!why) {
        cf_out_alloc oa = {s, id, in_bytes, NULL};
        gn_status ks = run_kernel(s, id, fn, in, nin, out, (uint32_t)nout, &oa, &e);
        if (ks == GN_ERR_NOMEM) st = gn__fail(s->c->err, ks, "%s", e.msg);
        else if (ks == GN_ERR_LIMIT) {
            snprintf(whybuf, sizeof whybuf, "its size would be too large: %.500s", e.msg);
            why = whybuf;
            s->fl[id] |= CF_NOSIMP;
        } else if (ks != GN_OK) {
            snprintf(whybuf, sizeof whybuf, "evaluation failed: %.500s", e.msg);
            why = whybuf;
        }
    }
    uint32_t live = 0;
    for (int32_t k = 0; st == GN_OK && !why && k < nout; k++) {
        if (out[k].dead) continue;
        if (!out[k].dtype) {
            snprintf(whybuf, sizeof whybuf, "the kernel left output %d unset", k);
            why = whybuf;
            break;
        }
        size_t enc = 0;
        st = gn__cf_encode_shared(s, &out[k], borrows_input(&out[k], in, nin), &protos[k], &enc);
        if (st == GN_ERR_UNSUPPORTED) {
            st = GN_OK;
            snprintf(whybuf, sizeof whybuf, "cannot encode a %s result", gn__dtype_name(out[k].dtype));
            why = whybuf;
            break;
        }
        if (st == GN_OK && enc > in_bytes && enc >= CF_MAX_CONSTANT_SIZE) {
            snprintf(whybuf, sizeof whybuf, "its size would be too large (%zu >= %zu bytes)", enc,
                     CF_MAX_CONSTANT_SIZE);
            why = whybuf;
            s->fl[id] |= CF_NOSIMP;
            break;
        }
        live++;
    }
    if (st == GN_OK && why) {
        s->fl[id] |= CF_NOFOLD;
        refuse_once(s, CF_P_FOLD, id, why);
    } else if (st == GN_OK && live) {
        if (nout == 1) {
            st = const_in_place(s, id, out[0].dtype, protos[0]);
            if (st == GN_OK) {
                gn__cf_rewrote(s, CF_P_FOLD, id, "folded into a Const");
                gn__cf_enqueue_consumers(s, id);
            }
        } else if (!live_consumers(g, id, out, nout)) {
            /* only dead outputs are read (done before): nothing to do */
            s->fl[id] |= CF_NOFOLD;
        } else {
            gn_id *ctl;
            uint32_t nc;
            gn_id last = GN_NONE;
            st = collect_controls(s, id, &ctl, &nc);
            for (int32_t k = 0; st == GN_OK && k < nout; k++) {
                if (out[k].dead || !protos[k]) continue;
                char suffix[32];
                snprintf(suffix, sizeof suffix, "-folded-%d", k);
                gn_id c;
                st = gn__cf_new_const(s, gn__node_name(g, id), suffix, gn__node_at(g, id)->device, out[k].dtype,
                                      protos[k], &c);
                for (uint32_t i = 0; st == GN_OK && i < nc; i++) st = gn__node_add_control(g, c, ctl[i]);
                if (st == GN_OK) st = gn__cf_rewire_port(s, id, (uint32_t)k, (gn__edge){c, 0});
                last = c;
            }
            if (st == GN_OK && last != GN_NONE) st = gn__graph_forward_control(g, id, last);
            if (st == GN_OK) {
                s->fl[id] |= CF_NOFOLD;
                gn__cf_rewrote(s, CF_P_FOLD, id, "folded into %u Const(s)", live);
            }
        }
        if (st == GN_OK) *done = true;
    }
    release_all(in, nin);
    release_all(out, (uint32_t)nout);
    free(in);
    free(out);
    free(protos);
    return st;
}

gn_status gn__cf_fold(cf_state *s, gn_id id, cf_kind k, bool *done)
{
    *done = false;
    gn_graph *g = s->g;
    const gn__node *n = gn__node_at(g, id);
    if (!s->en[CF_P_FOLD] && !s->en[CF_P_FOLD_MERGE]) return GN_OK;
    if (n->n_in + n->n_ctrl == 0) return GN_OK;
    bool is_merge = k == K_MERGE || k == K_REF_MERGE || k == K_XLA_MERGE;
    bool merge_ok = false;
    for (uint32_t i = 0; i < n->n_in; i++) {
        gn_id p = n->in[i].node;
        if (gn__cf_really_const(s, p)) {
            int dt = 0;
            if (!gn__attr_get_type(g, p, "dtype", &dt) || dt == DT(STRING)) return GN_OK;
            const gn__node *pn = gn__node_at(g, p);
            merge_ok |= pn->n_in == 0 && pn->n_ctrl == 0;
        } else if (!is_merge) {
            return GN_OK;
        }
    }
    if (is_merge && !merge_ok) return GN_OK;
    bool silent, retry;
    const char *why = maybe_foldable(s, id, k, &silent, &retry);
    if (why) {
        if (!retry) s->fl[id] |= CF_NOFOLD;
        if (!silent && n->n_in > 0 && s->en[CF_P_FOLD]) refuse_once(s, CF_P_FOLD, id, why);
        return GN_OK;
    }
    if (is_merge) return s->en[CF_P_FOLD_MERGE] ? fold_merge(s, id, done) : GN_OK;
    if (!s->en[CF_P_FOLD]) return GN_OK;
    /* size guard from inferred shapes: a result bigger than both its inputs and the cap */
    uint32_t nso = s->st && id < s->st->n_nodes && !(s->fl[id] & CF_STALE) ? s->st->n_out[id] : 0;
    if (nso) {
        int64_t in_bytes = 0;
        for (uint32_t i = 0; i < n->n_in; i++) {
            gn__tinfo t = gn__cf_in_info(s, id, i);
            int64_t ne = gn__shape_fully_defined(&t.shape) ? gn__shape_num_elements(&t.shape) : -1;
            int64_t esz = (int64_t)gn__dtype_size(t.dtype);
            if (ne >= 0 && (!esz || ne <= (INT64_MAX - in_bytes) / esz)) in_bytes += ne * esz;
        }
        for (uint32_t k2 = 0; k2 < nso; k2++) {
            gn__tinfo t = gn__cf_out_info(s, id, k2);
            if (!gn__shape_fully_defined(&t.shape)) continue;
            int64_t ne = gn__shape_num_elements(&t.shape);
            if (ne == -1) continue;
            /* -2: the element count overflows int64, as do bytes past INT64_MAX: too large either way */
            int64_t esz = (int64_t)gn__dtype_size(t.dtype);
            int64_t bytes = ne < 0 || (esz && ne > INT64_MAX / esz) ? INT64_MAX : ne * esz;
            if (bytes > in_bytes && bytes > (int64_t)CF_MAX_CONSTANT_SIZE) {
                s->fl[id] |= CF_NOFOLD;
                char why2[160];
                snprintf(why2, sizeof why2, "output %u would be %lld bytes, larger than its inputs and over %zu", k2,
                         (long long)bytes, CF_MAX_CONSTANT_SIZE);
                refuse_once(s, CF_P_FOLD, id, why2);
                return GN_OK;
            }
        }
    }
    return evaluate(s, id, done);
}
