#!/usr/bin/env bash
# Compares two cachescope binaries on `record`'s speed row of docs/recording.md (`gzip -9` of
# the same 200 KB text, 75.4 M records), runs alternated so both see the same machine:
#
#   scripts/record-ab.sh OLD/cachescope NEW/cachescope [RUNS]    # RUNS per binary, default 5
#   scripts/record-ab.sh OLD NEW RUNS -- PROGRAM ARGS...           # another program instead
#
# Prints, per binary, the mean and best wall time and the mean CPU time (user + sys).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,6p "$0"; exit 2; }
a=$1 b=$2 runs=${3:-5}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The input recording.sh makes (written whole first: `head` closing the pipe early would fail it).
seq 1 40000 | awk '{ printf "%08x line %d of the sample text\n", ($1 * 2654435761) % 4294967296, $1 }' \
    > "$work/text.txt"
head -c 200000 "$work/text.txt" > "$work/medium.txt"
[ $# -gt 0 ] || set -- gzip -9 -c "$work/medium.txt"
for _ in $(seq "$runs"); do
    for bin in "$a" "$b"; do
        /usr/bin/time -f "$bin %e %U %S" "$bin" record -q -o "$work/t.cst" -- "$@" 2>&1 >/dev/null | tail -1
    done
done | awk '{ w[$1] += $2; c[$1] += $3 + $4; n[$1]++; if (!($1 in m) || $2 < m[$1]) m[$1] = $2 }
    END { for (k in w) printf "%s: wall mean %.2f s, best %.2f s; CPU mean %.2f s\n", k, w[k] / n[k], m[k], c[k] / n[k] }'
