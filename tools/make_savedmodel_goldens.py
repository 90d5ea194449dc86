#!/usr/bin/env python3
"""Writes TensorFlow's results for the corpus SavedModels' signatures under
tests/data/savedmodel/<model>/<signature>/: in_<key>.npy (deterministic inputs)
and out_<key>.npy (what TensorFlow computes), for tests/savedmodel_test.c.

TF2 models run through tf.saved_model.load(...).signatures[sig]; TF1 ones
through the v1 loader in a session (feeds and fetches by the signature's
tensor names). Unknown dims are 2. Floats are uniform in [-1, 1) from
RandomState(seed), seed fixed per model.

    PY=$(tools/tfvenv.sh)
    $PY tools/make_savedmodel_goldens.py

`make_savedmodel_goldens.py keras3` instead writes tests/data/savedmodel_keras3/: a
small Keras 3 model saved with tf.saved_model.save, whose serving function calls a
function marked for XLA (Keras compiles a grouped Conv2D so on the CPU) and runs a
GRU's While loop that takes the cell's variables as resource arguments, then a
tf.cond (an If) over a layer's variables; with
serving_default/in_x.npy and out_output_0.npy, TensorFlow's result.

`make_savedmodel_goldens.py sharded` instead writes tests/data/savedmodel_sharding/:
one small tf.Module (variables of several ranks and dtypes, a string vector, a
scalar, and a serving signature) saved by TensorFlow twice, as plain/ (the
default ShardByTaskPolicy: one data file) and as max_shard_200/ with
SaveOptions(experimental_sharding_callback=MaxShardSizePolicy(200)), where
tensors are sliced across shards. tests/savedmodel_write_test.c loads plain/,
saves it with the same policy and compares its variables/ with TensorFlow's.

`make_savedmodel_goldens.py captured` instead writes tests/data/savedmodel_captured/:
two tf.Module SavedModels whose functions take captured inputs. vocab_lookup: a
StaticHashTable from an asset file and tf.nn.embedding_lookup of a variable,
whose ResourceGather TensorFlow colocates with the FuncGraph's name of the
captured variable ("loc:@embedding_lookup/15", no node of the function).
loop_cond: a tf.while_loop writing a TensorArray, with a tf.cond inside whose
branches read a variable (the While and the If take it as a resource
argument). text_vectorization: a Keras 3 TextVectorization layer, adapted
(its vocabulary a MutableHashTable whose contents only the checkpoint holds),
an Embedding and a Dense, written by Model.export. parse_example: a TensorFlow
Serving style signature taking serialized tf.train.Example protos (a fixed-length
float feature with a default, a variable-length int64 feature through
embedding_lookup_sparse, a string feature hashed into buckets). ragged_text:
tf.strings.split into a RaggedTensor, its row lengths, hashed tokens summed per
row, each row's first token padded, the tokens joined again (RaggedRange,
UnsortedSegmentJoin). Each with serving_default/in_*.npy and out_*.npy.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.environ.get("GN_CORPUS_DIR", os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
MODEL = None
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel")

# (short name, corpus directory, TF1?, signatures)
MODELS = [
    ("half_plus_two_pbtxt", "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123",
     True, ["serving_default", "regress_x2_to_y3"]),
    ("half_plus_two_cpu", "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123",
     True, ["serving_default", "regress_x2_to_y3"]),
    ("half_plus_two_tf2_cpu", "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123",
     False, ["serving_default", "regress_x2_to_y3"]),
    ("counter", "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_counter__00000123",
     True, ["get_counter"]),
    ("lstm_from_sequential", "SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential",
     False, ["serving_default"]),
    ("kws_ref_model", "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model",
     False, ["serving_default"]),
    ("regression_savedmodel", "tensorflow__rust/examples__regression_savedmodel", False, ["w", "b"]),
    ("SimpleWhileLoop", "tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop",
     False, ["serving_default"]),
    ("chicago_taxi", "tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__1646034756",
     True, ["serving_default", "classification", "predict", "regression"]),
]

# signature inputs that are serialized tf.train.Examples: made from the graph's
# ParseExample node (every dense key its shape's count of values, each sparse key
# one value in 4 of 5 examples: the Chicago taxi transform reads at most one)
EXAMPLE_INPUTS = {("chicago_taxi", "examples"), ("chicago_taxi", "inputs")}


def examples_for(graph, seed, n=3):
    rng = np.random.RandomState(seed)
    op = [o for o in graph.get_operations() if o.type in ("ParseExampleV2", "ParseExample")][0]
    names = lambda t: [x.decode() for x in np.atleast_1d(tf.get_static_value(t))]  # noqa: E731
    sparse_keys, dense_keys = names(op.inputs[2]), names(op.inputs[3])
    sparse_types, dense_types = op.get_attr("sparse_types"), op.get_attr("Tdense")
    dense_shapes = op.get_attr("dense_shapes")

    def feature(dt, count):
        if dt == tf.string:
            words = [b"Cash", b"Credit Card", b"Unknown", b"x1"]
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[words[rng.randint(4)] for _ in range(count)]))
        if dt == tf.float32:
            return tf.train.Feature(float_list=tf.train.FloatList(value=rng.uniform(0, 10, count).tolist()))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=rng.randint(0, 24, count).tolist()))

    out = []
    while len(out) < n:
        f = {}
        for k, t in zip(sparse_keys, sparse_types):
            if rng.uniform() < 0.8:
                f[k] = feature(t, 1)
        for k, t, sh in zip(dense_keys, dense_types, dense_shapes):
            f[k] = feature(t, int(np.prod(sh.as_list())) if sh.as_list() else 1)
        e = tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()
        if e[-1:] != b"\0":   # the .npy string reader drops trailing NULs: drawn again
            out.append(e)
    return np.array(out, dtype=object).astype("S")


# inputs chosen by hand where random ones would not exercise the model (a
# loop that runs `value` times)
FIXED = {("SimpleWhileLoop", "value"): np.float32(7.5)}


def make_input(rng, spec_dtype, shape):
    shape = [2 if d is None or d < 0 else d for d in shape]
    if spec_dtype.is_floating:
        return rng.uniform(-1, 1, size=shape).astype(spec_dtype.as_numpy_dtype)
    if spec_dtype.is_integer:
        return rng.randint(0, 10, size=shape).astype(spec_dtype.as_numpy_dtype)
    raise ValueError("unsupported input dtype %s" % spec_dtype)


def save(dirpath, prefix, arrays):
    os.makedirs(dirpath, exist_ok=True)
    for k, v in sorted(arrays.items()):
        a = np.asarray(v)
        if a.dtype == object:   # strings as |S (an object array would be pickled)
            a = a.astype("S")
        np.save(os.path.join(dirpath, "%s_%s.npy" % (prefix, k)), a)


def run_tf1(path, sigs, seed):
    res = {}
    with tf.Graph().as_default():
        with tf.compat.v1.Session() as sess:
            mg = tf.compat.v1.saved_model.loader.load(sess, ["serve"], path)
            for i, sig in enumerate(sigs):
                sd = mg.signature_def[sig]
                rng = np.random.RandomState(seed + i)
                feeds, ins = {}, {}
                for k in sorted(sd.inputs):
                    ti = sd.inputs[k]
                    shape = [d.size for d in ti.tensor_shape.dim]
                    if (MODEL, k) in EXAMPLE_INPUTS:
                        v = examples_for(sess.graph, seed + i)
                    else:
                        v = make_input(rng, tf.as_dtype(ti.dtype), shape)
                    if (MODEL, k) in FIXED:
                        v = FIXED[(MODEL, k)]
                    ins[k] = v
                    feeds[ti.name] = v
                keys = sorted(sd.outputs)
                outs = sess.run([sd.outputs[k].name for k in keys], feed_dict=feeds)
                res[sig] = (ins, dict(zip(keys, outs)))
    return res


def run_tf2(path, sigs, seed):
    m = tf.saved_model.load(path)
    res = {}
    for i, sig in enumerate(sigs):
        f = m.signatures[sig]
        rng = np.random.RandomState(seed + i)
        ins = {}
        _, kw = f.structured_input_signature
        for k in sorted(kw):
            spec = kw[k]
            ins[k] = make_input(rng, spec.dtype, spec.shape.as_list() if spec.shape.rank is not None else [])
            if (MODEL, k) in FIXED:
                ins[k] = FIXED[(MODEL, k)]
        out = f(**{k: tf.constant(v) for k, v in ins.items()})
        res[sig] = (ins, {k: v.numpy() for k, v in out.items()})
    return res


SHARDING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel_sharding")


def write_sharding():
    import shutil
    shutil.rmtree(SHARDING, ignore_errors=True)
    for sub, policy in (("plain", None), ("max_shard_200", tf.train.experimental.MaxShardSizePolicy(200))):
        m = tf.Module()
        m.a = tf.Variable(np.arange(60, dtype=np.float32).reshape(10, 6) * 0.25 - 3.0)
        m.b = tf.Variable(np.arange(150, dtype=np.float32).reshape(3, 50) * -0.5)
        m.c = tf.Variable(np.arange(7, dtype=np.int64) * 1000003 - 5)
        m.d = tf.Variable(np.float32(1.75))
        m.e = tf.Variable(np.linspace(-2, 2, 60, dtype=np.float64).reshape(4, 5, 3))
        m.s = tf.Variable(tf.constant([b"alpha", b"", b"gamma" * 9]))
        m.w = tf.Variable(np.linspace(0, 1, 90, dtype=np.float32).reshape(3, 30))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32)])
        def serve(x):
            y = tf.matmul(x, tf.transpose(m.a)) * m.d
            return {"y": y + tf.reduce_sum(m.b) + tf.cast(tf.reduce_sum(m.c), tf.float32) * 0.0 +
                    tf.cast(tf.reduce_sum(m.e), tf.float32) + tf.reduce_sum(m.w)}
        m.serve = serve
        opts = tf.saved_model.SaveOptions(experimental_sharding_callback=policy)
        tf.saved_model.save(m, os.path.join(SHARDING, sub), signatures={"serving_default": serve}, options=opts)
        print("wrote", sub, sorted(os.listdir(os.path.join(SHARDING, sub, "variables"))))


KERAS3 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel_keras3")


def write_keras3():
    import shutil
    shutil.rmtree(KERAS3, ignore_errors=True)
    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    class Gated(L.Layer):   # tf.cond over the layer's own variables: an If taking them
        def build(self, shape):
            self.a = self.add_weight(shape=(shape[-1],), initializer="random_normal")
            self.b = self.add_weight(shape=(shape[-1],), initializer="random_normal")

        def call(self, t):
            return tf.cond(tf.reduce_mean(t) > 0, lambda: t * self.a, lambda: t + self.b)

    x = tf.keras.Input((6, 6, 4))
    h = L.Conv2D(4, 3, groups=2, padding="same", activation="relu")(x)
    h = L.Reshape((36, 4))(h)
    h = L.GRU(4)(h)
    h = Gated()(h)
    y = L.Dense(2)(h)
    model = tf.keras.Model(x, y)
    spec = tf.TensorSpec((None, 6, 6, 4), tf.float32, name="x")
    fn = tf.function(lambda t: {"output_0": model(t, training=False)}, input_signature=[spec])
    tf.saved_model.save(model, KERAS3, signatures={"serving_default": fn.get_concrete_function()})
    rng = np.random.RandomState(77)
    ins = {"x": rng.uniform(-1, 1, size=(2, 6, 6, 4)).astype(np.float32)}
    out = tf.saved_model.load(KERAS3).signatures["serving_default"](x=tf.constant(ins["x"]))
    d = os.path.join(KERAS3, "serving_default")
    save(d, "in", ins)
    save(d, "out", {k: v.numpy() for k, v in out.items()})
    print("keras3", {k: v.shape for k, v in out.items()})


CAPTURED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel_captured")


def write_captured():
    import shutil
    shutil.rmtree(CAPTURED, ignore_errors=True)
    os.makedirs(CAPTURED)
    rng = np.random.RandomState(31)
    vocab = os.path.join(CAPTURED, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("the\ncat\nsat\non\nmat\ndog\nran\n")

    class Lookup(tf.Module):
        def __init__(self):
            init = tf.lookup.TextFileInitializer(vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                                 tf.lookup.TextFileIndex.LINE_NUMBER)
            self.table = tf.lookup.StaticHashTable(init, default_value=7)
            self.emb = tf.Variable(rng.standard_normal((8, 5)).astype(np.float32))
            self.w = tf.Variable(rng.standard_normal((5, 3)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def serve(self, words):
            ids = self.table.lookup(words)
            e = tf.nn.embedding_lookup(self.emb, ids)
            return {"logits": tf.matmul(tf.reduce_mean(e, 0, keepdims=True), self.w), "ids": ids}

    class Loop(tf.Module):
        def __init__(self):
            self.k = tf.Variable(rng.standard_normal((4, 4)).astype(np.float32) * 0.5)

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([], tf.int32)])
        def serve(self, x, steps):
            ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

            def body(i, h, ta):
                h = tf.cond(tf.reduce_sum(h) > 0, lambda: tf.tanh(h @ self.k), lambda: tf.nn.relu(h @ self.k) + 0.1)
                return i + 1, h, ta.write(i, tf.reduce_mean(h, 1))
            _, h, ta = tf.while_loop(lambda i, h, ta: i < steps, body, [0, x, ta])
            return {"final": h, "trace": tf.transpose(ta.stack())}

    feeds = {"vocab_lookup": {"words": np.array([b"cat", b"zebra", b"mat", b"the", b"ran"])},
             "loop_cond": {"x": rng.uniform(-1, 1, size=(3, 4)).astype(np.float32), "steps": np.int32(5)}}
    for name, mod in (("vocab_lookup", Lookup()), ("loop_cond", Loop())):
        path = os.path.join(CAPTURED, name)
        tf.saved_model.save(mod, path, signatures={"serving_default": mod.serve})
        ins = feeds[name]
        out = tf.saved_model.load(path).signatures["serving_default"](**{k: tf.constant(v) for k, v in ins.items()})
        d = os.path.join(path, "serving_default")
        save(d, "in", ins)
        save(d, "out", {k: v.numpy() for k, v in out.items()})
        print(name, {k: v.shape for k, v in out.items()})
    os.unlink(vocab)   # the SavedModel keeps its copy under assets/

    import keras
    keras.utils.set_random_seed(5)
    tv = keras.layers.TextVectorization(max_tokens=20, output_mode="int", output_sequence_length=6)
    tv.adapt(["the cat sat on the mat", "a dog ran far away", "the quick brown fox jumps"])
    text = keras.Input((), dtype="string", name="text")
    ids = tv(text)
    h = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(20, 8)(ids))
    path = os.path.join(CAPTURED, "text_vectorization")
    keras.Model(text, {"logits": keras.layers.Dense(3)(h), "ids": ids}).export(path)
    ins = {"text": np.array([b"The cat SAT on a mat!", b"zebra", b"quick brown dogs ran away far"])}
    out = tf.saved_model.load(path).signatures["serving_default"](text=tf.constant(ins["text"]))
    d = os.path.join(path, "serving_default")
    save(d, "in", ins)
    save(d, "out", {k: v.numpy() for k, v in out.items()})
    print("text_vectorization", {k: v.numpy().tolist() for k, v in out.items() if k == "ids"})

    class ParseExample(tf.Module):
        def __init__(self):
            self.w = tf.Variable(rng.standard_normal((3 + 4 + 5, 2)).astype(np.float32))
            self.e = tf.Variable(rng.standard_normal((10, 4)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def serve(self, examples):
            f = tf.io.parse_example(examples, {
                "x": tf.io.FixedLenFeature([3], tf.float32, default_value=[0.5, 0.25, 0.125]),
                "ids": tf.io.VarLenFeature(tf.int64),
                "tag": tf.io.FixedLenFeature([], tf.string, default_value="")})
            em = tf.nn.embedding_lookup_sparse(self.e, f["ids"], None, combiner="mean")
            em = tf.pad(em, [[0, tf.shape(f["x"])[0] - tf.shape(em)[0]], [0, 0]])
            tag = tf.one_hot(tf.strings.to_hash_bucket_fast(f["tag"], 5), 5)
            return {"y": tf.matmul(tf.concat([f["x"], em, tag], 1), self.w)}

    def example(x, ids, tag):
        feat = {}
        if x is not None:
            feat["x"] = tf.train.Feature(float_list=tf.train.FloatList(value=x))
        if ids is not None:
            feat["ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
        if tag is not None:
            feat["tag"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[tag]))
        return tf.train.Example(features=tf.train.Features(feature=feat)).SerializeToString()

    exs = [example([1, 2, 3], [1, 4], b"a"), example([0.5, -1, 2], [], b"zz"), example(None, [9, 9, 2, 7], None),
           example([3, 3, 3], [5], b"zz")]
    # the .npy string reader drops trailing NULs (numpy's |S does too): no example may end with one
    assert all(e[-1:] != b"\0" for e in exs)
    mod = ParseExample()
    path = os.path.join(CAPTURED, "parse_example")
    tf.saved_model.save(mod, path, signatures={"serving_default": mod.serve})
    ins = {"examples": np.array(exs, dtype=object).astype("S")}
    out = tf.saved_model.load(path).signatures["serving_default"](examples=tf.constant(exs))
    d = os.path.join(path, "serving_default")
    save(d, "in", ins)
    save(d, "out", {k: v.numpy() for k, v in out.items()})
    print("parse_example", {k: v.shape for k, v in out.items()})

    class RaggedText(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def serve(self, text):
            toks = tf.strings.split(text)
            hashed = tf.cast(tf.strings.to_hash_bucket_fast(toks, 20), tf.float32)
            return {"lens": toks.row_lengths(), "sums": tf.reduce_sum(hashed, axis=1),
                    "first": toks[:, :1].to_tensor(default_value="<none>"),
                    "joined": tf.strings.reduce_join(toks, axis=1, separator="|")}

    mod = RaggedText()
    path = os.path.join(CAPTURED, "ragged_text")
    tf.saved_model.save(mod, path, signatures={"serving_default": mod.serve})
    ins = {"text": np.array([b"the cat  sat", b"", b"a b c d e", b"   one"])}
    out = tf.saved_model.load(path).signatures["serving_default"](text=tf.constant(ins["text"]))
    d = os.path.join(path, "serving_default")
    save(d, "in", ins)
    save(d, "out", {k: v.numpy() for k, v in out.items()})
    print("ragged_text", {k: v.numpy().tolist() for k, v in out.items()})


def main():
    global MODEL
    if sys.argv[1:] == ["captured"]:
        write_captured()
        return
    if sys.argv[1:] == ["sharded"]:
        write_sharding()
        return
    if sys.argv[1:] == ["keras3"]:
        write_keras3()
        return
    only = set(sys.argv[1:])
    for seed, (name, rel, tf1, sigs) in enumerate(MODELS):
        if only and name not in only:
            continue
        MODEL = name
        path = os.path.join(CORPUS, rel)
        if tf1:
            res = run_tf1(path, sigs, 1000 + 10 * seed)
        else:
            try:
                res = run_tf2(path, sigs, 1000 + 10 * seed)
            except AttributeError as e:
                # TF 2.21's object loader cannot restore some old Keras optimizers'
                # slots; the v1 loader runs the same signature graph
                print(name, "tf.saved_model.load failed (%s): using the v1 loader" % e)
                res = run_tf1(path, sigs, 1000 + 10 * seed)
        for sig, (ins, outs) in res.items():
            d = os.path.join(OUT, name, sig)
            save(d, "in", ins)
            save(d, "out", outs)
            print(name, sig, {k: v.shape for k, v in ins.items()}, {k: (v.dtype, v.shape) for k, v in outs.items()})


if __name__ == "__main__":
    main()
