#!/usr/bin/env bash
# What call events cost a live sampled run: for each real program of scripts/programs.sh,
# `attribute --callgraph --sampled --rate 0.1 -q -- PROGRAM` with its call events (the
# default: the tool writes every call event into its spatially sampled stream,
# docs/callgraph.md) and with --no-calls (the graph of self costs only), runs alternated (with, without, then without, with, …) so both see the same
# machine, RUNS of each (default 3), under `nice`; the medians of CPU time (user + system,
# Valgrind's process and cachescope's) and of wall time, and their ratios. Writes the table
# into docs/callgraph.md between its `<!-- callgraph-sampled-overhead.sh: begin -->` markers
# and on standard output, with the load average at both ends (the machine may be shared: CPU
# time is the figure to read). Skips, saying so, without Valgrind or GNU time.
#
#   scripts/callgraph-sampled-overhead.sh   # RUNS=N; ONLY=REGEX (program names); CS=BINARY
#                                           # (default: a release build); WORK=DIR keeps inputs
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble callgraph-sampled-overhead time
source scripts/programs.sh
programs "$work"
runs=${RUNS:-3}
only=${ONLY:-.}
load_start=$(cut -d' ' -f1 /proc/loadavg)

# "cpu wall" of one run of program function $1 with extra flags $2.
one() {
  local f=$1 flags=$2
  "$f" /usr/bin/time -o "$work/time" -f '%U %S %e' nice -n 10 "$CS" attribute --callgraph --sampled \
    --rate 0.1 -q $flags -- >/dev/null 2>"$work/err" \
    || { echo "failed: $f $flags" >&2; tail -3 "$work/err" >&2; exit 1; }
  read -r u s e <"$work/time"
  echo "$(echo "$u + $s" | bc) $e"
}
median() { sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $1 }'; }

rows=""
for i in "${!progs[@]}"; do
  [[ ${names[$i]} =~ $only ]] || continue
  f=${progs[$i]}
  "$f" >/dev/null 2>&1 || true # warms the page cache
  : >"$work/with" && : >"$work/without"
  for ((k = 0; k < runs; k++)); do
    if ((k % 2 == 0)); then
      one "$f" "" >>"$work/with"
      one "$f" "--no-calls" >>"$work/without"
    else
      one "$f" "--no-calls" >>"$work/without"
      one "$f" "" >>"$work/with"
    fi
  done
  c1=$(cut -d' ' -f1 "$work/with" | median); c0=$(cut -d' ' -f1 "$work/without" | median)
  w1=$(cut -d' ' -f2 "$work/with" | median); w0=$(cut -d' ' -f2 "$work/without" | median)
  row=$(python3 -c "
c1, c0, w1, w0 = $c1, $c0, $w1, $w0
print(f'| ${names[$i]} | {c0:.2f} | {c1:.2f} | {100 * (c1 / c0 - 1):+.1f} % | {w0:.2f} | {w1:.2f} | {100 * (w1 / w0 - 1):+.1f} % |')")
  echo "$row"
  rows+="$row"$'\n'
done

table="Measured by \`scripts/callgraph-sampled-overhead.sh\` on $(date -u +%Y-%m-%d) (RUNS=$runs, ONLY='$only'), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; \`nice -n 10 cachescope attribute --callgraph --sampled --rate 0.1 -q -- PROGRAM\` with call events and with \`--no-calls\` (self costs only), the median of $runs runs each, alternated. Seconds of CPU (user + system, Valgrind and cachescope) and wall.

| program | CPU, --no-calls | CPU, calls | CPU change | wall, --no-calls | wall, calls | wall change |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}"

printf '%s' "$table" | python3 scripts/docs_block.py docs/callgraph.md callgraph-sampled-overhead.sh
echo "$table"
