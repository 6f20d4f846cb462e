//! The signatures each method clusters, as rows of `f64` for k-means.

use super::*;

impl PhaseAnalysis {
    /// The signatures `m` clusters, `n` rows of `dims` values.
    pub(super) fn features(&self, m: Method, n: usize) -> (Vec<f64>, usize) {
        let magnitude = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let built = "built for every method that needs it";
        match m {
            Method::Setvector => {
                let s = self.setvectors.as_ref().expect(built);
                let unit = full_magnitude(s.ways(), s.sets());
                let v = s.magnitudes().iter().map(|&m| log_scale(m, unit));
                (v.collect(), 1)
            }
            Method::SetvectorVector => {
                let s = self.setvectors.as_ref().expect(built);
                let v = s.vectors().expect("kept for setvector-vector");
                (
                    v.iter()
                        .map(|&x| log_scale(f64::from(x), f64::from(s.ways())))
                        .collect(),
                    s.sets(),
                )
            }
            Method::Activity | Method::ActivityMagnitude => {
                let a = self.activity.as_ref().expect(built);
                let v: Vec<f64> = a.vectors().iter().map(|&x| f64::from(x)).collect();
                if m == Method::Activity {
                    (v, a.supersets())
                } else {
                    (v.chunks_exact(a.supersets()).map(magnitude).collect(), 1)
                }
            }
            Method::ReuseDistance => {
                let r = self.reuse.as_ref().expect(built);
                let v: Vec<f64> = r.histograms().iter().map(|&x| f64::from(x)).collect();
                debug_assert_eq!(v.len(), n * REUSE_BINS);
                (v, REUSE_BINS)
            }
            Method::Wavelet | Method::WaveletDc => {
                let w = self.wavelet.as_ref().expect(built);
                let v: Vec<f64> = w.coefficients().iter().map(|&x| f64::from(x)).collect();
                if m == Method::Wavelet {
                    (v, 256)
                } else {
                    (v.chunks_exact(256).map(|c| c[0]).collect(), 1)
                }
            }
            Method::WaveletSvd => {
                let w = self.wavelet.as_ref().expect(built);
                let v: Vec<f64> = w.svd_signatures().iter().map(|&x| f64::from(x)).collect();
                (v, 16 * w.svd_rank())
            }
        }
    }
}
