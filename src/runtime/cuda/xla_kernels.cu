/* CUDA kernels of the XLA data-movement ops (see cuda.h): XlaDynamicSlice,
 * XlaDynamicUpdateSlice, XlaGather and XlaPad, with XLA's semantics as the
 * CPU kernels (src/ops/kernels/xla.c) have them: start indices are read on
 * the device (they may be computed by the graph) and clamped into the
 * operand; XlaPad takes negative and interior padding and a padding value on
 * the device. Element types by size (1, 2, 4, 8 bytes). */
#include <stdint.h>

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

#define GRID_LOOP(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
                             i += (int64_t)blockDim.x * gridDim.x)

__device__ __forceinline__ int64_t ld_index(const void *p, int idx64, int64_t i)
{
    return idx64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

__device__ __forceinline__ int64_t clamp_start(int64_t v, int64_t dim, int64_t size)
{
    int64_t hi = dim - size;
    return v < 0 ? 0 : v > hi ? hi : v;
}

/* Box of `box` dims at clamped starts in an operand of `dims`: the copy in
 * either direction (to_box: operand -> box, else box -> operand). */
struct box_args {
    int32_t rank;
    int64_t dims[GN__CU_MAX_DIMS], box[GN__CU_MAX_DIMS];
};

template <typename E>
__global__ void k_box(int64_t n, box_args a, int idx64, const void *starts, int to_box, const E *src, E *dst)
{
    int64_t st[GN__CU_MAX_DIMS], stride[GN__CU_MAX_DIMS], m = 1;
    for (int d = a.rank - 1; d >= 0; d--) {
        st[d] = clamp_start(ld_index(starts, idx64, d), a.dims[d], a.box[d]);
        stride[d] = m;
        m *= a.dims[d];
    }
    GRID_LOOP(i, n)
    {
        int64_t r = i, off = 0;
        for (int d = a.rank - 1; d >= 0; d--) {
            int64_t q = r % a.box[d];
            r /= a.box[d];
            off += (st[d] + q) * stride[d];
        }
        if (to_box) dst[i] = src[off];
        else dst[off] = src[i];
    }
}

template <typename E> __global__ void k_xpad(int64_t n, gn__cu_xpad p, const E *value, const E *x, E *y)
{
    E v = *value;
    GRID_LOOP(i, n)
    {
        int64_t r = i, off = 0, m = 1;
        bool inside = true;
        for (int d = p.rank - 1; d >= 0; d--) {
            int64_t o = r % p.out_dims[d];
            r /= p.out_dims[d];
            int64_t q = o - p.lo[d], step = p.interior[d] + 1;
            if (q < 0 || q % step) inside = false;
            else if (q / step >= p.in_dims[d]) inside = false;
            else off += (q / step) * m;
            m *= p.in_dims[d];
        }
        y[i] = inside ? x[off] : v;
    }
}

template <typename E>
__global__ void k_xgather(int64_t n, gn__cu_xgather g, int idx64, const E *x, const void *idx, E *y)
{
    GRID_LOOP(i, n)
    {
        int64_t r = i, ib = 0, pos[GN__CU_MAX_DIMS];
        for (int d = 0; d < g.op_rank; d++) pos[d] = 0;
        for (int d = g.out_rank - 1; d >= 0; d--) {
            int64_t q = r % g.out_dims[d];
            r /= g.out_dims[d];
            int32_t m = g.out_map[d];
            if (m >= 0) pos[m] = q;
            else ib += q * g.idx_stride[-1 - m];
        }
        int64_t off = 0;
        for (int j = 0; j < g.n_index; j++) {
            int32_t d = g.start_map[j];
            pos[d] += clamp_start(ld_index(idx, idx64, ib + j * g.ivd_stride), g.op_dims[d], g.slice[d]);
        }
        for (int d = 0; d < g.op_rank; d++) off += pos[d] * g.op_stride[d];
        y[i] = x[off];
    }
}

cudaError_t done(void) { return cudaGetLastError(); }

}  // namespace

#define BY_SIZE(esize, LAUNCH)                                                                                         \
    switch (esize) {                                                                                                   \
    case 1: LAUNCH(uint8_t); break;                                                                                    \
    case 2: LAUNCH(uint16_t); break;                                                                                   \
    case 4: LAUNCH(uint32_t); break;                                                                                   \
    case 8: LAUNCH(uint64_t); break;                                                                                   \
    default: return cudaErrorInvalidValue;                                                                             \
    }

static cudaError_t box_copy(int esize, int idx64, int32_t rank, const int64_t *dims, const int64_t *box,
                            const void *starts, int to_box, const void *src, void *dst, cudaStream_t s)
{
    if (rank < 0 || rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    box_args a;
    a.rank = rank;
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        if (box[d] > dims[d]) return cudaErrorInvalidValue;
        a.dims[d] = dims[d];
        a.box[d] = box[d];
        n *= box[d];
    }
    if (n <= 0) return cudaSuccess;
#define LAUNCH(E)                                                                                                      \
    k_box<E><<<grid_for(n), kThreads, 0, s>>>(n, a, idx64, starts, to_box, (const E *)src, (E *)dst)
    BY_SIZE(esize, LAUNCH)
#undef LAUNCH
    return done();
}

cudaError_t gn__cu_xla_dynamic_slice(int esize, int idx64, int32_t rank, const int64_t *dims, const int64_t *sizes,
                                     const void *starts, const void *x, void *y, cudaStream_t s)
{
    return box_copy(esize, idx64, rank, dims, sizes, starts, 1, x, y, s);
}

cudaError_t gn__cu_xla_dynamic_update_slice(int esize, int idx64, int32_t rank, const int64_t *dims,
                                            const int64_t *update_dims, const void *starts, const void *x,
                                            const void *update, void *y, cudaStream_t s)
{
    int64_t total = 1;
    for (int d = 0; d < rank; d++) total *= dims[d];
    if (total > 0 && x != y) {
        cudaError_t e = cudaMemcpyAsync(y, x, (size_t)total * (size_t)esize, cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess) return e;
    }
    return box_copy(esize, idx64, rank, dims, update_dims, starts, 0, update, y, s);
}

cudaError_t gn__cu_xla_pad(int esize, const gn__cu_xpad *p, const void *value, const void *x, void *y,
                           cudaStream_t s)
{
    if (p->rank < 0 || p->rank > GN__CU_MAX_DIMS) return cudaErrorInvalidValue;
    int64_t n = 1;
    for (int d = 0; d < p->rank; d++) n *= p->out_dims[d];
    if (n <= 0) return cudaSuccess;
#define LAUNCH(E) k_xpad<E><<<grid_for(n), kThreads, 0, s>>>(n, *p, (const E *)value, (const E *)x, (E *)y)
    BY_SIZE(esize, LAUNCH)
#undef LAUNCH
    return done();
}

cudaError_t gn__cu_xla_gather(int esize, int idx64, const gn__cu_xgather *g, const void *x, const void *idx, void *y,
                              cudaStream_t s)
{
    if (g->out_rank < 0 || g->out_rank > GN__CU_MAX_DIMS || g->op_rank < 0 || g->op_rank > GN__CU_MAX_DIMS ||
        g->n_index < 0 || g->n_index > GN__CU_MAX_DIMS)
        return cudaErrorInvalidValue;
    int64_t n = 1;
    for (int d = 0; d < g->out_rank; d++) n *= g->out_dims[d];
    if (n <= 0) return cudaSuccess;
#define LAUNCH(E) k_xgather<E><<<grid_for(n), kThreads, 0, s>>>(n, *g, idx64, (const E *)x, idx, (E *)y)
    BY_SIZE(esize, LAUNCH)
#undef LAUNCH
    return done();
}
