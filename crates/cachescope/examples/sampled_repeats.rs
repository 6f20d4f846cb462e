//! How much of a sampled stream is runs of one line: of the data references `--sampled` keeps
//! (the line filter at its defaults, seed 1), the share that touch the line of the kept
//! reference just before, and the lines with the most references. A live sampled report's
//! work follows its kept references, and a run of one line (a hot stack line the hash happens
//! to keep) costs each analysis a full step per reference (docs/recording.md, "Why sqlite3
//! moves between runs").
//!
//! ```text
//! cargo run --release -p cachescope --example sampled_repeats -- TRACE [SEED]
//! ```

use std::collections::HashMap;
use std::path::Path;

use cachescope::batch::Batch;
use cachescope::spatial::SpatialOptions;
use cachescope::trace::{OpenOptions, open};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: sampled_repeats TRACE [SEED]")?;
    let seed = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let options = SpatialOptions {
        seed,
        ..SpatialOptions::default()
    };
    let shift = options.line_size.bytes().trailing_zeros();
    let mut trace = open(Path::new(&path), &OpenOptions::default())?;
    trace.sampled(options, None)?;
    let mut batch = Batch::new();
    let (mut refs, mut repeats, mut last) = (0u64, 0u64, None);
    let mut per_line: HashMap<u64, u64> = HashMap::new();
    while trace.read_batch(&mut batch)? > 0 {
        for a in batch.iter().filter(|a| a.kind.is_data()) {
            let line = a.addr >> shift;
            refs += 1;
            repeats += u64::from(last == Some(line));
            last = Some(line);
            *per_line.entry(line).or_default() += 1;
        }
    }
    let mut lines: Vec<(u64, u64)> = per_line.into_iter().collect();
    lines.sort_by_key(|&(line, n)| (std::cmp::Reverse(n), line));
    let pct = |n: u64| 100.0 * n as f64 / refs.max(1) as f64;
    println!(
        "{path}: {refs} sampled data references to {} lines (seed {seed})",
        lines.len()
    );
    println!(
        "repeating the line before: {repeats} ({:.1} %)",
        pct(repeats)
    );
    for (line, n) in lines.iter().take(5) {
        println!(
            "  line {:#x}: {n} references ({:.1} %)",
            line << shift,
            pct(*n)
        );
    }
    Ok(())
}
