#!/usr/bin/env bash
# What call events cost `record`: for each real program of scripts/program-speed.sh, `record`
# with call events (the default) and with --no-calls, runs alternated (with, without, then
# without, with, …) so both see the same machine, RUNS of each (default 5); the medians of CPU time (user +
# system, Valgrind's process and cachescope's) and of wall time, their ratio, and the size of
# the traces; beside them the spread of the CPU times (min-max of each side) and whether the
# two sides' ranges separate (every run of one side above every run of the other: with three
# runs of a 1-5 s program, a 10 % change did not stand out from noise); then the split: the same CPU of Valgrind alone (the tool writing its stream to
# /dev/null, `--cs-calls=yes` and `=no`), so the rest of the change is cachescope's decoding. Writes the table into docs/callgraph.md between its
# `<!-- callgraph-overhead.sh: begin -->` markers and on standard output, with the load average at
# both ends (the machine may be shared: CPU time is the figure to read). Skips, saying so,
# without Valgrind or GNU time.
#
#   scripts/callgraph-overhead.sh        # RUNS=N; ONLY=REGEX (program names, e.g. '^(awk|sort|bzip2)':
#                                        # python3's name holds "sort"); CS=BINARY (default:
#                                        # a release build); NICE=N runs under `nice -n N` (a shared
#                                        # machine); WORK=DIR keeps the inputs (default target/callgraph-overhead)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble callgraph-overhead time
cs=$CS
only=${ONLY:-.}
# Under `nice` only when asked: on a quiet machine it changes nothing, on a shared one it keeps
# the measurement from slowing the others.
nice=()
[ -n "${NICE:-}" ] && nice=(nice -n "$NICE")
# The real programs and their inputs (shared with program-speed.sh and tlb-curves.sh).
source scripts/programs.sh
programs "$work"
runs=${RUNS:-5}
load_start=$(cut -d' ' -f1 /proc/loadavg)

# "cpu wall bytes" of one `record` run of program function $1 with extra flags $2.
one() {
  local f=$1 flags=$2
  # The program function takes the timed command as its prefix (time cannot run a function).
  "$f" /usr/bin/time -o "$work/time" -f '%U %S %e' "${nice[@]}" "$cs" record -q $flags -o "$work/t.cst" -- \
    >/dev/null 2>"$work/err" || { echo "failed: $f $flags" >&2; tail -3 "$work/err" >&2; exit 1; }
  read -r u s e <"$work/time"
  echo "$(echo "$u + $s" | bc) $e $(stat -c %s "$work/t.cst")"
}
# "cpu" of the tool alone (events on, as record's default) with --cs-calls=$2, output discarded.
tool_only() {
  local f=$1 calls=$2
  "$f" /usr/bin/time -o "$work/time" -f '%U %S' env VALGRIND_LIB="$tooldir" "${nice[@]}" valgrind -q \
    --tool=cachescope --cs-events=yes --cs-calls="$calls" --cs-out=/dev/null >/dev/null 2>"$work/err" \
    || { echo "failed: tool alone $f" >&2; tail -3 "$work/err" >&2; exit 1; }
  read -r u s <"$work/time"
  echo "$u + $s" | bc
}
median() { sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $1 }'; }
lowest() { sort -n | head -1; }
highest() { sort -n | tail -1; }

# The tool as record runs it (its events build, with the allocator wrappers): record unpacks it.
"$cs" record -q -o "$work/t.cst" -- true >/dev/null 2>&1
# The build's directory is the one just used (record touches it; its events/ subdirectory keeps the
# time it was unpacked, so another build's could be newer).
tooldir=$(ls -td "${XDG_CACHE_HOME:-$HOME/.cache}"/cachescope/valgrind-*/ | head -1)events

rows=""
for i in "${!progs[@]}"; do
  [[ ${names[$i]} =~ $only ]] || continue
  f=${progs[$i]}
  "$f" >/dev/null 2>&1 || true # warms the page cache
  : >"$work/with" && : >"$work/without"
  : >"$work/tool_with" && : >"$work/tool_without"
  # Alternated, and which goes first alternates too, so a slow spell of the machine falls on
  # both sides.
  for ((k = 0; k < runs; k++)); do
    if ((k % 2 == 0)); then
      one "$f" "" >>"$work/with"
      one "$f" "--no-calls" >>"$work/without"
      tool_only "$f" yes >>"$work/tool_with"
      tool_only "$f" no >>"$work/tool_without"
    else
      one "$f" "--no-calls" >>"$work/without"
      one "$f" "" >>"$work/with"
      tool_only "$f" no >>"$work/tool_without"
      tool_only "$f" yes >>"$work/tool_with"
    fi
  done
  t1=$(median <"$work/tool_with"); t0=$(median <"$work/tool_without")
  c1=$(cut -d' ' -f1 "$work/with" | median); c0=$(cut -d' ' -f1 "$work/without" | median)
  w1=$(cut -d' ' -f2 "$work/with" | median); w0=$(cut -d' ' -f2 "$work/without" | median)
  b1=$(cut -d' ' -f3 "$work/with" | median); b0=$(cut -d' ' -f3 "$work/without" | median)
  lo1=$(cut -d' ' -f1 "$work/with" | lowest); hi1=$(cut -d' ' -f1 "$work/with" | highest)
  lo0=$(cut -d' ' -f1 "$work/without" | lowest); hi0=$(cut -d' ' -f1 "$work/without" | highest)
  row=$(python3 -c "
c1, c0, w1, w0, b1, b0, t1, t0 = $c1, $c0, $w1, $w0, $b1, $b0, $t1, $t0
lo1, hi1, lo0, hi0 = $lo1, $hi1, $lo0, $hi0
# Separated: every run of one side beyond every run of the other.
sep = 'yes, higher' if lo1 > hi0 else 'yes, lower' if hi1 < lo0 else 'no'
print(f'| ${names[$i]} | {c0:.2f} | {c1:.2f} | {100 * (c1 / c0 - 1):+.1f} % | {t0:.2f} | {t1:.2f} | {t1 - t0:+.2f} | {(c1 - c0) - (t1 - t0):+.2f} | {w0:.2f} | {w1:.2f} | {100 * (w1 / w0 - 1):+.1f} % | {b0 / 2**20:.1f} | {b1 / 2**20:.1f} | {lo0:.2f}-{hi0:.2f} | {lo1:.2f}-{hi1:.2f} | {sep} |')")
  echo "$row"
  rows+="$row"$'\n'
done

settings=""
[ "$runs" != 5 ] && settings+="RUNS=$runs "
[ "$only" != . ] && settings+="ONLY='$only' "
[ -n "${NICE:-}" ] && settings+="NICE=$NICE "
settings=${settings% }
table="Measured by \`scripts/callgraph-overhead.sh\` on $(date -u +%Y-%m-%d)${settings:+ ($settings)}, $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; the median of $runs runs each, alternated. Seconds of CPU (user + system, Valgrind and cachescope) and wall; MiB of the trace \`record\` wrote. The split: \`tool\` is Valgrind alone (the tool's stream to /dev/null, \`--cs-calls=no\` and \`yes\`), its change the tool's share of the CPU change, the rest cachescope's (decoding and writing the call events). The CPU ranges are the lowest and highest of the runs of each side; *separated* says whether they do not overlap (the change stands out from the runs' noise).

| program | CPU, --no-calls | CPU, calls | CPU change | tool CPU, no calls | tool CPU, calls | tool's share | cachescope's share | wall, --no-calls | wall, calls | wall change | trace MiB, --no-calls | trace MiB, calls | CPU range, --no-calls | CPU range, calls | separated |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
${rows%$'\n'}"

printf '%s' "$table" | python3 scripts/docs_block.py docs/callgraph.md callgraph-overhead.sh
