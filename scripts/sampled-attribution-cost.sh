#!/usr/bin/env bash
# What `report --sampled --per-structure TRACE`'s per-structure attribution costs (issue 57): on recorded
# traces with their event logs (those of scripts/sampled-accuracy.sh's WORK), the wall and CPU
# seconds and peak memory of `report --sampled --per-structure TRACE` (the attribution from the per-structure
# line sample of the full stream, which the sampled stage hands to it on a thread beside the
# sampled pass), of the same
# report without the event log (no attribution: the trace linked alone into a scratch
# directory), of `attribute --per-structure RATE TRACE` alone and of `mrc --method exact
# TRACE` (the issue's speed target: the sampled report within the exact curve's wall time).
# Each command runs RUNS times (default 1), alternating, under `nice -n 10`; the run of median
# wall time is shown. Writes the block `sampled-attribution-cost.sh` of docs/accuracy/sampled.md
# and prints it, with the load average at both ends.
#
#   TRACES="W/gzip.cst W/sqlite3.cst" scripts/sampled-attribution-cost.sh   # RATE (0.01), RUNS
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -x /usr/bin/time ]; then
  echo "sampled-attribution-cost: skipped, GNU time (/usr/bin/time) is not installed" >&2
  exit 0
fi
: "${TRACES:?give TRACES, recorded traces with their event logs (TRACE.events)}"
rate=${RATE:-0.01}
runs=${RUNS:-1}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p cachescope-cli
cs=$(cd "$target/release" && pwd)/cachescope
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load_start=$(cut -d' ' -f1 /proc/loadavg)

# One timed run: "wall cpu kb" of the command.
timed() {
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" nice -n 10 "$@" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
  awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$tmp/time"
}
# The run of median wall time of RUNS.
median() { sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }

rows=""
for t in $TRACES; do
  [ -f "$t.events" ] || { echo "sampled-attribution-cost: $t has no event log beside it" >&2; exit 1; }
  name=$(basename "$t" .cst)
  mkdir -p "$tmp/alone"
  ln -sf "$(cd "$(dirname "$t")" && pwd)/$(basename "$t")" "$tmp/alone/$name.cst"
  : > "$tmp/ps"; : > "$tmp/none"; : > "$tmp/attr"; : > "$tmp/exact"
  for _ in $(seq "$runs"); do
    echo "sampled-attribution-cost: $name" >&2
    timed "$cs" report -q --sampled --per-structure --rate "$rate" -o "$tmp/out" "$t" >> "$tmp/ps"
    timed "$cs" report -q --sampled --rate "$rate" -o "$tmp/out" "$tmp/alone/$name.cst" >> "$tmp/none"
    timed "$cs" attribute -q --json --per-structure "$rate" "$t" >> "$tmp/attr"
    timed "$cs" mrc -q --method exact "$t" >> "$tmp/exact"
  done
  read -r pw pc pm < <(median < "$tmp/ps")
  read -r nw nc nm < <(median < "$tmp/none")
  read -r aw ac am < <(median < "$tmp/attr")
  read -r ew ec em < <(median < "$tmp/exact")
  ratio=$(awk -v a="$pw" -v b="$ew" 'BEGIN { printf "%.2f", a / b }')
  rows+="| $name | $pw s, $pc s CPU, $((pm / 1024)) MB | $nw s, $nc s CPU, $((nm / 1024)) MB | $aw s, $ac s CPU, $((am / 1024)) MB | $ew s, $ec s CPU, $((em / 1024)) MB | ${ratio}x |"$'\n'
done
load_end=$(cut -d' ' -f1 /proc/loadavg)

block=$(cat <<EOF
Measured by \`scripts/sampled-attribution-cost.sh\` on $(date -u +%F) (commit $(git rev-parse --short HEAD)), rate $rate, $runs run(s) each (the median wall time's), under \`nice -n 10\`, load average $load_start at the start and $load_end at the end. Wall and CPU seconds, peak memory.

| trace | \`report --sampled --per-structure TRACE\` (per-structure attribution beside) | the same, no event log (no attribution) | \`attribute --per-structure $rate TRACE\` | \`mrc --method exact TRACE\` | sampled report / exact curve, wall |
| --- | --- | --- | --- | --- | --- |
${rows%$'\n'}
EOF
)
printf '%s\n' "$block"
printf '%s' "$block" | python3 scripts/docs_block.py docs/accuracy/sampled.md sampled-attribution-cost.sh
