//! Reading one block: its header, checksum, decompression, and the column decoders.
//!
//! ```text
//! offset  size  field
//!      0     4  tag "BLK\0"
//!      4     4  accesses in the block, 1..=65536 (u32 LE)
//!      8     4  raw length: bytes of the columns (u32 LE)
//!     12     4  payload length (u32 LE)
//!     16     1  codec: 0 = stored (payload = columns), 1 = one zstd frame
//!     17     1  flags: bit 0 = run rows and a run dictionary (version 3), bit 1 = call
//!                   events after the columns (version 4)
//!     18     2  reserved, zero
//!     20     4  CRC-32 of bytes 0..20 and of the payload
//!     24     …  payload
//! ```
//!
//! The column decoders run tight loops over a buffer padded with [`PAD`] zero bytes, so a
//! variable-length field is read as one unaligned little-endian word, masked to its length and
//! sign-extended: no branch depends on the data. The column directory says where each column
//! starts, and [`decode_columns`] checks that everything agrees with it.

use std::io::Read;

use super::calls::{self, BLOCK_CALLS, MAX_CALL_BYTES};
use super::decode_columns::{BAD, decode_addrs_pcs, meta_flags, patch_pcs, patch_sizes};
use super::decode_runs::{RUN_DIRECTORY_LEN, decode_run_columns, max_run_raw_len};
use super::encode::{
    DIRECTORY_LEN, KIND_BITS, KIND_SHIFT, PC_EXPLICIT, THREAD_SWITCH_LEN, max_raw_len,
    read_switches,
};
use super::{BLOCK_TAG, MAX_BLOCK_LEN, corrupt, crc32, read_exact_or, u32_at};
use crate::access::AccessKind;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

/// Bytes of a block header.
pub(super) const BLOCK_HEADER_LEN: usize = 24;
/// Codec: the payload is the columns themselves.
pub(super) const CODEC_STORED: u8 = 0;
/// Codec: the payload is one zstd frame holding the columns.
pub(super) const CODEC_ZSTD: u8 = 1;
/// Block header byte 17, bit 0 (version 3): the block has run rows and a run dictionary.
pub(super) const BLOCK_RUNS: u8 = 1;
/// Zero bytes after the columns, so a column reader may load a whole word near the end.
pub(super) const PAD: usize = 8;

/// `SIGN_EXTEND[l]` = (mask keeping the `l` low bytes of a word, sign bit of an `l`-byte value);
/// zeros for lengths 0 and 9–15 (the latter are rejected as damage). One table, so the hot loop
/// needs one base register for it.
const SIGN_EXTEND: [(u64, u64); 16] = {
    let mut t = [(0u64, 0u64); 16];
    let mut l = 1;
    while l <= 8 {
        t[l] = (u64::MAX >> (64 - 8 * l), 1 << (8 * l - 1));
        l += 1;
    }
    t
};

/// What a decoded block held, for the index checks.
#[derive(Clone, Copy, Debug)]
pub(super) struct BlockInfo {
    /// Bytes of the payload.
    pub comp_len: u32,
}

/// Decodes blocks one at a time, reusing its buffers and zstd context. The streaming
/// [`Reader`](super::Reader) holds one; for random access see
/// [`BlockDecoder::read_block`](BlockDecoder::read_block) and [`read_block`](super::read_block).
#[derive(Default)]
pub struct BlockDecoder {
    dctx: Option<zstd::bulk::Decompressor<'static>>,
    payload: Vec<u8>,
    raw: Vec<u8>,
    /// Whether run rows' instruction fetches may be elided ([`BlockDecoder::elide_fetches`]).
    elide: bool,
}

impl std::fmt::Debug for BlockDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockDecoder").finish_non_exhaustive()
    }
}

impl BlockDecoder {
    /// A decoder with empty buffers.
    pub fn new() -> BlockDecoder {
        BlockDecoder::default()
    }

    /// From now on, decodes for a reader that needs the data references only: the
    /// instruction fetches of a block's run rows (version 3) keep their kind and place but
    /// not their addresses, sizes or pcs, and each batch comes with its data index
    /// ([`Batch::data_addrs`]). Other blocks are decoded in full, unindexed.
    pub(crate) fn elide_fetches(&mut self) {
        self.elide = true;
    }

    /// Reads the rest of a block whose 24-byte header is `head` (tag already checked) from
    /// `input`, and decodes it into `batch`, replacing its contents. `at` is the block's offset,
    /// for messages.
    pub(super) fn decode_from<R: Read + ?Sized>(
        &mut self,
        head: &[u8; BLOCK_HEADER_LEN],
        input: &mut R,
        source: &Source,
        at: u64,
        batch: &mut Batch,
    ) -> Result<BlockInfo> {
        debug_assert_eq!(head[..4], BLOCK_TAG);
        // A reused batch's data index is of its previous block (only `expand_data` writes one).
        batch.forget_data();
        let bad = |message: String| corrupt(source, format!("block at byte {at}: {message}"));
        let n = u32_at(head, 4) as usize;
        let raw_len = u32_at(head, 8) as usize;
        let comp_len = u32_at(head, 12) as usize;
        let codec = head[16];
        let runs = head[17] & BLOCK_RUNS != 0;
        let has_calls = head[17] & BLOCK_CALLS != 0;
        let (low, high) = if runs {
            (RUN_DIRECTORY_LEN + 3, max_run_raw_len(n))
        } else {
            (DIRECTORY_LEN + 3 * n, max_raw_len(n))
        };
        let raw_range = if has_calls {
            low + 4..=high + 4 + MAX_CALL_BYTES
        } else {
            low..=high
        };
        if !(1..=MAX_BLOCK_LEN).contains(&n)
            || !raw_range.contains(&raw_len)
            || comp_len > raw_len
            || head[17] & !(BLOCK_RUNS | BLOCK_CALLS) != 0
            || head[18..20] != [0; 2]
        {
            return Err(bad(format!(
                "impossible header ({n} accesses, {raw_len} raw bytes, {comp_len} payload bytes)"
            )));
        }
        self.payload.clear();
        self.payload.resize(comp_len, 0);
        read_exact_or(
            input,
            &mut self.payload,
            source,
            &format!("the block at byte {at}"),
        )?;
        if crc32(&[&head[..20], &self.payload]) != u32_at(head, 20) {
            return Err(bad("checksum mismatch".into()));
        }
        let columns = match codec {
            CODEC_STORED => {
                if comp_len != raw_len {
                    return Err(bad("a stored payload must be the raw length".into()));
                }
                self.payload.extend_from_slice(&[0; PAD]);
                &self.payload
            }
            CODEC_ZSTD => {
                let dctx = match &mut self.dctx {
                    Some(d) => d,
                    None => self
                        .dctx
                        .insert(zstd::bulk::Decompressor::new().map_err(|e| Error::io(source, e))?),
                };
                self.raw.clear();
                self.raw.reserve(raw_len + PAD);
                let got = dctx
                    .decompress_to_buffer(&self.payload[..], &mut self.raw)
                    .map_err(|e| bad(format!("bad compressed data ({e})")))?;
                if got != raw_len {
                    return Err(bad(format!("{got} bytes decompressed, {raw_len} expected")));
                }
                self.raw.extend_from_slice(&[0; PAD]);
                &self.raw
            }
            _ => return Err(bad(format!("unknown codec {codec}"))),
        };
        let (cols_len, section) = if has_calls {
            calls::split(columns, raw_len).map_err(bad)?
        } else {
            (raw_len, &[][..])
        };
        if runs {
            decode_run_columns(columns, cols_len, n, batch, self.elide).map_err(bad)?;
        } else {
            decode_columns(columns, cols_len, n, batch).map_err(bad)?;
        }
        if has_calls {
            calls::decode(section, batch).map_err(bad)?;
        } else {
            // The batch is decoded over its previous contents: no events of another block.
            batch.set_calls(&[]).map_err(bad)?;
        }
        Ok(BlockInfo {
            comp_len: comp_len as u32,
        })
    }
}

/// The `len`-byte little-endian signed value at the start of `w` (the bytes above it ignored).
/// `(x ^ s) - s` sign-extends without variable shifts, which cost several uops on x86-64.
#[inline(always)]
pub(super) fn sign_extend(w: u64, len: usize) -> u64 {
    let (mask, sign) = SIGN_EXTEND[len];
    ((w & mask) ^ sign).wrapping_sub(sign)
}

/// The little-endian word at `at`.
#[inline(always)]
pub(super) fn word(buf: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
pub(super) fn kind_of(m: u8) -> AccessKind {
    match (m & KIND_BITS) >> KIND_SHIFT {
        0 => AccessKind::Instr,
        1 => AccessKind::Modify,
        2 => AccessKind::Store,
        _ => AccessKind::Load,
    }
}

/// The column directory at the start of a block's columns.
struct Directory {
    addr_bytes: usize,
    escapes: usize,
    explicit_pcs: usize,
    pc_bytes: usize,
}

impl Directory {
    fn read(buf: &[u8]) -> Directory {
        let at = |i: usize| u32_at(buf, 4 * i) as usize;
        Directory {
            addr_bytes: at(0),
            escapes: at(1),
            explicit_pcs: at(2),
            pc_bytes: at(3),
        }
    }
}

/// Decodes the `n` accesses of the columns in `buf[..raw_len]` (followed by at least [`PAD`]
/// bytes) into `batch`, replacing its contents.
///
/// Damage is caught without a separate validating pass: the directory's lengths must add up to
/// the raw length; the kinds and sizes loops OR together flags for impossible meta bytes and for
/// the presence of escapes and explicit pcs; every variable-length column must then be consumed
/// exactly. Reads are clamped, so even inconsistent columns cannot index out of bounds.
pub(super) fn decode_columns(
    buf: &[u8],
    raw_len: usize,
    n: usize,
    batch: &mut Batch,
) -> Result<(), String> {
    debug_assert!(buf.len() >= raw_len + PAD && raw_len >= DIRECTORY_LEN + 3 * n);
    let dir = Directory::read(buf);
    // In u64: four u32 lengths (one times 4) cannot overflow it, whatever usize is.
    let total = DIRECTORY_LEN as u64
        + 3 * n as u64
        + dir.addr_bytes as u64
        + 4 * dir.escapes as u64
        + dir.explicit_pcs as u64
        + dir.pc_bytes as u64;
    // What the seven columns leave is the thread switches' column (version 2).
    let switch_bytes = (raw_len as u64)
        .checked_sub(total)
        .filter(|b| b % THREAD_SWITCH_LEN as u64 == 0)
        .ok_or("column lengths do not add up to the block length")? as usize;
    let cols = &buf[DIRECTORY_LEN..];
    let (meta, rest) = cols.split_at(n);
    let (sizes, rest) = rest.split_at(n);
    let (slots, rest) = rest.split_at(n);
    let (addr_col, rest) = rest.split_at(dir.addr_bytes);
    let (escapes, rest) = rest.split_at(4 * dir.escapes);
    let (pc_lens, pc_col) = rest.split_at(dir.explicit_pcs);

    // Overwrite in place: a caller reusing its batch pays no reallocation or zeroing.
    batch.addrs.resize(n, 0);
    batch.sizes.resize(n, 0);
    batch.kinds.resize(n, AccessKind::Load);
    batch.pcs.resize(n, 0);
    let mut flags = 0u8;
    for (k, &m) in batch.kinds.iter_mut().zip(meta) {
        *k = kind_of(m);
        flags |= meta_flags(m);
    }
    let mut zero_size = false;
    for (out, &size) in batch.sizes.iter_mut().zip(sizes) {
        *out = u32::from(size);
        zero_size |= size == 0;
    }
    if flags & BAD != 0 {
        return Err("invalid access descriptor".into());
    }
    if zero_size != (dir.escapes > 0) || (flags & PC_EXPLICIT != 0) != (dir.explicit_pcs > 0) {
        return Err("the column directory disagrees with the columns".into());
    }
    if dir.escapes > 0 && !patch_sizes(sizes, escapes, &mut batch.sizes) {
        return Err("escaped sizes do not match their column".into());
    }
    let used = decode_addrs_pcs(
        meta,
        slots,
        &cols[3 * n..],
        &mut batch.addrs,
        &mut batch.pcs,
    );
    if used != addr_col.len() {
        return Err("address deltas do not fill their column".into());
    }
    if dir.explicit_pcs > 0 && !patch_pcs(meta, pc_lens, pc_col, dir.pc_bytes, &mut batch.pcs) {
        return Err("explicit pcs do not match their columns".into());
    }
    let switches = &pc_col[dir.pc_bytes..dir.pc_bytes + switch_bytes];
    batch.set_thread_switches(&read_switches(switches))
}
