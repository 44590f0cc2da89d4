#!/usr/bin/env python3
"""The router benchmark: ember-bench ttft-turns' 8-turn chat replayed through ember-serve's
router over two ember-serve upstreams, with conversation affinity on and off, beside the same
chat sent straight to one upstream; then the router hop (TTFT through a gateway with one
upstream against the same upstream asked directly). All arms run side by side in one run,
interleaved per repetition, on loopback.

  scripts/bench-router.py [--build build] [--model M] [--repetitions 3]

Each arm replays its own copy of the chat (a session tag leads its system message), so no arm
finds another's prompts in an upstream's prefix cache: the single-upstream arm is a chat on one
engine with its prefix cache, which is what affinity should come close to. Turns generate one
token (as ttft-turns does); TTFT is measured here, from sending the request to the first chunk
with text; reused tokens are the upstream-reported usage.prompt_tokens_details.cached_tokens."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "openai", "router"))
from ember_fleet import EmberServe, http_get, stream_chat  # noqa: E402


def load_chat(bench, model, workdir):
    """The turns' messages as ember-bench ttft-turns builds them (one repetition of it runs)."""
    path = os.path.join(workdir, "turns.json")
    subprocess.run([bench, "ttft-turns", "--model", model, "--threads", "1", "--repetitions", "1",
                    "--json", "--dump-turns", path], check=True, capture_output=True)
    with open(path) as f:
        return [turn["messages"] for turn in json.load(f)["turns"]]


def tagged(messages, tag):
    out = [dict(m) for m in messages]
    out[0]["content"] = f"[session {tag}] " + out[0]["content"]
    return out


def replay(server, model, turns, tag):
    """[(ttft ms, cached tokens)] per turn."""
    out = []
    for messages in turns:
        r = stream_chat(server.port, None, {"model": model, "messages": tagged(messages, tag),
                                            "max_tokens": 1, "temperature": 0,
                                            "ignore_eos": True})
        if r["error"]:
            raise SystemExit(f"{server.name}: {r['error']}")
        details = (r["usage"] or {}).get("prompt_tokens_details") or {}
        out.append((r["ttft_ms"], details.get("cached_tokens", 0)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", default=os.path.expanduser(
        "~/.cache/ember/models/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--hop-samples", type=int, default=40)
    ap.add_argument("--hop-only", action="store_true", help="measure the router hop only")
    ap.add_argument("--turns", help="a turns file of ember-bench ttft-turns --dump-turns "
                                    "(default: made now by one ember-bench repetition)")
    args = ap.parse_args()
    serve = os.path.join(args.build, "bin", "ember-serve")
    bench = os.path.join(args.build, "bin", "ember-bench")
    workdir = tempfile.mkdtemp(prefix="bench-router-", dir=args.build)
    if args.hop_only:
        turns = []
    elif args.turns:
        with open(args.turns) as f:
            turns = [turn["messages"] for turn in json.load(f)["turns"]]
    else:
        turns = load_chat(bench, args.model, workdir)

    a = EmberServe(serve, workdir, "a", model=args.model)
    b = EmberServe(serve, workdir, "b", model=args.model)
    servers = [a, b]
    try:
        for s in (a, b):
            s.start(wait=False)
        for s in (a, b):
            s.wait_healthy()
        model = json.loads(http_get(a.port, "/v1/models")[1])["data"][0]["id"]
        both = [f"a={a.base_url}", f"b={b.base_url}"]
        affine = EmberServe(serve, workdir, "router-affinity", upstreams=both).start()
        rr = EmberServe(serve, workdir, "router-round-robin", upstreams=both,
                        extra=["--no-affinity"]).start()
        hop = EmberServe(serve, workdir, "router-one", upstreams=[f"a={a.base_url}"]).start()
        servers += [affine, rr, hop]

        arms = {"single": a, "affinity": affine, "round robin": rr}
        results = {name: [] for name in arms}
        for rep in range(args.repetitions if turns else 0):
            order = list(arms)[rep % 3:] + list(arms)[:rep % 3]  # no arm always goes first
            for name in order:
                results[name].append(replay(arms[name], model, turns, f"{rep}-{name}"))
                print(f"repetition {rep + 1}, {name}: TTFT per turn (ms) " +
                      " ".join(f"{ms:.0f}" for ms, _ in results[name][-1]), flush=True)

        if turns:
            def med(name, turn, field):
                return statistics.median(r[turn][field] for r in results[name])

            print(f"router benchmark: ember-bench ttft-turns' {len(turns)}-turn chat, 1 token per "
                  f"turn, median of {args.repetitions} repetitions; two ember-serve upstreams "
                  f"(1 thread each) on {os.path.basename(args.model)}")
            print(f"{'turn':>4} {'single ms':>10} {'affinity':>9} {'round rb':>9} {'aff/single':>11} "
                  f"{'rr/single':>10} {'cached single/aff/rr':>22}")
            for t in range(len(turns)):
                s, f, r = (med(n, t, 0) for n in arms)
                cached = "/".join(f"{med(n, t, 1):.0f}" for n in arms)
                print(f"{t + 1:>4} {s:>10.1f} {f:>9.1f} {r:>9.1f} {f / s:>10.2f}x {r / s:>9.2f}x "
                      f"{cached:>22}")
            last = len(turns) - 1
            paired = [x[last][0] / y[last][0] for x, y in zip(results["affinity"], results["single"])]
            print(f"turn {last + 1}: affinity / single upstream = {statistics.median(paired):.2f}x "
                  f"(median of paired repetitions; goal <= 1.3x); round robin / single = "
                  f"{statistics.median(x[last][0] / y[last][0] for x, y in zip(results['round robin'], results['single'])):.2f}x")
            for name in arms:
                total = statistics.median(sum(turn[1] for turn in r) for r in results[name])
                print(f"reused prompt tokens over the chat, {name}: {total:.0f}")

        # The hop: the same short cached request, direct and through the router, interleaved.
        body = {"model": model, "messages": [{"role": "user", "content": "Say one word."}],
                "max_tokens": 1, "temperature": 0, "ignore_eos": True}
        direct, routed = [], []
        for i in range(args.hop_samples + 4):
            first, second = (a, hop) if i % 2 == 0 else (hop, a)
            x, y = stream_chat(first.port, None, body), stream_chat(second.port, None, body)
            if i < 4:
                continue  # warm-up: the prompt enters the cache, connections open
            d, r = (x, y) if first is a else (y, x)
            direct.append(d["ttft_ms"]), routed.append(r["ttft_ms"])
        diffs = [r - d for d, r in zip(direct, routed)]
        print(f"router hop ({args.hop_samples} interleaved pairs, a cached 1-token request): "
              f"direct {statistics.median(direct):.2f} ms, through the router "
              f"{statistics.median(routed):.2f} ms, overhead median {statistics.median(diffs):.2f} ms "
              f"(goal < 3 ms); ratio {statistics.median(routed) / statistics.median(direct):.2f}x")
    finally:
        for s in reversed(servers):
            s.stop()


if __name__ == "__main__":
    main()
