//! Which thread made each access of a [`Batch`]: the switches between threads.
//!
//! A batch keeps a list of [`ThreadRun`]s in a canonical form: starts strictly increase and
//! are at most the batch's length, each run's thread differs from the thread before it (the
//! main thread before the first run), and only the last run may be empty (it starts at the
//! length: the thread of the next access pushed). Accesses before the first run are the main
//! thread's. So a single-threaded batch has no runs at all, and two batches with the same
//! accesses by the same threads have the same runs.

use std::ops::Range;

use super::Batch;
use crate::access::{MAIN_THREAD, ThreadId};

/// From access `start` of a batch on (up to the next run), the accesses are `thread`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadRun {
    /// Index of the run's first access in its batch.
    pub start: u32,
    /// The thread.
    pub thread: ThreadId,
}

impl Batch {
    /// The thread of the next access pushed.
    pub fn current_thread(&self) -> ThreadId {
        self.switches.last().map_or(MAIN_THREAD, |r| r.thread)
    }

    /// Makes the accesses pushed from now on `thread`'s.
    pub fn set_thread(&mut self, thread: ThreadId) {
        let len = self.len() as u32;
        switch_to(&mut self.switches, len, thread);
    }

    /// The thread switches inside the accesses (none for a single-threaded batch of the main
    /// thread), in canonical form, without a switch after the last access.
    pub fn thread_switches(&self) -> &[ThreadRun] {
        let len = self.len() as u32;
        match self.switches.last() {
            Some(r) if r.start == len => &self.switches[..self.switches.len() - 1],
            _ => &self.switches,
        }
    }

    /// Replaces the thread switches of the accesses already in the batch (a decoder's path:
    /// it fills the columns, then says whose they are). An error says how `runs` breaks the
    /// canonical form: starts not increasing or past the accesses, a run repeating the thread
    /// before it.
    pub fn set_thread_switches(&mut self, runs: &[ThreadRun]) -> Result<(), String> {
        let len = self.len() as u32;
        let mut before = (None, MAIN_THREAD);
        for r in runs {
            if before.0.is_some_and(|s| r.start <= s) || r.start >= len {
                return Err(format!(
                    "thread switch at access {} is out of order or past the {len} accesses",
                    r.start
                ));
            }
            if r.thread == before.1 {
                return Err(format!(
                    "thread switch at access {} repeats thread {}",
                    r.start, r.thread
                ));
            }
            before = (Some(r.start), r.thread);
        }
        self.switches.clear();
        self.switches.extend_from_slice(runs);
        Ok(())
    }

    /// The runs of accesses by one thread, in order: every access in exactly one, none empty.
    pub fn thread_runs(&self) -> ThreadRuns<'_> {
        ThreadRuns {
            switches: &self.switches,
            len: self.len(),
            at: 0,
            thread: MAIN_THREAD,
        }
    }

    /// The thread of access `i`.
    pub fn thread_at(&self, i: usize) -> ThreadId {
        let after = self.switches.partition_point(|r| r.start as usize <= i);
        after
            .checked_sub(1)
            .map_or(MAIN_THREAD, |k| self.switches[k].thread)
    }

    /// The one thread of every access, if they are all one thread's (the main thread's for
    /// an empty batch).
    pub fn single_thread(&self) -> Option<ThreadId> {
        let mut runs = self.thread_runs();
        match (runs.next(), runs.next()) {
            (None, _) => Some(self.current_thread()),
            (Some((_, t)), None) => Some(t),
            _ => None,
        }
    }

    /// Drops the switches at or past `len` (after a truncation).
    pub(super) fn truncate_switches(&mut self, len: usize) {
        let keep = self.switches.partition_point(|r| (r.start as usize) < len);
        self.switches.truncate(keep);
    }
}

/// Appends a switch to `thread` at access `at` (no earlier than the last switch) to canonical
/// `switches`, keeping them canonical: the batch's and the native encoder's one rule.
pub(crate) fn switch_to(switches: &mut Vec<ThreadRun>, at: u32, thread: ThreadId) {
    let current = |s: &[ThreadRun]| s.last().map_or(MAIN_THREAD, |r| r.thread);
    if thread == current(switches) {
        return;
    }
    if switches.last().is_some_and(|r| r.start == at) {
        // Nothing was pushed since the last switch: it is replaced, or undone.
        switches.pop();
        if thread == current(switches) {
            return;
        }
    }
    switches.push(ThreadRun { start: at, thread });
}

/// The iterator of [`Batch::thread_runs`]: `(accesses, thread)`.
#[derive(Clone, Debug)]
pub struct ThreadRuns<'a> {
    switches: &'a [ThreadRun],
    len: usize,
    at: usize,
    thread: ThreadId,
}

impl Iterator for ThreadRuns<'_> {
    type Item = (Range<usize>, ThreadId);

    fn next(&mut self) -> Option<(Range<usize>, ThreadId)> {
        while self.at < self.len {
            let (end, next) = match self.switches.split_first() {
                Some((r, rest)) => {
                    self.switches = rest;
                    (r.start as usize, Some(r.thread))
                }
                None => (self.len, None),
            };
            let run = (self.at..end, self.thread);
            self.at = end;
            if let Some(t) = next {
                self.thread = t;
            }
            if !run.0.is_empty() {
                return Some(run);
            }
        }
        None
    }
}
