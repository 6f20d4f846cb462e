//! [`Params`]: one parameter set for every workload, and [`validate`].

use super::Workload;
use crate::error::{Error, Result};

/// Most data references one trace may ask for.
pub const MAX_REFS: u64 = 1_000_000_000_000;

/// Most lines in a working set: 2^32.
const MAX_LINES: u64 = 1 << 32;

/// Largest working set, `lines · line_size`: 1 TiB.
const MAX_FOOTPRINT: u64 = 1 << 40;

/// Largest matrix or grid dimension: matrices of 2^16 × 2^16 doubles are 32 GiB each.
const MAX_N: u64 = 1 << 16;

/// Parameters of a synthetic workload. One struct serves every workload; each reads the fields
/// that apply to it (listed in [`Workload::describe`]) and ignores the rest.
#[derive(Clone, Debug)]
pub struct Params {
    /// Seed of the randomized workloads (`random`, `zipf`, `phases`); the others ignore it.
    /// The same seed always gives the same trace. Default 1.
    pub seed: u64,
    /// Data references to emit (instruction fetches not counted). `None`, the default, is the
    /// workload's natural length (one multiply, one stencil sweep, 256 passes of the loop, …);
    /// `Some` cuts it short or extends it (loop nests start again, streams continue).
    /// At most 10^12.
    pub refs: Option<u64>,
    /// Working set in lines: the loop length K of `loop`, the lines `random` and `zipf` draw
    /// from, the footprint of one pass of `sequential` and `stride`, the random phase of
    /// `phases`. Default 4096 (256 KiB with 64-byte lines).
    pub lines: u64,
    /// Bytes per line, used to lay out the line-based workloads (one reference per line) and to
    /// size their accesses (`min(8, line_size)` bytes). A power of two. Default 64.
    pub line_size: u64,
    /// Row length in bytes of the `stride` walk. Default 256.
    pub stride: u64,
    /// Matrix dimension of `matmul` and `matmul-tiled`, grid dimension of `stencil`. Default 64:
    /// 786 432 references for a multiply, 6 911 512 for a stencil sweep.
    pub n: u64,
    /// Tile edge of `matmul-tiled`, from 1 to `n`. Default 16 (three tiles take 6 KiB).
    pub tile: u64,
    /// Exponent s of `zipf`: rank k has probability proportional to k^−s. Default 1.0.
    pub zipf_s: f64,
    /// Also emit instruction fetches (kind `Instr`, 4 bytes) of each workload's loop body
    /// before its data references, and set `pc` on data references. Default false.
    pub instructions: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            seed: 1,
            refs: None,
            lines: 4096,
            line_size: 64,
            stride: 256,
            n: 64,
            tile: 16,
            zipf_s: 1.0,
            instructions: false,
        }
    }
}

fn invalid(name: &'static str, message: String) -> Error {
    Error::InvalidParameter { name, message }
}

/// Checks that `p` makes sense for `w`: every field `w` uses is in range, and the trace is at
/// most [`MAX_REFS`] data references long. Fields `w` ignores are not checked, except
/// `line_size` (a power of two from 1 to 2^30) and `refs`, which mean the same everywhere.
pub fn validate(w: Workload, p: &Params) -> Result<()> {
    use Workload::*;
    crate::access::LineSize::new(p.line_size)?;
    match p.refs {
        Some(refs) if !(1..=MAX_REFS).contains(&refs) => {
            return Err(invalid("refs", format!("{refs} is not from 1 to 10^12")));
        }
        _ => {}
    }
    if matches!(w, Sequential | Stride | Loop | Random | Zipf | Phases) {
        if !(1..=MAX_LINES).contains(&p.lines) {
            return Err(invalid(
                "lines",
                format!("{} is not from 1 to 2^32", p.lines),
            ));
        }
        if p.lines * p.line_size > MAX_FOOTPRINT {
            return Err(invalid(
                "lines",
                format!(
                    "{} lines of {} bytes make more than 1 TiB; lower lines or line size",
                    p.lines, p.line_size
                ),
            ));
        }
    }
    if w == Stride {
        let footprint = p.lines * p.line_size;
        if !(1..=footprint).contains(&p.stride) {
            return Err(invalid(
                "stride",
                format!(
                    "{} is not from 1 to lines × line size = {footprint} bytes (a row of the walked array)",
                    p.stride
                ),
            ));
        }
    }
    if matches!(w, Matmul | MatmulTiled | Stencil) {
        let min = if w == Stencil { 3 } else { 1 };
        if !(min..=MAX_N).contains(&p.n) {
            let why = if w == Stencil {
                " (the grid needs an interior point)"
            } else {
                ""
            };
            return Err(invalid(
                "n",
                format!("{} is not from {min} to 65536{why}", p.n),
            ));
        }
    }
    if w == MatmulTiled && !(1..=p.n).contains(&p.tile) {
        return Err(invalid(
            "tile",
            format!("{} is not from 1 to n = {}", p.tile, p.n),
        ));
    }
    if w == Zipf && !(p.zipf_s.is_finite() && p.zipf_s > 0.0) {
        return Err(invalid(
            "zipf exponent",
            format!(
                "{} is not a finite number above 0 (1.0 is classic Zipf)",
                p.zipf_s
            ),
        ));
    }
    if p.refs.is_none() {
        let natural = super::natural_len(w, p);
        if natural > u128::from(MAX_REFS) {
            return Err(invalid(
                "refs",
                format!(
                    "{} with these parameters makes {natural} references, more than 10^12; \
                     give refs or smaller sizes",
                    w.name()
                ),
            ));
        }
    }
    Ok(())
}
