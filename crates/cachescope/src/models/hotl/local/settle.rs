//! Settling stretches: a final stretch's reuses become predictions as the trace goes on, and
//! [`LocalFootprintAnalysis::finish`] settles the open ones to make the model.

use super::bins::BINS;
use super::levels::{self, Level, Open};
use super::model::{Predictions, Prefix, Stretch};
use super::windows::Sampler;
use super::{Bin, LocalFootprint, LocalFootprintAnalysis, MIN_STRETCH_BITS};
use crate::reuse::table::LineTable;

impl LocalFootprintAnalysis {
    /// Settles and advances the levels at position `now` (before it is read), lowest first so
    /// that a stretch's children have moved up before it settles.
    pub(super) fn events(&mut self) {
        let p = self.now;
        for k in 0..self.levels.len() {
            if let Some(done) = self.levels[k].take_settled(p) {
                let lines = self.lines();
                self.settle(k, done, None, lines);
            }
            self.levels[k].advance(p);
        }
        self.next_event = self
            .levels
            .iter()
            .map(Level::next_event)
            .min()
            .unwrap_or(u64::MAX);
    }

    /// Final predictions of a level-`k` stretch's reuses; its forward histogram moves up.
    /// `partial` gives the positions of a stretch cut by the trace's end.
    /// `lines`: the lines seen so far, which no window holds more of.
    fn settle(&mut self, k: usize, done: Open, partial: Option<u64>, lines: u64) {
        let len = partial.unwrap_or(1 << self.levels[k].bits);
        if done.any_ending() {
            // The bins outside `elo..ehi` are empty: skipping them skips adding zeros.
            let ending = &done.ending[done.elo..done.ehi];
            for (a, e) in self.reuse[done.elo..done.ehi].iter_mut().zip(ending) {
                a.merge(e);
            }
            let mut g = Stretch::new(&done.forward[..done.hi], len as f64, &mut self.prefix);
            // Each bin's estimate, once (NaN for an empty bin, which no measure or reuse asks).
            self.estimates.clear();
            self.estimates
                .extend(ending.iter().map(|x| match x.count > 0.0 {
                    true => g.g(x.sum / x.count).min(lines as f64),
                    false => f64::NAN,
                }));
            let estimate = |b: usize| self.estimates[b - done.elo];
            // Measures are filed before the bins are predicted: a stretch's own count too.
            for (rt, rd, n) in done.exact.iter() {
                let b = rt as usize;
                self.corrections.class(b, estimate(b)).add(rd, n);
            }
            for &(b, rd) in &done.measured {
                let b = b as usize;
                self.corrections.class(b, estimate(b)).add(rd, 1);
            }
            for (b, x) in (done.elo..).zip(ending) {
                if x.count > 0.0 {
                    self.corrections
                        .predict(b, estimate(b), x.count, lines, &mut self.predicted);
                }
            }
        }
        if self.levels.len() == k + 1 {
            self.levels.push(Level::new(k + 1, self.span, self.now));
        }
        self.levels[k + 1]
            .parent(done.index >> 1)
            .merge_forward(&done);
        self.levels[k].recycle(done);
    }

    /// The model of the references seen so far. O(distinct lines + levels × bins).
    pub fn finish(&self) -> LocalFootprint {
        // The open stretches settle on a copy; the line table, the largest part, is only read.
        let mut a = LocalFootprintAnalysis {
            table: LineTable::default(),
            ids: Vec::new(),
            levels: self.levels.clone(),
            reuse: self.reuse.clone(),
            first: self.first.clone(),
            predicted: self.predicted.clone(),
            sampler: Sampler::new(0),
            corrections: self.corrections.clone(),
            prefix: Prefix::default(),
            estimates: Vec::new(),
            ..*self
        };
        let m = self.lines();
        let n = a.now;
        // Levels whose stretch holds the whole trace take the Xiang footprint instead.
        let top = (0..)
            .find(|&k| (1u64 << (MIN_STRETCH_BITS + k as u32)) >= n)
            .unwrap_or(0);
        let mut whole = vec![Bin::default(); BINS];
        let mut k = 0;
        while k < a.levels.len() {
            let level = &mut a.levels[k];
            let previous = level.previous.take();
            let current = level.current.clone();
            let end_current = level.end_of(current.index);
            if k >= top {
                for o in previous.iter().chain([&current]) {
                    for (w, e) in whole.iter_mut().zip(&o.ending) {
                        w.merge(e);
                    }
                    for (w, e) in a.reuse.iter_mut().zip(&o.ending) {
                        w.merge(e);
                    }
                }
            } else {
                if let Some(p) = previous {
                    a.settle(k, p, None, m);
                }
                let start = end_current - (1 << a.levels[k].bits);
                a.settle(k, current, Some(n.saturating_sub(start)), m);
            }
            k += 1;
        }
        let mut last = vec![Bin::default(); BINS];
        let by_id = self.ids.iter().copied().filter(|&p| p != 0);
        for p in self.table.values().chain(by_id) {
            levels::add(&mut last, n + 1 - p);
        }
        let mut model = LocalFootprint {
            line_size: a.options.line_size.bytes(),
            refs: n,
            distinct_lines: m,
            reuse: a.reuse,
            ends: [a.first, last],
            predicted: Predictions::default(),
        };
        let mut predicted = a.predicted;
        predicted.add_stretch(&whole, model.distinct_lines, |rt| model.xiang_fp(rt));
        model.predicted = predicted;
        model
    }
}
