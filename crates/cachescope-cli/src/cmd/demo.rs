//! `cachescope demo`: what the tool says about each built-in workload, no trace needed. One pass
//! over each workload feeds both the statistics and the exact LRU miss-ratio curve.

use anyhow::Result;
use cachescope::Source;
use cachescope::reuse::{Mrc, Options, StackDistanceAnalysis};
use cachescope::stats::{StatsAnalysis, StatsReport};
use cachescope::trace::Trace;
use cachescope::workloads::{self, Workload};

use super::mrc::human_size;
use super::{drive, thousands};
use crate::args::{DemoArgs, WorkloadParams};
use crate::output;

/// Cache sizes shown: L1-, L2- and LLC-like.
const SIZES: [u64; 5] = [4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20];

#[derive(serde::Serialize)]
struct DemoRow {
    workload: &'static str,
    stats: StatsReport,
    mrc: Mrc,
}

pub fn run(args: DemoArgs) -> Result<()> {
    let params = WorkloadParams::default().to_params(args.run.line_size);
    let mut rows = Vec::new();
    for w in Workload::ALL {
        let generator = workloads::generator(w, &params)?;
        let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
        let mut stats = StatsAnalysis::new(args.run.line_size);
        let mut sd = StackDistanceAnalysis::new(Options {
            line_size: args.run.line_size,
            ..Options::default()
        });
        drive(&mut trace, &mut [&mut stats, &mut sd], &args.run)?;
        rows.push(DemoRow {
            workload: w.name(),
            stats: StatsReport::new(&trace, stats.finish()),
            mrc: sd.finish().mrc(&SIZES),
        });
    }
    if args.json {
        return output::print(&(serde_json::to_string_pretty(&rows)? + "\n"));
    }
    let mut text = format!(
        "Built-in workloads: data references, distinct {}-B lines, and the exact LRU miss ratio\n\
         (cold misses included) of a fully associative cache of each size.\n\n{:<13} {:>10} {:>8}",
        args.run.line_size.bytes(),
        "workload",
        "refs",
        "lines"
    );
    for s in SIZES {
        text += &format!(" {:>8}", human_size(s));
    }
    text.push('\n');
    for r in &rows {
        text += &format!(
            "{:<13} {:>10} {:>8}",
            r.workload,
            thousands(r.stats.stats.refs),
            thousands(r.stats.stats.distinct_lines)
        );
        for p in &r.mrc.points {
            text += &format!(" {:>8.4}", p.miss_ratio.unwrap_or(f64::NAN));
        }
        text.push('\n');
    }
    text += "\nNext: cachescope generate --list | cachescope mrc --workload stencil \
             | valgrind --tool=lackey --trace-mem=yes --log-file=t.txt PROGRAM; cachescope mrc t.txt\n";
    output::print(&text)
}
