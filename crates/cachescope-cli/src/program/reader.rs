//! Reading a running program's trace: its end waits for the program and notes how it ended,
//! the copy `--save` keeps is written as the references pass, and an exact `report -- PROGRAM`
//! says once, after a minute, how long `--sampled` would have taken ([`super::estimate`]).

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use cachescope::record::Recording;
use cachescope::trace::native::Writer;
use cachescope::trace::{AccessReader, Diagnostics, Trace};
use cachescope::{Batch, Source};

use super::estimate::Estimate;
use super::{NOTED_EMPTY, SAVED};
use crate::output::Pending;

/// The trace being kept as it passes.
pub(super) struct Saving {
    pub writer: Writer<std::io::BufWriter<std::fs::File>>,
    pub pending: Pending,
    pub path: PathBuf,
}

/// Reads the program's trace; at its end waits for the program, notes how it ended, and
/// finishes the saved copy (dropped unfinished, the copy's temporary file goes).
pub(super) struct ProgramReader {
    pub trace: Trace,
    pub recording: Option<Recording>,
    pub save: Option<Saving>,
    /// The note to print if the stream ends before any record (dropped at the first batch).
    pub empty: Option<String>,
    /// The one-minute note of an exact `report -- PROGRAM`.
    pub estimate: Option<Estimate>,
}

impl AccessReader for ProgramReader {
    fn read_batch(&mut self, batch: &mut Batch) -> cachescope::Result<usize> {
        let n = self.trace.read_batch(batch)?;
        if let (Some(estimate), Some(recording)) = (&mut self.estimate, &self.recording) {
            estimate.check(recording);
        }
        if n > 0 {
            self.empty = None;
            if let Some(save) = &mut self.save {
                save.writer.write_batch(batch)?;
            }
            return Ok(n);
        }
        if let Some(recording) = self.recording.take() {
            let description = recording.description().to_string();
            let finished = recording.finish()?;
            crate::exit::program_ended(&description, &finished);
            if let Some(note) = self.empty.take() {
                eprintln!("{note}");
                NOTED_EMPTY.store(true, Ordering::Relaxed);
            }
            if let Some(save) = self.save.take() {
                let path = save.finish()?;
                *SAVED.lock().expect("not poisoned") = Some(path);
            }
        }
        Ok(0)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.trace.diagnostics()
    }

    fn reuse_profile(&mut self) -> Option<cachescope::sampling::Profile> {
        self.trace.reuse_profile()
    }

    fn sample_itself(&mut self, options: &cachescope::spatial::SpatialOptions) -> bool {
        // A saved trace keeps the batches as they come: they must stay the filter's input.
        self.save.is_none() && self.trace.sample_itself(options)
    }
}

impl Saving {
    /// Ends the trace, syncs it and moves it into place; returns where.
    fn finish(self) -> cachescope::Result<PathBuf> {
        let Saving {
            writer,
            pending,
            path,
        } = self;
        let source = Source::File(path.clone());
        let (buf, _) = writer.finish_and_patch_header()?;
        let file = buf
            .into_inner()
            .map_err(|e| cachescope::Error::io(&source, e.into_error()))?;
        file.sync_all()
            .map_err(|e| cachescope::Error::io(&source, e))?;
        pending.commit().map_err(|e| {
            cachescope::Error::io(&source, std::io::Error::other(crate::exit::message(&e)))
        })?;
        Ok(path)
    }
}
