"""End-to-end check of the CPU kernels added for inference graphs
(GuaranteeConst, Debug*Identity, CheckNumericsV2, TopK, ApproximateEqual,
ReverseSequence, ExtractImagePatches, MaxPoolWithArgmax, SpaceToBatch,
BatchToSpace, DynamicPartition, DynamicStitch, ParallelDynamicStitch,
FakeQuantWithMinMaxVarsPerChannel, StringToNumber, Lgamma, Digamma, Erfinv,
Ndtri, SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits,
the fused TF1 RNN cells LSTMBlockCell, BlockLSTM, BlockLSTMV2,
GRUBlockCell, the CTC decoders CTCGreedyDecoder, CTCBeamSearchDecoder,
and the string ops AsString, StringToHashBucket, StringToHashBucketStrong,
StringLower, StringUpper, StringStrip, StringSplitV2, and Dequantize): each op in a tiny
tf.compat.v1 GraphDef (written as .pb), run
by TensorFlow and by `grapnel run` on the same .npy inputs; the outputs must
be equal (floats within 1e-6, relative above 1, the rest exactly).

    TF_ENABLE_ONEDNN_OPTS=0 python tools/check_inference_ops_e2e.py [GRAPNEL [WORKDIR]]
GRAPNEL defaults to build/grapnel, WORKDIR to a fresh temporary directory.
Exits 1 when a case differs. TopK (v1) has no runnable CPU kernel in
TensorFlow 2.21 (its registration asks for an index_type attr the op lacks), so
its reference is TensorFlow's TopKV2 with the same k. The RNN cells' weights
are Consts, as in a frozen graph; float16 BlockLSTM(V2) and LSTMBlockCell are compared within 4e-3,
and one LSTMBlockCell of Consts only is first constant-folded by
`grapnel optimize` (the graph grapnel runs then holds no LSTMBlockCell)."""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
raw = tf.raw_ops
rng = np.random.default_rng(7)


def case(name, feeds, build, rewrite=None, reference=None, tol=1e-6, fold=None):
    """feeds: {placeholder name: array}; build(placeholders) -> list of output
    tensors; rewrite(graph_def) edits the GraphDef grapnel runs;
    reference(feeds) -> TensorFlow's outputs when TF cannot run the graph;
    tol: the float tolerance (relative above 1); fold: an op that
    `grapnel optimize` must fold away before the graph is run."""
    g = tf1.Graph()
    with g.as_default():
        ph = {k: tf1.placeholder(tf.as_dtype(v.dtype), v.shape, name=k) for k, v in feeds.items()}
        outs = build(ph)
    gd = g.as_graph_def()
    if reference is None:
        with tf1.Session(graph=g) as s:
            want = s.run(outs, {ph[k]: v for k, v in feeds.items()})
    else:
        want = reference(feeds)
    if rewrite:
        rewrite(gd)
    pb = os.path.join(WORK, name + ".pb")
    with open(pb, "wb") as f:
        f.write(gd.SerializeToString())
    if fold:
        opt = os.path.join(WORK, name + "_opt.pbtxt")
        r = subprocess.run([GRAPNEL, "optimize", pb, "-o", opt] + sum([["--fetch", t.name] for t in outs], []),
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: grapnel optimize: {r.stderr.strip()}")
            return False
        with open(opt) as f:
            if f"op: \"{fold}\"" in f.read():
                print(f"FAIL {name}: {fold} was not folded")
                return False
        pb = opt
    cmd = [GRAPNEL, "run", pb]
    for k, v in feeds.items():
        p = os.path.join(WORK, f"{name}_{k}.npy")
        np.save(p, v)
        cmd += ["--feed", f"{k}={p}"]
    got_files = []
    for i, t in enumerate(outs):
        p = os.path.join(WORK, f"{name}_out{i}.npy")
        got_files.append(p)
        cmd += ["--fetch", f"{t.name}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL {name}: grapnel run: {r.stderr.strip()}")
        return False
    ok = True
    for i, (w, p) in enumerate(zip(want, got_files)):
        got = np.load(p)
        w = np.asarray(w)
        if w.dtype == object:   # TensorFlow's strings are bytes objects, grapnel writes fixed-width bytes
            same = got.shape == w.shape and got.dtype.kind == "S" and got.ravel().tolist() == w.ravel().tolist()
            w = got if same else w
        same = got.shape == w.shape and got.dtype == w.dtype
        if same and w.dtype.kind == "f":
            lim = tol * np.maximum(np.abs(w.astype(np.float64)), 1.0)
            with np.errstate(invalid="ignore"):   # inf - inf
                same = bool(np.all((np.abs(got.astype(np.float64) - w) <= lim) | (np.isnan(got) & np.isnan(w))
                                   | (got == w)))
        elif same:
            same = bool(np.array_equal(got, w))
        if not same:
            print(f"FAIL {name} output {i}: grapnel {got.dtype}{list(got.shape)} vs TensorFlow {w.dtype}{list(w.shape)}")
            ok = False
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(outs)} output(s), {sum(np.asarray(w).size for w in want)} values")
    return ok


def topk_v1(gd):
    for n in gd.node:
        if n.op == "TopKV2":
            n.op = "TopK"
            del n.input[1]
            n.attr["k"].i = 3
            del n.attr["index_type"]


def main():
    x = rng.standard_normal((2, 5, 7, 3)).astype(np.float32)
    ties = rng.integers(0, 4, (3, 9)).astype(np.float32)
    ok = True
    for op in ["GuaranteeConst", "DebugIdentityV2", "DebugGradientIdentity"]:
        ok &= case(op, {"x": x}, lambda p, op=op: [getattr(raw, op)(input=p["x"]) * 2.0])
    for op in ["DebugIdentity", "DebugIdentityV3"]:
        ok &= case(op, {"x": x}, lambda p, op=op: [getattr(raw, op)(input=p["x"], tensor_name="x:0") * 2.0])
    ok &= case("CheckNumericsV2", {"x": x}, lambda p: [raw.CheckNumericsV2(tensor=p["x"], message="m") + 1.0])
    ok &= case("TopK", {"x": ties}, lambda p: list(raw.TopKV2(input=p["x"], k=3)), rewrite=topk_v1)
    y = (x + rng.uniform(-1e-3, 1e-3, x.shape)).astype(np.float32)
    ok &= case("ApproximateEqual", {"x": x, "y": y},
               lambda p: [raw.ApproximateEqual(x=p["x"], y=p["y"], tolerance=5e-4)])
    seq = rng.standard_normal((4, 6, 3)).astype(np.float32)
    lens = np.array([6, 0, 3, 1], np.int64)
    ok &= case("ReverseSequence", {"x": seq, "lens": lens},
               lambda p: [raw.ReverseSequence(input=p["x"], seq_lengths=p["lens"], seq_dim=1, batch_dim=0)])
    ok &= case("ReverseSequence_b1s0", {"x": seq, "lens": np.array([4, 2, 0, 4, 1, 3], np.int32)},
               lambda p: [raw.ReverseSequence(input=p["x"], seq_lengths=p["lens"], seq_dim=0, batch_dim=1)])
    for pad in ["SAME", "VALID"]:
        ok &= case("ExtractImagePatches_" + pad, {"x": x},
                   lambda p, pad=pad: [raw.ExtractImagePatches(images=p["x"], ksizes=[1, 3, 2, 1], strides=[1, 2, 3, 1],
                                                               rates=[1, 2, 1, 1], padding=pad)])
        for incl in [False, True]:
            ok &= case(f"MaxPoolWithArgmax_{pad}_{incl}", {"x": np.round(x * 2)},
                       lambda p, pad=pad, incl=incl: list(raw.MaxPoolWithArgmax(
                           input=p["x"], ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding=pad,
                           include_batch_in_index=incl)))
    sx = rng.standard_normal((2, 4, 6, 3)).astype(np.float32)
    ok &= case("SpaceToBatch", {"x": sx, "pads": np.array([[2, 0], [1, 1]], np.int32)},
               lambda p: [raw.SpaceToBatch(input=p["x"], paddings=p["pads"], block_size=2)])
    ok &= case("BatchToSpace", {"x": np.repeat(sx, 2, 0), "crops": np.array([[1, 0], [0, 3]], np.int64)},
               lambda p: [raw.BatchToSpace(input=p["x"], crops=p["crops"], block_size=2)])
    ok &= batch2()
    ok &= rnn_cells()
    ok &= ctc()
    ok &= strings()
    ok &= dequantize()
    print("all equal" if ok else "DIFFERENCES")
    return 0 if ok else 1


def batch2():
    ok = True
    # TF1 partitioned embedding lookup: ids split by id % 3, gathered, stitched back
    ids = rng.integers(0, 30, (5, 4)).astype(np.int32)
    table = rng.standard_normal((30, 6)).astype(np.float32)

    def embed(p, stitch):
        flat = tf.reshape(p["ids"], [-1])
        part = tf.math.floormod(flat, 3)
        pos = raw.DynamicPartition(data=tf.range(tf.size(flat)), partitions=part, num_partitions=3)
        vals = raw.DynamicPartition(data=flat, partitions=part, num_partitions=3)
        rows = [tf.gather(p["table"], v) for v in vals]
        return [stitch(indices=pos, data=rows) * 2.0]

    ok &= case("DynamicPartition_DynamicStitch", {"ids": ids, "table": table},
               lambda p: embed(p, raw.DynamicStitch))
    ok &= case("ParallelDynamicStitch", {"ids": ids, "table": table}, lambda p: embed(p, raw.ParallelDynamicStitch))
    words = np.array([b"a", b"bc", b"", b"def", b"g", b"hi"])
    ok &= case("DynamicPartition_strings", {"w": words, "p": np.array([1, 0, 1, 2, 0, 1], np.int32)},
               lambda p: list(raw.DynamicPartition(data=p["w"], partitions=p["p"], num_partitions=3)))
    x = (rng.standard_normal((3, 4, 5)) * 3).astype(np.float32)
    mn = np.array([-1.0, -2.5, 0.3, -6.0, 0.0], np.float32)
    mx = np.array([1.0, 0.7, 2.9, 6.0, 0.0], np.float32)
    for bits, narrow in [(8, False), (4, True)]:
        ok &= case(f"FakeQuantWithMinMaxVarsPerChannel_{bits}_{narrow}", {"x": x, "mn": mn, "mx": mx},
                   lambda p, bits=bits, narrow=narrow: [raw.FakeQuantWithMinMaxVarsPerChannel(
                       inputs=p["x"], min=p["mn"], max=p["mx"], num_bits=bits, narrow_range=narrow)])
    nums = np.array([b" 1.5", b"-2", b"1e3", b"0x10", b"+7", b"inf", b"-0", b"3.25 "])
    for t in [tf.float32, tf.float64]:
        ok &= case(f"StringToNumber_{t.name}", {"s": nums}, lambda p, t=t: [raw.StringToNumber(string_tensor=p["s"],
                                                                                                out_type=t)])
    ints = np.array([b" 12", b"-2147483648", b"+7", b"0042 "])
    for t in [tf.int32, tf.int64]:
        ok &= case(f"StringToNumber_{t.name}", {"s": ints}, lambda p, t=t: [raw.StringToNumber(string_tensor=p["s"],
                                                                                                out_type=t)])
    wide = np.concatenate([np.linspace(-20, 20, 801), [-3.0, 0.0, np.inf, -np.inf]])
    unit = np.concatenate([np.linspace(-1, 1, 801), [1 - 1e-6, -1 + 1e-6, 1.5]])
    prob = np.concatenate([np.linspace(0, 1, 801), np.logspace(-30, -1, 100), [1 - 1e-6, -0.1]])
    for dt in [np.float32, np.float64]:
        for op, v in [("Lgamma", wide), ("Digamma", wide), ("Erfinv", unit), ("Ndtri", prob)]:
            ok &= case(f"{op}_{dt.__name__}", {"x": v.astype(dt)}, lambda p, op=op: [getattr(raw, op)(x=p["x"])])
    lg = (rng.standard_normal((6, 10)) * 4).astype(np.float32)
    lb = rng.dirichlet(np.ones(10), 6).astype(np.float32)
    ok &= case("SoftmaxCrossEntropyWithLogits", {"lg": lg, "lb": lb},
               lambda p: list(raw.SoftmaxCrossEntropyWithLogits(features=p["lg"], labels=p["lb"])))
    ok &= case("SoftmaxCrossEntropyWithLogits_bcast", {"lg": lg[:1].astype(np.float64), "lb": lb.astype(np.float64)},
               lambda p: list(raw.SoftmaxCrossEntropyWithLogits(features=p["lg"], labels=p["lb"])))
    for it in [np.int32, np.int64]:
        ok &= case(f"SparseSoftmaxCrossEntropyWithLogits_{it.__name__}",
                   {"lg": lg, "lb": rng.integers(0, 10, 6).astype(it)},
                   lambda p: list(raw.SparseSoftmaxCrossEntropyWithLogits(features=p["lg"], labels=p["lb"])))
    return ok


def rnn_cells():
    """LSTMBlockCell, BlockLSTM(V2), GRUBlockCell with Const weights (batch 3,
    input 5, cell 8, 6 steps): peephole both ways, cell_clip on and off,
    seq_len_max shorter than the sequence; the steps past seq_len_max are
    fetched only from cs and h (TensorFlow leaves the other outputs unwritten
    there)."""
    ok = True
    tb, bt, ni, nc = 6, 3, 5, 8
    xs = rng.standard_normal((tb, bt, ni)).astype(np.float32)
    cs0 = rng.standard_normal((bt, nc)).astype(np.float32)
    h0 = (rng.standard_normal((bt, nc)) * 0.5).astype(np.float32)
    w = (rng.standard_normal((ni + nc, 4 * nc)) * 0.4).astype(np.float32)
    peep = [(rng.standard_normal(nc) * 0.3).astype(np.float32) for _ in range(3)]
    b = (rng.standard_normal(4 * nc) * 0.2).astype(np.float32)

    def lstm_args(p, dt=np.float32):
        cst = lambda a: tf1.constant(a.astype(dt))
        return dict(cs_prev=p["cs"], h_prev=p["h"], w=cst(w), wci=cst(peep[0]), wcf=cst(peep[1]), wco=cst(peep[2]),
                    b=cst(b))

    for peephole, clip in [(False, 0.0), (True, 1.0), (False, 3.0)]:
        ok &= case(f"LSTMBlockCell_{peephole}_{clip}", {"x": xs[0], "cs": cs0, "h": h0},
                   lambda p, peephole=peephole, clip=clip: list(raw.LSTMBlockCell(
                       x=p["x"], forget_bias=0.8, cell_clip=clip, use_peephole=peephole, **lstm_args(p))))
        for v2 in [False, True]:
            for slm in [tb, 4]:
                def build(p, peephole=peephole, clip=clip, v2=v2, slm=slm):
                    kw = dict(seq_len_max=tf1.constant(np.int64(slm)), x=p["x"], cell_clip=clip,
                              use_peephole=peephole, **lstm_args(p))
                    o = raw.BlockLSTMV2(**kw) if v2 else raw.BlockLSTM(forget_bias=0.6, **kw)
                    return [o.cs, o.h] + [t[:slm] for t in (o.i, o.f, o.o, o.ci, o.co)]
                ok &= case(f"BlockLSTM{'V2' if v2 else ''}_{peephole}_{clip}_{slm}", {"x": xs, "cs": cs0, "h": h0},
                           build)
    def half(p):
        o = raw.BlockLSTM(seq_len_max=tf1.constant(np.int64(5)), x=p["x"], forget_bias=1.0, cell_clip=2.0,
                          use_peephole=True, **lstm_args(p, np.float16))
        o2 = raw.BlockLSTMV2(seq_len_max=tf1.constant(np.int64(6)), x=p["x"], **lstm_args(p, np.float16))
        o3 = raw.LSTMBlockCell(x=p["x"][0], forget_bias=0.5, cell_clip=1.0, use_peephole=True,
                               **lstm_args(p, np.float16))
        return [o.cs, o.h, o2.cs, o2.h, o3.cs, o3.h]
    ok &= case("BlockLSTM_half", {"x": xs.astype(np.float16), "cs": cs0.astype(np.float16),
                                  "h": h0.astype(np.float16)}, half, tol=4e-3)
    ok &= case("LSTMBlockCell_folded", {"z": np.zeros((bt, nc), np.float32)},
               lambda p: [raw.LSTMBlockCell(x=tf1.constant(xs[0]), cs_prev=tf1.constant(cs0), h_prev=tf1.constant(h0),
                                            w=tf1.constant(w), wci=tf1.constant(peep[0]), wcf=tf1.constant(peep[1]),
                                            wco=tf1.constant(peep[2]), b=tf1.constant(b), use_peephole=True,
                                            cell_clip=1.0).h + p["z"]],
               fold="LSTMBlockCell")
    w_ru = (rng.standard_normal((ni + nc, 2 * nc)) * 0.4).astype(np.float32)
    w_c = (rng.standard_normal((ni + nc, nc)) * 0.4).astype(np.float32)
    b_ru = (rng.standard_normal(2 * nc) * 0.2).astype(np.float32)
    b_c = (rng.standard_normal(nc) * 0.2).astype(np.float32)
    ok &= case("GRUBlockCell", {"x": xs[0], "h": h0},
               lambda p: list(raw.GRUBlockCell(x=p["x"], h_prev=p["h"], w_ru=tf1.constant(w_ru), w_c=tf1.constant(w_c),
                                               b_ru=tf1.constant(b_ru), b_c=tf1.constant(b_c))))
    return ok


def ctc():
    """The CTC decoders: an OCR-sized case (37 classes, random logits), and
    many short decodes of small integer logits (ties everywhere) for every
    beam width / top_paths / merge_repeated combination, the widths past 16
    too (where TensorFlow's top-n container sorts with introsort)."""
    ok = True
    ocr = rng.standard_normal((24, 8, 37)) * 3
    ocr_len = np.array([24, 20, 1, 0, 24, 7, 13, 24], np.int32)
    ties = rng.integers(0, 3, (7, 64, 5)).astype(np.float64)
    ties_len = rng.integers(1, 8, 64).astype(np.int32)
    for dt in [np.float32, np.float64]:
        for merge in [False, True]:
            for blank in [-1, 0, 17]:
                ok &= case(f"CTCGreedyDecoder_{dt.__name__}_{merge}_{blank}", {"x": ocr.astype(dt), "n": ocr_len},
                           lambda p, merge=merge, blank=blank: list(raw.CTCGreedyDecoder(
                               inputs=p["x"], sequence_length=p["n"], merge_repeated=merge, blank_index=blank)))
            ok &= case(f"CTCGreedyDecoder_ties_{dt.__name__}_{merge}", {"x": ties.astype(dt), "n": ties_len},
                       lambda p, merge=merge: list(raw.CTCGreedyDecoder(
                           inputs=p["x"], sequence_length=p["n"], merge_repeated=merge)))
            for width, top in [(1, 1), (10, 3), (100, 1)]:
                n = np.maximum(ocr_len, 1) if top > 1 else ocr_len
                ok &= case(f"CTCBeamSearchDecoder_{dt.__name__}_{merge}_{width}_{top}", {"x": ocr.astype(dt), "n": n},
                           lambda p, merge=merge, width=width, top=top: flat(raw.CTCBeamSearchDecoder(
                               inputs=p["x"], sequence_length=p["n"], beam_width=width, top_paths=top,
                               merge_repeated=merge)))
            for width, top in [(2, 2), (3, 1), (4, 4), (5, 5), (17, 5), (40, 2)]:
                ok &= case(f"CTCBeamSearchDecoder_ties_{dt.__name__}_{merge}_{width}_{top}",
                           {"x": ties.astype(dt), "n": ties_len},
                           lambda p, merge=merge, width=width, top=top: flat(raw.CTCBeamSearchDecoder(
                               inputs=p["x"], sequence_length=p["n"], beam_width=width, top_paths=top,
                               merge_repeated=merge)))
    return ok


def flat(r):
    return list(r.decoded_indices) + list(r.decoded_values) + list(r.decoded_shape) + [r.log_probability]


def strings():
    ok = True
    f = np.array([1.5, -2.25, np.inf, np.nan, -np.inf, 1e20, 1e-7, 0.0, 123.456, -0.0], np.float32)
    for kw in [dict(), dict(shortest=True), dict(scientific=True, precision=3), dict(precision=2, width=12, fill="0"),
               dict(width=9, fill="-", precision=1), dict(width=12, fill="+"), dict(width=8, fill="#", precision=0),
               dict(width=7, fill=" ", shortest=True)]:
        name = "AsString_float32_" + "_".join(f"{k}{v}" for k, v in kw.items())
        ok &= case(name, {"x": f}, lambda p, kw=kw: [raw.AsString(input=p["x"], **kw)])
    ok &= case("AsString_float64", {"x": f.astype(np.float64) / 3}, lambda p: [raw.AsString(input=p["x"], precision=12)])
    ints = np.array([-42, 0, 42, 127, -128], np.int64)
    for dt in [np.int8, np.int32, np.int64, np.uint8, np.uint16]:
        ok &= case(f"AsString_{dt.__name__}", {"x": ints.astype(dt)},
                   lambda p: [raw.AsString(input=p["x"]), raw.AsString(input=p["x"], width=6, fill="0")])
    ok &= case("AsString_bool", {"x": np.array([True, False])}, lambda p: [raw.AsString(input=p["x"])])
    words = np.array([b"", b"a", b"Hello World", b" feature_42 ", b"\xc3\xa9t\xc3\xa9", b"x" * 40, b"\tTab\n"])
    for nb in [1, 7, 1000, 2**62]:
        ok &= case(f"StringToHashBucket_{nb}", {"w": words},
                   lambda p, nb=nb: [raw.StringToHashBucket(string_tensor=p["w"], num_buckets=nb)])
        ok &= case(f"StringToHashBucketStrong_{nb}", {"w": words},
                   lambda p, nb=nb: [raw.StringToHashBucketStrong(input=p["w"], num_buckets=nb, key=[7, -3])])
    ok &= case("StringLower_Upper_Strip", {"w": words},
               lambda p: [raw.StringLower(input=p["w"]), raw.StringUpper(input=p["w"]), raw.StringStrip(input=p["w"])])
    ascii_words = np.array([b"MiXeD Case 123", b"", b"ALL_CAPS"])
    ok &= case("StringLower_Upper_utf8", {"w": ascii_words},
               lambda p: [raw.StringLower(input=p["w"], encoding="utf-8"),
                          raw.StringUpper(input=p["w"], encoding="utf-8")])
    # Unicode case mapping: random text over many scripts (final sigma contexts included) and ill-formed bytes
    pools = [range(0x20, 0x7f), range(0xa0, 0x250), range(0x370, 0x400), range(0x400, 0x530), range(0x531, 0x590),
             range(0x1e00, 0x2000), range(0x2c00, 0x2d30), range(0xa640, 0xa7ff), range(0xff21, 0xff5b),
             range(0x10400, 0x10450), range(0x1e900, 0x1e944), [0x3a3, 0x3a3, 0x3a3, 0x27, 0x301, 0x345, 0xad, 0x20]]
    texts = []
    for k in range(400):
        cps = [int(rng.choice(pools[rng.integers(len(pools))])) for _ in range(rng.integers(0, 12))]
        b = "".join(chr(c) for c in cps).encode("utf-8")
        if k % 5 == 0:   # ill-formed bytes spliced in
            cut = int(rng.integers(0, len(b) + 1))
            b = b[:cut] + bytes(rng.integers(0x80, 0x100, int(rng.integers(1, 4))).tolist()) + b[cut:]
        if k % 37 == 0:
            b = b + b"\x00tail"
        texts.append(b)
    ok &= case("StringLower_Upper_unicode", {"w": np.array(texts)},
               lambda p: [raw.StringLower(input=p["w"], encoding="utf-8"),
                          raw.StringUpper(input=p["w"], encoding="utf-8")])
    lines = np.array([b"pigs on the wing", b"  4  5    6  ", b"", b"a,b,,c,", b",lead", b"trail,", b"1<>2<>3", b"   ",
                      b"one\ttwo\nthree"])
    for sep in [b"", b",", b"<>", b" "]:
        for maxsplit in [-1, 0, 1, 2]:
            ok &= case(f"StringSplitV2_{sep.hex() or 'ws'}_{maxsplit}", {"s": lines},
                       lambda p, sep=sep, maxsplit=maxsplit: list(raw.StringSplitV2(input=p["s"], sep=sep,
                                                                                    maxsplit=maxsplit)))

    # a feature-column style pipeline: clean, tokenize, hash the tokens
    def pipeline(p):
        sp = raw.StringSplitV2(input=raw.StringLower(input=raw.StringStrip(input=p["s"])), sep="", maxsplit=-1)
        return [sp.indices, raw.StringToHashBucketStrong(input=sp.values, num_buckets=100, key=[1, 2]),
                raw.StringToHashBucket(string_tensor=raw.AsString(input=p["n"]), num_buckets=50), sp.shape]

    ok &= case("string_pipeline", {"s": np.array([b"  The Quick\tBrown  ", b"FOX", b""]),
                                   "n": np.array([3, -1, 1000000], np.int64)}, pipeline)
    return ok


def dequantize():
    # quantized tensors cannot be fed from .npy: they are Consts of the graph, the ranges are fed
    ok = True
    for tname, lo_t, hi_t in [("qint8", -128, 128), ("quint8", 0, 256), ("qint16", -32768, 32768),
                              ("quint16", 0, 65536), ("qint32", -2**31, 2**31)]:
        vals = rng.integers(lo_t, hi_t, (3, 4, 5), dtype=np.int64)
        for mode in ["MIN_COMBINED", "MIN_FIRST", "SCALED"]:
            for narrow in ([False, True] if mode == "SCALED" else [False]):
                ok &= case(f"Dequantize_{tname}_{mode}_{narrow}",
                           {"mn": np.array(-2.5, np.float32), "mx": np.array(1.75, np.float32)},
                           lambda p, tname=tname, vals=vals, mode=mode, narrow=narrow: [raw.Dequantize(
                               input=tf.constant(vals, getattr(tf, tname)), min_range=p["mn"], max_range=p["mx"],
                               mode=mode, narrow_range=narrow)])
        for axis in [0, 2]:
            n = vals.shape[axis]
            ok &= case(f"Dequantize_{tname}_axis{axis}",
                       {"mn": -rng.uniform(0.1, 3, n).astype(np.float32), "mx": rng.uniform(0.1, 3, n).astype(np.float32)},
                       lambda p, tname=tname, vals=vals, axis=axis: [raw.Dequantize(
                           input=tf.constant(vals, getattr(tf, tname)), min_range=p["mn"], max_range=p["mx"],
                           mode="SCALED", axis=axis),
                           raw.Dequantize(input=tf.constant(vals, getattr(tf, tname)), min_range=p["mn"],
                                          max_range=p["mx"], mode="MIN_COMBINED", axis=axis)])
    ok &= case("Dequantize_bfloat16", {"mn": np.array(-1.0, np.float32), "mx": np.array(3.0, np.float32)},
               lambda p: [tf.cast(raw.Dequantize(input=tf.constant(np.arange(-128, 128).reshape(16, 16), tf.qint8),
                                                 min_range=p["mn"], max_range=p["mx"], dtype=tf.bfloat16),
                                  tf.float32)])
    return ok


if __name__ == "__main__":
    GRAPNEL = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/grapnel")
    WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="grapnel_e2e_")
    os.makedirs(WORK, exist_ok=True)
    sys.exit(main())
