#!/usr/bin/env bash
# The sampled report against the exact one, on the real programs of scripts/program-speed.sh
# (the same inputs), recorded with their event logs: for each program, `report` and
# `report --sampled` of its trace (and `mrc --method exact`, timed beside them), compared
# field by field by scripts/sampled-compare.py; then scripts/sampled-table.py writes the
# generated block of docs/accuracy/sampled.md and the expected errors the sampled report
# shows (crates/cachescope/src/report/sampled/expected.json), measured on the held-out
# programs only (HELD_OUT; the others were the ones looked at while choosing the methods).
# Skips, saying so, without Valgrind.
#
#   scripts/sampled-accuracy.sh     # WORK=DIR keeps inputs, traces and exact reports
#                                   # (default $CARGO_TARGET_DIR/sampled-accuracy); RATE (0.01),
#                                   # SEEDS ("1 2 3"), ONLY="gzip sort" to run a subset,
#                                   # SHARE_RATES ("0.01 0.1 0.5 1") for the threads examples'
#                                   # sharing (the #sharing block, scripts/sampled-sharing.py;
#                                   # SHARE_ONLY=1 runs only it),
#                                   # PS_BUDGETS ("0,0 4096,65536 16384,131072") the per-structure
#                                   # sample's budgets (`attribute --per-structure`, the
#                                   # #per-structure block; PS_BUDGETS= skips it; PS_ONLY=1
#                                   # runs only it)
# How long (2026-12-06, two cores shared with other builds, load average 11-15, `nice -n 10`):
# the first run records each program and takes its exact report (cached in WORK): up to ~20 min
# a program (bzip2: record 2.3 min, `report` 881 s wall for 183 s of CPU, `mrc` 152 s); then
# the sampled reports of all nine programs, three seeds, and the sharing rates ~24 min
# (PS_BUDGETS= ; ~1.5 min a seed on xz, bzip2 and sqlite3, seconds on the threads examples;
# CPU 1-15 s a run, the rest waiting on the machine). The #per-structure part (81 `attribute`
# runs) was not timed on nine programs.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  echo "sampled-accuracy: skipped, valgrind is not installed" >&2
  exit 0
fi
target=${CARGO_TARGET_DIR:-target}
work=${WORK:-$target/sampled-accuracy}
rate=${RATE:-0.01}
seeds=${SEEDS:-1 2 3}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cargo build --release -q -p cachescope-cli
cs=$(cd "$target/release" && pwd)/cachescope

# The inputs of scripts/program-speed.sh.
text() { seq 1 "$1" | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }'; }
[ -s "$work/text2m.txt" ] || text 48000 > "$work/text2m.txt"
[ -s "$work/text500k.txt" ] || text 12000 > "$work/text500k.txt"
[ -s "$work/nums.txt" ] || awk 'BEGIN { srand(1); for (i = 0; i < 60000; i++) print int(rand() * 1000000) }' > "$work/nums.txt"
cat > "$work/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 30000), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL
[ -x "$work/working_sets" ] || cc -O2 -g -pthread -o "$work/working_sets" examples/threads/working_sets.c
[ -x "$work/false_sharing" ] || cc -O2 -g -pthread -o "$work/false_sharing" examples/threads/false_sharing.c

# The command line of each program, in `cmd`.
command_of() {
  case $1 in
    bzip2) cmd=(bzip2 -9 -c "$work/text2m.txt") ;;
    gzip) cmd=(gzip -9 -c "$work/text500k.txt") ;;
    xz) cmd=(xz -6 -c "$work/text500k.txt") ;;
    sort) cmd=(sort -n --parallel=1 "$work/nums.txt") ;;
    awk) cmd=(awk '{ s[$6] += length($0) } END { for (k in s) n++; print n }' "$work/text2m.txt") ;;
    sqlite3) cmd=(sqlite3 :memory: ".read $work/q.sql") ;;
    python3) cmd=(/usr/bin/python3 -c "import random; random.seed(1); a = [random.random() for _ in range(200000)]; a.sort(); print(a[0])") ;;
    threads) cmd=("$work/working_sets") ;;
    false_sharing) cmd=("$work/false_sharing") ;;
  esac
}
programs=${ONLY:-gzip sort awk sqlite3 python3 xz bzip2 threads false_sharing}
# Looked at while choosing the methods and rates; the expected errors come from the others.
held_out=${HELD_OUT:-sqlite3 python3 xz bzip2 threads}

load_start=$(cut -d' ' -f1 /proc/loadavg)
for p in $programs; do
  t=$work/$p.cst
  if [ ! -s "$t" ]; then
    echo "sampled-accuracy: recording $p" >&2
    command_of "$p"
    "$cs" record -q -o "$t" -- "${cmd[@]}" >/dev/null
  fi
  if [ ! -s "$work/$p.exact/report.json" ]; then
    echo "sampled-accuracy: exact report of $p" >&2
    /usr/bin/time -o "$work/$p.exact.time" -f '%e %U %S %M' "$cs" report -q -o "$work/$p.exact" "$t" >/dev/null
  fi
  if [ ! -s "$work/$p.mrc.time" ]; then
    /usr/bin/time -o "$work/$p.mrc.time" -f '%e %U %S %M' "$cs" mrc -q --method exact "$t" >/dev/null
  fi
  for s in $seeds; do
    [ -z "${PS_ONLY:-}${SHARE_ONLY:-}" ] || break
    out=$work/$p.r$rate.s$s
    echo "sampled-accuracy: sampled report of $p, rate $rate, seed $s" >&2
    /usr/bin/time -o "$out.time" -f '%e %U %S %M' "$cs" report -q --sampled --rate "$rate" --seed "$s" -o "$out" "$t" >/dev/null
    python3 scripts/sampled-compare.py "$work/$p.exact/report.json" "$out/report.json" --name "$p" > "$out.cmp.json"
  done
done
# The threads examples again, by rate: how many of their falsely shared lines a sampled report
# finds (in the sample with probability the rate, or found by the detector of lines two
# threads write), written into the #sharing block.
share_rates=${SHARE_RATES:-0.01 0.1 0.5 1}
[ -z "${PS_ONLY:-}" ] || share_rates=
for p in $programs; do
  case $p in threads | false_sharing) ;; *) continue ;; esac
  for r in $share_rates; do
    for s in $seeds; do
      out=$work/$p.share.r$r.s$s
      "$cs" report -q --sampled --rate "$r" --seed "$s" -o "$out" "$work/$p.cst" >/dev/null
      python3 scripts/sampled-compare.py "$work/$p.exact/report.json" "$out/report.json" --name "$p" > "$out.cmp.json"
    done
  done
done
# The #sharing block (after sampled-table.py's blocks in a full run).
sharing_block() {
  [ -n "$share_rates" ] || return 0
  python3 scripts/sampled-sharing.py --work "$work" --rates "$share_rates" --seeds "$seeds" \
    --programs "$programs" --load "$load_start" "$(cut -d' ' -f1 /proc/loadavg)" \
    --doc docs/accuracy/sampled.md
}
if [ -n "${SHARE_ONLY:-}" ]; then
  sharing_block
  exit 0
fi
# Attribution from a per-structure line sample of each trace (`attribute --per-structure`):
# each structure's first lines at rate 1 within a budget, the rest at the miniature's rate.
ps_budgets=${PS_BUDGETS-0,0 4096,65536 16384,131072}
for p in $programs; do
  for b in $ps_budgets; do
    for s in $seeds; do
      echo "sampled-accuracy: per-structure attribution of $p, budget $b, seed $s" >&2
      "$cs" attribute -q --json --per-structure "$rate" --per-structure-lines "$b" --seed "$s" \
        "$work/$p.cst" > "$work/$p.ps.$b.s$s.json"
    done
  done
done
load_end=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "$ps_budgets" ]; then
  python3 scripts/sampled-structures.py --work "$work" --rate "$rate" --seeds "$seeds" \
    --programs "$programs" --budgets "$ps_budgets" --load "$load_start" "$load_end" \
    --doc docs/accuracy/sampled.md
fi
[ -z "${PS_ONLY:-}" ] || exit 0
python3 scripts/sampled-table.py --work "$work" --rate "$rate" --seeds "$seeds" \
  --programs "$programs" --held-out "$held_out" --load "$load_start" "$load_end" \
  --doc docs/accuracy/sampled.md --expected crates/cachescope/src/report/sampled/expected.json
sharing_block
