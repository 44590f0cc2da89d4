#!/usr/bin/env python3
"""Driver of scripts/bench-vs-llamacpp.sh: interleaves Ember (ember-bench, one repetition per
call) and llama.cpp (llama-cpp-python, in this process) on the same prompt tokens, then prints
each figure's medians, the ratio Ember / llama.cpp and the fraction of the roofline."""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import llama_cpp
import numpy as np

MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]


def ember(bench, args):
    out = subprocess.run([bench] + args + ["--json"], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


class LlamaCpp:
    def __init__(self, path, threads):
        self.llm = llama_cpp.Llama(path, n_ctx=2560, n_batch=2048, n_ubatch=512,
                                   n_threads=threads, n_threads_batch=threads, verbose=False)

    def pp(self, tokens):
        self.llm.reset()
        t0 = time.perf_counter()
        self.llm.eval(tokens)
        return len(tokens) / (time.perf_counter() - t0)

    def tg(self, prompt, n):
        self.llm.reset()
        self.llm.eval(prompt)
        times = []
        tok = int(np.argmax(self.llm.scores[self.llm.n_tokens - 1]))
        for _ in range(n):
            self.llm.eval([tok])
            times.append(time.perf_counter())
            tok = int(np.argmax(self.llm.scores[self.llm.n_tokens - 1]))
        return (n - 1) / (times[-1] - times[0])


def bytes_per_decoded_token(path, llm, context):
    """Weights (nearly the whole GGUF) plus the F16 KV cache read at `context` positions."""
    md = llm.metadata
    arch = md["general.architecture"]
    layers = int(md["%s.block_count" % arch])
    heads = int(md["%s.attention.head_count" % arch])
    kv_heads = int(md.get("%s.attention.head_count_kv" % arch, heads))
    head_dim = int(md.get("%s.attention.key_length" % arch,
                          int(md["%s.embedding_length" % arch]) // heads))
    kv = layers * 2 * kv_heads * head_dim * 2 * context
    return os.path.getsize(path) + kv


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-bench", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--model", help="one GGUF (default: both real models)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--figures", default="pp,tg")
    ap.add_argument("--kernels", help="Ember's CPU kernels (fast, reference, approx; default: "
                    "ember-bench's default)")
    a = ap.parse_args()
    kernels = ["--kernels", a.kernels] if a.kernels else []
    models = [a.model] if a.model else [os.path.join(a.models_dir, m) for m in MODELS]
    figures = a.figures.split(",")
    bw = ember(a.ember_bench, ["bw", "--threads", str(a.threads), "--repetitions", "3"])[0]
    print("read bandwidth probed now: %.1f GB/s (%d threads)" % (bw["median"], a.threads))
    rows = []
    for path in models:
        prompt_tokens = [int(t) for t in subprocess.run(
            [a.ember_bench, "tokens", "--model", path, "--count", "2048"], check=True,
            capture_output=True, text=True).stdout.split()]
        peer = LlamaCpp(path, a.threads)
        peer.pp(prompt_tokens[:32])  # warm-up
        results = {}
        for rep in range(a.repetitions):  # A B A B ...
            for fig in figures:
                e = ember(a.ember_bench, [fig, "--model", path, "--threads", str(a.threads),
                                          "--repetitions", "1"] + kernels)
                for r in e:
                    results.setdefault(r["figure"], {"ember": [], "peer": []})["ember"].append(
                        r["median"])
                if fig == "pp":
                    for n in (512, 2048):
                        results["pp%d" % n]["peer"].append(peer.pp(prompt_tokens[:n]))
                elif fig == "tg":
                    results["tg128"]["peer"].append(peer.tg(prompt_tokens[:512], 128))
        size = bytes_per_decoded_token(path, peer.llm, 512 + 64)
        for fig, v in results.items():
            em, pe = statistics.median(v["ember"]), statistics.median(v["peer"])
            row = {"model": os.path.basename(path), "figure": fig, "unit": "tokens/s",
                   "ember": em, "ember_min": min(v["ember"]), "ember_max": max(v["ember"]),
                   "peer": pe, "peer_min": min(v["peer"]), "peer_max": max(v["peer"]),
                   "ratio": em / pe, "repetitions": a.repetitions, "threads": a.threads,
                   "model_sha256": sha256(path), "peer_version": llama_cpp.__version__}
            if fig.startswith("tg"):
                # Decode reads every weight once per token: the bandwidth roofline.
                row["roofline_tokens_per_s"] = bw["median"] * 1e9 / size
                row["roofline_fraction"] = em / row["roofline_tokens_per_s"]
            rows.append(row)
    print("%-34s %-7s %12s %12s %7s %9s" % ("model", "figure", "ember", "llama.cpp", "ratio",
                                            "roofline"))
    for r in rows:
        print("%-34s %-7s %12.1f %12.1f %6.2fx %9s" % (
            r["model"], r["figure"], r["ember"], r["peer"], r["ratio"],
            "%.0f%%" % (100 * r["roofline_fraction"]) if "roofline_fraction" in r else "-"))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    sys.exit(main())
