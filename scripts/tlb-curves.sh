#!/usr/bin/env bash
# TLB behaviour of the real programs of scripts/program-speed.sh (scripts/programs.sh), each
# recorded once: its page-level curve (the miss ratio of a fully associative LRU TLB of 4 KiB
# pages, `mrc --page 4K`) at a few entry counts, and Skylake's TLBs simulated (`simulate --tlb
# skylake`) with 4 KiB pages and with every page 2 MiB (`--pages 2M`), as DTLB misses and page
# walks per 1000 data references. Writes the tables into docs/tlb.md (between its
# `<!-- tlb-curves.sh -->` markers) and on standard output. Skips, saying so, without
# Valgrind.
#
#   scripts/tlb-curves.sh        # WORK=DIR keeps the inputs and traces (default target/tlb-curves);
#                                # CS=BINARY uses a cachescope already built
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble tlb-curves
cs=$CS

source scripts/programs.sh
programs "$work"

# Entry counts of the curve's columns (as the bytes 4 KiB pages cover: --sizes is in bytes).
entries="16 64 256 1024 1536 4096"
sizes=$(for e in $entries; do printf '%sK,' $((e * 4)); done)
sizes=${sizes%,}

load_start=$(cut -d' ' -f1 /proc/loadavg)
rows=""
for i in "${!progs[@]}"; do
  p=${names[$i]}
  f=${progs[$i]}
  t=$work/p$i.cst
  "$f" "$cs" record -q -o "$t" -- >/dev/null 2>"$work/err" || { echo "failed: $p" >&2; tail -3 "$work/err" >&2; continue; }
  "$cs" stats -q --json --line-size 4096 "$t" >"$work/stats.json"
  "$cs" mrc -q --page 4K --sizes "$sizes" --json "$t" >"$work/curve.json"
  "$cs" simulate -q --tlb skylake --json "$t" >"$work/small.json"
  "$cs" simulate -q --tlb skylake --pages 2M --json "$t" >"$work/huge.json"
  row=$(python3 - "$p" "$work" "$entries" <<'PY'
import json, sys
name, work, entries = sys.argv[1], sys.argv[2], [int(e) for e in sys.argv[3].split()]
load = lambda f: json.load(open(f"{work}/{f}.json"))
stats, curve, small, huge = load("stats"), load("curve"), load("small"), load("huge")
refs = stats["refs"]
by = {p["entries"]: p["miss_ratio"] for p in curve["points"]}
cells = [f"{100 * by[e]:.2f}" for e in entries]
def dtlb(r):
    return sum(t["misses"] for t in r["tlbs"] if t["name"] == "dtlb")
per_k = lambda n: f"{1000 * n / max(refs, 1):.2f}"
print(f"| {name} | {refs / 1e6:.1f} M | {stats['distinct_lines']:,} | " + " | ".join(cells)
      + f" | {per_k(dtlb(small))} | {per_k(small['page_walks'])} | {per_k(dtlb(huge))} | {per_k(huge['page_walks'])} |")
PY
)
  echo "$row"
  rows+="$row"$'\n'
done

head=$(for e in $entries; do printf '| %s entries ' "$e"; done)
align=$(for e in $entries; do printf '| ---: '; done)
table="Measured by \`scripts/tlb-curves.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end (counts, not times: the load changes nothing). Each program recorded once with \`cachescope record\`; data references only (the ITLB is simulated too but not shown). The curve columns are the miss ratio in percent (cold misses included) of a fully associative LRU TLB of that many 4 KiB entries, \`mrc --page 4K\`, all threads in one TLB; the last four are \`simulate --tlb skylake\` (Skylake's set-associative DTLB and STLB, page walks = STLB misses) per 1000 data references, with 4 KiB pages and with \`--pages 2M\`.

| program | data refs | 4 KiB pages ${head}| DTLB misses / 1000, 4 KiB | walks / 1000, 4 KiB | DTLB misses / 1000, 2 MiB | walks / 1000, 2 MiB |
| --- | ---: | ---: ${align}| ---: | ---: | ---: | ---: |
${rows%$'\n'}"

echo "$table"
printf '%s' "$table" | python3 scripts/docs_block.py docs/tlb.md tlb-curves.sh
echo "docs/tlb.md updated"
