#!/usr/bin/env bash
# `report --sampled` beside Cachegrind, side by side in one run (issue 57's speed targets),
# and where the time of `report --sampled -- PROGRAM` goes. For bzip2 -9 of 2 MB and sqlite3
# (scripts/programs.sh's programs and inputs) and for bzip2 -9 of 48 MB (over 10^10
# references; its full trace is not recorded): wall and CPU seconds and peak memory of
# Cachegrind, `record`, `mrc --method exact TRACE`, `report --sampled -- P` and
# `report --sampled TRACE`, with the ratios the issue sets targets for (report --sampled -- P
# against Cachegrind, report --sampled TRACE against the exact curve); then the program's
# CPU time under Valgrind with no tool, with the recording tool writing into /dev/null, with
# the sampling tool writing nothing (limit 0: the line filter and the counts alone) and at
# the default rate into /dev/null (the records too), beside `report --sampled -- P` (both
# processes: the tool, and cachescope's reader and analyses on the other core). Cachegrind,
# the tool rows and the two sampled reports run RUNS times (default 3) and the run of median
# wall time is shown; `record` and the exact curve once, the large program's rows once.
# Writes both tables into docs/recording.md (between its `<!-- sampled-speed.sh -->` markers)
# and on standard output, with the load average at both ends. Skips, saying so, without
# Valgrind or GNU time.
#
#   scripts/sampled-speed.sh     # WORK=DIR keeps the inputs and traces (default target/sampled-speed)
#                                # LARGE=0 leaves out the 48 MB run
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  echo "sampled-speed: skipped, valgrind is not installed" >&2
  exit 0
fi
if ! [ -x /usr/bin/time ]; then
  echo "sampled-speed: skipped, GNU time (/usr/bin/time, Debian package time) is not installed" >&2
  exit 0
fi
. scripts/program-bench.sh
program_inputs "${WORK:-target/sampled-speed}"
cargo build --release -q -p cachescope-cli
cs=$PWD/${CARGO_TARGET_DIR:-target}/release/cachescope
[ -x "$cs" ] || cs=$CARGO_TARGET_DIR/release/cachescope
# The tool's directory as this build's `record` unpacks it (VALGRIND_LIB for the tool rows),
# in a cache of the script's own (the shared one may hold other builds' tools), and Valgrind's
# own tools beside it.
rm -rf "$work/cache" # an earlier build's tool would be a second match below
XDG_CACHE_HOME=$work/cache "$cs" record -q --no-events -o "$work/true.cst" -- true >/dev/null 2>&1
tooldir=$(ls -d "$work"/cache/cachescope/valgrind-*/plain)
lib=$work/lib
mkdir -p "$lib"
ln -sf "$tooldir"/* "$lib"/
core=$(readlink "$tooldir/vgpreload_core-amd64-linux.so")
ln -sf "$(dirname "$core")"/none-amd64-linux "$(dirname "$core")"/cachegrind-amd64-linux "$lib"/
text 1152000 > "$work/text48m.txt"
p_bzip2_large() { "$@" bzip2 -9 -c "$work/text48m.txt"; }

names=()
progs=()
large=()
add() { if command -v "$3" >/dev/null; then names+=("$1"); progs+=("$2"); large+=("$4"); else echo "skipped $1: $3 not found" >&2; fi; }
add "bzip2 -9 (2 MB)" p_bzip2 bzip2 0
add "sqlite3 (30 K rows)" p_sqlite3 sqlite3 0
[ "${LARGE:-1}" = 0 ] || add "bzip2 -9 (48 MB)" p_bzip2_large bzip2 1

# The default rate's limit, as the tool is told it (cachescope::spatial::Limit::from_rate(0.01))
# and the hash key of seed 1: `report --sampled`'s defaults.
limit=$(python3 -c 'print(hex(int(0.01 * 2**64) - 1))')
key=$(python3 -c '
M = 2**64 - 1
def mix(x):
    z = (x + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
print(hex(mix(1)))')
tool() { env VALGRIND_LIB="$lib" /usr/bin/time -o "$work/time" -f '%e %U %S %M' valgrind "$@"; }
# The live run's own tool process, with every option `report --sampled -- P` gives it and in
# its pipes (the rows above leave out the reuse samplers, their windows and the events): a
# wrapper named by CACHESCOPE_VALGRIND times it (and names itself as the parent the tool
# writes for, `--cs-parent`, as GNU time stands between them). "CPU of the whole run, CPU of
# its tool" for the run of median CPU of $runs.
cat > "$work/vgtimed" <<EOF
#!/bin/bash
args=()
for a in "\$@"; do case \$a in --cs-parent=*) a=--cs-parent=\$\$ ;; esac; args+=("\$a"); done
exec /usr/bin/time -o "$work/tooltime" -f '%e %U %S %M' valgrind "\${args[@]}"
EOF
chmod +x "$work/vgtimed"
live_split() {
  local k
  for ((k = 0; k < runs; k++)); do
    rm -f "$work/tooltime"
    read -r _ c _ <<<"$(CACHESCOPE_VALGRIND=$work/vgtimed measure "$1" timed "$cs" report -q --sampled -o "$work/lv" --)"
    echo "$c $(tail -1 "$work/tooltime" | awk '{ printf "%.2f", $2 + $3 }')"
  done | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2)'
}
# The references (instruction and data) in the summary of the last Cachegrind run measured.
cachegrind_refs() { awk '/ I +refs:| D +refs:/ { gsub(",", "", $4); n += $4 } END { print n }' "$work/err"; }

load_start=$(cut -d' ' -f1 /proc/loadavg)
rows=""
mems=""
parts=""
for i in "${!progs[@]}"; do
  p=${names[$i]}
  f=${progs[$i]}
  t=$work/s$i.cst
  "$f" >/dev/null 2>&1 || true # warms the page cache
  if [ "${large[$i]}" = 1 ]; then
    read -r cg_w cg_c cg_m <<<"$(measure "$f" timed valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null)"
    refs=$(cachegrind_refs)
    read -r sp_w sp_c sp_m <<<"$(measure "$f" timed "$cs" report -q --sampled -o "$work/sp$i" --)"
    rec_w=nan rec_c=nan rec_m=nan mt_w=nan mt_c=nan mt_m=nan st_w=nan st_c=nan st_m=nan
  else
    read -r cg_w cg_c cg_m <<<"$(measure_median "$f" timed valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null)"
    refs=$(cachegrind_refs)
    read -r sp_w sp_c sp_m <<<"$(measure_median "$f" timed "$cs" report -q --sampled -o "$work/sp$i" --)"
    read -r rec_w rec_c rec_m <<<"$(measure "$f" timed "$cs" record -q -o "$t" --)"
    read -r mt_w mt_c mt_m <<<"$(measure timed "$cs" mrc -q --method exact "$t")"
    read -r st_w st_c st_m <<<"$(measure_median timed "$cs" report -q --sampled -o "$work/st$i" "$t")"
  fi
  # Where the time goes: the program's CPU under Valgrind, tool by tool.
  one=$runs
  [ "${large[$i]}" = 1 ] && runs=1
  read -r _ none_c _ <<<"$(measure_median "$f" tool --tool=none)"
  read -r _ full_c _ <<<"$(measure_median "$f" tool --tool=cachescope --cs-out=/dev/null)"
  read -r _ filt_c _ <<<"$(measure_median "$f" tool --tool=cachescope --cs-out=/dev/null --cs-spatial=yes --cs-spatial-key="$key" --cs-spatial-limit=0)"
  read -r _ emit_c _ <<<"$(measure_median "$f" tool --tool=cachescope --cs-out=/dev/null --cs-spatial=yes --cs-spatial-key="$key" --cs-spatial-limit="$limit")"
  read -r live_c tool_c <<<"$(live_split "$f")"
  runs=$one
  # The live run's sampled references: which lines the hash samples moves with the program's
  # addresses (its stack with the size of the environment), and the reader's and analyses'
  # work with the references to them.
  sampled=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['sampled']['sampled_refs'])" "$work/sp$i/report.json" 2>/dev/null || echo nan)
  rows+=$(python3 -c "
import math
nan = math.nan  # the large run's record and trace columns
r = $refs
cg, rec, mt, sp, st = ($cg_w, $cg_c), ($rec_w, $rec_c), ($mt_w, $mt_c), ($sp_w, $sp_c), ($st_w, $st_c)
c = lambda x: '-' if math.isnan(x[0]) else f'{x[0]:.1f} ({x[1]:.1f})'
q = lambda a, b: '-' if math.isnan(a) or math.isnan(b) else f'{a / b:.2f}x'
print(f'| {\"$p\"} | {r / 1e9:.2f} G | {c(cg)} | {c(rec)} | {c(mt)} | {c(sp)} | {c(st)} | {q(sp[0], cg[0])} | {q(st[0], mt[0])} |')")
  rows+=$'\n'
  mems+="| $p | $cg_m | ${rec_m/nan/-} | ${mt_m/nan/-} | $sp_m | ${st_m/nan/-} |"$'\n'
  parts+=$(python3 -c "
import math
nan = math.nan
none, full, filt, emit, live, tool, n = $none_c, $full_c, $filt_c, $emit_c, $live_c, $tool_c, $sampled
m = '-' if math.isnan(n) else f'{n / 1e6:.1f} M'
print(f'| {\"$p\"} | {none:.2f} | {full:.2f} | {filt:.2f} (+{filt - none:.2f}) | {emit:.2f} (+{emit - filt:.2f}) | {tool:.2f} (+{tool - emit:.2f}) | {tool / full:.2f} | {live:.2f} | {live - tool:.2f} | {m} |')")
  parts+=$'\n'
  echo "${rows%$'\n'}" | tail -1
  echo "${parts%$'\n'}" | tail -1
done

table="Measured by \`RUNS=$runs LARGE=${LARGE:-1} scripts/sampled-speed.sh\` (under \`nice -n 10\` when the load says so) on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; Cachegrind, \`report --sampled\` and the tool rows the median of $runs runs by wall time, \`record\` and the exact curve once, the 48 MB rows once. Seconds, wall (CPU: user + system, both cores, Valgrind included); refs are Cachegrind's instruction and data references. \`report --sampled\` at its defaults (rate 0.01, at most 2^18 lines sampled at once); the 48 MB run's full trace is not recorded (-).

| program | refs | Cachegrind | \`record\` | \`mrc --method exact TRACE\` | \`report --sampled -- P\` | \`report --sampled TRACE\` | sampled -- P / Cachegrind | sampled TRACE / exact |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}

Peak resident memory, MiB (GNU time's maximum RSS: the largest single process, Valgrind's or cachescope's):

| program | Cachegrind | \`record\` | \`mrc --method exact TRACE\` | \`report --sampled -- P\` | \`report --sampled TRACE\` |
| --- | ---: | ---: | ---: | ---: | ---: |
${mems%$'\n'}

Where the time of \`report --sampled -- P\` goes: CPU seconds of the program under Valgrind with no tool (\`--tool=none\`), under the recording tool writing into /dev/null, under the sampling tool writing nothing (limit 0: the inline line filter and the counts; in parentheses, what it adds to no tool), at the default rate into /dev/null (the samples' records; what they add), the tool process of a live \`report --sampled -- P\` with all its options, in its pipes (timed through a wrapper named by \`CACHESCOPE_VALGRIND\`; what the reuse samplers, their windows and the events add), that tool's CPU over the recording tool's (the factor of the one-minute note of an exact \`report -- P\`, \`SAMPLED_OVER_FULL\` in crates/cachescope-cli/src/program/estimate.rs), the whole \`report --sampled -- P\` (both processes, the run of median CPU) and cachescope's own part of it (the reader and the analyses: the whole less its tool), with the references its last run sampled (cachescope's part grows with them; which lines the hash samples moves with the program's addresses, its stack with the size of the environment, so another environment can sample another share):

| program | no tool | recording tool | line filter | + records at 1 % | live tool | live tool / recording | \`report --sampled -- P\` | cachescope's part | sampled refs |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${parts%$'\n'}"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/recording.md sampled-speed.sh
echo "docs/recording.md updated"
