//! The event log of a program being reported on as it runs (`report -- PROGRAM`): the
//! recorder's events feed the attribution live and are written beside the kept trace as they
//! pass, so the threads section (and a later `attribute --save`d trace) can read them again.
//!
//! The recorder sends an event on its channel when it decodes it, before any record after it,
//! so every event due before a record is in the channel by the time the attribution, on
//! whichever pass worker, measures that record: the source never has to wait, and "nothing
//! yet" is the answer when the channel is empty (see [`EventSource`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use cachescope::Source;
use cachescope::attribution::EventSource;
use cachescope::attribution::events::{Event, EventWriter, Header};
use crossbeam_channel::Receiver;

use crate::output::Pending;

type Writer = EventWriter<std::io::BufWriter<std::fs::File>>;

/// The log being written: every event taken from the channel goes into it, in order.
pub struct LiveLog {
    rx: Receiver<Event>,
    writer: Arc<Mutex<Written>>,
    pending: Pending,
    path: PathBuf,
}

/// The writer, and the first error it met (reported at [`LiveLog::finish`]: the attribution
/// must not stop on a full disk the log's reader would notice).
struct Written {
    writer: Option<Writer>,
    error: Option<cachescope::Error>,
}

impl Written {
    fn write(&mut self, event: &Event) {
        if let (Some(w), None) = (&mut self.writer, &self.error) {
            if let Err(e) = w.write(event) {
                self.error = Some(e);
            }
        }
    }
}

impl LiveLog {
    /// Starts the log at `path` (committed by [`LiveLog::finish`]) for the events of `rx`.
    pub fn create(path: &Path, header: &Header, rx: Receiver<Event>) -> Result<LiveLog> {
        let (pending, file) = Pending::create(path)?;
        let source = Source::File(path.to_owned());
        let writer = EventWriter::new(std::io::BufWriter::new(file), source, header)?;
        Ok(LiveLog {
            rx,
            writer: Arc::new(Mutex::new(Written {
                writer: Some(writer),
                error: None,
            })),
            pending,
            path: path.to_owned(),
        })
    }

    /// The events for the attribution, each written into the log as it is taken.
    pub fn source(&self) -> EventSource<'static> {
        Box::new(Tee {
            rx: self.rx.clone(),
            log: self.writer.clone(),
        })
    }

    /// After the pass (the program's stream has ended, so every event has been sent): writes
    /// the events nobody took, ends the log and moves it into place; returns where.
    pub fn finish(self) -> Result<PathBuf> {
        let mut written = self.writer.lock().expect("not poisoned");
        for event in self.rx.try_iter() {
            written.write(&event);
        }
        if let Some(e) = written.error.take() {
            return Err(e.into());
        }
        let writer = written.writer.take().expect("finished once");
        drop(written);
        let file = writer
            .finish()?
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| {
                f.sync_all()?;
                Ok(f)
            })
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        drop(file);
        self.pending.commit()?;
        Ok(self.path)
    }
}

/// The attribution's view of the channel: what has been sent so far, written as it goes.
struct Tee {
    rx: Receiver<Event>,
    log: Arc<Mutex<Written>>,
}

impl Iterator for Tee {
    type Item = cachescope::Result<Event>;

    fn next(&mut self) -> Option<Self::Item> {
        let event = self.rx.try_recv().ok()?;
        self.log.lock().expect("not poisoned").write(&event);
        Some(Ok(event))
    }
}
