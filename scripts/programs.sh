#!/usr/bin/env bash
# The real programs scripts/program-speed.sh, scripts/tlb-curves.sh and
# scripts/callgraph-overhead.sh measure (and scripts/sampled-speed.sh, through
# scripts/program-bench.sh), with their
# deterministic inputs: `source scripts/programs.sh; programs DIR` writes the inputs into DIR
# (an absolute path) and sets `names` (what the tables call them) and `progs` (functions that
# run each program after the prefix they are given: a tool, or nothing). A program not
# installed is skipped with a note.
programs() {
  programs_dir=$1
  # Inputs: deterministic. Text from a fixed generator, 2 MB for bzip2 (issue 38's target row).
  text() { seq 1 "$1" | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }'; }
  text 48000 > "$programs_dir/text2m.txt"
  text 12000 > "$programs_dir/text500k.txt"
  awk 'BEGIN { srand(1); for (i = 0; i < 60000; i++) print int(rand() * 1000000) }' > "$programs_dir/nums.txt"
  cat > "$programs_dir/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t SELECT i, printf('row %d', i * 7919 % 30000), i % 97 FROM n;
CREATE INDEX tb ON t(b);
SELECT c, count(*), sum(a) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL
  cc -O2 -g -pthread -o "$programs_dir/working_sets" examples/threads/working_sets.c

  names=()
  progs=()
  add() { local name=$1 fn=$2 exe=$3; if command -v "$exe" >/dev/null; then names+=("$name"); progs+=("$fn"); else echo "skipped $name: $exe not found" >&2; fi; }
  add "bzip2 -9 (2 MB)" p_bzip2 bzip2
  add "gzip -9 (500 KB)" p_gzip gzip
  add "xz -6 (500 KB)" p_xz xz
  add "sort -n (60 K numbers)" p_sort sort
  add "awk (2 MB)" p_awk awk
  add "sqlite3 (30 K rows)" p_sqlite3 sqlite3
  add "python3 (sort 200 K floats)" p_python3 /usr/bin/python3
  add "pthreads working sets (4 threads)" p_threads "$programs_dir/working_sets"
}

# Each program as a function running it after the prefix it is given (a tool, or nothing).
p_bzip2() { "$@" bzip2 -9 -c "$programs_dir/text2m.txt"; }
p_gzip() { "$@" gzip -9 -c "$programs_dir/text500k.txt"; }
p_xz() { "$@" xz -6 -c "$programs_dir/text500k.txt"; }
p_sort() { "$@" sort -n --parallel=1 "$programs_dir/nums.txt"; }
p_awk() { "$@" awk '{ s[$6] += length($0) } END { for (k in s) n++; print n }' "$programs_dir/text2m.txt"; }
p_sqlite3() { "$@" sqlite3 :memory: ".read $programs_dir/q.sql"; }
p_python3() { "$@" /usr/bin/python3 -c "import random; random.seed(1); a = [random.random() for _ in range(200000)]; a.sort(); print(a[0])"; }
p_threads() { "$@" "$programs_dir/working_sets"; }
