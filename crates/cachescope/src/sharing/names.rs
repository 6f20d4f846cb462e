//! Naming shared lines after the pass: the data structure of each line (the attribution's stat
//! bucket: variable, heap allocation site, stack, other) and the source lines of the writing
//! instructions, from the recording's event log.

use std::path::Path;

use super::SharedLine;
use crate::attribution::BucketMap;
use crate::attribution::events::{Event, EventKind};
use crate::attribution::symbols::Symbolizer;
use crate::error::Result;

/// Names every line of `lines` from `events` (the trace's event log, in order) and `exe`.
///
/// The events are applied all at once, frees left out: a line is named after the last block
/// allocated over it (a line shared by threads is usually in a block that lives while they run;
/// a block freed and reused for another site is named after the later one).
pub fn name(
    lines: &mut [SharedLine],
    events: impl Iterator<Item = Result<Event>>,
    exe: Option<&Path>,
    line_size: u64,
) -> Result<()> {
    let mut buckets = BucketMap::new(exe);
    for e in events {
        let e = e?;
        if !matches!(e.kind, EventKind::Free { .. }) {
            buckets.apply(&e.kind);
        }
    }
    let mut symbolizer = Symbolizer::default();
    let names = buckets.finish_names(&mut symbolizer);
    for l in lines.iter_mut() {
        let id = buckets.lookup(l.addr + l.first_byte.min(line_size - 1));
        if let Some((name, _)) = names.get(id as usize) {
            l.structure = name.clone();
        }
        l.code = l
            .write_pcs
            .iter()
            .map(|&(pc, _)| {
                let c = buckets.code_line(&mut symbolizer, pc);
                match (&c.file, c.line) {
                    (Some(file), Some(n)) => format!("{file}:{n}"),
                    _ => c.label(),
                }
            })
            .collect();
        l.code.dedup();
    }
    Ok(())
}
