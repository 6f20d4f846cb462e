#!/usr/bin/env bash
# Regenerates the accuracy tables in docs/accuracy/: records the real programs' traces (once,
# scripts/real-traces.sh), then measures every model against its exact reference on them and on
# the synthetic workloads.
#
#   scripts/accuracy.sh                 # every table
#   scripts/accuracy.sh sampling hotl   # some of them: sampling, hotl, corun, phases, l2
#
# TRACES=DIR reuses lackey traces recorded elsewhere (default target/real-traces), RECORDED=DIR
# the native ones of the phases table (default target/recorded-traces). Without Valgrind the
# tables cover the synthetic workloads only, and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
traces=${TRACES:-target/real-traces}
# The phases and hotl tables read native traces from `cachescope record` (NAME.cst), the
# recorder users run; the other tables keep their lackey traces.
recorded=${RECORDED:-target/recorded-traces}
# Programs no model was tuned on, reported apart in the hotl table (scripts/heldout-traces.sh).
heldout=${HELDOUT:-target/heldout-traces}
tables="${*:-sampling hotl corun phases l2}"
native() { [ "$1" = phases ] || [ "$1" = hotl ]; }
lackey=no
for t in $tables; do native "$t" || lackey=yes; done
if [ $lackey = yes ]; then scripts/real-traces.sh "$traces"; fi
case " $tables " in *" phases "* | *" hotl "*) RECORDER=cachescope scripts/real-traces.sh "$recorded" ;; esac
cargo build --release -q -p cachescope --example accuracy
mkdir -p docs/accuracy
for t in $tables; do
    if [ "$t" = l2 ]; then
        scripts/l2-accuracy.sh # records its own traces with cachescope's tool
        continue
    fi
    dir=$traces
    if native "$t"; then dir=$recorded; fi
    held=()
    if [ "$t" = hotl ]; then
        scripts/heldout-traces.sh "$heldout"
        held=("$heldout")
    fi
    "${CARGO_TARGET_DIR:-target}/release/examples/accuracy" "$t" "$dir" "docs/accuracy/$t.md" "${held[@]}"
done

# The README's headline table, from the tables' summary lines.
python3 scripts/accuracy-summary.py
