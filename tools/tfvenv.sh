#!/usr/bin/env bash
# Makes (once) the TensorFlow virtualenv that the scripts under tools/ and
# bench/ run in, outside the repository, and prints its python's path.
#
#   tools/tfvenv.sh            -> creates $GN_TFVENV (default ~/.cache/grapnel/tfvenv)
#   PY=$(tools/tfvenv.sh)      -> then: $PY tools/model_zoo.py ...
#
# The versions are those of tools/requirements-tools.txt, which the committed
# goldens were made with. Nothing here is needed to build or test grapnel.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${GN_TFVENV:-$HOME/.cache/grapnel/tfvenv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow' 2>/dev/null; then
  py="$(command -v python3.11 || command -v python3)"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" >&2
  "$venv/bin/pip" install -q --upgrade pip >&2
  "$venv/bin/pip" install -q -r "$here/requirements-tools.txt" >&2
fi
echo "$venv/bin/python"
