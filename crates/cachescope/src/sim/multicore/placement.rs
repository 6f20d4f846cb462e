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
    index: HashMap<ThreadId, u32>,
    /// Unpinned threads placed so far.
    dealt: u32,
    /// The last thread asked about (threads come in runs).
    last: Option<ThreadPlacement>,
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
        match self.last {
            Some(p) if p.thread == thread => p.core,
            _ => self.place(thread),
        }
    }

    fn place(&mut self, thread: ThreadId) -> u32 {
        let core = match self.index.get(&thread) {
            Some(&core) => core,
            None => {
                let core = self.pins.get(&thread).copied().unwrap_or_else(|| {
                    self.dealt += 1;
                    (self.dealt - 1) % self.cores
                });
                self.index.insert(thread, core);
                self.seen.push(ThreadPlacement { thread, core });
                core
            }
        };
        self.last = Some(ThreadPlacement { thread, core });
        core
    }

    /// The threads seen so far and their cores, in order of first appearance.
    pub(super) fn threads(&self) -> &[ThreadPlacement] {
        &self.seen
    }
}
