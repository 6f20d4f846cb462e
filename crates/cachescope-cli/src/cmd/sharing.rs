//! `cachescope sharing`: the lines threads share, true or false, ranked by the coherence misses
//! they cause in a multi-core model of the run (docs/threads.md).
//!
//! The two passes are the library's (`cachescope::sharing::Finder`, `Machine`), each with its
//! progress bar; the lines are named from the trace's event log, or from a running program's
//! own events (`sharing -- PROGRAM`); this file has the flags, the naming's input and the
//! printing (`sharing_table.rs`).

use crate::args::heading;
use std::path::PathBuf;

use anyhow::Result;
use cachescope::attribution::events::{EVENTS_VERSION, Event, EventWriter, Header, sidecar_path};
use cachescope::cores::Schedule;
use cachescope::pass::Analyses;
use cachescope::sharing::detect::{Detector, PromoteOptions};
use cachescope::sharing::{Finder, Options, Sharing, promote};
use cachescope::sim::Geometry;
use cachescope::spatial::SpatialOptions;
use clap::Args;

use super::sharing_table::Printed;
use super::simulate::InterleaveArg;
use super::{drive, drive_again};
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs, values};
use crate::input;
use crate::output::{self, Format};

#[derive(Debug, Args)]
pub struct SharingArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Each core's private cache in the coherence model (SIZE,ASSOC,LINE); its line size is
    /// the line the sharing is measured on.
    #[arg(help_heading = heading::CACHE, long = "L1", value_name = "SPEC", default_value = "32K,8,64", value_parser = values::geometry)]
    pub l1: Geometry,
    /// The shared last level below the private caches (SIZE,ASSOC,LINE).
    #[arg(help_heading = heading::CACHE, long = "LL", value_name = "SPEC", default_value = "8M,16,64", value_parser = values::geometry)]
    pub ll: Geometry,
    /// Cores of the model [default: one per thread, up to 64].
    #[arg(help_heading = heading::CACHE, long)]
    pub cores: Option<u32>,
    /// The slice each core runs in turn, as `simulate --quantum`: cycles with --interleave time
    /// (default 100), instructions with --interleave instructions (default 100); 0 keeps the
    /// recorded order.
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "N", value_parser = values::count)]
    pub quantum: Option<u64>,
    /// How the threads are re-interleaved, as `simulate --interleave`: time (in modelled time,
    /// the default) or instructions (round-robin).
    #[arg(help_heading = heading::ANALYSIS, long, value_enum)]
    pub interleave: Option<InterleaveArg>,
    /// List every shared line, not only those with coherence misses.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub all: bool,
    /// The event log naming structures and code [default: TRACE.events if present; a program
    /// run after `--` names them from its own events].
    #[arg(help_heading = heading::INPUT, long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Lines in the table (every listed line in --json and --csv).
    #[arg(help_heading = heading::OUTPUT, long, default_value_t = 20)]
    pub top: usize,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    #[command(flatten)]
    pub rate: SampledRateArgs,
    /// Print JSON: {"lines": [{"line", "kind", "structure", "structures", "threads", "writes", "coherence_misses", "code", "fix"}], ...}.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV, one row per listed line.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
}

pub fn run(mut args: SharingArgs) -> Result<()> {
    let interleave = args.interleave.unwrap_or(InterleaveArg::Time).into();
    let schedule = match args.quantum {
        Some(quantum) => Schedule {
            interleave,
            quantum,
        },
        None => Schedule::with_default_quantum(interleave),
    };
    let options = Options {
        l1: args.l1,
        ll: args.ll,
        cores: args.cores,
        schedule,
        all: args.all,
    };
    let mut finder = Finder::new(options)?;
    // --sampled: the lines of the sample, every thread's references to each (docs/sampled.md),
    // and on an input read twice those two threads write (`promoted`); a program runs under
    // the tool's line filter.
    let spatial = args
        .sampled
        .spatial(args.rate.rate, args.input.params.seed, args.l1.line_size());
    if let Some(spatial) = spatial.filter(|_| args.input.reads_again()) {
        let sharing = promoted(&args, options, spatial)?;
        return output::emit_sampled(
            &Printed {
                sharing,
                top: args.top,
            },
            Format::from_flags(args.json, args.csv),
            Some(spatial),
            "shards",
        );
    }
    // No call graph here: a sampled run's tool leaves the call events out (they cost it).
    args.input.live.no_calls = true;
    let (mut trace, live) = match spatial {
        Some(s) => input::open_sampled(
            &args.input,
            args.l1.line_size(),
            (s, None),
            !args.input.live.no_events,
            args.run.quiet,
        )?,
        None => input::open_with_events(&args.input, args.l1.line_size(), args.run.quiet)?,
    };
    // A recording's log: the frames' locals are followed through the pass (a program's
    // events arrive only with the pass, so its stack lines keep the one `stack` name).
    if live.is_none() {
        if let Some(log) = log_path(&args) {
            finder.follow_frames(&log)?;
        }
    }
    drive(&mut trace, Analyses(&mut finder.analyses()), &args.run)?;
    // The program has ended with the pass: every event it sent is in the channel.
    let events: Option<(Vec<Event>, input::LiveEvents)> =
        live.map(|l| (l.rx.try_iter().collect(), l));
    let mut machine = finder.machine(&trace)?;
    if let Some(dealt) = &mut machine.trace {
        drive_again(dealt, Analyses(&mut []), &args.run)?;
    }
    let mut sharing = machine.finish();
    let line_size = args.l1.line_size().bytes();
    match events {
        Some((events, live)) if args.events.is_none() => {
            if let Some(save) = &args.input.live.save {
                save_log(save, &events, &live)?;
            }
            sharing.name_from_events(events, line_size)?;
        }
        _ => {
            let log = log_path(&args);
            if log.is_none() && !args.input.program.is_empty() {
                note_no_events(&mut sharing, &args);
            } else {
                sharing.name_from(&trace, log.as_deref(), line_size)?;
            }
        }
    }
    output::emit_sampled(
        &Printed {
            sharing,
            top: args.top,
        },
        Format::from_flags(args.json, args.csv),
        spatial,
        "shards",
    )
}

/// `--sampled` on an input read twice: the sampled lines plus those two or more threads write,
/// found in a first read of the whole stream by the bounded detector and measured whole beside
/// the sample from the start, as `report --sampled`'s sharing table finds them
/// (`cachescope::sharing::promote`; docs/sampled.md). Each line says how it was found.
fn promoted(args: &SharingArgs, options: Options, spatial: SpatialOptions) -> Result<Sharing> {
    let line = args.l1.line_size();
    let mut detector = Detector::new(line, PromoteOptions::default());
    let mut trace = input::open(&args.input, line)?;
    drive(&mut trace, Analyses(&mut [&mut detector]), &args.run)?;
    let mut trace = input::open(&args.input, line)?;
    let mut pass = super::passes(&args.run);
    pass.hooks().notes = false;
    let log = log_path(args);
    let found = (spatial, &detector);
    promote::analyse(&mut trace, &mut pass, options, log.as_deref(), found)
}

/// The event log: `--events`, or the trace's sidecar when it exists.
fn log_path(args: &SharingArgs) -> Option<std::path::PathBuf> {
    args.events.clone().or_else(|| {
        let t = args.input.trace.as_deref()?;
        Some(sidecar_path(t)).filter(|p| p.exists())
    })
}

/// The note for a program run without its events (`--no-events`, or lackey).
fn note_no_events(sharing: &mut Sharing, args: &SharingArgs) {
    sharing.notes.push(if args.input.live.no_events {
        "--no-events: structures are `other` and code is instruction addresses".into()
    } else {
        "the program ran without allocation events (lackey records them into a file, for \
         `record`): structures are `other` and code is instruction addresses"
            .into()
    });
}

/// The program's events beside its `--save`d trace, as `record` writes them.
fn save_log(save: &std::path::Path, events: &[Event], live: &input::LiveEvents) -> Result<()> {
    let path = sidecar_path(save);
    let (pending, file) = output::Pending::create(&path)?;
    let header = Header {
        cachescope_events: EVENTS_VERSION,
        program: live.description.clone(),
        run: live.run_id.clone(),
    };
    let source = cachescope::Source::File(path.clone());
    let mut w = EventWriter::new(std::io::BufWriter::new(file), source, &header)?;
    for e in events {
        w.write(e)?;
    }
    w.finish()?
        .into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())?;
    pending.commit()
}
