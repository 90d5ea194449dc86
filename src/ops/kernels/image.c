/* CPU kernels: image ops of exported detection and image models:
 * NonMaxSuppressionV3/V4/V5, CombinedNonMaxSuppression, CropAndResize,
 * ResizeBicubic, ResizeArea.
 *
 * After tensorflow/core/kernels/image/{non_max_suppression_op,
 * crop_and_resize_op, resize_bicubic_op, resize_area_op}.cc and
 * image_resizer_state.h: the same arithmetic in the same precision and order
 * (selection by score, ties by lower index; IoU in float from boxes given as
 * any two opposite corners; soft-NMS weights in the boxes' dtype; crop and
 * resize coordinates in float; the bicubic coefficient table; area sums in
 * float), so results match TensorFlow's CPU kernels. Differences: a NaN crop
 * coordinate gives extrapolation_value (TensorFlow's behaviour there is
 * undefined), and every index is clamped to the image so that no input reads
 * outside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"
#include "ops/kernels/image.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_BFLOAT16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define DT_INT8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_UINT8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_INT16 TENSORFLOW__DATA_TYPE__DT_INT16
#define DT_UINT16 TENSORFLOW__DATA_TYPE__DT_UINT16
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64

/* ---- shared helpers ------------------------------------------------------------------------- */
static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

#define SHAPE_STR 160

/* "[2,3]" (TensorShape::DebugString). */
static const char *shape_str(char *buf, const gn__tensor *t)
{
    size_t o = 0;
    buf[o++] = '[';
    for (int32_t d = 0; d < t->rank && o + 24 < SHAPE_STR; d++)
        o += (size_t)snprintf(buf + o, SHAPE_STR - o, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    buf[o++] = ']';
    buf[o] = 0;
    return buf;
}

/* Element i of a real tensor as float (static_cast<float>, bfloat16 by its bits). */
static float elem_f(const gn__tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_FLOAT: return ((const float *)t->data)[i];
    case DT_DOUBLE: return (float)((const double *)t->data)[i];
    case DT_HALF: return (float)((const gn__f16 *)t->data)[i];
    case DT_INT8: return (float)((const int8_t *)t->data)[i];
    case DT_UINT8: return (float)((const uint8_t *)t->data)[i];
    case DT_INT16: return (float)((const int16_t *)t->data)[i];
    case DT_UINT16: return (float)((const uint16_t *)t->data)[i];
    case DT_INT32: return (float)((const int32_t *)t->data)[i];
    case DT_INT64: return (float)((const int64_t *)t->data)[i];
    case DT_BFLOAT16: {
        uint32_t u = (uint32_t)((const uint16_t *)t->data)[i] << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    default: return 0.0f;
    }
}

static bool real_image_dtype(int32_t dt)
{
    switch (dt) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_INT8:
    case DT_UINT8:
    case DT_INT16:
    case DT_UINT16:
    case DT_INT32:
    case DT_INT64: return true;
    default: return false;
    }
}

/* The whole tensor as float; *owned is the buffer to free (NULL when t is float). */
static gn_status as_float(gn__kctx *c, const gn__tensor *t, const float **out, float **owned)
{
    *owned = NULL;
    if (t->dtype == DT_FLOAT) {
        *out = t->data;
        return GN_OK;
    }
    int64_t n = gn__tensor_numel(t);
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) p[i] = elem_f(t, i);
    *out = p;
    *owned = p;
    return GN_OK;
}

static int64_t clamp64(int64_t v, int64_t limit)
{
    return v < 0 ? 0 : v > limit - 1 ? limit - 1 : v;
}

/* ---- NonMaxSuppressionV3 / V4 / V5 ---------------------------------------------------------- */
typedef struct {
    int32_t index;
    float score;           /* in the precision of T (float16 values are exact in float) */
    int32_t begin;         /* suppress_begin_index */
} nms_cand;

/* a ranks below b: lower score, or the same score and a higher index */
static bool cand_below(const nms_cand *a, const nms_cand *b)
{
    return (a->score == b->score && a->index > b->index) || a->score < b->score;
}

static void heap_push(nms_cand *h, int64_t *n, nms_cand v)
{
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!cand_below(&h[p], &v)) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static nms_cand heap_pop(nms_cand *h, int64_t *n)
{
    nms_cand top = h[0], last = h[--*n];
    int64_t i = 0, m = *n;
    for (;;) {
        int64_t l = 2 * i + 1, best = i;
        const nms_cand *bv = &last;
        if (l < m && cand_below(bv, &h[l])) {
            best = l;
            bv = &h[l];
        }
        if (l + 1 < m && cand_below(bv, &h[l + 1])) best = l + 1;
        if (best == i) break;
        h[i] = h[best];
        i = best;
    }
    if (m) h[i] = last;
    return top;
}

/* Rounds to the precision of T (each float16 operation rounds its result). */
static float in_t(float x, bool half)
{
    return half ? (float)(gn__f16)x : x;
}

typedef struct {
    float ymin, xmin, ymax, xmax, area;
} nms_box;

static float nms_iou(const nms_box *a, const nms_box *b)
{
    if (a->area <= 0 || b->area <= 0) return 0.0f;
    float iymin = fmaxf(a->ymin, b->ymin), ixmin = fmaxf(a->xmin, b->xmin);
    float iymax = fminf(a->ymax, b->ymax), ixmax = fminf(a->xmax, b->xmax);
    float h = iymax - iymin, w = ixmax - ixmin;
    float inter = (h > 0.0f ? h : 0.0f) * (w > 0.0f ? w : 0.0f);
    return inter / (a->area + b->area - inter);
}

static float minf_tf(float a, float b)
{
    return b < a ? b : a;   /* Eigen::numext::mini */
}

static float maxf_tf(float a, float b)
{
    return a < b ? b : a;   /* Eigen::numext::maxi */
}

static gn_status scalar_of(gn__kctx *c, uint32_t i, const char *what, bool half_or_float, float *v)
{
    const gn__tensor *t = &c->in[i];
    char sb[SHAPE_STR];
    if (t->rank != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be 0-D, got shape %s", what, shape_str(sb, t));
    if (half_or_float && t->dtype != DT_FLOAT && t->dtype != DT_HALF)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be float or half, not %s", what, gn__dtype_name(t->dtype));
    *v = elem_f(t, 0);
    return GN_OK;
}

static gn_status nms_common(gn__kctx *c, int version)
{
    GN_TRY(need(c, version == 5 ? 6u : 5u));
    const gn__tensor *boxes = &c->in[0], *scores = &c->in[1], *mos = &c->in[2];
    char sb[SHAPE_STR];
    if (mos->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "max_output_size must be 0-D, got shape %s", shape_str(sb, mos));
    if (mos->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "max_output_size must be int32, not %s", gn__dtype_name(mos->dtype));
    float iou_thr = 0.0f, score_thr = 0.0f, sigma = 0.0f;
    GN_TRY(scalar_of(c, 3, "iou_threshold", true, &iou_thr));
    if (!(iou_thr >= 0.0f && iou_thr <= 1.0f))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "iou_threshold must be in [0, 1], got %g", (double)iou_thr);
    GN_TRY(scalar_of(c, 4, "score_threshold", true, &score_thr));
    if (version == 5) {
        GN_TRY(scalar_of(c, 5, "soft_nms_sigma", true, &sigma));
        if (!(sigma >= 0.0f))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "soft_nms_sigma must be non-negative, got %g", (double)sigma);
    }
    if (boxes->rank != 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be 2-D, got shape %s", shape_str(sb, boxes));
    if (boxes->dims[1] != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must have 4 columns, got shape %s", shape_str(sb, boxes));
    int64_t num = boxes->dims[0];
    if (scores->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores must be 1-D, got shape %s", shape_str(sb, scores));
    if (scores->dims[0] != num)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "scores has incompatible shape (Dimensions must be equal, but are %lld and %lld)",
                             (long long)num, (long long)scores->dims[0]);
    if (boxes->dtype != DT_FLOAT && boxes->dtype != DT_HALF)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be float or half, not %s", gn__dtype_name(boxes->dtype));
    if (scores->dtype != boxes->dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores are %s but boxes are %s", gn__dtype_name(scores->dtype),
                             gn__dtype_name(boxes->dtype));
    if (version == 5)
        for (uint32_t i = 3; i < 6; i++)
            if (c->in[i].dtype != boxes->dtype)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s but boxes are %s", i,
                                     gn__dtype_name(c->in[i].dtype), gn__dtype_name(boxes->dtype));
    if (num > INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "%lld boxes, over int32", (long long)num);
    int32_t output_size = *(const int32_t *)mos->data;
    if (output_size < 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output size must be non-negative, got %d", (int)output_size);
    bool pad = false;
    if (version >= 4) (void)gn__attr_get_bool(c->g, c->node, "pad_to_max_output_size", &pad);
    bool half = boxes->dtype == DT_HALF;
    /* thresholds are converted to T */
    float thr = in_t(iou_thr, half), sthr = in_t(score_thr, half);
    sigma = in_t(sigma, half);
    bool soft = sigma > 0.0f;
    float scale = soft ? in_t(-0.5f / sigma, half) : 0.0f;

    size_t cap = (size_t)(num > 0 ? num : 1);
    nms_box *bx = malloc(cap * sizeof *bx);
    nms_cand *heap = malloc(cap * sizeof *heap);
    int32_t *sel = malloc(cap * sizeof *sel);
    float *sel_score = malloc(cap * sizeof *sel_score);
    gn_status st = GN_OK;
    if (!bx || !heap || !sel || !sel_score) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    int64_t nh = 0, nsel = 0;
    if (st == GN_OK) {
        for (int64_t i = 0; i < num; i++) {
            float y1 = elem_f(boxes, i * 4), x1 = elem_f(boxes, i * 4 + 1);
            float y2 = elem_f(boxes, i * 4 + 2), x2 = elem_f(boxes, i * 4 + 3);
            nms_box *b = &bx[i];
            b->ymin = minf_tf(y1, y2);
            b->xmin = minf_tf(x1, x2);
            b->ymax = maxf_tf(y1, y2);
            b->xmax = maxf_tf(x1, x2);
            b->area = (b->ymax - b->ymin) * (b->xmax - b->xmin);
            float s = elem_f(scores, i);
            if (s > sthr) heap_push(heap, &nh, (nms_cand){(int32_t)i, s, 0});
        }
        while (nsel < output_size && nh > 0) {
            nms_cand cand = heap_pop(heap, &nh);
            float original = cand.score;
            bool hard = false;
            for (int64_t j = nsel - 1; j >= cand.begin; --j) {
                float sim = in_t(nms_iou(&bx[cand.index], &bx[sel[j]]), half);
                float w = in_t(expf(in_t(in_t(scale * sim, half) * sim, half)), half);
                if (!(soft || sim <= thr)) w = 0.0f;
                cand.score = in_t(cand.score * w, half);
                if (!soft && sim > thr) {
                    hard = true;
                    break;
                }
                if (cand.score <= sthr) break;
            }
            cand.begin = (int32_t)nsel;
            if (hard) continue;
            if (cand.score == original) {
                sel[nsel] = cand.index;
                sel_score[nsel++] = cand.score;
                continue;
            }
            if (cand.score > sthr) heap_push(heap, &nh, cand);
        }
    }
    int64_t n_out = pad ? output_size : nsel;
    gn__tensor *ti = NULL, *ts = NULL, *tv = NULL;
    if (st == GN_OK) st = gn__kctx_output(c, 0, DT_INT32, 1, &n_out, &ti);
    if (st == GN_OK && version == 5) st = gn__kctx_output(c, 1, boxes->dtype, 1, &n_out, &ts);
    if (st == GN_OK && version >= 4) st = gn__kctx_output(c, version == 5 ? 2 : 1, DT_INT32, 0, NULL, &tv);
    if (st == GN_OK) {
        int32_t *oi = ti->data;
        for (int64_t i = 0; i < n_out; i++) oi[i] = i < nsel ? sel[i] : 0;
        if (ts) {
            for (int64_t i = 0; i < n_out; i++) {
                float v = i < nsel ? sel_score[i] : 0.0f;
                if (half)
                    ((gn__f16 *)ts->data)[i] = (gn__f16)v;
                else
                    ((float *)ts->data)[i] = v;
            }
        }
        if (tv) *(int32_t *)tv->data = (int32_t)nsel;
    }
    free(bx);
    free(heap);
    free(sel);
    free(sel_score);
    return st;
}

gn_status gn__image_k_nms_v3(gn__kctx *c)
{
    return nms_common(c, 3);
}

gn_status gn__image_k_nms_v4(gn__kctx *c)
{
    return nms_common(c, 4);
}

gn_status gn__image_k_nms_v5(gn__kctx *c)
{
    return nms_common(c, 5);
}

/* ---- CropAndResize(image, boxes, box_ind, crop_size) --------------------------------------- */
gn_status gn__image_k_crop_and_resize(gn__kctx *c)
{
    GN_TRY(need(c, 4));
    const gn__tensor *img = &c->in[0], *boxes = &c->in[1], *bi = &c->in[2], *cs = &c->in[3];
    char sb[SHAPE_STR];
    const char *method = "bilinear";
    size_t mlen = 8;
    (void)gn__attr_get_string(c->g, c->node, "method", &method, &mlen);
    bool nearest = mlen == 7 && !memcmp(method, "nearest", 7);
    if (!nearest && !(mlen == 8 && !memcmp(method, "bilinear", 8)))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "method must be 'bilinear' or 'nearest', got '%.*s'",
                             (int)(mlen > 64 ? 64 : mlen), method);
    float extrap = 0.0f;
    (void)gn__attr_get_float(c->g, c->node, "extrapolation_value", &extrap);
    if (img->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input image must be 4-D, got shape %s", shape_str(sb, img));
    if (!real_image_dtype(img->dtype))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "image dtype %s is not supported", gn__dtype_name(img->dtype));
    int64_t batch = img->dims[0], ih = img->dims[1], iw = img->dims[2], depth = img->dims[3];
    if (!(ih > 0 && iw > 0)) return gn__kctx_fail(c, GN_ERR_GRAPH, "image dimensions must be positive");
    if (ih > INT32_MAX || iw > INT32_MAX || batch > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "image dimensions must fit in int32, got shape %s", shape_str(sb, img));
    int64_t num = 0;
    if (!(gn__tensor_numel(boxes) == 0 && gn__tensor_numel(bi) == 0)) {
        if (boxes->rank != 2)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be 2-D, got shape %s", shape_str(sb, boxes));
        num = boxes->dims[0];
        if (boxes->dims[1] != 4)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must have 4 columns, got shape %s", shape_str(sb, boxes));
        if (bi->rank != 1)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "box_index must be 1-D, got shape %s", shape_str(sb, bi));
        if (bi->dims[0] != num)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "box_index has incompatible shape %s for %lld boxes",
                                 shape_str(sb, bi), (long long)num);
    }
    if (num && boxes->dtype != DT_FLOAT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be float, not %s", gn__dtype_name(boxes->dtype));
    if (num && bi->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "box_index must be int32, not %s", gn__dtype_name(bi->dtype));
    if (cs->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "crop_size must be 1-D, got shape %s", shape_str(sb, cs));
    if (cs->dims[0] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "crop_size must have two elements, got shape %s", shape_str(sb, cs));
    if (cs->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "crop_size must be int32, not %s", gn__dtype_name(cs->dtype));
    int32_t ch = ((const int32_t *)cs->data)[0], cw = ((const int32_t *)cs->data)[1];
    if (!(ch > 0 && cw > 0))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "crop dimensions must be positive, got [%d,%d]", (int)ch, (int)cw);
    int64_t per_box = (int64_t)ch * cw;
    if (depth && per_box > INT64_MAX / depth) return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    per_box *= depth;
    if (num && per_box > INT64_MAX / num) return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    const int32_t *bind = num ? bi->data : NULL;
    for (int64_t b = 0; b < num; b++)
        if (bind[b] < 0 || bind[b] >= batch)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "box_index has values outside [0, batch_size): box_index[%lld] = %d",
                                 (long long)b, (int)bind[b]);
    int64_t dims[4] = {num, ch, cw, depth};
    gn__tensor *t;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, 4, dims, &t));
    float *o = t->data;
    const float *bx = num ? boxes->data : NULL;
    const int hm1 = (int)(ih - 1), wm1 = (int)(iw - 1);
    for (int64_t b = 0; b < num; b++) {
        const float y1 = bx[b * 4], x1 = bx[b * 4 + 1], y2 = bx[b * 4 + 2], x2 = bx[b * 4 + 3];
        const int64_t base = (int64_t)bind[b] * ih * iw * depth;
        const float hs = ch > 1 ? (y2 - y1) * (float)hm1 / (float)(ch - 1) : 0.0f;
        const float ws = cw > 1 ? (x2 - x1) * (float)wm1 / (float)(cw - 1) : 0.0f;
        float *ob = o + b * per_box;
        for (int32_t y = 0; y < ch; y++) {
            float *orow = ob + (int64_t)y * cw * depth;
            const float in_y = ch > 1 ? y1 * (float)hm1 + (float)y * hs : (float)(0.5 * (double)(y1 + y2) * (double)hm1);
            if (!(in_y >= 0.0f && in_y <= (float)hm1)) {
                for (int64_t k = 0; k < (int64_t)cw * depth; k++) orow[k] = extrap;
                continue;
            }
            const int64_t top = clamp64((int64_t)floorf(in_y), ih), bot = clamp64((int64_t)ceilf(in_y), ih);
            const float y_lerp = in_y - (float)(int64_t)floorf(in_y);
            const int64_t near_y = clamp64((int64_t)roundf(in_y), ih);
            for (int32_t x = 0; x < cw; x++) {
                float *op = orow + (int64_t)x * depth;
                const float in_x =
                    cw > 1 ? x1 * (float)wm1 + (float)x * ws : (float)(0.5 * (double)(x1 + x2) * (double)wm1);
                if (!(in_x >= 0.0f && in_x <= (float)wm1)) {
                    for (int64_t d = 0; d < depth; d++) op[d] = extrap;
                    continue;
                }
                if (nearest) {
                    const int64_t near_x = clamp64((int64_t)roundf(in_x), iw);
                    const int64_t src = base + (near_y * iw + near_x) * depth;
                    for (int64_t d = 0; d < depth; d++) op[d] = elem_f(img, src + d);
                    continue;
                }
                const int64_t left = clamp64((int64_t)floorf(in_x), iw), right = clamp64((int64_t)ceilf(in_x), iw);
                const float x_lerp = in_x - (float)(int64_t)floorf(in_x);
                const int64_t tl = base + (top * iw + left) * depth, tr = base + (top * iw + right) * depth;
                const int64_t bl = base + (bot * iw + left) * depth, br = base + (bot * iw + right) * depth;
                for (int64_t d = 0; d < depth; d++) {
                    const float vtl = elem_f(img, tl + d), vtr = elem_f(img, tr + d);
                    const float vbl = elem_f(img, bl + d), vbr = elem_f(img, br + d);
                    const float tv = vtl + (vtr - vtl) * x_lerp;
                    const float bv = vbl + (vbr - vbl) * x_lerp;
                    op[d] = tv + (bv - tv) * y_lerp;
                }
            }
        }
    }
    return GN_OK;
}

/* ---- resize state (image_resizer_state.h) --------------------------------------------------- */
static float rs_scale(int64_t in, int64_t out, bool align)
{
    return (align && out > 1) ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}

gn_status gn__resize_validate(gn__kctx *c, bool has_half, gn__resize_state *st)
{
    GN_TRY(need(c, 2));
    const gn__tensor *x = &c->in[0], *sz = &c->in[1];
    char sb[SHAPE_STR];
    st->align = false;
    st->half = false;
    (void)gn__attr_get_bool(c->g, c->node, "align_corners", &st->align);
    if (has_half) (void)gn__attr_get_bool(c->g, c->node, "half_pixel_centers", &st->half);
    if (st->half && st->align)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "If half_pixel_centers is True, align_corners must be False.");
    if (x->rank != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be 4-dimensional, got shape %s", shape_str(sb, x));
    if (sz->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "shape_t must be 1-dimensional, got shape %s", shape_str(sb, sz));
    if (sz->dims[0] != 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "shape_t must have two elements, got shape %s", shape_str(sb, sz));
    if (sz->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "size must be int32, not %s", gn__dtype_name(sz->dtype));
    st->batch = x->dims[0];
    st->out_h = ((const int32_t *)sz->data)[0];
    st->out_w = ((const int32_t *)sz->data)[1];
    if (x->dims[1] > INT32_MAX || x->dims[2] > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input sizes must be between 0 and max int32");
    st->in_h = x->dims[1];
    st->in_w = x->dims[2];
    st->ch = x->dims[3];
    if (st->out_h <= 0 || st->out_w <= 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output dimensions must be positive, got [%lld,%lld]",
                             (long long)st->out_h, (long long)st->out_w);
    if (st->ch <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "image must have at least one channel");
    if (st->in_h <= 0 || st->in_w <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "input image must be of non-zero size");
    st->hscale = rs_scale(st->in_h, st->out_h, st->align);
    st->wscale = rs_scale(st->in_w, st->out_w, st->align);
    if (ceilf((float)(st->out_w - 1) * st->wscale) > (float)INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input image width scale would cause an overflow");
    int64_t n = st->out_h * st->out_w;   /* both < 2^31 */
    if (n > INT64_MAX / st->ch || n * st->ch > INT64_MAX / (st->batch > 0 ? st->batch : 1))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");
    return GN_OK;
}

/* ---- ResizeBicubic -------------------------------------------------------------------------- */
#define BICUBIC_TABLE 1024

static void bicubic_table(double a, float *t)
{
    for (int i = 0; i <= BICUBIC_TABLE; ++i) {
        float x = (float)(i * 1.0 / BICUBIC_TABLE);
        t[i * 2] = (float)(((a + 2) * x - (a + 3)) * x * x + 1);
        x += 1.0f;
        t[i * 2 + 1] = (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
}

typedef struct {
    float w[4];
    int64_t ix[4];
} cubic_wi;

static void cubic_weights(const float *table, float scale, int64_t out_loc, int64_t limit, bool half, cubic_wi *o)
{
    const float in_loc_f = half ? ((float)out_loc + 0.5f) * scale - 0.5f : (float)out_loc * scale;
    const int64_t in_loc = (int64_t)floorf(in_loc_f);
    const float delta = in_loc_f - (float)in_loc;
    const long offset = lrintf(delta * BICUBIC_TABLE);
    const float c0 = table[offset * 2 + 1], c1 = table[offset * 2];
    const float c2 = table[(BICUBIC_TABLE - offset) * 2], c3 = table[(BICUBIC_TABLE - offset) * 2 + 1];
    for (int k = 0; k < 4; k++) o->ix[k] = clamp64(in_loc - 1 + k, limit);
    if (half) {
        /* Keys' kernel: samples outside the image get weight 0, the rest are renormalised */
        o->w[0] = o->ix[0] == in_loc - 1 ? c0 : 0.0f;
        o->w[1] = o->ix[1] == in_loc ? c1 : 0.0f;
        o->w[2] = o->ix[2] == in_loc + 1 ? c2 : 0.0f;
        o->w[3] = o->ix[3] == in_loc + 2 ? c3 : 0.0f;
        const float sum = o->w[0] + o->w[1] + o->w[2] + o->w[3];
        if (fabsf(sum) >= 1000.0f * 1.17549435e-38f) {
            const float inv = 1.0f / sum;
            for (int k = 0; k < 4; k++) o->w[k] *= inv;
        }
    } else {
        o->w[0] = c0;
        o->w[1] = c1;
        o->w[2] = c2;
        o->w[3] = c3;
    }
}

gn_status gn__image_k_resize_bicubic(gn__kctx *c)
{
    gn__resize_state st;
    GN_TRY(gn__resize_validate(c, true, &st));
    if (!real_image_dtype(c->in[0].dtype))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "images dtype %s is not supported", gn__dtype_name(c->in[0].dtype));
    const gn__tensor *x = &c->in[0];
    int64_t dims[4] = {st.batch, st.out_h, st.out_w, st.ch};
    const float *img = NULL;
    float *owned = NULL;
    float *table = NULL;
    cubic_wi *xw = NULL;
    gn__tensor *t = NULL;
    gn_status s = gn__kctx_output(c, 0, DT_FLOAT, 4, dims, &t);
    if (s == GN_OK && st.batch > 0) {
        table = malloc((BICUBIC_TABLE + 1) * 2 * sizeof *table);
        xw = malloc((size_t)st.out_w * sizeof *xw);
        if (!table || !xw) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        if (s == GN_OK) s = as_float(c, x, &img, &owned);
    }
    if (s == GN_OK && st.batch > 0) {
        /* Keys' a = -0.5 with half-pixel centers, the legacy a = -0.75 otherwise */
        bicubic_table(st.half ? -0.5f : -0.75f, table);
        for (int64_t xx = 0; xx < st.out_w; xx++) cubic_weights(table, st.wscale, xx, st.in_w, st.half, &xw[xx]);
        const int64_t C = st.ch, in_row = st.in_w * C, in_img = st.in_h * in_row;
        float *o = t->data;
        for (int64_t b = 0; b < st.batch; b++) {
            const float *im = img + b * in_img;
            for (int64_t y = 0; y < st.out_h; y++) {
                cubic_wi yw;
                cubic_weights(table, st.hscale, y, st.in_h, st.half, &yw);
                const float *r0 = im + yw.ix[0] * in_row, *r1 = im + yw.ix[1] * in_row;
                const float *r2 = im + yw.ix[2] * in_row, *r3 = im + yw.ix[3] * in_row;
                for (int64_t xx = 0; xx < st.out_w; xx++) {
                    const cubic_wi *w = &xw[xx];
                    for (int64_t k = 0; k < C; k++) {
                        float v[4];
                        for (int j = 0; j < 4; j++) {
                            const int64_t off = w->ix[j] * C + k;
                            v[j] = r0[off] * yw.w[0] + r1[off] * yw.w[1] + r2[off] * yw.w[2] + r3[off] * yw.w[3];
                        }
                        *o++ = v[0] * w->w[0] + v[1] * w->w[1] + v[2] * w->w[2] + v[3] * w->w[3];
                    }
                }
            }
        }
    }
    free(owned);
    free(table);
    free(xw);
    return s;
}

/* ---- ResizeArea ----------------------------------------------------------------------------- */
typedef struct {
    int64_t start, end;
    float start_scale, end_minus_one_scale;
} area_x;

static float area_cell(int64_t v, float in0, float in1, float scale)
{
    return (float)v < in0 ? ((float)(v + 1) > in1 ? scale : (float)(v + 1) - in0)
                          : ((float)(v + 1) > in1 ? in1 - (float)v : 1.0f);
}

gn_status gn__image_k_resize_area(gn__kctx *c)
{
    gn__resize_state st;
    GN_TRY(gn__resize_validate(c, false, &st));
    if (!real_image_dtype(c->in[0].dtype))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "images dtype %s is not supported", gn__dtype_name(c->in[0].dtype));
    const gn__tensor *x = &c->in[0];
    int64_t dims[4] = {st.batch, st.out_h, st.out_w, st.ch};
    area_x *xs = NULL;
    const float *img = NULL;
    float *owned = NULL;
    gn__tensor *t = NULL;
    gn_status s = gn__kctx_output(c, 0, DT_FLOAT, 4, dims, &t);
    if (s == GN_OK && st.batch > 0) {
        xs = malloc((size_t)st.out_w * sizeof *xs);
        if (!xs) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        if (s == GN_OK) s = as_float(c, x, &img, &owned);
    }
    if (s == GN_OK && st.batch > 0) {
        for (int64_t xx = 0; xx < st.out_w; xx++) {
            const float in_x = (float)xx * st.wscale, in_x1 = (float)(xx + 1) * st.wscale;
            area_x *a = &xs[xx];
            a->start = (int64_t)floorf(in_x);
            a->start_scale = area_cell(a->start, in_x, in_x1, st.wscale);
            a->end = (int64_t)ceilf(in_x1);
            a->end_minus_one_scale = area_cell(a->end - 1, in_x, in_x1, st.wscale);
        }
        const float scale = (float)(1.0 / (double)(st.hscale * st.wscale));
        const int64_t C = st.ch, in_row = st.in_w * C, in_img = st.in_h * in_row;
        float *o = t->data;
        for (int64_t b = 0; b < st.batch; b++) {
            const float *im = img + b * in_img;
            for (int64_t y = 0; y < st.out_h; y++) {
                const float in_y = (float)y * st.hscale, in_y1 = (float)(y + 1) * st.hscale;
                const int64_t y0 = (int64_t)floorf(in_y), y1 = (int64_t)ceilf(in_y1);
                for (int64_t xx = 0; xx < st.out_w; xx++) {
                    const area_x *a = &xs[xx];
                    for (int64_t k = 0; k < C; k++) {
                        float sum = 0;
                        for (int64_t i = y0; i < y1; i++) {
                            const float sy = area_cell(i, in_y, in_y1, st.hscale);
                            const float *row = im + clamp64(i, st.in_h) * in_row;
                            float sx = row[clamp64(a->start, st.in_w) * C + k] * a->start_scale;
                            if (a->start + 1 != a->end) {
                                for (int64_t v = a->start + 1; v < a->end - 1; ++v) sx += row[clamp64(v, st.in_w) * C + k];
                                sx += row[clamp64(a->end - 1, st.in_w) * C + k] * a->end_minus_one_scale;
                            }
                            sum += sx * sy;
                        }
                        *o++ = sum * scale;
                    }
                }
            }
        }
    }
    free(owned);
    free(xs);
    return s;
}

/* ---- CombinedNonMaxSuppression -------------------------------------------------------------- */
/* Per class greedy NMS, then the merge of all classes by score. TensorFlow
 * orders equal scores by where its std::priority_queue and std::sort (the
 * libstdc++ ones) leave them, so both are reproduced step by step here:
 * the binary heap's sift up / sift down and introsort with its median of
 * three, unguarded partition, heap sort fallback and final insertion sort. */
typedef struct {
    int32_t index;          /* box index, -1 for an empty slot */
    float score;
    int32_t cls;
    float box[4];
} cnms_cand;

typedef bool (*cnms_less)(const cnms_cand *a, const cnms_cand *b);

static bool cnms_pq_less(const cnms_cand *a, const cnms_cand *b)
{
    return a->score < b->score;   /* max-heap on score */
}

static bool cnms_sort_less(const cnms_cand *a, const cnms_cand *b)
{
    return b->score < a->score;   /* descending score */
}

static void cnms_swap(cnms_cand *a, cnms_cand *b)
{
    cnms_cand t = *a;
    *a = *b;
    *b = t;
}

static void cnms_sift_up(cnms_cand *h, int64_t hole, int64_t top, cnms_cand v, cnms_less less)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && less(&h[parent], &v)) {
        h[hole] = h[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    h[hole] = v;
}

static void cnms_adjust(cnms_cand *h, int64_t hole, int64_t len, cnms_cand v, cnms_less less)
{
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (less(&h[child], &h[child - 1])) child--;
        h[hole] = h[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    cnms_sift_up(h, hole, top, v, less);
}

/* pop_heap on [0, len): the top goes to h[len - 1] */
static void cnms_pop_heap(cnms_cand *h, int64_t len, cnms_less less)
{
    if (len < 2) return;
    cnms_cand v = h[len - 1];
    h[len - 1] = h[0];
    cnms_adjust(h, 0, len - 1, v, less);
}

static void cnms_heap_sort(cnms_cand *a, int64_t len, cnms_less less)
{
    if (len >= 2)
        for (int64_t parent = (len - 2) / 2;; parent--) {
            cnms_adjust(a, parent, len, a[parent], less);
            if (parent == 0) break;
        }
    for (int64_t n = len; n > 1; n--) cnms_pop_heap(a, n, less);
}

static void cnms_median_to_first(cnms_cand *r, cnms_cand *a, cnms_cand *b, cnms_cand *c, cnms_less less)
{
    if (less(a, b)) {
        if (less(b, c))
            cnms_swap(r, b);
        else if (less(a, c))
            cnms_swap(r, c);
        else
            cnms_swap(r, a);
    } else if (less(a, c))
        cnms_swap(r, a);
    else if (less(b, c))
        cnms_swap(r, c);
    else
        cnms_swap(r, b);
}

static void cnms_introsort(cnms_cand *first, cnms_cand *last, int depth, cnms_less less)
{
    while (last - first > 16) {
        if (depth == 0) {
            cnms_heap_sort(first, last - first, less);
            return;
        }
        --depth;
        cnms_cand *mid = first + (last - first) / 2;
        cnms_median_to_first(first, first + 1, mid, last - 1, less);
        cnms_cand *lo = first + 1, *hi = last;
        for (;;) {
            while (less(lo, first)) ++lo;
            --hi;
            while (less(first, hi)) --hi;
            if (!(lo < hi)) break;
            cnms_swap(lo, hi);
            ++lo;
        }
        cnms_introsort(lo, last, depth, less);
        last = lo;
    }
}

static void cnms_linear_insert(cnms_cand *p, cnms_less less)
{
    cnms_cand v = *p;
    cnms_cand *next = p - 1;
    while (less(&v, next)) {
        *p = *next;
        p = next--;
    }
    *p = v;
}

static void cnms_insertion_sort(cnms_cand *first, cnms_cand *last, cnms_less less)
{
    if (first == last) return;
    for (cnms_cand *i = first + 1; i != last; ++i) {
        if (less(i, first)) {
            cnms_cand v = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
            *first = v;
        } else {
            cnms_linear_insert(i, less);
        }
    }
}

static void cnms_sort(cnms_cand *a, int64_t n, cnms_less less)
{
    if (n < 2) return;
    int lg = 0;
    while ((n >> (lg + 1)) != 0) lg++;
    cnms_introsort(a, a + n, 2 * lg, less);
    if (n > 16) {
        cnms_insertion_sort(a, a + 16, less);
        for (cnms_cand *i = a + 16; i != a + n; ++i) cnms_linear_insert(i, less);
    } else {
        cnms_insertion_sort(a, a + n, less);
    }
}

static float std_min(float a, float b)
{
    return b < a ? b : a;
}

static float std_max(float a, float b)
{
    return a < b ? b : a;
}

/* IoU of two boxes given as any two opposite corners (the IOU of the kernel file) */
static float cnms_iou(const float *bi, const float *bj)
{
    const float ymin_i = std_min(bi[0], bi[2]), xmin_i = std_min(bi[1], bi[3]);
    const float ymax_i = std_max(bi[0], bi[2]), xmax_i = std_max(bi[1], bi[3]);
    const float ymin_j = std_min(bj[0], bj[2]), xmin_j = std_min(bj[1], bj[3]);
    const float ymax_j = std_max(bj[0], bj[2]), xmax_j = std_max(bj[1], bj[3]);
    const float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    const float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if (area_i <= 0 || area_j <= 0) return 0.0f;
    const float iymin = std_max(ymin_i, ymin_j), ixmin = std_max(xmin_i, xmin_j);
    const float iymax = std_min(ymax_i, ymax_j), ixmax = std_min(xmax_i, xmax_j);
    const float inter = std_max(iymax - iymin, 0.0f) * std_max(ixmax - ixmin, 0.0f);
    return inter / (area_i + area_j - inter);
}

static gn_status cnms_scalar(gn__kctx *c, uint32_t i, const char *what, int32_t dtype)
{
    const gn__tensor *t = &c->in[i];
    char sb[SHAPE_STR];
    if (t->rank != 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be 0-D, got shape %s", what, shape_str(sb, t));
    if (t->dtype != dtype)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be %s, not %s", what, gn__dtype_name(dtype),
                             gn__dtype_name(t->dtype));
    return GN_OK;
}

gn_status gn__image_k_combined_nms(gn__kctx *c)
{
    GN_TRY(need(c, 6));
    const gn__tensor *boxes = &c->in[0], *scores = &c->in[1];
    char sb[SHAPE_STR];
    bool pad_per_class = false, clip = true;
    (void)gn__attr_get_bool(c->g, c->node, "pad_per_class", &pad_per_class);
    (void)gn__attr_get_bool(c->g, c->node, "clip_boxes", &clip);
    if (boxes->rank != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be 4-D [batch, num_boxes, q, 4], got shape %s",
                             shape_str(sb, boxes));
    if (scores->rank != 3)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores must be 3-D [batch, num_boxes, num_classes], got shape %s",
                             shape_str(sb, scores));
    if (boxes->dtype != DT_FLOAT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must be float, not %s", gn__dtype_name(boxes->dtype));
    if (scores->dtype != DT_FLOAT)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores must be float, not %s", gn__dtype_name(scores->dtype));
    const int64_t batch = boxes->dims[0], num_boxes = boxes->dims[1], q = boxes->dims[2];
    const int64_t num_classes = scores->dims[2];
    if (q != 1 && q != num_classes)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "third dimension of boxes must be either 1 or num classes, got shape %s",
                             shape_str(sb, boxes));
    if (boxes->dims[3] != 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes must have 4 columns, got shape %s", shape_str(sb, boxes));
    if (scores->dims[1] != num_boxes)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores has incompatible shape %s for boxes of shape %s",
                             shape_str(sb, scores), shape_str((char[SHAPE_STR]){0}, boxes));
    if (scores->dims[0] != batch)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "boxes and scores must have same batch size, got %lld and %lld",
                             (long long)batch, (long long)scores->dims[0]);
    if (batch > INT32_MAX || num_boxes > INT32_MAX || num_classes > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "scores shape %s has a dimension over int32", shape_str(sb, scores));
    GN_TRY(cnms_scalar(c, 2, "max_size_per_class", DT_INT32));
    const int32_t max_per_class = *(const int32_t *)c->in[2].data;
    if (max_per_class <= 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "max_size_per_class must be positive, got %d", (int)max_per_class);
    GN_TRY(cnms_scalar(c, 3, "max_total_size", DT_INT32));
    const int32_t max_total = *(const int32_t *)c->in[3].data;
    if (max_total <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "max_total_size must be > 0, got %d", (int)max_total);
    GN_TRY(cnms_scalar(c, 4, "iou_threshold", DT_FLOAT));
    GN_TRY(cnms_scalar(c, 5, "score_threshold", DT_FLOAT));
    const float iou_thr = *(const float *)c->in[4].data, score_thr = *(const float *)c->in[5].data;
    if (!(iou_thr >= 0.0f && iou_thr <= 1.0f))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "iou_threshold must be in [0, 1], got %g", (double)iou_thr);

    const int64_t size_per_class = max_per_class < num_boxes ? max_per_class : num_boxes;
    const int64_t n_cand = size_per_class * num_classes;   /* both < 2^31 */
    if (n_cand > INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "size_per_class * num_classes causes overflow");
    int64_t all_classes = (int64_t)max_per_class * num_classes;
    if (all_classes > INT32_MAX) all_classes = INT32_MAX;
    const int64_t per_batch = pad_per_class && all_classes < max_total ? all_classes : max_total;
    if (batch && per_batch > INT64_MAX / 16 / batch) return gn__kctx_fail(c, GN_ERR_GRAPH, "output is too large");

    int64_t dims3[3] = {batch, per_batch, 4};
    gn__tensor *tb = NULL, *ts = NULL, *tc = NULL, *tv = NULL;
    GN_TRY(gn__kctx_output(c, 0, DT_FLOAT, 3, dims3, &tb));
    GN_TRY(gn__kctx_output(c, 1, DT_FLOAT, 2, dims3, &ts));
    GN_TRY(gn__kctx_output(c, 2, DT_FLOAT, 2, dims3, &tc));
    GN_TRY(gn__kctx_output(c, 3, DT_INT32, 1, dims3, &tv));
    float *ob = tb->data, *os = ts->data, *oc = tc->data;
    int32_t *ov = tv->data;
    if (batch * per_batch > 0) {
        memset(ob, 0, (size_t)(batch * per_batch * 4) * sizeof *ob);
        memset(os, 0, (size_t)(batch * per_batch) * sizeof *os);
        memset(oc, 0, (size_t)(batch * per_batch) * sizeof *oc);
    }
    if (batch == 0) return GN_OK;

    cnms_cand *cand = malloc((size_t)(n_cand > 0 ? n_cand : 1) * sizeof *cand);
    cnms_cand *heap = malloc((size_t)(num_boxes > 0 ? num_boxes : 1) * sizeof *heap);
    int32_t *sel = malloc((size_t)(size_per_class > 0 ? size_per_class : 1) * sizeof *sel);
    gn_status st = GN_OK;
    if (!cand || !heap || !sel) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    const float *bdata = boxes->data, *sdata = scores->data;
    for (int64_t b = 0; st == GN_OK && b < batch; b++) {
        const float *bb = bdata + b * num_boxes * q * 4, *sb_ = sdata + b * num_boxes * num_classes;
        for (int64_t i = 0; i < n_cand; i++) cand[i] = (cnms_cand){-1, -INFINITY, -1, {0, 0, 0, 0}};
        for (int64_t k = 0; k < num_classes; k++) {
            const int64_t kb = q > 1 ? k : 0;
            int64_t nh = 0, nsel = 0;
            for (int64_t i = 0; i < num_boxes; i++) {
                const float s = sb_[i * num_classes + k];
                if (s > score_thr) {
                    heap[nh] = (cnms_cand){(int32_t)i, s, 0, {0, 0, 0, 0}};
                    nh++;
                    cnms_sift_up(heap, nh - 1, 0, heap[nh - 1], cnms_pq_less);
                }
            }
            while (nsel < size_per_class && nh > 0) {
                cnms_pop_heap(heap, nh, cnms_pq_less);
                const cnms_cand next = heap[--nh];
                const float *cb = bb + ((int64_t)next.index * q + kb) * 4;
                bool keep = true;
                for (int64_t j = nsel - 1; j >= 0; --j)
                    if (cnms_iou(cb, bb + ((int64_t)sel[j] * q + kb) * 4) > iou_thr) {
                        keep = false;
                        break;
                    }
                if (!keep) continue;
                cand[nsel + size_per_class * k] =
                    (cnms_cand){next.index, next.score, (int32_t)k, {cb[0], cb[1], cb[2], cb[3]}};
                sel[nsel++] = next.index;
            }
        }
        cnms_sort(cand, n_cand, cnms_sort_less);
        int64_t valid = 0;
        for (int64_t i = 0; i < n_cand; i++) valid += cand[i].index > -1;
        const int64_t n_out = valid < per_batch ? valid : per_batch;
        ov[b] = (int32_t)n_out;
        for (int64_t i = 0; i < n_out; i++) {
            const cnms_cand *r = &cand[i];
            float *o = ob + (b * per_batch + i) * 4;
            for (int d = 0; d < 4; d++) o[d] = clip ? std_max(std_min(r->box[d], 1.0f), 0.0f) : r->box[d];
            os[b * per_batch + i] = r->score;
            oc[b * per_batch + i] = (float)r->cls;
        }
    }
    free(cand);
    free(heap);
    free(sel);
    return st;
}
