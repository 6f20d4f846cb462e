//! [`TlbSim`]: TLBs over a trace, shared or one set per thread, as an [`Analysis`]; and
//! [`Walked`], the same in front of another analysis, which then sees each page walk's
//! entry reads as loads just before the reference that needed them.

use crate::access::{AccessKind, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::Result;

use super::pages::PageMap;
use super::spec::TlbConfig;
use super::tlbs::{TlbCounts, Tlbs, Translation};
use super::walk::{ENTRY_BYTES, WALK_PC, walk_entries};

/// TLBs simulated over a trace. See the module documentation of [`crate::tlb`].
#[derive(Clone, Debug)]
pub struct TlbSim {
    pages: PageMap,
    per_thread: bool,
    /// Empty TLBs, copied for each thread that appears.
    empty: Tlbs,
    /// The TLBs with their thread, in order of first appearance (per thread), or the one set
    /// all threads share.
    tlbs: Vec<(ThreadId, Tlbs)>,
    /// Page-table entry reads the walks made.
    walk_refs: u64,
}

/// One thread's TLBs in a [`TlbReport`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ThreadTlbs {
    /// The thread, as `stats` lists them.
    pub thread: ThreadId,
    /// Its arrays' counts.
    pub tlbs: Vec<TlbCounts>,
    /// Its page walks.
    pub page_walks: u64,
}

/// What [`TlbSim`] counted. Field names are a public contract (`simulate --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TlbReport {
    /// Every array, summed over the threads: DTLB, ITLB, STLB arrays.
    pub tlbs: Vec<TlbCounts>,
    /// Translations no level held: page walks.
    pub page_walks: u64,
    /// The page-table entries those walks read (walk.rs), fed to the data caches when they
    /// are simulated with the TLBs.
    pub walk_refs: u64,
    /// Each thread's TLBs, when every thread has its own (the multi-core model).
    #[serde(rename = "tlb_threads", skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadTlbs>,
}

impl TlbSim {
    /// TLBs shaped by `config` over pages as `pages` says; `per_thread` gives every thread
    /// TLBs of its own, otherwise all threads share one set.
    pub fn new(config: &TlbConfig, pages: PageMap, per_thread: bool) -> Result<TlbSim> {
        let empty = Tlbs::new(config, pages.smallest())?;
        let tlbs = if per_thread {
            Vec::new()
        } else {
            vec![(crate::access::MAIN_THREAD, empty.clone())]
        };
        Ok(TlbSim {
            pages,
            per_thread,
            empty,
            tlbs,
            walk_refs: 0,
        })
    }

    /// The index in `tlbs` of `thread`'s TLBs (made on its first reference).
    fn index_of(&mut self, thread: ThreadId) -> usize {
        if !self.per_thread {
            return 0;
        }
        if let Some(i) = self.tlbs.iter().position(|t| t.0 == thread) {
            return i;
        }
        self.tlbs.push((thread, self.empty.clone()));
        self.tlbs.len() - 1
    }

    /// Translates every reference of `b` in order; with `out`, appends to it each walk's entry
    /// reads (loads of [`ENTRY_BYTES`] by [`WALK_PC`]) followed by the reference, thread by
    /// thread as in `b`.
    pub fn translate(&mut self, b: &Batch, mut out: Option<&mut Batch>) {
        for (run, thread) in b.thread_runs() {
            let t = self.index_of(thread);
            if let Some(out) = out.as_deref_mut() {
                out.set_thread(thread);
            }
            let tlbs = &mut self.tlbs[t].1;
            let (side_d, side_i) = (tlbs.translates(false), tlbs.translates(true));
            for i in run {
                let (addr, kind) = (b.addrs[i], b.kinds[i]);
                let instr = kind == AccessKind::Instr;
                if (instr && side_i) || (!instr && side_d) {
                    let page = self.pages.page_of(addr);
                    if tlbs.translate(addr, page, instr) == Some(Translation::Walk) {
                        let before = out.as_deref().map_or(0, Batch::len);
                        if let Some(out) = out.as_deref_mut() {
                            for e in walk_entries(addr, page.shift()) {
                                out.push_raw(e, ENTRY_BYTES, AccessKind::Load, WALK_PC);
                            }
                            self.walk_refs += (out.len() - before) as u64;
                        } else {
                            self.walk_refs += walk_entries(addr, page.shift()).count() as u64;
                        }
                    }
                }
                if let Some(out) = out.as_deref_mut() {
                    out.push_raw(addr, b.sizes[i], kind, b.pcs[i]);
                }
            }
        }
    }

    /// The counts so far.
    pub fn finish(&self) -> TlbReport {
        let mut tlbs = self.empty.counts();
        for (_, t) in &self.tlbs {
            for (sum, c) in tlbs.iter_mut().zip(t.counts()) {
                sum.add(&c);
            }
        }
        let threads = if self.per_thread {
            self.tlbs
                .iter()
                .map(|(thread, t)| ThreadTlbs {
                    thread: *thread,
                    tlbs: t.counts(),
                    page_walks: t.walks(),
                })
                .collect()
        } else {
            Vec::new()
        };
        TlbReport {
            tlbs,
            page_walks: self.tlbs.iter().map(|(_, t)| t.walks()).sum(),
            walk_refs: self.walk_refs,
            threads,
        }
    }
}

impl Analysis for TlbSim {
    fn observe(&mut self, b: &Batch) {
        self.translate(b, None);
    }
}

/// [`TlbSim`] in front of `inner`: `inner` observes the trace with every page walk's entry
/// reads inserted before the reference that walked (loads of 8 bytes by
/// [`WALK_PC`](super::WALK_PC)).
#[derive(Debug)]
pub struct Walked<A> {
    tlb: TlbSim,
    inner: A,
    buf: Batch,
}

impl<A: Analysis> Walked<A> {
    /// `tlb` feeding `inner`.
    pub fn new(tlb: TlbSim, inner: A) -> Walked<A> {
        Walked {
            tlb,
            inner,
            buf: Batch::new(),
        }
    }

    /// The TLBs' counts and the analysis behind them.
    pub fn finish(self) -> (TlbReport, A) {
        (self.tlb.finish(), self.inner)
    }

    /// The analysis behind the TLBs.
    pub fn inner(&self) -> &A {
        &self.inner
    }
}

impl<A: Analysis> Analysis for Walked<A> {
    fn observe(&mut self, b: &Batch) {
        self.buf.clear();
        self.tlb.translate(b, Some(&mut self.buf));
        self.inner.observe(&self.buf);
    }
}
