#!/usr/bin/env bash
# How close `attribute --callgraph --sampled` comes to the exact call graph on real programs:
# each program of scripts/programs.sh named in PROGRAMS (default gzip and sqlite3) is recorded
# once with call events, then its call graph is made exactly and sampled at RATES (default 0.1
# and 0.02, seed 1); for the ten functions with the most exact inclusive D1 misses, their
# inclusive D1 and LL data misses exact and sampled, the error, and the CPU seconds of each
# analysis. Ir, Dr, Dw and call counts are checked equal (the script fails if not). Writes the
# table into docs/callgraph.md between its `<!-- callgraph-sampled.sh: begin -->` markers and
# on standard output. Skips, saying so, without Valgrind.
#
#   scripts/callgraph-sampled.sh   # PROGRAMS="gzip sqlite3" RATES="0.1 0.02" CS=path/to/cachescope
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preamble.sh
preamble callgraph-sampled
source scripts/programs.sh
programs "$work"
want=${PROGRAMS:-gzip sqlite3}
rates=${RATES:-0.1 0.02}
load_start=$(cut -d' ' -f1 /proc/loadavg)

# The JSON of one call graph of $1 with flags $2.., its CPU seconds in $work/cpu.
graph() {
  local trace=$1 out=$2
  shift 2
  /usr/bin/time -o "$work/time" -f '%U %S' "$CS" attribute "$trace" --callgraph --json -q "$@" >"$out"
  read -r u s <"$work/time"
  echo "$u + $s" | bc >"$out.cpu"
}

blocks=""
for i in "${!progs[@]}"; do
  f=${progs[$i]}
  name=${names[$i]}
  case " $want " in *" ${name%% *} "*) ;; *) continue ;; esac
  trace="$work/${name%% *}.cst"
  "$f" "$CS" record -q -o "$trace" -- >/dev/null 2>"$work/err" \
    || { echo "failed: record $name" >&2; tail -3 "$work/err" >&2; exit 1; }
  graph "$trace" "$work/exact.json"
  files=()
  for r in $rates; do
    graph "$trace" "$work/s$r.json" --sampled --rate "$r"
    files+=("$work/s$r.json")
    # Other seeds: how far the totals move with the lines drawn.
    for seed in 2 3; do
      graph "$trace" "$work/s$r-seed$seed.json" --sampled --rate "$r" --seed "$seed"
    done
  done
  block=$(python3 - "$name" "$work/exact.json" "${files[@]}" <<'PY'
import json, sys
name, exact_path, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
load = lambda p: json.load(open(p))
exact = load(exact_path)
sampled = [load(p) for p in paths]
cpu = lambda p: float(open(p + ".cpu").read())
d1 = lambda c: c["D1mr"] + c["D1mw"]
ll = lambda c: c["DLmr"] + c["DLmw"]
def by_name(r):
    return {f["function"]: f for f in r["functions"]}
def counts(r):
    return sorted((f["function"], f["calls"], *(f["inclusive"][e] for e in ("Ir", "Dr", "Dw")))
                  for f in r["functions"])
for s, p in zip(sampled, paths):
    if counts(s) != counts(exact):
        sys.exit(f"{p}: references or calls differ from the exact graph")
err = lambda got, want: f"{100 * (got - want) / want:+.1f} %" if want else "-"
head = "| function | D1 exact | " + " | ".join(
    f"D1 at {s['sampled']:g} | error" for s in sampled) + " | LL exact | " + " | ".join(
    f"LL at {s['sampled']:g} | error" for s in sampled) + " |"
rows = [f"**{name}**: {exact['totals']['Ir']:,} instructions, {d1(exact['totals']):,} D1 misses; "
        f"CPU seconds of the analysis: exact {cpu(exact_path):.2f}, "
        + ", ".join(f"rate {s['sampled']:g} {cpu(p):.2f}" for s, p in zip(sampled, paths)),
        "", head, "| --- |" + " ---: |" * (2 + 4 * len(sampled))]
worst = [0.0] * len(sampled)
for f in exact["functions"][:10]:
    fn, e = f["function"], f["inclusive"]
    cells = [f"{d1(e):,}"]
    for k, s in enumerate(sampled):
        g = by_name(s)[fn]["inclusive"]
        cells += [f"{d1(g):,}", err(d1(g), d1(e))]
        if d1(e):
            worst[k] = max(worst[k], abs(d1(g) - d1(e)) / d1(e))
    cells.append(f"{ll(e):,}")
    for s in sampled:
        g = by_name(s)[fn]["inclusive"]
        cells += [f"{ll(g):,}", err(ll(g), ll(e))]
    rows.append(f"| `{fn[:40]}` | " + " | ".join(cells) + " |")
spread = []
for s, p in zip(sampled, paths):
    runs = [s] + [load(p.replace(".json", f"-seed{k}.json")) for k in (2, 3)]
    spread.append(f"at rate {s['sampled']:g}, D1 " + " / ".join(
        err(d1(r["totals"]), d1(exact["totals"])) for r in runs) + ", LL " + " / ".join(
        err(ll(r["totals"]), ll(exact["totals"])) for r in runs))
rows += ["", "Every reference's misses, seeds 1 / 2 / 3: " + "; ".join(spread) + "."]
rows += ["", "Worst D1 error among these ten: " + ", ".join(
    f"{100 * w:.1f} % at rate {s['sampled']:g}" for w, s in zip(worst, sampled)) + "."]
print("\n".join(rows))
PY
)
  echo "$block"
  blocks+="$block"$'\n\n'
done

text="Measured by \`scripts/callgraph-sampled.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, load average $load_start at the start and $(cut -d' ' -f1 /proc/loadavg) at the end. Each program recorded once with call events; \`attribute --callgraph\` exact and \`--sampled --rate R\` (seed 1, the default; the rate shown is the one the miniatures stand for, R or below). Inclusive misses of the ten functions with the most exact inclusive D1 misses (Cachegrind's model, 32K,8,64 D1, 8M,16,64 LL). Instructions, data references and call counts of every function were equal to the exact graph's at every rate (checked by the script).

${blocks%$'\n\n'}"

printf '%s' "$text" | python3 scripts/docs_block.py docs/callgraph.md callgraph-sampled.sh
