/* The CUDA backend (private): the kernels in kernels.cu, callable from C.
 *
 * backend.c and the files backend_impl.h lists, by stage: the backend
 *            interface, support checks, compile (prune, per-node support
 *            check, topological order, weights uploaded once), plans (one per
 *            set of input shapes: host-side shapes, one device arena with
 *            buffers placed by lifetime, cuDNN descriptors and algorithms),
 *            layer norm and elementwise fusion, running, the engine op's
 *            cache; execute (one stream, feeds copied in, fetches copied out).
 * xla_kernels.cu  the XLA data-movement ops (dynamic slice and update, gather, pad).
 * kernels.cu our own kernels (elementwise with broadcasting, epilogues,
 *            Cast, Transpose, Pad, reductions, Softmax, batch norm, pooling,
 *            and the INT8 engines' quantize, im2col, GEMM fallback,
 *            dequantize and depthwise kernels).
 *
 * Every launcher returns the cudaError_t of its launch (cudaGetLastError),
 * never aborts. `h` selects the element type of float tensors: 0 float32,
 * 1 float16. Counts are int64_t; an empty tensor launches nothing. */
#ifndef GN_RUNTIME_CUDA_H
#define GN_RUNTIME_CUDA_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "runtime/cuda/int8_math.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GN__CU_MAX_DIMS 8

/* Unary functions, also the activations of fused epilogues. */
enum {
    GN__CU_ID = 0,
    GN__CU_RELU,
    GN__CU_RELU6,
    GN__CU_ELU,
    GN__CU_LEAKY_RELU,            /* alpha */
    GN__CU_SIGMOID,
    GN__CU_TANH,
    GN__CU_GELU_EXACT,
    GN__CU_GELU_APPROX,
    GN__CU_EXP,
    GN__CU_LOG,
    GN__CU_NEG,
    GN__CU_SQRT,
    GN__CU_RSQRT,
    GN__CU_SQUARE,
    GN__CU_ABS,
    GN__CU_ERF,
    GN__CU_ERFC,
    GN__CU_RECIP,
    GN__CU_SOFTPLUS,
    GN__CU_FLOOR,
};

enum { GN__CU_ADD = 0, GN__CU_SUB, GN__CU_MUL, GN__CU_DIV, GN__CU_MAX, GN__CU_MIN, GN__CU_SQDIFF, GN__CU_POW };

/* Broadcast indexing: output dims, and each operand's element strides per
 * output dim (0 where it is broadcast). */
typedef struct gn__cu_bcast {
    int32_t rank;
    int64_t dims[GN__CU_MAX_DIMS];
    int64_t sa[GN__CU_MAX_DIMS];
    int64_t sb[GN__CU_MAX_DIMS];
} gn__cu_bcast;

/* y = f(x) elementwise (x == y allowed). */
cudaError_t gn__cu_unary(int op, int h, int64_t n, const void *x, void *y, float alpha, cudaStream_t s);
/* dtype conversion float32 <-> float16 (src_h, dst_h). */
cudaError_t gn__cu_cast(int src_h, int dst_h, int64_t n, const void *x, void *y, cudaStream_t s);
/* y = a op b; bc NULL: same shapes, flat. */
cudaError_t gn__cu_binary(int op, int h, int64_t n, const gn__cu_bcast *bc, const void *a, const void *b, void *y,
                          cudaStream_t s);
/* In place: y[i] = act(y[i] + bias[(i / inner) % c]) (bias may be NULL). */
cudaError_t gn__cu_bias_act(int h, int64_t n, int64_t c, int64_t inner, void *y, const void *bias, int act,
                            float alpha, cudaStream_t s);
/* Transpose of a row-major tensor of `esize`-byte elements (1, 2, 4, 8):
 * out dim d = in dim perm[d]. */
cudaError_t gn__cu_transpose(int esize, int32_t rank, const int64_t *in_dims, const int32_t *perm, const void *x,
                             void *y, cudaStream_t s);
/* Padding: out dims = in dims + before + after. mode GN__CU_PAD_CONST fills
 * with the esize bytes at value (host memory; NULL: zero); REFLECT and
 * SYMMETRIC mirror as MirrorPad (before/after at most dim - 1, resp. dim). */
enum { GN__CU_PAD_CONST = 0, GN__CU_PAD_REFLECT, GN__CU_PAD_SYMMETRIC };
cudaError_t gn__cu_pad(int esize, int mode, const void *value, int32_t rank, const int64_t *in_dims,
                       const int64_t *before, const int64_t *out_dims, const void *x, void *y, cudaStream_t s);
/* A strided box of x: output element (i_0 .. i_{r-1}) (row-major over dims)
 * is x[start + sum_d i_d * step[d]] (steps in elements, may be negative).
 * Slice, StridedSlice, Split, SplitV and Unpack are all this. */
typedef struct gn__cu_slice {
    int32_t rank;
    int64_t dims[GN__CU_MAX_DIMS];
    int64_t step[GN__CU_MAX_DIMS];
    int64_t start;
} gn__cu_slice;
cudaError_t gn__cu_slice_copy(int esize, const gn__cu_slice *sl, const void *x, void *y, cudaStream_t s);
/* GatherV2 (batch_dims 0): params viewed as [outer, n, inner], y as
 * [outer, nidx, inner]; idx int32 (idx64 == 0) or int64. An index outside
 * [0, n) gives zeros (as TensorFlow's GPU kernel). */
cudaError_t gn__cu_gather(int esize, int idx64, int64_t outer, int64_t n, int64_t inner, int64_t nidx,
                          const void *params, const void *idx, void *y, cudaStream_t s);

/* XLA data movement (xla_kernels.cu). Start indices are int32 (idx64 == 0)
 * or int64 on the device, clamped into the operand as XLA does. */
/* y = the box of `sizes` at `starts` (rank entries) of x of `dims`. */
cudaError_t gn__cu_xla_dynamic_slice(int esize, int idx64, int32_t rank, const int64_t *dims, const int64_t *sizes,
                                     const void *starts, const void *x, void *y, cudaStream_t s);
/* y = x (copied unless y == x) with `update` written at `starts`. */
cudaError_t gn__cu_xla_dynamic_update_slice(int esize, int idx64, int32_t rank, const int64_t *dims,
                                            const int64_t *update_dims, const void *starts, const void *x,
                                            const void *update, void *y, cudaStream_t s);
/* XlaPad: output element o of dim d reads input (o - lo[d]) / (interior[d] + 1)
 * where that divides and falls inside, else the padding value (one element on
 * the device); lo may be negative (cropping). */
typedef struct gn__cu_xpad {
    int32_t rank;
    int64_t in_dims[GN__CU_MAX_DIMS], out_dims[GN__CU_MAX_DIMS], lo[GN__CU_MAX_DIMS], interior[GN__CU_MAX_DIMS];
} gn__cu_xpad;
cudaError_t gn__cu_xla_pad(int esize, const gn__cu_xpad *p, const void *value, const void *x, void *y,
                           cudaStream_t s);
/* XlaGather: output dim d is an offset dim of operand dim out_map[d] (>= 0)
 * or a batch dim of start_indices dim -1 - out_map[d]; index entry j (at
 * ivd_stride apart) starts operand dim start_map[j], clamped so that the
 * slice (slice[d] wide) fits. */
typedef struct gn__cu_xgather {
    int32_t out_rank, op_rank, n_index;
    int64_t out_dims[GN__CU_MAX_DIMS];
    int32_t out_map[GN__CU_MAX_DIMS];
    int64_t op_dims[GN__CU_MAX_DIMS], op_stride[GN__CU_MAX_DIMS], slice[GN__CU_MAX_DIMS];
    int64_t idx_stride[GN__CU_MAX_DIMS], ivd_stride;
    int32_t start_map[GN__CU_MAX_DIMS];
} gn__cu_xgather;
cudaError_t gn__cu_xla_gather(int esize, int idx64, const gn__cu_xgather *g, const void *x, const void *idx, void *y,
                              cudaStream_t s);

/* A fused run of elementwise ops: one kernel computes, per output element,
 * a short program over up to GN__CU_FUSE_MAX_IN inputs, each read with its
 * own broadcast strides over the output dims. Op j writes register j; an
 * operand >= 0 is a register, < 0 is input (-1 - operand). The output is
 * the last register. */
#define GN__CU_FUSE_MAX_IN 8
#define GN__CU_FUSE_MAX_OPS 24
typedef struct gn__cu_fuse_op {
    int8_t binary;                /* 0: unary op (GN__CU_ID..), 1: binary op (GN__CU_ADD..) */
    int8_t op;
    int8_t a, b;                  /* operands (b unused for unary) */
    float alpha;
} gn__cu_fuse_op;
typedef struct gn__cu_fused {
    int32_t rank, n_in, n_ops;
    int64_t dims[GN__CU_MAX_DIMS];
    int64_t stride[GN__CU_FUSE_MAX_IN][GN__CU_MAX_DIMS];   /* per input, per output dim (0: broadcast) */
    const void *in[GN__CU_FUSE_MAX_IN];
    gn__cu_fuse_op ops[GN__CU_FUSE_MAX_OPS];
} gn__cu_fused;
cudaError_t gn__cu_fused_run(int h, const gn__cu_fused *f, void *y, cudaStream_t s);
/* Sum (mean when mean != 0) over the dims with red[d] != 0; y holds the kept
 * dims in order. Accumulates in float. */
cudaError_t gn__cu_reduce(int h, int mean, int32_t rank, const int64_t *dims, const uint8_t *red, const void *x,
                          void *y, cudaStream_t s);
/* Softmax over the last axis of rows x cols (float accumulation). */
cudaError_t gn__cu_softmax(int h, int64_t rows, int64_t cols, const void *x, void *y, cudaStream_t s);
/* Layer norm over the last axis of rows x cols, one block per row:
 * y = x * sc + (beta - mean * sc), sc = gamma / sqrt(var + eps), mean and
 * variance over the row (float accumulation, rounded to the element type);
 * gamma / beta hold cols values (gn / bn == cols) or one (== 1); eps is one
 * value on the device. */
cudaError_t gn__cu_layernorm(int h, int64_t rows, int64_t cols, const void *x, const void *gamma, int64_t gn,
                             const void *beta, int64_t bn, const void *eps, void *y, cudaStream_t s);
/* Batch norm, inference: y = (x - mean) * rsqrt(var + eps) * scale + offset,
 * channel (i / inner) % c; the four vectors are float32 when ph == 0, float16
 * when ph == 1. */
cudaError_t gn__cu_batchnorm(int h, int ph, int64_t n, int64_t c, int64_t inner, const void *x, const void *scale,
                             const void *offset, const void *mean, const void *var, float eps, void *y,
                             cudaStream_t s);
/* 2-D pooling as TensorFlow: max, or average over the window's elements
 * inside the input (padding excluded). nchw: layout of x and y. */
typedef struct gn__cu_pool {
    int max, nchw;
    int64_t n, c, h, w, oh, ow;
    int64_t kh, kw, sh, sw, pad_top, pad_left;
} gn__cu_pool;
cudaError_t gn__cu_pool2d(int h, const gn__cu_pool *p, const void *x, void *y, cudaStream_t s);

/* ---- INT8 engines (runtime/quant.h) ----
 * float32 activations are quantized with inv = 1 / scale as the CPU
 * reference does (round half to even, clamped to [-127, 127]); sums are
 * int32 and dequantized as act((float)sum * sx * sw[channel] + bias[channel])
 * in that order, without contraction into FMAs. */
/* A GEMM's left operand as rows of kp bytes: xq[r * kp + k] = q(op(x)[r][k])
 * for k < kk, 0 up to kp; x is [m, kk] row-major, or [kk, m] when ta. */
cudaError_t gn__cu_q8_rows(int64_t m, int64_t kk, int64_t kp, int ta, const float *x, float inv, int8_t *xq,
                          cudaStream_t s);
/* An NHWC convolution's input (geometry gn__cu_conv8, int8_math.h) as
 * GEMM rows, quantized (im2col): row (n, oh, ow), column (kh, kw, c) of kp;
 * zeros outside the input and past kh*kw*c. */
cudaError_t gn__cu_im2col8(const gn__cu_conv8 *g, int64_t kp, const float *x, float inv, int8_t *xq, cudaStream_t s);
/* acc[r][j] = sum_k a[r * kp + k] * b[j * kp + k] in int32 (r < m, j < n;
 * kp a multiple of 4, rows 4-byte aligned): where cuBLASLt offers no int8
 * algorithm. */
cudaError_t gn__cu_gemm8(int64_t m, int64_t n, int64_t kp, const int8_t *a, const int8_t *b, int32_t *acc,
                         cudaStream_t s);
/* y[i] = act((float)acc[i] * sx * sw[c] + bias[c]), c = i % n_ch (bias may be NULL). */
cudaError_t gn__cu_dequant8(int64_t total, int64_t n_ch, const int32_t *acc, float sx, const float *sw,
                            const float *bias, int act, float alpha, float *y, cudaStream_t s);
/* Depthwise NHWC with channel multiplier mult, quantized on the fly: wq
 * [kh][kw][c * mult], y [n, oh, ow, c * mult], dequantized as above. */
cudaError_t gn__cu_dw8(const gn__cu_conv8 *g, int64_t mult, const float *x, float inv, const int8_t *wq, float sx,
                       const float *sw, const float *bias, int act, float alpha, float *y, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
#include "runtime/backend.h"

/* The backend (backend.c): GN_ERR_UNSUPPORTED naming why when no CUDA device
 * or driver is present. cuBLAS and cuDNN are loaded here; when one is
 * missing the backend still opens and the ops needing it are unsupported
 * (supports() and compile() say which library and why). */
gn_status gn__cuda_backend_open(int32_t num_threads, gn__backend *out, gn__err *err);
#endif

#endif
