//! The decoding loop: references into a [`Batch`] ([`AccessReader`]) or straight into a
//! native trace's blocks ([`ToolReader::write_native`]), escapes handled on the way.

use std::io::{Read, Write};

use super::{ARG_MASK, State, ToolReader};
use crate::access::ThreadId;
use crate::batch::{BATCH_LEN, Batch, CallOp};
use crate::error::{Result, corrupt, truncated};
use crate::record::tool_decode::{TAG_RUN, ToolItems, call_op, decode_run};
use crate::trace::native::InstrRuns;
use crate::trace::{AccessReader, Diagnostics, native};

/// Where [`ToolReader::read_into`] puts the references it decodes.
trait RunSink {
    /// How many more references it takes now.
    fn room(&self) -> usize;
    /// Takes the references at the start of `words` (whole words), runs of instructions
    /// expanded from `runs`, up to the first other escape (or its room); `pc` is the last
    /// instruction record's address, updated. Returns how many words and references.
    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)>;
    /// Makes the references taken from now on `thread`'s.
    fn set_thread(&mut self, thread: ThreadId);
    /// A call event of `thread`'s stack, before the next reference.
    fn call(&mut self, thread: ThreadId, op: CallOp) -> Result<()>;
}

impl RunSink for Batch {
    fn room(&self) -> usize {
        BATCH_LEN - self.len()
    }

    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)> {
        let before = self.len();
        let room = self.room();
        let done = decode_run(words, pc, runs, self, room);
        Ok((done, (self.len() - before) as u64))
    }

    fn set_thread(&mut self, thread: ThreadId) {
        Batch::set_thread(self, thread);
    }

    fn call(&mut self, thread: ThreadId, op: CallOp) -> Result<()> {
        self.push_call(thread, op);
        Ok(())
    }
}

/// Encodes references straight into a native trace's blocks, about `left` at a time.
struct NativeSink<'a, W: Write> {
    writer: &'a mut native::Writer<W>,
    left: usize,
}

impl<W: Write> RunSink for NativeSink<'_, W> {
    fn room(&self) -> usize {
        self.left
    }

    fn take_run(&mut self, words: &[u8], pc: &mut u64, runs: &InstrRuns) -> Result<(usize, u64)> {
        let mut items = ToolItems::new(words, pc, runs);
        self.writer.write_items(&mut items)?;
        let (words, records) = items.taken();
        self.left = self.left.saturating_sub(records as usize);
        Ok((words, records))
    }

    fn set_thread(&mut self, thread: ThreadId) {
        self.writer.set_thread(thread);
    }

    fn call(&mut self, thread: ThreadId, op: CallOp) -> Result<()> {
        self.writer.push_call(thread, op)
    }
}

impl<R: Read + Send> ToolReader<R> {
    /// Decodes references into `sink` until it is full or the stream ends; returns whether
    /// the stream ended. Escapes are handled on the way (events sent, runs defined, thread
    /// switches and the end record checked).
    fn read_into(&mut self, sink: &mut impl RunSink) -> Result<bool> {
        self.start()?;
        sink.set_thread(self.thread);
        while sink.room() > 0 {
            if self.state == State::Ended {
                if self.fill(1)? {
                    return Err(corrupt(&self.source, "words after the end record"));
                }
                self.read_children();
                return Ok(true);
            }
            if !self.fill(1)? {
                if self.len > self.pos {
                    return Err(truncated(&self.source, "the stream ends inside a record"));
                }
                if self.exec_seen || self.ended_in_child() {
                    self.read_children();
                    return Ok(true);
                }
                return Err(truncated(
                    &self.source,
                    "the record stream ended without its end record (Valgrind was killed or \
                     failed); the references before the cut are incomplete",
                ));
            }
            let n = self.available();
            let bytes = &self.buf[self.pos..self.pos + 8 * n];
            let (done, records) = sink.take_run(bytes, &mut self.pc, &self.runs)?;
            self.pos += 8 * done;
            self.words += done as u64;
            self.records += records;
            if done < n && sink.room() > 0 {
                let w = self.word(0);
                if w >> 60 == TAG_RUN && self.runs.get(w & ARG_MASK).is_some() {
                    // A run longer than the room left: the sink is full for now.
                    return Ok(false);
                }
                if let Some(op) = call_op(w) {
                    sink.call(self.thread, op)?;
                    self.pos += 8;
                    self.words += 1;
                    continue;
                }
                let execs = self.execs;
                self.escape(w)?;
                sink.set_thread(self.thread);
                if self.execs != execs && self.calls {
                    // A followed exec: the old program's frames are gone.
                    sink.call(self.thread, CallOp::Reset)?;
                }
            }
        }
        Ok(false)
    }

    /// Publishes the counts to the shared copy, if any.
    fn share_counts(&self) {
        if let Some(shared) = &self.shared {
            if let Ok(mut c) = shared.lock() {
                *c = self.counts();
            }
        }
    }

    /// Writes the rest of the stream into `writer`, each reference encoded straight from the
    /// tool's word into the writer's block: `record`'s path, which skips the batch columns
    /// every other reader fills (docs/recording.md). `progress` is told the references so
    /// far about every million. Stops with
    /// [`Error::Interrupted`](crate::error::Error::Interrupted) as a pass does.
    pub fn write_native<W: Write>(
        &mut self,
        writer: &mut native::Writer<W>,
        mut progress: impl FnMut(u64),
    ) -> Result<u64> {
        loop {
            crate::interrupt::check()?;
            let mut sink = NativeSink {
                writer: &mut *writer,
                left: 1 << 20,
            };
            let ended = self.read_into(&mut sink)?;
            self.share_counts();
            progress(self.records);
            if ended {
                return Ok(self.records);
            }
        }
    }
}

impl<R: Read + Send> AccessReader for ToolReader<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        self.read_into(batch)?;
        self.share_counts();
        Ok(batch.len())
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::default();
        d.notes.extend(self.fork_notes.iter().cloned());
        if self.exec_seen && self.state != State::Ended {
            d.notes.push(if self.follows_exec {
                "the program exec'd another program, which Valgrind could not follow: the \
                 trace stops at the exec"
                    .into()
            } else {
                super::EXEC_NOT_FOLLOWED.into()
            });
        }
        d
    }
}
