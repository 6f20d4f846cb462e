//! Built-in synthetic workloads: traces with known answers, for the README demo, for tests and
//! for `cachescope generate`.
//!
//! [`generator`] turns a [`Workload`] and its [`Params`] into a [`Generator`], an
//! [`AccessReader`] that computes the trace as it is read: memory stays constant however long
//! the trace (`zipf` included: its sampler and rank permutation are O(1)). Every trace is a
//! function of its parameters alone; the randomized workloads (`random`, `zipf`, `phases`)
//! draw from a [`rand_pcg::Pcg64`] seeded from `seed`, the others ignore the seed.
//!
//! | workload | data references (natural length) | known answer |
//! |---|---|---|
//! | `sequential` | `lines·line_size/size` loads, size = min(8, line_size) | touches `refs·size/line_size` lines, no reuse |
//! | `stride` | `⌊lines·line_size/stride⌋·stride/size` loads | stride a multiple of line_size: LRU misses size/line_size with ≥ rows lines, else all |
//! | `loop` | 256·`lines` loads, one per line | LRU < K lines: all miss; ≥ K: only K cold misses |
//! | `random` | 256·`lines` loads | LRU of C lines: ≈ 1 − C/`lines` |
//! | `zipf` | 256·`lines` loads | rank k drawn ∝ k^−s |
//! | `matmul`, `matmul-tiled` | 3·n³ (load A, load B, modify C) | same multiset of references |
//! | `stencil` | 29·(n − 2)³ (27 loads of U, 1 of V, 1 store of R per point) | mgrid `resid` |
//! | `phases` | 6·64·`lines` in six segments | loop / stream / random, twice |
//!
//! Data arrays start at 0x1000_0000 and follow each other page-aligned; every access is
//! aligned to its size, so none straddles a line (line sizes of at least 8 bytes). With
//! `instructions`, each data reference is preceded by the instruction fetches of its loop body
//! (4-byte instructions from 0x40_1000, a separate function per workload; see
//! `kernel::Fetch`) and carries its instruction's address as `pc`; `refs` still counts data
//! references only. Each module documents its layout and its loop.

mod kernel;
mod loops;
mod matmul;
mod params;
mod phases;
mod random;
mod stencil;
mod stream;
mod zipf;

#[cfg(test)]
mod tests;

use std::fmt;

pub use params::{MAX_REFS, Params, validate};

use crate::batch::Batch;
use crate::error::Result;
use crate::trace::AccessReader;
use kernel::Drain;

/// A built-in synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// 8-byte loads through consecutive fresh addresses.
    Sequential,
    /// A column-by-column walk of a row-major array with rows of `stride` bytes.
    Stride,
    /// A cyclic loop over K = `lines` lines.
    Loop,
    /// Uniform random lines of a working set.
    Random,
    /// Zipf-distributed lines of a working set.
    Zipf,
    /// Naive matrix multiply.
    Matmul,
    /// Tiled matrix multiply.
    MatmulTiled,
    /// mgrid's 27-point `resid` stencil.
    Stencil,
    /// Loop, stream and random phases, twice.
    Phases,
}

impl Workload {
    /// Every workload, in the order `generate --list` shows them.
    pub const ALL: [Workload; 9] = [
        Workload::Sequential,
        Workload::Stride,
        Workload::Loop,
        Workload::Random,
        Workload::Zipf,
        Workload::Matmul,
        Workload::MatmulTiled,
        Workload::Stencil,
        Workload::Phases,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Sequential => "sequential",
            Workload::Stride => "stride",
            Workload::Loop => "loop",
            Workload::Random => "random",
            Workload::Zipf => "zipf",
            Workload::Matmul => "matmul",
            Workload::MatmulTiled => "matmul-tiled",
            Workload::Stencil => "stencil",
            Workload::Phases => "phases",
        }
    }

    /// The workload called `s`, if any.
    pub fn from_name(s: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == s)
    }

    /// One line for `--help` and `generate --list`: what it does and which parameters it uses.
    pub fn describe(self) -> &'static str {
        match self {
            Workload::Sequential => {
                "stream of 8-byte loads through fresh memory, never reused; one pass over `lines` lines, refs extends it"
            }
            Workload::Stride => {
                "column-by-column walk of a row-major array of `lines` lines with rows of `stride` bytes; every element once"
            }
            Workload::Loop => {
                "cyclic loop, one load per line over K = `lines` lines: LRU misses all below K lines, none after warm-up at K; 256 passes"
            }
            Workload::Random => {
                "uniform random loads over a working set of `lines` lines (`seed`); 256·lines references"
            }
            Workload::Zipf => {
                "loads of `lines` lines with Zipf popularity k^-s, s = `zipf-s`, hot lines scattered (`seed`); 256·lines references"
            }
            Workload::Matmul => {
                "naive i,j,k multiply C += A·B of `n`×`n` doubles: load A, load B, modify C per step; 3·n³ references"
            }
            Workload::MatmulTiled => {
                "matmul tiled by `tile` (1 to n): the same 3·n³ references in cache-friendlier order"
            }
            Workload::Stencil => {
                "mgrid resid: 27-point stencil on an `n`³ grid, 27 loads of U, 1 of V, 1 store of R per point; 29·(n-2)³ references"
            }
            Workload::Phases => {
                "six equal segments: loop over lines/16 lines, stream, random over `lines` lines, twice (`seed`); 384·lines references"
            }
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Data references of `w`'s natural length under `p` (wide, so huge sizes can be rejected).
fn natural_len(w: Workload, p: &Params) -> u128 {
    match w {
        Workload::Sequential => stream::sequential_len(p),
        Workload::Stride => stream::stride_len(p),
        Workload::Loop => loops::loop_len(p),
        Workload::Random | Workload::Zipf => random::random_len(p),
        Workload::Matmul | Workload::MatmulTiled => matmul::matmul_len(p),
        Workload::Stencil => stencil::stencil_len(p),
        Workload::Phases => phases::phases_len(p),
    }
}

/// The state of one workload's kernel.
#[derive(Clone, Debug)]
enum Kernel {
    Sequential(stream::Sequential),
    Stride(stream::Stride),
    Loop(loops::Loop),
    Random(random::Random),
    Zipf(Box<zipf::Zipf>),
    Matmul(matmul::Naive),
    MatmulTiled(matmul::Tiled),
    Stencil(Box<stencil::Stencil>),
    Phases(Box<phases::Phases>),
}

/// A synthetic trace, computed batch by batch as it is read. Made by [`generator`].
#[derive(Clone, Debug)]
pub struct Generator {
    workload: Workload,
    total: u64,
    kernel: Kernel,
    drain: Drain,
}

impl Generator {
    /// The workload this generator emits.
    pub fn workload(&self) -> Workload {
        self.workload
    }

    /// Data references in the whole trace (instruction fetches not counted).
    pub fn data_refs(&self) -> u64 {
        self.total
    }
}

/// Validates `p` for `w` ([`validate`]) and returns the generator of its trace.
pub fn generator(w: Workload, p: &Params) -> Result<Generator> {
    validate(w, p)?;
    // validate() bounds the natural length by MAX_REFS, so it fits.
    let total = p.refs.unwrap_or(natural_len(w, p) as u64);
    let kernel = match w {
        Workload::Sequential => {
            let base = kernel::data_base(p.line_size);
            Kernel::Sequential(stream::Sequential::new(base, stream::sequential_size(p)))
        }
        Workload::Stride => Kernel::Stride(stream::Stride::new(p)),
        Workload::Loop => Kernel::Loop(loops::Loop::from_params(p)),
        Workload::Random => Kernel::Random(random::Random::from_params(p)),
        Workload::Zipf => Kernel::Zipf(Box::new(zipf::Zipf::new(p))),
        Workload::Matmul => Kernel::Matmul(matmul::Naive::new(p)),
        Workload::MatmulTiled => Kernel::MatmulTiled(matmul::Tiled::new(p)),
        Workload::Stencil => Kernel::Stencil(Box::new(stencil::Stencil::new(p))),
        Workload::Phases => Kernel::Phases(Box::new(phases::Phases::new(p, total))),
    };
    Ok(Generator {
        workload: w,
        total,
        kernel,
        drain: Drain::new(total, p.instructions),
    })
}

impl AccessReader for Generator {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        let d = &mut self.drain;
        match &mut self.kernel {
            Kernel::Sequential(k) => d.fill(k, batch),
            Kernel::Stride(k) => d.fill(k, batch),
            Kernel::Loop(k) => d.fill(k, batch),
            Kernel::Random(k) => d.fill(k, batch),
            Kernel::Zipf(k) => d.fill(&mut **k, batch),
            Kernel::Matmul(k) => d.fill(k, batch),
            Kernel::MatmulTiled(k) => d.fill(k, batch),
            Kernel::Stencil(k) => d.fill(&mut **k, batch),
            Kernel::Phases(k) => d.fill(&mut **k, batch),
        }
        Ok(batch.len())
    }
}
