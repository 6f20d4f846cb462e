#!/usr/bin/env bash
# Peak memory of `mrc --sampled` against the number of distinct lines: a synthetic stride
# workload touching each line once (LINES distinct lines), sampled at rate 0.1 with the
# fixed-size sample (--sample-lines, its default) and at a fixed rate (--sample-lines 0).
# The fixed-size one must stay flat; writes the generated block of docs/accuracy/sampled.md
# between the sampled-memory.sh markers.
#
#   scripts/sampled-memory.sh     # LINES="1000000 10000000 30000000"
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
lines=${LINES:-1000000 10000000 30000000}
cargo build --release -q -p cachescope-cli
cs=$target/release/cachescope
doc=docs/accuracy/sampled.md
load_start=$(cut -d' ' -f1 /proc/loadavg)
rows=""
for n in $lines; do
  row="| $n |"
  for sl in 262144 0; do
    kb=$(/usr/bin/time -f '%M' "$cs" mrc -q --workload stride --stride 64 --lines "$n" --refs "$n" \
      --sampled --rate 0.1 --sample-lines "$sl" --range 1M..64M --json 2>&1 >/dev/null | tail -1)
    row="$row $((kb / 1024)) MiB |"
  done
  rows="$rows$row"$'\n'
done
load_end=$(cut -d' ' -f1 /proc/loadavg)
block=$(cat <<EOF
Measured by \`scripts/sampled-memory.sh\` on $(date -u +%Y-%m-%d) (commit $(git rev-parse --short HEAD)), load average $load_start at the start and $load_end at the end: peak resident memory of \`mrc --sampled --rate 0.1 --workload stride --stride 64 --lines N --refs N\` (synthetic: N distinct lines, each touched once).

| distinct lines | \`--sample-lines 262144\` (default) | \`--sample-lines 0\` (fixed rate) |
| ---: | ---: | ---: |
$rows
EOF
)
printf '%s' "$block" | python3 scripts/docs_block.py "$doc" sampled-memory.sh
echo "sampled-memory: wrote $doc" >&2
