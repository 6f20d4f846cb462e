//! The Xiang footprint formula against brute force: every window of small random traces,
//! listed windows of long synthetic and real traces, and the laws the footprint obeys.

use std::collections::HashMap;

use cachescope::analysis::Analysis;
use cachescope::models::hotl::{Footprint, FootprintAnalysis};
use cachescope::reuse::{Layout, Options};
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};
use cachescope::{Access, Batch};
use proptest::prelude::*;

mod common;

/// The footprint of a trace of line numbers (64-byte lines).
fn footprint(lines: &[u64], exact_bits: u32, windows: &[u64]) -> Footprint {
    let options = Options {
        layout: Layout::new(exact_bits).unwrap(),
        ..Options::default()
    };
    let mut a = FootprintAnalysis::new(options, windows).unwrap();
    for chunk in lines.chunks(1000) {
        let batch: Batch = chunk.iter().map(|&l| Access::load(l * 64, 8)).collect();
        a.observe(&batch);
    }
    a.finish()
}

/// Σ over the windows of length `w` of their distinct lines, by sliding a window.
fn brute_total(lines: &[u64], w: usize) -> u64 {
    let mut counts: HashMap<u64, u32> = HashMap::new();
    let mut total = 0;
    for (i, &l) in lines.iter().enumerate() {
        *counts.entry(l).or_default() += 1;
        if i >= w {
            let out = lines[i - w];
            let c = counts.get_mut(&out).unwrap();
            *c -= 1;
            if *c == 0 {
                counts.remove(&out);
            }
        }
        if i + 1 >= w {
            total += counts.len() as u64;
        }
    }
    total
}

fn brute_fp(lines: &[u64], w: usize) -> f64 {
    brute_total(lines, w) as f64 / (lines.len() - w + 1) as f64
}

fn lines_of(w: Workload, p: &Params) -> Vec<u64> {
    let mut g = generator(w, p).unwrap();
    let mut b = Batch::new();
    let mut out = Vec::new();
    while g.read_batch(&mut b).unwrap() > 0 {
        out.extend(b.addrs.iter().map(|a| a >> 6));
    }
    out
}

#[test]
fn papers_examples() {
    // HOTL §2.2: "abbb" has fp(2) = 4/3.
    let fp = footprint(&[0, 1, 1, 1], 16, &[]);
    assert_eq!((fp.refs, fp.distinct_lines), (4, 2));
    assert!((fp.fp(2) - 4.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        [fp.fp(0), fp.fp(1), fp.fp(4), fp.fp(9)],
        [0.0, 1.0, 2.0, 2.0]
    );
    // HOTL §2.7 "xxyxxx": fp(3) = 7/4 and fp(4) = 2 (the paper prints 2 and 7/3, a slip).
    let fp = footprint(&[0, 0, 1, 0, 0, 0], 16, &[]);
    assert!((fp.fp(3) - 7.0 / 4.0).abs() < 1e-12);
    assert!((fp.fp(4) - 2.0).abs() < 1e-12);
    // §2.7's table: wwwx has fp(2) = 4/3, wwwwx 5/4.
    assert!((footprint(&[0, 0, 0, 1], 16, &[]).fp(2) - 4.0 / 3.0).abs() < 1e-12);
    assert!((footprint(&[0, 0, 0, 0, 1], 16, &[]).fp(2) - 5.0 / 4.0).abs() < 1e-12);
    // An empty trace.
    let fp = footprint(&[], 16, &[5]);
    assert_eq!((fp.refs, fp.fp(3)), (0, 0.0));
    assert!(fp.points(256).unwrap().is_empty());
}

#[test]
fn window_zero_is_refused() {
    assert!(FootprintAnalysis::new(Options::default(), &[3, 0]).is_err());
    let fp = footprint(&[0, 1, 0], 16, &[]);
    assert!(fp.points(3).is_err() && fp.points(512).is_err());
}

proptest! {
    /// Every window of random small traces, with the smallest exact region (2^8) so that
    /// binned reuse times, first and last positions are exercised too.
    #[test]
    fn xiang_equals_brute_force_for_every_window(
        lines in proptest::collection::vec(0u64..40, 1..700),
        exact_bits in prop_oneof![Just(8u32), Just(16u32)],
    ) {
        let n = lines.len();
        let listed: Vec<u64> = [257u64, 301, 333, 517, 600].into_iter().filter(|&w| w <= n as u64).collect();
        let fp = footprint(&lines, exact_bits, &listed);
        prop_assert_eq!(fp.refs, n as u64);
        for w in 1..=n {
            let want = brute_fp(&lines, w);
            let (low, high) = fp.fp_bounds(w as u64);
            prop_assert!(low - 1e-9 <= want && want <= high + 1e-9,
                "w {}: {} not in [{}, {}]", w, want, low, high);
            if w < 256 || exact_bits == 16 || listed.contains(&(w as u64)) {
                prop_assert!((fp.fp(w as u64) - want).abs() < 1e-9, "w {}", w);
            }
        }
        for p in fp.points(256).unwrap() {
            prop_assert!((p.footprint - brute_fp(&lines, p.window as usize)).abs() < 1e-9);
        }
        for p in fp.listed() {
            prop_assert!((p.footprint - brute_fp(&lines, p.window as usize)).abs() < 1e-9);
        }
    }

    /// Runs of references to one line (which the pass counts without the table), across
    /// chunk and batch boundaries, and at the trace's end.
    #[test]
    fn runs_of_one_line(runs in proptest::collection::vec((0u64..20, 1usize..150), 1..40)) {
        let lines: Vec<u64> = runs.iter().flat_map(|&(l, k)| std::iter::repeat_n(l, k)).collect();
        let fp = footprint(&lines, 8, &[]);
        for w in (1..=lines.len()).step_by(7).chain([lines.len()]) {
            let (low, high) = fp.fp_bounds(w as u64);
            let want = brute_fp(&lines, w);
            prop_assert!(low - 1e-9 <= want && want <= high + 1e-9, "w {}", w);
        }
    }

    /// fp never falls; it is concave up to the finite-trace bound
    /// s(w) ≤ (n − w + 2)/(n − w)·s(w − 1), s(w) = fp(w + 1) − fp(w); and the Xiang numerator
    /// (m − fp(w))·(n − w + 1) = Σ (x − w)⁺ is convex, exactly.
    #[test]
    fn footprint_laws(lines in proptest::collection::vec(0u64..12, 2..200)) {
        let fp = footprint(&lines, 16, &[]);
        let n = lines.len() as u64;
        let m = fp.distinct_lines as f64;
        let f: Vec<f64> = (0..=n).map(|w| fp.fp(w)).collect();
        let t: Vec<f64> = (0..=n).map(|w| (m - f[w as usize]) * (n - w + 1) as f64).collect();
        for w in 1..n as usize {
            prop_assert!(f[w + 1] >= f[w] - 1e-12);
            let (s, s_prev) = (f[w + 1] - f[w], f[w] - f[w - 1]);
            let k = n as f64 - w as f64;
            prop_assert!(s <= (k + 2.0) / k * s_prev + 1e-9, "w {}: {} after {}", w, s, s_prev);
            prop_assert!(t[w + 1] - 2.0 * t[w] + t[w - 1] >= -1e-6);
        }
    }
}

/// Listed windows above the exact region, off the grid, on long traces: the formula against a
/// sliding-window count.
#[test]
fn listed_windows_are_exact_on_long_traces() {
    let p = Params {
        lines: 3000,
        refs: Some(400_000),
        ..Params::default()
    };
    for w in [Workload::Zipf, Workload::Phases, Workload::MatmulTiled] {
        let lines = lines_of(w, &p);
        let listed = [70_001u64, 100_003, 131_071, 199_999];
        let fp = footprint(&lines, 16, &listed);
        for q in fp.listed() {
            let want = brute_fp(&lines, q.window as usize);
            assert!(
                (q.footprint - want).abs() < 1e-9 * want,
                "{w}: fp({}) = {} against {want}",
                q.window,
                q.footprint
            );
            assert!(fp.is_exact(q.window));
        }
        // Off-grid windows that were not listed are bracketed.
        for w in [70_002u64, 150_001] {
            let want = brute_fp(&lines, w as usize);
            let (low, high) = fp.fp_bounds(w);
            assert!(low <= want + 1e-9 && want <= high + 1e-9);
            assert!(high - low < 1e-5 * want, "bracket {low}..{high}");
        }
    }
}

/// The same check on a real trace: `sort -n` of 3000 numbers under Valgrind lackey (skipped,
/// with a message, when Valgrind is not installed).
#[test]
fn listed_windows_are_exact_on_a_real_trace() {
    let dir = tempfile::tempdir().unwrap();
    let Some(log) = common::sort_trace(dir.path()) else {
        return;
    };
    let mut reader = common::lackey_reader(&log);
    let (mut lines, mut b) = (Vec::new(), Batch::new());
    let listed = [70_001u64, 123_457, 500_001];
    let mut a = FootprintAnalysis::new(Options::default(), &listed).unwrap();
    while reader.read_batch(&mut b).unwrap() > 0 {
        a.observe(&b);
        let data = b.addrs.iter().zip(&b.kinds).filter(|(_, k)| k.is_data());
        lines.extend(data.map(|(&addr, _)| addr >> 6));
    }
    let fp = a.finish();
    assert_eq!(fp.refs, lines.len() as u64);
    assert!(
        fp.refs > 1_000_000,
        "a suspiciously short trace: {}",
        fp.refs
    );
    for q in fp.listed() {
        let want = brute_fp(&lines, q.window as usize);
        assert!(
            (q.footprint - want).abs() < 1e-9 * want,
            "fp({}) = {} against {want}",
            q.window,
            q.footprint
        );
    }
    for p in fp.points(16).unwrap().iter().step_by(9) {
        let want = brute_fp(&lines, p.window as usize);
        assert!(
            (p.footprint - want).abs() < 1e-9 * want,
            "fp({}) = {} against {want}",
            p.window,
            p.footprint
        );
    }
}
