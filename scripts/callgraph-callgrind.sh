#!/usr/bin/env bash
# cachescope's call graph against Valgrind's Callgrind (`--cache-sim=yes`, the same I1, D1 and
# LL): examples/callgraph/calltree.c and two real programs (bzip2 -9 and sqlite3 on the inputs
# of scripts/program-speed.sh, smaller). For each: the top 10 functions by inclusive D1
# misses on both sides, side by side, whether they come in the same order, and for the
# example every caller/callee call count. Writes the tables into docs/callgraph.md between
# its `<!-- callgraph-callgrind.sh: begin -->` markers and on standard output. Skips, saying so,
# without Valgrind.
#
# Callgrind's inclusive cost of a function is read from its file as KCachegrind and
# callgrind_annotate do (the costs of its incoming calls; of a function never called, its own
# cost and its outgoing calls'), with a function's calls to itself left out (Callgrind writes
# a recursive call's whole nested cost; with --separate-recs=1, direct recursion is a call of
# the function to itself). Names are matched after Valgrind's renaming is undone: a function
# without a symbol is `0xOFFSET` in its object there and `OBJECT+0xOFFSET` here, versioned
# names (`@@GLIBC_2.34`) lose their version, and `(below main)` stands for the C library's
# start-up functions (`__libc_start_call_main`), as Valgrind names them.
#
#   scripts/callgraph-callgrind.sh     # WORK=DIR keeps the files (default target/callgraph-callgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble callgraph-callgrind
cs=$CS
caches=(32768,8,64 32768,8,64 8388608,16,64)
ours=(32K,8,64 32K,8,64 8M,16,64)

text() { seq 1 "$1" | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }'; }
text 12000 >"$work/text500k.txt"
cat >"$work/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 5000), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL
cc -O2 -g -fno-inline -o "$work/calltree" examples/callgraph/calltree.c

# Each program as a function running it after the prefix it is given.
p_calltree() { "$@" "$work/calltree"; }
p_bzip2() { "$@" bzip2 -9 -c "$work/text500k.txt"; }
p_sqlite3() { "$@" sqlite3 :memory: ".read $work/q.sql"; }
names=()
progs=()
add() { if command -v "$3" >/dev/null; then names+=("$1"); progs+=("$2"); else echo "skipped $1: $3 not found" >&2; fi; }
add "calltree (examples/callgraph)" p_calltree "$work/calltree"
add "bzip2 -9 (500 KB)" p_bzip2 bzip2
add "sqlite3 (5 K rows)" p_sqlite3 sqlite3

out=""
for i in "${!names[@]}"; do
  f=${progs[$i]}
  "$f" valgrind --tool=callgrind --cache-sim=yes --separate-recs=1 \
    --I1="${caches[0]}" --D1="${caches[1]}" --LL="${caches[2]}" \
    --callgrind-out-file="$work/cg$i.out" >/dev/null 2>"$work/cg$i.err"
  "$f" "$cs" record -q -o "$work/t$i.cst" -- >/dev/null
  "$cs" attribute "$work/t$i.cst" --callgraph --json -q \
    --I1 "${ours[0]}" --D1 "${ours[1]}" --LL "${ours[2]}" >"$work/cs$i.json"
  table=$(python3 scripts/callgraph-compare.py "$work/cg$i.out" "$work/cs$i.json" "${names[$i]}" "$i")
  echo "$table"
  out+="$table"$'\n\n'
done

block="Measured by \`scripts/callgraph-callgrind.sh\` on $(date -u +%Y-%m-%d) with Valgrind $(valgrind --version | sed 's/valgrind-//'); I1 ${ours[0]}, D1 ${ours[1]}, LL ${ours[2]} on both sides.

${out%$'\n\n'}"
printf '%s' "$block" | python3 scripts/docs_block.py docs/callgraph.md callgraph-callgrind.sh
