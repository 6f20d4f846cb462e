//! `simulate(cores=N)` for Python: the multi-core model over a threaded trace, its threads
//! interleaved as `simulate --cores` interleaves them (the library's
//! [`cachescope::cores::Simulation`]); and the `interleave`/`quantum` knobs `sharing` shares.

use cachescope::cores::{Interleave, Schedule, Simulation};
use cachescope::pass::Pass;
use cachescope::sim::{Geometry, LevelSpec, MultiCoreConfig, Policy, SimOptions};
use cachescope::{Error, Result};
use serde_json::json;

use crate::passes::{Progress, pretty};
use crate::source::Spec;

/// The order `--interleave I [--quantum Q]` asks for (`time` or `instructions`; the quantum
/// defaults to the interleave's own; 0 keeps the recorded order).
pub fn schedule(interleave: &str, quantum: Option<u64>) -> Result<Schedule> {
    let interleave = match interleave {
        "time" => Interleave::Time,
        "instructions" => Interleave::Instructions,
        other => {
            return Err(Error::InvalidParameter {
                name: "interleave",
                message: format!("{other:?}: give \"time\" or \"instructions\""),
            });
        }
    };
    Ok(match quantum {
        Some(quantum) => Schedule {
            interleave,
            quantum,
        },
        None => Schedule::with_default_quantum(interleave),
    })
}

/// What `cores=` adds to `simulate`: the cores and the order of their threads.
pub struct CoresRequest {
    pub cores: u32,
    pub interleave: String,
    pub quantum: Option<u64>,
}

/// `cachescope simulate --cores N --cache SPEC [--interleave I] [--quantum Q] --json`: each
/// core's private `cache`, with write-backs, utilization and a prefetcher as `opts` asks.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    spec: &Spec,
    cache: Geometry,
    request: &CoresRequest,
    policy: Policy,
    opts: &SimOptions,
    line_size: cachescope::LineSize,
    threads: usize,
    progress: Progress,
) -> Result<String> {
    let schedule = schedule(&request.interleave, request.quantum)?;
    let mut config = MultiCoreConfig::new(request.cores, vec![LevelSpec::private("cache", cache)]);
    config.policy = policy;
    config.writes = opts.writes;
    config.utilization = opts.utilization;
    config.prefetch = vec![opts.prefetch];
    let mut trace = spec.open(line_size)?;
    let mut pass = Pass::new(threads).with_progress(progress);
    let run = Simulation::run(&mut trace, &mut pass, &config, schedule)?;
    // The CLI's document: how the threads were ordered, then the machine's counts.
    let mut doc = json!({
        "interleave": (schedule.quantum > 0).then_some(schedule.interleave),
        "quantum": schedule.quantum,
        "quantum_unit": run.unit,
    });
    if let (Some(o), Ok(serde_json::Value::Object(counts))) =
        (doc.as_object_mut(), serde_json::to_value(&run.report))
    {
        o.extend(counts);
    }
    Ok(pretty(&doc))
}
