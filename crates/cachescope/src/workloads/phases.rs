//! `phases`: three behaviours with clearly different miss ratios, each run twice, in six
//! segments of equal length:
//!
//! | segment | phase  | what it does                                                  |
//! |---------|--------|---------------------------------------------------------------|
//! | 0, 3    | loop   | cyclic loop over ⌈`lines`/16⌉ lines (array L)                 |
//! | 1, 4    | stream | sequential 8-byte loads into fresh memory (array S, continues) |
//! | 2, 5    | random | uniform random lines over `lines` lines (array R)             |
//!
//! With R = `refs` (natural: 6 · 64 · `lines`), segments 0 to 4 are ⌊R/6⌋ references long and
//! segment 5 takes the rest. In an LRU cache of C lines with `lines`/16 ≤ C < `lines` the loop
//! misses only when it comes back cold, the stream misses `size/line_size` of its loads (1/8 with
//! 64-byte lines) and the random phase about 1 − C/`lines`. Each phase keeps its own loop body,
//! so instruction addresses change with the phase too. The arrays are L, R, then S (the stream
//! last, as it grows with R), page-aligned from 0x1000_0000 (line-aligned for larger lines).

use super::kernel::{Kernel, Refs, data_base, next_array};
use super::loops::Loop;
use super::params::Params;
use super::random::{Random, seeded};
use super::stream::{Sequential, sequential_size};

/// Segments: loop, stream, random, loop, stream, random.
const SEGMENTS: u64 = 6;

/// References per segment in the natural length, per line of the working set.
const SEGMENT_PER_LINE: u64 = 64;

/// Lines in the loop phase, relative to `lines`.
const LOOP_FRACTION: u64 = 16;

/// References in the natural length.
pub(super) fn phases_len(p: &Params) -> u128 {
    u128::from(SEGMENTS * SEGMENT_PER_LINE) * u128::from(p.lines)
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Phases {
    /// Length of segments 0 to 4.
    segment_len: u64,
    /// Current segment, `0..SEGMENTS`.
    segment: u64,
    /// References left in the current segment (unbounded in the last).
    left: u64,
    small_loop: Loop,
    stream: Sequential,
    random: Random,
}

impl Phases {
    /// The workload for a trace of `total` references.
    pub fn new(p: &Params, total: u64) -> Phases {
        let loop_lines = p.lines.div_ceil(LOOP_FRACTION);
        let loop_base = data_base(p.line_size);
        let random_base =
            next_array(loop_base, loop_lines * p.line_size).next_multiple_of(p.line_size);
        let stream_base =
            next_array(random_base, p.lines * p.line_size).next_multiple_of(p.line_size);
        let segment_len = total / SEGMENTS;
        let mut phases = Phases {
            segment_len,
            segment: 0,
            left: segment_len,
            small_loop: Loop::new(loop_base, loop_lines, p.line_size),
            stream: Sequential::new(stream_base, sequential_size(p)),
            random: Random::new(seeded(p.seed, 4), random_base, p.lines, p.line_size),
        };
        phases.skip_finished();
        phases
    }

    /// Moves past finished segments (and empty ones, when `refs` < 6).
    fn skip_finished(&mut self) {
        while self.left == 0 && self.segment + 1 < SEGMENTS {
            self.segment += 1;
            self.left = if self.segment + 1 == SEGMENTS {
                u64::MAX
            } else {
                self.segment_len
            };
        }
    }
}

impl Kernel for Phases {
    fn step(&mut self, out: &mut Refs) {
        out.limit(usize::try_from(self.left).unwrap_or(usize::MAX));
        match self.segment % 3 {
            0 => self.small_loop.step(out),
            1 => self.stream.step(out),
            _ => self.random.step(out),
        }
        self.left -= out.len() as u64;
        self.skip_finished();
    }
}
