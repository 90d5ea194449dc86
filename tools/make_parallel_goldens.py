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
the same settings (grapnel optimize --options ...); TensorFlow then runs the
GraphDefs as written (one thread, the session's own Grappler off), and
  * auto_parallel, num_replicas 1 and the manifest's N: STEPS training steps,
    every replica fed the same batch (the queue case: the batch enqueued once
    per replica each step), on each graph made "synchronised" (every apply op
    after every apply op's gradient, control edges only; see synchronised());
    grapnel's output against the original: every variable within 1e-6 where
    the semantics are one step (num_replicas 1; gradient descent for any N),
    the difference printed otherwise (Momentum, Adam: N applies of grad/N);
    grapnel's output against Grappler's (N only: Grappler CHECK-fails below 2):
    bit-identical. Unsynchronised figures are printed for information.
  * scoped_allocator: the fetches of grapnel's output, of Grappler's, and of
    the original with TensorFlow's own pass run inside the session (as its
    scoped_allocator_optimizer_test does) must equal the original's bit for
    bit, the same number of _ScopedAllocator* nodes executed in each.
Exit status 0 when every check holds.
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


# Gradient input of each apply op (the pass's table, src/optimizer/passes/auto_parallel.c).
GRAD_INPUT = {"ApplyGradientDescent": 2, "ApplyProximalGradientDescent": 4, "ApplyAdadelta": 6, "ApplyAdagrad": 3,
              "ApplyProximalAdagrad": 5, "ApplyAdagradDA": 3, "ApplyFtrl": 3, "ApplyMomentum": 3, "ApplyAdam": 9,
              "ApplyRMSProp": 7, "ApplyCenteredRMSProp": 8}


def run_config():
    """TensorFlow runs the GraphDef as written: one thread (a fixed schedule),
    the session's own Grappler off (it would rewrite the graph again: on a
    scoped-allocator graph its constant folding and arithmetic optimizer replace
    the producers, which then no longer allocate from the scoped allocator),
    and the classic graph optimizer at L0."""
    cfg = config_pb2.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    oo = cfg.graph_options.optimizer_options
    oo.opt_level = config_pb2.OptimizerOptions.L0
    oo.do_constant_folding = oo.do_common_subexpression_elimination = oo.do_function_inlining = False
    return cfg


def synchronised(gd):
    """The same graph with every apply op waiting (control edges) for every apply
    op's gradient: all gradients of a step, in every replica, are taken before
    any variable changes. Only the order changes, no value: with ref variables
    a read (Identity of the ref) aliases the variable's buffer and the apply ops
    update it in place, so without this the values depend on the schedule,
    the original graph's included."""
    out = graph_pb2.GraphDef()
    out.CopyFrom(gd)
    applies = [n for n in out.node if n.op in GRAD_INPUT]
    prods = sorted({n.input[GRAD_INPUT[n.op]].split(":")[0] for n in applies})
    for n in applies:
        n.input.extend("^" + p for p in prods)
    return out


def run_train(gd, variables, feeds, enqueue, init, replicas, batches):
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    with tf1.Session(graph=g, config=run_config()) as s:
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


def run_fetches(gd, fetches, cfg):
    """Runs fetches; returns (values, number of _ScopedAllocator* nodes in the
    partition graphs TensorFlow executed)."""
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    md = config_pb2.RunMetadata()
    with tf1.Session(graph=g, config=cfg) as s:
        vals = s.run([f + ":0" for f in fetches], options=config_pb2.RunOptions(output_partition_graphs=True),
                     run_metadata=md)
    return vals, sum(1 for pg in md.partition_graphs for n in pg.node if n.op.startswith("_ScopedAllocator"))


def maxdiff(a, b):
    return max(float(np.max(np.abs(u - v))) for u, v in zip(a, b))


def same_bits(a, b):
    return all(u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes() for u, v in zip(a, b))


def check_train(name, setting, fetches, tmp):
    model, opt, queue = next((m, o, q) for n, m, o, q in TRAIN if n == name)
    _, _, variables, feeds, enqueue, init = build_train(model, opt, queue)
    batches = [_data(10 + s, 8, 4, 2) for s in range(STEPS)]
    orig, gp = graph_pb2.GraphDef(), graph_pb2.GraphDef()
    orig.ParseFromString(open(os.path.join(OUT, name + ".pb"), "rb").read())
    gp.ParseFromString(open(os.path.join(OUT, name + ".grappler.pb"), "rb").read())
    ref = run_train(synchronised(orig), variables, feeds, enqueue, init, 0, batches)
    unsync = run_train(orig, variables, feeds, enqueue, init, 0, batches)
    ok = True
    for reps in (1, int(setting)):
        out = grapnel_optimize(name, "auto_parallel", str(reps), fetches, tmp)
        mine = run_train(synchronised(out), variables, feeds, enqueue, init, reps, batches)
        worst = maxdiff(ref, mine)
        # N replicas on one batch, each applying grad/N after all gradients are
        # taken: one step exactly where the update is linear in the gradient
        # (gradient descent: var - lr*g/N, N times); momentum's and Adam's state
        # take grad/N N times, which is not one step.
        if reps == 1 or opt == "gd":
            good = worst <= 1e-6
            vs_orig = f"{worst:<9.3g} {'ok' if good else 'FAIL'}"
            ok &= good
        else:
            vs_orig = f"{worst:<9.3g} differs ({opt}: {reps} applies of grad/{reps} are not one step)"
        if reps == int(setting):
            theirs = run_train(synchronised(gp), variables, feeds, enqueue, init, reps, batches)
            same = same_bits(mine, theirs)
            ok &= same
            vs_gp = "bit-identical" if same else f"DIFFER {maxdiff(mine, theirs):.3g}"
            free = maxdiff(run_train(out, variables, feeds, enqueue, init, reps, batches),
                           run_train(gp, variables, feeds, enqueue, init, reps, batches))
        else:
            vs_gp = "- (Grappler CHECK-fails below 2)"
        print(f"{name:16s} {reps:>2d}  {len(orig.node):>3d}->{len(out.node):<3d}  {vs_orig:52s} {vs_gp}")
    print(f"{'':16s} not synchronised: original vs synchronised original {maxdiff(unsync, ref):.3g}; "
          f"grapnel vs Grappler (same nodes, another order) {free:.3g}")
    return ok


def check_sa(name, setting, tmp):
    g, fetches, _ = build_sa(name)
    orig = g.as_graph_def()
    out = grapnel_optimize(name, "scoped_allocator", setting, fetches, tmp)
    gp = graph_pb2.GraphDef()
    gp.ParseFromString(open(os.path.join(OUT, name + ".grappler.pb"), "rb").read())
    ref, _ = run_fetches(orig, fetches, run_config())
    mine, k_mine = run_fetches(out, fetches, run_config())
    theirs, k_gp = run_fetches(gp, fetches, run_config())
    # TensorFlow's own pass inside the session, as its scoped_allocator_optimizer_test runs it
    cfg = run_config()
    rw = cfg.graph_options.rewrite_options
    rw.disable_meta_optimizer = False
    rw.optimizers.append("scoped_allocator")
    rw.scoped_allocator_opts.enable_op.extend(setting.split(";"))
    tfs, k_tf = run_fetches(orig, fetches, cfg)
    res = [same_bits(ref, v) for v in (mine, theirs, tfs)]
    word = lambda b, k: ("bit-identical" if b else "DIFFER") + f" ({k})"  # noqa: E731
    print(f"{name:16s} {setting:7s} {len(orig.node):>3d}->{len(out.node):<3d}  {word(res[0], k_mine):20s}"
          f" {word(res[1], k_gp):20s} {word(res[2], k_tf)}")
    return all(res) and k_mine == k_gp == k_tf


def check_sa_default_session(tmp):
    """What the session's own Grappler does to a rewritten graph (informative)."""
    g, fetches, _ = build_sa("sa_abs")
    out = grapnel_optimize("sa_abs", "scoped_allocator", "Abs", fetches, tmp)
    try:
        run_fetches(out, fetches, config_pb2.ConfigProto())
        print("sa_abs, grapnel's output in a session with TensorFlow's default options: runs")
    except tf.errors.OpError as e:
        why = next((ln for ln in str(e).splitlines() if "bound check" in ln), str(e).splitlines()[0])
        print("sa_abs, grapnel's output in a session with TensorFlow's default options (its Grappler on):\n  "
              + why.split(" input bounds")[0])


def check():
    import tempfile
    tmp = tempfile.mkdtemp(prefix="grapnel_parallel_")
    man = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(OUT, "manifest.txt")) if not ln.startswith("#")]
    ok = True
    print(f"TensorFlow {tf.__version__}, CPU, {STEPS} steps, one thread, the session's Grappler off")
    print("auto_parallel: variables after the steps, every replica fed the same batch, synchronised "
          "(every apply op after every gradient)")
    print(f"{'case':16s} {'N':>2s}  {'nodes':8s} {'grapnel vs original (max abs diff)':52s} grapnel vs Grappler")
    for name, pass_name, setting, fetch in man:
        if pass_name == "auto_parallel":
            ok &= check_train(name, setting, fetch.split(","), tmp)
    print("scoped_allocator: fetches against the original's; (k) = _ScopedAllocator* nodes TensorFlow executed")
    print(f"{'case':16s} {'ops':7s} {'nodes':8s} {'grapnel output':20s} {'Grappler output':20s} "
          "TF's own pass in session")
    for name, pass_name, setting, fetch in man:
        if pass_name == "scoped_allocator":
            ok &= check_sa(name, setting, tmp)
    check_sa_default_session(tmp)
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
