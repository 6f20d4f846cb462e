"""The Python package against the command line: the same request gives the same JSON, byte
for byte. The CLI is $CACHESCOPE_CLI (scripts/test-python.sh builds it); without it the
comparisons skip with the reason printed. A skip's reason starts with its need in brackets
("[valgrind] …"; conftest.py makes it a failure where $CACHESCOPE_TEST_REQUIRE lists it)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import cachescope as cs

CLI = os.environ.get("CACHESCOPE_CLI")
needs_cli = pytest.mark.skipif(
    not (CLI and os.path.exists(CLI)),
    reason="[python] CACHESCOPE_CLI does not name the cachescope binary (scripts/test-python.sh sets it)",
)
SIZES = ["1K", "4K", "16K", "64K", "256K"]


def untimed(v):
    """`v` without the fields measured in time (`clustering_ms`, `…_ns_per_ref`, `measured_speedup`)."""
    if isinstance(v, dict):
        return {k: untimed(x) for k, x in v.items() if not k.endswith(("_ms", "_ns_per_ref", "_speedup"))}
    if isinstance(v, list):
        return [untimed(x) for x in v]
    return v


def cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A 200,000-reference zipf trace written by the CLI's generate (native format)."""
    if not (CLI and os.path.exists(CLI)):
        path = tmp_path_factory.mktemp("t") / "none.cst"
        pytest.skip("[python] CACHESCOPE_CLI is not set")
    path = tmp_path_factory.mktemp("t") / "zipf.cst"
    cli("generate", "zipf", "--refs", "200000", "--seed", "3", "-o", str(path))
    return path


@needs_cli
@pytest.mark.parametrize(
    "method,policy,extra",
    [
        ("exact", None, {}),
        ("exact", "random", {}),
        ("exact", "opt", {}),
        ("exact", "fifo", {"ways": 4}),
        ("exact", "lru", {"ways": 8}),
        ("statstack", None, {"rate": 0.01}),
        ("statcache", None, {"rate": 0.01, "estimate_cold": True}),
        ("hotl", None, {}),
        ("hotl-rt", None, {}),
        ("mini", "srrip", {"ways": 4, "mini_rate": 0.1}),
        ("mini", "fifo", {"ways": 4, "mini_rate": 0.1, "mini_unadjusted": True}),
    ],
)
def test_every_method_equals_the_cli(trace, method, policy, extra):
    args = ["mrc", str(trace), "--json", "--method", method, "--sizes", ",".join(SIZES)]
    if policy:
        args += ["--policy", policy]
    flags = {"rate": "--rate", "ways": "--ways", "mini_rate": "--mini-rate"}
    for k, v in extra.items():
        if k == "estimate_cold":
            args.append("--estimate-cold")
        elif k == "mini_unadjusted":
            args.append("--mini-unadjusted")
        else:
            args += [flags[k], str(v)]
    want = cli(*args)
    got = cs.open(trace).mrc(method=method, policy=policy, sizes=SIZES, **extra)
    assert got.json == want
    assert got.sizes.tolist() == [cs._native.parse_size(s) for s in SIZES]
    assert got.miss_ratio_warm.dtype == np.float64
    if method == "statcache":
        assert not np.isnan(got.miss_ratio).any()


@needs_cli
def test_stats_footprint_and_the_default_sizes_equal_the_cli(trace):
    t = cs.open(trace)
    assert t.stats().json == cli("stats", str(trace), "--json")
    assert t.footprint().json == cli("footprint", str(trace), "--json")
    assert t.footprint(windows=[1, 10, 1000]).json == cli(
        "footprint", str(trace), "--json", "--windows", "1,10,1000"
    )
    assert t.mrc().json == cli("mrc", str(trace), "--json")


@needs_cli
def test_a_profile_models_like_the_clis_profile(trace, tmp_path):
    prof = tmp_path / "cli.prof"
    cli("sample", str(trace), "-o", str(prof), "--rate", "0.02", "--seed", "5")
    p = cs.open(trace).sample(rate=0.02, seed=5)
    for method in ["statstack", "statcache"]:
        want = cli("mrc", str(prof), "--json", "--method", method, "--sizes", ",".join(SIZES))
        assert p.mrc(method, sizes=SIZES).json == want
        assert cs.load_profile(prof).mrc(method, sizes=SIZES).json == want
    saved = tmp_path / "py.prof"
    p.save(saved)
    assert cs.load_profile(saved).summary == p.summary
    s = p.samples()
    assert s.shape == (p.summary["samples"], 2)
    assert (np.diff(s[:, 0]) > 0).all()


@needs_cli
def test_analyse_gives_what_the_separate_calls_give(trace):
    t = cs.open(trace)
    r = cs.analyse(t, ["stats", "mrc", "footprint", "sample"], sizes=SIZES, rate=0.01)
    assert r["stats"].json == t.stats().json
    assert r["mrc"].json == t.mrc(sizes=SIZES).json
    assert r["footprint"].json == t.footprint().json
    assert r["sample"].summary == t.sample(rate=0.01).summary
    with pytest.raises(cs.CachescopeError, match="unknown analysis"):
        cs.analyse(t, ["nonsense"])


def test_analyse_sampled_gives_what_the_cli_gives(trace):
    t = cs.open(trace)
    r = cs.analyse(t, ["mrc", "sample"], sizes=SIZES, sampled=True, rate=0.05)
    want = json.loads(
        cli("mrc", str(trace), "--json", "--sampled", "--rate", "0.05", "--sizes", ",".join(SIZES))
    )
    # The CLI's JSON adds a `sampled` object naming the method and rate; the curve is the same.
    assert want.pop("sampled")["rate"] == 0.05
    assert json.loads(r["mrc"].json) == want
    assert r["mrc"].json.find('"method": "shards"') > 0
    # The profile reads the full stream, as without sampling, its rate floored as the sampled
    # report's (docs/sampled.md): 200,000 references are at most 2^16 * 4, so every fourth
    # position on average where the rate 1e-4 keeps about 20.
    got, plain = r["sample"].summary, t.sample().summary
    assert (got["refs"], got["seed"]) == (plain["refs"], plain["seed"])
    assert (plain["rate"], got["rate"]) == (1e-4, 0.25)
    assert abs(got["samples"] - 50_000) < 5 * 50_000**0.5, got
    assert plain["samples"] < 100, plain
    # At rate 1 the sample is every line: SHARDS is the exact curve.
    exact = cs.analyse(t, ["mrc"], sizes=SIZES)["mrc"]
    whole = cs.analyse(t, ["mrc"], sizes=SIZES, sampled=True, rate=1.0)["mrc"]
    assert list(whole.miss_ratio) == pytest.approx(list(exact.miss_ratio), abs=1e-12)
    with pytest.raises(cs.CachescopeError, match="stats counts every reference"):
        cs.analyse(t, ["stats"], sampled=True)


def test_bad_input_raises_with_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("I  04000000,3\n L 1fff000340,8\n L zzzz,8\n")
    with pytest.raises(cs.CachescopeError) as e:
        cs.open(bad).stats()
    assert f"{bad}:3: expected a lackey record" in str(e.value)
    with pytest.raises(cs.CachescopeError, match="no such file"):
        cs.open(tmp_path / "missing.cst")
    with pytest.raises(cs.CachescopeError, match="unknown unit"):
        cs.workload("loop").mrc(sizes=["3T"])
    with pytest.raises(cs.CachescopeError, match="models random replacement only"):
        cs.workload("loop").mrc(method="statcache", policy="lru")
    with pytest.raises(cs.CachescopeError, match="unknown workload"):
        cs.workload("nope")


# Run in a child interpreter: were the GIL held through the pass, it would deadlock, and the
# parent's timeout (a hang guard, not a speed limit) turns that into a failure.
GIL_CHILD = r"""
import os, sys, threading
import cachescope as cs
fifo = sys.argv[1]
os.mkfifo(fifo)
# A writer from the start, so that opening the reading end never waits.
fd = os.open(fifo, os.O_RDWR)
lines = [f" L {0x10000 + 64 * (i % 5000):x},8\n".encode() for i in range(200_000)]
os.write(fd, b"".join(lines[:1000]))
refs = []
worker = threading.Thread(target=lambda: refs.append(cs.open(fifo, format="lackey").stats(threads=1)["refs"]))
worker.start()
# The pass waits in Rust for the rest, which only this thread writes, in Python: it can only
# while the pass has let go of the GIL.
rest = b"".join(lines[1000:])
while rest:
    rest = rest[os.write(fd, rest):]
os.close(fd)
worker.join()
print(refs[0])
"""


def test_passes_release_the_gil(tmp_path):
    """While one thread runs a pass, another runs Python: with the GIL held it could not."""
    out = subprocess.run(
        [sys.executable, "-c", GIL_CHILD, str(tmp_path / "trace.fifo")],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["200000"], out


def test_progress_is_reported():
    seen = []
    cs.workload("zipf", refs=10_000_000).stats(progress=seen.append, threads=1)
    assert seen and seen == sorted(seen) and seen[-1] <= 10_000_000


def test_curves_as_pandas_frames():
    pd = pytest.importorskip("pandas")
    c = cs.workload("loop", lines=256, refs=20_000).mrc(sizes=["8K", "32K"])
    df = c.to_pandas()
    assert list(df.columns) == ["size_bytes", "lines", "miss_ratio", "miss_ratio_warm"]
    # 256 lines looped over: an 8K cache (128 lines) misses all but the 256 cold misses.
    assert df["miss_ratio_warm"].tolist() == [1 - 256 / 20_000, 0.0]
    assert isinstance(df, pd.DataFrame)


def test_report_writes_the_html(tmp_path):
    s = cs.workload("loop", lines=300, refs=50_000).report(tmp_path / "r", threads=1)
    assert os.path.exists(s["html"]) and os.path.exists(s["json"])
    assert s["refs"] == 50_000


def test_report_curves_are_the_methods_curves(tmp_path):
    # Every curve of report.json is what mrc() gives for its method with the report's rate,
    # seed and estimated cold misses, at the report's sizes: HOTL's time-local reading too.
    t = cs.workload("zipf", lines=1024, refs=60_000)
    s = t.report(tmp_path / "r", rate=0.01, interval=5_000, threads=1)
    with open(s["json"]) as f:
        report = json.load(f)
    assert [c["method"] for c in report["mrc"]] == [
        "exact", "exact", "statcache", "statstack", "hotl", "hotl-rt"
    ]
    for shown in report["mrc"]:
        sizes = [p["size_bytes"] for p in shown["points"]]
        c = t.mrc(method=shown["method"], policy=shown["policy"], sizes=sizes, rate=0.01,
                  estimate_cold=True)
        assert json.loads(c.json) == shown, shown["method"]


needs_valgrind = pytest.mark.skipif(
    not shutil.which("valgrind") or not shutil.which("cc"), reason="[valgrind] valgrind or cc missing"
)
# What `record` says (cachescope's own message) where the tool cannot run: a skip; any other
# failure of a recording is a failure.
TOOL_CANNOT_RUN = "cachescope's Valgrind tool cannot run"


def record_cli(path, exe):
    """`cachescope record --backend tool -o PATH -- EXE`; skips where the tool cannot run."""
    try:
        cli("record", "-q", "--backend", "tool", "-o", str(path), "--", str(exe))
    except subprocess.CalledProcessError as e:
        if TOOL_CANNOT_RUN in e.stderr:
            pytest.skip(f"[tool] {e.stderr.strip()}")
        raise


@needs_valgrind
def test_record_a_program(tmp_path):
    src = tmp_path / "p.c"
    src.write_text("static long a[4096]; int main(void){for(int r=0;r<4;r++)for(int i=0;i<4096;i++)a[i]+=i;return 0;}")
    exe = tmp_path / "p"
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    try:
        t = cs.record([str(exe)], output=tmp_path / "p.cst")
    except cs.CachescopeError as e:
        if TOOL_CANNOT_RUN in str(e):
            pytest.skip(f"[tool] {e}")
        raise
    st = t.stats()
    # 4 x 4096 read-modify-writes of a[] at least.
    assert st["modifies"] + st["loads"] >= 4 * 4096
    with pytest.raises(cs.CachescopeError, match="exited with 3"):
        cs.record(["sh", "-c", "exit 3"], output=tmp_path / "q.cst")


@needs_cli
def test_simulate_l2_and_phases_equal_the_cli(trace):
    t = cs.open(trace)
    want = cli("simulate", str(trace), "--json", "--cache", "32K,8,64", "--cache", "4K,1,32", "--policy", "fifo")
    assert t.simulate(["32K,8,64", "4K,1,32"], policy="fifo").json == want
    want = cli("l2", str(trace), "--json", "--l1", "4K", "--l2", "16K,64K", "--simulate", "--policy", "random")
    got = t.l2(l1="4K", l2=["16K", "64K"], simulate=True, policy="random")
    assert got.json == want and "simulated" in got
    args = ["--interval", "20000", "--k", "3", "--l2", "64K,8,64"]
    got = t.phases(interval=20000, k=3, l2="64K,8,64")
    want = json.loads(cli("phases", str(trace), "--json", *args))
    # Everything but the methods' measured running times.
    assert untimed(got) == untimed(want) and len(got["methods"]) >= 3
    want = cli("simulate", str(trace), "--json", "--cache", "8K,4,64", "--write-allocate", "no",
               "--prefetch", "stride", "--prefetch-degree", "2")
    got = t.simulate("8K,4,64", write_allocate=False, prefetch="stride", prefetch_degree=2)
    assert got.json == want and "writebacks" in want and "useful_prefetches" in want
    want = cli("simulate", str(trace), "--json", "--cache", "8K,4,64", "--utilization")
    got = t.simulate("8K,4,64", utilization=True)
    assert got.json == want and 0 < got["simulations"][0]["levels"][0]["utilization"] <= 1
    want = cli("simulate", str(trace), "--json", "--cache", "8K,4,64", "--tlb", "skylake", "--pages", "2M")
    got = t.simulate("8K,4,64", tlb="skylake", pages="2M")
    assert got.json == want and got["page_walks"] > 0 and "walks" in got["simulations"][0]["levels"][0]
    want = cli("simulate", str(trace), "--json", "--dtlb", "16,full,4K", "--stlb", "64,4,4K", "--no-walks")
    assert t.simulate([], dtlb="16,full,4K", stlb=["64,4,4K"], walks=False).json == want
    with pytest.raises(cs.CachescopeError, match="expected none, next-line or stride"):
        t.simulate("8K,4,64", prefetch="sideways")
    with pytest.raises(cs.CachescopeError, match="OPT needs the future"):
        t.simulate("32K,8,64", policy="opt")


@needs_cli
def test_attribute_equals_the_cli(trace, tmp_path):
    t = cs.open(trace)
    want = cli("attribute", str(trace), "--json", "--cache", "16K,4,64", "--sample", "100")
    got = t.attribute(cache="16K,4,64", sample=100, cachegrind_out=tmp_path / "cg.out")
    assert got.json == want
    text = (tmp_path / "cg.out").read_text()
    assert text.startswith("desc:") or "events:" in text
    want = cli("attribute", str(trace), "--json", "--cache", "16K,4,64", "--utilization", "--writebacks")
    got = t.attribute(cache="16K,4,64", utilization=True, writebacks=True)
    assert got.json == want and "utilization" in got and "writebacks" in got and "loads" in got


@needs_cli
@needs_valgrind
def test_callgraph_equals_the_cli(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "callgraph", "calltree.c")
    exe = tmp_path / "calltree"
    subprocess.run(["cc", "-O2", "-g", "-fno-inline", "-o", str(exe), src], check=True)
    path = tmp_path / "ct.cst"
    record_cli(path, exe)
    t = cs.open(path)
    got = t.callgraph(callgrind_out=tmp_path / "ct.callgrind")
    assert got.json == cli("attribute", str(path), "--callgraph", "--json")
    assert got["call_events"]
    calls = {(c["caller"], c["callee"]): c["calls"] for c in got["calls"] if c["caller"] == "descend"}
    assert calls[("descend", "descend")] == 36 and calls[("descend", "leaf")] == 3
    assert "calls=" in (tmp_path / "ct.callgrind").read_text()
    got = t.callgraph(sampled=True, rate=0.1)
    assert got.json == cli("attribute", str(path), "--callgraph", "--json", "--sampled", "--rate", "0.1")
    assert got["sampled"] == 0.0625


@needs_cli
@needs_valgrind
def test_threads_per_thread_curves_and_one_thread_equal_the_cli(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "threads", "working_sets.c")
    exe = tmp_path / "ws"
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(exe), src], check=True)
    path = tmp_path / "ws.cst"
    record_cli(path, exe)
    t = cs.open(path)
    st = t.stats()
    assert st["threads"] == json.loads(cli("stats", "--json", str(path)))["threads"]
    assert [x["thread"] for x in st["threads"]] == [1, 2, 3]
    per = t.mrc(method="statstack", sizes=SIZES, per_thread=True, rate=0.01)
    want = cli("mrc", str(path), "--json", "--per-thread", "--method", "statstack", "--rate", "0.01",
               "--sizes", ",".join(SIZES))
    assert json.loads(per.json) == json.loads(want)
    assert per.threads == [1, 2, 3]
    # A mapping from thread to curve (issue 58: list(per) raised KeyError: 0).
    assert list(per) == [1, 2, 3] and 2 in per and 0 not in per
    assert [t for t, _ in per.items()] == [1, 2, 3] and dict(per)[3] is per[3]
    one = cs.open(path, thread=3).mrc(method="statstack", sizes=SIZES, rate=0.01)
    assert one.miss_ratio_warm.tolist() == per[3].miss_ratio_warm.tolist()
    assert t.thread(2).stats()["refs"] == per.refs[2]
    with pytest.raises(cs.CachescopeError, match="thread 9 does not appear"):
        t.thread(9).stats()


@needs_cli
@needs_valgrind
def test_sharing_finds_false_sharing_and_equals_the_cli(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "threads", "false_sharing.c")
    exe = tmp_path / "fs"
    subprocess.run(["cc", "-O1", "-g", "-pthread", "-o", str(exe), src], check=True)
    path = tmp_path / "fs.cst"
    record_cli(path, exe)
    got = cs.open(path).sharing()
    assert json.loads(got.json) == json.loads(cli("sharing", "--json", str(path)))
    worst = got["lines"][0]
    assert worst["kind"] == "false" and worst["coherence_misses"] > 0 and "fix" in worst
    # The recorded order, as the command line takes it (issue 58: refused before).
    recorded = cs.open(path).sharing(quantum=0)
    assert json.loads(recorded.json) == json.loads(cli("sharing", "--json", "--quantum", "0", str(path)))
    assert recorded["quantum"] == 0 and "interleave" not in recorded.json
    with pytest.raises(cs.CachescopeError, match="interleave"):
        cs.open(path).sharing(interleave="sideways")


@needs_cli
def test_simulate_cores_equals_the_cli(trace):
    t = cs.open(trace)
    for py, args in [
        ({}, []),
        ({"interleave": "instructions", "quantum": 500}, ["--interleave", "instructions", "--quantum", "500"]),
        ({"quantum": 0}, ["--quantum", "0"]),
        ({"prefetch": "next-line", "writebacks": True}, ["--prefetch", "next-line", "--writebacks"]),
        (
            {"prefetch": "stride", "prefetch_degree": 2, "prefetch_distance": 3},
            ["--prefetch", "stride", "--prefetch-degree", "2", "--prefetch-distance", "3"],
        ),
        ({"utilization": True, "writebacks": True}, ["--utilization", "--writebacks"]),
    ]:
        want = cli("simulate", str(trace), "--json", "--cores", "2", "--cache", "8K,4,64", *args)
        got = t.simulate("8K,4,64", cores=2, **py)
        assert got.json == want, py
        if py.get("prefetch") == "next-line":
            assert got["totals"][0]["prefetches"] > 0
    assert got["caches"][0]["utilization"] > 0 and got["cores"] == 2
    with pytest.raises(cs.CachescopeError, match="one cache"):
        t.simulate(["8K,4,64", "64K,8,64"], cores=2)
    with pytest.raises(cs.CachescopeError, match="interleave"):
        t.simulate("8K,4,64", cores=2, interleave="sideways")
    with pytest.raises(cs.CachescopeError, match="TLBs are not simulated from Python"):
        t.simulate("8K,4,64", cores=2, dtlb="64,4,4K")


@needs_valgrind
def test_simulate_cores_counts_false_sharing_as_the_cli(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "threads", "false_sharing.c")
    exe = tmp_path / "fs"
    subprocess.run(["cc", "-O1", "-g", "-pthread", "-o", str(exe), src], check=True)
    path = tmp_path / "fs.cst"
    record_cli(path, exe)
    got = cs.open(path).simulate("32K,8,64", cores=3)
    assert got.json == cli("simulate", "--json", str(path), "--cores", "3", "--cache", "32K,8,64")
    assert got["interleave"] == "time" and got["totals"][0]["coherence"] > 0
    # Each core's own next-line prefetcher, a prefetch taking lines the other cores wrote.
    got = cs.open(path).simulate("32K,8,64", cores=3, prefetch="next-line", writebacks=True)
    flags = ["--cores", "3", "--cache", "32K,8,64", "--prefetch", "next-line", "--writebacks"]
    assert got.json == cli("simulate", "--json", str(path), *flags)
    assert got["totals"][0]["prefetches"] > 0


def test_advise_and_whatif_equal_the_cli(tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "advice", "hot_cold.c")
    exe = tmp_path / "hot_cold"
    subprocess.run(["cc", "-O2", "-g", "-o", str(exe), src], check=True)
    path = tmp_path / "hot_cold.cst"
    try:
        cli("record", "-q", "--program-output", "null", "-o", str(path), "--", str(exe))
    except subprocess.CalledProcessError as e:
        pytest.skip(f"cachescope's Valgrind tool cannot run here: {e.stderr}")
    t = cs.open(path)
    got = t.advise()
    assert json.loads(got.json) == json.loads(cli("advise", "--json", str(path)))
    top = got["findings"][0]
    assert (top["kind"], top["structure"]) == ("split", "parts")
    w = t.whatif("split:parts=x", caches=["32K,8,64", "1M,16,64"])
    assert json.loads(w.json) == json.loads(
        cli("whatif", "--json", str(path), "--cache", "32K,8,64", "--cache", "1M,16,64", "--change", "split:parts=x")
    )
    assert w["levels"][0]["misses_after"] < w["levels"][0]["misses"]
    with pytest.raises(cs.CachescopeError, match="no structure called nothing"):
        t.whatif("pad:nothing=64")
    with pytest.raises(cs.CachescopeError, match="--change"):
        t.whatif("shrink:parts=1")
