//! `loop`: a cyclic loop over K = `lines` lines, one load of `min(8, line_size)` bytes at the
//! start of each line, lines in address order, over and over.
//!
//! Its answer is known exactly. Every reuse has stack distance K − 1, so a fully-associative
//! LRU cache of fewer than K lines misses every reference (each line was evicted one reference
//! before it comes back), and one of K lines or more misses only the K cold references of the
//! first pass. Its natural length is [`PASSES`] passes, `256·K` loads.

use super::kernel::{Code, Kernel, Refs, data_base};
use super::params::Params;
use crate::access::AccessKind;

/// Passes over the loop in the natural length: enough that cold misses are under 0.4 %.
pub(super) const PASSES: u64 = 256;

/// `for (;;) for (i = 0; i < K; i++) sum += a[i * LINE / 8];`
pub(super) const LOOP_CODE: Code = Code {
    start: 0x40_1200,
    len: 5,
};

/// Loads in [`PASSES`] passes.
pub(super) fn loop_len(p: &Params) -> u128 {
    u128::from(PASSES) * u128::from(p.lines)
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Loop {
    base: u64,
    line_size: u64,
    lines: u64,
    size: u32,
    /// Next line of the loop, in `0..lines`.
    i: u64,
}

impl Loop {
    /// A loop over `lines` lines of `line_size` bytes from `base` (line-aligned).
    pub fn new(base: u64, lines: u64, line_size: u64) -> Loop {
        Loop {
            base,
            line_size,
            lines,
            size: line_size.min(8) as u32,
            i: 0,
        }
    }

    /// The loop of the `loop` workload.
    pub fn from_params(p: &Params) -> Loop {
        Loop::new(data_base(p.line_size), p.lines, p.line_size)
    }
}

impl Kernel for Loop {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = LOOP_CODE;
        for _ in 0..out.room() {
            out.push(
                self.base + self.i * self.line_size,
                self.size,
                AccessKind::Load,
                0,
            );
            self.i += 1;
            if self.i == self.lines {
                self.i = 0;
            }
        }
    }
}
