//! `--sampled` on mrc, simulate, attribute, phases and sharing, on a trace file: each output
//! names its method and rate (the table's `# sampled (METHOD)` line, the JSON's `sampled`
//! object), and agrees with the exact command on the same small trace within the tolerance
//! stated beside each assertion (a synthetic Zipf trace of 300 K references over 8 K lines,
//! sampled at rate 0.25, seed 1; the tolerances are about twice the errors seen over seeds
//! 1 to 3).

mod common;

use std::path::{Path, PathBuf};

use cachescope::trace::native::{Header, Writer};
use cachescope::{Access, Batch};
use common::{cs, generate, json};
use serde_json::Value;

const RATE: &str = "0.25";

/// The synthetic trace every test reads.
fn zipf(dir: &Path) -> PathBuf {
    generate(
        dir,
        "zipf.cst",
        &["zipf", "--lines", "8192", "--refs", "300000"],
    )
}

/// `ARGS TRACE --json` exactly and with `--sampled --rate RATE`; checks the sampled one names
/// `method` and the rate.
fn both(args: &[&str], trace: &Path, method: &str) -> (Value, Value) {
    let t = trace.to_str().unwrap();
    let mut exact = args.to_vec();
    exact.extend([t, "--json"]);
    let mut sampled = exact.clone();
    sampled.extend(["--sampled", "--rate", RATE]);
    let (e, s) = (json(&exact), json(&sampled));
    {
        assert_eq!(s["sampled"]["method"], method, "{s}");
        assert_eq!(s["sampled"]["rate"], 0.25);
        assert_eq!(s["sampled"]["seed"], 1);
        // The table says the same.
        let mut table = args.to_vec();
        table.extend([t, "--sampled", "--rate", RATE]);
        let out = cs()
            .args(&table)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(&format!(
                "# sampled ({method}): lines kept with probability 0.25"
            )),
            "{text}"
        );
    }
    (e, s)
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

#[test]
fn mrc_sampled_is_the_shards_curve_within_2_pp() {
    let dir = tempfile::tempdir().unwrap();
    let t = zipf(dir.path());
    // The JSON names the rate in its `sampled` object, as every sampled command's does.
    let (e, s) = both(&["mrc", "--range", "16K..1M"], &t, "shards");
    assert_eq!(s["method"], "shards");
    let errors: Vec<f64> = e["points"]
        .as_array()
        .unwrap()
        .iter()
        .zip(s["points"].as_array().unwrap())
        .map(|(p, q)| (p["miss_ratio"].as_f64().unwrap() - q["miss_ratio"].as_f64().unwrap()).abs())
        .collect();
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    assert!(mean < 0.02, "mean absolute error {mean}");
    let table = cs()
        .args(["mrc", t.to_str().unwrap(), "--sampled", "--rate", RATE])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8(table)
            .unwrap()
            .contains("# sampled (shards): lines kept with probability 0.25")
    );
}

#[test]
fn simulate_sampled_misses_within_10_percent() {
    let dir = tempfile::tempdir().unwrap();
    let t = zipf(dir.path());
    let (e, s) = both(&["simulate", "--cache", "128K,8,64"], &t, "mini");
    let misses = |v: &Value| v["simulations"][0]["levels"][0]["misses"].as_f64().unwrap();
    let err = relative(misses(&s), misses(&e));
    assert!(err < 0.10, "{} against {}", misses(&s), misses(&e));
}

#[test]
fn attribute_sampled_misses_within_10_percent() {
    let dir = tempfile::tempdir().unwrap();
    let t = zipf(dir.path());
    let (e, s) = both(&["attribute"], &t, "mini");
    assert_eq!(
        s["cache"], e["cache"],
        "the full cache is named, not its miniature"
    );
    let misses = |v: &Value| v["misses"].as_f64().unwrap();
    assert!(
        relative(misses(&s), misses(&e)) < 0.10,
        "{} against {}",
        misses(&s),
        misses(&e)
    );
}

#[test]
fn phases_sampled_l2_miss_ratio_within_half_a_point() {
    let dir = tempfile::tempdir().unwrap();
    let t = zipf(dir.path());
    let (e, s) = both(&["phases", "--interval", "20000"], &t, "shards");
    assert_eq!(
        e["intervals"].as_array().unwrap().len(),
        s["intervals"].as_array().unwrap().len(),
        "intervals cut at full-stream positions"
    );
    let ratio = |v: &Value| v["l2_miss_ratio"].as_f64().unwrap();
    assert!(
        (ratio(&s) - ratio(&e)).abs() < 0.005,
        "{} against {}",
        ratio(&s),
        ratio(&e)
    );
}

/// Threads 2 and 3 write bytes 0-7 and 8-15 of each of 64 lines (false sharing), each also
/// reading a private line.
fn falsely_shared(dir: &Path) -> PathBuf {
    let path = dir.join("shared.cst");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), Header::new()).unwrap();
    let mut b = Batch::new();
    for i in 0..20_000u64 {
        let t = 2 + (i / 50 % 2) as u32;
        b.set_thread(t);
        b.push(Access {
            pc: Some(0x400 + u64::from(t)),
            ..Access::store(0x1_0000 + 64 * (i % 64) + 8 * u64::from(t - 2), 8)
        });
        b.push(Access::load(0x10_0000 * u64::from(t), 8));
    }
    w.write_batch(&b).unwrap();
    w.finish().unwrap();
    path
}

#[test]
fn sharing_sampled_finds_the_sampled_lines_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let t = falsely_shared(dir.path());
    let (e, s) = both(&["sharing", "--quantum", "10"], &t, "shards");
    let exact = e["lines"].as_array().unwrap();
    assert_eq!(exact.len(), 64);
    let found = s["lines"].as_array().unwrap();
    // Every line two threads write is found (the detector of a first read, then measured
    // whole: `promoted`), about a quarter of them sampled; each with its exact counts.
    assert_eq!(found.len(), 64);
    let sampled = found.iter().filter(|l| l["found"] == "sampled").count();
    assert!((4..=40).contains(&sampled), "{sampled} lines sampled");
    for l in found {
        let same = exact.iter().find(|x| x["line"] == l["line"]).unwrap();
        assert_eq!(l["kind"], "false");
        assert_eq!(l["writes"], same["writes"], "{l}");
        assert_eq!(l["coherence_misses"], same["coherence_misses"], "{l}");
        let how = l["found"].as_str().unwrap();
        assert!(how == "sampled" || how == "promoted", "{l}");
    }
    assert_eq!(s["promotion"]["promoted"], 64, "{s}");
}

#[test]
fn simulate_sampled_refuses_tlbs_rather_than_ignore_them() {
    let out = cs()
        .args(["simulate", "--workload", "phases", "--cache", "32K,8,64"])
        .args(["--sampled", "--tlb", "skylake"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("simulates no TLB"), "{err}");
}

/// `mrc --page --sampled` samples whole pages (hashed by page, not by line) and prints the
/// page curve by entries and covered bytes: at rate 1 every page is kept and the curve is the
/// exact page curve point for point; at a lower rate the table keeps its TLB columns.
#[test]
fn mrc_page_sampled_keeps_whole_pages() {
    let dir = tempfile::tempdir().unwrap();
    let t = zipf(dir.path());
    let t = t.to_str().unwrap();
    let exact = json(&["mrc", t, "--page", "4K", "--json"]);
    let all = json(&[
        "mrc",
        t,
        "--page",
        "4K",
        "--json",
        "--sampled",
        "--rate",
        "1",
    ]);
    let points = |v: &Value| -> Vec<(u64, f64)> {
        v["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["entries"].as_u64().unwrap(),
                    p["miss_ratio"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let (e, s) = (points(&exact), points(&all));
    assert!(!e.is_empty());
    assert_eq!(e.len(), s.len(), "{exact}\n{all}");
    for ((n, a), (m, b)) in e.iter().zip(&s) {
        assert_eq!(n, m);
        assert!(
            (a - b).abs() < 1e-9,
            "{n} entries: exact {a}, sampled at rate 1 {b}"
        );
    }
    let table = cs()
        .args(["mrc", t, "--page", "4K", "--sampled", "--rate", RATE])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(table).unwrap();
    assert!(
        text.contains("entries") && text.contains("covers"),
        "{text}"
    );
    assert!(text.contains("# sampled (shards)"), "{text}");
}
