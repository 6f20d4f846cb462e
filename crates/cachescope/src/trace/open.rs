//! Opening a trace: file or stdin → decompression → format detection → reader.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::compress::{Compression, MAGIC_LEN};
use super::detect::{self, SNIFF_LEN};
use super::{
    AccessReader, Diagnostics, Format, binary, champsim, din, lackey, native, pipe, plain,
};
use crate::access::ThreadId;
use crate::batch::Batch;
use crate::error::{Error, Result, Source};

use super::progress::Counting;
pub use super::progress::ProgressProbe;

pub use super::choice::{FormatChoice, OpenOptions};

/// An open trace: where it comes from, how it was decoded, and its reader.
pub struct Trace {
    source: Source,
    format: Option<Format>,
    compression: Compression,
    notes: Vec<String>,
    reader: Box<dyn AccessReader>,
    bytes_read: Arc<AtomicU64>,
    total_bytes: Option<u64>,
    /// Whether lines that do not parse are skipped ([`OpenOptions::skip_bad_lines`]).
    skip_bad_lines: bool,
    /// Whether a batch was asked for yet.
    started: bool,
    /// The one thread whose references are read ([`Trace::only_thread`]).
    only_thread: Option<ThreadId>,
    /// The native header's metadata pairs (none for other formats).
    metadata: Vec<(String, String)>,
    /// The spatial filter a sampled read goes through ([`Trace::sampled`]).
    stage: Option<Box<super::sampled::SpatialStage>>,
    /// Read through a reader [`Trace::wrap`] put in front of the format's.
    wrapped: bool,
}

/// Opens `path` (`-` for stdin) and detects compression and format.
pub fn open(path: &Path, opts: &OpenOptions) -> Result<Trace> {
    if path.as_os_str() == "-" {
        return Trace::from_read(io::stdin(), Source::Stdin, None, opts);
    }
    let source = Source::File(path.to_owned());
    let file = File::open(path).map_err(|e| Error::io(&source, e))?;
    let meta = file.metadata().map_err(|e| Error::io(&source, e))?;
    if meta.is_dir() {
        return Err(Error::InvalidParameter {
            name: "trace",
            message: format!("{} is a directory, not a trace file", path.display()),
        });
    }
    let len = meta.is_file().then_some(meta.len());
    Trace::from_read(file, source, len, opts)
}

impl Trace {
    /// Reads a trace from any byte stream; `total_bytes` (if known) drives progress reporting.
    pub fn from_read(
        input: impl Read + Send + 'static,
        source: Source,
        total_bytes: Option<u64>,
        opts: &OpenOptions,
    ) -> Result<Trace> {
        let bytes_read = Arc::new(AtomicU64::new(0));
        let counted = Counting {
            inner: input,
            count: bytes_read.clone(),
        };
        let (head, _, raw) = peek(Box::new(counted), MAGIC_LEN, &source)?;
        if head.is_empty() {
            return Err(Error::Empty(source));
        }
        let compression = Compression::detect(&head);
        let mut stream: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(raw));
        if compression != Compression::None {
            let decoder = compression
                .decoder(stream)
                .map_err(|e| Error::io(&source, e))?;
            stream = Box::new(pipe::spawn(decoder).map_err(|e| Error::io(&source, e))?);
        }
        let (head, at_eof, rest) = peek(stream, SNIFF_LEN, &source)?;
        if head.is_empty() {
            return Err(Error::Empty(source));
        }
        let mut notes = Vec::new();
        let format = match opts.format {
            FormatChoice::Exactly(f) => f,
            FormatChoice::Plain => {
                let d = detect::plain_radix(detect::whole_lines(&head, at_eof));
                notes.extend(d.note);
                d.format
            }
            FormatChoice::Detect => {
                let d = detect::detect(&head, at_eof).ok_or_else(|| Error::UnknownFormat {
                    source_name: source.clone(),
                    tried: detect::TRIED.into(),
                    why: detect::why_unknown(&head)
                        .map(|why| format!(": {why}"))
                        .unwrap_or_default(),
                })?;
                notes.extend(d.note);
                d.format
            }
        };
        let input = Cursor::new(head).chain(rest);
        let skip = opts.skip_bad_lines;
        let src = source.clone();
        let mut metadata = Vec::new();
        let reader: Box<dyn AccessReader> = match format {
            Format::Lackey => Box::new(lackey::Reader::new(
                input,
                src,
                lackey::Options {
                    skip_bad_lines: skip,
                },
            )),
            Format::Plain(radix) => Box::new(plain::Reader::new(
                input,
                src,
                plain::Options {
                    skip_bad_lines: skip,
                    radix,
                },
            )),
            Format::Din => Box::new(din::Reader::new(
                input,
                src,
                din::Options {
                    skip_bad_lines: skip,
                },
            )),
            Format::Binary => Box::new(binary::Reader::new(input, src, binary::Options::default())),
            Format::Native => {
                let reader = native::Reader::new(input, src)?;
                metadata = reader.header().metadata.clone();
                Box::new(reader)
            }
            Format::Champsim => Box::new(champsim::Reader::new(
                input,
                src,
                champsim::Options::default(),
            )),
        };
        Ok(Trace {
            source,
            format: Some(format),
            compression,
            notes,
            reader,
            bytes_read,
            total_bytes,
            skip_bad_lines: skip,
            started: false,
            only_thread: None,
            metadata,
            stage: None,
            wrapped: false,
        })
    }

    /// Wraps an already-built reader, e.g. a synthetic workload generator.
    pub fn from_reader(reader: Box<dyn AccessReader>, source: Source) -> Trace {
        Trace {
            source,
            format: None,
            compression: Compression::None,
            notes: Vec::new(),
            reader,
            bytes_read: Arc::new(AtomicU64::new(0)),
            total_bytes: None,
            skip_bad_lines: false,
            started: false,
            only_thread: None,
            metadata: Vec::new(),
            stage: None,
            wrapped: false,
        }
    }

    /// Reads the trace through `wrap(reader)` from now on: a transform in front of every
    /// analysis (the layout changes of `whatif`, [`crate::layout`]). Like a thread filter, it
    /// keeps readers that would read the file in parts on their own from being used.
    pub fn wrap(&mut self, wrap: impl FnOnce(Box<dyn AccessReader>) -> Box<dyn AccessReader>) {
        let inner = std::mem::replace(&mut self.reader, Box::new(super::Ended));
        self.reader = wrap(inner);
        self.wrapped = true;
    }

    /// True when [`Trace::wrap`] or [`Trace::only_thread`] put a reader in front of the
    /// format's.
    pub fn is_wrapped(&self) -> bool {
        self.wrapped || self.only_thread.is_some()
    }

    /// Reads the references of `thread` alone from now on (`--thread ID`): every pass over
    /// the trace then sees that thread's stream. A thread the trace does not have is an error
    /// at its end. Readers that would read the file in parts on their own are not used.
    pub fn only_thread(&mut self, thread: ThreadId) {
        let inner = std::mem::replace(&mut self.reader, Box::new(super::Ended));
        self.reader = Box::new(super::only_thread::OnlyThread::new(
            inner,
            thread,
            self.source.clone(),
        ));
        self.only_thread = Some(thread);
    }

    /// The thread [`Trace::only_thread`] keeps, if any.
    pub fn thread_filter(&self) -> Option<ThreadId> {
        self.only_thread
    }

    /// True when lines that do not parse are skipped rather than errors.
    pub fn skips_bad_lines(&self) -> bool {
        self.skip_bad_lines
    }

    /// Clears `batch` and fills it with the next accesses; 0 at the end of the trace.
    /// Fails with [`Error::Interrupted`] or [`Error::MemoryLimit`] once the run must stop
    /// (see [`crate::interrupt`]).
    pub fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        crate::interrupt::check()?;
        self.started = true;
        batch.forget_data();
        match &mut self.stage {
            Some(stage) => stage.read(&mut self.reader, batch, &self.source),
            None => self.reader.read_batch(batch),
        }
    }

    /// The sampled stage above the reader, if any.
    pub(super) fn stage_mut(&mut self) -> Option<&mut super::sampled::SpatialStage> {
        self.stage.as_deref_mut()
    }

    /// Puts `stage` above the reader ([`Trace::sampled`]).
    pub(super) fn set_stage(&mut self, stage: super::sampled::SpatialStage) {
        self.stage = Some(Box::new(stage));
    }

    /// [`AccessReader::sample_itself`] of this trace's reader, for a reader over a trace (a
    /// running program's): false once a batch was read or under a stage of its own.
    pub fn sample_itself(&mut self, options: &crate::spatial::SpatialOptions) -> bool {
        !self.started && self.stage.is_none() && self.reader.sample_itself(options)
    }

    /// [`AccessReader::pass_promoted`] of this trace's reader, before the first batch.
    pub fn pass_promoted(
        &mut self,
    ) -> Option<std::sync::Arc<std::sync::Mutex<crate::spatial::promoted::Promoted>>> {
        if self.started {
            return None;
        }
        self.reader.pass_promoted()
    }

    /// How the trace is sampled, when it is read as a sampled stream through
    /// [`Trace::sampled`].
    pub fn sampling(&self) -> Option<&crate::spatial::SpatialOptions> {
        self.stage.as_ref().map(|s| s.options())
    }

    /// StatCache's profile of the full stream of a sampled read, once it has ended: from
    /// [`Trace::sampled`]'s sampler, or from a reader that samples reuses itself.
    pub fn reuse_profile(&mut self) -> Option<crate::sampling::Profile> {
        let own = self.stage.as_ref().and_then(|s| s.profile());
        own.or_else(|| self.reader.reuse_profile())
    }

    /// The per-thread reuse records of the Valgrind tool's sampled stream this trace reads,
    /// once it has ended ([`AccessReader::thread_reuses`]).
    pub fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        self.reader.thread_reuses()
    }

    /// True once a batch was asked for.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// Reads the rest of the trace from `reader` instead (one that reads the same file in
    /// parallel: [`crate::parallel::decode_in_parallel`]).
    pub(crate) fn replace_reader(&mut self, reader: Box<dyn AccessReader>) {
        self.reader = reader;
    }

    /// What the format's reader knows of the stream's counts ahead
    /// ([`AccessReader::counts_ahead`]), for a replacement reader to carry on.
    pub(crate) fn reader_counts_ahead(&self) -> Option<super::native::Counts> {
        self.reader.counts_ahead()
    }

    /// The counter of bytes read behind [`Trace::progress`], for a replacement reader to move.
    pub(crate) fn bytes_counter(&self) -> Arc<AtomicU64> {
        self.bytes_read.clone()
    }

    /// Where the trace comes from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The value of the native header's metadata pair `key` (`None` for other formats).
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The format read (`None` for generated workloads).
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// The format's name, `program` for a running program, `workload` for generated traces.
    pub fn format_name(&self) -> &'static str {
        match (&self.format, &self.source) {
            (Some(f), _) => f.name(),
            (None, Source::Program(_)) => "program",
            (None, _) => "workload",
        }
    }

    /// The compression detected.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// What detection assumed where the content was ambiguous.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Skipped lines so far.
    pub fn diagnostics(&self) -> Diagnostics {
        self.reader.diagnostics()
    }

    /// Raw (compressed) bytes consumed so far, and the total when known: for progress bars.
    pub fn progress(&self) -> (u64, Option<u64>) {
        self.progress_probe().get()
    }

    /// A handle that reads [`Trace::progress`] from elsewhere while the trace is being read.
    pub fn progress_probe(&self) -> ProgressProbe {
        ProgressProbe {
            bytes_read: self.bytes_read.clone(),
            total_bytes: self.total_bytes,
        }
    }
}

/// Reads up to `n` bytes from `r`: returns them, whether `r` ended, and `r` itself.
fn peek(
    mut r: Box<dyn Read + Send>,
    n: usize,
    source: &Source,
) -> Result<(Vec<u8>, bool, Box<dyn Read + Send>)> {
    let mut head = Vec::with_capacity(n);
    let got = (&mut r)
        .take(n as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(source, e))?;
    Ok((head, got < n, r))
}

/// A [`Trace`] is itself a reader, so anything that takes readers (the co-run simulation)
/// takes opened traces.
impl AccessReader for Trace {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        Trace::read_batch(self, batch)
    }
    fn diagnostics(&self) -> super::Diagnostics {
        Trace::diagnostics(self)
    }
    fn reuse_profile(&mut self) -> Option<crate::sampling::Profile> {
        Trace::reuse_profile(self)
    }
    fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        Trace::thread_reuses(self)
    }
    /// The format's reader's, unless the trace is read as a sampled stream (whose batches
    /// are not the stream those counts count).
    fn counts_ahead(&self) -> Option<super::native::Counts> {
        self.stage
            .is_none()
            .then(|| self.reader.counts_ahead())
            .flatten()
    }
}
