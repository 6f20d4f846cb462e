//! A block's column buffers ([`Columns`]): built by a [`BlockEncoder`] ([`push`](super::push)
//! fills them), counted, swapped out whole to the compression thread and laid out there.

use super::super::MAX_BLOCK_LEN;
use super::dict::LocalRuns;
use super::slots::SlotPolicy;
use super::{KIND_BITS, KIND_SHIFT, SLOTS, THREAD_SWITCH_LEN};
use crate::access::{MAIN_THREAD, ThreadId};
use crate::batch::{CallEvent, CallOp, ThreadRun, switch_to};

/// The columns of a block: being built in a [`BlockEncoder`], or finished and handed to the
/// compression thread, which lays them out ([`Columns::lay_out`]). Each is a buffer sized for
/// the largest block (plus 8 bytes of slack) with a fill level, so the encoding loop
/// ([`BlockEncoder::push_run`]) holds the buffers' addresses and levels in registers: with a
/// `Vec` per column, every byte stored might have aliased the vectors' lengths, and each push
/// reloaded and rewrote them. The three one-byte-per-access columns share one buffer
/// (`fixed`, meta then sizes then slots, each [`MAX_BLOCK_LEN`] long), so the loop reaches all
/// three from one address.
#[derive(Debug)]
pub(in crate::trace::native) struct Columns {
    pub(super) fixed: Box<[u8]>,
    pub(super) addrs: Box<[u8]>,
    pub(super) escapes: Box<[u8]>,
    pub(super) pc_lens: Box<[u8]>,
    pub(super) pc_bytes: Box<[u8]>,
    /// Accesses in the block; rows (one per access, or per run of fetches); bytes used in
    /// `addrs`, `escapes` and `pc_bytes`; explicit pcs.
    pub(super) n: usize,
    pub(super) rows: usize,
    pub(super) addrs_len: usize,
    pub(super) escapes_len: usize,
    pub(super) pcs: usize,
    pub(super) pc_bytes_len: usize,
    /// The block's thread switches (canonical, as a batch's).
    switches: Vec<ThreadRun>,
    /// The run dictionary ([`super::dict`]); empty when the block has no run rows.
    pub(super) dict: Vec<u8>,
    /// Fetches of the run rows beyond one per row.
    pub(super) run_extra: usize,
    /// The block's call events (version 4, `native/calls.rs`).
    pub(super) calls: Vec<CallEvent>,
}

/// Offsets of the sizes and slots columns in [`Columns`]' `fixed` buffer.
pub(super) const SIZES_AT: usize = MAX_BLOCK_LEN;
pub(super) const SLOTS_AT: usize = 2 * MAX_BLOCK_LEN;

impl Default for Columns {
    /// Empty, with buffers for the largest block (zeroed allocations: pages a small trace
    /// never touches are never mapped).
    fn default() -> Self {
        let column =
            |per_access: usize| vec![0u8; per_access * MAX_BLOCK_LEN + 8].into_boxed_slice();
        Columns {
            fixed: column(3),
            addrs: column(8),
            escapes: column(4),
            pc_lens: column(1),
            pc_bytes: column(8),
            n: 0,
            rows: 0,
            addrs_len: 0,
            escapes_len: 0,
            pcs: 0,
            pc_bytes_len: 0,
            switches: Vec::new(),
            dict: Vec::new(),
            run_extra: 0,
            calls: Vec::new(),
        }
    }
}

impl Columns {
    /// Empties the block, keeping the buffers.
    fn clear(&mut self) {
        self.n = 0;
        self.rows = 0;
        self.run_extra = 0;
        self.dict.clear();
        (
            self.addrs_len,
            self.escapes_len,
            self.pcs,
            self.pc_bytes_len,
        ) = (0, 0, 0, 0);
        self.switches.clear();
        self.calls.clear();
    }

    /// True when the block has call events (the block header's calls flag).
    pub(in crate::trace::native) fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// True when the block has run rows, so the format's version 3 layout (the block
    /// header's runs flag).
    pub(in crate::trace::native) fn has_runs(&self) -> bool {
        !self.dict.is_empty()
    }

    /// Appends the block as the format lays it out: the directory, the columns, the run
    /// dictionary if any, the thread switches, the call events if any.
    pub(in crate::trace::native) fn lay_out(&self, raw: &mut Vec<u8>) {
        let directory = [
            self.addrs_len,
            self.escapes_len / 4,
            self.pcs,
            self.pc_bytes_len,
            self.rows,
            self.dict.len(),
        ];
        // A run block's directory adds the rows and the dictionary's length.
        let used = if self.has_runs() { 6 } else { 4 };
        for &len in &directory[..used] {
            raw.extend_from_slice(&(len as u32).to_le_bytes());
        }
        let rows = self.rows;
        for col in [
            &self.fixed[..rows],
            &self.fixed[SIZES_AT..SIZES_AT + rows],
            &self.fixed[SLOTS_AT..SLOTS_AT + rows],
            &self.addrs[..self.addrs_len],
            &self.escapes[..self.escapes_len],
            &self.pc_lens[..self.pcs],
            &self.pc_bytes[..self.pc_bytes_len],
            &self.dict,
        ] {
            raw.extend_from_slice(col);
        }
        for r in &self.switches {
            raw.extend_from_slice(&r.start.to_le_bytes());
            raw.extend_from_slice(&r.thread.to_le_bytes());
        }
        if self.has_calls() {
            super::super::calls::lay_out(&self.calls, &self.switches, self.n, raw);
        }
    }
}

/// The block being built ([`Columns`]) with the state the decoder mirrors (the slot table,
/// the last fetch, the last explicit pc) and the encoder's own choices (the slot policy).
#[derive(Debug)]
pub(in crate::trace::native) struct BlockEncoder {
    pub(super) cols: Columns,
    /// The decoder's slot table, mirrored.
    pub(super) table: [u64; SLOTS],
    pub(super) policy: SlotPolicy,
    /// The local indexes of the runs the block's dictionary holds.
    pub(super) runs: LocalRuns,
    /// Address of the most recent instruction fetch in this block.
    pub(super) last_instr: u64,
    /// Previous explicit pc.
    pub(super) prev_pc: u64,
    /// The thread of the next access, which carries over to the next block.
    pub(super) thread: ThreadId,
}

impl Default for BlockEncoder {
    fn default() -> Self {
        BlockEncoder {
            cols: Columns::default(),
            table: [0; SLOTS],
            policy: SlotPolicy::default(),
            runs: LocalRuns::default(),
            last_instr: 0,
            prev_pc: 0,
            thread: MAIN_THREAD,
        }
    }
}

impl BlockEncoder {
    /// Accesses in the block so far.
    pub(in crate::trace::native) fn len(&self) -> usize {
        self.cols.n
    }

    /// Call events in the block so far.
    pub(in crate::trace::native) fn call_count(&self) -> usize {
        self.cols.calls.len()
    }

    /// A call event of `thread`'s stack before the next access appended (or after the last,
    /// if the block ends here).
    pub(in crate::trace::native) fn push_call(&mut self, thread: ThreadId, op: CallOp) {
        let at = self.cols.n as u32;
        self.cols.calls.push(CallEvent { at, thread, op });
    }

    /// Makes the accesses appended from now on `thread`'s.
    pub(in crate::trace::native) fn set_thread(&mut self, thread: ThreadId) {
        switch_to(&mut self.cols.switches, self.cols.n as u32, thread);
        self.thread = thread;
    }

    /// Counts of the block's accesses by kind, read from their meta bytes.
    pub(in crate::trace::native) fn counts(&self) -> super::super::Counts {
        // One comparison per code: each loop vectorises, where incrementing a counter picked
        // by the byte chained every byte of the block through memory (~0.1 s of `record`).
        // Counted in bytes over chunks of 128 (no overflow), so that a vector holds 16 or 32
        // counts: a `usize` count widened every byte and took most of a block's hand-off.
        let n = self.cols.n;
        let metas = &self.cols.fixed[..self.cols.rows];
        let count = |code: u8| {
            let bits = code << KIND_SHIFT;
            metas
                .chunks(128)
                .map(|c| {
                    let n = c
                        .iter()
                        .fold(0u8, |n, &m| n.wrapping_add(u8::from(m & KIND_BITS == bits)));
                    u64::from(n)
                })
                .sum::<u64>()
        };
        // The kind code is 3 − the kind.
        // A run row's kind code is the fetch's, for the first of its fetches.
        let instrs = count(0) + self.cols.run_extra as u64;
        let (modifies, stores) = (count(1), count(2));
        let loads = n as u64 - instrs - modifies - stores;
        super::super::Counts {
            accesses: n as u64,
            loads,
            stores,
            modifies,
            instrs,
        }
    }

    /// Hands the block's columns over in `out` (whose buffers become this encoder's) and
    /// starts a new block: a swap, so that laying them out ([`Columns::lay_out`], a copy of
    /// the whole block) happens on the compression thread, not the encoding one. The slot
    /// policy carries over (it is only a choice); the state the decoder mirrors is reset.
    pub(in crate::trace::native) fn swap_out(&mut self, out: &mut Columns) {
        std::mem::swap(&mut self.cols, out);
        let n = out.n;
        // A switch at the block's end belongs to the next block, which says below whose its
        // first accesses are (blocks decode alone).
        out.switches.retain(|r| (r.start as usize) < n);
        self.cols.clear();
        if self.thread != MAIN_THREAD {
            self.cols.switches.push(ThreadRun {
                start: 0,
                thread: self.thread,
            });
        }
        self.table = [0; SLOTS];
        self.runs.clear();
        self.last_instr = 0;
        self.prev_pc = 0;
    }

    /// Appends the block's columns to `raw` and starts a new block ([`BlockEncoder::swap_out`]
    /// then [`Columns::lay_out`]).
    #[cfg(test)]
    pub(in crate::trace::native) fn take(&mut self, raw: &mut Vec<u8>) {
        let mut filled = Columns::default();
        self.swap_out(&mut filled);
        filled.lay_out(raw);
    }
}

/// The thread switches of a block's last column (`col`, a whole number of
/// [`THREAD_SWITCH_LEN`]-byte entries).
pub(in crate::trace::native) fn read_switches(col: &[u8]) -> Vec<ThreadRun> {
    col.chunks_exact(THREAD_SWITCH_LEN)
        .map(|e| ThreadRun {
            start: u32::from_le_bytes(e[..4].try_into().expect("4 bytes")),
            thread: u32::from_le_bytes(e[4..].try_into().expect("4 bytes")),
        })
        .collect()
}
