//! A footprint pass in chunks: each chunk's analysis merged into the ones before it
//! ([`crate::parallel`]), or settled for another process ([`crate::parallel::wire`]).

use super::{CHUNK, FootprintAnalysis, fold};
use crate::error::Result;
use crate::models::hotl::sums::WindowSums;
use crate::reuse::Options;
use crate::reuse::table::LineTable;

impl FootprintAnalysis {
    /// An analysis of one chunk of a trace, to be merged into the chunks before it with
    /// [`FootprintAnalysis::absorb`].
    pub(crate) fn for_chunk(options: Options, windows: &[u64]) -> Result<FootprintAnalysis> {
        let mut a = FootprintAnalysis::new(options, windows)?;
        a.first_lines = Some(Vec::new());
        Ok(a)
    }

    /// Appends `next`, a chunk analysis ([`FootprintAnalysis::for_chunk`]) of the references
    /// right after those this one saw: its reuses are added, its first references resolved
    /// against this one's last positions (a reuse crossing the boundary, or a first reference
    /// of the whole), and its last positions, shifted, replace this one's. Afterwards this
    /// analysis is as if it had seen both parts, except that it must not observe more.
    pub(crate) fn absorb(&mut self, mut next: FootprintAnalysis) {
        self.close_run();
        next.close_run();
        fold(&mut self.reuse, &next.dense);
        self.reuse.merge(&next.reuse);
        let off = self.now;
        let firsts = next.first_lines.take().unwrap_or_default();
        // In order of first reference, so the lines' slots are scattered: prefetch a group's
        // slots before touching them, as the pass does (the merge is sequential, its cache
        // misses the cost of a second thread).
        for group in firsts.chunks(CHUNK) {
            for &(l, _) in group {
                self.table.prefetch(l);
            }
            for &(l, f) in group {
                match self.table.replace(l, off + f) {
                    Some(p) => self.reuse.record(off + f - p),
                    None => {
                        self.first.record(off + f);
                        if let Some(v) = self.first_lines.as_mut() {
                            v.push((l, off + f));
                        }
                    }
                }
            }
        }
        for (l, p) in next.table.entries() {
            self.table.replace(l, off + p);
        }
        self.now += next.now;
        self.prev = next.prev;
    }

    /// Puts a chunk analysis in the form another process receives ([`crate::parallel::wire`]):
    /// an open run's position written into the table and the dense counts folded into the
    /// sums, which changes no result. Returns what the wire format carries.
    pub(crate) fn settle(&mut self) -> ChunkParts<'_> {
        self.close_run();
        fold(&mut self.reuse, &self.dense);
        self.dense.fill(0);
        self.unfolded = 0;
        ChunkParts {
            options: self.options,
            listed: &self.listed,
            now: self.now,
            prev: self.prev,
            reuse: &self.reuse,
            table: &self.table,
            first_lines: self.first_lines.as_deref().unwrap_or_default(),
        }
    }

    /// The chunk analysis whose [`FootprintAnalysis::settle`] gave these parts (with `table`
    /// rebuilt from `first_lines` by the caller); the first-position sums are recomputed from
    /// `first_lines`, which lists every first reference. `listed` must be sorted and
    /// deduplicated, and `reuse` made with the same layout and listed windows.
    pub(crate) fn from_chunk_parts(
        options: Options,
        listed: Vec<u64>,
        now: u64,
        prev: u64,
        reuse: WindowSums,
        table: LineTable,
        first_lines: Vec<(u64, u64)>,
    ) -> FootprintAnalysis {
        let mut a = FootprintAnalysis::for_chunk(options, &listed)
            .expect("a decoded partial's windows are nonzero");
        for &(_, f) in &first_lines {
            a.first.record(f);
        }
        a.table = table;
        a.now = now;
        a.prev = prev;
        a.reuse = reuse;
        a.first_lines = Some(first_lines);
        a
    }
}

/// A settled chunk analysis, as [`FootprintAnalysis::settle`] shows it to the wire encoder.
pub(crate) struct ChunkParts<'a> {
    /// Which references count, and the layout.
    pub options: Options,
    /// The listed windows, sorted.
    pub listed: &'a [u64],
    /// References in the chunk.
    pub now: u64,
    /// The chunk's last counted line.
    pub prev: u64,
    /// Reuse-time sums (dense counts folded in).
    pub reuse: &'a WindowSums,
    /// Line → 1-based position of its last reference.
    pub table: &'a LineTable,
    /// `(line, position)` of every first reference, in order.
    pub first_lines: &'a [(u64, u64)],
}
