#!/usr/bin/env bash
# Regenerates docs/accuracy/mini.md: miniature simulation (--method mini, rate 0.01) against
# full per-size simulation for LRU, FIFO, SRRIP and DRRIP on the real programs that
# scripts/l2-accuracy.sh records (kept in its trace directory) and the synthetic workloads.
#
#   scripts/mini-accuracy.sh [TRACE_DIR]     (default: target/l2-traces; the table in the repo
#                                            is of `RECORDER=cachescope scripts/real-traces.sh DIR`)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/l2-traces}
if ! ls "$out"/*.cst >/dev/null 2>&1; then
    echo "mini-accuracy: no traces in $out; recording them with scripts/l2-accuracy.sh" >&2
    bash scripts/l2-accuracy.sh "$out"
fi
cargo build --release -q -p cachescope --example accuracy
"${CARGO_TARGET_DIR:-target}/release/examples/accuracy" mini "$out" docs/accuracy/mini.md

python3 scripts/accuracy-summary.py
