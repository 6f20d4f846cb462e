#!/usr/bin/env bash
# The walkthrough of docs/callgraph.md, regenerated: `bzip2 -9` of a 500 KB text recorded with
# call events, then `attribute --callgraph` (its table), `--json` (one function's structures
# and calls) and `--callgrind-out` read by `callgrind_annotate --inclusive=yes`. Writes the
# outputs between docs/callgraph.md's `<!-- callgraph-walkthrough.sh: begin -->` markers. Skips,
# saying so, without Valgrind or bzip2.
#
#   scripts/callgraph-walkthrough.sh     # WORK=DIR keeps the files (default target/callgraph-walkthrough)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in valgrind bzip2 callgrind_annotate; do
  if ! command -v "$tool" >/dev/null; then
    echo "callgraph-walkthrough: skipped, $tool is not installed" >&2
    exit 0
  fi
done
work=${WORK:-target/callgraph-walkthrough}
mkdir -p "$work"
work=$(cd "$work" && pwd)
cargo build --release -q -p cachescope-cli
cs=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/cachescope
seq 1 12000 | awk '{ printf "%08x line %d of the sample text, word %d\n", ($1 * 2654435761) % 4294967296, $1, $1 % 977 }' >"$work/text.txt"

"$cs" record -q -o "$work/bz.cst" -- bzip2 -9 -c "$work/text.txt" >/dev/null
table=$("$cs" attribute "$work/bz.cst" --callgraph -q --top 12 | cut -c1-150)
"$cs" attribute "$work/bz.cst" --callgraph --json -q --callgrind-out "$work/bz.callgrind" >"$work/bz.json"
sort=$(python3 - "$work/bz.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = next(f for f in r["functions"] if f["function"] == "BZ2_blockSort")
out = {k: f[k] for k in ("function", "object", "calls", "self", "inclusive", "structures")}
for k in ("self", "inclusive"):
    out[k] = {e: out[k][e] for e in ("Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw", "D1ev", "D1wb")}
print(json.dumps(out, indent=1))
PY
)
annotate=$(callgrind_annotate --inclusive=yes --show=Ir,D1mr,D1mw,DLmr,DLmw --sort=D1mr "$work/bz.callgrind" \
  | sed -n '/file:function/,$p' | head -14 | cut -c1-160)

block="Made by \`scripts/callgraph-walkthrough.sh\` on $(date -u +%Y-%m-%d) with $(bzip2 --version 2>&1 | head -1 | cut -d, -f1).

\`\`\`text
\$ cachescope record -o bz.cst -- bzip2 -9 -c text.txt > /dev/null
\$ cachescope attribute bz.cst --callgraph --top 12
$table
\`\`\`

\`\`\`text
\$ cachescope attribute bz.cst --callgraph --json    # BZ2_blockSort's entry, abridged
$sort
\`\`\`

\`\`\`text
\$ cachescope attribute bz.cst --callgraph --callgrind-out bz.callgrind
\$ callgrind_annotate --inclusive=yes --show=Ir,D1mr,D1mw,DLmr,DLmw --sort=D1mr bz.callgrind
$annotate
\`\`\`"
printf '%s' "$block" | python3 scripts/docs_block.py docs/callgraph.md callgraph-walkthrough.sh
echo "$block"
