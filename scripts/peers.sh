#!/usr/bin/env bash
# cachescope against libCacheSim on the same reference streams: writes docs/accuracy/peers.md.
# Records the real traces first (scripts/real-traces.sh, kept under target/real-traces), makes
# two synthetic ones, and installs libCacheSim's Python package in a virtualenv under target/.
#
#   scripts/peers.sh [REAL_TRACE_DIR]
#
# Exits 0 with a printed reason when python3 -m venv or pip cannot provide libCacheSim;
# exits 1 when an exact policy (LRU, FIFO) disagrees.
set -euo pipefail
cd "$(dirname "$0")/.."
real=${1:-target/real-traces}
target=${CARGO_TARGET_DIR:-target}
venv=target/peers-venv
if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1 || ! "$venv/bin/pip" install -q libcachesim; then
        echo "peers: could not install libCacheSim's Python package (pip install libcachesim); skipped" >&2
        rm -rf "$venv"
        exit 0
    fi
fi
cargo build --release -p cachescope-cli >&2
bin="$(cd "$target" && pwd)/release/cachescope"
bash scripts/real-traces.sh "$real"
mkdir -p target/peers
"$bin" generate loop --lines 1000 --refs 300000 -o target/peers/loop.cst --quiet
"$bin" generate zipf --lines 20000 --refs 2000000 -o target/peers/zipf.cst --quiet
# A million lines: the only trace here large enough to score sampling at rates of 1 % and below.
[ -s target/peers/zipf-1m.cst ] \
    || "$bin" generate zipf --lines 1000000 --refs 20000000 -o target/peers/zipf-1m.cst --quiet
shopt -s nullglob
"$venv/bin/python" scripts/peers.py "$bin" docs/accuracy/peers.md \
    "$real"/*.lackey.zst "$real"/*.cst target/peers/zipf.cst target/peers/zipf-1m.cst \
    target/peers/loop.cst

python3 scripts/accuracy-summary.py
