//! [`Follower`]: an event log applied to a [`BucketMap`] as the trace streams, each event
//! before the record at its position. The attribution and the layout transforms
//! ([`crate::layout`]) both follow the log this way.
//!
//! The start-up memory map (the `map` events before the first other event) is applied before
//! the first reference, since the files it names were mapped by the loader before anything
//! could use their addresses. A live source (the events of a program being recorded) may have
//! no event yet: it is asked again before each run of records.

use super::buckets::BucketMap;
use super::events::{Event, EventKind};
use super::measure::EventSource;
use crate::error::{Error, Result};

/// The events of one trace, applied in order.
pub struct Follower<'e> {
    events: Option<EventSource<'e>>,
    pending: Option<Event>,
    error: Option<Error>,
}

impl<'e> Follower<'e> {
    /// Follows `events` (none: nothing to apply), the start-up map applied to `buckets` now.
    pub fn new(events: Option<EventSource<'e>>, buckets: &mut BucketMap) -> Follower<'e> {
        let mut f = Follower {
            events,
            pending: None,
            error: None,
        };
        while let Some(e) = f.next_event() {
            if let EventKind::Map(_) = e.kind {
                buckets.apply(&e.kind);
            } else {
                f.pending = Some(e);
                break;
            }
        }
        f
    }

    fn next_event(&mut self) -> Option<Event> {
        if self.error.is_some() {
            return None;
        }
        match self.events.as_mut()?.next()? {
            Ok(e) => Some(e),
            Err(e) => {
                self.error = Some(e);
                self.events = None;
                None
            }
        }
    }

    /// Applies to `buckets` every event due before the record at `position`.
    pub fn apply_due(&mut self, position: u64, buckets: &mut BucketMap) {
        if self.pending.is_none() {
            self.pending = self.next_event();
        }
        while self
            .pending
            .as_ref()
            .is_some_and(|e| e.position <= position)
        {
            let e = self.pending.take().expect("checked");
            buckets.apply(&e.kind);
            self.pending = self.next_event();
        }
    }

    /// Where the records from index `i` (at trace position `position`) up to `n` stop for the
    /// pending event: the index of the record it is due before, or `n`.
    pub fn stop(&self, position: u64, i: usize, n: usize) -> usize {
        match &self.pending {
            Some(e) => n.min(i + (e.position - position).min(n as u64) as usize),
            None => n,
        }
    }

    /// Reads what is left of the log, so that a damaged end is still an error.
    pub fn finish(&mut self) -> Result<()> {
        self.pending = None;
        while self.next_event().is_some() {}
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
