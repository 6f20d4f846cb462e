//! Which structure an address belongs to at each point of the trace: the event log applied by
//! position to a [`BucketMap`], as the attribution applies it (`measure.rs`), so a miss of a
//! function's subtree is named by the variable or allocation site it fell on.

use crate::attribution::buckets::BucketMap;
use crate::attribution::events::{Event, EventKind};
use crate::attribution::measure::EventSource;
use crate::error::{Error, Result};

/// A [`BucketMap`] following an event log through the trace.
pub struct Places {
    pub(super) buckets: BucketMap,
    events: EventSource<'static>,
    pending: Option<Event>,
    error: Option<Error>,
}

impl std::fmt::Debug for Places {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Places").finish_non_exhaustive()
    }
}

impl Places {
    /// Follows `events`; the leading memory map applies at once (the loader mapped those
    /// files before any reference).
    pub fn new(events: EventSource<'static>, buckets: BucketMap) -> Places {
        let mut p = Places {
            buckets,
            events,
            pending: None,
            error: None,
        };
        while let Some(e) = p.next_event() {
            if let EventKind::Map(_) = e.kind {
                p.buckets.apply(&e.kind);
            } else {
                p.pending = Some(e);
                break;
            }
        }
        p
    }

    fn next_event(&mut self) -> Option<Event> {
        if self.error.is_some() {
            return None;
        }
        match self.events.next()? {
            Ok(e) => Some(e),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// Applies every event due before the record at `position`; returns the position of
    /// the next pending event, if any.
    pub fn advance(&mut self, position: u64) -> Option<u64> {
        if self.pending.is_none() {
            self.pending = self.next_event();
        }
        while let Some(e) = self.pending.take() {
            if e.position > position {
                let at = e.position;
                self.pending = Some(e);
                return Some(at);
            }
            self.buckets.apply(&e.kind);
            self.pending = self.next_event();
        }
        None
    }

    /// The bucket of `addr` now.
    pub fn bucket(&mut self, addr: u64) -> u32 {
        self.buckets.lookup(addr)
    }

    /// Reads what is left of the log (a damaged end is an error) and gives the map.
    pub fn finish(mut self) -> Result<BucketMap> {
        self.pending = None;
        while self.next_event().is_some() {}
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.buckets),
        }
    }
}
