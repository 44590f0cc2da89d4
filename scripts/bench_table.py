#!/usr/bin/env python3
"""Driver of scripts/bench-table.sh: every speed figure of the README's table in one run, Ember
(ember-bench, a fresh process per repetition) and llama.cpp (llama-cpp-python) interleaved
A B A B on the same GGUF files, thread count and prompt token ids:

  pp512, pp2048, tg128  both models; tg also as a fraction of the bandwidth roofline probed now
  load, memory          both models: a fresh process each (ember-bench load; llama.cpp in a
                        child Python): start of loading to the first token possible / (file
                        size / the file's read bandwidth probed by ember-bench in the same
                        repetition), and peak resident memory after a 512-token prompt /
                        (tensor bytes + F16 KV for the 2560-token context), raw and above the
                        process's own baseline before loading
  batch                 --batch-model: ember-bench batch, 8 chats' aggregate decode tokens/s /
                        1 chat's and ITL p95 8 / 1 (llama-cpp-python's API runs one sequence at
                        a time, so there is no peer figure)
  ttft                  --batch-model: ember-bench ttft-turns with the prefix cache, turn 8 /
                        turn 1, beside llama.cpp reusing its prompt prefix on the same ids

Prints a table (median, min-max) and one JSON object per figure."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ttft_llamacpp import Peer as TurnsPeer, ember_repetition, load_turns  # noqa: E402
from bench_vs_llamacpp import (LlamaCpp, bytes_per_decoded_token, ember,  # noqa: E402
                               sha256)
import llama_cpp  # noqa: E402

MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]
CONTEXT = 2560

# A fresh llama.cpp process: time from Llama() to the first token possible (the model mapped and
# one 1-token prompt evaluated, as ember-bench load does), then peak RSS after a 512-token prompt.
PEER_LOAD = r"""
import json, sys, time
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
import llama_cpp
path, threads, ctx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tokens = [int(t) for t in sys.argv[4].split()]
before = hwm()
t0 = time.perf_counter()
llm = llama_cpp.Llama(path, n_ctx=ctx, n_batch=2048, n_ubatch=512, n_threads=threads,
                      n_threads_batch=threads, verbose=False)
load_ms = (time.perf_counter() - t0) * 1000
llm.eval(tokens[:1])
first = (time.perf_counter() - t0) * 1000
after_first = hwm()
llm.reset()
llm.eval(tokens[:512])
print(json.dumps({"load_ms": load_ms, "first_token_ms": first, "rss_before_load_bytes": before,
                  "rss_after_first_token_bytes": after_first, "peak_rss_bytes": hwm()}))
"""


def kv_bytes(llm, context):
    md = llm.metadata
    arch = md["general.architecture"]
    layers = int(md["%s.block_count" % arch])
    heads = int(md["%s.attention.head_count" % arch])
    kv_heads = int(md.get("%s.attention.head_count_kv" % arch, heads))
    k_dim = int(md.get("%s.attention.key_length" % arch,
                       int(md["%s.embedding_length" % arch]) // heads))
    v_dim = int(md.get("%s.attention.value_length" % arch, k_dim))
    return layers * kv_heads * (k_dim + v_dim) * 2 * context


# Int8 VNNI peak of this CPU with 2 threads, 1.29 TOP/s, measured earlier with a vpdpbusd loop;
# not probed in this run, so the prompt fractions below are estimates against it.
INT8_PEAK_OPS = 1.29e12


def tensor_stats(path):
    """(bytes of all tensors, parameters of the matrices a prompt token multiplies: every 2-D
    tensor except the token embedding, which a prompt only looks rows up in)."""
    from gguf import GGUFReader
    tensors = GGUFReader(path).tensors
    params = sum(int(t.n_elements) for t in tensors
                 if len(t.shape) >= 2 and t.name != "token_embd.weight")
    return sum(int(t.n_bytes) for t in tensors), params


def summary(v):
    return statistics.median(v), min(v), max(v)


def row(model, figure, unit, ember_v, peer_v=None, reps=0, **extra):
    em, emin, emax = summary(ember_v)
    r = {"model": model, "figure": figure, "unit": unit, "ember": em, "ember_min": emin,
         "ember_max": emax, "repetitions": reps}
    if peer_v:
        p, pmin, pmax = summary(peer_v)
        r.update({"peer": p, "peer_min": pmin, "peer_max": pmax})
    r.update(extra)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-bench", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--models", default=",".join(MODELS), help="GGUF names in --models-dir")
    ap.add_argument("--batch-model", default="SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--figures", default="pp,tg,load,batch,ttft")
    ap.add_argument("--kernels", default="fast")
    a = ap.parse_args()
    figures = a.figures.split(",")
    th = ["--threads", str(a.threads)]
    kern = ["--kernels", a.kernels]
    bw = ember(a.ember_bench, ["bw"] + th + ["--repetitions", "3"])[0]["median"]
    print("read bandwidth probed now: %.1f GB/s (%d threads); load average %s" % (
        bw, a.threads, open("/proc/loadavg").read().split()[:3]), flush=True)
    rows = []
    for name in [m for m in a.models.split(",") if m]:
        path = os.path.join(a.models_dir, name)
        ids = subprocess.run([a.ember_bench, "tokens", "--model", path, "--count", "2048"],
                             check=True, capture_output=True, text=True).stdout.split()
        prompt = [int(t) for t in ids]
        peer = LlamaCpp(path, a.threads)
        peer.pp(prompt[:32])  # warm-up
        res = {}
        add = lambda fig, arm, v: res.setdefault(fig, {"ember": [], "peer": []})[arm].append(v)
        for rep in range(a.repetitions):  # A B A B ...
            if "pp" in figures:
                for r in ember(a.ember_bench, ["pp", "--model", path, "--repetitions", "1"] + th + kern):
                    add(r["figure"], "ember", r["median"])
                for n in (512, 2048):
                    add("pp%d" % n, "peer", peer.pp(prompt[:n]))
            if "tg" in figures:
                for r in ember(a.ember_bench, ["tg", "--model", path, "--repetitions", "1"] + th + kern):
                    add(r["figure"], "ember", r["median"])
                add("tg128", "peer", peer.tg(prompt[:512], 128))
            if "load" in figures:
                e = ember(a.ember_bench, ["load", "--model", path] + th + kern)[0]
                out = subprocess.run([sys.executable, "-c", PEER_LOAD, path, str(a.threads),
                                      str(CONTEXT), " ".join(ids[:512])],
                                     check=True, capture_output=True, text=True).stdout
                p = json.loads(out.strip().splitlines()[-1])
                for arm, j in (("ember", e), ("peer", p)):
                    add("load", arm, j["first_token_ms"] / e["limit_ms"])
                    add("load_ms", arm, j["first_token_ms"])
                    add("peak_rss", arm, j["peak_rss_bytes"])
                    add("model_rss", arm, j["peak_rss_bytes"] - j["rss_before_load_bytes"])
                add("limit_ms", "ember", e["limit_ms"])
            print("%s: repetition %d done" % (name, rep + 1), flush=True)
        common = {"threads": a.threads, "kernels": a.kernels, "model_sha256": sha256(path),
                  "peer_version": llama_cpp.__version__}
        weight_bytes, params = tensor_stats(path)
        for fig in ("pp512", "pp2048", "tg128"):
            if fig in res:
                r = row(name, fig, "tokens/s", res[fig]["ember"], res[fig]["peer"], a.repetitions,
                        **common)
                r["ratio"] = r["ember"] / r["peer"]
                if fig.startswith("pp"):
                    peak = INT8_PEAK_OPS / (2 * params)
                    r.update({"int8_peak_tokens_per_s": peak, "peak_fraction": r["ember"] / peak,
                              "peer_peak_fraction": r["peer"] / peak})
                if fig == "tg128":
                    roof = bw * 1e9 / bytes_per_decoded_token(path, peer.llm, 512 + 64)
                    r.update({"roofline_tokens_per_s": roof, "roofline_fraction": r["ember"] / roof,
                              "peer_roofline_fraction": r["peer"] / roof})
                rows.append(r)
        if "load" in res:
            need = weight_bytes + kv_bytes(peer.llm, CONTEXT)
            r = row(name, "load-over-limit", "x", res["load"]["ember"], res["load"]["peer"],
                    a.repetitions, limit_ms=statistics.median(res["limit_ms"]["ember"]),
                    ember_ms=statistics.median(res["load_ms"]["ember"]),
                    peer_ms=statistics.median(res["load_ms"]["peer"]), **common)
            rows.append(r)
            for fig, key in (("peak-rss-over-weights-kv", "peak_rss"),
                             ("model-rss-over-weights-kv", "model_rss")):
                rows.append(row(name, fig, "x", [v / need for v in res[key]["ember"]],
                                [v / need for v in res[key]["peer"]], a.repetitions,
                                weights_kv_bytes=need, context=CONTEXT,
                                ember_bytes=statistics.median(res[key]["ember"]),
                                peer_bytes=statistics.median(res[key]["peer"]), **common))
        del peer

    path = os.path.join(a.models_dir, a.batch_model)
    if "batch" in figures:
        got = {}
        for rep in range(a.repetitions):
            for r in ember(a.ember_bench, ["batch", "--model", path, "--concurrency", "1,8",
                                           "--repetitions", "1"] + th + kern):
                got.setdefault(r["figure"], []).append(r["median"])
        for fig in ("batch8-over-batch1", "itl-p95-batch8-over-batch1", "batch1", "batch8"):
            rows.append(row(a.batch_model, fig, "x" if "over" in fig else "tokens/s", got[fig],
                            reps=a.repetitions, threads=a.threads, kernels=a.kernels))
    if "ttft" in figures:
        turns_file = os.path.join(tempfile.mkdtemp(prefix="ember-turns-"), "turns.json")
        first = ember_repetition(a.ember_bench, path, a.threads, turns_file)
        turns = load_turns(turns_file)
        n = len(turns)
        tp = TurnsPeer(path, a.threads, 4096)
        tp.first_token_ms(list(range(1000, 1032)))
        em_ratio, peer_ratio, em_last, peer_last = [], [], [], []
        for rep in range(a.repetitions):
            e = first if rep == 0 else ember_repetition(a.ember_bench, path, a.threads, turns_file)
            em_ratio.append(e["ttft-turn%d-cached" % n] / e["ttft-turn1-cached"])
            em_last.append(e["ttft-turn%d-cached" % n])
            ms, _ = tp.replay(turns, cold=False)
            peer_ratio.append(ms[n - 1] / ms[0])
            peer_last.append(ms[n - 1])
        rows.append(row(a.batch_model, "ttft-turn%d-over-turn1" % n, "x", em_ratio, peer_ratio,
                        a.repetitions, threads=a.threads, note="ember: fast kernels via "
                        "ember-bench default; prefix cache on; llama.cpp: prompt-prefix reuse"))
        rows.append(row(a.batch_model, "ttft-turn%d-ms" % n, "ms", em_last, peer_last,
                        a.repetitions, threads=a.threads))

    print("%-32s %-28s %22s %22s %8s" % ("model", "figure", "ember (min-max)",
                                         "llama.cpp (min-max)", "ratio"))
    for r in rows:
        fmt = lambda m, lo, hi: "%.3g (%.3g-%.3g)" % (m, lo, hi)
        peer = fmt(r["peer"], r["peer_min"], r["peer_max"]) if "peer" in r else "-"
        ratio = "%.2fx" % (r["ember"] / r["peer"]) if "peer" in r else "-"
        extra = ""
        if "peak_fraction" in r:
            extra = " int8 peak %.1f%% (llama.cpp %.1f%%)" % (100 * r["peak_fraction"],
                                                            100 * r["peer_peak_fraction"])
        if "roofline_fraction" in r:
            extra = " roofline %.0f%% (llama.cpp %.0f%%)" % (100 * r["roofline_fraction"],
                                                           100 * r["peer_roofline_fraction"])
        print("%-32s %-28s %22s %22s %8s%s" % (r["model"], r["figure"], fmt(
            r["ember"], r["ember_min"], r["ember_max"]), peer, ratio, extra))
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
