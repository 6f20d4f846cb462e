//! Sampled reuse distances: the run-time part of StatCache (Berg & Hagersten, ISPASS 2004,
//! §2.3–2.4), whose output both [`crate::models::statcache`] and [`crate::models::statstack`]
//! model.
//!
//! ## What is sampled
//! Each counted reference is *sampled* independently with probability `rate` (default 10^−4):
//! the gaps between sampled positions are geometric, drawn from a seeded [`rand_pcg::Pcg64`],
//! so a seed gives the same samples on every platform. A sampled reference at position `j`
//! (1-based, counting only the references [`SamplerOptions`] counts) sets a *watchpoint* on its
//! line; the line's next reference, at `i`, fires it and records the sample's **StatCache reuse
//! distance** `k = i − j − 1`, the number of references in between (docs/definitions.md; the
//! reuse time is `k + 1`). A sample whose line is never referenced again is **dangling**; its
//! *age* is `n − j`, the references that followed it, so its distance is at least its age.
//!
//! A dangling sample is exactly a line's last reference, and each line has one last and one
//! first reference: the fraction `d` of samples that dangle estimates the cold-miss ratio
//! `m/n` (distinct lines per reference). The models use this to turn "misses per reuse" (the
//! paper's `R`) into misses per counted reference, the denominator of every curve in
//! [`crate::reuse`]: warm misses per reference = `R·(1 − d)`.
//!
//! ## Cost
//! The watchpoints sit in a hash map (line → sampled position) behind an exact bitmap filter of
//! at least 64 Ki bits and 256 bits per watchpoint. Per reference the sampler multiplies the
//! line address by a constant and tests one bit, 64 references at a time with no branch; only a
//! run with a set bit (a watchpoint, or a false positive: an unwatched line shares a bit with a
//! watchpoint with probability at most 1/256) or a sampled position is redone reference by
//! reference through the map. About 1.1 ns per reference on one core at rate 10^−4
//! (benches/sampling.rs). Memory: the filter and map (about 60 bytes per active watchpoint)
//! plus 24 bytes per finished sample: it grows with the samples, never with trace length, and
//! the samples stop growing at [`MAX_SAMPLES`]: past it the drawn positions are thinned by a
//! hash and the profile's rate is that of the samples kept (module `thinning`).
//!
//! ## Time slots
//! The trace is cut into slots of [`SamplerOptions::slot_refs`] counted references (default
//! 200 000, the paper's "about 200k"). The [`Profile`] keeps every sample with its position, so
//! the models build one histogram per slot: a reuse sample belongs to the slot of its *reuse*
//! (position `j + k + 1`, the reference whose miss it predicts), a dangling sample to the slot
//! of its own position.
//!
//! ## Profiles
//! [`Sampler::finish`] gives a [`Profile`]: the settings, the number of counted references and
//! the samples in position order. [`Profile::write`] and [`Profile::read`] store it in a small
//! versioned binary format (`docs/profile-format.md`), so a trace is sampled once and modelled
//! many times.
//!
//! ```
//! use cachescope::analysis::Analysis;
//! use cachescope::sampling::{NextUse, Sample, Sampler, SamplerOptions};
//! use cachescope::{Access, Batch};
//!
//! // Lines a b a c b a, every reference sampled (rate 1).
//! let batch: Batch = [0, 64, 0, 128, 64, 0].map(|a| Access::load(a, 8)).into_iter().collect();
//! let mut sampler = Sampler::new(SamplerOptions { rate: 1.0, ..SamplerOptions::default() })?;
//! sampler.observe(&batch);
//! let profile = sampler.finish();
//! let reuse = |position, distance| Sample { position, next: NextUse::Reuse { distance } };
//! let dangling = |position, age| Sample { position, next: NextUse::Dangling { age } };
//! assert_eq!(
//!     profile.samples(),
//!     [reuse(1, 1), reuse(2, 2), reuse(3, 2), dangling(4, 2), dangling(5, 1), dangling(6, 0)]
//! );
//! # Ok::<(), cachescope::Error>(())
//! ```

mod draws;
mod filter;
#[cfg(test)]
mod floored_tests;
mod format;
mod line_set;
mod profile;
mod sampler;
#[cfg(test)]
mod tests;
mod thinning;
#[cfg(test)]
mod thinning_tests;
mod threads;
mod windows;

pub(crate) use draws::SampleCursor;
pub use format::{MAGIC, VERSION};
pub use profile::{Profile, SlotHistogram};
pub use sampler::Sampler;
pub(crate) use sampler::{FirstReferences, SamplerParts};
pub(crate) use thinning::{Drops, Thinning};
pub use thinning::{MAX_SAMPLES, REPORT_FLOOR};
pub(crate) use threads::rebuild_drawn;
pub use threads::{THREAD_SAMPLES, ThreadReuses, thread_options};
pub use windows::{RING, Windows};

use crate::access::LineSize;
use crate::error::{Error, Result};
use crate::reuse::sizes_log_range;

/// What the sampler samples and how; see the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerOptions {
    /// Probability that a counted reference is sampled, in (0, 1]. Default 10^−4 (the paper's).
    pub rate: f64,
    /// Seed of the generator of the gaps between samples. Default 1.
    pub seed: u64,
    /// Counted references per time slot, at least 1. Default 200 000.
    pub slot_refs: u64,
    /// Line size references are mapped to (line of the first byte). Default 64 bytes.
    pub line_size: LineSize,
    /// Count instruction fetches too (a unified cache). Default false: data references only,
    /// as [`crate::reuse::Options`].
    pub include_instructions: bool,
}

/// Default [`SamplerOptions::rate`]: one reference in 10 000.
pub const DEFAULT_RATE: f64 = 1e-4;

/// Default [`SamplerOptions::slot_refs`]: 200 000 references.
pub const DEFAULT_SLOT_REFS: u64 = 200_000;

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            rate: DEFAULT_RATE,
            seed: 1,
            slot_refs: DEFAULT_SLOT_REFS,
            line_size: LineSize::DEFAULT,
            include_instructions: false,
        }
    }
}

impl SamplerOptions {
    /// Checks that `rate` is in (0, 1] and `slot_refs` is at least 1.
    pub fn validate(&self) -> Result<()> {
        if !(self.rate > 0.0 && self.rate <= 1.0) {
            return Err(Error::InvalidParameter {
                name: "sampling rate",
                message: format!(
                    "{} is not in (0, 1]: a probability above 0, e.g. 1e-4 for one reference in 10 000",
                    self.rate
                ),
            });
        }
        if self.slot_refs == 0 {
            return Err(Error::InvalidParameter {
                name: "time slot length",
                message: "0 references; a slot holds at least 1 (default 200000)".into(),
            });
        }
        Ok(())
    }
}

/// How the models treat cold misses (first references), which sampling cannot see directly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cold {
    /// Leave them out, as the paper does: only reuse samples enter the model. Curves report
    /// `miss_ratio_warm` and no `miss_ratio`.
    #[default]
    Exclude,
    /// Estimate them from the dangling samples (each stands for one cold miss, which also evicts
    /// in StatCache's random cache). Curves report `miss_ratio` too.
    Estimate,
}

/// Where a sampled line was referenced next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NextUse {
    /// Referenced again after `distance` other counted references: the StatCache reuse
    /// distance `i − j − 1` (reuse time − 1).
    Reuse {
        /// References strictly between the sample and the line's next reference.
        distance: u64,
    },
    /// Never referenced again; `age` counted references followed the sample (`n − j`).
    Dangling {
        /// References after the sample, to the end of the trace.
        age: u64,
    },
}

/// One sampled reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sample {
    /// 1-based position of the sampled reference among the counted references.
    pub position: u64,
    /// Its line's next reference.
    pub next: NextUse,
}

impl Sample {
    /// The StatCache reuse distance, `None` when dangling.
    pub fn distance(&self) -> Option<u64> {
        match self.next {
            NextUse::Reuse { distance } => Some(distance),
            NextUse::Dangling { .. } => None,
        }
    }
}

/// Smallest size of the default working-set sweep: 1 KiB.
pub const SWEEP_MIN_BYTES: u64 = 1 << 10;

/// Largest size of the default working-set sweep: 1 GiB.
pub const SWEEP_MAX_BYTES: u64 = 1 << 30;

/// Sizes per octave of the default working-set sweep.
pub const SWEEP_PER_OCTAVE: u64 = 8;

/// The default working-set sweep of the sampled models: every eighth of an octave from 1 KiB
/// to 1 GiB ([`sizes_log_range`]; 161 sizes: 1024, 1152, 1280, … 1 GiB).
pub fn working_set_sizes() -> Vec<u64> {
    sizes_log_range(SWEEP_MIN_BYTES, SWEEP_MAX_BYTES, SWEEP_PER_OCTAVE)
        .expect("the default sweep is valid")
}
