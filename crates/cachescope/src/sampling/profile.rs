//! [`Profile`]: the samples of one trace and the settings that produced them.

use super::{NextUse, Sample, SamplerOptions};
use crate::access::LineSize;
use crate::error::{Error, Result};

/// The outcome of sampling one trace: the [`SamplerOptions`] used, the number of counted
/// references `n`, and every sample in increasing position order. Made by
/// [`super::Sampler::finish`], [`Profile::read`] or [`Profile::new`]; always consistent (every
/// position in `1..=n`, increasing; a reuse ends by `n`; a dangling age is `n − position`).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    options: SamplerOptions,
    refs: u64,
    samples: Vec<Sample>,
    reuses: u64,
    source: String,
    /// `(position, exact stack distance)` of the samples whose reuse window the sampler
    /// measured ([`super::Sampler::with_windows`]), by position; not stored in the file.
    measured: Vec<(u64, u32)>,
}

impl Profile {
    /// A profile from trusted parts (the sampler's own).
    pub(crate) fn from_sampler(options: SamplerOptions, refs: u64, samples: Vec<Sample>) -> Self {
        debug_assert!(check(refs, &samples).is_ok());
        let reuses = samples.iter().filter(|s| s.distance().is_some()).count() as u64;
        Profile {
            options,
            refs,
            samples,
            reuses,
            source: String::new(),
            measured: Vec::new(),
        }
    }

    /// A profile of `refs` counted references sampled with `options`, checked: the options must
    /// validate, and `samples` must have increasing positions in `1..=refs`, reuses that end by
    /// `refs` (`position + distance + 1 ≤ refs`) and dangling ages of `refs − position`.
    pub fn new(options: SamplerOptions, refs: u64, samples: Vec<Sample>) -> Result<Profile> {
        options.validate()?;
        check(refs, &samples).map_err(|message| Error::InvalidParameter {
            name: "profile samples",
            message,
        })?;
        Ok(Profile::from_sampler(options, refs, samples))
    }

    /// The profile a sampler keeping about `cap` samples
    /// ([`super::Sampler::with_max_samples`]) makes of the same trace, from the profile of one
    /// that keeps every sample (`self`): the samples that pass the level of `self`'s length.
    pub(crate) fn thinned(self, cap: u64) -> Profile {
        let thin = super::Thinning::new(self.options.seed, cap);
        let level = thin.level(self.options.rate, self.refs);
        if level == 0 {
            return self;
        }
        let mut samples = self.samples;
        samples.retain(|s| thin.keeps(s.position, level));
        let options = SamplerOptions {
            rate: super::Thinning::rate(self.options.rate, level),
            ..self.options
        };
        Profile::from_sampler(options, self.refs, samples)
            .with_source(self.source)
            .with_measured(self.measured)
    }

    /// The same profile with the free-form description of what was sampled (a file name, a
    /// workload and its parameters…), stored in the file.
    pub fn with_source(mut self, source: impl Into<String>) -> Profile {
        self.source = source.into();
        self
    }

    /// The same profile carrying the exact stack distances `measured` (`(position, distance)`)
    /// of some of its reuse samples.
    pub(crate) fn with_measured(mut self, mut measured: Vec<(u64, u32)>) -> Profile {
        measured.sort_unstable();
        self.measured = measured;
        self
    }

    /// The exact stack distance of the reuse sample at `position`, if its window was measured
    /// ([`super::Windows`]).
    pub fn measured_distance(&self, position: u64) -> Option<u64> {
        let k = self
            .measured
            .binary_search_by_key(&position, |m| m.0)
            .ok()?;
        Some(u64::from(self.measured[k].1))
    }

    /// How many reuse samples carry a measured distance.
    pub fn measured(&self) -> usize {
        self.measured.len()
    }

    /// What was sampled, as described by whoever made the profile ("" if nobody did).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The sampler's settings.
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }

    /// Line size of the sampled references.
    pub fn line_size(&self) -> LineSize {
        self.options.line_size
    }

    /// Sampling rate.
    pub fn rate(&self) -> f64 {
        self.options.rate
    }

    /// Seed of the sample selector.
    pub fn seed(&self) -> u64 {
        self.options.seed
    }

    /// Counted references per time slot.
    pub fn slot_refs(&self) -> u64 {
        self.options.slot_refs
    }

    /// Counted references in the trace, `n`.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Every sample, in increasing position order.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Samples whose line was referenced again.
    pub fn reuses(&self) -> u64 {
        self.reuses
    }

    /// Samples whose line was never referenced again.
    pub fn dangling(&self) -> u64 {
        self.samples.len() as u64 - self.reuses
    }

    /// Fraction of samples that dangle, `d`: the estimated cold-miss ratio (distinct lines per
    /// counted reference). 0 without samples.
    pub fn dangling_fraction(&self) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.dangling() as f64 / self.samples.len() as f64
        }
    }

    /// Number of time slots: `⌈n / slot_refs⌉`.
    pub fn slot_count(&self) -> u64 {
        self.refs.div_ceil(self.options.slot_refs)
    }

    /// Counted references in each time slot, in order (all `slot_refs` but the last).
    pub fn slots(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        let len = self.options.slot_refs;
        (0..self.slot_count() as usize).map(move |s| len.min(self.refs - s as u64 * len))
    }

    /// The time slot (0-based) a sample belongs to: a reuse to the slot of the reference that
    /// reuses its line (position + distance + 1), a dangling sample to its own.
    pub fn slot_of(&self, sample: &Sample) -> u64 {
        let at = match sample.next {
            NextUse::Reuse { distance } => sample.position + distance + 1,
            NextUse::Dangling { .. } => sample.position,
        };
        (at - 1) / self.options.slot_refs
    }

    /// The reuse-distance histogram of all reuse samples: (StatCache distance, samples), by
    /// increasing distance; the weighted-histogram form the models take.
    pub fn histogram(&self) -> Vec<(u64, f64)> {
        histogram(self.samples.iter())
    }

    /// The samples of each time slot that holds any ([`Profile::slot_of`]), by slot.
    pub fn slot_histograms(&self) -> Vec<SlotHistogram> {
        let mut by_slot: Vec<(u64, &Sample)> =
            self.samples.iter().map(|s| (self.slot_of(s), s)).collect();
        by_slot.sort_unstable_by_key(|&(slot, _)| slot);
        by_slot
            .chunk_by(|a, b| a.0 == b.0)
            .map(|group| {
                let dangling = group.iter().filter(|(_, s)| s.distance().is_none()).count();
                SlotHistogram {
                    slot: group[0].0,
                    reuses: histogram(group.iter().map(|&(_, s)| s)),
                    dangling: dangling as u64,
                }
            })
            .collect()
    }

    /// Checks that the profile was sampled with `line_size`; the models cannot change it.
    pub fn expect_line_size(&self, line_size: LineSize) -> Result<()> {
        if self.options.line_size == line_size {
            return Ok(());
        }
        Err(Error::InvalidParameter {
            name: "line size",
            message: format!(
                "the profile was sampled with {}-byte lines, not {}; sample the trace again \
                 with that line size",
                self.options.line_size.bytes(),
                line_size.bytes()
            ),
        })
    }

    /// An error unless the profile holds at least one sample: the models need one.
    pub fn expect_samples(&self) -> Result<()> {
        if !self.samples.is_empty() {
            return Ok(());
        }
        let source = if self.source.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.source)
        };
        Err(Error::InvalidParameter {
            name: "profile",
            message: format!(
                "{source}no samples in {} references at rate {}; raise the rate or sample a \
                 longer trace",
                self.refs, self.options.rate
            ),
        })
    }
}

/// The samples of one time slot.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotHistogram {
    /// The slot, 0-based: it covers counted references `slot·slot_refs + 1 ..= (slot + 1)·slot_refs`.
    pub slot: u64,
    /// The reuse samples whose reuse falls in the slot: (StatCache distance, samples), by
    /// increasing distance.
    pub reuses: Vec<(u64, f64)>,
    /// Dangling samples taken in the slot.
    pub dangling: u64,
}

/// (distance, count) of the reuse samples among `samples`, by increasing distance.
fn histogram<'a>(samples: impl Iterator<Item = &'a Sample>) -> Vec<(u64, f64)> {
    let mut d: Vec<u64> = samples.filter_map(Sample::distance).collect();
    d.sort_unstable();
    d.chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len() as f64))
        .collect()
}

/// The consistency rules of [`Profile::new`]; the message says which sample breaks which.
pub(super) fn check(refs: u64, samples: &[Sample]) -> std::result::Result<(), String> {
    let mut last = 0u64;
    for (i, s) in samples.iter().enumerate() {
        if s.position <= last || s.position > refs {
            return Err(format!(
                "sample {i} is at position {}, not after {last} and at most {refs}",
                s.position
            ));
        }
        last = s.position;
        match s.next {
            NextUse::Reuse { distance } => {
                let end = s
                    .position
                    .checked_add(distance)
                    .and_then(|e| e.checked_add(1));
                if end.is_none_or(|e| e > refs) {
                    return Err(format!(
                        "sample {i} at position {} has reuse distance {distance}, past the \
                         last reference {refs}",
                        s.position
                    ));
                }
            }
            NextUse::Dangling { age } => {
                if age != refs - s.position {
                    return Err(format!(
                        "dangling sample {i} at position {} has age {age}, not {}",
                        s.position,
                        refs - s.position
                    ));
                }
            }
        }
    }
    Ok(())
}
