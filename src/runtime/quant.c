/* INT8 quantization shared by the backends (see quant.h). */
#include "runtime/quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"

#define DT_F32 TENSORFLOW__DATA_TYPE__DT_FLOAT

/* ---- the table ------------------------------------------------------------------------------ */
void gn__calib_free(gn__calib_table *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->n; i++) free(t->name[i]);
    free(t->name);
    free(t->amax);
    memset(t, 0, sizeof *t);
}

gn_status gn__calib_parse(const char *text, size_t len, gn__calib_table *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    size_t ml = strlen(GN__CALIB_MAGIC);
    if (len < ml || memcmp(text, GN__CALIB_MAGIC, ml) != 0 || (len > ml && text[ml] != '\n'))
        return gn__fail(err, GN_ERR_PARSE, "calibration table: line 1: expected '%s'", GN__CALIB_MAGIC);
    uint32_t cap = 0, line = 1;
    size_t p = ml;
    while (p < len) {
        p++; /* the newline */
        line++;
        size_t e = p;
        while (e < len && text[e] != '\n') e++;
        if (e == p || text[p] == '#') {
            p = e;
            continue;
        }
        size_t sp = e;
        while (sp > p && text[sp - 1] != ' ') sp--;
        char num[64];
        size_t nl = e - sp;
        if (sp <= p + 1 || nl == 0 || nl >= sizeof num) {
            gn__calib_free(out);
            return gn__fail(err, GN_ERR_PARSE, "calibration table: line %u: expected 'TENSOR AMAX'", line);
        }
        memcpy(num, text + sp, nl);
        num[nl] = 0;
        char *end;
        double v = strtod(num, &end);
        if (*end || !(v >= 0) || isinf(v)) {
            gn__calib_free(out);
            return gn__fail(err, GN_ERR_PARSE, "calibration table: line %u: range '%s' is not a finite number >= 0",
                            line, num);
        }
        if (out->n == cap) {
            uint32_t nc = cap ? cap * 2 : 16;
            char **nn = realloc(out->name, nc * sizeof *nn);
            if (nn) out->name = nn;
            float *na = nn ? realloc(out->amax, nc * sizeof *na) : NULL;
            if (!na) {
                gn__calib_free(out);
                return gn__fail(err, GN_ERR_NOMEM, "out of memory");
            }
            out->amax = na;
            cap = nc;
        }
        size_t kl = sp - 1 - p;
        char *k = malloc(kl + 1);
        if (!k) {
            gn__calib_free(out);
            return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        }
        memcpy(k, text + p, kl);
        k[kl] = 0;
        out->name[out->n] = k;
        out->amax[out->n++] = (float)v;
        p = e;
    }
    return GN_OK;
}

float gn__calib_find(const gn__calib_table *t, const char *node, uint32_t index)
{
    size_t nl = strlen(node);
    char suf[16];
    int sl = snprintf(suf, sizeof suf, ":%u", index);
    for (uint32_t i = 0; i < t->n; i++) {
        const char *k = t->name[i];
        if (!strncmp(k, node, nl) && !strcmp(k + nl, suf) && sl > 0) return t->amax[i];
    }
    return -1.0f;
}

/* ---- which nodes run in int8 ---------------------------------------------------------------- */
static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

bool gn__int8_is_qdq(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    return !strcmp(op, "FakeQuantWithMinMaxVars") || !strcmp(op, "FakeQuantWithMinMaxArgs") ||
           !strcmp(op, "QuantizeAndDequantizeV2") || !strcmp(op, "QuantizeAndDequantizeV3") ||
           !strcmp(op, "QuantizeAndDequantizeV4");
}

/* Is the value of node id known when the engine is built (no path from an argument)? */
static bool const_like(const gn_graph *g, gn_id id, int depth)
{
    if (depth > 16) return false;
    const gn__node *n = &g->nodes[id];
    if (n->flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)) return false;
    if (op_is(g, id, "Const")) return true;
    if (!n->n_in || !gn__kernel_for(gn__node_op(g, id))) return false;
    for (uint32_t k = 0; k < n->n_in; k++)
        if (!const_like(g, n->in[k].node, depth + 1)) return false;
    return true;
}

static int int8_kind(const gn_graph *g, gn_id id)
{
    const char *op = gn__node_op(g, id);
    if (!strcmp(op, "Conv2D") || !strcmp(op, "_FusedConv2D")) return GN__Q8_CONV;
    if (!strcmp(op, "DepthwiseConv2dNative")) return GN__Q8_DW;
    if (!strcmp(op, "MatMul") || !strcmp(op, "_FusedMatMul")) return GN__Q8_MM;
    return 0;
}

static const Tensorflow__AttrValue__ListValue *list_attr(const gn_graph *g, gn_id id, const char *k)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, k);
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST ? v->list : NULL;
}

static bool str_attr_is(const gn_graph *g, gn_id id, const char *k, const char *want, bool absent_ok)
{
    const char *s;
    size_t n;
    if (!gn__attr_get_string(g, id, k, &s, &n)) return absent_ok;
    return n == strlen(want) && !memcmp(s, want, n);
}

/* The fused epilogue: BiasAdd then at most one activation; false when not one we apply. */
static bool fused_epilogue(const gn_graph *g, gn_id id, bool *bias, int *act)
{
    *bias = false;
    *act = GN__Q8_ACT_NONE;
    const Tensorflow__AttrValue__ListValue *l = list_attr(g, id, "fused_ops");
    if (!l) return !op_is(g, id, "_FusedConv2D") && !op_is(g, id, "_FusedMatMul");
    size_t i = 0;
    if (i < l->n_s && l->s[i].len == 7 && !memcmp(l->s[i].data, "BiasAdd", 7)) {
        *bias = true;
        i++;
    }
    if (i < l->n_s) {
        static const struct {
            const char *n;
            int a;
        } acts[] = {{"Relu", GN__Q8_ACT_RELU}, {"Relu6", GN__Q8_ACT_RELU6}, {"Elu", GN__Q8_ACT_ELU},
                    {"LeakyRelu", GN__Q8_ACT_LEAKY}};
        bool found = false;
        for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++)
            if (l->s[i].len == strlen(acts[k].n) && !memcmp(l->s[i].data, acts[k].n, l->s[i].len)) {
                *act = acts[k].a;
                found = true;
            }
        if (!found) return false;
        i++;
    }
    if (i != l->n_s) return false;
    int64_t nargs = 0;
    (void)gn__attr_get_int(g, id, "num_args", &nargs);
    return nargs == (*bias ? 1 : 0) && g->nodes[id].n_in == 2 + (uint32_t)nargs;
}

bool gn__int8_node_info(const gn_graph *g, gn_id id, gn__q8_node *out)
{
    gn__q8_node q;
    memset(&q, 0, sizeof q);
    q.kind = int8_kind(g, id);
    if (!q.kind || g->nodes[id].n_in < 2) return false;
    int dt = 0;
    if (!gn__attr_get_type(g, id, "T", &dt) || dt != DT_F32) return false;
    if (const_like(g, g->nodes[id].in[0].node, 0) || !const_like(g, g->nodes[id].in[1].node, 0)) return false;
    if (!fused_epilogue(g, id, &q.bias, &q.act)) return false;
    q.alpha = 0.2f;
    (void)gn__attr_get_float(g, id, "leakyrelu_alpha", &q.alpha);
    if (q.kind == GN__Q8_MM) {
        (void)gn__attr_get_bool(g, id, "transpose_a", &q.ta);
        (void)gn__attr_get_bool(g, id, "transpose_b", &q.tb);
    } else {
        if (!str_attr_is(g, id, "data_format", "NHWC", true)) return false;
        const Tensorflow__AttrValue__ListValue *d = list_attr(g, id, "dilations");
        for (size_t k = 0; d && k < d->n_i; k++)
            if (d->i[k] != 1) return false;
        const Tensorflow__AttrValue__ListValue *s = list_attr(g, id, "strides");
        if (!s || s->n_i != 4 || s->i[0] != 1 || s->i[3] != 1 || s->i[1] < 1 || s->i[2] < 1) return false;
        q.stride[0] = s->i[1];
        q.stride[1] = s->i[2];
        if (str_attr_is(g, id, "padding", "VALID", false)) q.pad = GN__Q8_VALID;
        else if (str_attr_is(g, id, "padding", "SAME", false)) q.pad = GN__Q8_SAME;
        else if (q.kind == GN__Q8_CONV && str_attr_is(g, id, "padding", "EXPLICIT", false)) {
            const Tensorflow__AttrValue__ListValue *ep = list_attr(g, id, "explicit_paddings");
            if (!ep || ep->n_i != 8) return false;
            q.pad = GN__Q8_EXPLICIT;
            for (int k = 0; k < 4; k++) {
                q.ep[k] = ep->i[2 + k];
                if (q.ep[k] < 0) return false;
            }
        } else return false;
    }
    if (out) *out = q;
    return true;
}

/* ---- weights -------------------------------------------------------------------------------------- */
float gn__q8_scale(float amax) { return amax > 0 ? amax / 127.0f : 1.0f; }

gn_status gn__q8_weights(const gn_graph *g, gn_id id, const gn__q8_node *q, const gn__tensor *w, int64_t pitch,
                         int8_t *wq, float *sw, int64_t *k_out, int64_t *n_out, gn__err *err)
{
    const char *name = gn__node_name(g, id);
    if (w->dtype != DT_F32)
        return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: node '%s': weights are not float32", name);
    if (w->rank != (q->kind == GN__Q8_MM ? 2 : 4))
        return gn__fail(err, GN_ERR_GRAPH, "INT8 engine: node '%s': %s", name,
                        q->kind == GN__Q8_MM ? "weights are not a matrix" : "filter is not 4-D");
    const float *wf = w->data;
    int64_t K, N;
    if (q->kind == GN__Q8_MM) {
        K = q->tb ? w->dims[1] : w->dims[0];
        N = q->tb ? w->dims[0] : w->dims[1];
    } else if (q->kind == GN__Q8_CONV) {
        K = w->dims[0] * w->dims[1] * w->dims[2];
        N = w->dims[3];
    } else {
        K = w->dims[0] * w->dims[1];
        N = w->dims[2] * w->dims[3];
    }
    *k_out = K;
    *n_out = N;
    if (!wq) return GN_OK;
    if (q->kind != GN__Q8_DW && pitch < K)
        return gn__fail(err, GN_ERR_INTERNAL, "INT8 engine: node '%s': row pitch %lld below %lld", name,
                        (long long)pitch, (long long)K);
    /* element (k, n) of the weights: MatMul op(W)[k][n]; convolution
     * HWIO [k][n] with k over (kh, kw, c); depthwise HWCM [k][j] with k over
     * (kh, kw) and j over (c, m) */
    for (int64_t n = 0; n < N; n++) {
        float m = 0;
        for (int64_t k = 0; k < K; k++) {
            float v = q->kind == GN__Q8_MM && q->tb ? wf[n * K + k] : wf[k * N + n];
            m = fmaxf(m, fabsf(v));
        }
        sw[n] = gn__q8_scale(m);
        float inv = 1.0f / sw[n];
        for (int64_t k = 0; k < K; k++) {
            float v = q->kind == GN__Q8_MM && q->tb ? wf[n * K + k] : wf[k * N + n];
            if (q->kind == GN__Q8_DW) wq[k * N + n] = gn__q8(v, inv);
            else wq[n * pitch + k] = gn__q8(v, inv);
        }
        for (int64_t k = K; q->kind != GN__Q8_DW && k < pitch; k++) wq[n * pitch + k] = 0;
    }
    return GN_OK;
}
