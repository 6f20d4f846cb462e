//! [`Placement`]: which core runs each thread. Pinned threads go where they are pinned; the
//! others are dealt round-robin in order of first appearance (the first unpinned thread to
//! appear on core 0, the next on core 1, …), so a thread keeps its core for the whole run.

use hashbrown::HashMap;

use crate::access::ThreadId;

/// A thread and its core, in the order threads first appeared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ThreadPlacement {
    /// The thread (the recording's id).
    pub thread: ThreadId,
    /// Its core, from 0.
    pub core: u32,
}

#[derive(Clone, Debug)]
pub(super) struct Placement {
    cores: u32,
    pins: HashMap<ThreadId, u32>,
    /// Every thread seen, in order of first appearance.
    seen: Vec<ThreadPlacement>,
    /// Each thread's core and its place in `seen`.
    index: HashMap<ThreadId, (u32, usize)>,
    /// Unpinned threads placed so far.
    dealt: u32,
    /// The last thread asked about, its core and place (threads come in runs).
    last: Option<(ThreadId, u32, usize)>,
}

impl Placement {
    pub(super) fn new(cores: u32, pins: &[(ThreadId, u32)]) -> Placement {
        Placement {
            cores,
            pins: pins.iter().copied().collect(),
            seen: Vec::new(),
            index: HashMap::new(),
            dealt: 0,
            last: None,
        }
    }

    /// The core of `thread`, placing it on its first appearance.
    #[inline]
    pub(super) fn core_of(&mut self, thread: ThreadId) -> u32 {
        self.place(thread).0
    }

    /// The core of `thread` and its place among the threads in order of first appearance,
    /// placing it on its first appearance.
    #[inline]
    pub(super) fn place(&mut self, thread: ThreadId) -> (u32, usize) {
        match self.last {
            Some((t, core, slot)) if t == thread => (core, slot),
            _ => self.look_up(thread),
        }
    }

    fn look_up(&mut self, thread: ThreadId) -> (u32, usize) {
        let (core, slot) = match self.index.get(&thread) {
            Some(&found) => found,
            None => {
                let core = self.pins.get(&thread).copied().unwrap_or_else(|| {
                    self.dealt += 1;
                    (self.dealt - 1) % self.cores
                });
                let slot = self.seen.len();
                self.index.insert(thread, (core, slot));
                self.seen.push(ThreadPlacement { thread, core });
                (core, slot)
            }
        };
        self.last = Some((thread, core, slot));
        (core, slot)
    }

    /// The threads seen so far and their cores, in order of first appearance.
    pub(super) fn threads(&self) -> &[ThreadPlacement] {
        &self.seen
    }
}
