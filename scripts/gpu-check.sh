#!/usr/bin/env bash
# One command for a GPU machine (H200: nvcc and the CUDA runtime, cuDNN only
# inside Python's nvidia-cudnn-cu13 package, PyTorch, no network, none of our
# Debian build dependencies): probes all that, unpacks the Debian packages
# that scripts/fetch-gpu-deps.sh downloaded (.gpu-deps/ in the checkout, or
# GN_GPU_DEPS=DIR, or shared/gpu-deps/) into a local prefix, builds grapnel
# with -DGRAPNEL_CUDA=ON, runs tests/cuda_test (CUDA against the CPU backend,
# per op and on the golden models), runs two generated models on both
# backends, and prints a short table last. Takes a few minutes on 16 cores.
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
elif "$CMAKE" --build "$BUILD" -j"$jobs" --target grapnel grapnel_cli cuda_test runtime_test gen_graph \
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
  (cd "$BUILD" && timeout 300 ./cuda_test) 2>&1 | tee "$root/build-gpu/cuda_test.log" | tail -60
  rc=${PIPESTATUS[0]}
  status_test=$([ "$rc" = 0 ] && echo ok || echo "FAILED (rc $rc)")
  test_summary="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) \] [0-9]' "$root/build-gpu/cuda_test.log" | tr '\n' ' ')"
  say "runtime_test (CPU backend still fine in this build)"
  (cd "$BUILD" && timeout 120 ./runtime_test) > "$root/build-gpu/runtime_test.log" 2>&1 && rt=ok || rt=FAILED
  echo "runtime_test: $rt"

  # ---- 5. generated models: CPU vs CUDA through the CLI -----------------------------------------------
  say "benchmark (generated models, grapnel run on each backend)"
  B="$root/build-gpu/bench"
  mkdir -p "$B"
  for spec in "conv 400" "transformer 400"; do
    set -- $spec
    model="$B/$1.pb"
    "$BUILD/gen_graph" "$1" "$2" "$model" > /dev/null 2>&1 || { bench_rows+=("$1|$2|gen_graph failed|||"); continue; }
    row="$1|$2"
    for be in cpu cuda; do
      rm -rf "$B/out-$1-$be"; mkdir -p "$B/out-$1-$be"
      t0=$(date +%s.%N)
      if timeout 120 "$BUILD/grapnel" run "$model" --backend "$be" --fetch "output=$B/out-$1-$be/output.npy" \
           > "$B/run-$1-$be.log" 2>&1; then
        row="$row|$(echo "$(date +%s.%N) - $t0" | bc -l | xargs printf '%.2f s')"
      else
        row="$row|FAILED: $(tail -1 "$B/run-$1-$be.log" | cut -c1-60)"
      fi
    done
    cmp="n/a"
    if [ -n "$PY" ] && ls "$B/out-$1-cpu"/*.npy >/dev/null 2>&1 && ls "$B/out-$1-cuda"/*.npy >/dev/null 2>&1; then
      cmp="$("$PY" - "$B/out-$1-cpu" "$B/out-$1-cuda" <<'PYEOF' 2>&1 | tail -1
import sys, os
import numpy as np
a, b = sys.argv[1], sys.argv[2]
worst = 0.0
for f in sorted(os.listdir(a)):
    x = np.load(os.path.join(a, f)).astype(np.float64); y = np.load(os.path.join(b, f)).astype(np.float64)
    if x.shape != y.shape: print("shape", x.shape, y.shape); sys.exit()
    worst = max(worst, float(np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)))
print("%.2e" % worst)
PYEOF
)"
    fi
    bench_rows+=("$row|$cmp")
  done
fi

# ---- 6. table -------------------------------------------------------------------------------------------
say "summary"
printf '%-22s %s\n' "gpu" "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
printf '%-22s %s\n' "cudnn" "${CUDNN_LIB:-not found}"
printf '%-22s %s\n' "torch" "${torch_ver:-absent}"
printf '%-22s %s\n' "build (GRAPNEL_CUDA=ON)" "$status_build"
printf '%-22s %s %s\n' "cuda_test" "$status_test" "$test_summary"
printf '%-12s %6s  %-16s %-16s %s\n' "model" "nodes" "cpu (CLI, s)" "cuda (CLI, s)" "rel L2 cuda vs cpu"
for r in "${bench_rows[@]}"; do
  IFS='|' read -r m n c g l <<< "$r"
  printf '%-12s %6s  %-16s %-16s %s\n' "$m" "$n" "$c" "$g" "$l"
done
echo "(CLI times are whole runs: load, compile, one execution; not a throughput benchmark)"
[ "$status_build" = ok ] && [ "$status_test" = ok ]
