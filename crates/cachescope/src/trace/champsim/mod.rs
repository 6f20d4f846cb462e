//! ChampSim traces: the simulator's `input_instr` records, 64 bytes each, one per instruction.
//!
//! The layout (ChampSim's `inc/trace_instruction.h`, little-endian, no padding):
//!
//! | offset | bytes | field | read as |
//! | ---: | ---: | --- | --- |
//! | 0 | 8 | `ip` | an instruction fetch at `ip`, unless `ip` is 0 |
//! | 8 | 1 | `is_branch` | ignored |
//! | 9 | 1 | `branch_taken` | ignored |
//! | 10 | 2 | `destination_registers[2]` | ignored |
//! | 12 | 4 | `source_registers[4]` | ignored |
//! | 16 | 16 | `destination_memory[2]` | a [`Store`] per nonzero slot, after the loads |
//! | 32 | 32 | `source_memory[4]` | a [`Load`] per nonzero slot, in slot order |
//!
//! Each record becomes, in this order, an [`Instr`] fetch at `ip`, a load per nonzero
//! `source_memory` slot and a store per nonzero `destination_memory` slot: the order ChampSim's
//! core issues them (fetch, then `do_memory_scheduling` puts the loads in the load queue before
//! the stores go to the store queue, and stores reach the cache only after retirement). Zero
//! slots are empty, wherever they are, as in ChampSim's own reader. Every access of a record has
//! pc `ip`.
//!
//! The format gives no sizes: ChampSim simulates the cache block that holds each address. Every
//! access here is 1 byte ([`ACCESS_SIZE`]), so it touches exactly that block and never straddles
//! two, for fetches and data alike (x86 instruction lengths vary from 1 to 15 bytes, and a
//! memory operand's width is not recorded).
//!
//! A record whose `ip` is 0 has no fetch: real tracers never write one, and cachescope's own
//! writer ([`Writer`]) uses it for data references that have no instruction of their own.
//!
//! A trace whose length is not a multiple of 64 bytes ends in a partial record, reported as
//! [`Error::Truncated`] with its record number and byte offset after every whole record has
//! been delivered. Branch and register bytes are not checked (ChampSim does not check them
//! either). The older `cloudsuite_instr` layout (84 bytes, four destinations and an ASID) is
//! not read. See docs/champsim.md.
//!
//! [`Load`]: AccessKind::Load
//! [`Store`]: AccessKind::Store
//! [`Instr`]: AccessKind::Instr

mod writer;

pub use writer::{Losses, Writer};

use std::io::Read;

use super::AccessReader;
use crate::access::AccessKind;
use crate::batch::{BATCH_LEN, Batch};
use crate::error::{Error, Result, Source};

/// Bytes per record.
pub const RECORD_LEN: usize = 64;

/// Source memory slots per record (`NUM_INSTR_SOURCES`).
pub const SOURCES: usize = 4;

/// Destination memory slots per record (`NUM_INSTR_DESTINATIONS`).
pub const DESTINATIONS: usize = 2;

/// The size in bytes of every access read from a ChampSim trace (the format has none).
pub const ACCESS_SIZE: u32 = 1;

/// Most accesses one record yields: a fetch, four loads and two stores.
const MAX_PER_RECORD: usize = 1 + SOURCES + DESTINATIONS;

/// Records read from the input at a time (1 MiB).
const CHUNK_RECORDS: usize = 1 << 14;

/// One ChampSim `input_instr` record, field by field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The instruction's address; 0 for a record without a fetch.
    pub ip: u64,
    /// 1 for a branch (ChampSim re-derives the branch type from the registers).
    pub is_branch: u8,
    /// 1 for a taken branch.
    pub branch_taken: u8,
    /// Registers written, 0 for none.
    pub destination_registers: [u8; DESTINATIONS],
    /// Registers read, 0 for none.
    pub source_registers: [u8; SOURCES],
    /// Addresses written, 0 for none.
    pub destination_memory: [u64; DESTINATIONS],
    /// Addresses read, 0 for none.
    pub source_memory: [u64; SOURCES],
}

impl Record {
    /// Decodes one record.
    pub fn decode(b: &[u8; RECORD_LEN]) -> Record {
        let word = |at: usize| {
            let mut w = [0; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        Record {
            ip: word(0),
            is_branch: b[8],
            branch_taken: b[9],
            destination_registers: [b[10], b[11]],
            source_registers: [b[12], b[13], b[14], b[15]],
            destination_memory: [word(16), word(24)],
            source_memory: [word(32), word(40), word(48), word(56)],
        }
    }

    /// Encodes the record as ChampSim lays it out.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut b = [0; RECORD_LEN];
        b[..8].copy_from_slice(&self.ip.to_le_bytes());
        b[8] = self.is_branch;
        b[9] = self.branch_taken;
        b[10..12].copy_from_slice(&self.destination_registers);
        b[12..16].copy_from_slice(&self.source_registers);
        let words = self.destination_memory.iter().chain(&self.source_memory);
        for (i, w) in words.enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// Reader options (none yet).
#[derive(Clone, Debug, Default)]
pub struct Options {}

/// Reads accesses from ChampSim records.
pub struct Reader<R> {
    input: R,
    source: Source,
    /// Bytes read; `buf[start..filled]` not yet decoded.
    buf: Vec<u8>,
    start: usize,
    filled: usize,
    /// Whole records decoded so far, for the truncation message.
    records: u64,
    eof: bool,
}

impl<R: Read + Send> Reader<R> {
    /// A reader over `input`; `source` names it in error messages.
    pub fn new(input: R, source: Source, _opts: Options) -> Self {
        Reader {
            input,
            source,
            buf: vec![0; CHUNK_RECORDS * RECORD_LEN],
            start: 0,
            filled: 0,
            records: 0,
            eof: false,
        }
    }

    /// Moves the undecoded bytes to the front and reads more after them; sets `eof` at the end.
    fn refill(&mut self) -> Result<()> {
        self.buf.copy_within(self.start..self.filled, 0);
        self.filled -= self.start;
        self.start = 0;
        loop {
            match self.input.read(&mut self.buf[self.filled..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.source, e)),
            }
            return Ok(());
        }
    }
}

impl<R: Read + Send> AccessReader for Reader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        while batch.len() + MAX_PER_RECORD <= BATCH_LEN {
            if self.filled - self.start < RECORD_LEN {
                if self.eof {
                    break;
                }
                self.refill()?;
                continue;
            }
            let room = (BATCH_LEN - batch.len()) / MAX_PER_RECORD;
            let whole = ((self.filled - self.start) / RECORD_LEN).min(room);
            let end = self.start + whole * RECORD_LEN;
            for r in self.buf[self.start..end].chunks_exact(RECORD_LEN) {
                push_record(batch, r);
            }
            self.start = end;
            self.records += whole as u64;
        }
        let left = self.filled - self.start;
        if batch.is_empty() && self.eof && left > 0 {
            return Err(Error::Truncated {
                source_name: self.source.clone(),
                message: format!(
                    "ChampSim record {} (at byte offset {} of the trace's content) is cut short: \
                     {left} of its {RECORD_LEN} bytes",
                    self.records + 1,
                    self.records * RECORD_LEN as u64,
                ),
            });
        }
        Ok(batch.len())
    }
}

/// Appends the accesses of record `r` (64 bytes): the fetch, the loads, then the stores.
#[inline]
fn push_record(batch: &mut Batch, r: &[u8]) {
    let word = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap_or_default());
    let ip = word(0);
    if ip != 0 {
        batch.push_raw(ip, ACCESS_SIZE, AccessKind::Instr, ip);
    }
    for at in [32, 40, 48, 56] {
        let addr = word(at);
        if addr != 0 {
            batch.push_raw(addr, ACCESS_SIZE, AccessKind::Load, ip);
        }
    }
    for at in [16, 24] {
        let addr = word(at);
        if addr != 0 {
            batch.push_raw(addr, ACCESS_SIZE, AccessKind::Store, ip);
        }
    }
}

/// Whether `head`, the first bytes of a trace's content, looks like ChampSim records (a partial
/// last record is ignored). Text never does (offsets 8 and 9 would hold text bytes); raw binary
/// addresses almost never do, for every record of the sample must pass:
///
/// - `is_branch` and `branch_taken` are 0 or 1;
/// - `ip` and every nonzero memory slot are canonical 57-bit virtual addresses (bits 56 to 63
///   all equal), user or kernel;
/// - `ip` or some memory slot is nonzero;
///
/// and at least a quarter of the sample's memory slots must be empty (most instructions touch
/// no memory, no instruction touches six places; a binary trace's addresses are hardly ever 0).
pub fn sniff(head: &[u8]) -> bool {
    let records = head.chunks_exact(RECORD_LEN);
    let n = records.len();
    if n == 0 {
        return false;
    }
    let canonical = |a: u64| (a >> 56) == 0 || (a >> 56) == 0xff;
    let mut empty_slots = 0;
    for r in records {
        let r = Record::decode(r.try_into().unwrap_or(&[0; RECORD_LEN]));
        if r.is_branch > 1 || r.branch_taken > 1 || !canonical(r.ip) {
            return false;
        }
        let slots = r.destination_memory.iter().chain(&r.source_memory);
        let mut used = 0;
        for &a in slots {
            if a == 0 {
                empty_slots += 1;
            } else if canonical(a) {
                used += 1;
            } else {
                return false;
            }
        }
        if r.ip == 0 && used == 0 {
            return false;
        }
    }
    empty_slots * 4 >= n * (SOURCES + DESTINATIONS)
}

#[cfg(test)]
mod tests;
