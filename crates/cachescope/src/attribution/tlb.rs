//! TLB misses by data structure and code line (`attribute --dtlb … / --tlb skylake`,
//! docs/tlb.md): the attribution's data references translated as `simulate`'s TLBs translate
//! them, each first-level miss and page walk counted for the reference's bucket and
//! instruction. Page sizes may follow the structures (`--pages heap=2M`, `--pages NAME=2M`), a
//! what-if only the attribution can ask, since only it knows which structure an address is in.
//!
//! Instruction fetches are not attributed (the attribution simulates data references), so an
//! ITLB sees nothing here; the STLB is looked up on DTLB misses only.

use hashbrown::HashMap;

use super::Map;
use super::buckets::{BucketKind, BucketMap};
use super::symbols::{CodeLine, Symbolizer};
use crate::access::LineSize;
use crate::error::Result;
use crate::tlb::{PageMap, PageRule, TlbConfig, TlbCounts, Tlbs, Translation};

use super::events::{Event, EventKind};

/// The TLBs beside an attribution, and what they counted by raw bucket and instruction.
pub(super) struct BucketTlb {
    tlbs: Tlbs,
    /// The page size of addresses outside any structure rule.
    pages: PageMap,
    /// `NAME=SIZE` rules, in order (a later one wins).
    rules: Vec<(String, LineSize)>,
    /// Per raw bucket: the page size its rules give (`Some(None)`: none applies), decided on
    /// the bucket's first reference.
    decided: Vec<Option<Option<LineSize>>>,
    /// Names heap sites by their call paths, for the rules.
    symbolizer: Symbolizer,
    /// First-level misses and page walks by raw bucket.
    l1_misses: Vec<u64>,
    walks: Vec<u64>,
    /// First-level misses and page walks by instruction address.
    by_pc: Map<u64, (u64, u64)>,
}

impl BucketTlb {
    /// TLBs shaped by `config`, over the page sizes `rules` give.
    pub(super) fn new(config: &TlbConfig, rules: &[PageRule]) -> Result<BucketTlb> {
        let addresses: Vec<PageRule> = rules
            .iter()
            .filter(|r| !matches!(r, PageRule::Structure { .. } | PageRule::Recorded))
            .cloned()
            .collect();
        let pages = PageMap::from_rules(&addresses)?;
        let named: Vec<(String, LineSize)> = rules
            .iter()
            .filter_map(|r| match r {
                PageRule::Structure { name, page } => Some((name.clone(), *page)),
                _ => None,
            })
            .collect();
        let smallest = named
            .iter()
            .map(|r| r.1)
            .chain([pages.smallest()])
            .min_by_key(|p| p.bytes())
            .expect("the map's own");
        Ok(BucketTlb {
            tlbs: Tlbs::new(config, smallest)?,
            pages,
            rules: named,
            decided: Vec::new(),
            symbolizer: Symbolizer::default(),
            l1_misses: Vec::new(),
            walks: Vec::new(),
            by_pc: Map::default(),
        })
    }

    /// The page size the rules give bucket `id`: `heap` matches every heap bucket, any other
    /// name the bucket's (a heap site by its name before sites of one name are numbered).
    fn rule_for(&mut self, buckets: &BucketMap, id: u32) -> Option<LineSize> {
        if self.rules.is_empty() {
            return None;
        }
        let kind = buckets.kind(id);
        let name = buckets.provisional_name(&mut self.symbolizer, id);
        self.rules
            .iter()
            .rev()
            .find(|(n, _)| (n == "heap" && kind == BucketKind::Heap) || *n == name)
            .map(|r| r.1)
    }

    /// Translates a data reference at `addr` in raw bucket `bucket` by instruction `pc`.
    #[inline]
    pub(super) fn access(&mut self, buckets: &BucketMap, addr: u64, bucket: u32, pc: u64) {
        let b = bucket as usize;
        if b >= self.decided.len() {
            self.decided.resize(b + 1, None);
            self.l1_misses.resize(b + 1, 0);
            self.walks.resize(b + 1, 0);
        }
        let page = match self.decided[b] {
            Some(Some(p)) => p,
            Some(None) => self.pages.page_of(addr),
            None => {
                let rule = self.rule_for(buckets, bucket);
                self.decided[b] = Some(rule);
                rule.unwrap_or_else(|| self.pages.page_of(addr))
            }
        };
        let Some(t) = self.tlbs.translate(addr, page, false) else {
            return;
        };
        if t == Translation::L1 {
            return;
        }
        let walk = t == Translation::Walk;
        self.l1_misses[b] += 1;
        self.walks[b] += u64::from(walk);
        let c = self.by_pc.entry(pc).or_default();
        c.0 += 1;
        c.1 += u64::from(walk);
    }

    /// The report section: buckets merged by `merged` (raw id → index of `names`), code lines
    /// named through `buckets` and `sym`.
    pub(super) fn report(
        &self,
        names: &[(String, BucketKind)],
        merged: &[usize],
        buckets: &BucketMap,
        sym: &mut Symbolizer,
    ) -> TlbAttribution {
        let mut by_bucket = vec![(0u64, 0u64); names.len()];
        for (raw, (&l1, &w)) in self.l1_misses.iter().zip(&self.walks).enumerate() {
            if let Some(&i) = merged.get(raw) {
                by_bucket[i].0 += l1;
                by_bucket[i].1 += w;
            }
        }
        let mut rows: Vec<TlbBucketRow> = by_bucket
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 > 0)
            .map(|(i, &(l1, w))| TlbBucketRow {
                name: names[i].0.clone(),
                kind: names[i].1,
                dtlb_misses: l1,
                page_walks: w,
            })
            .collect();
        rows.sort_by(|x, y| {
            (y.page_walks, y.dtlb_misses)
                .cmp(&(x.page_walks, x.dtlb_misses))
                .then_with(|| x.name.cmp(&y.name))
        });
        let mut lines: HashMap<String, (CodeLine, u64, u64)> = HashMap::new();
        for (&pc, &(l1, w)) in &self.by_pc {
            let code = buckets.code_line(sym, pc);
            let e = lines.entry(code.label()).or_insert_with(|| (code, 0, 0));
            e.1 += l1;
            e.2 += w;
        }
        let total: u64 = self.l1_misses.iter().sum();
        let mut lines: Vec<TlbLineRow> = lines
            .into_iter()
            .filter(|(_, c)| c.1 as f64 >= total as f64 * 1e-3)
            .map(|(location, (code, l1, w))| TlbLineRow {
                location,
                code,
                dtlb_misses: l1,
                page_walks: w,
            })
            .collect();
        lines.sort_by(|x, y| {
            (y.page_walks, y.dtlb_misses)
                .cmp(&(x.page_walks, x.dtlb_misses))
                .then_with(|| x.location.cmp(&y.location))
        });
        TlbAttribution {
            tlbs: self.tlbs.counts(),
            page_walks: self.tlbs.walks(),
            buckets: rows,
            lines,
        }
    }
}

/// TLB misses by structure and code line. Field names are a public contract
/// (`attribute --json`'s `tlb`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TlbAttribution {
    /// Every array's counts, as `simulate` lists them.
    pub tlbs: Vec<TlbCounts>,
    /// Translations no level held.
    pub page_walks: u64,
    /// Structures with a first-level miss, most page walks first.
    pub buckets: Vec<TlbBucketRow>,
    /// Code lines with at least 0.1 % of the first-level misses, most page walks first.
    pub lines: Vec<TlbLineRow>,
}

/// One structure's TLB misses.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TlbBucketRow {
    /// Its name, as in `buckets`.
    pub name: String,
    /// What it is.
    pub kind: BucketKind,
    /// Its references the first-level DTLB missed.
    pub dtlb_misses: u64,
    /// Those no level held: page walks.
    pub page_walks: u64,
}

/// One code line's TLB misses.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TlbLineRow {
    /// `function file:line` (or the address when unknown).
    pub location: String,
    /// The code line.
    pub code: CodeLine,
    /// Its references the first-level DTLB missed.
    pub dtlb_misses: u64,
    /// Those no level held: page walks.
    pub page_walks: u64,
}

/// The `--pages recorded` rules: from the event log's `huge_pages` (each region's bytes in
/// transparent huge pages at exit), the 2 MiB pages of every region wholly backed by them
/// (its 2 MiB-aligned interior), as address ranges; and a note for each region only partly
/// backed, which stays in 4 KiB pages since the log says how many bytes, not which.
pub fn recorded_pages(
    events: impl Iterator<Item = Result<Event>>,
) -> Result<(Vec<PageRule>, Vec<String>)> {
    const HUGE: u64 = 2 << 20;
    let page = LineSize::new(HUGE)?;
    let (mut rules, mut notes) = (Vec::new(), Vec::new());
    for e in events {
        let EventKind::HugePages { start, end, bytes } = e?.kind else {
            continue;
        };
        let lo = start.div_ceil(HUGE) * HUGE;
        let hi = end / HUGE * HUGE;
        if hi > lo && bytes >= hi - lo {
            rules.push(PageRule::Range {
                start: lo,
                end: hi,
                page,
            });
        } else {
            notes.push(format!(
                "{start:#x}-{end:#x} had {} KiB of {} KiB in huge pages at exit; which of its \
                 2 MiB pages is not recorded, so it stays in 4 KiB pages",
                bytes >> 10,
                (end - start) >> 10
            ));
        }
    }
    if rules.is_empty() && notes.is_empty() {
        notes.push(
            "the program had no transparent huge pages at exit (the event log has no \
             huge_pages): every page stays 4 KiB"
                .into(),
        );
    }
    Ok((rules, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_huge_pages_become_ranges_where_whole() {
        let huge = |start, end, bytes| {
            Ok(Event {
                position: 9,
                kind: EventKind::HugePages { start, end, bytes },
            })
        };
        let events = vec![
            // 4 MiB + 8 KiB from 4 KiB below a boundary: its two aligned 2 MiB pages, whole.
            huge(0x1ff000, 0x601000, 4 << 20),
            // Half of 8 MiB: which half is unknown.
            huge(0x1000_0000, 0x1080_0000, 4 << 20),
        ];
        let (rules, notes) = recorded_pages(events.into_iter()).unwrap();
        let page = LineSize::new(2 << 20).unwrap();
        assert_eq!(
            rules,
            [PageRule::Range {
                start: 0x200000,
                end: 0x600000,
                page
            }]
        );
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("4096 KiB of 8192 KiB"), "{notes:?}");
        let (none, notes) = recorded_pages(std::iter::empty()).unwrap();
        assert!(none.is_empty() && notes[0].contains("no transparent huge pages"));
    }
}
