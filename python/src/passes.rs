//! The passes behind the Python functions. Each returns the JSON document the command line
//! prints for the same request (`cachescope stats --json`, `mrc --json`, …), so the two agree
//! byte for byte; the Python side turns it into numpy arrays.

use cachescope::analysis::Analysis;
use cachescope::method::{self, MrcOptions};
use cachescope::models::hotl::FootprintAnalysis;
use cachescope::parallel::{Both, Chunked, FootprintPlan, PerThreadPlan, StatsPlan};
use cachescope::pass::{Analyses, Pass, Plan, Sampling};
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::sampling::{Profile, Sampler, SamplerOptions};
use cachescope::stats::{StatsAnalysis, StatsReport};
use cachescope::{LineSize, Result};
use serde_json::{Value, json};

use crate::source::Spec;

/// Called now and then with the references read so far.
pub type Progress<'a> = Box<dyn FnMut(u64) + 'a>;

/// `cachescope stats --json`.
pub fn stats(
    spec: &Spec,
    line_size: LineSize,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let mut trace = spec.open(line_size)?;
    let plan = StatsPlan { line_size };
    let (stats, per_thread) = Pass::new(threads)
        .with_progress(progress)
        .run(&mut trace, Plan(&Both(plan, PerThreadPlan(plan))))?;
    Ok(pretty(&StatsReport::new(&trace, stats, &per_thread)))
}

/// `cachescope mrc --json`: the curve of any method.
pub fn mrc(spec: &Spec, opts: &MrcOptions, progress: Progress) -> Result<String> {
    let mut trace = spec.open(opts.options.line_size)?;
    let mut pass = Pass::new(opts.threads).with_progress(progress);
    let run = method::mrc(&mut trace, opts, &mut pass)?;
    Ok(pretty(&run.mrc))
}

/// `cachescope mrc --per-thread --json`: a curve per thread from one pass.
pub fn mrc_per_thread(spec: &Spec, opts: &MrcOptions, progress: Progress) -> Result<String> {
    let mut trace = spec.open(opts.options.line_size)?;
    let mut pass = Pass::new(opts.threads).with_progress(progress);
    let runs = method::mrc_per_thread(&mut trace, opts, &mut pass)?;
    Ok(pretty(&method::ThreadCurves::new(&runs, opts)?))
}

/// `cachescope sample`: the profile of sampling the source.
pub fn sample(
    spec: &Spec,
    options: SamplerOptions,
    threads: usize,
    progress: Progress,
) -> Result<Profile> {
    let mut trace = spec.open(options.line_size)?;
    let profile = Pass::new(threads)
        .with_progress(progress)
        .run(&mut trace, Sampling(options))?;
    Ok(profile.with_source(trace.source().to_string()))
}

/// `cachescope footprint --json` (listed windows, or the logarithmic grid).
pub fn footprint(
    spec: &Spec,
    options: Options,
    windows: Option<&[u64]>,
    per_octave: u64,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let mut trace = spec.open(options.line_size)?;
    let plan = FootprintPlan::new(options, windows.unwrap_or_default())?;
    let fp = Pass::new(threads)
        .with_progress(progress)
        .run(&mut trace, Plan(&plan))?;
    if let Some(&w) = windows.unwrap_or_default().iter().find(|&&w| w > fp.refs) {
        return Err(cachescope::Error::InvalidParameter {
            name: "windows",
            message: format!(
                "{w} is longer than the trace ({} counted references)",
                fp.refs
            ),
        });
    }
    let points = match windows {
        Some(_) => fp.listed(),
        None => fp.points(per_octave)?,
    };
    Ok(pretty(&json!({
        "line_size": fp.line_size,
        "refs": fp.refs,
        "distinct_lines": fp.distinct_lines,
        "points": points,
    })))
}

/// Several analyses from one reading of the source: each name's JSON, in order. Names:
/// `stats`, `mrc` (exact LRU at `opts.sizes`, from the stack distances through the method
/// layer), `footprint` (its logarithmic grid) and `sample` (the profile's summary; the profile
/// itself is returned too).
/// With `sampled`, the source is read as a sampled stream ([`crate::sampled::analyse`]).
pub fn analyse(
    spec: &Spec,
    names: &[String],
    opts: &MrcOptions,
    sampled: Option<cachescope::spatial::SpatialOptions>,
    progress: Progress,
) -> Result<(Vec<String>, Option<Profile>)> {
    if let Some(spatial) = sampled {
        return crate::sampled::analyse(spec, names, opts, spatial, progress);
    }
    let options = opts.options;
    let mut trace = spec.open(options.line_size)?;
    let mut stats = StatsAnalysis::new(options.line_size);
    let per_thread = PerThreadPlan(StatsPlan {
        line_size: options.line_size,
    });
    let mut thread_stats = per_thread.worker(0);
    let mut sd = StackDistanceAnalysis::new(options);
    let mut fp = FootprintAnalysis::new(options, &[])?;
    let mut sampler = Sampler::new(opts.sampler())?;
    let mut chosen: Vec<&mut dyn Analysis> = Vec::new();
    let has = |n: &str| names.iter().any(|x| x == n);
    if let Some(bad) = names
        .iter()
        .find(|n| !["stats", "mrc", "footprint", "sample"].contains(&n.as_str()))
    {
        return Err(cachescope::Error::InvalidParameter {
            name: "analyses",
            message: format!("unknown analysis {bad:?}: one of stats, mrc, footprint, sample"),
        });
    }
    if has("stats") {
        chosen.push(&mut stats);
        chosen.push(&mut thread_stats);
    }
    if has("mrc") {
        chosen.push(&mut sd);
    }
    if has("footprint") {
        chosen.push(&mut fp);
    }
    if has("sample") {
        chosen.push(&mut sampler);
    }
    Pass::new(opts.threads)
        .with_progress(progress)
        .run(&mut trace, Analyses(&mut chosen))?;
    let profile = has("sample").then(|| sampler.finish().with_source(trace.source().to_string()));
    let threads = per_thread.finish(per_thread.seal(thread_stats));
    let mut out = Vec::new();
    for name in names {
        out.push(match name.as_str() {
            "stats" => pretty(&StatsReport::new(&trace, stats.finish(), &threads)),
            "mrc" => pretty(&method::curve_from(
                method::Measured::StackDistances(&sd.finish()),
                opts,
            )?),
            "footprint" => {
                let f = fp.finish();
                pretty(&json!({
                    "line_size": f.line_size,
                    "refs": f.refs,
                    "distinct_lines": f.distinct_lines,
                    "points": f.points(256)?,
                }))
            }
            _ => profile_summary(profile.as_ref().expect("sampled"), None),
        });
    }
    Ok((out, profile))
}

/// `cachescope sample --json`'s summary of a profile (`path`: where it was written).
pub fn profile_summary(p: &Profile, path: Option<&str>) -> String {
    let mut v = json!({
        "source": p.source(),
        "refs": p.refs(),
        "samples": p.samples().len(),
        "reuses": p.reuses(),
        "dangling": p.dangling(),
        "rate": p.rate(),
        "seed": p.seed(),
        "slot_refs": p.slot_refs(),
        "slots": p.slot_count(),
        "line_size": p.line_size().bytes(),
    });
    if let (Some(path), Value::Object(m)) = (path, &mut v) {
        m.insert("profile".into(), path.into());
    }
    pretty(&v)
}

/// `cachescope report DIR`'s pass: the report written into `dir`; its `--json` summary.
pub fn report(
    spec: &Spec,
    dir: &std::path::Path,
    options: cachescope_report::collect::CollectOptions,
    threads: usize,
) -> Result<String> {
    let line_size = options.line_size;
    let mut trace = spec.open(line_size)?;
    let mut report = cachescope_report::collect::collect(&mut trace, options, threads)
        .map_err(|e| invalid_report(e.to_string()))?;
    // A trace of several threads is read again for the threads section.
    let log = spec
        .file()
        .map(cachescope::attribution::events::sidecar_path)
        .filter(|p| p.is_file());
    let mut again = || spec.open(line_size);
    cachescope::report::threads::complete(
        &mut report,
        Some(&mut again),
        &mut cachescope::pass::Pass::new(threads),
        log.as_deref(),
    )?;
    let written =
        cachescope_report::write::write(&report, dir).map_err(|e| invalid_report(e.to_string()))?;
    Ok(pretty(&json!({
        "source": report.source,
        "html": written.html,
        "json": written.json,
        "figures": written.figures,
        "refs": report.stats.refs,
        "distinct_lines": report.stats.distinct_lines,
        "elapsed_seconds": report.elapsed_seconds,
    })))
}

fn invalid_report(message: String) -> cachescope::Error {
    cachescope::Error::InvalidParameter {
        name: "report",
        message,
    }
}

/// The command line's JSON layout: pretty, with a final newline.
pub fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).expect("serializable") + "\n"
}
