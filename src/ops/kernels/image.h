/* Image kernels' shared pieces (private): the resize ops' validation
 * (TensorFlow's image_resizer_state.h), used by ResizeBilinear and
 * ResizeNearestNeighbor (array_misc.c) and ResizeBicubic and ResizeArea
 * (image.c). */
#ifndef GN_OPS_KERNELS_IMAGE_H
#define GN_OPS_KERNELS_IMAGE_H

#include "ops/kernel.h"

typedef struct gn__resize_state {
    int64_t batch, in_h, in_w, ch, out_h, out_w;
    float hscale, wscale;   /* input pixels per output pixel (align_corners: (in - 1) / (out - 1)) */
    bool align, half;       /* align_corners, half_pixel_centers */
} gn__resize_state;

/* Checks images (4-D) and size (int32 [2]) and the attrs (half_pixel_centers
 * read only when has_half), output dims and their int64 product; fills st. */
gn_status gn__resize_validate(gn__kctx *c, bool has_half, gn__resize_state *st);

#endif
