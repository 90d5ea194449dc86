#!/usr/bin/env bash
# One command for a GPU machine (H200: nvcc and the CUDA runtime, cuDNN only
# inside Python's nvidia-cudnn-cu13 package, PyTorch, no network, none of our
# Debian build dependencies): probes all that, unpacks the Debian packages
# that scripts/fetch-gpu-deps.sh downloaded (.gpu-deps/ in the checkout, or
# GN_GPU_DEPS=DIR, or shared/gpu-deps/) into a local prefix, builds grapnel
# with -DGRAPNEL_CUDA=ON (the backend is the module libgrapnel_cuda.so, next to
# the library and the programs), runs tests/cuda_test (CUDA against the CPU backend,
# per op and on the golden models), generates ResNet-50 and a BERT-base
# encoder (bench/gen_models, random weights), optimizes them to float16 for
# gpu:sm_90 (NCHW and NHWC), checks CUDA against the CPU backend on them,
# converts the golden models to engine ops for the CUDA backend (grapnel
# segment --backend cuda, FP32, FP16 and INT8 calibrated on the golden feed)
# and checks those on CUDA against the CPU backend, times the models at batch 1 and 64 without and with CUDA
# Graph replay (bench/gpu_bench --cuda-graph 0|1; BERT also as engine ops,
# ResNet-50 also in float32 and as calibrated INT8 engines)
# next to PyTorch on the same GPU (bench/torch_bench.py), and prints a short
# table last (bench/gpu_table.py). Budget: under 10 minutes on 16 cores; the
# timings are skipped when 420 s have gone by then (GN_GPU_BENCH_BY=SECONDS).
#
#   scripts/gpu-check.sh                 everything (build dir: build-gpu)
#   scripts/gpu-check.sh --configure-only      probe, unpack, configure; stop before building
#   scripts/gpu-check.sh --unpack-only DEBDIR PREFIX   (used by fetch-gpu-deps.sh)
#
# With the run tool: run fetch-gpu-deps.sh here first, then
#   run(command="scripts/gpu-check.sh", carry=[".gpu-deps"], timeout_s=600)
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
[ -n "$arch" ] || arch=x86_64-linux-gnu

unpack() {   # DEBDIR PREFIX
  local debs="$1" prefix="$2" f
  mkdir -p "$prefix"
  for f in "$debs"/*.deb; do
    [ -e "$f" ] || { echo "gpu-check: no .deb files in $debs" >&2; return 1; }
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$prefix" || return 1
    else   # no dpkg: a .deb is an ar archive holding data.tar.*
      local t; t="$(mktemp -d)"
      (cd "$t" && ar x "$f") || return 1
      tar -xf "$t"/data.tar.* -C "$prefix" || return 1
      rm -rf "$t"
    fi
  done
  local lib="$prefix/usr/lib/$arch"
  # what the packages' maintainer scripts would have done: the OpenBLAS alternatives
  if [ -e "$lib/openblas-pthread/libopenblas.so" ]; then
    ln -sf openblas-pthread/libopenblas.so "$lib/libopenblas.so"
    ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so.0"
    mkdir -p "$lib/pkgconfig"
    cp -f "$lib/openblas-pthread/pkgconfig/openblas.pc" "$lib/pkgconfig/openblas.pc"
  fi
  [ -e "$prefix/usr/bin/pkg-config" ] || { [ -e "$prefix/usr/bin/pkgconf" ] && ln -sf pkgconf "$prefix/usr/bin/pkg-config"; }
  # .pc files name /usr: point them at the prefix
  find "$prefix/usr" -name '*.pc' -print0 | xargs -0 -r sed -i "s|^prefix=/usr\$|prefix=$prefix/usr|; s|=/usr/|=$prefix/usr/|g"
  return 0
}

mode=all
case "${1:-}" in
  --unpack-only) unpack "$2" "$3"; exit $? ;;
  --configure-only) mode=configure-only ;;   # probe, unpack, configure; no build
  "") ;;
  *) echo "usage: scripts/gpu-check.sh [--configure-only | --unpack-only DEBDIR PREFIX]" >&2; exit 2 ;;
esac

cd "$root"
start=$(date +%s)
say() { printf '\n==== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }
status_build="not run" status_test="not run" test_summary="" bench_rows=()

# ---- 1. probe ---------------------------------------------------------------------------------------
say "probe"
echo "host: $(uname -srm); $(ldd --version 2>/dev/null | head -1)"; grep PRETTY_NAME /etc/os-release 2>/dev/null
echo "cpus: $(nproc)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
else echo "gpu: nvidia-smi not found"; fi
NVCC="$(command -v nvcc || true)"
for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do [ -z "$NVCC" ] && [ -x "$c" ] && NVCC="$c"; done
if [ -z "$NVCC" ]; then echo "nvcc: NOT FOUND (cannot build the CUDA backend)"; exit 1; fi
echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
CUDA_HOME="$(cd "$(dirname "$NVCC")/.." && pwd)"
for l in libcudart.so libcublas.so libcublasLt.so libcudnn.so; do
  hit="$(ls "$CUDA_HOME"/lib64/$l* "$CUDA_HOME"/lib/$l* 2>/dev/null | head -1)"
  echo "toolkit $l: ${hit:-absent}"
done
PY="$(command -v python3 || true)"
torch_ver=""
CUDNN_DIR=""
if [ -n "$PY" ]; then
  echo "python3: $PY ($("$PY" --version 2>&1))"
  torch_ver="$("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>/dev/null || true)"
  echo "torch: ${torch_ver:-absent}"
  CUDNN_DIR="$("$PY" -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)"
  [ -n "$CUDNN_DIR" ] || CUDNN_DIR="$("$PY" -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
fi
CUDNN_INC="" CUDNN_LIB=""
if [ -n "$CUDNN_DIR" ]; then
  echo "cudnn (python nvidia-cudnn): $CUDNN_DIR"
  [ -e "$CUDNN_DIR/include/cudnn.h" ] && CUDNN_INC="$CUDNN_DIR/include"
  ls "$CUDNN_DIR"/lib/libcudnn.so* >/dev/null 2>&1 && CUDNN_LIB="$CUDNN_DIR/lib"
fi
[ -z "$CUDNN_INC" ] && [ -e "$CUDA_HOME/include/cudnn.h" ] && CUDNN_INC="$CUDA_HOME/include"
[ -z "$CUDNN_LIB" ] && ls "$CUDA_HOME"/lib*/libcudnn.so* >/dev/null 2>&1 && CUDNN_LIB="$(dirname "$(ls "$CUDA_HOME"/lib*/libcudnn.so* | head -1)")"
echo "cudnn.h: ${CUDNN_INC:-NOT FOUND}   libcudnn.so: ${CUDNN_LIB:-NOT FOUND} $(ls "$CUDNN_LIB"/libcudnn.so.* 2>/dev/null | head -1 | xargs -r basename)"
# cuBLAS too may be only in a Python package (nvidia-cublas)
CUBLAS_LIB=""
ls "$CUDA_HOME"/lib*/libcublas.so.* >/dev/null 2>&1 || CUBLAS_LIB="$("$PY" -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2>/dev/null || true)"
[ -n "$CUBLAS_LIB" ] && echo "cublas (python nvidia-cublas): $CUBLAS_LIB"
CUBLAS_INC=""
[ -e "$CUDA_HOME/include/cublas_v2.h" ] || CUBLAS_INC="$("$PY" -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/include")' 2>/dev/null || true)"
echo "cublas_v2.h: $([ -e "$CUDA_HOME/include/cublas_v2.h" ] && echo "$CUDA_HOME/include" || echo "${CUBLAS_INC:-NOT FOUND}")"
for t in cmake pkg-config protoc-c gcc make; do echo "$t: $(command -v $t || echo absent)"; done
for m in libprotobuf-c openblas cmocka zlib; do
  printf '%s: %s\n' "$m" "$(pkg-config --modversion $m 2>/dev/null || echo 'absent (from the .deb folder)')"
done
DEBS=""
for d in "${GN_GPU_DEPS:-}" "$root/.gpu-deps" "$root/shared/gpu-deps"; do
  [ -n "$d" ] && ls "$d"/*.deb >/dev/null 2>&1 && { DEBS="$d"; break; }
done
echo "debian packages: ${DEBS:-NOT FOUND (run scripts/fetch-gpu-deps.sh where there is network; carry .gpu-deps)}"
[ -n "$DEBS" ] && du -sh "$DEBS" | sed 's/^/  size: /'

# ---- 2. dependencies into a local prefix --------------------------------------------------------------
say "dependencies"
PREFIX="$root/build-gpu/deps"
rm -rf "$PREFIX"
if [ -n "$DEBS" ]; then
  unpack "$DEBS" "$PREFIX" && echo "unpacked $(ls "$DEBS"/*.deb | wc -l) packages into $PREFIX"
fi
export LD_LIBRARY_PATH="$PREFIX/usr/lib/$arch:$PREFIX/usr/lib/$arch/openblas-pthread${CUDNN_LIB:+:$CUDNN_LIB}${CUBLAS_LIB:+:$CUBLAS_LIB}:$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}"
export PATH="$(dirname "$NVCC"):$PATH:$PREFIX/usr/bin"
export PKG_CONFIG_PATH="$PREFIX/usr/lib/$arch/pkgconfig:$PREFIX/usr/share/pkgconfig:${PKG_CONFIG_PATH:-}"
CMAKE="$(command -v cmake || true)"
if [ -n "$CMAKE" ]; then
  v="$("$CMAKE" --version | head -1 | awk '{print $3}')"
  [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -1)" = "3.25" ] || CMAKE=""
fi
[ -z "$CMAKE" ] && [ -x "$PREFIX/usr/bin/cmake" ] && CMAKE="$PREFIX/usr/bin/cmake"
[ -n "$CMAKE" ] || { echo "gpu-check: no cmake >= 3.25"; exit 1; }
echo "cmake: $CMAKE ($("$CMAKE" --version | head -1))"

# ---- 3. build -------------------------------------------------------------------------------------------
say "build"
BUILD="$root/build-gpu/build"
jobs="$(nproc)"
PKGCONF=()
command -v pkg-config >/dev/null || PKGCONF=(-DPKG_CONFIG_EXECUTABLE="$PREFIX/usr/bin/pkgconf")
if ! "$CMAKE" -S "$root" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGRAPNEL_CUDA=ON \
     -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_PREFIX_PATH="$PREFIX/usr" "${PKGCONF[@]}" \
     ${CUDNN_INC:+-DGN_CUDNN_INCLUDE_DIR="$CUDNN_INC"} ${CUBLAS_INC:+-DGN_CUBLAS_INCLUDE_DIR="$CUBLAS_INC"} \
     > "$root/build-gpu/configure.log" 2>&1; then
  status_build="FAILED (configure)"
  tail -40 "$root/build-gpu/configure.log"
elif [ "$mode" = configure-only ]; then
  grep -E "grapnel:|Found" "$root/build-gpu/configure.log"
  echo "gpu-check: configured $BUILD (--configure-only)"
  exit 0
elif "$CMAKE" --build "$BUILD" -j"$jobs" --target grapnel grapnel_cuda grapnel_cli cuda_test cuda_module_test runtime_test kernels_xla_test gen_models gpu_bench \
     > "$root/build-gpu/build.log" 2>&1; then
  status_build="ok"
else
  status_build="FAILED"
  tail -40 "$root/build-gpu/configure.log" "$root/build-gpu/build.log" 2>/dev/null
fi
echo "build: $status_build (logs: build-gpu/configure.log, build-gpu/build.log)"

# ---- 4. tests -------------------------------------------------------------------------------------------
if [ "$status_build" = ok ]; then
  say "cuda_test"
  (cd "$BUILD" && timeout 240 ./cuda_test) 2>&1 | tee "$root/build-gpu/cuda_test.log" | tail -60
  rc=${PIPESTATUS[0]}
  status_test=$([ "$rc" = 0 ] && echo ok || echo "FAILED (rc $rc)")
  # the backend is the module libgrapnel_cuda.so next to the library and the programs;
  # libgrapnel.so itself needs no CUDA library
  echo "libgrapnel.so needs: $(readelf -d "$BUILD/libgrapnel.so" | awk '/NEEDED/ {printf "%s ", $NF}')"
  echo "libgrapnel_cuda.so needs: $(readelf -d "$BUILD/libgrapnel_cuda.so" | awk '/NEEDED/ {printf "%s ", $NF}')"
  (cd "$BUILD" && timeout 60 ./cuda_module_test) > "$root/build-gpu/cuda_module_test.log" 2>&1 && cm=ok || cm=FAILED
  echo "cuda_module_test: $cm"
  # the XLA data-movement ops (dynamic slice / update, gather, pad) on CUDA against TensorFlow's outputs
  (cd "$BUILD" && timeout 60 ./kernels_xla_test) > "$root/build-gpu/kernels_xla_test.log" 2>&1 && xk=ok || xk=FAILED
  grep -q "SKIPPED.*test_goldens_cuda" "$root/build-gpu/kernels_xla_test.log" && xk="$xk (CUDA case skipped)"
  echo "kernels_xla_test: $xk"
  test_summary="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) \] [0-9]' "$root/build-gpu/cuda_test.log" | tr '\n' ' ')"
  say "runtime_test (CPU backend still fine in this build)"
  (cd "$BUILD" && timeout 120 ./runtime_test) > "$root/build-gpu/runtime_test.log" 2>&1 && rt=ok || rt=FAILED
  echo "runtime_test: $rt"

  # ---- 5. benchmark: generated ResNet-50 and BERT-base encoder, our passes, CUDA, PyTorch ------------------
# Models from bench/gen_models (random weights), optimized for gpu:sm_90 with
# auto_mixed_precision (float16) in two layouts: NCHW (the layout optimizer's
# default for GPUs) and NHWC (layout_optimizer off); BERT has no layout-
# sensitive op, so one graph. bench/gpu_bench times gn_session_run; PyTorch
# (bench/torch_bench.py) runs on the same GPU afterwards.
  say "benchmark: models"
  B="$root/build-gpu/bench"
  rm -rf "$B"; mkdir -p "$B"
  OURS="$B/ours.txt" TORCH="$B/torch.jsonl"
  : > "$OURS"
  "$BUILD/gen_models" resnet50 "$B/resnet50.pb" && "$BUILD/gen_models" bert "$B/bert.pb" || echo "gen_models FAILED"
  opt() {   # IN OUT FEED FETCH OPTIONS
    timeout 180 "$BUILD/grapnel" optimize "$1" -o "$2" --target gpu:sm_90 --feed "$3" --fetch "$4" --options "$5" \
      > "$2.log" 2>&1 || { echo "optimize $2 FAILED: $(tail -2 "$2.log")"; return 1; }
    echo "optimized $(basename "$2"): $("$BUILD/grapnel" inspect "$2" 2>/dev/null | grep -A14 '^ops' | tail -n +2 | awk '{printf "%s:%s ", $1, $2}')"
  }
  opt "$B/resnet50.pb" "$B/resnet50_nchw.pb" input logits "{'auto_mixed_precision': True}"
  opt "$B/resnet50.pb" "$B/resnet50_nhwc.pb" input logits "{'auto_mixed_precision': True, 'layout_optimizer': False}"
  opt "$B/bert.pb" "$B/bert_f16.pb" input output "{'auto_mixed_precision': True}"
  say "benchmark: CUDA vs CPU on the optimized graphs (batch 1)"
  for g in resnet50_nchw bert_f16; do   # the CPU backend's float16 is slow: batch 1, at most a minute each
    [ -e "$B/$g.pb" ] || continue
    out="$(timeout 60 "$BUILD/grapnel" verify "$B/$g.pb" "$B/$g.pb" --backend cpu --backend-b cuda 2>&1 | tail -3)"
    echo "verify $g (cpu vs cuda): $out"
    bench_rows+=("verify $g|$(echo "$out" | tail -1 | cut -c1-90)")
  done
  say "engines: golden models segmented for the CUDA backend, CUDA vs CPU"
  # one line per golden model: name graph feed feed-file fetch (the manifest's first feed and fetch);
  # the LSTMs are left out: their loops stay outside the engines and the CUDA backend runs no loops
  eng_ok=0 eng_bad=0
  while read -r name graph feed ffile fetch; do
    for prec in FP32 FP16 INT8; do
      out="$B/${name}_engines_${prec}.pb" tol=1e-5 cal=()
      [ "$prec" = FP16 ] && tol=1e-2
      # INT8: calibrated on the golden feed; the CUDA engines against the CPU reference's
      [ "$prec" = INT8 ] && tol=1e-3 cal=(--calibrate "$root/tests/data/golden/$ffile")
      if ! timeout 60 "$BUILD/grapnel" segment "$root/tests/data/$graph" -o "$out" --backend cuda \
           --params "{'precision_mode': '$prec'}" --feed "${feed%:0}" --fetch "${fetch%:0}" "${cal[@]}" > "$out.log" 2>&1; then
        echo "segment $name $prec FAILED: $(tail -1 "$out.log")"; eng_bad=$((eng_bad + 1)); continue
      fi
      v="$(timeout 60 "$BUILD/grapnel" verify "$out" "$out" --backend cpu --backend-b cuda --tol "$tol" \
           --feed "${feed%:0}=$root/tests/data/golden/$ffile" --fetch "${fetch%:0}" 2>&1)"
      if [ $? = 0 ]; then eng_ok=$((eng_ok + 1)); else eng_bad=$((eng_bad + 1)); fi
      echo "engines $name $prec ($(grep -c '^engine ' "$out.log" 2>/dev/null || true) engine ops): $(echo "$v" | tail -1 | cut -c1-150)"
    done
  done < <(awk '/^model /{n=$2;g="";f="";ff="";x=""} /^graph /{g=$2} /^feed /{if(f==""){f=$2;ff=$3}}
               /^fetch /{if(x==""){x=$2}} /^end/{if(g ~ /^golden\// && n !~ /^lstm/) print n, g, f, ff, x}' "$root/tests/data/golden/manifest.txt")
  bench_rows+=("engines (golden, cuda)|$eng_ok agree with the CPU backend, $eng_bad failed or not on CUDA")
  if [ -e "$B/bert_f16.pb" ]; then   # BERT as engine ops too (timed below)
    timeout 120 "$BUILD/grapnel" segment "$B/bert_f16.pb" -o "$B/bert_f16_engines.pb" --backend cuda --feed input \
      --fetch output > "$B/bert_f16_engines.log" 2>&1 || echo "segment bert_f16 FAILED: $(tail -1 "$B/bert_f16_engines.log")"
  fi
  # ResNet-50 in float32 NHWC (our passes, no mixed precision) and as INT8 engines calibrated on
  # four random batches: int8 convolutions through cuBLASLt, against float32 on the same GPU
  opt "$B/resnet50.pb" "$B/resnet50_f32.pb" input logits "{'layout_optimizer': False}"
  if [ -e "$B/resnet50_f32.pb" ] && [ -n "$PY" ] && "$PY" -c "import numpy as np
np.save('$B/cal.npy', np.random.default_rng(1).standard_normal((4, 224, 224, 3), dtype=np.float32))" 2>/dev/null; then
    if timeout 240 "$BUILD/grapnel" segment "$B/resnet50_f32.pb" -o "$B/resnet50_int8.pb" --backend cuda \
         --params "{'precision_mode': 'INT8'}" --feed input --fetch logits --calibrate "$B/cal.npy" \
         > "$B/resnet50_int8.log" 2>&1; then
      v="$(timeout 120 "$BUILD/grapnel" verify "$B/resnet50_f32.pb" "$B/resnet50_int8.pb" --backend cuda \
           --backend-b cuda --tol 1 2>&1 | tail -1)"
      echo "resnet50 INT8 engines vs float32, both on CUDA: $v"
      bench_rows+=("resnet50 int8 vs f32|$(echo "$v" | cut -c1-90)")
    else
      echo "segment resnet50 INT8 FAILED: $(tail -1 "$B/resnet50_int8.log")"
    fi
  else
    echo "resnet50 INT8: no float32 graph or no numpy for the calibration batches"
  fi
  say "benchmark: grapnel on CUDA (without and with CUDA Graph replay)"
  # the timings come last and go first when the run is late (GN_GPU_BENCH_BY seconds, default 420):
  # the summary must still print inside the run tool's 600 s
  late=$(( $(date +%s) - start > ${GN_GPU_BENCH_BY:-420} ))
  [ "$late" = 1 ] && echo "benchmark: skipped, $(( $(date +%s) - start )) s gone (GN_GPU_BENCH_BY=${GN_GPU_BENCH_BY:-420})"
  [ "$late" = 1 ] || for spec in "resnet50 NCHW resnet50_nchw input 224,224,3 logits" "resnet50 NHWC resnet50_nhwc input 224,224,3 logits" \
              "resnet50 f32-NHWC resnet50_f32 input 224,224,3 logits" \
              "resnet50 int8-engines resnet50_int8 input 224,224,3 logits" \
              "bert_base_encoder f16 bert_f16 input 128,768 output" \
              "bert_base_encoder f16-engines bert_f16_engines input 128,768 output"; do
    set -- $spec
    for batch in 1 64; do
      for graph in 0 1; do
        variant="$2"; [ "$graph" = 1 ] && variant="$2/graph"
        [ -e "$B/$3.pb" ] || { echo "$1 $variant FAILED $batch no graph" >> "$OURS"; continue; }
        line="$(timeout 120 "$BUILD/gpu_bench" "$B/$3.pb" "$4" "$batch,$5" "$6" --backend cuda --min-time 1.0 \
                --cuda-graph "$graph" 2>&1 | tail -1)"
        case "$line" in
          backend*) echo "$1 $2 $line" >> "$OURS" ;;
          *) echo "$1 $variant FAILED $batch $line" >> "$OURS" ;;
        esac
        echo "$1 $variant batch $batch: $line"
      done
    done
  done
  say "benchmark: PyTorch"
  if [ "$late" = 1 ]; then
    echo "torch: skipped (late)"
  elif [ -n "$PY" ] && [ -n "$torch_ver" ]; then
    timeout 240 "$PY" "$root/bench/torch_bench.py" --min-time 1.0 > "$TORCH" 2> "$B/torch.err" || echo "torch_bench: rc $? ($(tail -2 "$B/torch.err"))"
    grep -c '"kind": "result"' "$TORCH" | sed 's/^/torch results: /'
  else
    echo "torch: absent, no PyTorch figures"
  fi
fi

# ---- 6. table -------------------------------------------------------------------------------------------
say "summary"
printf '%-24s %s\n' "gpu" "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
printf '%-24s %s\n' "cudnn" "${CUDNN_LIB:-not found}"
printf '%-24s %s\n' "torch" "${torch_ver:-absent}"
printf '%-24s %s\n' "build (GRAPNEL_CUDA=ON)" "$status_build"
printf '%-24s %s %s\n' "cuda_test" "$status_test" "$test_summary"
printf '%-24s %s\n' "kernels_xla_test" "${xk:-not run}"
for r in "${bench_rows[@]}"; do printf '%-24s %s\n' "${r%%|*}" "${r#*|}"; done
if [ "$status_build" = ok ] && [ -n "$PY" ]; then
  "$PY" "$root/bench/gpu_table.py" "$root/build-gpu/bench/ours.txt" "$root/build-gpu/bench/torch.jsonl"
fi
echo "total $(( $(date +%s) - start )) s"
[ "$status_build" = ok ] && [ "$status_test" = ok ]
