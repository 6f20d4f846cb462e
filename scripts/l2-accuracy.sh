#!/usr/bin/env bash
# Regenerates docs/accuracy/l2.md in one command: records real programs with cachescope's
# Valgrind tool (`cachescope record --no-events`, much faster than lackey), then measures every
# L2 model variant against the exact two-level simulation (LRU and random) on them and on the
# synthetic workloads.
#
#   scripts/l2-accuracy.sh [TRACE_DIR]     (default: target/l2-traces; traces are kept)
#
# Traces are NAME.cst; they stay out of git (target/ is ignored). Without Valgrind the table
# covers the synthetic workloads only.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/l2-traces}
mkdir -p "$out"
cargo build --release -q -p cachescope-cli
cargo build --release -q -p cachescope --example accuracy
cs=${CARGO_TARGET_DIR:-target}/release/cachescope
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Deterministic inputs: 20k random numbers; ~300 KB of text; a 192x192 matrix multiply.
awk 'BEGIN { srand(1); for (i = 0; i < 20000; i++) print int(rand() * 1000000) }' > "$work/nums.txt"
awk 'BEGIN { srand(2); split("the of and to in is that for it as with was on be by at this from or which", w);
             for (i = 0; i < 60000; i++) { printf "%s%s", w[int(rand() * 20) + 1], (i % 12 == 11) ? "\n" : " " } }' > "$work/text.txt"
cat > "$work/mm.c" <<'C'
#include <stdio.h>
#define N 192
static double a[N][N], b[N][N], c[N][N];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { a[i][j] = i + j; b[i][j] = i - j; }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    printf("%f\n", c[N / 2][N / 3]);
    return 0;
}
C
cc -O2 -o "$work/mm" "$work/mm.c"

record() {
    local name=$1; shift
    local dest="$out/$name.cst"
    if [ -s "$dest" ]; then return; fi
    command -v "$1" >/dev/null || { echo "l2-accuracy: $1 not found, $name skipped" >&2; return; }
    echo "l2-accuracy: recording $name" >&2
    "$cs" record --no-events -o "$dest" -- "$@" >/dev/null
}

if command -v valgrind >/dev/null; then
    record gzip gzip -9 -c "$work/text.txt"
    record sort sort -n "$work/nums.txt"
    record xz xz -2 -c "$work/text.txt"
    record sqlite sqlite3 :memory: "create table t(a, b); with recursive r(i) as (select 1 union all select i + 1 from r where i < 20000) insert into t select i, (i * 7919) % 10007 from r; create index tb on t(b); select sum(a) from t where b between 100 and 5000;"
    record awk awk '{ for (i = 1; i <= NF; i++) n[$i]++ } END { for (w in n) print w, n[w] }' "$work/text.txt"
    # The interpreter itself, not a wrapper script that execs it (pyenv's shims).
    py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)
    record python "$py" -c "d = {}
for i in range(40000): d[(i * 7919) % 30011] = str(i)
print(sum(len(v) for v in d.values()))"
    record mm "$work/mm"
else
    echo "l2-accuracy: valgrind not found: synthetic workloads only" >&2
fi
"${CARGO_TARGET_DIR:-target}/release/examples/accuracy" l2 "$out" docs/accuracy/l2.md
