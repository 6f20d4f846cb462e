#!/usr/bin/env python3
"""The per-structure line sample (`attribute --per-structure RATE`) against the exact
attribution: for each program, budget and seed, the exact report's five structures with the
most misses, each in the estimate's top seven and within 10 % of its exact misses (the issue's
target, as scripts/sampled-compare.py reads it for `report --sampled`). Writes the
`sampled-accuracy.sh#per-structure` block of docs/accuracy/sampled.md; called by
scripts/sampled-accuracy.sh, which ran `attribute` into WORK/P.ps.BUDGET.sS.json."""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_block import write_block


def score(exact, est):
    """(in top 7, within 10 %, worst error %, errors by structure) of the exact top five."""
    top = exact[:5]
    ranked = sorted(est, key=lambda b: (-b["misses"], -b["refs"], b["name"]))[:7]
    found, within, worst, errs = 0, 0, 0.0, []
    for s in top:
        t = next((x for x in ranked if x["name"] == s["name"]), None)
        if t is None:
            worst = max(worst, 100.0)
            errs.append(None)
            continue
        found += 1
        err = 100 * abs(t["misses"] - s["misses"]) / max(s["misses"], 1)
        errs.append(err)
        worst = max(worst, err)
        within += err <= 10
    return found, within, worst, errs


def full_lines(notes):
    for n in notes:
        m = re.search(r"sample: (\d+) lines at rate 1", n)
        if m:
            return int(m.group(1))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--budgets", required=True)
    ap.add_argument("--load", nargs=2, required=True)
    ap.add_argument("--doc", required=True)
    a = ap.parse_args()
    seeds, progs, budgets = a.seeds.split(), a.programs.split(), a.budgets.split()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    head = ["budget (lines at rate 1: per structure, in all)"] + progs
    rows = []
    for b in budgets:
        cells = []
        for p in progs:
            exact = json.load(open(os.path.join(a.work, f"{p}.exact", "report.json")))
            exact = (exact.get("attribution") or {}).get("structures") or []
            runs = []
            for s in seeds:
                path = os.path.join(a.work, f"{p}.ps.{b}.s{s}.json")
                if os.path.exists(path) and exact:
                    est = json.load(open(path))
                    runs.append((score(exact, est["buckets"]), full_lines(est.get("notes", []))))
            if not runs:
                cells.append("-")
                continue
            found = min(r[0][0] for r in runs)
            within = min(r[0][1] for r in runs)
            worst = max(r[0][2] for r in runs)
            lines = max(r[1] or 0 for r in runs)
            cells.append(f"{found}/5 in top 7, {within} within 10 % (worst {worst:.0f} %); "
                         f"{lines} lines at rate 1")
        label = "0, 0 (uniform)" if b == "0,0" else b.replace(",", ", ")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    date = datetime.date.today().isoformat()
    block = "\n".join([
        f"Measured by `scripts/sampled-accuracy.sh` on {date} (commit {commit}), load average "
        f"{a.load[0]} at the start and {a.load[1]} at the end: `attribute --per-structure "
        f"{a.rate} --per-structure-lines PER,TOTAL --seed S --json TRACE` against the exact "
        f"report's attribution of the same trace, seeds {', '.join(seeds)}; each cell the worst "
        "seed (fewest found, fewest within 10 %, largest error) and the most lines kept at "
        "rate 1. Budget 0, 0 is the uniform line sample at the miniature's rate.",
        "",
        "| " + " | ".join(head) + " |",
        "| --- | " + " | ".join("---" for _ in progs) + " |",
        *rows,
    ])
    write_block(a.doc, "sampled-accuracy.sh#per-structure", block)


if __name__ == "__main__":
    main()
