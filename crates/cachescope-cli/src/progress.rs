//! A progress bar on stderr while a long pass runs: only when stderr is a terminal and
//! `--quiet` is off, so logs and pipes stay clean.

use std::io::IsTerminal;
use std::time::Duration;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cachescope::stages::{Stage, StageState};
use cachescope::trace::Trace;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// The bar, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
}

/// Notes said while a pass runs (from whichever thread reads the input), printed above the
/// progress bar by the pass's hooks ([`Progress::print_said`]).
static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Says `note` on standard error above the progress bar, the next time the bar is drawn.
pub fn say(note: String) {
    SAID.lock().unwrap_or_else(|e| e.into_inner()).push(note);
}

/// The references a running program has made so far, when its input is a sampled stream
/// (`--sampled -- PROGRAM`): the bar shows them beside the sampled accesses.
static SEEN: Mutex<Option<Arc<AtomicU64>>> = Mutex::new(None);

/// Makes the bar show `seen` as the references made so far.
pub fn watch_references(seen: Arc<AtomicU64>) {
    *SEEN.lock().unwrap_or_else(|e| e.into_inner()) = Some(seen);
}

impl Progress {
    /// A bar for reading `trace`: by bytes when its size is known, a spinner otherwise.
    pub fn for_trace(trace: &Trace, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = match trace.progress().1 {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{spinner} {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec} {msg} eta {eta}",
                )
                .expect("valid template"),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
            ),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar: Some(bar) }
    }

    /// A spinner counting accesses, for a pass over several traces at once.
    pub fn spinner(quiet: bool, what: &str) -> Progress {
        Progress::styled_spinner(quiet, what, || {
            ProgressStyle::with_template("{spinner} {prefix} {msg} {elapsed}")
                .expect("valid template")
        })
    }

    /// A spinner prefixed by `what`, drawn in the style `style` makes (made only when the
    /// spinner shows), or nothing when quiet or stderr is not a terminal.
    fn styled_spinner(quiet: bool, what: &str, style: impl FnOnce() -> ProgressStyle) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner().with_style(style());
        bar.set_prefix(what.to_string());
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar: Some(bar) }
    }

    /// Runs `work`, one stage of what follows a pass (OPT's stack and the models, a second
    /// read, the figures), under a spinner naming it: without one a long stage is silent.
    pub fn stage<T>(quiet: bool, what: &str, work: impl FnOnce() -> T) -> T {
        let spinner = Progress::spinner(quiet, what);
        let done = work();
        spinner.finish();
        done
    }

    /// [`Progress::stage`] for work made of [`Stage`]s running side by side (the report's
    /// OPT stack and models after its pass): the spinner shows how far each one is.
    pub fn stages<T>(
        quiet: bool,
        what: &str,
        stages: Vec<Arc<Stage>>,
        work: impl FnOnce() -> T,
    ) -> T {
        let spinner = Progress::styled_spinner(quiet, what, move || {
            let shown = Arc::new(stages);
            ProgressStyle::with_template("{spinner} {prefix} ({stages}) {elapsed}")
                .expect("valid template")
                .with_key(
                    "stages",
                    move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&stages_line(&shown));
                    },
                )
        });
        let done = work();
        spinner.finish();
        done
    }

    /// Called after each batch with the accesses seen and the raw bytes read.
    pub fn update(&self, accesses: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            if bar.length().is_some() {
                bar.set_position(bytes);
            }
            let seen = SEEN.lock().ok().and_then(|s| s.clone());
            bar.set_message(match seen {
                Some(refs) => format!(
                    "{} references, {accesses} sampled",
                    refs.load(Ordering::Relaxed)
                ),
                None => format!("{accesses} accesses"),
            });
        }
        self.print_said();
    }

    /// Prints the notes said since the last call ([`say`]), above the bar.
    pub fn print_said(&self) {
        let said = std::mem::take(&mut *SAID.lock().unwrap_or_else(|e| e.into_inner()));
        for note in said {
            match &self.bar {
                Some(bar) => bar.suspend(|| eprintln!("{note}")),
                None => eprintln!("{note}"),
            }
        }
    }

    /// Removes the bar (after the notes said while it was drawn).
    pub fn finish(&self) {
        self.print_said();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A trace that reports the accesses read through it, summed with its siblings', to a spinner
/// ([`Progress::spinner`]): for passes that pull several traces at once.
pub struct Counted<'a, R> {
    /// The trace read.
    pub inner: R,
    /// Accesses read through every sibling.
    pub total: &'a std::sync::atomic::AtomicU64,
    /// Where the total goes.
    pub progress: &'a Progress,
}

impl<R: cachescope::trace::AccessReader> cachescope::trace::AccessReader for Counted<'_, R> {
    fn read_batch(&mut self, batch: &mut cachescope::Batch) -> cachescope::Result<usize> {
        let n = self.inner.read_batch(batch)?;
        let total = n as u64
            + self
                .total
                .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        self.progress.update(total, 0);
        Ok(n)
    }

    fn diagnostics(&self) -> cachescope::trace::Diagnostics {
        self.inner.diagnostics()
    }
}

/// How many stages ended, then the ones running: `2/5 done · OPT's stack 45% · models…`
/// (short enough for a terminal line; finished stages leave it).
fn stages_line(stages: &[Arc<Stage>]) -> String {
    let done = stages
        .iter()
        .filter(|s| s.state() == StageState::Done)
        .count();
    let mut line = format!("{done}/{} done", stages.len());
    for s in stages {
        match s.state() {
            StageState::Running(Some(f)) => {
                line += &format!(" · {} {:.0}%", s.name(), f * 100.0);
            }
            StageState::Running(None) => line += &format!(" · {}…", s.name()),
            StageState::Waiting | StageState::Done => {}
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stages_line_shows_each_started_stage_as_it_stands() {
        let stages = vec![
            Stage::new("OPT's stack"),
            Stage::new("time-local footprint"),
            Stage::new("models"),
        ];
        assert_eq!(stages_line(&stages), "0/3 done");
        stages[0].start(200);
        stages[0].add(90);
        stages[1].start(10);
        stages[1].add(10);
        stages[1].finish();
        assert_eq!(stages_line(&stages), "1/3 done · OPT's stack 45%");
        stages[2].start(0);
        assert_eq!(stages_line(&stages), "1/3 done · OPT's stack 45% · models…");
    }
}
