//! The command line's hooks around every pass ([`cachescope::pass::Hooks`]): the trace's
//! notes, the progress bar, the diagnostics reading left, and MPI ranks.

use std::sync::Arc;

use cachescope::pass::Hooks;
use cachescope::stages::Stage;
use cachescope::trace::{ProgressProbe, Trace};

use crate::args::RunArgs;
use crate::progress::Progress;

/// Notes, progress and diagnostics on stderr (none with `--quiet`, nor on MPI ranks other than
/// 0), and the MPI ranks of `--features mpi`.
pub struct Terminal<'a> {
    run: &'a RunArgs,
    /// Whether the trace's notes and warnings are printed (not on a second pass over it).
    pub notes: bool,
    bar: Option<(Progress, ProgressProbe)>,
}

impl<'a> Terminal<'a> {
    /// The hooks of `run`'s flags.
    pub fn new(run: &'a RunArgs) -> Terminal<'a> {
        Terminal {
            run,
            notes: true,
            bar: None,
        }
    }

    /// Whether this process prints nothing: `--quiet`, or an MPI rank other than 0.
    fn silent(&self) -> bool {
        #[cfg(feature = "mpi")]
        if crate::mpi::is_secondary_rank() {
            return true;
        }
        self.run.quiet
    }
}

impl Hooks for Terminal<'_> {
    type Error = anyhow::Error;

    fn start(&mut self, trace: &Trace) {
        let silent = self.silent();
        if self.notes && !silent {
            for note in trace.notes() {
                eprintln!("cachescope: note: {}: {note}", trace.source());
            }
        }
        self.bar = Some((Progress::for_trace(trace, silent), trace.progress_probe()));
    }

    fn progress(&mut self, seen: u64) {
        if let Some((bar, probe)) = &self.bar {
            bar.update(seen, probe.get().0);
        }
    }

    fn end(&mut self, trace: &Trace, completed: bool) {
        if let Some((bar, _)) = self.bar.take() {
            bar.finish();
        }
        if !completed || !self.notes || self.silent() {
            return;
        }
        let diag = trace.diagnostics();
        if diag.skipped_lines > 0 {
            eprintln!(
                "cachescope: warning: skipped {} line(s) that did not parse; the first: {}",
                diag.skipped_lines,
                diag.first_skipped.as_deref().unwrap_or("?")
            );
        }
        for note in &diag.notes {
            eprintln!("cachescope: note: {}: {note}", trace.source());
        }
    }

    fn after_pass<T>(&mut self, stages: Vec<Arc<Stage>>, work: impl FnOnce() -> T) -> T {
        Progress::stages(self.silent(), "after the pass", stages, work)
    }

    #[cfg(feature = "mpi")]
    fn distribute_plan<P: cachescope::parallel::Wire>(
        &mut self,
        trace: &mut Trace,
        plan: &P,
        threads: usize,
    ) -> anyhow::Result<Option<P::Output>> {
        crate::mpi::distribute(trace, plan, threads)?.settle()
    }

    #[cfg(feature = "mpi")]
    fn distribute_sample(
        &mut self,
        trace: &mut Trace,
        options: cachescope::sampling::SamplerOptions,
        threads: usize,
    ) -> anyhow::Result<Option<cachescope::sampling::Profile>> {
        crate::mpi::sample(trace, options, threads)?.settle()
    }
}
