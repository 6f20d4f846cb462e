//! [`RunHeap`]: the max-heap of one run of the OPT stack, four children a node.
//!
//! A run's heap sees three operations: replace its latest line by an earlier one (the carried
//! line usually lands a few levels down), add a line later than all (the end of the run), and
//! drop the entries of lines referenced since (they are the smallest, so they are only ever
//! dropped in bulk). Four children a node halve the levels a replacement walks against a
//! binary heap, and its four children sit in one or two cache lines.

/// A line and the time of its next reference; the heap order is by time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Entry {
    pub next: u64,
    pub id: u32,
}

/// A 4-ary max-heap of entries by time, the times and the ids in separate arrays (a node's
/// four children's times fill half a cache line). Ties, only ever between lines never
/// referenced again, are broken arbitrarily: which of them is where changes no stack distance.
#[derive(Clone, Debug, Default)]
pub(super) struct RunHeap {
    next: Vec<u64>,
    id: Vec<u32>,
}

impl RunHeap {
    pub fn len(&self) -> usize {
        self.next.len()
    }

    /// The latest entry; the heap must not be empty.
    pub fn max(&self) -> Entry {
        self.get(0)
    }

    fn get(&self, i: usize) -> Entry {
        Entry {
            next: self.next[i],
            id: self.id[i],
        }
    }

    fn set(&mut self, i: usize, e: Entry) {
        self.next[i] = e.next;
        self.id[i] = e.id;
    }

    /// Replaces the latest entry by `e` and returns it; the heap must not be empty.
    pub fn replace_max(&mut self, e: Entry) -> Entry {
        let out = self.get(0);
        self.sift_down(0, e);
        out
    }

    /// Adds `e`.
    pub fn push(&mut self, e: Entry) {
        let mut i = self.len();
        self.next.push(e.next);
        self.id.push(e.id);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.next[parent] >= e.next {
                break;
            }
            self.set(i, self.get(parent));
            i = parent;
        }
        self.set(i, e);
    }

    /// Keeps the entries `keep` accepts, and rebuilds the heap.
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        let mut k = 0;
        for i in 0..self.len() {
            let e = self.get(i);
            if keep(&e) {
                self.set(k, e);
                k += 1;
            }
        }
        self.next.truncate(k);
        self.id.truncate(k);
        for i in (0..k.div_ceil(4)).rev() {
            let e = self.get(i);
            self.sift_down(i, e);
        }
    }

    /// Drops everything, and the memory too unless it is small: small runs come and go with
    /// most references, and their memory is reused for the next run.
    pub fn clear(&mut self) {
        if self.next.capacity() > 4096 {
            (self.next, self.id) = (Vec::new(), Vec::new());
        } else {
            self.next.clear();
            self.id.clear();
        }
    }

    /// Puts `e` at `i` or below, moving later children up.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let n = self.len();
        loop {
            let first = 4 * i + 1;
            let big = if first + 4 <= n {
                // The latest of four, without branches.
                let c = &self.next[first..first + 4];
                let a = first + usize::from(c[1] > c[0]);
                let b = first + 2 + usize::from(c[3] > c[2]);
                if self.next[b] > self.next[a] { b } else { a }
            } else if first < n {
                (first..n).max_by_key(|&c| self.next[c]).expect("a child")
            } else {
                break;
            };
            if self.next[big] <= e.next {
                break;
            }
            self.set(i, self.get(big));
            i = big;
        }
        self.set(i, e);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Pushes, replacements of the maximum and bulk drops, against a sorted list.
        #[test]
        fn heap_keeps_the_maximum(ops in proptest::collection::vec((0u8..3, 0u64..50), 1..300)) {
            let (mut heap, mut sorted) = (RunHeap::default(), Vec::<u64>::new());
            for (i, &(op, t)) in ops.iter().enumerate() {
                let e = Entry { next: t, id: i as u32 };
                match op {
                    0 => {
                        heap.push(e);
                        sorted.push(t);
                    }
                    1 if !sorted.is_empty() => {
                        prop_assert_eq!(heap.replace_max(e).next, sorted.pop().unwrap());
                        sorted.push(t);
                    }
                    _ => {
                        heap.retain(|e| e.next > t);
                        sorted.retain(|&s| s > t);
                    }
                }
                sorted.sort_unstable();
                prop_assert_eq!(heap.len(), sorted.len());
                if let Some(&m) = sorted.last() {
                    prop_assert_eq!(heap.max().next, m);
                }
            }
        }
    }
}
