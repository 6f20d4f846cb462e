//! Per-interval signatures, one builder per paper method, each fed the data addresses of an
//! interval in order and told where intervals end:
//!
//! | builder | signature | methods | stored per interval |
//! |---|---|---|---|
//! | [`Setvectors`] | distinct lines per L2 set, saturated (§3) | `setvector` (magnitude), `setvector-vector`, both on the log scale of [`log_scale`] | 8 bytes (+ 1 byte per set for the vector) |
//! | [`ActivityVectors`] | accesses per super-set (§2.2) | `activity`, `activity-magnitude` | 4 bytes per super-set |
//! | [`ReuseHistograms`] | stack-distance histogram (§2.3) | `reuse-distance` | 34 × 4 bytes |
//! | [`WaveletImages`] | Haar / SVD of the address-histogram image (§2.1) | `wavelet`, `wavelet-dc`, `wavelet-svd` | 256 × 4 + 16·r × 4 bytes |
//!
//! Every builder sees data references only (loads, stores, modifies), each at the byte address
//! of its first byte. Dimension reductions, where the paper leaves room, are documented in each
//! module: magnitudes for `setvector` and `activity-magnitude` (setvectors on the log scale of
//! `scale`), log₂ bins for reuse distances, the box-filter image scaling and the rank-r SVD for
//! the wavelet family.

mod activity;
mod reuse;
mod scale;
mod setvector;
mod wavelet;

pub use activity::ActivityVectors;
pub use reuse::{COLD_BIN, REUSE_BINS, ReuseHistograms, reuse_bin};
pub use scale::{full_magnitude, log_scale};
pub use setvector::Setvectors;
pub use wavelet::{HAAR_WEIGHTS, Image, SIDE, WaveletImages, haar_1d, haar_2d, haar_weight, svd};

/// The common shape of the builders, for the analysis's driver loop.
pub(crate) trait Signer {
    /// Adds data addresses of the current interval, all in wavelet column `column`.
    fn feed(&mut self, addrs: &[u64], column: usize);
    /// Ends the current interval.
    fn close(&mut self);
}

impl Signer for Setvectors {
    #[inline]
    fn feed(&mut self, addrs: &[u64], _column: usize) {
        self.push(addrs);
    }
    fn close(&mut self) {
        self.end_interval();
    }
}

impl Signer for ActivityVectors {
    #[inline]
    fn feed(&mut self, addrs: &[u64], _column: usize) {
        self.push(addrs);
    }
    fn close(&mut self) {
        self.end_interval();
    }
}

impl Signer for ReuseHistograms {
    #[inline]
    fn feed(&mut self, addrs: &[u64], _column: usize) {
        self.push(addrs);
    }
    fn close(&mut self) {
        self.end_interval();
    }
}

impl Signer for WaveletImages {
    #[inline]
    fn feed(&mut self, addrs: &[u64], column: usize) {
        self.push(addrs, column);
    }
    fn close(&mut self) {
        self.end_interval();
    }
}

#[cfg(test)]
mod tests;
