//! Address-histogram images and their Haar-wavelet and SVD signatures (Huffmire & Sherwood
//! 2006, as Zwick et al. §2.1 describe and implement them).
//!
//! ## The image
//! An interval is cut into 16 sub-intervals (columns, see `intervals`). For every data address
//! `a` of column `c`, with `M` the modulo (16 KiB, "matched to the L1 size"), Huffmire and
//! Sherwood histogram `m = ⌊(a mod M) · 400 / M⌋` into 400 rows and then scale the 400 × 16
//! matrix to 16 × 16 "using methods from image scaling". We scale with a box filter: output row
//! `r` is the sum of input rows `25r … 25r + 24`. Since `⌊⌊x·400/M⌋ / 25⌋ = ⌊x·16/M⌋`, that is
//! exactly the 16-row histogram of `r = ⌊(a mod M) · 16 / M⌋`, which is what we count (for a
//! power-of-two `M`, bits `log2 M − 4 … log2 M − 1` of the address). Zwick et al. take 16
//! sub-intervals instead of 20 to avoid scaling the columns; so do we. Entries are raw counts.
//!
//! ## Haar coefficients (`wavelet`, `wavelet-dc`)
//! The orthonormal Haar transform (Stollnitz, DeRose & Salesin), standard 2-D decomposition:
//! every row fully transformed, then every column; each step maps pairs to
//! `((x₀ + x₁)/√2, (x₀ − x₁)/√2)`. Coefficient `(i, j)` is then weighted by
//! `w[min(max(i, j), 5)]` with Jacobs, Finkelstein & Salesin's (1995) luminance weights for
//! scanned queries, `w = [5.00, 0.83, 1.01, 0.52, 0.47, 0.30]` (bin rule and table from that
//! paper, which Huffmire and Sherwood cite for the weighting). `wavelet` clusters the 256
//! weighted coefficients; `wavelet-dc` the top-left one alone, `sum / 16`, proportional to the
//! image's mean (§2.1).
//!
//! ## SVD (`wavelet-svd`)
//! `M = U Σ Vᵀ` of the same 16 × 16 image by one-sided Jacobi (Hestenes): column pairs are
//! rotated until all are orthogonal, then `σ_j` is column `j`'s norm and `u_j` the column over
//! `σ_j`. On a 16 × 16 matrix this converges to machine precision in under ten sweeps (≈ 10⁴
//! flops each), cheaper and simpler than any library. The signature is the column space of U
//! (§5.1) as `σ₁u₁ … σ_r u_r` (`r` = `svd_rank`, default 4): U's columns scaled by their singular
//! values, so the image's magnitude is kept (unit columns alone would cluster every scaled copy of
//! an image together), each column's sign fixed so its largest-magnitude entry is positive.

/// Rows and columns of the image.
pub const SIDE: usize = 16;

/// Jacobs et al.'s weights of the Haar coefficients, by bin `min(max(i, j), 5)`.
pub const HAAR_WEIGHTS: [f64; 6] = [5.00, 0.83, 1.01, 0.52, 0.47, 0.30];

/// A 16 × 16 matrix, row-major: `m[row][column]`.
pub type Image = [[f64; SIDE]; SIDE];

/// In-place orthonormal 1-D Haar transform of 16 values (full decomposition: the overall
/// average coefficient first, then details from coarse to fine).
pub fn haar_1d(x: &mut [f64; SIDE]) {
    let mut tmp = [0.0; SIDE];
    let mut h = SIDE;
    while h > 1 {
        for i in 0..h / 2 {
            tmp[i] = (x[2 * i] + x[2 * i + 1]) * std::f64::consts::FRAC_1_SQRT_2;
            tmp[h / 2 + i] = (x[2 * i] - x[2 * i + 1]) * std::f64::consts::FRAC_1_SQRT_2;
        }
        x[..h].copy_from_slice(&tmp[..h]);
        h /= 2;
    }
}

/// The standard 2-D decomposition: [`haar_1d`] on every row, then on every column.
pub fn haar_2d(m: &Image) -> Image {
    let mut out = *m;
    for row in &mut out {
        haar_1d(row);
    }
    for c in 0..SIDE {
        let mut col: [f64; SIDE] = std::array::from_fn(|r| out[r][c]);
        haar_1d(&mut col);
        for (row, x) in out.iter_mut().zip(col) {
            row[c] = x;
        }
    }
    out
}

/// The weight of coefficient `(i, j)`: `HAAR_WEIGHTS[min(max(i, j), 5)]`.
#[inline]
pub fn haar_weight(i: usize, j: usize) -> f64 {
    HAAR_WEIGHTS[i.max(j).min(5)]
}

/// Rotates columns `p < q` of `m` (stored as rows) by the angle with cosine `c` and sine `s`.
fn rotate(m: &mut [[f64; SIDE]; SIDE], p: usize, q: usize, c: f64, s: f64) {
    let (head, tail) = m.split_at_mut(q);
    for (x, y) in head[p].iter_mut().zip(tail[0].iter_mut()) {
        (*x, *y) = (c * *x - s * *y, s * *x + c * *y);
    }
}

/// Singular values (decreasing) and the matching columns `σ_j u_j` of `m`, by one-sided Jacobi.
/// Returns `(sigma, scaled_u)` with `scaled_u[j]` the `j`-th column `σ_j u_j`, and `v` such that
/// `m = Σ_j scaled_u[j] · v[j]ᵀ`.
pub fn svd(m: &Image) -> ([f64; SIDE], [[f64; SIDE]; SIDE], [[f64; SIDE]; SIDE]) {
    // Work on columns: a[j] is column j of the matrix being rotated; v[j] column j of V.
    let mut a: [[f64; SIDE]; SIDE] = std::array::from_fn(|j| std::array::from_fn(|i| m[i][j]));
    let mut v: [[f64; SIDE]; SIDE] =
        std::array::from_fn(|j| std::array::from_fn(|i| if i == j { 1.0 } else { 0.0 }));
    for _sweep in 0..60 {
        let mut rotated = false;
        for p in 0..SIDE {
            for q in p + 1..SIDE {
                let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                for (x, y) in a[p].iter().zip(&a[q]) {
                    alpha += x * x;
                    beta += y * y;
                    gamma += x * y;
                }
                if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                rotate(&mut a, p, q, c, s);
                rotate(&mut v, p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let norm = |c: &[f64; SIDE]| c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut order: Vec<usize> = (0..SIDE).collect();
    order.sort_by(|&x, &y| norm(&a[y]).total_cmp(&norm(&a[x])));
    let mut sigma = [0.0; SIDE];
    let mut us = [[0.0; SIDE]; SIDE];
    let mut vs = [[0.0; SIDE]; SIDE];
    for (k, &j) in order.iter().enumerate() {
        sigma[k] = norm(&a[j]);
        // Fix the sign: the largest-magnitude entry of the column is positive.
        let big = a[j]
            .iter()
            .copied()
            .fold(0.0f64, |b, x| if x.abs() > b.abs() { x } else { b });
        let sign = if big < 0.0 { -1.0 } else { 1.0 };
        for i in 0..SIDE {
            us[k][i] = sign * a[j][i];
            vs[k][i] = sign * v[j][i];
        }
    }
    (sigma, us, vs)
}

/// Builds one 16 × 16 address-histogram image per interval and keeps its signatures.
#[derive(Clone, Debug)]
pub struct WaveletImages {
    modulo: u64,
    /// For a power-of-two modulo: `(a & mask) >> shift` is the row.
    pow2: Option<(u64, u32)>,
    svd_rank: usize,
    /// Whether each interval's SVD is computed (only `wavelet-svd` reads it).
    with_svd: bool,
    image: [[u64; SIDE]; SIDE],
    coefficients: Vec<f32>,
    svd: Vec<f32>,
}

impl WaveletImages {
    /// Images with modulo `modulo` ≥ 16 bytes; keeps `svd_rank` (1 to 16) scaled singular
    /// vectors per interval.
    pub fn new(modulo: u64, svd_rank: usize) -> WaveletImages {
        debug_assert!(modulo >= SIDE as u64 && (1..=SIDE).contains(&svd_rank));
        let pow2 = modulo
            .is_power_of_two()
            .then(|| (modulo - 1, modulo.trailing_zeros() - 4));
        WaveletImages {
            modulo,
            pow2,
            svd_rank,
            with_svd: true,
            image: [[0; SIDE]; SIDE],
            coefficients: Vec::new(),
            svd: Vec::new(),
        }
    }

    /// Images without the SVD signatures, when no method reads them: a decomposition per
    /// interval, whatever its references (on a sampled stream, most of the phases' time).
    pub fn without_svd(mut self) -> WaveletImages {
        self.with_svd = false;
        self
    }

    /// The image row of byte address `a`: `⌊(a mod M) · 16 / M⌋`.
    #[inline]
    pub fn row_of(&self, a: u64) -> usize {
        match self.pow2 {
            Some((mask, shift)) => ((a & mask) >> shift) as usize,
            None => {
                ((u128::from(a % self.modulo) * SIDE as u128) / u128::from(self.modulo)) as usize
            }
        }
    }

    /// Adds the data references at byte addresses `addrs` to column `column` (0 to 15) of the
    /// current interval's image.
    #[inline]
    pub fn push(&mut self, addrs: &[u64], column: usize) {
        match self.pow2 {
            Some((mask, shift)) => {
                for &a in addrs {
                    self.image[((a & mask) >> shift) as usize][column] += 1;
                }
            }
            None => {
                for &a in addrs {
                    let r = self.row_of(a);
                    self.image[r][column] += 1;
                }
            }
        }
    }

    /// The current interval's image so far.
    pub fn image(&self) -> Image {
        let mut m = [[0.0; SIDE]; SIDE];
        for (r, row) in self.image.iter().enumerate() {
            for (c, &x) in row.iter().enumerate() {
                m[r][c] = x as f64;
            }
        }
        m
    }

    /// Ends the current interval: stores its weighted Haar coefficients and its SVD signature.
    pub fn end_interval(&mut self) {
        let m = self.image();
        let h = haar_2d(&m);
        for (i, row) in h.iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                self.coefficients.push((x * haar_weight(i, j)) as f32);
            }
        }
        if self.with_svd {
            let (_, us, _) = svd(&m);
            for u in &us[..self.svd_rank] {
                self.svd.extend(u.iter().map(|&x| x as f32));
            }
        }
        self.image = [[0; SIDE]; SIDE];
    }

    /// Weighted Haar coefficients of every finished interval, 256 per interval, row-major.
    pub fn coefficients(&self) -> &[f32] {
        &self.coefficients
    }

    /// SVD signatures of every finished interval, `16 · svd_rank` per interval (none after
    /// [`WaveletImages::without_svd`]).
    pub fn svd_signatures(&self) -> &[f32] {
        &self.svd
    }

    /// Singular vectors kept per interval.
    pub fn svd_rank(&self) -> usize {
        self.svd_rank
    }

    /// Merges finished intervals in pairs, each into their mean ([`crate::phases::merge`]):
    /// the Haar transform is linear, so the coefficients are the mean image's.
    pub(crate) fn merge_pairs(&mut self, from: usize, pairs: usize) {
        use crate::phases::merge::{mean_f32, merge_pairs};
        merge_pairs(&mut self.coefficients, SIDE * SIDE, from, pairs, mean_f32);
        if self.with_svd {
            merge_pairs(&mut self.svd, SIDE * self.svd_rank, from, pairs, mean_f32);
        }
    }
}
