//! A forked child in the stream (`--trace-children`; the tool's `cs_fork.c`): the process that
//! writes the stream forks, and its child writes it until it exits, as a stream of its own
//! (a header, its threads from 1, an end record), while the parent pauses; then the parent
//! goes on. Children nest: a child may hand the stream to its own child.
//!
//! The reader keeps the parent's place ([`Parent`]) while the child writes: its word count
//! (the parent's end record counts its own words only), its threads (the child's threads are
//! numbered after every thread seen so far, so ids never collide) and its runs of
//! instructions (the child inherits the parent's translated code, so it starts with a copy).

use std::io::Read;

use super::{State, ToolReader};
use crate::error::{Result, corrupt};
use crate::trace::native::InstrRuns;

/// The process handed the stream to a forked child.
pub(super) const HANDED: u64 = 0;
/// The fork failed: no child follows.
pub(super) const FAILED: u64 = 1;
/// The child has gone and the parent goes on; the records it made meanwhile in bits 2-47.
pub(super) const RESUMED: u64 = 2;

/// Records a parent may make while its child holds the stream before a note says so.
const DROPPED_NOTED: u64 = 10_000;

/// Where a parent stood when its child took the stream.
#[derive(Debug)]
pub(super) struct Parent {
    /// Its stream's first word, and the words read up to its fork mark (included).
    instance_start: u64,
    words: u64,
    thread: u32,
    thread_base: u32,
    execs_seen: bool,
    runs: InstrRuns,
}

impl<R: Read + Send> ToolReader<R> {
    /// The fork escape (its word not yet counted) with argument `arg`.
    pub(super) fn fork_mark(&mut self, arg: u64) -> Result<()> {
        match arg & 3 {
            HANDED => {
                self.forks.push(Parent {
                    instance_start: self.instance_start,
                    words: self.words + 1,
                    thread: self.thread,
                    thread_base: self.thread_base,
                    execs_seen: self.exec_seen,
                    runs: self.runs.clone(),
                });
                // The child's stream opens with its own header.
                self.thread_base = self.threads;
                self.child_header = true;
                self.child_ended = false;
                self.followed_children += 1;
            }
            FAILED => {
                self.forks.pop();
                self.child_header = false;
                self.followed_children = self.followed_children.saturating_sub(1);
            }
            RESUMED => {
                let Some(parent) = self.forks.pop() else {
                    return Err(corrupt(
                        &self.source,
                        format!(
                            "a parent resumes at word {} with no child before",
                            self.words
                        ),
                    ));
                };
                if !self.child_ended {
                    self.fork_notes.push(
                        "a child process the program waited for ended without finishing its \
                         part of the stream (killed?): its references stop where it did"
                            .into(),
                    );
                }
                // A shell's few hundred records between its fork and its wait are not worth
                // a word; a program that works on while its child runs is.
                let dropped = arg >> 2;
                if dropped > DROPPED_NOTED {
                    self.fork_notes.push(format!(
                        "the program made about {dropped} records while its followed child \
                         ran (another thread, or work between the fork and the wait): not \
                         recorded"
                    ));
                }
                // The parent's words: those before its fork, then from here on.
                let child_words = self.words - parent.words;
                self.instance_start = parent.instance_start + child_words;
                self.thread = parent.thread;
                self.thread_base = parent.thread_base;
                self.exec_seen = parent.execs_seen;
                self.runs = parent.runs;
                self.child_ended = false;
                self.state = State::Open;
            }
            _ => {
                return Err(corrupt(
                    &self.source,
                    format!("an unknown fork mark {arg:#x} at word {}", self.words),
                ));
            }
        }
        Ok(())
    }

    /// The end record of a child's stream (a parent waits to go on): not the stream's end.
    pub(super) fn child_end(&mut self) -> bool {
        if self.forks.is_empty() {
            return false;
        }
        self.child_ended = true;
        true
    }

    /// The input ended while a parent waited for its child: complete if the child finished
    /// (the program exited before the child it handed the stream to, which kept writing).
    pub(super) fn ended_in_child(&mut self) -> bool {
        if self.forks.is_empty() || !self.child_ended {
            return false;
        }
        self.fork_notes.push(
            "the program exited before a child process it had handed the recording to; the \
             trace ends with that child"
                .into(),
        );
        self.forks.clear();
        true
    }
}
