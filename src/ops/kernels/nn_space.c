/* SpaceToBatchND and BatchToSpaceND (tensorflow/core/kernels/spacetobatch_op.cc,
 * batchtospace_op.cc, spacetobatch_functor.h): the block rearrangement that
 * tf.nn.atrous_conv2d and with_space_to_batch wrap around a convolution to
 * dilate it.
 *
 * SpaceToBatchND(x [B, s1..sM, rest..], block [M], paddings [M, 2]): x is
 * zero-padded on the M spatial dims, each padded dim split into (p_i / b_i,
 * b_i), and the block offsets moved in front of the batch: output batch
 * (o_1 * b_2 * .. * b_M + .. + o_M) * B + n holds, at (i_1, .., i_M), the padded
 * element (n, i_1 * b_1 + o_1, .., i_M * b_M + o_M). BatchToSpaceND is the
 * inverse, followed by cropping crops[i][0] from the start and crops[i][1] from
 * the end of each spatial dim. Any dtype with a fixed element size; the inner
 * (rest) block is copied whole. SpaceToBatch and BatchToSpace (v1) are the
 * same with M = 2 and block_shape [block_size, block_size]. */
#include "ops/op_fns.h"

#include <stdio.h>
#include <string.h>

#include "graph/tensor.h"
#include "opdef/registry.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

/* The M-vector block_shape and the [M, 2] paddings/crops as int64. The v1
 * ops (SpaceToBatch, BatchToSpace) take a 4-D input, the block_size attr for
 * both spatial dims (M = 2) and the paddings/crops as input 1. */
static gn_status read_params(gn__kctx *c, const char *pname, bool v1, int64_t *blk, int64_t *pc, int32_t *m_out)
{
    if (c->n_in != (v1 ? 2u : 3u)) return gn__kctx_fail(c, GN_ERR_GRAPH, "expected %u inputs, got %u", v1 ? 2u : 3u, c->n_in);
    const gn__tensor *x = &c->in[0], *p = &c->in[v1 ? 1 : 2];
    int64_t m = 2;
    if (v1) {
        int64_t bs = 0;
        if (!gn__attr_get_int(c->g, c->node, "block_size", &bs))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'block_size' is missing");
        if (bs <= 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Block size should be > 1: %lld", (long long)bs);
        if (x->rank != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "input rank should be 4 instead of %d", x->rank);
        if (p->dtype != DT_INT32 && p->dtype != DT_INT64)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be int32 or int64", pname);
        blk[0] = blk[1] = bs;
    } else {
        const gn__tensor *b = &c->in[1];
        if (b->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "block_shape must be a vector, got rank %d", b->rank);
        m = b->dims[0];
        if (m < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "block_shape must have at least one element");
        if (m + 1 > x->rank)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input rank should be >= %lld instead of %d", (long long)(m + 1), x->rank);
        if ((b->dtype != DT_INT32 && b->dtype != DT_INT64) || (p->dtype != DT_INT32 && p->dtype != DT_INT64))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "block_shape and %s must be int32 or int64", pname);
        for (int64_t i = 0; i < m; i++) {
            blk[i] = b->dtype == DT_INT32 ? ((const int32_t *)b->data)[i] : ((const int64_t *)b->data)[i];
            if (blk[i] < 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "block_shape must be positive");
        }
    }
    if (p->rank != 2 || p->dims[0] != m || p->dims[1] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s should have shape [%lld, 2]", pname, (long long)m);
    for (int64_t i = 0; i < 2 * m; i++) {
        pc[i] = p->dtype == DT_INT32 ? ((const int32_t *)p->data)[i] : ((const int64_t *)p->data)[i];
        if (pc[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be non-negative", pname);
    }
    if (gn__dtype_size(x->dtype) == 0)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
    *m_out = (int32_t)m;
    return GN_OK;
}

/* Copies between the batch-major tensor (bt: [B * prod(block), q_1..q_M, rest])
 * and the space tensor (sp: [B, s_1..s_M, rest]); element (n, i.., o..) of bt
 * maps to space position i_k * b_k + o_k - off_k, skipped when outside
 * [0, s_k). to_batch: space -> batch (zeros where outside), else batch -> space. */
static void shuffle(bool to_batch, const uint8_t *src, uint8_t *dst, int32_t m, int64_t batch, const int64_t *blk,
                    const int64_t *q, const int64_t *s, const int64_t *off, size_t inner)
{
    int64_t nblk = 1, nq = 1, ns = 1;
    for (int32_t k = 0; k < m; k++) {
        nblk *= blk[k];
        nq *= q[k];
        ns *= s[k];
    }
    int64_t o[GN__MAX_DIMS], i[GN__MAX_DIMS];
    for (int64_t ob = 0; ob < nblk; ob++) {
        int64_t t = ob;
        for (int32_t k = m - 1; k >= 0; k--) {
            o[k] = t % blk[k];
            t /= blk[k];
        }
        for (int64_t n = 0; n < batch; n++) {
            int64_t bt_base = (ob * batch + n) * nq;
            for (int64_t iq = 0; iq < nq; iq++) {
                int64_t u = iq, sp = 0;
                bool inside = true;
                for (int32_t k = m - 1; k >= 0; k--) {
                    i[k] = u % q[k];
                    u /= q[k];
                }
                for (int32_t k = 0; k < m; k++) {
                    int64_t pos = i[k] * blk[k] + o[k] - off[k];
                    if (pos < 0 || pos >= s[k]) inside = false;
                    sp = sp * s[k] + (inside ? pos : 0);
                }
                uint8_t *bt_el = (to_batch ? dst : (uint8_t *)(uintptr_t)src) + (size_t)(bt_base + iq) * inner;
                if (!inside) {
                    if (to_batch) memset(bt_el, 0, inner);
                    continue;
                }
                size_t sp_off = (size_t)(n * ns + sp) * inner;
                if (to_batch) memcpy(bt_el, src + sp_off, inner);
                else memcpy(dst + sp_off, bt_el, inner);
            }
        }
    }
}

static gn_status space_to_batch(gn__kctx *c, bool v1)
{
    int64_t blk[GN__MAX_DIMS], pad[2 * GN__MAX_DIMS];
    int32_t m = 0;
    GN_TRY(read_params(c, "paddings", v1, blk, pad, &m));
    const gn__tensor *x = &c->in[0];
    int64_t od[GN__MAX_DIMS], q[GN__MAX_DIMS], s[GN__MAX_DIMS], off[GN__MAX_DIMS], nblk = 1;
    size_t inner = gn__dtype_size(x->dtype);
    for (int32_t k = 0; k < m; k++) {
        int64_t padded = x->dims[k + 1] + pad[2 * k] + pad[2 * k + 1];
        if (padded % blk[k])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "padded_shape[%d]=%lld is not divisible by block_shape[%d]=%lld", k,
                                 (long long)padded, k, (long long)blk[k]);
        q[k] = padded / blk[k];
        s[k] = x->dims[k + 1];
        off[k] = pad[2 * k];
        od[k + 1] = q[k];
        nblk *= blk[k];
    }
    od[0] = x->dims[0] * nblk;
    for (int32_t d = m + 1; d < x->rank; d++) {
        od[d] = x->dims[d];
        inner *= (size_t)x->dims[d];
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, od, &o));
    if (gn__tensor_numel(o) > 0) shuffle(true, x->data, o->data, m, x->dims[0], blk, q, s, off, inner);
    return GN_OK;
}

static gn_status batch_to_space(gn__kctx *c, bool v1)
{
    int64_t blk[GN__MAX_DIMS], crop[2 * GN__MAX_DIMS];
    int32_t m = 0;
    GN_TRY(read_params(c, "crops", v1, blk, crop, &m));
    const gn__tensor *x = &c->in[0];
    int64_t od[GN__MAX_DIMS], q[GN__MAX_DIMS], s[GN__MAX_DIMS], off[GN__MAX_DIMS], nblk = 1;
    size_t inner = gn__dtype_size(x->dtype);
    for (int32_t k = 0; k < m; k++) nblk *= blk[k];
    if (x->dims[0] % nblk)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input batch dimension (%lld) is not divisible by product of block sizes (%lld)",
                             (long long)x->dims[0], (long long)nblk);
    for (int32_t k = 0; k < m; k++) {
        int64_t full = x->dims[k + 1] * blk[k], kept = full - crop[2 * k] - crop[2 * k + 1];
        if (kept < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "crops must be non-negative and not exceed the dimension: %lld - %lld",
                                 (long long)full, (long long)(crop[2 * k] + crop[2 * k + 1]));
        q[k] = x->dims[k + 1];
        s[k] = kept;
        off[k] = crop[2 * k];
        od[k + 1] = kept;
    }
    int64_t batch = x->dims[0] / nblk;
    od[0] = batch;
    for (int32_t d = m + 1; d < x->rank; d++) {
        od[d] = x->dims[d];
        inner *= (size_t)x->dims[d];
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, x->dtype, x->rank, od, &o));
    if (gn__tensor_numel(o) > 0 && gn__tensor_numel(x) > 0)
        shuffle(false, x->data, o->data, m, batch, blk, q, s, off, inner);
    return GN_OK;
}

gn_status gn__nn_k_space_to_batch_nd(gn__kctx *c) { return space_to_batch(c, false); }
gn_status gn__nn_k_batch_to_space_nd(gn__kctx *c) { return batch_to_space(c, false); }
gn_status gn__nn_k_space_to_batch(gn__kctx *c) { return space_to_batch(c, true); }
gn_status gn__nn_k_batch_to_space(gn__kctx *c) { return batch_to_space(c, true); }
