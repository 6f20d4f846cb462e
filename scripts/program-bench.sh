# The real programs, their deterministic inputs and the timing helpers of
# scripts/program-speed.sh and scripts/sampled-speed.sh, sourced by both (not run on its own).
#
#   program_inputs DIR    writes the inputs into DIR and sets $work to its absolute path
#   p_NAME PREFIX...      runs program NAME after the prefix it is given (a tool, or nothing)
#   measure CMD...        "wall cpu peak-MiB" of one run of CMD (which calls `timed`)
#   measure_median CMD... the run of median wall time of $RUNS runs (default 3)

# Text from a fixed generator: LINES lines of 42 bytes.
text() { seq 1 "$1" | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }'; }

program_inputs() {
  mkdir -p "$1"
  work=$(cd "$1" && pwd)
  text 48000 > "$work/text2m.txt"
  text 12000 > "$work/text500k.txt"
  awk 'BEGIN { srand(1); for (i = 0; i < 60000; i++) print int(rand() * 1000000) }' > "$work/nums.txt"
  cat > "$work/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 30000), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL
}

p_bzip2() { "$@" bzip2 -9 -c "$work/text2m.txt"; }
p_gzip() { "$@" gzip -9 -c "$work/text500k.txt"; }
p_xz() { "$@" xz -6 -c "$work/text500k.txt"; }
p_sort() { "$@" sort -n --parallel=1 "$work/nums.txt"; }
p_awk() { "$@" awk '{ s[$6] += length($0) } END { for (k in s) n++; print n }' "$work/text2m.txt"; }
p_sqlite3() { "$@" sqlite3 :memory: ".read $work/q.sql"; }
p_python3() { "$@" /usr/bin/python3 -c "import random; random.seed(1); a = [random.random() for _ in range(200000)]; a.sort(); print(a[0])"; }
p_threads() { "$@" "$work/working_sets"; }

# The command "$@" under GNU time, into $work/time. A prefix for the program functions.
timed() { /usr/bin/time -o "$work/time" -f '%e %U %S %M' "$@"; }
# "wall cpu peak-MiB" of one run of "$@" (which calls `timed`), its output discarded.
measure() {
  rm -f "$work/time"
  "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; tail -3 "$work/err" >&2; }
  tail -1 "$work/time" | awk '{ printf "%.2f %.2f %.0f", $1, $2 + $3, $4 / 1024 }'
}

# `measure` RUNS times; prints the run of median wall time.
runs=${RUNS:-3}
measure_median() {
  local k
  for ((k = 0; k < runs; k++)); do measure "$@"; echo; done | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%s", $0 }'
}
