//! Cutting the trace into intervals, and each interval into the 16 sub-interval columns of the
//! wavelet matrix.
//!
//! With N units per interval (instruction fetches or data references, [`Unit`]), interval `j`
//! holds units `j·N + 1 … (j + 1)·N` (1-based, as in docs/definitions.md) and, when the unit is
//! the instruction, every data reference that follows one of its instructions (a data reference
//! belongs to the instruction before it; references before the first instruction go to interval
//! 0). Column `c` of an interval holds the units at 0-based in-interval positions `p` with
//! `⌊16·p / N⌋ = c`, and their data references. The last interval may be shorter than N.
//!
//! [`Splitter::split`] turns a batch into the data addresses it holds and the [`Segment`]s that
//! cut them by interval and column, so each signature can then run one tight loop per segment.

use crate::access::AccessKind;
use crate::batch::Batch;

mod bound;
mod sampled;

/// Columns of the wavelet matrix (sub-intervals per interval).
pub const COLUMNS: u64 = 16;

/// The resolved unit of an interval's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// Instruction fetches.
    Instructions,
    /// Data references.
    DataRefs,
}

/// A run of data references that share an interval and a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// 0-based interval index.
    pub interval: u64,
    /// Column, `0..16`.
    pub column: usize,
    /// True when this segment opens a new interval (the one before it is complete).
    pub starts_interval: bool,
    /// Range in the batch's data-address array.
    pub start: usize,
    /// End (excluded) in the data-address array.
    pub end: usize,
}

/// How many units and data references an interval holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalCounts {
    /// Instruction fetches.
    pub instructions: u64,
    /// Data references.
    pub data_refs: u64,
}

/// Cuts batches into intervals and columns; state carries over from batch to batch.
#[derive(Clone, Debug)]
pub struct Splitter {
    unit: Option<Unit>,
    len: u64,
    /// Current interval (valid once `started`).
    interval: u64,
    /// Units counted in the current interval.
    pos: u64,
    column: usize,
    /// Position at which the next column or the next interval starts.
    next_cut: u64,
    started: bool,
    counts: Vec<IntervalCounts>,
    /// Units of the full stream counted so far (a sampled stream's, `sampled.rs`).
    units_seen: u64,
    /// The interval numbered `switch_at` (an index of `counts`) and those after it are
    /// `next_len` long ([`Splitter::merge_pairs`]).
    switch_at: usize,
    next_len: u64,
    /// The timeline's cap and merges (`bound.rs`).
    bound: bound::Bound,
}

impl Splitter {
    /// A splitter for intervals of `len` ≥ 16 units; `unit` `None` decides on the first
    /// non-empty batch (instructions if it holds a fetch).
    pub fn new(unit: Option<Unit>, len: u64) -> Splitter {
        debug_assert!(len >= COLUMNS);
        Splitter {
            unit,
            len,
            interval: 0,
            pos: 0,
            column: 0,
            next_cut: 0,
            started: false,
            counts: Vec::new(),
            units_seen: 0,
            switch_at: usize::MAX,
            next_len: len,
            bound: bound::Bound::default(),
        }
    }

    /// Merges the finished intervals' counts in pairs ([`crate::phases::merge`]): the rows
    /// `from + 2k`, `from + 2k + 1` for `k < pairs`. With `double_from`, the interval that will
    /// have index `double_from` after the merge, and those after it, are cut twice as long.
    fn merge_pairs(&mut self, from: usize, pairs: usize, double_from: Option<usize>) {
        crate::phases::merge::merge_pairs(&mut self.counts, 1, from, pairs, |a, b| {
            IntervalCounts {
                instructions: a.instructions + b.instructions,
                data_refs: a.data_refs + b.data_refs,
            }
        });
        if let Some(at) = double_from {
            self.switch_at = at;
            self.next_len = 2 * self.len;
        }
    }

    /// The unit, once decided.
    pub fn unit(&self) -> Option<Unit> {
        self.unit
    }

    /// Per-interval counts of every interval started so far.
    pub fn counts(&self) -> &[IntervalCounts] {
        &self.counts
    }

    /// Start position of column `c` (`⌈c·N/16⌉`); `c = 16` is the interval's end.
    fn column_start(&self, c: u64) -> u64 {
        (u128::from(c) * u128::from(self.len)).div_ceil(u128::from(COLUMNS)) as u64
    }

    /// Called at every unit whose position reaches `next_cut`: moves to the next column or the
    /// next interval. Returns true for a new interval.
    #[inline(never)]
    fn cut(&mut self) -> bool {
        let new_interval = self.pos == self.len;
        if new_interval {
            self.interval += 1;
            self.pos = 0;
            self.column = 0;
            if self.counts.len() >= self.switch_at {
                self.len = self.next_len;
                self.switch_at = usize::MAX;
            }
            self.counts.push(IntervalCounts::default());
            self.bound_at_cut();
        } else {
            self.column += 1;
        }
        // Columns are never empty with N ≥ 16, so the next cut is the next column's start.
        self.next_cut = self.column_start(self.column as u64 + 1);
        new_interval
    }

    /// Starts the first interval at the first batch, then opens the batch's first segment in
    /// the current interval and column (a sampled and a full batch alike).
    fn begin_batch(&mut self, segs: &mut Vec<Segment>) {
        if !self.started {
            self.started = true;
            self.counts.push(IntervalCounts::default());
            self.next_cut = self.column_start(1);
        }
        segs.push(Segment {
            interval: self.interval,
            column: self.column,
            starts_interval: false,
            start: 0,
            end: 0,
        });
    }

    /// Appends the data addresses of `batch` to `addrs` (cleared first) and the segments that
    /// cut them to `segs` (cleared first). Every interval that starts in this batch opens at
    /// least one segment, even with no data reference.
    pub fn split(&mut self, batch: &Batch, addrs: &mut Vec<u64>, segs: &mut Vec<Segment>) {
        addrs.clear();
        segs.clear();
        if let Some(s) = batch.sampling() {
            return self.split_sampled(batch, s, addrs, segs);
        }
        if batch.is_empty() {
            return;
        }
        let unit = *self.unit.get_or_insert_with(|| {
            if batch.kinds.contains(&AccessKind::Instr) {
                Unit::Instructions
            } else {
                Unit::DataRefs
            }
        });
        self.begin_batch(segs);
        let counting_instr = unit == Unit::Instructions;
        if let (true, Some(data), Some(at)) =
            (counting_instr, batch.data_addrs(), batch.data_positions())
        {
            self.split_indexed(batch.len(), data, at, addrs, segs);
            return;
        }
        let mut instructions = 0u64;
        for (&addr, &kind) in batch.addrs.iter().zip(&batch.kinds) {
            let is_instr = kind == AccessKind::Instr;
            if is_instr == counting_instr {
                if self.pos == self.next_cut {
                    self.close_counts(addrs.len(), &mut instructions, segs);
                    let new_interval = self.cut();
                    segs.push(Segment {
                        interval: self.interval,
                        column: self.column,
                        starts_interval: new_interval,
                        start: addrs.len(),
                        end: addrs.len(),
                    });
                }
                self.pos += 1;
            }
            if is_instr {
                instructions += 1;
            } else {
                addrs.push(addr);
            }
        }
        self.close_counts(addrs.len(), &mut instructions, segs);
    }

    /// [`Splitter::split`] by instructions of a batch of `n` records whose data references
    /// the pass indexed (`data` at places `at`): the same cuts, found by counting instead of
    /// by a test of every record. The data reference at `at[j]` has `at[j] − j` fetches
    /// before it in the batch, so it precedes the fetch numbered `c` (from 0) when that count
    /// is at most `c`.
    fn split_indexed(
        &mut self,
        n: usize,
        data: &[u64],
        at: &[u32],
        addrs: &mut Vec<u64>,
        segs: &mut Vec<Segment>,
    ) {
        addrs.extend_from_slice(data);
        let fetches = (n - data.len()) as u64;
        // The next fetch to count, the one the open segment's count starts at, the next data
        // reference to place.
        let (mut q, mut from, mut j) = (0u64, 0u64, 0usize);
        loop {
            let cut_at = q + (self.next_cut - self.pos);
            if cut_at >= fetches {
                self.pos += fetches - q;
                let mut counted = fetches - from;
                self.close_counts(data.len(), &mut counted, segs);
                return;
            }
            while j < at.len() && u64::from(at[j]) - j as u64 <= cut_at {
                j += 1;
            }
            let mut counted = cut_at - from;
            self.close_counts(j, &mut counted, segs);
            self.pos = self.next_cut;
            let new_interval = self.cut();
            segs.push(Segment {
                interval: self.interval,
                column: self.column,
                starts_interval: new_interval,
                start: j,
                end: j,
            });
            // The fetch that made the cut counts in the new segment.
            self.pos += 1;
            from = cut_at;
            q = cut_at + 1;
        }
    }

    /// Ends the last segment at `end` and adds its data references and `instructions` to the
    /// current interval's counts.
    fn close_counts(&mut self, end: usize, instructions: &mut u64, segs: &mut [Segment]) {
        let seg = segs.last_mut().expect("split opens a segment first");
        seg.end = end;
        let c = self.counts.last_mut().expect("an interval is open");
        c.data_refs += (seg.end - seg.start) as u64;
        c.instructions += std::mem::take(instructions);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;

    /// `I` for an instruction, `d` for a data reference (address = its position).
    fn batch(pattern: &str) -> Batch {
        pattern
            .bytes()
            .enumerate()
            .map(|(i, c)| {
                let mut a = Access::load(i as u64, 1);
                if c == b'I' {
                    a.kind = AccessKind::Instr;
                }
                a
            })
            .collect()
    }

    /// (interval, column, addresses) of every segment, over batches given in pieces.
    fn cut(
        unit: Option<Unit>,
        len: u64,
        pieces: &[&str],
    ) -> (Vec<(u64, usize, Vec<u64>)>, Splitter) {
        let mut s = Splitter::new(unit, len);
        let (mut addrs, mut segs) = (Vec::new(), Vec::new());
        let mut out = Vec::new();
        let mut offset = 0;
        let mut last: Option<u64> = None;
        for p in pieces {
            let mut b = batch(p);
            for a in &mut b.addrs {
                *a += offset;
            }
            offset += p.len() as u64;
            s.split(&b, &mut addrs, &mut segs);
            for g in &segs {
                // starts_interval is set exactly where the interval index changes.
                assert_eq!(g.starts_interval, last.is_some_and(|l| l != g.interval));
                last = Some(g.interval);
                out.push((g.interval, g.column, addrs[g.start..g.end].to_vec()));
            }
        }
        (out, s)
    }

    proptest::proptest! {
        /// Batches whose data references the pass indexed are cut exactly as filtered ones.
        #[test]
        fn indexed_batches_cut_the_same(
            pattern in "[Id]{0,400}",
            cuts in proptest::collection::vec(0usize..400, 0..6),
            len in 16u64..40,
        ) {
            let mut cuts = cuts;
            cuts.push(pattern.len());
            cuts.sort_unstable();
            let run = |indexed: bool| {
                let mut s = Splitter::new(None, len);
                let (mut addrs, mut segs) = (Vec::new(), Vec::new());
                let mut out = Vec::new();
                let mut start = 0;
                for &c in &cuts {
                    let c = c.min(pattern.len()).max(start);
                    let mut b = batch(&pattern[start..c]);
                    for a in &mut b.addrs {
                        *a += start as u64;
                    }
                    if indexed {
                        b.index_data();
                    }
                    s.split(&b, &mut addrs, &mut segs);
                    out.push((addrs.clone(), segs.clone()));
                    start = c;
                }
                (out, s.counts().to_vec(), s.unit())
            };
            proptest::prop_assert_eq!(run(true), run(false));
        }
    }

    #[test]
    fn data_reference_intervals_and_columns() {
        // 40 data references, intervals of 16: columns of one reference each.
        let (segs, s) = cut(None, 16, &[&"d".repeat(40)]);
        assert_eq!(s.unit(), Some(Unit::DataRefs));
        assert_eq!(segs.len(), 40);
        for (i, (interval, column, addrs)) in segs.iter().enumerate() {
            assert_eq!(
                (*interval, *column, addrs.as_slice()),
                (i as u64 / 16, i % 16, &[i as u64][..])
            );
        }
        let counts: Vec<u64> = s.counts().iter().map(|c| c.data_refs).collect();
        assert_eq!(counts, [16, 16, 8]);
    }

    #[test]
    fn instruction_intervals_take_the_data_after_their_instructions() {
        // Intervals of 16 instructions: 3 data references before the first instruction go
        // to interval 0; the data after the 16th instruction too; the 17th opens interval 1.
        let mut p = String::from("ddd");
        for i in 0..20 {
            p.push('I');
            if i % 4 == 3 {
                p.push('d');
            }
        }
        let (segs, s) = cut(Some(Unit::Instructions), 16, &[&p[..10], &p[10..]]);
        let per_interval = |j: u64| -> Vec<u64> {
            segs.iter()
                .filter(|g| g.0 == j)
                .flat_map(|g| g.2.clone())
                .collect()
        };
        // Positions: d d d at 0..3, then "IIIId" groups of 5 from 3.
        assert_eq!(per_interval(0), [0, 1, 2, 7, 12, 17, 22]);
        assert_eq!(per_interval(1), [27]);
        assert_eq!(
            s.counts(),
            [
                IntervalCounts {
                    instructions: 16,
                    data_refs: 7
                },
                IntervalCounts {
                    instructions: 4,
                    data_refs: 1
                }
            ]
        );
        // The data reference after instruction 4 (column 3) is in column 3.
        assert!(segs.contains(&(0, 3, vec![7])));
        // The leading data references are in column 0.
        assert!(segs.contains(&(0, 0, vec![0, 1, 2])));
    }

    #[test]
    fn columns_split_uneven_intervals_by_ceiling() {
        // N = 20: columns start at ⌈20c/16⌉ = 0, 2, 3, 4, 5, 7, 8, 9, 10, 12, ...
        let (segs, _) = cut(Some(Unit::DataRefs), 20, &[&"d".repeat(20)]);
        let col_of: Vec<usize> = segs
            .iter()
            .flat_map(|g| std::iter::repeat_n(g.1, g.2.len()))
            .collect();
        let expected: Vec<usize> = (0..20).map(|p| p * 16 / 20).collect();
        assert_eq!(col_of, expected);
    }

    #[test]
    fn auto_picks_instructions_when_the_first_batch_has_fetches() {
        let (_, s) = cut(None, 16, &["dIdI"]);
        assert_eq!(s.unit(), Some(Unit::Instructions));
        let (_, s) = cut(None, 16, &["", "dd"]);
        assert_eq!(s.unit(), Some(Unit::DataRefs));
    }

    #[test]
    fn intervals_without_data_still_open_a_segment() {
        // 40 instructions, no data: three intervals, each seen.
        let (segs, s) = cut(Some(Unit::Instructions), 16, &[&"I".repeat(40)]);
        let intervals: std::collections::BTreeSet<u64> = segs.iter().map(|g| g.0).collect();
        assert_eq!(intervals.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(s.counts().len(), 3);
    }
}
