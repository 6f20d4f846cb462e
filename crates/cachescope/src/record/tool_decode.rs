//! Decoding runs of the tool's reference words into [`Batch`] columns: the reader's hot loop,
//! kept apart from the stream's framing (`tool.rs`) and checked against a plain decoder.

use crate::access::AccessKind;
use crate::batch::{Batch, CallOp, EnterKind};
use crate::trace::native::{InstrRun, InstrRuns, Item, ItemSource};

#[cfg(target_arch = "x86_64")]
mod avx2;

/// The kind of a reference's 2-bit kind code: the codes are [`AccessKind`]'s discriminants,
/// so this compiles to nothing (a table lookup cost a load per record). A transmute, not a
/// `match`: from a match LLVM threaded the encoder's later tests of the kind into a jump
/// table, an indirect jump per data reference in `record`'s encoding loop.
#[inline(always)]
#[allow(unsafe_code)]
pub(super) fn kind_of(code: u64) -> AccessKind {
    // SAFETY: `AccessKind` is `repr(u8)` with the discriminants 0-3, and `code & 3` is one.
    unsafe { std::mem::transmute::<u8, AccessKind>((code & 3) as u8) }
}

#[inline]
fn word_at(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(chunk.try_into().expect("8 bytes"))
}

/// The address of a reference word: bits 0-47, sign-extended from bit 47.
#[inline]
pub(super) fn address(w: u64) -> u64 {
    (((w << 16) as i64) >> 16) as u64
}

/// True when `w` is an escape rather than a reference (its tag, bits 60-63, is not 0).
#[inline]
fn is_escape(w: u64) -> bool {
    w >> 60 != 0
}

/// The tag of a run word: it stands for the instruction records of a run defined earlier.
pub(super) const TAG_RUN: u64 = 0x7;

/// The tags of call events (`CS_TAG_ENTER`, `CS_TAG_LEAVE`).
const TAG_ENTER: u64 = 0x9;
const TAG_LEAVE: u64 = 0xA;

/// The call event of an escape word, if it is one: `CS_TAG_ENTER` (the key in bits 0-47,
/// sign-extended as an address; the kind in bits 48-50) or `CS_TAG_LEAVE` (the frames left;
/// 0 for every thread's).
#[inline]
pub(super) fn call_op(w: u64) -> Option<CallOp> {
    match w >> 60 {
        TAG_ENTER => Some(CallOp::Enter {
            key: address(w),
            kind: *EnterKind::ALL.get(((w >> 48) & 7) as usize)?,
        }),
        TAG_LEAVE => Some(match w & ((1 << 48) - 1) {
            0 => CallOp::Reset,
            n => CallOp::Leave {
                frames: u32::try_from(n).unwrap_or(u32::MAX),
            },
        }),
        _ => None,
    }
}

/// The run a word names, if it is a run word.
#[inline]
fn run_id(w: u64) -> Option<u64> {
    (w >> 60 == TAG_RUN).then_some(w & ((1 << 48) - 1))
}

/// Decodes the references at the start of `bytes` (whole words) into `batch`, runs of
/// instructions expanded from `runs`, up to the first other escape, an undefined run, or
/// `room` records; returns how many words it read. `pc` is the address of the last
/// instruction record, carried from one call to the next. Uses the AVX2 kernel when the CPU
/// has AVX2.
pub(super) fn decode_run(
    bytes: &[u8],
    pc: &mut u64,
    runs: &InstrRuns,
    batch: &mut Batch,
    room: usize,
) -> usize {
    decode_run_with(bytes, pc, runs, batch, room, simd_available())
}

/// Whether the AVX2 kernel can run here (`std` caches the CPU check).
#[inline]
fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// [`decode_run`], with the AVX2 kernel used only if `simd` (tests force it off). The records
/// are written straight into the columns' spare capacity, in one pass: the decoder is bound by
/// memory traffic, and filling the columns first (`resize`) would write every byte twice.
/// (Finding the escape first, over L1-sized tiles, and then decoding without a check per word
/// was 10-15% slower: it reads the input twice.)
#[allow(unsafe_code)]
fn decode_run_with(
    bytes: &[u8],
    pc: &mut u64,
    runs: &InstrRuns,
    batch: &mut Batch,
    room: usize,
    simd: bool,
) -> usize {
    let words = bytes.len() / 8;
    let base = batch.len();
    batch.addrs.reserve(room);
    batch.sizes.reserve(room);
    batch.kinds.reserve(room);
    batch.pcs.reserve(room);
    let mut last = *pc;
    let addrs = &mut batch.addrs.spare_capacity_mut()[..room];
    let sizes = &mut batch.sizes.spare_capacity_mut()[..room];
    let kinds = &mut batch.kinds.spare_capacity_mut()[..room];
    let pcs = &mut batch.pcs.spare_capacity_mut()[..room];
    // Words read and records written.
    let (mut w, mut r) = (0, 0);
    // The kernel is tried first and after long stretches only: between runs a stretch is one
    // or two data words, and a kernel call that finds a run in its first block costs more.
    let mut kernel = simd && simd_available();
    loop {
        let stretch = w;
        #[cfg(target_arch = "x86_64")]
        if kernel && words - w >= 8 && room - r >= 8 {
            // SAFETY: the CPU has AVX2 (checked just above).
            let done = unsafe {
                avx2::decode_blocks(
                    &bytes[8 * w..],
                    &mut last,
                    &mut addrs[r..],
                    &mut sizes[r..],
                    &mut kinds[r..],
                    &mut pcs[r..],
                )
            };
            w += done;
            r += done;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = kernel;
        // The rest (all of it without the kernel): the block holding the escape, the tail.
        let mut escape = None;
        while w < words && r < room {
            let word = word_at(&bytes[8 * w..8 * w + 8]);
            if is_escape(word) {
                escape = Some(word);
                break;
            }
            let addr = address(word);
            let kind = (word >> 58) & 3;
            // A data reference's pc is the last instruction record's address (lackey's rule).
            if kind == 3 {
                last = addr;
            }
            addrs[r].write(addr);
            sizes[r].write(((word >> 48) & 0x3FF) as u32);
            kinds[r].write(kind_of(kind));
            pcs[r].write(last);
            w += 1;
            r += 1;
        }
        // A run that fits: its records from the table, then on.
        let Some(run) = escape.and_then(run_id).and_then(|id| runs.get(id)) else {
            break;
        };
        kernel = simd && w - stretch >= 16;
        let k = run.len();
        if r + k > room {
            break;
        }
        // SAFETY: `r + k <= room`, the columns' length; `MaybeUninit<T>` has `T`'s layout.
        unsafe {
            let (a, s) = (run.addrs.as_ptr(), run.sizes.as_ptr());
            std::ptr::copy_nonoverlapping(a, addrs.as_mut_ptr().add(r).cast(), k);
            std::ptr::copy_nonoverlapping(s, sizes.as_mut_ptr().add(r).cast(), k);
            std::ptr::copy_nonoverlapping(a, pcs.as_mut_ptr().add(r).cast(), k);
        }
        for kind in &mut kinds[r..r + k] {
            kind.write(AccessKind::Instr);
        }
        last = run.last();
        w += 1;
        r += k;
    }
    // SAFETY: the kernel and the loops initialised the first `r` elements of each column's
    // spare capacity (reserved above for `room >= r`), and the elements are plain values.
    unsafe {
        batch.addrs.set_len(base + r);
        batch.sizes.set_len(base + r);
        batch.kinds.set_len(base + r);
        batch.pcs.set_len(base + r);
    }
    *pc = last;
    w
}

/// The references at the start of `bytes` (whole words), up to the first escape other than a
/// defined run, as encoder items: `record`'s path from the tool's words into a native trace.
/// [`ToolItems::taken`] says how many words and records were read.
pub(super) struct ToolItems<'a> {
    bytes: &'a [u8],
    at: usize,
    pc: &'a mut u64,
    runs: &'a InstrRuns,
    records: u64,
    /// A run that did not fit in its block, given fetch by fetch: (run, next fetch).
    split: Option<(InstrRun<'a>, usize)>,
}

impl<'a> ToolItems<'a> {
    pub(super) fn new(bytes: &'a [u8], pc: &'a mut u64, runs: &'a InstrRuns) -> Self {
        ToolItems {
            bytes,
            at: 0,
            pc,
            runs,
            records: 0,
            split: None,
        }
    }

    /// Words and records read so far.
    pub(super) fn taken(&self) -> (usize, u64) {
        (self.at / 8, self.records)
    }

    /// The next fetch of a run being split. Rare, but inlined all the same: as a call it
    /// returned its item through memory, and so every item of the encoding loop went through
    /// the stack (29 % of the encoding loop's samples waited on reading it back).
    #[inline(always)]
    fn split_next(&mut self) -> Option<Item<'a>> {
        let (run, i) = self.split.take()?;
        if i + 1 < run.len() {
            self.split = Some((run, i + 1));
        }
        let a = run.addrs[i];
        *self.pc = a;
        self.records += 1;
        Some(Item::Access(a, run.sizes[i], AccessKind::Instr, a))
    }
}

impl<'a> ItemSource<'a> for ToolItems<'a> {
    #[inline(always)]
    fn next_item(&mut self, room: usize) -> Option<Item<'a>> {
        if self.split.is_some() {
            return self.split_next();
        }
        let w = word_at(self.bytes.get(self.at..self.at + 8)?);
        if is_escape(w) {
            let Some(id) = run_id(w) else {
                // A call event (a reset too: the stream's calls are on when it has any).
                let op = call_op(w)?;
                self.at += 8;
                return Some(Item::Call(op));
            };
            let run = self.runs.get(id)?;
            self.at += 8;
            if run.len() > room {
                self.split = Some((run, 0));
                return self.split_next();
            }
            *self.pc = run.last();
            self.records += run.len() as u64;
            return Some(Item::Run(run));
        }
        self.at += 8;
        self.records += 1;
        let addr = address(w);
        let kind = (w >> 58) & 3;
        if kind == 3 {
            *self.pc = addr;
        }
        Some(Item::Access(
            addr,
            ((w >> 48) & 0x3FF) as u32,
            kind_of(kind),
            *self.pc,
        ))
    }
}

#[cfg(test)]
mod tests;
