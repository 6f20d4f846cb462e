//! Writing ChampSim traces (`convert --to champsim`): cachescope accesses grouped back into
//! instruction records.
//!
//! An instruction fetch opens a record with `ip` = its address. The data references after it
//! join that record while it has room and their order survives reading back: loads go into
//! `source_memory` (four slots) only while the record holds no store yet, stores into
//! `destination_memory` (two slots), a modify into one of each (ChampSim's tracer records a
//! read-modify-write operand that way). A data reference that cannot join (no fetch before it,
//! the slots full, or a load after a store) is written in a record of its own with `ip` 0, so
//! the reader gives back every reference, in order, with no fetch added.
//!
//! What the format cannot hold is counted in [`Losses`]: sizes (everything reads back as 1
//! byte), modifies (read back as a load and a store), references to address 0 (an empty slot),
//! and the pcs of data references (read back as their record's `ip`). Branch and register
//! fields are written as 0: ChampSim then sees no branches and no register dependences.

use std::io::Write;

use super::{ACCESS_SIZE, DESTINATIONS, Record, SOURCES};
use crate::access::AccessKind;
use crate::batch::{Batch, NO_PC};
use crate::error::{Error, Result, Source};

/// What a [`Writer`] could not represent, or represented in a way a reader of the file should
/// know about. Counts of references.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// Data references whose size is not 1 byte (they read back as 1 byte).
    pub data_sizes: u64,
    /// Instruction fetches whose size is not 1 byte (they read back as 1 byte).
    pub fetch_sizes: u64,
    /// Modifies, written as a load and a store of the same address.
    pub modifies: u64,
    /// Data references to address 0, dropped (0 marks an empty slot).
    pub zero_data: u64,
    /// Instruction fetches at address 0, dropped (a record with `ip` 0 has no fetch).
    pub zero_fetches: u64,
    /// Data references written in a record of their own with `ip` 0.
    pub instructionless: u64,
    /// Data references whose pc reads back different (their record's `ip`, or none).
    pub pcs: u64,
}

impl Losses {
    /// True when nothing was lost or moved.
    pub fn is_empty(&self) -> bool {
        *self == Losses::default()
    }

    /// One sentence per nonzero count, for the person who converted the trace.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut note = |n: u64, text: &str| {
            if n > 0 {
                notes.push(format!("{n} {text}"));
            }
        };
        note(
            self.data_sizes,
            "data reference(s) of other than 1 byte: ChampSim records no sizes, so they read \
             back as 1-byte references to their first byte (stats' data_bytes_accessed, \
             straddling_refs and address_max change)",
        );
        note(
            self.fetch_sizes,
            "instruction fetch(es) of other than 1 byte: ChampSim records no instruction \
             lengths, so they read back as 1-byte fetches of their first byte",
        );
        note(
            self.modifies,
            "modify reference(s) written as a load and a store of the same address (as \
             ChampSim's tracer records a read-modify-write operand): each reads back as two \
             references",
        );
        note(
            self.zero_data,
            "data reference(s) to address 0 dropped: a ChampSim memory slot holding 0 is empty",
        );
        note(
            self.zero_fetches,
            "instruction fetch(es) at address 0 dropped: a ChampSim record with ip 0 has no \
             fetch",
        );
        note(
            self.instructionless,
            "data reference(s) written in records of their own with ip 0 (no instruction fetch \
             before them, or their instruction's record was full or would have read a load \
             before an earlier store): cachescope reads them back unchanged, without a pc; \
             ChampSim simulates each such record as an instruction at address 0",
        );
        note(
            self.pcs,
            "data reference(s) whose pc reads back different: a ChampSim reference's pc is its \
             record's ip (none for ip 0)",
        );
        notes
    }
}

/// Writes accesses as ChampSim records onto `W` (unbuffered writes of 64 bytes: give it a
/// buffered writer).
pub struct Writer<W: Write> {
    out: W,
    sink: Source,
    /// The record being filled, with how many source and destination slots it uses; its `ip`
    /// is never 0.
    open: Option<(Record, usize, usize)>,
    losses: Losses,
}

impl<W: Write> Writer<W> {
    /// A writer onto `out`; `sink` names it in error messages.
    pub fn new(out: W, sink: Source) -> Self {
        Writer {
            out,
            sink,
            open: None,
            losses: Losses::default(),
        }
    }

    /// What was lost so far.
    pub fn losses(&self) -> &Losses {
        &self.losses
    }

    /// Appends the accesses of `batch`.
    pub fn write_batch(&mut self, batch: &Batch) -> Result<()> {
        for i in 0..batch.len() {
            let (addr, size, kind, pc) =
                (batch.addrs[i], batch.sizes[i], batch.kinds[i], batch.pcs[i]);
            self.push(addr, size, kind, pc)?;
        }
        Ok(())
    }

    /// Writes the last record and returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.close()?;
        self.out.flush().map_err(|e| Error::io(&self.sink, e))?;
        Ok(self.out)
    }

    fn push(&mut self, addr: u64, size: u32, kind: AccessKind, pc: u64) -> Result<()> {
        if kind == AccessKind::Instr {
            self.close()?;
            self.losses.fetch_sizes += u64::from(size != ACCESS_SIZE);
            if addr == 0 {
                self.losses.zero_fetches += 1;
            } else {
                let record = Record {
                    ip: addr,
                    ..Record::default()
                };
                self.open = Some((record, 0, 0));
            }
            return Ok(());
        }
        if addr == 0 {
            self.losses.zero_data += 1;
            return Ok(());
        }
        self.losses.data_sizes += u64::from(size != ACCESS_SIZE);
        self.losses.modifies += u64::from(kind == AccessKind::Modify);
        let load = usize::from(kind != AccessKind::Store);
        let store = usize::from(kind != AccessKind::Load);
        if let Some((record, loads, stores)) = &mut self.open {
            // A load after a store would read back before it.
            let in_order = load == 0 || *stores == 0;
            if in_order && *loads + load <= SOURCES && *stores + store <= DESTINATIONS {
                if load == 1 {
                    record.source_memory[*loads] = addr;
                    *loads += 1;
                }
                if store == 1 {
                    record.destination_memory[*stores] = addr;
                    *stores += 1;
                }
                self.losses.pcs += u64::from(pc != record.ip);
                return Ok(());
            }
        }
        self.close()?;
        let mut record = Record::default();
        if load == 1 {
            record.source_memory[0] = addr;
        }
        if store == 1 {
            record.destination_memory[0] = addr;
        }
        self.losses.instructionless += 1;
        self.losses.pcs += u64::from(pc != NO_PC);
        self.emit(&record)
    }

    /// Writes the open record, if any.
    fn close(&mut self) -> Result<()> {
        match self.open.take() {
            Some((record, _, _)) => self.emit(&record),
            None => Ok(()),
        }
    }

    fn emit(&mut self, record: &Record) -> Result<()> {
        self.out
            .write_all(&record.encode())
            .map_err(|e| Error::io(&self.sink, e))
    }
}
