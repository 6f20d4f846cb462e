#!/usr/bin/env bash
# Regenerates the accuracy table of docs/attribution.md: records the example programs and two
# system programs under Valgrind lackey, runs `cachescope attribute` on each (the paper's
# cache, 64 KiB 4-way 32-byte lines) at three sampling rates, and checks its exact miss count
# against `cachescope simulate` on the same trace and geometry.
#
#   examples/attribution/accuracy.sh            # traces in target/attribution (kept)
#   OUT=/tmp/attr examples/attribution/accuracy.sh
#
# Prints the Markdown table on stdout. Needs Valgrind, a C compiler, jq and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-target/attribution}
cache=${CACHE:-64K,4,32}
mkdir -p "$out"
# CS=path/to/cachescope uses that binary instead of building one.
if [ -z "${CS:-}" ]; then
    cargo build --release -q -p cachescope-cli
fi
cs=${CS:-${CARGO_TARGET_DIR:-target}/release/cachescope}
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
cc -g -O1 -no-pie -o "$out/resid" examples/attribution/resid.c
cc -g -O1 -no-pie -o "$out/hashtab" examples/attribution/hashtab.c

record() { # NAME COMMAND...
    local name=$1; shift
    [ -s "$out/$name.cst" ] || nice -n 10 "$cs" record -q -o "$out/$name.cst" -- "$@" >/dev/null
}
record resid "$out/resid" 64 2 0
record resid-tiled "$out/resid" 64 2 8
record hashtab "$out/hashtab" 20000 50000
record sort /usr/bin/sort examples/attribution/resid.c examples/attribution/hashtab.c -o /dev/null

echo "| program | data refs | misses (attribute) | misses (simulate) | rate | samples | buckets ≥ 10 % | largest \|sampled − actual\| (pp) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for name in resid resid-tiled hashtab sort; do
    t=$out/$name.cst
    exe=()
    case $name in resid*) exe=(--exe "$out/resid") ;; hashtab) exe=(--exe "$out/hashtab") ;; esac
    sim=$("$cs" simulate -q "$t" --cache "$cache" --json | jq '.simulations[0].levels[0].misses')
    for rate in 25000 2500 250; do
        "$cs" attribute -q "$t" "${exe[@]}" --cache "$cache" --sample $rate --json > "$out/$name.$rate.json"
        python3 - "$out/$name.$rate.json" "$name" "$sim" "$rate" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name, sim, rate = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
big = [b for b in r["buckets"] if b["actual_pct"] >= 10]
err = max((abs(b["sampled_pct"] - b["actual_pct"]) for b in big), default=0)
names = ", ".join(f'{b["name"]} {b["actual_pct"]:.1f}/{b["sampled_pct"]:.1f}' for b in big)
ok = "=" if r["misses"] == sim else "≠"
print(f'| {name} | {r["data_refs"]:,} | {r["misses"]:,} | {sim:,} {ok} | 1/{rate} | {r["samples"]:,} | {names} | {err:.1f} |')
PY
    done
done
