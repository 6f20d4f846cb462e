//! One line's use by each thread: reads, writes, the bytes each touched, who writes it.

use crate::access::{AccessKind, LineSize, ThreadId};

use super::SharedLine;

/// Writing instructions kept per thread and line: enough to name the code that shares it.
const MAX_PCS: usize = 8;

/// A thread with fewer than 1/MINOR of a line's accesses does not decide whether the line is
/// truly or falsely shared ([`LineUse::deciding`]).
pub(super) const MINOR: u64 = 100;

/// How the threads use one line.
#[derive(Clone, Debug, Default)]
pub struct LineUse {
    /// One entry per thread that touched the line, in order of first touch.
    threads: Vec<ThreadUse>,
}

/// One thread's use of a line.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThreadUse {
    /// The thread.
    pub thread: ThreadId,
    /// Its reads of the line (a modify is a read and a write).
    pub reads: u64,
    /// Its writes.
    pub writes: u64,
    /// The bytes it reads, as offsets in the line (`0-7,16-23`).
    pub read_bytes: String,
    /// The bytes it writes.
    pub written_bytes: String,
    #[serde(skip)]
    read_mask: u64,
    #[serde(skip)]
    write_mask: u64,
    #[serde(skip)]
    pcs: Vec<(u64, u64)>,
}

/// The bits of the bytes `addr .. addr + size` within `addr`'s line (one bit per byte of a
/// line up to 64 bytes, per line/64 bytes of a longer one); the part past the line is left
/// out, as a reference belongs to the line of its first byte.
pub(super) fn byte_mask(addr: u64, size: u32, line_size: LineSize) -> u64 {
    let bytes = line_size.bytes();
    let granule = (bytes / 64).max(1);
    let offset = addr & (bytes - 1);
    let end = (offset + u64::from(size.max(1))).min(bytes);
    let (lo, hi) = (offset / granule, (end - 1) / granule);
    let width = hi - lo + 1;
    let ones = if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    ones << lo
}

impl LineUse {
    pub(super) fn record(&mut self, thread: ThreadId, kind: AccessKind, mask: u64, pc: u64) {
        let i = match self.threads.iter().position(|t| t.thread == thread) {
            Some(i) => i,
            None => {
                self.threads.push(ThreadUse::new(thread));
                self.threads.len() - 1
            }
        };
        let t = &mut self.threads[i];
        if kind != AccessKind::Store {
            t.reads += 1;
            t.read_mask |= mask;
        }
        if kind != AccessKind::Load {
            t.writes += 1;
            t.write_mask |= mask;
            if let Some(p) = t.pcs.iter_mut().find(|p| p.0 == pc) {
                p.1 += 1;
            } else if t.pcs.len() < MAX_PCS {
                t.pcs.push((pc, 1));
            }
        }
    }

    /// The line as a [`SharedLine`] if two or more threads touch it and one writes it.
    pub(super) fn shared(&self, addr: u64, line_size: LineSize) -> Option<SharedLine> {
        let writes: u64 = self.threads.iter().map(|t| t.writes).sum();
        if self.threads.len() < 2 || writes == 0 {
            return None;
        }
        let deciding = self.deciding();
        let overlap = deciding.iter().enumerate().any(|(i, a)| {
            deciding
                .iter()
                .enumerate()
                .any(|(j, b)| i != j && a.write_mask & (b.read_mask | b.write_mask) != 0)
        });
        let mut threads = self.threads.clone();
        threads.sort_by_key(|t| t.thread);
        let granule = (line_size.bytes() / 64).max(1);
        for t in &mut threads {
            t.read_bytes = ranges(t.read_mask, granule);
            t.written_bytes = ranges(t.write_mask, granule);
        }
        let mut pcs: Vec<(u64, u64)> = Vec::new();
        for t in &threads {
            for &(pc, n) in &t.pcs {
                match pcs.iter_mut().find(|p| p.0 == pc) {
                    Some(p) => p.1 += n,
                    None => pcs.push((pc, n)),
                }
            }
        }
        pcs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut named: Vec<ThreadUse> = threads
            .iter()
            .filter(|t| deciding.iter().any(|d| d.thread == t.thread))
            .cloned()
            .collect();
        named.retain(|t| t.read_mask | t.write_mask != 0);
        let fix = (!overlap).then(|| fix(&named, line_size));
        let first_byte = deciding
            .iter()
            .filter_map(|t| t.first_byte())
            .min()
            .unwrap_or(0)
            * (line_size.bytes() / 64).max(1);
        let mut line = SharedLine {
            line: format!("{addr:#x}"),
            addr,
            kind: if overlap { "true" } else { "false" }.into(),
            structure: "other".into(),
            writes,
            coherence_misses: 0,
            code: pcs.iter().map(|(pc, _)| format!("{pc:#x}")).collect(),
            fix,
            structures: Vec::new(),
            found: None,
            promoted_at: None,
            line_size: line_size.bytes(),
            write_pcs: pcs,
            first_byte,
            locals: Vec::new(),
            threads,
        };
        if overlap {
            line.fix = Some(super::parts::true_sharing_fix(&line));
        }
        Some(line)
    }
}

impl LineUse {
    /// The threads that decide the line's kind: those making at least 1/[`MINOR`] of its
    /// accesses, when two or more do (a main thread that sets a counter up and reads it once
    /// at the end does not make the workers' disjoint counters true sharing); else all.
    pub(super) fn deciding(&self) -> Vec<&ThreadUse> {
        let total: u64 = self.threads.iter().map(|t| t.reads + t.writes).sum();
        let major: Vec<&ThreadUse> = self
            .threads
            .iter()
            .filter(|t| (t.reads + t.writes) * MINOR >= total)
            .collect();
        if major.len() >= 2 {
            major
        } else {
            self.threads.iter().collect()
        }
    }
}

impl ThreadUse {
    /// The granules it reads (bit k: bytes k × granule of the line).
    pub(super) fn read_mask(&self) -> u64 {
        self.read_mask
    }

    /// The granules it writes.
    pub(super) fn write_mask(&self) -> u64 {
        self.write_mask
    }

    /// The offset of the first byte it reads or writes (granule-exact for long lines).
    pub fn first_byte(&self) -> Option<u64> {
        let m = self.read_mask | self.write_mask;
        (m != 0).then(|| u64::from(m.trailing_zeros()))
    }

    fn new(thread: ThreadId) -> ThreadUse {
        ThreadUse {
            thread,
            reads: 0,
            writes: 0,
            read_bytes: String::new(),
            written_bytes: String::new(),
            read_mask: 0,
            write_mask: 0,
            pcs: Vec::new(),
        }
    }
}

/// The advice for a falsely shared line: which thread's bytes to move.
pub(super) fn fix(threads: &[ThreadUse], line_size: LineSize) -> String {
    let parts: Vec<String> = threads
        .iter()
        .filter(|t| t.write_mask != 0 || t.read_mask != 0)
        .map(|t| {
            let used = if t.written_bytes.is_empty() {
                &t.read_bytes
            } else {
                &t.written_bytes
            };
            format!("thread {} uses bytes {used}", t.thread)
        })
        .collect();
    format!(
        "{}: no byte is shared, so give each thread's data a {}-byte line of its own \
         (align the fields or per-thread elements to {} bytes, or pad between them)",
        parts.join(", "),
        line_size.bytes(),
        line_size.bytes()
    )
}

/// The set bits of `mask` as byte ranges `a-b,c-d` (each bit `granule` bytes).
pub(super) fn ranges(mask: u64, granule: u64) -> String {
    let mut out = Vec::new();
    let mut bit = 0;
    while bit < 64 {
        if mask >> bit & 1 == 1 {
            let start = bit;
            while bit < 64 && mask >> bit & 1 == 1 {
                bit += 1;
            }
            out.push(format!("{}-{}", start * granule, bit * granule - 1));
        } else {
            bit += 1;
        }
    }
    out.join(",")
}
