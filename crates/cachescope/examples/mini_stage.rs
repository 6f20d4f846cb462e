//! Times the report's FIFO + SRRIP + DRRIP miniatures alone on a trace's data references
//! (decoded beforehand), one policy at a time and the three shared, in CPU seconds of the
//! thread (the least of three runs, as the machine may be shared); prints a checksum of the
//! curves so that two builds can be compared.
//!
//! ```sh
//! cargo run --release -p cachescope --example mini_stage -- TRACE
//! ```

use cachescope::analysis::Analysis;
use cachescope::mini::MiniSim;
use cachescope::reuse::Options;
use cachescope::sim::Policy;
use cachescope::trace::{OpenOptions, open};
use cachescope::{AccessKind, Batch};

/// CPU seconds the calling thread has run (the scheduler's count, in nanoseconds).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns: u64 = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    ns as f64 * 1e-9
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: mini_stage TRACE")?;
    let mut trace = open(path.as_ref(), &OpenOptions::default())?;
    let (mut batches, mut batch) = (Vec::new(), Batch::new());
    while trace.read_batch(&mut batch)? > 0 {
        batches.push(
            batch
                .iter()
                .filter(|a| a.kind != AccessKind::Instr)
                .collect::<Batch>(),
        );
    }
    // The report's: 8 ways, every second octave from 4 KiB to 1 GiB, at least 256 sets.
    let sizes: Vec<u64> = (0..10).map(|k| 4096u64 << (2 * k)).collect();
    let all = [Policy::Fifo, Policy::Srrip, Policy::Drrip { seed: 1 }];
    let run = |policies: &[Policy]| -> Result<(f64, u64), Box<dyn std::error::Error>> {
        let mut secs = f64::INFINITY;
        let mut m =
            MiniSim::with_policies(Options::default(), policies, Some(8), &sizes, 1e-3, 256)?;
        for _ in 0..3 {
            m = MiniSim::with_policies(Options::default(), policies, Some(8), &sizes, 1e-3, 256)?;
            let t = cpu_seconds();
            for b in &batches {
                m.observe(b);
            }
            secs = secs.min(cpu_seconds() - t);
        }
        let sum = m
            .finish_all()
            .iter()
            .flat_map(|c| c.points.iter())
            .fold(0u64, |s, p| {
                s.rotate_left(5) ^ p.miss_ratio.unwrap_or(0.0).to_bits()
            });
        Ok((secs, sum))
    };
    for p in all {
        let (s, sum) = run(&[p])?;
        println!("{:<6} {s:.3} s  {sum:016x}", p.name());
    }
    let (s, sum) = run(&all)?;
    println!("shared {s:.3} s  {sum:016x}");
    Ok(())
}
