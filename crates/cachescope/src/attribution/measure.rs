//! The measurement (Buck & Hollingsworth §2–3): an exact LRU cache simulation that remembers,
//! for every resident line, the bucket it was filled for. On every miss it counts the missing
//! reference's bucket, the evicted line's bucket (the victim), the pair, and the instruction;
//! a [`Sampler`] picks the misses the hardware monitor would see and counts them again apart.
//! Alongside run the per-bucket stack distances (`BucketMrc`), one perturbed cache per
//! modelled sampling rate (`Perturbed`) and, with [`Options::per_instruction`], counts per
//! instruction address (fetches, reads, writes, their misses and samples) for the
//! Cachegrind-format output.
//!
//! Which references: data references (loads, stores, modifies; a modify is one lookup), each
//! on the line of its first byte, as in [`crate::sim`]. The resident lines (`residency.rs`)
//! carry who fetched them, and optionally their touched bytes (line utilization) and dirty
//! bits (write-backs by bucket); the loads' strides are kept per instruction ([`Strides`]).
//! Instruction fetches are not simulated but count as trace records for event positions and
//! as the program's instructions.
//!
//! Events are read as the trace streams: before the reference at position `p`, every event
//! with position ≤ `p` is applied. The start-up memory map (the `map` events before the first
//! other event) is applied before the first reference, since the files it names were mapped
//! by the loader before anything could use their addresses.

use std::collections::BTreeSet;

use super::Map;
use super::bucket_mrc::BucketMrc;
use super::buckets::BucketMap;
use super::cachegrind_out::LineCounts;
use super::cost::Perturbed;
use super::events::Event;
use super::fields::{Conflicts, FieldCounts};
use super::follow::Follower;
use super::report::{self, Report};
use super::residency::Residency;
use super::sampler::Sampler;
use super::strides::Strides;
use super::tally::Tally;
use crate::access::{AccessKind, ThreadId};
use crate::error::Result;
use crate::sim::{Cache, Op, Policy};

mod observe;
mod options;
mod per_structure;
mod sampled;
mod weighted;

pub use options::{DEFAULT_SAMPLE_EVERY, Options, PAPER_CACHE};
pub use per_structure::StructureBudget;

/// A stream of events (an [`EventReader`](super::events::EventReader), or a vector in tests).
/// It may also be live, the events of a program being recorded: then `None` means no event
/// yet, and the source is asked again before each run of records. A live source must hold
/// every event positioned at or before a record by the time that record is measured (the
/// recorder decodes events and records from one stream, in order, so it does).
pub type EventSource<'a> = Box<dyn Iterator<Item = Result<Event>> + Send + 'a>;

/// Data-structure attribution over one trace, as an [`Analysis`](crate::analysis::Analysis);
/// [`Attribution::finish`] gives the [`Report`].
pub struct Attribution<'e> {
    options: Options,
    pub(super) buckets: BucketMap,
    events: Follower<'e>,
    /// Trace records seen (every kind).
    position: u64,
    cache: Cache,
    shift: u32,
    /// Resident lines: the bucket and instruction each was filled for, what leaving costs.
    pub(super) residency: Residency,
    /// The loads' strides, with [`Options::loads`].
    pub(super) strides: Option<Strides>,
    pub(super) exact: Tally,
    pub(super) sampled: Tally,
    sampler: Sampler,
    perturbed: Vec<Perturbed>,
    mrc: Option<BucketMrc>,
    pub(super) data_refs: u64,
    pub(super) instructions: u64,
    pub(super) bucket_refs: Vec<u64>,
    /// Counts per instruction address, with [`Options::per_instruction`].
    pub(super) per_pc: Option<Map<u64, LineCounts>>,
    /// Per-field counts, with [`Options::fields`].
    pub(super) fields: Option<FieldCounts>,
    /// Conflict misses by set, with [`Options::conflicts`].
    pub(super) conflicts: Option<Conflicts>,
    /// The one thread simulated and counted ([`Attribution::only_thread`]), and the threads met.
    only: Option<(ThreadId, BTreeSet<ThreadId>)>,
    /// A sampled stream's full records and instruction fetches so far (`sampled.rs`).
    records_seen: u64,
    /// Where the last range of the current batch ended among its indexed data references
    /// (`observe.rs`).
    data_cursor: usize,
    instructions_seen: u64,
    /// TLB misses by bucket and code line, when asked ([`Attribution::with_tlb`]).
    pub(super) tlb: Option<super::tlb::BucketTlb>,
    /// A sampled stream's lines kept under a lower rate (`sampled.rs`).
    sub: Option<sampled::SubSample>,
    /// A sample of lines at a rate per structure (`per_structure.rs`).
    per_structure: Option<per_structure::PerStructure>,
}

impl<'e> Attribution<'e> {
    /// Starts an attribution with `options`, reading `events` as the trace streams.
    pub fn new(options: Options, events: Option<EventSource<'e>>) -> Result<Attribution<'e>> {
        let g = options.geometry;
        let perturbed = match &options.cost {
            Some(model) => model
                .rates
                .iter()
                .map(|&every| Perturbed::new(g, every, options.seed, model))
                .collect::<Result<Vec<_>>>()?,
            None => Vec::new(),
        };
        let mut buckets = BucketMap::new(options.exe.as_deref());
        let mut residency = Residency::new(g.line_size(), options.utilization, options.writebacks);
        if options.unread_writes {
            residency.track_unread();
        }
        let conflicts = match options.conflicts {
            true => Some(Conflicts::new(g.lines(), g.sets())?),
            false => None,
        };
        let events = Follower::new(events, &mut buckets);
        Ok(Attribution {
            buckets,
            events,
            position: 0,
            cache: Cache::new(g, Policy::Lru)?,
            shift: g.line_size().shift(),
            residency,
            strides: options.loads.then(Strides::default),
            exact: Tally::default(),
            sampled: Tally::default(),
            sampler: Sampler::new(options.sample_every, options.seed),
            perturbed,
            mrc: options.mrc.then(|| BucketMrc::new(g.line_size().bytes())),
            data_refs: 0,
            instructions: 0,
            bucket_refs: Vec::new(),
            per_pc: options.per_instruction.then(Map::default),
            fields: options.fields.then(FieldCounts::default),
            conflicts,
            only: None,
            records_seen: 0,
            data_cursor: 0,
            instructions_seen: 0,
            tlb: None,
            sub: None,
            per_structure: None,
            options,
        })
    }

    /// Simulates and counts only `thread`'s references, in a cache of its own: a thread
    /// filter that, unlike [`crate::trace::Trace::only_thread`], still counts every thread's
    /// records for the event log's positions, so allocations are applied when the program made
    /// them (`attribute --thread ID`, `--per-thread`). [`Attribution::finish`] is an error if
    /// the thread never appears.
    pub fn only_thread(mut self, thread: ThreadId) -> Self {
        self.only = Some((thread, BTreeSet::new()));
        self
    }

    /// An error when the thread of [`Attribution::only_thread`] has not appeared (naming those
    /// that have); [`Attribution::finish`] checks it too.
    pub fn check_thread(&self) -> Result<()> {
        match &self.only {
            Some((thread, seen)) if !seen.contains(thread) => {
                Err(crate::trace::unknown_thread(*thread, seen, &"the trace"))
            }
            _ => Ok(()),
        }
    }

    /// Counts the trace's first `records` records as read without simulating them: for an
    /// attribution of [`Attribution::only_thread`] started when its thread first appears, which
    /// then applies every event due so far before its first reference.
    pub fn skip(mut self, records: u64) -> Self {
        self.position += records;
        self
    }

    /// Also translates every data reference in TLBs shaped by `config`, over the page sizes
    /// `rules` give (addresses, or structures by name: `heap`, a variable, an allocation
    /// site), and counts first-level misses and page walks by bucket and code line
    /// ([`Report::tlb`]; docs/tlb.md).
    pub fn with_tlb(
        mut self,
        config: &crate::tlb::TlbConfig,
        rules: &[crate::tlb::PageRule],
    ) -> Result<Self> {
        self.tlb = Some(super::tlb::BucketTlb::new(config, rules)?);
        Ok(self)
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Applies every event due before the record at the current position.
    fn apply_due(&mut self) {
        self.events.apply_due(self.position, &mut self.buckets);
    }

    #[inline]
    fn reference(&mut self, addr: u64, size: u32, pc: u64, kind: AccessKind) {
        if self.per_structure.is_some() {
            return self.reference_weighted(addr, pc);
        }
        let write = kind == AccessKind::Store;
        self.data_refs += 1;
        let (start, end, bucket) = match self.fields {
            Some(_) => self.buckets.lookup_range(addr),
            None => (addr, addr, self.buckets.lookup(addr)),
        };
        let b = bucket as usize;
        if b >= self.bucket_refs.len() {
            self.bucket_refs.resize(b + 1, 0);
        }
        self.bucket_refs[b] += 1;
        if let Some(t) = &mut self.tlb {
            t.access(&self.buckets, addr, bucket, pc);
        }
        let line = addr >> self.shift;
        if let Some(m) = &mut self.mrc {
            m.access(line, bucket);
        }
        let (mut miss, mut sampled) = (false, false);
        let op = Op::of(kind);
        let access = self.residency.access(&mut self.cache, line, op, bucket, pc);
        if access.miss {
            let victim = access.victim;
            self.exact.record(bucket, victim, pc);
            miss = true;
            if self.sampler.tick() {
                self.sampled.record(bucket, victim, pc);
                sampled = true;
            }
        }
        if let Some(c) = &mut self.conflicts {
            c.observe(line, !access.miss, bucket);
        }
        let used = self.residency.touch(addr, size);
        if let Some(f) = &mut self.fields {
            f.record(bucket, pc, size, addr - start, end - start, miss, used);
        }
        if let (Some(s), false) = (&mut self.strides, write) {
            s.observe(pc, addr, miss);
        }
        if let Some(m) = &mut self.per_pc {
            m.entry(pc).or_default().data(write, miss, sampled);
        }
        for p in &mut self.perturbed {
            p.access(line);
        }
    }

    /// The report: reads what is left of the event log (so a damaged end is still an
    /// error), names the buckets and the code lines, and ranks everything.
    pub fn finish(mut self) -> Result<Report> {
        self.check_thread()?;
        self.check_per_structure()?;
        self.fold_per_structure();
        self.events.finish()?;
        let base = self.exact.total;
        let instructions = if self.instructions > 0 {
            self.instructions
        } else {
            self.data_refs
        };
        let cost = match &self.options.cost {
            Some(model) => self
                .perturbed
                .iter()
                .map(|p| p.row(model, base, instructions))
                .collect(),
            None => Vec::new(),
        };
        let mrc = self.mrc.take().map(BucketMrc::into_parts);
        self.residency.settle();
        Ok(report::build(&self, cost, mrc))
    }

    /// Trace records seen so far (every kind).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The address → structure map as the trace has unfolded it so far (its modules name code
    /// addresses: the call graph's functions, in the report).
    pub fn buckets(&self) -> &BucketMap {
        &self.buckets
    }
}
