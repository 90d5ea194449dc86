/* Shape functions: the rest of the core ops (space/batch/depth rearrangements,
 * data-format helpers, losses, TopK, Where, Unique, resizing), the audio front
 * ends and the ops the later kernels brought (FFT, segment reductions, NMS,
 * ...). */
#include "ops/shape_fn.h"

/* ---- misc ----------------------------------------------------------------------- */
gn_status gn__sf_one_hot(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *ix = IS(c, 0);
    int64_t axis = attr_i(c, "axis", -1), depth = -1;
    if (scalar_val(c, 1, &depth) && depth < 0) return gn__shape_fail(c, "depth must be non-negative, got %lld", (long long)depth);
    if (ix->rank < 0 || ix->rank + 1 > MAXR) return GN_OK;
    if (axis < -1 || axis > ix->rank) return gn__shape_fail(c, "axis %lld out of range for rank %d", (long long)axis, ix->rank + 1);
    if (axis == -1) axis = ix->rank;
    int64_t d[MAXR];
    int32_t r = 0;
    for (int32_t i = 0; i <= ix->rank; i++) {
        if (i == axis) d[r++] = depth;
        if (i < ix->rank) d[r++] = ix->dims[i];
    }
    return set_dims(c, 0, r, d);
}

static gn_status topk_impl(ctx *c, bool k_known, int64_t k)
{
    const gn__shape *x = IS(c, 0);
    if (k_known && k < 0) return gn__shape_fail(c, "k must be non-negative, got %lld", (long long)k);
    if (x->rank < 0) {
        return GN_OK;
    }
    if (x->rank < 1) return gn__shape_fail(c, "input must have rank >= 1, got a scalar");
    int64_t last = x->dims[x->rank - 1];
    if (k_known && last >= 0 && last < k)
        return gn__shape_fail(c, "input must have at least %lld columns, got %lld", (long long)k, (long long)last);
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank - 1] = k_known ? k : -1;
    GN_TRY(set_dims(c, 0, x->rank, d));
    for (uint32_t o = 1; o < c->n_out; o++) c->out[o].shape = c->out[0].shape;
    return GN_OK;
}

gn_status gn__sf_topk_v2(ctx *c)
{
    NEED(c, 2, 1);
    int64_t k = -1;
    bool kk = scalar_val(c, 1, &k);
    return topk_impl(c, kk, k);
}

gn_status gn__sf_topk(ctx *c)
{
    NEED(c, 1, 1);
    int64_t k = -1;
    bool kk = gn__attr_get_int(c->g, c->node, "k", &k);
    return topk_impl(c, kk, k);
}

gn_status gn__sf_resize(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 4) return gn__shape_fail(c, "images must be 4-dimensional, got %s", sstr(x, s1));
    const gn__partial_value *sz = VAL(c, 1);
    if (sz && sz->n != 2) return gn__shape_fail(c, "size must have 2 elements, got %lld", (long long)sz->n);
    int64_t d[4] = {-1, -1, -1, -1};
    if (x->rank == 4) {
        d[0] = x->dims[0];
        d[3] = x->dims[3];
    }
    int64_t h = 0, w = 0;
    if (vget(sz, 0, &h)) d[1] = h;
    if (vget(sz, 1, &w)) d[2] = w;
    if (d[1] < -1 || d[2] < -1) return gn__shape_fail(c, "size must be non-negative");
    return set_dims(c, 0, 4, d);
}

static gn_status depth_space(ctx *c, bool to_depth)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank < 0) return GN_OK;
    if (x->rank != 4) return gn__shape_fail(c, "input must be 4-dimensional, got %s", sstr(x, s1));
    int64_t b = attr_i(c, "block_size", 0);
    if (b < 2) return gn__shape_fail(c, "block_size must be > 1, got %lld", (long long)b);
    if (b > ((int64_t)1 << 20)) return gn__shape_fail(c, "block_size %lld is too large", (long long)b);
    bool cf = channels_first(c);
    int32_t hi = cf ? 2 : 1, wi = cf ? 3 : 2, ci = cf ? 1 : 3;
    int64_t d[4];
    memcpy(d, x->dims, sizeof d);
    if (to_depth) {
        for (int k = 0; k < 2; k++) {
            int32_t i = k ? wi : hi;
            if (d[i] >= 0 && d[i] % b != 0)
                return gn__shape_fail(c, "dimension %d (size %lld) is not divisible by block_size %lld", i,
                                      (long long)d[i], (long long)b);
            if (d[i] >= 0) d[i] /= b;
        }
        if (d[ci] >= 0 && __builtin_mul_overflow(d[ci], b * b, &d[ci])) return gn__shape_fail(c, "depth overflows");
    } else {
        if (d[ci] >= 0 && d[ci] % (b * b) != 0)
            return gn__shape_fail(c, "depth %lld is not divisible by block_size^2 = %lld", (long long)d[ci],
                                  (long long)(b * b));
        if (d[ci] >= 0) d[ci] /= b * b;
        if ((d[hi] >= 0 && __builtin_mul_overflow(d[hi], b, &d[hi])) ||
            (d[wi] >= 0 && __builtin_mul_overflow(d[wi], b, &d[wi])))
            return gn__shape_fail(c, "dimension overflows");
    }
    return set_dims(c, 0, 4, d);
}

gn_status gn__sf_space_to_depth(ctx *c) { return depth_space(c, true); }
gn_status gn__sf_depth_to_space(ctx *c) { return depth_space(c, false); }

gn_status gn__sf_where(ctx *c)
{
    NEED(c, 1, 1);
    int64_t d[2] = {-1, IS(c, 0)->rank};
    return set_dims(c, 0, 2, d);
}

gn_status gn__sf_unique(ctx *c)
{
    NEED(c, 1, 1);
    GN_TRY(set_vector(c, 0, -1));
    if (c->n_out > 1) c->out[1].shape = *IS(c, 0);
    return GN_OK;
}

gn_status gn__sf_l2_loss(ctx *c) { return set_scalar(c, 0); }

/* backprop: logits and labels broadcast (TensorFlow's kernel broadcasts
 * them, e.g. logits [1,C] against labels [B,C]); loss: its first dim */
gn_status gn__sf_softmax_xent(ctx *c)
{
    NEED(c, 2, 2);
    GN_TRY(broadcast_out(c, 1, 0, 1, false));
    const gn__shape *b = &c->out[1].shape;
    GN_TRY(set_vector(c, 0, b->rank >= 1 ? b->dims[0] : -1));
    return GN_OK;
}

gn_status gn__sf_sparse_softmax_xent(ctx *c)
{
    NEED(c, 2, 2);
    c->out[0].shape = *IS(c, 1);
    c->out[1].shape = *IS(c, 0);
    return GN_OK;
}

/* CTCGreedyDecoder / CTCBeamSearchDecoder (ctc_ops.cc): inputs
 * [max_time, batch, num_classes], sequence_length [batch]; each of the
 * top_paths paths (1 for the greedy decoder) gives indices [?, 2], values [?]
 * and shape [2] (outputs i, top + i, 2*top + i), then log_probability
 * [batch, top]. */
static gn_status ctc_decoder_shape(ctx *c, int64_t top)
{
    if (top < 1 || (int64_t)c->n_out != 3 * top + 1) return GN_OK;
    NEED(c, 2, 3 * top + 1);
    const gn__shape *x = IS(c, 0), *sl = IS(c, 1);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 3) return gn__shape_fail(c, "inputs must be rank 3, got %s", sstr(x, s1));
    if (sl->rank >= 0 && sl->rank != 1) return gn__shape_fail(c, "sequence_length must be rank 1, got %s", sstr(sl, s1));
    int64_t b = x->rank == 3 ? x->dims[1] : -1, bs = sl->rank == 1 ? sl->dims[0] : -1;
    if (b >= 0 && bs >= 0 && b != bs)
        return gn__shape_fail(c, "inputs' batch %lld and sequence_length's %lld differ", (long long)b, (long long)bs);
    if (b < 0) b = bs;
    for (int64_t i = 0; i < top; i++) {
        GN_TRY(set_dims(c, (uint32_t)i, 2, (int64_t[]){-1, 2}));
        GN_TRY(set_vector(c, (uint32_t)(top + i), -1));
        GN_TRY(set_vector(c, (uint32_t)(2 * top + i), 2));
    }
    return set_dims(c, (uint32_t)(3 * top), 2, (int64_t[]){b, top});
}

gn_status gn__sf_ctc_greedy_decoder(ctx *c) { return ctc_decoder_shape(c, 1); }

gn_status gn__sf_ctc_beam_search_decoder(ctx *c) { return ctc_decoder_shape(c, attr_i(c, "top_paths", 0)); }

gn_status gn__sf_concat_offset(ctx *c)
{
    for (uint32_t k = 0; k < c->n_out && k + 1 < c->n_in; k++) c->out[k].shape = *IS(c, k + 1);
    return GN_OK;
}

/* DataFormatVecPermute / DataFormatDimMap: values follow the formats */
static bool format_attr(const ctx *c, const char *key, const char *def, char *buf)
{
    const char *s;
    size_t n;
    if (!attr_s(c, key, &s, &n)) {
        s = def;
        n = strlen(def);
    }
    if (n == 0 || n > 8) return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

gn_status gn__sf_data_format_vec_permute(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    const gn__partial_value *v = VAL(c, 0);
    char src[9], dst[9];
    if (!v || v->shape.rank != 1 || !format_attr(c, "src_format", "NHWC", src) || !format_attr(c, "dst_format", "NCHW", dst))
        return GN_OK;
    size_t n = strlen(src);
    if (strlen(dst) != n) return GN_OK;
    char s2[9], d2[9];
    if ((size_t)v->n == n - 2) {
        /* spatial dims only */
        size_t k = 0, m = 0;
        for (size_t i = 0; i < n; i++)
            if (src[i] != 'N' && src[i] != 'C') s2[k++] = src[i];
        for (size_t i = 0; i < n; i++)
            if (dst[i] != 'N' && dst[i] != 'C') d2[m++] = dst[i];
        s2[k] = d2[m] = '\0';
    } else if ((size_t)v->n == n) {
        memcpy(s2, src, n + 1);
        memcpy(d2, dst, n + 1);
    } else {
        return GN_OK;
    }
    gn__partial_value *o = val_new(c, v->n, false);
    if (!o) return oom(c);
    for (int64_t j = 0; j < v->n; j++) {
        const char *p = strchr(s2, d2[j]);
        int64_t e = 0;
        if (p && vget(v, p - s2, &e)) vset(o, j, e);
    }
    c->out[0].value = o;
    return GN_OK;
}

gn_status gn__sf_data_format_dim_map(ctx *c)
{
    NEED(c, 1, 1);
    c->out[0].shape = *IS(c, 0);
    const gn__partial_value *v = VAL(c, 0);
    char src[9], dst[9];
    if (!v || !format_attr(c, "src_format", "NHWC", src) || !format_attr(c, "dst_format", "NCHW", dst)) return GN_OK;
    int64_t n = (int64_t)strlen(src);
    if ((int64_t)strlen(dst) != n) return GN_OK;
    gn__partial_value *o = val_new(c, v->n, v->shape.rank == 0);
    if (!o) return oom(c);
    for (int64_t j = 0; j < v->n; j++) {
        int64_t e = 0;
        if (!vget(v, j, &e) || e < -n || e >= n) continue;
        if (e < 0) e += n;
        const char *p = strchr(dst, src[e]);
        if (p) vset(o, j, p - dst);
    }
    c->out[0].value = o;
    return GN_OK;
}

/* SpaceToBatchND (paddings) and BatchToSpaceND (crops): the dilated
 * convolution idiom; block shape and pads from inputs 1 and 2, or for the v1
 * ops from block_size and input 1 */
static gn_status space_batch(ctx *c, bool to_batch, bool v1)
{
    NEED(c, v1 ? 2 : 3, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *bv = v1 ? NULL : VAL(c, 1), *pv = VAL(c, v1 ? 1 : 2);
    int64_t m = -1, bs[MAXR];
    if (v1) {
        m = 2;
        bs[0] = bs[1] = attr_i(c, "block_size", -1);
    } else if (bv && bv->n <= MAXR) {
        m = bv->n;
        for (int64_t i = 0; i < m; i++)
            if (!vget(bv, i, &bs[i])) bs[i] = -1;
    } else if (IS(c, 1)->rank == 1) {
        m = IS(c, 1)->dims[0];
        for (int64_t i = 0; i < m && i < MAXR; i++) bs[i] = -1;
    }
    if (x->rank < 0) return GN_OK;
    if (m < 0 || m + 1 > x->rank) {
        int64_t d[MAXR];
        for (int32_t i = 0; i < x->rank; i++) d[i] = m < 0 ? -1 : i > m ? x->dims[i] : -1;
        return set_dims(c, 0, x->rank, d);
    }
    int64_t d[MAXR];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    int64_t prod = 1;
    for (int64_t i = 0; i < m; i++) {
        if (bs[i] == 0 || bs[i] < -1) return gn__shape_fail(c, "block shape entries must be positive, got %lld", (long long)bs[i]);
        if (bs[i] < 0 || prod < 0) prod = -1;
        else if (__builtin_mul_overflow(prod, bs[i], &prod)) return gn__shape_fail(c, "block shape overflows");
        int64_t a = 0, b = 0;
        bool pk = pv && pv->n == 2 * m && vget(pv, 2 * i, &a) && vget(pv, 2 * i + 1, &b);
        int64_t in = x->dims[i + 1];
        if (!pk || in < 0 || bs[i] < 0) {
            d[i + 1] = -1;
            continue;
        }
        if (a < 0 || b < 0) return gn__shape_fail(c, "%s must be non-negative", to_batch ? "paddings" : "crops");
        if (to_batch) {
            int64_t p;
            if (__builtin_add_overflow(in, a, &p) || __builtin_add_overflow(p, b, &p))
                return gn__shape_fail(c, "padded dimension overflows");
            if (p % bs[i] != 0)
                return gn__shape_fail(c, "padded dimension %lld (size %lld) is not divisible by block size %lld",
                                      (long long)(i + 1), (long long)p, (long long)bs[i]);
            d[i + 1] = p / bs[i];
        } else {
            int64_t p;
            if (__builtin_mul_overflow(in, bs[i], &p) || __builtin_sub_overflow(p, a, &p) ||
                __builtin_sub_overflow(p, b, &p))
                return gn__shape_fail(c, "dimension overflows");
            if (p < 0) return gn__shape_fail(c, "crops are larger than dimension %lld", (long long)(i + 1));
            d[i + 1] = p;
        }
    }
    if (x->dims[0] >= 0 && prod > 0) {
        if (to_batch) {
            if (__builtin_mul_overflow(x->dims[0], prod, &d[0])) return gn__shape_fail(c, "batch overflows");
        } else {
            if (x->dims[0] % prod != 0)
                return gn__shape_fail(c, "batch %lld is not divisible by the block size product %lld",
                                      (long long)x->dims[0], (long long)prod);
            d[0] = x->dims[0] / prod;
        }
    } else {
        d[0] = -1;
    }
    return set_dims(c, 0, x->rank, d);
}

gn_status gn__sf_space_to_batch_nd(ctx *c) { return space_batch(c, true, false); }
gn_status gn__sf_batch_to_space_nd(ctx *c) { return space_batch(c, false, false); }
gn_status gn__sf_space_to_batch(ctx *c) { return space_batch(c, true, true); }
gn_status gn__sf_batch_to_space(ctx *c) { return space_batch(c, false, true); }

/* output 0 has input i's shape */
static gn_status like_input(ctx *c, uint32_t i)
{
    NEED(c, i + 1, 1);
    c->out[0].shape = *IS(c, i);
    return GN_OK;
}
gn_status gn__sf_like_input1(ctx *c) { return like_input(c, 1); }

gn_status gn__sf_fused_batch_norm_grad(ctx *c)
{
    NEED(c, 3, 1);
    int64_t d[MAXR];
    int32_t r;
    if (merge_dims(IS(c, 0), IS(c, 1), d, &r)) {
        char s1[SB], s2[SB];
        return gn__shape_fail(c, "y_backprop %s and x %s must have the same shape", sstr(IS(c, 0), s1), sstr(IS(c, 1), s2));
    }
    GN_TRY(set_dims_like(c, 0, r, d, IS(c, 1)));
    const gn__shape *sc = IS(c, 2);
    int64_t ch = sc->rank == 1 ? sc->dims[0] : -1;
    if (ch < 0 && r >= 2) ch = d[channels_first(c) ? 1 : r - 1];
    for (uint32_t k = 1; k < c->n_out && k < 3; k++) GN_TRY(set_vector(c, k, ch));
    for (uint32_t k = 3; k < c->n_out && k < 5; k++) GN_TRY(set_vector(c, k, 0));
    return GN_OK;
}

/* ---- audio (the keyword-spotting front ends) ------------------------------------- */
gn_status gn__sf_decode_wav(ctx *c)
{
    NEED(c, 1, 1);
    int64_t ch = attr_i(c, "desired_channels", -1), n = attr_i(c, "desired_samples", -1);
    int64_t d[2] = {n > 0 ? n : -1, ch > 0 ? ch : -1};
    GN_TRY(set_dims(c, 0, 2, d));
    if (c->n_out > 1) set_scalar(c, 1);
    return GN_OK;
}

gn_status gn__sf_audio_spectrogram(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 2) return gn__shape_fail(c, "input must be 2-dimensional, got %s", sstr(x, s1));
    int64_t w = attr_i(c, "window_size", 0), st = attr_i(c, "stride", 0);
    if (w <= 0 || st <= 0 || w > ((int64_t)1 << 40)) return GN_OK;
    int64_t len = x->rank == 2 ? x->dims[0] : -1, frames = -1;
    if (len >= 0) frames = len < w ? 0 : 1 + (len - w) / st;
    int64_t fft = 1;
    while (fft < w) fft <<= 1;
    int64_t d[3] = {x->rank == 2 ? x->dims[1] : -1, frames, 1 + fft / 2};
    return set_dims(c, 0, 3, d);
}

gn_status gn__sf_mfcc(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 3) return gn__shape_fail(c, "spectrogram must be 3-dimensional, got %s", sstr(x, s1));
    int64_t d[3] = {x->rank == 3 ? x->dims[0] : -1, x->rank == 3 ? x->dims[1] : -1,
                    attr_i(c, "dct_coefficient_count", 13)};
    return set_dims(c, 0, 3, d);
}

/* ---- ops the later kernels brought -------------------------------------------- */
/* NonMaxSuppressionV3: [?] int32. V4: [max_output_size] when padded (else
 * [?]) and valid_outputs []. V5: indices and scores [?] (padded:
 * [max_output_size]), valid_outputs []. */
gn_status gn__sf_nms(ctx *c)
{
    NEED(c, 3, 1);
    int64_t m = -1;
    if (attr_b(c, "pad_to_max_output_size", false)) (void)scalar_val(c, 2, &m);
    GN_TRY(set_vector(c, 0, m));
    if (c->n_out == 3) {   /* V5: selected_scores too */
        GN_TRY(set_vector(c, 1, m));
        return set_scalar(c, 2);
    }
    return c->n_out == 2 ? set_scalar(c, 1) : GN_OK;
}

/* CombinedNonMaxSuppression: boxes [batch, d, 4], scores and classes
 * [batch, d], valid_detections [batch]; d is max_total_size, or with
 * pad_per_class min(max_total_size, max_output_size_per_class *
 * num_classes). */
gn_status gn__sf_combined_nms(ctx *c)
{
    NEED(c, 6, 4);
    const gn__shape *sc = IS(c, 1);
    int64_t batch = sc->rank == 3 ? sc->dims[0] : -1, classes = sc->rank == 3 ? sc->dims[2] : -1, per = -1, total = -1;
    (void)scalar_val(c, 2, &per);
    (void)scalar_val(c, 3, &total);
    int64_t d = total;
    if (attr_b(c, "pad_per_class", false))
        d = total >= 0 && per >= 0 && classes >= 0 ? (per * classes < total ? per * classes : total) : -1;
    GN_TRY(set_dims(c, 0, 3, (int64_t[3]){batch, d, 4}));
    GN_TRY(set_dims(c, 1, 2, (int64_t[2]){batch, d}));
    GN_TRY(set_dims(c, 2, 2, (int64_t[2]){batch, d}));
    return set_vector(c, 3, batch);
}

/* CropAndResize: [num_boxes, crop_height, crop_width, depth]. */
gn_status gn__sf_crop_and_resize(ctx *c)
{
    NEED(c, 4, 1);
    const gn__shape *im = IS(c, 0), *bx = IS(c, 1);
    int64_t d[4] = {-1, -1, -1, -1}, v = 0;
    if (bx->rank == 2) d[0] = bx->dims[0];
    if (im->rank == 4) d[3] = im->dims[3];
    const gn__partial_value *sz = VAL(c, 3);
    if (vget(sz, 0, &v)) d[1] = v;
    if (vget(sz, 1, &v)) d[2] = v;
    return set_dims(c, 0, 4, d);
}

/* Segment reductions: [num_segments (unsorted: input 2; sorted: ?)] +
 * data's dims past segment_ids' rank. */
gn_status gn__sf_segment(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *ids = IS(c, 1);
    if (x->rank < 0 || ids->rank < 0 || ids->rank > x->rank) return set_dims(c, 0, -1, NULL);
    int64_t d[MAXR], n = -1;
    if (c->n_in > 2) (void)scalar_val(c, 2, &n);
    int32_t r = 1 + x->rank - ids->rank;
    d[0] = n;
    for (int32_t i = 1; i < r; i++) d[i] = x->dims[ids->rank + i - 1];
    return set_dims(c, 0, r, d);
}

/* UniqueV2 over axis a: y is x with dim a unknown, idx [x.dim(a)]; an
 * empty axis is Unique of a vector. */
gn_status gn__sf_unique_v2(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0);
    const gn__partial_value *ax = VAL(c, 1);
    int64_t a = 0;
    if (ax && ax->n == 0) return gn__sf_unique(c);
    if (x->rank < 0 || !vget(ax, 0, &a)) {
        GN_TRY(set_dims(c, 0, -1, NULL));
        return set_vector(c, 1, -1);
    }
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank) return gn__shape_fail(c, "axis %lld is out of range for rank %d", (long long)a, x->rank);
    int64_t d[MAXR];
    for (int32_t i = 0; i < x->rank; i++) d[i] = i == a ? -1 : x->dims[i];
    GN_TRY(set_dims(c, 0, x->rank, d));
    return set_vector(c, 1, x->dims[a]);
}

/* Bincount: [size]. DenseBincount: [size], or [batch, size] for a matrix. */
gn_status gn__sf_bincount(ctx *c)
{
    NEED(c, 2, 1);
    int64_t size = -1;
    (void)scalar_val(c, 1, &size);
    const gn__shape *x = IS(c, 0);
    if (x->rank == 2) return set_dims(c, 0, 2, (int64_t[2]){x->dims[0], size});
    return set_vector(c, 0, size);
}

/* FFT / IFFT: the input's shape; RFFT*: the innermost dims become
 * fft_length (the last one fft_length / 2 + 1); IRFFT*: fft_length. */
gn_status gn__sf_fft(ctx *c)
{
    NEED(c, 1, 1);
    const char *op = gn__node_op(c->g, c->node);
    const gn__shape *x = IS(c, 0);
    int32_t k = strstr(op, "3D") ? 3 : strstr(op, "2D") ? 2 : 1;
    bool real = op[0] == 'R', inverse_real = op[0] == 'I' && op[1] == 'R';
    if (!real && !inverse_real) {
        set_shape(c, 0, x);
        return GN_OK;
    }
    if (x->rank < 0 || x->rank < k || x->rank > MAXR) return set_dims(c, 0, -1, NULL);
    int64_t d[MAXR];
    for (int32_t i = 0; i < x->rank; i++) d[i] = x->dims[i];
    const gn__partial_value *len = VAL(c, 1);
    for (int32_t j = 0; j < k; j++) {
        int64_t n = 0, *dim = &d[x->rank - k + j];
        if (!vget(len, j, &n)) *dim = -1;
        else *dim = real && j == k - 1 ? (n ? n / 2 + 1 : 0) : n;
    }
    return set_dims(c, 0, x->rank, d);
}

/* Ops without outputs (Assert, PrintV2): nothing to say. */
gn_status gn__sf_none(ctx *c)
{
    (void)c;
    return GN_OK;
}

gn_status gn__sf_string_scalar(ctx *c)
{
    return set_scalar(c, 0);
}

/* StringSplitV2(input [N], sep []) -> indices [?, 2], values [?], shape [2] (TensorFlow's string_ops.cc) */
gn_status gn__sf_string_split_v2(ctx *c)
{
    const int64_t ix[2] = {-1, 2};
    GN_TRY(set_dims(c, 0, 2, ix));
    GN_TRY(set_vector(c, 1, -1));
    return set_vector(c, 2, 2);
}
