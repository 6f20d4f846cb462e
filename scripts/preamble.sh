#!/usr/bin/env bash
# Sourced by the scripts that measure real programs, after they `cd` to the repository:
# `preamble NAME [time]` exits 0 saying why when Valgrind (or, with `time`, GNU time) is missing,
# sets `work` (WORK, or target/NAME: absolute and created) and `CS` (CS, or the binary of a
# release build made now).
preamble() {
  local name=$1 need=${2:-}
  if ! command -v valgrind >/dev/null; then
    echo "$name: skipped, valgrind is not installed" >&2
    exit 0
  fi
  if [ "$need" = time ] && ! [ -x /usr/bin/time ]; then
    echo "$name: skipped, GNU time (/usr/bin/time, Debian package time) is not installed" >&2
    exit 0
  fi
  work=${WORK:-target/$name}
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
  if [ -z "${CS:-}" ]; then
    cargo build --release -q -p cachescope-cli
    CS=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope
  fi
}
