"""Golden tensors for the 3-D convolution and pooling kernels (src/ops/kernels/nn_3d.c).

Writes tests/data/nn3d/<case>_<name>.npy: the inputs (deterministic, from a
seeded generator) and TensorFlow's output of Conv3D, Conv3DBackpropInputV2,
MaxPool3D and AvgPool3D for each case below, plus cases.txt listing them. Run
with TensorFlow 2.x on the CPU and oneDNN off, so the outputs are those of
TensorFlow's own Eigen kernels:

    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_3d_goldens.py

TensorFlow's CPU kernels reject dilations and grouped Conv3D; their goldens are
made with TensorFlow from the same definitions: a dilated filter is the filter
with dilation-1 zeros between its taps, a grouped convolution is the
concatenation of one convolution per group.
"""
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops import gen_nn_ops  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "nn3d")
rng = np.random.default_rng(20261130)


def rnd(shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def dilate(w, d):
    """[KD, KH, KW, I, O] with d-1 zeros between taps in each spatial dim."""
    kd, kh, kw = w.shape[:3]
    out = np.zeros(((kd - 1) * d[0] + 1, (kh - 1) * d[1] + 1, (kw - 1) * d[2] + 1) + w.shape[3:], w.dtype)
    out[:: d[0], :: d[1], :: d[2]] = w
    return out


cases = []


def save(case, **arrays):
    for name, a in arrays.items():
        np.save(os.path.join(OUT, "%s_%s.npy" % (case, name)), np.ascontiguousarray(a))
    cases.append(case)


def conv(case, xs, ws, strides, padding, dtype=np.float32, dil=(1, 1, 1), groups=1):
    x, w = rnd(xs, dtype), rnd(ws, dtype)
    wd = dilate(w, dil)
    if groups == 1:
        y = gen_nn_ops.conv3d(x, wd, strides=strides, padding=padding).numpy()
    else:
        kc, og = ws[3], ws[4] // groups
        y = np.concatenate([gen_nn_ops.conv3d(x[..., g * kc:(g + 1) * kc], wd[..., g * og:(g + 1) * og],
                                              strides=strides, padding=padding).numpy() for g in range(groups)], -1)
    arrays = dict(x=x, w=w, y=y)
    if dtype == np.float16:
        # TensorFlow's float16 Conv3D accumulates in float16 (off by up to 1.4e-2
        # here); the golden is its float32 convolution of the same float16 values,
        # rounded once, and its own float16 output is kept as y_tf16.
        arrays["y"] = gen_nn_ops.conv3d(x.astype(np.float32), wd.astype(np.float32), strides=strides,
                                        padding=padding).numpy().astype(np.float16)
        arrays["y_tf16"] = y
    save(case, **arrays)


def backprop(case, xs, ws, strides, padding, dtype=np.float32, dil=(1, 1, 1)):
    w = rnd(ws, dtype)
    wd = dilate(w, dil)
    ys = tf.raw_ops.Conv3D(input=tf.zeros(xs, dtype), filter=wd, strides=strides, padding=padding).shape
    dy = rnd(ys, dtype)
    dx = gen_nn_ops.conv3d_backprop_input_v2(np.array(xs, np.int32), wd, dy, strides=strides, padding=padding).numpy()
    save(case, sizes=np.array(xs, np.int32), w=w, dy=dy, dx=dx)


def pool(case, op, xs, ksize, strides, padding):
    x = rnd(xs)
    fn = gen_nn_ops.max_pool3d if op == "max" else gen_nn_ops.avg_pool3d
    y = fn(x, ksize=ksize, strides=strides, padding=padding).numpy()
    save(case, x=x, y=y)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))
    # Conv3D (case names: conv_<what>; attrs are restated in tests/kernels_3d_test.c)
    conv("conv_same", [2, 5, 6, 7, 3], [3, 2, 3, 3, 4], [1, 2, 1, 2, 1], "SAME")
    conv("conv_valid", [1, 6, 5, 4, 2], [2, 3, 2, 2, 5], [1, 1, 1, 1, 1], "VALID")
    conv("conv_pointwise", [1, 3, 4, 5, 6], [1, 1, 1, 6, 4], [1, 1, 1, 1, 1], "SAME")
    conv("conv_f64", [1, 4, 5, 6, 3], [3, 3, 3, 3, 2], [1, 1, 2, 1, 1], "SAME", dtype=np.float64)
    conv("conv_f16", [1, 4, 5, 6, 3], [3, 3, 3, 3, 2], [1, 1, 1, 1, 1], "SAME", dtype=np.float16)
    conv("conv_dilated", [1, 7, 8, 9, 2], [2, 3, 2, 2, 3], [1, 1, 1, 2, 1], "SAME", dil=(2, 1, 3))
    conv("conv_grouped", [1, 4, 5, 5, 4], [2, 2, 3, 2, 6], [1, 1, 1, 1, 1], "VALID", groups=2)
    # Conv3DBackpropInputV2 (Keras Conv3DTranspose: stride 2, SAME)
    backprop("bwd_same", [2, 6, 5, 8, 3], [3, 3, 3, 3, 4], [1, 2, 2, 2, 1], "SAME")
    backprop("bwd_valid", [1, 7, 6, 5, 2], [2, 3, 2, 2, 3], [1, 1, 2, 3, 1], "VALID")
    backprop("bwd_f64", [1, 5, 4, 6, 2], [3, 2, 2, 2, 3], [1, 2, 1, 2, 1], "SAME", dtype=np.float64)
    backprop("bwd_dilated", [1, 7, 6, 8, 2], [2, 2, 3, 2, 3], [1, 1, 1, 1, 1], "SAME", dil=(2, 2, 1))
    # pooling
    pool("max_same", "max", [2, 5, 6, 7, 3], [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], "SAME")
    pool("max_valid", "max", [1, 6, 5, 7, 4], [1, 3, 2, 2, 1], [1, 1, 2, 2, 1], "VALID")
    pool("avg_same", "avg", [2, 5, 6, 7, 3], [1, 3, 3, 2, 1], [1, 2, 2, 2, 1], "SAME")
    pool("avg_valid", "avg", [1, 6, 5, 7, 4], [1, 2, 2, 3, 1], [1, 2, 1, 2, 1], "VALID")
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# written by tools/make_3d_goldens.py with TensorFlow %s\n" % tf.__version__)
        for c in cases:
            f.write(c + "\n")
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print("%d cases, %d bytes in %s" % (len(cases), total, os.path.normpath(OUT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
