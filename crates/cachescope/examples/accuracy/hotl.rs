//! HOTL against exact LRU (and the reuse-window divergence that explains its errors).

use std::fmt::Write as _;

use cachescope::models::hotl::{
    self, FootprintAnalysis, LocalFootprintAnalysis, ReuseWindowAnalysis,
};
use cachescope::reuse::{Mrc, MrcPoint};
use cachescope::reuse::{Options, ReuseTimeAnalysis, StackDistanceAnalysis};

use crate::common::{self, Input, error_pp, human};

/// Mean and worst absolute error in percentage points, and the size of the worst.
fn errors(model: &Mrc, exact: &Mrc) -> (f64, f64, u64) {
    let (mean, max) = error_pp(model, exact);
    let d = |p: &(&MrcPoint, &MrcPoint)| (p.0.miss_ratio_warm - p.1.miss_ratio_warm).abs();
    let at = model
        .points
        .iter()
        .zip(&exact.points)
        .max_by(|a, b| d(a).total_cmp(&d(b)))
        .map_or(0, |(p, _)| p.size_bytes);
    (mean, max, at)
}

/// One trace's row, for the summary.
struct Measured {
    kind: &'static str,
    paper: (f64, f64),
    local: (f64, f64),
    rt_mean: f64,
    /// CPU seconds: footprint pass, time-local pass, exact stack-distance pass.
    cpu: [f64; 3],
}

pub fn table(inputs: &[Input]) -> String {
    let mut o = String::from(
        "# HOTL accuracy\n\n\
         `mrc --method hotl` against the exact LRU curve, warm miss ratio per data reference, \
         absolute error in percentage points over every eighth of an octave from 1 KiB up to \
         the trace's footprint (64-byte lines, fully associative). *Paper*: the whole trace's \
         footprint converted (§2.3–2.6, `--hotl-variant paper`); *local*: the time-local \
         reading (`models::hotl::local`, the default of `mrc --method hotl`): each reuse's \
         window footprint from the stretch of the trace it ends in, and for reuses shorter \
         than 16 Ki references, where a stretch is too coarse, windows counted exactly on a \
         sample (one reuse of time rt in rt/2, its distinct lines counted) and applied to the \
         later reuses of the same class. `hotl-rt` is the paper's reuse-time conversion (§2.7). \
         The rfp column is the reuse-window check: Σ reuses·|rfp − fp| / Σ reuses·fp, how far \
         the footprint of reuse windows is from that of all windows (0 = the hypothesis the \
         paper's conversion rests on holds). CPU seconds (user + system, both threads of the \
         pass, decoding included) of one footprint pass, one time-local pass and one exact \
         stack-distance pass.\n\n\
         Kinds: *real*, the programs the time-local reading was developed and tuned on; \
         *held out*, programs recorded for this table and never used to tune it \
         (`scripts/heldout-traces.sh`); *synthetic*, generated workloads.\n\n\
         | trace | kind | data refs | lines | paper mean | paper max (at) | local mean | local max (at) | hotl-rt mean | rfp divergence | CPU: footprint | CPU: local | CPU: stack distances | local / footprint |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut rows: Vec<Measured> = Vec::new();
    for input in inputs {
        eprintln!("accuracy hotl: {}", input.name);
        let opts = Options::default();
        let t = common::cpu_seconds();
        let mut sd = StackDistanceAnalysis::new(opts);
        common::run(input, &mut [&mut sd]);
        let sd_cpu = common::cpu_seconds() - t;
        let distances = sd.finish();
        let sweep = common::sweep(distances.cold, opts.line_size);
        let exact = distances.mrc(&sweep);
        let t = common::cpu_seconds();
        let mut fp = FootprintAnalysis::new(opts, &[]).expect("valid");
        common::run(input, &mut [&mut fp]);
        let fp_cpu = common::cpu_seconds() - t;
        let footprint = fp.finish();
        let paper = errors(&hotl::mrc(&footprint, &sweep), &exact);
        let t = common::cpu_seconds();
        let mut local = LocalFootprintAnalysis::new(opts);
        common::run(input, &mut [&mut local]);
        let local_cpu = common::cpu_seconds() - t;
        let local = errors(&local.finish().mrc(&sweep), &exact);
        let mut rt = ReuseTimeAnalysis::new(opts);
        let rate = (1e6 / distances.refs as f64).min(1.0);
        let mut rw = ReuseWindowAnalysis::new(opts, rate).expect("valid rate");
        common::run(input, &mut [&mut rt, &mut rw]);
        let rt_model = hotl::reuse_time_mrc(&rt.finish(), &sweep);
        let check = rw.finish().check(&footprint);
        let rt_mean = error_pp(&rt_model, &exact).0;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {:.2} | {:.2} ({} KiB) | {:.2} | {:.2} ({} KiB) | {:.2} | {:.3} | {:.2} s | {:.2} s | {:.2} s | {:.1}x |",
            input.name,
            input.kind,
            human(distances.refs as f64),
            human(distances.cold as f64),
            paper.0,
            paper.1,
            paper.2 >> 10,
            local.0,
            local.1,
            local.2 >> 10,
            rt_mean,
            check.weighted_relative_divergence,
            fp_cpu,
            local_cpu,
            sd_cpu,
            local_cpu / fp_cpu.max(0.01),
        );
        rows.push(Measured {
            kind: input.kind,
            paper: (paper.0, paper.1),
            local: (local.0, local.1),
            rt_mean,
            cpu: [fp_cpu, local_cpu, sd_cpu],
        });
    }
    o.push('\n');
    for kind in ["real", "held out", "synthetic"] {
        let group: Vec<&Measured> = rows.iter().filter(|r| r.kind == kind).collect();
        if group.is_empty() {
            continue;
        }
        let n = group.len() as f64;
        let mean = |f: fn(&Measured) -> f64| group.iter().map(|r| f(r)).sum::<f64>() / n;
        let worst = |f: fn(&Measured) -> f64| group.iter().map(|r| f(r)).fold(0.0, f64::max);
        let ratio = |i: usize| {
            let v: Vec<f64> = group
                .iter()
                .filter(|r| r.cpu[0] >= 0.1)
                .map(|r| r.cpu[1] / r.cpu[i])
                .collect();
            match (
                v.iter().copied().reduce(f64::min),
                v.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) => format!("{lo:.1}-{hi:.1}x"),
                _ => "not measured (passes under 0.1 s)".into(),
            }
        };
        let _ = writeln!(
            o,
            "- **{kind}** ({} traces): local mean {:.2} pp, worst point {:.2} pp; paper mean {:.2} pp, \
             worst {:.2} pp; hotl-rt mean {:.2} pp. The time-local pass takes {} the footprint \
             pass's CPU time and {} the exact stack-distance pass's.",
            group.len(),
            mean(|r| r.local.0),
            worst(|r| r.local.1),
            mean(|r| r.paper.0),
            worst(|r| r.paper.1),
            mean(|r| r.rt_mean),
            ratio(0),
            ratio(2),
        );
    }
    o
}
