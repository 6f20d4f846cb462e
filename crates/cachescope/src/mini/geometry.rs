//! The geometry of the miniature that stands for one cache size.

use crate::error::Result;
use crate::sim::Geometry;

/// The miniature of a cache of `size_bytes` (fully associative, or of `ways` ways) and the
/// share of lines it samples: `rate` of its lines (at least one), or of its sets rounded to a
/// power of two, never fewer than `min_sets` nor more than it has, and never more than `cap`
/// (the stream's own rate); `None` when `cap` leaves less than one line or set.
pub(super) fn miniature(
    size_bytes: u64,
    ways: Option<u32>,
    ls: u64,
    rate: f64,
    min_sets: u64,
    cap: f64,
) -> Result<Option<(Geometry, f64)>> {
    let lines = size_bytes / ls;
    Ok(Some(match ways {
        None => {
            let mut mini = ((lines as f64 * rate).round() as u64).max(1);
            if mini as f64 > lines as f64 * cap {
                mini = (lines as f64 * cap) as u64;
            }
            if mini == 0 {
                return Ok(None);
            }
            (
                Geometry::fully_associative(mini * ls, ls)?,
                mini as f64 / lines.max(1) as f64,
            )
        }
        Some(w) => {
            let sets = Geometry::new(size_bytes, w, ls)?.sets();
            let want = (sets as f64 * rate).max(min_sets.max(1) as f64);
            let mut mini = (1u64 << want.log2().round() as u32).min(sets);
            let most = sets as f64 * cap;
            if mini as f64 > most {
                if most < 1.0 {
                    return Ok(None);
                }
                mini = 1 << most.log2().floor() as u32;
            }
            (
                Geometry::new(mini * u64::from(w) * ls, w, ls)?,
                mini as f64 / sets as f64,
            )
        }
    }))
}
