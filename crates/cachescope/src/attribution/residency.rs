//! The attribution cache's resident lines: for each, the bucket and instruction whose miss
//! fetched it, and (when asked) its touched bytes and its dirty bit; what a line is charged
//! with when it leaves.
//!
//! A fetched line belongs to the bucket and code line of the access whose miss fetched it.
//! Its used bytes (every byte any reference touched while it was resident, docs/hardware.md)
//! are charged to them when it is evicted, or at the end for the lines still resident; a dirty
//! line's eviction is one write-back charged to its bucket. The touched bytes and dirty bits
//! are the simulator's own [`Touched`] and [`Dirty`], beside the cache as in `crate::sim`.

use super::Map;
use crate::access::LineSize;
use crate::sim::{Cache, Dirty, Lookup, Op, Touched, Writes};

/// Who fetched a resident line.
#[derive(Clone, Copy, Debug)]
struct Fill {
    bucket: u32,
    pc: u64,
    /// A store's miss fetched it and no read has used it since.
    unread: bool,
}

/// The resident lines and the charges of the lines that left.
pub(super) struct Residency {
    lines: Map<u64, Fill>,
    utilization: bool,
    touched: Option<Touched>,
    dirty: Option<Dirty>,
    /// Used bytes by raw bucket (with [`Residency::settle`], the resident lines' too).
    pub used: Vec<u64>,
    /// Used bytes by the instruction whose miss fetched the line.
    pub used_by_pc: Map<u64, u64>,
    /// Write-backs (dirty evictions) by raw bucket.
    pub writebacks: Vec<u64>,
    /// Lines a store's miss fetched that left without a read using them, by raw bucket (when
    /// tracked: written and not read back before eviction).
    pub unread: Option<Vec<u64>>,
}

/// What one lookup did.
pub(super) struct Access {
    /// The line missed (and was fetched).
    pub miss: bool,
    /// The bucket of the line the fetch evicted.
    pub victim: Option<u32>,
}

fn add(v: &mut Vec<u64>, i: u32, n: u64) {
    let i = i as usize;
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] += n;
}

impl Residency {
    /// No line resident; `utilization` tracks touched bytes, `writebacks` dirty lines (under
    /// write-allocate).
    pub fn new(line_size: LineSize, utilization: bool, writebacks: bool) -> Residency {
        Residency {
            lines: Map::default(),
            utilization,
            touched: utilization.then(|| Touched::new(line_size)),
            dirty: writebacks.then(|| Dirty::new(Writes::default())),
            used: Vec::new(),
            used_by_pc: Map::default(),
            writebacks: Vec::new(),
            unread: None,
        }
    }

    /// Also counts the lines stores fetch that leave unread ([`Residency::unread`]).
    pub fn track_unread(&mut self) {
        self.unread = Some(Vec::new());
    }

    /// True when touched bytes are tracked.
    pub fn tracks_utilization(&self) -> bool {
        self.utilization
    }

    /// True when write-backs are counted.
    pub fn tracks_writebacks(&self) -> bool {
        self.dirty.is_some()
    }

    /// Looks `line` up in `cache` for `op`, by instruction `pc` on `bucket`'s data: a miss
    /// fetches it for them, charging the evicted line.
    #[inline]
    pub fn access(&mut self, cache: &mut Cache, line: u64, op: Op, bucket: u32, pc: u64) -> Access {
        let lookup = match &mut self.dirty {
            Some(d) => d.lookup(cache, line, op),
            None => Lookup::clean(cache.access_outcome(line)),
        };
        if lookup.hit {
            if op != Op::Write && self.unread.is_some() {
                if let Some(f) = self.lines.get_mut(&line) {
                    f.unread = false;
                }
            }
            return Access {
                miss: false,
                victim: None,
            };
        }
        let victim = lookup.evicted.and_then(|v| {
            let fill = self.lines.remove(&v)?;
            self.leave(v, fill, lookup.writeback.is_some());
            Some(fill.bucket)
        });
        let unread = op == Op::Write;
        self.lines.insert(line, Fill { bucket, pc, unread });
        if let Some(t) = &mut self.touched {
            t.fill(line);
        }
        Access { miss: true, victim }
    }

    /// Marks a reference's bytes on the resident lines holding them; returns how many of
    /// them no reference had touched since their line's fill (0 unless utilization is
    /// tracked).
    #[inline]
    pub fn touch(&mut self, addr: u64, size: u32) -> u64 {
        match &mut self.touched {
            Some(t) => t.touch_new(addr, size),
            None => 0,
        }
    }

    /// Charges a line leaving: its used bytes, and a write-back when it was dirty.
    fn leave(&mut self, line: u64, fill: Fill, dirty: bool) {
        if let Some(used) = self.touched.as_mut().and_then(|t| t.remove(line)) {
            add(&mut self.used, fill.bucket, used);
            *self.used_by_pc.entry(fill.pc).or_default() += used;
        }
        if dirty {
            add(&mut self.writebacks, fill.bucket, 1);
        }
        if let (Some(u), true) = (&mut self.unread, fill.unread) {
            add(u, fill.bucket, 1);
        }
    }

    /// Charges the lines still resident with their used bytes (not write-backs: they have not
    /// been written back). At the end: touched bytes are no longer tracked after it.
    pub fn settle(&mut self) {
        let Some(t) = self.touched.take() else {
            return;
        };
        for (&line, fill) in &self.lines {
            let used = t.used(line).unwrap_or(0);
            add(&mut self.used, fill.bucket, used);
            *self.used_by_pc.entry(fill.pc).or_default() += used;
        }
    }
}
