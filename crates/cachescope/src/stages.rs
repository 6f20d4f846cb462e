//! [`Stage`]: a piece of the work after a pass (OPT's next uses and stack, a model run over the
//! spilled references, the models) that counts how far it is, so that a front end can show
//! each one's progress while they run on several threads. A leaf module: the stages are
//! counters only; what they mean and how they are shown belong to their owners.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One stage: references (or any unit) done of a total, and whether it ended. Shared between
/// the thread doing the work and the one showing it; updates are relaxed counters, read at
/// the display's pace, so a stage costs nothing measurable (one add per block of references).
#[derive(Debug)]
pub struct Stage {
    name: &'static str,
    total: AtomicU64,
    done: AtomicU64,
    started: AtomicBool,
    finished: AtomicBool,
}

impl Stage {
    /// A stage not started yet, named `name` for display.
    pub fn new(name: &'static str) -> Arc<Stage> {
        Arc::new(Stage {
            name,
            total: AtomicU64::new(0),
            done: AtomicU64::new(0),
            started: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        })
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Starts it with `total` units to do (0: a stage that only starts and ends).
    pub fn start(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.started.store(true, Ordering::Release);
    }

    /// Counts `n` more units done.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Ends it.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// Where it stands now.
    pub fn state(&self) -> StageState {
        if self.finished.load(Ordering::Acquire) {
            StageState::Done
        } else if !self.started.load(Ordering::Acquire) {
            StageState::Waiting
        } else {
            let total = self.total.load(Ordering::Relaxed);
            let done = self.done.load(Ordering::Relaxed).min(total);
            StageState::Running(if total == 0 {
                None
            } else {
                Some(done as f64 / total as f64)
            })
        }
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Units to do, once started.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

/// A stage's state, as [`Stage::state`] reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StageState {
    /// Not started.
    Waiting,
    /// Running: the fraction done, when it counts units.
    Running(Option<f64>),
    /// Ended.
    Done,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_goes_from_waiting_through_its_fraction_to_done() {
        let s = Stage::new("work");
        assert_eq!(s.state(), StageState::Waiting);
        s.start(8);
        assert_eq!(s.state(), StageState::Running(Some(0.0)));
        s.add(2);
        assert_eq!(s.state(), StageState::Running(Some(0.25)));
        s.add(100);
        assert_eq!(
            s.state(),
            StageState::Running(Some(1.0)),
            "clamped at the total"
        );
        s.finish();
        assert_eq!(s.state(), StageState::Done);
        let t = Stage::new("no units");
        t.start(0);
        assert_eq!(t.state(), StageState::Running(None));
    }
}
