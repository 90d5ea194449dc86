/* Constant folding — "constfold" (docs/reference_grappler.md §3.6): the
 * pattern table and the helpers the rules share (state, queue, reports,
 * constants, rewrites). The driver is in constfold.c; the rules in
 * constfold_fold.c (materialization and folding) and constfold_simplify.c
 * (§3.6.6). All of them call these helpers; these call none of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "optimizer/passes/constfold_impl.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

/* ---- pattern table ------------------------------------------------------------- */
#define CF_ROW(E, id, help) {"constfold." id, help},
const gn__pattern gn__patterns_constfold[] = {CF_PATTERNS(CF_ROW){NULL, NULL}};
#undef CF_ROW
#define CF_ID(E, id, help) "constfold." id,
const char *const gn__cf_pattern_ids[CF_NPAT] = {CF_PATTERNS(CF_ID)};
#undef CF_ID

/* ---- op kinds -------------------------------------------------------------------- */
typedef struct kind_row {
    const char *name;
    cf_kind kind;
} kind_row;

/* sorted by strcmp */
static const kind_row k_rows[] = {
    {"AccumulateNV2", K_ACCUMULATE_N},
    {"Add", K_ADD},
    {"AddN", K_ADDN},
    {"AddV2", K_ADDV2},
    {"All", K_ALL},
    {"Any", K_ANY},
    {"AssignAdd", K_ASSIGN_ADD},
    {"AssignAddVariableOp", K_ASSIGN_ADD_VAR},
    {"AssignSub", K_ASSIGN_SUB},
    {"AssignSubVariableOp", K_ASSIGN_SUB_VAR},
    {"BatchMatMul", K_BATCH_MATMUL},
    {"BatchMatMulV2", K_BATCH_MATMUL_V2},
    {"BiasAdd", K_BIAS_ADD},
    {"BiasAddV1", K_BIAS_ADD_V1},
    {"BroadcastGradientArgs", K_BCAST_GRAD_ARGS},
    {"Case", K_CASE},
    {"Concat", K_CONCAT},
    {"ConcatV2", K_CONCAT_V2},
    {"Const", K_CONST},
    {"Conv2D", K_CONV2D},
    {"Conv3D", K_CONV3D},
    {"Div", K_DIV},
    {"Enter", K_ENTER},
    {"EuclideanNorm", K_EUCLIDEAN_NORM},
    {"Exit", K_EXIT},
    {"FakeParam", K_FAKE_PARAM},
    {"Fill", K_FILL},
    {"FloorDiv", K_FLOOR_DIV},
    {"HostConst", K_HOST_CONST},
    {"Identity", K_IDENTITY},
    {"IdentityN", K_IDENTITY_N},
    {"LogicalAnd", K_LOGICAL_AND},
    {"LogicalOr", K_LOGICAL_OR},
    {"LoopCond", K_LOOP_COND},
    {"MatMul", K_MATMUL},
    {"Max", K_MAX},
    {"Mean", K_MEAN},
    {"Merge", K_MERGE},
    {"Min", K_MIN},
    {"Mul", K_MUL},
    {"MulNoNan", K_MUL_NO_NAN},
    {"NextIteration", K_NEXT_ITERATION},
    {"OnesLike", K_ONES_LIKE},
    {"Pack", K_PACK},
    {"Pad", K_PAD},
    {"PadV2", K_PAD_V2},
    {"Placeholder", K_PLACEHOLDER},
    {"PlaceholderV2", K_PLACEHOLDER_V2},
    {"PlaceholderWithDefault", K_PLACEHOLDER_WITH_DEFAULT},
    {"Prod", K_PROD},
    {"RandomShuffle", K_RANDOM_SHUFFLE},
    {"Rank", K_RANK},
    {"RealDiv", K_REAL_DIV},
    {"RefEnter", K_REF_ENTER},
    {"RefExit", K_REF_EXIT},
    {"RefIdentity", K_REF_IDENTITY},
    {"RefMerge", K_REF_MERGE},
    {"RefNextIteration", K_REF_NEXT_ITERATION},
    {"RefSwitch", K_REF_SWITCH},
    {"Reshape", K_RESHAPE},
    {"ResourceScatterAdd", K_RES_SCATTER_ADD},
    {"ResourceScatterDiv", K_RES_SCATTER_DIV},
    {"ResourceScatterMul", K_RES_SCATTER_MUL},
    {"ResourceScatterNdAdd", K_RES_SCATTER_ND_ADD},
    {"ResourceScatterNdDiv", K_RES_SCATTER_ND_DIV},
    {"ResourceScatterNdMul", K_RES_SCATTER_ND_MUL},
    {"ResourceScatterNdSub", K_RES_SCATTER_ND_SUB},
    {"ResourceScatterSub", K_RES_SCATTER_SUB},
    {"ReverseV2", K_REVERSE_V2},
    {"ScatterAdd", K_SCATTER_ADD},
    {"ScatterDiv", K_SCATTER_DIV},
    {"ScatterMul", K_SCATTER_MUL},
    {"ScatterNdAdd", K_SCATTER_ND_ADD},
    {"ScatterNdDiv", K_SCATTER_ND_DIV},
    {"ScatterNdMul", K_SCATTER_ND_MUL},
    {"ScatterNdSub", K_SCATTER_ND_SUB},
    {"ScatterSub", K_SCATTER_SUB},
    {"Select", K_SELECT},
    {"SelectV2", K_SELECT_V2},
    {"Shape", K_SHAPE},
    {"ShapeN", K_SHAPE_N},
    {"Shuffle", K_SHUFFLE},
    {"Size", K_SIZE},
    {"Slice", K_SLICE},
    {"SparseMatMul", K_SPARSE_MATMUL},
    {"Split", K_SPLIT},
    {"SplitV", K_SPLIT_V},
    {"Squeeze", K_SQUEEZE},
    {"StridedSlice", K_STRIDED_SLICE},
    {"Sub", K_SUB},
    {"Sum", K_SUM},
    {"Switch", K_SWITCH},
    {"Tile", K_TILE},
    {"Transpose", K_TRANSPOSE},
    {"TruncateDiv", K_TRUNCATE_DIV},
    {"Xdivy", K_XDIVY},
    {"ZerosLike", K_ZEROS_LIKE},
    {"_XlaMerge", K_XLA_MERGE},
};

static cf_kind kind_lookup(const char *op)
{
    uint32_t lo = 0, hi = (uint32_t)GN__ARRAY_LEN(k_rows);
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = strcmp(k_rows[mid].name, op);
        if (c == 0) return k_rows[mid].kind;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return K_OTHER;
}

/* Cached per interned op string: ops are compared by id, not by text. */
cf_kind gn__cf_kind(cf_state *s, gn_id id)
{
    uint32_t op = s->g->nodes[id].op;
    if (op >= s->cap_kc) {
        uint32_t cap = s->cap_kc ? s->cap_kc : 256;
        while (cap <= op) cap *= 2;
        uint8_t *k = realloc(s->kc, cap);
        if (!k) return kind_lookup(gn__str(s->g, op));
        memset(k + s->cap_kc, 0xff, cap - s->cap_kc);
        s->kc = k;
        s->cap_kc = cap;
    }
    if (s->kc[op] == 0xff) s->kc[op] = (uint8_t)kind_lookup(gn__str(s->g, op));
    return (cf_kind)s->kc[op];
}

/* ---- bookkeeping ------------------------------------------------------------------- */
bool gn__cf_reserve(cf_state *s)
{
    uint32_t n = s->g->n_nodes;
    if (n > s->cap_fl) {
        uint32_t cap = s->cap_fl ? s->cap_fl : 64;
        while (cap < n) cap *= 2;
        uint16_t *fl = realloc(s->fl, (size_t)cap * sizeof *fl);
        if (!fl) return false;
        memset(fl + s->cap_fl, 0, (size_t)(cap - s->cap_fl) * sizeof *fl);
        s->fl = fl;
        s->cap_fl = cap;
    }
    if (n > s->cap_xinfo) {
        uint32_t cap = s->cap_xinfo ? s->cap_xinfo : 64;
        while (cap < n) cap *= 2;
        gn__tinfo *x = realloc(s->xinfo, (size_t)cap * sizeof *x);
        if (!x) return false;
        memset(x + s->cap_xinfo, 0, (size_t)(cap - s->cap_xinfo) * sizeof *x);
        s->xinfo = x;
        s->cap_xinfo = cap;
    }
    return true;
}

void gn__cf_enqueue(cf_state *s, gn_id id)
{
    if (id >= s->cap_fl && !gn__cf_reserve(s)) return;
    if (s->fl[id] & CF_PENDING) return;
    if (s->qtail == s->qcap) {
        if (s->qhead > 0) {
            memmove(s->q, s->q + s->qhead, (size_t)(s->qtail - s->qhead) * sizeof *s->q);
            s->qtail -= s->qhead;
            s->qhead = 0;
        }
        if (s->qtail == s->qcap) {
            uint32_t cap = s->qcap ? s->qcap * 2 : 256;
            gn_id *q = realloc(s->q, (size_t)cap * sizeof *q);
            if (!q) return; /* the node is simply not revisited */
            s->q = q;
            s->qcap = cap;
        }
    }
    s->q[s->qtail++] = id;
    s->fl[id] |= CF_PENDING;
}

void gn__cf_enqueue_consumers(cf_state *s, gn_id id)
{
    const gn__node *n = gn__node_at(s->g, id);
    for (uint32_t i = 0; i < n->n_use; i++) {
        gn__cf_enqueue(s, n->use[i].node);
        n = gn__node_at(s->g, id);
    }
}

void gn__cf_mark_stale(cf_state *s, gn_id id)
{
    if (id < s->cap_fl) s->fl[id] |= CF_STALE;
}

void gn__cf_rewrote(cf_state *s, int pat, gn_id id, const char *fmt, ...)
{
    s->c->changed = true;
    if (!s->c->report) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gn__pass_rewrote(s->c, gn__cf_pattern_ids[pat], s->g, id, "%s", buf);
}

void gn__cf_refused(cf_state *s, int pat, gn_id id, const char *fmt, ...)
{
    if (!s->c->report) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gn__pass_refused(s->c, gn__cf_pattern_ids[pat], s->g, id, "%s", buf);
}

/* ---- facts -------------------------------------------------------------------------- */
bool gn__cf_is_const_op(cf_state *s, gn_id id)
{
    cf_kind k = gn__cf_kind(s, id);
    return k == K_CONST || k == K_HOST_CONST;
}

bool gn__cf_really_const(cf_state *s, gn_id id)
{
    const gn__node *n = gn__node_at(s->g, id);
    /* Grappler's IsReallyConstant: a fed node is not a constant; a fetched one
     * still is (its consumers fold, the node itself stays) */
    if (n->flags & (GN__NODE_FED | GN__NODE_DEAD | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return false;
    return gn__cf_is_const_op(s, id);
}

const Tensorflow__TensorProto *gn__cf_const_value(const cf_state *s, gn_id id)
{
    const Tensorflow__AttrValue *v = gn__node_attr(s->g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR) return NULL;
    return v->tensor;
}

int64_t gn__cf_const_numel(const cf_state *s, gn_id id)
{
    const Tensorflow__TensorProto *p = gn__cf_const_value(s, id);
    if (!p) return -1;
    int64_t n = 1;
    const Tensorflow__TensorShapeProto *sh = p->tensor_shape;
    if (!sh) return 1;
    if (sh->unknown_rank) return -1;
    for (size_t i = 0; i < sh->n_dim; i++) {
        int64_t d = sh->dim[i]->size;
        if (d < 0) return -1;
        if (d && n > INT64_MAX / d) return -1;
        n *= d;
    }
    return n;
}

gn__tinfo gn__cf_out_info(cf_state *s, gn_id id, uint32_t k)
{
    gn__tinfo none = {0, {-1, NULL}, NULL, NULL};
    if (id >= s->g->n_nodes) return none;
    if (gn__cf_is_const_op(s, id)) {
        if (k != 0) return none;
        if (id < s->cap_xinfo && s->xinfo[id].dtype) return s->xinfo[id];
        const Tensorflow__TensorProto *p = gn__cf_const_value(s, id);
        if (!p) return none;
        gn__tinfo t = none;
        int dt = 0;
        t.dtype = gn__attr_get_type(s->g, id, "dtype", &dt) ? dt : (int32_t)p->dtype;
        if (!gn__shape_from_proto(p->tensor_shape, &s->arena, &t.shape)) return none;
        if (!p->tensor_shape) t.shape.rank = 0;
        if ((id < s->cap_xinfo || gn__cf_reserve(s)) && id < s->cap_xinfo) s->xinfo[id] = t;
        return t;
    }
    if (!s->st || id >= s->st->n_nodes || (id < s->cap_fl && (s->fl[id] & CF_STALE))) return none;
    if (!s->st->out[id] || k >= s->st->n_out[id]) return none;
    return s->st->out[id][k];
}

bool gn__cf_const_ints(cf_state *s, gn_id id, int64_t **vals, int64_t *n, int64_t max)
{
    if (!gn__cf_really_const(s, id)) return false;
    const Tensorflow__TensorProto *p = gn__cf_const_value(s, id);
    if (!p || (p->dtype != DT(INT32) && p->dtype != DT(INT64))) return false;
    int64_t ne = gn__cf_const_numel(s, id);
    if (ne < 0 || ne > max) return false;
    gn__tensor t;
    memset(&t, 0, sizeof t);
    gn__err e;
    if (gn__tensor_from_proto(p, &t, &e) != GN_OK) return false;
    int64_t *v = gn__arena_alloc(&s->arena, (size_t)(ne ? ne : 1) * sizeof *v, _Alignof(int64_t));
    if (!v) {
        gn__tensor_release(&t);
        return false;
    }
    for (int64_t i = 0; i < ne; i++)
        v[i] = t.dtype == DT(INT64) ? ((const int64_t *)t.data)[i] : ((const int32_t *)t.data)[i];
    gn__tensor_release(&t);
    *vals = v;
    *n = ne;
    return true;
}

/* Element i of t equals v (complex: real part v, imaginary part 0). */
static bool elem_is(const gn__tensor *t, int64_t i, int v)
{
    switch (t->dtype) {
    case DT(BOOL): return (((const uint8_t *)t->data)[i] != 0) == (v != 0);
    case DT(HALF): return (float)((const gn__f16 *)t->data)[i] == (float)v;
    case DT(BFLOAT16): {
        uint32_t bits = (uint32_t)((const uint16_t *)t->data)[i] << 16;
        float f;
        memcpy(&f, &bits, sizeof f);
        return f == (float)v;
    }
    case DT(FLOAT): return ((const float *)t->data)[i] == (float)v;
    case DT(DOUBLE): return ((const double *)t->data)[i] == (double)v;
    case DT(COMPLEX64): return ((const float *)t->data)[2 * i] == (float)v && ((const float *)t->data)[2 * i + 1] == 0;
    case DT(COMPLEX128):
        return ((const double *)t->data)[2 * i] == (double)v && ((const double *)t->data)[2 * i + 1] == 0;
    case DT(UINT8):
    case DT(QUINT8): return ((const uint8_t *)t->data)[i] == (uint8_t)v;
    case DT(INT8):
    case DT(QINT8): return ((const int8_t *)t->data)[i] == (int8_t)v;
    case DT(UINT16):
    case DT(QUINT16): return ((const uint16_t *)t->data)[i] == (uint16_t)v;
    case DT(INT16):
    case DT(QINT16): return ((const int16_t *)t->data)[i] == (int16_t)v;
    case DT(INT32):
    case DT(QINT32): return ((const int32_t *)t->data)[i] == v;
    case DT(INT64): return ((const int64_t *)t->data)[i] == v;
    default: return false;
    }
}

/* Every element 0 / every element 1, read from the proto without decoding it:
 * typed fields repeat their last value (none: all zero). */
static void scan_proto(const Tensorflow__TensorProto *p, int dt, int64_t numel, bool *zero, bool *one)
{
    *zero = *one = true;
    if (numel == 0) return;
    if (p->tensor_content.len) {
        size_t esz = gn__dtype_size(dt);
        if (!esz || p->tensor_content.len % esz) {
            *zero = *one = false;
            return;
        }
        gn__tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = dt;
        t.data = p->tensor_content.data;
        int64_t n = (int64_t)(p->tensor_content.len / esz);
        /* the bytes may sit at any address (a loaded tensor points into the
         * file's image): misaligned elements are read through a copy */
        bool aligned = (uintptr_t)p->tensor_content.data % (esz > 8 ? 8 : esz) == 0;
        _Alignas(16) unsigned char el[16];
        for (int64_t i = 0; i < n && (*zero || *one); i++) {
            int64_t j = i;
            if (!aligned && esz <= sizeof el) {
                memcpy(el, p->tensor_content.data + (size_t)i * esz, esz);
                t.data = el;
                j = 0;
            }
            if (*zero && !elem_is(&t, j, 0)) *zero = false;
            if (*one && !elem_is(&t, j, 1)) *one = false;
        }
        return;
    }
#define SCAN(arr, cnt, step, Z, O)                                      \
    do {                                                                \
        if ((cnt) == 0) {                                               \
            *one = false;                                               \
            return;                                                     \
        }                                                               \
        for (size_t i = 0; i < (cnt) && (*zero || *one); i += (step)) { \
            if (!(Z)) *zero = false;                                    \
            if (!(O)) *one = false;                                     \
        }                                                               \
        (void)(arr);                                                    \
    } while (0)
    switch (dt) {
    case DT(FLOAT): SCAN(p->float_val, p->n_float_val, 1, p->float_val[i] == 0, p->float_val[i] == 1); return;
    case DT(DOUBLE): SCAN(p->double_val, p->n_double_val, 1, p->double_val[i] == 0, p->double_val[i] == 1); return;
    case DT(INT32): case DT(INT16): case DT(INT8): case DT(UINT16): case DT(UINT8): case DT(QINT8):
    case DT(QUINT8): case DT(QINT16): case DT(QUINT16): case DT(QINT32):
        SCAN(p->int_val, p->n_int_val, 1, p->int_val[i] == 0, p->int_val[i] == 1);
        return;
    case DT(INT64): SCAN(p->int64_val, p->n_int64_val, 1, p->int64_val[i] == 0, p->int64_val[i] == 1); return;
    case DT(BOOL): SCAN(p->bool_val, p->n_bool_val, 1, !p->bool_val[i], p->bool_val[i]); return;
    case DT(HALF): {
        /* 0x0000 / 0x8000 are zeros, 0x3c00 is one */
        SCAN(p->half_val, p->n_half_val, 1, (p->half_val[i] & 0x7fff) == 0, (p->half_val[i] & 0xffff) == 0x3c00);
        return;
    }
    case DT(BFLOAT16):
        SCAN(p->half_val, p->n_half_val, 1, (p->half_val[i] & 0x7fff) == 0, (p->half_val[i] & 0xffff) == 0x3f80);
        return;
    case DT(COMPLEX64):
        SCAN(p->scomplex_val, p->n_scomplex_val & ~(size_t)1, 2, p->scomplex_val[i] == 0 && p->scomplex_val[i + 1] == 0,
             p->scomplex_val[i] == 1 && p->scomplex_val[i + 1] == 0);
        return;
    case DT(COMPLEX128):
        SCAN(p->dcomplex_val, p->n_dcomplex_val & ~(size_t)1, 2, p->dcomplex_val[i] == 0 && p->dcomplex_val[i + 1] == 0,
             p->dcomplex_val[i] == 1 && p->dcomplex_val[i + 1] == 0);
        return;
    default: *zero = *one = false; return;
    }
#undef SCAN
}

static void zero_one_check(cf_state *s, gn_id id)
{
    if (id >= s->cap_fl && !gn__cf_reserve(s)) return;
    if (s->fl[id] & CF_ZCHK) return;
    s->fl[id] |= CF_ZCHK;
    const Tensorflow__TensorProto *p = gn__cf_const_value(s, id);
    int dt = 0;
    if (!p || !gn__attr_get_type(s->g, id, "dtype", &dt) || (int)p->dtype != dt) return;
    int64_t n = gn__cf_const_numel(s, id);
    if (n < 0) return;
    bool zero, one;
    scan_proto(p, dt, n, &zero, &one);
    if (zero) s->fl[id] |= CF_ZERO;
    if (one) s->fl[id] |= CF_ONE;
}

static bool zeros_or_ones(cf_state *s, gn_id id, bool want_zero)
{
    /* iterative over Fill chains (Fill of Fill is not possible: value is a scalar) */
    for (int guard = 0; guard < 4; guard++) {
        const gn__node *n = gn__node_at(s->g, id);
        if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG)) return false;
        cf_kind k = gn__cf_kind(s, id);
        if (k == K_ONES_LIKE) return !want_zero;
        if (k == K_ZEROS_LIKE) return want_zero;
        if (k == K_FILL) {
            if (n->n_in < 2) return false;
            id = n->in[1].node;
            continue;
        }
        if (k != K_CONST && !(want_zero && k == K_HOST_CONST)) return false;
        zero_one_check(s, id);
        if (id >= s->cap_fl) return false;
        return (s->fl[id] & (want_zero ? CF_ZERO : CF_ONE)) != 0;
    }
    return false;
}

bool gn__cf_is_zeros(cf_state *s, gn_id id) { return zeros_or_ones(s, id, true); }
bool gn__cf_is_ones(cf_state *s, gn_id id) { return zeros_or_ones(s, id, false); }

int32_t gn__cf_node_dtype(cf_state *s, gn_id id)
{
    int dt = 0;
    if (gn__attr_get_type(s->g, id, "T", &dt)) return dt;
    if (gn__attr_get_type(s->g, id, "dtype", &dt)) return dt;
    cf_kind k = gn__cf_kind(s, id);
    if (k == K_LOGICAL_AND || k == K_LOGICAL_OR) return DT(BOOL);
    gn__tinfo t = gn__cf_out_info(s, id, 0);
    return t.dtype;
}

bool gn__cf_has_tpu_attr(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    for (uint32_t i = 0; i < n->n_attr; i++)
        if (strstr(gn__str(g, n->attr[i].key), "_tpu_")) return true;
    return false;
}

/* ---- shapes ----------------------------------------------------------------------------- */
bool gn__cf_shape_same_known(const gn__shape *a, const gn__shape *b)
{
    if (a->rank < 0 || b->rank != a->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] < 0 || a->dims[i] != b->dims[i]) return false;
    return true;
}

bool gn__cf_broadcast_keeps(const gn__shape *x, const gn__shape *other)
{
    if (x->rank < 0 || other->rank < 0 || other->rank > x->rank) return false;
    int32_t off = x->rank - other->rank;
    for (int32_t i = 0; i < other->rank; i++) {
        int64_t o = other->dims[i], d = x->dims[off + i];
        if (o == 1) continue;
        if (o < 0 || d < 0 || o != d) return false;
    }
    return true;
}


/* ---- building ------------------------------------------------------------------------------ */
static void *pb_alloc(cf_state *s, size_t n)
{
    ProtobufCAllocator *a = gn__graph_value_allocator(s->g);
    return a->alloc(a->allocator_data, n ? n : 1);
}

Tensorflow__AttrValue *gn__cf_attr_type(cf_state *s, int32_t dtype) { return gn__attr_new_type(s->g, dtype); }

Tensorflow__AttrValue *gn__cf_attr_int(cf_state *s, int64_t i) { return gn__attr_new_int(s->g, i); }

Tensorflow__AttrValue *gn__cf_attr_int_list(cf_state *s, const int64_t *v, int64_t n)
{
    return gn__attr_new_ints(s->g, v, (size_t)(n > 0 ? n : 0));
}

Tensorflow__AttrValue *gn__cf_attr_tensor(cf_state *s, Tensorflow__TensorProto *t) { return gn__attr_new_tensor(s->g, t); }

Tensorflow__AttrValue *gn__cf_attr_func(cf_state *s, const Tensorflow__NameAttrList *f)
{
    return gn__attr_new_func(s->g, (Tensorflow__NameAttrList *)f);
}

static Tensorflow__TensorShapeProto *shape_proto(cf_state *s, int32_t rank, const int64_t *dims)
{
    Tensorflow__TensorShapeProto *sh = pb_alloc(s, sizeof *sh);
    if (!sh) return NULL;
    tensorflow__tensor_shape_proto__init(sh);
    if (rank > 0) {
        sh->dim = pb_alloc(s, (size_t)rank * sizeof *sh->dim);
        if (!sh->dim) return NULL;
        for (int32_t i = 0; i < rank; i++) {
            Tensorflow__TensorShapeProto__Dim *d = pb_alloc(s, sizeof *d);
            if (!d) return NULL;
            tensorflow__tensor_shape_proto__dim__init(d);
            d->size = dims[i];
            sh->dim[i] = d;
        }
        sh->n_dim = (size_t)rank;
    }
    return sh;
}

/* Typed field for dtype with the first `keep` elements of data (element size esz).
 * share: data lives in memory the graph keeps for its whole life and never
 * changes (the bytes of another constant's value): a field whose elements are
 * stored as themselves points at data instead of holding a copy. */
static bool set_typed(cf_state *s, Tensorflow__TensorProto *p, int32_t dt, const void *data, int64_t keep,
                      bool share, size_t *encoded)
{
    size_t k = (size_t)keep;
#define GN__CF_SHARE(field, T)                                                                  \
    if (share && (uintptr_t)data % _Alignof(T) == 0) {                                          \
        p->field = (T *)(uintptr_t)data;                                                        \
        p->n_##field = k;                                                                       \
        *encoded = k * sizeof(T);                                                               \
        return true;                                                                            \
    }
    switch (dt) {
    /* types stored as themselves: the field shares data or holds one copy */
#define GN__CF_COPY(field, T)                                                                   \
    GN__CF_SHARE(field, T)                                                                      \
    if (!(p->field = pb_alloc(s, k * sizeof(T)))) return false;                                 \
    memcpy(p->field, data, k * sizeof(T));                                                      \
    p->n_##field = k;                                                                           \
    *encoded = k * sizeof(T);                                                                   \
    return true;
    case DT(FLOAT): GN__CF_COPY(float_val, float)
    case DT(DOUBLE): GN__CF_COPY(double_val, double)
    case DT(INT64): GN__CF_COPY(int64_val, int64_t)
    case DT(UINT64): GN__CF_COPY(uint64_val, uint64_t)
    case DT(UINT32): GN__CF_COPY(uint32_val, uint32_t)
#undef GN__CF_COPY
    case DT(INT32):
    case DT(INT16):
    case DT(UINT16):
    case DT(INT8):
    case DT(UINT8):
        if (dt == DT(INT32)) GN__CF_SHARE(int_val, int32_t)
        if (!(p->int_val = pb_alloc(s, k * sizeof(int32_t)))) return false;
        for (size_t i = 0; i < k; i++) {
            int32_t v;
            switch (dt) {
            case DT(INT32): v = ((const int32_t *)data)[i]; break;
            case DT(INT16): v = ((const int16_t *)data)[i]; break;
            case DT(UINT16): v = ((const uint16_t *)data)[i]; break;
            case DT(INT8): v = ((const int8_t *)data)[i]; break;
            default: v = ((const uint8_t *)data)[i]; break;
            }
            p->int_val[i] = v;
        }
        p->n_int_val = k;
        *encoded = k * 4;
        return true;
    case DT(BOOL):
        if (!(p->bool_val = pb_alloc(s, k * sizeof(protobuf_c_boolean)))) return false;
        for (size_t i = 0; i < k; i++) p->bool_val[i] = ((const uint8_t *)data)[i] != 0;
        p->n_bool_val = k;
        *encoded = k;
        return true;
    default: return false;
    }
#undef GN__CF_SHARE
}

static bool typed_dtype(int32_t dt)
{
    switch (dt) {
    case DT(FLOAT): case DT(DOUBLE): case DT(INT64): case DT(UINT64): case DT(INT32): case DT(UINT32):
    case DT(INT16): case DT(UINT16): case DT(INT8): case DT(UINT8): case DT(BOOL): return true;
    default: return false;
    }
}

/* The index of the last element that differs from its predecessor (0 when all n
 * elements are equal): the elements after it repeat it, and the typed encoding
 * stops there. Scanned from the end, so that a tensor without a trailing run
 * costs one comparison; compared bit by bit (so that -0.0 and 0.0, and NaN
 * payloads, stay distinct). */
static int64_t last_change(const void *data, int64_t n, size_t esz)
{
#define GN__CF_LAST(T)                                                       \
    do {                                                                     \
        const uint8_t *d = data; /* possibly unaligned: loads by memcpy */   \
        T b, a;                                                              \
        memcpy(&b, d + (size_t)(n - 1) * sizeof(T), sizeof(T));              \
        for (int64_t i = n - 1; i > 0; i--, b = a) {                         \
            memcpy(&a, d + (size_t)(i - 1) * sizeof(T), sizeof(T));          \
            if (a != b) return i;                                            \
        }                                                                    \
        return 0;                                                            \
    } while (0)
    switch (esz) {
    case 1: GN__CF_LAST(uint8_t);
    case 2: GN__CF_LAST(uint16_t);
    case 4: GN__CF_LAST(uint32_t);
    case 8: GN__CF_LAST(uint64_t);
    default: break;
    }
#undef GN__CF_LAST
    const uint8_t *d = data;
    for (int64_t i = n - 1; i > 0; i--)
        if (memcmp(d + (size_t)i * esz, d + (size_t)(i - 1) * esz, esz) != 0) return i;
    return 0;
}

gn_status gn__cf_encode(cf_state *s, const gn__tensor *t, Tensorflow__TensorProto **out, size_t *encoded)
{
    return gn__cf_encode_shared(s, t, false, out, encoded);
}

gn_status gn__cf_encode_shared(cf_state *s, const gn__tensor *t, bool share, Tensorflow__TensorProto **out,
                               size_t *encoded)
{
    int64_t n = gn__tensor_numel(t);
    size_t esz = gn__dtype_size(t->dtype);
    if (n > 4 && typed_dtype(t->dtype) && esz) {
        /* the last element that differs from its successor run, compared bit by bit
         * (so that -0.0 and 0.0, and NaN payloads, survive) */
        int64_t last = last_change(t->data, n, esz);
        if (last < INT32_MAX) {
            Tensorflow__TensorProto *p = pb_alloc(s, sizeof *p);
            if (!p) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
            tensorflow__tensor_proto__init(p);
            p->dtype = (Tensorflow__DataType)t->dtype;
            if (!(p->tensor_shape = shape_proto(s, t->rank, t->dims)) ||
                !set_typed(s, p, t->dtype, t->data, last + 1, share, encoded))
                return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
            *out = p;
            return GN_OK;
        }
    }
    bool raw = t->dtype == DT(HALF) || t->dtype == DT(BFLOAT16) || t->dtype == DT(COMPLEX64) ||
               t->dtype == DT(COMPLEX128);
    if (share && raw && n > 0 && esz && t->nbytes == (size_t)n * esz) {
        /* gn__tensor_to_proto's encoding (dtype, shape, tensor_content), the
         * content being t's own bytes */
        Tensorflow__TensorProto *p = pb_alloc(s, sizeof *p);
        if (!p) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        tensorflow__tensor_proto__init(p);
        p->dtype = (Tensorflow__DataType)t->dtype;
        if (!(p->tensor_shape = shape_proto(s, t->rank, t->dims)))
            return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        p->tensor_content.data = t->data;
        p->tensor_content.len = t->nbytes;
        *out = p;
        *encoded = t->nbytes;
        return GN_OK;
    }
    gn__err e;
    gn__err_clear(&e);
    gn_status st = gn__tensor_to_proto(t, gn__graph_value_allocator(s->g), out, &e);
    if (st != GN_OK) return gn__fail(s->c->err, st, "%s", e.msg);
    *encoded = (*out)->tensor_content.len;
    if (t->dtype == DT(STRING)) {
        size_t b = 0;
        for (size_t i = 0; i < (*out)->n_string_val; i++) b += (*out)->string_val[i].len;
        *encoded = b;
    }
    return GN_OK;
}

Tensorflow__TensorProto *gn__cf_encode_view(cf_state *s, int32_t dt, int32_t rank, const int64_t *dims, void *data,
                                            int64_t n)
{
    Tensorflow__TensorProto *p = pb_alloc(s, sizeof *p);
    if (!p) return NULL;
    tensorflow__tensor_proto__init(p);
    p->dtype = (Tensorflow__DataType)dt;
    size_t enc = 0;
    if (!(p->tensor_shape = shape_proto(s, rank, dims)) || !set_typed(s, p, dt, data, n, true, &enc)) return NULL;
    return p;
}

void gn__cf_encode_view_finish(Tensorflow__TensorProto *p)
{
    if (p->n_float_val) p->n_float_val = (size_t)last_change(p->float_val, (int64_t)p->n_float_val, sizeof(float)) + 1;
    if (p->n_double_val)
        p->n_double_val = (size_t)last_change(p->double_val, (int64_t)p->n_double_val, sizeof(double)) + 1;
}

gn_status gn__cf_fill_proto(cf_state *s, int32_t dt, double value, const gn__shape *shape,
                            Tensorflow__TensorProto **out)
{
    Tensorflow__TensorProto *p = pb_alloc(s, sizeof *p);
    if (!p) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    tensorflow__tensor_proto__init(p);
    p->dtype = (Tensorflow__DataType)dt;
    if (!(p->tensor_shape = shape_proto(s, shape->rank, shape->dims)))
        return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    size_t enc = 0;
    bool ok = true;
    switch (dt) {
    case DT(HALF): {
        gn__f16 h = (gn__f16)value;
        uint16_t bits;
        memcpy(&bits, &h, sizeof bits);
        if (!(p->half_val = pb_alloc(s, sizeof(int32_t)))) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        p->half_val[0] = bits;
        p->n_half_val = 1;
        break;
    }
    case DT(BFLOAT16): {
        float f = (float)value;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        if (!(p->half_val = pb_alloc(s, sizeof(int32_t)))) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        p->half_val[0] = (int32_t)(bits >> 16);
        p->n_half_val = 1;
        break;
    }
    case DT(FLOAT): { float v = (float)value; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    case DT(DOUBLE): { double v = value; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    case DT(INT64): { int64_t v = (int64_t)value; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    case DT(UINT64): { uint64_t v = (uint64_t)value; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    case DT(UINT32): { uint32_t v = (uint32_t)value; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    case DT(INT32): case DT(QINT32): { int32_t v = (int32_t)value; ok = set_typed(s, p, DT(INT32), &v, 1, false, &enc); break; }
    case DT(INT16): case DT(QINT16): { int16_t v = (int16_t)value; ok = set_typed(s, p, DT(INT16), &v, 1, false, &enc); break; }
    case DT(UINT16): case DT(QUINT16): { uint16_t v = (uint16_t)value; ok = set_typed(s, p, DT(UINT16), &v, 1, false, &enc); break; }
    case DT(INT8): case DT(QINT8): { int8_t v = (int8_t)value; ok = set_typed(s, p, DT(INT8), &v, 1, false, &enc); break; }
    case DT(UINT8): case DT(QUINT8): { uint8_t v = (uint8_t)value; ok = set_typed(s, p, DT(UINT8), &v, 1, false, &enc); break; }
    case DT(BOOL): { uint8_t v = value != 0; ok = set_typed(s, p, dt, &v, 1, false, &enc); break; }
    default: return GN_ERR_UNSUPPORTED;
    }
    if (!ok) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    *out = p;
    return GN_OK;
}

gn_status gn__cf_encode_single(cf_state *s, const gn__tensor *scalar, const gn__shape *shape,
                               Tensorflow__TensorProto **out)
{
    int32_t dt = scalar->dtype;
    if (gn__tensor_numel(scalar) != 1) return GN_ERR_UNSUPPORTED;
    Tensorflow__TensorProto *p = pb_alloc(s, sizeof *p);
    if (!p) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    tensorflow__tensor_proto__init(p);
    p->dtype = (Tensorflow__DataType)dt;
    if (!(p->tensor_shape = shape_proto(s, shape->rank, shape->dims)))
        return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    size_t enc = 0;
    if (dt == DT(HALF) || dt == DT(BFLOAT16)) {
        if (!(p->half_val = pb_alloc(s, sizeof(int32_t)))) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
        p->half_val[0] = ((const uint16_t *)scalar->data)[0];
        p->n_half_val = 1;
    } else if (!typed_dtype(dt)) {
        return GN_ERR_UNSUPPORTED;
    } else if (!set_typed(s, p, dt, scalar->data, 1, false, &enc)) {
        return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    }
    *out = p;
    return GN_OK;
}

gn_status gn__cf_clear_attrs(cf_state *s, gn_id id, bool keep_internal)
{
    gn__node *n = gn__node_at(s->g, id);
    for (uint32_t i = n->n_attr; i-- > 0;) {
        n = gn__node_at(s->g, id);
        const char *key = gn__str(s->g, n->attr[i].key);
        if (keep_internal && key[0] == '_') continue;
        GN_TRY(gn__node_remove_attr(s->g, id, key));
    }
    return GN_OK;
}

static gn_status set_const_attrs(cf_state *s, gn_id id, int32_t dtype, Tensorflow__TensorProto *value)
{
    Tensorflow__AttrValue *t = gn__cf_attr_type(s, dtype), *v = gn__cf_attr_tensor(s, value);
    if (!t || !v) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(gn__node_set_attr(s->g, id, "dtype", t));
    GN_TRY(gn__node_set_attr(s->g, id, "value", v));
    return GN_OK;
}

gn_status gn__cf_make_const(cf_state *s, gn_id id, int32_t dtype, Tensorflow__TensorProto *value, bool keep_internal)
{
    GN_TRY(gn__cf_clear_attrs(s, id, keep_internal));
    GN_TRY(gn__node_set_op(s->g, id, "Const"));
    GN_TRY(set_const_attrs(s, id, dtype, value));
    if (id < s->cap_fl) s->fl[id] &= (uint16_t)~(CF_ZCHK | CF_ZERO | CF_ONE);
    if (id < s->cap_xinfo) s->xinfo[id].dtype = 0;
    return GN_OK;
}

/* "ConstantFolding/<base><suffix>" (or with a "_k" suffix when taken). */
static char *cf_name(cf_state *s, const char *prefix, const char *base, const char *suffix)
{
    size_t need = strlen(prefix) + strlen(base) + strlen(suffix) + 32;
    char *mid = gn__arena_alloc(&s->arena, need, 1);
    char *buf = gn__arena_alloc(&s->arena, need, 1);
    if (!mid || !buf) return NULL;
    snprintf(mid, need, "%s%s", base, suffix);
    gn__pass_unique_name(s->g, prefix, mid, buf, need);
    return buf;
}

static gn_status add_node(cf_state *s, const char *name, const char *op, uint32_t device, gn_id *out)
{
    GN_TRY(gn__node_add(s->g, name, op, out));
    gn__node_at(s->g, *out)->device = device;
    if (!gn__cf_reserve(s)) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    s->fl[*out] |= CF_NEW;
    return GN_OK;
}

gn_status gn__cf_new_const(cf_state *s, const char *base, const char *suffix, uint32_t device, int32_t dtype,
                           Tensorflow__TensorProto *value, gn_id *out)
{
    char *name = cf_name(s, "ConstantFolding", base, suffix);
    if (!name) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(add_node(s, name, "Const", device, out));
    return set_const_attrs(s, *out, dtype, value);
}

gn_status gn__cf_ctrl_anchor(cf_state *s, gn__edge e, gn_id *out)
{
    cf_kind k = gn__cf_kind(s, e.node);
    if (k != K_SWITCH && k != K_REF_SWITCH) {
        *out = e.node;
        return GN_OK;
    }
    /* Grappler's AddControlDependency: only one Switch output is live, so hang the
     * dependency on an Identity of the port, "ConstantFoldingCtrl/<switch>_<port>". */
    char suffix[32];
    snprintf(suffix, sizeof suffix, "_%u", e.index);
    const char *sw = gn__node_name(s->g, e.node);
    size_t need = strlen(sw) + 64;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    snprintf(want, need, "ConstantFoldingCtrl/%s%s", sw, suffix);
    gn_id ex = gn__graph_find(s->g, want);
    if (ex != GN_NONE) {
        const gn__node *a = gn__node_at(s->g, ex);
        if (a->n_in >= 1 && a->in[0].node == e.node && a->in[0].index == e.index &&
            gn__cf_kind(s, ex) == K_IDENTITY) {
            *out = ex;
            return GN_OK;
        }
    }
    char *name = cf_name(s, "ConstantFoldingCtrl", sw, suffix);
    if (!name) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    gn_id id;
    GN_TRY(add_node(s, name, "Identity", gn__node_at(s->g, e.node)->device, &id));
    const Tensorflow__AttrValue *t = gn__node_attr(s->g, e.node, "T");
    if (t) GN_TRY(gn__node_set_attr(s->g, id, "T", t));
    GN_TRY(gn__node_add_input(s->g, id, e));
    *out = id;
    return GN_OK;
}

gn_id *gn__cf_scratch(cf_state *s, uint32_t n)
{
    if (n > s->cap_scratch) {
        uint32_t cap = s->cap_scratch ? s->cap_scratch : 16;
        while (cap < n) cap *= 2;
        gn_id *b = realloc(s->scratch_ids, (size_t)cap * sizeof *b);
        if (!b) return NULL;
        s->scratch_ids = b;
        s->cap_scratch = cap;
    }
    return s->scratch_ids;
}

gn_status gn__cf_inputs_to_controls(cf_state *s, gn_id id, uint32_t from)
{
    gn_graph *g = s->g;
    gn__node *n = gn__node_at(g, id);
    if (from >= n->n_in) return GN_OK;
    uint32_t nd = n->n_in - from, nc = n->n_ctrl;
    /* a private copy: anchors may add nodes (and move the node array) */
    gn__edge *moved = gn__arena_alloc(&s->arena, nd * sizeof *moved, _Alignof(gn__edge));
    gn_id *old = gn__arena_alloc(&s->arena, (nc ? nc : 1) * sizeof *old, _Alignof(gn_id));
    if (!moved || !old) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    if (nd) memcpy(moved, n->in + from, nd * sizeof *moved);
    if (nc) memcpy(old, n->ctrl, nc * sizeof *old);
    while (gn__node_at(g, id)->n_in > from) GN_TRY(gn__node_remove_input(g, id, gn__node_at(g, id)->n_in - 1));
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_remove_control(g, id, old[i]));
    for (uint32_t i = 0; i < nd; i++) {
        gn_id a;
        GN_TRY(gn__cf_ctrl_anchor(s, moved[i], &a));
        GN_TRY(gn__node_add_control(g, id, a));
    }
    for (uint32_t i = 0; i < nc; i++) GN_TRY(gn__node_add_control(g, id, old[i]));
    return GN_OK;
}

gn_status gn__cf_permute_inputs(cf_state *s, gn_id id, const uint32_t *perm, uint32_t n)
{
    gn__node *nd = gn__node_at(s->g, id);
    gn__edge *old = gn__arena_alloc(&s->arena, (n ? n : 1) * sizeof *old, _Alignof(gn__edge));
    if (!old) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    if (n) memcpy(old, nd->in, n * sizeof *old);
    for (uint32_t i = 0; i < n; i++) GN_TRY(gn__node_set_input(s->g, id, i, old[perm[i]]));
    return GN_OK;
}

static void after_op_change(cf_state *s, gn_id id)
{
    if (id < s->cap_fl) s->fl[id] &= (uint16_t)~(CF_NOFOLD | CF_ZCHK | CF_ZERO | CF_ONE | CF_REPORTED);
    gn__cf_enqueue(s, id);
    gn__cf_enqueue_consumers(s, id);
}

/* Data input k of id (of nin) swapped with input 0. */
static gn_status input_to_front(cf_state *s, gn_id id, uint32_t k, uint32_t nin)
{
    if (k == 0) return GN_OK;
    uint32_t *perm = gn__arena_alloc(&s->arena, nin * sizeof *perm, _Alignof(uint32_t));
    if (!perm) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < nin; i++) perm[i] = i;
    perm[0] = k;
    perm[k] = 0;
    return gn__cf_permute_inputs(s, id, perm, nin);
}

gn_status gn__cf_to_identity(cf_state *s, gn_id id, uint32_t k, bool snapshot, bool *done)
{
    *done = false;
    gn__node *n = gn__node_at(s->g, id);
    if (k >= n->n_in) return GN_OK;
    int32_t dt = gn__cf_node_dtype(s, id);
    if (!dt) return GN_OK;
    uint32_t nin = n->n_in;
    GN_TRY(input_to_front(s, id, k, nin));
    GN_TRY(gn__cf_inputs_to_controls(s, id, 1));
    GN_TRY(gn__cf_clear_attrs(s, id, true));
    GN_TRY(gn__node_set_op(s->g, id, snapshot && s->use_snapshot ? "Snapshot" : "Identity"));
    Tensorflow__AttrValue *t = gn__cf_attr_type(s, dt);
    if (!t) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(gn__node_set_attr(s->g, id, "T", t));
    after_op_change(s, id);
    *done = true;
    return GN_OK;
}

gn_status gn__cf_to_constant(cf_state *s, gn_id id, double value, const gn__shape *shape, bool *done)
{
    *done = false;
    int32_t dt = gn__cf_node_dtype(s, id);
    if (!dt || dt == DT(VARIANT)) return GN_OK;
    Tensorflow__TensorProto *p;
    gn_status st = gn__cf_fill_proto(s, dt, value, shape, &p);
    if (st == GN_ERR_UNSUPPORTED) return GN_OK;
    GN_TRY(st);
    GN_TRY(gn__cf_inputs_to_controls(s, id, 0));
    GN_TRY(gn__cf_make_const(s, id, dt, p, true));
    after_op_change(s, id);
    *done = true;
    return GN_OK;
}

gn_status gn__cf_to_broadcast(cf_state *s, gn_id id, uint32_t k, bool *done)
{
    *done = false;
    int32_t dt = gn__cf_node_dtype(s, id);
    if (!dt) return GN_OK;
    gn__tinfo o = gn__cf_out_info(s, id, 0);
    if (!gn__shape_fully_defined(&o.shape)) return GN_OK;
    gn__node *n = gn__node_at(s->g, id);
    if (k >= n->n_in) return GN_OK;
    char suffix[48];
    snprintf(suffix, sizeof suffix, "-broadcastto_shape-%u", k);
    const char *nm = gn__node_name(s->g, id);
    size_t need = strlen(nm) + 80;
    char *want = gn__arena_alloc(&s->arena, need, 1);
    if (!want) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    snprintf(want, need, "ConstantFolding/%s%s", nm, suffix);
    if (gn__graph_find(s->g, want) != GN_NONE) return GN_OK;
    int32_t vals[GN__MAX_RANK];
    for (int32_t i = 0; i < o.shape.rank; i++) {
        if (o.shape.dims[i] >= INT32_MAX) return GN_OK;
        vals[i] = (int32_t)o.shape.dims[i];
    }
    gn__tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT(INT32);
    t.rank = 1;
    t.dims[0] = o.shape.rank;
    t.data = vals;
    t.nbytes = (size_t)o.shape.rank * sizeof(int32_t);
    Tensorflow__TensorProto *p;
    size_t enc;
    GN_TRY(gn__cf_encode(s, &t, &p, &enc));
    gn_id c;
    GN_TRY(gn__cf_new_const(s, nm, suffix, gn__node_at(s->g, id)->device, DT(INT32), p, &c));
    /* the shape constant runs when the other inputs would have */
    n = gn__node_at(s->g, id);
    uint32_t nin = n->n_in, nctl = n->n_ctrl;
    for (uint32_t i = 0; i < nin; i++) {
        if (i == k) continue;
        gn_id a;
        GN_TRY(gn__cf_ctrl_anchor(s, gn__node_at(s->g, id)->in[i], &a));
        GN_TRY(gn__node_add_control(s->g, c, a));
    }
    for (uint32_t i = 0; i < nctl; i++) GN_TRY(gn__node_add_control(s->g, c, gn__node_at(s->g, id)->ctrl[i]));
    GN_TRY(input_to_front(s, id, k, nin));
    GN_TRY(gn__cf_inputs_to_controls(s, id, 1));
    GN_TRY(gn__node_add_input(s->g, id, (gn__edge){c, 0}));
    GN_TRY(gn__cf_clear_attrs(s, id, true));
    GN_TRY(gn__node_set_op(s->g, id, "BroadcastTo"));
    Tensorflow__AttrValue *ta = gn__cf_attr_type(s, dt), *ti = gn__cf_attr_type(s, DT(INT32));
    if (!ta || !ti) return gn__fail(s->c->err, GN_ERR_NOMEM, "out of memory");
    GN_TRY(gn__node_set_attr(s->g, id, "T", ta));
    GN_TRY(gn__node_set_attr(s->g, id, "Tidx", ti));
    after_op_change(s, id);
    *done = true;
    return GN_OK;
}

gn_status gn__cf_rewire_port(cf_state *s, gn_id id, uint32_t port, gn__edge to)
{
    GN_TRY(gn__graph_forward_output(s->g, (gn__edge){id, port}, to));
    gn__cf_enqueue_consumers(s, to.node);
    return GN_OK;
}
