//! [`WindowSums`]: counts and sums of values (reuse times, first and last positions), from
//! which `Σ (x − w)⁺`, the numerator of the Xiang formula, follows for any window `w`.
//!
//! ## Layout and exactness
//! The bins are those of [`crate::reuse::LogHistogram`] (one [`Layout`]): every value below
//! `2^e` has its own bin, and each octave above is cut into 256 bins. Each bin keeps its count
//! *and the exact sum of its values*, so for a window `w`
//!
//! `Σ (x − w)⁺ = Σ_{bins above w} (sum − w·count) + Σ_{x in w's bin, x > w} (x − w)`.
//!
//! The first term is exact. The second is zero when `w` starts its bin (every `w < 2^e` and
//! every window of the 256-per-octave grid), and exact for the *listed* windows, for which the
//! bin's partial sum is accumulated as the values arrive. For any other `w` it is bracketed by
//! convexity of `x ↦ (x − w)⁺` on the bin `[lo, hi]`: at least `(sum − w·count)⁺` (Jensen),
//! at most `(sum − lo·count)·(hi − w)/(hi − lo)` (the chord).

use crate::reuse::{Layout, LogHistogram};

/// Bins per octave above the exact region (HOTL §4.1; the same as `LogHistogram`).
const SUB_BITS: u32 = 8;

/// `Σ (x − w)⁺` over the recorded values `x`: exact when `low == high`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Excess {
    /// Lower bound of `Σ (x − w)⁺`.
    pub low: f64,
    /// Upper bound of `Σ (x − w)⁺`.
    pub high: f64,
}

/// A listed window's exact partial sums inside its bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Partial {
    /// The window.
    pub window: u64,
    /// `Σ (x − window)` over the values of the window's bin above it.
    pub excess: u128,
}

/// Counts and exact sums per bin; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WindowSums {
    layout: Layout,
    /// Counts of values below the exact limit, indexed by value.
    exact: Vec<u64>,
    /// Per binned index (`(k − e)·256 + s`): count, sum.
    counts: Vec<u64>,
    sums: Vec<u128>,
    /// Listed windows in the binned region, not on a bin boundary, sorted by window.
    partials: Vec<Partial>,
    /// Per binned index: range of `partials` in that bin (empty for most bins).
    partial_ranges: Vec<(u32, u32)>,
}

impl WindowSums {
    /// Empty sums with `layout`, keeping exact partial sums for the `listed` windows.
    pub fn new(layout: Layout, listed: &[u64]) -> WindowSums {
        let limit = layout.exact_limit();
        let mut windows: Vec<u64> = listed
            .iter()
            .copied()
            .filter(|&w| w > limit && bin_range(layout, w).0 != w)
            .collect();
        windows.sort_unstable();
        windows.dedup();
        let partials: Vec<Partial> = windows
            .iter()
            .map(|&window| Partial { window, excess: 0 })
            .collect();
        let mut s = WindowSums {
            layout,
            exact: Vec::new(),
            counts: Vec::new(),
            sums: Vec::new(),
            partials,
            partial_ranges: Vec::new(),
        };
        for (i, &w) in windows.iter().enumerate() {
            let b = binned_index(layout, w);
            s.grow(b);
            let r = &mut s.partial_ranges[b];
            if r.0 == r.1 {
                *r = (i as u32, i as u32 + 1);
            } else {
                r.1 = i as u32 + 1;
            }
        }
        s
    }

    /// Makes room for binned index `b`.
    #[cold]
    fn grow(&mut self, b: usize) {
        if b >= self.counts.len() {
            let want = (b + 1).max(self.counts.len() + 256);
            self.counts.resize(want, 0);
            self.sums.resize(want, 0);
            self.partial_ranges.resize(want, (0, 0));
        }
    }

    /// Adds every value of `other`, which has the same layout and listed windows.
    pub fn merge(&mut self, other: &WindowSums) {
        debug_assert_eq!(self.layout, other.layout);
        debug_assert_eq!(self.partials.len(), other.partials.len());
        for (x, &n) in other.exact.iter().enumerate() {
            if n > 0 {
                self.add_exact(x as u64, n);
            }
        }
        if other.counts.len() > self.counts.len() {
            self.grow(other.counts.len() - 1);
        }
        for (b, (&c, &s)) in other.counts.iter().zip(&other.sums).enumerate() {
            self.counts[b] += c;
            self.sums[b] += s;
        }
        for (p, q) in self.partials.iter_mut().zip(&other.partials) {
            p.excess += q.excess;
        }
    }

    /// Records `x`.
    #[inline]
    pub fn record(&mut self, x: u64) {
        if x < self.layout.exact_limit() {
            self.add_exact(x, 1);
        } else {
            self.record_binned(x);
        }
    }

    /// Adds `n` values equal to `x`, which must be below the exact limit.
    pub fn add_exact(&mut self, x: u64, n: u64) {
        let i = x as usize;
        if i >= self.exact.len() {
            let want = (i + 1).max(self.exact.len() * 2).max(64);
            self.exact
                .resize(want.min(self.layout.exact_limit() as usize), 0);
        }
        self.exact[i] += n;
    }

    /// Adds `count` values spread over the bin `start .. start + len` (a bin of the same
    /// layout), summing to `sum`.
    pub fn add_bin(&mut self, start: u64, len: u64, count: u64, sum: u128) {
        if start < self.layout.exact_limit() {
            debug_assert_eq!(len, 1);
            self.add_exact(start, count);
        } else {
            let b = binned_index(self.layout, start);
            if b >= self.counts.len() {
                self.grow(b);
            }
            self.counts[b] += count;
            self.sums[b] += sum;
        }
    }

    /// Counts of the values below the exact limit, indexed by value (trailing entries may be 0).
    pub fn exact_counts(&self) -> &[u64] {
        &self.exact
    }

    /// `(binned index, count, sum)` of every non-empty bin above the exact limit, by index.
    pub fn binned(&self) -> impl Iterator<Item = (usize, u64, u128)> + '_ {
        (self.counts.iter().zip(&self.sums))
            .enumerate()
            .filter(|(_, (c, _))| **c > 0)
            .map(|(b, (&c, &s))| (b, c, s))
    }

    /// The counts alone, as the histogram of the same layout that recorded the same values
    /// holds them (the bins are the same; the sums are dropped).
    pub fn histogram(&self) -> LogHistogram {
        let mut h = LogHistogram::new(self.layout);
        for (x, &n) in self.exact.iter().enumerate() {
            if n > 0 {
                h.record_n(x as u64, n);
            }
        }
        for (b, n, _) in self.binned() {
            h.record_n(binned_bounds(self.layout, b).0, n);
        }
        h
    }

    /// Multiplies every count and sum by `f` (rounded): a sampled stream's, by 1 / its rate.
    pub fn scale(&mut self, f: f64) {
        let times = |x: u64| (x as f64 * f).round() as u64;
        self.exact.iter_mut().for_each(|c| *c = times(*c));
        self.counts.iter_mut().for_each(|c| *c = times(*c));
        self.sums
            .iter_mut()
            .for_each(|s| *s = (*s as f64 * f).round() as u128);
        self.partials
            .iter_mut()
            .for_each(|p| p.excess = (p.excess as f64 * f).round() as u128);
    }

    /// The listed windows' partial sums, by window.
    pub fn partials(&self) -> &[Partial] {
        &self.partials
    }

    /// Adds `count` values summing to `sum` to binned index `b` (a wire decoder, which checked
    /// `b` against [`binned_limit`] and the sum against [`binned_bounds`]).
    pub fn add_binned(&mut self, b: usize, count: u64, sum: u128) {
        if b >= self.counts.len() {
            self.grow(b);
        }
        self.counts[b] += count;
        self.sums[b] += sum;
    }

    /// Adds `excess` to the partial sum of the `i`-th listed window of [`WindowSums::partials`].
    pub fn add_partial(&mut self, i: usize, excess: u128) {
        self.partials[i].excess += excess;
    }

    /// Records `x ≥` the exact limit.
    #[inline(always)]
    pub fn record_binned(&mut self, x: u64) {
        let b = binned_index(self.layout, x);
        if b >= self.counts.len() {
            self.grow(b);
        }
        self.counts[b] += 1;
        self.sums[b] += u128::from(x);
        if !self.partials.is_empty() {
            let (lo, hi) = self.partial_ranges[b];
            if lo != hi {
                self.record_partial(lo as usize, hi as usize, x);
            }
        }
    }

    #[cold]
    fn record_partial(&mut self, lo: usize, hi: usize, x: u64) {
        for p in &mut self.partials[lo..hi] {
            p.excess += u128::from(x.saturating_sub(p.window));
        }
    }
}

/// Index among the binned bins of `x ≥ 2^e`.
#[inline]
pub(crate) fn binned_index(layout: Layout, x: u64) -> usize {
    let e = layout.exact_bits();
    let k = 63 - x.leading_zeros();
    let sub = (x >> (k - SUB_BITS)) - (1 << SUB_BITS);
    ((k - e) as usize) << SUB_BITS | sub as usize
}

/// First and last value of binned index `b`.
pub(crate) fn binned_bounds(layout: Layout, b: usize) -> (u64, u64) {
    let e = layout.exact_bits();
    let k = e + (b >> SUB_BITS) as u32;
    let width = 1u64 << (k - SUB_BITS);
    let start = ((1 << SUB_BITS) + (b as u64 & 255)) * width;
    (start, start + (width - 1))
}

/// One past the largest binned index of `layout` (the bin holding `u64::MAX`).
pub(crate) fn binned_limit(layout: Layout) -> usize {
    binned_index(layout, u64::MAX) + 1
}

/// First and last value of the bin holding `x`.
fn bin_range(layout: Layout, x: u64) -> (u64, u64) {
    if x < layout.exact_limit() {
        (x, x)
    } else {
        binned_bounds(layout, binned_index(layout, x))
    }
}

/// Suffix counts and sums of one or more [`WindowSums`] taken together: O(1)
/// [`Tails::excess`] and [`Tails::count_at_least`].
#[derive(Clone, Debug)]
pub(crate) struct Tails {
    layout: Layout,
    /// Exact values 0..exact_len have their own index; every value recorded below the exact
    /// limit is below it.
    exact_len: usize,
    /// `above[i]`, `sum_above[i]`: values in bins ≥ combined index `i`, and their sum.
    above: Vec<u64>,
    sum_above: Vec<u128>,
    /// The listed windows' partial sums, added over the parts.
    partials: Vec<Partial>,
}

impl Tails {
    /// The tails of the values of every part taken together. The parts must share their
    /// layout and listed windows (they come from one analysis).
    pub fn new(parts: &[&WindowSums]) -> Tails {
        let layout = parts[0].layout;
        let exact_len = parts.iter().map(|p| p.exact.len()).max().unwrap_or(0);
        let binned = parts.iter().map(|p| p.counts.len()).max().unwrap_or(0);
        let n = exact_len + binned;
        let mut above = vec![0u64; n + 1];
        let mut sum_above = vec![0u128; n + 1];
        for i in (0..n).rev() {
            let (mut c, mut s) = (0u64, 0u128);
            for p in parts {
                debug_assert_eq!(p.layout, layout);
                if i < exact_len {
                    let k = p.exact.get(i).copied().unwrap_or(0);
                    c += k;
                    s += u128::from(k) * i as u128;
                } else if let Some(&k) = p.counts.get(i - exact_len) {
                    c += k;
                    s += p.sums[i - exact_len];
                }
            }
            above[i] = above[i + 1] + c;
            sum_above[i] = sum_above[i + 1] + s;
        }
        let mut partials = parts[0].partials.clone();
        for p in &parts[1..] {
            debug_assert_eq!(p.partials.len(), partials.len());
            for (a, b) in partials.iter_mut().zip(&p.partials) {
                a.excess += b.excess;
            }
        }
        Tails {
            layout,
            exact_len,
            above,
            sum_above,
            partials,
        }
    }

    /// Combined index of the bin holding `x`; values between the exact ones recorded and
    /// the exact limit share the index of the first binned bin (they have no count, and
    /// every binned value lies above them).
    fn index(&self, x: u64) -> usize {
        let e = self.exact_len;
        if x < e as u64 {
            x as usize
        } else if x < self.layout.exact_limit() {
            e
        } else {
            e + binned_index(self.layout, x)
        }
    }

    /// `Σ (x − w)⁺` over the recorded values: exact when `w` starts its bin or is listed,
    /// bracketed otherwise (module documentation).
    pub fn excess(&self, w: u64) -> Excess {
        let last = self.above.len() - 1;
        let i = self.index(w).min(last);
        let (lo, hi) = bin_range(self.layout, w);
        if i == last || lo == w {
            // Every value in bins from w's own on is ≥ w, and x = w adds nothing.
            let exact = (self.sum_above[i] - u128::from(w) * u128::from(self.above[i])) as f64;
            return Excess {
                low: exact,
                high: exact,
            };
        }
        // w is inside a bin [lo, hi] of several values.
        let (c_next, s_next) = (self.above[i + 1], self.sum_above[i + 1]);
        let rest = (s_next - u128::from(w) * u128::from(c_next)) as f64;
        if let Ok(p) = self.partials.binary_search_by_key(&w, |p| p.window) {
            let exact = rest + self.partials[p].excess as f64;
            return Excess {
                low: exact,
                high: exact,
            };
        }
        let (count, sum) = (self.above[i] - c_next, self.sum_above[i] - s_next);
        let c128 = u128::from(count);
        let low = sum.saturating_sub(u128::from(w) * c128) as f64;
        let chord = (sum - u128::from(lo) * c128) as f64 * (hi - w) as f64 / (hi - lo) as f64;
        Excess {
            low: rest + low,
            high: rest + chord,
        }
    }

    /// `#{x ≥ v}`: exact when `v` starts its bin, otherwise interpolated inside the bin
    /// holding `v` as if its values were spread evenly.
    pub fn count_at_least(&self, v: u64) -> f64 {
        let last = self.above.len() - 1;
        let i = self.index(v).min(last);
        let (lo, hi) = bin_range(self.layout, v);
        if i == last || lo == v {
            return self.above[i] as f64;
        }
        let inside = (self.above[i] - self.above[i + 1]) as f64;
        self.above[i + 1] as f64 + inside * (hi + 1 - v) as f64 / (hi + 1 - lo) as f64
    }
}

#[cfg(test)]
mod tests;
