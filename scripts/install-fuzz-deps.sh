#!/usr/bin/env bash
# Installs what the fuzz targets (make fuzz) and the ThreadSanitizer build
# (make tsan) need besides scripts/install-deps.sh: a clang with libFuzzer and
# _Float16 on x86-64 (clang 15 or later; Debian 12 ships clang 14 as `clang`,
# so clang-16 and its compiler-rt). Prints the compiler to use.
set -euo pipefail
pkgs=(clang-16 libclang-rt-16-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-fuzz-deps: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
command -v clang-16
