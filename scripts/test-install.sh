#!/usr/bin/env bash
# Installs grapnel from a build directory into a temporary prefix and uses it
# the way a user would:
#   1. cmake --install BUILD --prefix TMP; checks the SONAME and the exported symbols
#   2. builds and runs examples/c with find_package(grapnel) (shared and static)
#   3. builds and runs examples/c with pkg-config (examples/c/Makefile)
#   4. makes a virtualenv (system site packages: Debian's numpy and pytest; from
#      PyPI when those are missing), pip-installs python/, runs the pytest suite
#      and examples/python, the library found through pkg-config
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
say "installed CLI: $cli (finds its library through RPATH \$ORIGIN/../lib)"

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

# ---- 4. Python ----------------------------------------------------------------------------------------
# Debian's python3 (with its numpy/pytest packages) unless PYTHON says otherwise
py=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3)}
say "virtualenv with $py ($("$py" --version 2>&1))"
"$py" -m venv --system-site-packages "$tmp/venv"
vpy=$tmp/venv/bin/python
if "$vpy" -c 'import numpy, pytest, setuptools, wheel' 2>/dev/null; then
  say "numpy, pytest from the system site packages"
  pipflags=(--no-build-isolation --no-deps)
else
  say "installing numpy, pytest from PyPI"
  "$vpy" -m pip install -q numpy pytest setuptools wheel
  pipflags=()
fi
# a copy, so that the build leaves nothing in the source tree
cp -r "$root/python" "$tmp/python-src"
rm -rf "$tmp/python-src/build" "$tmp/python-src"/*.egg-info
"$vpy" -m pip install -q --disable-pip-version-check "${pipflags[@]}" "$tmp/python-src"
unset GRAPNEL_LIB
where=$(cd "$tmp" && "$vpy" -c 'import grapnel; print(grapnel.__file__, grapnel.library_path)')
say "import grapnel: $where"
case "$where" in
  "$tmp/venv/"*" $libdir/"*) ;;
  *) say "FAIL: grapnel not imported from the venv, or its library not from the prefix"; exit 1 ;;
esac
say "pytest python/tests"
(cd "$tmp" && PYTHONDONTWRITEBYTECODE=1 GRAPNEL_REPO="$root" "$vpy" -m pytest -q -p no:cacheprovider "$root/python/tests")
out=$(cd "$tmp" && "$vpy" "$root/examples/python/optimize_run.py") ||
  { say "FAIL: Python example"; printf '%s\n' "$out"; exit 1; }
grep -q 'verify against the original: match=True' <<<"$out" ||
  { say "FAIL: Python example printed:"; printf '%s\n' "$out"; exit 1; }
say "Python example: $(grep -E '^nodes:|argmax|^verify' <<<"$out" | tr -s ' \n' ' ')"
say "ok"
