#!/usr/bin/env bash
# End-to-end scaling figures for docs/scale.md: a >= 100 M-reference native trace under target/
# (generated once, never committed), each mergeable analysis on 1 and 2 threads (best of RUNS,
# outputs compared byte for byte), `mpirun -n 2` against 2 threads, and the per-rank figures the
# 64-rank projection uses; then the same on a lackey text trace of TEXT_REFS references (cut into
# byte ranges, one per thread), and MPI again on a REFS_MPI-reference trace so that the fixed
# launch cost of mpirun is amortised. Every row gives wall seconds and CPU seconds (user + sys) of
# the fastest run: on a shared machine the CPU time shows the work, the wall time the speedup.
# Usage: scripts/scale.sh   (REFS, LINES, RUNS, TEXT_REFS, REFS_MPI, MPI_CMDS override the
# defaults; TEXT_REFS=0 or REFS_MPI=0 skips that part)
set -euo pipefail
cd "$(dirname "$0")/.."

REFS=${REFS:-100000000}
LINES=${LINES:-1048576}
RUNS=${RUNS:-3}
TEXT_REFS=${TEXT_REFS:-20000000}
REFS_MPI=${REFS_MPI:-400000000}
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

# "wall cpu" seconds (cpu = user + sys) of the fastest of RUNS runs of "$@" (stdout to
# $out/last.out).
best() {
  local best_w="" best_c="" w c
  for _ in $(seq "$RUNS"); do
    { TIMEFORMAT='%R %U %S'; time "$@" > "$out/last.out" 2> "$out/last.err"; } 2> "$out/time"
    read -r w u s < "$out/time"
    c=$(echo "$u + $s" | bc -l)
    if [ -z "$best_w" ] || [ "$(echo "$w < $best_w" | bc -l)" = 1 ]; then best_w=$w; best_c=$c; fi
  done
  printf '%.2f %.2f' "$best_w" "$best_c"
}

# One table row: "$1" on trace "$2", 1 and 2 threads, outputs compared.
row() {
  local cmd=$1 tr=$2 w1 c1 w2 c2 same=no
  read -r -a words <<< "$cmd"
  read -r w1 c1 <<< "$(best "$bin" "${words[@]}" "$tr" --json --quiet --threads 1)"
  cp "$out/last.out" "$out/one.out"
  read -r w2 c2 <<< "$(best "$bin" "${words[@]}" "$tr" --json --quiet --threads 2)"
  cmp -s "$out/one.out" "$out/last.out" && same=yes
  printf '%-26s %8s %8s %8s %8s %7.2fx %s\n' "$cmd" "$w1" "$c1" "$w2" "$c2" \
    "$(echo "$w1 / $w2" | bc -l)" "$same"
}

header() {
  printf '\n%s\n%-26s %8s %8s %8s %8s %8s %s\n' "$1" analysis "1 thr s" "1 cpu s" "2 thr s" \
    "2 cpu s" speedup identical
}

header "native trace, $REFS references"
for cmd in "mrc --method exact" "mrc --method hotl-rt" "footprint" "mrc --method hotl" "stats" \
  "mrc --method statcache" "mrc --method statstack"; do
  row "$cmd" "$trace"
done

if [ "$TEXT_REFS" != 0 ]; then
  text="$out/zipf-$TEXT_REFS-$LINES.lackey"
  if [ ! -f "$text" ]; then
    echo "generating $text" >&2
    "$bin" generate zipf --refs "$TEXT_REFS" --lines "$LINES" --seed 1 -o "$out/text.cst"
    "$bin" convert "$out/text.cst" "$text" --to lackey --quiet
    rm -f "$out/text.cst"
  fi
  header "lackey text trace, $TEXT_REFS references ($(stat -c %s "$text") bytes), byte ranges"
  for cmd in "mrc --method exact" "footprint" "stats" "mrc --method statstack"; do
    row "$cmd" "$text"
  done
fi

# mpirun -n 2 (one thread per rank) against one process with 2 threads: command "$2" on trace
# "$1".
mpi_row() {
  local tr=$1 cmd=$2 w2 c2 wm cm same=no
  read -r -a words <<< "$cmd"
  read -r w2 c2 <<< "$(best "$bin" "${words[@]}" "$tr" --json --quiet --threads 2)"
  cp "$out/last.out" "$out/two.out"
  read -r wm cm <<< "$(best mpirun -n 2 --oversubscribe "$bin" "${words[@]}" "$tr" --json \
    --quiet --threads 1)"
  cmp -s "$out/two.out" "$out/last.out" && same=yes
  printf '%s on %s: 2 threads %s s (cpu %s), mpirun -n 2 (1 thread each) %s s (cpu %s): %+.1f %%, identical %s\n' \
    "$cmd" "$(basename "$tr")" "$w2" "$c2" "$wm" "$cm" "$(echo "($wm / $w2 - 1) * 100" | bc -l)" "$same"
  # Per-rank figures for the projection: rank 0's own pass, and receive + merge of a partial.
  CACHESCOPE_MPI_TIMING=1 mpirun -n 2 --oversubscribe "$bin" "${words[@]}" "$tr" \
    --json --quiet --threads 1 2>&1 >/dev/null | grep 'cachescope: mpi:' || true
}

# The distributing commands compared over MPI (MPI_CMDS, separated by commas, overrides).
IFS=, read -r -a mpi_cmds <<< "${MPI_CMDS:-mrc --method exact,footprint,stats,mrc --method hotl-rt}"

if [ "$mpi" = 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo
  for cmd in "${mpi_cmds[@]}"; do mpi_row "$trace" "$cmd"; done
  if [ "$REFS_MPI" != 0 ] && [ "$REFS_MPI" != "$REFS" ]; then
    big="$out/zipf-$REFS_MPI-$LINES.cst"
    if [ ! -f "$big" ]; then
      echo "generating $big" >&2
      "$bin" generate zipf --refs "$REFS_MPI" --lines "$LINES" --seed 1 -o "$big"
    fi
    for cmd in "${mpi_cmds[@]}"; do mpi_row "$big" "$cmd"; done
  fi
else
  echo "MPI: skipped (mpirun or mpicc missing)"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
