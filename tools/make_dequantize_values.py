"""Prints TensorFlow's Dequantize outputs for the cases of
tests/kernels_dequantize_test.c, as C initialisers: floats as hex literals
(exact), bfloat16 as their bits. Each T (qint8, quint8, qint16, quint16,
qint32) in each mode (MIN_COMBINED, MIN_FIRST, SCALED, narrow_range both
ways), per channel (axis 0 and 1), bfloat16 output, and the error messages.

Run with a Python that has TensorFlow (2.21) and numpy, oneDNN off (with it
on, TensorFlow rewrites Dequantize into its oneDNN kernel):
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_dequantize_values.py"""
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

raw = tf.raw_ops

INPUTS = {
    "qint8": [-128, -1, 0, 1, 127, 77],
    "quint8": [0, 1, 128, 255, 77, 200],
    "qint16": [-32768, -1, 0, 32767, 1234, -4321],
    "quint16": [0, 1, 32768, 65535, 1234, 54321],
    "qint32": [-2147483648, -5, 7, 2147483647, 123456789, -987654],
}


def hexf(v):
    return ", ".join(float(x).hex() + "f" for x in np.asarray(v, np.float32).ravel())


def show(name, v):
    print(f"/* {name} */ {{{hexf(v)}}}")


def err(name, fn):
    try:
        fn()
        print(f"/* {name}: no error */")
    except Exception as e:
        print(f"/* {name} error */ {str(e).splitlines()[0]!r}")


for tname, vals in INPUTS.items():
    x = tf.constant(vals, getattr(tf, tname))
    for lo, hi in [(-1.5, 2.25), (-0.7, 0.3), (0.5, 0.5)]:
        for mode in ["MIN_COMBINED", "MIN_FIRST", "SCALED"]:
            for nr in ([False, True] if mode == "SCALED" else [False]):
                r = raw.Dequantize(input=x, min_range=tf.constant(lo), max_range=tf.constant(hi), mode=mode,
                                   narrow_range=nr)
                show(f"{tname} [{lo}, {hi}] {mode} narrow={nr}", r)

xc = tf.constant(np.array([-128, -64, -1, 0, 1, 63, 127, 100, -100, 5, -5, 42], np.int32).reshape(2, 3, 2), tf.qint8)
for axis, mins, maxs in [(1, [-1.0, -0.5, -4.0], [1.0, 2.0, 0.25]), (0, [-3.0, -0.1], [3.0, 0.2]),
                         (2, [-1.0, -2.0], [1.5, 0.5])]:
    for mode in ["MIN_COMBINED", "SCALED"]:
        for nr in ([False, True] if mode == "SCALED" else [False]):
            r = raw.Dequantize(input=xc, min_range=tf.constant(mins), max_range=tf.constant(maxs), mode=mode,
                               narrow_range=nr, axis=axis)
            show(f"per-channel axis={axis} {mode} narrow={nr}", r)
for tname in ["qint8", "quint8", "qint32"]:
    x = tf.constant(INPUTS[tname], getattr(tf, tname))
    r = raw.Dequantize(input=x, min_range=tf.constant(-1.5), max_range=tf.constant(2.25), dtype=tf.bfloat16)
    print(f"/* bfloat16 {tname} bits */ {{{', '.join(hex(v) for v in tf.bitcast(r, tf.uint16).numpy())}}}")

err("axis 3 of rank 3", lambda: raw.Dequantize(input=xc, min_range=[0.0], max_range=[1.0], axis=3))
err("min of 2 for axis 1", lambda: raw.Dequantize(input=xc, min_range=[0.0, 0.0], max_range=[1.0, 1.0, 1.0], axis=1))
err("max of 2 for axis 1", lambda: raw.Dequantize(input=xc, min_range=[0.0, 0.0, 0.0], max_range=[1.0, 1.0], axis=1))
err("MIN_FIRST axis 1", lambda: raw.Dequantize(input=xc, min_range=[0.0] * 3, max_range=[1.0] * 3, axis=1,
                                               mode="MIN_FIRST"))
err("bfloat16 SCALED", lambda: raw.Dequantize(input=xc, min_range=0.0, max_range=1.0, mode="SCALED", dtype=tf.bfloat16))
