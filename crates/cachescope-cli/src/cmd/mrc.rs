//! `cachescope mrc`: a miss-ratio curve for many cache sizes from one pass over the trace.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::reuse::{Mrc, Options, RandomReplacementAnalysis, StackDistanceAnalysis};

use super::drive;
use crate::args::{MrcArgs, MrcMethod, OutputFormat, ReplacementPolicy};
use crate::{input, output};

pub fn run(args: MrcArgs) -> Result<()> {
    let sizes = args.sizes.resolve()?;
    let options = Options {
        line_size: args.run.line_size,
        include_instructions: args.include_instructions,
        ..Options::default()
    };
    let mut trace = input::open(&args.input, args.run.line_size)?;
    let mrc = match (args.method, args.policy) {
        (MrcMethod::Exact, ReplacementPolicy::Lru) => {
            let mut sd = StackDistanceAnalysis::new(options);
            drive(&mut trace, &mut [&mut sd], &args.run)?;
            sd.finish().mrc(&sizes)
        }
        (MrcMethod::Exact, ReplacementPolicy::Random) => {
            if sizes.len() > 4096 {
                bail!(
                    "exact random replacement simulates one cache per size; {} sizes is too many \
                     (at most 4096)",
                    sizes.len()
                );
            }
            let mut rr = RandomReplacementAnalysis::new(options, &sizes, args.input.params.seed);
            drive(&mut trace, &mut [&mut rr], &args.run)?;
            rr.finish()
        }
    };
    output::print(&render(
        &mrc,
        args.output_format(),
        args.include_instructions,
    ))
}

/// The curve as a table, CSV or JSON.
pub fn render(mrc: &Mrc, format: OutputFormat, unified: bool) -> String {
    match format {
        OutputFormat::Json => serde_json::to_string_pretty(mrc).expect("serializable") + "\n",
        OutputFormat::Csv => {
            let mut o = String::from("size_bytes,lines,miss_ratio,miss_ratio_warm\n");
            for p in &mrc.points {
                let _ = writeln!(
                    o,
                    "{},{},{},{}",
                    p.size_bytes,
                    p.lines,
                    p.miss_ratio.map(|r| r.to_string()).unwrap_or_default(),
                    p.miss_ratio_warm
                );
            }
            o
        }
        OutputFormat::Table => {
            let refs = if unified {
                "data and instruction"
            } else {
                "data"
            };
            let mut o = format!(
                "# {} {} miss-ratio curve, {}-B lines, per {refs} reference\n\
                 # miss_ratio counts cold (first-reference) misses; miss_ratio_warm leaves them out\n",
                mrc.method,
                mrc.policy.to_uppercase(),
                mrc.line_size
            );
            let _ = writeln!(
                o,
                "{:>12} {:>12} {:>12} {:>16}",
                "size", "lines", "miss_ratio", "miss_ratio_warm"
            );
            for p in &mrc.points {
                let _ = writeln!(
                    o,
                    "{:>12} {:>12} {:>12} {:>16.6}",
                    human_size(p.size_bytes),
                    p.lines,
                    p.miss_ratio.map_or("-".into(), |r| format!("{r:.6}")),
                    p.miss_ratio_warm
                );
            }
            o
        }
    }
}

/// `32768` → `32K`, `1536` → `1.5K`, `100` → `100B`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let v = bytes as f64 / unit as f64;
            return if bytes % unit == 0 {
                format!("{}{name}", bytes / unit)
            } else {
                format!("{v:.2}{name}").replace(".00", "")
            };
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::human_size;

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(32768), "32K");
        assert_eq!(human_size(1536), "1.50K");
        assert_eq!(human_size(100), "100B");
        assert_eq!(human_size(64 << 20), "64M");
    }
}
