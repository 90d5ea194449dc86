#!/usr/bin/env bash
# Installs the Debian packages grapnel needs to build and test, when missing
# (libsnappy-dev only for tests/snappy_test.c: the library has its own decoder).
set -euo pipefail
pkgs=(cmake make gcc pkg-config libprotobuf-c-dev protobuf-c-compiler libcmocka-dev
      zlib1g-dev libsnappy-dev libopenblas-dev libdeflate0 gzip python3
      python3-venv python3-pip python3-numpy python3-pytest help2man)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
