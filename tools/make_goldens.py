#!/usr/bin/env python3
"""Makes the golden test data of tests/golden_test.c: TensorFlow's own outputs.

Builds small real Keras models with fixed seeds, freezes each to a GraphDef
(convert_variables_to_constants_v2, inference mode) and records fixed inputs
and TensorFlow's outputs on them as .npy files. Does the same (inputs and
outputs only, not the model) for the corpus models TensorFlow can run on CPU.

Models (tests/data/golden/<name>.pb):
  cnn_bn_residual  Conv2D+BatchNorm+ReLU blocks, an Add skip, MaxPool, a strided
                   conv, GlobalAveragePooling, Dense+Softmax.
  mobilenet_v2     two MobileNetV2 inverted-residual blocks: 1x1 expand Conv+BN+
                   ReLU6, DepthwiseConv2D+BN+ReLU6, 1x1 project Conv+BN; the
                   first (stride 1) with its residual add, the second stride 2.
  lstm             keras.layers.LSTM (return_sequences=False) + Dense, frozen
                   with lower_control_flow=False: a functional While whose body
                   uses the TensorList ops, as TF2 emits it inside functions.
  lstm_v1          the same model frozen with lower_control_flow=True (the
                   default of convert_variables_to_constants_v2): the While
                   lowered to v1 control flow (Enter/Exit/Switch/Merge/
                   NextIteration/LoopCond) around the same TensorList ops.
  transformer      a transformer encoder layer: MultiHeadAttention (Einsum),
                   residual adds, LayerNormalization, Dense with gelu, Dense.
Corpus models (read from the corpus at test time; only the .npy are stored):
  ds_cnn_s         ARM-software/ML-KWS-for-MCU DS_CNN_S.pb fed at the `Mfcc`
                   tensor (the audio front end is cut off), fetching the logits
                   and labels_softmax.
  tfonnx_fc_layers, tfonnx_lstm, tfonnx_gru
                   onnx/tensorflow-onnx tests/models/*/frozen.pb, fed X
                   (2x784) and keep_prob=1 where the graph has it.

Outputs, in tests/data/golden/: <name>.pb, <name>.in<k>.npy (feed k),
<name>.out<k>.npy (fetch k), and manifest.txt (see its header), which
tests/golden_test.c reads.

The reference numbers come from TensorFlow's CPU kernels with oneDNN off
(TF_ENABLE_ONEDNN_OPTS=0) and one thread, running the frozen GraphDef itself
(tf.compat.v1.Session over import_graph_def), so they do not depend on how many
cores the machine has. For the Keras models the script also checks that the
frozen graph gives the Keras model's own output, and prints how far TensorFlow's
float32 result is from the same model evaluated in float64: the float32 noise
floor the 1e-5 tolerance is measured against.

Usage (from the repository root), in a virtualenv with the packages of
tools/requirements-tools.txt:
    python tools/make_goldens.py [--out DIR] [--corpus DIR]
defaults: tests/data/golden and ../shared/corpus (models missing from the
corpus are skipped with a note). Deterministic: a rerun writes the same bytes.
"""

import argparse
import hashlib
import os
import sys

# Before TensorFlow is imported: reference kernels, no GPU, quiet logs.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "golden")
DEFAULT_CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")

# Relative L2 error allowed in tests/golden_test.c (float32 outputs).
TOL_F32 = 1e-5

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)


# ---- helpers ---------------------------------------------------------------------------------


def randomize_weights(model, seed):
    """Gives every weight a seeded, non-trivial value: Keras initializes biases
    and BatchNorm's beta/moving_mean to 0 and gamma/moving_variance to 1, which
    would leave those paths untested."""
    rng = np.random.RandomState(seed)
    for w in model.weights:
        shape = tuple(w.shape)
        name = w.path if hasattr(w, "path") else w.name
        leaf = name.split("/")[-1]
        if leaf.startswith("moving_variance"):
            v = rng.uniform(0.5, 1.5, shape)
        elif leaf.startswith("gamma"):
            v = rng.uniform(0.7, 1.3, shape)
        elif leaf.startswith(("beta", "moving_mean", "bias")):
            v = rng.normal(0.0, 0.2, shape)
        else:
            continue  # kernels keep their seeded Keras initialization
        w.assign(v.astype(w.dtype))


def freeze(model, specs, lower_control_flow):
    """Freezes model (inference mode) to a GraphDef. Returns (graph_def, feed
    tensor names, fetch tensor names)."""
    fn = tf.function(lambda *xs: model(xs[0] if len(xs) == 1 else list(xs), training=False))
    cf = fn.get_concrete_function(*specs)
    frozen = convert_variables_to_constants_v2(cf, lower_control_flow=lower_control_flow)
    gd = canonicalize(frozen.graph.as_graph_def())
    feeds = [t.name for t in frozen.inputs]
    fetches = [t.name for t in frozen.outputs]
    return gd, feeds, fetches


def canonicalize(gd):
    """Makes the frozen GraphDef the same bytes on every run. Lowering a While
    (lower_control_flow=True) is not deterministic in TensorFlow 2.21: it
    leaves a varying number of unconnected Placeholders named
    unused_control_flow_input_<k>, sets the internal attr
    _has_manual_control_dependencies on a varying set of nodes, and varies the
    node order. Those placeholders and that attr are dropped and the nodes
    sorted by name (a GraphDef's node order carries no meaning)."""
    consumed = {i.lstrip("^").split(":")[0] for n in gd.node for i in n.input}
    for f in gd.library.function:
        for n in f.node_def:
            n.attr.pop("_has_manual_control_dependencies", None)
    nodes = []
    for n in gd.node:
        if n.op == "Placeholder" and n.name.startswith("unused_control_flow_input") and n.name not in consumed:
            continue
        n.attr.pop("_has_manual_control_dependencies", None)
        nodes.append(n)
    nodes.sort(key=lambda n: n.name)
    out = tf.compat.v1.GraphDef()
    out.CopyFrom(gd)
    del out.node[:]
    out.node.extend(nodes)
    return out


def run_graph_def(gd, feeds, fetches):
    """TensorFlow's outputs for the GraphDef itself (graph mode, one thread)."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=g, config=cfg) as s:
        return s.run(fetches, feed_dict=dict(feeds))


def load_graph_def(path):
    gd = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        gd.ParseFromString(f.read())
    return gd


def rel_l2(a, ref):
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    d = np.linalg.norm((a - ref).ravel())
    n = np.linalg.norm(ref.ravel())
    return d / n if n > 0 else d


class Writer:
    def __init__(self, out):
        self.out = out
        self.entries = []
        self.written = []

    def npy(self, fname, arr):
        path = os.path.join(self.out, fname)
        np.save(path, np.ascontiguousarray(arr), allow_pickle=False)
        self.written.append(fname)

    def pb(self, fname, gd):
        path = os.path.join(self.out, fname)
        with open(path + ".tmp", "wb") as f:
            f.write(gd.SerializeToString(deterministic=True))
        os.replace(path + ".tmp", path)
        self.written.append(fname)

    def entry(self, name, graph, freeze_note, feeds, fetches, outputs, tol=TOL_F32, note=None):
        """feeds: [(tensor, array)], fetches: [tensor], outputs: TF's arrays."""
        lines = ["model %s" % name]
        if note:
            lines += ["# " + line for line in note]
        lines += ["graph %s" % graph, "freeze %s" % freeze_note, "tol %.0e" % tol]
        for k, (t, arr) in enumerate(feeds):
            f = "%s.in%d.npy" % (name, k)
            self.npy(f, arr)
            lines.append("feed %s %s" % (t, f))
        for k, (t, arr) in enumerate(zip(fetches, outputs)):
            f = "%s.out%d.npy" % (name, k)
            self.npy(f, arr)
            lines.append("fetch %s %s" % (t, f))
        lines.append("end")
        self.entries.append("\n".join(lines))

    def manifest(self):
        head = [
            "# Golden outputs of TensorFlow, read by tests/golden_test.c.",
            "# Written by tools/make_goldens.py (do not edit): TensorFlow %s, Keras %s, numpy %s,"
            % (tf.__version__, keras.__version__, np.__version__),
            "# CPU kernels with oneDNN off, one thread, on the frozen GraphDef itself.",
            "# One block per model:",
            "#   model NAME",
            "#   graph golden/FILE.pb       (under tests/data) or corpus/PATH.pb (under GN_CORPUS_DIR;",
            "#                              the test skips when the corpus is absent)",
            "#   freeze HOW                 how the model was frozen",
            "#   tol X                      relative L2 error allowed for float outputs",
            "#   feed TENSOR FILE.npy       (files relative to this directory), in feed order",
            "#   fetch TENSOR FILE.npy      TensorFlow's output, in fetch order",
            "#   end",
            "",
        ]
        with open(os.path.join(self.out, "manifest.txt"), "w") as f:
            f.write("\n".join(head) + "\n\n".join(self.entries) + "\n")
        self.written.append("manifest.txt")


# ---- the Keras models --------------------------------------------------------------------------


def conv_bn(x, filters, kernel, name, strides=1, act="relu"):
    x = keras.layers.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False, name=name + "_conv")(x)
    x = keras.layers.BatchNormalization(epsilon=1e-3, name=name + "_bn")(x)
    if act == "relu":
        x = keras.layers.ReLU(name=name + "_relu")(x)
    elif act == "relu6":
        x = keras.layers.ReLU(6.0, name=name + "_relu6")(x)
    return x


def build_cnn_bn_residual():
    inp = keras.Input((16, 16, 3), name="x")
    h = conv_bn(inp, 8, 3, "stem")
    r = conv_bn(h, 8, 3, "res_a")
    r = conv_bn(r, 8, 3, "res_b", act=None)
    h = keras.layers.Add(name="skip")([h, r])
    h = keras.layers.ReLU(name="skip_relu")(h)
    h = keras.layers.MaxPooling2D(2, name="pool")(h)
    h = conv_bn(h, 16, 3, "down", strides=2)
    h = keras.layers.GlobalAveragePooling2D(name="gap")(h)
    out = keras.layers.Dense(10, activation="softmax", name="head")(h)
    return keras.Model(inp, out, name="cnn_bn_residual"), [(2, 16, 16, 3)]


def inverted_residual(x, cin, cout, expand, stride, name):
    h = conv_bn(x, cin * expand, 1, name + "_expand", act="relu6")
    h = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False, name=name + "_dw")(h)
    h = keras.layers.BatchNormalization(epsilon=1e-3, name=name + "_dw_bn")(h)
    h = keras.layers.ReLU(6.0, name=name + "_dw_relu6")(h)
    h = conv_bn(h, cout, 1, name + "_project", act=None)
    if stride == 1 and cin == cout:
        h = keras.layers.Add(name=name + "_add")([x, h])
    return h


def build_mobilenet_v2():
    inp = keras.Input((10, 10, 8), name="x")
    h = inverted_residual(inp, 8, 8, 6, 1, "block1")
    h = inverted_residual(h, 8, 16, 6, 2, "block2")
    return keras.Model(inp, h, name="mobilenet_v2"), [(2, 10, 10, 8)]


def build_lstm():
    inp = keras.Input((7, 5), name="x")
    h = keras.layers.LSTM(12, return_sequences=False, name="lstm")(inp)
    out = keras.layers.Dense(4, name="head")(h)
    return keras.Model(inp, out, name="lstm"), [(2, 7, 5)]


def build_transformer():
    seq, d_model, heads, ff = 8, 16, 2, 32
    inp = keras.Input((seq, d_model), name="x")
    a = keras.layers.MultiHeadAttention(heads, d_model // heads, name="mha")(inp, inp)
    h = keras.layers.Add(name="res1")([inp, a])
    h = keras.layers.LayerNormalization(epsilon=1e-6, name="ln1")(h)
    f = keras.layers.Dense(ff, activation="gelu", name="ff1")(h)
    f = keras.layers.Dense(d_model, name="ff2")(f)
    h = keras.layers.Add(name="res2")([h, f])
    out = keras.layers.LayerNormalization(epsilon=1e-6, name="ln2")(h)
    return keras.Model(inp, out, name="transformer"), [(2, seq, d_model)]


# (name, builder, seed, lower_control_flow): lstm_v1 is the lstm model itself
# (same seed, same weights, same inputs), frozen the other way.
KERAS_MODELS = [
    ("cnn_bn_residual", build_cnn_bn_residual, 101, True),
    ("mobilenet_v2", build_mobilenet_v2, 102, True),
    ("lstm", build_lstm, 103, False),
    ("lstm_v1", build_lstm, 103, True),
    ("transformer", build_transformer, 104, True),
]


def float64_output(builder, model32, inputs):
    """The same model, same weights, evaluated in float64 by Keras."""
    old_floatx, old_policy = keras.config.floatx(), keras.config.dtype_policy()
    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")
    try:
        model64, _ = builder()
    finally:
        keras.config.set_floatx(old_floatx)
        keras.config.set_dtype_policy(old_policy)
    if model64.layers[-1].compute_dtype != "float64":
        raise SystemExit("%s: could not build a float64 copy" % model32.name)
    model64.set_weights([w.astype(np.float64) for w in model32.get_weights()])
    return np.asarray(model64([x.astype(np.float64) for x in inputs] if len(inputs) > 1 else inputs[0].astype(np.float64), training=False))


def make_keras(w, name, builder, seed, lower):
    keras.utils.set_random_seed(seed)
    model, shapes = builder()
    randomize_weights(model, seed)
    specs = [
        tf.TensorSpec([None] + list(s[1:]), tf.float32, name=inp.name)
        for s, inp in zip(shapes, model.inputs)
    ]
    gd, feed_names, fetch_names = freeze(model, specs, lower)
    rng = np.random.RandomState(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    outs = run_graph_def(gd, zip(feed_names, inputs), fetch_names)
    # The frozen graph must compute what the Keras model computes.
    k_out = model(inputs[0] if len(inputs) == 1 else inputs, training=False)
    k_out = [np.asarray(k_out)] if not isinstance(k_out, (list, tuple)) else [np.asarray(o) for o in k_out]
    for o, ko in zip(outs, k_out):
        e = rel_l2(o, ko)
        if e > 1e-6:
            raise SystemExit("%s: the frozen graph differs from the Keras model (rel L2 %.3g)" % (name, e))
    e64 = rel_l2(outs[0], float64_output(builder, model, inputs))
    w.pb(name + ".pb", gd)
    note = [
        "Keras %s, seed %d; inputs standard normal (numpy RandomState(%d))" % (model.name, seed, seed),
        "TensorFlow float32 vs the same model in float64: rel L2 %.1e" % e64,
    ]
    w.entry(
        name,
        "golden/%s.pb" % name,
        "convert_variables_to_constants_v2 lower_control_flow=%s" % lower,
        list(zip(feed_names, inputs)),
        fetch_names,
        outs,
        note=note,
    )
    ops = sorted({n.op for n in gd.node} | {n.op for f in gd.library.function for n in f.node_def})
    print("%-17s %4d nodes, %d functions; f32 vs f64 rel L2 %.1e; ops: %s"
          % (name, len(gd.node), len(gd.library.function), e64, " ".join(ops)))


# ---- the corpus models ------------------------------------------------------------------------


def make_corpus(w, corpus):
    rng = np.random.RandomState(201)
    x = rng.uniform(0.0, 1.0, (2, 784)).astype(np.float32)  # MNIST-like pixels
    one = np.array(1.0, np.float32)
    models = [
        # DS_CNN_S: Mfcc gives [1, 49, 10] (1 channel, 49 frames, 10 coefficients) for its
        # one-second 16 kHz clip; random coefficients of MFCC-like magnitude.
        ("ds_cnn_s", "ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb",
         [("Mfcc:0", (rng.standard_normal((1, 49, 10)) * 8.0).astype(np.float32))],
         ["MobileNet/fc1/BiasAdd:0", "labels_softmax:0"],
         "fed at Mfcc (the audio front end is cut off)"),
        ("tfonnx_fc_layers", "onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb",
         [("X:0", x)], ["output:0"], "fed X"),
        ("tfonnx_lstm", "onnx__tensorflow-onnx/tests__models__lstm__frozen.pb",
         [("X:0", x), ("keep_prob:0", one)], ["output:0"], "fed X and keep_prob=1 (dropout is the identity)"),
        ("tfonnx_gru", "onnx__tensorflow-onnx/tests__models__gru__frozen.pb",
         [("X:0", x), ("keep_prob:0", one)], ["output:0"], "fed X and keep_prob=1 (dropout is the identity)"),
    ]
    for name, rel, feeds, fetches, how in models:
        path = os.path.join(corpus, rel)
        if not os.path.exists(path):
            print("%-17s skipped: %s not found" % (name, path))
            continue
        gd = load_graph_def(path)
        names = {n.name for n in gd.node}
        for t in [t for t, _ in feeds] + fetches:
            if t.split(":")[0] not in names:
                raise SystemExit("%s: no tensor %s in %s" % (name, t, rel))
        outs = run_graph_def(gd, feeds, fetches)
        w.entry(name, "corpus/" + rel, "frozen by its authors; " + how, feeds, fetches, outs)
        print("%-17s %4d nodes; fetches %s" % (name, len(gd.node), ", ".join(
            "%s %s" % (t, list(o.shape)) for t, o in zip(fetches, outs))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory (default tests/data/golden)")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS, help="the shared corpus (default ../shared/corpus)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    w = Writer(args.out)
    for name, builder, seed, lower in KERAS_MODELS:
        make_keras(w, name, builder, seed, lower)
    make_corpus(w, args.corpus)
    w.manifest()
    total = 0
    for f in sorted(w.written):
        p = os.path.join(args.out, f)
        total += os.path.getsize(p)
    digest = hashlib.sha256()
    for f in sorted(w.written):
        with open(os.path.join(args.out, f), "rb") as fh:
            digest.update(f.encode() + b"\0" + fh.read())
    print("wrote %d files, %d bytes, to %s (sha256 of all: %s)" % (len(w.written), total, args.out, digest.hexdigest()[:16]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
