//! The L2 model's log bins: the groups of L1 distances it evaluates together and the output
//! histogram it accumulates, both binned exactly below 256 and 256 per octave above.

/// Distances below this are their own bin in the output histogram and in the model's groups
/// of L1 distances; above, 256 bins per octave (relative width below 1/256).
const EXACT_LIMIT: u64 = 1 << 8;

/// Sub-bins per octave above [`EXACT_LIMIT`].
const SUB_BITS: u32 = 8;

/// Index of the log bin holding `d`: exact below [`EXACT_LIMIT`], then 256 per octave.
pub(super) fn bin_index(d: u64) -> usize {
    if d < EXACT_LIMIT {
        return d as usize;
    }
    let k = 63 - d.leading_zeros();
    let sub = (d >> (k - SUB_BITS)) - (1 << SUB_BITS);
    (EXACT_LIMIT + u64::from(k - SUB_BITS) * (1 << SUB_BITS) + sub) as usize
}

/// L1 masses of one log bin of `k`.
pub(super) struct Group {
    pub(super) bin: usize,
    pub(super) w: f64,
    /// Σ w·k.
    pub(super) k: f64,
    /// Σ w·shift.
    pub(super) shift: f64,
}

impl Group {
    pub(super) fn new(bin: usize, w: f64, k: u64, shift: f64) -> Group {
        Group {
            bin,
            w,
            k: w * k as f64,
            shift: w * shift,
        }
    }

    pub(super) fn add(&mut self, w: f64, k: u64, shift: f64) {
        self.w += w;
        self.k += w * k as f64;
        self.shift += w * shift;
    }
}

/// Output histogram: weight and weighted distance per log bin.
#[derive(Default)]
pub(super) struct Accumulator {
    w: Vec<f64>,
    wr: Vec<f64>,
}

impl Accumulator {
    pub(super) fn add(&mut self, r: u64, w: f64) {
        if w <= 0.0 {
            return;
        }
        let i = bin_index(r);
        if i >= self.w.len() {
            self.w.resize(i + 1, 0.0);
            self.wr.resize(i + 1, 0.0);
        }
        self.w[i] += w;
        self.wr[i] += w * r as f64;
    }

    pub(super) fn finish(self) -> Vec<(u64, f64)> {
        self.w
            .iter()
            .zip(&self.wr)
            .filter(|&(&w, _)| w > 0.0)
            .map(|(&w, &wr)| ((wr / w).round() as u64, w))
            .collect()
    }
}
