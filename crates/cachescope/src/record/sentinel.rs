//! Removing the interposer's sentinel brackets from a recorded reference stream and placing
//! its events there.
//!
//! The interposer (`cachescope-preload`) marks event `seq` with a 1-byte store at
//! `base + 2 * (seq % SEQ_MOD)` before its bookkeeping ("open") and at the next byte after it
//! ("close"). (Stores, not loads: Valgrind's JIT deletes loads whose value is unused.) Any
//! reference into a sentinel region counts as a touch, whatever its kind. [`SentinelFilter`] drops every reference into a sentinel region and every
//! reference while a bracket is open (the interposer's own work: unwinding, formatting,
//! `write(2)`), counts the references it keeps, and at each close emits the bracket's events
//! (read from the interposer's log) at `position` = references kept so far.
//!
//! Brackets need not nest: Valgrind runs one thread at a time but may switch threads inside a
//! bracket (at a blocking `write`, say), so another thread's bracket can open and close in the
//! middle. The filter keeps the set of open brackets and drops references while it is not
//! empty; the other thread's references in that window are dropped too (rare: Valgrind
//! switches at most every ~100,000 basic blocks or at a blocking system call).

use std::time::Duration;

use hashbrown::HashMap;

use super::log::{Group, LogReader};
use crate::attribution::events::{Event, EventKind};
use crate::batch::Batch;
use crate::error::{Error, Result, Source};
use crate::trace::{AccessReader, Diagnostics};

/// Bytes of each sentinel region (the interposer's `sentinel::REGION_LEN`).
pub const REGION_LEN: u64 = 64 * 1024;

/// Sequence numbers are encoded modulo this in the touch offsets.
pub const SEQ_MOD: u64 = REGION_LEN / 2;

/// Where the interposer may map its region, tried in order: far from where Linux and Valgrind
/// put programs, libraries, heaps and stacks, and below Valgrind's client address limit.
pub const CANDIDATES: [u64; 3] = [0x3ca7_e000_0000, 0x2ca7_e000_0000, 0x1ca7_e000_0000];

/// The value of `CACHESCOPE_SENTINEL` for the interposer.
pub fn candidates_env() -> String {
    CANDIDATES
        .iter()
        .map(|c| format!("{c:#x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The sentinel region `addr` falls in, if any.
#[inline]
pub fn region_of(addr: u64) -> Option<u64> {
    let base = addr & !(REGION_LEN - 1);
    CANDIDATES.contains(&base).then_some(base)
}

/// A source of the interposer's log groups.
pub trait GroupSource: Send {
    /// The next group, `None` when the log has ended.
    fn next_group(&mut self) -> Result<Option<Group>>;
}

impl<R: std::io::BufRead + Send> GroupSource for LogReader<R> {
    fn next_group(&mut self) -> Result<Option<Group>> {
        LogReader::next_group(self)
    }
}

/// Groups parsed on another thread (the recorder's log drain).
pub struct ChannelLog {
    rx: crossbeam_channel::Receiver<Result<Group>>,
    source: Source,
}

impl ChannelLog {
    /// Receives from `rx`; `source` names the log in errors.
    pub fn new(rx: crossbeam_channel::Receiver<Result<Group>>, source: Source) -> Self {
        ChannelLog { rx, source }
    }
}

impl GroupSource for ChannelLog {
    fn next_group(&mut self) -> Result<Option<Group>> {
        // The interposer writes a record before its close touch, so once the close is in the
        // trace the record is in the pipe: a long wait means the record was lost.
        match self.rx.recv_timeout(Duration::from_secs(60)) {
            Ok(g) => g.map(Some),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Ok(None),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(Error::Corrupt {
                source_name: self.source.clone(),
                message: "no record from the allocation interposer for 60 s although the \
                          trace shows its event (did the program close the log descriptor?)"
                    .into(),
            }),
        }
    }
}

/// What the filter saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Allocation events (a realloc counts one allocation and one free).
    pub allocs: u64,
    /// Free events.
    pub frees: u64,
    /// Mapping events (every line of every map dump).
    pub maps: u64,
    /// Sentinel brackets closed.
    pub brackets: u64,
    /// References removed: sentinel touches and everything inside brackets.
    pub dropped: u64,
    /// References kept.
    pub kept: u64,
    /// Brackets still open when the trace ended (the program died inside the interposer).
    pub unclosed: u64,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::AccessKind;
    use crate::trace::lackey;

    const S: u64 = CANDIDATES[0];

    /// Kept references and events.
    type Filtered = (Vec<(AccessKind, u64)>, Vec<Event>);

    /// A lackey text and an interposer log, through the filter with batches of `batch` refs.
    fn run(lackey_text: &str, log: &str, batch: usize) -> Result<Filtered> {
        struct Small<R>(R, usize, Batch);
        impl<R: AccessReader> AccessReader for Small<R> {
            fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
                // Re-chunk the inner reader's output into batches of at most `self.1`.
                out.clear();
                if self.2.is_empty() && self.0.read_batch(&mut self.2)? == 0 {
                    return Ok(0);
                }
                let take = self.1.min(self.2.len());
                for i in 0..take {
                    out.push(self.2.get(i));
                }
                let rest: Vec<_> = (take..self.2.len()).map(|i| self.2.get(i)).collect();
                self.2.clear();
                for a in rest {
                    self.2.push(a);
                }
                Ok(take)
            }
        }
        let inner = lackey::Reader::new(
            std::io::Cursor::new(lackey_text.as_bytes().to_vec()),
            Source::Memory,
            lackey::Options::default(),
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        let log = LogReader::new(
            std::io::Cursor::new(log.as_bytes().to_vec()),
            Source::Memory,
        );
        let mut f = SentinelFilter::new(
            Small(inner, batch, Batch::new()),
            Box::new(log),
            tx,
            Source::Memory,
        );
        let mut b = Batch::new();
        let mut refs = Vec::new();
        while f.read_batch(&mut b)? > 0 {
            refs.extend((0..b.len()).map(|i| (b.kinds[i], b.addrs[i])));
        }
        drop(f);
        Ok((refs, rx.iter().collect()))
    }

    fn trace() -> String {
        // Program refs at 0x100.., an allocation (seq 1) bracketed with interposer work at
        // 0x900.., then a free (seq 2).
        format!(
            "I  100,4\n L 1000,8\n\
             I  104,4\n S {open1:x},1\nI  900,4\n S 9000,8\n S {close1:x},1\n\
             I  108,4\n S 5000,4\n M 5004,4\n\
             L {open2:x},1\nI  904,4\n S {close2:x},1\n\
             I  10c,4\n",
            open1 = S + 2,
            close1 = S + 3,
            open2 = S + 4,
            close2 = S + 5,
        )
    }

    const LOG: &str = "H 1 7 3ca7e0000000\nA 1 5000 8 401000\nF 2 5000\n";

    fn expect() -> Filtered {
        use AccessKind::*;
        (
            vec![
                (Instr, 0x100),
                (Load, 0x1000),
                (Instr, 0x104),
                (Instr, 0x108),
                (Store, 0x5000),
                (Modify, 0x5004),
                (Instr, 0x10c),
            ],
            vec![
                Event {
                    position: 3,
                    kind: EventKind::Alloc {
                        addr: 0x5000,
                        size: 8,
                        stack: vec![0x40_1000],
                    },
                },
                Event {
                    position: 6,
                    kind: EventKind::Free { addr: 0x5000 },
                },
            ],
        )
    }

    #[test]
    fn brackets_inside_one_batch_are_removed_and_placed() {
        assert_eq!(run(&trace(), LOG, 1 << 16).unwrap(), expect());
    }

    #[test]
    fn brackets_across_batch_boundaries_give_the_same_result() {
        for batch in 1..8 {
            assert_eq!(
                run(&trace(), LOG, batch).unwrap(),
                expect(),
                "batch {batch}"
            );
        }
    }

    #[test]
    fn interleaved_brackets_of_two_threads() {
        // Thread A opens 1, thread B opens and closes 2, A closes 1; B's record came first.
        let t = format!(
            " L 10,8\n S {:x},1\n L 900,8\n S {:x},1\n L 901,8\n S {:x},1\n L 902,8\n S {:x},1\n L 20,8\n",
            S + 2,
            S + 4,
            S + 5,
            S + 3
        );
        let log = "F 2 7000\nA 1 5000 8\n";
        let (refs, events) = run(&t, log, 3).unwrap();
        assert_eq!(
            refs,
            vec![(AccessKind::Load, 0x10), (AccessKind::Load, 0x20)]
        );
        assert_eq!(
            events,
            vec![
                Event {
                    position: 1,
                    kind: EventKind::Free { addr: 0x7000 }
                },
                Event {
                    position: 1,
                    kind: EventKind::Alloc {
                        addr: 0x5000,
                        size: 8,
                        stack: vec![]
                    }
                },
            ]
        );
    }

    #[test]
    fn a_sequence_mismatch_is_a_clear_error() {
        // The trace closes event 3 but the log only knows events 1 and 2.
        let t = format!(" L 10,8\n S {:x},1\n S {:x},1\n", S + 6, S + 7);
        let err = run(&t, LOG, 64).unwrap_err().to_string();
        assert!(
            err.contains("reference 2") && err.contains("event 3"),
            "{err}"
        );
        assert!(err.contains("no such record"), "{err}");
        // A close without its open.
        let t = format!(" L 10,8\n S {:x},1\n", S + 3);
        let err = run(&t, LOG, 64).unwrap_err().to_string();
        assert!(err.contains("without its open"), "{err}");
    }

    #[test]
    fn addresses_next_to_the_region_are_kept() {
        let t = format!(" L {:x},8\n S {:x},8\n", S - 1, S + REGION_LEN);
        let (refs, events) = run(&t, "", 64).unwrap();
        assert_eq!(refs.len(), 2);
        assert!(events.is_empty());
        assert_eq!(region_of(S + REGION_LEN - 1), Some(S));
        assert_eq!(region_of(CANDIDATES[2] + 5), Some(CANDIDATES[2]));
    }
}
