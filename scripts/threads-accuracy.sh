#!/usr/bin/env bash
# Regenerates the table of docs/accuracy/threads.md: corun --split-threads against its
# interleaved simulation on the examples/threads programs (compiled with cc, recorded with
# cachescope record) and on a real multi-threaded program where installed: xz compressing
# 600 KB of text in 128 KiB blocks on two worker threads (GNU sort --parallel stays on one
# thread below a few hundred thousand lines, so it is not here).
# Usage: scripts/threads-accuracy.sh [WORKDIR]; prints the Markdown table.
# CACHESCOPE=PATH uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
mkdir -p "$work"
if [ -n "${CACHESCOPE:-}" ]; then
  cs=$CACHESCOPE
else
  cargo build -q --release -p cachescope-cli
  cs=$PWD/target/release/cachescope
fi
for p in working_sets locked_counter producer_consumer false_sharing; do
  cc -O1 -g -pthread -o "$work/$p" "examples/threads/$p.c"
  "$cs" record -q -o "$work/$p.cst" -- "$work/$p" >/dev/null
done
programs="working_sets locked_counter producer_consumer false_sharing"
seq 1 17000 | awk '{ printf "%08x line %d of the sample text\n", ($1 * 2654435761) % 4294967296, $1 }' > "$work/text.txt"
if command -v xz >/dev/null; then
  "$cs" record -q -o "$work/xz-T2.cst" -- xz -T2 --block-size=128KiB -2 -c "$work/text.txt" >/dev/null
  programs+=" xz-T2"
else
  echo "skipped xz: not installed" >&2
fi
python3 - "$cs" "$work" $programs <<'PY'
import json, subprocess, sys
cs, work = sys.argv[1], sys.argv[2]
rows, errs = [], []
for prog in sys.argv[3:]:
    for cache in ["16K", "64K", "256K", "1M"]:
        out = subprocess.run([cs, "corun", "--split-threads", f"{work}/{prog}.cst", "--cache", cache,
                              "--simulate", "--json", "-q"], check=True, capture_output=True, text=True)
        for r in json.loads(out.stdout)["programs"]:
            s = r["simulated"]; p = s["predicted_for_prefix"]
            pm = p["miss_ratio"] if p["miss_ratio"] is not None else p["miss_ratio_warm"]
            e = 100 * (pm - s["miss_ratio"]); errs.append(abs(e))
            rows.append(f"| {prog} | {cache} | {r['program'].split()[-1]} | {r['rate']:.3f} | {s['refs']} "
                        f"| {pm:.4f} | {s['miss_ratio']:.4f} | {e:+.2f} |")
print("| program | cache | thread | rate (refs/instr) | refs simulated | predicted | simulated | error (pp) |")
print("|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print(f"Mean absolute error over the {len(errs)} rows: {sum(errs)/len(errs):.2f} percentage points; "
      f"largest {max(errs):.2f}.")
PY
