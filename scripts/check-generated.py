#!/usr/bin/env python3
"""Checks the generated blocks of the documentation (run by .ci/run).

A figure in README.md, ARCHITECTURE.md or docs/ either names the command that reproduces it or
sits in a block a script writes:

    <!-- SCRIPT: begin -->
    Measured by `scripts/SCRIPT …` on DATE, …
    …
    <!-- SCRIPT: end -->

SCRIPT is a file under scripts/ (`program-speed.sh`) or a path from the repository's root
(`crates/cachescope/examples/accuracy`). For every block this checks that its script exists,
that it is closed (no begin without its end, no nesting), and that its first lines name the
script and a date (YYYY-MM-DD), so a reader knows what to rerun and how old the figures are.
Exits 1 listing every block that fails.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- (\S+): (begin|end) -->")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def script_path(name):
    for p in (ROOT / "scripts" / name, ROOT / name):
        if p.exists():
            return p
    return None


def check(path):
    problems, blocks = [], 0
    open_block = None
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines, 1):
        for m in MARK.finditer(line):
            name, edge = m.groups()
            where = f"{path.relative_to(ROOT)}:{n}"
            if edge == "begin":
                if open_block:
                    problems.append(f"{where}: {name} begins inside {open_block[0]} (line {open_block[1]})")
                open_block = (name, n)
                continue
            if not open_block or open_block[0] != name:
                problems.append(f"{where}: {name} ends without its begin")
                continue
            blocks += 1
            start = open_block[1]
            open_block = None
            if script_path(name) is None:
                problems.append(f"{where}: no script {name} (scripts/{name} or {name})")
            head = "\n".join(lines[start : min(start + 4, n - 1)])
            if name.split("/")[-1] not in head:
                problems.append(f"{where}: the block's first lines do not name {name}")
            if not DATE.search(head):
                problems.append(f"{where}: the block's first lines give no date (YYYY-MM-DD)")
    if open_block:
        problems.append(f"{path.relative_to(ROOT)}:{open_block[1]}: {open_block[0]} never ends")
    return problems, blocks


def main():
    files = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
    problems, blocks = [], 0
    for f in files:
        p, b = check(f)
        problems += p
        blocks += b
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{blocks} generated blocks in {len(files)} files, each with its script, command and date")


if __name__ == "__main__":
    main()
