//! A trace's progress: the raw bytes read so far, counted as they pass
//! ([`Counting`]) and read from another thread ([`ProgressProbe`]).

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Reads a trace's progress while another thread reads the trace.
#[derive(Clone, Debug)]
pub struct ProgressProbe {
    pub(super) bytes_read: Arc<AtomicU64>,
    pub(super) total_bytes: Option<u64>,
}

impl ProgressProbe {
    /// Raw bytes consumed so far, and the total when known.
    pub fn get(&self) -> (u64, Option<u64>) {
        (self.bytes_read.load(Ordering::Relaxed), self.total_bytes)
    }
}

/// Counts bytes as they are read, for progress.
pub(super) struct Counting<R> {
    pub(super) inner: R,
    pub(super) count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
