//! `--sampled` (docs/sampled.md): the same flags, with the same meaning, on every command that
//! reads a sampled stream instead of the full one.

use cachescope::LineSize;
use cachescope::spatial::{DEFAULT_MAX_LINES, DEFAULT_RATE, SpatialOptions};
use clap::Args;

use super::heading;

/// `--sampled` and the size of its sample; the rate is the command's `--rate`.
#[derive(Debug, Args, Clone, Copy)]
#[command(next_help_heading = heading::SAMPLING)]
pub struct SampledArgs {
    /// Analyse a hashed sample of the cache lines (SHARDS: each line kept with probability
    /// --rate, 0.01 unless given, every reference to it kept) instead of every reference;
    /// counts are scaled back by the rate and the results name their method and rate
    /// (docs/sampled.md; their measured errors: docs/accuracy/sampled.md). --seed seeds the
    /// line hash.
    #[arg(long)]
    pub sampled: bool,
    /// With --sampled: at most this many lines sampled at once; beyond, the rate falls so
    /// that memory stays bounded whatever the footprint (0: a fixed rate).
    #[arg(long, value_name = "LINES", default_value_t = DEFAULT_MAX_LINES, requires = "sampled")]
    pub sample_lines: u64,
}

/// `--rate` for the commands that have no other: the share of lines `--sampled` keeps.
#[derive(Debug, Args, Clone, Copy)]
#[command(next_help_heading = heading::SAMPLING)]
pub struct SampledRateArgs {
    /// With --sampled: the share of cache lines sampled, in (0, 1] (default 0.01).
    #[arg(long, requires = "sampled")]
    pub rate: Option<f64>,
}

impl SampledArgs {
    /// The library's filter options under `--sampled` (`None` without it): `rate` the
    /// command's `--rate` if given, `seed` its `--seed`.
    pub fn spatial(
        &self,
        rate: Option<f64>,
        seed: u64,
        line_size: LineSize,
    ) -> Option<SpatialOptions> {
        self.sampled.then(|| SpatialOptions {
            rate: rate.unwrap_or(DEFAULT_RATE),
            seed,
            max_lines: (self.sample_lines > 0).then_some(self.sample_lines),
            line_size,
        })
    }
}
