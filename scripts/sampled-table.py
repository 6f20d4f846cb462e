#!/usr/bin/env python3
"""Aggregates scripts/sampled-compare.py's comparisons (scripts/sampled-accuracy.sh runs it):
writes the generated block of docs/accuracy/sampled.md and the expected errors the sampled
report shows (report/sampled/expected.json), those measured on the held-out programs only."""
import argparse
import datetime
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_block import write_block

# The sections the report shows an expected error for: (row of the comparison, figure id,
# what, unit, target or None). Rows in pp unless the unit says otherwise.
ROWS = [
    ("mrc combined lru", "mrc", "combined lru", "pp", 0.3),
    ("mrc shards lru", "mrc", "shards lru", "pp", 0.3),
    ("mrc statstack lru", "mrc", "statstack lru", "pp", 0.3),
    ("mrc statcache random", "mrc", "statcache random", "pp", 0.5),
    ("mrc mini random", "mrc", "mini random", "pp", 0.5),
    ("policies lru", "policies", "mini lru", "pp", 0.3),
    ("policies fifo", "policies", "mini fifo", "pp", 0.5),
    ("policies srrip", "policies", "mini srrip", "pp", 0.5),
    ("policies drrip", "policies", "mini drrip", "pp", 0.5),
    ("policies opt", "policies", "shards opt", "pp", 0.5),
    ("hotl hotl", "mrc", "hotl (time-local)", "pp", 0.5),
    ("hotl hotl-rt", "mrc", "hotl-rt", "pp", 0.5),
    ("hotl working set %", "working-set", "footprint", "%", None),
    ("hotl fill time %", "fill-time", "fill time", "%", None),
    ("three-c cold", "three-c", "cold", "pp", 0.5),
    ("three-c capacity", "three-c", "capacity", "pp", 0.5),
    ("three-c conflict", "three-c", "conflict", "pp", 0.5),
    ("l2 ji-l2-resident", "l2", "ji-l2-resident", "pp", 0.5),
    ("l2 ji-l2", "l2", "ji-l2", "pp", 0.5),
    ("l2 two-level", "l2", "two-level", "pp", 0.5),
    ("phases poec setvector", "phases", "setvector PoEC", "PoEC", 0.05),
    ("threads curves", "threads", "per-thread lru (combined)", "pp", 0.5),
]


def load(work, programs, rate, seeds):
    """{program: [comparison per seed]} and {program: timings}."""
    cmp, times = {}, {}
    for p in programs:
        runs = []
        for s in seeds:
            f = os.path.join(work, f"{p}.r{rate}.s{s}.cmp.json")
            if os.path.exists(f):
                runs.append(json.load(open(f)))
        if runs:
            cmp[p] = runs
        t = {}
        for key, f in [("exact", f"{p}.exact.time"), ("mrc", f"{p}.mrc.time"),
                       ("sampled", f"{p}.r{rate}.s{seeds[0]}.time")]:
            path = os.path.join(work, f)
            if os.path.exists(path):
                e, u, s, m = open(path).read().split()[-4:]
                t[key] = (float(e), float(u) + float(s), int(m) / 1024)
        times[p] = t
    return cmp, times


def stat(runs, row, field):
    """Mean over seeds of the row's `field`, or None."""
    vals = [r["rows"][row][field] for r in runs if row in r["rows"] and field in r["rows"][row]]
    return sum(vals) / len(vals) if vals else None


def fmt(x, unit="pp"):
    if x is None:
        return "-"
    return f"{x:.3f}" if unit == "PoEC" else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--held-out", required=True)
    ap.add_argument("--load", nargs=2, required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--expected", required=True)
    a = ap.parse_args()
    seeds = a.seeds.split()
    programs = a.programs.split()
    held = [p for p in a.held_out.split() if p in programs]
    cmp, times = load(a.work, programs, a.rate, seeds)
    progs = [p for p in programs if p in cmp]

    lines = []
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines.append(
        f"Measured by `scripts/sampled-accuracy.sh` on {datetime.date.today()} (commit {commit}), "
        f"{os.cpu_count()} cores, load average {a.load[0]} at the start and {a.load[1]} at the end: "
        f"`report --sampled --rate {a.rate}` against `report` on the same trace, seeds {', '.join(seeds)} "
        f"(each cell the mean over the seeds). Held out (the expected errors the report shows come "
        f"from these only): {', '.join(held) or 'none'}; the others were looked at while choosing the "
        f"methods. Errors are absolute differences of the miss ratio (cold misses included) in "
        f"percentage points, per program the mean over the curve's sizes and, in brackets, the worst "
        f"size; `-` where a section is absent (a one-thread program has no threads section).")
    lines.append("")
    lines.append("| section | target | " + " | ".join(progs) + " |")
    lines.append("| --- | ---: | " + " | ".join("---:" for _ in progs) + " |")
    expected = []
    for row, figure, what, unit, target in ROWS:
        cells = []
        for p in progs:
            m, w = stat(cmp[p], row, "mean"), stat(cmp[p], row, "worst")
            cells.append("-" if m is None else f"{fmt(m, unit)} ({fmt(w, unit)})")
        tgt = "-" if target is None else f"≤ {target}"
        lines.append(f"| {what} ({unit}) | {tgt} | " + " | ".join(cells) + " |")
        means = [stat(cmp[p], row, "mean") for p in held]
        means = [m for m in means if m is not None]
        if means:
            expected.append({"figure": figure, "what": what, "unit": unit,
                             "mean": sum(means) / len(means), "worst": max(means),
                             "rate": float(a.rate),
                             "measured_on": [p for p in held if stat(cmp[p], row, "mean") is not None]})
    # Attribution and sharing: counts.
    att = []
    for p in progs:
        r = [c["rows"].get("attribution top-5") for c in cmp[p]]
        r = [x for x in r if x]
        att.append("-" if not r else
                   f"{min(x['in top 7'] for x in r)}/{r[0]['structures']} in top 7, "
                   f"{min(x['within 10 %'] for x in r)} within 10 % (worst {max(x['worst %'] for x in r):.0f} %)")
    lines.append("| attribution: exact top 5 in sampled top 7, within 10 % of misses | all 5 | "
                 + " | ".join(att) + " |")
    fs = []
    for p in progs:
        r = [c["rows"].get("threads false sharing") for c in cmp[p]]
        r = [x for x in r if x]
        fs.append("-" if not r else f"{min(x['found'] for x in r)} of {r[0]['exact']}")
    lines.append("| falsely shared lines found | all | " + " | ".join(fs) + " |")
    lines.append("")
    lines.append("Time and peak memory of each run (wall seconds, CPU seconds in brackets, peak "
                 "resident MiB), seed " + seeds[0] + ":")
    lines.append("")
    lines.append("| program | data refs | sampled refs | `report` | `report --sampled` | "
                 "`mrc --method exact` | sampled / exact curve |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in progs:
        t = times[p]
        c = cmp[p][0]
        cell = lambda k: "-" if k not in t else f"{t[k][0]:.1f} ({t[k][1]:.1f}) {t[k][2]:.0f} MiB"
        ratio = "-" if not ("sampled" in t and "mrc" in t) else f"{t['sampled'][0] / t['mrc'][0]:.2f}x"
        lines.append(f"| {p} | {c['refs'] / 1e6:.1f} M | {(c['sampled_refs'] or 0) / 1e3:.0f} K | "
                     f"{cell('exact')} | {cell('sampled')} | {cell('mrc')} | {ratio} |")
    write_block(a.doc, "sampled-accuracy.sh", "\n".join(lines))
    write_block(a.doc, "sampled-accuracy.sh#lines", by_lines_block(cmp, progs, a, seeds, commit))
    write_block(a.doc, "sampled-accuracy.sh#switch", switch_block(cmp, progs, a, seeds, commit))
    json.dump(expected, open(a.expected, "w"), indent=1)
    open(a.expected, "a").write("\n")
    print("\n".join(lines))


# Ranges of sampled lines in a cache (rate x lines) for the by-lines table.
LINE_BUCKETS = [(0, 1), (1, 4), (4, 16), (16, 64), (64, 256), (256, 1024), (1024, float("inf"))]


def by_lines_block(cmp, progs, a, seeds, commit):
    """SHARDS's and StatStack's errors pooled over every program, seed and size, by the
    sampled lines the cache holds: where SHARDS stops being the better estimate."""
    pts = {"shards": [], "statstack": []}
    for p in progs:
        for c in cmp[p]:
            for m, v in (c["rows"].get("lru by sampled lines") or {}).items():
                pts[m] += v
    out = [f"Measured by `scripts/sampled-accuracy.sh` on {datetime.date.today()} (commit {commit}), "
           f"from the same runs as the block above (rate {a.rate}, seeds {', '.join(seeds)}, "
           f"{', '.join(progs)}): the LRU curve's error against exact LRU at each size, pooled over "
           f"programs and seeds by the sampled lines a cache of that size holds (rate x lines); "
           f"mean pp, worst in brackets, and the number of sizes.", "",
           "| sampled lines in the cache | sizes | SHARDS (pp) | StatStack (pp) |",
           "| --- | ---: | ---: | ---: |"]
    for lo, hi in LINE_BUCKETS:
        cells = []
        n = 0
        for m in ["shards", "statstack"]:
            e = [x[1] for x in pts[m] if lo <= x[0] < hi]
            n = max(n, len(e))
            cells.append("-" if not e else f"{sum(e) / len(e):.2f} ({max(e):.2f})")
        label = f"{lo} to {hi}" if hi != float("inf") else f"{lo} or more"
        out.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# Switches swept by the `#switch` block: SHARDS from this many sampled lines in the cache,
# StatStack below (0: SHARDS everywhere).
SWITCHES = [0, 4, 8, 16, 32, 64, 128, 256, float("inf")]


def switch_block(cmp, progs, a, seeds, commit):
    """The combined LRU curve's error had it switched from StatStack to SHARDS at each of
    SWITCHES sampled lines (StatStack only where the report trusts it), per program and pooled:
    where to put MIN_SAMPLED_LINES (report/sampled/curves.rs)."""
    out = [f"Measured by `scripts/sampled-accuracy.sh` on {datetime.date.today()} (commit {commit}), "
           f"from the same runs (rate {a.rate}, seeds {', '.join(seeds)}): the `combined` LRU "
           f"curve's error against exact LRU had it taken SHARDS's point from `T` sampled lines "
           f"in the cache and StatStack's below (StatStack only with at least 1000 reuse "
           f"samples, or 100 in the lower rows), each program's mean over its sizes and seeds (worst in brackets), and "
           f"the mean over all of them; the report's switch is `MIN_SAMPLED_LINES` in "
           f"crates/cachescope/src/report/sampled/curves.rs.", "",
           "| T, reuse samples | all | " + " | ".join(progs) + " |",
           "| ---: | ---: | " + " | ".join("---:" for _ in progs) + " |"]
    for t, min_reuses in [(t, 1000) for t in SWITCHES] + [(t, 100) for t in SWITCHES[1:]]:
        cells, pooled = [], []
        for p in progs:
            e = []
            for c in cmp[p]:
                row = c["rows"].get("lru switch")
                if not row:
                    continue
                for lines, shards, statstack in row["points"]:
                    trusted = row["reuses"] >= min_reuses
                    below = lines < t and trusted and statstack is not None
                    e.append(statstack if below else shards)
            pooled += e
            cells.append("-" if not e else f"{sum(e) / len(e):.2f} ({max(e):.2f})")
        label = "StatStack only" if t == float("inf") else ("SHARDS only" if t == 0 else str(t))
        label += "" if t == 0 else f", {min_reuses} reuses"
        all_ = "-" if not pooled else f"{sum(pooled) / len(pooled):.3f}"
        out.append(f"| {label} | {all_} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
