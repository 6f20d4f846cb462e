//! [`StreamCopy`]: the copy of the tool's sampled stream kept for a second read (the threads
//! section of `report --sampled -- PROGRAM`), written by a thread of its own and only once it
//! may be needed. The reader copies what it reads into blocks of [`BLOCK`] bytes, handed over
//! whole (one wake-up and one `write` each) and handed back empty once written, so the
//! reader's thread does a `memcpy` and no allocation; the writer holds the first [`HELD`]
//! bytes in memory and writes nothing while it can; past that it writes everything, as it
//! comes. At the end [`StreamCopy::finish`] says whether the
//! second read happens (the program had a second thread): a stream that fit in memory and is
//! not needed is never written, and the reader's thread never waits on the file system.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::error::{Error, Result, Source};

/// Bytes of the stream held in memory before anything is written: a short run's whole stream.
pub const HELD: usize = 8 << 20;
/// Bytes handed to the writer at a time.
pub const BLOCK: usize = 1 << 20;
/// Blocks in flight between the reader and the writer, and written blocks handed back.
const IN_FLIGHT: usize = 8;

enum Message {
    Data(Vec<u8>),
    /// The stream has ended: whether the copy is read again.
    Finish(bool),
}

/// A copy of the tool's stream into a file, written on a thread of its own and, while it is
/// short, only if it is read again ([`StreamCopy::finish`]).
pub struct StreamCopy {
    tx: SyncSender<Message>,
    /// The written blocks, for the (first) tee to fill again.
    back: Mutex<Option<Receiver<Vec<u8>>>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
    path: PathBuf,
}

impl StreamCopy {
    /// Creates (truncates) `path` and starts its writer.
    pub fn create(path: &Path) -> Result<StreamCopy> {
        let file = File::create(path).map_err(|e| Error::io(&Source::File(path.into()), e))?;
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let (back_tx, back) = sync_channel(IN_FLIGHT);
        let writer = std::thread::Builder::new()
            .name("cachescope-copy".into())
            .spawn(move || write(file, &rx, &back_tx))
            .map_err(|e| Error::io(&Source::File(path.into()), e))?;
        Ok(StreamCopy {
            tx,
            back: Mutex::new(Some(back)),
            writer: Some(writer),
            path: path.to_owned(),
        })
    }

    /// `input`, what is read from it handed to the copy too (all of it once a read returns
    /// nothing, the input's end, or the tee is dropped).
    pub(crate) fn tee<R: Read>(&self, input: R) -> Tee<R> {
        let back = self.back.lock().map_or(None, |mut b| b.take());
        Tee {
            input,
            tx: self.tx.clone(),
            back,
            block: Vec::with_capacity(BLOCK + (1 << 16)),
        }
    }

    /// Called once the stream is read to its end: with `needed`, completes the file (what
    /// was held written, then flushed) and reports any error writing it; without, drops what
    /// was held and ignores the file's errors (it is not read).
    pub fn finish(mut self, needed: bool) -> Result<()> {
        self.end(needed)
    }

    fn end(&mut self, needed: bool) -> Result<()> {
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        // A writer already gone failed, and says so when joined.
        let _ = self.tx.send(Message::Finish(needed));
        let written = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match written {
            Err(e) if needed => Err(Error::io(
                &Source::File(self.path.clone()),
                std::io::Error::new(
                    e.kind(),
                    format!("keeping a copy of the tool's stream: {e}"),
                ),
            )),
            _ => Ok(()),
        }
    }
}

impl Drop for StreamCopy {
    /// Not finished (an error on the way): the copy is complete as far as it goes, as when it
    /// was written inline.
    fn drop(&mut self) {
        let _ = self.end(true);
    }
}

/// The writer's loop: holds, then writes; after a failed write only drains the channel (so
/// the reader never blocks), and returns the error at the end.
fn write(
    mut file: File,
    rx: &Receiver<Message>,
    back: &SyncSender<Vec<u8>>,
) -> std::io::Result<()> {
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut held_bytes = 0;
    let mut writing = false;
    let mut failed = None;
    let put = |file: &mut File, b: &[u8], failed: &mut Option<std::io::Error>| {
        if failed.is_none()
            && let Err(e) = file.write_all(b)
        {
            *failed = Some(e);
        }
    };
    // The stream's senders gone without a finish (its reader dropped on an error): as needed.
    let mut needed = true;
    while let Ok(message) = rx.recv() {
        // A written block goes back to the tee (or, with enough there, is freed).
        let recycle = |mut b: Vec<u8>| {
            b.clear();
            let _ = back.try_send(b);
        };
        match message {
            Message::Data(b) if writing => {
                put(&mut file, &b, &mut failed);
                recycle(b);
            }
            Message::Data(b) => {
                held_bytes += b.len();
                held.push(b);
                if held_bytes > HELD {
                    writing = true;
                    for b in held.drain(..) {
                        put(&mut file, &b, &mut failed);
                        recycle(b);
                    }
                }
            }
            Message::Finish(n) => {
                needed = n;
                break;
            }
        }
    }
    if needed {
        for b in held.drain(..) {
            put(&mut file, &b, &mut failed);
        }
    }
    failed.map_or(Ok(()), Err)
}

/// The stream, what is read also sent to the copy's writer a block at a time.
pub(crate) struct Tee<R> {
    input: R,
    tx: SyncSender<Message>,
    back: Option<Receiver<Vec<u8>>>,
    /// Read, not yet sent.
    block: Vec<u8>,
}

impl<R> Tee<R> {
    fn send(&mut self) {
        if self.block.is_empty() {
            return;
        }
        let next = self
            .back
            .as_ref()
            .and_then(|b| b.try_recv().ok())
            .unwrap_or_else(|| Vec::with_capacity(BLOCK + (1 << 16)));
        let full = std::mem::replace(&mut self.block, next);
        // A writer gone (it panicked) reports it when finished.
        let _ = self.tx.send(Message::Data(full));
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        self.block.extend_from_slice(&buf[..n]);
        if n == 0 || self.block.len() >= BLOCK {
            self.send();
        }
        Ok(n)
    }
}

impl<R> Drop for Tee<R> {
    fn drop(&mut self) {
        self.send();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Reads `input` through the copy's tee in reads of at most `chunk` bytes.
    fn read_through(copy: &StreamCopy, input: &[u8], chunk: usize) -> Vec<u8> {
        let mut tee = copy.tee(input);
        let (mut out, mut buf) = (Vec::new(), vec![0; chunk]);
        loop {
            let n = tee.read(&mut buf).unwrap();
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn a_needed_copy_holds_the_stream_held_or_not() {
        let dir = tempfile::tempdir().unwrap();
        for (n, name) in [(1000, "small"), (HELD + 300_000, "large"), (0, "empty")] {
            let path = dir.path().join(name);
            let copy = StreamCopy::create(&path).unwrap();
            let input = bytes(n, 7);
            assert_eq!(read_through(&copy, &input, 65536), input);
            copy.finish(true).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), input, "{name}");
        }
    }

    #[test]
    fn a_copy_not_needed_is_written_only_past_what_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        let copy = StreamCopy::create(&small).unwrap();
        read_through(&copy, &bytes(HELD, 1), 65536);
        copy.finish(false).unwrap();
        assert_eq!(std::fs::metadata(&small).unwrap().len(), 0);
        // Past the bound it writes as it goes, all of it: the finish comes after the data.
        let large = dir.path().join("large");
        let copy = StreamCopy::create(&large).unwrap();
        let input = bytes(HELD + 200_000, 3);
        read_through(&copy, &input, 65536);
        copy.finish(false).unwrap();
        assert_eq!(std::fs::read(&large).unwrap(), input);
    }

    #[test]
    fn dropped_unfinished_it_completes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dropped");
        let copy = StreamCopy::create(&path).unwrap();
        let input = bytes(5000, 9);
        read_through(&copy, &input, 100);
        drop(copy);
        assert_eq!(std::fs::read(&path).unwrap(), input);
    }

    #[test]
    fn a_tee_dropped_before_the_end_hands_over_what_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut");
        let copy = StreamCopy::create(&path).unwrap();
        let input = bytes(3 * BLOCK, 5);
        let mut tee = copy.tee(input.as_slice());
        let mut buf = vec![0; 65536];
        let mut read = 0;
        // Past one block and into the next, not to the end.
        while read < BLOCK + 100_000 {
            read += tee.read(&mut buf).unwrap();
        }
        drop(tee);
        copy.finish(true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), input[..read]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_an_error_only_if_the_copy_is_needed() {
        // /dev/full fails every write with ENOSPC.
        for needed in [true, false] {
            let copy = StreamCopy::create(Path::new("/dev/full")).unwrap();
            read_through(&copy, &bytes(HELD + 70_000, 0), 65536);
            let result = copy.finish(needed);
            assert_eq!(result.is_err(), needed, "{result:?}");
            if let Err(e) = result {
                assert!(e.to_string().contains("keeping a copy"), "{e}");
            }
        }
    }
}
