#!/usr/bin/env bash
# Installs grapnel from a build directory into a temporary prefix and uses it
# the way a user would:
#   1. cmake --install BUILD --prefix TMP; checks the SONAME, the exported symbols,
#      that libgrapnel.so needs no CUDA library, and that the CLI runs on the CPU
#      with the CUDA module (libgrapnel_cuda.so) removed, saying so when asked for CUDA
#   2. builds and runs examples/c with find_package(grapnel) (shared and static)
#   3. builds and runs examples/c with pkg-config (examples/c/Makefile)
#   4. makes a virtualenv (system site packages: Debian's numpy and pytest; from
#      PyPI when those are missing) and runs `pip install ./python`, which builds
#      the library with CMake (scikit-build-core) into the package; with no
#      other install step, imports grapnel, loads, optimizes and runs a corpus
#      SavedModel, runs `python -m grapnel`, the pytest suite and examples/python,
#      and checks the wheel `pip wheel ./python` makes
# The wheel's CMake build directory lasts between runs (GN_WHEEL_BUILD, default
# BUILD-wheel next to BUILD; ccache when installed): a second run rebuilds nothing.
# Usage: scripts/test-install.sh [BUILD_DIR]   (default: build; must be built)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grapnel-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
say() { printf 'test-install: %s\n' "$*"; }

# ---- 1. install ---------------------------------------------------------------------------------
say "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name 'libgrapnel.so.0' -printf '%h\n' | head -n1)
[ -n "$libdir" ] || { say "FAIL: libgrapnel.so.0 not installed"; exit 1; }
for f in include/grapnel/grapnel.h bin/grapnel; do
  [ -e "$prefix/$f" ] || { say "FAIL: $f not installed"; exit 1; }
done
for f in libgrapnel.a libgrapnel.so cmake/grapnel/grapnelConfig.cmake cmake/grapnel/grapnelConfigVersion.cmake \
         cmake/grapnel/grapnelTargets.cmake pkgconfig/grapnel.pc; do
  [ -e "$libdir/$f" ] || { say "FAIL: $libdir/$f not installed"; exit 1; }
done
soname=$(objdump -p "$libdir/libgrapnel.so.0" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libgrapnel.so.0 ] || { say "FAIL: SONAME is '$soname'"; exit 1; }
nexp=$(nm -D --defined-only "$libdir/libgrapnel.so.0" | awk '{print $NF}' | grep -c .)
other=$(nm -D --defined-only "$libdir/libgrapnel.so.0" | awk '{print $NF}' | grep -v '^gn_' || true)
[ -z "$other" ] || { say "FAIL: exported symbols outside the gn_ API: $other"; exit 1; }
say "installed: $(cd "$prefix" && find . -type f | sort | sed 's|^\./||' | tr '\n' ' ')"
say "SONAME $soname, $nexp exported symbols, all gn_*"
cli=$(env -u LD_LIBRARY_PATH "$prefix/bin/grapnel" --version) || { say "FAIL: the installed CLI does not run"; exit 1; }
say "installed CLI: $cli (linked with libgrapnel.a; finds the CUDA module through RUNPATH \$ORIGIN/../lib)"
if ldd "$prefix/bin/grapnel" | grep -q libgrapnel; then say "FAIL: the CLI links libgrapnel.so"; exit 1; fi
cuda_needed=$(readelf -d "$libdir/libgrapnel.so.0" | awk '/NEEDED/ {print $NF}' | grep -Ei 'libcu|libnv' || true)
[ -z "$cuda_needed" ] || { say "FAIL: libgrapnel.so needs $cuda_needed"; exit 1; }
mod=$libdir/libgrapnel_cuda.so
if [ -e "$mod" ]; then
  say "CUDA module: $(readelf -d "$mod" | awk '/NEEDED/ {printf "%s ", $NF}' | tr -d '[]')(libgrapnel.so needs none)"
  mv "$mod" "$mod.away"
else
  say "no CUDA module (built without the CUDA backend)"
fi
kws_args=("$root/examples/models/ds_cnn_s.pb" --feed "Mfcc=$root/examples/models/ds_cnn_s.mfcc.npy" --fetch labels_softmax)
env -u LD_LIBRARY_PATH -u GRAPNEL_CUDA_MODULE "$prefix/bin/grapnel" run "${kws_args[@]}" --backend cpu >/dev/null ||
  { say "FAIL: the CPU path without the CUDA module"; exit 1; }
set +e
err=$(env -u LD_LIBRARY_PATH -u GRAPNEL_CUDA_MODULE "$prefix/bin/grapnel" run "${kws_args[@]}" --backend cuda 2>&1 >/dev/null)
rc=$?
set -e
if [ -e "$mod.away" ]; then
  want="grapnel run: no CUDA backend: the module libgrapnel_cuda.so is neither in $prefix/bin/ nor found by the system loader"
  mv "$mod.away" "$mod"
else
  want="grapnel run: the CUDA backend is not built in"
fi
[ "$rc" = 1 ] && [ "${err#"$want"}" != "$err" ] ||
  { say "FAIL: --backend cuda without the module: rc $rc: $err (wanted: $want...)"; exit 1; }
say "without the CUDA module: the CPU runs; CUDA: ${err#grapnel run: }"
if [ -e "$mod" ]; then
  # the module back in lib/: the CLI finds it (through its RUNPATH), whatever the device says then
  set +e
  err=$(env -u LD_LIBRARY_PATH -u GRAPNEL_CUDA_MODULE "$prefix/bin/grapnel" run "${kws_args[@]}" --backend cuda 2>&1 >/dev/null)
  set -e
  case "$err" in
    *"is neither in"*) say "FAIL: the installed CLI does not find $mod: $err"; exit 1 ;;
  esac
  say "with the CUDA module in lib/: the CLI opens it (${err:-it ran}; ${err:+no GPU here})"
fi

model=$root/examples/models/ds_cnn_s.pb
mfcc=$root/examples/models/ds_cnn_s.mfcc.npy
opts="{'constant_folding': True, 'layout_optimizer': False}"
check_example() {   # $1: label, $2: program
  local out
  out=$("$2" "$model" "$opts" labels_softmax Mfcc "$mfcc") || { say "FAIL: $1 example"; exit 1; }
  grep -q '^options: {' <<<"$out" && grep -q '^labels_softmax: float32 \[1, 12\]' <<<"$out" &&
    grep -q 'argmax: ' <<<"$out" || { say "FAIL: $1 example printed:"; printf '%s\n' "$out"; exit 1; }
  say "$1 example: $(grep -E '^nodes:|argmax' <<<"$out" | tr -s ' \n' ' ')"
}

# ---- 2. C example with find_package -----------------------------------------------------------------
say "examples/c with find_package(grapnel) (CMAKE_PREFIX_PATH=$prefix)"
cmake -S "$root/examples/c" -B "$tmp/example-cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$tmp/example-cmake" -j 2 >/dev/null
check_example "C (find_package, shared)" "$tmp/example-cmake/optimize_run"
check_example "C (find_package, static)" "$tmp/example-cmake/optimize_run_static"
if ldd "$tmp/example-cmake/optimize_run_static" | grep -q libgrapnel; then
  say "FAIL: the static example links libgrapnel.so"; exit 1
fi

# ---- 3. C example with pkg-config ---------------------------------------------------------------------
export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
say "examples/c with pkg-config: $(pkg-config --cflags --libs grapnel)"
mkdir -p "$tmp/example-pc"
make -s -C "$root/examples/c" O="$tmp/example-pc" "$tmp/example-pc/optimize_run" >/dev/null
check_example "C (pkg-config)" "$tmp/example-pc/optimize_run"

# ---- 4. Python: pip install ./python, nothing else -------------------------------------------------
# Debian's python3 (with its numpy/pytest packages) unless PYTHON says otherwise
py=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3)}
say "virtualenv with $py ($("$py" --version 2>&1))"
"$py" -m venv --system-site-packages "$tmp/venv"
vpy=$tmp/venv/bin/python
if "$vpy" -c 'import numpy, pytest' 2>/dev/null; then
  say "numpy, pytest from the system site packages"
else
  say "installing numpy, pytest from PyPI"
  "$vpy" -m pip install -q --disable-pip-version-check numpy pytest
fi
wheel_build=${GN_WHEEL_BUILD:-$build-wheel}
skb=(--config-settings="build-dir=$wheel_build")
command -v ccache >/dev/null && skb+=(--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache)
# nothing from the C install above, nor from the caller's environment
unset GRAPNEL_LIB GRAPNEL_CUDA_MODULE LD_LIBRARY_PATH PKG_CONFIG_PATH
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
t0=$(date +%s)
say "pip install ./python (scikit-build-core from PyPI builds the library; CMake build dir $wheel_build)"
"$vpy" -m pip install -q --disable-pip-version-check "${skb[@]}" "$root/python"
say "built and installed in $(( $(date +%s) - t0 )) s"
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
where=$(cd "$tmp" && "$vpy" -c 'import grapnel; print(grapnel.__file__, grapnel.library_path)')
say "import grapnel: $where"
[ "$where" = "$site/grapnel/__init__.py $site/grapnel/libgrapnel.so.0" ] ||
  { say "FAIL: grapnel, or its library, not the package's own"; exit 1; }
[ "$(cd "$tmp" && "$vpy" -m grapnel --version)" = "$cli" ] || { say "FAIL: python -m grapnel --version"; exit 1; }
[ "$("$tmp/venv/bin/grapnel" --version)" = "$cli" ] || { say "FAIL: the grapnel command of the venv"; exit 1; }
set +e
(cd "$tmp" && "$vpy" -m grapnel optimize) >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || { say "FAIL: python -m grapnel passes the CLI's exit status on (usage error gave $rc)"; exit 1; }
say "python -m grapnel and the grapnel command run the packaged CLI ($cli)"

corpus=${GRAPNEL_CORPUS:-$root/../shared/corpus}
sm=$corpus/mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model
if [ -d "$sm" ]; then
  out=$(cd "$tmp" && "$vpy" - "$sm" <<'PY'
import sys, numpy as np, grapnel
with grapnel.load(sys.argv[1]) as m:                       # a SavedModel directory
    sig = m.signatures()["serving_default"]
    (x,), (y,) = sig["inputs"].values(), sig["outputs"].values()
    feed = {x["tensor"].split(":")[0]: np.random.default_rng(0).standard_normal(
        [n if n and n > 0 else 1 for n in x["shape"]]).astype(x["dtype"])}
    with m.freeze("serving_default") as frozen, frozen.clone() as g:
        g.optimize({"constant_folding": True})
        out = g.run(feed, y["tensor"])
        v = frozen.verify(g, feeds=feed, fetches=[y["tensor"]])[y["tensor"]]
        print(f"nodes {len(frozen)} -> {len(g)}; output {out.dtype} {list(out.shape)}; "
              f"against the frozen graph: match={v['match']} max_abs_err={v['max_abs_err']:.2g}")
PY
) || { say "FAIL: the corpus SavedModel"; printf '%s\n' "$out"; exit 1; }
  grep -q 'output float32 \[1, 12\]; against the frozen graph: match=True' <<<"$out" ||
    { say "FAIL: the corpus SavedModel printed: $out"; exit 1; }
  say "SavedModel (mlcommons kws_ref_model): $out"
else
  say "corpus not found at $corpus: the SavedModel check is skipped (set GRAPNEL_CORPUS)"
fi

say "pytest python/tests against the installed package"
(cd "$tmp" && PYTHONDONTWRITEBYTECODE=1 GRAPNEL_REPO="$root" GRAPNEL_CORPUS="$corpus" \
  "$vpy" -m pytest -q -p no:cacheprovider "$root/python/tests")
out=$(cd "$tmp" && "$vpy" "$root/examples/python/optimize_run.py") ||
  { say "FAIL: Python example"; printf '%s\n' "$out"; exit 1; }
grep -q 'verify against the original: match=True' <<<"$out" ||
  { say "FAIL: Python example printed:"; printf '%s\n' "$out"; exit 1; }
say "Python example: $(grep -E '^nodes:|argmax|^verify' <<<"$out" | tr -s ' \n' ' ')"

say "pip wheel ./python"
"$vpy" -m pip wheel -q --disable-pip-version-check --no-deps "${skb[@]}" -w "$tmp/wheels" "$root/python"
whl=$(ls "$tmp"/wheels/grapnel_tf-*.whl)
"$vpy" - "$whl" <<'PY' || { say "FAIL: the wheel's contents"; exit 1; }
import sys, zipfile
names = sorted(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if not n.startswith("grapnel_tf-"))
want = {"grapnel/__init__.py", "grapnel/__main__.py", "grapnel/_lib.py", "grapnel/py.typed",
        "grapnel/libgrapnel.so.0", "grapnel/bin/grapnel"}
extra = set(names) - want - {"grapnel/libgrapnel_cuda.so"}
missing = want - set(names)
if extra or missing:
    sys.exit(f"wheel: missing {sorted(missing)}, unexpected {sorted(extra)}")
PY
say "wheel: $(basename "$whl") ($(du -k "$whl" | cut -f1) kB)"
say "ok"
