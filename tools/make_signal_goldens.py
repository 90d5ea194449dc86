#!/usr/bin/env python3
"""Golden data for tests/kernels_signal_test.c: small deterministic inputs and
TensorFlow's outputs for the FFT ops and the audio front end.

Run with TensorFlow installed:
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_signal_goldens.py [OUT_DIR]
OUT_DIR defaults to tests/data/signal next to this script's repository.

FFT cases: <case>_x.npy (input) and <case>_y.npy (TensorFlow's output),
complex ones as float32/float64 with a trailing (re, im) dim of 2; the
fft_length of each case is listed in the C test's table. Shorter inputs are
zero-padded through tf.signal's wrappers (the raw ops crop only).
Audio: short.wav (stereo, 8 kHz), its spectrograms and MFCCs; kws.wav (mono,
16 kHz, one second) with the Mfcc and labels_softmax outputs of the ARM
DS-CNN keyword-spotting graph from the corpus (when the corpus is present).
"""
import os
import struct
import sys

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "signal")
CORPUS = os.path.join(HERE, "..", "..", "shared", "corpus", "ARM-software__ML-KWS-for-MCU")
rng = np.random.RandomState(20261130)


def save(name, a):
    """Complex arrays are stored as their real dtype with a trailing dim of 2
    (re, im): grapnel's .npy reader has no complex types."""
    a = np.ascontiguousarray(a)
    if np.iscomplexobj(a):
        a = a.view(a.real.dtype).reshape(a.shape + (2,))
    np.save(os.path.join(OUT, name + ".npy"), a)


def cplx(shape, dt):
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dt)


def fft_case(name, x, fn):
    save(name + "_x", x)
    save(name + "_y", fn(tf.constant(x)).numpy())


def wav_bytes(samples, rate):
    """16-bit PCM RIFF file; samples int16 [frames, channels]."""
    frames, ch = samples.shape
    data = samples.astype("<i2").tobytes()
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, ch, rate, rate * ch * 2, ch * 2, 16)
    body = b"WAVE" + fmt + struct.pack("<4sI", b"data", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def tone(frames, ch, rate):
    t = np.arange(frames) / rate
    out = np.zeros((frames, ch))
    for c in range(ch):
        f0 = 440.0 * (c + 1)
        out[:, c] = 0.4 * np.sin(2 * np.pi * f0 * t) + 0.2 * np.sin(2 * np.pi * 3.1 * f0 * t)
        out[:, c] += 0.05 * rng.uniform(-1, 1, frames)
    q = np.round(out * 32767).astype(np.int16)
    q[-1, :] = 1000   # a non-zero last byte, so the bytes survive a |S .npy round trip
    return q


def main():
    os.makedirs(OUT, exist_ok=True)
    s = tf.signal
    f32, f64 = np.float32, np.float64
    fft_case("rfft_f32_12", rng.uniform(-1, 1, (3, 12)).astype(f32), lambda x: s.rfft(x, [12]))
    fft_case("rfft_f32_pad", rng.uniform(-1, 1, (2, 10)).astype(f32), lambda x: s.rfft(x, [16]))
    fft_case("rfft_f32_crop", rng.uniform(-1, 1, (2, 20)).astype(f32), lambda x: s.rfft(x, [15]))
    fft_case("rfft_f64_100", rng.uniform(-1, 1, (2, 100)).astype(f64), lambda x: s.rfft(x, [100]))
    fft_case("irfft_f32_16", cplx((2, 9), np.complex64), lambda x: s.irfft(x, [16]))
    fft_case("irfft_f32_odd", cplx((2, 5), np.complex64), lambda x: s.irfft(x, [9]))
    fft_case("irfft_f64_crop", cplx((2, 12), np.complex128), lambda x: s.irfft(x, [10]))
    fft_case("irfft_f32_pad", cplx((2, 3), np.complex64), lambda x: s.irfft(x, [12]))
    fft_case("fft_c64_24", cplx((2, 24), np.complex64), s.fft)
    fft_case("fft_c64_256", cplx((1, 256), np.complex64), s.fft)
    fft_case("ifft_c128_97", cplx((2, 97), np.complex128), s.ifft)
    fft_case("ifft_c64_1000", cplx((1, 1000), np.complex64), s.ifft)
    fft_case("fft2d_c64", cplx((2, 4, 6), np.complex64), s.fft2d)
    fft_case("ifft3d_c128", cplx((2, 3, 4, 5), np.complex128), s.ifft3d)
    fft_case("rfft2d_f32", rng.uniform(-1, 1, (2, 6, 8)).astype(f32), lambda x: s.rfft2d(x, [6, 8]))
    fft_case("rfft2d_f32_padcrop", rng.uniform(-1, 1, (2, 5, 12)).astype(f32), lambda x: s.rfft2d(x, [6, 10]))
    fft_case("irfft2d_f32", cplx((2, 6, 5), np.complex64), lambda x: s.irfft2d(x, [6, 8]))

    # audio front end on a short stereo clip
    short = wav_bytes(tone(1000, 2, 8000), 8000)
    with open(os.path.join(OUT, "short.wav"), "wb") as f:
        f.write(short)
    audio = tf.raw_ops.DecodeWav(contents=short)
    spec_a = tf.raw_ops.AudioSpectrogram(input=audio.audio, window_size=256, stride=128, magnitude_squared=True)
    spec_b = tf.raw_ops.AudioSpectrogram(input=audio.audio, window_size=200, stride=75, magnitude_squared=False)
    save("spec_a", spec_a.numpy())
    save("spec_b", spec_b.numpy())
    save("mfcc_a", tf.raw_ops.Mfcc(spectrogram=spec_a, sample_rate=audio.sample_rate).numpy())
    save("mfcc_b", tf.raw_ops.Mfcc(spectrogram=spec_a, sample_rate=audio.sample_rate, upper_frequency_limit=3000.0,
                                   lower_frequency_limit=100.0, filterbank_channel_count=20,
                                   dct_coefficient_count=12).numpy())
    save("mfcc_c", tf.raw_ops.Mfcc(spectrogram=spec_a, sample_rate=audio.sample_rate,
                                   upper_frequency_limit=8000.0).numpy())

    # one second at 16 kHz through the DS-CNN keyword-spotting graph
    kws = wav_bytes(tone(16000, 1, 16000), 16000)
    with open(os.path.join(OUT, "kws.wav"), "wb") as f:
        f.write(kws)
    pb = os.path.join(CORPUS, "Pretrained_models__DS_CNN__DS_CNN_S.pb")
    if os.path.exists(pb):
        gd = tf.compat.v1.GraphDef()
        with open(pb, "rb") as f:
            gd.ParseFromString(f.read())
        with tf.Graph().as_default() as g:
            tf.import_graph_def(gd, name="")
            with tf.compat.v1.Session(graph=g) as sess:
                mf, sm = sess.run(["Mfcc:0", "labels_softmax:0"], {"wav_data:0": kws})
        save("kws_mfcc", mf)
        save("kws_softmax", sm)


if __name__ == "__main__":
    main()
