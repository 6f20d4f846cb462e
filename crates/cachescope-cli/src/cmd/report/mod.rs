//! `cachescope report`: every analysis in one pass over a trace, a workload or a recorded
//! program, written as report.html, report.json and figures/ (the `cachescope-report` crate).

use crate::args::heading;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{EventSource, run_id};
use cachescope::pass::{Analyses, Independent};
use cachescope::trace::Trace;
use cachescope::workloads::Workload;
use cachescope_report::collect::{CollectOptions, Collector};
use cachescope_report::write::Written;
use cachescope_report::{Report, write};
use clap::Args;

use super::drive;

mod live_log;
mod program;
mod sampled;
mod summary;

use crate::args::{
    InputArgs, LiveArgs, ReadArgs, ReportOptions, RunArgs, SampledArgs, WorkloadParams, values,
};
use crate::input;
use crate::progress::Progress;
use cachescope::spatial::SpatialOptions;
pub use summary::print_summary;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The trace: a file, or `-` for stdin. Format and compression are detected from the content.
    #[arg(help_heading = heading::ARGUMENTS, value_name = "TRACE", required_unless_present_any = ["workload", "program"])]
    pub trace: Option<PathBuf>,
    /// Report on a built-in workload instead of a trace (see `cachescope generate --list`).
    #[arg(help_heading = heading::INPUT, long, value_name = "NAME", conflicts_with_all = ["trace", "program"], value_parser = values::workload)]
    pub workload: Option<Workload>,
    /// The directory to write report.html, report.json and figures/ into (created if needed;
    /// removed again if this run created it and fails).
    #[arg(help_heading = heading::OUTPUT, short, long, value_name = "DIR", default_value = "cachescope-report")]
    pub output: PathBuf,
    #[command(flatten)]
    pub report: ReportOptions,
    #[command(flatten)]
    pub params: WorkloadParams,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print what was written as one JSON object instead of the summary table.
    #[arg(help_heading = heading::OUTPUT, long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the summary table as CSV.
    #[arg(help_heading = heading::OUTPUT, long)]
    pub csv: bool,
    /// A program to report on as it runs under Valgrind, after `--` (its trace kept only in
    /// --save's file).
    #[arg(help_heading = heading::ARGUMENTS, value_name = "PROGRAM", last = true, num_args = 1.., conflicts_with = "trace")]
    pub program: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub sampled: SampledArgs,
    /// With --sampled: the report's call-graph section (calls and instructions exact, misses
    /// estimated), from a recorded trace's call events or, with -- PROGRAM, from call events
    /// the tool's sampled stream then carries. Off by default: it costs CPU on call-heavy
    /// programs (docs/callgraph.md); the report's notes say when a trace had call events.
    #[arg(help_heading = heading::SAMPLING, long, requires = "sampled")]
    pub sampled_calls: bool,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let options = CollectOptions {
        sampled_calls: args.sampled_calls,
        ..collect_options(&args.report, &args.params, &args.run, args.sampled.sampled)
    };
    let sampled = args
        .sampled
        .spatial(args.report.rate, args.params.seed, args.run.line_size);
    // The per-structure sample reads the trace file again with its event log: a live run's
    // stream, standard input and a workload have neither.
    let with_log = args
        .trace
        .as_deref()
        .is_some_and(|p| p.as_os_str() != "-" && sidecar_path(p).is_file());
    if args.report.per_structure && (sampled.is_none() || !args.program.is_empty() || !with_log) {
        anyhow::bail!(
            "--per-structure needs --sampled and a recorded trace file with its event log \
             beside it (report --sampled --per-structure TRACE); a live run keeps the \
             uniform line sample"
        );
    }
    if let Some(program) = args.program.first() {
        return program::report(program, &args, options, sampled);
    }
    let input = InputArgs {
        trace: args.trace,
        workload: args.workload,
        params: args.params,
        read: args.read,
        program: Vec::new(),
        live: args.live,
        thread: None,
    };
    let mut trace = input::open(&input, args.run.line_size)?;
    // A recorded trace's event log (TRACE.events) adds the data-structure attribution, if it
    // is this trace's.
    let mut program = None;
    let events = match &input.trace {
        Some(path) if sidecar_path(path).is_file() => {
            let log = sidecar_path(path);
            let reader = EventReader::open(&log)?;
            if let Some(warning) = run_id::check(&trace, &reader.header, &log)? {
                if !args.run.quiet {
                    eprintln!("cachescope: warning: {warning}");
                }
            }
            // The log names the program recorded: the page names it beside the trace.
            program = Some(reader.header.program.clone()).filter(|p| !p.is_empty());
            Some(Box::new(reader) as EventSource<'static>)
        }
        _ => None,
    };
    let named = Named {
        source: None,
        program,
    };
    // The threads section reads a trace file again (not standard input).
    let file = input.trace_file();
    let again = file.map(|path| Again {
        trace: path,
        read: &input.read,
        stream: None,
        advise: args.report.advise,
        per_structure: args.report.per_structure,
    });
    let (report, written) = make(
        &mut trace,
        (options, sampled),
        events,
        named,
        again,
        &args.output,
        &args.run,
    )?;
    print_summary(&report, &written, args.json, args.csv)
}

/// The trace file the threads section reads again ([`cachescope::report::threads`]), with
/// its event log beside it when there is one.
#[derive(Clone, Copy)]
pub struct Again<'a> {
    pub trace: &'a Path,
    pub read: &'a ReadArgs,
    /// `trace` is the Valgrind tool's sampled stream of a `--sampled -- PROGRAM` run, kept as
    /// it was read, filtered with these options (not a trace file).
    pub stream: Option<SpatialOptions>,
    /// Add the "What to change" section (`--advise`).
    pub advise: bool,
    /// Under `--sampled`, attribute by the per-structure line sample (`--per-structure`).
    pub per_structure: bool,
}

impl Again<'_> {
    /// Opens the input again.
    fn open(&self) -> Result<Trace> {
        let Some(options) = self.stream else {
            return input::open_path(self.trace, self.read);
        };
        let source = cachescope::Source::File(self.trace.to_owned());
        let file = std::fs::File::open(self.trace)
            .with_context(|| format!("opening {}", self.trace.display()))?;
        let reader = cachescope::record::tool_spatial::SpatialReader::new(
            file,
            source.clone(),
            options,
            None,
        )?;
        Ok(Trace::from_reader(Box::new(reader), source))
    }
}

/// The library's options from the flags.
pub fn collect_options(
    report: &ReportOptions,
    params: &WorkloadParams,
    run: &RunArgs,
    sampled: bool,
) -> CollectOptions {
    CollectOptions {
        line_size: run.line_size,
        seed: params.seed,
        // Under --sampled, --rate is the lines' share and StatCache keeps its default.
        sample_rate: report.rate.filter(|_| !sampled).unwrap_or(1e-3),
        phase_interval: report.interval,
        ways: report.ways,
        ..CollectOptions::default()
    }
}

/// What a report names beyond its trace's own name.
#[derive(Debug, Default)]
pub struct Named {
    /// What was analysed, when the trace's own name would not say it (a recorded program).
    pub source: Option<String>,
    /// The recorded program's command line, when known.
    pub program: Option<String>,
}

/// One pass over `trace` (with a progress bar; a sampled one with the filter's options),
/// the models, the figures, the files; with `events`, the trace's event log, also the
/// data-structure attribution; `named` says what was analysed where the trace's name does
/// not. A trace of several threads is read `again` for the threads section.
pub fn make(
    trace: &mut Trace,
    (options, sampled): (CollectOptions, Option<SpatialOptions>),
    events: Option<EventSource<'static>>,
    named: Named,
    again: Option<Again<'_>>,
    dir: &Path,
    run: &RunArgs,
) -> Result<(Report, Written)> {
    let report = match (sampled, again) {
        // A trace file with its event log, asked for: the per-structure attribution beside
        // the pass.
        (Some(spatial), Some(a)) if a.per_structure && a.stream.is_none() && events.is_some() => {
            sampled::analyse_beside(trace, options, spatial, events, named, run, a)?
        }
        _ => analyse(trace, options, sampled, events, named, run)?,
    };
    complete(report, again, dir, run)
}

/// [`make`]'s pass over `trace` and the models after it: the report without its threads
/// section; with `sampled`, the sampled report of the trace read as a sampled stream.
pub fn analyse(
    trace: &mut Trace,
    options: CollectOptions,
    sampled: Option<SpatialOptions>,
    events: Option<EventSource<'static>>,
    named: Named,
    run: &RunArgs,
) -> Result<Report> {
    if let Some(spatial) = sampled {
        return sampled::analyse(trace, options, spatial, events, named, run);
    }
    let mut collector = Collector::new(options)?.with_threads(run.threads);
    if let Some(events) = events {
        collector = collector.with_attribution(events)?;
    }
    // Independent analyses shared out over the threads (one decode).
    if run.threads > 1 {
        drive(trace, Independent(&mut collector.analyses_send()), run)?;
    } else {
        drive(trace, Analyses(&mut collector.analyses()), run)?;
    }
    let stages = collector.stages();
    let mut report = Progress::stages(run.quiet, "after the pass", stages, || {
        collector.finish(trace)
    })?;
    if let Some(source) = named.source {
        report.source = source;
    }
    report.program = named.program;
    Ok(report)
}

/// The rest of [`make`] after [`analyse`]: the threads section (reading the trace `again`),
/// the notes, the files in `dir`.
pub fn complete(
    mut report: Report,
    again: Option<Again<'_>>,
    dir: &Path,
    run: &RunArgs,
) -> Result<(Report, Written)> {
    let quiet = run.quiet;
    if report.threads.is_some() {
        let mut pass = super::passes(run);
        pass.hooks().notes = false;
        let log = again.map(|a| sidecar_path(a.trace)).filter(|l| l.is_file());
        let mut reopen = again.map(|a| move || a.open());
        let sampled = report.sampled.as_ref().map(|s| s.spatial(run.line_size));
        Progress::stage(quiet, "the threads section", || match sampled {
            Some(spatial) => cachescope::report::sampled::threads::complete(
                &mut report,
                reopen.as_mut().map(|f| f as _),
                &mut pass,
                log.as_deref(),
                spatial,
            ),
            None => cachescope::report::threads::complete(
                &mut report,
                reopen.as_mut().map(|f| f as _),
                &mut pass,
                log.as_deref(),
            ),
        })?;
    }
    if let Some(a) = again.filter(|a| a.advise) {
        let mut pass = super::passes(run);
        pass.hooks().notes = false;
        let log = Some(sidecar_path(a.trace)).filter(|l| l.is_file());
        let machine = match report.threads.as_ref().map(|t| t.ids.len() as u32) {
            Some(threads) if threads > 1 => {
                cachescope::advice::Machine::default_cores(threads.min(64))
            }
            _ => cachescope::advice::Machine::default_single(),
        };
        let name = a.trace.display().to_string();
        let advice = Progress::stage(quiet, "what to change", || {
            cachescope::advice::advise(a.trace, log.as_deref(), None, &machine, &name, &mut pass)
        })?;
        report.what_to_change = Some(cachescope::report::advice::what_to_change(
            &advice,
            &machine.flags(),
        ));
        report.figures = cachescope::report::catalog::list(&report);
    }
    if !run.quiet {
        for note in &report.notes {
            eprintln!("cachescope: note: {note}");
        }
    }
    let written = Progress::stage(quiet, "drawing the figures", || write::write(&report, dir))
        .with_context(|| format!("writing the report into {}", dir.display()))?;
    Ok((report, written))
}
