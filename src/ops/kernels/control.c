/* Control-flow kernels: v1 control flow (Switch, Merge, Enter, Exit,
 * NextIteration, LoopCond, _SwitchN, ControlTrigger and the Ref forms),
 * functional control flow (If, Case, While, PartitionedCall and their
 * Stateless/Stateful forms, a node whose op is a library function), the
 * TensorArrayV3 family and the TensorList family.
 *
 * The v1 kernels only move tensors; what makes them control flow (dead
 * tensors, frames, iterations) is the executor's business (see
 * src/runtime/cpu/exec.c). Switch marks its untaken output dead; Merge
 * forwards its first live input. The functional kernels and the TensorArray
 * kernels need the executor (ctx->run, src/ops/executor.h).
 *
 * TensorArray handles are DT_RESOURCE scalars pointing at an object the run
 * owns (freed when the outermost run ends). TensorList handles are DT_VARIANT
 * scalars pointing at a refcounted list; the buffer holding the handle owns
 * one reference, and a list is changed in place only when nothing else
 * refers to it (copy on write).
 *
 * TensorFlow semantics after tensorflow/core/kernels/{control_flow_ops,
 * functional_ops, tensor_array_ops, list_kernels}.cc. */
#include <stdio.h>
#include <stdlib.h>

#include "graph/tensor.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"
#include "ops/executor.h"

#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_RESOURCE TENSORFLOW__DATA_TYPE__DT_RESOURCE
#define DT_VARIANT TENSORFLOW__DATA_TYPE__DT_VARIANT

/* ---- executor services ------------------------------------------------------------ */
gn_status gn__run_call(gn__kctx *c, const char *fn, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                       uint32_t n_out)
{
    if (!c->run) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "calling function '%s' needs an executor", fn);
    return c->run->ops->call(c->run, c, fn, in, n_in, out, n_out);
}

gn_status gn__run_engine(gn__kctx *c, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out)
{
    if (!c->run || !c->run->ops->engine) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "an engine op needs an executor");
    return c->run->ops->engine(c->run, c, in, n_in, out, n_out);
}

gn_status gn__run_own(gn__kctx *c, void *obj, void (*free_fn)(void *obj))
{
    if (!c->run) {
        free_fn(obj);
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "needs an executor");
    }
    return c->run->ops->own(c->run, obj, free_fn);
}

/* ---- small helpers ------------------------------------------------------------------ */
static gn_status need_in(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static gn_status scalar_int(gn__kctx *c, uint32_t i, const char *what, int64_t *v)
{
    const gn__tensor *t = &c->in[i];
    if (gn__tensor_numel(t) != 1 || t->rank > 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar, got rank %d", what, t->rank);
    if (t->dtype == DT_INT32) *v = *(const int32_t *)t->data;
    else if (t->dtype == DT_INT64) *v = *(const int64_t *)t->data;
    else return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64, got %s", what, gn__dtype_name(t->dtype));
    return GN_OK;
}

gn_status gn__tensor_to_bool(gn__kctx *c, const gn__tensor *t, bool *out)
{
    if (t->rank != 0) {
        *out = gn__tensor_numel(t) > 0;
        return GN_OK;
    }
    size_t esz = gn__dtype_size(t->dtype);
    if (t->dtype == DT_STRING) {
        *out = ((const gn__tstring *)t->data)->len > 0;
        return GN_OK;
    }
    if (!esz || t->dtype == DT_RESOURCE || t->dtype == DT_VARIANT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "cannot use a %s tensor as a predicate", gn__dtype_name(t->dtype));
    switch (t->dtype) {
    case TENSORFLOW__DATA_TYPE__DT_FLOAT: *out = *(const float *)t->data != 0; return GN_OK;
    case TENSORFLOW__DATA_TYPE__DT_DOUBLE: *out = *(const double *)t->data != 0; return GN_OK;
    case TENSORFLOW__DATA_TYPE__DT_HALF: *out = *(const gn__f16 *)t->data != 0; return GN_OK;
    default: break;
    }
    const uint8_t *p = t->data;
    bool nz = false;
    for (size_t i = 0; i < esz; i++) nz |= p[i] != 0;
    *out = nz;
    return GN_OK;
}

gn_status gn__ctl_k_forward_all(gn__kctx *c)
{
    GN_TRY(need_in(c, 1));
    return gn__kctx_forward(c, 0, 0);
}

static void mark_dead(gn__kctx *c, uint32_t k, int32_t dtype)
{
    gn__tensor_release(&c->out[k]);
    c->out[k].dtype = dtype;
    c->out[k].dead = true;
}

static const char *func_attr(gn__kctx *c, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !v->func || !v->func->name) return NULL;
    return v->func->name;
}

/* ---- v1 control flow ------------------------------------------------------------------ */
gn_status gn__ctl_k_noop(gn__kctx *c)
{
    (void)c;
    return GN_OK;
}

gn_status gn__ctl_k_switch(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    if (c->n_out < 2) return gn__kctx_fail(c, GN_ERR_INTERNAL, "expects 2 outputs");
    const gn__tensor *p = &c->in[1];
    if (p->rank != 0 || p->dtype != DT_BOOL)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "pred must be a scalar bool, got a rank-%d %s tensor", p->rank,
                             gn__dtype_name(p->dtype));
    uint32_t port = *(const bool *)p->data ? 1 : 0;
    GN_TRY(gn__kctx_forward(c, port, 0));
    mark_dead(c, 1 - port, c->in[0].dtype);
    return GN_OK;
}

gn_status gn__ctl_k_switch_n(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    if (c->n_out < 1) return gn__kctx_fail(c, GN_ERR_INTERNAL, "expects outputs");
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 1, "output_index", &idx));
    if (idx < 0 || idx >= (int64_t)c->n_out) idx = c->n_out - 1;
    for (uint32_t k = 0; k < c->n_out; k++) {
        if ((int64_t)k == idx) GN_TRY(gn__kctx_forward(c, k, 0));
        else mark_dead(c, k, c->in[0].dtype);
    }
    return GN_OK;
}

/* The executor hands Merge the inputs that arrived (others are zeroed: dtype
 * 0) and runs it when the first live one did. */
gn_status gn__ctl_k_merge(gn__kctx *c)
{
    for (uint32_t i = 0; i < c->n_in; i++) {
        if (c->in[i].dtype == 0 || c->in[i].dead) continue;
        GN_TRY(gn__kctx_forward(c, 0, i));
        if (c->n_out > 1) {
            gn__tensor *t;
            GN_TRY(gn__kctx_output(c, 1, DT_INT32, 0, NULL, &t));
            *(int32_t *)t->data = (int32_t)i;
        }
        return GN_OK;
    }
    for (uint32_t k = 0; k < c->n_out; k++) mark_dead(c, k, k ? DT_INT32 : 0);
    return GN_OK;
}

gn_status gn__ctl_k_loop_cond(gn__kctx *c)
{
    GN_TRY(need_in(c, 1));
    if (c->in[0].rank != 0 || c->in[0].dtype != DT_BOOL)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be a scalar bool");
    return gn__kctx_forward(c, 0, 0);
}

/* ---- functional control flow -------------------------------------------------------- */
static gn_status call_into_outputs(gn__kctx *c, const char *fn, const gn__tensor *in, uint32_t n_in)
{
    for (uint32_t k = 0; k < c->n_out; k++) gn__tensor_release(&c->out[k]);
    return gn__run_call(c, fn, in, n_in, c->out, c->n_out);
}

static gn_status k_call_op(gn__kctx *c)
{
    return call_into_outputs(c, gn__node_op(c->g, c->node), c->in, c->n_in);
}

gn_status gn__kernel_call_op(gn__kctx *c)
{
    return k_call_op(c);
}

gn_status gn__ctl_k_partitioned_call(gn__kctx *c)
{
    const char *f = func_attr(c, "f");
    if (!f) return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'f' is missing or not a function");
    return call_into_outputs(c, f, c->in, c->n_in);
}

/* Grapnel>EngineOp on the CPU backend: the engine is the kept native segment,
 * run as a function (src/convert/segment.c). */
gn_status gn__ctl_k_engine_op(gn__kctx *c)
{
    for (uint32_t k = 0; k < c->n_out; k++) gn__tensor_release(&c->out[k]);
    return gn__run_engine(c, c->in, c->n_in, c->out, c->n_out);
}

gn_status gn__ctl_k_if(gn__kctx *c)
{
    GN_TRY(need_in(c, 1));
    bool b;
    GN_TRY(gn__tensor_to_bool(c, &c->in[0], &b));
    const char *key = b ? "then_branch" : "else_branch";
    const char *f = func_attr(c, key);
    if (!f) return gn__kctx_fail(c, GN_ERR_GRAPH, "attr '%s' is missing or not a function", key);
    return call_into_outputs(c, f, c->in + 1, c->n_in - 1);
}

gn_status gn__ctl_k_case(gn__kctx *c)
{
    GN_TRY(need_in(c, 1));
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 0, "branch_index", &idx));
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "branches");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list || v->list->n_func == 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'branches' is missing or empty");
    int64_t n = (int64_t)v->list->n_func;
    if (idx < 0 || idx >= n) idx = n - 1;   /* TensorFlow: out of range runs the last (default) branch */
    return call_into_outputs(c, v->list->func[idx]->name, c->in + 1, c->n_in - 1);
}

gn_status gn__ctl_k_while(gn__kctx *c)
{
    const char *cond = func_attr(c, "cond"), *body = func_attr(c, "body");
    if (!cond || !body) return gn__kctx_fail(c, GN_ERR_GRAPH, "attrs 'cond' and 'body' must name functions");
    uint32_t n = c->n_in;
    if (c->n_out != n) return gn__kctx_fail(c, GN_ERR_GRAPH, "has %u inputs but %u outputs", n, c->n_out);
    gn__tensor *state = calloc(n ? 2 * (size_t)n : 1, sizeof *state);
    if (!state) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn__tensor *next = state + n;
    for (uint32_t i = 0; i < n; i++) gn__tensor_copy_ref(&state[i], &c->in[i]);
    gn_status s = GN_OK;
    for (;;) {
        gn__tensor pred = {0};
        s = gn__run_call(c, cond, state, n, &pred, 1);
        if (s != GN_OK) break;
        bool b = false;
        s = gn__tensor_to_bool(c, &pred, &b);
        gn__tensor_release(&pred);
        if (s != GN_OK || !b) break;
        s = gn__run_call(c, body, state, n, next, n);
        if (s != GN_OK) break;
        for (uint32_t i = 0; i < n; i++) {
            gn__tensor_release(&state[i]);
            state[i] = next[i];
            memset(&next[i], 0, sizeof next[i]);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (s == GN_OK) {
            gn__tensor_release(&c->out[i]);
            c->out[i] = state[i];
        } else {
            gn__tensor_release(&state[i]);
        }
        gn__tensor_release(&next[i]);
    }
    free(state);
    return s;
}

/* ---- shapes of elements ----------------------------------------------------------------- */
/* A partially known shape: rank -1 unknown, dims -1 unknown. */
typedef struct pshape {
    int32_t rank;
    int64_t dims[GN__MAX_DIMS];
} pshape;

static void pshape_unknown(pshape *s)
{
    s->rank = -1;
}

static gn_status pshape_from_attr(gn__kctx *c, const char *key, pshape *s)
{
    pshape_unknown(s);
    const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE || !v->shape || v->shape->unknown_rank)
        return GN_OK;
    if (v->shape->n_dim > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "attr '%s' has rank %zu, over %d", key, v->shape->n_dim,
                             GN__MAX_DIMS);
    s->rank = (int32_t)v->shape->n_dim;
    for (int32_t i = 0; i < s->rank; i++) s->dims[i] = v->shape->dim[i]->size < 0 ? -1 : v->shape->dim[i]->size;
    return GN_OK;
}

/* element_shape given as a tensor: scalar -1 for an unknown rank, else a vector. */
static gn_status pshape_from_tensor(gn__kctx *c, uint32_t i, pshape *s)
{
    const gn__tensor *t = &c->in[i];
    pshape_unknown(s);
    if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape must be int32 or int64, got %s", gn__dtype_name(t->dtype));
    if (t->rank == 0) return GN_OK;
    if (t->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape must be a scalar or a vector");
    int64_t n = t->dims[0];
    if (n > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "element_shape has rank %lld", (long long)n);
    s->rank = (int32_t)n;
    for (int64_t k = 0; k < n; k++) {
        int64_t d = t->dtype == DT_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
        s->dims[k] = d < 0 ? -1 : d;
    }
    return GN_OK;
}

/* Merges b into a; false when they conflict. */
static bool pshape_merge(pshape *a, const pshape *b)
{
    if (b->rank < 0) return true;
    if (a->rank < 0) {
        *a = *b;
        return true;
    }
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++) {
        if (b->dims[i] < 0) continue;
        if (a->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
        a->dims[i] = b->dims[i];
    }
    return true;
}

static bool pshape_full(const pshape *s)
{
    if (s->rank < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (s->dims[i] < 0) return false;
    return true;
}

static void pshape_of(const gn__tensor *t, pshape *s)
{
    s->rank = t->rank;
    for (int32_t i = 0; i < t->rank; i++) s->dims[i] = t->dims[i];
}

static const char *pshape_str(const pshape *s, char *buf, size_t n)
{
    if (s->rank < 0) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int32_t i = 0; i < s->rank && o < n; i++) {
        if (s->dims[i] < 0) o += (size_t)snprintf(buf + o, n - o, "%s?", i ? "," : "");
        else o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static gn_status check_fixed_dtype(gn__kctx *c, int32_t dtype)
{
    if (!gn__dtype_size(dtype))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "elements of dtype %s are not supported", gn__dtype_name(dtype));
    return GN_OK;
}

/* A fresh tensor holding element i (along dim 0) of src. */
static gn_status slice_copy(gn__kctx *c, const gn__tensor *src, int64_t i, gn__tensor *dst)
{
    size_t esz = gn__dtype_size(src->dtype);
    GN_TRY(check_fixed_dtype(c, src->dtype));
    int64_t inner = 1;
    for (int32_t d = 1; d < src->rank; d++) inner *= src->dims[d];
    size_t bytes = (size_t)inner * esz;
    gn__buffer *b = gn__buffer_new(bytes);
    if (!b) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (bytes) memcpy(b->data, (const char *)src->data + (size_t)i * bytes, bytes);
    memset(dst, 0, sizeof *dst);
    dst->dtype = src->dtype;
    dst->rank = src->rank - 1;
    for (int32_t d = 1; d < src->rank; d++) dst->dims[d - 1] = src->dims[d];
    dst->data = b->data;
    dst->nbytes = bytes;
    dst->buf = b;
    return GN_OK;
}

/* A fresh all-zero tensor of a fully known shape. */
static gn_status zeros(gn__kctx *c, int32_t dtype, const pshape *s, gn__tensor *dst)
{
    GN_TRY(check_fixed_dtype(c, dtype));
    int64_t n = 1;
    for (int32_t d = 0; d < s->rank; d++) n *= s->dims[d];
    size_t bytes = (size_t)n * gn__dtype_size(dtype);
    gn__buffer *b = gn__buffer_new(bytes);
    if (!b) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    memset(b->data, 0, bytes);
    memset(dst, 0, sizeof *dst);
    dst->dtype = dtype;
    dst->rank = s->rank;
    for (int32_t d = 0; d < s->rank; d++) dst->dims[d] = s->dims[d];
    dst->data = b->data;
    dst->nbytes = bytes;
    dst->buf = b;
    return GN_OK;
}

/* Output k = the n tensors items[] stacked along a new dim 0 (element shape
 * elem, which the items must have). */
static gn_status stack_out(gn__kctx *c, uint32_t k, int32_t dtype, const pshape *elem, const gn__tensor *const *items,
                           int64_t n)
{
    GN_TRY(check_fixed_dtype(c, dtype));
    if (elem->rank + 1 > GN__MAX_DIMS) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank over %d", GN__MAX_DIMS);
    int64_t dims[GN__MAX_DIMS];
    dims[0] = n;
    for (int32_t d = 0; d < elem->rank; d++) dims[d + 1] = elem->dims[d];
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, k, dtype, elem->rank + 1, dims, &o));
    size_t per = n ? o->nbytes / (size_t)n : 0;
    for (int64_t i = 0; i < n; i++) {
        char *dst = (char *)o->data + (size_t)i * per;
        if (!items[i]) memset(dst, 0, per);
        else if (per) memcpy(dst, items[i]->data, per);
    }
    return GN_OK;
}

/* ---- TensorArrayV3 ------------------------------------------------------------------- */
enum { TA_EMPTY = 0, TA_WRITTEN = 1, TA_CLEARED = 2 };

typedef struct tarray {
    int32_t dtype;
    pshape elem;               /* element_shape attr merged with what was written */
    bool dynamic_size, clear_after_read, closed;
    uint32_t n, cap;
    gn__tensor *items;
    uint8_t *state;
} tarray;

static void tarray_free(void *p)
{
    tarray *a = p;
    for (uint32_t i = 0; i < a->n; i++) gn__tensor_release(&a->items[i]);
    free(a->items);
    free(a->state);
    free(a);
}

static gn_status tarray_resize(gn__kctx *c, tarray *a, uint32_t n)
{
    if (n > a->cap) {
        uint32_t cap = a->cap ? a->cap : 8;
        while (cap < n) cap *= 2;
        gn__tensor *it = realloc(a->items, (size_t)cap * sizeof *it);
        if (!it) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        a->items = it;
        uint8_t *st = realloc(a->state, cap);
        if (!st) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        a->state = st;
        a->cap = cap;
    }
    for (uint32_t i = a->n; i < n; i++) {
        memset(&a->items[i], 0, sizeof a->items[i]);
        a->state[i] = TA_EMPTY;
    }
    a->n = n;
    return GN_OK;
}

static gn_status flow_out(gn__kctx *c, uint32_t k)
{
    if (k >= c->n_out) return GN_OK;
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, k, DT_FLOAT, 0, NULL, &t));
    *(float *)t->data = 0.0f;
    return GN_OK;
}

static gn_status get_tarray(gn__kctx *c, tarray **out)
{
    GN_TRY(need_in(c, 1));
    const gn__tensor *h = &c->in[0];
    if (h->dtype != DT_RESOURCE || gn__tensor_numel(h) != 1 || !*(void *const *)h->data)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input 0 is not a TensorArray handle");
    *out = *(tarray *const *)h->data;
    if ((*out)->closed) return gn__kctx_fail(c, GN_ERR_GRAPH, "TensorArray has already been closed");
    return GN_OK;
}

gn_status gn__ctl_k_ta_new(gn__kctx *c)
{
    GN_TRY(need_in(c, 1));
    int64_t size = 0;
    GN_TRY(scalar_int(c, 0, "size", &size));
    if (size < 0 || size > INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "size %lld is out of range", (long long)size);
    int dtype = 0;
    if (!gn__attr_get_type(c->g, c->node, "dtype", &dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'dtype' is missing");
    tarray *a = calloc(1, sizeof *a);
    if (!a) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    a->dtype = dtype;
    bool b = false;
    a->dynamic_size = gn__attr_get_bool(c->g, c->node, "dynamic_size", &b) && b;
    a->clear_after_read = true;
    if (gn__attr_get_bool(c->g, c->node, "clear_after_read", &b)) a->clear_after_read = b;
    gn_status s = pshape_from_attr(c, "element_shape", &a->elem);
    if (s == GN_OK) s = tarray_resize(c, a, (uint32_t)size);
    if (s != GN_OK) {
        tarray_free(a);
        return s;
    }
    GN_TRY(gn__run_own(c, a, tarray_free));
    gn__tensor *h;
    GN_TRY(gn__kctx_output(c, 0, DT_RESOURCE, 0, NULL, &h));
    *(void **)h->data = a;
    return flow_out(c, 1);
}

static gn_status ta_index(gn__kctx *c, tarray *a, int64_t idx, bool writing)
{
    if (idx < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld is negative", (long long)idx);
    if (idx >= a->n) {
        if (!writing || !a->dynamic_size)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld is out of bounds for a TensorArray of size %u",
                                 (long long)idx, a->n);
        if (idx >= INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld is too large", (long long)idx);
        GN_TRY(tarray_resize(c, a, (uint32_t)idx + 1));
    }
    return GN_OK;
}

static gn_status ta_store(gn__kctx *c, tarray *a, int64_t idx, gn__tensor *val /* moved */)
{
    gn_status s = ta_index(c, a, idx, true);
    if (s == GN_OK && val->dtype != a->dtype)
        s = gn__kctx_fail(c, GN_ERR_GRAPH, "TensorArray dtype is %s but the value is %s", gn__dtype_name(a->dtype),
                          gn__dtype_name(val->dtype));
    if (s == GN_OK && a->state[idx] != TA_EMPTY)
        s = gn__kctx_fail(c, GN_ERR_GRAPH,
                          "Could not write to TensorArray index %lld because it has already been written to",
                          (long long)idx);
    pshape vs;
    pshape_of(val, &vs);
    if (s == GN_OK && !pshape_merge(&a->elem, &vs)) {
        char b1[128], b2[128];
        s = gn__kctx_fail(c, GN_ERR_GRAPH, "value of shape %s does not match the element shape %s",
                          pshape_str(&vs, b1, sizeof b1), pshape_str(&a->elem, b2, sizeof b2));
    }
    if (s != GN_OK) {
        gn__tensor_release(val);
        return s;
    }
    a->items[idx] = *val;
    a->state[idx] = TA_WRITTEN;
    memset(val, 0, sizeof *val);
    return GN_OK;
}

gn_status gn__ctl_k_ta_write(gn__kctx *c)
{
    GN_TRY(need_in(c, 4));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 1, "index", &idx));
    gn__tensor v;
    gn__tensor_copy_ref(&v, &c->in[2]);
    v.dead = false;
    GN_TRY(ta_store(c, a, idx, &v));
    return flow_out(c, 0);
}

/* Element idx for reading: *t is the stored tensor, or NULL when unwritten
 * and the element shape is known (zeros). */
static gn_status ta_get(gn__kctx *c, tarray *a, int64_t idx, const gn__tensor **t)
{
    GN_TRY(ta_index(c, a, idx, false));
    if (a->state[idx] == TA_CLEARED)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Could not read index %lld twice because it was cleared after a previous read "
                             "(perhaps try setting clear_after_read = false?)",
                             (long long)idx);
    if (a->state[idx] == TA_EMPTY) {
        if (!pshape_full(&a->elem))
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "Could not read from TensorArray index %lld because it has not yet been written to",
                                 (long long)idx);
        *t = NULL;
        return GN_OK;
    }
    *t = &a->items[idx];
    return GN_OK;
}

static void ta_after_read(tarray *a, int64_t idx)
{
    if (a->clear_after_read && a->state[idx] == TA_WRITTEN) {
        gn__tensor_release(&a->items[idx]);
        a->state[idx] = TA_CLEARED;
    }
}

static gn_status check_read_dtype(gn__kctx *c, const tarray *a)
{
    int dtype = 0;
    if (gn__attr_get_type(c->g, c->node, "dtype", &dtype) && dtype != a->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "TensorArray dtype is %s but the op reads %s", gn__dtype_name(a->dtype),
                             gn__dtype_name(dtype));
    return GN_OK;
}

gn_status gn__ctl_k_ta_read(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    GN_TRY(check_read_dtype(c, a));
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 1, "index", &idx));
    const gn__tensor *t;
    GN_TRY(ta_get(c, a, idx, &t));
    gn__tensor_release(&c->out[0]);
    if (!t) return zeros(c, a->dtype, &a->elem, &c->out[0]);
    gn__tensor_copy_ref(&c->out[0], t);
    ta_after_read(a, idx);
    return GN_OK;
}

static gn_status index_list(gn__kctx *c, uint32_t i, int64_t **idx, int64_t *n)
{
    const gn__tensor *t = &c->in[i];
    if (t->rank > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be a vector, got rank %d", t->rank);
    if (t->dtype != DT_INT32 && t->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "indices must be int32 or int64");
    *n = gn__tensor_numel(t);
    *idx = malloc((size_t)(*n ? *n : 1) * sizeof **idx);
    if (!*idx) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < *n; k++)
        (*idx)[k] = t->dtype == DT_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
    return GN_OK;
}

gn_status gn__ctl_k_ta_gather(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    GN_TRY(check_read_dtype(c, a));
    int64_t *idx = NULL, n = 0;
    GN_TRY(index_list(c, 1, &idx, &n));
    pshape elem = a->elem, attr;
    gn_status s = pshape_from_attr(c, "element_shape", &attr);
    const gn__tensor **items = calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK && !pshape_merge(&elem, &attr)) s = gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape conflicts");
    for (int64_t k = 0; s == GN_OK && k < n; k++) {
        s = ta_get(c, a, idx[k], &items[k]);
        if (s == GN_OK && items[k]) {
            pshape is;
            pshape_of(items[k], &is);
            if (elem.rank >= 0 && (is.rank != elem.rank || !pshape_merge(&elem, &is)))
                s = gn__kctx_fail(c, GN_ERR_GRAPH, "TensorArray elements have different shapes");
            else if (elem.rank < 0) elem = is;
        }
    }
    if (s == GN_OK && !pshape_full(&elem))
        s = gn__kctx_fail(c, GN_ERR_GRAPH, "cannot gather: the element shape is not known");
    if (s == GN_OK) s = stack_out(c, 0, a->dtype, &elem, items, n);
    if (s == GN_OK)
        for (int64_t k = 0; k < n; k++) ta_after_read(a, idx[k]);
    free(items);
    free(idx);
    return s;
}

gn_status gn__ctl_k_ta_scatter(gn__kctx *c)
{
    GN_TRY(need_in(c, 4));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    int64_t *idx = NULL, n = 0;
    GN_TRY(index_list(c, 1, &idx, &n));
    const gn__tensor *v = &c->in[2];
    gn_status s = GN_OK;
    if (v->rank < 1 || v->dims[0] != n)
        s = gn__kctx_fail(c, GN_ERR_GRAPH, "value's first dimension must match the %lld indices", (long long)n);
    for (int64_t k = 0; s == GN_OK && k < n; k++) {
        gn__tensor e;
        s = slice_copy(c, v, k, &e);
        if (s == GN_OK) s = ta_store(c, a, idx[k], &e);
    }
    free(idx);
    GN_TRY(s);
    return flow_out(c, 0);
}

gn_status gn__ctl_k_ta_size(gn__kctx *c)
{
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, DT_INT32, 0, NULL, &t));
    *(int32_t *)t->data = (int32_t)a->n;
    return GN_OK;
}

gn_status gn__ctl_k_ta_close(gn__kctx *c)
{
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    for (uint32_t i = 0; i < a->n; i++) gn__tensor_release(&a->items[i]);
    a->closed = true;
    return GN_OK;
}

gn_status gn__ctl_k_ta_concat(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    GN_TRY(check_read_dtype(c, a));
    GN_TRY(check_fixed_dtype(c, a->dtype));
    int64_t total = 0;
    pshape rest;
    pshape_unknown(&rest);
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->state[i] != TA_WRITTEN)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Could not concat: TensorArray index %u is not written (or was read)",
                                 i);
        const gn__tensor *t = &a->items[i];
        if (t->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Concat saw a scalar element at index %u", i);
        pshape r;
        r.rank = t->rank - 1;
        for (int32_t d = 1; d < t->rank; d++) r.dims[d - 1] = t->dims[d];
        if (!pshape_merge(&rest, &r)) return gn__kctx_fail(c, GN_ERR_GRAPH, "elements differ beyond dimension 0");
        total += t->dims[0];
    }
    if (rest.rank < 0) {
        GN_TRY(pshape_from_attr(c, "element_shape_except0", &rest));
        if (!pshape_full(&rest)) return gn__kctx_fail(c, GN_ERR_GRAPH, "cannot concat an empty TensorArray of unknown shape");
    }
    int64_t dims[GN__MAX_DIMS];
    dims[0] = total;
    for (int32_t d = 0; d < rest.rank; d++) dims[d + 1] = rest.dims[d];
    gn__tensor *o, *lens;
    GN_TRY(gn__kctx_output(c, 0, a->dtype, rest.rank + 1, dims, &o));
    int64_t nl = a->n;
    GN_TRY(gn__kctx_output(c, 1, DT_INT64, 1, &nl, &lens));
    size_t off = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        memcpy((char *)o->data + off, a->items[i].data, a->items[i].nbytes);
        off += a->items[i].nbytes;
        ((int64_t *)lens->data)[i] = a->items[i].dims[0];
    }
    for (uint32_t i = 0; i < a->n; i++) ta_after_read(a, i);
    return GN_OK;
}

gn_status gn__ctl_k_ta_split(gn__kctx *c)
{
    GN_TRY(need_in(c, 4));
    tarray *a = NULL;
    GN_TRY(get_tarray(c, &a));
    const gn__tensor *v = &c->in[1], *l = &c->in[2];
    GN_TRY(check_fixed_dtype(c, v->dtype));
    if (l->rank != 1 || (l->dtype != DT_INT64 && l->dtype != DT_INT32))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "lengths must be an int64 vector");
    if (v->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "value must have rank >= 1");
    int64_t n = l->dims[0], sum = 0, inner = 1;
    for (int32_t d = 1; d < v->rank; d++) inner *= v->dims[d];
    for (int64_t i = 0; i < n; i++) {
        int64_t len = l->dtype == DT_INT64 ? ((const int64_t *)l->data)[i] : ((const int32_t *)l->data)[i];
        if (len < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "negative length");
        sum += len;
    }
    if (sum != v->dims[0])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "lengths sum to %lld but value has %lld rows", (long long)sum,
                             (long long)v->dims[0]);
    size_t esz = gn__dtype_size(v->dtype);
    int64_t row = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len = l->dtype == DT_INT64 ? ((const int64_t *)l->data)[i] : ((const int32_t *)l->data)[i];
        size_t bytes = (size_t)(len * inner) * esz;
        gn__buffer *b = gn__buffer_new(bytes);
        if (!b) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        if (bytes) memcpy(b->data, (const char *)v->data + (size_t)(row * inner) * esz, bytes);
        gn__tensor e = {0};
        e.dtype = v->dtype;
        e.rank = v->rank;
        e.dims[0] = len;
        for (int32_t d = 1; d < v->rank; d++) e.dims[d] = v->dims[d];
        e.data = b->data;
        e.nbytes = bytes;
        e.buf = b;
        /* elements differ in dim 0: compare shapes beyond it only */
        pshape keep = a->elem;
        pshape_unknown(&a->elem);
        gn_status s = ta_store(c, a, i, &e);
        a->elem = keep;
        GN_TRY(s);
        row += len;
    }
    return flow_out(c, 0);
}

/* ---- TensorList ------------------------------------------------------------------------ */
typedef struct tlist {
    uint32_t refs;
    int32_t dtype;
    pshape elem;
    int64_t max_n;             /* -1: unbounded */
    uint32_t n, cap;
    gn__tensor *items;         /* dtype 0: not set */
} tlist;

static void tlist_unref(tlist *l)
{
    if (!l || --l->refs) return;
    for (uint32_t i = 0; i < l->n; i++) gn__tensor_release(&l->items[i]);
    free(l->items);
    free(l);
}

static void variant_release(gn__buffer *b)
{
    tlist_unref(*(tlist **)b->data);
    free(b->data);
    free(b);
}

static tlist *tlist_new(int32_t dtype, const pshape *elem)
{
    tlist *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->refs = 1;
    l->dtype = dtype;
    l->elem = *elem;
    l->max_n = -1;
    return l;
}

static gn_status tlist_resize(gn__kctx *c, tlist *l, int64_t n)
{
    if (n < 0 || n > INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "list size %lld is out of range", (long long)n);
    if ((uint32_t)n > l->cap) {
        uint32_t cap = l->cap ? l->cap : 8;
        while (cap < (uint32_t)n) cap *= 2;
        gn__tensor *it = realloc(l->items, (size_t)cap * sizeof *it);
        if (!it) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        l->items = it;
        l->cap = cap;
    }
    for (uint32_t i = (uint32_t)n; i < l->n; i++) gn__tensor_release(&l->items[i]);
    for (uint32_t i = l->n; i < (uint32_t)n; i++) memset(&l->items[i], 0, sizeof l->items[i]);
    l->n = (uint32_t)n;
    return GN_OK;
}

static tlist *tlist_copy(const tlist *s)
{
    tlist *l = tlist_new(s->dtype, &s->elem);
    if (!l) return NULL;
    l->max_n = s->max_n;
    if (s->n) {
        l->items = calloc(s->n, sizeof *l->items);
        if (!l->items) {
            free(l);
            return NULL;
        }
        l->cap = l->n = s->n;
        for (uint32_t i = 0; i < s->n; i++) gn__tensor_copy_ref(&l->items[i], &s->items[i]);
    }
    return l;
}

/* Output k becomes a handle owning the reference to l passed in. */
static gn_status out_list(gn__kctx *c, uint32_t k, tlist *l)
{
    gn__buffer *b = gn__buffer_new(sizeof(void *));
    if (!b) {
        tlist_unref(l);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    *(tlist **)b->data = l;
    b->release = variant_release;
    gn__tensor_release(&c->out[k]);
    gn__tensor *o = &c->out[k];
    o->dtype = DT_VARIANT;
    o->rank = 0;
    o->data = b->data;
    o->nbytes = sizeof(void *);
    o->buf = b;
    o->dead = false;
    return GN_OK;
}

static gn_status get_list(gn__kctx *c, uint32_t i, tlist **out)
{
    GN_TRY(need_in(c, i + 1));
    const gn__tensor *h = &c->in[i];
    if (h->dtype != DT_VARIANT || gn__tensor_numel(h) != 1 || !h->buf || h->buf->release != variant_release)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is not a TensorList", i);
    *out = *(tlist *const *)h->data;
    int dtype = 0;
    if (gn__attr_get_type(c->g, c->node, "element_dtype", &dtype) && dtype != (*out)->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "list has element dtype %s but the op expects %s",
                             gn__dtype_name((*out)->dtype), gn__dtype_name(dtype));
    return GN_OK;
}

/* The list of input 0 as output 0, ready to change: the same list when
 * nothing else refers to it, else a copy. */
static gn_status list_for_write(gn__kctx *c, tlist **out)
{
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    const gn__tensor *h = &c->in[0];
    if (h->buf->refs == 1 && l->refs == 1) {
        GN_TRY(gn__kctx_forward(c, 0, 0));
        *out = l;
        return GN_OK;
    }
    tlist *nl = tlist_copy(l);
    if (!nl) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    GN_TRY(out_list(c, 0, nl));
    *out = nl;
    return GN_OK;
}

static gn_status list_dtype_attr(gn__kctx *c, int *dtype)
{
    if (!gn__attr_get_type(c->g, c->node, "element_dtype", dtype))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'element_dtype' is missing");
    return GN_OK;
}

static gn_status check_item(gn__kctx *c, tlist *l, const gn__tensor *t)
{
    if (t->dtype != l->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "list has element dtype %s but the item is %s", gn__dtype_name(l->dtype),
                             gn__dtype_name(t->dtype));
    pshape s, e = l->elem;
    pshape_of(t, &s);
    if (!pshape_merge(&e, &s)) {
        char b1[128], b2[128];
        return gn__kctx_fail(c, GN_ERR_GRAPH, "item of shape %s does not match the list's element shape %s",
                             pshape_str(&s, b1, sizeof b1), pshape_str(&l->elem, b2, sizeof b2));
    }
    return GN_OK;
}

gn_status gn__ctl_k_empty_list(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    int dtype;
    GN_TRY(list_dtype_attr(c, &dtype));
    pshape e;
    GN_TRY(pshape_from_tensor(c, 0, &e));
    int64_t max_n = 0;
    GN_TRY(scalar_int(c, 1, "max_num_elements", &max_n));
    tlist *l = tlist_new(dtype, &e);
    if (!l) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    l->max_n = max_n;
    return out_list(c, 0, l);
}

gn_status gn__ctl_k_list_reserve(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    int dtype;
    GN_TRY(list_dtype_attr(c, &dtype));
    pshape e;
    GN_TRY(pshape_from_tensor(c, 0, &e));
    int64_t n = 0;
    GN_TRY(scalar_int(c, 1, "num_elements", &n));
    tlist *l = tlist_new(dtype, &e);
    if (!l) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn_status s = tlist_resize(c, l, n);
    if (s != GN_OK) {
        tlist_unref(l);
        return s;
    }
    return out_list(c, 0, l);
}

gn_status gn__ctl_k_list_from_tensor(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    const gn__tensor *t = &c->in[0];
    if (t->rank < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "tensor must be at least a vector");
    pshape e, ts;
    GN_TRY(pshape_from_tensor(c, 1, &e));
    ts.rank = t->rank - 1;
    for (int32_t d = 1; d < t->rank; d++) ts.dims[d - 1] = t->dims[d];
    if (!pshape_merge(&e, &ts)) return gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape does not match the tensor");
    tlist *l = tlist_new(t->dtype, &e);
    if (!l) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn_status s = tlist_resize(c, l, t->dims[0]);
    for (int64_t i = 0; s == GN_OK && i < t->dims[0]; i++) s = slice_copy(c, t, i, &l->items[i]);
    if (s != GN_OK) {
        tlist_unref(l);
        return s;
    }
    return out_list(c, 0, l);
}

gn_status gn__ctl_k_list_set_item(gn__kctx *c)
{
    GN_TRY(need_in(c, 3));
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 1, "index", &idx));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    GN_TRY(check_item(c, l, &c->in[2]));
    bool resize = false;
    gn__attr_get_bool(c->g, c->node, "resize_if_index_out_of_bounds", &resize);
    if (idx < 0 || (idx >= l->n && !resize))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Trying to modify element %lld in a list with %u elements",
                             (long long)idx, l->n);
    GN_TRY(list_for_write(c, &l));
    if (idx >= l->n) GN_TRY(tlist_resize(c, l, idx + 1));
    gn__tensor_release(&l->items[idx]);
    gn__tensor_copy_ref(&l->items[idx], &c->in[2]);
    l->items[idx].dead = false;
    return GN_OK;
}

/* Item idx for reading: the stored tensor, or zeros of the element shape. */
static gn_status list_item_out(gn__kctx *c, uint32_t k, tlist *l, int64_t idx, const pshape *hint)
{
    const gn__tensor *t = &l->items[idx];
    gn__tensor_release(&c->out[k]);
    if (t->dtype) {
        gn__tensor_copy_ref(&c->out[k], t);
        return GN_OK;
    }
    pshape e = l->elem;
    if (hint && !pshape_merge(&e, hint)) return gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape conflicts with the list");
    if (!pshape_full(&e))
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Trying to read an uninitialized tensor but element_shape is not fully defined");
    return zeros(c, l->dtype, &e, &c->out[k]);
}

gn_status gn__ctl_k_list_get_item(gn__kctx *c)
{
    GN_TRY(need_in(c, 3));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    int64_t idx = 0;
    GN_TRY(scalar_int(c, 1, "index", &idx));
    if (idx < 0 || idx >= l->n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Trying to access element %lld in a list with %u elements",
                             (long long)idx, l->n);
    pshape hint;
    GN_TRY(pshape_from_tensor(c, 2, &hint));
    return list_item_out(c, 0, l, idx, &hint);
}

static gn_status stack_items(gn__kctx *c, tlist *l, const int64_t *idx, int64_t n, const pshape *hint)
{
    pshape e = l->elem;
    if (hint && !pshape_merge(&e, hint)) return gn__kctx_fail(c, GN_ERR_GRAPH, "element_shape conflicts with the list");
    for (int64_t k = 0; k < n; k++) {
        const gn__tensor *t = &l->items[idx ? idx[k] : k];
        if (!t->dtype) continue;
        pshape s;
        pshape_of(t, &s);
        if (!pshape_merge(&e, &s)) return gn__kctx_fail(c, GN_ERR_GRAPH, "list elements have different shapes");
    }
    if (!pshape_full(&e))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "cannot stack: the element shape is not fully defined");
    const gn__tensor **items = calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++) {
        const gn__tensor *t = &l->items[idx ? idx[k] : k];
        items[k] = t->dtype ? t : NULL;
    }
    gn_status s = stack_out(c, 0, l->dtype, &e, items, n);
    free(items);
    return s;
}

gn_status gn__ctl_k_list_stack(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    pshape hint;
    GN_TRY(pshape_from_tensor(c, 1, &hint));
    int64_t num = -1;
    if (gn__attr_get_int(c->g, c->node, "num_elements", &num) && num != -1 && num != l->n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Operation expected a list with %lld elements but got a list with %u",
                             (long long)num, l->n);
    return stack_items(c, l, NULL, l->n, &hint);
}

gn_status gn__ctl_k_list_gather(gn__kctx *c)
{
    GN_TRY(need_in(c, 3));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    int64_t *idx = NULL, n = 0;
    GN_TRY(index_list(c, 1, &idx, &n));
    gn_status s = GN_OK;
    for (int64_t k = 0; s == GN_OK && k < n; k++)
        if (idx[k] < 0 || idx[k] >= l->n)
            s = gn__kctx_fail(c, GN_ERR_GRAPH, "index %lld is out of range for a list of %u", (long long)idx[k], l->n);
    pshape hint;
    if (s == GN_OK) s = pshape_from_tensor(c, 2, &hint);
    if (s == GN_OK) s = stack_items(c, l, idx, n, &hint);
    free(idx);
    return s;
}

gn_status gn__ctl_k_list_length(gn__kctx *c)
{
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, DT_INT32, 0, NULL, &t));
    *(int32_t *)t->data = (int32_t)l->n;
    return GN_OK;
}

gn_status gn__ctl_k_list_element_shape(gn__kctx *c)
{
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    int dt = DT_INT32;
    gn__attr_get_type(c->g, c->node, "shape_type", &dt);
    if (dt != DT_INT32 && dt != DT_INT64) return gn__kctx_fail(c, GN_ERR_GRAPH, "shape_type must be int32 or int64");
    gn__tensor *t;
    if (l->elem.rank < 0) {
        GN_TRY(gn__kctx_output(c, 0, dt, 0, NULL, &t));
        if (dt == DT_INT32) *(int32_t *)t->data = -1;
        else *(int64_t *)t->data = -1;
        return GN_OK;
    }
    int64_t r = l->elem.rank;
    GN_TRY(gn__kctx_output(c, 0, dt, 1, &r, &t));
    for (int32_t i = 0; i < l->elem.rank; i++) {
        if (dt == DT_INT32) ((int32_t *)t->data)[i] = (int32_t)l->elem.dims[i];
        else ((int64_t *)t->data)[i] = l->elem.dims[i];
    }
    return GN_OK;
}

gn_status gn__ctl_k_list_push_back(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    GN_TRY(check_item(c, l, &c->in[1]));
    if (l->max_n >= 0 && l->n >= l->max_n)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Tried to push item into a full list (max %lld elements)",
                             (long long)l->max_n);
    GN_TRY(list_for_write(c, &l));
    GN_TRY(tlist_resize(c, l, (int64_t)l->n + 1));
    gn__tensor_copy_ref(&l->items[l->n - 1], &c->in[1]);
    l->items[l->n - 1].dead = false;
    return GN_OK;
}

gn_status gn__ctl_k_list_pop_back(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    tlist *l = NULL;
    GN_TRY(get_list(c, 0, &l));
    if (l->n == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Trying to pop from an empty list");
    pshape hint;
    GN_TRY(pshape_from_tensor(c, 1, &hint));
    GN_TRY(list_item_out(c, 1, l, (int64_t)l->n - 1, &hint));
    GN_TRY(list_for_write(c, &l));
    return tlist_resize(c, l, (int64_t)l->n - 1);
}

gn_status gn__ctl_k_list_resize(gn__kctx *c)
{
    GN_TRY(need_in(c, 2));
    int64_t n = 0;
    GN_TRY(scalar_int(c, 1, "size", &n));
    tlist *l = NULL;
    GN_TRY(list_for_write(c, &l));
    return tlist_resize(c, l, n);
}
