//! The previous all-sizes algorithm, kept as the reference the run stack is tested against:
//! Mattson's OPT stack update, jumping from record to record with a max segment tree over
//! depths (O((1 + records) · log footprint) per reference, 0.16 M references/s on Zipf loads).
//!
//! On a reference to the line at depth `d`, it goes to the top; the old top is carried down,
//! and at each depth from 2 to `d − 1` the carried line and the line there are compared: the
//! one referenced sooner stays, the other is carried on; the line carried last fills depth `d`.
//! The carried line changes only at the *records*, the depths whose line is referenced later
//! than the line being carried.

/// Stack depth of a line not yet seen.
const ABSENT: u32 = u32::MAX;

/// Mattson's OPT stack over dense line ids; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct MattsonStack {
    /// The line id at each depth (0 is the top).
    stack: Vec<u32>,
    /// The depth of each line id.
    depth: Vec<u32>,
    /// Max segment tree of next-reference times over depths: leaves at `cap..2·cap`, 0 empty.
    tree: Vec<u64>,
    cap: usize,
    /// `hist[d]`: references found at depth `d` (0-based), hits in caches of more than d lines.
    hist: Vec<u64>,
    cold: u64,
    refs: u64,
}

impl MattsonStack {
    /// An empty stack.
    pub fn new() -> MattsonStack {
        MattsonStack::default()
    }

    /// References line `id` (dense ids from 0), whose next reference is at time `next`
    /// (`u64::MAX` for never; times must be distinct and later than the present).
    pub fn access(&mut self, id: u32, next: u64) {
        self.refs += 1;
        let i = id as usize;
        if i >= self.depth.len() {
            self.depth.resize(i + 1, ABSENT);
        }
        let d = match self.depth[i] {
            ABSENT => {
                self.cold += 1;
                self.stack.push(id);
                if self.stack.len() > self.cap {
                    self.grow();
                }
                self.stack.len() - 1
            }
            d => {
                let d = d as usize;
                if d >= self.hist.len() {
                    self.hist.resize(d + 1, 0);
                }
                self.hist[d] += 1;
                d
            }
        };
        if d == 0 {
            self.place(0, id, next);
            return;
        }
        let (mut carried, mut time) = (self.stack[0], self.tree[self.cap]);
        self.place(0, id, next);
        let mut from = 1;
        while let Some(j) = self.first_later(from, time).filter(|&j| j < d) {
            let (out, out_time) = (self.stack[j], self.tree[self.cap + j]);
            self.place(j, carried, time);
            (carried, time, from) = (out, out_time, j + 1);
        }
        self.place(d, carried, time);
    }

    fn place(&mut self, at: usize, id: u32, time: u64) {
        self.stack[at] = id;
        self.depth[id as usize] = at as u32;
        self.set(at, time);
    }

    fn set(&mut self, at: usize, time: u64) {
        let mut i = self.cap + at;
        self.tree[i] = time;
        while i > 1 {
            i /= 2;
            self.tree[i] = self.tree[2 * i].max(self.tree[2 * i + 1]);
        }
    }

    /// The first depth at or beyond `from` whose next reference is later than `time`.
    fn first_later(&self, from: usize, time: u64) -> Option<usize> {
        if from >= self.cap {
            return None;
        }
        let mut i = self.cap + from;
        while self.tree[i] <= time {
            // Climb while a right child, then step to the subtree on the right.
            while i & 1 == 1 {
                i >>= 1;
            }
            if i == 0 {
                return None;
            }
            i += 1;
        }
        while i < self.cap {
            i *= 2;
            if self.tree[i] <= time {
                i += 1;
            }
        }
        Some(i - self.cap)
    }

    /// Doubles the tree's capacity (amortised O(1) per line).
    fn grow(&mut self) {
        let cap = (self.cap * 2).max(64);
        let mut tree = vec![0; 2 * cap];
        tree[cap..cap + self.cap].copy_from_slice(&self.tree[self.cap..]);
        for i in (1..cap).rev() {
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
        (self.tree, self.cap) = (tree, cap);
    }

    /// References seen.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// First references (misses in every cache).
    pub fn cold(&self) -> u64 {
        self.cold
    }

    /// Misses for each of `lines` (any order), from one cumulative sum.
    pub fn misses_at(&self, lines: &[u64]) -> Vec<u64> {
        let mut cumulative = Vec::with_capacity(self.hist.len() + 1);
        let mut sum = 0;
        cumulative.push(0);
        for &h in &self.hist {
            sum += h;
            cumulative.push(sum);
        }
        lines
            .iter()
            .map(|&l| self.refs - cumulative[(l.min(self.hist.len() as u64)) as usize])
            .collect()
    }
}
