//! The hardware monitor's sampling (Buck & Hollingsworth §3): an interrupt every N misses on
//! average, the interval drawn afresh after each sample so that sampling cannot lock onto a
//! loop's period ("the actual value was pseudo-randomly varied throughout each run").
//!
//! Intervals are uniform on `1 ..= 2N − 1` (mean N), from a seeded PCG, so a seed fixes the
//! samples.

use rand_pcg::Pcg64;

/// Picks 1 in `every` events on average, at randomized intervals.
#[derive(Clone, Debug)]
pub struct Sampler {
    every: u64,
    left: u64,
    rng: Pcg64,
}

impl Sampler {
    /// Samples one event in `every` (at least 1) on average, seeded by `seed`.
    pub fn new(every: u64, seed: u64) -> Sampler {
        let mut s = Sampler {
            every: every.max(1),
            left: 0,
            rng: Pcg64::new(
                u128::from(seed) ^ 0x5851_f42d_4c95_7f2d,
                0xda3e_39cb_94b9_5bdb,
            ),
        };
        s.left = s.interval();
        s
    }

    /// The mean interval.
    pub fn every(&self) -> u64 {
        self.every
    }

    fn interval(&mut self) -> u64 {
        use rand::Rng;
        if self.every == 1 {
            return 1;
        }
        let span = 2 * self.every - 1;
        // Multiply-shift: uniform on 0..span without division (bias below 2^-64·span).
        1 + ((u128::from(self.rng.next_u64()) * u128::from(span)) >> 64) as u64
    }

    /// Counts one event; true when it is sampled.
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.left -= 1;
        if self.left == 0 {
            self.left = self.interval();
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_one_in_n_on_average_with_varied_intervals() {
        let mut s = Sampler::new(100, 7);
        let mut gaps = Vec::new();
        let mut last = 0u64;
        for i in 1..=1_000_000u64 {
            if s.tick() {
                gaps.push(i - last);
                last = i;
            }
        }
        let n = gaps.len() as f64;
        assert!((n - 10_000.0).abs() < 300.0, "{n} samples");
        assert!(gaps.iter().all(|&g| (1..=199).contains(&g)));
        assert!(gaps.iter().any(|&g| g < 20) && gaps.iter().any(|&g| g > 180));
    }

    #[test]
    fn every_one_samples_everything_and_seeds_repeat() {
        let mut s = Sampler::new(1, 3);
        assert!((0..100).all(|_| s.tick()));
        let run = |seed| {
            let mut s = Sampler::new(10, seed);
            (0..1000).map(|_| s.tick()).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
