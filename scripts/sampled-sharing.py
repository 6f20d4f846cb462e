#!/usr/bin/env python3
"""The `#sharing` block of docs/accuracy/sampled.md, from scripts/sampled-accuracy.sh's runs:
the falsely shared lines of each threads example's exact report that `report --sampled --rate R`
finds on the same trace, per seed, and how (`sampled`: in the line sample; `promoted`: found by
the detector of lines two threads write, crates/cachescope/src/sharing/detect.rs), with the
found line's writes and coherence misses beside the exact report's."""
import argparse
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_block import write_block


def false_lines(report):
    sh = (report.get("threads") or {}).get("sharing") or {}
    return {l["line"]: l for l in sh.get("lines", []) if l["kind"] == "false"}


def load(path):
    return json.load(open(path)) if os.path.exists(path) else None


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--work", required=True)
    a.add_argument("--rates", required=True)
    a.add_argument("--seeds", required=True)
    a.add_argument("--programs", required=True)
    a.add_argument("--load", nargs=2, default=["?", "?"])
    a.add_argument("--doc", required=True)
    a = a.parse_args()
    seeds, rates = a.seeds.split(), a.rates.split()
    progs = [p for p in a.programs.split() if p in ("threads", "false_sharing")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    exact = {p: load(os.path.join(a.work, f"{p}.exact", "report.json")) for p in progs}
    out = [f"Measured by `scripts/sampled-accuracy.sh` on {datetime.date.today()} (commit {commit}, "
           f"`SHARE_ONLY=1`), load average {a.load[0]} at the start and {a.load[1]} at the end: the "
           f"falsely shared lines of the exact report found by `report --sampled --rate R` on the "
           f"same trace, per seed ({', '.join(seeds)}), and how (`sampled`: the line is in the "
           f"sample, which happens with probability R; `promoted`: not in the sample, found by the "
           f"detector of lines two threads write, and measured whole).", "",
           "| rate | " + " | ".join(progs) + " |", "| ---: | " + " | ".join("---" for _ in progs) + " |"]
    detail = []
    for r in rates:
        cells = []
        for p in progs:
            want = false_lines(exact[p]) if exact[p] else {}
            found = []
            for s in seeds:
                rep = load(os.path.join(a.work, f"{p}.share.r{r}.s{s}", "report.json"))
                if rep is None or not want:
                    continue
                got = false_lines(rep)
                hit = [got[l] for l in want if l in got]
                how = sorted({l.get("found", "sampled") for l in hit})
                found.append(f"{len(hit)} of {len(want)}" + (f" ({', '.join(how)})" if how else ""))
                for l in hit:
                    e = want[l["line"]]
                    promo = rep["threads"]["sharing"].get("promotion") or {}
                    detail.append(f"| {p} | {r} | {s} | {l['line']} | {l.get('found', '-')} | "
                                  f"{l['writes']:,} ({e['writes']:,}) | "
                                  f"{l['coherence_misses']:,} ({e['coherence_misses']:,}) | "
                                  f"{promo.get('promoted', '-')} | {promo.get('dropped', '-')} | "
                                  f"{promo.get('evicted', '-')} |")
            cells.append(", ".join(found) or "-")
        out.append(f"| {r} | " + " | ".join(cells) + " |")
    out += ["", "Each line found: its writes and coherence misses in the sampled report (the exact "
            "report's in brackets; the coherence misses come from the multi-core model run on the "
            "sampled stream, which holds the sampled and promoted lines only and no instruction "
            "fetches, so the threads' modelled time and their interleaving differ from the exact "
            "model's, at rate 1 too), and the detector's counts (lines found written by two "
            "threads, dropped past the cap, table entries evicted):", "",
            "| program | rate | seed | line | found | writes | coherence misses | promoted | dropped | evicted |",
            "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"] + detail
    write_block(a.doc, "sampled-accuracy.sh#sharing", "\n".join(out))


if __name__ == "__main__":
    main()
