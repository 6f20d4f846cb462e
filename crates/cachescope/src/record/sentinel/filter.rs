//! [`SentinelFilter`]: drops the sentinel touches and the references inside open brackets,
//! and sends each closed bracket's events at its position in the kept stream.

use hashbrown::HashMap;

use super::{EventCounts, GroupSource, SEQ_MOD, region_of};
use crate::attribution::events::{Event, EventKind};
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::record::log::Group;
use crate::trace::{AccessReader, Diagnostics};

/// An [`AccessReader`] that removes sentinel brackets from `inner` and sends the events they
/// mark to `sink` (an event is sent before the batch holding its position is returned).
pub struct SentinelFilter<R> {
    inner: R,
    log: Box<dyn GroupSource>,
    sink: crossbeam_channel::Sender<Event>,
    source: Source,
    scratch: Batch,
    open: Vec<u64>,
    pending: HashMap<u64, Group>,
    read: u64,
    counts: EventCounts,
    shared: Option<std::sync::Arc<std::sync::Mutex<EventCounts>>>,
}

impl<R: AccessReader> SentinelFilter<R> {
    /// Filters `inner` (whose errors name `source`), reading groups from `log`.
    pub fn new(
        inner: R,
        log: Box<dyn GroupSource>,
        sink: crossbeam_channel::Sender<Event>,
        source: Source,
    ) -> Self {
        SentinelFilter {
            inner,
            log,
            sink,
            source,
            scratch: Batch::new(),
            open: Vec::new(),
            pending: HashMap::new(),
            read: 0,
            counts: EventCounts::default(),
            shared: None,
        }
    }

    /// Also publishes the counts into `shared` after every batch.
    pub fn with_shared_counts(
        mut self,
        shared: std::sync::Arc<std::sync::Mutex<EventCounts>>,
    ) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Counts so far.
    pub fn counts(&self) -> &EventCounts {
        &self.counts
    }

    fn corrupt(&self, index: u64, message: String) -> Error {
        Error::Corrupt {
            source_name: self.source.clone(),
            message: format!("reference {index} of the recorded stream: {message}"),
        }
    }

    fn touch(&mut self, index: u64, offset: u64) -> Result<()> {
        let seq = offset / 2;
        if offset % 2 == 0 {
            if self.open.contains(&seq) {
                return Err(self.corrupt(
                    index,
                    format!("sentinel bracket {seq} (mod {SEQ_MOD}) opened twice"),
                ));
            }
            self.open.push(seq);
            return Ok(());
        }
        let Some(at) = self.open.iter().position(|&s| s == seq) else {
            return Err(self.corrupt(
                index,
                format!(
                    "sentinel close of event {seq} (mod {SEQ_MOD}) without its open touch{}",
                    match self.open.as_slice() {
                        [] => String::new(),
                        open => format!(" (open: {open:?})"),
                    }
                ),
            ));
        };
        self.open.swap_remove(at);
        let group = self.group(index, seq)?;
        self.counts.brackets += 1;
        for kind in group.events {
            match &kind {
                EventKind::Alloc { .. } => self.counts.allocs += 1,
                EventKind::Free { .. } => self.counts.frees += 1,
                EventKind::Map(_) => self.counts.maps += 1,
                // The interposer logs no huge pages: only the tool reads smaps.
                EventKind::HugePages { .. } => {}
            }
            // A consumer that stopped listening does not stop the trace.
            let _ = self.sink.send(Event {
                position: self.counts.kept,
                kind,
            });
        }
        Ok(())
    }

    /// The log group of bracket `seq` (mod [`SEQ_MOD`]).
    fn group(&mut self, index: u64, seq: u64) -> Result<Group> {
        if let Some(g) = self.pending.remove(&seq) {
            return Ok(g);
        }
        while let Some(g) = self.log.next_group()? {
            let key = g.seq % SEQ_MOD;
            if key == seq {
                return Ok(g);
            }
            if let Some(old) = self.pending.insert(key, g) {
                return Err(self.corrupt(
                    index,
                    format!(
                        "the interposer's log holds events {} and {} that the trace cannot \
                         tell apart (both {key} mod {SEQ_MOD}) before either is marked",
                        old.seq, self.pending[&key].seq
                    ),
                ));
            }
        }
        let logged = {
            let mut v: Vec<u64> = self.pending.values().map(|g| g.seq).collect();
            v.sort_unstable();
            v.truncate(5);
            v
        };
        Err(self.corrupt(
            index,
            format!(
                "the trace marks event {seq} (mod {SEQ_MOD}) but the interposer's log has no \
                 such record (unmatched logged events: {logged:?})"
            ),
        ))
    }
}

impl<R: AccessReader> AccessReader for SentinelFilter<R> {
    fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
        out.clear();
        loop {
            let n = self.inner.read_batch(&mut self.scratch)?;
            if n == 0 {
                self.counts.unclosed = self.open.len() as u64;
                self.publish();
                return Ok(0);
            }
            for i in 0..n {
                let addr = self.scratch.addrs[i];
                let index = self.read + i as u64;
                if let Some(base) = region_of(addr) {
                    self.counts.dropped += 1;
                    self.touch(index, addr - base)?;
                } else if self.open.is_empty() {
                    out.push_raw(
                        addr,
                        self.scratch.sizes[i],
                        self.scratch.kinds[i],
                        self.scratch.pcs[i],
                    );
                    self.counts.kept += 1;
                } else {
                    self.counts.dropped += 1;
                }
            }
            self.read += n as u64;
            if !out.is_empty() {
                self.publish();
                return Ok(out.len());
            }
        }
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.diagnostics()
    }
}

impl<R> SentinelFilter<R> {
    fn publish(&self) {
        if let Some(shared) = &self.shared {
            if let Ok(mut c) = shared.lock() {
                *c = self.counts.clone();
            }
        }
    }
}
