/* The output's contract: the fused ops TensorFlow's kernels run, per device
 * (see fusion_contract.h and docs/fusion_contract.md). Paths are relative to
 * tensorflow/core/ in TensorFlow's source tree. */
#include "optimizer/passes/fusion_contract.h"

#include <stdio.h>
#include <string.h>

#include "ops/shape.h"

enum { DT_F32 = 1, DT_F64 = 2, DT_BF16 = 14, DT_F16 = 19 };
#define B(dt) (1ull << (dt))

/* Each row's source: the kernel that runs it with oneDNN off (its fused_ops
 * patterns, dtypes and format checks), and, for the CPU, the oneDNN layout
 * pass that rewrites it to an _MklNative* kernel or leaves it to that same
 * kernel with oneDNN on. */
#define SRC_CONV_CPU "tensorflow/core/kernels/conv_ops_fused_impl.h, tensorflow/core/common_runtime/mkl_layout_pass.cc"
#define SRC_MM_CPU "tensorflow/core/kernels/matmul_op_fused.cc, tensorflow/core/common_runtime/mkl_layout_pass.cc"
#define SRC_CONV_GPU "tensorflow/core/kernels/conv_ops_fused_impl.h (GPU: cuDNN conv-bias-activation)"
#define SRC_MM_GPU "tensorflow/core/kernels/matmul_op_fused.cc (GPU: cuBLASLt epilogues)"
#define SRC_MM_GPU_HALF "tensorflow/core/kernels/matmul_op_fused.cc (GPU: cuDNN, DT_HALF only)"
#define SRC_BNEX_GPU "tensorflow/core/kernels/fused_batch_norm_op.cc, tensorflow/core/ops/nn_ops.cc"

static const gn__fusion_row k_rows[] = {
    /* CPU: what both of tensorflow-cpu's paths run */
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "BiasAdd", 1, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "BiasAdd,Relu", 1, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "BiasAdd,Relu6", 1, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "BiasAdd,Elu", 1, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "BiasAdd,LeakyRelu", 1, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "FusedBatchNorm", 4, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "FusedBatchNorm,Relu", 4, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "FusedBatchNorm,Relu6", 4, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "FusedBatchNorm,Elu", 4, SRC_CONV_CPU},
    {"_FusedConv2D", GN_FC_CPU, B(DT_F32) | B(DT_F64), GN_FC_NHWC, "FusedBatchNorm,LeakyRelu", 4, SRC_CONV_CPU},
    {"_FusedMatMul", GN_FC_CPU, B(DT_F32), 0, "BiasAdd", 1, SRC_MM_CPU},
    {"_FusedMatMul", GN_FC_CPU, B(DT_F32), 0, "BiasAdd,Relu", 1, SRC_MM_CPU},
    {"_FusedMatMul", GN_FC_CPU, B(DT_F32), 0, "BiasAdd,Relu6", 1, SRC_MM_CPU},
    {"_FusedMatMul", GN_FC_CPU, B(DT_F32), 0, "BiasAdd,Elu", 1, SRC_MM_CPU},
    {"_FusedMatMul", GN_FC_CPU, B(DT_F32), 0, "BiasAdd,LeakyRelu", 1, SRC_MM_CPU},
    /* GPU: TensorFlow's CUDA kernels */
    {"_FusedConv2D", GN_FC_GPU, B(DT_F32) | B(DT_F16), GN_FC_NHWC | GN_FC_NCHW, "BiasAdd,Relu", 1, SRC_CONV_GPU},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F32) | B(DT_F16), 0, "BiasAdd", 1, SRC_MM_GPU},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F32) | B(DT_F16), 0, "BiasAdd,Relu", 1, SRC_MM_GPU},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F32) | B(DT_F16), 0, "BiasAdd,GeluApproximate", 1, SRC_MM_GPU},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F16), 0, "BiasAdd,GeluExact", 1, SRC_MM_GPU_HALF},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F16), 0, "BiasAdd,Tanh", 1, SRC_MM_GPU_HALF},
    {"_FusedMatMul", GN_FC_GPU, B(DT_F16), 0, "BiasAdd,Sigmoid", 1, SRC_MM_GPU_HALF},
    {"_FusedBatchNormEx", GN_FC_GPU, B(DT_F32) | B(DT_F16), GN_FC_NHWC, "Identity", 1, SRC_BNEX_GPU},
    {"_FusedBatchNormEx", GN_FC_GPU, B(DT_F32) | B(DT_F16), GN_FC_NHWC, "Relu", 1, SRC_BNEX_GPU},
};

/* Fused ops with no row on a device, and why. */
typedef struct absent {
    const char *op;
    uint32_t device;
    const char *why;
} absent;

static const absent k_absent[] = {
    {"_FusedDepthwiseConv2dNative", GN_FC_CPU,
     "TensorFlow's CPU _FusedDepthwiseConv2dNative is a oneDNN placeholder: with TF_ENABLE_ONEDNN_OPTS=0 it is a NoOp "
     "that writes no output (tensorflow/core/kernels/mkl/mkl_conv_ops.cc)"},
    {"_FusedDepthwiseConv2dNative", GN_FC_GPU, "TensorFlow registers no GPU kernel for _FusedDepthwiseConv2dNative (tensorflow/core/kernels/mkl/mkl_conv_ops.cc "
     "registers the CPU one only)"},
    {"_FusedBatchNormEx", GN_FC_CPU,
     "TensorFlow's CPU _FusedBatchNormEx is a oneDNN placeholder: with TF_ENABLE_ONEDNN_OPTS=0 it is a NoOp that "
     "writes no output (tensorflow/core/kernels/mkl/mkl_fused_batch_norm_op.cc)"},
};

static const char *const k_governed[] = {"_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul",
                                         "_FusedBatchNormEx"};

const gn__fusion_row *gn__fusion_contract_rows(size_t *n)
{
    *n = sizeof k_rows / sizeof k_rows[0];
    return k_rows;
}

bool gn__fusion_contract_governs(const char *op)
{
    for (size_t i = 0; i < sizeof k_governed / sizeof k_governed[0]; i++)
        if (op && !strcmp(op, k_governed[i])) return true;
    return false;
}

/* NumPy's name of a float dtype ("float32", "bfloat16") */
static const char *dt_name(int32_t dt) { return gn__dtype_is_float(dt) ? gn__dtype_numpy_name(dt) : "this dtype"; }

/* Does a row's comma list equal the n ops? */
static bool list_eq(const char *list, const char *const *ops, uint32_t n)
{
    const char *p = list;
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(ops[i]);
        if (strncmp(p, ops[i], l) != 0 || (p[l] != ',' && p[l] != 0)) return false;
        p += l;
        if (*p == ',') p++;
        else if (i + 1 < n) return false;
    }
    return *p == 0;
}

/* The first item of a row's list / is s an item of it? */
static bool list_has(const char *list, const char *s)
{
    size_t l = strlen(s);
    for (const char *p = list; p && *p;) {
        if (!strncmp(p, s, l) && (p[l] == ',' || p[l] == 0)) return true;
        p = strchr(p, ',');
        if (p) p++;
    }
    return false;
}

static const char *fail(char *buf, size_t n, const char *fmt, const char *a, const char *b, const char *c,
                        const char *d)
{
    snprintf(buf, n, fmt, a, b, c, d);
    return buf;
}

const char *gn__fusion_contract_check(const gn__fusion_desc *d, char *buf, size_t n)
{
    if (!gn__fusion_contract_governs(d->op)) return NULL;
    uint32_t dev = d->gpu ? GN_FC_GPU : GN_FC_CPU;
    const char *dn = d->gpu ? "GPU" : "CPU";
    for (size_t i = 0; i < sizeof k_absent / sizeof k_absent[0]; i++)
        if (!strcmp(k_absent[i].op, d->op) && k_absent[i].device == dev) {
            snprintf(buf, n, "%s", k_absent[i].why);
            return buf;
        }
    bool bnex = !strcmp(d->op, "_FusedBatchNormEx");
    /* rows of this op and device; then the one with this list */
    const gn__fusion_row *any = NULL, *row = NULL;
    for (size_t i = 0; i < sizeof k_rows / sizeof k_rows[0]; i++) {
        const gn__fusion_row *r = &k_rows[i];
        if (strcmp(r->op, d->op) || !(r->devices & dev)) continue;
        if (!any) any = r;
        if (list_eq(r->fused_ops, d->fused_ops, d->n_ops) && (bnex ? d->num_args <= r->num_args : d->num_args == r->num_args)) {
            row = r;
            break;
        }
    }
    if (!any) return fail(buf, n, "TensorFlow has no %s kernel for %s%s%s", dn, d->op, "", "");
    if (!row) {
        /* name the first op of the list no row of this op and device has */
        const char *missing = NULL;
        bool has_add = false;
        for (uint32_t k = 0; k < d->n_ops; k++) has_add = has_add || !strcmp(d->fused_ops[k], "Add");
        for (uint32_t k = 0; k < d->n_ops && !missing; k++) {
            bool seen = false;
            for (size_t i = 0; i < sizeof k_rows / sizeof k_rows[0] && !seen; i++)
                seen = !strcmp(k_rows[i].op, d->op) && (k_rows[i].devices & dev) &&
                       list_has(k_rows[i].fused_ops, d->fused_ops[k]);
            if (!seen) missing = d->fused_ops[k];
        }
        char lst[160];
        size_t w = 0;
        lst[0] = 0;
        for (uint32_t k = 0; k < d->n_ops && w < sizeof lst; k++)
            w += (size_t)snprintf(lst + w, sizeof lst - w, "%s%s", k ? ", " : "", d->fused_ops[k]);
        if (bnex)
            snprintf(buf, n, "TensorFlow's %s _FusedBatchNormEx takes activation Identity or Relu with at most one side "
                     "input, not %s with %u (%s)", dn, lst, d->num_args, any->source);
        else if (has_add)
            snprintf(buf, n, "TensorFlow's %s %s takes no Add side input (fused_ops [%s]) (%s)", dn, d->op, lst,
                     any->source);
        else if (missing)
            snprintf(buf, n, "TensorFlow's %s %s has no %s epilogue (fused_ops [%s]) (%s)", dn, d->op, missing, lst,
                     any->source);
        else
            snprintf(buf, n, "TensorFlow's %s %s does not take fused_ops [%s] (%s)", dn, d->op, lst, any->source);
        return buf;
    }
    if (!(row->dtypes & B(d->dtype & 63))) {
        /* is it another list's dtype (GPU MatMul's half-only epilogues)? */
        snprintf(buf, n, "TensorFlow's %s %s [%s] does not run %s (%s)", dn, d->op, row->fused_ops, dt_name(d->dtype),
                 row->source);
        return buf;
    }
    if (row->formats && !(row->formats & (d->nchw ? GN_FC_NCHW : GN_FC_NHWC))) {
        snprintf(buf, n, "TensorFlow's %s %s runs only %s (%s)", dn, d->op, d->nchw ? "NHWC" : "NCHW", row->source);
        return buf;
    }
    if (d->grouped && !strcmp(d->op, "_FusedConv2D") && !d->gpu)
        return fail(buf, n, "TensorFlow's CPU _FusedConv2D does not take a grouped convolution (%s)%s%s%s", row->source,
                    "", "", "");
    if (bnex) {
        if (d->training)
            return fail(buf, n, "TensorFlow fuses a training FusedBatchNorm only with cuDNN's persistent mode (%s)%s%s%s",
                        row->source, "", "", "");
        if (d->channels < 0)
            return fail(buf, n, "channel count unknown: _FusedBatchNormEx needs it divisible by 4 (%s)%s%s%s",
                        row->source, "", "", "");
        if (d->channels % 4 != 0) {
            snprintf(buf, n, "_FusedBatchNormEx needs the channel dim divisible by 4, it is %lld (%s)",
                     (long long)d->channels, row->source);
            return buf;
        }
    }
    return NULL;
}

/* ---- a written node ---------------------------------------------------------------------- */
static int32_t tattr(const gn_graph *g, gn_id id, const char *key)
{
    int t = 0;
    return gn__attr_get_type(g, id, key, &t) ? (int32_t)t : 0;
}

const char *gn__fusion_contract_node(const gn_graph *g, gn_id id, bool gpu, char *buf, size_t n)
{
    const char *op = gn__node_op(g, id);
    if (!gn__fusion_contract_governs(op)) return NULL;
    gn__fusion_desc d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.gpu = gpu;
    d.dtype = tattr(g, id, "T");
    d.channels = -1;
    const char *fmt = NULL;
    size_t fl = 0;
    d.nchw = gn__attr_get_string(g, id, "data_format", &fmt, &fl) && fl == 4 && !memcmp(fmt, "NCHW", 4);
    char items[8][32];
    const char *ops[8];
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "fused_ops");
    if (!strcmp(op, "_FusedBatchNormEx")) {
        const char *s = NULL;
        size_t sl = 0;
        if (!gn__attr_get_string(g, id, "activation_mode", &s, &sl)) s = "Identity", sl = 8;
        snprintf(items[0], sizeof items[0], "%.*s", (int)sl, s);
        ops[0] = items[0];
        d.n_ops = 1;
        int64_t k = 0;
        gn__attr_get_int(g, id, "num_side_inputs", &k);
        d.num_args = (uint32_t)k;
        gn__attr_get_bool(g, id, "is_training", &d.training);
        /* the channel count: the scale vector's length */
        const gn__node *nd = gn__node_at(g, id);
        if (nd->n_in >= 2) {
            const gn__tinfo *t = gn__graph_shapes(g) ? gn__shape_of(g, nd->in[1].node, nd->in[1].index) : NULL;
            if (t && t->shape.rank == 1 && t->shape.dims[0] >= 0) d.channels = t->shape.dims[0];
            const Tensorflow__AttrValue *cv = gn__node_attr(g, nd->in[1].node, "value");
            if (d.channels < 0 && cv && cv->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TENSOR && cv->tensor &&
                cv->tensor->tensor_shape && cv->tensor->tensor_shape->n_dim == 1)
                d.channels = cv->tensor->tensor_shape->dim[0]->size;
        }
    } else {
        size_t m = v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list ? v->list->n_s : 0;
        if (m > 8) m = 8;
        for (size_t k = 0; k < m; k++) {
            snprintf(items[k], sizeof items[k], "%.*s", (int)v->list->s[k].len, (const char *)v->list->s[k].data);
            ops[k] = items[k];
        }
        d.n_ops = (uint32_t)m;
        int64_t na = 0;
        gn__attr_get_int(g, id, "num_args", &na);
        d.num_args = (uint32_t)na;
        /* grouped: the input's depth differs from the filter's */
        const gn__node *nd = gn__node_at(g, id);
        if (!strcmp(op, "_FusedConv2D") && nd->n_in >= 2 && gn__graph_shapes(g)) {
            const gn__tinfo *x = gn__shape_of(g, nd->in[0].node, nd->in[0].index);
            const gn__tinfo *w = gn__shape_of(g, nd->in[1].node, nd->in[1].index);
            if (x && w && x->shape.rank == 4 && w->shape.rank == 4) {
                int64_t cx = x->shape.dims[d.nchw ? 1 : 3], cw = w->shape.dims[2];
                d.grouped = cx >= 0 && cw >= 0 && cx != cw;
            }
        }
    }
    d.fused_ops = ops;
    return gn__fusion_contract_check(&d, buf, n);
}
