//! [`LogHistogram`]: counts of distances, exact up to a limit and log-binned above it.
//!
//! ## Bin layout
//! With `e` = [`Layout::exact_bits`]:
//! - every distance `d < 2^e` has its own bin (exact);
//! - each octave `[2^k, 2^(k+1))` with `k ≥ e` is cut into [`BINS_PER_OCTAVE`] = 256 bins of
//!   equal width `w = 2^(k−8)`, as in HOTL §4.1. A bin starts at `(256 + s)·w`, s in `0..256`.
//!
//! ## Error bound
//! A bin above the exact region starts at `lo ≥ 256·w`, so every distance `d` in it satisfies
//! `lo ≤ d < lo + w` and `(d − lo)/d < 1/256`: a binned distance is known to better than 0.4 %
//! relative (1/512 if represented by the bin's midpoint). Counts of distances `≥ x`
//! ([`LogHistogram::at_least`]) are exact when `x ≤ 2^e` or `x` is a bin boundary; otherwise
//! the true count lies between the counts at the two boundaries of the bin holding `x`, which
//! are within a factor `1 + 1/256` of `x`.
//!
//! Storage grows with the largest distance recorded: 4 bytes per bin up to that distance's bin
//! (so at most `4·2^e` bytes of exact bins, and 1 KiB per octave above), plus 4 more per bin
//! once some count passes 2^32.

use std::fmt;

/// Bins per octave above the exact region (HOTL §4.1).
pub const BINS_PER_OCTAVE: u64 = 256;

/// log2 of [`BINS_PER_OCTAVE`].
const SUB_BITS: u32 = 8;

/// Where a [`LogHistogram`] stops being exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    exact_bits: u32,
}

impl Layout {
    /// Exact below 2^16 (64 Ki lines: 4 MiB of 64-byte lines), and at every bin boundary above.
    /// An exact region up to 2^20 made stack-distance analysis about 10 % slower at a million
    /// distinct lines (its counts no longer stay in L2; benches/reuse.rs).
    pub const DEFAULT: Layout = Layout { exact_bits: 16 };

    /// Smallest accepted `exact_bits` (bins above must be at least one distance wide).
    pub const MIN_EXACT_BITS: u32 = SUB_BITS;

    /// Largest accepted `exact_bits`.
    pub const MAX_EXACT_BITS: u32 = 32;

    /// Distances below `2^exact_bits` get a bin each. `exact_bits` must lie between
    /// [`Layout::MIN_EXACT_BITS`] (8) and [`Layout::MAX_EXACT_BITS`] (32).
    pub fn new(exact_bits: u32) -> Result<Layout, crate::Error> {
        if !(Self::MIN_EXACT_BITS..=Self::MAX_EXACT_BITS).contains(&exact_bits) {
            return Err(crate::Error::InvalidParameter {
                name: "histogram exact bits",
                message: format!(
                    "{exact_bits} is not between {} and {}",
                    Self::MIN_EXACT_BITS,
                    Self::MAX_EXACT_BITS
                ),
            });
        }
        Ok(Layout { exact_bits })
    }

    /// log2 of the first distance that is binned.
    pub fn exact_bits(self) -> u32 {
        self.exact_bits
    }

    /// The first distance that is binned: `2^exact_bits`.
    pub fn exact_limit(self) -> u64 {
        1 << self.exact_bits
    }

    /// Index of the bin holding `d`.
    #[inline]
    fn index(self, d: u64) -> usize {
        let limit = self.exact_limit();
        if d < limit {
            return d as usize;
        }
        let k = 63 - d.leading_zeros();
        let sub = (d >> (k - SUB_BITS)) - BINS_PER_OCTAVE;
        (limit + u64::from(k - self.exact_bits) * BINS_PER_OCTAVE + sub) as usize
    }

    /// First distance and width of bin `i`.
    fn bin(self, i: usize) -> (u64, u64) {
        let limit = self.exact_limit();
        let i = i as u64;
        if i < limit {
            return (i, 1);
        }
        let (octave, sub) = ((i - limit) / BINS_PER_OCTAVE, (i - limit) % BINS_PER_OCTAVE);
        let width = 1u64 << (self.exact_bits + octave as u32 - SUB_BITS);
        ((BINS_PER_OCTAVE + sub) * width, width)
    }
}

impl Default for Layout {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One bin: `count` distances in `start .. start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bin {
    /// Smallest distance in the bin.
    pub start: u64,
    /// Number of distances the bin covers (1 in the exact region).
    pub len: u64,
    /// Distances recorded in the bin.
    pub count: u64,
}

/// A count of distances `≥ x` from [`LogHistogram::at_least`]: exact when `low == high`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtLeast {
    /// Counted for sure (bins entirely at or above `x`).
    pub low: u64,
    /// At most this many (adding the bin that holds `x`).
    pub high: u64,
    /// Interpolated count, assuming distances spread evenly over the bin that holds `x`.
    pub estimate: f64,
}

impl AtLeast {
    /// True when the count is known exactly.
    pub fn is_exact(&self) -> bool {
        self.low == self.high
    }
}

/// Counts of distances (reuse times, stack distances…), exact below
/// [`Layout::exact_limit`] and in 256 bins per octave above; see the module documentation.
#[derive(Clone)]
pub struct LogHistogram {
    layout: Layout,
    /// Counts by bin index, low 32 bits; grows to the largest index recorded. Half the cache
    /// footprint of `u64` counts, which measurably speeds up stack distances at a million lines.
    counts: Vec<u32>,
    /// High 32 bits of the counts; empty until some count passes `u32::MAX`.
    high: Vec<u32>,
    /// `min(counts.len(), exact_limit)`: distances below it are their own bin index.
    fast_len: u64,
    total: u64,
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new(layout: Layout) -> LogHistogram {
        LogHistogram {
            layout,
            counts: Vec::new(),
            high: Vec::new(),
            fast_len: 0,
            total: 0,
        }
    }

    /// The bin layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Adds one distance `d`.
    #[inline]
    pub fn record(&mut self, d: u64) {
        self.total += 1;
        let i = if d < self.fast_len {
            // Exact region: the bin index is the distance.
            d as usize
        } else {
            self.layout.index(d)
        };
        match self.counts.get_mut(i) {
            Some(c) => {
                *c = c.wrapping_add(1);
                if *c == 0 {
                    self.add(i, 1 << 32);
                }
            }
            None => self.add(i, 1),
        }
    }

    /// Adds `n` distances equal to `d`.
    pub fn record_n(&mut self, d: u64, n: u64) {
        self.total += n;
        self.add(self.layout.index(d), n);
    }

    /// Count of bin `i` (0 past the end).
    #[inline]
    fn count(&self, i: usize) -> u64 {
        let low = self.counts.get(i).copied().unwrap_or(0);
        let high = self.high.get(i).copied().unwrap_or(0);
        u64::from(high) << 32 | u64::from(low)
    }

    /// Adds `n` to bin `i`, making room for it first.
    #[cold]
    fn add(&mut self, i: usize, n: u64) {
        if i >= self.counts.len() {
            // Grow geometrically so a slowly rising maximum costs amortised O(1).
            let want = (i + 1).max(self.counts.len() * 2).max(64);
            let cap = self.layout.index(u64::MAX) + 1;
            self.counts.resize(want.min(cap), 0);
            self.fast_len = (self.counts.len() as u64).min(self.layout.exact_limit());
        }
        let sum = self.count(i) + n;
        self.counts[i] = sum as u32;
        if sum >> 32 != 0 || !self.high.is_empty() {
            self.high.resize(self.counts.len(), 0);
            self.high[i] = (sum >> 32) as u32;
        }
    }

    /// Adds every count of `other`, which must have the same layout.
    ///
    /// # Panics
    /// If the layouts differ.
    pub fn merge(&mut self, other: &LogHistogram) {
        assert_eq!(
            self.layout, other.layout,
            "merging histograms of different layouts"
        );
        for i in 0..other.counts.len() {
            let n = other.count(i);
            if n > 0 {
                self.add(i, n);
            }
        }
        self.total += other.total;
    }

    /// Distances recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The non-empty bins, by increasing distance.
    pub fn bins(&self) -> impl Iterator<Item = Bin> + '_ {
        (0..self.counts.len())
            .map(|i| (i, self.count(i)))
            .filter(|&(_, count)| count > 0)
            .map(|(i, count)| {
                let (start, len) = self.layout.bin(i);
                Bin { start, len, count }
            })
    }

    /// The bin that holds distance `d` (its count may be 0).
    pub fn bin_of(&self, d: u64) -> Bin {
        let i = self.layout.index(d);
        let (start, len) = self.layout.bin(i);
        Bin {
            start,
            len,
            count: self.count(i),
        }
    }

    /// How many recorded distances are `≥ x`: exact when `x ≤` [`Layout::exact_limit`] or `x`
    /// is the start of a bin, bounded by the bin holding `x` otherwise. O(bins); use
    /// [`LogHistogram::tail`] for many queries.
    pub fn at_least(&self, x: u64) -> AtLeast {
        let i = self.layout.index(x);
        let below: u64 = (0..i.min(self.counts.len())).map(|k| self.count(k)).sum();
        self.at_least_given(x, i, below)
    }

    /// Cumulative counts for O(1) [`Tail::at_least`] queries.
    pub fn tail(&self) -> Tail<'_> {
        let mut below = Vec::with_capacity(self.counts.len() + 1);
        let mut acc = 0;
        below.push(0);
        for k in 0..self.counts.len() {
            acc += self.count(k);
            below.push(acc);
        }
        Tail { hist: self, below }
    }

    /// [`LogHistogram::at_least`] for `x` in bin `i` with `below` distances in earlier bins.
    fn at_least_given(&self, x: u64, i: usize, below: u64) -> AtLeast {
        let (start, len) = self.layout.bin(i);
        let inside = self.count(i);
        if start == x {
            let n = self.total - below;
            return AtLeast {
                low: n,
                high: n,
                estimate: n as f64,
            };
        }
        let low = self.total - below - inside;
        let share = (len - (x - start)) as f64 / len as f64;
        AtLeast {
            low,
            high: low + inside,
            estimate: low as f64 + inside as f64 * share,
        }
    }
}

/// A [`LogHistogram`] with cumulative counts: answers [`Tail::at_least`] in O(1).
#[derive(Clone, Debug)]
pub struct Tail<'a> {
    hist: &'a LogHistogram,
    /// `below[i]`: distances in bins before `i`.
    below: Vec<u64>,
}

impl Tail<'_> {
    /// Same as [`LogHistogram::at_least`].
    pub fn at_least(&self, x: u64) -> AtLeast {
        let i = self.hist.layout.index(x);
        let below = self.below[i.min(self.below.len() - 1)];
        self.hist.at_least_given(x, i, below)
    }
}

/// Equal when the layouts and every bin's count are equal (however storage grew).
impl PartialEq for LogHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.layout == other.layout && self.total == other.total && self.bins().eq(other.bins())
    }
}

impl Eq for LogHistogram {}

impl fmt::Debug for LogHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogHistogram")
            .field("exact_bits", &self.layout.exact_bits)
            .field("total", &self.total)
            .field("bins", &self.bins().collect::<Vec<_>>())
            .finish()
    }
}

/// Serialised as `{"exact_bits", "bins_per_octave", "total", "bins": [{"start", "len", "count"}]}`,
/// non-empty bins only.
impl serde::Serialize for LogHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Repr {
            exact_bits: u32,
            bins_per_octave: u64,
            total: u64,
            bins: Vec<Bin>,
        }
        Repr {
            exact_bits: self.layout.exact_bits,
            bins_per_octave: BINS_PER_OCTAVE,
            total: self.total,
            bins: self.bins().collect(),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests;
