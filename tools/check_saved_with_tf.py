#!/usr/bin/env python3
"""Loads SavedModels written by `grapnel save` with TensorFlow and runs their
signatures; writes the results under tests/data/saved_by_grapnel/ for
tests/savedmodel_write_test.c, which saves the same models through the C API
and checks that TensorFlow could load them and that our CPU runtime gives the
same outputs for the same inputs.

usage: PY=$(tools/tfvenv.sh); $PY tools/check_saved_with_tf.py GRAPNEL_BIN [CORPUS_DIR]

Per case the SavedModel is written with `grapnel save SOURCE DIR [--feed ..]
[--fetch ..] --save-options OPTIONS`, then
  - loaded with tf.saved_model.load (v2) and with the TF1 loader
    tf.compat.v1.saved_model.loader.load (v1), each recorded as "loaded ok" or
    "error: <first line of the exception>";
  - every signature whose inputs are all float is run on fixed inputs, with
    both loaders; outputs saved as .npy ("run error: ..." when running fails);
  - TensorFlow's own fingerprint of the directory (CreateFingerprintDef:
    saved_model_checksum and checkpoint_hash, docs/reference_formats.md §B9) is recorded.

A case saved as the chunked saved_model.cpb (experimental_image_format, with
`--chunk-max-size` so a small model splits) cannot be loaded by TensorFlow's
open-source build (its loaders read only saved_model.pb[txt]); what reads it
is CreateFingerprintDef, through TensorFlow's own Riegeli reader and chunk
merger: its saved_model_checksum of a .cpb hashes every chunk the metadata
names. The loaders' errors are recorded as they are, and the .cpb it read is
kept as NAME.saved_model.cpb so the test can check that grapnel still writes
those bytes.
"""
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import fingerprint_pb2, saved_model_pb2  # noqa: E402
from tensorflow.python.saved_model.pywrap_saved_model import fingerprinting  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "data", "saved_by_grapnel")
HP2_TF2 = "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123"
HP2_TF1 = "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123"
HP2_TXT = "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123"
ALL_OPTS = ("{'namespace_whitelist': [], 'save_debug_info': True, "
            "'function_aliases': {'predict': '__inference_signature_wrapper_predict_245'}, "
            "'experimental_debug_stripper': True, "
            "'experimental_io_device': '/job:localhost/replica:0/task:0/device:CPU:0', "
            "'experimental_variable_policy': 'save_variable_devices', "
            "'experimental_custom_gradients': False, 'experimental_image_format': True, "
            "'experimental_sharding_callback': ShardByTaskPolicy(), 'extra_tags': ['gpu']}")

# name, source kind, source path, feeds, fetches, options
CASES = [
    ("hp2_tf2", "corpus", HP2_TF2, [], [], "{}"),
    ("hp2_tf2_all_options", "corpus", HP2_TF2, [], [], ALL_OPTS),
    ("hp2_tf2_skip_saver", "corpus", HP2_TF2, [], [], "{'experimental_skip_saver': True}"),
    ("hp2_tf1", "corpus", HP2_TF1, [], [], "{}"),
    ("hp2_pbtxt", "corpus", HP2_TXT, [], [], "{'save_debug_info': True}"),
    ("cnn_bn_residual", "golden", "golden/cnn_bn_residual.pb", ["x:0"], ["Identity:0"], "{}"),
    ("max_shard_200", "data", "savedmodel_sharding/plain", [], [],
     "{'experimental_sharding_callback': MaxShardSizePolicy(200)}"),
    ("cnn_chunked", "golden", "golden/cnn_bn_residual.pb", ["x:0"], ["Identity:0"],
     "{'experimental_image_format': True}", ["--chunk-max-size", "3000"]),
]


def first_line(e):
    s = str(e).strip().splitlines()
    s = s[0] if s else type(e).__name__
    return (type(e).__name__ + ": " + s)[:300]


def input_for(case, spec):
    if case == "cnn_bn_residual":
        return np.load(os.path.join(ROOT, "tests", "data", "golden", "cnn_bn_residual.in0.npy"))
    shape = [d.size for d in spec.tensor_shape.dim]
    shape = [3 if d < 0 else d for d in shape]
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float32) * 1.5 - 1.0).reshape(shape)


def float_signatures(mg):
    out = []
    for key in sorted(mg.signature_def):
        sd = mg.signature_def[key]
        if key.startswith("__") or not sd.inputs or not sd.outputs:
            continue
        if all(t.dtype == 1 for t in sd.inputs.values()):
            out.append(key)
    return out


def main():
    grapnel = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "corpus")
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    lines = ["# Written by tools/check_saved_with_tf.py (do not edit): TensorFlow %s loading SavedModels" % tf.__version__,
             "# written by `grapnel save`. Read by tests/savedmodel_write_test.c.",
             "# case NAME / source corpus|golden|data PATH / feed T / fetch T / options TEXT / tags T,.. / args CLI ARGS",
             "# fingerprint saved_model_checksum checkpoint_hash   (TensorFlow's CreateFingerprintDef of the directory)",
             "# loader v1|v2 loaded ok | error: ...",
             "# input SIG KEY FILE.npy / output v1|v2 SIG KEY FILE.npy | output v1|v2 SIG KEY run error: ... / end"]
    tmp = tempfile.mkdtemp(prefix="grapnel_saved_")
    try:
        for case in CASES:
            name, kind, src, feeds, fetches, opts = case[:6]
            extra = case[6] if len(case) > 6 else []
            srcpath = os.path.join(corpus, src) if kind == "corpus" else os.path.join(ROOT, "tests", "data", src)
            d = os.path.join(tmp, name)
            cmd = [grapnel, "save", srcpath, d, "--save-options", opts]
            for f in feeds:
                cmd += ["--feed", f]
            for f in fetches:
                cmd += ["--fetch", f]
            subprocess.run(cmd + extra, check=True)
            chunked = os.path.exists(os.path.join(d, "saved_model.cpb"))
            sm = saved_model_pb2.SavedModel()
            if chunked:
                plain = d + "_plain"
                subprocess.run(cmd[:3] + [plain] + cmd[4:], check=True)
                with open(os.path.join(plain, "saved_model.pb"), "rb") as f:
                    sm.ParseFromString(f.read())
                shutil.copy(os.path.join(d, "saved_model.cpb"), os.path.join(OUT, name + ".saved_model.cpb"))
            else:
                with open(os.path.join(d, "saved_model.pb"), "rb") as f:
                    sm.ParseFromString(f.read())
            mg = sm.meta_graphs[0]
            tags = list(mg.meta_info_def.tags)
            lines += ["", "case " + name, "source %s %s" % (kind, src)]
            lines += ["feed " + f for f in feeds] + ["fetch " + f for f in fetches]
            lines += ["options " + opts, "tags " + ",".join(tags)]
            if extra:
                lines.append("args " + " ".join(extra))
            fp = fingerprint_pb2.FingerprintDef()
            fp.ParseFromString(fingerprinting.CreateFingerprintDef(d))
            lines.append("fingerprint %d %d" % (fp.saved_model_checksum, fp.checkpoint_hash))
            sigs = [] if chunked else float_signatures(mg)
            inputs = {}
            for key in sigs:
                for ik, spec in sorted(mg.signature_def[key].inputs.items()):
                    arr = input_for(name, spec)
                    fn = "%s.%s.%s.in.npy" % (name, key, ik)
                    np.save(os.path.join(OUT, fn), arr)
                    inputs[(key, ik)] = arr
                    lines.append("input %s %s %s" % (key, ik, fn))
            # v2
            try:
                m = tf.saved_model.load(d, tags=tags)
                lines.append("loader v2 loaded ok")
                for key in sigs:
                    f = m.signatures[key]
                    try:
                        res = f(**{ik: tf.constant(inputs[(key, ik)]) for (k, ik) in inputs if k == key})
                        for ok in sorted(res):
                            fn = "%s.v2.%s.%s.npy" % (name, key, ok)
                            np.save(os.path.join(OUT, fn), res[ok].numpy())
                            lines.append("output v2 %s %s %s" % (key, ok, fn))
                    except Exception as e:  # noqa: BLE001
                        lines.append("output v2 %s * run error: %s" % (key, first_line(e)))
            except Exception as e:  # noqa: BLE001
                lines.append("loader v2 error: " + first_line(e))
            # v1
            try:
                g = tf.Graph()
                with tf.compat.v1.Session(graph=g) as sess:
                    lmg = tf.compat.v1.saved_model.loader.load(sess, tags, d)
                    lines.append("loader v1 loaded ok")
                    for key in sigs:
                        sd = lmg.signature_def[key]
                        okeys = sorted(sd.outputs)
                        try:
                            res = sess.run([sd.outputs[k].name for k in okeys],
                                           {sd.inputs[ik].name: inputs[(key, ik)] for ik in sd.inputs})
                            for ok, v in zip(okeys, res):
                                fn = "%s.v1.%s.%s.npy" % (name, key, ok)
                                np.save(os.path.join(OUT, fn), v)
                                lines.append("output v1 %s %s %s" % (key, ok, fn))
                        except Exception as e:  # noqa: BLE001
                            lines.append("output v1 %s * run error: %s" % (key, first_line(e)))
            except Exception as e:  # noqa: BLE001
                lines.append("loader v1 error: " + first_line(e))
            lines.append("end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(OUT, "results.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.join(OUT, "results.txt"))


if __name__ == "__main__":
    main()
