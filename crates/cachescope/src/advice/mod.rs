//! What to change and what it gains (`cachescope advise`): findings, each a layout change (or
//! a prefetch, or blocking) with the misses it saves, predicted by simulating the trace with
//! the change applied ([`crate::layout`]), ranked by the misses saved.
//!
//! Three steps, the passes the caller's (so that its progress bars and hooks drive them):
//!
//! 1. [`Collect`]: one pass gathers the evidence: the attribution with per-field counts, line
//!    utilization, conflict misses by set, lines written and never read back, loads' strides
//!    and per-structure stack distances; with threads and cores, the lines shared between
//!    threads at the cache's line size, at twice it and at half a line's shift (Predator's
//!    virtual lines), and the multi-core model's coherence misses per line (the caller runs
//!    [`crate::sharing`]'s second pass).
//! 2. [`candidates()`]: the changes the evidence calls for, one per structure and kind
//!    (`shared_lines.rs`: those of lines threads share).
//! 3. The caller simulates each candidate's changes (`whatif`'s machinery) and [`rank()`] turns
//!    the predictions into [`Finding`]s, most misses saved first; `block` is an estimate from
//!    the structure's stack distances, labelled so.
//!
//! docs/advice.md says what each kind's evidence is, how its prediction is made, and how far
//! the predictions are from the fixed programs of `examples/advice/`.

mod candidates;
mod collect;
mod machine;
mod rank;
mod run;
mod shared_lines;

#[cfg(test)]
mod tests;

pub use candidates::{Candidate, Options, candidates};
pub use collect::{Collect, Evidence};
pub use machine::{Machine, Simulated};
pub use rank::rank;
pub use run::{WhatIf, advise, evidence, whatif};

/// The note of an advice without an event log.
pub const NO_LOG: &str = "no event log (record the program with `cachescope record`): no \
structure can be named, so there is nothing to change";

use crate::layout::LevelChange;

/// What a finding is about. Serialized as the issue spells them (a public contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Fields fetched and not used: split the hot ones from the cold.
    Split,
    /// Conflict misses of a power-of-two stride: pad the rows or elements.
    Pad,
    /// Threads write disjoint bytes of one line: give each thread's data its own line.
    FalseSharing,
    /// False sharing another line size (128-byte pairs) or alignment would cause.
    LatentFalseSharing,
    /// Reuses that fall between two cache sizes: tile the loop (an estimate).
    Block,
    /// A regular stride that misses: prefetch ahead.
    Prefetch,
    /// Written, never read back before eviction: stores that do not allocate.
    NonTemporal,
}

impl Kind {
    /// Its name (`false-sharing`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Split => "split",
            Kind::Pad => "pad",
            Kind::FalseSharing => "false-sharing",
            Kind::LatentFalseSharing => "latent-false-sharing",
            Kind::Block => "block",
            Kind::Prefetch => "prefetch",
            Kind::NonTemporal => "non-temporal",
        }
    }
}

/// One finding. Field names are a public contract (`advise --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    /// What kind of change.
    pub kind: Kind,
    /// The structure: its attribution name (a variable, a heap allocation site).
    pub structure: String,
    /// The fields involved (the hot ones of a split; empty when the whole structure is).
    pub fields: Vec<String>,
    /// The code lines that touch it, most misses first.
    pub code: Vec<String>,
    /// What the finding rests on (`summary` in words, the measurements beside).
    pub evidence: serde_json::Value,
    /// The change, in words a programmer can apply.
    pub change: String,
    /// The command that reproduces the prediction (`None` for an estimate).
    pub whatif: Option<String>,
    /// Misses per level as the trace is and after the change.
    pub levels: Vec<LevelChange>,
    /// Coherence misses as it is (with cores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coherence_misses: Option<u64>,
    /// Coherence misses after the change (with cores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coherence_misses_after: Option<u64>,
    /// True when `misses_after` is an estimate rather than a simulation (`block`).
    pub estimate: bool,
    /// Misses saved, summed over the data levels and the coherence misses (what ranks).
    pub saved: i64,
}

/// What `advise` reports.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Advice {
    /// The findings, most misses saved first.
    pub findings: Vec<Finding>,
    /// What limits the advice (no debug information, no event log, no cores for threads).
    pub notes: Vec<String>,
}
