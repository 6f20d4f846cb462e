//! [`Tlbs`]: one thread's TLB levels, each array a [`Cache`] keyed by page.
//!
//! A translation of a page of size P goes, in each level, to the array made for the largest
//! page size not above P, and takes one entry there. Its key is the page number at P's own
//! size with P's log2 in the top six bits: pages of two sizes never share a key, and the set
//! is picked by the page number's low bits as a cache picks it by the line's.
//!
//! The first level is looked up first (data references in the DTLB, instruction fetches in
//! the ITLB); on a miss the STLB; on a miss there (or with no STLB) a page walk. Each level
//! fills on its own miss (non-inclusive), as the caches of [`crate::sim::Hierarchy`] do.

use crate::access::LineSize;
use crate::error::{Error, Result};
use crate::sim::Cache;

use super::spec::{TlbConfig, TlbSpec};

/// The key of the page of size `1 << shift` holding `addr`: its number, tagged by the size.
#[inline]
pub(super) fn key(addr: u64, shift: u32) -> u64 {
    (addr >> shift) | (u64::from(shift) << 58)
}

/// No key: shift 63 with every page bit set is never made (shifts are at most 30).
const NO_KEY: u64 = u64::MAX;

/// Where a translation was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Translation {
    /// In the first level (DTLB or ITLB).
    L1,
    /// In the second level.
    Stlb,
    /// Nowhere: a page walk.
    Walk,
}

/// Which TLB a level is; serialised as `dtlb`, `itlb`, `stlb` (a public contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TlbName {
    /// First-level data TLB.
    Dtlb,
    /// First-level instruction TLB.
    Itlb,
    /// Second-level TLB.
    Stlb,
}

/// One array and its counts.
#[derive(Clone, Debug)]
struct Array {
    spec: TlbSpec,
    cache: Cache,
    refs: u64,
    misses: u64,
}

/// What one array saw. Field names are a public contract (`simulate --json`'s `tlbs`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TlbCounts {
    /// `dtlb`, `itlb` or `stlb`.
    pub name: TlbName,
    /// Entries.
    pub entries: u32,
    /// Ways per set (= entries: fully associative).
    pub ways: u32,
    /// The page size the array is made for, in bytes.
    pub page_size: u64,
    /// Translations looked up in it.
    pub refs: u64,
    /// Translations it did not hold.
    pub misses: u64,
}

impl TlbCounts {
    /// misses / refs (0 when nothing was looked up).
    pub fn miss_ratio(&self) -> f64 {
        if self.refs == 0 {
            0.0
        } else {
            self.misses as f64 / self.refs as f64
        }
    }

    /// Adds `other`'s counts (the same array of another thread).
    pub fn add(&mut self, other: &TlbCounts) {
        self.refs += other.refs;
        self.misses += other.misses;
    }
}

/// The TLB levels of one thread. See the module documentation.
#[derive(Clone, Debug)]
pub struct Tlbs {
    /// DTLB, ITLB, STLB; each level's arrays in increasing page size.
    levels: [Vec<Array>; 3],
    /// Per side (data, instruction): the key its last lookup hit in the first level and the
    /// array, or [`NO_KEY`]. Looking the same page up again hits without changing any policy's
    /// state (a hit on a line just hit is a no-op for every policy), so it is counted only.
    memo: [(u64, usize); 2],
    walks: u64,
}

impl Tlbs {
    /// Empty TLBs shaped by `config` (validated), for pages no smaller than `smallest`: every
    /// level must have an array for pages that small, or a translation would have nowhere to go.
    pub fn new(config: &TlbConfig, smallest: LineSize) -> Result<Tlbs> {
        config.validate()?;
        let level = |specs: &[TlbSpec], name: &str| -> Result<Vec<Array>> {
            if let Some(least) = TlbConfig::smallest(specs) {
                if least.bytes() > smallest.bytes() {
                    return Err(Error::InvalidParameter {
                        name: "TLB",
                        message: format!(
                            "the {name} has no array for {} pages: add one (--{name} \
                             ENTRIES,WAYS,{})",
                            crate::units::size_label(smallest.bytes()),
                            crate::units::size_label(smallest.bytes())
                        ),
                    });
                }
            }
            let mut arrays = specs
                .iter()
                .enumerate()
                .map(|(k, &spec)| {
                    // Each array draws from its own seed under random replacement.
                    let policy = match config.policy.seed() {
                        Some(s) => config.policy.with_seed(s.wrapping_add(k as u64)),
                        None => config.policy,
                    };
                    Ok(Array {
                        spec,
                        cache: Cache::new(spec.geometry(), policy)?,
                        refs: 0,
                        misses: 0,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            arrays.sort_by_key(|a| a.spec.page().bytes());
            Ok(arrays)
        };
        Ok(Tlbs {
            levels: [
                level(&config.dtlb, "dtlb")?,
                level(&config.itlb, "itlb")?,
                level(&config.stlb, "stlb")?,
            ],
            memo: [(NO_KEY, 0); 2],
            walks: 0,
        })
    }

    /// True when instruction fetches (`instr`) or data references are translated: their side
    /// has a first level.
    #[inline]
    pub fn translates(&self, instr: bool) -> bool {
        !self.levels[usize::from(instr)].is_empty()
    }

    /// Translates byte address `addr`, on a page of `page`, for an instruction fetch
    /// (`instr`) or a data reference. `None` when that side has no first level.
    #[inline]
    pub fn translate(&mut self, addr: u64, page: LineSize, instr: bool) -> Option<Translation> {
        let side = usize::from(instr);
        let shift = page.shift();
        let k = key(addr, shift);
        let (memo_key, memo_array) = self.memo[side];
        let l1 = &mut self.levels[side];
        if memo_key == k {
            l1[memo_array].refs += 1;
            return Some(Translation::L1);
        }
        let a = array_for(l1, shift)?;
        let array = &mut l1[a];
        array.refs += 1;
        if array.cache.access(k) {
            self.memo[side] = (k, a);
            return Some(Translation::L1);
        }
        array.misses += 1;
        // The fill may have evicted the remembered page: forget it.
        self.memo[side] = (NO_KEY, 0);
        let stlb = &mut self.levels[2];
        if let Some(b) = array_for(stlb, shift) {
            let array = &mut stlb[b];
            array.refs += 1;
            if array.cache.access(k) {
                return Some(Translation::Stlb);
            }
            array.misses += 1;
        }
        self.walks += 1;
        Some(Translation::Walk)
    }

    /// Page walks so far: translations no level held.
    pub fn walks(&self) -> u64 {
        self.walks
    }

    /// Every array's counts: DTLB, ITLB, then STLB arrays, each level's in increasing page size.
    pub fn counts(&self) -> Vec<TlbCounts> {
        let names = [TlbName::Dtlb, TlbName::Itlb, TlbName::Stlb];
        names
            .iter()
            .zip(&self.levels)
            .flat_map(|(&name, arrays)| {
                arrays.iter().map(move |a| TlbCounts {
                    name,
                    entries: a.spec.entries(),
                    ways: a.spec.ways(),
                    page_size: a.spec.page().bytes(),
                    refs: a.refs,
                    misses: a.misses,
                })
            })
            .collect()
    }
}

/// The array of `level` (sorted by page size) for a page of `1 << shift` bytes: the one for the
/// largest page size not above it.
#[inline]
fn array_for(level: &[Array], shift: u32) -> Option<usize> {
    if level.len() == 1 {
        return (level[0].spec.page().shift() <= shift).then_some(0);
    }
    level.iter().rposition(|a| a.spec.page().shift() <= shift)
}
