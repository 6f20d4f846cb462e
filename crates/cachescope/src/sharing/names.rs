//! Naming shared lines after the pass: the data structures each line holds (the attribution's
//! stat buckets: variable, heap allocation site, stack, other), byte by byte, with the fields
//! or elements each thread uses where the debug information says (`parts.rs`), and the source
//! lines of the writing instructions, from the recording's event log.

use std::path::{Path, PathBuf};

use hashbrown::HashMap;

use super::SharedLine;
use super::parts::{Namer, layout_fix, parts};
use crate::attribution::BucketMap;
use crate::attribution::events::{Event, EventKind};
use crate::attribution::symbols::Symbolizer;
use crate::attribution::symbols::layout::Layout;
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
    let granule = (line_size / 64).max(1);
    for l in lines.iter_mut() {
        let byte = l.addr + l.first_byte.min(line_size - 1);
        let id = buckets.lookup(byte);
        if let Some(local) = local_at(&l.locals, byte) {
            l.structure = local.to_string();
        } else if let Some((name, _)) = names.get(id as usize) {
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
    let mut namer = Buckets {
        buckets: &mut buckets,
        names: &names,
        layouts: HashMap::new(),
        locals: Vec::new(),
    };
    for l in lines.iter_mut() {
        namer.locals.clone_from(&l.locals);
        l.structures = parts(l, granule, &mut namer);
        // Named fields make a more precise fix than the bytes.
        if let Some(fix) = layout_fix(l) {
            l.fix = Some(fix);
        }
    }
    Ok(())
}

/// Names a line's bytes by the attribution's buckets, and their fields from DWARF.
struct Buckets<'a> {
    buckets: &'a mut BucketMap,
    names: &'a [(String, crate::attribution::BucketKind)],
    layouts: HashMap<(PathBuf, u64), Option<Layout>>,
    /// The line's frame locals (the pass placed them: the map no longer has them).
    locals: Vec<(u64, u64, String)>,
}

/// The name of the local of `locals` holding byte `addr`, the latest placed first.
fn local_at(locals: &[(u64, u64, String)], addr: u64) -> Option<&str> {
    locals
        .iter()
        .rev()
        .find(|(s, e, _)| (*s..*e).contains(&addr))
        .map(|(_, _, n)| n.as_str())
}

impl Namer for Buckets<'_> {
    fn structure(&mut self, line: u64, offset: u64) -> String {
        if let Some(local) = local_at(&self.locals, line + offset) {
            return local.to_string();
        }
        let id = self.buckets.lookup(line + offset);
        self.names
            .get(id as usize)
            .map_or_else(|| "other".into(), |(n, _)| n.clone())
    }

    fn field(&mut self, line: u64, from: u64, to: u64) -> Option<String> {
        let (a, b) = (line + from, line + to);
        if let Some((module, var)) = self.buckets.variable_at(a) {
            return Some(module.field_name(var, a, b, &mut self.layouts));
        }
        let (start, _) = self.buckets.heap_block_at(a)?;
        Some(format!("+{}-{} of the block", a - start, b - start - 1))
    }
}
