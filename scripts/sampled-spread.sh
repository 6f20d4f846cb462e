#!/usr/bin/env bash
# How much `report --sampled -- PROGRAM`'s time moves with which lines the hash samples.
# The line filter keeps a line when the hash of its address is under the limit, and a
# program's stack sits where the size of its environment puts it: the same program, seed and
# input can sample one of its hottest lines (the stack's) in one environment and not in the
# next, and a live run's work grows with the references to the sampled lines. So for bzip2 -9
# of 2 MB and sqlite3 (scripts/programs.sh), each run under `env -i` with PATH, HOME and a
# padding variable of PADS bytes (default 0 500 1000 2000 4000): Cachegrind's wall
# time and `report --sampled --seed 1 -- P`'s, their ratio, and the references the report
# sampled; then the median and the worst ratio per program. Each cell the run of median wall
# time of RUNS (default 3). Writes the table into docs/recording.md (between its
# `<!-- sampled-spread.sh -->` markers) and on standard output. Skips, saying so, without
# Valgrind or GNU time.
#
#   scripts/sampled-spread.sh     # WORK=DIR keeps the inputs (default target/sampled-spread)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/preamble.sh
preamble sampled-spread time
. scripts/program-bench.sh
program_inputs "$work"
cs=$CS
pads=(${PADS:-0 500 1000 2000 4000})


load_start=$(cut -d' ' -f1 /proc/loadavg)
rows=""
summary=""
for f in p_bzip2 p_sqlite3; do
  case $f in p_bzip2) p="bzip2 -9 (2 MB)" exe=bzip2 ;; p_sqlite3) p="sqlite3 (30 K rows)" exe=sqlite3 ;; esac
  if ! command -v "$exe" >/dev/null; then echo "skipped $p: $exe not found" >&2; continue; fi
  "$f" >/dev/null 2>&1 || true # warms the page cache
  ratios=()
  for pad in "${pads[@]}"; do
    # An environment of PATH, HOME and PAD of $pad bytes.
    padded=(env -i PATH=/usr/bin:/bin HOME="$HOME" PAD="$(head -c "$pad" /dev/zero | tr '\0' x)")
    read -r cg_w _ _ <<<"$(measure_median "$f" timed "${padded[@]}" valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null)"
    read -r sp_w sp_c _ <<<"$(measure_median "$f" timed "${padded[@]}" "$cs" report -q --sampled --seed 1 -o "$work/sp" --)"
    n=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['sampled']['sampled_refs'])" "$work/sp/report.json")
    r=$(python3 -c "print(f'{$sp_w / $cg_w:.2f}')")
    ratios+=("$r")
    rows+="| $p | $pad | $cg_w | $sp_w ($sp_c) | ${r}x | $(python3 -c "print(f'{$n / 1e6:.2f} M')") |"$'\n'
    echo "${rows%$'\n'}" | tail -1
  done
  summary+=$(printf '%s\n' "${ratios[@]}" | sort -n | awk -v p="$p" '{ a[NR] = $1 } END { printf "%s: median %.2fx, worst %.2fx, best %.2fx over %d environments\n", p, a[int((NR + 1) / 2)], a[NR], a[1], NR }')
  summary+=$'\n'
done

table="Measured by \`${PADS:+PADS=\"$PADS\" }scripts/sampled-spread.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end; each cell the run of median wall time of $runs, seconds of wall time (CPU of both processes in parentheses). Each row runs the program under \`env -i\` with PATH, HOME and a variable of \"pad\" bytes, which moves its stack; \`report --sampled --seed 1 -- P\` at its defaults; sampled refs are the references to the lines the hash sampled (report.json's \`sampled.sampled_refs\`).

| program | pad (bytes) | Cachegrind | \`report --sampled -- P\` | ratio | sampled refs |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}

${summary%$'\n'}"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/recording.md sampled-spread.sh
echo "docs/recording.md updated"
