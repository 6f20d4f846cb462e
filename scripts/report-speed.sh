#!/usr/bin/env bash
# Times `cachescope report` against `cachescope mrc --method exact` on the same native traces,
# in one run, and writes the table into docs/report.md (between its `<!-- report-speed.sh -->`
# markers) and on standard output, with the ratio report / mrc. The traces: those given as
# arguments, or by default gzip -9 of a generated text, recorded with cachescope's Valgrind
# tool (skipped, saying so, without Valgrind), and the built-in zipf workload.
#
#   scripts/report-speed.sh                      # WORK=DIR keeps the traces elsewhere (default target/report-speed)
#   scripts/report-speed.sh A.cst B.cst          # native traces of real programs
set -euo pipefail
cd "$(dirname "$0")/.."
work=${WORK:-target/report-speed}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cargo build --release -q -p cachescope-cli
cs=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope

traces=("$@")
if [ ${#traces[@]} -gt 0 ]; then
  :
elif command -v valgrind >/dev/null && command -v gzip >/dev/null; then
  seq 1 40000 | awk '{ printf "%08x line %d of the sample text\n", ($1 * 2654435761) % 4294967296, $1 }' > "$work/text.txt"
  "$cs" record -q --no-events -o "$work/gzip.cst" -- gzip -9 -c "$work/text.txt" >/dev/null
  traces+=("$work/gzip.cst")
else
  echo "skipped gzip: valgrind or gzip is missing" >&2
fi
if [ $# -eq 0 ]; then
  "$cs" generate zipf --lines 262144 --refs 20000000 -q -o "$work/zipf.cst"
  traces+=("$work/zipf.cst")
fi
load_start=$(cut -d' ' -f1 /proc/loadavg)

now() { python3 -c 'import time; print(time.monotonic())'; }
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; python3 -c "print(f'{$(now) - $t0:.2f}')"; }

rows=""
for t in "${traces[@]}"; do
  refs=$("$cs" stats --json "$t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refs"])')
  timed "$cs" stats -q "$t" >/dev/null # warms the page cache
  t_mrc=$(timed "$cs" mrc -q --method exact "$t")
  t_rep=$(timed "$cs" report -q "$t" -o "$work/report")
  t_rep1=$(timed "$cs" report -q --threads 1 "$t" -o "$work/report1")
  rows+=$(python3 -c "
r, m, a, b = $refs, $t_mrc, $t_rep, $t_rep1
print(f'| {\"$(basename "$t")\"} | {r / 1e6:.1f} M | {m:.2f} s | {a:.2f} s ({r / a / 1e6:.1f} M/s) | {b:.2f} s | {a / m:.1f}x |')")
  rows+=$'\n'
done

table="Measured by \`scripts/report-speed.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end.

| native trace | data references | \`mrc --method exact\` | \`report\` (every core) | \`report --threads 1\` | report / mrc |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows%$'\n'}"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/report.md report-speed.sh
echo "docs/report.md updated"
