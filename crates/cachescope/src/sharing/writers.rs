//! [`Writers`]: a fixed-size table of the lines written lately, each with its last writing
//! thread and the bytes that thread wrote, that says when a second thread writes a line: what
//! finds the lines two or more threads write in a stream whose lines are sampled
//! ([`super::promote`]). Its memory is fixed whatever the footprint.
//!
//! The table is set-associative ([`WAYS`] ways, most recent first): a written line that is not
//! in its set replaces the set's least recently written one. What a collision loses is that
//! line's last writer: if another thread writes it later, the table takes it for a first
//! write and finds the line only at the next write by a thread other than that one. So every
//! line written by two threads is found as long as its set does not overflow between two
//! writes by different threads; the replaced entries are counted ([`Writers::evicted`]).

use crate::access::ThreadId;
use crate::spatial::mix;

/// Ways of a set.
pub const WAYS: usize = 4;

/// Default sets: 2^16 × 4 ways = 262,144 lines written lately, 6 MiB.
pub const DEFAULT_SETS_LOG2: u32 = 16;

/// Keys the set index apart from the sampling hash (whose small values are the sampled lines).
const SALT: u64 = 0x5bd1_e995_c0ff_ee11;

/// One line's last writer.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The line, or [`EMPTY`].
    line: u64,
    thread: ThreadId,
    /// The bytes `thread` wrote since it became the last writer (a byte-mask granule per bit).
    bytes: u64,
}

const EMPTY: u64 = u64::MAX;

/// A second thread's write to a line, as [`Writers::write`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SecondWriter {
    /// The thread that wrote the line before.
    pub before: ThreadId,
    /// Whether the two threads' written bytes overlap (a candidate for true sharing) or not
    /// (for false sharing).
    pub overlap: bool,
}

/// The table; see the module doc.
#[derive(Debug)]
pub struct Writers {
    entries: Vec<Entry>,
    sets_log2: u32,
    evicted: u64,
}

impl Writers {
    /// A table of 2^`sets_log2` sets of [`WAYS`] lines (`sets_log2` at most 30).
    pub fn new(sets_log2: u32) -> Writers {
        let sets_log2 = sets_log2.min(30);
        let empty = Entry {
            line: EMPTY,
            thread: 0,
            bytes: 0,
        };
        Writers {
            entries: vec![empty; WAYS << sets_log2],
            sets_log2,
            evicted: 0,
        }
    }

    /// The set of `line`: its index among the 2^`sets_log2` sets (also what
    /// [`super::promote`] keys its bitmap with).
    #[inline]
    pub fn set_of(line: u64, sets_log2: u32) -> usize {
        if sets_log2 == 0 {
            return 0;
        }
        (mix(line ^ SALT) >> (64 - sets_log2)) as usize
    }

    /// Records `thread`'s write of `bytes` of `line`; says so when another thread wrote it
    /// last (the table then holds `thread` as its last writer, with these bytes).
    #[inline]
    pub fn write(&mut self, line: u64, thread: ThreadId, bytes: u64) -> Option<SecondWriter> {
        let start = Writers::set_of(line, self.sets_log2) * WAYS;
        let set = &mut self.entries[start..start + WAYS];
        let way = set.iter().position(|e| e.line == line);
        let mut found = None;
        let at = match way {
            Some(w) => {
                let e = &mut set[w];
                if e.thread == thread {
                    e.bytes |= bytes;
                } else {
                    found = Some(SecondWriter {
                        before: e.thread,
                        overlap: e.bytes & bytes != 0,
                    });
                    (e.thread, e.bytes) = (thread, bytes);
                }
                w
            }
            None => {
                let last = WAYS - 1;
                if set[last].line != EMPTY {
                    self.evicted += 1;
                }
                set[last] = Entry {
                    line,
                    thread,
                    bytes,
                };
                last
            }
        };
        // Most recently written first.
        set[..=at].rotate_right(1);
        found
    }

    /// Lines the table can hold.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Written lines replaced by another line of their set (each one's last writer lost).
    pub fn evicted(&self) -> u64 {
        self.evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_reported_with_the_overlap_of_their_bytes() {
        let mut w = Writers::new(4);
        assert_eq!(w.write(7, 1, 0b0011), None);
        assert_eq!(w.write(7, 1, 0b0100), None, "the same thread again");
        assert_eq!(
            w.write(7, 2, 0b1000),
            Some(SecondWriter {
                before: 1,
                overlap: false
            })
        );
        // Thread 2 is the last writer now, with its bytes only.
        assert_eq!(
            w.write(7, 1, 0b1000),
            Some(SecondWriter {
                before: 2,
                overlap: true
            })
        );
        assert_eq!(w.evicted(), 0);
    }

    #[test]
    fn a_full_set_loses_its_least_recently_written_line() {
        // One set: five lines into four ways.
        let mut w = Writers::new(0);
        for line in 0..5 {
            assert_eq!(w.write(line, 1, 1), None);
        }
        assert_eq!(w.evicted(), 1);
        // Line 0 was replaced: thread 2's write looks like a first write.
        assert_eq!(w.write(0, 2, 1), None);
        // Lines 2-4 kept their writer (line 1 left for line 0).
        for line in 2..5 {
            assert!(w.write(line, 2, 1).is_some(), "line {line}");
        }
        assert_eq!(w.capacity(), WAYS);
    }
}
