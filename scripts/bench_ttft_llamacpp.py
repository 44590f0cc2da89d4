#!/usr/bin/env python3
"""TTFT over the turns of a replayed chat: Ember (ember-bench ttft-turns) against llama.cpp
(llama-cpp-python, in this process) on the same prompt token ids, interleaved per repetition.

llama.cpp arms, both on one Llama object:
  reuse: the turns in order without a reset; Llama.generate keeps the longest prefix its context
         shares with the new prompt and evaluates only the rest (its prompt-prefix reuse);
  cold:  a reset before every turn, so each turn evaluates its whole prompt.
TTFT for llama.cpp is from the generate() call to the first sampled token (greedy): evaluating
the prompt's uncached part and sampling. Ember's TTFT also holds rendering the chat template and
tokenizing (llama.cpp gets the ids ready made), a fraction of a millisecond per turn.

Without --ember-bench only llama.cpp runs, on the ids of --turns (ember-bench ttft-turns
--dump-turns FILE writes them)."""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import llama_cpp

ARMS = ["ember-cached", "ember-cold", "ember-ideal", "llama-reuse", "llama-cold"]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_turns(path):
    with open(path) as f:
        return [[int(t) for t in turn["tokens"]] for turn in json.load(f)["turns"]]


def ember_repetition(bench, model, threads, turns_file):
    """One ember-bench repetition (cache on, off and ideal); writes the turns' ids to turns_file."""
    out = subprocess.run([bench, "ttft-turns", "--model", model, "--threads", str(threads),
                          "--repetitions", "1", "--json", "--dump-turns", turns_file],
                         check=True, capture_output=True, text=True)
    figures = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            j = json.loads(line)
            figures[j["figure"]] = j["median"]
    return figures


class Peer:
    def __init__(self, path, threads, context):
        self.llm = llama_cpp.Llama(path, n_ctx=context, n_batch=2048, n_ubatch=512,
                                   n_threads=threads, n_threads_batch=threads, verbose=False)

    def first_token_ms(self, tokens):
        """Milliseconds to the first greedy token; the context keeps the prompt (not the token)."""
        t0 = time.perf_counter()
        gen = self.llm.generate(tokens, top_k=1, top_p=1.0, min_p=0.0, temp=0.0,
                                repeat_penalty=1.0, reset=True)
        next(gen)
        ms = (time.perf_counter() - t0) * 1000
        gen.close()  # leaves the sampled token unevaluated: the context holds the prompt only
        return ms

    def reused(self, tokens):
        """Tokens generate() will keep from the current context for this prompt."""
        if self.llm.n_tokens == 0:
            return 0
        return llama_cpp.Llama.longest_token_prefix(self.llm._input_ids.tolist(), tokens)

    def replay(self, turns, cold):
        ms, reused = [], []
        self.llm.reset()
        for tokens in turns:
            if cold:
                self.llm.reset()
            reused.append(self.reused(tokens))
            ms.append(self.first_token_ms(tokens))
        return ms, reused


def summary(values):
    return statistics.median(values), min(values), max(values)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--ember-bench", help="ember-bench to interleave with (else llama.cpp only)")
    ap.add_argument("--turns", help="turn ids from ember-bench ttft-turns --dump-turns")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--context", type=int, default=4096)
    a = ap.parse_args()
    if not a.ember_bench and not a.turns:
        ap.error("give --ember-bench (both engines) or --turns (llama.cpp only)")

    turns_file = a.turns or os.path.join(tempfile.mkdtemp(prefix="ember-turns-"), "turns.json")
    if a.ember_bench:  # the first Ember repetition also writes the ids llama.cpp replays
        first_ember = ember_repetition(a.ember_bench, a.model, a.threads, turns_file)
    turns = load_turns(turns_file)
    n = len(turns)
    peer = Peer(a.model, a.threads, a.context)
    peer.first_token_ms(list(range(1000, 1032)))  # warm-up on ids no turn starts with

    results = {arm: [[] for _ in range(n)] for arm in ARMS}
    reused = None
    for rep in range(a.repetitions):  # Ember, llama.cpp reuse, llama.cpp cold; repeated
        if a.ember_bench:
            e = first_ember if rep == 0 else ember_repetition(a.ember_bench, a.model, a.threads,
                                                               turns_file)
            for k in range(n):
                for arm, suffix in (("ember-cached", "cached"), ("ember-cold", "cold"),
                                    ("ember-ideal", "ideal")):
                    results[arm][k].append(e["ttft-turn%d-%s" % (k + 1, suffix)])
        ms, reused = peer.replay(turns, cold=False)
        for k in range(n):
            results["llama-reuse"][k].append(ms[k])
        ms, _ = peer.replay(turns, cold=True)
        for k in range(n):
            results["llama-cold"][k].append(ms[k])

    arms = [arm for arm in ARMS if results[arm][0]]
    med = {arm: [statistics.median(results[arm][k]) for k in range(n)] for arm in arms}
    print("TTFT per turn, median of %d repetitions, ms (%d threads, %s)" % (
        a.repetitions, a.threads, os.path.basename(a.model)))
    header = "%4s %7s %7s" % ("turn", "prompt", "reused") + "".join("%13s" % x for x in arms)
    if a.ember_bench:
        header += "%15s %15s" % ("cached/reuse", "cold/cold")
    print(header)
    for k in range(n):
        line = "%4d %7d %7d" % (k + 1, len(turns[k]), reused[k]) + "".join(
            "%13.1f" % med[arm][k] for arm in arms)
        if a.ember_bench:
            line += "%14.2fx %14.2fx" % (med["ember-cached"][k] / med["llama-reuse"][k],
                                         med["ember-cold"][k] / med["llama-cold"][k])
        print(line)
    print("turn %d / turn 1: " % n + ", ".join(
        "%s %.2fx" % (arm, med[arm][n - 1] / med[arm][0]) for arm in arms))
    if a.ember_bench:
        print("ratios are Ember ms / llama.cpp ms: below 1, Ember is faster")

    common = {"repetitions": a.repetitions, "threads": a.threads,
              "model": os.path.basename(a.model), "model_sha256": sha256(a.model),
              "peer_version": llama_cpp.__version__}
    for k in range(n):
        pairs = [("reuse", "ember-cached", "llama-reuse"), ("cold", "ember-cold", "llama-cold")]
        for name, ember_arm, peer_arm in pairs:
            row = {"figure": "ttft-turn%d-%s" % (k + 1, name), "unit": "ms"}
            p, pmin, pmax = summary(results[peer_arm][k])
            if ember_arm in med:
                em, emin, emax = summary(results[ember_arm][k])
                row.update({"ember": em, "ember_min": emin, "ember_max": emax})
            row.update({"peer": p, "peer_min": pmin, "peer_max": pmax})
            if ember_arm in med:
                row["ratio"] = row["ember"] / p
            row.update(common)
            print(json.dumps(row))
    for arm in arms:
        ratios = [results[arm][n - 1][r] / results[arm][0][r] for r in range(a.repetitions)]
        m, lo, hi = summary(ratios)
        print(json.dumps(dict({"figure": "ttft-turn%d-over-turn1-%s" % (n, arm), "unit": "x",
                               "median": m, "min": lo, "max": hi}, **common)))


if __name__ == "__main__":
    sys.exit(main())
