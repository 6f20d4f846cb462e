//! The figures a report has: which ones (optional sections only when they have data), in page
//! order, with the title and caption `report.json` lists and the page shows. Drawing them is
//! `cachescope-report`'s; what they are belongs to the data model.

use super::model::{FigureInfo, Report};

/// The report's figures. Each has one drawing in `cachescope-report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureKind {
    /// Miss-ratio curves: every method against the exact ones.
    Mrc,
    /// Replacement policies against the optimal bound.
    Policies,
    /// The working-set graph (HOTL footprint).
    WorkingSet,
    /// Fill time and inter-miss time.
    FillTime,
    /// The reuse-time histogram.
    ReuseTime,
    /// The stack-distance histogram.
    StackDistance,
    /// Miss classes of set-associative caches.
    ThreeC,
    /// L2 misses predicted from the L1 stack distances, against simulation.
    L2Mrc,
    /// L2 reuse distances, simulated and predicted.
    L2Reuse,
    /// The phase timeline.
    Phases,
    /// The evicted-by heatmap of data-structure attribution.
    EvictedBy,
    /// Each thread's miss-ratio curve.
    Threads,
    /// The findings of `advise`: misses before and after each change.
    WhatToChange,
    /// Each thread's TLB miss ratio for every entry count.
    Pages,
    /// The call graph's flame graph of inclusive D1 misses, with the function table.
    CallGraph,
}

impl FigureKind {
    /// Its id, title and caption.
    pub fn info(self) -> FigureInfo {
        let (id, title, caption) = match self {
            FigureKind::Mrc => (
                "mrc",
                "Miss-ratio curves: every method against the exact ones",
                "Misses per data reference (cold misses included) of a fully associative cache of each size, \
                 log2 axis; solid black is exact LRU, grey dots exact random replacement, dashed lines the models: \
                 the closer a model follows the exact curve of its policy, the better it predicts.",
            ),
            FigureKind::Policies => (
                "policies",
                "Replacement policies against the optimal bound",
                "Misses per data reference (cold misses included) by cache size, log2 axis: LRU in the \
                 3C section's set-associative caches (exact simulation), FIFO, SRRIP and DRRIP (Jaleel et \
                 al. 2010) in the same caches (miniature simulations of at least 256 sets, exact below), \
                 and Belady's OPT for a fully associative cache (exact), which no policy beats: the gap \
                 between a policy and OPT is what a better replacement policy could still win.",
            ),
            FigureKind::WorkingSet => (
                "working-set",
                "Working-set graph",
                "Average bytes touched by a window of w consecutive data references (HOTL footprint fp(w)), \
                 both axes logarithmic: it levels off at the program's whole footprint, and its slope at w is \
                 the miss ratio of the cache that fills in w references.",
            ),
            FigureKind::FillTime => (
                "fill-time",
                "Fill time and inter-miss time",
                "For each cache size, references until the cache is full (fill time) and references between \
                 two misses once it is (inter-miss time, one over the miss ratio); a long inter-miss time \
                 means the program fits.",
            ),
            FigureKind::ReuseTime => (
                "reuse-time",
                "Reuse-time histogram",
                "Share of data references per power-of-two range of reuse time (references since the last \
                 access to the same line); 'cold' are first references. Bars to the right need bigger caches.",
            ),
            FigureKind::StackDistance => (
                "stack-distance",
                "Stack-distance histogram",
                "Share of data references per power-of-two range of LRU stack distance (other lines touched \
                 since the last access to the same line): a fully associative LRU cache of C lines hits \
                 exactly the bars left of C.",
            ),
            FigureKind::ThreeC => (
                "three-c",
                "Miss classes of set-associative caches",
                "Misses per data reference of simulated set-associative LRU caches, stacked as cold, capacity \
                 and conflict misses; the line is Smith's estimate from the stack distances. Conflict misses \
                 are what full associativity would remove.",
            ),
            FigureKind::L2Mrc => (
                "l2",
                "L2 misses predicted from the L1 stack distances",
                "Local L2 miss ratio (L2 misses per L1 miss, cold included) behind a 32 KiB fully associative \
                 LRU L1, per L2 size (log2 axis): black is the exact two-level simulation, dashed lines Ji, \
                 Ling & Liu's model from the L1 stack-distance histogram alone (the paper's equations and the \
                 corrected reading); where they meet, one pass of L1 distances predicts every L2.",
            ),
            FigureKind::L2Reuse => (
                "l2-reuse",
                "L2 reuse-distance histogram: simulated and predicted",
                "Share of L2 references (L1 misses) per power-of-two range of L2 reuse distance (L2 \
                 references since the last one to the same line): bars are the simulation, lines the model's \
                 Eq. 2 prediction; an L2 of C lines with random replacement mostly hits the bars well left \
                 of C.",
            ),
            FigureKind::Phases => (
                "phases",
                "Phase timeline",
                "L2 hit rate per interval (line) over the phase setvectors put it in (background colour): \
                 good phase detection changes colour where the hit rate changes level.",
            ),
            FigureKind::EvictedBy => (
                "evicted-by",
                "Evicted-by heatmap",
                "Share of each structure's evicted lines (row) evicted by misses of each structure (column), \
                 in percent: dark cells off the diagonal are structures that fight over the cache.",
            ),
            FigureKind::WhatToChange => (
                "what-to-change",
                "What to change",
                "Misses of the data levels as the trace is (grey) and after each finding's change \
                 (coloured), most saved first: each predicted by simulating the trace with the change \
                 applied to its addresses (`cachescope whatif`), a pale bar an estimate (blocking \
                 changes the order of references, which no address change can). The table below says \
                 what to change and why; docs/advice.md how each is found and predicted.",
            ),
            FigureKind::Threads => (
                "threads",
                "Miss-ratio curves per thread",
                "Misses per data reference (cold misses included) of each thread's own references in a fully \
                 associative LRU cache of each size (exact, log2 axis), as if the thread had the cache to \
                 itself: where a thread's knee lies is the private cache it needs. The table below lists the \
                 lines threads share, true or false, with the coherence misses each causes in a machine of \
                 private 32 KiB L1s over a shared 8 MiB LL (the threads re-interleaved every 100 \
                 instructions; `cachescope sharing` has the options).",
            ),
            FigureKind::Pages => (
                "pages",
                "TLB miss ratio for every entry count",
                "Misses per data reference (cold misses included) of a fully associative LRU TLB of 4 KiB \
                 pages with each entry count (log2 axis), each thread with a TLB of its own: the page-level \
                 stack-distance curve. The marks are Skylake's first-level DTLB (64 entries) and STLB (1536): \
                 what a curve still misses past 1536 entries are page walks that 2 MiB pages could save \
                 (`simulate --pages 2M`, docs/tlb.md).",
            ),
            FigureKind::CallGraph => (
                "callgraph",
                "Misses inclusive of callees: the call graph",
                "A flame graph of D1 misses (Cachegrind's cache model): each box a calling context, a \
                 path of functions from a thread's first frame up (a recursive function once), as wide \
                 as the misses made in it and in everything it called, its callees stacked on it. The \
                 table lists the functions with the most inclusive misses beside their own; \
                 `cachescope attribute TRACE --callgraph` has every function, its calls and the \
                 structures each misses on (docs/callgraph.md).",
            ),
        };
        FigureInfo {
            id: id.into(),
            title: title.into(),
            caption: caption.into(),
        }
    }
}

/// The figures a report has, in page order: optional sections only when they have data.
pub fn kinds(r: &Report) -> Vec<FigureKind> {
    let mut k = vec![FigureKind::Mrc];
    if r.policies.iter().any(|m| !m.points.is_empty()) {
        k.push(FigureKind::Policies);
    }
    k.extend([
        FigureKind::WorkingSet,
        FigureKind::FillTime,
        FigureKind::ReuseTime,
        FigureKind::StackDistance,
        FigureKind::ThreeC,
    ]);
    if r.l2.as_ref().is_some_and(|l| l.l2_refs > 0) {
        k.push(FigureKind::L2Mrc);
        k.push(FigureKind::L2Reuse);
    }
    if r.phases.as_ref().is_some_and(|p| !p.intervals.is_empty()) {
        k.push(FigureKind::Phases);
    }
    if r.attribution
        .as_ref()
        .is_some_and(|a| !a.evicted_by.rows.is_empty())
    {
        k.push(FigureKind::EvictedBy);
    }
    if r.threads.as_ref().is_some_and(|t| t.curves.is_some()) {
        k.push(FigureKind::Threads);
    }
    if r.what_to_change
        .as_ref()
        .is_some_and(|w| !w.findings.is_empty())
    {
        k.push(FigureKind::WhatToChange);
    }
    if r.pages
        .as_ref()
        .is_some_and(|p| p.threads.iter().any(|t| t.refs > 0))
    {
        k.push(FigureKind::Pages);
    }
    if r.callgraph.as_ref().is_some_and(|g| !g.contexts.is_empty()) {
        k.push(FigureKind::CallGraph);
    }
    k
}

/// The figures `r` has.
pub fn list(r: &Report) -> Vec<FigureInfo> {
    kinds(r).into_iter().map(FigureKind::info).collect()
}
