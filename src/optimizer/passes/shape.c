/* Shape optimizer: arithmetic on tensor sizes rewritten from inferred shapes.
 *   shape.prod_of_shape  Prod(Shape(x), axes), axes of exactly one element and
 *                        keep_dims false -> Size(x) (same node name; out_type
 *                        the Prod's T; placed on the Shape's device)
 *   shape.size_ratio     Div(Size(a), Size(b)) (also FloorDiv / TruncateDiv)
 *                        -> an int32/int64 Const when the shapes of a and b
 *                        make the ratio a known integer: unknown dims cancel
 *                        when they are provably the same dim
 * Needs shapes (gn__graph_infer_shapes); never changes numerics (an int
 * division of sizes that would divide by zero becomes a constant, as in
 * Grappler).
 * Grappler: tensorflow/core/grappler/optimizers/shape_optimizer.cc (docs/reference_grappler.md §3.7),
 * with the ratio of tensorflow/core/grappler/utils/symbolic_shapes.cc ComputeSizeRatio.
 *
 * Symbolic dims: TensorFlow's shape inference gives every unknown dim a
 * symbol, shared where a shape function passes a dim through. Our inference
 * records -1 only, so this pass derives symbols itself for the tensors a
 * candidate needs: walking back (explicit stack, memoized) through ops whose
 * output dims are their inputs' dims (identity-like and unary elementwise
 * ops, BiasAdd, AddN, ClipByValue, broadcasting binary ops, reductions with
 * constant axes, MatMul, Transpose with a constant permutation); any other
 * op's unknown dims get fresh symbols. A dim inference knows always wins.
 *
 * Differences from Grappler, all in the direction of doing more: a Prod
 * rewritten in this run may serve as the Size of a Div in the same run
 * (Grappler sees it in the next iteration); the rewritten Size depends on the
 * old Shape only when the Shape has control inputs (otherwise Size(x) already
 * waits for what Shape(x) waited for); the Const that replaces a Div keeps
 * control edges from the two Size nodes only when the graph has v1 loops
 * (a constant inside a loop frame must stay anchored to it); Shape, Size and
 * Const nodes left without consumers (and not preserved) are removed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_shape[] = {
    {"shape.prod_of_shape", "Prod(Shape(x)) over its only axis -> Size(x)"},
    {"shape.size_ratio", "Div(Size(a), Size(b)) -> constant when the shapes of a and b fix the ratio"},
    {NULL, NULL},
};

/* ---- symbolic shapes -------------------------------------------------------------- */
typedef struct sshape {
    int32_t rank;            /* -1 unknown */
    const int64_t *d;        /* >= 0 known, <= -2 a symbol */
} sshape;

enum { K_OPAQUE, K_SAME0, K_SAME_PORT, K_BCAST, K_REDUCE, K_MATMUL, K_TRANSPOSE };

typedef struct symtab {
    const gn_graph *g;
    gn__err *err;
    gn__arena arena;
    uint32_t n;
    sshape **out;            /* per node, nout[i] entries once done */
    uint32_t *nout;
    uint8_t *state;          /* 0 new, 1 expanding, 2 done */
    int64_t next;            /* next fresh symbol: -2, -3, ... */
    gn_id *stack;
    uint32_t sp, cap;
} symtab;

static const char *const reduce_ops[] = {"All", "Any", "EuclideanNorm", "Max", "Mean", "Min", "Prod", "Sum", NULL};

static bool op_in(const char *op, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(op, list[i]) == 0) return true;
    return false;
}

static int sym_kind(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    const char *op = gn__node_op(g, id);
    const gn__opdef *d = n->opdef >= 0 ? gn__node_opdef(g, id) : NULL;
    if (!d || n->n_in == 0) return K_OPAQUE;
    if (strcmp(op, "IdentityN") == 0) return K_SAME_PORT;
    if ((d->traits & GN__T_IDENTITY_LIKE) || ((d->traits & GN__T_ELEMENTWISE) && (d->traits & GN__T_UNARY)))
        return K_SAME0;
    if (!strcmp(op, "Cast") || !strcmp(op, "BiasAdd") || !strcmp(op, "BiasAddV1") || !strcmp(op, "AddN") ||
        !strcmp(op, "ClipByValue"))
        return K_SAME0;
    if ((d->traits & GN__T_ELEMENTWISE) && (d->traits & GN__T_BINARY) && n->n_in == 2) return K_BCAST;
    if (op_in(op, reduce_ops) && n->n_in == 2) return K_REDUCE;
    if (!strcmp(op, "MatMul") && n->n_in == 2) return K_MATMUL;
    if (!strcmp(op, "Transpose") && n->n_in == 2) return K_TRANSPOSE;
    return K_OPAQUE;
}

static int64_t *sym_dims(symtab *t, int32_t rank)
{
    return gn__arena_alloc(&t->arena, (size_t)(rank > 0 ? rank : 1) * sizeof(int64_t), 8);
}

static sshape sym_unknown(void)
{
    sshape s = {-1, NULL};
    return s;
}

/* What inference says, unknown dims as fresh symbols. */
static bool sym_from_base(symtab *t, const gn__tinfo *base, sshape *out)
{
    if (!base || base->shape.rank < 0) {
        *out = sym_unknown();
        return true;
    }
    int64_t *d = sym_dims(t, base->shape.rank);
    if (!d) return false;
    for (int32_t i = 0; i < base->shape.rank; i++) d[i] = base->shape.dims[i] >= 0 ? base->shape.dims[i] : t->next--;
    out->rank = base->shape.rank;
    out->d = d;
    return true;
}

/* Derived shape refined by inference (a known dim wins). */
static bool sym_merge(symtab *t, sshape derived, const gn__tinfo *base, sshape *out)
{
    if (derived.rank < 0 || (base && base->shape.rank >= 0 && base->shape.rank != derived.rank))
        return sym_from_base(t, base, out);
    int64_t *d = sym_dims(t, derived.rank);
    if (!d) return false;
    for (int32_t i = 0; i < derived.rank; i++) {
        int64_t b = base && base->shape.rank >= 0 ? base->shape.dims[i] : -1;
        d[i] = b >= 0 ? b : derived.d[i];
    }
    out->rank = derived.rank;
    out->d = d;
    return true;
}

static sshape sym_in(const symtab *t, gn__edge e)
{
    if (t->state[e.node] != 2 || e.index >= t->nout[e.node]) return sym_unknown();
    return t->out[e.node][e.index];
}

/* Known values of a small int tensor (all elements), or NULL. */
static const gn__partial_value *known_value(const gn_graph *g, gn__edge e)
{
    const gn__tinfo *ti = gn__shape_of(g, e.node, e.index);
    if (!ti || !ti->value) return NULL;
    for (int64_t i = 0; i < ti->value->n; i++)
        if (!ti->value->known[i]) return NULL;
    return ti->value;
}

static bool sym_bcast(symtab *t, sshape a, sshape b, sshape *out)
{
    if (a.rank < 0 || b.rank < 0) {
        *out = sym_unknown();
        return true;
    }
    int32_t r = a.rank > b.rank ? a.rank : b.rank;
    int64_t *d = sym_dims(t, r);
    if (!d) return false;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a.rank), ib = i - (r - b.rank);
        int64_t x = ia >= 0 ? a.d[ia] : 1, y = ib >= 0 ? b.d[ib] : 1;
        if (x == y || y == 1) d[i] = x;
        else if (x == 1) d[i] = y;
        else if (x >= 0 && y < 0) d[i] = x;   /* y must be 1 or x */
        else if (y >= 0 && x < 0) d[i] = y;
        else if (x >= 0 && y >= 0) {
            *out = sym_unknown();             /* incompatible: leave it to inference */
            return true;
        } else d[i] = t->next--;              /* two different symbols: either one */
    }
    out->rank = r;
    out->d = d;
    return true;
}

static bool sym_reduce(symtab *t, gn_id id, sshape a, sshape *out)
{
    const gn__node *n = gn__node_at(t->g, id);
    const gn__partial_value *ax = known_value(t->g, n->in[1]);
    *out = sym_unknown();
    if (a.rank < 0 || !ax || a.rank > GN__MAX_RANK) return true;
    bool keep = false;
    gn__attr_get_bool(t->g, id, "keep_dims", &keep);
    uint8_t red[GN__MAX_RANK];
    memset(red, 0, sizeof red);
    for (int64_t i = 0; i < ax->n; i++) {
        int64_t k = ax->v[i] < 0 ? ax->v[i] + a.rank : ax->v[i];
        if (k < 0 || k >= a.rank) return true;
        red[k] = 1;
    }
    int32_t r = 0;
    for (int32_t i = 0; i < a.rank; i++) r += keep || !red[i];
    int64_t *d = sym_dims(t, r);
    if (!d) return false;
    int32_t j = 0;
    for (int32_t i = 0; i < a.rank; i++) {
        if (!red[i]) d[j++] = a.d[i];
        else if (keep) d[j++] = 1;
    }
    out->rank = r;
    out->d = d;
    return true;
}

static bool sym_matmul(symtab *t, gn_id id, sshape a, sshape b, sshape *out)
{
    *out = sym_unknown();
    if (a.rank != 2 || b.rank != 2) return true;
    bool ta = false, tb = false;
    gn__attr_get_bool(t->g, id, "transpose_a", &ta);
    gn__attr_get_bool(t->g, id, "transpose_b", &tb);
    int64_t *d = sym_dims(t, 2);
    if (!d) return false;
    d[0] = ta ? a.d[1] : a.d[0];
    d[1] = tb ? b.d[0] : b.d[1];
    out->rank = 2;
    out->d = d;
    return true;
}

static bool sym_transpose(symtab *t, gn_id id, sshape a, sshape *out)
{
    const gn__partial_value *p = known_value(t->g, gn__node_at(t->g, id)->in[1]);
    *out = sym_unknown();
    if (a.rank < 0 || !p || p->n != a.rank) return true;
    int64_t *d = sym_dims(t, a.rank);
    if (!d) return false;
    for (int32_t i = 0; i < a.rank; i++) {
        if (p->v[i] < 0 || p->v[i] >= a.rank) return true;
        d[i] = a.d[p->v[i]];
    }
    out->rank = a.rank;
    out->d = d;
    return true;
}

static gn_status sym_compute(symtab *t, gn_id id)
{
    const gn_graph *g = t->g;
    const gn__node *n = gn__node_at(g, id);
    uint32_t nout = gn__shape_num_outputs(g, id);
    if (nout == 0) nout = 1;
    sshape *o = gn__arena_alloc(&t->arena, nout * sizeof *o, 8);
    if (!o) return gn__fail(t->err, GN_ERR_NOMEM, "out of memory");
    int kind = sym_kind(g, id);
    for (uint32_t p = 0; p < nout; p++) {
        const gn__tinfo *base = gn__shape_of(g, id, p);
        sshape der = sym_unknown();
        bool ok = true;
        if (kind == K_SAME_PORT) {
            if (p < n->n_in) der = sym_in(t, n->in[p]);
        } else if (p == 0) {
            switch (kind) {
            case K_SAME0: der = sym_in(t, n->in[0]); break;
            case K_BCAST: ok = sym_bcast(t, sym_in(t, n->in[0]), sym_in(t, n->in[1]), &der); break;
            case K_REDUCE: ok = sym_reduce(t, id, sym_in(t, n->in[0]), &der); break;
            case K_MATMUL: ok = sym_matmul(t, id, sym_in(t, n->in[0]), sym_in(t, n->in[1]), &der); break;
            case K_TRANSPOSE: ok = sym_transpose(t, id, sym_in(t, n->in[0]), &der); break;
            default: break;
            }
        }
        if (!ok || !sym_merge(t, der, base, &o[p])) return gn__fail(t->err, GN_ERR_NOMEM, "out of memory");
    }
    t->out[id] = o;
    t->nout[id] = nout;
    t->state[id] = 2;
    return GN_OK;
}

static gn_status sym_push(symtab *t, gn_id id)
{
    if (t->sp == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        gn_id *s = realloc(t->stack, cap * sizeof *s);
        if (!s) return gn__fail(t->err, GN_ERR_NOMEM, "out of memory");
        t->stack = s;
        t->cap = cap;
    }
    t->stack[t->sp++] = id;
    return GN_OK;
}

/* Symbolic shape of tensor e, computing what it depends on first (no recursion). */
static gn_status sym_get(symtab *t, gn__edge e, sshape *out)
{
    if (t->state[e.node] != 2) {
        GN_TRY(sym_push(t, e.node));
        while (t->sp) {
            gn_id x = t->stack[t->sp - 1];
            if (t->state[x] == 2) {
                t->sp--;
                continue;
            }
            if (t->state[x] == 0) {
                t->state[x] = 1;
                const gn__node *n = gn__node_at(t->g, x);
                int kind = sym_kind(t->g, x);
                uint32_t deps = kind == K_OPAQUE ? 0 : kind == K_SAME_PORT ? n->n_in
                                : (kind == K_BCAST || kind == K_MATMUL) ? 2 : 1;
                for (uint32_t k = 0; k < deps && k < n->n_in; k++)
                    if (t->state[n->in[k].node] == 0) GN_TRY(sym_push(t, n->in[k].node));
                continue;
            }
            /* expanding: its inputs are done (or on a cycle, then unknown) */
            t->sp--;
            GN_TRY(sym_compute(t, x));
        }
    }
    *out = sym_in(t, e);
    return GN_OK;
}

/* ComputeSizeRatio: num/den when every symbol of b cancels one of a and none of a is left. */
static int64_t size_ratio(sshape a, sshape b)
{
    if (a.rank < 0 || b.rank < 0 || a.rank > GN__MAX_RANK) return -1;
    uint8_t used[GN__MAX_RANK];
    memset(used, 0, sizeof used);
    int64_t num = 1, den = 1;
    for (int32_t i = 0; i < a.rank; i++)
        if (a.d[i] >= 0) {
            if (a.d[i] > 0 && num > INT64_MAX / a.d[i]) return -1;
            num *= a.d[i];
        }
    for (int32_t j = 0; j < b.rank; j++) {
        if (b.d[j] >= 0) {
            if (b.d[j] > 0 && den > INT64_MAX / b.d[j]) return -1;
            den *= b.d[j];
            continue;
        }
        int32_t i = 0;
        while (i < a.rank && (used[i] || a.d[i] != b.d[j])) i++;
        if (i == a.rank) return -1;
        used[i] = 1;
    }
    for (int32_t i = 0; i < a.rank; i++)
        if (a.d[i] < 0 && !used[i]) return -1;
    if (den == 0) return -1;
    return num / den;
}

static const char *sym_str(sshape s, char *buf, size_t n)
{
    if (s.rank < 0) {
        snprintf(buf, n, "<unknown rank>");
        return buf;
    }
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int32_t i = 0; i < s.rank && k < n; i++) {
        if (s.d[i] >= 0) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "", (long long)s.d[i]);
        else k += (size_t)snprintf(buf + k, n - k, "%s?s%lld", i ? "," : "", (long long)(-s.d[i] - 1));
    }
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

/* ---- the pass ----------------------------------------------------------------------- */
typedef struct prod_rw {
    gn_id prod, shape;
    bool ok;
} prod_rw;

typedef struct div_rw {
    gn_id div, size[2];
    int64_t value;
    int32_t dtype;
} div_rw;

static bool is_int_type(int t) { return t == TENSORFLOW__DATA_TYPE__DT_INT32 || t == TENSORFLOW__DATA_TYPE__DT_INT64; }

static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

static bool is_div(const gn_graph *g, gn_id id)
{
    return op_is(g, id, "Div") || op_is(g, id, "FloorDiv") || op_is(g, id, "TruncateDiv");
}

/* Prod node id reading Shape:0 as its data input 0, or GN_NONE. */
static gn_id shape_of_prod(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    if (n->n_in != 2 || !op_is(g, id, "Prod")) return GN_NONE;
    gn__edge e = n->in[0];
    if (e.index != 0 || !op_is(g, e.node, "Shape") || gn__node_at(g, e.node)->n_in != 1) return GN_NONE;
    return e.node;
}

/* Output 0 of a Size, or of a Prod(Shape(x)) that may become one. */
static bool size_like(const gn_graph *g, gn__edge e)
{
    return e.index == 0 && (op_is(g, e.node, "Size") || shape_of_prod(g, e.node) != GN_NONE);
}

static bool keep_node(const gn__pass_ctx *c, const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    if (n->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return true;
    const gn__function *f = c->fn_name && c->lib ? gn__graph_find_function(c->lib, c->fn_name) : NULL;
    for (uint32_t k = 0; f && f->body == g && k < f->n_control_ret; k++)
        if (f->control_ret_node[k] == id) return true;
    return false;
}

/* Removes id when it is a Shape, Size or Const nobody uses (and not kept);
 * then its producers, by the same rule (explicit worklist). */
static gn_status drop_orphans(gn__pass_ctx *c, gn_graph *g, gn_id start)
{
    gn_id *work = NULL;
    uint32_t n = 0, cap = 0;
    gn_status st = GN_OK;
    gn_id id = start;
    for (;;) {
        const gn__node *nd = gn__node_at(g, id);
        if (gn__node_live(g, id) && nd->n_use == 0 && nd->n_cuse == 0 && !keep_node(c, g, id) &&
            (op_is(g, id, "Shape") || op_is(g, id, "Size") || op_is(g, id, "Const"))) {
            uint32_t need = n + nd->n_in + nd->n_ctrl;
            if (need > cap) {
                cap = need * 2;
                gn_id *w = realloc(work, cap * sizeof *w);
                if (!w) {
                    st = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
                    break;
                }
                work = w;
            }
            for (uint32_t k = 0; k < nd->n_in; k++) work[n++] = nd->in[k].node;
            for (uint32_t k = 0; k < nd->n_ctrl; k++) work[n++] = nd->ctrl[k];
            st = gn__node_remove(g, id);
            if (st != GN_OK) break;
        }
        if (!n) break;
        id = work[--n];
    }
    free(work);
    return st;
}

static gn_status apply_prod(gn__pass_ctx *c, gn_graph *g, const prod_rw *r)
{
    gn_id p = r->prod, sh = r->shape;
    const gn__node *shn = gn__node_at(g, sh);
    gn__edge x = shn->in[0];
    bool anchor = shn->n_ctrl > 0;
    uint32_t dev = shn->device;
    const Tensorflow__AttrValue *out_type = gn__node_attr(g, p, "T");
    const Tensorflow__AttrValue *xtype = gn__node_attr(g, sh, "T");
    gn_id axes = gn__node_at(g, p)->in[1].node;
    GN_TRY(gn__node_set_input(g, p, 0, x));
    GN_TRY(gn__node_remove_input(g, p, 1));
    if (anchor) GN_TRY(gn__node_add_control(g, p, sh));
    GN_TRY(gn__node_set_op(g, p, "Size"));
    GN_TRY(gn__node_remove_attr(g, p, "Tidx"));
    GN_TRY(gn__node_remove_attr(g, p, "keep_dims"));
    GN_TRY(gn__node_set_attr(g, p, "out_type", out_type));
    GN_TRY(gn__node_set_attr(g, p, "T", xtype));
    g->nodes[p].device = dev;
    gn__pass_rewrote(c, "shape.prod_of_shape", g, p, "'%s' = Prod(Shape('%s')) is now Size('%s')", gn__node_name(g, p),
                     gn__node_name(g, x.node), gn__node_name(g, x.node));
    c->changed = true;
    GN_TRY(drop_orphans(c, g, sh));
    return drop_orphans(c, g, axes);
}

static gn_status apply_div(gn__pass_ctx *c, gn_graph *g, const div_rw *r, bool anchor)
{
    gn_id d = r->div;
    Tensorflow__AttrValue *av = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
    Tensorflow__TensorProto *tp = gn__graph_value_alloc(g, sizeof *tp);
    Tensorflow__TensorShapeProto *sp = gn__graph_value_alloc(g, sizeof *sp);
    void *val = gn__graph_value_alloc(g, sizeof(int64_t));
    if (!av || !tp || !sp || !val) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    tensorflow__tensor_proto__init(tp);
    tensorflow__tensor_shape_proto__init(sp);
    tp->dtype = (Tensorflow__DataType)r->dtype;
    tp->tensor_shape = sp;
    if (r->dtype == TENSORFLOW__DATA_TYPE__DT_INT32) {
        *(int32_t *)val = (int32_t)r->value;
        tp->n_int_val = 1;
        tp->int_val = val;
    } else {
        *(int64_t *)val = r->value;
        tp->n_int64_val = 1;
        tp->int64_val = val;
    }
    av->tensor = tp;
    const Tensorflow__AttrValue *dtype = gn__node_attr(g, d, "T");
    GN_TRY(gn__node_remove_input(g, d, 1));
    GN_TRY(gn__node_remove_input(g, d, 0));
    if (anchor) {
        GN_TRY(gn__node_add_control(g, d, r->size[0]));
        GN_TRY(gn__node_add_control(g, d, r->size[1]));
    }
    GN_TRY(gn__node_set_op(g, d, "Const"));
    GN_TRY(gn__node_remove_attr(g, d, "T"));
    GN_TRY(gn__node_set_attr(g, d, "dtype", dtype));
    GN_TRY(gn__node_set_attr(g, d, "value", av));
    c->changed = true;
    GN_TRY(drop_orphans(c, g, r->size[0]));
    return drop_orphans(c, g, r->size[1]);
}

/* The tensor whose size node e computes: Size(x) -> x, or a Prod(Shape(x))
 * accepted for rewriting -> x. */
static bool size_operand(const gn_graph *g, gn__edge e, const uint8_t *prod_ok, gn__edge *x, gn_id *size_node)
{
    if (e.index != 0) return false;
    const gn__node *n = gn__node_at(g, e.node);
    if (op_is(g, e.node, "Size") && n->n_in == 1) {
        *x = n->in[0];
        *size_node = e.node;
        return true;
    }
    if (prod_ok[e.node]) {
        *x = gn__node_at(g, n->in[0].node)->in[0];
        *size_node = e.node;
        return true;
    }
    return false;
}

static gn_status ensure_shapes(gn__pass_ctx *c, gn_graph *g, gn_id probe, bool *ok)
{
    *ok = true;
    if (gn__graph_shapes(g) && gn__shape_of(g, probe, 0)) return GN_OK;
    gn_status st = gn__graph_infer_shapes(g);
    if (st == GN_OK) return GN_OK;
    if (st == GN_ERR_NOMEM) return gn__fail(c->err, st, "%s", g->err.msg);
    *ok = false;
    return GN_OK;
}

gn_status gn__pass_shape(gn__pass_ctx *c, gn_graph *g)
{
    bool want_prod = gn__pattern_enabled(c, "shape.prod_of_shape");
    bool want_div = gn__pattern_enabled(c, "shape.size_ratio");
    uint32_t N = g->n_nodes;
    /* quick exit, as Grappler's: nothing to look at */
    uint32_t n_prod = 0, n_div = 0;
    gn_id probe = GN_NONE;
    uint32_t op_enter = gn__intern_find(g, "Enter", 5), op_renter = gn__intern_find(g, "RefEnter", 8);
    bool loops = false;
    for (gn_id i = 0; i < N; i++) {
        if (!gn__node_live(g, i)) continue;
        if (g->nodes[i].op == op_enter || g->nodes[i].op == op_renter) loops = true;
        if (shape_of_prod(g, i) != GN_NONE) {
            n_prod++;
            if (probe == GN_NONE) probe = i;
        } else if (is_div(g, i) && gn__node_at(g, i)->n_in == 2 && size_like(g, gn__node_at(g, i)->in[0]) &&
                   size_like(g, gn__node_at(g, i)->in[1])) {
            n_div++;
            if (probe == GN_NONE) probe = i;
        }
    }
    if (!(n_prod && want_prod) && !(n_div && want_div)) return GN_OK;

    bool have_shapes;
    GN_TRY(ensure_shapes(c, g, probe, &have_shapes));
    gn_status st = GN_OK;
    prod_rw *prods = calloc(n_prod ? n_prod : 1, sizeof *prods);
    div_rw *divs = calloc(n_div ? n_div : 1, sizeof *divs);
    uint8_t *prod_ok = calloc(N ? N : 1, 1);
    symtab t;
    memset(&t, 0, sizeof t);
    gn__arena_init(&t.arena, 4096);
    if (!prods || !divs || !prod_ok) st = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    char why[GN__ERRMSG_MAX + 64];

    /* 1. which Prod(Shape(x)) become Size(x) (decided before any mutation:
     *    the shape table is dropped by the first edit) */
    uint32_t np = 0;
    for (gn_id i = 0; st == GN_OK && i < N; i++) {
        if (!gn__node_live(g, i)) continue;
        gn_id sh = shape_of_prod(g, i);
        if (sh == GN_NONE) continue;
        const char *pat = "shape.prod_of_shape";
        why[0] = 0;
        int pt = 0, xt = 0;
        bool keep = false;
        if (!gn__attr_get_type(g, i, "T", &pt) || !is_int_type(pt))
            snprintf(why, sizeof why, "Prod's T is not int32 or int64");
        else if (gn__attr_get_bool(g, i, "keep_dims", &keep) && keep)
            snprintf(why, sizeof why, "keep_dims is set: the result has shape [1], Size's is a scalar");
        else if (!gn__attr_get_type(g, sh, "T", &xt))
            snprintf(why, sizeof why, "Shape '%s' has no T attr", gn__node_name(g, sh));
        else if (!have_shapes)
            snprintf(why, sizeof why, "shape inference failed: %s", g->err.msg);
        else {
            gn__edge ax = gn__node_at(g, i)->in[1];
            const gn__tinfo *ti = gn__shape_of(g, ax.node, ax.index);
            int64_t ne = ti ? gn__shape_num_elements(&ti->shape) : -1;
            if (ne != 1) {
                char sb[64];
                snprintf(why, sizeof why, "the reduction indices have shape %s, not exactly one element",
                         ti ? gn__shape_str(&ti->shape, sb, sizeof sb) : "<unknown>");
            }
        }
        if (!want_prod) continue;
        if (why[0]) {
            gn__pass_refused(c, pat, g, i, "'%s' = Prod(Shape('%s')) not rewritten: %s", gn__node_name(g, i),
                             gn__node_name(g, gn__node_at(g, sh)->in[0].node), why);
            continue;
        }
        prods[np].prod = i;
        prods[np].shape = sh;
        prods[np].ok = true;
        np++;
        prod_ok[i] = 1;
    }

    /* 2. which Div(Size(a), Size(b)) have a known value */
    uint32_t nd = 0;
    if (st == GN_OK && want_div && n_div) {
        t.g = g;
        t.err = c->err;
        t.n = N;
        t.next = -2;
        t.out = calloc(N ? N : 1, sizeof *t.out);
        t.nout = calloc(N ? N : 1, sizeof *t.nout);
        t.state = calloc(N ? N : 1, 1);
        if (!t.out || !t.nout || !t.state) st = gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    }
    for (gn_id i = 0; st == GN_OK && want_div && i < N; i++) {
        if (!gn__node_live(g, i) || !is_div(g, i) || gn__node_at(g, i)->n_in != 2) continue;
        if ((i & 1023) == 1023 && gn__pass_deadline_passed(c)) break;
        const gn__node *n = gn__node_at(g, i);
        gn__edge xa, xb;
        gn_id sa, sb;
        if (!size_operand(g, n->in[0], prod_ok, &xa, &sa) || !size_operand(g, n->in[1], prod_ok, &xb, &sb)) continue;
        const char *pat = "shape.size_ratio";
        int dt = 0;
        if (!gn__attr_get_type(g, i, "T", &dt) || !is_int_type(dt)) continue;
        if (!have_shapes) {
            gn__pass_refused(c, pat, g, i, "'%s' not rewritten: shape inference failed: %s", gn__node_name(g, i),
                             g->err.msg);
            continue;
        }
        sshape a, b;
        st = sym_get(&t, xa, &a);
        if (st == GN_OK) st = sym_get(&t, xb, &b);
        if (st != GN_OK) break;
        int64_t r = size_ratio(a, b);
        char s1[160], s2[160];
        if (r > INT32_MAX && dt == TENSORFLOW__DATA_TYPE__DT_INT32) {
            gn__pass_refused(c, pat, g, i, "'%s' not rewritten: the ratio %lld does not fit int32", gn__node_name(g, i),
                             (long long)r);
            continue;
        }
        if (r < 0) {
            gn__pass_refused(c, pat, g, i,
                             "'%s' = %s(Size('%s'), Size('%s')) not rewritten: the ratio of %s and %s is not known",
                             gn__node_name(g, i), gn__node_op(g, i), gn__node_name(g, xa.node),
                             gn__node_name(g, xb.node), sym_str(a, s1, sizeof s1), sym_str(b, s2, sizeof s2));
            continue;
        }
        divs[nd].div = i;
        divs[nd].size[0] = sa;
        divs[nd].size[1] = sb;
        divs[nd].value = r;
        divs[nd].dtype = dt;
        gn__pass_rewrote(c, pat, g, i, "'%s' = %s(Size('%s'), Size('%s')) is the constant %lld (shapes %s and %s)",
                         gn__node_name(g, i), gn__node_op(g, i), gn__node_name(g, xa.node), gn__node_name(g, xb.node),
                         (long long)r, sym_str(a, s1, sizeof s1), sym_str(b, s2, sizeof s2));
        nd++;
    }
    if (!have_shapes) gn__err_clear(&g->err);

    /* 3. edits */
    for (uint32_t k = 0; st == GN_OK && k < np; k++) st = apply_prod(c, g, &prods[k]);
    for (uint32_t k = 0; st == GN_OK && k < nd; k++) st = apply_div(c, g, &divs[k], loops);
    if (st != GN_OK && c->err && !c->err->msg[0] && g->err.msg[0]) gn__fail(c->err, st, "%s", g->err.msg);

    free(prods);
    free(divs);
    free(prod_ok);
    free(t.out);
    free(t.nout);
    free(t.state);
    free(t.stack);
    gn__arena_free(&t.arena);
    return st;
}
