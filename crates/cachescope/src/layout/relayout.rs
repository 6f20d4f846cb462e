//! [`Relayout`]: layout changes applied to a trace's batches as they stream, in place.
//!
//! The event log is followed as the attribution follows it ([`Follower`]), so every data
//! reference is known by its bucket and the instance it falls in (a variable, a live heap
//! block). The first reference to a bucket decides which change, if any, applies to it
//! (`targets.rs`). An instance whose new layout fits in its old bytes is rewritten there; one
//! that grows, moves, or gets its lines per thread goes to a region of its own above the
//! user address space (change k at `(0x100 + k) << 40`), instances one after the other, each
//! at its old offset within a page unless the change says where. Only addresses change, and
//! the stores a `nontemporal` change streams are taken out: they would not enter the caches.

use hashbrown::HashMap;

use super::movnt::Movnt;
use super::own_line::{Lines, own_line};
use super::shape::Mapping;
use super::spec::{Change, MOVNT};
use super::targets::{Names, Target, names, target};
use crate::access::{AccessKind, ThreadId};
use crate::attribution::EventSource;
use crate::attribution::buckets::BucketMap;
use crate::attribution::follow::Follower;
use crate::attribution::structures::Types;
use crate::attribution::symbols::Symbolizer;
use crate::batch::{Batch, Step};
use crate::error::{Error, Result};

/// Instances are placed with their old offset within a page.
const PAGE: u64 = 4096;
/// Room given an instance whose lines per thread have no bound known in advance.
const OWN_LINE_ROOM: u64 = 1 << 34;

/// What happened to one change, for the notes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// The change, as its SPEC.
    pub change: String,
    /// The buckets it applied to, by their attribution names.
    pub structures: Vec<String>,
    /// References whose address it changed.
    pub moved: u64,
    /// Stores it took out (nontemporal).
    pub streamed: u64,
}

/// Where an instance went, and its per-thread lines.
#[derive(Debug)]
struct Instance {
    base: u64,
    lines: Option<Lines>,
}

/// The changes, applied batch by batch.
pub struct Relayout<'e> {
    changes: Vec<Change>,
    line: u64,
    buckets: BucketMap,
    events: Follower<'e>,
    symbolizer: Symbolizer,
    types: Types,
    /// Per bucket id: undecided, no change, or an index into `targets`.
    decided: Vec<Option<Option<u32>>>,
    targets: Vec<Target>,
    instances: HashMap<(u64, u64, u32), Instance>,
    cursors: Vec<u64>,
    movnt: Option<Movnt>,
    applied: Vec<Applied>,
    /// Every heap site and global met, for the message naming a structure that is not there.
    met: Vec<String>,
    error: Option<Error>,
    position: u64,
    keep: Vec<bool>,
    scratch: Batch,
}

impl<'e> Relayout<'e> {
    /// `changes` applied to a trace whose event log is `events` (without one only
    /// `nontemporal:@movnt` of a non-PIE `exe` and nothing else can be found); `line` is the
    /// simulated line size (own-line's default).
    pub fn new(
        changes: Vec<Change>,
        events: Option<EventSource<'e>>,
        exe: Option<&std::path::Path>,
        line: u64,
    ) -> Result<Relayout<'e>> {
        for (i, a) in changes.iter().enumerate() {
            if changes[..i].iter().any(|b| b.structure == a.structure) {
                return Err(Error::InvalidParameter {
                    name: "--change",
                    message: format!(
                        "two changes to {}: one change per structure ({} and {a})",
                        a.structure,
                        changes[..i]
                            .iter()
                            .find(|b| b.structure == a.structure)
                            .expect("found")
                    ),
                });
            }
        }
        let mut buckets = BucketMap::new(exe);
        let events = Follower::new(events, &mut buckets);
        let movnt = changes
            .iter()
            .any(|c| c.structure == MOVNT)
            .then(Movnt::default);
        Ok(Relayout {
            applied: changes
                .iter()
                .map(|c| Applied {
                    change: c.to_string(),
                    ..Applied::default()
                })
                .collect(),
            cursors: (0..changes.len() as u64)
                .map(|k| (0x100 + k) << 40)
                .collect(),
            changes,
            line,
            buckets,
            events,
            symbolizer: Symbolizer::default(),
            types: Types::default(),
            decided: Vec::new(),
            targets: Vec::new(),
            instances: HashMap::new(),
            movnt,
            met: Vec::new(),
            error: None,
            position: 0,
            keep: Vec::new(),
            scratch: Batch::new(),
        })
    }

    /// Rewrites `batch` (the next records of the trace, every kind) as the changes say.
    pub fn apply(&mut self, batch: &mut Batch) -> Result<()> {
        let n = batch.len();
        self.keep.clear();
        let mut dropped = false;
        // Runs of one thread's records split where call events fall (`None`: the call event
        // with that index), which place and take away the frames' locals.
        let steps: Vec<(std::ops::Range<usize>, ThreadId, Option<usize>)> = {
            let mut calls = 0;
            batch
                .steps()
                .map(|step| match step {
                    Step::Accesses(run, thread) => (run, thread, None),
                    Step::Call(e) => {
                        calls += 1;
                        (0..0, e.thread, Some(calls - 1))
                    }
                })
                .collect()
        };
        for (run, thread, call) in steps {
            if let Some(c) = call {
                let e = batch.calls()[c];
                self.buckets.apply_call(batch, &e);
                continue;
            }
            let mut i = run.start;
            while i < run.end {
                self.events.apply_due(self.position, &mut self.buckets);
                let stop = self.events.stop(self.position, i, run.end);
                for j in i..stop {
                    let kind = batch.kinds[j];
                    if kind == AccessKind::Instr {
                        continue;
                    }
                    let (addr, keep) = self.reference(batch.addrs[j], batch.pcs[j], kind, thread);
                    batch.addrs[j] = addr;
                    if !keep {
                        if !dropped {
                            self.keep.resize(n, true);
                            dropped = true;
                        }
                        self.keep[j] = false;
                    }
                }
                self.position += (stop - i) as u64;
                i = stop;
            }
        }
        self.buckets.batch_done(batch);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if dropped {
            self.compact(batch);
        }
        Ok(())
    }

    /// Takes the records `keep` marks out of `batch`.
    fn compact(&mut self, batch: &mut Batch) {
        self.scratch.clear();
        let mut i = 0;
        while i < batch.len() {
            if !self.keep[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < batch.len() && self.keep[i] {
                i += 1;
            }
            self.scratch.extend_from_range(batch, start..i);
        }
        std::mem::swap(batch, &mut self.scratch);
    }

    /// The new address of one data reference, and whether it stays in the trace.
    #[inline]
    fn reference(&mut self, addr: u64, pc: u64, kind: AccessKind, thread: ThreadId) -> (u64, bool) {
        if let Some(m) = &mut self.movnt {
            if kind == AccessKind::Store {
                let module = self
                    .buckets
                    .module_of(pc)
                    .map(|m| (m.path.as_path(), m.bias));
                if m.is_movnt(pc, module) {
                    let k = self
                        .changes
                        .iter()
                        .position(|c| c.structure == MOVNT)
                        .expect("asked");
                    self.applied[k].streamed += 1;
                    return (addr, false);
                }
            }
        }
        let (start, end, id) = self.buckets.lookup_range(addr);
        if id < 2 {
            return (addr, true); // the stack and other memory
        }
        let Some(t) = self.decide(id) else {
            return (addr, true);
        };
        let target = &self.targets[t as usize];
        let k = target.change;
        if target.streams {
            if kind == AccessKind::Store {
                self.applied[k].streamed += 1;
                return (addr, false);
            }
            return (addr, true);
        }
        let len = end - start;
        let offset = addr - start;
        let new = match (&target.mapping, target.own_line, target.place) {
            (Mapping::Same, None, None) => return (addr, true),
            (mapping, own, place) => {
                let (mapping, grows) = (mapping.clone(), mapping.new_len(len) > len);
                let key = (start, end, id);
                if !self.instances.contains_key(&key) {
                    let base = if place.is_none() && !grows && own.is_none() {
                        start
                    } else {
                        let room = if own.is_some() {
                            OWN_LINE_ROOM
                        } else {
                            mapping.new_len(len)
                        };
                        let (at, align) = place.unwrap_or((start % PAGE, PAGE));
                        let c = &mut self.cursors[k];
                        let base = *c + (at + align - *c % align) % align;
                        *c = base + room;
                        base
                    };
                    let lines = own.map(|_| Lines::default());
                    self.instances.insert(key, Instance { base, lines });
                }
                let inst = self.instances.get_mut(&key).expect("inserted");
                match (own, &mut inst.lines) {
                    (Some((element, line)), Some(lines)) => {
                        inst.base + own_line(lines, offset, len, element, line, thread)
                    }
                    _ => inst.base + mapping.map(offset, len),
                }
            }
        };
        if new != addr {
            self.applied[k].moved += 1;
        }
        (new, true)
    }

    /// The target of bucket `id` (deciding it at its first reference), if a change names it.
    fn decide(&mut self, id: u32) -> Option<u32> {
        if let Some(Some(d)) = self.decided.get(id as usize) {
            return *d;
        }
        let found = self.resolve(id);
        let i = id as usize;
        if self.decided.len() <= i {
            self.decided.resize(i + 1, None);
        }
        self.decided[i] = Some(found);
        found
    }

    fn resolve(&mut self, id: u32) -> Option<u32> {
        let names: Names = names(&self.buckets, &mut self.types, &mut self.symbolizer, id)?;
        if self.met.len() < 64 {
            let label = match (&names.site, &names.pointer, &names.call) {
                (Some(s), Some(p), _) => format!("{} ({s}, pointer {p})", names.name),
                (Some(s), None, _) => format!("{} ({s})", names.name),
                (None, _, Some(c)) => format!("{} ({c})", names.name),
                _ => names.name.clone(),
            };
            if !self.met.contains(&label) {
                self.met.push(label);
            }
        }
        let k = self.changes.iter().position(|c| names.is(&c.structure))?;
        match target(&self.changes[k], k, &names, self.line) {
            Ok(t) => {
                if !self.applied[k].structures.contains(&names.name) {
                    self.applied[k].structures.push(names.name.clone());
                }
                self.targets.push(t);
                Some(self.targets.len() as u32 - 1)
            }
            Err(e) => {
                self.error.get_or_insert(e);
                None
            }
        }
    }

    /// What each change did; an error for a change that named nothing in the trace, or for
    /// a damaged event log.
    pub fn finish(mut self) -> Result<Vec<Applied>> {
        self.events.finish()?;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (c, a) in self.changes.iter().zip(&self.applied) {
            if c.structure != MOVNT && a.structures.is_empty() {
                return Err(Error::InvalidParameter {
                    name: "--change",
                    message: format!(
                        "{c}: no structure called {} was referenced in the trace{}{}",
                        c.structure,
                        if c.structure.contains('#') {
                            " (a heap site numbered among others of its name, `NAME#N`, cannot \
                             be named by a change: name it by its pointer variable, its call's \
                             file:line, or its name and call instructions, NAME@0xPC,0xPC, as \
                             `attribute --fields --json` gives it in `call`)"
                        } else {
                            ""
                        },
                        if self.met.is_empty() {
                            " (it has no named structure: is its event log missing?)".to_string()
                        } else {
                            format!("; the structures referenced: {}", self.met.join("; "))
                        }
                    ),
                });
            }
        }
        Ok(self.applied)
    }

    /// What each change did so far.
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }
}
