//! The miss-ratio-curve data model shared by every method (exact, StatCache, StatStack, HOTL…),
//! and the cache-size lists curves are evaluated at.

use crate::error::{Error, Result};

/// One cache size of a miss-ratio curve.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MrcPoint {
    /// Cache capacity in bytes.
    pub size_bytes: u64,
    /// Cache capacity in lines: `size_bytes / line_size`, rounded down.
    pub lines: u64,
    /// Misses per counted reference, cold misses included. `None` where a model does not
    /// estimate cold misses (StatCache and StatStack by default); left out of JSON then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_ratio: Option<f64>,
    /// Misses per counted reference, cold misses left out (same denominator).
    pub miss_ratio_warm: f64,
}

/// A miss-ratio curve. Field names are a public contract (`mrc --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Mrc {
    /// How the curve was obtained: `exact`, `statcache`, `statstack`, `hotl`, …
    pub method: String,
    /// The replacement policy modelled: `lru` or `random`.
    pub policy: String,
    /// Line size in bytes.
    pub line_size: u64,
    /// One point per requested size, in the order requested.
    pub points: Vec<MrcPoint>,
}

/// Smallest size of the default sweep: 1 KiB.
pub const DEFAULT_MIN_BYTES: u64 = 1 << 10;

/// Largest size of the default sweep: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Sizes per octave of the default sweep.
pub const DEFAULT_PER_OCTAVE: u64 = 8;

/// The default sweep of every method, StatCache's working-set graph: [`sizes_log_range`] from
/// 1 KiB to 1 GiB, every eighth of an octave (1K, 1.125K, 1.25K, … 896M, 960M, 1G: 161 sizes).
pub fn default_sizes() -> Vec<u64> {
    sizes_log_range(DEFAULT_MIN_BYTES, DEFAULT_MAX_BYTES, DEFAULT_PER_OCTAVE)
        .expect("the default range is valid")
}

/// Cache sizes from `lo_bytes` to `hi_bytes` (both included), `per_octave` per power of two,
/// in increasing order.
///
/// As in HOTL §4.1, each octave `[2^k, 2^(k+1))` is split into `per_octave` equal steps:
/// the sizes are `2^k·(1 + i/per_octave)`, `i` in `0..per_octave`, skipping sizes that are not
/// whole bytes (so 1 per octave gives powers of two, 4 gives 32K, 40K, 48K, 56K, 64K…).
/// `lo_bytes` and `hi_bytes` are added when they are not on this grid. With a power-of-two line
/// size and `lo_bytes` a multiple of it, every grid size is a bin boundary of the exact
/// histograms, so exact curves are exact there at any size.
///
/// Errors unless `1 ≤ lo_bytes ≤ hi_bytes` and `per_octave` is a power of two from 1 to 256.
pub fn sizes_log_range(lo_bytes: u64, hi_bytes: u64, per_octave: u64) -> Result<Vec<u64>> {
    if lo_bytes == 0 || lo_bytes > hi_bytes {
        return Err(Error::InvalidParameter {
            name: "size range",
            message: format!(
                "{lo_bytes}..{hi_bytes} is not a range of positive sizes, low to high"
            ),
        });
    }
    if !per_octave.is_power_of_two() || per_octave > 256 {
        return Err(Error::InvalidParameter {
            name: "sizes per octave",
            message: format!("{per_octave} is not a power of two from 1 to 256"),
        });
    }
    let step_bits = per_octave.trailing_zeros();
    let mut sizes = vec![lo_bytes];
    for k in lo_bytes.ilog2()..=hi_bytes.ilog2() {
        if k < step_bits {
            // Steps of 2^k / per_octave < 1 byte: keep the whole ones.
            let step = 1u64 << k;
            sizes.extend((0..per_octave).filter_map(|i| {
                let scaled = (i << k) % per_octave == 0;
                scaled.then(|| step + (i << k) / per_octave)
            }));
        } else {
            let step = 1u64 << (k - step_bits);
            sizes.extend((0..per_octave).map(|i| (1u64 << k) + i * step));
        }
    }
    sizes.retain(|&s| (lo_bytes..=hi_bytes).contains(&s));
    sizes.push(hi_bytes);
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_range_follows_the_hotl_grid() {
        assert_eq!(
            sizes_log_range(4096, 65536, 1).unwrap(),
            [4096, 8192, 16384, 32768, 65536]
        );
        assert_eq!(
            sizes_log_range(32 << 10, 64 << 10, 4).unwrap(),
            [32, 40, 48, 56, 64].map(|k| k << 10)
        );
        // Off-grid ends are kept.
        assert_eq!(
            sizes_log_range(48 << 10, 100 << 10, 1).unwrap(),
            [48 << 10, 64 << 10, 100 << 10]
        );
        // Small octaves keep only whole bytes.
        assert_eq!(sizes_log_range(1, 8, 4).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(sizes_log_range(7, 7, 2).unwrap(), [7]);
        let d = default_sizes();
        assert_eq!(d.len(), 161);
        assert_eq!((d[0], d[1], d[160]), (1024, 1152, 1 << 30));
        assert!(sizes_log_range(0, 8, 1).is_err());
        assert!(sizes_log_range(9, 8, 1).is_err());
        assert!(sizes_log_range(1, 8, 3).is_err());
        assert!(sizes_log_range(1, 8, 512).is_err());
        // Octaves 2^0..2^7 hold 2^k whole sizes, the 56 others 256, then u64::MAX.
        assert_eq!(
            sizes_log_range(1, u64::MAX, 256).unwrap().len(),
            255 + 56 * 256 + 1
        );
    }

    #[test]
    fn mrc_json_shape() {
        let m = Mrc {
            method: "exact".into(),
            policy: "lru".into(),
            line_size: 64,
            points: vec![MrcPoint {
                size_bytes: 4096,
                lines: 64,
                miss_ratio: Some(0.5),
                miss_ratio_warm: 0.25,
            }],
        };
        let j = serde_json::to_string(&m).unwrap();
        assert_eq!(
            j,
            r#"{"method":"exact","policy":"lru","line_size":64,"points":[{"size_bytes":4096,"lines":64,"miss_ratio":0.5,"miss_ratio_warm":0.25}]}"#
        );
        assert_eq!(serde_json::from_str::<Mrc>(&j).unwrap(), m);
    }
}
