//! Prototype (docs/accuracy/sampled.md, "What remains"): for each reuse sample of the sampled
//! report's profile, the distinct SHARDS-sampled lines referenced inside its window (`D`),
//! beside StatStack's expected stack distance and the exact one, dumped as JSON for
//! calibration experiments; with the exact, SHARDS and StatStack curves at every eighth of an
//! octave from 1 KiB to 1 GiB. The stream is read as `report --sampled --rate RATE --seed SEED`
//! reads it (the same filter and floored reuse sampler), 64-byte lines; `D` is answered after
//! the pass by a sweep over the sampled references in position order (a Fenwick tree over
//! them, O(log) per reuse sample). The exact distances keep every data reference's line, 12
//! bytes a reference (3.8 GB on xz's 316 M). `scripts/shards-windows.py` reads the output.
//!
//! ```sh
//! cargo run --release -p cachescope --example shards_windows -- TRACE RATE SEED > OUT.json
//! ```

use std::sync::{Arc, Mutex};

use cachescope::analysis::Analysis;
use cachescope::models::statstack::{self, Cold, Segmentation};
use cachescope::report::CollectOptions;
use cachescope::report::sampled::reuse_options;
use cachescope::reuse::{Options, ShardsAnalysis, sizes_log_range};
use cachescope::spatial::SpatialOptions;
use cachescope::trace::{OpenOptions, open};
use cachescope::{AccessKind, Batch};

/// The lines' shift: 64-byte lines, the report's default.
const SHIFT: u32 = 6;

/// A Fenwick tree of counts over `1..=n`.
struct Fenwick(Vec<i32>);

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick(vec![0; n + 1])
    }
    fn add(&mut self, mut i: usize, d: i32) {
        while i < self.0.len() {
            self.0[i] += d;
            i += i & i.wrapping_neg();
        }
    }
    /// Sum of `1..=i`.
    fn sum(&self, mut i: usize) -> i64 {
        let mut s = 0i64;
        while i > 0 {
            s += self.0[i] as i64;
            i &= i - 1;
        }
        s
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: shards_windows TRACE RATE SEED")?;
    let rate: f64 = args.get(2).map_or(Ok(0.01), |s| s.parse())?;
    let seed: u64 = args.get(3).map_or(Ok(1), |s| s.parse())?;
    let mut trace = open(path.as_ref(), &OpenOptions::default())?;
    let collect = CollectOptions {
        seed,
        ..CollectOptions::default()
    };
    let spatial = SpatialOptions {
        rate,
        seed,
        ..SpatialOptions::default()
    };
    trace.sampled(spatial, Some(reuse_options(&collect)))?;
    let full: Arc<Mutex<Vec<u64>>> = Arc::default();
    let f2 = full.clone();
    trace.sampled_beside(Box::new(move |b: &mut Batch| {
        let mut v = f2.lock().expect("lock");
        if let Some(a) = b.data_addrs() {
            v.extend(a.iter().map(|&x| x >> SHIFT));
        } else {
            v.extend(
                b.iter()
                    .filter(|a| a.kind != AccessKind::Instr)
                    .map(|a| a.addr >> SHIFT),
            );
        }
    }))?;
    let mut shards = ShardsAnalysis::new(Options::default());
    let mut sampled: Vec<(u64, u64)> = Vec::new();
    let mut batch = Batch::new();
    let mut limit_rate = 1.0f64;
    while trace.read_batch(&mut batch)? > 0 {
        shards.observe(&batch);
        let s = batch.sampling().expect("a sampled batch");
        limit_rate = limit_rate.min(s.rate());
        for (i, &a) in batch.addrs.iter().enumerate() {
            sampled.push((s.data_before[i] + 1, a >> SHIFT));
        }
    }
    let profile = trace.reuse_profile().ok_or("no reuse profile")?;
    let full = std::mem::take(&mut *full.lock().expect("lock"));
    let n = full.len();
    eprintln!(
        "{n} data refs, {} sampled refs, {} reuse samples, rate {limit_rate}",
        sampled.len(),
        profile.samples().len()
    );
    let samples = profile.samples();
    // Reuse samples' windows (t1, t2), sorted by t2.
    let mut q: Vec<(u64, u64, usize)> = samples
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.distance().map(|d| (s.position, s.position + d + 1, i)))
        .collect();
    q.sort_unstable_by_key(|&(_, t2, _)| t2);
    // Exact stack distances of every reference; the samples' at their t2.
    let mut exact_sd = vec![f64::NAN; samples.len()];
    let mut hist: Vec<u64> = Vec::new();
    let mut cold = 0u64;
    {
        let mut fw = Fenwick::new(n);
        let mut last: hashbrown::HashMap<u64, usize> = hashbrown::HashMap::new();
        let mut qi = 0;
        for (p0, &line) in full.iter().enumerate() {
            let p = p0 + 1;
            match last.insert(line, p) {
                Some(prev) => {
                    let sd = (fw.sum(p - 1) - fw.sum(prev)) as usize;
                    if hist.len() <= sd {
                        hist.resize(sd + 1, 0);
                    }
                    hist[sd] += 1;
                    fw.add(prev, -1);
                    while qi < q.len() && q[qi].1 < p as u64 {
                        qi += 1;
                    }
                    while qi < q.len() && q[qi].1 == p as u64 {
                        exact_sd[q[qi].2] = sd as f64;
                        qi += 1;
                    }
                }
                None => cold += 1,
            }
            fw.add(p, 1);
        }
    }
    // D: distinct sampled lines referenced in (t1, t2).
    let mut dd = vec![f64::NAN; samples.len()];
    let mut rs = vec![-1.0f64; samples.len()];
    {
        let m = sampled.len();
        let mut fw = Fenwick::new(m);
        let mut last: hashbrown::HashMap<u64, usize> = hashbrown::HashMap::new();
        let mut k = 0; // sampled refs processed
        for &(t1, t2, i) in &q {
            while k < m && sampled[k].0 < t2 {
                let idx = k + 1;
                if let Some(prev) = last.insert(sampled[k].1, idx) {
                    fw.add(prev, -1);
                }
                fw.add(idx, 1);
                k += 1;
            }
            let k1 = sampled[..k].partition_point(|&(p, _)| p <= t1);
            dd[i] = (fw.sum(k) - fw.sum(k1)) as f64;
            rs[i] = (k - k1) as f64;
        }
    }
    let stretches = statstack::segments(&profile, &Segmentation::default());
    let ss = statstack::local_stack_distances(&profile, &stretches)?;
    let sizes = sizes_log_range(1 << 10, 1 << 30, 8)?;
    let ss_curve = statstack::mrc(&profile, &sizes, Cold::Estimate)?;
    let sh = shards.finish().mrc(&sizes);
    // Exact curve: (#sd >= C + cold) / n.
    let mut suffix = vec![0u64; hist.len() + 1];
    for i in (0..hist.len()).rev() {
        suffix[i] = suffix[i + 1] + hist[i];
    }
    let exact: Vec<f64> = sizes
        .iter()
        .map(|&b| {
            let c = (b >> SHIFT) as usize;
            (suffix[c.min(hist.len())] + cold) as f64 / n as f64
        })
        .collect();
    let out = serde_json::json!({
        "n": n,
        "rate": limit_rate,
        "sampled_refs": sampled.len(),
        "samples": samples.len(),
        "sizes": sizes,
        "exact": exact,
        "statstack": ss_curve.points.iter().map(|p| p.miss_ratio).collect::<Vec<_>>(),
        "shards": sh.points.iter().map(|p| p.miss_ratio).collect::<Vec<_>>(),
        "position": samples.iter().map(|s| s.position).collect::<Vec<_>>(),
        "distance": samples.iter().map(|s| s.distance().map_or(-1.0, |d| d as f64)).collect::<Vec<_>>(),
        "d": dd.iter().map(|x| if x.is_nan() { -1.0 } else { *x }).collect::<Vec<_>>(),
        "ss": ss.iter().map(|x| x.unwrap_or(-1.0)).collect::<Vec<_>>(),
        "rs": rs,
        // Whether the sample's own line is a SHARDS-sampled one (its reference is in the
        // sampled stream): over many reuse samples, the realized share of sampled lines.
        "hashed": samples
            .iter()
            .map(|s| sampled.binary_search_by_key(&s.position, |&(p, _)| p).is_ok())
            .collect::<Vec<_>>(),
        "exact_sd": exact_sd.iter().map(|x| if x.is_nan() { -1.0 } else { *x }).collect::<Vec<_>>(),
    });
    println!("{out}");
    Ok(())
}
