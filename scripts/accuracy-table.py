#!/usr/bin/env python3
"""Turns bench_published's JSON lines (standard input) into the Markdown tables of docs/accuracy.md.

    build/bench/bench_published --json | scripts/accuracy-table.py

Per run: GPUs, the published primary figure, exasim's, the relative error, and the ablation (the
iteration built up from compute alone, + collectives, + pipeline bubble, + interference, each as its
error against the published time). Then per suite: mean and largest |error|.
"""
import json
import sys


def main():
    runs, summary = [], None
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("{"):
            continue
        doc = json.loads(line)
        if doc.get("kind") == "run":
            runs.append(doc)
        elif doc.get("kind") == "summary":
            summary = doc
    print("| run | GPUs | figure | published | exasim | error | compute alone | + collectives | + bubble | + interference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        if "primary_relative_error_pct" not in r:
            print(f"| {r['run']} | | | | | {r.get('error', r.get('skipped', ''))} | | | | |")
            continue
        primary = r["primary"]
        pub = r["published"][primary]
        pred = r["predicted"][primary]
        steps = [f"{s['error_pct']:+.1f} %" if "error_pct" in s else "" for s in r.get("ablation", [])]
        steps += [""] * (4 - len(steps))
        fits = "" if r["memory"]["fits_memory"] else " (over memory)"
        print(f"| {r['run']}{fits} | {r['gpus']} | {primary} | {pub:.4g} | {pred:.4g} | "
              f"{r['primary_relative_error_pct']:+.1f} % | " + " | ".join(steps) + " |")
    if summary:
        print()
        print("| suite | runs | mean abs. error | mean error | largest abs. error |")
        print("|---|---|---|---|---|")
        for name, s in summary["suites"].items():
            if "mean_abs_relative_error_pct" not in s:
                continue
            print(f"| {name} | {s['simulated']} | {s['mean_abs_relative_error_pct']:.1f} % | "
                  f"{s['mean_relative_error_pct']:+.1f} % | {s.get('max_abs_relative_error_pct', float('nan')):.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
