//! `cachescope convert IN OUT`: any format in, native (or another format) out.

use std::io::Write;

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::trace::write::{self, AccessWriter};
use cachescope::trace::{Format, Trace, native};

use super::drive;
use crate::args::{ConvertArgs, RunArgs};
use crate::input;
use crate::output::Pending;

pub fn run(args: ConvertArgs) -> Result<()> {
    let mut trace = input::open_path(&args.input, &args.read)?;
    let mut meta = vec![("source".to_string(), trace.source().to_string())];
    meta.push(("source_format".into(), trace.format_name().into()));
    write_trace(&mut trace, &args.output, args.to, &args.run, meta)
}

/// Writes every access of `trace` to `out` (`-` = stdout) in `format`; files appear only when
/// complete.
pub fn write_trace(
    trace: &mut Trace,
    out: &std::path::Path,
    format: Format,
    run: &RunArgs,
    mut metadata: Vec<(String, String)>,
) -> Result<()> {
    metadata.push((
        "tool".into(),
        format!("cachescope {}", env!("CARGO_PKG_VERSION")),
    ));
    let header = native::Header {
        line_size: run.line_size.bytes(),
        metadata,
        ..native::Header::default()
    };
    let compression = write::compression_for_path(out);
    if out.as_os_str() == "-" {
        let stdout: Box<dyn Write + Send> = Box::new(std::io::stdout());
        let w = write::writer(stdout, Source::Stdin, format, compression, header)?;
        return pump(trace, w, run);
    }
    let (pending, file) = Pending::create(out)?;
    let sink = Source::File(out.to_owned());
    if format == Format::Native && compression == cachescope::trace::Compression::None {
        // A plain native file is seekable: its header gets the final counts.
        let opts = native::WriterOptions {
            source: sink.clone(),
            ..Default::default()
        };
        let mut w = native::Writer::with_options(std::io::BufWriter::new(file), header, opts)?;
        write_all(trace, run, |b| w.write_batch(b))?;
        let (buf, _) = w.finish_and_patch_header()?;
        buf.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot write {}", out.display()))?;
    } else {
        let w = write::writer(Box::new(file), sink, format, compression, header)?;
        pump(trace, w, run)?;
    }
    pending.commit()
}

/// Streams `trace` into `w` through the shared driver, then completes it.
fn pump(trace: &mut Trace, mut w: Box<dyn AccessWriter>, run: &RunArgs) -> Result<()> {
    write_all(trace, run, |b| w.write_batch(b))?;
    Ok(w.finish()?)
}

/// One pass over `trace`, each batch handed to `write`; the first write error stops further
/// writes and is returned after the pass.
fn write_all(
    trace: &mut Trace,
    run: &RunArgs,
    write: impl FnMut(&Batch) -> cachescope::Result<()>,
) -> Result<()> {
    let mut sink = Sink { write, err: None };
    drive(trace, &mut [&mut sink], run)?;
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
