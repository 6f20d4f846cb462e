//! Appending accesses to a [`BlockEncoder`]: the items it takes, and the encoding loop, the
//! hot part of `record`.

use super::super::MAX_BLOCK_LEN;
use super::super::calls::MAX_BLOCK_CALLS;
use super::super::runs::InstrRun;
use super::block::{BlockEncoder, SIZES_AT, SLOTS_AT};
use super::slots::slot;
use super::{KIND_SHIFT, PC_EXPLICIT, PC_LAST_INSTR, RUN_META, byte_len, put_low_bytes};
use crate::access::AccessKind;
use crate::batch::{CallEvent, CallOp, NO_PC};

/// What [`BlockEncoder::push_from`] appends: one access, or a run of instruction fetches
/// whose encoding is known in advance.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item<'a> {
    /// `(address, size, kind, pc)`, pc [`NO_PC`] for none.
    Access(u64, u32, AccessKind, u64),
    /// A run of fetches ([`super::super::runs`]), written as one run row.
    Run(InstrRun<'a>),
    /// A call event of the current thread's stack, before the next access: taken in the
    /// loop, as the tool's words hold one every few dozen (leaving the loop for each cost
    /// cachescope's side of `record` on awk 14 % more instructions, 6 % with this:
    /// docs/callgraph.md).
    Call(CallOp),
}

/// A source of [`Item`]s for [`BlockEncoder::push_from`].
pub(crate) trait ItemSource<'a> {
    /// The next item, if any; a run must hold at most `room` fetches (a source splits a longer
    /// one into accesses).
    fn next_item(&mut self, room: usize) -> Option<Item<'a>>;
}

/// Accesses from an iterator, as items.
pub(crate) struct Accesses<I>(pub(crate) I);

impl<'a, I: Iterator<Item = (u64, u32, AccessKind, u64)>> ItemSource<'a> for Accesses<I> {
    #[inline(always)]
    fn next_item(&mut self, _room: usize) -> Option<Item<'a>> {
        self.0.next().map(|(a, s, k, p)| Item::Access(a, s, k, p))
    }
}

impl BlockEncoder {
    /// Appends one access.
    #[cfg(test)]
    pub(in crate::trace::native) fn push(
        &mut self,
        addr: u64,
        size: u32,
        kind: AccessKind,
        pc: u64,
    ) {
        self.push_run(&[addr], &[size], &[kind], &[pc]);
    }

    /// Appends the accesses given by four columns of one length; the block must have room
    /// for them (at most [`MAX_BLOCK_LEN`] accesses in all).
    pub(in crate::trace::native) fn push_run(
        &mut self,
        addrs: &[u64],
        sizes: &[u32],
        kinds: &[AccessKind],
        pcs: &[u64],
    ) {
        let len = addrs.len();
        assert!(
            sizes.len() == len && kinds.len() == len && pcs.len() == len,
            "columns of different lengths"
        );
        assert!(
            self.cols.n + len <= MAX_BLOCK_LEN,
            "a block holds at most {MAX_BLOCK_LEN} accesses"
        );
        let accesses = addrs.iter().zip(sizes).zip(kinds).zip(pcs);
        self.push_iter(accesses.map(|(((&a, &s), &k), &p)| (a, s, k, p)));
    }

    /// Appends `(address, size, kind, pc)` accesses from `accesses` (pc [`NO_PC`] for none)
    /// until it ends or the block is full; returns how many.
    #[inline(always)]
    pub(in crate::trace::native) fn push_iter(
        &mut self,
        accesses: impl Iterator<Item = (u64, u32, AccessKind, u64)>,
    ) -> usize {
        self.push_from(&mut Accesses(accesses), MAX_BLOCK_LEN)
    }

    /// Appends the items of `source` until it ends or the block holds `limit` accesses (at
    /// most [`MAX_BLOCK_LEN`]); returns how many accesses. `record` feeds the tool's words through here without a batch in between.
    ///
    /// The column writes are unchecked: this loop is most of `record`'s encoding time, and
    /// the bounds checks (two per write, seven writes per access) spilled its registers. The
    /// bounds hold by construction: each row adds at most 8 address bytes, 4 escape bytes,
    /// one pc length and 8 pc bytes, each column has room for [`MAX_BLOCK_LEN`] rows plus
    /// 8 bytes, there are no more rows than accesses, and the loop stops at
    /// [`MAX_BLOCK_LEN`] accesses (a run is given only when it fits).
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(in crate::trace::native) fn push_from<'a>(
        &mut self,
        source: &mut impl ItemSource<'a>,
        limit: usize,
    ) -> usize {
        assert!(
            limit <= MAX_BLOCK_LEN,
            "a block holds at most {MAX_BLOCK_LEN} accesses"
        );
        let cols = &mut self.cols;
        let start = cols.n;
        let fixed = cols.fixed.as_mut_ptr();
        let (addr_col, escapes) = (cols.addrs.as_mut_ptr(), cols.escapes.as_mut_ptr());
        let (pc_lens, pc_bytes) = (cols.pc_lens.as_mut_ptr(), cols.pc_bytes.as_mut_ptr());
        let table = &mut self.table;
        let (runs, dict) = (&mut self.runs, &mut cols.dict);
        let keys = &mut *self.policy.keys;
        let (mut next, mut operand) = (self.policy.next, self.policy.operand);
        let (mut n, mut r, mut run_extra) = (cols.n, cols.rows, cols.run_extra);
        let (mut al, mut el, mut pn, mut pl) = (
            cols.addrs_len,
            cols.escapes_len,
            cols.pcs,
            cols.pc_bytes_len,
        );
        let (mut last_instr, mut prev_pc) = (self.last_instr, self.prev_pc);
        let thread = self.thread;
        // One access in row `r` (a macro, as it updates the loop's locals).
        macro_rules! put {
            ($r:expr, $addr:expr, $size:expr, $kind:expr, $pc:expr) => {{
                let (r, addr, size, kind, pc): (usize, u64, u32, AccessKind, u64) =
                    ($r, $addr, $size, $kind, $pc);
                let slot = slot(keys, &mut next, &mut operand, kind, addr, pc);
                let prev = &mut table[usize::from(slot)];
                let delta = addr.wrapping_sub(*prev);
                *prev = addr;
                let len = byte_len(delta);
                // SAFETY (every write below): the bounds in this function's documentation.
                unsafe { put_low_bytes(addr_col, &mut al, delta, len) };
                if kind == AccessKind::Instr {
                    last_instr = addr;
                }
                let mode = if pc == NO_PC {
                    0
                } else if pc == last_instr {
                    PC_LAST_INSTR
                } else {
                    let delta = pc.wrapping_sub(prev_pc);
                    prev_pc = pc;
                    let len = byte_len(delta);
                    unsafe {
                        *pc_lens.add(pn) = len as u8;
                        put_low_bytes(pc_bytes, &mut pl, delta, len);
                    }
                    pn += 1;
                    PC_EXPLICIT
                };
                let small = if (1..=255).contains(&size) {
                    size as u8
                } else {
                    unsafe {
                        escapes
                            .add(el)
                            .cast::<[u8; 4]>()
                            .write_unaligned(size.to_le_bytes())
                    };
                    el += 4;
                    0
                };
                unsafe {
                    *fixed.add(r) = len as u8 | (3 - kind as u8) << KIND_SHIFT | mode;
                    *fixed.add(SIZES_AT + r) = small;
                    *fixed.add(SLOTS_AT + r) = slot;
                }
            }};
        }
        while n < limit {
            let Some(item) = source.next_item(limit - n) else {
                break;
            };
            match item {
                Item::Access(addr, size, kind, pc) => {
                    put!(r, addr, size, kind, pc);
                    n += 1;
                    r += 1;
                }
                Item::Call(op) => {
                    let at = n as u32;
                    cols.calls.push(CallEvent { at, thread, op });
                    // A long section ends the block early, if it has accesses (as
                    // [`super::super::Writer::push_call`] does).
                    if cols.calls.len() >= MAX_BLOCK_CALLS && n > 0 {
                        break;
                    }
                }
                Item::Run(run) => {
                    // One row naming the run in the block's dictionary: the run meta byte,
                    // the local index in the size and slot bytes. Decoding it leaves slot 0
                    // and the last fetch at the run's last fetch.
                    let k = run.len();
                    let local = runs.index(&run, dict);
                    // SAFETY: the source gives a run only when its `k >= 1` accesses fit in
                    // the block, so the row does too.
                    unsafe {
                        *fixed.add(r) = RUN_META;
                        *fixed.add(SIZES_AT + r) = local as u8;
                        *fixed.add(SLOTS_AT + r) = (local >> 8) as u8;
                    }
                    let last = run.last();
                    table[0] = last;
                    last_instr = last;
                    n += k;
                    r += 1;
                    run_extra += k - 1;
                }
            }
        }
        (self.policy.next, self.policy.operand) = (next, operand);
        (cols.n, cols.rows, cols.run_extra) = (n, r, run_extra);
        (
            cols.addrs_len,
            cols.escapes_len,
            cols.pcs,
            cols.pc_bytes_len,
        ) = (al, el, pn, pl);
        (self.last_instr, self.prev_pc) = (last_instr, prev_pc);
        n - start
    }
}
