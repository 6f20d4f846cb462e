//! Starting a program under the tool's spatial sampler ([`Recording::start_spatial`]): only
//! the data references to sampled lines cross the ring, read by [`SpatialReader`] as a
//! sampled stream (docs/sampled.md); the limit it lowers as it filters (the fixed-size
//! variant) is published back to the tool in the ring's header; StatCache's reuse sampler can
//! run in the same stream.

use std::ffi::{OsStr, OsString};
use std::io::Read;

use super::stream_copy::StreamCopy;
use super::tool_run::{CHILDREN, InTool, Launched, POSITIONS, launch, no_trace};
use super::tool_sampled::{Positions, thread_positions};
use super::tool_spatial::SpatialReader;
use super::{Recording, ToolOptions};
use crate::attribution::events::Event;
use crate::batch::Batch;
use crate::error::{Result, Source};
use crate::sampling::{Profile, SamplerOptions};
use crate::spatial::SpatialOptions;
use crate::trace::{AccessReader, Diagnostics};

/// A running program's sampled stream ([`Recording::start_spatial`]): an [`AccessReader`] of
/// sampled batches.
pub struct SpatialStream {
    reader: SpatialReader<Box<dyn Read + Send>>,
    /// The reuse sampler's positions and the per-thread sampler's, written while the tool
    /// runs.
    positions: Option<(Positions, Option<Positions>)>,
    /// Where the tool names the programs forked children ran: a sampled run follows none
    /// (`--cs-follow-forks=no`), so each is noted as not recorded. Read at the stream's end,
    /// before the recording's directory goes.
    children: std::path::PathBuf,
    children_note: Option<String>,
}

impl SpatialStream {
    /// The full stream's data references and instructions up to the last record read: how
    /// far the program has got.
    pub fn counts(&self) -> (u64, u64) {
        self.reader.counts()
    }

    /// Names the stream in errors.
    pub fn source(&self) -> &Source {
        self.reader.source()
    }
}

impl AccessReader for SpatialStream {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        let n = self.reader.read_batch(batch)?;
        if n == 0 {
            // The tool has closed its stream: the positions' writer can stop.
            self.positions.take();
            if self.children_note.is_none() {
                self.children_note =
                    super::tool::children_not_recorded(&self.children).map(|ran| {
                        format!(
                            "the program started {ran}, not recorded: a sampled run of a program \
                         follows no forked child (record it with `cachescope record \
                         --trace-children`, then give the trace to `--sampled`)"
                        )
                    });
            }
        }
        Ok(n)
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = self.reader.diagnostics();
        d.notes.extend(self.children_note.clone());
        d
    }

    fn reuse_profile(&mut self) -> Option<Profile> {
        self.reader.reuse_profile()
    }

    fn sample_itself(&mut self, options: &SpatialOptions) -> bool {
        self.reader.sample_itself(options)
    }
}

impl Recording {
    /// Starts `valgrind --tool=cachescope --cs-spatial=yes PROGRAM ARGS…` sampling the lines
    /// `spatial` samples; with `reuse`, StatCache's sampler runs in the same tool and the
    /// stream's [`AccessReader::reuse_profile`] gives its profile at the end, and (unless it
    /// counts instructions) one per thread too, whose records the stream carries
    /// ([`AccessReader::thread_reuses`], for a read of its copy). `opts` as for
    /// [`Recording::start_tool`] (`instr` is ignored: instructions are counted, never sampled;
    /// `--toggle-collect` is refused). Events, with `opts.events`, come on the receiver, each
    /// positioned in the full stream. With `copy`, the tool's stream is also written into it as
    /// it is read, for a second read ([`SpatialReader`] over the file, once
    /// [`StreamCopy::finish`]ed).
    pub fn start_spatial(
        program: &OsStr,
        args: &[OsString],
        opts: ToolOptions,
        spatial: SpatialOptions,
        reuse: Option<SamplerOptions>,
        copy: Option<&StreamCopy>,
    ) -> Result<(
        Recording,
        SpatialStream,
        Option<crossbeam_channel::Receiver<Event>>,
    )> {
        spatial.validate()?;
        if let Some(r) = &reuse {
            r.validate()?;
        }
        if !opts.toggle_collect.is_empty() {
            return Err(crate::Error::InvalidParameter {
                name: "toggle-collect",
                message: "--toggle-collect cannot be combined with sampling in the tool".into(),
            });
        }
        // The reuse sampler counts instructions only if asked to (--cs-instr says so).
        let opts = ToolOptions {
            instr: reuse.is_some_and(|r| r.include_instructions),
            ..opts
        };
        let Launched {
            mut recording,
            input,
            log,
            source,
            threshold,
        } = launch(
            program,
            args,
            &opts,
            InTool {
                reuse: reuse.as_ref(),
                spatial: Some(&spatial),
                // A thread's count in the tool is the count of data references less the
                // other threads': only when instructions are not counted.
                threads: reuse.is_some_and(|r| !r.include_instructions),
                // As the stage's sampler on a trace (`trace/sampled.rs`).
                windows: true,
            },
        )?;
        let positions = reuse.map(|r| {
            // The same draws as the trace's sampler (`Sampler::floored`), those it keeps.
            let floor = crate::sampling::REPORT_FLOOR;
            let whole = Positions::whole(&recording.dir.join(POSITIONS), &r, floor);
            let threads = (!r.include_instructions).then(|| thread_positions(&recording.dir, &r));
            (whole, threads)
        });
        let input: Box<dyn Read + Send> = match copy {
            Some(copy) => Box::new(copy.tee(input)),
            None => input,
        };
        let mut reader = SpatialReader::new(input, source, spatial, reuse)?;
        #[cfg(target_os = "linux")]
        if let Some(cell) = threshold {
            reader = reader.with_limit(Box::new(move |limit| cell.lower(limit)));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = threshold;
        let mut rx = None;
        if opts.events {
            let (tx, events) = crossbeam_channel::unbounded();
            reader = reader.with_events(tx);
            rx = Some(events);
        }
        if let Err(e) = reader.start() {
            drop(positions);
            return Err(no_trace(e, &mut recording, &log));
        }
        let children = recording.dir.join(CHILDREN);
        Ok((
            recording,
            SpatialStream {
                reader,
                positions,
                children,
                children_note: None,
            },
            rx,
        ))
    }
}
