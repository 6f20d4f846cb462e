//! Writing a recording out: the trace streamed into its file, the event log beside it, and
//! the closing notes on stderr.

use std::path::Path;

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::attribution::events::{Event, EventWriter, Header, sidecar_path};
use cachescope::record::Recording;
use cachescope::units::{Precision, format_bytes, thousands};

use super::{Backend, EventsThread, Recorded, Stream};
use crate::cmd::convert::{write_tool_native, write_trace};
use crate::output::Pending;

/// Streams the trace into `out`, waits for the program, and reports what was written.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    recording: Recording,
    stream: Stream,
    events_writer: Option<EventsThread>,
    out: &Path,
    to: cachescope::trace::Format,
    run: &crate::args::RunArgs,
    meta: Vec<(String, String)>,
    distinct: bool,
    backend: Backend,
    kept: bool,
) -> Result<Recorded> {
    let quiet = run.quiet;
    let events_path = sidecar_path(out);
    // Where the notes say things went: a temporary file is not named (it is gone at the end).
    let into = |path: &Path| {
        if kept {
            format!("into {}", path.display())
        } else {
            "for the analysis".to_string()
        }
    };
    // The tool's words go straight into a plain native file's blocks, skipping batches (the
    // summary's distinct lines need them); any other output is written from batches.
    let direct = to == cachescope::trace::Format::Native
        && out.as_os_str() != "-"
        && cachescope::trace::write::compression_for_path(out)
            == cachescope::trace::Compression::None
        && !distinct;
    // Each arm drops its stream at its end, closing the event channel, which ends the writer
    // thread.
    let (written, source) = match stream {
        Stream::Tool(mut tool) if direct => {
            let written = write_tool_native(&mut tool, out, run, meta);
            (written, tool.source().to_string())
        }
        Stream::Tool(tool) => {
            let source = tool.source().clone();
            let mut trace = cachescope::trace::Trace::from_reader(tool, source);
            let written = write_trace(&mut trace, out, to, run, meta, distinct);
            (written, trace.source().to_string())
        }
        Stream::Trace(mut trace) => {
            let written = write_trace(&mut trace, out, to, run, meta, distinct);
            (written, trace.source().to_string())
        }
    };
    let description = recording.description().to_string();
    let finished = recording.finish()?;
    // A program that died of SIGPIPE because writing the trace failed (and the reader went)
    // says nothing the write's error does not: only that error is printed.
    let killed_by_us = written.is_err()
        && std::os::unix::process::ExitStatusExt::signal(&finished.status) == Some(libc::SIGPIPE);
    if !killed_by_us {
        crate::exit::program_ended(&description, &finished);
    }
    // Uncommitted until the trace is: dropped on the way out (a cut stream, a full disk, an
    // interruption), its temporary file goes, so no event log is left without its trace.
    let logged = events_writer.map(|w| w.join().expect("event writer thread"));
    let summary = written?;
    if !quiet {
        eprintln!(
            "cachescope: recorded {source} {} ({}; {} records, {})",
            into(out),
            finished.status,
            thousands(summary.records),
            format_bytes(summary.bytes, Precision::ThreeDigits)
        );
    }
    let mut kept_events = None;
    if let (Some(logged), Some(counts)) = (logged, &finished.events) {
        let (log, _) = logged?;
        if counts.brackets == 0 {
            drop(log);
            if !quiet {
                let log = if kept {
                    format!("{} was not written", events_path.display())
                } else {
                    "there is no event log".to_string()
                };
                eprintln!(
                    "cachescope: no allocation events (statically linked?): the interposer never \
                     ran in the program, so {log}"
                );
            }
        } else {
            log.commit()?;
            kept_events = Some(events_path.clone());
            if !quiet {
                let total = counts.kept + counts.dropped;
                if backend == Backend::Tool {
                    eprintln!(
                        "cachescope: logged {} allocations, {} frees and {} mappings {}{}",
                        counts.allocs,
                        counts.frees,
                        counts.maps,
                        into(&events_path),
                        if counts.allocs + counts.frees == 0 {
                            " (no heap events: a statically linked program, whose allocator \
                             cannot be wrapped, or one that never called malloc)"
                        } else {
                            ""
                        }
                    );
                    return Ok(Recorded {
                        summary,
                        events: kept_events,
                    });
                }
                eprintln!(
                    "cachescope: logged {} allocations, {} frees and {} mappings {}; removed \
                     {} interposer references ({:.1} % of the {} recorded){}",
                    counts.allocs,
                    counts.frees,
                    counts.maps,
                    into(&events_path),
                    counts.dropped,
                    100.0 * counts.dropped as f64 / total.max(1) as f64,
                    total,
                    if counts.unclosed > 0 {
                        format!(
                            "; {} event(s) cut off by the program's end",
                            counts.unclosed
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
    }
    Ok(Recorded {
        summary,
        events: kept_events,
    })
}

/// Streams the events into `path`'s temporary file as they arrive; returns it, to be
/// committed with the trace, and how many events were written.
pub(super) fn write_events(
    path: &Path,
    header: &Header,
    rx: impl IntoIterator<Item = Event>,
) -> Result<(Pending, u64)> {
    let (pending, file) = Pending::create(path)?;
    let source = Source::File(path.to_owned());
    let mut w = EventWriter::new(std::io::BufWriter::new(file), source, header)?;
    let mut n = 0;
    for event in rx {
        w.write(&event)?;
        n += 1;
    }
    let buf = w.finish()?;
    buf.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((pending, n))
}
