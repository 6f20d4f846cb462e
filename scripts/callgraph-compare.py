#!/usr/bin/env python3
"""Compares a Callgrind output file with `cachescope attribute --callgraph --json` of the same
program (scripts/callgraph-callgrind.sh): prints a Markdown section with the top 10 functions
by inclusive D1 misses on both sides and whether they come in the same order; for the example
(INDEX 0) the call counts of every caller/callee pair of its functions too.

    callgraph-compare.py CALLGRIND.OUT CACHESCOPE.JSON TITLE INDEX
"""
import json
import os
import re
import sys
from collections import defaultdict

TOP = 10
EXAMPLE = ["main", "stream", "strided", "sum", "descend", "leaf", "walk", "chase"]
# Valgrind names these "(below main)" (its --show-below-main=no); glibc's versioned alias of
# its start function is what Callgrind shows for __libc_start_main_impl.
BELOW_MAIN = {"__libc_start_call_main", "generic_start_main", "_start"}
ALIASES = {"__libc_start_main_impl": "__libc_start_main"}


def callgrind(path):
    """(self costs, calls) of a Callgrind file: self[(fn, ob)] = [costs]; calls[(caller,
    callee)] = [count, [costs]]."""
    names = {}

    def name(kind, spec):
        m = re.match(r"\((\d+)\)\s*(.*)$", spec)
        if not m:
            return spec
        if m.group(2):
            names[kind, m.group(1)] = m.group(2)
        return names[kind, m.group(1)]

    events, own, calls = [], defaultdict(list), {}
    ob = fn = cob = cfn = None
    pending = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = (name("fn", line[3:]), ob)
            elif line.startswith("cob="):
                cob = name("ob", line[4:])
            elif line.startswith("cfn="):
                cfn = (name("fn", line[4:]), cob or ob)
                cob = None
            elif line.startswith(("fl=", "fi=", "fe=")):
                name("fl", line[3:])
            elif line.startswith(("cfl=", "cfi=")):
                name("fl", line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                values = [int(v) for v in line.split()[1:]]
                values += [0] * (len(events) - len(values))
                if pending is not None:
                    c = calls.setdefault((fn, cfn), [0, [0] * len(events)])
                    c[0] += pending
                    c[1] = [a + b for a, b in zip(c[1], values)]
                    pending = None
                else:
                    cur = own[fn] or [0] * len(events)
                    own[fn] = [a + b for a, b in zip(cur, values)]
    return events, own, calls


def normal(name, obj):
    """A function's name as both sides can agree on it."""
    base = os.path.basename(obj or "")
    if re.fullmatch(r"0x[0-9a-f]+", name):
        return f"{base}+0x{int(name, 16):x}"
    name = re.sub(r"@.*$", "", name)
    if name in BELOW_MAIN or name == "(below main)":
        # Several functions are "(below main)" in Valgrind: told apart by their object.
        return f"(below main) in {base}"
    return ALIASES.get(name, name)


def callgrind_inclusive(path):
    events, own, calls = callgrind(path)
    d1 = [events.index("D1mr"), events.index("D1mw")]
    miss = lambda costs: sum(costs[i] for i in d1)
    incoming, outgoing = defaultdict(int), defaultdict(int)
    called = set()
    for (a, b), (_, costs) in calls.items():
        if a == b:
            continue
        incoming[b] += miss(costs)
        outgoing[a] += miss(costs)
        called.add(b)
    funcs = set(own) | {f for pair in calls for f in pair}
    incl = {}
    for f in funcs:
        value = incoming[f] if f in called else miss(own.get(f) or [0] * len(events)) + outgoing[f]
        key = normal(*f)
        incl[key] = max(incl.get(key, 0), value)
    pairs = defaultdict(int)
    for (a, b), (n, _) in calls.items():
        pairs[normal(*a), normal(*b)] += n
    return incl, pairs


def ours(path):
    r = json.load(open(path))
    incl = {}
    for f in r["functions"]:
        if f["inclusive"] is None:
            continue
        key = normal(f["function"], f.get("object") or "")
        incl[key] = incl.get(key, 0) + f["inclusive"]["D1mr"] + f["inclusive"]["D1mw"]
    objects = {f["function"]: f.get("object") or "" for f in r["functions"]}
    pairs = defaultdict(int)
    for c in r["calls"]:
        a, b = c["caller"], c["callee"]
        pairs[normal(a, objects.get(a, "")), normal(b, objects.get(b, ""))] += c["calls"]
    return incl, pairs


def top(incl):
    return sorted(incl.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]


def main():
    cg_path, cs_path, title, index = sys.argv[1:5]
    cg_incl, cg_pairs = callgrind_inclusive(cg_path)
    cs_incl, cs_pairs = ours(cs_path)
    a, b = top(cg_incl), top(cs_incl)
    same = [n for n, _ in a] == [n for n, _ in b]
    print(f"**{title}**: the top {TOP} by inclusive D1 misses are in the same order: "
          f"{'yes' if same else 'no'}.\n")
    print("| rank | Callgrind | D1 misses | cachescope | D1 misses |")
    print("| ---: | --- | ---: | --- | ---: |")
    for k in range(TOP):
        left = a[k] if k < len(a) else ("", 0)
        right = b[k] if k < len(b) else ("", 0)
        print(f"| {k + 1} | `{left[0]}` | {left[1]:,} | `{right[0]}` | {right[1]:,} |")
    if index == "0":
        keys = sorted({p for p in list(cg_pairs) + list(cs_pairs)
                       if p[0] in EXAMPLE and p[1] in EXAMPLE})
        equal = all(cg_pairs[p] == cs_pairs[p] for p in keys)
        print(f"\nCalls between the example's functions, equal for every pair: "
              f"{'yes' if equal else 'no'}.\n")
        print("| caller | callee | Callgrind | cachescope |")
        print("| --- | --- | ---: | ---: |")
        for p in keys:
            print(f"| `{p[0]}` | `{p[1]}` | {cg_pairs[p]} | {cs_pairs[p]} |")


if __name__ == "__main__":
    main()
