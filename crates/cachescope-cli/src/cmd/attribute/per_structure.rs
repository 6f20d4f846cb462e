//! `attribute --per-structure RATE`: references and misses by structure estimated from a
//! per-structure line sample of the full stream ([`Attribution::per_structure`]): each
//! structure's first lines at rate 1 within a budget, the others at RATE, weighed by rate in a
//! miniature of the cache. A recorded trace holds every reference, so this judges the estimator
//! `--sampled` would use against the exact attribution of the same trace
//! (docs/accuracy/sampled.md) before the recorder's filter keeps such lines.

use anyhow::Result;
use cachescope::attribution::{Attribution, Options, StructureBudget};
use clap::Args;

use crate::args::heading;

/// The flags.
#[derive(Debug, Args)]
pub struct PerStructureArgs {
    /// Estimate references and misses by structure from a per-structure line sample: each
    /// structure's first lines (--per-structure-lines) at rate 1, the rest at RATE, the counts
    /// the full cache's (docs/accuracy/sampled.md). Only the counts by structure, pair and
    /// code line: no monitor cost, curves, loads, utilization or fields.
    #[arg(help_heading = heading::SAMPLING, long, value_name = "RATE")]
    pub per_structure: Option<f64>,
    /// Lines per structure, and over all structures, kept at rate 1 by --per-structure.
    #[arg(help_heading = heading::SAMPLING, long, value_name = "PER,TOTAL", default_value = "16384,131072", value_parser = budget)]
    pub per_structure_lines: (u64, u64),
}

fn budget(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("{s:?}: give PER,TOTAL, e.g. 16384,131072"))?;
    let n = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|e| format!("{x:?}: {e} (PER,TOTAL are line counts)"))
    };
    Ok((n(a)?, n(b)?))
}

impl PerStructureArgs {
    /// An error when --per-structure is given with outputs it does not count (`others`) or
    /// with --sampled (`sampled`: it samples the full stream itself).
    pub fn check(&self, others: bool, sampled: bool) -> Result<()> {
        if self.per_structure.is_none() {
            return Ok(());
        }
        if others {
            anyhow::bail!(
                "--per-structure counts references and misses by structure only: drop \
                 --per-thread, --cachegrind-out, --callgraph, --callgrind-out and the TLB flags"
            );
        }
        if sampled {
            anyhow::bail!("--per-structure samples the full stream itself: drop --sampled");
        }
        Ok(())
    }

    /// `options` with what the per-structure sample does not count turned off.
    pub fn options(&self, mut options: Options) -> Options {
        if self.per_structure.is_some() {
            options.cost = None;
            options.mrc = false;
            options.loads = false;
        }
        options
    }

    /// `a` sampling per structure, if asked, with the seed `seed`.
    pub fn apply<'e>(&self, a: Attribution<'e>, seed: u64) -> Result<Attribution<'e>> {
        let Some(rate) = self.per_structure else {
            return Ok(a);
        };
        let (per_bucket, total) = self.per_structure_lines;
        Ok(a.per_structure(rate, StructureBudget { per_bucket, total }, seed)?)
    }

    /// The report's note of how its counts were estimated, if they were.
    pub fn note(&self, full_lines: Option<u64>) -> Option<String> {
        let rate = self.per_structure?;
        Some(format!(
            "references and misses estimated from a per-structure line sample: {} lines at rate \
             1 (at most {} per structure, {} in all), the others at {rate} (docs/accuracy/sampled.md)",
            full_lines.unwrap_or(0),
            self.per_structure_lines.0,
            self.per_structure_lines.1,
        ))
    }
}
