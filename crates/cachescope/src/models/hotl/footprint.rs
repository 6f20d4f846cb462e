//! The average footprint of every window length in one linear pass: [`FootprintAnalysis`]
//! builds a [`Footprint`], which answers `fp(w)` for any `w` by the Xiang formula
//! (Xiang et al., PACT 2011; HOTL Lemma 2.1, in docs/definitions.md's conventions):
//!
//! `fp(w) = m − [ Σ_lines (f − w)⁺ + Σ_lines (l − w)⁺ + Σ_reuses (rt − w)⁺ ] / (n − w + 1)`
//!
//! with `n` references, `m` distinct lines, `f` the 1-based position of a line's first
//! reference, `l = n + 1 −` the position of its last, and `rt = i − j ≥ 1` the reuse time.
//!
//! The pass keeps one table entry per distinct line (line → latest position, 21–43 bytes per
//! line) and, per term of the formula, a histogram with the count and exact sum of its values
//! (one bin per value below 2^16, then 256 per octave), so memory grows with distinct lines
//! and the logarithm of the trace length, never with the trace length. Reuse times below
//! `2^16` (the most frequent, and the hot path) go to a dense array of 32-bit counts, folded
//! into the sums before they could wrap.
//!
//! ## Exactness
//! `fp(w)` is exact (to `f64` rounding) for `w` below the layout's exact limit (2^16 by
//! default), for every window of the 256-per-octave grid ([`Footprint::points`]), for the
//! windows listed to [`FootprintAnalysis::new`], and for `w ≥ n`. Elsewhere
//! [`Footprint::fp_bounds`] brackets it and [`Footprint::fp`] returns the midpoint. Only the
//! values in the one bin holding `w` (of width `len ≤ w/256`) are uncertain, so the bracket is
//! at most `1.25·count·len/(n − w + 1)` lines wide (`count` the values in that bin): about
//! 10⁻⁶ of `fp` on the 400 K-reference traces of `tests/hotl_footprint.rs`.

use super::sums::WindowSums;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::{Options, ReuseTimes, for_each_chunk_of};

use crate::reuse::table::LineTable;

mod chunks;
mod forgotten;
mod result;
mod sampled;
pub use result::{Footprint, FootprintPoint};

/// References handled per chunk: first every home slot of the chunk is prefetched (cache
/// misses that overlap; prefetch hints instead of loads measured 1.2–1.4x on zipf over 64 Ki
/// and 1 Mi lines, since a load holds up retirement while it misses), then the chunk is
/// processed with its slots in cache.
/// Measured on zipf streams over 64 Ki and 256 Ki lines (CPU time, best of 5): 64 and 128
/// are within noise of each other and about 5 % faster than 32.
const CHUNK: usize = 64;

/// Reuse times below `2^DENSE_BITS` are counted in a dense array of `u32`.
const DENSE_BITS: u32 = 16;

/// Accumulates the Xiang formula's histograms over a trace; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct FootprintAnalysis {
    options: Options,
    table: LineTable,
    /// References so far: the position of the latest.
    now: u64,
    /// The latest reference's line (meaningless before the first).
    prev: u64,
    /// True when `prev` was referenced more than once in a row just now: its table entry
    /// holds the position of the first of those references, not of the latest.
    run_open: bool,
    /// Counts of reuse times below `dense.len() − 1`, not yet folded into `reuse`; the last
    /// entry counts the longer ones, which are recorded apart (see [`FootprintAnalysis::run`]).
    dense: Vec<u32>,
    /// References since `dense` was last folded.
    unfolded: u64,
    /// Fold before `unfolded` passes this (`u32::MAX`; small in tests).
    fold_limit: u64,
    reuse: WindowSums,
    first: WindowSums,
    listed: Vec<u64>,
    /// `(line, position)` of every first reference, in order, when the analysis is one chunk
    /// of a chunked run (`crate::parallel`): what the merge resolves against earlier chunks.
    first_lines: Option<Vec<(u64, u64)>>,
    /// The rate of a sampled stream's lines (1 for a full stream): `sampled.rs`.
    rate: f64,
    /// When the table forgets the lines a fixed-size sample dropped (`sampled.rs`).
    forgetting: crate::spatial::Forgetting,
    /// The last positions of the lines forgotten.
    forgotten: forgotten::Forgotten,
}

impl FootprintAnalysis {
    /// An analysis of the references `options` counts, with `fp` exact at every window of
    /// `windows` as well as on the 256-per-octave grid. Errors on a window of 0.
    pub fn new(options: Options, windows: &[u64]) -> Result<FootprintAnalysis> {
        if windows.contains(&0) {
            return Err(Error::InvalidParameter {
                name: "footprint window",
                message: "0 is not a window length; windows hold at least one reference".into(),
            });
        }
        let mut listed = windows.to_vec();
        listed.sort_unstable();
        listed.dedup();
        let layout = options.layout;
        let dense = (1usize << DENSE_BITS.min(layout.exact_bits())) + 1;
        Ok(FootprintAnalysis {
            options,
            table: LineTable::default(),
            now: 0,
            prev: 0,
            run_open: false,
            dense: vec![0; dense],
            unfolded: 0,
            fold_limit: u64::from(u32::MAX),
            reuse: WindowSums::new(layout, &listed),
            first: WindowSums::new(layout, &listed),
            listed,
            first_lines: None,
            rate: 1.0,
            forgetting: Default::default(),
            forgotten: Default::default(),
        })
    }

    /// Writes the latest position of a line referenced several times in a row into the table.
    fn close_run(&mut self) {
        if self.run_open {
            self.table.replace(self.prev, self.now);
            self.run_open = false;
        }
    }

    /// References counted so far.
    pub fn refs(&self) -> u64 {
        self.now
    }

    /// Distinct lines so far (those a sampled stream's table forgot included).
    pub fn distinct_lines(&self) -> u64 {
        self.table.len() as u64 + self.forgotten.len()
    }

    /// Heap bytes held (the line table, the forgotten lines' positions, the dense counts and
    /// the sums).
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes() + self.forgotten.heap_bytes() + self.dense.len() * 4
    }

    /// The footprint of the references seen so far. O(distinct lines) for the last positions.
    pub fn finish(&self) -> Footprint {
        let (reuse, last) = self.reuse_and_last();
        self.footprint(reuse, last)
    }

    /// [`FootprintAnalysis::finish`] and the reuse-time histograms of the same references,
    /// equal to those a [`ReuseTimeAnalysis`](crate::reuse::ReuseTimeAnalysis) fed them gives:
    /// this analysis measures the same reuse times and positions in bins of the same layout,
    /// so a pass that needs both runs one. The last positions are walked once.
    pub fn finish_with_reuse_times(&self) -> (Footprint, ReuseTimes) {
        let (reuse, last) = self.reuse_and_last();
        let times = self.histograms(&reuse, &last);
        (self.footprint(reuse, last), times)
    }

    fn footprint(&self, reuse: WindowSums, last: WindowSums) -> Footprint {
        let (first, distinct) = self.first_and_distinct();
        Footprint::from_sums(
            self.options.line_size.bytes(),
            self.now,
            distinct,
            reuse,
            first,
            last,
            self.listed.clone(),
        )
    }

    fn histograms(&self, reuse: &WindowSums, last: &WindowSums) -> ReuseTimes {
        let (first, distinct) = self.first_and_distinct();
        ReuseTimes {
            line_size: self.options.line_size.bytes(),
            refs: self.now,
            distinct_lines: distinct,
            reuse_time: reuse.histogram(),
            first: first.histogram(),
            last: last.histogram(),
        }
    }

    /// The reuse-time sums with the dense counts folded in, and the sums of
    /// `l = n + 1 − (position of the line's last reference)`.
    fn reuse_and_last(&self) -> (WindowSums, WindowSums) {
        let mut reuse = self.reuse.clone();
        fold(&mut reuse, &self.dense);
        let n = self.now;
        let mut last = WindowSums::new(self.options.layout, &self.listed);
        for (line, p) in self.table.entries() {
            let p = if self.run_open && line == self.prev {
                n
            } else {
                p
            };
            last.record(n + 1 - p);
        }
        self.forgotten.for_each(|p| last.record(n + 1 - p));
        self.scaled(reuse, last)
    }

    /// Processes one chunk of line addresses.
    ///
    /// Whether a reuse time fits the dense array depends on the data, so a branch on it is
    /// mispredicted often; instead every reuse time is counted in the dense array (the long
    /// ones in its last entry) and the long ones are also appended, without a branch, to a
    /// list recorded after the chunk (measured 20–25 % faster than branching, zipf over 64 Ki
    /// and 256 Ki lines).
    ///
    /// A reference to the same line as the one before (`rt = 1`, common in real traces: a
    /// line's words in a row) skips the table: it is counted in a register, and the line's
    /// position is written once when the run ends (`run_open`). Besides a lookup, this saves
    /// the chain of increments of one counter, each waiting for the last (measured 1.5–2× on
    /// Valgrind traces of `gzip` and `sort`, no change on streams without such runs).
    #[inline]
    fn run(&mut self, chunk: &[u64]) {
        let table = &mut self.table;
        for &l in chunk {
            table.prefetch(l);
        }
        let dense = &mut self.dense[..];
        let long = dense.len() as u64 - 1;
        let mut deferred = [0u64; CHUNK];
        let mut k = 0;
        let mut now = self.now;
        let (mut prev, mut run_open) = (self.prev, self.run_open);
        let mut ones = 0u32;
        for &l in chunk {
            now += 1;
            if l == prev && now > 1 {
                ones += 1;
                run_open = true;
                continue;
            }
            if run_open {
                table.replace(prev, now - 1);
                run_open = false;
            }
            match table.replace(l, now) {
                Some(j) => {
                    let rt = now - j;
                    dense[rt.min(long) as usize] += 1;
                    deferred[k] = rt;
                    k += usize::from(rt >= long);
                }
                None => {
                    self.first.record(now);
                    if let Some(v) = self.first_lines.as_mut() {
                        v.push((l, now));
                    }
                }
            }
            prev = l;
        }
        dense[1] += ones;
        (self.now, self.prev, self.run_open) = (now, prev, run_open);
        for &rt in &deferred[..k] {
            self.reuse.record(rt);
        }
        self.unfolded += chunk.len() as u64;
    }
}

/// Adds dense counts into `sums` (all but the last entry, whose reuses are recorded apart).
fn fold(sums: &mut WindowSums, dense: &[u32]) {
    for (rt, &c) in dense[..dense.len() - 1].iter().enumerate() {
        if c > 0 {
            sums.add_exact(rt as u64, u64::from(c));
        }
    }
}

impl FootprintAnalysis {
    /// Folds the dense counts into the sums if `coming` more references could make a count
    /// wrap.
    #[inline]
    fn make_room(&mut self, coming: usize) {
        if self.unfolded + coming as u64 > self.fold_limit {
            fold(&mut self.reuse, &self.dense);
            self.dense.fill(0);
            self.unfolded = 0;
        }
    }

    /// Observes counted references given as line addresses (for [`super::sampling`]).
    pub(crate) fn observe_lines(&mut self, lines: &[u64]) {
        for part in lines.chunks(CHUNK) {
            self.make_room(part.len());
            self.run(part);
        }
    }
}

impl Analysis for FootprintAnalysis {
    fn observe(&mut self, batch: &Batch) {
        if let Some(s) = batch.sampling() {
            return self.observe_sampled(batch, s);
        }
        // A batch holds at most BATCH_LEN references, so no count can wrap before the next
        // check.
        self.make_room(batch.len());
        let options = self.options;
        for_each_chunk_of::<CHUNK>(batch, &options, |lines| self.run(lines));
    }
}

#[cfg(test)]
mod tests;
