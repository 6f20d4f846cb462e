//! `cachescope convert IN OUT`: any format in, native (or another format) out.

use crate::args::heading;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::pass::Analyses;
use cachescope::record::ToolStream;
use cachescope::stats::StatsAnalysis;
use cachescope::trace::write::{self, AccessWriter};
use cachescope::trace::{AccessReader, Format, Trace, native};
use cachescope::units::{Precision, format_bytes, thousands};
use clap::Args;

use super::drive;
use crate::args::{ReadArgs, RunArgs, SummaryFormat, values};
use crate::input;
use crate::output::{self, Output, Pending};
use crate::progress::Progress;

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The trace to convert: a file, or `-` for stdin.
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Where to write (`-` for stdout). A `.gz`, `.zst` or `.xz` ending compresses text output.
    #[arg(help_heading = heading::ARGUMENTS, value_name = "OUT")]
    pub output: PathBuf,
    /// Output format: native (default), lackey, plain-hex, plain-dec, din, binary, champsim.
    #[arg(help_heading = heading::OUTPUT, long, default_value = "native", value_parser = values::output_format)]
    pub to: cachescope::trace::Format,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub summary: SummaryFormat,
}

pub fn run(args: ConvertArgs) -> Result<()> {
    let mut trace = input::open_path(&args.input, &args.read)?;
    let mut meta = vec![("source".to_string(), trace.source().to_string())];
    meta.push(("source_format".into(), trace.format_name().into()));
    let summary = write_trace(
        &mut trace,
        &args.output,
        args.to,
        &args.run,
        meta,
        args.summary.wanted(),
    )?;
    print_summary(&summary, &args.summary, &args.run)
}

/// What `convert`, `generate` and `record` wrote (their `--json`; `--csv` has the same fields).
#[derive(Clone, Debug, serde::Serialize)]
pub struct WriteSummary {
    /// The trace written (`-` for stdout).
    pub output: String,
    /// Its format (`native`, `lackey`, …).
    pub format: String,
    /// What was read: a file, `<stdin>`, `<workload NAME>` or the recorded command.
    pub source: String,
    /// Records written: data references and instruction fetches.
    pub records: u64,
    /// Data references among them.
    pub refs: u64,
    /// Instruction fetches among them.
    pub instructions: u64,
    /// Distinct lines the data references touch, at `line_size`.
    pub distinct_lines: u64,
    /// The line size of `distinct_lines` (and of a native header).
    pub line_size: u64,
    /// Bytes written (after compression).
    pub bytes: u64,
}

/// The one-line note on stderr (the table form), `--json`, `--csv`.
impl Output for WriteSummary {
    fn table(&self) -> String {
        format!(
            "cachescope: wrote {} records ({} data references, {} instruction fetches) to {} \
             as {}, {}\n",
            thousands(self.records),
            thousands(self.refs),
            thousands(self.instructions),
            self.output,
            self.format,
            format_bytes(self.bytes, Precision::ThreeDigits)
        )
    }

    fn json(&self) -> Result<String> {
        output::json(self)
    }

    fn csv(&self) -> Result<String> {
        Ok(output::csv_records(&[serde_json::to_value(self)?]))
    }
}

/// Prints `summary` as JSON or CSV (on stderr when the trace went to stdout), or a one-line
/// note on stderr unless quiet.
pub fn print_summary(summary: &WriteSummary, how: &SummaryFormat, run: &RunArgs) -> Result<()> {
    output::emit_summary(summary, how.format(), summary.output == "-", run.quiet)
}

/// Writes every access of `trace` to `out` (`-` = stdout) in `format`; files appear only when
/// complete. With `distinct`, also counts the distinct lines for the summary. What the format
/// could not hold (ChampSim's losses) is printed as warnings on stderr unless quiet.
pub fn write_trace(
    trace: &mut Trace,
    out: &std::path::Path,
    format: Format,
    run: &RunArgs,
    metadata: Vec<(String, String)>,
    distinct: bool,
) -> Result<WriteSummary> {
    let header = header(run, metadata);
    let mut counts = Counts {
        kinds: [0; 4],
        stats: distinct.then(|| StatsAnalysis::new(run.line_size)),
    };
    let compression = write::compression_for_path(out);
    if out.as_os_str() == "-" {
        let written = Arc::new(AtomicU64::new(0));
        let stdout: Box<dyn Write + Send> = Box::new(Counting {
            inner: std::io::stdout(),
            written: Arc::clone(&written),
        });
        let w = write::writer(stdout, Source::Stdin, format, compression, header)?;
        let notes = pump(trace, w, run, &mut counts)?;
        warn(out, &notes, run);
        return Ok(counts.summary(trace, out, format, run, written.load(Ordering::Relaxed)));
    }
    let (pending, file) = Pending::create(out)?;
    let sink = Source::File(out.to_owned());
    let notes = if format == Format::Native && compression == cachescope::trace::Compression::None {
        let opts = native::WriterOptions {
            source: sink,
            ..Default::default()
        };
        native_file(file, out, header, opts, |w| {
            write_all(trace, run, &mut counts, |b| w.write_batch(b))
        })?;
        Vec::new()
    } else {
        let w = write::writer(Box::new(file), sink, format, compression, header)?;
        pump(trace, w, run, &mut counts)?
    };
    pending.commit()?;
    warn(out, &notes, run);
    let bytes = std::fs::metadata(out).map_or(0, |m| m.len());
    Ok(counts.summary(trace, out, format, run, bytes))
}

/// The native header of a trace cachescope writes: the run's line size and `metadata` with
/// this tool's name and version.
fn header(run: &RunArgs, mut metadata: Vec<(String, String)>) -> native::Header {
    metadata.push((
        "tool".into(),
        format!("cachescope {}", env!("CARGO_PKG_VERSION")),
    ));
    native::Header {
        line_size: run.line_size.bytes(),
        metadata,
        ..native::Header::default()
    }
}

/// Writes a plain native file at `out` with `opts` through `fill`, then patches its header
/// with the final counts (a file is seekable) and syncs it; returns the counts.
fn native_file(
    file: std::fs::File,
    out: &std::path::Path,
    header: native::Header,
    opts: native::WriterOptions,
    fill: impl FnOnce(&mut native::Writer<std::io::BufWriter<std::fs::File>>) -> Result<()>,
) -> Result<native::Counts> {
    let mut w = native::Writer::with_options(std::io::BufWriter::new(file), header, opts)?;
    fill(&mut w)?;
    let (buf, counts) = w.finish_and_patch_header()?;
    buf.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(counts)
}

/// `record`'s path into a plain native file: the tool's words encoded straight into the
/// trace's blocks, with no batches in between (docs/recording.md). The file appears only when
/// complete; the summary is [`write_trace`]'s, without distinct lines.
pub fn write_tool_native(
    stream: &mut ToolStream,
    out: &std::path::Path,
    run: &RunArgs,
    metadata: Vec<(String, String)>,
) -> Result<WriteSummary> {
    let (pending, file) = Pending::create(out)?;
    let opts = native::WriterOptions::recording(Source::File(out.to_owned()));
    let counts = native_file(file, out, header(run, metadata), opts, |w| {
        let progress = Progress::spinner(run.quiet, "recording");
        let written = stream.write_native(w, |n| progress.update(n, 0));
        progress.finish();
        written.map(drop).map_err(Into::into)
    })?;
    pending.commit()?;
    if !run.quiet {
        for note in stream.diagnostics().notes {
            eprintln!("cachescope: note: {}: {note}", stream.source());
        }
    }
    Ok(WriteSummary {
        output: out.display().to_string(),
        format: Format::Native.name().to_string(),
        source: stream.source().to_string(),
        records: counts.accesses,
        refs: counts.accesses - counts.instrs,
        instructions: counts.instrs,
        distinct_lines: 0,
        line_size: run.line_size.bytes(),
        bytes: std::fs::metadata(out).map_or(0, |m| m.len()),
    })
}

/// Counts the records written by kind, and their distinct lines when asked.
struct Counts {
    kinds: [u64; 4],
    stats: Option<StatsAnalysis>,
}

impl Analysis for Counts {
    fn observe(&mut self, batch: &Batch) {
        for (total, n) in self
            .kinds
            .iter_mut()
            .zip(cachescope::AccessKind::count(&batch.kinds))
        {
            *total += n;
        }
        if let Some(s) = &mut self.stats {
            s.observe(batch);
        }
    }
}

impl Counts {
    fn summary(
        &self,
        trace: &Trace,
        out: &std::path::Path,
        format: Format,
        run: &RunArgs,
        bytes: u64,
    ) -> WriteSummary {
        let instructions = self.kinds[cachescope::AccessKind::Instr as usize];
        let records: u64 = self.kinds.iter().sum();
        WriteSummary {
            output: out.display().to_string(),
            format: format.name().to_string(),
            source: trace.source().to_string(),
            records,
            refs: records - instructions,
            instructions,
            distinct_lines: self.stats.as_ref().map_or(0, |s| s.finish().distinct_lines),
            line_size: run.line_size.bytes(),
            bytes,
        }
    }
}

/// Counts the bytes passed to `inner`.
struct Counting<W> {
    inner: W,
    written: Arc<AtomicU64>,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Prints what writing `out` could not represent, unless quiet.
fn warn(out: &std::path::Path, notes: &[String], run: &RunArgs) {
    if run.quiet {
        return;
    }
    for note in notes {
        eprintln!("cachescope: warning: {}: {note}", out.display());
    }
}

/// Streams `trace` into `w` through the shared driver, then completes it; returns the
/// writer's notes on what it could not represent.
fn pump(
    trace: &mut Trace,
    mut w: Box<dyn AccessWriter>,
    run: &RunArgs,
    counts: &mut Counts,
) -> Result<Vec<String>> {
    write_all(trace, run, counts, |b| w.write_batch(b))?;
    let notes = w.notes();
    w.finish()?;
    Ok(notes)
}

/// One pass over `trace`, each batch handed to `write`; the first write error stops further
/// writes and is returned after the pass.
fn write_all(
    trace: &mut Trace,
    run: &RunArgs,
    counts: &mut Counts,
    write: impl FnMut(&Batch) -> cachescope::Result<()>,
) -> Result<()> {
    let mut sink = Sink { write, err: None };
    drive(trace, Analyses(&mut [&mut sink, counts]), run)?;
    match sink.err {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// Adapts a writing function to the analysis interface.
struct Sink<F> {
    write: F,
    err: Option<cachescope::Error>,
}

impl<F: FnMut(&Batch) -> cachescope::Result<()>> Analysis for Sink<F> {
    fn observe(&mut self, batch: &Batch) {
        if self.err.is_none() {
            if let Err(e) = (self.write)(batch) {
                self.err = Some(e);
            }
        }
    }
}
