//! [`NextUseSpill`]: each reference's next use, for the policies that look ahead (OPT).
//!
//! A forward pass gives every distinct line a dense id (a [`LineTable`] and an id → line table:
//! memory grows with distinct lines; the table's slots are prefetched a chunk of references at a
//! time, as the distance analyses do) and appends the reference's id, 4 bytes, to a temporary file
//! (a batch's ids in one write), so pipes, workloads and running programs work like files.
//! [`NextUseSpill::finish`] then reads that file backwards in blocks, computing each reference's
//! next use (the time index of the next reference to the same line, `u64::MAX` for none) with one
//! table of the last time seen per id, and writes them, block by block from the end, to a second
//! file: 4 bytes each while every time fits in a `u32` (traces of fewer than 2^32 − 1 references),
//! else 8. [`Spilled::for_each`] reads both forward (the second one block-reversed). Disk: 8 bytes
//! per counted reference (12 beyond 2^32 − 1 references), in the system's temporary directory, so
//! the kernel copies a third less than with 8-byte times; memory: the tables and two blocks.
//! Each "file" stays in memory while it is under 16 MiB ([`super::store`]): up to 4 Mi
//! references never reach the disk.

use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::reuse::table::LineTable;
use crate::reuse::{Options, for_each_chunk};
use crate::spatial::Forgetting;
use crate::stages::Stage;

use super::ids::SpilledIds;
use super::store::{MEMORY_BYTES, Sink, Store};

/// References per block of the backward pass.
pub(super) const BLOCK: usize = 1 << 16;

/// The forward half: dense ids spilled to a temporary file; see the module documentation.
#[derive(Debug)]
pub struct NextUseSpill {
    options: Options,
    /// Line → its id, without the lines a sampled stream dropped (swept as [`Forgetting`]
    /// says): they never come back, and the ids of the others do not change.
    id_of: LineTable,
    forgetting: Forgetting,
    lines: Vec<u64>,
    ids: Sink,
    /// A batch's ids, encoded, for one write.
    encoded: Vec<u8>,
    refs: u64,
    error: Option<Error>,
}

/// A spilled trace with each reference's next use.
#[derive(Debug)]
pub struct Spilled {
    /// The line of each id.
    pub lines: Vec<u64>,
    refs: u64,
    /// Bytes per next use in `next`: 4 (`u32::MAX` for none) or 8.
    width: usize,
    ids: Store,
    next: Store,
}

pub(super) fn io(err: std::io::Error) -> Error {
    Error::Io {
        source_name: Source::File(std::env::temp_dir()),
        err,
    }
}

impl NextUseSpill {
    /// An empty spill of the references `options` counts, in memory until it outgrows
    /// 16 MiB, then in a temporary file (a failure to make one is returned by
    /// [`NextUseSpill::finish`]).
    pub fn new(options: Options) -> Result<NextUseSpill> {
        Ok(NextUseSpill::with_sink(options, Sink::memory(MEMORY_BYTES)))
    }

    /// An empty spill to `file`.
    #[cfg(test)]
    fn with_file(options: Options, file: std::fs::File) -> NextUseSpill {
        NextUseSpill::with_sink(options, Sink::file(file))
    }

    fn with_sink(options: Options, ids: Sink) -> NextUseSpill {
        NextUseSpill {
            options,
            id_of: LineTable::default(),
            forgetting: Forgetting::default(),
            lines: Vec::new(),
            ids,
            encoded: Vec::new(),
            refs: 0,
            error: None,
        }
    }

    /// Counted references so far.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// The ids spilled so far, read through a second handle of the file or a share of the
    /// memory (positioned reads: they can be read on another thread while
    /// [`NextUseSpill::finish`] runs), for analyses
    /// that run on line numbers after the pass (random replacement in the report).
    pub fn ids(&mut self) -> Result<SpilledIds> {
        if let Some(e) = self.error.take() {
            // The caller gets the error itself; a later `finish` must still fail.
            self.error = Some(Error::InvalidParameter {
                name: "OPT's spill",
                message: "the forward pass failed (reported before)".into(),
            });
            return Err(e);
        }
        Ok(SpilledIds::new(self.ids.reader()?, self.refs))
    }

    /// The backward pass: every reference's next use. Reports a write error of the forward
    /// pass here.
    pub fn finish(self) -> Result<Spilled> {
        self.finish_staged(None)
    }

    /// [`NextUseSpill::finish`], counting the references passed on `stage`.
    pub fn finish_staged(self, stage: Option<&Stage>) -> Result<Spilled> {
        let wide = self.refs >= u64::from(u32::MAX);
        self.finish_as(wide, stage)
    }

    /// [`NextUseSpill::finish_staged`] with next uses written in 8 bytes (`wide`) or 4.
    pub(super) fn finish_as(self, wide: bool, stage: Option<&Stage>) -> Result<Spilled> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let ids = self.ids.into_store()?;
        let mut next = Sink::memory(MEMORY_BYTES);
        let n = self.refs;
        if let Some(s) = stage {
            s.start(n);
        }
        let blocks = n.div_ceil(BLOCK as u64);
        let mut buf = vec![0u8; BLOCK * 4];
        let w = if wide { 8 } else { 4 };
        // The last time seen per id, in the width written: half the memory, so fewer cache
        // misses in this table read at random, while times fit in 4 bytes.
        let (mut last64, mut last32) = match wide {
            true => (vec![u64::MAX; self.lines.len()], Vec::new()),
            false => (Vec::new(), vec![u32::MAX; self.lines.len()]),
        };
        // A block's next uses, encoded in place, then written with one call.
        let mut out = vec![0u8; BLOCK * w];
        for b in (0..blocks).rev() {
            let start = b * BLOCK as u64;
            let len = (n - start).min(BLOCK as u64) as usize;
            ids.read_exact_at(&mut buf[..len * 4], start * 4)?;
            let block = &buf[..len * 4];
            if wide {
                backward(block, start, &mut last64, &mut out[..len * 8], |t| t);
            } else {
                // No time reaches u32::MAX − 1: fewer references than that.
                backward(block, start, &mut last32, &mut out[..len * 4], |t| t as u32);
            }
            next.write_all(&out[..len * w])?;
            if let Some(s) = stage {
                s.add(len as u64);
            }
        }
        if let Some(s) = stage {
            s.finish();
        }
        Ok(Spilled {
            lines: self.lines,
            refs: n,
            width: w,
            ids,
            next: next.into_store()?,
        })
    }
}

/// One block of the backward pass: the block's references (`ids`, 4 bytes each, the first at
/// time `start`) from the last, each one's next use taken from `last` (which then gets its
/// own time) and encoded in `out`. The entry a reference reads is prefetched a few
/// references earlier: ids are spread over the table as their lines are over memory.
fn backward<T: Copy + Into<u64>>(
    ids: &[u8],
    start: u64,
    last: &mut [T],
    out: &mut [u8],
    time: impl Fn(u64) -> T,
) {
    const AHEAD: usize = 16;
    let id =
        |k: usize| u32::from_le_bytes(ids[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
    let w = std::mem::size_of::<T>();
    for (k, o) in out.chunks_exact_mut(w).enumerate().rev() {
        if k >= AHEAD {
            crate::prefetch::prefetch(&last[id(k - AHEAD)]);
        }
        let t = std::mem::replace(&mut last[id(k)], time(start + k as u64));
        // Little-endian: the first `w` bytes of the 8 are the time in `w` bytes.
        o.copy_from_slice(&t.into().to_le_bytes()[..w]);
    }
}

#[cfg(test)]
impl NextUseSpill {
    /// Lines the line → id table holds (the tests' bound on it).
    pub(crate) fn held_lines(&self) -> usize {
        self.id_of.len()
    }

    /// Keeps every line (the tests' reference).
    pub(crate) fn never_forget(mut self) -> NextUseSpill {
        self.forgetting = Forgetting::never();
        self
    }
}

impl Analysis for NextUseSpill {
    fn observe(&mut self, batch: &Batch) {
        if self.error.is_some() {
            return;
        }
        let (id_of, lines, encoded) = (&mut self.id_of, &mut self.lines, &mut self.encoded);
        encoded.clear();
        let mut too_many = false;
        // The line and id of the reference before: a line referenced again at once (most of a
        // sampled stream's references where a stack line is sampled) is not looked up again.
        let mut last: Option<(u64, u64)> = None;
        for_each_chunk(batch, &self.options, |chunk| {
            if too_many {
                return;
            }
            // The chunk's slots first, so that their cache misses overlap.
            for &l in chunk {
                id_of.prefetch(l);
            }
            for &l in chunk {
                if let Some((last_line, id)) = last
                    && last_line == l
                {
                    encoded.extend_from_slice(&(id as u32).to_le_bytes());
                    continue;
                }
                let next_id = lines.len() as u64;
                let id = match id_of.get_or_insert(l, next_id) {
                    Some(id) => id,
                    // Ids are u32, and u32::MAX is left free.
                    None if next_id >= u64::from(u32::MAX) => {
                        too_many = true;
                        return;
                    }
                    None => {
                        lines.push(l);
                        next_id
                    }
                };
                encoded.extend_from_slice(&(id as u32).to_le_bytes());
                last = Some((l, id));
            }
        });
        if too_many {
            self.error = Some(Error::InvalidParameter {
                name: "distinct lines",
                message: "more than 2^32 − 1 distinct lines: too many to look ahead over".into(),
            });
        } else if let Err(e) = self.ids.write_all(encoded) {
            self.error = Some(e);
        } else {
            self.refs += encoded.len() as u64 / 4;
        }
        if let Some(s) = batch.sampling() {
            let (hash, limit) = (s.hash(), s.limit());
            if self.forgetting.due(limit, self.id_of.len()) {
                self.id_of.retain(|line, _| limit.admits(hash.of(line)));
                self.forgetting.swept(limit, self.id_of.len());
            }
        }
    }
}

impl Spilled {
    /// Counted references.
    pub fn refs(&self) -> u64 {
        self.refs
    }

    /// Calls `f(id, next_use)` for every reference in trace order; `next_use` is the time
    /// index of the line's next reference, `u64::MAX` for none.
    pub fn for_each(&mut self, mut f: impl FnMut(u32, u64)) -> Result<()> {
        self.for_each_block(|ids, next| ids.iter().zip(next).for_each(|(&i, &n)| f(i, n)))
    }

    /// Calls `f(ids, next_uses)` for consecutive blocks of references in trace order, each
    /// reference's id and next use (as in [`Spilled::for_each`]) at the same index.
    pub fn for_each_block(&mut self, mut f: impl FnMut(&[u32], &[u64])) -> Result<()> {
        let n = self.refs;
        let blocks = n.div_ceil(BLOCK as u64);
        let w = self.width;
        let (mut ibuf, mut nbuf) = (vec![0u8; BLOCK * 4], vec![0u8; BLOCK * w]);
        let (mut ids, mut next) = (Vec::with_capacity(BLOCK), Vec::with_capacity(BLOCK));
        for b in 0..blocks {
            let start = b * BLOCK as u64;
            let len = (n - start).min(BLOCK as u64) as usize;
            self.ids.read_exact_at(&mut ibuf[..len * 4], start * 4)?;
            // Block b was written after every later block: it starts where they end.
            let later = n - start - len as u64;
            self.next
                .read_exact_at(&mut nbuf[..len * w], later * w as u64)?;
            ids.clear();
            ids.extend(
                ibuf[..len * 4]
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))),
            );
            next.clear();
            if w == 8 {
                next.extend(
                    nbuf[..len * 8]
                        .chunks_exact(8)
                        .map(|t| u64::from_le_bytes(t.try_into().expect("8 bytes"))),
                );
            } else {
                next.extend(nbuf[..len * 4].chunks_exact(4).map(|t| {
                    match u32::from_le_bytes(t.try_into().expect("4 bytes")) {
                        u32::MAX => u64::MAX,
                        t => u64::from(t),
                    }
                }));
            }
            f(&ids, &next);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;

    #[test]
    fn a_write_error_is_returned_as_it_is_and_finish_still_fails() {
        // A handle opened read-only: every write fails.
        let file = std::fs::File::open("/dev/null").unwrap();
        let mut spill = NextUseSpill::with_file(Options::default(), file);
        // More ids than the 1 MiB buffer holds, so the write reaches the file.
        let batch: Batch = (0..300_000u64)
            .map(|i| Access::load(i % 1000 * 64, 4))
            .collect();
        spill.observe(&batch);
        assert!(matches!(spill.ids(), Err(Error::Io { .. })));
        assert!(matches!(spill.ids(), Err(Error::InvalidParameter { .. })));
        assert!(spill.finish().is_err());
    }
}
