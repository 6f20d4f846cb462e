//! Turns [`InputArgs`] into an open [`Trace`]: a file, stdin, a built-in workload, or a
//! program run now ([`crate::program`]).

use anyhow::Result;
use cachescope::sampling::SamplerOptions;
use cachescope::spatial::SpatialOptions;
use cachescope::trace::{self, OpenOptions, Trace};
use cachescope::{LineSize, Source, workloads};

use std::path::Path;

use crate::args::{InputArgs, ReadArgs};

/// Opens the trace or starts the workload or program the flags name, keeping `--thread`'s
/// references alone when it is given. A program runs once per process: a second call reads
/// the trace the first one saved (see [`open_twice`]).
pub fn open(args: &InputArgs, line_size: LineSize) -> Result<Trace> {
    let trace = if args.program.is_empty() {
        open_other(args, line_size)?
    } else {
        crate::program::open(&args.program, &args.live, false, false)?
    };
    Ok(filtered(trace, args))
}

/// A program's events as it runs, for a command that names what it finds after its pass.
pub struct LiveEvents {
    /// The memory map and allocations, sent as the trace is decoded.
    pub rx: crossbeam_channel::Receiver<cachescope::attribution::events::Event>,
    /// The run id in a `--save`d trace's header, for its event log.
    pub run_id: String,
    /// The program's command line.
    pub description: String,
}

/// [`open`], with the program's events when the input is a program run under the tool (and
/// `--no-events` is not given): `sharing -- PROGRAM` names its lines from them, as `report --
/// PROGRAM` names its structures.
pub fn open_with_events(
    args: &InputArgs,
    line_size: LineSize,
    quiet: bool,
) -> Result<(Trace, Option<LiveEvents>)> {
    if args.program.is_empty() {
        return Ok((open(args, line_size)?, None));
    }
    let started = crate::program::start(
        &args.program,
        &args.live,
        args.live.save.clone(),
        !args.live.no_events,
        false,
        quiet,
    )?;
    let events = started.events.map(|rx| LiveEvents {
        rx,
        run_id: started.run_id,
        description: started.description,
    });
    Ok((filtered(started.trace, args), events))
}

/// [`open`] read as the sampled stream of `spatial` (docs/sampled.md), with StatCache's
/// profile of the full stream when `reuse` is given, with the program's events when `events` is set and the input is a program run under the tool. A program runs
/// under the tool's line filter, as `report --sampled -- PROGRAM` runs it
/// ([`crate::program::start_sampled`]): only its sampled lines' references cross the pipe.
/// Anything else, and a program with `--thread` (the thread filter reads whole batches), is
/// filtered in cachescope as it is read: the same sampled stream either way.
pub fn open_sampled(
    args: &InputArgs,
    line_size: LineSize,
    (spatial, reuse): (SpatialOptions, Option<SamplerOptions>),
    events: bool,
    quiet: bool,
) -> Result<(Trace, Option<LiveEvents>)> {
    let (mut trace, live) = if args.program.is_empty() || args.thread.is_some() {
        if events {
            open_with_events(args, line_size, quiet)?
        } else {
            (open(args, line_size)?, None)
        }
    } else {
        let (started, _, _) = crate::program::start_sampled(
            &args.program,
            &args.live,
            (spatial, reuse),
            None,
            events,
            quiet,
        )?;
        let live = started.events.map(|rx| LiveEvents {
            rx,
            run_id: started.run_id,
            description: started.description,
        });
        (started.trace, live)
    };
    // Over the tool's stream the filter applied again keeps what the tool kept.
    trace.sampled(spatial, reuse)?;
    Ok((trace, live))
}

/// [`open`] for a command that will open its input a second time: a program's trace is kept
/// (in `--save`'s file, or a temporary one) for the second pass.
pub fn open_twice(args: &InputArgs, line_size: LineSize) -> Result<Trace> {
    let trace = if args.program.is_empty() {
        open_other(args, line_size)?
    } else {
        crate::program::open(&args.program, &args.live, true, false)?
    };
    Ok(filtered(trace, args))
}

/// `trace`, read through `--thread`'s filter when it is given.
fn filtered(mut trace: Trace, args: &InputArgs) -> Trace {
    if let Some(t) = args.thread {
        trace.only_thread(t);
    }
    trace
}

fn open_other(args: &InputArgs, line_size: LineSize) -> Result<Trace> {
    if let Some(w) = args.workload {
        let generator = workloads::generator(w, &args.params.to_params(line_size))?;
        return Ok(Trace::from_reader(
            Box::new(generator),
            Source::Workload(w.name().into()),
        ));
    }
    let path = args
        .trace
        .as_deref()
        .expect("clap requires TRACE unless --workload or a program is given");
    open_path(path, &args.read)
}

/// Opens a trace file (`-` for stdin).
pub fn open_path(path: &Path, read: &ReadArgs) -> Result<Trace> {
    let opts = OpenOptions {
        format: read.format,
        skip_bad_lines: read.skip_bad_lines,
    };
    Ok(trace::open(path, &opts)?)
}

/// The sampling profile named by the flags, if TRACE is one (told by its magic bytes; a profile
/// cannot come from stdin or a workload).
pub fn profile(args: &InputArgs) -> Result<Option<cachescope::sampling::Profile>> {
    use std::io::Read;
    let Some(path) = args.trace_file() else {
        return Ok(None);
    };
    let source = Source::File(path.to_owned());
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(None); // opening it as a trace reports the error
    };
    let mut head = [0u8; 8];
    let n = file.read(&mut head).unwrap_or(0);
    if !cachescope::sampling::Profile::looks_like(&head[..n]) {
        return Ok(None);
    }
    let file = std::fs::File::open(path).map_err(|e| cachescope::Error::io(&source, e))?;
    Ok(Some(cachescope::sampling::Profile::read(file, &source)?))
}
