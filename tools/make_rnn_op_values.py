"""Prints TensorFlow's inputs and outputs for the small cases of the fused TF1
RNN cell kernels (LSTMBlockCell, BlockLSTM, BlockLSTMV2, GRUBlockCell) as C
initialisers; tests/kernels_rnn_test.c embeds them between its
"make_rnn_op_values.py" markers.

Run with a Python that has TensorFlow (2.21) and numpy:
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_rnn_op_values.py
The inputs are fixed (aranges, sines), so the output is the same on every run.
Sizes: batch 2, input 3, cell 4, 3 time steps. BlockLSTM's outputs i, f, o,
ci, co at the steps at or past seq_len_max are not written by TensorFlow's
kernel (cs and h are zeroed); they are printed as 0, which is what grapnel
writes there. Error cases print TensorFlow's message."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

raw = tf.raw_ops
B, I, C, T = 2, 3, 4, 3
OUTS = ["i", "cs", "f", "o", "ci", "co", "h"]


def inputs():
    f = np.float32
    x = (((np.arange(T * B * I) % 7) - 3) * 0.35).astype(f).reshape(T, B, I)
    cs0 = ((np.arange(B * C) - 3.5) * 0.45).astype(f).reshape(B, C)
    h0 = (((np.arange(B * C) % 5) - 2) * 0.2).astype(f).reshape(B, C)
    w = (np.sin(np.arange((I + C) * 4 * C) * 0.37) * 0.6).astype(f).reshape(I + C, 4 * C)
    wci = np.array([0.3, -0.2, 0.5, -0.4], f)
    wcf = np.array([-0.1, 0.25, 0.15, -0.35], f)
    wco = np.array([0.2, 0.45, -0.3, 0.1], f)
    b = (np.cos(np.arange(4 * C)) * 0.2).astype(f)
    w_ru = (np.sin(np.arange((I + C) * 2 * C) * 0.53) * 0.7).astype(f).reshape(I + C, 2 * C)
    w_c = (np.cos(np.arange((I + C) * C) * 0.29) * 0.6).astype(f).reshape(I + C, C)
    b_ru = (np.sin(np.arange(2 * C) * 1.3) * 0.3).astype(f)
    b_c = np.array([0.1, -0.15, 0.05, 0.2], f)
    return dict(x=x, cs0=cs0, h0=h0, w=w, wci=wci, wcf=wcf, wco=wco, b=b, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c)


def c_float(v):
    s = f"{float(v):.9g}"
    return s + ("f" if any(ch in s for ch in ".en") else ".0f")


def c_list(a):
    return ", ".join(c_float(v) for v in np.asarray(a, np.float32).ravel())


def arr(name, a):
    a = np.asarray(a)
    dims = "".join(f"[{d}]" for d in a.shape)
    print(f"static const float {name}{dims if a.ndim <= 1 else '[' + str(a.size) + ']'} = {{{c_list(a)}}};")


def outs7(name, res, slm=None):
    res = [np.array(r) for r in res]
    if slm is not None:
        for k in (0, 2, 3, 4, 5):
            res[k][slm:] = 0
    print(f"static const float {name}[7][{res[0].size}] = {{")
    for k, r in enumerate(res):
        print(f"    /* {OUTS[k]} */ {{{c_list(r)}}},")
    print("};")


def err(name, fn):
    try:
        fn()
        print(f"/* {name}: no error */")
    except tf.errors.OpError as e:
        msg = e.message.split("}} ")[-1].split(" [Op:")[0]
        print(f"/* {name}: {msg} */")


def main():
    v = inputs()
    for k in ("x", "cs0", "h0", "w", "wci", "wcf", "wco", "b", "w_ru", "w_c", "b_ru", "b_c"):
        arr("IN_" + k.upper(), v[k])

    def cell(peep, clip, fb):
        return raw.LSTMBlockCell(x=v["x"][0], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"], wci=v["wci"], wcf=v["wcf"],
                                 wco=v["wco"], b=v["b"], forget_bias=fb, cell_clip=clip, use_peephole=peep)

    print("/* LSTMBlockCell on x[0]: use_peephole false, cell_clip 0 (off), forget_bias 1 */")
    outs7("LSTM_CELL_PLAIN", cell(False, 0.0, 1.0))
    print("/* LSTMBlockCell on x[0]: use_peephole true, cell_clip 0.5, forget_bias 0.7 */")
    outs7("LSTM_CELL_PEEP_CLIP", cell(True, 0.5, 0.7))

    def block(v2, slm, peep, clip, fb=1.0):
        kw = dict(seq_len_max=np.int64(slm), x=v["x"], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"], wci=v["wci"],
                  wcf=v["wcf"], wco=v["wco"], b=v["b"], cell_clip=clip, use_peephole=peep)
        return raw.BlockLSTMV2(**kw) if v2 else raw.BlockLSTM(forget_bias=fb, **kw)

    print("/* BlockLSTM: seq_len_max 3, use_peephole true, cell_clip 0.5, forget_bias 1 */")
    outs7("BLOCK_PEEP_CLIP", block(False, 3, True, 0.5))
    print("/* BlockLSTM: seq_len_max 2, use_peephole false, cell_clip 0 (off), forget_bias 0.3 */")
    outs7("BLOCK_SHORT", block(False, 2, False, 0.0, 0.3), slm=2)
    print("/* BlockLSTMV2: seq_len_max 2, use_peephole true, cell_clip 0.5 */")
    outs7("BLOCKV2_PEEP_SHORT", block(True, 2, True, 0.5), slm=2)
    print("/* BlockLSTMV2: seq_len_max 3, use_peephole false, cell_clip 0 (off) */")
    outs7("BLOCKV2_PLAIN", block(True, 3, False, 0.0))

    print("/* GRUBlockCell on x[0], h_prev = h0 */")
    g = raw.GRUBlockCell(x=v["x"][0], h_prev=v["h0"], w_ru=v["w_ru"], w_c=v["w_c"], b_ru=v["b_ru"], b_c=v["b_c"])
    print(f"static const float GRU_OUT[4][{B * C}] = {{")
    for k, r in enumerate(g):
        print(f"    /* {'rucn'[k] if k < 3 else 'h'} */ {{{c_list(r)}}},")
    print("};")

    print("/* float16 BlockLSTM: seq_len_max 3, use_peephole true, cell_clip 0.5, forget_bias 1 (h) */")
    h16 = raw.BlockLSTM(seq_len_max=np.int64(3), x=v["x"].astype(np.float16), cs_prev=v["cs0"].astype(np.float16),
                        h_prev=v["h0"].astype(np.float16), w=v["w"].astype(np.float16),
                        wci=v["wci"].astype(np.float16), wcf=v["wcf"].astype(np.float16),
                        wco=v["wco"].astype(np.float16), b=v["b"].astype(np.float16), forget_bias=1.0,
                        cell_clip=0.5, use_peephole=True)
    arr("BLOCK_F16_H", np.asarray(h16[6], np.float32))

    # seq_len_max past timelen or negative: TensorFlow 2.21's CPU kernel aborts the process
    # (a CHECK in Tensor::Slice) before its range check, so it has no message
    err("BlockLSTM x rank 2", lambda: raw.BlockLSTM(
        seq_len_max=np.int64(1), x=v["x"][0], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"], wci=v["wci"],
        wcf=v["wcf"], wco=v["wco"], b=v["b"]))
    err("BlockLSTM wci size 3", lambda: raw.BlockLSTM(
        seq_len_max=np.int64(1), x=v["x"], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"], wci=v["wci"][:3],
        wcf=v["wcf"], wco=v["wco"], b=v["b"]))
    err("BlockLSTM w rows 6", lambda: raw.BlockLSTM(
        seq_len_max=np.int64(1), x=v["x"], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"][:6], wci=v["wci"],
        wcf=v["wcf"], wco=v["wco"], b=v["b"]))
    err("LSTMBlockCell h_prev batch 1", lambda: raw.LSTMBlockCell(
        x=v["x"][0], cs_prev=v["cs0"], h_prev=v["h0"][:1], w=v["w"], wci=v["wci"], wcf=v["wcf"], wco=v["wco"],
        b=v["b"]))
    err("LSTMBlockCell b size 12", lambda: raw.LSTMBlockCell(
        x=v["x"][0], cs_prev=v["cs0"], h_prev=v["h0"], w=v["w"], wci=v["wci"], wcf=v["wcf"], wco=v["wco"],
        b=v["b"][:12]))
    err("GRUBlockCell w_c cols 3", lambda: raw.GRUBlockCell(
        x=v["x"][0], h_prev=v["h0"], w_ru=v["w_ru"], w_c=v["w_c"][:, :3], b_ru=v["b_ru"], b_c=v["b_c"]))
    err("GRUBlockCell b_ru rank 2", lambda: raw.GRUBlockCell(
        x=v["x"][0], h_prev=v["h0"], w_ru=v["w_ru"], w_c=v["w_c"], b_ru=v["b_ru"].reshape(2, 4), b_c=v["b_c"]))


if __name__ == "__main__":
    main()
