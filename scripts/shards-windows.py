#!/usr/bin/env python3
"""SHARDS-measured windows calibrated by StatStack: the LRU curve's error of each variant.

    cargo build --release -p cachescope --example shards_windows
    target/release/examples/shards_windows P.cst 0.01 S > DIR/P.S.json   # per program, seed
    scripts/shards-windows.py DIR/P.S.json --exact EXACT/report.json [--name P] [--detail]
    scripts/shards-windows.py --table DIR ACCDIR    # every DIR/P.S.json against ACCDIR/P.exact

For each reuse sample of the sampled report's profile, `D` is the distinct SHARDS-sampled lines
referenced inside its window; each variant gives every reuse sample a stack distance from `D`
and StatStack's distances, and the curve is read from those distances (dangling samples cold
misses, as StatStack's). `+sh` variants take SHARDS's point from 256 sampled lines on, as the
report's `combined` curve does. Errors: mean and worst over the exact report's sizes, pp,
cold misses included (scripts/sampled-compare.py's `mrc combined lru` row). A prototype's
measurement (docs/accuracy/sampled.md, "What remains"): no variant is used by the report.
"""

import json, sys, math, bisect, os, subprocess
from collections import defaultdict


PROGRAMS = "gzip sort awk sqlite3 python3 xz bzip2 threads false_sharing".split()
TABLE = ["combined", "shards", "raw_D/R", "grp_mean", "grp_median", "grp_at_median_time",
         "isotonic_mean", "grp_mean_d4", "grp_median_d4", "grp_at_median_time_d4",
         "grp_median_d8", "grp_at_median_time_d8", "ratio4", "ratio16", "gscale4", "gscale8",
         "gscale16", "hscale4", "hscale8", "hscale16", "exact_samples",
         "exact_upto_16Ki", "exact_upto_64Ki", "exact_upto_256Ki", "exact_upto_1Mi"]
# `exact_upto_N`: the reuse samples whose reuse time is at most N references take their exact
# stack distance (a window a ring of N references' bits could measure), the others StatStack's.
CAPS = {"exact_upto_16Ki": 1 << 14, "exact_upto_64Ki": 1 << 16,
        "exact_upto_256Ki": 1 << 18, "exact_upto_1Mi": 1 << 20}


def table(dirp, acc):
    """Every DIR/P.S.json against ACCDIR/P.exact/report.json: a Markdown row per variant."""
    rows = {}
    for p in PROGRAMS:
        for s in (1, 2, 3):
            f = os.path.join(dirp, f"{p}.{s}.json")
            ex = os.path.join(acc, f"{p}.exact", "report.json")
            if os.path.exists(f) and os.path.exists(ex):
                out = subprocess.run([sys.executable, __file__, f, "--exact", ex],
                                     capture_output=True, text=True, check=True).stdout
                rows[(p, s)] = json.loads(out.splitlines()[0])
    progs = [p for p in PROGRAMS if any(k[0] == p for k in rows)]
    print("| variant | all | " + " | ".join(progs) + " |")
    print("| --- | ---: |" + " ---: |" * len(progs))
    for v in TABLE:
        k = v if v in ("combined", "shards") else v + "+sh"
        cells, every = [], []
        for p in progs:
            xs = [rows[(p, s)][k] for s in (1, 2, 3) if (p, s) in rows]
            every += [x[0] for x in xs]
            cells.append(f"{sum(x[0] for x in xs) / len(xs):.3f} "
                         f"({'/'.join(f'{x[0]:.2f}' for x in xs)}; {max(x[1] for x in xs):.1f})")
        print(f"| {v} | {sum(every) / len(every):.3f} | " + " | ".join(cells) + " |")
    for key in CAPS:
        k = "words_per_ref " + key
        cells = [sum(rows[(p, s)][k] for s in (1, 2, 3) if (p, s) in rows) /
                 sum(1 for s in (1, 2, 3) if (p, s) in rows) for p in progs]
        print(f"| words counted a reference, {key} | | " +
              " | ".join(f"{c:.3f}" for c in cells) + " |")


args = sys.argv[1:]
if args and args[0] == "--table":
    table(args[1], args[2])
    sys.exit(0)
path = args[0]
exact_json = None
name = path
detail = "--detail" in args
if "--exact" in args:
    exact_json = args[args.index("--exact") + 1]
if "--name" in args:
    name = args[args.index("--name") + 1]
o = json.load(open(path))
R = o["rate"]
n = o["n"]
sizes = o["sizes"]
exact = o["exact"]
S = o["samples"]
dist = o["distance"]
D = o["d"]
ss = o["ss"]
ex = o["exact_sd"]
reuse = [i for i in range(S) if dist[i] >= 0]
dangling = S - len(reuse)

# Report sizes: the exact report's if given, else up to next_pow2(2 * distinct * 64).
if exact_json:
    rep = json.load(open(exact_json))
    c = next(c for c in rep["mrc"] if c["method"] == "exact" and c["policy"] == "lru")
    rsizes = [p["size_bytes"] for p in c["points"]]
    rex = {p["size_bytes"]: p["miss_ratio"] for p in c["points"]}
else:
    # distinct lines ~ exact miss ratio at 1 GiB times n
    distinct = exact[-1] * n
    mb = 1 << max(0, math.ceil(math.log2(max(1, 2 * distinct * 64))))
    mb = min(max(mb, 4096), 1 << 30)
    rsizes = [s for s in sizes if s <= mb]
    rex = None
idx = [sizes.index(s) for s in rsizes]


def curve_of(x):
    """Miss ratio at each report size from per-reuse-sample distances x (list over reuse)."""
    xs = sorted(x)
    m = len(xs)
    out = []
    for s in rsizes:
        c = s // 64
        k = m - bisect.bisect_left(xs, c)
        out.append((k + dangling) / S)
    return out


def err(curve, switch=None, shards=None):
    e = []
    for j, s in enumerate(rsizes):
        v = curve[j]
        if switch is not None and (s // 64) * R >= switch:
            v = shards[j]
        ref = rex[s] if rex else exact[idx[j]]
        e.append(100 * abs(v - ref))
    return e


shards = [o["shards"][i] for i in idx]
ssc = [o["statstack"][i] for i in idx]
sv = [ss[i] for i in reuse]
dv = [D[i] for i in reuse]
tv = [dist[i] for i in reuse]
ev = [ex[i] for i in reuse]
rsv = [o["rs"][i] for i in reuse]


def ratio(kmin):
    return [t * d / r if (d >= kmin and r > 0) else s for t, d, r, s in zip(tv, dv, rsv, sv)]


def hscale(kmin):
    """D over the realized rate: the share of the reuse samples with D >= kmin whose own line
    is a SHARDS-sampled one (reuse samples are drawn by reference, not by line hash)."""
    h = o.get("hashed")
    if h is None:
        return sv
    hv = [h[i] for i in reuse]
    idx = [k for k, d in enumerate(dv) if d >= kmin]
    r = sum(hv[k] for k in idx) / len(idx) if idx else 0.0
    if r <= 0:
        return sv
    return [d / r if d >= kmin else s for s, d in zip(sv, dv)]


def gscale(kmin):
    a = sum(s for s, d in zip(sv, dv) if d >= kmin)
    b = sum(d / R for d in dv if d >= kmin)
    k = a / b if b > 0 else 1.0
    return [k * d / R if d >= kmin else s for s, d in zip(sv, dv)]



def median(a):
    a = sorted(a)
    k = len(a)
    return a[k // 2] if k % 2 else 0.5 * (a[k // 2 - 1] + a[k // 2])


def groups(binf):
    g = defaultdict(list)
    for k, d in enumerate(dv):
        g[binf(d)].append(k)
    return g


def by_group(binf, stat, kmin=0):
    g = groups(binf)
    x = list(sv)
    for key, ks in g.items():
        if dv[ks[0]] < kmin:
            continue
        v = stat(ks)
        for k in ks:
            x[k] = v
    return x


exact_bin = lambda d: d


def log_bin(d):
    # integer bins up to 32, then 1/16 octave
    if d < 32:
        return d
    return 32 + int(16 * math.log2(d / 32))


st_mean = lambda ks: sum(sv[k] for k in ks) / len(ks)
st_median = lambda ks: median([sv[k] for k in ks])


def st_at_median_time(ks):
    kk = sorted(ks, key=lambda k: tv[k])
    return sv[kk[len(kk) // 2]]


def isotonic(xkey, y):
    """PAV: nondecreasing fit of y over sorted xkey groups (group means)."""
    g = defaultdict(list)
    for k, d in enumerate(xkey):
        g[d].append(y[k])
    keys = sorted(g)
    blocks = []  # [sum, count, keys]
    for key in keys:
        blocks.append([sum(g[key]), len(g[key]), [key]])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            b = blocks.pop()
            blocks[-1][0] += b[0]
            blocks[-1][1] += b[1]
            blocks[-1][2] += b[2]
    m = {}
    for b in blocks:
        for key in b[2]:
            m[key] = b[0] / b[1]
    return [m[d] for d in xkey]


variants = {
    "statstack": sv,
    "exact_samples": ev,
    "raw_D/R": [d / R for d in dv],
    "grp_mean": by_group(exact_bin, st_mean),
    "grp_median": by_group(exact_bin, st_median),
    "grp_at_median_time": by_group(exact_bin, st_at_median_time),
    "logbin_median": by_group(log_bin, st_median),
    "isotonic_mean": isotonic(dv, sv),
    "grp_mean_d4": by_group(exact_bin, st_mean, 4),
    "grp_median_d4": by_group(exact_bin, st_median, 4),
    "grp_at_median_time_d4": by_group(exact_bin, st_at_median_time, 4),
    "grp_median_d8": by_group(exact_bin, st_median, 8),
    "grp_at_median_time_d8": by_group(exact_bin, st_at_median_time, 8),
    "ratio1": ratio(1),
    "ratio4": ratio(4),
    "ratio8": ratio(8),
    "ratio16": ratio(16),
    "mix_ratio4": [0.5 * (a + b) for a, b in zip(ratio(4), sv)],
    "hscale4": hscale(4),
    "hscale8": hscale(8),
    "hscale16": hscale(16),
    "gscale4": gscale(4),
    "gscale8": gscale(8),
    "gscale16": gscale(16),
    "gscale32": gscale(32),
}
for key, cap in CAPS.items():
    variants[key] = [e if t + 1 <= cap else v for e, t, v in zip(ev, tv, sv)]
res = {"name": name, "rate": R, "reuse_samples": len(reuse), "dangling": dangling}
# What measuring them costs: 64-bit words counted per reference of the trace.
for key, cap in CAPS.items():
    res["words_per_ref " + key] = sum((t + 1) / 64 for t in tv if t + 1 <= cap) / n
# check: per-sample statstack reproduces the statstack curve
chk = curve_of(sv)
res["check_ss_maxdiff_pp"] = max(100 * abs(a - b) for a, b in zip(chk, ssc))
res["shards"] = err(shards)
res["statstack_curve"] = err(ssc)
res["combined"] = err(ssc, 256, shards)
for k, x in variants.items():
    c = curve_of(x)
    res[k] = err(c)
    res[k + "+sh"] = err(c, 256, shards)
out = {"name": name}
for k, v in res.items():
    if isinstance(v, list):
        out[k] = (round(sum(v) / len(v), 3), round(max(v), 2))
    else:
        out[k] = v
print(json.dumps(out))
DETAIL = ["statstack", "grp_at_median_time_d4", "hscale4", "raw_D/R", "exact_samples"]
if detail:
    print("KiB", "exact", *DETAIL, "shards", sep="\t")
    for j, s in enumerate(rsizes):
        ref = rex[s] if rex else exact[idx[j]]
        row = [s // 1024, round(100 * ref, 2)]
        for k in DETAIL:
            row.append(round(100 * curve_of(variants[k])[j], 2))
        row.append(round(100 * shards[j], 2))
        print(*row, sep="\t")
