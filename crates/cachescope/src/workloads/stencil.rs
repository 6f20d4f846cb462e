//! `stencil`: the 27-point loop of mgrid's `resid` (SPEC CPU2000; quoted as Fig. 5 of Buck &
//! Hollingsworth, "A new hardware monitor design to measure data structure-specific cache
//! eviction information", IJHPCA 2006):
//!
//! ```fortran
//! DO 600 I3=2,N-1
//! DO 600 I2=2,N-1
//! DO 600 I1=2,N-1
//! 600 R(I1,I2,I3)=V(I1,I2,I3)-A(0)*(U(I1,I2,I3))-A(1)*(…6 face neighbours…)
//!    -A(2)*(…12 edge neighbours…)-A(3)*(…8 corner neighbours…)
//! ```
//!
//! U, V and R are n × n × n arrays of doubles in Fortran (column-major) order, I1 fastest,
//! page-aligned one after another from 0x1000_0000. Each interior point makes **29**
//! references, all 8 bytes: the load of V, the 27 loads of U in the order they appear in the
//! source, and the store of R. One sweep is **29·(n − 2)³** references; then it starts again.
//! The coefficients A(0..3) are scalars in registers and make no references.

use super::kernel::{Code, DATA_BASE, Kernel, Refs, next_array};
use super::params::Params;
use crate::access::AccessKind;

/// Bytes per element (double).
const ELEM: u64 = 8;

/// References per interior point.
pub(super) const REFS_PER_POINT: u64 = 29;

/// Load V; 27 × (load U, add); four multiply-subtracts; store R; loop control.
const CODE: Code = Code {
    start: 0x40_1800,
    len: 63,
};
const SLOT_V: u32 = 0;
/// Slot of the load of the `j`th U is `1 + 2·j`.
const SLOT_U0: u32 = 1;
const SLOT_R: u32 = 59;

/// The 27 neighbours (ΔI1, ΔI2, ΔI3) in source order: A(0), A(1), A(2), A(3) terms.
const NEIGHBOURS: [(i64, i64, i64); 27] = [
    (0, 0, 0),
    (-1, 0, 0),
    (1, 0, 0),
    (0, -1, 0),
    (0, 1, 0),
    (0, 0, -1),
    (0, 0, 1),
    (-1, -1, 0),
    (1, -1, 0),
    (-1, 1, 0),
    (1, 1, 0),
    (0, -1, -1),
    (0, 1, -1),
    (0, -1, 1),
    (0, 1, 1),
    (-1, 0, -1),
    (-1, 0, 1),
    (1, 0, -1),
    (1, 0, 1),
    (-1, -1, -1),
    (1, -1, -1),
    (-1, 1, -1),
    (1, 1, -1),
    (-1, -1, 1),
    (1, -1, 1),
    (-1, 1, 1),
    (1, 1, 1),
];

/// References in one sweep.
pub(super) fn stencil_len(p: &Params) -> u128 {
    u128::from(REFS_PER_POINT) * u128::from(p.n.saturating_sub(2)).pow(3)
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Stencil {
    n: u64,
    u: u64,
    v: u64,
    r: u64,
    /// Byte offset of each neighbour from the centre, in source order.
    offsets: [i64; 27],
    /// Current interior point, each coordinate in `1..n-1`.
    i1: u64,
    i2: u64,
    i3: u64,
}

impl Stencil {
    pub fn new(p: &Params) -> Stencil {
        let n = p.n;
        let bytes = n * n * n * ELEM;
        let u = DATA_BASE;
        let v = next_array(u, bytes);
        let r = next_array(v, bytes);
        let ni = n as i64;
        let offsets = NEIGHBOURS.map(|(d1, d2, d3)| (d1 + ni * d2 + ni * ni * d3) * ELEM as i64);
        Stencil {
            n,
            u,
            v,
            r,
            offsets,
            i1: 1,
            i2: 1,
            i3: 1,
        }
    }
}

impl Kernel for Stencil {
    #[inline]
    fn step(&mut self, out: &mut Refs) {
        debug_assert!(out.room() >= REFS_PER_POINT as usize);
        out.code = CODE;
        let n = self.n;
        let centre = (self.i1 + n * self.i2 + n * n * self.i3) * ELEM;
        out.push(self.v + centre, ELEM as u32, AccessKind::Load, SLOT_V);
        let u = self.u + centre;
        for (j, &off) in self.offsets.iter().enumerate() {
            out.push(
                u.wrapping_add_signed(off),
                ELEM as u32,
                AccessKind::Load,
                SLOT_U0 + 2 * j as u32,
            );
        }
        out.push(self.r + centre, ELEM as u32, AccessKind::Store, SLOT_R);
        self.i1 += 1;
        if self.i1 == n - 1 {
            self.i1 = 1;
            self.i2 += 1;
            if self.i2 == n - 1 {
                self.i2 = 1;
                self.i3 += 1;
                if self.i3 == n - 1 {
                    self.i3 = 1;
                }
            }
        }
    }
}
