//! A reader whose work (decompression) runs on a background thread.
//!
//! The thread reads 1 MiB chunks and hands them over a bounded channel; the consumer's `read`
//! copies out of the current chunk. The first error ends the stream and is passed on. Dropping
//! the consumer stops the thread at its next send.

use std::io::{self, Read};
use std::thread;

use crossbeam_channel::{Receiver, bounded};

const CHUNK: usize = 1 << 20;
/// Chunks in flight: enough to ride out jitter, little memory (4 MiB).
const DEPTH: usize = 4;

/// The consuming end.
pub(crate) struct PipeReader {
    rx: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    done: bool,
}

/// Starts a thread that reads `inner` to the end.
pub(crate) fn spawn(mut inner: Box<dyn Read + Send>) -> io::Result<PipeReader> {
    let (tx, rx) = bounded::<io::Result<Vec<u8>>>(DEPTH);
    thread::Builder::new()
        .name("cachescope-decode".into())
        .spawn(move || {
            loop {
                let mut buf = vec![0u8; CHUNK];
                let mut filled = 0;
                // Fill the whole chunk so the consumer sees few, large pieces.
                let res = loop {
                    match inner.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == CHUNK {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                let end = filled == 0 || res.is_err();
                buf.truncate(filled);
                if filled > 0 && tx.send(Ok(buf)).is_err() {
                    return;
                }
                if let Err(e) = res {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end || filled < CHUNK {
                    return;
                }
            }
        })?;
    Ok(PipeReader {
        rx,
        chunk: Vec::new(),
        pos: 0,
        done: false,
    })
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_bytes_through_in_order() {
        let data: Vec<u8> = (0..3 * CHUNK + 5).map(|i| (i * 7) as u8).collect();
        let mut r = spawn(Box::new(io::Cursor::new(data.clone()))).unwrap();
        let mut out = vec![];
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    struct FailsAfter(usize);
    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "bad block"));
            }
            let n = out.len().min(self.0);
            out[..n].fill(b'x');
            self.0 -= n;
            Ok(n)
        }
    }

    #[test]
    fn passes_the_error_on_after_the_data() {
        let mut r = spawn(Box::new(FailsAfter(10))).unwrap();
        let mut out = vec![];
        let err = r.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(out.len(), 10);
    }
}
