#!/usr/bin/env bash
# Regenerates the accuracy tables in docs/accuracy/: records the real programs' traces (once,
# scripts/real-traces.sh), then measures every model against its exact reference on them and on
# the synthetic workloads.
#
#   scripts/accuracy.sh                 # every table
#   scripts/accuracy.sh sampling hotl   # some of them: sampling, hotl, corun, phases, l2
#
# TRACES=DIR reuses traces recorded elsewhere (default target/real-traces). Without Valgrind the
# tables cover the synthetic workloads only, and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-target/real-traces}
scripts/real-traces.sh "$traces"
cargo build --release -q -p cachescope --example accuracy
mkdir -p docs/accuracy
for table in "${@:-sampling hotl corun phases l2}"; do
    for t in $table; do
        if [ "$t" = l2 ]; then
            scripts/l2-accuracy.sh # records its own traces with cachescope's tool
        else
            target/release/examples/accuracy "$t" "$traces" "docs/accuracy/$t.md"
        fi
    done
done
