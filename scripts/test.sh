#!/usr/bin/env bash
# The whole test suite, as the README gives it: the Rust workspace, then the Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked "$@"
bash scripts/test-python.sh
