//! Column encoding of one block (before compression), and the encoder's slot policy.
//!
//! A block of `n` accesses is a directory of four u32 LE, the lengths of the variable-length
//! columns (`Σ L`, `E`, `X`, `Σ M` below), then seven columns (the full table, with rationale, is
//! in `docs/native-format.md`):
//!
//! 1. meta, `n` bytes: address delta length `L` (bits 0–3, 0–8 bytes), kind code (bits 4–5),
//!    explicit pc (bit 6), pc = last fetch (bit 7);
//! 2. sizes, `n` bytes: the size if 1–255, else 0 = "see the escapes";
//! 3. slots, `n` bytes: the prediction slot the address is a delta from;
//! 4. addresses, `Σ L` bytes: address − the slot's previous address, `L` bytes LE,
//!    sign-extended;
//! 5. escapes, `4 × E` bytes: per size byte 0, the size as u32 LE;
//! 6. pc lengths, `X` bytes: per explicit pc, its delta length `M` (0–8);
//! 7. pc bytes, `Σ M` bytes: per explicit pc, pc − the previous explicit pc, `M` bytes LE,
//!    sign-extended.
//!
//! **Slots.** The decoder keeps 256 addresses, all 0 at the start of a block; an access's
//! address is its delta plus the address in its slot, and then replaces it. Which slot an
//! access uses is the encoder's choice, so the policy below can improve without changing the
//! format: instruction fetches use slot 0 (deltas are the previous instruction's length, except
//! at branches); a data access with a pc uses a slot of its own per (pc, operand number since
//! the fetch), so a strided operand's delta is its stride, the same every iteration; a data
//! access without a pc uses the slot of its 64 KiB region. Loops thus become repeating byte
//! patterns in every column, which zstd stores as matches and decodes at memory speed.
//!
//! **Meta bits** are laid out for the decoder: the kind code is `3 − kind`
//! ([`AccessKind`] as `u8`), so an instruction fetch is 0 and one `test` finds it; bit 7 set
//! means "the pc is the address of the most recent instruction fetch" (this access's own address
//! for a fetch), so sign-extending the byte gives the pc mask; bit 6 means "the pc is in the pc
//! columns"; neither means "no pc"; both is invalid. Every delta chain starts from 0 at the
//! block's first access, so blocks decode independently.

use super::MAX_BLOCK_LEN;
use super::runs::InstrRun;
use crate::access::AccessKind;
use crate::batch::NO_PC;

/// Bits 0–3 of a meta byte: the address delta length.
pub(super) const LEN_MASK: u8 = 0xf;
/// Bits 4–5 of a meta byte: 3 − the kind's code, so an instruction fetch is 0.
pub(super) const KIND_BITS: u8 = 0x30;
/// Shift of the kind code.
pub(super) const KIND_SHIFT: u32 = 4;
/// Meta bit: the pc is stored in the pc columns.
pub(super) const PC_EXPLICIT: u8 = 0x40;
/// Meta bit: the pc is the address of the most recent instruction fetch.
pub(crate) const PC_LAST_INSTR: u8 = 0x80;
/// Prediction slots.
pub(super) const SLOTS: usize = 256;
/// Most raw bytes one access can take: meta, size, slot, 8 address bytes, 4 escape bytes, a pc
/// length and 8 pc bytes.
const MAX_RAW_PER_ACCESS: usize = 24;
/// Bytes of the column directory.
pub(super) const DIRECTORY_LEN: usize = 16;

/// Most raw bytes a block of `n` accesses can take.
pub(super) fn max_raw_len(n: usize) -> usize {
    DIRECTORY_LEN + MAX_RAW_PER_ACCESS * n
}

/// Entries of the encoder's direct-mapped key → slot cache. Collisions cost compression only.
const KEY_CACHE: usize = 4096;
/// Operand numbers above this share a slot (e.g. long `rep movs` sequences).
const MAX_OPERAND: u64 = 7;

/// Writes `value`'s 8 bytes at `col + *at` and moves `*at` on by `len`: a fixed 8-byte copy
/// then a cut, cheaper than a variable-length copy.
///
/// # Safety
/// `col + *at .. col + *at + 8` must lie in one allocation.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn put_low_bytes(col: *mut u8, at: &mut usize, value: u64, len: usize) {
    // SAFETY: the caller's bounds; unaligned writes are allowed for `[u8; 8]`.
    unsafe {
        col.add(*at)
            .cast::<[u8; 8]>()
            .write_unaligned(value.to_le_bytes())
    };
    *at += len;
}

/// Fewest bytes from which `delta` sign-extends back (0 for 0).
#[inline]
pub(super) fn byte_len(delta: u64) -> usize {
    // Zigzag moves the sign to bit 0, so its bit length is the signed bit length.
    let zigzag = (delta << 1) ^ ((delta as i64 >> 63) as u64);
    (64 - zigzag.leading_zeros() as usize).div_ceil(8)
}

/// What [`BlockEncoder::push_from`] appends: one access, or a run of instruction fetches
/// whose encoding is known in advance.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item<'a> {
    /// `(address, size, kind, pc)`, pc [`NO_PC`] for none.
    Access(u64, u32, AccessKind, u64),
    /// A run of fetches ([`super::runs`]).
    Run(InstrRun<'a>),
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

/// Chooses each data access's slot: a direct-mapped cache from a key ((pc, operand number), or
/// the 64 KiB region when there is no pc) to a slot, new keys taking slots round robin.
#[derive(Debug)]
struct SlotPolicy {
    /// A fixed-size array, so that indexing it by a hash modulo its length needs no check.
    keys: Box<[(u64, u8); KEY_CACHE]>,
    next: u8,
    /// Data accesses since the last instruction fetch.
    operand: u64,
}

impl Default for SlotPolicy {
    fn default() -> Self {
        SlotPolicy {
            keys: Box::new([(u64::MAX, 0); KEY_CACHE]),
            next: 1,
            operand: 0,
        }
    }
}

/// The slot of one access under [`SlotPolicy`], its state passed apart so the encoder's loop
/// keeps `next` and `operand` in registers.
#[inline(always)]
fn slot(
    keys: &mut [(u64, u8); KEY_CACHE],
    next: &mut u8,
    operand: &mut u64,
    kind: AccessKind,
    addr: u64,
    pc: u64,
) -> u8 {
    if kind == AccessKind::Instr {
        *operand = 0;
        return 0;
    }
    let key = if pc == NO_PC {
        (addr >> 16) | 1 << 63
    } else {
        pc.wrapping_mul(MAX_OPERAND + 1).wrapping_add(*operand) & !(1 << 63)
    };
    *operand = (*operand + 1).min(MAX_OPERAND);
    let h = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize % KEY_CACHE;
    let entry = &mut keys[h];
    if entry.0 != key {
        *entry = (key, *next);
        *next = if *next == u8::MAX { 1 } else { *next + 1 };
    }
    entry.1
}

/// The columns of the block being built. Each is a buffer sized for the largest block (plus
/// 8 bytes of slack) with a fill level, so the encoding loop ([`BlockEncoder::push_run`])
/// holds the buffers' addresses and levels in registers: with a `Vec` per column, every byte
/// stored might have aliased the vectors' lengths, and each push reloaded and rewrote them.
/// The three one-byte-per-access columns share one buffer (`fixed`, meta then sizes then
/// slots, each [`MAX_BLOCK_LEN`] long), so the loop reaches all three from one address.
#[derive(Debug)]
pub(super) struct BlockEncoder {
    fixed: Box<[u8]>,
    addrs: Box<[u8]>,
    escapes: Box<[u8]>,
    pc_lens: Box<[u8]>,
    pc_bytes: Box<[u8]>,
    /// Accesses in the block; bytes used in `addrs`, `escapes` and `pc_bytes`; explicit pcs.
    n: usize,
    addrs_len: usize,
    escapes_len: usize,
    pcs: usize,
    pc_bytes_len: usize,
    /// The decoder's slot table, mirrored.
    table: [u64; SLOTS],
    policy: SlotPolicy,
    /// Address of the most recent instruction fetch in this block.
    last_instr: u64,
    /// Previous explicit pc.
    prev_pc: u64,
}

/// Offsets of the sizes and slots columns in [`BlockEncoder`]'s `fixed` buffer.
const SIZES_AT: usize = MAX_BLOCK_LEN;
const SLOTS_AT: usize = 2 * MAX_BLOCK_LEN;

impl Default for BlockEncoder {
    fn default() -> Self {
        // Zeroed allocations: pages a small trace never touches are never mapped.
        let column =
            |per_access: usize| vec![0u8; per_access * MAX_BLOCK_LEN + 8].into_boxed_slice();
        BlockEncoder {
            fixed: column(3),
            addrs: column(8),
            escapes: column(4),
            pc_lens: column(1),
            pc_bytes: column(8),
            n: 0,
            addrs_len: 0,
            escapes_len: 0,
            pcs: 0,
            pc_bytes_len: 0,
            table: [0; SLOTS],
            policy: SlotPolicy::default(),
            last_instr: 0,
            prev_pc: 0,
        }
    }
}

impl BlockEncoder {
    /// Accesses in the block so far.
    pub(super) fn len(&self) -> usize {
        self.n
    }

    /// Appends one access.
    #[cfg(test)]
    pub(super) fn push(&mut self, addr: u64, size: u32, kind: AccessKind, pc: u64) {
        self.push_run(&[addr], &[size], &[kind], &[pc]);
    }

    /// Appends the accesses given by four columns of one length; the block must have room
    /// for them (at most [`MAX_BLOCK_LEN`] accesses in all).
    pub(super) fn push_run(
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
            self.n + len <= MAX_BLOCK_LEN,
            "a block holds at most {MAX_BLOCK_LEN} accesses"
        );
        let accesses = addrs.iter().zip(sizes).zip(kinds).zip(pcs);
        self.push_iter(accesses.map(|(((&a, &s), &k), &p)| (a, s, k, p)));
    }

    /// Appends `(address, size, kind, pc)` accesses from `accesses` (pc [`NO_PC`] for none)
    /// until it ends or the block is full; returns how many.
    #[inline(always)]
    pub(super) fn push_iter(
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
    /// bounds hold by construction: each access adds at most 8 address bytes, 4 escape bytes,
    /// one pc length and 8 pc bytes, each column has room for [`MAX_BLOCK_LEN`] accesses plus
    /// 8 bytes, and the loop stops at [`MAX_BLOCK_LEN`] accesses (a run is given only when it
    /// fits, and adds at most 8 address bytes per fetch).
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(super) fn push_from<'a>(
        &mut self,
        source: &mut impl ItemSource<'a>,
        limit: usize,
    ) -> usize {
        assert!(
            limit <= MAX_BLOCK_LEN,
            "a block holds at most {MAX_BLOCK_LEN} accesses"
        );
        let start = self.n;
        let fixed = self.fixed.as_mut_ptr();
        let (addr_col, escapes) = (self.addrs.as_mut_ptr(), self.escapes.as_mut_ptr());
        let (pc_lens, pc_bytes) = (self.pc_lens.as_mut_ptr(), self.pc_bytes.as_mut_ptr());
        let table = &mut self.table;
        let keys = &mut *self.policy.keys;
        let (mut next, mut operand) = (self.policy.next, self.policy.operand);
        let mut n = self.n;
        let (mut al, mut el, mut pn, mut pl) = (
            self.addrs_len,
            self.escapes_len,
            self.pcs,
            self.pc_bytes_len,
        );
        let (mut last_instr, mut prev_pc) = (self.last_instr, self.prev_pc);
        // One access: the body shared by both kinds of item (a macro, as it updates the
        // loop's locals).
        macro_rules! put {
            ($n:expr, $addr:expr, $size:expr, $kind:expr, $pc:expr) => {{
                let (n, addr, size, kind, pc): (usize, u64, u32, AccessKind, u64) =
                    ($n, $addr, $size, $kind, $pc);
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
                    *fixed.add(n) = len as u8 | (3 - kind as u8) << KIND_SHIFT | mode;
                    *fixed.add(SIZES_AT + n) = small;
                    *fixed.add(SLOTS_AT + n) = slot;
                }
            }};
        }
        while n < limit {
            let Some(item) = source.next_item(limit - n) else {
                break;
            };
            match item {
                Item::Access(addr, size, kind, pc) => {
                    put!(n, addr, size, kind, pc);
                    n += 1;
                }
                Item::Run(run) => {
                    // The first fetch as any other; the rest from the template: deltas in
                    // slot 0 (the first set it), the fetch's own pc, slot byte 0.
                    let k = run.len();
                    put!(
                        n,
                        run.addrs[0],
                        run.sizes[0],
                        AccessKind::Instr,
                        run.addrs[0]
                    );
                    // SAFETY: the source gives a run only when its `k` accesses fit in the
                    // block, and its delta bytes are at most 8 per fetch.
                    unsafe {
                        let at = n + 1;
                        std::ptr::copy_nonoverlapping(run.metas.as_ptr(), fixed.add(at), k - 1);
                        std::ptr::copy_nonoverlapping(
                            run.sizes8.as_ptr(),
                            fixed.add(SIZES_AT + at),
                            k - 1,
                        );
                        std::ptr::write_bytes(fixed.add(SLOTS_AT + at), 0, k - 1);
                        let d = run.deltas.len();
                        std::ptr::copy_nonoverlapping(run.deltas.as_ptr(), addr_col.add(al), d);
                        al += d;
                    }
                    let last = run.last();
                    table[0] = last;
                    last_instr = last;
                    n += k;
                }
            }
        }
        (self.policy.next, self.policy.operand) = (next, operand);
        self.n = n;
        (
            self.addrs_len,
            self.escapes_len,
            self.pcs,
            self.pc_bytes_len,
        ) = (al, el, pn, pl);
        (self.last_instr, self.prev_pc) = (last_instr, prev_pc);
        n - start
    }

    /// Counts of the block's accesses by kind, read from their meta bytes.
    pub(super) fn counts(&self) -> super::Counts {
        // One comparison per code: each loop vectorises, where incrementing a counter picked
        // by the byte chained every byte of the block through memory (~0.1 s of `record`).
        let metas = &self.fixed[..self.n];
        let count = |code: u8| {
            let bits = code << KIND_SHIFT;
            metas.iter().filter(|&&m| m & KIND_BITS == bits).count() as u64
        };
        // The kind code is 3 − the kind.
        let (instrs, modifies, stores) = (count(0), count(1), count(2));
        let loads = self.n as u64 - instrs - modifies - stores;
        super::Counts {
            accesses: self.n as u64,
            loads,
            stores,
            modifies,
            instrs,
        }
    }

    /// Appends the block's columns to `raw` and starts a new block. The slot policy carries
    /// over (it is only a choice); the state the decoder mirrors is reset.
    pub(super) fn take(&mut self, raw: &mut Vec<u8>) {
        let directory = [
            self.addrs_len,
            self.escapes_len / 4,
            self.pcs,
            self.pc_bytes_len,
        ];
        for len in directory {
            raw.extend_from_slice(&(len as u32).to_le_bytes());
        }
        let n = self.n;
        for col in [
            &self.fixed[..n],
            &self.fixed[SIZES_AT..SIZES_AT + n],
            &self.fixed[SLOTS_AT..SLOTS_AT + n],
            &self.addrs[..self.addrs_len],
            &self.escapes[..self.escapes_len],
            &self.pc_lens[..self.pcs],
            &self.pc_bytes[..self.pc_bytes_len],
        ] {
            raw.extend_from_slice(col);
        }
        self.n = 0;
        (
            self.addrs_len,
            self.escapes_len,
            self.pcs,
            self.pc_bytes_len,
        ) = (0, 0, 0, 0);
        self.table = [0; SLOTS];
        self.last_instr = 0;
        self.prev_pc = 0;
    }
}
