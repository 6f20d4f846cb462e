//! The sharing analysis of a sampled stream plus the lines two or more threads write: a
//! sampled report's threads section reads the whole trace through a [`Promoter`], which passes
//! on the data references of the sampled lines (the same lines [`crate::trace::Trace::sampled`]
//! keeps, from the same filter) and every reference to the lines its [`Detector`] found written
//! by a second thread in the read before. Such a line is *promoted*: measured at rate 1, from
//! the start of the stream, beside the sample (counting it only from the second writer's
//! reference on would lose the first writer's references whenever the threads ran one after
//! the other, as Valgrind runs them in long slices: the first writer's bytes, so the kind of
//! sharing, and the coherence misses of the model would be lost with them).

use std::path::Path;

use super::detect::{Detector, Found};
use super::line::MINOR;
use super::writers::Writers;
use super::{Finder, Options, SharedLine, Sharing, ThreadUse};
use crate::access::{LineSize, ThreadId};
use crate::analysis::Analysis;
use crate::batch::{Batch, Step};
use crate::error::Result;
use crate::pass::{Hooks, Pass};
use crate::spatial::{SpatialFilter, SpatialOptions};
use crate::trace::Trace;

/// Bits of the bitmap that spares most references a look in the map of promoted lines.
const MARK_LOG2: u32 = 16;

/// The filter and the promoted lines; see the module doc.
pub struct Promoter {
    filter: SpatialFilter,
    shift: u32,
    /// One bit per hash of a promoted line (most references are to lines of no such hash,
    /// and skip the map).
    marked: Vec<u64>,
    /// Promoted lines → data references of the stream before their second writer's.
    promoted: Found,
    summary: super::detect::Promotion,
    out: Batch,
}

impl Promoter {
    /// Filters as `spatial` samples, promoting the lines `detector` found.
    pub fn new(spatial: SpatialOptions, detector: &Detector) -> Result<Promoter> {
        let mut marked = vec![0u64; (1 << MARK_LOG2) / 64];
        for &line in detector.found().keys() {
            let bit = Writers::set_of(line, MARK_LOG2);
            marked[bit / 64] |= 1 << (bit % 64);
        }
        Ok(Promoter {
            filter: SpatialFilter::new(&spatial)?,
            shift: spatial.line_size.shift(),
            marked,
            promoted: detector.found().clone(),
            summary: detector.summary(),
            out: Batch::new(),
        })
    }

    /// The accesses of `full` to pass on: the sampled lines' and the promoted lines' data
    /// references, and every call event.
    pub fn filter(&mut self, full: &Batch) -> &Batch {
        self.out.clear();
        for step in full.steps() {
            let (run, thread) = match step {
                Step::Call(e) => {
                    self.out.push_call(e.thread, e.op);
                    continue;
                }
                Step::Accesses(run, thread) => (run, thread),
            };
            for i in run {
                let kind = full.kinds[i];
                if !kind.is_data() {
                    continue;
                }
                let addr = full.addrs[i];
                let line = addr >> self.shift;
                // The filter sees every data reference, as the sampled stage's does.
                if self.filter.keep(line) | self.is_promoted(line) {
                    self.out.set_thread(thread);
                    self.out.push_raw(addr, full.sizes[i], kind, full.pcs[i]);
                }
            }
        }
        &self.out
    }

    #[inline]
    fn is_promoted(&self, line: u64) -> bool {
        let bit = Writers::set_of(line, MARK_LOG2);
        self.marked[bit / 64] >> (bit % 64) & 1 == 1 && self.promoted.contains_key(&line)
    }

    /// Marks each line of `sharing` sampled (in the sample at its end) or promoted (found by
    /// the detector only, with where its second writer was), and adds the detector's summary.
    pub fn mark(&self, sharing: &mut Sharing) {
        let (hash, limit) = (self.filter.hash(), self.filter.limit());
        for l in &mut sharing.lines {
            let line = l.addr >> self.shift;
            let at = self.promoted.get(&line).copied();
            let at = at.filter(|_| !limit.admits(hash.of(line)));
            l.found = Some(if at.is_some() { "promoted" } else { "sampled" }.into());
            l.promoted_at = at;
        }
        sharing.promotion = Some(self.summary.clone());
    }
}

/// Marks each line of a live run's `sharing` sampled or promoted, as [`Promoter::mark`] does,
/// from what the tool promoted (`promoted`, read from its stream: `cs_share.c`). A promoted
/// line was measured from its promoting write on, with the bytes its writer before had
/// written (docs/sampled.md, "sharing").
pub fn mark_live(sharing: &mut Sharing, promoted: &crate::spatial::promoted::Promoted) {
    for l in &mut sharing.lines {
        let line = l.addr / l.line_size.max(1);
        let at = promoted.lines.get(&line).copied();
        let at = at.filter(|_| !promoted.sampled.contains(&line));
        l.found = Some(if at.is_some() { "promoted" } else { "sampled" }.into());
        l.promoted_at = at;
        if let (Some(_), Some(&before)) = (at, promoted.before.get(&line)) {
            reclass(l, before);
        }
    }
    sharing.promotion = Some(super::detect::Promotion {
        table_lines: promoted.table_lines,
        evicted: promoted.evicted,
        promoted: promoted.lines.len() as u64,
        max_lines: promoted.max_lines,
        dropped: promoted.dropped,
    });
}

/// Drops the lines of a live run's table (analysed with `all`) that the model gave no
/// coherence miss, as it drops them itself, except the falsely shared lines the tool
/// promoted: such a line is measured from its second writer's first write on, and Valgrind
/// runs threads in long slices, so whether that part of the run interleaves its writers (and
/// the model counts a miss) depends on the schedule, while its writers' bytes, which make it
/// false, are known either way. (A truly shared line with none is dropped, as on a trace.)
pub fn keep_listed(sharing: &mut Sharing) {
    sharing
        .lines
        .retain(|l| l.coherence_misses > 0 || (l.promoted_at.is_some() && l.kind == "false"));
}

/// A live promoted line's kind, decided as the analysis decides it (`line.rs`: the threads
/// making at least 1/MINOR of its accesses, when two or more do) but with `before`, the
/// writer before the promoting write, among the deciding threads: its references before
/// that write were not measured (it may have made them all then, in one long slice), so its
/// share of those measured says nothing, and its bytes are known.
fn reclass(l: &mut SharedLine, before: ThreadId) {
    let total: u64 = l.threads.iter().map(|t| t.reads + t.writes).sum();
    let counts = |t: &&ThreadUse| t.thread == before || (t.reads + t.writes) * MINOR >= total;
    let mut deciding: Vec<&ThreadUse> = l.threads.iter().filter(counts).collect();
    if deciding.len() < 2 {
        deciding = l.threads.iter().collect();
    }
    let overlap = deciding.iter().enumerate().any(|(i, a)| {
        deciding
            .iter()
            .enumerate()
            .any(|(j, b)| i != j && a.write_mask() & (b.read_mask() | b.write_mask()) != 0)
    });
    let kind = if overlap { "true" } else { "false" };
    if l.kind == kind {
        return;
    }
    l.kind = kind.into();
    let named: Vec<ThreadUse> = deciding
        .iter()
        .filter(|t| t.read_mask() | t.write_mask() != 0)
        .map(|t| (*t).clone())
        .collect();
    l.fix = match LineSize::new(l.line_size) {
        Ok(size) if !overlap => Some(super::line::fix(&named, size)),
        _ => None,
    };
}

/// The first pass's analyses fed through the promoter.
pub(super) struct Fed<'a> {
    pub(super) promoter: &'a mut Promoter,
    pub(super) finder: &'a mut Finder,
}

impl Analysis for Fed<'_> {
    fn observe(&mut self, batch: &Batch) {
        let out = self.promoter.filter(batch);
        if out.is_empty() && out.calls().is_empty() {
            return;
        }
        for a in self.finder.analyses() {
            a.observe(out);
        }
    }
}

/// [`super::analyse`] of the stream `spatial` samples plus the lines `detector` found, read
/// from the whole `trace`; each listed line says how it was found ([`Promoter::mark`]).
pub fn analyse<H: Hooks>(
    trace: &mut Trace,
    pass: &mut Pass<H>,
    sharing: Options,
    log: Option<&Path>,
    (spatial, detector): (SpatialOptions, &Detector),
) -> Result<Sharing, H::Error> {
    let mut promoter = Promoter::new(spatial, detector)?;
    let mut result = super::model::analyse_through(trace, pass, sharing, log, Some(&mut promoter))?;
    promoter.mark(&mut result);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::super::detect::PromoteOptions;
    use super::*;
    use crate::access::{Access, AccessKind, ThreadId};
    use crate::trace::Observing;
    use proptest::prelude::*;
    use std::sync::{Arc, Mutex};

    /// `(thread, kind code 0-2, line, byte)` records in batches of 300, an instruction fetch
    /// after each.
    fn batches(records: &[(ThreadId, u8, u64, u64)]) -> Vec<Batch> {
        records
            .chunks(300)
            .map(|c| {
                let mut b = Batch::new();
                for &(t, k, line, byte) in c {
                    b.set_thread(t);
                    b.push(Access {
                        kind: AccessKind::from_code(k).unwrap(),
                        ..Access::load(line * 64 + byte * 8, 8)
                    });
                    b.push(Access {
                        kind: AccessKind::Instr,
                        ..Access::load(0x40_0000 + line, 4)
                    });
                }
                b
            })
            .collect()
    }

    /// A reader of fixed batches.
    struct Batches(std::vec::IntoIter<Batch>);

    impl crate::trace::AccessReader for Batches {
        fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
            batch.clear();
            if let Some(b) = self.0.next() {
                *batch = b;
            }
            Ok(batch.len())
        }
    }

    fn trace(records: &[(ThreadId, u8, u64, u64)]) -> Trace {
        Trace::from_reader(
            Box::new(Batches(batches(records).into_iter())),
            crate::Source::Workload("test".into()),
        )
    }

    fn detector(records: &[(ThreadId, u8, u64, u64)], options: PromoteOptions) -> Detector {
        let mut d = Detector::new(crate::LineSize::DEFAULT, options);
        for b in batches(records) {
            d.observe(&b);
        }
        d
    }

    /// Every access of the sampled stream of `trace`, with its positions; its error's text.
    fn sampled(
        mut trace: Trace,
        spatial: SpatialOptions,
    ) -> std::result::Result<Vec<(ThreadId, u64, u64, u64)>, String> {
        trace.sampled(spatial, None).unwrap();
        let mut b = Batch::new();
        let mut all = Vec::new();
        while trace.read_batch(&mut b).map_err(|e| e.to_string())? > 0 {
            let s = b.sampling().unwrap();
            for (i, (t, a)) in b.iter_threaded().enumerate() {
                all.push((t, a.addr, s.data_before[i], s.instrs_before[i]));
            }
        }
        Ok(all)
    }

    proptest! {
        /// Brute force: the detector finds exactly the lines two or more threads write, each
        /// at the first write by a thread other than the last writer; the promoter passes on
        /// every reference to a sampled line or a found one. The table (4,096 lines) holds the
        /// 64 lines without a collision, which the test checks. The sampled stream the
        /// per-thread curves read is the same under the detector.
        #[test]
        fn every_line_two_threads_write_is_found_and_passed_whole(
            records in proptest::collection::vec((1u32..5, 0u8..3, 0u64..64, 0u64..8), 1..3000),
            rate in 0.01f64..0.6,
            seed in 1u64..4,
        ) {
            let spatial = SpatialOptions { rate, seed, max_lines: None, ..SpatialOptions::default() };
            let d = detector(&records, PromoteOptions { sets_log2: 10, max_lines: 1000 });
            prop_assert_eq!(d.summary().evicted, 0);
            prop_assert_eq!(d.summary().dropped, 0);
            let mut p = Promoter::new(spatial, &d).unwrap();
            let mut got = Vec::new();
            for b in batches(&records) {
                let out = p.filter(&b);
                got.extend(out.iter_threaded().map(|(t, a)| (t, a.kind, a.addr)));
            }
            // Brute force.
            let mut last_writer = std::collections::HashMap::new();
            let mut found = Found::default();
            for (n, &(t, k, line, _)) in records.iter().enumerate() {
                if k != 0 {
                    if let Some(u) = last_writer.insert(line, t) {
                        if u != t {
                            found.entry(line).or_insert(n as u64);
                        }
                    }
                }
            }
            prop_assert_eq!(d.found(), &found);
            let mut filter = SpatialFilter::new(&spatial).unwrap();
            let want: Vec<_> = records
                .iter()
                .filter(|&&(_, _, line, _)| filter.keep(line) | found.contains_key(&line))
                .map(|&(t, k, line, byte)| (t, AccessKind::from_code(k).unwrap(), line * 64 + byte * 8))
                .collect();
            prop_assert_eq!(got, want);
            // The curves' read: the same sampled stream with the detector below the stage.
            let mut wrapped = trace(&records);
            let shared = Arc::new(Mutex::new(Detector::new(crate::LineSize::DEFAULT, PromoteOptions::default())));
            let inner = shared.clone();
            wrapped.wrap(move |r| Box::new(Observing::new(r, inner)));
            prop_assert_eq!(sampled(wrapped, spatial), sampled(trace(&records), spatial));
            let seen = shared.lock().unwrap().found().clone();
            prop_assert_eq!(seen, found);
        }
    }

    /// Past the cap, second writers are dropped and counted once per line; lines whose two
    /// writers' bytes overlap get half the cap.
    #[test]
    fn the_cap_drops_and_counts_lines_once() {
        // Ten lines written by threads 1 and 2 at the same bytes (overlapping), each twice;
        // then ten written at disjoint bytes.
        let mut records = Vec::new();
        for _ in 0..2 {
            for line in 0..10 {
                records.extend([(1, 1, line, 0), (2, 1, line, 0)]);
            }
        }
        for line in 100..110 {
            records.extend([(1, 1, line, 0), (2, 1, line, 1), (1, 1, line, 0)]);
        }
        let d = detector(
            &records,
            PromoteOptions {
                sets_log2: 10,
                max_lines: 4,
            },
        );
        let s = d.summary();
        assert_eq!(s.promoted, 4);
        // Lines 0 and 1 take the overlapping half; 2-9 dropped once each; 100 and 101 the
        // rest; 102-109 dropped once each.
        for line in [0, 1, 100, 101] {
            assert!(d.found().contains_key(&line), "{line}");
        }
        assert_eq!(s.dropped, 8 + 8);
    }
}
