/* Helpers of the arithmetic pass: op table, reporting, worklist, attrs, names,
 * node construction, constants, symbolic shapes, rewiring and dead nodes. The
 * driver (arithmetic.c) and the stages (arithmetic_stages_*.c) call them;
 * they call neither. See arithmetic.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/tensor.h"
#include "optimizer/passes/arithmetic_impl.h"

/* ---- op table ------------------------------------------------------------------------ */
typedef struct op_row {
    const char *name;
    uint32_t props;
} op_row;

#define IV GN__AR_IV
#define VS GN__AR_VS
#define VO GN__AR_VO
#define VP GN__AR_VP
#define UE GN__AR_UE
#define MI GN__AR_MI
#define MD GN__AR_MD
#define CL GN__AR_CL
#define FR GN__AR_FR
#define CF GN__AR_CF
#define SW GN__AR_SW
#define UF GN__AR_UF
#define UH GN__AR_UH
#define UD GN__AR_UD
#define BG GN__AR_BG
#define ROW(name, props) {#name, (props)},
static const op_row op_rows[] = {{"", 0}, GN__AR_OPS(ROW)};
#undef ROW
#undef IV
#undef VS
#undef VO
#undef VP
#undef UE
#undef MI
#undef MD
#undef CL
#undef FR
#undef CF
#undef SW
#undef UF
#undef UH
#undef UD
#undef BG

bool gn__ar_op_table_sorted(void)
{
    for (uint32_t i = 2; i < GN__AR_NOPS; i++)
        if (strcmp(op_rows[i - 1].name, op_rows[i].name) >= 0) return false;
    return true;
}

static uint32_t op_lookup(const char *s, size_t n)
{
    uint32_t lo = 1, hi = GN__AR_NOPS - 1;
    while (lo <= hi) {
        uint32_t mid = (lo + hi) / 2;
        const char *m = op_rows[mid].name;
        size_t ml = strlen(m);
        size_t k = ml < n ? ml : n;
        int c = memcmp(m, s, k);
        if (c == 0) c = (ml > n) - (ml < n);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return GN__AR_OP_NONE;
}

uint32_t gn__ar_op_slow(gn__ar *a, gn_id id)
{
    uint32_t o = a->g->nodes[id].op;
    if (o >= a->opc_cap) {
        uint32_t nc = a->opc_cap ? a->opc_cap : 256;
        while (nc <= o) nc *= 2;
        uint16_t *p = realloc(a->opc, (size_t)nc * sizeof *p);
        if (!p) return op_lookup(gn__str(a->g, o), gn__strlen(a->g, o));
        for (uint32_t i = a->opc_cap; i < nc; i++) p[i] = 0xffff;
        a->opc = p;
        a->opc_cap = nc;
    }
    if (a->opc[o] == 0xffff) a->opc[o] = (uint16_t)op_lookup(gn__str(a->g, o), gn__strlen(a->g, o));
    return a->opc[o];
}

uint32_t gn__ar_op_props(uint32_t op) { return op < GN__AR_NOPS ? op_rows[op].props : 0; }
uint32_t gn__ar_props(gn__ar *a, gn_id id) { return op_rows[gn__ar_op(a, id)].props; }

/* ---- reporting ------------------------------------------------------------------------ */
void gn__ar_rewrote(gn__ar *a, int pat, gn_id n, const char *fmt, ...)
{
    a->c->changed = true;
    a->rewrites++;
    if (!a->c->report) return;
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gn__pass_rewrote(a->c, a->pid[pat], a->g, n, "%s", buf);
}

void gn__ar_refuse(gn__ar *a, int pat, gn_id n, const char *fmt, ...)
{
    if (n < a->cap) {
        uint64_t bit = 1ull << pat;
        if (a->refused[n] & bit) return;
        a->refused[n] |= bit;
    }
    if (!a->c->report) return;
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    gn__pass_refused(a->c, a->pid[pat], a->g, n, "%s", buf);
}

/* ---- per-node arrays and the worklist --------------------------------------------------- */
gn_status gn__ar_grow(gn__ar *a)
{
    uint32_t need = a->g->n_nodes;
    if (need <= a->cap) return GN_OK;
    uint32_t nc = a->cap ? a->cap : 64;
    while (nc < need) nc *= 2;
    uint8_t *f = realloc(a->flags, nc);
    if (f) a->flags = f;
    uint64_t *rf = realloc(a->refused, (size_t)nc * sizeof *rf);
    if (rf) a->refused = rf;
    uint32_t *ni = realloc(a->n_info, (size_t)nc * sizeof *ni);
    if (ni) a->n_info = ni;
    gn__ar_info **in = realloc(a->info, (size_t)nc * sizeof *in);
    if (in) a->info = in;
    uint8_t *tc = realloc(a->tc, nc);
    if (tc) a->tc = tc;
    if (!f || !rf || !ni || !in || !tc) return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory");
    memset(a->tc + a->cap, 0, nc - a->cap);
    memset(a->flags + a->cap, 0, nc - a->cap);
    memset(a->refused + a->cap, 0, (size_t)(nc - a->cap) * sizeof *rf);
    memset(a->n_info + a->cap, 0, (size_t)(nc - a->cap) * sizeof *ni);
    memset(a->info + a->cap, 0, (size_t)(nc - a->cap) * sizeof *in);
    a->cap = nc;
    return GN_OK;
}

gn_status gn__ar_push(gn__ar *a, gn_id id)
{
    if (id >= a->cap) GN_TRY(gn__ar_grow(a));
    if (a->flags[id] & GN__AR_INQ) return GN_OK;
    if (a->n_stack == a->cap_stack) {
        uint32_t nc = a->cap_stack ? a->cap_stack * 2 : 1024;
        gn_id *p = realloc(a->stack, (size_t)nc * sizeof *p);
        if (!p) return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory");
        a->stack = p;
        a->cap_stack = nc;
    }
    a->stack[a->n_stack++] = id;
    a->flags[id] |= GN__AR_INQ;
    return GN_OK;
}

/* ---- attrs -------------------------------------------------------------------------------- */
int32_t gn__ar_type_attr(const gn__ar *a, gn_id id, const char *key)
{
    int t = 0;
    bool cached = key[0] == 'T' && !key[1] && id < a->cap;
    if (cached && a->tc[id]) return a->tc[id] == 1 ? 0 : a->tc[id] - 2;
    int32_t r = gn__attr_get_type(a->g, id, key, &t) ? (int32_t)t : 0;
    if (cached && r >= 0 && r < 254) a->tc[id] = r ? (uint8_t)(r + 2) : 1;
    return r;
}

void gn__ar_forget_type(gn__ar *a, gn_id id)
{
    if (id < a->cap) a->tc[id] = 0;
}

int64_t gn__ar_int_attr(const gn__ar *a, gn_id id, const char *key, int64_t dflt)
{
    int64_t v;
    return gn__attr_get_int(a->g, id, key, &v) ? v : dflt;
}

bool gn__ar_bool_attr(const gn__ar *a, gn_id id, const char *key, bool dflt)
{
    bool v;
    return gn__attr_get_bool(a->g, id, key, &v) ? v : dflt;
}

int32_t gn__ar_dtype(gn__ar *a, gn__edge e)
{
    const gn__ar_info *t = gn__ar_info_of(a, e);
    if (t && t->dtype) return t->dtype;
    const gn__opdef *op = gn__node_opdef(a->g, e.node);
    return op ? gn__op_output_dtype(op, a->g, e.node, e.index) : 0;
}

static gn_status attr_nomem(gn__ar *a) { return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory"); }

/* The typed setters of graph/ir.h, forgetting what the pass knew of id's types. */
gn_status gn__ar_set_type(gn__ar *a, gn_id id, const char *key, int32_t dtype)
{
    gn__ar_forget_type(a, id);
    return gn__node_set_attr_type(a->g, id, key, dtype);
}

gn_status gn__ar_set_bool(gn__ar *a, gn_id id, const char *key, bool b)
{
    gn__ar_forget_type(a, id);
    return gn__node_set_attr_bool(a->g, id, key, b);
}

gn_status gn__ar_set_int(gn__ar *a, gn_id id, const char *key, int64_t i)
{
    gn__ar_forget_type(a, id);
    return gn__node_set_attr_int(a->g, id, key, i);
}

gn_status gn__ar_set_tensor(gn__ar *a, gn_id id, const char *key, const gn__tensor *t)
{
    Tensorflow__TensorProto *p = NULL;
    GN_TRY(gn__tensor_to_proto(t, gn__graph_value_allocator(a->g), &p, a->c->err));
    gn__ar_forget_type(a, id);
    return gn__node_set_attr_tensor(a->g, id, key, p);
}

gn_status gn__ar_set_strings(gn__ar *a, gn_id id, const char *key, const char *const *s, uint32_t n)
{
    gn__ar_forget_type(a, id);
    return gn__node_set_attr_strings(a->g, id, key, s, n);
}

/* ---- names ---------------------------------------------------------------------------------- */
static void name_base(gn__ar *a, gn_id base, const char *stage, const char *suffix)
{
    const char *nm = gn__node_name(a->g, base);
    const char *slash = strrchr(nm, '/');
    gn__buf *b = &a->name;
    b->len = 0;
    if (slash) gn__buf_append(b, nm, (size_t)(slash - nm + 1));
    gn__buf_printf(b, "ArithmeticOptimizer/%s_%s", stage, slash ? slash + 1 : nm);
    if (suffix && *suffix) gn__buf_printf(b, "_%s", suffix);
    gn__buf_putc(b, 0);
}

bool gn__ar_name_taken(gn__ar *a, gn_id base, const char *stage, const char *suffix)
{
    name_base(a, base, stage, suffix);
    return a->name.data && gn__graph_find(a->g, a->name.data) != GN_NONE;
}

const char *gn__ar_name(gn__ar *a, gn_id base, const char *stage, const char *suffix)
{
    name_base(a, base, stage, suffix);
    if (!a->name.data) return NULL;
    if (gn__graph_find(a->g, a->name.data) == GN_NONE) return a->name.data;
    size_t len = a->name.len - 1;
    for (uint32_t k = 1;; k++) {
        a->name.len = len;
        gn__buf_printf(&a->name, "_%u", k);
        gn__buf_putc(&a->name, 0);
        if (!a->name.data) return NULL;
        if (gn__graph_find(a->g, a->name.data) == GN_NONE) return a->name.data;
    }
}

/* ---- nodes ---------------------------------------------------------------------------------- */
gn_status gn__ar_add_node(gn__ar *a, const char *name, const char *op, gn_id device_of, gn_id *out)
{
    if (!name) return attr_nomem(a);
    gn_id id = GN_NONE;
    GN_TRY(gn__node_add(a->g, name, op, &id));
    a->g->nodes[id].device = device_of != GN_NONE ? a->g->nodes[device_of].device : 0;
    GN_TRY(gn__ar_grow(a));
    GN_TRY(gn__ar_push(a, id));
    *out = id;
    return GN_OK;
}

gn_status gn__ar_copy_node(gn__ar *a, gn_id src, const char *name, gn_id *out)
{
    if (!name) return attr_nomem(a);
    gn_graph *g = a->g;
    uint32_t nm = gn__intern_cstr(g, name);
    if (nm == UINT32_MAX) return attr_nomem(a);
    gn_id id = GN_NONE;
    GN_TRY(gn__node_add_interned(g, nm, g->nodes[src].op, &id));
    g->nodes[id].device = g->nodes[src].device;
    gn__ar_forget_type(a, id);
    for (uint32_t i = 0; i < g->nodes[src].n_attr; i++) {
        gn__attr at = g->nodes[src].attr[i];
        GN_TRY(gn__node_set_attr(g, id, gn__str(g, at.key), at.value));
    }
    for (uint32_t i = 0; i < g->nodes[src].n_in; i++) GN_TRY(gn__node_add_input(g, id, g->nodes[src].in[i]));
    for (uint32_t i = 0; i < g->nodes[src].n_ctrl; i++) GN_TRY(gn__node_add_control(g, id, g->nodes[src].ctrl[i]));
    GN_TRY(gn__ar_grow(a));
    GN_TRY(gn__ar_push(a, id));
    *out = id;
    return GN_OK;
}

gn_status gn__ar_set_op(gn__ar *a, gn_id id, const char *op) { return gn__node_set_op(a->g, id, op); }

static bool is_switch(gn__ar *a, gn_id id) { return (gn__ar_props(a, id) & GN__AR_SW) != 0; }

gn_status gn__ar_add_ctrl_on(gn__ar *a, gn_id id, gn__edge e)
{
    gn_graph *g = a->g;
    if (!is_switch(a, e.node)) return gn__node_add_control(g, id, e.node);
    /* an Identity reading that port, existing or new (Grappler's AddControlDependency) */
    gn__node *p = &g->nodes[e.node];
    for (uint32_t i = 0; i < p->n_use; i++) {
        gn_id u = p->use[i].node;
        if (g->nodes[u].in[p->use[i].slot].index != e.index) continue;
        if (gn__ar_op(a, u) == GN__AR_OP_Identity && g->nodes[u].n_in == 1 && g->nodes[u].device == p->device)
            return gn__node_add_control(g, id, u);
    }
    gn__buf nb;
    gn__buf_init(&nb);
    gn__buf_printf(&nb, "ConstantFoldingCtrl/%s_%u", gn__node_name(g, e.node), e.index);
    gn__buf_putc(&nb, 0);
    if (!nb.data) return attr_nomem(a);
    gn_id ident = gn__graph_find(g, nb.data);
    gn_status s = GN_OK;
    if (ident == GN_NONE || gn__ar_op(a, ident) != GN__AR_OP_Identity || g->nodes[ident].n_in != 1 ||
        g->nodes[ident].in[0].node != e.node || g->nodes[ident].in[0].index != e.index) {
        if (ident != GN_NONE) {
            /* the name is taken by something else: make a fresh one */
            size_t len = nb.len - 1;
            for (uint32_t k = 1;; k++) {
                nb.len = len;
                gn__buf_printf(&nb, "_%u", k);
                gn__buf_putc(&nb, 0);
                if (!nb.data || gn__graph_find(g, nb.data) == GN_NONE) break;
            }
            if (!nb.data) return attr_nomem(a);
        }
        int32_t dt = gn__ar_dtype(a, e);
        s = gn__ar_add_node(a, nb.data, "Identity", e.node, &ident);
        if (s == GN_OK) s = gn__node_add_input(g, ident, e);
        if (s == GN_OK && dt) s = gn__ar_set_type(a, ident, "T", dt);
        if (s == GN_OK) {
            const gn__ar_info *in = gn__ar_info_of(a, e);
            if (in) s = gn__ar_set_info(a, ident, in->dtype, &in->s);
        }
    }
    gn__buf_free(&nb);
    if (s != GN_OK) return s;
    return gn__node_add_control(g, id, ident);
}

gn_status gn__ar_forward_ctrl(gn__ar *a, gn_id dst, gn_id src)
{
    gn_graph *g = a->g;
    for (uint32_t i = 0; i < g->nodes[src].n_ctrl; i++) {
        gn_id d = g->nodes[src].ctrl[i];
        if (d != dst) GN_TRY(gn__node_add_control(g, dst, d));
    }
    return GN_OK;
}

gn_status gn__ar_add_const(gn__ar *a, const char *name, const gn__tensor *t, gn_id device_of, gn__edge anchor,
                           gn_id *out)
{
    gn_id id = GN_NONE;
    GN_TRY(gn__ar_add_node(a, name, "Const", device_of, &id));
    GN_TRY(gn__ar_set_type(a, id, "dtype", t->dtype));
    GN_TRY(gn__ar_set_tensor(a, id, "value", t));
    if (a->has_v1_cf && anchor.node != GN_NONE) GN_TRY(gn__ar_add_ctrl_on(a, id, anchor));
    int64_t dims[GN__MAX_DIMS];
    for (int32_t i = 0; i < t->rank; i++) dims[i] = t->dims[i];
    gn__ar_shape s = {t->rank, dims};
    GN_TRY(gn__ar_set_info(a, id, t->dtype, &s));
    *out = id;
    return GN_OK;
}

/* ---- consumers ---------------------------------------------------------------------------- */
bool gn__ar_single_consumer_node(const gn__ar *a, gn_id id)
{
    const gn__node *n = &a->g->nodes[id];
    gn_id only = GN_NONE;
    for (uint32_t i = 0; i < n->n_use; i++) {
        if (only == GN_NONE) only = n->use[i].node;
        else if (n->use[i].node != only) return false;
    }
    for (uint32_t i = 0; i < n->n_cuse; i++) {
        if (only == GN_NONE) only = n->cuse[i];
        else if (n->cuse[i] != only) return false;
    }
    return only != GN_NONE;
}

bool gn__ar_removable(gn__ar *a, gn_id id)
{
    const gn__node *n = &a->g->nodes[id];
    if (n->flags & (GN__NODE_DEAD | GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) return false;
    if (n->opdef < 0) return false;
    const gn__opdef *op = gn__op_at((uint32_t)n->opdef);
    if (!op || (op->flags & GN__OPF_STATEFUL)) return false;
    if (op->traits & (GN__T_CONTROL_FLOW | GN__T_FUNCTION_CALL)) return false;
    uint32_t code = gn__ar_op(a, id);
    if (code == GN__AR_OP_Placeholder || code == GN__AR_OP_PlaceholderV2 || code == GN__AR_OP_PlaceholderWithDefault)
        return false;
    for (uint16_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i].is_ref) return false;
    return true;
}

bool gn__ar_is_add(gn__ar *a, gn_id id)
{
    uint32_t op = gn__ar_op(a, id);
    if (op != GN__AR_OP_Add && op != GN__AR_OP_AddV2) return false;
    int32_t t = gn__ar_type_attr(a, id, "T");
    return t != 0 && t != GN__AR_STRING;
}

bool gn__ar_is_aggregate(gn__ar *a, gn_id id) { return gn__ar_op(a, id) == GN__AR_OP_AddN || gn__ar_is_add(a, id); }

bool gn__ar_vaos(gn__ar *a, gn_id id)
{
    if (a->g->nodes[id].n_in == 1 && gn__ar_is_aggregate(a, id)) return true;
    return (gn__ar_props(a, id) & GN__AR_VS) != 0;
}

bool gn__ar_value_preserving(gn__ar *a, gn_id id)
{
    if (a->g->nodes[id].n_in == 1 && gn__ar_is_aggregate(a, id)) return true;
    return (gn__ar_props(a, id) & GN__AR_VP) != 0;
}

bool gn__ar_unary_elementwise(gn__ar *a, gn_id id)
{
    return (gn__ar_props(a, id) & GN__AR_UE) != 0 || gn__ar_vaos(a, id);
}

bool gn__ar_free_of_side_effects(gn__ar *a, gn_id id)
{
    const gn__node *n = &a->g->nodes[id];
    if (n->opdef < 0) return false;
    const gn__opdef *op = gn__op_at((uint32_t)n->opdef);
    if (!op || (op->flags & GN__OPF_STATEFUL)) return false;
    uint32_t code = gn__ar_op(a, id);
    if (code == GN__AR_OP_Placeholder || code == GN__AR_OP_PlaceholderV2 || code == GN__AR_OP_PlaceholderWithDefault)
        return false;
    for (uint16_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i].is_ref) return false;
    const char *name = gn__node_op(a->g, id);
    if (strstr(name, "Queue") || strcmp(name, "_Send") == 0) return false;
    if (gn__ar_bool_attr(a, id, "in_place", false) || gn__ar_bool_attr(a, id, "inplace", false)) return false;
    return true;
}

bool gn__ar_idempotent(gn__ar *a, gn_id id)
{
    return gn__ar_vaos(a, id) && gn__ar_free_of_side_effects(a, id) && !(gn__ar_props(a, id) & GN__AR_FR);
}

/* ---- constants ---------------------------------------------------------------------------- */
bool gn__ar_const_node(gn__ar *a, gn_id id)
{
    return gn__ar_op(a, id) == GN__AR_OP_Const && !(a->g->nodes[id].flags & GN__NODE_PRESERVE);
}

bool gn__ar_const_tensor(gn__ar *a, gn_id id, gn__tensor *t)
{
    memset(t, 0, sizeof *t);
    if (!gn__ar_const_node(a, id)) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(a->g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    gn__err e;
    gn__err_clear(&e);
    /* read only: the value's own bytes when they have the tensor's layout */
    if (gn__tensor_view_proto(v->tensor, t, &e) != GN_OK) {
        memset(t, 0, sizeof *t);
        return false;
    }
    return true;
}

bool gn__ar_float_dtype(int32_t dt)
{
    return gn__dtype_is_float(dt);
}

static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static bool elem(const gn__tensor *t, int64_t i, double *re, double *im)
{
    *im = 0;
    const void *d = t->data;
    switch (t->dtype) {
    case GN__AR_F32: *re = ((const float *)d)[i]; return true;
    case GN__AR_F64: *re = ((const double *)d)[i]; return true;
    case GN__AR_F16: *re = (double)((const gn__f16 *)d)[i]; return true;
    case GN__AR_BF16: *re = bf16_to_f32(((const uint16_t *)d)[i]); return true;
    case GN__AR_I32: *re = ((const int32_t *)d)[i]; return true;
    case GN__AR_I64: *re = (double)((const int64_t *)d)[i]; return true;
    case GN__AR_I16: *re = ((const int16_t *)d)[i]; return true;
    case GN__AR_I8: *re = ((const int8_t *)d)[i]; return true;
    case GN__AR_U8: *re = ((const uint8_t *)d)[i]; return true;
    case GN__AR_C64:
        *re = ((const float *)d)[2 * i];
        *im = ((const float *)d)[2 * i + 1];
        return true;
    case GN__AR_C128:
        *re = ((const double *)d)[2 * i];
        *im = ((const double *)d)[2 * i + 1];
        return true;
    default: return false;
    }
}

bool gn__ar_all_equal(const gn__tensor *t, double *re, double *im)
{
    int64_t n = gn__tensor_numel(t);
    *re = *im = NAN;
    double r0 = 0, i0 = 0;
    if (n <= 0 || !elem(t, 0, &r0, &i0)) return false;
    /* Fast path: bit-identical elements (a different bit pattern for an equal
     * value, -0 against 0, only makes the answer a conservative "no"). This
     * keeps the check linear in bytes with no per-element decoding, which
     * matters for the large weight tensors the worklist meets many times. */
    size_t esz = gn__dtype_size(t->dtype);
    if (t->data && (esz == 1 || esz == 2 || esz == 4 || esz == 8)) {
#define GN__AR_SPLAT(T)                                                  \
    do {                                                                  \
        const T *q = (const T *)t->data;                                  \
        for (int64_t i = 1; i < n; i++)                                   \
            if (q[i] != q[0]) return false;                               \
    } while (0)
        if (esz == 1) GN__AR_SPLAT(uint8_t);
        else if (esz == 2) GN__AR_SPLAT(uint16_t);
        else if (esz == 4) GN__AR_SPLAT(uint32_t);
        else GN__AR_SPLAT(uint64_t);
#undef GN__AR_SPLAT
        if (r0 != r0 || i0 != i0) return false; /* NaN equals nothing */
        *re = r0;
        *im = i0;
        return true;
    }
    for (int64_t i = 1; i < n; i++) {
        double r = 0, im2 = 0;
        elem(t, i, &r, &im2);
        if (r != r0 || im2 != i0) return false;
    }
    *re = r0;
    *im = i0;
    return true;
}

/* The short form of a float/double/int32/int64 proto (typed values v[0..c)
 * for n > c elements: v[c-1] repeats): the decoded tensor holds only those c
 * bit patterns, so gn__ar_all_equal on it (bitwise for these element sizes)
 * is answered from the c values without expanding it. Any proto that would
 * not decode (bad shape, too many values, over GN__TENSOR_EXPAND_MAX) goes
 * the decoding way, and fails there as before. */
static int short_all_equal(const Tensorflow__TensorProto *p, double *re)
{
    const void *vals = NULL;
    size_t c = 0, esz = 0;
    switch ((int32_t)p->dtype) {
    case GN__AR_F32: vals = p->float_val, c = p->n_float_val, esz = 4; break;
    case GN__AR_F64: vals = p->double_val, c = p->n_double_val, esz = 8; break;
    case GN__AR_I32: vals = p->int_val, c = p->n_int_val, esz = 4; break;
    case GN__AR_I64: vals = p->int64_val, c = p->n_int64_val, esz = 8; break;
    default: return -1;
    }
    if (!vals || !c || p->tensor_content.len || (p->tensor_shape && p->tensor_shape->n_dim > GN__MAX_DIMS)) return -1;
    int64_t n = 0;
    gn__err e;
    gn__err_clear(&e);
    if (gn__shape_check(p->tensor_shape, false, &n, &e) != GN_OK || (uint64_t)c >= (uint64_t)n ||
        (uint64_t)n > GN__TENSOR_EXPAND_MAX / esz)
        return -1;
    const uint8_t *b = vals;
    for (size_t i = 1; i < c; i++)
        if (memcmp(b + i * esz, b, esz) != 0) return 0;
    double r0;
    switch ((int32_t)p->dtype) {
    case GN__AR_F32: r0 = p->float_val[0]; break;
    case GN__AR_F64: r0 = p->double_val[0]; break;
    case GN__AR_I32: r0 = p->int_val[0]; break;
    default: r0 = (double)p->int64_val[0]; break;
    }
    if (r0 != r0) return 0; /* NaN equals nothing */
    *re = r0;
    return 1;
}

bool gn__ar_const_all_equal(gn__ar *a, gn_id id, int32_t *dtype, double *re, double *im)
{
    *dtype = 0;
    *re = *im = NAN;
    if (!gn__ar_const_node(a, id)) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(a->g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    double r = NAN;
    int k = short_all_equal(v->tensor, &r);
    if (k >= 0) {
        *dtype = (int32_t)v->tensor->dtype;
        if (k == 0) return false;
        *re = r;
        *im = 0;
        return true;
    }
    gn__tensor t;
    if (!gn__ar_const_tensor(a, id, &t)) return false;
    *dtype = t.dtype;
    bool ok = gn__ar_all_equal(&t, re, im);
    gn__tensor_release(&t);
    return ok;
}

bool gn__ar_const_ints(gn__ar *a, gn_id id, int64_t *v, int32_t max, int32_t *n)
{
    gn__tensor t;
    if (!gn__ar_const_tensor(a, id, &t)) return false;
    bool ok = (t.dtype == GN__AR_I32 || t.dtype == GN__AR_I64) && t.rank <= 1;
    int64_t cnt = ok ? gn__tensor_numel(&t) : 0;
    if (ok && cnt > max) ok = false;
    for (int64_t i = 0; ok && i < cnt; i++)
        v[i] = t.dtype == GN__AR_I32 ? ((const int32_t *)t.data)[i] : ((const int64_t *)t.data)[i];
    if (ok) *n = (int32_t)cnt;
    gn__tensor_release(&t);
    return ok;
}

/* ---- symbolic shapes -------------------------------------------------------------------- */
const gn__ar_info *gn__ar_info_of(const gn__ar *a, gn__edge e)
{
    if (e.node >= a->cap || !a->info[e.node] || e.index >= a->n_info[e.node]) return NULL;
    return &a->info[e.node][e.index];
}

gn_status gn__ar_set_info(gn__ar *a, gn_id id, int32_t dtype, const gn__ar_shape *s)
{
    if (id >= a->cap) GN_TRY(gn__ar_grow(a));
    gn__ar_info *t = a->info[id];
    if (!t || a->n_info[id] < 1) {
        t = gn__arena_zalloc(&a->arena, sizeof *t, 8);
        if (!t) return attr_nomem(a);
        a->info[id] = t;
        a->n_info[id] = 1;
    }
    t->dtype = dtype;
    t->s.rank = s ? s->rank : -1;
    t->s.d = NULL;
    if (s && s->rank > 0) {
        int64_t *d = gn__arena_alloc(&a->arena, (size_t)s->rank * sizeof *d, 8);
        if (!d) return attr_nomem(a);
        memcpy(d, s->d, (size_t)s->rank * sizeof *d);
        t->s.d = d;
    }
    return GN_OK;
}

bool gn__ar_shape_fully_known(const gn__ar_shape *s)
{
    if (!s || s->rank < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->d[i] < 0) return false;
    return true;
}

bool gn__ar_shape_equal(const gn__ar_shape *x, const gn__ar_shape *y)
{
    if (!x || !y || x->rank < 0 || y->rank < 0 || x->rank != y->rank) return false;
    for (int32_t i = 0; i < x->rank; i++)
        if (x->d[i] != y->d[i]) return false;
    return true;
}

bool gn__ar_broadcastable(const gn__ar_shape *x, const gn__ar_shape *y)
{
    if (!x || !y || x->rank < 0 || y->rank < 0) return false;
    int32_t r = x->rank > y->rank ? x->rank : y->rank;
    for (int32_t i = 0; i < r; i++) {
        int32_t xi = x->rank - 1 - i, yi = y->rank - 1 - i;
        int64_t dx = xi >= 0 ? x->d[xi] : 1, dy = yi >= 0 ? y->d[yi] : 1;
        if (dx == dy || dx == 1 || dy == 1) continue;
        return false;
    }
    return true;
}

bool gn__ar_broadcast(gn__ar *a, const gn__ar_shape *x, const gn__ar_shape *y, gn__ar_shape *out)
{
    if (!gn__ar_broadcastable(x, y)) return false;
    int32_t r = x->rank > y->rank ? x->rank : y->rank;
    int64_t *d = r ? gn__arena_alloc(&a->arena, (size_t)r * sizeof *d, 8) : NULL;
    if (r && !d) return false;
    for (int32_t i = 0; i < r; i++) {
        int32_t xi = x->rank - 1 - i, yi = y->rank - 1 - i;
        int64_t dx = xi >= 0 ? x->d[xi] : 1, dy = yi >= 0 ? y->d[yi] : 1;
        d[r - 1 - i] = dx == 1 ? dy : dx;
    }
    out->rank = r;
    out->d = d;
    return true;
}

bool gn__ar_shape_smaller(const gn__ar_shape *x, const gn__ar_shape *y)
{
    if (!x || !y || x->rank < 0 || y->rank < 0) return false;
    /* known sizes, and the symbols left once those appearing on both sides cancel */
    int64_t xs = 1, ys = 1;
    int64_t xsym[GN__MAX_RANK], ysym[GN__MAX_RANK];
    int32_t nx = 0, ny = 0;
    for (int32_t i = 0; i < x->rank && i < GN__MAX_RANK; i++) {
        if (x->d[i] > 0) xs *= x->d[i];
        else xsym[nx++] = x->d[i];
    }
    for (int32_t i = 0; i < y->rank && i < GN__MAX_RANK; i++) {
        if (y->d[i] > 0) ys *= y->d[i];
        else ysym[ny++] = y->d[i];
    }
    int32_t ux = 0, uy = ny;
    bool used[GN__MAX_RANK];
    memset(used, 0, sizeof used);
    for (int32_t i = 0; i < nx; i++) {
        bool matched = false;
        for (int32_t j = 0; j < ny; j++)
            if (!used[j] && ysym[j] == xsym[i] && xsym[i] != 0) {
                used[j] = true;
                matched = true;
                uy--;
                break;
            }
        if (!matched) ux++;
    }
    if (ux == 0 && uy == 0) return xs < ys;
    if (xs <= ys && ux == 0 && uy > 0) return true;
    return xs < ys;
}

double gn__ar_shape_cost(const gn__ar_shape *s)
{
    if (!s || s->rank < 0) return 1e30;
    double c = 1;
    for (int32_t i = 0; i < s->rank; i++) c *= s->d[i] >= 0 ? (double)s->d[i] : 1024.0;
    return c;
}

const char *gn__ar_shape_str(const gn__ar_shape *s, char *buf, size_t n)
{
    if (!s || s->rank < 0) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    size_t at = 0;
    at += (size_t)snprintf(buf + at, at < n ? n - at : 0, "[");
    for (int32_t i = 0; i < s->rank && at < n; i++) {
        if (s->d[i] >= 0) at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? "," : "", (long long)s->d[i]);
        else at += (size_t)snprintf(buf + at, n - at, "%s?", i ? "," : "");
    }
    if (at < n) snprintf(buf + at, n - at, "]");
    return buf;
}

/* Symbols for the unknown dims of node `id`'s outputs, from its inputs where the
 * op says how (element-wise ops keep their input's dims, MatMul takes rows and
 * columns from its operands, ...); every other unknown dim is a fresh symbol. */
static const gn__ar_shape *in_shape(gn__ar *a, gn_id id, uint32_t k)
{
    gn__node *n = &a->g->nodes[id];
    if (k >= n->n_in) return NULL;
    const gn__ar_info *t = gn__ar_info_of(a, n->in[k]);
    return t && t->s.rank >= 0 ? &t->s : NULL;
}

static void fill_from(int64_t *d, int32_t rank, const gn__ar_shape *src)
{
    if (!src || src->rank != rank) return;
    for (int32_t i = 0; i < rank; i++)
        if (d[i] == -1) d[i] = src->d[i];
}

static void fill_dim(int64_t *d, int32_t i, const gn__ar_shape *src, int32_t j)
{
    if (!src || j < 0 || j >= src->rank) return;
    if (d[i] == -1) d[i] = src->d[j];
}

static bool has_trait(gn__ar *a, gn_id id, uint32_t traits)
{
    int32_t od = a->g->nodes[id].opdef;
    if (od < 0) return false;
    const gn__opdef *op = gn__op_at((uint32_t)od);
    return op && (op->traits & traits) == traits;
}

static void sym_rules(gn__ar *a, gn_id id, int64_t *d, int32_t rank)
{
    uint32_t code = gn__ar_op(a, id);
    uint32_t pr = gn__ar_op_props(code);
    const char *op = gn__node_op(a->g, id);
    gn__node *n = &a->g->nodes[id];
    if ((pr & (GN__AR_UE | GN__AR_VS | GN__AR_CL)) || has_trait(a, id, GN__T_ELEMENTWISE | GN__T_UNARY) ||
        has_trait(a, id, GN__T_IDENTITY_LIKE) || code == GN__AR_OP_BiasAdd || code == GN__AR_OP_BiasAddV1 ||
        code == GN__AR_OP_Softmax || code == GN__AR_OP_LogSoftmax || code == GN__AR_OP_FusedBatchNorm ||
        code == GN__AR_OP_FusedBatchNormV2 || code == GN__AR_OP_FusedBatchNormV3 || code == GN__AR_OP_Switch ||
        code == GN__AR_OP_NextIteration || strcmp(op, "LeakyRelu") == 0 || strcmp(op, "ZerosLike") == 0 ||
        strcmp(op, "OnesLike") == 0 || strcmp(op, "ClipByValue") == 0) {
        fill_from(d, rank, in_shape(a, id, 0));
        return;
    }
    if (code == GN__AR_OP_AddN || has_trait(a, id, GN__T_ELEMENTWISE | GN__T_BINARY) ||
        code == GN__AR_OP_SquaredDifference) {
        uint32_t ni = code == GN__AR_OP_AddN ? n->n_in : 2;
        for (int32_t i = 0; i < rank; i++) {
            if (d[i] != -1) continue;
            int64_t pick = 0;
            bool has = false, ok = true;
            for (uint32_t k = 0; k < ni && ok; k++) {
                const gn__ar_shape *s = in_shape(a, id, k);
                if (!s) {
                    ok = false;
                    break;
                }
                int32_t j = s->rank - (rank - i);
                int64_t v = j >= 0 ? s->d[j] : 1;
                if (v == 1) continue;
                if (!has) {
                    pick = v;
                    has = true;
                } else if (pick != v) {
                    ok = false;
                }
            }
            if (ok && has && pick < -1) d[i] = pick;
        }
        return;
    }
    if (code == GN__AR_OP_MatMul && rank == 2) {
        const gn__ar_shape *x = in_shape(a, id, 0), *y = in_shape(a, id, 1);
        if (x && x->rank == 2) fill_dim(d, 0, x, gn__ar_bool_attr(a, id, "transpose_a", false) ? 1 : 0);
        if (y && y->rank == 2) fill_dim(d, 1, y, gn__ar_bool_attr(a, id, "transpose_b", false) ? 0 : 1);
        return;
    }
    if ((code == GN__AR_OP_BatchMatMul || code == GN__AR_OP_BatchMatMulV2 || code == GN__AR_OP_BatchMatMulV3) &&
        rank >= 2) {
        const gn__ar_shape *x = in_shape(a, id, 0), *y = in_shape(a, id, 1);
        bool ax = gn__ar_bool_attr(a, id, "adj_x", false), ay = gn__ar_bool_attr(a, id, "adj_y", false);
        if (x && x->rank >= 2) fill_dim(d, rank - 2, x, ax ? x->rank - 1 : x->rank - 2);
        if (y && y->rank >= 2) fill_dim(d, rank - 1, y, ay ? y->rank - 2 : y->rank - 1);
        if (x && y && x->rank == rank && y->rank == rank)
            for (int32_t i = 0; i < rank - 2; i++)
                if (d[i] == -1 && (x->d[i] == y->d[i] || y->d[i] == 1)) d[i] = x->d[i];
        return;
    }
    if (code == GN__AR_OP_Reshape) {
        /* one unknown dim on each side and the same known element count: the same symbol */
        const gn__ar_shape *x = in_shape(a, id, 0);
        if (!x) return;
        int64_t xs = 1, os = 1, sym = 0;
        int32_t nx = 0, no = 0, at = -1;
        for (int32_t i = 0; i < x->rank; i++) {
            if (x->d[i] < 0) {
                nx++;
                sym = x->d[i];
            } else xs *= x->d[i];
        }
        for (int32_t i = 0; i < rank; i++) {
            if (d[i] < 0) {
                no++;
                at = i;
            } else os *= d[i];
        }
        if (nx == 1 && no == 1 && xs == os && xs > 0) d[at] = sym;
        return;
    }
    if (code == GN__AR_OP_Transpose || code == GN__AR_OP_ConjugateTranspose) {
        const gn__ar_shape *x = in_shape(a, id, 0);
        int64_t perm[GN__MAX_RANK];
        int32_t np = 0;
        if (!x || x->rank != rank || n->n_in < 2) return;
        if (!gn__ar_const_ints(a, n->in[1].node, perm, GN__MAX_RANK, &np) || np != rank) return;
        for (int32_t i = 0; i < rank; i++)
            if (perm[i] >= 0 && perm[i] < rank) fill_dim(d, i, x, (int32_t)perm[i]);
        return;
    }
    if (code == GN__AR_OP_ConcatV2 || code == GN__AR_OP_Concat || code == GN__AR_OP_Pack) {
        int64_t axis = 0;
        uint32_t first = code == GN__AR_OP_Concat ? 1 : 0;
        const gn__ar_shape *x = in_shape(a, id, first);
        if (!x) return;
        if (code == GN__AR_OP_Pack) {
            axis = gn__ar_int_attr(a, id, "axis", 0);
            if (axis < 0) axis += rank;
            if (axis < 0 || axis >= rank || x->rank != rank - 1) return;
            for (int32_t i = 0, j = 0; i < rank; i++)
                if (i != axis) fill_dim(d, i, x, j++);
            return;
        }
        uint32_t ai = code == GN__AR_OP_Concat ? 0 : n->n_in - 1;
        int64_t av[1];
        int32_t na = 0;
        if (ai >= n->n_in || !gn__ar_const_ints(a, n->in[ai].node, av, 1, &na) || na != 1) return;
        axis = av[0] < 0 ? av[0] + rank : av[0];
        if (x->rank != rank) return;
        for (int32_t i = 0; i < rank; i++)
            if (i != axis) fill_dim(d, i, x, i);
        return;
    }
    if (code == GN__AR_OP_Conv2D || code == GN__AR_OP_Conv3D || code == GN__AR_OP_DepthwiseConv2dNative ||
        code == GN__AR_OP_MaxPool || code == GN__AR_OP_AvgPool || code == GN__AR_OP_MaxPool3D ||
        code == GN__AR_OP_MaxPoolV2) {
        const gn__ar_shape *x = in_shape(a, id, 0);
        if (x && x->rank == rank && rank > 0) fill_dim(d, 0, x, 0);
        return;
    }
}

gn_status gn__ar_build_shapes(gn__ar *a, const gn_id *order, uint32_t n)
{
    gn_graph *g = a->g;
    GN_TRY(gn__ar_grow(a));
    for (uint32_t oi = 0; oi < n; oi++) {
        gn_id id = order[oi];
        uint32_t nout = gn__shape_num_outputs(g, id);
        if (!nout) continue;
        gn__ar_info *ti = gn__arena_zalloc(&a->arena, (size_t)nout * sizeof *ti, 8);
        if (!ti) return attr_nomem(a);
        for (uint32_t k = 0; k < nout; k++) {
            const gn__tinfo *t = gn__shape_of(g, id, k);
            ti[k].dtype = t ? t->dtype : 0;
            ti[k].s.rank = -1;
            if (!t || t->shape.rank < 0) continue;
            int32_t r = t->shape.rank;
            int64_t *d = r ? gn__arena_alloc(&a->arena, (size_t)r * sizeof *d, 8) : NULL;
            if (r && !d) return attr_nomem(a);
            bool unknown = false;
            for (int32_t i = 0; i < r; i++) {
                d[i] = t->shape.dims[i] >= 0 ? t->shape.dims[i] : -1;
                unknown = unknown || d[i] == -1;
            }
            /* the rules only name unknown dims: a known shape has none */
            if (unknown) {
                if (k == 0) sym_rules(a, id, d, r);
                else if (gn__ar_op(a, id) == GN__AR_OP_Switch) fill_from(d, r, in_shape(a, id, 0));
                for (int32_t i = 0; i < r; i++)
                    if (d[i] == -1) d[i] = a->next_sym--;
            }
            ti[k].s.rank = r;
            ti[k].s.d = d;
        }
        a->info[id] = ti;
        a->n_info[id] = nout;
    }
    return GN_OK;
}

/* ---- devices ------------------------------------------------------------------------------ */
static bool device_has(const gn__ar *a, gn_id id, const char *kind)
{
    const char *d = gn__str(a->g, a->g->nodes[id].device);
    size_t kl = strlen(kind);
    for (const char *p = d; *p; p++) {
        if (p != d && p[-1] != '/' && p[-1] != ':') continue;
        size_t i = 0;
        while (i < kl && p[i] && tolower((unsigned char)p[i]) == kind[i]) i++;
        if (i == kl && p[kl] == ':' && isdigit((unsigned char)p[kl + 1])) return true;
    }
    return false;
}

bool gn__ar_on_cpu(const gn__ar *a, gn_id id) { return device_has(a, id, "cpu"); }
bool gn__ar_on_cpu_or_gpu(const gn__ar *a, gn_id id) { return device_has(a, id, "cpu") || device_has(a, id, "gpu"); }

/* ---- rewiring and dead nodes ------------------------------------------------------------ */
gn_status gn__ar_maybe_dead(gn__ar *a, gn_id id)
{
    if (a->n_dead == a->cap_dead) {
        uint32_t nc = a->cap_dead ? a->cap_dead * 2 : 256;
        gn_id *p = realloc(a->dead, (size_t)nc * sizeof *p);
        if (!p) return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory");
        a->dead = p;
        a->cap_dead = nc;
    }
    a->dead[a->n_dead++] = id;
    return GN_OK;
}

gn_status gn__ar_set_input(gn__ar *a, gn_id id, uint32_t slot, gn__edge e)
{
    gn_id old = a->g->nodes[id].in[slot].node;
    GN_TRY(gn__node_set_input(a->g, id, slot, e));
    if (old != e.node) GN_TRY(gn__ar_maybe_dead(a, old));
    return GN_OK;
}

gn_status gn__ar_flush_dead(gn__ar *a)
{
    gn_graph *g = a->g;
    while (a->n_dead) {
        gn_id id = a->dead[--a->n_dead];
        if (!gn__node_live(g, id)) continue;
        gn__node *n = &g->nodes[id];
        if (n->n_use || n->n_cuse || !gn__ar_removable(a, id)) continue;
        uint32_t ni = n->n_in, nc = n->n_ctrl;
        for (uint32_t k = 0; k < ni; k++) GN_TRY(gn__ar_maybe_dead(a, g->nodes[id].in[k].node));
        for (uint32_t k = 0; k < nc; k++) GN_TRY(gn__ar_maybe_dead(a, g->nodes[id].ctrl[k]));
        GN_TRY(gn__node_remove(g, id));
    }
    return GN_OK;
}

gn_status gn__ar_replace(gn__ar *a, gn_id n, gn__edge to)
{
    gn_graph *g = a->g;
    /* data consumers of output 0 (a copy: set_input edits the list) */
    uint32_t nu = g->nodes[n].n_use;
    gn__use *uses = nu ? malloc(nu * sizeof *uses) : NULL;
    if (nu && !uses) return gn__fail(a->c->err, GN_ERR_NOMEM, "out of memory");
    if (nu) memcpy(uses, g->nodes[n].use, nu * sizeof *uses);
    gn_status s = GN_OK;
    for (uint32_t i = 0; i < nu && s == GN_OK; i++) {
        gn_id cn = uses[i].node;
        if (cn == to.node) continue;
        if (g->nodes[cn].in[uses[i].slot].index != 0) continue;
        s = gn__node_set_input(g, cn, uses[i].slot, to);
        if (s == GN_OK) s = gn__ar_push(a, cn);
    }
    free(uses);
    GN_TRY(s);
    /* control consumers now wait for the replacement */
    while (g->nodes[n].n_cuse) {
        gn_id cn = g->nodes[n].cuse[g->nodes[n].n_cuse - 1];
        GN_TRY(gn__node_remove_control(g, cn, n));
        if (cn != to.node) {
            GN_TRY(gn__ar_add_ctrl_on(a, cn, to));
            GN_TRY(gn__ar_push(a, cn));
        }
    }
    GN_TRY(gn__ar_push(a, to.node));
    return gn__ar_maybe_dead(a, n);
}
