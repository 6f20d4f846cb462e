# The inputs and timing helpers of scripts/program-speed.sh and scripts/sampled-speed.sh,
# sourced by both (not run on its own). The programs themselves are scripts/programs.sh's.
#
#   program_inputs DIR    writes the inputs into DIR, sets $work to its absolute path and
#                         `names`/`progs` to the programs installed (scripts/programs.sh)
#   p_NAME PREFIX...      runs program NAME after the prefix it is given (a tool, or nothing)
#   text LINES            LINES lines of 42 bytes of the programs' sample text
#   measure CMD...        "wall cpu peak-MiB" of one run of CMD (which calls `timed`)
#   measure_median CMD... the run of median wall time of $RUNS runs (default 3)

source scripts/programs.sh

program_inputs() {
  mkdir -p "$1"
  work=$(cd "$1" && pwd)
  programs "$work"
}

# The command "$@" under GNU time, into $work/time. A prefix for the program functions.
timed() { /usr/bin/time -o "$work/time" -f '%e %U %S %M' "$@"; }
# "wall cpu peak-MiB" of one run of "$@" (which calls `timed`), its output discarded.
measure() {
  rm -f "$work/time"
  "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; tail -3 "$work/err" >&2; }
  tail -1 "$work/time" | awk '{ printf "%.2f %.2f %.0f", $1, $2 + $3, $4 / 1024 }'
}

# `measure` RUNS times; prints the run of median wall time.
runs=${RUNS:-3}
measure_median() {
  local k
  for ((k = 0; k < runs; k++)); do measure "$@"; echo; done | sort -n | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%s", $0 }'
}
