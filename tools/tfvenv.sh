#!/usr/bin/env bash
# Makes (once) the TensorFlow virtualenv that the scripts under tools/ and
# bench/ run in, outside the repository, and prints its python's path.
#
#   tools/tfvenv.sh            -> creates $GN_TFVENV (default ~/.cache/grapnel/tfvenv)
#   PY=$(tools/tfvenv.sh)      -> then: $PY tools/model_zoo.py ...
#   tools/tfvenv.sh --gpu      -> creates $GN_TFGPU_VENV (default
#                                 ~/.cache/grapnel/tfgpu-venv) with the CUDA-built
#                                 `tensorflow` wheel of the same version, whose GPU
#                                 kernels are registered even without a GPU
#                                 (tools/grappler_gpu_counts.py, tf_oracle.py --gpu-py)
#
# The versions are those of tools/requirements-tools.txt, which the committed
# goldens were made with. Nothing here is needed to build or test grapnel.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
req="$here/requirements-tools.txt"
venv="${GN_TFVENV:-$HOME/.cache/grapnel/tfvenv}"
if [ "${1:-}" = "--gpu" ]; then
  venv="${GN_TFGPU_VENV:-$HOME/.cache/grapnel/tfgpu-venv}"
  # the same pins, with the CUDA-built wheel in place of tensorflow-cpu
  gpu_req="$(mktemp)"
  trap 'rm -f "$gpu_req"' EXIT
  sed 's/^tensorflow-cpu==/tensorflow==/' "$req" >"$gpu_req"
  req="$gpu_req"
elif [ -n "${1:-}" ]; then
  echo "usage: tools/tfvenv.sh [--gpu]" >&2
  exit 2
fi
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow' 2>/dev/null; then
  py="$(command -v python3.11 || command -v python3)"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" >&2
  "$venv/bin/pip" install -q --upgrade pip >&2
  "$venv/bin/pip" install -q -r "$req" >&2
fi
echo "$venv/bin/python"
