"""Times CTCBeamSearchDecoder in TensorFlow and in `grapnel run` on the same
random logits (seeded), and checks that the outputs are the same.

    PY=$(tools/tfvenv.sh)
    $PY bench/ctc_compare.py [--build build] MAX_TIME BATCH CLASSES BEAM_WIDTH

TensorFlow: the second Session.run of a one-node tf.compat.v1 graph (the
first warms it up). grapnel: the whole `grapnel run` process (load, run,
write the .npy outputs). See bench/CTC.md."""
import argparse
import os
import subprocess
import tempfile
import time

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    for k in ["max_time", "batch", "classes", "beam_width"]:
        ap.add_argument(k, type=int)
    a = ap.parse_args()
    x = (np.random.default_rng(0).standard_normal((a.max_time, a.batch, a.classes)) * 3).astype(np.float32)
    n = np.full(a.batch, a.max_time, np.int32)
    g = tf1.Graph()
    with g.as_default():
        px = tf1.placeholder(tf.float32, x.shape, name="x")
        pn = tf1.placeholder(tf.int32, n.shape, name="n")
        r = tf.raw_ops.CTCBeamSearchDecoder(inputs=px, sequence_length=pn, beam_width=a.beam_width, top_paths=1,
                                            merge_repeated=True)
        outs = [r.decoded_values[0], r.log_probability]
    with tf1.Session(graph=g) as s:
        s.run(outs, {px: x, pn: n})
        t0 = time.perf_counter()
        want = s.run(outs, {px: x, pn: n})
        t_tf = time.perf_counter() - t0
    d = tempfile.mkdtemp(prefix="ctc_bench_")
    pb = os.path.join(d, "g.pb")
    with open(pb, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "n.npy"), n)
    cmd = [os.path.join(a.build, "grapnel"), "run", pb, "--feed", f"x={d}/x.npy", "--feed", f"n={d}/n.npy",
           "--fetch", f"{outs[0].name}={d}/v.npy", "--fetch", f"{outs[1].name}={d}/l.npy"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    t_gn = time.perf_counter() - t0
    same = np.array_equal(np.load(f"{d}/v.npy"), want[0]) and np.array_equal(np.load(f"{d}/l.npy"), want[1])
    print(f"max_time {a.max_time} batch {a.batch} classes {a.classes} beam_width {a.beam_width}: "
          f"TensorFlow {t_tf:.3f} s, grapnel run {t_gn:.3f} s, outputs {'equal' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
