//! `simulate`'s TLB flags as the library's [`TlbConfig`] and [`PageMap`], the TLBs' part of
//! the outputs, and the walks fed to the simulated caches (docs/tlb.md).

use std::fmt::Write as _;

use anyhow::{Result, bail};
use cachescope::analysis::Analysis;
use cachescope::sim::{SimAnalysis, SimReport};
use cachescope::tlb::{PageMap, TlbConfig, TlbReport, TlbSim, Walked};
use cachescope::trace::Trace;
use cachescope::units::{size_label, thousands};
use clap::Args;

use super::SimulateArgs;
use crate::args::{TlbArgs, heading};
use crate::cmd::passes;

/// `simulate`'s TLB flags: the TLBs and pages every command takes, and whether the walks
/// reach the caches.
#[derive(Debug, Args)]
#[command(next_help_heading = heading::TLB)]
pub struct SimTlbArgs {
    #[command(flatten)]
    pub tlb: TlbArgs,
    /// With caches simulated too, the page walks' page-table reads are fed to their data side
    /// and counted apart (each level's `walks`); --no-walks leaves them out.
    #[arg(long = "no-walks")]
    pub no_walks: bool,
}

impl SimTlbArgs {
    /// The TLBs the flags ask for (see [`TlbArgs::config`]).
    pub fn config(&self, seed: u64) -> Result<Option<TlbConfig>> {
        let config = self.tlb.config(seed)?;
        if config.is_none() && self.no_walks {
            bail!("--no-walks applies to TLBs: give --dtlb, --itlb, --stlb or --tlb");
        }
        Ok(config)
    }

    /// The page sizes of the addresses of `input`'s trace (its event log for `recorded`),
    /// the notes printed on stderr unless `quiet`.
    pub fn page_map(&self, input: &crate::args::InputArgs, quiet: bool) -> Result<PageMap> {
        let events = input
            .trace_file()
            .map(cachescope::attribution::events::sidecar_path)
            .filter(|p| p.exists());
        let (map, notes) = self.tlb.page_map(events.as_deref())?;
        if !quiet {
            for n in notes {
                eprintln!("note: --pages recorded: {n}");
            }
        }
        Ok(map)
    }
}

/// The caches and the TLBs in one pass (`cachescope::tlb::simulate`): each cache behind TLBs
/// of its own that feed it the walks' page-table reads, or, with --no-walks, the TLBs beside.
pub fn simulate(
    trace: &mut Trace,
    sims: Vec<SimAnalysis>,
    config: &TlbConfig,
    args: &SimulateArgs,
) -> Result<(Vec<SimReport>, TlbReport)> {
    let pages = args.tlb.page_map(&args.input, args.run.quiet)?;
    let tlb = TlbSim::new(config, pages, false)?;
    let walks = !args.tlb.no_walks;
    cachescope::tlb::simulate(trace, &mut passes(&args.run), sims, tlb, walks)
}

/// The TLB keys of `--json`: `tlbs`, `page_walks`, `walk_refs`, and `tlb_threads` when every
/// thread has its own.
pub fn json_fields(r: &TlbReport) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(r) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => unreachable!("a TlbReport serializes as an object"),
    }
}

/// The `--csv` rows of the TLB arrays: `tlb` and the array's fields (its thread with
/// per-thread TLBs).
pub fn csv_rows(r: &TlbReport) -> Vec<serde_json::Value> {
    let row = |thread: Option<u32>, c: &cachescope::tlb::TlbCounts| {
        let mut row = serde_json::Map::new();
        row.insert(
            "tlb".into(),
            serde_json::to_value(c.name).unwrap_or_default(),
        );
        if let Some(t) = thread {
            row.insert("thread".into(), t.into());
        }
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(c) {
            row.extend(fields.into_iter().filter(|(k, _)| k != "name"));
        }
        serde_json::Value::Object(row)
    };
    let mut rows: Vec<serde_json::Value> = r.tlbs.iter().map(|c| row(None, c)).collect();
    for t in &r.threads {
        rows.extend(t.tlbs.iter().map(|c| row(Some(t.thread), c)));
    }
    rows
}

/// The TLB table: one row per array, then the walks.
pub fn render(r: &TlbReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<5} {:>8} {:>6} {:>6} {:>14} {:>12} {:>10}",
        "tlb", "entries", "ways", "page", "refs", "misses", "miss rate"
    );
    let row = |o: &mut String, c: &cachescope::tlb::TlbCounts| {
        let ways = if c.ways == c.entries && c.entries > 1 {
            "full".to_string()
        } else {
            c.ways.to_string()
        };
        let name = serde_json::to_value(c.name).unwrap_or_default();
        let _ = writeln!(
            o,
            "{:<5} {:>8} {:>6} {:>6} {:>14} {:>12} {:>9.4}%",
            name.as_str().unwrap_or_default(),
            c.entries,
            ways,
            size_label(c.page_size),
            thousands(c.refs),
            thousands(c.misses),
            c.miss_ratio() * 100.0
        );
    };
    for c in &r.tlbs {
        row(&mut o, c);
    }
    let _ = writeln!(
        o,
        "page walks: {} ({} page-table reads)",
        thousands(r.page_walks),
        thousands(r.walk_refs)
    );
    for t in &r.threads {
        let _ = writeln!(
            o,
            "# thread {}: {} page walks",
            t.thread,
            thousands(t.page_walks)
        );
        for c in &t.tlbs {
            row(&mut o, c);
        }
    }
    o
}

/// One pass of the multi-core model `sim`, run by `pass` (a first pass or another), with
/// `tlb` (per-thread TLBs) in front of it feeding it the walks' page-table reads, or beside
/// it with `no_walks`. Returns the TLBs' counts.
pub fn multicore_pass(
    sim: &mut dyn Analysis,
    tlb: Option<TlbSim>,
    no_walks: bool,
    pass: impl FnOnce(&mut [&mut dyn Analysis]) -> Result<u64>,
) -> Result<Option<TlbReport>> {
    match tlb {
        None => pass(&mut [sim]).map(|_| None),
        Some(mut tlb) if no_walks => {
            pass(&mut [sim, &mut tlb])?;
            Ok(Some(tlb.finish()))
        }
        Some(tlb) => {
            let mut walked = Walked::new(tlb, sim);
            pass(&mut [&mut walked])?;
            Ok(Some(walked.finish().0))
        }
    }
}
