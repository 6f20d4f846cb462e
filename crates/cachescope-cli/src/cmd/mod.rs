//! One module per subcommand (its arguments at the top, then `run`); every pass runs through
//! [`drive`]: the library's one entry point ([`cachescope::pass::Pass::run`]) with the
//! command line's hooks ([`Terminal`]: notes, progress bar, diagnostics, MPI ranks).

pub(crate) mod advise;
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
pub(crate) mod sharing;
mod sharing_table;
pub(crate) mod simulate;
pub(crate) mod stats;
pub(crate) mod whatif;

use anyhow::Result;
use cachescope::LineSize;
use cachescope::pass::{Job, Pass};
use cachescope::trace::Trace;

use crate::args::{Cli, Command, InputArgs, RunArgs};

mod terminal;

pub use terminal::Terminal;

/// Dispatches to the subcommand.
pub fn run(cli: Cli) -> Result<()> {
    cachescope::budget::set_limit(cli.max_memory);
    // Under MPI the commands whose pass merges exactly distribute (the pass decides, from its
    // job and its trace, through `Terminal`'s hooks); every other command runs on rank 0 alone.
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
    let done = match cli.command {
        Command::Stats(a) => stats::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Simulate(a) => simulate::run(*a),
        Command::Mrc(a) => mrc::run(a),
        Command::Footprint(a) => footprint::run(a),
        Command::Hotl(a) => hotl::run(a),
        Command::Corun(a) => corun::run(a),
        Command::L2(a) => l2::run(a),
        Command::Phases(a) => phases::run(a),
        Command::Record(a) => record::run(a),
        Command::Attribute(a) => attribute::run(*a),
        Command::Sample(a) => sample::run(a),
        Command::Report(a) => report::run(a),
        Command::Sharing(a) => sharing::run(a),
        Command::Whatif(a) => whatif::run(*a),
        Command::Advise(a) => advise::run(*a),
        Command::Demo(a) => demo::run(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => completions::man(a),
    };
    // Another MPI rank stops at the pass that sent its part to rank 0, and prints nothing.
    #[cfg(feature = "mpi")]
    if done.as_ref().is_err_and(|e| e.is::<crate::mpi::PartSent>()) {
        return Ok(());
    }
    done
}

/// Notes, unless `quiet`, that a curve counted no references, so its ratios are 0 by
/// convention: a trace of instruction fetches only (data references are counted by default),
/// or nothing at all (a program's run that recorded nothing has said so already, and is not
/// noted twice). `unified`: the fetches were counted too; `offers_fetches`: the command has
/// `--include-instructions` (`mrc` does, `l2` does not).
pub fn note_nothing_counted(quiet: bool, unified: bool, offers_fetches: bool) {
    if quiet || crate::program::noted_empty() {
        return;
    }
    let what = if unified {
        "references"
    } else {
        "data references"
    };
    let hint = if !unified && offers_fetches {
        " (--include-instructions counts instruction fetches)"
    } else {
        ""
    };
    eprintln!(
        "cachescope: note: the input has no {what}: every miss ratio below is 0 by convention, \
         not a measurement{hint}"
    );
}

/// Passes on `--threads` threads with the command line's hooks: the trace's notes before, a
/// progress bar during, and what reading noticed (skipped lines, notes) after, on stderr
/// unless quiet; under MPI, distributable jobs spread over the ranks.
pub fn passes(run: &RunArgs) -> Pass<Terminal<'_>> {
    let pass = Pass::new(run.threads);
    // Accesses per segment of a trace read as a stream (docs/scale.md): for tuning, and for
    // tests that need many chunk boundaries in a small trace.
    let pass = match std::env::var("CACHESCOPE_CHUNK_ACCESSES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        Some(n) => pass.segment(n),
        None => pass,
    };
    pass.with_hooks(Terminal::new(run))
}

/// Reads `trace` once for `job` ([`cachescope::pass`]: in-order analyses, independent ones,
/// a chunk-parallel plan or StatCache's sampler), with [`passes`]' hooks.
///
/// Under MPI with several ranks (`--features mpi`), a plan or the sampler over a native trace
/// file is split among the ranks and rank 0 gets the merged result; every other rank stops
/// its command there ([`crate::mpi::PartSent`]) and prints nothing. A trace that cannot be
/// split is read by rank 0 alone.
pub fn drive<J: Job>(trace: &mut Trace, job: J, run: &RunArgs) -> Result<J::Output> {
    passes(run).run(trace, job)
}

/// [`drive`] for a second pass over a trace read once already: the progress bar again, but
/// not the notes and warnings the first pass printed.
pub fn drive_again<J: Job>(trace: &mut Trace, job: J, run: &RunArgs) -> Result<J::Output> {
    let mut pass = passes(run);
    pass.hooks().notes = false;
    pass.run(trace, job)
}

/// Opens the trace of a command whose pass may be distributed: `None` on an MPI rank other
/// than 0 when the input is stdin or a workload, which only rank 0 reads.
pub fn open_chunked(input: &InputArgs, line_size: LineSize) -> Result<Option<Trace>> {
    #[cfg(feature = "mpi")]
    if crate::mpi::is_secondary_rank() && input.trace_file().is_none() {
        return Ok(None);
    }
    crate::input::open(input, line_size).map(Some)
}
