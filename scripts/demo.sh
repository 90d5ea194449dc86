#!/usr/bin/env bash
# make demo: inspect the bundled example model, then write it back as text and
# binary and check the binary round trip is byte-exact.
set -euo pipefail
build=${1:-build}
cli="$build/grapnel"
model=examples/models/ds_cnn_s.pb
out=out/demo
mkdir -p "$out"
echo "== grapnel inspect $model"
"$cli" inspect "$model"
echo
echo "== grapnel convert $model $out/ds_cnn_s.pbtxt"
"$cli" convert "$model" "$out/ds_cnn_s.pbtxt"
echo "== grapnel convert $out/ds_cnn_s.pbtxt $out/ds_cnn_s.pb"
"$cli" convert "$out/ds_cnn_s.pbtxt" "$out/ds_cnn_s.pb"
"$cli" convert "$model" "$out/direct.pb"
if cmp -s "$out/ds_cnn_s.pb" "$out/direct.pb"; then
  echo "text round trip: byte-identical to the direct binary write ($(wc -c < "$out/ds_cnn_s.pb") bytes)"
else
  echo "text round trip differs from the direct binary write" >&2
  exit 1
fi
echo "== grapnel dot $model -o $out/ds_cnn_s.dot"
"$cli" dot "$model" -o "$out/ds_cnn_s.dot"
echo "wrote $out/ds_cnn_s.pbtxt, $out/ds_cnn_s.pb, $out/ds_cnn_s.dot"
