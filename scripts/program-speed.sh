#!/usr/bin/env bash
# From program to report, side by side in one run: for each real program, wall and CPU
# seconds of Cachegrind, `record`, `mrc -- PROGRAM`, `report -- PROGRAM`, then `report` and
# `mrc --method exact` on the trace `record` wrote; the ratios issue 38 sets targets for
# (record / Cachegrind by wall and by CPU time, mrc -- PROGRAM / record, report -- PROGRAM /
# record, report TRACE / mrc exact; their ranges in a summary line); and a second
# table of each command's peak resident memory (GNU time's maximum RSS: the largest single
# process of the run, so the Valgrind process under `record`, the larger of cachescope and
# Valgrind under `report -- P`). Writes both tables into docs/report.md (between its
# `<!-- program-speed.sh -->` markers) and on standard output. Cachegrind and `record`, the
# pair of the recording target and the shortest commands, run RUNS times (default 3) and the
# run of median wall time is shown: some `record` runs are slower for reasons outside the
# process (docs/recording.md), and one run each made the ratio swing by 1.5x between two
# tables. Every other command runs once (these take minutes); the load average at both ends is
# printed with the table. Skips, saying so, without Valgrind or GNU time.
#
#   scripts/program-speed.sh        # WORK=DIR keeps the inputs and traces (default target/program-speed)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
  echo "program-speed: skipped, valgrind is not installed" >&2
  exit 0
fi
if ! [ -x /usr/bin/time ]; then
  echo "program-speed: skipped, GNU time (/usr/bin/time, Debian package time) is not installed" >&2
  exit 0
fi
# The real programs and their inputs (scripts/programs.sh, shared with scripts/tlb-curves.sh)
# and the timing helpers (scripts/program-bench.sh, shared with scripts/sampled-speed.sh).
. scripts/program-bench.sh
program_inputs "${WORK:-target/program-speed}"
cargo build --release -q -p cachescope-cli
cs=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope

# The real programs and their inputs (shared with scripts/tlb-curves.sh).
source scripts/programs.sh
programs "$work"

load_start=$(cut -d' ' -f1 /proc/loadavg)
rows=""
mems=""
ratios=$work/ratios.tsv
: > "$ratios"
for i in "${!progs[@]}"; do
  p=${names[$i]}
  f=${progs[$i]}
  t=$work/p$i.cst
  "$f" >/dev/null 2>&1 || true # warms the page cache
  read -r cg_w cg_c cg_m <<<"$(measure_median "$f" timed valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null)"
  read -r rec_w rec_c rec_m <<<"$(measure_median "$f" timed "$cs" record -q -o "$t" --)"
  read -r mrcp_w mrcp_c mrcp_m <<<"$(measure "$f" timed "$cs" mrc -q --method exact --)"
  read -r repp_w repp_c repp_m <<<"$(measure "$f" timed "$cs" report -q -o "$work/rp$i" --)"
  read -r rept_w rept_c rept_m <<<"$(measure timed "$cs" report -q -o "$work/rt$i" "$t")"
  read -r mrct_w mrct_c mrct_m <<<"$(measure timed "$cs" mrc -q --method exact "$t")"
  refs=$("$cs" stats -q --json "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refs"])')
  rows+=$(python3 -c "
r = $refs
cg, rec, mp, rp, rt, mt = ($cg_w, $cg_c), ($rec_w, $rec_c), ($mrcp_w, $mrcp_c), ($repp_w, $repp_c), ($rept_w, $rept_c), ($mrct_w, $mrct_c)
c = lambda x: f'{x[0]:.1f} ({x[1]:.1f})'
q = lambda a, b: a / max(b, 0.01)
# For the summary: Cachegrind's wall time, then record/Cachegrind (wall, CPU), mrc -- P/record
# (wall, CPU), report -- P/record and report/exact (wall).
with open('$ratios', 'a') as f:
    f.write(' '.join(f'{x:.3f}' for x in [cg[0], q(rec[0], cg[0]), q(rec[1], cg[1]), q(mp[0], rec[0]), q(mp[1], rec[1]), q(rp[0], rec[0]), q(rt[0], mt[0])]) + '\n')
print(f'| {\"$p\"} | {r / 1e6:.0f} M | {c(cg)} | {c(rec)} | {c(mp)} | {c(rp)} | {c(rt)} | {c(mt)} | {q(rec[0], cg[0]):.1f}x ({q(rec[1], cg[1]):.1f}x) | {q(mp[0], rec[0]):.2f}x | {q(rp[0], rec[0]):.1f}x | {q(rt[0], mt[0]):.1f}x |')")
  rows+=$'\n'
  mems+="| $p | $cg_m | $rec_m | $mrcp_m | $repp_m | $rept_m | $mrct_m |"$'\n'
  echo "${rows%$'\n'}" | tail -1
done

# The ratios' ranges, over the programs Cachegrind runs for half a second or more (start-up
# dominates the shorter ones).
summary=$(python3 - "$ratios" <<'PY'
import sys
rows = [[float(x) for x in line.split()] for line in open(sys.argv[1]) if line.strip()]
long = [r for r in rows if r[0] >= 0.5] or rows
def span(i, digits=1):
    v = [r[i] for r in long]
    return f"{min(v):.{digits}f}-{max(v):.{digits}f}x"
print(f"Over the {len(long)} programs Cachegrind runs for 0.5 s or more: `record` takes "
      f"{span(1)} Cachegrind's wall time and {span(2)} its CPU time (`record` runs on both "
      f"cores, Cachegrind on one); `mrc -- P` takes {span(3, 2)} `record`'s wall time "
      f"({span(4, 2)} its CPU time); `report -- P` {span(5)} `record`'s; `report TRACE` "
      f"{span(6)} `mrc --method exact TRACE`'s.")
PY
)

table="Measured by \`scripts/program-speed.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; Cachegrind and \`record\` the median of $runs runs by wall time, every other command once. Seconds, wall (CPU: user + system, both cores); refs are the data references \`record\` wrote.

$summary

| program | data refs | Cachegrind | \`record\` | \`mrc -- P\` | \`report -- P\` | \`report TRACE\` | \`mrc --method exact TRACE\` | record / Cachegrind, wall (CPU) | mrc -- P / record | report -- P / record | report / exact |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}

Peak resident memory of each run, MiB (GNU time's maximum RSS: the largest single process, so Valgrind's under Cachegrind and \`record\`, the larger of cachescope's and Valgrind's under the \`-- P\` commands):

| program | Cachegrind | \`record\` | \`mrc -- P\` | \`report -- P\` | \`report TRACE\` | \`mrc --method exact TRACE\` |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${mems%$'\n'}"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/report.md program-speed.sh
echo "docs/report.md updated"
