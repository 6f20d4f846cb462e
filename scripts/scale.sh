#!/usr/bin/env bash
# End-to-end scaling figures for docs/scale.md: a >= 100 M-reference native trace under target/
# (generated once, never committed), each mergeable analysis on 1 and 2 threads (best of RUNS,
# outputs compared byte for byte), `mpirun -n 2` against 2 threads, and the per-rank figures the
# 64-rank projection uses. Usage: scripts/scale.sh   (REFS, LINES, RUNS override the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."

REFS=${REFS:-100000000}
LINES=${LINES:-1048576}
RUNS=${RUNS:-3}
target=${CARGO_TARGET_DIR:-target}
out=target/scale
mkdir -p "$out"

mpi=0
if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1; then mpi=1; fi
features=()
[ "$mpi" = 1 ] && features=(--features mpi)
cargo build --release -p cachescope-cli "${features[@]}" >&2
bin="$target/release/cachescope"

trace="$out/zipf-$REFS-$LINES.cst"
if [ ! -f "$trace" ]; then
  echo "generating $trace" >&2
  "$bin" generate zipf --refs "$REFS" --lines "$LINES" --seed 1 -o "$trace"
fi
echo "trace: $trace ($(stat -c %s "$trace") bytes), $REFS references over $LINES lines"
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Wall seconds of the fastest of RUNS runs of "$@" (stdout to $out/last.out).
best() {
  local best_t="" t s e
  for _ in $(seq "$RUNS"); do
    s=$(date +%s.%N)
    "$@" > "$out/last.out"
    e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc -l)
    if [ -z "$best_t" ] || [ "$(echo "$t < $best_t" | bc -l)" = 1 ]; then best_t=$t; fi
  done
  printf '%.2f' "$best_t"
}

printf '\n%-24s %9s %9s %8s %s\n' analysis "1 thr s" "2 thr s" speedup "identical"
for cmd in "mrc --method exact" "mrc --method hotl-rt" "footprint" "mrc --method hotl" "stats"; do
  read -r -a words <<< "$cmd"
  t1=$(best "$bin" "${words[@]}" "$trace" --json --quiet --threads 1)
  cp "$out/last.out" "$out/one.out"
  t2=$(best "$bin" "${words[@]}" "$trace" --json --quiet --threads 2)
  same=no
  cmp -s "$out/one.out" "$out/last.out" && same=yes
  printf '%-24s %9s %9s %7.2fx %s\n' "$cmd" "$t1" "$t2" "$(echo "$t1 / $t2" | bc -l)" "$same"
done

if [ "$mpi" = 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo
  t2=$(best "$bin" mrc --method exact "$trace" --json --quiet --threads 2)
  cp "$out/last.out" "$out/two.out"
  tm=$(best mpirun -n 2 --oversubscribe "$bin" mrc --method exact "$trace" --json --quiet --threads 1)
  same=no
  cmp -s "$out/two.out" "$out/last.out" && same=yes
  printf 'mrc exact: 2 threads %s s, mpirun -n 2 (1 thread each) %s s: %+.1f %%, identical %s\n' \
    "$t2" "$tm" "$(echo "($tm / $t2 - 1) * 100" | bc -l)" "$same"
  # Per-rank figures for the projection: rank 0's own pass, and receive + merge of a partial.
  CACHESCOPE_MPI_TIMING=1 mpirun -n 2 --oversubscribe "$bin" mrc --method exact "$trace" \
    --json --quiet --threads 1 2>&1 >/dev/null | grep 'cachescope: mpi:' || true
else
  echo "MPI: skipped (mpirun or mpicc missing)"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
