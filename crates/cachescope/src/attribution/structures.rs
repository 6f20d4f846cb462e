//! The data type of a bucket: a global's from its DWARF type, a heap site's from the pointer
//! its allocation is stored in ([`ModuleTypes::pointer_for`]): a pointer declared on the line
//! of the allocating call, else the variable that line assigns to (read from the source file
//! the line table names). Each module's types are read once, on first use.

use std::collections::HashMap;
use std::path::PathBuf;

use super::buckets::{BucketMap, Site};
use super::types::{DataType, Element, ModuleTypes, assigned_name};

/// A heap site's element type and the pointer it was found through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapType {
    /// The pointer variable the allocation is stored in.
    pub pointer: String,
    /// What it points to.
    pub element: Element,
    /// The dimensions of what it points to, for a pointer to an array (`T (*p)[N]`).
    pub dims: Vec<u64>,
}

/// Module types and source lines, read on first use.
#[derive(Debug, Default)]
pub struct Types {
    modules: HashMap<PathBuf, ModuleTypes>,
    sources: HashMap<String, Option<Vec<String>>>,
}

impl Types {
    /// Starts from the modules `buckets`' frames read already (their DWARF is not read
    /// again).
    pub fn read_by(buckets: &BucketMap) -> Types {
        Types {
            modules: buckets
                .read_types()
                .map(|(path, types)| (path.to_owned(), types.clone()))
                .collect(),
            sources: HashMap::new(),
        }
    }

    /// The types of `path`'s module.
    pub fn module(&mut self, path: &std::path::Path) -> &ModuleTypes {
        self.modules
            .entry(path.to_owned())
            .or_insert_with(|| ModuleTypes::load(path))
    }

    /// The type of global bucket `id`, and whether its module has debug information at all.
    pub fn global(&mut self, buckets: &BucketMap, id: u32) -> (Option<DataType>, bool) {
        let Some((start, end, module)) = buckets.global_of(id) else {
            return (None, false);
        };
        let link = start.wrapping_sub(module.bias);
        let types = self.module(&module.path);
        let found = types
            .global_at(link)
            .filter(|t| t.elements() * t.element.size <= end - start)
            .cloned();
        (found, types.has_types)
    }

    /// The element type of heap site `site`, when the pointer it is stored in can be found.
    pub fn heap(&mut self, buckets: &BucketMap, site: &Site) -> Option<HeapType> {
        let (pc, line) = site.call.as_ref()?;
        let module = buckets.module_of(*pc)?;
        let source = module.source_path(*pc);
        let text = match (&source, line.line) {
            (Some(path), Some(n)) => self.source_line(path, n),
            _ => None,
        };
        let link = pc.wrapping_sub(module.bias);
        let path = module.path.clone();
        let types = self.module(&path);
        let p = types.pointer_for(
            link,
            line.line.map(u64::from),
            text.as_deref().and_then(assigned_name),
        )?;
        (p.pointee.size > 0).then(|| HeapType {
            pointer: p.name.clone(),
            element: p.pointee.clone(),
            dims: p.dims.clone(),
        })
    }

    /// Line `n` (from 1) of the source file at `path`, when it can be read.
    fn source_line(&mut self, path: &str, n: u32) -> Option<String> {
        let lines = self.sources.entry(path.to_owned()).or_insert_with(|| {
            std::fs::read_to_string(path)
                .ok()
                .map(|t| t.lines().map(str::to_owned).collect())
        });
        lines.as_ref()?.get((n as usize).checked_sub(1)?).cloned()
    }
}
