//! Trace ingestion: every supported format, compression, and detection.
//!
//! ## Execution model
//! Readers are *pulled*: [`AccessReader::read_batch`] fills a [`Batch`] of up to
//! [`BATCH_LEN`](crate::batch::BATCH_LEN) accesses and returns how many it read, 0 at the end.
//! Memory is constant in trace length: a reader holds one input chunk and one batch.
//!
//! Each format module has the same shape: an `Options` struct with documented defaults, a
//! `Reader` over any [`std::io::Read`], and a `sniff` function used by detection that says how
//! many lines of a sample parse ([`Sniff`]; for [`champsim`], whether every record of the sample
//! is plausible). [`open()`] wires a file or stdin through
//! decompression ([`Compression`]) and detection ([`Format`]) to the right reader.

pub mod binary;
pub mod champsim;
mod choice;
mod compress;
mod detect;
pub mod din;
pub mod lackey;
pub(crate) mod lines;
pub mod native;
mod observing;
mod only_thread;
mod open;
mod pipe;
pub mod plain;
mod progress;
mod sampled;
mod text_range;
pub mod write;

pub use compress::Compression;
pub use observing::Observing;
pub(crate) use only_thread::unknown_thread;
pub use open::{FormatChoice, OpenOptions, ProgressProbe, Trace, open};
pub(crate) use text_range::open_text_range;
// The tool's sampled stream (record::tool_spatial) ends its batches and fails as the stage does.
pub use sampled::Beside;
pub(crate) use sampled::places::CallPlaces;
pub(crate) use sampled::{OUT_LEN as SAMPLED_BATCH, no_line_sampled};

use crate::batch::Batch;
use crate::error::Result;

/// A source of accesses, read batch by batch.
pub trait AccessReader: Send {
    /// Clears `batch` and fills it with the next accesses (up to
    /// [`BATCH_LEN`](crate::batch::BATCH_LEN)). Returns the number read; 0 means the trace ended.
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize>;

    /// Lines skipped so far under `--skip-bad-lines` (text formats only).
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::default()
    }

    /// StatCache's profile of the full stream, from a reader of a sampled stream that also
    /// sampled reuses (the Valgrind tool's, docs/sampled.md), once the stream has ended;
    /// `None` for every other reader.
    fn reuse_profile(&mut self) -> Option<crate::sampling::Profile> {
        None
    }

    /// The per-thread reuse sampler's records of a Valgrind tool's sampled stream
    /// ([`crate::sampling::ThreadReuses`]), once the stream has ended; `None` for every
    /// other reader.
    fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        None
    }

    /// Tells the reader that its caller reads the data references only (the sampled stage):
    /// it may leave the addresses, sizes and pcs of instruction fetches unspecified (their
    /// kinds and places stay; the address of the last fetch before any other access or call
    /// event stays too, as a call event's call site), and should then give each batch its data index
    /// ([`Batch::data_addrs`]). Only a reader that saves work so does it; the rest ignore it.
    fn elide_fetches(&mut self) {}

    /// Asked before the first batch by [`Trace::sampled`] with the options it samples with: a
    /// reader that already gives that very sampled stream (the tool's, filtered again in
    /// cachescope with the same filter) returns true and from then on leaves out what the
    /// filter does not keep, so the stage above it passes its batches on as they are instead
    /// of filtering every reference a second time. The rest return false.
    fn sample_itself(&mut self, _options: &crate::spatial::SpatialOptions) -> bool {
        false
    }

    /// Asked before the first batch by a sampled report's sharing table: a reader of the
    /// Valgrind tool's sampled stream whose tool promoted the lines two threads write
    /// (`cs_share.c`) puts their references in its batches from then on, beside the sample,
    /// and fills the returned lines as it reads. `None` for every other reader.
    fn pass_promoted(
        &mut self,
    ) -> Option<std::sync::Arc<std::sync::Mutex<crate::spatial::promoted::Promoted>>> {
        None
    }

    /// The whole stream's accesses of each kind, when the reader knows them before its end (a
    /// native trace whose header counts them); `None` for the rest. A hint for work that
    /// depends on the stream's length (the sampled stage's reuse sampler,
    /// [`crate::sampling::Sampler::expect_refs`]): nothing read depends on it.
    fn counts_ahead(&self) -> Option<native::Counts> {
        None
    }
}

impl<R: AccessReader + ?Sized> AccessReader for Box<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        (**self).read_batch(batch)
    }
    fn diagnostics(&self) -> Diagnostics {
        (**self).diagnostics()
    }
    fn reuse_profile(&mut self) -> Option<crate::sampling::Profile> {
        (**self).reuse_profile()
    }
    fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        (**self).thread_reuses()
    }
    fn elide_fetches(&mut self) {
        (**self).elide_fetches()
    }
    fn sample_itself(&mut self, options: &crate::spatial::SpatialOptions) -> bool {
        (**self).sample_itself(options)
    }
    fn pass_promoted(
        &mut self,
    ) -> Option<std::sync::Arc<std::sync::Mutex<crate::spatial::promoted::Promoted>>> {
        (**self).pass_promoted()
    }
    fn counts_ahead(&self) -> Option<native::Counts> {
        (**self).counts_ahead()
    }
}

/// A reader with nothing to read: what a [`Trace`] holds for the instant its reader is
/// wrapped.
pub(crate) struct Ended;

impl AccessReader for Ended {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        Ok(0)
    }
}

/// Recoverable oddities a reader met, for the caller to report once.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostics {
    /// Lines that did not parse and were skipped (only with `skip_bad_lines`).
    pub skipped_lines: u64,
    /// The error message of the first skipped line.
    pub first_skipped: Option<String>,
    /// Records the format defines but cachescope cannot represent, and what was done with them.
    pub notes: Vec<String>,
}

/// How addresses are written in a plain-text trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Radix {
    /// Hexadecimal, with or without `0x`.
    Hex,
    /// Decimal; a `0x` prefix still reads as hex.
    Decimal,
}

/// A trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Valgrind lackey `--trace-mem=yes` output ([`lackey`]).
    Lackey,
    /// One address per line, optional kind and size columns ([`plain`]).
    Plain(Radix),
    /// Dinero IV `din`: `label address` ([`din`]).
    Din,
    /// Raw little-endian u64 addresses ([`binary`]).
    Binary,
    /// cachescope's native block format ([`native`]).
    Native,
    /// ChampSim's 64-byte instruction records ([`champsim`]).
    Champsim,
}

impl Format {
    /// The name used by `--format` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Lackey => "lackey",
            Format::Plain(Radix::Hex) => "plain-hex",
            Format::Plain(Radix::Decimal) => "plain-dec",
            Format::Din => "din",
            Format::Binary => "binary",
            Format::Native => "native",
            Format::Champsim => "champsim",
        }
    }

    /// Every format, in the order detection tries them.
    pub const ALL: [Format; 7] = [
        Format::Native,
        Format::Champsim,
        Format::Lackey,
        Format::Din,
        Format::Plain(Radix::Hex),
        Format::Plain(Radix::Decimal),
        Format::Binary,
    ];

    /// Parses a `--format` value; `plain` alone means "plain, radix detected".
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How well a sample of text matches one text format: detection picks the format under which
/// the most sampled lines parse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sniff {
    /// Lines holding an access that parsed.
    pub accesses: usize,
    /// Lines the format knows and ignores (blank lines, comments, Valgrind's own messages).
    pub ignored: usize,
    /// Lines that do not parse.
    pub bad: usize,
}
