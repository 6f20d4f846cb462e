//! [`Sampler`]: StatCache's sample selector, watchpoints and reference counter as one
//! [`Analysis`].

use super::draws::{Gaps, SampleCursor};
use super::filter::{Filter, Watchpoints};
use super::thinning::{MAX_SAMPLES, Thinning};
use super::{NextUse, Profile, Sample, SamplerOptions, Windows};
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;

/// References tested against the filter in one branch-free run. A run with a possible hit or a
/// sampled position is redone reference by reference, so shorter runs redo less and longer
/// ones branch less. Measured on the benchmark's Zipf stream at rate 10^−4, one batch in cache:
/// 1.13 ns per reference with 64, 1.23 with 32, 1.27 with 16.
const RUN: usize = 64;

/// What a sampler that saw one chunk leaves: finished samples and active watchpoints
/// `(line, position)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SamplerParts {
    pub done: Vec<Sample>,
    pub active: Vec<(u64, u64)>,
}

/// Samples references at random and measures their StatCache reuse distances with
/// watchpoints ([module documentation](super)). Per reference: a multiply and a bit test, in
/// branch-free runs of 64 references; only a run with a set bit or a sampled position is redone
/// one by one through the map. Memory: the watchpoints' filter and map, the finished samples.
#[derive(Clone, Debug)]
pub struct Sampler {
    options: SamplerOptions,
    gaps: Gaps,
    /// Counted references so far (the position of the latest).
    pos: u64,
    /// Position of the next reference to sample (> `pos`).
    next: u64,
    watch: Watchpoints,
    /// `!(line_size − 1)`: maps an address to its line's first byte, the filter's key.
    line_mask: u64,
    /// Samples whose line was referenced again, in order of that reference.
    done: Vec<Sample>,
    /// Which drawn positions are kept, and the level reached ([`super::thinning`]).
    thin: Thinning,
    level: u32,
    /// The level of the run's length when it was known ahead ([`Sampler::expect_refs`]), else
    /// 0: a window is counted only for a sample kept at it.
    ahead: u32,
    /// [`Sampler::with_windows`]'s ring, and `(position, exact distance)` of the samples measured.
    windows: Option<Box<Windows>>,
    measured: Vec<(u64, u32)>,
}

impl Sampler {
    /// A sampler with `options`, checked by [`SamplerOptions::validate`].
    /// Its samples are thinned past [`super::MAX_SAMPLES`] ([`Sampler::with_max_samples`]).
    pub fn new(options: SamplerOptions) -> Result<Sampler> {
        options.validate()?;
        Ok(Sampler::resume(options, 0, SampleCursor::new(&options)).with_max_samples(MAX_SAMPLES))
    }

    /// The same sampler keeping about `cap` samples at most, whatever the trace's length: past
    /// that, drawn positions are thinned by a hash (module `thinning`), and the profile's
    /// rate is the rate of those kept. `u64::MAX`: never thinned.
    pub fn with_max_samples(mut self, cap: u64) -> Sampler {
        self.thin = if cap == u64::MAX {
            Thinning::never()
        } else {
            Thinning::new(self.options.seed, cap)
        };
        self
    }

    /// A sampler whose draws decay as its references grow, for one thread's reuses: every
    /// reference sampled up to `cap`, then each level's references at half the rate of the
    /// level before (`Gaps::decaying` in `draws.rs`), thinned at the end to one rate for all of them
    /// (`thinning.rs`): about `cap / 2` to `cap` samples past `cap` references, at rate 1
    /// below, whatever the thread's length, and a position drawn by the seed alone, so the
    /// Valgrind tool can be handed the same draws. `options.rate` is ignored (1).
    pub fn decaying(options: SamplerOptions, cap: u64) -> Result<Sampler> {
        let options = SamplerOptions {
            rate: 1.0,
            ..options
        };
        options.validate()?;
        let mut s = Sampler::resume(options, 0, SampleCursor::decaying(options.seed, cap));
        s.thin = Thinning::decaying(options.seed, cap);
        Ok(s)
    }

    /// The sampled report's whole-stream sampler: `options.rate`, floored by the decaying
    /// rule of [`Sampler::decaying`] with `cap` (`Gaps::floored` in `draws.rs`): a run of
    /// `n` references keeps a uniform sample at `max(rate, 2^−D(n))` (`D` the decaying
    /// level), thinned past [`super::MAX_SAMPLES`] as [`Sampler::new`]'s. A short run gets
    /// `cap / 2` to `cap` samples where the rate alone would give a few hundred; a run past
    /// about `cap / rate` references the rate's, drawn differently.
    pub fn floored(options: SamplerOptions, cap: u64) -> Result<Sampler> {
        options.validate()?;
        let mut s = Sampler::resume(options, 0, SampleCursor::floored(&options, cap));
        s.thin = Thinning::floored(options.seed, MAX_SAMPLES, cap, options.rate);
        Ok(s)
    }

    /// Thins the samples to the level `pos` references call for ([`super::thinning`]).
    fn thin_to_level(&mut self) {
        self.thin_to(self.thin.level(self.options.rate, self.pos));
    }

    /// Thins the samples to `level`, if above the level reached.
    fn thin_to(&mut self, level: u32) {
        if level > self.level {
            self.level = level;
            let thin = self.thin;
            self.done.retain(|s| thin.keeps(s.position, level));
            self.measured.retain(|&(j, _)| thin.keeps(j, level));
            self.watch.retain(|_, j| thin.keeps(j, level));
        }
    }

    /// Tells the sampler, before it reads them, that the run holds `n` counted references in
    /// all (a trace whose header counts them): it thins to their level from the start, so it
    /// sets no watchpoint and counts no window for a sample it would drop at the end. The
    /// samples kept at the end are the same for a run of at least `n` references (the levels
    /// nest), so the profile is, save where the windows' budget binds: no longer front-loaded,
    /// the counts get a smaller base (`windows::BUDGET_BASE_AHEAD`). A run that ends
    /// early keeps a uniform sample at the level of `n`, as the profile's rate says. Call it
    /// after [`Sampler::with_windows`].
    pub fn expect_refs(&mut self, n: u64) {
        self.ahead = self.thin.level(self.options.rate, n);
        self.thin_to(self.ahead);
        if let Some(w) = &mut self.windows {
            w.told_ahead();
        }
    }

    /// A sampler that has counted `pos` references, set no watchpoint and will next sample
    /// `cursor`'s position (after `pos`): the start of a chunk.
    pub(crate) fn resume(options: SamplerOptions, pos: u64, cursor: SampleCursor) -> Sampler {
        debug_assert!(cursor.next > pos);
        Sampler {
            options,
            gaps: cursor.gaps,
            pos,
            next: cursor.next,
            watch: Watchpoints::new(options.line_size.shift()),
            line_mask: !(options.line_size.bytes() - 1),
            done: Vec::new(),
            // A chunk's sampler is never thinned: the chunks' profile is merged whole.
            thin: Thinning::never(),
            level: 0,
            ahead: 0,
            windows: None,
            measured: Vec::new(),
        }
    }

    /// The same sampler measuring the exact stack distance of every sample whose reuse comes
    /// within [`super::RING`] references ([`Windows`]), which the profile then carries
    /// ([`Profile::measured_distance`]): for a sampler that reads every reference.
    pub fn with_windows(mut self) -> Sampler {
        self.windows = Some(Box::default());
        self
    }

    /// The finished samples and active watchpoints.
    pub(crate) fn into_parts(self) -> SamplerParts {
        SamplerParts {
            done: self.done,
            active: self.watch.iter().collect(),
        }
    }

    /// The position of the first reference to each of `lines` (distinct) in `batches`, whose
    /// first counted reference has position `start + 1`: `(line, position)` for the lines
    /// referenced, in order of position. The watchpoint filter makes this about as cheap per
    /// reference as sampling.
    pub(crate) fn first_references(
        options: SamplerOptions,
        start: u64,
        lines: &[u64],
        batches: &[Batch],
    ) -> Vec<(u64, u64)> {
        let mut f = FirstReferences::new(options, start, lines);
        let mut batches = batches.iter();
        while let (false, Some(b)) = (f.done(), batches.next()) {
            f.observe(b);
        }
        f.found
    }

    /// The options in use.
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }

    /// Counted references so far.
    pub fn refs(&self) -> u64 {
        self.pos
    }

    /// Samples taken so far (finished and active).
    pub fn samples(&self) -> u64 {
        (self.done.len() + self.watch.len()) as u64
    }

    /// Watchpoints still active: samples whose line has not been referenced again yet.
    pub fn active(&self) -> u64 {
        self.watch.len() as u64
    }

    /// Heap bytes held: the watchpoints' filter and map, and the finished samples.
    pub fn heap_bytes(&self) -> usize {
        self.watch.heap_bytes()
            + self.done.capacity() * std::mem::size_of::<Sample>()
            + self.measured.capacity() * 16
            + self.windows.as_ref().map_or(0, |w| w.heap_bytes())
    }

    /// The profile so far: the finished samples and, as dangling, every active watchpoint, in
    /// position order. The source description is empty ([`Profile::with_source`] sets it).
    /// O(samples · log samples); the sampler can go on observing afterwards.
    pub fn finish(&self) -> Profile {
        let n = self.pos;
        // Sized once: a clone of `done` then extended would double its allocation (on 10^8
        // distinct lines, 800 K samples of 24 bytes: 19 MB more at the report's peak).
        let mut samples = Vec::with_capacity(self.done.len() + self.watch.len());
        samples.extend_from_slice(&self.done);
        samples.extend(self.watch.iter().map(|(_, j)| Sample {
            position: j,
            next: NextUse::Dangling { age: n - j },
        }));
        samples.sort_unstable_by_key(|s| s.position);
        let options = SamplerOptions {
            rate: self.thin.kept_rate(self.options.rate, self.level),
            ..self.options
        };
        Profile::from_sampler(options, n, samples).with_measured(self.measured.clone())
    }

    /// One reference, counted, at the next position: fires its line's watchpoint if any, then
    /// samples it if its position was drawn.
    #[inline]
    fn reference(&mut self, addr: u64) {
        self.pos += 1;
        let line = addr >> self.options.line_size.shift();
        if self.watch.filter().test(addr & self.line_mask) {
            self.fire(line, self.pos);
        }
        if let Some(w) = &mut self.windows {
            w.access(line, self.pos);
        }
        if self.pos == self.next {
            if self.thin.keeps(self.pos, self.level) {
                self.watch.insert(line, self.pos);
            }
            self.next = self.gaps.next_after(self.pos);
        }
    }

    /// The reference at position `i` touches `line`: records the sample watching it, if any.
    #[inline]
    fn fire(&mut self, line: u64, i: u64) {
        if let Some(j) = self.watch.take(line) {
            // Counted if kept at `i`'s level, whatever the batches: as `record::tool_sampled`
            // (or at the level of the run's length, when known ahead).
            let level = || self.thin.level(self.options.rate, i).max(self.ahead);
            let kept = || self.thin.keeps(j, level());
            let w = self.windows.as_mut().filter(|_| kept());
            if let Some(sd) = w.and_then(|w| w.distinct_between(j, i)) {
                self.measured.push((j, sd as u32));
            }
            self.done.push(Sample {
                position: j,
                next: NextUse::Reuse {
                    distance: i - j - 1,
                },
            });
        }
    }

    /// The counted references `addrs`, from the next position on, into the windows' ring.
    #[inline(always)]
    fn ring<'a>(&mut self, addrs: impl Iterator<Item = &'a u64>) {
        if let Some(w) = &mut self.windows {
            let shift = self.options.line_size.shift();
            for (n, &a) in addrs.enumerate() {
                w.access(a >> shift, self.pos + n as u64 + 1);
            }
        }
    }

    /// A run of at most [`RUN`] accesses.
    #[inline(always)]
    fn run(&mut self, addrs: &[u64], kinds: &[AccessKind]) {
        let all = self.options.include_instructions;
        let counted = if all {
            addrs.len() as u64
        } else {
            u64::from(data_refs(kinds))
        };
        if !any_hit(self.watch.filter(), self.line_mask, addrs) && self.next > self.pos + counted {
            let kept = addrs.iter().zip(kinds);
            self.ring(
                kept.filter(|&(_, &k)| all || k != AccessKind::Instr)
                    .map(|(a, _)| a),
            );
            self.pos += counted;
            return;
        }
        // A reference may touch a watched line, or one is to be sampled: go one by one.
        for (&a, &k) in addrs.iter().zip(kinds) {
            if all || k != AccessKind::Instr {
                self.reference(a);
            }
        }
    }

    /// [`Sampler::run`] over data references only (a batch's indexed column).
    #[inline(always)]
    fn run_data(&mut self, addrs: &[u64]) {
        let counted = addrs.len() as u64;
        if !any_hit(self.watch.filter(), self.line_mask, addrs) && self.next > self.pos + counted {
            self.ring(addrs.iter());
            self.pos += counted;
            return;
        }
        for &a in addrs {
            self.reference(a);
        }
    }
}

/// Data references among `kinds` (at most 255 of them).
#[inline(always)]
fn data_refs(kinds: &[AccessKind]) -> u8 {
    kinds
        .iter()
        .fold(0u8, |n, &k| n + u8::from(k != AccessKind::Instr))
}

/// True if any of `addrs` may touch a watched line: one filter test per access, no branch.
#[inline(always)]
fn any_hit(filter: Filter<'_>, line_mask: u64, addrs: &[u64]) -> bool {
    addrs
        .iter()
        .fold(0u64, |any, &a| any | u64::from(filter.test(a & line_mask)))
        != 0
}

impl Analysis for Sampler {
    fn observe(&mut self, batch: &Batch) {
        if let (false, Some(data)) = (self.options.include_instructions, batch.data_addrs()) {
            for a in data.chunks(RUN) {
                self.run_data(a);
            }
        } else {
            for (a, k) in batch.addrs.chunks(RUN).zip(batch.kinds.chunks(RUN)) {
                self.run(a, k);
            }
        }
        self.thin_to_level();
    }
}

/// Finds the first reference to each of a set of lines in the batches it observes, whose first
/// counted reference has position `start + 1` ([`Sampler::first_references`] over a stream).
pub(crate) struct FirstReferences {
    watch: Watchpoints,
    shift: u32,
    mask: u64,
    all: bool,
    pos: u64,
    /// `(line, position)` of the lines found so far, in order of position.
    pub found: Vec<(u64, u64)>,
}

impl FirstReferences {
    /// Looks for `lines` (distinct) from position `start + 1`.
    pub fn new(options: SamplerOptions, start: u64, lines: &[u64]) -> Self {
        let shift = options.line_size.shift();
        let mut watch = Watchpoints::new(shift);
        for &l in lines {
            watch.insert(l, 0);
        }
        FirstReferences {
            watch,
            shift,
            mask: !(options.line_size.bytes() - 1),
            all: options.include_instructions,
            pos: start,
            found: Vec::new(),
        }
    }

    /// True once every line was found.
    pub fn done(&self) -> bool {
        self.watch.len() == 0
    }
}

impl Analysis for FirstReferences {
    fn observe(&mut self, b: &Batch) {
        let (shift, mask, all) = (self.shift, self.mask, self.all);
        for (addrs, kinds) in b.addrs.chunks(RUN).zip(b.kinds.chunks(RUN)) {
            if !any_hit(self.watch.filter(), mask, addrs) {
                self.pos += if all {
                    addrs.len() as u64
                } else {
                    u64::from(data_refs(kinds))
                };
                continue;
            }
            for (&a, &k) in addrs.iter().zip(kinds) {
                if all || k != AccessKind::Instr {
                    self.pos += 1;
                    if self.watch.filter().test(a & mask) && self.watch.take(a >> shift).is_some() {
                        self.found.push((a >> shift, self.pos));
                    }
                }
            }
        }
    }
}
