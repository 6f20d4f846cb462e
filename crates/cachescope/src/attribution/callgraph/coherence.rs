//! Coherence misses: each thread's data references also run in a private D1 of its own (the
//! threads on cores of their own, kept coherent by invalidation). A write invalidates the
//! line in every other thread's D1; a miss in a thread's D1 on a line that an invalidation
//! took from it is a coherence miss (it would have hit but for the other thread's write).
//! At most one per reference, as Cachegrind counts one miss for an access that straddles two
//! lines.

use crate::access::{AccessKind, ThreadId};
use crate::sim::Cache;

/// One thread's D1 and the lines invalidations took from it.
#[derive(Debug)]
struct Private {
    thread: ThreadId,
    cache: Cache,
    lost: hashbrown::HashSet<u64, foldhash::fast::FixedState>,
}

/// Every thread's private D1.
#[derive(Debug)]
pub(super) struct Coherence {
    threads: Vec<Private>,
    /// The last thread's index in `threads` (a thread runs for long slices).
    last: usize,
}

impl Coherence {
    /// Private D1s, the first of `first`'s, holding `d1`; later threads start empty.
    pub(super) fn new(d1: Cache, first: ThreadId) -> Coherence {
        Coherence {
            threads: vec![Private {
                thread: first,
                cache: d1,
                lost: Default::default(),
            }],
            last: 0,
        }
    }

    fn index(&mut self, thread: ThreadId) -> usize {
        if self.threads[self.last].thread == thread {
            return self.last;
        }
        let i = match self.threads.iter().position(|p| p.thread == thread) {
            Some(i) => i,
            None => {
                let geometry = self.threads[0].cache.geometry();
                let cache = Cache::new(geometry, crate::sim::Policy::Lru)
                    .expect("the geometry of an existing cache");
                self.threads.push(Private {
                    thread,
                    cache,
                    lost: Default::default(),
                });
                self.threads.len() - 1
            }
        };
        self.last = i;
        i
    }

    /// A data reference of `thread` to lines `first..=last` (one or two): 1 if it is a
    /// coherence miss.
    pub(super) fn access(
        &mut self,
        thread: ThreadId,
        first: u64,
        last: u64,
        kind: AccessKind,
    ) -> u64 {
        let me = self.index(thread);
        let lines = [first, last];
        let lines = &lines[..1 + usize::from(first != last)];
        let mut coherence = false;
        let p = &mut self.threads[me];
        for &line in lines {
            if !p.cache.access(line) {
                coherence |= p.lost.remove(&line);
            }
        }
        if kind != AccessKind::Load {
            for (i, other) in self.threads.iter_mut().enumerate() {
                for &line in lines {
                    if i != me && other.cache.invalidate(line) {
                        other.lost.insert(line);
                    }
                }
            }
        }
        u64::from(coherence)
    }
}
