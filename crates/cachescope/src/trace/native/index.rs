//! The block index and trailer: writing them, finding them from the end of a seekable file, and
//! random access to blocks.
//!
//! ```text
//! index:   tag "IDX\0" | reserved u32 (0) | block count u64 | counts: 5 × u64
//!          | per block: offset u64, first access u64, accesses u32, payload length u32
//!          | CRC-32 (u32) of every index byte before it
//! trailer: index offset u64 | END_MAGIC
//! ```
//! Offsets count from the first byte of the header. All integers are little-endian.

use std::io::{Read, Seek, SeekFrom};

use super::decode::{BLOCK_HEADER_LEN, BlockDecoder};
use super::encode::max_raw_len;
use super::{BLOCK_TAG, Counts, END_MAGIC, Header, INDEX_TAG, MAX_BLOCK_LEN, corrupt, truncated};
use super::{crc32, header, read_exact_or, u32_at, u64_at};
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

/// Index bytes before the entries: tag, reserved, block count, counts.
pub(super) const INDEX_FIXED_LEN: usize = 56;
/// Bytes of one index entry.
pub(super) const ENTRY_LEN: usize = 24;
/// Bytes of the trailer.
pub(super) const TRAILER_LEN: usize = 16;

/// Where one block is and which accesses it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BlockEntry {
    /// Position of the block's header in the stream [`read_index`] was given (the same as its
    /// offset in the file when the trace starts at byte 0).
    pub offset: u64,
    /// Bytes of the block's payload (after its 24-byte header).
    pub comp_len: u32,
    /// Index in the trace of the block's first access.
    pub first: u64,
    /// Accesses in the block (1 to [`MAX_BLOCK_LEN`]).
    pub count: u32,
}

impl BlockEntry {
    /// The entry's on-disk bytes, with `offset` relative to the header.
    pub(super) fn to_bytes(self, base: u64) -> [u8; ENTRY_LEN] {
        let mut b = [0; ENTRY_LEN];
        b[..8].copy_from_slice(&(self.offset - base).to_le_bytes());
        b[8..16].copy_from_slice(&self.first.to_le_bytes());
        b[16..20].copy_from_slice(&self.count.to_le_bytes());
        b[20..].copy_from_slice(&self.comp_len.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8], base: u64) -> BlockEntry {
        BlockEntry {
            offset: base.wrapping_add(u64_at(b, 0)),
            first: u64_at(b, 8),
            count: u32_at(b, 16),
            comp_len: u32_at(b, 20),
        }
    }
}

/// Every block of a trace, in order, and the trace's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlockIndex {
    /// The blocks, in trace order; consecutive and covering every access.
    pub blocks: Vec<BlockEntry>,
    /// Accesses of each kind in the whole trace.
    pub counts: Counts,
}

/// The index and trailer for `entries` (offsets relative to the header), the index starting
/// at `index_offset`.
pub(super) fn encode(entries: &[BlockEntry], counts: &Counts, index_offset: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(INDEX_FIXED_LEN + ENTRY_LEN * entries.len() + 4 + TRAILER_LEN);
    b.extend_from_slice(&INDEX_TAG);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for c in counts.to_array() {
        b.extend_from_slice(&c.to_le_bytes());
    }
    for e in entries {
        b.extend_from_slice(&e.to_bytes(0));
    }
    let crc = crc32(&[&b]);
    b.extend_from_slice(&crc.to_le_bytes());
    b.extend_from_slice(&index_offset.to_le_bytes());
    b.extend_from_slice(&END_MAGIC);
    b
}

/// The block count and counts of an index's fixed part (after its checksum was verified).
pub(super) fn parse_fixed(b: &[u8], source: &Source) -> Result<(u64, Counts)> {
    if b[4..8] != [0; 4] {
        return Err(corrupt(source, "index: reserved bytes are not zero"));
    }
    let mut c = [0u64; 5];
    for (i, x) in c.iter_mut().enumerate() {
        *x = u64_at(b, 16 + 8 * i);
    }
    let counts = Counts::from_array(c)
        .ok_or_else(|| corrupt(source, "index: the counts of each kind do not add up"))?;
    Ok((u64_at(b, 8), counts))
}

/// Reads the header and the block index of a seekable trace positioned at its header, without
/// decoding any block. Checks that the blocks are consecutive, cover the trace, and agree with
/// the counts (and with the header's counts when it has them).
pub fn read_index<R: Read + Seek>(mut file: R, source: &Source) -> Result<(Header, BlockIndex)> {
    let io = |e| Error::io(source, e);
    let base = file.stream_position().map_err(io)?;
    let (header, header_len) = header::read(&mut file, source)?;
    let header_len = header_len as u64;
    let total = file
        .seek(SeekFrom::End(0))
        .map_err(io)?
        .saturating_sub(base);
    let no_index = || {
        truncated(
            source,
            "the trace does not end with its index (the writer did not finish, or it was cut)",
        )
    };
    let min_rest = (INDEX_FIXED_LEN + 4 + TRAILER_LEN) as u64;
    if total < header_len + min_rest {
        return Err(no_index());
    }
    let mut trailer = [0u8; TRAILER_LEN];
    file.seek(SeekFrom::Start(base + total - TRAILER_LEN as u64))
        .map_err(io)?;
    read_exact_or(&mut file, &mut trailer, source, "the trailer")?;
    if trailer[8..] != END_MAGIC {
        return Err(no_index());
    }
    let index_at = u64_at(&trailer, 0);
    let index_len = (total - TRAILER_LEN as u64).checked_sub(index_at);
    let entries = index_len
        .filter(|_| index_at >= header_len)
        .and_then(|l| l.checked_sub((INDEX_FIXED_LEN + 4) as u64))
        .filter(|l| l % ENTRY_LEN as u64 == 0)
        .map(|l| l / ENTRY_LEN as u64)
        // Every block takes more than an index entry's bytes, which bounds the allocation.
        .filter(|&n| n <= (index_at - header_len) / ENTRY_LEN as u64);
    let Some(n) = entries else {
        return Err(corrupt(
            source,
            format!("trailer: impossible index offset {index_at}"),
        ));
    };
    let mut b = vec![0u8; INDEX_FIXED_LEN + ENTRY_LEN * n as usize + 4];
    file.seek(SeekFrom::Start(base + index_at)).map_err(io)?;
    read_exact_or(&mut file, &mut b, source, "the index")?;
    let (body, crc) = b.split_at(b.len() - 4);
    if body[..4] != INDEX_TAG || crc32(&[body]) != u32_at(crc, 0) {
        return Err(corrupt(source, "index checksum mismatch"));
    }
    let (blocks, counts) = parse_fixed(body, source)?;
    if blocks != n {
        return Err(corrupt(
            source,
            "index: block count disagrees with the index length",
        ));
    }
    let blocks: Vec<BlockEntry> = body[INDEX_FIXED_LEN..]
        .chunks_exact(ENTRY_LEN)
        .map(|e| BlockEntry::from_bytes(e, base))
        .collect();
    check_layout(
        &blocks,
        base + header_len,
        base + index_at,
        counts.accesses,
        source,
    )?;
    if header.counts.is_some_and(|c| c != counts) {
        return Err(corrupt(
            source,
            "the header's counts disagree with the index",
        ));
    }
    Ok((header, BlockIndex { blocks, counts }))
}

/// Checks that `blocks` tile `[start, end)` and number the accesses `0..accesses` in order.
fn check_layout(
    blocks: &[BlockEntry],
    start: u64,
    end: u64,
    accesses: u64,
    source: &Source,
) -> Result<()> {
    let (mut at, mut first) = (start, 0u64);
    for (i, b) in blocks.iter().enumerate() {
        let count = b.count as usize;
        let ok = b.offset == at
            && b.first == first
            && (1..=MAX_BLOCK_LEN).contains(&count)
            && b.comp_len as usize <= max_raw_len(count) + 4 + super::calls::MAX_CALL_BYTES;
        if !ok {
            let message = format!("index: entry {i} does not continue the blocks before it");
            return Err(corrupt(source, message));
        }
        at += (BLOCK_HEADER_LEN as u64) + u64::from(b.comp_len);
        first += u64::from(b.count);
    }
    if at != end || first != accesses {
        return Err(corrupt(source, "index: the blocks do not cover the trace"));
    }
    Ok(())
}

impl BlockDecoder {
    /// Decodes the block `entry` (from [`read_index`] on the same file) into `batch`, replacing
    /// its contents; returns the number of accesses. On error the batch is left empty.
    pub fn read_block<R: Read + Seek>(
        &mut self,
        file: R,
        source: &Source,
        entry: &BlockEntry,
        batch: &mut Batch,
    ) -> Result<usize> {
        let result = self.read_block_inner(file, source, entry, batch);
        if result.is_err() {
            batch.clear();
        }
        result
    }

    fn read_block_inner<R: Read + Seek>(
        &mut self,
        mut file: R,
        source: &Source,
        entry: &BlockEntry,
        batch: &mut Batch,
    ) -> Result<usize> {
        file.seek(SeekFrom::Start(entry.offset))
            .map_err(|e| Error::io(source, e))?;
        let mut head = [0u8; BLOCK_HEADER_LEN];
        let at = entry.offset;
        read_exact_or(
            &mut file,
            &mut head,
            source,
            &format!("the block at byte {at}"),
        )?;
        if head[..4] != BLOCK_TAG
            || u32_at(&head, 4) != entry.count
            || u32_at(&head, 12) != entry.comp_len
        {
            return Err(corrupt(
                source,
                format!("block at byte {at} does not match the index"),
            ));
        }
        self.decode_from(&head, &mut file, source, at, batch)?;
        Ok(batch.len())
    }
}

/// Decodes one block, as [`BlockDecoder::read_block`] with a fresh decoder (reuse a
/// [`BlockDecoder`] to avoid reallocating buffers for every block).
pub fn read_block<R: Read + Seek>(
    file: R,
    source: &Source,
    entry: &BlockEntry,
    batch: &mut Batch,
) -> Result<usize> {
    BlockDecoder::new().read_block(file, source, entry, batch)
}
