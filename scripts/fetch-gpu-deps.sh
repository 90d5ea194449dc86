#!/usr/bin/env bash
# Downloads the Debian packages that scripts/gpu-check.sh needs on a GPU
# machine without network access or our build dependencies: protobuf-c
# (library, headers, protoc-c), cmocka, OpenBLAS, snappy, zlib headers,
# pkg-config, and cmake (used only when the GPU machine has no cmake >= 3.25).
# Run it here (with network); it writes .deb files to .gpu-deps/ (ignored by
# git; give it to the run tool with carry: [".gpu-deps"]) and checks that
# they stay under 64 MiB and that the unpacked tree configures our build with
# PKG_CONFIG_PATH pointing only at it.
#   scripts/fetch-gpu-deps.sh [DIR]     (default DIR: .gpu-deps in the checkout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/.gpu-deps}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
pkgs=(libprotobuf-c-dev libprotobuf-c1 protobuf-c-compiler libprotobuf32 libprotoc32
      libcmocka-dev libcmocka0
      libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libgfortran5
      libsnappy-dev libsnappy1v5 zlib1g-dev
      pkgconf pkgconf-bin libpkgconf3
      cmake cmake-data libjsoncpp25 librhash0 libuv1)
echo "fetch-gpu-deps: downloading ${#pkgs[@]} packages into $dir"
rm -f "$dir"/*.deb
(cd "$dir" && apt-get download "${pkgs[@]}" >/dev/null)
total=$(du -cb "$dir"/*.deb | tail -1 | cut -f1)
printf 'fetch-gpu-deps: %d files, %.1f MiB\n' "$(ls "$dir"/*.deb | wc -l)" "$(echo "$total / 1048576" | bc -l)"
if [ "$total" -ge $((60 * 1024 * 1024)) ]; then
  echo "fetch-gpu-deps: too large for the run tool (64 MiB with the checkout)" >&2
  exit 1
fi
# check: unpack into a scratch prefix and configure our build against it alone
if [ "${GN_FETCH_NO_CHECK:-0}" != 1 ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$root/scripts/gpu-check.sh" --unpack-only "$dir" "$tmp/prefix" >/dev/null
  arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
  pc="$tmp/prefix/usr/lib/$arch/pkgconfig:$tmp/prefix/usr/share/pkgconfig"
  for m in libprotobuf-c openblas cmocka zlib; do
    PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH="" pkg-config --exists "$m" ||
      { echo "fetch-gpu-deps: pkg-config cannot find $m in the unpacked tree" >&2; exit 1; }
  done
  LD_LIBRARY_PATH="$tmp/prefix/usr/lib/$arch" "$tmp/prefix/usr/bin/protoc-c" --version >/dev/null ||
    { echo "fetch-gpu-deps: the unpacked protoc-c does not run" >&2; exit 1; }
  echo "fetch-gpu-deps: unpacked tree OK (pkg-config finds libprotobuf-c, openblas, cmocka, zlib; protoc-c runs)"
fi
