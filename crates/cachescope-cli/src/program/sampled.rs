//! `--sampled -- PROGRAM` (docs/sampled.md): the program runs under the tool's line filter
//! (`cs_spatial.c`), only the sampled lines' references cross to cachescope, and they are read
//! as the sampled stream `--sampled TRACE` reads from a file: the same batches as sampling the
//! run's full trace (`crates/cachescope/tests/tool_spatial.rs`). StatCache's reuse sampler
//! runs in the same tool when asked. Where the tool cannot filter (lackey, `--save`, which
//! keeps every reference, or `--toggle-collect`) the full stream is sampled as it passes, with
//! the same result.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use cachescope::record::{ProgramOutput, Recording, SpatialStream, StreamCopy, ToolOptions};
use cachescope::sampling::{Profile, SamplerOptions};
use cachescope::spatial::SpatialOptions;
use cachescope::trace::{AccessReader, Diagnostics, Trace};
use cachescope::{Batch, Source};

use super::{Capture, ProgramReader, Started};
use crate::args::{Backend, LiveArgs};

/// How the input of a second read was kept ([`start_sampled`]'s `keep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// A native trace of every reference.
    Trace,
    /// The tool's sampled record stream, read again with
    /// [`cachescope::record::tool_spatial::SpatialReader`].
    ToolStream,
}

/// Starts `command` as `live` says, read as the sampled stream of `spatial` (with `reuse`,
/// StatCache's profile too, from [`Trace::reuse_profile`] at the end) and, with `events`, its
/// allocation events sent as they are decoded (the tool only). With `keep`, what a second
/// read needs is kept there as it passes; the second element says what it is, the third is
/// the tool's stream's copy, to be [`StreamCopy::finish`]ed before a second read. The progress
/// bar shows the references the program has made beside the sampled ones.
pub fn start_sampled(
    command: &[OsString],
    live: &LiveArgs,
    (spatial, reuse): (SpatialOptions, Option<SamplerOptions>),
    keep: Option<&Path>,
    events: bool,
    quiet: bool,
) -> Result<(Started, Kept, Option<StreamCopy>)> {
    let (program, args) = command.split_first().context("no program to run")?;
    let capture = Capture::new(live, ProgramOutput::Stderr);
    let backend = capture.backend(quiet)?;
    if backend == Backend::Lackey || live.save.is_some() || !capture.toggle_collect.is_empty() {
        let keep = keep.map(Path::to_path_buf);
        let mut started = super::start(command, live, keep, events, false, quiet)?;
        started.trace.sampled(spatial, reuse)?;
        return Ok((started, Kept::Trace, None));
    }
    let copy = keep
        .map(|p| StreamCopy::create(p).with_context(|| format!("creating {}", p.display())))
        .transpose()?;
    let opts = ToolOptions {
        events,
        instr: true,
        output: capture.output.clone(),
        trace_children: capture.trace_children,
        collect_at_start: capture.collect_at_start,
        toggle_collect: Vec::new(),
        // Call events come with the allocation events unless --no-calls (set by the
        // commands that have no call graph: `attribute` without `--callgraph`, `sharing`).
        calls: events && capture.calls,
    };
    let (recording, stream, events) =
        Recording::start_spatial(program, args, opts, spatial, reuse, copy.as_ref())?;
    let description = recording.description().to_string();
    let source = Source::Program(description.clone());
    let seen = Arc::new(AtomicU64::new(0));
    crate::progress::watch_references(seen.clone());
    let counted = Counted { stream, seen };
    let reader = ProgramReader {
        trace: Trace::from_reader(Box::new(counted), source.clone()),
        recording: Some(recording),
        save: None,
        empty: (!quiet).then(|| capture.nothing_recorded()),
        estimate: None,
    };
    let started = Started {
        trace: Trace::from_reader(Box::new(reader), source),
        events,
        run_id: cachescope::attribution::run_id::new(),
        description,
    };
    Ok((started, Kept::ToolStream, copy))
}

/// The tool's sampled stream, telling the progress bar how far the program has got.
struct Counted {
    stream: SpatialStream,
    seen: Arc<AtomicU64>,
}

impl AccessReader for Counted {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        let n = self.stream.read_batch(batch)?;
        let (data, instrs) = self.stream.counts();
        self.seen.store(data + instrs, Ordering::Relaxed);
        Ok(n)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.stream.diagnostics()
    }

    fn reuse_profile(&mut self) -> Option<Profile> {
        self.stream.reuse_profile()
    }

    fn sample_itself(&mut self, options: &SpatialOptions) -> bool {
        self.stream.sample_itself(options)
    }
}
