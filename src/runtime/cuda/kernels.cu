/* CUDA backend kernels (see cuda.h). Grid-stride loops over int64 indices;
 * float16 is computed in float and rounded once. */
#include <string.h>

#include <cuda_fp16.h>

#include "runtime/cuda/cuda.h"

namespace {

const int kThreads = 256;

unsigned grid_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b > 65535LL * 32) b = 65535LL * 32;
    if (b < 1) b = 1;
    return (unsigned)b;
}

template <typename T> __device__ __forceinline__ float ld(const T *p, int64_t i);
template <> __device__ __forceinline__ float ld<float>(const float *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float ld<__half>(const __half *p, int64_t i) { return __half2float(p[i]); }
template <typename T> __device__ __forceinline__ void st(T *p, int64_t i, float v);
template <> __device__ __forceinline__ void st<float>(float *p, int64_t i, float v) { p[i] = v; }
template <> __device__ __forceinline__ void st<__half>(__half *p, int64_t i, float v) { p[i] = __float2half(v); }

__device__ __forceinline__ float apply_unary(int op, float v, float alpha)
{
    switch (op) {
    case GN__CU_RELU: return v > 0.f ? v : 0.f;
    case GN__CU_RELU6: return fminf(fmaxf(v, 0.f), 6.f);
    case GN__CU_ELU: return v > 0.f ? v : expm1f(v);
    case GN__CU_LEAKY_RELU: return v > 0.f ? v : v * alpha;
    case GN__CU_SIGMOID: return 1.f / (1.f + expf(-v));
    case GN__CU_TANH: return tanhf(v);
    case GN__CU_GELU_EXACT: return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    case GN__CU_GELU_APPROX: {
        float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        return 0.5f * v * (1.f + tanhf(u));
    }
    case GN__CU_EXP: return expf(v);
    case GN__CU_LOG: return logf(v);
    case GN__CU_NEG: return -v;
    case GN__CU_SQRT: return sqrtf(v);
    case GN__CU_RSQRT: return 1.f / sqrtf(v);
    case GN__CU_SQUARE: return v * v;
    case GN__CU_ABS: return fabsf(v);
    case GN__CU_ERF: return erff(v);
    case GN__CU_ERFC: return erfcf(v);
    case GN__CU_RECIP: return 1.f / v;
    case GN__CU_SOFTPLUS: return v > 20.f ? v : log1pf(expf(v));
    case GN__CU_FLOOR: return floorf(v);
    default: return v;
    }
}

__device__ __forceinline__ float apply_binary(int op, float a, float b)
{
    switch (op) {
    case GN__CU_ADD: return a + b;
    case GN__CU_SUB: return a - b;
    case GN__CU_MUL: return a * b;
    case GN__CU_DIV: return a / b;
    case GN__CU_MAX: return (a != a || b != b) ? a + b : fmaxf(a, b);   /* NaN propagates as in TF */
    case GN__CU_MIN: return (a != a || b != b) ? a + b : fminf(a, b);
    case GN__CU_SQDIFF: {
        float d = a - b;
        return d * d;
    }
    case GN__CU_POW: return powf(a, b);
    default: return 0.f;
    }
}

#define GRID_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                             i += (int64_t)blockDim.x * gridDim.x)

template <typename T> __global__ void k_unary(int op, int64_t n, const T *x, T *y, float alpha)
{
    GRID_LOOP(i, n) st(y, i, apply_unary(op, ld(x, i), alpha));
}

template <typename S, typename D> __global__ void k_cast(int64_t n, const S *x, D *y)
{
    GRID_LOOP(i, n) st(y, i, ld(x, i));
}

template <typename T> __global__ void k_binary_flat(int op, int64_t n, const T *a, const T *b, T *y)
{
    GRID_LOOP(i, n) st(y, i, apply_binary(op, ld(a, i), ld(b, i)));
}

template <typename T> __global__ void k_binary_bc(int op, int64_t n, gn__cu_bcast bc, const T *a, const T *b, T *y)
{
    GRID_LOOP(i, n) {
        int64_t r = i, ia = 0, ib = 0;
        for (int d = bc.rank - 1; d >= 0; d--) {
            int64_t k = r % bc.dims[d];
            r /= bc.dims[d];
            ia += k * bc.sa[d];
            ib += k * bc.sb[d];
        }
        st(y, i, apply_binary(op, ld(a, ia), ld(b, ib)));
    }
}

template <typename T>
__global__ void k_bias_act(int64_t n, int64_t c, int64_t inner, T *y, const T *bias, int act, float alpha)
{
    GRID_LOOP(i, n) {
        float v = ld(y, i);
        if (bias) v += ld(bias, (i / inner) % c);
        st(y, i, apply_unary(act, v, alpha));
    }
}

struct perm_args {
    int32_t rank;
    int64_t out_dims[GN__CU_MAX_DIMS];
    int64_t in_stride[GN__CU_MAX_DIMS];   /* input stride of output dim d */
};

template <typename E> __global__ void k_transpose(int64_t n, perm_args p, const E *x, E *y)
{
    GRID_LOOP(i, n) {
        int64_t r = i, off = 0;
        for (int d = p.rank - 1; d >= 0; d--) {
            off += (r % p.out_dims[d]) * p.in_stride[d];
            r /= p.out_dims[d];
        }
        y[i] = x[off];
    }
}

struct pad_args {
    int32_t rank;
    int64_t in_dims[GN__CU_MAX_DIMS];
    int64_t before[GN__CU_MAX_DIMS];
    int64_t out_dims[GN__CU_MAX_DIMS];
};

template <typename E> __global__ void k_pad(int64_t n, pad_args p, int mode, E value, const E *x, E *y)
{
    GRID_LOOP(i, n) {
        int64_t r = i, off = 0, stride = 1;
        bool inside = true;
        for (int d = p.rank - 1; d >= 0; d--) {
            int64_t dim = p.in_dims[d], k = r % p.out_dims[d] - p.before[d];
            r /= p.out_dims[d];
            if (mode == GN__CU_PAD_REFLECT) {
                if (k < 0) k = -k;
                else if (k >= dim) k = 2 * dim - 2 - k;
            } else if (mode == GN__CU_PAD_SYMMETRIC) {
                if (k < 0) k = -k - 1;
                else if (k >= dim) k = 2 * dim - 1 - k;
            }
            if (k < 0 || k >= dim) inside = false;
            off += k * stride;
            stride *= dim;
        }
        y[i] = inside ? x[off] : value;
    }
}

template <typename E> __global__ void k_slice(int64_t n, gn__cu_slice p, const E *x, E *y)
{
    GRID_LOOP(i, n) {
        int64_t r = i, off = p.start;
        for (int d = p.rank - 1; d >= 0; d--) {
            off += (r % p.dims[d]) * p.step[d];
            r /= p.dims[d];
        }
        y[i] = x[off];
    }
}

template <typename E, typename I>
__global__ void k_gather(int64_t total, int64_t n, int64_t inner, int64_t nidx, const E *x, const I *idx, E *y)
{
    GRID_LOOP(i, total) {
        int64_t r = i % inner, q = i / inner, j = q % nidx, o = q / nidx;
        int64_t k = (int64_t)idx[j];
        y[i] = (k >= 0 && k < n) ? x[(o * n + k) * inner + r] : E(0);
    }
}

template <typename T> __global__ void k_fused(int64_t n, gn__cu_fused f, T *y)
{
    GRID_LOOP(i, n) {
        int64_t off[GN__CU_FUSE_MAX_IN];
        for (int k = 0; k < f.n_in; k++) off[k] = 0;
        int64_t r = i;
        for (int d = f.rank - 1; d >= 0; d--) {
            int64_t q = r % f.dims[d];
            r /= f.dims[d];
            for (int k = 0; k < f.n_in; k++) off[k] += q * f.stride[k][d];
        }
        float reg[GN__CU_FUSE_MAX_OPS];
        float last = 0.f;
        for (int j = 0; j < f.n_ops; j++) {
            const gn__cu_fuse_op o = f.ops[j];
            float a = o.a >= 0 ? reg[o.a] : ld((const T *)f.in[-1 - o.a], off[-1 - o.a]);
            if (o.binary) {
                float b = o.b >= 0 ? reg[o.b] : ld((const T *)f.in[-1 - o.b], off[-1 - o.b]);
                last = apply_binary(o.op, a, b);
            } else {
                last = apply_unary(o.op, a, o.alpha);
            }
            reg[j] = last;
        }
        st(y, i, last);
    }
}

struct red_args {
    int32_t nk, nr;                        /* kept / reduced dims */
    int64_t kdims[GN__CU_MAX_DIMS], kstride[GN__CU_MAX_DIMS];
    int64_t rdims[GN__CU_MAX_DIMS], rstride[GN__CU_MAX_DIMS];
    int64_t rn;                            /* reduced elements */
};

template <typename T> __global__ void k_reduce(int64_t n, red_args p, int mean, const T *x, T *y)
{
    GRID_LOOP(i, n) {
        int64_t r = i, base = 0;
        for (int d = p.nk - 1; d >= 0; d--) {
            base += (r % p.kdims[d]) * p.kstride[d];
            r /= p.kdims[d];
        }
        float acc = 0.f;
        for (int64_t j = 0; j < p.rn; j++) {
            int64_t q = j, off = base;
            for (int d = p.nr - 1; d >= 0; d--) {
                off += (q % p.rdims[d]) * p.rstride[d];
                q /= p.rdims[d];
            }
            acc += ld(x, off);
        }
        if (mean && p.rn > 0) acc /= (float)p.rn;
        st(y, i, acc);
    }
}

__device__ float block_reduce(float v, bool is_max, float *sh)
{
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] = is_max ? fmaxf(sh[t], sh[t + s]) : sh[t] + sh[t + s];
        __syncthreads();
    }
    float r = sh[0];
    __syncthreads();
    return r;
}

template <typename T> __global__ void k_softmax(int64_t rows, int64_t cols, const T *x, T *y)
{
    __shared__ float sh[kThreads];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * cols;
        T *yr = y + row * cols;
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, ld(xr, j));
        m = block_reduce(m, true, sh);
        float s = 0.f;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(ld(xr, j) - m);
        s = block_reduce(s, false, sh);
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) st(yr, j, expf(ld(xr, j) - m) / s);
    }
}

/* Sum over the block: shuffles within each warp, then the warps' sums
 * through shared memory (blockDim.x a multiple of 32, at most 1024); every
 * thread gets the total. */
__device__ float block_sum_warps(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (int)(blockDim.x >> 5);
    if (lane == 0) sh[w] = v;
    __syncthreads();
    v = lane < nw ? sh[lane] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();   /* sh is written again by the next call */
    return v;
}

template <typename T> __device__ __forceinline__ float round_to(float v);
template <> __device__ __forceinline__ float round_to<float>(float v) { return v; }
template <> __device__ __forceinline__ float round_to<__half>(float v) { return __half2float(__float2half(v)); }

/* Layer norm over rows (one block per row): mean and variance accumulated in
 * float (each rounded to T, as the graph's Mean outputs are), then
 * y = x * sc + (beta - mean * sc) with sc = gamma / sqrt(var + eps), the
 * graph's own arithmetic. gamma and beta have cols values, or one (gn, bn). */
template <typename T>
__global__ void k_layernorm(int64_t rows, int64_t cols, const T *x, const T *gamma, int64_t gn, const T *beta,
                            int64_t bn, const T *eps, T *y)
{
    __shared__ float sh[32];
    float e = ld(eps, 0);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * cols;
        T *yr = y + row * cols;
        float s = 0.f;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += ld(xr, j);
        float mean = round_to<T>(block_sum_warps(s, sh) / (float)cols);
        float v = 0.f;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            float d = ld(xr, j) - mean;
            v += d * d;
        }
        float var = round_to<T>(block_sum_warps(v, sh) / (float)cols);
        float rs = 1.f / sqrtf(var + e);
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            float sc = rs * ld(gamma, gn == 1 ? 0 : j);
            st(yr, j, ld(xr, j) * sc + (ld(beta, bn == 1 ? 0 : j) - mean * sc));
        }
    }
}

template <typename T, typename P>
__global__ void k_batchnorm(int64_t n, int64_t c, int64_t inner, const T *x, const P *scale, const P *offset,
                            const P *mean, const P *var, float eps, T *y)
{
    GRID_LOOP(i, n) {
        int64_t ch = (i / inner) % c;
        float inv = rsqrtf(ld(var, ch) + eps) * ld(scale, ch);
        st(y, i, (ld(x, i) - ld(mean, ch)) * inv + ld(offset, ch));
    }
}

template <typename T> __global__ void k_pool(int64_t total, gn__cu_pool p, const T *x, T *y)
{
    GRID_LOOP(i, total) {
        int64_t n, c, oy, ox, r = i;
        if (p.nchw) {
            ox = r % p.ow; r /= p.ow;
            oy = r % p.oh; r /= p.oh;
            c = r % p.c; n = r / p.c;
        } else {
            c = r % p.c; r /= p.c;
            ox = r % p.ow; r /= p.ow;
            oy = r % p.oh; n = r / p.oh;
        }
        int64_t y0 = oy * p.sh - p.pad_top, x0 = ox * p.sw - p.pad_left;
        float acc = p.max ? -INFINITY : 0.f;
        int64_t cnt = 0;
        for (int64_t ky = 0; ky < p.kh; ky++) {
            int64_t yy = y0 + ky;
            if (yy < 0 || yy >= p.h) continue;
            for (int64_t kx = 0; kx < p.kw; kx++) {
                int64_t xx = x0 + kx;
                if (xx < 0 || xx >= p.w) continue;
                int64_t off = p.nchw ? ((n * p.c + c) * p.h + yy) * p.w + xx : ((n * p.h + yy) * p.w + xx) * p.c + c;
                float v = ld(x, off);
                if (p.max) acc = (v > acc || v != v) ? v : acc;
                else acc += v;
                cnt++;
            }
        }
        if (!p.max) acc = cnt ? acc / (float)cnt : 0.f;
        st(y, i, acc);
    }
}

/* ---- INT8 engines: the element functions of int8_math.h ---- */
__global__ void k_q8_rows(int64_t n, int64_t m, int64_t kk, int64_t kp, int ta, const float *x, float inv, int8_t *xq)
{
    GRID_LOOP(i, n) xq[i] = gn__i8_row_at(i, m, kk, kp, ta, x, inv);
}

__global__ void k_im2col8(int64_t n, gn__cu_conv8 g, int64_t kp, const float *x, float inv, int8_t *xq)
{
    GRID_LOOP(i, n) xq[i] = gn__i8_im2col_at(i, &g, kp, x, inv);
}

/* one thread per output; rows are kp bytes, kp a multiple of 4, 4-byte aligned */
__global__ void k_gemm8(int64_t total, int64_t nn, int64_t kp, const int8_t *a, const int8_t *b, int32_t *acc)
{
    GRID_LOOP(i, total) {
        const int *ar = (const int *)(a + (i / nn) * kp), *br = (const int *)(b + (i % nn) * kp);
        int sum = 0;
        for (int64_t k = 0; k < kp / 4; k++) sum = __dp4a(ar[k], br[k], sum);
        acc[i] = sum;
    }
}

__global__ void k_dequant8(int64_t n, int64_t ch, const int32_t *acc, float sx, const float *sw, const float *bias,
                           int act, float alpha, float *y)
{
    GRID_LOOP(i, n) {
        int64_t c = i % ch;
        y[i] = gn__i8_dequant(acc[i], sx, sw[c], bias, c, act, alpha);
    }
}

__global__ void k_dw8(int64_t n, gn__cu_conv8 g, int64_t mult, const float *x, float inv, const int8_t *wq, float sx,
                      const float *sw, const float *bias, int act, float alpha, float *y)
{
    GRID_LOOP(i, n) {
        int64_t j = i % (g.c * mult);
        y[i] = gn__i8_dequant(gn__i8_dw_at(i, &g, mult, x, inv, wq), sx, sw[j], bias, j, act, alpha);
    }
}

cudaError_t done(void) { return cudaGetLastError(); }

} // namespace

extern "C" {

cudaError_t gn__cu_unary(int op, int h, int64_t n, const void *x, void *y, float alpha, cudaStream_t s)
{
    if (n <= 0) return cudaSuccess;
    if (h) k_unary<<<grid_for(n), kThreads, 0, s>>>(op, n, (const __half *)x, (__half *)y, alpha);
    else k_unary<<<grid_for(n), kThreads, 0, s>>>(op, n, (const float *)x, (float *)y, alpha);
    return done();
}

cudaError_t gn__cu_cast(int src_h, int dst_h, int64_t n, const void *x, void *y, cudaStream_t s)
{
    if (n <= 0) return cudaSuccess;
    if (src_h == dst_h) return cudaMemcpyAsync(y, x, (size_t)n * (src_h ? 2 : 4), cudaMemcpyDeviceToDevice, s);
    if (src_h) k_cast<<<grid_for(n), kThreads, 0, s>>>(n, (const __half *)x, (float *)y);
    else k_cast<<<grid_for(n), kThreads, 0, s>>>(n, (const float *)x, (__half *)y);
    return done();
}

cudaError_t gn__cu_binary(int op, int h, int64_t n, const gn__cu_bcast *bc, const void *a, const void *b, void *y,
                          cudaStream_t s)
{
    if (n <= 0) return cudaSuccess;
    if (!bc) {
        if (h) k_binary_flat<<<grid_for(n), kThreads, 0, s>>>(op, n, (const __half *)a, (const __half *)b, (__half *)y);
        else k_binary_flat<<<grid_for(n), kThreads, 0, s>>>(op, n, (const float *)a, (const float *)b, (float *)y);
    } else {
        if (h) k_binary_bc<<<grid_for(n), kThreads, 0, s>>>(op, n, *bc, (const __half *)a, (const __half *)b, (__half *)y);
        else k_binary_bc<<<grid_for(n), kThreads, 0, s>>>(op, n, *bc, (const float *)a, (const float *)b, (float *)y);
    }
    return done();
}

cudaError_t gn__cu_bias_act(int h, int64_t n, int64_t c, int64_t inner, void *y, const void *bias, int act,
                            float alpha, cudaStream_t s)
{
    if (n <= 0) return cudaSuccess;
    if (c < 1) c = 1;
    if (inner < 1) inner = 1;
    if (h) k_bias_act<<<grid_for(n), kThreads, 0, s>>>(n, c, inner, (__half *)y, (const __half *)bias, act, alpha);
    else k_bias_act<<<grid_for(n), kThreads, 0, s>>>(n, c, inner, (float *)y, (const float *)bias, act, alpha);
    return done();
}

cudaError_t gn__cu_transpose(int esize, int32_t rank, const int64_t *in_dims, const int32_t *perm, const void *x,
                             void *y, cudaStream_t s)
{
    if (rank < 0 || rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    perm_args p;
    p.rank = rank;
    int64_t in_stride[GN__CU_MAX_DIMS], n = 1, st = 1;
    for (int d = rank - 1; d >= 0; d--) {
        in_stride[d] = st;
        st *= in_dims[d];
    }
    for (int d = 0; d < rank; d++) {
        p.out_dims[d] = in_dims[perm[d]];
        p.in_stride[d] = in_stride[perm[d]];
        n *= p.out_dims[d];
    }
    if (n <= 0) return cudaSuccess;
    switch (esize) {
    case 1: k_transpose<<<grid_for(n), kThreads, 0, s>>>(n, p, (const uint8_t *)x, (uint8_t *)y); break;
    case 2: k_transpose<<<grid_for(n), kThreads, 0, s>>>(n, p, (const uint16_t *)x, (uint16_t *)y); break;
    case 4: k_transpose<<<grid_for(n), kThreads, 0, s>>>(n, p, (const uint32_t *)x, (uint32_t *)y); break;
    case 8: k_transpose<<<grid_for(n), kThreads, 0, s>>>(n, p, (const uint64_t *)x, (uint64_t *)y); break;
    default: return cudaErrorInvalidValue;
    }
    return done();
}

cudaError_t gn__cu_pad(int esize, int mode, const void *value, int32_t rank, const int64_t *in_dims,
                       const int64_t *before, const int64_t *out_dims, const void *x, void *y, cudaStream_t s)
{
    if (rank < 0 || rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    pad_args p;
    p.rank = rank;
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        p.in_dims[d] = in_dims[d];
        p.before[d] = before[d];
        p.out_dims[d] = out_dims[d];
        n *= out_dims[d];
    }
    if (n <= 0) return cudaSuccess;
    uint64_t v = 0;
    if (value) memcpy(&v, value, (size_t)esize);
    switch (esize) {
    case 1: k_pad<<<grid_for(n), kThreads, 0, s>>>(n, p, mode, (uint8_t)v, (const uint8_t *)x, (uint8_t *)y); break;
    case 2: k_pad<<<grid_for(n), kThreads, 0, s>>>(n, p, mode, (uint16_t)v, (const uint16_t *)x, (uint16_t *)y); break;
    case 4: k_pad<<<grid_for(n), kThreads, 0, s>>>(n, p, mode, (uint32_t)v, (const uint32_t *)x, (uint32_t *)y); break;
    case 8: k_pad<<<grid_for(n), kThreads, 0, s>>>(n, p, mode, (uint64_t)v, (const uint64_t *)x, (uint64_t *)y); break;
    default: return cudaErrorInvalidValue;
    }
    return done();
}

cudaError_t gn__cu_slice_copy(int esize, const gn__cu_slice *sl, const void *x, void *y, cudaStream_t s)
{
    if (sl->rank < 0 || sl->rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    int64_t n = 1;
    for (int d = 0; d < sl->rank; d++) n *= sl->dims[d];
    if (n <= 0) return cudaSuccess;
    switch (esize) {
    case 1: k_slice<<<grid_for(n), kThreads, 0, s>>>(n, *sl, (const uint8_t *)x, (uint8_t *)y); break;
    case 2: k_slice<<<grid_for(n), kThreads, 0, s>>>(n, *sl, (const uint16_t *)x, (uint16_t *)y); break;
    case 4: k_slice<<<grid_for(n), kThreads, 0, s>>>(n, *sl, (const uint32_t *)x, (uint32_t *)y); break;
    case 8: k_slice<<<grid_for(n), kThreads, 0, s>>>(n, *sl, (const uint64_t *)x, (uint64_t *)y); break;
    default: return cudaErrorInvalidValue;
    }
    return done();
}

cudaError_t gn__cu_gather(int esize, int idx64, int64_t outer, int64_t n, int64_t inner, int64_t nidx,
                          const void *params, const void *idx, void *y, cudaStream_t s)
{
    int64_t total = outer * nidx * inner;
    if (total <= 0) return cudaSuccess;
#define GATHER(E)                                                                                                      \
    do {                                                                                                               \
        if (idx64)                                                                                                     \
            k_gather<<<grid_for(total), kThreads, 0, s>>>(total, n, inner, nidx, (const E *)params,                    \
                                                          (const int64_t *)idx, (E *)y);                               \
        else                                                                                                           \
            k_gather<<<grid_for(total), kThreads, 0, s>>>(total, n, inner, nidx, (const E *)params,                    \
                                                          (const int32_t *)idx, (E *)y);                               \
    } while (0)
    switch (esize) {
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;
    case 4: GATHER(uint32_t); break;
    case 8: GATHER(uint64_t); break;
    default: return cudaErrorInvalidValue;
    }
#undef GATHER
    return done();
}

cudaError_t gn__cu_fused_run(int h, const gn__cu_fused *f, void *y, cudaStream_t s)
{
    if (f->rank < 0 || f->rank > GN__CU_MAX_DIMS || f->n_in < 0 || f->n_in > GN__CU_FUSE_MAX_IN || f->n_ops < 1 ||
        f->n_ops > GN__CU_FUSE_MAX_OPS)
        return cudaErrorInvalidValue;
    int64_t n = 1;
    for (int d = 0; d < f->rank; d++) n *= f->dims[d];
    if (n <= 0) return cudaSuccess;
    if (h) k_fused<<<grid_for(n), kThreads, 0, s>>>(n, *f, (__half *)y);
    else k_fused<<<grid_for(n), kThreads, 0, s>>>(n, *f, (float *)y);
    return done();
}

cudaError_t gn__cu_reduce(int h, int mean, int32_t rank, const int64_t *dims, const uint8_t *red, const void *x,
                          void *y, cudaStream_t s)
{
    if (rank < 0 || rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    red_args p;
    p.nk = p.nr = 0;
    p.rn = 1;
    int64_t n = 1, st = 1, stride[GN__CU_MAX_DIMS];
    for (int d = rank - 1; d >= 0; d--) {
        stride[d] = st;
        st *= dims[d];
    }
    for (int d = 0; d < rank; d++) {
        if (red[d]) {
            p.rdims[p.nr] = dims[d];
            p.rstride[p.nr++] = stride[d];
            p.rn *= dims[d];
        } else {
            p.kdims[p.nk] = dims[d];
            p.kstride[p.nk++] = stride[d];
            n *= dims[d];
        }
    }
    if (n <= 0) return cudaSuccess;
    if (h) k_reduce<<<grid_for(n), kThreads, 0, s>>>(n, p, mean, (const __half *)x, (__half *)y);
    else k_reduce<<<grid_for(n), kThreads, 0, s>>>(n, p, mean, (const float *)x, (float *)y);
    return done();
}

cudaError_t gn__cu_softmax(int h, int64_t rows, int64_t cols, const void *x, void *y, cudaStream_t s)
{
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    unsigned g = rows > 65535LL * 16 ? 65535u * 16 : (unsigned)rows;
    if (h) k_softmax<<<g, kThreads, 0, s>>>(rows, cols, (const __half *)x, (__half *)y);
    else k_softmax<<<g, kThreads, 0, s>>>(rows, cols, (const float *)x, (float *)y);
    return done();
}

cudaError_t gn__cu_layernorm(int h, int64_t rows, int64_t cols, const void *x, const void *gamma, int64_t gn,
                             const void *beta, int64_t bn, const void *eps, void *y, cudaStream_t s)
{
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    unsigned g = rows > 65535LL * 16 ? 65535u * 16 : (unsigned)rows;
    unsigned t = cols >= 2048 ? 512u : cols >= 512 ? 256u : 128u;
    if (h)
        k_layernorm<<<g, t, 0, s>>>(rows, cols, (const __half *)x, (const __half *)gamma, gn, (const __half *)beta, bn,
                                    (const __half *)eps, (__half *)y);
    else
        k_layernorm<<<g, t, 0, s>>>(rows, cols, (const float *)x, (const float *)gamma, gn, (const float *)beta, bn,
                                    (const float *)eps, (float *)y);
    return done();
}

cudaError_t gn__cu_batchnorm(int h, int ph, int64_t n, int64_t c, int64_t inner, const void *x, const void *scale,
                             const void *offset, const void *mean, const void *var, float eps, void *y,
                             cudaStream_t s)
{
    if (n <= 0) return cudaSuccess;
    if (c < 1) c = 1;
    if (inner < 1) inner = 1;
#define BN(T, P) k_batchnorm<<<grid_for(n), kThreads, 0, s>>>(n, c, inner, (const T *)x, (const P *)scale, \
        (const P *)offset, (const P *)mean, (const P *)var, eps, (T *)y)
    if (h && ph) BN(__half, __half);
    else if (h) BN(__half, float);
    else if (ph) BN(float, __half);
    else BN(float, float);
#undef BN
    return done();
}

cudaError_t gn__cu_pool2d(int h, const gn__cu_pool *p, const void *x, void *y, cudaStream_t s)
{
    int64_t total = p->n * p->c * p->oh * p->ow;
    if (total <= 0) return cudaSuccess;
    if (h) k_pool<<<grid_for(total), kThreads, 0, s>>>(total, *p, (const __half *)x, (__half *)y);
    else k_pool<<<grid_for(total), kThreads, 0, s>>>(total, *p, (const float *)x, (float *)y);
    return done();
}

cudaError_t gn__cu_q8_rows(int64_t m, int64_t kk, int64_t kp, int ta, const float *x, float inv, int8_t *xq,
                          cudaStream_t s)
{
    int64_t n = m * kp;
    if (n <= 0) return cudaSuccess;
    k_q8_rows<<<grid_for(n), kThreads, 0, s>>>(n, m, kk, kp, ta, x, inv, xq);
    return done();
}

cudaError_t gn__cu_im2col8(const gn__cu_conv8 *g, int64_t kp, const float *x, float inv, int8_t *xq, cudaStream_t s)
{
    int64_t n = g->n * g->oh * g->ow * kp;
    if (n <= 0) return cudaSuccess;
    k_im2col8<<<grid_for(n), kThreads, 0, s>>>(n, *g, kp, x, inv, xq);
    return done();
}

cudaError_t gn__cu_gemm8(int64_t m, int64_t n, int64_t kp, const int8_t *a, const int8_t *b, int32_t *acc, cudaStream_t s)
{
    int64_t total = m * n;
    if (total <= 0) return cudaSuccess;
    if (kp % 4) return cudaErrorInvalidValue;
    k_gemm8<<<grid_for(total), kThreads, 0, s>>>(total, n, kp, a, b, acc);
    return done();
}

cudaError_t gn__cu_dequant8(int64_t total, int64_t n_ch, const int32_t *acc, float sx, const float *sw,
                            const float *bias, int act, float alpha, float *y, cudaStream_t s)
{
    if (total <= 0) return cudaSuccess;
    if (n_ch < 1) return cudaErrorInvalidValue;
    k_dequant8<<<grid_for(total), kThreads, 0, s>>>(total, n_ch, acc, sx, sw, bias, act, alpha, y);
    return done();
}

cudaError_t gn__cu_dw8(const gn__cu_conv8 *g, int64_t mult, const float *x, float inv, const int8_t *wq, float sx,
                       const float *sw, const float *bias, int act, float alpha, float *y, cudaStream_t s)
{
    int64_t n = g->n * g->oh * g->ow * g->c * mult;
    if (n <= 0) return cudaSuccess;
    k_dw8<<<grid_for(n), kThreads, 0, s>>>(n, *g, mult, x, inv, wq, sx, sw, bias, act, alpha, y);
    return done();
}

} // extern "C"
