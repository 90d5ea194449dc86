"""Prints TensorFlow's outputs of CTCGreedyDecoder and CTCBeamSearchDecoder
for the small cases of tests/kernels_ctc_test.c, as C initialisers (the test
embeds them), and TensorFlow's messages for the bad inputs.

Run with a Python that has TensorFlow (2.21) and numpy:
    PY=$(tools/tfvenv.sh); $PY tools/make_ctc_op_values.py
The inputs are fixed literals, so the output is the same on every run."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

raw = tf.raw_ops

# max_time 6, batch 2, 5 classes (blank last for the beam search). Values are
# multiples of 0.5, so rows have ties: equal maxima for the greedy decoder and
# equal probabilities for beam entries.
X = np.array([
    [[1.0, 0.5, 0.5, 0.0, 1.0], [0.0, 2.0, 2.0, 0.5, 1.0]],
    [[2.0, 0.0, 0.5, 0.5, 1.5], [0.5, 0.5, 0.5, 0.5, 0.5]],
    [[2.0, 0.0, 1.0, 0.5, 0.0], [1.0, 0.0, 2.5, 0.0, 2.5]],
    [[0.0, 1.5, 1.5, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.5]],
    [[0.5, 0.5, 0.0, 2.0, 2.0], [3.0, 0.0, 0.0, 0.0, 1.0]],
    [[0.0, 0.0, 0.5, 2.0, 0.0], [0.0, 1.0, 0.5, 1.5, 1.5]],
], np.float32)
LENS = np.array([6, 4], np.int32)


def c_list(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return ", ".join(f"{float(v):.9g}f" if a.dtype == np.float32 else repr(float(v)) for v in a.ravel())
    return ", ".join(str(int(v)) for v in a.ravel())


def show(name, r):
    ind = r.decoded_indices if isinstance(r.decoded_indices, list) else [r.decoded_indices]
    val = r.decoded_values if isinstance(r.decoded_values, list) else [r.decoded_values]
    shp = r.decoded_shape if isinstance(r.decoded_shape, list) else [r.decoded_shape]
    print(f"/* {name} */")
    for p, (i, v, s) in enumerate(zip(ind, val, shp)):
        print(f"  /* path {p}: indices {list(i.shape)} */ {{{c_list(i)}}}, /* values */ {{{c_list(v)}}}, "
              f"/* shape */ {{{c_list(s)}}}")
    lp = r.log_probability.numpy()
    print(f"  /* log_probability {list(lp.shape)} */ {{{c_list(lp)}}}")


def err(name, fn):
    try:
        fn()
        print(f"/* {name}: no error */")
    except tf.errors.OpError as e:
        print(f"/* {name} error */ {e.message.splitlines()[0]!r}")


def main():
    for dt in [np.float32, np.float64]:
        x = tf.constant(X.astype(dt))   # an explicit tensor: raw ops fed numpy arrays of another dtype than a
        # previous call may run that call's dtype
        for merge in [False, True]:
            show(f"greedy {dt.__name__} merge={merge}", raw.CTCGreedyDecoder(
                inputs=x, sequence_length=LENS, merge_repeated=merge))
        show(f"greedy {dt.__name__} merge=True blank_index=0", raw.CTCGreedyDecoder(
            inputs=x, sequence_length=LENS, merge_repeated=True, blank_index=0))
        show(f"greedy {dt.__name__} merge=False blank_index=-3", raw.CTCGreedyDecoder(
            inputs=x, sequence_length=LENS, merge_repeated=False, blank_index=-3))
        for width, top in [(1, 1), (4, 1), (4, 3)]:
            for merge in [True, False]:
                show(f"beam {dt.__name__} width={width} top={top} merge={merge}", raw.CTCBeamSearchDecoder(
                    inputs=x, sequence_length=LENS, beam_width=width, top_paths=top, merge_repeated=merge))
    # a zero and a negative length decode nothing
    show("greedy lens [0,-1]", raw.CTCGreedyDecoder(inputs=X, sequence_length=[0, -1]))
    show("beam width=2 top=1 lens [-1,2]", raw.CTCBeamSearchDecoder(
        inputs=X, sequence_length=[-1, 2], beam_width=2, top_paths=1))

    z = np.zeros((3, 2, 4), np.float32)
    err("len mismatch", lambda: raw.CTCGreedyDecoder(inputs=z, sequence_length=[1, 2, 3]))
    err("length over max_time", lambda: raw.CTCGreedyDecoder(inputs=z, sequence_length=[1, 4]))
    err("lengths not a vector", lambda: raw.CTCGreedyDecoder(inputs=z, sequence_length=[[1, 1]]))
    err("inputs rank 2", lambda: raw.CTCGreedyDecoder(inputs=z[0], sequence_length=[1, 1]))
    err("inputs empty", lambda: raw.CTCGreedyDecoder(inputs=z[:0], sequence_length=[0, 0]))
    err("blank_index 4", lambda: raw.CTCGreedyDecoder(inputs=z, sequence_length=[1, 1], blank_index=4))
    err("blank_index -5", lambda: raw.CTCGreedyDecoder(inputs=z, sequence_length=[1, 1], blank_index=-5))
    err("beam length over max_time", lambda: raw.CTCBeamSearchDecoder(
        inputs=z, sequence_length=[4, 1], beam_width=2, top_paths=1))
    err("beam top_paths > beam_width", lambda: raw.CTCBeamSearchDecoder(
        inputs=z, sequence_length=[1, 1], beam_width=2, top_paths=3))
    err("beam fewer leaves than top_paths", lambda: raw.CTCBeamSearchDecoder(
        inputs=z, sequence_length=[1, 0], beam_width=4, top_paths=3))


if __name__ == "__main__":
    main()
