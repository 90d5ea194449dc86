#!/usr/bin/env bash
# Prints one line per model and step: the sha256 of what grapnel wrote, so that
# two builds can be compared byte for byte (a refactor or a speed change must
# change no output byte):
#   scripts/output-digests.sh BUILD [MODELS_DIR...] > digests.txt
#   diff digests-before.txt digests-after.txt
# Models: every .pb/.pbtxt and SavedModel directory under each MODELS_DIR
# (default: the corpus beside the clone, ../shared/corpus, and the zoo that
# tools/model_zoo.py writes, ~/.cache/grapnel/zoo-full, where present), plus the
# golden models under tests/data/golden. Steps per model:
#   opt       optimize, default options, GraphDef out
#   opt-gpu   optimize --target gpu:sm_90 (layout, AMP, remapping for a GPU)
#   seg       segment (default ConversionParams), GraphDef out
#   seg16     segment with precision_mode FP16
#   save      save as a SavedModel (GraphDef input: every Placeholder fed,
#             the fetches from `inspect --json`'s outputs), digest of every file
# A step that fails prints its exit status instead of a digest (the same
# failure on both sides compares equal; a different one shows in the diff).
set -uo pipefail
B=$(cd "$1" && pwd); shift
G="$B/grapnel"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for d in "$ROOT/../shared/corpus" "$HOME/.cache/grapnel/zoo-full" "$ROOT/tests/data/golden"; do
    [ -d "$d" ] && dirs+=("$d")
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

digest() {   # PATH: sha256 of a file, or of every file under a directory (names included)
  if [ -d "$1" ]; then
    (cd "$1" && find . -type f | LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -c1-16)
  else
    sha256sum "$1" | cut -c1-16
  fi
}
step() {   # NAME STEP OUT CMD...
  local name="$1" what="$2" out="$3"; shift 3
  rm -rf "$out"
  if "$@" >/dev/null 2>&1; then
    printf '%s %s %s\n' "$name" "$what" "$(digest "$out")"
  else
    printf '%s %s rc=%s\n' "$name" "$what" "$?"
  fi
  rm -rf "$out"
}

models=()
for d in "${dirs[@]}"; do
  while IFS= read -r m; do models+=("$m"); done < <(
    { find "$d" \( -name '*.pb' -o -name '*.pbtxt' \) -type f ! -name saved_model.pb ! -path '*/variables/*'
      find "$d" -name saved_model.pb -type f -printf '%h\n'; } | LC_ALL=C sort -u)
done

for m in "${models[@]}"; do
  name=${m#"$ROOT/"}
  name=${name#"$HOME/"}
  step "$name" opt "$tmp/o.pb" "$G" optimize "$m" -o "$tmp/o.pb"
  step "$name" opt-gpu "$tmp/o.pb" "$G" optimize "$m" -o "$tmp/o.pb" --target gpu:sm_90
  step "$name" seg "$tmp/s.pb" "$G" segment "$m" -o "$tmp/s.pb"
  step "$name" seg16 "$tmp/s.pb" "$G" segment "$m" -o "$tmp/s.pb" --params "{'precision_mode': 'FP16'}"
  if [ -d "$m" ]; then
    step "$name" save "$tmp/sm" "$G" save "$m" "$tmp/sm"
  else
    fetch=$("$G" inspect "$m" --json 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    sys.exit(0)
for o in d.get("outputs", [])[:4]:
    print("--fetch"); print(o if isinstance(o, str) else o.get("name", ""))' 2>/dev/null)
    mapfile -t fargs <<<"$fetch"
    [ -n "$fetch" ] || fargs=()
    step "$name" save "$tmp/sm" "$G" save "$m" "$tmp/sm" "${fargs[@]}"
  fi
done
