/* The remapper (Grappler's "remapping", docs/reference_grappler.md §3.12):
 * fuses op patterns into single kernels.
 *
 *  remap.fold_batchnorm        Conv2D / DepthwiseConv2dNative (+ BiasAdd of a
 *                              constant) + inference FusedBatchNorm[V2|V3] whose
 *                              filter and parameters are constants: the batch
 *                              norm is folded into new filter and bias constants
 *                              ("<bn>/folded_filter", "<bn>/folded_bias") and the
 *                              FusedBatchNorm becomes a BiasAdd under its own
 *                              name (then fusable below).
 *  remap.fold_scale           Conv2D / DepthwiseConv2dNative with a constant
 *                              filter + Mul by a constant that varies along the
 *                              channel dim only (what Keras' inference batch
 *                              norm becomes, and constant folding leaves for
 *                              depthwise convolutions): the factor goes into a
 *                              new filter "<mul>/folded_filter" and the Mul
 *                              becomes the convolution under its own name.
 *  remap.contraction_bias_act  Conv2D / DepthwiseConv2dNative / MatMul + BiasAdd
 *                              (or Add/AddV2 of a 1-D constant on the channel
 *                              dim) (+ Relu, Relu6, Elu, LeakyRelu, Tanh,
 *                              Sigmoid) -> _FusedConv2D /
 *                              _FusedDepthwiseConv2dNative / _FusedMatMul.
 *  remap.conv_batchnorm_act    Conv2D (+ DepthwiseConv2dNative under policy
 *                              grapnel) + inference FusedBatchNorm (+ activation)
 *                              -> _FusedConv2D with fused_ops
 *                              ["FusedBatchNorm"(, act)], num_args 4, epsilon.
 *  remap.matmul_gelu          MatMul + bias + Gelu written out (0.5 x (1 + Tanh(
 *                              sqrt(2/pi) (x + 0.044715 x^3))) or 0.5 x (1 +
 *                              Erf(x / sqrt 2)), products grouped either way)
 *                              -> _FusedMatMul ["BiasAdd", "GeluApproximate" or
 *                              "GeluExact"] under the last Mul's name.
 *  remap.batchnorm_ex          FusedBatchNorm (+ Add of a side input) + Relu ->
 *                              _FusedBatchNormEx under the batch norm's name; the
 *                              Relu becomes an Identity of it (TensorFlow's form).
 *  remap.contraction_bias_add  Conv2D / MatMul + bias (as above) + Add/AddV2 of
 *                              a side input of the output's shape (a residual
 *                              connection) (+ activation) -> _FusedConv2D /
 *                              _FusedMatMul with fused_ops ["BiasAdd", "Add"(,
 *                              act)], num_args 2: inputs x, filter, bias, side
 *                              (cuDNN's conv-bias-activation with its z input;
 *                              cuBLASLt with beta = 1).
 *  remap.conv_squeeze_bias     Conv2D + Squeeze (keeping the channel dim) +
 *                              BiasAdd (+ activation), Keras' Conv1D ->
 *                              _FusedConv2D ["BiasAdd"(, act)] under the
 *                              Conv2D's name, then the Squeeze under the last
 *                              node's name (TensorFlow's form).
 *  remap.dilated_conv          SpaceToBatchND + Conv2D / DepthwiseConv2dNative
 *                              (VALID, unit strides) + BatchToSpaceND, as
 *                              tf.nn.atrous_conv2d and with_space_to_batch
 *                              build a dilated convolution -> the convolution
 *                              with dilations = the block shape and padding
 *                              SAME / VALID / EXPLICIT (the paddings less the
 *                              crops) under the BatchToSpaceND's name; done
 *                              with the folds, before the fusions.
 *  remap.batchnorm_scale_offset  a standalone inference FusedBatchNorm with
 *                              constant parameters -> Mul(x, scale') + offset'
 *                              (constants "<bn>/scale", "<bn>/offset"; the Add
 *                              keeps the batch norm's name).
 *
 * Driver (TensorFlow's): the folds first, then the nodes in reverse topological
 * order, so that a pattern rooted at its last op is found before its
 * sub-patterns. The fused node takes the name (and so the fetches and
 * consumers) of the pattern's last node; intermediate nodes must have exactly
 * one consumer, no control edges, must not be preserved, and the pattern's
 * nodes share one device.
 *
 * Policy (option "remap.policy"):
 *  - tensorflow (the default): the output's contract (fusion_contract.h,
 *    docs/fusion_contract.md). Every fused op written is one the table says
 *    TensorFlow's kernels run on the node's device (for a CPU: on both of
 *    tensorflow-cpu's paths, oneDNN on and off); a fusion it does not hold is
 *    refused with the table's reason. On top of the table, TensorFlow's own
 *    remapper's choices: GPU-placed, Conv2D + BiasAdd + Relu only on a spatial
 *    (not 1x1) filter, no MatMul fusion (cuBLASLt is opt-in in TensorFlow),
 *    no Conv2D + FusedBatchNorm, _FusedBatchNormEx NHWC inference only;
 *    CPU-placed, Conv2D + Squeeze + BiasAdd without an activation; no
 *    dilated-convolution rewrite.
 *  - grapnel: every fusion grapnel's backends run: bias / batch norm and
 *    activation into any convolution (depthwise and 1x1 included) and matrix
 *    product, side inputs, on CPU and GPU placements; float32 and float16
 *    everywhere, float64 on CPU for convolutions. A fusion the table does not
 *    hold is written and reported "[grapnel-only: <the table's reason>]":
 *    TensorFlow cannot run that output. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "optimizer/pass.h"
#include "optimizer/passes/fusion_contract.h"

#define P_FOLD "remap.fold_batchnorm"
#define P_BIAS "remap.contraction_bias_act"
#define P_CBN "remap.conv_batchnorm_act"
#define P_BNEX "remap.batchnorm_ex"
#define P_BNSO "remap.batchnorm_scale_offset"
#define P_SCALE "remap.fold_scale"
#define P_SIDE "remap.contraction_bias_add"
#define P_SQ "remap.conv_squeeze_bias"
#define P_DIL "remap.dilated_conv"

const gn__pattern gn__patterns_remap[] = {
    {P_BIAS, "Conv2D/DepthwiseConv2dNative/MatMul + BiasAdd (+ activation) -> _Fused*"},
    {P_CBN, "Conv2D + inference FusedBatchNorm (+ activation) -> _FusedConv2D"},
    {P_SIDE, "Conv2D/MatMul + BiasAdd + Add of a side input (+ activation) -> _FusedConv2D/_FusedMatMul"},
    {P_SQ, "Conv2D + Squeeze + BiasAdd (+ activation) -> _FusedConv2D + Squeeze"},
    {P_DIL, "SpaceToBatchND + Conv2D/DepthwiseConv2dNative + BatchToSpaceND -> dilated convolution"},
    {P_FOLD, "constant filter + inference FusedBatchNorm -> folded filter and BiasAdd"},
    {P_SCALE, "constant filter + Mul by a per-channel constant -> folded filter"},
    {"remap.matmul_gelu", "MatMul + BiasAdd + Gelu subgraph (tanh or erf form) -> _FusedMatMul"},
    {P_BNEX, "FusedBatchNorm (+ side Add) + Relu -> _FusedBatchNormEx"},
    {P_BNSO, "inference FusedBatchNorm with constant parameters -> Mul + Add"},
    {NULL, NULL},
};

enum { DT_F32 = 1, DT_F64 = 2, DT_BF16 = 14, DT_F16 = 19 };
enum { K_CONV = 0, K_DW = 1, K_MM = 2 };

typedef struct shrec {
    gn__edge e;
    int32_t rank;      /* -1 unknown */
    bool full;         /* every dim known (else unknown ones are -1) */
    int64_t dims[4];
} shrec;

/* What the driver loops ask of a node's op, found once per op string (a
 * graph has few distinct ops, and the loops visit every node). */
enum {
    OC_FBN = 1, OC_CONV = 2, OC_DW = 4, OC_MM = 8, OC_ACT = 16, OC_BIAS = 32, OC_ADD = 64, OC_MUL = 128, OC_B2S = 256,
    OC_KNOWN = 1u << 15,
};
#define OC_SLOTS 64

typedef struct rm {
    gn__pass_ctx *c;
    gn_graph *g;
    int policy;
    char name[1024];
    shrec *sh;         /* sorted by edge */
    uint32_t n_sh;
    bool anchor;       /* the graph has a contraction or a FusedBatchNorm */
    uint32_t oc_op[OC_SLOTS];  /* op string id of each cache slot */
    uint16_t oc_cls[OC_SLOTS]; /* its OC_ bits, OC_KNOWN when filled */
} rm;

/* ---- small helpers ------------------------------------------------------------------------- */
static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

static bool is_fbn(const gn_graph *g, gn_id id)
{
    const char *o = gn__node_op(g, id);
    return !strcmp(o, "FusedBatchNorm") || !strcmp(o, "FusedBatchNormV2") || !strcmp(o, "FusedBatchNormV3");
}

static int contraction_kind(const gn_graph *g, gn_id id)
{
    const char *o = gn__node_op(g, id);
    if (!strcmp(o, "Conv2D")) return K_CONV;
    if (!strcmp(o, "DepthwiseConv2dNative")) return K_DW;
    if (!strcmp(o, "MatMul")) return K_MM;
    return -1;
}

static const char *const k_fused_op[] = {"_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"};

/* The activations a fused kernel can take (fused_ops name = op name). */
static bool is_act(const gn_graph *g, gn_id id)
{
    static const char *const acts[] = {"Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
    const char *o = gn__node_op(g, id);
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (!strcmp(o, acts[i])) return true;
    return false;
}

static uint32_t opclass(rm *r, gn_id id)
{
    uint32_t op = gn__node_at(r->g, id)->op, slot = (op * 2654435761u) >> 26;
    if ((r->oc_cls[slot] & OC_KNOWN) && r->oc_op[slot] == op) return r->oc_cls[slot];
    const gn_graph *g = r->g;
    const char *o = gn__node_op(g, id);
    int kind = contraction_kind(g, id);
    uint32_t cls = OC_KNOWN | (is_fbn(g, id) ? OC_FBN : 0) | (kind == K_CONV ? OC_CONV : 0) | (kind == K_DW ? OC_DW : 0) |
                   (kind == K_MM ? OC_MM : 0) | (is_act(g, id) ? OC_ACT : 0) | (!strcmp(o, "BiasAdd") ? OC_BIAS : 0) |
                   (!strcmp(o, "Add") || !strcmp(o, "AddV2") ? OC_ADD : 0) | (!strcmp(o, "Mul") ? OC_MUL : 0) |
                   (!strcmp(o, "BatchToSpaceND") ? OC_B2S : 0);
    r->oc_op[slot] = op;
    r->oc_cls[slot] = (uint16_t)cls;
    return cls;
}

static int32_t tattr(const gn_graph *g, gn_id id, const char *key)
{
    int t = 0;
    return gn__attr_get_type(g, id, key, &t) ? (int32_t)t : 0;
}

/* NumPy's name of a float dtype ("float32", "bfloat16") */
static const char *dt_name(int32_t dt) { return gn__dtype_is_float(dt) ? gn__dtype_numpy_name(dt) : "non-float"; }

static bool str_attr_is(const gn_graph *g, gn_id id, const char *key, const char *dflt, const char *want)
{
    const char *s = NULL;
    size_t n = 0;
    if (!gn__attr_get_string(g, id, key, &s, &n)) return strcmp(dflt, want) == 0;
    return n == strlen(want) && !memcmp(s, want, n);
}

static bool nchw(const gn_graph *g, gn_id id) { return str_attr_is(g, id, "data_format", "NHWC", "NCHW"); }

static bool has_ctrl(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    return n->n_ctrl > 0 || n->n_cuse > 0;
}

static bool preserved(const gn_graph *g, gn_id id)
{
    return (gn__node_at(g, id)->flags & (GN__NODE_PRESERVE | GN__NODE_FN_ARG | GN__NODE_FN_RET)) != 0;
}

/* Data consumers of any output of id. */
static uint32_t n_uses(const gn_graph *g, gn_id id) { return gn__node_at(g, id)->n_use; }

/* Are all data consumers reading output 0? */
static bool uses_only_port0(const gn_graph *g, gn_id id)
{
    const gn__node *n = gn__node_at(g, id);
    for (uint32_t i = 0; i < n->n_use; i++) {
        const gn__node *u = gn__node_at(g, n->use[i].node);
        if (u->in[n->use[i].slot].index != 0) return false;
    }
    return true;
}

static bool same_device(const gn_graph *g, gn_id a, gn_id b) { return gn__node_at(g, a)->device == gn__node_at(g, b)->device; }

/* The producer of input k read at output 0, or GN_NONE. */
static gn_id in0(const gn_graph *g, gn_id id, uint32_t k)
{
    const gn__node *n = gn__node_at(g, id);
    if (k >= n->n_in || n->in[k].index != 0) return GN_NONE;
    return n->in[k].node;
}

static gn_status nomem(rm *r) { return gn__fail(r->c->err, GN_ERR_NOMEM, "out of memory"); }

/* ---- attrs --------------------------------------------------------------------------------- */
/* TArgs: n copies of dt (n is at most 4: the fused arguments). */
static gn_status set_types(rm *r, gn_id id, const char *key, int32_t dt, uint32_t n)
{
    int32_t t[4];
    if (n > 4) return gn__fail(r->c->err, GN_ERR_INTERNAL, "remap: %u fused arguments", n);
    for (uint32_t i = 0; i < n; i++) t[i] = dt;
    return gn__node_set_attr_types(r->g, id, key, t, n);
}

/* Saved attr values of a node (blob-owned, so they outlive the node). */
typedef struct saved_attrs {
    uint32_t n;
    const char *key[12];
    const Tensorflow__AttrValue *v[12];
} saved_attrs;

static void save_attrs(const gn_graph *g, gn_id id, const char *const *keys, size_t nk, saved_attrs *s)
{
    s->n = 0;
    for (size_t i = 0; i < nk && s->n < 12; i++) {
        const Tensorflow__AttrValue *v = gn__node_attr(g, id, keys[i]);
        if (!v) continue;
        s->key[s->n] = keys[i];
        s->v[s->n++] = v;
    }
}

static gn_status put_attrs(rm *r, gn_id id, const saved_attrs *s)
{
    for (uint32_t i = 0; i < s->n; i++) GN_TRY(gn__node_set_attr(r->g, id, s->key[i], s->v[i]));
    return GN_OK;
}

/* Drops every data input and attr of id and gives it op `op` (control inputs,
 * name, device and consumers stay). */
static gn_status reset_node(rm *r, gn_id id, const char *op)
{
    gn__node *n = gn__node_at(r->g, id);
    while (n->n_in) {
        GN_TRY(gn__node_remove_input(r->g, id, n->n_in - 1));
        n = gn__node_at(r->g, id);
    }
    while (n->n_attr) {
        GN_TRY(gn__node_remove_attr(r->g, id, gn__str(r->g, n->attr[n->n_attr - 1].key)));
        n = gn__node_at(r->g, id);
    }
    return gn__node_set_op(r->g, id, op);
}

/* Removes a node left without consumers (an intermediate of a fused pattern,
 * or a constant nothing reads any more). */
static gn_status drop_if_orphan(rm *r, gn_id id, bool const_only)
{
    if (id == GN_NONE || !gn__node_live(r->g, id)) return GN_OK;
    const gn__node *n = gn__node_at(r->g, id);
    if (n->n_use || n->n_cuse || preserved(r->g, id)) return GN_OK;
    if (const_only && !op_is(r->g, id, "Const")) return GN_OK;
    return gn__node_remove(r->g, id);
}

/* ---- constants ----------------------------------------------------------------------------- */
static bool const_tensor(const gn_graph *g, gn_id id, gn__tensor *t)
{
    memset(t, 0, sizeof *t);
    if (id == GN_NONE || !op_is(g, id, "Const")) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    gn__err e;
    gn__err_clear(&e);
    if (gn__tensor_from_proto(v->tensor, t, &e) != GN_OK) {
        memset(t, 0, sizeof *t);
        return false;
    }
    return true;
}

/* The shape of a Const's value without decoding it. */
static bool const_shape(const gn_graph *g, gn_id id, int32_t *rank, int64_t *dims, int32_t maxr)
{
    if (id == GN_NONE || !op_is(g, id, "Const")) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !v->tensor) return false;
    const Tensorflow__TensorShapeProto *s = v->tensor->tensor_shape;
    if (!s || s->unknown_rank || (int32_t)s->n_dim > maxr) return false;
    *rank = (int32_t)s->n_dim;
    for (size_t i = 0; i < s->n_dim; i++) dims[i] = s->dim[i]->size;
    return true;
}

/* The constants a new one is computed from (GN_NONE entries skipped): it
 * takes their control inputs. Inside a loop a Const is anchored to the loop's
 * frame by a control input (TensorFlow puts a node without inputs in the root
 * frame, and refuses a node whose inputs come from two frames); a constant
 * made from anchored ones must be anchored the same way. */
typedef struct const_srcs {
    gn_id id[6];
    uint32_t n;
} const_srcs;

/* A Const node holding p (allocated in the graph), with the control inputs of
 * the constants in src. */
static gn_status add_const_proto(rm *r, const char *name, int32_t dtype, Tensorflow__TensorProto *p, gn_id device_of,
                                 const const_srcs *src, gn_id *out)
{
    gn_id id = GN_NONE;
    GN_TRY(gn__node_add(r->g, name, "Const", &id));
    if (device_of != GN_NONE) gn__node_set_device(r->g, id, gn__str(r->g, gn__node_at(r->g, device_of)->device));
    GN_TRY(gn__node_set_attr_type(r->g, id, "dtype", dtype));
    GN_TRY(gn__node_set_attr_tensor(r->g, id, "value", p));
    for (uint32_t i = 0; src && i < src->n; i++) {
        if (src->id[i] == GN_NONE) continue;
        for (uint32_t k = 0; k < gn__node_at(r->g, src->id[i])->n_ctrl; k++)
            GN_TRY(gn__node_add_control(r->g, id, gn__node_at(r->g, src->id[i])->ctrl[k]));
    }
    *out = id;
    return GN_OK;
}

static gn_status add_const(rm *r, const char *name, const gn__tensor *t, gn_id device_of, const const_srcs *src,
                          gn_id *out)
{
    Tensorflow__TensorProto *p = NULL;
    GN_TRY(gn__tensor_to_proto(t, gn__graph_value_allocator(r->g), &p, r->c->err));
    return add_const_proto(r, name, t->dtype, p, device_of, src, out);
}

/* A float32 filter (HWIO / HWIM: the output channel varies fastest) times a
 * per-channel factor, encoded straight into the graph's memory: a folded
 * filter is as large as the original, and a graph of 10^6 nodes holds
 * hundreds of megabytes of them, so it is written once, in place. */
static gn_status scaled_filter(rm *r, const gn__tensor *w, int64_t ch, const double *sd, const float *sv, int64_t ns,
                               Tensorflow__TensorProto **out)
{
    GN_TRY(gn__tensor_to_proto(w, gn__graph_value_allocator(r->g), out, r->c->err));
    int64_t nw = gn__tensor_numel(w);
    uint8_t *d = (*out)->tensor_content.data;
    if (!nw || !d || ch <= 0) return GN_OK;
    for (int64_t i = 0; i < nw; i += ch)
        for (int64_t k = 0; k < ch; k++) {
            float x;
            uint8_t *e = d + (size_t)(i + k) * sizeof x;
            memcpy(&x, e, sizeof x);
            x = sd ? (float)((double)x * sd[k]) : x * (ns == 1 ? sv[0] : sv[k]);
            memcpy(e, &x, sizeof x);
        }
    return GN_OK;
}

/* ---- shapes of non-constant weights (inferred once, before any rewrite) -------------------- */
static int shrec_cmp(const void *a, const void *b)
{
    const shrec *x = a, *y = b;
    if (x->e.node != y->e.node) return x->e.node < y->e.node ? -1 : 1;
    if (x->e.index != y->e.index) return x->e.index < y->e.index ? -1 : 1;
    return 0;
}

/* The shape of edge e; with `partial`, unknown dims are -1 (the rank is known). */
static bool edge_shape_any(const rm *r, gn__edge e, bool partial, int32_t *rank, int64_t *dims)
{
    if (e.index == 0 && const_shape(r->g, e.node, rank, dims, 4)) return true;
    shrec key = {.e = e};
    const shrec *h = r->n_sh ? bsearch(&key, r->sh, r->n_sh, sizeof *r->sh, shrec_cmp) : NULL;
    if (!h || h->rank < 0 || (!partial && !h->full)) return false;
    *rank = h->rank;
    memcpy(dims, h->dims, sizeof h->dims);
    return true;
}

static bool edge_shape(const rm *r, gn__edge e, int32_t *rank, int64_t *dims)
{
    return edge_shape_any(r, e, false, rank, dims);
}

static gn_status want_shape(rm *r, gn__edge e, uint32_t *cap)
{
    int32_t rk;
    int64_t d[4];
    if (e.index == 0 && const_shape(r->g, e.node, &rk, d, 4)) return GN_OK;
    if (r->n_sh == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 64;
        shrec *p = realloc(r->sh, nc * sizeof *p);
        if (!p) return nomem(r);
        r->sh = p;
        *cap = nc;
    }
    r->sh[r->n_sh].e = e;
    r->sh[r->n_sh++].rank = -1;
    return GN_OK;
}

/* Records the shapes the matchers need that constants do not give: weights
 * of contractions, and both sides of an Add after a FusedBatchNorm. */
static gn_status collect_shapes(rm *r)
{
    gn_graph *g = r->g;
    uint32_t cap = 0;
    bool anchor = false;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        if (!gn__node_live(g, i)) continue;
        const gn__node *n = gn__node_at(g, i);
        uint32_t cls = opclass(r, i);
        anchor = anchor || (cls & (OC_CONV | OC_DW | OC_MM | OC_FBN));
        if ((cls & (OC_CONV | OC_DW | OC_MM)) && n->n_in >= 2) GN_TRY(want_shape(r, n->in[1], &cap));
        /* the contract: a grouped Conv2D (input depth != filter depth), a
           batch norm's channel count */
        if ((cls & OC_CONV) && n->n_in >= 2) GN_TRY(want_shape(r, n->in[0], &cap));
        if ((cls & OC_FBN) && n->n_in >= 2) GN_TRY(want_shape(r, n->in[1], &cap));
        if ((cls & OC_ADD) && n->n_in == 2) {
            for (uint32_t k = 0; k < 2; k++) {
                gn_id p = in0(g, i, k);
                uint32_t pc = p != GN_NONE ? opclass(r, p) : 0;
                if ((pc & OC_FBN) && gn__node_at(g, p)->n_in >= 1) {
                    GN_TRY(want_shape(r, n->in[1 - k], &cap));
                    GN_TRY(want_shape(r, gn__node_at(g, p)->in[0], &cap));
                }
                /* a side input added to a biased contraction */
                if (pc & (OC_BIAS | OC_ADD)) {
                    GN_TRY(want_shape(r, n->in[1 - k], &cap));
                    GN_TRY(want_shape(r, n->in[k], &cap));
                }
            }
        }
    }
    /* Every shape the matchers look up belongs to a pattern anchored on a
     * contraction or a FusedBatchNorm, and no rewrite of this pass makes
     * either: without one, no lookup happens and the (whole-graph) shape
     * inference is not needed (nor are the fusions run). */
    r->anchor = anchor;
    if (!anchor) r->n_sh = 0;
    if (!r->n_sh) return GN_OK;
    if (!gn__graph_shapes(g)) {
        gn__err saved = g->err;
        if (gn__graph_infer_shapes(g) != GN_OK) g->err = saved;
    }
    for (uint32_t k = 0; k < r->n_sh; k++) {
        const gn__tinfo *t = gn__graph_shapes(g) ? gn__shape_of(g, r->sh[k].e.node, r->sh[k].e.index) : NULL;
        if (!t || t->shape.rank < 0 || t->shape.rank > 4) continue;
        bool known = true;
        for (int32_t d = 0; d < t->shape.rank; d++) known = known && t->shape.dims[d] >= 0;
        r->sh[k].rank = t->shape.rank;
        r->sh[k].full = known;
        for (int32_t d = 0; d < t->shape.rank; d++) r->sh[k].dims[d] = t->shape.dims[d] >= 0 ? t->shape.dims[d] : -1;
    }
    qsort(r->sh, r->n_sh, sizeof *r->sh, shrec_cmp);
    return GN_OK;
}

/* Output channels of a contraction from its weights' shape; -1 when unknown. */
static int64_t out_channels(const rm *r, gn_id conv, int kind)
{
    int32_t rk;
    int64_t d[4];
    if (!edge_shape(r, gn__node_at(r->g, conv)->in[1], &rk, d)) return -1;
    if (kind == K_MM) {
        if (rk != 2) return -1;
        bool tb = false;
        gn__attr_get_bool(r->g, conv, "transpose_b", &tb);
        return tb ? d[0] : d[1];
    }
    if (rk != 4) return -1;
    return kind == K_DW ? d[2] * d[3] : d[3];
}

/* ---- policy -------------------------------------------------------------------------------- */
static bool policy_tf(const rm *r) { return r->policy == GN_REMAP_POLICY_TENSORFLOW; }

/* NULL when the contraction's dtype is fine on its placement. */
static const char *dtype_refusal(const rm *r, int kind, int32_t dt, bool gpu, char *buf, size_t n)
{
    bool ok;
    if (policy_tf(r)) {
        if (gpu) ok = dt == DT_F32 || dt == DT_F16;
        else ok = dt == DT_F32 || (kind == K_CONV && dt == DT_F64);
    } else {
        if (gpu) ok = dt == DT_F32 || dt == DT_F16;
        else ok = dt == DT_F32 || dt == DT_F16 || (kind != K_MM && dt == DT_F64);
    }
    if (ok) return NULL;
    snprintf(buf, n, "dtype not supported on this target (%s on %s)", dt_name(dt), gpu ? "GPU" : "CPU");
    return buf;
}

/* ---- the output's contract (fusion_contract.h) ---------------------------------------------- */
/* NULL when the fusion may be written. Under policy tensorflow a fusion the
 * contract does not hold for the node's device is refused (the table's reason
 * in buf); under policy grapnel it is written and *only gets that reason: the
 * output is grapnel-only. */
static const char *gate(const rm *r, const gn__fusion_desc *d, char *buf, size_t n, const char **only)
{
    *only = NULL;
    const char *why = gn__fusion_contract_check(d, buf, n);
    if (!why) return NULL;
    if (policy_tf(r)) return why;
    *only = why;
    return NULL;
}

/* Is conv (a Conv2D) grouped: its input's depth differs from its filter's? */
static bool grouped_conv(const rm *r, gn_id conv)
{
    int32_t rx, rw;
    int64_t dx[4], dw[4];
    const gn__node *n = gn__node_at(r->g, conv);
    if (n->n_in < 2 || !edge_shape_any(r, n->in[0], true, &rx, dx) || !edge_shape_any(r, n->in[1], true, &rw, dw) ||
        rx != 4 || rw != 4)
        return false;
    int64_t cx = dx[nchw(r->g, conv) ? 1 : 3];
    return cx >= 0 && dw[2] >= 0 && cx != dw[2];
}

/* ---- reporting ------------------------------------------------------------------------------ */
static void describe(const rm *r, gn_id a, gn_id b, gn_id c3, char *buf, size_t n)
{
    const gn_graph *g = r->g;
    int k = snprintf(buf, n, "%s '%s'", gn__node_op(g, a), gn__node_name(g, a));
    if (b != GN_NONE && k >= 0 && (size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, " + %s '%s'", gn__node_op(g, b), gn__node_name(g, b));
    if (c3 != GN_NONE && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, " + %s '%s'", gn__node_op(g, c3), gn__node_name(g, c3));
}

/* The checks every intermediate node passes (NULL: fine); reason into buf. */
static const char *intermediate_refusal(const rm *r, gn_id id, gn_id root, char *buf, size_t n)
{
    const gn_graph *g = r->g;
    if (preserved(g, id)) {
        snprintf(buf, n, "%s '%s' is preserved (fetch)", gn__node_op(g, id), gn__node_name(g, id));
        return buf;
    }
    if (n_uses(g, id) > 1) {
        snprintf(buf, n, "%s has a second consumer", gn__node_op(g, id));
        return buf;
    }
    if (has_ctrl(g, id)) {
        snprintf(buf, n, "%s '%s' has control dependencies", gn__node_op(g, id), gn__node_name(g, id));
        return buf;
    }
    if (!same_device(g, id, root)) {
        snprintf(buf, n, "%s '%s' is on another device", gn__node_op(g, id), gn__node_name(g, id));
        return buf;
    }
    return NULL;
}

/* ---- remap.fold_batchnorm ------------------------------------------------------------------- */
/* An inference FusedBatchNorm whose only consumed output is y (output 0). */
static bool inference_bn(const gn_graph *g, gn_id bn)
{
    bool tr = true;
    gn__attr_get_bool(g, bn, "is_training", &tr);
    return !tr && gn__node_at(g, bn)->n_in == 5 && uses_only_port0(g, bn);
}

static bool bn_params(const gn_graph *g, gn_id bn, int64_t ch, gn__tensor p[4])
{
    int ok = 0;
    for (uint32_t k = 0; k < 4; k++) {
        gn_id pid = in0(g, bn, k + 1);
        if (const_tensor(g, pid, &p[k]) && p[k].dtype == DT_F32 && p[k].rank == 1 && (ch < 0 || p[k].dims[0] == ch))
            ok++;
    }
    bool same = ok == 4 && p[1].dims[0] == p[0].dims[0] && p[2].dims[0] == p[0].dims[0] && p[3].dims[0] == p[0].dims[0];
    if (!same)
        for (uint32_t k = 0; k < 4; k++) gn__tensor_release(&p[k]);
    return same;
}

static gn_status fold_one(rm *r, gn_id bn)
{
    gn_graph *g = r->g;
    if (!inference_bn(g, bn)) return GN_OK;
    gn_id x = in0(g, bn, 0), badd = GN_NONE, conv = GN_NONE;
    if (x == GN_NONE) return GN_OK;
    if (op_is(g, x, "BiasAdd")) {
        badd = x;
        conv = in0(g, x, 0);
    } else {
        conv = x;
    }
    if (conv == GN_NONE) return GN_OK;
    int kind = contraction_kind(g, conv);
    if (kind != K_CONV && kind != K_DW) return GN_OK;
    char what[512], why[768];
    describe(r, conv, badd, bn, what, sizeof what);
    const char *bad = NULL;
    gn__tensor w, b, p[4];
    memset(&w, 0, sizeof w);
    memset(&b, 0, sizeof b);
    memset(p, 0, sizeof p);
    gn_id wid = in0(g, conv, 1), bid = badd != GN_NONE ? in0(g, badd, 1) : GN_NONE;
    if (preserved(g, bn)) {
        snprintf(why, sizeof why, "%s '%s' is preserved (fetch)", gn__node_op(g, bn), gn__node_name(g, bn));
        bad = why;
    }
    if (!bad) bad = intermediate_refusal(r, conv, bn, why, sizeof why);
    if (!bad && badd != GN_NONE) bad = intermediate_refusal(r, badd, bn, why, sizeof why);
    if (!bad && (has_ctrl(g, bn) && gn__node_at(g, bn)->n_cuse)) bad = "the batch norm has control consumers";
    if (!bad && (tattr(g, conv, "T") != DT_F32 || tattr(g, bn, "T") != DT_F32 ||
                 (tattr(g, bn, "U") && tattr(g, bn, "U") != DT_F32)))
        bad = "dtype not supported for folding (float32 only)";
    if (!bad && nchw(g, conv) != nchw(g, bn)) bad = "data formats differ";
    if (!bad && (!const_tensor(g, wid, &w) || w.dtype != DT_F32 || w.rank != 4)) bad = "filter is not a constant";
    int64_t ch = -1;
    if (!bad) ch = kind == K_DW ? w.dims[2] * w.dims[3] : w.dims[3];
    if (!bad && badd != GN_NONE &&
        (!const_tensor(g, bid, &b) || b.dtype != DT_F32 || b.rank != 1 || b.dims[0] != ch || nchw(g, badd) != nchw(g, bn)))
        bad = "bias is not a constant";
    if (!bad && !bn_params(g, bn, ch, p)) bad = "batch norm parameters are not constants";
    if (bad) {
        gn__pass_refused(r->c, P_FOLD, g, bn, "%s not folded: %s", what, bad);
        gn__tensor_release(&w);
        gn__tensor_release(&b);
        return GN_OK;
    }
    float eps = 1e-4f;
    gn__attr_get_float(g, bn, "epsilon", &eps);
    gn_status st = GN_OK;
    float *nbd = malloc((size_t)(ch ? ch : 1) * sizeof(float));
    double *s = malloc((size_t)(ch ? ch : 1) * sizeof(double));
    if (!nbd || !s) {
        st = nomem(r);
        goto out;
    }
    const float *sc = p[0].data, *of = p[1].data, *mn = p[2].data, *vr = p[3].data;
    for (int64_t k = 0; k < ch; k++) {
        s[k] = (double)sc[k] / sqrt((double)vr[k] + (double)eps);
        double b0 = badd != GN_NONE ? (double)((const float *)b.data)[k] : 0.0;
        nbd[k] = (float)((b0 - (double)mn[k]) * s[k] + (double)of[k]);
    }
    Tensorflow__TensorProto *pw = NULL;
    if ((st = scaled_filter(r, &w, ch, s, NULL, 0, &pw)) != GN_OK) goto out;
    gn__tensor tb = {.dtype = DT_F32, .rank = 1, .dims = {ch}, .data = nbd, .nbytes = (size_t)ch * sizeof(float)};
    gn_id nwid = GN_NONE, nbid = GN_NONE;
    const char *bname = gn__node_name(g, bn);
    gn__pass_unique_name(g, bname, "folded_filter", r->name, sizeof r->name);
    const_srcs srcs = {{wid, bid, in0(g, bn, 1), in0(g, bn, 2), in0(g, bn, 3), in0(g, bn, 4)}, 6};
    if ((st = add_const_proto(r, r->name, DT_F32, pw, conv, &srcs, &nwid)) != GN_OK) goto out;
    bname = gn__node_name(g, bn);
    gn__pass_unique_name(g, bname, "folded_bias", r->name, sizeof r->name);
    if ((st = add_const(r, r->name, &tb, conv, &srcs, &nbid)) != GN_OK) goto out;
    if ((st = gn__node_set_input(g, conv, 1, (gn__edge){nwid, 0})) != GN_OK) goto out;
    /* the batch norm becomes BiasAdd(conv, folded bias) under its own name */
    int32_t T = tattr(g, bn, "T");
    bool cf = nchw(g, bn);
    gn_id params[4];
    for (uint32_t k = 0; k < 4; k++) params[k] = in0(g, bn, k + 1);
    if ((st = reset_node(r, bn, "BiasAdd")) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, bn, (gn__edge){conv, 0})) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, bn, (gn__edge){nbid, 0})) != GN_OK) goto out;
    if ((st = gn__node_set_attr_type(r->g, bn, "T", T)) != GN_OK) goto out;
    if ((st = gn__node_set_attr_string(r->g, bn, "data_format", cf ? "NCHW" : "NHWC")) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, badd, false)) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, wid, true)) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, bid, true)) != GN_OK) goto out;
    for (uint32_t k = 0; k < 4; k++)
        if ((st = drop_if_orphan(r, params[k], true)) != GN_OK) goto out;
    r->c->changed = true;
    gn__pass_rewrote(r->c, P_FOLD, g, bn, "folded %s into the filter and a bias (%lld channels)", what, (long long)ch);
out:
    free(nbd);
    free(s);
    gn__tensor_release(&w);
    gn__tensor_release(&b);
    for (uint32_t k = 0; k < 4; k++) gn__tensor_release(&p[k]);
    return st;
}

/* ---- remap.fold_scale ------------------------------------------------------------------------ */
/* Does constant shape d[rk] vary along the channel dim of conv's output only
 * (or not at all)? */
static bool channel_only(const gn_graph *g, gn_id conv, int kind, const int64_t *d, int32_t rk, int64_t ch)
{
    if (rk == 0) return true;
    bool cf = kind != K_MM && nchw(g, conv);
    if (cf && rk < 3) {
        for (int32_t i = 0; i < rk; i++)
            if (d[i] != 1) return false;
        return true;
    }
    if (rk > (kind == K_MM ? 2 : 4)) return false;
    int cdim = cf ? rk - 3 : rk - 1;
    for (int32_t i = 0; i < rk; i++)
        if (i != cdim && d[i] != 1) return false;
    return d[cdim] == ch || d[cdim] == 1;
}

static gn_status fold_scale(rm *r, gn_id mul)
{
    gn_graph *g = r->g;
    const gn__node *n = gn__node_at(g, mul);
    if (n->n_in != 2 || tattr(g, mul, "T") != DT_F32) return GN_OK;
    gn_id conv = GN_NONE;
    gn__edge c = {GN_NONE, 0};
    int kind = -1;
    for (uint32_t k = 0; k < 2 && conv == GN_NONE; k++) {
        gn_id p = in0(g, mul, k);
        int kk = p != GN_NONE ? contraction_kind(g, p) : -1;
        if ((kk == K_CONV || kk == K_DW) && op_is(g, n->in[1 - k].node, "Const") && n->in[1 - k].index == 0) {
            conv = p;
            kind = kk;
            c = n->in[1 - k];
        }
    }
    if (conv == GN_NONE) return GN_OK;
    int32_t rk, wr;
    int64_t d[4], wd[4];
    gn_id wid = in0(g, conv, 1);
    if (!const_shape(g, c.node, &rk, d, 4) || !const_shape(g, wid, &wr, wd, 4) || wr != 4) return GN_OK;
    int64_t ch = kind == K_DW ? wd[2] * wd[3] : wd[3];
    if (!channel_only(g, conv, kind, d, rk, ch)) return GN_OK;
    char what[512], why[768];
    describe(r, conv, mul, GN_NONE, what, sizeof what);
    const char *bad = intermediate_refusal(r, conv, mul, why, sizeof why);
    gn__tensor w, sc;
    memset(&w, 0, sizeof w);
    memset(&sc, 0, sizeof sc);
    if (!bad && tattr(g, conv, "T") != DT_F32) bad = "dtype not supported for folding (float32 only)";
    if (!bad && (!const_tensor(g, wid, &w) || w.dtype != DT_F32)) bad = "filter is not a float32 constant";
    if (!bad && (!const_tensor(g, c.node, &sc) || sc.dtype != DT_F32)) bad = "factor is not a float32 constant";
    if (bad) {
        gn__pass_refused(r->c, P_SCALE, g, mul, "%s not folded: %s", what, bad);
        gn__tensor_release(&w);
        gn__tensor_release(&sc);
        return GN_OK;
    }
    gn_status st = GN_OK;
    int64_t ns = gn__tensor_numel(&sc);
    Tensorflow__TensorProto *pw = NULL;
    if ((st = scaled_filter(r, &w, ch, NULL, sc.data, ns, &pw)) != GN_OK) goto out;
    gn_id nwid = GN_NONE;
    const char *base = gn__node_name(g, mul);
    gn__pass_unique_name(g, base, "folded_filter", r->name, sizeof r->name);
    const_srcs srcs = {{wid, c.node}, 2};
    if ((st = add_const_proto(r, r->name, DT_F32, pw, conv, &srcs, &nwid)) != GN_OK) goto out;
    /* the Mul becomes the convolution (its attrs, its input, the new filter) */
    const gn__node *cn = gn__node_at(g, conv);
    gn__edge x = cn->in[0];
    uint32_t na = cn->n_attr < 32 ? cn->n_attr : 32;
    const char *keys[32];
    const Tensorflow__AttrValue *vals[32];
    for (uint32_t i = 0; i < na; i++) {
        keys[i] = gn__str(g, cn->attr[i].key);
        vals[i] = cn->attr[i].value;
    }
    const char *cop = gn__node_op(g, conv);
    gn_id cid = c.node;
    if ((st = reset_node(r, mul, cop)) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, mul, x)) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, mul, (gn__edge){nwid, 0})) != GN_OK) goto out;
    for (uint32_t i = 0; i < na; i++)
        if ((st = gn__node_set_attr(g, mul, keys[i], vals[i])) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, conv, false)) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, wid, true)) != GN_OK) goto out;
    if ((st = drop_if_orphan(r, cid, true)) != GN_OK) goto out;
    r->c->changed = true;
    gn__pass_rewrote(r->c, P_SCALE, g, mul, "folded %s into the filter", what);
out:
    gn__tensor_release(&w);
    gn__tensor_release(&sc);
    return st;
}

/* ---- fused contraction --------------------------------------------------------------------- */
typedef struct cmatch {
    int kind;
    gn_id conv, mid, act;   /* mid: BiasAdd / Add / FusedBatchNorm */
    gn_id add;              /* the Add of a side input (args[1]), or GN_NONE */
    bool bn;                /* mid is a FusedBatchNorm */
    bool reshape;           /* the bias constant is [1, .., C, .., 1]: made a vector */
    const char *act_name;   /* fused_ops name of the activation when not its op (Gelu) */
    gn_id extra[12];        /* further nodes of the pattern (a Gelu subgraph), consumers first */
    uint32_t n_extra;
    gn__edge args[4];
    uint32_t nargs;
    const char *only;       /* set: the fusion is grapnel-only, and why (in only_buf) */
    char only_buf[640];
} cmatch;

/* The fused_ops list a match writes (names copied into opbuf). */
static uint32_t match_ops(const rm *r, const cmatch *m, const char *ops[3], char opbuf[3][32])
{
    const gn_graph *g = r->g;
    uint32_t nops = 0;
    ops[nops++] = m->bn ? "FusedBatchNorm" : "BiasAdd";
    if (m->add != GN_NONE) ops[nops++] = "Add";
    if (m->act != GN_NONE) ops[nops++] = m->act_name ? m->act_name : gn__node_op(g, m->act);
    for (uint32_t i = 0; i < nops; i++) {
        snprintf(opbuf[i], sizeof opbuf[i], "%s", ops[i]);
        ops[i] = opbuf[i];
    }
    return nops;
}

/* The contract gate for a contraction match (see gate()). */
static const char *match_gate(const rm *r, cmatch *m, bool gpu, char *buf, size_t n)
{
    const char *ops[3];
    char opbuf[3][32];
    gn__fusion_desc d;
    memset(&d, 0, sizeof d);
    d.op = k_fused_op[m->kind];
    d.n_ops = match_ops(r, m, ops, opbuf);
    d.fused_ops = ops;
    d.num_args = m->nargs;
    d.dtype = tattr(r->g, m->conv, "T");
    d.gpu = gpu;
    d.nchw = m->kind != K_MM && nchw(r->g, m->conv);
    d.grouped = m->kind == K_CONV && grouped_conv(r, m->conv);
    d.channels = -1;
    const char *only = NULL;
    const char *bad = gate(r, &d, m->only_buf, sizeof m->only_buf, &only);
    m->only = only;
    if (bad) {
        snprintf(buf, n, "%s", bad);
        return buf;
    }
    return NULL;
}

static const char *act_refusal(const rm *r, const cmatch *m, bool gpu)
{
    const gn_graph *g = r->g;
    if (!policy_tf(r)) return NULL;
    if (gpu) {
        if (m->act == GN_NONE) return "TensorFlow's GPU kernel fuses a convolution only with an activation";
        if (!op_is(g, m->act, "Relu"))
            return "activation not supported by the fused kernel (TensorFlow's GPU kernel takes Relu only)";
        return NULL;
    }
    return NULL;
}

/* The TensorFlow policy's extra conditions; NULL when none applies. */
static const char *tf_refusal(const rm *r, const cmatch *m, bool gpu)
{
    const gn_graph *g = r->g;
    if (!policy_tf(r)) return NULL;
    if (gpu) {
        if (m->kind == K_DW) return "TensorFlow has no GPU kernel for _FusedDepthwiseConv2dNative";
        if (m->kind == K_MM) return "TensorFlow fuses MatMul on GPU only with cuBLASLt (TF_USE_CUBLASLT)";
        if (m->bn) return "TensorFlow fuses Conv2D + FusedBatchNorm on CPU only";
        int32_t rk;
        int64_t d[4];
        if (!edge_shape(r, gn__node_at(g, m->conv)->in[1], &rk, d) || rk != 4)
            return "filter shape unknown: TensorFlow fuses only spatial convolutions on GPU";
        if (d[0] == 1 || d[1] == 1) return "1x1 filter: TensorFlow fuses only spatial convolutions on GPU";
        return NULL;
    }
    if (m->bn && (m->kind != K_CONV || nchw(g, m->conv)))
        return "TensorFlow fuses FusedBatchNorm only into an NHWC Conv2D";
    return NULL;
}

static gn_status fuse(rm *r, const cmatch *m, const char *pattern, const char *what)
{
    gn_graph *g = r->g;
    gn_id root = m->act != GN_NONE ? m->act : m->add != GN_NONE ? m->add : m->mid;
    int32_t T = tattr(g, m->conv, "T");
    float alpha = 0.2f, eps = 0.0f;
    const char *ops[3];
    char opbuf[3][32];
    uint32_t nops = match_ops(r, m, ops, opbuf);
    if (m->bn) {
        eps = 1e-4f;
        gn__attr_get_float(g, m->mid, "epsilon", &eps);
    }
    bool leaky = false;
    if (m->act != GN_NONE) {
        leaky = op_is(g, m->act, "LeakyRelu");
        if (leaky) gn__attr_get_float(g, m->act, "alpha", &alpha);
    }
    static const char *const conv_keys[] = {"T", "strides", "padding", "explicit_paddings", "data_format", "dilations",
                                            "use_cudnn_on_gpu"};
    static const char *const dw_keys[] = {"T", "strides", "padding", "data_format", "dilations"};
    static const char *const mm_keys[] = {"T", "transpose_a", "transpose_b"};
    saved_attrs sa;
    if (m->kind == K_CONV) save_attrs(g, m->conv, conv_keys, sizeof conv_keys / sizeof *conv_keys, &sa);
    else if (m->kind == K_DW) save_attrs(g, m->conv, dw_keys, sizeof dw_keys / sizeof *dw_keys, &sa);
    else save_attrs(g, m->conv, mm_keys, sizeof mm_keys / sizeof *mm_keys, &sa);
    gn__edge x = gn__node_at(g, m->conv)->in[0], w = gn__node_at(g, m->conv)->in[1];
    gn_id mid = m->mid, conv = m->conv;
    gn__edge args[4];
    memcpy(args, m->args, sizeof args);
    if (m->reshape) {
        gn__tensor t;
        if (!const_tensor(g, args[0].node, &t)) return gn__fail(r->c->err, GN_ERR_INTERNAL, "bias constant unreadable");
        int64_t ch = gn__tensor_numel(&t);
        t.rank = 1;
        t.dims[0] = ch;
        gn_id nb = GN_NONE;
        const char *base = gn__node_name(g, mid);
        gn__pass_unique_name(g, base, "bias", r->name, sizeof r->name);
        const_srcs srcs = {{args[0].node}, 1};
        gn_status st = add_const(r, r->name, &t, conv, &srcs, &nb);
        gn__tensor_release(&t);
        GN_TRY(st);
        args[0] = (gn__edge){nb, 0};
    }
    gn_id old_bias = m->reshape ? m->args[0].node : GN_NONE;
    GN_TRY(reset_node(r, root, k_fused_op[m->kind]));
    GN_TRY(gn__node_add_input(g, root, x));
    GN_TRY(gn__node_add_input(g, root, w));
    for (uint32_t k = 0; k < m->nargs; k++) GN_TRY(gn__node_add_input(g, root, args[k]));
    GN_TRY(put_attrs(r, root, &sa));
    if (m->kind == K_CONV) GN_TRY(set_types(r, root, "TArgs", T, m->nargs));
    GN_TRY(gn__node_set_attr_strings(r->g, root, "fused_ops", ops, nops));
    GN_TRY(gn__node_set_attr_int(r->g, root, "num_args", m->nargs));
    GN_TRY(gn__node_set_attr_float(r->g, root, "epsilon", eps));
    if (leaky) GN_TRY(gn__node_set_attr_float(r->g, root, "leakyrelu_alpha", alpha));
    for (uint32_t k = 0; k < m->n_extra; k++) {
        gn_id e = m->extra[k];
        gn_id ins[2] = {GN_NONE, GN_NONE};
        for (uint32_t j = 0; j < 2 && j < gn__node_at(g, e)->n_in; j++) ins[j] = gn__node_at(g, e)->in[j].node;
        GN_TRY(drop_if_orphan(r, e, false));
        for (uint32_t j = 0; j < 2; j++) GN_TRY(drop_if_orphan(r, ins[j], true));
    }
    if (m->add != GN_NONE && m->add != root) GN_TRY(drop_if_orphan(r, m->add, false));
    if (mid != root) GN_TRY(drop_if_orphan(r, mid, false));
    GN_TRY(drop_if_orphan(r, conv, false));
    GN_TRY(drop_if_orphan(r, old_bias, true));
    r->c->changed = true;
    if (m->only)
        gn__pass_rewrote(r->c, pattern, g, root, "fused %s into %s [grapnel-only: %s]", what, k_fused_op[m->kind],
                         m->only);
    else
        gn__pass_rewrote(r->c, pattern, g, root, "fused %s into %s", what, k_fused_op[m->kind]);
    return GN_OK;
}

/* Is `mid` a bias addition of the contraction's output: BiasAdd(conv, b), or
 * Add/AddV2 of conv and a 1-D constant of the channel count (NHWC or MatMul)?
 * Fills m (conv, args). */
static bool match_bias(rm *r, gn_id mid, cmatch *m)
{
    gn_graph *g = r->g;
    const gn__node *n = gn__node_at(g, mid);
    if (n->n_in != 2) return false;
    if (op_is(g, mid, "BiasAdd")) {
        gn_id conv = in0(g, mid, 0);
        if (conv == GN_NONE || contraction_kind(g, conv) < 0) return false;
        m->conv = conv;
        m->args[0] = n->in[1];
        m->nargs = 1;
        return true;
    }
    if (!op_is(g, mid, "Add") && !op_is(g, mid, "AddV2")) return false;
    for (uint32_t k = 0; k < 2; k++) {
        gn_id conv = in0(g, mid, k);
        if (conv == GN_NONE || conv == n->in[1 - k].node) continue;
        int kind = contraction_kind(g, conv);
        if (kind < 0) continue;
        int32_t rk;
        int64_t d[4];
        if (n->in[1 - k].index != 0 || !const_shape(g, n->in[1 - k].node, &rk, d, 4) || rk < 1) continue;
        if (tattr(g, n->in[1 - k].node, "dtype") != tattr(g, mid, "T")) continue;
        int64_t ch = out_channels(r, conv, kind);
        if (ch < 0) continue;
        /* the constant broadcasts along the channel dim only: [C] or [1, .., 1, C]
           (channels last), [C, 1, 1] or [1, C, 1, 1] (NCHW) */
        int cdim = kind != K_MM && nchw(g, conv) ? rk - 3 : rk - 1;
        if (kind != K_MM && nchw(g, conv) && rk < 3) continue;
        if (rk > (kind == K_MM ? 2 : 4)) continue;
        bool ok = cdim >= 0 && d[cdim] == ch;
        for (int32_t i = 0; ok && i < rk; i++) ok = i == cdim || d[i] == 1;
        if (!ok) continue;
        m->conv = conv;
        m->args[0] = n->in[1 - k];
        m->nargs = 1;
        m->reshape = rk != 1;
        return true;
    }
    return false;
}

/* Root `id` (an activation, a bias addition or a FusedBatchNorm): a fused
 * contraction when it matches. Returns true when it rewrote. */
static gn_status try_contraction(rm *r, gn_id id, bool *done)
{
    gn_graph *g = r->g;
    *done = false;
    cmatch m;
    memset(&m, 0, sizeof m);
    m.act = m.add = GN_NONE;
    gn_id mid = id;
    if (is_act(g, id)) {
        m.act = id;
        mid = in0(g, id, 0);
        if (mid == GN_NONE) return GN_OK;
    }
    if (is_fbn(g, mid)) {
        if (!inference_bn(g, mid)) return GN_OK;
        gn_id conv = in0(g, mid, 0);
        if (conv == GN_NONE) return GN_OK;
        int kind = contraction_kind(g, conv);
        if (kind != K_CONV && kind != K_DW) return GN_OK;
        m.bn = true;
        m.conv = conv;
        m.nargs = 4;
        for (uint32_t k = 0; k < 4; k++) m.args[k] = gn__node_at(g, mid)->in[k + 1];
    } else if (!match_bias(r, mid, &m)) {
        return GN_OK;
    }
    m.mid = mid;
    m.kind = contraction_kind(g, m.conv);
    const char *pattern = m.bn ? P_CBN : P_BIAS;
    if (!gn__pattern_enabled(r->c, pattern)) return GN_OK;
    char what[512], why[768];
    describe(r, m.conv, mid, m.act, what, sizeof what);
    bool gpu = gn__pass_on_gpu(r->c, g, m.conv);
    int32_t T = tattr(g, m.conv, "T");
    const char *bad = intermediate_refusal(r, m.conv, id, why, sizeof why);
    if (!bad && m.act != GN_NONE) bad = intermediate_refusal(r, mid, id, why, sizeof why);
    if (!bad && m.bn && preserved(g, mid)) {
        snprintf(why, sizeof why, "%s '%s' is preserved (fetch)", gn__node_op(g, mid), gn__node_name(g, mid));
        bad = why;
    }
    if (!bad && m.bn && m.act == GN_NONE && gn__node_at(g, mid)->n_cuse) bad = "the batch norm has control consumers";
    if (!bad && (tattr(g, mid, "T") != T || (m.act != GN_NONE && tattr(g, m.act, "T") != T))) bad = "dtypes differ";
    if (!bad && m.bn && tattr(g, mid, "U") && tattr(g, mid, "U") != DT_F32) bad = "batch norm parameters are not float32";
    if (!bad && m.bn && nchw(g, mid) != nchw(g, m.conv)) bad = "data formats differ";
    if (!bad && !m.bn && op_is(g, mid, "BiasAdd") && m.kind != K_MM && nchw(g, mid) != nchw(g, m.conv))
        bad = "data formats differ";
    if (!bad && m.kind == K_DW && str_attr_is(g, m.conv, "padding", "", "EXPLICIT"))
        bad = "explicit padding not supported by the fused kernel";
    if (!bad) bad = dtype_refusal(r, m.kind, T, gpu, why, sizeof why);
    if (!bad) bad = tf_refusal(r, &m, gpu);
    if (!bad) bad = act_refusal(r, &m, gpu);
    if (!bad) bad = match_gate(r, &m, gpu, why, sizeof why);
    if (bad) {
        gn__pass_refused(r->c, pattern, g, id, "%s not fused: %s", what, bad);
        return GN_OK;
    }
    GN_TRY(fuse(r, &m, pattern, what));
    *done = true;
    return GN_OK;
}

/* ---- remap.contraction_bias_add ------------------------------------------------------------- */
/* Do the side input's shape and the biased contraction's output shape agree
 * (ranks equal, known dims equal, an unknown dim unknown on both sides: the
 * batch of a residual connection)? */
static bool same_shape(const rm *r, gn__edge a, gn__edge b)
{
    int32_t ra, rb;
    int64_t da[4], db[4];
    if (!edge_shape_any(r, a, true, &ra, da) || !edge_shape_any(r, b, true, &rb, db) || ra != rb) return false;
    for (int32_t i = 0; i < ra; i++)
        if (da[i] != db[i]) return false;
    return true;
}

/* Root `id` (an activation or an Add/AddV2): Conv2D / MatMul + bias + Add of a
 * side input of the output's shape (+ activation) -> _FusedConv2D / _FusedMatMul
 * with fused_ops ["BiasAdd", "Add"(, act)] and num_args 2 (bias, side input). */
static gn_status try_side(rm *r, gn_id id, bool *done)
{
    gn_graph *g = r->g;
    *done = false;
    cmatch m;
    memset(&m, 0, sizeof m);
    m.act = m.add = GN_NONE;
    gn_id add = id;
    if (is_act(g, id)) {
        m.act = id;
        add = in0(g, id, 0);
        if (add == GN_NONE) return GN_OK;
    }
    if ((!op_is(g, add, "Add") && !op_is(g, add, "AddV2")) || gn__node_at(g, add)->n_in != 2) return GN_OK;
    const gn__node *an = gn__node_at(g, add);
    gn__edge side = {GN_NONE, 0};
    for (uint32_t k = 0; k < 2 && side.node == GN_NONE; k++) {
        gn_id p = in0(g, add, k);
        if (p == GN_NONE || p == an->in[1 - k].node) continue;
        if (!op_is(g, p, "BiasAdd") && !op_is(g, p, "Add") && !op_is(g, p, "AddV2")) continue;
        cmatch t = m;
        if (!match_bias(r, p, &t)) continue;
        int kind = contraction_kind(g, t.conv);
        if (kind != K_CONV && kind != K_MM) continue;
        m = t;
        m.mid = p;
        m.kind = kind;
        side = an->in[1 - k];
    }
    if (side.node == GN_NONE) return GN_OK;
    m.add = add;
    m.args[1] = side;
    m.nargs = 2;
    if (!gn__pattern_enabled(r->c, P_SIDE)) return GN_OK;
    char what[640], why[768];
    describe(r, m.conv, m.mid, add, what, sizeof what);
    if (m.act != GN_NONE) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " + %s '%s'", gn__node_op(g, m.act), gn__node_name(g, m.act));
    }
    bool gpu = gn__pass_on_gpu(r->c, g, m.conv);
    int32_t T = tattr(g, m.conv, "T");
    const char *bad = intermediate_refusal(r, m.conv, id, why, sizeof why);
    if (!bad) bad = intermediate_refusal(r, m.mid, id, why, sizeof why);
    if (!bad && m.act != GN_NONE) bad = intermediate_refusal(r, add, id, why, sizeof why);
    if (!bad && (tattr(g, m.mid, "T") != T || tattr(g, add, "T") != T || (m.act != GN_NONE && tattr(g, m.act, "T") != T)))
        bad = "dtypes differ";
    if (!bad && op_is(g, m.mid, "BiasAdd") && m.kind != K_MM && nchw(g, m.mid) != nchw(g, m.conv))
        bad = "data formats differ";
    if (!bad && !same_shape(r, side, (gn__edge){m.mid, 0}))
        bad = "side input shape is not the contraction's output shape (or unknown)";
    if (!bad) bad = dtype_refusal(r, m.kind, T, gpu, why, sizeof why);
    if (!bad) bad = match_gate(r, &m, gpu, why, sizeof why);
    if (bad) {
        gn__pass_refused(r->c, P_SIDE, g, id, "%s not fused: %s", what, bad);
        return GN_OK;
    }
    GN_TRY(fuse(r, &m, P_SIDE, what));
    *done = true;
    return GN_OK;
}

/* ---- remap.conv_squeeze_bias ---------------------------------------------------------------- */
/* Root `id` (an activation or a BiasAdd): Conv2D + Squeeze + BiasAdd (+ act), as
 * Keras' Conv1D makes it -> _FusedConv2D ["BiasAdd"(, act)] under the Conv2D's
 * name, then the Squeeze under the root's name (TensorFlow's form). */
static gn_status try_squeeze(rm *r, gn_id id, bool *done)
{
    gn_graph *g = r->g;
    *done = false;
    gn_id act = GN_NONE, badd = id;
    if (is_act(g, id)) {
        act = id;
        badd = in0(g, id, 0);
        if (badd == GN_NONE) return GN_OK;
    }
    if (!op_is(g, badd, "BiasAdd") || gn__node_at(g, badd)->n_in != 2) return GN_OK;
    gn_id sq = in0(g, badd, 0);
    if (sq == GN_NONE || !op_is(g, sq, "Squeeze") || gn__node_at(g, sq)->n_in != 1) return GN_OK;
    gn_id conv = in0(g, sq, 0);
    if (conv == GN_NONE || !op_is(g, conv, "Conv2D") || gn__node_at(g, conv)->n_in != 2) return GN_OK;
    if (!gn__pattern_enabled(r->c, P_SQ)) return GN_OK;
    char what[640], why[768];
    describe(r, conv, sq, badd, what, sizeof what);
    if (act != GN_NONE) {
        size_t l = strlen(what);
        snprintf(what + l, sizeof what - l, " + %s '%s'", gn__node_op(g, act), gn__node_name(g, act));
    }
    bool gpu = gn__pass_on_gpu(r->c, g, conv);
    int32_t T = tattr(g, conv, "T");
    const char *bad = intermediate_refusal(r, conv, id, why, sizeof why);
    if (!bad) bad = intermediate_refusal(r, sq, id, why, sizeof why);
    if (!bad && act != GN_NONE) bad = intermediate_refusal(r, badd, id, why, sizeof why);
    if (!bad && (tattr(g, sq, "T") != T || tattr(g, badd, "T") != T || (act != GN_NONE && tattr(g, act, "T") != T)))
        bad = "dtypes differ";
    if (!bad && (nchw(g, conv) || nchw(g, badd))) bad = "NCHW: only channels-last convolutions and BiasAdds are taken";
    if (!bad) {
        /* the Squeeze must keep the channel dim (the last): then the BiasAdd's
           channel is the convolution's */
        const Tensorflow__AttrValue *v = gn__node_attr(g, sq, "squeeze_dims");
        size_t nd = v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list ? v->list->n_i : 0;
        for (size_t i = 0; i < nd && !bad; i++) {
            int64_t d = v->list->i[i] < 0 ? v->list->i[i] + 4 : v->list->i[i];
            if (d == 3) bad = "the Squeeze removes the channel dim";
        }
        if (!bad && nd == 0) {
            int64_t ch = out_channels(r, conv, K_CONV);
            if (ch < 0) bad = "the Squeeze has no squeeze_dims and the channel count is unknown";
            else if (ch == 1) bad = "the Squeeze removes the channel dim";
        }
    }
    if (!bad) bad = dtype_refusal(r, K_CONV, T, gpu, why, sizeof why);
    if (!bad && policy_tf(r)) {
        if (gpu) bad = "TensorFlow fuses Conv2D + Squeeze + BiasAdd on CPU only";
        else if (act != GN_NONE) bad = "TensorFlow fuses Conv2D + Squeeze + BiasAdd without an activation";
    }
    const char *only = NULL;
    char only_buf[640];
    if (!bad) {
        const char *dops[2] = {"BiasAdd", act != GN_NONE ? gn__node_op(g, act) : NULL};
        gn__fusion_desc d = {.op = "_FusedConv2D", .fused_ops = dops, .n_ops = act != GN_NONE ? 2 : 1, .num_args = 1,
                             .dtype = T, .gpu = gpu, .grouped = grouped_conv(r, conv), .channels = -1};
        bad = gate(r, &d, only_buf, sizeof only_buf, &only);
    }
    if (bad) {
        gn__pass_refused(r->c, P_SQ, g, id, "%s not fused: %s", what, bad);
        return GN_OK;
    }
    /* what the new nodes need, read before anything changes */
    static const char *const conv_keys[] = {"T", "strides", "padding", "explicit_paddings", "data_format", "dilations",
                                            "use_cudnn_on_gpu"};
    static const char *const sq_keys[] = {"T", "squeeze_dims"};
    saved_attrs ca, sa;
    save_attrs(g, conv, conv_keys, sizeof conv_keys / sizeof *conv_keys, &ca);
    save_attrs(g, sq, sq_keys, sizeof sq_keys / sizeof *sq_keys, &sa);
    gn__edge x = gn__node_at(g, conv)->in[0], w = gn__node_at(g, conv)->in[1], b = gn__node_at(g, badd)->in[1];
    const char *ops[2] = {"BiasAdd", NULL};
    char actop[32] = "";
    uint32_t nops = 1;
    float alpha = 0.2f;
    bool leaky = act != GN_NONE && op_is(g, act, "LeakyRelu");
    if (act != GN_NONE) {
        snprintf(actop, sizeof actop, "%s", gn__node_op(g, act));
        ops[nops++] = actop;
        if (leaky) gn__attr_get_float(g, act, "alpha", &alpha);
    }
    GN_TRY(reset_node(r, conv, "_FusedConv2D"));
    GN_TRY(gn__node_add_input(g, conv, x));
    GN_TRY(gn__node_add_input(g, conv, w));
    GN_TRY(gn__node_add_input(g, conv, b));
    GN_TRY(put_attrs(r, conv, &ca));
    GN_TRY(set_types(r, conv, "TArgs", T, 1));
    GN_TRY(gn__node_set_attr_strings(r->g, conv, "fused_ops", ops, nops));
    GN_TRY(gn__node_set_attr_int(r->g, conv, "num_args", 1));
    GN_TRY(gn__node_set_attr_float(r->g, conv, "epsilon", 0.0f));
    if (leaky) GN_TRY(gn__node_set_attr_float(r->g, conv, "leakyrelu_alpha", alpha));
    GN_TRY(reset_node(r, id, "Squeeze"));
    GN_TRY(gn__node_add_input(g, id, (gn__edge){conv, 0}));
    GN_TRY(put_attrs(r, id, &sa));
    if (badd != id) GN_TRY(drop_if_orphan(r, badd, false));
    GN_TRY(drop_if_orphan(r, sq, false));
    r->c->changed = true;
    if (only)
        gn__pass_rewrote(r->c, P_SQ, g, id, "fused %s into _FusedConv2D '%s' + Squeeze [grapnel-only: %s]", what,
                         gn__node_name(g, conv), only);
    else
        gn__pass_rewrote(r->c, P_SQ, g, id, "fused %s into _FusedConv2D '%s' + Squeeze", what, gn__node_name(g, conv));
    *done = true;
    return GN_OK;
}

/* ---- remap.dilated_conv ----------------------------------------------------------------------- */
/* A constant int32/int64 tensor of n elements read from edge e into v. */
static bool const_ints(const gn_graph *g, gn__edge e, int64_t *v, int64_t n)
{
    gn__tensor t;
    if (e.index != 0 || !const_tensor(g, e.node, &t)) return false;
    bool ok = (t.dtype == 3 || t.dtype == 9) && gn__tensor_numel(&t) == n;
    for (int64_t i = 0; ok && i < n; i++) v[i] = t.dtype == 3 ? ((const int32_t *)t.data)[i] : ((const int64_t *)t.data)[i];
    gn__tensor_release(&t);
    return ok;
}

static bool all_ones(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v) return true;
    if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list) return false;
    for (size_t i = 0; i < v->list->n_i; i++)
        if (v->list->i[i] != 1) return false;
    return true;
}

/* BatchToSpaceND(Conv(SpaceToBatchND(x, block, pad), w), block, crops), the
 * conv VALID with unit strides and dilations (what tf.nn.atrous_conv2d and
 * with_space_to_batch make) -> the conv with dilations = block and the
 * paddings less the crops (SAME, VALID, or EXPLICIT when neither), under the
 * BatchToSpaceND's name. */
static gn_status try_dilated(rm *r, gn_id b2s)
{
    gn_graph *g = r->g;
    const gn__node *bn = gn__node_at(g, b2s);
    if (bn->n_in != 3) return GN_OK;
    gn_id conv = in0(g, b2s, 0);
    if (conv == GN_NONE) return GN_OK;
    int kind = contraction_kind(g, conv);
    if ((kind != K_CONV && kind != K_DW) || gn__node_at(g, conv)->n_in != 2) return GN_OK;
    gn_id s2b = in0(g, conv, 0);
    if (s2b == GN_NONE || !op_is(g, s2b, "SpaceToBatchND") || gn__node_at(g, s2b)->n_in != 3) return GN_OK;
    if (!gn__pattern_enabled(r->c, P_DIL)) return GN_OK;
    char what[512], why[768];
    describe(r, s2b, conv, b2s, what, sizeof what);
    const gn__node *sn = gn__node_at(g, s2b);
    int64_t blk[2], blk2[2], pad[4], crop[4];
    const char *bad = NULL;
    bad = intermediate_refusal(r, conv, b2s, why, sizeof why);
    if (!bad) bad = intermediate_refusal(r, s2b, b2s, why, sizeof why);
    int32_t T = tattr(g, conv, "T");
    if (!bad && (tattr(g, s2b, "T") != T || tattr(g, b2s, "T") != T)) bad = "dtypes differ";
    if (!bad && nchw(g, conv)) bad = "NCHW: SpaceToBatchND works on the channels-last spatial dims";
    if (!bad && (!all_ones(g, conv, "strides") || !all_ones(g, conv, "dilations")))
        bad = "the convolution has strides or dilations already";
    if (!bad && !str_attr_is(g, conv, "padding", "", "VALID")) bad = "the convolution's padding is not VALID";
    if (!bad && (!const_ints(g, sn->in[1], blk, 2) || !const_ints(g, bn->in[1], blk2, 2) || blk[0] != blk2[0] ||
                 blk[1] != blk2[1] || blk[0] < 1 || blk[1] < 1))
        bad = "block shapes are not the same constant pair";
    if (!bad && (!const_ints(g, sn->in[2], pad, 4) || !const_ints(g, bn->in[2], crop, 4)))
        bad = "paddings or crops are not constants";
    int64_t ep[4];
    for (int i = 0; !bad && i < 4; i++) {
        ep[i] = pad[i] - crop[i];
        if (pad[i] < 0 || crop[i] < 0 || ep[i] < 0) bad = "crops exceed the paddings";
    }
    if (!bad && policy_tf(r)) bad = "TensorFlow's remapper makes no dilated-convolution rewrite";
    if (bad) {
        gn__pass_refused(r->c, P_DIL, g, b2s, "%s not rewritten: %s", what, bad);
        return GN_OK;
    }
    /* SAME with unit strides pads (k - 1) * rate in all, the smaller half first */
    const char *padding = "EXPLICIT";
    int32_t rk;
    int64_t wd[4];
    if (!ep[0] && !ep[1] && !ep[2] && !ep[3]) {
        padding = "VALID";
    } else if (edge_shape(r, gn__node_at(g, conv)->in[1], &rk, wd) && rk == 4) {
        int64_t th = (wd[0] - 1) * blk[0], tw = (wd[1] - 1) * blk[1];
        if (ep[0] == th / 2 && ep[1] == th - th / 2 && ep[2] == tw / 2 && ep[3] == tw - tw / 2) padding = "SAME";
    }
    static const char *const keys[] = {"T", "data_format", "use_cudnn_on_gpu"};
    saved_attrs sa;
    save_attrs(g, conv, keys, sizeof keys / sizeof *keys, &sa);
    const char *cop = kind == K_CONV ? "Conv2D" : "DepthwiseConv2dNative";
    gn__edge x = sn->in[0], w = gn__node_at(g, conv)->in[1];
    gn_id cst_ids[4] = {sn->in[1].node, sn->in[2].node, bn->in[1].node, bn->in[2].node};
    GN_TRY(reset_node(r, b2s, cop));
    GN_TRY(gn__node_add_input(g, b2s, x));
    GN_TRY(gn__node_add_input(g, b2s, w));
    GN_TRY(put_attrs(r, b2s, &sa));
    static const int64_t ones[4] = {1, 1, 1, 1};
    int64_t dil[4] = {1, blk[0], blk[1], 1};
    GN_TRY(gn__node_set_attr_ints(r->g, b2s, "strides", ones, 4));
    GN_TRY(gn__node_set_attr_ints(r->g, b2s, "dilations", dil, 4));
    GN_TRY(gn__node_set_attr_string(r->g, b2s, "padding", padding));
    if (!strcmp(padding, "EXPLICIT")) {
        int64_t e8[8] = {0, 0, ep[0], ep[1], ep[2], ep[3], 0, 0};
        GN_TRY(gn__node_set_attr_ints(r->g, b2s, "explicit_paddings", e8, 8));
    }
    GN_TRY(drop_if_orphan(r, conv, false));
    GN_TRY(drop_if_orphan(r, s2b, false));
    for (int i = 0; i < 4; i++) GN_TRY(drop_if_orphan(r, cst_ids[i], true));
    r->c->changed = true;
    gn__pass_rewrote(r->c, P_DIL, g, b2s, "rewrote %s as %s with dilations [1, %lld, %lld, 1], padding %s", what, cop,
                     (long long)blk[0], (long long)blk[1], padding);
    return GN_OK;
}

/* ---- remap.matmul_gelu ------------------------------------------------------------------------ */
/* A float32 scalar Const within 1e-4 (relative) of want. */
static bool scalar_is(const gn_graph *g, gn__edge e, double want)
{
    gn__tensor t;
    if (e.index != 0 || !const_tensor(g, e.node, &t)) return false;
    bool ok = t.dtype == DT_F32 && gn__tensor_numel(&t) == 1 &&
              fabs((double)((const float *)t.data)[0] - want) <= 1e-4 * fabs(want);
    gn__tensor_release(&t);
    return ok;
}

static bool edge_eq(gn__edge a, gn__edge b) { return a.node == b.node && a.index == b.index; }

/* A single-consumer, unpreserved, control-free node of op `op` with two inputs. */
static bool inner(const gn_graph *g, gn__edge e, const char *op)
{
    if (e.index != 0 || !op_is(g, e.node, op)) return false;
    const gn__node *n = gn__node_at(g, e.node);
    return n->n_in == 2 && n->n_use == 1 && !has_ctrl(g, e.node) && !preserved(g, e.node);
}

/* Binary node id: is one input `a` (by edge) and the other a scalar ~ c? Sets *other when a is NULL. */
static bool pair_with_scalar(const gn_graph *g, gn_id id, double c, gn__edge *other)
{
    const gn__node *n = gn__node_at(g, id);
    for (uint32_t k = 0; k < 2; k++)
        if (scalar_is(g, n->in[1 - k], c)) {
            *other = n->in[k];
            return true;
        }
    return false;
}

static void add_extra(cmatch *m, gn_id id)
{
    if (m->n_extra < 12) m->extra[m->n_extra++] = id;
}

/* root: Mul of {x, 0.5, 1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3))} or {x, 0.5, 1 + Erf(x / sqrt 2)},
 * grouped either way; x the output of MatMul + bias. */
static gn_status try_gelu(rm *r, gn_id root, bool *done)
{
    gn_graph *g = r->g;
    *done = false;
    const gn__node *rn = gn__node_at(g, root);
    if (rn->n_in != 2 || tattr(g, root, "T") != DT_F32) return GN_OK;
    cmatch m;
    memset(&m, 0, sizeof m);
    m.act = m.add = GN_NONE;
    gn__edge f[3];
    uint32_t nf = 0;
    bool expanded = false;
    for (uint32_t k = 0; k < 2; k++) {
        gn__edge e = rn->in[k];
        if (!expanded && inner(g, e, "Mul")) {
            expanded = true;
            add_extra(&m, e.node);
            f[nf++] = gn__node_at(g, e.node)->in[0];
            f[nf++] = gn__node_at(g, e.node)->in[1];
        } else if (nf < 3) {
            f[nf++] = e;
        }
    }
    if (nf != 3) return GN_OK;
    int half = -1, plus = -1, xi = -1;
    for (int i = 0; i < 3; i++) {
        if (half < 0 && scalar_is(g, f[i], 0.5)) half = i;
        else if (plus < 0 && inner(g, f[i], "AddV2")) plus = i;
        else if (f[i].index == 0) xi = i;
    }
    if (half < 0 || plus < 0 || xi < 0) return GN_OK;
    gn__edge x = f[xi], t;
    if (!match_bias(r, x.node, &m) || contraction_kind(g, m.conv) != K_MM) return GN_OK;
    add_extra(&m, f[plus].node);
    if (!pair_with_scalar(g, f[plus].node, 1.0, &t)) return GN_OK;
    bool approx;
    if (inner(g, t, "Tanh") || (t.index == 0 && op_is(g, t.node, "Tanh") && gn__node_at(g, t.node)->n_use == 1 &&
                                !has_ctrl(g, t.node) && !preserved(g, t.node))) {
        approx = true;
        add_extra(&m, t.node);
        gn__edge v = gn__node_at(g, t.node)->in[0], w, k3, p;
        if (!inner(g, v, "Mul") || !pair_with_scalar(g, v.node, 0.7978845608028654, &w)) return GN_OK;
        add_extra(&m, v.node);
        if (!inner(g, w, "AddV2")) return GN_OK;
        add_extra(&m, w.node);
        const gn__node *wn = gn__node_at(g, w.node);
        int xs = edge_eq(wn->in[0], x) ? 0 : edge_eq(wn->in[1], x) ? 1 : -1;
        if (xs < 0) return GN_OK;
        k3 = wn->in[1 - xs];
        if (!inner(g, k3, "Mul") || !pair_with_scalar(g, k3.node, 0.044715, &p)) return GN_OK;
        add_extra(&m, k3.node);
        if (!inner(g, p, "Pow") || !edge_eq(gn__node_at(g, p.node)->in[0], x) ||
            !scalar_is(g, gn__node_at(g, p.node)->in[1], 3.0))
            return GN_OK;
        add_extra(&m, p.node);
    } else if (t.index == 0 && op_is(g, t.node, "Erf") && gn__node_at(g, t.node)->n_use == 1 && !has_ctrl(g, t.node) &&
               !preserved(g, t.node)) {
        approx = false;
        add_extra(&m, t.node);
        gn__edge u = gn__node_at(g, t.node)->in[0], xx;
        if (inner(g, u, "Mul")) {
            if (!pair_with_scalar(g, u.node, 0.7071067811865476, &xx) || !edge_eq(xx, x)) return GN_OK;
        } else if (inner(g, u, "RealDiv")) {
            const gn__node *un = gn__node_at(g, u.node);
            if (!edge_eq(un->in[0], x) || !scalar_is(g, un->in[1], 1.4142135623730951)) return GN_OK;
        } else {
            return GN_OK;
        }
        add_extra(&m, u.node);
    } else {
        return GN_OK;
    }
    if (m.n_extra >= 12) return GN_OK;
    /* every consumer of x is in the pattern */
    const gn__node *xn = gn__node_at(g, x.node);
    for (uint32_t i = 0; i < xn->n_use; i++) {
        gn_id u = xn->use[i].node;
        bool in = u == root;
        for (uint32_t k = 0; k < m.n_extra && !in; k++) in = m.extra[k] == u;
        if (!in) return GN_OK;
    }
    if (!gn__pattern_enabled(r->c, "remap.matmul_gelu")) return GN_OK;
    m.kind = K_MM;
    m.mid = x.node;
    m.act = root;
    m.act_name = approx ? "GeluApproximate" : "GeluExact";
    char what[512], why[768];
    snprintf(what, sizeof what, "%s '%s' + %s '%s' + Gelu (%s) '%s'", gn__node_op(g, m.conv), gn__node_name(g, m.conv),
             gn__node_op(g, x.node), gn__node_name(g, x.node), approx ? "tanh" : "erf", gn__node_name(g, root));
    bool gpu = gn__pass_on_gpu(r->c, g, m.conv);
    int32_t T = tattr(g, m.conv, "T");
    const char *bad = preserved(g, m.conv) || has_ctrl(g, m.conv) || n_uses(g, m.conv) > 1
                          ? intermediate_refusal(r, m.conv, root, why, sizeof why)
                          : NULL;
    if (!bad && (preserved(g, x.node) || has_ctrl(g, x.node))) bad = intermediate_refusal(r, x.node, root, why, sizeof why);
    for (uint32_t k = 0; !bad && k < m.n_extra; k++)
        if (!same_device(g, m.extra[k], root)) bad = "nodes are on different devices";
    if (!bad && !same_device(g, m.conv, root)) bad = "nodes are on different devices";
    if (!bad && tattr(g, x.node, "T") != T) bad = "dtypes differ";
    if (!bad) bad = dtype_refusal(r, K_MM, T, gpu, why, sizeof why);
    if (!bad && policy_tf(r) && gpu) bad = "TensorFlow fuses MatMul on GPU only with cuBLASLt (TF_USE_CUBLASLT)";
    if (!bad) bad = match_gate(r, &m, gpu, why, sizeof why);
    if (bad) {
        gn__pass_refused(r->c, "remap.matmul_gelu", g, root, "%s not fused: %s", what, bad);
        return GN_OK;
    }
    GN_TRY(fuse(r, &m, "remap.matmul_gelu", what));
    *done = true;
    return GN_OK;
}

/* ---- remap.batchnorm_ex --------------------------------------------------------------------- */
static gn_status try_bn_ex(rm *r, gn_id relu, bool *done)
{
    gn_graph *g = r->g;
    *done = false;
    if (!op_is(g, relu, "Relu")) return GN_OK;
    gn_id x = in0(g, relu, 0), add = GN_NONE, bn = GN_NONE;
    gn__edge side = {GN_NONE, 0};
    if (x == GN_NONE) return GN_OK;
    if (is_fbn(g, x)) {
        bn = x;
    } else if ((op_is(g, x, "Add") || op_is(g, x, "AddV2")) && gn__node_at(g, x)->n_in == 2) {
        for (uint32_t k = 0; k < 2 && bn == GN_NONE; k++) {
            gn_id p = in0(g, x, k);
            if (p != GN_NONE && is_fbn(g, p) && p != gn__node_at(g, x)->in[1 - k].node) {
                bn = p;
                side = gn__node_at(g, x)->in[1 - k];
            }
        }
        add = x;
    }
    if (bn == GN_NONE || op_is(g, bn, "FusedBatchNorm") || gn__node_at(g, bn)->n_in != 5) return GN_OK;
    if (!gn__pattern_enabled(r->c, P_BNEX)) return GN_OK;
    char what[512], why[768];
    describe(r, bn, add, relu, what, sizeof what);
    bool gpu = gn__pass_on_gpu(r->c, g, bn), training = true;
    gn__attr_get_bool(g, bn, "is_training", &training);
    int32_t T = tattr(g, bn, "T");
    const char *bad = NULL;
    /* the batch norm keeps its name, but its y now includes the activation */
    if (preserved(g, bn)) {
        snprintf(why, sizeof why, "%s '%s' is preserved (fetch)", gn__node_op(g, bn), gn__node_name(g, bn));
        bad = why;
    }
    if (!bad) {
        const gn__node *b = gn__node_at(g, bn);
        uint32_t y_uses = 0;
        for (uint32_t i = 0; i < b->n_use; i++)
            if (gn__node_at(g, b->use[i].node)->in[b->use[i].slot].index == 0) y_uses++;
        if (y_uses > 1) bad = "FusedBatchNorm has a second consumer";
        else if (b->n_cuse) bad = "FusedBatchNorm has control consumers";
    }
    if (!bad && add != GN_NONE) bad = intermediate_refusal(r, add, relu, why, sizeof why);
    if (!bad && !same_device(g, bn, relu)) bad = "nodes are on different devices";
    if (!bad && (tattr(g, relu, "T") != T || (add != GN_NONE && tattr(g, add, "T") != T))) bad = "dtypes differ";
    if (!bad && tattr(g, bn, "U") != DT_F32) bad = "batch norm parameters are not float32";
    if (!bad && add != GN_NONE) {
        int32_t r1, r2;
        int64_t d1[4], d2[4];
        if (!edge_shape(r, gn__node_at(g, bn)->in[0], &r1, d1) || !edge_shape(r, side, &r2, d2) || r1 != r2 ||
            memcmp(d1, d2, (size_t)r1 * sizeof d1[0]) != 0)
            bad = "side input shape is not the batch norm's input shape";
    }
    if (!bad && !(T == DT_F32 || T == DT_F16)) bad = "dtype not supported on this target";
    if (!bad && policy_tf(r)) {
        if (gpu) {
            if (nchw(g, bn)) bad = "TensorFlow fuses FusedBatchNorm + Relu on GPU only in NHWC";
            else if (training) bad = "TensorFlow fuses training FusedBatchNorm only with cuDNN's persistent mode";
        } else {
            if (T != DT_F32) bad = "dtype not supported on this target";
            else if (add != GN_NONE) bad = "TensorFlow's CPU kernel takes no side input";
            else if (training) bad = "TensorFlow fuses training FusedBatchNorm on GPU only";
        }
    }
    const char *only = NULL;
    char only_buf[640];
    if (!bad) {
        const char *dops[1] = {"Relu"};
        int32_t rk;
        int64_t dd[4];
        gn__edge sc = gn__node_at(g, bn)->in[1];
        gn__fusion_desc d = {.op = "_FusedBatchNormEx", .fused_ops = dops, .n_ops = 1,
                             .num_args = side.node != GN_NONE ? 1 : 0, .dtype = T, .gpu = gpu, .nchw = nchw(g, bn),
                             .training = training, .channels = -1};
        if (edge_shape(r, sc, &rk, dd) && rk == 1) d.channels = dd[0];
        bad = gate(r, &d, only_buf, sizeof only_buf, &only);
    }
    if (bad) {
        gn__pass_refused(r->c, P_BNEX, g, relu, "%s not fused: %s", what, bad);
        return GN_OK;
    }
    static const char *const keys[] = {"T", "U", "epsilon", "exponential_avg_factor", "data_format", "is_training"};
    saved_attrs sa;
    save_attrs(g, bn, keys, sizeof keys / sizeof *keys, &sa);
    GN_TRY(gn__node_set_op(g, bn, "_FusedBatchNormEx"));
    while (gn__node_at(g, bn)->n_attr) {
        const gn__node *b = gn__node_at(g, bn);
        GN_TRY(gn__node_remove_attr(g, bn, gn__str(g, b->attr[b->n_attr - 1].key)));
    }
    GN_TRY(put_attrs(r, bn, &sa));
    if (side.node != GN_NONE) GN_TRY(gn__node_add_input(g, bn, side));
    GN_TRY(gn__node_set_attr_int(r->g, bn, "num_side_inputs", side.node != GN_NONE ? 1 : 0));
    GN_TRY(gn__node_set_attr_string(r->g, bn, "activation_mode", "Relu"));
    /* the Relu becomes Identity(bn) under its own name */
    GN_TRY(reset_node(r, relu, "Identity"));
    GN_TRY(gn__node_add_input(g, relu, (gn__edge){bn, 0}));
    GN_TRY(gn__node_set_attr_type(r->g, relu, "T", T));
    GN_TRY(drop_if_orphan(r, add, false));
    r->c->changed = true;
    if (only) gn__pass_rewrote(r->c, P_BNEX, g, bn, "fused %s into _FusedBatchNormEx [grapnel-only: %s]", what, only);
    else gn__pass_rewrote(r->c, P_BNEX, g, bn, "fused %s into _FusedBatchNormEx", what);
    *done = true;
    return GN_OK;
}

/* ---- remap.batchnorm_scale_offset ----------------------------------------------------------- */
static gn_status try_bn_scale_offset(rm *r, gn_id bn)
{
    gn_graph *g = r->g;
    if (!is_fbn(g, bn) || !inference_bn(g, bn) || !gn__pattern_enabled(r->c, P_BNSO)) return GN_OK;
    char why[256];
    const char *bad = NULL;
    gn__tensor p[4];
    memset(p, 0, sizeof p);
    int32_t T = tattr(g, bn, "T");
    if (preserved(g, bn)) {
        snprintf(why, sizeof why, "%s '%s' is preserved (fetch)", gn__node_op(g, bn), gn__node_name(g, bn));
        bad = why;
    }
    if (!bad && gn__node_at(g, bn)->n_cuse) bad = "the batch norm has control consumers";
    if (!bad && (T != DT_F32 || (tattr(g, bn, "U") && tattr(g, bn, "U") != DT_F32)))
        bad = "dtype not supported on this target";
    if (!bad && !bn_params(g, bn, -1, p)) bad = "batch norm parameters are not constants";
    if (bad) {
        gn__pass_refused(r->c, P_BNSO, g, bn, "%s '%s' not rewritten: %s", gn__node_op(g, bn), gn__node_name(g, bn), bad);
        return GN_OK;
    }
    gn_status st = GN_OK;
    int64_t ch = p[0].dims[0];
    float eps = 1e-4f;
    gn__attr_get_float(g, bn, "epsilon", &eps);
    bool cf = nchw(g, bn);
    const char *bop = gn__node_op(g, bn);
    float *sd = malloc((size_t)(ch ? ch : 1) * sizeof(float)), *od = malloc((size_t)(ch ? ch : 1) * sizeof(float));
    gn_id params[4];
    for (uint32_t k = 0; k < 4; k++) params[k] = in0(g, bn, k + 1);
    if (!sd || !od) {
        st = nomem(r);
        goto out;
    }
    const float *sc = p[0].data, *of = p[1].data, *mn = p[2].data, *vr = p[3].data;
    for (int64_t k = 0; k < ch; k++) {
        double s = (double)sc[k] / sqrt((double)vr[k] + (double)eps);
        sd[k] = (float)s;
        od[k] = (float)((double)of[k] - (double)mn[k] * s);
    }
    /* NCHW: [C, 1, 1] so that it broadcasts over H and W */
    gn__tensor ts = {.dtype = DT_F32, .rank = cf ? 3 : 1, .dims = {ch, 1, 1}, .data = sd, .nbytes = (size_t)ch * 4};
    gn__tensor to = ts;
    to.data = od;
    gn_id sid = GN_NONE, oid = GN_NONE, mul = GN_NONE;
    gn__edge x = gn__node_at(g, bn)->in[0];
    const char *bname = gn__node_name(g, bn);
    gn__pass_unique_name(g, bname, "scale", r->name, sizeof r->name);
    const_srcs srcs = {{params[0], params[1], params[2], params[3]}, 4};
    if ((st = add_const(r, r->name, &ts, bn, &srcs, &sid)) != GN_OK) goto out;
    bname = gn__node_name(g, bn);
    gn__pass_unique_name(g, bname, "offset", r->name, sizeof r->name);
    if ((st = add_const(r, r->name, &to, bn, &srcs, &oid)) != GN_OK) goto out;
    bname = gn__node_name(g, bn);
    gn__pass_unique_name(g, bname, "Mul", r->name, sizeof r->name);
    if ((st = gn__node_add(g, r->name, "Mul", &mul)) != GN_OK) goto out;
    gn__node_set_device(g, mul, gn__str(g, gn__node_at(g, bn)->device));
    if ((st = gn__node_add_input(g, mul, x)) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, mul, (gn__edge){sid, 0})) != GN_OK) goto out;
    if ((st = gn__node_set_attr_type(r->g, mul, "T", T)) != GN_OK) goto out;
    if ((st = reset_node(r, bn, "Add")) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, bn, (gn__edge){mul, 0})) != GN_OK) goto out;
    if ((st = gn__node_add_input(g, bn, (gn__edge){oid, 0})) != GN_OK) goto out;
    if ((st = gn__node_set_attr_type(r->g, bn, "T", T)) != GN_OK) goto out;
    for (uint32_t k = 0; k < 4; k++)
        if ((st = drop_if_orphan(r, params[k], true)) != GN_OK) goto out;
    r->c->changed = true;
    gn__pass_rewrote(r->c, P_BNSO, g, bn, "%s '%s' (%lld channels) rewritten as Mul + Add", bop, gn__node_name(g, bn),
                     (long long)ch);
out:
    free(sd);
    free(od);
    for (uint32_t k = 0; k < 4; k++) gn__tensor_release(&p[k]);
    return st;
}

/* ---- driver -------------------------------------------------------------------------------- */
gn_status gn__pass_remap(gn__pass_ctx *c, gn_graph *g)
{
    rm r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.g = g;
    r.policy = c->opts ? c->opts->remap_policy : GN_REMAP_POLICY_GRAPNEL;
    gn_status st = GN_OK;
    /* 1. folds (they only shrink patterns the fusions below then take) */
    bool fold = gn__pattern_enabled(c, P_FOLD), scale = gn__pattern_enabled(c, P_SCALE);
    if (fold || scale || gn__pattern_enabled(c, P_DIL)) {
        uint32_t n0 = g->n_nodes;
        for (gn_id i = 0; i < n0 && st == GN_OK; i++) {
            if ((i & 1023) == 0 && gn__pass_deadline_passed(c)) return GN_OK;
            if (!gn__node_live(g, i)) continue;
            uint32_t cls = opclass(&r, i);
            if (fold && (cls & OC_FBN)) st = fold_one(&r, i);
            else if (scale && (cls & OC_MUL)) st = fold_scale(&r, i);
            else if (cls & OC_B2S) st = try_dilated(&r, i);
        }
        if (st != GN_OK) return st;
    }
    /* 2. fusions, in reverse topological order */
    if ((st = collect_shapes(&r)) != GN_OK) goto out;
    /* every fusion below starts from a contraction or a FusedBatchNorm
     * (before it refuses anything), and none makes one */
    if (!r.anchor) goto out;
    gn_id *order = NULL;
    uint32_t n = 0;
    if ((st = gn__graph_topo(g, &order, &n)) != GN_OK) goto out;
    for (uint32_t k = n; k-- > 0 && st == GN_OK;) {
        if ((k & 1023) == 0 && gn__pass_deadline_passed(c)) break;
        gn_id id = order[k];
        if (!gn__node_live(g, id)) continue;
        bool done = false;
        uint32_t cls = opclass(&r, id);
        if (cls & OC_MUL) {
            st = try_gelu(&r, id, &done);
            continue;
        }
        bool root_kind = cls & (OC_ACT | OC_BIAS | OC_ADD | OC_FBN);
        if (!root_kind) continue;
        st = try_contraction(&r, id, &done);
        if (st != GN_OK || done) continue;
        st = try_side(&r, id, &done);
        if (st != GN_OK || done) continue;
        st = try_squeeze(&r, id, &done);
        if (st != GN_OK || done) continue;
        st = try_bn_ex(&r, id, &done);
        if (st != GN_OK || done) continue;
        if (is_fbn(g, id)) st = try_bn_scale_offset(&r, id);
    }
    free(order);
out:
    free(r.sh);
    return st;
}
