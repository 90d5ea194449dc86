#!/usr/bin/env python3
"""How much of an optimized GraphDef's weights are the original's, unchanged.

    PY=$(tools/tfvenv.sh)
    grapnel optimize M.pb -o OUT.pb
    $PY bench/weights_changed.py M.pb OUT.pb [M2.pb OUT2.pb ...]

Per pair, one line: the file sizes, the bytes of the output's large constant
values (Const nodes whose value holds 4 KiB or more, decoded by TensorFlow's
tensor_util whatever their encoding: tensor_content or a packed typed field),
and how many of those bytes equal, element for element, some large value of
the input. A weight a pass rewrote (a batch-norm scale folded into a
convolution's filter) counts as changed; one that was only moved or renamed
counts as unchanged. bench/SPEED.md uses it to say which models could write
their weights straight from the input file.
"""

import hashlib
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.python.framework import tensor_util  # noqa: E402

LARGE = 4096


def large_values(path):
    g = graph_pb2.GraphDef()
    with open(path, "rb") as f:
        g.ParseFromString(f.read())
    out = {}
    for n in g.node:
        if n.op != "Const" or "value" not in n.attr:
            continue
        a = tensor_util.MakeNdarray(n.attr["value"].tensor)
        if a.nbytes >= LARGE and a.dtype != object:
            out.setdefault(hashlib.sha256(a.tobytes()).hexdigest(), []).append(a.nbytes)
    return out


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for src, dst in zip(argv[0::2], argv[1::2]):
        a, b = large_values(src), large_values(dst)
        total = sum(sum(v) for v in b.values())
        same = sum(sum(v) for k, v in b.items() if k in a)
        print("%s: in %.1f MB, out %.1f MB, large values %.1f MB, unchanged %.1f MB (%.0f%%)" % (
            src, os.path.getsize(src) / 1e6, os.path.getsize(dst) / 1e6, total / 1e6, same / 1e6,
            100.0 * same / total if total else 0.0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
