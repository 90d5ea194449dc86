#!/usr/bin/env bash
# Times the HTML report of a large graph (bench/HTML_REPORT.md).
#
#   bash bench/html_report.sh [BUILD_DIR]
#
# Makes a synthetic graph with gen_graph (GN_BENCH_KIND, default conv; GN_BENCH_NODES,
# default 100000), optimizes it with `grapnel optimize --report html`, then opens the
# page in headless Chromium GN_BENCH_RUNS times (default 3) and prints, per run:
#   first_render_ms  the page's own clock: navigation start to the end of its first
#                    drawing (data parsed, scope trees built, top level laid out and
#                    put in the DOM), read back with --dump-dom;
#   first_frame_ms   navigation start to the first animation frame after that;
#   screenshot_s     wall time of `chromium --screenshot` on the page, and the same for
#                    an empty page (Chromium's own start and exit), and their difference.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
kind=${GN_BENCH_KIND:-conv}
nodes=${GN_BENCH_NODES:-100000}
runs=${GN_BENCH_RUNS:-3}
chr=${GN_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chr" ] || { echo "html_report.sh: chromium is not installed (make browser-deps)" >&2; exit 1; }
cmake --build "$build" -j2 --target grapnel_cli gen_graph >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/gen_graph" "$kind" "$nodes" "$tmp/g.pb" >&2
start=$(date +%s.%N)
"$build/grapnel" optimize "$tmp/g.pb" -o "$tmp/opt.pb" --report html --report-file "$tmp/r.html"
end=$(date +%s.%N)
echo '<html><body>x</body></html>' > "$tmp/empty.html"
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir=$tmp/profile"
printf '%s %s nodes: page %s bytes, optimize + report %.2f s\n' "$kind" "$nodes" "$(stat -c %s "$tmp/r.html")" \
  "$(echo "$end - $start" | bc)"
echo "| run | first_render_ms | first_frame_ms | screenshot_s | empty_page_s | difference_s |"
echo "|---|---:|---:|---:|---:|---:|"
for i in $(seq 1 "$runs"); do
  body=$("$chr" $flags --dump-dom "file://$tmp/r.html" 2>/dev/null | grep -o '<body[^>]*>')
  fr=$(echo "$body" | sed -n 's/.*data-first-render-ms="\([0-9.]*\)".*/\1/p')
  ff=$(echo "$body" | sed -n 's/.*data-first-frame-ms="\([0-9.]*\)".*/\1/p')
  t0=$(date +%s.%N); "$chr" $flags --window-size=1400,860 --screenshot="$tmp/s.png" "file://$tmp/r.html" 2>/dev/null; t1=$(date +%s.%N)
  "$chr" $flags --window-size=1400,860 --screenshot="$tmp/e.png" "file://$tmp/empty.html" 2>/dev/null; t2=$(date +%s.%N)
  printf '| %d | %s | %s | %.2f | %.2f | %.2f |\n' "$i" "$fr" "$ff" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" \
    "$(echo "($t1 - $t0) - ($t2 - $t1)" | bc)"
done
