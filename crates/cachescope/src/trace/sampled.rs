//! [`SpatialStage`]: a full stream made a sampled one where it enters ([`Trace::sampled`]), so
//! that `--sampled` reads a trace file or a workload as the Valgrind tool's sampled stream
//! reads a running program: the data references of the sampled lines, with their positions
//! in the full stream and the counts of what was left out (docs/sampled.md).
//!
//! The stage sits above the trace's reader, so a file decoded on every core
//! ([`crate::parallel::decode_in_parallel`]) is still decoded so; what it costs per reference
//! is one hash and one compare of each data reference (the data index the decoders make gives
//! them without a scan of the fetches). A batch ends just before a sampled reference, so the
//! references left out after the last sampled one are counted in the last batch's span.

mod filter;
pub(crate) mod places;

use super::{AccessReader, Trace};
use crate::analysis::Analysis;
use crate::batch::{BATCH_LEN, Batch, Step};
use crate::error::{Error, Result};
use crate::sampling::{Profile, Sampler, SamplerOptions};
use crate::spatial::{SpatialFilter, SpatialOptions};
use places::CallPlaces;

/// Sampled accesses a batch of the stage holds before it ends at the next sampled reference.
pub(crate) const OUT_LEN: usize = BATCH_LEN / 2;

/// Call events after which a batch of the stage ends at the next sampled reference, as at
/// [`OUT_LEN`] accesses. Call events pass unfiltered, so without this bound a batch would hold
/// every call of the full stream it covers, `OUT_LEN / R` references: on a recorded sqlite3
/// at R = 0.01 about 13 MB a batch, times the batches a parallel pass keeps in flight.
pub(crate) const OUT_CALLS: usize = BATCH_LEN / 2;

/// The filter, the input it reads ahead, and the full stream's counts; see the module doc.
pub(crate) struct SpatialStage {
    options: SpatialOptions,
    filter: SpatialFilter,
    shift: u32,
    /// The full stream's batch being filtered, and the index of its next access.
    full: Batch,
    at: usize,
    /// Whether the full stream has ended.
    ended: bool,
    /// Data references and instruction fetches of the full stream so far.
    data: u64,
    instrs: u64,
    /// Accesses sampled so far.
    kept: u64,
    /// StatCache's sampler fed the full stream, when asked for ([`Trace::sampled`]), and
    /// whether it saw any of it.
    reuse: Option<Sampler>,
    reused: bool,
    /// Each thread's counts and last fetch, for the call events passed through; and the
    /// current full batch's call events passed so far.
    calls: CallPlaces,
    next_call: usize,
    /// Whether only the stream's first call event passes ([`Trace::sampled_first_call_only`]),
    /// and whether it has.
    first_call_only: bool,
    first_call_passed: bool,
    /// The current run's data references the limit admitted at its start, as (index among
    /// the batch's data references, hash): reused from run to run.
    cands: Vec<(usize, u64)>,
    /// Whether the reader below was told that the instruction fetches' addresses, sizes and
    /// pcs are not read ([`AccessReader::elide_fetches`]): the stage reads the data index, the
    /// kinds, and the columns of the data references it keeps; StatCache's sampler the data
    /// index, unless it counts instruction fetches too.
    told: bool,
    /// Whether the reader below was asked for its counts ahead ([`Sampler::expect_refs`]).
    asked_ahead: bool,
    /// The reader below gives this very sampled stream ([`AccessReader::sample_itself`]): its
    /// batches pass as they are.
    passed: bool,
    /// Given each full batch once the stage is done with it ([`Trace::sampled_beside`]).
    beside: Option<Beside>,
}

/// What [`Trace::sampled_beside`] hands every batch of the full stream to, once the stage has
/// filtered it: it may take the batch, leaving any other batch in its place (which the stage
/// reads the next batch into).
pub type Beside = Box<dyn FnMut(&mut Batch) + Send>;

impl SpatialStage {
    pub(crate) fn new(options: SpatialOptions, reuse: Option<SamplerOptions>) -> Result<Self> {
        Ok(SpatialStage {
            filter: SpatialFilter::new(&options)?,
            shift: options.line_size.shift(),
            options,
            full: Batch::new(),
            at: 0,
            ended: false,
            data: 0,
            instrs: 0,
            kept: 0,
            // A sampler of instruction fetches reads their addresses: nothing to tell then.
            told: reuse.is_some_and(|r| r.include_instructions),
            asked_ahead: false,
            // Floored as the tool's whole-stream sampler is (`record::tool_spatial_run`); the
            // stage reads every reference, so it measures the short reuses' windows too.
            reuse: reuse
                .map(|r| {
                    Sampler::floored(r, crate::sampling::REPORT_FLOOR).map(Sampler::with_windows)
                })
                .transpose()?,
            reused: false,
            calls: CallPlaces::default(),
            next_call: 0,
            first_call_only: false,
            first_call_passed: false,
            cands: Vec::new(),
            passed: false,
            beside: None,
        })
    }

    pub(crate) fn options(&self) -> &SpatialOptions {
        &self.options
    }

    /// StatCache's profile of the full stream, once it has ended.
    pub(crate) fn profile(&self) -> Option<Profile> {
        (self.ended && self.reused)
            .then(|| self.reuse.as_ref().map(Sampler::finish))
            .flatten()
    }

    /// Fills `out` with the next sampled accesses read through `inner`; 0 at the end. A stream
    /// of which no line was sampled is an error at its end (an empty report would be wrong).
    pub(crate) fn read(
        &mut self,
        inner: &mut dyn AccessReader,
        out: &mut Batch,
        source: &crate::Source,
    ) -> Result<usize> {
        if self.passed {
            return inner.read_batch(out);
        }
        out.start_sampled(self.filter.hash(), self.filter.limit());
        loop {
            if self.at >= self.full.len() {
                if self.ended {
                    break;
                }
                crate::interrupt::check()?;
                if let (Some(s), false) = (&mut self.reuse, self.asked_ahead) {
                    // A trace that counts its references ahead spares the sampler the
                    // windows of samples it would drop at the end.
                    let counted = |c: crate::trace::native::Counts| {
                        c.accesses
                            - if s.options().include_instructions {
                                0
                            } else {
                                c.instrs
                            }
                    };
                    if let Some(n) = inner.counts_ahead().map(counted) {
                        s.expect_refs(n);
                    }
                    self.asked_ahead = true;
                }
                if !self.told {
                    inner.elide_fetches();
                    self.told = true;
                }
                if let (Some(beside), false) = (&mut self.beside, self.full.is_empty()) {
                    beside(&mut self.full);
                }
                self.full.forget_data();
                if inner.read_batch(&mut self.full)? == 0 {
                    self.ended = true;
                    // The end of the stream for it too.
                    self.beside = None;
                    // Nothing kept: no batch would carry the spans of what was read (a
                    // batch of no access ends the stream), so the counts would be lost.
                    if self.kept + out.len() as u64 == 0 && self.data + self.instrs > 0 {
                        return Err(no_line_sampled(source, self.data, &self.options));
                    }
                    break;
                }
                if self.full.data_addrs().is_none() {
                    self.full.index_data();
                }
                // A producer's sampled batches come with its own reuse profile.
                if let (Some(s), None) = (&mut self.reuse, self.full.sampling()) {
                    s.observe(&self.full);
                    self.reused = true;
                }
                self.at = 0;
                self.next_call = 0;
            }
            if self.filter_into(out) {
                break;
            }
        }
        self.kept += out.len() as u64;
        Ok(out.len())
    }
}

impl SpatialStage {
    /// [`SpatialStage::filter_into`] of a batch already sampled by its producer (the Valgrind
    /// tool's, with a limit that may lag, so a superset): the filter applied again keeps what
    /// it keeps of the full stream (docs/sampled.md), at the producer's positions, and the
    /// batch's span is added whole. Stops before a batch with a reference under the limit
    /// once `out` is full, so that what follows the last sampled reference is in the last
    /// batch's span.
    fn refilter_into(&mut self, out: &mut Batch) -> bool {
        let full = &self.full;
        let s = full.sampling().expect("a sampled batch");
        let hash = self.filter.hash();
        if out.len() >= OUT_LEN
            && full
                .addrs
                .iter()
                .any(|&a| self.filter.limit().admits(hash.of(a >> self.shift)))
        {
            return true;
        }
        let mut call = 0;
        for step in full.steps() {
            let (run, thread) = match step {
                Step::Accesses(run, thread) => (run, thread),
                Step::Call(e) => {
                    let place = s.calls.get(call).copied().unwrap_or_default();
                    out.push_sampled_call(e.thread, e.op, place);
                    call += 1;
                    continue;
                }
            };
            for i in run {
                let before = self.filter.limit();
                let keep = self
                    .filter
                    .keep_hashed(hash.of(full.addrs[i] >> self.shift));
                if self.filter.limit() != before {
                    out.lower_limit(self.filter.limit());
                }
                if keep {
                    out.set_thread(thread);
                    let (data, instrs) = (s.data_before[i], s.instrs_before[i]);
                    out.push_sampled(
                        full.addrs[i],
                        full.sizes[i],
                        full.kinds[i],
                        full.pcs[i],
                        data,
                        instrs,
                    );
                }
            }
        }
        let o = out.sampling_mut().expect("started sampled");
        for t in &s.span {
            o.span_mut(t.thread).add(t);
            self.data += t.data();
            self.instrs += t.instrs;
        }
        self.at = full.len();
        false
    }
}

pub(crate) fn no_line_sampled(
    source: &crate::Source,
    refs: u64,
    options: &SpatialOptions,
) -> Error {
    if refs == 0 {
        return Error::InvalidParameter {
            name: "--sampled",
            message: format!(
                "{source} has no data references to sample (only instruction fetches); \
                 leave out --sampled"
            ),
        };
    }
    Error::InvalidParameter {
        name: "sampling rate",
        message: format!(
            "no line of {source} was sampled at rate {}: its {refs} data references touch too few \
             lines for it; give a higher --rate, or leave out --sampled",
            options.rate
        ),
    }
}

impl Trace {
    /// Reads the trace as a sampled stream from now on (`--sampled`): the data references of
    /// the lines `spatial` samples, in batches that carry their sampling
    /// ([`crate::batch::Sampling`]). With `reuse`, StatCache's sampler also reads the full
    /// stream, and [`Trace::reuse_profile`] gives its profile at the end, as the Valgrind tool
    /// gives it for a running program. Fails for invalid options.
    pub fn sampled(
        &mut self,
        spatial: SpatialOptions,
        reuse: Option<SamplerOptions>,
    ) -> Result<()> {
        let mut stage = SpatialStage::new(spatial, reuse)?;
        // A reader that filters with these very options (the tool's stream) is not filtered
        // twice: its batches are the stage's (crates/cachescope/tests/tool_spatial.rs).
        stage.passed = self.sample_itself(&spatial);
        self.set_stage(stage);
        Ok(())
    }

    /// Under [`Trace::sampled`], hands every batch of the full stream, as read (instruction
    /// fetches' addresses, sizes and pcs left unspecified, the data index made), to `beside`
    /// once the stage has filtered it, so that an analysis of the full stream needs no second
    /// decode (`report --sampled`'s per-structure attribution). The stage drops `beside` at
    /// the end of the stream, or at [`Trace::end_beside`]. An error when the trace is not
    /// sampled, or its reader samples itself (the tool's stream: no full stream to hand).
    pub fn sampled_beside(&mut self, beside: Beside) -> Result<()> {
        match self.stage_mut() {
            Some(stage) if !stage.passed => {
                stage.beside = Some(beside);
                Ok(())
            }
            _ => Err(Error::InvalidParameter {
                name: "--sampled",
                message: "only a sampled trace read in full has a full stream to hand beside"
                    .into(),
            }),
        }
    }

    /// Drops what [`Trace::sampled_beside`] was given, if the stage still holds it (a pass
    /// stopped before the end of the stream).
    pub fn end_beside(&mut self) {
        if let Some(stage) = self.stage_mut() {
            stage.beside = None;
        }
    }

    /// Under [`Trace::sampled`], passes only the stream's first call event from now on: enough
    /// for [`crate::attribution::callgraph::starts_with_calls`] to say the trace has call
    /// events, for a report without the sampled call graph. Call events pass unfiltered and a
    /// batch ends only at a sampled reference, so a stretch without one would otherwise hold
    /// every call it makes (a recorded awk at R = 0.01: ~5.6 M calls after its last sampled
    /// reference, 400 MB). A reader that samples itself (the tool's stream) is left as it is.
    pub fn sampled_first_call_only(&mut self) {
        if let Some(stage) = self.stage_mut() {
            stage.first_call_only = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Access, AccessKind, ThreadId};
    use crate::batch::ThreadSpan;
    use crate::error::Source;
    use crate::spatial::{Limit, LineHash};
    use proptest::prelude::*;

    /// A reader of fixed batches.
    struct Batches(std::vec::IntoIter<Batch>);

    impl AccessReader for Batches {
        fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
            batch.clear();
            match self.0.next() {
                Some(b) => {
                    *batch = b;
                    Ok(batch.len())
                }
                None => Ok(0),
            }
        }
    }

    /// `(thread, kind code, line)` records cut into batches at `cuts`.
    fn trace(records: &[(ThreadId, u8, u64)], cuts: &[usize]) -> Trace {
        let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(records.len())).collect();
        cuts.extend([0, records.len()]);
        cuts.sort_unstable();
        // An empty batch would end the stream.
        cuts.dedup();
        let batches = cuts
            .windows(2)
            .map(|w| {
                let mut b = Batch::new();
                for &(t, k, line) in &records[w[0]..w[1]] {
                    b.set_thread(t);
                    let kind = AccessKind::from_code(k).unwrap();
                    b.push(Access {
                        kind,
                        ..Access::load(line * 64 + 3, 4)
                    });
                }
                b
            })
            .collect::<Vec<_>>();
        Trace::from_reader(
            Box::new(Batches(batches.into_iter())),
            Source::Workload("test".into()),
        )
    }

    /// One sampled access as the brute force sees it.
    #[derive(Debug, PartialEq)]
    struct Kept {
        thread: ThreadId,
        addr: u64,
        data_before: u64,
        instrs_before: u64,
        limit: Limit,
    }

    /// A stream of instruction fetches only has nothing to sample: an error, not a report
    /// that has lost its counts (proptest found the lost spans).
    #[test]
    fn a_stream_without_data_references_is_an_error() {
        let mut trace = trace(&[(1, 3, 0)], &[]);
        trace.sampled(SpatialOptions::default(), None).unwrap();
        let e = trace.read_batch(&mut Batch::new()).unwrap_err().to_string();
        assert!(e.contains("no data references"), "{e}");
    }

    /// A batch holds at most [`OUT_CALLS`] call events and those up to the next sampled
    /// reference, however few of the references are sampled (the bound that keeps a parallel
    /// pass's batches in flight small), and every call still passes, in order, with the
    /// counts before it; the data references' positions are those of one uncut batch.
    #[test]
    fn call_events_end_a_batch_at_the_bound() {
        use crate::batch::{CallOp, EnterKind};
        // A call before every data reference, over 100 lines of which a few are sampled.
        let n = 5 * OUT_CALLS as u64;
        let mut full = Vec::new();
        let mut b = Batch::new();
        for i in 0..n {
            if b.len() >= BATCH_LEN {
                full.push(std::mem::take(&mut b));
            }
            let op = CallOp::Enter {
                key: i,
                kind: EnterKind::Call,
            };
            b.push_call(1, op);
            b.push(Access::load((i % 100) * 64, 4));
        }
        full.push(b);
        let mut trace = Trace::from_reader(
            Box::new(Batches(full.into_iter())),
            Source::Workload("test".into()),
        );
        let options = SpatialOptions {
            rate: 0.05,
            seed: 7,
            ..SpatialOptions::default()
        };
        // The most calls between two sampled references (one call a reference).
        let mut filter = SpatialFilter::new(&options).unwrap();
        let want: Vec<u64> = (0..n).filter(|&i| filter.keep(i % 100)).collect();
        let gap = want.windows(2).map(|w| w[1] - w[0]).max().unwrap() as usize;
        assert!(gap < 1000, "{gap}");
        trace.sampled(options, None).unwrap();
        let (mut batch, mut calls, mut data, mut batches) = (Batch::new(), 0u64, 0u64, 0);
        let mut kept = Vec::new();
        while trace.read_batch(&mut batch).unwrap() > 0 {
            assert_eq!(batch.check_sampling(), Ok(()));
            assert!(
                batch.calls().len() <= OUT_CALLS + gap,
                "{}",
                batch.calls().len()
            );
            let s = batch.sampling().unwrap();
            for (e, p) in batch.calls().iter().zip(&s.calls) {
                // The call before data reference `calls` has `calls` references before it.
                assert_eq!(
                    e.op,
                    CallOp::Enter {
                        key: calls,
                        kind: EnterKind::Call
                    }
                );
                assert_eq!(p.before.loads, calls);
                calls += 1;
            }
            kept.extend(s.data_before.iter().copied());
            data += s.total_span().data();
            batches += 1;
        }
        assert_eq!((calls, data), (n, n));
        assert!(batches >= 5, "{batches} batches");
        // The references of the sampled lines, at their places in the full stream.
        assert_eq!(kept, want);
    }

    /// With [`Trace::sampled_first_call_only`], the stream's first call event passes (at
    /// position 0, as `starts_with_calls` reads it) and no other; the accesses and the spans
    /// are those of passing every call.
    #[test]
    fn only_the_first_call_passes_when_asked() {
        use crate::batch::{CallOp, EnterKind};
        let full = || {
            let mut b = Batch::new();
            for i in 0..20_000u64 {
                b.push_call(
                    1,
                    CallOp::Enter {
                        key: i,
                        kind: EnterKind::Call,
                    },
                );
                b.push(Access::load((i % 100) * 64, 4));
            }
            let options = SpatialOptions {
                rate: 0.05,
                seed: 7,
                ..SpatialOptions::default()
            };
            let mut trace = Trace::from_reader(
                Box::new(Batches(vec![b].into_iter())),
                Source::Workload("test".into()),
            );
            trace.sampled(options, None).unwrap();
            trace
        };
        let read = |mut trace: Trace| {
            let (mut batch, mut out) = (Batch::new(), Vec::new());
            while trace.read_batch(&mut batch).unwrap() > 0 {
                let s = batch.sampling().unwrap();
                out.push((
                    batch.addrs.clone(),
                    s.data_before.clone(),
                    s.total_span().data(),
                    batch.calls().to_vec(),
                ));
            }
            out
        };
        let all = read(full());
        let mut first = full();
        first.sampled_first_call_only();
        let first = read(first);
        assert_eq!(all.len(), first.len());
        assert!(all.iter().map(|b| b.3.len()).sum::<usize>() == 20_000);
        assert_eq!(first[0].3.len(), 1);
        assert_eq!(first[0].3[0].at, 0);
        assert!(first[1..].iter().all(|b| b.3.is_empty()));
        for (a, f) in all.iter().zip(&first) {
            assert_eq!((&a.0, &a.1, a.2), (&f.0, &f.1, f.2));
        }
    }

    /// A sampled batch's accesses, spans and call events' count.
    type SampledBatch = (Vec<Kept>, Vec<ThreadSpan>, usize);

    /// `(thread, kind code, line, call before it)` records cut into batches at `cuts`, read
    /// as a sampled stream with `options`, all call events passing or only the first: each
    /// batch's accesses with their threads, positions and limits, its spans, and its calls.
    fn sampled_with_calls(
        records: &[(ThreadId, u8, u64, bool)],
        cuts: &[usize],
        options: SpatialOptions,
        first_only: bool,
    ) -> Option<Vec<SampledBatch>> {
        use crate::batch::{CallOp, EnterKind};
        let mut batches = vec![Batch::new()];
        for (n, &(t, k, line, call)) in records.iter().enumerate() {
            if cuts.contains(&n) && !batches.last().unwrap().is_empty() {
                batches.push(Batch::new());
            }
            let b = batches.last_mut().unwrap();
            if call {
                let op = CallOp::Enter {
                    key: line,
                    kind: EnterKind::Call,
                };
                b.push_call(t, op);
            }
            let kind = AccessKind::from_code(k).unwrap();
            b.set_thread(t);
            b.push(Access {
                kind,
                ..Access::load(line * 64 + 3, 4)
            });
        }
        let mut trace = Trace::from_reader(
            Box::new(Batches(batches.into_iter())),
            Source::Workload("test".into()),
        );
        trace.sampled(options, None).unwrap();
        if first_only {
            trace.sampled_first_call_only();
        }
        let (mut batch, mut out) = (Batch::new(), Vec::new());
        loop {
            match trace.read_batch(&mut batch) {
                Ok(0) => return Some(out),
                Ok(_) => {}
                Err(_) => return None,
            }
            assert_eq!(batch.check_sampling(), Ok(()));
            let s = batch.sampling().unwrap();
            let kept = batch
                .iter_threaded()
                .enumerate()
                .map(|(i, (thread, a))| Kept {
                    thread,
                    addr: a.addr,
                    data_before: s.data_before[i],
                    instrs_before: s.instrs_before[i],
                    limit: s.limit_at(i),
                })
                .collect();
            out.push((kept, s.span.clone(), batch.calls().len()));
        }
    }

    /// Once the first call event has passed under [`Trace::sampled_first_call_only`], the
    /// stage filters each thread's run whole, calls skipped (`sampled/filter.rs`): over three
    /// threads and batches that end at [`OUT_LEN`] sampled references (so the filter stops
    /// inside a run and resumes there), its stream is the one passing every call, but for
    /// the calls.
    #[test]
    fn skipping_calls_keeps_the_stream() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let records: Vec<_> = (0..150_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let thread = 1 + (x >> 60) as u32 % 3;
                (thread, (x >> 8) as u8 % 4, (x >> 20) % 5000, x % 13 == 0)
            })
            .collect();
        let cuts = [30_000, 70_001, 70_002, 120_000];
        for max in [None, Some(300)] {
            let options = SpatialOptions {
                rate: 0.9,
                seed: 3,
                max_lines: max,
                ..SpatialOptions::default()
            };
            let all = sampled_with_calls(&records, &cuts, options, false).unwrap();
            let first = sampled_with_calls(&records, &cuts, options, true).unwrap();
            // Unbounded, the sample fills batches (each ending inside a run).
            assert!(max.is_some() || all.len() > 2, "{} batches", all.len());
            assert_eq!(first.iter().map(|b| b.2).sum::<usize>(), 1);
            assert!(all.iter().map(|b| b.2).sum::<usize>() > 10_000);
            let strip =
                |v: Vec<SampledBatch>| v.into_iter().map(|(k, s, _)| (k, s)).collect::<Vec<_>>();
            assert_eq!(strip(first), strip(all));
        }
    }

    proptest! {
        /// The same at any rate, cut anywhere, over threads that switch often.
        #[test]
        fn skipping_calls_keeps_any_stream(
            records in proptest::collection::vec((1u32..4, 0u8..4, 0u64..200, proptest::bool::ANY), 1..1500),
            cuts in proptest::collection::vec(0usize..1500, 0..5),
            rate in 0.05f64..1.0,
            max in proptest::option::of(1u64..30),
        ) {
            let options = SpatialOptions { rate, seed: 7, max_lines: max, ..SpatialOptions::default() };
            let all = sampled_with_calls(&records, &cuts, options, false);
            let first = sampled_with_calls(&records, &cuts, options, true);
            let strip = |v: Option<Vec<SampledBatch>>| {
                v.map(|v| v.into_iter().map(|(k, s, _)| (k, s)).collect::<Vec<_>>())
            };
            prop_assert_eq!(strip(first), strip(all));
        }
    }

    proptest! {
        /// Call events pass the stage unfiltered, in order, each with its thread's counts of
        /// the full stream before it and its thread's last fetch (brute force), at any rate
        /// and however the batches are cut.
        #[test]
        fn call_events_pass_with_their_places(
            records in proptest::collection::vec((1u32..3, 0u8..4, 0u64..100, proptest::bool::ANY), 1..1500),
            cuts in proptest::collection::vec(0usize..1500, 0..4),
            rate in 0.05f64..1.0,
        ) {
            use crate::batch::{CallOp, CallPlace, EnterKind, NO_PC};
            // A call event of the record's thread before each flagged record.
            let mut want = Vec::new();
            let mut counts = std::collections::BTreeMap::<ThreadId, CallPlace>::new();
            let mut cut_batches = vec![Batch::new()];
            let mut cuts: Vec<usize> = cuts;
            cuts.sort_unstable();
            for (n, &(t, k, line, call)) in records.iter().enumerate() {
                if cuts.binary_search(&n).is_ok() && !cut_batches.last().unwrap().is_empty() {
                    cut_batches.push(Batch::new());
                }
                let b = cut_batches.last_mut().unwrap();
                let place = counts.entry(t).or_insert(CallPlace {
                    before: ThreadSpan { thread: t, ..ThreadSpan::default() },
                    pc: NO_PC,
                });
                let op = CallOp::Enter { key: line, kind: EnterKind::Call };
                if call {
                    b.push_call(t, op);
                    want.push((t, op, *place));
                }
                let kind = AccessKind::from_code(k).unwrap();
                b.set_thread(t);
                b.push(Access { kind, ..Access::load(line * 64 + 3, 4) });
                place.before.count(kind);
                if kind == AccessKind::Instr {
                    place.pc = line * 64 + 3;
                }
            }
            let has_data = records.iter().any(|r| r.1 != 3);
            let mut trace = Trace::from_reader(
                Box::new(Batches(cut_batches.into_iter())),
                Source::Workload("test".into()),
            );
            trace.sampled(SpatialOptions { rate, seed: 7, ..SpatialOptions::default() }, None).unwrap();
            let mut batch = Batch::new();
            let mut got = Vec::new();
            loop {
                match trace.read_batch(&mut batch) {
                    Ok(0) => break,
                    Ok(_) => {}
                    // Nothing sampled: no stream to carry them.
                    Err(_) => return Ok(()),
                }
                prop_assert_eq!(batch.check_sampling(), Ok(()));
                let s = batch.sampling().unwrap();
                prop_assert_eq!(s.calls.len(), batch.calls().len());
                for (e, p) in batch.calls().iter().zip(&s.calls) {
                    got.push((e.thread, e.op, *p));
                }
            }
            prop_assert!(has_data);
            prop_assert_eq!(got, want);
        }
    }

    proptest! {
        /// The stage's stream is the filter applied to the full stream reference by
        /// reference, with each access's positions and limit, and its spans add up to the
        /// full stream's counts per thread and kind.
        #[test]
        fn stage_is_the_filter_with_positions(
            records in proptest::collection::vec((1u32..4, 0u8..4, 0u64..200), 1..2000),
            cuts in proptest::collection::vec(0usize..2000, 0..5),
            rate in 0.05f64..1.0,
            max in proptest::option::of(1u64..30),
        ) {
            let options = SpatialOptions { rate, seed: 7, max_lines: max, ..SpatialOptions::default() };
            // Brute force.
            let mut filter = SpatialFilter::new(&options).unwrap();
            let (mut data, mut instrs) = (0, 0);
            let mut want = Vec::new();
            let mut totals = std::collections::BTreeMap::<ThreadId, ThreadSpan>::new();
            for &(t, k, line) in &records {
                let kind = AccessKind::from_code(k).unwrap();
                let entry = totals.entry(t).or_insert(ThreadSpan { thread: t, ..ThreadSpan::default() });
                entry.count(kind);
                if kind == AccessKind::Instr {
                    instrs += 1;
                    continue;
                }
                if filter.keep(line) {
                    want.push(Kept { thread: t, addr: line * 64 + 3, data_before: data, instrs_before: instrs, limit: filter.limit() });
                }
                data += 1;
            }
            let mut trace = trace(&records, &cuts);
            trace.sampled(options, None).unwrap();
            let mut batch = Batch::new();
            let mut got = Vec::new();
            let mut spans = std::collections::BTreeMap::<ThreadId, ThreadSpan>::new();
            let hash = LineHash::new(7);
            loop {
                match trace.read_batch(&mut batch) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => {
                        // Only a stream of which nothing was sampled fails.
                        prop_assert!(want.is_empty(), "{e}");
                        return Ok(());
                    }
                }
                prop_assert_eq!(batch.check_sampling(), Ok(()));
                let s = batch.sampling().unwrap();
                prop_assert_eq!(s.key, hash.key());
                for (i, (t, a)) in batch.iter_threaded().enumerate() {
                    got.push(Kept {
                        thread: t,
                        addr: a.addr,
                        data_before: s.data_before[i],
                        instrs_before: s.instrs_before[i],
                        limit: s.limit_at(i),
                    });
                }
                for span in &s.span {
                    spans.entry(span.thread).or_insert(ThreadSpan { thread: span.thread, ..ThreadSpan::default() }).add(span);
                }
            }
            prop_assert_eq!(got, want);
            prop_assert_eq!(spans, totals);
        }
    }
}
