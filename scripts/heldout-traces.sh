#!/usr/bin/env bash
# Records traces of real programs that no model was developed or tuned on (the tables of
# docs/accuracy/ report them apart as "held out"): a compiler, interpreters, text tools. Native
# traces (NAME.cst) from `cachescope record`, deterministic inputs, stock Debian programs.
#
#   scripts/heldout-traces.sh [OUTDIR]     (default: target/heldout-traces)
#
# Traces already present are kept. Exits 0 with a printed reason when Valgrind is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/heldout-traces}
mkdir -p "$out"
if ! command -v valgrind >/dev/null; then
    echo "heldout-traces: valgrind not found (apt-get install valgrind); none recorded" >&2
    exit 0
fi
cargo build --release -q -p cachescope-cli
cs=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Inputs: 100 KB of text, and a C file to compile. Sized so that each trace is tens of millions
# of references at most and every table scores it in minutes (a 1 MB text made perl's 1.4 GB).
seq 1 2400 | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }' > "$work/text.txt"
cp examples/attribution/resid.c "$work/resid.c"

record() {
    local name=$1; shift
    local dest="$out/$name.cst"
    if [ -s "$dest" ]; then echo "heldout-traces: $dest exists, kept" >&2; return; fi
    if ! command -v "$1" >/dev/null; then echo "heldout-traces: $1 not found, $name skipped" >&2; return; fi
    echo "heldout-traces: recording $name: $*" >&2
    "$cs" record -q --no-events -o "$dest.tmp" -- "$@" >/dev/null
    mv "$dest.tmp" "$dest"
}

# The compiler proper (gcc forks it, and a forked child is not recorded).
cc1=$(gcc -print-prog-name=cc1)
# Run directly, cc1 needs the multiarch include directory the driver would give it.
record cc1 "$cc1" -quiet -imultiarch "$(gcc -print-multiarch)" -O1 "$work/resid.c" -o /dev/null
record python3 /usr/bin/python3 -c "d = {}
for i in range(30000): d.setdefault(i * 7919 % 10007, []).append(i)
print(len(d), sum(len(v) for v in d.values()))"
record perl perl -ne '$c{$1}++ while /(\w+)/g; END { print scalar(keys %c), "\n" }' "$work/text.txt"
record grep grep -c -E '[0-9a-f]{3}e[0-9]' "$work/text.txt"
record sed sed -e 's/line \([0-9]*\)/L\1/g' "$work/text.txt"
record md5sum md5sum "$work/text.txt"
record tar tar -cf /dev/null /usr/include/linux
ls -la "$out" >&2
