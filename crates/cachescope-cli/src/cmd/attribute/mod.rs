//! `cachescope attribute`: misses and evictions by stat bucket and code line, exact beside
//! sampled (Buck & Hollingsworth Tables 1–5), the monitor's cost, per-bucket curves.

use crate::args::heading;
use std::path::PathBuf;

use anyhow::{Context, Result};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{Attribution, run_id};
use cachescope::pass::Analyses;
use cachescope::sim::Geometry;
use clap::Args;

use super::drive;
use crate::args::{InputArgs, RunArgs, SampledArgs, SampledRateArgs, values};
use crate::input;
use crate::output::{self, Format};

mod callgraph;
mod fields;
mod options;
mod per_structure;
mod per_thread;
mod table;
mod tlb;
mod usage;
use options::options;
use table::Table;

#[derive(Debug, Args)]
pub struct AttributeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The simulated cache, SIZE,ASSOC,LINE (LRU); the default is the paper's.
    #[arg(help_heading = heading::CACHE, long, value_name = "SPEC", default_value = "64K,4,32", value_parser = values::geometry)]
    pub cache: Geometry,
    /// The monitor samples 1 in N misses on average (randomized intervals, seeded by --seed).
    #[arg(help_heading = heading::SAMPLING, long = "sample-period", visible_alias = "sample", value_name = "N", default_value_t = 25_000)]
    pub sample: u64,
    /// The event log (memory map, allocations, frees) [default: TRACE.events if present].
    #[arg(help_heading = heading::INPUT, long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The program, for a trace without an event log: its variables are taken at their link
    /// addresses (right for a non-PIE executable) and its code lines resolve.
    #[arg(help_heading = heading::INPUT, long, value_name = "PROGRAM")]
    pub exe: Option<PathBuf>,
    /// Cache lines the monitor's handler touches per sample (the cost model's footprint).
    #[arg(help_heading = heading::ANALYSIS, long, value_name = "K", default_value_t = 32)]
    pub handler_lines: u64,
    /// Rows per table on the terminal.
    #[arg(help_heading = heading::OUTPUT, long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Skip the monitor-cost simulations (four more caches): `monitor_cost` stays empty.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub no_cost: bool,
    /// Skip the per-bucket miss-ratio curves (per-reference stack distances): `mrc` stays
    /// empty. With --no-cost, about three times faster: for repeated runs (several --seed).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub no_mrc: bool,
    /// Track line utilization (Callgrind's --cacheuse idea): the bytes of each fetched line
    /// touched while it was resident, charged to the bucket and code line whose miss fetched
    /// it: `used_bytes`, `fetched_bytes` and `utilization` (0-1) per bucket, code line and load
    /// (docs/hardware.md). About doubles the attribution's time.
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub utilization: bool,
    /// Track dirty lines (write-allocate) and count write-backs by bucket: each bucket's
    /// `writebacks` (its dirty lines evicted, charged like the line's fetch) and the total
    /// `writebacks`, which `simulate --cache SPEC --writebacks` counts too (docs/hardware.md).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub writebacks: bool,
    /// Count references, misses and the bytes used of each fetched line per field of every
    /// structure (globals and locals from the debug information's types, heap blocks from the
    /// pointer they are stored in, else fields by offset within the element size their
    /// instructions step by): `structures` in --json (implies --utilization).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub fields: bool,
    /// Also write the counts per source line as a Cachegrind output file (events Ir, Dr,
    /// D1mr, Dw, D1mw and the sampled misses SD1mr, SD1mw) for `cg_annotate FILE` or
    /// KCachegrind.
    #[arg(help_heading = heading::OUTPUT, long, value_name = "FILE")]
    pub cachegrind_out: Option<PathBuf>,
    /// Print the call graph instead of the attribution: per function, its own and inclusive
    /// references and misses at every level (Cachegrind's model, --I1/--D1/--LL), its calls
    /// per caller, the structures its subtree misses on (docs/callgraph.md). Inclusive costs
    /// need a recording with call events (`record`'s default).
    #[arg(help_heading = heading::ANALYSIS, long)]
    pub callgraph: bool,
    /// Also write the call graph as a Callgrind output file, for `callgrind_annotate
    /// --inclusive=yes FILE` or KCachegrind; with --per-thread, FILE-01, FILE-02… one per
    /// thread (Callgrind's --separate-threads).
    #[arg(help_heading = heading::OUTPUT, long, value_name = "FILE")]
    pub callgrind_out: Option<PathBuf>,
    /// The call graph's I1 (Cachegrind's --I1).
    #[arg(help_heading = heading::CACHE, long = "I1", value_name = "SPEC", default_value = "32K,8,64", value_parser = values::geometry)]
    pub i1: Geometry,
    /// The call graph's D1 (Cachegrind's --D1).
    #[arg(help_heading = heading::CACHE, long = "D1", value_name = "SPEC", default_value = "32K,8,64", value_parser = values::geometry)]
    pub d1: Geometry,
    /// The call graph's LL (Cachegrind's --LL; another set count is reshaped as Cachegrind
    /// reshapes it).
    #[arg(help_heading = heading::CACHE, long = "LL", value_name = "SPEC", default_value = "8M,16,64", value_parser = values::geometry)]
    pub ll: Geometry,
    #[command(flatten)]
    pub tlb: crate::args::TlbArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    #[command(flatten)]
    pub rate: SampledRateArgs,
    #[command(flatten)]
    pub per_structure: per_structure::PerStructureArgs,
    /// Print JSON: buckets, evictions, lines, lines_by_misses, loads, monitor_cost, mrc, notes.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: one row per bucket (the JSON's `buckets`).
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
    /// One attribution per thread, each thread's references alone in a cache of its own:
    /// JSON {"threads": [{"thread": ID, …the attribution's fields}]}.
    /// With --callgraph or --callgrind-out: a call graph per thread (their costs in the one
    /// simulated cache, as Callgrind's --separate-threads splits them).
    #[arg(long, conflicts_with_all = ["thread", "cachegrind_out"])]
    pub per_thread: bool,
    /// `--line-size` was given on the command line (set by `args::note_explicit`).
    #[arg(skip)]
    pub line_size_given: bool,
}

pub fn run(mut args: AttributeArgs) -> Result<()> {
    let geometry = args.cache;
    // TLBs checked before any program runs.
    let tlb = args.tlb.config(args.input.params.seed)?;
    if args.sample == 0 {
        anyhow::bail!("--sample-period N needs N ≥ 1 (1 samples every miss)");
    }
    // The simulated cache's lines are --cache's; a --line-size given that differs from them
    // would be ignored, so it is refused (the default asks for nothing).
    let line = args.run.line_size.bytes();
    if args.line_size_given && line != geometry.line_size().bytes() {
        let size = cachescope::units::axis_bytes(geometry.size_bytes() as f64);
        anyhow::bail!(
            "--line-size {line}: attribute simulates the lines of --cache ({size},{},{}, \
             {}-byte lines); give --cache {size},{},{line} to simulate {line}-byte lines",
            geometry.assoc(),
            geometry.line_size().bytes(),
            geometry.line_size().bytes(),
            geometry.assoc()
        );
    }
    // Created before the run, so an unwritable path fails at once; renamed into place at the
    // end, removed if anything fails.
    let cachegrind_out = match &args.cachegrind_out {
        Some(p) => Some(output::Pending::create(p).context("--cachegrind-out")?),
        None => None,
    };
    // What the file's `cmd:` line names: the program's command line, else the trace.
    let cmd = if args.input.program.is_empty() {
        match (&args.input.trace, &args.input.workload) {
            (Some(t), _) => t.display().to_string(),
            (None, Some(w)) => format!("workload {w}"),
            (None, None) => "-".into(),
        }
    } else {
        args.input
            .program
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A program: recorded first, with its allocation events (which the attribution reads
    // from the start of the pass, before the program could produce them), into --save's file
    // or a temporary one; then attributed like any recorded trace.
    // Under --sampled (with neither --save nor the outputs that refuse it) a program runs
    // under the tool's line filter instead, its events feeding the attribution as they come,
    // as `report --sampled -- PROGRAM`'s do.
    let sampled_live = args.sampled.sampled
        && !args.input.program.is_empty()
        && args.input.live.save.is_none()
        && !(args.per_thread
            || args.cachegrind_out.is_some()
            || (args.callgrind_out.is_some() && !args.callgraph)
            || tlb.is_some());
    let recorded_now = !args.input.program.is_empty() && !sampled_live;
    let _recorded = if !recorded_now {
        None
    } else {
        let dir = tempfile::tempdir()?;
        let path = match &args.input.live.save {
            Some(p) => p.clone(),
            None => dir.path().join("program.cst"),
        };
        let capture = crate::program::Capture::new(
            &args.input.live,
            cachescope::record::ProgramOutput::Stderr,
        );
        let format = cachescope::trace::Format::Native;
        super::record::record(
            &args.input.program,
            &path,
            format,
            &args.run,
            false,
            &capture,
            args.input.live.save.is_some(),
        )?;
        args.input.program.clear();
        args.input.live.save = None;
        args.input.trace = Some(path);
        Some(dir)
    };
    // The event log: --events, else TRACE.events beside a trace file.
    let events_path = args.events.clone().or_else(|| {
        let trace = args.input.trace_file()?;
        Some(sidecar_path(trace)).filter(|p| p.exists())
    });
    let log = match &events_path {
        Some(p) => Some(EventReader::open(p)?),
        None => None,
    };
    // A thread's references are kept by the attribution, not by a filter on the trace: the
    // event log's positions count every thread's records.
    let thread = args.input.thread.take();
    // A call graph samples the lines of its D1 (and LL), not --cache's.
    let sampled_line = if args.callgraph {
        args.d1.line_size()
    } else {
        geometry.line_size()
    };
    let spatial = args
        .sampled
        .spatial(args.rate.rate, args.input.params.seed, sampled_line);
    let (mut trace, live) = match spatial.filter(|_| sampled_live) {
        Some(s) => {
            let events = !args.input.live.no_events;
            // A call graph's misses are scaled by a fixed rate (no --sample-lines cap);
            // without one the tool leaves the call events out (they cost it).
            let s = callgraph::live_spatial(&mut args, s);
            input::open_sampled(
                &args.input,
                args.run.line_size,
                (s, None),
                events,
                args.run.quiet,
            )?
        }
        None => (input::open(&args.input, args.run.line_size)?, None),
    };
    // An event log read beside another recording's trace would name the wrong program's
    // variables and functions.
    if let (Some(log), Some(path)) = (&log, &events_path) {
        if let Some(warning) = run_id::check(&trace, &log.header, path)? {
            if !args.run.quiet {
                eprintln!("cachescope: warning: {warning}");
            }
        }
    }
    // A recorded program's command line, as its event log names it, for the `cmd:` line.
    let cmd = match &log {
        Some(log) if !log.header.program.is_empty() && !recorded_now => log.header.program.clone(),
        _ => cmd,
    };
    let other_outputs = args.per_thread
        || cachegrind_out.is_some()
        || args.callgraph
        || args.callgrind_out.is_some()
        || tlb.is_some();
    args.per_structure.check(other_outputs, spatial.is_some())?;
    if spatial.is_some()
        && (args.per_thread
            || cachegrind_out.is_some()
            || (args.callgrind_out.is_some() && !args.callgraph)
            || tlb.is_some())
    {
        anyhow::bail!(
            "--sampled attributes one stream: drop --per-thread, --cachegrind-out, \
             --callgrind-out (or give --callgraph with it) and the TLB flags"
        );
    }
    // `--pages recorded`: the huge pages the event log says the program had.
    let (rules, page_notes) = args.tlb.rules(events_path.as_deref())?;
    // The call graph instead of the attribution; per thread, Callgrind's files per thread.
    if args.callgraph || (args.per_thread && args.callgrind_out.is_some()) {
        let events = callgraph::events(log, live);
        return callgraph::run(&mut trace, &args, events, &cmd, (thread, spatial));
    }
    if args.per_thread {
        let tlb = tlb.map(|c| (c, rules));
        return per_thread::run(&mut trace, &args, events_path.as_deref(), log, tlb);
    }
    // --callgrind-out beside the attribution: the call graph in the same pass, reading the
    // event log on its own.
    let mut graph = match &args.callgrind_out {
        Some(_) => {
            let log = events_path.as_deref().map(EventReader::open).transpose()?;
            Some(callgraph::analysis(&args, thread, log)?)
        }
        None => None,
    };
    let had_events = log.is_some() || live.is_some();
    let events = callgraph::events(log, live);
    let mut opts = options(&args, cachegrind_out.is_some());
    // --sampled: the sampled lines in a miniature of the cache, counts scaled at the end
    // (docs/sampled.md); the monitor's cost and the per-structure curves need every line.
    if let Some(s) = spatial {
        trace.sampled(s, None)?;
        opts.geometry = cachescope::report::sampled::miniature(geometry, s.rate)?;
        opts.cost = None;
        opts.mrc = false;
    }
    let mut attribution = Attribution::new(opts, events)?;
    // --sampled: only the sampled lines at the miniature's own rate, where it is lower.
    let mut scale_rate = spatial.map(|s| s.rate);
    if let Some(s) = spatial
        && let Some(r) = cachescope::report::sampled::miniature_rate(geometry, s.rate)?
    {
        attribution = attribution.sub_sampled(r, s.line_size)?;
        scale_rate = Some(r);
    }
    let seed = args.input.params.seed;
    attribution = args.per_structure.apply(attribution, seed)?;
    if let Some(c) = &tlb {
        attribution = attribution.with_tlb(c, &rules)?;
    }
    if let Some(t) = thread {
        attribution = attribution.only_thread(t);
    }
    let mut spans = cachescope::method::Spans::default();
    // Under --thread, that thread's references in the full stream.
    let mut thread_spans = thread.map(|thread| cachescope::method::ThreadSpans { thread, data: 0 });
    {
        let mut parts: Vec<&mut dyn cachescope::analysis::Analysis> =
            vec![&mut attribution, &mut spans];
        if let Some(t) = &mut thread_spans {
            parts.push(t);
        }
        if let Some(g) = &mut graph {
            parts.push(g);
        }
        drive(&mut trace, Analyses(&mut parts), &args.run)?;
    }
    attribution.check_thread()?;
    let per_structure_note = args.per_structure.note(attribution.full_rate_lines());
    if let (Some(g), Some(path)) = (graph, &args.callgrind_out) {
        let report = g.finish().context("the call graph")?;
        callgraph::write_files(&report, path, &cmd, false)?;
    }
    let mut report = attribution.finish().with_context(|| match &events_path {
        Some(p) => format!("reading the event log {}", p.display()),
        None => "attributing".into(),
    })?;
    if !had_events {
        report.notes.insert(0, NO_LOG.into());
    }
    report.notes.extend(per_structure_note);
    if let Some(rate) = scale_rate {
        report.scale_sampled(geometry, rate);
        // The spans count every data reference (of the thread, under --thread): the miss
        // ratio is then SHARDS's adjusted one, with or without --thread.
        report.data_refs = thread_spans.map_or(spans.0, |t| t.data);
    }
    if tlb.is_some() {
        report.notes.extend(page_notes);
    }
    if let (Some((pending, mut file)), Some(path)) = (cachegrind_out, &args.cachegrind_out) {
        use std::io::Write as _;
        let text = cachescope::attribution::cachegrind_out::render(&report, &cmd);
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))?;
        drop(file);
        pending.commit()?;
    }
    let out = Table {
        report,
        top: args.top,
    };
    output::emit_sampled(
        &out,
        Format::from_flags(args.json, args.csv),
        spatial,
        "mini",
    )
}

/// The note of an attribution without an event log.
const NO_LOG: &str = "no event log (TRACE.events): no memory map and no allocation events";
