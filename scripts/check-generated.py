#!/usr/bin/env python3
"""Checks the generated blocks of the documentation (run by .ci/run).

A figure in README.md, ARCHITECTURE.md or docs/ either names the command that reproduces it or
sits in a block a script writes:

    <!-- SCRIPT: begin -->
    Measured by `scripts/SCRIPT …` on DATE, …
    …
    <!-- SCRIPT: end -->

SCRIPT is a file under scripts/ (`program-speed.sh`) or a path from the repository's root
(`crates/cachescope/examples/accuracy`), with `#part` where a script writes several blocks
into one page (`advice-accuracy.sh#pairs`); the scripts under scripts/ write their blocks with
scripts/docs_block.py. For every block this checks that its script exists, that it is closed (no
begin without its end, no nesting), and that its first lines name the script and a date
(YYYY-MM-DD), so a reader knows what to rerun and how old the figures are.

Outside the blocks it looks for typed figures: a paragraph or table holding a measured figure
(percentage points, a percentage, a ratio such as `2.1x`, references per second) that names no
command (a backticked `scripts/…`, `cargo …`, `cachescope …`, … or a path under scripts/ or
examples/; a table may name it in the paragraph just before). README.md, ARCHITECTURE.md and
docs/accuracy/ may hold none; the other pages may hold no more than UNSOURCED lists (the
paragraphs issue 62 left to source: the count can only go down). A figure typed into a page
therefore fails, unless it says how to reproduce it. A figure edited by hand *inside* a block is
not caught: only rerunning the block's script shows that.

    scripts/check-generated.py              # the check CI runs
    scripts/check-generated.py --list       # every paragraph with a figure and no command
    scripts/check-generated.py --self-test  # the checker against documents made to fail

Exits 1 listing every block and paragraph that fails.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- (\S+): (begin|end) -->")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
# A measured figure: percentage points, a percentage, a ratio, a rate of references.
FIGURE = re.compile(
    r"(?<![\w.])(?!0x)\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?\s?"
    r"(?:pp\b|%|x\b|×|M references/s|references/s|refs/s)"
)
# What names the command that reproduces a figure.
COMMAND = re.compile(
    r"`(?:scripts/|cargo |cachescope |python3 |bash |/usr/bin/time|perf |valgrind |[A-Z_]+=)[^`]*`"
    r"|scripts/[\w.-]+\.(?:sh|py)|examples/\w+"
)
# In README.md, ARCHITECTURE.md and docs/accuracy/ only a script, a bench or an example does:
# `cachescope convert A B` beside "24x smaller" names what was done, not how it was measured.
# A figure quoted from an older table names the `git show COMMIT:PATH` that shows it.
STRICT_COMMAND = re.compile(
    r"`(?:scripts/|(?:[A-Z_]+=\S* )*(?:bash |python3 )?scripts/|cargo (?:bench|run|test) |git show )[^`]*`"
    r"|scripts/[\w.-]+\.(?:sh|py)|examples/\w+"
)
# In a fenced code block of pasted output, the shell prompt line of the command that printed it.
PROMPT = re.compile(r"\s*\$ (?:cachescope|valgrind|cargo|scripts/|bash scripts/|python3 scripts/) ")
STRICT = ("README.md", "ARCHITECTURE.md", "docs/accuracy/")
# Pages with paragraphs of figures issue 62 left without their command (engineering notes with
# dated measurements): each may keep at most this many, never more.
UNSOURCED = {
    # None left: a page may hold no paragraph with a figure and no command. Kept so that a page
    # that must carry one (a quoted figure whose command is gone) says so here, with why.
}


def script_path(name):
    name = name.split("#")[0]  # SCRIPT#part: one of several blocks a script writes
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
            if name.split("#")[0].split("/")[-1] not in head:
                problems.append(f"{where}: the block's first lines do not name {name}")
            if not DATE.search(head):
                problems.append(f"{where}: the block's first lines give no date (YYYY-MM-DD)")
    if open_block:
        problems.append(f"{path.relative_to(ROOT)}:{open_block[1]}: {open_block[0]} never ends")
    return problems, blocks


def units(lines):
    """The paragraphs, list items, tables and fenced code blocks outside generated blocks:
    lists of (line, text). A code block is one unit however many blank lines it holds."""
    out, cur, kind, inside, fence = [], [], None, False, False
    for n, line in enumerate(lines, 1):
        m = MARK.search(line)
        if m:
            if cur:
                out.append(cur)
            cur, kind, inside = [], None, m.group(2) == "begin"
            continue
        if inside:
            continue
        if line.lstrip().startswith("```"):
            if not fence and cur:
                out.append(cur)
                cur = []
            cur.append((n, line))
            if fence:
                out.append(cur)
                cur, kind = [], None
            fence = not fence
            continue
        if fence:
            cur.append((n, line))
            continue
        k = None
        if line.strip():
            k = "h" if line.startswith("#") else "t" if line.lstrip().startswith("|") else "p"
        item = k == "p" and re.match(r"\s{0,3}(?:[-*+]|\d+\.) ", line)
        if k != kind or k in (None, "h") or item:
            if cur:
                out.append(cur)
            cur = []
        kind = k
        if k and k != "h":
            cur.append((n, line))
    if cur:
        out.append(cur)
    return out


def typed(lines, command=COMMAND):
    """The paragraphs and tables that hold a figure and name no command: (line, excerpt).

    A table is sourced by the paragraph just before it, and the paragraph just after a sourced
    table (its reading) by the table."""
    found, before = [], (False, False)  # (the unit before was a table, it was sourced)
    for unit in units(lines):
        text = " ".join(l for _, l in unit)
        table = unit[0][1].lstrip().startswith("|")
        # Pasted output: sourced by the prompt line of the command that printed it.
        code = unit[0][1].lstrip().startswith("```")
        prompt = code and any(PROMPT.match(l) for _, l in unit)
        sourced = bool(command.search(text)) or prompt or (before[1] and (table or before[0]))
        if FIGURE.search(text) and not sourced:
            found.append((unit[0][0], FIGURE.search(text).group(0), text[:100]))
        before = (table, sourced)
    return found


def check_typed(path, name, allowed):
    strict = name.startswith(STRICT)
    found = typed(path.read_text().splitlines(), STRICT_COMMAND if strict else COMMAND)
    if len(found) <= allowed:
        return [], found
    why = "may hold none" if allowed == 0 else f"may hold at most {allowed} (UNSOURCED)"
    head = f"{name}: {len(found)} paragraphs with a figure and no command; it {why}:"
    return [head] + [f"  {name}:{n}: {fig!r} in: {text}" for n, fig, text in found], found


def files():
    return [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]


def self_test():
    """The checker against documents made to fail, and the same made to pass."""
    import tempfile

    cases = [
        ("a figure typed", "The model errs by 0.12 pp on gzip.\n", 1),
        ("the same naming its command", "The model errs by 0.12 pp (`scripts/accuracy.sh hotl`).\n", 0),
        ("a typed ratio in a table", "Speed:\n\n| a | b |\n|---|---|\n| record | 2.1x |\n", 1),
        ("a table after its command", "By `scripts/record-speed.sh`:\n\n| a |\n|---|\n| 2.1x |\n", 0),
        ("its reading after it", "By `scripts/r.sh`:\n\n| a |\n|---|\n| 2 |\n\nRead: 2.1x.\n", 0),
        ("a paragraph after the reading", "By `scripts/r.sh`:\n\n| a |\n|---|\n| 2 |\n\nRead.\n\nSo 2.1x.\n", 1),
        ("inside a block", "<!-- x: begin -->\nMeasured by `scripts/x` on 2026-01-01.\n38 % here.\n<!-- x: end -->\n", 0),
        ("no figure", "Sizes from 1 KiB to 1 GiB, 64 sets.\n", 0),
        ("a list item's figure, its neighbour's command", "- by `scripts/a.sh`\n- 0.5 pp\n", 1),
        ("pasted output", "Output:\n\n```\nmisses 7.11%\n\nrate 2.5x\n```\n", 1),
        ("pasted output under its prompt", "```\n$ cachescope attribute t.cst\nmisses 7.11%\n\nrate 2.5x\n```\n", 0),
    ]
    strict_cases = [
        ("a command that measures nothing", "`cachescope convert a b` (~24x smaller).\n", 1),
        ("the script that measures it", "~24x smaller (`scripts/record-speed.sh`).\n", 0),
    ]
    bad = []
    runs = [(w, t, n, COMMAND) for w, t, n in cases]
    runs += [(w, t, n, STRICT_COMMAND) for w, t, n in strict_cases]
    for what, text, want, command in runs:
        got = len(typed(text.splitlines(), command))
        if got != want:
            bad.append(f"self-test: {what}: {got} typed figures found, {want} expected")
    with tempfile.TemporaryDirectory() as d:
        doc = pathlib.Path(d) / "x.md"
        doc.write_text("<!-- no-such-script.sh: begin -->\n1 pp\n<!-- no-such-script.sh: end -->\n")
        global ROOT
        root, ROOT = ROOT, pathlib.Path(d)
        try:
            problems, _ = check(doc)
        finally:
            ROOT = root
        if not any("no script" in p for p in problems) or not any("date" in p for p in problems):
            bad.append(f"self-test: a block with no script and no date passed: {problems}")
        # The repository's own README with one figure typed into it.
        readme = pathlib.Path(d) / "README.md"
        readme.write_text((ROOT / "README.md").read_text() + "\nrecord is 3.2x faster than lackey.\n")
        problems, _ = check_typed(readme, "README.md", 0)
        if not any("'3.2x'" in p for p in problems):
            bad.append(f"self-test: a figure typed into README.md passed: {problems}")
    for b in bad:
        print(b)
    if bad:
        sys.exit(1)
    print(f"self-test: {len(runs) + 2} documents, each caught or passed as it should be")


def main():
    if "--self-test" in sys.argv:
        self_test()
        return
    listing = "--list" in sys.argv
    problems, blocks, left = [], 0, 0
    for f in files():
        p, b = check(f)
        problems += p
        blocks += b
        name = str(f.relative_to(ROOT))
        p, found = check_typed(f, name, UNSOURCED.get(name, 0))
        problems += p
        left += len(found)
        if listing:
            for n, fig, text in found:
                print(f"{name}:{n}: {fig!r} in: {text}")
        elif len(found) < UNSOURCED.get(name, 0):
            print(f"note: {name} has {len(found)} unsourced paragraphs, UNSOURCED allows "
                  f"{UNSOURCED[name]}: lower it")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{blocks} generated blocks in {len(files())} files, each with its script, command and "
          f"date; {left} paragraphs with figures and no command, none beyond UNSOURCED")


if __name__ == "__main__":
    main()
