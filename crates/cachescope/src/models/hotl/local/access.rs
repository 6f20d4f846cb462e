//! The per-reference pass of [`LocalFootprintAnalysis`]: each reference's reuse time goes
//! into the histograms of the stretches it ends in and starts from.

use super::levels::{self, Level};
use super::{LocalFootprintAnalysis, MIN_STRETCH_BITS, bins};

impl LocalFootprintAnalysis {
    /// The level whose stretches are the shortest at least `span · rt` long.
    #[inline]
    fn level_of(&self, rt: u64) -> usize {
        let want = self.span.saturating_mul(rt);
        let bits = 64 - (want - 1).leading_zeros();
        bits.saturating_sub(MIN_STRETCH_BITS) as usize
    }

    /// The next position, with the levels settled and advanced up to it.
    #[inline]
    fn tick(&mut self) -> u64 {
        self.now += 1;
        if self.now >= self.next_event {
            self.events();
        }
        self.now
    }

    #[inline]
    fn access(&mut self, line: u64) {
        let now = self.tick();
        let prev = self.table.replace(line, now);
        self.reused(now, prev);
    }

    /// A reference by line number (numbers in order of first reference): its last position
    /// is one indexed load, no hash probe (0: never seen, as positions start at 1).
    #[inline]
    pub(super) fn access_id(&mut self, id: usize) {
        let now = self.tick();
        if id >= self.ids.len() {
            self.ids.resize(id + 1, 0);
        }
        let prev = std::mem::replace(&mut self.ids[id], now);
        self.id_lines += u64::from(prev == 0);
        self.reused(now, (prev != 0).then_some(prev));
    }

    /// The reference at `now`, whose line was last referenced at `prev`.
    #[inline]
    fn reused(&mut self, now: u64, prev: Option<u64>) {
        let measured = self.sampler.access(now, prev);
        match prev {
            Some(j) => {
                let rt = now - j;
                let b = bins::bin_of(rt);
                let k = self.level_of(rt);
                while self.levels.len() <= k {
                    self.levels
                        .push(Level::new(self.levels.len(), self.span, now));
                    self.next_event = self
                        .next_event
                        .min(self.levels.last().expect("pushed").next_event());
                }
                self.levels[k].current.add_ending(b, rt);
                if let Some(rd) = measured {
                    self.levels[k].current.add_measured(b, rt, rd);
                }
                // `rt` is j's forward reuse time: into the lowest open stretch holding j. A
                // level's stretches are at most `len + ⌈len / span⌉` references open, so the
                // levels of `len ≤ rt / 4` are closed for `j` and skipped.
                let low = (63 - rt.leading_zeros()).saturating_sub(2 + MIN_STRETCH_BITS) as usize;
                let open = self.levels[low.min(k)..]
                    .iter_mut()
                    .find_map(|l| l.holding(j));
                if let Some(open) = open {
                    open.add_forward(b, rt);
                }
            }
            None => levels::add(&mut self.first, now),
        }
    }

    /// A chunk's lines: their table slots are prefetched first, so that on a large footprint
    /// their cache misses overlap instead of each stalling its reference in turn.
    #[inline]
    pub(super) fn access_chunk(&mut self, lines: impl Iterator<Item = u64> + Clone) {
        for l in lines.clone() {
            self.table.prefetch(l);
        }
        for l in lines {
            self.access(l);
        }
    }
}
