#!/usr/bin/env python3
"""CPU inference time of grapnel next to TensorFlow's, same machine, same run.

For each golden model of tests/data/golden/manifest.txt (the Keras models and
the corpus models, with their recorded inputs) and for a ResNet-50
(keras.applications.ResNet50(weights=None), seeded, batch 1, 224x224x3, frozen
into a temporary directory), times:

  TensorFlow  the frozen GraphDef, two ways, keeping the faster: a tf.function
              over the graph imported by tf.compat.v1.wrap_function and pruned
              to the feeds and fetches (TF2's inference path; called on
              tf.constant inputs), and a tf.compat.v1.Session callable
              (make_callable) over the imported graph. Grappler and oneDNN as
              TensorFlow ships them (set TF_ENABLE_ONEDNN_OPTS=0 to turn
              oneDNN off).
  grapnel     gn_session_run through the public C API of libgrapnel.so (ctypes;
              `grapnel run` has no repeat or timing option), on the same .npy
              inputs, after gn_session_new on the loaded graph. The first run
              (which compiles the engine and plans memory) is reported apart.

Each side: warm-up runs, then the median of up to --runs timed runs (fewer
when --max-time seconds are spent first); TensorFlow and grapnel processes
alternate --rounds times and each side keeps its lowest median, which evens
out load from other processes on a shared machine. Two settings: one thread
(TensorFlow intra/inter-op 1; grapnel num_threads 1 and OPENBLAS_NUM_THREADS=1)
and the defaults (TensorFlow's own; grapnel num_threads 0 and OpenBLAS's
default, one thread per core). Every measurement runs in a fresh process, so
the two libraries never share a process or a thread pool.

It also checks the answers: grapnel's first fetch against TensorFlow's
(relative L2 error), and, with --cli, times `grapnel run` end to end per
invocation (process start, load, one run, writing the fetch) minus a
load-only invocation (same command fetching the fed tensor itself, which
needs no computation): that difference is one cold run, compile and plan
included.

Usage (from the repository root, in a virtualenv with the packages of
tools/requirements-tools.txt, after a Release build):
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j
    python bench/tf_compare.py [--build build] [--runs 50] [--max-time 20]
        [--rounds 2] [--no-resnet] [--only a,b] [--cli] [--keep DIR]
        [--corpus ../shared/corpus]
Prints the ResNet-50 graph path, progress on stderr, then a markdown table.
"""

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
DEFAULT_CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
WARMUP = 3


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- the cases ------------------------------------------------------------------------------


def read_manifest(corpus):
    """[{name, graph, feeds: [[tensor, npy]], fetches: [tensor], refs: [npy]}]"""
    cases, cur = [], None
    with open(os.path.join(GOLDEN, "manifest.txt")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "model":
                cur = {"name": w[1], "feeds": [], "fetches": [], "refs": []}
            elif w[0] == "graph":
                where, rel = w[1].split("/", 1)
                cur["graph"] = os.path.join(GOLDEN if where == "golden" else corpus, rel)
            elif w[0] == "feed":
                cur["feeds"].append([w[1], os.path.join(GOLDEN, w[2])])
            elif w[0] == "fetch":
                cur["fetches"].append(w[1])
                cur["refs"].append(os.path.join(GOLDEN, w[2]))
            elif w[0] == "end":
                if os.path.exists(cur["graph"]):
                    cases.append(cur)
                else:
                    log("%s: %s not found: skipped" % (cur["name"], cur["graph"]))
                cur = None
    return cases


def make_resnet(out):
    """Freezes a seeded ResNet-50 into out/; writes its input and TensorFlow's
    logits and probabilities. Runs in its own process (TensorFlow)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    import keras
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    keras.utils.set_random_seed(50)
    model = keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3))
    fn = tf.function(lambda x: model(x, training=False))
    cf = fn.get_concrete_function(tf.TensorSpec([1, 224, 224, 3], tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(cf)
    gd = frozen.graph.as_graph_def()
    feed, prob = frozen.inputs[0].name, frozen.outputs[0].name
    # the logits: the input of the final Softmax
    sm = [n for n in gd.node if n.op == "Softmax"]
    logits = sm[-1].input[0]
    logits = logits if ":" in logits else logits + ":0"
    with open(os.path.join(out, "resnet50.pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    x = np.random.RandomState(50).uniform(-1.0, 1.0, (1, 224, 224, 3)).astype(np.float32)
    np.save(os.path.join(out, "resnet50.in0.npy"), x)
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=g) as s:
        lo, pr = s.run([logits, prob], {feed: x})
    np.save(os.path.join(out, "resnet50.out0.npy"), lo)
    np.save(os.path.join(out, "resnet50.out1.npy"), pr)
    case = {
        "name": "resnet50",
        "graph": os.path.join(out, "resnet50.pb"),
        "feeds": [[feed, os.path.join(out, "resnet50.in0.npy")]],
        "fetches": [logits, prob],
        "refs": [os.path.join(out, "resnet50.out0.npy"), os.path.join(out, "resnet50.out1.npy")],
    }
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump(case, f)
    print(json.dumps(case))


def time_calls(call, runs, max_time):
    """Warm-up, then up to runs timed calls. Returns the median wall time, the
    median CPU time of the whole process (all its threads), in seconds, and
    the number of calls. With one thread the CPU time is the work done, and
    hardly moves when other processes compete for the cores; wall time does."""
    for _ in range(WARMUP):
        call()
    wall, cpu = [], []
    t_end = time.perf_counter() + max_time
    while len(wall) < runs and (len(wall) < 5 or time.perf_counter() < t_end):
        c0 = time.process_time()
        t0 = time.perf_counter()
        call()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), len(wall)


def rel_l2(a, ref):
    import numpy as np

    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    n = np.linalg.norm(ref.ravel())
    d = np.linalg.norm((a - ref).ravel())
    return float(d / n) if n > 0 else float(d)


# ---- TensorFlow -------------------------------------------------------------------------------


def worker_tf(cases, threads, runs, max_time):
    """Times two ways of running the frozen graph and keeps the faster:
    "function", a tf.function over the graph imported by
    tf.compat.v1.wrap_function and pruned to the feeds and fetches (TF2's
    inference path), and "session", a tf.compat.v1.Session callable over the
    imported graph (make_callable: the lowest per-call overhead TF1 offers).
    Both run Grappler (and oneDNN, unless TF_ENABLE_ONEDNN_OPTS=0) as TensorFlow
    ships them."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    cfg = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    res = {}
    for c in cases:
        gd = tf.compat.v1.GraphDef()
        with open(c["graph"], "rb") as f:
            gd.ParseFromString(f.read())
        arrays = [np.load(p) for _, p in c["feeds"]]
        ref = np.load(c["refs"][0])

        def imports(gd=gd):
            tf.compat.v1.import_graph_def(gd, name="")

        wrapped = tf.compat.v1.wrap_function(imports, [])
        g = wrapped.graph
        pruned = wrapped.prune(
            feeds=[g.get_tensor_by_name(t) for t, _ in c["feeds"]],
            fetches=[g.get_tensor_by_name(t) for t in c["fetches"]],
        )
        fn = tf.function(pruned)
        inputs = [tf.constant(a) for a in arrays]
        err_f = rel_l2(fn(*inputs)[0].numpy(), ref)
        med_f, cpu_f, n_f = time_calls(lambda: fn(*inputs), runs, max_time)

        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=graph, config=cfg) as sess:
            call = sess.make_callable(c["fetches"], [t for t, _ in c["feeds"]])
            err_s = rel_l2(call(*arrays)[0], ref)
            med_s, cpu_s, n_s = time_calls(lambda: call(*arrays), runs, max_time)
        best = "function" if med_f <= med_s else "session"
        res[c["name"]] = {
            "ms": min(med_f, med_s) * 1e3,
            "cpu_ms": min(cpu_f, cpu_s) * 1e3,
            "best": best,
            "function_ms": med_f * 1e3,
            "session_ms": med_s * 1e3,
            "runs": min(n_f, n_s),
            "err_vs_ref": max(err_f, err_s),
        }
        log("  tf      %-17s threads %-7s function %9.3f ms, session %9.3f ms (%d runs)"
            % (c["name"], threads or "default", med_f * 1e3, med_s * 1e3, min(n_f, n_s)))
    return res


# ---- grapnel, through libgrapnel.so -------------------------------------------------------------


class GnTensor(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("dims", ctypes.c_int64 * 8),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_size_t),
        ("internal", ctypes.c_void_p),
    ]


class GnSessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_char_p),
        ("seed", ctypes.c_uint64),
        ("num_threads", ctypes.c_int32),
        ("workspace_limit_bytes", ctypes.c_uint64),
        ("cuda_graph", ctypes.c_bool),
    ]


class GnCompare(ctypes.Structure):
    _fields_ = [
        ("match", ctypes.c_int32),
        ("max_abs_err", ctypes.c_double),
        ("rel_l2_err", ctypes.c_double),
        ("tol", ctypes.c_double),
        ("n_diff", ctypes.c_int64),
        ("n_nan_mismatch", ctypes.c_int64),
        ("why", ctypes.c_char * 256),
    ]


def load_lib(path):
    lib = ctypes.CDLL(path)
    P = ctypes.c_void_p
    lib.gn_graph_load.argtypes = [ctypes.c_char_p, P, ctypes.POINTER(P)]
    lib.gn_graph_errmsg.restype = ctypes.c_char_p
    lib.gn_graph_errmsg.argtypes = [P]
    lib.gn_graph_free.argtypes = [P]
    lib.gn_session_options_init.argtypes = [ctypes.POINTER(GnSessionOptions)]
    lib.gn_session_new.argtypes = [P, ctypes.POINTER(GnSessionOptions), ctypes.POINTER(P)]
    lib.gn_session_errmsg.restype = ctypes.c_char_p
    lib.gn_session_errmsg.argtypes = [P]
    lib.gn_session_free.argtypes = [P]
    lib.gn_session_run.argtypes = [P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(GnTensor), ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(GnTensor), ctypes.c_size_t]
    lib.gn_npy_read.argtypes = [ctypes.c_char_p, ctypes.POINTER(GnTensor), ctypes.c_char_p, ctypes.c_size_t]
    lib.gn_tensor_free.argtypes = [ctypes.POINTER(GnTensor)]
    lib.gn_tensor_compare.argtypes = [ctypes.POINTER(GnTensor), ctypes.POINTER(GnTensor), ctypes.c_double,
                                      ctypes.POINTER(GnCompare)]
    return lib


def npy(lib, path):
    t = GnTensor()
    err = ctypes.create_string_buffer(512)
    if lib.gn_npy_read(path.encode(), ctypes.byref(t), err, 512) != 0:
        raise SystemExit("%s: %s" % (path, err.value.decode()))
    return t


def worker_grapnel(cases, threads, runs, max_time, libpath):
    lib = load_lib(libpath)
    res = {}
    for c in cases:
        g = ctypes.c_void_p()
        t0 = time.perf_counter()
        path = c.get("gn_graph", c["graph"])
        if lib.gn_graph_load(path.encode(), None, ctypes.byref(g)) != 0:
            raise SystemExit("%s: %s" % (path, lib.gn_graph_errmsg(g).decode()))
        load_s = time.perf_counter() - t0
        o = GnSessionOptions()
        lib.gn_session_options_init(ctypes.byref(o))
        o.num_threads = threads
        s = ctypes.c_void_p()
        if lib.gn_session_new(g, ctypes.byref(o), ctypes.byref(s)) != 0:
            raise SystemExit("%s: session: %s" % (c["name"], lib.gn_session_errmsg(s).decode()))
        nf, nx = len(c["feeds"]), len(c["fetches"])
        feeds = (GnTensor * nf)(*[npy(lib, p) for _, p in c["feeds"]])
        feed_names = (ctypes.c_char_p * nf)(*[t.encode() for t, _ in c["feeds"]])
        fetch_names = (ctypes.c_char_p * nx)(*[t.encode() for t in c["fetches"]])
        outs = (GnTensor * nx)()
        failure = []

        def run():
            if lib.gn_session_run(s, feed_names, feeds, nf, fetch_names, outs, nx) != 0:
                failure.append(lib.gn_session_errmsg(s).decode())
                raise RuntimeError(failure[-1])
            for i in range(nx):
                lib.gn_tensor_free(ctypes.byref(outs[i]))

        entry = {"load_ms": load_s * 1e3}
        try:
            t0 = time.perf_counter()
            if lib.gn_session_run(s, feed_names, feeds, nf, fetch_names, outs, nx) != 0:
                raise RuntimeError(lib.gn_session_errmsg(s).decode())
            entry["first_ms"] = (time.perf_counter() - t0) * 1e3
            ref = npy(lib, c["refs"][0])
            cmp = GnCompare()
            lib.gn_tensor_compare(ctypes.byref(outs[0]), ctypes.byref(ref), 0.0, ctypes.byref(cmp))
            why = cmp.why.decode()
            same_shape = not why.startswith(("shape", "dtype"))
            entry["err_vs_ref"] = cmp.rel_l2_err if same_shape else why
            lib.gn_tensor_free(ctypes.byref(ref))
            for i in range(nx):
                lib.gn_tensor_free(ctypes.byref(outs[i]))
            med, cpu, n = time_calls(run, runs, max_time)
            entry.update({"ms": med * 1e3, "cpu_ms": cpu * 1e3, "runs": n})
            log("  grapnel %-17s threads %-7s %9.3f ms (%d runs; first run %.1f ms)"
                % (c["name"], threads or "default", med * 1e3, n, entry["first_ms"]))
        except RuntimeError as e:
            entry["error"] = str(e)
            log("  grapnel %-17s fails: %s" % (c["name"], e))
        for i in range(nf):
            lib.gn_tensor_free(ctypes.byref(feeds[i]))
        lib.gn_session_free(s)
        lib.gn_graph_free(g)
        res[c["name"]] = entry
    return res


# ---- grapnel run, end to end --------------------------------------------------------------------


def cli_times(cases, cli, tmp, reps=11):
    res = {}
    for c in cases:
        feeds = []
        for t, p in c["feeds"]:
            feeds += ["--feed", "%s=%s" % (t, p)]
        full = [cli, "run", c["graph"]] + feeds + ["--fetch", "%s=%s" % (c["fetches"][0], os.path.join(tmp, "o.npy"))]
        load = [cli, "run", c["graph"]] + feeds + ["--fetch", "%s=%s" % (c["feeds"][0][0], os.path.join(tmp, "f.npy"))]

        def med(cmd):  # noqa: E306
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                ts.append(time.perf_counter() - t0)
                if r.returncode != 0:
                    return None, r.stderr.decode().strip().splitlines()[-1:]
            return statistics.median(ts) * 1e3, None

        t_full, e1 = med(full)
        t_load, e2 = med(load)
        res[c["name"]] = {"full_ms": t_full, "load_ms": t_load, "error": e1 or e2}
        log("  cli     %-17s end to end %s ms, load only %s ms" % (c["name"], t_full, t_load))
    return res


# ---- driver -------------------------------------------------------------------------------------


def sub(args, env=None):
    r = subprocess.run([sys.executable, os.path.abspath(__file__)] + args, stdout=subprocess.PIPE,
                       env=env, check=True)
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def fmt(v, nd=3):
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    return ("%." + str(nd) + "f") % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="grapnel build directory (Release)")
    ap.add_argument("--runs", type=int, default=50, help="timed runs per model and side (default 50)")
    ap.add_argument("--max-time", type=float, default=20.0, help="stop timing a model after S seconds (default 20)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="alternate TensorFlow and grapnel processes this many times and keep each side's lowest "
                         "median (default 2: evens out load from other processes)")
    ap.add_argument("--no-resnet", action="store_true", help="skip ResNet-50")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--cli", action="store_true", help="also time `grapnel run` end to end")
    ap.add_argument("--keep", default="", help="write the ResNet-50 graph here instead of a temporary directory")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: use the ResNet-50 already frozen there (its case.json) instead of freezing again")
    ap.add_argument("--optimize", action="store_true",
                    help="grapnel runs each graph after `grapnel optimize` with the default options (feeds and "
                         "fetches preserved), as TensorFlow runs its graphs after Grappler")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--worker", choices=["tf", "grapnel", "resnet"], help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    args = ap.parse_args()
    lib = os.path.join(os.path.abspath(args.build), "libgrapnel.so")

    if args.worker == "resnet":
        make_resnet(args.cases)
        return 0
    if args.worker:
        with open(args.cases) as f:
            cases = json.load(f)
        if args.worker == "tf":
            r = worker_tf(cases, args.threads, args.runs, args.max_time)
        else:
            r = worker_grapnel(cases, args.threads, args.runs, args.max_time, lib)
        print(json.dumps(r))
        return 0

    if not os.path.exists(lib):
        raise SystemExit("%s not found: build grapnel first (Release)" % lib)
    cli = os.path.join(os.path.abspath(args.build), "grapnel")
    tmp = tempfile.mkdtemp(prefix="grapnel-tfcmp.")
    try:
        cases = read_manifest(args.corpus)
        if not args.no_resnet:
            out = args.keep or tmp
            os.makedirs(out, exist_ok=True)
            cj = os.path.join(out, "case.json")
            if args.reuse and os.path.exists(cj):
                with open(cj) as f:
                    cases.append(json.load(f))
            else:
                log("freezing ResNet-50 into %s ..." % out)
                cases.append(sub(["--worker", "resnet", "--cases", out]))
            print("ResNet-50 frozen graph: %s (feed %s, fetch %s)"
                  % (cases[-1]["graph"], cases[-1]["feeds"][0][0], ", ".join(cases[-1]["fetches"])))
            print("  the same file through the CLI: %s run %s --feed %s=%s --fetch %s"
                  % (cli, cases[-1]["graph"], cases[-1]["feeds"][0][0], cases[-1]["feeds"][0][1],
                     cases[-1]["fetches"][1]))
        if args.only:
            keep = set(args.only.split(","))
            cases = [c for c in cases if c["name"] in keep]
        if args.optimize:
            for c in cases:
                opt = os.path.join(tmp, c["name"] + ".opt.pb")
                cmd = [cli, "optimize", c["graph"], "-o", opt]
                for fd in c["feeds"]:
                    cmd += ["--feed", fd[0]]
                for ft in c["fetches"]:
                    cmd += ["--fetch", ft]
                log("optimizing %s ..." % c["name"])
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                c["gn_graph"] = opt
        cpath = os.path.join(tmp, "cases.json")
        with open(cpath, "w") as f:
            json.dump(cases, f)
        common = ["--cases", cpath, "--runs", str(args.runs), "--max-time", str(args.max_time),
                  "--build", args.build]
        ncpu = os.cpu_count()
        load0 = os.getloadavg()[0]
        results = {}
        for threads in (1, 0):
            env = dict(os.environ)
            if threads == 1:
                env["OPENBLAS_NUM_THREADS"] = "1"
            else:
                env.pop("OPENBLAS_NUM_THREADS", None)
            for rnd in range(args.rounds):
                for side, worker in (("tf", "tf"), ("gn", "grapnel")):
                    log("%s, threads %s, round %d:" % (worker, threads or "default", rnd + 1))
                    r = sub(["--worker", worker, "--threads", str(threads)] + common, env)
                    best = results.setdefault((side, threads), {})
                    for name, e in r.items():
                        if name not in best:
                            best[name] = e
                            continue
                        b = best[name]
                        if "ms" in e and e["ms"] < b.get("ms", float("inf")):
                            for k in ("ms", "best", "function_ms", "session_ms", "runs"):
                                if k in e:
                                    b[k] = e[k]
                        if "cpu_ms" in e and e["cpu_ms"] < b.get("cpu_ms", float("inf")):
                            b["cpu_ms"] = e["cpu_ms"]
        clires = cli_times(cases, cli, tmp) if args.cli else {}

        import numpy as np

        print()
        print("CPU: %s, %d logical CPUs (load average %.1f at the start, %.1f at the end); ms per inference:"
              " median of up to %d runs after %d warm-up runs, the lowest median of %d round(s)."
              % (cpu_name(), ncpu, load0, os.getloadavg()[0], args.runs, WARMUP, args.rounds))
        print("TF: the faster of a tf.function over the imported graph (f) and a v1 Session callable (s);"
              " ratio = grapnel / TF (below 1: grapnel is faster).")
        print()
        def ratio(a, b):
            return fmt(a / b, 2) + "x" if a and b else "—"

        print("One thread (TensorFlow intra/inter-op 1; grapnel num_threads 1, OPENBLAS_NUM_THREADS=1):")
        print()
        print("| model | feeds | TF wall | grapnel wall | ratio | TF CPU | grapnel CPU | CPU ratio |")
        print("|---|---|---|---|---|---|---|---|")
        for c in cases:
            n = c["name"]
            shapes = " ".join("x".join(str(d) for d in np.load(p, mmap_mode="r").shape) or "scalar"
                              for _, p in c["feeds"])
            t = results[("tf", 1)].get(n, {})
            g = results[("gn", 1)].get(n, {})
            if "error" in g:
                print("| %s | %s | %s | fails | | %s | | |" % (n, shapes, fmt(t.get("ms")), fmt(t.get("cpu_ms"))))
                continue
            print("| %s | %s | %s (%s) | %s | %s | %s | %s | %s |" % (
                n, shapes, fmt(t.get("ms")), t.get("best", "?")[0], fmt(g.get("ms")), ratio(g.get("ms"), t.get("ms")),
                fmt(t.get("cpu_ms")), fmt(g.get("cpu_ms")), ratio(g.get("cpu_ms"), t.get("cpu_ms"))))
        print()
        print("Default threads (TensorFlow's own; grapnel num_threads 0, OpenBLAS one thread per core; %d CPUs):"
              % ncpu)
        print()
        print("| model | TF wall | grapnel wall | ratio | grapnel first run | grapnel load | rel L2 vs TF |")
        print("|---|---|---|---|---|---|---|")
        for c in cases:
            n = c["name"]
            t = results[("tf", 0)].get(n, {})
            g = results[("gn", 0)].get(n, {})
            e = g.get("err_vs_ref", g.get("error"))
            if "error" in g:
                print("| %s | %s | fails | | | | %s |" % (n, fmt(t.get("ms")), e))
                continue
            print("| %s | %s (%s) | %s | %s | %s | %s | %s |" % (
                n, fmt(t.get("ms")), t.get("best", "?")[0], fmt(g.get("ms")), ratio(g.get("ms"), t.get("ms")),
                fmt(g.get("first_ms"), 1), fmt(g.get("load_ms"), 1), "%.1e" % e if isinstance(e, float) else e))
        if clires:
            print()
            print("`grapnel run`, end to end per invocation (median of 11), default threads, ms:")
            print()
            print("| model | run + fetch | load only (fetch the feed) | difference |")
            print("|---|---|---|---|")
            for c in cases:
                r = clires[c["name"]]
                if r["error"]:
                    print("| %s | fails: %s | | |" % (c["name"], " ".join(r["error"])))
                else:
                    print("| %s | %.1f | %.1f | %.1f |" % (c["name"], r["full_ms"], r["load_ms"],
                                                          r["full_ms"] - r["load_ms"]))
        for c in cases:
            for threads in (1, 0):
                g = results[("gn", threads)].get(c["name"], {})
                if "error" in g:
                    print("\n%s (threads %s): grapnel fails: %s" % (c["name"], threads or "default", g["error"]))
                    break
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
