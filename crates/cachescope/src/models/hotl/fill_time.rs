//! The direct fill time (HOTL §2.3, algorithm in Appendix A), a diagnostic:
//!
//! `vt_direct(v)` = the average length of all windows whose footprint is exactly `v` lines,
//!
//! against the Filmer fill time `vt(v) = fp⁻¹(v)`, the average over windows of one length.
//! HOTL §4.4 shows why the conversions cannot use the direct one: it can fall as `v` grows
//! (100 a's, 11 b's, 1 c, 20 d's, 15 e's, 1 f, 320 g's: `vt_direct(4) = 161.5 >
//! vt_direct(5) = 149.5`), which would make a miss ratio negative; the Filmer fill time is the
//! inverse of a non-decreasing footprint and rises with `v`.
//!
//! The algorithm counts by footprint rather than by window (Appendix A): the windows that end
//! at position `e` have footprint `k` exactly when they start after the `(k+1)`-th most
//! recent distinct line's last reference `p_{k+1}` and no later than the `k`-th's, `p_k`; so
//! there are `p_k − p_{k+1}` of them, of lengths `e − p_k + 1 ..= e − p_{k+1}`. Keeping the
//! `max_volume + 1` most recently used lines in recency order gives every count for
//! `v ≤ max_volume` exactly in `O(n · max_volume)` time and `O(max_volume)` memory. (The
//! paper's relative-precision and trace-compression speed-ups are not needed for a
//! diagnostic and are not implemented.)

use super::filmer::Filmer;
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::error::{Error, Result};
use crate::reuse::{Options, data_lines};

/// Largest `max_volume` accepted: the work per reference grows with it.
pub const MAX_VOLUME: usize = 1 << 16;

/// Counts the windows of every footprint up to a volume; see the [module documentation](self).
#[derive(Clone, Debug)]
pub struct DirectFillTimeAnalysis {
    options: Options,
    max_volume: usize,
    /// `(line, last position)` of the most recently used distinct lines, most recent first;
    /// at most `max_volume + 1`.
    recent: Vec<(u64, u64)>,
    /// True once a line has fallen off `recent` (so the oldest kept is not the oldest seen).
    truncated: bool,
    now: u64,
    /// Per volume `v` (index `v − 1`): windows with footprint `v`, and their total length.
    windows: Vec<u64>,
    lengths: Vec<u128>,
}

impl DirectFillTimeAnalysis {
    /// Direct fill times of volumes `1..=max_volume` (from 1 to [`MAX_VOLUME`]).
    pub fn new(options: Options, max_volume: usize) -> Result<DirectFillTimeAnalysis> {
        if !(1..=MAX_VOLUME).contains(&max_volume) {
            return Err(Error::InvalidParameter {
                name: "fill-time volume",
                message: format!(
                    "{max_volume} is not from 1 to {MAX_VOLUME} lines (the work per reference \
                     grows with it)"
                ),
            });
        }
        Ok(DirectFillTimeAnalysis {
            options,
            max_volume,
            recent: Vec::with_capacity(max_volume + 1),
            truncated: false,
            now: 0,
            windows: vec![0; max_volume],
            lengths: vec![0; max_volume],
        })
    }

    fn access(&mut self, line: u64) {
        self.now += 1;
        let e = self.now;
        match self.recent.iter().position(|&(l, _)| l == line) {
            Some(i) => {
                self.recent[..=i].rotate_right(1);
                self.recent[0].1 = e;
            }
            None => {
                if self.recent.len() > self.max_volume {
                    self.recent.pop();
                    self.truncated = true;
                }
                self.recent.insert(0, (line, e));
            }
        }
        let kept = self.recent.len();
        for k in 0..kept.min(self.max_volume) {
            let p = self.recent[k].1;
            let next = match self.recent.get(k + 1) {
                Some(&(_, q)) => q,
                None if !self.truncated => 0,
                None => break,
            };
            let (shortest, longest) = (u128::from(e - p + 1), u128::from(e - next));
            self.windows[k] += p - next;
            self.lengths[k] += (shortest + longest) * (longest - shortest + 1) / 2;
        }
    }

    /// The counts so far.
    pub fn finish(&self) -> DirectFillTime {
        DirectFillTime {
            refs: self.now,
            volumes: (0..self.max_volume)
                .map(|k| DirectFillVolume {
                    volume: k as u64 + 1,
                    windows: self.windows[k],
                    total_length: self.lengths[k],
                })
                .collect(),
        }
    }
}

impl Analysis for DirectFillTimeAnalysis {
    fn observe(&mut self, batch: &Batch) {
        for line in data_lines(batch, &self.options) {
            self.access(line.0);
        }
    }
}

/// The windows of one footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DirectFillVolume {
    /// The footprint `v`, in lines.
    pub volume: u64,
    /// Windows whose footprint is exactly `v`.
    pub windows: u64,
    /// Their total length in references.
    pub total_length: u128,
}

impl DirectFillVolume {
    /// `vt_direct(v)`: the average length, `None` when no window has this footprint.
    pub fn fill_time(&self) -> Option<f64> {
        (self.windows > 0).then(|| self.total_length as f64 / self.windows as f64)
    }
}

/// Direct fill times of a trace, volume by volume.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DirectFillTime {
    /// References counted.
    pub refs: u64,
    /// Volumes `1..=max_volume`.
    pub volumes: Vec<DirectFillVolume>,
}

/// The direct and the Filmer fill time of one volume.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FillTimePoint {
    /// The volume `v` in lines.
    pub volume: u64,
    /// `vt_direct(v)` (`None` when no window has footprint `v`).
    pub direct: Option<f64>,
    /// The Filmer fill time `fp⁻¹(v)` (`None` above the largest footprint).
    pub filmer: Option<f64>,
}

impl DirectFillTime {
    /// Each volume's direct fill time beside `filmer`'s (the same trace's conversions).
    pub fn compare(&self, filmer: &Filmer) -> Vec<FillTimePoint> {
        self.volumes
            .iter()
            .map(|v| {
                let f = filmer.fill_time(v.volume as f64);
                FillTimePoint {
                    volume: v.volume,
                    direct: v.fill_time(),
                    filmer: f.is_finite().then_some(f),
                }
            })
            .collect()
    }

    /// The volumes `v` whose direct fill time is shorter than that of `v − 1`: where a miss
    /// ratio from it, `1 / (vt(v) − vt(v − 1))`, would be negative.
    pub fn decreasing(&self) -> Vec<u64> {
        self.volumes
            .windows(2)
            .filter_map(|p| match (p[0].fill_time(), p[1].fill_time()) {
                (Some(a), Some(b)) if b < a => Some(p[1].volume),
                _ => None,
            })
            .collect()
    }
}
