"""Prints TensorFlow's outputs for the small cases of the kernels of
GuaranteeConst/Debug*Identity, CheckNumericsV2, TopK, ApproximateEqual,
ReverseSequence, ExtractImagePatches, MaxPoolWithArgmax, SpaceToBatch,
BatchToSpace, DynamicPartition, DynamicStitch, FakeQuantWithMinMaxVarsPerChannel,
StringToNumber, Lgamma, Digamma, Erfinv, Ndtri, SoftmaxCrossEntropyWithLogits
and SparseSoftmaxCrossEntropyWithLogits, as C initialisers;
tests/kernels_{array,math,nn}_test.c embed them (each test names this script).

Run with a Python that has TensorFlow (2.21) and numpy:
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_inference_op_values.py
The inputs are fixed (aranges and literals), so the output is the same on
every run. Error cases print TensorFlow's message."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

raw = tf.raw_ops


def c_list(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return ", ".join("1" if v else "0" for v in a.ravel())
    if a.dtype.kind == "f":
        return ", ".join(f"{float(v):.9g}f" if a.dtype == np.float32 else repr(float(v)) for v in a.ravel())
    return ", ".join(str(int(v)) for v in a.ravel())


def show(name, *outs):
    for k, o in enumerate(outs):
        o = np.asarray(o)
        print(f"/* {name} out{k} shape {list(o.shape)} */ {{{c_list(o)}}}")


def err(name, fn):
    try:
        fn()
        print(f"/* {name}: no error */")
    except tf.errors.OpError as e:
        print(f"/* {name} error */ {e.message.splitlines()[0]!r}")


def main():
    # TopK (v1, k an attr): TensorFlow 2.21 has no runnable CPU kernel for it
    # (its registration asks for an index_type attr the v1 op lacks), and its
    # documented meaning is TopKV2's with the same k, which is what is
    # computed here. Ties keep the lower index first.
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 0]], np.float32)
    show("TopK k=2", *raw.TopKV2(input=x, k=2, sorted=True))
    show("TopK k=3 int32", *raw.TopKV2(input=x.astype(np.int32), k=3, sorted=True))
    err("TopK k=5", lambda: raw.TopKV2(input=x, k=5))

    # ApproximateEqual: |x - y| <= tolerance in T (2.0 vs 2.5 at 0.5 is true)
    a = np.array([1.0, 2.0, 3.0, 1.5, -1.0, np.nan], np.float32)
    b = np.array([1.0, 2.5, 2.0, 1.25, -1.4999, 1.0], np.float32)
    show("ApproximateEqual f32 tol=0.5", raw.ApproximateEqual(x=a, y=b, tolerance=0.5))
    show("ApproximateEqual f64 tol=1e-5", raw.ApproximateEqual(x=np.array([0.0, 0.0, 1.0]),
                                                                y=np.array([1e-5, 9.9e-6, 1.0]), tolerance=1e-5))
    err("ApproximateEqual shapes", lambda: raw.ApproximateEqual(x=np.zeros((1, 2), np.float32),
                                                                y=np.zeros(2, np.float32)))

    # ReverseSequence: lengths shorter than the dim, and zero
    x = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    show("ReverseSequence b0 s1 [2,0,4]", raw.ReverseSequence(input=x, seq_lengths=np.array([2, 0, 4], np.int32),
                                                              seq_dim=1, batch_dim=0))
    y = np.arange(24, dtype=np.int32).reshape(4, 2, 3)
    show("ReverseSequence b2 s0 int64 [1,3,4]",
         raw.ReverseSequence(input=y, seq_lengths=np.array([1, 3, 4], np.int64), seq_dim=0, batch_dim=2))
    err("ReverseSequence too long", lambda: raw.ReverseSequence(
        input=x, seq_lengths=np.array([2, 5, 4], np.int32), seq_dim=1, batch_dim=0))
    err("ReverseSequence negative", lambda: raw.ReverseSequence(
        input=x, seq_lengths=np.array([2, -1, 4], np.int32), seq_dim=1, batch_dim=0))
    err("ReverseSequence count", lambda: raw.ReverseSequence(
        input=x, seq_lengths=np.array([2, 1], np.int32), seq_dim=1, batch_dim=0))

    # ExtractImagePatches: [1,4,5,2], ksizes 2x3, strides 2x2, rates 1x2
    x = np.arange(1, 41, dtype=np.float32).reshape(1, 4, 5, 2)
    for pad in ["SAME", "VALID"]:
        show(f"ExtractImagePatches {pad}", raw.ExtractImagePatches(images=x, ksizes=[1, 2, 3, 1], strides=[1, 2, 2, 1],
                                                                   rates=[1, 1, 2, 1], padding=pad))
    # MaxPoolWithArgmax: ties (first in window order wins), SAME borders
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
                  8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8, 8], np.float32).reshape(2, 3, 3, 2)
    for incl in [False, True]:
        show(f"MaxPoolWithArgmax SAME k2 s2 include_batch={incl}",
             *raw.MaxPoolWithArgmax(input=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME",
                                    include_batch_in_index=incl))
    show("MaxPoolWithArgmax VALID k2 s1 include_batch=True",
         *raw.MaxPoolWithArgmax(input=x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID",
                                include_batch_in_index=True))
    err("MaxPoolWithArgmax Targmax int32", lambda: raw.MaxPoolWithArgmax(
        input=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME", Targmax=tf.int32))

    # SpaceToBatch / BatchToSpace (v1)
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    show("SpaceToBatch bs2 pad [[1,1],[2,0]]", raw.SpaceToBatch(input=x, paddings=np.array([[1, 1], [2, 0]], np.int32),
                                                                block_size=2))
    y = np.arange(1, 17, dtype=np.float32).reshape(4, 2, 2, 1)
    show("BatchToSpace bs2 crops [[0,1],[1,0]]", raw.BatchToSpace(input=y, crops=np.array([[0, 1], [1, 0]], np.int64),
                                                                  block_size=2))

    # CheckNumericsV2 messages
    for vals in ([1.0, np.inf], [1.0, -np.inf], [np.inf, -np.inf], [np.nan, -np.inf], [np.nan],
                 [np.nan, np.inf, -np.inf]):
        err(f"CheckNumericsV2 {vals}", lambda: raw.CheckNumericsV2(tensor=np.array(vals, np.float32), message="msg"))

    batch2()


def batch2():
    # DynamicPartition: partitions of rank 2 on data of rank 3; an empty partition
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    pt = np.array([[2, 0, 2], [0, 2, 3]], np.int32)
    show("DynamicPartition n=4", *raw.DynamicPartition(data=x, partitions=pt, num_partitions=4))
    show("DynamicPartition scalar", *raw.DynamicPartition(data=np.float32(5), partitions=np.int32(1),
                                                           num_partitions=2))
    err("DynamicPartition out of range", lambda: raw.DynamicPartition(data=x, partitions=np.array(
        [[2, 0, 2], [0, 4, 3]], np.int32), num_partitions=4))
    err("DynamicPartition negative", lambda: raw.DynamicPartition(data=x, partitions=np.array(
        [[2, 0, -1], [0, 1, 3]], np.int32), num_partitions=4))
    err("DynamicPartition shape", lambda: raw.DynamicPartition(data=x, partitions=np.zeros((2, 2), np.int32),
                                                               num_partitions=4))
    print("/* DynamicPartition strings */", [v.numpy().tolist() for v in raw.DynamicPartition(
        data=np.array(["a", "bc", "", "def"]), partitions=np.array([1, 0, 1, 1], np.int32), num_partitions=2)])

    # DynamicStitch: overlapping indices (a later one wins), a gap (zero), 2-D indices
    ix = [np.array([0, 4], np.int32), np.array([[1, 4], [6, 1]], np.int32)]
    dt = [np.arange(4, dtype=np.float32).reshape(2, 2) + 1,
          np.arange(8, dtype=np.float32).reshape(2, 2, 2) + 10]
    show("DynamicStitch", raw.DynamicStitch(indices=ix, data=dt))
    show("ParallelDynamicStitch", raw.ParallelDynamicStitch(indices=[np.array([2, 0], np.int32)],
                                                            data=[np.array([[1, 2], [3, 4]], np.int32)]))
    print("/* DynamicStitch strings */", raw.DynamicStitch(
        indices=[np.array([2, 0], np.int32), np.array([3], np.int32)],
        data=[np.array(["x", "yz"]), np.array(["w"])]).numpy().tolist())
    err("DynamicStitch negative", lambda: raw.DynamicStitch(indices=[np.array([0, 1], np.int32),
                                                                     np.array([2, -1], np.int32)],
                                                            data=[np.zeros(2, np.float32), np.zeros(2, np.float32)]))
    err("DynamicStitch starts", lambda: raw.DynamicStitch(indices=[np.array([0, 1], np.int32)],
                                                          data=[np.zeros((3, 2), np.float32)]))
    err("DynamicStitch extra", lambda: raw.DynamicStitch(indices=[np.array([0, 1], np.int32), np.array([2], np.int32)],
                                                         data=[np.zeros((2, 3), np.float32), np.zeros((1, 2), np.float32)]))

    # FakeQuantWithMinMaxVarsPerChannel: 3 channels with their own ranges
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3)
    mn = np.array([-1.0, -2.5, 0.3], np.float32)
    mx = np.array([1.0, 0.7, 2.9], np.float32)
    show("FakeQuantPerChannel 8 bits", raw.FakeQuantWithMinMaxVarsPerChannel(inputs=x, min=mn, max=mx))
    show("FakeQuantPerChannel 4 bits narrow", raw.FakeQuantWithMinMaxVarsPerChannel(inputs=x, min=mn, max=mx,
                                                                                    num_bits=4, narrow_range=True))
    err("FakeQuantPerChannel min size", lambda: raw.FakeQuantWithMinMaxVarsPerChannel(
        inputs=x, min=mn[:2], max=mx))
    err("FakeQuantPerChannel max size", lambda: raw.FakeQuantWithMinMaxVarsPerChannel(
        inputs=x, min=mn, max=mx[:2]))
    err("FakeQuantPerChannel min rank", lambda: raw.FakeQuantWithMinMaxVarsPerChannel(
        inputs=x, min=np.float32(0), max=mx))
    err("FakeQuantPerChannel min > max", lambda: raw.FakeQuantWithMinMaxVarsPerChannel(
        inputs=x, min=mx, max=mn))

    # StringToNumber: TensorFlow's parse rules (spaces, signs, hex, inf/nan, range)
    good = {tf.float32: [" 1.5 ", "+1", "-0", "0x10", "1e-50", "3.5e38", "-Infinity", "\t.5\n", "2147483647"],
            tf.float64: ["0.1", "1e400", "3.5e38", "nan(1)", "5."],
            tf.int32: [" -2147483648", "+7", "0012\v", "2147483647"],
            tf.int64: ["-9223372036854775808", "9223372036854775807", " 42 "]}
    for t, vals in good.items():
        out = raw.StringToNumber(string_tensor=vals, out_type=t).numpy()
        print(f"/* StringToNumber {t.name} {vals!r} */ {{{c_list(out)}}}")
    for t, bad in [(tf.float32, "1 2"), (tf.float32, ""), (tf.float32, "+ 1"), (tf.float64, "1e"),
                   (tf.int32, "2147483648"), (tf.int32, "1.0"), (tf.int64, "9223372036854775808"), (tf.int64, "0x10")]:
        err(f"StringToNumber {t.name} {bad!r}", lambda: raw.StringToNumber(string_tensor=[bad], out_type=t))

    # Special functions: poles, negative non-integers, tails (float32 and float64)
    special = {"Lgamma": [-3.0, -2.5, -0.5, 0.0, 1e-6, 0.5, 1.0, 2.0, 3.7, 30.5, 1e6, -np.inf, np.inf, np.nan],
               "Digamma": [-3.0, -2.5, -0.5, -1e-4, 0.0, 1e-6, 0.5, 1.0, 1.4616, 3.7, 1e6, -np.inf, np.inf],
               "Erfinv": [-1.0, -0.999, -0.5, -1e-3, 0.0, 0.3, 0.9, 0.9999, 1.0, 1.5],
               "Ndtri": [0.0, 1e-30, 1e-6, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-6, 1.0, -0.5]}
    for op, vals in special.items():
        for dt in [np.float32, np.float64]:
            x = np.array(vals, dt)
            show(f"{op} {dt.__name__} {vals}", getattr(raw, op)(x=x))

    # SoftmaxCrossEntropyWithLogits: same shapes, and logits [1,4] broadcast against labels [3,4]
    lg = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 100.0, 0.0], [0.0, 0.0, 0.0, 0.0]], np.float32)
    lb = np.array([[0.0, 0.0, 1.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.3, 0.4]], np.float32)
    show("SoftmaxCrossEntropyWithLogits", *raw.SoftmaxCrossEntropyWithLogits(features=lg, labels=lb))
    show("SoftmaxCrossEntropyWithLogits f64 logits [1,4]",
         *raw.SoftmaxCrossEntropyWithLogits(features=lg[:1].astype(np.float64), labels=lb.astype(np.float64)))
    show("SoftmaxCrossEntropyWithLogits labels [4]",
         *raw.SoftmaxCrossEntropyWithLogits(features=lg, labels=lb[2]))
    err("SoftmaxCrossEntropyWithLogits bcast", lambda: raw.SoftmaxCrossEntropyWithLogits(
        features=lg, labels=lb[:2, :3]))
    err("SoftmaxCrossEntropyWithLogits rank", lambda: raw.SoftmaxCrossEntropyWithLogits(
        features=lg[0], labels=lb[0]))
    # SparseSoftmaxCrossEntropyWithLogits: int32 and int64 labels; out of range
    show("SparseSoftmaxCrossEntropyWithLogits", *raw.SparseSoftmaxCrossEntropyWithLogits(
        features=lg, labels=np.array([2, 0, 3], np.int32)))
    show("SparseSoftmaxCrossEntropyWithLogits f64 int64", *raw.SparseSoftmaxCrossEntropyWithLogits(
        features=lg.astype(np.float64), labels=np.array([3, 2, 1], np.int64)))
    for bad in ([2, 4, 1], [2, -1, 7]):
        err(f"SparseSoftmaxCrossEntropyWithLogits labels {bad}", lambda: raw.SparseSoftmaxCrossEntropyWithLogits(
            features=lg, labels=np.array(bad, np.int32)))
    err("SparseSoftmaxCrossEntropyWithLogits logits rank", lambda: raw.SparseSoftmaxCrossEntropyWithLogits(
        features=lg[0], labels=np.array([1], np.int32)))
    err("SparseSoftmaxCrossEntropyWithLogits labels rank", lambda: raw.SparseSoftmaxCrossEntropyWithLogits(
        features=lg, labels=np.array([[1, 2, 3]], np.int32)))
    err("SparseSoftmaxCrossEntropyWithLogits batch", lambda: raw.SparseSoftmaxCrossEntropyWithLogits(
        features=lg, labels=np.array([1, 2], np.int32)))
    err("SparseSoftmaxCrossEntropyWithLogits classes", lambda: raw.SparseSoftmaxCrossEntropyWithLogits(
        features=np.zeros((2, 0), np.float32), labels=np.array([0, 0], np.int32)))


if __name__ == "__main__":
    main()
