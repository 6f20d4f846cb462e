#!/usr/bin/env python3
"""Writes one generated block of a docs page: the last step of every measuring script.

A block is `<!-- NAME: begin -->`, its content, `<!-- NAME: end -->`, each marker on its own line
(scripts/check-generated.py describes and checks the convention; NAME is the script, with `#part`
where a script writes several blocks into one page). Writing a block replaces what stands
between its markers with `begin\\nCONTENT\\nend`, the content verbatim (backslashes and regex
characters included); everything outside the markers is kept byte for byte. It fails, naming
the page and the marker, when a marker is missing or the block stands twice: a block is made by
hand, once, where the page wants it, never appended by a script.

    printf '%s' "$table" | python3 scripts/docs_block.py PAGE NAME   # the content from stdin
    python3 scripts/docs_block.py PAGE NAME --file F                 # or from a file
    python3 scripts/docs_block.py --self-test                        # run by .ci/run

The content is taken as it comes: `printf '%s'` passes a shell variable unchanged, where `echo`
or `<<<` would add a newline (a blank line before the end marker). From Python:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from docs_block import write_block
    write_block("docs/tlb.md", "tlb-curves.sh", text)
"""

import argparse
import sys


class BlockError(SystemExit):
    """A page without the block's markers, or with them twice. A SystemExit, so a script that
    does not catch it stops with the message alone (exit status 1), as the inline copies did."""


def markers(name):
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"


def replace_block(text, name, content, page="the page"):
    """`text` with the block NAME's content replaced by `content`."""
    begin, end = markers(name)
    for marker in (begin, end):
        count = text.count(marker)
        if count == 0:
            raise BlockError(f"{page}: no {marker} marker (block {name})")
        if count > 1:
            raise BlockError(f"{page}: {marker} stands {count} times; block {name} must stand once")
    start, stop = text.index(begin), text.index(end)
    if stop < start:
        raise BlockError(f"{page}: {end} comes before {begin}")
    # Slices, not re.sub: a replacement string would read `\1` or `\n` in the content as escapes.
    return text[:start] + begin + "\n" + content + "\n" + text[stop:]


def write_block(page, name, content):
    """Replaces the block NAME of the file `page` (a path) with `content`."""
    try:
        with open(page, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BlockError(f"{page}: cannot read it ({e.strerror})")
    new = replace_block(text, name, content, page)
    with open(page, "w", encoding="utf-8") as f:
        f.write(new)


def self_test():
    import os
    import tempfile

    def page(text):
        fd, path = tempfile.mkstemp(suffix=".md")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def read(path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def fails(text, name, want):
        path = page(text)
        try:
            write_block(path, name, "new")
        except BlockError as e:
            assert path in str(e) and want in str(e), f"message {e!r} should name {path} and {want!r}"
            assert read(path) == text, "a failed write changed the page"
            return
        finally:
            os.unlink(path)
        raise AssertionError(f"no error for {text!r}")

    b, e = markers("x.sh")
    pb, pe = markers("x.sh#part")
    cases = [
        # (content, page before, page after)
        ("new", f"head\n{b}\nold\nlines\n{e}\ntail\n", f"head\n{b}\nnew\n{e}\ntail\n"),
        ("", f"{b}\nold\n{e}", f"{b}\n\n{e}"),
        ("two\nlines\n", f"{b}\n{e}\n", f"{b}\ntwo\nlines\n\n{e}\n"),
        # Regex and replacement-string specials, backslashes, a group reference, markers' text.
        (r"a\1 \g<0> \n \\ $& .*? (x) [y] ^$ 100 %", f"{b}\nold\n{e}\n",
         f"{b}\n" + r"a\1 \g<0> \n \\ $& .*? (x) [y] ^$ 100 %" + f"\n{e}\n"),
        # One part of a script's blocks: the other part and the plain name are left alone.
        ("p", f"{b}\nkeep\n{e}\n{pb}\nold\n{pe}\n", f"{b}\nkeep\n{e}\n{pb}\np\n{pe}\n"),
    ]
    for i, (content, before, after) in enumerate(cases):
        name = "x.sh#part" if i == 4 else "x.sh"
        path = page(before)
        try:
            write_block(path, name, content)
            got = read(path)
        finally:
            os.unlink(path)
        assert got == after, f"case {i}: {got!r} != {after!r}"
    fails("no block here\n", "x.sh", b)
    fails(f"{b}\nnever ends\n", "x.sh", e)
    fails(f"starts nowhere\n{e}\n", "x.sh", b)
    fails(f"{b}\na\n{e}\n{b}\nb\n{e}\n", "x.sh", "2 times")
    fails(f"{e}\n{b}\n", "x.sh", "before")
    fails(f"{b}\na\n{e}\n", "y.sh", "y.sh: begin")
    print(f"docs_block: self-test passed ({len(cases)} writes, 6 refusals)")


def main():
    ap = argparse.ArgumentParser(description="Writes a generated block of a docs page.")
    ap.add_argument("page", nargs="?")
    ap.add_argument("name", nargs="?", help="the block's name: SCRIPT or SCRIPT#part")
    ap.add_argument("--file", help="read the content from this file, not standard input")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if not a.page or not a.name:
        ap.error("PAGE and NAME are needed")
    if a.file:
        with open(a.file, encoding="utf-8") as f:
            content = f.read()
    else:
        content = sys.stdin.buffer.read().decode("utf-8")
    write_block(a.page, a.name, content)


if __name__ == "__main__":
    main()
