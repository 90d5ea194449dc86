#!/usr/bin/env python3
"""The GPU benchmark's table (scripts/gpu-check.sh prints it last).

  gpu_table.py OURS.txt TORCH.jsonl

OURS.txt: one line per run of bench/gpu_bench, prefixed with
"MODEL VARIANT": e.g.
  resnet50 NCHW backend cuda batch 64 runs 100 median_ms 9.1 p90_ms ... items_per_s ... first_run_ms ... cpu_s ...
  cuda_graph 1
(cuda_graph 1: the session replays a captured CUDA Graph; absent or 0: it does not)
  resnet50 NCHW FAILED <message>
TORCH.jsonl: bench/torch_bench.py's output. The floor of a row is the
model's FLOPs divided by the float16 matrix rate torch measured on this GPU.
"""
import json
import sys

RESNET50_FLOP = 2 * 4.089e9
SEQ, HID, FFN, LAYERS = 128, 768, 3072, 12
BERT_FLOP = LAYERS * (4 * 2 * SEQ * HID * HID + 2 * 2 * SEQ * HID * FFN + 2 * 2 * SEQ * SEQ * HID)
FLOP = {"resnet50": RESNET50_FLOP, "bert_base_encoder": BERT_FLOP}


def main():
    rows, rate, gpu = [], None, "?"
    try:
        with open(sys.argv[2]) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                o = json.loads(line)
                if o.get("kind") == "matmul_rate":
                    rate, gpu = o["flop_per_s"], o.get("gpu", "?")
                elif o.get("kind") == "result":
                    rows.append((o["model"], o["batch"], "torch " + o["variant"] + " " + o["mode"],
                                 o.get("median_ms"), o.get("items_per_s"), o.get("error")))
    except OSError as ex:
        print("torch results: %s" % ex)
    try:
        with open(sys.argv[1]) as f:
            for line in f:
                w = line.split()
                if len(w) < 3:
                    continue
                model, variant = w[0], w[1]
                if w[2] == "FAILED":
                    rows.append((model, int(w[3]) if len(w) > 3 and w[3].isdigit() else 0, "grapnel " + variant, None,
                                 None, " ".join(w[4:])[:70]))
                    continue
                kv = dict(zip(w[2::2], w[3::2]))
                graph = ", CUDA Graph" if kv.get("cuda_graph") == "1" else ""
                rows.append((model, int(kv["batch"]), "grapnel %s (%s%s)" % (variant, kv["backend"], graph),
                             float(kv["median_ms"]), float(kv["items_per_s"]), None))
    except OSError as ex:
        print("grapnel results: %s" % ex)
    print("GPU: %s; float16 matrix rate (torch, 8192^3): %s" % (gpu, "%.0f TFLOP/s" % (rate / 1e12) if rate else "n/a"))
    print("%-18s %5s  %-52s %10s %11s %9s" % ("model", "batch", "implementation", "median ms", "items/s", "floor ms"))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    for model, batch, impl, ms, ips, err in rows:
        floor = "%.3f" % (1e3 * FLOP[model] * batch / rate) if rate and model in FLOP and batch else "n/a"
        if err:
            print("%-18s %5s  %-52s %s" % (model, batch, impl[:52], "FAILED: " + err))
        else:
            print("%-18s %5d  %-52s %10.3f %11.1f %9s" % (model, batch, impl[:52], ms, ips, floor))
    print("(grapnel: float16 after our passes, through gn_session_run: the feed copied in and the fetch copied out "
          "each run; torch: device tensors, inference_mode, float16)")


if __name__ == "__main__":
    main()
