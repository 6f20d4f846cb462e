#!/usr/bin/env python3
"""Finds import cycles between the library's top-level modules (crates/cachescope/src).

Every `crate::NAME` path in code (not in comments), including the names inside a grouped
`use crate::{a::X, b::{..}}`, is an edge from the module of the file it is written in to the
top-level module NAME. Test code (`tests.rs`, files under a `tests/` directory, and the items
after a `#[cfg(test)]`) is left out: tests may use any module. Strongly connected components of more than one module are cycles: they
are printed and the exit status is 1. `--graph` prints every edge.

Run: python3 scripts/module-cycles.py [--graph] [SRC_DIR]  (default: the library of this checkout)
"""

import re
import sys
from pathlib import Path

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def code_of(text):
    """The text without comments (line, block and doc) and string literals' contents."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text[i] == '"' and not text[max(0, i - 1)] == "'":
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def without_tests(code):
    """`code` without each item marked `#[cfg(test)]` (up to its matching closing brace, or its
    semicolon for a `mod tests;` or a `use`)."""
    out, i = [], 0
    while True:
        j = code.find("#[cfg(test)]", i)
        if j < 0:
            out.append(code[i:])
            return "".join(out)
        out.append(code[i:j])
        k = j + len("#[cfg(test)]")
        semi, brace = code.find(";", k), code.find("{", k)
        if brace < 0 or (0 <= semi < brace):
            i = semi + 1 if semi >= 0 else len(code)
            continue
        depth = 0
        for k in range(brace, len(code)):
            depth += {"{": 1, "}": -1}.get(code[k], 0)
            if depth == 0:
                break
        i = k + 1


def grouped_heads(code, start):
    """The first path segment of each item of the `{...}` group opening at `start`."""
    heads, depth, item_start = [], 0, True
    i = start
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
            item_start = depth == 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            item_start = True
        elif item_start and depth == 1:
            m = IDENT.match(code, i)
            if m:
                heads.append(m.group(0))
                i = m.end()
                item_start = False
                continue
        i += 1
    return heads


def top_module(src, path):
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "crates/cachescope/src"
    files = [
        p
        for p in src.rglob("*.rs")
        if p.name not in ("lib.rs", "main.rs", "tests.rs")
        and "tests" not in p.relative_to(src).parts[:-1]
    ]
    modules = {top_module(src, p) for p in files}
    if not modules:
        print(f"no Rust modules under {src}", file=sys.stderr)
        return 2
    edges = {m: set() for m in modules}
    for path in files:
        here = top_module(src, path)
        code = without_tests(code_of(path.read_text()))
        for m in re.finditer(r"\bcrate::", code):
            at = m.end()
            if code.startswith("{", at):
                targets = grouped_heads(code, at)
            else:
                name = IDENT.match(code, at)
                targets = [name.group(0)] if name else []
            for t in targets:
                if t in modules and t != here:
                    edges[here].add(t)
    if "--graph" in sys.argv:
        for m in sorted(edges):
            print(f"{m} -> {', '.join(sorted(edges[m])) or '-'}")
    cycles = [c for c in strongly_connected(edges) if len(c) > 1]
    for c in cycles:
        print("cycle: " + " <-> ".join(sorted(c)))
    if cycles:
        return 1
    print(f"no cycles among {len(modules)} top-level modules")
    return 0


def strongly_connected(edges):
    """Tarjan's algorithm, iterative."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    out.append(comp)
    return out


if __name__ == "__main__":
    sys.exit(main())
