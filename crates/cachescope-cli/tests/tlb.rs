//! TLBs end to end (docs/tlb.md): `simulate --dtlb/--itlb/--stlb/--tlb` on hand-computed
//! traces and their `--json` contract, the walks fed to the caches, per-thread TLBs under
//! `--cores`, `mrc --page` against a fully associative TLB, `attribute`'s TLB misses by
//! structure, and examples/tlb/stride.c recorded under Valgrind: a page walk at nearly every
//! page visit with 4 KiB pages, only the first visit of each 2 MiB page with `--pages 2M`, and
//! the huge pages it had with `madvise` read back from its event log (skipped where the tool
//! cannot run, or the kernel gives no transparent huge pages: need `thp`).

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, Batch};
use serde_json::{Value, json as j};

mod common;
use common::{cs, json};

/// A lackey trace of `(kind, address)` references, 4 bytes each.
fn lackey(dir: &Path, refs: &[(char, u64)]) -> PathBuf {
    let path = dir.join("t.txt");
    let text: String = refs
        .iter()
        .map(|&(k, a)| {
            if k == 'I' {
                format!("I  {a:08x},4\n")
            } else {
                format!(" {k} {a:08x},4\n")
            }
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// (refs, misses) of each array of `v["tlbs"]`.
fn counts(v: &Value) -> Vec<(u64, u64)> {
    v["tlbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["refs"].as_u64().unwrap(), t["misses"].as_u64().unwrap()))
        .collect()
}

#[test]
fn two_levels_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    // DTLB: 2 entries, fully associative; STLB: 4 entries, 2 sets of 2 ways (pages by parity).
    // Pages 1 2 3 1 2 5 1: the DTLB misses all but nothing (LRU over three pages cycles); the
    // STLB sees every DTLB miss: 1 2 3 miss (cold), 1 2 hit, 5 misses (set 1 then holds 1 5:
    // 3 went), 1 hits. One fetch, not translated: no ITLB.
    let pages = [1u64, 2, 3, 1, 2, 5, 1];
    let mut refs: Vec<(char, u64)> = pages.iter().map(|&p| ('L', p * 4096 + 8)).collect();
    refs.insert(3, ('I', 0x400000));
    let t = lackey(dir.path(), &refs);
    let v = json(&[
        "simulate",
        t.to_str().unwrap(),
        "--dtlb",
        "2,full,4K",
        "--stlb",
        "4,2,4K",
        "--json",
    ]);
    assert_eq!(v["simulations"], j!([]));
    assert_eq!(
        v["tlbs"],
        j!([
            {"name": "dtlb", "entries": 2, "ways": 2, "page_size": 4096, "refs": 7, "misses": 7},
            {"name": "stlb", "entries": 4, "ways": 2, "page_size": 4096, "refs": 7, "misses": 4}
        ])
    );
    assert_eq!((&v["page_walks"], &v["walk_refs"]), (&j!(4), &j!(16)));
    // The table and the CSV say the same.
    let out = cs()
        .args(["simulate", t.to_str().unwrap(), "--dtlb", "2,full,4K"])
        .args(["--stlb", "4,2,4K"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("page walks: 4 (16 page-table reads)"),
        "{text}"
    );
    let csv = cs()
        .args([
            "simulate",
            t.to_str().unwrap(),
            "--dtlb",
            "2,full,4K",
            "--csv",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(
        csv,
        "tlb,entries,ways,page_size,refs,misses\ndtlb,2,2,4096,7,7\n"
    );
}

#[test]
fn huge_pages_and_the_skylake_preset() {
    let dir = tempfile::tempdir().unwrap();
    // 64 pages of 4 KiB, visited three times: 64 + 64 entries hold them. In 2 MiB pages they
    // are one page.
    let refs: Vec<(char, u64)> = (0..3)
        .flat_map(|_| (0..64u64).map(|p| ('L', 0x4000_0000 + p * 4096)))
        .collect();
    let t = lackey(dir.path(), &refs);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            t.to_str().unwrap(),
            "--tlb",
            "skylake",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    let v = run(&[]);
    // DTLB 4K (16 sets of 4) holds all 64; the 2M, 1G arrays and the ITLB see nothing.
    let names: Vec<(&str, u64)> = v["tlbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["page_size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("dtlb", 4096),
            ("dtlb", 2 << 20),
            ("dtlb", 1 << 30),
            ("itlb", 4096),
            ("itlb", 2 << 20),
            ("stlb", 4096),
            ("stlb", 1 << 30)
        ]
    );
    assert_eq!(counts(&v)[0], (192, 64));
    assert_eq!(v["page_walks"], 64);
    let v = run(&["--pages", "2M"]);
    assert_eq!(counts(&v)[1], (192, 1));
    assert_eq!((&v["page_walks"], &v["walk_refs"]), (&j!(1), &j!(3)));
    // Only the range in huge pages: the first 32 pages are one 2 MiB page.
    let v = run(&["--pages", "0x40000000..0x40020000=2M"]);
    assert_eq!(counts(&v)[0], (96, 32));
    assert_eq!(counts(&v)[1], (96, 1));
    assert_eq!(v["page_walks"], 33);
}

#[test]
fn walks_reach_the_caches_and_are_counted_apart() {
    let dir = tempfile::tempdir().unwrap();
    let refs: Vec<(char, u64)> = (0..4)
        .flat_map(|_| (0..100u64).map(|p| ('L', 0x1000_0000 + p * 4096)))
        .collect();
    let t = lackey(dir.path(), &refs);
    let base = [
        "simulate",
        t.to_str().unwrap(),
        "--cache",
        "4K,full,64",
        "--dtlb",
        "16,full,4K",
        "--json",
    ];
    let v = json(&base);
    let level = &v["simulations"][0]["levels"][0];
    // Every one of the 400 visits walks: 4 page-table reads each, fed to the cache.
    assert_eq!(v["page_walks"], 400);
    assert_eq!(level["refs"], 400 + 1600);
    assert_eq!(level["walks"]["refs"], 1600);
    // The walks read 16 distinct lines (13 of page-table entries, one of each upper level),
    // so they miss at least 16 times; the program's 100 lines cycling through the 64-line
    // cache evict the rest now and then.
    let walk_misses = level["walks"]["misses"].as_u64().unwrap();
    assert!((16..=1600).contains(&walk_misses), "{level}");
    let mut no_walks = base.to_vec();
    no_walks.push("--no-walks");
    let v2 = json(&no_walks);
    let plain = &v2["simulations"][0]["levels"][0];
    assert_eq!(plain["refs"], 400);
    assert!(plain.get("walks").is_none());
    assert_eq!(v2["tlbs"], v["tlbs"]);
}

#[test]
fn each_thread_has_its_own_tlbs_under_cores() {
    let dir = tempfile::tempdir().unwrap();
    // Two threads each visit the same 8 pages twice, in Valgrind's order (thread 1 first).
    let mut b = Batch::new();
    for t in [1, 2] {
        b.set_thread(t);
        for _ in 0..2 {
            for p in 0..8u64 {
                b.push(Access::load(0x1000_0000 + p * 4096, 8));
            }
        }
    }
    let path = dir.path().join("t.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::default()).unwrap();
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    let v = json(&[
        "simulate",
        path.to_str().unwrap(),
        "--cores",
        "2",
        "--cache",
        "32K,8,64",
        "--dtlb",
        "8,full,4K",
        "--json",
    ]);
    // Each thread misses its 8 pages once: 16 in all, where one shared TLB would miss 8.
    assert_eq!(counts(&v), [(32, 16)]);
    let per: Vec<(u64, u64)> = v["tlb_threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["thread"].as_u64().unwrap(),
                t["page_walks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(per, [(1, 8), (2, 8)]);
    // The walks' 64 page-table reads went through the cores' caches too.
    assert_eq!(v["walk_refs"], 64);
    let refs: u64 = v["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["refs"].as_u64().unwrap())
        .sum();
    assert_eq!(refs, 32 + 64);
}

#[test]
fn tlbs_under_cores_in_every_order() {
    let dir = tempfile::tempdir().unwrap();
    // Two threads taking turns of 8 references, each on 8 pages of its own and one page
    // both write.
    let mut b = Batch::new();
    for k in 0..64u64 {
        b.set_thread(1 + ((k / 8) % 2) as u32);
        let base = 0x1000_0000 + (k / 8 % 2) * 0x10_0000;
        b.push(Access::load(base + (k % 8) * 4096, 8));
        b.push(Access::store(0x2000_0000, 8));
    }
    let path = dir.path().join("t.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::default()).unwrap();
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    let run = |order: &[&str]| {
        let p = path.to_str().unwrap();
        let mut a = vec!["simulate", p, "--cores", "2", "--cache", "32K,8,64"];
        a.extend(["--dtlb", "4,full,4K", "--json"]);
        a.extend(order);
        json(&a)
    };
    let time = run(&["--interleave", "time"]);
    assert_eq!(time["interleave"], "time");
    // Each thread walks for its 8 pages and the shared one (its own TLB, 4 entries, cycling
    // 8 pages: every load walks), 4 entries read per walk.
    let walks = |v: &Value| v["page_walks"].as_u64().unwrap();
    assert_eq!(walks(&time), 2 * (32 + 1));
    assert_eq!(time["walk_refs"], 4 * walks(&time));
    let refs = |v: &Value| -> u64 {
        v["caches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["refs"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(refs(&time), 128 + 4 * walks(&time));
    // The TLBs are each thread's own: the order the threads are dealt in changes nothing in
    // them, nor in what the caches are given.
    for order in [&["--interleave", "instructions"][..], &["--quantum", "0"]] {
        let v = run(order);
        assert_eq!(v["tlbs"], time["tlbs"], "{order:?}");
        assert_eq!(v["tlb_threads"], time["tlb_threads"], "{order:?}");
        assert_eq!(refs(&v), refs(&time), "{order:?}");
    }
    // The shared page's line moves between the cores in modelled time too.
    let coherence: u64 = time["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["coherence"].as_u64().unwrap())
        .sum();
    assert!(coherence > 0, "{time}");
}

#[test]
fn page_curve_is_the_fully_associative_tlb() {
    let dir = tempfile::tempdir().unwrap();
    let t = common::generate(dir.path(), "z.cst", &["zipf", "--refs", "40000"]);
    let v = json(&[
        "mrc",
        t.to_str().unwrap(),
        "--page",
        "4K",
        "--sizes",
        "64K,256K",
        "--json",
    ]);
    assert_eq!((&v["page_size"], &v["line_size"]), (&j!(4096), &j!(4096)));
    let p = &v["points"][0];
    assert_eq!((&p["entries"], &p["covered_bytes"]), (&j!(16), &j!(65536)));
    for point in v["points"].as_array().unwrap() {
        let n = point["entries"].as_u64().unwrap();
        let s = json(&[
            "simulate",
            t.to_str().unwrap(),
            "--dtlb",
            &format!("{n},full,4K"),
            "--json",
        ]);
        let (refs, misses) = counts(&s)[0];
        let ratio = point["miss_ratio"].as_f64().unwrap();
        assert!(
            (ratio - misses as f64 / refs as f64).abs() < 1e-12,
            "{n}: {point} {s}"
        );
    }
    // The default sweep is by entries, 1 to 65536.
    let d = json(&["mrc", t.to_str().unwrap(), "--page", "2M", "--json"]);
    let pts = d["points"].as_array().unwrap();
    assert_eq!(pts[0]["entries"], 1);
    assert_eq!(pts[pts.len() - 1]["entries"], 65536);
    assert_eq!(pts[0]["covered_bytes"], 2 << 20);
    // A sampled method composes: StatStack over pages.
    let s = json(&[
        "mrc",
        t.to_str().unwrap(),
        "--page",
        "4K",
        "--method",
        "statstack",
        "--json",
    ]);
    assert_eq!(
        (&s["method"], &s["page_size"]),
        (&j!("statstack"), &j!(4096))
    );
    // Per thread, the table is keyed by entries too.
    let out = cs()
        .args(["mrc", t.to_str().unwrap(), "--page", "4K", "--per-thread"])
        .args(["--sizes", "64K"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("4K pages (a TLB per thread)") && table.contains("entries"),
        "{table}"
    );
    // Every method draws pages, each point keyed by its entries and the bytes they cover.
    for method in ["exact", "statcache", "statstack", "hotl", "hotl-rt", "mini"] {
        let m = json(&[
            "mrc",
            t.to_str().unwrap(),
            "--page",
            "2M",
            "--method",
            method,
            "--sizes",
            "4M,64M",
            "--json",
        ]);
        assert_eq!((&m["method"], &m["page_size"]), (&j!(method), &j!(2 << 20)));
        let keys: Vec<(&Value, &Value)> = m["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (&p["entries"], &p["covered_bytes"]))
            .collect();
        assert_eq!(
            keys,
            [(&j!(2), &j!(4 << 20)), (&j!(32), &j!(64 << 20))],
            "{method}"
        );
    }
}

#[test]
fn bad_tlb_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = lackey(dir.path(), &[('L', 0x1000)]);
    let t = t.to_str().unwrap();
    for (args, want) in [
        (vec!["--stlb", "1536,12,4K"], "give --dtlb"),
        (vec!["--dtlb", "64,5,4K"], "not whole sets"),
        (
            vec!["--dtlb", "64,4,4K", "--pages", "heap=2M"],
            "only `attribute`",
        ),
        (vec!["--dtlb", "32,4,2M"], "no array for 4K pages"),
        (
            vec!["--pages", "2M", "--cache", "32K,8,64"],
            "--pages applies to TLBs",
        ),
        (vec!["--dtlb", "64,4,4K", "--cachegrind"], "not with"),
    ] {
        let out = cs().args(["simulate", t]).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(want),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn stride_example_walks_at_every_page_or_every_huge_page() {
    if !common::tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tlb/stride.c");
    let (exe, trace) = common::record_c_program(dir.path(), &src, &[], &[]);
    let trace = trace.to_str().unwrap();
    // 65536 pages, written once and read three times.
    let visits = 4 * 65536;
    let walks = |extra: &[&str]| {
        let mut args = vec!["simulate", trace, "--tlb", "skylake", "--json"];
        args.extend_from_slice(extra);
        json(&args)["page_walks"].as_u64().unwrap()
    };
    let small = walks(&[]);
    assert!(small >= visits && small < visits + visits / 100, "{small}");
    let huge = walks(&["--pages", "2M"]);
    assert!((128..128 + 100).contains(&huge), "{huge}");
    // By structure: the buffer is a heap block; its own walks are exactly every visit, or
    // exactly the first visit of each of its 128 huge pages.
    let buffer = |extra: &[&str]| {
        let mut args = vec![
            "attribute",
            trace,
            "--tlb",
            "skylake",
            "--no-cost",
            "--no-mrc",
        ];
        args.extend_from_slice(extra);
        args.push("--json");
        let r = json(&args);
        let rows = r["tlb"]["buckets"].as_array().unwrap().clone();
        let heap = rows
            .iter()
            .find(|b| b["kind"] == "heap" && b["name"].as_str().unwrap().contains("stride.c"))
            .unwrap_or_else(|| panic!("{rows:?}"))
            .clone();
        (heap["page_walks"].as_u64().unwrap(), r)
    };
    let (w, r) = buffer(&[]);
    assert_eq!(w, visits);
    let line = &r["tlb"]["lines"][0];
    assert!(
        line["location"].as_str().unwrap().contains("stride.c:"),
        "{line}"
    );
    let (w, _) = buffer(&["--pages", "heap=2M"]);
    assert_eq!(w, 128);
    // One structure by the name `attribute` gives it, and a name no structure has: that
    // changes nothing, and a note says so.
    let name = r["tlb"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "heap")
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    let (w, _) = buffer(&["--pages", &format!("{name}=2M")]);
    assert_eq!(w, 128, "{name}");
    let (w, r) = buffer(&["--pages", "nosuch=2M"]);
    assert_eq!(w, visits);
    let notes = r["notes"].to_string();
    assert!(notes.contains("--pages nosuch=2M: no structure"), "{notes}");

    // The pages the program had: with "madvise" the kernel backs the buffer by 2 MiB pages
    // (THP "madvise"), which the event log records at exit and `--pages recorded` simulates.
    let had = dir.path().join("madvise.cst");
    common::record_ok(&["-q"], &had, &[exe.to_str().unwrap(), "madvise"]);
    let out = cs()
        .args(["simulate", had.to_str().unwrap(), "--tlb", "skylake"])
        .args(["--pages", "recorded", "--json"])
        .output()
        .unwrap();
    let note = String::from_utf8_lossy(&out.stderr);
    if note.contains("no transparent huge pages") {
        common::skip(
            "thp",
            &format!("the kernel gave the program no huge pages: {note}"),
        );
        return;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let walks = v["page_walks"].as_u64().unwrap();
    // Under memory pressure the kernel may back only part of the buffer: smaps does not say
    // which 2 MiB pages, so the mapping stays in 4 KiB pages (a walk per visit), as noted.
    if note.contains("stays in 4 KiB pages") {
        assert!(walks >= visits, "{walks}: {note}");
        common::skip(
            "thp",
            &format!("the kernel backed only part of the buffer by huge pages: {note}"),
        );
        return;
    }
    assert!((128..1000).contains(&walks), "{walks}: {note}");
}
