//! Bench inputs: a built-in workload generated once into memory, and feeding it to an analysis.
#![allow(dead_code)]

use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::trace::AccessReader;
use cachescope::workloads::{Params, Workload, generator};

/// The whole trace of `w` under `p`, in batches.
pub fn batches(w: Workload, p: &Params) -> Vec<Batch> {
    let mut g = generator(w, p).expect("valid parameters");
    let mut out = Vec::new();
    loop {
        let mut b = Batch::new();
        if g.read_batch(&mut b).expect("generators do not fail") == 0 {
            return out;
        }
        out.push(b);
    }
}

/// Feeds every batch to `a`.
pub fn feed(a: &mut impl Analysis, batches: &[Batch]) {
    for b in batches {
        a.observe(b);
    }
}
