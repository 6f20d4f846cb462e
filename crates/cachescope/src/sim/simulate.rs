//! [`SimAnalysis`]: a cache or a hierarchy simulated over a trace, as an [`Analysis`].

use super::dirty::{Op, Writes};
use super::geometry::Geometry;
use super::hierarchy::{Hierarchy, HierarchyConfig, Inclusion, Served};
use super::level::{Level, MissStats};
use super::policy::Policy;
use super::prefetcher::PrefetchPolicy;
use crate::access::{AccessKind, LineSize};
use crate::analysis::Analysis;
use crate::batch::{Batch, WALK_PC};
use crate::error::Result;

/// Which lines a reference touches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineMapping {
    /// The line of its first byte only (docs/definitions.md; the default).
    #[default]
    FirstByte,
    /// Also the next line when the access straddles a boundary, as Cachegrind does: one
    /// reference, at most one miss per level (see [`MissStats`]).
    Straddle,
}

/// Options of a [`SimAnalysis`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimOptions {
    /// Which lines a reference touches. Default: the first byte's.
    pub mapping: LineMapping,
    /// Classify misses as cold, capacity or conflict (costs two hash lookups per line access at
    /// each level). Default: off.
    pub three_c: bool,
    /// Track dirty lines and count write-backs at every level, with this store policy
    /// (write-allocate or not; docs/hardware.md). Default: `None`, no write-backs, every store
    /// a lookup like a load (and the fastest path).
    pub writes: Option<Writes>,
    /// The prefetcher of a single cache (a hierarchy's are in [`HierarchyConfig::prefetch`]).
    /// Default: none.
    pub prefetch: PrefetchPolicy,
    /// Track every level's line utilization: `used_bytes` and `fetched_bytes` (one hash lookup
    /// per level a reference can reach; docs/hardware.md). Default: off.
    pub utilization: bool,
}

#[derive(Clone, Debug)]
enum Target {
    Single(Box<Level>),
    Hierarchy(Box<Hierarchy>),
}

/// Simulates one cache over a trace's data references, or a hierarchy over its instruction
/// fetches (L1I) and data references (L1D). Loads, stores and modifies are each one reference.
#[derive(Clone, Debug)]
pub struct SimAnalysis {
    target: Target,
    opts: SimOptions,
    line_size: LineSize,
    /// The data lines of one batch (fast path).
    scratch: Vec<u64>,
    /// Per level, the page walks' references ([`WALK_PC`]) apart, once asked
    /// ([`SimAnalysis::count_walks`]).
    walks: Option<Vec<WalkCounts>>,
}

/// The references of page walks (docs/tlb.md) one level saw, apart from the program's: also
/// counted in the level's own totals. Field names are a public contract (`--json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WalkCounts {
    /// Page-table entry reads that reached the level.
    pub refs: u64,
    /// Those that missed it.
    pub misses: u64,
}

/// One level in a [`SimReport`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LevelReport {
    /// `cache` for a single cache; `L1I`, `L1D`, `L2`, `L3` in a hierarchy.
    pub name: &'static str,
    /// Its shape.
    pub geometry: Geometry,
    /// Its replacement policy.
    pub policy: Policy,
    /// What it saw.
    #[serde(flatten)]
    pub stats: MissStats,
    /// The page walks' share of it, when the walks were fed and counted apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walks: Option<WalkCounts>,
}

/// What `cachescope simulate` reports. Field names are a public contract (`--json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SimReport {
    /// Which lines a reference touched.
    pub mapping: LineMapping,
    /// How hierarchy levels shared lines (absent for a single cache).
    pub inclusion: Option<Inclusion>,
    /// The levels, top down.
    pub levels: Vec<LevelReport>,
}

impl SimReport {
    /// The `--json` document of one simulation: the report with each level's `miss_ratio`
    /// (misses per reference) and, when tracked, `utilization` (used / fetched bytes) added.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("serializable");
        if let Some(levels) = v["levels"].as_array_mut() {
            for (json, level) in levels.iter_mut().zip(&self.levels) {
                json["miss_ratio"] = level.stats.miss_ratio().into();
                if let Some(u) = level.stats.utilization() {
                    json["utilization"] = u.into();
                }
            }
        }
        v
    }
}

impl SimAnalysis {
    /// One cache fed the data references.
    pub fn cache(geometry: Geometry, policy: Policy, opts: SimOptions) -> Result<SimAnalysis> {
        let mut level =
            Level::tracking(geometry, policy, opts.three_c, opts.writes, opts.prefetch)?;
        if opts.utilization {
            level.track_utilization();
        }
        Ok(SimAnalysis {
            target: Target::Single(Box::new(level)),
            opts,
            line_size: geometry.line_size(),
            scratch: Vec::new(),
            walks: None,
        })
    }

    /// A hierarchy fed instruction fetches (L1I) and data references (L1D).
    /// [`SimOptions::writes`], when given, replaces the config's [`HierarchyConfig::writes`].
    pub fn hierarchy(config: &HierarchyConfig, opts: SimOptions) -> Result<SimAnalysis> {
        let mut config = config.clone();
        if opts.writes.is_some() {
            config.writes = opts.writes;
        }
        let mut h = Hierarchy::new(&config, opts.three_c)?;
        if opts.utilization {
            h.track_utilization();
        }
        Ok(SimAnalysis {
            target: Target::Hierarchy(Box::new(h)),
            opts,
            line_size: config.l1d.line_size(),
            scratch: Vec::new(),
            walks: None,
        })
    }

    /// Counts the references of page walks ([`WALK_PC`], from [`crate::tlb::Walked`]) apart
    /// at every level from now on (the batches' other references take the general path).
    pub fn count_walks(&mut self) {
        let levels = match &self.target {
            Target::Single(_) => 1,
            Target::Hierarchy(h) => h.level_stats().count(),
        };
        self.walks = Some(vec![WalkCounts::default(); levels]);
    }

    /// The counts so far.
    pub fn finish(&self) -> SimReport {
        match &self.target {
            Target::Single(level) => SimReport {
                mapping: self.opts.mapping,
                inclusion: None,
                levels: vec![LevelReport {
                    name: "cache",
                    geometry: level.cache.geometry(),
                    policy: level.cache.policy(),
                    stats: level.stats(),
                    walks: self.walks.as_ref().map(|w| w[0]),
                }],
            },
            Target::Hierarchy(h) => SimReport {
                mapping: self.opts.mapping,
                inclusion: Some(h.inclusion()),
                levels: h
                    .level_stats()
                    .enumerate()
                    .map(|(k, (name, cache, stats))| LevelReport {
                        name,
                        geometry: cache.geometry(),
                        policy: cache.policy(),
                        stats,
                        // Walks read data: the instruction side never sees one.
                        walks: self.walks.as_ref().filter(|_| k != 0).map(|w| w[k]),
                    })
                    .collect(),
            },
        }
    }
}

impl Analysis for SimAnalysis {
    fn observe(&mut self, b: &Batch) {
        let ls = self.line_size;
        let shift = ls.shift();
        let straddle = self.opts.mapping == LineMapping::Straddle;
        match &mut self.target {
            // The fast path: the data lines are packed without branches into a scratch
            // buffer, then go through one tight loop the simulator's code is inlined into.
            Target::Single(level)
                if !straddle
                    && !self.opts.three_c
                    && self.opts.writes.is_none()
                    && !self.opts.utilization
                    && self.walks.is_none()
                    && self.opts.prefetch == PrefetchPolicy::None =>
            {
                self.scratch.resize(b.len(), 0);
                let buf: &mut [u64] = &mut self.scratch;
                let mut n = 0;
                for (&a, &k) in b.addrs.iter().zip(&b.kinds) {
                    buf[n] = a >> shift;
                    n += usize::from(k.is_data());
                }
                let refs = n as u64;
                let misses = level.cache.access_all(buf[..n].iter().copied());
                let s = &mut level.stats;
                s.refs += refs;
                s.misses += misses;
                s.line_accesses += refs;
                s.line_misses += misses;
            }
            Target::Single(level) => {
                let refs = b.addrs.iter().zip(&b.sizes).zip(&b.kinds).zip(&b.pcs);
                for (((&addr, &size), &kind), &pc) in refs {
                    if !kind.is_data() {
                        continue;
                    }
                    let (first, last) = lines(ls, addr, size, straddle);
                    let op = Op::of(kind);
                    let mut hit = level.demand(first, addr, pc, op).hit;
                    if last != first {
                        hit &= level.demand(last, addr, pc, op).hit;
                    }
                    // A single cache writes back to memory and prefetches from it.
                    level.spilled.clear();
                    level.issued.clear();
                    level.count_ref(hit);
                    level.touch(addr, size);
                    if let (Some(w), WALK_PC) = (&mut self.walks, pc) {
                        w[0].refs += 1;
                        w[0].misses += u64::from(!hit);
                    }
                }
            }
            Target::Hierarchy(h) => {
                let refs = b.addrs.iter().zip(&b.sizes).zip(&b.kinds).zip(&b.pcs);
                for (((&addr, &size), &kind), &pc) in refs {
                    let (first, last) = lines(ls, addr, size, straddle);
                    let instr = kind == AccessKind::Instr;
                    let served = h.reference_op(first, last, instr, Op::of(kind), (addr, pc));
                    if let (Some(w), WALK_PC) = (&mut self.walks, pc) {
                        count_walk(w, served);
                    }
                    if self.opts.utilization {
                        h.touch(instr, addr, size);
                    }
                }
            }
        }
    }
}

/// A walk's reference served at `served`: it reached L1D (level 1 of `L1I, L1D, L2, L3`) and
/// each lower level down to where it was found, and missed each above that.
fn count_walk(w: &mut [WalkCounts], served: Served) {
    let depth = match served {
        Served::L1 => 0,
        Served::L2 => 1,
        Served::L3 => 2,
        Served::Memory => w.len() - 1,
    };
    for (k, level) in w[1..].iter_mut().enumerate().take(depth + 1) {
        level.refs += 1;
        level.misses += u64::from(k < depth);
    }
}

/// The first and last line a reference touches under the mapping.
#[inline]
fn lines(ls: LineSize, addr: u64, size: u32, straddle: bool) -> (u64, u64) {
    if straddle {
        let (a, b) = ls.lines_touched(addr, size);
        (a.0, b.0)
    } else {
        let a = ls.line_of(addr).0;
        (a, a)
    }
}
