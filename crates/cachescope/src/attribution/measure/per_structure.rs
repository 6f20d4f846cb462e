//! A sample of lines at a rate per structure ([`Attribution::per_structure`]): the first lines
//! each bucket touches are kept at rate 1, up to a budget per bucket and one over all, and every
//! other line at the miniature's rate `ρ` by the spatial hash. The miniature
//! ([`WeightedLru`]) weighs each line by its rate, and each kept line's references and misses
//! count `1 / rate` times (Horvitz–Thompson), so the counts are the full cache's directly.
//!
//! Why: most structures that rank among a program's top misses have a few hundred to a few
//! thousand misses on a few dozen lines (the stack, a library's static data), and a uniform
//! line sample at `ρ = 4/512` holds 0.4 of 50 such lines: the estimate is 0 or a multiple of
//! 128 misses. Its variance, `(1 − ρ)/ρ · Σ m_l²` over the structure's lines' misses `m_l`,
//! is near 128 times the mean line's share squared per line, so no estimator of a uniform
//! sample gets within 10 %; at rate 1 those lines have none (docs/accuracy/sampled.md).
//!
//! The class of a line (rate 1, `ρ`, or left out) is fixed when it is first referenced, so
//! the stream must hold every reference of the lines it keeps at rate 1: a full stream, or
//! one sampled at rate 1 (anything else is an error at [`Attribution::finish`]).

use super::super::Map;
use super::Attribution;
use super::weighted::WeightedLru;
use crate::error::{Error, Result};
use crate::spatial::{Limit, LineHash};

/// How many lines are kept at rate 1: per bucket, and over all buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StructureBudget {
    /// Lines of one bucket (one structure, heap block group, the stack...).
    pub per_bucket: u64,
    /// Lines of all buckets together: a program with millions of small blocks is not sampled
    /// in full.
    pub total: u64,
}

/// 16,384 lines per structure (512 KiB of 32-byte lines: past the ~12,700 a uniform sample at
/// `4/512` needs for 10 %), 131,072 in all: the budget docs/accuracy/sampled.md measures best.
impl Default for StructureBudget {
    fn default() -> Self {
        StructureBudget {
            per_bucket: 16_384,
            total: 131_072,
        }
    }
}

/// The per-structure sample's state: see the module documentation.
pub(super) struct PerStructure {
    hash: LineHash,
    limit: Limit,
    /// `1 / ρ`: a line at rate `ρ`'s weight and count.
    up: u64,
    budget: StructureBudget,
    /// Each line met: its slot in the miniature, or [`LEFT_OUT`].
    class: Map<u64, u32>,
    /// Recent lines' entries of `class`, by the line's low bits (a class is fixed once met, so
    /// a copy never goes stale): most references find their line here, not in the map.
    memo: Vec<(u64, u32)>,
    /// The line of the last data reference and its slot: the same line again is a hit that
    /// changes nothing the miniature decides by (nothing was accessed in between).
    last: (u64, u32),
    /// Misses by (instruction, bucket, victim's bucket or [`NO_VICTIM`]), added up into the
    /// tally's three maps at the end ([`Attribution::fold_per_structure`]): one lookup a miss.
    misses: Map<(u64, u32, u32), u64>,
    full_by_bucket: Vec<u64>,
    full: u64,
    cache: WeightedLru,
    /// Whether a sampled batch below rate 1 was seen (an error at the end).
    pub(super) partial: bool,
    /// Without the memo and the last line's shortcut: what a test holds them to.
    #[cfg(test)]
    plain: bool,
}

/// The class of a line not in the sample.
const LEFT_OUT: u32 = u32::MAX;

/// No line met yet (a line number is an address shifted right, never all ones).
const NO_LINE: u64 = u64::MAX;

/// Entries of [`PerStructure::memo`] (a power of two): 256 KiB.
const MEMO: usize = 1 << 14;

/// A line's entry in [`PerStructure::memo`]: its low bits folded with those above, so that
/// regions far apart (the stack, the heap, static data) do not take each other's entries.
fn memo_index(line: u64) -> usize {
    (line ^ (line >> 14) ^ (line >> 28)) as usize & (MEMO - 1)
}

/// A miss that evicted nothing, in [`PerStructure::misses`].
const NO_VICTIM: u32 = u32::MAX;

impl PerStructure {
    /// The slot in the miniature of `line` of `bucket`, met for the first time
    /// ([`LEFT_OUT`]: not in the sample): its weight, fixed now.
    fn classify(&mut self, line: u64, bucket: u32) -> u32 {
        let b = bucket as usize;
        if b >= self.full_by_bucket.len() {
            self.full_by_bucket.resize(b + 1, 0);
        }
        let w = if self.full_by_bucket[b] < self.budget.per_bucket && self.full < self.budget.total
        {
            self.full_by_bucket[b] += 1;
            self.full += 1;
            1
        } else if self.limit.admits(self.hash.of(line)) {
            self.up
        } else {
            0
        };
        let id = if w == 0 {
            LEFT_OUT
        } else {
            self.cache.add(line, w)
        };
        self.class.insert(line, id);
        id
    }

    /// Lines kept at rate 1 so far.
    pub(super) fn full_lines(&self) -> u64 {
        self.full
    }
}

impl<'e> Attribution<'e> {
    /// Measures references and misses by bucket on a per-structure sample of lines (the module
    /// documentation): each bucket's first lines at rate 1 within `budget`, the rest at the
    /// rate `ρ` of the miniature of [`crate::attribution::Options::geometry`] with
    /// `sets · rate` sets (a power of two, at least one), hashed with `seed`. The report's
    /// counts are then the full cache's (no scaling). Only the counts by bucket, pair and
    /// instruction are kept: options that track more (utilization, write-backs, fields,
    /// conflicts, loads, the per-bucket curves, the cost model, per-instruction counts, the
    /// monitor's samples aside) are an error.
    pub fn per_structure(
        mut self,
        rate: f64,
        budget: StructureBudget,
        seed: u64,
    ) -> Result<Attribution<'e>> {
        let o = &self.options;
        if o.utilization
            || o.writebacks
            || o.fields
            || o.conflicts
            || o.loads
            || o.mrc
            || o.cost.is_some()
            || o.per_instruction
            || o.unread_writes
            || self.tlb.is_some()
        {
            return Err(Error::InvalidParameter {
                name: "per-structure sample",
                message: "it keeps counts of references and misses only: turn off utilization, \
                          write-backs, fields, conflicts, loads, curves, the cost model, \
                          per-instruction counts and TLBs"
                    .into(),
            });
        }
        // The rate's own check: in (0, 1].
        Limit::from_rate(rate)?;
        let g = o.geometry;
        if !g.sets().is_power_of_two() {
            return Err(Error::InvalidParameter {
                name: "per-structure sample",
                message: format!("the cache {g} has {} sets, not a power of two", g.sets()),
            });
        }
        let want = (g.sets() as f64 * rate).max(1.0);
        let mini = (1u64 << want.log2().floor() as u32).min(g.sets());
        let up = g.sets() / mini;
        self.per_structure = Some(PerStructure {
            hash: LineHash::new(seed),
            limit: Limit::from_rate(1.0 / up as f64)?,
            up,
            budget,
            class: Map::default(),
            memo: vec![(NO_LINE, LEFT_OUT); MEMO],
            last: (NO_LINE, LEFT_OUT),
            misses: Map::default(),
            full_by_bucket: Vec::new(),
            full: 0,
            cache: WeightedLru::new(
                mini,
                u64::from(g.assoc()) * up,
                g.sets(),
                g.assoc() as usize,
            ),
            partial: false,
            #[cfg(test)]
            plain: false,
        });
        Ok(self)
    }

    /// [`Attribution::per_structure`] without its shortcuts (the memo of classes, the last
    /// line's hit), for a test that holds them to change nothing.
    #[cfg(test)]
    pub(crate) fn without_shortcuts(mut self) -> Self {
        if let Some(p) = &mut self.per_structure {
            p.plain = true;
        }
        self
    }

    /// A data reference under [`Attribution::per_structure`]. A line left out costs one
    /// lookup of its class (in the memo, most often), and its bucket is not looked up.
    pub(super) fn reference_weighted(&mut self, addr: u64, pc: u64) {
        let Some(p) = &mut self.per_structure else {
            return;
        };
        let line = addr >> self.shift;
        #[cfg(test)]
        if p.plain {
            p.last.0 = NO_LINE;
            p.memo[memo_index(line)].0 = NO_LINE;
        }
        if line == p.last.0 {
            // The line of the last reference again: a hit, the line already the most recent
            // everywhere (its stamps would move past no other line's).
            let id = p.last.1;
            if id != LEFT_OUT {
                let w = p.cache.weight(id);
                let bucket = self.buckets.lookup(addr);
                self.count_ref(bucket, w);
            }
            return;
        }
        let memo = &mut p.memo[memo_index(line)];
        let id = if memo.0 == line {
            memo.1
        } else {
            let id = match p.class.get(&line) {
                Some(&id) => id,
                None => {
                    let bucket = self.buckets.lookup(addr);
                    p.classify(line, bucket)
                }
            };
            p.memo[memo_index(line)] = (line, id);
            id
        };
        p.last = (line, id);
        if id == LEFT_OUT {
            return;
        }
        // The bucket's cache answers the same before and after `classify`'s lookup.
        let bucket = self.buckets.lookup(addr);
        let w = p.cache.weight(id);
        let out = p.cache.access(id, w < p.up || p.up == 1, bucket);
        if out.miss {
            let victim = out.victim.unwrap_or(NO_VICTIM);
            *p.misses.entry((pc, bucket, victim)).or_default() += w;
            let b = bucket as usize;
            if b >= self.exact.misses.len() {
                self.exact.misses.resize(b + 1, 0);
            }
            self.exact.misses[b] += w;
            self.exact.total += w;
        }
        self.count_ref(bucket, w);
    }

    /// A reference of `bucket` counted `w` times.
    fn count_ref(&mut self, bucket: u32, w: u64) {
        self.data_refs += w;
        let b = bucket as usize;
        if b >= self.bucket_refs.len() {
            self.bucket_refs.resize(b + 1, 0);
        }
        self.bucket_refs[b] += w;
    }

    /// Adds the misses by (instruction, bucket, victim) up into the tally's maps (by
    /// instruction, evictions and lines), as counting each miss into all three would.
    pub(super) fn fold_per_structure(&mut self) {
        let Some(p) = &mut self.per_structure else {
            return;
        };
        let t = &mut self.exact;
        for ((pc, bucket, victim), n) in std::mem::take(&mut p.misses) {
            *t.by_pc.entry((pc, bucket)).or_default() += n;
            if victim != NO_VICTIM {
                *t.evictions.entry((victim, bucket)).or_default() += n;
                *t.lines.entry((victim, bucket, pc)).or_default() += n;
            }
        }
    }

    /// Lines kept at rate 1 by [`Attribution::per_structure`], if asked.
    pub fn full_rate_lines(&self) -> Option<u64> {
        self.per_structure.as_ref().map(PerStructure::full_lines)
    }

    /// The error [`Attribution::finish`] gives when a per-structure sample was fed a stream
    /// sampled below rate 1.
    pub(super) fn check_per_structure(&self) -> Result<()> {
        match &self.per_structure {
            Some(p) if p.partial => Err(Error::InvalidParameter {
                name: "per-structure sample",
                message: "it needs every reference of the lines it keeps at rate 1: a full \
                          stream or one sampled at rate 1, not a sampled one"
                    .into(),
            }),
            _ => Ok(()),
        }
    }
}
