#!/usr/bin/env python3
"""How much of the prompt's KV cache the n choices of one request share: one request with n=4
against one request alone (x4: no sharing) and 4 separate requests sent at once (the prefix
cache lets them share too), on a fresh ember-serve each, with the same long prompt. Reports the peak of ember_kv_blocks_used (sampled from /metrics every 10 ms while the
answers run) and the prompt tokens computed (ember_prompt_tokens_total minus
ember_cached_prompt_tokens_total).

  scripts/bench-serve-n.py --serve build/bin/ember-serve --model M.gguf [--threads 2]
Needs httpx (the tests' venv, build/openai-venv, has it)."""
import argparse
import socket
import subprocess
import threading
import time

import httpx

PROMPT = "Summarise these notes in one sentence.\n" + "".join(
    f"Note {i}: the harbour lights were checked again and found in good order.\n" for i in range(24))


def metrics(base):
    out = {}
    for line in httpx.get(base + "/metrics").text.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            name, value = line.split()
            out[name] = float(value)
    return out


def serve(a):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([a.serve, "--model", a.model, "--port", str(port), "--threads",
                          str(a.threads), "--parallel", "4", "--context", "1024",
                          "--log-file", "/dev/null"])
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(base + "/health").status_code == 200:
                return p, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("ember-serve did not start")


def measure(a, separate, count=4):
    p, base = serve(a)
    try:
        model = httpx.get(base + "/v1/models").json()["data"][0]["id"]
        body = {"model": model, "messages": [{"role": "user", "content": PROMPT}],
                "temperature": 0.8, "seed": 1, "max_tokens": a.tokens}
        before = metrics(base)
        peak, done = [0.0], threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], metrics(base)["ember_kv_blocks_used"])
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.perf_counter()
        if separate:
            threads = [threading.Thread(target=lambda: httpx.post(
                base + "/v1/chat/completions", json=body, timeout=600).raise_for_status())
                for _ in range(count)]
            for t in threads: t.start()
            for t in threads: t.join()
        else:
            httpx.post(base + "/v1/chat/completions", json={**body, "n": count},
                       timeout=600).raise_for_status()
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        after = metrics(base)
        prompt = after["ember_prompt_tokens_total"] - before["ember_prompt_tokens_total"]
        cached = after["ember_cached_prompt_tokens_total"] - before["ember_cached_prompt_tokens_total"]
        return {"peak_blocks": peak[0], "prompt": prompt, "computed": prompt - cached, "wall": wall,
                "total_blocks": after["ember_kv_blocks_total"]}
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=16)
    a = ap.parse_args()
    print("Shared, noisy machine: the block and token counts are exact, the times are not.")
    alone = measure(a, separate=True, count=1)
    n4 = measure(a, separate=False)
    sep = measure(a, separate=True)
    for name, r in (("one request alone", alone), ("n=4, one request", n4),
                    ("4 separate requests at once", sep)):
        print(f"{name}: peak KV blocks used {r['peak_blocks']:.0f} of {r['total_blocks']:.0f}, "
              f"prompt tokens {r['prompt']:.0f} of which computed {r['computed']:.0f}, "
              f"wall {r['wall']:.2f} s")
    print(f"n=4 holds {n4['peak_blocks']:.0f} KV blocks where 4 unshared copies would hold "
          f"{4 * alone['peak_blocks']:.0f} ({n4['peak_blocks'] / (4 * alone['peak_blocks']):.2f}x), "
          f"and computes {n4['computed']:.0f} of {n4['prompt']:.0f} prompt tokens; 4 separate "
          f"requests: {sep['peak_blocks']:.0f} blocks, {sep['computed']:.0f} computed")


if __name__ == "__main__":
    main()
