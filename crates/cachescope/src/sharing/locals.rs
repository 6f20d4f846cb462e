//! Stack locals of shared lines: a line on the stack is named after the frame's local array or
//! structure it holds (`function:local`), as `attribute` names it. Frames live and die with
//! the trace's call events, so the locals are placed during the pass
//! ([`BucketMap::apply_call`], the attribution's own path) and each line remembers the locals
//! it was referenced in; naming after the pass ([`super::name`]) reads them from the line.

use std::path::Path;

use hashbrown::HashMap;

use crate::attribution::BucketMap;
use crate::attribution::events::{EventKind, EventReader};
use crate::batch::{Batch, Step};
use crate::error::Result;

/// Locals remembered per line: a line reused by other frames keeps its latest few.
const PER_LINE: usize = 4;

/// The frames' locals followed through the pass, and the lines they were referenced in.
#[derive(Debug)]
pub struct Locals {
    buckets: BucketMap,
    /// Line number → the locals referenced in it: (start, end, bucket).
    seen: HashMap<u64, Vec<(u64, u64, u32)>>,
}

impl Locals {
    /// Follows frames with the modules `log` (the recording's event log) maps: every mapping
    /// applies at once (the locals' functions are found by the module their entry is in).
    pub fn from_log(log: &Path) -> Result<Locals> {
        let mut buckets = BucketMap::new(None);
        for e in EventReader::open(log)? {
            let e = e?;
            if let EventKind::Map(_) = e.kind {
                buckets.apply(&e.kind);
            }
        }
        Ok(Locals {
            buckets,
            seen: HashMap::new(),
        })
    }

    /// Runs `batch`'s call events through the frames; `access` sees each data record in
    /// order (thread, index), after the events before it.
    pub fn observe(
        &mut self,
        batch: &Batch,
        shift: u32,
        mut access: impl FnMut(crate::access::ThreadId, usize),
    ) {
        for step in batch.steps() {
            match step {
                Step::Call(e) => self.buckets.apply_call(batch, e),
                Step::Accesses(range, thread) => {
                    for i in range {
                        if !batch.kinds[i].is_data() {
                            continue;
                        }
                        access(thread, i);
                        if let Some(l) = self.buckets.live_local(batch.addrs[i]) {
                            let v = self.seen.entry(batch.addrs[i] >> shift).or_default();
                            if !v.contains(&l) {
                                if v.len() == PER_LINE {
                                    v.remove(0);
                                }
                                v.push(l);
                            }
                        }
                    }
                }
            }
        }
        self.buckets.batch_done(batch);
    }

    /// The locals line `line` (its number) held, named: (start, end, `function:local`).
    pub fn of_line(&self, line: u64) -> Vec<(u64, u64, String)> {
        self.seen.get(&line).map_or_else(Vec::new, |v| {
            v.iter()
                .map(|&(s, e, id)| (s, e, self.buckets.name_of(id).to_string()))
                .collect()
        })
    }
}
