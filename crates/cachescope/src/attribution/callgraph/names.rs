//! Function keys named: the function a key's address lies in, as its symbols name it (two
//! entries of one function are one), and instructions placed on their source lines.

use std::collections::BTreeMap;

use super::graph::{Graph, NodeId, ROOT};
use super::report::Position;
use crate::attribution::buckets::BucketMap;
use crate::attribution::symbols::Symbolizer;

/// Names, files and objects of the function keys, merged by name and object.
#[derive(Default)]
pub(super) struct Names {
    /// Per report function: name, file, object, entry position.
    pub(super) functions: Vec<(String, Option<String>, Option<String>, Position)>,
    pub(super) by_name: BTreeMap<(String, Option<String>), usize>,
    /// FnId → report function.
    pub(super) of_key: Vec<usize>,
    /// Instruction address → (report function, position), for lines.
    pub(super) by_pc: hashbrown::HashMap<u64, (usize, Position), foldhash::fast::FixedState>,
    pub(super) sym: Symbolizer,
}

impl Names {
    pub(super) fn function_of(&mut self, buckets: &BucketMap, addr: u64) -> usize {
        let frames = self.sym.frames(addr, buckets.module_of(addr));
        let outer = frames.last().expect("never empty");
        let name = match &outer.function {
            Some(f) => f.clone(),
            None => outer.label(),
        };
        let object = buckets
            .module_of(addr)
            .and_then(|m| m.path.file_name())
            .map(|f| f.to_string_lossy().into_owned());
        let entry = (buckets.source_path(addr), frames[0].line.unwrap_or(0));
        self.named(name, entry, object)
    }

    pub(super) fn named(&mut self, name: String, entry: Position, object: Option<String>) -> usize {
        let next = self.functions.len();
        let i = *self
            .by_name
            .entry((name.clone(), object.clone()))
            .or_insert(next);
        if i == next {
            self.functions.push((name, entry.0.clone(), object, entry));
        }
        i
    }

    pub(super) fn position(&mut self, buckets: &BucketMap, pc: u64) -> Position {
        let line = self.sym.code_line(pc, buckets.module_of(pc)).line;
        match line {
            Some(l) => (buckets.source_path(pc), l),
            None => (None, 0),
        }
    }
}

/// The distinct report functions on `node`'s path.
pub(super) fn path_functions(graph: &Graph, names: &Names, mut node: NodeId, out: &mut Vec<usize>) {
    out.clear();
    while node != ROOT {
        let (parent, f) = graph.nodes[node as usize];
        let i = names.of_key[f as usize];
        if !out.contains(&i) {
            out.push(i);
        }
        node = parent;
    }
}
