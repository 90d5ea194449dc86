#!/usr/bin/env bash
# Runs every fuzz target (or those named) for FUZZ_SECONDS each, one after the
# other, one process each: fuzz/run.sh BUILD_DIR [TARGET...]
#   BUILD_DIR  the fuzz build (cmake -DGN_FUZZ=ON, see `make fuzz`)
# Seeds are made fresh (fuzz/seeds.sh) into BUILD_DIR/fuzz-seeds; the corpus a
# target grows is kept in BUILD_DIR/fuzz-corpus/<target> between runs; a crash
# leaves its input in BUILD_DIR/fuzz-artifacts/<target>/ and fails the script.
# Inputs kept under tests/data/fuzz/<target>/ (each once a crash, since fixed)
# are replayed on every run. Prints one line per target: executions, coverage, corpus size, result.
set -euo pipefail
B=$(cd "$1" && pwd)
shift
SECS=${FUZZ_SECONDS:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
ALL=(graphdef_binary graphdef_text savedmodel bundle_index dict_text npy engine_asset optimize run regex example)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")
declare -A MAXLEN=([graphdef_binary]=1048576 [graphdef_text]=1048576 [savedmodel]=1048576 [bundle_index]=262144
                   [dict_text]=4096 [npy]=65536 [engine_asset]=16384 [optimize]=262144 [run]=65536
                   [regex]=4096 [example]=16384)

bash "$HERE/seeds.sh" "$B/grapnel" "$B/fuzz-seeds" >/dev/null
export TMPDIR=$B/fuzz-tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
rc=0
for t in "${TARGETS[@]}"; do
  corpus=$B/fuzz-corpus/$t
  art=$B/fuzz-artifacts/$t
  mkdir -p "$corpus" "$art"
  log=$B/fuzz-logs/$t.log
  mkdir -p "$(dirname "$log")"
  set +e
  # inputs that once failed (tests/data/fuzz/<target>/) are replayed first, with the seeds
  regress=$HERE/../tests/data/fuzz/$t
  [ -d "$regress" ] || regress=
  "$B/fuzz/fuzz_$t" "$corpus" "$B/fuzz-seeds/corpus/$t" ${regress:+"$regress"} -dict="$B/fuzz-seeds/$t.dict" \
    -max_len="${MAXLEN[$t]}" -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2560 \
    -artifact_prefix="$art/" -print_final_stats=1 -close_fd_mask=1 >"$log" 2>&1
  r=$?
  set -e
  execs=$(LC_ALL=C sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  cov=$( (grep -a -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  corp=$(find "$corpus" -type f | wc -l)
  if [ $r -eq 0 ]; then res=ok; else res="FAILED (exit $r; see $log and $art/)"; rc=1; fi
  printf 'fuzz %-16s %10s execs in %ss  cov %6s  corpus %5s  %s\n' "$t" "${execs:-?}" "$SECS" "${cov:-?}" "$corp" "$res"
done
exit $rc
