//! The TLB flags every command that simulates TLBs takes (`simulate`, `attribute`): the
//! arrays of each level, a preset, the policy and the page sizes (docs/tlb.md).

use std::path::Path;

use anyhow::{Result, bail};
use cachescope::attribution::events::EventReader;
use cachescope::sim::Policy;
use cachescope::tlb::{PageMap, PageRule, TlbConfig, TlbPreset, TlbSpec};
use clap::Args;

use super::{heading, values};

#[derive(Debug, Args)]
#[command(next_help_heading = heading::TLB)]
pub struct TlbArgs {
    /// A first-level data TLB array ENTRIES,WAYS,PAGE, e.g. 64,4,4K (WAYS `full`, or equal to
    /// ENTRIES: fully associative), fed the data references; repeat it for each page size
    /// (64,4,4K and 32,4,2M). A page goes to the array of the largest page size not above its
    /// own (docs/tlb.md).
    #[arg(long = "dtlb", value_name = "SPEC", value_parser = values::tlb)]
    pub dtlb: Vec<TlbSpec>,
    /// A first-level instruction TLB array ENTRIES,WAYS,PAGE, fed the instruction fetches.
    #[arg(long = "itlb", value_name = "SPEC", value_parser = values::tlb)]
    pub itlb: Vec<TlbSpec>,
    /// A second-level TLB array ENTRIES,WAYS,PAGE (e.g. 1536,12,4K), looked up on a DTLB or
    /// ITLB miss; its misses are page walks.
    #[arg(long = "stlb", value_name = "SPEC", value_parser = values::tlb)]
    pub stlb: Vec<TlbSpec>,
    /// Every TLB level of a real core: skylake (Intel Skylake client: DTLB 64 4-way for 4K,
    /// 32 4-way for 2M, 4 for 1G; ITLB 128 8-way for 4K, 8 for 2M; STLB 1536 12-way for 4K
    /// and 2M, 16 4-way for 1G; Intel's optimization manual, Table 2-15). --dtlb, --itlb or
    /// --stlb replace that level.
    #[arg(long = "tlb", value_enum, value_name = "PRESET")]
    pub preset: Option<TlbPreset>,
    /// Replacement in every TLB array (the cache policies but opt).
    #[arg(long = "tlb-policy", default_value = "lru", value_parser = values::policy)]
    pub tlb_policy: Policy,
    /// Page sizes, a what-if (default 4K everywhere): SIZE for every page (2M), LO..HI=SIZE for
    /// the addresses LO to HI (hex with 0x), `recorded` for the huge pages the recorded program
    /// had at exit (from TRACE.events), or with `attribute` NAME=SIZE for a structure (`heap`,
    /// a variable, an allocation site); repeatable, a later rule over an earlier.
    #[arg(long = "pages", value_name = "RULE", value_parser = values::page_rule)]
    pub pages: Vec<PageRule>,
}

impl TlbArgs {
    /// The TLBs the flags ask for, `None` without any TLB flag; a random policy draws from
    /// `seed`.
    pub fn config(&self, seed: u64) -> Result<Option<TlbConfig>> {
        let policy = values::seeded(self.tlb_policy, seed);
        let config =
            TlbConfig::from_parts(self.preset, &self.dtlb, &self.itlb, &self.stlb, policy)?;
        if config.is_none() && !self.pages.is_empty() {
            bail!("--pages applies to TLBs: give --dtlb, --itlb, --stlb or --tlb");
        }
        Ok(config)
    }

    /// The `--pages` rules, `recorded` replaced by the huge pages the event log `events`
    /// (`TRACE.events`) says the program had, with notes on what it cannot say.
    pub fn rules(&self, events: Option<&Path>) -> Result<(Vec<PageRule>, Vec<String>)> {
        let mut rules = Vec::new();
        let mut notes = Vec::new();
        for r in &self.pages {
            if *r != PageRule::Recorded {
                rules.push(r.clone());
                continue;
            }
            let Some(path) = events else {
                bail!(
                    "--pages recorded reads the huge pages the program had from its event log \
                     (TRACE.events beside a trace `record` wrote); there is none here"
                );
            };
            let log = EventReader::open(path)?;
            let (recorded, said) = cachescope::attribution::tlb::recorded_pages(log)?;
            rules.extend(recorded);
            notes.extend(said);
        }
        Ok((rules, notes))
    }

    /// The page sizes of the addresses from the rules (see [`TlbArgs::rules`]), and the notes.
    pub fn page_map(&self, events: Option<&Path>) -> Result<(PageMap, Vec<String>)> {
        let (rules, notes) = self.rules(events)?;
        Ok((PageMap::from_rules(&rules)?, notes))
    }
}
