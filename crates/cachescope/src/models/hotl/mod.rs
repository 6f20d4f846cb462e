//! HOTL (draft).

pub mod corun;
mod curve;
mod filmer;
mod fill_time;
mod footprint;
mod reuse_time;
mod reuse_window;
mod sampling;
mod sums;
mod table;

pub use curve::{CurvePoint, FootprintCurve};
pub use filmer::{DENSE_WINDOWS, Filmer, PER_OCTAVE, footprint_from_distances, mrc};
pub use fill_time::{
    DirectFillTime, DirectFillTimeAnalysis, DirectFillVolume, FillTimePoint, MAX_VOLUME,
};
pub use footprint::{Footprint, FootprintAnalysis, FootprintPoint};
pub use reuse_time::reuse_time_mrc;
pub use reuse_window::{ReuseWindowAnalysis, ReuseWindowCheck, ReuseWindowPoint, ReuseWindows};
pub use sampling::{FootprintSampler, SampledFootprint, SamplingOptions};
