#!/usr/bin/env python3
"""Node and edge counts of TensorFlow's own Grappler on our models.

For every model -- the GraphDefs of the shared corpus (.pb, .pbtxt, .pbtxt.gz
under GN_CORPUS_DIR, default ../shared/corpus) and the golden models of
tests/data/golden/manifest.txt -- runs TensorFlow's meta-optimizer
(tensorflow.python.grappler.tf_optimizer.OptimizeGraph) with a RewriterConfig
that enables exactly the passes grapnel builds (model pruning, common-subgraph
elimination, constant folding, shape optimization, arithmetic optimization,
dependency optimization; debug stripper at its default, off) and every other
pass off, min_graph_nodes -1, meta_optimizer_iterations at its default (two).

Fetches ("train_op" collection of the MetaGraphDef, plus a signature_def):
the manifest's fetches for the models the manifest names (golden and corpus),
with its feeds as the signature's inputs; for the other corpus GraphDefs, the
nodes that nothing consumes (data or control), NoOps excluded, and no feeds.

Time: wall time of the OptimizeGraph call alone, median of 3, the MetaGraphDef
already built in memory and one grappler Cluster made beforehand and reused
(OptimizeGraph would otherwise provision a new one per call).

Usage (TensorFlow's virtualenv, from the repository root):
    python tools/grappler_counts.py                 writes tests/data/grappler_counts.txt
    python tools/grappler_counts.py --out -         the same to stdout
    python tools/grappler_counts.py --graph G.pb [--graph ...] [--runs N]
        counts for the given files only (fetches: the sinks), to stdout, same format
    python tools/grappler_counts.py --fnloop        the same models and fetches with
        function_optimization and loop_optimization ON as well (TensorFlow runs the
        function optimizer over the GraphDef's library); writes
        tests/data/grappler_counts_fnloop.txt

Output, one line per model:
    path<TAB>nodes_before<TAB>nodes_after<TAB>edges_after<TAB>tf_ms
path is golden/FILE or corpus/PATH (as in the manifest). Before each model's
line, a comment line
    # model<TAB>path<TAB>edges_before=N<TAB>fetch=T,T<TAB>feed=T,T
gives the edges before and the exact fetches and feeds used (bench/optimize_bench.sh
passes the same to grapnel). Models TensorFlow cannot take are comment lines
    # skipped<TAB>path<TAB>reason
"""

import argparse
import gzip
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2, tensor_shape_pb2, types_pb2  # noqa: E402
from tensorflow.core.protobuf import (config_pb2, meta_graph_pb2,  # noqa: E402
                                      rewriter_config_pb2)
from tensorflow.python.grappler import cluster as gcluster  # noqa: E402
from tensorflow.python.grappler import tf_optimizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
RC = rewriter_config_pb2.RewriterConfig


def rewriter_config(fnloop=False):
    rc = RC()
    on, off = RC.ON, RC.OFF
    rc.disable_model_pruning = False
    rc.common_subgraph_elimination = on
    rc.constant_folding = on
    rc.shape_optimization = on
    rc.arithmetic_optimization = on
    rc.dependency_optimization = on
    rc.debug_stripper = RC.DEFAULT  # default: off
    rc.layout_optimizer = off
    rc.remapping = off
    rc.loop_optimization = on if fnloop else off
    rc.function_optimization = on if fnloop else off
    rc.implementation_selector = off
    rc.auto_mixed_precision = off
    rc.auto_mixed_precision_onednn_bfloat16 = off
    rc.auto_mixed_precision_mkl = off
    rc.auto_mixed_precision_cpu = off
    rc.pin_to_host_optimization = off
    rc.scoped_allocator_optimization = off
    rc.memory_optimization = RC.NO_MEM_OPT
    rc.auto_parallel.enable = False
    rc.min_graph_nodes = -1
    rc.use_plugin_optimizers = off
    return rc


def config_proto(fnloop=False):
    cp = config_pb2.ConfigProto()
    cp.graph_options.rewrite_options.CopyFrom(rewriter_config(fnloop))
    return cp


def node_name(t):
    t = t.lstrip("^")
    return t.split(":")[0]


def counts(gd):
    return len(gd.node), sum(len(n.input) for n in gd.node)


def sinks(gd):
    used = set()
    for n in gd.node:
        for i in n.input:
            used.add(node_name(i))
    return [n.name for n in gd.node if n.name not in used and n.op != "NoOp"]


def load_graph(path):
    """Returns a GraphDef, or raises ValueError with the reason."""
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    text = path.endswith(".pbtxt") or path.endswith(".pbtxt.gz")
    errors = []
    for cls in (graph_pb2.GraphDef, meta_graph_pb2.MetaGraphDef):
        m = cls()
        try:
            if text:
                text_format.Parse(data.decode("utf-8"), m)
            else:
                m.ParseFromString(data)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{cls.__name__}: {str(e).splitlines()[0][:120]}")
            continue
        if isinstance(m, meta_graph_pb2.MetaGraphDef):
            m = m.graph_def
        if len(m.node) == 0:
            errors.append(f"{cls.__name__}: no nodes")
            continue
        return m
    raise ValueError("not a GraphDef: " + "; ".join(errors))


def manifest():
    """{graph path as in the manifest: (feeds, fetches)}"""
    out, cur = {}, None
    for line in open(os.path.join(DATA, "golden", "manifest.txt")):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "model":
            cur = {"graph": None, "feed": [], "fetch": []}
        elif f[0] == "graph":
            cur["graph"] = f[1]
        elif f[0] in ("feed", "fetch"):
            cur[f[0]].append(f[1])
        elif f[0] == "end" and cur and cur["graph"]:
            out[cur["graph"]] = (cur["feed"], cur["fetch"])
    return out


def metagraph(gd, feeds, fetches):
    mg = meta_graph_pb2.MetaGraphDef()
    mg.graph_def.CopyFrom(gd)
    by_name = {n.name: n for n in gd.node}
    col = mg.collection_def["train_op"]
    for t in fetches:
        col.node_list.value.append(t)
    sig = mg.signature_def["serving_default"]
    for i, t in enumerate(fetches):
        ti = sig.outputs[f"out{i}"]
        ti.name = t if ":" in t else t + ":0"
    for i, t in enumerate(feeds):
        ti = sig.inputs[f"in{i}"]
        ti.name = t
        n = by_name.get(node_name(t))
        ti.dtype = types_pb2.DT_FLOAT
        if n is not None and "dtype" in n.attr:
            ti.dtype = n.attr["dtype"].type
        if n is not None and "shape" in n.attr:
            ti.tensor_shape.CopyFrom(n.attr["shape"].shape)
        else:
            ti.tensor_shape.CopyFrom(tensor_shape_pb2.TensorShapeProto(unknown_rank=True))
    return mg


def run_tf(cluster, cp, mg, runs):
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = tf_optimizer.OptimizeGraph(cp, mg, verbose=False,
                                         graph_id=b"grappler_counts",
                                         cluster=cluster)
        times.append((time.perf_counter() - t0) * 1000.0)
    return out, statistics.median(times)


def models(corpus):
    man = manifest()
    out = []
    for f in sorted(os.listdir(os.path.join(DATA, "golden"))):
        if f.endswith(".pb"):
            rel = "golden/" + f
            feeds, fetches = man.get(rel, ([], None))
            out.append((rel, os.path.join(DATA, rel), feeds, fetches))
    if corpus and os.path.isdir(corpus):
        for d, _, files in sorted(os.walk(corpus)):
            for f in sorted(files):
                if not f.endswith((".pb", ".pbtxt", ".pbtxt.gz")):
                    continue
                full = os.path.join(d, f)
                relc = os.path.relpath(full, corpus)
                if "saved_model" in f or os.path.exists(os.path.join(d, "saved_model.pb")):
                    continue  # SavedModel directories: not measured
                rel = "corpus/" + relc
                feeds, fetches = man.get(rel, ([], None))
                out.append((rel, full, feeds, fetches))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(DATA, "grappler_counts.txt"))
    ap.add_argument("--corpus", default=os.environ.get(
        "GN_CORPUS_DIR", os.path.join(os.path.dirname(ROOT), "shared", "corpus")))
    ap.add_argument("--graph", action="append", default=[])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fnloop", action="store_true",
                    help="function_optimization and loop_optimization ON as well; "
                         "default output tests/data/grappler_counts_fnloop.txt")
    a = ap.parse_args()
    if a.fnloop and a.out == os.path.join(DATA, "grappler_counts.txt"):
        a.out = os.path.join(DATA, "grappler_counts_fnloop.txt")

    if a.graph:
        work_list = [(g, g, [], None) for g in a.graph]
        a.out = "-"
    else:
        work_list = models(a.corpus)

    cp = config_proto(a.fnloop)
    cluster = gcluster.Cluster()
    lines = [
        "# Grappler's node and edge counts on our models; written by tools/grappler_counts.py (do not edit).",
        f"# TensorFlow {tf.__version__} (CPU), tf_optimizer.OptimizeGraph, one grappler Cluster reused,",
        "# time = wall time of the OptimizeGraph call alone, median of %d, MetaGraphDef built beforehand." % a.runs,
        "# RewriterConfig: " + text_format.MessageToString(rewriter_config(a.fnloop), as_one_line=True),
        "# Fetches: the manifest's for the models it names (its feeds as signature inputs);",
        "# otherwise the nodes nothing consumes, NoOps excluded. Edges = every input entry, control included.",
        "# path\tnodes_before\tnodes_after\tedges_after\ttf_ms",
    ]
    for rel, full, feeds, fetches in work_list:
        try:
            gd = load_graph(full)
        except Exception as e:  # noqa: BLE001
            lines.append(f"# skipped\t{rel}\t{e}")
            print(lines[-1], file=sys.stderr)
            continue
        if fetches is None:
            fetches = sinks(gd)
        nb, eb = counts(gd)
        mg = metagraph(gd, feeds, fetches)
        try:
            out, ms = run_tf(cluster, cp, mg, a.runs)
        except Exception as e:  # noqa: BLE001
            msg = " ".join(str(e).split())[:300]
            lines.append(f"# skipped\t{rel}\tTensorFlow: {msg}")
            print(lines[-1], file=sys.stderr)
            continue
        na, ea = counts(out)
        lines.append(f"# model\t{rel}\tedges_before={eb}\tfetch={','.join(fetches)}\tfeed={','.join(feeds)}")
        lines.append(f"{rel}\t{nb}\t{na}\t{ea}\t{ms:.3f}")
        print(f"{rel}: {nb} -> {na} nodes, {ms:.1f} ms", file=sys.stderr)
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
