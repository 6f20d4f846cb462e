//! cachescope's native trace format: a versioned header, then independent zstd-compressed blocks
//! of column-encoded accesses, then an index of the blocks and a fixed-size trailer.
//!
//! ```text
//! header  magic, version, line size, counts, metadata, CRC
//! block*  24-byte block header + payload (one zstd frame of columns); ≤ 65 536 accesses each
//! index   block count, counts, per block: offset, first access, accesses, payload length; CRC
//! trailer index offset, end magic
//! ```
//!
//! The byte-level layout, the measurements behind each choice and how to add a version are in
//! `docs/native-format.md`. In short:
//!
//! * **Lossless.** Every field of every access round-trips exactly, including sizes of 0 or
//!   above 255, pcs unrelated to the preceding instruction fetch, and addresses whose deltas
//!   wrap around.
//! * **Fast to decode** (the target is 300 M accesses/s on one core; about 350 M/s measured on
//!   a 2.6 GHz Xeon by `benches/native.rs`, a lackey-like stream). Inside a block each field is
//!   a column. A *meta* byte per access gives the byte length of its address delta, so the
//!   delta is read as one masked little-endian word with no branch on its length (LEB128's
//!   continuation bits would make the length a mispredicted branch when fetches and data
//!   accesses interleave). Each column is decoded by a short branch-free loop.
//! * **Compact** (0.22 bytes per access on the benchmark). Each address is a delta from the
//!   previous address in one of 256 *prediction slots* named by a slot column; the encoder puts
//!   instruction fetches in one slot and gives each (pc, operand) its own, so a strided
//!   operand's delta is its stride, identical every iteration, and loops become repeating byte
//!   patterns that zstd stores as matches and decodes at memory speed. The pc of a lackey-style
//!   access costs no bytes: a meta bit says "the address of the most recent instruction fetch".
//! * **Streamable and seekable.** A [`Reader`] needs only [`std::io::Read`] and holds one block
//!   at a time; at the end it checks that the index lists exactly the blocks it decoded, so a
//!   cut file is [`Error::Truncated`], never a shorter trace.
//!   [`read_index`] finds the index from the trailer so blocks can be decoded independently
//!   ([`read_block`], [`BlockDecoder`]), e.g. in parallel.
//! * **Checked.** The header, every block (its header and payload) and the index carry a
//!   CRC-32; lengths are checked against fixed limits before anything is allocated. Damage is
//!   reported as [`Error::Corrupt`] or `Truncated` with the file's name,
//!   never a panic or wrong data.
//!
//! [`Writer`] writes; [`Header`] carries the line-size hint, free metadata, and the access
//! [`Counts`] when known (a writer to a seekable file patches them in at the end, see
//! [`Writer::finish_and_patch_header`]; the index always has them).
//!
//! ## Versions
//! The magic never changes; a later version bumps the `version` field, keeps a decoder for
//! every older version, and adds a sample file next to `tests/fixtures/native-v1.cst`, which
//! `tests/native_fixture.rs` decodes exactly. Version 2 adds each block's thread switches as
//! an eighth column (empty for a block of the main thread alone, so a single-threaded
//! version 1 block is a version 2 block); version 1 files read as one thread. Version 3 adds
//! run blocks (a flag in the block header): a run of the Valgrind tool's fetches is one row
//! naming the run in the block's run dictionary (`encode/dict.rs`, decoded by
//! `decode_runs.rs`); a block without the flag is a version 2 block.

mod calls;
mod compress;
mod decode;
mod decode_columns;
mod decode_data;
mod decode_runs;
mod encode;
mod header;
mod index;
mod reader;
mod runs;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_runs;
mod writer;

pub use decode::BlockDecoder;
pub(crate) use encode::{Item, ItemSource};
pub use index::{BlockEntry, BlockIndex, read_block, read_index};
pub use reader::Reader;
pub(crate) use runs::{InstrRun, InstrRuns};
pub use writer::{Writer, WriterOptions};

use std::io::{self, Read};

use crate::access::AccessKind;
use crate::batch::BATCH_LEN;
use crate::error::{Error, Source, corrupt, truncated};

/// The first bytes of every native trace (the same for every version; see [`VERSION`]).
pub const MAGIC: [u8; 8] = *b"CSCOPE\x00\x01";

/// The format version this module writes, and the newest it reads (it reads every older one).
pub const VERSION: u32 = 4;

/// The last 8 bytes of a complete native trace.
pub const END_MAGIC: [u8; 8] = *b"CSCOPEND";

/// Most accesses in one block: one block decodes into one [`Batch`](crate::Batch).
pub const MAX_BLOCK_LEN: usize = BATCH_LEN;

/// Largest header (magic, fields and all metadata) a reader accepts.
pub const MAX_HEADER_LEN: usize = 1 << 20;

/// Tag opening every block.
const BLOCK_TAG: [u8; 4] = *b"BLK\0";
/// Tag opening the index.
const INDEX_TAG: [u8; 4] = *b"IDX\0";

/// The trace-wide facts stored before the first block.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// Format version. A [`Writer`] always writes [`VERSION`], whatever this says.
    pub version: u32,
    /// Cache-line size hint for analyses, in bytes (a power of two; default 64).
    pub line_size: u64,
    /// Free key/value pairs, in order, e.g. `source`, `source_format`, `tool`.
    pub metadata: Vec<(String, String)>,
    /// Access counts, known when the trace was written to a seekable file
    /// ([`Writer::finish_and_patch_header`]); `None` otherwise. A [`Writer`] ignores this field
    /// and computes the counts itself.
    pub counts: Option<Counts>,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            version: VERSION,
            line_size: 64,
            metadata: Vec::new(),
            counts: None,
        }
    }
}

impl Header {
    /// A header with the default line size (64), no metadata and unknown counts.
    pub fn new() -> Header {
        Header::default()
    }

    /// Adds one metadata pair.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Header {
        self.metadata.push((key.into(), value.into()));
        self
    }

    /// The value of the first metadata pair named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// How many accesses of each kind a trace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// All accesses.
    pub accesses: u64,
    /// Data loads.
    pub loads: u64,
    /// Data stores.
    pub stores: u64,
    /// Data read-modify-writes.
    pub modifies: u64,
    /// Instruction fetches.
    pub instrs: u64,
}

impl Counts {
    /// Counts one access of `kind`.
    #[inline]
    pub fn add(&mut self, kind: AccessKind) {
        self.accesses += 1;
        match kind {
            AccessKind::Load => self.loads += 1,
            AccessKind::Store => self.stores += 1,
            AccessKind::Modify => self.modifies += 1,
            AccessKind::Instr => self.instrs += 1,
        }
    }

    /// Adds `other` to these counts.
    pub fn merge(&mut self, other: &Counts) {
        self.accesses += other.accesses;
        self.loads += other.loads;
        self.stores += other.stores;
        self.modifies += other.modifies;
        self.instrs += other.instrs;
    }

    /// The five counts in their on-disk order.
    fn to_array(self) -> [u64; 5] {
        [
            self.accesses,
            self.loads,
            self.stores,
            self.modifies,
            self.instrs,
        ]
    }

    /// Counts from their on-disk order; `None` when the kinds do not add up to the total.
    fn from_array(a: [u64; 5]) -> Option<Counts> {
        let c = Counts {
            accesses: a[0],
            loads: a[1],
            stores: a[2],
            modifies: a[3],
            instrs: a[4],
        };
        let sum = [c.loads, c.stores, c.modifies, c.instrs]
            .into_iter()
            .try_fold(0u64, |s, x| s.checked_add(x));
        (sum == Some(c.accesses)).then_some(c)
    }
}

/// CRC-32 (the gzip/zlib polynomial) of the concatenation of `parts`.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = flate2::Crc::new();
    for p in parts {
        crc.update(p);
    }
    crc.sum()
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full<R: Read + ?Sized>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Fills `buf`, or fails with [`Error::Truncated`] naming `what` was cut off.
fn read_exact_or<R: Read + ?Sized>(
    input: &mut R,
    buf: &mut [u8],
    source: &Source,
    what: &str,
) -> crate::Result<()> {
    let got = read_full(input, buf).map_err(|e| Error::io(source, e))?;
    if got < buf.len() {
        return Err(truncated(source, format!("the file ends inside {what}")));
    }
    Ok(())
}

/// Little-endian field readers over a slice whose length the caller has checked.
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}
