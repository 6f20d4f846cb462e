//! [`TlbSpec`]: one TLB array's shape (`ENTRIES,WAYS,PAGE`), and [`TlbConfig`]: a core's TLB
//! levels, with the Skylake preset.

use std::fmt;
use std::str::FromStr;

use crate::access::LineSize;
use crate::error::{Error, Result};
use crate::sim::{Geometry, Policy};

/// The smallest page an array may translate: 64 bytes, so that a page number and its size
/// fit one key (see `tlbs.rs`).
pub const MIN_PAGE: u64 = 64;

/// 4 KiB, the base page of x86-64 and the default page size.
pub const PAGE_4K: LineSize = LineSize::PAGE_4K;

fn invalid(message: String) -> Error {
    Error::InvalidParameter {
        name: "TLB",
        message,
    }
}

/// A page size from text: `4K`, `2M`, `1G` or bytes, a power of two from 64 B to 1 GiB.
pub fn parse_page(text: &str) -> Result<LineSize> {
    let bytes = crate::units::parse_bytes(text, "page size")?;
    if !(MIN_PAGE..=1 << 30).contains(&bytes) || !bytes.is_power_of_two() {
        return Err(invalid(format!(
            "page size {text:?} is not a power of two from 64 B to 1G (4K, 2M and 1G are x86-64's)"
        )));
    }
    LineSize::new(bytes)
}

/// One TLB array: `entries` translations in sets of `ways`, each of a page of `page` bytes or
/// larger (see the module documentation of [`crate::tlb`]). As many ways as entries is fully
/// associative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TlbSpec {
    entries: u32,
    ways: u32,
    page: LineSize,
}

impl TlbSpec {
    /// An array of `entries` entries, `ways` ways, for pages of `page_bytes` bytes. Valid when
    /// the ways divide the entries and the page is a power of two from 64 B to 1 GiB.
    pub fn new(entries: u32, ways: u32, page_bytes: u64) -> Result<TlbSpec> {
        if entries == 0 || ways == 0 {
            return Err(invalid(format!(
                "{entries} entries of {ways} ways: a TLB has at least one entry and one way"
            )));
        }
        if ways > entries || entries % ways != 0 {
            return Err(invalid(format!(
                "{entries} entries are not whole sets of {ways} ways ({ways} must divide \
                 {entries}; {entries} ways is fully associative)"
            )));
        }
        let page = parse_page(&page_bytes.to_string())?;
        let spec = TlbSpec {
            entries,
            ways,
            page,
        };
        // The cache behind it must exist: the same checks as any geometry.
        Geometry::new(u64::from(entries) * page.bytes(), ways, page.bytes())?;
        Ok(spec)
    }

    /// Parses `ENTRIES,WAYS,PAGE` as the cache flags parse `SIZE,ASSOC,LINE`: `64,4,4K`,
    /// `1536,12,4K`, `32,full,2M` (WAYS a number or `full`).
    pub fn parse(text: &str) -> Result<TlbSpec> {
        let bad = |what: String| {
            invalid(format!(
                "{what} in {text:?}: expected ENTRIES,WAYS,PAGE like 64,4,4K (WAYS a number or \
                 `full`, PAGE a size such as 4K, 2M or 1G)"
            ))
        };
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        let [entries, ways, page] = fields[..] else {
            return Err(bad(format!("{} fields", fields.len())));
        };
        let entries: u32 = entries
            .parse()
            .map_err(|_| bad(format!("entries {entries:?} is not a number")))?;
        let ways: u32 = if ways.eq_ignore_ascii_case("full") {
            entries
        } else {
            ways.parse()
                .map_err(|_| bad(format!("ways {ways:?} is not a number or `full`")))?
        };
        let page = parse_page(page)?;
        TlbSpec::new(entries, ways, page.bytes())
    }

    /// Entries (translations held).
    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Ways per set.
    pub fn ways(&self) -> u32 {
        self.ways
    }

    /// The page size it is made for.
    pub fn page(&self) -> LineSize {
        self.page
    }

    /// Sets: entries / ways.
    pub fn sets(&self) -> u32 {
        self.entries / self.ways
    }

    /// True for one set.
    pub fn is_fully_associative(&self) -> bool {
        self.entries == self.ways
    }

    /// The cache shape behind it: `entries` lines of one page each.
    pub fn geometry(&self) -> Geometry {
        Geometry::new(
            u64::from(self.entries) * self.page.bytes(),
            self.ways,
            self.page.bytes(),
        )
        .expect("checked in TlbSpec::new")
    }
}

impl FromStr for TlbSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<TlbSpec> {
        TlbSpec::parse(s)
    }
}

impl fmt::Display for TlbSpec {
    /// `64 entries, 4-way, 4K pages` (or `fully associative`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} entries, ", self.entries)?;
        if self.is_fully_associative() && self.entries > 1 {
            f.write_str("fully associative, ")?;
        } else {
            write!(f, "{}-way, ", self.ways)?;
        }
        write!(f, "{} pages", crate::units::size_label(self.page.bytes()))
    }
}

/// The TLB levels of one core (or thread): first-level data (`dtlb`) and instruction (`itlb`)
/// arrays, and the second level (`stlb`) both look up on a miss. Each level may hold arrays
/// for several page sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlbConfig {
    /// First-level data TLB arrays, fed the data references.
    pub dtlb: Vec<TlbSpec>,
    /// First-level instruction TLB arrays, fed the instruction fetches.
    pub itlb: Vec<TlbSpec>,
    /// Second-level (shared) TLB arrays, looked up on a first-level miss of either side.
    pub stlb: Vec<TlbSpec>,
    /// Replacement in every array (default LRU).
    pub policy: Policy,
}

/// A named TLB preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TlbPreset {
    /// Intel Skylake client (and Skylake-SP): Intel 64 and IA-32 Architectures Optimization
    /// Reference Manual (248966-045, February 2022), Table 2-15.
    Skylake,
}

impl TlbPreset {
    /// The preset called `name` (`skylake`).
    pub fn from_name(name: &str) -> Result<TlbPreset> {
        match name.trim().to_ascii_lowercase().as_str() {
            "skylake" => Ok(TlbPreset::Skylake),
            other => Err(invalid(format!(
                "no TLB preset {other:?}; there is skylake"
            ))),
        }
    }
}

impl TlbConfig {
    /// A preset's levels, LRU in every array.
    pub fn preset(p: TlbPreset) -> TlbConfig {
        let s = |entries, ways, page: u64| TlbSpec::new(entries, ways, page).expect("valid");
        const K4: u64 = 4 << 10;
        const M2: u64 = 2 << 20;
        const G1: u64 = 1 << 30;
        match p {
            // ITLB: 128 entries 8-way for 4 KiB, 8 for 2 MiB (associativity not given:
            // fully associative here). DTLB: 64 4-way for 4 KiB, 32 4-way for 2 MiB, 4 4-way
            // for 1 GiB. STLB: 1536 12-way shared by 4 KiB and 2 MiB pages, 16 4-way for 1 GiB.
            TlbPreset::Skylake => TlbConfig {
                itlb: vec![s(128, 8, K4), s(8, 8, M2)],
                dtlb: vec![s(64, 4, K4), s(32, 4, M2), s(4, 4, G1)],
                stlb: vec![s(1536, 12, K4), s(16, 4, G1)],
                policy: Policy::Lru,
            },
        }
    }

    /// The levels a preset and explicit arrays give (`--tlb`, `--dtlb`, `--itlb`, `--stlb`): a
    /// level given explicitly replaces the preset's, every array under `policy`; validated.
    /// `None` when no TLB is asked for.
    pub fn from_parts(
        preset: Option<TlbPreset>,
        dtlb: &[TlbSpec],
        itlb: &[TlbSpec],
        stlb: &[TlbSpec],
        policy: Policy,
    ) -> Result<Option<TlbConfig>> {
        let mut config = preset.map(TlbConfig::preset).unwrap_or_default();
        for (given, level) in [
            (dtlb, &mut config.dtlb),
            (itlb, &mut config.itlb),
            (stlb, &mut config.stlb),
        ] {
            if !given.is_empty() {
                *level = given.to_vec();
            }
        }
        if config.is_empty() {
            return Ok(None);
        }
        config.policy = policy;
        config.validate()?;
        Ok(Some(config))
    }

    /// True when no TLB is configured.
    pub fn is_empty(&self) -> bool {
        self.dtlb.is_empty() && self.itlb.is_empty() && self.stlb.is_empty()
    }

    /// Checks the levels: an STLB needs a first level to miss in, and a level's arrays
    /// translate distinct page sizes.
    pub fn validate(&self) -> Result<()> {
        if !self.stlb.is_empty() && self.dtlb.is_empty() && self.itlb.is_empty() {
            return Err(invalid(
                "the STLB is looked up on a first-level miss: give --dtlb (or --itlb) too".into(),
            ));
        }
        for (name, level) in [
            ("dtlb", &self.dtlb),
            ("itlb", &self.itlb),
            ("stlb", &self.stlb),
        ] {
            let mut pages: Vec<u64> = level.iter().map(|s| s.page.bytes()).collect();
            pages.sort_unstable();
            if let Some(w) = pages.windows(2).find(|w| w[0] == w[1]) {
                return Err(invalid(format!(
                    "two {name} arrays for {} pages: one array per page size and level",
                    crate::units::size_label(w[0])
                )));
            }
        }
        if self.policy == Policy::Opt {
            return Err(invalid(
                "TLBs are simulated online: opt needs the future".into(),
            ));
        }
        Ok(())
    }

    /// The smallest page any array of `level` translates (`None` for an empty level).
    pub(super) fn smallest(level: &[TlbSpec]) -> Option<LineSize> {
        level.iter().map(|s| s.page).min_by_key(|p| p.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_cache_flags() {
        let s = TlbSpec::parse("64,4,4K").unwrap();
        assert_eq!(
            (s.entries(), s.ways(), s.sets(), s.page().bytes()),
            (64, 4, 16, 4096)
        );
        assert_eq!(s.to_string(), "64 entries, 4-way, 4K pages");
        let f = TlbSpec::parse(" 32 , full , 2M ").unwrap();
        assert!(f.is_fully_associative());
        assert_eq!(f.to_string(), "32 entries, fully associative, 2M pages");
        assert_eq!(f.geometry().lines(), 32);
        assert_eq!(TlbSpec::parse("1536,12,4K").unwrap().sets(), 128);
    }

    #[test]
    fn rejects_impossible_shapes() {
        for (bad, want) in [
            ("64,4", "expected ENTRIES,WAYS,PAGE"),
            ("64,x,4K", "not a number or `full`"),
            ("0,1,4K", "at least one entry"),
            ("64,0,4K", "at least one entry"),
            ("64,5,4K", "not whole sets"),
            ("64,128,4K", "not whole sets"),
            ("64,4,3K", "power of two"),
            ("64,4,32", "power of two from 64 B"),
            ("64,4,2G", "power of two"),
        ] {
            let m = TlbSpec::parse(bad).unwrap_err().to_string();
            assert!(m.contains(want), "{bad}: {m}");
        }
    }

    #[test]
    fn skylake_preset_is_valid() {
        let c = TlbConfig::preset(TlbPreset::Skylake);
        c.validate().unwrap();
        assert_eq!(c.dtlb[0], TlbSpec::parse("64,4,4K").unwrap());
        assert_eq!(c.dtlb[1], TlbSpec::parse("32,4,2M").unwrap());
        assert_eq!(c.stlb[0], TlbSpec::parse("1536,12,4K").unwrap());
    }

    #[test]
    fn validation_names_the_problem() {
        let stlb_alone = TlbConfig {
            stlb: vec![TlbSpec::parse("1536,12,4K").unwrap()],
            ..TlbConfig::default()
        };
        assert!(
            stlb_alone
                .validate()
                .unwrap_err()
                .to_string()
                .contains("--dtlb")
        );
        let twice = TlbConfig {
            dtlb: vec![
                TlbSpec::parse("64,4,4K").unwrap(),
                TlbSpec::parse("16,4,4K").unwrap(),
            ],
            ..TlbConfig::default()
        };
        assert!(
            twice
                .validate()
                .unwrap_err()
                .to_string()
                .contains("one array per page size")
        );
    }
}
