//! `cachescope advise TRACE|-- PROGRAM [simulate's cache flags, --cores]`: what to change and
//! what it gains. The evidence pass (`cachescope::advice::Collect`, and with cores the sharing
//! model's second pass), the candidates it calls for, each simulated with its change as
//! `whatif` simulates it (so every finding's `whatif` command reproduces its numbers), ranked.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::args::heading;
use anyhow::{Result, bail};
use cachescope::advice::{self, Advice, Options};
use cachescope::layout::geometry_label;
use cachescope::sim::Geometry;
use cachescope::units::thousands;
use clap::Args;

use super::simulate::{self, SimulateArgs};
use super::whatif::{self, Recorded};
use super::{drive, drive_again};
use crate::input;
use crate::output::{self, Format, Output};

#[derive(Debug, Args)]
pub struct AdviseArgs {
    #[command(flatten)]
    pub sim: SimulateArgs,
    /// The event log naming the structures [default: TRACE.events].
    #[arg(help_heading = heading::INPUT, long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The program, for a trace without a memory map (a non-PIE executable).
    #[arg(help_heading = heading::INPUT, long, value_name = "PROGRAM")]
    pub exe: Option<PathBuf>,
    /// Findings on the terminal (all of them in --json and --csv).
    #[arg(help_heading = heading::OUTPUT, long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

fn g(s: &str) -> Geometry {
    Geometry::parse(s).expect("a valid default geometry")
}

/// The machine when no cache flag is given: 32 KiB L1s over a 1 MiB L2; with --cores, each
/// core's 32 KiB L1 over a shared 8 MiB last level (`sharing`'s machine).
fn default_machine(sim: &mut SimulateArgs) {
    let given = !sim.caches.is_empty()
        || [sim.i1, sim.d1, sim.l1, sim.l2, sim.ll, sim.l3]
            .iter()
            .any(Option::is_some);
    if given {
        return;
    }
    if sim.cores.is_some() {
        sim.l1 = Some(g("32K,8,64"));
        sim.ll = Some(g("8M,16,64"));
        sim.shared = vec!["LL".into()];
    } else {
        sim.i1 = Some(g("32K,8,64"));
        sim.d1 = Some(g("32K,8,64"));
        sim.l2 = Some(g("1M,16,64"));
    }
}

/// The first data level, the one below it, and the last level.
fn levels(sim: &SimulateArgs) -> Result<(Geometry, Option<Geometry>, Geometry)> {
    let first = sim.d1.or(sim.l1).or(sim.caches.first().copied());
    let Some(first) = first else {
        bail!("advise needs a first data level: --D1, --L1 or --cache");
    };
    let below: Vec<Geometry> = [sim.l2, sim.ll, sim.l3].into_iter().flatten().collect();
    let next = below.first().copied().or(sim.caches.get(1).copied());
    let last = below.last().copied().unwrap_or(first);
    Ok((first, next, last))
}

/// The cache flags as a `whatif` command gives them.
fn machine_flags(sim: &SimulateArgs) -> String {
    let mut f = String::new();
    if let Some(c) = sim.cores {
        let _ = write!(f, " --cores {c}");
    }
    for (flag, geometry) in [
        ("--I1", sim.i1),
        ("--D1", sim.d1),
        ("--L1", sim.l1),
        ("--L2", sim.l2),
        ("--LL", sim.ll),
        ("--L3", sim.l3),
    ] {
        if let Some(g) = geometry {
            let _ = write!(f, " {flag} {}", geometry_label(&g));
        }
    }
    for c in &sim.caches {
        let _ = write!(f, " --cache {}", geometry_label(c));
    }
    if !sim.shared.is_empty() {
        let _ = write!(f, " --shared {}", sim.shared.join(","));
    }
    if let Some(q) = sim.quantum {
        let _ = write!(f, " --quantum {q}");
    }
    for (t, c) in &sim.pins {
        let _ = write!(f, " --pin {t}:{c}");
    }
    if sim.policy != cachescope::sim::Policy::Lru {
        let _ = write!(f, " --policy {}", sim.policy.name());
    }
    if sim.writebacks {
        f += " --writebacks";
    }
    if sim.write_allocate == crate::args::YesNo::No {
        f += " --write-allocate no";
    }
    if sim.straddle {
        f += " --straddle";
    }
    f
}

pub fn run(mut args: AdviseArgs) -> Result<()> {
    if args.sim.cachegrind {
        bail!("advise simulates caches, hierarchies or --cores, not --cachegrind");
    }
    if args.sim.input.thread.is_some() {
        bail!("advise looks at every thread (false sharing needs them all): drop --thread");
    }
    if !args.sim.prefetch.is_empty() {
        bail!("advise predicts prefetching itself: drop --prefetch");
    }
    default_machine(&mut args.sim);
    let source = whatif::recorded(&mut args.sim, args.events.clone())?;
    let advice = advise(&mut args, &source)?;
    output::emit(
        &Printed {
            advice,
            top: args.top,
        },
        Format::from_flags(args.sim.json, args.sim.csv),
    )
}

/// The evidence pass, the candidates, their simulations, the ranking.
fn advise(args: &mut AdviseArgs, source: &Recorded) -> Result<Advice> {
    let (first, next, last) = levels(&args.sim)?;
    let sharing = args.sim.cores.map(|cores| cachescope::sharing::Options {
        l1: first,
        ll: last,
        cores: Some(cores),
        schedule: {
            let interleave = args
                .sim
                .interleave
                .unwrap_or(super::simulate::InterleaveArg::Time)
                .into();
            match args.sim.quantum {
                Some(quantum) => cachescope::cores::Schedule {
                    interleave,
                    quantum,
                },
                None => cachescope::cores::Schedule::with_default_quantum(interleave),
            }
        },
        // Every shared line: a line without coherence misses may be latent false sharing.
        all: true,
    });
    let options = Options {
        l1: first,
        next,
        sharing,
    };
    let log = source.events.as_deref();
    let exe = args.exe.as_deref();
    let mut trace = input::open(&args.sim.input, args.sim.run.line_size)?;
    let run = &args.sim.run;
    let (candidates, mut notes) =
        advice::evidence(&mut trace, &options, log, exe, |t, job, again| {
            if again {
                drive_again(t, job, run)
            } else {
                drive(t, job, run)
            }
        })?;
    let before = whatif::misses(&simulate::simulate(&args.sim, &mut |i, l| {
        input::open(i, l)
    })?);
    let mut predicted = Vec::new();
    for c in &candidates {
        if c.estimate.is_some() {
            predicted.push(None);
            continue;
        }
        let saved = (args.sim.prefetch.clone(), args.sim.prefetch_distance);
        if let Some((kind, distance)) = &c.prefetch {
            args.sim.prefetch = vec![kind.clone()];
            args.sim.prefetch_distance = *distance;
        }
        let (after, _) = whatif::changed(&args.sim, &c.changes, source, exe)?;
        (args.sim.prefetch, args.sim.prefetch_distance) = saved;
        predicted.push(Some(whatif::misses(&after)));
    }
    let trace_name = source.trace.display().to_string();
    if source.temporary() {
        notes.push(format!(
            "the whatif commands name {trace_name}, a temporary recording: give --save TRACE to keep it"
        ));
    }
    let command = format!("cachescope whatif {trace_name}{}", machine_flags(&args.sim));
    Ok(Advice {
        findings: advice::rank(candidates, &before, predicted, &command),
        notes,
    })
}

/// What `advise` prints.
struct Printed {
    advice: Advice,
    top: usize,
}

impl Output for Printed {
    fn json(&self) -> Result<String> {
        output::json(&self.advice)
    }

    /// One row per finding.
    fn csv(&self) -> Result<String> {
        let rows: Vec<serde_json::Value> = self
            .advice
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| {
                serde_json::json!({
                    "rank": i + 1,
                    "kind": f.kind,
                    "structure": f.structure,
                    "saved": f.saved,
                    "estimate": f.estimate,
                    "change": f.change,
                    "whatif": f.whatif,
                })
            })
            .collect();
        Ok(output::csv_records(&rows))
    }

    fn table(&self) -> String {
        let mut o = String::new();
        if self.advice.findings.is_empty() {
            o += "nothing to change: no finding saves misses\n";
        }
        for (i, f) in self.advice.findings.iter().take(self.top).enumerate() {
            let saved = if f.estimate {
                "estimated to save"
            } else {
                "saves"
            };
            let _ = writeln!(
                o,
                "{}. {} {}: {saved} {} misses",
                i + 1,
                f.kind.name(),
                f.structure,
                thousands(f.saved.max(0) as u64)
            );
            let _ = writeln!(o, "   change:   {}", f.change);
            if let Some(s) = f.evidence.get("summary").and_then(|s| s.as_str()) {
                let _ = writeln!(o, "   evidence: {s}");
            }
            if !f.code.is_empty() {
                let _ = writeln!(
                    o,
                    "   code:     {}",
                    f.code
                        .iter()
                        .take(4)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let mut levels: Vec<String> = f
                .levels
                .iter()
                .filter(|l| l.level != "L1I")
                .map(|l| {
                    format!(
                        "{} {} → {}",
                        l.level,
                        thousands(l.misses),
                        thousands(l.misses_after)
                    )
                })
                .collect();
            if let (Some(b), Some(a)) = (f.coherence_misses, f.coherence_misses_after) {
                levels.push(format!("coherence {} → {}", thousands(b), thousands(a)));
            }
            let est = if f.estimate { " (estimate)" } else { "" };
            let _ = writeln!(o, "   misses:   {}{est}", levels.join(", "));
            if let Some(w) = &f.whatif {
                let _ = writeln!(o, "   whatif:   {w}");
            }
        }
        if self.advice.findings.len() > self.top {
            let _ = writeln!(
                o,
                "… {} more (--top N, or --json)",
                self.advice.findings.len() - self.top
            );
        }
        for n in &self.advice.notes {
            let _ = writeln!(o, "# {n}");
        }
        o
    }
}
