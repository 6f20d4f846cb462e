//! [`PageMap`]: the page size of every address: a base page everywhere, with ranges of other
//! sizes over it (`--pages`), and [`PageRule`], one `--pages` value.
//!
//! A range given a page size is translated in pages of that size aligned as pages are: the
//! page of `addr` is `addr >> log2(size)`, whether or not the range starts on that boundary
//! (a what-if: as if the allocator had aligned the range, which `madvise(MADV_HUGEPAGE)` on an
//! aligned block or a huge-page allocator does).

use crate::access::LineSize;
use crate::error::{Error, Result};

use super::spec::parse_page;

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        name: "--pages",
        message,
    }
}

/// One `--pages` value: every page one size, an address range in pages of a size, or a data
/// structure (the heap, a variable or an allocation site as `attribute` names it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageRule {
    /// `2M`: every page this size.
    All(LineSize),
    /// `0x7f0000000000..0x7f0010000000=2M`: the addresses `[start, end)` in pages of this size.
    Range {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
        /// Their page size.
        page: LineSize,
    },
    /// `NAME=2M`: a data structure's addresses in pages of this size (`heap` for every heap
    /// block; a bucket's name as `attribute` prints it). Needs the event log.
    Structure {
        /// The name.
        name: String,
        /// Its page size.
        page: LineSize,
    },
    /// `recorded`: the regions the recorded program had in transparent huge pages at exit
    /// (the event log's `huge_pages`, from `/proc/PID/smaps`), in 2 MiB pages. Replaced by
    /// their ranges before use ([`crate::attribution::tlb::recorded_pages`]).
    Recorded,
}

impl PageRule {
    /// Parses `SIZE`, `LO..HI=SIZE` (addresses in hex with `0x`, or decimal) or `NAME=SIZE`.
    pub fn parse(text: &str) -> Result<PageRule> {
        if text.trim() == "recorded" {
            return Ok(PageRule::Recorded);
        }
        let Some((what, size)) = text.rsplit_once('=') else {
            return Ok(PageRule::All(parse_page(text)?));
        };
        let page = parse_page(size)?;
        let what = what.trim();
        if let Some((lo, hi)) = what.split_once("..") {
            let num = |s: &str| {
                let s = s.trim();
                match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => s.parse(),
                }
                .map_err(|_| {
                    invalid(format!(
                        "{s:?} in {text:?} is not an address (hex with 0x, or decimal)"
                    ))
                })
            };
            let (start, end) = (num(lo)?, num(hi)?);
            if start >= end {
                return Err(invalid(format!("{text:?}: the range {what} is empty")));
            }
            return Ok(PageRule::Range { start, end, page });
        }
        if what.is_empty() {
            return Err(invalid(format!(
                "{text:?}: expected SIZE, LO..HI=SIZE or NAME=SIZE"
            )));
        }
        Ok(PageRule::Structure {
            name: what.to_string(),
            page,
        })
    }
}

/// The page size of every address. See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageMap {
    base: LineSize,
    /// `(start, end, page)`, sorted and disjoint.
    ranges: Vec<(u64, u64, LineSize)>,
}

impl Default for PageMap {
    /// 4 KiB pages everywhere.
    fn default() -> Self {
        PageMap::uniform(LineSize::PAGE_4K)
    }
}

impl PageMap {
    /// Pages of one size everywhere.
    pub fn uniform(page: LineSize) -> PageMap {
        PageMap {
            base: page,
            ranges: Vec::new(),
        }
    }

    /// The map of `--pages` rules in order over 4 KiB pages: an `All` rule sets the base
    /// page, a `Range` puts its addresses in pages of its size (a later range over an earlier
    /// one wins where they overlap). `Structure` rules are not addresses: an error names them
    /// (only `attribute`, which knows the structures, takes them).
    pub fn from_rules(rules: &[PageRule]) -> Result<PageMap> {
        let mut map = PageMap::default();
        for r in rules {
            match r {
                PageRule::All(p) => map.base = *p,
                PageRule::Range { start, end, page } => map.set_range(*start, *end, *page),
                PageRule::Structure { name, .. } => {
                    return Err(invalid(format!(
                        "{name:?} is a data structure, which only `attribute` (with the event \
                         log) can place; here give SIZE or LO..HI=SIZE"
                    )));
                }
                PageRule::Recorded => {
                    return Err(invalid(
                        "`recorded` needs the trace's event log (TRACE.events), which holds \
                         the huge pages the program had"
                            .into(),
                    ));
                }
            }
        }
        Ok(map)
    }

    /// Puts `[start, end)` in pages of `page`, over what was there.
    pub fn set_range(&mut self, start: u64, end: u64, page: LineSize) {
        if start >= end {
            return;
        }
        let mut kept = Vec::with_capacity(self.ranges.len() + 2);
        for &(s, e, p) in &self.ranges {
            if e <= start || s >= end {
                kept.push((s, e, p));
                continue;
            }
            if s < start {
                kept.push((s, start, p));
            }
            if e > end {
                kept.push((end, e, p));
            }
        }
        kept.push((start, end, page));
        kept.sort_unstable_by_key(|r| r.0);
        self.ranges = kept;
    }

    /// The page size outside every range.
    pub fn base(&self) -> LineSize {
        self.base
    }

    /// The smallest page size of the map.
    pub fn smallest(&self) -> LineSize {
        self.ranges
            .iter()
            .map(|r| r.2)
            .chain([self.base])
            .min_by_key(|p| p.bytes())
            .expect("the base is there")
    }

    /// The ranges of other sizes: `(start, end, page)`, sorted and disjoint.
    pub fn ranges(&self) -> &[(u64, u64, LineSize)] {
        &self.ranges
    }

    /// The page size of byte address `addr`.
    #[inline]
    pub fn page_of(&self, addr: u64) -> LineSize {
        if self.ranges.is_empty() {
            return self.base;
        }
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        match i.checked_sub(1).map(|k| self.ranges[k]) {
            Some((_, e, p)) if addr < e => p,
            _ => self.base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(b: u64) -> LineSize {
        LineSize::new(b).unwrap()
    }

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(PageRule::parse("2M").unwrap(), PageRule::All(page(2 << 20)));
        assert_eq!(
            PageRule::parse("0x1000..0x3000=2M").unwrap(),
            PageRule::Range {
                start: 0x1000,
                end: 0x3000,
                page: page(2 << 20)
            }
        );
        assert_eq!(
            PageRule::parse("heap=1G").unwrap(),
            PageRule::Structure {
                name: "heap".into(),
                page: page(1 << 30)
            }
        );
        for bad in ["3M", "0x10..0x10=2M", "0xzz..0x20=2M", "=2M", "heap=5K"] {
            assert!(PageRule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_override_the_base_and_each_other() {
        let k4 = LineSize::PAGE_4K;
        let m2 = page(2 << 20);
        let g1 = page(1 << 30);
        let mut m = PageMap::default();
        m.set_range(0x1000, 0x9000, m2);
        m.set_range(0x3000, 0x4000, g1);
        assert_eq!(m.page_of(0xfff), k4);
        assert_eq!(m.page_of(0x1000), m2);
        assert_eq!(m.page_of(0x3fff), g1);
        assert_eq!(m.page_of(0x4000), m2);
        assert_eq!(m.page_of(0x9000), k4);
        assert_eq!(m.ranges().len(), 3);
        assert_eq!(m.smallest(), k4);
        let all = PageMap::from_rules(&[PageRule::All(m2)]).unwrap();
        assert_eq!((all.page_of(5), all.smallest()), (m2, m2));
        let structure = PageRule::parse("heap=2M").unwrap();
        assert!(PageMap::from_rules(&[structure]).is_err());
    }
}
