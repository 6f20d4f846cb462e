#!/usr/bin/env bash
# The whole test suite, as the README gives it: the Rust workspace, then the Python package.
# Every test that skips says so in a line `SKIPPED test: why [need]`, collected in a log that
# is printed at the end; CACHESCOPE_TEST_REQUIRE (a comma list of needs: valgrind, tool, cc,
# chromium, mpi, python, …) turns the skips of those needs into failures (.ci/run sets it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The log outlives the run (a caller such as .ci/run may add to it and print it again).
export CACHESCOPE_TEST_SKIP_LOG="${CACHESCOPE_TEST_SKIP_LOG:-${CARGO_TARGET_DIR:-$PWD/target}/test-skips.log}"
mkdir -p "$(dirname "$CACHESCOPE_TEST_SKIP_LOG")"
: >"$CACHESCOPE_TEST_SKIP_LOG"
# Printed however the run ends: a failure's cause may be a skip nearby.
trap 'bash scripts/test-skips.sh "$CACHESCOPE_TEST_SKIP_LOG"' EXIT

cargo test --workspace --locked "$@"
bash scripts/test-python.sh
