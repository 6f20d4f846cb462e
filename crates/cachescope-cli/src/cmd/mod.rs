//! One module per subcommand (its arguments at the top, then `run`); [`drive`] and its
//! siblings are the streaming passes they share.

pub(crate) mod attribute;
pub(crate) mod completions;
pub(crate) mod convert;
pub(crate) mod corun;
pub(crate) mod demo;
pub(crate) mod footprint;
pub(crate) mod generate;
pub(crate) mod hotl;
pub(crate) mod l2;
pub(crate) mod mrc;
pub(crate) mod phases;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod sample;
pub(crate) mod simulate;
pub(crate) mod stats;

use anyhow::Result;
use cachescope::LineSize;
use cachescope::analysis::{self, Analysis};
use cachescope::parallel::{self, Chunking, Wire};
use cachescope::trace::Trace;

use crate::args::{Cli, Command, InputArgs, RunArgs};
use crate::progress::Progress;

/// Dispatches to the subcommand.
pub fn run(cli: Cli) -> Result<()> {
    cachescope::budget::set_limit(cli.max_memory);
    // Under MPI the commands whose pass merges exactly distribute (each decides, from its
    // flags and its trace, in `drive_chunked`); every other command runs on rank 0 alone.
    #[cfg(feature = "mpi")]
    if crate::mpi::is_secondary_rank()
        && !matches!(
            &cli.command,
            Command::Stats(_)
                | Command::Mrc(_)
                | Command::Footprint(_)
                | Command::Hotl(_)
                | Command::L2(_)
                | Command::Sample(_)
        )
    {
        return Ok(());
    }
    match cli.command {
        Command::Stats(a) => stats::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Mrc(a) => mrc::run(a),
        Command::Footprint(a) => footprint::run(a),
        Command::Hotl(a) => hotl::run(a),
        Command::Corun(a) => corun::run(a),
        Command::L2(a) => l2::run(a),
        Command::Phases(a) => phases::run(a),
        Command::Record(a) => record::run(a),
        Command::Attribute(a) => attribute::run(a),
        Command::Sample(a) => sample::run(a),
        Command::Report(a) => report::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
    }
}

/// Reads `trace` once, feeding every analysis, with a progress bar; then reports what reading
/// noticed (assumptions, skipped lines) on stderr unless quiet.
pub fn drive(trace: &mut Trace, analyses: &mut [&mut dyn Analysis], run: &RunArgs) -> Result<u64> {
    with_progress(trace, run, |trace, progress| {
        Ok(analysis::run(trace, analyses, run.threads, progress)?)
    })
}

/// [`drive`] for a second pass over a trace read once already: the progress bar again, but
/// not the notes and warnings the first pass printed.
pub fn drive_again(
    trace: &mut Trace,
    analyses: &mut [&mut dyn Analysis],
    run: &RunArgs,
) -> Result<u64> {
    with_progress_and_notes(trace, run, false, |trace, progress| {
        Ok(analysis::run(trace, analyses, run.threads, progress)?)
    })
}

/// Runs a chunk-parallel plan over `trace` on `--threads` threads (results do not depend on
/// the count), with the progress bar and notes of [`drive`].
///
/// Under MPI with several ranks (`--features mpi`), a native trace file is split among the
/// ranks and rank 0 gets the merged result; `None` on every other rank, which must then
/// print nothing. A trace that cannot be split is read by rank 0 alone.
pub fn drive_chunked<P: Wire>(
    trace: &mut Trace,
    plan: &P,
    run: &RunArgs,
) -> Result<Option<P::Output>> {
    #[cfg(feature = "mpi")]
    if let Some(done) = settle(
        crate::mpi::distribute(trace, plan, run.threads)?,
        trace,
        run,
    ) {
        return Ok(done);
    }
    let chunking = chunking(run);
    with_progress(trace, run, |trace, progress| {
        Ok(parallel::run(trace, plan, &chunking, progress)?)
    })
    .map(Some)
}

/// What an MPI pass leaves this process: `Some(Some(result))` on rank 0 (the trace's notes
/// printed, as [`drive`] prints them), `Some(None)` on another rank, which prints nothing;
/// `None` when the pass was not distributed and rank 0 runs it as usual.
#[cfg(feature = "mpi")]
fn settle<T>(outcome: crate::mpi::Outcome<T>, trace: &Trace, run: &RunArgs) -> Option<Option<T>> {
    match outcome {
        crate::mpi::Outcome::Merged(out) => {
            if !run.quiet {
                for note in trace.notes() {
                    eprintln!("cachescope: note: {}: {note}", trace.source());
                }
            }
            Some(Some(out))
        }
        crate::mpi::Outcome::Sent => Some(None),
        crate::mpi::Outcome::NotDistributed if crate::mpi::is_secondary_rank() => Some(None),
        crate::mpi::Outcome::NotDistributed => None,
    }
}

/// Opens the trace of a command whose pass may be distributed ([`drive_chunked`]): `None` on
/// an MPI rank other than 0 when the input is stdin or a workload, which only rank 0 reads.
pub fn open_chunked(input: &InputArgs, line_size: LineSize) -> Result<Option<Trace>> {
    #[cfg(feature = "mpi")]
    if crate::mpi::is_secondary_rank()
        && (input.workload.is_some() || input.trace.as_deref().is_none_or(|p| p.as_os_str() == "-"))
    {
        return Ok(None);
    }
    crate::input::open(input, line_size).map(Some)
}

/// StatCache sampling on `--threads` threads (the profile does not depend on the count), with
/// the progress bar and notes of [`drive`].
///
/// Under MPI with several ranks, a native trace file is sampled by all of them and rank 0
/// gets the profile; `None` on every other rank, as for [`drive_chunked`].
pub fn drive_sampled(
    trace: &mut Trace,
    options: cachescope::sampling::SamplerOptions,
    run: &RunArgs,
) -> Result<Option<cachescope::sampling::Profile>> {
    #[cfg(feature = "mpi")]
    if let Some(done) = settle(crate::mpi::sample(trace, options, run.threads)?, trace, run) {
        return Ok(done);
    }
    let chunking = chunking(run);
    with_progress(trace, run, |trace, progress| {
        Ok(parallel::sample(trace, options, &chunking, progress)?)
    })
    .map(Some)
}

/// The library's methods run their passes through [`drive`], [`drive_chunked`] and
/// [`drive_sampled`]: the progress bar, the notes and, with `--features mpi`, the ranks.
pub struct Passes<'a>(pub &'a RunArgs);

impl cachescope::method::Executor for Passes<'_> {
    type Error = anyhow::Error;

    fn analyses(
        &mut self,
        trace: &mut Trace,
        analyses: &mut [&mut dyn Analysis],
    ) -> Result<Option<u64>> {
        drive(trace, analyses, self.0).map(Some)
    }

    fn chunked<P: Wire>(&mut self, trace: &mut Trace, plan: &P) -> Result<Option<P::Output>> {
        drive_chunked(trace, plan, self.0)
    }

    fn sampled(
        &mut self,
        trace: &mut Trace,
        options: cachescope::sampling::SamplerOptions,
    ) -> Result<Option<cachescope::sampling::Profile>> {
        drive_sampled(trace, options, self.0)
    }
}

/// The chunking of `--threads`.
fn chunking(run: &RunArgs) -> Chunking {
    let mut chunking = Chunking::threads(run.threads);
    // Accesses per chunk of a sequentially read trace (docs/scale.md): for tuning, and for
    // tests that need many chunk boundaries in a small trace.
    if let Some(n) = std::env::var("CACHESCOPE_CHUNK_ACCESSES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        chunking.segment = n.max(1);
    }
    chunking
}

/// Reads `trace` once and runs independent analyses side by side on `--threads` threads.
pub fn drive_split(
    trace: &mut Trace,
    analyses: &mut [&mut (dyn Analysis + Send)],
    run: &RunArgs,
) -> Result<u64> {
    with_progress(trace, run, |trace, progress| {
        Ok(parallel::run_split(trace, analyses, run.threads, progress)?)
    })
}

/// Notes before, a progress bar during, and diagnostics after `pass`.
fn with_progress<T>(
    trace: &mut Trace,
    run: &RunArgs,
    pass: impl FnOnce(&mut Trace, &mut dyn FnMut(u64)) -> Result<T>,
) -> Result<T> {
    with_progress_and_notes(trace, run, true, pass)
}

/// [`with_progress`], printing the trace's notes and warnings only when `notes` is set.
fn with_progress_and_notes<T>(
    trace: &mut Trace,
    run: &RunArgs,
    notes: bool,
    pass: impl FnOnce(&mut Trace, &mut dyn FnMut(u64)) -> Result<T>,
) -> Result<T> {
    let notes = notes && !run.quiet;
    if notes {
        for note in trace.notes() {
            eprintln!("cachescope: note: {}: {note}", trace.source());
        }
    }
    let progress = Progress::for_trace(trace, run.quiet);
    let probe = trace.progress_probe();
    let result = pass(trace, &mut |n| progress.update(n, probe.get().0));
    progress.finish();
    let out = result?;
    let diag = trace.diagnostics();
    if diag.skipped_lines > 0 && notes {
        eprintln!(
            "cachescope: warning: skipped {} line(s) that did not parse; the first: {}",
            diag.skipped_lines,
            diag.first_skipped.as_deref().unwrap_or("?")
        );
    }
    if notes {
        for note in &diag.notes {
            eprintln!("cachescope: note: {}: {note}", trace.source());
        }
    }
    Ok(out)
}
