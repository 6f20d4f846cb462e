//! `cachescope demo`: what the tool says about each built-in workload, no trace needed.

use anyhow::Result;
use cachescope::Source;
use cachescope::stats::{StatsAnalysis, StatsReport};
use cachescope::trace::Trace;
use cachescope::workloads::{self, Workload};

use super::{drive, thousands};
use crate::args::{DemoArgs, WorkloadParams};
use crate::output;

pub fn run(args: DemoArgs) -> Result<()> {
    let defaults = WorkloadParams {
        seed: 1,
        refs: None,
        lines: None,
        stride: None,
        n: None,
        tile: None,
        zipf_s: None,
        instructions: false,
    };
    let mut reports = Vec::new();
    for w in Workload::ALL {
        let params = defaults.to_params(args.run.line_size);
        let generator = workloads::generator(w, &params)?;
        let mut trace = Trace::from_reader(Box::new(generator), Source::Workload(w.name().into()));
        let mut stats = StatsAnalysis::new(args.run.line_size);
        drive(&mut trace, &mut [&mut stats], &args.run)?;
        reports.push((w, StatsReport::new(&trace, stats.finish())));
    }
    if args.json {
        let list: Vec<_> = reports.iter().map(|(_, r)| r).collect();
        return output::print(&(serde_json::to_string_pretty(&list)? + "\n"));
    }
    let mut text = format!(
        "{:<13} {:>12} {:>10} {:>10} {:>10} {:>14}\n",
        "workload", "data refs", "loads", "stores", "lines", "bytes touched"
    );
    for (w, r) in &reports {
        let s = &r.stats;
        text += &format!(
            "{:<13} {:>12} {:>10} {:>10} {:>10} {:>14}\n",
            w.name(),
            thousands(s.refs),
            thousands(s.loads),
            thousands(s.stores + s.modifies),
            thousands(s.distinct_lines),
            thousands(s.bytes_touched)
        );
    }
    text += "\nTry: cachescope generate --list; cachescope stats --workload stencil; \
             cachescope stats YOUR_TRACE\n";
    output::print(&text)
}
