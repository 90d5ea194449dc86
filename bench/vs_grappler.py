#!/usr/bin/env python3
"""grapnel end to end next to Grappler's OptimizeGraph alone, on real models.

Run through bench/vs_grappler.sh (which builds grapnel and takes TensorFlow's
virtualenv from tools/tfvenv.sh); see bench/SPEED.md for the table and what
each column means.

Models: every frozen.pb of the zoo (tools/model_zoo.py, default
~/.cache/grapnel/zoo-full; fetch and feed from its zoo.txt) and every corpus
GraphDef (.pb, .pbtxt, .pbtxt.gz; SavedModel directories left out) with at
least --min-nodes nodes (fetches and feeds as tools/grappler_counts.py finds
them: the golden manifest's, else the sinks, NoOps excluded, no feeds).

Per model, in one run, each measure best of --runs:
  e2e     wall time of `grapnel optimize M -o OUT.pb` (default options: process
          start, load, optimize, save; no fsync, as cp; each run after a
          sync(2), so that no other file's dirty pages are being written
          meanwhile)
  inproc  gn_optimize alone: the JSON report's total_micros of
          `grapnel optimize M -o OUT.pb --report json --report-file R`, and
          its total_cpu_micros (the calling thread's CPU time: steadier on a
          loaded machine)
  grappler  wall time of tf_optimizer.OptimizeGraph alone (default
          RewriterConfig, MetaGraphDef built beforehand, one Cluster reused)
  cp      wall time of `cp M OUT` (the output file removed before each run), each
          run right after one of grapnel's e2e runs
  floor   wall time of `bench_floor M OUT` (bench/bench_floor.c), binary
          GraphDefs only: the file read into fresh memory with the library's
          read and written back with its atomic write, no graph work at all;
          `fold`: the same with every float of the file multiplied in place
          between the two (`bench_floor --fold`), as folding a scale into
          every weight does. Each run right after cp's.
  cpu     user + system CPU time of the e2e runs (best of --runs)
  rss     grapnel's peak resident set (/usr/bin/time %M over the e2e runs, largest)
Output: one markdown table on stdout, progress on stderr; --tsv FILE also
writes the raw figures.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))

import grappler_counts as gc  # noqa: E402  (imports TensorFlow)
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2  # noqa: E402
from tensorflow.python.grappler import cluster as gcluster  # noqa: E402
from tensorflow.python.grappler import tf_optimizer  # noqa: E402


def timed_child(argv, rssfile):
    """(wall seconds, CPU seconds, peak RSS KiB, exit status, stderr) of one
    command. The peak RSS comes from /usr/bin/time: a child forked from this
    python would report python's own RSS (Linux keeps the larger of the
    process's high-water marks across exec)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rssfile] + argv,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    try:
        kib = int(open(rssfile).read().split()[-1])
    except (OSError, ValueError, IndexError):
        kib = 0
    return dt, ru.ru_utime + ru.ru_stime, kib, rc, err


def zoo_models(zoo):
    out = []
    meta = {}
    txt = os.path.join(zoo, "zoo.txt")
    if os.path.exists(txt):
        for line in open(txt):
            f = line.split()
            if len(f) >= 3:
                meta[f[0]] = ([f[1]], [f[2]])
    for d in sorted(os.listdir(zoo)) if os.path.isdir(zoo) else []:
        p = os.path.join(zoo, d, "frozen.pb")
        if os.path.isfile(p):
            feeds, fetches = meta.get(d, ([], None))
            out.append(("zoo/" + d, p, feeds, fetches))
    return out


def corpus_models(corpus):
    return [m for m in gc.models(corpus) if m[0].startswith("corpus/")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grapnel", required=True)
    ap.add_argument("--floor", default="", help="bench_floor binary (the floor columns)")
    ap.add_argument("--zoo", default=os.path.expanduser("~/.cache/grapnel/zoo-full"))
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "corpus"))
    ap.add_argument("--min-nodes", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated substrings of model names")
    ap.add_argument("--tsv", default="")
    a = ap.parse_args()

    cp = config_pb2.ConfigProto()
    cp.graph_options.rewrite_options.CopyFrom(rewriter_config_pb2.RewriterConfig())
    cluster = gcluster.Cluster()
    tmp = tempfile.mkdtemp(prefix="vsg")
    out_pb = os.path.join(tmp, "out.pb")
    rep = os.path.join(tmp, "r.json")
    cpy = os.path.join(tmp, "copy.pb")
    rssf = os.path.join(tmp, "rss.txt")
    only = [s for s in a.only.split(",") if s]

    rows = []
    for rel, path, feeds, fetches in zoo_models(a.zoo) + corpus_models(a.corpus):
        if only and not any(s in rel for s in only):
            continue
        try:
            gd = gc.load_graph(path)
        except Exception as e:  # noqa: BLE001
            print(f"skip {rel}: {e}", file=sys.stderr)
            continue
        nodes = len(gd.node)
        if nodes < a.min_nodes:
            continue
        if fetches is None:
            fetches = gc.sinks(gd)
        size = os.path.getsize(path)
        print(f"{rel}: {nodes} nodes, {size / 1e6:.1f} MB", file=sys.stderr)

        # grapnel's runs and cp's alternate, so that a slow spell of the machine
        # (on this virtual machine, fresh memory costs up to 3x more system time
        # for a while) falls on both
        e2e, cpu, rss, err, cps = [], [], 0, "", []
        floors, folds = [], []
        binary = path.endswith(".pb") and bool(a.floor)
        for _ in range(a.runs):
            if os.path.exists(out_pb):
                os.unlink(out_pb)
            os.sync()  # no other file's dirty pages being written meanwhile
            dt, c, kib, rc, err = timed_child([a.grapnel, "optimize", path, "-o", out_pb], rssf)
            if rc != 0:
                e2e = None
                break
            e2e.append(dt)
            cpu.append(c)
            rss = max(rss, kib)
            if os.path.exists(cpy):
                os.unlink(cpy)
            os.sync()
            dt, _, _, rc, _ = timed_child(["cp", path, cpy], rssf)
            cps.append(dt)
            for flags, into in (([], floors), (["--fold"], folds)):
                if not binary:
                    break
                if os.path.exists(cpy):
                    os.unlink(cpy)
                os.sync()
                dt, _, _, rc, _ = timed_child([a.floor] + flags + [path, cpy], rssf)
                if rc == 0:
                    into.append(dt)
        inproc, inproc_cpu = [], []
        if e2e is not None:
            for _ in range(a.runs):
                dt, c, kib, rc, err = timed_child([a.grapnel, "optimize", path, "-o", out_pb,
                                                   "--report", "json", "--report-file", rep], rssf)
                if rc != 0:
                    break
                txt = open(rep).read()
                i = txt.index('"total_micros"')
                inproc.append(int(txt[i:].split(":", 1)[1].split(",", 1)[0]) / 1e6)
                i = txt.index('"total_cpu_micros"')
                inproc_cpu.append(int(txt[i:].split(":", 1)[1].split(",", 1)[0]) / 1e6)
        if e2e is None:
            print(f"  grapnel failed: {err.strip().splitlines()[-1:]}", file=sys.stderr)

        if not cps:   # grapnel failed: cp alone
            for _ in range(a.runs):
                if os.path.exists(cpy):
                    os.unlink(cpy)
                os.sync()
                dt, _, _, rc, _ = timed_child(["cp", path, cpy], rssf)
                cps.append(dt)
        if os.path.exists(cpy):
            os.unlink(cpy)

        tf_s = None
        try:
            mg = gc.metagraph(gd, feeds, fetches)
            ts = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                tf_optimizer.OptimizeGraph(cp, mg, verbose=False, graph_id=b"vs_grappler",
                                           cluster=cluster)
                ts.append(time.perf_counter() - t0)
            tf_s = min(ts)
        except Exception as e:  # noqa: BLE001
            print(f"  Grappler failed: {' '.join(str(e).split())[:200]}", file=sys.stderr)
        del gd
        rows.append((rel, size, nodes, min(e2e) if e2e else None, min(cpu) if e2e else None,
                     min(inproc) if inproc else None, min(inproc_cpu) if inproc_cpu else None,
                     tf_s, min(cps), rss, min(floors) if floors else None, min(folds) if folds else None))

    def ms(s):
        return "-" if s is None else ("%.1f" % (s * 1e3) if s < 0.1 else "%.0f" % (s * 1e3))

    def ratio(num, den):
        return "-" if num is None or den is None or den <= 0 else "%.1fx" % (num / den)

    print("| model | MB | nodes | grapnel e2e ms | e2e CPU ms | grapnel in-process ms | in-process CPU ms | Grappler ms | "
          "e2e vs Grappler | in-process vs Grappler | cp ms | e2e / (cp + 1 us/node) | "
          "peak RSS MB | RSS - file MB | floor ms | fold floor ms | floor / (cp + 1 us/node) | "
          "fold floor / (cp + 1 us/node) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rel, size, nodes, e2e, cpu, inp, inp_cpu, tf_s, cps, rss, fl, fo in rows:
        mb = size / 1e6
        bound = cps + nodes * 1e-6
        print("| %s | %.1f | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s | %s | %s | %s |" % (
            rel, mb, nodes, ms(e2e), ms(cpu), ms(inp), ms(inp_cpu), ms(tf_s), ratio(tf_s, e2e), ratio(tf_s, inp),
            ms(cps), ratio(e2e, bound), rss / 1024.0, rss / 1024.0 - size / 1048576.0,
            ms(fl), ms(fo), ratio(fl, bound), ratio(fo, bound)))
    if a.tsv:
        with open(a.tsv, "w") as f:
            f.write("model\tbytes\tnodes\te2e_s\te2e_cpu_s\tinproc_s\tinproc_cpu_s\tgrappler_s\tcp_s\trss_kib"
                    "\tfloor_s\tfold_floor_s\n")
            for r in rows:
                f.write("\t".join("" if v is None else str(v) for v in r) + "\n")
    for p in (out_pb, rep, rssf):
        if os.path.exists(p):
            os.unlink(p)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
