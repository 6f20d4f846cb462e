//! Would time sampling keep the report's small exact caches accurate? A probe for issue 38's
//! sampled defaults: spatial (SHARDS) sampling loses small caches, whose few sampled lines say
//! little, while a small cache forgets its past within a few thousand references, so
//! simulating it on short windows of the trace, each after a warm-up, should hold. This runs
//! OPT (fully associative, 64 to 2048 lines) and FIFO, SRRIP and DRRIP (8 ways, 4, 16 and 64
//! KiB) over every data reference, then over one window of `WINDOW` references in every `PERIOD` (at a random place in it),
//! each after `WARM` references of warm-up from an empty cache (OPT's next uses looked up
//! no further than the window's end plus `AHEAD`), and prints both miss ratios; and the
//! windows' estimate corrected by LRU in the same caches, whose exact ratio the report
//! knows from its pass (a control variate, its coefficient fitted over the windows: the
//! windows' bias is mostly LRU's too), with its standard error from the windows' spread and
//! the share of the trace a standard error of 0.05 pp would need.
//!
//! ```sh
//! cargo run --release -p cachescope --example time_sampling -- TRACE [PERIOD WINDOW WARM]
//! ```
//!
//! Lines are the 64-byte lines of each data reference's address (a reference straddling two
//! lines counts its first only); everything is held in memory, 4 bytes a reference.

use std::collections::HashMap;
use std::time::Instant;

use cachescope::opt::OptStack;
use cachescope::sim::{Cache, Geometry, Policy};
use cachescope::trace::{OpenOptions, open};
use cachescope::{AccessKind, Batch};

/// OPT's next uses are looked up this far past a window's end.
const AHEAD: usize = 1 << 20;
/// The standard error (percentage points) an accuracy-targeted sampler would aim at.
const TARGET_SE: f64 = 0.05;
const OPT_LINES: [u64; 6] = [64, 128, 256, 512, 1024, 2048];
const SET_BYTES: [u64; 3] = [4 << 10, 16 << 10, 64 << 10];

fn policies() -> [Policy; 3] {
    [Policy::Fifo, Policy::Srrip, Policy::Drrip { seed: 1 }]
}

/// Misses per size over `ids[measure..stop]` of a run from an empty state over `ids[..stop]`,
/// OPT's next uses taken from all of `ids` (beyond, a line counts as never used again): OPT's
/// sizes, then each policy's caches in the order of `policies()` × `SET_BYTES`.
fn misses(ids: &[u32], lines: &[u64], measure: usize, stop: usize) -> Vec<u64> {
    let mut next = vec![u64::MAX; ids.len()];
    let mut seen = vec![u64::MAX; lines.len()];
    for t in (0..ids.len()).rev() {
        next[t] = std::mem::replace(&mut seen[ids[t] as usize], t as u64);
    }
    let mut stack = OptStack::bounded(*OPT_LINES.last().expect("sizes"));
    stack.access_all(&ids[..measure], &next[..measure]);
    let before = stack.misses_at(&OPT_LINES);
    stack.access_all(&ids[measure..stop], &next[measure..stop]);
    let after = stack.misses_at(&OPT_LINES);
    let mut out: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let mut caches = Vec::new();
    for policy in policies() {
        caches.extend(SET_BYTES.map(|b| (Geometry::new(b, 8, 64), policy)));
    }
    // The controls: LRU, fully associative at OPT's sizes, 8 ways at the others'.
    caches.extend(OPT_LINES.map(|l| (Geometry::fully_associative(l * 64, 64), Policy::Lru)));
    caches.extend(SET_BYTES.map(|b| (Geometry::new(b, 8, 64), Policy::Lru)));
    for (g, policy) in caches {
        let mut c = Cache::new(g.expect("a geometry"), policy).expect("a cache");
        let (mut warm, mut all) = (0, 0);
        for (t, &id) in ids[..stop].iter().enumerate() {
            let miss = !c.access(lines[id as usize]);
            all += u64::from(miss);
            warm += u64::from(miss && t < measure);
        }
        out.push(all - warm);
    }
    out
}

/// The index of the LRU control of curve `i` in [`misses`]' counts.
fn control(i: usize) -> usize {
    let (opt, set) = (OPT_LINES.len(), SET_BYTES.len());
    let policies = policies().len() * set;
    if i < opt {
        opt + policies + i
    } else {
        opt + policies + opt + (i - opt) % set
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: time_sampling TRACE [PERIOD WINDOW WARM]")?;
    let mut num = |default: usize| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(args.next().map_or(Ok(default), |a| a.parse())?)
    };
    let (period, window, warm) = (num(10_000_000)?, num(1_000_000)?, num(100_000)?);
    let mut trace = open(path.as_ref(), &OpenOptions::default())?;
    let (mut ids, mut lines, mut id_of) = (Vec::new(), Vec::new(), HashMap::new());
    let mut batch = Batch::new();
    while trace.read_batch(&mut batch)? > 0 {
        for a in batch.iter().filter(|a| a.kind != AccessKind::Instr) {
            let line = a.addr >> 6;
            let id = *id_of.entry(line).or_insert_with(|| {
                lines.push(line);
                lines.len() as u32 - 1
            });
            ids.push(id);
        }
    }
    let n = ids.len();
    let t = Instant::now();
    let exact = misses(&ids, &lines, 0, n);
    let exact_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (mut sampled, mut measured) = (vec![0u64; exact.len()], 0u64);
    let mut windows: Vec<Vec<u64>> = Vec::new();
    // Each window at a random place in its period (stratified sampling): at a fixed place it
    // can fall in step with a program's own period (gzip's blocks).
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut period_start = 0;
    while period_start + period <= n {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let slack = period.saturating_sub(warm + window) as u64;
        let start = period_start + (rng % (slack + 1)) as usize;
        period_start += period;
        let end = start + warm + window;
        let horizon = (end + AHEAD).min(n);
        let w = misses(&ids[start..horizon], &lines, warm, end - start);
        sampled.iter_mut().zip(&w).for_each(|(s, x)| *s += x);
        windows.push(w);
        measured += window as u64;
    }
    let sampled_secs = t.elapsed().as_secs_f64();
    println!(
        "{path}: {n} data references, {} lines; windows of {window} every {period} after \
         {warm} of warm-up ({:.1} % of the references measured)",
        lines.len(),
        100.0 * measured as f64 / n.max(1) as f64
    );
    let mut names: Vec<String> = OPT_LINES.iter().map(|l| format!("opt {l} lines")).collect();
    for p in policies() {
        for b in SET_BYTES {
            names.push(format!("{} {} KiB", p.name(), b >> 10));
        }
    }
    // Each estimate also corrected by its LRU control, whose exact ratio is known (the
    // report has it from the pass): the regression estimator, sampled + β (LRU − sampled
    // LRU), β fitted over the windows (every window has as many measured references).
    let ratio = |m: &[u64], i: usize, refs: u64| 100.0 * m[i] as f64 / refs.max(1) as f64;
    let per_window =
        |i: usize| -> Vec<f64> { windows.iter().map(|w| ratio(w, i, window as u64)).collect() };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (mut worst, mut worst_controlled): (f64, f64) = (0.0, 0.0);
    // The largest fraction of the trace in windows (warm-ups included) any curve needs for a
    // standard error of `TARGET_SE` after the control, from its windows' spread.
    let mut needed: f64 = 0.0;
    for (i, name) in names.iter().enumerate() {
        let (e, s) = (ratio(&exact, i, n as u64), ratio(&sampled, i, measured));
        let (x, y) = (per_window(control(i)), per_window(i));
        let (mx, my) = (mean(&x), mean(&y));
        let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
        let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
        let beta = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let c = s + beta * (ratio(&exact, control(i), n as u64) - mx);
        worst = worst.max((e - s).abs());
        worst_controlled = worst_controlled.max((e - c).abs());
        let residual: f64 = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (b - my - beta * (a - mx)).powi(2))
            .sum();
        let sd = (residual / (x.len().max(3) - 2) as f64).sqrt();
        let se = sd / (x.len().max(1) as f64).sqrt();
        let windows_needed = (sd / TARGET_SE).powi(2);
        needed = needed.max(windows_needed * (warm + window) as f64 / n.max(1) as f64);
        println!(
            "{name:>18}  exact {e:7.3} %  sampled {s:7.3} % ({:+.3} pp)  with LRU's control \
             {c:7.3} % ({:+.3} pp, beta {beta:.2}, standard error {se:.3} pp)",
            s - e,
            c - e
        );
    }
    println!(
        "largest error {worst:.3} pp, {worst_controlled:.3} pp with the control; {} windows; \
         every reference {exact_secs:.1} s, windows {sampled_secs:.1} s; a standard error of \
         {TARGET_SE} pp for every curve needs {:.0} % of the trace in such windows",
        windows.len(),
        100.0 * needed.min(1.0)
    );
    Ok(())
}
