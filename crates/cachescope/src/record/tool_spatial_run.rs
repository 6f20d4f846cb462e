//! Starting a program under the tool's spatial sampler ([`Recording::start_spatial`]): only
//! the references to sampled lines cross the ring, read by [`SpatialReader`]; the threshold
//! the caller lowers as it filters (the fixed-size variant) is published back to the tool in
//! the ring's header; StatCache's reuse sampler can run in the same stream.

use std::ffi::{OsStr, OsString};
use std::io::Read;

use super::tool_run::{InTool, Launched, SpatialTool, Threshold, launch, no_trace};
use super::tool_sampled::Positions;
use super::tool_spatial::{Ending, SampledRefs, SpatialReader};
use super::{Recording, ToolOptions};
use crate::attribution::events::Event;
use crate::error::{Result, Source};
use crate::sampling::{Profile, SamplerOptions};

/// A running program's sampled stream ([`Recording::start_spatial`]).
pub struct SpatialStream {
    reader: SpatialReader<Box<dyn Read + Send>>,
    threshold: Option<Threshold>,
    positions: Option<Positions>,
    reuse: Option<SamplerOptions>,
}

impl SpatialStream {
    /// The next sampled references (cleared first); 0 at the end of the stream.
    pub fn read(&mut self, out: &mut SampledRefs) -> Result<usize> {
        crate::interrupt::check()?;
        self.reader.read(out)
    }

    /// Tells the tool that lines whose hash is at or above `t` are no longer wanted: it
    /// stops writing them soon (after the buffer it is filling), never sooner, so what it
    /// writes stays a superset of what the caller keeps.
    pub fn lower_threshold(&self, t: u64) {
        #[cfg(target_os = "linux")]
        if let Some(cell) = &self.threshold {
            cell.lower(t);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = t;
    }

    /// The full stream's data references and instructions up to the last record read.
    pub fn counts(&self) -> (u64, u64) {
        self.reader.counts()
    }

    /// The highest thread id seen so far.
    pub fn threads(&self) -> u32 {
        self.reader.threads()
    }

    /// Names the stream in errors.
    pub fn source(&self) -> &Source {
        self.reader.source()
    }

    /// After the last read: the run's counts, and the reuse sampler's profile when it ran.
    pub fn finish(mut self) -> Result<(Ending, Option<Profile>)> {
        // The tool has closed its stream: the positions' writer can stop.
        if let Some(p) = self.positions.take() {
            p.stop();
        }
        let ending = self.reader.finish()?;
        let profile = match self.reuse {
            Some(options) => ending.profile(options)?,
            None => None,
        };
        Ok((ending, profile))
    }
}

impl Recording {
    /// Starts `valgrind --tool=cachescope --cs-spatial=yes PROGRAM ARGS…` with `spatial`'s
    /// threshold and line size; with `reuse`, StatCache's sampler runs in the same tool and
    /// [`SpatialStream::finish`] gives its profile. `opts` as for
    /// [`Recording::start_tool`] (`instr` is ignored: instructions are always counted;
    /// toggled collection is refused). Events, with `opts.events`, come on the receiver,
    /// each positioned in the full stream.
    pub fn start_spatial(
        program: &OsStr,
        args: &[OsString],
        opts: ToolOptions,
        spatial: SpatialTool,
        reuse: Option<SamplerOptions>,
    ) -> Result<(
        Recording,
        SpatialStream,
        Option<crossbeam_channel::Receiver<Event>>,
    )> {
        if let Some(r) = &reuse {
            r.validate()?;
        }
        if !opts.toggle_collect.is_empty() {
            return Err(crate::Error::InvalidParameter {
                name: "toggle-collect",
                message: "--toggle-collect cannot be combined with sampling in the tool".into(),
            });
        }
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
            },
        )?;
        let positions = reuse.map(|r| Positions::start(&recording.dir, r));
        let mut reader = SpatialReader::new(input, source);
        let mut rx = None;
        if opts.events {
            let (tx, events) = crossbeam_channel::unbounded();
            reader = reader.with_events(tx);
            rx = Some(events);
        }
        let mut stream = SpatialStream {
            reader,
            threshold,
            positions,
            reuse,
        };
        if let Err(e) = stream.reader.start() {
            drop(stream);
            return Err(no_trace(e, &mut recording, &log));
        }
        Ok((recording, stream, rx))
    }
}
