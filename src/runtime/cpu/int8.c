/* INT8 engines of the CPU backend (see int8.h). */
#include "runtime/cpu/int8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/registry.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT

/* ---- the engine --------------------------------------------------------------------------------- */
enum { S_ARG = 1, S_RET, S_PASS, S_FLOAT, S_INT8 };

typedef struct i8step {
    gn_id id;
    int kind;                 /* S_* */
    uint32_t io;              /* S_ARG / S_RET: argument or result index */
    uint32_t n_in, n_out;
    uint32_t *in_slot;        /* per data input: the value slot */
    uint32_t out_base;
    gn__kernel_fn fn;
    /* S_INT8 */
    gn__q8_node q;            /* what the node's attrs say */
    float sx;                 /* input scale */
    int8_t *wq;               /* CONV: [oc][kh][kw][c]; DW: [kh][kw][c*m]; MM: [n][k] (gn__q8_weights) */
    float *sw;                /* per output channel */
    int64_t kh, kw, cin, cout, mult;
} i8step;

struct gn__int8_engine {
    const gn_graph *body;
    uint32_t n_steps;
    i8step *steps;
    uint32_t n_slots;
    gn__tensor *konst;        /* per slot: values computed at build (dtype 0: none) */
    gn__tensor *val;          /* per slot: this run's values */
    uint32_t n_args, n_rets;
    uint32_t n_int8;
};

void gn__int8_engine_free(gn__int8_engine *e)
{
    if (!e) return;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        free(e->steps[i].in_slot);
        free(e->steps[i].wq);
        free(e->steps[i].sw);
    }
    for (uint32_t i = 0; i < e->n_slots; i++) {
        gn__tensor_release(&e->konst[i]);
        gn__tensor_release(&e->val[i]);
    }
    free(e->steps);
    free(e->konst);
    free(e->val);
    free(e);
}

uint32_t gn__int8_engine_int8_nodes(const gn__int8_engine *e) { return e ? e->n_int8 : 0; }

static float act_f(int act, float x, float alpha)
{
    switch (act) {
    case GN__Q8_ACT_RELU: return x < 0 ? 0 : x;
    case GN__Q8_ACT_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
    case GN__Q8_ACT_ELU: return x < 0 ? expm1f(x) : x;
    case GN__Q8_ACT_LEAKY: return x > 0 ? x : x * alpha;
    default: return x;
    }
}

static gn_status fail_shape(gn__err *err, const char *name, const char *what)
{
    return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: node '%s': %s", name, what);
}

static gn_status prepare_int8(gn__int8_engine *e, i8step *s, const gn__calib_table *t, gn__err *err)
{
    const gn_graph *g = e->body;
    gn_id id = s->id;
    gn__edge x = g->nodes[id].in[0];
    float amax = gn__calib_find(t, gn__node_name(g, x.node), x.index);
    if (amax < 0)
        return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: no range for tensor '%s:%u' (input of %s '%s') in the calibration table",
                        gn__node_name(g, x.node), x.index, gn__node_op(g, id), gn__node_name(g, id));
    s->sx = gn__q8_scale(amax);
    if (!gn__int8_node_info(g, id, &s->q)) return fail_shape(err, gn__node_name(g, id), "not an int8 node");
    const gn__tensor *w = &e->konst[s->in_slot[1]];
    int64_t K = 0, N = 0;
    GN_TRY(gn__q8_weights(g, id, &s->q, w, 0, NULL, NULL, &K, &N, err));
    s->cin = K;
    s->cout = N;
    if (s->q.kind != GN__Q8_MM) {
        s->kh = w->dims[0];
        s->kw = w->dims[1];
        s->cin = w->dims[2];
        s->mult = w->dims[3];
    }
    s->wq = malloc((size_t)(K * N + 1));
    s->sw = malloc((size_t)(N + 1) * sizeof *s->sw);
    if (!s->wq || !s->sw) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    return gn__q8_weights(g, id, &s->q, w, K, s->wq, s->sw, &K, &N, err);
}

/* Kahn's order over data and control inputs. */
static gn_status body_order(const gn_graph *g, gn_id **out, uint32_t *n_out, gn__err *err)
{
    uint32_t n = g->n_nodes;
    uint32_t *deg = calloc(n + 1, sizeof *deg);
    gn_id *q = malloc((n + 1) * sizeof *q);
    if (!deg || !q) {
        free(deg);
        free(q);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    uint32_t h = 0, tl = 0, live = 0;
    for (gn_id i = 0; i < n; i++) {
        if (!gn__node_live(g, i)) continue;
        live++;
        deg[i] = g->nodes[i].n_in + g->nodes[i].n_ctrl;
        if (!deg[i]) q[tl++] = i;
    }
    while (h < tl) {
        gn_id x = q[h++];
        const gn__node *nd = &g->nodes[x];
        for (uint32_t k = 0; k < nd->n_use; k++)
            if (--deg[nd->use[k].node] == 0) q[tl++] = nd->use[k].node;
        for (uint32_t k = 0; k < nd->n_cuse; k++)
            if (--deg[nd->cuse[k]] == 0) q[tl++] = nd->cuse[k];
    }
    free(deg);
    if (tl != live) {
        free(q);
        return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: the segment has a cycle");
    }
    *out = q;
    *n_out = tl;
    return GN_OK;
}

static gn_status run_kernel(const gn_graph *g, i8step *s, gn__tensor *vals, gn__tensor *out, gn__err *err)
{
    gn__tensor in[16], *inp = in;
    if (s->n_in > 16) {
        inp = malloc(s->n_in * sizeof *inp);
        if (!inp) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t k = 0; k < s->n_in; k++) inp[k] = vals[s->in_slot[k]];
    gn__kctx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.node = s->id;
    c.n_in = s->n_in;
    c.in = inp;
    c.n_out = s->n_out;
    c.out = out;
    c.err = err;
    gn_status st = s->fn(&c);
    if (inp != in) free(inp);
    return st;
}

/* The argument / result index of an _Arg / _Retval node: its `index` attr
 * (a body loaded from a FunctionDef renumbers orig_index), else orig_index. */
static uint32_t arg_index(const gn_graph *body, gn_id id)
{
    int64_t ix = -1;
    if (gn__attr_get_int(body, id, "index", &ix) && ix >= 0 && ix <= (int64_t)UINT32_MAX) return (uint32_t)ix;
    return gn__node_at(body, id)->orig_index;
}

gn_status gn__int8_engine_build(const gn_graph *body, const char *table, size_t len, gn__int8_engine **out,
                                gn__err *err)
{
    *out = NULL;
    gn__calib_table t;
    GN_TRY(gn__calib_parse(table, len, &t, err));
    gn__int8_engine *e = calloc(1, sizeof *e);
    gn_id *order = NULL;
    uint32_t n_order = 0;
    uint32_t *base = calloc(body->n_nodes + 1, sizeof *base);
    gn_status s = e && base ? GN_OK : gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        e->body = body;
        s = body_order(body, &order, &n_order, err);
    }
    if (s == GN_OK) {
        for (uint32_t i = 0; i < n_order; i++) {
            gn_id id = order[i];
            base[id] = e->n_slots;
            int32_t no = (body->nodes[id].flags & GN__NODE_FN_RET) ? 0 : gn__node_num_outputs(body, id);
            if (no < 0) {
                s = gn__fail(err, GN_ERR_GRAPH, "INT8 engine: the outputs of node '%s' are not known",
                             gn__node_name(body, id));
                break;
            }
            e->n_slots += (uint32_t)no;
        }
    }
    if (s == GN_OK) {
        e->steps = calloc(n_order + 1, sizeof *e->steps);
        e->konst = calloc(e->n_slots + 1, sizeof *e->konst);
        e->val = calloc(e->n_slots + 1, sizeof *e->val);
        if (!e->steps || !e->konst || !e->val) s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < n_order && s == GN_OK; i++) {
        gn_id id = order[i];
        const gn__node *nd = &body->nodes[id];
        i8step *st = &e->steps[e->n_steps];
        memset(st, 0, sizeof *st);
        st->id = id;
        st->n_in = nd->n_in;
        st->out_base = base[id];
        st->n_out = (nd->flags & GN__NODE_FN_RET) ? 0 : (uint32_t)gn__node_num_outputs(body, id);
        st->in_slot = malloc((nd->n_in + 1) * sizeof *st->in_slot);
        if (!st->in_slot) {
            s = gn__fail(err, GN_ERR_NOMEM, "out of memory");
            break;
        }
        e->n_steps++;
        bool all_const = nd->n_in > 0;
        for (uint32_t k = 0; k < nd->n_in; k++) {
            st->in_slot[k] = base[nd->in[k].node] + nd->in[k].index;
            if (!e->konst[st->in_slot[k]].dtype) all_const = false;
        }
        const char *name = gn__node_name(body, id);
        if (nd->flags & GN__NODE_FN_ARG) {
            st->kind = S_ARG;
            st->io = arg_index(body, id);
            e->n_args++;
            continue;
        }
        if (nd->flags & GN__NODE_FN_RET) {
            st->kind = S_RET;
            st->io = arg_index(body, id);
            e->n_rets++;
            if (nd->n_in != 1) s = gn__fail(err, GN_ERR_GRAPH, "INT8 engine: result '%s' has no input", name);
            continue;
        }
        if (gn__int8_is_qdq(body, id)) {
            /* its range is in the table; the engine passes the value through */
            st->kind = S_PASS;
            if (all_const) gn__tensor_copy_ref(&e->konst[st->out_base], &e->konst[st->in_slot[0]]);
            continue;
        }
        st->fn = gn__kernel_for(gn__node_op(body, id));
        if (!st->fn) {
            s = gn__fail(err, GN_ERR_UNSUPPORTED, "INT8 engine: node '%s': the CPU backend has no kernel for %s", name,
                         gn__node_op(body, id));
            break;
        }
        st->kind = S_FLOAT;
        if (!strcmp(gn__node_op(body, id), "Const") || all_const) {
            /* computed once, now */
            s = run_kernel(body, st, e->konst, e->konst + st->out_base, err);
            continue;
        }
        if (gn__int8_node_quantizable(body, id)) {
            st->kind = S_INT8;
            s = prepare_int8(e, st, &t, err);
            e->n_int8++;
        }
    }
    gn__calib_free(&t);
    free(order);
    free(base);
    if (s != GN_OK) {
        gn__int8_engine_free(e);
        return s;
    }
    *out = e;
    return GN_OK;
}

/* ---- int8 kernels ----------------------------------------------------------------------------- */
static inline int32_t dot8(const int8_t *a, const int8_t *b, int64_t n)
{
    int32_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc += (int32_t)a[i] * (int32_t)b[i];
    return acc;
}

static void window(int64_t in, int64_t k, int64_t s, int pad, int64_t eb, int64_t ea, int64_t *out, int64_t *before)
{
    if (pad == 0) {
        *out = in >= k ? (in - k) / s + 1 : 0;
        *before = 0;
    } else if (pad == 1) {
        *out = (in + s - 1) / s;
        int64_t need = (*out - 1) * s + k - in;
        *before = need > 0 ? need / 2 : 0;
    } else {
        *out = in + eb + ea >= k ? (in + eb + ea - k) / s + 1 : 0;
        *before = eb;
    }
}

static gn_status run_int8(const gn_graph *g, i8step *s, gn__tensor *vals, gn__tensor *o, gn__err *err)
{
    const gn__tensor *x = &vals[s->in_slot[0]];
    const char *name = gn__node_name(g, s->id);
    if (x->dtype != DT_F32) return fail_shape(err, name, "input is not float32");
    const gn__tensor *b = s->q.bias ? &vals[s->in_slot[2]] : NULL;
    if (b && (b->dtype != DT_F32 || gn__tensor_numel(b) != s->cout)) return fail_shape(err, name, "bias does not match");
    const float *bias = b ? b->data : NULL;
    int64_t nx = gn__tensor_numel(x);
    int8_t *xq = malloc((size_t)nx + 1);
    int32_t *acc = malloc((size_t)(s->cout + 1) * sizeof *acc);
    if (!xq || !acc) {
        free(xq);
        free(acc);
        return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    }
    float inv = 1.0f / s->sx;
    gn_status st = GN_OK;
    if (s->q.kind == GN__Q8_MM) {
        if (x->rank != 2) st = fail_shape(err, name, "input is not a matrix");
        int64_t M = s->q.ta ? x->dims[1] : x->dims[0], K = s->q.ta ? x->dims[0] : x->dims[1], N = s->cout;
        if (st == GN_OK && K != s->cin) st = fail_shape(err, name, "inner dimensions do not match");
        int64_t dims[2] = {M, N};
        if (st == GN_OK) {
            o->dtype = DT_F32;
            o->rank = 2;
            memcpy(o->dims, dims, sizeof dims);
            o->buf = gn__buffer_new((size_t)(M * N) * sizeof(float) + 1);
            if (!o->buf) st = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        }
        if (st == GN_OK) {
            o->data = o->buf->data;
            o->nbytes = (size_t)(M * N) * sizeof(float);
            const float *xf = x->data;
            for (int64_t m = 0; m < M; m++)
                for (int64_t k = 0; k < K; k++) xq[m * K + k] = gn__q8(s->q.ta ? xf[k * M + m] : xf[m * K + k], inv);
            float *of = o->data;
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) {
                    float v = (float)dot8(xq + m * K, s->wq + n * K, K) * s->sx * s->sw[n];
                    if (bias) v += bias[n];
                    of[m * N + n] = act_f(s->q.act, v, s->q.alpha);
                }
        }
    } else {
        if (x->rank != 4 || x->dims[3] != s->cin) st = fail_shape(err, name, "input does not match the filter");
        int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = s->cin, OC = s->cout;
        int64_t OH = 0, OW = 0, pt = 0, pl = 0;
        window(H, s->kh, s->q.stride[0], s->q.pad, s->q.ep[0], s->q.ep[1], &OH, &pt);
        window(W, s->kw, s->q.stride[1], s->q.pad, s->q.ep[2], s->q.ep[3], &OW, &pl);
        if (st == GN_OK) {
            o->dtype = DT_F32;
            o->rank = 4;
            o->dims[0] = N;
            o->dims[1] = OH;
            o->dims[2] = OW;
            o->dims[3] = OC;
            o->nbytes = (size_t)(N * OH * OW * OC) * sizeof(float);
            o->buf = gn__buffer_new(o->nbytes + 1);
            if (!o->buf) st = gn__fail(err, GN_ERR_NOMEM, "out of memory");
        }
        if (st == GN_OK) {
            o->data = o->buf->data;
            const float *xf = x->data;
            for (int64_t i = 0; i < nx; i++) xq[i] = gn__q8(xf[i], inv);
            float *of = o->data;
            int64_t KH = s->kh, KW = s->kw;
            for (int64_t n = 0; n < N; n++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        memset(acc, 0, (size_t)OC * sizeof *acc);
                        for (int64_t kh = 0; kh < KH; kh++) {
                            int64_t ih = oh * s->q.stride[0] - pt + kh;
                            if (ih < 0 || ih >= H) continue;
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t iw = ow * s->q.stride[1] - pl + kw;
                                if (iw < 0 || iw >= W) continue;
                                const int8_t *xr = xq + ((n * H + ih) * W + iw) * C;
                                if (s->q.kind == GN__Q8_CONV) {
                                    for (int64_t oc = 0; oc < OC; oc++)
                                        acc[oc] += dot8(xr, s->wq + ((oc * KH + kh) * KW + kw) * C, C);
                                } else {
                                    const int8_t *wr = s->wq + (kh * KW + kw) * OC;
                                    int64_t M = s->mult;
                                    for (int64_t c = 0; c < C; c++)
                                        for (int64_t m = 0; m < M; m++)
                                            acc[c * M + m] += (int32_t)xr[c] * (int32_t)wr[c * M + m];
                                }
                            }
                        }
                        float *orow = of + ((n * OH + oh) * OW + ow) * OC;
                        for (int64_t oc = 0; oc < OC; oc++) {
                            float v = (float)acc[oc] * s->sx * s->sw[oc];
                            if (bias) v += bias[oc];
                            orow[oc] = act_f(s->q.act, v, s->q.alpha);
                        }
                    }
        }
    }
    free(xq);
    free(acc);
    if (st != GN_OK) gn__tensor_release(o);
    return st;
}

gn_status gn__int8_engine_run(gn__int8_engine *e, const gn__tensor *in, uint32_t n_in, gn__tensor *out,
                              uint32_t n_out, gn__err *err)
{
    if (n_in != e->n_args || n_out != e->n_rets)
        return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: takes %u inputs and gives %u outputs, called with %u and %u",
                        e->n_args, e->n_rets, n_in, n_out);
    gn_status s = GN_OK;
    for (uint32_t i = 0; i < e->n_slots; i++)
        if (e->konst[i].dtype) gn__tensor_copy_ref(&e->val[i], &e->konst[i]);
    for (uint32_t i = 0; i < e->n_steps && s == GN_OK; i++) {
        i8step *st = &e->steps[i];
        if (st->kind != S_RET && st->n_out && e->konst[st->out_base].dtype) continue; /* computed at build */
        switch (st->kind) {
        case S_ARG:
            if (st->io >= n_in) s = gn__fail(err, GN_ERR_GRAPH, "INT8 engine: argument index %u out of range", st->io);
            else gn__tensor_copy_ref(&e->val[st->out_base], &in[st->io]);
            break;
        case S_RET:
            if (st->io >= n_out) s = gn__fail(err, GN_ERR_GRAPH, "INT8 engine: result index %u out of range", st->io);
            else gn__tensor_copy_ref(&out[st->io], &e->val[st->in_slot[0]]);
            break;
        case S_PASS: gn__tensor_copy_ref(&e->val[st->out_base], &e->val[st->in_slot[0]]); break;
        case S_INT8: s = run_int8(e->body, st, e->val, &e->val[st->out_base], err); break;
        default: s = run_kernel(e->body, st, e->val, &e->val[st->out_base], err); break;
        }
    }
    for (uint32_t i = 0; i < e->n_slots; i++) gn__tensor_release(&e->val[i]);
    if (s != GN_OK)
        for (uint32_t i = 0; i < n_out; i++) gn__tensor_release(&out[i]);
    return s;
}
