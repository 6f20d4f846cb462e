//! [`BlockCompressor`]: zstd-compresses a writer's blocks on a helper thread, up to [`DEPTH`]
//! blocks behind the encoder.
//!
//! Compressing a block costs about as much as encoding it, so a writer that did both in turn
//! kept one core busy while `record`'s other core waited. The writer hands each encoded block
//! here (its column buffers, swapped out) and encodes the next while this one is laid out and
//! compressed; it collects the results in order and writes them, so blocks reach the output
//! in order and the bytes are the same as compressing inline. Where no thread can be started,
//! blocks are compressed inline.

use std::collections::VecDeque;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, bounded};

use super::encode::Columns;

/// Blocks handed over and not yet collected, at most. With one, the encoder and this thread
/// went in lockstep, block by block: whichever was slower on a block held the other up, and
/// under `record` the program's own thread took turns on their cores. A few blocks of slack let
/// each go at its own mean pace (`record -- bzip2 -9`, docs/recording.md).
pub(super) const DEPTH: usize = 3;

/// An encoded block and what became of it.
#[derive(Debug, Default)]
pub(super) struct Job {
    /// The block's columns as the encoder handed them over.
    pub block: Columns,
    /// The block laid out (by the compressing thread: a copy of the whole block, a fifth of
    /// `record`'s encoding thread when it was done there).
    pub raw: Vec<u8>,
    /// Its zstd frame, when `zstd_ok`.
    pub comp: Vec<u8>,
    /// True when zstd shrank the block by at least 1/8. Below that the block is mostly noise,
    /// which zstd can only Huffman-code, and decoding that is several times slower than
    /// copying a stored block.
    pub zstd_ok: bool,
}

/// Compresses one block at a time, on a helper thread when one could be started.
pub(super) enum BlockCompressor {
    Thread {
        jobs: Option<Sender<Job>>,
        done: Receiver<Job>,
        handle: Option<JoinHandle<()>>,
    },
    Inline {
        cctx: Box<zstd::bulk::Compressor<'static>>,
        done: VecDeque<Job>,
    },
}

impl BlockCompressor {
    /// A compressor at zstd level `level`; the context is made here so a bad level is
    /// reported by the writer's constructor.
    pub fn new(level: i32) -> std::io::Result<Self> {
        let mut cctx = zstd::bulk::Compressor::new(level)?;
        let (jobs, inbox) = bounded::<Job>(DEPTH);
        let (outbox, done) = bounded::<Job>(DEPTH);
        let spawned = std::thread::Builder::new()
            .name("cachescope-zstd".into())
            .spawn(move || {
                while let Ok(mut job) = inbox.recv() {
                    compress(&mut cctx, &mut job);
                    if outbox.send(job).is_err() {
                        break;
                    }
                }
            });
        Ok(match spawned {
            Ok(handle) => BlockCompressor::Thread {
                jobs: Some(jobs),
                done,
                handle: Some(handle),
            },
            Err(_) => BlockCompressor::Inline {
                cctx: Box::new(zstd::bulk::Compressor::new(level)?),
                done: VecDeque::new(),
            },
        })
    }

    /// Starts compressing `job`; at most [`DEPTH`] jobs may be uncollected.
    pub fn submit(&mut self, mut job: Job) {
        match self {
            BlockCompressor::Thread { jobs, .. } => {
                let sent = jobs.as_ref().is_some_and(|tx| tx.send(job).is_ok());
                debug_assert!(sent, "the zstd thread is gone");
            }
            BlockCompressor::Inline { cctx, done } => {
                compress(cctx, &mut job);
                done.push_back(job);
            }
        }
    }

    /// The oldest job uncollected, compressed; `None` if there is none or the thread died
    /// (it cannot panic short of running out of memory), which the writer reports.
    pub fn collect(&mut self) -> Option<Job> {
        match self {
            BlockCompressor::Thread { done, .. } => done.recv().ok(),
            BlockCompressor::Inline { done, .. } => done.pop_front(),
        }
    }
}

impl Drop for BlockCompressor {
    fn drop(&mut self) {
        if let BlockCompressor::Thread { jobs, handle, .. } = self {
            // Closing the job channel ends the thread's loop.
            jobs.take();
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        }
    }
}

fn compress(cctx: &mut zstd::bulk::Compressor<'static>, job: &mut Job) {
    job.raw.clear();
    job.block.lay_out(&mut job.raw);
    job.comp.clear();
    job.comp
        .reserve(zstd::zstd_safe::compress_bound(job.raw.len()));
    let compressed = cctx.compress_to_buffer(&job.raw[..], &mut job.comp);
    job.zstd_ok = compressed.is_ok_and(|len| len < job.raw.len() - job.raw.len() / 8);
}
