#!/usr/bin/env bash
# `record` against Valgrind's own tools on programs that run for seconds, by wall time and by
# CPU time (user + system: `record` keeps two cores busy, Valgrind one), and the native format
# against lackey's text for the same trace (size, and the CPU time `stats` takes to read it).
# Writes the tables into docs/recording.md between its `<!-- record-speed.sh -->` markers and
# on standard output; README.md's `record` figures come from them.
#
# Every command runs RUNS times (default 3, alternated) and the median by wall time is shown,
# with the load average at both ends: on a shared machine prefer the CPU columns. Skips,
# saying so, without Valgrind or GNU time.
#
#   scripts/record-speed.sh        # WORK=DIR keeps the inputs and traces (default target/record-speed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble record-speed time
cs=$CS
runs=${RUNS:-3}

# Inputs: deterministic, the program-speed.sh ones.
text() { seq 1 "$1" | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }'; }
text 48000 > "$work/text2m.txt"
text 12000 > "$work/text500k.txt"
text 1200 > "$work/text50k.txt"
cat > "$work/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 30000), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL

names=()
progs=()
add() { if command -v "$3" >/dev/null; then names+=("$1"); progs+=("$2"); else echo "skipped $1: $3 not found" >&2; fi; }
p_bzip2() { "$@" bzip2 -9 -c "$work/text2m.txt"; }
p_xz() { "$@" xz -6 -c "$work/text500k.txt"; }
p_sqlite3() { "$@" sqlite3 :memory: ".read $work/q.sql"; }
p_python3() { "$@" /usr/bin/python3 -c "import random; random.seed(1); a = [random.random() for _ in range(200000)]; a.sort(); print(a[0])"; }
add "bzip2 -9 (2 MB)" p_bzip2 bzip2
add "xz -6 (500 KB)" p_xz xz
add "sqlite3 (30 K rows)" p_sqlite3 sqlite3
add "python3 (sort 200 K floats)" p_python3 /usr/bin/python3

load_start=$(cut -d' ' -f1 /proc/loadavg)
timed() { /usr/bin/time -o "$work/time" -f '%e %U %S' "$@"; }
# "wall cpu" of one run of "$@" (which calls `timed`), its output discarded.
measure() {
  rm -f "$work/time"
  "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; tail -3 "$work/err" >&2; exit 1; }
  tail -1 "$work/time" | awk '{ printf "%.2f %.2f", $1, $2 + $3 }'
}

lackey=(valgrind --tool=lackey --trace-mem=yes --log-file=/dev/null)
cachegrind=(valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null)
rows=""
for i in "${!progs[@]}"; do
  f=${progs[$i]}
  t=$work/p$i.cst
  "$f" >/dev/null 2>&1 || true # warms the page cache
  # Alternated: one run of each command per round, RUNS rounds.
  for ((k = 0; k < runs; k++)); do
    echo "$(measure "$f" timed "${lackey[@]}")" >>"$work/lk$i"
    echo "$(measure "$f" timed "${cachegrind[@]}")" >>"$work/cg$i"
    echo "$(measure "$f" timed "$cs" record -q -o "$t" --)" >>"$work/rec$i"
  done
  refs=$("$cs" stats -q --json "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refs"])')
  rows+=$(python3 - "${names[$i]}" "$refs" "$work/lk$i" "$work/cg$i" "$work/rec$i" <<'PY'
import sys
name, refs = sys.argv[1], int(sys.argv[2])
def median(path):
    runs = sorted(tuple(map(float, l.split())) for l in open(path) if l.strip())
    return runs[(len(runs) - 1) // 2]
lk, cg, rec = (median(p) for p in sys.argv[3:6])
c = lambda x: f"{x[0]:.1f} ({x[1]:.1f})"
q = lambda a, b: a / max(b, 0.01)
print(f"| {name} | {refs / 1e6:.0f} M | {c(lk)} | {c(cg)} | {c(rec)} | {q(lk[0], rec[0]):.0f}x | {q(lk[1], rec[1]):.0f}x | {q(rec[0], cg[0]):.1f}x | {q(rec[1], cg[1]):.1f}x |")
PY
)
  rows+=$'\n'
  rm -f "$work/lk$i" "$work/cg$i" "$work/rec$i"
  echo "${rows%$'\n'}" | tail -1
done

# The formats: gzip -9 of a 50 KB text recorded by lackey into a text file, the same trace as a
# native file (`convert`), and the text compressed by zstd -3; then `stats` reads each.
valgrind --tool=lackey --trace-mem=yes --log-file="$work/g.lackey" gzip -9 -c "$work/text50k.txt" >/dev/null
rm -f "$work/g.lackey.zst"
zstd -q -3 "$work/g.lackey" -o "$work/g.lackey.zst"
"$cs" convert -q "$work/g.lackey" "$work/g.cst"
size() { stat -c %s "$1"; }
read_cpu() {
  local k
  for ((k = 0; k < runs; k++)); do measure timed "$cs" stats -q --threads 1 "$1"; echo; done \
    | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $2 }'
}
lines=$(wc -l <"$work/g.lackey")
formats=$(python3 - "$lines" \
  "$(size "$work/g.lackey")" "$(read_cpu "$work/g.lackey")" \
  "$(size "$work/g.lackey.zst")" "$(read_cpu "$work/g.lackey.zst")" \
  "$(size "$work/g.cst")" "$(read_cpu "$work/g.cst")" <<'PY'
import sys
lines = int(sys.argv[1])
(lk, lkt), (zs, zst), (nat, natt) = [(int(sys.argv[i]), float(sys.argv[i + 1])) for i in (2, 4, 6)]
mb = lambda b: f"{b / 1e6:.1f} MB"
print(f"| lackey text | {mb(lk)} | 1x | {lkt:.2f} s | 1x |")
print(f"| lackey text, zstd -3 | {mb(zs)} | {lk / zs:.1f}x smaller | {zst:.2f} s | {lkt / max(zst, 0.01):.1f}x faster |")
print(f"| native (`convert`) | {mb(nat)} | {lk / nat:.0f}x smaller | {natt:.2f} s | {lkt / max(natt, 0.01):.1f}x faster |")
PY
)

table="Measured by \`scripts/record-speed.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(valgrind --version), load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; each command $runs times, alternated, the run of median wall time shown. Seconds, wall (CPU: user + system); refs are the data references \`record\` wrote. Valgrind's lackey writes its log to /dev/null here (no disk), \`record\` a native trace.

| program | data refs | Valgrind's lackey | Cachegrind | \`record\` | lackey / record, wall | lackey / record, CPU | record / Cachegrind, wall | record / Cachegrind, CPU |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}

The same trace in each format: \`gzip -9\` of a 50 KB text under lackey, $lines lines of text; \`stats --threads 1\` reading it, CPU seconds (median of $runs).

| format | size | | \`stats\`, CPU | |
| --- | ---: | ---: | ---: | ---: |
$formats"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/recording.md record-speed.sh
echo "docs/recording.md updated"
