//! `cachescope report`: every analysis in one pass over a trace, a workload or a recorded
//! program, written as report.html, report.json and figures/ (the `cachescope-report` crate).

use crate::args::heading;
use std::fmt::Write as _;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Context, Result};
use cachescope::attribution::events::{EventReader, sidecar_path};
use cachescope::attribution::{EventSource, run_id};
use cachescope::pass::{Analyses, Independent};
use cachescope::trace::Trace;
use cachescope::units::{self, Precision, format_bytes, size_label, thousands};
use cachescope::workloads::Workload;
use cachescope_report::collect::{CollectOptions, Collector};
use cachescope_report::write::Written;
use cachescope_report::{Report, write};
use clap::Args;

use super::drive;
use crate::args::{InputArgs, LiveArgs, ReadArgs, ReportOptions, RunArgs, WorkloadParams, values};
use crate::input;
use crate::output::{self, CreatedDir, Format, Output};
use crate::program::Capture;
use crate::progress::Progress;

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
    /// A program to record under Valgrind and report on, after `--` (its trace kept in
    /// DIR/PROGRAM.cst, or --save's file).
    #[arg(help_heading = heading::ARGUMENTS, value_name = "PROGRAM", last = true, num_args = 1.., conflicts_with = "trace")]
    pub program: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub fn run(args: ReportArgs) -> Result<()> {
    let options = collect_options(&args.report, &args.params, &args.run);
    if let Some(program) = args.program.first() {
        return report_program(program, &args, options);
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
    let file = input.trace.as_deref().filter(|p| p.as_os_str() != "-");
    let again = file.map(|path| Again {
        trace: path,
        read: &input.read,
    });
    let (report, written) = make(
        &mut trace,
        options,
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
}

/// Records the program into `DIR/PROGRAM.cst` (or `--save`'s file) with its event log beside
/// it (`cachescope record`), then reports on that trace, so the report has the data-structure
/// attribution. The trace stays for further analyses (`cachescope attribute DIR/PROGRAM.cst`).
/// A DIR this run creates is removed again if it fails or is interrupted.
fn report_program(
    program: &std::ffi::OsStr,
    args: &ReportArgs,
    options: CollectOptions,
) -> Result<()> {
    let created = CreatedDir::create(&args.output)?;
    let name = Path::new(program)
        .file_name()
        .map_or_else(|| "program".into(), |n| n.to_string_lossy().into_owned());
    let trace_path = match &args.live.save {
        Some(path) => path.clone(),
        None => args.output.join(format!("{name}.cst")),
    };
    let recorded = super::record::record(
        &args.program,
        &trace_path,
        cachescope::trace::Format::Native,
        &args.run,
        false,
        &Capture::new(&args.live, cachescope::record::ProgramOutput::Stderr),
    )?;
    let events = match &recorded.events {
        Some(log) => Some(Box::new(EventReader::open(log)?) as EventSource<'static>),
        None => None,
    };
    let mut trace = input::open_path(&trace_path, &args.read)?;
    // The report names the program, not the file it was recorded into.
    let named = Named {
        source: Some(recorded.summary.source.clone()),
        program: Some(recorded.summary.source.clone()),
    };
    let again = Some(Again {
        trace: &trace_path,
        read: &args.read,
    });
    let (report, written) = make(
        &mut trace,
        options,
        events,
        named,
        again,
        &args.output,
        &args.run,
    )?;
    created.keep();
    if !args.run.quiet {
        eprintln!(
            "cachescope: the recorded trace is kept in {}{}",
            trace_path.display(),
            if recorded.events.is_some() {
                " (with its event log beside it)"
            } else {
                ""
            }
        );
    }
    print_summary(&report, &written, args.json, args.csv)
}

/// The library's options from the flags.
pub fn collect_options(
    report: &ReportOptions,
    params: &WorkloadParams,
    run: &RunArgs,
) -> CollectOptions {
    CollectOptions {
        line_size: run.line_size,
        seed: params.seed,
        sample_rate: report.rate,
        phase_interval: report.interval,
        ways: report.ways,
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

/// One pass over `trace` (with a progress bar), the models, the figures, the files; with
/// `events`, the trace's event log, also the data-structure attribution; `named` says what
/// was analysed where the trace's name does not. A trace of several threads is read `again`
/// for the threads section.
pub fn make(
    trace: &mut Trace,
    options: CollectOptions,
    events: Option<EventSource<'static>>,
    named: Named,
    again: Option<Again<'_>>,
    dir: &Path,
    run: &RunArgs,
) -> Result<(Report, Written)> {
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
    let quiet = run.quiet;
    let mut report = Progress::stage(quiet, "after the pass: OPT's stack, the models", || {
        collector.finish(trace)
    })?;
    if let Some(source) = named.source {
        report.source = source;
    }
    report.program = named.program;
    if report.threads.is_some() {
        let mut pass = super::passes(run);
        pass.hooks().notes = false;
        let log = again.map(|a| sidecar_path(a.trace)).filter(|l| l.is_file());
        let mut reopen = again.map(|a| move || input::open_path(a.trace, a.read));
        Progress::stage(quiet, "the threads section", || {
            cachescope::report::threads::complete(
                &mut report,
                reopen.as_mut().map(|f| f as _),
                &mut pass,
                log.as_deref(),
            )
        })?;
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

/// Sizes of the terminal summary: L1-, L2- and LLC-like.
const SIZES: [u64; 5] = [4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20];

/// The short terminal summary (table, CSV, or what was written as JSON).
pub fn print_summary(report: &Report, written: &Written, json: bool, csv: bool) -> Result<()> {
    output::emit(&Summary { report, written }, Format::from_flags(json, csv))
}

/// A report and the files it was written into.
struct Summary<'a> {
    report: &'a Report,
    written: &'a Written,
}

impl Output for Summary<'_> {
    /// What was written.
    fn json(&self) -> Result<String> {
        let Summary { report, written } = self;
        let v = serde_json::json!({
            "source": report.source,
            "html": written.html,
            "json": written.json,
            "figures": written.figures,
            "refs": report.stats.refs,
            "distinct_lines": report.stats.distinct_lines,
            "elapsed_seconds": report.elapsed_seconds,
        });
        output::json(&v)
    }

    /// The miss ratios at the summary's sizes.
    fn csv(&self) -> Result<String> {
        let report = self.report;
        let mut o = String::from("method,policy,size_bytes,miss_ratio\n");
        for m in &report.mrc {
            for p in m.points.iter().filter(|p| SIZES.contains(&p.size_bytes)) {
                let _ = writeln!(
                    o,
                    "{},{},{},{}",
                    m.method,
                    m.policy,
                    p.size_bytes,
                    p.miss_ratio.unwrap_or(p.miss_ratio_warm)
                );
            }
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let Summary { report, written } = self;
        let rows: Vec<(String, Vec<Option<f64>>)> = report
            .mrc
            .iter()
            .map(|m| {
                let at = SIZES
                    .iter()
                    .map(|&s| {
                        m.points
                            .iter()
                            .find(|p| p.size_bytes == s)
                            .map(|p| p.miss_ratio.unwrap_or(p.miss_ratio_warm))
                    })
                    .collect();
                (format!("{} {}", m.method, m.policy), at)
            })
            .collect();
        let s = &report.stats;
        let mut o = format!(
            "{}: {} data references, {} distinct {}-B lines ({}), analysed in {:.1} s ({})\n\n\
         {:<20}",
            report.source,
            thousands(s.refs),
            thousands(s.distinct_lines),
            report.line_size,
            format_bytes(s.bytes_touched, Precision::ThreeDigits),
            report.elapsed_seconds,
            units::rate(s.refs, report.elapsed_seconds),
            "miss ratio (%)"
        );
        for size in SIZES {
            let _ = write!(o, " {:>8}", size_label(size));
        }
        o.push('\n');
        for (name, values) in rows {
            let _ = write!(o, "{name:<20}");
            for v in values {
                match v {
                    Some(v) => {
                        let _ = write!(o, " {:>8.3}", 100.0 * v);
                    }
                    None => o += &format!(" {:>8}", "-"),
                }
            }
            o.push('\n');
        }
        let _ = writeln!(
            o,
            "\nWrote {} ({} figures as SVG and PNG in {}, data in {}).",
            written.html.display(),
            written.figures.len() / 2,
            written.html.parent().map_or_else(
                || "figures".into(),
                |d| d.join("figures").display().to_string()
            ),
            written.json.display()
        );
        let _ = writeln!(
            o,
            "Open it in a browser: xdg-open {}",
            written.html.display()
        );
        o
    }
}
