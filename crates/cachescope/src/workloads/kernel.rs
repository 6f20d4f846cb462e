//! What every workload shares: a kernel appends a few data references at a time to a small
//! fixed buffer ([`Refs`]); [`Drain`] moves them into batches, counts data references against
//! the requested total and, when asked, puts in front of each one the instruction fetches of its
//! loop body ([`Code`]).
//!
//! Kernels are endless: a loop nest that finishes starts again, a stream keeps going. The
//! length of a trace is decided only by [`Drain`], so a `refs` cap may stop a kernel in the
//! middle of one loop iteration and the next batch resumes exactly there.

use crate::access::AccessKind;
use crate::batch::{BATCH_LEN, Batch, NO_PC};

/// Bytes per instruction in the modelled code (a fixed-width ISA such as AArch64 or RISC-V).
pub(super) const INSTR_BYTES: u32 = 4;

/// Longest loop body, in instructions, that a kernel may declare.
pub(super) const MAX_BODY: u32 = 64;

/// Where data arrays start: one page-aligned array after another from here.
pub(super) const DATA_BASE: u64 = 0x1000_0000;

/// Page size used to align array bases, as a large `malloc` (an `mmap`) would.
const PAGE: u64 = 4096;

/// The first array's base for a workload laid out in lines of `line_size` bytes: [`DATA_BASE`],
/// or the next multiple of a line larger than it.
pub(super) fn data_base(line_size: u64) -> u64 {
    DATA_BASE.next_multiple_of(line_size)
}

/// The base of the array that follows one of `bytes` bytes starting at `base`.
pub(super) fn next_array(base: u64, bytes: u64) -> u64 {
    (base + bytes).next_multiple_of(PAGE)
}

/// The innermost loop body around a kernel's references: `len` instructions from `start`.
/// Slot `s` of the body is the instruction at `start + 4·s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Code {
    /// Address of the first instruction.
    pub start: u64,
    /// Instructions in the body, memory and other (at most [`MAX_BODY`]).
    pub len: u32,
}

impl Code {
    /// The address of the instruction in `slot`.
    #[inline]
    pub fn pc(self, slot: u32) -> u64 {
        self.start + u64::from(slot * INSTR_BYTES)
    }
}

/// One data reference and the slot of the instruction that makes it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ref {
    pub addr: u64,
    pub size: u32,
    pub kind: AccessKind,
    pub slot: u32,
}

/// Room for the references one kernel step produces (a stencil point makes 29).
pub(super) const REFS_CAP: usize = 32;

/// A kernel's output buffer: up to `cap` references, all made by the loop body `code`.
#[derive(Clone, Debug)]
pub(super) struct Refs {
    buf: [Ref; REFS_CAP],
    len: usize,
    cap: usize,
    /// The loop body of every reference in the buffer (set by the kernel on each step).
    pub code: Code,
}

impl Refs {
    fn new() -> Refs {
        let zero = Ref {
            addr: 0,
            size: 0,
            kind: AccessKind::Load,
            slot: 0,
        };
        Refs {
            buf: [zero; REFS_CAP],
            len: 0,
            cap: REFS_CAP,
            code: Code { start: 0, len: 1 },
        }
    }

    /// References stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// References that still fit.
    #[inline]
    pub fn room(&self) -> usize {
        self.cap - self.len
    }

    /// Lowers the capacity to `cap` (a phase boundary); only on an empty buffer.
    #[inline]
    pub fn limit(&mut self, cap: usize) {
        debug_assert_eq!(self.len, 0);
        self.cap = cap.min(REFS_CAP);
    }

    /// Appends one reference; the kernel must have checked [`Refs::room`].
    #[inline]
    pub fn push(&mut self, addr: u64, size: u32, kind: AccessKind, slot: u32) {
        self.buf[self.len] = Ref {
            addr,
            size,
            kind,
            slot,
        };
        self.len += 1;
    }

    #[inline]
    fn reset(&mut self) {
        self.len = 0;
        self.cap = REFS_CAP;
    }

    /// The references stored.
    #[inline]
    fn as_slice(&self) -> &[Ref] {
        &self.buf[..self.len]
    }
}

/// An endless source of data references.
pub(super) trait Kernel {
    /// Appends at least one reference (at most [`Refs::room`], which is at least 1 and, unless
    /// the kernel itself lowered it, [`REFS_CAP`]) and sets `out.code`.
    fn step(&mut self, out: &mut Refs);
}

/// Moves kernel output into batches: the part of the generator that does not depend on the
/// workload.
#[derive(Clone, Debug)]
pub(super) struct Drain {
    refs: Refs,
    /// Next unread reference in `refs`.
    pos: usize,
    /// Data references still to emit.
    remaining: u64,
    /// Instruction-fetch state; `None` when instructions are not emitted.
    fetch: Option<Fetch>,
}

impl Drain {
    pub fn new(total: u64, instructions: bool) -> Drain {
        Drain {
            refs: Refs::new(),
            pos: 0,
            remaining: total,
            fetch: instructions.then_some(Fetch { prev: None }),
        }
    }

    /// Appends to `batch` (already cleared) until it is full or the trace ends.
    pub fn fill<K: Kernel>(&mut self, kernel: &mut K, batch: &mut Batch) {
        match &mut self.fetch {
            None => {
                while self.remaining > 0 && batch.len() < BATCH_LEN {
                    if self.pos == self.refs.len {
                        self.refs.reset();
                        kernel.step(&mut self.refs);
                        self.pos = 0;
                    }
                    let avail = self.refs.len - self.pos;
                    let take = avail
                        .min(BATCH_LEN - batch.len())
                        .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
                    let s = &self.refs.as_slice()[self.pos..self.pos + take];
                    batch.addrs.extend(s.iter().map(|r| r.addr));
                    batch.sizes.extend(s.iter().map(|r| r.size));
                    batch.kinds.extend(s.iter().map(|r| r.kind));
                    batch.pcs.extend(std::iter::repeat_n(NO_PC, take));
                    self.pos += take;
                    self.remaining -= take as u64;
                }
            }
            Some(fetch) => {
                // One reference adds at most 2·MAX_BODY accesses (the rest of one iteration,
                // the start of the next, the data access itself).
                let last_start = BATCH_LEN - 2 * MAX_BODY as usize;
                while self.remaining > 0 && batch.len() <= last_start {
                    if self.pos == self.refs.len {
                        self.refs.reset();
                        kernel.step(&mut self.refs);
                        self.pos = 0;
                    }
                    fetch.emit(self.refs.code, self.refs.buf[self.pos], batch);
                    self.pos += 1;
                    self.remaining -= 1;
                }
            }
        }
    }
}

/// Instruction fetches of a single innermost loop: the body runs from slot 0 to its end and
/// branches back, so between two data references every instruction in between is fetched, and
/// a reference in a slot not after the previous one starts a new iteration.
#[derive(Clone, Debug)]
struct Fetch {
    /// Body and slot of the previous data reference.
    prev: Option<(Code, u32)>,
}

impl Fetch {
    fn emit(&mut self, code: Code, r: Ref, batch: &mut Batch) {
        let from = match self.prev {
            Some((c, s)) if c == code && r.slot > s => s + 1,
            Some((c, s)) if c == code => {
                Self::fetch(code, s + 1..code.len, batch);
                0
            }
            // First reference, or control came from another loop: enter the body at its top.
            _ => 0,
        };
        Self::fetch(code, from..r.slot + 1, batch);
        batch.push_raw(r.addr, r.size, r.kind, code.pc(r.slot));
        self.prev = Some((code, r.slot));
    }

    fn fetch(code: Code, slots: std::ops::Range<u32>, batch: &mut Batch) {
        for s in slots {
            let pc = code.pc(s);
            batch.push_raw(pc, INSTR_BYTES, AccessKind::Instr, pc);
        }
    }
}
