//! `simulate`'s write-back and prefetcher flags turned into the library's settings.

use anyhow::{Result, bail};
use cachescope::sim::{PrefetchPolicy, Writes};

use super::SimulateArgs;
use crate::args::YesNo;

/// The store policy asked for: `None` unless write-backs are tracked.
pub fn writes(args: &SimulateArgs) -> Option<Writes> {
    let allocate = args.write_allocate == YesNo::Yes;
    (args.writebacks || !allocate).then_some(Writes { allocate })
}

/// The prefetchers asked for: the one of --cache caches, and a hierarchy's per level (L1I,
/// L1D, L2, L3). A bare KIND applies to --cache caches and a hierarchy's L1D; `LEVEL=KIND`
/// to that level of a hierarchy.
pub fn prefetchers(args: &SimulateArgs) -> Result<(PrefetchPolicy, [PrefetchPolicy; 4])> {
    let kind = |name: &str| -> Result<PrefetchPolicy> {
        Ok(PrefetchPolicy::from_name(
            name,
            args.prefetch_degree,
            args.prefetch_distance,
        )?)
    };
    let mut single = PrefetchPolicy::None;
    let mut levels = [PrefetchPolicy::None; 4];
    for spec in &args.prefetch {
        match spec.split_once('=') {
            None => {
                single = kind(spec)?;
                levels[1] = single;
            }
            Some((level, name)) => {
                let k = match level.to_ascii_uppercase().as_str() {
                    "L1I" => 0,
                    "L1D" => 1,
                    // With --cores: the first data level (--L1, or the one --cache).
                    "L1" | "CACHE" if args.cores.is_some() => 1,
                    "L2" => 2,
                    "L3" => 3,
                    // The last level: the L3 after --L2 and --LL, else the L2.
                    "LL" if args.l2.is_some() && args.ll.is_some() => 3,
                    "LL" => 2,
                    _ => bail!(
                        "--prefetch {spec:?}: LEVEL is L1I, L1D, L2, L3 or LL (a level of a \
                         hierarchy; with --cores also L1 or cache), e.g. --prefetch L2=stride"
                    ),
                };
                levels[k] = kind(name)?;
            }
        }
    }
    Ok((single, levels))
}
