#!/usr/bin/env bash
# Records lackey traces of a fixed set of real programs (zstd-compressed), the inputs of the
# accuracy tables in docs/. Deterministic inputs; every program is a stock Debian binary or a
# small C program compiled here.
#
#   scripts/real-traces.sh [OUTDIR]     (default: target/real-traces)
#
# RECORDER=cachescope records native traces (NAME.cst) with `cachescope record` (target/release,
# built first) instead of lackey's (NAME.lackey.zst). Traces already present are kept. Needs
# valgrind and zstd; exits 0 with a printed reason when valgrind is missing, so callers can skip.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-target/real-traces}
mkdir -p "$out"
if ! command -v valgrind >/dev/null; then
    echo "real-traces: valgrind not found (apt-get install valgrind); no real traces recorded" >&2
    exit 0
fi
command -v zstd >/dev/null || { echo "real-traces: zstd not found (apt-get install zstd)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Inputs: 20k random numbers; ~300 KB of text.
awk 'BEGIN { srand(1); for (i = 0; i < 20000; i++) print int(rand() * 1000000) }' > "$work/nums.txt"
awk 'BEGIN { srand(2); split("the of and to in is that for it as with was on be by at this from or which", w);
             for (i = 0; i < 60000; i++) { printf "%s%s", w[int(rand() * 20) + 1], (i % 12 == 11) ? "\n" : " " } }' > "$work/text.txt"
cat > "$work/mm.c" <<'C'
/* Naive and blocked double-precision matrix multiply, 160x160. */
#include <stdio.h>
#include <stdlib.h>
#define N 160
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
cat > "$work/hash.c" <<'C'
/* A chained hash table under random inserts and lookups: pointer chasing over ~2 MB. */
#include <stdio.h>
#include <stdlib.h>
struct node { unsigned long key; struct node *next; };
#define B 16384
static struct node *table[B];
int main(void) {
    unsigned long x = 12345, hits = 0;
    for (int i = 0; i < 60000; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        struct node *n = malloc(sizeof *n);
        n->key = x >> 20; n->next = table[n->key % B]; table[n->key % B] = n;
    }
    for (int i = 0; i < 200000; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        for (struct node *n = table[(x >> 20) % B]; n; n = n->next) hits += n->key == (x >> 20);
    }
    printf("%lu\n", hits);
    return 0;
}
C
cc -O2 -g -o "$work/mm" "$work/mm.c"
cc -O2 -g -o "$work/hash" "$work/hash.c"
# Three planted phases that recur (issue 20), sized for a 1 MiB L2.
cc -O2 -g -o "$work/planted" "$root/examples/phases/planted.c"
recorder=${RECORDER:-lackey}
if [ "$recorder" = cachescope ]; then (cd "$root" && cargo build --release -q -p cachescope-cli); fi

record() {
    local name=$1; shift
    local dest="$out/$name.lackey.zst"
    [ "$recorder" = cachescope ] && dest="$out/$name.cst"
    if [ -s "$dest" ]; then echo "real-traces: $dest exists, kept" >&2; return; fi
    echo "real-traces: recording $name: $*" >&2
    if [ "$recorder" = cachescope ]; then
        "${CARGO_TARGET_DIR:-$root/target}/release/cachescope" record -q --no-events -o "$dest.tmp" -- "$@" >/dev/null
    else
        valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$@" 3>&1 >/dev/null 2>/dev/null \
            | zstd -q -3 -o "$dest.tmp"
    fi
    mv "$dest.tmp" "$dest"
}

record sort sort -n "$work/nums.txt"
record gzip gzip -6 -c "$work/text.txt"
record bzip2 bzip2 -9 -c "$work/text.txt"
record xz xz -2 -c "$work/text.txt"
record sqlite sqlite3 :memory: "create table t(a, b); with recursive r(i) as (select 1 union all select i + 1 from r where i < 20000) insert into t select i, (i * 7919) % 10007 from r; create index tb on t(b); select sum(a) from t where b between 100 and 5000;"
record awk awk '{ for (i = 1; i <= NF; i++) n[$i]++ } END { for (w in n) print w, n[w] }' "$work/text.txt"
record mm "$work/mm"
record hash "$work/hash"
# The phases table's planted program; the lackey tables keep their eight programs.
if [ "$recorder" = cachescope ]; then record planted "$work/planted"; fi
ls -la "$out" >&2
