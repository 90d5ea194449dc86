#!/usr/bin/env bash
# make demo: inspect the bundled real model (the ARM keyword-spotting DS-CNN),
# optimize it with TensorFlow's default options, print the report, and check
# that the optimized graph computes the same outputs as the original on the
# CPU reference backend. The audio front end (DecodeWav, AudioSpectrogram) is
# outside the model proper, so the graph is fed at the Mfcc tensor.
set -euo pipefail
build=${1:-build}
cli="$build/grapnel"
model=examples/models/ds_cnn_s.pb
mfcc=examples/models/ds_cnn_s.mfcc.npy
out=out/demo
mkdir -p "$out"
echo "== grapnel inspect $model"
"$cli" inspect "$model"
echo
echo "== grapnel run $model --feed Mfcc=$mfcc --fetch labels_softmax"
"$cli" run "$model" --feed "Mfcc=$mfcc" --fetch labels_softmax
echo
echo "== grapnel optimize $model -o $out/ds_cnn_s.opt.pb --feed Mfcc --fetch labels_softmax --report text"
"$cli" optimize "$model" -o "$out/ds_cnn_s.opt.pb" --feed Mfcc --fetch labels_softmax --report text \
  --report-file "$out/report.txt"
cat "$out/report.txt"
echo
echo "== grapnel verify $model $out/ds_cnn_s.opt.pb --feed Mfcc=$mfcc --fetch labels_softmax"
"$cli" verify "$model" "$out/ds_cnn_s.opt.pb" --feed "Mfcc=$mfcc" --fetch labels_softmax
echo
echo "== grapnel inspect $out/ds_cnn_s.opt.pb"
"$cli" inspect "$out/ds_cnn_s.opt.pb" | head -24
"$cli" convert "$out/ds_cnn_s.opt.pb" "$out/ds_cnn_s.opt.pbtxt"
"$cli" dot "$out/ds_cnn_s.opt.pb" -o "$out/ds_cnn_s.opt.dot"
echo "wrote $out/ds_cnn_s.opt.pb, $out/ds_cnn_s.opt.pbtxt, $out/ds_cnn_s.opt.dot, $out/report.txt"
