//! Writing traces: the native format, or text and binary formats for other tools, optionally
//! compressed. Used by `convert` and `generate`.
//!
//! Text formats cannot hold everything an [`Access`](crate::Access) holds; what is lost is
//! documented per format in [`write_text_record`]. ChampSim's records are written by
//! [`champsim::Writer`], which counts what it loses ([`AccessWriter::notes`]).

use std::io::{BufWriter, Write};
use std::path::Path;

use super::{Compression, Format, Radix, champsim, native};
use crate::AccessKind;
use crate::access::ThreadId;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

/// A sink for accesses in some format.
pub trait AccessWriter {
    /// Appends a batch.
    fn write_batch(&mut self, batch: &Batch) -> Result<()>;
    /// Flushes everything and completes the file (index, trailer, compression frame).
    fn finish(self: Box<Self>) -> Result<()>;
    /// What the format could not hold of the accesses written so far, one sentence each
    /// (empty for formats whose losses are fixed and documented, such as din's modifies).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Chooses the output compression from a file name: `.gz`, `.zst`, `.xz`, else none.
pub fn compression_for_path(path: &Path) -> Compression {
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => Compression::Gzip,
        Some("zst") => Compression::Zstd,
        Some("xz") => Compression::Xz,
        _ => Compression::None,
    }
}

/// A writer of `format` onto `out`, compressed with `compression`.
pub fn writer(
    out: Box<dyn Write + Send>,
    sink: Source,
    format: Format,
    compression: Compression,
    header: native::Header,
) -> Result<Box<dyn AccessWriter>> {
    let out = compressor(out, compression, &sink)?;
    if format == Format::Native {
        let opts = native::WriterOptions {
            source: sink.clone(),
            ..Default::default()
        };
        let inner = native::Writer::with_options(out, header, opts)?;
        return Ok(Box::new(NativeSink { inner, sink }));
    }
    if format == Format::Champsim {
        let inner = champsim::Writer::new(BufWriter::with_capacity(1 << 20, out), sink.clone());
        return Ok(Box::new(ChampsimSink {
            inner,
            sink,
            threads: Threads::default(),
        }));
    }
    Ok(Box::new(TextSink {
        out: BufWriter::with_capacity(1 << 20, out),
        format,
        sink,
        threads: Threads::default(),
    }))
}

/// An encoder that finishes its stream when `finish` is called.
trait FinishWrite: Write + Send {
    fn finish_stream(self: Box<Self>) -> std::io::Result<()>;
}

struct Plain(Box<dyn Write + Send>);
impl Write for Plain {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
impl FinishWrite for Plain {
    fn finish_stream(mut self: Box<Self>) -> std::io::Result<()> {
        self.0.flush()
    }
}
impl FinishWrite for flate2::write::GzEncoder<Box<dyn Write + Send>> {
    fn finish_stream(self: Box<Self>) -> std::io::Result<()> {
        self.finish()?.flush()
    }
}
impl FinishWrite for zstd::stream::write::Encoder<'static, Box<dyn Write + Send>> {
    fn finish_stream(self: Box<Self>) -> std::io::Result<()> {
        self.finish()?.flush()
    }
}
impl FinishWrite for liblzma::write::XzEncoder<Box<dyn Write + Send>> {
    fn finish_stream(self: Box<Self>) -> std::io::Result<()> {
        self.finish()?.flush()
    }
}

/// Boxed finishing writer, itself a `Write` so format writers can sit on top.
struct Compressed(Option<Box<dyn FinishWrite>>);
impl Write for Compressed {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.as_mut().expect("written after finish").write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.as_mut().map_or(Ok(()), |w| w.flush())
    }
}
impl Compressed {
    fn finish(&mut self) -> std::io::Result<()> {
        self.0.take().map_or(Ok(()), |w| w.finish_stream())
    }
}

fn compressor(out: Box<dyn Write + Send>, c: Compression, sink: &Source) -> Result<Compressed> {
    let w: Box<dyn FinishWrite> = match c {
        Compression::None => Box::new(Plain(out)),
        Compression::Gzip => Box::new(flate2::write::GzEncoder::new(
            out,
            flate2::Compression::default(),
        )),
        Compression::Zstd => {
            Box::new(zstd::stream::write::Encoder::new(out, 3).map_err(|e| Error::io(sink, e))?)
        }
        Compression::Xz => Box::new(liblzma::write::XzEncoder::new(out, 6)),
    };
    Ok(Compressed(Some(w)))
}

struct NativeSink {
    inner: native::Writer<Compressed>,
    sink: Source,
}

impl AccessWriter for NativeSink {
    fn write_batch(&mut self, batch: &Batch) -> Result<()> {
        self.inner.write_batch(batch)
    }
    fn finish(self: Box<Self>) -> Result<()> {
        let (mut out, _) = self.inner.finish()?;
        out.finish().map_err(|e| Error::io(&self.sink, e))
    }
}

/// The threads a single-stream format merged, and the call events it dropped, for the notes
/// that say so.
#[derive(Default)]
struct Threads(std::collections::BTreeSet<ThreadId>, u64);

impl Threads {
    fn saw(&mut self, batch: &Batch) {
        self.0.extend(batch.thread_runs().map(|(_, t)| t));
        self.1 += batch.calls().len() as u64;
    }

    /// The note for `format` when the trace had call events.
    fn calls_note(&self, format: Format) -> Option<String> {
        (self.1 > 0).then(|| {
            format!(
                "{} call events (calls and returns) are left out: {format} has no place for them \
                 (the native format keeps them; without them the call graph has self costs only)",
                self.1
            )
        })
    }

    /// The note for `format` when it merged more than one thread.
    fn note(&self, format: Format) -> Option<String> {
        (self.0.len() > 1).then(|| {
            let ids: Vec<String> = self.0.iter().map(ToString::to_string).collect();
            format!(
                "the references of {} threads ({}) are merged into one stream, in trace order: \
                 {format} has no thread field (the native format keeps them)",
                ids.len(),
                ids.join(", ")
            )
        })
    }
}

struct ChampsimSink {
    inner: champsim::Writer<BufWriter<Compressed>>,
    sink: Source,
    threads: Threads,
}

impl AccessWriter for ChampsimSink {
    fn write_batch(&mut self, batch: &Batch) -> Result<()> {
        self.threads.saw(batch);
        self.inner.write_batch(batch)
    }
    fn finish(self: Box<Self>) -> Result<()> {
        let sink = self.sink;
        let mut inner = self
            .inner
            .finish()?
            .into_inner()
            .map_err(|e| Error::io(&sink, e.into_error()))?;
        inner.finish().map_err(|e| Error::io(&sink, e))
    }
    fn notes(&self) -> Vec<String> {
        let mut notes = self.inner.losses().notes();
        notes.extend(self.threads.note(Format::Champsim));
        notes.extend(self.threads.calls_note(Format::Champsim));
        notes
    }
}

struct TextSink {
    out: BufWriter<Compressed>,
    format: Format,
    sink: Source,
    threads: Threads,
}

impl AccessWriter for TextSink {
    fn notes(&self) -> Vec<String> {
        let notes = [
            self.threads.note(self.format),
            self.threads.calls_note(self.format),
        ];
        notes.into_iter().flatten().collect()
    }

    fn write_batch(&mut self, batch: &Batch) -> Result<()> {
        self.threads.saw(batch);
        for i in 0..batch.len() {
            write_text_record(&mut self.out, self.format, batch, i)
                .map_err(|e| Error::io(&self.sink, e))?;
        }
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<()> {
        let sink = self.sink;
        let mut inner = self
            .out
            .into_inner()
            .map_err(|e| Error::io(&sink, e.into_error()))?;
        inner.finish().map_err(|e| Error::io(&sink, e))
    }
}

/// Writes access `i` of `b` as one record of `format` (not native or ChampSim, whose records
/// are not one per access).
///
/// - lackey: `I  addr,size` / ` L|S|M addr,size`; a data access's pc is implied by the preceding
///   `I` line, so explicit pcs that differ from it are lost.
/// - plain: `0xADDR K SIZE` (hex) or `ADDR K SIZE` (decimal) with K one of R W M I; pcs are lost.
/// - din: `LABEL ADDR SIZE` with label 0 read, 1 write, 2 fetch; din has no modify, written as a
///   read (Cachegrind's view of a modify); pcs are lost.
/// - binary: the address only, 8 bytes little endian; kind, size and pc are lost.
pub fn write_text_record(
    out: &mut impl Write,
    format: Format,
    b: &Batch,
    i: usize,
) -> std::io::Result<()> {
    let (addr, size, kind) = (b.addrs[i], b.sizes[i], b.kinds[i]);
    match format {
        Format::Lackey => {
            let tag = match kind {
                AccessKind::Instr => "I ",
                AccessKind::Load => " L",
                AccessKind::Store => " S",
                AccessKind::Modify => " M",
            };
            writeln!(out, "{tag} {addr:08x},{size}")
        }
        Format::Plain(radix) => {
            let k = match kind {
                AccessKind::Load => 'R',
                AccessKind::Store => 'W',
                AccessKind::Modify => 'M',
                AccessKind::Instr => 'I',
            };
            match radix {
                Radix::Hex => writeln!(out, "{addr:#x} {k} {size}"),
                Radix::Decimal => writeln!(out, "{addr} {k} {size}"),
            }
        }
        Format::Din => {
            let label = match kind {
                AccessKind::Load | AccessKind::Modify => 0,
                AccessKind::Store => 1,
                AccessKind::Instr => 2,
            };
            writeln!(out, "{label} {addr:x} {size}")
        }
        Format::Binary => out.write_all(&addr.to_le_bytes()),
        Format::Native | Format::Champsim => {
            unreachable!("native and ChampSim records are written by their own writers")
        }
    }
}
