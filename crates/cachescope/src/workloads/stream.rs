//! Streams: `sequential` and `stride`. Neither ever touches a byte twice, so every line is a
//! cold miss the first time and their only locality is spatial.
//!
//! - `sequential` loads consecutive elements of `min(8, line_size)` bytes from `DATA_BASE`
//!   (0x1000_0000) upward: `refs` loads touch exactly `refs·size/line_size` lines (rounded up). Its natural
//!   length is one pass over `lines` lines, `lines·line_size/size` loads; a larger `refs` keeps
//!   going into fresh memory.
//! - `stride` walks a row-major array column by column, the way a column sweep of a C matrix
//!   does: rows are `stride` bytes, elements are the largest power of two up to 8 dividing the
//!   stride, and the array holds `rows = ⌊lines·line_size/stride⌋` rows. Reference `k` of one
//!   sweep reads row `k mod rows`, column `⌊k/rows⌋`, so the first `rows` addresses are
//!   `0x1000_0000 + k·stride`. Its natural length is one sweep, `rows·stride/size` loads; after
//!   it the walk moves on to a fresh array right behind. When the stride is a multiple of the
//!   line size, an LRU cache of at least `rows` lines misses `size/line_size` of the loads and
//!   one of fewer lines misses them all.

use super::kernel::{Code, Kernel, Refs, data_base};
use super::params::Params;
use crate::access::AccessKind;

/// `for (i = 0; ; i++) sum += a[i];`: load, add, increment, compare, branch.
pub(super) const SEQUENTIAL_CODE: Code = Code {
    start: 0x40_1000,
    len: 5,
};
/// The same body, in its own function.
const STRIDE_CODE: Code = Code {
    start: 0x40_1100,
    len: 5,
};

/// Element size of the sequential stream for this line size.
pub(super) fn sequential_size(p: &Params) -> u32 {
    p.line_size.min(8) as u32
}

/// Loads in one pass over `lines` lines.
pub(super) fn sequential_len(p: &Params) -> u128 {
    u128::from(p.lines) * u128::from(p.line_size) / u128::from(sequential_size(p))
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Sequential {
    next: u64,
    size: u32,
}

impl Sequential {
    pub fn new(base: u64, size: u32) -> Sequential {
        Sequential { next: base, size }
    }
}

impl Kernel for Sequential {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = SEQUENTIAL_CODE;
        for _ in 0..out.room() {
            out.push(self.next, self.size, AccessKind::Load, 0);
            self.next += u64::from(self.size);
        }
    }
}

/// Element size of the stride walk: the largest power of two up to 8 that divides the stride.
fn stride_size(stride: u64) -> u32 {
    1 << stride.trailing_zeros().min(3)
}

/// Rows of the strided array.
fn stride_rows(p: &Params) -> u64 {
    p.lines * p.line_size / p.stride
}

/// Loads in one column-by-column sweep of the array.
pub(super) fn stride_len(p: &Params) -> u128 {
    u128::from(stride_rows(p)) * u128::from(p.stride / u64::from(stride_size(p.stride)))
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Stride {
    /// Base of the current array.
    base: u64,
    stride: u64,
    size: u32,
    rows: u64,
    /// Byte offset of the current column.
    col_offset: u64,
    row: u64,
}

impl Stride {
    pub fn new(p: &Params) -> Stride {
        Stride {
            base: data_base(p.line_size),
            stride: p.stride,
            size: stride_size(p.stride),
            rows: stride_rows(p),
            col_offset: 0,
            row: 0,
        }
    }
}

impl Kernel for Stride {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = STRIDE_CODE;
        for _ in 0..out.room() {
            let addr = self.base + self.row * self.stride + self.col_offset;
            out.push(addr, self.size, AccessKind::Load, 0);
            self.row += 1;
            if self.row == self.rows {
                self.row = 0;
                self.col_offset += u64::from(self.size);
                if self.col_offset == self.stride {
                    self.col_offset = 0;
                    self.base += self.rows * self.stride;
                }
            }
        }
    }
}
