#!/usr/bin/env python3
"""Ember's CPU kernel modes side by side: ember-bench pp (512, 2048 tokens) and tg (128 tokens
after a 512-token prompt) for each mode, one repetition at a time, interleaved A B C A B C, so
that the machine's load hits every mode alike. Prints median and min-max per mode and the ratio
of each mode's median to the reference kernels'.
  scripts/bench_kernels.py --ember-bench build/bin/ember-bench --model M.gguf
                           [--threads 2] [--repetitions 3] [--kernels reference,fast,approx]
"""
import argparse
import json
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-bench", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--kernels", default="reference,fast,approx")
    ap.add_argument("--figures", default="pp,tg")
    a = ap.parse_args()
    modes = a.kernels.split(",")
    results = {}  # (figure, mode) -> [tokens/s]
    for _ in range(a.repetitions):
        for fig in a.figures.split(","):
            for mode in modes:
                out = subprocess.run(
                    [a.ember_bench, fig, "--model", a.model, "--threads", str(a.threads),
                     "--repetitions", "1", "--kernels", mode, "--json"],
                    check=True, capture_output=True, text=True).stdout
                for line in out.splitlines():
                    if line.startswith("{"):
                        r = json.loads(line)
                        results.setdefault((r["figure"], mode), []).append(r["median"])
    print("%-8s %-10s %10s %21s %9s" % ("figure", "kernels", "median", "min-max", "vs ref"))
    for fig in sorted({f for f, _ in results}):
        ref = results.get((fig, "reference"))
        for mode in modes:
            v = results.get((fig, mode))
            if not v:
                continue
            med = statistics.median(v)
            ratio = "%.2fx" % (med / statistics.median(ref)) if ref else "-"
            print("%-8s %-10s %10.1f %10.1f-%-10.1f %9s" % (fig, mode, med, min(v), max(v), ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
