//! [`Prefetcher`]: the hardware prefetchers a simulated cache level can have.
//!
//! - **next-line, tagged** (Smith 1982; what drcachesim simulates by default): a demand miss on
//!   line `L`, or the first demand hit on a line a prefetch brought in (its tag bit), prefetches
//!   `L + 1 … L + degree`.
//! - **stride** (a reference prediction table, Chen & Baer 1995): one entry per instruction
//!   address (PC; references without one share an entry), holding its last address and stride.
//!   When an instruction's address moves by the same non-zero stride `s` twice running, it
//!   prefetches the lines of `addr + s·(distance + i)` for `i = 0 … degree − 1`.
//!   The table is unbounded (one entry per instruction, no aliasing).
//!
//! A prefetch of a line already cached is dropped and not counted. A prefetched line is
//! **useful** when a demand reference hits it before it is evicted, **useless** when it is
//! evicted first. A prefetch completes at once (no latency is modelled, so none is late), and
//! fills only the level that issued it (it is not looked up in the levels below).
//!
//! `crate::prefetch` is something else: a hint to the host CPU inside the simulator's own
//! tables; this module simulates the prefetcher of the cache being modelled.

use hashbrown::{HashMap, HashSet};

use super::Outcome;
use super::cache::Cache;
use super::dirty::{Dirty, Lookup};
use super::level::MissStats;
use super::utilization::Utilization;

/// A level's prefetcher and its settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum PrefetchPolicy {
    /// No prefetching (the default; Cachegrind's model).
    #[default]
    None,
    /// Tagged next-line: `degree` lines after the line.
    NextLine {
        /// Lines prefetched per trigger.
        degree: u32,
    },
    /// Per-instruction stride.
    Stride {
        /// Lines prefetched per trigger.
        degree: u32,
        /// Strides ahead of the demand address of the first prefetch.
        distance: u32,
    },
}

impl PrefetchPolicy {
    /// The prefetcher named `name` (`none`, `next-line` or `stride`) with `degree` lines per
    /// trigger and, for `stride`, `distance` strides ahead.
    /// `degree` is 1 to 64, `distance` 1 to 4096 (`simulate`'s ranges).
    pub fn from_name(name: &str, degree: u32, distance: u32) -> crate::Result<PrefetchPolicy> {
        if !(1..=64).contains(&degree) || !(1..=4096).contains(&distance) {
            return Err(crate::Error::InvalidParameter {
                name: "prefetch",
                message: format!(
                    "degree {degree} and distance {distance}: the degree is 1 to 64 lines, the \
                     distance 1 to 4096 strides"
                ),
            });
        }
        Ok(match name {
            "none" => PrefetchPolicy::None,
            "next-line" => PrefetchPolicy::NextLine { degree },
            "stride" => PrefetchPolicy::Stride { degree, distance },
            other => {
                return Err(crate::Error::InvalidParameter {
                    name: "prefetch",
                    message: format!("{other:?}: expected none, next-line or stride"),
                });
            }
        })
    }

    /// The name used on the command line: `none`, `next-line` or `stride`.
    pub fn name(self) -> &'static str {
        match self {
            PrefetchPolicy::None => "none",
            PrefetchPolicy::NextLine { .. } => "next-line",
            PrefetchPolicy::Stride { .. } => "stride",
        }
    }
}

/// One instruction's entry of the stride table.
#[derive(Clone, Copy, Debug)]
struct Entry {
    last: u64,
    stride: i64,
    steady: bool,
}

/// A prefetcher's state: which lines to prefetch after each demand reference.
#[derive(Clone, Debug)]
pub struct Prefetcher {
    policy: PrefetchPolicy,
    shift: u32,
    table: HashMap<u64, Entry, foldhash::fast::FixedState>,
}

impl Prefetcher {
    /// A prefetcher for lines of `2^shift` bytes.
    pub fn new(policy: PrefetchPolicy, shift: u32) -> Prefetcher {
        Prefetcher {
            policy,
            shift,
            table: HashMap::default(),
        }
    }

    /// The policy.
    pub fn policy(&self) -> PrefetchPolicy {
        self.policy
    }

    /// Appends to `out` the lines to prefetch after a demand reference to `line`, made at byte
    /// address `addr` by instruction `pc`, which missed (`miss`) or was the first use of a
    /// prefetched line (`first_use`). The stride table learns from every reference but one at
    /// the instruction's last address (the second line of a straddling access, or a repeat).
    pub fn candidates(
        &mut self,
        (pc, addr, line): (u64, u64, u64),
        miss: bool,
        first_use: bool,
        out: &mut Vec<u64>,
    ) {
        match self.policy {
            PrefetchPolicy::None => {}
            PrefetchPolicy::NextLine { degree } => {
                if miss || first_use {
                    let next = (1..=u64::from(degree)).map(|k| line.wrapping_add(k));
                    // u64::MAX marks an empty way: never a line to fetch.
                    out.extend(next.filter(|&l| l != u64::MAX));
                }
            }
            PrefetchPolicy::Stride { degree, distance } => {
                let e = self.table.entry(pc).or_insert(Entry {
                    last: addr,
                    stride: 0,
                    steady: false,
                });
                let stride = addr.wrapping_sub(e.last) as i64;
                if stride == 0 {
                    return;
                }
                e.steady = stride == e.stride;
                e.stride = stride;
                e.last = addr;
                if !e.steady {
                    return;
                }
                for i in 0..u64::from(degree) {
                    let ahead = stride.wrapping_mul((u64::from(distance) + i) as i64);
                    let target = addr.wrapping_add(ahead as u64) >> self.shift;
                    if target != line && target != u64::MAX && !out.contains(&target) {
                        out.push(target);
                    }
                }
            }
        }
    }
}

/// A level's prefetcher, with the prefetched lines not used yet.
#[derive(Clone, Debug)]
pub(super) struct Prefetching {
    prefetcher: Prefetcher,
    unused: HashSet<u64, foldhash::fast::FixedState>,
    lines: Vec<u64>,
    /// The lines the last demand's prefetch fills evicted (a multi-core cache releases a
    /// line its core owned when no private cache of the core holds it any more).
    pub(super) victims: Vec<u64>,
}

impl Prefetching {
    pub(super) fn new(policy: PrefetchPolicy, shift: u32) -> Prefetching {
        Prefetching {
            prefetcher: Prefetcher::new(policy, shift),
            unused: HashSet::default(),
            lines: Vec::new(),
            victims: Vec::new(),
        }
    }

    /// After a demand `lookup` of `line` (at byte `addr`, by instruction `pc`): counts a
    /// prefetched line used or evicted unused, then issues the prefetches it triggers into
    /// `cache` (through `dirty` when it tracks dirty lines), pushing their write-backs to
    /// `spilled` and the lines fetched to `issued` (a hierarchy asks the levels below for
    /// them); a level tracking utilization counts each fill as a fetched line.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn after_demand(
        &mut self,
        cache: &mut Cache,
        (dirty, mut usage): (Option<&mut Dirty>, Option<&mut Utilization>),
        stats: &mut MissStats,
        (spilled, issued): (&mut Vec<u64>, &mut Vec<u64>),
        line: u64,
        addr: u64,
        pc: u64,
        lookup: Lookup,
    ) {
        let first_use = lookup.hit && self.unused.remove(&line);
        *stats.useful_prefetches.get_or_insert(0) += u64::from(first_use);
        self.evicted(stats, lookup.evicted);
        self.lines.clear();
        self.victims.clear();
        self.prefetcher
            .candidates((pc, addr, line), !lookup.hit, first_use, &mut self.lines);
        let mut dirty = dirty;
        for &l in &self.lines {
            if cache.contains(l) {
                continue;
            }
            let fill = match dirty.as_deref_mut() {
                Some(d) => d.fill(cache, l, false),
                None => {
                    let evicted = match cache.access_outcome(l) {
                        Outcome::Hit => None,
                        Outcome::Miss { evicted } => evicted,
                    };
                    Lookup {
                        hit: false,
                        evicted,
                        writeback: None,
                    }
                }
            };
            *stats.prefetches.get_or_insert(0) += 1;
            if let Some(u) = usage.as_deref_mut() {
                u.filled(l, fill.evicted);
            }
            self.unused.insert(l);
            issued.push(l);
            if let Some(v) = fill.evicted {
                self.victims.push(v);
                if self.unused.remove(&v) {
                    *stats.useless_prefetches.get_or_insert(0) += 1;
                }
            }
            if let Some(v) = fill.writeback {
                *stats.writebacks.get_or_insert(0) += 1;
                spilled.push(v);
            }
        }
    }

    /// A fill other than this level's demands' and prefetches' (a write-back, or a prefetch
    /// from the level above) evicted `evicted`; or, in a multi-core cache, another core's
    /// write took it (a prefetched line that leaves unused was useless, however it left).
    pub(super) fn evicted_by_other(&mut self, stats: &mut MissStats, evicted: Option<u64>) {
        self.evicted(stats, evicted);
    }

    fn evicted(&mut self, stats: &mut MissStats, evicted: Option<u64>) {
        if let Some(v) = evicted {
            if self.unused.remove(&v) {
                *stats.useless_prefetches.get_or_insert(0) += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: PrefetchPolicy, refs: &[(u64, u64, bool, bool)]) -> Vec<Vec<u64>> {
        let mut f = Prefetcher::new(p, 6);
        refs.iter()
            .map(|&(pc, addr, miss, first)| {
                let mut out = Vec::new();
                f.candidates((pc, addr, addr >> 6), miss, first, &mut out);
                out
            })
            .collect()
    }

    #[test]
    fn next_line_triggers_on_misses_and_first_uses_only() {
        let p = PrefetchPolicy::NextLine { degree: 2 };
        let got = run(
            p,
            &[
                (0, 64, true, false),
                (0, 128, false, true),
                (0, 128, false, false),
            ],
        );
        assert_eq!(got, [vec![2, 3], vec![3, 4], vec![]]);
    }

    #[test]
    fn stride_waits_for_a_repeated_stride_per_instruction() {
        let p = PrefetchPolicy::Stride {
            degree: 2,
            distance: 4,
        };
        // PC 1 strides by 128 bytes; PC 2's references in between do not disturb it.
        let got = run(
            p,
            &[
                (1, 0, true, false),
                (2, 9999, true, false),
                (1, 128, true, false),
                (1, 256, false, false),
            ],
        );
        // At 256: stride 128 seen twice; lines of 256 + 128·4 and 256 + 128·5.
        assert_eq!(got, [vec![], vec![], vec![], vec![12, 14]]);
    }
}
