//! A report of a sampled stream's attribution (docs/sampled.md) as the full stream's: the
//! cache simulated was a miniature of `cache` at the stream's rate and saw the sampled lines
//! only, so every count of references, misses, evictions and bytes stands for `1 / rate`
//! (the monitor's samples too); ratios and shares are unchanged, and so are the records and
//! instruction fetches, which a sampled stream counts in full.

use super::Report;
use crate::sim::Geometry;

impl Report {
    /// Scales the counts of the report of a miniature of `cache` fed a stream sampled at
    /// `rate` (see the module documentation), and names `cache` as the cache.
    pub fn scale_sampled(&mut self, cache: Geometry, rate: f64) {
        let up = |x: &mut u64| *x = (*x as f64 / rate).round() as u64;
        let up_opt = |x: &mut Option<u64>| {
            if let Some(v) = x {
                *v = (*v as f64 / rate).round() as u64;
            }
        };
        self.cache = cache;
        for x in [
            &mut self.data_refs,
            &mut self.misses,
            &mut self.evictions_total,
            &mut self.samples,
        ] {
            up(x);
        }
        for x in [
            &mut self.used_bytes,
            &mut self.fetched_bytes,
            &mut self.writebacks,
        ] {
            up_opt(x);
        }
        for b in &mut self.buckets {
            for x in [&mut b.refs, &mut b.misses, &mut b.sampled, &mut b.evicted] {
                up(x);
            }
            for x in [&mut b.used_bytes, &mut b.fetched_bytes, &mut b.writebacks] {
                up_opt(x);
            }
        }
        for e in &mut self.evictions {
            up(&mut e.evictions);
            up(&mut e.sampled);
        }
        for l in &mut self.lines {
            up(&mut l.evictions);
            up(&mut l.sampled);
        }
        for l in &mut self.lines_by_misses {
            up(&mut l.misses);
            up(&mut l.sampled);
            up_opt(&mut l.used_bytes);
            up_opt(&mut l.fetched_bytes);
        }
        for l in &mut self.loads {
            up(&mut l.refs);
            up(&mut l.misses);
            up_opt(&mut l.used_bytes);
            up_opt(&mut l.fetched_bytes);
        }
        self.notes.push(format!(
            "sampled: the lines of a SHARDS sample at rate {rate} in a miniature of this cache \
             ({} sets of {}), every count scaled by 1/rate (docs/sampled.md)",
            (self.cache.sets() as f64 * rate).max(1.0).floor(),
            self.cache.sets()
        ));
    }
}
