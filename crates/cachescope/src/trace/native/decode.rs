//! Reading one block: its header, checksum, decompression, and the column decoders.
//!
//! ```text
//! offset  size  field
//!      0     4  tag "BLK\0"
//!      4     4  accesses in the block, 1..=65536 (u32 LE)
//!      8     4  raw length: bytes of the columns (u32 LE)
//!     12     4  payload length (u32 LE)
//!     16     1  codec: 0 = stored (payload = columns), 1 = one zstd frame
//!     17     3  reserved, zero
//!     20     4  CRC-32 of bytes 0..20 and of the payload
//!     24     …  payload
//! ```
//!
//! The column decoders run tight loops over a buffer padded with [`PAD`] zero bytes, so a
//! variable-length field is read as one unaligned little-endian word, masked to its length and
//! sign-extended: no branch depends on the data. Before they run, one validating pass over the
//! meta and size bytes checks every length and pc mode and derives where each column starts;
//! the column lengths must then add up to the raw length exactly, so every read is in bounds.

use std::io::Read;

use super::encode::{KIND_SHIFT, LEN_MASK, MAX_RAW_PER_ACCESS, PC_EXPLICIT, PC_SHIFT, SLOTS};
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
/// Zero bytes after the columns, so a column reader may load a whole word near the end.
const PAD: usize = 8;
/// `MASKS[l]` keeps the `l` low bytes of a word (lengths above 8 are rejected beforehand).
const MASKS: [u64; 16] = {
    let mut m = [0u64; 16];
    let mut l = 1;
    while l < 8 {
        m[l] = (1u64 << (8 * l)) - 1;
        l += 1;
    }
    m[8] = u64::MAX;
    m
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

    /// Reads the rest of a block whose 24-byte header is `head` (tag already checked) from
    /// `input`, and decodes it into `batch`, replacing its contents. `at` is the block's offset, for
    /// messages.
    pub(super) fn decode_from<R: Read + ?Sized>(
        &mut self,
        head: &[u8; BLOCK_HEADER_LEN],
        input: &mut R,
        source: &Source,
        at: u64,
        batch: &mut Batch,
    ) -> Result<BlockInfo> {
        debug_assert_eq!(head[..4], BLOCK_TAG);
        let bad = |message: String| corrupt(source, format!("block at byte {at}: {message}"));
        let n = u32_at(head, 4) as usize;
        let raw_len = u32_at(head, 8) as usize;
        let comp_len = u32_at(head, 12) as usize;
        let codec = head[16];
        if !(1..=MAX_BLOCK_LEN).contains(&n)
            || !(3 * n..=MAX_RAW_PER_ACCESS * n).contains(&raw_len)
            || comp_len > raw_len
            || head[17..20] != [0; 3]
        {
            return Err(bad(format!(
                "impossible header ({n} accesses, {raw_len} raw bytes, {comp_len} stored bytes)"
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
            CODEC_STORED if comp_len == raw_len => {
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
        decode_columns(columns, raw_len, n, batch).map_err(bad)?;
        Ok(BlockInfo {
            comp_len: comp_len as u32,
        })
    }
}

/// `SHIFTS[l]` moves the sign bit of an `l`-byte value to bit 63 (0 for lengths 0 and 8).
const SHIFTS: [u32; 16] = {
    let mut s = [0u32; 16];
    let mut l = 1;
    while l < 8 {
        s[l] = 64 - 8 * l as u32;
        l += 1;
    }
    s
};

/// The `len`-byte little-endian signed value at the start of `w` (the bytes above it ignored).
#[inline(always)]
fn sign_extend(w: u64, len: usize) -> u64 {
    let sh = SHIFTS[len];
    (((w & MASKS[len]) << sh) as i64 >> sh) as u64
}

/// The little-endian word at `at`.
#[inline(always)]
fn word(buf: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn kind_of(m: u8) -> AccessKind {
    match (m >> KIND_SHIFT) & 3 {
        0 => AccessKind::Load,
        1 => AccessKind::Store,
        2 => AccessKind::Modify,
        _ => AccessKind::Instr,
    }
}

/// Column lengths learnt by the validating pass.
struct Summary {
    addr_bytes: usize,
    explicit_pcs: usize,
    escapes: usize,
}

/// Checks every meta byte (delta length at most 8, pc mode not 3) and sums what locating the
/// columns needs. Narrow accumulators over chunks let it vectorise.
fn summarise(meta: &[u8], sizes: &[u8]) -> Option<Summary> {
    let mut bad = 0u8;
    let mut s = Summary {
        addr_bytes: 0,
        explicit_pcs: 0,
        escapes: 0,
    };
    // 4096 lengths of at most 15 fit a u16.
    for (meta, sizes) in meta.chunks(4096).zip(sizes.chunks(4096)) {
        let (mut len_sum, mut explicit, mut escapes) = (0u16, 0u16, 0u16);
        for (&m, &size) in meta.iter().zip(sizes) {
            let len = m & LEN_MASK;
            let mode = m >> PC_SHIFT;
            bad |= u8::from(len > 8) | u8::from(mode == 3);
            len_sum += u16::from(len);
            explicit += u16::from(mode == PC_EXPLICIT);
            escapes += u16::from(size == 0);
        }
        s.addr_bytes += usize::from(len_sum);
        s.explicit_pcs += usize::from(explicit);
        s.escapes += usize::from(escapes);
    }
    (bad == 0).then_some(s)
}

/// Decodes the `n` accesses of the columns in `buf[..raw_len]` (followed by at least [`PAD`]
/// bytes) into `batch`, replacing its contents.
pub(super) fn decode_columns(
    buf: &[u8],
    raw_len: usize,
    n: usize,
    batch: &mut Batch,
) -> Result<(), String> {
    debug_assert!(buf.len() >= raw_len + PAD && raw_len >= 3 * n);
    let (meta, sizes, slots) = (&buf[..n], &buf[n..2 * n], &buf[2 * n..3 * n]);
    let s = summarise(meta, sizes).ok_or("invalid access descriptor")?;
    let addr_at = 3 * n;
    let esc_at = addr_at + s.addr_bytes;
    let pc_len_at = esc_at + 4 * s.escapes;
    let pc_at = pc_len_at + s.explicit_pcs;
    let pc_lens = buf.get(pc_len_at..pc_at).filter(|_| pc_at <= raw_len);
    let pc_lens = pc_lens.ok_or("columns overrun the block")?;
    if pc_lens.iter().any(|&l| l > 8) {
        return Err("invalid pc length".into());
    }
    let pc_bytes: usize = pc_lens.iter().map(|&l| usize::from(l)).sum();
    if pc_at + pc_bytes != raw_len {
        return Err("column lengths do not add up to the block length".into());
    }

    // Overwrite in place: a caller reusing its batch pays no reallocation or zeroing.
    batch.addrs.resize(n, 0);
    batch.sizes.resize(n, 0);
    batch.kinds.resize(n, AccessKind::Load);
    batch.pcs.resize(n, 0);
    for (k, &m) in batch.kinds.iter_mut().zip(meta) {
        *k = kind_of(m);
    }
    for (out, &size) in batch.sizes.iter_mut().zip(sizes) {
        *out = u32::from(size);
    }
    if s.escapes > 0 {
        patch_sizes(sizes, &buf[esc_at..pc_len_at], &mut batch.sizes);
    }
    decode_addrs_pcs(
        meta,
        slots,
        &buf[addr_at..],
        &mut batch.addrs,
        &mut batch.pcs,
    );
    if s.explicit_pcs > 0 {
        patch_pcs(meta, pc_lens, &buf[pc_at..], &mut batch.pcs);
    }
    Ok(())
}

/// Calls `f(i)` for each `i` where `hit(bytes[i])`, cheaply skipping runs of misses (the hits,
/// escaped sizes or explicit pcs, are usually rare).
#[inline(always)]
fn for_each_hit(bytes: &[u8], hit: impl Fn(u8) -> bool, mut f: impl FnMut(usize)) {
    const CHUNK: usize = 64;
    for (c, chunk) in bytes.chunks(CHUNK).enumerate() {
        if chunk.iter().fold(false, |any, &b| any | hit(b)) {
            for (k, &b) in chunk.iter().enumerate() {
                if hit(b) {
                    f(c * CHUNK + k);
                }
            }
        }
    }
}

/// Replaces each size 0 by the next escaped size.
fn patch_sizes(sizes: &[u8], escapes: &[u8], out: &mut [u32]) {
    let mut wide = escapes.chunks_exact(4).map(|w| u32_at(w, 0));
    for_each_hit(sizes, |s| s == 0, |i| out[i] = wide.next().unwrap_or(0));
}

/// Addresses, each its delta plus the previous address in its slot, and the pcs of modes 0 and
/// 1 (mode 2 leaves garbage for [`patch_pcs`]). No branch depends on the data.
fn decode_addrs_pcs(meta: &[u8], slots: &[u8], col: &[u8], addrs: &mut [u64], pcs: &mut [u64]) {
    let mut table = [0u64; SLOTS];
    let (mut at, mut last_instr) = (0usize, 0u64);

    let out = addrs.iter_mut().zip(pcs.iter_mut());
    for ((addr, pc), (&m, &s)) in out.zip(meta.iter().zip(slots)) {
        let len = usize::from(m & LEN_MASK);
        let delta = sign_extend(word(col, at), len);
        at += len;
        let slot = &mut table[usize::from(s)];
        let a = slot.wrapping_add(delta);
        *slot = a;
        *addr = a;
        if (m >> KIND_SHIFT) & 3 == 3 {
            last_instr = a;
        }
        *pc = last_instr & u64::from(m >> PC_SHIFT).wrapping_neg();
    }
}

/// Fills in the explicit pcs: deltas from the previous explicit pc.
fn patch_pcs(meta: &[u8], lens: &[u8], col: &[u8], pcs: &mut [u64]) {
    let (mut prev, mut lens, mut at) = (0u64, lens.iter(), 0usize);
    for_each_hit(
        meta,
        |m| m >> PC_SHIFT == PC_EXPLICIT,
        |i| {
            let len = usize::from(lens.next().copied().unwrap_or(0)) & 15;
            prev = prev.wrapping_add(sign_extend(word(col, at), len));
            at += len;
            pcs[i] = prev;
        },
    );
}
