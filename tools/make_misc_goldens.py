"""Writes small inputs and TensorFlow's outputs for the CPU kernels of
src/ops/kernels/misc.c to tests/data/misc/ (read by tests/kernels_misc_test.c).

Run with a Python that has TensorFlow (2.21) and numpy:
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_misc_goldens.py
Each case NAME writes NAME_in<k>.npy for its inputs and NAME_out<k>.npy for
TensorFlow's outputs; the inputs come from a seeded generator, so the files
are the same on every run."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "misc")
rng = np.random.default_rng(1234)
raw = tf.raw_ops


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(name, ins, outs):
    for k, a in enumerate(ins):
        np.save(os.path.join(OUT, f"{name}_in{k}.npy"), np.asarray(a))
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    for k, a in enumerate(outs):
        np.save(os.path.join(OUT, f"{name}_out{k}.npy"), np.asarray(a))


def main():
    os.makedirs(OUT, exist_ok=True)
    # segment reductions: 10 rows of 3x2, ids with gaps (empty segments)
    x = f32(10, 3, 2)
    sids = np.array([0, 0, 1, 3, 3, 3, 4, 6, 6, 6], np.int32)
    for op in ["SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin"]:
        save(op, [x, sids], getattr(raw, op)(data=x, segment_ids=sids))
    xi = rng.integers(-50, 50, (10, 4)).astype(np.int32)
    save("SegmentMean_i32", [xi, sids], raw.SegmentMean(data=xi, segment_ids=sids))
    # unsorted: 2-D ids (prefix of data's shape), a dropped -1, empty segments
    xu = f32(4, 3, 5)
    uids = np.array([[2, 0, -1], [2, 5, 0], [1, 1, 0], [5, 2, 2]], np.int64)
    n = np.int32(7)
    for op in ["UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]:
        save(op, [xu, uids, n], getattr(raw, op)(data=xu, segment_ids=uids, num_segments=n))
    xui = rng.integers(-9, 9, (6, 3)).astype(np.int64)
    ui1 = np.array([1, 0, 1, 3, 1, 0], np.int32)
    save("UnsortedSegmentProd_i64", [xui, ui1, np.int64(4)],
         raw.UnsortedSegmentProd(data=xui, segment_ids=ui1, num_segments=np.int64(4)))
    # tensor scatter: 2-D index into a [5,4,3] tensor, duplicates included
    t = f32(5, 4, 3)
    idx = np.array([[[1, 2], [4, 0]], [[1, 2], [0, 3]], [[3, 3], [1, 2]]], np.int32)
    upd = f32(3, 2, 3)
    for op in ["TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin"]:
        save(op, [t, idx, upd], getattr(raw, op)(tensor=t, indices=idx, updates=upd))
    idx1 = np.array([[4], [0], [2]], np.int64)
    upd1 = f32(3, 4, 3)
    save("TensorScatterUpdate", [t, idx1, upd1], raw.TensorScatterUpdate(tensor=t, indices=idx1, updates=upd1))
    # roll: several axes, one repeated, negative shifts and axes
    r = rng.integers(0, 1000, (3, 4, 5)).astype(np.int32)
    sh, ax = np.array([2, -7, 1, 1], np.int64), np.array([0, -1, 1, 0], np.int64)
    save("Roll", [r, sh, ax], raw.Roll(input=r, shift=sh, axis=ax))
    rf = f32(7)
    save("Roll_f32", [rf, np.int32(-3), np.int32(0)], raw.Roll(input=rf, shift=np.int32(-3), axis=np.int32(0)))
    # unique along an axis, and flat with int64 indices
    u = rng.integers(0, 3, (3, 8)).astype(np.float32)
    u[:, 5] = u[:, 1]
    u[:, 7] = u[:, 2]
    y, i = raw.UniqueV2(x=u, axis=np.array([1], np.int64), out_idx=tf.int32)
    save("UniqueV2", [u, np.array([1], np.int64)], [y, i])
    uf = rng.integers(-4, 4, 20).astype(np.int64)
    y, i = raw.Unique(x=uf, out_idx=tf.int64)
    save("Unique", [uf], [y, i])
    # bincount
    arr = rng.integers(0, 9, (3, 7)).astype(np.int32)
    w = f32(3, 7)
    save("DenseBincount", [arr, np.int32(6), w], raw.DenseBincount(input=arr, size=np.int32(6), weights=w))
    arr1 = arr.reshape(-1)
    save("Bincount", [arr1, np.int32(10), np.zeros(0, np.float32)],
         raw.Bincount(arr=arr1, size=np.int32(10), weights=np.zeros(0, np.float32)))
    # L2Loss
    lx = f32(64, 9)
    save("L2Loss", [lx], raw.L2Loss(t=lx))
    # MatrixDiagV3: a band of diagonals, each alignment; MatrixDiagPartV3 back
    for al in ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]:
        d = f32(2, 4, 4)
        k = np.array([-2, 1], np.int32)
        out = raw.MatrixDiagV3(diagonal=d, k=k, num_rows=np.int32(5), num_cols=np.int32(-1),
                               padding_value=np.float32(9.0), align=al)
        save("MatrixDiagV3_" + al, [d, k, np.int32(5), np.int32(-1), np.float32(9.0)], out)
        m = f32(2, 4, 6)
        k2 = np.array([-1, 3], np.int32)
        save("MatrixDiagPartV3_" + al, [m, k2, np.float32(-1.0)],
             raw.MatrixDiagPartV3(input=m, k=k2, padding_value=np.float32(-1.0), align=al))
    # Bucketize on float64 values
    bx = (rng.standard_normal((4, 6)) * 3).astype(np.float64)
    bx[0, 0] = 1.0  # exactly on a boundary
    save("Bucketize", [bx], raw.Bucketize(input=bx, boundaries=[-2.0, 0.0, 1.0, 2.5]))


if __name__ == "__main__":
    main()
