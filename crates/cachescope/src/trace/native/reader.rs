//! [`Reader`]: one forward pass over any [`Read`], one block in memory at a time.

use std::io::Read;

use super::decode::{BLOCK_HEADER_LEN, BlockDecoder};
use super::index::{ENTRY_LEN, INDEX_FIXED_LEN, TRAILER_LEN, parse_fixed};
use super::{BLOCK_TAG, BlockEntry, Counts, END_MAGIC, Header, INDEX_TAG, corrupt, header};
use super::{read_exact_or, read_full, truncated, u32_at, u64_at};
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::trace::AccessReader;

/// Index entries read per call while checking the index.
const ENTRIES_PER_READ: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Blocks,
    Done,
    Failed,
}

/// Streams a native trace from any [`Read`] (a pipe, a decompressor): each
/// [`read_batch`](AccessReader::read_batch) decodes one block. Reaching the index, the reader
/// checks that it lists exactly the blocks decoded, that the counts agree, and that the trailer
/// ends the input; a trace without them is [`Error::Truncated`]. After an error every later
/// call fails.
pub struct Reader<R> {
    input: R,
    source: Source,
    header: Header,
    dec: BlockDecoder,
    /// Bytes consumed since the start of the header.
    offset: u64,
    /// Accesses decoded so far.
    decoded: u64,
    blocks: u64,
    /// The header's counts, or the index's once it was read.
    counts: Option<Counts>,
    /// CRC of the index entries the blocks read so far call for.
    expected_entries: flate2::Crc,
    state: State,
}

impl<R> std::fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("source", &self.source)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`, which must start with a native header; reads and checks it.
    pub fn new(mut input: R, source: Source) -> Result<Self> {
        let (header, len) = header::read(&mut input, &source)?;
        Ok(Reader {
            input,
            source,
            dec: BlockDecoder::new(),
            offset: len as u64,
            decoded: 0,
            blocks: 0,
            counts: header.counts,
            header,
            expected_entries: flate2::Crc::new(),
            state: State::Blocks,
        })
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The trace's counts: from the header when it has them, else from the index once
    /// [`read_batch`](AccessReader::read_batch) has returned 0.
    pub fn counts(&self) -> Option<Counts> {
        self.counts
    }

    /// Accesses decoded so far.
    pub fn accesses_read(&self) -> u64 {
        self.decoded
    }

    fn next_block(&mut self, batch: &mut Batch) -> Result<usize> {
        let mut head = [0u8; BLOCK_HEADER_LEN];
        let got =
            read_full(&mut self.input, &mut head[..4]).map_err(|e| Error::io(&self.source, e))?;
        if got < 4 {
            let accesses = self.decoded;
            return Err(truncated(
                &self.source,
                format!(
                    "the trace stops after {accesses} accesses without its index \
                     (the writer did not finish, or the file was cut)"
                ),
            ));
        }
        let at = self.offset;
        match [head[0], head[1], head[2], head[3]] {
            BLOCK_TAG => {
                let what = format!("the block at byte {at}");
                read_exact_or(&mut self.input, &mut head[4..], &self.source, &what)?;
                let info = self
                    .dec
                    .decode_from(&head, &mut self.input, &self.source, at, batch)?;
                let entry = BlockEntry {
                    offset: at,
                    comp_len: info.comp_len,
                    first: self.decoded,
                    count: u32_at(&head, 4),
                };
                self.expected_entries.update(&entry.to_bytes(0));
                self.offset += (BLOCK_HEADER_LEN as u64) + u64::from(info.comp_len);
                self.decoded += u64::from(entry.count);
                self.blocks += 1;
                Ok(batch.len())
            }
            INDEX_TAG => {
                self.check_index()?;
                self.state = State::Done;
                Ok(0)
            }
            _ => Err(corrupt(
                &self.source,
                format!("byte {at}: expected a block or the index"),
            )),
        }
    }

    /// Reads the index (its tag consumed) and the trailer, and checks them against the blocks.
    fn check_index(&mut self) -> Result<()> {
        let source = &self.source;
        let mut fixed = [0u8; INDEX_FIXED_LEN];
        fixed[..4].copy_from_slice(&INDEX_TAG);
        read_exact_or(&mut self.input, &mut fixed[4..], source, "the index")?;
        let listed = u64_at(&fixed, 8);
        if listed != self.blocks {
            let read = self.blocks;
            return Err(corrupt(
                source,
                format!("the index lists {listed} blocks, {read} were read"),
            ));
        }
        let mut crc = flate2::Crc::new();
        crc.update(&fixed);
        let mut entries = flate2::Crc::new();
        let mut buf = vec![0u8; ENTRY_LEN * ENTRIES_PER_READ.min(listed as usize)];
        let mut left = listed as usize;
        while left > 0 {
            let chunk = &mut buf[..ENTRY_LEN * left.min(ENTRIES_PER_READ)];
            read_exact_or(&mut self.input, chunk, source, "the index")?;
            crc.update(chunk);
            entries.update(chunk);
            left -= chunk.len() / ENTRY_LEN;
        }
        let mut tail = [0u8; 4 + TRAILER_LEN];
        read_exact_or(&mut self.input, &mut tail, source, "the index")?;
        if crc.sum() != u32_at(&tail, 0) {
            return Err(corrupt(source, "index checksum mismatch"));
        }
        let (_, counts) = parse_fixed(&fixed, source)?;
        if entries.sum() != self.expected_entries.sum() || counts.accesses != self.decoded {
            return Err(corrupt(
                source,
                "the index does not describe the blocks read",
            ));
        }
        if self.header.counts.is_some_and(|c| c != counts) {
            return Err(corrupt(
                source,
                "the header's counts disagree with the index",
            ));
        }
        if u64_at(&tail, 4) != self.offset || tail[12..] != END_MAGIC {
            return Err(corrupt(source, "bad trailer"));
        }
        let extra = read_full(&mut self.input, &mut [0u8; 1]).map_err(|e| Error::io(source, e))?;
        if extra != 0 {
            return Err(corrupt(
                source,
                "unexpected bytes after the end of the trace",
            ));
        }
        self.counts = Some(counts);
        Ok(())
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    /// Decodes the next block over the batch's previous contents (so a reused batch costs no
    /// zeroing); at the end or on error the batch is left empty.
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        let result = match self.state {
            State::Blocks => self.next_block(batch),
            State::Done => Ok(0),
            State::Failed => Err(corrupt(&self.source, "reading stopped at an earlier error")),
        };
        match result {
            Ok(n) if n > 0 => {}
            Ok(_) => batch.clear(),
            Err(_) => {
                self.state = State::Failed;
                batch.clear();
            }
        }
        result
    }

    fn elide_fetches(&mut self) {
        self.dec.elide_fetches();
    }

    /// The header's counts, when its writer patched them in; checked against the index at
    /// the end.
    fn counts_ahead(&self) -> Option<Counts> {
        self.header.counts
    }
}
