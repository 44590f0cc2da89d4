#!/usr/bin/env python3
"""Two or more ember-bench builds side by side: the same figure run by each build in turn,
A B, then B A, then A B ... (so that a machine that speeds up or slows down during the run weighs
on every build alike), one repetition per run. Prints, per figure, each build's median and
min-max, and each build's median over the first build's (--json: one object per figure).
Each ember-bench figure warms up before it measures.
  scripts/bench_ab.py --runs 5 --bench old/ember-bench --bench build/bin/ember-bench \
      -- batch --model M.gguf --concurrency 1,8 --threads 2
Everything after `--` goes to every ember-bench run (with --repetitions 1 --json added).
"""
import argparse
import json
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="append", required=True,
                    help="an ember-bench binary (give two or more)")
    ap.add_argument("--runs", type=int, default=5, help="runs of each build")
    ap.add_argument("--json", action="store_true", help="one JSON object per figure instead")
    ap.add_argument("figure", nargs=argparse.REMAINDER, help="-- FIGURE ARGS...")
    a = ap.parse_args()
    figure = a.figure[1:] if a.figure[:1] == ["--"] else a.figure
    if len(a.bench) < 2 or not figure:
        ap.error("give two or more --bench binaries and a figure after --")
    samples = {b: {} for b in a.bench}  # build -> figure -> values
    order = []
    for run in range(a.runs):
        for b in a.bench if run % 2 == 0 else a.bench[::-1]:
            out = subprocess.run([b] + figure + ["--repetitions", "1", "--json"], check=True,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                if r["figure"] not in order:
                    order.append(r["figure"])
                samples[b].setdefault(r["figure"], []).append(r["median"])
    names = [chr(ord("A") + i) for i in range(len(a.bench))]
    # figure -> one summary per build that reported it, the first build's median as the base
    summaries = {}
    for fig in order:
        rows = []
        for n, b in zip(names, a.bench):
            v = samples[b].get(fig)
            if v:
                rows.append({"name": n, "build": b, "median": statistics.median(v),
                             "min": min(v), "max": max(v), "runs": len(v)})
        base = rows[0]["median"] if rows and rows[0]["build"] == a.bench[0] else 0
        for r in rows:
            r["over_first"] = r["median"] / base if base else None
        summaries[fig] = rows
    if a.json:
        for fig, rows in summaries.items():
            print(json.dumps({"figure": fig, "builds": rows, "arguments": figure}))
        return 0
    print("builds: " + ", ".join(f"{n} = {b}" for n, b in zip(names, a.bench)))
    for fig, rows in summaries.items():
        cells = []
        for r in rows:
            cell = f"{r['name']} {r['median']:.4g} ({r['min']:.4g}-{r['max']:.4g})"
            if r["over_first"] is not None and r["build"] != a.bench[0]:
                cell += f" = {r['over_first']:.2f}x"
            cells.append(cell)
        print(f"{fig:36s} " + "   ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
