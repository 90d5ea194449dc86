#!/usr/bin/env python3
"""TensorFlow's results for the corpus SavedModels whose serving signature
looks strings up in tables initialized from asset files, for
tests/savedmodel_test.c: writes tests/data/savedmodel/<model>/serving_default/
in_<key>.npy (fixed inputs) and out_<key>.npy (what TensorFlow computes), the
same layout as tools/make_savedmodel_goldens.py.

    PY=$(tools/tfvenv.sh --gpu)
    $PY tools/make_table_goldens.py          # write the goldens
    $PY tools/make_table_goldens.py --show   # also print TF's frozen graph
    $PY tools/make_table_goldens.py --check-frozen OUT.pb

Models:
  static_hashtable  tensorflow/cc/saved_model/testdata/StaticHashTableModule:
                    HashTableV2 + InitializeTableFromTextFileV2 (whole line ->
                    line number) over assets/static_hashtable_asset.txt (CRLF
                    lines), LookupTableFindV2 with default -1. Inputs: words of
                    the file, words that are not, the empty string, a word with
                    its '\\r', as a [2, 4] matrix.
  tft_chicago_taxi  tfx benchmarks chicago_taxi tft_tf2_saved_model: the
                    tf.Transform graph (18 sparse features as indices / values /
                    dense_shape triplets; two vocabularies from assets with
                    LookupTableFindV2 / LookupTableSizeV2 and hash buckets for
                    out-of-vocabulary strings; bucketized and z-scored floats).
                    Five rows, row 3 left empty in every feature (the dense
                    default), strings in and out of the vocabularies.

TensorFlow 2.21 registers no kernel for BoostedTreesBucketize (the boosted
trees kernels were removed), which the tft graph uses to bucketize four
features; this script runs a copy of the SavedModel in which each such node
(num_features 1) is replaced, inside its FunctionDef, by the same computation
in ops TF still has: LowerBound of the value in the boundaries, clamped to the
last boundary's index (TF's BoostedTreesBucketizeOp: std::lower_bound, one
step back at the end, 0 for no boundaries), cast to int32.

`--check-frozen OUT.pb` instead runs a GraphDef `grapnel freeze` made of
StaticHashTableModule (grapnel freeze DIR -o OUT.pb) in TensorFlow, twice in
one session (the second run re-initializes a filled table, which TF accepts),
on the golden input, and compares with the golden output.

`--show` prints, per model, the nodes of the graph TensorFlow's own freezing
gives (tf.python.framework.convert_to_constants.convert_variables_to_constants_v2
on the signature's concrete function): the lookup table stays a captured
resource input (a DT_RESOURCE Placeholder), its initializer is not in the graph.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

CORPUS = os.environ.get("GN_CORPUS_DIR", os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "shared", "corpus"))
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel")

STATIC = "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__StaticHashTableModule"
TFT = "tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model"


def static_inputs():
    words = np.array([[b"foo", b"bar", b"wombat", b"nope"],
                      [b"", b"baz", b"foo\r", b"Foo"]], dtype=object)
    return {"word": words.astype("S")}


# tft_tf2: the features in the order of the signature's input triplets
# (inputs_<3k> indices, inputs_<3k+1> values, inputs_<3k+2> dense_shape).
ROWS = 5
EMPTY_ROW = 3
FEATURES = [
    ("company", [b"Flash Cab", b"Yellow Cab", b"No Such Cab Co", b"x", b"Blue Ribbon Taxi Association Inc."]),
    ("dropoff_census_tract", [17031081500, 17031839100, 0, 1, 17031320100]),
    ("dropoff_community_area", [8, 32, 77, 1, 6]),
    ("dropoff_latitude", [41.892, 41.880, 41.95, 0.0, 41.92]),
    ("dropoff_longitude", [-87.626, -87.632, -87.70, 0.0, -87.65]),
    ("fare", [7.25, 12.5, 40.0, 0.0, 5.0]),
    ("payment_type", [b"Cash", b"Credit Card", b"Bitcoin", b"x", b"Mobile"]),
    ("pickup_census_tract", [17031081700, 17031839100, 17031980000, 1, 0]),
    ("pickup_community_area", [8, 32, 76, 1, 22]),
    ("pickup_latitude", [41.899, 41.880, 41.979, 0.0, 41.92]),
    ("pickup_longitude", [-87.620, -87.632, -87.903, 0.0, -87.69]),
    ("tips", [0.0, 2.5, 10.0, 0.0, 1.0]),
    ("trip_miles", [1.1, 0.4, 17.2, 0.0, 2.0]),
    ("trip_seconds", [420, 300, 2100, 1, 660]),
    ("trip_start_day", [1, 4, 7, 1, 3]),
    ("trip_start_hour", [0, 9, 17, 1, 23]),
    ("trip_start_month", [1, 6, 12, 1, 9]),
    ("trip_start_timestamp", [1380593700, 1420070400, 1454284800, 1, 1483228800]),
]


def tft_inputs(fn):
    _, kw = fn.structured_input_signature
    ins = {}
    for k, (name, vals) in enumerate(FEATURES):
        vdtype = kw["inputs_%d" % (3 * k + 1)].dtype
        rows = [r for r in range(ROWS) if r != EMPTY_ROW]
        idx = np.array([[r, 0] for r in rows], dtype=np.int64)
        v = [vals[r] for r in rows]
        if vdtype == tf.string:
            val = np.array(v, dtype=object).astype("S")
        else:
            val = np.array(v, dtype=vdtype.as_numpy_dtype)
        ins["inputs" if k == 0 else "inputs_%d" % (3 * k)] = idx
        ins["inputs_%d" % (3 * k + 1)] = val
        ins["inputs_%d" % (3 * k + 2)] = np.array([ROWS, 1], dtype=np.int64)
    # the signature's specs say which key is which
    for key, arr in ins.items():
        spec = kw[key]
        assert spec.dtype.as_numpy_dtype == arr.dtype.type or spec.dtype == tf.string, (key, spec, arr.dtype)
    return ins


def show_frozen(fn):
    from tensorflow.python.framework import convert_to_constants as c2c
    fr = c2c.convert_variables_to_constants_v2(fn)
    gd = fr.graph.as_graph_def()
    for n in gd.node:
        if (n.op == "Placeholder" and n.attr["dtype"].type == tf.resource.as_datatype_enum) or n.op in ("HashTableV2", "LookupTableFindV2", "LookupTableSizeV2",
                    "InitializeTableFromTextFileV2", "InitializeTableV2", "LookupTableImportV2"):
            print("   %-60s %-30s %s" % (n.name, n.op, tf.as_dtype(n.attr["dtype"].type).name
                                        if "dtype" in n.attr else ""))
    print("   %d nodes, %d library functions; inputs %s" % (
        len(gd.node), len(gd.library.function), [t.name for t in fr.inputs]))


def _const(fd, name, dtype, value):
    n = fd.node_def.add()
    n.name = name
    n.op = "Const"
    n.attr["dtype"].type = dtype.as_datatype_enum
    n.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(np.array(value, dtype=dtype.as_numpy_dtype)))
    return name + ":output:0"


def _node(fd, name, op, inputs, **attrs):
    n = fd.node_def.add()
    n.name = name
    n.op = op
    n.input.extend(inputs)
    for k, v in attrs.items():
        n.attr[k].type = v.as_datatype_enum
    return n


def shim_bucketize(src):
    """A copy of SavedModel src (in a temporary directory) whose
    BoostedTreesBucketize nodes are computed with LowerBound."""
    import shutil
    import tempfile
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(src, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    n_done = 0
    for fd in sm.meta_graphs[0].graph_def.library.function:
        for old in [n for n in fd.node_def if n.op == "BoostedTreesBucketize"]:
            if old.attr["num_features"].i != 1:
                raise SystemExit("BoostedTreesBucketize with num_features != 1")
            vals, bounds = old.input[0], old.input[1]
            p = old.name + "/shim"
            row = _const(fd, p + "/row", tf.int32, [1, -1])
            flat = _const(fd, p + "/flat", tf.int32, [-1])
            b2 = _node(fd, p + "/b2", "Reshape", [bounds, row], T=tf.float32, Tshape=tf.int32)
            v2 = _node(fd, p + "/v2", "Reshape", [vals, row], T=tf.float32, Tshape=tf.int32)
            lb = _node(fd, p + "/lb", "LowerBound", [b2.name + ":output:0", v2.name + ":output:0"],
                       T=tf.float32, out_type=tf.int32)
            lbf = _node(fd, p + "/lbf", "Reshape", [lb.name + ":output:0", flat], T=tf.int32, Tshape=tf.int32)
            size = _node(fd, p + "/size", "Size", [bounds], T=tf.float32, out_type=tf.int32)
            last = _node(fd, p + "/last", "Sub", [size.name + ":output:0", _const(fd, p + "/one", tf.int32, 1)],
                         T=tf.int32)
            lastc = _node(fd, p + "/lastc", "Maximum", [last.name + ":z:0", _const(fd, p + "/zero", tf.int32, 0)],
                          T=tf.int32)
            out = _node(fd, p + "/out", "Minimum", [lbf.name + ":output:0", lastc.name + ":z:0"], T=tf.int32)
            ref = old.name + ":buckets:0"
            for n in fd.node_def:
                for i, x in enumerate(n.input):
                    if x == ref:
                        n.input[i] = out.name + ":z:0"
            for k, v in fd.ret.items():
                if v == ref:
                    fd.ret[k] = out.name + ":z:0"
            fd.node_def.remove(old)
            n_done += 1
    dst = tempfile.mkdtemp(prefix="tft_shim_")
    shutil.copytree(os.path.join(src, "variables"), os.path.join(dst, "variables"))
    shutil.copytree(os.path.join(src, "assets"), os.path.join(dst, "assets"))
    with open(os.path.join(dst, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())
    print("   %d BoostedTreesBucketize nodes computed with LowerBound" % n_done)
    return dst


def save(d, prefix, arrays):
    os.makedirs(d, exist_ok=True)
    for k, v in sorted(arrays.items()):
        np.save(os.path.join(d, "%s_%s.npy" % (prefix, k)), np.asarray(v))


def check_frozen(pb):
    gd = tf.compat.v1.GraphDef()
    with open(pb, "rb") as f:
        gd.ParseFromString(f.read())
    d = os.path.join(OUT, "static_hashtable", "serving_default")
    word = np.load(os.path.join(d, "in_word.npy"))
    want = np.load(os.path.join(d, "out_output_0.npy"))
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.compat.v1.Session() as sess:
            for run in range(2):
                got = sess.run("StatefulPartitionedCall_1:0", {"serving_default_word:0": word})
                if not np.array_equal(got, want):
                    raise SystemExit("run %d: %s, want %s" % (run, got.tolist(), want.tolist()))
    print(pb, "runs in TensorFlow and matches", os.path.relpath(os.path.join(d, "out_output_0.npy")))


def main():
    if sys.argv[1:2] == ["--check-frozen"]:
        check_frozen(sys.argv[2])
        return
    show = "--show" in sys.argv[1:]
    for name, rel, make in (("static_hashtable", STATIC, lambda f: static_inputs()),
                            ("tft_chicago_taxi", TFT, tft_inputs)):
        path = os.path.join(CORPUS, rel)
        if name == "tft_chicago_taxi":
            path = shim_bucketize(path)
        m = tf.saved_model.load(path)
        fn = m.signatures["serving_default"]
        ins = make(fn)
        out = fn(**{k: tf.constant(v) for k, v in ins.items()})
        outs = {k: v.numpy() for k, v in out.items()}
        if name == "tft_chicago_taxi":
            import shutil
            shutil.rmtree(path, ignore_errors=True)   # the shimmed copy
        d = os.path.join(OUT, name, "serving_default")
        save(d, "in", ins)
        save(d, "out", outs)
        print(name, "->", os.path.relpath(d), {k: (str(v.dtype), v.shape) for k, v in sorted(outs.items())})
        if show:
            show_frozen(fn)


if __name__ == "__main__":
    main()
