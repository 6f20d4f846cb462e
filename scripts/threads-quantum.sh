#!/usr/bin/env bash
# Regenerates docs/threads.md's table of coherence misses against the slice length: the two
# two-thread programs of examples/threads/ (false_sharing.c: two counters in one line;
# padded.c: the same, a line each), compiled with cc, recorded with `cachescope record`, then
# `simulate --cores 3 --L1 32K,8,64 --LL 8M,16,64 --shared LL` in modelled time (`--interleave time`,
# slices of 10 to 1000 cycles), round-robin (`--interleave instructions`, quanta of 10 to
# 1000 instructions) and in the recorded order (`--quantum 0`). Writes the table between
# docs/threads.md's `<!-- threads-quantum.sh -->` markers and on standard output.
# Usage: scripts/threads-quantum.sh [WORKDIR]; CACHESCOPE=PATH uses that binary instead of
# building the release one. Skips, saying so, without Valgrind or cc.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in valgrind cc; do
  command -v "$tool" >/dev/null || { echo "threads-quantum: skipped, $tool is not installed" >&2; exit 0; }
done
work=${1:-$(mktemp -d)}
mkdir -p "$work"
if [ -n "${CACHESCOPE:-}" ]; then
  cs=$CACHESCOPE
else
  cargo build -q --release -p cachescope-cli
  cs=$PWD/target/release/cachescope
fi
for p in false_sharing padded; do
  cc -O1 -g -pthread -o "$work/$p" "examples/threads/$p.c"
  "$cs" record -q -o "$work/$p.cst" -- "$work/$p" >/dev/null
done
table=$(python3 - "$cs" "$work" <<'PY'
import json, subprocess, sys
cs, work = sys.argv[1], sys.argv[2]
time_q, instr_q = [10, 30, 100, 300, 1000], [10, 100, 1000]
def run(prog, *flags):
    out = subprocess.run([cs, "simulate", "--cores", "3", "--L1", "32K,8,64", "--LL", "8M,16,64", "--shared", "LL",
                          "--json", "-q", *flags, f"{work}/{prog}.cst"],
                         check=True, capture_output=True, text=True)
    d = json.loads(out.stdout)
    l1 = next(t for t in d["totals"] if t["level"] == "L1")
    return l1["coherence"]
def n(x):
    return f"{x:,}".replace(",", " ")
head = ["program"] + [f"time {q} cycles" for q in time_q] + ["time max/min"] \
     + [f"instructions {q}" for q in instr_q] + ["recorded (0)"]
print("| " + " | ".join(head) + " |")
print("| --- " + "| ---: " * (len(head) - 1) + "|")
for prog in ["false_sharing", "padded"]:
    t = [run(prog, "--interleave", "time", "--quantum", str(q)) for q in time_q]
    i = [run(prog, "--interleave", "instructions", "--quantum", str(q)) for q in instr_q]
    z = run(prog, "--quantum", "0")
    spread = f"{max(t) / min(t):.2f}" if min(t) > 0 else "-"
    print(f"| `{prog}.c` | " + " | ".join(map(n, t)) + f" | {spread} | " + " | ".join(map(n, i))
          + f" | {n(z)} |")
PY
)
block="Measured by \`scripts/threads-quantum.sh\` on $(date -u +%Y-%m-%d) (\`simulate --cores 3 --L1 32K,8,64 --LL 8M,16,64 --shared LL --interleave time|instructions --quantum Q\` on each program's recording; L1 coherence misses of all cores; each program makes 200 000 increments, so 200 000 writes to the shared line).

$table"
echo "$block"
printf '%s' "$block" | python3 scripts/docs_block.py docs/threads.md threads-quantum.sh
echo "docs/threads.md updated" >&2
