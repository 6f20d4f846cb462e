//! `matmul` and `matmul-tiled`: C += A·B for n × n row-major matrices of doubles, A, B and C
//! page-aligned one after another from 0x1000_0000.
//!
//! Each step of the innermost loop, `C[i][j] += A[i][k] * B[k][j]` compiled as written, makes
//! three references: a load of `A[i][k]`, a load of `B[k][j]` and a modify (read-modify-write) of
//! `C[i][j]`, all 8 bytes. One multiply is therefore exactly **3·n³** references, n³ of each kind,
//! for both variants.
//!
//! - `matmul` runs the naive i, j, k nest: A is read along rows, B down columns (stride 8·n).
//! - `matmul-tiled` runs the six-loop tiling by `tile` (ii, jj, kk over tiles, then i, j, k
//!   inside one, bounds clipped to n): the same references as `matmul` in another order, so
//!   their multisets are equal for every tile size.
//!
//! After one multiply the nest starts again (the next call of the same kernel).

use super::kernel::{Code, DATA_BASE, Kernel, Refs, next_array};
use super::params::Params;
use crate::access::AccessKind;

/// Bytes per element (double).
const ELEM: u64 = 8;

/// load A, load B, multiply, modify C, increment k, compare, branch.
const NAIVE_CODE: Code = Code {
    start: 0x40_1500,
    len: 7,
};
/// The same body in the tiled function.
const TILED_CODE: Code = Code {
    start: 0x40_1600,
    len: 7,
};
const SLOT_A: u32 = 0;
const SLOT_B: u32 = 1;
const SLOT_C: u32 = 3;

/// References in one multiply.
pub(super) fn matmul_len(p: &Params) -> u128 {
    3 * u128::from(p.n).pow(3)
}

/// Where the three matrices are.
#[derive(Clone, Copy, Debug)]
struct Layout {
    n: u64,
    a: u64,
    b: u64,
    c: u64,
}

impl Layout {
    fn new(n: u64) -> Layout {
        let bytes = n * n * ELEM;
        let a = DATA_BASE;
        let b = next_array(a, bytes);
        let c = next_array(b, bytes);
        Layout { n, a, b, c }
    }

    /// The three references of one step of the innermost loop.
    #[inline]
    fn body(&self, i: u64, j: u64, k: u64, out: &mut Refs) {
        let n = self.n;
        out.push(
            self.a + (i * n + k) * ELEM,
            ELEM as u32,
            AccessKind::Load,
            SLOT_A,
        );
        out.push(
            self.b + (k * n + j) * ELEM,
            ELEM as u32,
            AccessKind::Load,
            SLOT_B,
        );
        out.push(
            self.c + (i * n + j) * ELEM,
            ELEM as u32,
            AccessKind::Modify,
            SLOT_C,
        );
    }
}

/// The naive i, j, k nest.
#[derive(Clone, Debug)]
pub(super) struct Naive {
    l: Layout,
    i: u64,
    j: u64,
    k: u64,
}

impl Naive {
    pub fn new(p: &Params) -> Naive {
        Naive {
            l: Layout::new(p.n),
            i: 0,
            j: 0,
            k: 0,
        }
    }
}

impl Kernel for Naive {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = NAIVE_CODE;
        let n = self.l.n;
        while out.room() >= 3 {
            self.l.body(self.i, self.j, self.k, out);
            self.k += 1;
            if self.k == n {
                self.k = 0;
                self.j += 1;
                if self.j == n {
                    self.j = 0;
                    self.i += 1;
                    if self.i == n {
                        self.i = 0;
                    }
                }
            }
        }
    }
}

/// The tiled nest: `for ii, jj, kk (step tile) for i, j, k (within the tile)`.
#[derive(Clone, Debug)]
pub(super) struct Tiled {
    l: Layout,
    tile: u64,
    /// Corner of the current tile.
    ii: u64,
    jj: u64,
    kk: u64,
    i: u64,
    j: u64,
    k: u64,
}

impl Tiled {
    pub fn new(p: &Params) -> Tiled {
        Tiled {
            l: Layout::new(p.n),
            tile: p.tile,
            ii: 0,
            jj: 0,
            kk: 0,
            i: 0,
            j: 0,
            k: 0,
        }
    }

    /// Moves to the next (i, j, k), innermost first.
    #[inline]
    fn advance(&mut self) {
        let (n, t) = (self.l.n, self.tile);
        self.k += 1;
        if self.k < (self.kk + t).min(n) {
            return;
        }
        self.k = self.kk;
        self.j += 1;
        if self.j < (self.jj + t).min(n) {
            return;
        }
        self.j = self.jj;
        self.i += 1;
        if self.i < (self.ii + t).min(n) {
            return;
        }
        // The tile is done: next kk, then jj, then ii, then the whole multiply again.
        self.kk += t;
        if self.kk >= n {
            self.kk = 0;
            self.jj += t;
            if self.jj >= n {
                self.jj = 0;
                self.ii += t;
                if self.ii >= n {
                    self.ii = 0;
                }
            }
        }
        (self.i, self.j, self.k) = (self.ii, self.jj, self.kk);
    }
}

impl Kernel for Tiled {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        out.code = TILED_CODE;
        while out.room() >= 3 {
            self.l.body(self.i, self.j, self.k, out);
            self.advance();
        }
    }
}
