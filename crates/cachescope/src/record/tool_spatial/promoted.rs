//! The tool's promoted lines (header bit 20, `cs_share.c`): once a second thread has run, a
//! line written by two threads is promoted past the tool's filter, and every reference to it
//! comes as a sample record whose reference word has bit 60 set; a *note* (bit 61) before the
//! promoting reference names the line, the thread that wrote it before (the tag's argument),
//! the bytes that thread wrote and the instruction of its first write there; a *summary*
//! (bit 62) before the end gives the tool's table. A reader leaves the promoted references
//! out of its batches (their counts advance the position as any sample's do), so the
//! sampled stream is the same with or without them, unless asked for them
//! ([`AccessReader::pass_promoted`](crate::trace::AccessReader::pass_promoted), the sharing
//! table's read): then they pass, each after its note the writer before's bytes as stores of
//! that thread, so the line's kind is known even if that writer never touches it again.

use std::io::Read;
use std::sync::{Arc, Mutex};

use super::{ARG_MASK, FULL, Pending, SpatialReader};
use crate::access::{AccessKind, ThreadId};
use crate::batch::Batch;
use crate::error::Result;
use crate::record::tool_decode::address;
use crate::spatial::promoted::Promoted;

/// The header's flag.
pub(super) const PROMOTION: u64 = 1 << 20;
const PROMOTED: u64 = 1 << 60;
const NOTE: u64 = 1 << 61;
const SUMMARY: u64 = 1 << 62;

/// What the reader knows of the promoted lines.
#[derive(Debug, Default)]
pub(super) struct Promotions {
    /// The stream has them (its header's bit 20).
    pub(super) on: bool,
    /// Asked for: the lines, and their references in the batches.
    lines: Option<Arc<Mutex<Promoted>>>,
    /// The line the last note promoted: the next sample record is its promoting reference.
    awaiting: Option<u64>,
}

impl Promotions {
    /// From now on the promoted references pass; the lines go into the handle.
    pub(super) fn pass(&mut self) -> Option<Arc<Mutex<Promoted>>> {
        if !self.on {
            return None;
        }
        Some(self.lines.get_or_insert_with(Default::default).clone())
    }

    /// Whether `line` is promoted and its references pass.
    fn passes(&self, line: u64) -> bool {
        self.lines
            .as_ref()
            .is_some_and(|l| l.lock().is_ok_and(|l| l.lines.contains_key(&line)))
    }

    /// A sample record at `data` references of `line`: the promoting reference after a note.
    /// Inline: every sample record asks, and almost none awaits a promotion.
    #[inline]
    pub(super) fn reached(&mut self, line: u64, data: u64) {
        if self.awaiting == Some(line) {
            self.promote(line, data);
        }
    }

    #[cold]
    fn promote(&mut self, line: u64, data: u64) {
        self.awaiting = None;
        if let Some(lines) = &self.lines
            && let Ok(mut l) = lines.lock()
        {
            l.lines.insert(line, data);
        }
    }
}

impl<R: Read + Send> SpatialReader<R> {
    /// A sample record whose reference word `word` has one of bits 60-62 (`arg` the tag's
    /// argument, `more` the next word); true when it ends the batch.
    pub(super) fn promotion_record(
        &mut self,
        arg: u64,
        word: u64,
        more: u64,
        out: &mut Batch,
    ) -> Result<bool> {
        let shift = self.options.line_size.shift();
        match word >> 60 << 60 {
            PROMOTED if (word >> 58) & 3 != 3 => {
                self.add_delta(more);
                let line = address(word) >> shift;
                let (data, instrs) = self.counts();
                self.promotions.reached(line, data);
                if self.promotions.passes(line) {
                    let s = Pending {
                        pc: arg,
                        word: word & !PROMOTED,
                        hash: 0,
                        thread: self.thread,
                        data,
                        instrs,
                        promoted: true,
                    };
                    return Ok(self.hold_or_keep(s, out));
                }
            }
            NOTE => {
                let [pc] = self.words.array("a promotion's instruction")?;
                let line = (word & ARG_MASK) >> shift;
                self.promotions.awaiting = Some(line);
                let Some(lines) = &self.promotions.lines else {
                    return Ok(false);
                };
                let (data, instrs) = self.counts();
                let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
                l.lines.insert(line, data);
                l.before.insert(line, arg as ThreadId);
                drop(l);
                let hash = self.filter.hash().of(line);
                if !self.filter.limit().admits(hash) {
                    let place = (data, instrs);
                    first_writer(
                        out,
                        (line << shift, self.options.line_size.bytes()),
                        arg,
                        more,
                        pc,
                        place,
                    );
                }
            }
            SUMMARY => {
                if let Some(lines) = &self.promotions.lines {
                    let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
                    (l.table_lines, l.max_lines) = (more >> 32, more & 0xFFFF_FFFF);
                    (l.evicted, l.dropped) = (word & ARG_MASK, arg);
                }
            }
            _ => return Err(self.words.corrupt(format!("a sample holding {word:#018x}"))),
        }
        Ok(false)
    }

    /// A sample the filter does not admit, of the line of `word`: passed as a promoted
    /// line's reference if that line is promoted (the tool's limit lags the filter's).
    pub(super) fn outside(&mut self, pc: u64, word: u64, out: &mut Batch) -> bool {
        let line = address(word) >> self.options.line_size.shift();
        if !self.promotions.passes(line) {
            return false;
        }
        let (data, instrs) = self.counts();
        let s = Pending {
            pc,
            word,
            hash: 0,
            thread: self.thread,
            data,
            instrs,
            promoted: true,
        };
        self.hold_or_keep(s, out)
    }

    /// `s` into `out`, or held for the next batch when `out` is full (true).
    fn hold_or_keep(&mut self, s: Pending, out: &mut Batch) -> bool {
        if out.len() >= FULL {
            self.pending = Some(s);
            return true;
        }
        self.keep(s, out);
        false
    }

    /// At the end: which promoted lines the sample holds.
    pub(super) fn promotions_end(&mut self) {
        if let Some(lines) = &self.promotions.lines {
            let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
            let (hash, limit) = (self.filter.hash(), self.filter.limit());
            let sampled = l
                .lines
                .keys()
                .copied()
                .filter(|&line| limit.admits(hash.of(line)))
                .collect();
            l.sampled = sampled;
        }
    }
}

/// The bytes `bytes` (a mask of `line`'s granules, `line` its first byte and size) that
/// `thread` wrote before the promoting write, as its stores at `pc`, one per run of bytes,
/// placed at `place` (data references and instructions before).
fn first_writer(
    out: &mut Batch,
    (line, size): (u64, u64),
    thread: u64,
    bytes: u64,
    pc: u64,
    (data, instrs): (u64, u64),
) {
    let granule = (size / 64).max(1);
    let mut rest = bytes;
    while rest != 0 {
        let lo = u64::from(rest.trailing_zeros());
        let width = u64::from((rest >> lo).trailing_ones());
        rest &= !((((1u128 << width) - 1) as u64) << lo);
        out.set_thread(thread as ThreadId);
        let (addr, n) = (line + lo * granule, (width * granule) as u32);
        out.push_sampled(addr, n, AccessKind::Store, pc, data, instrs);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SPATIAL, TAG_END, TAG_HEADER, TAG_SAMPLE, TAG_THREAD};
    use super::*;
    use crate::error::Source;
    use crate::spatial::{SpatialFilter, SpatialOptions};
    use crate::trace::AccessReader;

    /// The sampling hash's first line from `from` that `options` admits or not.
    fn line_where(options: &SpatialOptions, admitted: bool, from: u64) -> u64 {
        let f = SpatialFilter::new(options).unwrap();
        (from..)
            .find(|&l| f.limit().admits(f.hash().of(l)) == admitted)
            .unwrap()
    }

    /// A stream: a sample of line `s` by thread 1, a note that thread 1 wrote bytes 0-7 of
    /// line `p` at 0x40_0100, thread 2's promoted store to bytes 8-15, the summary, the end.
    fn stream(s: u64, p: u64) -> Vec<u8> {
        let header = (TAG_HEADER << 60) | SPATIAL | PROMOTION | crate::record::tool::VERSION;
        let mut w = vec![header];
        let store = |addr: u64| addr | 8 << 48 | 1 << 58;
        w.extend([(TAG_SAMPLE << 60) | 0x40_0000, store(s * 64), 1 << 48]);
        w.extend([(TAG_SAMPLE << 60) | 1, NOTE | (p * 64), 0xFF, 0x40_0100]);
        w.push((TAG_THREAD << 60) | 2);
        let delta = 3 << 16 | 4 << 48;
        w.extend([
            (TAG_SAMPLE << 60) | 0x40_0200,
            PROMOTED | store(p * 64 + 8),
            delta,
        ]);
        w.extend([TAG_SAMPLE << 60, SUMMARY | 2, 1 << 48 | 4096]);
        let n = w.len() as u64;
        w.push((TAG_END << 60) | n);
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Every access read: (thread, address, size, kind, pc, data before).
    type Read = Vec<(ThreadId, u64, u32, AccessKind, Option<u64>, u64)>;

    fn read(input: &[u8], options: SpatialOptions, pass: bool) -> (Read, Option<Promoted>) {
        let mut r = SpatialReader::new(input, Source::Stdin, options, None).unwrap();
        let lines = if pass { r.pass_promoted() } else { None };
        let (mut b, mut got) = (Batch::new(), Vec::new());
        while r.read_batch(&mut b).unwrap() > 0 {
            let data = &b.sampling().unwrap().data_before;
            for (i, (t, a)) in b.iter_threaded().enumerate() {
                got.push((t, a.addr, a.size, a.kind, a.pc, data[i]));
            }
        }
        assert_eq!(r.counts(), (3, 5));
        (got, lines.map(|l| l.lock().unwrap().clone()))
    }

    #[test]
    fn promoted_references_pass_only_when_asked_for_after_the_writer_befores_bytes() {
        let options = SpatialOptions {
            rate: 0.01,
            max_lines: None,
            ..SpatialOptions::default()
        };
        let (s, p) = (
            line_where(&options, true, 1),
            line_where(&options, false, 1),
        );
        let input = stream(s, p);
        let sample = (1, s * 64, 8, AccessKind::Store, Some(0x40_0000), 0);
        // Not asked for: the sampled stream alone, the counts advanced past the promoted.
        let (got, lines) = read(&input, options, false);
        assert_eq!(got, [sample]);
        assert_eq!(lines, None);
        // Asked for: thread 1's bytes as its store, then thread 2's.
        let (got, lines) = read(&input, options, true);
        assert_eq!(
            got,
            [
                sample,
                (1, p * 64, 8, AccessKind::Store, Some(0x40_0100), 0),
                (2, p * 64 + 8, 8, AccessKind::Store, Some(0x40_0200), 3),
            ]
        );
        let l = lines.unwrap();
        assert_eq!(
            l.lines.get(&p),
            Some(&3),
            "the data references before the write"
        );
        assert_eq!(l.lines.len(), 1);
        assert_eq!(l.before.get(&p), Some(&1));
        assert!(l.sampled.is_empty());
        let summary = (l.table_lines, l.evicted, l.dropped, l.max_lines);
        assert_eq!(summary, (65536, 2, 0, 4096));
    }

    #[test]
    fn a_promotion_record_in_a_stream_without_them_is_refused() {
        let input = stream(1, 2);
        let mut words: Vec<u64> = input
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        words[0] &= !PROMOTION;
        let bytes: Vec<u8> = words.iter().flat_map(|x| x.to_le_bytes()).collect();
        let options = SpatialOptions {
            rate: 1.0,
            max_lines: None,
            ..SpatialOptions::default()
        };
        let mut r = SpatialReader::new(&bytes[..], Source::Stdin, options, None).unwrap();
        let mut b = Batch::new();
        let e = r.read_batch(&mut b).unwrap_err().to_string();
        assert!(e.contains("a sample holding"), "{e}");
    }

    #[test]
    fn a_writers_bytes_become_one_store_per_run() {
        let mut b = Batch::new();
        b.start_sampled(
            crate::spatial::SpatialOptions::default().hash(),
            crate::spatial::Limit(u64::MAX),
        );
        // Bytes 0-7 and 16-19 of the line at 0x1000; then every byte of a 128-byte line.
        first_writer(&mut b, (0x1000, 64), 3, 0xFF | 0xF << 16, 0x40_0000, (5, 9));
        first_writer(&mut b, (0x2000, 128), 4, u64::MAX, 0x40_0004, (6, 9));
        let got: Vec<_> = b
            .iter_threaded()
            .map(|(t, a)| (t, a.addr, a.size, a.kind, a.pc))
            .collect();
        assert_eq!(
            got,
            [
                (3, 0x1000, 8, AccessKind::Store, Some(0x40_0000)),
                (3, 0x1010, 4, AccessKind::Store, Some(0x40_0000)),
                (4, 0x2000, 128, AccessKind::Store, Some(0x40_0004)),
            ]
        );
        assert_eq!(b.sampling().unwrap().data_before, [5, 5, 6]);
    }
}
