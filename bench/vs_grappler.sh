#!/usr/bin/env bash
# grapnel end to end next to Grappler's OptimizeGraph alone, on every zoo model
# and every corpus GraphDef with at least 100 nodes (bench/SPEED.md).
#
#   bash bench/vs_grappler.sh [BUILD_DIR] [vs_grappler.py options]   (default build)
#
# Builds BUILD_DIR's grapnel and bench_floor (configured as Release if not yet), then runs
# bench/vs_grappler.py with TensorFlow's python (GN_TF_PYTHON, default what
# tools/tfvenv.sh prints). Markdown table on stdout, progress on stderr.
# Options passed on: --runs N (default 3), --only SUBSTR[,SUBSTR], --min-nodes N,
# --zoo DIR, --corpus DIR, --tsv FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$root/$build ;; esac
py=${GN_TF_PYTHON:-$("$root/tools/tfvenv.sh")}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$build" -j2 --target grapnel_cli bench_floor >&2
TF_CPP_MIN_LOG_LEVEL=2 exec "$py" "$here/vs_grappler.py" --grapnel "$build/grapnel" --floor "$build/bench_floor" "$@"
