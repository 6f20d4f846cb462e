#!/usr/bin/env bash
# Stack locals field by field (docs/advice.md, "Stack locals"): examples/advice/stack_locals.c
# (an array of structures local to a function called from two places and recursively) is
# compiled with `cc -O2 -g` and recorded with `cachescope record` (call events on, the default),
# with its fixed twin stack_locals_fixed.c (the hot field split into an array of its own by
# hand). The block written between docs/advice.md's `<!-- advice-locals.sh: begin -->` markers
# holds `attribute --fields` for the local `walk:cells` and `whatif --change
# 'split:walk:cells=hot'`'s prediction beside the misses `simulate` counts on the recorded twin,
# both with advise's default machine. tests/advice_locals.rs checks the same (within 10 %), and
# the per-field references against a brute force.
#
#   scripts/advice-locals.sh        # WORK=DIR keeps the binaries and traces; CS=PATH uses that cachescope
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null || ! command -v cc >/dev/null; then
  echo "advice-locals: skipped, valgrind and cc are needed" >&2
  exit 0
fi
work=${WORK:-target/advice-locals}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ -z "${CS:-}" ]; then
  cargo build --release -q -p cachescope-cli
  CS=${CARGO_TARGET_DIR:-$PWD/target}/release/cachescope
fi
cs=$CS
doc=docs/advice.md
load_start=$(cut -d' ' -f1 /proc/loadavg)
machine="--I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64"

for name in stack_locals stack_locals_fixed; do
  cc -O2 -g -o "$work/$name" "examples/advice/$name.c"
  (cd "$work" && "$cs" record -q --program-output null -o "$name.cst" -- "./$name")
done
"$cs" attribute "$work/stack_locals.cst" --fields --json > "$work/fields.json"
# shellcheck disable=SC2086
"$cs" whatif "$work/stack_locals.cst" $machine --change 'split:walk:cells=hot' --json > "$work/whatif.json"
# shellcheck disable=SC2086
"$cs" simulate "$work/stack_locals_fixed.cst" $machine --json > "$work/twin.json"
load_end=$(cut -d' ' -f1 /proc/loadavg)

WORK=$work DOC=$doc LOAD="$load_start $load_end" python3 - <<'PY'
import json, os, sys, datetime
sys.path.insert(0, "scripts")
from docs_block import write_block
work, doc = os.environ["WORK"], os.environ["DOC"]
load = os.environ["LOAD"].split()
today = datetime.date.today().isoformat()
fields = json.load(open(f"{work}/fields.json"))
s = next(x for x in fields["structures"] if x["structure"] == "walk:cells")
w = json.load(open(f"{work}/whatif.json"))
t = json.load(open(f"{work}/twin.json"))
lv = lambda v: {l["name"]: l["misses"] for l in v["simulations"][0]["levels"]}
before, after, twin = lv(w["original"]), lv(w["changed"]), lv(t)
out = [f"Measured by `scripts/advice-locals.sh` on {today} (load average {load[0]} at the start, {load[1]} at the end): "
       "examples/advice/stack_locals.c and its twin compiled with `cc -O2 -g`, recorded with `cachescope record`; "
       "`attribute --fields` (its default 64K 4-way 32B cache) for the local `walk:cells`, then "
       "`whatif --change 'split:walk:cells=hot'` and `simulate` of the twin with `--I1 32K,8,64 --D1 32K,8,64 --L2 1M,16,64`.",
       "", f"`walk:cells` ({s['kind']}): {s['type_name']} [{']['.join(map(str, s['dims']))}], "
       f"{s['refs']:,} references, {s['misses']:,} misses", "",
       "| field | offset | size | refs | misses | used/line |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
for f in s["fields"]:
    out.append(f"| {f['field']} | {f['offset']} | {f['size']} | {f['refs']:,} | {f['misses']:,} | {f['used_per_line']:.1f} |")
out += ["", "| level | as it is | predicted after the split | split by hand (twin) | error |", "| --- | ---: | ---: | ---: | ---: |"]
for level in ("L1D", "L2"):
    a, p = twin[level], after[level]
    e = "-" if a == 0 else f"{(p - a) * 100 / a:+.2f} %"
    out.append(f"| {level} | {before[level]:,} | {p:,} | {a:,} | {e} |")
write_block(doc, "advice-locals.sh", "\n".join(out))
print("\n".join(out))
PY
