//! [`CachegrindSim`]: Valgrind Cachegrind's cache model (3.x `cg_sim.c`), reference for
//! reference, so that a lackey trace gives Cachegrind's `--cache-sim=yes` counts exactly.
//!
//! The model, as `docs/cachegrind.md` derives it from Valgrind's source:
//! - I1, D1 and LL are set-associative LRU caches indexed by the low bits of the line address
//!   (sets a power of two), write-allocate, with no write-backs; LL is non-inclusive.
//! - Cachegrind refuses a set count that is not a power of two on its command line, and turns a
//!   detected LL of such a count into one it can index (`maybe_tweak_LLc` in Valgrind 3.19's
//!   `cg_arch.c`): sets rounded down to a power of two, ways scaled up by the ratio (rounded),
//!   size recomputed. An LL given here goes through the same tweak ([`cachegrind_ll`]); an I1
//!   or D1 of such a count is refused, as Cachegrind refuses it.
//! - An access touches the lines of its first and last byte. When it straddles two lines both
//!   are looked up (in order, both updated) but it counts **one** reference and **at most one
//!   miss**: a miss if either line missed.
//! - An L1 miss sends the **whole access** to LL (both lines again, even one that hit in L1),
//!   again at most one LL miss. I1 and D1 misses reach LL in program order.
//! - Instruction fetches use their own size; data accesses larger than the smallest of the
//!   three line sizes are cut to it (Cachegrind does this for the large accesses of dirty
//!   helpers such as `fxsave`; ordinary accesses are never larger).
//! - A modify (lackey `M`: a load and a store of the same address by one instruction) is one
//!   read (`Dr`); loads are reads, stores writes (`Dw`).
//! - Every cache starts with tags of 0, so line 0 counts as present in set 0: this simulator
//!   starts each cache with line 0 in it too.

use super::Outcome;
use super::cache::Cache;
use super::geometry::Geometry;
use super::policy::Policy;
use crate::access::AccessKind;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};

/// Cachegrind's smallest line size (`MIN_LINE_SIZE` in `cg_arch.h`).
const MIN_LINE_SIZE: u64 = 16;

/// Cachegrind's totals. The first six fields are its summary; the rest split them as its
/// `Dr D1mr DLmr Dw D1mw DLmw` events do. Field names are a public contract (`--json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CachegrindCounts {
    /// Instructions fetched (`Ir`).
    pub i_refs: u64,
    /// I1 misses (`I1mr`).
    pub i1_misses: u64,
    /// LL misses of instruction fetches (`ILmr`).
    pub lli_misses: u64,
    /// Data references: reads + writes.
    pub d_refs: u64,
    /// D1 misses: read + write.
    pub d1_misses: u64,
    /// LL misses of data references: read + write.
    pub lld_misses: u64,
    /// Data reads, modifies included (`Dr`).
    pub d_reads: u64,
    /// Data writes (`Dw`).
    pub d_writes: u64,
    /// D1 read misses (`D1mr`).
    pub d1_read_misses: u64,
    /// D1 write misses (`D1mw`).
    pub d1_write_misses: u64,
    /// LL read misses of data (`DLmr`).
    pub lld_read_misses: u64,
    /// LL write misses (`DLmw`).
    pub lld_write_misses: u64,
    /// LL references: I1 misses + D1 misses.
    pub ll_refs: u64,
    /// LL misses: instruction + data.
    pub ll_misses: u64,
}

/// One cache with the line shift Cachegrind indexes it by.
#[derive(Clone, Debug)]
struct Sim {
    cache: Cache,
    shift: u32,
}

/// The LL Cachegrind simulates for a detected LL of shape `g` (`maybe_tweak_LLc`, Valgrind
/// 3.19): a power-of-two set count is kept; any other is rounded down to a power of two and
/// the ways scaled by the ratio, rounded to nearest (12 MiB, 16-way, 64 B: 12,288 sets become
/// 8,192 sets of 24 ways). The size is recomputed from the new shape.
pub fn cachegrind_ll(g: Geometry) -> Result<Geometry> {
    let sets = g.sets();
    if sets.is_power_of_two() {
        return Ok(g);
    }
    let new_sets = 1u64 << (63 - sets.leading_zeros());
    let factor = sets as f64 / new_sets as f64;
    let assoc = (0.5 + factor * f64::from(g.assoc())) as u64;
    let line = g.line_size().bytes();
    let assoc = u32::try_from(assoc).map_err(|_| Error::InvalidParameter {
        name: "Cachegrind cache",
        message: format!("LL ({g}): {assoc} ways after Cachegrind's LL tweak is too many"),
    })?;
    Geometry::new(line * u64::from(assoc) * new_sets, assoc, line)
}

impl Sim {
    fn new(g: Geometry, which: &str) -> Result<Sim> {
        let line = g.line_size().bytes();
        let problem = if !g.sets().is_power_of_two() {
            Some(
                "Cachegrind refuses a set count that is not a power of two (`Cache set count is \
                 not a power of two.`); only a detected LL is reshaped, which --LL does here",
            )
        } else if line < MIN_LINE_SIZE {
            Some("Cachegrind needs lines of at least 16 B")
        } else if g.size_bytes() <= line {
            Some("Cachegrind needs a cache larger than one line")
        } else {
            None
        };
        if let Some(p) = problem {
            return Err(Error::InvalidParameter {
                name: "Cachegrind cache",
                message: format!("{which} ({g}): {p}"),
            });
        }
        let mut cache = Cache::new(g, Policy::Lru)?;
        // Cachegrind's tags start at 0: block 0 looks cached in set 0.
        cache.access(0);
        Ok(Sim {
            cache,
            shift: g.line_size().shift(),
        })
    }

    /// `cachesim_ref_is_miss`: both lines of a straddling access are looked up, one miss at most.
    #[inline]
    fn is_miss(&mut self, addr: u64, size: u64) -> bool {
        let first = addr >> self.shift;
        let last = addr.saturating_add(size - 1) >> self.shift;
        let miss = !self.cache.access(first);
        if first == last {
            miss
        } else {
            !self.cache.access(last) | miss
        }
    }
}

/// What one reference did in [`CachegrindSim`] (`*_outcome`): whether it missed in its L1
/// and in LL (Cachegrind's at most one miss each), and the lines its L1 lookups evicted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefOutcome {
    /// It missed in I1 or D1.
    pub l1_miss: bool,
    /// It missed in LL too.
    pub ll_miss: bool,
    /// Lines the L1 lookups replaced (one per line of a straddling access).
    pub evicted: [Option<u64>; 2],
}

impl Sim {
    /// [`Sim::is_miss`], also saying which lines it evicted.
    #[inline]
    fn lookup(&mut self, addr: u64, size: u64, evicted: &mut [Option<u64>; 2]) -> bool {
        let first = addr >> self.shift;
        let last = addr.saturating_add(size - 1) >> self.shift;
        let mut miss = false;
        let lines = 1 + usize::from(first != last);
        for (i, line) in [first, last].into_iter().enumerate().take(lines) {
            if let Outcome::Miss { evicted: e } = self.cache.access_outcome(line) {
                miss = true;
                evicted[i] = e;
            }
        }
        miss
    }
}

/// Cachegrind's I1/D1/LL simulation as an [`Analysis`]. See the module documentation.
#[derive(Clone, Debug)]
pub struct CachegrindSim {
    i1: Sim,
    d1: Sim,
    ll: Sim,
    max_data: u64,
    geometry: [Geometry; 3],
    c: CachegrindCounts,
}

impl CachegrindSim {
    /// Empty I1, D1 and LL caches. Cachegrind's own limits apply on top of [`Geometry`]'s:
    /// lines of at least 16 bytes, caches larger than one line, I1 and D1 of a power-of-two
    /// set count; an LL of another count is simulated as Cachegrind reshapes it
    /// ([`cachegrind_ll`]; [`CachegrindSim::geometries`] gives the shape simulated).
    pub fn new(i1: Geometry, d1: Geometry, ll: Geometry) -> Result<CachegrindSim> {
        let ll = cachegrind_ll(ll)?;
        let max_data = [i1, d1, ll]
            .iter()
            .map(|g| g.line_size().bytes())
            .min()
            .expect("three caches");
        Ok(CachegrindSim {
            i1: Sim::new(i1, "I1")?,
            d1: Sim::new(d1, "D1")?,
            ll: Sim::new(ll, "LL")?,
            max_data,
            geometry: [i1, d1, ll],
            c: CachegrindCounts::default(),
        })
    }

    /// The I1, D1 and LL caches, for tests.
    #[cfg(test)]
    pub(super) fn caches(&self) -> [&Cache; 3] {
        [&self.i1.cache, &self.d1.cache, &self.ll.cache]
    }

    /// The D1 cache as it is now (line addresses at its line size).
    pub fn d1_cache(&self) -> &Cache {
        &self.d1.cache
    }

    /// The I1, D1 and LL geometries simulated (the LL after Cachegrind's tweak).
    pub fn geometries(&self) -> [Geometry; 3] {
        self.geometry
    }

    /// An instruction fetch of `size` bytes at `addr`.
    #[inline]
    pub fn instr(&mut self, addr: u64, size: u32) {
        let size = u64::from(size.max(1));
        self.c.i_refs += 1;
        if self.i1.is_miss(addr, size) {
            self.c.i1_misses += 1;
            self.c.lli_misses += u64::from(self.ll.is_miss(addr, size));
        }
    }

    /// A data read (load or modify, `write` false) or write of `size` bytes at `addr`.
    #[inline]
    pub fn data(&mut self, addr: u64, size: u32, write: bool) {
        let size = u64::from(size.max(1)).min(self.max_data);
        let c = &mut self.c;
        if write {
            c.d_writes += 1;
        } else {
            c.d_reads += 1;
        }
        if self.d1.is_miss(addr, size) {
            let ll_miss = u64::from(self.ll.is_miss(addr, size));
            if write {
                c.d1_write_misses += 1;
                c.lld_write_misses += ll_miss;
            } else {
                c.d1_read_misses += 1;
                c.lld_read_misses += ll_miss;
            }
        }
    }

    /// [`CachegrindSim::instr`], saying what the fetch did.
    #[inline]
    pub fn instr_outcome(&mut self, addr: u64, size: u32) -> RefOutcome {
        let size = u64::from(size.max(1));
        self.c.i_refs += 1;
        let mut o = RefOutcome::default();
        if self.i1.lookup(addr, size, &mut o.evicted) {
            o.l1_miss = true;
            self.c.i1_misses += 1;
            o.ll_miss = self.ll.is_miss(addr, size);
            self.c.lli_misses += u64::from(o.ll_miss);
        }
        o
    }

    /// [`CachegrindSim::data`], saying what the reference did.
    #[inline]
    pub fn data_outcome(&mut self, addr: u64, size: u32, write: bool) -> RefOutcome {
        let size = u64::from(size.max(1)).min(self.max_data);
        let c = &mut self.c;
        let (refs, l1, ll) = if write {
            (
                &mut c.d_writes,
                &mut c.d1_write_misses,
                &mut c.lld_write_misses,
            )
        } else {
            (
                &mut c.d_reads,
                &mut c.d1_read_misses,
                &mut c.lld_read_misses,
            )
        };
        *refs += 1;
        let mut o = RefOutcome::default();
        if self.d1.lookup(addr, size, &mut o.evicted) {
            o.l1_miss = true;
            *l1 += 1;
            o.ll_miss = self.ll.is_miss(addr, size);
            *ll += u64::from(o.ll_miss);
        }
        o
    }

    /// The totals so far.
    pub fn finish(&self) -> CachegrindCounts {
        let mut c = self.c;
        c.d_refs = c.d_reads + c.d_writes;
        c.d1_misses = c.d1_read_misses + c.d1_write_misses;
        c.lld_misses = c.lld_read_misses + c.lld_write_misses;
        c.ll_refs = c.i1_misses + c.d1_misses;
        c.ll_misses = c.lli_misses + c.lld_misses;
        c
    }
}

impl Analysis for CachegrindSim {
    fn observe(&mut self, b: &Batch) {
        for ((&addr, &size), &kind) in b.addrs.iter().zip(&b.sizes).zip(&b.kinds) {
            match kind {
                AccessKind::Instr => self.instr(addr, size),
                AccessKind::Load | AccessKind::Modify => self.data(addr, size, false),
                AccessKind::Store => self.data(addr, size, true),
            }
        }
    }
}
