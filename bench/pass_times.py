#!/usr/bin/env python3
"""Per-pass CPU time of `grapnel optimize`, two builds side by side.

    python3 bench/pass_times.py BEFORE_BUILD AFTER_BUILD MODEL... [--runs N]

For each model (a .pb/.pbtxt file or a SavedModel directory) runs
`BUILD/grapnel optimize MODEL -o OUT --report json` N times per build (default
3) and keeps the run with the least total_cpu_micros (the calling thread's CPU
time spent in gn_optimize: the steadier figure on a loaded machine). Prints one
markdown row per model: total CPU ms before and after, then the four passes
(pass#iteration) that took longest before, with their ms before -> after, and
whether the two builds wrote the same bytes.
"""
import json
import os
import subprocess
import sys
import tempfile


def run(grapnel, model, out, runs):
    best = None
    for _ in range(runs):
        p = subprocess.run([grapnel, "optimize", model, "-o", out, "--report", "json"],
                           capture_output=True, text=True)
        if p.returncode != 0 or "{" not in p.stdout:
            return None
        d = json.loads(p.stdout[p.stdout.index("{"):])
        per = {}
        for q in d["passes"]:
            k = "%s#%d" % (q["pass"], q["iteration"])
            per[k] = per.get(k, 0) + q["cpu_micros"]
        if best is None or d["total_cpu_micros"] < best[0]:
            best = (d["total_cpu_micros"], per)
    return best


def main(argv):
    runs = 3
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) < 3:
        sys.exit(__doc__)
    before, after, models = argv[0], argv[1], argv[2:]
    tmp = tempfile.mkdtemp()
    oa, ob = os.path.join(tmp, "before.pb"), os.path.join(tmp, "after.pb")
    print("| model | total ms before | after | largest passes before -> after (ms) | same bytes |")
    print("|---|---:|---:|---|---|")
    for m in models:
        a = run(os.path.join(before, "grapnel"), m, oa, runs)
        b = run(os.path.join(after, "grapnel"), m, ob, runs)
        name = os.path.basename(os.path.dirname(m)) if os.path.basename(m) == "frozen.pb" else os.path.basename(m)
        if a is None or b is None:
            print("| %s | failed | | | |" % name)
            continue
        with open(oa, "rb") as fa, open(ob, "rb") as fb:
            same = fa.read() == fb.read()
        top = sorted(a[1].items(), key=lambda kv: -kv[1])[:4]
        cols = ", ".join("%s %.1f -> %.1f" % (k, v / 1e3, b[1].get(k, 0) / 1e3) for k, v in top)
        print("| %s | %.1f | %.1f | %s | %s |" % (name, a[0] / 1e3, b[0] / 1e3, cols, "yes" if same else "NO"))
        sys.stdout.flush()
    for f in (oa, ob):
        if os.path.exists(f):
            os.remove(f)
    os.rmdir(tmp)


if __name__ == "__main__":
    main(sys.argv[1:])
