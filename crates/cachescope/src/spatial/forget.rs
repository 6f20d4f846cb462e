//! [`Forgetting`]: when an analysis of a fixed-size sampled stream forgets the lines the
//! filter dropped (docs/recording.md's memory paragraph, docs/sampled.md).
//!
//! A fixed-size filter (SHARDS_max) lowers its limit as new lines come, and a line whose hash
//! is above the limit is never sampled again: an analysis's table entry for it is dead weight.
//! Kept until the end, those entries add up to about `2^18 · (1 + ln(N·R / 2^18))` lines per
//! table. Forgetting them one by one at each fall would cost a heap of the lines by hash (what
//! SHARDS keeps for its stack); a table instead forgets in one sweep once it has grown by a
//! fifth since its last sweep ([`GROWTH`]), so it holds at most 1.2 times the lines under the
//! limit plus one batch's new lines (or [`FLOOR`]), and the sweeps cost O(1) per line
//! admitted, amortized (each frees at least a sixth of the table). Why a fifth and not a
//! doubling: a [`LineTable`](crate::reuse::table::LineTable) doubles its slots at 3/4 full, so
//! the default sample's 2^18 lines, plus a fifth, plus a batch (2^16), still fit 2^19 slots
//! (8 MiB), where twice the sample would need 2^20 (16 MiB) in each of the tables that forget.

use super::Limit;

/// Tables below this many lines are never swept (a sweep would free next to nothing).
pub const FLOOR: usize = 1 << 12;

/// A table is swept once it holds `1 + 1/GROWTH` times the lines its last sweep left.
pub const GROWTH: usize = 5;

/// The most lines a table that forgets holds after a batch, for a sample of at most
/// `max_lines` lines whose batches admit at most `per_batch` new lines each: what the tests
/// hold each table to.
#[cfg(test)]
pub(crate) const fn cap(max_lines: usize, per_batch: usize) -> usize {
    let swept = max_lines + max_lines / GROWTH;
    if swept > FLOOR {
        swept + per_batch
    } else {
        FLOOR + per_batch
    }
}

/// The sweep schedule of one table; see the module documentation.
#[derive(Clone, Debug)]
pub struct Forgetting {
    /// Sweep when the table holds this many lines.
    next: usize,
    /// The limit of the last sweep: every line in the table is under it.
    under: Limit,
}

impl Default for Forgetting {
    fn default() -> Self {
        Forgetting {
            next: FLOOR,
            under: Limit::ALL,
        }
    }
}

impl Forgetting {
    /// A schedule that never sweeps (the tests' reference: every line kept).
    #[cfg(test)]
    pub(crate) fn never() -> Forgetting {
        Forgetting {
            next: usize::MAX,
            under: Limit::ALL,
        }
    }

    /// Whether a table of `len` lines, its stream now under `limit`, should forget the lines
    /// above the limit now: only once the limit fell since the last sweep (never on a stream
    /// that samples every line, once on a stream at a fixed rate).
    #[inline]
    pub fn due(&self, limit: Limit, len: usize) -> bool {
        limit < self.under && len >= self.next
    }

    /// Records a sweep under `limit` that left `len` lines: the next is due when they have
    /// grown by a fifth (`GROWTH`).
    pub fn swept(&mut self, limit: Limit, len: usize) {
        self.under = limit;
        self.next = len.saturating_add(len / GROWTH).max(FLOOR);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_only_a_sampled_table_that_grew_by_a_fifth() {
        let mut f = Forgetting::default();
        assert!(!f.due(Limit(1 << 40), FLOOR - 1));
        assert!(f.due(Limit(1 << 40), FLOOR));
        assert!(!f.due(Limit::ALL, 10 * FLOOR));
        f.swept(Limit(1 << 40), 5 * FLOOR);
        assert!(!f.due(Limit(1 << 39), 6 * FLOOR - 1));
        assert!(f.due(Limit(1 << 39), 6 * FLOOR));
        // The default sample's tables stay within 2^19 slots (3/4 full at most).
        assert!(cap(1 << 18, 1 << 16) <= (1 << 19) * 3 / 4);
        // A limit that has not fallen since: nothing to forget.
        assert!(!f.due(Limit(1 << 40), 60 * FLOOR));
        assert!(!Forgetting::never().due(Limit(0), usize::MAX - 1));
    }
}

/// A fixed-size sampled stream for the tests of the analyses that forget.
#[cfg(test)]
pub(crate) mod testing {
    use crate::access::Access;
    use crate::batch::{BATCH_LEN, Batch};
    use crate::spatial::SpatialOptions;
    use crate::trace::{AccessReader, Trace};

    /// Loads of the lines of an iterator, a batch at a time.
    struct Loads(Box<dyn Iterator<Item = u64> + Send>);

    impl AccessReader for Loads {
        fn read_batch(&mut self, batch: &mut Batch) -> crate::Result<usize> {
            batch.clear();
            for line in self.0.by_ref().take(BATCH_LEN) {
                batch.push(Access::load(line * 64, 8));
            }
            Ok(batch.len())
        }
    }

    /// Feeds `f` the sampled batches of loads of `lines` (64-byte lines), sampled at rate 1
    /// by a filter of at most `max_lines` lines (seed 3).
    pub(crate) fn sampled(
        lines: impl Iterator<Item = u64> + Send + 'static,
        max_lines: u64,
        f: impl FnMut(&Batch),
    ) {
        sampled_at(lines, 1.0, Some(max_lines), f);
    }

    /// Feeds `f` the batches of loads of `lines` (64-byte lines) sampled at `rate`, with at
    /// most `max_lines` lines if given (seed 3).
    pub(crate) fn sampled_at(
        lines: impl Iterator<Item = u64> + Send + 'static,
        rate: f64,
        max_lines: Option<u64>,
        mut f: impl FnMut(&Batch),
    ) {
        let mut trace = Trace::from_reader(
            Box::new(Loads(Box::new(lines))),
            crate::Source::Workload("test".into()),
        );
        let options = SpatialOptions {
            rate,
            seed: 3,
            max_lines,
            ..SpatialOptions::default()
        };
        trace.sampled(options, None).expect("valid options");
        let mut b = Batch::new();
        while trace.read_batch(&mut b).expect("an in-memory stream") > 0 {
            f(&b);
        }
    }

    /// Feeds `forgetting` and `keeping` (the same analysis, one that never forgets) 1.5 M
    /// references to 10^6 lines sampled to at most 2^12, asserting at every batch that
    /// `forgetting` holds at most twice the sample (or the sweep floor) and, at the end, that
    /// `keeping` holds more (else the stream is too short to test anything).
    pub(crate) fn forgetting_stays_bounded<T: crate::analysis::Analysis>(
        forgetting: &mut T,
        keeping: &mut T,
        held: impl Fn(&T) -> usize,
    ) {
        let max_lines = 1 << 12;
        let cap = (2 * max_lines as usize).max(super::FLOOR);
        sampled(random_lines(1_500_000, 1_000_000), max_lines, |batch| {
            forgetting.observe(batch);
            keeping.observe(batch);
            assert!(held(forgetting) <= cap, "{} lines held", held(forgetting));
        });
        assert!(
            held(keeping) > cap,
            "a stream too short to test: {}",
            held(keeping)
        );
    }

    /// `n` references to lines drawn from `0..distinct` by a fixed generator (an LCG).
    pub(crate) fn random_lines(n: usize, distinct: u64) -> impl Iterator<Item = u64> + Send {
        let mut x = 12345u64;
        (0..n).map(move |_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 20) % distinct
        })
    }
}
