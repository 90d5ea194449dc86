/* The output's contract (docs/fusion_contract.md): which fused ops, with which
 * fused_ops lists, dtypes and data formats, TensorFlow's kernels run on a
 * device. One table, each row with the TensorFlow source file it comes from.
 *
 *  cpu  what the tensorflow-cpu wheel runs on both of its paths: oneDNN on
 *       (the x86 default: mkl_layout_pass.cc rewrites the fused ops it knows
 *       to _MklNative* kernels and leaves the others to the Eigen kernels) and
 *       oneDNN off (TF_ENABLE_ONEDNN_OPTS=0: the Eigen kernels only, and the
 *       oneDNN placeholders registered as NoOp produce no output). A row is
 *       there only when both paths run it.
 *  gpu  what TensorFlow's GPU kernels accept.
 *
 * The remapper asks gn__fusion_contract_check before every fusion it writes;
 * under remap.policy 'tensorflow' (the default) a fusion the table does not
 * hold is not made, and the reason is the table's; under 'grapnel' it is made
 * and reported as grapnel-only. */
#ifndef GN_OPTIMIZER_FUSION_CONTRACT_H
#define GN_OPTIMIZER_FUSION_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/ir.h"

enum {
    GN_FC_CPU = 1,
    GN_FC_GPU = 2,
};

/* Data formats (convolutions; 0 in a row: the op has none). */
enum {
    GN_FC_NHWC = 1,
    GN_FC_NCHW = 2,
};

typedef struct gn__fusion_row {
    const char *op;          /* "_FusedConv2D" */
    uint32_t devices;        /* GN_FC_CPU / GN_FC_GPU */
    uint64_t dtypes;         /* bit (1 << DataType) for each T accepted */
    uint32_t formats;        /* GN_FC_NHWC / GN_FC_NCHW; 0: no data_format */
    const char *fused_ops;   /* "BiasAdd,Relu"; _FusedBatchNormEx: the activation_mode */
    uint32_t num_args;       /* num_args (_FusedBatchNormEx: the most side inputs) */
    const char *source;      /* the TensorFlow file(s) the row comes from */
} gn__fusion_row;

/* A fusion about to be written (or read back from a node). */
typedef struct gn__fusion_desc {
    const char *op;                /* "_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul",
                                      "_FusedBatchNormEx" */
    const char *const *fused_ops;  /* _FusedBatchNormEx: one entry, the activation_mode */
    uint32_t n_ops;
    uint32_t num_args;             /* _FusedBatchNormEx: num_side_inputs */
    int32_t dtype;                 /* T */
    bool gpu;
    bool nchw;
    bool grouped;                  /* a grouped convolution (input depth != filter depth) */
    bool training;                 /* _FusedBatchNormEx: is_training */
    int64_t channels;              /* _FusedBatchNormEx: -1 when unknown */
} gn__fusion_desc;

/* The table (rows in a fixed order; n set). */
const gn__fusion_row *gn__fusion_contract_rows(size_t *n);

/* NULL when TensorFlow runs the fusion on d's device; otherwise why not (in
 * buf, naming the TensorFlow source), e.g. "TensorFlow's CPU _FusedConv2D
 * has no Sigmoid epilogue (tensorflow/core/kernels/conv_ops_fused_impl.h)". */
const char *gn__fusion_contract_check(const gn__fusion_desc *d, char *buf, size_t n);

/* Is op one of the fused ops the table governs? */
bool gn__fusion_contract_governs(const char *op);

/* The same for a node of g as written (its op and attrs; channels from the
 * shapes when g has them): NULL when TensorFlow runs it, or when the node's op
 * is not a fused op the table governs. */
const char *gn__fusion_contract_node(const gn_graph *g, gn_id id, bool gpu, char *buf, size_t n);

#endif
