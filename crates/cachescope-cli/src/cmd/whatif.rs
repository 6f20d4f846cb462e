//! `cachescope whatif TRACE|-- PROGRAM --change SPEC… [simulate's flags]`: the simulation
//! `simulate` runs, on the trace as it is and on the trace with its layout changed
//! (`cachescope::layout`: the changes are an address transform in front of the simulators),
//! side by side. A program is recorded first (with its event log), into `--save`'s file or a
//! temporary one, since both runs read it.

use std::path::PathBuf;

use crate::args::heading;
use anyhow::{Result, bail};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::layout::{self, Applied, Change, LevelChange, Misses, Relayout};
use cachescope::units::thousands;
use clap::Args;

use super::simulate::{self, SimulateArgs, Simulated};
use crate::args::values;
use crate::input;
use crate::output::{self, Format, Output};

#[derive(Debug, Args)]
pub struct WhatifArgs {
    #[command(flatten)]
    pub sim: SimulateArgs,
    /// A layout change, KIND:STRUCTURE[@ELEMENT]=ARGUMENTS (repeatable): split, reorder, pad,
    /// align, pad-rows, own-line, move or nontemporal; e.g. split:particles=x,y,
    /// pad-rows:grid=64, own-line:counters, nontemporal:out (docs/advice.md).
    #[arg(help_heading = heading::ANALYSIS, long = "change", value_name = "SPEC", value_parser = values::change)]
    pub changes: Vec<Change>,
    /// A prefetcher on the changed side only, as --prefetch gives one ([LEVEL=]KIND;
    /// repeatable): what software prefetches or a hardware prefetcher would gain.
    #[arg(help_heading = heading::ANALYSIS, long = "after-prefetch", value_name = "[LEVEL=]KIND")]
    pub after_prefetch: Vec<String>,
    /// The --prefetch-distance of --after-prefetch.
    #[arg(help_heading = heading::ANALYSIS, long = "after-prefetch-distance", value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub after_prefetch_distance: Option<u32>,
    /// The event log naming the structures [default: TRACE.events].
    #[arg(help_heading = heading::INPUT, long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The program, for a trace without a memory map (a non-PIE executable).
    #[arg(help_heading = heading::INPUT, long, value_name = "PROGRAM")]
    pub exe: Option<PathBuf>,
}

/// A recorded input: the trace file both runs read and its event log.
pub struct Recorded {
    /// The trace.
    pub trace: PathBuf,
    /// Its event log, when there is one.
    pub events: Option<PathBuf>,
    /// The temporary directory of a program's recording (removed when dropped).
    _dir: Option<tempfile::TempDir>,
}

impl Recorded {
    /// True when the trace is a temporary recording, gone when the command ends.
    pub fn temporary(&self) -> bool {
        self._dir.is_some()
    }
}

/// The trace file `sim`'s input names, or the program it names recorded into one (then the
/// input is changed to read it); `events` overrides the log beside it.
pub fn recorded(sim: &mut SimulateArgs, events: Option<PathBuf>) -> Result<Recorded> {
    let input = &mut sim.input;
    if input.workload.is_some() {
        bail!("a layout change needs a recorded program's trace and its event log, not a workload");
    }
    let mut dir = None;
    if !input.program.is_empty() {
        let path = match &input.live.save {
            Some(p) => p.clone(),
            None => {
                let d = tempfile::Builder::new()
                    .prefix("cachescope-whatif-")
                    .tempdir()?;
                let p = d.path().join("program.cst");
                dir = Some(d);
                p
            }
        };
        let capture =
            crate::program::Capture::new(&input.live, cachescope::record::ProgramOutput::Stderr);
        super::record::record(
            &input.program,
            &path,
            cachescope::trace::Format::Native,
            &sim.run,
            false,
            &capture,
            input.live.save.is_some(),
        )?;
        input.program.clear();
        input.trace = Some(path);
    }
    let trace = input
        .trace
        .clone()
        .expect("clap requires a trace or a program");
    if trace.as_os_str() == "-" {
        bail!("a layout change reads the trace twice: give a file, not standard input");
    }
    let events = events.or_else(|| Some(sidecar_path(&trace)).filter(|p| p.exists()));
    Ok(Recorded {
        trace,
        events,
        _dir: dir,
    })
}

pub fn run(mut args: WhatifArgs) -> Result<()> {
    if args.changes.is_empty() && args.after_prefetch.is_empty() {
        bail!("nothing to change: give --change SPEC (repeatable) or --after-prefetch KIND");
    }
    let source = recorded(&mut args.sim, args.events.clone())?;
    let compared = compare(&mut args, &source)?;
    output::emit(&compared, Format::from_flags(args.sim.json, args.sim.csv))
}

/// The simulation of the trace as it is and as the changes make it.
fn compare(args: &mut WhatifArgs, source: &Recorded) -> Result<Compared> {
    let original = simulate::simulate(&args.sim, &mut |input, ls| input::open(input, ls))?;
    if !args.after_prefetch.is_empty() {
        args.sim.prefetch = std::mem::take(&mut args.after_prefetch);
        if let Some(d) = args.after_prefetch_distance {
            args.sim.prefetch_distance = d;
        }
    }
    let (changed, applied) = changed(&args.sim, &args.changes, source, args.exe.as_deref())?;
    Ok(Compared::new(&args.changes, applied, original, changed))
}

/// The simulation `sim` asks for of `source`'s trace with `changes` applied, and what they did.
pub fn changed(
    sim: &SimulateArgs,
    changes: &[Change],
    source: &Recorded,
    exe: Option<&std::path::Path>,
) -> Result<(Simulated, Vec<Applied>)> {
    let line = first_line(sim);
    let mut outcome = None;
    let simulated = simulate::simulate(sim, &mut |input, _| {
        let mut trace = input::open_path(&source.trace, &input.read)?;
        let events = match &source.events {
            Some(path) => {
                let log = EventReader::open(path)?;
                if let Some(w) = cachescope::attribution::run_id::check(&trace, &log.header, path)?
                {
                    eprintln!("cachescope: note: {w}");
                }
                Some(Box::new(log) as cachescope::attribution::EventSource<'static>)
            }
            None => None,
        };
        let relayout = Relayout::new(changes.to_vec(), events, exe, line)?;
        outcome = Some(layout::relay(&mut trace, relayout));
        if let Some(t) = input.thread {
            trace.only_thread(t);
        }
        Ok(trace)
    })?;
    let applied = outcome
        .and_then(|o| o.lock().expect("not poisoned").take())
        .unwrap_or_default();
    Ok((simulated, applied))
}

/// The line size of the first level the flags give (own-line's default line).
fn first_line(sim: &SimulateArgs) -> u64 {
    [sim.d1, sim.l1, sim.caches.first().copied(), sim.l2]
        .into_iter()
        .flatten()
        .next()
        .map_or(64, |g| g.line_size().bytes())
}

/// A simulation's misses per level.
pub fn misses(s: &Simulated) -> Misses {
    match s {
        Simulated::Caches(c) => Misses::of_sims(&c.0),
        Simulated::MultiCore(m) => Misses::of_multicore(&m.report),
        Simulated::Cachegrind(c) => Misses {
            levels: vec![
                ("I1".into(), c.i1_misses),
                ("D1".into(), c.d1_misses),
                ("LL".into(), c.ll_misses),
            ],
            coherence: None,
        },
    }
}

/// What `whatif` prints.
pub struct Compared {
    changes: Vec<String>,
    applied: Vec<Applied>,
    original: Simulated,
    changed: Simulated,
    levels: Vec<LevelChange>,
    coherence: Option<(u64, u64)>,
}

impl Compared {
    fn new(
        changes: &[Change],
        applied: Vec<Applied>,
        original: Simulated,
        changed: Simulated,
    ) -> Self {
        let (before, after) = (misses(&original), misses(&changed));
        Compared {
            changes: changes.iter().map(ToString::to_string).collect(),
            applied,
            levels: before.compare(&after),
            coherence: before.coherence.zip(after.coherence),
            original,
            changed,
        }
    }
}

impl Output for Compared {
    fn json(&self) -> Result<String> {
        let parse =
            |s: &Simulated| -> Result<serde_json::Value> { Ok(serde_json::from_str(&s.json()?)?) };
        output::json(&layout::whatif_json(
            &self.changes,
            &self.applied,
            parse(&self.original)?,
            parse(&self.changed)?,
            &misses(&self.original),
            &misses(&self.changed),
        ))
    }

    /// One row per level: its misses before and after.
    fn csv(&self) -> Result<String> {
        let rows: Vec<serde_json::Value> = self
            .levels
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()?;
        Ok(output::csv_records(&rows))
    }

    fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::from("# as it is\n");
        o += &self.original.table();
        let _ = writeln!(o, "\n# changed: {}", self.changes.join(" "));
        for a in &self.applied {
            let _ = writeln!(
                o,
                "#   {}: {} ({} references moved{})",
                a.change,
                if a.structures.is_empty() {
                    "the program's non-temporal stores".to_string()
                } else {
                    a.structures.join(", ")
                },
                thousands(a.moved),
                if a.streamed > 0 {
                    format!(", {} stores streamed", thousands(a.streamed))
                } else {
                    String::new()
                }
            );
        }
        o += &self.changed.table();
        let _ = writeln!(
            o,
            "\n{:<12} {:>14} {:>14} {:>8}",
            "level", "misses", "after", "change"
        );
        let rows = self
            .levels
            .iter()
            .map(|l| (l.level.as_str(), l.misses, l.misses_after));
        let coherence = self.coherence.map(|(b, a)| ("coherence", b, a));
        for (level, b, a) in rows.chain(coherence) {
            let change = if b == 0 {
                "-".to_string()
            } else {
                format!("{:+.1}%", (a as f64 - b as f64) / b as f64 * 100.0)
            };
            let _ = writeln!(
                o,
                "{level:<12} {:>14} {:>14} {change:>8}",
                thousands(b),
                thousands(a)
            );
        }
        o
    }
}
