#!/usr/bin/env python3
"""TensorFlow's results for the corpus's tf.Transform SavedModel (tfx
components/testdata/transform/transform_graph/transform_fn, tag "transform"),
whose signature 'transform_signature' takes 18 sparse (COO) features, for
tests/savedmodel_test.c. Writes tests/data/savedmodel/transform_fn/
transform_signature/: in_<key>_indices.npy, in_<key>_values.npy,
in_<key>_dense_shape.npy (the three component tensors of each input) and
out_<key>.npy (what TensorFlow's v1 loader and session compute, after
tf.compat.v1.tables_initializer()).

    PY=$(tools/tfvenv.sh --gpu)
    $PY tools/make_transform_goldens.py

Five rows, row 3 left empty in every feature (the dense default), strings in
and out of the vocabularies.
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import meta_graph_pb2  # noqa: E402

CORPUS = os.environ.get("GN_CORPUS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus"))
REL = "tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "savedmodel", "transform_fn",
                   "transform_signature")
ROWS = 5
EMPTY_ROW = 3
VALUES = {
    "company": [b"Flash Cab", b"Yellow Cab", b"No Such Cab Co", b"x", b"Blue Ribbon Taxi Association Inc."],
    "dropoff_census_tract": [17031081500, 17031839100, 0, 1, 17031320100],
    "dropoff_community_area": [8, 32, 77, 1, 6],
    "dropoff_latitude": [41.892, 41.880, 41.95, 0.0, 41.92],
    "dropoff_longitude": [-87.626, -87.632, -87.70, 0.0, -87.65],
    "fare": [7.25, 12.5, 40.0, 0.0, 5.0],
    "payment_type": [b"Cash", b"Credit Card", b"Bitcoin", b"x", b"Mobile"],
    "pickup_census_tract": [17031081700, 17031839100, 17031980000, 1, 0],
    "pickup_community_area": [8, 32, 76, 1, 22],
    "pickup_latitude": [41.899, 41.880, 41.979, 0.0, 41.92],
    "pickup_longitude": [-87.620, -87.632, -87.903, 0.0, -87.69],
    "tips": [0.0, 2.5, 10.0, 0.0, 1.0],
    "trip_miles": [1.1, 0.4, 17.2, 0.0, 2.0],
    "trip_seconds": [420, 300, 2100, 1, 660],
    "trip_start_day": [1, 4, 7, 1, 3],
    "trip_start_hour": [0, 9, 17, 1, 23],
    "trip_start_month": [1, 6, 12, 1, 9],
    "trip_start_timestamp": [1380593700, 1420070400, 1454284800, 1, 1483228800],
}


def main():
    os.makedirs(OUT, exist_ok=True)
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        mg = tf.compat.v1.saved_model.loader.load(sess, ["transform"], os.path.join(CORPUS, REL))
        sig = mg.signature_def["transform_signature"]
        # tf.Transform graphs keep their table initializers in the
        # "table_initializer" collection, which the loader does not run; their
        # asset paths are fed as the loader feeds them to a main op
        # (TF1: the AssetFileDefs are in the "saved_model_assets" collection)
        defs = list(mg.asset_file_def)
        for any_ in mg.collection_def["saved_model_assets"].any_list.value:
            a = meta_graph_pb2.AssetFileDef()
            any_.Unpack(a)
            defs.append(a)
        assets = {a.tensor_info.name: os.path.join(CORPUS, REL, "assets", a.filename) for a in defs}
        sess.run(tf.compat.v1.tables_initializer(), feed_dict=assets)
        feed = {}
        rows = [r for r in range(ROWS) if r != EMPTY_ROW]
        for key, ti in sorted(sig.inputs.items()):
            dt = tf.as_dtype(ti.dtype)
            v = [VALUES[key][r] for r in rows]
            val = np.array(v, dtype=object).astype("S") if dt == tf.string else np.array(v, dtype=dt.as_numpy_dtype)
            parts = {
                "indices": (ti.coo_sparse.indices_tensor_name, np.array([[r, 0] for r in rows], dtype=np.int64)),
                "values": (ti.coo_sparse.values_tensor_name, val),
                "dense_shape": (ti.coo_sparse.dense_shape_tensor_name, np.array([ROWS, 1], dtype=np.int64)),
            }
            for part, (name, arr) in parts.items():
                feed[name] = arr
                np.save(os.path.join(OUT, "in_%s_%s.npy" % (key, part)), arr)
        keys = sorted(sig.outputs)
        res = sess.run([sig.outputs[k].name for k in keys], feed_dict=feed)
        for k, r in zip(keys, res):
            np.save(os.path.join(OUT, "out_%s.npy" % k), np.asarray(r))
            print(k, np.asarray(r).dtype, np.asarray(r).reshape(-1)[:6])


if __name__ == "__main__":
    main()
