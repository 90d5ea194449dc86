#!/usr/bin/env bash
# Runs grapnel over the model zoo of tools/model_zoo.py, one line per model
# and step:
#   run       the frozen graph on the CPU backend against TensorFlow's output
#   optimize  the SavedModel frozen and optimized (default options), --verify
#   run-tf    the frozen graph's output against TensorFlow's
#   opt-tf    the optimized graph against TensorFlow's output
#   amp       optimized for gpu:sm_90 with auto_mixed_precision, against TF
#   seg-fp32  engine ops (segment --backend cpu) verified against the graph
#   seg-int8  INT8 engines calibrated on the input, against the graph
#   save      the optimized graph written as a SavedModel and read back
#
#   tools/zoo_check.sh ZOO BUILD        (BUILD: a build folder with grapnel)
set -uo pipefail
zoo="$1" build="$2"
G="$build/grapnel"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
step() {   # NAME STEP TOL CMD... : runs CMD, prints its last line and the verdict
  local name="$1" what="$2"; shift 2
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  [ $rc = 0 ] || fails=$((fails + 1))
  printf '%-20s %-9s %s  %s\n' "$name" "$what" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(echo "$out" | tail -1 | cut -c1-150)"
  [ $rc = 0 ] || echo "$out" | tail -4 | sed 's/^/      /' | cut -c1-200
}
cmp_tf() {   # OUT.npy REF.npy [TOL]: relative L2 below TOL (1e-4) and the same shape
  python3 - "$1" "$2" "${3:-1e-4}" <<'EOF'
import ast, struct, sys
def load(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    n = 1
    for s in h["shape"]:
        n *= s
    return struct.unpack("<%df" % n, b[10 + hl:10 + hl + 4 * n]), h["shape"]
(a, sa), (r, sr) = load(sys.argv[1]), load(sys.argv[2])
err = sum((x - y) ** 2 for x, y in zip(a, r)) ** 0.5 / (sum(y * y for y in r) ** 0.5 or 1)
print("grapnel vs TensorFlow: shape %s rel L2 %.2e" % (sa, err))
sys.exit(0 if sa == sr and err < float(sys.argv[3]) else 1)
EOF
}
# the first input and output `grapnel inspect` lists
io_names() {   # GRAPH -> "FEED FETCH"
  "$G" inspect "$1" 2>/dev/null | awk '/^inputs/{i=1;next} /^outputs/{o=1;i=0;next} /^[a-z]/{i=0;o=0}
    i&&!fi{fi=$1} o&&!fo{fo=$1} END{print fi, fo}'
}
while read -r name feed fetch; do
  d="$zoo/$name"
  case "$feed$fetch" in *,*)   # several feeds / fetches: the decoder models, checked by tests/decoder_test.c
    printf '%-20s %-9s %s\n' "$name" all "skipped (several inputs: tests/decoder_test.c, tools/tf_oracle.py)"
    continue ;;
  esac
  tol=1e-4
  case "$name" in *f16*) tol=2e-3 ;; esac   # float16 inside: TensorFlow's and our roundings differ
  f="${feed%:0}" x="${fetch%:0}"
  step "$name" run "$G" verify "$d/frozen.pb" "$d/frozen.pb" --feed "$f=$d/in0.npy" --fetch "$x" --tol "$tol"
  "$G" run "$d/frozen.pb" --feed "$f=$d/in0.npy" --fetch "$x=$tmp/$name.out.npy" > /dev/null 2>&1
  step "$name" run-tf cmp_tf "$tmp/$name.out.npy" "$d/out0.npy" "$tol"
  step "$name" optimize "$G" optimize "$d/saved_model" -o "$tmp/$name.opt.pb" --verify
  read -r of ox <<< "$(io_names "$tmp/$name.opt.pb")"
  "$G" run "$tmp/$name.opt.pb" --feed "$of=$d/in0.npy" --fetch "$ox:0=$tmp/$name.opt.out.npy" > /dev/null 2>&1
  step "$name" opt-tf cmp_tf "$tmp/$name.opt.out.npy" "$d/out0.npy" "$tol"
  step "$name" amp "$G" optimize "$d/frozen.pb" -o "$tmp/$name.amp.pb" --feed "$f" --fetch "$x" --target gpu:sm_90 \
       --options "{'auto_mixed_precision': True}"
  [ -e "$tmp/$name.amp.pb" ] && step "$name" amp-cpu "$G" verify "$d/frozen.pb" "$tmp/$name.amp.pb" \
       --feed "$f=$d/in0.npy" --fetch "$x" --tol 5e-2
  step "$name" seg-fp32 "$G" segment "$d/frozen.pb" -o "$tmp/$name.seg.pb" --backend cpu --feed "$f" --fetch "$x"
  [ -e "$tmp/$name.seg.pb" ] && step "$name" seg-ver "$G" verify "$d/frozen.pb" "$tmp/$name.seg.pb" \
       --feed "$f=$d/in0.npy" --fetch "$x" --tol 1e-5
  step "$name" seg-int8 "$G" segment "$d/frozen.pb" -o "$tmp/$name.int8.pb" --backend cpu --feed "$f" --fetch "$x" \
       --params "{'precision_mode': 'INT8'}" --calibrate "$d/in0.npy"
  [ -e "$tmp/$name.int8.pb" ] && step "$name" int8-ver "$G" verify "$d/frozen.pb" "$tmp/$name.int8.pb" \
       --feed "$f=$d/in0.npy" --fetch "$x" --tol 0.2
  step "$name" save "$G" save "$tmp/$name.opt.pb" "$tmp/$name.sm" --feed "$of" --fetch "$ox"
  [ -d "$tmp/$name.sm" ] && step "$name" save-ver "$G" verify "$tmp/$name.opt.pb" "$tmp/$name.sm" \
       --feed "$of=$d/in0.npy" --fetch "$ox"
done < "$zoo/zoo.txt"
echo "zoo_check: $fails failed step(s)"
[ $fails = 0 ]
