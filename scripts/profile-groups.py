#!/usr/bin/env python3
"""Groups a perf profile of `cachescope report` by analysis (docs/report.md, "Where this leaves
the two report targets").

    perf record -e cpu-clock -F 499 -g -o perf.data cachescope report -q -o DIR TRACE
    perf report -i perf.data --no-children --sort symbol -g none | python3 scripts/profile-groups.py

Each symbol's share goes to the first group whose pattern it matches, in the order below; the
rest is printed with its largest symbols, so a symbol that belongs to a group shows up there.
"""
import re
import sys

# First match wins: OPT's heap before anything named like a decoder, the analyses before the
# generic decode patterns.
GROUPS = [
    ("OPT (spill, next uses, stack)", r"opt::|NextUse|RunHeap|OptStack|Runs<"),
    ("FIFO/SRRIP/DRRIP caches", r"rrip|mini::|MiniSim|victim"),
    ("attribution", r"attribution::"),
    ("HOTL time-local pass", r"hotl::local"),
    ("random replacement", r"reuse::random"),
    ("decode and data index", r"decode|ZSTD|HUF_|index_data|memmove|memset|_copy_to_iter|read"),
    ("stack distances and 3C caches",
     r"stack_distance|timestamps|ordered_fixed|three_c|LiveSet|access_outcome|lazy_cache|TwoLevel"),
    ("phases", r"phases::"),
    ("footprint", r"footprint"),
    ("sampler", r"sampling::"),
]


def main():
    shares = {name: 0.0 for name, _ in GROUPS}
    rest = []
    for line in sys.stdin:
        m = re.match(r"\s*([0-9.]+)%\s+(.*)", line)
        if not m or line.lstrip().startswith("#"):
            continue
        share, symbol = float(m.group(1)), m.group(2).strip()
        for name, pattern in GROUPS:
            if re.search(pattern, symbol):
                shares[name] += share
                break
        else:
            rest.append((share, symbol))
    for name, _ in GROUPS:
        print(f"{shares[name]:5.1f} %  {name}")
    print(f"{sum(s for s, _ in rest):5.1f} %  the rest; its largest:")
    for share, symbol in sorted(rest, reverse=True)[:8]:
        print(f"         {share:5.2f} %  {symbol[:90]}")


if __name__ == "__main__":
    main()
