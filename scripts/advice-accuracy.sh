#!/usr/bin/env bash
# How far `advise`'s predictions are from the fixed programs, and what it finds in real ones.
#
# 1. Each pair of examples/advice/ (a planted problem and its fixed twin) is compiled with
#    `cc -O2 -g -pthread` and recorded with `cachescope record`; `advise` runs on the planted
#    program and its top finding's predicted misses after the change are compared, level by
#    level, with the misses `simulate` counts on the recorded fixed twin with the same cache
#    flags (the non-temporal twin through `whatif --change nontemporal:@movnt`, since Valgrind
#    records non-temporal stores as plain stores). The table goes into docs/advice.md between
#    its `<!-- advice-accuracy.sh#pairs: begin -->` markers.
# 2. The real programs of scripts/program-speed.sh (same inputs) are recorded and run through
#    `advise` with its default machine; their top findings go between the `programs` markers.
#    PROGRAMS=0 skips this part (it takes minutes per program).
#
#   scripts/advice-accuracy.sh        # WORK=DIR keeps the binaries and traces (default target/advice-accuracy)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null || ! command -v cc >/dev/null; then
  echo "advice-accuracy: skipped, valgrind and cc are needed" >&2
  exit 0
fi
work=${WORK:-target/advice-accuracy}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cargo build --release -q -p cachescope-cli
cs=${CARGO_TARGET_DIR:-$PWD/target}/release/cachescope
doc=docs/advice.md
load_start=$(cut -d' ' -f1 /proc/loadavg)
machine="--I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64"
cores="--cores 4 --L1 32K,8,64 --LL 8M,16,64 --shared LL"

record() { # name: compile examples/advice/NAME.c and record it into $work/NAME.cst
  cc -O2 -g -pthread -o "$work/$1" "examples/advice/$1.c"
  (cd "$work" && "$cs" record -q --program-output null -o "$1.cst" -- "./$1")
}

rows=()
for pair in hot_cold:MACHINE: conflict_rows:MACHINE: false_sharing:CORES: write_stream:MACHINE:nontemporal:@movnt stencil:MACHINE:; do
  name=${pair%%:*}; rest=${pair#*:}; which=${rest%%:*}; twin_change=${rest#*:}
  flags=$machine; [ "$which" = CORES ] && flags=$cores
  record "$name"; record "${name}_fixed"
  # shellcheck disable=SC2086
  "$cs" advise "$work/$name.cst" $flags --json > "$work/$name.advice.json"
  if [ -n "$twin_change" ]; then
    # shellcheck disable=SC2086
    "$cs" whatif "$work/${name}_fixed.cst" $flags --change "$twin_change" --json > "$work/${name}_fixed.json"
  else
    # shellcheck disable=SC2086
    "$cs" simulate "$work/${name}_fixed.cst" $flags --json > "$work/${name}_fixed.json"
  fi
  rows+=("$name")
done

programs=()
if [ "${PROGRAMS:-1}" != 0 ]; then
  # The inputs of scripts/program-speed.sh (text2m.txt, text500k.txt, nums.txt, q.sql, working_sets).
  source scripts/programs.sh
  programs "$work"
  run() { # name exe args…: record the program and advise on it
    local name=$1; shift
    if ! command -v "$1" >/dev/null; then echo "skipped $name: $1 not found" >&2; return; fi
    "$cs" record -q --program-output null -o "$work/p-$name.cst" -- "$@"
    local extra=""; [ "$name" = "working_sets" ] && extra="--cores 4"
    # shellcheck disable=SC2086
    /usr/bin/time -o "$work/p-$name.time" -f '%e %U %S' "$cs" advise "$work/p-$name.cst" $extra --json > "$work/p-$name.json"
    programs+=("$name|$*")
  }
  run bzip2 bzip2 -9 -c "$work/text2m.txt"
  run gzip gzip -9 -c "$work/text500k.txt"
  run xz xz -6 -c "$work/text500k.txt"
  run sort sort -n --parallel=1 "$work/nums.txt"
  run awk awk '{ s[$6] += length($0) } END { for (k in s) n++; print n }' "$work/text2m.txt"
  run sqlite3 sqlite3 :memory: ".read $work/q.sql"
  run python3 /usr/bin/python3 -c "import random; random.seed(1); a = [random.random() for _ in range(200000)]; a.sort(); print(a[0])"
  run working_sets "$work/working_sets"
fi
load_end=$(cut -d' ' -f1 /proc/loadavg)

WORK=$work DOC=$doc LOAD="$load_start $load_end" ROWS="${rows[*]}" PROGRAMS_RUN="$(printf '%s\n' "${programs[@]+"${programs[@]}"}")" python3 - <<'PY'
import json, os, sys, datetime
sys.path.insert(0, "scripts")
from docs_block import write_block
work, doc = os.environ["WORK"], os.environ["DOC"]
load = os.environ["LOAD"].split()
today = datetime.date.today().isoformat()

def levels(v):
    if "totals" in v:
        return {t["level"]: t["misses"] for t in v["totals"]}, sum(t["coherence"] for t in v["totals"])
    return {l["name"]: l["misses"] for l in v["simulations"][0]["levels"]}, None

def err(p, a):
    return "0.00 %" if a == 0 and p == 0 else ("-" if a == 0 else f"{(p - a) * 100 / a:+.2f} %")

out = [f"Measured by `scripts/advice-accuracy.sh` on {today} (load average {load[0]} at the start, {load[1]} at the end): "
       "each pair compiled with `cc -O2 -g -pthread`, recorded with `cachescope record`, `advise` on the planted program "
       "with its default machine (`--I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64`; the threaded pair `--cores 4 --L1 32K,8,64 "
       "--LL 8M,16,64 --shared LL`), the fixed twin simulated with the same flags. Error: (predicted − twin) / twin.",
       "", "| pair | top finding | level | as it is | predicted after | fixed twin | error |", "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
worst = {}
for name in os.environ["ROWS"].split():
    a = json.load(open(f"{work}/{name}.advice.json"))
    t = json.load(open(f"{work}/{name}_fixed.json"))
    twin, coh = levels(t.get("changed", t))
    top = a["findings"][0]
    label = f"{top['kind']} `{top['structure']}`" + (" (estimate)" if top.get("estimate") else "")
    for l in top["levels"]:
        if l["level"] == "L1I":
            continue
        e = err(l["misses_after"], twin[l["level"]])
        out.append(f"| {name} | {label} | {l['level']} | {l['misses']:,} | {l['misses_after']:,} | {twin[l['level']]:,} | {e} |")
        if twin[l["level"]]:
            worst[name] = max(worst.get(name, 0), abs(l["misses_after"] - twin[l["level"]]) * 100 / twin[l["level"]])
    if coh is not None:
        e = err(top["coherence_misses_after"], coh)
        out.append(f"| {name} | {label} | coherence | {top['coherence_misses']:,} | {top['coherence_misses_after']:,} | {coh:,} | {e} |")
        if coh:
            worst[name] = max(worst.get(name, 0), abs(top["coherence_misses_after"] - coh) * 100 / coh)
mean = sum(worst.values()) / max(len(worst), 1)
out += ["", f"Worst level of each pair: " + ", ".join(f"{k} {v:.2f} %" for k, v in worst.items())
        + f"; mean of those {mean:.2f} %, worst {max(worst.values(), default=0):.2f} %."]

prog = []
runs = [r for r in os.environ.get("PROGRAMS_RUN", "").splitlines() if r]
if runs:
    prog = [f"Measured by `scripts/advice-accuracy.sh` on {today} (load average {load[0]} at the start, {load[1]} at the end): "
            "each program of `scripts/program-speed.sh` recorded on the same input and run through `advise` with its default "
            "machine (`--cores 4` for the threaded one); the top three findings, their misses saved over L1D and L2 "
            "(coherence too with cores) and the time `advise` took (wall, CPU).", "",
            "| program | findings | top findings (kind, structure: misses saved) | advise time |", "| --- | ---: | --- | ---: |"]
    for r in runs:
        name, cmd = r.split("|", 1)
        a = json.load(open(f"{work}/p-{name}.json"))
        wall, user, sys = open(f"{work}/p-{name}.time").read().split()[-3:]
        f = a["findings"]
        tops = "; ".join(f"{x['kind']} `{x['structure']}`: {x['saved']:,}" + (" (est.)" if x.get("estimate") else "") for x in f[:3]) or "none"
        prog.append(f"| `{name}` | {len(f)} | {tops} | {float(wall):.1f} s ({float(user) + float(sys):.1f}) |")

write_block(doc, "advice-accuracy.sh#pairs", "\n".join(out))
if prog:
    write_block(doc, "advice-accuracy.sh#programs", "\n".join(prog))
print("\n".join(out + [""] + prog))
PY
