#!/usr/bin/env python3
"""Grappler's auto_parallel and scoped_allocator_optimization on small graphs,
as golden files for tests/pass_parallel_test.c, and TensorFlow's own run of
grapnel's results.

    PY=$(tools/tfvenv.sh)
    $PY tools/make_parallel_goldens.py gen      writes tests/data/parallel/
    $PY tools/make_parallel_goldens.py check    runs grapnel's outputs in TensorFlow

gen builds the graphs (TF1 style, ref variables), writes each input graph as
<name>.pb and Grappler's output as <name>.grappler.pb, and lists them in
tests/data/parallel/manifest.txt, one line per case:
    name<TAB>pass<TAB>setting<TAB>fetch,fetch
(pass "auto_parallel", setting num_replicas; pass "scoped_allocator", setting
enable_op, comma-separated with ';'). Grappler runs through
tf_optimizer.OptimizeGraph with every pass off but the one under test,
meta_optimizer_iterations ONE, min_graph_nodes -1; each case runs in its own
process, since the scoped allocator numbers its nodes with a per-process
invocation counter (1 in a fresh process, as grapnel always numbers them).

check (after `build/grapnel` exists) has grapnel optimize each input graph with
the same settings (grapnel optimize --options ...), then
  * auto_parallel: TensorFlow runs the original and grapnel's output for STEPS
    steps, every replica fed the same batch (the queue case: the batch enqueued
    once per replica each step), and compares every variable (float32, max abs
    difference <= 1e-6);
  * scoped_allocator: TensorFlow runs the original and grapnel's output on the
    same feeds; every fetch must be bit-identical.
"""
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, rewriter_config_pb2  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "parallel")
RC = rewriter_config_pb2.RewriterConfig
CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
STEPS = 3
tf1 = tf.compat.v1


# ---- graphs -----------------------------------------------------------------------------
def _data(seed, n, d, k):
    r = np.random.RandomState(seed)
    return r.uniform(-1, 1, (n, d)).astype(np.float32), r.uniform(-1, 1, (n, k)).astype(np.float32)


def _var(name, shape, seed):
    init = np.random.RandomState(seed).uniform(-0.5, 0.5, shape).astype(np.float32)
    return tf1.Variable(init, name=name, use_resource=False)


def _apply(opt, v, g, slots):
    lr = tf.constant(0.1, name=v.op.name + "/lr")
    if opt == "gd":
        return tf1.raw_ops.ApplyGradientDescent(var=v._ref(), alpha=lr, delta=g, name=v.op.name + "/apply")
    if opt == "momentum":
        acc = tf1.Variable(tf.zeros(v.shape), name=v.op.name + "/accum", use_resource=False)
        slots.append(acc)
        return tf1.raw_ops.ApplyMomentum(var=v._ref(), accum=acc._ref(), lr=lr, grad=g,
                                         momentum=tf.constant(0.9), name=v.op.name + "/apply")
    m = tf1.Variable(tf.zeros(v.shape), name=v.op.name + "/m", use_resource=False)
    s = tf1.Variable(tf.zeros(v.shape), name=v.op.name + "/v", use_resource=False)
    slots += [m, s]
    c = tf.constant
    return tf1.raw_ops.ApplyAdam(var=v._ref(), m=m._ref(), v=s._ref(), beta1_power=c(0.9), beta2_power=c(0.999),
                                 lr=lr, beta1=c(0.9), beta2=c(0.999), epsilon=c(1e-7), grad=g,
                                 name=v.op.name + "/apply")


def build_train(model, opt, queue):
    """A training step; returns (graph, fetches, variables, feeds, enqueue op name or None)."""
    g = tf.Graph()
    with g.as_default():
        n, d, k = 8, 4, 2
        feeds = {}
        if queue:
            q = tf1.FIFOQueue(64, [tf.float32, tf.float32], shapes=[[d], [k]], name="input_queue")
            xin = tf1.placeholder(tf.float32, [n, d], name="x_in")
            yin = tf1.placeholder(tf.float32, [n, k], name="y_in")
            enq = q.enqueue_many([xin, yin], name="enqueue")
            x, y = q.dequeue_many(n, name="dequeue")
            feeds = {"x_in": 0, "y_in": 1}
        else:
            x = tf1.placeholder(tf.float32, [n, d], name="x")
            y = tf1.placeholder(tf.float32, [n, k], name="y")
            enq = None
            feeds = {"x": 0, "y": 1}
        slots = []
        if model == "linear":
            w = _var("w", [d, k], 1)
            b = _var("b", [k], 2)
            params = [w, b]
            pred = tf.matmul(x, w) + b
        else:
            w1 = _var("w1", [d, 8], 3)
            b1 = _var("b1", [8], 4)
            w2 = _var("w2", [8, k], 5)
            b2 = _var("b2", [k], 6)
            params = [w1, b1, w2, b2]
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            pred = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        grads = tf.gradients(loss, params)
        applies = [_apply(opt, v, gr, slots) for v, gr in zip(params, grads)]
        train = tf.group(*applies, name="train")
        init = tf1.variables_initializer(params + slots, name="init")
    return g, ["train"], [v.op.name for v in params + slots], feeds, (enq.name if enq is not None else None), init.name


def build_sa(case):
    """Scoped-allocator graphs on the CPU, every node placed. Returns (graph, fetches, feeds)."""
    g = tf.Graph()
    fetches = []
    feeds = {}
    with g.as_default(), tf.device(CPU):
        rng = np.random.RandomState(3)

        # Grappler needs every shape fully known, and it infers none from a
        # Placeholder it is not told is fed: the inputs are constants.
        def ph(name, shape, dt=tf.float32):
            v = rng.uniform(-3, 3, shape) if dt == tf.float32 else rng.randint(-9, 9, shape)
            return tf.constant(v, dtype=dt, name=name)

        if case == "sa_abs":
            a, b, c = ph("a", [2, 3]), ph("b", [4]), ph("c", [2, 1])
            with tf.name_scope("grads"):
                p = [tf.add(a, a, name="p0"), tf.multiply(b, b, name="p1"), tf.subtract(c, a[:, :1], name="p2")]
                r = [tf.abs(t, name="abs_%d" % i) for i, t in enumerate(p)]
            for i, t in enumerate(r):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        elif case == "sa_scopes":
            # one group per scope subtree: s1 (two Abs) is rewritten, s2's lone Abs is not
            a, b = ph("a", [2, 2]), ph("b", [5])
            outs = []
            with tf.name_scope("s1"):
                outs += [tf.abs(tf.add(a, 1.0, name="p0"), name="abs0"), tf.abs(tf.sqrt(b, name="p1"), name="abs1")]
            with tf.name_scope("s2"):
                outs += [tf.abs(tf.exp(a, name="p2"), name="abs2")]
            for i, t in enumerate(outs):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        elif case == "sa_int32":
            ia, ib = ph("ia", [3], tf.int32), ph("ib", [2, 2], tf.int32)
            with tf.name_scope("s"):
                outs = [tf.abs(tf.add(ia, ia, name="q0"), name="iabs0"), tf.abs(tf.negative(ib, name="q1"), name="iabs1")]
            for i, t in enumerate(outs):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        elif case == "sa_mixed_dtypes":
            # float32 and int32 Abs in one scope: Grappler gives up on the whole graph
            a, ia = ph("a", [4]), ph("ia", [3], tf.int32)
            with tf.name_scope("s"):
                outs = [tf.abs(tf.negative(a, name="p0"), name="abs0"), tf.abs(tf.negative(ia, name="q0"), name="iabs0"),
                        tf.abs(tf.exp(a, name="p1"), name="abs1")]
            for i, t in enumerate(outs):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        elif case == "sa_const":
            a = ph("a", [3])
            with tf.name_scope("g"):
                k = tf.constant([1.0, -2.0, 3.0], name="k")
                r = [tf.abs(tf.negative(a, name="p0"), name="abs0"), tf.abs(k, name="abs1"),
                     tf.abs(tf.square(a, name="p2"), name="abs2")]
            for i, t in enumerate(r):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        elif case == "sa_two_ops":
            # enable_op Abs and Neg: one group of each
            a, b = ph("a", [3]), ph("b", [2, 2])
            with tf.name_scope("s"):
                outs = [tf.abs(tf.exp(a, name="p0"), name="abs0"), tf.abs(tf.sqrt(b, name="p1"), name="abs1"),
                        tf.negative(tf.tanh(a, name="p2"), name="neg0"), tf.negative(tf.square(b, name="p3"), name="neg1")]
            for i, t in enumerate(outs):
                fetches.append(tf.identity(t, name="out%d" % i).op.name)
        else:
            raise ValueError(case)
    return g, fetches, feeds


TRAIN = [("linear_gd", "linear", "gd", False), ("mlp_momentum", "mlp", "momentum", False),
         ("mlp_adam", "mlp", "adam", False), ("linear_gd_queue", "linear", "gd", True),
         ("mlp_gd", "mlp", "gd", False)]
SA = [("sa_abs", "Abs"), ("sa_scopes", "Abs"), ("sa_int32", "Abs"), ("sa_mixed_dtypes", "Abs"), ("sa_const", "Abs"),
      ("sa_two_ops", "Abs;Neg")]
REPLICAS = 2


# ---- Grappler ---------------------------------------------------------------------------
def rewriter(pass_name, setting):
    rc = RC()
    off = RC.OFF
    for f in ("layout_optimizer", "constant_folding", "shape_optimization", "remapping", "arithmetic_optimization",
              "dependency_optimization", "loop_optimization", "function_optimization", "debug_stripper",
              "implementation_selector", "auto_mixed_precision", "auto_mixed_precision_onednn_bfloat16",
              "auto_mixed_precision_mkl", "auto_mixed_precision_cpu", "pin_to_host_optimization",
              "common_subgraph_elimination", "use_plugin_optimizers", "scoped_allocator_optimization"):
        setattr(rc, f, off)
    rc.disable_model_pruning = True
    rc.memory_optimization = RC.NO_MEM_OPT
    rc.min_graph_nodes = -1
    rc.meta_optimizer_iterations = RC.ONE
    if pass_name == "auto_parallel":
        rc.auto_parallel.enable = True
        rc.auto_parallel.num_replicas = int(setting)
    else:
        rc.scoped_allocator_optimization = RC.ON
        rc.scoped_allocator_opts.enable_op.extend(setting.split(";"))
    return rc


def grappler(gd, fetches, pass_name, setting, init=None):
    from tensorflow.python.grappler import tf_optimizer
    mg = meta_graph_pb2.MetaGraphDef()
    if init is not None:
        # the "variables" collection (VariableDefs naming their initializers)
        # gives Grappler its init ops, and so its variables
        with init.as_default():
            mg.CopyFrom(tf1.train.export_meta_graph(graph=init))
    mg.graph_def.CopyFrom(gd)
    col = mg.collection_def["train_op"]
    for f in fetches:
        col.node_list.value.append(f)
    cp = config_pb2.ConfigProto()
    cp.graph_options.rewrite_options.CopyFrom(rewriter(pass_name, setting))
    return tf_optimizer.OptimizeGraph(cp, mg, verbose=False, graph_id=b"parallel")


def gen_one(name):
    """Runs in a fresh process (see the docstring)."""
    for n, model, opt, queue in TRAIN:
        if n == name:
            g, fetches, *_ = build_train(model, opt, queue)
            init = g
            pass_name, setting = "auto_parallel", str(REPLICAS)
    for n, op in SA:
        if n == name:
            g, fetches, _ = build_sa(n)
            pass_name, setting, init = "scoped_allocator", op, None
    gd = g.as_graph_def()
    # Grappler's item drops colocation attrs (ignore_colocation); the stored
    # input goes without them too, so that both sides start from one graph
    for n in gd.node:
        if "_class" in n.attr:
            del n.attr["_class"]
    out = grappler(gd, fetches, pass_name, setting, init)
    with open(os.path.join(OUT, name + ".pb"), "wb") as f:
        f.write(gd.SerializeToString())
    with open(os.path.join(OUT, name + ".grappler.pb"), "wb") as f:
        f.write(out.SerializeToString())
    print(f"{name}\t{pass_name}\t{setting}\t{','.join(fetches)}")


def gen():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for name in [t[0] for t in TRAIN] + [s[0] for s in SA]:
        r = subprocess.run([sys.executable, __file__, "gen-one", name], check=True, capture_output=True, text=True)
        lines.append(r.stdout.strip().splitlines()[-1])
    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("# name\tpass\tsetting\tfetches (tools/make_parallel_goldens.py, TensorFlow %s)\n" % tf.__version__)
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


# ---- TensorFlow runs grapnel's output ---------------------------------------------------
def grapnel_optimize(name, pass_name, setting, fetches, tmp):
    exe = os.path.join(ROOT, "build", "grapnel")
    src = os.path.join(OUT, name + ".pb")
    dst = os.path.join(tmp, name + ".grapnel.pb")
    if pass_name == "auto_parallel":
        opts = "{'auto_parallel': True, 'auto_parallel.num_replicas': %s, 'disable_model_pruning': True}" % setting
    else:
        opts = "{'scoped_allocator_optimization': True, 'scoped_allocator_opts.enable_op': '%s', " \
               "'disable_model_pruning': True}" % setting.replace(";", ",")
    off = ("layout_optimizer constant_folding shape_optimization remapping arithmetic_optimization "
           "dependency_optimization loop_optimization function_optimization implementation_selector "
           "common_subgraph_elimination").split()
    opts = opts[:-1] + ", " + ", ".join("'%s': False" % k for k in off) + ", 'min_graph_nodes': -1, " \
        "'meta_optimizer_iterations': 'ONE'}"
    cmd = [exe, "optimize", src, "-o", dst, "--options", opts]
    for f in fetches:
        cmd += ["--fetch", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr}")
    gd = graph_pb2.GraphDef()
    gd.ParseFromString(open(dst, "rb").read())
    return gd


def run_train(gd, variables, feeds, enqueue, init, replicas, batches):
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    cfg = config_pb2.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
    with tf1.Session(graph=g, config=cfg) as s:
        s.run(init)
        for x, y in batches:
            # auto_parallel replicates the placeholders: every replica gets the same batch
            fd = {}
            for k, i in feeds.items():
                names = [k] if replicas == 0 else ["AutoParallel-Replica-%d/%s" % (r, k) for r in range(replicas)]
                if enqueue:
                    names = [k]  # the enqueue op and its inputs stay shared
                for nm in names:
                    fd[g.get_tensor_by_name(nm + ":0")] = (x, y)[i]
            if enqueue:
                for _ in range(max(replicas, 1)):
                    s.run(enqueue, fd)
                s.run("train")
            else:
                s.run("train", fd)
        return [s.run(v + ":0") for v in variables]


def check():
    import tempfile
    tmp = tempfile.mkdtemp(prefix="grapnel_parallel_")
    man = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(OUT, "manifest.txt")) if not ln.startswith("#")]
    worst_all = 0.0
    ok = True
    print(f"TensorFlow {tf.__version__}, {STEPS} steps, inter/intra-op threads 1")
    for name, pass_name, setting, fetch in man:
        fetches = fetch.split(",")
        if pass_name == "auto_parallel":
            model, opt, queue = next((m, o, q) for n, m, o, q in TRAIN if n == name)
            _, _, variables, feeds, enqueue, init = build_train(model, opt, queue)
            batches = [_data(10 + s, 8, 4, 2) for s in range(STEPS)]
            orig = graph_pb2.GraphDef()
            orig.ParseFromString(open(os.path.join(OUT, name + ".pb"), "rb").read())
            for reps in (1, int(setting)):
                out = grapnel_optimize(name, pass_name, str(reps), fetches, tmp)
                a = run_train(orig, variables, feeds, enqueue, init, 0, batches)
                b = run_train(out, variables, feeds, enqueue, init, reps, batches)
                worst = max(float(np.max(np.abs(u - v))) for u, v in zip(a, b))
                # N copies of a step on one batch, each applying grad/N: the same
                # as one step only where the update is linear in the gradient
                # (gradient descent); momentum and Adam apply grad/N N times.
                expect = reps == 1 or opt == "gd"
                good = worst <= 1e-6
                status = ("ok" if good else "FAIL") if expect else "differs (expected: optimizer state is not linear)"
                ok &= good or not expect
                if expect:
                    worst_all = max(worst_all, worst)
                print(f"{name:18s} num_replicas={reps} nodes {len(orig.node)}->{len(out.node)} "
                      f"max|var diff|={worst:.3g} {status}")
        else:
            g, fetches, feeds = build_sa(name)
            out = grapnel_optimize(name, pass_name, setting, fetches, tmp)
            rng = np.random.RandomState(7)
            vals = {k: (rng.uniform(-3, 3, shp).astype(np.float32) if dt == tf.float32
                        else rng.randint(-9, 9, shp).astype(np.int32)) for k, (shp, dt) in feeds.items()}
            res = []
            for gd in (g.as_graph_def(), out):
                gg = tf.Graph()
                with gg.as_default():
                    tf.graph_util.import_graph_def(gd, name="")
                with tf1.Session(graph=gg) as s:
                    res.append(s.run([f + ":0" for f in fetches], {k + ":0": v for k, v in vals.items()}))
            same = all(np.array_equal(u, v) and u.dtype == v.dtype for u, v in zip(*res))
            sa = sum(1 for n in out.node if n.op.startswith("_ScopedAllocator"))
            ok &= same
            print(f"{name:18s} enable_op={setting} nodes {len(g.as_graph_def().node)}->{len(out.node)} "
                  f"_ScopedAllocator* nodes {sa}: fetches {'bit-identical' if same else 'DIFFER'}")
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "gen":
        gen()
    elif len(sys.argv) >= 3 and sys.argv[1] == "gen-one":
        gen_one(sys.argv[2])
    elif len(sys.argv) >= 2 and sys.argv[1] == "check":
        sys.exit(check())
    else:
        print(__doc__)
        sys.exit(2)
