#!/usr/bin/env bash
# Optimizer benchmark: grapnel's meta-optimizer next to TensorFlow's (bench/OPTIMIZER.md).
#
#   bash bench/optimize_bench.sh [BUILD_DIR]       (default: build)
#
# Builds grapnel and gen_graph in BUILD_DIR (configured as Release if not yet),
# then
#  1. for every model of tests/data/grappler_counts.txt (written by
#     tools/grappler_counts.py with TensorFlow's meta-optimizer), runs
#     `grapnel optimize` with the same passes, fetches and feeds, and prints
#     model, nodes before, grapnel nodes after, Grappler nodes after, grapnel ms
#     (the JSON report's total_micros), TF ms (from the file), speedup;
#     synthetic rows also give grapnel's CPU time (total_cpu_micros, the
#     calling thread's CPU time: the steadier figure on a loaded machine);
#  2. for synthetic graphs (gen_graph conv|transformer|dag|chain at each size),
#     grapnel's time and, up to GN_TF_MAX_NODES nodes, TensorFlow's on the same
#     file in the same run (tools/grappler_counts.py --graph, fetches = sinks,
#     grapnel given the same fetches).
# Progress on stderr, markdown tables on stdout.
#
# Environment:
#   GN_TF_PYTHON      python with TensorFlow   (default: what tools/tfvenv.sh prints)
#   GN_CORPUS_DIR     the corpus               (default ../shared/corpus)
#   GN_BENCH_KINDS    synthetic families       (default "conv transformer dag chain")
#   GN_BENCH_SIZES    synthetic node counts    (default "1000 10000 100000 1000000")
#   GN_TF_MAX_NODES   largest synthetic graph given to TensorFlow (default 100000)
#   GN_TF_RUNS        TensorFlow runs per synthetic graph, median (default 3)
#   GN_SKIP_MODELS=1  skip part 1;  GN_SKIP_SYNTH=1  skip part 2
#   GN_PASS_TABLE=1   instead of parts 1 and 2: the default pipeline (default
#                     options, no fetches) on gen_graph KIND N (seed 1) for
#                     GN_BENCH_KINDS x GN_BENCH_SIZES, one row per graph with
#                     the CPU ms of each pass summed over the iterations
#                     (the JSON report's cpu_micros) and the meta-optimizer's
#                     own share (total_cpu_micros minus the passes);
#                     GN_BASE_BUILD=DIR adds a row from DIR's grapnel on the
#                     same file right before each, and checks that both
#                     write the same bytes (bench/OPTIMIZER.md)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
py=${GN_TF_PYTHON:-$("$root/tools/tfvenv.sh")}
corpus=${GN_CORPUS_DIR:-$(dirname "$root")/shared/corpus}
kinds=${GN_BENCH_KINDS:-"conv transformer dag chain"}
sizes=${GN_BENCH_SIZES:-"1000 10000 100000 1000000"}
tfmax=${GN_TF_MAX_NODES:-100000}
tfruns=${GN_TF_RUNS:-3}
counts=$root/tests/data/grappler_counts.txt
opts="{'layout_optimizer': False, 'remapping': False, 'loop_optimization': False, 'function_optimization': False, 'implementation_selector': False, 'min_graph_nodes': -1}"

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >&2
fi
cmake --build "$build" -j"$(nproc)" >&2
gn=$build/grapnel
gen=$build/gen_graph
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# grapnel_run MODEL FETCHES(comma) FEEDS(comma) -> sets g_ms g_nodes
grapnel_run() {
  local model=$1 fetches=$2 feeds=$3 args=() t
  local IFS=,
  for t in $fetches; do args+=(--fetch "$t"); done
  for t in $feeds; do args+=(--feed "$t"); done
  unset IFS
  if "$gn" optimize "$model" -o "$tmp/x.pb" --options "$opts" ${args[@]+"${args[@]}"} \
       --report json --report-file "$tmp/r.json" >"$tmp/log" 2>&1; then
    g_ms=$(grep -o '"total_micros": *[0-9]*' "$tmp/r.json" | head -1 | grep -o '[0-9]*$' \
           | awk '{printf "%.3f", $1/1000}')
    g_cpu=$(grep -o '"total_cpu_micros": *[0-9]*' "$tmp/r.json" | head -1 | grep -o '[0-9]*$' \
           | awk '{printf "%.3f", $1/1000}')
    g_cpu=${g_cpu:--}
    g_nodes=$("$gn" inspect "$tmp/x.pb" --no-validate | awk '$1=="nodes:"{print $2}')
  else
    echo "grapnel failed on $model: $(tail -1 "$tmp/log")" >&2
    g_ms=fail; g_cpu=fail; g_nodes=fail
  fi
}

speedup() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0>0 && b+0>0) printf "%.1fx", b/a; else print "-" }'; }

# pass_row LABEL GRAPNEL FILE OUT -> one markdown row of per-pass CPU ms
pass_row() {
  local label=$1 bin=$2 f=$3 out=$4
  "$bin" optimize "$f" -o "$out" --report json --report-file "$tmp/pr.json" >"$tmp/log" 2>&1 ||
    { echo "| $label | failed: $(tail -1 "$tmp/log") |"; return; }
  python3 - "$tmp/pr.json" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cols = ["pruning", "common_subgraph_elimination", "constfold", "shape", "arithmetic", "remap", "dependency"]
per = {}
for p in r["passes"]:
    per[p["pass"]] = per.get(p["pass"], 0) + p.get("cpu_micros", 0)
tot = r["total_cpu_micros"]
other = sum(v for k, v in per.items() if k not in cols)
meta = tot - sum(per.values())
nodes = r["passes"][0]["nodes_before"] if r["passes"] else 0
ms = lambda us: "%.0f" % (us / 1000.0)
print("| %s | %d | %s | %.2f | %s | %s | %s | %s |" % (
    sys.argv[2], nodes, ms(tot), tot / max(nodes, 1), ms(r["total_micros"]),
    " | ".join(ms(per.get(c, 0)) for c in cols), ms(other), ms(meta)))
PY
}

if [ "${GN_PASS_TABLE:-0}" = 1 ]; then
  base=${GN_BASE_BUILD:-}
  echo "| graph | nodes | total CPU ms | CPU us/node | wall ms | pruning | cse | constfold | shape | arithmetic | remap | dependency | other passes | meta overhead |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for k in $kinds; do
    for n in $sizes; do
      f=$tmp/$k-$n.pb
      echo "gen $k $n" >&2
      "$gen" "$k" "$n" "$f" 1 >/dev/null
      if [ -n "$base" ]; then
        pass_row "$k (before)" "$base/grapnel" "$f" "$tmp/before.pb"
      fi
      pass_row "$k" "$gn" "$f" "$tmp/after.pb"
      if [ -n "$base" ] && ! cmp -s "$tmp/before.pb" "$tmp/after.pb"; then
        echo "$k $n: outputs differ" >&2
      fi
      rm -f "$f" "$tmp/before.pb" "$tmp/after.pb"
    done
  done
  exit 0
fi

if [ "${GN_SKIP_MODELS:-0}" != 1 ]; then
  echo "| model | nodes before | grapnel nodes after | Grappler nodes after | grapnel ms | TF ms | speedup |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  fetch=; feed=
  while IFS= read -r line; do
    case $line in
      "# model"$'\t'*)
        fetch=$(printf '%s\n' "$line" | awk -F'\t' '{sub(/^fetch=/,"",$4); print $4}')
        feed=$(printf '%s\n' "$line" | awk -F'\t' '{sub(/^feed=/,"",$5); print $5}')
        continue ;;
      "#"*|"") continue ;;
    esac
    IFS=$'\t' read -r path nb na ea tfms <<<"$line"
    case $path in
      golden/*) file=$root/tests/data/$path ;;
      corpus/*) file=$corpus/${path#corpus/} ;;
      *) file=$path ;;
    esac
    [ -f "$file" ] || { echo "missing $file" >&2; continue; }
    echo "model $path" >&2
    grapnel_run "$file" "$fetch" "$feed"
    echo "| $path | $nb | $g_nodes | $na | $g_ms | $tfms | $(speedup "$g_ms" "$tfms") |"
  done <"$counts"
  echo
fi

if [ "${GN_SKIP_SYNTH:-0}" != 1 ]; then
  echo "| graph | nodes | grapnel nodes after | Grappler nodes after | grapnel ms | grapnel CPU ms | grapnel CPU us/node | TF ms | speedup |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for k in $kinds; do
    for n in $sizes; do
      f=$tmp/$k-$n.pb
      echo "gen $k $n" >&2
      "$gen" "$k" "$n" "$f" >/dev/null
      nb=$("$gn" inspect "$f" --no-validate | awk '$1=="nodes:"{print $2}')
      fetch=; na=-; tfms=-
      if [ "$n" -le "$tfmax" ]; then
        echo "tf $k $n" >&2
        "$py" "$root/tools/grappler_counts.py" --graph "$f" --runs "$tfruns" >"$tmp/tf.txt" 2>/dev/null || true
        fetch=$(awk -F'\t' '$1=="# model"{sub(/^fetch=/,"",$4); print $4}' "$tmp/tf.txt")
        read -r na tfms < <(awk -F'\t' '$1 !~ /^#/ {print $3, $5}' "$tmp/tf.txt") || true
        na=${na:--}; tfms=${tfms:--}
      fi
      echo "grapnel $k $n" >&2
      grapnel_run "$f" "$fetch" ""
      per=$(awk -v ms="$g_cpu" -v n="$nb" 'BEGIN{ if (ms+0>0) printf "%.3f", ms*1000/n; else print "-" }')
      echo "| $k | $nb | $g_nodes | $na | $g_ms | $g_cpu | $per | $tfms | $(speedup "$g_ms" "$tfms") |"
      rm -f "$f"
    done
  done
fi
