"""Writes the golden tensors of tests/kernels_image_test.c under tests/data/image/.

Deterministic inputs (numpy's PCG64 with fixed seeds) and TensorFlow's own CPU
outputs for NonMaxSuppressionV3/V4/V5, CombinedNonMaxSuppression, CropAndResize, ResizeBicubic and
ResizeArea. Run with a TensorFlow installation:

    TF_ENABLE_ONEDNN_OPTS=0 CUDA_VISIBLE_DEVICES= python tools/make_image_goldens.py
"""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "image")
raw = tf.raw_ops


def save(name, arr):
    np.save(os.path.join(OUT, name + ".npy"), np.require(arr, requirements="C"))


def nms():
    rng = np.random.default_rng(7)
    n = 48
    # clustered boxes so that suppression happens; some given with flipped corners
    centers = rng.uniform(0.2, 0.8, size=(6, 2))
    c = centers[rng.integers(0, 6, size=n)] + rng.normal(0, 0.04, size=(n, 2))
    hw = rng.uniform(0.05, 0.25, size=(n, 2))
    boxes = np.concatenate([c - hw / 2, c + hw / 2], axis=1).astype(np.float32)
    flip = rng.random(n) < 0.3
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = rng.uniform(0, 1, size=n).astype(np.float32)
    scores[10] = scores[3]          # ties, broken by the lower index
    scores[20] = scores[3]
    scores[5] = scores[30]
    save("nms_boxes", boxes)
    save("nms_scores", scores)
    v3 = raw.NonMaxSuppressionV3(boxes=boxes, scores=scores, max_output_size=12, iou_threshold=0.5,
                                 score_threshold=0.1)
    save("nms_v3", v3.numpy().astype(np.int32))
    v4 = raw.NonMaxSuppressionV4(boxes=boxes, scores=scores, max_output_size=30, iou_threshold=0.3,
                                 score_threshold=float("-inf"), pad_to_max_output_size=True)
    save("nms_v4_idx", v4.selected_indices.numpy())
    save("nms_v4_valid", np.array(v4.valid_outputs.numpy(), dtype=np.int32))
    v5 = raw.NonMaxSuppressionV5(boxes=boxes, scores=scores, max_output_size=20, iou_threshold=1.0,
                                 score_threshold=0.05, soft_nms_sigma=0.5, pad_to_max_output_size=False)
    save("nms_v5_idx", v5.selected_indices.numpy())
    save("nms_v5_scores", v5.selected_scores.numpy())
    # float16: soft-NMS with hard threshold too, arithmetic in half
    bh, sh = boxes.astype(np.float16), scores.astype(np.float16)
    v5h = raw.NonMaxSuppressionV5(boxes=bh, scores=sh, max_output_size=25, iou_threshold=np.float16(0.6),
                                  score_threshold=np.float16(0.02), soft_nms_sigma=np.float16(0.3),
                                  pad_to_max_output_size=True)
    save("nms_v5h_idx", v5h.selected_indices.numpy())
    save("nms_v5h_scores", v5h.selected_scores.numpy())
    save("nms_v5h_valid", np.array(v5h.valid_outputs.numpy(), dtype=np.int32))


# (name, batch, num_boxes, q_is_classes, classes, max_per_class, max_total, iou, score_threshold, pad, clip)
CNMS_CASES = [
    ("q1", 3, 40, False, 5, 6, 20, 0.5, 0.2, False, True),
    ("qc", 2, 30, True, 4, 3, 100, 0.4, 0.1, True, False),
    ("cut", 2, 40, False, 6, 8, 10, 0.6, 0.55, True, True),
    ("wide", 1, 50, True, 7, 20, 64, 0.7, float("-inf"), False, False),
]


def cnms():
    rng = np.random.default_rng(17)
    for name, b, n, qc, k, mpc, mts, iou, sthr, pad, clip in CNMS_CASES:
        q = k if qc else 1
        centers = rng.uniform(0.1, 0.9, size=(b, 5, 1, 2))
        c = np.take_along_axis(centers, rng.integers(0, 5, size=(b, n, 1, 1)), axis=1)
        c = c + rng.normal(0, 0.05, size=(b, n, q, 2))
        hw = rng.uniform(0.05, 0.4, size=(b, n, q, 2))
        boxes = np.concatenate([c - hw / 2, c + hw / 2], axis=3).astype(np.float32)   # some outside [0, 1]
        flip = rng.random((b, n, q)) < 0.25
        boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
        # scores on a 1/32 grid: many ties within and across classes
        scores = (rng.integers(0, 33, size=(b, n, k)) / 32.0).astype(np.float32)
        r = raw.CombinedNonMaxSuppression(boxes=boxes, scores=scores, max_output_size_per_class=mpc,
                                          max_total_size=mts, iou_threshold=iou, score_threshold=sthr,
                                          pad_per_class=pad, clip_boxes=clip)
        save("cnms_%s_boxes" % name, boxes)
        save("cnms_%s_scores" % name, scores)
        save("cnms_%s_nboxes" % name, r.nmsed_boxes.numpy())
        save("cnms_%s_nscores" % name, r.nmsed_scores.numpy())
        save("cnms_%s_nclasses" % name, r.nmsed_classes.numpy())
        save("cnms_%s_valid" % name, r.valid_detections.numpy())


def crop():
    rng = np.random.default_rng(11)
    img = rng.uniform(-2, 2, size=(2, 9, 11, 3)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9],      # inside
                      [0.9, 0.8, 0.2, 0.1],      # flipped
                      [-0.3, -0.2, 0.6, 1.4],    # partly outside
                      [1.2, 1.1, 1.5, 1.6],      # wholly outside
                      [0.0, 0.0, 1.0, 1.0],      # the whole image
                      [0.37, 0.41, 0.37, 0.52]], dtype=np.float32)
    box_ind = np.array([0, 1, 1, 0, 1, 0], dtype=np.int32)
    save("crop_image", img)
    save("crop_boxes", boxes)
    save("crop_box_ind", box_ind)
    for method in ("bilinear", "nearest"):
        r = raw.CropAndResize(image=img, boxes=boxes, box_ind=box_ind, crop_size=[5, 4], method=method,
                              extrapolation_value=0.5)
        save("crop_" + method, r.numpy())
        r1 = raw.CropAndResize(image=img, boxes=boxes, box_ind=box_ind, crop_size=[1, 1], method=method,
                               extrapolation_value=-1.0)
        save("crop_1x1_" + method, r1.numpy())
    img8 = rng.integers(0, 256, size=(2, 9, 11, 3)).astype(np.uint8)
    save("crop_image_u8", img8)
    save("crop_u8_bilinear", raw.CropAndResize(image=img8, boxes=boxes, box_ind=box_ind, crop_size=[6, 7]).numpy())


def resize():
    rng = np.random.default_rng(13)
    img = rng.uniform(-1, 1, size=(2, 7, 9, 3)).astype(np.float32)
    save("resize_image", img)
    modes = {"legacy": (False, False), "align": (True, False), "half": (False, True)}
    for size in ((11, 5), (4, 13)):
        tag = "%dx%d" % size
        for m, (ac, hp) in modes.items():
            r = raw.ResizeBicubic(images=img, size=list(size), align_corners=ac, half_pixel_centers=hp)
            save("bicubic_%s_%s" % (m, tag), r.numpy())
        for ac in (False, True):
            r = raw.ResizeArea(images=img, size=list(size), align_corners=ac)
            save("area_%s_%s" % ("align" if ac else "legacy", tag), r.numpy())
    img8 = rng.integers(0, 256, size=(1, 6, 5, 2)).astype(np.uint8)
    save("resize_image_u8", img8)
    save("bicubic_u8_half", raw.ResizeBicubic(images=img8, size=[9, 7], half_pixel_centers=True).numpy())
    save("area_u8", raw.ResizeArea(images=img8, size=[4, 3]).numpy())


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    nms()
    cnms()
    crop()
    resize()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print("wrote %d files, %d bytes, to %s" % (len(os.listdir(OUT)), total, os.path.normpath(OUT)))
