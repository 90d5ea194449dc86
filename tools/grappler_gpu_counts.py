#!/usr/bin/env python3
"""Grappler's GPU-targeted counts on our models: nodes, Transposes, fused ops,
Casts and float16 nodes after TensorFlow's meta-optimizer with a virtual GPU.

The GPU passes (layout optimizer, remapper, auto mixed precision) only act on
nodes placed on a GPU, and some of their rules depend on the GPU's compute
capability. Without a GPU this script:
  - places every node on "/device:GPU:0" (nodes already placed elsewhere keep
    their device);
  - gives OptimizeGraph a virtual grappler Cluster holding one GPU with the
    properties of an H100-class device (type GPU, architecture 9.0, 132 cores)
    and one CPU;
  - sets TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU=1, so auto mixed
    precision rewrites as it would on a real GPU.
It needs the `tensorflow` wheel (built with CUDA: its GPU kernels are
registered, which the remapper checks), not `tensorflow-cpu`:
    PY=$(tools/tfvenv.sh --gpu)
    $PY tools/grappler_gpu_counts.py

Three configurations per model (every other pass as grappler_counts.py: the
passes grapnel builds on, min_graph_nodes -1):
  layout  layout_optimizer ON
  remap   remapping ON
  amp     auto_mixed_precision ON
and "all" with the three on together.

Output (tests/data/grappler_gpu_counts.txt), one line per model and config:
    path<TAB>config<TAB>nodes<TAB>transposes<TAB>fused<TAB>casts<TAB>f16_nodes
fused counts nodes whose op starts with "_Fused"; f16_nodes counts nodes with
a DT_HALF T, dtype, SrcT/DstT (DstT) or U attr. Models TensorFlow cannot take
are comment lines "# skipped<TAB>path<TAB>reason".
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU"] = "1"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grappler_counts as gc  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import types_pb2  # noqa: E402
from tensorflow.core.protobuf import device_properties_pb2  # noqa: E402
from tensorflow.python.grappler import cluster as gcluster  # noqa: E402

RC = gc.RC
CONFIGS = ("layout", "remap", "amp", "all")


def rewriter_config(which):
    rc = gc.rewriter_config()
    if which in ("layout", "all"):
        rc.layout_optimizer = RC.ON
    if which in ("remap", "all"):
        rc.remapping = RC.ON
    if which in ("amp", "all"):
        rc.auto_mixed_precision = RC.ON
    return rc


def config_proto(which):
    cp = gc.config_pb2.ConfigProto()
    cp.graph_options.rewrite_options.CopyFrom(rewriter_config(which))
    return cp


def virtual_cluster():
    gpu = device_properties_pb2.DeviceProperties(
        type="GPU", vendor="NVIDIA", model="H100", frequency=1755, num_cores=132,
        environment={"architecture": "9.0", "cuda": "12030", "cudnn": "9000"},
        num_registers=65536, l1_cache_size=262144, l2_cache_size=52428800,
        shared_memory_size_per_multiprocessor=233472, memory_size=80 << 30, bandwidth=3352000000)
    cpu = device_properties_pb2.DeviceProperties(type="CPU", frequency=2500, num_cores=2)
    devs = [
        device_properties_pb2.NamedDevice(name="/job:localhost/replica:0/task:0/device:GPU:0", properties=gpu),
        device_properties_pb2.NamedDevice(name="/job:localhost/replica:0/task:0/device:CPU:0", properties=cpu),
    ]
    return gcluster.Cluster(devices=devs)


def place_on_gpu(gd):
    for n in gd.node:
        if not n.device:
            n.device = "/job:localhost/replica:0/task:0/device:GPU:0"
    return gd


HALF_ATTRS = ("T", "dtype", "DstT", "U")


def gpu_counts(gd):
    nodes = len(gd.node)
    tr = sum(1 for n in gd.node if n.op == "Transpose")
    fused = sum(1 for n in gd.node if n.op.startswith("_Fused"))
    casts = sum(1 for n in gd.node if n.op == "Cast")
    f16 = 0
    for n in gd.node:
        if any(a in n.attr and n.attr[a].type == types_pb2.DT_HALF for a in HALF_ATTRS):
            f16 += 1
    return nodes, tr, fused, casts, f16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(gc.DATA, "grappler_gpu_counts.txt"))
    ap.add_argument("--corpus", default=os.environ.get(
        "GN_CORPUS_DIR", os.path.join(os.path.dirname(gc.ROOT), "shared", "corpus")))
    ap.add_argument("--graph", action="append", default=[])
    a = ap.parse_args()
    work = [(g, g, [], None) for g in a.graph] if a.graph else gc.models(a.corpus)
    if a.graph:
        a.out = "-"
    cluster = virtual_cluster()
    lines = [
        "# Grappler's GPU-targeted counts; written by tools/grappler_gpu_counts.py (do not edit).",
        f"# TensorFlow {tf.__version__} (built with CUDA: {tf.test.is_built_with_cuda()}), virtual cluster: one GPU "
        "(architecture 9.0) and one CPU; nodes without a device placed on GPU:0;",
        "# TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU=1. Base RewriterConfig: "
        + text_format.MessageToString(gc.rewriter_config(), as_one_line=True),
        "# configs: layout (layout_optimizer ON), remap (remapping ON), amp (auto_mixed_precision ON), all (the three)",
        "# path\tconfig\tnodes\ttransposes\tfused\tcasts\tf16_nodes",
    ]
    for rel, full, feeds, fetches in work:
        try:
            gd = gc.load_graph(full)
        except Exception as e:  # noqa: BLE001
            lines.append(f"# skipped\t{rel}\t{e}")
            continue
        if fetches is None:
            fetches = gc.sinks(gd)
        gd = place_on_gpu(gd)
        mg = gc.metagraph(gd, feeds, fetches)
        b = gpu_counts(gd)
        lines.append(f"{rel}\tbefore\t" + "\t".join(str(x) for x in b))
        for which in CONFIGS:
            try:
                out, _ = gc.run_tf(cluster, config_proto(which), mg, 1)
            except Exception as e:  # noqa: BLE001
                msg = " ".join(str(e).split())[:300]
                lines.append(f"# skipped\t{rel}\t{which}: TensorFlow: {msg}")
                continue
            c = gpu_counts(out)
            lines.append(f"{rel}\t{which}\t" + "\t".join(str(x) for x in c))
            print(f"{rel} {which}: {c}", file=sys.stderr)
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
