#!/usr/bin/env bash
# What call events cost `record`: for each real program of scripts/program-speed.sh, `record`
# with call events (the default) and with --no-calls, runs alternated (with, without, with,
# …) so both see the same machine, RUNS of each (default 3); the medians of CPU time (user +
# system, Valgrind's process and cachescope's) and of wall time, their ratio, and the size of
# the traces. Writes the table into docs/callgraph.md between its
# `<!-- callgraph-overhead.sh -->` markers and on standard output, with the load average at
# both ends (the machine may be shared: CPU time is the figure to read). Skips, saying so,
# without Valgrind or GNU time.
#
#   scripts/callgraph-overhead.sh        # RUNS=N; WORK=DIR keeps the inputs (default target/callgraph-overhead)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  echo "callgraph-overhead: skipped, valgrind is not installed" >&2
  exit 0
fi
if ! [ -x /usr/bin/time ]; then
  echo "callgraph-overhead: skipped, GNU time (/usr/bin/time) is not installed" >&2
  exit 0
fi
work=${WORK:-target/callgraph-overhead}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cargo build --release -q -p cachescope-cli
cs=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope
# The real programs and their inputs (shared with program-speed.sh and tlb-curves.sh).
source scripts/programs.sh
programs "$work"
runs=${RUNS:-3}
load_start=$(cut -d' ' -f1 /proc/loadavg)

# "cpu wall bytes" of one `record` run of program function $1 with extra flags $2.
one() {
  local f=$1 flags=$2
  # The program function takes the timed command as its prefix (time cannot run a function).
  "$f" /usr/bin/time -o "$work/time" -f '%U %S %e' "$cs" record -q $flags -o "$work/t.cst" -- \
    >/dev/null 2>"$work/err" || { echo "failed: $f $flags" >&2; tail -3 "$work/err" >&2; exit 1; }
  read -r u s e <"$work/time"
  echo "$(echo "$u + $s" | bc) $e $(stat -c %s "$work/t.cst")"
}
median() { sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $1 }'; }

rows=""
for i in "${!progs[@]}"; do
  f=${progs[$i]}
  "$f" >/dev/null 2>&1 || true # warms the page cache
  : >"$work/with" && : >"$work/without"
  for ((k = 0; k < runs; k++)); do
    one "$f" "" >>"$work/with"
    one "$f" "--no-calls" >>"$work/without"
  done
  c1=$(cut -d' ' -f1 "$work/with" | median); c0=$(cut -d' ' -f1 "$work/without" | median)
  w1=$(cut -d' ' -f2 "$work/with" | median); w0=$(cut -d' ' -f2 "$work/without" | median)
  b1=$(cut -d' ' -f3 "$work/with" | median); b0=$(cut -d' ' -f3 "$work/without" | median)
  row=$(python3 -c "
c1, c0, w1, w0, b1, b0 = $c1, $c0, $w1, $w0, $b1, $b0
print(f'| ${names[$i]} | {c0:.2f} | {c1:.2f} | {100 * (c1 / c0 - 1):+.1f} % | {w0:.2f} | {w1:.2f} | {100 * (w1 / w0 - 1):+.1f} % | {b0 / 2**20:.1f} | {b1 / 2**20:.1f} |')")
  echo "$row"
  rows+="$row"$'\n'
done

table="Measured by \`scripts/callgraph-overhead.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; the median of $runs runs each, alternated. Seconds of CPU (user + system, Valgrind and cachescope) and wall; MiB of the trace \`record\` wrote.

| program | CPU, --no-calls | CPU, calls | CPU change | wall, --no-calls | wall, calls | wall change | trace MiB, --no-calls | trace MiB, calls |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}"

python3 - "$table" <<'PY'
import re, sys
path = "docs/callgraph.md"
doc = open(path).read()
block = "<!-- callgraph-overhead.sh -->\n" + sys.argv[1] + "\n<!-- /callgraph-overhead.sh -->"
new = re.sub(r"<!-- callgraph-overhead.sh -->.*?<!-- /callgraph-overhead.sh -->", lambda m: block, doc, flags=re.S)
open(path, "w").write(new)
PY
