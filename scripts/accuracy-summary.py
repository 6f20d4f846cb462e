#!/usr/bin/env python3
"""Writes the headline table of docs/accuracy/README.md from the tables themselves.

Each table of docs/accuracy/ ends its generated block with summary lines (means and worst
cases, written by the script that measured it); this copies them, with the date each table was
measured, between the README's `<!-- accuracy-summary.py: begin/end -->` markers. Run it after
any of the accuracy scripts (scripts/accuracy.sh runs it last), so that no headline is typed.

    scripts/accuracy-summary.py
"""

import datetime
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from docs_block import write_block

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "accuracy"

# (table, what it measures, the reference, how to find its summary lines)
TABLES = [
    ("sampling.md", "StatCache, StatStack", "exact random-replacement simulation, exact LRU",
     lambda t: [l for l in t if l.startswith("At about 10k samples")]),
    ("hotl.md", "HOTL: paper and time-local readings, hotl-rt", "exact LRU",
     lambda t: [l for l in t if l.startswith("- **")]),
    ("corun.md", "HOTL co-run sharing (`corun`)", "two programs simulated in one cache",
     lambda t: [f"{h.lstrip('# ')}: {s}" for h, s in zip(t, t[2:])
                if h.startswith("## ") and re.match(r"\d+ predictions", s)]),
    ("l2.md", "Ji et al.'s L2 model", "exact two-level simulation",
     lambda t: [l for l in t if l.startswith("| **mean**") or l.startswith("| **worst point**")]),
    ("mini.md", "miniature simulation (`--method mini`)", "full per-size simulation",
     lambda t: [l for l in t if l.startswith("With the floor of")]),
    ("peers.md", "cachescope against libCacheSim", "libCacheSim's LRU, FIFO, Random, SHARDS",
     lambda t: [l for l in t if l.startswith("Largest difference") or l.startswith("Lowest mean error")]),
    ("phases.md", "setvectors and the other phase signatures", "L2 hit-rate classes (PoEC)",
     lambda t: [l for l in t if l.startswith("Ranking on the real programs")]),
]


def measured(lines):
    for l in lines:
        m = re.search(r"Measured by `[^`]*` on (\d{4}-\d\d-\d\d)", l)
        if m:
            return m.group(1)
    return "not regenerated since issue 62 (no date in the table)"


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def main():
    rows = []
    for name, what, reference, find in TABLES:
        path = DOCS / name
        if not path.exists():
            rows.append(f"| {name} | {what} | {reference} | (no table) | |")
            continue
        lines = path.read_text().splitlines()
        summary = [l.strip() for l in find(lines)]
        if name == "l2.md":
            # The mean and worst rows: LRU resident and random fills, the defaults.
            out = []
            for l in summary:
                c = [x.strip() for x in l.strip("|").split("|")]
                label = "mean" if "mean" in c[0] else "worst point"
                out.append(f"{label}: LRU (resident) {c[5]} pp, random (fills) {c[9]} pp; "
                           f"the paper's reading LRU {c[3]}, random {c[6]}")
            summary = out
        text = "<br>".join(cell(s) for s in summary) or "(no summary line found)"
        rows.append(f"| [{name}]({name}) | {what} | {reference} | {text} | {measured(lines)} |")
    block = (
        f"Measured by `scripts/accuracy-summary.py` on {datetime.date.today().isoformat()}: "
        "each table's own summary lines (means with their worst cases), copied; the last "
        "column is when the table itself was measured.\n\n"
        "| table | model | reference | summary | measured |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
    )
    readme = DOCS / "README.md"
    write_block(readme, "accuracy-summary.py", block)
    print(f"accuracy-summary: wrote {len(rows)} rows into {readme}")


if __name__ == "__main__":
    main()
