#!/usr/bin/env python3
"""Writes seed engine-asset files (src/io/engine_store.h) into DIR: TFRecord
framing with masked CRC-32C, payloads for the fuzz target's FP32 engine
(digest 0x0123456789abcdef), on the cpu and cuda backends.
usage: engine_seeds.py DIR"""
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def s(text):
    b = text.encode()
    return struct.pack("<I", len(b)) + b


def payload(backend, device, shapes, prec="FP32", digest=0x0123456789ABCDEF, version="0.1.0"):
    p = b"GNENGINE" + struct.pack("<I", 1) + s(backend) + s(device) + s(version) + s(prec)
    p += struct.pack("<Q", digest) + struct.pack("<I", len(shapes))
    for dims in shapes:
        p += struct.pack("<i", len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
    return p


def record(p):
    n = struct.pack("<Q", len(p))
    return n + struct.pack("<I", masked(n)) + p + struct.pack("<I", masked(p))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "one_cpu": [payload("cpu", "host", [[4, 2]])],
        "two_cpu": [payload("cpu", "host", [[4, 2]]), payload("cpu", "host", [[3, 2], [1]])],
        "cuda_and_cpu": [payload("cuda", "gpu", [[1, 224, 224, 3]]), payload("cpu", "host", [[8]])],
        "stale": [payload("cpu", "host", [[2, 2]], prec="FP16"), payload("cpu", "host", [[2]], digest=1),
                  payload("cpu", "host", [[2]], version="9.9.9")],
        "scalar_inputs": [payload("cpu", "host", [[], [], []])],
        "empty": [],
    }
    for name, recs in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"".join(record(p) for p in recs))


if __name__ == "__main__":
    main()
