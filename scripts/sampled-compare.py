#!/usr/bin/env python3
"""Compares a sampled report.json with the exact report.json of the same trace, field by field.

    scripts/sampled-compare.py EXACT/report.json SAMPLED/report.json [--name NAME]

Prints one JSON object: the errors of every section of the sampled report against the exact
one (docs/accuracy/sampled.md says what each is). Miss ratios are compared cold misses
included (`miss_ratio`), in percentage points, at the sizes both curves have.
"""
import json
import sys


def curve(report, key, method, policy):
    for c in report.get(key, []):
        if c["method"] == method and c["policy"] == policy:
            return c
    return None


def errors(a, b):
    """Absolute differences in pp at the sizes both curves have."""
    if a is None or b is None:
        return []
    bs = {p["size_bytes"]: p for p in b["points"]}
    out = []
    for p in a["points"]:
        q = bs.get(p["size_bytes"])
        if q is None or p.get("miss_ratio") is None or q.get("miss_ratio") is None:
            continue
        out.append(100 * abs(p["miss_ratio"] - q["miss_ratio"]))
    return out


def summary(errs):
    if not errs:
        return None
    return {"mean": sum(errs) / len(errs), "worst": max(errs), "points": len(errs)}


def compare(exact, sampled):
    rows = {}
    lru = curve(exact, "mrc", "exact", "lru")
    random = curve(exact, "mrc", "exact", "random")
    # Fully associative curves, each against the exact curve of its policy.
    rows["mrc combined lru"] = summary(errors(curve(sampled, "mrc", "combined", "lru"), lru))
    rows["mrc shards lru"] = summary(errors(curve(sampled, "mrc", "shards", "lru"), lru))
    rows["mrc statstack lru"] = summary(errors(curve(sampled, "mrc", "statstack", "lru"), lru))
    rows["mrc statcache random"] = summary(
        errors(curve(sampled, "mrc", "statcache", "random"), random))
    rows["mrc mini random"] = summary(errors(curve(sampled, "mrc", "mini", "random"), random))
    # HOTL: each sampled curve against the exact report's curve of the same method.
    for m in ["hotl", "hotl-rt"]:
        rows["hotl " + m] = summary(
            errors(curve(sampled, "mrc", m, "lru"), curve(exact, "mrc", m, "lru")))
    # Working set (fp) and fill time: relative errors in %.
    rows["hotl working set %"] = relative(exact["working_set"], sampled["working_set"],
                                          "window", "lines")
    rows["hotl fill time %"] = relative(exact["fill_time"], sampled["fill_time"],
                                        "size_bytes", "fill_time")
    # Policies: each against the exact report's curve of the same policy.
    for c in sampled.get("policies", []):
        ref = next((e for e in exact.get("policies", []) if e["policy"] == c["policy"]), None)
        rows["policies " + c["policy"]] = summary(errors(c, ref))
    # 3C classes as shares of the references, pp.
    ex = {p["size_bytes"]: p for p in exact["three_c"]["points"]}
    for cls in ["cold", "capacity", "conflict", "misses"]:
        errs = []
        for p in sampled["three_c"]["points"]:
            q = ex.get(p["size_bytes"])
            if q:
                errs.append(100 * abs(p[cls] / max(p["refs"], 1) - q[cls] / max(q["refs"], 1)))
        rows["three-c " + cls] = summary(errs)
    # L2: the model's predictions and the simulation, local ratios.
    if exact.get("l2") and sampled.get("l2"):
        for pe in exact["l2"]["predicted"]:
            ps = next((p for p in sampled["l2"]["predicted"] if p["method"] == pe["method"]), None)
            rows["l2 " + pe["method"]] = summary(errors(ps, pe))
        rows["l2 two-level"] = summary(errors(sampled["l2"]["simulated"], exact["l2"]["simulated"]))
    # Phases: PoEC per method.
    if exact.get("phases") and sampled.get("phases"):
        for me in exact["phases"]["methods"]:
            ms = next((m for m in sampled["phases"]["methods"] if m["name"] == me["name"]), None)
            if ms and me["poec"] is not None and ms["poec"] is not None:
                rows["phases poec " + me["name"]] = {
                    "mean": abs(me["poec"] - ms["poec"]), "worst": abs(me["poec"] - ms["poec"]),
                    "points": 1, "exact": me["poec"], "sampled": ms["poec"]}
    # Attribution: the exact top five structures by misses, each in the sampled top seven and
    # within 10 % of its exact misses.
    if exact.get("attribution") and sampled.get("attribution"):
        top = exact["attribution"]["structures"][:5]
        seven = sampled["attribution"]["structures"][:7]
        found, within, worst = 0, 0, 0.0
        for s in top:
            t = next((x for x in seven if x["name"] == s["name"]), None)
            if t is None:
                worst = max(worst, 100.0)
                continue
            found += 1
            err = 100 * abs(t["misses"] - s["misses"]) / max(s["misses"], 1)
            worst = max(worst, err)
            within += err <= 10
        rows["attribution top-5"] = {"structures": len(top), "in top 7": found,
                                     "within 10 %": within, "worst %": worst}
    # Threads: per-thread curves and the falsely shared lines.
    te, ts = exact.get("threads") or {}, sampled.get("threads") or {}
    # The curves the report shows first (`combined` since session 70), and SHARDS's alone
    # where the report keeps them beside (`shards_curves`).
    for row, key in [("threads curves", "curves"), ("threads curves shards", "shards_curves")]:
        if not (te.get("curves") and ts.get(key)):
            continue
        errs = []
        for c in te["curves"]["threads"]:
            d = next((x for x in ts[key]["threads"] if x["thread"] == c["thread"]), None)
            if d:
                errs += errors({"points": d["points"]}, {"points": c["points"]})
        rows[row] = summary(errs)
    if te.get("sharing") and ts.get("sharing"):
        false_e = {l["line"] for l in te["sharing"].get("lines", []) if l["kind"] == "false"}
        false_s = {l["line"] for l in ts["sharing"].get("lines", []) if l["kind"] == "false"}
        rows["threads false sharing"] = {"exact": len(false_e), "found": len(false_e & false_s)}
    # SHARDS and StatStack by the sampled lines a cache holds (rate x lines), per size.
    rate = (sampled.get("sampled") or {}).get("final_rate") or 1.0
    by_lines = {}
    for m in ["shards", "statstack"]:
        c, pts = curve(sampled, "mrc", m, "lru"), []
        if c is not None and lru is not None:
            ex = {p["size_bytes"]: p["miss_ratio"] for p in lru["points"]}
            for p in c["points"]:
                if p.get("miss_ratio") is not None and ex.get(p["size_bytes"]) is not None:
                    pts.append([rate * p["lines"], 100 * abs(p["miss_ratio"] - ex[p["size_bytes"]])])
        by_lines[m] = pts
    rows["lru by sampled lines"] = by_lines
    # Both estimators at each size, for the sweep of the switch between them (sampled-table.py's
    # `#switch` block): [rate x lines, SHARDS's error, StatStack's error or None], and the reuse
    # samples behind StatStack (the report trusts it from MIN_REUSES in warnings.rs).
    sh, st = curve(sampled, "mrc", "shards", "lru"), curve(sampled, "mrc", "statstack", "lru")
    if sh is not None and lru is not None:
        ex = {p["size_bytes"]: p["miss_ratio"] for p in lru["points"]}
        sts = {p["size_bytes"]: p["miss_ratio"] for p in (st or {"points": []})["points"]}
        pts = []
        for p in sh["points"]:
            e = ex.get(p["size_bytes"])
            if p.get("miss_ratio") is None or e is None:
                continue
            q = sts.get(p["size_bytes"])
            pts.append([rate * p["lines"], 100 * abs(p["miss_ratio"] - e),
                        None if q is None else 100 * abs(q - e)])
        reuses = (sampled.get("sampling") or {}).get("reuses") or 0
        rows["lru switch"] = {"points": pts, "reuses": reuses}
    return {k: v for k, v in rows.items() if v is not None}


def relative(a, b, key, value):
    bs = {p[key]: p[value] for p in b}
    errs = [100 * abs(bs[p[key]] - p[value]) / p[value]
            for p in a if p[key] in bs and p[value] > 0 and bs[p[key]] == bs[p[key]]]
    return summary(errs)


def main():
    args = sys.argv[1:]
    name = None
    if "--name" in args:
        i = args.index("--name")
        name = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    exact, sampled = (json.load(open(p)) for p in args)
    out = {"name": name, "refs": exact["stats"]["refs"],
           "rate": (sampled.get("sampled") or {}).get("final_rate"),
           "sampled_refs": (sampled.get("sampled") or {}).get("sampled_refs"),
           "rows": compare(exact, sampled)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
