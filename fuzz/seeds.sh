#!/usr/bin/env bash
# Makes the fuzz targets' seed corpora and dictionaries under OUT (a build
# directory, never the source tree): fuzz/seeds.sh CLI OUT
#   CLI  the grapnel CLI of the fuzz build (converts between .pb and .pbtxt)
#   OUT  gets corpus/<target>/ and <target>.dict
# Seeds come from ../shared/corpus and tests/data, small ones only (each
# target's size limit), plus the hand-written ones in fuzz/seeds/.
set -euo pipefail
CLI=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CORPUS=$(cd "$ROOT/../shared/corpus" 2>/dev/null && pwd || true)
DATA=$ROOT/tests/data
SPLIT='#GNSPLIT#'

rm -rf "$OUT/corpus"
for t in graphdef_binary graphdef_text savedmodel bundle_index dict_text npy engine_asset optimize run regex example; do
  mkdir -p "$OUT/corpus/$t"
done
C=$OUT/corpus
SRC=("$DATA")
[ -n "$CORPUS" ] && SRC+=("$CORPUS")

# a file named by a hash of its path (distinct, stable names)
put() { cp "$1" "$C/$2/$(printf '%s' "$1" | md5sum | cut -c1-12)${3:-}"; }

# ---- graphs: .pb (not SavedModel protos), .pbtxt; each also converted to the other format
while IFS= read -r f; do
  sz=$(stat -c %s "$f")
  case "$f" in */saved_model.pb|*/fingerprint.pb|*/keras_metadata.pb|*/tfhub_module.pb) continue ;; esac
  base=$(printf '%s' "$f" | md5sum | cut -c1-12)
  case "$f" in
    *.pb)
      [ "$sz" -le 1048576 ] && cp "$f" "$C/graphdef_binary/$base"
      [ "$sz" -le 262144 ] && cp "$f" "$C/optimize/$base"
      [ "$sz" -le 262144 ] && "$CLI" convert "$f" "$C/graphdef_text/$base.pbtxt" >/dev/null 2>&1 || true ;;
    *.pbtxt)
      [ "$sz" -le 1048576 ] && cp "$f" "$C/graphdef_text/$base"
      [ "$sz" -le 262144 ] && cp "$f" "$C/optimize/$base"
      [ "$sz" -le 262144 ] && "$CLI" convert "$f" "$C/graphdef_binary/$base.pb" >/dev/null 2>&1 || true ;;
  esac
done < <(find "${SRC[@]}" -type f \( -name '*.pb' -o -name '*.pbtxt' \) | sort)

# ---- run: small graphs, every unknown dimension made 2 (the target runs only fully known shapes)
for f in "$C"/graphdef_text/*; do
  [ "$(stat -c %s "$f")" -le 65536 ] || continue
  b=$(basename "$f")
  sed -e 's/size: -1$/size: 2/' -e 's/unknown_rank: true/dim { size: 2 }/' "$f" > "$C/run/$b.pbtxt"
  "$CLI" convert "$C/run/$b.pbtxt" "$C/run/$b.pb" >/dev/null 2>&1 || true
done
for f in "$HERE"/seeds/run/*.pbtxt; do
  cp "$f" "$C/run/"
  cp "$f" "$C/optimize/"
  "$CLI" convert "$f" "$C/run/$(basename "$f" .pbtxt).pb" >/dev/null 2>&1 || true
done

# ---- SavedModels: saved_model.pb SPLIT variables.index SPLIT the (single) data shard, up to 1 MiB
while IFS= read -r pb; do
  d=$(dirname "$pb")
  idx=$d/variables/variables.index
  dat=$d/variables/variables.data-00000-of-00001
  total=$(stat -c %s "$pb")
  [ -f "$idx" ] && total=$((total + $(stat -c %s "$idx")))
  [ -f "$dat" ] && total=$((total + $(stat -c %s "$dat")))
  [ "$total" -le 1048576 ] || continue
  o=$C/savedmodel/$(printf '%s' "$d" | md5sum | cut -c1-12)
  { cat "$pb"
    if [ -f "$idx" ]; then printf '%s' "$SPLIT"; cat "$idx"
      if [ -f "$dat" ]; then printf '%s' "$SPLIT"; cat "$dat"; fi
    fi; } > "$o"
done < <(find "${SRC[@]}" -type f -name saved_model.pb | sort)

# ---- variables indexes
while IFS= read -r f; do
  [ "$(stat -c %s "$f")" -le 262144 ] && put "$f" bundle_index
done < <(find "${SRC[@]}" -type f -name '*.index' | sort)

# ---- .npy
while IFS= read -r f; do
  [ "$(stat -c %s "$f")" -le 65536 ] && put "$f" npy
done < <(find "${SRC[@]}" -type f -name '*.npy' | sort)

# ---- dictionary texts and engine assets: hand-written and generated
cp "$HERE"/seeds/dict_text/* "$C/dict_text/"
python3 "$HERE/engine_seeds.py" "$C/engine_asset"

# ---- regex: each pattern, rewrite and text of TensorFlow's cases (tests/data/misc/regex_cases.tsv)
python3 - "$DATA/misc/regex_cases.tsv" "$C/regex" "$SPLIT" <<'PY'
import sys
src, out, split = sys.argv[1], sys.argv[2], sys.argv[3].encode()
seen = set()
for i, line in enumerate(open(src)):
    f = line.rstrip("\n").split("\t")
    h = lambda x: b"" if x == "-" else bytes.fromhex(x)
    key = (f[1], f[2], f[4])
    if key in seen:
        continue
    seen.add(key)
    with open("%s/case%04d" % (out, i), "wb") as o:
        o.write(h(f[1]) + split + h(f[2]) + split + h(f[4]))
PY

# ---- example: tf.train.Example bytes written here (features x: float, q and r: int64, w: bytes)
python3 - "$C/example" "$SPLIT" <<'PY'
import struct, sys
out, split = sys.argv[1], sys.argv[2].encode()
def varint(v):
    b = b""
    while True:
        c = v & 0x7f
        v >>= 7
        b += bytes([c | (0x80 if v else 0)])
        if not v:
            return b
def ld(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload
def feat(key, kind, values):
    if kind == 1:
        lst = b"".join(ld(1, v) for v in values)
    elif kind == 2:
        lst = ld(1, b"".join(struct.pack("<f", v) for v in values))
    else:
        lst = ld(1, b"".join(varint(v & (2**64 - 1)) for v in values))
    return ld(1, ld(1, key) + ld(2, ld(kind, lst)))
def example(*feats):
    return ld(1, b"".join(feats))
seeds = [
    [example(feat(b"x", 2, [1.5, -2]), feat(b"q", 3, [1, 2, 3, 4]), feat(b"w", 1, [b"a", b"bc"]), feat(b"r", 3, [7]))],
    [example(feat(b"q", 3, [5, 6])), example(feat(b"w", 1, [b""]), feat(b"r", 3, [-1, 2**40]))],
    [example(), example(feat(b"x", 2, [0, 1])), b""],
]
for i, s in enumerate(seeds):
    with open("%s/seed%d" % (out, i), "wb") as f:
        f.write(split.join(s))
PY

# ---- dictionaries: protobuf field keys, text-format field names, op names
ops=$(sed -n 's/^    {"\([A-Za-z0-9_>]*\)", gn__in_.*/\1/p' "$ROOT/src/opdef/op_table.inc" | sort -u)
{ cat "$HERE/dict/protobuf.dict"; printf '%s\n' "$ops" | sed 's/.*/"&"/'; } > "$OUT/graphdef_binary.dict"
{ cat "$HERE/dict/pbtxt.dict"; printf '%s\n' "$ops" | sed 's/.*/"&"/'; } > "$OUT/graphdef_text.dict"
cp "$OUT/graphdef_binary.dict" "$OUT/savedmodel.dict"
printf '"%s"\n' "$SPLIT" >> "$OUT/savedmodel.dict"
cp "$OUT/graphdef_binary.dict" "$OUT/optimize.dict"
cat "$HERE/dict/pbtxt.dict" >> "$OUT/optimize.dict"
cp "$OUT/optimize.dict" "$OUT/run.dict"
cp "$HERE/dict/protobuf.dict" "$OUT/bundle_index.dict"
cp "$HERE/dict/dict_text.dict" "$OUT/dict_text.dict"
cp "$HERE/dict/npy.dict" "$OUT/npy.dict"
cp "$HERE/dict/engine_asset.dict" "$OUT/engine_asset.dict"
cp "$HERE/dict/regex.dict" "$OUT/regex.dict"
{ cat "$HERE/dict/protobuf.dict"; printf '"%s"\n' "$SPLIT"; } > "$OUT/example.dict"
printf '"%s"\n' "$SPLIT" >> "$OUT/regex.dict"

for t in "$C"/*; do echo "seeds: $(basename "$t"): $(find "$t" -type f | wc -l) files"; done
