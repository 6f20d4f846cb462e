//! The report's "What to change" section: the top findings of [`crate::advice`], each with
//! its change, evidence and misses before and after (`report --advise`, docs/advice.md).

use serde::{Deserialize, Serialize};

use crate::advice::Advice;
use crate::layout::LevelChange;

/// Findings the section keeps.
pub const TOP: usize = 8;

/// The section. Field names are a public contract (`report.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WhatToChange {
    /// The machine simulated, as `simulate`'s flags.
    pub machine: String,
    /// The findings, most misses saved first (at most [`TOP`]).
    pub findings: Vec<ChangeRow>,
    /// What limits the advice.
    pub notes: Vec<String>,
}

/// One finding, as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeRow {
    /// `split`, `pad`, `false-sharing`, …
    pub kind: String,
    /// The structure.
    pub structure: String,
    /// The change in words.
    pub change: String,
    /// The evidence in words.
    pub evidence: String,
    /// The code lines that touch the structure.
    pub code: Vec<String>,
    /// Misses per level before and after.
    pub levels: Vec<LevelChange>,
    /// Coherence misses before and after (with cores).
    pub coherence: Option<(u64, u64)>,
    /// Misses saved (data levels and coherence).
    pub saved: i64,
    /// True when the misses after are an estimate (`block`).
    pub estimate: bool,
    /// The command that reproduces the prediction.
    pub whatif: Option<String>,
}

/// The section of `advice` on `machine` (its flags).
pub fn what_to_change(advice: &Advice, machine: &str) -> WhatToChange {
    WhatToChange {
        machine: machine.trim().to_owned(),
        findings: advice
            .findings
            .iter()
            .take(TOP)
            .map(|f| ChangeRow {
                kind: f.kind.name().to_owned(),
                structure: f.structure.clone(),
                change: f.change.clone(),
                evidence: f.evidence["summary"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                code: f.code.clone(),
                levels: f
                    .levels
                    .iter()
                    .filter(|l| l.level != "L1I")
                    .cloned()
                    .collect(),
                coherence: f.coherence_misses.zip(f.coherence_misses_after),
                saved: f.saved,
                estimate: f.estimate,
                whatif: f.whatif.clone(),
            })
            .collect(),
        notes: advice.notes.clone(),
    }
}
