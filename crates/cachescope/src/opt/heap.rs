//! [`RunHeap`]: the max-heap of one run of the OPT stack, four children a node, and its keys.
//!
//! A run's heap sees three operations: replace its latest line by an earlier one (the carried
//! line usually lands a few levels down), add a line later than all (the end of the run), and
//! drop the entries of lines referenced since (they are the smallest, so they are only ever
//! dropped in bulk). Four children a node halve the levels a replacement walks against a
//! binary heap, and its four children sit in one or two cache lines.

/// A line and the time of its next reference, ordered by that time: the heap's entries and
/// the stack's top. Keys are distinct: times are, and lines never referenced again are told
/// apart by their ids (which of them is where changes no stack distance).
pub(super) trait Key: Copy + Ord + Default + std::fmt::Debug {
    /// The key of line `id` next referenced at `next` (`u64::MAX` for never); `next` must fit
    /// the key.
    fn new(next: u64, id: u32) -> Self;
    fn id(self) -> u32;
    /// The time of the next reference, `u64::MAX` for never.
    fn next(self) -> u64;
    fn never(self) -> bool {
        self.next() == u64::MAX
    }
    /// A line never referenced again whose id is not a line's (`u32::MAX` is left free): the
    /// latest key of all.
    fn latest() -> Self {
        Self::new(u64::MAX, u32::MAX)
    }
}

/// Times below `u32::MAX` (traces of fewer than 2^32 − 1 references) and the id in one word,
/// `next << 32 | id`, never as `u32::MAX`: one load and one compare per heap node, and a third
/// less memory than [`Wide`].
impl Key for u64 {
    fn new(next: u64, id: u32) -> u64 {
        next.min(u64::from(u32::MAX)) << 32 | u64::from(id)
    }
    fn id(self) -> u32 {
        self as u32
    }
    fn next(self) -> u64 {
        match self >> 32 {
            t if t == u64::from(u32::MAX) => u64::MAX,
            t => t,
        }
    }
}

/// Any time: the key of traces of 2^32 − 1 references or more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Wide {
    next: u64,
    id: u32,
}

impl Key for Wide {
    fn new(next: u64, id: u32) -> Wide {
        Wide { next, id }
    }
    fn id(self) -> u32 {
        self.id
    }
    fn next(self) -> u64 {
        self.next
    }
}

/// A 4-ary max-heap of keys (a node's four children's packed keys fill half a cache line).
#[derive(Clone, Debug, Default)]
pub(super) struct RunHeap<K> {
    keys: Vec<K>,
}

impl<K: Key> RunHeap<K> {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The latest entry; the heap must not be empty.
    pub fn max(&self) -> K {
        self.keys[0]
    }

    /// Replaces the latest entry by `e` and returns it; the heap must not be empty.
    pub fn replace_max(&mut self, e: K) -> K {
        let out = self.keys[0];
        self.sift_down(0, e);
        out
    }

    /// Removes the latest entry and returns it; the heap must not be empty.
    pub fn pop_max(&mut self) -> K {
        let last = self.keys.pop().expect("a heap with an entry");
        if self.keys.is_empty() {
            return last;
        }
        let out = self.keys[0];
        self.sift_down(0, last);
        out
    }

    /// Adds `e`.
    pub fn push(&mut self, e: K) {
        let mut i = self.len();
        self.keys.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.keys[parent] >= e {
                break;
            }
            self.keys[i] = self.keys[parent];
            i = parent;
        }
        self.keys[i] = e;
    }

    /// Keeps the entries `keep` accepts, and rebuilds the heap.
    pub fn retain(&mut self, keep: impl FnMut(&K) -> bool) {
        self.keys.retain(keep);
        for i in (0..self.len().div_ceil(4)).rev() {
            self.sift_down(i, self.keys[i]);
        }
    }

    /// Every entry, in heap order.
    pub fn keys(&self) -> &[K] {
        &self.keys
    }

    /// Drops everything, and the memory too unless it is small: small runs come and go with
    /// most references, and their memory is reused for the next run.
    pub fn clear(&mut self) {
        if self.keys.capacity() > 8192 {
            self.keys = Vec::new();
        } else {
            self.keys.clear();
        }
    }

    /// Puts `e` at `i` or below, moving later children up.
    fn sift_down(&mut self, mut i: usize, e: K) {
        let n = self.len();
        loop {
            let first = 4 * i + 1;
            let big = if first + 4 <= n {
                // The latest of four, without branches.
                let c = &self.keys[first..first + 4];
                let a = first + usize::from(c[1] > c[0]);
                let b = first + 2 + usize::from(c[3] > c[2]);
                if self.keys[b] > self.keys[a] { b } else { a }
            } else if first < n {
                (first..n).max_by_key(|&c| self.keys[c]).expect("a child")
            } else {
                break;
            };
            if self.keys[big] <= e {
                break;
            }
            self.keys[i] = self.keys[big];
            i = big;
        }
        self.keys[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Pushes, replacements and removals of the maximum and bulk drops, against a sorted
        /// list.
        #[test]
        fn heap_keeps_the_maximum(ops in proptest::collection::vec((0u8..4, 0u64..50), 1..300)) {
            let (mut heap, mut sorted) = (RunHeap::<u64>::default(), Vec::<u64>::new());
            for (i, &(op, t)) in ops.iter().enumerate() {
                let e = u64::new(t, i as u32);
                match op {
                    0 => {
                        heap.push(e);
                        sorted.push(t);
                    }
                    1 if !sorted.is_empty() => {
                        prop_assert_eq!(heap.replace_max(e).next(), sorted.pop().unwrap());
                        sorted.push(t);
                    }
                    2 if !sorted.is_empty() => {
                        prop_assert_eq!(heap.pop_max().next(), sorted.pop().unwrap());
                    }
                    _ => {
                        heap.retain(|e| e.next() > t);
                        sorted.retain(|&s| s > t);
                    }
                }
                sorted.sort_unstable();
                prop_assert_eq!(heap.len(), sorted.len());
                if let Some(&m) = sorted.last() {
                    prop_assert_eq!(heap.max().next(), m);
                }
            }
        }
    }
}
