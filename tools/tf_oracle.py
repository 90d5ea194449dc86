#!/usr/bin/env python3
"""TensorFlow as the judge of everything grapnel writes.

For each model of the zoo (tools/model_zoo.py's OUT/zoo.txt: frozen.pb, in0.npy)
and of the corpus (the models of tests/data/golden/manifest.txt with their
recorded inputs, and the other GraphDefs under the corpus whose Placeholders
take numbers, fed seeded random inputs), grapnel writes:

  opt-default   grapnel optimize, default options, --target cpu
  opt-all       grapnel optimize, every pass on ({'min_graph_nodes': -1} and every
                optional pass ON), --target cpu
  seg-fp32/16   grapnel segment, precision_mode FP32 / FP16 (minimum_segment_size 3)
  save-*        grapnel save of the model as a SavedModel, SaveOptions {} / 
                {'save_debug_info': True} / {'experimental_skip_saver': True}; and
                save-opt: the opt-default graph saved
  gpu-default   grapnel optimize --target gpu:sm_90 (default options)
  gpu-all       the same with every pass on and auto_mixed_precision ON

Then TensorFlow, in separate processes with TF_ENABLE_ONEDNN_OPTS=1 and =0,
runs the original model and every cpu output on the same inputs and compares
each fetch (float32 relative L2 <= 1e-5; 1e-2 for seg-fp16; integers exact).
A GraphDef is imported (tf.compat.v1.import_graph_def: op registrations,
attrs, shape functions, colocation) and run by a tf.compat.v1.Session; a
SavedModel (grapnel saves GraphDefs as TF1-style SavedModels) is loaded by
TensorFlow's TF1 loader, tf.compat.v1.saved_model.loader.load, as TensorFlow
Serving loads it, and its serving_default signature run. (tf.saved_model.load
wraps such a graph into a pruned function: it refuses reference-typed
variables, and its SymbolicGradient ignores the library's GradientDefs, the
same for TensorFlow's own TF1 SavedModels.) When TensorFlow cannot import the
original itself (node names it refuses, ops it lacks), an output it refuses
the same way is not counted against grapnel ("-"); a graph with no outputs
is not saved.

Corpus SavedModel directories (source corpus-sm; --source picks sources): the signature
serving_default, else the only one, else the first by key. grapnel writes
  freeze        grapnel freeze DIR --signature S (the frozen signature, a GraphDef)
  opt-default   grapnel optimize DIR --signature S -o OUT.pb (frozen, optimized GraphDef)
  opt-all       the same with every pass on
  seg-fp32/16   grapnel segment of the frozen graph (as TF-TRT converts a SavedModel: its
                signature frozen first)
  save-*        grapnel save DIR with each SaveOptions variant (signatures, variables, assets,
                object graph kept)
  save-opt      grapnel optimize DIR --signature S -o OUTDIR (the optimized signature as a
                SavedModel: its key, argument keys and tags kept)
  gpu-*         as above, from DIR
and TensorFlow runs the signature on seeded inputs made from its TensorInfos (unknown dims 2,
an unknown rank a vector of 2, strings drawn from the asset files' lines, a sparse argument
two values of a dense shape [2, 1, ...]): the original and every SavedModel output by their
signature keys with each of tf.saved_model.load ("v2"; load_v1_in_v2 for a SavedModel without
an object graph) and TensorFlow's TF1 loader ("v1", where the SaverDef restores the
variables) that loads the original, each output compared with the same loader's run of the
original; the GraphDef outputs run on the signature's tensors (a sparse argument's three)
against the v2 run (else v1). A model whose original no loader loads or whose original
does not run is listed under the table as for GraphDefs; a loader that refuses the original
(while the other runs it) is listed too and not used on its outputs.

Segment outputs: grapnel's engine op (Grapnel>EngineOp) is grapnel's own
kernel, which TensorFlow has not. What TensorFlow runs is the rest of what
grapnel wrote: every engine op is replaced by a PartitionedCall of its
native-segment function (its segment_func attr, TF-TRT's fallback path: the
subgraph the engine was built from, as grapnel wrote it into the library),
with the engine's inputs, InT and OutT.

GPU outputs (no GPU here): with the tensorflow wheel that has the CUDA kernels
(--gpu-py, a virtualenv with `tensorflow`, not tensorflow-cpu), each output is
imported and every node of it and of its functions is checked against the GPU
KernelDefs (kernels.get_registered_kernels_for_op: device GPU, each type
constraint's allowed values): a node grapnel placed on a GPU, or whose op the
original did not have, must match a GPU kernel; the fused ops must also be
ones TensorFlow's GPU kernels take (conv_ops_fused_impl.h: Conv2D with
[BiasAdd, Relu]; matmul_op_fused.cc: MatMul with BiasAdd (+ Relu,
GeluApproximate; Tanh, Sigmoid, GeluExact in half only); fused_batch_norm_op.cc:
_FusedBatchNormEx Identity/Relu, NHWC, channels divisible by 4). Nodes whose op
the original had and that TensorFlow would place on the CPU are counted, not
failed.

Usage (from the repository root, after a Release build):
    PY=$(tools/tfvenv.sh)
    $PY tools/model_zoo.py ~/.cache/grapnel/zoo          # once
    $PY tools/tf_oracle.py --build build --zoo ~/.cache/grapnel/zoo \\
        --corpus ../shared/corpus --gpu-py "$(tools/tfvenv.sh --gpu)" \\
        --md bench/TF_ORACLE.md [--only NAME,...] [--source zoo,golden,corpus,corpus-sm] [--work DIR]
Exit status 1 when any check fails.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOL = {"fp32": 1e-5, "fp16": 1e-2}
ALL_ON = ("{'min_graph_nodes': -1, 'debug_stripper': True, 'pin_to_host_optimization': True, "
          "'loop_optimization': True, 'function_optimization': True, 'common_subgraph_elimination': True, "
          "'implementation_selector': True, 'constant_folding': True, 'arithmetic_optimization': True, "
          "'remapping': True, 'layout_optimizer': True, 'shape_optimization': True, "
          "'dependency_optimization': True}")
GPU_ALL = ALL_ON[:-1] + ", 'auto_mixed_precision': True}"
SAVE_VARIANTS = [("save", "{}"), ("save-debug", "{'save_debug_info': True}"),
                 ("save-skip-saver", "{'experimental_skip_saver': True}")]


# ---- models ---------------------------------------------------------------------------------
def zoo_models(zoo):
    out = {}
    with open(os.path.join(zoo, "zoo.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) != 3:
                continue
            name, feed, fetch = p   # several feeds / fetches comma-separated (the decoder models)
            d = os.path.join(zoo, name)
            feeds = feed.split(",")
            out[name] = {"name": name, "graph": os.path.join(d, "frozen.pb"), "feeds": feeds,
                         "fetches": fetch.split(","), "source": "zoo",
                         "inputs": [os.path.join(d, "in%d.npy" % k) for k in range(len(feeds))]}
    return list(out.values())


def golden_models(corpus):
    gdir = os.path.join(ROOT, "tests", "data")
    models, cur = [], None
    with open(os.path.join(gdir, "golden", "manifest.txt")) as f:
        for line in f:
            p = line.split()
            if not p or p[0].startswith("#"):
                continue
            if p[0] == "model":
                cur = {"name": p[1], "feeds": [], "fetches": [], "inputs": [], "source": "golden"}
            elif p[0] == "graph":
                g = p[1]
                cur["graph"] = os.path.join(corpus, g[7:]) if g.startswith("corpus/") else os.path.join(gdir, g)
                if g.startswith("corpus/"):
                    cur["source"] = "corpus"
                    cur["corpus_path"] = g[7:]
            elif p[0] == "feed":
                cur["feeds"].append(p[1])
                cur["inputs"].append(os.path.join(gdir, "golden", p[2]))
            elif p[0] == "fetch":
                cur["fetches"].append(p[1])
            elif p[0] == "end":
                if os.path.exists(cur["graph"]):
                    models.append(cur)
                cur = None
    return models


def corpus_graphdefs(corpus, taken):
    """The corpus GraphDefs not in the golden manifest (inputs generated by the worker)."""
    out = []
    for dp, _, files in sorted(os.walk(corpus)):
        for fn in sorted(files):
            if not (fn.endswith(".pb") or fn.endswith(".pbtxt") or fn.endswith(".pbtxt.gz")):
                continue
            if fn in ("saved_model.pb", "saved_model.pbtxt", "tfhub_module.pb", "fingerprint.pb",
                      "keras_metadata.pb"):
                continue
            rel = os.path.relpath(os.path.join(dp, fn), corpus)
            if rel in taken:
                continue
            name = os.path.basename(fn).split(".")[0].replace("tensorflow__", "")[-40:]
            out.append({"name": name, "graph": os.path.join(dp, fn), "feeds": None, "fetches": None, "inputs": None,
                        "source": "corpus", "corpus_path": rel})
    return out


def corpus_savedmodels(grapnel, corpus):
    """The corpus SavedModel directories, each with the signature grapnel and TensorFlow run:
    serving_default, else the only one, else the first by key (`grapnel inspect --json`)."""
    out = []
    for dp, _, files in sorted(os.walk(corpus)):
        if "saved_model.pb" not in files and "saved_model.pbtxt" not in files:
            continue
        name = os.path.basename(dp).replace("tensorflow__", "")[-40:]
        m = {"name": name, "graph": dp, "feeds": [], "fetches": [], "inputs": None, "source": "corpus-sm",
             "corpus_path": os.path.relpath(dp, corpus), "sm": {}}
        rc, text, _ = sh([grapnel, "inspect", "--signatures", "--json", dp])
        try:
            doc = json.loads(text[text.index("{"):]) if rc == 0 else None
        except ValueError:
            doc = None
        sigs = (doc or {}).get("signatures") or {}
        keys = sorted(k for k in sigs if k != "__saved_model_init_op")
        if not keys:
            m["sm"]["error"] = "grapnel inspect: " + " | ".join(text.strip().splitlines()[-2:])[:300]
            out.append(m)
            continue
        sig = "serving_default" if "serving_default" in keys else keys[0]
        tags = doc.get("tags") or ""
        m["sm"] = {"signature": sig, "tags": [t for t in tags.split(",") if t],
                   "inputs": sigs[sig]["inputs"], "outputs": sigs[sig]["outputs"],
                   "assets": os.path.join(dp, "assets")}
        m["feeds"] = [a["tensor"] for a in sigs[sig]["inputs"]]
        m["fetches"] = [a["tensor"] for a in sigs[sig]["outputs"]]
        out.append(m)
    return out


# ---- grapnel's outputs ------------------------------------------------------------------------
def sh(cmd, timeout=600):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, (p.stdout + p.stderr)
    except subprocess.TimeoutExpired:
        rc, out = 124, "timed out"
    return rc, out, time.time() - t


def inspect_io(grapnel, graph):
    """(feeds, fetches) as `grapnel inspect` lists the graph's inputs and outputs."""
    rc, out, _ = sh([grapnel, "inspect", graph])
    feeds, fetches, sect = [], [], None
    for line in out.splitlines():
        if line.startswith("inputs"):
            sect = feeds
            continue
        if line.startswith("outputs"):
            sect = fetches
            continue
        if line and not line[0].isspace():
            sect = None
            continue
        if sect is not None and line.strip():
            t = line.split()[0]
            sect.append(t if ":" in t else t + ":0")
    return feeds, fetches


def write_outputs(m, grapnel, work):
    """Runs grapnel for every output of model m; returns {kind: artifact or error}."""
    d = os.path.join(work, m["name"])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    io = []
    for t in m["feeds"]:
        io += ["--feed", t.split(":")[0]]
    fetch_args = []
    for t in m["fetches"]:
        fetch_args += ["--fetch", t.split(":")[0] if t.endswith(":0") else t]
    arts = {}
    seg_io = io + fetch_args if len(m["feeds"]) + len(m["fetches"]) <= 60 else []   # the CLI takes up to 64 names

    def skip(kind, why):
        arts[kind] = {"kind": kind, "path": None, "secs": 0, "fmt": "skip", "why": why}

    def run(kind, cmd, path, **kw):
        rc, out, dt = sh(cmd)
        a = {"kind": kind, "path": path, "secs": round(dt, 2), **kw}
        if rc != 0:
            a["error"] = "grapnel: " + " | ".join(out.strip().splitlines()[-2:])[:300]
        arts[kind] = a
        return a

    g = m["graph"]
    if "sm" in m:
        return write_outputs_sm(m, grapnel, d, run, seg_io, arts)
    run("opt-default", [grapnel, "optimize", g, "-o", os.path.join(d, "opt-default.pb")] + io + fetch_args,
        os.path.join(d, "opt-default.pb"), fmt="graph", tol=TOL["fp32"])
    run("opt-all", [grapnel, "optimize", g, "-o", os.path.join(d, "opt-all.pb"), "--options", ALL_ON] + io + fetch_args,
        os.path.join(d, "opt-all.pb"), fmt="graph", tol=TOL["fp32"])
    for prec in ("FP32", "FP16"):
        k = "seg-" + prec.lower()
        run(k, [grapnel, "segment", g, "-o", os.path.join(d, k + ".pb"), "--params",
                "{'precision_mode': '%s', 'minimum_segment_size': 3}" % prec] + seg_io,
            os.path.join(d, k + ".pb"), fmt="graph", tol=TOL["fp16" if prec == "FP16" else "fp32"])
    for k, opts in SAVE_VARIANTS:
        if not m["fetches"]:
            skip(k, "the graph has no outputs to sign")
            continue
        run(k, [grapnel, "save", g, os.path.join(d, k)] + io + fetch_args + ["--save-options", opts],
            os.path.join(d, k), fmt="saved_model", tol=TOL["fp32"])
    if not m["fetches"]:
        skip("save-opt", "the graph has no outputs to sign")
    elif "error" not in arts["opt-default"]:
        run("save-opt", [grapnel, "save", os.path.join(d, "opt-default.pb"), os.path.join(d, "save-opt")] + io +
            fetch_args, os.path.join(d, "save-opt"), fmt="saved_model", tol=TOL["fp32"])
    run("gpu-default", [grapnel, "optimize", g, "-o", os.path.join(d, "gpu-default.pb"), "--target", "gpu:sm_90"] + io +
        fetch_args, os.path.join(d, "gpu-default.pb"), fmt="gpu")
    run("gpu-all", [grapnel, "optimize", g, "-o", os.path.join(d, "gpu-all.pb"), "--target", "gpu:sm_90", "--options",
                    GPU_ALL] + io + fetch_args, os.path.join(d, "gpu-all.pb"), fmt="gpu")
    return arts


def write_outputs_sm(m, grapnel, d, run, seg_io, arts):
    """A SavedModel directory: its signature frozen (grapnel freeze), optimized (to a GraphDef,
    and to a SavedModel: save-opt), the frozen graph segmented (TF-TRT converts a SavedModel's
    frozen signature), the directory saved again with each SaveOptions variant."""
    if "error" in m["sm"]:
        for k in KINDS_SM:
            arts[k] = {"kind": k, "path": None, "secs": 0, "error": m["sm"]["error"],
                       "fmt": "gpu" if k.startswith("gpu") else "graph"}
        return arts
    g, sig = m["graph"], ["--signature", m["sm"]["signature"]]
    fz = run("freeze", [grapnel, "freeze", g, "-o", os.path.join(d, "freeze.pb")] + sig,
             os.path.join(d, "freeze.pb"), fmt="graph", tol=TOL["fp32"])
    run("opt-default", [grapnel, "optimize", g, "-o", os.path.join(d, "opt-default.pb")] + sig,
        os.path.join(d, "opt-default.pb"), fmt="graph", tol=TOL["fp32"])
    run("opt-all", [grapnel, "optimize", g, "-o", os.path.join(d, "opt-all.pb"), "--options", ALL_ON] + sig,
        os.path.join(d, "opt-all.pb"), fmt="graph", tol=TOL["fp32"])
    for prec in ("FP32", "FP16"):
        k = "seg-" + prec.lower()
        if "error" in fz:
            arts[k] = {"kind": k, "path": None, "secs": 0, "fmt": "graph", "error": "not segmented: " + fz["error"]}
            continue
        run(k, [grapnel, "segment", fz["path"], "-o", os.path.join(d, k + ".pb"), "--params",
                "{'precision_mode': '%s', 'minimum_segment_size': 3}" % prec] + seg_io,
            os.path.join(d, k + ".pb"), fmt="graph", tol=TOL["fp16" if prec == "FP16" else "fp32"])
    for k, opts in SAVE_VARIANTS:
        run(k, [grapnel, "save", g, os.path.join(d, k), "--save-options", opts],
            os.path.join(d, k), fmt="saved_model", tol=TOL["fp32"])
    run("save-opt", [grapnel, "optimize", g, "-o", os.path.join(d, "save-opt")] + sig,
        os.path.join(d, "save-opt"), fmt="saved_model", tol=TOL["fp32"])
    run("gpu-default", [grapnel, "optimize", g, "-o", os.path.join(d, "gpu-default.pb"), "--target", "gpu:sm_90"] +
        sig, os.path.join(d, "gpu-default.pb"), fmt="gpu")
    run("gpu-all", [grapnel, "optimize", g, "-o", os.path.join(d, "gpu-all.pb"), "--target", "gpu:sm_90",
                    "--options", GPU_ALL] + sig, os.path.join(d, "gpu-all.pb"), fmt="gpu")
    return arts


# ---- TensorFlow side (worker processes) -------------------------------------------------------
def tf_setup():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def load_graphdef(tf, path):
    from google.protobuf import text_format
    gd = tf.compat.v1.GraphDef()
    if path.endswith(".gz"):
        import gzip
        data = gzip.open(path, "rb").read()
    else:
        data = open(path, "rb").read()
    if path.endswith(".pbtxt") or path.endswith(".pbtxt.gz"):
        text_format.Parse(data.decode(), gd)
    else:
        gd.ParseFromString(data)
    return gd


def engines_to_native(gd):
    """Each Grapnel>EngineOp becomes a PartitionedCall of its native-segment function."""
    n = 0
    for node in gd.node:
        if node.op != "Grapnel>EngineOp":
            continue
        fn = node.attr["segment_func"].func.name
        tin = list(node.attr["InT"].list.type)
        tout = list(node.attr["OutT"].list.type)
        for k in list(node.attr.keys()):
            del node.attr[k]
        node.op = "PartitionedCall"
        node.attr["f"].func.name = fn
        node.attr["Tin"].list.type.extend(tin)
        node.attr["Tout"].list.type.extend(tout)
        n += 1
    return n


def gen_inputs(tf, gd, feeds, np, seed=5):
    """Seeded inputs for the feeds from the Placeholders' dtype and shape (unknown dims 2)."""
    rng = np.random.default_rng(seed)
    by = {n.name: n for n in gd.node}
    vals = []
    for t in feeds:
        n = by.get(t.split(":")[0])
        if n is None or n.op not in ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault"):
            raise ValueError("feed %s is not a Placeholder" % t)
        dt = tf.dtypes.as_dtype(n.attr["dtype"].type) if "dtype" in n.attr else None
        if dt is None:
            raise ValueError("feed %s has no dtype" % t)
        sh_ = n.attr["shape"].shape if "shape" in n.attr else None
        if sh_ is None or sh_.unknown_rank:
            raise ValueError("feed %s has an unknown rank" % t)
        dims = [d.size if d.size >= 0 else 2 for d in sh_.dim]
        if dt.is_floating:
            v = rng.standard_normal(dims).astype(dt.as_numpy_dtype)
        elif dt.is_integer:
            v = rng.integers(0, 3, size=dims).astype(dt.as_numpy_dtype)
        elif dt == tf.bool:
            v = np.zeros(dims, dtype=bool)
        else:
            raise ValueError("feed %s is %s" % (t, dt.name))
        vals.append(v)
    return vals


def run_graph(tf, gd, feeds, fetches, vals):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=g, config=cfg) as s:
        return s.run(fetches, dict(zip(feeds, vals)))


def run_saved(tf, path, feeds, fetches, vals):
    """The serving_default signature run by TensorFlow's TF1 loader (what TensorFlow Serving's
    C++ loader does with a SavedModel of a GraphDef: the graph as saved, its library's gradient
    functions included)."""
    def key(d, t):
        k = t.split(":")[0] if t.endswith(":0") else t
        for c in (k, k.replace("/", "_"), k.replace(":", "_")):
            if c in d:
                return c
        if len(d) == 1:
            return list(d.keys())[0]
        raise KeyError("no signature entry for %s in %s" % (t, sorted(d)))
    g = tf.Graph()
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=g, config=cfg) as s:
        mg = tf.compat.v1.saved_model.loader.load(s, ["serve"], path)
        sig = mg.signature_def["serving_default"]
        fd = {sig.inputs[key(sig.inputs, t)].name: v for t, v in zip(feeds, vals)}
        return s.run([sig.outputs[key(sig.outputs, t)].name for t in fetches], fd)


def read_meta_graph(tf, path, tags):
    """The MetaGraphDef of a SavedModel directory with these tags (else its first)."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    pb = os.path.join(path, "saved_model.pb")
    if os.path.exists(pb):
        sm.ParseFromString(open(pb, "rb").read())
    else:
        text_format.Parse(open(os.path.join(path, "saved_model.pbtxt")).read(), sm)
    for mg in sm.meta_graphs:
        if set(mg.meta_info_def.tags) == set(tags):
            return mg
    return sm.meta_graphs[0]


def saved_loaders(tf, path, tags):
    """TensorFlow's loaders that take this SavedModel: tf.saved_model.load ("v2"; a SavedModel
    without an object graph through its load_v1_in_v2), and TensorFlow's TF1 loader ("v1",
    TensorFlow Serving's) where it can restore the variables (a SaverDef, or no checkpoint:
    experimental_skip_saver drops the SaverDef, and the TF1 loader then leaves them
    uninitialized)."""
    mg = read_meta_graph(tf, path, tags)
    out = ["v2"]
    if mg.saver_def.restore_op_name or not os.path.exists(os.path.join(path, "variables", "variables.index")):
        out.append("v1")
    return out


LOADER_NAMES = {"v1": "TensorFlow's TF1 loader", "v2": "tf.saved_model.load"}


def load_sm(tf, path, tags, loader):
    if loader == "v2":
        return tf.saved_model.load(path, tags=list(tags) or None)
    with tf.compat.v1.Session(graph=tf.Graph()) as s:
        return tf.compat.v1.saved_model.loader.load(s, list(tags), path)


def ti_parts(ti):
    """A TensorInfo's tensors: its name, or a SparseTensor's values, indices and dense shape."""
    if ti.HasField("coo_sparse"):
        c = ti.coo_sparse
        return [c.values_tensor_name, c.indices_tensor_name, c.dense_shape_tensor_name]
    return [ti.name]


def sm_io(tf, sm, path):
    """The tensors of the signature's arguments in the original, sparse ones as three."""
    sd = read_meta_graph(tf, path, sm["tags"]).signature_def[sm["signature"]]
    sm["in_parts"] = [ti_parts(sd.inputs[a["key"]]) for a in sm["inputs"]]
    sm["out_parts"] = [ti_parts(sd.outputs[a["key"]]) for a in sm["outputs"]]


def run_sm(tf, path, sm, loader, vals):
    """The signature run by its keys, by tf.saved_model.load ("v2": a sparse argument KEY as
    KEY_values, KEY_indices, KEY_dense_shape) or TensorFlow's TF1 loader ("v1"); the outputs
    flattened (a sparse one as its values, indices and dense shape)."""
    if loader == "v2":
        f = tf.saved_model.load(path, tags=list(sm["tags"]) or None).signatures[sm["signature"]]
        kw = {}
        for a, v in zip(sm["inputs"], vals):
            if len(v) == 3:
                kw.update({a["key"] + "_values": v[0], a["key"] + "_indices": v[1], a["key"] + "_dense_shape": v[2]})
            else:
                kw[a["key"]] = v[0]
        out = f(**{k: tf.constant(v) for k, v in kw.items()})
        got = []
        for a in sm["outputs"]:
            k = a["key"]
            if isinstance(out.get(k), tf.SparseTensor):
                got += [out[k].values.numpy(), out[k].indices.numpy(), out[k].dense_shape.numpy()]
            elif k not in out and k + "_values" in out:
                got += [out[k + "_values"].numpy(), out[k + "_indices"].numpy(), out[k + "_dense_shape"].numpy()]
            else:
                got.append(out[k].numpy())
        return got
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.compat.v1.Session(graph=tf.Graph(), config=cfg) as s:
        mg = tf.compat.v1.saved_model.loader.load(s, list(sm["tags"]), path)
        sd = mg.signature_def[sm["signature"]]
        fd = {}
        for a, v in zip(sm["inputs"], vals):
            if a["key"] not in sd.inputs:
                raise KeyError("no signature input %s (it has %s)" % (a["key"], ", ".join(sorted(sd.inputs))))
            fd.update(zip(ti_parts(sd.inputs[a["key"]]), v))
        fetch = []
        for a in sm["outputs"]:
            if a["key"] not in sd.outputs:
                raise KeyError("no signature output %s (it has %s)" % (a["key"], ", ".join(sorted(sd.outputs))))
            fetch += ti_parts(sd.outputs[a["key"]])
        return s.run(fetch, fd)


def gen_inputs_sm(tf, sm, np, seed=5):
    """Seeded inputs for a SavedModel signature from its TensorInfos (unknown dims 2, an unknown
    rank a vector of 2); strings are lines of the SavedModel's asset files (vocabularies) and
    one word none has, else words. Each argument's list of arrays: a sparse one (sm["in_parts"])
    two values at [0, 0, ...] and [1, 0, ...] of a dense shape [2, 1, ...]."""
    rng = np.random.default_rng(seed)
    words = []
    if os.path.isdir(sm["assets"]):
        for fn in sorted(os.listdir(sm["assets"])):
            try:
                words += [w.split("\t")[0] for w in open(os.path.join(sm["assets"], fn), errors="replace")
                          .read().splitlines()[:50] if w.strip()]
            except OSError:
                pass
    words = (words or ["the", "quick brown", "fox"]) + ["grapnel-unknown-word"]
    vals = []
    for a, parts in zip(sm["inputs"], sm["in_parts"]):
        dt = tf.dtypes.as_dtype(a["dtype"])
        dims = [2 if d is None or d < 0 else d for d in (a["shape"] if a["shape"] is not None else [None])]
        sparse = len(parts) == 3
        if sparse:
            rank = max(len(dims), 1)
            dims = [2]
        if dt.is_floating:
            v = rng.standard_normal(dims).astype(dt.as_numpy_dtype)
        elif dt.is_integer:
            v = rng.integers(0, 3, size=dims).astype(dt.as_numpy_dtype)
        elif dt == tf.bool:
            v = np.zeros(dims, dtype=bool)
        elif dt == tf.string:
            v = np.array([words[i] for i in rng.integers(0, len(words), size=int(np.prod(dims)))],
                         dtype=object).reshape(dims)
            v = np.vectorize(lambda w: w.encode(), otypes=[object])(v) if v.size else v
        else:
            raise ValueError("input %s is %s" % (a["key"], dt.name))
        if sparse:
            ind = np.zeros((2, rank), dtype=np.int64)
            ind[1, 0] = 1
            vals.append([v, ind, np.array([2] + [1] * (rank - 1), dtype=np.int64)])
        else:
            vals.append([v])
    return vals


def compare(np, got, ref, tol):
    worst = 0.0
    for a, r in zip(got, ref):
        a, r = np.asarray(a), np.asarray(r)
        if a.shape != r.shape:
            return False, "shape %s, want %s" % (a.shape, r.shape), worst
        if r.dtype.kind in "fc":
            den = float(np.linalg.norm(r.astype(np.float64))) or 1.0
            e = float(np.linalg.norm(a.astype(np.float64) - r.astype(np.float64))) / den
            if not np.isfinite(e):
                e = 0.0 if np.array_equal(np.isnan(a), np.isnan(r)) and np.allclose(
                    np.nan_to_num(a), np.nan_to_num(r)) else float("inf")
            worst = max(worst, e)
        elif not np.array_equal(a, r):
            return False, "values differ (%s)" % r.dtype, worst
    if worst > tol:
        return False, "rel L2 %.1e > %.0e" % (worst, tol), worst
    return True, "%.1e" % worst, worst


def clean(msg):
    """A message without the tool's own stack location (TensorFlow's 'defined at' trace)."""
    k = msg.find(" defined at (most recent call last)")
    return (msg[:k] + " ...") if k >= 0 else msg


def worker(args):
    import numpy as np
    tf = tf_setup()
    plan = json.load(open(args.plan))
    res = {}
    for m in plan:
        r = res[m["name"]] = {}
        if "sm" in m:
            worker_sm(tf, np, m, r)
        else:
            worker_graph(tf, np, m, r)
        for v in r.values():
            v["msg"] = clean(v["msg"])
        print("  %-28s %s" % (m["name"], " ".join("%s:%s" % (k, "ok" if v["ok"] else "FAIL" if v["ok"] is False else "-")
                                                   for k, v in r.items())), file=sys.stderr, flush=True)
    json.dump(res, open(args.result, "w"), indent=1)


def judge(tf, np, r, kind, a, importable, fn, refused=None):
    """r[kind] from fn() (what TensorFlow made of artifact a): (ok, msg) or a run to compare.
    refused: why TensorFlow cannot load the original (a SavedModel); grapnel failing on it
    then is no failure either (a SavedModel without its variables: neither can restore them)."""
    if a["fmt"] == "skip":
        r[kind] = {"ok": None, "msg": a["why"]}
        return
    if "error" in a:
        if refused:
            r[kind] = {"ok": None, "msg": "%s; TensorFlow cannot load the original either: %s" % (a["error"], refused)}
        else:
            r[kind] = {"ok": False, "msg": a["error"]}
        return
    try:
        r[kind] = fn()
    except Exception as e:
        msg = " ".join(str(e).strip().split())[:300]
        if not importable:   # TensorFlow refuses the original the same way: not grapnel's doing
            r[kind] = {"ok": None, "msg": "TensorFlow cannot import the original either: " + msg}
        else:
            r[kind] = {"ok": False, "msg": "TensorFlow: " + msg}


def worker_graph(tf, np, m, r):
    importable = True
    try:
        gd = load_graphdef(tf, m["graph"])
        try:
            with tf.Graph().as_default():
                tf.compat.v1.import_graph_def(gd, name="")
        except Exception:
            importable = False
            raise
        if m["inputs"]:
            vals = [np.load(p) for p in m["inputs"]]
        else:
            vals = gen_inputs(tf, gd, m["feeds"], np)
        ref = run_graph(tf, gd, m["feeds"], m["fetches"], vals)
    except Exception as e:  # the original does not run here: nothing to compare with
        r["_original"] = {"ok": None, "msg": "TensorFlow cannot run the original: " +
                          str(e).strip().splitlines()[0][:200]}
        ref = None
    for kind, a in m["arts"].items():
        if a["fmt"] == "gpu":
            continue

        def one(a=a):
            if a["fmt"] == "graph":
                return judge_graph(tf, np, m, a, ref, vals if ref is not None else None)
            if ref is None:
                with tf.compat.v1.Session(graph=tf.Graph()) as s:
                    tf.compat.v1.saved_model.loader.load(s, ["serve"], a["path"])
                return {"ok": True, "msg": "loaded"}
            got = run_saved(tf, a["path"], m["feeds"], m["fetches"], vals)
            ok, msg, err = compare(np, got, ref, a["tol"])
            return {"ok": ok, "msg": msg, "err": err}
        judge(tf, np, r, kind, a, importable, one)


def judge_graph(tf, np, m, a, ref, vals, feeds=None, fetches=None):
    """A GraphDef grapnel wrote (engines as their native segments): imported, and run against
    ref when the original ran (on feeds and fetches, default the model's)."""
    og = load_graphdef(tf, a["path"])
    eng = engines_to_native(og)
    if ref is None:
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(og, name="")
        return {"ok": True, "msg": "imported", "engines": eng}
    got = run_graph(tf, og, feeds or m["feeds"], fetches or m["fetches"], vals)
    ok, msg, err = compare(np, got, ref, a["tol"])
    return {"ok": ok, "msg": msg, "err": err}


def worker_sm(tf, np, m, r):
    """A SavedModel directory: the original run by each of TensorFlow's loaders that takes it; the
    GraphDefs grapnel wrote run on the signature's tensors, the SavedModels by the signature's keys
    with the same loaders (each compared with the same loader's run of the original)."""
    sm, importable, refs, vals, refused = m["sm"], True, {}, None, None
    if "error" in sm:
        r["_original"] = {"ok": None, "msg": sm["error"]}
        importable = False
    else:
        try:
            loaders, why = [], None
            sm["refused_by"] = {}
            for ld in saved_loaders(tf, m["graph"], sm["tags"]):
                try:
                    load_sm(tf, m["graph"], sm["tags"], ld)
                    loaders.append(ld)
                except Exception as e:   # this loader refuses the original: not used on the outputs
                    sm["refused_by"][ld] = " ".join(str(e).strip().split())[:200]
                    why = why or "%s: %s" % (ld, sm["refused_by"][ld])
            sm["loaders"] = loaders
            if loaders and sm["refused_by"]:
                r["_loaders"] = {"ok": None, "msg": "; ".join("%s refuses the original (%s)" % (
                    LOADER_NAMES[ld], sm["refused_by"][ld]) for ld in sorted(sm["refused_by"]))}
            if not loaders:
                importable, refused = False, why
                raise ValueError(why)
            sm_io(tf, sm, m["graph"])
            vals = gen_inputs_sm(tf, sm, np)
            for ld in loaders:
                refs[ld] = run_sm(tf, m["graph"], sm, ld, vals)
        except Exception as e:
            r["_original"] = {"ok": None, "msg": "TensorFlow cannot run the original: " +
                              " ".join(str(e).strip().split())[:200], "refused": bool(refused)}
            refs = {}
    ref = refs.get("v2", refs.get("v1"))
    for kind, a in m["arts"].items():
        if a["fmt"] == "gpu":
            continue

        def one(a=a):
            if a["fmt"] == "graph":
                return judge_graph(tf, np, m, a, ref, sum(vals, []) if vals is not None else None,
                                   sum(sm.get("in_parts", []), []), sum(sm.get("out_parts", []), []))
            have = saved_loaders(tf, a["path"], sm["tags"])
            lds = [ld for ld in sm.get("loaders") or have if ld in have]
            if not lds and all(ld in sm.get("refused_by", {}) for ld in have):
                return {"ok": None, "msg": "; ".join("the only loader that takes it, %s, refuses the original: %s" %
                                                     (LOADER_NAMES[ld], sm["refused_by"][ld]) for ld in have)}
            if not lds:
                raise ValueError("none of the loaders that take the original (%s) applies to it (%s)" %
                                 (", ".join(sm.get("loaders") or []), ", ".join(have)))
            worst, done = 0.0, []
            for ld in lds:
                if ref is None:
                    load_sm(tf, a["path"], sm["tags"], ld)
                    done.append(ld)
                    continue
                got = run_sm(tf, a["path"], sm, ld, vals)
                ok, msg, err = compare(np, got, refs.get(ld, ref), a["tol"])
                if not ok:
                    return {"ok": False, "msg": "%s: %s" % (ld, msg), "err": err}
                worst = max(worst, err)
                done.append(ld)
            return {"ok": True, "msg": "%s (%s)" % ("%.1e" % worst if ref is not None else "loaded", ", ".join(done)),
                    "err": worst}
        judge(tf, np, r, kind, a, importable, one, refused)


# ---- GPU KernelDef check (run with the CUDA-built wheel) ---------------------------------------
GPU_FUSED = {
    # tensorflow/core/kernels/conv_ops_fused_impl.h, GPU patterns
    "_FusedConv2D": {("BiasAdd", "Relu"): {"DT_FLOAT", "DT_HALF"}},
    # tensorflow/core/kernels/matmul_op_fused.cc, GPU patterns
    "_FusedMatMul": {("BiasAdd",): {"DT_FLOAT", "DT_HALF"}, ("BiasAdd", "Relu"): {"DT_FLOAT", "DT_HALF"},
                     ("BiasAdd", "GeluApproximate"): {"DT_FLOAT", "DT_HALF"}, ("BiasAdd", "Tanh"): {"DT_HALF"},
                     ("BiasAdd", "Sigmoid"): {"DT_HALF"}, ("BiasAdd", "GeluExact"): {"DT_HALF"}},
}


def gpu_worker(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import tensorflow as tf
    from tensorflow.python.framework import kernels
    plan = json.load(open(args.plan))
    cache = {}

    def kdefs(op):
        if op not in cache:
            cache[op] = [k for k in kernels.get_registered_kernels_for_op(op).kernel]
        return cache[op]

    def matches(node, device):
        for k in kdefs(node.op):
            if k.device_type != device and k.device_type != "DEFAULT":   # DEVICE_DEFAULT kernels serve GPUs too
                continue
            ok = True
            for c in k.constraint:
                allowed = set(c.allowed_values.list.type)
                v = node.attr.get(c.name)
                if v is None:
                    continue  # a default the OpDef supplies
                types = list(v.list.type) if v.HasField("list") else [v.type]
                if any(t not in allowed for t in types):
                    ok = False
            if ok:
                return True
        return False

    def nodes_of(gd):
        for n in gd.node:
            yield n
        for f in gd.library.function:
            for n in f.node_def:
                yield n

    res = {}
    for m in plan:
        r = res[m["name"]] = {}
        importable = True
        try:
            ogd = read_meta_graph(tf, m["graph"], m["sm"]["tags"]).graph_def if "sm" in m else \
                load_graphdef(tf, m["graph"])
            orig_ops = {n.op for n in nodes_of(ogd)}
            orig_nodes = {(n.name, n.op, n.device) for n in nodes_of(ogd)}
            try:
                with tf.Graph().as_default():
                    tf.compat.v1.import_graph_def(ogd, name="")
            except Exception:
                importable = False
        except Exception as e:
            orig_ops, orig_nodes, importable = set(), set(), False
            r["_original"] = {"ok": None, "msg": str(e)[:200]}
        for kind, a in m["arts"].items():
            if a["fmt"] != "gpu":
                continue
            if "error" in a:
                r[kind] = {"ok": False, "msg": a["error"]}
                continue
            try:
                gd = load_graphdef(tf, a["path"])
                try:
                    with tf.Graph().as_default():
                        tf.compat.v1.import_graph_def(gd, name="")
                except Exception as e:
                    if importable:
                        raise
                    r[kind] = {"ok": None, "msg": "TensorFlow cannot import the original either: " + str(e)[:200]}
                    continue
                g = tf.Graph()
                with g.as_default():
                    tf.compat.v1.import_graph_def(gd, name="")
                bad, cpu = [], 0
                for n in nodes_of(gd):
                    on_gpu = "GPU" in n.device.upper()
                    if n.op in GPU_FUSED:
                        fo = tuple(x.decode() for x in n.attr["fused_ops"].list.s)
                        t = tf.dtypes.as_dtype(n.attr["T"].type).as_datatype_enum
                        from tensorflow.core.framework import types_pb2
                        tn = types_pb2.DataType.Name(t)
                        if fo not in GPU_FUSED[n.op] or tn not in GPU_FUSED[n.op][fo]:
                            bad.append("%s %s %s %s" % (n.name, n.op, list(fo), tn))
                        continue
                    if n.op == "_FusedBatchNormEx":
                        act = n.attr["activation_mode"].s.decode()
                        fmt = n.attr["data_format"].s.decode() or "NHWC"
                        if act not in ("Identity", "Relu") or fmt != "NHWC":
                            bad.append("%s _FusedBatchNormEx %s %s" % (n.name, act, fmt))
                    if matches(n, "GPU"):
                        continue
                    # grapnel's doing: an op the original had not, or a GPU placement it had not
                    if n.op not in orig_ops or (on_gpu and (n.name, n.op, n.device) not in orig_nodes):
                        if on_gpu or not matches(n, "CPU"):
                            bad.append("%s %s: no GPU kernel" % (n.name, n.op))
                            continue
                    cpu += 1
                if bad:
                    r[kind] = {"ok": False, "msg": "; ".join(bad[:4])[:300]}
                else:
                    r[kind] = {"ok": True, "msg": "%d node(s) on CPU kernels" % cpu}
            except Exception as e:
                r[kind] = {"ok": False, "msg": "TensorFlow: " + " ".join(str(e).split())[:300]}
    json.dump(res, open(args.result, "w"), indent=1)


# ---- driver -----------------------------------------------------------------------------------
KINDS_SM = ["freeze", "opt-default", "opt-all", "seg-fp32", "seg-fp16", "save", "save-debug", "save-skip-saver",
            "save-opt", "gpu-default", "gpu-all"]
KINDS = ["opt-default", "opt-all", "seg-fp32", "seg-fp16", "save", "save-debug", "save-skip-saver", "save-opt",
         "gpu-default", "gpu-all"]


def cell(on, off):
    def one(v):
        if v is None:
            return "?"
        if v["ok"] is None:
            return "-"
        return "ok" if v["ok"] else "**FAIL**"
    if off is None:
        return one(on)
    a, b = one(on), one(off)
    return a if a == b else "%s/%s" % (a, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--zoo", action="append", default=[])
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--gpu-py", default=None)
    ap.add_argument("--only", default="")
    ap.add_argument("--source", default="", help="only the models of these sources (zoo, golden, corpus, corpus-sm)")
    ap.add_argument("--work", default=os.path.expanduser("~/.cache/grapnel/tf_oracle"))
    ap.add_argument("--md", default=None)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--gpu-worker", action="store_true")
    ap.add_argument("--plan")
    ap.add_argument("--result")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.gpu_worker:
        return gpu_worker(args)
    grapnel = os.path.join(os.path.abspath(args.build), "grapnel")
    byname = {}
    for z in args.zoo:   # a later zoo's model of the same name wins
        for m in zoo_models(z):
            byname[m["name"]] = m
    models = list(byname.values())
    if args.corpus:
        gm = golden_models(args.corpus)
        models += gm
        models += corpus_graphdefs(args.corpus, {m.get("corpus_path") for m in gm})
        models += corpus_savedmodels(grapnel, args.corpus)
    else:
        models += [m for m in golden_models("/nonexistent") if m["source"] == "golden"]
    only = set(args.only.split(",")) if args.only else None
    models = [m for m in models if not only or m["name"] in only]
    sources = set(args.source.split(",")) if args.source else None
    models = [m for m in models if not sources or m["source"] in sources]
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    for m in models:
        if m["feeds"] is None:
            m["feeds"], m["fetches"] = inspect_io(grapnel, m["graph"])
        m["arts"] = write_outputs(m, grapnel, args.work)
        print("grapnel wrote %-28s (%.0fs)" % (m["name"], sum(a["secs"] for a in m["arts"].values())),
              file=sys.stderr, flush=True)
    plan = os.path.join(args.work, "plan.json")
    json.dump(models, open(plan, "w"), indent=1)
    results = {}
    for onednn in ("1", "0"):
        out = os.path.join(args.work, "result_onednn%s.json" % onednn)
        env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn)
        print("TensorFlow, TF_ENABLE_ONEDNN_OPTS=%s" % onednn, file=sys.stderr, flush=True)
        subprocess.run([sys.executable, __file__, "--worker", "--plan", plan, "--result", out], env=env, check=True)
        results[onednn] = json.load(open(out))
    gpu = {}
    if args.gpu_py:
        out = os.path.join(args.work, "result_gpu.json")
        print("TensorFlow (CUDA build), GPU KernelDefs", file=sys.stderr, flush=True)
        subprocess.run([args.gpu_py, __file__, "--gpu-worker", "--plan", plan, "--result", out], check=True)
        gpu = json.load(open(out))
    # the table
    fails = []
    kinds = (["freeze"] if any("sm" in m for m in models) else []) + KINDS
    lines = ["| model | source | " + " | ".join(kinds) + " |", "|---|---|" + "---|" * len(kinds)]
    notes, notes_ld = [], []
    for m in models:
        on, off, gp = results["1"].get(m["name"], {}), results["0"].get(m["name"], {}), gpu.get(m["name"], {})
        cells = []
        for k in kinds:
            if k not in m["arts"]:
                c = "n/a"   # freeze: a SavedModel's column
            elif k.startswith("gpu"):
                v = gp.get(k)
                if v is not None and v["ok"] is False and "error" in m["arts"][k] and on.get("_original", {}).get("refused"):
                    v = {"ok": None, "msg": v["msg"] + "; TensorFlow cannot load the original either"}
                c = cell(v, None) if args.gpu_py else "n/a"
                if v is not None and v["ok"] is False:
                    fails.append("%s %s: %s" % (m["name"], k, v["msg"]))
            else:
                c = cell(on.get(k), off.get(k))
                for tag, v in (("oneDNN on", on.get(k)), ("oneDNN off", off.get(k))):
                    if v is not None and v["ok"] is False:
                        fails.append("%s %s (%s): %s" % (m["name"], k, tag, v["msg"]))
            cells.append(c)
        if "_loaders" in on:
            notes_ld.append("%s: %s; the other loader ran it and the outputs" % (m["name"], on["_loaders"]["msg"]))
        if "_original" in on and "sm" in m:
            notes.append("%s (SavedModel, signature %s): %s; its outputs were imported / loaded by TensorFlow, not run"
                         % (m["name"], m["sm"].get("signature", "?"), on["_original"]["msg"]))
        elif "_original" in on:
            notes.append("%s: %s; its outputs were imported / loaded by TensorFlow, not run" %
                         (m["name"], on["_original"]["msg"]))
        lines.append("| %s | %s | %s |" % (m["name"], m["source"], " | ".join(cells)))
    text = ["Checked %d models in %.0f s; %d failure(s)." % (len(models), time.time() - t0, len(fails)), ""]
    text += lines
    if notes:
        text += ["", "Models whose original TensorFlow does not run on generated inputs:", ""]
        text += ["- " + n for n in notes]
    if notes_ld:
        text += ["", "SavedModels one of TensorFlow's loaders refuses (the original itself):", ""]
        text += ["- " + n for n in notes_ld]
    if fails:
        text += ["", "Failures:", ""] + ["- " + f for f in fails]
    print("\n".join(text))
    if args.md:
        with open(args.md, "w") as f:
            # the command as it runs from a clone: the GPU virtualenv is the one tools/tfvenv.sh makes
            argv = ['"$(tools/tfvenv.sh --gpu)"' if sys.argv[i - 1] == "--gpu-py" else a
                    for i, a in enumerate(sys.argv) if i > 0]
            f.write(HEADER % " ".join(argv).replace(os.path.expanduser("~"), "~"))
            f.write("\n".join(text) + "\n")
    return 1 if fails else 0


HEADER = """# TensorFlow as the judge of what grapnel writes

Written by `tools/tf_oracle.py` (see its docstring for what each column is):

    PY=$(tools/tfvenv.sh)
    $PY tools/tf_oracle.py %s

TensorFlow 2.21 (tensorflow-cpu for the runs; the CUDA-built `tensorflow` wheel,
in a second virtualenv, only for the GPU KernelDef check). A cell is `ok` when
TensorFlow ran the output on both of its CPU paths (TF_ENABLE_ONEDNN_OPTS=1 and
=0, separate processes) and matched its output on the original (float32 rel L2
<= 1e-5, seg-fp16 <= 1e-2), or, for a model whose original TensorFlow cannot
run on generated inputs (listed below the table), imported / loaded it; `a/b`
when the two paths differ (oneDNN on/off); `-` when there is nothing to judge
(TensorFlow refuses the original itself the same way, or a graph without
outputs is not saved). Segment outputs run with each engine replaced by its
native-segment function. GPU columns: every node's op and type attrs match a GPU
KernelDef (or an op the original had, left to the CPU), fused ops as
TensorFlow's GPU kernels take them. Corpus models: the GraphDefs (the golden
manifest's with their recorded inputs, the others on seeded generated inputs)
and the SavedModel directories (source corpus-sm, with a freeze column: the
signature frozen, optimized, segmented, saved again, run by its keys with each
of TensorFlow's loaders that loads the original; see the tool's docstring).

The zoo and the CUDA-built wheel, once, outside the repository:

    $PY tools/model_zoo.py ~/.cache/grapnel/zoo-full
    tools/tfvenv.sh --gpu

"""

if __name__ == "__main__":
    sys.exit(main())
