#!/usr/bin/env python3
"""grapnel example: load a model, optimize it with TensorFlow's optimizer
options (a dict, as tf.config.optimizer.set_experimental_options takes), run it
with numpy, check the optimized graph against the original, print the report.

    python3 optimize_run.py [MODEL FEED FEED.npy FETCH]

Defaults to the keyword-spotting model in examples/models.
"""
import pathlib
import sys

import numpy as np

import grapnel

here = pathlib.Path(__file__).resolve().parent
models = here.parent / "models"
if len(sys.argv) == 5:
    model, feed, feed_file, fetch = sys.argv[1:]
else:
    model, feed, feed_file, fetch = (models / "ds_cnn_s.pb", "Mfcc", models / "ds_cnn_s.mfcc.npy", "labels_softmax")

options = {"constant_folding": True, "layout_optimizer": False, "remapping": True}
x = np.load(feed_file)

with grapnel.load(model) as original, original.clone() as g:
    report = g.optimize(options, fetches=[fetch], feeds=[feed])
    print(report["text"], end="")
    changed = [p["pass"] for p in report["passes"] if p["changed"]]
    print(f"options: {grapnel.parse_options(options)}")
    print(f"nodes: {len(original)} -> {len(g)}; passes that changed the graph: {sorted(set(changed))}")

    y = g.run({feed: x}, fetch)
    print(f"{fetch}: {y.dtype} {list(y.shape)}")
    print("  " + " ".join(f"{v:.6f}" for v in y.reshape(-1)))
    print(f"  argmax: {int(y.argmax())}")

    check = original.verify(g, feeds={feed: x}, fetches=[fetch])[fetch]
    print(f"verify against the original: match={check['match']} max_abs_err={check['max_abs_err']:.3g}")
    sys.exit(0 if check["match"] else 1)
