//! Where [`NextUseSpill`](super::NextUseSpill) keeps its ids and next uses: in memory up to a
//! budget, in a temporary file past it. A sampled report's OPT often sees a few million
//! references, whose ids fit in a few megabytes: writing them to a file and reading them back
//! costs system calls and the page cache's copies, on the core the recorded program needs. A
//! long stream still spills, so memory stays bounded (32 MiB for both).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;

use super::next_use::io;
use crate::error::Result;

/// Bytes a [`Sink`] keeps in memory before it moves to a file: the ids and the next uses
/// together stay under 32 MiB (8 Mi references, 4 bytes each, in each).
pub(super) const MEMORY_BYTES: usize = 16 << 20;

/// Bytes written in order, readable at any offset once written.
#[derive(Debug)]
pub(super) enum Sink {
    /// Shared with the readers [`Sink::reader`] gave (copied on write only if they still hold
    /// it); moves to a file past `budget` bytes.
    Memory {
        bytes: Arc<Vec<u8>>,
        budget: usize,
    },
    File(BufWriter<File>),
}

/// Bytes written, read at explicit offsets (so several readers may share them).
#[derive(Clone, Debug)]
pub(super) enum Store {
    Memory(Arc<Vec<u8>>),
    File(Arc<File>),
}

impl Sink {
    /// An empty sink kept in memory up to `budget` bytes.
    pub fn memory(budget: usize) -> Sink {
        Sink::Memory {
            bytes: Arc::new(Vec::new()),
            budget,
        }
    }

    /// An empty sink writing into `file` from the start.
    #[cfg(test)]
    pub fn file(file: File) -> Sink {
        Sink::File(BufWriter::with_capacity(1 << 20, file))
    }

    /// Appends `data`; the first write past the budget moves what is held into a temporary
    /// file.
    pub fn write_all(&mut self, data: &[u8]) -> Result<()> {
        if let Sink::Memory { bytes, budget } = self {
            if bytes.len() + data.len() <= *budget {
                Arc::make_mut(bytes).extend_from_slice(data);
                return Ok(());
            }
            let mut file = BufWriter::with_capacity(1 << 20, tempfile::tempfile().map_err(io)?);
            file.write_all(bytes).map_err(io)?;
            *self = Sink::File(file);
        }
        match self {
            Sink::File(f) => f.write_all(data).map_err(io),
            Sink::Memory { .. } => unreachable!("moved to a file above"),
        }
    }

    /// What has been written so far, for reading beside further writes.
    pub fn reader(&mut self) -> Result<Store> {
        match self {
            Sink::Memory { bytes, .. } => Ok(Store::Memory(bytes.clone())),
            Sink::File(f) => {
                f.flush().map_err(io)?;
                Ok(Store::File(Arc::new(f.get_ref().try_clone().map_err(io)?)))
            }
        }
    }

    /// Everything written, for reading.
    pub fn into_store(self) -> Result<Store> {
        match self {
            Sink::Memory { bytes, .. } => Ok(Store::Memory(bytes)),
            Sink::File(f) => Ok(Store::File(Arc::new(
                f.into_inner().map_err(|e| io(e.into_error()))?,
            ))),
        }
    }
}

impl Store {
    /// Fills `buf` with the bytes from `offset` on.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        match self {
            Store::Memory(bytes) => {
                let start = usize::try_from(offset).ok().filter(|&s| s <= bytes.len());
                match start.and_then(|s| bytes.get(s..s + buf.len())) {
                    Some(src) => {
                        buf.copy_from_slice(src);
                        Ok(())
                    }
                    None => Err(io(std::io::ErrorKind::UnexpectedEof.into())),
                }
            }
            Store::File(file) => read_exact_at(file, buf, offset).map_err(io),
        }
    }
}

/// Fills `buf` from `file` at `offset` without moving the file's cursor (another handle of the
/// same file may be reading meanwhile).
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Windows has positioned reads that may return short: loop until `buf` is full.
#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its budget a sink moves to a file, keeping what it held; readers taken before and
    /// after read the same bytes.
    #[test]
    fn a_sink_past_its_budget_moves_to_a_file_and_reads_the_same() {
        let mut sink = Sink::memory(10);
        sink.write_all(&[1, 2, 3, 4]).unwrap();
        let early = sink.reader().unwrap();
        assert!(matches!(early, Store::Memory(_)));
        sink.write_all(&[5, 6, 7, 8, 9, 10]).unwrap();
        assert!(matches!(sink, Sink::Memory { .. }));
        sink.write_all(&[11]).unwrap();
        assert!(matches!(sink, Sink::File(_)));
        let store = sink.into_store().unwrap();
        let mut buf = [0u8; 5];
        store.read_exact_at(&mut buf, 6).unwrap();
        assert_eq!(buf, [7, 8, 9, 10, 11]);
        let mut four = [0u8; 4];
        early.read_exact_at(&mut four, 0).unwrap();
        assert_eq!(four, [1, 2, 3, 4]);
        assert!(early.read_exact_at(&mut four, 2).is_err());
        assert!(store.read_exact_at(&mut buf, 8).is_err());
    }
}
