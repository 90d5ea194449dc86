#!/usr/bin/env python3
"""PyTorch reference figures for the GPU benchmark (scripts/gpu-check.sh).

Same GPU, same run as our figures: float16 under torch.inference_mode,
  * ResNet-50 (torchvision's when it is installed, else the same network
    written here in plain torch), contiguous and channels_last;
  * torch.nn.TransformerEncoder, BERT-base sized (12 layers, d_model 768,
    12 heads, FFN 3072, GELU, batch_first, post-norm, eval: its fast path),
    on [batch, 128, 768];
each at batch 1 and 64, eager and replayed from a CUDA graph. Also the
measured float16 matrix rate (8192^3 GEMM), from which the floor of each
model (its FLOPs divided by that rate) is computed.

Prints one JSON object per line; the last line is {"done": true}.
  torch_bench.py [--min-time S] [--batches 1,64]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn as nn

SEQ, HID, HEADS, FFN, LAYERS = 128, 768, 12, 3072, 12
RESNET50_FLOP = 2 * 4.089e9  # per 224x224 image (4.09 GMACs)


def bert_flop(seq=SEQ, hid=HID, ffn=FFN, layers=LAYERS):
    per_layer = 4 * 2 * seq * hid * hid + 2 * 2 * seq * hid * ffn + 2 * 2 * seq * seq * hid
    return layers * per_layer


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + idt)


class PlainResNet50(nn.Module):
    """torchvision's resnet50 (v1.5) layer for layer, for machines without torchvision."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for i, n in enumerate([3, 4, 6, 3]):
            width = 64 << i
            for b in range(n):
                layers.append(Bottleneck(cin, width, 2 if (b == 0 and i > 0) else 1))
                cin = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def resnet50():
    try:
        import torchvision
        return torchvision.models.resnet50(weights=None), "torchvision"
    except Exception:  # absent or broken: the same network in plain torch
        return PlainResNet50(), "plain torch"


def timed(fn, min_time):
    """Median seconds per call (synchronized), after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < min_time and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def graphed(model, x):
    """The model's forward captured in a CUDA graph; returns a replay function."""
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        model(static_x)
    return g.replay


def matmul_rate(n=8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    sec, _ = timed(lambda: torch.mm(a, b), 1.0)
    return 2 * n ** 3 / sec


def emit(obj):
    print(json.dumps(obj), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--batches", default="1,64")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        emit({"error": "torch.cuda.is_available() is False"})
        emit({"done": True})
        return 1
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    rate = matmul_rate()
    emit({"kind": "matmul_rate", "flop_per_s": rate, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__})
    batches = [int(b) for b in args.batches.split(",")]
    with torch.inference_mode():
        net, src = resnet50()
        net = net.eval().to(dev, torch.float16)
        for fmt in ("contiguous", "channels_last"):
            m = net.to(memory_format=torch.channels_last) if fmt == "channels_last" else net.to(
                memory_format=torch.contiguous_format)
            for b in batches:
                x = torch.randn(b, 3, 224, 224, device=dev, dtype=torch.float16)
                if fmt == "channels_last":
                    x = x.to(memory_format=torch.channels_last)
                for mode in ("eager", "cuda_graph"):
                    try:
                        fn = (lambda: m(x)) if mode == "eager" else graphed(m, x)
                        sec, runs = timed(fn, args.min_time)
                        emit({"kind": "result", "framework": "torch", "model": "resnet50", "variant": f"{fmt} ({src})",
                              "batch": b, "mode": mode, "median_ms": 1e3 * sec, "items_per_s": b / sec, "runs": runs,
                              "floor_ms": 1e3 * RESNET50_FLOP * b / rate})
                    except Exception as ex:  # report and go on
                        emit({"kind": "result", "framework": "torch", "model": "resnet50", "variant": fmt, "batch": b,
                              "mode": mode, "error": str(ex)[:200]})
        del net
        layer = nn.TransformerEncoderLayer(HID, HEADS, FFN, dropout=0.0, activation="gelu", batch_first=True)
        enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).eval().to(dev, torch.float16)
        for b in batches:
            x = torch.randn(b, SEQ, HID, device=dev, dtype=torch.float16)
            for mode in ("eager", "cuda_graph"):
                try:
                    fn = (lambda: enc(x)) if mode == "eager" else graphed(enc, x)
                    sec, runs = timed(fn, args.min_time)
                    emit({"kind": "result", "framework": "torch", "model": "bert_base_encoder",
                          "variant": "nn.TransformerEncoder (fast path)", "batch": b, "mode": mode,
                          "median_ms": 1e3 * sec, "items_per_s": b / sec, "runs": runs,
                          "floor_ms": 1e3 * bert_flop() * b / rate})
                except Exception as ex:
                    emit({"kind": "result", "framework": "torch", "model": "bert_base_encoder", "variant": "fast path",
                          "batch": b, "mode": mode, "error": str(ex)[:200]})
    emit({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
