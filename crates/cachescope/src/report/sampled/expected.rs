//! The expected errors a sampled report shows beside each section: measured by
//! `scripts/sampled-accuracy.sh` against exact reports of the programs of docs/accuracy/sampled.md
//! that the measurement held out of the choices (the held-out split is stated there), and
//! written by it into `expected.json` beside this file. A section the file has no row for
//! says so rather than show a number.

use serde::{Deserialize, Serialize};

use crate::spatial::SpatialOptions;

use super::super::model::Report;

/// How a sampled report was sampled, and the expected error of each of its sections.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampledSummary {
    /// The share of lines sampled at the start (`--rate`).
    pub rate: f64,
    /// Seed of the line hash (`--seed`).
    pub seed: u64,
    /// At most this many lines sampled at once (`None`: a fixed rate).
    pub max_lines: Option<u64>,
    /// The rate at the end: below `rate` when the bound lowered it.
    pub final_rate: f64,
    /// Data references in the sample (what the analyses read).
    pub sampled_refs: u64,
    /// Each section's method and its error measured on held-out programs.
    pub expected: Vec<ExpectedError>,
    /// Where the samples are too few to trust a model (also in the report's notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One section's expected error, as measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectedError {
    /// The figure id (`mrc`, `policies`, `three-c`…) or section.
    pub figure: String,
    /// What is compared (`shards lru`, `mini fifo`, `cold`, `poec`…).
    pub what: String,
    /// The error's unit (`pp` of miss ratio, `poec`, `%` of misses…).
    pub unit: String,
    /// Mean over the held-out programs of each program's mean error.
    pub mean: f64,
    /// The worst program's mean error.
    pub worst: f64,
    /// The rate it was measured at.
    pub rate: f64,
    /// The held-out programs it was measured on.
    pub measured_on: Vec<String>,
}

impl SampledSummary {
    /// The filter's options that made this sample, at `line_size`: a second read of the trace
    /// with them samples the same lines (the threads section's).
    pub fn spatial(&self, line_size: crate::LineSize) -> SpatialOptions {
        SpatialOptions {
            rate: self.rate,
            seed: self.seed,
            max_lines: self.max_lines,
            line_size,
        }
    }
}

/// The measured table (`expected.json`, written by the accuracy script).
const TABLE: &str = include_str!("expected.json");

/// The rows of the measured table.
pub fn table() -> Vec<ExpectedError> {
    serde_json::from_str(TABLE).unwrap_or_default()
}

/// The summary of a report sampled with `spatial` that ended at `final_rate` with
/// `sampled_refs` references read.
pub(super) fn summary(
    spatial: &SpatialOptions,
    final_rate: f64,
    sampled_refs: u64,
) -> SampledSummary {
    SampledSummary {
        rate: spatial.rate,
        seed: spatial.seed,
        max_lines: spatial.max_lines,
        final_rate,
        sampled_refs,
        expected: table(),
        warnings: Vec::new(),
    }
}

/// Appends to each figure's caption its method, rate and the expected error measured for it.
pub(super) fn caption(report: &mut Report) {
    let Some(s) = &report.sampled else {
        return;
    };
    for f in &mut report.figures {
        let rows: Vec<&ExpectedError> = s.expected.iter().filter(|e| e.figure == f.id).collect();
        let mut text = format!(
            " Sampled: SHARDS lines at rate {} (seed {}), every count scaled by 1/rate",
            s.final_rate, s.seed
        );
        if rows.is_empty() {
            text.push_str("; no expected error measured for this figure.");
        } else {
            let parts: Vec<String> = rows
                .iter()
                .map(|e| {
                    format!(
                        "{} {:.2} {} mean, {:.2} worst",
                        e.what, e.mean, e.unit, e.worst
                    )
                })
                .collect();
            text.push_str(&format!(
                "; expected error (measured at rate {} on {}): {}.",
                rows[0].rate,
                rows[0].measured_on.join(", "),
                parts.join("; ")
            ));
        }
        f.caption.push_str(&text);
        // The estimator of each range of the report's LRU curve (warnings::combined_note).
        if f.id == "mrc" {
            for n in report
                .notes
                .iter()
                .filter(|n| n.starts_with("the LRU curve"))
            {
                f.caption.push_str(&format!(" Note: {n}."));
            }
        }
    }
}
