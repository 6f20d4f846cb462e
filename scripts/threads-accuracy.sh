#!/usr/bin/env bash
# Regenerates the table of docs/accuracy/threads.md: `corun --split-threads --simulate` (HOTL's
# co-run model per thread, against the threads run as recorded, each to its end) on the
# examples/threads programs (compiled with cc, recorded with cachescope record) and on a real
# multi-threaded program where installed: xz compressing 650 KB of text in 128 KiB blocks on
# two worker threads (GNU sort --parallel stays on one thread below a few hundred thousand
# lines, so it is not here). Rows only where the cache is smaller than the program's footprint
# (the threads' distinct lines together): where everything fits, both sides are the cold
# misses. Writes the table between docs/accuracy/threads.md's `<!-- threads-accuracy.sh -->`
# markers and on standard output.
# Usage: scripts/threads-accuracy.sh [WORKDIR]. CACHESCOPE=PATH uses that binary instead of
# building the release one. Skips, saying so, without Valgrind or cc.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in valgrind cc; do
  command -v "$tool" >/dev/null || { echo "threads-accuracy: skipped, $tool is not installed" >&2; exit 0; }
done
work=${1:-$(mktemp -d)}
mkdir -p "$work"
if [ -n "${CACHESCOPE:-}" ]; then
  cs=$CACHESCOPE
else
  cargo build -q --release -p cachescope-cli
  cs=$PWD/target/release/cachescope
fi
load_start=$(cut -d' ' -f1 /proc/loadavg)
programs="working_sets locked_counter producer_consumer false_sharing"
for p in $programs; do
  cc -O1 -g -pthread -o "$work/$p" "examples/threads/$p.c"
  "$cs" record -q -o "$work/$p.cst" -- "$work/$p" >/dev/null
done
seq 1 17000 | awk '{ printf "%08x line %d of the sample text\n", ($1 * 2654435761) % 4294967296, $1 }' > "$work/text.txt"
if command -v xz >/dev/null; then
  "$cs" record -q -o "$work/xz-T2.cst" -- xz -T2 --block-size=128KiB -2 -c "$work/text.txt" >/dev/null
  programs+=" xz-T2"
else
  echo "skipped xz: not installed" >&2
fi
table=$(python3 - "$cs" "$work" $programs <<'PY'
import json, subprocess, sys
cs, work = sys.argv[1], sys.argv[2]
caches = [("16K", 16 << 10), ("64K", 64 << 10), ("256K", 256 << 10), ("1M", 1 << 20), ("4M", 4 << 20)]
rows, errs, per = [], [], {}
for prog in sys.argv[3:]:
    for name, size in caches:
        out = subprocess.run([cs, "corun", "--split-threads", f"{work}/{prog}.cst", "--cache", name,
                              "--simulate", "--json", "-q"], check=True, capture_output=True, text=True)
        progs = json.loads(out.stdout)["programs"]
        footprint = 64 * sum(r["footprint_lines"] for r in progs)
        if size >= footprint:
            continue
        for r in progs:
            s, p = r["simulated"], r["predicted"]
            pm = p["miss_ratio"] if p["miss_ratio"] is not None else p["miss_ratio_warm"]
            e = 100 * (pm - s["miss_ratio"])
            errs.append(abs(e)); per.setdefault(prog, []).append(abs(e))
            rows.append(f"| {prog} | {footprint / 1024:.0f}K | {name} | {r['program'].split()[-1]} "
                        f"| {r['rate']:.3f} | {s['refs']:,} | {pm:.4f} | {s['miss_ratio']:.4f} | {e:+.2f} |")
print("| program | footprint | cache | thread | rate (refs/instr) | refs simulated | predicted | simulated | error (pp) |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print("| program | rows | mean absolute error (pp) | worst (pp) |")
print("|---|---:|---:|---:|")
for prog, e in per.items():
    print(f"| {prog} | {len(e)} | {sum(e) / len(e):.2f} | {max(e):.2f} |")
if errs:
    print(f"| all | {len(errs)} | {sum(errs) / len(errs):.2f} | {max(errs):.2f} |")
PY
)
block="Measured by \`scripts/threads-accuracy.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end (\`corun --split-threads TRACE --cache SIZE --simulate --json\` on each recording; a recording's thread schedule varies a little from run to run, and so do the smallest figures). Footprint: the threads' distinct 64-byte lines together; rows only for caches smaller than it. Error: predicted minus simulated miss ratio, cold misses included, in percentage points.

$table"
echo "$block"
printf '%s' "$block" | python3 scripts/docs_block.py docs/accuracy/threads.md threads-accuracy.sh
echo "docs/accuracy/threads.md updated" >&2
