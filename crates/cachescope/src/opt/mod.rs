//! Belady's optimal replacement (OPT, MIN): the bound no policy beats, for every cache size
//! from one pass, and set-associative caches of any geometry.
//!
//! MIN evicts the resident line whose next reference is farthest in the future; we take the
//! demand-fetch reading of Belady (1966) and Mattson et al. (1970): every miss fills its line
//! (no bypass), as every other simulator here does, so OPT's curve lies at or below LRU's, FIFO's
//! and RRIP's at every size. It needs each reference's next use, so the counted references are
//! first spilled to a temporary file and read back in reverse ([`NextUseSpill`]); the stack
//! algorithm ([`OptStack`]) and the set-associative simulation ([`set_assoc_misses`]) then
//! run forward over the spilled ids with their next uses.
//!
//! ```
//! use cachescope::access::Access;
//! use cachescope::analysis::Analysis;
//! use cachescope::opt::OptAnalysis;
//! use cachescope::reuse::Options;
//!
//! // a b c a b c with two lines: OPT keeps a, evicts b for c (b is needed after a), then
//! // misses once more on b: 3 cold misses + 1.
//! let mut opt = OptAnalysis::new(Options::default())?;
//! opt.observe(&[0, 64, 128, 0, 64, 128].iter().map(|&a| Access::load(a, 8)).collect());
//! let mrc = opt.finish(&[64, 128, 192])?;
//! let misses: Vec<f64> = mrc.points.iter().map(|p| p.miss_ratio.unwrap() * 6.0).collect();
//! assert_eq!(misses, [6.0, 4.0, 3.0]);
//! # Ok::<(), cachescope::Error>(())
//! ```

mod heap;
mod ids;
#[cfg(test)]
mod mattson;
mod next_use;
mod runs;
mod stack;
mod store;

#[cfg(test)]
mod tests;

pub use ids::SpilledIds;
#[cfg(test)]
pub(crate) use ids::numbered;
pub use next_use::{NextUseSpill, Spilled};
pub use stack::OptStack;

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;
use crate::reuse::{Mrc, MrcPoint, Options};
use crate::sim::Geometry;
use crate::stages::Stage;

/// The fully associative OPT curve of a trace: spill in [`Analysis::observe`], the backward
/// pass and the stack in [`OptAnalysis::finish`].
#[derive(Debug)]
pub struct OptAnalysis {
    options: Options,
    spill: NextUseSpill,
}

impl OptAnalysis {
    /// Lines the forward pass's line → id table holds (the tests' bound on it).
    #[cfg(test)]
    pub(crate) fn held_lines(&self) -> usize {
        self.spill.held_lines()
    }

    /// References counted so far.
    pub fn refs(&self) -> u64 {
        self.spill.refs()
    }

    /// An empty analysis of the references `options` counts.
    pub fn new(options: Options) -> Result<OptAnalysis> {
        Ok(OptAnalysis {
            options,
            spill: NextUseSpill::new(options)?,
        })
    }

    /// The line ids spilled so far, readable on another thread while [`OptAnalysis::finish`]
    /// runs ([`NextUseSpill::ids`]).
    pub fn ids(&mut self) -> Result<SpilledIds> {
        self.spill.ids()
    }

    /// The OPT curve at `sizes_bytes` (method `exact`, policy `opt`), in the order given.
    pub fn finish(self, sizes_bytes: &[u64]) -> Result<Mrc> {
        self.finish_staged(sizes_bytes, None)
    }

    /// [`OptAnalysis::finish`], counting the references of the backward pass on `stages.0`
    /// and those of the stack on `stages.1`, for a front end showing how far it is.
    pub fn finish_staged(
        self,
        sizes_bytes: &[u64],
        stages: Option<(&Stage, &Stage)>,
    ) -> Result<Mrc> {
        let mut spilled = self.spill.finish_staged(stages.map(|s| s.0))?;
        let stack_stage = stages.map(|s| s.1);
        if let Some(s) = stack_stage {
            s.start(spilled.refs());
        }
        // Sizes above the largest asked need no depths below it.
        let line = self.options.line_size.bytes();
        let deepest = sizes_bytes.iter().map(|s| s / line).max();
        let mut stack = deepest.map_or_else(OptStack::new, OptStack::bounded);
        spilled.for_each_block(|ids, next| {
            stack.access_all(ids, next);
            if let Some(s) = stack_stage {
                s.add(ids.len() as u64);
            }
        })?;
        if let Some(s) = stack_stage {
            s.finish();
        }
        Ok(curve(&stack, self.options, sizes_bytes))
    }
}

impl Analysis for OptAnalysis {
    fn observe(&mut self, batch: &Batch) {
        self.spill.observe(batch);
    }
}

/// The curve of a finished stack.
pub fn curve(stack: &OptStack, options: Options, sizes_bytes: &[u64]) -> Mrc {
    let ls = options.line_size.bytes();
    let lines: Vec<u64> = sizes_bytes.iter().map(|s| s / ls).collect();
    let refs = stack.refs().max(1) as f64;
    Mrc {
        method: "exact".into(),
        policy: "opt".into(),
        line_size: ls,
        points: sizes_bytes
            .iter()
            .zip(&lines)
            .zip(stack.misses_at(&lines))
            .map(|((&size_bytes, &lines), misses)| MrcPoint {
                size_bytes,
                lines,
                miss_ratio: Some(misses as f64 / refs),
                miss_ratio_warm: (misses - stack.cold()) as f64 / refs,
            })
            .collect(),
    }
}

/// Misses of OPT in a set-associative cache of each geometry (sets chosen as in
/// [`Cache`](crate::sim::Cache): the low bits, or the remainder for other set counts): within a set, a miss in a full set
/// evicts the line whose next reference is farthest away (the lowest way among lines never
/// referenced again). One scan of the spilled trace feeds every geometry.
pub fn set_assoc_misses(spilled: &mut Spilled, geometries: &[Geometry]) -> Result<Vec<u64>> {
    struct Sets {
        index: crate::sim::SetIndex,
        assoc: usize,
        /// (id, next use) per way, `u32::MAX` when empty.
        ways: Vec<(u32, u64)>,
        misses: u64,
    }
    let mut caches: Vec<Sets> = geometries
        .iter()
        .map(|g| Sets {
            index: g.set_index(),
            assoc: g.assoc() as usize,
            ways: vec![(u32::MAX, 0); g.lines() as usize],
            misses: 0,
        })
        .collect();
    let lines = std::mem::take(&mut spilled.lines);
    spilled.for_each(|id, next| {
        let line = lines[id as usize];
        for c in &mut caches {
            let start = c.index.of(line) as usize * c.assoc;
            let set = &mut c.ways[start..start + c.assoc];
            if let Some(w) = set.iter_mut().find(|w| w.0 == id) {
                w.1 = next;
                continue;
            }
            c.misses += 1;
            let way = match set.iter().position(|w| w.0 == u32::MAX) {
                Some(w) => w,
                None => {
                    let mut far = 0;
                    for (i, w) in set.iter().enumerate() {
                        if w.1 > set[far].1 {
                            far = i;
                        }
                    }
                    far
                }
            };
            set[way] = (id, next);
        }
    })?;
    spilled.lines = lines;
    Ok(caches.iter().map(|c| c.misses).collect())
}
