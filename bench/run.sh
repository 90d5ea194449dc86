#!/usr/bin/env bash
# Runs the front-end benchmark and prints a markdown table (bench/README.md).
#
#   bash bench/run.sh [BUILD_DIR]        (`make bench` runs `bash bench/run.sh build`)
#
# Builds gen_graph and bench_load in BUILD_DIR (configured as Release if it is
# not configured yet), generates every graph family at every size into a
# temporary directory, runs bench_load on each file in its own process (so
# peak RSS is per graph), and prints the table, then whether the target is
# met. Progress goes to stderr, the table to stdout.
#
# Environment:
#   GN_BENCH_KINDS    families        (default "conv transformer dag chain")
#   GN_BENCH_SIZES    node counts     (default "1000 10000 100000 1000000")
#   GN_BENCH_SEED     generator seed  (default 1)
#   GN_BENCH_TIMEOUT  seconds allowed per bench_load process (default 300)
#   GN_BENCH_SAVE     1: also time gn_graph_save to a file in the temp dir
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
kinds=${GN_BENCH_KINDS:-"conv transformer dag chain"}
sizes=${GN_BENCH_SIZES:-"1000 10000 100000 1000000"}
seed=${GN_BENCH_SEED:-1}
limit=${GN_BENCH_TIMEOUT:-300}
save=${GN_BENCH_SAVE:-0}

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target gen_graph bench_load >/dev/null
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ "$btype" != Release ]; then
    echo "warning: $build is a '$btype' build; the numbers below are not Release numbers" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/grapnel-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Repeats per size: small graphs run several times (best run reported) so the
# per-node figure is not timer noise.
repeats_for() {
    if [ "$1" -le 1000 ]; then echo 20
    elif [ "$1" -le 10000 ]; then echo 5
    elif [ "$1" -le 100000 ]; then echo 2
    else echo 2; fi
}

field() { # field NAME LINE
    local f
    for f in $2; do
        case $f in "$1="*) echo "${f#*=}"; return ;; esac
    done
    echo "?"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
rows=()
verdict=()
fail=0 # a phase failed or timed out: exit 1
miss=0 # the target is not met: reported, exit 0
for kind in $kinds; do
    min_ns=""
    big_ns=""
    min_cns=""
    big_cns=""
    for n in $sizes; do
        pb="$tmp/$kind-$n.pb"
        echo "== $kind $n: generating" >&2
        gline=$("$build/gen_graph" "$kind" "$n" "$pb" "$seed")
        depth=$(field depth "$gline")
        echo "== $kind $n: benchmarking ($gline)" >&2
        args=()
        if [ "$save" = 1 ]; then args=(--save "$tmp/out.pb"); fi
        set +e
        bline=$(timeout "$limit" "$build/bench_load" "${args[@]}" "$pb" "$(repeats_for "$n")")
        rc=$?
        set -e
        rm -f "$pb" "$tmp/out.pb"
        if [ $rc -ne 0 ]; then
            what="failed (exit $rc)"
            [ $rc -eq 124 ] && what="timed out after ${limit}s"
            echo "== $kind $n: bench_load $what" >&2
            rows+=("| $kind | $n | $depth | $what | | | | | | | | | |")
            fail=1
            [ "$n" -ge 1000000 ] && verdict+=("$kind: 10^6 nodes $what")
            continue
        fi
        echo "   $bline" >&2
        mb=$(awk -v b="$(field bytes "$bline")" 'BEGIN { printf "%.1f", b / 1048576 }')
        ns=$(field ns_per_node "$bline")
        total=$(field total_ms "$bline")
        cns=$(awk -v c="$(field cpu_ms "$bline")" -v n="$(field nodes "$bline")" 'BEGIN { printf "%.0f", (n > 0) ? c * 1e6 / n : 0 }')
        rss=$(field peak_rss_mb "$bline")
        extra=""
        [ "$save" = 1 ] && extra=" (save $(field save_ms "$bline") ms)"
        rows+=("| $kind | $(field nodes "$bline") | $depth | $mb | $(field load_ms "$bline") | $(field validate_ms "$bline") | $(field shapes_ms "$bline") | $(field write_ms "$bline")$extra | $total | $(field cpu_ms "$bline") | $ns | $cns | $rss |")
        if [ -z "$min_ns" ] || [ "$ns" -lt "$min_ns" ]; then min_ns=$ns; fi
        big_ns=$ns
        if [ -z "$min_cns" ] || [ "$cns" -lt "$min_cns" ]; then min_cns=$cns; fi
        big_cns=$cns
        if [ "$n" -ge 1000000 ]; then
            ok=$(awk -v t="$total" -v r="$rss" 'BEGIN { print (t < 3000 && r < 2048) ? "yes" : "no" }')
            verdict+=("$kind: 10^6 nodes in $total ms (CPU $(field cpu_ms "$bline") ms), peak RSS $rss MB: $([ "$ok" = yes ] && echo "within" || echo "OUTSIDE") the target (< 3000 ms, < 2048 MB)")
            [ "$ok" = yes ] || miss=1
        fi
    done
    if [ -n "$min_ns" ]; then
        # "flat": ns/node at the largest size is within 2x of the best size
        flat=$(awk -v a="$big_ns" -v b="$min_ns" 'BEGIN { print (a <= 2 * b) ? "flat" : "NOT flat" }')
        verdict+=("$kind: ns/node at the largest size $big_ns vs best $min_ns: $flat")
        [ "$flat" = flat ] || miss=1
        # the same in CPU time, which other processes on the machine inflate less
        cflat=$(awk -v a="$big_cns" -v b="$min_cns" 'BEGIN { print (a <= 2 * b) ? "flat" : "NOT flat" }')
        verdict+=("$kind: CPU ns/node at the largest size $big_cns vs best $min_cns: $cflat")
    fi
done

echo "| graph | nodes | depth | file MB | load ms | validate ms | shapes ms | write ms | total ms | CPU ms | ns/node | CPU ns/node | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
if [ ${#verdict[@]} -gt 0 ]; then printf -- '- %s\n' "${verdict[@]}"; fi
echo
echo "load average (1/5/15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")"
echo
if [ $fail -ne 0 ]; then
    echo "target NOT met: a run failed"
    exit 1
elif [ $miss -ne 0 ]; then
    echo "target NOT met"
else
    echo "target met"
fi
